/*
 * rpcrdma-ping.c - rpcrdma-ping(1): NULL calls (procedure 0) to an RPC
 * program over RPC-over-RDMA, each timed with CLOCK_MONOTONIC, as ping(8)
 * times ICMP echoes and rpcinfo -T pings a program once.
 *
 * Owns the command line, the making of the CLIENT (through the rpcbind of
 * HOST with clnt_create_timed() and netid "rdma"/"rdma6", or directly at
 * a given port with clnt_rdma_create()), the probe loop, its statistics
 * and its output.  It uses only the public API: <rpc/rpcrdma.h> and
 * libtirpc, like any program linked "-lrpcrdma -ltirpc".
 *
 * Exit status: 0 if a probe was answered, 1 if none was, 2 on a usage
 * error or when no CLIENT could be made.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "tools/tool_util.h"

#define EXIT_NO_REPLY 1
#define EXIT_USAGE    2

/* xdr_void takes no arguments; the cast through void (*)(void) says so. */
#define XDR_VOID ((xdrproc_t)(void (*)(void))xdr_void)

struct ping_opts {
	int family; /* AF_INET (rdma) or AF_INET6 (rdma6) */
	const char *netid;
	unsigned long count; /* probes to send, 0: until SIGINT */
	double interval_s;   /* between the starts of two probes */
	double wait_s;	     /* -W: every blocking step */
	unsigned int port;   /* -p: 0 asks rpcbind */
	bool quiet;
	const char *version; /* -V as given, NULL if absent */
	enum rpcrdma_version rdma_vers;
	const char *host;
	rpcprog_t prog;
	rpcvers_t vers;
	bool vers_given;
};

struct ping_stats {
	unsigned long sent;
	unsigned long answered;
	double min_ms, max_ms, sum_ms, sum2_ms;
	struct timespec first; /* start of the first probe */
};

/* Set by SIGINT: no new probe is sent, the summary is printed. */
static volatile sig_atomic_t stop;

static void usage(void)
{
	fprintf(stderr,
		"usage: rpcrdma-ping [-6] [-c COUNT] [-i INTERVAL] [-W TIMEOUT] [-p PORT]\n"
		"                    [-q] [-V 1|2|auto] HOST PROG [VERS]\n");
	exit(EXIT_USAGE);
}

static void die_usage(const char *what, const char *arg)
{
	fprintf(stderr, "rpcrdma-ping: %s: %s\n", what, arg);
	usage();
}

/* ---- The command line ---------------------------------------------------- */

/* Decimal, or (base 0) also 0x hexadecimal as program numbers are written. */
static unsigned long parse_ulong(const char *arg, int base, unsigned long max,
				 const char *what)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(arg, &end, base);
	if (errno || end == arg || *end || *arg == '-' || v > max)
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

/* A number, or a name of /etc/rpc (getrpcbyname). */
static rpcprog_t parse_prog(const char *arg)
{
	struct rpcent *ent;

	if (*arg >= '0' && *arg <= '9')
		return (rpcprog_t)parse_ulong(arg, 0, UINT32_MAX,
					      "bad program");
	ent = getrpcbyname(arg);
	if (!ent)
		die_usage("unknown program (not a number, not in /etc/rpc)",
			  arg);
	return (rpcprog_t)ent->r_number;
}

static enum rpcrdma_version parse_rdma_version(const char *arg)
{
	enum rpcrdma_version v = RPCRDMA_VERSION_AUTO;

	if (!tool_parse_rdma_version(arg, &v))
		die_usage("-V takes 1, 2 or auto", arg);
	return v;
}

static void parse_option(struct ping_opts *o, int opt, const char *arg)
{
	switch (opt) {
	case '6':
		o->family = AF_INET6;
		o->netid = "rdma6";
		break;
	case 'c':
		o->count = parse_ulong(arg, 10, ULONG_MAX, "bad count");
		if (!o->count)
			die_usage("bad count", arg);
		break;
	case 'i':
		o->interval_s = parse_seconds(arg, 0, "bad interval");
		break;
	case 'W':
		o->wait_s = parse_seconds(arg, 0.001, "bad timeout");
		break;
	case 'p':
		o->port = (unsigned int)parse_ulong(arg, 10, 65535, "bad port");
		if (!o->port)
			die_usage("bad port", arg);
		break;
	case 'q':
		o->quiet = true;
		break;
	case 'V':
		o->version = arg;
		o->rdma_vers = parse_rdma_version(arg);
		break;
	default:
		usage();
	}
}

