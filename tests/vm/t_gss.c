/*
 * t_gss.c - RPCSEC_GSS with a real Kerberos KDC over tcp and rdma, one
 * rpcgen program (tests/rpc/rtest.x), libtirpc's own GSS code on both
 * sides (V1-GSS-2, V1-GSS-3, V1-GSS-4: the RPCSEC_GSS parts
 * and wrapped bodies move whole, inline or as Long messages).
 * tests/vm/t_gss.sh runs it inside the VM
 * after tests/vm/krb5.sh made the realm; run alone it skips.
 *
 *   sizes      krb5, krb5i and krb5p (authgss_create_default with
 *              rpc_gss_svc_none, integrity, privacy), ECHO and FILL of 0,
 *              1000, 4000, 70 000 octets, 1 and 3 MiB: every call over
 *              rdma succeeds with the data intact - replies inline, in a
 *              Reply chunk after the server said the reply did not fit
 *              (a resend of the same XID answered from the server's
 *              record), Long calls; the same over tcp up to what
 *              libtirpc's own record stream allows (krb5 at every size,
 *              krb5i/krb5p up to 4000 octets: larger ones are measured in
 *              a child process and noted, as they fail in libtirpc);
 *   the server sees the principal and the service (rpc_gss_getcred) and
 *              refuses AUTH_NONE with AUTH_TOOWEAK;
 *   expiry     a krb5i context from a ticket of 20 s, on a tcp and an rdma
 *              CLIENT: once ticket and context expired, the next call on
 *              the same CLIENT ends as over tcp (it succeeds: nothing
 *              checks an established context's lifetime), and with the
 *              ticket renewed a fresh CLIENT works;
 *   window     64 sequential calls on one krb5i context, more than 3
 *              sequence windows, all succeed (each Reply's verifier
 *              checks its call's number), and the server grants the same
 *              window over both;
 *   failures   a stale ticket (the service's key changed since it was
 *              issued), an expired one and an unknown service principal:
 *              authgss_create_default() returns NULL within the deadline,
 *              no crash, and the server goes on serving.
 *
 * The server is this program with --serve: svc_tli_create() on tcp and
 * rdma, rpc_gss_set_svc_name() with the keytab in KRB5_KTNAME.  The
 * environment (tests/vm/t_gss.sh): KRB5_CONFIG, KRB5CCNAME (the user's
 * ticket), KRB5_KTNAME, KRB5_HOST, KRB5_REALM, KRB5_USER, T_GSS_STALE_CC
 * and T_GSS_EXPIRED_CC (credential caches holding a stale and an expired
 * ticket), KRB5_USER_PW and T_GSS_SHORT_CC (where expiry kinits its
 * short ticket).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gssapi/gssapi_krb5.h>
#include <rpc/auth_gss.h>
#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>
#include <rpc/rpcsec_gss.h>

#include "rtest.h"
#include "tests/vm/t_util.h"

#define PORT	 20780 /* tcp; rdma +1 */
#define FILL_MAX (16u << 20)
#define TCP_WRAP_MAX \
	4000u /* krb5i/krb5p over tcp: the largest size checked; libtirpc \
		 * fails beyond its record buffer */

static const struct timeval call_tv = { 60, 0 };

static const u_int sizes[] = { 0, 1000, 4000, 70000, 1u << 20, 3u << 20 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static const struct gsvc {
	const char *name;
	rpc_gss_svc_t svc;
} gsvcs[] = {
	{ "krb5", RPCSEC_GSS_SVC_NONE },
	{ "krb5i", RPCSEC_GSS_SVC_INTEGRITY },
	{ "krb5p", RPCSEC_GSS_SVC_PRIVACY },
};

static const char *env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);

	return v && *v ? v : dflt;
}

/* "rtest@HOST": the host-based service name of the server. */
static const char *service_name(void)
{
	static char buf[256];

	snprintf(buf, sizeof(buf), "rtest@%s",
		 env_or("KRB5_HOST", "gss.rtest.test"));
	return buf;
}

static bool is_rdma(const char *netid)
{
	return strncmp(netid, "rdma", 4) == 0;
}

/* ---- The server ----------------------------------------------------------- */

/* "PRINCIPAL SERVICE" of the caller, as rpc_gss_getcred() gives them. */
static void who(struct svc_req *rq, char *buf, size_t cap)
{
	rpc_gss_rawcred_t *rc = NULL;

	if (!rpc_gss_getcred(rq, &rc, NULL, NULL) || !rc ||
	    !rc->client_principal) {
		snprintf(buf, cap, "(rpc_gss_getcred failed)");
		return;
	}
	snprintf(buf, cap, "%.*s %d", (int)rc->client_principal->len,
		 rc->client_principal->name, (int)rc->service);
}

