/*
 * rbench.c - the program of the VM driver of the RDMA benchmark
 * (tests/bench/rbench.sh, "make bench-rdma"): the engine that the installed
 * rpcrdma-bench(1) runs (tests/bench/rbench_run.c), behind the command line
 * and the output the driver parses.  One rpcgen program
 * (tests/bench/rbench.x) served and called over netid "rdma" with
 * svc_rdma_create()/clnt_rdma_create(), and over libtirpc's own "tcp" with
 * svc_vc_create()/clnt_tli_create() on sockets it binds and connects itself
 * (no rpcbind either way: the client is given the server's address and
 * port).  The tcp runs also work with rsockets preloaded
 * (librspreload.so): see getsockopt() and the notes at the socket calls.
 *
 *   rbench server -n rdma|tcp -a ADDR -p PORT [--lifetime SECONDS] [--callgrind]
 *   rbench client -n rdma|tcp -a ADDR -p PORT [--comp event|poll] TEST ...
 *
 * TEST is one of
 *   lat   -N CALLS [-s SECONDS]
 *                           NULL round trips: median, p99, and CPU time per
 *                           call on both sides (getrusage; the server's
 *                           comes from its RB_STATS procedure); -s stops
 *                           early, after 100 calls at least
 *   rate  -t THREADS [--per-thread] -s SECONDS [--size N]
 *                           ECHO calls per second, THREADS calls outstanding
 *                           on one shared CLIENT or one CLIENT per thread
 *   write|read -t THREADS -s SECONDS [--size N]
 *                           goodput of WRITE-shaped calls (argument data in
 *                           a Read chunk) or READ-shaped calls (result data
 *                           in a Write chunk, into the caller's buffer)
 *   idle  --conns N         resident and registered memory per idle
 *                           connection, on both sides
 *   hold  --conns N [-s SECONDS]
 *                           open up to N idle connections within SECONDS
 *                           (default 20), stop at the first refused; print
 *                           "HELD ...", keep them until SIGUSR1, then check
 *                           each with a NULL call and print RESULT
 *   count -N CALLS [--bulk-calls N] [--size N] [--kinds null,echo,read,write]
 *         [--bulk-port PORT] [--gap-us US]
 *                           calls for callgrind, under which client and
 *                           server run (the server with --callgrind): per
 *                           kind, segments of CALLS, CALLS and 2 x CALLS
 *                           calls (N for read and write, default 3), each
 *                           cut out of the counts of both sides by
 *                           callgrind's client requests (rb_count); read
 *                           and write to the server on PORT if given; a
 *                           pause of US before each counted call
 *
 * The client prints one "RESULT test=... key=value ..." line, or one
 * "ERROR test=... reason" line and exits 1; the driver turns these into
 * the table.  Both sides register the Upper-Layer Binding table built
 * from rbench.x (rb_ulb_load).  Every blocking step has a deadline: calls
 * time out after 20 s (CLSET_TIMEOUT) and the whole process gets SIGALRM
 * after its expected running time plus a margin, so nothing waits forever.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "config.h"
#ifdef HAVE_VALGRIND_CALLGRIND_H
#include <valgrind/callgrind.h>
#endif

#include "tests/bench/rbench_run.h"
#include "tests/vm/t_opt.h"
#include "tests/vm/t_util.h"

#define CALL_TIMEOUT_S 20
#define MAX_CONNS      1024

struct opts {
	const char *netid; /* "rdma" or "tcp" */
	const char *addr;
	unsigned int port;
	enum rpcrdma_comp_mode comp;
	unsigned int lifetime; /* server: seconds, 0 = none */
	const char *test;
	unsigned long calls; /* lat */
	unsigned int threads;
	bool per_thread;
	double seconds;
	size_t size;
	unsigned int conns;
	bool callgrind;		  /* server: RB_MARK dumps callgrind's counts */
	unsigned long bulk_calls; /* count: segment unit of read and write */
	unsigned int bulk_port;	  /* count: their server's port, if not port */
	unsigned int gap_us;	  /* count: pause before each counted call */
	const char *kinds;	  /* count: which calls */
};

