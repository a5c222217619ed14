/*
 * rr_call.c - one call of the requester, from credit to decode stream
 * (rr_call.h; architecture.md "One call, as data").
 *
 *   rr_call
 *     credit      take one of the connection's window, waiting while none
 *                 (V1-CR-4, V1-CR-6)
 *     encode      the caller's encoder on the reducing stream, into the Send
 *                 buffer behind the room of the transport header, or into
 *                 pool memory when it will not fit inline
 *     plan        rw_plan_call: Short, Chunked or Long, Reply chunk or not
 *     expose      PZRC read-only, reduced items read-only, Reply chunk
 *                 remote-write (rt_reg_expose)
 *     send        rw_encode_call, XID into the table, rt_post_send
 *     wait        rr_wait until the Reply, the deadline or the connection's end
 *     finish      revoke every exposure (rt_reg_revoke), then the decode
 *                 stream
 *   rr_call_done  Receive buffer, credit, memory, slot: all given back
 *
 * Every ending - Reply, RDMA_ERROR, timeout, lost connection, a failure
 * while building - goes through finish()/release(), so a call's memory is
 * always fenced before it is reused or handed to the caller.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpc/rr_call_priv.h"
#include "rpc/rr_util.h"

/* Octets the encoder may need beyond the arguments: RPC call header,
 * credential and verifier of the largest size (2 x 400 + 8 each). */
#define RR_HDR_SLACK 1024u
/* Largest RPC Call message (the PZRC has RR_PZRC_SEGS segments). */
#define RR_MAX_CALL ((size_t)RR_PZRC_SEGS * RT_REG_MAX_SEG)
/* Octets of an RPC reply header besides the results: xid, direction,
 * reply status, verifier (flavour, length, up to 400 octets), accept
 * status. */
#define RR_REPLY_HDR 512u

/* ---- Slots -------------------------------------------------------------- */

static struct rr_call *slot_get(struct rr_clnt *rr)
{
	struct rr_call *call = rr->free_slots;

	if (call) {
		rr->free_slots = call->next;
	} else {
		call = malloc(sizeof(*call));
		if (!call)
			return NULL;
		rr->nslots++;
	}
	memset(call, 0, RR_CALL_ZEROED);
	call->state = RR_S_PREP;
	rr->busy_slots++;
	return call;
}

static void slot_put(struct rr_clnt *rr, struct rr_call *call)
{
	call->state = RR_S_FREE;
	call->next = rr->free_slots;
	rr->free_slots = call;
	rr->busy_slots--;
}

void rr_slots_free(struct rr_clnt *rr)
{
	struct rr_call *call;

	while ((call = rr->free_slots)) {
		rr->free_slots = call->next;
		free(call);
	}
}

/* ---- Credits ------------------------------------------------------------ */

static struct rw_credits *call_credits(struct rr_call *call)
{
	return rt_conn_credits(call->conn->rt);
}

/*
 * Credits a call needs free before it takes one: a one-way Call leaves the
 * last one to the NULL Call that brings one-way credits back, unless that
 * is on its way already or the grant is a single credit (doc/oneway.md).
 */
static uint32_t credits_needed(const struct rr_call *call)
{
	const struct rw_credits *credits = rt_conn_credits(call->conn->rt);

	if (!call->oneway || call->flush || call->conn->flush_pending ||
	    credits->granted < 2)
		return 1;
	return 2;
}

static bool credit_ready(void *arg)
{
	struct rr_call *call = arg;

	return call->conn->lost ||
	       rw_credits_window(call_credits(call)) >= credits_needed(call);
}

static bool credit_take(struct rr_call *call)
{
	return rw_credits_window(call_credits(call)) >= credits_needed(call) &&
	       rw_credits_take(call_credits(call));
}

static void note_inflight(struct rr_clnt *rr, const struct rw_credits *credits)
{
	uint32_t limit = credits->established ? credits->granted : 1;

	if (credits->inflight > rr->st.max_inflight)
		rr->st.max_inflight = credits->inflight;
	if (credits->inflight > limit)
		rr->st.over_grant++;
}

/* Calls of conn that hold a credit: how many, and how many of them timed
 * out (abandoned by their caller, not one-way). */
static unsigned int holders(struct rr_clnt *rr, const struct rr_conn *conn,
			    unsigned int *abandoned)
{
	struct rr_call *call;
	unsigned int i, n = 0;

	*abandoned = 0;
	for (i = 0; i < RR_XID_BUCKETS; i++)
		for (call = rr->xids[i]; call; call = call->next) {
			if (call->conn != conn || !call->credit)
				continue;
			n++;
			*abandoned += call->state == RR_S_ORPHAN &&
				      !call->oneway;
		}
	return n;
}

/*
 * Only a new connection gives back the credits of calls no Reply will
 * finish: close conn (counted, traced), so that the next attempt connects
 * afresh - as the kernel's xprtrdma disconnects when an RPC times out.
 */
static void recover(struct rr_clnt *rr, struct rr_conn *conn,
		    unsigned int abandoned, unsigned int oneways)
{
	rr->st.recoveries++;
	TR_EVENT(recover, conn->trace_id, 0, "abandoned=%u oneway=%u",
		 abandoned, oneways);
	rr_conn_retire(rr, conn);
}

static bool take_credit(struct rr_clnt *rr, struct rr_call *call,
			int64_t deadline, struct rr_result *res)
{
	struct rr_conn *conn = call->conn;
	unsigned int abandoned;
	bool ready;

	while (!conn->lost && !credit_take(call)) {
		/* Every credit is held by a call that timed out (not one
		 * being built, which holds a credit outside the XID table):
		 * waiting is waiting for Replies that will not come (the
		 * server dropped the calls, or is gone). */
		holders(rr, conn, &abandoned);
		if (abandoned && abandoned == call_credits(call)->inflight) {
			recover(rr, conn, abandoned, 0);
			call->recovered = true;
			break;
		}
		rr->credit_waiters++;
		ready = rr_wait(rr, conn, credit_ready, call, deadline, NULL);
		rr->credit_waiters--;
		if (ready)
			continue;
		/* Nothing but calls the layer finishes holds a credit: one-way
		 * Calls whose NULL Call went unanswered, or calls that timed
		 * out (the Replies they wait for are not coming). */
		if (holders(rr, conn, &abandoned) == abandoned + conn->oneways)
			recover(rr, conn, abandoned, conn->oneways);
		rr_res_set(
			res, RR_TIMEDOUT, ETIMEDOUT,
			"no credit for a new call before the deadline (%u calls outstanding)",
			call_credits(call)->inflight);
		return false;
	}
	if (conn->lost) {
		rr_res_set(res, RR_CANTSEND, rt_conn_error(conn->rt)->code,
			   "%s", rt_conn_error(conn->rt)->msg);
		return false;
	}
	call->credit = true;
	note_inflight(rr, call_credits(call));
	return true;
}

/* The credit goes back once the Receive buffer of the Reply is posted
 * again, so that calls in flight plus Replies being decoded never exceed
 * the Receives (V1-RB-2). */
