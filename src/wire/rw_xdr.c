/*
 * rw_xdr.c - what the reduction and reassembly streams share: the DDP
 * policy test, error names and classes, the body marker, and the RFC 8166
 * §3.4.5 reconstruction walk that validates Read-chunk positions.
 */
#include "rw_tape.h"
#include "rw_xdr_priv.h"

bool rw_ddp_designated(const struct rw_ddp_policy *pol, uint32_t ordinal)
{
	if (!pol)
		return true;
	switch (pol->mode) {
	case RW_DDP_ALL:
		return true;
	case RW_DDP_ITEMS:
		return ordinal < RW_DDP_MAX_ORDINAL &&
		       (pol->mask & RW_DDP_ITEM(ordinal));
	case RW_DDP_NONE:
	default:
		return false;
	}
}

static const char *const rw_xdr_err_names[RW_XERR_NR] = {
	[RW_XERR_OK] = "ok",
	[RW_XERR_NOSPACE] = "send buffer full",
	[RW_XERR_TOO_MANY] = "too many moved items",
	[RW_XERR_PAD] = "moved item not followed by its XDR pad",
	[RW_XERR_RANGE] = "offset does not fit in 32 bits",
	[RW_XERR_POS_ALIGN] = "Read chunk position not a multiple of 4",
	[RW_XERR_POS_ZERO] =
		"Read chunk at position 0 (PZRC) among item chunks",
	[RW_XERR_POS_ORDER] = "Read chunk positions decrease or overlap",
	[RW_XERR_POS_RANGE] = "Read chunk position beyond the payload",
	[RW_XERR_CHUNK_EMPTY] = "Read chunk of length 0",
	[RW_XERR_CHUNK_LEN] = "chunk length does not match the item length",
	[RW_XERR_CHUNK_SPLIT] = "read crosses a chunk boundary",
	[RW_XERR_CHUNK_TYPE] = "chunk item not read as opaque data",
	[RW_XERR_NOT_ELIGIBLE] = "chunk at an item that is not DDP-eligible",
	[RW_XERR_SHORT] = "payload ends before the message",
	[RW_XERR_UNUSED_CHUNK] = "chunk with data never consumed",
	[RW_XERR_TRAILING] = "payload octets after the message",
	[RW_XERR_SLOT_ORDER] = "result placed in a Write chunk out of order",
	[RW_XERR_BAD_ARG] = "bad argument or wrong stream",
};

const char *rw_xdr_err_str(enum rw_xdr_err e)
{
	if ((unsigned)e >= RW_XERR_NR)
		return "unknown";
	return rw_xdr_err_names[e];
}

enum rw_xdr_class rw_xdr_err_class(enum rw_xdr_err e)
{
	switch (e) {
	case RW_XERR_OK:
		return RW_XC_NONE;
	case RW_XERR_NOSPACE:
	case RW_XERR_TOO_MANY:
	case RW_XERR_PAD:
	case RW_XERR_RANGE:
	case RW_XERR_BAD_ARG:
		return RW_XC_LOCAL;
	case RW_XERR_POS_ALIGN:
	case RW_XERR_POS_ZERO:
	case RW_XERR_POS_ORDER:
	case RW_XERR_POS_RANGE:
	case RW_XERR_CHUNK_EMPTY:
		return RW_XC_ERR_CHUNK;
	default:
		return RW_XC_GARBAGE_ARGS;
	}
}

bool rw_xdr_begin_body(XDR *xdrs)
{
	return rw_rxdr_begin_body(xdrs) || rw_axdr_begin_body(xdrs) ||
	       rw_txdr_begin_body(xdrs);
}

enum rw_xdr_err rw_reasm_step(struct rw_reasm_walk *w, uint32_t pos,
			      uint64_t len, uint32_t *need)
{
	uint64_t gap;

	if (pos & 3u)
		return RW_XERR_POS_ALIGN;
	if (pos == 0)
		return RW_XERR_POS_ZERO;
	if (pos < w->out_off)
		return RW_XERR_POS_ORDER;
	if (len == 0)
		return RW_XERR_CHUNK_EMPTY;
	gap = pos - w->out_off;
	if (gap > w->plen - w->in_off)
		return RW_XERR_POS_RANGE;
	/* chunk plus its pad; positions are 32-bit on the wire */
	if ((uint64_t)pos + len + 3 > UINT32_MAX)
		return RW_XERR_RANGE;
	*need = (uint32_t)gap;
	w->in_off += (uint32_t)gap;
	w->out_off = ((uint64_t)pos + len + 3) & ~(uint64_t)3;
	return RW_XERR_OK;
}

enum rw_xdr_err rw_reasm_total(const struct rw_reasm_walk *w, uint32_t *ulen)
{
	uint64_t total = w->out_off + (w->plen - w->in_off);

	if (total > UINT32_MAX)
		return RW_XERR_RANGE;
	*ulen = (uint32_t)total;
	return RW_XERR_OK;
}