static void parse_args(struct ping_opts *o, int argc, char **argv)
{
	int opt;

	*o = (struct ping_opts){
		.family = AF_INET, .netid = "rdma", .interval_s = 1, .wait_s = 5
	};
	while ((opt = getopt(argc, argv, "6c:i:W:p:qV:")) != -1)
		parse_option(o, opt, optarg);
	if (argc - optind < 2 || argc - optind > 3)
		usage();
	o->host = argv[optind];
	o->prog = parse_prog(argv[optind + 1]);
	if (argc - optind == 3) {
		o->vers = (rpcvers_t)parse_ulong(argv[optind + 2], 10,
						 UINT32_MAX, "bad version");
		o->vers_given = true;
	}
}

/* ---- Time ------------------------------------------------------------------ */

static struct timespec now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts;
}

static double ms_between(const struct timespec *from, const struct timespec *to)
{
	return (double)(to->tv_sec - from->tv_sec) * 1e3 +
	       (double)(to->tv_nsec - from->tv_nsec) / 1e6;
}

static struct timespec add_seconds(struct timespec ts, double s)
{
	long long ns = (long long)(s * 1e9) + ts.tv_nsec;

	ts.tv_sec += (time_t)(ns / 1000000000);
	ts.tv_nsec = (long)(ns % 1000000000);
	return ts;
}

/* ---- Making the CLIENT ------------------------------------------------------ */

/*
 * -V: clnt_create() takes no struct rpcrdma_attr, so the version goes
 * through RPCRDMA_VERSION (rpcrdma-versions(7)), which the library reads
 * whenever it makes a CLIENT.  "auto" must be said explicitly too: a
 * caller's RPCRDMA_VERSION=2 would otherwise override an AUTO attribute.
 */
static void apply_rdma_version(const struct ping_opts *o)
{
	if (o->version && setenv("RPCRDMA_VERSION", o->version, 1)) {
		perror("rpcrdma-ping: setenv");
		exit(EXIT_USAGE);
	}
}

/*
 * Without -p the library asks the rpcbind of HOST (RPCBPROC_DUMP) for the
 * program on the netid, version vers preferred, any accepted; -W bounds
 * the rpcbind exchange and the RDMA connection, each.
 */
static CLIENT *create_client(const struct ping_opts *o)
{
	const struct tool_target t = {
		.host = o->host,
		.family = o->family,
		.netid = o->netid,
		.port = o->port,
		.prog = o->prog,
		.vers = o->vers,
		.wait_s = o->wait_s,
		.version_given = o->version != NULL,
		.rdma_vers = o->rdma_vers,
	};

	return tool_connect(&t);
}

/*
 * clnt_spcreateerror's text (with the library's words on a missing RDMA
 * device), how long the attempt took (a timeout shows as -W), and a hint
 * when the program is not registered.
 */
static void report_create_failure(const struct ping_opts *o, double ms)
{
	char after[48];

	snprintf(after, sizeof(after), " (after %.0f ms)", ms);
	tool_create_failed("rpcrdma-ping", o->host, after);
	if (rpc_createerr.cf_stat == RPC_PROGNOTREGISTERED)
		fprintf(stderr,
			"rpcrdma-ping: hint: program %lu is not registered on %s with the rpcbind of %s; give its port with -p\n",
			(unsigned long)o->prog, o->netid, o->host);
}

/*
 * No VERS: as rpcinfo(8) does, one NULL call to version 0 (which no
 * program serves) makes the server name its versions in PROG_MISMATCH;
 * the probes use the highest.  Returns false with the error printed.
 */
static bool learn_version(CLIENT *cl, struct ping_opts *o)
{
	struct timeval tv = tool_timeval(o->wait_s);
	struct rpc_err err;
	enum clnt_stat st;

	st = clnt_call(cl, NULLPROC, XDR_VOID, NULL, XDR_VOID, NULL, tv);
	if (st == RPC_SUCCESS)
		return true; /* it does serve version 0 */
	clnt_geterr(cl, &err);
	if (st != RPC_PROGVERSMISMATCH) {
		fprintf(stderr, "rpcrdma-ping: %s\n",
			tool_chomp(
				clnt_sperror(cl, "asking for the versions")));
		return false;
	}
	o->vers = (rpcvers_t)err.re_vers.high;
	clnt_control(cl, CLSET_VERS, (char *)&o->vers);
	printf("program %lu serves versions %lu to %lu: probing version %lu\n",
	       (unsigned long)o->prog, (unsigned long)err.re_vers.low,
	       (unsigned long)err.re_vers.high, (unsigned long)o->vers);
	return true;
}

/* ---- Probes --------------------------------------------------------------- */

static void count_reply(struct ping_stats *s, double ms)
{
	if (!s->answered || ms < s->min_ms)
		s->min_ms = ms;
	if (!s->answered || ms > s->max_ms)
		s->max_ms = ms;
	s->answered++;
	s->sum_ms += ms;
	s->sum2_ms += ms * ms;
}