static void credit_return(struct rr_clnt *rr, struct rr_call *call)
{
	struct rw_credits *credits;

	if (!call->credit)
		return;
	call->credit = false;
	if (call->conn->lost)
		return; /* the window died with the connection */
	credits = call_credits(call);
	/* A one-way Call finished by a later Reply carries no grant: its
	 * credit comes back as one never used. */
	if (call->state == RR_S_PREP || call->retired)
		rw_credits_cancel(credits);
	else
		rw_credits_complete(credits, call->grant,
				    call->res.status == RR_ERR_VERS ||
					    call->res.status == RR_ERR_CHUNK);
	if (credits->established && credits->granted > rr->st.max_granted)
		rr->st.max_granted = credits->granted;
	if (rr->credit_waiters)
		rr_wake_all(rr);
}

/* ---- Releasing ---------------------------------------------------------- */

static void free_bufs(struct rr_call *call)
{
	struct rt_conn *rt = call->conn->rt;

	if (call->sbuf)
		rt_sbuf_put(rt, call->sbuf);
	call->sbuf = NULL;
	rt_reg_buf_free(rt, call->long_buf);
	call->long_buf = NULL;
	if (call->reply_heap)
		free(call->reply_buf);
	else
		rt_reg_buf_free(rt, call->reply_buf);
	call->reply_buf = NULL;
	call->reply_heap = false;
	for (unsigned int i = 0; i < call->nwrites; i++) {
		if (call->wpool[i])
			rt_reg_buf_free(rt, call->wbuf[i]);
		call->wbuf[i] = NULL;
		call->wpool[i] = false;
	}
}

/* ---- One-way Calls (doc/oneway.md) ------------------------------------- */

static void oneway_link(struct rr_conn *conn, struct rr_call *call)
{
	call->oneway_next = NULL;
	call->oneway_prev = conn->oneway_tail;
	if (conn->oneway_tail)
		conn->oneway_tail->oneway_next = call;
	else
		conn->oneway_head = call;
	conn->oneway_tail = call;
	conn->oneways++;
}

static void oneway_unlink(struct rr_conn *conn, struct rr_call *call)
{
	if (call->oneway_prev)
		call->oneway_prev->oneway_next = call->oneway_next;
	else
		conn->oneway_head = call->oneway_next;
	if (call->oneway_next)
		call->oneway_next->oneway_prev = call->oneway_prev;
	else
		conn->oneway_tail = call->oneway_prev;
	call->oneway_prev = call->oneway_next = NULL;
	conn->oneways--;
	if (call->flush)
		conn->flush_pending = false;
}

/* Give back everything of call (lock held).  Its exposures are revoked first
 * if that has not happened yet. */
static void release(struct rr_clnt *rr, struct rr_call *call)
{
	struct rr_conn *conn = call->conn;

	if (call->regs) {
		rt_regset_destroy(call->regs);
		call->regs = NULL;
	}
	if (call->rbuf)
		rt_recv_repost(conn->rt, call->rbuf);
	call->rbuf = NULL;
	if (call->oneway_prev || conn->oneway_head == call)
		oneway_unlink(conn, call);
	credit_return(rr, call);
	free_bufs(call);
	if (call->state != RR_S_PREP)
		rr_xid_remove(rr, call);
	rr_collect(rr, conn);
	rr_conn_put(rr, conn);
	slot_put(rr, call);
}

static int fence(struct rr_clnt *rr, struct rr_call *call)
{
	unsigned int handles;
	struct rt_err err;
	int ret;

	if (!call->regs)
		return 0;
	handles = rt_regset_count(call->regs);
	ret = rt_reg_revoke(call->regs, &err);
	if (ret)
		rr->st.revoke_failures++;
	if (handles)
		TR_EVENT(fence, call->conn->trace_id, call->xid,
			 "handles=%u status=%d", handles, ret);
	return ret;
}

/* An abandoned call's Reply came, or its connection ended. */
static void orphan_finish(struct rr_clnt *rr, struct rr_call *call)
{
	fence(rr, call);
	release(rr, call);
}

/*
 * The caller leaves without a Reply.  Its own memory must be fenced now;
 * the layer's buffers stay exposed until the peer is done with them (the
 * late Reply) or the connection ends.
 */
static void orphan(struct rr_clnt *rr, struct rr_call *call)
{
	call->state = RR_S_ORPHAN;
	call->waiter = NULL;
	rr->st.orphans++;
	if (call->caller_mem)
		fence(rr, call);
}

/*
 * A Reply (or RDMA_ERROR) to the Call sent seq-th on conn: the server has
 * taken every one-way Call sent before it, so their credits come back and
 * their memory is fenced (doc/oneway.md, the convention of AMB-V2-6).
 */
static void oneways_retire(struct rr_clnt *rr, struct rr_conn *conn,
			   uint64_t seq)
{
	struct rr_call *call;

	while ((call = conn->oneway_head) && call->seq < seq) {
		call->retired = true;
		orphan_finish(rr, call);
	}
}

void rr_call_complete(struct rr_clnt *rr, struct rr_call *call)
{
	oneways_retire(rr, call->conn, call->seq);
	if (call->state == RR_S_ORPHAN) {
		if (!call->oneway)
			rr->st.late_replies++;
		orphan_finish(rr, call);
		return;
	}
	call->state = RR_S_DONE;
	rr_wake(call->waiter);
}

void rr_call_fail(struct rr_clnt *rr, struct rr_call *call, enum rr_status st,
		  int err, const char *msg)
{
	if (call->state == RR_S_ORPHAN) {
		orphan_finish(rr, call);
		return;
	}
	if (call->state != RR_S_WAIT)
		return;
	rr_res_set(&call->res, st, err, "%s", msg);
	call->state = RR_S_DONE;
	rr_wake(call->waiter);
}

/* ---- Encoding ----------------------------------------------------------- */

/* What rw_plan_call() needs to know about this connection and call. */
static void call_plan_in(const struct rr_clnt *rr, const struct rr_call *call,
			 const struct rw_rxdr *rxdr, struct rw_call_in *in)
{
	uint32_t i, reduced = rxdr ? rw_rxdr_reduced_len(rxdr) : 0;

	memset(in, 0, sizeof(*in));
	in->vers = call->conn->vers;
	in->call_inline = call->conn->call_inline;
	in->reply_inline = call->conn->reply_inline;
	in->payload_len = rxdr ? rw_rxdr_unreduced_len(rxdr) : 0;
	in->reduced_len = reduced;
	for (i = 0; rxdr && i < rw_rxdr_nitems(rxdr); i++)
		in->read_segs += (call->items[i].len + RT_REG_MAX_SEG - 1) /
				 RT_REG_MAX_SEG;
	in->pzrc_segs = reduced > RT_REG_MAX_SEG ? (reduced + RT_REG_MAX_SEG -
						    1) / RT_REG_MAX_SEG :
						   1;
	in->write_chunks = call->nwrites;
	in->write_segs = call->nwrites;
	in->max_reply_len = (uint32_t)call->max_reply;
	in->reply_chunk_segs = RR_REPLY_SEGS;
}

/* Room the transport header of a Short call takes in the Send buffer. */
static uint32_t short_hdr_len(const struct rr_clnt *rr,
			      const struct rr_call *call)
{
	struct rw_call_plan p;
	struct rw_call_in in;

	call_plan_in(rr, call, NULL, &in);
	rw_plan_call(&in, &p);
	return p.hdr_len;
}

