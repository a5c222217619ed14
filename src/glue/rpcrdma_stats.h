/*
 * rpcrdma_stats.h - printing the counters of CLIENTs and servers
 * (struct rpcrdma_clnt_stats, struct rpcrdma_svc_stats) and the registry
 * behind RPCRDMA_STATS=1 (rpcrdma-environ(7)).  Internal to the library.
 *
 * Printer
 * -------
 * rpcrdma_stats_print_clnt() and rpcrdma_stats_print_svc() write one line
 * per counter group, every line
 *
 *     rpcrdma: LABEL: name value name value ...\n
 *
 * where each name is the struct member's name and each value its decimal
 * value.  Every member is printed except the reserved ones; the lists
 * below (X-macros) are the only place that says which and in what order,
 * and the unit test (tests/unit/check_stats.c) fails if a member of the
 * structure is not in its list.  When you add a counter to <rpc/rpcrdma.h>,
 * add it to the list here too (and to the manual page).
 *
 * Registry
 * --------
 * An object (a CLIENT, a listening SVCXPRT) embeds a struct
 * rpcrdma_stats_reg, sets its get() callback and tracks it for its whole
 * life:
 *
 *   - rpcrdma_stats_track(reg) once it is fully made;
 *   - rpcrdma_stats_untrack(reg, true) when it is destroyed, before
 *     anything get() uses is freed (false: forget it without printing,
 *     e.g. on a constructor's failure path after tracking).
 *
 * Both are always called.  The registry serves two readers, each opted in
 * by its own variable, read (with secure_getenv()) at the time of the
 * track:
 *
 *   - RPCRDMA_STATS=1 prints the object exactly once: by
 *     rpcrdma_stats_untrack(reg, true), or by the atexit() handler if it
 *     is still alive when the program exits (the handler then forgets it,
 *     so a later untrack prints nothing).  Output goes to the file named
 *     by RPCRDMA_STATS_FILE (opened for append for each print, so several
 *     processes may share it), else, or if it cannot be opened, to stderr.
 *   - RPCRDMA_STATS_SOCKET=DIR|PATH serves the counters of every object
 *     tracked while it was set, on demand, through an AF_UNIX socket
 *     (rpcrdma_statsock.h; rpcrdma-stat(1) reads it).
 *
 * With neither set (or RPCRDMA_STATS empty or "0") a track costs two
 * getenv()s and nothing else: the object is not tracked, never printed or
 * served, and no atexit() handler, thread or socket is made.  Otherwise
 * the object is linked into the registry; the first such track installs
 * one atexit() handler.
 *
 * get(reg, f) fetches the object's counters and prints them to f with
 * rpcrdma_stats_print_*().  It runs with the registry's lock held, on the
 * thread that untracks, the one that calls exit(), or the socket's own
 * thread: it must not track or untrack anything, must take whatever locks
 * its object needs itself, and must be safe against the object's other
 * threads (e.g. a server's svc_run() changing its connection list).  The
 * optional conns(reg, f), set after rpcrdma_stats_reg_init(), prints one
 * line per live connection with rpcrdma_stats_print_conn(), under the same
 * rules; only the socket calls it.  The registry's lock is also what makes
 * untrack wait while the object is printed or served, so the object is
 * never freed under get() or conns().  Call untrack with none of the locks
 * they take held.  Objects tracked by another process are never printed
 * nor served (a fork()ed child does not print or serve its parent's
 * objects).
 *
 * Example, the CLIENT (src/glue/clnt_rdma.c):
 *
 *     struct clnt_rdma {
 *         ...
 *         struct rpcrdma_stats_reg stats_reg;
 *     };
 *
 *     static void clnt_rdma_stats_get(struct rpcrdma_stats_reg *reg, FILE *f)
 *     {
 *         struct clnt_rdma *ct = RPCRDMA_STATS_OWNER(reg, struct clnt_rdma,
 *                                                    stats_reg);
 *         struct rpcrdma_clnt_stats st;
 *         char label[RPCRDMA_STATS_LABEL_LEN];
 *
 *         clnt_rdma_get_stats(ct, &st);      (what CLGET_RDMA_STATS does)
 *         rpcrdma_stats_label(label, sizeof(label), "clnt",
 *                             (struct sockaddr *)&ct->addr,
 *                             ct->prog, ct->vers);
 *         rpcrdma_stats_print_clnt(f, label, &st);
 *     }
 *
 *     clnt_rdma_create(), once the CLIENT is complete:
 *         rpcrdma_stats_reg_init(&ct->stats_reg, clnt_rdma_stats_get);
 *         rpcrdma_stats_track(&ct->stats_reg);
 *
 *     clnt_rdma_destroy(), first thing (the requester is still alive):
 *         rpcrdma_stats_untrack(&ct->stats_reg, true);
 *
 * which prints, e.g.
 *
 *     rpcrdma: clnt 192.0.2.1:20049 prog 0x20005243 v1: calls 12 replies 12 ...
 *
 * Example, the server (src/glue/svc_rdma.c): one entry per listener, in
 * struct svr, which outlives the listening SVCXPRT until its last
 * connection is gone and holds the counters of the connections already
 * destroyed:
 *
 *     static void svr_stats_get(struct rpcrdma_stats_reg *reg, FILE *f)
 *     {
 *         struct svr *sv = RPCRDMA_STATS_OWNER(reg, struct svr, stats_reg);
 *         struct rpcrdma_svc_stats st;
 *
 *         svr_stats(sv, &st);                (what SVCGET_RDMA_STATS does)
 *         rpcrdma_stats_print_svc(f, sv->stats_label, &st);
 *     }
 *
 *     lsn_new(), once listening (the port is known):
 *         rpcrdma_stats_label(sv->stats_label, sizeof(sv->stats_label),
 *                             "svc", (struct sockaddr *)&bound_addr, 0, 0);
 *         rpcrdma_stats_reg_init(&sv->stats_reg, svr_stats_get);
 *         rpcrdma_stats_track(&sv->stats_reg);
 *
 *     svr_put(), when the last reference goes, before freeing sv (every
 *     connection's counters are then folded into sv->st):
 *         rpcrdma_stats_untrack(&sv->stats_reg, true);
 *
 * which prints, e.g.
 *
 *     rpcrdma: svc 0.0.0.0:20049: requests 12 replies_inline 11 ...
 *
 * and, for the socket, one line per connection:
 *
 *     sv->stats_reg.conns = svr_stats_conns;
 *
 *     rpcrdma: svc 0.0.0.0:20049 conn 192.0.2.5:40001: version 2 ...
 *
 * svr_stats() and svr_stats_conns() walk the connection list, which the
 * svc_run() thread changes, under the server's own lock.
 */
