/*
 * rw_hdr.c - encode and decode RPC-over-RDMA v1/v2 transport headers.
 *
 * Owns the byte layout of RFC 8166 §4.2-4.3 and v2-05 §7.2 and nothing else: no
 * role rules, no allocation.  The decoder is a cursor over [p, end) that checks
 * the room for every fixed-size group of words before loading it, checks
 * every count against both the octets left and the configured limit before
 * looping over it, and stores into the caller's rw_hdr_space.
 */
#include "rw_hdr.h"
#include "rw_be.h"

const struct rw_limits rw_default_limits = {
	.vers_low = RW_VERS_1,
	.vers_high = RW_VERS_1,
	.max_read_chunks = RW_DEFAULT_MAX_READ_CHUNKS,
	.max_write_chunks = RW_DEFAULT_MAX_WRITE_CHUNKS,
	.max_chunk_segs = RW_DEFAULT_MAX_CHUNK_SEGS,
	.max_props = RW_DEFAULT_MAX_PROPS,
};

const struct rw_limits rw_v2_limits = {
	.vers_low = RW_VERS_1,
	.vers_high = RW_VERS_2,
	.max_read_chunks = RW_DEFAULT_MAX_READ_CHUNKS,
	.max_write_chunks = RW_DEFAULT_MAX_WRITE_CHUNKS,
	.max_chunk_segs = RW_DEFAULT_MAX_CHUNK_SEGS,
	.max_props = RW_DEFAULT_MAX_PROPS,
};

static const char *const rw_reason_names[RW_R_NR_REASONS] = {
	[RW_R_OK] = "ok",
	[RW_R_RUNT] = "runt",
	[RW_R_BAD_VERS] = "unsupported version",
	[RW_R_BAD_PROC] = "unknown procedure",
	[RW_R_DEPRECATED_PROC] = "deprecated procedure (MSGP/DONE)",
	[RW_R_TRUNCATED] = "truncated",
	[RW_R_BAD_BOOL] = "bad optional-data discriminator",
	[RW_R_BAD_DIRECTION] = "bad direction",
	[RW_R_TOO_MANY_READS] = "too many Read chunks",
	[RW_R_TOO_MANY_WRITES] = "too many Write chunks",
	[RW_R_TOO_MANY_SEGS] = "too many segments in a chunk",
	[RW_R_TOO_MANY_PROPS] = "too many properties",
	[RW_R_BAD_PROP] = "invalid property value",
	[RW_R_BAD_ERROR] = "undecodable RDMA_ERROR",
	[RW_R_UNKNOWN_ERROR] = "unknown RDMA_ERROR code",
	[RW_R_BAD_POSITION] = "Read position not a multiple of 4",
	[RW_R_POSITION_ORDER] = "Read positions decrease",
	[RW_R_READ_OVERLAP] = "Read chunks overlap",
	[RW_R_CHUNK_OVERFLOW] = "chunk length overflows",
	[RW_R_EMPTY_CHUNK] = "chunk without segments",
	[RW_R_NOMSG_NO_CHUNK] = "NOMSG without chunks",
	[RW_R_MISPLACED_PZRC] = "misplaced Position-Zero Read chunk",
	[RW_R_NO_PAYLOAD] = "no RPC message",
	[RW_R_XID_MISMATCH] = "XID mismatch",
	[RW_R_DIR_MISMATCH] = "direction mismatch",
	[RW_R_BAD_INV_HANDLE] = "inv_handle names no handle",
	[RW_R_BAD_OPTION] = "unsupported option",
	[RW_R_PROPS_UNSUPPORTED] = "property messages unsupported",
	[RW_R_ERROR_RECEIVED] = "RDMA_ERROR received by a responder",
	[RW_R_UNEXPECTED_PROC] = "procedure unexpected in this direction",
	[RW_R_READS_IN_REPLY] = "Read list in a Reply",
	[RW_R_NOMSG_NO_REPLY_CHUNK] = "NOMSG Reply without Reply chunk",
	[RW_R_WRITE_MISMATCH] = "Write list does not echo the Call's",
	[RW_R_WRITE_OVERRUN] = "returned length exceeds provisioned",
	[RW_R_REPLY_CHUNK_MISMATCH] = "Reply chunk does not echo the Call's",
	[RW_R_VERS_MISMATCH] = "Reply version differs from the Call's",
	[RW_R_DDP_LENGTH] = "chunk length does not match the item",
};

