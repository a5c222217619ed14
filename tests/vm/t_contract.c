/*
 * t_contract.c - the client/server contract of libtirpc over netid rdma,
 * against netid tcp (doc/libtirpc-contract.md): every
 * check runs the same code over a tcp CLIENT and an rdma CLIENT of the
 * same server (t_contract_srv.c) and asserts that both give what libtirpc
 * gives over tcp, or the difference rdma documents.  Driven by
 * tests/vm/t_contract.sh, which starts rpcbind and the server.
 *
 *   t_contract server LOOP [ipv4]  the server (t_contract.h, ct_serve)
 *   t_contract loops LOOP H4       calls through that server loop
 *   t_contract clnt H4             clnt_control, the CLIENT's entry
 *                                  points, rpc_call, clnt_create_vers,
 *                                  broadcast (a "run" server, IPv4)
 *   t_contract svc H4 H6           svcerr_*, svc_getcaller, SVC_CONTROL,
 *                                  the fd tables, svc_register,
 *                                  xprt_(un)register and svc_destroy of a
 *                                  listener (a "select" server)
 *
 * One line per check; the exit status is 1 if one failed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netconfig.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpcb_clnt.h>

#include "t_contract.h"

#define NNET 2 /* tcp and rdma, or tcp6 and rdma6 */
#define LEN  320

static const char *const v4[NNET] = { "tcp", "rdma" };
static const char *const v6[NNET] = { "tcp6", "rdma6" };
static const char *h4, *h6;
static CLIENT *cls[NNET]; /* tcp and rdma, program CT_PROG version 1 */

/* ---- Clients and calls --------------------------------------------------- */

static const char *host_of(const char *netid)
{
	return strchr(netid, '6') ? h6 : h4;
}

/* A CLIENT of prog/vers on netid: clnt_create() for the nettypes tcp and
 * rdma, clnt_tp_create() with the netconfig for tcp6 and rdma6. */
static CLIENT *mk_timed(const char *netid, rpcvers_t vers, int secs)
{
	struct timeval tp = { secs, 0 };
	struct netconfig *nc;
	CLIENT *cl;

	if (!strchr(netid, '6'))
		return clnt_create_timed(h4, CT_PROG, vers, netid, &tp);
	nc = getnetconfigent(netid);
	cl = nc ? clnt_tp_create_timed(h6, CT_PROG, vers, nc, &tp) : NULL;
	if (nc)
		freenetconfigent(nc);
	return cl;
}

static CLIENT *mk(const char *netid)
{
	CLIENT *cl = mk_timed(netid, CT_VERS_LO, 10);

	CHECK(cl != NULL, "clnt_create(%s, P, 1, \"%s\")%s%s", host_of(netid),
	      netid, cl ? "" : ": ", cl ? "" : clnt_spcreateerror("no CLIENT"));
	return cl;
}

static enum clnt_stat call_tv(CLIENT *cl, rpcproc_t proc, xdrproc_t xa, void *a,
			      xdrproc_t xr, void *r, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	return clnt_call(cl, proc, xa, a, xr, r, tv);
}

static enum clnt_stat call(CLIENT *cl, rpcproc_t proc, xdrproc_t xa, void *a,
			   xdrproc_t xr, void *r)
{
	return call_tv(cl, proc, xa, a, xr, r, 20000);
}

static enum clnt_stat null_call(CLIENT *cl, int ms)
{
	return call_tv(cl, NULLPROC, CT_XDR_VOID, NULL, CT_XDR_VOID, NULL, ms);
}

static enum clnt_stat inc(CLIENT *cl, int in, int *out)
{
	return call(cl, CT_INC, (xdrproc_t)xdr_int, &in, (xdrproc_t)xdr_int,
		    out);
}

static bool_t xdr_fds(XDR *xdrs, int *v)
{
	return xdr_ct_ints(xdrs, v, CT_FDS_N);
}

static bool_t xdr_ctl(XDR *xdrs, int *v)
{
	return xdr_ct_ints(xdrs, v, CT_CTL_N);
}

static bool fds(CLIENT *cl, int r[CT_FDS_N])
{
	return call(cl, CT_FDS, CT_XDR_VOID, NULL, (xdrproc_t)xdr_fds, r) ==
	       RPC_SUCCESS;
}

