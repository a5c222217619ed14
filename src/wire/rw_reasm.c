/*
 * rw_reasm.c - the reassembling XDR decoder (struct rw_axdr): decodes an
 * RPC message from its reduced payload plus chunk data as if it were the
 * unreduced stream (RFC 8166 §3.4.5), and rw_ddp_flatten(), the same
 * reconstruction into one buffer.
 *
 * The decoder walks a virtual stream: payload octets, and at each chunk an
 * "insertion" of chunk octets followed by the XDR pad.  upos is the offset
 * in that virtual stream, poff the offset in the payload.  Everything that
 * decides how far to read comes from the peer (positions, lengths, length
 * words in the payload), so each read is checked against three limits
 * before any byte moves: the payload left, the distance to the next Read
 * chunk, and what is left of the current insertion.  A read that would
 * cross one of those boundaries means payload and descriptors disagree,
 * and the stream fails instead of guessing.
 */
#include "rw_xdr_priv.h"

static const struct xdr_ops rw_axdr_ops;

static struct rw_axdr *axdr_of(XDR *xdrs)
{
	return (struct rw_axdr *)xdrs->x_private;
}

static bool_t axdr_fail(struct rw_axdr *a, enum rw_xdr_err e)
{
	if (a->err == RW_XERR_OK)
		a->err = e;
	return FALSE;
}

static bool axdr_inserting(const struct rw_axdr *a)
{
	return a->ins_left || a->pad_left;
}

/* Octets in a chunk: the sum of its segments (checked at create). */
static uint32_t chunk_len(const struct rw_ddp_chunk *c)
{
	uint32_t i, n = 0;

	for (i = 0; i < c->nsegs; i++)
		n += c->segs[i].len;
	return n;
}

/* Is the next Read chunk due at the current offset? */
static bool axdr_at_chunk(const struct rw_axdr *a)
{
	return a->mode == RW_AXDR_READ && a->next < a->nchunks &&
	       a->upos == a->chunks[a->next].position;
}

/*
 * Payload octets readable in one piece: up to the payload's end and, in
 * READ mode, up to the next chunk position (upos never passes it: reads
 * are clipped here and chunk ends were checked at create).
 */
static uint32_t axdr_gap(const struct rw_axdr *a)
{
	if (a->mode == RW_AXDR_READ && a->next < a->nchunks)
		return a->chunks[a->next].position - a->upos;
	return UINT32_MAX;
}

static bool_t axdr_from_payload(struct rw_axdr *a, char *addr, u_int len)
{
	const uint8_t *src = a->pay + a->poff;

	if (len > axdr_gap(a))
		return axdr_fail(a, RW_XERR_CHUNK_SPLIT);
	if (len > a->plen - a->poff)
		return axdr_fail(a, RW_XERR_SHORT);
	if (len > UINT32_MAX - a->upos)
		return axdr_fail(a, RW_XERR_RANGE);
	/* memmove: a caller may decode into the buffer it decodes from */
	if ((const uint8_t *)addr != src)
		memmove(addr, src, len);
	a->poff += len;
	a->upos += len;
	return TRUE;
}

/*
 * Deliver len octets of the current insertion: chunk data segment by
 * segment, then zero pad.  A destination that already is the chunk memory
 * is left alone (zero copy).  item says whether this read is the item
 * itself (counted) or its pad.
 */
