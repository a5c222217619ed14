/*
 * ddpt_server.c - the ddpt program (tests/rpc/ddpt.x) served over
 * RPC-over-RDMA through the public API, for the direct data placement VM
 * tests (t_ddp.c).  Which items move by RDMA is decided by the
 * library from the Upper-Layer Binding table in $RPCRDMA_ULB_CONF (the
 * generated tests/rpc/ddpt.conf); the procedures only shape the data.
 *
 * usage: ddpt_server [-4|-6] [-a ADDR] [-p PORT] [-c CREDITS]
 * (prints "listening on ADDR port N"; SIGTERM: clean exit 0, ddp_serve.h)
 *
 * DDPT_STATS answers from the transport's counters
 * (SVC_CONTROL(SVCGET_RDMA_STATS)), cumulative over all connections.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "ddpt.h"
#include "tests/vm/ddp_serve.h"

/* The dispatch function of ddpt_svc.c (rpcgen declares it nowhere). */
void ddpt_prog_1(struct svc_req *rq, SVCXPRT *x);

/* The argument's opaque f becomes the result's: no copy of large data
 * (rpcgen names the members of opaque f<> f_len and f_val). */
#define STEAL(res, arg, f)                           \
	do {                                         \
		(res)->f.f##_len = (arg)->f.f##_len; \
		(res)->f.f##_val = (arg)->f.f##_val; \
		(arg)->f.f##_len = 0;                \
		(arg)->f.f##_val = NULL;             \
	} while (0)

bool_t ddpt_null_1_svc(void *arg, void *res, struct svc_req *rq)
{
	return TRUE;
}

bool_t ddpt_echo_1_svc(ddpt_echo_args *arg, ddpt_echo_res *res,
		       struct svc_req *rq)
{
	STEAL(res, arg, data);
	return TRUE;
}

bool_t ddpt_plain_1_svc(ddpt_plain_args *arg, ddpt_plain_res *res,
			struct svc_req *rq)
{
	STEAL(res, arg, data);
	return TRUE;
}

/* Swapped: the first Write chunk gets b, the second a (V1-WC-3). */
bool_t ddpt_multi_1_svc(ddpt_multi_args *arg, ddpt_multi_res *res,
			struct svc_req *rq)
{
	STEAL(res, arg, b);
	STEAL(res, arg, note);
	STEAL(res, arg, a);
	return TRUE;
}

/* len octets of the pattern, in newly allocated memory; false if none. */
static bool make_data(u_int *lenp, char **valp, uint64_t len, unsigned int seed,
		      struct svc_req *rq)
{
	*lenp = 0;
	*valp = NULL;
	if (len > DDPT_MAXDATA) {
		svcerr_decode(rq->rq_xprt);
		return false;
	}
	*valp = malloc(len ? len : 1);
	if (!*valp) {
		svcerr_systemerr(rq->rq_xprt);
		return false;
	}
	*lenp = (u_int)len;
	ddp_pattern(*valp, len, seed);
	return true;
}

/* count + extra octets (extra may be negative: a short result). */
bool_t ddpt_read_1_svc(ddpt_read_args *arg, ddpt_read_res *res,
		       struct svc_req *rq)
{
	int64_t len = (int64_t)arg->count + arg->extra;

	memset(res, 0, sizeof(*res));
	if (len < 0)
		len = 0;
	if (!make_data(&res->data.data_len, &res->data.data_val, (uint64_t)len,
		       arg->seed, rq))
		return FALSE;
	res->count = res->data.data_len;
	return TRUE;
}

bool_t ddpt_long_1_svc(ddpt_long_args *arg, ddpt_long_res *res,
		       struct svc_req *rq)
{
	memset(res, 0, sizeof(*res));
	if (!make_data(&res->data.data_len, &res->data.data_val, arg->len,
		       arg->seed, rq))
		return FALSE;
	if (!make_data(&res->blob.blob_len, &res->blob.blob_val, arg->blob,
		       arg->seed + 1, rq)) {
		free(res->data.data_val);
		res->data.data_val = NULL;
		return FALSE;
	}
	return TRUE;
}

bool_t ddpt_stats_1_svc(void *arg, ddpt_stats *res, struct svc_req *rq)
{
	struct rpcrdma_svc_stats st;

	memset(&st, 0, sizeof(st));
	memset(res, 0, sizeof(*res));
	if (!SVC_CONTROL(rq->rq_xprt, SVCGET_RDMA_STATS, &st)) {
		svcerr_systemerr(rq->rq_xprt);
		return FALSE;
	}
	res->requests = st.requests;
	res->replies_long = st.replies_long;
	res->err_chunk = st.err_chunk;
	res->err_write_room = st.err_write_room;
	res->read_chunks = st.read_chunks;
	res->read_bytes = st.read_bytes;
	res->write_chunks = st.write_chunks;
	res->write_bytes = st.write_bytes;
	res->reply_chunks = st.reply_chunks;
	res->reply_bytes = st.reply_bytes;
	res->inline_bytes = st.inline_bytes;
	res->ddp_copies = st.ddp_copies;
	res->ddp_copy_bytes = st.ddp_copy_bytes;
	res->err_resource = st.err_resource;
	res->replays_done = st.replays_done;
	return TRUE;
}

int ddpt_prog_1_freeresult(SVCXPRT *x, xdrproc_t proc, caddr_t res)
{
	xdr_free(proc, res);
	return 1;
}

int main(int argc, char **argv)
{
	return ddp_serve(argc, argv, "ddpt_server", DDPT_PROG, DDPT_VERS,
			 ddpt_prog_1);
}
