/*
 * t_netid.c - netids rdma and rdma6 through libtirpc's own entry points
 * (rpcrdma_netid(3)), driven by tests/vm/t_netid.sh.  Built twice from the
 * same source: t_netid (linked -lrpcrdma -ltirpc) and t_netid_plain
 * (-ltirpc only, run with LD_PRELOAD=librpcrdma.so).
 *
 *   t_netid offline              no network needed (also run by make check)
 *   t_netid server H4 H6         TNETID through every server entry point,
 *                                then "ready" and svc_run()
 *   t_netid client H4 H6         every client entry point against it
 *   t_netid serve-one NETID PROG VERS
 *                                svc_tp_create() only: "ready port N"
 *   t_netid call NETID HOST PROG VERS
 *                                clnt_create() + WHO, "NETID VERS" expected
 *   t_netid norpcbind H4 PORT    the client side with rpcbind stopped
 *
 * Every check prints one line; the exit status is 1 if one failed.  Each
 * rdma entry point is followed by a check that fd 0 is still the same
 * file (stock libtirpc closes it when handed an rdma netconfig).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <netconfig.h>
#include <rpc/rpc.h>
#include <rpc/rpcb_clnt.h>

#include "t_netid_util.h"

#define P TNETID_PROG

static struct timeval tp5 = { 5, 0 };

static struct netconfig *nconf(const char *netid)
{
	struct netconfig *nc = getnetconfigent(netid);

	if (!nc) {
		CHECK(false, "getnetconfigent(\"%s\")", netid);
		exit(tn_done("t_netid"));
	}
	return nc;
}

static void sockaddr_of(const char *host, unsigned int port,
			struct sockaddr_storage *ss, struct netbuf *nb)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		nb->len = sizeof(*sin);
	} else if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		nb->len = sizeof(*sin6);
	} else {
		fprintf(stderr, "not a numeric address: %s\n", host);
		exit(2);
	}
	nb->maxlen = sizeof(*ss);
	nb->buf = ss;
}

static unsigned int port_of(const struct netbuf *nb)
{
	const struct sockaddr *sa = nb->buf;

	return ntohs(sa->sa_family == AF_INET ?
			     ((const struct sockaddr_in *)sa)->sin_port :
			     ((const struct sockaddr_in6 *)sa)->sin6_port);
}

/* ---- offline ------------------------------------------------------------------ */

static void check_entry(const char *netid, const char *fmly)
{
	struct netconfig *nc = getnetconfigent(netid);

	CHECK(nc && !strcmp(nc->nc_netid, netid) &&
		      nc->nc_semantics == NC_TPI_COTS_ORD &&
		      !(nc->nc_flag & NC_VISIBLE) &&
		      !strcmp(nc->nc_protofmly, fmly) &&
		      !strcmp(nc->nc_proto, "rdma"),
	      "getnetconfigent(\"%s\"): tpi_cots_ord, not visible, %s, proto rdma",
	      netid, fmly);
	if (nc)
		freenetconfigent(nc);
}

static void check_uaddr(const char *netid, const char *host, unsigned int port,
			const char *want)
{
	struct netconfig *nc = nconf(netid);
	struct sockaddr_storage ss;
	struct netbuf nb, *back;
	char *ua;

	sockaddr_of(host, port, &ss, &nb);
	ua = taddr2uaddr(nc, &nb);
	CHECK(ua && !strcmp(ua, want),
	      "taddr2uaddr(%s, %s port %u) = \"%s\" (%s)", netid, host, port,
	      want, ua ? ua : "NULL");
	back = ua ? uaddr2taddr(nc, ua) : NULL;
	CHECK(back && back->len == nb.len && !memcmp(back->buf, &ss, nb.len),
	      "uaddr2taddr(%s, \"%s\") gives the address back", netid, want);
	if (back) {
		free(back->buf);
		free(back);
	}
	free(ua);
	freenetconfigent(nc);
}

