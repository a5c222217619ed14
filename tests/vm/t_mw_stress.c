/*
 * t_mw_stress.c - memory window stress: many threads on ONE CLIENT made
 * with clnt_create(..., "rdma") against tests/vm/rtest_server, every call
 * offering a Reply chunk bound with a window (or registered, in MR mode)
 * over the connection's registration pool, results checked byte for byte,
 * then the CLIENT's counters: every exposure fenced, no error, one
 * connection.  Written to chase a single IBV_WC_MW_BIND_ERR seen once in a
 * benchmark (8 threads, 1 MiB Reply chunks, the calls then failing with
 * RPC_CANTRECV).
 *
 * Parts
 *   steady  REPLY entries bound the results of NULL, FILL and ECHO to
 *           1 MiB, so every call offers a Reply chunk of that size
 *           (rr_call.c reply_sizes()), all from the same size class of the
 *           pool.  Calls mix FILL with large results (up to
 *           1 MiB - 4 KiB: Reply chunk), FILL and ECHO with small ones
 *           (inline Reply, the chunk still offered and fenced) and ECHO of
 *           large arguments (Long Call: a read-only window over the Position
 *           Zero Read chunk too, so two windows per call).  rtest_server
 *           answers with plain Sends, so every window is invalidated
 *           locally (IBV_WR_LOCAL_INV) in v1; in v2 the window each call
 *           nominates is invalidated by the server's Send With Invalidate
 *           and counts as fenced too.
 *   grow    REPLY entries for FILL and ECHO (rpcrdma_ulb_register,
 *           reply_max = the requested or echoed length + 64) size each Reply
 *           chunk after its result,
 *           and threads alternate small results with large ones of
 *           different power-of-two classes (each thread its own order), plus
 *           Long ECHOs of varied sizes: the pool keeps registering new
 *           regions (rt_reg_buf_alloc) while other threads' binds and
 *           invalidations are in flight.  Several rounds, each on a new
 *           CLIENT (a new connection: an empty pool).
 *   Each part runs with RPCRDMA_REG_MODE=mw or mr (set before clnt_create:
 *   the variable is read when a connection is made, rt_reg.c env_mode()),
 *   and checks that the CLIENT really uses that mode.
 *
 * Usage
 *   t_mw_stress [--part steady|grow|all] [--mode mw|mr|both]
 *               [--threads N] [--calls N] [--rounds N] [--seed N]
 *               [--comp event|poll] [--watchdog SECONDS]
 *   Defaults from the environment (the VM passes VM_* through):
 *   VM_MW_STRESS_THREADS (8), VM_MW_STRESS_CALLS (calls per thread and
 *   round; 150 steady, 60 grow), VM_MW_STRESS_ROUNDS (grow: 3),
 *   VM_MW_STRESS_SEED, VM_MW_STRESS_COMP (event|poll: RPCRDMA_COMP_MODE of
 *   the CLIENT, default the library's).  The watchdog defaults to
 *   VM_TEST_TIMEOUT - 5 s (the suite's limit, 120 s) so a hang ends with a
 *   FAIL line.  Measured under TCG on a quiet 2-core host: each of the four
 *   parts takes 20-25 s with the defaults (about 1200 calls of up to
 *   1 MiB - 4 KiB results for steady, 3 x 480 calls of up to 2 MiB for
 *   grow), make vmcheck of the four about 2 minutes with the boot.
 *   Installed as tests/vm/mw-stress-{mw,mr,grow-mw,grow-mr}, copies of this
 *   program whose name selects part and mode (as clnt-part.sh does).
 *
 * What a pass covers: each round notes the device's retry counters.  On the
 * VM's single rxe device (client and server on one address, no frame
 * crosses the veth) the CLIENT's send queue practically never retransmits,
 * and that is where Soft-RoCE (Linux 6.1) breaks windows: after a
 * retransmission it runs again a window bind that had already been
 * executed behind a Send not yet acknowledged, which fails
 * (IBV_WC_MW_BIND_ERR) or stalls the send queue.  With two rxe devices
 * (tests/vm/run --net two) frames are lost and retransmitted, and the mw
 * parts lose connections while the mr parts pass.  There (tu_net_two())
 * each round must show retransmissions, and an mw round may lose its
 * connection: a call that ends with an RPC error is then counted and
 * reported ("LOSSES:" line), not failed, while a wrong result still fails
 * the test, the CLIENT must reconnect and the counters must add up for
 * what was not lost.  A stalled send queue is a loss too: there a call
 * with no reply in STALL_S ends the round, the CLIENT is replaced and the
 * new one must work ("LOSSES: ... STALL" line).  mr rounds stay strict.
 *
 * The server is $T_CLNT_SERVER if set (t_clnt_util.c), else rtest_server
 * from this program's directory, one process per test address, port
 * T_PORT; clnt_create() finds it through RPCRDMA_PORT (no rpcbind).
 * One line per check; exit 1 if any failed, 77 (skip) without a device.
 */
