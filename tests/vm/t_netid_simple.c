/*
 * t_netid_simple.c - the simplified interface over rdma and rdma6:
 * rpc_reg() on the server, rpc_call() on the client (rpcrdma_netid(3)),
 * next to the same program over libtirpc's tcp.  Driven by t_netid.sh,
 * part netid-simple.
 *
 *   t_netid_simple server H4 H6   every registration below, then "ready"
 *                                 and svc_run()
 *   t_netid_simple calls H4 H6    many rpc_call()s over rdma and rdma6,
 *                                 one CLIENT each (the script then counts
 *                                 the server's connections)
 *   t_netid_simple more H4 H6     tcp beside rdma, NETPATH, calls left
 *                                 unanswered, the server still serving
 *   t_netid_simple errors         rpc_reg() failures, rdma beside tcp
 *   t_netid_simple visible H4     run where /etc/netconfig has a visible
 *                                 rdma line: rpc_reg("visible"), then
 *                                 calls over rdma and tcp, and exit
 *
 * The programs: PS with rpc_reg(..., "rdma"), "rdma6" and "tcp"; PT with
 * "tcp" only (libtirpc's own rpc_reg(), what rdma is compared with); PN
 * with "netpath" and NETPATH=rdma:tcp; PM registered over "tcp" and "rdma"
 * procedure by procedure; PV over "visible" and NETPATH=rdma:tcp, which
 * libtirpc's "visible" ignores.  PT is not given strings (see more()).  Procedures: INC (int + 1), ECHO (a
 * string back), SINK (records its argument, returns NULL: no reply),
 * VOIDNULL (returns NULL with xdr_void: a reply, as libtirpc sends one),
 * SEEN (what SINK recorded).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <netconfig.h>
#include <rpc/rpc.h>

#include "t_netid_util.h"

#define PS 0x20005160u /* rdma, rdma6 and tcp */
#define PT 0x20005161u /* tcp only: libtirpc's rpc_reg() */
#define PN 0x20005162u /* netpath, NETPATH=rdma:tcp */
#define PM 0x20005163u /* tcp and rdma, procedure by procedure */
#define PE 0x20005164u /* failures */
#define PV 0x20005165u /* visible */

#define S_INC	   1
#define S_ECHO	   2
#define S_SINK	   3
#define S_VOIDNULL 4
#define S_SEEN	   5
#define S_NONE	   9 /* never registered */