/* Run the encoder into buf; false with the stream's error if it failed. */
static bool encode_into(struct rr_call *call, const struct rr_req *req,
			const struct rw_ddp_policy *pol, void *buf, size_t cap,
			struct rw_rxdr *rxdr)
{
	bool ok;

	rw_rxdr_create(rxdr, buf, cap, pol, call->items, RR_MAX_ITEMS);
	ok = req->encode(&rxdr->xdr, req->arg);
	if (rw_rxdr_finish(rxdr) != RW_XERR_OK)
		return false;
	if (!ok && rw_rxdr_error(rxdr) == RW_XERR_OK)
		rxdr->err = RW_XERR_BAD_ARG; /* the encoder refused */
	return ok;
}

static size_t long_size(const struct rr_req *req, size_t tried)
{
	size_t want = req->size_hint + RR_HDR_SLACK;

	if (want <= tried)
		want = tried * 2;
	want = (want + 4095) & ~(size_t)4095;
	return want;
}

/* Pool memory for the Long message (lock taken for the connection). */
static bool long_alloc(struct rr_clnt *rr, struct rr_call *call, size_t cap,
		       struct rr_result *res)
{
	struct rt_err err;

	pthread_mutex_lock(&rr->lock);
	rt_reg_buf_free(call->conn->rt, call->long_buf);
	call->long_buf = NULL;
	if (!call->conn->lost)
		call->long_buf = rt_reg_buf_alloc(call->conn->rt, cap, &err);
	else
		rt_err_set(&err, ENOTCONN, "%s",
			   rt_conn_error(call->conn->rt)->msg);
	pthread_mutex_unlock(&rr->lock);
	if (!call->long_buf) {
		rr_res_set(res, RR_CANTSEND, err.code,
			   "no memory for a Long Call of %zu octets: %s", cap,
			   err.msg);
		return false;
	}
	call->long_cap = cap;
	return true;
}

/*
 * Encode without the lock (the Send buffer and pool memory are the call's
 * own until posted).  Inline first when the hint says it may fit, then in
 * ever larger pool memory.  *inl tells where the message ended up.
 */
static bool call_encode(struct rr_clnt *rr, struct rr_call *call,
			const struct rr_req *req,
			const struct rw_ddp_policy *pol, uint32_t hlen,
			struct rw_rxdr *rxdr, bool *inl, struct rr_result *res)
{
	uint8_t *sb = rt_sbuf_data(call->sbuf);
	uint32_t room = call->conn->call_inline;
	size_t cap = 0;

	room = room > hlen ? room - hlen : 0;
	*inl = req->size_hint + RR_HDR_SLACK / 2 <= room;
	if (*inl && encode_into(call, req, pol, sb + hlen, room, rxdr))
		return true;
	if (*inl && rw_rxdr_error(rxdr) != RW_XERR_NOSPACE)
		goto bad;
	*inl = false;
	for (;;) {
		cap = long_size(req, cap);
		if (cap > RR_MAX_CALL) {
			rr_res_set(res, RR_CANTENCODE, EMSGSIZE,
				   "call message larger than %zu octets",
				   RR_MAX_CALL);
			return false;
		}
		if (!long_alloc(rr, call, cap, res))
			return false;
		if (encode_into(call, req, pol, call->long_buf, cap, rxdr))
			return true;
		if (rw_rxdr_error(rxdr) != RW_XERR_NOSPACE)
			goto bad;
	}
bad:
	rr_res_set(res, RR_CANTENCODE, EINVAL, "cannot encode the call: %s",
		   rw_xdr_err_str(rw_rxdr_error(rxdr)));
	return false;
}

/* ---- Building and sending ----------------------------------------------- */

/* Resources taken before encoding: a Send buffer (waiting for one if all
 * are in flight) and the Reply chunk's memory. */
static bool prepare(struct rr_clnt *rr, struct rr_call *call, int64_t deadline,
		    struct rr_result *res)
{
	struct rt_conn *rt = call->conn->rt;
	struct rt_err err;

	while (!(call->sbuf = rt_sbuf_get(rt, &err))) {
		if (err.code != EAGAIN || rr_now_ms() >= deadline) {
			rr_res_set(res,
				   err.code == EAGAIN ? RR_TIMEDOUT :
							RR_CANTSEND,
				   err.code, "%s", err.msg);
			return false;
		}
		pthread_mutex_unlock(&rr->lock);
		usleep(100);
		pthread_mutex_lock(&rr->lock);
		rr_drain(rr, call->conn);
	}
	return true;
}

/*
 * The Reply chunk's memory: pool memory, kept registered for the next
 * call; but a resend's larger than RR_REPLY_FIRST (a Reply of unknown size
 * that turned out large) is the call's own and freed with it, so that one
 * large Reply does not pin its size for the connection's lifetime.
 */
static bool reply_alloc(struct rr_clnt *rr, struct rr_call *call,
			struct rr_result *res)
{
	struct rt_err err;
	void *p = NULL;

	call->reply_cap = call->max_reply;
	if (call->reply_resent && call->reply_cap > RR_REPLY_FIRST) {
		if (posix_memalign(&p, 4096, call->reply_cap))
			p = NULL;
		call->reply_buf = p;
		call->reply_heap = p != NULL;
		rt_err_set(&err, ENOMEM, "out of memory");
	} else {
		call->reply_buf =
			rt_reg_buf_alloc(call->conn->rt, call->reply_cap, &err);
	}
	if (!call->reply_buf)
		rr_res_set(res, RR_CANTSEND, err.code,
			   "no memory for a Reply chunk of %zu octets: %s",
			   call->reply_cap, err.msg);
	return call->reply_buf != NULL;
}

/* Expose memory for this call's chunks; its registration set is made
 * with the first (most calls have no chunk, and need none). */
static int expose(struct rr_call *call, void *addr, size_t len,
		  enum rt_access acc, struct rw_segment *segs, unsigned int max,
		  struct rr_result *res)
{
	struct rt_err err;
	int n;

	if (!call->regs) {
		call->regs = rt_regset_create(call->conn->rt, &err);
		if (!call->regs) {
			rr_res_set(res, RR_CANTSEND, err.code, "%s", err.msg);
			return -err.code;
		}
	}
	n = rt_reg_expose(call->regs, addr, len, acc, segs, max, &err);
	if (n < 0)
		rr_res_set(res, RR_CANTSEND, -n, "%s", err.msg);
	return n;
}

/* The Read list: the PZRC of a Long call first, then reduced items at
 * their positions in the unreduced stream (V1-RC-1..3, AMB-V1-6). */
