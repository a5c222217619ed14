/*
 * rw_xdr.h - reduction and reassembly: XDR streams that move DDP-eligible
 * data items out of an RPC message and put them back (RFC 8166 §3.4, §3.4.5).
 *
 * Two stream types, both ordinary libtirpc XDR handles, so any rpcgen
 * xdrproc_t and libtirpc's own header/auth routines run on them unchanged:
 *
 *   struct rw_rxdr  reducing encoder.  Encodes a Call or Reply into one
 *                   contiguous send buffer and cuts designated items out of
 *                   it, recording (position, pointer, length) for each.  The
 *                   item's bytes are never copied: the caller registers the
 *                   memory it passed to the XDR routine.
 *   struct rw_axdr  reassembling decoder.  Decodes from the inline (reduced)
 *                   payload plus chunk data as if it were the unreduced
 *                   stream: Read chunks by position (responder), or Write
 *                   chunks by item order (requester).
 *
 * What a "data item" is.  A data item is a run of octets that the XDR
 * routines hand to x_putbytes / x_getbytes starting on a 4-octet boundary of
 * the unreduced stream after rw_xdr_begin_body(): the bytes of an opaque<>,
 * string<> or opaque[N].  Never its length word (V1-CH-3), never its pad
 * (which always starts unaligned).  Items are numbered 0, 1, ... in body
 * order; that ordinal is what a policy designates.  libtirpc's xdr_opaque()
 * never calls the stream for zero octets, so empty items are not counted -
 * identically on both sides, so ordinals still agree between peers.  The
 * RPC header and credentials precede rw_xdr_begin_body() and are never
 * candidates (V1-GSS-2).
 *
 * Hot path: no heap, no locks; every length and position from the peer is
 * range-checked before use, and a stream that failed stays failed (sticky
 * error) so a confused xdrproc cannot continue on bad state.
 *
 * Nothing here knows the transport header: chunks are plain descriptors.
 */
#ifndef RW_XDR_H
#define RW_XDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rpc/types.h>
#include <rpc/xdr.h>

/* ---------------------------------------------------------------------- */
/* Policy: which body items are DDP-eligible (filled from a ULB table).    */

enum rw_ddp_mode {
	RW_DDP_NONE = 0, /* reduce nothing: no ULB, or RPCSEC_GSS
				 * integrity/privacy (V1-GSS-3) */
	RW_DDP_ITEMS,	 /* the body items whose bits are set in mask */
	RW_DDP_ALL,	 /* every body item (tests, single-item ULBs) */
	RW_DDP_PICK,	 /* the items pick() designates, by position */
};

/* Ordinals 0..63 can be designated in RW_DDP_ITEMS mode. */
#define RW_DDP_MAX_ORDINAL 64u
#define RW_DDP_ITEM(k)	   ((uint64_t)1 << (k))

/*
 * The body as far as a stream has encoded or decoded it, for a designator
 * that must parse what precedes an item (an NFSv4 COMPOUND, where the
 * place of WRITE4args.data depends on every operation before it).
 * word(v, off, &w) reads the big-endian word at body offset off of the
 * unreduced stream (off 0 = the first octet after rw_xdr_begin_body()).
 * It fails beyond what the stream has seen and inside chunk data, which a
 * parser never needs: it skips opaque data by its length word.
 */
struct rw_ddp_view {
	bool (*word)(const struct rw_ddp_view *v, uint32_t off, uint32_t *w);
	const void *s;
};

/*
 * RW_DDP_PICK: is the item whose data starts at body offset off (len
 * octets) DDP-eligible, and which chunk slot does it take?  >= 0: its
 * slot, the Write chunk a result goes into (the ULB's mapping, V1-WC-3,
 * RFC 8267 section 6.4; ignored for arguments, whose Read chunks carry
 * their position); < 0: not eligible.  Slots ascend with the items (the
 * encoder fails a message whose slots do not: RW_XERR_SLOT_ORDER).
 * Called with the view of everything before the item; it must not assume
 * it is called for every item.
 */
typedef int (*rw_ddp_pick_fn)(const struct rw_ddp_view *v, uint32_t off,
			      uint32_t len);

