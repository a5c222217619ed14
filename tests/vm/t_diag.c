/*
 * t_diag.c - what a user hears when RDMA is missing or the address is
 * wrong: creation failures of clients and servers set
 * rpc_createerr, and clnt_spcreateerror() names the cause, with a hint
 * when the cause is local, before rpcbind is blamed for anything.
 * tests/vm/t_diag.sh runs it and judges what reaches stderr (RPCRDMA_LOG).
 *
 *   t_diag nodev           a host without any RDMA device (the host side of
 *                          make check): every client and server constructor,
 *                          over rdma and rdma6, fails with RPC_SYSTEMERROR /
 *                          ENODEV, "no RDMA device on this host" and the
 *                          hint, each within 5 s; rpcbind is never blamed.
 *                          Exits 77 where there is a device.
 *   t_diag noroute ADDR    an RDMA device, but not for ADDR (127.0.0.1, or
 *                          the address of a dummy interface in the VM),
 *                          with rpcbind running there and the program not
 *                          registered: a client hears "no RDMA device for
 *                          address ADDR", not "Program not registered".
 *   t_diag nobind ADDR     ADDR is local but on no RDMA device: a listener
 *                          there fails with ENODEV and says so.
 *   t_diag inuse ADDR      a listener on ADDR: a second one on its port, by
 *                          svc_rdma_create, svc_tli_create, svc_tp_create
 *                          and svc_create, fails with rpc_createerr set and
 *                          clnt_spcreateerror() saying why.
 *
 * One line per check ("ok - ..." / "FAIL - ..."); exit 0 only when all
 * passed.  nodev ends with "library errors: N", the number of creation
 * failures the library should have logged (one line each at level error;
 * at level info one more, for the rdma attempt of NETPATH=rdma:tcp).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "t_util.h"

#define P	   0x20005161u
#define MAX_MS	   5000
#define WATCHDOG_S 120

static int lib_errors; /* creation failures logged by the library */

/*
 * LeakSanitizer (ASan builds) cannot inspect a set-user-ID process, and
 * reads no options there: off in the set-user-ID copy t_diag.sh runs, on
 * everywhere else.
 */
int __lsan_is_turned_off(void);
__attribute__((used, visibility("default"))) int __lsan_is_turned_off(void)
{
	return geteuid() != getuid();
}

static bool has_device(void)
{
	struct ibv_device **l;
	int n = 0;

	l = ibv_get_device_list(&n);
	if (l)
		ibv_free_device_list(l);
	return l && n > 0;
}

static void dispatch(struct svc_req *rq, SVCXPRT *x)
{
	(void)rq;
	svcerr_noproc(x);
}

static void sockaddr_of(struct sockaddr_storage *ss, const char *addr,
			unsigned int port)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (strchr(addr, ':')) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		inet_pton(AF_INET6, addr, &s6->sin6_addr);
	} else {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		inet_pton(AF_INET, addr, &s4->sin_addr);
	}
}

static const char *netid_of(const char *addr)
{
	return strchr(addr, ':') ? "rdma6" : "rdma";
}

/* Before each attempt: a state no constructor leaves behind. */
static int64_t begin(void)
{
	rpc_createerr.cf_stat = RPC_SUCCESS;
	rpc_createerr.cf_error.re_errno = 0;
	return tu_now_ms();
}

/*
 * The attempt what (failed: it returned NULL or 0) ended with
 * RPC_SYSTEMERROR and errno err, within MAX_MS since t0, and
 * clnt_spcreateerror() holds want (and the hint for ENODEV), never
 * rpcbind's complaints.
 */