const char *rw_err_str(uint32_t vers, uint32_t code)
{
	static const char *const v2[] = {
		[RW_ERR_VERS] = "ERR_VERS",
		[RW2_ERR_BAD_XDR] = "BAD_XDR",
		[RW2_ERR_INVAL_PROC] = "INVAL_PROC",
		[RW2_ERR_READ_CHUNKS] = "READ_CHUNKS",
		[RW2_ERR_WRITE_CHUNKS] = "WRITE_CHUNKS",
		[RW2_ERR_SEGMENTS] = "SEGMENTS",
		[RW2_ERR_WRITE_RESOURCE] = "WRITE_RESOURCE",
		[RW2_ERR_REPLY_RESOURCE] = "REPLY_RESOURCE",
		[RW2_ERR_INVAL_OPTION] = "INVAL_OPTION",
		[RW2_ERR_SYSTEM] = "SYSTEM",
	};

	if (vers != RW_VERS_2 && code == RW_ERR_CHUNK)
		return "ERR_CHUNK";
	if (code >= RW_ERR_VERS && code <= RW2_ERR_SYSTEM)
		return v2[code];
	return "unknown";
}

const char *rw_reason_str(enum rw_reason why)
{
	if ((unsigned int)why >= RW_R_NR_REASONS || !rw_reason_names[why])
		return "?";
	return rw_reason_names[why];
}

static uint32_t clamp(uint32_t v, uint32_t max)
{
	return v < max ? v : max;
}

void rw_hdr_space_init(struct rw_hdr_space *sp, const struct rw_limits *lim)
{
	if (!lim)
		lim = &rw_default_limits;
	sp->lim = *lim;
	if (sp->lim.vers_low < RW_VERS_1)
		sp->lim.vers_low = RW_VERS_1;
	sp->lim.vers_high = clamp(lim->vers_high, RW_VERS_2);
	sp->lim.max_read_chunks =
		clamp(lim->max_read_chunks, RW_MAX_READ_CHUNKS);
	sp->lim.max_write_chunks =
		clamp(lim->max_write_chunks, RW_MAX_WRITE_CHUNKS);
	sp->lim.max_chunk_segs = clamp(lim->max_chunk_segs, RW_MAX_CHUNK_SEGS);
	sp->lim.max_props = clamp(lim->max_props, RW_MAX_PROPS);
}

void rw_hdr_init(struct rw_hdr *h, uint32_t vers, uint32_t proc, uint32_t xid,
		 uint32_t credit)
{
	memset(h, 0, sizeof(*h));
	h->xid = xid;
	h->vers = vers;
	h->credit = credit;
	h->proc = proc;
}

/* ------------------------------------------------------------------ */
/* Decoding                                                            */
/* ------------------------------------------------------------------ */

struct rw_dec {
	const uint8_t *p;
	const uint8_t *end;
	struct rw_hdr_space *sp;
};

static inline size_t left(const struct rw_dec *d)
{
	return (size_t)(d->end - d->p);
}

static inline void get_seg(const uint8_t *p, struct rw_segment *s)
{
	s->handle = rw_get32(p);
	s->length = rw_get32(p + 4);
	s->offset = rw_get64(p + 8);
}

/*
 * An optional-data discriminator: 1 = an item follows, 0 = none.  rpcgen
 * would take any non-zero value as TRUE; a header that is not canonical XDR
 * is refused instead so every accepted header re-encodes to the same bytes.
 */
static inline enum rw_reason dec_more(struct rw_dec *d, bool *more)
{
	uint32_t v;

	if (left(d) < 4)
		return RW_R_TRUNCATED;
	v = rw_get32(d->p);
	if (v > 1)
		return RW_R_BAD_BOOL;
	d->p += 4;
	*more = v;
	return RW_R_OK;
}

/*
 * Segment count of a Write or Reply chunk.  A count that could never fit in
 * the octets left is malformed (TRUNCATED); one that could fit but is over
 * the limit is a resource refusal the peer may act on (v2 ERR_SEGMENTS).
 */
static enum rw_reason dec_nsegs(struct rw_dec *d, uint32_t *nsegs)
{
	uint32_t n;

	if (left(d) < 4)
		return RW_R_TRUNCATED;
	n = rw_get32(d->p);
	d->p += 4;
	if (n > left(d) / RW_SEG_LEN)
		return RW_R_TRUNCATED;
	if (n > d->sp->lim.max_chunk_segs)
		return RW_R_TOO_MANY_SEGS;
	*nsegs = n;
	return RW_R_OK;
}

static void dec_segs(struct rw_dec *d, struct rw_segment *segs, uint32_t n)
{
	const uint8_t *p = d->p;

	for (uint32_t i = 0; i < n; i++, p += RW_SEG_LEN)
		get_seg(p, &segs[i]);
	d->p = p;
}

/*
 * Read list.  Entries are stored flat; runs of equal positions are counted
 * as chunks so the limits bound storage: one position-0 run (the PZRC) plus
 * max_read_chunks other runs, each at most max_chunk_segs long, always fit
 * RW_MAX_READ_SEGS.
 */
static enum rw_reason dec_reads(struct rw_dec *d, struct rw_hdr *h)
{
	const struct rw_limits *lim = &d->sp->lim;
	struct rw_read_seg *rs = d->sp->reads;
	const uint8_t *p = d->p;
	uint32_t n = 0, chunks = 0, run = 0, pos = 0;
	bool pzrc = false;

