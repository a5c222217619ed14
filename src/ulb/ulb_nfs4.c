/*
 * ulb_nfs4.c - the built-in NFSv4 Upper-Layer Binding (RFC 8267 section 6):
 * a walker that parses an encoded COMPOUND (program 100003, version 4,
 * procedure 1) and says where its DDP-eligible items are.  ulb_nfs.c
 * registers it; the wire layer calls it through RW_DDP_PICK.
 *
 * The eligible items (section 6.1, every minor version), and no others:
 *
 *	WRITE4args.data				(OP_WRITE, 38)
 *	CREATE4args linkdata, arm NF4LNK	(OP_CREATE, 6)
 *	READ4resok.data				(OP_READ, 25)
 *	READLINK4resok.link			(OP_READLINK, 27)
 *
 * A chunk found at any other item is refused by the wire layer because
 * pick_call says no (V1-DDP-1).  Write chunk i belongs to the i-th READ or
 * READLINK of the COMPOUND (section 6.4, V1-WC-3), counted whatever its
 * status, so a READ that fails leaves its chunk unused; the pick functions
 * return that ordinal as the slot, and results past the Write chunks
 * offered stay inline (the policy's max_chunks, not this file).
 *
 * The parser knows the arguments and results of the operations in
 * nfs4_ops[] (RFC 7530, RFC 5661, RFC 7862), minor versions 0 to 2, and
 * reads only words before the offset it is asked about, as the view
 * allows.  Every length is peer data: it is checked against the end of
 * what may be read before it is used, counts are capped (1024 operations,
 * the declared bounds of nfs_fh4 and owner opaques), and each operation
 * consumes at least its opcode word, so a walk ends after at most
 * 1024 operations whatever the input.
 *
 * Stopping.  Moving nothing is always allowed, moving the wrong item is
 * not, so whatever the parser does not know ends the walk:
 *  - an unknown operation (argument or result), a union arm the XDR does
 *    not define, or a minor version above 2: the pick functions return -1
 *    for every offset past that point; plan() keeps the slots of the
 *    READ/READLINKs before it, returns 0 and sets reply_max 0.  Both
 *    peers stop at the same operation, so the slots before it agree.
 *  - an operation whose arguments are known but whose result is not
 *    (OPEN, READDIR, SECINFO, SECINFO_NO_NAME, READ_PLUS): pick_reply
 *    stops at that result, so plan() offers no slot after it.
 *  - a word that cannot be read, a length that runs past the end, more
 *    than 1024 operations: the pick functions return -1; plan() returns
 *    EINVAL with the plan zeroed, as it does for arguments that do not
 *    end exactly at len.
 *
 * Sizes.  A READ's room is its count argument (0 gives room 0: the slot is
 * kept so later slots stay in step).  A READLINK's room is 4096, Linux's
 * NFS4_MAXPATHLEN (PATH_MAX): NFSv4 has no protocol limit on a link
 * target, and no Linux server returns a longer one.  reply_max adds up the
 * largest result of every operation with the eligible data left out but
 * its length word and a 3-octet pad kept (the item may come inline);
 * it is 0 when any operation's result is unbounded (a bitmap4 or fattr4,
 * GETATTR, SETATTR, CREATE, TEST_STATEID) or unknown.
 */
#include <errno.h>
#include <string.h>

#include "compiler.h"
#include "ulb/ulb.h"

#define NFS4_OK		  0u
#define NFS4ERR_DENIED	  10010u
#define NFS4_MAX_OPS	  1024u /* more is garbage, not a COMPOUND */
#define NFS4_MAX_MINOR	  2u	/* RFC 7862; later ones are unknown */
#define NFS4_FHSIZE	  128u
#define NFS4_OPAQUE_LIMIT 1024u
#define NFS4_STATEID	  16u	     /* seqid + opaque other[12] */
#define NFS4_CHANGE_INFO  20u	     /* bool + two changeid4 */
#define NFS4_PATH_ROOM	  4096u	     /* Linux NFS4_MAXPATHLEN */
#define NFS4_NO_TARGET	  UINT32_MAX /* never a data offset: unaligned */

