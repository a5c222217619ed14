/*
 * rr_srv_ctl.c - what a responder answers itself, without the RPC layer:
 * transport properties (v2-05 §6: CONNPROP, UPDPROP, REQPROP; xcharext
 * characteristics in compatibility mode, AMB-V2-1), our own CONNPROP, and
 * the Send of everything in the control queue (RDMA_ERROR, RESPROP,
 * RESPXCH).
 *
 * Properties change what we may send: a v2 client may be sent 4096
 * octets, or its Receive Buffer Size once it says so (V2-INL-2,
 * V2-PROP-8); nothing it says makes us post smaller Receives (AMB-V2-17).
 * Our own properties never change on a live connection, so a change
 * request gets "done" for what is already so and "rejected" for the rest
 * (V2-PROP-6), and we never send UPDPROP.
 *
 * Our CONNPROP is a backward-direction one-way message (AMB-V2-6).  It is
 * sent once the client's CONNPROP says it takes backward traffic (Backward
 * Request Support other than NONE; AMB-V2-9 item 3), so it lands in a
 * Receive the client posted for that.
 */
#include <errno.h>
#include <string.h>

#include "rpc/rr_srv_conn.h"
#include "rpc/rr_srv_ctl.h"
#include "rpc/rr_srv_err.h"
#include "rpc/rr_srv_pool.h"
#include "wire/rw_plan.h"

void rr_srv_v2_limits(struct rr_srv *srv)
{
	const struct rw_cm_private *pd = rt_conn_peer_private(srv->conn);
	uint32_t send = RW_V2_INLINE_DEFAULT;

	if (pd->valid && pd->recv_size > send)
		send = pd->recv_size;
	if (srv->peer.advertised & RW_SP_BIT(RW_SP_RBSIZ))
		send = rw_props_send_limit(&srv->peer, UINT32_MAX);
	srv->v2_send = rt_conn_set_inline_send(srv->conn, send);
}

/* A property message whose values are invalid: an XDR error (V2-PROP-2,
 * AMB-V2-2). */
static void bad_props(struct rr_srv *srv, struct rr_sreq *req)
{
	req->ctl = RR_CTL_ERROR;
	rr_srv_set_error(req, RW2_ERR_BAD_XDR, RR_CAUSE_HDR);
	rr_srv_queue_error(srv, req);
}

static void peer_props_changed(struct rr_srv *srv)
{
	srv->st.props_received++;
	if (srv->v2_send)
		rr_srv_v2_limits(srv);
	if (srv->peer.val[RW_SP_BRS] != RW2_BRS_NONE && !srv->connprop_sent)
		srv->connprop_due = true;
}

/* v2-05 property operations, procs 6-9 (the RESPROP a responder never
 * asked for is refused by rw_validate_call). */
static bool take_props(struct rr_srv *srv, struct rr_sreq *req)
{
	const struct rw_hdr *h = &req->rx.hdr;
	enum rw_reason why;

	switch (h->proc) {
	case RW2_CONNPROP:
		why = rw_props_initial(&srv->peer, RW_PC_V2, &h->props,
				       &h->subset1);
		break;
	case RW2_UPDPROP:
		why = rw_props_update(&srv->peer, RW_PC_V2, &h->props);
		break;
	case RW2_REQPROP:
		srv->st.props_received++;
		req->ctl = RR_CTL_RESPROP;
		rr_srv_queue_error(srv, req);
		return true;
	default:
		return false;
	}
	if (why) {
		bad_props(srv, req);
		return true;
	}
	peer_props_changed(srv);
	rr_srv_req_put(srv, req); /* one-way: nothing to answer */
	return true;
}

/* xcharext-02 operations in RDMA2_OPTIONAL, read with xcharext ids and
 * never otherwise (AMB-X-1). */
static bool take_xchar(struct rr_srv *srv, struct rr_sreq *req)
{
	const struct rw_hdr *h = &req->rx.hdr;
	struct rw_xchar_msg m;
	enum rw_reason why;

	if (!srv->opts.xcharext || h->proc != RW2_OPTIONAL ||
	    h->opt.type < RW_XC_INITXCH || h->opt.type > RW_XC_UPDXCH ||
	    h->opt.type == RW_XC_RESPXCH)
		return false;
	why = rw_xchar_decode(h->opt.type, h->opt.info, h->opt.len, &m);
	if (!why && m.type == RW_XC_REQXCH) {
		srv->st.props_received++;
		req->ctl = RR_CTL_RESPXCH;
		rr_srv_queue_error(srv, req);
		return true;
	}
	if (!why && m.type == RW_XC_INITXCH)
		why = rw_props_initial(&srv->peer, RW_PC_XCHAR, &m.set,
				       &m.nochg);
	else if (!why)
		why = rw_props_update(&srv->peer, RW_PC_XCHAR, &m.set);
	if (why) {
		bad_props(srv, req);
		return true;
	}
	peer_props_changed(srv);
	rr_srv_req_put(srv, req);
	return true;
}

/*
 * req (decoded, perhaps refused) is a control message we take ourselves:
 * true when it is (then it is answered, queued or freed here).
 */
bool rr_srv_take_control(struct rr_srv *srv, struct rr_sreq *req)
{
	const struct rw_hdr *h = &req->rx.hdr;

	if (h->vers != RW_VERS_2)
		return false;
	if (req->rx.why == RW_R_BAD_OPTION)
		return take_xchar(srv, req);
	if (req->rx.why)
		return false;
	return take_props(srv, req);
}