#include <errno.h>
#include <libgen.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "glue/clnt_rdma.h"
#include "rpc/rr_call.h"
#include "rtest.h"
#include "tests/vm/t_clnt_util.h"

#define KiB	       1024u
#define MiB	       (1024u * 1024u)
#define CREDITS	       16u
#define MAX_THREADS    64
#define MAX_FAIL_LINES 10 /* failure details printed per part */

static struct t_server srv;

struct opts {
	unsigned int threads;
	unsigned int calls;  /* per thread and round */
	unsigned int rounds; /* grow */
	unsigned int seed;
	unsigned int watchdog;
	const char *comp; /* RPCRDMA_COMP_MODE, NULL: default */
	bool steady, grow;
	bool mw, mr;
};

static struct opts o;

/* ---- Per-thread random numbers ------------------------------------------- */

static uint32_t rnd(uint32_t *s)
{
	uint32_t x = *s;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*s = x;
	return x;
}

/* ---- One worker ---------------------------------------------------------- */

enum op {
	OP_FILL,
	OP_ECHO
};

struct worker {
	CLIENT *cl;
	unsigned int id;
	unsigned int calls;
	bool grow;
	uint32_t rng;
	pthread_barrier_t *start;
	bool losses_ok; /* an RPC error: a loss, not a failure */
	atomic_uint *fails;
	atomic_uint *rpc_errs; /* calls ended by RPC errors (losses_ok) */
	atomic_bool *stalled;  /* a call timed out (losses_ok): round over */
	atomic_uint *printed;
	/* what it did */
	uint64_t bytes;
	uint32_t largest;
};

static void fail_line(struct worker *w, enum op op, uint32_t len, uint32_t seed,
		      enum clnt_stat st, const char *what)
{
	char m[RPCRDMA_ERRMSG_LEN] = "";

	/* The CLIENT's message is that of its last failed call: with many
	 * threads, maybe another thread's (they share one connection). */
	if (st != RPC_SUCCESS && w->losses_ok) {
		atomic_fetch_add(w->rpc_errs, 1);
		if (st == RPC_TIMEDOUT)
			atomic_store(w->stalled, true);
	} else
		atomic_fetch_add(w->fails, 1);
	if (atomic_fetch_add(w->printed, 1) >= MAX_FAIL_LINES)
		return;
	if (st != RPC_SUCCESS && !clnt_control(w->cl, CLGET_RDMA_ERRMSG, m))
		snprintf(m, sizeof(m), "(no message)");
	NOTE("thread %u: %s %u octets (seed %u): %s%s%s%s", w->id,
	     op == OP_FILL ? "FILL" : "ECHO", len, seed, what,
	     st != RPC_SUCCESS ? clnt_sperrno(st) : "", *m ? " - " : "", m);
}

static void do_fill(struct worker *w, uint32_t len, uint32_t seed)
{
	rtest_fill_args a = { .len = len, .seed = seed };
	rtest_data out;
	enum clnt_stat st;
	long bad;

	memset(&out, 0, sizeof(out));
	st = rtest_fill_1(&a, &out, w->cl);
	if (st != RPC_SUCCESS) {
		fail_line(w, OP_FILL, len, seed, st, "");
		return;
	}
	if (out.rtest_data_len != len) {
		fail_line(w, OP_FILL, len, seed, st, "wrong length ");
	} else if ((bad = t_fill_check(out.rtest_data_val, len, seed)) >= 0) {
		char what[64];

		snprintf(what, sizeof(what), "wrong octet at %ld ", bad);
		fail_line(w, OP_FILL, len, seed, st, what);
	}
	w->bytes += len;
	xdr_free((xdrproc_t)xdr_rtest_data, (char *)&out);
}

