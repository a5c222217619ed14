/*
 * rt_post.c - the send queue of one connection: posting Sends, RDMA Reads
 * and Writes, window binds and invalidations; selective signalling; the
 * bound on outstanding work; reaping.
 *
 * Operation
 *   Every send-queue work request gets the next sequence number as its
 *   wr_id and a record in a ring indexed by it.  An RC send queue completes
 *   in order, so a completion for sequence S retires every record up to S:
 *   unsignalled work is reaped by the next signalled completion, exactly as
 *   the hardware frees its slots.  Retiring a record gives back what it held
 *   (a Send buffer, an RDMA slot, a Read slot) and, if the caller asked
 *   (RT_WR_SIGNAL), queues an event with its cookie.
 *
 * Signalling
 *   A work request is posted signalled when the caller wants its
 *   completion, when rt_reg waits for it, when signal_every unsignalled ones
 *   precede it, or when posting it uses up the last of a resource (send
 *   queue slot, RDMA window, Read slot, free Send buffer): otherwise nothing
 *   could ever give that resource back.  Never sq_sig_all.
 *
 * Bounded work
 *   At most rdma_depth RDMA Reads and Writes (and at most ORD Reads) are on
 *   the wire at once; Soft-RoCE degrades badly beyond about 16 large ones.
 *   Whatever does not fit waits in a FIFO and is posted from rt_conn_poll()
 *   as completions free room.  Once anything waits, everything posted after
 *   it waits too, so the order of the caller's calls is the order on the
 *   wire (RDMA Writes before the Send that announces them).
 *
 * Errors
 *   The first failed completion ends the connection with a message naming
 *   the operation and the work completion status; the rest flush.  A queued
 *   or flushed request the caller asked to hear about still produces its
 *   event (status ECONNRESET), so the caller's bookkeeping has one path.
 *   When the peer's side of the work was at fault (its handle or length,
 *   its Receive), that work's cookie is kept for rt_conn_peer_fault().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transport/rt_priv.h"

static const char *kind_name(uint8_t kind)
{
	switch (kind) {
	case RT_K_SEND:
		return "Send";
	case RT_K_READ:
		return "RDMA Read";
	case RT_K_WRITE:
		return "RDMA Write";
	case RT_K_BIND:
		return "memory window bind";
	case RT_K_LINV:
		return "local invalidation";
	default:
		return "work request";
	}
}

static int wc_errno(int status)
{
	if (status == IBV_WC_SUCCESS)
		return 0;
	return status == IBV_WC_WR_FLUSH_ERR ? ECONNRESET : EIO;
}

static void report(struct rt_conn *c, uint8_t kind, uint64_t cookie, int status)
{
	struct rt_event ev = { .cookie = cookie };

	ev.type = kind == RT_K_SEND ? RT_EV_SEND_DONE :
		  kind == RT_K_READ ? RT_EV_READ_DONE :
				      RT_EV_WRITE_DONE;
	ev.status = wc_errno(status);
	ev.status_str = rt_wc_status_str(status);
	rt_evq_push(c, &ev);
}

/* Work is finished (completed, flushed, or never posted): give back what
 * it holds.  posted: it held send-queue resources. */
static void work_done(struct rt_conn *c, uint8_t kind, bool want,
		      uint64_t cookie, void *ctx, int status, bool posted)
{
	switch (kind) {
	case RT_K_SEND:
		rt_buf_sbuf_reclaim(c, ctx);
		break;
	case RT_K_READ:
		if (posted) {
			c->rdma_used--;
			c->reads_used--;
		}
		/* before the event: the data goes up fenced */
		rt_reg_sink_put(c, ctx);
		break;
	case RT_K_WRITE:
		if (posted)
			c->rdma_used--;
		break;
	case RT_K_BIND:
	case RT_K_LINV:
		if (ctx) /* NULL: the window was destroyed meanwhile */
			rt_reg_wr_done(c, kind, ctx, status);
		return;
	}
	if (want)
		report(c, kind, cookie, status);
}

/* What the peer's side of a work request can make fail (rt_conn_peer_fault):
 * its handles and lengths, its Receive buffers. */
static bool peer_fault(int status)
{
	return status == IBV_WC_REM_ACCESS_ERR ||
	       status == IBV_WC_REM_INV_REQ_ERR ||
	       status == IBV_WC_REM_OP_ERR || status == IBV_WC_LOC_LEN_ERR;
}