static bool build_reads(struct rr_clnt *rr, struct rr_call *call,
			const struct rw_rxdr *rxdr,
			const struct rw_call_plan *p, struct rr_result *res)
{
	struct rw_segment segs[RR_PZRC_SEGS];
	struct rw_read_builder b;
	unsigned int i;
	int n;

	rw_read_builder_init(&b, call->reads, RR_MAX_READS);
	if (p->kind == RW_LONG) {
		n = expose(call, call->long_buf, rw_rxdr_reduced_len(rxdr),
			   RT_REMOTE_READ, segs, RR_PZRC_SEGS, res);
		if (n < 0 || rw_read_builder_add(&b, 0, segs, (uint32_t)n))
			goto bad;
	}
	for (i = 0; p->kind != RW_SHORT && i < rw_rxdr_nitems(rxdr); i++) {
		const struct rw_ddp_item *it = &call->items[i];

		call->caller_mem = true;
		n = expose(call, (void *)it->data, it->len, RT_REMOTE_READ,
			   segs, RR_PZRC_SEGS, res);
		if (n < 0 ||
		    rw_read_builder_add(&b, it->position, segs, (uint32_t)n))
			goto bad;
		rr->st.read_chunks++;
		rr->st.read_bytes += it->len;
	}
	rw_hdr_set_reads(&call->hdr, &b);
	return true;
bad:
	if (res->status == RR_OK)
		rr_res_set(res, RR_CANTSEND, EINVAL,
			   "cannot build the Read list");
	return false;
}

/* ---- Result items: Write chunks (RFC 8166 §3.5, V1-WC-*) ----------------- */

/*
 * The probe of the caller's results (zero copy) is off in ASan builds:
 * ASan's xdr_string interceptor strlen()s the string before libtirpc's
 * xdr_string sees it, so a NULL string - which libtirpc refuses cleanly,
 * and which a zeroed results structure holds - would crash it.
 */
#if defined(__SANITIZE_ADDRESS__)
#define RR_PROBE 0
#else
#define RR_PROBE 1
#endif

/* How many Write chunks the ULB entry asks for: one per eligible result
 * item (V1-WC-3), if it says how large they are (V1-WC-1). */
static uint32_t writes_wanted(const struct rr_req *req)
{
	const struct rpcrdma_ulb_entry *e = req->reply_ulb;
	uint32_t n;

	/* a walker knows only once the arguments are encoded: assume the
	 * most, for the header's size estimate; reply_sizes() settles it */
	if (req->reply_walk)
		return RR_MAX_WRITES;
	if (!e || !e->items || e->room.kind == RPCRDMA_ULB_SIZE_NONE)
		return 0;
	n = (uint32_t)__builtin_popcountll(e->items);
	if (e->max_chunks && n > e->max_chunks)
		n = e->max_chunks;
	return n < RR_MAX_WRITES ? n : RR_MAX_WRITES;
}

/* A word of the arguments, as the server will decode them. */
static bool args_word(const void *ctx, size_t off, uint32_t *w)
{
	const struct rw_rxdr *rxdr = ctx;

	return off <= UINT32_MAX - rw_rxdr_body_pos(rxdr) &&
	       rw_rxdr_peek_word(rxdr, rw_rxdr_body_pos(rxdr) + (uint32_t)off,
				 w);
}

/* The same words through a view (a walker's plan). */
static bool args_view_word(const struct rw_ddp_view *v, uint32_t off,
			   uint32_t *w)
{
	return args_word(v->s, off, w);
}

/* The largest Reply: its header, the results besides the items placed,
 * and the room of the items that come inline. */
static void set_max_reply(struct rr_call *call, uint32_t max, uint64_t inl)
{
	uint64_t want = (uint64_t)RR_REPLY_HDR + max + inl;

	call->max_reply = want < RR_MAX_REPLY ? (size_t)want : RR_MAX_REPLY;
	call->reply_sized = true;
}

/*
 * A walker binding's plan (NFSv4 COMPOUND): one Write chunk per eligible
 * result in slot order, each as large as that result can be.  A result
 * whose room cannot be a chunk ends the list there, because the chunks
 * map to results by rank (RFC 8267 6.4): it and the later ones come
 * inline.
 */
static void walk_sizes(struct rr_call *call, const struct rr_req *req,
		       const struct rw_rxdr *rxdr, uint32_t max_writes)
{
	struct rw_ddp_view v = { .word = args_view_word, .s = rxdr };
	struct ulb_plan p;
	uint64_t inl;
	uint32_t i;

	memset(&p, 0, sizeof(p));
	if (req->reply_walk->plan(&v,
				  rw_rxdr_unreduced_len(rxdr) -
					  rw_rxdr_body_pos(rxdr),
				  &p))
		memset(&p, 0, sizeof(p));
	call->nwrites = 0;
	inl = p.inline_room;
	for (i = 0; i < p.nslots && i < ULB_PLAN_MAX; i++)
		inl += p.room[i];
	/* A bounded reply that fits inline with every result in it needs
	 * no chunk at all: an empty Write list asks for exactly that
	 * (RFC 8267 6.4), and saves a registration per result. */
	if (p.reply_max && RR_REPLY_HDR + p.reply_max + inl <=
				   rt_conn_inline(call->conn->rt)->recv) {
		set_max_reply(call, p.reply_max, inl);
		return;
	}
	inl = p.inline_room;
	for (i = 0; i < p.nslots && i < ULB_PLAN_MAX; i++) {
		if (i == call->nwrites && i < max_writes && p.room[i] &&
		    p.room[i] <= RT_REG_MAX_SEG)
			call->wroom[call->nwrites++] = p.room[i];
		else
			inl += p.room[i];
	}
	if (p.reply_max)
		set_max_reply(call, p.reply_max, inl);
}

/*
 * The sizes a binding gives this call's Reply, from the entry and the
 * encoded arguments (an NFS READ's count): the room of each Write chunk
 * (at most max_writes of them) and the largest Reply payload.  An entry
 * whose sizes cannot be resolved gives no Write chunks.
 */
static void bound_reply_sizes(struct rr_call *call, const struct rr_req *req,
			      const struct rw_rxdr *rxdr, uint32_t max_writes)
{
	const struct rpcrdma_ulb_entry *e = req->reply_ulb;
	uint32_t room = 0, max = 0, i, inline_items;

	if (req->reply_walk) {
		walk_sizes(call, req, rxdr, max_writes);
		return;
	}
	if (call->nwrites > max_writes)
		call->nwrites = max_writes;
	if (!e ||
	    ulb_sizes_at(e, args_word, rxdr,
			 rw_rxdr_unreduced_len(rxdr) - rw_rxdr_body_pos(rxdr),
			 &room, &max)) {
		call->nwrites = 0;
		return;
	}
	/* min_len of a REPLY entry: the smallest room worth a Write chunk */
	if (!room || room > RT_REG_MAX_SEG || room < e->min_len)
		call->nwrites = 0;
	for (i = 0; i < call->nwrites; i++)
		call->wroom[i] = room;
	/* max=0 is a size: results that are empty (void) need no Reply
	 * chunk; only an entry without max leaves the size unknown */
	if (e->reply_max.kind == RPCRDMA_ULB_SIZE_NONE)
		return;
	/* results not given a Write chunk come inline: count their room */
	inline_items = (uint32_t)__builtin_popcountll(e->items) - call->nwrites;
	set_max_reply(call, max, (uint64_t)inline_items * room);
}

/*
 * The sizes of this call's Reply: what the binding says, then what earlier
 * attempts of the RPC learnt from the server's errors.  The largest Reply
 * decides whether a Reply chunk is offered (V1-RP-1/2).  Without a known
 * largest Reply none is: a Reply that fits inline costs no registration,
 * and one that does not is asked for again with the room the server names
 * (V2-ERR-13), or in v1 with ever larger Reply chunks up to
 * max_reply.
 */