static void do_echo(struct worker *w, uint32_t len, uint32_t seed)
{
	rtest_data in, out;
	enum clnt_stat st;
	long bad;

	in.rtest_data_len = len;
	in.rtest_data_val = malloc(len ? len : 1);
	if (!in.rtest_data_val) {
		fail_line(w, OP_ECHO, len, seed, RPC_SUCCESS, "out of memory ");
		return;
	}
	t_fill(in.rtest_data_val, len, seed);
	memset(&out, 0, sizeof(out));
	st = rtest_echo_1(&in, &out, w->cl);
	free(in.rtest_data_val);
	if (st != RPC_SUCCESS) {
		fail_line(w, OP_ECHO, len, seed, st, "");
		return;
	}
	if (out.rtest_data_len != len) {
		fail_line(w, OP_ECHO, len, seed, st, "wrong length ");
	} else if ((bad = t_fill_check(out.rtest_data_val, len, seed)) >= 0) {
		char what[64];

		snprintf(what, sizeof(what), "wrong octet at %ld ", bad);
		fail_line(w, OP_ECHO, len, seed, st, what);
	}
	w->bytes += 2ull * len;
	xdr_free((xdrproc_t)xdr_rtest_data, (char *)&out);
}

/*
 * steady: every call offers the 1 MiB Reply chunk.  A quarter are FILLs
 * of 256 KiB up to 1 MiB - 4 KiB (the chunk nearly full), a quarter FILLs
 * of 4-64 KiB, a quarter small inline ECHOs, a quarter Long ECHOs of
 * 8-128 KiB (two windows).
 */
static void steady_call(struct worker *w, unsigned int i)
{
	uint32_t r = rnd(&w->rng), seed = rnd(&w->rng), len;

	switch ((i + w->id) % 4) {
	case 0:
		len = 256 * KiB + r % (MiB - 4 * KiB - 256 * KiB + 1);
		if (r % 8 == 0)
			len = MiB - 4 * KiB;
		do_fill(w, len, seed);
		break;
	case 1:
		do_fill(w, 4 * KiB + r % (60 * KiB), seed);
		return;
	case 2:
		do_echo(w, r % 3000, seed);
		return;
	default:
		len = 8 * KiB + r % (120 * KiB);
		do_echo(w, len, seed);
		return;
	}
	if (len > w->largest)
		w->largest = len;
}

/* Classes of the pool (rt_buf.c: powers of two from 4 KiB): a result
 * just under 2^k so that its Reply chunk (len + 64 + 512) lands in 2^k. */
static uint32_t class_len(unsigned int k, uint32_t r)
{
	uint32_t top = 1u << k, slack = 1024;

	return top - slack - r % (top / 4);
}

/*
 * grow: even calls small (Reply chunk up to 8 KiB, or none), odd calls
 * large, walking the classes 16 KiB .. 2 MiB in an order that differs per
 * thread, so the first use of each class (a new region) meets other
 * threads' binds; every eighth call is a Long ECHO of a class of its own.
 */
static void grow_call(struct worker *w, unsigned int i)
{
	static const unsigned int ks[] = { 14, 15, 16, 17, 18, 19, 20, 21 };
	const unsigned int nk = sizeof(ks) / sizeof(ks[0]);
	uint32_t r = rnd(&w->rng), seed = rnd(&w->rng), len;
	unsigned int k = ks[(i / 2 + w->id * 3) % nk];

	if (i % 8 == 7) {
		len = class_len(ks[(i / 8 + w->id) % 6], r);
		do_echo(w, len, seed);
		return;
	}
	if (i % 2 == 0) {
		do_fill(w, 100 + r % 7000, seed);
		return;
	}
	len = class_len(k, r);
	do_fill(w, len, seed);
	if (len > w->largest)
		w->largest = len;
}

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	unsigned int i;

	pthread_barrier_wait(w->start);
	for (i = 0; i < w->calls && !atomic_load(w->stalled); i++) {
		if (w->grow)
			grow_call(w, i);
		else
			steady_call(w, i);
	}
	return NULL;
}

/* ---- Soft-RoCE retry counters -------------------------------------------- */

/*
 * The device's retry counters (t_util.h), read before and after a round: a
 * run exercises the retransmission paths of the send queue (where a window
 * bind posted behind an unacknowledged Send is at risk, see the top of
 * this file) only if some moved.  With two devices that is required.
 */
static void check_retry(const char *tag, const uint64_t a[TU_NRETRY])
{
	uint64_t b[TU_NRETRY], sum;
	char line[512];

	tu_retry_read(b);
	sum = tu_retry_delta(a, b, line, sizeof(line));
	NOTE("%s: device retry counters during the round: %s", tag, line);
	if (tu_net_two())
		CHECK(sum > 0,
		      "%s: two devices: frames crossed the veth and were retransmitted (%llu retry events)",
		      tag, (unsigned long long)sum);
}

/* ---- One CLIENT, N threads ----------------------------------------------- */

static const char *mode_str(enum rpcrdma_reg_mode m)
{
	return m == RPCRDMA_REG_MW ? "mw" : m == RPCRDMA_REG_MR ? "mr" : "auto";
}