/* A completion that is not a success ends the connection: a flush means it
 * already ended (or the listener ended it), anything else is the cause. */
static void fail_completion(struct rt_conn *c, uint8_t kind, int status)
{
	char a[RT_ADDR_STRLEN];
	struct rt_err why;

	rt_addr_str(rt_conn_peer_addr(c), 1, a);
	if (status == IBV_WC_WR_FLUSH_ERR) {
		c->st.flushed++;
		if (c->dead)
			return;
		rt_err_set(&why, ECONNRESET,
			   "connection to %s ended: work flushed", a);
	} else {
		c->st.errors++;
		rt_err_set(&why, EIO, "%s failed on the connection to %s: %s",
			   kind_name(kind), a, rt_wc_status_str(status));
	}
	rt_conn_kill(c, &why);
}

void rt_sq_complete(struct rt_conn *c, uint64_t seq, int status)
{
	uint8_t kind;
	uint64_t s;
	int st;

	if (seq < c->sq_done || seq >= c->sq_seq) {
		struct rt_err why;

		c->st.errors++;
		rt_err_set(&why, EIO,
			   "completion for an unknown work request on %s",
			   c->devname);
		rt_conn_kill(c, &why);
		return;
	}
	kind = c->ring[seq % c->sq_size].kind;
	if (!c->dead && peer_fault(status)) {
		c->peer_fault = true;
		c->peer_fault_cookie = c->ring[seq % c->sq_size].cookie;
	}
	for (s = c->sq_done; s <= seq; s++) {
		struct rt_sq_rec *r = &c->ring[s % c->sq_size];

		/* Earlier unsignalled work completed before this one, unless
		 * the queue was flushed. */
		st = s == seq || status == IBV_WC_SUCCESS ? status :
							    IBV_WC_WR_FLUSH_ERR;
		c->sq_done = s + 1;
		work_done(c, r->kind, r->report, r->cookie, r->ctx, st, true);
	}
	if (status != IBV_WC_SUCCESS)
		fail_completion(c, kind, status);
}

/* Room on the wire for w now? */
static bool room(const struct rt_conn *c, const struct rt_work *w)
{
	if (c->sq_seq - c->sq_done >= c->sq_size)
		return false;
	if (w->kind == RT_K_READ)
		return c->rdma_used < c->attr.rdma_depth &&
		       c->reads_used < c->ord;
	if (w->kind == RT_K_WRITE)
		return c->rdma_used < c->attr.rdma_depth;
	return true;
}

/* Would posting w unsignalled leave a resource that nothing can return? */
static bool needs_signal(const struct rt_conn *c, const struct rt_work *w)
{
	if (w->report || w->must_signal)
		return true;
	if (c->unsig + 1 >= c->attr.signal_every)
		return true;
	if (c->sq_seq + 1 - c->sq_done >= c->sq_size)
		return true;
	if ((w->kind == RT_K_READ || w->kind == RT_K_WRITE) &&
	    c->rdma_used + 1 >= c->attr.rdma_depth)
		return true;
	if (w->kind == RT_K_READ && c->reads_used + 1 >= c->ord)
		return true;
	return w->kind == RT_K_SEND && c->nsfree == 0;
}

static void account(struct rt_conn *c, const struct rt_work *w, bool signal)
{
	uint32_t i, bytes = 0;

	for (i = 0; i < (uint32_t)w->wr.num_sge; i++)
		bytes += w->sge[i].length;
	c->unsig = signal ? 0 : c->unsig + 1;
	c->st.signalled += signal;
	switch (w->kind) {
	case RT_K_SEND:
		c->st.sends++;
		c->st.sends_inv += w->wr.opcode == IBV_WR_SEND_WITH_INV;
		break;
	case RT_K_READ:
		c->rdma_used++;
		c->reads_used++;
		c->st.reads++;
		c->st.read_bytes += bytes;
		break;
	case RT_K_WRITE:
		c->rdma_used++;
		c->st.writes++;
		c->st.write_bytes += bytes;
		break;
	case RT_K_BIND:
		/* The provider identifies a window by its current key: from
		 * now on that is the one this bind installs. */
		if (w->ctx)
			((struct rt_mw *)w->ctx)->mw->rkey = w->wr.bind_mw.rkey;
		break;
	}
}

/* Post w now.  On failure the connection ends; w's resources are given
 * back, with its event only if it had been accepted earlier (queued). */