static struct opts o;
/* connecting: each attempt's limit (0: the library's), and how long to
 * retry; count, under valgrind, takes longer (both sides are slow) */
static unsigned int connect_ms;
static double connect_window_s = 10;
static const char *test_name = "-";

static void usage(void)
{
	fprintf(stderr,
		"usage: rbench server -n rdma|tcp -a ADDR -p PORT [--lifetime SECONDS] [--callgrind]\n"
		"       rbench client -n rdma|tcp -a ADDR -p PORT [--comp event|poll]\n"
		"                     lat [-N CALLS] [-s SECONDS] | rate -t THREADS [--per-thread] -s SECONDS\n"
		"                     [--size N] | write|read -t THREADS -s SECONDS [--size N] |\n"
		"                     idle --conns N | hold --conns N [-s SECONDS] |\n"
		"                     count -N CALLS [--bulk-calls N] [--size N] [--kinds LIST]\n"
		"                           [--bulk-port PORT] [--gap-us US]\n");
	exit(2);
}

/* s with the quotes and newlines the driver's parsing cannot take blanked */
static void unquote(char *s)
{
	for (; *s; s++)
		if (*s == '\n' || *s == '"')
			*s = ' ';
}

/* One "ERROR" line for the driver, and exit 1. */
static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	unquote(msg);
	printf("ERROR test=%s netid=%s reason=\"%s\"\n", test_name, o.netid,
	       msg);
	fflush(stdout);
	exit(1);
}

static bool is_rdma(void)
{
	return !strcmp(o.netid, "rdma");
}

/* o.addr (IPv4 or IPv6) and o.port: the length of ss, or 0. */
static socklen_t make_addr(struct sockaddr_storage *ss)
{
	return t_opt_sockaddr(ss, t_opt_family(o.addr, AF_INET), o.addr,
			      o.port);
}

/*
 * rsockets (librspreload.so) refuses getsockopt(SO_TYPE), which libtirpc's
 * clnt_tli_create() and clnt_vc_create() need (__rpc_fd2sockinfo): the tcp
 * CLIENT could not be made over rsockets at all.  An rsocket of netid tcp
 * is a stream socket, so answer SOCK_STREAM when the call is refused;
 * everything else goes to the next definition (rsockets', else libc's).
 * The executable's definition precedes LD_PRELOAD's in symbol lookup; with
 * plain kernel sockets the real call succeeds and this changes nothing.
 */
int getsockopt(int fd, int level, int name, void *restrict val,
	       socklen_t *restrict len)
{
	static int (*next)(int, int, int, void *, socklen_t *);
	int rc;

	if (!next)
		next = (int (*)(int, int, int, void *,
				socklen_t *))dlsym(RTLD_NEXT, "getsockopt");
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	rc = next(fd, level, name, val, len);
	if (rc && level == SOL_SOCKET && name == SO_TYPE && val && len &&
	    *len >= sizeof(int) &&
	    (errno == ENOTSUP || errno == EOPNOTSUPP || errno == ENOPROTOOPT)) {
		*(int *)val = SOCK_STREAM;
		*len = sizeof(int);
		return 0;
	}
	return rc;
}

/*
 * Callgrind's client requests: no-ops outside valgrind.  The server cuts
 * its counts at each RB_MARK, the client before and after each segment of
 * calls, so that its dump "LABEL" holds those calls and nothing of the
 * set-up, warm-up or the markers ("LABEL start" holds what came before).
 * Cut by dumps alone: after CALLGRIND_ZERO_STATS callgrind 3.19 charged
 * tens to hundreds of thousands of instructions more than the same calls
 * cost later, to a function that was not even running (rxe's poll_cq in
 * ib_send_lat), where a dump, which zeroes the counts as well, did not.
 */
#ifdef HAVE_VALGRIND_CALLGRIND_H
#define CG_MARKERS 1
#else
#define CG_MARKERS		       0
#define CALLGRIND_DUMP_STATS_AT(label) ((void)(label))
#define CALLGRIND_TOGGLE_COLLECT
#define RUNNING_ON_VALGRIND 0
#endif

static void cg_srv_mark(const char *label)
{
	CALLGRIND_DUMP_STATS_AT(label);
}

