/*
 * rpcrdma-bench.c - rpcrdma-bench(1): the RDMA benchmark, installed for
 * real HCAs on two machines.  A server (-s) serves the benchmark's RPC
 * program (tests/bench/rbench.x) over netids rdma and rdma6, at a port or
 * registered with rpcbind; a client (HOST) times NULL round trips, ECHO
 * calls per second and the goodput of WRITE calls (data in Read chunks)
 * and READ calls (data in Write chunks) against it, checks the data, and
 * prints the figures with the counters of both sides that show how the
 * data moved, as text or as JSON.
 *
 * Owns the command line, the listeners and the CLIENT, the watchdog and
 * the output.  The measurements are tests/bench/rbench_run.c's: the code
 * "make bench-rdma" runs in the Soft-RoCE VM.  Uses only the public API.
 *
 * Exit status: 0 when every test ran and its data was right, 1 when a test
 * failed, 2 on a usage error or when no CLIENT or listener could be made.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "tests/bench/rbench_run.h"
#include "tests/vm/t_sig_xprt.h"
#include "tools/tool_util.h"

#define EXIT_TEST_FAILED 1
#define EXIT_USAGE	 2

#define DEFAULT_DURATION_S 2.0
#define DEFAULT_TIMEOUT_S  10.0
#define DEFAULT_SIZE	   1048576
#define WATCHDOG_SLACK_S   30

enum test {
	T_NULL,
	T_ECHO,
	T_WRITE,
	T_READ,
	T_COUNT
};

static const char *const test_names[T_COUNT] = { "null", "echo", "write",
						 "read" };

struct bench_opts {
	bool server;
	int family;	   /* AF_UNSPEC: both (server), else the netid's */
	const char *addr;  /* -a: where the server listens */
	unsigned int port; /* -p: 0 goes through rpcbind */
	const char *host;  /* the client's server */
	enum test tests[T_COUNT];
	unsigned int ntests;
	size_t size;	      /* WRITE and READ data */
	unsigned int threads; /* ECHO, WRITE, READ */
	double duration_s;    /* 0 with -c */
	unsigned long calls;  /* -c, else 0 */
	double timeout_s;
	const char *version; /* -V as given */
	enum rpcrdma_version rdma_vers;
	bool poll;
	bool json;
	bool verify_all;
	bool given[128]; /* options given, by their letter */
};

/* ---- The command line ---------------------------------------------------- */

static void usage_to(FILE *f)
{
	fprintf(f,
		"usage: rpcrdma-bench -s [-6|--netid rdma|rdma6] [-a ADDR] [-p PORT] [-d SECONDS]\n"
		"                        [-V 1|2|auto]\n"
		"       rpcrdma-bench [-6|--netid rdma|rdma6] [-p PORT] [-t TEST[,TEST...]]\n"
		"                     [--size N[k|m]] [--threads N] [-d SECONDS | -c CALLS]\n"
		"                     [-W TIMEOUT] [-V 1|2|auto] [--poll] [--verify-all] [--json] HOST\n"
		"       TEST: null, echo, write, read (default: all four)\n");
}

static void usage(void)
{
	usage_to(stderr);
	exit(EXIT_USAGE);
}

static void die_usage(const char *what, const char *arg)
{
	fprintf(stderr, "rpcrdma-bench: %s: %s\n", what, arg);
	usage();
}

static unsigned long parse_ulong(const char *arg, unsigned long min,
				 unsigned long max, const char *what)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || *arg == '-' || v < min || v > max)
		die_usage(what, arg);
	return v;
}

/* Seconds, fractions allowed; at least min_s, at most a day. */
static double parse_seconds(const char *arg, double min_s, const char *what)
{
	double v;

	if (!tool_parse_seconds(arg, min_s, &v))
		die_usage(what, arg);
	return v;
}

/* Octets, with k (KiB) or m (MiB); 1 to RB_MAXDATA. */
static size_t parse_size(const char *arg)
{
	unsigned long long v, mul = 1;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (*end == 'k' || *end == 'K')
		mul = 1024;
	else if (*end == 'm' || *end == 'M')
		mul = 1048576;
	if (mul != 1)
		end++;
	if (errno || end == arg || *end || *arg == '-' || !v ||
	    v > RB_MAXDATA / mul)
		die_usage("bad size (1 to 16m octets)", arg);
	return (size_t)(v * mul);
}