static int post_now(struct rt_conn *c, struct rt_work *w, bool queued,
		    struct rt_err *err)
{
	struct ibv_send_wr *bad;
	struct rt_sq_rec *r;
	struct rt_err why;
	bool signal = needs_signal(c, w);
	int ret;

	w->wr.wr_id = c->sq_seq;
	w->wr.next = NULL;
	w->wr.sg_list = w->sge;
	w->wr.send_flags = signal ? IBV_SEND_SIGNALED : 0;
	ret = ibv_post_send(c->qp, &w->wr, &bad);
	if (ret) {
		c->st.errors++;
		rt_err_set(&why, ret, "cannot post a %s on %s: %s",
			   kind_name(w->kind), c->devname, strerror(ret));
		rt_err_copy(err, &why);
		work_done(c, w->kind, w->report && queued, w->cookie, w->ctx,
			  IBV_WC_WR_FLUSH_ERR, false);
		rt_conn_kill(c, &why);
		return -ret;
	}
	r = &c->ring[c->sq_seq % c->sq_size];
	r->seq = c->sq_seq;
	r->kind = w->kind;
	r->report = w->report;
	r->cookie = w->cookie;
	r->ctx = w->ctx;
	c->sq_seq++;
	account(c, w, signal);
	return 0;
}

static int enqueue(struct rt_conn *c, const struct rt_work *w,
		   struct rt_err *err)
{
	struct rt_work *q = malloc(sizeof(*q));

	if (!q)
		return rt_err_set(err, ENOMEM, "out of memory");
	*q = *w;
	q->next = NULL;
	if (c->pend_tail)
		c->pend_tail->next = q;
	else
		c->pend_head = q;
	c->pend_tail = q;
	c->st.queued++;
	return 0;
}

/*
 * Post w, or queue it behind earlier waiting work.  On -errno nothing of w
 * remains (its resources are given back without an event); 0 means its
 * completion (and event, if asked) will come.
 */
int rt_sq_submit(struct rt_conn *c, struct rt_work *w, struct rt_err *err)
{
	int ret;

	if (c->dead) {
		work_done(c, w->kind, false, w->cookie, w->ctx,
			  IBV_WC_WR_FLUSH_ERR, false);
		return rt_err_set(err, ENOTCONN, "connection is down: %s",
				  c->err.msg);
	}
	if (!c->pend_head && room(c, w))
		return post_now(c, w, false, err);
	ret = enqueue(c, w, err);
	if (ret)
		work_done(c, w->kind, false, w->cookie, w->ctx,
			  IBV_WC_WR_FLUSH_ERR, false);
	return ret;
}

void rt_sq_run_pending(struct rt_conn *c)
{
	struct rt_work *w;

	while ((w = c->pend_head) && !c->dead && room(c, w)) {
		c->pend_head = w->next;
		if (!c->pend_head)
			c->pend_tail = NULL;
		post_now(c, w, true, NULL);
		free(w);
	}
	if (c->dead)
		rt_sq_drop_pending(c);
}

void rt_sq_drop_pending(struct rt_conn *c)
{
	struct rt_work *w;

	while ((w = c->pend_head)) {
		c->pend_head = w->next;
		if (!c->pend_head)
			c->pend_tail = NULL;
		c->st.flushed++;
		work_done(c, w->kind, w->report, w->cookie, w->ctx,
			  IBV_WC_WR_FLUSH_ERR, false);
		free(w);
	}
}

/*
 * ctx is about to be freed (a window deallocated on a dead connection
 * before its flushed work requests were reaped): make its records point
 * nowhere.  Only the death path gets here, so a scan is fine.
 */
void rt_sq_forget_ctx(struct rt_conn *c, const void *ctx)
{
	struct rt_work *w;
	uint64_t s;

	for (s = c->sq_done; s < c->sq_seq; s++)
		if (c->ring[s % c->sq_size].ctx == ctx)
			c->ring[s % c->sq_size].ctx = NULL;
	for (w = c->pend_head; w; w = w->next)
		if (w->ctx == ctx)
			w->ctx = NULL;
}

void rt_sq_free(struct rt_conn *c)
{
	struct rt_work *w;

	while ((w = c->pend_head)) {
		c->pend_head = w->next;
		free(w);
	}
	c->pend_tail = NULL;
	free(c->ring);
	c->ring = NULL;
}