	h->reads = rs;
	for (;;) {
		uint32_t more, position;

		if ((size_t)(d->end - p) < 4)
			return RW_R_TRUNCATED;
		more = rw_get32(p);
		if (!more)
			break;
		if (more != 1)
			return RW_R_BAD_BOOL;
		if ((size_t)(d->end - p) < 4 + RW_READ_SEG_LEN)
			return RW_R_TRUNCATED;
		position = rw_get32(p + 4);
		if (!n || position != pos) {
			run = 0;
			pos = position;
			if (!position && !pzrc)
				pzrc = true;
			else if (++chunks > lim->max_read_chunks)
				return RW_R_TOO_MANY_READS;
		}
		if (++run > lim->max_chunk_segs)
			return RW_R_TOO_MANY_SEGS;
		rs[n].position = position;
		get_seg(p + 8, &rs[n].seg);
		n++;
		p += 4 + RW_READ_SEG_LEN;
	}
	d->p = p + 4;
	h->nreads = n;
	return RW_R_OK;
}

static enum rw_reason dec_writes(struct rw_dec *d, struct rw_hdr *h)
{
	struct rw_hdr_space *sp = d->sp;
	uint32_t n = 0;

	h->writes = sp->writes;
	for (;;) {
		enum rw_reason why;
		uint32_t nsegs;
		bool more;

		why = dec_more(d, &more);
		if (why)
			return why;
		if (!more)
			break;
		if (left(d) < 4)
			return RW_R_TRUNCATED;
		if (n >= sp->lim.max_write_chunks)
			return RW_R_TOO_MANY_WRITES;
		why = dec_nsegs(d, &nsegs);
		if (why)
			return why;
		sp->writes[n].nsegs = nsegs;
		sp->writes[n].segs = sp->write_segs[n];
		dec_segs(d, sp->write_segs[n], nsegs);
		n++;
	}
	h->nwrites = n;
	return RW_R_OK;
}

static enum rw_reason dec_reply(struct rw_dec *d, struct rw_hdr *h)
{
	enum rw_reason why;
	uint32_t nsegs;
	bool more;

	why = dec_more(d, &more);
	if (why)
		return why;
	h->has_reply = more;
	h->reply.segs = d->sp->reply_segs;
	h->reply.nsegs = 0;
	if (!more)
		return RW_R_OK;
	why = dec_nsegs(d, &nsegs);
	if (why)
		return why;
	h->reply.nsegs = nsegs;
	dec_segs(d, d->sp->reply_segs, nsegs);
	return RW_R_OK;
}

static enum rw_reason dec_lists(struct rw_dec *d, struct rw_hdr *h)
{
	enum rw_reason why;

	why = dec_reads(d, h);
	if (!why)
		why = dec_writes(d, h);
	if (!why)
		why = dec_reply(d, h);
	return why;
}

/* Fixed layout for all versions: err = 1, low, high at words 4-6. */
static enum rw_reason dec_err_vers(struct rw_dec *d, struct rw_hdr *h)
{
	if (left(d) < 12)
		return RW_R_BAD_ERROR;
	h->err.low = rw_get32(d->p + 4);
	h->err.high = rw_get32(d->p + 8);
	d->p += 12;
	return RW_R_OK;
}

/* Body words (after rdma_err) of each v2 error arm; -1: unknown code. */
static int err2_words(uint32_t code)
{
	switch (code) {
	case RW_ERR_VERS:
	case RW2_ERR_WRITE_RESOURCE:
		return 2;
	case RW2_ERR_READ_CHUNKS:
	case RW2_ERR_WRITE_CHUNKS:
	case RW2_ERR_SEGMENTS:
	case RW2_ERR_REPLY_RESOURCE:
		return 1;
	case RW2_ERR_BAD_XDR:
	case RW2_ERR_INVAL_PROC:
	case RW2_ERR_INVAL_OPTION:
	case RW2_ERR_SYSTEM:
		return 0;
	default:
		return -1;
	}
}

static enum rw_reason dec_err(struct rw_dec *d, struct rw_hdr *h)
{
	const uint8_t *b = d->p + 4;
	uint32_t code = h->err.code;
	int words;

	if (h->vers == RW_VERS_1)
		words = code == RW_ERR_CHUNK ? 0 : -1;
	else
		words = err2_words(code);
	if (words < 0) {
		d->p += 4;
		return RW_R_UNKNOWN_ERROR;
	}
	if (left(d) < 4 + 4 * (size_t)words)
		return RW_R_BAD_ERROR;
	switch (code) {
	case RW2_ERR_READ_CHUNKS:
	case RW2_ERR_WRITE_CHUNKS:
	case RW2_ERR_SEGMENTS:
		h->err.max = rw_get32(b);
		break;
	case RW2_ERR_WRITE_RESOURCE:
		h->err.chunk_index = rw_get32(b);
		h->err.length_needed = rw_get32(b + 4);
		break;
	case RW2_ERR_REPLY_RESOURCE:
		h->err.length_needed = rw_get32(b);
		break;
	}
	d->p += 4 + 4 * (size_t)words;
	return RW_R_OK;
}