/* The RPC error of a failed probe, with the transport's reason if any. */
static void print_failure(CLIENT *cl, const char *prefix, enum clnt_stat st)
{
	char why[RPCRDMA_ERRMSG_LEN] = "";

	printf("%s", tool_chomp(clnt_sperror(cl, prefix)));
	if ((st == RPC_CANTSEND || st == RPC_CANTRECV ||
	     st == RPC_SYSTEMERROR) &&
	    clnt_control(cl, CLGET_RDMA_ERRMSG, why) && why[0])
		printf(" (%s)", why);
	printf("\n");
}

static void probe(CLIENT *cl, const struct ping_opts *o, const char *peer,
		  struct ping_stats *s)
{
	struct timeval tv = tool_timeval(o->wait_s);
	unsigned int rdma_vers = 0;
	struct timespec t0, t1;
	enum clnt_stat st;
	char prefix[NI_MAXHOST + 128];
	double ms;

	t0 = now();
	if (!s->sent)
		s->first = t0;
	s->sent++;
	st = clnt_call(cl, NULLPROC, XDR_VOID, NULL, XDR_VOID, NULL, tv);
	t1 = now();
	ms = ms_between(&t0, &t1);
	if (st != RPC_SUCCESS) {
		if (o->quiet)
			return;
		snprintf(prefix, sizeof(prefix),
			 "NULL to %s prog %lu vers %lu (%s): seq=%lu", peer,
			 (unsigned long)o->prog, (unsigned long)o->vers,
			 o->netid, s->sent);
		print_failure(cl, prefix, st);
		return;
	}
	count_reply(s, ms);
	if (o->quiet)
		return;
	clnt_control(cl, CLGET_RDMA_VERSION, (char *)&rdma_vers);
	printf("NULL from %s prog %lu vers %lu (%s v%u): seq=%lu time=%.3f ms\n",
	       peer, (unsigned long)o->prog, (unsigned long)o->vers, o->netid,
	       rdma_vers, s->sent, ms);
}

/* Until the start of the next probe, or SIGINT. */
static void wait_until(const struct timespec *when)
{
	while (!stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, when,
					NULL) == EINTR)
		;
}

static void summary(const struct ping_opts *o, const char *peer,
		    const struct ping_stats *s)
{
	struct timespec end = now();
	double avg, mdev;

	printf("--- %s prog %lu vers %lu rpcrdma-ping statistics ---\n", peer,
	       (unsigned long)o->prog, (unsigned long)o->vers);
	printf("%lu probes sent, %lu answered, %lu%% lost, time %.0f ms\n",
	       s->sent, s->answered,
	       s->sent ? (s->sent - s->answered) * 100 / s->sent : 0,
	       s->sent ? ms_between(&s->first, &end) : 0.0);
	if (!s->answered)
		return;
	avg = s->sum_ms / (double)s->answered;
	mdev = sqrt(fmax(0, s->sum2_ms / (double)s->answered - avg * avg));
	printf("rtt min/avg/max/mdev = %.3f/%.3f/%.3f/%.3f ms\n", s->min_ms,
	       avg, s->max_ms, mdev);
}

static void on_sigint(int sig)
{
	(void)sig;
	stop = 1;
}

/*
 * SIGINT ends the run with the summary.  A probe in flight is not cut
 * short (the library waits out its timeout across signals); a second
 * SIGINT kills at once.
 */
static void catch_sigint(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
}

static void ping_loop(CLIENT *cl, const struct ping_opts *o, const char *peer,
		      struct ping_stats *s)
{
	struct timespec next;

	while (!stop && (!o->count || s->sent < o->count)) {
		next = add_seconds(now(), o->interval_s);
		probe(cl, o, peer, s);
		fflush(stdout);
		if (o->count && s->sent >= o->count)
			break;
		wait_until(&next);
	}
}

int main(int argc, char **argv)
{
	struct ping_stats stats = { 0 };
	struct timespec t0, t1;
	struct ping_opts opts;
	char peer[NI_MAXHOST];
	unsigned int port;
	CLIENT *cl;

	parse_args(&opts, argc, argv);
	apply_rdma_version(&opts);
	catch_sigint();
	t0 = now();
	cl = create_client(&opts);
	t1 = now();
	if (!cl) {
		report_create_failure(&opts, ms_between(&t0, &t1));
		return EXIT_USAGE;
	}
	tool_peer_text(cl, peer, sizeof(peer), &port);
	printf("connected to %s (%s) port %u over %s in %.3f ms\n", opts.host,
	       peer, port, opts.netid, ms_between(&t0, &t1));
	if (!opts.vers_given && !learn_version(cl, &opts)) {
		clnt_destroy(cl);
		return EXIT_USAGE;
	}
	fflush(stdout);
	ping_loop(cl, &opts, peer, &stats);
	summary(&opts, peer, &stats);
	clnt_destroy(cl);
	return stats.answered ? EXIT_SUCCESS : EXIT_NO_REPLY;
}