/* One line of clnt_sperror(), without its newline. */
static const char *sperror(CLIENT *cl, const char *s)
{
	static char buf[LEN];

	snprintf(buf, sizeof(buf), "%s", clnt_sperror(cl, s));
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/* What a failed (or successful) call says, transport-independent: the
 * status in words and, where it has them, the version range or the auth
 * status clnt_geterr() gives. */
static void outcome(CLIENT *cl, enum clnt_stat st, char *out, size_t len)
{
	struct rpc_err e;

	memset(&e, 0, sizeof(e));
	clnt_geterr(cl, &e);
	if (e.re_status != st)
		snprintf(out, len, "%s (clnt_geterr says %s)", clnt_sperrno(st),
			 clnt_sperrno(e.re_status));
	else if (st == RPC_PROGVERSMISMATCH)
		snprintf(out, len, "%s, low %lu high %lu", clnt_sperrno(st),
			 (unsigned long)e.re_vers.low,
			 (unsigned long)e.re_vers.high);
	else if (st == RPC_AUTHERROR)
		snprintf(out, len, "%s, why %d", clnt_sperrno(st),
			 (int)e.re_why);
	else
		snprintf(out, len, "%s", clnt_sperrno(st));
}

/* ---- tcp against rdma ---------------------------------------------------- */

typedef void probe_fn(CLIENT *cl, const char *netid, char *out, size_t len);

/*
 * probe over both CLIENTs of list: both must give want (as libtirpc does
 * over tcp), or, where rdma documents a difference, want_tcp and
 * want_rdma.
 */
static void both_on(CLIENT *const *list, const char *const *netids,
		    const char *what, probe_fn *probe, const char *want_tcp,
		    const char *want_rdma)
{
	char got[NNET][LEN];
	int i;

	for (i = 0; i < NNET; i++) {
		snprintf(got[i], LEN, "no CLIENT");
		if (list[i])
			probe(list[i], netids[i], got[i], LEN);
	}
	if (!strcmp(want_tcp, want_rdma)) {
		if (!CHECK_OK(!strcmp(got[0], want_tcp) &&
				      !strcmp(got[1], want_rdma),
			      "%s: %s \"%s\", %s \"%s\"", what, netids[0],
			      got[0], netids[1], got[1]))
			NOTE("want \"%s\" from both", want_tcp);
	} else {
		CHECK(!strcmp(got[0], want_tcp) && !strcmp(got[1], want_rdma),
		      "%s: %s \"%s\", %s \"%s\" (rdma's documented "
		      "difference; want \"%s\", \"%s\")",
		      what, netids[0], got[0], netids[1], got[1], want_tcp,
		      want_rdma);
	}
}

static void both(const char *what, probe_fn *probe, const char *want)
{
	both_on(cls, v4, what, probe, want, want);
}

static void both_differ(const char *what, probe_fn *probe, const char *want_tcp,
			const char *want_rdma)
{
	both_on(cls, v4, what, probe, want_tcp, want_rdma);
}

static bool open_both(const char *const *netids, CLIENT **list)
{
	int i;

	for (i = 0; i < NNET; i++)
		list[i] = mk(netids[i]);
	return list[0] && list[1];
}

static void close_both(CLIENT **list)
{
	int i;

	for (i = 0; i < NNET; i++) {
		if (list[i])
			clnt_destroy(list[i]);
		list[i] = NULL;
	}
}

/* CT_DONE, over tcp if there is a CLIENT: the server ends after this
 * reply (else the script stops it, and fails). */
static void done_server(void)
{
	CLIENT *cl = cls[0] ? cls[0] : cls[1];
	enum clnt_stat st = RPC_FAILED;

	if (cl)
		st = call(cl, CT_DONE, CT_XDR_VOID, NULL, CT_XDR_VOID, NULL);
	CHECK(st == RPC_SUCCESS, "CT_DONE: %s", clnt_sperrno(st));
}

/* ---- Calls through each server loop -------------------------------------- */

struct burst {
	CLIENT *cl;
	int base, ok;
};

static void *burst_thread(void *arg)
{
	struct burst *b = arg;
	int i, out;

	for (i = 0; i < 25; i++) {
		out = 0;
		if (inc(b->cl, b->base + i, &out) == RPC_SUCCESS &&
		    out == b->base + i + 1)
			b->ok++;
	}
	return NULL;
}

/* 4 threads x 25 calls at once on one CLIENT. */
static void p_burst(CLIENT *cl, const char *netid, char *out, size_t len)
{
	struct burst b[4];
	pthread_t t[4];
	int i, ok = 0;

	for (i = 0; i < 4; i++) {
		b[i] = (struct burst){ .cl = cl, .base = i * 1000 };
		pthread_create(&t[i], NULL, burst_thread, &b[i]);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		ok += b[i].ok;
	}
	snprintf(out, len, "%d of 100 answered right", ok);
}

static void p_who(CLIENT *cl, const char *netid, char *out, size_t len)
{
	char *s = NULL;
	enum clnt_stat st;
	char want[32];

	st = call(cl, CT_WHO, CT_XDR_VOID, NULL, (xdrproc_t)xdr_wrapstring, &s);
	snprintf(want, sizeof(want), "%s %d", netid, CT_VERS_LO);
	if (st != RPC_SUCCESS)
		outcome(cl, st, out, len);
	else
		snprintf(out, len, "%s",
			 !strcmp(s, want) ? "its own netid" : s);
	if (st == RPC_SUCCESS)
		clnt_freeres(cl, (xdrproc_t)xdr_wrapstring, (char *)&s);
}

static void p_fds(CLIENT *cl, const char *netid, char *out, size_t len)
{
	int r[CT_FDS_N] = { 0 };

	if (!fds(cl, r)) {
		snprintf(out, len, "CT_FDS failed");
		return;
	}
	snprintf(out, len, "fd %s svc_fdset, %s svc_pollfd; listener's %s",
		 r[CT_FD_IN_SET] ? "in" : "not in",
		 r[CT_FD_IN_POLL] ? "in" : "not in",
		 r[CT_FD_LSN] ? "in both" : "missing");
}

/*
 * A second connection of netid, observed from cl: svc_pollfd has one
 * more entry in use while it is open, and one fewer again within 10 s of
 * clnt_destroy (the server destroyed its SVCXPRT, xprt_unregister).
 */
static void p_fd_gone(CLIENT *cl, const char *netid, char *out, size_t len)
{
	int r[CT_FDS_N] = { 0 }, before, open;
	int64_t end;
	CLIENT *x;

	if (!fds(cl, r)) {
		snprintf(out, len, "CT_FDS failed");
		return;
	}
	before = r[CT_FD_NPOLL];
	x = mk_timed(netid, CT_VERS_LO, 10);
	if (!x || null_call(x, 10000) != RPC_SUCCESS || !fds(cl, r)) {
		snprintf(out, len, "a second CLIENT failed");
		if (x)
			clnt_destroy(x);
		return;
	}
	open = r[CT_FD_NPOLL];
	clnt_destroy(x);
	end = tu_now_ms() + 10000;
	while (fds(cl, r) && r[CT_FD_NPOLL] != before && tu_now_ms() < end)
		usleep(100000);
	snprintf(out, len,
		 "one more entry while open (%s), back within 10 s (%s)",
		 open == before + 1 ? "yes" : "no",
		 r[CT_FD_NPOLL] == before ? "yes" : "no");
}

static int loops(const char *loop)
{
	char what[64];

	if (!open_both(v4, cls))
		goto out;
	snprintf(what, sizeof(what), "%s: WHO", loop);
	both(what, p_who, "its own netid");
	snprintf(what, sizeof(what), "%s: 4 threads x 25 INC on one CLIENT",
		 loop);
	both(what, p_burst, "100 of 100 answered right");
	snprintf(what, sizeof(what), "%s: CT_FDS", loop);
	both(what, p_fds, "fd in svc_fdset, in svc_pollfd; listener's in both");
	snprintf(what, sizeof(what), "%s: a connection closed", loop);
	both(what, p_fd_gone,
	     "one more entry while open (yes), back within 10 s (yes)");
out:
	done_server();
	close_both(cls);
	NOTE("t_contract loops (%s)", loop);
	return tu_done();
}

/* ---- clnt_control -------------------------------------------------------- */

static void p_timeout(CLIENT *cl, const char *netid, char *out, size_t len)
{
	struct timeval set = { 7, 0 }, got = { -5, -5 };
	bool_t r1 = clnt_control(cl, CLSET_TIMEOUT, (char *)&set);
	bool_t r2 = clnt_control(cl, CLGET_TIMEOUT, (char *)&got);

	snprintf(out, len, "set %d, get %d {%ld, %ld}", r1, r2,
		 (long)got.tv_sec, (long)got.tv_usec);
}

static void p_get_null(CLIENT *cl, const char *netid, char *out, size_t len)
{
	snprintf(out, len, "%d", clnt_control(cl, CLGET_TIMEOUT, NULL));
}

/* clnt_vc's time_not_ok(): a second or microsecond count of -1 is
 * refused (clnt_dg's accepts it). */
static void p_timeout_bad(CLIENT *cl, const char *netid, char *out, size_t len)
{
	struct timeval s = { -1, 0 }, u = { 0, -1 }, back = { 20, 0 };

	snprintf(out, len, "{-1, 0} %d, {0, -1} %d",
		 clnt_control(cl, CLSET_TIMEOUT, (char *)&s),
		 clnt_control(cl, CLSET_TIMEOUT, (char *)&u));
	clnt_control(cl, CLSET_TIMEOUT, (char *)&back);
}

/* Without CLSET_TIMEOUT, CLGET_TIMEOUT gives the timeout of the latest
 * call (clnt_vc keeps it), on a CLIENT of its own. */
static void p_timeout_last(CLIENT *unused, const char *netid, char *out,
			   size_t len)
{
	struct timeval got = { -5, -5 };
	CLIENT *cl = mk_timed(netid, CT_VERS_LO, 10);
	enum clnt_stat st;
	bool_t r;

	if (!cl) {
		snprintf(out, len, "no CLIENT");
		return;
	}
	st = null_call(cl, 7000);
	r = clnt_control(cl, CLGET_TIMEOUT, (char *)&got);
	snprintf(out, len, "%s, get %d {%ld, %ld}", clnt_sperrno(st), r,
		 (long)got.tv_sec, (long)got.tv_usec);
	clnt_destroy(cl);
}

/* CLSET_TIMEOUT 0.5 s wins over clnt_call()'s 20 s: a call the server
 * answers after 3 s times out. */
static void p_timeout_wins(CLIENT *cl, const char *netid, char *out, size_t len)
{
	struct timeval half = { 0, 500000 }, back = { 20, 0 };
	int ms = 3000;
	int64_t t0;
	enum clnt_stat st;

	clnt_control(cl, CLSET_TIMEOUT, (char *)&half);
	t0 = tu_now_ms();
	st = call(cl, CT_SLEEP, (xdrproc_t)xdr_int, &ms, CT_XDR_VOID, NULL);
	t0 = tu_now_ms() - t0;
	clnt_control(cl, CLSET_TIMEOUT, (char *)&back);
	snprintf(out, len, "%s %s", clnt_sperrno(st),
		 t0 < 2500 ? "before the reply" : "late");
	NOTE("%s: CT_SLEEP 3 s timed out after %lld ms", netid, (long long)t0);
}

static void p_retry(CLIENT *cl, const char *netid, char *out, size_t len)
{
	struct timeval set = { 3, 0 }, got = { -5, -5 };
	bool_t r1 = clnt_control(cl, CLSET_RETRY_TIMEOUT, (char *)&set);
	bool_t r2 = clnt_control(cl, CLGET_RETRY_TIMEOUT, (char *)&got);

	if (r2)
		snprintf(out, len, "set %d, get %d {%ld, %ld}", r1, r2,
			 (long)got.tv_sec, (long)got.tv_usec);
	else
		snprintf(out, len, "set %d, get %d", r1, r2);
}

/* The server's address as rpcbind gives it for netid. */
static bool rpcb_addr(const char *netid, struct sockaddr_storage *ss,
		      socklen_t *len)
{
	struct netconfig *nc = getnetconfigent(netid);
	struct netbuf nb = { .buf = ss, .maxlen = sizeof(*ss) };
	bool ok;

	memset(ss, 0, sizeof(*ss));
	ok = nc && rpcb_getaddr(CT_PROG, CT_VERS_LO, nc, &nb, host_of(netid));
	*len = nb.len;
	if (nc)
		freenetconfigent(nc);
	return ok;
}

static void p_server_addr(CLIENT *cl, const char *netid, char *out, size_t len)
{
	struct sockaddr_storage want, got;
	socklen_t wlen;
	bool_t r;

	memset(&got, 0, sizeof(got));
	r = clnt_control(cl, CLGET_SERVER_ADDR, (char *)&got);
	if (!rpcb_addr(netid, &want, &wlen)) {
		snprintf(out, len, "rpcb_getaddr failed");
		return;
	}
	snprintf(out, len, "%d, %s", r,
		 !memcmp(&got, &want, wlen) ? "the address rpcbind gives" :
					      "another address");
}

static void p_svc_addr(CLIENT *cl, const char *netid, char *out, size_t len)
{
	struct sockaddr_storage want;
	struct netbuf nb = { 0 };
	socklen_t wlen;
	bool_t r;

	r = clnt_control(cl, CLGET_SVC_ADDR, (char *)&nb);
	if (!rpcb_addr(netid, &want, &wlen)) {
		snprintf(out, len, "rpcb_getaddr failed");
		return;
	}
	snprintf(out, len, "%d, len %s, %s", r,
		 nb.len == wlen ? "right" : "wrong",
		 nb.buf && nb.len == wlen && !memcmp(nb.buf, &want, wlen) ?
			 "the address rpcbind gives" :
			 "another address");
}

static void p_fd(CLIENT *cl, const char *netid, char *out, size_t len)
{
	struct sockaddr_storage peer, want;
	socklen_t plen = sizeof(peer), wlen;
	struct pollfd pfd = { .events = POLLIN };
	struct stat st;
	int fd = -1;
	bool_t r = clnt_control(cl, CLGET_FD, (char *)&fd);

	if (!r || fd < 0 || fstat(fd, &st)) {
		snprintf(out, len, "%d, fd %d not open", r, fd);
		return;
	}
	if (S_ISSOCK(st.st_mode)) {
		memset(&peer, 0, sizeof(peer));
		snprintf(out, len, "%d, a socket connected to %s", r,
			 !getpeername(fd, (struct sockaddr *)&peer, &plen) &&
					 rpcb_addr(netid, &want, &wlen) &&
					 plen == wlen &&
					 !memcmp(&peer, &want, wlen) ?
				 "the server" :
				 "another address");
		return;
	}
	pfd.fd = fd;
	snprintf(out, len, "%d, not a socket, %s", r,
		 poll(&pfd, 1, 0) >= 0 && !(pfd.revents & POLLNVAL) ?
			 "pollable" :
			 "not pollable");
}

static bool same_file(int fd, const struct stat *was)
{
	struct stat st;

	return !fstat(fd, &st) && st.st_dev == was->st_dev &&
	       st.st_ino == was->st_ino;
}

/* A CLIENT of its own: CLSET_FD_NCLOSE or CLSET_FD_CLOSE, then
 * clnt_destroy: is CLGET_FD's descriptor still open? */
static void fd_close(const char *netid, u_int req, char *out, size_t len)
{
	CLIENT *x = mk_timed(netid, CT_VERS_LO, 10);
	struct stat st;
	bool_t r;
	int fd = -1;

	if (!x || null_call(x, 10000) != RPC_SUCCESS ||
	    !clnt_control(x, CLGET_FD, (char *)&fd) || fstat(fd, &st)) {
		snprintf(out, len, "no CLIENT, call or fd");
		if (x)
			clnt_destroy(x);
		return;
	}
	r = clnt_control(x, req, NULL);
	clnt_destroy(x);
	snprintf(out, len, "%d, fd %s after clnt_destroy", r,
		 same_file(fd, &st) ? "open" : "closed");
	if (same_file(fd, &st))
		close(fd);
}

static void p_fd_nclose(CLIENT *cl, const char *netid, char *out, size_t len)
{
	fd_close(netid, CLSET_FD_NCLOSE, out, len);
}

static void p_fd_closeit(CLIENT *cl, const char *netid, char *out, size_t len)
{
	fd_close(netid, CLSET_FD_CLOSE, out, len);
}

/* CLSET_XID sets the next call's XID, CLGET_XID gives the previous
 * call's; the one after that is one less (clnt_vc counts down). */
static void p_xid(CLIENT *cl, const char *netid, char *out, size_t len)
{
	u_int32_t x = 0x12345678, a = 0, b = 0;
	bool_t r = clnt_control(cl, CLSET_XID, (char *)&x);
	bool ok1 = null_call(cl, 20000) == RPC_SUCCESS &&
		   clnt_control(cl, CLGET_XID, (char *)&a);
	bool ok2 = null_call(cl, 20000) == RPC_SUCCESS &&
		   clnt_control(cl, CLGET_XID, (char *)&b);

	snprintf(out, len, "set %d, next call 0x%x, the one after 0x%x", r,
		 ok1 ? a : 0, ok2 ? b : 0);
}

/*
 * rdma: exactly the XID set, then one less.  tcp: the same, or what
 * libtirpc 1.3.3's clnt_vc does - it keeps the XID in network byte order
 * and counts that down, so the next call's XID is not the one set.
 */
static void check_xid(void)
{
	u_int32_t x = 0x12345678, n = htonl(x + 1);
	char got[NNET][LEN], exact[LEN], vc[LEN];
	int i;

	snprintf(exact, sizeof(exact),
		 "set 1, next call 0x%x, the one after 0x%x", x, x - 1);
	snprintf(vc, sizeof(vc), "set 1, next call 0x%x, the one after 0x%x",
		 ntohl(n - 1), ntohl(n - 2));
	for (i = 0; i < NNET; i++)
		p_xid(cls[i], v4[i], got[i], LEN);
	CHECK((!strcmp(got[0], exact) || !strcmp(got[0], vc)) &&
		      !strcmp(got[1], exact),
	      "CLSET_XID 0x12345678, CLGET_XID: tcp \"%s\"%s, rdma \"%s\" "
	      "(want \"%s\"; tcp may count down in network byte order, as "
	      "libtirpc 1.3.3's clnt_vc does)",
	      got[0], strcmp(got[0], vc) ? "" : " (libtirpc 1.3.3)", got[1],
	      exact);
}

/* The version the server saw: "NETID V" from CT_WHO. */
static void who_vers(CLIENT *cl, char *out, size_t len)
{
	char *s = NULL;
	enum clnt_stat st;

	st = call(cl, CT_WHO, CT_XDR_VOID, NULL, (xdrproc_t)xdr_wrapstring, &s);
	if (st != RPC_SUCCESS) {
		outcome(cl, st, out, len);
		return;
	}
	snprintf(out, len, "served as %s",
		 strchr(s, ' ') ? strchr(s, ' ') + 1 : s);
	clnt_freeres(cl, (xdrproc_t)xdr_wrapstring, (char *)&s);
}

static void p_vers(CLIENT *cl, const char *netid, char *out, size_t len)
{
	u_int32_t v = 0, two = 2, three = 3, one = 1;
	char a[96], b[96];
	bool_t g = clnt_control(cl, CLGET_VERS, (char *)&v);
	bool_t s = clnt_control(cl, CLSET_VERS, (char *)&two);
	enum clnt_stat st;

	who_vers(cl, a, sizeof(a));
	clnt_control(cl, CLSET_VERS, (char *)&three);
	st = null_call(cl, 20000);
	outcome(cl, st, b, sizeof(b));
	clnt_control(cl, CLSET_VERS, (char *)&one);
	snprintf(out, len, "get %d %u, set %d 2: %s, 3: %s", g, v, s, a, b);
}

static void p_prog(CLIENT *cl, const char *netid, char *out, size_t len)
{
	u_int32_t p = 0, unreg = CT_UNREG, prog = CT_PROG;
	char a[96], b[96];
	bool_t g = clnt_control(cl, CLGET_PROG, (char *)&p);
	bool_t s = clnt_control(cl, CLSET_PROG, (char *)&unreg);
	enum clnt_stat st = null_call(cl, 20000);

	outcome(cl, st, a, sizeof(a));
	clnt_control(cl, CLSET_PROG, (char *)&prog);
	st = null_call(cl, 20000);
	outcome(cl, st, b, sizeof(b));
	snprintf(out, len, "get %d %s, set %d another: %s, back: %s", g,
		 p == CT_PROG ? "P" : "not P", s, a, b);
}

static void p_refused(CLIENT *cl, const char *netid, char *out, size_t len)
{
	struct netbuf nb = { 0 };
	int one = 1;

	snprintf(out, len, "CLSET_CONNECT %d, CLSET_SVC_ADDR %d, 0x7fff %d",
		 clnt_control(cl, CLSET_CONNECT, (char *)&one),
		 clnt_control(cl, CLSET_SVC_ADDR, (char *)&nb),
		 clnt_control(cl, 0x7fff, (char *)&one));
}

/* ---- The CLIENT's other entry points ------------------------------------- */

/* clnt_geterr(), clnt_sperror() and clnt_perror() after a version
 * mismatch (CLSET_VERS 3; back to 1 afterwards). */
static void p_perror(CLIENT *cl, const char *netid, char *out, size_t len)
{
	u_int32_t three = 3, one = 1;
	char line[LEN] = "", file[] = "/tmp/t_contract.XXXXXX";
	enum clnt_stat st;
	FILE *f;
	int fd, saved;

	clnt_control(cl, CLSET_VERS, (char *)&three);
	st = null_call(cl, 20000);
	fd = mkstemp(file);
	saved = dup(2);
	if (fd < 0 || saved < 0) {
		snprintf(out, len, "no temporary file");
		return;
	}
	fflush(stderr);
	dup2(fd, 2);
	clnt_perror(cl, "call");
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	f = fdopen(fd, "r");
	rewind(f);
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	unlink(file);
	line[strcspn(line, "\n")] = '\0';
	snprintf(out, len, "%s: \"%s\", clnt_perror %s", clnt_sperrno(st),
		 sperror(cl, "call"),
		 !strcmp(line, sperror(cl, "call")) ? "the same" : line);
	clnt_control(cl, CLSET_VERS, (char *)&one);
}

static void p_freeres(CLIENT *cl, const char *netid, char *out, size_t len)
{
	char *in = "contract", *res = NULL;
	enum clnt_stat st;
	bool_t r;

	st = call(cl, CT_ECHO, (xdrproc_t)xdr_wrapstring, &in,
		  (xdrproc_t)xdr_wrapstring, &res);
	if (st != RPC_SUCCESS) {
		outcome(cl, st, out, len);
		return;
	}
	snprintf(out, len, "%s", res);
	r = clnt_freeres(cl, (xdrproc_t)xdr_wrapstring, (char *)&res);
	snprintf(out + strlen(out), len - strlen(out), ", freed %d, %s", r,
		 res ? "still set" : "NULL");
}

static void p_create_vers(CLIENT *unused, const char *netid, char *out,
			  size_t len)
{
	struct timeval tp = { 10, 0 };
	rpcvers_t v = 0, w = 0;
	char who[96] = "", err[LEN];
	CLIENT *cl = clnt_create_vers(h4, CT_PROG, &v, 1, 9, netid);
	CLIENT *c2;

	if (cl) {
		who_vers(cl, who, sizeof(who));
		clnt_destroy(cl);
	}
	c2 = clnt_create_vers_timed(h4, CT_PROG, &w, 1, 1, netid, &tp);
	if (c2)
		clnt_destroy(c2);
	cl = clnt_create_vers(h4, CT_PROG, &v, 3, 9, netid);
	snprintf(err, sizeof(err), "%s", clnt_spcreateerror("3..9"));
	err[strcspn(err, "\n")] = '\0';
	if (cl)
		clnt_destroy(cl);
	snprintf(out, len, "1..9: %s; timed 1..1: %u; %s", who,
		 c2 ? (unsigned int)w : 0, cl ? "3..9: a CLIENT" : err);
}

static void p_rpc_call(CLIENT *unused, const char *netid, char *out, size_t len)
{
	int in = 41, res = 0;
	enum clnt_stat st, st2;

	st = rpc_call(h4, CT_PROG, CT_VERS_LO, CT_INC, (xdrproc_t)xdr_int,
		      (char *)&in, (xdrproc_t)xdr_int, (char *)&res, netid);
	st2 = rpc_call(h4, CT_PROG, CT_VERS_LO, 99, CT_XDR_VOID, NULL,
		       CT_XDR_VOID, NULL, netid);
	snprintf(out, len, "INC(41): %s %d; proc 99: %s", clnt_sperrno(st), res,
		 clnt_sperrno(st2));
}

/* ---- Broadcast: none over rdma, as none over tcp ------------------------- */

static int answers;

static bool_t each_result(char *res, const struct netbuf *nb,
			  const struct netconfig *nc)
{
	answers++;
	return TRUE;
}

static bool_t each_result_old(char *res, struct sockaddr_in *sin)
{
	answers++;
	return TRUE;
}

static void broadcast(const char *nettype, const char *netpath)
{
	int in = 1, res = 0;
	enum clnt_stat st;
	int64_t t0;

	answers = 0;
	if (netpath)
		setenv("NETPATH", netpath, 1);
	t0 = tu_now_ms();
	st = rpc_broadcast(CT_PROG, CT_VERS_LO, CT_INC, (xdrproc_t)xdr_int,
			   (char *)&in, (xdrproc_t)xdr_int, (char *)&res,
			   (resultproc_t)each_result, nettype);
	t0 = tu_now_ms() - t0;
	unsetenv("NETPATH");
	CHECK(st == RPC_UNKNOWNPROTO && !answers && t0 < 5000,
	      "rpc_broadcast(P, \"%s\")%s%s: %s after %lld ms, %d answers "
	      "(want: Unknown protocol at once, as for \"tcp\")",
	      nettype, netpath ? ", NETPATH=" : "", netpath ? netpath : "",
	      clnt_sperrno(st), (long long)t0, answers);
}

static void broadcasts(void)
{
	int in = 1, res = 0;
	enum clnt_stat st;
	int64_t t0;

	broadcast("tcp", NULL);
	broadcast("rdma", NULL);
	broadcast("rdma6", NULL);
	broadcast("netpath", "rdma:rdma6");
	/* clnt_broadcast() has no nettype: always udp, NETPATH or not; an
	 * unregistered program gets no answer, and it times out. */
	answers = 0;
	setenv("NETPATH", "rdma", 1);
	t0 = tu_now_ms();
	st = clnt_broadcast(CT_UNREG, CT_VERS_LO, CT_INC, (xdrproc_t)xdr_int,
			    (char *)&in, (xdrproc_t)xdr_int, (char *)&res,
			    (resultproc_t)each_result_old);
	t0 = tu_now_ms() - t0;
	unsetenv("NETPATH");
	CHECK(st == RPC_TIMEDOUT && !answers && t0 < 30000,
	      "clnt_broadcast(unregistered program), NETPATH=rdma: %s after "
	      "%lld ms, %d answers (want: udp only, Timed out)",
	      clnt_sperrno(st), (long long)t0, answers);
}

static int clnt(void)
{
	if (!open_both(v4, cls))
		goto out;
	both("CLSET_TIMEOUT {7, 0}, CLGET_TIMEOUT", p_timeout,
	     "set 1, get 1 {7, 0}");
	both("CLGET_TIMEOUT without a buffer", p_get_null, "0");
	both("CLSET_TIMEOUT of -1 s or -1 us", p_timeout_bad,
	     "{-1, 0} 0, {0, -1} 0");
	both("clnt_call(7 s) without CLSET_TIMEOUT, then CLGET_TIMEOUT",
	     p_timeout_last, "RPC: Success, get 1 {7, 0}");
	both("CLSET_TIMEOUT 0.5 s, clnt_call(20 s) of a 3 s procedure",
	     p_timeout_wins, "RPC: Timed out before the reply");
	both_differ("CLSET_RETRY_TIMEOUT {3, 0}, CLGET_RETRY_TIMEOUT", p_retry,
		    "set 0, get 0", "set 1, get 1 {3, 0}");
	both("CLGET_SERVER_ADDR", p_server_addr,
	     "1, the address rpcbind gives");
	both("CLGET_SVC_ADDR", p_svc_addr,
	     "1, len right, the address rpcbind gives");
	both_differ("CLGET_FD", p_fd, "1, a socket connected to the server",
		    "1, not a socket, pollable");
	both_differ("CLSET_FD_NCLOSE, clnt_destroy", p_fd_nclose,
		    "1, fd open after clnt_destroy",
		    "1, fd closed after clnt_destroy");
	both("CLSET_FD_CLOSE, clnt_destroy", p_fd_closeit,
	     "1, fd closed after clnt_destroy");
	check_xid();
	both("CLGET_VERS, CLSET_VERS", p_vers,
	     "get 1 1, set 1 2: served as 2, 3: RPC: Program/version "
	     "mismatch, low 1 high 2");
	both("CLGET_PROG, CLSET_PROG", p_prog,
	     "get 1 P, set 1 another: RPC: Program unavailable, back: "
	     "RPC: Success");
	both("CLSET_CONNECT, CLSET_SVC_ADDR, an unknown request", p_refused,
	     "CLSET_CONNECT 0, CLSET_SVC_ADDR 0, 0x7fff 0");
	both("clnt_geterr, clnt_sperror, clnt_perror", p_perror,
	     "RPC: Program/version mismatch: \"call: RPC: Program/version "
	     "mismatch; low version = 1, high version = 2\", clnt_perror the "
	     "same");
	both("clnt_call(ECHO), clnt_freeres", p_freeres,
	     "contract, freed 1, NULL");
	both("clnt_create_vers", p_create_vers,
	     "1..9: served as 2; timed 1..1: 1; 3..9: RPC: Program/version "
	     "mismatch");
	both("rpc_call", p_rpc_call,
	     "INC(41): RPC: Success 42; proc 99: RPC: Procedure unavailable");
	broadcasts();
out:
	done_server();
	close_both(cls);
	NOTE("t_contract clnt");
	return tu_done();
}

/* ---- The server's entry points ------------------------------------------- */

static int err_code;

static void p_svcerr(CLIENT *cl, const char *netid, char *out, size_t len)
{
	enum clnt_stat st;
	int v = 0;

	st = call(cl, CT_ERR, (xdrproc_t)xdr_int, &err_code, CT_XDR_VOID, NULL);
	outcome(cl, st, out, len);
	snprintf(out + strlen(out), len - strlen(out), "; next call %s",
		 inc(cl, 1, &v) == RPC_SUCCESS && v == 2 ? "served" : "failed");
}

static void p_noargs(CLIENT *cl, const char *netid, char *out, size_t len)
{
	enum clnt_stat st;
	int v = 0;

	/* INC with no argument: svc_getargs() fails, svcerr_decode() */
	st = call(cl, CT_INC, CT_XDR_VOID, NULL, (xdrproc_t)xdr_int, &v);
	outcome(cl, st, out, len);
}

static void p_noproc(CLIENT *cl, const char *netid, char *out, size_t len)
{
	outcome(cl, call(cl, 99, CT_XDR_VOID, NULL, CT_XDR_VOID, NULL), out,
		len);
}

static void p_freeargs(CLIENT *cl, const char *netid, char *out, size_t len)
{
	char *s = "abcdef";
	enum clnt_stat st;
	int r = 0;

	st = call(cl, CT_FREEARGS, (xdrproc_t)xdr_wrapstring, &s,
		  (xdrproc_t)xdr_int, &r);
	if (st != RPC_SUCCESS) {
		outcome(cl, st, out, len);
		return;
	}
	snprintf(out, len, "getargs %d, %d octets, freeargs %d, pointer %s",
		 !!(r & CT_FA_GOT), r >> 8, !!(r & CT_FA_FREED),
		 r & CT_FA_NULL ? "NULL" : "kept");
}

/* The client's own address as the server should see it. */
static const char *client_addr(const char *netid)
{
	const char *a = getenv("RDMA_CLIENT_ADDR4");

	if (strchr(netid, '6'))
		return h6;
	return a && *a ? a : h4;
}

/* svc_getrpccaller() and svc_getcaller() of the server, against what the
 * client knows: its address, and over tcp its port (getsockname of
 * CLGET_FD); rdma's port is rdma_cm's and only checked to be set. */
static void p_caller(CLIENT *cl, const char *netid, char *out, size_t len)
{
	struct ct_caller c;
	struct sockaddr_storage me;
	socklen_t mlen = sizeof(me);
	bool six = strchr(netid, '6') != NULL;
	int fam = six ? AF_INET6 : AF_INET;
	u_int want_len = six ? sizeof(struct sockaddr_in6) :
			       sizeof(struct sockaddr_in);
	enum clnt_stat st;
	bool port_ok;
	int fd = -1;

	memset(&c, 0, sizeof(c));
	st = call(cl, CT_CALLER, CT_XDR_VOID, NULL, (xdrproc_t)xdr_ct_caller,
		  &c);
	if (st != RPC_SUCCESS) {
		outcome(cl, st, out, len);
		return;
	}
	port_ok = c.rpc_port != 0;
	if (!strncmp(netid, "tcp", 3)) {
		port_ok = clnt_control(cl, CLGET_FD, (char *)&fd) &&
			  !getsockname(fd, (struct sockaddr *)&me, &mlen) &&
			  c.rpc_port == ntohs(six ? ((struct sockaddr_in6 *)&me)
							      ->sin6_port :
						    ((struct sockaddr_in *)&me)
							      ->sin_port);
	}
	snprintf(out, len,
		 "svc_getrpccaller: %s, len %s, %s, port %s; svc_getcaller: "
		 "%s; xp_addrlen %s",
		 c.rpc_family == fam ? "family right" : "family wrong",
		 c.rpc_len == want_len ? "right" : "wrong",
		 !strcmp(c.rpc_addr, client_addr(netid)) ? "the client's" :
							   c.rpc_addr,
		 port_ok ? "the client's" : "wrong",
		 c.caller_family == fam && c.caller_port == c.rpc_port &&
				 !strcmp(c.caller_addr, c.rpc_addr) ?
			 "the same" :
			 "differs",
		 c.addrlen == (int)want_len ? "right" : "wrong");
	clnt_freeres(cl, (xdrproc_t)xdr_ct_caller, (char *)&c);
}

static const char *ctl_bits(int b, char *buf, size_t len)
{
	static const struct {
		int bit;
		const char *name;
	} names[] = {
		{ CT_C_GET_VERSQUIET, "GET_VERSQUIET" },
		{ CT_C_SET_VERSQUIET, "SET_VERSQUIET" },
		{ CT_C_GET_CONNMAXREC, "GET_CONNMAXREC" },
		{ CT_C_SET_CONNMAXREC, "SET_CONNMAXREC" },
		{ CT_C_UNKNOWN, "0x7fff" },
		{ CT_C_RDMA_STATS, "RDMA_STATS" },
	};
	unsigned int i;

	snprintf(buf, len, "%s", b ? "" : "none");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (b & names[i].bit)
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s",
				 *buf ? " " : "", names[i].name);
	return buf;
}

