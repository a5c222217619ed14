/*
 * rbench_run.h - the engine of the RDMA benchmark, shared by the installed
 * rpcrdma-bench(1) (tools/rpcrdma-bench.c) and the program of the VM
 * driver (tests/bench/rbench.c, run by rbench.sh): the procedures that
 * serve RBENCH_PROG (tests/bench/rbench.x), its Upper-Layer Binding table,
 * and the timed runs of a client - NULL round trips; ECHO, WRITE and READ
 * calls from threads - with the counters of both sides around them and
 * the data checked.
 *
 * The engine makes no listener and, but for extra per-thread CLIENTs
 * through the caller's connect(), no CLIENT; it neither prints nor exits:
 * a run fills its result, or says in err why it failed.
 */
#ifndef RBENCH_RUN_H
#define RBENCH_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "rbench.h"

#define RB_ERRLEN	 (RPCRDMA_ERRMSG_LEN + 256)
#define RB_MAX_THREADS	 256
#define RB_ECHO_SIZE	 64  /* octets of an ECHO call's data */
#define RB_WARMUP_NULL	 100 /* NULL calls before a timed run without a count */
#define RB_MIN_LAT_CALLS 100 /* a NULL run stops on time only after these */

/* The dispatch function of rbench_svc.c (rpcgen declares it nowhere). */
void rbench_prog_1(struct svc_req *rq, SVCXPRT *x);

/* Octet i of the data pattern of seed: WRITE_CHECK and READ data. */
unsigned char rb_octet(unsigned int seed, size_t i);

/*
 * Register the Upper-Layer Binding of RBENCH_PROG, generated at build time
 * from the annotations of rbench.x (rbench.conf, embedded): both sides
 * need it, or the data goes inline.  false with the reason in err.
 */
bool rb_ulb_load(char *err, size_t len);

/* Server: whether the connections are RPC-over-RDMA (SVCGET_RDMA_STATS
 * applies); true unless told otherwise. */
void rb_srv_set_rdma(bool rdma);

/* Server: what RB_MARK calls with its label (the counts of an instruction
 * counter cut there: rbench's callgrind runs); NULL, the default, does
 * nothing. */
void rb_srv_set_mark(void (*mark)(const char *label));

/* CLOCK_MONOTONIC in microseconds. */
double rb_now_us(void);

/* This process's resident memory in KiB, 0 if unknown. */
unsigned long long rb_vmrss_kb(void);

/* The RPC error of a failed call, with the library's reason for an rdma
 * CLIENT (per thread, overwritten by the next). */
const char *rb_clnt_why(CLIENT *cl, bool rdma, enum clnt_stat st);

/* One NULL call; one RB_STATS call: false with the reason in err. */
bool rb_null(CLIENT *cl, bool rdma, char *err, size_t len);
bool rb_srv_stats(CLIENT *cl, bool rdma, rb_stats *st, char *err, size_t len);

enum rb_kind {
	RB_ECHO_CALLS,	/* ECHO: inline both ways */
	RB_WRITE_CALLS, /* WRITE: argument data in a Read chunk */
	RB_READ_CALLS,	/* READ: result data in a Write chunk */
	RB_NULL_CALLS,	/* NULL: no data (rb_count) */
};

/* X(field) for every counter of struct rpcrdma_clnt_stats (the levels
 * credits, max_granted and max_inflight are not counters). */
#define RB_CLNT_COUNTERS(X)     \
	X(calls)                \
	X(replies)              \
	X(long_calls)           \
	X(long_replies)         \
	X(inline_bytes)         \
	X(long_bytes)           \
	X(read_chunks)          \
	X(read_bytes)           \
	X(write_chunks)         \
	X(write_bytes)          \
	X(reply_chunks)         \
	X(reply_bytes)          \
	X(ddp_zero_copies)      \
	X(ddp_copies)           \
	X(ddp_copy_bytes)       \
	X(ddp_caller_regs)      \
	X(registrations)        \
	X(invalidations)        \
	X(remote_invalidations) \
	X(err_vers)             \
	X(err_chunk)            \
	X(timeouts)             \
	X(discarded)            \
	X(conn_losses)          \
	X(connects)             \
	X(v2_calls)             \
	X(vers_fallbacks)       \
	X(resends)              \
	X(inv_nominated)        \
	X(bc_calls)             \
	X(bc_replies)           \
	X(bc_dropped)

/* What a run measured.  Counters are differences over the run, warm-up
 * and checked calls of a threaded run included. */
struct rb_result {
	unsigned long calls; /* timed calls answered */
	double seconds;	     /* of the timed calls */
	/* NULL: round trips of the timed calls, CPU time per call */
	double median_us, p99_us, mean_us;
	double cli_cpu_us, srv_cpu_us;
	/* threads */
	unsigned int clients;  /* CLIENTs used */
	unsigned long foreign; /* READ results not in the caller's buffer */
	unsigned long checked; /* calls whose data was compared in full */
	struct rpcrdma_clnt_stats clnt; /* the control CLIENT's; zero on tcp */
	rb_stats srv;			/* the server's (RB_STATS) */
	unsigned int rdma_version;	/* in force at the end; 0 on tcp */
};

struct rb_run {
	CLIENT *cl; /* the caller's CLIENT (shared by the threads) */
	/* threads, if set: one CLIENT of its own per thread but the first,
	 * made by this (NULL with the reason in err) */
	CLIENT *(*connect)(char *err, size_t len);
	bool rdma; /* cl is RPC-over-RDMA: CLGET_RDMA_* apply */
	/* the end of the timed part: after calls calls, or seconds, or the
	 * first of both (0: no such limit; at least one must be set) */
	unsigned long calls;
	double seconds;
	unsigned int threads; /* 1 to RB_MAX_THREADS */
	size_t size;	      /* data octets of an ECHO, WRITE, READ call */
	/* check the data of every call; else those of the first and last
	 * call of each thread (the timed calls then cost no checking) */
	bool check_all;
	struct rb_result res;
	char err[RB_ERRLEN];
	void *priv; /* the engine's, until rb_run_free() */
};

/* NULL round trips on r->cl. */
bool rb_lat(struct rb_run *r);

/* kind calls from r->threads threads. */
bool rb_bulk(struct rb_run *r, enum rb_kind kind);

/* What rb_count() calls around the calls it makes; each may be NULL. */
struct rb_count_hooks {
	/* before a segment (start true), after it (false) */
	void (*mark)(const char *label, bool start);
	/* before each call of a segment, so that calls do not overlap the
	 * server's work of the one before */
	void (*gap)(void);
};

/*
 * Calls to be counted by an instruction counter (callgrind): on r->cl, one
 * thread, kind calls of r->size octets (ECHO: RB_ECHO_SIZE) in nseg
 * segments of seg[i] calls, none of them checked or timed.  Before a
 * segment hooks->mark(label, true), after it hooks->mark(label, false)
 * and one RB_MARK call with the same label, "NAME N" for segment N (1, 2,
 * ...), so that both sides can cut their counts at the segment's ends;
 * one RB_MARK call "NAME 0" before the first.  Warm-up calls precede it
 * (the first checked) and a checked call follows.  false with the reason
 * in r->err.
 */
bool rb_count(struct rb_run *r, enum rb_kind kind, const char *name,
	      const unsigned long *seg, unsigned int nseg,
	      const struct rb_count_hooks *hooks);

/* Destroy the per-thread CLIENTs and buffers rb_bulk() made (r->cl stays
 * the caller's); left until here so that a front end may print first. */
void rb_run_free(struct rb_run *r);

#endif /* RBENCH_RUN_H */
