/*
 * t_sig_xprt.h - how the VM test servers stop: SIGTERM or SIGINT ends
 * libtirpc's unchanged svc_run(), through a signalfd registered as one more
 * SVCXPRT, so main() returns and a leak checker's verdict shows in the exit
 * status.  Shared by rtest_server.c and ddp_serve.c (and rbench.c).  The
 * same signalfd takes SIGUSR1, a fault the tests inject: t_sig_relisten()
 * makes it drop every connection of a listener (t_fault.c).
 */
#ifndef T_SIG_XPRT_H
#define T_SIG_XPRT_H

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

/* Block SIGTERM and SIGINT and register their signalfd with svc_run:
 * either signal makes svc_run() return.  NULL on failure. */
SVCXPRT *t_sig_xprt(void);

/*
 * On SIGUSR1 destroy *lx, the listening SVCXPRT, with every connection it
 * accepted (their clients see them end, whatever they were doing), and
 * listen again on the same address and port with attr, prog/vers served by
 * dispatch; print "dropped every connection, listening on port N".  It
 * runs from svc_run's own thread, between two dispatches.  Without it
 * SIGUSR1 is ignored.
 */
void t_sig_relisten(SVCXPRT **lx, const struct rpcrdma_attr *attr,
		    rpcprog_t prog, rpcvers_t vers,
		    void (*dispatch)(struct svc_req *, SVCXPRT *));

#endif /* T_SIG_XPRT_H */