/* LOCK4denied with the largest owner: offset, length, type, clientid */
#define NFS4_DENIED_MAX (8u + 8u + 4u + 8u + 4u + NFS4_OPAQUE_LIMIT)

enum nfs4_opnum {
	OP_ACCESS = 3,
	OP_CLOSE = 4,
	OP_COMMIT = 5,
	OP_CREATE = 6,
	OP_DELEGPURGE = 7,
	OP_DELEGRETURN = 8,
	OP_GETATTR = 9,
	OP_GETFH = 10,
	OP_LINK = 11,
	OP_LOCK = 12,
	OP_LOCKT = 13,
	OP_LOCKU = 14,
	OP_LOOKUP = 15,
	OP_LOOKUPP = 16,
	OP_NVERIFY = 17,
	OP_OPEN = 18,
	OP_OPENATTR = 19,
	OP_OPEN_CONFIRM = 20,
	OP_OPEN_DOWNGRADE = 21,
	OP_PUTFH = 22,
	OP_PUTPUBFH = 23,
	OP_PUTROOTFH = 24,
	OP_READ = 25,
	OP_READDIR = 26,
	OP_READLINK = 27,
	OP_REMOVE = 28,
	OP_RENAME = 29,
	OP_RENEW = 30,
	OP_RESTOREFH = 31,
	OP_SAVEFH = 32,
	OP_SECINFO = 33,
	OP_SETATTR = 34,
	OP_SETCLIENTID_CONFIRM = 36,
	OP_VERIFY = 37,
	OP_WRITE = 38,
	OP_RELEASE_LOCKOWNER = 39,
	OP_DESTROY_SESSION = 44,
	OP_FREE_STATEID = 45,
	OP_SECINFO_NO_NAME = 52,
	OP_SEQUENCE = 53,
	OP_TEST_STATEID = 55,
	OP_DESTROY_CLIENTID = 57,
	OP_RECLAIM_COMPLETE = 58,
	OP_ALLOCATE = 59,
	OP_DEALLOCATE = 62,
	OP_READ_PLUS = 68,
	OP_SEEK = 69,
	OP_ILLEGAL = 10044,
};

/* Values of the createtype4, createhow4, openflag4, open_claim4 arms. */
enum {
	NF4BLK = 3,
	NF4CHR = 4,
	NF4LNK = 5
};
enum {
	OPEN4_CREATE = 1
};
enum {
	UNCHECKED4,
	GUARDED4,
	EXCLUSIVE4,
	EXCLUSIVE4_1
};
enum {
	CLAIM_NULL,
	CLAIM_PREVIOUS,
	CLAIM_DELEGATE_CUR,
	CLAIM_DELEGATE_PREV,
	CLAIM_FH,
	CLAIM_DELEG_CUR_FH,
	CLAIM_DELEG_PREV_FH,
};

/* ---------------------------------------------------------------------- */
/* Cursor                                                                  */

enum nfs4_st {
	ST_OK = 0,
	ST_BAD,	    /* unreadable word or impossible length */
	ST_UNKNOWN, /* an operation or arm this file does not know */
	ST_HIT,	    /* the eligible item at target was reached */
};

struct nfs4_cur {
	const struct rw_ddp_view *v;
	uint32_t off;	  /* next octet to parse */
	uint32_t end;	  /* nothing at or past it is read or skipped */
	uint32_t target;  /* the data offset asked about */
	uint32_t hit_len; /* ST_HIT: the item's length word */
	uint32_t items;	  /* eligible items passed before target */
	uint32_t count;	  /* READ4args.count of the last READ */
	enum nfs4_st st;
};

/*
 * A pick reads nothing at or past the offset it is asked about: the view
 * would refuse it anyway when called from a stream, and a flat test view
 * must not make the parser look further than a stream would.
 */