/* ---- The caller's operations ------------------------------------------ */

static int check_sbuf(struct rt_conn *c, struct rt_sbuf *b)
{
	return b >= c->sbufs && b < c->sbufs + c->nsbufs && b->busy;
}

static int send_checks(struct rt_conn *c, const struct rt_sbuf *b, uint32_t len,
		       const struct rt_sge *more, unsigned int nmore,
		       uint32_t inv_rkey, unsigned int flags,
		       struct rt_err *err)
{
	uint64_t total = len;
	unsigned int i;

	if (nmore + 1 > c->max_sge)
		return rt_err_set(err, EINVAL,
				  "%u fragments exceed the %u a Send may carry",
				  nmore + 1, c->max_sge);
	if (len > b->size)
		return rt_err_set(err, EINVAL,
				  "%u octets exceed the %u-octet Send buffer",
				  len, b->size);
	for (i = 0; i < nmore; i++)
		total += more[i].length;
	if (total > c->inl.send)
		return rt_err_set(
			err, EMSGSIZE,
			"message of %llu octets exceeds the inline send threshold of %u",
			(unsigned long long)total, c->inl.send);
	if (inv_rkey && !c->dev_send_inv)
		return rt_err_set(err, EINVAL, "%s cannot send With Invalidate",
				  c->devname);
	if (inv_rkey && !c->inl.peer_remote_inv &&
	    !(flags & RT_WR_INV_NOMINATED))
		return rt_err_set(
			err, EINVAL,
			"the peer did not advertise Send With Invalidate");
	return 0;
}

int rt_post_send(struct rt_conn *c, struct rt_sbuf *b, uint32_t len,
		 const struct rt_sge *more, unsigned int nmore,
		 uint32_t inv_rkey, uint64_t cookie, unsigned int flags,
		 struct rt_err *err)
{
	struct rt_work w;
	unsigned int i;
	int ret;

	if (!b || !check_sbuf(c, b))
		return rt_err_set(err, EINVAL,
				  "not a Send buffer of this connection");
	ret = send_checks(c, b, len, more, nmore, inv_rkey, flags, err);
	if (ret) {
		rt_buf_sbuf_reclaim(c, b);
		return ret;
	}
	memset(&w, 0, sizeof(w));
	w.kind = RT_K_SEND;
	w.report = flags & RT_WR_SIGNAL;
	w.cookie = cookie;
	w.ctx = b;
	w.sge[0] = (struct ibv_sge){ (uintptr_t)b->data, len, b->lkey };
	for (i = 0; i < nmore; i++)
		w.sge[i + 1] = (struct ibv_sge){ (uintptr_t)more[i].addr,
						 more[i].length, more[i].lkey };
	w.wr.num_sge = (int)nmore + 1;
	w.wr.opcode = inv_rkey ? IBV_WR_SEND_WITH_INV : IBV_WR_SEND;
	w.wr.invalidate_rkey = inv_rkey;
	return rt_sq_submit(c, &w, err);
}

/* Walks a caller's fragment list in pieces of bounded size. */
struct sge_cursor {
	const struct rt_sge *sge;
	unsigned int n;
	unsigned int i;
	uint32_t off;
};

/* Fill w's SGEs with up to max octets from the cursor; returns octets. */
static uint32_t cursor_take(struct sge_cursor *k, struct rt_work *w,
			    uint32_t max, unsigned int max_sge)
{
	uint32_t got = 0, take;
	unsigned int ns = 0;

	while (got < max && k->i < k->n && ns < max_sge) {
		const struct rt_sge *s = &k->sge[k->i];

		take = s->length - k->off;
		if (take > max - got)
			take = max - got;
		if (take) {
			w->sge[ns++] =
				(struct ibv_sge){ (uintptr_t)s->addr + k->off,
						  take, s->lkey };
			got += take;
			k->off += take;
		}
		if (k->off == s->length) {
			k->i++;
			k->off = 0;
		}
	}
	w->wr.num_sge = (int)ns;
	return got;
}

static int rdma_checks(struct rt_conn *c, uint8_t kind,
		       const struct rt_sge *sge, unsigned int n,
		       const struct rw_segment *seg, uint64_t *total,
		       struct rt_err *err)
{
	unsigned int i;