static bool_t axdr_from_chunk(struct rw_axdr *a, char *addr, u_int len,
			      bool item)
{
	uint8_t *out = (uint8_t *)addr;
	uint32_t n, copied = 0;

	if ((uint64_t)len > (uint64_t)a->ins_left + a->pad_left)
		return axdr_fail(a, RW_XERR_CHUNK_SPLIT);
	n = len < a->ins_left ? len : a->ins_left;
	while (n) {
		const uint8_t *src;
		uint32_t take;

		/* ins_left never exceeds the segments left (set at start) */
		while (a->seg_off == a->seg->len) {
			a->seg++;
			a->seg_off = 0;
		}
		take = a->seg->len - a->seg_off;
		if (take > n)
			take = n;
		src = (const uint8_t *)a->seg->data + a->seg_off;
		if (out != src) {
			memmove(out, src, take);
			copied += take;
		}
		out += take;
		a->seg_off += take;
		a->ins_left -= take;
		n -= take;
	}
	n = (uint32_t)(out - (uint8_t *)addr);
	if (len > n) {
		memset(out, 0, len - n); /* pad the sender left out */
		a->pad_left -= len - n;
	}
	a->upos += len;
	if (item) {
		if (copied)
			a->copies++;
		else
			a->zero_copies++;
	}
	a->bytes_copied += copied;
	return TRUE;
}

static void axdr_insert(struct rw_axdr *a, const struct rw_ddp_chunk *c,
			uint32_t use, uint32_t pad)
{
	if (a->nins < RW_AXDR_MAX_INS) {
		a->ins[a->nins].upos = a->upos;
		a->ins[a->nins].len = use + pad;
	}
	a->nins++;
	a->seg = c->segs;
	a->seg_off = 0;
	a->ins_left = use;
	a->pad_left = pad;
	a->next++;
}

/*
 * The view of what is decoded so far, for an RW_DDP_PICK designator: body
 * offset to payload offset, skipping the chunk data inserted before it
 * (never read: aligned words cannot straddle an aligned insertion).
 */
static bool axdr_view_word(const struct rw_ddp_view *v, uint32_t off,
			   uint32_t *w)
{
	const struct rw_axdr *a = v->s;
	uint64_t u = (uint64_t)a->body_upos + off, shift = 0;
	uint32_t i;

	if (u + 4 > a->upos || a->nins > RW_AXDR_MAX_INS)
		return false;
	for (i = 0; i < a->nins; i++) {
		if (u < a->ins[i].upos)
			break;
		if (u < (uint64_t)a->ins[i].upos + a->ins[i].len)
			return false;
		shift += a->ins[i].len;
	}
	*w = rw_xdr_get32(a->pay + (u - shift));
	return true;
}

/* RW_DDP_PICK: the designator's slot for the item at upos, < 0 if none. */
static int axdr_pick(const struct rw_axdr *a, u_int len)
{
	struct rw_ddp_view v = { .word = axdr_view_word, .s = a };

	if (!a->pol.pick)
		return -1;
	return a->pol.pick(&v, a->upos - a->body_upos, len);
}

/* Is the item starting here designated, and in which slot? */
static bool axdr_designated(struct rw_axdr *a, u_int len, int *slot)
{
	uint32_t k = a->ordinal++;

	if (a->pol.mode == RW_DDP_PICK) {
		*slot = axdr_pick(a, len);
		return *slot >= 0;
	}
	*slot = (int)a->next;
	return rw_ddp_designated(&a->pol, k);
}

/*
 * READ: the decoder reached a chunk position with an x_getbytes of len
 * octets, i.e. an opaque item whose length word said len.  The chunk must
 * be an eligible body item of len or roundup4(len) octets (AMB-V1-12).
 */
static bool_t axdr_read_chunk(struct rw_axdr *a, char *addr, u_int len)
{
	const struct rw_ddp_chunk *c = &a->chunks[a->next];
	uint32_t clen = chunk_len(c);
	int slot;

	if (!a->body)
		return axdr_fail(a, RW_XERR_NOT_ELIGIBLE);
	if (!axdr_designated(a, len, &slot))
		return axdr_fail(a, RW_XERR_NOT_ELIGIBLE);
	if (clen != len && clen != rw_xdr_round(len))
		return axdr_fail(a, RW_XERR_CHUNK_LEN);
	/* positions were checked against the padded chunk at create */
	axdr_insert(a, c, clen, rw_xdr_pad(clen));
	return axdr_from_chunk(a, addr, len, true);
}