static void check_bad_uaddr(const char *netid, const char *ua)
{
	struct netconfig *nc = nconf(netid);
	struct netbuf *nb = uaddr2taddr(nc, ua);

	CHECK(!nb, "uaddr2taddr(%s, \"%s\") = NULL", netid, ua);
	if (nb) {
		free(nb->buf);
		free(nb);
	}
	freenetconfigent(nc);
}

static void offline_netconfig(void)
{
	struct netconfig *nc;
	struct sockaddr_storage ss;
	struct netbuf nb;
	char *ua;

	check_entry("rdma", "inet");
	check_entry("rdma6", "inet6");
	nc = getnetconfigent("tcp");
	CHECK(nc && !strcmp(nc->nc_netid, "tcp") &&
		      !strcmp(nc->nc_proto, "tcp"),
	      "getnetconfigent(\"tcp\") still comes from /etc/netconfig");
	if (nc)
		freenetconfigent(nc);
	nc = getnetconfigent("rdmax");
	CHECK(!nc, "getnetconfigent(\"rdmax\") = NULL");
	check_uaddr("rdma", "192.0.2.1", 20049, "192.0.2.1.78.81");
	check_uaddr("rdma", "0.0.0.0", 111, "0.0.0.0.0.111");
	check_uaddr("rdma6", "2001:db8::1", 20049, "2001:db8::1.78.81");
	check_uaddr("rdma6", "::", 65535, "::.255.255");
	check_bad_uaddr("rdma", "192.0.2.1.78");
	check_bad_uaddr("rdma", "192.0.2.1.256.1");
	check_bad_uaddr("rdma", "2001:db8::1.78.81");
	check_bad_uaddr("rdma6", "192.0.2.1.78.81");
	nc = nconf("rdma");
	sockaddr_of("2001:db8::1", 1, &ss, &nb);
	ua = taddr2uaddr(nc, &nb);
	CHECK(!ua, "taddr2uaddr(rdma, an IPv6 address) = NULL");
	free(ua);
	freenetconfigent(nc);
	nc = nconf("tcp");
	sockaddr_of("192.0.2.1", 2049, &ss, &nb);
	ua = taddr2uaddr(nc, &nb);
	CHECK(ua && !strcmp(ua, "192.0.2.1.8.1"),
	      "taddr2uaddr(tcp, ...) still libtirpc's: %s", ua ? ua : "NULL");
	free(ua);
	freenetconfigent(nc);
}

static void offline_tli(void)
{
	struct netconfig *r4 = nconf("rdma"), *r6 = nconf("rdma6");
	struct sockaddr_storage ss;
	struct netbuf nb;
	int fd = tn_spare_fd();
	CLIENT *cl;

	sockaddr_of("192.0.2.1", 20049, &ss, &nb);
	cl = clnt_tli_create(fd, r4, &nb, P, 1, 0, 0);
	tn_check_createerr(cl, "clnt_tli_create(fd, rdma)",
			   "Operation not supported");
	CHECK(tn_fd_open(fd), "clnt_tli_create(fd, rdma) leaves that fd open");
	tn_check_fd0("clnt_tli_create(fd, rdma)");
	cl = clnt_tli_create(RPC_ANYFD, r4, NULL, P, 1, 0, 0);
	tn_check_createerr(cl, "clnt_tli_create(RPC_ANYFD, rdma, no address)",
			   "Destination address required");
	cl = clnt_tli_create(RPC_ANYFD, r6, &nb, P, 1, 0, 0);
	tn_check_createerr(cl,
			   "clnt_tli_create(RPC_ANYFD, rdma6, IPv4 address)",
			   "Address family not supported");
	tn_check_fd0("clnt_tli_create(RPC_ANYFD, rdma6)");
	CHECK(!svc_tli_create(fd, r4, NULL, 0, 0) && tn_fd_open(fd),
	      "svc_tli_create(fd, rdma) = NULL, that fd left open");
	tn_check_fd0("svc_tli_create(fd, rdma)");
	close(fd);
	freenetconfigent(r4);
	freenetconfigent(r6);
}