static enum rw_reason dec_dir(struct rw_dec *d, uint32_t *dir)
{
	uint32_t v = rw_get32(d->p);

	if (v > RW_DIR_REPLY)
		return RW_R_BAD_DIRECTION;
	*dir = v;
	d->p += 4;
	return RW_R_OK;
}

/* opaque<>: length, the octets, 0-3 pad octets (whose value is ignored:
 * RFC 4506 binds the sender, and rpcgen does not look either). */
static enum rw_reason dec_opaque(struct rw_dec *d, uint32_t *len,
				 const uint8_t **data)
{
	uint32_t n;

	if (left(d) < 4)
		return RW_R_TRUNCATED;
	n = rw_get32(d->p);
	d->p += 4;
	if (n > left(d) || rw_pad4(n) > left(d) - n)
		return RW_R_TRUNCATED;
	*len = n;
	*data = d->p;
	d->p += n + rw_pad4(n);
	return RW_R_OK;
}

/* Known properties must carry a valid value of their type (V2-PROP-2);
 * empty means default (V2-PROP-4); unknown ones are left alone (V2-PROP-3). */
static bool prop_valid(const struct rw_prop *p)
{
	if (p->id != RW2_PROP_RBSIZ && p->id != RW2_PROP_BRS)
		return true;
	if (!p->len)
		return true;
	if (p->len != 4)
		return false;
	return p->id != RW2_PROP_BRS || rw_get32(p->data) <= RW2_BRS_GENL;
}

/* A propset into props[0..max), ids not interpreted. */
static enum rw_reason dec_propset_raw(struct rw_dec *d, struct rw_propset *ps,
				      struct rw_prop *props, uint32_t max)
{
	uint32_t n;

	if (left(d) < 4)
		return RW_R_TRUNCATED;
	n = rw_get32(d->p);
	d->p += 4;
	if (n > left(d) / 8)
		return RW_R_TRUNCATED;
	if (n > max)
		return RW_R_TOO_MANY_PROPS;
	ps->props = props;
	ps->n = n;
	for (uint32_t i = 0; i < n; i++) {
		enum rw_reason why;

		if (left(d) < 4)
			return RW_R_TRUNCATED;
		props[i].id = rw_get32(d->p);
		d->p += 4;
		why = dec_opaque(d, &props[i].len, &props[i].data);
		if (why)
			return why;
	}
	return RW_R_OK;
}

static enum rw_reason dec_propset(struct rw_dec *d, struct rw_propset *ps)
{
	enum rw_reason why =
		dec_propset_raw(d, ps, d->sp->props, d->sp->lim.max_props);

	for (uint32_t i = 0; !why && i < ps->n; i++)
		if (!prop_valid(&ps->props[i]))
			why = RW_R_BAD_PROP;
	return why;
}

static enum rw_reason dec_subset(struct rw_dec *d, struct rw_subset *s)
{
	uint32_t n;

	if (left(d) < 4)
		return RW_R_TRUNCATED;
	n = rw_get32(d->p);
	d->p += 4;
	if (n > left(d) / 4)
		return RW_R_TRUNCATED;
	if (n > RW_MAX_SUBSET_WORDS)
		return RW_R_TOO_MANY_PROPS;
	s->nwords = n;
	for (uint32_t i = 0; i < n; i++, d->p += 4)
		s->words[i] = rw_get32(d->p);
	return RW_R_OK;
}

static enum rw_reason dec_optional(struct rw_dec *d, struct rw_hdr *h)
{
	enum rw_reason why;

	if (left(d) < 8)
		return RW_R_TRUNCATED;
	why = dec_dir(d, &h->opt.dir);
	if (why)
		return why;
	h->opt.type = rw_get32(d->p);
	d->p += 4;
	return dec_opaque(d, &h->opt.len, &h->opt.info);
}

static enum rw_reason dec_props(struct rw_dec *d, struct rw_hdr *h)
{
	enum rw_reason why;

	switch (h->proc) {
	case RW2_CONNPROP:
		why = dec_propset(d, &h->props);
		return why ? why : dec_subset(d, &h->subset1);
	case RW2_RESPROP:
		why = dec_subset(d, &h->subset1);
		if (!why)
			why = dec_subset(d, &h->subset2);
		return why ? why : dec_propset(d, &h->props);
	default: /* REQPROP, UPDPROP */
		return dec_propset(d, &h->props);
	}
}

static enum rw_reason dec_v1(struct rw_dec *d, struct rw_hdr *h, size_t len)
{
	switch (h->proc) {
	case RW_MSG:
	case RW_NOMSG:
		if (len < RW_V1_MIN_LEN)
			return RW_R_RUNT;
		h->direction = 0;
		h->inv_handle = 0;
		return dec_lists(d, h);
	case RW_MSGP:
	case RW_DONE:
		return RW_R_DEPRECATED_PROC;
	default: /* RDMA_ERROR never gets here: see rw_hdr_decode() */
		return RW_R_BAD_PROC;
	}
}