static void cg_clnt_mark(const char *label, bool start)
{
	char what[RB_MARK_MAX + 16];

	if (start) {
		snprintf(what, sizeof(what), "%s start", label);
		CALLGRIND_DUMP_STATS_AT(what);
	} else {
		CALLGRIND_DUMP_STATS_AT(label);
	}
}

static unsigned int cg_layers(void)
{
	return (unsigned int)RUNNING_ON_VALGRIND;
}

/* count --gap-us: a pause before each counted call, itself not counted. */
static void cg_gap(void)
{
	CALLGRIND_TOGGLE_COLLECT;
	usleep(o.gap_us);
	CALLGRIND_TOGGLE_COLLECT;
}

static int server_main(void)
{
	struct sockaddr_storage ss;
	char err[RB_ERRLEN];
	socklen_t len;
	SVCXPRT *x;

	len = make_addr(&ss);
	if (!len) {
		fprintf(stderr, "rbench: bad address %s\n", o.addr);
		return 2;
	}
	if (!rb_ulb_load(err, sizeof(err))) {
		fprintf(stderr, "rbench: %s\n", err);
		return 1;
	}
	rb_srv_set_rdma(is_rdma());
	if (o.callgrind) {
		if (!CG_MARKERS) {
			fprintf(stderr,
				"rbench: --callgrind: built without <valgrind/callgrind.h> (package valgrind)\n");
			return 2;
		}
		rb_srv_set_mark(cg_srv_mark);
	}
	/* SIGTERM ends the server (default action); the lifetime is a
	 * backstop against a driver that died without killing it. */
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	if (o.lifetime)
		alarm(o.lifetime);
	if (is_rdma()) {
		struct rpcrdma_attr attr;

		rpcrdma_attr_init(&attr);
		attr.max_conns = MAX_CONNS;
		attr.max_conns_per_peer = MAX_CONNS;
		x = svc_rdma_create((struct sockaddr *)&ss, &attr);
	} else {
		/*
		 * What svc_tli_create(RPC_ANYFD, "tcp", addr) does, by hand:
		 * it takes a socket on which getpeername() succeeds for an
		 * accepted connection (svc_fd_create), and rsockets' answers
		 * getpeername() on a listening socket too, which then crashes
		 * in rrecv().
		 */
		int fd = socket(ss.ss_family, SOCK_STREAM, 0), one = 1;

		if (fd < 0 ||
		    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
			       sizeof(one)) ||
		    bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 128)) {
			perror("rbench: tcp socket");
			return 1;
		}
		x = svc_vc_create(fd, 0, 0);
	}
	if (!x) {
		fprintf(stderr, "rbench: cannot listen on %s port %u (%s)\n",
			o.addr, o.port, o.netid);
		return 1;
	}
	/* No netconfig: nothing is registered with rpcbind. */
	if (!svc_reg(x, RBENCH_PROG, RBENCH_VERS, rbench_prog_1, NULL)) {
		fprintf(stderr, "rbench: svc_reg failed\n");
		return 1;
	}
	printf("rbench: listening netid=%s addr=%s port=%u pid=%ld\n", o.netid,
	       o.addr, o.port, (long)getpid());
	fflush(stdout);
	svc_run();
	fprintf(stderr, "rbench: svc_run returned\n");
	return 1;
}

/* ---- Client --------------------------------------------------------------- */

/* One attempt at a tcp CLIENT, or NULL with rpc_createerr set. */
static CLIENT *tcp_connect(const struct sockaddr_storage *ss, socklen_t len)
{
	CLIENT *cl = NULL;
	struct netconfig *nc =
		getnetconfigent(ss->ss_family == AF_INET6 ? "tcp6" : "tcp");
	struct netbuf nb = { .maxlen = sizeof(*ss),
			     .len = len,
			     .buf = (void *)ss };
	int fd;

	if (!nc)
		fail("no netconfig for tcp");
	/* Connected here, not by clnt_tli_create(RPC_ANYFD): clnt_vc_create()
	 * connects only when getpeername() fails, and rsockets' succeeds on
	 * an unconnected socket (then rsend() crashes). */
	fd = socket(ss->ss_family, SOCK_STREAM, 0);
	if (fd >= 0 && connect(fd, (const struct sockaddr *)ss, len)) {
		close(fd);
		fd = -1;
	}
	if (fd >= 0) {
		cl = clnt_tli_create(fd, nc, &nb, RBENCH_PROG, RBENCH_VERS, 0,
				     0);
		if (cl)
			clnt_control(cl, CLSET_FD_CLOSE, NULL);
		else
			close(fd);
	} else {
		rpc_createerr.cf_stat = RPC_SYSTEMERROR;
		rpc_createerr.cf_error.re_errno = errno;
	}
	freenetconfigent(nc);
	return cl;
}

