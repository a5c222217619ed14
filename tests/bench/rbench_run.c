/*
 * rbench_run.c - the engine of the RDMA benchmark (rbench_run.h): the
 * server procedures of RBENCH_PROG, its embedded Upper-Layer Binding
 * table, and the timed client runs with their counters and data checks,
 * for rpcrdma-bench(1) and the VM driver's rbench alike, so that both
 * measure with the same code.
 *
 * Data checks: the pattern of rb_octet() does not repeat every 256 octets,
 * so that data placed at a wrong page or chunk offset shows.  The buffers
 * that receive data are zeroed after each check, so data that did not
 * arrive shows too.  WRITE data is checked by the server (RB_WRITE_CHECK,
 * a new seed each time), READ and ECHO data by the client.  The timed calls
 * are checked only with check_all: a check reads every octet, which costs
 * about as much as moving it, and would halve the figures of a fast HCA.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "tests/bench/rbench_run.h"

/* rbench_ulb.c, generated from rbench.conf (tests/bench/rbench.am). */
extern const char rb_ulb_conf[];

static void say(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

double rb_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static uint64_t cpu_us(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000u +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

unsigned long long rb_vmrss_kb(void)
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

/*
 * (seed + i) alone repeats every 256 octets, so a page placed at the wrong
 * offset would pass: the terms in i >> 8 and i >> 16 make two octets 256
 * or 65536 apart differ.
 */
unsigned char rb_octet(unsigned int seed, size_t i)
{
	return (unsigned char)(seed + i + 7 * (i >> 8) + 13 * (i >> 16));
}

static void fill(char *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (char)rb_octet(seed, i);
}

/* The offset of the first octet of p that is not the pattern, or n. */
static size_t first_bad(const char *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)p[i] != rb_octet(seed, i))
			return i;
	return n;
}

/*
 * The table goes through the library's own parser (rpcrdma_ulb_load), from
 * an anonymous file: nothing to install, nothing left behind.
 */
