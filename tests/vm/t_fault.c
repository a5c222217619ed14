/*
 * t_fault.c - fault injection: connections dropped at random
 * points of 64 MiB transfers, from the server's side and from the
 * client's; the server killed (SIGKILL) while 16 clients of 8 threads
 * call it, then restarted; a client killed while the server reads its
 * chunks.  What must hold throughout:
 *   - every caller gets a correct result or an RPC error, never wrong data;
 *   - clients that have nothing to do with the fault go on undisturbed;
 *   - after a drop or a restart every client gets through again (it
 *     reconnects: the library never resends a call by itself);
 *   - nothing leaks: servers end with exit status 0 on SIGTERM and client
 *     processes with 0, which under the ASan build (LeakSanitizer) means no
 *     leak, and a dropped connection gives its fds back.
 *
 * The transfers, each 64 MiB of the t_fill pattern:
 *   long   rtest ECHO: a Long Call (the server pulls its Position-Zero Read
 *          chunk by RDMA Read) and a Long reply (RDMA Write into the Reply
 *          chunk)
 *   reply  rtest FILL: the Reply chunk alone
 *   write  ddpt READ: a Write chunk (ddpt.conf's binding, both sides)
 * Each kind is first sent undisturbed at 8 MiB, counting the packets the
 * device sends; the drops then come once a random share of eight times as
 * many packets went out for the 64 MiB transfer (the seed is printed;
 * VM_FAULT_SEED repeats it).
 *
 * Parts, one per process (the program's name fault-PART, or --only PART):
 *   drop-server  the server drops every connection (SIGUSR1: it destroys
 *                its listener and listens again, t_sig_relisten) in the
 *                middle of a transfer of the project's CLIENT
 *   drop-client  a raw client (t_svc_util.h) ends its connection in the
 *                middle of the same transfers, while a witness CLIENT of
 *                the same server calls on and must see nothing
 *   kill-server  16 processes x 8 threads, the server SIGKILLed and
 *                started again on its port
 *   kill-client  a CLIENT process SIGKILLed while the server pulls its
 *                64 MiB Long Call (seen by the server's resident memory
 *                growing by the registered sink), a witness calling on
 *
 * One line per check; exit 0 only when all passed, 77 without a device.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "ddpt.h"
#include "rtest.h"
#include "tests/vm/t_clnt_util.h"
#include "tests/vm/t_ddp_util.h"
#include "tests/vm/t_svc_util.h"

#define BIG	   (64u * MiB)
#define PROBE	   (8u * MiB) /* sent undisturbed: BIG takes 8x the packets */
#define WATCHDOG_S 115	      /* the suite kills at VM_TEST_TIMEOUT */
#define NPROC	   16	      /* kill-server: client processes ... */
#define NTHREAD	   8	      /* ... of this many threads each */

static struct ts_server srv;  /* rtest_server */
static struct ts_server dsrv; /* ddpt_server */
static uint32_t seed;

enum kind {
	K_LONG,
	K_REPLY,
	K_WRITE,
	K_NR
};

static const char *const kind_name[K_NR] = {
	"Long call + Reply chunk (ECHO)",
	"Reply chunk (FILL)",
	"Write chunk (READ)",
};

static uint32_t rnd(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 17;
	seed ^= seed << 5;
	return seed;
}

/* ---- Servers ------------------------------------------------------------ */

/* rtest_server on port (0: any), room for a 64 MiB Long Call. */
static int start_rtest(uint16_t port)
{
	static char p[16];
	static const char *args[] = { "-c", "16", "--max-read", "80000000",
				      "-p", p,	  NULL };

	snprintf(p, sizeof(p), "%u", port);
	return ts_server_start(&srv, t_addr4(), args);
}

static void stop(struct ts_server *s, const char *name)
{
	int st;

	if (s->pid <= 0)
		return;
	st = ts_server_stop(s);
	CHECK(st == 0, "%s: SIGTERM, exit status %d (ASan: no leak)", name, st);
}

/* The fds a process holds (a dropped connection gives its own back). */
static int fds_of(pid_t pid)
{
	return ts_proc_fds(pid);
}

/* What pid holds once the count stays the same for a second (10 s at
 * most): connections that ended may take a moment to be freed. */
