/*
 * v2t_server.c - the v2t program (tests/rpc/v2t.x) over RPC-over-RDMA for
 * the Version Two VM tests (t_v2.c): FILL and ECHO with no Upper-Layer
 * Binding entry, so a large result fits nowhere on the first attempt, and
 * SEEN, which says how often they ran - a resend answered from the kept
 * reply does not run them again - and what the caller's connection speaks
 * (SVCGET_RDMA_VERSION, SVCGET_RDMA_PEER_PROPS, SVCGET_RDMA_STATS).
 *
 * usage: v2t_server [-4|-6] [-a ADDR] [-p PORT] [-c CREDITS]
 * (prints "listening on ADDR port N"; SIGTERM: clean exit 0, ddp_serve.h).
 * The version it speaks: RPCRDMA_VERSION in its environment.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "v2t.h"
#include "tests/vm/ddp_serve.h"

/* The dispatch function of v2t_svc.c (rpcgen declares it nowhere). */
void v2t_prog_1(struct svc_req *rq, SVCXPRT *x);

static uint64_t fills, echoes;

bool_t v2t_null_1_svc(void *arg, void *res, struct svc_req *rq)
{
	return TRUE;
}

bool_t v2t_fill_1_svc(v2t_fill_args *arg, v2t_data *res, struct svc_req *rq)
{
	fills++;
	res->v2t_data_len = arg->len;
	res->v2t_data_val = malloc(arg->len ? arg->len : 1);
	if (!res->v2t_data_val) {
		res->v2t_data_len = 0;
		svcerr_systemerr(rq->rq_xprt);
		return FALSE;
	}
	ddp_pattern(res->v2t_data_val, arg->len, arg->seed);
	return TRUE;
}

bool_t v2t_echo_1_svc(v2t_data *arg, v2t_data *res, struct svc_req *rq)
{
	echoes++;
	*res = *arg; /* the argument's memory becomes the result's */
	arg->v2t_data_len = 0;
	arg->v2t_data_val = NULL;
	return TRUE;
}

bool_t v2t_seen_1_svc(void *arg, v2t_seen *res, struct svc_req *rq)
{
	struct rpcrdma_svc_stats st;
	struct rpcrdma_props p;
	unsigned int v = 0;

	memset(res, 0, sizeof(*res));
	memset(&st, 0, sizeof(st));
	memset(&p, 0, sizeof(p));
	if (!SVC_CONTROL(rq->rq_xprt, SVCGET_RDMA_VERSION, &v) ||
	    !SVC_CONTROL(rq->rq_xprt, SVCGET_RDMA_PEER_PROPS, &p) ||
	    !SVC_CONTROL(rq->rq_xprt, SVCGET_RDMA_STATS, &st)) {
		svcerr_systemerr(rq->rq_xprt);
		return FALSE;
	}
	res->fills = fills;
	res->echoes = echoes;
	res->rdma_version = v;
	res->props_received = p.received;
	res->rbsiz = p.rbsiz;
	res->brs = p.brs;
	res->v2_requests = st.v2_requests;
	res->replies_inv = st.replies_inv;
	res->err_resource = st.err_resource;
	res->replays_done = st.replays_done;
	res->replays_missed = st.replays_missed;
	res->err_vers = st.err_vers;
	return TRUE;
}

int v2t_prog_1_freeresult(SVCXPRT *x, xdrproc_t proc, caddr_t res)
{
	xdr_free(proc, res);
	return 1;
}

int main(int argc, char **argv)
{
	return ddp_serve(argc, argv, "v2t_server", V2T_PROG, V2T_VERS,
			 v2t_prog_1);
}