/* A call of a round where losses are tolerated that has no reply after
 * this long is taken for the send queue stall (top of this file); a
 * healthy call of these sizes takes well under a second there. */
#define STALL_S 20

static CLIENT *make_client(const char *mode, bool losses_ok)
{
	struct timeval tv = { losses_ok ? STALL_S : 60, 0 };
	CLIENT *cl;

	setenv("RPCRDMA_REG_MODE", mode, 1);
	if (o.comp)
		setenv("RPCRDMA_COMP_MODE", o.comp, 1);
	cl = clnt_create(t_addr4(), RTEST_PROG, RTEST_VERS, "rdma");
	unsetenv("RPCRDMA_REG_MODE");
	unsetenv("RPCRDMA_COMP_MODE");
	if (!cl) {
		NOTE("clnt_create(%s, \"rdma\"): %s", t_addr4(),
		     clnt_spcreateerror("clnt_create"));
		return NULL;
	}
	/* rpcgen's stubs pass 25 s; a slow call under TCG is not a failure,
	 * only a wrong or failed one is (but see STALL_S).  The watchdog
	 * bounds the whole. */
	clnt_control(cl, CLSET_TIMEOUT, &tv);
	return cl;
}

/* One small FILL, its result checked: whether cl works after losses. */
static enum clnt_stat one_fill(CLIENT *cl)
{
	rtest_fill_args a = { .len = 100, .seed = 7 };
	enum clnt_stat cs;
	rtest_data out;

	memset(&out, 0, sizeof(out));
	cs = rtest_fill_1(&a, &out, cl);
	if (cs != RPC_SUCCESS)
		return cs;
	if (out.rtest_data_len != a.len ||
	    t_fill_check(out.rtest_data_val, a.len, a.seed) >= 0)
		cs = RPC_CANTDECODERES;
	xdr_free((xdrproc_t)xdr_rtest_data, (char *)&out);
	return cs;
}

/*
 * A round that lost its connection (losses_ok): every exposure not fenced
 * went with its connection, the CLIENT reconnected for the calls after the
 * loss, nothing but connection losses went wrong; and it still works.
 */
static void check_losses(CLIENT *cl, const char *tag,
			 const struct rpcrdma_clnt_stats *st,
			 const struct rr_stats *rs, unsigned int rpc_errs,
			 unsigned int total)
{
	enum clnt_stat cs = RPC_FAILED;
	int i;

	NOTE("LOSSES: %s: %llu connections lost, %u of %u calls ended with an RPC error, %llu timeouts, %llu failed fences, %llu flushed work requests; no wrong result",
	     tag, (unsigned long long)st->conn_losses, rpc_errs, total,
	     (unsigned long long)st->timeouts,
	     (unsigned long long)rs->revoke_failures,
	     (unsigned long long)rs->conn.flushed);
	CHECK(st->registrations >= st->invalidations + st->remote_invalidations,
	      "%s: no exposure fenced twice: registrations %llu >= invalidations %llu + remote %llu (the rest went with their connection)",
	      tag, (unsigned long long)st->registrations,
	      (unsigned long long)st->invalidations,
	      (unsigned long long)st->remote_invalidations);
	CHECK(st->err_vers == 0 && st->err_chunk == 0 && st->discarded == 0 &&
		      rs->over_grant == 0,
	      "%s: nothing but connection losses (ERR_VERS %llu, ERR_CHUNK %llu, discarded %llu)",
	      tag, (unsigned long long)st->err_vers,
	      (unsigned long long)st->err_chunk,
	      (unsigned long long)st->discarded);
	CHECK(st->connects >= st->conn_losses &&
		      st->connects <= st->conn_losses + 1,
	      "%s: reconnected after each loss (%u connections made, %llu lost)",
	      tag, st->connects, (unsigned long long)st->conn_losses);
	CHECK(st->replies + rpc_errs >= total,
	      "%s: every call got a reply or an RPC error (%llu + %u of %u)",
	      tag, (unsigned long long)st->replies, rpc_errs, total);
	/* the window bug may strike this call too: a few tries */
	for (i = 0; i < 3 && cs != RPC_SUCCESS; i++)
		cs = one_fill(cl);
	CHECK(cs == RPC_SUCCESS,
	      "%s: the CLIENT works after the losses (%d tries): %s", tag, i,
	      clnt_sperrno(cs));
}

/* Check the counters of a CLIENT after its threads are done; a round
 * with RPC errors tolerated (losses_ok) that had some is judged by
 * check_losses(). */