static void offline_clnt(void)
{
	struct timeval tp = { 3, 0 };
	int out = 0;

	tn_check_createerr(clnt_create("127.0.0.1", P, 1, "rdmax"),
			   "clnt_create(\"rdmax\")", "RPC: Unknown protocol");
	tn_check_createerr(
		clnt_create("127.0.0.1", P, 1, "tcp6"),
		"clnt_create(\"tcp6\") (libtirpc: a netid, not a nettype)",
		"RPC: Unknown protocol");
	tn_check_createerr(clnt_create("192.0.2.1", P, 1, "rdma6"),
			   "clnt_create(IPv4 literal, \"rdma6\")",
			   "RPC: Unknown host");
	tn_check_fd0("clnt_create(rdma6)");
	CHECK(rpc_call("127.0.0.1", P, 1, TNETID_INC, (xdrproc_t)xdr_int,
		       (char *)&out, (xdrproc_t)xdr_int, (char *)&out,
		       "rdmax") == RPC_UNKNOWNPROTO,
	      "rpc_call(\"rdmax\") = RPC_UNKNOWNPROTO");
	/* Nothing listens (no device on a host; port 1 in the VM). */
	setenv("RPCRDMA_PORT", "1", 1);
	tn_check_createerr(clnt_create_timed("127.0.0.1", P, 1, "rdma", &tp),
			   "clnt_create_timed(\"rdma\") with nothing there",
			   "RPC: ");
	tn_check_fd0("clnt_create_timed(rdma)");
	unsetenv("RPCRDMA_PORT");
	CHECK(svc_create(tn_dispatch, P, 1, "rdmax") == 0,
	      "svc_create(\"rdmax\") = 0");
}

static int offline(void)
{
	/* The scripts run this with fd 0 on /dev/null: still there? */
	CHECK(tn_fd_open(0),
	      "fd 0 open when main() starts (after the start-up check)");
	tn_fd0_init();
	offline_netconfig();
	offline_tli();
	offline_clnt();
	return tn_done("t_netid offline");
}

/* ---- server ---------------------------------------------------------------------- */

static void wait_for_sigterm(void);

static void serve_v1_v2(struct netconfig *r4, struct netconfig *r6)
{
	int n;

	CHECK(svc_create(tn_dispatch, P, 1, "rdma") == 1,
	      "svc_create(P, 1, \"rdma\") = 1");
	tn_check_fd0("svc_create(rdma)");
	CHECK(svc_create(tn_dispatch, P, 1, "rdma6") == 1,
	      "svc_create(P, 1, \"rdma6\") = 1");
	tn_check_fd0("svc_create(rdma6)");
	n = svc_create(tn_dispatch, P, 1, "tcp");
	CHECK(n >= 1, "svc_create(P, 1, \"tcp\") = %d (tcp and rdma at once)",
	      n);
	CHECK(svc_tp_create(tn_dispatch, P, 2, r4) != NULL,
	      "svc_tp_create(P, 2, rdma)");
	tn_check_fd0("svc_tp_create(rdma)");
	CHECK(svc_tp_create(tn_dispatch, P, 2, r6) != NULL,
	      "svc_tp_create(P, 2, rdma6)");
	tn_check_fd0("svc_tp_create(rdma6)");
}

/* What rpcgen -5 -n NETID generates. */
static void serve_tli(struct netconfig *nc, rpcvers_t vers)
{
	SVCXPRT *x = svc_tli_create(RPC_ANYFD, nc, NULL, 0, 0);

	CHECK(x && x->xp_netid && !strcmp(x->xp_netid, nc->nc_netid) &&
		      x->xp_port,
	      "svc_tli_create(RPC_ANYFD, %s): xp_netid %s, port %u",
	      nc->nc_netid, x && x->xp_netid ? x->xp_netid : "-",
	      x ? x->xp_port : 0);
	tn_check_fd0("svc_tli_create");
	if (!x)
		return;
	rpcb_unset(P, vers, nc);
	tn_check_fd0("rpcb_unset");
	CHECK(svc_reg(x, P, vers, tn_dispatch, nc), "svc_reg(P, %u, %s)",
	      (unsigned int)vers, nc->nc_netid);
	tn_check_fd0("svc_reg");
}