static void parse_tests(struct bench_opts *o, const char *arg)
{
	char *list = strdup(arg), *save = NULL, *t;
	unsigned int i;

	if (!list) {
		perror("rpcrdma-bench");
		exit(EXIT_USAGE);
	}
	o->ntests = 0;
	for (t = strtok_r(list, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < T_COUNT && strcmp(t, test_names[i]); i++)
			;
		if (i == T_COUNT)
			die_usage("unknown test (null, echo, write, read)", t);
		for (unsigned int j = 0; j < o->ntests; j++)
			if (o->tests[j] == (enum test)i)
				die_usage("test listed twice", t);
		o->tests[o->ntests++] = (enum test)i;
	}
	free(list);
	if (!o->ntests)
		die_usage("no test named", arg);
}

static void parse_netid(struct bench_opts *o, const char *arg)
{
	if (!strcmp(arg, "rdma"))
		o->family = AF_INET;
	else if (!strcmp(arg, "rdma6"))
		o->family = AF_INET6;
	else
		die_usage("--netid takes rdma or rdma6", arg);
}

static enum rpcrdma_version parse_rdma_version(const char *arg)
{
	enum rpcrdma_version v = RPCRDMA_VERSION_AUTO;

	if (!tool_parse_rdma_version(arg, &v))
		die_usage("-V takes 1, 2 or auto", arg);
	return v;
}

/* Long options without a short one get a letter of their own. */
enum {
	OPT_NETID = 'N',
	OPT_SIZE = 'S',
	OPT_THREADS = 'T',
	OPT_POLL = 'P',
	OPT_JSON = 'J',
	OPT_VERIFY_ALL = 'A'
};

static const struct option long_opts[] = {
	{ "server", no_argument, NULL, 's' },
	{ "addr", required_argument, NULL, 'a' },
	{ "port", required_argument, NULL, 'p' },
	{ "netid", required_argument, NULL, OPT_NETID },
	{ "test", required_argument, NULL, 't' },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "duration", required_argument, NULL, 'd' },
	{ "calls", required_argument, NULL, 'c' },
	{ "timeout", required_argument, NULL, 'W' },
	{ "rdma-version", required_argument, NULL, 'V' },
	{ "poll", no_argument, NULL, OPT_POLL },
	{ "verify-all", no_argument, NULL, OPT_VERIFY_ALL },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Option c as the user would write it. */
static const char *opt_name(int c)
{
	static char buf[32];

	for (const struct option *l = long_opts; l->name; l++)
		if (l->val == c) {
			snprintf(buf, sizeof(buf), "--%s", l->name);
			return buf;
		}
	snprintf(buf, sizeof(buf), "-%c", c);
	return buf;
}

static void parse_option(struct bench_opts *o, int c, const char *arg)
{
	switch (c) {
	case 's':
		o->server = true;
		break;
	case 'a':
		o->addr = arg;
		break;
	case 'p':
		o->port = (unsigned int)parse_ulong(arg, 1, 65535, "bad port");
		break;
	case '6':
		o->family = AF_INET6;
		break;
	case OPT_NETID:
		parse_netid(o, arg);
		break;
	case 't':
		parse_tests(o, arg);
		break;
	case OPT_SIZE:
		o->size = parse_size(arg);
		break;
	case OPT_THREADS:
		o->threads = (unsigned int)
			parse_ulong(arg, 1, RB_MAX_THREADS,
				    "bad thread count (1 to 256)");
		break;
	case 'd':
		o->duration_s = parse_seconds(arg, 0.001, "bad duration");
		break;
	case 'c':
		o->calls = parse_ulong(arg, 1, ULONG_MAX, "bad call count");
		break;
	case 'W':
		o->timeout_s = parse_seconds(arg, 0.001, "bad timeout");
		break;
	case 'V':
		o->version = arg;
		o->rdma_vers = parse_rdma_version(arg);
		break;
	case OPT_POLL:
		o->poll = true;
		break;
	case OPT_VERIFY_ALL:
		o->verify_all = true;
		break;
	case OPT_JSON:
		o->json = true;
		break;
	case 'h':
		usage_to(stdout);
		exit(0);
	default:
		usage();
	}
	if (c > 0 && c < 128)
		o->given[c] = true;
}