static void expect(const char *what, bool failed, int64_t t0, int err,
		   const char *want)
{
	int ms = (int)(tu_now_ms() - t0);
	int got = rpc_createerr.cf_error.re_errno;
	const char *text = clnt_spcreateerror("t_diag");

	lib_errors++;
	CHECK(failed && rpc_createerr.cf_stat == RPC_SYSTEMERROR && got == err,
	      "%s: fails with RPC_SYSTEMERROR / %s (stat %d, errno %d %s)",
	      what, strerror(err), rpc_createerr.cf_stat, got, strerror(got));
	CHECK(strstr(text, want) != NULL,
	      "%s: clnt_spcreateerror says '%s': %s", what, want, text);
	if (err == ENODEV)
		CHECK(strstr(text, "ibv_devices") &&
			      strstr(text, "rdma link add rxe0 type rxe"),
		      "%s: with the hint (ibv_devices, rdma link add)", what);
	CHECK(!strstr(text, "not registered") && !strstr(text, "Port mapper"),
	      "%s: rpcbind is not blamed", what);
	CHECK(ms <= MAX_MS, "%s: within %d ms (%d ms)", what, MAX_MS, ms);
}

static void expect_nodev(const char *what, bool failed, int64_t t0)
{
	expect(what, failed, t0, ENODEV, "no RDMA device on this host");
}

/* ---- nodev --------------------------------------------------------------- */

static void nodev_clients(void)
{
	struct netconfig *nc = getnetconfigent("rdma");
	struct timeval tp = { 3, 0 };
	struct sockaddr_storage ss;
	rpcvers_t v = 0;
	CLIENT *cl;
	int64_t t0;

	t0 = begin();
	cl = clnt_create("127.0.0.1", P, 1, "rdma");
	expect_nodev("clnt_create(127.0.0.1, \"rdma\")", !cl, t0);
	t0 = begin();
	cl = clnt_create_timed("::1", P, 1, "rdma6", &tp);
	expect_nodev("clnt_create_timed(::1, \"rdma6\")", !cl, t0);
	t0 = begin();
	cl = clnt_create_vers("127.0.0.1", P, &v, 1, 2, "rdma");
	expect_nodev("clnt_create_vers(127.0.0.1, \"rdma\")", !cl, t0);
	t0 = begin();
	cl = nc ? clnt_tp_create("127.0.0.1", P, 1, nc) : NULL;
	expect_nodev("clnt_tp_create(127.0.0.1, rdma netconfig)", !cl, t0);
	setenv("NETPATH", "rdma", 1);
	t0 = begin();
	cl = clnt_create("127.0.0.1", P, 1, "netpath");
	expect_nodev("clnt_create(\"netpath\"), NETPATH=rdma", !cl, t0);
	/* rdma fails on the way, tcp's failure is the one reported (and
	 * the library logs nothing at level error for it) */
	setenv("NETPATH", "rdma:tcp", 1);
	begin();
	cl = clnt_create("127.0.0.1", P, 1, "netpath");
	CHECK(!cl && rpc_createerr.cf_error.re_errno != ENODEV &&
		      !strstr(clnt_spcreateerror("t_diag"), "RDMA"),
	      "clnt_create(\"netpath\"), NETPATH=rdma:tcp: tcp's failure is "
	      "reported: %s",
	      clnt_spcreateerror("t_diag"));
	if (cl)
		clnt_destroy(cl);
	unsetenv("NETPATH");
	sockaddr_of(&ss, "127.0.0.1", 20049);
	t0 = begin();
	cl = clnt_rdma_create((struct sockaddr *)&ss, P, 1, NULL);
	expect_nodev("clnt_rdma_create(127.0.0.1:20049)", !cl, t0);
	if (nc)
		freenetconfigent(nc);
}

