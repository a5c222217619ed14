/*
 * rbench.c - the RPC side of the RDMA benchmark (rpcrdma-bench(1), run by
 * tests/bench/rbench.sh in the Soft-RoCE VM): one rpcgen program
 * (tests/bench/rbench.x) served and called over netid "rdma" with
 * svc_rdma_create()/clnt_rdma_create(), and over libtirpc's own "tcp" with
 * svc_vc_create()/clnt_tli_create() on sockets it binds and connects itself
 * (no rpcbind either way: the client is given the server's address and
 * port).  The tcp runs also work with rsockets preloaded
 * (librspreload.so): see getsockopt() and the notes at the socket calls.
 *
 *   rbench server -n rdma|tcp -a ADDR -p PORT [--lifetime SECONDS]
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
 *
 * The client prints one "RESULT test=... key=value ..." line, or one
 * "ERROR test=... reason" line and exits 1; the driver turns these into
 * the table.  Every blocking step has a deadline: calls time out after
 * 20 s (CLSET_TIMEOUT) and the whole process gets SIGALRM after its
 * expected running time plus a margin, so nothing waits forever.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "rbench.h"
#include "tests/vm/t_opt.h"
#include "tests/vm/t_util.h"

/* The dispatch function of rbench_svc.c (rpcgen declares it nowhere). */
void rbench_prog_1(struct svc_req *rq, SVCXPRT *x);

#define CALL_TIMEOUT_S 20
#define MAX_THREADS    256
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
};

static struct opts o;
static const char *test_name = "-";

static void usage(void)
{
	fprintf(stderr,
		"usage: rbench server -n rdma|tcp -a ADDR -p PORT [--lifetime SECONDS]\n"
		"       rbench client -n rdma|tcp -a ADDR -p PORT [--comp event|poll]\n"
		"                     lat [-N CALLS] [-s SECONDS] | rate -t THREADS [--per-thread] -s SECONDS\n"
		"                     [--size N] | write|read -t THREADS -s SECONDS [--size N] |\n"
		"                     idle --conns N\n");
	exit(2);
}