/* v5: bound to the address itself, registered by an explicit rpcb_set();
 * v6 and v7 are registered and removed again. */
static SVCXPRT *serve_explicit(struct netconfig *r4, const char *h4)
{
	struct sockaddr_storage ss;
	struct t_bind tb = { .qlen = 0 };
	SVCXPRT *x, *y;

	sockaddr_of(h4, 0, &ss, &tb.addr);
	x = svc_tli_create(RPC_ANYFD, r4, &tb, 0, 0);
	CHECK(x && x->xp_port, "svc_tli_create(rdma, bound to %s): port %u", h4,
	      x ? x->xp_port : 0);
	if (!x)
		return NULL;
	CHECK(svc_reg(x, P, 5, tn_dispatch, NULL),
	      "svc_reg(P, 5, no netconfig)");
	CHECK(rpcb_set(P, 5, r4, &x->xp_ltaddr), "rpcb_set(P, 5, rdma, %s)",
	      h4);
	tn_check_fd0("rpcb_set(rdma)");
	y = svc_tp_create(tn_dispatch, P, 6, r4);
	CHECK(y != NULL, "svc_tp_create(P, 6, rdma)");
	svc_unreg(P, 6);
	CHECK(rpcb_set(P, 7, r4, &x->xp_ltaddr), "rpcb_set(P, 7, rdma)");
	CHECK(rpcb_unset(P, 7, r4), "rpcb_unset(P, 7, rdma)");
	tn_check_fd0("rpcb_unset(rdma)");
	return x;
}

static void serve_wrong(struct netconfig *r4, struct netconfig *r6, SVCXPRT *x4,
			const char *h4)
{
	struct sockaddr_storage ss;
	struct t_bind tb = { .qlen = 0 };
	int fd = tn_spare_fd();

	CHECK(!svc_tli_create(fd, r4, NULL, 0, 0) && tn_fd_open(fd),
	      "svc_tli_create(fd, rdma) = NULL, that fd left open");
	close(fd);
	sockaddr_of(h4, 0, &ss, &tb.addr);
	CHECK(!svc_tli_create(RPC_ANYFD, r6, &tb, 0, 0),
	      "svc_tli_create(rdma6, an IPv4 bind address) = NULL");
	CHECK(x4 && !svc_reg(x4, P, 9, tn_dispatch, r6),
	      "svc_reg(an rdma SVCXPRT, rdma6 netconfig) = FALSE");
	CHECK(svc_create(tn_dispatch, P, 9, "rdmax") == 0,
	      "svc_create(\"rdmax\") = 0");
	tn_check_fd0("the failing server calls");
}

static int server(const char *h4, const char *h6)
{
	struct netconfig *r4 = nconf("rdma"), *r6 = nconf("rdma6");
	SVCXPRT *x5;
	int n;

	(void)h6;
	tn_fd0_init();
	serve_v1_v2(r4, r6);
	serve_tli(r4, 3);
	serve_tli(r6, 3);
	setenv("NETPATH", "rdma:tcp", 1);
	n = svc_create(tn_dispatch, P, 4, "netpath");
	CHECK(n == 2,
	      "svc_create(P, 4, \"netpath\"), NETPATH=rdma:tcp: %d transports",
	      n);
	tn_check_fd0("svc_create(netpath)");
	unsetenv("NETPATH");
	x5 = serve_explicit(r4, h4);
	serve_wrong(r4, r6, x5, h4);
	freenetconfigent(r4);
	freenetconfigent(r6);
	tn_done("t_netid server");
	wait_for_sigterm();
	printf("ready\n");
	fflush(stdout);
	svc_run();
	return 1;
}

/* ---- serve-one -------------------------------------------------------------------- */

static void *sigterm_thread(void *arg)
{
	sigset_t *set = arg;
	int sig;

	sigwait(set, &sig);
	/* exit() runs librpcrdma's atexit handler: rpcbind entries go. */
	exit(t_failures ? 1 : 0);
	return NULL;
}

/* SIGTERM ends the program with exit(), from a thread of its own. */
static void wait_for_sigterm(void)
{
	static sigset_t set;
	pthread_t t;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	pthread_create(&t, NULL, sigterm_thread, &set);
}