#ifndef RPCRDMA_GLUE_STATS_H
#define RPCRDMA_GLUE_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <rpc/rpcrdma.h>

/*
 * The printed members, X(group, member) in print order; a new line starts
 * where the group changes.  Reserved members are not listed.
 */
#define RPCRDMA_CLNT_STATS_FIELDS(X) \
	X(calls, calls)              \
	X(calls, replies)            \
	X(calls, long_calls)         \
	X(calls, long_replies)       \
	X(calls, inline_bytes)       \
	X(calls, long_bytes)         \
	X(chunks, read_chunks)       \
	X(chunks, read_bytes)        \
	X(chunks, write_chunks)      \
	X(chunks, write_bytes)       \
	X(chunks, reply_chunks)      \
	X(chunks, reply_bytes)       \
	X(ddp, ddp_zero_copies)      \
	X(ddp, ddp_copies)           \
	X(ddp, ddp_copy_bytes)       \
	X(ddp, ddp_caller_regs)      \
	X(reg, registrations)        \
	X(reg, invalidations)        \
	X(reg, remote_invalidations) \
	X(errors, err_vers)          \
	X(errors, err_chunk)         \
	X(errors, timeouts)          \
	X(errors, discarded)         \
	X(errors, conn_losses)       \
	X(conn, connects)            \
	X(conn, credits)             \
	X(conn, max_granted)         \
	X(conn, max_inflight)        \
	X(v2, v2_calls)              \
	X(v2, vers_fallbacks)        \
	X(v2, resends)               \
	X(v2, inv_nominated)         \
	X(backward, bc_calls)        \
	X(backward, bc_replies)      \
	X(backward, bc_dropped)      \
	X(wait, waits_polled)

#define RPCRDMA_SVC_STATS_FIELDS(X) \
	X(requests, requests)       \
	X(requests, replies_inline) \
	X(requests, replies_long)   \
	X(requests, dropped)        \
	X(requests, discarded)      \
	X(requests, inline_bytes)   \
	X(chunks, read_chunks)      \
	X(chunks, read_bytes)       \
	X(chunks, write_chunks)     \
	X(chunks, write_bytes)      \
	X(chunks, reply_chunks)     \
	X(chunks, reply_bytes)      \
	X(chunks, ddp_copies)       \
	X(chunks, ddp_copy_bytes)   \
	X(errors, err_vers)         \
	X(errors, err_chunk)        \
	X(errors, err_too_big)      \
	X(errors, err_no_room)      \
	X(errors, err_write_room)   \
	X(conns, conns_accepted)    \
	X(conns, conns_rejected)    \
	X(conns, conns_active)      \
	X(conns, conns_reaped)      \
	X(conns, max_inflight)      \
	X(conns, max_granted)       \
	X(v2, v2_requests)          \
	X(v2, replies_inv)          \
	X(v2, err_resource)         \
	X(v2, replays_done)         \
	X(v2, replays_missed)       \
	X(backward, bc_calls)       \
	X(backward, bc_replies)     \
	X(backward, bc_timeouts)

/*
 * One live connection of a server, as the statistics socket lists it
 * (rpcrdma_stats_print_conn()); filled by the owner's conns() callback.
 */
struct rpcrdma_stats_conn {
	uint32_t version;      /* RPC-over-RDMA version of its calls, 0: none
				* yet */
	uint32_t max_granted;  /* largest credit grant sent */
	uint32_t inflight;     /* calls received, not yet answered */
	uint32_t max_inflight; /* the most there ever were */
	uint64_t requests;
	uint64_t replies; /* inline and long */
	uint64_t read_bytes;
	uint64_t write_bytes;
	uint64_t reply_bytes;
	uint64_t cache_bytes;	 /* idle chunk buffers kept registered */
	uint64_t cache_released; /* chunk buffers let go: the cache was full */
};

