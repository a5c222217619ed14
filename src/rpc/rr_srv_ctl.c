/*
 * rr_srv_ctl.c - what a responder answers itself, without the RPC layer:
 * transport properties (digest 2.10: CONNPROP, UPDPROP, REQPROP; xcharext
 * characteristics in compatibility mode, digest 3.6), our own CONNPROP, and
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

void rr_srv_v2_limits(struct rr_srv *s)
{
	const struct rw_cm_private *pd = rt_conn_peer_private(s->c);
	uint32_t send = RW_V2_INLINE_DEFAULT;

	if (pd->valid && pd->recv_size > send)
		send = pd->recv_size;
	if (s->peer.advertised & RW_SP_BIT(RW_SP_RBSIZ))
		send = rw_props_send_limit(&s->peer, UINT32_MAX);
	s->v2_send = rt_conn_set_inline_send(s->c, send);
}

/* A property message whose values are invalid: an XDR error (V2-PROP-2,
 * AMB-V2-2). */
static void bad_props(struct rr_srv *s, struct rr_sreq *r)
{
	r->ctl = RR_CTL_ERROR;
	rr_srv_set_error(r, RW2_ERR_BAD_XDR, RR_CAUSE_HDR);
	rr_srv_queue_error(s, r);
}

static void peer_props_changed(struct rr_srv *s)
{
	s->st.props_received++;
	if (s->v2_send)
		rr_srv_v2_limits(s);
	if (s->peer.val[RW_SP_BRS] != RW2_BRS_NONE && !s->connprop_sent)
		s->connprop_due = true;
}

/* v2-05 property operations, procs 6-9 (the RESPROP a responder never
 * asked for is refused by rw_validate_call). */
static bool take_props(struct rr_srv *s, struct rr_sreq *r)
{
	const struct rw_hdr *h = &r->rx.hdr;
	enum rw_reason why;

	switch (h->proc) {
	case RW2_CONNPROP:
		why = rw_props_initial(&s->peer, RW_PC_V2, &h->props,
				       &h->subset1);
		break;
	case RW2_UPDPROP:
		why = rw_props_update(&s->peer, RW_PC_V2, &h->props);
		break;
	case RW2_REQPROP:
		s->st.props_received++;
		r->ctl = RR_CTL_RESPROP;
		rr_srv_queue_error(s, r);
		return true;
	default:
		return false;
	}
	if (why) {
		bad_props(s, r);
		return true;
	}
	peer_props_changed(s);
	rr_srv_req_put(s, r); /* one-way: nothing to answer */
	return true;
}

/* xcharext-02 operations in RDMA2_OPTIONAL, read with xcharext ids and
 * never otherwise (AMB-X-1). */
static bool take_xchar(struct rr_srv *s, struct rr_sreq *r)
{
	const struct rw_hdr *h = &r->rx.hdr;
	struct rw_xchar_msg m;
	enum rw_reason why;

	if (!s->opts.xcharext || h->proc != RW2_OPTIONAL ||
	    h->opt.type < RW_XC_INITXCH || h->opt.type > RW_XC_UPDXCH ||
	    h->opt.type == RW_XC_RESPXCH)
		return false;
	why = rw_xchar_decode(h->opt.type, h->opt.info, h->opt.len, &m);
	if (!why && m.type == RW_XC_REQXCH) {
		s->st.props_received++;
		r->ctl = RR_CTL_RESPXCH;
		rr_srv_queue_error(s, r);
		return true;
	}
	if (!why && m.type == RW_XC_INITXCH)
		why = rw_props_initial(&s->peer, RW_PC_XCHAR, &m.set, &m.nochg);
	else if (!why)
		why = rw_props_update(&s->peer, RW_PC_XCHAR, &m.set);
	if (why) {
		bad_props(s, r);
		return true;
	}
	peer_props_changed(s);
	rr_srv_req_put(s, r);
	return true;
}

/*
 * r (decoded, perhaps refused) is a control message we take ourselves:
 * true when it is (then it is answered, queued or freed here).
 */
bool rr_srv_take_control(struct rr_srv *s, struct rr_sreq *r)
{
	const struct rw_hdr *h = &r->rx.hdr;

	if (h->vers != RW_VERS_2)
		return false;
	if (r->rx.why == RW_R_BAD_OPTION)
		return take_xchar(s, r);
	if (r->rx.why)
		return false;
	return take_props(s, r);
}

/* ---- The control queue --------------------------------------------------- */

/* Our properties, as every answer and our CONNPROP state them: the
 * Receives we post and, backward Replies coming inline, BRS INLINE
 * (AMB-V2-18). */