static int fds_settled(pid_t pid)
{
	int64_t end = t_ms() + 10000;
	int n = fds_of(pid), same = 0, m;

	while (same < 4 && t_ms() < end) {
		usleep(250000);
		m = fds_of(pid);
		same = m == n ? same + 1 : 0;
		n = m;
	}
	return n;
}

/* Wait until pid holds at most want fds again (10 s). */
static int fds_back(pid_t pid, int want)
{
	int64_t end = t_ms() + 10000;
	int n;

	while ((n = fds_of(pid)) > want && t_ms() < end)
		usleep(50000);
	return n;
}

/* ---- CLIENTs ------------------------------------------------------------ */

/* max_reply: the Reply chunk every call of rtest offers (it has no binding
 * on the client): BIG for the 64 MiB transfers, else the default. */
static CLIENT *client(const struct ts_server *s, rpcprog_t prog, rpcvers_t vers,
		      bool big)
{
	return td_client_sized(s, prog, vers, RPCRDMA_REG_AUTO,
			       big ? BIG + 64 * 1024 : 0, 60);
}

/* How long the latest RPC of this thread took, from clnt_call to its
 * return: without making the arguments and checking the result, which
 * under TCG take seconds for 64 MiB. */
static __thread int64_t call_ms;
static void call_start(void)
{
	call_ms = t_ms();
}

/* What a call came to: a correct result, an RPC error, or wrong data. */
enum outcome {
	O_OK,
	O_ERR,
	O_WRONG
};

static const char *const outcome_name[] = { "correct", "an RPC error",
					    "WRONG DATA" };

static enum outcome judge(enum clnt_stat st, const void *p, u_int got,
			  u_int len, uint32_t s)
{
	if (st != RPC_SUCCESS)
		return O_ERR;
	return got == len && t_fill_check(p, len, s) < 0 ? O_OK : O_WRONG;
}

static enum outcome echo(CLIENT *cl, u_int len, uint32_t s)
{
	rtest_data in, out;
	enum clnt_stat st;
	enum outcome o;

	in.rtest_data_len = len;
	in.rtest_data_val = (char *)td_filled(len, s);
	memset(&out, 0, sizeof(out));
	call_start();
	st = rtest_echo_1(&in, &out, cl);
	call_ms = t_ms() - call_ms;
	o = judge(st, out.rtest_data_val, out.rtest_data_len, len, s);
	free(in.rtest_data_val);
	if (st == RPC_SUCCESS)
		xdr_free((xdrproc_t)xdr_rtest_data, (char *)&out);
	return o;
}

static enum outcome fill(CLIENT *cl, u_int len, uint32_t s)
{
	rtest_fill_args a = { .len = len, .seed = s };
	rtest_data out;
	enum clnt_stat st;
	enum outcome o;

	memset(&out, 0, sizeof(out));
	call_start();
	st = rtest_fill_1(&a, &out, cl);
	call_ms = t_ms() - call_ms;
	o = judge(st, out.rtest_data_val, out.rtest_data_len, len, s);
	if (st == RPC_SUCCESS)
		xdr_free((xdrproc_t)xdr_rtest_data, (char *)&out);
	return o;
}

/* ddpt READ of len octets: the result in a Write chunk. */
static enum outcome ddp_read(CLIENT *cl, u_int len, uint32_t s)
{
	ddpt_read_args a = { .count = len, .seed = s, .extra = 0 };
	ddpt_read_res res;
	enum clnt_stat st;
	enum outcome o;

	memset(&res, 0, sizeof(res));
	call_start();
	st = ddpt_read_1(&a, &res, cl);
	call_ms = t_ms() - call_ms;
	o = judge(st, res.data.data_val, res.data.data_len, len, s);
	if (st == RPC_SUCCESS)
		xdr_free((xdrproc_t)xdr_ddpt_read_res, (char *)&res);
	return o;
}

static enum outcome transfer(CLIENT *cl, enum kind k, u_int len, uint32_t s)
{
	switch (k) {
	case K_LONG:
		return echo(cl, len, s);
	case K_REPLY:
		return fill(cl, len, s);
	default:
		return ddp_read(cl, len, s);
	}
}