static void nodev_servers(void)
{
	struct netconfig *nc = getnetconfigent("rdma");
	struct netconfig *nc6 = getnetconfigent("rdma6");
	struct sockaddr_storage ss;
	SVCXPRT *x;
	int64_t t0;
	int n;

	sockaddr_of(&ss, "0.0.0.0", 0);
	t0 = begin();
	errno = 0;
	x = svc_rdma_create((struct sockaddr *)&ss, NULL);
	CHECK(!x && errno == ENODEV, "svc_rdma_create: errno ENODEV (%d)",
	      errno);
	expect_nodev("svc_rdma_create(0.0.0.0:0)", !x, t0);
	t0 = begin();
	x = nc ? svc_tp_create(dispatch, P, 1, nc) : NULL;
	expect_nodev("svc_tp_create(rdma)", !x, t0);
	t0 = begin();
	x = nc6 ? svc_tli_create(RPC_ANYFD, nc6, NULL, 0, 0) : NULL;
	expect_nodev("svc_tli_create(RPC_ANYFD, rdma6)", !x, t0);
	t0 = begin();
	n = svc_create(dispatch, P, 1, "rdma6");
	expect_nodev("svc_create(\"rdma6\")", n == 0, t0);
	if (nc)
		freenetconfigent(nc);
	if (nc6)
		freenetconfigent(nc6);
}

/* Only librpcrdma's own failures get its words: libtirpc's read as ever. */
static void nodev_others_untouched(void)
{
	const char *text;
	CLIENT *cl;

	cl = clnt_create("127.0.0.1", P, 1, "rdmax");
	text = clnt_spcreateerror("t_diag");
	CHECK(!cl && !strcmp(text, "t_diag: RPC: Unknown protocol"),
	      "after them, libtirpc's own failure reads as libtirpc says: %s",
	      text);
}

static int nodev(void)
{
	struct rpcrdma_ulb_entry e;
	CLIENT *cl;

	if (has_device()) {
		printf("SKIP: this host has an RDMA device (t_diag nodev needs "
		       "one without)\n");
		return 77;
	}
	CHECK(true, "no RDMA device here (ibv_get_device_list)");
	nodev_clients();
	nodev_servers();
	nodev_others_untouched();
	/* what the program prints itself, whatever RPCRDMA_LOG says */
	cl = clnt_create("127.0.0.1", P, 1, "rdma");
	lib_errors++;
	CHECK(!cl, "clnt_create(\"rdma\") again, for clnt_pcreateerror");
	clnt_pcreateerror("pcreate");
	/* loads the ULB table (and RPCRDMA_ULB_CONF) */
	rpcrdma_ulb_lookup(P, 1, 1, RPCRDMA_ULB_CALL, &e);
	printf("library errors: %d\n", lib_errors);
	return tu_done();
}

/* ---- noroute ADDR ------------------------------------------------------------ */

static int noroute(const char *addr)
{
	const char *netid = netid_of(addr);
	struct rpcrdma_ulb_entry e;
	char want[128];
	CLIENT *cl;
	int64_t t0;

	if (!has_device()) {
		printf("SKIP: no RDMA device (run it in the VM: tests/vm/run)\n");
		return 77;
	}
	/* rpcbind answers there, and knows nothing of P: without the probe
	 * this is what an rdma client would have been told */
	cl = clnt_create(addr, P, 1, strchr(addr, ':') ? "tcp6" : "tcp");
	CHECK(!cl && rpc_createerr.cf_stat == RPC_PROGNOTREGISTERED,
	      "precondition: rpcbind at %s says over tcp: %s", addr,
	      clnt_spcreateerror("t_diag"));
	snprintf(want, sizeof(want), "no RDMA device for address %s", addr);
	t0 = begin();
	cl = clnt_create(addr, P, 1, netid);
	expect("clnt_create over rdma to an address no RDMA device serves", !cl,
	       t0, ENODEV, want);
	if (cl)
		clnt_destroy(cl);
	/* loads the ULB table (and RPCRDMA_ULB_CONF), for t_diag.sh */
	rpcrdma_ulb_lookup(P, 1, 1, RPCRDMA_ULB_CALL, &e);
	return tu_done();
}

/* ---- nobind ADDR ------------------------------------------------------------- */

