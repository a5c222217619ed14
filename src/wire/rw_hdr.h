/*
 * rw_hdr.h - RPC-over-RDMA transport header: types, codec, reasons.
 *
 * The wire layer (prefix rw_) turns transport headers into structs and back.
 * It knows nothing about verbs: a segment is three numbers, a chunk is an
 * array of segments.  Decoding never allocates: chunk lists land in arrays the
 * caller provides (struct rw_hdr_space), bounded by struct rw_limits, and
 * every count, length and position read from the wire is range-checked before
 * it is used.  A header that cannot be decoded yields an rw_reason naming the
 * exact problem; rw_reason_action() (rw_role.h) says what the receiving role
 * must do about it (RFC 8166 §4.5, v2-05 §7.2.4).
 *
 * This file is the role-agnostic codec.  Structural rules that depend on
 * whether a header is a Call or a Reply live in rw_chunk.h, and the
 * role-aware entry points a transport should use live in rw_role.h.
 *
 * Byte layout: RFC 8166 §4.2-4.3 (v1) and v2-05 §7.2 (v2).
 */
#ifndef RW_HDR_H
#define RW_HDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RW_VERS_1 1u
#define RW_VERS_2 2u

/* rdma_proc values; 0, 1 and 4 are fixed for all versions (V1-EXT-2). */
enum rw_proc {
	RW_MSG = 0,
	RW_NOMSG = 1,
	RW_MSGP = 2, /* v1 only, never sent (V1-PROC-4) */
	RW_DONE = 3, /* v1 only, never sent (V1-PROC-6) */
	RW_ERROR = 4,
	RW2_OPTIONAL = 5, /* v2 only from here on */
	RW2_CONNPROP = 6,
	RW2_REQPROP = 7,
	RW2_RESPROP = 8,
	RW2_UPDPROP = 9,
};

/* rdma_err values: v1 uses 1 and 2 (ERR_VERS, ERR_CHUNK), v2 all of them. */
enum rw_err {
	RW_ERR_VERS = 1,
	RW_ERR_CHUNK = 2, /* RDMA2_ERR_BAD_XDR in v2 */
	RW2_ERR_BAD_XDR = 2,
	RW2_ERR_INVAL_PROC = 3,
	RW2_ERR_READ_CHUNKS = 4,
	RW2_ERR_WRITE_CHUNKS = 5,
	RW2_ERR_SEGMENTS = 6,
	RW2_ERR_WRITE_RESOURCE = 7,
	RW2_ERR_REPLY_RESOURCE = 8,
	RW2_ERR_INVAL_OPTION = 9,
	RW2_ERR_SYSTEM = 10,
};

/* msg_type values carried by v2's rdma_direction / rdma_optdir. */
#define RW_DIR_CALL  0u
#define RW_DIR_REPLY 1u

/* v2 basic properties (v2-05 §6.2). */
#define RW2_PROP_RBSIZ	  1u
#define RW2_PROP_BRS	  2u
#define RW2_RBSIZ_DEFAULT 4096u
#define RW2_BRS_NONE	  0u
#define RW2_BRS_INLINE	  1u
#define RW2_BRS_GENL	  2u

/* Fixed sizes in octets (RFC 8166 §4.2-4.3, v2-05 §7.2). */
#define RW_FIXED_LEN	 16u /* xid, vers, credit, proc */
#define RW_V1_MIN_LEN	 28u /* MSG/NOMSG, no chunks */
#define RW_V2_MIN_LEN	 36u
#define RW_ERR_CHUNK_LEN 20u
#define RW_ERR_VERS_LEN	 28u
#define RW_SEG_LEN	 16u /* handle, length, offset (HLOO) */
#define RW_READ_SEG_LEN	 20u /* position + HLOO (PHLOO) */

/*
 * Compile-time ceilings of the decode arrays.  Runtime limits (struct
 * rw_limits) may only lower them.  A Read list holds at most one PZRC plus
 * RW_MAX_READ_CHUNKS other chunks, each of at most RW_MAX_CHUNK_SEGS.
 */
#ifndef RW_MAX_READ_CHUNKS
#define RW_MAX_READ_CHUNKS 8
#endif
#ifndef RW_MAX_WRITE_CHUNKS
#define RW_MAX_WRITE_CHUNKS 8
#endif
#ifndef RW_MAX_CHUNK_SEGS
#define RW_MAX_CHUNK_SEGS 16
#endif
#ifndef RW_MAX_PROPS
#define RW_MAX_PROPS 16
#endif
#define RW_MAX_READ_SEGS    ((RW_MAX_READ_CHUNKS + 1) * RW_MAX_CHUNK_SEGS)
#define RW_MAX_SUBSET_WORDS 8 /* 256 propset positions */