static void reply_sizes(struct rr_call *call, const struct rr_req *req,
			const struct rw_rxdr *rxdr, const struct rr_try *tr)
{
	uint32_t i;

	call->max_reply = 0;
	call->reply_sized = false;
	bound_reply_sizes(call, req, rxdr,
			  tr->limit_writes ? tr->max_writes : RR_MAX_WRITES);
	if (!call->reply_sized && req->reply_max)
		set_max_reply(call, req->reply_max, 0);
	for (i = 0; i < call->nwrites; i++)
		if (tr->wroom[i] > call->wroom[i])
			call->wroom[i] = tr->wroom[i];
	call->reply_resent = false;
	if (tr->reply_room > call->max_reply) {
		call->max_reply = tr->reply_room;
		call->reply_sized = !tr->reply_guess;
		call->reply_resent = true;
	}
}

/*
 * Where result item i lands: the caller's own buffer when the results
 * already hold one of at least room octets (zero copy) and it is large
 * enough to be worth registering (ddp_reg_min), else pool memory, copied
 * once while decoding.
 */
static bool write_buf(struct rr_clnt *rr, struct rr_call *call, uint32_t i,
		      const struct rw_probe_item *found, unsigned int nfound,
		      uint32_t room, struct rr_result *res)
{
	struct rt_err err;
	unsigned int j;

	for (j = 0; j < nfound && room >= rr->opts.ddp_reg_min; j++) {
		if (found[j].index != i || found[j].len < room)
			continue;
		call->wbuf[i] = found[j].data;
		call->caller_mem = true;
		rr->st.ddp_caller_regs++;
		return true;
	}
	call->wbuf[i] = rt_reg_buf_alloc(call->conn->rt, room, &err);
	if (!call->wbuf[i]) {
		rr_res_set(res, RR_CANTSEND, err.code,
			   "no memory for a Write chunk of %u octets: %s", room,
			   err.msg);
		return false;
	}
	call->wpool[i] = true;
	return true;
}

/* The room the caller's own result buffers have, per result item (0: none
 * supplied): a resend must never ask for a result larger than that, since
 * libtirpc decodes an opaque into a supplied buffer without asking its
 * size. */
static void caller_caps(struct rr_call *call, const struct rw_probe_item *found,
			unsigned int nfound)
{
	unsigned int j;

	memset(call->wcap, 0, sizeof(call->wcap));
	for (j = 0; j < nfound; j++)
		if (found[j].index < RR_MAX_WRITES)
			call->wcap[found[j].index] = found[j].len;
}

/* The Write list: one chunk of its result's room per result item. */
static bool build_writes(struct rr_clnt *rr, struct rr_call *call,
			 const struct rr_req *req, struct rr_result *res)
{
	struct rw_probe_item found[RR_MAX_WRITES];
	struct rw_write_builder b;
	unsigned int nfound = 0;
	struct rw_pxdr probe;
	uint32_t i, room;
	int n;

	memset(&call->rpol, 0, sizeof(call->rpol));
	call->rpol.mode = RW_DDP_NONE;
	if (!call->nwrites)
		return true;
	if (req->reply_walk)
		ulb_walk_policy(req->reply_walk, true, 0, &call->rpol);
	else
		ulb_ddp_policy(req->reply_ulb, true, 0, &call->rpol);
	call->rpol.max_chunks = call->nwrites;
	/* the probe sees no encoded results, so a walker finds nothing */
	call->results_unknown = req->xres && req->resp && !RR_PROBE;
	if (RR_PROBE && req->xres && req->resp && !req->reply_walk) {
		rw_pxdr_create(&probe, &call->rpol, found, call->nwrites);
		(void)(*req->xres)(&probe.xdr, req->resp);
		nfound = rw_pxdr_found(&probe);
	}
	caller_caps(call, found, nfound);
	rw_write_builder_init(&b, call->wchunks, RR_MAX_WRITES);
	for (i = 0; i < call->nwrites; i++) {
		room = call->wroom[i];
		if (!write_buf(rr, call, i, found, nfound, room, res))
			return false;
		n = expose(call, call->wbuf[i], room, RT_REMOTE_WRITE,
			   &call->wsegs[i], 1, res);
		if (n < 0)
			return false;
		if (rw_write_builder_add(&b, &call->wsegs[i], 1)) {
			rr_res_set(res, RR_CANTSEND, EINVAL,
				   "cannot build the Write list");
			return false;
		}
	}
	rw_hdr_set_writes(&call->hdr, &b);
	rr->st.write_chunks += call->nwrites;
	return true;
}

/* A Reply was accepted: the octets it says were written into each Write
 * chunk (already checked against what was offered, V1-WC-4/5). */
void rr_call_take_writes(struct rr_clnt *rr, struct rr_call *call,
			 const struct rw_hdr *h)
{
	uint32_t i, s;

	for (i = 0; i < call->nwrites; i++) {
		call->wlen[i] = 0;
		for (s = 0; i < h->nwrites && s < h->writes[i].nsegs; s++)
			call->wlen[i] += h->writes[i].segs[s].length;
		rr->st.write_bytes += call->wlen[i];
	}
}

static bool build_reply_chunk(struct rr_clnt *rr, struct rr_call *call,
			      const struct rw_call_plan *p,
			      struct rr_result *res)
{
	int n;

	if (!p->reply_chunk)
		return true;
	if (!call->reply_buf && !reply_alloc(rr, call, res))
		return false;
	n = expose(call, call->reply_buf, call->reply_cap, RT_REMOTE_WRITE,
		   call->reply_segs, RR_REPLY_SEGS, res);
	if (n < 0)
		return false;
	if (rw_hdr_set_reply(&call->hdr, call->reply_segs, (uint32_t)n)) {
		rr_res_set(res, RR_CANTSEND, EINVAL,
			   "cannot build the Reply chunk");
		return false;
	}
	rr->st.reply_chunks++;
	return true;
}

/*
 * Put the message where the plan wants it: a Short call inline behind a
 * header of exactly hdr_len octets (unreduced if items were cut out), a
 * Chunked one likewise (reduced), a Long one in pool memory.
 */
static bool place_payload(struct rr_call *call, const struct rw_rxdr *rxdr,
			  bool inl, uint32_t hlen, const struct rw_call_plan *p,
			  struct rr_result *res)
{
	uint8_t *sb = rt_sbuf_data(call->sbuf);
	const uint8_t *src = inl ? sb + hlen : call->long_buf;
	uint32_t room = rt_sbuf_size(call->sbuf) - p->hdr_len;
	enum rw_xdr_err e;

	if (p->kind == RW_LONG) {
		if (!inl)
			return true;
		/* Inline did not fit after all (a bigger header): move it. */
		memcpy(call->long_buf, src, rw_rxdr_reduced_len(rxdr));
		return true;
	}
	if (p->kind == RW_SHORT && rw_rxdr_nitems(rxdr)) {
		uint8_t *tmp = malloc(rw_rxdr_unreduced_len(rxdr));

		if (!tmp ||
		    !rw_ddp_unreduce(src, rw_rxdr_reduced_len(rxdr),
				     call->items, rw_rxdr_nitems(rxdr), tmp,
				     rw_rxdr_unreduced_len(rxdr), &e)) {
			free(tmp);
			rr_res_set(res, RR_CANTENCODE, ENOMEM,
				   "cannot send the call inline");
			return false;
		}
		memcpy(sb + p->hdr_len, tmp, rw_rxdr_unreduced_len(rxdr));
		free(tmp);
		return true;
	}
	if (rw_rxdr_reduced_len(rxdr) > room) {
		rr_res_set(res, RR_CANTSEND, EMSGSIZE,
			   "the call does not fit the Send buffer");
		return false;
	}
	memmove(sb + p->hdr_len, src, rw_rxdr_reduced_len(rxdr));
	return true;
}