static enum rw_reason dec_v2(struct rw_dec *d, struct rw_hdr *h, size_t len)
{
	enum rw_reason why;

	switch (h->proc) {
	case RW_MSG:
	case RW_NOMSG:
		if (len < RW_V2_MIN_LEN)
			return RW_R_RUNT;
		why = dec_dir(d, &h->direction);
		if (why)
			return why;
		h->inv_handle = rw_get32(d->p);
		d->p += 4;
		return dec_lists(d, h);
	case RW2_OPTIONAL:
		return dec_optional(d, h);
	case RW2_CONNPROP:
	case RW2_REQPROP:
	case RW2_RESPROP:
	case RW2_UPDPROP:
		return dec_props(d, h);
	default: /* including the retired 2 and 3 (N-2b) */
		return RW_R_BAD_PROC;
	}
}

enum rw_reason rw_hdr_decode(const void *buf, size_t len, struct rw_hdr *h,
			     struct rw_hdr_space *sp)
{
	const uint8_t *p = buf;
	struct rw_dec d;
	enum rw_reason why;
	bool vers_ok;

	/* only RDMA_MSG/RDMA_NOMSG set the lists: no other header may leave
	 * counts of an earlier one behind for a caller to walk */
	h->hdr_len = 0;
	h->nreads = 0;
	h->nwrites = 0;
	h->has_reply = false;
	if (len < RW_FIXED_LEN) {
		h->xid = h->vers = h->credit = h->proc = 0;
		return RW_R_RUNT;
	}
	d.p = p + RW_FIXED_LEN;
	d.end = p + len;
	d.sp = sp;
	h->xid = rw_get32(p);
	h->vers = rw_get32(p + 4);
	h->credit = rw_get32(p + 8);
	h->proc = rw_get32(p + 12);
	vers_ok = h->vers >= sp->lim.vers_low && h->vers <= sp->lim.vers_high;

	/* RDMA_ERROR = 4 and the ERR_VERS layout are the same in every
	 * version (V1-EXT-2), so errors are told apart before the version. */
	if (h->proc == RW_ERROR) {
		if (len < RW_ERR_CHUNK_LEN)
			return RW_R_RUNT;
		h->err.code = rw_get32(p + 16);
		if (h->err.code == RW_ERR_VERS)
			why = dec_err_vers(&d, h);
		else if (!vers_ok)
			return RW_R_BAD_ERROR;
		else
			why = dec_err(&d, h);
	} else if (!vers_ok) {
		return RW_R_BAD_VERS;
	} else if (h->vers == RW_VERS_1) {
		why = dec_v1(&d, h, len);
	} else {
		why = dec_v2(&d, h, len);
	}
	if (why == RW_R_OK || why == RW_R_UNKNOWN_ERROR)
		h->hdr_len = (uint32_t)(d.p - p);
	return why;
}

/* ------------------------------------------------------------------ */
/* Encoding                                                            */
/* ------------------------------------------------------------------ */

static bool enc_chunk_ok(const struct rw_chunk *c)
{
	return c->nsegs <= RW_MAX_CHUNK_SEGS && (c->segs || !c->nsegs);
}

static uint64_t enc_lists_len(const struct rw_hdr *h)
{
	uint64_t n = 12; /* three list terminators / absent flag */

	if (h->nreads > RW_MAX_READ_SEGS || (h->nreads && !h->reads))
		return 0;
	if (h->nwrites > RW_MAX_WRITE_CHUNKS || (h->nwrites && !h->writes))
		return 0;
	n += (uint64_t)h->nreads * (4 + RW_READ_SEG_LEN);
	for (uint32_t i = 0; i < h->nwrites; i++) {
		if (!enc_chunk_ok(&h->writes[i]))
			return 0;
		n += 8 + (uint64_t)h->writes[i].nsegs * RW_SEG_LEN;
	}
	if (h->has_reply) {
		if (!enc_chunk_ok(&h->reply))
			return 0;
		n += 4 + (uint64_t)h->reply.nsegs * RW_SEG_LEN;
	}
	return n;
}

static uint64_t enc_opaque_len(uint32_t len, const void *data)
{
	if (len && !data)
		return 0;
	return 4 + (uint64_t)len + rw_pad4(len);
}

static uint64_t enc_propset_len(const struct rw_propset *ps)
{
	uint64_t n = 4;

	if (ps->n > RW_MAX_PROPS || (ps->n && !ps->props))
		return 0;
	for (uint32_t i = 0; i < ps->n; i++) {
		uint64_t o =
			enc_opaque_len(ps->props[i].len, ps->props[i].data);

		if (!o)
			return 0;
		n += 4 + o;
	}
	return n;
}

static uint64_t enc_subset_len(const struct rw_subset *s)
{
	if (s->nwords > RW_MAX_SUBSET_WORDS)
		return 0;
	return 4 + 4 * (uint64_t)s->nwords;
}