static int serve_one(const char *netid, const char *prog, const char *vers)
{
	struct netconfig *nc = nconf(netid);
	SVCXPRT *x;

	tn_fd0_init();
	x = svc_tp_create(tn_dispatch, strtoul(prog, NULL, 0),
			  strtoul(vers, NULL, 0), nc);
	CHECK(x != NULL, "svc_tp_create(%s, %s, %s)", prog, vers, netid);
	tn_check_fd0("svc_tp_create");
	freenetconfigent(nc);
	if (!x)
		return tn_done("t_netid serve-one");
	wait_for_sigterm();
	printf("ready port %u\n", x->xp_port);
	fflush(stdout);
	svc_run();
	return 1;
}

static int call(const char *netid, const char *host, const char *prog,
		const char *vers)
{
	char what[160], want[64];
	CLIENT *cl;

	tn_fd0_init();
	cl = clnt_create_timed(host, strtoul(prog, NULL, 0),
			       strtoul(vers, NULL, 0), netid, &tp5);
	snprintf(what, sizeof(what), "clnt_create(%s, %s, %s, \"%s\")", host,
		 prog, vers, netid);
	snprintf(want, sizeof(want), "%s %lu", netid, strtoul(vers, NULL, 0));
	tn_check_client(cl, what, want);
	tn_check_fd0("clnt_create");
	return tn_done("t_netid call");
}

/* ---- client ------------------------------------------------------------------------ */

static void client_create(const char *h4, const char *h6)
{
	struct netconfig *r4 = nconf("rdma"), *r6 = nconf("rdma6");

	tn_check_client(clnt_create(h4, P, 1, "rdma"),
			"clnt_create(H4, P, 1, \"rdma\")", "rdma 1");
	tn_check_fd0("clnt_create(rdma)");
	tn_check_client(clnt_create(h6, P, 1, "rdma6"),
			"clnt_create(H6, P, 1, \"rdma6\")", "rdma6 1");
	tn_check_fd0("clnt_create(rdma6)");
	tn_check_client(clnt_create_timed(h4, P, 2, "rdma", &tp5),
			"clnt_create_timed(H4, P, 2, \"rdma\")", "rdma 2");
	tn_check_client(clnt_create_timed(h6, P, 2, "rdma6", &tp5),
			"clnt_create_timed(H6, P, 2, \"rdma6\")", "rdma6 2");
	tn_check_fd0("clnt_create_timed");
	tn_check_client(clnt_tp_create(h4, P, 3, r4),
			"clnt_tp_create(H4, P, 3, rdma)", "rdma 3");
	tn_check_client(clnt_tp_create_timed(h6, P, 3, r6, &tp5),
			"clnt_tp_create_timed(H6, P, 3, rdma6)", "rdma6 3");
	tn_check_fd0("clnt_tp_create");
	tn_check_client(clnt_create(h4, P, 1, "tcp"),
			"clnt_create(H4, P, 1, \"tcp\") (the same server, tcp)",
			"tcp 1");
	freenetconfigent(r4);
	freenetconfigent(r6);
}

static void client_vers(const char *h4, const char *h6)
{
	rpcvers_t v = 0;
	CLIENT *cl;

	cl = clnt_create_vers(h4, P, &v, 1, 9, "rdma");
	CHECK(cl && v == 5,
	      "clnt_create_vers(H4, P, 1..9, \"rdma\"): version %u (want 5)",
	      (unsigned int)v);
	tn_check_client(cl, "  that CLIENT", "rdma 5");
	cl = clnt_create_vers_timed(h6, P, &v, 1, 3, "rdma6", &tp5);
	CHECK(cl && v == 3,
	      "clnt_create_vers_timed(H6, P, 1..3, \"rdma6\"): version %u",
	      (unsigned int)v);
	tn_check_client(cl, "  that CLIENT", "rdma6 3");
	cl = clnt_create_vers(h4, P, &v, 7, 9, "rdma");
	tn_check_createerr(cl, "clnt_create_vers(H4, P, 7..9, \"rdma\")",
			   "RPC: Program/version mismatch");
	tn_check_fd0("clnt_create_vers");
}