/* One "ERROR" line for the driver, and exit 1. */
static void fail(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (char *p = msg; *p; p++)
		if (*p == '\n' || *p == '"')
			*p = ' ';
	printf("ERROR test=%s netid=%s reason=\"%s\"\n", test_name, o.netid,
	       msg);
	fflush(stdout);
	exit(1);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static uint64_t cpu_us(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000u +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* VmRSS of this process in KiB, 0 if unknown. */
static uint64_t vmrss_kb(void)
{
	char line[256];
	unsigned long long kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
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

/* ---- Server procedures ---------------------------------------------------- */

static uint64_t srv_requests;
static char *read_buf; /* RB_READ's results: never freed */
static size_t read_cap;
static unsigned int read_seed;

static void fill(char *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (char)((seed + i) & 0xff);
}

bool_t rb_null_1_svc(void *arg, void *res, struct svc_req *rq)
{
	srv_requests++;
	return TRUE;
}

/* The argument's buffer becomes the result: no copy. */
bool_t rb_echo_1_svc(rb_echo *arg, rb_echo *res, struct svc_req *rq)
{
	srv_requests++;
	*res = *arg;
	arg->data.data_val = NULL;
	arg->data.data_len = 0;
	return TRUE;
}

bool_t rb_write_1_svc(rb_write_args *arg, rb_write_res *res, struct svc_req *rq)
{
	u_int n = arg->data.data_len;
	const unsigned char *d = (const unsigned char *)arg->data.data_val;

	srv_requests++;
	res->count = n;
	res->check = n ? (u_int)d[0] + d[n - 1] : 0;
	return TRUE;
}

/* The results point at one server buffer, filled once per seed; the
 * freeresult routine leaves it alone. */
bool_t rb_read_1_svc(rb_read_args *arg, rb_read_res *res, struct svc_req *rq)
{
	srv_requests++;
	if (arg->count > RB_MAXDATA) {
		svcerr_decode(rq->rq_xprt);
		return FALSE;
	}
	if (arg->count > read_cap || arg->seed != read_seed) {
		if (arg->count > read_cap) {
			char *p = realloc(read_buf, arg->count);

			if (!p) {
				svcerr_systemerr(rq->rq_xprt);
				return FALSE;
			}
			read_buf = p;
			read_cap = arg->count;
		}
		read_seed = arg->seed;
		fill(read_buf, read_cap, read_seed);
	}
	res->count = arg->count;
	res->data.data_len = arg->count;
	res->data.data_val = read_buf;
	return TRUE;
}

bool_t rb_stats_1_svc(void *arg, rb_stats *res, struct svc_req *rq)
{
	struct rusage ru;
	struct rpcrdma_svc_stats st;

	memset(res, 0, sizeof(*res));
	getrusage(RUSAGE_SELF, &ru);
	res->utime_us = (uint64_t)ru.ru_utime.tv_sec * 1000000u +
			(uint64_t)ru.ru_utime.tv_usec;
	res->stime_us = (uint64_t)ru.ru_stime.tv_sec * 1000000u +
			(uint64_t)ru.ru_stime.tv_usec;
	res->vmrss_kb = vmrss_kb();
	res->requests = srv_requests;
	res->pid = (int)getpid();
	memset(&st, 0, sizeof(st));
	if (is_rdma() && SVC_CONTROL(rq->rq_xprt, SVCGET_RDMA_STATS, &st)) {
		res->ddp_copies = st.ddp_copies;
		res->read_chunks = st.read_chunks;
		res->write_chunks = st.write_chunks;
		res->conns_active = st.conns_active;
	}
	return TRUE;
}

int rbench_prog_1_freeresult(SVCXPRT *x, xdrproc_t proc, caddr_t res)
{
	if (proc == (xdrproc_t)xdr_rb_read_res)
		return 1; /* read_buf stays */
	xdr_free(proc, res);
	return 1;
}

static int server_main(void)
{
	struct sockaddr_storage ss;
	socklen_t len;
	SVCXPRT *x;

	len = make_addr(&ss);
	if (!len) {
		fprintf(stderr, "rbench: bad address %s\n", o.addr);
		return 2;
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

static char *clnt_why(CLIENT *cl, enum clnt_stat st)
{
	static __thread char buf[RPCRDMA_ERRMSG_LEN + 128];
	char em[RPCRDMA_ERRMSG_LEN] = "";

	if (is_rdma())
		clnt_control(cl, CLGET_RDMA_ERRMSG, em);
	snprintf(buf, sizeof(buf), "%s%s%s", clnt_sperrno(st), *em ? ": " : "",
		 em);
	return buf;
}

/* A connected CLIENT; retries for up to 10 s while the server starts. */
static CLIENT *connect_clnt(void)
{
	struct sockaddr_storage ss;
	struct timeval tv = { CALL_TIMEOUT_S, 0 };
	socklen_t len;
	CLIENT *cl = NULL;
	double t0 = now_us();

	len = make_addr(&ss);
	if (!len)
		fail("bad address %s", o.addr);
	for (;;) {
		if (is_rdma()) {
			struct rpcrdma_attr attr;

			rpcrdma_attr_init(&attr);
			attr.comp_mode = o.comp;
			attr.credits = 32;
			cl = clnt_rdma_create((struct sockaddr *)&ss,
					      RBENCH_PROG, RBENCH_VERS, &attr);
		} else {
			struct netconfig *nc = getnetconfigent(
				ss.ss_family == AF_INET6 ? "tcp6" : "tcp");
			struct netbuf nb = { .maxlen = sizeof(ss),
					     .len = len,
					     .buf = &ss };

			int fd;

			if (!nc)
				fail("no netconfig for tcp");
			/* Connected here, not by clnt_tli_create(RPC_ANYFD):
			 * clnt_vc_create() connects only when getpeername()
			 * fails, and rsockets' succeeds on an unconnected
			 * socket (then rsend() crashes). */
			fd = socket(ss.ss_family, SOCK_STREAM, 0);
			if (fd >= 0 &&
			    connect(fd, (struct sockaddr *)&ss, len)) {
				close(fd);
				fd = -1;
			}
			if (fd >= 0) {
				cl = clnt_tli_create(fd, nc, &nb, RBENCH_PROG,
						     RBENCH_VERS, 0, 0);
				if (cl)
					clnt_control(cl, CLSET_FD_CLOSE, NULL);
				else
					close(fd);
			} else {
				rpc_createerr.cf_stat = RPC_SYSTEMERROR;
				rpc_createerr.cf_error.re_errno = errno;
			}
			freenetconfigent(nc);
		}
		if (cl || now_us() - t0 > 10e6)
			break;
		usleep(200000);
	}
	if (!cl)
		fail("cannot connect to %s port %u: %s", o.addr, o.port,
		     clnt_spcreateerror("create"));
	clnt_control(cl, CLSET_TIMEOUT, (char *)&tv);
	return cl;
}

static void get_stats(CLIENT *cl, rb_stats *st)
{
	enum clnt_stat s;

	memset(st, 0, sizeof(*st));
	s = rb_stats_1(NULL, st, cl);
	if (s != RPC_SUCCESS)
		fail("RB_STATS: %s", clnt_why(cl, s));
}

static void clnt_stats(CLIENT *cl, struct rpcrdma_clnt_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (is_rdma() && !clnt_control(cl, CLGET_RDMA_STATS, (char *)st))
		fail("CLGET_RDMA_STATS refused");
}

/* The RPC-over-RDMA version in force; 0 over tcp. */
static unsigned int rdma_version(CLIENT *cl)
{
	unsigned int v = 0;

	if (is_rdma() && !clnt_control(cl, CLGET_RDMA_VERSION, (char *)&v))
		fail("CLGET_RDMA_VERSION refused");
	return v;
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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void null_call(CLIENT *cl)
{
	enum clnt_stat s = rb_null_1(NULL, NULL, cl);

	if (s != RPC_SUCCESS)
		fail("RB_NULL: %s", clnt_why(cl, s));
}

static int test_lat(void)
{
	CLIENT *cl = connect_clnt();
	unsigned long n = o.calls, i,
		      warm = n / 10 < 50  ? 50 :
			     n / 10 > 200 ? 200 :
					    n / 10;
	double *us = calloc(n, sizeof(*us)), sum = 0, t0;
	double limit = o.seconds > 0 ? o.seconds * 1e6 : 0;
	struct rpcrdma_clnt_stats cs0, cs1;
	rb_stats s0, s1;
	uint64_t c0, c1;

	if (!us)
		fail("out of memory");
	for (i = 0; i < warm; i++)
		null_call(cl);
	get_stats(cl, &s0);
	clnt_stats(cl, &cs0);
	c0 = cpu_us();
	t0 = now_us();
	for (i = 0; i < n; i++) {
		double t = now_us();

		null_call(cl);
		us[i] = now_us() - t;
		sum += us[i];
		/* -s: stop early, after 100 calls at least */
		if (limit && i >= 99 && now_us() - t0 > limit) {
			n = i + 1;
			break;
		}
	}
	c1 = cpu_us();
	clnt_stats(cl, &cs1);
	get_stats(cl, &s1);
	qsort(us, n, sizeof(*us), cmp_double);
	printf("RESULT test=lat netid=%s comp=%s calls=%lu median_us=%.1f p99_us=%.1f mean_us=%.1f cli_cpu_us=%.2f srv_cpu_us=%.2f reply_chunks=%llu registrations=%llu rdma_version=%u\n",
	       o.netid, o.comp == RPCRDMA_COMP_POLL ? "poll" : "event", n,
	       us[n / 2], us[(size_t)((double)n * 0.99)], sum / (double)n,
	       (double)(c1 - c0) / (double)n,
	       (double)((s1.utime_us + s1.stime_us) -
			(s0.utime_us + s0.stime_us)) /
		       (double)n,
	       (unsigned long long)(cs1.reply_chunks - cs0.reply_chunks),
	       (unsigned long long)(cs1.registrations - cs0.registrations),
	       rdma_version(cl));
	free(us);
	tcp_quick_exit();
	clnt_destroy(cl);
	return 0;
}

/* ---- Threads: echo rate and bulk goodput ---------------------------------- */

enum kind {
	K_ECHO,
	K_WRITE,
	K_READ
};

struct worker {
	pthread_t th;
	CLIENT *cl;
	enum kind kind;
	char *buf;
	char *rbuf;
	unsigned long calls;
	unsigned long foreign; /* READ: results not in our buffer */
	char err[RPCRDMA_ERRMSG_LEN + 160];
};

static atomic_bool stop;
static pthread_barrier_t start_bar;

static bool one_call(struct worker *w, bool verify)
{
	enum clnt_stat s;

	switch (w->kind) {
	case K_ECHO: {
		rb_echo a = { { (u_int)o.size, w->buf } };
		rb_echo r = { { (u_int)o.size, w->rbuf } };

		s = rb_echo_1(&a, &r, w->cl);
		if (s == RPC_SUCCESS &&
		    (r.data.data_len != o.size || r.data.data_val != w->rbuf ||
		     (verify && memcmp(w->rbuf, w->buf, o.size)))) {
			snprintf(w->err, sizeof(w->err), "ECHO: bad result");
			return false;
		}
		if (verify)
			memset(w->rbuf, 0, o.size);
		break;
	}
	case K_WRITE: {
		rb_write_args a = { (u_int)o.size, { (u_int)o.size, w->buf } };
		rb_write_res r = { 0, 0 };
		u_int check = (u_int)(unsigned char)w->buf[0] +
			      (unsigned char)w->buf[o.size - 1];

		s = rb_write_1(&a, &r, w->cl);
		if (s == RPC_SUCCESS &&
		    (r.count != o.size || r.check != check)) {
			snprintf(w->err, sizeof(w->err),
				 "WRITE: server got %u octets, check %u (want %zu, %u)",
				 r.count, r.check, o.size, check);
			return false;
		}
		break;
	}
	case K_READ: {
		/* The caller's buffer: data_len is its capacity. */
		rb_read_args a = { (u_int)o.size, 7 };
		rb_read_res r = { 0, { (u_int)o.size, w->rbuf } };

		s = rb_read_1(&a, &r, w->cl);
		if (s != RPC_SUCCESS)
			break;
		if (r.count != o.size || r.data.data_len != o.size) {
			snprintf(w->err, sizeof(w->err),
				 "READ: %u octets, want %zu", r.data.data_len,
				 o.size);
			return false;
		}
		/* a result in memory of the library's own is counted
		 * (foreign_results) and checked as well */
		if (verify) {
			for (size_t i = 0; i < o.size; i++)
				if (r.data.data_val[i] !=
				    (char)((7 + i) & 0xff)) {
					snprintf(w->err, sizeof(w->err),
						 "READ: octet %zu differs", i);
					if (r.data.data_val != w->rbuf)
						free(r.data.data_val);
					return false;
				}
			memset(w->rbuf, 0, o.size);
		}
		if (r.data.data_val != w->rbuf) {
			w->foreign++;
			free(r.data.data_val);
		}
		break;
	}
	default:
		s = RPC_FAILED;
	}
	if (s != RPC_SUCCESS) {
		snprintf(w->err, sizeof(w->err), "%s: %s",
			 w->kind == K_ECHO  ? "ECHO" :
			 w->kind == K_WRITE ? "WRITE" :
					      "READ",
			 clnt_why(w->cl, s));
		return false;
	}
	return true;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned long n = 0;

	/* a verified warm-up call, then the timed loop */
	if (!one_call(w, true)) {
		atomic_store(&stop, true);
		pthread_barrier_wait(&start_bar);
		return NULL;
	}
	pthread_barrier_wait(&start_bar);
	while (!atomic_load(&stop)) {
		if (!one_call(w, false)) {
			atomic_store(&stop, true);
			break;
		}
		if (!atomic_load(&stop))
			n++;
	}
	/* one more verified call: the data is still right after the run */
	if (!w->err[0] && w->kind == K_READ)
		one_call(w, true);
	w->calls = n;
	return NULL;
}

static int test_threads(enum kind kind)
{
	unsigned int t = o.threads, i;
	struct worker *w = calloc(t, sizeof(*w));
	struct rpcrdma_clnt_stats cs0, cs1;
	CLIENT *shared = NULL, *ctl;
	rb_stats s0, s1;
	unsigned long total = 0, foreign = 0;
	double t0, t1, secs;

	if (!w || !t || t > MAX_THREADS)
		fail("bad thread count %u", t);
	if (kind == K_ECHO && o.size > RB_ECHO_MAX)
		fail("ECHO data is at most %u octets", RB_ECHO_MAX);
	if (kind != K_ECHO || !o.per_thread)
		shared = connect_clnt();
	ctl = shared ? shared : connect_clnt();
	for (i = 0; i < t; i++) {
		w[i].kind = kind;
		w[i].cl = shared ? shared : i ? connect_clnt() : ctl;
		w[i].buf = malloc(o.size);
		w[i].rbuf = malloc(o.size);
		if (!w[i].buf || !w[i].rbuf)
			fail("out of memory");
		fill(w[i].buf, o.size, 3 + i);
		memset(w[i].rbuf, 0, o.size);
	}
	clnt_stats(ctl, &cs0);
	get_stats(ctl, &s0);
	pthread_barrier_init(&start_bar, NULL, t + 1);
	for (i = 0; i < t; i++)
		if (pthread_create(&w[i].th, NULL, worker_main, &w[i]))
			fail("pthread_create failed");
	pthread_barrier_wait(&start_bar);
	t0 = now_us();
	while (!atomic_load(&stop) && now_us() - t0 < o.seconds * 1e6)
		usleep(10000);
	atomic_store(&stop, true);
	t1 = now_us();
	for (i = 0; i < t; i++) {
		pthread_join(w[i].th, NULL);
		if (w[i].err[0])
			fail("%s", w[i].err);
		total += w[i].calls;
		foreign += w[i].foreign;
	}
	secs = (t1 - t0) / 1e6;
	get_stats(ctl, &s1);
	clnt_stats(ctl, &cs1);
	if (kind == K_ECHO) {
		printf("RESULT test=rate netid=%s threads=%u clients=%u size=%zu calls=%lu seconds=%.2f calls_per_s=%.0f\n",
		       o.netid, t, shared ? 1 : t, o.size, total, secs,
		       (double)total / secs);
	} else {
		printf("RESULT test=%s netid=%s threads=%u size=%zu calls=%lu seconds=%.2f MiBps=%.2f ddp_copies=%llu ddp_zero_copies=%llu ddp_caller_regs=%llu read_chunks=%llu write_chunks=%llu reply_chunks=%llu long_calls=%llu foreign_results=%lu srv_ddp_copies=%llu srv_read_chunks=%llu srv_write_chunks=%llu calls_sent=%llu invalidations=%llu remote_invalidations=%llu rdma_version=%u\n",
		       kind == K_WRITE ? "write" : "read", o.netid, t, o.size,
		       total, secs,
		       (double)total * (double)o.size / secs / 1048576.0,
		       (unsigned long long)(cs1.ddp_copies - cs0.ddp_copies),
		       (unsigned long long)(cs1.ddp_zero_copies -
					    cs0.ddp_zero_copies),
		       (unsigned long long)(cs1.ddp_caller_regs -
					    cs0.ddp_caller_regs),
		       (unsigned long long)(cs1.read_chunks - cs0.read_chunks),
		       (unsigned long long)(cs1.write_chunks -
					    cs0.write_chunks),
		       (unsigned long long)(cs1.reply_chunks -
					    cs0.reply_chunks),
		       (unsigned long long)(cs1.long_calls - cs0.long_calls),
		       foreign,
		       (unsigned long long)(s1.ddp_copies - s0.ddp_copies),
		       (unsigned long long)(s1.read_chunks - s0.read_chunks),
		       (unsigned long long)(s1.write_chunks - s0.write_chunks),
		       (unsigned long long)(cs1.calls - cs0.calls),
		       (unsigned long long)(cs1.invalidations -
					    cs0.invalidations),
		       (unsigned long long)(cs1.remote_invalidations -
					    cs0.remote_invalidations),
		       rdma_version(ctl));
	}
	fflush(stdout);
	tcp_quick_exit();
	for (i = 0; i < t; i++) {
		if (!shared && w[i].cl != ctl)
			clnt_destroy(w[i].cl);
		free(w[i].buf);
		free(w[i].rbuf);
	}
	clnt_destroy(ctl);
	free(w);
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
	c0 = vmrss_kb();
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
	c1 = vmrss_kb();
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

static int client_main(void)
{
	unsigned int budget = 60;

	signal(SIGPIPE, SIG_IGN);
	test_name = o.test;
	if (!strcmp(o.test, "rate") || !strcmp(o.test, "write") ||
	    !strcmp(o.test, "read")) {
		if (o.seconds <= 0)
			o.seconds = 2;
		budget += (unsigned int)o.seconds + 2 * CALL_TIMEOUT_S;
	} else if (!strcmp(o.test, "lat")) {
		budget += o.seconds > 0 ? (unsigned int)o.seconds :
					  (unsigned int)(o.calls / 100);
	} else
		budget += o.conns;
	alarm(budget);
	if (!strcmp(o.test, "lat"))
		return test_lat();
	if (!strcmp(o.test, "rate"))
		return test_threads(K_ECHO);
	if (!strcmp(o.test, "write"))
		return test_threads(K_WRITE);
	if (!strcmp(o.test, "read"))
		return test_threads(K_READ);
	if (!strcmp(o.test, "idle"))
		return test_idle();
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
		default:
			usage();
		}
	}
	if (strcmp(o.netid, "rdma") && strcmp(o.netid, "tcp"))
		usage();
	if (!o.port || o.port > 65535 || !o.size || o.size > RB_MAXDATA ||
	    !o.calls)
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