static void fill_reply(SVCXPRT *xprt, const rtest_fill_args *a)
{
	rtest_data d = { 0, NULL };

	if (a->len > FILL_MAX) {
		svcerr_decode(xprt);
		return;
	}
	d.rtest_data_len = a->len;
	d.rtest_data_val = malloc(a->len ? a->len : 1);
	if (!d.rtest_data_val) {
		svcerr_systemerr(xprt);
		return;
	}
	tu_fill(d.rtest_data_val, a->len, a->seed);
	svc_sendreply(xprt, (xdrproc_t)xdr_rtest_data, (char *)&d);
	free(d.rtest_data_val);
}

static void dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	union {
		rtest_data echo;
		rtest_fill_args fill;
	} arg;
	char line[512], *p = line;
	xdrproc_t xarg;

	memset(&arg, 0, sizeof(arg));
	if (rq->rq_proc == RTEST_NULL) {
		svc_sendreply(xprt, (xdrproc_t)xdr_void, NULL);
		return;
	}
	if (rq->rq_proc == RTEST_SLEEP) { /* here: reply and quit */
		svc_sendreply(xprt, (xdrproc_t)xdr_void, NULL);
		svc_exit();
		return;
	}
	if (rq->rq_cred.oa_flavor != RPCSEC_GSS) {
		svcerr_weakauth(xprt);
		return;
	}
	switch (rq->rq_proc) {
	case RTEST_ECHO:
		xarg = (xdrproc_t)xdr_rtest_data;
		break;
	case RTEST_FILL:
		xarg = (xdrproc_t)xdr_rtest_fill_args;
		break;
	case RTEST_ECHOSTR:
		xarg = (xdrproc_t)xdr_void;
		break;
	default:
		svcerr_noproc(xprt);
		return;
	}
	if (!svc_getargs(xprt, xarg, (char *)&arg)) {
		svcerr_decode(xprt);
		return;
	}
	switch (rq->rq_proc) {
	case RTEST_ECHO:
		svc_sendreply(xprt, (xdrproc_t)xdr_rtest_data,
			      (char *)&arg.echo);
		break;
	case RTEST_FILL:
		fill_reply(xprt, &arg.fill);
		break;
	case RTEST_ECHOSTR:
		who(rq, line, sizeof(line));
		svc_sendreply(xprt, (xdrproc_t)xdr_wrapstring, (char *)&p);
		break;
	}
	svc_freeargs(xprt, xarg, (char *)&arg);
}

static void sa_make(struct sockaddr_storage *ss, struct netbuf *nb, int port)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	s4->sin_family = AF_INET;
	s4->sin_port = htons(port);
	inet_pton(AF_INET, env_or("RDMA_ADDR4", "192.0.2.1"), &s4->sin_addr);
	nb->len = sizeof(*s4);
	nb->maxlen = sizeof(*ss);
	nb->buf = ss;
}

static bool listen_on(const char *netid, int port)
{
	struct netconfig *nc = getnetconfigent(netid);
	struct sockaddr_storage ss;
	struct t_bind tb;
	SVCXPRT *xprt;

	sa_make(&ss, &tb.addr, port);
	tb.qlen = 16;
	xprt = nc ? svc_tli_create(RPC_ANYFD, nc, &tb, 0, 0) : NULL;
	if (nc)
		freenetconfigent(nc);
	if (!xprt || !svc_reg(xprt, RTEST_PROG, RTEST_VERS, dispatch, NULL)) {
		fprintf(stderr, "t_gss server: %s port %d: cannot serve\n",
			netid, port);
		return false;
	}
	return true;
}

static int serve(void)
{
	if (!rpc_gss_set_svc_name((char *)service_name(), "kerberos_v5", 0,
				  RTEST_PROG, RTEST_VERS)) {
		fprintf(stderr, "t_gss server: rpc_gss_set_svc_name(%s)\n",
			service_name());
		return 1;
	}
	if (!listen_on("tcp", PORT) ||
	    (strstr(env_or("T_GSS_NETIDS", "rdma"), "rdma") &&
	     !listen_on("rdma", PORT + 1)))
		return 1;
	printf("ready\n");
	fflush(stdout);
	svc_run();
	svc_unreg(RTEST_PROG, RTEST_VERS);
	return 0;
}

/* ---- The client ----------------------------------------------------------- */

static CLIENT *connect_to(const char *netid)
{
	struct netconfig *nc = getnetconfigent(netid);
	struct sockaddr_storage ss;
	struct netbuf nb;
	CLIENT *cl;

	sa_make(&ss, &nb, PORT + (is_rdma(netid) ? 1 : 0));
	cl = nc ? clnt_tli_create(RPC_ANYFD, nc, &nb, RTEST_PROG, RTEST_VERS, 0,
				  0) :
		  NULL;
	if (nc)
		freenetconfigent(nc);
	if (cl)
		clnt_control(cl, CLSET_TIMEOUT, (char *)&call_tv);
	return cl;
}

/* An RPCSEC_GSS context for svc on cl, or NULL (with errno-like reasons
 * libtirpc prints under its debug level only). */