static void check_counters(CLIENT *cl, const char *tag, bool steady, bool mw,
			   bool losses_ok, unsigned int rpc_errs,
			   unsigned int total)
{
	struct rpcrdma_clnt_stats st;
	struct rr_stats rs;
	bool ok;

	memset(&st, 0, sizeof(st));
	memset(&rs, 0, sizeof(rs));
	ok = clnt_control(cl, CLGET_RDMA_STATS, &st);
	CHECK(ok, "%s: CLGET_RDMA_STATS", tag);
	/* zeros would pass the "no errors" check below */
	ok = clnt_control(cl, CLGET_RDMA_RR_STATS, &rs);
	CHECK(ok, "%s: CLGET_RDMA_RR_STATS", tag);
	NOTE("%s: calls %llu replies %llu long calls %llu long replies %llu reply chunks %llu (%llu octets)",
	     tag, (unsigned long long)st.calls, (unsigned long long)st.replies,
	     (unsigned long long)st.long_calls,
	     (unsigned long long)st.long_replies,
	     (unsigned long long)st.reply_chunks,
	     (unsigned long long)st.reply_bytes);
	NOTE("%s: registrations %llu invalidations %llu remote invalidations %llu; binds %llu, per-RPC MRs %llu/%llu dereg, signalled %llu, queued %llu, flushed %llu, errors %llu",
	     tag, (unsigned long long)st.registrations,
	     (unsigned long long)st.invalidations,
	     (unsigned long long)st.remote_invalidations,
	     (unsigned long long)rs.conn.binds,
	     (unsigned long long)rs.conn.registrations,
	     (unsigned long long)rs.conn.deregistrations,
	     (unsigned long long)rs.conn.signalled,
	     (unsigned long long)rs.conn.queued,
	     (unsigned long long)rs.conn.flushed,
	     (unsigned long long)rs.conn.errors);
	if (losses_ok && (rpc_errs || st.conn_losses)) {
		check_losses(cl, tag, &st, &rs, rpc_errs, total);
		return;
	}
	/* Remote invalidations fence exposures too: in MW mode a call with
	 * exactly one window nominates it and the server's Send With
	 * Invalidate fences it; the public "invalidations" counts only
	 * ours (local invalidations and deregistrations). */
	CHECK(st.registrations > 0 &&
		      st.registrations ==
			      st.invalidations + st.remote_invalidations,
	      "%s: every exposure fenced: registrations %llu == invalidations %llu + remote %llu",
	      tag, (unsigned long long)st.registrations,
	      (unsigned long long)st.invalidations,
	      (unsigned long long)st.remote_invalidations);
	if (mw)
		CHECK(rs.conn.binds == st.registrations &&
			      rs.conn.registrations == 0,
		      "%s: every exposure a window over the pool (%llu binds, %llu per-RPC MRs)",
		      tag, (unsigned long long)rs.conn.binds,
		      (unsigned long long)rs.conn.registrations);
	else
		CHECK(rs.conn.binds == 0 && st.remote_invalidations == 0 &&
			      rs.conn.registrations == st.registrations,
		      "%s: MR mode: no window, no remote invalidation (%llu binds, %llu MRs)",
		      tag, (unsigned long long)rs.conn.binds,
		      (unsigned long long)rs.conn.registrations);
	CHECK(st.err_vers == 0 && st.err_chunk == 0 && st.timeouts == 0 &&
		      st.discarded == 0 && st.conn_losses == 0 &&
		      rs.conn.errors == 0 && rs.conn.flushed == 0 &&
		      rs.revoke_failures == 0 && rs.orphans == 0 &&
		      rs.over_grant == 0,
	      "%s: no errors (ERR_VERS %llu, ERR_CHUNK %llu, timeouts %llu, discarded %llu, connections lost %llu, transport errors %llu, flushed %llu, failed fences %llu)",
	      tag, (unsigned long long)st.err_vers,
	      (unsigned long long)st.err_chunk, (unsigned long long)st.timeouts,
	      (unsigned long long)st.discarded,
	      (unsigned long long)st.conn_losses,
	      (unsigned long long)rs.conn.errors,
	      (unsigned long long)rs.conn.flushed,
	      (unsigned long long)rs.revoke_failures);
	CHECK(st.connects == 1, "%s: one connection (%u made)", tag,
	      st.connects);
	/* calls counts every Call sent, resends of an RPC included */
	CHECK(st.calls == st.replies + st.resends,
	      "%s: a reply for every call (%llu/%llu, %llu resent)", tag,
	      (unsigned long long)st.replies, (unsigned long long)st.calls,
	      (unsigned long long)st.resends);
	if (steady)
		CHECK(st.reply_chunks == st.calls && st.long_replies > 0 &&
			      st.resends == 0,
		      "%s: every call offered the Reply chunk (%llu of %llu), %llu replies came in it",
		      tag, (unsigned long long)st.reply_chunks,
		      (unsigned long long)st.calls,
		      (unsigned long long)st.long_replies);
	CHECK(st.max_inflight > 1,
	      "%s: calls overlapped: at most %u in flight, grant %u", tag,
	      st.max_inflight, st.max_granted);
}