#define RPCRDMA_CONN_STATS_FIELDS(X) \
	X(conn, version)             \
	X(conn, max_granted)         \
	X(conn, inflight)            \
	X(conn, max_inflight)        \
	X(conn, requests)            \
	X(conn, replies)             \
	X(conn, read_bytes)          \
	X(conn, write_bytes)         \
	X(conn, reply_bytes)         \
	X(conn, cache_bytes)         \
	X(conn, cache_released)

/* Number of members each printer prints (entries of the lists above). */
#define RPCRDMA_STATS_COUNT_(g, m) +1
#define RPCRDMA_CLNT_STATS_NFIELDS \
	(0 RPCRDMA_CLNT_STATS_FIELDS(RPCRDMA_STATS_COUNT_))
#define RPCRDMA_SVC_STATS_NFIELDS \
	(0 RPCRDMA_SVC_STATS_FIELDS(RPCRDMA_STATS_COUNT_))
#define RPCRDMA_CONN_STATS_NFIELDS \
	(0 RPCRDMA_CONN_STATS_FIELDS(RPCRDMA_STATS_COUNT_))

/*
 * Print st to f as described above.  label names the object (NULL or ""
 * gives lines starting "rpcrdma: name value").  The object's lines are
 * written under flockfile(f), so they are never interleaved with another
 * thread's.
 */
void rpcrdma_stats_print_clnt(FILE *f, const char *label,
			      const struct rpcrdma_clnt_stats *st);
void rpcrdma_stats_print_svc(FILE *f, const char *label,
			     const struct rpcrdma_svc_stats *st);
/* One line; label is the server's followed by " conn PEER", e.g.
 * "svc 0.0.0.0:20049 conn 192.0.2.5:40001" (rpcrdma_stats_label() with
 * that kind). */
void rpcrdma_stats_print_conn(FILE *f, const char *label,
			      const struct rpcrdma_stats_conn *c);

/*
 * A label "KIND ADDR:PORT" (IPv6: "KIND [ADDR]:PORT"), followed by
 * " prog 0xPROG vVERS" when prog is not 0, e.g.
 * "clnt 192.0.2.1:20049 prog 0x20005243 v1" or "svc [::]:20049".  sa may be
 * NULL (no address).  Truncated to len - 1 characters; returns buf.
 */
#define RPCRDMA_STATS_LABEL_LEN 128
char *rpcrdma_stats_label(char *buf, size_t len, const char *kind,
			  const struct sockaddr *sa, rpcprog_t prog,
			  rpcvers_t vers);

/* One tracked object; embed it in the object. */
struct rpcrdma_stats_reg {
	/* Set by the owner (rpcrdma_stats_reg_init()) before tracking:
	 * prints the object's counters to f. */
	void (*get)(struct rpcrdma_stats_reg *reg, FILE *f);
	/* Optional, set by the owner after rpcrdma_stats_reg_init(): prints
	 * its live connections to f (the socket only). */
	void (*conns)(struct rpcrdma_stats_reg *reg, FILE *f);
	/* Private to the registry. */
	struct rpcrdma_stats_reg *prev, *next;
	pid_t pid;  /* process that tracked it */
	bool print; /* at untrack or exit: RPCRDMA_STATS was on at track */
	bool tracked;
};

/* The struct containing reg, as container_of(). */
#define RPCRDMA_STATS_OWNER(reg, type, member) \
	((type *)(void *)((char *)(reg)-offsetof(type, member)))

/* Zero reg and set its callback.  A zeroed struct with get set is the
 * same. */
void rpcrdma_stats_reg_init(struct rpcrdma_stats_reg *reg,
			    void (*get)(struct rpcrdma_stats_reg *, FILE *));

/* True if RPCRDMA_STATS is set, non-empty and not "0" (read now). */
bool rpcrdma_stats_enabled(void);

/* Start tracking reg if rpcrdma_stats_enabled() or RPCRDMA_STATS_SOCKET
 * is set (then starting the socket if it is not yet); else do nothing.
 * Thread-safe.  Tracking a tracked reg does nothing. */
void rpcrdma_stats_track(struct rpcrdma_stats_reg *reg);

/* Stop tracking reg, printing it first if print is true and RPCRDMA_STATS
 * was on when it was tracked.  Does nothing if reg is not tracked (both
 * variables were off when it was tracked, it was already untracked, or
 * the exit handler already printed it).  Thread-safe; must not be called
 * from a get() or conns() callback. */
void rpcrdma_stats_untrack(struct rpcrdma_stats_reg *reg, bool print);

/*
 * Print every object this process tracks, oldest first, each with get()
 * then conns(), to f (the socket's answer).  Takes the registry's lock.
 * Returns the number of objects.
 */
unsigned int rpcrdma_stats_report(FILE *f);

#endif /* RPCRDMA_GLUE_STATS_H */