/*
 * One attempt at a CLIENT, with credits credits over rdma (0: the 32 of
 * the timed runs), or NULL with rpc_createerr set.
 */
static CLIENT *try_connect(const struct sockaddr_storage *ss, socklen_t len,
			   unsigned int credits)
{
	struct rpcrdma_attr attr;

	if (!is_rdma())
		return tcp_connect(ss, len);
	rpcrdma_attr_init(&attr);
	attr.comp_mode = o.comp;
	attr.credits = credits ? credits : 32;
	if (connect_ms)
		attr.connect_timeout_ms = connect_ms;
	return clnt_rdma_create((struct sockaddr *)ss, RBENCH_PROG, RBENCH_VERS,
				&attr);
}

/* A connected CLIENT; retries for up to connect_window_s (10 s) while the
 * server starts. */
static CLIENT *connect_clnt(void)
{
	struct sockaddr_storage ss;
	struct timeval tv = { CALL_TIMEOUT_S, 0 };
	socklen_t len;
	CLIENT *cl;
	double t0 = rb_now_us();

	len = make_addr(&ss);
	if (!len)
		fail("bad address %s", o.addr);
	for (;;) {
		cl = try_connect(&ss, len, 0);
		if (cl || rb_now_us() - t0 > connect_window_s * 1e6)
			break;
		usleep(200000);
	}
	if (!cl)
		fail("cannot connect to %s port %u: %s", o.addr, o.port,
		     clnt_spcreateerror("create"));
	clnt_control(cl, CLSET_TIMEOUT, (char *)&tv);
	return cl;
}

static void null_call(CLIENT *cl)
{
	char err[RB_ERRLEN];

	if (!rb_null(cl, is_rdma(), err, sizeof(err)))
		fail("%s", err);
}

static void get_stats(CLIENT *cl, rb_stats *st)
{
	char err[RB_ERRLEN];

	if (!rb_srv_stats(cl, is_rdma(), st, err, sizeof(err)))
		fail("%s", err);
}

/* A per-thread CLIENT for the engine. */
static CLIENT *connect_more(char *err, size_t len)
{
	return connect_clnt();
}

/*
 * After the RESULT line.  Over tcp the CLIENTs are left to the exit: with
 * rsockets preloaded, closing a connection lingers about 5 s, which would
 * only slow the benchmark down; the kernel closes the sockets anyway.
 */
static void tcp_quick_exit(void)
{
	if (!is_rdma()) {
		fflush(stdout);
		_exit(0);
	}
}

static void run_init(struct rb_run *r)
{
	memset(r, 0, sizeof(*r));
	r->cl = connect_clnt();
	r->rdma = is_rdma();
	r->threads = o.threads;
	r->size = o.size;
}

static void run_end(struct rb_run *r)
{
	tcp_quick_exit();
	rb_run_free(r);
	clnt_destroy(r->cl);
}

static int test_lat(void)
{
	struct rb_run r;
	const struct rb_result *res = &r.res;

	run_init(&r);
	r.calls = o.calls;
	r.seconds = o.seconds;
	if (!rb_lat(&r))
		fail("%s", r.err);
	printf("RESULT test=lat netid=%s comp=%s calls=%lu median_us=%.1f p99_us=%.1f mean_us=%.1f cli_cpu_us=%.2f srv_cpu_us=%.2f reply_chunks=%llu registrations=%llu rdma_version=%u\n",
	       o.netid, o.comp == RPCRDMA_COMP_POLL ? "poll" : "event",
	       res->calls, res->median_us, res->p99_us, res->mean_us,
	       res->cli_cpu_us, res->srv_cpu_us,
	       (unsigned long long)res->clnt.reply_chunks,
	       (unsigned long long)res->clnt.registrations, res->rdma_version);
	run_end(&r);
	return 0;
}

