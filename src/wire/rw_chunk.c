/*
 * rw_chunk.c - chunk-list builders, the Read-chunk iterator and the
 * structural validation of Calls and Replies.
 *
 * Every sum of segment lengths is done in 64 bits and compared with
 * UINT32_MAX: lengths come from the peer, and an XDR item (or the whole
 * reconstructed stream) cannot be longer than 32 bits can say.
 */
#include "rw_chunk.h"
#include "rw_be.h"

static bool segs_len(const struct rw_segment *segs, uint32_t n, uint32_t *len)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < n; i++)
		sum += segs[i].length;
	if (sum > UINT32_MAX)
		return false;
	*len = (uint32_t)sum;
	return true;
}

bool rw_chunk_len(const struct rw_chunk *c, uint32_t *len)
{
	return segs_len(c->segs, c->nsegs, len);
}

/* ---- Read list ------------------------------------------------------- */

void rw_read_builder_init(struct rw_read_builder *b, struct rw_read_seg *reads,
			  uint32_t cap)
{
	b->reads = reads;
	b->cap = cap;
	b->n = 0;
	b->next_pos = 0;
}

/*
 * Where the chunk after one at position/len may start: the end of this one
 * in the rebuilt stream, XDR pad included (AMB-V1-5).
 * A PZRC is the stream itself, not an insertion, so it reserves nothing.
 */
static uint64_t read_chunk_end(uint32_t position, uint32_t len)
{
	if (!position)
		return 0;
	return position + rw_roundup4(len);
}

enum rw_reason rw_read_builder_add(struct rw_read_builder *b, uint32_t position,
				   const struct rw_segment *segs,
				   uint32_t nsegs)
{
	uint32_t len;

	if (!nsegs)
		return RW_R_EMPTY_CHUNK;
	if (nsegs > RW_MAX_CHUNK_SEGS)
		return RW_R_TOO_MANY_SEGS;
	if (position & 3)
		return RW_R_BAD_POSITION;
	/* A second chunk at the same position would merge with the first. */
	if (b->n && position <= b->reads[b->n - 1].position)
		return RW_R_POSITION_ORDER;
	if (position < b->next_pos)
		return RW_R_READ_OVERLAP;
	if (nsegs > b->cap - b->n)
		return RW_R_TOO_MANY_READS;
	if (!segs_len(segs, nsegs, &len))
		return RW_R_CHUNK_OVERFLOW;
	if (read_chunk_end(position, len) > UINT32_MAX)
		return RW_R_CHUNK_OVERFLOW;
	for (uint32_t i = 0; i < nsegs; i++) {
		b->reads[b->n + i].position = position;
		b->reads[b->n + i].seg = segs[i];
	}
	b->n += nsegs;
	b->next_pos = read_chunk_end(position, len);
	return RW_R_OK;
}

void rw_hdr_set_reads(struct rw_hdr *h, const struct rw_read_builder *b)
{
	h->nreads = b->n;
	h->reads = b->reads;
}

int rw_read_iter_next(struct rw_read_iter *it, struct rw_read_chunk *c)
{
	const struct rw_hdr *h = it->h;
	uint32_t i = it->next;
	uint64_t sum = 0;

	if (i >= h->nreads)
		return 0;
	c->position = h->reads[i].position;
	c->first = i;
	for (; i < h->nreads && h->reads[i].position == c->position; i++)
		sum += h->reads[i].seg.length;
	c->nsegs = i - c->first;
	it->next = i;
	if (sum > UINT32_MAX)
		return -1;
	c->length = (uint32_t)sum;
	return 1;
}

/* ---- Write list and Reply chunk -------------------------------------- */

void rw_write_builder_init(struct rw_write_builder *b, struct rw_chunk *chunks,
			   uint32_t cap)
{
	b->chunks = chunks;
	b->cap = cap;
	b->n = 0;
}

static enum rw_reason check_chunk(const struct rw_segment *segs, uint32_t nsegs)
{
	uint32_t len;

	if (!nsegs)
		return RW_R_EMPTY_CHUNK;
	if (nsegs > RW_MAX_CHUNK_SEGS)
		return RW_R_TOO_MANY_SEGS;
	if (!segs_len(segs, nsegs, &len))
		return RW_R_CHUNK_OVERFLOW;
	return RW_R_OK;
}

enum rw_reason rw_write_builder_add(struct rw_write_builder *b,
				    struct rw_segment *segs, uint32_t nsegs)
{
	enum rw_reason why = check_chunk(segs, nsegs);

	if (why)
		return why;
	if (b->n >= b->cap || b->n >= RW_MAX_WRITE_CHUNKS)
		return RW_R_TOO_MANY_WRITES;
	b->chunks[b->n].nsegs = nsegs;
	b->chunks[b->n].segs = segs;
	b->n++;
	return RW_R_OK;
}

void rw_hdr_set_writes(struct rw_hdr *h, const struct rw_write_builder *b)
{
	h->nwrites = b->n;
	h->writes = b->chunks;
}

