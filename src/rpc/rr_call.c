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
	struct rr_call *k = rr->free_slots;

	if (k) {
		rr->free_slots = k->next;
	} else {
		k = malloc(sizeof(*k));
		if (!k)
			return NULL;
		rr->nslots++;
	}
	memset(k, 0, sizeof(*k));
	k->state = RR_S_PREP;
	rr->busy_slots++;
	return k;
}

static void slot_put(struct rr_clnt *rr, struct rr_call *k)
{
	k->state = RR_S_FREE;
	k->next = rr->free_slots;
	rr->free_slots = k;
	rr->busy_slots--;
}

void rr_slots_free(struct rr_clnt *rr)
{
	struct rr_call *k;

	while ((k = rr->free_slots)) {
		rr->free_slots = k->next;
		free(k);
	}
}

/* ---- Credits ------------------------------------------------------------ */

static struct rw_credits *credits(struct rr_call *k)
{
	return rt_conn_credits(k->conn->rt);
}

static bool credit_ready(void *arg)
{
	struct rr_call *k = arg;

	return k->conn->lost || rw_credits_window(credits(k)) > 0;
}

static void note_inflight(struct rr_clnt *rr, const struct rw_credits *cr)
{
	uint32_t limit = cr->established ? cr->granted : 1;

	if (cr->inflight > rr->st.max_inflight)
		rr->st.max_inflight = cr->inflight;
	if (cr->inflight > limit)
		rr->st.over_grant++;
}

/* Every call in flight on c was abandoned: nothing but closing the
 * connection gives their credits back. */
static bool only_orphans(struct rr_clnt *rr, const struct rr_conn *c)
{
	struct rr_call *k;
	unsigned int i;

	for (i = 0; i < RR_XID_BUCKETS; i++)
		for (k = rr->xids[i]; k; k = k->next)
			if (k->conn == c && k->state != RR_S_ORPHAN)
				return false;
	return true;
}

static bool take_credit(struct rr_clnt *rr, struct rr_call *k, int64_t deadline,
			struct rr_result *res)
{
	struct rr_conn *c = k->conn;
	bool ready;

	while (!c->lost && !rw_credits_take(credits(k))) {
		rr->credit_waiters++;
		ready = rr_wait(rr, c, credit_ready, k, deadline, NULL);
		rr->credit_waiters--;
		if (ready)
			continue;
		if (only_orphans(rr, c))
			rt_conn_disconnect(c->rt);
		rr_res_set(
			res, RR_TIMEDOUT, ETIMEDOUT,
			"no credit for a new call before the deadline (%u calls outstanding)",
			credits(k)->inflight);
		return false;
	}
	if (c->lost) {
		rr_res_set(res, RR_CANTSEND, rt_conn_error(c->rt)->code, "%s",
			   rt_conn_error(c->rt)->msg);
		return false;
	}
	k->credit = true;
	note_inflight(rr, credits(k));
	return true;
}

/* The credit goes back once the Receive buffer of the Reply is posted
 * again, so that calls in flight plus Replies being decoded never exceed
 * the Receives (V1-RB-2). */
static void credit_return(struct rr_clnt *rr, struct rr_call *k)
{
	struct rw_credits *cr;

	if (!k->credit)
		return;
	k->credit = false;
	if (k->conn->lost)
		return; /* the window died with the connection */
	cr = credits(k);
	if (k->state == RR_S_PREP)
		rw_credits_cancel(cr);
	else
		rw_credits_complete(cr, k->grant,
				    k->res.status == RR_ERR_VERS ||
					    k->res.status == RR_ERR_CHUNK);
	if (cr->established && cr->granted > rr->st.max_granted)
		rr->st.max_granted = cr->granted;
	if (rr->credit_waiters)
		rr_wake_all(rr);
}

/* ---- Releasing ---------------------------------------------------------- */

static void free_bufs(struct rr_call *k)
{
	struct rt_conn *rt = k->conn->rt;

	if (k->sbuf)
		rt_sbuf_put(rt, k->sbuf);
	k->sbuf = NULL;
	rt_reg_buf_free(rt, k->long_buf);
	k->long_buf = NULL;
	if (k->reply_heap)
		free(k->reply_buf);
	else
		rt_reg_buf_free(rt, k->reply_buf);
	k->reply_buf = NULL;
	k->reply_heap = false;
	for (unsigned int i = 0; i < k->nwrites; i++) {
		if (k->wpool[i])
			rt_reg_buf_free(rt, k->wbuf[i]);
		k->wbuf[i] = NULL;
		k->wpool[i] = false;
	}
}

/* Give back everything of k (lock held).  Its exposures are revoked first
 * if that has not happened yet. */
static void release(struct rr_clnt *rr, struct rr_call *k)
{
	struct rr_conn *c = k->conn;

	if (k->regs) {
		rt_regset_destroy(k->regs);
		k->regs = NULL;
	}
	if (k->rbuf)
		rt_recv_repost(c->rt, k->rbuf);
	k->rbuf = NULL;
	credit_return(rr, k);
	free_bufs(k);
	if (k->state != RR_S_PREP)
		rr_xid_remove(rr, k);
	rr_drain(rr, c);
	rr_conn_put(rr, c);
	slot_put(rr, k);
}