/* Options that make no sense in the mode chosen are errors, not ignored. */
static void check_mode(const struct bench_opts *o, int argc, char **argv)
{
	static const char server_only[] = "a";
	static const char client_only[] = "tSTcWPAJ";
	const char *p, *why;

	why = o->server ? "an option of the client, not of the server (-s)" :
			  "an option of the server (-s) only";
	for (p = o->server ? client_only : server_only; *p; p++)
		if (o->given[(unsigned char)*p])
			die_usage(why, opt_name(*p));
	if (o->given['d'] && o->given['c']) {
		fprintf(stderr,
			"rpcrdma-bench: -d and -c exclude each other\n");
		usage();
	}
	if (o->server && optind != argc)
		die_usage("the server takes no HOST", argv[optind]);
	if (!o->server && argc - optind != 1) {
		fprintf(stderr, "rpcrdma-bench: %s\n",
			argc == optind ? "no HOST given (or -s for a server)" :
					 "one HOST only");
		usage();
	}
}

static void parse_args(struct bench_opts *o, int argc, char **argv)
{
	int c;

	*o = (struct bench_opts){ .family = AF_UNSPEC,
				  .size = DEFAULT_SIZE,
				  .threads = 1,
				  .duration_s = DEFAULT_DURATION_S,
				  .timeout_s = DEFAULT_TIMEOUT_S,
				  .ntests = T_COUNT,
				  .tests = { T_NULL, T_ECHO, T_WRITE,
					     T_READ } };
	while ((c = getopt_long(argc, argv, "sa:p:6t:d:c:W:V:h", long_opts,
				NULL)) != -1)
		parse_option(o, c, optarg);
	check_mode(o, argc, argv);
	if (o->calls)
		o->duration_s = 0;
	if (o->addr) {
		int f = strchr(o->addr, ':') ? AF_INET6 : AF_INET;

		if (o->family != AF_UNSPEC && o->family != f)
			die_usage("the address is not of the netid's family",
				  o->addr);
		o->family = f;
	}
	if (!o->server) {
		o->host = argv[optind];
		if (o->family == AF_UNSPEC)
			o->family = AF_INET;
	}
}

static const char *netid_of(int family)
{
	return family == AF_INET6 ? "rdma6" : "rdma";
}

/*
 * -V and --poll go through the environment the library reads whenever it
 * makes a CLIENT or a listener (rpcrdma-environ(7)): clnt_create() takes
 * no struct rpcrdma_attr, and the variables override the attribute of
 * clnt_rdma_create().  On a server -V says which versions it speaks.
 */
static void apply_env(const struct bench_opts *o)
{
	if ((o->version && setenv("RPCRDMA_VERSION", o->version, 1)) ||
	    (o->poll && setenv("RPCRDMA_COMP_MODE", "poll", 1))) {
		perror("rpcrdma-bench: setenv");
		exit(EXIT_USAGE);
	}
}

/* ---- Server ------------------------------------------------------------------ */

struct listener {
	const char *netid;
	SVCXPRT *x;
	bool registered; /* with rpcbind: unset at the end */
};

/* SIGALRM at the end of -d: the same way out as SIGTERM (t_sig_xprt). */
static void on_lifetime(int sig)
{
	(void)sig;
	kill(getpid(), SIGTERM);
}

static bool rpcbind_set(struct listener *l)
{
	struct netconfig *nc = getnetconfigent(l->netid);
	bool ok = false;

	if (nc) {
		rpcb_unset(RBENCH_PROG, RBENCH_VERS, nc);
		ok = rpcb_set(RBENCH_PROG, RBENCH_VERS, nc, &l->x->xp_ltaddr);
		freenetconfigent(nc);
	}
	if (!ok)
		fprintf(stderr,
			"rpcrdma-bench: cannot register with rpcbind over %s (%s): is rpcbind running? Or give the port with -p\n",
			l->netid, tool_chomp(clnt_spcreateerror("rpcb_set")));
	l->registered = ok;
	return ok;
}