static void print_bulk(enum rb_kind kind, const struct rb_result *res)
{
	const struct rpcrdma_clnt_stats *c = &res->clnt;

	printf("RESULT test=%s netid=%s threads=%u size=%zu calls=%lu seconds=%.2f MiBps=%.2f ddp_copies=%llu ddp_zero_copies=%llu ddp_caller_regs=%llu read_chunks=%llu write_chunks=%llu reply_chunks=%llu long_calls=%llu foreign_results=%lu srv_ddp_copies=%llu srv_read_chunks=%llu srv_write_chunks=%llu calls_sent=%llu invalidations=%llu remote_invalidations=%llu rdma_version=%u\n",
	       kind == RB_WRITE_CALLS ? "write" : "read", o.netid, o.threads,
	       o.size, res->calls, res->seconds,
	       (double)res->calls * (double)o.size / res->seconds / 1048576.0,
	       (unsigned long long)c->ddp_copies,
	       (unsigned long long)c->ddp_zero_copies,
	       (unsigned long long)c->ddp_caller_regs,
	       (unsigned long long)c->read_chunks,
	       (unsigned long long)c->write_chunks,
	       (unsigned long long)c->reply_chunks,
	       (unsigned long long)c->long_calls, res->foreign,
	       (unsigned long long)res->srv.ddp_copies,
	       (unsigned long long)res->srv.read_chunks,
	       (unsigned long long)res->srv.write_chunks,
	       (unsigned long long)c->calls,
	       (unsigned long long)c->invalidations,
	       (unsigned long long)c->remote_invalidations, res->rdma_version);
}

static int test_threads(enum rb_kind kind)
{
	struct rb_run r;
	const struct rb_result *res = &r.res;

	if (!o.threads || o.threads > RB_MAX_THREADS)
		fail("bad thread count %u", o.threads);
	if (kind == RB_ECHO_CALLS && o.size > RB_ECHO_MAX)
		fail("ECHO data is at most %u octets", RB_ECHO_MAX);
	run_init(&r);
	r.seconds = o.seconds;
	if (kind == RB_ECHO_CALLS && o.per_thread)
		r.connect = connect_more;
	if (!rb_bulk(&r, kind))
		fail("%s", r.err);
	if (kind == RB_ECHO_CALLS)
		printf("RESULT test=rate netid=%s threads=%u clients=%u size=%zu calls=%lu seconds=%.2f calls_per_s=%.0f\n",
		       o.netid, o.threads, res->clients, o.size, res->calls,
		       res->seconds, (double)res->calls / res->seconds);
	else
		print_bulk(kind, res);
	fflush(stdout);
	run_end(&r);
	return 0;
}

/* ---- Idle connections: memory --------------------------------------------- */

static int test_idle(void)
{
	unsigned int n = o.conns, i;
	CLIENT **cl = calloc(n + 1, sizeof(*cl));
	rb_stats s0, s1;
	uint64_t c0, c1;
	long long m0 = -1, m1 = -1, cm0 = -1, cm1 = -1;

	if (!cl || !n || n > MAX_CONNS)
		fail("bad connection count %u", n);
	cl[0] = connect_clnt();
	null_call(cl[0]);
	get_stats(cl[0], &s0);
	c0 = rb_vmrss_kb();
	if (is_rdma()) {
		m0 = tu_mr_bytes(s0.pid);
		cm0 = tu_mr_bytes((long)getpid());
	}
	for (i = 1; i <= n; i++) {
		cl[i] = connect_clnt();
		null_call(cl[i]);
	}
	usleep(200000);
	get_stats(cl[0], &s1);
	c1 = rb_vmrss_kb();
	if (is_rdma()) {
		m1 = tu_mr_bytes(s1.pid);
		cm1 = tu_mr_bytes((long)getpid());
	}
	printf("RESULT test=idle netid=%s conns=%u srv_rss_kb_per_conn=%.1f cli_rss_kb_per_conn=%.1f",
	       o.netid, n, ((double)s1.vmrss_kb - (double)s0.vmrss_kb) / n,
	       ((double)c1 - (double)c0) / n);
	if (m0 >= 0 && m1 >= 0)
		printf(" srv_reg_bytes_per_conn=%.0f", (double)(m1 - m0) / n);
	else
		printf(" srv_reg_bytes_per_conn=n/a");
	if (cm0 >= 0 && cm1 >= 0)
		printf(" cli_reg_bytes_per_conn=%.0f srv_reg_bytes_total=%lld",
		       (double)(cm1 - cm0) / n, m1);
	else
		printf(" cli_reg_bytes_per_conn=n/a");
	printf(" srv_conns_active=%u\n", s1.conns_active);
	fflush(stdout);
	for (i = 0; i <= n; i++)
		clnt_destroy(cl[i]);
	free(cl);
	return 0;
}