/* Make sure a Long call has pool memory even if it was encoded inline. */
static bool need_long_buf(struct rr_clnt *rr, struct rr_call *call,
			  const struct rw_rxdr *rxdr, bool inl,
			  const struct rw_call_plan *p, struct rr_result *res)
{
	struct rt_err err;

	if (p->kind != RW_LONG || !inl)
		return true;
	call->long_cap = rw_rxdr_reduced_len(rxdr);
	call->long_buf = rt_reg_buf_alloc(call->conn->rt, call->long_cap, &err);
	if (!call->long_buf)
		rr_res_set(res, RR_CANTSEND, err.code, "%s", err.msg);
	return call->long_buf != NULL;
}

static void count_kind(struct rr_clnt *rr, const struct rw_rxdr *rxdr,
		       const struct rw_call_plan *p)
{
	rr->st.calls++;
	if (p->kind == RW_LONG) {
		rr->st.long_calls++;
		rr->st.long_bytes += rw_rxdr_reduced_len(rxdr);
	} else {
		rr->st.short_calls++;
		rr->st.inline_bytes += p->kind == RW_SHORT ?
					       rw_rxdr_unreduced_len(rxdr) :
					       rw_rxdr_reduced_len(rxdr);
	}
}

/*
 * The handle the Call asks the server to invalidate with Send With
 * Invalidate: in v2 any one of its windows, named in rdma_inv_handle
 * (V2-RI-1/2/6); in v1 the server may pick one itself (RFC 8797), which
 * the call then accepts only if it has a single window.
 */
static uint32_t inv_handle(const struct rr_clnt *rr, const struct rr_call *call)
{
	if (!call->regs)
		return 0;
	if (call->conn->vers == RW_VERS_2)
		return rr->opts.no_inv_nominate ? 0 :
						  rt_regset_inv_any(call->regs);
	return rt_regset_inv_handle(call->regs);
}

static void count_sent(struct rr_clnt *rr, struct rr_call *call)
{
	struct rr_conn *conn = call->conn;

	call->seq = ++conn->seq;
	call->negotiating = conn->negotiating;
	if (conn->vers == RW_VERS_2)
		rr->st.v2_calls++;
	if (call->hdr.inv_handle)
		rr->st.inv_nominated++;
}

/* Trace names of the plans (rpcrdma-trace(7)). */
static const char *const plan_names[] = {
	[RW_SHORT] = "short",
	[RW_CHUNKED] = "chunked",
	[RW_LONG] = "long",
	[RW_NO_ROOM] = "none",
};

/* The call as sent: its plan, the Send's length, what the Read list moves
 * (items; the PZRC of a Long call apart), what the Write list and the
 * Reply chunk offer. */
static void call_trace(const struct rr_call *call, const struct rw_rxdr *rxdr,
		       const struct rw_call_plan *p)
{
	uint32_t payload = rw_rxdr_unreduced_len(rxdr);
	uint32_t reduced = rw_rxdr_reduced_len(rxdr);
	bool chunks = p->kind != RW_SHORT;
	uint64_t wbytes = 0;
	uint32_t i;

	for (i = 0; i < call->nwrites; i++)
		wbytes += call->wroom[i];
	TR_EVENT(call, call->conn->trace_id, call->xid,
		 "kind=%s vers=%u send=%u payload=%u reads=%u read_bytes=%u "
		 "pzrc=%u writes=%u write_bytes=%llu reply_chunk=%zu",
		 plan_names[p->kind], call->conn->vers, p->send_len, payload,
		 chunks ? rw_rxdr_nitems(rxdr) : 0,
		 chunks ? payload - reduced : 0,
		 p->kind == RW_LONG ? reduced : 0, call->nwrites,
		 (unsigned long long)wbytes,
		 p->reply_chunk ? call->reply_cap : 0);
}

/* Plan, expose, encode the transport header and post the Send (lock
 * held).  On success call is in the XID table, waiting. */
static bool call_send(struct rr_clnt *rr, struct rr_call *call,
		      const struct rr_req *req, const struct rr_try *tr,
		      const struct rw_rxdr *rxdr, bool inl, uint32_t hlen,
		      struct rr_result *res)
{
	struct rt_conn *rt = call->conn->rt;
	struct rw_call_plan p;
	struct rw_call_in in;
	struct rt_err err;
	uint32_t len;
	size_t n;

	if (call->conn->lost) {
		rr_res_set(res, RR_CANTSEND, rt_conn_error(rt)->code, "%s",
			   rt_conn_error(rt)->msg);
		return false;
	}
	reply_sizes(call, req, rxdr, tr);
	call_plan_in(rr, call, rxdr, &in);
	rw_plan_call(&in, &p);
	rw_hdr_init(&call->hdr, call->conn->vers,
		    p.kind == RW_LONG ? RW_NOMSG : RW_MSG, call->xid,
		    call_credits(call)->requested);
	call->hdr.direction = RW_DIR_CALL; /* v2 only (V2-DIR-2) */
	if (!need_long_buf(rr, call, rxdr, inl, &p, res) ||
	    !build_reads(rr, call, rxdr, &p, res) ||
	    !build_writes(rr, call, req, res) ||
	    !build_reply_chunk(rr, call, &p, res))
		return false;
	call->inv_handle = inv_handle(rr, call);
	if (call->conn->vers == RW_VERS_2)
		call->hdr.inv_handle = call->inv_handle;
	if (!place_payload(call, rxdr, inl, hlen, &p, res))
		return false;
	n = rw_encode_call(&call->hdr, rt_sbuf_data(call->sbuf), p.hdr_len);
	if (n != p.hdr_len) {
		rr_res_set(
			res, RR_CANTSEND, EINVAL,
			"cannot encode the transport header (%zu of %u octets)",
			n, p.hdr_len);
		return false;
	}
	len = p.send_len;
	call->state = RR_S_WAIT;
	rr_xid_insert(rr, call);
	if (rt_post_send(rt, call->sbuf, len, NULL, 0, 0, 0, 0, &err)) {
		call->sbuf = NULL;
		rr_xid_remove(rr, call);
		call->state = RR_S_PREP; /* never sent */
		rr_res_set(res, RR_CANTSEND, err.code, "%s", err.msg);
		return false;
	}
	call->sbuf = NULL; /* the connection's again */
	count_kind(rr, rxdr, &p);
	count_sent(rr, call);
	call_trace(call, rxdr, &p);
	return true;
}

/* ---- The call ----------------------------------------------------------- */

static bool call_is_done(void *arg)
{
	return ((struct rr_call *)arg)->state == RR_S_DONE;
}