struct rw_ddp_policy {
	enum rw_ddp_mode mode;
	rw_ddp_pick_fn pick; /* RW_DDP_PICK */
	uint64_t mask;	     /* RW_DDP_ITEMS: bit k designates item k */
	uint32_t min_len;    /* encode only: shorter items stay inline.  A
				 * responder filling Write chunks uses 0: it
				 * must place every eligible result (V1-WC-2,
				 * V1-DDP-3) */
	uint32_t max_chunks; /* encode only: move at most this many
				 * (RW_DDP_PICK: only slots below it), the
				 * rest stay inline (Write chunks offered,
				 * V1-WC-3); 0 = no limit */
};

/* True if the policy designates body item 'ordinal' (NULL = all). */
bool rw_ddp_designated(const struct rw_ddp_policy *pol, uint32_t ordinal);

/* ---------------------------------------------------------------------- */
/* Errors                                                                  */

enum rw_xdr_err {
	RW_XERR_OK = 0,
	/* encoding */
	RW_XERR_NOSPACE,  /* send buffer full */
	RW_XERR_TOO_MANY, /* more moved items than the item array holds */
	RW_XERR_PAD,	  /* a moved item was not followed by its pad */
	RW_XERR_RANGE,	  /* an offset would not fit in 32 bits */
	/* chunk descriptors, found before decoding starts */
	RW_XERR_POS_ALIGN,   /* position not a multiple of 4 (V1-RC-2) */
	RW_XERR_POS_ZERO,    /* position 0 is a PZRC, not an item
				 * (AMB-V1-10): the caller strips it */
	RW_XERR_POS_ORDER,   /* positions decrease, repeat, or fall inside
				 * the previous chunk (AMB-V1-6) */
	RW_XERR_POS_RANGE,   /* position beyond the payload */
	RW_XERR_CHUNK_EMPTY, /* Read chunk of length 0 */
	/* found while decoding */
	RW_XERR_CHUNK_LEN,    /* Read chunk length not L or roundup4(L)
				 * (AMB-V1-12, V1-CH-11); Write chunk length
				 * outside [L, roundup4(L)] (V1-WC-10, N-16) */
	RW_XERR_CHUNK_SPLIT,  /* a read crosses a chunk boundary: position
				 * and payload disagree */
	RW_XERR_CHUNK_TYPE,   /* the item at a chunk position is not read
				 * as opaque data */
	RW_XERR_NOT_ELIGIBLE, /* chunk at an item the policy does not
				 * designate, or inside the RPC header
				 * (V1-DDP-1, V1-GSS-2) */
	RW_XERR_SHORT,	      /* payload ends before the message does */
	RW_XERR_UNUSED_CHUNK, /* finish: a chunk carrying data was never
				 * consumed (V1-DDP-1/2) */
	RW_XERR_TRAILING,     /* finish: payload octets after the message */
	RW_XERR_SLOT_ORDER,   /* a result designated for a Write chunk
				 * before one already used (RW_DDP_PICK) */
	RW_XERR_BAD_ARG,      /* bad create argument or wrong stream */
	RW_XERR_NR
};

/*
 * What the receiving side does about an error (AMB-V1-15).  A requester
 * never sends RDMA_ERROR (V1-PROC-8): for it, both wire classes mean "fail
 * this RPC permanently" (V1-DDP-2/3).
 */
enum rw_xdr_class {
	RW_XC_NONE = 0,
	RW_XC_LOCAL,	    /* sender side: cannot build the message */
	RW_XC_ERR_CHUNK,    /* responder: descriptors refused before the
				 * ULP runs -> RDMA_ERROR/ERR_CHUNK */
	RW_XC_GARBAGE_ARGS, /* responder: ULP decode failed ->
				 * GARBAGE_ARGS (V1-ERR-8) */
};

const char *rw_xdr_err_str(enum rw_xdr_err e);
enum rw_xdr_class rw_xdr_err_class(enum rw_xdr_err e);

/*
 * Mark the start of the arguments or results on either stream type: call it
 * after the RPC header and AUTH_MARSHALL / xdr_replymsg, right before
 * AUTH_WRAP / SVCAUTH_UNWRAP (or the xdrproc).  Returns false for a stream
 * that is not an rw_rxdr or rw_axdr.
 */
bool rw_xdr_begin_body(XDR *xdrs);

/* ---------------------------------------------------------------------- */
/* Reducing encoder                                                        */