/* Sum of parts that each return 0 for "refused". */
static uint64_t add_parts(uint64_t a, uint64_t b)
{
	return a && b ? a + b : 0;
}

static uint64_t enc_props_len(const struct rw_hdr *h)
{
	uint64_t n;

	switch (h->proc) {
	case RW2_CONNPROP:
		return add_parts(enc_propset_len(&h->props),
				 enc_subset_len(&h->subset1));
	case RW2_RESPROP:
		n = add_parts(enc_subset_len(&h->subset1),
			      enc_subset_len(&h->subset2));
		return add_parts(n, enc_propset_len(&h->props));
	default:
		return enc_propset_len(&h->props);
	}
}

static uint64_t enc_err_len(const struct rw_hdr *h)
{
	int words;

	if (h->err.code == RW_ERR_VERS)
		return 12;
	if (h->vers == RW_VERS_1)
		words = h->err.code == RW_ERR_CHUNK ? 0 : -1;
	else if (h->vers == RW_VERS_2)
		words = err2_words(h->err.code);
	else
		words = -1;
	return words < 0 ? 0 : 4 + 4 * (uint64_t)words;
}

/* Body octets after the 16-octet fixed part; 0 means "refused". */
static uint64_t enc_body_len(const struct rw_hdr *h)
{
	if (h->proc == RW_ERROR)
		return enc_err_len(h);
	if (h->vers == RW_VERS_1) {
		if (h->proc == RW_MSG || h->proc == RW_NOMSG)
			return enc_lists_len(h);
		return 0; /* MSGP and DONE are never sent */
	}
	if (h->vers != RW_VERS_2)
		return 0;
	switch (h->proc) {
	case RW_MSG:
	case RW_NOMSG:
		if (h->direction > RW_DIR_REPLY)
			return 0;
		return add_parts(8, enc_lists_len(h));
	case RW2_OPTIONAL:
		if (h->opt.dir > RW_DIR_REPLY)
			return 0;
		return add_parts(8, enc_opaque_len(h->opt.len, h->opt.info));
	case RW2_CONNPROP:
	case RW2_REQPROP:
	case RW2_RESPROP:
	case RW2_UPDPROP:
		return enc_props_len(h);
	default:
		return 0;
	}
}

size_t rw_hdr_encoded_len(const struct rw_hdr *h)
{
	uint64_t n = enc_body_len(h);

	if (!n || n > SIZE_MAX - RW_FIXED_LEN)
		return 0;
	return (size_t)(RW_FIXED_LEN + n);
}

static inline uint8_t *put_seg(uint8_t *p, const struct rw_segment *s)
{
	rw_put32(p, s->handle);
	rw_put32(p + 4, s->length);
	rw_put64(p + 8, s->offset);
	return p + RW_SEG_LEN;
}

static uint8_t *put_chunk(uint8_t *p, const struct rw_chunk *c)
{
	rw_put32(p, c->nsegs);
	p += 4;
	for (uint32_t i = 0; i < c->nsegs; i++)
		p = put_seg(p, &c->segs[i]);
	return p;
}

static uint8_t *enc_lists(uint8_t *p, const struct rw_hdr *h)
{
	for (uint32_t i = 0; i < h->nreads; i++) {
		rw_put32(p, 1);
		rw_put32(p + 4, h->reads[i].position);
		p = put_seg(p + 8, &h->reads[i].seg);
	}
	rw_put32(p, 0);
	p += 4;
	for (uint32_t i = 0; i < h->nwrites; i++) {
		rw_put32(p, 1);
		p = put_chunk(p + 4, &h->writes[i]);
	}
	rw_put32(p, 0);
	p += 4;
	rw_put32(p, h->has_reply);
	p += 4;
	if (h->has_reply)
		p = put_chunk(p, &h->reply);
	return p;
}

static uint8_t *enc_err(uint8_t *p, const struct rw_hdr *h)
{
	rw_put32(p, h->err.code);
	p += 4;
	switch (h->err.code) {
	case RW_ERR_VERS:
		rw_put32(p, h->err.low);
		rw_put32(p + 4, h->err.high);
		return p + 8;
	case RW2_ERR_READ_CHUNKS:
	case RW2_ERR_WRITE_CHUNKS:
	case RW2_ERR_SEGMENTS:
		rw_put32(p, h->err.max);
		return p + 4;
	case RW2_ERR_WRITE_RESOURCE:
		rw_put32(p, h->err.chunk_index);
		rw_put32(p + 4, h->err.length_needed);
		return p + 8;
	case RW2_ERR_REPLY_RESOURCE:
		rw_put32(p, h->err.length_needed);
		return p + 4;
	default:
		return p;
	}
}

static uint8_t *enc_opaque(uint8_t *p, uint32_t len, const uint8_t *data)
{
	uint32_t pad = (uint32_t)rw_pad4(len);

	rw_put32(p, len);
	p += 4;
	if (len)
		memcpy(p, data, len);
	p += len;
	memset(p, 0, pad);
	return p + pad;
}