static void client_tli(const char *h4)
{
	struct netconfig *r4 = nconf("rdma");
	struct sockaddr_storage ss;
	struct netbuf nb = { .buf = &ss, .maxlen = sizeof(ss) };
	char want[64];
	bool ok;

	ok = rpcb_getaddr(P, 1, r4, &nb, h4);
	snprintf(want, sizeof(want), "%s", h4);
	if (ok) {
		char got[64] = "";

		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, got,
			  sizeof(got));
		ok = !strcmp(got, want) && port_of(&nb);
		CHECK(ok, "rpcb_getaddr(P, 1, rdma, H4) = %s port %u", got,
		      port_of(&nb));
	} else {
		CHECK(false, "rpcb_getaddr(P, 1, rdma, H4): %s",
		      clnt_spcreateerror("error"));
	}
	tn_check_fd0("rpcb_getaddr(rdma)");
	if (ok)
		tn_check_client(clnt_tli_create(RPC_ANYFD, r4, &nb, P, 1, 0, 0),
				"clnt_tli_create(RPC_ANYFD, rdma, that address)",
				"rdma 1");
	tn_check_fd0("clnt_tli_create(rdma)");
	freenetconfigent(r4);
}

static void client_rpc_call(const char *h4, const char *h6)
{
	int in = 41, out = 0;
	enum clnt_stat st;

	for (int i = 0; i < 2; i++) {
		out = 0;
		st = rpc_call(h4, P, 1, TNETID_INC, (xdrproc_t)xdr_int,
			      (char *)&in, (xdrproc_t)xdr_int, (char *)&out,
			      "rdma");
		CHECK(st == RPC_SUCCESS && out == 42,
		      "rpc_call(H4, P, 1, INC(41), \"rdma\") = %d (%s)%s", out,
		      clnt_sperrno(st), i ? ", cached CLIENT" : "");
	}
	st = rpc_call(h6, P, 2, TNETID_INC, (xdrproc_t)xdr_int, (char *)&in,
		      (xdrproc_t)xdr_int, (char *)&out, "rdma6");
	CHECK(st == RPC_SUCCESS && out == 42,
	      "rpc_call(H6, P, 2, INC(41), \"rdma6\") = %d (%s)", out,
	      clnt_sperrno(st));
	tn_check_fd0("rpc_call(rdma)");
}

static void client_netpath(const char *h4)
{
	rpcvers_t v = 0;
	int in = 1, out = 0;
	enum clnt_stat st;
	CLIENT *cl;

	setenv("NETPATH", "rdma:tcp", 1);
	tn_check_client(clnt_create(h4, P, 4, "netpath"),
			"NETPATH=rdma:tcp clnt_create(H4, P, 4, \"netpath\")",
			"rdma 4");
	tn_check_client(clnt_create_timed(h4, P, 4, NULL, &tp5),
			"NETPATH=rdma:tcp clnt_create_timed(H4, P, 4, NULL)",
			"rdma 4");
	cl = clnt_create_vers(h4, P, &v, 1, 9, "netpath");
	CHECK(cl && v == 5,
	      "NETPATH=rdma:tcp clnt_create_vers(H4, P, 1..9): version %u",
	      (unsigned int)v);
	tn_check_client(cl, "  that CLIENT", "rdma 5");
	st = rpc_call(h4, P, 4, TNETID_INC, (xdrproc_t)xdr_int, (char *)&in,
		      (xdrproc_t)xdr_int, (char *)&out, "netpath");
	CHECK(st == RPC_SUCCESS && out == 2,
	      "NETPATH=rdma:tcp rpc_call(\"netpath\") = %d", out);
	tn_check_fd0("clnt_create(netpath)");
	/* The first transport that works wins. */
	setenv("NETPATH", "tcp:rdma", 1);
	tn_check_client(clnt_create(h4, P, 4, "netpath"),
			"NETPATH=tcp:rdma clnt_create(H4, P, 4, \"netpath\")",
			"tcp 4");
	setenv("NETPATH", "rdmax:rdma", 1);
	tn_check_client(clnt_create(h4, P, 4, "netpath"),
			"NETPATH=rdmax:rdma (unknown netids skipped)",
			"rdma 4");
	unsetenv("NETPATH");
}

