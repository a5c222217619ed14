/*
 * t_contract_srv.c - the server of the contract test (t_contract.h):
 * TCONTRACT over tcp and rdma (and tcp6, rdma6) in one process, made by
 * svc_tp_create() and registered with rpcbind, served by svc_run() or by
 * one of the loops a program may write itself over libtirpc's tables
 * (svc_fdset and select, svc_pollfd and poll) and entry points
 * (svc_getreqset, svc_getreq, svc_getreq_poll, svc_getreq_common).  Its
 * procedures answer with what the server's side of the contract gave:
 * svc_getcaller/svc_getrpccaller, svc_getargs/svc_freeargs, the svcerr_*
 * family, SVC_CONTROL, the fd tables, svc_register/svc_unregister; the
 * own loops also do xprt_unregister, xprt_register and svc_destroy of the
 * listeners between two rounds, when a call asks.
 *
 * The server checks what only it can see (the fd tables around those
 * actions, an fd svc_getreq cannot name) in lines of its own; its exit
 * status says whether all passed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>

#include <netconfig.h>
#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "t_contract.h"

/* A round of an own loop waits at most this long, so that the deadline
 * and the actions asked for are seen. */
#define ROUND_MS 200
/* The server ends by itself after this long (the client ends it sooner). */
#define SERVE_S 110

static const char *const netids[] = { "tcp", "rdma", "tcp6", "rdma6" };
#define NNETIDS (sizeof(netids) / sizeof(netids[0]))

static SVCXPRT *lsn[NNETIDS]; /* the listeners, by netids[] */
static bool loop_run;	      /* svc_run(): no own rounds, no actions */
static bool stop;	      /* CT_DONE */
static int action;	      /* CT_ACTION asked, done after the round */

/* ---- XDR ----------------------------------------------------------------- */

bool_t xdr_ct_ints(XDR *xdrs, int *v, u_int n)
{
	return xdr_vector(xdrs, (char *)v, n, sizeof(int), (xdrproc_t)xdr_int);
}

bool_t xdr_ct_caller(XDR *xdrs, struct ct_caller *c)
{
	return xdr_int(xdrs, &c->rpc_family) && xdr_u_int(xdrs, &c->rpc_len) &&
	       xdr_u_int(xdrs, &c->rpc_port) &&
	       xdr_string(xdrs, &c->rpc_addr, INET6_ADDRSTRLEN) &&
	       xdr_int(xdrs, &c->caller_family) &&
	       xdr_u_int(xdrs, &c->caller_port) &&
	       xdr_string(xdrs, &c->caller_addr, INET6_ADDRSTRLEN) &&
	       xdr_int(xdrs, &c->addrlen);
}

/* ---- The fd tables ------------------------------------------------------- */

static bool in_fdset(int fd)
{
	return fd >= 0 && fd < FD_SETSIZE && FD_ISSET(fd, &svc_fdset);
}

static bool in_pollfd(int fd)
{
	int i;

	for (i = 0; svc_pollfd && i < svc_max_pollfd; i++)
		if (svc_pollfd[i].fd == fd)
			return true;
	return false;
}

static int pollfd_used(void)
{
	int i, n = 0;

	for (i = 0; svc_pollfd && i < svc_max_pollfd; i++)
		n += svc_pollfd[i].fd >= 0;
	return n;
}

static int netid_index(const char *netid)
{
	unsigned int i;

	for (i = 0; netid && i < NNETIDS; i++)
		if (!strcmp(netids[i], netid))
			return (int)i;
	return -1;
}

static SVCXPRT *listener_of(const SVCXPRT *x)
{
	int i = netid_index(x->xp_netid);

	return i < 0 ? NULL : lsn[i];
}

/* ---- Procedures ---------------------------------------------------------- */