static int fence(struct rr_clnt *rr, struct rr_call *k)
{
	unsigned int handles;
	struct rt_err err;
	int ret;

	if (!k->regs)
		return 0;
	handles = rt_regset_count(k->regs);
	ret = rt_reg_revoke(k->regs, &err);
	if (ret)
		rr->st.revoke_failures++;
	if (handles)
		TR_EVENT(fence, k->conn->trace_id, k->xid,
			 "handles=%u status=%d", handles, ret);
	return ret;
}

/* An abandoned call's Reply came, or its connection ended. */
static void orphan_finish(struct rr_clnt *rr, struct rr_call *k)
{
	fence(rr, k);
	release(rr, k);
}

/*
 * The caller leaves without a Reply.  Its own memory must be fenced now;
 * the layer's buffers stay exposed until the peer is done with them (the
 * late Reply) or the connection ends.
 */
static void orphan(struct rr_clnt *rr, struct rr_call *k)
{
	k->state = RR_S_ORPHAN;
	k->waiter = NULL;
	rr->st.orphans++;
	if (k->caller_mem)
		fence(rr, k);
}

void rr_call_complete(struct rr_clnt *rr, struct rr_call *k)
{
	if (k->state == RR_S_ORPHAN) {
		rr->st.late_replies++;
		orphan_finish(rr, k);
		return;
	}
	k->state = RR_S_DONE;
	rr_wake(k->waiter);
}

void rr_call_fail(struct rr_clnt *rr, struct rr_call *k, enum rr_status st,
		  int err, const char *msg)
{
	if (k->state == RR_S_ORPHAN) {
		orphan_finish(rr, k);
		return;
	}
	if (k->state != RR_S_WAIT)
		return;
	rr_res_set(&k->res, st, err, "%s", msg);
	k->state = RR_S_DONE;
	rr_wake(k->waiter);
}

/* ---- Encoding ----------------------------------------------------------- */

/* What rw_plan_call() needs to know about this connection and call. */
static void plan_in(const struct rr_clnt *rr, const struct rr_call *k,
		    const struct rw_rxdr *r, struct rw_call_in *in)
{
	uint32_t i, reduced = r ? rw_rxdr_reduced_len(r) : 0;

	memset(in, 0, sizeof(*in));
	in->vers = k->conn->vers;
	in->call_inline = k->conn->call_inline;
	in->reply_inline = k->conn->reply_inline;
	in->payload_len = r ? rw_rxdr_unreduced_len(r) : 0;
	in->reduced_len = reduced;
	for (i = 0; r && i < rw_rxdr_nitems(r); i++)
		in->read_segs +=
			(k->items[i].len + RT_REG_MAX_SEG - 1) / RT_REG_MAX_SEG;
	in->pzrc_segs = reduced > RT_REG_MAX_SEG ? (reduced + RT_REG_MAX_SEG -
						    1) / RT_REG_MAX_SEG :
						   1;
	in->write_chunks = k->nwrites;
	in->write_segs = k->nwrites;
	in->max_reply_len = (uint32_t)k->max_reply;
	in->reply_chunk_segs = RR_REPLY_SEGS;
}

/* Room the transport header of a Short call takes in the Send buffer. */
static uint32_t short_hdr_len(const struct rr_clnt *rr, const struct rr_call *k)
{
	struct rw_call_plan p;
	struct rw_call_in in;

	plan_in(rr, k, NULL, &in);
	rw_plan_call(&in, &p);
	return p.hdr_len;
}

/* Run the encoder into buf; false with the stream's error if it failed. */
static bool encode_into(struct rr_call *k, const struct rr_req *req,
			const struct rw_ddp_policy *pol, void *buf, size_t cap,
			struct rw_rxdr *r)
{
	bool ok;

	rw_rxdr_create(r, buf, cap, pol, k->items, RR_MAX_ITEMS);
	ok = req->encode(&r->xdr, req->arg);
	if (rw_rxdr_finish(r) != RW_XERR_OK)
		return false;
	if (!ok && rw_rxdr_error(r) == RW_XERR_OK)
		r->err = RW_XERR_BAD_ARG; /* the encoder refused */
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
static bool long_alloc(struct rr_clnt *rr, struct rr_call *k, size_t cap,
		       struct rr_result *res)
{
	struct rt_err err;

	pthread_mutex_lock(&rr->lock);
	rt_reg_buf_free(k->conn->rt, k->long_buf);
	k->long_buf = NULL;
	if (!k->conn->lost)
		k->long_buf = rt_reg_buf_alloc(k->conn->rt, cap, &err);
	else
		rt_err_set(&err, ENOTCONN, "%s",
			   rt_conn_error(k->conn->rt)->msg);
	pthread_mutex_unlock(&rr->lock);
	if (!k->long_buf) {
		rr_res_set(res, RR_CANTSEND, err.code,
			   "no memory for a Long Call of %zu octets: %s", cap,
			   err.msg);
		return false;
	}
	k->long_cap = cap;
	return true;
}

/*
 * Encode without the lock (the Send buffer and pool memory are the call's
 * own until posted).  Inline first when the hint says it may fit, then in
 * ever larger pool memory.  *inl tells where the message ended up.
 */
static bool encode(struct rr_clnt *rr, struct rr_call *k,
		   const struct rr_req *req, const struct rw_ddp_policy *pol,
		   uint32_t hlen, struct rw_rxdr *r, bool *inl,
		   struct rr_result *res)
{
	uint8_t *sb = rt_sbuf_data(k->sbuf);
	uint32_t room = k->conn->call_inline;
	size_t cap = 0;