/* What rpcbind holds for P, from libtirpc's own rpcb_getmaps() over tcp:
 * 1 registered, 0 not, -1 no list at all (rpcbind did not answer, which
 * must not pass for "gone"). */
static int registered(const char *h4, rpcvers_t vers, const char *netid,
		      char *uaddr, size_t len)
{
	struct netconfig *tcp = nconf("tcp");
	rpcblist *l, *head = rpcb_getmaps(tcp, h4);
	int found = head ? 0 : -1;

	for (l = head; l && found <= 0; l = l->rpcb_next) {
		if (l->rpcb_map.r_prog == P && l->rpcb_map.r_vers == vers &&
		    !strcmp(l->rpcb_map.r_netid, netid)) {
			found = 1;
			if (uaddr)
				snprintf(uaddr, len, "%s", l->rpcb_map.r_addr);
		}
	}
	xdr_free((xdrproc_t)xdr_rpcblist_ptr, (char *)&head);
	freenetconfigent(tcp);
	return found;
}

static void client_rpcbind(const char *h4)
{
	char ua[64] = "", want[64];

	CHECK(registered(h4, 1, "rdma", ua, sizeof(ua)) == 1 &&
		      !strncmp(ua, "0.0.0.0.", 8),
	      "rpcbind: P 1 rdma at %s (a wildcard listener)", ua);
	CHECK(registered(h4, 3, "rdma6", ua, sizeof(ua)) == 1 &&
		      !strncmp(ua, "::.", 3),
	      "rpcbind: P 3 rdma6 at %s", ua);
	snprintf(want, sizeof(want), "%s.", h4);
	CHECK(registered(h4, 5, "rdma", ua, sizeof(ua)) == 1 &&
		      !strncmp(ua, want, strlen(want)),
	      "rpcbind: P 5 rdma at %s (rpcb_set of a bound listener)", ua);
	CHECK(registered(h4, 4, "tcp", NULL, 0) == 1 &&
		      registered(h4, 4, "rdma", NULL, 0) == 1,
	      "rpcbind: P 4 on tcp and rdma (svc_create netpath)");
	CHECK(registered(h4, 6, "rdma", NULL, 0) == 0,
	      "rpcbind answers: P 6 gone (svc_unreg)");
	CHECK(registered(h4, 7, "rdma", NULL, 0) == 0,
	      "rpcbind answers: P 7 gone (rpcb_unset)");
}

static void client_fixed_port(const char *h4)
{
	struct netconfig *r4 = nconf("rdma");
	struct sockaddr_storage ss;
	struct netbuf nb = { .buf = &ss, .maxlen = sizeof(ss) };
	char env[64];
	CLIENT *cl;
	enum clnt_stat st = RPC_FAILED;
	struct timeval tv = { 10, 0 };

	if (!rpcb_getaddr(P, 1, r4, &nb, h4)) {
		CHECK(false,
		      "rpcb_getaddr(P, 1, rdma) for the fixed-port tests");
		freenetconfigent(r4);
		return;
	}
	/* A program rpcbind does not know reaches the server anyway. */
	snprintf(env, sizeof(env), "%u=%u", TNETID_UNREG, port_of(&nb));
	setenv("RPCRDMA_PORT", env, 1);
	cl = clnt_create(h4, TNETID_UNREG, 1, "rdma");
	if (cl)
		st = clnt_call(cl, NULLPROC, TN_XDR_VOID, NULL, TN_XDR_VOID,
			       NULL, tv);
	CHECK(cl && st == RPC_PROGUNAVAIL,
	      "RPCRDMA_PORT=%s: unregistered program connects, server says \"%s\"",
	      env, cl ? clnt_sperrno(st) : clnt_spcreateerror("no CLIENT"));
	if (cl)
		clnt_destroy(cl);
	snprintf(env, sizeof(env), "%u", port_of(&nb));
	setenv("RPCRDMA_PORT", env, 1);
	tn_check_client(clnt_create(h4, P, 2, "rdma"),
			"RPCRDMA_PORT=PORT clnt_create(H4, P, 2, \"rdma\")",
			"rdma 2");
	unsetenv("RPCRDMA_PORT");
	tn_check_createerr(clnt_create(h4, TNETID_UNREG, 1, "rdma"),
			   "clnt_create(H4, unregistered program, \"rdma\")",
			   "RPC: Program not registered");
	tn_check_fd0("the fixed-port clients");
	freenetconfigent(r4);
}