/* A few small calls until one is correct: the CLIENT got through again. */
static bool gets_through(CLIENT *cl, enum kind k)
{
	int i;

	for (i = 0; i < 20; i++) {
		if (transfer(cl, k, 100000, 7 + i) == O_OK)
			return true;
		usleep(200000);
	}
	return false;
}

/* ---- The witness: a CLIENT that calls on while faults happen elsewhere --- */

struct witness {
	CLIENT *cl;
	pthread_t th;
	atomic_bool stop;
	atomic_uint n[3]; /* by outcome */
};

static void *witness_run(void *arg)
{
	struct witness *w = arg;
	uint32_t i = 0;

	while (!atomic_load(&w->stop)) {
		u_int len = 1000 + (i * 7919) % 60000;

		atomic_fetch_add(&w->n[i % 2 ? fill(w->cl, len, i) :
					       echo(w->cl, len, i)],
				 1);
		i++;
		usleep(20000); /* a client among others, not a load */
	}
	return NULL;
}

static bool witness_start(struct witness *w)
{
	memset(w, 0, sizeof(*w));
	w->cl = client(&srv, RTEST_PROG, RTEST_VERS, false);
	CHECK(w->cl != NULL, "witness CLIENT to rtest_server");
	return w->cl && !pthread_create(&w->th, NULL, witness_run, w);
}

/* Stop it; its counts since start in n[]. */
static void witness_stop(struct witness *w, unsigned int n[3])
{
	atomic_store(&w->stop, true);
	pthread_join(w->th, NULL);
	for (int i = 0; i < 3; i++)
		n[i] = atomic_load(&w->n[i]);
	clnt_destroy(w->cl);
}

/* ---- Where in a transfer: packets on the wire --------------------------- */

/*
 * The drops must come at random points of a transfer, and time is a poor
 * measure of that under TCG (a 64 MiB call spends seconds making and
 * checking its data).  The device's count of packets sent is not: a probe
 * of PROBE octets gives the packets per octet of each kind, a drop is
 * injected once a random share of the packets the 64 MiB transfer needs
 * has been sent.
 */
static uint64_t sent_pkts(void)
{
	return tu_hw_counter("sent_pkts");
}

struct point {
	uint64_t base;	  /* sent_pkts when the transfer started */
	uint64_t at;	  /* ... the drop after this many more */
	uint64_t of;	  /* ... of about this many */
	atomic_bool done; /* the transfer ended on its own */
};

static void point_init(struct point *pt, uint64_t expect)
{
	pt->of = expect ? expect : 1;
	pt->at = 1 + rnd() % pt->of;
	pt->base = sent_pkts();
	atomic_store(&pt->done, false);
}

static bool point_reached(void *arg)
{
	struct point *pt = arg;

	return sent_pkts() - pt->base >= pt->at;
}

/* ---- drop-server -------------------------------------------------------- */

struct bg_call {
	CLIENT *cl;
	enum kind k;
	u_int len;
	uint32_t s;
	struct point *pt; /* done set at the end, if any */
	enum outcome o;
	int64_t ms;
	char why[RPCRDMA_ERRMSG_LEN];
};

static void *bg_run(void *arg)
{
	struct bg_call *b = arg;

	b->o = transfer(b->cl, b->k, b->len, b->s);
	b->ms = call_ms;
	if (b->o != O_OK && !clnt_control(b->cl, CLGET_RDMA_ERRMSG, b->why))
		b->why[0] = 0;
	if (b->pt)
		atomic_store(&b->pt->done, true);
	return NULL;
}

/* One undisturbed transfer of kind k and PROBE octets on cl: the packets
 * BIG should take (PROBE's, scaled), or 0. */
static uint64_t probe(CLIENT *cl, enum kind k)
{
	struct bg_call b = { .cl = cl, .k = k, .len = PROBE, .s = rnd() };
	uint64_t p0 = sent_pkts(), n;

	bg_run(&b);
	n = sent_pkts() - p0;
	CHECK(b.o == O_OK && n > 0,
	      "%s, 8 MiB, undisturbed: %s in %lld ms, %llu packets sent [%s]",
	      kind_name[k], outcome_name[b.o], (long long)b.ms,
	      (unsigned long long)n, b.o == O_OK ? "ok" : b.why);
	return b.o == O_OK ? n * (BIG / PROBE) : 0;
}

