/*
 * rw_plan.c - Short / Chunked / Long decisions (RFC 8166 §3.5, V1-HDR-7,
 * V1-RP-1..4, V1-SZ-2).
 *
 * Sizes are computed in 64 bits: a peer or a caller may hand us lengths
 * close to 4 GiB and a wrapped sum would turn "too big" into "fits".
 */
#include "wire/rw_plan.h"

#define XDR_UNIT 4u
#define SEG_LEN	 16u /* handle, length, offset */

static uint64_t write_list_len(uint32_t chunks, uint32_t segs)
{
	/* each chunk: present flag + count + segments; one terminator */
	return (uint64_t)chunks * 2 * XDR_UNIT + (uint64_t)segs * SEG_LEN +
	       XDR_UNIT;
}

static uint64_t shape_len(const struct rw_hdr_shape *s)
{
	uint64_t len = 4 * XDR_UNIT; /* xid, vers, credit, proc */

	if (s->vers >= 2)
		len += 2 * XDR_UNIT; /* direction, inv_handle */
	/* Read list: present flag + position + segment per entry, then 0 */
	len += (uint64_t)s->read_segs * (XDR_UNIT + XDR_UNIT + SEG_LEN) +
	       XDR_UNIT;
	len += write_list_len(s->write_chunks, s->write_segs);
	len += XDR_UNIT;    /* Reply chunk present flag */
	if (s->reply_chunk) /* a chunk has at least one segment (AMB-V1-11) */
		len += XDR_UNIT +
		       (uint64_t)(s->reply_segs ? s->reply_segs : 1) * SEG_LEN;
	return len;
}

static uint32_t clamp32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

uint32_t rw_hdr_shape_len(const struct rw_hdr_shape *s)
{
	return clamp32(shape_len(s));
}

static uint64_t call_hdr_len(const struct rw_call_in *in, uint32_t read_segs,
			     bool reply_chunk)
{
	struct rw_hdr_shape s = {
		.vers = in->vers,
		.read_segs = read_segs,
		.write_chunks = in->write_chunks,
		.write_segs = in->write_segs,
		.reply_chunk = reply_chunk,
		.reply_segs = in->reply_chunk_segs,
	};

	return shape_len(&s);
}

/*
 * V1-RP-1: a Reply chunk is required when the largest possible Reply,
 * transport header included, could exceed our receive size.  The Reply's
 * header echoes the Write list and carries no Read list.
 */
static bool need_reply_chunk(const struct rw_call_in *in)
{
	struct rw_hdr_shape s = {
		.vers = in->vers,
		.write_chunks = in->write_chunks,
		.write_segs = in->write_segs,
	};

	return shape_len(&s) + in->max_reply_len > in->reply_inline;
}

void rw_plan_call(const struct rw_call_in *in, struct rw_call_plan *out)
{
	uint64_t hdr;

	out->reply_chunk = need_reply_chunk(in);
	out->reply_chunk_len = out->reply_chunk ? in->max_reply_len : 0;

	hdr = call_hdr_len(in, 0, out->reply_chunk);
	if (hdr + in->payload_len <= in->call_inline) {
		out->kind = RW_SHORT;
		out->send_len = clamp32(hdr + in->payload_len);
		out->hdr_len = clamp32(hdr);
		return;
	}
	if (in->read_segs && in->reduced_len < in->payload_len) {
		hdr = call_hdr_len(in, in->read_segs, out->reply_chunk);
		if (hdr + in->reduced_len <= in->call_inline) {
			out->kind = RW_CHUNKED;
			out->send_len = clamp32(hdr + in->reduced_len);
			out->hdr_len = clamp32(hdr);
			return;
		}
	}
	/* Long Call: the (reduced) payload moves in a Position-Zero Read
	 * chunk, the reduced items keep their own Read chunks (V1-RP-4). */
	hdr = call_hdr_len(in, in->pzrc_segs + in->read_segs, out->reply_chunk);
	out->kind = RW_LONG;
	out->hdr_len = clamp32(hdr);
	out->send_len = clamp32(hdr);
}

enum rw_msg_kind rw_plan_reply(const struct rw_reply_in *in)
{
	struct rw_hdr_shape s = {
		.vers = in->vers,
		.write_chunks = in->write_chunks,
		.write_segs = in->write_segs,
	};

	if (shape_len(&s) + in->reduced_len <= in->reply_inline)
		return RW_SHORT;
	if (!in->reply_chunk || in->reduced_len > in->reply_chunk_len)
		return RW_NO_ROOM;
	/* The RDMA_NOMSG header, Write list and Reply chunk included, must
	 * itself fit the requester's Receive (V1-HDR-7). */
	s.reply_chunk = true;
	s.reply_segs = in->reply_chunk_segs;
	return shape_len(&s) <= in->reply_inline ? RW_LONG : RW_NO_ROOM;
}