static void cur_init(struct nfs4_cur *c, const struct rw_ddp_view *v,
		     uint32_t end, uint32_t target)
{
	memset(c, 0, sizeof(*c));
	c->v = v;
	c->end = end;
	c->target = target;
}

static uint32_t cur_word(struct nfs4_cur *c)
{
	uint32_t w;

	if (c->st != ST_OK)
		return 0;
	if ((uint64_t)c->off + 4 > c->end || !c->v->word(c->v, c->off, &w)) {
		c->st = ST_BAD;
		return 0;
	}
	c->off += 4;
	return w;
}

static void cur_skip(struct nfs4_cur *c, uint64_t n)
{
	if (c->st != ST_OK)
		return;
	if (c->off + n > c->end) {
		c->st = ST_BAD;
		return;
	}
	c->off += (uint32_t)n;
}

static uint64_t xdr_round(uint32_t n)
{
	return ((uint64_t)n + 3) & ~(uint64_t)3;
}

/* opaque<max> / string<max> that is never eligible; returns its length */
static uint32_t cur_opaque(struct nfs4_cur *c, uint32_t max)
{
	uint32_t n = cur_word(c);

	if (c->st == ST_OK && n > max)
		c->st = ST_BAD;
	cur_skip(c, xdr_round(n));
	return n;
}

/*
 * An eligible item.  Its data offset is compared before it is skipped:
 * the target's data is exactly what a pick may not read past.
 */
static void cur_item(struct nfs4_cur *c)
{
	uint32_t n = cur_word(c);

	if (c->st != ST_OK)
		return;
	if (c->off == c->target) {
		c->hit_len = n;
		c->st = ST_HIT;
		return;
	}
	c->items++;
	cur_skip(c, xdr_round(n));
}

/* bitmap4 = uint32<> */
static void cur_bitmap(struct nfs4_cur *c)
{
	uint32_t n = cur_word(c);

	cur_skip(c, (uint64_t)n * 4);
}

/* fattr4 = bitmap4 attrmask + opaque attr_vals<> */
static void cur_fattr(struct nfs4_cur *c)
{
	cur_bitmap(c);
	cur_opaque(c, UINT32_MAX);
}

/* lock_owner4 / open_owner4 = clientid4 + opaque owner<1024> */
static void cur_owner(struct nfs4_cur *c)
{
	cur_skip(c, 8);
	cur_opaque(c, NFS4_OPAQUE_LIMIT);
}

/* ---------------------------------------------------------------------- */
/* Arguments, after the fixed part the table gives                        */

static void a_opaque(struct nfs4_cur *c)
{
	cur_opaque(c, UINT32_MAX);
}

static void a_opaque2(struct nfs4_cur *c) /* RENAME */
{
	cur_opaque(c, UINT32_MAX);
	cur_opaque(c, UINT32_MAX);
}

static void a_fh(struct nfs4_cur *c) /* PUTFH */
{
	cur_opaque(c, NFS4_FHSIZE);
}

static void a_owner(struct nfs4_cur *c) /* LOCKT, RELEASE_LOCKOWNER */
{
	cur_owner(c);
}

static void a_bitmap(struct nfs4_cur *c) /* GETATTR, READDIR */
{
	cur_bitmap(c);
}

static void a_fattr(struct nfs4_cur *c) /* (N)VERIFY, SETATTR */
{
	cur_fattr(c);
}

static void a_write(struct nfs4_cur *c) /* WRITE4args.data */
{
	cur_item(c);
}

static void a_read(struct nfs4_cur *c) /* READ4args.count */
{
	c->count = cur_word(c);
}

static void a_stateids(struct nfs4_cur *c) /* TEST_STATEID */
{
	uint32_t n = cur_word(c);

	cur_skip(c, (uint64_t)n * NFS4_STATEID);
}

/* createtype4: only the NF4LNK arm carries an eligible item. */
static void a_create(struct nfs4_cur *c)
{
	uint32_t type = cur_word(c);

	if (type == NF4LNK)
		cur_item(c);
	else if (type == NF4BLK || type == NF4CHR)
		cur_skip(c, 8); /* specdata4 */
	/* every other type is void, "default: void" included */
	cur_opaque(c, UINT32_MAX); /* objname */
	cur_fattr(c);		   /* createattrs */
}