static void local_props(const struct rr_srv *s, struct rw_props *local)
{
	rw_props_init(local);
	local->val[RW_SP_RBSIZ] = rt_conn_local_private(s->c)->recv_size;
	local->val[RW_SP_BRS] = RW2_BRS_INLINE;
}

static size_t build_resprop(struct rr_srv *s, const struct rr_sreq *r,
			    uint32_t credit, void *buf, size_t cap)
{
	struct rw_props local;
	struct rw_hdr h;

	local_props(s, &local);
	rw_hdr_init(&h, RW_VERS_2, RW2_RESPROP, r->rx.hdr.xid, credit);
	rw_props_answer(&local, RW_PC_V2, &r->rx.hdr.props, &h.subset1,
			&h.subset2);
	return rw_hdr_encode(&h, buf, cap); /* rdma_other empty */
}

/* The answer to a REQXCH, against the same properties as a REQPROP's
 * (XC-10, V2-PROP-6: "done" only for the value in force). */
static size_t build_respxch(const struct rr_srv *s, const struct rr_sreq *r,
			    uint32_t credit, void *buf, size_t cap)
{
	struct rw_subset done, rej;
	struct rw_xchar_msg m;
	uint8_t info[2 * (4 + 4 * RW_MAX_SUBSET_WORDS) + 4];
	struct rw_props local;
	struct rw_hdr h;

	local_props(s, &local);
	if (rw_xchar_decode(RW_XC_REQXCH, r->rx.hdr.opt.info, r->rx.hdr.opt.len,
			    &m))
		return 0;
	rw_props_answer(&local, RW_PC_XCHAR, &m.set, &done, &rej);
	rw_hdr_init(&h, RW_VERS_2, RW2_OPTIONAL, r->rx.hdr.xid, credit);
	h.opt.dir = RW_DIR_REPLY;
	h.opt.type = RW_XC_RESPXCH;
	h.opt.len = (uint32_t)rw_xchar_respxch(&done, &rej, info, sizeof(info));
	h.opt.info = info;
	return h.opt.len ? rw_hdr_encode(&h, buf, cap) : 0;
}

/* Send r's control answer in b (consumed). */
int rr_srv_send_ctl(struct rr_srv *s, struct rr_sreq *r, struct rt_sbuf *b)
{
	struct rt_err err;
	size_t n;

	if (r->ctl == RR_CTL_ERROR)
		return rr_srv_send_error(s, r, b);
	n = r->ctl == RR_CTL_RESPROP ?
		    build_resprop(s, r, rr_srv_grant(s), rt_sbuf_data(b),
				  rt_sbuf_size(b)) :
		    build_respxch(s, r, rr_srv_grant(s), rt_sbuf_data(b),
				  rt_sbuf_size(b));
	rr_srv_answered(s, r);
	if (!n) {
		rt_sbuf_put(s->c, b);
		s->st.discarded++;
		return -EINVAL;
	}
	s->st.props_sent++;
	return rt_post_send(s->c, b, (uint32_t)n, NULL, 0, 0, 0, 0, &err);
}

/* Our CONNPROP, when due and a Send buffer is free. */
void rr_srv_send_connprop(struct rr_srv *s)
{
	struct rw_prop props[RW_SP_NR];
	uint8_t data[4 * RW_SP_NR];
	struct rw_props local;
	struct rt_sbuf *b;
	struct rt_err err;
	struct rw_hdr h;
	size_t n;

	if (!s->connprop_due || s->dead)
		return;
	b = rt_sbuf_get(s->c, &err);
	if (!b)
		return;
	s->connprop_due = false;
	s->connprop_sent = true;
	local_props(s, &local);
	rw_hdr_init(&h, RW_VERS_2, RW2_CONNPROP, s->bc_xid++, 1);
	rw_props_start(&local, &h.props, &h.subset1, props, data);
	n = rw_encode_call(&h, rt_sbuf_data(b), rt_sbuf_size(b));
	if (!n) {
		rt_sbuf_put(s->c, b);
		return;
	}
	if (!rt_post_send(s->c, b, (uint32_t)n, NULL, 0, 0, 0, 0, &err))
		s->st.props_sent++;
}

/* Send what waits in errq; true if a Send buffer was asked for (which may
 * have collected completions the caller must look at). */
bool rr_srv_flush_errors(struct rr_srv *s)
{
	struct rt_sbuf *b;
	struct rt_err err;
	bool asked = false;

	struct rr_sreq *r;

	while (s->errq.head && !s->dead) {
		asked = true;
		b = rt_sbuf_get(s->c, &err);
		if (!b)
			break; /* all in flight: a completion wakes us */
		r = rr_srv_q_pop(&s->errq);
		rr_srv_send_ctl(s, r, b);
		rr_srv_req_put(s, r);
	}
	return asked;
}