/* One RDMA segment: a registered memory handle, a length and an offset. */
struct rw_segment {
	uint32_t handle;
	uint32_t length;
	uint64_t offset;
};

/* One Read-list entry.  Entries with equal positions form one Read chunk. */
struct rw_read_seg {
	uint32_t position;
	struct rw_segment seg;
};

/* A Write chunk or the Reply chunk: a counted array of segments. */
struct rw_chunk {
	uint32_t nsegs;
	struct rw_segment *segs;
};

/*
 * What a receiver accepts.  Anything beyond the limits is refused with a
 * precise reason (RW_R_TOO_MANY_*) before it is stored.  vers_low..vers_high
 * is also the range an ERR_VERS reply advertises (V1-ERR-6).
 */
struct rw_limits {
	uint32_t vers_low, vers_high; /* accepted rdma_vers, within 1..2 */
	uint32_t max_read_chunks;     /* Read chunks other than the PZRC
					 * (AMB-V2-8) */
	uint32_t max_write_chunks;    /* Write-list chunks */
	uint32_t max_chunk_segs;      /* segments in any one chunk */
	uint32_t max_props;	      /* v2 propset entries */
};

#define RW_DEFAULT_MAX_READ_CHUNKS  8
#define RW_DEFAULT_MAX_WRITE_CHUNKS 8
#define RW_DEFAULT_MAX_CHUNK_SEGS   16
#define RW_DEFAULT_MAX_PROPS	    16

/* v1 only, the defaults above. */
extern const struct rw_limits rw_default_limits;
/* The same limits, versions 1 and 2. */
extern const struct rw_limits rw_v2_limits;

/* v2 transport property (propval): id and a view of its opaque data. */
struct rw_prop {
	uint32_t id;
	uint32_t len;
	const uint8_t *data; /* decode: points into the received buffer */
};

/* v2 propset: count and an array (caller's, or rw_hdr_space's). */
struct rw_propset {
	uint32_t n;
	struct rw_prop *props;
};

/* v2 propsubset (bitmap), host-order words; bit N is word N/32, mask
 * 1 << N%32 (LSB first, AMB-V2-7). */
struct rw_subset {
	uint32_t nwords;
	uint32_t words[RW_MAX_SUBSET_WORDS];
};

/*
 * A decoded or to-be-encoded transport header.  Which members are meaningful
 * depends on vers and proc: the chunk-list members for MSG and NOMSG, err
 * for ERROR, opt for OPTIONAL, props/subset1/subset2 for the v2 property
 * messages.  Members of other shapes are left untouched by the decoder -
 * except the list counts (nreads, nwrites, has_reply), which it always
 * clears, so no code that walks lists walks an earlier header's - and
 * ignored by the encoder and by rw_hdr_equal().
 */
struct rw_hdr {
	uint32_t xid;
	uint32_t vers;
	uint32_t credit;
	uint32_t proc;

	/* v2 MSG/NOMSG only */
	uint32_t direction;
	uint32_t inv_handle;

	/* MSG/NOMSG: chunk lists */
	uint32_t nreads;
	struct rw_read_seg *reads;
	uint32_t nwrites;
	struct rw_chunk *writes;
	bool has_reply;
	struct rw_chunk reply;

	/* ERROR */
	struct {
		uint32_t code;		/* enum rw_err, or unknown code */
		uint32_t low, high;	/* ERR_VERS */
		uint32_t max;		/* READ/WRITE_CHUNKS, SEGMENTS */
		uint32_t chunk_index;	/* WRITE_RESOURCE, 1-based (0: ?) */
		uint32_t length_needed; /* WRITE_RESOURCE, REPLY_RESOURCE */
	} err;

	/* v2 OPTIONAL */
	struct {
		uint32_t dir;
		uint32_t type;
		uint32_t len;
		const uint8_t *info; /* decode: points into the buffer */
	} opt;

	/* v2 property messages: CONNPROP start/nochg, REQPROP want,
	 * RESPROP done/rejected/other, UPDPROP now. */
	struct rw_propset props;  /* start, want, other or now */
	struct rw_subset subset1; /* nochg or done */
	struct rw_subset subset2; /* rejected */

	/* Decode only: octets of the transport header; for MSG (and
	 * OPTIONAL) the payload stream starts here. */
	uint32_t hdr_len;
};

/*
 * Caller-owned storage for a decoded header's arrays and the limits it is
 * decoded against.  rw_hdr_decode() points the arrays of an rw_hdr at it;
 * nothing is allocated.  About 6 KiB with the default ceilings.
 */