/* locker4: a bool switch, any non-zero word is TRUE as xdr_bool says. */
static void a_locker(struct nfs4_cur *c)
{
	if (cur_word(c)) {
		/* open_to_lock_owner4: seqids around the open stateid */
		cur_skip(c, 4 + NFS4_STATEID + 4);
		cur_owner(c);
	} else {
		cur_skip(c, NFS4_STATEID + 4); /* exist_lock_owner4 */
	}
}

/* openflag4: createhow4 has no default arm, so an unknown mode stops. */
static void a_openhow(struct nfs4_cur *c)
{
	if (cur_word(c) != OPEN4_CREATE)
		return; /* default: void */
	switch (cur_word(c)) {
	case UNCHECKED4:
	case GUARDED4:
		cur_fattr(c);
		break;
	case EXCLUSIVE4:
		cur_skip(c, 8);
		break;
	case EXCLUSIVE4_1:
		cur_skip(c, 8);
		cur_fattr(c);
		break;
	default:
		if (c->st == ST_OK)
			c->st = ST_UNKNOWN;
	}
}

/* OPEN4args after seqid, share_access, share_deny and the clientid */
static void a_open(struct nfs4_cur *c)
{
	cur_opaque(c, NFS4_OPAQUE_LIMIT); /* open_owner4.owner */
	a_openhow(c);
	switch (cur_word(c)) { /* open_claim4, no default */
	case CLAIM_NULL:
	case CLAIM_DELEGATE_PREV:
		cur_opaque(c, UINT32_MAX);
		break;
	case CLAIM_PREVIOUS:
		cur_skip(c, 4);
		break;
	case CLAIM_DELEGATE_CUR:
		cur_skip(c, NFS4_STATEID);
		cur_opaque(c, UINT32_MAX);
		break;
	case CLAIM_DELEG_CUR_FH:
		cur_skip(c, NFS4_STATEID);
		break;
	case CLAIM_FH:
	case CLAIM_DELEG_PREV_FH:
		break;
	default:
		if (c->st == ST_OK)
			c->st = ST_UNKNOWN;
	}
}

/* ---------------------------------------------------------------------- */
/* Results, after the status word                                          */

static void r_read(struct nfs4_cur *c, uint32_t status)
{
	if (status != NFS4_OK)
		return;
	cur_skip(c, 4); /* eof */
	cur_item(c);
}

static void r_readlink(struct nfs4_cur *c, uint32_t status)
{
	if (status == NFS4_OK)
		cur_item(c);
}

static void r_getfh(struct nfs4_cur *c, uint32_t status)
{
	if (status == NFS4_OK)
		cur_opaque(c, NFS4_FHSIZE);
}

static void r_getattr(struct nfs4_cur *c, uint32_t status)
{
	if (status == NFS4_OK)
		cur_fattr(c);
}

/* SETATTR4res carries attrsset whatever the status. */
static void r_setattr(struct nfs4_cur *c, uint32_t status)
{
	cur_bitmap(c);
}

static void r_create(struct nfs4_cur *c, uint32_t status)
{
	if (status != NFS4_OK)
		return;
	cur_skip(c, NFS4_CHANGE_INFO);
	cur_bitmap(c); /* attrset */
}

static void r_denied(struct nfs4_cur *c) /* LOCK4denied */
{
	cur_skip(c, 8 + 8 + 4);
	cur_owner(c);
}

static void r_lock(struct nfs4_cur *c, uint32_t status)
{
	if (status == NFS4_OK)
		cur_skip(c, NFS4_STATEID);
	else if (status == NFS4ERR_DENIED)
		r_denied(c);
}

static void r_lockt(struct nfs4_cur *c, uint32_t status)
{
	if (status == NFS4ERR_DENIED)
		r_denied(c);
}