/* One moved item: everything a Read chunk or Write-chunk write needs. */
struct rw_ddp_item {
	uint32_t position; /* offset in the unreduced payload stream,
				 * multiple of 4 (V1-RC-1/2, AMB-V1-5) */
	uint32_t len;	   /* data octets, no XDR pad (V1-RC-5/7,
				 * V1-WC-9/10) */
	uint32_t ordinal;  /* body item number */
	uint32_t slot;	   /* the Write chunk a result goes into: its
				 * rank among the moved items, or what the
				 * policy's pick() said (RW_DDP_PICK) */
	uint32_t cut;	   /* offset in the reduced payload where it was
				 * cut out (informational) */
	const void *data;  /* the caller's memory, not copied */
};

/* Private state; read it through the accessors below. */
struct rw_rxdr {
	XDR xdr; /* pass &r->xdr to xdrprocs */
	uint8_t *buf;
	uint32_t cap;
	uint32_t pos;	  /* reduced offset (x_getpostn) */
	uint32_t end;	  /* high-water mark: reduced length */
	uint32_t moved;	  /* octets cut out, pads included */
	uint32_t cut;	  /* reduced offset of the last cut */
	uint32_t pad;	  /* pad octets owed by the last moved item */
	uint32_t ordinal; /* body items seen */
	uint32_t nitems;
	uint32_t max_items;
	struct rw_ddp_item *items;
	struct rw_ddp_policy pol;
	bool body;
	uint32_t body_upos; /* unreduced offset of the body */
	enum rw_xdr_err err;
};

/*
 * Set up r to encode into buf[0..cap) (cap is clamped to UINT32_MAX) and to
 * record moved items in items[0..max_items).  pol NULL or RW_DDP_NONE gives
 * a plain encoder (no reduction), so callers always use one stream type.
 * The stream allocates nothing; r->xdr needs no XDR_DESTROY (harmless).
 *
 * Stream semantics, as seen by XDR routines:
 *  - x_getpostn returns the offset in the reduced buffer (what was really
 *    written), not the unreduced position.
 *  - x_setpostn(p) accepts any p <= cap that does not precede the last cut
 *    (no moved item may end up after the write position), like xdrmem.
 *  - x_inline returns buffer memory when the run fits and is 4-aligned in
 *    memory, else NULL so rpcgen falls back to x_putlong.
 *  - x_putbytes of a designated item records it instead of copying it and
 *    swallows the pad put right after it (V1-CH-7); any other put next is
 *    an error (RW_XERR_PAD).
 * Every failure returns FALSE and leaves the stream failed; nothing is ever
 * written outside buf[0..cap).
 */
bool rw_rxdr_create(struct rw_rxdr *r, void *buf, size_t cap,
		    const struct rw_ddp_policy *pol, struct rw_ddp_item *items,
		    unsigned max_items);

/* Octets of the reduced payload: what goes inline (or into a PZRC). */
static inline uint32_t rw_rxdr_reduced_len(const struct rw_rxdr *r)
{
	return r->end;
}

/* Octets of the unreduced payload: what the receiver rebuilds. */
static inline uint32_t rw_rxdr_unreduced_len(const struct rw_rxdr *r)
{
	return r->end + r->moved;
}

static inline unsigned rw_rxdr_nitems(const struct rw_rxdr *r)
{
	return r->nitems;
}

/* Body items seen so far (moved or not). */
static inline uint32_t rw_rxdr_ordinals(const struct rw_rxdr *r)
{
	return r->ordinal;
}

static inline enum rw_xdr_err rw_rxdr_error(const struct rw_rxdr *r)
{
	return r->err;
}

/*
 * Call once the message is encoded: RW_XERR_OK, the sticky error, or
 * RW_XERR_PAD if the last moved item still owes its pad.
 */
enum rw_xdr_err rw_rxdr_finish(struct rw_rxdr *r);

/* Unreduced offset where rw_xdr_begin_body() was called (0 if never). */
static inline uint32_t rw_rxdr_body_pos(const struct rw_rxdr *r)
{
	return r->body_upos;
}

/*
 * Read the big-endian word at unreduced offset upos of a finished stream,
 * from the reduced buffer or from a moved item's memory, as the receiver
 * will see it (a ULB size taken from an argument, rpcrdma_ulb_sizes).
 * False if the word is not entirely inside the message.
 */
bool rw_rxdr_peek_word(const struct rw_rxdr *r, uint32_t upos, uint32_t *w);

/*
 * Rebuild the unreduced payload from a reduced one and its items (for a
 * sender that decides to go Short after all, and for tests).  Returns the
 * octets written to out, or 0 with *err set.
 */