	room = room > hlen ? room - hlen : 0;
	*inl = req->size_hint + RR_HDR_SLACK / 2 <= room;
	if (*inl && encode_into(k, req, pol, sb + hlen, room, r))
		return true;
	if (*inl && rw_rxdr_error(r) != RW_XERR_NOSPACE)
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
		if (!long_alloc(rr, k, cap, res))
			return false;
		if (encode_into(k, req, pol, k->long_buf, cap, r))
			return true;
		if (rw_rxdr_error(r) != RW_XERR_NOSPACE)
			goto bad;
	}
bad:
	rr_res_set(res, RR_CANTENCODE, EINVAL, "cannot encode the call: %s",
		   rw_xdr_err_str(rw_rxdr_error(r)));
	return false;
}

/* ---- Building and sending ----------------------------------------------- */

/* Resources taken before encoding: a Send buffer (waiting for one if all
 * are in flight) and the Reply chunk's memory. */
static bool prepare(struct rr_clnt *rr, struct rr_call *k, int64_t deadline,
		    struct rr_result *res)
{
	struct rt_conn *rt = k->conn->rt;
	struct rt_err err;

	while (!(k->sbuf = rt_sbuf_get(rt, &err))) {
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
		rr_drain(rr, k->conn);
	}
	return true;
}

/*
 * The Reply chunk's memory: pool memory, kept registered for the next
 * call; but a resend's larger than RR_REPLY_FIRST (a Reply of unknown size
 * that turned out large) is the call's own and freed with it, so that one
 * large Reply does not pin its size for the connection's lifetime.
 */
static bool reply_alloc(struct rr_clnt *rr, struct rr_call *k,
			struct rr_result *res)
{
	struct rt_err err;
	void *p = NULL;

	k->reply_cap = k->max_reply;
	if (k->reply_resent && k->reply_cap > RR_REPLY_FIRST) {
		if (posix_memalign(&p, 4096, k->reply_cap))
			p = NULL;
		k->reply_buf = p;
		k->reply_heap = p != NULL;
		rt_err_set(&err, ENOMEM, "out of memory");
	} else {
		k->reply_buf =
			rt_reg_buf_alloc(k->conn->rt, k->reply_cap, &err);
	}
	if (!k->reply_buf)
		rr_res_set(res, RR_CANTSEND, err.code,
			   "no memory for a Reply chunk of %zu octets: %s",
			   k->reply_cap, err.msg);
	return k->reply_buf != NULL;
}

static int expose(struct rr_call *k, void *addr, size_t len, enum rt_access acc,
		  struct rw_segment *segs, unsigned int max,
		  struct rr_result *res)
{
	struct rt_err err;
	int n = rt_reg_expose(k->regs, addr, len, acc, segs, max, &err);

	if (n < 0)
		rr_res_set(res, RR_CANTSEND, -n, "%s", err.msg);
	return n;
}

/* The Read list: the PZRC of a Long call first, then reduced items at
 * their positions in the unreduced stream (V1-RC-1..3, AMB-V1-6). */
static bool build_reads(struct rr_clnt *rr, struct rr_call *k,
			const struct rw_rxdr *r, const struct rw_call_plan *p,
			struct rr_result *res)
{
	struct rw_segment segs[RR_PZRC_SEGS];
	struct rw_read_builder b;
	unsigned int i;
	int n;

	rw_read_builder_init(&b, k->reads, RR_MAX_READS);
	if (p->kind == RW_LONG) {
		n = expose(k, k->long_buf, rw_rxdr_reduced_len(r),
			   RT_REMOTE_READ, segs, RR_PZRC_SEGS, res);
		if (n < 0 || rw_read_builder_add(&b, 0, segs, (uint32_t)n))
			goto bad;
	}
	for (i = 0; p->kind != RW_SHORT && i < rw_rxdr_nitems(r); i++) {
		const struct rw_ddp_item *it = &k->items[i];

		k->caller_mem = true;
		n = expose(k, (void *)it->data, it->len, RT_REMOTE_READ, segs,
			   RR_PZRC_SEGS, res);
		if (n < 0 ||
		    rw_read_builder_add(&b, it->position, segs, (uint32_t)n))
			goto bad;
		rr->st.read_chunks++;
		rr->st.read_bytes += it->len;
	}
	rw_hdr_set_reads(&k->hdr, &b);
	return true;
bad:
	if (res->status == RR_OK)
		rr_res_set(res, RR_CANTSEND, EINVAL,
			   "cannot build the Read list");
	return false;
}

/* ---- Result items: Write chunks (digest 1.6, V1-WC-*) ------------------- */

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
	const struct rw_rxdr *r = ctx;

	return off <= UINT32_MAX - rw_rxdr_body_pos(r) &&
	       rw_rxdr_peek_word(r, rw_rxdr_body_pos(r) + (uint32_t)off, w);
}

/* The same words through a view (a walker's plan). */
static bool args_view_word(const struct rw_ddp_view *v, uint32_t off,
			   uint32_t *w)
{
	return args_word(v->s, off, w);
}