static void r_test_stateid(struct nfs4_cur *c, uint32_t status)
{
	uint32_t n;

	if (status != NFS4_OK)
		return;
	n = cur_word(c);
	cur_skip(c, (uint64_t)n * 4);
}

/* ---------------------------------------------------------------------- */
/* The operations                                                          */

#define F_ARGS 0x1 /* arguments known */
#define F_RES  0x2 /* result known */
#define F_UNB  0x4 /* result has no upper bound */
#define F_SLOT 0x8 /* READ/READLINK: takes a Write chunk (V1-WC-3) */

struct nfs4_op {
	uint8_t args;	  /* octets of fixed arguments, before afn */
	uint8_t res;	  /* octets of a fixed NFS4_OK result (no rfn) */
	uint16_t res_max; /* most octets after the status, any status,
				 * eligible data left out */
	uint8_t flags;
	void (*afn)(struct nfs4_cur *c);
	void (*rfn)(struct nfs4_cur *c, uint32_t status);
};

/* fixed arguments; the result is the status and a fixed NFS4_OK arm */
#define FIX(a, r)                                         \
	{                                                 \
		(a), (r), (r), F_ARGS | F_RES, NULL, NULL \
	}
/* the same with variable arguments after the fixed ones */
#define VAR(a, afn, r)                                     \
	{                                                  \
		(a), (r), (r), F_ARGS | F_RES, (afn), NULL \
	}
/* a result parsed by rfn, at most max octets after the status */
#define RES(a, afn, rfn, max, fl)                                  \
	{                                                          \
		(a), 0, (max), F_ARGS | F_RES | (fl), (afn), (rfn) \
	}
/* arguments known, result not: pick_reply stops at it */
#define ARGS(a, afn)                           \
	{                                      \
		(a), 0, 0, F_ARGS, (afn), NULL \
	}

static const struct nfs4_op nfs4_ops[] = {
	[OP_ACCESS] = FIX(4, 8),
	[OP_CLOSE] = FIX(4 + NFS4_STATEID, NFS4_STATEID),
	[OP_COMMIT] = FIX(12, 8),
	[OP_CREATE] = RES(0, a_create, r_create, 0, F_UNB),
	[OP_DELEGPURGE] = FIX(8, 0),
	[OP_DELEGRETURN] = FIX(NFS4_STATEID, 0),
	[OP_GETATTR] = RES(0, a_bitmap, r_getattr, 0, F_UNB),
	[OP_GETFH] = RES(0, NULL, r_getfh, 4 + NFS4_FHSIZE, 0),
	[OP_LINK] = VAR(0, a_opaque, NFS4_CHANGE_INFO),
	[OP_LOCK] = RES(24, a_locker, r_lock, NFS4_DENIED_MAX, 0),
	[OP_LOCKT] = RES(20, a_owner, r_lockt, NFS4_DENIED_MAX, 0),
	[OP_LOCKU] = FIX(8 + NFS4_STATEID + 16, NFS4_STATEID),
	[OP_LOOKUP] = VAR(0, a_opaque, 0),
	[OP_LOOKUPP] = FIX(0, 0),
	[OP_NVERIFY] = VAR(0, a_fattr, 0),
	[OP_OPEN] = ARGS(12 + 8, a_open),
	[OP_OPENATTR] = FIX(4, 0),
	[OP_OPEN_CONFIRM] = FIX(NFS4_STATEID + 4, NFS4_STATEID),
	[OP_OPEN_DOWNGRADE] = FIX(NFS4_STATEID + 12, NFS4_STATEID),
	[OP_PUTFH] = VAR(0, a_fh, 0),
	[OP_PUTPUBFH] = FIX(0, 0),
	[OP_PUTROOTFH] = FIX(0, 0),
	[OP_READ] = RES(NFS4_STATEID + 8, a_read, r_read, 4 + 4 + 3, F_SLOT),
	[OP_READDIR] = ARGS(24, a_bitmap),
	[OP_READLINK] = RES(0, NULL, r_readlink, 4 + 3, F_SLOT),
	[OP_REMOVE] = VAR(0, a_opaque, NFS4_CHANGE_INFO),
	[OP_RENAME] = VAR(0, a_opaque2, 2 * NFS4_CHANGE_INFO),
	[OP_RENEW] = FIX(8, 0),
	[OP_RESTOREFH] = FIX(0, 0),
	[OP_SAVEFH] = FIX(0, 0),
	[OP_SECINFO] = ARGS(0, a_opaque),
	[OP_SETATTR] = RES(NFS4_STATEID, a_fattr, r_setattr, 0, F_UNB),
	[OP_SETCLIENTID_CONFIRM] = FIX(16, 0),
	[OP_VERIFY] = VAR(0, a_fattr, 0),
	[OP_WRITE] = VAR(NFS4_STATEID + 12, a_write, 16),
	[OP_RELEASE_LOCKOWNER] = VAR(0, a_owner, 0),
	[OP_DESTROY_SESSION] = FIX(16, 0),
	[OP_FREE_STATEID] = FIX(NFS4_STATEID, 0),
	[OP_SECINFO_NO_NAME] = ARGS(4, NULL),
	[OP_SEQUENCE] = FIX(32, 36),
	[OP_TEST_STATEID] = RES(0, a_stateids, r_test_stateid, 0, F_UNB),
	[OP_DESTROY_CLIENTID] = FIX(8, 0),
	[OP_RECLAIM_COMPLETE] = FIX(4, 0),
	[OP_ALLOCATE] = FIX(NFS4_STATEID + 16, 0),
	[OP_DEALLOCATE] = FIX(NFS4_STATEID + 16, 0),
	[OP_READ_PLUS] = ARGS(NFS4_STATEID + 12, NULL),
	[OP_SEEK] = FIX(NFS4_STATEID + 12, 12),
};