static AUTH *gss_auth(CLIENT *cl, const char *service, rpc_gss_svc_t svc)
{
	struct rpc_gss_sec sec;

	memset(&sec, 0, sizeof(sec));
	sec.mech = (gss_OID)gss_mech_krb5;
	sec.qop = GSS_C_QOP_DEFAULT;
	sec.svc = svc;
	sec.cred = GSS_C_NO_CREDENTIAL;
	sec.req_flags = GSS_C_MUTUAL_FLAG;
	return authgss_create_default(cl, (char *)service, &sec);
}

/* ECHO of n octets: the status, and whether the data came back. */
static enum clnt_stat echo(CLIENT *cl, u_int n, uint32_t seed, bool *same)
{
	rtest_data a = { n, NULL }, r = { 0, NULL };
	enum clnt_stat st;

	*same = false;
	a.rtest_data_val = malloc(n ? n : 1);
	if (!a.rtest_data_val)
		return RPC_SYSTEMERROR;
	tu_fill(a.rtest_data_val, n, seed);
	st = clnt_call(cl, RTEST_ECHO, (xdrproc_t)xdr_rtest_data, (char *)&a,
		       (xdrproc_t)xdr_rtest_data, (char *)&r, call_tv);
	if (st == RPC_SUCCESS)
		*same = r.rtest_data_len == n &&
			(!n || !memcmp(r.rtest_data_val, a.rtest_data_val, n));
	free(a.rtest_data_val);
	xdr_free((xdrproc_t)xdr_rtest_data, (char *)&r);
	return st;
}

/* FILL of n octets: the status, and whether the pattern came. */
static enum clnt_stat fill(CLIENT *cl, u_int n, uint32_t seed, bool *same)
{
	rtest_fill_args a = { n, seed };
	rtest_data r = { 0, NULL };
	enum clnt_stat st;

	*same = false;
	st = clnt_call(cl, RTEST_FILL, (xdrproc_t)xdr_rtest_fill_args,
		       (char *)&a, (xdrproc_t)xdr_rtest_data, (char *)&r,
		       call_tv);
	if (st == RPC_SUCCESS)
		*same = r.rtest_data_len == n &&
			tu_fill_check(r.rtest_data_val, n, seed) < 0;
	xdr_free((xdrproc_t)xdr_rtest_data, (char *)&r);
	return st;
}

static enum clnt_stat one_call(CLIENT *cl, bool is_echo, u_int n, uint32_t seed,
			       bool *same)
{
	return is_echo ? echo(cl, n, seed, same) : fill(cl, n, seed, same);
}

/*
 * A call libtirpc's tcp code may not manage (krb5i/krb5p beyond its record
 * buffer): made by a child with its own CLIENT and context, so that
 * whatever happens to it is measured and noted, never fatal.
 */