static void client_wrong(const char *h4)
{
	tn_check_createerr(clnt_create(h4, P, 1, "rdmax"),
			   "clnt_create(\"rdmax\")", "RPC: Unknown protocol");
	tn_check_createerr(clnt_create("no-such-host.invalid", P, 1, "rdma"),
			   "clnt_create(unknown host, \"rdma\")",
			   "RPC: Unknown host");
	tn_check_createerr(clnt_tp_create(h4, P, 1, NULL),
			   "clnt_tp_create(NULL netconfig)",
			   "RPC: Unknown protocol");
	tn_check_fd0("the failing clients");
}

static int client(const char *h4, const char *h6)
{
	tn_fd0_init();
	client_create(h4, h6);
	client_vers(h4, h6);
	client_tli(h4);
	client_rpc_call(h4, h6);
	client_netpath(h4);
	client_rpcbind(h4);
	client_fixed_port(h4);
	client_wrong(h4);
	return tn_done("t_netid client");
}

/* rpcbind stopped; the server still listens on port. */
static int norpcbind(const char *h4, const char *port)
{
	struct netconfig *r4 = nconf("rdma");
	struct sockaddr_storage ss;
	struct netbuf nb = { .buf = &ss, .maxlen = sizeof(ss) };
	char env[64];

	tn_fd0_init();
	tn_check_createerr(clnt_create_timed(h4, TNETID_PROG2, 1, "rdma", &tp5),
			   "no rpcbind: clnt_create(H4, \"rdma\")",
			   "RPC: Port mapper failure - Unable to send");
	CHECK(!rpcb_getaddr(TNETID_PROG2, 1, r4, &nb, h4) &&
		      strstr(clnt_spcreateerror("x"), "Port mapper failure"),
	      "no rpcbind: rpcb_getaddr(rdma) fails: %s",
	      clnt_spcreateerror("error"));
	tn_check_fd0("clnt_create(rdma) without rpcbind");
	snprintf(env, sizeof(env), "%u=%s", TNETID_PROG2, port);
	setenv("RPCRDMA_PORT", env, 1);
	tn_check_client(
		clnt_create(h4, TNETID_PROG2, 1, "rdma"),
		"no rpcbind: RPCRDMA_PORT=PROG=PORT clnt_create(H4, \"rdma\")",
		"rdma 1");
	unsetenv("RPCRDMA_PORT");
	freenetconfigent(r4);
	return tn_done("t_netid norpcbind");
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(mode, "server") && strcmp(mode, "serve-one"))
		tn_watchdog(100);
	if (!strcmp(mode, "offline"))
		return offline();
	if (!strcmp(mode, "server") && argc == 4)
		return server(argv[2], argv[3]);
	if (!strcmp(mode, "client") && argc == 4)
		return client(argv[2], argv[3]);
	if (!strcmp(mode, "serve-one") && argc == 5)
		return serve_one(argv[2], argv[3], argv[4]);
	if (!strcmp(mode, "call") && argc == 6)
		return call(argv[2], argv[3], argv[4], argv[5]);
	if (!strcmp(mode, "norpcbind") && argc == 4)
		return norpcbind(argv[2], argv[3]);
	fprintf(stderr,
		"usage: t_netid offline | server H4 H6 | client H4 H6 | "
		"serve-one NETID PROG VERS | call NETID HOST PROG VERS | "
		"norpcbind H4 PORT\n");
	return 2;
}