/* A server answers an opcode it does not know with ILLEGAL4res. */
static const struct nfs4_op nfs4_illegal = FIX(0, 0);

static const struct nfs4_op *nfs4_op(uint32_t opnum, uint8_t need)
{
	const struct nfs4_op *op;

	if (opnum == OP_ILLEGAL)
		return &nfs4_illegal;
	if (opnum >= ARRAY_SIZE(nfs4_ops))
		return NULL;
	op = &nfs4_ops[opnum];
	return (op->flags & need) == need ? op : NULL;
}

/* ---------------------------------------------------------------------- */
/* COMPOUND4args and COMPOUND4res                                          */

/* The tag, minorversion and argarray count; returns the count. */
static uint32_t call_head(struct nfs4_cur *c, uint32_t *taglen)
{
	uint32_t minor, n;

	*taglen = cur_opaque(c, UINT32_MAX);
	minor = cur_word(c);
	n = cur_word(c);
	if (c->st != ST_OK)
		return 0;
	if (n > NFS4_MAX_OPS) {
		c->st = ST_BAD;
		return 0;
	}
	if (minor > NFS4_MAX_MINOR) {
		c->st = ST_UNKNOWN;
		return 0;
	}
	return n;
}

/* One nfs_argop4; NULL once the walk has to stop. */
static const struct nfs4_op *call_op(struct nfs4_cur *c)
{
	const struct nfs4_op *op;
	uint32_t opnum = cur_word(c);

	if (c->st != ST_OK)
		return NULL;
	op = nfs4_op(opnum, F_ARGS);
	if (!op) {
		c->st = ST_UNKNOWN;
		return NULL;
	}
	cur_skip(c, op->args);
	if (op->afn)
		op->afn(c);
	return c->st == ST_OK ? op : NULL;
}

/* The status, tag and resarray count; returns the count. */
static uint32_t reply_head(struct nfs4_cur *c)
{
	uint32_t n;

	cur_skip(c, 4);
	cur_opaque(c, UINT32_MAX);
	n = cur_word(c);
	if (c->st == ST_OK && n > NFS4_MAX_OPS)
		c->st = ST_BAD;
	return c->st == ST_OK ? n : 0;
}