/* The largest Reply: its header, the results besides the items placed,
 * and the room of the items that come inline. */
static void set_max_reply(struct rr_call *k, uint32_t max, uint64_t inl)
{
	uint64_t want = (uint64_t)RR_REPLY_HDR + max + inl;

	k->max_reply = want < RR_MAX_REPLY ? (size_t)want : RR_MAX_REPLY;
	k->reply_sized = true;
}

/*
 * A walker binding's plan (NFSv4 COMPOUND): one Write chunk per eligible
 * result in slot order, each as large as that result can be.  A result
 * whose room cannot be a chunk ends the list there, because the chunks
 * map to results by rank (RFC 8267 6.4): it and the later ones come
 * inline.
 */
static void walk_sizes(struct rr_call *k, const struct rr_req *req,
		       const struct rw_rxdr *r, uint32_t max_writes)
{
	struct rw_ddp_view v = { .word = args_view_word, .s = r };
	struct ulb_plan p;
	uint64_t inl;
	uint32_t i;

	memset(&p, 0, sizeof(p));
	if (req->reply_walk->plan(&v,
				  rw_rxdr_unreduced_len(r) -
					  rw_rxdr_body_pos(r),
				  &p))
		memset(&p, 0, sizeof(p));
	k->nwrites = 0;
	inl = p.inline_room;
	for (i = 0; i < p.nslots && i < ULB_PLAN_MAX; i++)
		inl += p.room[i];
	/* A bounded reply that fits inline with every result in it needs
	 * no chunk at all: an empty Write list asks for exactly that
	 * (RFC 8267 6.4), and saves a registration per result. */
	if (p.reply_max && RR_REPLY_HDR + p.reply_max + inl <=
				   rt_conn_inline(k->conn->rt)->recv) {
		set_max_reply(k, p.reply_max, inl);
		return;
	}
	inl = p.inline_room;
	for (i = 0; i < p.nslots && i < ULB_PLAN_MAX; i++) {
		if (i == k->nwrites && i < max_writes && p.room[i] &&
		    p.room[i] <= RT_REG_MAX_SEG)
			k->wroom[k->nwrites++] = p.room[i];
		else
			inl += p.room[i];
	}
	if (p.reply_max)
		set_max_reply(k, p.reply_max, inl);
}

/*
 * The sizes a binding gives this call's Reply, from the entry and the
 * encoded arguments (an NFS READ's count): the room of each Write chunk
 * (at most max_writes of them) and the largest Reply payload.  An entry
 * whose sizes cannot be resolved gives no Write chunks.
 */
