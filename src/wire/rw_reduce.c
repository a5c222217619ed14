/*
 * rw_reduce.c - the reducing XDR encoder (struct rw_rxdr): encodes an RPC
 * message into one send buffer and cuts the designated data items out of it
 * (RFC 8166 §3.4.5).
 *
 * Bookkeeping: pos is the offset in the reduced buffer, moved the octets cut
 * out so far (data and their pads), so pos + moved is the offset in the
 * unreduced stream the receiver rebuilds - the Read-chunk position
 * (AMB-V1-5).  That sum is only meaningful while pos is not before the last
 * cut, which x_setpostn enforces.
 */
#include "rw_xdr_priv.h"

static const struct xdr_ops rw_rxdr_ops;

static struct rw_rxdr *rxdr_of(XDR *xdrs)
{
	return (struct rw_rxdr *)xdrs->x_private;
}

static bool_t rxdr_fail(struct rw_rxdr *r, enum rw_xdr_err e)
{
	if (r->err == RW_XERR_OK)
		r->err = e;
	return FALSE;
}

/*
 * The unreduced length (end + moved) and every position must fit the
 * 32-bit position field; checking each time the reduced end may grow keeps
 * that true without reserving anything up front.
 */
static bool rxdr_fits(const struct rw_rxdr *r, uint32_t pos, uint64_t n)
{
	return pos + n + r->moved <= UINT32_MAX;
}

/* Room for n more octets at pos; also refuses a stream that already failed. */
static bool rxdr_room(struct rw_rxdr *r, uint32_t n)
{
	if (r->err != RW_XERR_OK)
		return false;
	if (r->pad) {
		rxdr_fail(r, RW_XERR_PAD);
		return false;
	}
	if (n > r->cap - r->pos) {
		rxdr_fail(r, RW_XERR_NOSPACE);
		return false;
	}
	if (!rxdr_fits(r, r->pos, n)) {
		rxdr_fail(r, RW_XERR_RANGE);
		return false;
	}
	return true;
}

static void rxdr_advance(struct rw_rxdr *r, uint32_t n)
{
	r->pos += n;
	if (r->pos > r->end)
		r->end = r->pos;
}

static bool_t rxdr_getlong(XDR *xdrs, long *lp)
{
	return rxdr_fail(rxdr_of(xdrs), RW_XERR_BAD_ARG);
}

static bool_t rxdr_getbytes(XDR *xdrs, char *addr, u_int len)
{
	return rxdr_fail(rxdr_of(xdrs), RW_XERR_BAD_ARG);
}

static bool_t rxdr_putlong(XDR *xdrs, const long *lp)
{
	struct rw_rxdr *r = rxdr_of(xdrs);

	if (!rxdr_room(r, 4))
		return FALSE;
	/* XDR puts the low 32 bits of a long, as xdrmem does */
	rw_xdr_put32(r->buf + r->pos, (uint32_t)*lp);
	rxdr_advance(r, 4);
	return TRUE;
}

/*
 * The view of what is encoded so far, for an RW_DDP_PICK designator.  The
 * data of a moved item is refused, as the decoders refuse chunk data, so a
 * designator sees the same words on both sides.
 */
static bool rxdr_view_word(const struct rw_ddp_view *v, uint32_t off,
			   uint32_t *w)
{
	const struct rw_rxdr *r = v->s;
	uint64_t upos = (uint64_t)r->body_upos + off, ipos;
	uint32_t i;

	if (upos + 4 > (uint64_t)r->pos + r->moved)
		return false;
	for (i = 0; i < r->nitems; i++) {
		ipos = r->items[i].position;
		if (upos + 4 > ipos &&
		    upos < ipos + rw_xdr_round(r->items[i].len))
			return false;
	}
	return rw_rxdr_peek_word(r, (uint32_t)upos, w);
}

/*
 * RW_DDP_PICK: the designator's slot for the item here, < 0 if none.  A
 * slot past the Write chunks offered stays inline (RFC 8267 6.4); one that
 * does not ascend would put two results in a chunk, or reorder them, and
 * fails the stream (-2).
 */
static int rxdr_pick(struct rw_rxdr *r, u_int len)
{
	struct rw_ddp_view v = { .word = rxdr_view_word, .s = r };
	uint32_t off = r->pos + r->moved - r->body_upos;
	int slot;

	if (!r->pol.pick)
		return -1;
	slot = r->pol.pick(&v, off, len);
	if (slot < 0 ||
	    (r->pol.max_chunks && (uint32_t)slot >= r->pol.max_chunks))
		return -1;
	if (r->nitems && (uint32_t)slot <= r->items[r->nitems - 1].slot) {
		rxdr_fail(r, RW_XERR_SLOT_ORDER);
		return -2;
	}
	return slot;
}

