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

void rr_srv_set_error2(struct rr_sreq *r, uint32_t code, uint32_t arg1,
		       uint32_t arg2, enum rr_srv_cause cause)
{
	memset(&r->err, 0, sizeof(r->err));
	r->err.what = RW_ACT_REPLY_ERR;
	r->err.err = code;
	r->err.arg1 = arg1;
	r->err.arg2 = arg2;
	r->ctl = RR_CTL_ERROR;
	r->cause = cause;
}

void rr_srv_set_error(struct rr_sreq *r, uint32_t code, enum rr_srv_cause cause)
{
	rr_srv_set_error2(r, code, 0, 0, cause);
}

/* A fault of ours, not of the Call: v2 says SYSTEM (V2-ERR-16), v1 can
 * only say ERR_CHUNK. */
void rr_srv_set_fault(struct rr_sreq *r, enum rr_srv_cause cause)
{
	rr_srv_set_error(r,
			 r->rx.hdr.vers == RW_VERS_2 ? RW2_ERR_SYSTEM :
						       RW_ERR_CHUNK,
			 cause);
}

void rr_srv_queue_error(struct rr_srv *s, struct rr_sreq *r)
{
	r->state = RR_ERRQ;
	rr_srv_q_push(&s->errq, r);
}

static void count_error(struct rr_srv *s, const struct rr_sreq *r)
{
	if (r->err.err == RW_ERR_VERS) {
		s->st.err_vers++;
		return;
	}
	s->st.err_chunk++;
	if (r->rx.hdr.vers == RW_VERS_2 && r->err.err != RW2_ERR_BAD_XDR)
		s->st.err_v2++;
	if (r->err.err == RW2_ERR_REPLY_RESOURCE ||
	    r->err.err == RW2_ERR_WRITE_RESOURCE)
		s->st.err_resource++;
	if (r->cause == RR_CAUSE_TOO_BIG)
		s->st.err_too_big++;
	else if (r->cause == RR_CAUSE_NO_ROOM)
		s->st.err_no_room++;
	else if (r->cause == RR_CAUSE_BAD_MSG)
		s->st.err_bad_msg++;
	else if (r->cause == RR_CAUSE_WRITE_ROOM)
		s->st.err_write_room++;
	else if (r->cause == RR_CAUSE_FAILED_XID)
		s->st.err_failed_xid++;
}

/*
 * Send r's RDMA_ERROR in b: it echoes the Call's XID and version and
 * carries the current grant (V1-ERR-5, AMB-V1-8).  b is consumed.
 */
int rr_srv_send_error(struct rr_srv *s, struct rr_sreq *r, struct rt_sbuf *b)
{
	uint32_t grant = rr_srv_grant(s);
	struct rt_err err;
	size_t n;
	int ret;

	n = rw_err_from_action(&r->rx, &r->err, grant, rt_sbuf_data(b),
			       rt_sbuf_size(b));
	rr_srv_answered(s, r);
	if (!n) {
		/* The wire layer refuses to answer this one (it cannot
		 * happen for what rw_reason_action() asked us to answer). */
		rt_sbuf_put(s->c, b);
		s->st.discarded++;
		return -EINVAL;
	}
	ret = rt_post_send(s->c, b, (uint32_t)n, NULL, 0, 0, 0, 0, &err);
	if (ret)
		return ret;
	count_error(s, r);
	TR_EVENT(srv_rdma_error, s->trace_id, r->rx.hdr.xid,
		 "code=%u err=%s cause=%s credits=%u", r->err.err,
		 rw_err_str(r->rx.hdr.vers, r->err.err), cause_names[r->cause],
		 grant);
	return 0;
}