static bool listen_on(const struct bench_opts *o, int family,
		      struct listener *l)
{
	struct addrinfo hints = { .ai_family = family,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICHOST |
					      AI_NUMERICSERV };
	struct addrinfo *res;
	char port[12], host[NI_MAXHOST];
	unsigned int lport;
	int rc;

	l->netid = netid_of(family);
	snprintf(port, sizeof(port), "%u", o->port);
	rc = getaddrinfo(o->addr, port, &hints, &res);
	if (rc) {
		fprintf(stderr, "rpcrdma-bench: bad address %s: %s\n",
			o->addr ? o->addr : "(wildcard)", gai_strerror(rc));
		return false;
	}
	l->x = svc_rdma_create(res->ai_addr, NULL);
	freeaddrinfo(res);
	if (!l->x) {
		fprintf(stderr, "rpcrdma-bench: cannot listen over %s%s%s\n",
			l->netid, o->addr ? " on " : "",
			o->addr ? o->addr : "");
		return false;
	}
	if (!svc_reg(l->x, RBENCH_PROG, RBENCH_VERS, rbench_prog_1, NULL) ||
	    (!o->port && !rpcbind_set(l))) {
		svc_destroy(l->x);
		l->x = NULL;
		return false;
	}
	tool_addr_text(l->x->xp_ltaddr.buf, l->x->xp_ltaddr.len, host,
		       sizeof(host), &lport);
	printf("rpcrdma-bench: listening over %s on %s port %u%s\n", l->netid,
	       host, lport, l->registered ? ", registered with rpcbind" : "");
	return true;
}

/* What the server did over one listener, as its counters say. */
static void server_summary(const struct listener *l)
{
	struct rpcrdma_svc_stats st;

	memset(&st, 0, sizeof(st));
	if (!SVC_CONTROL(l->x, SVCGET_RDMA_STATS, &st))
		return;
	printf("rpcrdma-bench: %s: %llu calls, %u connection(s); read_chunks %llu (%llu octets pulled by RDMA Read), write_chunks %llu (%llu octets pushed by RDMA Write), reply_chunks %llu, ddp_copies %llu\n",
	       l->netid, (unsigned long long)st.requests, st.conns_accepted,
	       (unsigned long long)st.read_chunks,
	       (unsigned long long)st.read_bytes,
	       (unsigned long long)st.write_chunks,
	       (unsigned long long)st.write_bytes,
	       (unsigned long long)st.reply_chunks,
	       (unsigned long long)st.ddp_copies);
}

static void server_stop(struct listener *l)
{
	struct netconfig *nc;

	if (!l->x)
		return;
	if (l->registered) {
		nc = getnetconfigent(l->netid);
		if (nc) {
			rpcb_unset(RBENCH_PROG, RBENCH_VERS, nc);
			freenetconfigent(nc);
		}
	}
	svc_destroy(l->x);
}

/*
 * Without -a, --netid or -6 both netids; one of them failing is only a
 * note then (a host may have no IPv6 on its RDMA ports).
 */
static int serve(const struct bench_opts *o)
{
	struct listener ls[2] = { { 0 } };
	char err[RB_ERRLEN];
	SVCXPRT *sig;
	int n = 0, i;

	apply_env(o);
	if (!rb_ulb_load(err, sizeof(err))) {
		fprintf(stderr, "rpcrdma-bench: %s\n", err);
		return EXIT_USAGE;
	}
	rb_srv_set_rdma(true);
	signal(SIGPIPE, SIG_IGN);
	sig = t_sig_xprt();
	if (!sig) {
		perror("rpcrdma-bench: signalfd");
		return EXIT_USAGE;
	}
	if (o->family != AF_INET6)
		n += listen_on(o, AF_INET, &ls[0]);
	if (o->family != AF_INET)
		n += listen_on(o, AF_INET6, &ls[1]);
	if (!n) {
		for (i = 0; i < 2; i++)
			server_stop(&ls[i]);
		svc_destroy(sig);
		return EXIT_USAGE;
	}
	if (o->given['d']) {
		signal(SIGALRM, on_lifetime);
		alarm((unsigned int)ceil(o->duration_s));
	}
	fflush(stdout);
	svc_run();
	for (i = 0; i < 2; i++)
		if (ls[i].x)
			server_summary(&ls[i]);
	for (i = 0; i < 2; i++)
		server_stop(&ls[i]);
	svc_destroy(sig);
	return 0;
}