static bool check_long_payload(struct rr_call *call, struct rr_result *res)
{
	struct rw_hdr h;

	if (call->payload != call->reply_buf)
		return true;
	rw_hdr_init(&h, call->hdr.vers, RW_NOMSG, call->xid, 1);
	h.direction = RW_DIR_REPLY;
	if (rw_check_payload(&h, call->payload, call->plen) == RW_R_OK)
		return true;
	rr_res_set(res, RR_CANTDECODE, EBADMSG,
		   "the Reply chunk does not hold the reply to XID 0x%08x",
		   call->xid);
	return false;
}

/* The Reply is in (or the call failed): fence, then open the decode
 * stream (lock held). */
static enum rr_status finish(struct rr_clnt *rr, struct rr_call *call,
			     struct rr_result *res)
{
	uint32_t i;

	fence(rr, call);
	rr_collect(rr, call->conn);
	*res = call->res;
	if (res->status != RR_OK || !check_long_payload(call, res))
		return res->status;
	/* Result items are rebuilt from the Write chunks in order, each the
	 * length the Reply returned (V1-WC-11). */
	for (i = 0; i < call->nwrites; i++) {
		call->wdseg[i].data = call->wbuf[i];
		call->wdseg[i].len = call->wlen[i];
		call->wdchunk[i].position = 0;
		call->wdchunk[i].nsegs = 1;
		call->wdchunk[i].segs = &call->wdseg[i];
	}
	if (!rw_axdr_create(&call->ax, call->payload, call->plen, RW_AXDR_WRITE,
			    call->wdchunk, call->nwrites, &call->rpol)) {
		rr_res_set(res, RR_CANTDECODE, EBADMSG,
			   "cannot decode the reply: %s",
			   rw_xdr_err_str(rw_axdr_error(&call->ax)));
		return res->status;
	}
	return RR_OK;
}

/* Build and send call (lock held on entry and exit), as tr says. */
static bool start(struct rr_clnt *rr, struct rr_call *call,
		  const struct rr_req *req, const struct rr_try *tr,
		  int64_t deadline, struct rr_result *res)
{
	static const struct rw_ddp_policy inline_args = { .mode = RW_DDP_NONE };
	const struct rw_ddp_policy *pol = tr->no_reads ? &inline_args :
							 &req->ddp;
	struct rw_rxdr rxdr;
	uint32_t hlen;
	bool inl, ok;

	if (!take_credit(rr, call, deadline, res) ||
	    !prepare(rr, call, deadline, res))
		return false;
	call->nwrites = writes_wanted(req);
	if (tr->limit_writes && call->nwrites > tr->max_writes)
		call->nwrites = tr->max_writes;
	call->max_reply = tr->reply_room;
	hlen = short_hdr_len(rr, call);
	pthread_mutex_unlock(&rr->lock);
	ok = call_encode(rr, call, req, pol, hlen, &rxdr, &inl, res);
	pthread_mutex_lock(&rr->lock);
	return ok && call_send(rr, call, req, tr, &rxdr, inl, hlen, res);
}

/*
 * The Reply chunk of a resend after a v1 ERR_CHUNK, which does not say
 * what the Reply needs: RR_REPLY_FIRST, then sixteen times larger each
 * time, up to max_reply; 0 when there is no larger step left.
 */
static size_t ladder_room(const struct rr_clnt *rr, const struct rr_call *call,
			  struct rr_try *tr)
{
	size_t room = RR_REPLY_FIRST;

	while (room <= call->max_reply && room < rr->opts.max_reply)
		room *= RR_REPLY_STEP;
	if (room > rr->opts.max_reply)
		room = rr->opts.max_reply;
	if (room <= call->max_reply || tr->ladder++ >= RR_REPLY_STEPS)
		return 0;
	return room;
}

/* What the error that ended call allows for the next attempt, in tr; false if
 * it is final.  Each kind once (AMB-V2-4). */
static bool resend_plan(struct rr_clnt *rr, struct rr_call *call,
			struct rr_try *tr, struct rr_result *res)
{
	struct rw_resend rs;

	if (call->errh.proc != RW_ERROR)
		return false;
	rs = rw_resend_plan(&call->hdr, &call->errh, call->negotiating,
			    !call->reply_sized);
	if (rs.what == RW_RESEND_NONE ||
	    (rs.what != RW_RESEND_REPLY_ROOM && (tr->used & (1u << rs.what))))
		return false;
	switch (rs.what) {
	case RW_RESEND_VERS:
		rr_conn_fall_back(rr, call->conn);
		break;
	case RW_RESEND_NO_READS:
		tr->no_reads = true;
		break;
	case RW_RESEND_WRITES:
		tr->limit_writes = true;
		tr->max_writes = rs.max;
		break;
	case RW_RESEND_WRITE_ROOM:
		if (rs.length > RT_REG_MAX_SEG || rs.index >= RR_MAX_WRITES ||
		    call->results_unknown)
			return false;
		if (call->wcap[rs.index] && rs.length > call->wcap[rs.index]) {
			rr_res_set(
				res, RR_ERR_CHUNK, EREMOTEIO,
				"result %u of XID 0x%08x needs %u octets, more than the %u of the caller's buffer",
				rs.index + 1, call->xid, rs.length,
				call->wcap[rs.index]);
			return false;
		}
		tr->wroom[rs.index] = rs.length;
		break;
	case RW_RESEND_REPLY_ROOM:
		if ((tr->used & (1u << rs.what)) && rs.length)
			return false;
		tr->reply_guess = !rs.length;
		tr->reply_room = rs.length ? rw_roundup4(rs.length) :
					     ladder_room(rr, call, tr);
		if (!tr->reply_room)
			return false;
		if (tr->reply_room > rr->opts.max_reply) {
			rr_res_set(
				res, RR_ERR_CHUNK, EREMOTEIO,
				"the reply to XID 0x%08x needs %zu octets, more than the %zu accepted (max_reply_size)",
				call->xid, tr->reply_room, rr->opts.max_reply);
			return false;
		}
		break;
	default:
		return false;
	}
	tr->used |= 1u << rs.what;
	rr->st.resends++;
	return true;
}

/* An RDMA_ERROR ended the RPC (one that asked for a resend is counted
 * in resends instead). */
static void count_final(struct rr_clnt *rr, const struct rr_call *call)
{
	if (call->errh.proc != RW_ERROR)
		return;
	rr->st.rdma_errors++;
	if (call->errh.err.code == RW_ERR_VERS)
		rr->st.err_vers++;
	else
		rr->st.err_chunk++;
}

/* The version probe went unanswered: the server may drop what it does not
 * understand, so the next connection speaks v1 (V2-NEG-6). */
static void probe_lost(struct rr_clnt *rr, struct rr_call *call)
{
	if (!call->negotiating)
		return;
	rr_vcache_note(rr_clnt_peer(rr), rr->opts.v2_retry_s);
	call->conn->retire = true;
}