static void addr_of(const struct sockaddr *sa, char *buf, size_t len,
		    u_int *port)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;

	snprintf(buf, len, "-");
	*port = 0;
	if (sa->sa_family == AF_INET) {
		inet_ntop(AF_INET, &sin->sin_addr, buf, (socklen_t)len);
		*port = ntohs(sin->sin_port);
	} else if (sa->sa_family == AF_INET6) {
		inet_ntop(AF_INET6, &sin6->sin6_addr, buf, (socklen_t)len);
		*port = ntohs(sin6->sin6_port);
	}
}

static void p_caller(SVCXPRT *x)
{
	char ra[INET6_ADDRSTRLEN] = "-", ca[INET6_ADDRSTRLEN] = "-";
	struct netbuf *nb = svc_getrpccaller(x);
	struct sockaddr_in6 *old = svc_getcaller(x);
	struct ct_caller c = { .rpc_addr = ra, .caller_addr = ca };

	if (nb && nb->buf && nb->len >= sizeof(sa_family_t)) {
		c.rpc_family = ((struct sockaddr *)nb->buf)->sa_family;
		c.rpc_len = nb->len;
		addr_of(nb->buf, ra, sizeof(ra), &c.rpc_port);
	}
	c.caller_family = old->sin6_family;
	addr_of((struct sockaddr *)old, ca, sizeof(ca), &c.caller_port);
	c.addrlen = x->xp_addrlen;
	svc_sendreply(x, (xdrproc_t)xdr_ct_caller, (char *)&c);
}

static void p_err(SVCXPRT *x)
{
	int e = 0;

	if (!svc_getargs(x, (xdrproc_t)xdr_int, (char *)&e)) {
		svcerr_decode(x);
		return;
	}
	switch (e) {
	case CT_E_NOPROC:
		svcerr_noproc(x);
		break;
	case CT_E_DECODE:
		svcerr_decode(x);
		break;
	case CT_E_SYSTEMERR:
		svcerr_systemerr(x);
		break;
	case CT_E_AUTH:
		svcerr_auth(x, AUTH_BADCRED);
		break;
	case CT_E_WEAKAUTH:
		svcerr_weakauth(x);
		break;
	case CT_E_NOPROG:
		svcerr_noprog(x);
		break;
	case CT_E_PROGVERS:
		svcerr_progvers(x, CT_PV_LOW, CT_PV_HIGH);
		break;
	default:
		svcerr_systemerr(x);
	}
}

static void p_freeargs(SVCXPRT *x)
{
	char *s = NULL;
	int r = 0;

	if (svc_getargs(x, (xdrproc_t)xdr_wrapstring, (char *)&s) && s) {
		r = CT_FA_GOT | (int)(strlen(s) << 8);
		if (svc_freeargs(x, (xdrproc_t)xdr_wrapstring, (char *)&s))
			r |= CT_FA_FREED;
		if (!s)
			r |= CT_FA_NULL;
	}
	svc_sendreply(x, (xdrproc_t)xdr_int, (char *)&r);
}

/* Every request asked of xprt: one bit per TRUE. */
static int controls(SVCXPRT *xprt, int *maxrec, long long *requests)
{
	struct rpcrdma_svc_stats st;
	int v = 0, m = 0, bits = 0;

	if (SVC_CONTROL(xprt, SVCGET_VERSQUIET, &v))
		bits |= CT_C_GET_VERSQUIET;
	if (SVC_CONTROL(xprt, SVCSET_VERSQUIET, &v))
		bits |= CT_C_SET_VERSQUIET;
	if (SVC_CONTROL(xprt, SVCGET_CONNMAXREC, &m))
		bits |= CT_C_GET_CONNMAXREC;
	v = CT_MAXREC;
	if (SVC_CONTROL(xprt, SVCSET_CONNMAXREC, &v)) {
		bits |= CT_C_SET_CONNMAXREC;
		v = -1;
		if (maxrec && SVC_CONTROL(xprt, SVCGET_CONNMAXREC, &v))
			*maxrec = v;
		/* back to what it was, for the connections to come */
		SVC_CONTROL(xprt, SVCSET_CONNMAXREC, &m);
	}
	if (SVC_CONTROL(xprt, 0x7fff, &v))
		bits |= CT_C_UNKNOWN;
	memset(&st, 0, sizeof(st));
	if (SVC_CONTROL(xprt, SVCGET_RDMA_STATS, &st)) {
		bits |= CT_C_RDMA_STATS;
		if (requests)
			*requests = (long long)st.requests;
	}
	return bits;
}