/*
 * A round where losses are tolerated whose calls timed out: Soft-RoCE
 * stalled the send queue (a window bind run again after a retransmission,
 * top of this file), which no library can undo on that queue.  Treated
 * like a lost connection, said loudly: the CLIENT is destroyed (which must
 * return, the watchdog watches) and a new one must work.  Its counters are
 * not judged: the stalled calls' exposures went with the connection.
 */
static void stall_recover(CLIENT *cl, const char *tag, const char *mode,
			  unsigned int rpc_errs)
{
	enum clnt_stat cs;

	NOTE("LOSSES: %s: STALL: calls had no reply in %d s (%u ended with an RPC error, none with a wrong result): the device's send queue stopped, the known Soft-RoCE window bug; the CLIENT is replaced",
	     tag, STALL_S, rpc_errs);
	clnt_destroy(cl);
	cl = make_client(mode, true);
	CHECK(cl != NULL, "%s: a new CLIENT after the stall", tag);
	if (!cl)
		return;
	cs = one_fill(cl);
	CHECK(cs == RPC_SUCCESS, "%s: the new CLIENT works after the stall: %s",
	      tag, clnt_sperrno(cs));
	clnt_destroy(cl);
}

/* One CLIENT, o.threads threads of o.calls calls; true if all went well. */
static bool run_round(const char *mode, bool grow, unsigned int round)
{
	struct worker w[MAX_THREADS];
	pthread_t th[MAX_THREADS];
	pthread_barrier_t start;
	atomic_uint fails = 0, rpc_errs = 0, printed = 0;
	atomic_bool stalled = false;
	enum rpcrdma_reg_mode got = RPCRDMA_REG_AUTO;
	bool losses_ok = tu_net_two() && !strcmp(mode, "mw");
	uint64_t retry0[TU_NRETRY];
	char tag[64];
	uint64_t bytes = 0;
	uint32_t largest = 0;
	int64_t t0;
	unsigned int i, n = 0;
	CLIENT *cl;
	int f0 = t_failures;

	if (grow)
		snprintf(tag, sizeof(tag), "grow %s round %u", mode, round + 1);
	else
		snprintf(tag, sizeof(tag), "steady %s", mode);
	cl = make_client(mode, losses_ok);
	CHECK(cl != NULL,
	      "%s: clnt_create(\"%s\", \"rdma\") with RPCRDMA_REG_MODE=%s", tag,
	      t_addr4(), mode);
	if (!cl)
		return false;
	clnt_control(cl, CLGET_RDMA_REG_MODE, &got);
	CHECK(!strcmp(mode_str(got), mode), "%s: registration mode is %s", tag,
	      mode_str(got));
	CHECK(!strcmp(cl->cl_netid, "rdma"), "%s: cl_netid %s", tag,
	      cl->cl_netid);
	if (o.comp) {
		enum rpcrdma_comp_mode cm = RPCRDMA_COMP_EVENT;

		clnt_control(cl, CLGET_RDMA_COMP_MODE, &cm);
		CHECK(!strcmp(cm == RPCRDMA_COMP_POLL ? "poll" : "event",
			      o.comp),
		      "%s: completion mode %s", tag,
		      cm == RPCRDMA_COMP_POLL ? "poll" : "event");
	}
	pthread_barrier_init(&start, NULL, o.threads);
	tu_retry_read(retry0);
	t0 = t_ms();
	for (i = 0; i < o.threads; i++) {
		w[i] = (struct worker){
			.cl = cl,
			.id = i,
			.calls = o.calls,
			.grow = grow,
			.rng = (o.seed + 1) * 2654435761u ^ (i + 1) * 40503u ^
			       (round + 1) * 97u,
			.start = &start,
			.losses_ok = losses_ok,
			.fails = &fails,
			.rpc_errs = &rpc_errs,
			.stalled = &stalled,
			.printed = &printed,
		};
		if (!w[i].rng)
			w[i].rng = 1;
		if (pthread_create(&th[i], NULL, worker_run, &w[i]))
			break;
		n++;
	}
	if (n < o.threads) {
		/* The barrier would never open: nothing to do but stop. */
		CHECK(false, "%s: %u threads started of %u", tag, n, o.threads);
		exit(1);
	}
	for (i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		bytes += w[i].bytes;
		if (w[i].largest > largest)
			largest = w[i].largest;
	}
	pthread_barrier_destroy(&start);
	CHECK(atomic_load(&fails) == 0,
	      "%s: %u threads x %u calls on one CLIENT, results checked octet by octet: %u failed%s (%.1f MiB moved, largest result %u octets, %lld ms)",
	      tag, n, o.calls, atomic_load(&fails),
	      losses_ok ? ", RPC errors counted as losses" : "",
	      (double)bytes / MiB, largest, (long long)(t_ms() - t0));
	check_retry(tag, retry0);
	if (atomic_load(&stalled)) {
		stall_recover(cl, tag, mode, atomic_load(&rpc_errs));
		return t_failures == f0;
	}
	check_counters(cl, tag, !grow, !strcmp(mode, "mw"), losses_ok,
		       atomic_load(&rpc_errs), n * o.calls);
	clnt_destroy(cl);
	return t_failures == f0;
}