uint32_t rw_ddp_unreduce(const void *reduced, uint32_t rlen,
			 const struct rw_ddp_item *items, unsigned nitems,
			 void *out, size_t cap, enum rw_xdr_err *err);

/* ---------------------------------------------------------------------- */
/* Reassembling decoder                                                    */

/* A piece of chunk data already in local memory (one segment). */
struct rw_ddp_seg {
	const void *data;
	uint32_t len;
};

/*
 * A chunk: its segments concatenated in order (V1-RC-4, V1-WC-11).  For a
 * Read chunk, position is the unreduced offset; Write chunks ignore it and
 * carry the returned lengths.
 */
struct rw_ddp_chunk {
	uint32_t position;
	uint32_t nsegs;
	const struct rw_ddp_seg *segs;
};

enum rw_axdr_mode {
	/* Responder receiving a Call: Read chunks by position (RFC 8166 §3.4.5
	 * reconstruction).  Positions ascend strictly, are multiples of 4,
	 * non-zero and inside the stream; the pad of a chunk sent without
	 * it is supplied as zeros (V1-RC-8); a chunk of L or roundup4(L)
	 * octets is accepted for an item of L octets (AMB-V1-12). */
	RW_AXDR_READ,
	/* Requester receiving a Reply: the k-th designated result item
	 * comes from Write chunk k (V1-WC-3/11), whose returned length must
	 * be in [L, roundup4(L)]; exactly L octets are used, and the item's
	 * pad is never taken from the payload (V1-TV10).  Items
	 * past the last chunk are inline. */
	RW_AXDR_WRITE,
};

/* Insertions an RW_DDP_PICK view can see past: every Read or Write chunk
 * a header can carry (rw_hdr.h), with room to spare. */
#define RW_AXDR_MAX_INS 16u

/* Private state; read it through the accessors below. */
struct rw_axdr {
	XDR xdr; /* pass &a->xdr to xdrprocs */
	enum rw_axdr_mode mode;
	const uint8_t *pay;
	uint32_t plen;
	uint32_t poff; /* payload octets consumed */
	uint32_t upos; /* unreduced offset (x_getpostn) */
	uint32_t ulen; /* READ: unreduced length, known up front */
	const struct rw_ddp_chunk *chunks;
	uint32_t nchunks;
	uint32_t next; /* next chunk to insert */
	/* the insertion being read: chunk octets, then zero pad */
	const struct rw_ddp_seg *seg;
	uint32_t seg_off;
	uint32_t ins_left;
	uint32_t pad_left;
	uint32_t ordinal;
	struct rw_ddp_policy pol;
	bool body;
	uint32_t body_upos; /* unreduced offset of the body */
	/* where chunk data was inserted, for the RW_DDP_PICK view */
	uint32_t nins;
	struct {
		uint32_t upos, len;
	} ins[RW_AXDR_MAX_INS];
	enum rw_xdr_err err;
	/* counters */
	uint32_t copies;       /* item reads served by memcpy */
	uint32_t zero_copies;  /* item reads whose destination already was
				 * the chunk memory: no copy made */
	uint64_t bytes_copied; /* chunk octets copied */
};

/*
 * Set up a to decode payload[0..len) plus chunks[0..nchunks).  The
 * descriptors are validated here (READ: the RFC 8166 §3.4.5 walk, every
 * position checked; WRITE: length sums); on failure returns false and
 * rw_axdr_error() says why (class RW_XC_ERR_CHUNK).  pol designates the
 * eligible items: READ refuses a chunk at any other item (V1-DDP-1), WRITE
 * feeds only those from Write chunks; NULL means "every body item".
 * Nothing is copied; payload and chunk memory must stay valid while a is
 * used.
 *
 * Stream semantics: x_getpostn is the unreduced offset; x_setpostn only
 * accepts the current offset; x_inline returns payload memory when the run
 * is inside the payload, before the next chunk and 4-aligned in memory,
 * else NULL; chunk data is read only with x_getbytes.  When the
 * destination of an item read is the chunk memory itself (e.g. a result
 * buffer registered as the Write chunk), no copy is made.
 */
bool rw_axdr_create(struct rw_axdr *a, const void *payload, size_t len,
		    enum rw_axdr_mode mode, const struct rw_ddp_chunk *chunks,
		    unsigned nchunks, const struct rw_ddp_policy *pol);