static uint8_t *enc_propset(uint8_t *p, const struct rw_propset *ps)
{
	rw_put32(p, ps->n);
	p += 4;
	for (uint32_t i = 0; i < ps->n; i++) {
		rw_put32(p, ps->props[i].id);
		p = enc_opaque(p + 4, ps->props[i].len, ps->props[i].data);
	}
	return p;
}

static uint8_t *enc_subset(uint8_t *p, const struct rw_subset *s)
{
	rw_put32(p, s->nwords);
	p += 4;
	for (uint32_t i = 0; i < s->nwords; i++, p += 4)
		rw_put32(p, s->words[i]);
	return p;
}

static uint8_t *enc_body(uint8_t *p, const struct rw_hdr *h)
{
	switch (h->proc) {
	case RW_ERROR:
		return enc_err(p, h);
	case RW2_OPTIONAL:
		rw_put32(p, h->opt.dir);
		rw_put32(p + 4, h->opt.type);
		return enc_opaque(p + 8, h->opt.len, h->opt.info);
	case RW2_CONNPROP:
		p = enc_propset(p, &h->props);
		return enc_subset(p, &h->subset1);
	case RW2_RESPROP:
		p = enc_subset(p, &h->subset1);
		p = enc_subset(p, &h->subset2);
		return enc_propset(p, &h->props);
	case RW2_REQPROP:
	case RW2_UPDPROP:
		return enc_propset(p, &h->props);
	default: /* MSG, NOMSG */
		if (h->vers == RW_VERS_2) {
			rw_put32(p, h->direction);
			rw_put32(p + 4, h->inv_handle);
			p += 8;
		}
		return enc_lists(p, h);
	}
}

size_t rw_hdr_encode(const struct rw_hdr *h, void *buf, size_t cap)
{
	size_t n = rw_hdr_encoded_len(h);
	uint8_t *p = buf;

	if (!n || n > cap)
		return 0;
	rw_put32(p, h->xid);
	rw_put32(p + 4, h->vers);
	rw_put32(p + 8, h->credit);
	rw_put32(p + 12, h->proc);
	enc_body(p + RW_FIXED_LEN, h);
	return n;
}

/* ------------------------------------------------------------------ */
/* Comparison and property helpers                                     */
/* ------------------------------------------------------------------ */

static bool seg_eq(const struct rw_segment *a, const struct rw_segment *b)
{
	return a->handle == b->handle && a->length == b->length &&
	       a->offset == b->offset;
}

static bool chunk_eq(const struct rw_chunk *a, const struct rw_chunk *b)
{
	if (a->nsegs != b->nsegs)
		return false;
	for (uint32_t i = 0; i < a->nsegs; i++)
		if (!seg_eq(&a->segs[i], &b->segs[i]))
			return false;
	return true;
}

static bool lists_eq(const struct rw_hdr *a, const struct rw_hdr *b)
{
	if (a->nreads != b->nreads || a->nwrites != b->nwrites ||
	    a->has_reply != b->has_reply)
		return false;
	for (uint32_t i = 0; i < a->nreads; i++)
		if (a->reads[i].position != b->reads[i].position ||
		    !seg_eq(&a->reads[i].seg, &b->reads[i].seg))
			return false;
	for (uint32_t i = 0; i < a->nwrites; i++)
		if (!chunk_eq(&a->writes[i], &b->writes[i]))
			return false;
	return !a->has_reply || chunk_eq(&a->reply, &b->reply);
}

static bool err_eq(const struct rw_hdr *a, const struct rw_hdr *b)
{
	if (a->err.code != b->err.code)
		return false;
	switch (a->err.code) {
	case RW_ERR_VERS:
		return a->err.low == b->err.low && a->err.high == b->err.high;
	case RW2_ERR_READ_CHUNKS:
	case RW2_ERR_WRITE_CHUNKS:
	case RW2_ERR_SEGMENTS:
		return a->vers != RW_VERS_2 || a->err.max == b->err.max;
	case RW2_ERR_WRITE_RESOURCE:
		return a->vers != RW_VERS_2 ||
		       (a->err.chunk_index == b->err.chunk_index &&
			a->err.length_needed == b->err.length_needed);
	case RW2_ERR_REPLY_RESOURCE:
		return a->vers != RW_VERS_2 ||
		       a->err.length_needed == b->err.length_needed;
	default:
		return true;
	}
}

static bool bytes_eq(uint32_t alen, const uint8_t *a, uint32_t blen,
		     const uint8_t *b)
{
	return alen == blen && (!alen || !memcmp(a, b, alen));
}

static bool propset_eq(const struct rw_propset *a, const struct rw_propset *b)
{
	if (a->n != b->n)
		return false;
	for (uint32_t i = 0; i < a->n; i++)
		if (a->props[i].id != b->props[i].id ||
		    !bytes_eq(a->props[i].len, a->props[i].data,
			      b->props[i].len, b->props[i].data))
			return false;
	return true;
}