/*
 * Should the item starting here be moved, and into which slot?  Only items
 * that start aligned in the unreduced stream are items at all; the rest
 * are pads or oddly split puts, which stay inline and are not counted.
 */
static bool rxdr_take(struct rw_rxdr *r, u_int len, uint32_t *slot)
{
	uint32_t k;
	int s;

	if (!r->body || ((r->pos + r->moved) & 3u))
		return false;
	k = r->ordinal++;
	if (r->pol.mode == RW_DDP_NONE || len < r->pol.min_len)
		return false;
	if (r->pol.mode == RW_DDP_PICK) {
		s = rxdr_pick(r, len);
		*slot = (uint32_t)s;
		return s >= 0;
	}
	if (r->pol.max_chunks && r->nitems >= r->pol.max_chunks)
		return false; /* no Write chunk left: inline */
	*slot = r->nitems;
	return rw_ddp_designated(&r->pol, k);
}

static bool_t rxdr_move(struct rw_rxdr *r, const char *addr, u_int len,
			uint32_t slot)
{
	struct rw_ddp_item *it;
	uint64_t upos = (uint64_t)r->pos + r->moved;

	if (r->nitems >= r->max_items)
		return rxdr_fail(r, RW_XERR_TOO_MANY);
	/* the item and its pad must stay addressable (and end + moved with
	 * them, since pos <= end) */
	if (!rxdr_fits(r, r->end, rw_xdr_round(len)))
		return rxdr_fail(r, RW_XERR_RANGE);
	it = &r->items[r->nitems++];
	it->position = (uint32_t)upos;
	it->len = len;
	it->ordinal = r->ordinal - 1;
	it->slot = slot;
	it->cut = r->pos;
	it->data = addr;
	r->moved += len;
	r->pad = rw_xdr_pad(len);
	r->cut = r->pos;
	return TRUE;
}

static bool_t rxdr_putbytes(XDR *xdrs, const char *addr, u_int len)
{
	struct rw_rxdr *r = rxdr_of(xdrs);
	uint32_t slot;

	if (r->err != RW_XERR_OK)
		return FALSE;
	if (len == 0)
		return TRUE;
	if (r->pad) {
		/* the moved item's pad goes neither inline nor in the chunk
		 * (V1-CH-7, V1-RC-5, V1-WC-9) */
		if (len != r->pad)
			return rxdr_fail(r, RW_XERR_PAD);
		r->moved += len;
		r->pad = 0;
		return TRUE;
	}
	if (rxdr_take(r, len, &slot))
		return rxdr_move(r, addr, len, slot);
	if (!rxdr_room(r, len)) /* also fails a stream take failed */
		return FALSE;
	memmove(r->buf + r->pos, addr, len);
	rxdr_advance(r, len);
	return TRUE;
}

static u_int rxdr_getpostn(XDR *xdrs)
{
	return rxdr_of(xdrs)->pos;
}

/*
 * Repositioning before the last cut would put a moved item after the write
 * position, and its recorded unreduced position would no longer hold.
 */
static bool_t rxdr_setpostn(XDR *xdrs, u_int pos)
{
	struct rw_rxdr *r = rxdr_of(xdrs);

	if (r->err != RW_XERR_OK || r->pad || pos > r->cap || pos < r->cut ||
	    !rxdr_fits(r, pos, 0))
		return FALSE;
	r->pos = pos;
	if (pos > r->end)
		r->end = pos;
	return TRUE;
}

static int32_t *rxdr_inline(XDR *xdrs, u_int len)
{
	struct rw_rxdr *r = rxdr_of(xdrs);
	uint8_t *p;

	if (r->err != RW_XERR_OK || r->pad || len > r->cap - r->pos ||
	    !rxdr_fits(r, r->pos, len))
		return NULL;
	p = r->buf + r->pos;
	/* IXDR_* dereference int32_t *: hand out aligned memory only */
	if (!rw_xdr_aligned(p))
		return NULL;
	rxdr_advance(r, len);
	return (int32_t *)(void *)p;
}

static void rxdr_destroy(XDR *xdrs)
{
}

static bool_t rxdr_control(XDR *xdrs, int req, void *arg)
{
	return FALSE;
}