static void drop_server_kind(enum kind k)
{
	struct ts_server *s = k == K_WRITE ? &dsrv : &srv;
	rpcprog_t prog = k == K_WRITE ? DDPT_PROG : RTEST_PROG;
	struct point pt;
	struct bg_call b = { .k = k, .len = BIG, .s = rnd(), .pt = &pt };
	bool dropped = false;
	pthread_t th;

	b.cl = client(s, prog, 1, true);
	if (!b.cl) {
		CHECK(false, "%s: CLIENT", kind_name[k]);
		return;
	}
	point_init(&pt, probe(b.cl, k));
	pthread_create(&th, NULL, bg_run, &b);
	while (!atomic_load(&pt.done) && !dropped) {
		if (point_reached(&pt)) {
			kill(s->pid, SIGUSR1);
			dropped = true;
		}
		usleep(2000);
	}
	pthread_join(th, NULL);
	CHECK(b.o != O_WRONG,
	      "%s, 64 MiB, the server drops every connection %s %llu of about %llu packets: %s after %lld ms [%s]",
	      kind_name[k],
	      dropped ? "after" : "(not reached:", (unsigned long long)pt.at,
	      (unsigned long long)pt.of, outcome_name[b.o], (long long)b.ms,
	      !dropped	  ? "finished first)" :
	      b.o == O_OK ? "the reply was on its way" :
			    b.why);
	CHECK(gets_through(b.cl, k),
	      "%s: the same CLIENT gets through again (it reconnects)",
	      kind_name[k]);
	clnt_destroy(b.cl);
}

static void part_drop_server(void)
{
	struct witness w;
	unsigned int n[3];
	int k;

	if (!witness_start(&w))
		return;
	for (k = 0; k < K_NR; k++)
		drop_server_kind((enum kind)k);
	witness_stop(&w, n);
	/* rtest_server dropped it twice: errors allowed, wrong data never */
	CHECK(n[O_WRONG] == 0 && n[O_OK] > 0,
	      "witness on rtest_server through the drops: %u correct, %u RPC errors, %u wrong",
	      n[O_OK], n[O_ERR], n[O_WRONG]);
}

/* ---- drop-client -------------------------------------------------------- */

/* The raw client's version of kind k, 64 MiB, its connection ended at pt. */
static int raw_drop(struct tc *t, enum kind k, struct point *pt)
{
	static struct tc_reply rep;
	rtest_fill_args fa = { .len = BIG, .seed = 5 };
	ddpt_read_args ra = { .count = BIG, .seed = 6 };
	struct tc_call c = { .drop_when = point_reached, .drop_arg = pt };
	rtest_data d = { 0, NULL };
	int r;

	switch (k) {
	case K_LONG:
		d.rtest_data_len = BIG;
		d.rtest_data_val = (char *)td_filled(BIG, 4);
		c.proc = RTEST_ECHO;
		c.xargs = (xdrproc_t)xdr_rtest_data;
		c.args = &d;
		c.long_call = true;
		c.reply_chunk = BIG + 4096;
		break;
	case K_REPLY:
		c.proc = RTEST_FILL;
		c.xargs = (xdrproc_t)xdr_rtest_fill_args;
		c.args = &fa;
		c.reply_chunk = BIG + 4096;
		break;
	default:
		c.prog = DDPT_PROG;
		c.vers = DDPT_VERS;
		c.proc = DDPT_READ;
		c.xargs = (xdrproc_t)xdr_ddpt_read_args;
		c.args = &ra;
		c.write_segs = 1;
		c.write_seg_len = BIG;
		break;
	}
	pt->base = sent_pkts();
	r = tc_rpc(t, &c, NULL, NULL, &rep, 60000);
	free(d.rtest_data_val);
	return r;
}