static void ulb_reply_sizes(struct rr_call *k, const struct rr_req *req,
			    const struct rw_rxdr *r, uint32_t max_writes)
{
	const struct rpcrdma_ulb_entry *e = req->reply_ulb;
	uint32_t room = 0, max = 0, i, inline_items;

	if (req->reply_walk) {
		walk_sizes(k, req, r, max_writes);
		return;
	}
	if (k->nwrites > max_writes)
		k->nwrites = max_writes;
	if (!e || ulb_sizes_at(e, args_word, r,
			       rw_rxdr_unreduced_len(r) - rw_rxdr_body_pos(r),
			       &room, &max)) {
		k->nwrites = 0;
		return;
	}
	/* min_len of a REPLY entry: the smallest room worth a Write chunk */
	if (!room || room > RT_REG_MAX_SEG || room < e->min_len)
		k->nwrites = 0;
	for (i = 0; i < k->nwrites; i++)
		k->wroom[i] = room;
	/* max=0 is a size: results that are empty (void) need no Reply
	 * chunk; only an entry without max leaves the size unknown */
	if (e->reply_max.kind == RPCRDMA_ULB_SIZE_NONE)
		return;
	/* results not given a Write chunk come inline: count their room */
	inline_items = (uint32_t)__builtin_popcountll(e->items) - k->nwrites;
	set_max_reply(k, max, (uint64_t)inline_items * room);
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
static void reply_sizes(struct rr_call *k, const struct rr_req *req,
			const struct rw_rxdr *r, const struct rr_try *tr)
{
	uint32_t i;

	k->max_reply = 0;
	k->reply_sized = false;
	ulb_reply_sizes(k, req, r,
			tr->limit_writes ? tr->max_writes : RR_MAX_WRITES);
	for (i = 0; i < k->nwrites; i++)
		if (tr->wroom[i] > k->wroom[i])
			k->wroom[i] = tr->wroom[i];
	k->reply_resent = false;
	if (tr->reply_room > k->max_reply) {
		k->max_reply = tr->reply_room;
		k->reply_sized = !tr->reply_guess;
		k->reply_resent = true;
	}
}

/*
 * Where result item i lands: the caller's own buffer when the results
 * already hold one of at least room octets (zero copy) and it is large
 * enough to be worth registering (ddp_reg_min), else pool memory, copied
 * once while decoding.
 */
static bool write_buf(struct rr_clnt *rr, struct rr_call *k, uint32_t i,
		      const struct rw_probe_item *found, unsigned int nfound,
		      uint32_t room, struct rr_result *res)
{
	struct rt_err err;
	unsigned int j;

	for (j = 0; j < nfound && room >= rr->opts.ddp_reg_min; j++) {
		if (found[j].index != i || found[j].len < room)
			continue;
		k->wbuf[i] = found[j].data;
		k->caller_mem = true;
		rr->st.ddp_caller_regs++;
		return true;
	}
	k->wbuf[i] = rt_reg_buf_alloc(k->conn->rt, room, &err);
	if (!k->wbuf[i]) {
		rr_res_set(res, RR_CANTSEND, err.code,
			   "no memory for a Write chunk of %u octets: %s", room,
			   err.msg);
		return false;
	}
	k->wpool[i] = true;
	return true;
}

/* The room the caller's own result buffers have, per result item (0: none
 * supplied): a resend must never ask for a result larger than that, since
 * libtirpc decodes an opaque into a supplied buffer without asking its
 * size. */
static void caller_caps(struct rr_call *k, const struct rw_probe_item *found,
			unsigned int nfound)
{
	unsigned int j;

	memset(k->wcap, 0, sizeof(k->wcap));
	for (j = 0; j < nfound; j++)
		if (found[j].index < RR_MAX_WRITES)
			k->wcap[found[j].index] = found[j].len;
}

/* The Write list: one chunk of its result's room per result item. */
static bool build_writes(struct rr_clnt *rr, struct rr_call *k,
			 const struct rr_req *req, struct rr_result *res)
{
	struct rw_probe_item found[RR_MAX_WRITES];
	struct rw_write_builder b;
	unsigned int nfound = 0;
	struct rw_pxdr probe;
	uint32_t i, room;
	int n;

	memset(&k->rpol, 0, sizeof(k->rpol));
	k->rpol.mode = RW_DDP_NONE;
	if (!k->nwrites)
		return true;
	if (req->reply_walk)
		ulb_walk_policy(req->reply_walk, true, 0, &k->rpol);
	else
		ulb_ddp_policy(req->reply_ulb, true, 0, &k->rpol);
	k->rpol.max_chunks = k->nwrites;
	/* the probe sees no encoded results, so a walker finds nothing */
	k->results_unknown = req->xres && req->resp && !RR_PROBE;
	if (RR_PROBE && req->xres && req->resp && !req->reply_walk) {
		rw_pxdr_create(&probe, &k->rpol, found, k->nwrites);
		(void)(*req->xres)(&probe.xdr, req->resp);
		nfound = rw_pxdr_found(&probe);
	}
	caller_caps(k, found, nfound);
	rw_write_builder_init(&b, k->wchunks, RR_MAX_WRITES);
	for (i = 0; i < k->nwrites; i++) {
		room = k->wroom[i];
		if (!write_buf(rr, k, i, found, nfound, room, res))
			return false;
		n = expose(k, k->wbuf[i], room, RT_REMOTE_WRITE, &k->wsegs[i],
			   1, res);
		if (n < 0)
			return false;
		if (rw_write_builder_add(&b, &k->wsegs[i], 1)) {
			rr_res_set(res, RR_CANTSEND, EINVAL,
				   "cannot build the Write list");
			return false;
		}
	}
	rw_hdr_set_writes(&k->hdr, &b);
	rr->st.write_chunks += k->nwrites;
	return true;
}

/* A Reply was accepted: the octets it says were written into each Write
 * chunk (already checked against what was offered, V1-WC-4/5). */
void rr_call_take_writes(struct rr_clnt *rr, struct rr_call *k,
			 const struct rw_hdr *h)
{
	uint32_t i, s;

	for (i = 0; i < k->nwrites; i++) {
		k->wlen[i] = 0;
		for (s = 0; i < h->nwrites && s < h->writes[i].nsegs; s++)
			k->wlen[i] += h->writes[i].segs[s].length;
		rr->st.write_bytes += k->wlen[i];
	}
}

static bool build_reply_chunk(struct rr_clnt *rr, struct rr_call *k,
			      const struct rw_call_plan *p,
			      struct rr_result *res)
{
	int n;

	if (!p->reply_chunk)
		return true;
	if (!k->reply_buf && !reply_alloc(rr, k, res))
		return false;
	n = expose(k, k->reply_buf, k->reply_cap, RT_REMOTE_WRITE,
		   k->reply_segs, RR_REPLY_SEGS, res);
	if (n < 0)
		return false;
	if (rw_hdr_set_reply(&k->hdr, k->reply_segs, (uint32_t)n)) {
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
static bool place_payload(struct rr_call *k, const struct rw_rxdr *r, bool inl,
			  uint32_t hlen, const struct rw_call_plan *p,
			  struct rr_result *res)
{
	uint8_t *sb = rt_sbuf_data(k->sbuf);
	const uint8_t *src = inl ? sb + hlen : k->long_buf;
	uint32_t room = rt_sbuf_size(k->sbuf) - p->hdr_len;
	enum rw_xdr_err e;

	if (p->kind == RW_LONG) {
		if (!inl)
			return true;
		/* Inline did not fit after all (a bigger header): move it. */
		memcpy(k->long_buf, src, rw_rxdr_reduced_len(r));
		return true;
	}
	if (p->kind == RW_SHORT && rw_rxdr_nitems(r)) {
		uint8_t *tmp = malloc(rw_rxdr_unreduced_len(r));

		if (!tmp || !rw_ddp_unreduce(src, rw_rxdr_reduced_len(r),
					     k->items, rw_rxdr_nitems(r), tmp,
					     rw_rxdr_unreduced_len(r), &e)) {
			free(tmp);
			rr_res_set(res, RR_CANTENCODE, ENOMEM,
				   "cannot send the call inline");
			return false;
		}
		memcpy(sb + p->hdr_len, tmp, rw_rxdr_unreduced_len(r));
		free(tmp);
		return true;
	}
	if (rw_rxdr_reduced_len(r) > room) {
		rr_res_set(res, RR_CANTSEND, EMSGSIZE,
			   "the call does not fit the Send buffer");
		return false;
	}
	memmove(sb + p->hdr_len, src, rw_rxdr_reduced_len(r));
	return true;
}

/* Make sure a Long call has pool memory even if it was encoded inline. */
static bool need_long_buf(struct rr_clnt *rr, struct rr_call *k,
			  const struct rw_rxdr *r, bool inl,
			  const struct rw_call_plan *p, struct rr_result *res)
{
	struct rt_err err;

	if (p->kind != RW_LONG || !inl)
		return true;
	k->long_cap = rw_rxdr_reduced_len(r);
	k->long_buf = rt_reg_buf_alloc(k->conn->rt, k->long_cap, &err);
	if (!k->long_buf)
		rr_res_set(res, RR_CANTSEND, err.code, "%s", err.msg);
	return k->long_buf != NULL;
}

static void count_kind(struct rr_clnt *rr, const struct rw_rxdr *r,
		       const struct rw_call_plan *p)
{
	rr->st.calls++;
	if (p->kind == RW_LONG) {
		rr->st.long_calls++;
		rr->st.long_bytes += rw_rxdr_reduced_len(r);
	} else {
		rr->st.short_calls++;
		rr->st.inline_bytes += p->kind == RW_SHORT ?
					       rw_rxdr_unreduced_len(r) :
					       rw_rxdr_reduced_len(r);
	}
}

/*
 * The handle the Call asks the server to invalidate with Send With
 * Invalidate: in v2 any one of its windows, named in rdma_inv_handle
 * (V2-RI-1/2/6); in v1 the server may pick one itself (RFC 8797), which
 * the call then accepts only if it has a single window.
 */
static uint32_t inv_handle(const struct rr_clnt *rr, const struct rr_call *k)
{
	if (k->conn->vers == RW_VERS_2)
		return rr->opts.no_inv_nominate ? 0 :
						  rt_regset_inv_any(k->regs);
	return rt_regset_inv_handle(k->regs);
}

static void count_sent(struct rr_clnt *rr, struct rr_call *k)
{
	struct rr_conn *c = k->conn;

	k->seq = ++c->seq;
	k->negotiating = c->negotiating;
	if (c->vers == RW_VERS_2)
		rr->st.v2_calls++;
	if (k->hdr.inv_handle)
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
static void trace_call(const struct rr_call *k, const struct rw_rxdr *r,
		       const struct rw_call_plan *p)
{
	uint32_t payload = rw_rxdr_unreduced_len(r);
	uint32_t reduced = rw_rxdr_reduced_len(r);
	bool chunks = p->kind != RW_SHORT;
	uint64_t wbytes = 0;
	uint32_t i;

	for (i = 0; i < k->nwrites; i++)
		wbytes += k->wroom[i];
	TR_EVENT(call, k->conn->trace_id, k->xid,
		 "kind=%s vers=%u send=%u payload=%u reads=%u read_bytes=%u "
		 "pzrc=%u writes=%u write_bytes=%llu reply_chunk=%zu",
		 plan_names[p->kind], k->conn->vers, p->send_len, payload,
		 chunks ? rw_rxdr_nitems(r) : 0, chunks ? payload - reduced : 0,
		 p->kind == RW_LONG ? reduced : 0, k->nwrites,
		 (unsigned long long)wbytes, p->reply_chunk ? k->reply_cap : 0);
}

/* Plan, expose, encode the transport header and post the Send (lock
 * held).  On success k is in the XID table, waiting. */
static bool send_call(struct rr_clnt *rr, struct rr_call *k,
		      const struct rr_req *req, const struct rr_try *tr,
		      const struct rw_rxdr *r, bool inl, uint32_t hlen,
		      struct rr_result *res)
{
	struct rt_conn *rt = k->conn->rt;
	struct rw_call_plan p;
	struct rw_call_in in;
	struct rt_err err;
	uint32_t len;
	size_t n;

	if (k->conn->lost) {
		rr_res_set(res, RR_CANTSEND, rt_conn_error(rt)->code, "%s",
			   rt_conn_error(rt)->msg);
		return false;
	}
	reply_sizes(k, req, r, tr);
	plan_in(rr, k, r, &in);
	rw_plan_call(&in, &p);
	k->regs = rt_regset_create(rt, &err);
	if (!k->regs) {
		rr_res_set(res, RR_CANTSEND, err.code, "%s", err.msg);
		return false;
	}
	rw_hdr_init(&k->hdr, k->conn->vers,
		    p.kind == RW_LONG ? RW_NOMSG : RW_MSG, k->xid,
		    credits(k)->requested);
	k->hdr.direction = RW_DIR_CALL; /* v2 only (V2-DIR-2) */
	if (!need_long_buf(rr, k, r, inl, &p, res) ||
	    !build_reads(rr, k, r, &p, res) || !build_writes(rr, k, req, res) ||
	    !build_reply_chunk(rr, k, &p, res))
		return false;
	k->inv_handle = inv_handle(rr, k);
	if (k->conn->vers == RW_VERS_2)
		k->hdr.inv_handle = k->inv_handle;
	if (!place_payload(k, r, inl, hlen, &p, res))
		return false;
	n = rw_encode_call(&k->hdr, rt_sbuf_data(k->sbuf), p.hdr_len);
	if (n != p.hdr_len) {
		rr_res_set(
			res, RR_CANTSEND, EINVAL,
			"cannot encode the transport header (%zu of %u octets)",
			n, p.hdr_len);
		return false;
	}
	len = p.send_len;
	k->state = RR_S_WAIT;
	rr_xid_insert(rr, k);
	if (rt_post_send(rt, k->sbuf, len, NULL, 0, 0, 0, 0, &err)) {
		k->sbuf = NULL;
		rr_xid_remove(rr, k);
		k->state = RR_S_PREP; /* never sent */
		rr_res_set(res, RR_CANTSEND, err.code, "%s", err.msg);
		return false;
	}
	k->sbuf = NULL; /* the connection's again */
	count_kind(rr, r, &p);
	count_sent(rr, k);
	trace_call(k, r, &p);
	return true;
}

/* ---- The call ----------------------------------------------------------- */

static bool call_done(void *arg)
{
	return ((struct rr_call *)arg)->state == RR_S_DONE;
}

static bool check_long_payload(struct rr_call *k, struct rr_result *res)
{
	struct rw_hdr h;

	if (k->payload != k->reply_buf)
		return true;
	rw_hdr_init(&h, k->hdr.vers, RW_NOMSG, k->xid, 1);
	h.direction = RW_DIR_REPLY;
	if (rw_check_payload(&h, k->payload, k->plen) == RW_R_OK)
		return true;
	rr_res_set(res, RR_CANTDECODE, EBADMSG,
		   "the Reply chunk does not hold the reply to XID 0x%08x",
		   k->xid);
	return false;
}

/* The Reply is in (or the call failed): fence, then open the decode
 * stream (lock held). */
static enum rr_status finish(struct rr_clnt *rr, struct rr_call *k,
			     struct rr_result *res)
{
	uint32_t i;

	fence(rr, k);
	rr_drain(rr, k->conn);
	*res = k->res;
	if (res->status != RR_OK || !check_long_payload(k, res))
		return res->status;
	/* Result items are rebuilt from the Write chunks in order, each the
	 * length the Reply returned (V1-WC-11). */
	for (i = 0; i < k->nwrites; i++) {
		k->wdseg[i].data = k->wbuf[i];
		k->wdseg[i].len = k->wlen[i];
		k->wdchunk[i].position = 0;
		k->wdchunk[i].nsegs = 1;
		k->wdchunk[i].segs = &k->wdseg[i];
	}
	if (!rw_axdr_create(&k->ax, k->payload, k->plen, RW_AXDR_WRITE,
			    k->wdchunk, k->nwrites, &k->rpol)) {
		rr_res_set(res, RR_CANTDECODE, EBADMSG,
			   "cannot decode the reply: %s",
			   rw_xdr_err_str(rw_axdr_error(&k->ax)));
		return res->status;
	}
	return RR_OK;
}

/* Build and send k (lock held on entry and exit), as tr says. */
static bool start(struct rr_clnt *rr, struct rr_call *k,
		  const struct rr_req *req, const struct rr_try *tr,
		  int64_t deadline, struct rr_result *res)
{
	static const struct rw_ddp_policy inline_args = { .mode = RW_DDP_NONE };
	const struct rw_ddp_policy *pol = tr->no_reads ? &inline_args :
							 &req->ddp;
	struct rw_rxdr r;
	uint32_t hlen;
	bool inl, ok;

	if (!take_credit(rr, k, deadline, res) ||
	    !prepare(rr, k, deadline, res))
		return false;
	k->nwrites = writes_wanted(req);
	if (tr->limit_writes && k->nwrites > tr->max_writes)
		k->nwrites = tr->max_writes;
	k->max_reply = tr->reply_room;
	hlen = short_hdr_len(rr, k);
	pthread_mutex_unlock(&rr->lock);
	ok = encode(rr, k, req, pol, hlen, &r, &inl, res);
	pthread_mutex_lock(&rr->lock);
	return ok && send_call(rr, k, req, tr, &r, inl, hlen, res);
}

/*
 * The Reply chunk of a resend after a v1 ERR_CHUNK, which does not say
 * what the Reply needs: RR_REPLY_FIRST, then sixteen times larger each
 * time, up to max_reply; 0 when there is no larger step left.
 */
static size_t ladder_room(const struct rr_clnt *rr, const struct rr_call *k,
			  struct rr_try *tr)
{
	size_t room = RR_REPLY_FIRST;

	while (room <= k->max_reply && room < rr->opts.max_reply)
		room *= RR_REPLY_STEP;
	if (room > rr->opts.max_reply)
		room = rr->opts.max_reply;
	if (room <= k->max_reply || tr->ladder++ >= RR_REPLY_STEPS)
		return 0;
	return room;
}

/* What the error that ended k allows for the next attempt, in tr; false if
 * it is final.  Each kind once (AMB-V2-4). */
static bool resend_plan(struct rr_clnt *rr, struct rr_call *k,
			struct rr_try *tr, struct rr_result *res)
{
	struct rw_resend rs;

	if (k->errh.proc != RW_ERROR)
		return false;
	rs = rw_resend_plan(&k->hdr, &k->errh, k->negotiating, !k->reply_sized);
	if (rs.what == RW_RESEND_NONE ||
	    (rs.what != RW_RESEND_REPLY_ROOM && (tr->used & (1u << rs.what))))
		return false;
	switch (rs.what) {
	case RW_RESEND_VERS:
		rr_conn_fall_back(rr, k->conn);
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
		    k->results_unknown)
			return false;
		if (k->wcap[rs.index] && rs.length > k->wcap[rs.index]) {
			rr_res_set(
				res, RR_ERR_CHUNK, EREMOTEIO,
				"result %u of XID 0x%08x needs %u octets, more than the %u of the caller's buffer",
				rs.index + 1, k->xid, rs.length,
				k->wcap[rs.index]);
			return false;
		}
		tr->wroom[rs.index] = rs.length;
		break;
	case RW_RESEND_REPLY_ROOM:
		if ((tr->used & (1u << rs.what)) && rs.length)
			return false;
		tr->reply_guess = !rs.length;
		tr->reply_room = rs.length ? rw_roundup4(rs.length) :
					     ladder_room(rr, k, tr);
		if (!tr->reply_room)
			return false;
		if (tr->reply_room > rr->opts.max_reply) {
			rr_res_set(
				res, RR_ERR_CHUNK, EREMOTEIO,
				"the reply to XID 0x%08x needs %zu octets, more than the %zu accepted (max_reply_size)",
				k->xid, tr->reply_room, rr->opts.max_reply);
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
static void count_final(struct rr_clnt *rr, const struct rr_call *k)
{
	if (k->errh.proc != RW_ERROR)
		return;
	rr->st.rdma_errors++;
	if (k->errh.err.code == RW_ERR_VERS)
		rr->st.err_vers++;
	else
		rr->st.err_chunk++;
}

/* The version probe went unanswered: the server may drop what it does not
 * understand, so the next connection speaks v1 (V2-NEG-6). */
static void probe_lost(struct rr_clnt *rr, struct rr_call *k)
{
	if (!k->negotiating)
		return;
	rr_vcache_note(rr_clnt_peer(rr), rr->opts.v2_retry_s);
	k->conn->retire = true;
}

/* A slot on a connection, or NULL with res set (lock held). */
static struct rr_call *call_slot(struct rr_clnt *rr, const struct rr_req *req,
				 int64_t deadline, struct rr_result *res)
{
	struct rr_call *k;

	if (rr_xid_find(rr, req->xid)) {
		rr_res_set(res, RR_CANTSEND, EBUSY,
			   "XID 0x%08x is still in use by an earlier call",
			   req->xid);
		return NULL;
	}
	k = slot_get(rr);
	if (!k) {
		rr_res_set(res, RR_CANTSEND, ENOMEM, "out of memory");
		return NULL;
	}
	k->xid = req->xid;
	k->conn = rr_conn_get(rr, deadline, res);
	if (!k->conn) {
		slot_put(rr, k);
		return NULL;
	}
	return k;
}

/*
 * One RPC: one attempt, or several with the same XID when the server's
 * RDMA_ERROR asks for a resend (digest 2.9, 2.11); the deadline covers
 * them all.
 */
enum rr_status rr_call(struct rr_clnt *rr, const struct rr_req *req,
		       struct rr_call **callp, struct rr_result *res)
{
	int64_t deadline = req->deadline_ms;
	struct rr_try tr;
	struct rr_call *k;

	*callp = NULL;
	memset(res, 0, sizeof(*res));
	memset(&tr, 0, sizeof(tr));
	if (req->send_only)
		deadline = rr_now_ms() + rr->opts.conn.timeout_ms;
	pthread_mutex_lock(&rr->lock);
	for (;;) {
		k = call_slot(rr, req, deadline, res);
		if (!k)
			break;
		if (!start(rr, k, req, &tr, deadline, res)) {
			release(rr, k);
			break;
		}
		if (req->send_only) {
			orphan(rr, k);
			rr_res_set(res, RR_SENT, 0,
				   "sent without waiting for a reply");
			break;
		}
		if (!rr_wait(rr, k->conn, call_done, k, deadline, &k->waiter)) {
			rr->st.timeouts++;
			TR_EVENT(timeout, k->conn->trace_id, k->xid,
				 "inflight=%u", credits(k)->inflight);
			probe_lost(rr, k);
			orphan(rr, k);
			rr_res_set(res, RR_TIMEDOUT, ETIMEDOUT,
				   "no reply to XID 0x%08x before the deadline",
				   req->xid);
			break;
		}
		if (finish(rr, k, res) == RR_OK) {
			*callp = k;
			break;
		}
		if (!resend_plan(rr, k, &tr, res)) {
			count_final(rr, k);
			release(rr, k);
			break;
		}
		release(rr, k);
		memset(res, 0, sizeof(*res));
	}
	pthread_mutex_unlock(&rr->lock);
	return res->status;
}

XDR *rr_call_xdr(struct rr_call *call)
{
	return &call->ax.xdr;
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