static bool subset_eq(const struct rw_subset *a, const struct rw_subset *b)
{
	return a->nwords == b->nwords && a->nwords <= RW_MAX_SUBSET_WORDS &&
	       !memcmp(a->words, b->words, a->nwords * sizeof(a->words[0]));
}

bool rw_hdr_equal(const struct rw_hdr *a, const struct rw_hdr *b)
{
	if (a->xid != b->xid || a->vers != b->vers || a->credit != b->credit ||
	    a->proc != b->proc)
		return false;
	switch (a->proc) {
	case RW_MSG:
	case RW_NOMSG:
		if (a->vers == RW_VERS_2 && (a->direction != b->direction ||
					     a->inv_handle != b->inv_handle))
			return false;
		return lists_eq(a, b);
	case RW_ERROR:
		return err_eq(a, b);
	case RW2_OPTIONAL:
		return a->opt.dir == b->opt.dir && a->opt.type == b->opt.type &&
		       bytes_eq(a->opt.len, a->opt.info, b->opt.len,
				b->opt.info);
	case RW2_CONNPROP:
		return propset_eq(&a->props, &b->props) &&
		       subset_eq(&a->subset1, &b->subset1);
	case RW2_RESPROP:
		return subset_eq(&a->subset1, &b->subset1) &&
		       subset_eq(&a->subset2, &b->subset2) &&
		       propset_eq(&a->props, &b->props);
	case RW2_REQPROP:
	case RW2_UPDPROP:
		return propset_eq(&a->props, &b->props);
	default:
		return true;
	}
}

uint32_t rw_prop_u32(const struct rw_prop *p, uint32_t dflt)
{
	if (!p || p->len < 4)
		return dflt;
	return rw_get32(p->data);
}

const struct rw_prop *rw_prop_find(const struct rw_propset *ps, uint32_t id)
{
	for (uint32_t i = ps->n; i-- > 0;)
		if (ps->props[i].id == id)
			return &ps->props[i];
	return NULL;
}

bool rw_subset_test(const struct rw_subset *s, uint32_t n)
{
	uint32_t w = n / 32;

	if (w >= s->nwords || w >= RW_MAX_SUBSET_WORDS)
		return false;
	return s->words[w] & (1u << (n % 32));
}

bool rw_subset_set(struct rw_subset *s, uint32_t n)
{
	uint32_t w = n / 32;

	if (w >= RW_MAX_SUBSET_WORDS)
		return false;
	while (s->nwords <= w)
		s->words[s->nwords++] = 0;
	s->words[w] |= 1u << (n % 32);
	return true;
}

/* ------------------------------------------------------------------ */
/* Property bodies outside a header (xcharext-02 optinfo)              */
/* ------------------------------------------------------------------ */

enum rw_reason rw_body_get_propset(const void *buf, size_t len, size_t *off,
				   struct rw_propset *ps, struct rw_prop *props,
				   uint32_t max)
{
	struct rw_dec d = { .p = (const uint8_t *)buf + *off,
			    .end = (const uint8_t *)buf + len };
	enum rw_reason why;

	if (*off > len)
		return RW_R_TRUNCATED;
	why = dec_propset_raw(&d, ps, props, max);
	if (!why)
		*off = (size_t)(d.p - (const uint8_t *)buf);
	return why;
}

enum rw_reason rw_body_get_subset(const void *buf, size_t len, size_t *off,
				  struct rw_subset *s)
{
	struct rw_dec d = { .p = (const uint8_t *)buf + *off,
			    .end = (const uint8_t *)buf + len };
	enum rw_reason why;

	if (*off > len)
		return RW_R_TRUNCATED;
	why = dec_subset(&d, s);
	if (!why)
		*off = (size_t)(d.p - (const uint8_t *)buf);
	return why;
}

enum rw_reason rw_body_get_u32(const void *buf, size_t len, size_t *off,
			       uint32_t *v)
{
	if (*off > len || len - *off < 4)
		return RW_R_TRUNCATED;
	*v = rw_get32((const uint8_t *)buf + *off);
	*off += 4;
	return RW_R_OK;
}

size_t rw_body_put_subset(const struct rw_subset *s, void *buf, size_t cap)
{
	size_t n = (size_t)enc_subset_len(s);

	if (!n || n > cap)
		return 0;
	enc_subset(buf, s);
	return n;
}

enum rw_reason rw_body_get_opaque(const void *buf, size_t len, size_t *off,
				  uint32_t *dlen, const uint8_t **data)
{
	struct rw_dec d = { .p = (const uint8_t *)buf + *off,
			    .end = (const uint8_t *)buf + len };
	enum rw_reason why;

	if (*off > len)
		return RW_R_TRUNCATED;
	why = dec_opaque(&d, dlen, data);
	if (!why)
		*off = (size_t)(d.p - (const uint8_t *)buf);
	return why;
}