struct rw_hdr_space {
	struct rw_limits lim;
	struct rw_read_seg reads[RW_MAX_READ_SEGS];
	struct rw_chunk writes[RW_MAX_WRITE_CHUNKS];
	struct rw_segment write_segs[RW_MAX_WRITE_CHUNKS][RW_MAX_CHUNK_SEGS];
	struct rw_segment reply_segs[RW_MAX_CHUNK_SEGS];
	struct rw_prop props[RW_MAX_PROPS];
};

/*
 * Why a received header was refused.  RW_R_OK means it decoded (and, from
 * the validators, passed the structural checks).  rw_reason_action() maps
 * each reason to one action per role.
 */
enum rw_reason {
	RW_R_OK = 0,

	/* rw_hdr_decode() */
	RW_R_RUNT,	      /* < 16 octets, MSG/NOMSG < 28 (v2: 36),
				 * ERROR < 20 (V1-ERR-2, AMB-V1-7): the XID
				 * cannot be trusted */
	RW_R_BAD_VERS,	      /* rdma_vers not accepted (V1-ERR-6) */
	RW_R_BAD_PROC,	      /* proc unknown for this version (V1-ERR-7,
				 * V2-ERR-4) */
	RW_R_DEPRECATED_PROC, /* v1 MSGP or DONE (V1-PROC-5/7) */
	RW_R_TRUNCATED,	      /* a list or body runs past the message, or a
				 * count could never fit in it */
	RW_R_BAD_BOOL,	      /* optional-data discriminator not 0 or 1 */
	RW_R_BAD_DIRECTION,   /* v2 direction/optdir not CALL or REPLY */
	RW_R_TOO_MANY_READS,  /* over max_read_chunks (V2-ERR-7) */
	RW_R_TOO_MANY_WRITES, /* over max_write_chunks (V2-ERR-9) */
	RW_R_TOO_MANY_SEGS,   /* a chunk over max_chunk_segs (V2-ERR-11) */
	RW_R_TOO_MANY_PROPS,  /* over max_props or RW_MAX_SUBSET_WORDS */
	RW_R_BAD_PROP,	      /* known propid, invalid data (V2-PROP-2) */
	RW_R_BAD_ERROR,	      /* RDMA_ERROR whose body is cut short, or a
				 * non-ERR_VERS error of a version we do not
				 * speak (V1-ERR-10) */
	RW_R_UNKNOWN_ERROR,   /* RDMA_ERROR, unknown code (AMB-V2-10) */

	/* rw_validate_call(), rw_check_payload() */
	RW_R_BAD_POSITION,	/* Read position not a multiple of 4
				 * (V1-RC-2) */
	RW_R_POSITION_ORDER,	/* Read positions decrease (AMB-V1-6) */
	RW_R_READ_OVERLAP,	/* a Read chunk starts inside the previous
				 * one in the unreduced stream (AMB-V1-5) */
	RW_R_CHUNK_OVERFLOW,	/* chunk length or end beyond 32 bits */
	RW_R_EMPTY_CHUNK,	/* Write/Reply chunk without segments
				 * (AMB-V1-11) */
	RW_R_NOMSG_NO_CHUNK,	/* NOMSG, all lists empty (V1-PROC-2) */
	RW_R_MISPLACED_PZRC,	/* MSG Call with a position-0 chunk, NOMSG
				 * Call without one (AMB-V1-10) */
	RW_R_NO_PAYLOAD,	/* MSG without room for an RPC XID and type */
	RW_R_XID_MISMATCH,	/* rdma_xid != RPC XID (V1-HDR-2) */
	RW_R_DIR_MISMATCH,	/* v2 direction is not the msg_type or does
				 * not fit the role (V2-DIR-2) */
	RW_R_BAD_INV_HANDLE,	/* v2 inv_handle names no handle of the
				 * header (AMB-V2-14) */
	RW_R_BAD_OPTION,	/* OPTIONAL, unsupported opttype (V2-OPT-1) */
	RW_R_PROPS_UNSUPPORTED, /* property messages not done (V2-OPS-1) */
	RW_R_ERROR_RECEIVED,	/* RDMA_ERROR at a responder (V1-PROC-9) */
	RW_R_UNEXPECTED_PROC,	/* proc that cannot travel this direction */

	/* rw_validate_reply() */
	RW_R_READS_IN_REPLY,	   /* Read list in a Reply (V1-RC-9) */
	RW_R_NOMSG_NO_REPLY_CHUNK, /* NOMSG Reply without a Reply chunk */
	RW_R_WRITE_MISMATCH,	   /* Write list not an echo of the Call's
				 * (V1-WC-5, AMB-V1-4) */
	RW_R_WRITE_OVERRUN,	   /* returned length > provisioned */
	RW_R_REPLY_CHUNK_MISMATCH, /* not the Call's, or used in a MSG */
	RW_R_VERS_MISMATCH,	   /* Reply in another version than the Call */