#define N_INC 60

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* A string of up to 1 MiB (libtirpc's xdr_wrapstring stops at 9000). */
static bool_t xdr_bigstring(XDR *xdrs, char **sp)
{
	return xdr_string(xdrs, sp, 1 << 20);
}

#define XI ((xdrproc_t)xdr_int)
#define XS ((xdrproc_t)xdr_bigstring)

/* ---- The procedures ------------------------------------------------------------ */

static char *inc(char *arg)
{
	static int res;

	res = *(int *)arg + 1;
	return (char *)&res;
}

/* The string decoded into the zeroed buffer, sent back. */
static char *echo(char *arg)
{
	static char *res;

	res = *(char **)arg;
	return (char *)&res;
}

static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static int seen;

static char *sink(char *arg)
{
	int v = *(int *)arg;

	pthread_mutex_lock(&seen_lock);
	if (v >= 0 && v < 31)
		seen |= 1 << v;
	pthread_mutex_unlock(&seen_lock);
	return NULL;
}

static char *voidnull(char *arg)
{
	(void)arg;
	return NULL;
}

static char *get_seen(char *arg)
{
	static int res;

	(void)arg;
	pthread_mutex_lock(&seen_lock);
	res = seen;
	pthread_mutex_unlock(&seen_lock);
	return (char *)&res;
}

/* ---- server -------------------------------------------------------------------- */

static int reg(rpcprog_t prog, rpcvers_t vers, rpcproc_t proc,
	       char *(*fn)(char *), xdrproc_t xin, xdrproc_t xout,
	       const char *nettype)
{
	int r = rpc_reg(prog, vers, proc, fn, xin, xout, (char *)nettype);

	CHECK(r == 0, "rpc_reg(%#x, %u, %u, \"%s\") = %d", (unsigned int)prog,
	      (unsigned int)vers, (unsigned int)proc,
	      nettype ? nettype : "NULL", r);
	return r;
}

/* Every procedure of prog/vers on nettype. */
static void reg_all(rpcprog_t prog, rpcvers_t vers, const char *nettype)
{
	reg(prog, vers, S_INC, inc, XI, XI, nettype);
	reg(prog, vers, S_ECHO, echo, XS, XS, nettype);
	reg(prog, vers, S_SINK, sink, XI, XI, nettype);
	reg(prog, vers, S_VOIDNULL, voidnull, TN_XDR_VOID, TN_XDR_VOID,
	    nettype);
	reg(prog, vers, S_SEEN, get_seen, TN_XDR_VOID, XI, nettype);
}

static void *sigterm_thread(void *arg)
{
	sigset_t *set = arg;
	int sig;

	sigwait(set, &sig);
	/* exit() runs librpcrdma's atexit handler: rpcbind entries go. */
	exit(t_failures ? 1 : 0);
	return NULL;
}

static int server(void)
{
	static sigset_t set;
	pthread_t t;

	tn_fd0_init();
	/* The reference first, so that it stays libtirpc's own. */
	reg_all(PT, 1, "tcp");
	reg_all(PS, 1, "rdma");
	tn_check_fd0("rpc_reg(rdma)");
	reg_all(PS, 1, "rdma6");
	tn_check_fd0("rpc_reg(rdma6)");
	reg(PS, 2, S_INC, inc, XI, XI, "rdma");
	/* tcp after rdma: done on librpcrdma's own tcp transport */
	reg(PS, 1, S_INC, inc, XI, XI, "tcp");
	reg(PS, 1, S_ECHO, echo, XS, XS, "tcp");
	reg(PS, 1, S_SINK, sink, XI, XI, "tcp");
	/* tcp before rdma, as a program adds one procedure after another */
	reg(PM, 1, S_VOIDNULL, voidnull, TN_XDR_VOID, TN_XDR_VOID, "tcp");
	reg(PM, 1, S_INC, inc, XI, XI, "tcp");
	reg(PM, 1, S_INC, inc, XI, XI, "rdma");
	reg(PM, 1, S_ECHO, echo, XS, XS, "tcp");
	reg(PM, 1, S_ECHO, echo, XS, XS, "rdma");
	setenv("NETPATH", "rdma:tcp", 1);
	reg(PN, 1, S_INC, inc, XI, XI, "netpath");
	reg(PN, 1, S_ECHO, echo, XS, XS, NULL);
	/* libtirpc's "visible" does not read NETPATH: tcp, udp, ... only */
	reg(PV, 1, S_INC, inc, XI, XI, "visible");
	unsetenv("NETPATH");
	tn_check_fd0("rpc_reg(netpath)");
	tn_done("t_netid_simple server");
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	pthread_create(&t, NULL, sigterm_thread, &set);
	printf("ready\n");
	fflush(stdout);
	svc_run();
	return 1;
}

/* ---- Calls ------------------------------------------------------------------- */

static enum clnt_stat call_inc(const char *host, rpcprog_t prog, rpcvers_t vers,
			       const char *nettype, int in, int *out)
{
	*out = -1;
	return rpc_call(host, prog, vers, S_INC, XI, (char *)&in, XI,
			(char *)out, nettype);
}

/* n INC calls: how many came back right; the first failure in *st. */
static int incs(const char *host, rpcprog_t prog, rpcvers_t vers,
		const char *nettype, int n, enum clnt_stat *st)
{
	enum clnt_stat s;
	int good = 0, out;

	*st = RPC_SUCCESS;
	for (int i = 0; i < n; i++) {
		s = call_inc(host, prog, vers, nettype, i * 7, &out);
		if (s == RPC_SUCCESS && out == i * 7 + 1)
			good++;
		else if (*st == RPC_SUCCESS)
			*st = s == RPC_SUCCESS ? RPC_CANTDECODERES : s;
	}
	return good;
}

static void check_incs(const char *host, rpcprog_t prog, rpcvers_t vers,
		       const char *nettype, int n)
{
	enum clnt_stat st;
	int good = incs(host, prog, vers, nettype, n, &st);

	CHECK(good == n, "%#x v%u \"%s\": %d INC calls, %d answered n + 1 (%s)",
	      (unsigned int)prog, (unsigned int)vers, nettype, n, good,
	      clnt_sperrno(st));
}

/* Sizes from empty to a Long call and a Reply chunk over RDMA. */
static const size_t echo_sizes[] = { 0,	   1,	 100,  1000,  1025,
				     4000, 4097, 9000, 30000, 100000 };

static bool echo_one(const char *host, rpcprog_t prog, const char *nettype,
		     size_t len, unsigned int seed, enum clnt_stat *st)
{
	char *in = malloc(len + 1), *out = NULL;
	bool ok;

	*st = RPC_SYSTEMERROR;
	if (!in)
		return false;
	for (size_t i = 0; i < len; i++)
		in[i] = (char)('a' + (i * 7 + seed) % 26);
	in[len] = '\0';
	*st = rpc_call(host, prog, 1, S_ECHO, XS, (char *)&in, XS, (char *)&out,
		       nettype);
	ok = *st == RPC_SUCCESS && out && !strcmp(in, out);
	xdr_free(XS, (char *)&out);
	free(in);
	return ok;
}

static void check_echoes(const char *host, rpcprog_t prog, const char *nettype)
{
	enum clnt_stat st = RPC_SUCCESS, s = RPC_SUCCESS;
	int n = 0, good = 0;

	for (unsigned int r = 0; r < 2; r++) {
		for (size_t i = 0; i < ARRAY_LEN(echo_sizes); i++, n++) {
			if (echo_one(host, prog, nettype, echo_sizes[i], r + i,
				     &s))
				good++;
			else if (st == RPC_SUCCESS)
				st = s == RPC_SUCCESS ? RPC_CANTDECODERES : s;
		}
	}
	CHECK(good == n,
	      "%#x \"%s\": %d ECHO calls of 0 to 100000 octets, %d came back "
	      "whole (%s)",
	      (unsigned int)prog, nettype, n, good, clnt_sperrno(st));
}

static enum clnt_stat call_void(const char *host, rpcprog_t prog,
				rpcproc_t proc, const char *nettype)
{
	return rpc_call(host, prog, 1, proc, TN_XDR_VOID, NULL, TN_XDR_VOID,
			NULL, nettype);
}

static void check_void(const char *host, rpcprog_t prog, rpcproc_t proc,
		       const char *nettype, enum clnt_stat want,
		       const char *what)
{
	enum clnt_stat st = call_void(host, prog, proc, nettype);

	CHECK(st == want, "%#x \"%s\" %s: %s (want %s)", (unsigned int)prog,
	      nettype, what, clnt_sperrno(st), clnt_sperrno(want));
}

/* ---- calls: one CLIENT per netid ----------------------------------------------- */

static int calls(const char *h4, const char *h6)
{
	const char *host[] = { h4, h6 }, *netid[] = { "rdma", "rdma6" };

	for (int i = 0; i < 2; i++) {
		check_void(host[i], PS, NULLPROC, netid[i], RPC_SUCCESS,
			   "NULLPROC");
		check_incs(host[i], PS, 1, netid[i], N_INC);
		check_echoes(host[i], PS, netid[i]);
		check_void(host[i], PS, S_VOIDNULL, netid[i], RPC_SUCCESS,
			   "VOIDNULL (NULL with xdr_void: answered)");
		/* last: a failed call ends the cached CLIENT */
		check_void(host[i], PS, S_NONE, netid[i], RPC_PROCUNAVAIL,
			   "a procedure never registered");
	}
	/* The script compares the server's requests with these. */
	NOTE("calls per netid: %d",
	     2 + N_INC + 2 * (int)ARRAY_LEN(echo_sizes) + 1);
	return tn_done("t_netid_simple calls");
}

/* ---- more ---------------------------------------------------------------------- */

struct noreply {
	const char *host, *nettype;
	rpcprog_t prog;
	rpcproc_t proc;
	int arg;
	enum clnt_stat st;
	int64_t ms;
};

static void *noreply_thread(void *p)
{
	struct noreply *nr = p;
	int64_t t0 = tu_now_ms();
	int out = 0;

	nr->st = rpc_call(nr->host, nr->prog, 1, nr->proc, XI, (char *)&nr->arg,
			  XI, (char *)&out, nr->nettype);
	nr->ms = tu_now_ms() - t0;
	return NULL;
}

/*
 * SINK over rdma, rdma6, tcp of ours and libtirpc's tcp at once (each
 * thread its own cached CLIENT; rpc_call() waits 25 s), and a procedure
 * never registered on libtirpc's tcp: it sends nothing there.
 */
static void noreply(const char *h4, const char *h6)
{
	struct noreply nr[] = {
		{ h4, "rdma", PS, S_SINK, 1, RPC_SUCCESS, 0 },
		{ h6, "rdma6", PS, S_SINK, 2, RPC_SUCCESS, 0 },
		{ h4, "tcp", PS, S_SINK, 3, RPC_SUCCESS, 0 },
		{ h4, "tcp", PT, S_SINK, 4, RPC_SUCCESS, 0 },
		{ h4, "tcp", PT, S_NONE, 0, RPC_SUCCESS, 0 },
	};
	pthread_t t[ARRAY_LEN(nr)];
	enum clnt_stat st;
	int out = 0;

	for (size_t i = 0; i < ARRAY_LEN(nr); i++)
		pthread_create(&t[i], NULL, noreply_thread, &nr[i]);
	for (size_t i = 0; i < ARRAY_LEN(nr); i++)
		pthread_join(t[i], NULL);
	for (size_t i = 0; i < 4; i++)
		CHECK(nr[i].st == RPC_TIMEDOUT,
		      "%#x \"%s\" SINK(%d), which returns NULL: %s after %lld "
		      "ms (want no reply: %s)",
		      (unsigned int)nr[i].prog, nr[i].nettype, nr[i].arg,
		      clnt_sperrno(nr[i].st), (long long)nr[i].ms,
		      clnt_sperrno(RPC_TIMEDOUT));
	NOTE("libtirpc's rpc_reg() over tcp, a procedure never registered: "
	     "%s after %lld ms (librpcrdma's answers PROC_UNAVAIL)",
	     clnt_sperrno(nr[4].st), (long long)nr[4].ms);
	st = rpc_call(h4, PS, 1, S_SEEN, TN_XDR_VOID, NULL, XI, (char *)&out,
		      "rdma");
	CHECK(st == RPC_SUCCESS && out == 0x1e,
	      "SEEN over rdma: %#x (want 0x1e: every SINK ran) (%s)", out,
	      clnt_sperrno(st));
	check_incs(h4, PS, 1, "rdma", 5);
	check_incs(h6, PS, 1, "rdma6", 5);
}

static int more(const char *h4, const char *h6)
{
	int out;
	enum clnt_stat st;

	/* Another version on the same transport. */
	check_incs(h4, PS, 2, "rdma", 5);
	check_void(h6, PS, NULLPROC, "rdma6", RPC_SUCCESS, "NULLPROC");
	/* The same program over tcp: ours (PS), libtirpc's (PT). */
	check_incs(h4, PS, 1, "tcp", 20);
	check_echoes(h4, PS, "tcp");
	/*
	 * Not ECHO on PT: libtirpc 1.3.3's svc_simple.c clears only the
	 * first 4 octets of its argument buffer, so xdr_string() takes the
	 * rest of a stale pointer for a buffer (under ASan, whose malloc
	 * fills memory, the server crashes).
	 */
	check_incs(h4, PT, 1, "tcp", 20);
	check_void(h4, PT, S_VOIDNULL, "tcp", RPC_SUCCESS,
		   "VOIDNULL, libtirpc's rpc_reg(): answered too");
	check_void(h4, PS, S_NONE, "tcp", RPC_PROCUNAVAIL,
		   "a procedure never registered (librpcrdma's tcp)");
	check_void(h4, PS, S_VOIDNULL, "tcp", RPC_PROCUNAVAIL,
		   "VOIDNULL, registered over rdma and rdma6 only");
	/* Registered over tcp first, then rdma. */
	check_incs(h4, PM, 1, "tcp", 5);
	check_incs(h4, PM, 1, "rdma", 5);
	check_echoes(h4, PM, "tcp");
	check_echoes(h4, PM, "rdma");
	check_void(h4, PM, S_VOIDNULL, "tcp", RPC_SUCCESS,
		   "VOIDNULL, registered over tcp only");
	check_void(h4, PM, S_VOIDNULL, "rdma", RPC_PROCUNAVAIL,
		   "VOIDNULL, registered over tcp only");
	/* NETPATH=rdma:tcp gave the procedures to both. */
	check_incs(h4, PN, 1, "rdma", 5);
	check_incs(h4, PN, 1, "tcp", 5);
	check_echoes(h4, PN, "rdma");
	check_echoes(h4, PN, "tcp");
	setenv("NETPATH", "rdma:tcp", 1);
	check_incs(h4, PN, 1, "netpath", 5);
	unsetenv("NETPATH");
	/* "visible" with NETPATH=rdma:tcp: libtirpc's visible entries */
	check_incs(h4, PV, 1, "tcp", 2);
	st = call_inc(h4, PV, 1, "rdma", 1, &out);
	CHECK(st == RPC_PROGNOTREGISTERED,
	      "%#x registered with \"visible\" and NETPATH=rdma:tcp: not on "
	      "rdma (%s), as libtirpc's visible ignores NETPATH",
	      (unsigned int)PV, clnt_sperrno(st));
	noreply(h4, h6);
	return tn_done("t_netid_simple more");
}

/* ---- errors ---------------------------------------------------------------------- */

static void other_dispatch(struct svc_req *rq, SVCXPRT *x)
{
	(void)rq;
	svcerr_noproc(x);
}

static int errors(void)
{
	int r;

	tn_fd0_init();
	r = rpc_reg(PE, 1, NULLPROC, inc, XI, XI, (char *)"rdma");
	CHECK(r == -1, "rpc_reg(NULLPROC, \"rdma\") = %d (want -1)", r);
	r = rpc_reg(PE, 1, NULLPROC, inc, XI, XI, (char *)"tcp");
	CHECK(r == -1, "libtirpc: rpc_reg(NULLPROC, \"tcp\") = %d (want -1)",
	      r);
	r = rpc_reg(PE, 1, S_INC, inc, XI, XI, (char *)"rdmax");
	CHECK(r == -1, "rpc_reg(\"rdmax\") = %d (want -1)", r);
	/* Another dispatch function has the program and version. */
	CHECK(svc_create(other_dispatch, PE, 2, "rdma") == 1,
	      "svc_create(%#x, 2, \"rdma\")", PE);
	r = rpc_reg(PE, 2, S_INC, inc, XI, XI, (char *)"rdma");
	CHECK(r == -1, "then rpc_reg(%#x, 2, \"rdma\") = %d (want -1)", PE, r);
	CHECK(svc_create(other_dispatch, PE, 3, "tcp") >= 1,
	      "svc_create(%#x, 3, \"tcp\")", PE);
	r = rpc_reg(PE, 3, S_INC, inc, XI, XI, (char *)"tcp");
	CHECK(r == -1, "libtirpc: then rpc_reg(%#x, 3, \"tcp\") = %d (want -1)",
	      PE, r);
	tn_check_fd0("the failed rpc_reg() calls");
	svc_unreg(PE, 2);
	svc_unreg(PE, 3);
	return tn_done("t_netid_simple errors");
}

/* ---- visible ----------------------------------------------------------------------- */

static void *serve_thread(void *arg)
{
	(void)arg;
	svc_run();
	return NULL;
}

/* Where /etc/netconfig has a visible rdma entry: server and client. */
static int visible(const char *h4)
{
	pthread_t t;

	tn_fd0_init();
	reg(PV, 2, S_INC, inc, XI, XI, "visible");
	tn_check_fd0("rpc_reg(visible)");
	pthread_create(&t, NULL, serve_thread, NULL);
	check_incs(h4, PV, 2, "rdma", 5);
	check_incs(h4, PV, 2, "tcp", 5);
	svc_unreg(PV, 2);
	return tn_done("t_netid_simple visible");
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(mode, "server"))
		tn_watchdog(100);
	if (!strcmp(mode, "server") && argc == 4)
		return server();
	if (!strcmp(mode, "calls") && argc == 4)
		return calls(argv[2], argv[3]);
	if (!strcmp(mode, "more") && argc == 4)
		return more(argv[2], argv[3]);
	if (!strcmp(mode, "errors") && argc == 2)
		return errors();
	if (!strcmp(mode, "visible") && argc == 3)
		return visible(argv[2]);
	fprintf(stderr, "usage: t_netid_simple server H4 H6 | calls H4 H6 | "
			"more H4 H6 | errors | visible H4\n");
	return 2;
}