/* ---- Client: the CLIENT ---------------------------------------------------- */

static CLIENT *create_client(const struct bench_opts *o)
{
	const struct tool_target t = {
		.host = o->host,
		.family = o->family,
		.netid = netid_of(o->family),
		.port = o->port,
		.prog = RBENCH_PROG,
		.vers = RBENCH_VERS,
		.wait_s = o->timeout_s,
		.version_given = o->version != NULL,
		.rdma_vers = o->rdma_vers,
		.poll = o->poll,
	};
	struct timeval tv = tool_timeval(o->timeout_s);
	CLIENT *cl = tool_connect(&t);

	if (cl)
		clnt_control(cl, CLSET_TIMEOUT, (char *)&tv);
	return cl;
}

/* clnt_spcreateerror's text (with the library's words on a missing RDMA
 * device), and a hint when no server is registered. */
static void report_create_failure(const struct bench_opts *o)
{
	tool_create_failed("rpcrdma-bench", o->host, "");
	if (rpc_createerr.cf_stat == RPC_PROGNOTREGISTERED)
		fprintf(stderr,
			"rpcrdma-bench: hint: no rpcrdma-bench server is registered on %s with the rpcbind of %s: start 'rpcrdma-bench -s' there, or give its port with -p\n",
			netid_of(o->family), o->host);
}

/* ---- Client: the watchdog ------------------------------------------------- */

static char watchdog_msg[160];

static void on_watchdog(int sig)
{
	ssize_t rc;

	(void)sig;
	rc = write(STDERR_FILENO, watchdog_msg, strlen(watchdog_msg));
	(void)rc;
	_exit(EXIT_TEST_FAILED);
}

/*
 * Every call has its timeout (-W); on time (-d), a test that still runs
 * long after its duration is also given up, in case something below
 * forgets its own.  By count (-c) the calls' timeouts are the bound.
 */
static void watchdog_arm(const struct bench_opts *o, enum test t)
{
	unsigned int s;

	if (!o->duration_s)
		return;
	s = (unsigned int)ceil(o->duration_s + 2 * o->timeout_s) +
	    WATCHDOG_SLACK_S;
	snprintf(watchdog_msg, sizeof(watchdog_msg),
		 "rpcrdma-bench: test %s did not end within %u s: given up\n",
		 test_names[t], s);
	signal(SIGALRM, on_watchdog);
	alarm(s);
}

/* ---- Client: output ------------------------------------------------------- */

struct outcome {
	enum test test;
	bool ok;
	struct rb_result res;
	char err[RB_ERRLEN];
};

static double mib_per_s(const struct bench_opts *o, const struct rb_result *r)
{
	return (double)r->calls * (double)o->size / r->seconds / 1048576.0;
}

static void text_counters(const struct rb_result *r)
{
	const struct rpcrdma_clnt_stats *c = &r->clnt;

	printf("       client: calls %llu, read_chunks %llu (%llu octets), write_chunks %llu (%llu octets), reply_chunks %llu, long_calls %llu, ddp_zero_copies %llu, ddp_copies %llu\n",
	       (unsigned long long)c->calls, (unsigned long long)c->read_chunks,
	       (unsigned long long)c->read_bytes,
	       (unsigned long long)c->write_chunks,
	       (unsigned long long)c->write_bytes,
	       (unsigned long long)c->reply_chunks,
	       (unsigned long long)c->long_calls,
	       (unsigned long long)c->ddp_zero_copies,
	       (unsigned long long)c->ddp_copies);
	printf("       server: calls %llu, read_chunks %llu (RDMA Read), write_chunks %llu (RDMA Write), ddp_copies %llu\n",
	       (unsigned long long)r->srv.requests,
	       (unsigned long long)r->srv.read_chunks,
	       (unsigned long long)r->srv.write_chunks,
	       (unsigned long long)r->srv.ddp_copies);
}