static void p_control(CLIENT *cl, const char *netid, char *out, size_t len)
{
	int r[CT_CTL_N] = { 0 };
	char a[96], b[96];
	enum clnt_stat st;

	st = call(cl, CT_CONTROL, CT_XDR_VOID, NULL, (xdrproc_t)xdr_ctl, r);
	if (st != RPC_SUCCESS) {
		outcome(cl, st, out, len);
		return;
	}
	snprintf(out, len, "connection: %s%s; listener: %s%s",
		 ctl_bits(r[CT_CTL_CONN], a, sizeof(a)),
		 r[CT_CTL_REQUESTS] > 0 ? " (requests counted)" : "",
		 ctl_bits(r[CT_CTL_LSN], b, sizeof(b)),
		 r[CT_CTL_MAXREC] == CT_MAXREC ? " (the value set comes back)" :
						 "");
}

/* svc_register(CT_PROG2, protocol 0) adds it to the dispatch table, for
 * every transport; svc_unregister() takes it out.  cl calls CT_PROG2 by
 * CLSET_PROG. */
static void p_register(CLIENT *cl, const char *netid, char *out, size_t len)
{
	u_int32_t p2 = CT_PROG2, p = CT_PROG;
	char a[96], b[96], w[96];
	int on = 1, r = 0, off = 0;
	enum clnt_stat st;

	st = call(cl, CT_REGISTER, (xdrproc_t)xdr_int, &on, (xdrproc_t)xdr_int,
		  &r);
	clnt_control(cl, CLSET_PROG, (char *)&p2);
	who_vers(cl, w, sizeof(w));
	clnt_control(cl, CLSET_PROG, (char *)&p);
	outcome(cl, st, a, sizeof(a));
	st = call(cl, CT_REGISTER, (xdrproc_t)xdr_int, &off, (xdrproc_t)xdr_int,
		  &r);
	clnt_control(cl, CLSET_PROG, (char *)&p2);
	outcome(cl, null_call(cl, 20000), b, sizeof(b));
	clnt_control(cl, CLSET_PROG, (char *)&p);
	snprintf(out, len, "svc_register %s: P2 %s; svc_unregister: P2 %s", a,
		 w, b);
}