/* One nfs_resop4; NULL for a result this file does not know. */
static const struct nfs4_op *reply_op(struct nfs4_cur *c)
{
	const struct nfs4_op *op;
	uint32_t opnum = cur_word(c), status;

	if (c->st != ST_OK)
		return NULL;
	op = nfs4_op(opnum, F_RES);
	if (!op) {
		c->st = ST_UNKNOWN;
		return NULL;
	}
	status = cur_word(c);
	if (op->rfn)
		op->rfn(c, status);
	else if (status == NFS4_OK)
		cur_skip(c, op->res);
	return op;
}

/* WRITE data or CREATE NF4LNK linkdata; the slot is its rank among them. */
static int nfs4_pick_call(const struct rw_ddp_view *v, uint32_t off,
			  uint32_t len)
{
	struct nfs4_cur c;
	uint32_t i, n, taglen;

	cur_init(&c, v, off, off);
	n = call_head(&c, &taglen);
	for (i = 0; i < n && c.st == ST_OK; i++)
		call_op(&c);
	if (c.st != ST_HIT || c.hit_len != len)
		return -1;
	return (int)c.items;
}

/* READ or READLINK data; the slot counts every READ/READLINK before it. */
static int nfs4_pick_reply(const struct rw_ddp_view *v, uint32_t off,
			   uint32_t len)
{
	const struct nfs4_op *op;
	struct nfs4_cur c;
	uint32_t i, n, slot = 0;

	cur_init(&c, v, off, off);
	n = reply_head(&c);
	for (i = 0; i < n && c.st == ST_OK; i++) {
		op = reply_op(&c);
		if (c.st == ST_OK && (op->flags & F_SLOT))
			slot++;
	}
	if (c.st != ST_HIT || c.hit_len != len)
		return -1;
	return (int)slot;
}

static void plan_slot(struct ulb_plan *p, uint32_t room)
{
	if (p->nslots < ULB_PLAN_MAX) {
		p->room[p->nslots++] = room;
		return;
	}
	p->inline_room = room > UINT32_MAX - p->inline_room ?
				 UINT32_MAX :
				 p->inline_room + room;
}

/* One operation's slot and reply size; false once the walk must stop. */
static bool plan_op(struct nfs4_cur *c, struct ulb_plan *p, uint64_t *reply)
{
	const struct nfs4_op *op = call_op(c);

	if (!op)
		return false;
	if (op == &nfs4_ops[OP_READ])
		plan_slot(p, c->count);
	else if (op == &nfs4_ops[OP_READLINK])
		plan_slot(p, NFS4_PATH_ROOM);
	if (!(op->flags & F_RES)) {
		/* pick_reply stops at this result: no slot past it */
		c->st = ST_UNKNOWN;
		return false;
	}
	if (op->flags & F_UNB)
		*reply = UINT64_MAX;
	else if (*reply != UINT64_MAX)
		*reply += 4 + 4 + op->res_max; /* resop, status, result */
	return true;
}

static int nfs4_plan(const struct rw_ddp_view *args, uint32_t len,
		     struct ulb_plan *p)
{
	struct nfs4_cur c;
	uint32_t i, n, taglen;
	uint64_t reply;

	memset(p, 0, sizeof(*p));
	cur_init(&c, args, len, NFS4_NO_TARGET);
	n = call_head(&c, &taglen);
	/* status, the tag echoed, resarray count */
	reply = 4 + 4 + xdr_round(taglen) + 4;
	for (i = 0; i < n; i++)
		if (!plan_op(&c, p, &reply))
			break;
	if (c.st == ST_BAD || (c.st == ST_OK && c.off != len)) {
		memset(p, 0, sizeof(*p));
		return EINVAL;
	}
	if (c.st == ST_OK && reply <= UINT32_MAX)
		p->reply_max = (uint32_t)reply;
	return 0;
}

const struct ulb_walker ulb_nfs4_walker = {
	.name = "nfs4",
	.pick_call = nfs4_pick_call,
	.pick_reply = nfs4_pick_reply,
	.plan = nfs4_plan,
};
