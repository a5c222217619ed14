/*
 * t_sig_xprt.h - how the VM test servers stop: SIGTERM or SIGINT ends
 * libtirpc's unchanged svc_run(), through a signalfd registered as one more
 * SVCXPRT, so main() returns and a leak checker's verdict shows in the exit
 * status.  Shared by rtest_server.c and ddp_serve.c (and rbench.c).
 */
#ifndef T_SIG_XPRT_H
#define T_SIG_XPRT_H

#include <rpc/rpc.h>

/* Block SIGTERM and SIGINT and register their signalfd with svc_run:
 * either signal makes svc_run() return.  NULL on failure. */
SVCXPRT *t_sig_xprt(void);

#endif /* T_SIG_XPRT_H */