/* Served or not: one NULL call within ms. */
static const char *served(CLIENT *cl, int ms)
{
	return cl && null_call(cl, ms) == RPC_SUCCESS ? "served" : "not served";
}

static bool action(int a)
{
	int ok = 0;

	/* done after the round the call came in: the NULL call after it is
	 * answered in a later round */
	return cls[0] &&
	       call(cls[0], CT_ACTION, (xdrproc_t)xdr_int, &a,
		    (xdrproc_t)xdr_int, &ok) == RPC_SUCCESS &&
	       ok && null_call(cls[0], 20000) == RPC_SUCCESS;
}

/*
 * xprt_unregister() of the listeners: no new connection is served; the
 * tcp connections go on, rdma's stop too (their completions arrive on
 * the listener's fd, svc_rdma_create(3)).  xprt_register() again: all
 * served, the connection made meanwhile included.
 */
static void unregister_listeners(void)
{
	CLIENT *fresh[NNET];
	char got[NNET][2][LEN];
	int i;

	if (!CHECK_OK(action(CT_A_UNREGISTER),
		      "CT_ACTION xprt_unregister, then a call over tcp"))
		return;
	for (i = 0; i < NNET; i++) {
		snprintf(got[i][0], LEN, "existing %s", served(cls[i], 2000));
		fresh[i] = mk_timed(v4[i], CT_VERS_LO, 3);
		snprintf(got[i][1], LEN, "new %s", served(fresh[i], 2000));
	}
	CHECK(!strcmp(got[0][0], "existing served") &&
		      !strcmp(got[1][0], "existing not served") &&
		      !strcmp(got[0][1], "new not served") &&
		      !strcmp(got[1][1], "new not served"),
	      "xprt_unregister of the listeners: tcp \"%s, %s\", rdma \"%s, "
	      "%s\" (rdma's documented difference: its connections' "
	      "completions come on the listener's fd)",
	      got[0][0], got[0][1], got[1][0], got[1][1]);
	if (!CHECK_OK(action(CT_A_REGISTER),
		      "CT_ACTION xprt_register, then a call over tcp"))
		goto out;
	for (i = 0; i < NNET; i++) {
		if (!fresh[i])
			fresh[i] = mk_timed(v4[i], CT_VERS_LO, 10);
		snprintf(got[i][0], LEN, "existing %s", served(cls[i], 10000));
		snprintf(got[i][1], LEN, "new %s", served(fresh[i], 10000));
	}
	CHECK(!strcmp(got[0][0], "existing served") &&
		      !strcmp(got[1][0], "existing served") &&
		      !strcmp(got[0][1], "new served") &&
		      !strcmp(got[1][1], "new served"),
	      "xprt_register of the listeners again: tcp \"%s, %s\", rdma "
	      "\"%s, %s\"",
	      got[0][0], got[0][1], got[1][0], got[1][1]);
out:
	close_both(fresh);
}