/*
 * WRITE: a designated result item of len octets takes the next Write
 * chunk.  Its returned length must be in [len, roundup4(len)] (V1-WC-10
 * with RFC 5666 tolerance, N-16); exactly len octets are used and the pad
 * is supplied here, never taken from the payload.
 */
static bool_t axdr_write_chunk(struct rw_axdr *a, char *addr, u_int len)
{
	const struct rw_ddp_chunk *c = &a->chunks[a->next];
	uint32_t lret = chunk_len(c);

	if (lret < len || lret > rw_xdr_round(len))
		return axdr_fail(a, RW_XERR_CHUNK_LEN);
	if (rw_xdr_round(len) > UINT32_MAX - a->upos)
		return axdr_fail(a, RW_XERR_RANGE);
	axdr_insert(a, c, len, rw_xdr_pad(len));
	return axdr_from_chunk(a, addr, len, true);
}

/*
 * WRITE: move on to the result's Write chunk.  The ones skipped belong to
 * results that did not come (a failed NFSv4 READ, RFC 8267 6.4) and must
 * come back empty (V1-WC-6); going backwards would reuse a chunk.
 */
static bool axdr_skip_to(struct rw_axdr *a, uint32_t slot)
{
	if (slot < a->next)
		return axdr_fail(a, RW_XERR_SLOT_ORDER);
	for (; a->next < slot; a->next++)
		if (chunk_len(&a->chunks[a->next]))
			return axdr_fail(a, RW_XERR_UNUSED_CHUNK);
	return true;
}

/* Only reads that start aligned in the body are items (rw_xdr.h). */
static bool axdr_item_start(const struct rw_axdr *a)
{
	return a->body && !(a->upos & 3u);
}

static bool_t axdr_getbytes(XDR *xdrs, char *addr, u_int len)
{
	struct rw_axdr *a = axdr_of(xdrs);

	if (a->err != RW_XERR_OK)
		return FALSE;
	if (len == 0)
		return TRUE;
	if (axdr_inserting(a))
		return axdr_from_chunk(a, addr, len, false);
	if (axdr_at_chunk(a))
		return axdr_read_chunk(a, addr, len);
	if (axdr_item_start(a)) {
		int slot;

		/* READ mode: only a chunk position can hold an item.  A
		 * picked result still needs its slot once the chunks are
		 * used up: one below them is out of order, not inline. */
		if (a->mode != RW_AXDR_WRITE || !a->nchunks ||
		    (a->pol.mode != RW_DDP_PICK && a->next >= a->nchunks))
			a->ordinal++;
		else if (axdr_designated(a, len, &slot) &&
			 (uint32_t)slot < a->nchunks) {
			if (!axdr_skip_to(a, (uint32_t)slot))
				return FALSE;
			return axdr_write_chunk(a, addr, len);
		}
	}
	return axdr_from_payload(a, addr, len);
}

static bool_t axdr_getlong(XDR *xdrs, long *lp)
{
	struct rw_axdr *a = axdr_of(xdrs);
	char w[4];

	if (a->err != RW_XERR_OK)
		return FALSE;
	/* chunk data is one opaque item, read only by x_getbytes */
	if (axdr_inserting(a) || axdr_at_chunk(a))
		return axdr_fail(a, a->body ? RW_XERR_CHUNK_TYPE :
					      RW_XERR_NOT_ELIGIBLE);
	if (!axdr_from_payload(a, w, 4))
		return FALSE;
	/* zero-extended, exactly as libtirpc's xdrmem does */
	*lp = (long)rw_xdr_get32((const uint8_t *)w);
	return TRUE;
}

static bool_t axdr_putlong(XDR *xdrs, const long *lp)
{
	return axdr_fail(axdr_of(xdrs), RW_XERR_BAD_ARG);
}

static bool_t axdr_putbytes(XDR *xdrs, const char *addr, u_int len)
{
	return axdr_fail(axdr_of(xdrs), RW_XERR_BAD_ARG);
}