/*
 * The next len octets of the stream as they are in the payload, without
 * consuming them: what XDR_INLINE would give (inside the payload, short of
 * the next chunk, 4-aligned), else NULL.
 */
const uint8_t *rw_axdr_peek(const struct rw_axdr *a, u_int len);

/*
 * Call after the last xdrproc: RW_XERR_OK, the sticky error, or what is
 * left over - a chunk carrying data never consumed (RW_XERR_UNUSED_CHUNK),
 * payload octets after the message (RW_XERR_TRAILING).
 */
enum rw_xdr_err rw_axdr_finish(struct rw_axdr *a);

static inline enum rw_xdr_err rw_axdr_error(const struct rw_axdr *a)
{
	return a->err;
}

/*
 * Replace the policy of a: allowed until rw_xdr_begin_body() (a responder
 * learns which procedure a Call is for, hence its ULB entry, only from the
 * RPC header it decodes first).  False, changing nothing, once the body has
 * begun.
 */
bool rw_axdr_set_policy(struct rw_axdr *a, const struct rw_ddp_policy *pol);

/* Payload octets not read yet. */
static inline uint32_t rw_axdr_unread(const struct rw_axdr *a)
{
	return a->plen - a->poff;
}

/*
 * The payload was copied, all of it, to payload (its old memory is about
 * to be reused): a reads it there from now on, at the same offset.  All
 * of it, not only what is unread: a designator's view looks back at the
 * body read so far.
 */
static inline void rw_axdr_move(struct rw_axdr *a, const void *payload)
{
	a->pay = payload;
}

/* The payload is gone and was not copied: every later read fails
 * (RW_XERR_SHORT, unless a has failed already). */
static inline void rw_axdr_lose(struct rw_axdr *a)
{
	if (a->err == RW_XERR_OK)
		a->err = RW_XERR_SHORT;
}

/* Chunks consumed so far. */
static inline uint32_t rw_axdr_chunks_used(const struct rw_axdr *a)
{
	return a->next;
}

static inline uint32_t rw_axdr_copies(const struct rw_axdr *a)
{
	return a->copies;
}

static inline uint32_t rw_axdr_zero_copies(const struct rw_axdr *a)
{
	return a->zero_copies;
}

static inline uint64_t rw_axdr_bytes_copied(const struct rw_axdr *a)
{
	return a->bytes_copied;
}

/*
 * READ mode as one buffer: rebuild the unreduced payload from the reduced
 * payload and Read chunks (the RFC 8166 §3.4.5 walk, pad supplied, same checks
 * as rw_axdr_create).  Returns the octets written, or 0 with *err set.
 * With out == NULL it only validates and returns the length needed.
 */
uint32_t rw_ddp_flatten(const void *payload, size_t len,
			const struct rw_ddp_chunk *chunks, unsigned nchunks,
			void *out, size_t cap, enum rw_xdr_err *err);

/* ---------------------------------------------------------------------- */
/* Probe: where the caller's buffers are                                   */

/*
 * Before a call is sent, the requester looks for result buffers the caller
 * already supplied (an xdr_bytes/xdr_string target that is not NULL), so a
 * Write chunk can point straight at one (zero copy).  The probe runs the
 * results' xdrproc in XDR_ENCODE over the caller's current results
 * structure: nothing is written anywhere, every put succeeds, and the
 * pointer and length of each designated body item (counted as rw_rxdr
 * counts them, the body starting at once) are recorded, except NULL
 * targets (decode allocates those), which still count.  It stops (the
 * xdrproc fails, harmlessly) once max designated items were seen.  Encoding reads the
 * structure only; it must be initialized, as decoding into it requires.
 */
struct rw_probe_item {
	uint32_t ordinal;
	uint32_t index; /* among the designated items: the Write
				 * chunk it would get (V1-WC-3) */
	uint32_t len;	/* the caller's length field: its capacity */
	void *data;
};

struct rw_pxdr {
	XDR xdr;
	uint64_t upos;
	uint32_t ordinal;
	uint32_t designated; /* designated items seen, NULL ones too */
	uint32_t n;
	uint32_t max;
	struct rw_probe_item *items;
	struct rw_ddp_policy pol;
};

void rw_pxdr_create(struct rw_pxdr *p, const struct rw_ddp_policy *pol,
		    struct rw_probe_item *items, unsigned max);

static inline unsigned rw_pxdr_found(const struct rw_pxdr *p)
{
	return p->n;
}

#endif /* RW_XDR_H */