static void tcp_measure(const struct gsvc *g, bool is_echo, u_int n)
{
	const char *what = is_echo ? "ECHO" : "FILL";
	int status = 0;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		CLIENT *cl = connect_to("tcp");
		enum clnt_stat st;
		bool same;

		alarm(120);
		if (!cl ||
		    !(cl->cl_auth = gss_auth(cl, service_name(), g->svc)))
			_exit(100);
		st = one_call(cl, is_echo, n, n, &same);
		_exit(st == RPC_SUCCESS ? (same ? 0 : 101) : (int)st);
	}
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		NOTE("tcp %s %s %u octets: works", g->name, what, n);
	else if (WIFEXITED(status) && WEXITSTATUS(status) < 100)
		NOTE("tcp %s %s %u octets: fails in libtirpc: %s", g->name,
		     what, n, clnt_sperrno(WEXITSTATUS(status)));
	else if (WIFSIGNALED(status))
		NOTE("tcp %s %s %u octets: the client died of signal %d in libtirpc",
		     g->name, what, n, WTERMSIG(status));
	else if (WIFEXITED(status) && WEXITSTATUS(status) == 100)
		NOTE("tcp %s %s %u octets: no context (a new connection)",
		     g->name, what, n);
	else
		NOTE("tcp %s %s %u octets: fails (exit %d)", g->name, what, n,
		     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* One call by a child of its own over tcp: true if it succeeded with the
 * data intact (tcp_limits). */
static bool tcp_works(const struct gsvc *g, bool is_echo, u_int n)
{
	int status = 0;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		CLIENT *cl = connect_to("tcp");
		bool same;

		alarm(60);
		if (!cl ||
		    !(cl->cl_auth = gss_auth(cl, service_name(), g->svc)))
			_exit(2);
		_exit(one_call(cl, is_echo, n, n, &same) == RPC_SUCCESS &&
				      same ?
			      0 :
			      1);
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* t_gss --tcp-limits: the largest ECHO and FILL that libtirpc's tcp
 * transport manages under krb5i and krb5p, found by bisection (for the
 * manual page; not part of the test). */
static void tcp_limits(void)
{
	unsigned int i, k;

	for (i = 1; i < sizeof(gsvcs) / sizeof(gsvcs[0]); i++) {
		if (!strstr(env_or("T_GSS_LIMITS", "krb5i krb5p"),
			    gsvcs[i].name))
			continue;
		for (k = 0; k < 2; k++) {
			u_int lo = TCP_WRAP_MAX, hi = 70000, mid;

			if (!tcp_works(&gsvcs[i], k == 0, lo) ||
			    tcp_works(&gsvcs[i], k == 0, hi)) {
				NOTE("tcp %s %s: not bracketed by %u..%u",
				     gsvcs[i].name, k ? "FILL" : "ECHO", lo,
				     hi);
				continue;
			}
			while (hi - lo > 4) {
				mid = (lo + (hi - lo) / 2) & ~3u;
				if (tcp_works(&gsvcs[i], k == 0, mid))
					lo = mid;
				else
					hi = mid;
			}
			NOTE("tcp %s %s: works up to %u octets, fails from %u",
			     gsvcs[i].name, k ? "FILL" : "ECHO", lo, hi);
		}
	}
}

/* The server's view of the caller: "user@REALM SERVICE". */
static void check_principal(CLIENT *cl, const char *netid, const struct gsvc *g)
{
	char want[256], *got = NULL;
	enum clnt_stat st;

	snprintf(want, sizeof(want), "%s@%s %d", env_or("KRB5_USER", "alice"),
		 env_or("KRB5_REALM", "RTEST.TEST"), (int)g->svc);
	st = clnt_call(cl, RTEST_ECHOSTR, (xdrproc_t)xdr_void, NULL,
		       (xdrproc_t)xdr_wrapstring, (char *)&got, call_tv);
	CHECK(st == RPC_SUCCESS && got && !strcmp(got, want),
	      "%s %s: the server sees \"%s\" (rpc_gss_getcred: %s)", netid,
	      g->name, want,
	      st == RPC_SUCCESS ? (got ? got : "(null)") : clnt_sperrno(st));
	if (got)
		xdr_free((xdrproc_t)xdr_wrapstring, (char *)&got);
}

static void sizes_with(CLIENT *cl, const char *netid, const struct gsvc *g)
{
	bool tcp = !is_rdma(netid), same;
	enum clnt_stat st;
	unsigned int i, k;
	int64_t t0;

	for (i = 0; i < NSIZES; i++) {
		for (k = 0; k < 2; k++) {
			bool is_echo = k == 0;
			const char *what = is_echo ? "ECHO" : "FILL";

			if (tcp && g->svc != RPCSEC_GSS_SVC_NONE &&
			    sizes[i] > TCP_WRAP_MAX) {
				tcp_measure(g, is_echo, sizes[i]);
				continue;
			}
			t0 = tu_now_ms();
			st = one_call(cl, is_echo, sizes[i], i * 7 + k, &same);
			CHECK(st == RPC_SUCCESS && same,
			      "%s %s %s %u octets: %s%s (%lld ms)", netid,
			      g->name, what, sizes[i], clnt_sperrno(st),
			      st == RPC_SUCCESS && !same ? ", data differ" : "",
			      (long long)(tu_now_ms() - t0));
		}
	}
}

/* Threads sharing one CLIENT and its context (threaded). */
#define NTHREADS 4
#define NTCALLS	 12

struct tjob {
	CLIENT *cl;
	unsigned int id;
	u_int big; /* the large size: 70 000 over rdma */
	unsigned int ok;
	enum clnt_stat last;
};

static void *tjob_run(void *arg)
{
	struct tjob *j = arg;
	unsigned int i;
	bool same;

	for (i = 0; i < NTCALLS; i++) {
		/* small and large: inline replies and resent ones */
		u_int n = i % 3 == 2 ? j->big : 1000 + j->id * 4;
		enum clnt_stat st =
			i % 2 ? fill(j->cl, n, j->id * 100 + i, &same) :
				echo(j->cl, n, j->id * 100 + i, &same);

		if (st == RPC_SUCCESS && same)
			j->ok++;
		else
			j->last = st;
	}
	return NULL;
}

/*
 * NTHREADS threads call on one CLIENT with one krb5i context at once, as
 * rdma allows (over tcp clnt_vc serializes the calls of a CLIENT):
 * libtirpc checks each Reply against the sequence number its context
 * gave last, so the calls of a context must not overlap.
 */
static void threaded(CLIENT *cl, const char *netid)
{
	struct tjob jobs[NTHREADS];
	pthread_t th[NTHREADS];
	unsigned int i, ok = 0;
	enum clnt_stat last = RPC_SUCCESS;

	for (i = 0; i < NTHREADS; i++) {
		jobs[i] = (struct tjob){ .cl = cl,
					 .id = i,
					 .big = is_rdma(netid) ? 70000 :
								 TCP_WRAP_MAX };
		if (pthread_create(&th[i], NULL, tjob_run, &jobs[i]))
			jobs[i].cl = NULL;
	}
	for (i = 0; i < NTHREADS; i++) {
		if (!jobs[i].cl)
			continue;
		pthread_join(th[i], NULL);
		ok += jobs[i].ok;
		if (jobs[i].last != RPC_SUCCESS)
			last = jobs[i].last;
	}
	CHECK(ok == NTHREADS * NTCALLS,
	      "%s krb5i: %u threads x %u calls on one CLIENT and context: %u "
	      "answered with the data intact (last error: %s)",
	      netid, NTHREADS, NTCALLS, ok, clnt_sperrno(last));
}

/*
 * Clients that go away without destroying their context (a process that
 * exits): each of NFRESH processes in turn connects, makes a krb5i
 * context and 8 calls (past libtirpc's sequence window of 5), and exits.
 * The server must serve the next one as a new client: libtirpc finds
 * contexts by the address of the SVCXPRT, which the next connection's is
 * likely to reuse.  Over tcp this is libtirpc's own doing: noted only.
 */
#define NFRESH 4

static const char *self_path; /* argv[0] */

static int fresh_client(const char *netid)
{
	CLIENT *cl = connect_to(netid);
	unsigned int i;
	bool same;

	alarm(120);
	if (!cl || !(cl->cl_auth = gss_auth(cl, service_name(),
					    RPCSEC_GSS_SVC_INTEGRITY)))
		return 2;
	for (i = 0; i < 8; i++)
		if (echo(cl, 100, i, &same) != RPC_SUCCESS || !same)
			return 1;
	return 0; /* no AUTH_DESTROY, no clnt_destroy */
}

static void fresh_clients(const char *netid)
{
	unsigned int i, ok = 0;
	int status, last = 0;
	pid_t pid;

	for (i = 0; i < NFRESH; i++) {
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			/* a new process, nothing of ours inherited */
			execl(self_path, self_path, "--fresh", netid,
			      (char *)NULL);
			_exit(127);
		}
		status = -1;
		waitpid(pid, &status, 0);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			ok++;
		else
			last = status;
	}
	if (is_rdma(netid))
		CHECK(ok == NFRESH,
		      "%s: %u clients in turn that exit without destroying "
		      "their krb5i context: %u served (last failure: status "
		      "0x%x; 2: no context)",
		      netid, NFRESH, ok, last);
	else
		NOTE("%s: %u clients in turn that exit without destroying "
		     "their krb5i context: %u served",
		     netid, NFRESH, ok);
}

/* AUTH_NONE to a procedure that wants RPCSEC_GSS: AUTH_TOOWEAK. */
static void check_tooweak(CLIENT *cl, const char *netid)
{
	struct rpc_err e;
	enum clnt_stat st;
	bool same;

	st = echo(cl, 16, 1, &same);
	clnt_geterr(cl, &e);
	CHECK(st == RPC_AUTHERROR && e.re_why == AUTH_TOOWEAK,
	      "%s: AUTH_NONE is refused with AUTH_TOOWEAK (%s, why %d)", netid,
	      clnt_sperrno(st), (int)e.re_why);
}

/* authgss_create_default() with the ticket cache cc (NULL: the user's)
 * and service must fail, within the deadline. */
static void check_refused(CLIENT *cl, const char *netid, const char *cc,
			  const char *service, const char *why)
{
	char *saved = strdup(env_or("KRB5CCNAME", ""));
	int64_t t0 = tu_now_ms();
	AUTH *auth;

	if (cc)
		setenv("KRB5CCNAME", cc, 1);
	auth = gss_auth(cl, service, RPCSEC_GSS_SVC_INTEGRITY);
	if (saved)
		setenv("KRB5CCNAME", saved, 1);
	free(saved);
	CHECK(auth == NULL && tu_now_ms() - t0 < 30000,
	      "%s: %s: no context (authgss_create_default %s, %lld ms)", netid,
	      why, auth ? "succeeded" : "returned NULL",
	      (long long)(tu_now_ms() - t0));
	if (auth)
		AUTH_DESTROY(auth);
}

static void failures(CLIENT *cl, const char *netid)
{
	const char *stale = getenv("T_GSS_STALE_CC");
	const char *expired = getenv("T_GSS_EXPIRED_CC");
	char nosuch[256];

	snprintf(nosuch, sizeof(nosuch), "nosuch@%s",
		 env_or("KRB5_HOST", "gss.rtest.test"));
	CHECK(stale && expired, "T_GSS_STALE_CC and T_GSS_EXPIRED_CC are set");
	if (stale)
		check_refused(cl, netid, stale, service_name(),
			      "a stale ticket (the service's key changed)");
	if (expired)
		check_refused(cl, netid, expired, service_name(),
			      "an expired ticket");
	check_refused(cl, netid, NULL, nosuch, "an unknown service principal");
}

static void one_netid(const char *netid)
{
	struct rpcrdma_clnt_stats s0, s1;
	CLIENT *cl = connect_to(netid);
	unsigned int i;
	AUTH *none;

	if (!CHECK_OK(cl != NULL, "%s: clnt_tli_create%s", netid,
		      cl ? "" : clnt_spcreateerror("")))
		return;
	none = cl->cl_auth;
	check_tooweak(cl, netid);
	memset(&s0, 0, sizeof(s0));
	memset(&s1, 0, sizeof(s1));
	if (is_rdma(netid))
		clnt_control(cl, CLGET_RDMA_STATS, (char *)&s0);
	for (i = 0; i < sizeof(gsvcs) / sizeof(gsvcs[0]); i++) {
		const struct gsvc *g = &gsvcs[i];
		AUTH *auth = gss_auth(cl, service_name(), g->svc);

		if (!CHECK_OK(auth != NULL, "%s %s: authgss_create_default(%s)",
			      netid, g->name, service_name()))
			continue;
		cl->cl_auth = auth;
		check_principal(cl, netid, g);
		sizes_with(cl, netid, g);
		if (g->svc == RPCSEC_GSS_SVC_INTEGRITY)
			threaded(cl, netid);
		cl->cl_auth = none;
		AUTH_DESTROY(auth);
	}
	if (is_rdma(netid)) {
		clnt_control(cl, CLGET_RDMA_STATS, (char *)&s1);
		CHECK(s1.long_replies > s0.long_replies &&
			      s1.long_calls > s0.long_calls,
		      "%s: replies came in Reply chunks (%llu) and calls went Long (%llu); %llu resends",
		      netid,
		      (unsigned long long)(s1.long_replies - s0.long_replies),
		      (unsigned long long)(s1.long_calls - s0.long_calls),
		      (unsigned long long)(s1.resends - s0.resends));
	}
	failures(cl, netid);
	fresh_clients(netid);
	/* and the server still serves */
	cl->cl_auth = gss_auth(cl, service_name(), RPCSEC_GSS_SVC_PRIVACY);
	if (CHECK_OK(cl->cl_auth != NULL,
		     "%s: a good context after the failures", netid)) {
		u_int n = is_rdma(netid) ? 70000 : TCP_WRAP_MAX;
		bool same;
		enum clnt_stat st = echo(cl, n, 9, &same);

		CHECK(st == RPC_SUCCESS && same,
		      "%s krb5p ECHO %u octets after the failures: %s", netid,
		      n, clnt_sperrno(st));
		AUTH_DESTROY(cl->cl_auth);
	}
	cl->cl_auth = none;
	clnt_destroy(cl);
}

/* ---- Context expiry and the sequence window ------------------------------ */

/*
 * kinit as KRB5_USER into T_GSS_SHORT_CC with lifetime life ("20s"),
 * within 30 s; the password comes from KRB5_USER_PW (tests/vm/t_gss.sh).
 * The shell expands the variables, so nothing is quoted twice here.
 */
static bool short_kinit(const char *life)
{
	char cmd[256];

	setenv("T_GSS_LIFE", life, 1);
	snprintf(cmd, sizeof(cmd),
		 "echo \"$KRB5_USER_PW\" | timeout 30 kinit -c \"$T_GSS_SHORT_CC\" "
		 "-l \"$T_GSS_LIFE\" \"$KRB5_USER@$KRB5_REALM\" >/dev/null");
	return system(cmd) == 0;
}

/* An ECHO of 100 octets: its status, and the reason of an RPC_AUTHERROR. */
static enum clnt_stat probe(CLIENT *cl, enum auth_stat *why)
{
	struct rpc_err err;
	enum clnt_stat st;
	bool same;

	st = echo(cl, 100, 5, &same);
	clnt_geterr(cl, &err);
	*why = st == RPC_AUTHERROR ? err.re_why : AUTH_OK;
	if (st == RPC_SUCCESS && !same)
		st = RPC_CANTDECODERES;
	return st;
}

/* A CLIENT to netid with a krb5i context made from the ticket in cc. */
static CLIENT *client_with(const char *netid, const char *cc)
{
	char *saved = strdup(env_or("KRB5CCNAME", ""));
	CLIENT *cl = connect_to(netid);
	AUTH *none, *auth;

	if (!cl)
		goto out;
	none = cl->cl_auth;
	setenv("KRB5CCNAME", cc, 1);
	auth = gss_auth(cl, service_name(), RPCSEC_GSS_SVC_INTEGRITY);
	if (!auth) {
		clnt_destroy(cl);
		cl = NULL;
	} else {
		cl->cl_auth = auth;
		AUTH_DESTROY(none);
	}
out:
	if (saved)
		setenv("KRB5CCNAME", saved, 1);
	free(saved);
	return cl;
}

static void client_drop(CLIENT *cl)
{
	if (!cl)
		return;
	AUTH_DESTROY(cl->cl_auth);
	cl->cl_auth = NULL;
	clnt_destroy(cl);
}

#define EXPIRY_LIFE	20 /* seconds: the short ticket's lifetime */
#define EXPIRY_LIFE_STR "20s"

/*
 * Whether the GSS-API context of cl's AUTH has expired
 * (gss_context_time).  authgss_get_private_data gives the context away
 * (as to the kernel in rpc.gssd): the AUTH is of no use after this, and
 * its AUTH_DESTROY sends no RPCSEC_GSS_DESTROY.
 */
static bool context_expired(CLIENT *cl, OM_uint32 *major)
{
	struct authgss_private_data pd;
	OM_uint32 minor, left = 0;

	memset(&pd, 0, sizeof(pd));
	*major = GSS_S_FAILURE;
	if (!authgss_get_private_data(cl->cl_auth, &pd))
		return false;
	*major = gss_context_time(&minor, pd.pd_ctx, &left);
	authgss_free_private_data(&pd);
	return *major == GSS_S_CONTEXT_EXPIRED;
}

/*
 * A krb5i context made from a ticket of EXPIRY_LIFE seconds, one CLIENT
 * per netid, both made at once so that one wait serves both.  It works;
 * once the ticket and the context (MIT Kerberos gives the context the
 * ticket's end) have expired, a new context from that ticket is refused
 * over both, but the next call on the same CLIENT must end as it ends
 * over tcp, measured in the same run.  Measured (Debian 12, libtirpc
 * 1.3.3, MIT Kerberos 1.20): over tcp the call succeeds - neither
 * libtirpc's client and server nor MIT Kerberos's gss_get_mic and
 * gss_verify_mic look at a context's lifetime, so an established context
 * lives as long as its connection - and EXPIRED_STAT says so; the
 * context itself reports GSS_S_CONTEXT_EXPIRED meanwhile.  Then the
 * ticket is renewed in the same cache and a fresh CLIENT works again.
 */
#define EXPIRED_STAT RPC_SUCCESS

static void expiry(void)
{
	static const char *const netids[] = { "tcp", "rdma" };
	const char *cc = getenv("T_GSS_SHORT_CC");
	CLIENT *cl[2] = { NULL, NULL };
	enum clnt_stat st[2];
	enum auth_stat why[2];
	OM_uint32 major;
	int64_t t0, end;
	unsigned int i;

	if (!CHECK_OK(cc && getenv("KRB5_USER_PW"),
		      "expiry: T_GSS_SHORT_CC and KRB5_USER_PW are set"))
		return;
	t0 = tu_now_ms();
	if (!CHECK_OK(short_kinit(EXPIRY_LIFE_STR),
		      "expiry: a ticket of %d s in %s", EXPIRY_LIFE, cc))
		return;
	/* the KDC counts whole seconds from when it issued the ticket: past
	 * this both the ticket and the contexts made from it are expired */
	end = t0 + (EXPIRY_LIFE + 2) * 1000;
	for (i = 0; i < 2; i++) {
		cl[i] = client_with(netids[i], cc);
		st[i] = cl[i] ? probe(cl[i], &why[i]) : RPC_AUTHERROR;
		CHECK(st[i] == RPC_SUCCESS,
		      "expiry: %s krb5i context from the short ticket: ECHO %s",
		      netids[i], cl[i] ? clnt_sperrno(st[i]) : "no context");
	}
	if (!cl[0] || !cl[1])
		goto out;
	if (tu_now_ms() >= end - 2000)
		NOTE("expiry: setting up took %lld ms, close to the ticket's end",
		     (long long)(tu_now_ms() - t0));
	while (tu_now_ms() < end)
		usleep(200000);
	for (i = 0; i < 2; i++) {
		CLIENT *late = client_with(netids[i], cc);

		CHECK(late == NULL,
		      "expiry: %s the ticket has expired: a new context from "
		      "it is refused",
		      netids[i]);
		client_drop(late);
	}
	for (i = 0; i < 2; i++) {
		st[i] = probe(cl[i], &why[i]);
		NOTE("expiry: %s the next call on the expired context: %s (why %d)",
		     netids[i], clnt_sperrno(st[i]), (int)why[i]);
	}
	CHECK(st[1] == st[0] && why[1] == why[0] && st[0] == EXPIRED_STAT,
	      "expiry: the next call on the same CLIENT: rdma %s (why %d) as "
	      "tcp %s (why %d), which is %s",
	      clnt_sperrno(st[1]), (int)why[1], clnt_sperrno(st[0]),
	      (int)why[0], clnt_sperrno(EXPIRED_STAT));
	for (i = 0; i < 2; i++) {
		bool expired = context_expired(cl[i], &major);

		CHECK(expired,
		      "expiry: %s meanwhile the context itself has expired "
		      "(gss_context_time: major 0x%x)",
		      netids[i], (unsigned int)major);
	}

	if (!CHECK_OK(short_kinit("10m"), "expiry: the ticket renewed in %s",
		      cc))
		goto out;
	for (i = 0; i < 2; i++) {
		CLIENT *fresh = client_with(netids[i], cc);
		enum auth_stat fresh_why = AUTH_OK;
		enum clnt_stat fresh_st = fresh ? probe(fresh, &fresh_why) :
						  RPC_AUTHERROR;

		CHECK(fresh && fresh_st == RPC_SUCCESS,
		      "expiry: %s a fresh CLIENT with the renewed ticket: %s",
		      netids[i], fresh ? clnt_sperrno(fresh_st) : "no context");
		client_drop(fresh);
	}
out:
	client_drop(cl[0]);
	client_drop(cl[1]);
}

/*
 * The sequence window: WINDOW_CALLS sequential calls on one krb5i
 * context, many windows' worth, all succeed - each Reply's verifier is
 * the checksum of the call's own sequence number (authgss_validate
 * refuses any other) and the server's window slides with them - and the
 * server granted the same window (rpc_gss_init_res gr_win, as
 * authgss_get_private_data hands it over) over rdma as over tcp.  The
 * window is read after the calls: reading it gives the context away.
 */
#define WINDOW_CALLS 64

static void window(const char *netid, u_int *granted)
{
	struct authgss_private_data pd;
	CLIENT *cl = client_with(netid, env_or("KRB5CCNAME", ""));
	enum clnt_stat st, last = RPC_SUCCESS;
	unsigned int i, ok = 0;
	int64_t t0;
	bool same;

	*granted = 0;
	if (!CHECK_OK(cl != NULL, "window: %s krb5i context", netid))
		return;
	t0 = tu_now_ms();
	for (i = 0; i < WINDOW_CALLS; i++) {
		st = echo(cl, 64, i, &same);
		if (st == RPC_SUCCESS && same)
			ok++;
		else
			last = st;
	}
	memset(&pd, 0, sizeof(pd));
	if (authgss_get_private_data(cl->cl_auth, &pd)) {
		*granted = pd.pd_seq_win;
		authgss_free_private_data(&pd);
	}
	CHECK(ok == WINDOW_CALLS && *granted > 0 && WINDOW_CALLS > 3 * *granted,
	      "window: %s %u sequential krb5i calls on one context, more than "
	      "3 windows of %u: %u answered (last error: %s; %lld ms)",
	      netid, WINDOW_CALLS, *granted, ok, clnt_sperrno(last),
	      (long long)(tu_now_ms() - t0));
	client_drop(cl);
}

/* Expiry and the window, over tcp and rdma in one run. */
static void as_over_tcp(void)
{
	u_int tcp_win = 0, rdma_win = 0;

	expiry();
	window("tcp", &tcp_win);
	window("rdma", &rdma_win);
	CHECK(tcp_win && rdma_win == tcp_win,
	      "window: the server grants the same window over rdma (%u) as "
	      "over tcp (%u)",
	      rdma_win, tcp_win);
}

static int server_start(const char *self, pid_t *pid)
{
	char line[64];
	int fds[2];
	FILE *f;

	if (pipe(fds))
		return -1;
	*pid = fork();
	if (*pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		tu_server_env();
		execl(self, self, "--serve", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	if (!f || !fgets(line, sizeof(line), f) || strcmp(line, "ready\n")) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	return 0;
}

static void server_quit(pid_t pid)
{
	CLIENT *cl = connect_to("tcp");
	int status = -1, arg = 0;

	if (cl) {
		clnt_call(cl, RTEST_SLEEP, (xdrproc_t)xdr_int, (char *)&arg,
			  (xdrproc_t)xdr_void, NULL, call_tv);
		clnt_destroy(cl);
	}
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "the server exited cleanly (status 0x%x)", status);
}

int main(int argc, char **argv)
{
	const char *netids = env_or("T_GSS_NETIDS", "tcp rdma");
	pid_t pid;

	if (argc == 2 && !strcmp(argv[1], "--serve"))
		return serve();
	if (argc == 3 && !strcmp(argv[1], "--fresh"))
		return fresh_client(argv[2]);
	self_path = argv[0];
	if (!getenv("KRB5_KTNAME") || !getenv("KRB5_CONFIG")) {
		printf("SKIP: no Kerberos realm (run through tests/vm/t_gss.sh)\n");
		return 77;
	}
	tu_watchdog(600, "FAIL: t_gss: watchdog", 1);
	signal(SIGPIPE, SIG_IGN);
	if (server_start(argv[0], &pid)) {
		CHECK(false, "the server started");
		return tu_done();
	}
	if (argc == 2 && !strcmp(argv[1], "--tcp-limits")) {
		tcp_limits();
		server_quit(pid);
		return tu_done();
	}
	NOTE("RPCRDMA_VERSION=%s", env_or("RPCRDMA_VERSION", "(auto)"));
	if (strstr(netids, "tcp") && strstr(netids, "rdma"))
		as_over_tcp();
	/* t_gss --as-over-tcp: only those (a short run while working) */
	if (argc == 2 && !strcmp(argv[1], "--as-over-tcp")) {
		server_quit(pid);
		return tu_done();
	}
	if (strstr(netids, "tcp"))
		one_netid("tcp");
	if (strstr(netids, "rdma"))
		one_netid("rdma");
	server_quit(pid);
	return tu_done();
}
