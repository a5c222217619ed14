/*
 * rr_srv_err.c - RDMA_ERROR: which one a request is answered with and why
 * (for the counters and the trace), its queueing until a Send buffer is
 * free, and its sending.  Below every file that refuses a Call; above only
 * the pool and the connection.
 */
#include <errno.h>
#include <string.h>

#include "rpc/rr_srv_conn.h"
#include "rpc/rr_srv_err.h"
#include "rpc/rr_srv_pool.h"

/* Trace names of the causes (rpcrdma-trace(7)). */
static const char *const cause_names[] = {
	[RR_CAUSE_HDR] = "header",
	[RR_CAUSE_TOO_BIG] = "too_big",
	[RR_CAUSE_NO_ROOM] = "no_room",
	[RR_CAUSE_BAD_MSG] = "bad_msg",
	[RR_CAUSE_WRITE_ROOM] = "write_room",
	[RR_CAUSE_FAILED_XID] = "failed_xid",
	[RR_CAUSE_SYSTEM] = "system",
};

void rr_srv_set_error2(struct rr_sreq *req, uint32_t code, uint32_t arg1,
		       uint32_t arg2, enum rr_srv_cause cause)
{
	memset(&req->err, 0, sizeof(req->err));
	req->err.what = RW_ACT_REPLY_ERR;
	req->err.err = code;
	req->err.arg1 = arg1;
	req->err.arg2 = arg2;
	req->ctl = RR_CTL_ERROR;
	req->cause = cause;
}

void rr_srv_set_error(struct rr_sreq *req, uint32_t code,
		      enum rr_srv_cause cause)
{
	rr_srv_set_error2(req, code, 0, 0, cause);
}

/* A fault of ours, not of the Call: v2 says SYSTEM (V2-ERR-16), v1 can
 * only say ERR_CHUNK. */
void rr_srv_set_fault(struct rr_sreq *req, enum rr_srv_cause cause)
{
	rr_srv_set_error(req,
			 req->rx.hdr.vers == RW_VERS_2 ? RW2_ERR_SYSTEM :
							 RW_ERR_CHUNK,
			 cause);
}

void rr_srv_queue_error(struct rr_srv *srv, struct rr_sreq *req)
{
	req->state = RR_ERRQ;
	rr_srv_q_push(&srv->errq, req);
}

static void count_error(struct rr_srv *srv, const struct rr_sreq *req)
{
	if (req->err.err == RW_ERR_VERS) {
		srv->st.err_vers++;
		return;
	}
	srv->st.err_chunk++;
	if (req->rx.hdr.vers == RW_VERS_2 && req->err.err != RW2_ERR_BAD_XDR)
		srv->st.err_v2++;
	if (req->err.err == RW2_ERR_REPLY_RESOURCE ||
	    req->err.err == RW2_ERR_WRITE_RESOURCE)
		srv->st.err_resource++;
	if (req->cause == RR_CAUSE_TOO_BIG)
		srv->st.err_too_big++;
	else if (req->cause == RR_CAUSE_NO_ROOM)
		srv->st.err_no_room++;
	else if (req->cause == RR_CAUSE_BAD_MSG)
		srv->st.err_bad_msg++;
	else if (req->cause == RR_CAUSE_WRITE_ROOM)
		srv->st.err_write_room++;
	else if (req->cause == RR_CAUSE_FAILED_XID)
		srv->st.err_failed_xid++;
}

/*
 * Send req's RDMA_ERROR in b: it echoes the Call's XID and version and
 * carries the current grant (V1-ERR-5, AMB-V1-8).  b is consumed.
 */
int rr_srv_send_error(struct rr_srv *srv, struct rr_sreq *req,
		      struct rt_sbuf *b)
{
	uint32_t grant = rr_srv_grant(srv);
	struct rt_err err;
	size_t n;
	int ret;

	n = rw_err_from_action(&req->rx, &req->err, grant, rt_sbuf_data(b),
			       rt_sbuf_size(b));
	rr_srv_answered(srv, req);
	if (!n) {
		/* The wire layer refuses to answer this one (it cannot
		 * happen for what rw_reason_action() asked us to answer). */
		rt_sbuf_put(srv->conn, b);
		srv->st.discarded++;
		return -EINVAL;
	}
	ret = rt_post_send(srv->conn, b, (uint32_t)n, NULL, 0, 0, 0, 0, &err);
	if (ret)
		return ret;
	count_error(srv, req);
	TR_EVENT(srv_rdma_error, srv->trace_id, req->rx.hdr.xid,
		 "code=%u err=%s cause=%s credits=%u", req->err.err,
		 rw_err_str(req->rx.hdr.vers, req->err.err),
		 cause_names[req->cause], grant);
	return 0;
}