static const struct xdr_ops rw_rxdr_ops = {
	.x_getlong = rxdr_getlong,
	.x_putlong = rxdr_putlong,
	.x_getbytes = rxdr_getbytes,
	.x_putbytes = rxdr_putbytes,
	.x_getpostn = rxdr_getpostn,
	.x_setpostn = rxdr_setpostn,
	.x_inline = rxdr_inline,
	.x_destroy = rxdr_destroy,
	.x_control = rxdr_control,
};

bool rw_rxdr_create(struct rw_rxdr *r, void *buf, size_t cap,
		    const struct rw_ddp_policy *pol, struct rw_ddp_item *items,
		    unsigned max_items)
{
	memset(r, 0, sizeof(*r));
	r->xdr.x_op = XDR_ENCODE;
	r->xdr.x_ops = &rw_rxdr_ops;
	r->xdr.x_private = r;
	r->buf = buf;
	r->cap = cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap;
	r->items = items;
	r->max_items = items ? max_items : 0;
	if (pol)
		r->pol = *pol;
	else
		r->pol.mode = RW_DDP_NONE;
	if (!buf && cap) {
		r->err = RW_XERR_BAD_ARG;
		return false;
	}
	return true;
}

bool rw_rxdr_begin_body(XDR *xdrs)
{
	struct rw_rxdr *r;

	if (xdrs->x_ops != &rw_rxdr_ops)
		return false;
	r = rxdr_of(xdrs);
	r->body = true;
	r->body_upos = r->pos + r->moved;
	return true;
}

enum rw_xdr_err rw_rxdr_finish(struct rw_rxdr *r)
{
	if (r->err == RW_XERR_OK && r->pad)
		r->err = RW_XERR_PAD;
	return r->err;
}

bool rw_rxdr_peek_word(const struct rw_rxdr *r, uint32_t upos, uint32_t *w)
{
	uint64_t shift, ipos, iend;
	const uint8_t *p = NULL;
	uint8_t b[4];
	unsigned i, k;

	if (r->err != RW_XERR_OK ||
	    (uint64_t)upos + 4 > rw_rxdr_unreduced_len(r))
		return false;
	for (k = 0; k < 4; k++) {
		uint64_t u = (uint64_t)upos + k;

		p = NULL;
		shift = 0;
		for (i = 0; i < r->nitems; i++) {
			ipos = r->items[i].position;
			iend = ipos + rw_xdr_round(r->items[i].len);
			if (u < ipos)
				break;
			if (u < iend) {
				/* inside a moved item: its data, or its pad */
				p = u - ipos < r->items[i].len ?
					    (const uint8_t *)r->items[i].data +
						    (u - ipos) :
					    (const uint8_t *)"";
				break;
			}
			shift += iend - ipos;
		}
		if (!p)
			p = r->buf + (u - shift);
		b[k] = *p;
	}
	*w = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 |
	     b[3];
	return true;
}

uint32_t rw_ddp_unreduce(const void *reduced, uint32_t rlen,
			 const struct rw_ddp_item *items, unsigned nitems,
			 void *out, size_t cap, enum rw_xdr_err *err)
{
	struct rw_reasm_walk w = { .plen = rlen };
	/* an empty payload may come as NULL; keep pointer arithmetic defined */
	const uint8_t *in = reduced ? reduced : (const uint8_t *)"";
	uint8_t *o = out;
	uint32_t need, ulen, done = 0;
	enum rw_xdr_err e = RW_XERR_OK;
	unsigned i;

	if (!o || (!reduced && rlen) || (!items && nitems)) {
		*err = RW_XERR_BAD_ARG;
		return 0;
	}
	for (i = 0; i < nitems; i++) {
		uint32_t in_off = w.in_off, pad = rw_xdr_pad(items[i].len);

		e = rw_reasm_step(&w, items[i].position, items[i].len, &need);
		if (e != RW_XERR_OK)
			break;
		if ((uint64_t)done + need + items[i].len + pad > cap) {
			e = RW_XERR_NOSPACE;
			break;
		}
		rw_xdr_copy(o + done, in + in_off, need);
		done += need;
		rw_xdr_copy(o + done, items[i].data, items[i].len);
		done += items[i].len;
		rw_xdr_copy(o + done, "\0\0\0", pad);
		done += pad;
	}
	if (e == RW_XERR_OK)
		e = rw_reasm_total(&w, &ulen);
	if (e == RW_XERR_OK && (uint64_t)done + (rlen - w.in_off) > cap)
		e = RW_XERR_NOSPACE;
	if (e != RW_XERR_OK) {
		*err = e;
		return 0;
	}
	rw_xdr_copy(o + done, in + w.in_off, rlen - w.in_off);
	*err = RW_XERR_OK;
	return ulen;
}