enum rw_reason rw_hdr_set_reply(struct rw_hdr *h, struct rw_segment *segs,
				uint32_t nsegs)
{
	enum rw_reason why = check_chunk(segs, nsegs);

	if (why)
		return why;
	h->has_reply = true;
	h->reply.nsegs = nsegs;
	h->reply.segs = segs;
	return RW_R_OK;
}

/* ---- Call validation ------------------------------------------------- */

/*
 * Per entry: positions are multiples of 4 (V1-RC-2) and never decrease, so
 * the segments of a chunk are contiguous and a PZRC can only come first
 * (AMB-V1-6).  Per chunk: lengths fit 32 bits and normal chunks do not
 * overlap in the unreduced stream.
 */
static enum rw_reason check_reads(const struct rw_hdr *h, bool *pzrc)
{
	struct rw_read_iter it;
	struct rw_read_chunk c;
	uint64_t next_pos = 0;
	int more;

	for (uint32_t i = 0; i < h->nreads; i++) {
		if (h->reads[i].position & 3)
			return RW_R_BAD_POSITION;
		if (i && h->reads[i].position < h->reads[i - 1].position)
			return RW_R_POSITION_ORDER;
	}
	*pzrc = h->nreads && !h->reads[0].position;
	rw_read_iter_init(&it, h);
	while ((more = rw_read_iter_next(&it, &c)) != 0) {
		if (more < 0)
			return RW_R_CHUNK_OVERFLOW;
		if (c.position < next_pos)
			return RW_R_READ_OVERLAP;
		next_pos = read_chunk_end(c.position, c.length);
		if (next_pos > UINT32_MAX)
			return RW_R_CHUNK_OVERFLOW;
	}
	return RW_R_OK;
}

static enum rw_reason check_writes(const struct rw_hdr *h)
{
	for (uint32_t i = 0; i < h->nwrites; i++) {
		enum rw_reason why =
			check_chunk(h->writes[i].segs, h->writes[i].nsegs);

		if (why)
			return why;
	}
	if (h->has_reply)
		return check_chunk(h->reply.segs, h->reply.nsegs);
	return RW_R_OK;
}

static bool chunk_has_handle(const struct rw_chunk *c, uint32_t handle)
{
	for (uint32_t i = 0; i < c->nsegs; i++)
		if (c->segs[i].handle == handle)
			return true;
	return false;
}

/* V2-RI-1: a non-zero inv_handle names a handle of this very header. */
static bool inv_handle_ok(const struct rw_hdr *h)
{
	uint32_t handle = h->inv_handle;

	if (!handle)
		return true;
	for (uint32_t i = 0; i < h->nreads; i++)
		if (h->reads[i].seg.handle == handle)
			return true;
	for (uint32_t i = 0; i < h->nwrites; i++)
		if (chunk_has_handle(&h->writes[i], handle))
			return true;
	return h->has_reply && chunk_has_handle(&h->reply, handle);
}

static enum rw_reason validate_call_lists(const struct rw_hdr *h)
{
	enum rw_reason why;
	bool pzrc;

	if (h->vers == RW_VERS_2 && h->direction != RW_DIR_CALL)
		return RW_R_DIR_MISMATCH;
	why = check_reads(h, &pzrc);
	if (!why)
		why = check_writes(h);
	if (why)
		return why;
	if (h->proc == RW_MSG && pzrc)
		return RW_R_MISPLACED_PZRC;
	if (h->proc == RW_NOMSG && !h->nreads && !h->nwrites && !h->has_reply)
		return RW_R_NOMSG_NO_CHUNK;
	if (h->proc == RW_NOMSG && !pzrc)
		return RW_R_MISPLACED_PZRC;
	if (h->vers == RW_VERS_2 && !inv_handle_ok(h))
		return RW_R_BAD_INV_HANDLE;
	return RW_R_OK;
}

enum rw_reason rw_validate_call(const struct rw_hdr *h)
{
	switch (h->proc) {
	case RW_MSG:
	case RW_NOMSG:
		return validate_call_lists(h);
	case RW_ERROR:
		return RW_R_ERROR_RECEIVED;
	case RW2_OPTIONAL:
		return RW_R_BAD_OPTION;
	case RW2_CONNPROP:
	case RW2_REQPROP:
	case RW2_UPDPROP:
		return RW_R_OK;
	case RW2_RESPROP:
		return RW_R_UNEXPECTED_PROC;
	default:
		return RW_R_BAD_PROC;
	}
}

/* ---- Reply validation ------------------------------------------------ */

/*
 * A returned chunk is the provisioned one with new lengths: same segment
 * count, handles and offsets (V1-WC-5), no length above what was offered.
 */
static enum rw_reason check_echo(const struct rw_chunk *prov,
				 const struct rw_chunk *ret,
				 enum rw_reason mismatch)
{
	if (ret->nsegs != prov->nsegs)
		return mismatch;
	for (uint32_t i = 0; i < ret->nsegs; i++) {
		const struct rw_segment *p = &prov->segs[i], *r = &ret->segs[i];

		if (r->handle != p->handle || r->offset != p->offset)
			return mismatch;
		if (r->length > p->length)
			return RW_R_WRITE_OVERRUN;
	}
	return RW_R_OK;
}