/* fds0: what s holds with no connection but the witness's. */
static void drop_client_kind(enum kind k, uint64_t expect, int fds0)
{
	struct ts_server *s = k == K_WRITE ? &dsrv : &srv;
	struct tc_call null = { .proc = RTEST_NULL };
	static struct tc_reply rep;
	struct point pt;
	int fds1, r;
	struct tc c;

	if (k == K_WRITE)
		null.prog = DDPT_PROG, null.vers = DDPT_VERS;
	if (tc_connect(&c, s, 20000)) {
		CHECK(false, "%s: raw client connects", kind_name[k]);
		return;
	}
	point_init(&pt, expect);
	r = raw_drop(&c, k, &pt);
	tc_close(&c);
	fds1 = fds_back(s->pid, fds0);
	CHECK((r == -ECONNABORTED || r == 0) && fds1 == fds0,
	      "%s, 64 MiB, the client ends its connection %s %llu of about %llu packets: the server lets go (fds %d -> %d)",
	      kind_name[k], r ? "after" : "(not reached, answered first:",
	      (unsigned long long)pt.at, (unsigned long long)pt.of, fds0, fds1);
	CHECK(!tc_connect(&c, s, 20000) &&
		      !tc_rpc(&c, &null, NULL, NULL, &rep, 20000) && rep.rpc &&
		      rep.ar_stat == SUCCESS,
	      "%s: the server serves a new connection", kind_name[k]);
	tc_close(&c);
}

static void part_drop_client(void)
{
	uint64_t expect[K_NR];
	struct witness w;
	unsigned int n[3];
	int fds[2];
	CLIENT *cl;
	int k;

	for (k = 0; k < K_NR; k++) {
		cl = client(k == K_WRITE ? &dsrv : &srv,
			    k == K_WRITE ? DDPT_PROG : RTEST_PROG, 1, true);
		expect[k] = cl ? probe(cl, (enum kind)k) : 0;
		if (cl)
			clnt_destroy(cl);
	}
	if (!witness_start(&w))
		return;
	fds[0] = fds_settled(srv.pid);
	fds[1] = fds_settled(dsrv.pid);
	for (k = 0; k < K_NR; k++)
		drop_client_kind((enum kind)k, expect[k], fds[k == K_WRITE]);
	witness_stop(&w, n);
	CHECK(n[O_OK] > 0 && n[O_ERR] == 0 && n[O_WRONG] == 0,
	      "witness on rtest_server while clients dropped theirs: %u correct, %u RPC errors, %u wrong (other clients unaffected)",
	      n[O_OK], n[O_ERR], n[O_WRONG]);
}

/* ---- kill-server -------------------------------------------------------- */

/* Shared with the client processes (MAP_SHARED). */
struct board {
	atomic_int phase; /* 0 calling, 1 server killed, 2 restarted,
				 * 3 stop */
	struct {
		atomic_uint n[3];  /* by outcome */
		atomic_uint after; /* correct, begun after the restart */
		atomic_uint ready; /* threads that made a CLIENT */
	} c[NPROC];
};

struct kthread {
	struct board *b;
	CLIENT *cl;
	unsigned int proc, id;
};

static void *kthread_run(void *arg)
{
	struct kthread *k = arg;
	uint32_t i = k->id * 1000003u + k->proc * 7919u;
	int phase;

	while ((phase = atomic_load(&k->b->phase)) != 3) {
		u_int len = 1 + (i * 2654435761u) % (i % 5 ? 65536 : 600000);
		enum outcome o = i % 2 ? fill(k->cl, len, i) :
					 echo(k->cl, len, i);

		atomic_fetch_add(&k->b->c[k->proc].n[o], 1);
		if (o == O_OK && phase == 2)
			atomic_fetch_add(&k->b->c[k->proc].after, 1);
		if (o == O_ERR)
			usleep(100000); /* while the server is away */
		i++;
	}
	return NULL;
}

/* A client process: one CLIENT, NTHREAD threads; exit 1 on wrong data. */
static void kill_client_proc(struct board *b, unsigned int p)
{
	struct kthread k[NTHREAD];
	pthread_t th[NTHREAD];
	CLIENT *cl = NULL;
	unsigned int i;
	int64_t end = t_ms() + 30000;

	prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the test */
	while (!cl && t_ms() < end)
		if (!(cl = client(&srv, RTEST_PROG, RTEST_VERS, false)))
			usleep(200000);
	if (!cl)
		_exit(3);
	for (i = 0; i < NTHREAD; i++) {
		k[i] = (struct kthread){ .b = b, .cl = cl, .proc = p, .id = i };
		pthread_create(&th[i], NULL, kthread_run, &k[i]);
		atomic_fetch_add(&b->c[p].ready, 1);
	}
	for (i = 0; i < NTHREAD; i++)
		pthread_join(th[i], NULL);
	clnt_destroy(cl);
	exit(atomic_load(&b->c[p].n[O_WRONG]) ? 1 : 0);
}