static u_int axdr_getpostn(XDR *xdrs)
{
	return axdr_of(xdrs)->upos;
}

/* Moving would skip chunk bookkeeping; only "stay here" is honoured. */
static bool_t axdr_setpostn(XDR *xdrs, u_int pos)
{
	struct rw_axdr *a = axdr_of(xdrs);

	return a->err == RW_XERR_OK && pos == a->upos;
}

/*
 * Inline access only inside the payload, short of the next chunk, and only
 * to 4-aligned memory (IXDR_* dereference int32_t *).  The pointer is into
 * the caller's const payload: decode paths only read through it.
 */
const uint8_t *rw_axdr_peek(const struct rw_axdr *a, u_int len)
{
	const uint8_t *p = a->pay + a->poff;

	if (a->err != RW_XERR_OK || axdr_inserting(a))
		return NULL;
	if (len > axdr_gap(a) || len > a->plen - a->poff ||
	    len > UINT32_MAX - a->upos || !rw_xdr_aligned(p))
		return NULL;
	return p;
}

static int32_t *axdr_inline(XDR *xdrs, u_int len)
{
	struct rw_axdr *a = axdr_of(xdrs);
	const uint8_t *p = rw_axdr_peek(a, len);

	if (!p)
		return NULL;
	a->poff += len;
	a->upos += len;
	return (int32_t *)(uintptr_t)p;
}

static void axdr_destroy(XDR *xdrs)
{
}

static bool_t axdr_control(XDR *xdrs, int req, void *arg)
{
	return FALSE;
}

static const struct xdr_ops rw_axdr_ops = {
	.x_getlong = axdr_getlong,
	.x_putlong = axdr_putlong,
	.x_getbytes = axdr_getbytes,
	.x_putbytes = axdr_putbytes,
	.x_getpostn = axdr_getpostn,
	.x_setpostn = axdr_setpostn,
	.x_inline = axdr_inline,
	.x_destroy = axdr_destroy,
	.x_control = axdr_control,
};

/* Segments present where they are counted, and no sum beyond 32 bits. */
static enum rw_xdr_err chunks_check(const struct rw_ddp_chunk *chunks,
				    unsigned nchunks)
{
	unsigned i, j;

	if (!chunks && nchunks)
		return RW_XERR_BAD_ARG;
	for (i = 0; i < nchunks; i++) {
		const struct rw_ddp_chunk *c = &chunks[i];
		uint64_t sum = 0;

		if (!c->segs && c->nsegs)
			return RW_XERR_BAD_ARG;
		for (j = 0; j < c->nsegs; j++) {
			if (!c->segs[j].data && c->segs[j].len)
				return RW_XERR_BAD_ARG;
			sum += c->segs[j].len;
		}
		if (sum > UINT32_MAX)
			return RW_XERR_RANGE;
	}
	return RW_XERR_OK;
}

/* The RFC 8166 §3.4.5 walk over every Read chunk, without moving data. */
static enum rw_xdr_err read_chunks_check(uint32_t plen,
					 const struct rw_ddp_chunk *chunks,
					 unsigned nchunks, uint32_t *ulen)
{
	struct rw_reasm_walk w = { .plen = plen };
	enum rw_xdr_err e;
	uint32_t need;
	unsigned i;

	e = chunks_check(chunks, nchunks);
	for (i = 0; i < nchunks && e == RW_XERR_OK; i++)
		e = rw_reasm_step(&w, chunks[i].position, chunk_len(&chunks[i]),
				  &need);
	if (e == RW_XERR_OK)
		e = rw_reasm_total(&w, ulen);
	return e;
}