	/* rw_write_result_check(), rw_read_chunk_check() */
	RW_R_DDP_LENGTH, /* chunk length is neither L nor roundup4(L)
				 * (AMB-V1-12, N-16) */
	RW_R_NR_REASONS
};

const char *rw_reason_str(enum rw_reason why);

/* Name of an rdma_err code ("ERR_CHUNK" in v1, "BAD_XDR" in v2, ...). */
const char *rw_err_str(uint32_t vers, uint32_t code);

/* Point sp's limits at lim (NULL: rw_default_limits), clamped to the
 * compile-time ceilings and to versions 1..2. */
void rw_hdr_space_init(struct rw_hdr_space *sp, const struct rw_limits *lim);

/*
 * Decode a transport header from buf[0..len) against sp->lim, with the
 * version dispatch of AMB-X-4: words 0-3 first; an RDMA_ERROR/ERR_VERS is
 * decoded with its fixed layout whatever rdma_vers says (V1-EXT-2,
 * AMB-V1-1); otherwise rdma_vers selects the v1 or v2 parser and only then
 * is rdma_proc interpreted.  Arrays are taken from sp, views (opt.info,
 * props[].data) point into buf.  Returns RW_R_OK or why the header is
 * refused; h->xid, vers, credit and proc are valid whenever len >= 16 (and
 * h->err.code for an RDMA_ERROR of 20 octets or more), all 0 below that.
 * Never reads past buf + len.  Trailing octets (the payload of MSG) are
 * not examined.
 */
enum rw_reason rw_hdr_decode(const void *buf, size_t len, struct rw_hdr *h,
			     struct rw_hdr_space *sp);

/* Octets rw_hdr_encode() will write for h, or 0 if it refuses h. */
size_t rw_hdr_encoded_len(const struct rw_hdr *h);

/*
 * Encode h into buf[0..cap).  Returns the octets written, or 0 if cap is too
 * small or h is not a header this codec may send: MSGP and DONE (V1-PROC-4,
 * V1-PROC-6), a proc or error code the version does not define, a v2
 * direction other than CALL/REPLY, arrays over the compile-time ceilings.
 * Any version may carry an ERR_VERS (the reply to an unknown version echoes
 * it, V1-ERR-5).  This is the raw codec: role rules are rw_role.h's job.
 */
size_t rw_hdr_encode(const struct rw_hdr *h, void *buf, size_t cap);

/* Field-by-field equality of the members meaningful for a's shape. */
bool rw_hdr_equal(const struct rw_hdr *a, const struct rw_hdr *b);

/* Zero h and set its fixed words; lists empty, views NULL. */
void rw_hdr_init(struct rw_hdr *h, uint32_t vers, uint32_t proc, uint32_t xid,
		 uint32_t credit);

/*
 * v2 properties.  rw_prop_u32() yields a uint32-typed property's value; a
 * zero-length value means the default (V2-PROP-4).  rw_prop_find() returns
 * the last entry with that id (AMB-V2-11), or NULL: unknown and absent ids
 * are simply not found (V2-PROP-3).
 */
uint32_t rw_prop_u32(const struct rw_prop *p, uint32_t dflt);
const struct rw_prop *rw_prop_find(const struct rw_propset *ps, uint32_t id);

/* propsubset bits, LSB first (V2-PROP-5, AMB-V2-7).  Bits past the last
 * word are zero; rw_subset_set() returns false past RW_MAX_SUBSET_WORDS. */
bool rw_subset_test(const struct rw_subset *s, uint32_t n);
bool rw_subset_set(struct rw_subset *s, uint32_t n);

/*
 * The XDR of a propset, a propsubset or a word at buf[*off..len), outside a
 * transport header (the optinfo of an xcharext-02 RDMA2_OPTIONAL,
 * xcharext-02 §5.2): *off advances past it on success.  A propset's entries
 * land in props[0..max) with their data pointing into buf; ids are not
 * interpreted (the caller's codec does that, AMB-V2-1).
 */
enum rw_reason rw_body_get_propset(const void *buf, size_t len, size_t *off,
				   struct rw_propset *ps, struct rw_prop *props,
				   uint32_t max);
enum rw_reason rw_body_get_subset(const void *buf, size_t len, size_t *off,
				  struct rw_subset *s);
enum rw_reason rw_body_get_u32(const void *buf, size_t len, size_t *off,
			       uint32_t *v);
enum rw_reason rw_body_get_opaque(const void *buf, size_t len, size_t *off,
				  uint32_t *dlen, const uint8_t **data);
/* Encode s into buf; octets written, or 0 if cap is too small. */
size_t rw_body_put_subset(const struct rw_subset *s, void *buf, size_t cap);

#endif /* RW_HDR_H */