	for (*total = 0, i = 0; i < n; i++)
		*total += sge[i].length;
	if (kind == RT_K_READ && *total != seg->length)
		return rt_err_set(
			err, EINVAL,
			"RDMA Read of %u octets into %llu octets of local memory",
			seg->length, (unsigned long long)*total);
	if (kind == RT_K_WRITE && *total > seg->length)
		return rt_err_set(
			err, EINVAL,
			"RDMA Write of %llu octets into a %u-octet segment",
			(unsigned long long)*total, seg->length);
	if (seg->offset + *total < seg->offset)
		return rt_err_set(err, EINVAL, "segment offset 0x%llx wraps",
				  (unsigned long long)seg->offset);
	if (kind == RT_K_READ && !c->ord)
		return rt_err_set(
			err, EOPNOTSUPP,
			"the peer accepts no RDMA Reads on this connection");
	if (c->dead)
		return rt_err_set(err, ENOTCONN, "connection is down: %s",
				  c->err.msg);
	return 0;
}

/* Post the work requests of one Read or Write of total octets; on iWARP
 * each Read work request holds the sink registration (one sge each: an
 * iWARP Read Request names a single sink). */
static int post_pieces(struct rt_conn *c, uint8_t kind, struct sge_cursor *k,
		       uint64_t total, const struct rw_segment *seg,
		       struct rt_sink *sink, uint64_t cookie,
		       unsigned int flags, struct rt_err *err)
{
	uint32_t piece = c->max_msg < RT_RDMA_MAX_WR ? c->max_msg :
						       RT_RDMA_MAX_WR;
	unsigned int max_sge = sink ? 1 : c->max_sge;
	uint64_t left, raddr = seg->offset;
	struct rt_work w;
	uint32_t got;
	int ret;

	for (left = total; left; left -= got, raddr += got) {
		memset(&w, 0, sizeof(w));
		w.kind = kind;
		w.cookie = cookie;
		w.wr.opcode = kind == RT_K_READ ? IBV_WR_RDMA_READ :
						  IBV_WR_RDMA_WRITE;
		w.wr.wr.rdma.rkey = seg->handle;
		w.wr.wr.rdma.remote_addr = raddr;
		got = cursor_take(k, &w, piece, max_sge);
		/* Only the last piece reports: completions are in order. */
		w.report = got == left && (flags & RT_WR_SIGNAL);
		if (sink) {
			rt_reg_sink_hold(sink);
			w.ctx = sink;
		}
		ret = rt_sq_submit(c, &w, err);
		if (ret)
			return ret;
	}
	return 0;
}

static int post_rdma(struct rt_conn *c, uint8_t kind, const struct rt_sge *sge,
		     unsigned int n, const struct rw_segment *seg,
		     uint64_t cookie, unsigned int flags, struct rt_err *err)
{
	struct sge_cursor k = { .sge = sge, .n = n };
	struct rt_sink *sink = NULL;
	uint64_t total = 0;
	int ret;

	/* here, where seg is used: the clang analyser does not follow the
	 * failure paths of rdma_checks() */
	if (!seg || (n && !sge))
		return rt_err_set(err, EINVAL, "no segment or no local memory");
	ret = rdma_checks(c, kind, sge, n, seg, &total, err);
	if (ret)
		return ret;
	if (!total) {
		if (flags & RT_WR_SIGNAL)
			report(c, kind, cookie, IBV_WC_SUCCESS);
		return 0;
	}
	if (kind == RT_K_READ) {
		ret = rt_reg_sink_get(c, sge, n, &sink, err);
		if (ret)
			return ret;
		if (sink)
			k.sge = rt_reg_sink_sge(sink);
	}
	ret = post_pieces(c, kind, &k, total, seg, sink, cookie, flags, err);
	/* the work requests hold it now, or nothing does */
	rt_reg_sink_put(c, sink);
	return ret;
}

int rt_post_read(struct rt_conn *c, const struct rt_sge *sink,
		 unsigned int nsink, const struct rw_segment *seg,
		 uint64_t cookie, unsigned int flags, struct rt_err *err)
{
	return post_rdma(c, RT_K_READ, sink, nsink, seg, cookie, flags, err);
}

int rt_post_write(struct rt_conn *c, const struct rt_sge *src,
		  unsigned int nsrc, const struct rw_segment *seg,
		  uint64_t cookie, unsigned int flags, struct rt_err *err)
{
	return post_rdma(c, RT_K_WRITE, src, nsrc, seg, cookie, flags, err);
}