static bool_t xdr_fds(XDR *xdrs, int *v)
{
	return xdr_ct_ints(xdrs, v, CT_FDS_N);
}

static bool_t xdr_ctl(XDR *xdrs, int *v)
{
	return xdr_ct_ints(xdrs, v, CT_CTL_N);
}

static void p_control(SVCXPRT *x)
{
	SVCXPRT *l = listener_of(x);
	int r[CT_CTL_N] = { 0, 0, -1, -1 };
	long long req = -1;

	r[CT_CTL_CONN] = controls(x, NULL, &req);
	r[CT_CTL_REQUESTS] = req > 0x7fffffff ? 0x7fffffff : (int)req;
	r[CT_CTL_LSN] = l ? controls(l, &r[CT_CTL_MAXREC], NULL) : -1;
	svc_sendreply(x, (xdrproc_t)xdr_ctl, (char *)r);
}

static void p_fds(SVCXPRT *x)
{
	SVCXPRT *l = listener_of(x);
	int r[CT_FDS_N];

	r[CT_FD_IN_SET] = in_fdset(x->xp_fd);
	r[CT_FD_IN_POLL] = in_pollfd(x->xp_fd);
	r[CT_FD_LSN] = l && in_fdset(l->xp_fd) && in_pollfd(l->xp_fd);
	r[CT_FD_NPOLL] = pollfd_used();
	r[CT_FD_MAX] = svc_maxfd;
	svc_sendreply(x, (xdrproc_t)xdr_fds, (char *)r);
}

static void dispatch(struct svc_req *rq, SVCXPRT *x);

static void p_register(SVCXPRT *x)
{
	int on = 0, r = 0;

	if (!svc_getargs(x, (xdrproc_t)xdr_int, (char *)&on)) {
		svcerr_decode(x);
		return;
	}
	/* protocol 0: the dispatch table only, no portmapper */
	if (on)
		r = svc_register(x, CT_PROG2, CT_VERS_LO, dispatch, 0);
	else
		svc_unregister(CT_PROG2, CT_VERS_LO);
	svc_sendreply(x, (xdrproc_t)xdr_int, (char *)&r);
}

static void p_action(SVCXPRT *x)
{
	int a = 0, ok;

	if (!svc_getargs(x, (xdrproc_t)xdr_int, (char *)&a)) {
		svcerr_decode(x);
		return;
	}
	ok = !loop_run && a >= CT_A_UNREGISTER && a <= CT_A_DESTROY;
	if (ok)
		action = a;
	svc_sendreply(x, (xdrproc_t)xdr_int, (char *)&ok);
}

static void p_int(SVCXPRT *x, int proc)
{
	int v = 0;

	if (!svc_getargs(x, (xdrproc_t)xdr_int, (char *)&v)) {
		svcerr_decode(x);
		return;
	}
	if (proc == CT_SLEEP)
		usleep((useconds_t)v * 1000);
	if (proc == CT_INC) {
		v++;
		svc_sendreply(x, (xdrproc_t)xdr_int, (char *)&v);
	} else {
		svc_sendreply(x, CT_XDR_VOID, NULL);
	}
}