/* A slot on a connection, or NULL with res set (lock held). */
static struct rr_call *call_slot(struct rr_clnt *rr, const struct rr_req *req,
				 int64_t deadline, struct rr_result *res)
{
	struct rr_call *call;

	if (rr_xid_find(rr, req->xid)) {
		rr_res_set(res, RR_CANTSEND, EBUSY,
			   "XID 0x%08x is still in use by an earlier call",
			   req->xid);
		return NULL;
	}
	call = slot_get(rr);
	if (!call) {
		rr_res_set(res, RR_CANTSEND, ENOMEM, "out of memory");
		return NULL;
	}
	call->xid = req->xid;
	call->conn = rr_conn_get(rr, deadline, res);
	if (!call->conn) {
		slot_put(rr, call);
		return NULL;
	}
	return call;
}

/*
 * One RPC: one attempt, or several with the same XID when the server's
 * RDMA_ERROR asks for a resend (v2-05 §7.2.4, §8); the deadline covers
 * them all.  An attempt whose wait for a credit closed the connection
 * (recover()) goes once more, on a new one.
 */
static void call_waited(struct rr_clnt *rr, const struct rr_req *req,
			int64_t deadline, struct rr_call **callp,
			struct rr_result *res)
{
	bool reconnected = false;
	struct rr_try tr;
	struct rr_call *call;

	memset(&tr, 0, sizeof(tr));
	for (;;) {
		call = call_slot(rr, req, deadline, res);
		if (!call)
			break;
		if (!start(rr, call, req, &tr, deadline, res)) {
			bool again = call->recovered && !reconnected;

			release(rr, call);
			if (!again)
				break;
			reconnected = true;
			memset(res, 0, sizeof(*res));
			continue;
		}
		if (!rr_wait(rr, call->conn, call_is_done, call, deadline,
			     &call->waiter)) {
			rr->st.timeouts++;
			TR_EVENT(timeout, call->conn->trace_id, call->xid,
				 "inflight=%u", call_credits(call)->inflight);
			probe_lost(rr, call);
			orphan(rr, call);
			rr_res_set(res, RR_TIMEDOUT, ETIMEDOUT,
				   "no reply to XID 0x%08x before the deadline",
				   req->xid);
			break;
		}
		if (finish(rr, call, res) == RR_OK) {
			*callp = call;
			break;
		}
		if (!resend_plan(rr, call, &tr, res)) {
			count_final(rr, call);
			release(rr, call);
			break;
		}
		release(rr, call);
		memset(res, 0, sizeof(*res));
	}
}

/* The call is sent: the layer finishes it (lock held). */
static void oneway_sent(struct rr_clnt *rr, struct rr_call *call)
{
	orphan(rr, call);
	oneway_link(call->conn, call);
	if (call->flush)
		rr->st.null_calls++;
	else
		rr->st.oneway_calls++;
}

/* Time for the NULL Call: half the grant is held by one-way Calls, or
 * the next one-way Call would need the last credit. */
static bool flush_wanted(const struct rr_conn *conn)
{
	const struct rw_credits *credits = rt_conn_credits(conn->rt);
	uint32_t half = credits->granted / 2;

	if (conn->flush_pending || conn->lost)
		return false;
	return conn->oneways >= (half ? half : 1) ||
	       rw_credits_window(credits) <= 1;
}

/* Send the NULL Call on conn as a one-way Call of the layer's own: its
 * Reply finishes every one-way Call sent before it. */
static void send_flush(struct rr_clnt *rr, struct rr_conn *conn,
		       const struct rr_req *null_req, int64_t deadline)
{
	struct rr_result res;
	struct rr_call *call;
	struct rr_try tr;

	if (!null_req || rr_xid_find(rr, null_req->xid))
		return;
	call = slot_get(rr);
	if (!call)
		return;
	memset(&tr, 0, sizeof(tr));
	call->xid = null_req->xid;
	call->conn = conn;
	conn->refs++;
	call->oneway = true;
	call->flush = true;
	if (!start(rr, call, null_req, &tr, deadline, &res)) {
		release(rr, call);
		return;
	}
	conn->flush_pending = true;
	oneway_sent(rr, call);
}

/*
 * A one-way Call goes on a connection whose version and grant are known:
 * on a new one the NULL Call goes first and is waited for, since before
 * the first Reply there is a single credit, which a one-way Call would
 * keep (V1-CR-6).
 */
static bool oneway_settle(struct rr_clnt *rr, const struct rr_req *req,
			  int64_t deadline, struct rr_result *res)
{
	struct rr_conn *conn = rr_conn_get(rr, deadline, res);
	struct rr_call *call = NULL;
	bool settled;

	if (!conn)
		return false;
	settled = conn->known && rt_conn_credits(conn->rt)->established;
	rr_conn_put(rr, conn);
	if (settled || !req->null_req)
		return true;
	call_waited(rr, req->null_req, deadline, &call, res);
	if (call)
		release(rr, call);
	return res->status == RR_OK;
}

/*
 * A send-only Call (batching: clnt_call with a zero timeout) is posted and
 * left to the layer, which finishes it when the Reply to a later Call on
 * its connection arrives (the server has taken it by then), its own Reply,
 * or the connection's end (doc/oneway.md).  Nothing is reduced: the
 * caller's memory is its own again when this returns.
 */
static void call_oneway(struct rr_clnt *rr, const struct rr_req *req,
			int64_t deadline, struct rr_result *res)
{
	struct rr_call *call;
	struct rr_try tr;

	memset(&tr, 0, sizeof(tr));
	if (!oneway_settle(rr, req, deadline, res))
		return;
	memset(res, 0, sizeof(*res));
	call = call_slot(rr, req, deadline, res);
	if (!call)
		return;
	call->oneway = true;
	if (!start(rr, call, req, &tr, deadline, res)) {
		release(rr, call);
		return;
	}
	oneway_sent(rr, call);
	rr_res_set(res, RR_SENT, 0, "sent without waiting for a reply");
	if (flush_wanted(call->conn))
		send_flush(rr, call->conn, req->null_req, deadline);
}

enum rr_status rr_call(struct rr_clnt *rr, const struct rr_req *req,
		       struct rr_call **callp, struct rr_result *res)
{
	*callp = NULL;
	memset(res, 0, sizeof(*res));
	pthread_mutex_lock(&rr->lock);
	if (req->send_only)
		call_oneway(rr, req, rr_deadline_ms(rr->opts.conn.timeout_ms),
			    res);
	else
		call_waited(rr, req, req->deadline_ms, callp, res);
	pthread_mutex_unlock(&rr->lock);
	return res->status;
}

XDR *rr_call_xdr(struct rr_call *call)
{
	return &call->ax.xdr;
}

const uint8_t *rr_call_peek(const struct rr_call *call, unsigned int len)
{
	return rw_axdr_peek(&call->ax, len);
}

bool rr_call_decoded(struct rr_call *call)
{
	enum rw_xdr_err e = rw_axdr_finish(&call->ax);

	/* Octets after the message are tolerated, as by clnt_vc. */
	return e == RW_XERR_OK || e == RW_XERR_TRAILING;
}

void rr_call_done(struct rr_clnt *rr, struct rr_call *call)
{
	if (!call)
		return;
	pthread_mutex_lock(&rr->lock);
	rr->st.ddp_zero_copies += rw_axdr_zero_copies(&call->ax);
	rr->st.ddp_copies += rw_axdr_copies(&call->ax);
	rr->st.ddp_copy_bytes += rw_axdr_bytes_copied(&call->ax);
	release(rr, call);
	pthread_mutex_unlock(&rr->lock);
}