bool rw_axdr_create(struct rw_axdr *a, const void *payload, size_t len,
		    enum rw_axdr_mode mode, const struct rw_ddp_chunk *chunks,
		    unsigned nchunks, const struct rw_ddp_policy *pol)
{
	enum rw_xdr_err e = RW_XERR_OK;

	memset(a, 0, sizeof(*a));
	a->xdr.x_op = XDR_DECODE;
	a->xdr.x_ops = &rw_axdr_ops;
	a->xdr.x_private = a;
	a->mode = mode;
	/* an empty payload may come as NULL; keep pointer arithmetic defined */
	a->pay = payload ? payload : (const void *)"";
	a->plen = len <= UINT32_MAX ? (uint32_t)len : 0;
	a->chunks = chunks;
	a->nchunks = nchunks;
	if (pol)
		a->pol = *pol;
	else
		a->pol.mode = RW_DDP_ALL;

	if ((!payload && len) || len > UINT32_MAX ||
	    (mode != RW_AXDR_READ && mode != RW_AXDR_WRITE))
		e = RW_XERR_BAD_ARG;
	else if (mode == RW_AXDR_READ)
		e = read_chunks_check(a->plen, chunks, nchunks, &a->ulen);
	else
		e = chunks_check(chunks, nchunks);
	if (e != RW_XERR_OK) {
		a->nchunks = 0;
		a->err = e;
		return false;
	}
	return true;
}

bool rw_axdr_begin_body(XDR *xdrs)
{
	struct rw_axdr *a;

	if (xdrs->x_ops != &rw_axdr_ops)
		return false;
	a = axdr_of(xdrs);
	a->body = true;
	a->body_upos = a->upos;
	return true;
}

bool rw_axdr_set_policy(struct rw_axdr *a, const struct rw_ddp_policy *pol)
{
	if (a->body || !pol)
		return false;
	a->pol = *pol;
	return true;
}

/* What a finished decode left unread, if anything. */
static enum rw_xdr_err axdr_leftover(const struct rw_axdr *a)
{
	uint32_t j;

	if (axdr_inserting(a))
		return RW_XERR_UNUSED_CHUNK;
	for (j = a->next; j < a->nchunks; j++) {
		/* an unused Write chunk comes back with zero lengths
		 * (V1-WC-6); one with data was filled for nothing */
		if (a->mode == RW_AXDR_READ || chunk_len(&a->chunks[j]))
			return RW_XERR_UNUSED_CHUNK;
	}
	if (a->poff != a->plen)
		return RW_XERR_TRAILING;
	return RW_XERR_OK;
}

enum rw_xdr_err rw_axdr_finish(struct rw_axdr *a)
{
	if (a->err == RW_XERR_OK)
		a->err = axdr_leftover(a);
	return a->err;
}

uint32_t rw_ddp_flatten(const void *payload, size_t len,
			const struct rw_ddp_chunk *chunks, unsigned nchunks,
			void *out, size_t cap, enum rw_xdr_err *err)
{
	const uint8_t *in = payload ? payload : (const void *)"";
	uint8_t *o = out;
	uint32_t ulen = 0, in_off = 0, out_off = 0;
	enum rw_xdr_err e;
	unsigned i, j;

	if ((!payload && len) || len > UINT32_MAX)
		e = RW_XERR_BAD_ARG;
	else
		e = read_chunks_check((uint32_t)len, chunks, nchunks, &ulen);
	if (e == RW_XERR_OK && out && ulen > cap)
		e = RW_XERR_NOSPACE;
	*err = e;
	if (e != RW_XERR_OK)
		return 0;
	if (!out)
		return ulen;
	for (i = 0; i < nchunks; i++) {
		const struct rw_ddp_chunk *c = &chunks[i];
		uint32_t need = c->position - out_off;

		rw_xdr_copy(o + out_off, in + in_off, need);
		in_off += need;
		out_off += need;
		for (j = 0; j < c->nsegs; j++) {
			rw_xdr_copy(o + out_off, c->segs[j].data,
				    c->segs[j].len);
			out_off += c->segs[j].len;
		}
		rw_xdr_copy(o + out_off, "\0\0\0", rw_xdr_pad(out_off));
		out_off += rw_xdr_pad(out_off);
	}
	rw_xdr_copy(o + out_off, in + in_off, (uint32_t)len - in_off);
	return ulen;
}