/* Until every process has at least n of its counter f, or ms pass. */
static bool all_reach(struct board *b, bool after, unsigned int n, int ms)
{
	int64_t end = t_ms() + ms;
	unsigned int p, low;

	do {
		low = ~0u;
		for (p = 0; p < NPROC; p++) {
			unsigned int v = after ? atomic_load(&b->c[p].after) :
						 atomic_load(&b->c[p].n[O_OK]);

			low = v < low ? v : low;
		}
		if (low >= n)
			return true;
		usleep(100000);
	} while (t_ms() < end);
	return false;
}

static void part_kill_server(void)
{
	struct board *b = mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	unsigned int p, tot[3] = { 0 }, bad = 0;
	pid_t pid[NPROC];
	uint16_t port = srv.port;
	int st, r, i;

	if (b == MAP_FAILED) {
		CHECK(false, "shared memory");
		return;
	}
	memset(b, 0, sizeof(*b));
	fflush(stdout);
	for (p = 0; p < NPROC; p++) {
		pid[p] = fork();
		if (pid[p] == 0)
			kill_client_proc(b, p);
	}
	CHECK(all_reach(b, false, 3, 60000),
	      "%u client processes x %u threads, each with 3 correct calls or more",
	      NPROC, NTHREAD);
	usleep((rnd() % 1000) * 1000);
	kill(srv.pid, SIGKILL);
	waitpid(srv.pid, &st, 0);
	close(srv.out);
	srv.pid = 0;
	atomic_store(&b->phase, 1);
	NOTE("server killed (SIGKILL) with %u threads calling",
	     NPROC * NTHREAD);
	usleep(1000000);
	for (i = 0, r = -1; i < 10 && r; i++) {
		r = start_rtest(port);
		if (r)
			usleep(500000);
	}
	CHECK(r == 0 && srv.port == port, "server started again on port %u",
	      port);
	atomic_store(&b->phase, 2);
	CHECK(all_reach(b, true, 2, 60000),
	      "after the restart every client process gets correct results again (reconnected)");
	atomic_store(&b->phase, 3);
	for (p = 0; p < NPROC; p++) {
		r = waitpid(pid[p], &st, 0) == pid[p] && WIFEXITED(st) ?
			    WEXITSTATUS(st) :
			    -1;
		bad += r != 0;
		for (i = 0; i < 3; i++)
			tot[i] += atomic_load(&b->c[p].n[i]);
		if (r)
			NOTE("client process %u: exit %d, %u correct, %u errors, %u wrong",
			     p, r, atomic_load(&b->c[p].n[O_OK]),
			     atomic_load(&b->c[p].n[O_ERR]),
			     atomic_load(&b->c[p].n[O_WRONG]));
	}
	CHECK(tot[O_WRONG] == 0,
	      "server killed: %u correct results, %u RPC errors, %u wrong",
	      tot[O_OK], tot[O_ERR], tot[O_WRONG]);
	CHECK(bad == 0,
	      "every client process exits 0 after clnt_destroy (ASan: no leak)");
	munmap(b, sizeof(*b));
}

/* ---- kill-client -------------------------------------------------------- */

/* The listener's completion channel for the device comes with its first
 * connection and stays (one fd): make it before counting what a
 * connection holds. */
static int fds_warm(const struct ts_server *s)
{
	CLIENT *cl = client(s, RTEST_PROG, RTEST_VERS, false);

	if (cl) {
		echo(cl, 64, 1);
		clnt_destroy(cl);
	}
	return fds_settled(s->pid);
}

