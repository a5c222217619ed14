/*
 * ddp_serve.h - the main loop shared by the servers of the direct data
 * placement VM tests (ddpt_server.c, nfs3_server.c): options,
 * svc_rdma_create(), svc_reg(), the "listening on ADDR port N" line that
 * ts_server_start() (t_svc_util.h) waits for, libtirpc's unchanged
 * svc_run(), and a clean exit 0 on SIGTERM or SIGINT (so a leak checker's
 * verdict shows in the exit status), as tests/vm/rtest_server.c does; also
 * when the process that started it dies (PR_SET_PDEATHSIG).  SIGUSR1 drops
 * every connection and listens again (t_sig_relisten()).
 *
 * usage: SERVER [-4|-6] [-a ADDR] [-p PORT] [-c CREDITS]
 *
 * The Upper-Layer Binding table is whatever the environment gives
 * (RPCRDMA_ULB_CONF, set by the test that starts the server).
 */
#ifndef DDP_SERVE_H
#define DDP_SERVE_H

#include <rpc/rpc.h>

typedef void (*ddp_dispatch_fn)(struct svc_req *rq, SVCXPRT *x);

/* Serve prog/vers until SIGTERM; returns the exit status. */
int ddp_serve(int argc, char **argv, const char *name, rpcprog_t prog,
	      rpcvers_t vers, ddp_dispatch_fn dispatch);

/* The test pattern: byte i = (seed + i * 131) & 0xff. */
void ddp_pattern(void *buf, size_t len, unsigned int seed);

#endif /* DDP_SERVE_H */