/*
 * svc_destroy() of the listeners: no new connection; tcp's connections
 * go on, rdma's are destroyed with their listener (svc_rdma_create(3)).
 */
static void destroy_listeners(void)
{
	char got[NNET][LEN];
	CLIENT *fresh;
	int i;

	if (!CHECK_OK(action(CT_A_DESTROY),
		      "CT_ACTION svc_destroy, then a call over tcp"))
		return;
	for (i = 0; i < NNET; i++) {
		fresh = mk_timed(v4[i], CT_VERS_LO, 3);
		snprintf(got[i], LEN, "existing %s, %s", served(cls[i], 5000),
			 fresh ? "new: a CLIENT" : "new: none");
		if (fresh)
			clnt_destroy(fresh);
	}
	CHECK(!strcmp(got[0], "existing served, new: none") &&
		      !strcmp(got[1], "existing not served, new: none"),
	      "svc_destroy of the listeners: tcp \"%s\", rdma \"%s\" (rdma's "
	      "documented difference: its connections go with it)",
	      got[0], got[1]);
}

static int svc(void)
{
	static const struct {
		int code;
		const char *name, *want;
	} errs[] = {
		{ CT_E_NOPROC, "svcerr_noproc", "RPC: Procedure unavailable" },
		{ CT_E_DECODE, "svcerr_decode",
		  "RPC: Server can't decode arguments" },
		{ CT_E_SYSTEMERR, "svcerr_systemerr",
		  "RPC: Remote system error" },
		{ CT_E_AUTH, "svcerr_auth(AUTH_BADCRED)",
		  "RPC: Authentication error, why 1" },
		{ CT_E_WEAKAUTH, "svcerr_weakauth",
		  "RPC: Authentication error, why 5" },
		{ CT_E_NOPROG, "svcerr_noprog", "RPC: Program unavailable" },
		{ CT_E_PROGVERS, "svcerr_progvers(4, 7)",
		  "RPC: Program/version mismatch, low 4 high 7" },
	};
	CLIENT *six[NNET] = { NULL, NULL };
	char want[LEN];
	unsigned int i;

	if (!open_both(v4, cls))
		goto out;
	for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		err_code = errs[i].code;
		snprintf(want, sizeof(want), "%s; next call served",
			 errs[i].want);
		both(errs[i].name, p_svcerr, want);
	}
	both("svc_getargs fails: svcerr_decode", p_noargs,
	     "RPC: Server can't decode arguments");
	both("an unknown procedure", p_noproc, "RPC: Procedure unavailable");
	both("svc_getargs, svc_freeargs", p_freeargs,
	     "getargs 1, 6 octets, freeargs 1, pointer NULL");
	both("svc_getrpccaller, svc_getcaller", p_caller,
	     "svc_getrpccaller: family right, len right, the client's, port "
	     "the client's; svc_getcaller: the same; xp_addrlen right");
	if (open_both(v6, six))
		both_on(six, v6, "svc_getrpccaller, svc_getcaller (IPv6)",
			p_caller,
			"svc_getrpccaller: family right, len right, the "
			"client's, port the client's; svc_getcaller: the "
			"same; xp_addrlen right",
			"svc_getrpccaller: family right, len right, the "
			"client's, port the client's; svc_getcaller: the "
			"same; xp_addrlen right");
	close_both(six);
	both_differ("SVC_CONTROL", p_control,
		    "connection: none; listener: GET_CONNMAXREC "
		    "SET_CONNMAXREC (the value set comes back)",
		    "connection: RDMA_STATS (requests counted); listener: "
		    "RDMA_STATS");
	both("svc_fdset, svc_pollfd (CT_FDS)", p_fds,
	     "fd in svc_fdset, in svc_pollfd; listener's in both");
	both("a connection closed: svc_pollfd", p_fd_gone,
	     "one more entry while open (yes), back within 10 s (yes)");
	both("svc_register(P2, protocol 0), svc_unregister", p_register,
	     "svc_register RPC: Success: P2 served as 1; svc_unregister: P2 "
	     "RPC: Program unavailable");
	unregister_listeners();
	destroy_listeners();
out:
	done_server();
	close_both(cls);
	NOTE("t_contract svc");
	return tu_done();
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "server") && (argc == 3 || argc == 4))
		return ct_serve(argv[2], argc == 4 && !strcmp(argv[3], "ipv4"));
	tu_watchdog(100, "FAIL - watchdog: t_contract took too long\n", 1);
	if (!strcmp(mode, "loops") && argc == 4) {
		h4 = argv[3];
		return loops(argv[2]);
	}
	if (!strcmp(mode, "clnt") && argc == 3) {
		h4 = argv[2];
		return clnt();
	}
	if (!strcmp(mode, "svc") && argc == 4) {
		h4 = argv[2];
		h6 = argv[3];
		return svc();
	}
	fprintf(stderr, "usage: t_contract server LOOP [ipv4] | loops LOOP H4 "
			"| clnt H4 | svc H4 H6\n");
	return 2;
}
