/*
 * tr_trace.h - the trace (prefix tr_): one line per event, written to the
 * file that the environment variable RPCRDMA_TRACE names, and a USDT probe
 * (provider "rpcrdma", <sys/sdt.h>) at the same point, so that bpftrace or
 * perf can attach to a running program without restarting it.
 *
 * Beside the stack like src/wire, but not pure: it owns a file descriptor
 * and a lock.  src/transport and src/rpc use it where they make a decision
 * (connections, a call's plan, replies, RDMA_ERRORs, fences); src/wire
 * never does, and this unit includes nothing of the project but compiler.h.
 * rpcrdma-trace(7) documents the events, their keys and the probes' argument
 * order; tests/unit/probes.sh checks that every documented probe is in the
 * library.
 *
 * Cost: a trace point is TR_EVENT(), which expands to the probe (a nop and
 * an ELF note; its operands are values the code has at hand) and one
 * predictable branch on tr_on.  Nothing else runs, no lock is taken and no
 * system call made, unless RPCRDMA_TRACE was set when the library was
 * loaded.  Connection ids (tr_conn_id_new) are handed out whether or not
 * the log is on, so probes and log lines name connections alike.
 */
#ifndef TR_TRACE_H
#define TR_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "compiler.h"

#ifdef HAVE_SYS_SDT_H
#define SDT_USE_VARIADIC 1 /* STAP_PROBEV */
#include <sys/sdt.h>
/* A USDT probe rpcrdma:name with the connection id, the XID and the rest. */
#define TR_PROBE(name, ...) STAP_PROBEV(rpcrdma, name, __VA_ARGS__)
#else
#define TR_PROBE(name, ...) \
	do {                \
	} while (0)
#endif

/* The log is on: RPCRDMA_TRACE named a file that could be opened. */
extern bool tr_on;

/*
 * One event: the probe rpcrdma:name(conn, xid, ...) and, when the log is
 * on, the line "rpcrdma-trace: TIME pid=P conn=C xid=0xX name " fmt.  The
 * same arguments go to both, so the probe's arguments after conn and xid
 * are the values of the line's keys, in order.  At most ten of them (the
 * probes' limit is twelve); events of a connection rather than of one RPC
 * give xid 0.
 */
#define TR_EVENT(name, conn, xid, fmt, ...)                                \
	do {                                                               \
		TR_PROBE(name, (uint32_t)(conn), (uint32_t)(xid),          \
			 ##__VA_ARGS__);                                   \
		if (unlikely(tr_on))                                       \
			tr_emit((conn), (xid), #name, fmt, ##__VA_ARGS__); \
	} while (0)

/* A new connection id: 1, 2, 3 ... in this process, never reused. */
uint32_t tr_conn_id_new(void);

/* Write one line (TR_EVENT's second half; never call it directly). */
void tr_emit(uint32_t conn, uint32_t xid, const char *event, const char *fmt,
	     ...) __attribute__((format(printf, 4, 5)));

/* ---- Set up (the library's constructor; tests) --------------------------- */

/*
 * Start the log on spec: NULL or "" leaves it off, "-" or "stderr" writes
 * to standard error, anything else is a file opened for appending (created
 * with mode 0600).  A file that cannot be opened is said in one line on
 * standard error, and the log stays off.  Returns 0 or -errno.  Replaces
 * a log already open.
 */
int tr_open(const char *spec);

/* Read RPCRDMA_TRACE (secure_getenv: never for a set-user-ID program) and
 * tr_open() it.  The library's constructor does it once. */
int tr_open_env(void);

/* Stop the log and close its file. */
void tr_close(void);

#endif /* TR_TRACE_H */