/* ---- Connections held at once ---------------------------------------------- */

#define HOLD_MAX     4096 /* connections one process may be asked to hold */
#define HOLD_CREDITS 2	  /* a held connection makes one call, then idles */
#define HOLD_CALL_S  5	  /* the deadline of that call and of the check */

/*
 * Open up to o.conns connections, one NULL call each, within o.seconds;
 * stop at the first that fails (a server refuses by closing it before its
 * first reply, so the call is what tells).  Print "HELD ...", then keep
 * them until SIGUSR1 (the driver counts the server's fds and registered
 * memory meanwhile), call NULL on each again and print the RESULT line:
 * how many were held, how many still answered, and why opening stopped.
 */
static int test_hold(void)
{
	struct timeval tv = { HOLD_CALL_S, 0 };
	struct sockaddr_storage ss;
	char why[RB_ERRLEN] = "all asked for were opened";
	unsigned int n = o.conns, held = 0, alive = 0, i;
	CLIENT **cl = calloc(n ? n : 1, sizeof(*cl));
	double t0 = rb_now_us(), open_s;
	socklen_t len = make_addr(&ss);
	sigset_t usr1;
	int sig;

	if (!cl || !n || n > HOLD_MAX || !len)
		fail("bad connection count %u (1 to %u)", n, HOLD_MAX);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	while (held < n) {
		CLIENT *c;

		if (rb_now_us() - t0 > o.seconds * 1e6) {
			snprintf(why, sizeof(why),
				 "the %.0f s to open them ran out", o.seconds);
			break;
		}
		c = try_connect(&ss, len, HOLD_CREDITS);
		if (!c) {
			snprintf(why, sizeof(why), "%s",
				 clnt_spcreateerror("create"));
			break;
		}
		clnt_control(c, CLSET_TIMEOUT, (char *)&tv);
		if (!rb_null(c, is_rdma(), why, sizeof(why))) {
			clnt_destroy(c);
			break;
		}
		cl[held++] = c;
	}
	open_s = (rb_now_us() - t0) / 1e6;
	unquote(why);
	printf("HELD conns=%u asked=%u open_s=%.1f stopped=\"%s\"\n", held, n,
	       open_s, why);
	fflush(stdout);
	sigwait(&usr1, &sig);
	for (i = 0; i < held; i++) {
		char err[RB_ERRLEN];

		alive += rb_null(cl[i], is_rdma(), err, sizeof(err));
	}
	printf("RESULT test=hold netid=%s conns=%u asked=%u alive=%u open_s=%.1f stopped=\"%s\"\n",
	       o.netid, held, n, alive, open_s, why);
	fflush(stdout);
	/* Not destroyed one by one: exiting releases every connection at
	 * once, and hundreds of orderly disconnects would only cost time. */
	_exit(0);
}

/* ---- Calls for callgrind ---------------------------------------------------- */

/* Whether name is one of the comma-separated words of list. */
static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p; p = strchr(p, ',')) {
		if (*p == ',')
			p++;
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return true;
	}
	return false;
}

