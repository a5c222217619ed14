/*
 * rpcrdma_err.h - creation failures of the glue, as libtirpc reports them
 * (rpc_createerr) and in words a person can act on.
 *
 * libtirpc's rpc_createerr holds a status and an errno, no text: "RPC:
 * Remote system error - No such device" is all clnt_spcreateerror() could
 * say about a host without an RDMA device.  So a constructor that fails
 * sets rpc_createerr and keeps, per thread, one line saying what failed
 * and why (with a hint when the cause is local, e.g. no RDMA device); our
 * clnt_spcreateerror() and clnt_pcreateerror() (netid_err.c, taking over
 * libtirpc's, src/netid/netid_err.c) append that line for as long as rpc_createerr still holds
 * what went with it.  The line is also logged once, at level error.
 *
 * A caller that may go on to another address or transport after a failure
 * holds the log (rpcrdma_createerr_hold()): failures meanwhile are logged
 * at level info only, and when the outermost holder gives up
 * (rpcrdma_createerr_release(true)) the failure rpc_createerr reports, if
 * it is one of ours, is logged at level error - unless level info already
 * showed it.  So a failed call prints one error line, and a call that
 * succeeded over tcp after rdma failed prints none.
 */
#ifndef RPCRDMA_GLUE_ERR_H
#define RPCRDMA_GLUE_ERR_H

#include <stdbool.h>

#include <sys/socket.h>

#include <rpc/rpc.h>

/* The longest line of words kept for one failure. */
#define RPCRDMA_ERR_WORDS_LEN 384

/* Set rpc_createerr (cf_stat and cf_error.re_status = stat,
 * cf_error.re_errno = err) and forget the words of an earlier failure. */
void rpcrdma_createerr(enum clnt_stat stat, int err);

/*
 * Set rpc_createerr as above, keep "who: words" (plus a hint for ENODEV)
 * for clnt_spcreateerror() in this thread, and log it at level error.
 * Returns NULL, for constructors' tail calls.
 */
void *rpcrdma_createerr_why(enum clnt_stat stat, int err, const char *who,
			    const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The words kept for the failure rpc_createerr holds now, or NULL. */
const char *rpcrdma_createerr_words(void);

/* Hold the log of failures, and let it go (failed: the call gives up). */
void rpcrdma_createerr_hold(void);
void rpcrdma_createerr_release(bool failed);

/*
 * Before rpcbind is asked where a server is: can an RDMA device reach sa
 * (NULL: is there an RDMA device at all), within timeout_ms?  0 if so;
 * otherwise -1 with rpc_createerr set and the cause kept as who's words
 * and logged.  So a host without a device hears that, not "Program not
 * registered" from rpcbind.
 */
int rpcrdma_unreachable(const struct sockaddr *sa, const char *who,
			unsigned int timeout_ms);

#endif /* RPCRDMA_GLUE_ERR_H */