/* ---- Parts --------------------------------------------------------------- */

/* The largest result of NULL, FILL and ECHO, so every call offers one
 * Reply chunk of 1 MiB (V1-RP-1/2). */
static bool bound_replies(bool on)
{
	static const rpcproc_t procs[] = { RTEST_NULL, RTEST_FILL, RTEST_ECHO };
	struct rpcrdma_ulb_entry e = {
		.prog = RTEST_PROG,
		.vers = RTEST_VERS,
		.dir = RPCRDMA_ULB_REPLY,
		.reply_max = { RPCRDMA_ULB_SIZE_FIXED, (1u << 20) - 512, 0 },
	};
	bool ok = true;
	unsigned int i;

	for (i = 0; i < sizeof(procs) / sizeof(procs[0]); i++) {
		e.proc = procs[i];
		if (on)
			ok &= rpcrdma_ulb_register(&e) == 0;
		else
			rpcrdma_ulb_unregister(RTEST_PROG, RTEST_VERS, e.proc,
					       RPCRDMA_ULB_REPLY);
	}
	return ok;
}

static void part_steady(const char *mode)
{
	CHECK(bound_replies(true),
	      "steady %s: REPLY bindings for NULL, FILL and ECHO: a Reply chunk of 1 MiB on every call",
	      mode);
	run_round(mode, false, 0);
	bound_replies(false);
}

static void part_grow(const char *mode)
{
	struct rpcrdma_ulb_entry e = {
		.prog = RTEST_PROG,
		.vers = RTEST_VERS,
		.proc = RTEST_FILL,
		.dir = RPCRDMA_ULB_REPLY,
		.items = 0,
		/* len is the first word of FILL's arguments, and of ECHO's
		 * (the opaque's length); the result's length word and padding
		 * fit in the 64 */
		.reply_max = { RPCRDMA_ULB_SIZE_ARG, 64, 0 },
	};
	unsigned int r;
	int ret = rpcrdma_ulb_register(&e);

	e.proc = RTEST_ECHO;
	CHECK(!ret && rpcrdma_ulb_register(&e) == 0,
	      "grow %s: REPLY bindings for FILL and ECHO: Reply chunks sized by the length asked for",
	      mode);
	for (r = 0; r < o.rounds; r++)
		if (!run_round(mode, true, r))
			break; /* one failed round says it all */
	rpcrdma_ulb_unregister(RTEST_PROG, RTEST_VERS, RTEST_FILL,
			       RPCRDMA_ULB_REPLY);
	rpcrdma_ulb_unregister(RTEST_PROG, RTEST_VERS, RTEST_ECHO,
			       RPCRDMA_ULB_REPLY);
}

/* ---- Main ---------------------------------------------------------------- */

static unsigned int env_uint(const char *name, unsigned int dflt)
{
	const char *v = getenv(name);
	char *end;
	unsigned long x;

	if (!v || !*v)
		return dflt;
	x = strtoul(v, &end, 0);
	return *end ? dflt : (unsigned int)x;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: t_mw_stress [--part steady|grow|all] [--mode mw|mr|both]\n"
		"                   [--threads N] [--calls N] [--rounds N] [--seed N]\n"
		"                   [--comp event|poll] [--watchdog SECONDS]\n");
	exit(2);
}

/* Part and mode from the name: mw-stress-[grow-]{mw,mr}. */
static void from_name(const char *argv0)
{
	char buf[256], *b;
	size_t n;

	snprintf(buf, sizeof(buf), "%s", argv0);
	b = basename(buf);
	if (strncmp(b, "mw-stress-", 10))
		return;
	b += 10;
	o.steady = strncmp(b, "grow-", 5) != 0;
	o.grow = !o.steady;
	if (o.grow)
		b += 5;
	n = strlen(b);
	o.mw = n == 2 && !strcmp(b, "mw");
	o.mr = n == 2 && !strcmp(b, "mr");
}