/*
 * Per kind of o.kinds, in this order: segments of n, n and 2n calls, so
 * that (third - first) / n and (third - second) / n are two measures of
 * one call, which set-up and markers do not enter; their difference says
 * how deterministic the count is.  With --bulk-port, the read and write
 * calls go to the server on that port: rbench.sh counts this client's
 * 1 MiB calls against a server that does not run under valgrind, as one
 * that does takes 0.5-2 s per call there, which wakes this client's
 * wait every 200 ms slice (RR_LEAD_SLICE_MS) a varying number of times.
 * With --gap-us, a pause before each counted call, outside the counts
 * (CALLGRIND_TOGGLE_COLLECT), lets the server finish the call before and
 * go to sleep: without it, whether the next call arrived while the server
 * was still at work, and its wake-up was saved or came spurious, depended
 * on timing, and moved the server's count by 2-3 % between runs.
 */
static int test_count(void)
{
	static const struct {
		const char *name;
		enum rb_kind kind;
		bool bulk;
	} all[] = {
		{ "null", RB_NULL_CALLS, false },
		{ "echo", RB_ECHO_CALLS, false },
		{ "read", RB_READ_CALLS, true },
		{ "write", RB_WRITE_CALLS, true },
	};
	const struct rb_count_hooks hooks = { cg_clnt_mark,
					      o.gap_us ? cg_gap : NULL };
	char done[64] = "";
	struct rb_run r;
	CLIENT *main_cl, *bulk_cl = NULL;
	unsigned int i;

	if (!CG_MARKERS)
		fail("built without <valgrind/callgrind.h> (package valgrind): no markers");
	connect_ms = 60000;
	connect_window_s = 120;
	run_init(&r);
	main_cl = r.cl;
	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		unsigned long n = all[i].bulk ? o.bulk_calls : o.calls;
		unsigned long seg[3] = { n, n, 2 * n };

		if (!in_list(o.kinds, all[i].name))
			continue;
		if (all[i].bulk && o.bulk_port && !bulk_cl) {
			unsigned int port = o.port;

			o.port = o.bulk_port;
			bulk_cl = connect_clnt();
			o.port = port;
		}
		r.cl = all[i].bulk && bulk_cl ? bulk_cl : main_cl;
		r.size = o.size;
		if (!rb_count(&r, all[i].kind, all[i].name, seg, 3, &hooks))
			fail("%s", r.err);
		rb_run_free(&r);
		r.cl = main_cl;
		snprintf(done + strlen(done), sizeof(done) - strlen(done),
			 "%s%s", *done ? "," : "", all[i].name);
	}
	if (!*done)
		fail("no known kind in '%s'", o.kinds);
	printf("RESULT test=count netid=%s kinds=%s calls=%lu bulk_calls=%lu size=%zu valgrind=%u rdma_version=%u\n",
	       o.netid, done, o.calls, o.bulk_calls, o.size, cg_layers(),
	       r.res.rdma_version);
	if (bulk_cl)
		clnt_destroy(bulk_cl);
	run_end(&r);
	return 0;
}

static int client_main(void)
{
	unsigned int budget = 60;
	char err[RB_ERRLEN];

	signal(SIGPIPE, SIG_IGN);
	test_name = o.test;
	if (!rb_ulb_load(err, sizeof(err)))
		fail("%s", err);
	if (!strcmp(o.test, "rate") || !strcmp(o.test, "write") ||
	    !strcmp(o.test, "read")) {
		if (o.seconds <= 0)
			o.seconds = 2;
		budget += (unsigned int)o.seconds + 2 * CALL_TIMEOUT_S;
	} else if (!strcmp(o.test, "lat")) {
		budget += o.seconds > 0 ? (unsigned int)o.seconds :
					  (unsigned int)(o.calls / 100);
	} else if (!strcmp(o.test, "count")) {
		/* 8 segment units of calls of each size, under valgrind:
		 * 10-20 ms per small call, 0.5-2 s per MiB */
		budget += 120 +
			  (unsigned int)(4 * o.calls / 10 +
					 8 * (o.calls + o.bulk_calls) *
						 (o.gap_us / 1000 + 1) / 1000 +
					 32 * o.bulk_calls *
						 ((o.size >> 20) + 1));
	} else if (!strcmp(o.test, "hold")) {
		if (o.seconds <= 0)
			o.seconds = 20;
		/* the opening, the driver's count, the check of each */
		budget += 2 * (unsigned int)o.seconds + 2 * HOLD_CALL_S;
	} else
		budget += o.conns;
	alarm(budget);
	if (!strcmp(o.test, "lat"))
		return test_lat();
	if (!strcmp(o.test, "rate"))
		return test_threads(RB_ECHO_CALLS);
	if (!strcmp(o.test, "write"))
		return test_threads(RB_WRITE_CALLS);
	if (!strcmp(o.test, "read"))
		return test_threads(RB_READ_CALLS);
	if (!strcmp(o.test, "idle"))
		return test_idle();
	if (!strcmp(o.test, "hold"))
		return test_hold();
	if (!strcmp(o.test, "count"))
		return test_count();
	usage();
	return 2;
}