/* ---- The control queue --------------------------------------------------- */

/* Our properties, as every answer and our CONNPROP state them: the
 * Receives we post and, backward Replies coming inline, BRS INLINE
 * (AMB-V2-18). */
static void local_props(const struct rr_srv *srv, struct rw_props *local)
{
	rw_props_init(local);
	local->val[RW_SP_RBSIZ] = rt_conn_local_private(srv->conn)->recv_size;
	local->val[RW_SP_BRS] = RW2_BRS_INLINE;
}

static size_t build_resprop(struct rr_srv *srv, const struct rr_sreq *req,
			    uint32_t credit, void *buf, size_t cap)
{
	struct rw_props local;
	struct rw_hdr h;

	local_props(srv, &local);
	rw_hdr_init(&h, RW_VERS_2, RW2_RESPROP, req->rx.hdr.xid, credit);
	rw_props_answer(&local, RW_PC_V2, &req->rx.hdr.props, &h.subset1,
			&h.subset2);
	return rw_hdr_encode(&h, buf, cap); /* rdma_other empty */
}

/* The answer to a REQXCH, against the same properties as a REQPROP's
 * (XC-10, V2-PROP-6: "done" only for the value in force). */
static size_t build_respxch(const struct rr_srv *srv, const struct rr_sreq *req,
			    uint32_t credit, void *buf, size_t cap)
{
	struct rw_subset done, rej;
	struct rw_xchar_msg m;
	uint8_t info[2 * (4 + 4 * RW_MAX_SUBSET_WORDS) + 4];
	struct rw_props local;
	struct rw_hdr h;

	local_props(srv, &local);
	if (rw_xchar_decode(RW_XC_REQXCH, req->rx.hdr.opt.info,
			    req->rx.hdr.opt.len, &m))
		return 0;
	rw_props_answer(&local, RW_PC_XCHAR, &m.set, &done, &rej);
	rw_hdr_init(&h, RW_VERS_2, RW2_OPTIONAL, req->rx.hdr.xid, credit);
	h.opt.dir = RW_DIR_REPLY;
	h.opt.type = RW_XC_RESPXCH;
	h.opt.len = (uint32_t)rw_xchar_respxch(&done, &rej, info, sizeof(info));
	h.opt.info = info;
	return h.opt.len ? rw_hdr_encode(&h, buf, cap) : 0;
}

/* Send req's control answer in b (consumed). */
int rr_srv_send_ctl(struct rr_srv *srv, struct rr_sreq *req, struct rt_sbuf *b)
{
	struct rt_err err;
	size_t n;

	if (req->ctl == RR_CTL_ERROR)
		return rr_srv_send_error(srv, req, b);
	n = req->ctl == RR_CTL_RESPROP ?
		    build_resprop(srv, req, rr_srv_grant(srv), rt_sbuf_data(b),
				  rt_sbuf_size(b)) :
		    build_respxch(srv, req, rr_srv_grant(srv), rt_sbuf_data(b),
				  rt_sbuf_size(b));
	rr_srv_answered(srv, req);
	if (!n) {
		rt_sbuf_put(srv->conn, b);
		srv->st.discarded++;
		return -EINVAL;
	}
	srv->st.props_sent++;
	return rt_post_send(srv->conn, b, (uint32_t)n, NULL, 0, 0, 0, 0, &err);
}

/* Our CONNPROP, when due and a Send buffer is free. */
void rr_srv_send_connprop(struct rr_srv *srv)
{
	struct rw_prop props[RW_SP_NR];
	uint8_t data[4 * RW_SP_NR];
	struct rw_props local;
	struct rt_sbuf *b;
	struct rt_err err;
	struct rw_hdr h;
	size_t n;

	if (!srv->connprop_due || srv->dead)
		return;
	b = rt_sbuf_get(srv->conn, &err);
	if (!b)
		return;
	srv->connprop_due = false;
	srv->connprop_sent = true;
	local_props(srv, &local);
	rw_hdr_init(&h, RW_VERS_2, RW2_CONNPROP, srv->bc_xid++, 1);
	rw_props_start(&local, &h.props, &h.subset1, props, data);
	n = rw_encode_call(&h, rt_sbuf_data(b), rt_sbuf_size(b));
	if (!n) {
		rt_sbuf_put(srv->conn, b);
		return;
	}
	if (!rt_post_send(srv->conn, b, (uint32_t)n, NULL, 0, 0, 0, 0, &err))
		srv->st.props_sent++;
}

/* Send what waits in errq; true if a Send buffer was asked for (which may
 * have collected completions the caller must look at). */
bool rr_srv_flush_errors(struct rr_srv *srv)
{
	struct rt_sbuf *b;
	struct rt_err err;
	bool asked = false;

	struct rr_sreq *req;

	while (srv->errq.head && !srv->dead) {
		asked = true;
		b = rt_sbuf_get(srv->conn, &err);
		if (!b)
			break; /* all in flight: a completion wakes us */
		req = rr_srv_q_pop(&srv->errq);
		rr_srv_send_ctl(srv, req, b);
		rr_srv_req_put(srv, req);
	}
	return asked;
}