static void part_kill_client(void)
{
	long rss0 = ts_proc_kb(srv.pid, "VmRSS"), rss = rss0;
	int fds0 = fds_warm(&srv), fds1;
	int64_t end, at;
	struct witness w;
	unsigned int n[3];
	CLIENT *cl;
	pid_t pid;
	int st;

	/* the child first: it must not inherit a CLIENT of ours */
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		cl = client(&srv, RTEST_PROG, RTEST_VERS, true);
		for (;;) /* killed in the middle of one */
			if (!cl || echo(cl, BIG, 3) == O_WRONG)
				_exit(1);
	}
	if (!witness_start(&w)) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		return;
	}
	/* The server registers a sink of the whole PZRC before it reads:
	 * its resident memory grows by 64 MiB. */
	end = t_ms() + 60000;
	while (t_ms() < end &&
	       (rss = ts_proc_kb(srv.pid, "VmRSS")) - rss0 < 48 * 1024)
		usleep(20000);
	at = rnd() % 800;
	usleep((useconds_t)at * 1000);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	CHECK(rss - rss0 >= 48 * 1024,
	      "client SIGKILLed %lld ms after the server began to pull its 64 MiB Long Call (server RSS %ld -> %ld kB)",
	      (long long)at, rss0, rss);
	usleep(1000000);
	witness_stop(&w, n);
	CHECK(n[O_OK] > 0 && n[O_ERR] == 0 && n[O_WRONG] == 0,
	      "witness while the client died: %u correct, %u RPC errors, %u wrong (other clients unaffected)",
	      n[O_OK], n[O_ERR], n[O_WRONG]);
	/* both gone now: the server holds what it held before */
	fds1 = fds_back(srv.pid, fds0);
	CHECK(fds1 == fds0,
	      "the server let go of the dead client's connection (fds %d -> %d once the witness is gone too)",
	      fds0, fds1);
	cl = client(&srv, RTEST_PROG, RTEST_VERS, true);
	CHECK(cl && echo(cl, BIG, 8) == O_OK,
	      "a new client's 64 MiB ECHO afterwards: correct");
	if (cl)
		clnt_destroy(cl);
}

/* ---- Main --------------------------------------------------------------- */

static const char *const parts[] = { "drop-server", "drop-client",
				     "kill-server", "kill-client" };

static const char *part_of(int argc, char **argv)
{
	const char *b = strrchr(argv[0], '/');
	unsigned int i;

	b = b ? b + 1 : argv[0];
	if (argc == 3 && !strcmp(argv[1], "--only"))
		b = argv[2];
	else if (!strncmp(b, "fault-", 6))
		b += 6;
	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		if (!strcmp(b, parts[i]))
			return parts[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const struct td_env env[] = { { "RPCRDMA_ULB_CONF", DDPT_CONF } };
	struct ts_server *wd[TD_WATCHDOG_MAX] = { &srv, &dsrv };
	const char *part = part_of(argc, argv);
	const char *s = getenv("VM_FAULT_SEED");

	if (!part) {
		fprintf(stderr,
			"usage: t_fault --only drop-server|drop-client|kill-server|kill-client\n");
		return 2;
	}
	td_env_ensure(argv, env, 1); /* the ddpt binding, both sides */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!ts_have_rdma())
		return 77;
	seed = s ? (uint32_t)strtoul(s, NULL, 0) :
		   (uint32_t)time(NULL) ^ (uint32_t)getpid() << 16;
	seed = seed ? seed : 1;
	NOTE("%s, seed %u (VM_FAULT_SEED)", part, seed);
	td_watchdog(WATCHDOG_S, wd, 2);
	CHECK(start_rtest(0) == 0, "rtest_server listening on %s port %u",
	      t_addr4(), srv.port);
	if (!strncmp(part, "drop", 4))
		CHECK(td_server_start(&dsrv, "ddpt_server", t_addr4(),
				      DDPT_CONF) == 0,
		      "ddpt_server listening on %s port %u", t_addr4(),
		      dsrv.port);
	if (!t_failures) {
		if (!strcmp(part, "drop-server"))
			part_drop_server();
		else if (!strcmp(part, "drop-client"))
			part_drop_client();
		else if (!strcmp(part, "kill-server"))
			part_kill_server();
		else
			part_kill_client();
	}
	stop(&srv, "rtest_server");
	stop(&dsrv, "ddpt_server");
	return tu_done();
}