static void text_outcome(const struct bench_opts *o, const struct outcome *t)
{
	const struct rb_result *r = &t->res;
	const char *name = test_names[t->test];

	if (!t->ok) {
		printf("%-6s FAILED: %s\n", name, t->err);
		return;
	}
	if (t->test == T_NULL) {
		printf("%-6s %lu calls in %.2f s, %.0f calls/s: round trip median %.1f us, p99 %.1f us, mean %.1f us\n",
		       name, r->calls, r->seconds,
		       (double)r->calls / r->seconds, r->median_us, r->p99_us,
		       r->mean_us);
		printf("       cpu per call: client %.2f us, server %.2f us\n",
		       r->cli_cpu_us, r->srv_cpu_us);
	} else {
		size_t size = t->test == T_ECHO ? RB_ECHO_SIZE : o->size;

		printf("%-6s %zu octets x %u thread(s): ", name, size,
		       o->threads);
		if (t->test != T_ECHO)
			printf("%.2f MiB/s, ", mib_per_s(o, r));
		printf("%.0f calls/s (%lu calls in %.2f s); data checked in %lu calls\n",
		       (double)r->calls / r->seconds, r->calls, r->seconds,
		       r->checked);
	}
	text_counters(r);
	if (t->test == T_WRITE && !r->clnt.read_chunks)
		printf("       note: no Read chunk: the WRITE data went inline\n");
	if (t->test == T_READ && !r->clnt.write_chunks)
		printf("       note: no Write chunk: the READ data came inline\n");
}

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static void json_counters(const struct rb_result *r)
{
	const struct rpcrdma_clnt_stats *c = &r->clnt;
	const char *sep = "";

	printf(", \"client\": {");
#define X(f)                                                         \
	printf("%s\"%s\": %llu", sep, #f, (unsigned long long)c->f); \
	sep = ", ";
	RB_CLNT_COUNTERS(X)
#undef X
	printf("}, \"server\": {\"calls\": %llu, \"read_chunks\": %llu, \"write_chunks\": %llu, \"ddp_copies\": %llu}",
	       (unsigned long long)r->srv.requests,
	       (unsigned long long)r->srv.read_chunks,
	       (unsigned long long)r->srv.write_chunks,
	       (unsigned long long)r->srv.ddp_copies);
}

static void json_outcome(const struct bench_opts *o, const struct outcome *t)
{
	const struct rb_result *r = &t->res;

	printf("{\"test\": \"%s\", \"ok\": %s", test_names[t->test],
	       t->ok ? "true" : "false");
	if (!t->ok) {
		printf(", \"error\": ");
		json_string(t->err);
		printf("}");
		return;
	}
	printf(", \"calls\": %lu, \"seconds\": %.6f, \"calls_per_s\": %.1f",
	       r->calls, r->seconds, (double)r->calls / r->seconds);
	if (t->test == T_NULL)
		printf(", \"median_us\": %.2f, \"p99_us\": %.2f, \"mean_us\": %.2f, \"client_cpu_us\": %.3f, \"server_cpu_us\": %.3f",
		       r->median_us, r->p99_us, r->mean_us, r->cli_cpu_us,
		       r->srv_cpu_us);
	else
		printf(", \"size\": %zu, \"threads\": %u, \"checked_calls\": %lu",
		       t->test == T_ECHO ? (size_t)RB_ECHO_SIZE : o->size,
		       o->threads, r->checked);
	if (t->test == T_WRITE || t->test == T_READ)
		printf(", \"MiB_per_s\": %.3f", mib_per_s(o, r));
	printf(", \"rdma_version\": %u", r->rdma_version);
	json_counters(r);
	printf("}");
}

static void json_report(const struct bench_opts *o, const char *peer,
			unsigned int port, unsigned int version,
			const struct outcome *t, unsigned int n,
			unsigned int failed)
{
	printf("{\"host\": ");
	json_string(o->host);
	printf(", \"address\": ");
	json_string(peer);
	printf(", \"port\": %u, \"netid\": \"%s\", \"rdma_version\": %u, \"completion\": \"%s\", \"timeout_s\": %.3f",
	       port, netid_of(o->family), version, o->poll ? "poll" : "default",
	       o->timeout_s);
	if (o->calls)
		printf(", \"calls_per_test\": %lu", o->calls);
	else
		printf(", \"duration_s\": %.3f", o->duration_s);
	printf(", \"verify_all\": %s, \"tests\": [",
	       o->verify_all ? "true" : "false");
	for (unsigned int i = 0; i < n; i++) {
		if (i)
			printf(", ");
		json_outcome(o, &t[i]);
	}
	printf("], \"failed\": %u}\n", failed);
}

/* ---- Client: the tests ------------------------------------------------------ */

static void run_test(const struct bench_opts *o, CLIENT *cl, struct outcome *t)
{
	static const enum rb_kind kinds[T_COUNT] = {
		[T_ECHO] = RB_ECHO_CALLS,
		[T_WRITE] = RB_WRITE_CALLS,
		[T_READ] = RB_READ_CALLS,
	};
	struct rb_run r;

	memset(&r, 0, sizeof(r));
	r.cl = cl;
	r.rdma = true;
	r.calls = o->calls;
	r.seconds = o->duration_s;
	r.threads = o->threads;
	r.size = t->test == T_ECHO ? RB_ECHO_SIZE : o->size;
	r.check_all = o->verify_all;
	watchdog_arm(o, t->test);
	t->ok = t->test == T_NULL ? rb_lat(&r) : rb_bulk(&r, kinds[t->test]);
	alarm(0);
	rb_run_free(&r);
	t->res = r.res;
	memcpy(t->err, r.err, sizeof(t->err));
}

static int client(const struct bench_opts *o)
{
	struct outcome out[T_COUNT];
	char peer[NI_MAXHOST], err[RB_ERRLEN];
	unsigned int port, version = 0, failed = 0, i;
	CLIENT *cl;

	/* the environment first: the library may read it only once */
	apply_env(o);
	if (!rb_ulb_load(err, sizeof(err))) {
		fprintf(stderr, "rpcrdma-bench: %s\n", err);
		return EXIT_USAGE;
	}
	signal(SIGPIPE, SIG_IGN);
	cl = create_client(o);
	if (!cl) {
		report_create_failure(o);
		return EXIT_USAGE;
	}
	tool_peer_text(cl, peer, sizeof(peer), &port);
	/* one call first: the server answers, and the version is known */
	if (!rb_null(cl, true, err, sizeof(err))) {
		fprintf(stderr, "rpcrdma-bench: %s port %u: %s\n", peer, port,
			err);
		clnt_destroy(cl);
		return EXIT_USAGE;
	}
	clnt_control(cl, CLGET_RDMA_VERSION, (char *)&version);
	if (!o->json) {
		printf("rpcrdma-bench: %s (%s) port %u over %s, RPC-over-RDMA version %u; ",
		       o->host, peer, port, netid_of(o->family), version);
		if (o->calls)
			printf("%lu calls a test\n", o->calls);
		else
			printf("%g s a test\n", o->duration_s);
		fflush(stdout);
	}
	for (i = 0; i < o->ntests; i++) {
		out[i].test = o->tests[i];
		run_test(o, cl, &out[i]);
		failed += !out[i].ok;
		if (!o->json) {
			text_outcome(o, &out[i]);
			fflush(stdout);
		}
	}
	if (o->json)
		json_report(o, peer, port, version, out, o->ntests, failed);
	else if (failed)
		printf("rpcrdma-bench: %u of %u test(s) failed\n", failed,
		       o->ntests);
	else
		printf("rpcrdma-bench: %u test(s) passed\n", o->ntests);
	clnt_destroy(cl);
	return failed ? EXIT_TEST_FAILED : 0;
}

int main(int argc, char **argv)
{
	struct bench_opts o;

	parse_args(&o, argc, argv);
	return o.server ? serve(&o) : client(&o);
}