static void p_string(SVCXPRT *x, int proc, rpcvers_t vers)
{
	char buf[64], *s = buf;

	if (proc == CT_WHO) {
		snprintf(buf, sizeof(buf), "%s %u",
			 x->xp_netid ? x->xp_netid : "?", (unsigned int)vers);
		svc_sendreply(x, (xdrproc_t)xdr_wrapstring, (char *)&s);
		return;
	}
	s = NULL;
	if (!svc_getargs(x, (xdrproc_t)xdr_wrapstring, (char *)&s)) {
		svcerr_decode(x);
		return;
	}
	svc_sendreply(x, (xdrproc_t)xdr_wrapstring, (char *)&s);
	svc_freeargs(x, (xdrproc_t)xdr_wrapstring, (char *)&s);
}

static void dispatch(struct svc_req *rq, SVCXPRT *x)
{
	switch (rq->rq_proc) {
	case NULLPROC:
		svc_sendreply(x, CT_XDR_VOID, NULL);
		return;
	case CT_INC:
	case CT_SLEEP:
		p_int(x, (int)rq->rq_proc);
		return;
	case CT_WHO:
	case CT_ECHO:
		p_string(x, (int)rq->rq_proc, rq->rq_vers);
		return;
	case CT_CALLER:
		p_caller(x);
		return;
	case CT_ERR:
		p_err(x);
		return;
	case CT_FREEARGS:
		p_freeargs(x);
		return;
	case CT_CONTROL:
		p_control(x);
		return;
	case CT_FDS:
		p_fds(x);
		return;
	case CT_REGISTER:
		p_register(x);
		return;
	case CT_ACTION:
		p_action(x);
		return;
	case CT_DONE:
		svc_sendreply(x, CT_XDR_VOID, NULL);
		stop = true;
		if (loop_run)
			svc_exit(); /* svc_run returns after this call */
		return;
	default:
		svcerr_noproc(x);
	}
}

/* ---- Set-up -------------------------------------------------------------- */

static bool listen_on(unsigned int i)
{
	struct netconfig *nc = getnetconfigent(netids[i]);
	rpcvers_t v;

	lsn[i] = nc ? svc_tp_create(dispatch, CT_PROG, CT_VERS_LO, nc) : NULL;
	for (v = CT_VERS_LO + 1; lsn[i] && v <= CT_VERS_HI; v++)
		if (!svc_reg(lsn[i], CT_PROG, v, dispatch, nc))
			lsn[i] = NULL;
	if (nc)
		freenetconfigent(nc);
	return CHECK_OK(lsn[i] != NULL,
			"server: svc_tp_create + svc_reg(P, 1..2, %s): fd %d",
			netids[i], lsn[i] ? lsn[i]->xp_fd : -1);
}

static void check_listed(const char *when, bool want)
{
	unsigned int i;

	for (i = 0; i < 2; i++) {
		int fd = lsn[i] ? lsn[i]->xp_fd : -1;

		CHECK(fd >= 0 && in_fdset(fd) == want &&
			      in_pollfd(fd) == want &&
			      (!want || svc_maxfd >= fd),
		      "server: %s: the %s listener's fd %d %s svc_fdset and "
		      "svc_pollfd (svc_maxfd %d)",
		      when, netids[i], fd, want ? "in" : "not in", svc_maxfd);
	}
}

/* An action a call asked for, outside any dispatch. */
static void do_action(void)
{
	unsigned int i;
	int fds[2];

	switch (action) {
	case CT_A_UNREGISTER:
		for (i = 0; i < 2; i++)
			xprt_unregister(lsn[i]);
		check_listed("after xprt_unregister", false);
		break;
	case CT_A_REGISTER:
		for (i = 0; i < 2; i++)
			xprt_register(lsn[i]);
		check_listed("after xprt_register", true);
		break;
	case CT_A_DESTROY:
		for (i = 0; i < 2; i++) {
			fds[i] = lsn[i]->xp_fd;
			svc_destroy(lsn[i]);
			lsn[i] = NULL;
		}
		CHECK(!in_pollfd(fds[0]) && !in_pollfd(fds[1]) &&
			      !in_fdset(fds[0]) && !in_fdset(fds[1]),
		      "server: after svc_destroy of the tcp and rdma "
		      "listeners their fds %d, %d are gone from svc_fdset "
		      "and svc_pollfd",
		      fds[0], fds[1]);
		break;
	}
	action = 0;
}