static int nobind(const char *addr)
{
	struct sockaddr_storage ss;
	char want[128];
	SVCXPRT *x;
	int64_t t0;

	if (!has_device()) {
		printf("SKIP: no RDMA device (run it in the VM: tests/vm/run)\n");
		return 77;
	}
	snprintf(want, sizeof(want), "no RDMA device for address %s", addr);
	sockaddr_of(&ss, addr, 0);
	t0 = begin();
	x = svc_rdma_create((struct sockaddr *)&ss, NULL);
	expect("svc_rdma_create on a local address no RDMA device has", !x, t0,
	       ENODEV, want);
	if (x)
		SVC_DESTROY(x);
	return tu_done();
}

/* ---- inuse ADDR --------------------------------------------------------------- */

static void inuse_all(const char *addr, unsigned int port)
{
	struct netconfig *nc = getnetconfigent(netid_of(addr));
	struct sockaddr_storage ss;
	struct t_bind tb;
	char num[16];
	SVCXPRT *x;
	int64_t t0;
	int n;

	sockaddr_of(&ss, addr, port);
	t0 = begin();
	errno = 0;
	x = svc_rdma_create((struct sockaddr *)&ss, NULL);
	CHECK(!x && errno == EADDRINUSE,
	      "svc_rdma_create: errno EADDRINUSE (%d)", errno);
	expect("svc_rdma_create on a port in use", !x, t0, EADDRINUSE,
	       "Address already in use");
	memset(&tb, 0, sizeof(tb));
	tb.addr.buf = &ss;
	tb.addr.len = tb.addr.maxlen = strchr(addr, ':') ?
					       sizeof(struct sockaddr_in6) :
					       sizeof(struct sockaddr_in);
	t0 = begin();
	x = nc ? svc_tli_create(RPC_ANYFD, nc, &tb, 0, 0) : NULL;
	expect("svc_tli_create on a port in use", !x, t0, EADDRINUSE,
	       "Address already in use");
	/* the wildcard address on that port: rdma_cm refuses it as well, with
	 * EADDRNOTAVAIL */
	snprintf(num, sizeof(num), "%u", port);
	setenv("RPCRDMA_PORT", num, 1);
	setenv("RPCRDMA_RPCBIND", "0", 1);
	t0 = begin();
	x = nc ? svc_tp_create(dispatch, P, 1, nc) : NULL;
	expect("svc_tp_create on the wildcard address, port in use", !x, t0,
	       EADDRNOTAVAIL, "the port is in use on a specific address");
	t0 = begin();
	n = svc_create(dispatch, P, 1, netid_of(addr));
	expect("svc_create on the wildcard address, port in use", n == 0, t0,
	       EADDRNOTAVAIL, "the port is in use on a specific address");
	unsetenv("RPCRDMA_PORT");
	unsetenv("RPCRDMA_RPCBIND");
	if (nc)
		freenetconfigent(nc);
}

static int inuse(const char *addr)
{
	struct sockaddr_storage ss;
	SVCXPRT *first;

	if (!has_device()) {
		printf("SKIP: no RDMA device (run it in the VM: tests/vm/run)\n");
		return 77;
	}
	sockaddr_of(&ss, addr, 0);
	first = svc_rdma_create((struct sockaddr *)&ss, NULL);
	CHECK(first && first->xp_port,
	      "precondition: a listener on %s, port %u", addr,
	      first ? first->xp_port : 0);
	if (!first)
		return 1;
	inuse_all(addr, first->xp_port);
	SVC_DESTROY(first);
	return tu_done();
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	tu_watchdog(WATCHDOG_S, "FAIL - t_diag: watchdog fired\n", 1);
	if (argc == 2 && !strcmp(argv[1], "nodev"))
		return nodev();
	if (argc == 3 && !strcmp(argv[1], "noroute"))
		return noroute(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "nobind"))
		return nobind(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "inuse"))
		return inuse(argv[2]);
	fprintf(stderr,
		"usage: t_diag nodev | noroute ADDR | nobind ADDR | inuse ADDR\n");
	return 2;
}
