/*
 * rpcrdma_statsock.h - the statistics socket of RPCRDMA_STATS_SOCKET
 * (rpcrdma-environ(7)): how a running program answers rpcrdma-stat(1)
 * with the counters of its CLIENTs and servers.  Internal to the library;
 * the macros below are the protocol, which tools/rpcrdma-stat.c includes
 * too, so both ends spell it in one place.
 *
 * Where
 * -----
 * RPCRDMA_STATS_SOCKET names a directory (one that exists, or any value
 * ending in '/'), and the socket is DIR/rpcrdma.PID.sock; or any other
 * path, used as it is.  The socket is made at the first track of an object
 * with the variable set (rpcrdma_stats_track()), owner-only (mode 0600 from
 * the start, and a peer whose uid is neither ours nor root is refused),
 * and removed by the registry's exit handler.  A socket file left by a
 * process that is gone (killed, or exec()ed) is replaced; one that answers
 * is left alone and this process serves none, with one message.  A fork()ed
 * child never serves its parent's objects: its first track makes its own
 * socket, for its own pid.
 *
 * Protocol
 * --------
 * The client connects and sends nothing; the server writes one answer and
 * closes:
 *
 *     rpcrdma: pid 1234 comm rdemo_server
 *     rpcrdma: LABEL: name value ...        (rpcrdma_stats_report())
 *     ...
 *     rpcrdma: end
 *
 * or, for a peer it refuses, one line "rpcrdma: error: WHY".  An answer
 * without its last line was cut (the program exited, or the client did
 * not read it within RPCRDMA_STATSOCK_TIMEOUT_MS).
 *
 * Serving
 * -------
 * One detached thread, with every signal blocked, accepts and answers one
 * client at a time.  The answer is rendered into memory under the
 * registry's lock, then sent with the lock released, so a client that does
 * not read holds up neither the program nor, for longer than
 * RPCRDMA_STATSOCK_TIMEOUT_MS, the next client.
 */
#ifndef RPCRDMA_GLUE_STATSOCK_H
#define RPCRDMA_GLUE_STATSOCK_H

#define RPCRDMA_STATSOCK_ENV	    "RPCRDMA_STATS_SOCKET"
#define RPCRDMA_STATSOCK_PREFIX	    "rpcrdma."
#define RPCRDMA_STATSOCK_SUFFIX	    ".sock"
#define RPCRDMA_STATSOCK_FIRST	    "rpcrdma: pid "
#define RPCRDMA_STATSOCK_END	    "rpcrdma: end\n"
#define RPCRDMA_STATSOCK_ERROR	    "rpcrdma: error: "
#define RPCRDMA_STATSOCK_TIMEOUT_MS 2000

/* The variable's value (secure_getenv()), or NULL if unset or empty. */
const char *rpcrdma_statsock_wanted(void);

/*
 * Make the socket for where (the variable's value) and start its thread,
 * unless this process did (or tried and said why not) already.  Called
 * with the registry's lock held.
 */
void rpcrdma_statsock_start(const char *where);

/* Remove the socket if this process made it (the registry's exit handler,
 * its lock held). */
void rpcrdma_statsock_exit(void);

/* In a fork()ed child: close its copy of the parent's socket. */
void rpcrdma_statsock_forked(void);

#endif /* RPCRDMA_GLUE_STATSOCK_H */