bool rb_ulb_load(char *err, size_t len)
{
	size_t n = strlen(rb_ulb_conf);
	char path[64];
	int fd, bad;

	fd = memfd_create("rbench.conf", MFD_CLOEXEC);
	if (fd < 0) {
		say(err, len, "memfd_create: %s", strerror(errno));
		return false;
	}
	if (write(fd, rb_ulb_conf, n) != (ssize_t)n) {
		say(err, len, "writing the ULB table: %s", strerror(errno));
		close(fd);
		return false;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	bad = rpcrdma_ulb_load(path);
	close(fd);
	if (bad < 0)
		say(err, len, "rpcrdma_ulb_load(%s): %s", path,
		    strerror(errno));
	else if (bad)
		say(err, len, "%d entries of the built-in ULB table refused",
		    bad);
	else if (rpcrdma_ulb_lookup(RBENCH_PROG, RBENCH_VERS, RB_READ,
				    RPCRDMA_ULB_REPLY, NULL))
		say(err, len, "the ULB table has no entry for RB_READ");
	else
		return true;
	return false;
}

/* ---- Server procedures ---------------------------------------------------- */

static bool srv_rdma = true;
static void (*srv_mark)(const char *label);
static uint64_t srv_requests;
static char *read_buf; /* RB_READ's results: never freed */
static size_t read_cap;
static unsigned int read_seed;

void rb_srv_set_rdma(bool rdma)
{
	srv_rdma = rdma;
}

void rb_srv_set_mark(void (*mark)(const char *label))
{
	srv_mark = mark;
}

/* Not counted in srv_requests: a marker is no call of the benchmark. */
bool_t rb_mark_1_svc(rb_label *arg, void *res, struct svc_req *rq)
{
	if (srv_mark && *arg)
		srv_mark(*arg);
	return TRUE;
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

bool_t rb_write_check_1_svc(rb_check_args *arg, rb_check_res *res,
			    struct svc_req *rq)
{
	u_int n = arg->data.data_len;
	const char *d = arg->data.data_val;

	srv_requests++;
	res->count = n;
	res->bad = 0;
	res->first_bad = (u_int)first_bad(d, n, arg->seed);
	for (u_int i = res->first_bad; i < n; i++)
		if ((unsigned char)d[i] != rb_octet(arg->seed, i))
			res->bad++;
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
	res->vmrss_kb = rb_vmrss_kb();
	res->requests = srv_requests;
	res->pid = (int)getpid();
	memset(&st, 0, sizeof(st));
	if (srv_rdma && SVC_CONTROL(rq->rq_xprt, SVCGET_RDMA_STATS, &st)) {
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

/* ---- Client: single calls -------------------------------------------------- */

const char *rb_clnt_why(CLIENT *cl, bool rdma, enum clnt_stat st)
{
	static __thread char buf[RPCRDMA_ERRMSG_LEN + 128];
	char em[RPCRDMA_ERRMSG_LEN] = "";

	if (rdma)
		clnt_control(cl, CLGET_RDMA_ERRMSG, em);
	snprintf(buf, sizeof(buf), "%s%s%s", clnt_sperrno(st), *em ? ": " : "",
		 em);
	return buf;
}

bool rb_null(CLIENT *cl, bool rdma, char *err, size_t len)
{
	enum clnt_stat s = rb_null_1(NULL, NULL, cl);

	if (s == RPC_SUCCESS)
		return true;
	say(err, len, "RB_NULL: %s", rb_clnt_why(cl, rdma, s));
	return false;
}

bool rb_srv_stats(CLIENT *cl, bool rdma, rb_stats *st, char *err, size_t len)
{
	enum clnt_stat s;

	memset(st, 0, sizeof(*st));
	s = rb_stats_1(NULL, st, cl);
	if (s == RPC_SUCCESS)
		return true;
	say(err, len, "RB_STATS: %s", rb_clnt_why(cl, rdma, s));
	return false;
}

static bool clnt_counters(struct rb_run *r, struct rpcrdma_clnt_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (r->rdma && !clnt_control(r->cl, CLGET_RDMA_STATS, (char *)st)) {
		say(r->err, sizeof(r->err), "CLGET_RDMA_STATS refused");
		return false;
	}
	return true;
}

/* The RPC-over-RDMA version in force; 0 over tcp. */
static bool rdma_version(struct rb_run *r)
{
	r->res.rdma_version = 0;
	if (r->rdma && !clnt_control(r->cl, CLGET_RDMA_VERSION,
				     (char *)&r->res.rdma_version)) {
		say(r->err, sizeof(r->err), "CLGET_RDMA_VERSION refused");
		return false;
	}
	return true;
}

/* The counters around a run: a snapshot before, differences after. */
struct snapshot {
	struct rpcrdma_clnt_stats clnt;
	rb_stats srv;
};

/* res = after - before, counter by counter; the levels as they are after. */
static void clnt_diff(struct rpcrdma_clnt_stats *res,
		      const struct rpcrdma_clnt_stats *a,
		      const struct rpcrdma_clnt_stats *b)
{
#define X(f) res->f = a->f - b->f;
	RB_CLNT_COUNTERS(X)
#undef X
	res->credits = a->credits;
	res->max_granted = a->max_granted;
	res->max_inflight = a->max_inflight;
}

static void srv_diff(rb_stats *res, const rb_stats *a, const rb_stats *b)
{
	res->utime_us = a->utime_us - b->utime_us;
	res->stime_us = a->stime_us - b->stime_us;
	res->vmrss_kb = a->vmrss_kb;
	res->requests = a->requests - b->requests;
	res->ddp_copies = a->ddp_copies - b->ddp_copies;
	res->read_chunks = a->read_chunks - b->read_chunks;
	res->write_chunks = a->write_chunks - b->write_chunks;
	res->conns_active = a->conns_active;
	res->pid = a->pid;
}

static void diff(struct rb_result *res, const struct snapshot *a,
		 const struct snapshot *b)
{
	clnt_diff(&res->clnt, &a->clnt, &b->clnt);
	srv_diff(&res->srv, &a->srv, &b->srv);
}

/* ---- Client: NULL round trips ---------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Room for call i of the round trips in *us (of *cap): without a count the
 * array grows as the calls go. */
static bool lat_room(struct rb_run *r, double **us, size_t *cap, size_t i)
{
	size_t n = *cap * 2;
	double *p;

	if (i < *cap)
		return true;
	if (n <= i)
		n = i < 4096 ? 4096 : i + 1;
	p = realloc(*us, n * sizeof(*p));
	if (!p) {
		say(r->err, sizeof(r->err), "out of memory");
		return false;
	}
	*us = p;
	*cap = n;
	return true;
}

static void lat_result(struct rb_run *r, double *us, size_t n, double sum,
		       uint64_t cpu, const struct snapshot *s0,
		       const struct snapshot *s1)
{
	struct rb_result *res = &r->res;

	qsort(us, n, sizeof(*us), cmp_double);
	res->calls = n;
	res->median_us = us[n / 2];
	res->p99_us = us[(size_t)((double)n * 0.99)];
	res->mean_us = sum / (double)n;
	res->cli_cpu_us = (double)cpu / (double)n;
	res->srv_cpu_us = (double)((s1->srv.utime_us + s1->srv.stime_us) -
				   (s0->srv.utime_us + s0->srv.stime_us)) /
			  (double)n;
	diff(res, s1, s0);
}

bool rb_lat(struct rb_run *r)
{
	size_t n = r->calls, cap = 0, i,
	       warm = !n	   ? RB_WARMUP_NULL :
		      n / 10 < 50  ? 50 :
		      n / 10 > 200 ? 200 :
				     n / 10;
	double *us = NULL, sum = 0, t0, t1;
	double limit = r->seconds > 0 ? r->seconds * 1e6 : 0;
	struct snapshot s0, s1;
	uint64_t c0, c1;
	bool ok = false;

	memset(&r->res, 0, sizeof(r->res));
	r->res.clients = 1;
	if (!lat_room(r, &us, &cap, n ? n - 1 : 0))
		return false;
	for (i = 0; i < warm; i++)
		if (!rb_null(r->cl, r->rdma, r->err, sizeof(r->err)))
			goto out;
	/* as rbench always took them: the server's counters first, then
	 * the client's, and the other way round after the run */
	if (!rb_srv_stats(r->cl, r->rdma, &s0.srv, r->err, sizeof(r->err)) ||
	    !clnt_counters(r, &s0.clnt))
		goto out;
	c0 = cpu_us();
	t0 = rb_now_us();
	for (i = 0; !n || i < n; i++) {
		double t;

		if (!lat_room(r, &us, &cap, i))
			goto out;
		t = rb_now_us();
		if (!rb_null(r->cl, r->rdma, r->err, sizeof(r->err)))
			goto out;
		us[i] = rb_now_us() - t;
		sum += us[i];
		/* on time: after RB_MIN_LAT_CALLS calls at least */
		if (limit && i + 1 >= RB_MIN_LAT_CALLS &&
		    rb_now_us() - t0 > limit) {
			i++;
			break;
		}
	}
	t1 = rb_now_us();
	c1 = cpu_us();
	if (!clnt_counters(r, &s1.clnt) ||
	    !rb_srv_stats(r->cl, r->rdma, &s1.srv, r->err, sizeof(r->err)))
		goto out;
	lat_result(r, us, i, sum, c1 - c0, &s0, &s1);
	r->res.seconds = (t1 - t0) / 1e6;
	ok = rdma_version(r);
out:
	free(us);
	return ok;
}

/* ---- Client: threads of ECHO, WRITE or READ calls --------------------------- */

struct bulk;

struct worker {
	pthread_t th;
	struct rb_run *r;
	struct bulk *b;
	CLIENT *cl;
	unsigned int seed; /* of the next checked WRITE */
	char *buf;	   /* ECHO, WRITE: the data sent */
	char *rbuf;	   /* ECHO, READ: where the results go */
	unsigned long calls;
	unsigned long foreign; /* READ: results not in our buffer */
	unsigned long checked;
	double t_end; /* the end of its timed calls */
	char err[RB_ERRLEN];
};

struct bulk {
	enum rb_kind kind;
	unsigned int nw; /* workers prepared */
	struct worker *w;
	atomic_bool stop;    /* end of the timed part (time or a failure) */
	atomic_bool failed;  /* a worker failed: no final check */
	atomic_ulong issued; /* timed calls begun, with a count */
	/* the start: every worker made its warm-up call */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned int ready;
	bool go;
};

#define READ_SEED 7 /* one server buffer, filled once */

static const char *kind_name(enum rb_kind kind)
{
	return kind == RB_ECHO_CALLS  ? "ECHO" :
	       kind == RB_WRITE_CALLS ? "WRITE" :
	       kind == RB_NULL_CALLS  ? "NULL" :
					"READ";
}

static enum clnt_stat echo_call(struct worker *w, bool check)
{
	size_t size = w->r->size;
	rb_echo a = { { (u_int)size, w->buf } };
	rb_echo res = { { (u_int)size, w->rbuf } };
	enum clnt_stat s = rb_echo_1(&a, &res, w->cl);

	if (s != RPC_SUCCESS)
		return s;
	if (res.data.data_len != size || res.data.data_val != w->rbuf ||
	    (check && memcmp(w->rbuf, w->buf, size))) {
		say(w->err, sizeof(w->err), "ECHO: data mismatch");
		return RPC_SUCCESS;
	}
	if (check) {
		memset(w->rbuf, 0, size);
		w->checked++;
	}
	return RPC_SUCCESS;
}

/* The server's check of every octet, a new pattern each time, so that
 * data left from an earlier call cannot pass. */
static enum clnt_stat write_check_call(struct worker *w)
{
	size_t size = w->r->size;
	unsigned int seed = w->seed++;
	rb_check_args a = { seed, { (u_int)size, w->buf } };
	rb_check_res res = { 0, 0, 0 };
	enum clnt_stat s;

	fill(w->buf, size, seed);
	s = rb_write_check_1(&a, &res, w->cl);
	if (s != RPC_SUCCESS)
		return s;
	if (res.count != size || res.bad)
		say(w->err, sizeof(w->err),
		    "WRITE: data mismatch: the server received %u octets (want %zu), %u differ, the first at offset %u",
		    res.count, size, res.bad, res.first_bad);
	else
		w->checked++;
	return RPC_SUCCESS;
}

static enum clnt_stat write_call(struct worker *w, bool check)
{
	size_t size = w->r->size;
	rb_write_args a = { (u_int)size, { (u_int)size, w->buf } };
	rb_write_res res = { 0, 0 };
	u_int sum = (u_int)(unsigned char)w->buf[0] +
		    (unsigned char)w->buf[size - 1];
	enum clnt_stat s;

	if (check)
		return write_check_call(w);
	s = rb_write_1(&a, &res, w->cl);
	if (s == RPC_SUCCESS && (res.count != size || res.check != sum))
		say(w->err, sizeof(w->err),
		    "WRITE: server got %u octets, check %u (want %zu, %u)",
		    res.count, res.check, size, sum);
	return s;
}

static enum clnt_stat read_call(struct worker *w, bool check)
{
	size_t size = w->r->size, bad;
	/* The caller's buffer: data_len is its capacity. */
	rb_read_args a = { (u_int)size, READ_SEED };
	rb_read_res res = { 0, { (u_int)size, w->rbuf } };
	enum clnt_stat s = rb_read_1(&a, &res, w->cl);

	if (s != RPC_SUCCESS)
		return s;
	if (res.count != size || res.data.data_len != size) {
		say(w->err, sizeof(w->err), "READ: %u octets, want %zu",
		    res.data.data_len, size);
	} else if (check) {
		/* a result in memory of the library's own is counted
		 * (foreign) and checked as well */
		bad = first_bad(res.data.data_val, size, READ_SEED);
		if (bad < size)
			say(w->err, sizeof(w->err),
			    "READ: data mismatch: octet %zu of %zu differs",
			    bad, size);
		else
			w->checked++;
		memset(w->rbuf, 0, size);
	}
	if (res.data.data_val != w->rbuf) {
		w->foreign++;
		free(res.data.data_val);
	}
	return RPC_SUCCESS;
}

/* One call; false, with the reason in w->err, if it failed or its data
 * was wrong. */
static bool one_call(struct worker *w, bool check)
{
	enum clnt_stat s;

	switch (w->b->kind) {
	case RB_NULL_CALLS:
		s = rb_null_1(NULL, NULL, w->cl);
		break;
	case RB_ECHO_CALLS:
		s = echo_call(w, check);
		break;
	case RB_WRITE_CALLS:
		s = write_call(w, check);
		break;
	default:
		s = read_call(w, check);
	}
	if (s != RPC_SUCCESS)
		say(w->err, sizeof(w->err), "%s: %s", kind_name(w->b->kind),
		    rb_clnt_why(w->cl, w->r->rdma, s));
	return !w->err[0];
}

/* Another timed call?  With a count, the threads take calls from it. */
static bool more(struct worker *w)
{
	if (atomic_load(&w->b->stop))
		return false;
	return !w->r->calls || atomic_fetch_add(&w->b->issued, 1) < w->r->calls;
}

static void fail_all(struct bulk *b)
{
	atomic_store(&b->failed, true);
	atomic_store(&b->stop, true);
}

/* Ready, then wait for the others. */
static void gate(struct bulk *b)
{
	pthread_mutex_lock(&b->mu);
	b->ready++;
	pthread_cond_broadcast(&b->cv);
	while (!b->go)
		pthread_cond_wait(&b->cv, &b->mu);
	pthread_mutex_unlock(&b->mu);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct bulk *b = w->b;
	bool counted = w->r->calls != 0;
	unsigned long n = 0;

	/* a checked warm-up call, then the timed loop */
	if (!one_call(w, true))
		fail_all(b);
	gate(b);
	while (more(w)) {
		if (!one_call(w, w->r->check_all)) {
			fail_all(b);
			break;
		}
		/* on time, a call that ends after the stop is not counted */
		if (counted || !atomic_load(&b->stop))
			n++;
	}
	w->t_end = rb_now_us();
	/* one more checked call: the data is still right after the run */
	if (!atomic_load(&b->failed) && !one_call(w, true))
		atomic_store(&b->failed, true);
	w->calls = n;
	return NULL;
}

static bool bulk_prepare(struct rb_run *r, struct bulk *b)
{
	unsigned int i;

	b->w = calloc(r->threads, sizeof(*b->w));
	if (!b->w) {
		say(r->err, sizeof(r->err), "out of memory");
		return false;
	}
	for (i = 0; i < r->threads; i++) {
		struct worker *w = &b->w[i];

		w->r = r;
		w->b = b;
		w->seed = 1 + 37 * i;
		w->cl = !r->connect || !i ? r->cl :
					    r->connect(r->err, sizeof(r->err));
		if (!w->cl)
			return false;
		b->nw = i + 1;
		w->buf = malloc(r->size);
		w->rbuf = malloc(r->size);
		if (!w->buf || !w->rbuf) {
			say(r->err, sizeof(r->err),
			    "out of memory for %u x 2 buffers of %zu octets",
			    r->threads, r->size);
			return false;
		}
		fill(w->buf, r->size, 3 + i);
		memset(w->rbuf, 0, r->size);
	}
	return true;
}

/* Until the time is up, the count begun, or a worker failed. */
static void bulk_wait(struct rb_run *r, struct bulk *b, double t0)
{
	while (!atomic_load(&b->stop) &&
	       (!r->calls || atomic_load(&b->issued) < r->calls) &&
	       rb_now_us() - t0 < r->seconds * 1e6)
		usleep(10000);
}

/* Start the workers together once each made its warm-up call, let them
 * run for the time or the count, join them; *t0 and *t1 bound the timed
 * part.  Every worker started is joined, whatever fails. */
static bool bulk_go(struct rb_run *r, struct bulk *b, double *t0, double *t1)
{
	unsigned int i, started;

	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->cv, NULL);
	for (started = 0; started < r->threads; started++)
		if (pthread_create(&b->w[started].th, NULL, worker_main,
				   &b->w[started]))
			break;
	if (started < r->threads) {
		say(r->err, sizeof(r->err), "cannot start thread %u of %u",
		    started + 1, r->threads);
		fail_all(b);
	}
	pthread_mutex_lock(&b->mu);
	while (b->ready < started)
		pthread_cond_wait(&b->cv, &b->mu);
	b->go = true;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
	*t0 = rb_now_us();
	if (!r->calls || r->seconds > 0) {
		bulk_wait(r, b, *t0);
		atomic_store(&b->stop, true);
	}
	*t1 = rb_now_us();
	for (i = 0; i < started; i++)
		pthread_join(b->w[i].th, NULL);
	pthread_cond_destroy(&b->cv);
	pthread_mutex_destroy(&b->mu);
	/* by count, the timed part ends with the last call */
	if (r->calls) {
		*t1 = *t0;
		for (i = 0; i < started; i++)
			if (b->w[i].t_end > *t1)
				*t1 = b->w[i].t_end;
	}
	return started == r->threads;
}

bool rb_bulk(struct rb_run *r, enum rb_kind kind)
{
	struct snapshot s0, s1;
	struct bulk *b;
	unsigned int i;
	double t0, t1;

	memset(&r->res, 0, sizeof(r->res));
	r->err[0] = '\0';
	if (!r->threads || r->threads > RB_MAX_THREADS) {
		say(r->err, sizeof(r->err), "bad thread count %u", r->threads);
		return false;
	}
	if (!r->size || r->size > RB_MAXDATA ||
	    (kind == RB_ECHO_CALLS && r->size > RB_ECHO_MAX)) {
		say(r->err, sizeof(r->err), "%s data cannot be %zu octets",
		    kind_name(kind), r->size);
		return false;
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		say(r->err, sizeof(r->err), "out of memory");
		return false;
	}
	b->kind = kind;
	r->priv = b;
	/* as rbench always took them: client counters first, then the
	 * server's, and the other way round after the run */
	if (!bulk_prepare(r, b) || !clnt_counters(r, &s0.clnt) ||
	    !rb_srv_stats(r->cl, r->rdma, &s0.srv, r->err, sizeof(r->err)) ||
	    !bulk_go(r, b, &t0, &t1))
		return false;
	for (i = 0; i < r->threads; i++) {
		if (b->w[i].err[0]) {
			memcpy(r->err, b->w[i].err, sizeof(r->err));
			return false;
		}
		r->res.calls += b->w[i].calls;
		r->res.foreign += b->w[i].foreign;
		r->res.checked += b->w[i].checked;
	}
	r->res.seconds = (t1 - t0) / 1e6;
	r->res.clients = r->connect ? r->threads : 1;
	if (!rb_srv_stats(r->cl, r->rdma, &s1.srv, r->err, sizeof(r->err)) ||
	    !clnt_counters(r, &s1.clnt))
		return false;
	diff(&r->res, &s1, &s0);
	return rdma_version(r);
}

/* ---- Client: calls for an instruction counter ----------------------------- */

#define COUNT_WARMUP	  20 /* small calls before the segments */
#define COUNT_WARMUP_BULK 2  /* calls with data in a chunk */

/* RB_MARK with label: the server cuts its counts. */
static bool mark_server(struct rb_run *r, const char *label)
{
	rb_label l = (rb_label)label;
	enum clnt_stat s = rb_mark_1(&l, NULL, r->cl);

	if (s == RPC_SUCCESS)
		return true;
	say(r->err, sizeof(r->err), "RB_MARK: %s",
	    rb_clnt_why(r->cl, r->rdma, s));
	return false;
}

bool rb_count(struct rb_run *r, enum rb_kind kind, const char *name,
	      const unsigned long *seg, unsigned int nseg,
	      const struct rb_count_hooks *hooks)
{
	char label[RB_MARK_MAX + 1];
	unsigned long i, warm = COUNT_WARMUP;
	struct worker *w;
	struct bulk *b;
	unsigned int s;

	memset(&r->res, 0, sizeof(r->res));
	r->err[0] = '\0';
	r->threads = 1;
	r->connect = NULL;
	if (kind == RB_ECHO_CALLS)
		r->size = RB_ECHO_SIZE;
	else if (kind != RB_NULL_CALLS)
		warm = COUNT_WARMUP_BULK;
	if (!r->size || r->size > RB_MAXDATA) {
		say(r->err, sizeof(r->err), "%s data cannot be %zu octets",
		    kind_name(kind), r->size);
		return false;
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		say(r->err, sizeof(r->err), "out of memory");
		return false;
	}
	b->kind = kind;
	r->priv = b;
	if (!bulk_prepare(r, b))
		return false;
	w = &b->w[0];
	for (i = 0; i < warm; i++)
		if (!one_call(w, i == 0))
			goto fail;
	snprintf(label, sizeof(label), "%s 0", name);
	if (!mark_server(r, label))
		return false;
	for (s = 0; s < nseg; s++) {
		snprintf(label, sizeof(label), "%s %u", name, s + 1);
		if (hooks->mark)
			hooks->mark(label, true);
		for (i = 0; i < seg[s]; i++) {
			if (hooks->gap)
				hooks->gap();
			if (!one_call(w, false))
				goto fail;
		}
		if (hooks->mark)
			hooks->mark(label, false);
		if (!mark_server(r, label))
			return false;
		r->res.calls += seg[s];
	}
	/* the data is still right after the counted calls */
	if (!one_call(w, true))
		goto fail;
	return rdma_version(r);
fail:
	memcpy(r->err, w->err, sizeof(r->err));
	return false;
}

void rb_run_free(struct rb_run *r)
{
	struct bulk *b = r->priv;
	unsigned int i;

	if (!b)
		return;
	for (i = 0; i < b->nw; i++) {
		if (b->w[i].cl && b->w[i].cl != r->cl)
			clnt_destroy(b->w[i].cl);
		free(b->w[i].buf);
		free(b->w[i].rbuf);
	}
	free(b->w);
	free(b);
	r->priv = NULL;
}