/* ---- The loops ----------------------------------------------------------- */

/* svc_getreq(int): a mask of the first 32 fds only; the highest fd
 * found ready is checked at the end. */
static int getreq_max = -1;

static void getreq_mask(fd_set *ready, int nfds)
{
	int fd, mask = 0;

	for (fd = 0; fd < nfds; fd++) {
		if (!FD_ISSET(fd, ready))
			continue;
		if (fd > getreq_max)
			getreq_max = fd;
		if (fd < 31) /* libtirpc widens the int: bit 31 would spread */
			mask |= 1 << fd;
	}
	svc_getreq(mask);
}

static void loop_select(bool getreq, int64_t end)
{
	struct timeval tv;
	fd_set ready;
	int n;

	while (!stop && tu_now_ms() < end) {
		ready = svc_fdset;
		tv.tv_sec = 0;
		tv.tv_usec = ROUND_MS * 1000;
		n = select(svc_maxfd + 1, &ready, NULL, NULL, &tv);
		if (n < 0 && errno != EINTR) {
			CHECK(false, "server: select: %s", strerror(errno));
			return;
		}
		if (n > 0 && getreq)
			getreq_mask(&ready, svc_maxfd + 1);
		else if (n > 0)
			svc_getreqset(&ready);
		do_action();
	}
}

static void loop_poll(bool common, int64_t end)
{
	struct pollfd fds[FD_SETSIZE];
	int i, n, r;

	while (!stop && tu_now_ms() < end) {
		n = svc_max_pollfd < FD_SETSIZE ? svc_max_pollfd : FD_SETSIZE;
		memcpy(fds, svc_pollfd, (size_t)n * sizeof(fds[0]));
		r = poll(fds, (nfds_t)n, ROUND_MS);
		if (r < 0 && errno != EINTR) {
			CHECK(false, "server: poll: %s", strerror(errno));
			return;
		}
		if (r > 0 && !common)
			svc_getreq_poll(fds, r);
		for (i = 0; r > 0 && common && i < n; i++)
			if (fds[i].fd >= 0 && fds[i].revents &&
			    !(fds[i].revents & POLLNVAL))
				svc_getreq_common(fds[i].fd);
		do_action();
	}
}

int ct_serve(const char *loop, bool ipv4_only)
{
	int64_t end = tu_now_ms() + SERVE_S * 1000;
	unsigned int i, n = ipv4_only ? 2 : NNETIDS;

	for (i = 0; i < n; i++)
		if (!listen_on(i))
			return tu_done();
	check_listed("at start", true);
	printf("ready\n");
	fflush(stdout);
	loop_run = !strcmp(loop, "run");
	if (loop_run)
		svc_run();
	else if (!strcmp(loop, "select") || !strcmp(loop, "getreq"))
		loop_select(!strcmp(loop, "getreq"), end);
	else if (!strcmp(loop, "poll") || !strcmp(loop, "common"))
		loop_poll(!strcmp(loop, "common"), end);
	else
		CHECK(false, "server: unknown loop \"%s\"", loop);
	CHECK(stop, "server: %s loop ended by CT_DONE (not by its deadline)",
	      loop);
	if (!strcmp(loop, "getreq"))
		CHECK(getreq_max >= 0 && getreq_max < 31,
		      "server: every ready fd fit svc_getreq's int mask "
		      "(the highest: %d)",
		      getreq_max);
	for (i = 0; i < n; i++) {
		if (lsn[i]) {
			svc_unreg(CT_PROG, CT_VERS_LO);
			svc_unreg(CT_PROG, CT_VERS_HI);
			break;
		}
	}
	NOTE("t_contract server (%s)", loop);
	return tu_done();
}