static bool chunk_unused(const struct rw_chunk *c)
{
	for (uint32_t i = 0; i < c->nsegs; i++)
		if (c->segs[i].length)
			return false;
	return true;
}

/* AMB-V1-4: trailing Write chunks may be missing (= unused). */
static enum rw_reason check_write_echo(const struct rw_hdr *call,
				       const struct rw_hdr *reply)
{
	if (reply->nwrites > call->nwrites)
		return RW_R_WRITE_MISMATCH;
	for (uint32_t i = 0; i < reply->nwrites; i++) {
		enum rw_reason why = check_echo(&call->writes[i],
						&reply->writes[i],
						RW_R_WRITE_MISMATCH);

		if (why)
			return why;
	}
	return RW_R_OK;
}

/* AMB-V1-4: an unused Reply chunk is absent or returned with zero lengths;
 * a used one (NOMSG) is the Call's with the lengths written. */
static enum rw_reason check_reply_echo(const struct rw_hdr *call,
				       const struct rw_hdr *reply)
{
	enum rw_reason why;

	if (!reply->has_reply)
		return reply->proc == RW_NOMSG ? RW_R_NOMSG_NO_REPLY_CHUNK :
						 RW_R_OK;
	if (!call->has_reply)
		return RW_R_REPLY_CHUNK_MISMATCH;
	why = check_echo(&call->reply, &reply->reply,
			 RW_R_REPLY_CHUNK_MISMATCH);
	if (why)
		return why;
	if (reply->proc == RW_MSG && !chunk_unused(&reply->reply))
		return RW_R_REPLY_CHUNK_MISMATCH;
	return RW_R_OK;
}

enum rw_reason rw_validate_reply(const struct rw_hdr *call,
				 const struct rw_hdr *reply)
{
	enum rw_reason why;

	if (reply->xid != call->xid)
		return RW_R_XID_MISMATCH;
	if (reply->proc == RW_ERROR && reply->err.code == RW_ERR_VERS)
		return RW_R_OK;
	if (reply->vers != call->vers)
		return RW_R_VERS_MISMATCH;
	switch (reply->proc) {
	case RW_ERROR:
		return RW_R_OK;
	case RW_MSG:
	case RW_NOMSG:
		if (call->proc != RW_MSG && call->proc != RW_NOMSG)
			return RW_R_UNEXPECTED_PROC;
		break;
	case RW2_RESPROP:
		return call->proc == RW2_REQPROP ? RW_R_OK :
						   RW_R_UNEXPECTED_PROC;
	default:
		return RW_R_UNEXPECTED_PROC;
	}
	if (reply->vers == RW_VERS_2 && reply->direction != RW_DIR_REPLY)
		return RW_R_DIR_MISMATCH;
	if (reply->nreads)
		return RW_R_READS_IN_REPLY;
	why = check_write_echo(call, reply);
	if (!why)
		why = check_reply_echo(call, reply);
	return why;
}

enum rw_reason rw_check_payload(const struct rw_hdr *h, const void *rpc,
				size_t len)
{
	const uint8_t *p = rpc;
	uint32_t dir;

	if (len < 8)
		return RW_R_NO_PAYLOAD;
	if (rw_get32(p) != h->xid)
		return RW_R_XID_MISMATCH;
	if (h->vers != RW_VERS_2)
		return RW_R_OK;
	dir = h->proc == RW2_OPTIONAL ? h->opt.dir : h->direction;
	return rw_get32(p + 4) == dir ? RW_R_OK : RW_R_DIR_MISMATCH;
}

/* ---- Chunk lengths against XDR items --------------------------------- */

enum rw_reason rw_write_chunk_return(const struct rw_chunk *prov,
				     uint64_t written, struct rw_segment *out)
{
	uint32_t cap;

	if (!rw_chunk_len(prov, &cap) || written > cap)
		return RW_R_WRITE_OVERRUN;
	for (uint32_t i = 0; i < prov->nsegs; i++) {
		uint32_t n = written < prov->segs[i].length ?
				     (uint32_t)written :
				     prov->segs[i].length;

		out[i] = prov->segs[i];
		out[i].length = n;
		written -= n;
	}
	return RW_R_OK;
}

enum rw_reason rw_write_result_check(const struct rw_chunk *ret, uint32_t L,
				     uint32_t *use)
{
	uint32_t len;

	if (!rw_chunk_len(ret, &len) || len < L || len > rw_roundup4(L))
		return RW_R_DDP_LENGTH;
	*use = L;
	return RW_R_OK;
}

enum rw_reason rw_read_chunk_check(uint32_t chunk_len, uint32_t L)
{
	if (chunk_len == L || chunk_len == rw_roundup4(L))
		return RW_R_OK;
	return RW_R_DDP_LENGTH;
}