/* A whole number, or usage(). */
static unsigned long number(const char *s)
{
	return t_opt_number(s, usage);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "comp", required_argument, NULL, 'C' },
		{ "lifetime", required_argument, NULL, 'L' },
		{ "per-thread", no_argument, NULL, 'P' },
		{ "size", required_argument, NULL, 'S' },
		{ "conns", required_argument, NULL, 'K' },
		{ "callgrind", no_argument, NULL, 'G' },
		{ "bulk-calls", required_argument, NULL, 'B' },
		{ "kinds", required_argument, NULL, 'k' },
		{ "bulk-port", required_argument, NULL, 'b' },
		{ "gap-us", required_argument, NULL, 'g' },
		{ NULL, 0, NULL, 0 },
	};
	bool server;
	int c;

	if (argc < 2)
		usage();
	server = !strcmp(argv[1], "server");
	if (!server && strcmp(argv[1], "client"))
		usage();
	o.netid = "rdma";
	o.addr = "192.0.2.1";
	o.comp = RPCRDMA_COMP_EVENT;
	o.calls = 1000;
	o.threads = 1;
	o.seconds = 0;
	o.size = 64;
	o.conns = 8;
	o.bulk_calls = 3;
	o.kinds = "null,echo,read,write";
	optind = 2;
	while ((c = getopt_long(argc, argv, "n:a:p:N:t:s:", lo, NULL)) != -1) {
		switch (c) {
		case 'n':
			o.netid = optarg;
			break;
		case 'a':
			o.addr = optarg;
			break;
		case 'p':
			o.port = (unsigned int)number(optarg);
			break;
		case 'N':
			o.calls = number(optarg);
			break;
		case 't':
			o.threads = (unsigned int)number(optarg);
			break;
		case 's':
			o.seconds = (double)number(optarg);
			break;
		case 'C':
			if (!strcmp(optarg, "poll"))
				o.comp = RPCRDMA_COMP_POLL;
			else if (!strcmp(optarg, "event"))
				o.comp = RPCRDMA_COMP_EVENT;
			else
				usage();
			break;
		case 'L':
			o.lifetime = (unsigned int)number(optarg);
			break;
		case 'P':
			o.per_thread = true;
			break;
		case 'S':
			o.size = number(optarg);
			break;
		case 'K':
			o.conns = (unsigned int)number(optarg);
			break;
		case 'G':
			o.callgrind = true;
			break;
		case 'B':
			o.bulk_calls = number(optarg);
			break;
		case 'k':
			o.kinds = optarg;
			break;
		case 'b':
			o.bulk_port = (unsigned int)number(optarg);
			break;
		case 'g':
			o.gap_us = (unsigned int)number(optarg);
			break;
		default:
			usage();
		}
	}
	if (strcmp(o.netid, "rdma") && strcmp(o.netid, "tcp"))
		usage();
	if (!o.port || o.port > 65535 || !o.size || o.size > RB_MAXDATA ||
	    !o.calls || !o.bulk_calls || o.bulk_port > 65535)
		usage();
	if (server) {
		if (optind != argc)
			usage();
		return server_main();
	}
	if (optind != argc - 1)
		usage();
	o.test = argv[optind];
	return client_main();
}