static void parse(int argc, char **argv)
{
	int i;

	o.steady = o.grow = o.mw = o.mr = true;
	from_name(argv[0]);
	o.threads = env_uint("VM_MW_STRESS_THREADS", 8);
	o.calls = env_uint("VM_MW_STRESS_CALLS", 0);
	o.rounds = env_uint("VM_MW_STRESS_ROUNDS", 3);
	/* PIDs repeat from boot to boot in the VM: mix in the time */
	o.seed = env_uint("VM_MW_STRESS_SEED",
			  (unsigned int)time(NULL) ^ (unsigned int)getpid());
	o.comp = getenv("VM_MW_STRESS_COMP");
	o.watchdog = env_uint("VM_TEST_TIMEOUT", 120);
	o.watchdog = o.watchdog > 10 ? o.watchdog - 5 : o.watchdog;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			usage();
		i++;
		if (!strcmp(a, "--part")) {
			o.steady = !strcmp(v, "steady") || !strcmp(v, "all");
			o.grow = !strcmp(v, "grow") || !strcmp(v, "all");
		} else if (!strcmp(a, "--mode")) {
			o.mw = !strcmp(v, "mw") || !strcmp(v, "both");
			o.mr = !strcmp(v, "mr") || !strcmp(v, "both");
		} else if (!strcmp(a, "--threads")) {
			o.threads = (unsigned int)atoi(v);
		} else if (!strcmp(a, "--calls")) {
			o.calls = (unsigned int)atoi(v);
		} else if (!strcmp(a, "--rounds")) {
			o.rounds = (unsigned int)atoi(v);
		} else if (!strcmp(a, "--seed")) {
			o.seed = (unsigned int)strtoul(v, NULL, 0);
		} else if (!strcmp(a, "--comp")) {
			o.comp = v;
		} else if (!strcmp(a, "--watchdog")) {
			o.watchdog = (unsigned int)atoi(v);
		} else {
			usage();
		}
	}
	if (o.comp && !*o.comp)
		o.comp = NULL;
	if ((!o.steady && !o.grow) || (!o.mw && !o.mr) || !o.threads ||
	    o.threads > MAX_THREADS || !o.rounds ||
	    (o.comp && strcmp(o.comp, "event") && strcmp(o.comp, "poll")))
		usage();
}

/* rtest_server next to this program (also when run from .libs/). */
static void default_server(const char *argv0)
{
	char exe[512], dir[512], cmd[700];
	ssize_t len;
	size_t n;

	if (getenv("T_CLNT_SERVER"))
		return;
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0 || (size_t)len >= sizeof(exe) - 1)
		snprintf(exe, sizeof(exe), "%s", argv0);
	else
		exe[len] = '\0';
	snprintf(dir, sizeof(dir), "%s", dirname(exe));
	n = strlen(dir);
	if (n >= 6 && !strcmp(dir + n - 6, "/.libs"))
		dir[n - 6] = '\0';
	snprintf(cmd, sizeof(cmd), "%s/rtest_server -a %%a -p %%p -c %%c", dir);
	setenv("T_CLNT_SERVER", cmd, 1);
}

int main(int argc, char **argv)
{
	char port[64];
	int64_t t0;

	parse(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!t_have_device())
		return 77;
	t_watchdog(o.watchdog);
	default_server(argv[0]);
	/* clnt_create() with the port given, no rpcbind */
	snprintf(port, sizeof(port), "0x%x=%u", (unsigned int)RTEST_PROG,
		 T_PORT);
	setenv("RPCRDMA_PORT", port, 1);
	t0 = t_ms();
	if (t_server_start(&srv, CREDITS, 30000)) {
		CHECK(false, "%s started on port %u", getenv("T_CLNT_SERVER"),
		      T_PORT);
		return 1;
	}
	NOTE("seed %u, %u threads, completions %s, server up in %lld ms",
	     o.seed, o.threads, o.comp ? o.comp : "(default)",
	     (long long)(t_ms() - t0));
	if (o.steady) {
		unsigned int c = o.calls;

		o.calls = c ? c : 150;
		if (o.mw)
			part_steady("mw");
		if (o.mr)
			part_steady("mr");
		o.calls = c;
	}
	if (o.grow) {
		o.calls = o.calls ? o.calls : 60;
		if (o.mw)
			part_grow("mw");
		if (o.mr)
			part_grow("mr");
	}
	t_server_kill(&srv, false);
	NOTE("%lld ms", (long long)(t_ms() - t0));
	return tu_done();
}
