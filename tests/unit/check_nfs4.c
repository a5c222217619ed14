/*
 * check_nfs4.c - the built-in NFSv4 COMPOUND walker (src/ulb/ulb_nfs4.c),
 * RFC 8267 section 6: DDP-eligible items, Write chunk slots (V1-WC-3) and
 * the reply plan.
 *
 * Every COMPOUND here is encoded by rpcgen code compiled from the RFC XDR
 * (tests/unit/ulb/nfs4.x), and the eligible data is found in the encoding
 * by its contents, so the walker is checked against real XDR and not
 * against offsets the test computed the way the walker does.  The walker
 * sees the encoding through a view that, like a stream's, refuses every
 * word at or past the offset asked about, and counts any attempt.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <rpc/rpc.h>

#include "compiler.h"
#include "ulb/ulb.h"
#include "tests/unit/ulb/nfs4.h" /* rpcgen output, in the build dir */
#include "check_util.h"

#define BUF_MAX 16384u

static const struct ulb_walker *W = &ulb_nfs4_walker;

/* ---------------------------------------------------------------------- */
/* A flat view, encoders, finders                                          */

struct fview {
	struct rw_ddp_view v;
	const uint8_t *buf;
	uint32_t len;	  /* octets in buf */
	uint32_t seen;	  /* a stream has seen buf[0..seen) */
	unsigned *beyond; /* reads attempted at or past seen */
};

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static void put32(uint8_t *p, uint32_t w)
{
	p[0] = w >> 24;
	p[1] = w >> 16;
	p[2] = w >> 8;
	p[3] = w;
}

static bool fview_word(const struct rw_ddp_view *v, uint32_t off, uint32_t *w)
{
	const struct fview *f = v->s;

	if ((uint64_t)off + 4 > f->seen) {
		(*f->beyond)++;
		return false;
	}
	if ((uint64_t)off + 4 > f->len)
		return false;
	*w = be32(f->buf + off);
	return true;
}

static void fview_init(struct fview *f, const uint8_t *buf, uint32_t len,
		       uint32_t seen, unsigned *beyond)
{
	f->v.word = fview_word;
	f->v.s = f;
	f->buf = buf;
	f->len = len;
	f->seen = seen;
	f->beyond = beyond;
}

/* A pick as a stream makes it: everything before off has been seen. */
static int pick(rw_ddp_pick_fn fn, const uint8_t *buf, uint32_t len,
		uint32_t off, uint32_t ilen)
{
	struct fview f;
	unsigned beyond = 0;
	int r;

	fview_init(&f, buf, len, off, &beyond);
	r = fn(&f.v, off, ilen);
	ck_assert_uint_eq(beyond, 0);
	return r;
}

static int plan(const uint8_t *buf, uint32_t len, struct ulb_plan *p)
{
	struct fview f;
	unsigned beyond = 0;

	fview_init(&f, buf, len, len, &beyond);
	return W->plan(&f.v, len, p);
}

/* *p through the rpcgen routine fn into buf (BUF_MAX, zeroed first). */
static uint32_t encode(xdrproc_t fn, void *p, uint8_t *buf)
{
	XDR x;
	uint32_t n;

	memset(buf, 0, BUF_MAX);
	xdrmem_create(&x, (char *)buf, BUF_MAX, XDR_ENCODE);
	ck_assert(fn(&x, p));
	n = xdr_getpos(&x);
	xdr_destroy(&x);
	return n;
}

static uint32_t enc_args(COMPOUND4args *a, uint8_t *buf)
{
	return encode((xdrproc_t)xdr_COMPOUND4args, a, buf);
}

static uint32_t enc_res(COMPOUND4res *r, uint8_t *buf)
{
	return encode((xdrproc_t)xdr_COMPOUND4res, r, buf);
}

/* The body offset of the one occurrence of s in buf: an item's data. */
static uint32_t find(const uint8_t *buf, uint32_t len, const char *s)
{
	uint32_t n = (uint32_t)strlen(s), i, at = UINT32_MAX;

	for (i = 0; i + n <= len; i++) {
		if (memcmp(buf + i, s, n))
			continue;
		ck_assert_msg(at == UINT32_MAX, "%s encoded twice", s);
		at = i;
	}
	ck_assert_msg(at != UINT32_MAX, "%s not encoded", s);
	ck_assert_uint_eq(at % 4, 0);
	ck_assert_uint_eq(be32(buf + at - 4), n); /* its length word */
	return at;
}

struct want {
	uint32_t off;
	uint32_t len;
	int slot;
};

/*
 * The walker says yes exactly at the wanted items (RFC 8267 section 6.1):
 * every other 4-aligned offset is refused, with the length word before it
 * (an opaque's data: tag, file handle, names, attrlist), 12 (a stateid's
 * other), 8 and 16 (verifiers, session ids); so is a wanted offset with
 * another length, or the offset of its length word.
 */
static void sweep(rw_ddp_pick_fn fn, const uint8_t *buf, uint32_t len,
		  const struct want *w, unsigned nw)
{
	uint32_t off, lens[4];
	unsigned i, k;
	int exp;

	for (i = 0; i < nw; i++) {
		ck_assert_int_eq(pick(fn, buf, len, w[i].off, w[i].len),
				 w[i].slot);
		ck_assert_int_eq(pick(fn, buf, len, w[i].off, w[i].len + 1),
				 -1);
		ck_assert_int_eq(pick(fn, buf, len, w[i].off - 4, w[i].len),
				 -1);
	}
	for (off = 0; off <= len; off += 4) {
		lens[0] = off >= 4 ? be32(buf + off - 4) : 0;
		lens[1] = 12;
		lens[2] = 8;
		lens[3] = 16;
		for (k = 0; k < 4; k++) {
			exp = -1;
			for (i = 0; i < nw; i++)
				if (w[i].off == off && w[i].len == lens[k])
					exp = w[i].slot;
			ck_assert_msg(pick(fn, buf, len, off, lens[k]) == exp,
				      "offset %u length %u", off, lens[k]);
		}
	}
}

/* An eligible item as a test names it: its data, which find() locates
 * (its length is the data's), and the slot the walker must give it. */
struct item {
	const char *data;
	int slot;
};

#define ITEMS_MAX 4

/* sweep() with the items it[0..n) of buf. */
static void sweep_items(rw_ddp_pick_fn fn, const uint8_t *buf, uint32_t len,
			const struct item *it, unsigned n)
{
	struct want w[ITEMS_MAX];
	unsigned i;

	ck_assert_uint_le(n, ITEMS_MAX);
	for (i = 0; i < n; i++) {
		w[i].off = find(buf, len, it[i].data);
		w[i].len = (uint32_t)strlen(it[i].data);
		w[i].slot = it[i].slot;
	}
	sweep(fn, buf, len, w, n);
}

/* ---------------------------------------------------------------------- */
/* Building COMPOUNDs                                                      */

#define OPS_MAX 200

struct cargs {
	COMPOUND4args a;
	nfs_argop4 op[OPS_MAX];
};

struct cres {
	COMPOUND4res r;
	nfs_resop4 op[OPS_MAX];
};

static void ustr(utf8string *u, const char *s)
{
	u->utf8string_len = (u_int)strlen(s);
	u->utf8string_val = (char *)s;
}

static void cargs_init(struct cargs *c, const char *tag, unsigned minor)
{
	memset(c, 0, sizeof(*c));
	ustr(&c->a.tag, tag);
	c->a.minorversion = minor;
	c->a.argarray.argarray_val = c->op;
}

static nfs_argop4 *add_arg(struct cargs *c, nfs_opnum4 opnum)
{
	nfs_argop4 *op;

	ck_assert_uint_lt(c->a.argarray.argarray_len, OPS_MAX);
	op = &c->op[c->a.argarray.argarray_len++];
	op->argop = opnum;
	return op;
}

static void cres_init(struct cres *c, const char *tag, nfsstat4 status)
{
	memset(c, 0, sizeof(*c));
	c->r.status = status;
	ustr(&c->r.tag, tag);
	c->r.resarray.resarray_val = c->op;
}

static nfs_resop4 *add_res(struct cres *c, nfs_opnum4 opnum)
{
	nfs_resop4 *op;

	ck_assert_uint_lt(c->r.resarray.resarray_len, OPS_MAX);
	op = &c->op[c->r.resarray.resarray_len++];
	op->resop = opnum;
	return op;
}

static void stateid(stateid4 *s)
{
	s->seqid = 1;
	memcpy(s->other, "stateidOther", NFS4_OTHER_SIZE);
}

static nfs4_uint32 bits[3] = { 0x0010011a, 0x00b0a23a, 0 };

static void fattr(fattr4 *f, const char *vals)
{
	f->attrmask.bitmap4_len = 2;
	f->attrmask.bitmap4_val = bits;
	f->attr_vals.attrlist4_len = (u_int)strlen(vals);
	f->attr_vals.attrlist4_val = (char *)vals;
}

static void arg_sequence(struct cargs *c)
{
	SEQUENCE4args *s = &add_arg(c, OP_SEQUENCE)->nfs_argop4_u.opsequence;

	memcpy(s->sa_sessionid, "sessionid-16-oct", NFS4_SESSIONID_SIZE);
	s->sa_sequenceid = 9;
	s->sa_highest_slotid = 63;
}

static void arg_putfh(struct cargs *c, const char *fh)
{
	nfs_fh4 *f = &add_arg(c, OP_PUTFH)->nfs_argop4_u.opputfh.object;

	f->nfs_fh4_len = (u_int)strlen(fh);
	f->nfs_fh4_val = (char *)fh;
}

static void arg_write(struct cargs *c, const char *data)
{
	WRITE4args *w = &add_arg(c, OP_WRITE)->nfs_argop4_u.opwrite;

	stateid(&w->stateid);
	w->offset = 4096;
	w->stable = FILE_SYNC4;
	w->data.data_len = (u_int)strlen(data);
	w->data.data_val = (char *)data;
}

static void arg_read(struct cargs *c, uint32_t count)
{
	READ4args *r = &add_arg(c, OP_READ)->nfs_argop4_u.opread;

	stateid(&r->stateid);
	r->offset = 8192;
	r->count = count;
}

static void arg_getattr(struct cargs *c)
{
	bitmap4 *b =
		&add_arg(c, OP_GETATTR)->nfs_argop4_u.opgetattr.attr_request;

	b->bitmap4_len = 2;
	b->bitmap4_val = bits;
}

static void arg_create(struct cargs *c, nfs_ftype4 type, const char *link,
		       const char *name)
{
	CREATE4args *a = &add_arg(c, OP_CREATE)->nfs_argop4_u.opcreate;

	a->objtype.type = type;
	if (type == NF4LNK)
		ustr(&a->objtype.createtype4_u.linkdata, link);
	else if (type == NF4BLK || type == NF4CHR)
		a->objtype.createtype4_u.devdata.specdata1 = 8;
	ustr(&a->objname, name);
	fattr(&a->createattrs, "createattrs-vals");
}

static void res_sequence(struct cres *c)
{
	SEQUENCE4res *s = &add_res(c, OP_SEQUENCE)->nfs_resop4_u.opsequence;

	memcpy(s->SEQUENCE4res_u.sr_resok4.sr_sessionid, "sessionid-16-oct",
	       NFS4_SESSIONID_SIZE);
}

static void res_read(struct cres *c, nfsstat4 st, const char *data)
{
	READ4res *r = &add_res(c, OP_READ)->nfs_resop4_u.opread;

	r->status = st;
	if (st == NFS4_OK) {
		r->READ4res_u.resok4.eof = TRUE;
		r->READ4res_u.resok4.data.data_len = (u_int)strlen(data);
		r->READ4res_u.resok4.data.data_val = (char *)data;
	}
}

static void res_readlink(struct cres *c, nfsstat4 st, const char *link)
{
	READLINK4res *r = &add_res(c, OP_READLINK)->nfs_resop4_u.opreadlink;

	r->status = st;
	if (st == NFS4_OK)
		ustr(&r->READLINK4res_u.resok4.link, link);
}

static void res_getattr(struct cres *c, const char *vals)
{
	GETATTR4res *g = &add_res(c, OP_GETATTR)->nfs_resop4_u.opgetattr;

	fattr(&g->GETATTR4res_u.resok4.obj_attributes, vals);
}

static void res_getfh(struct cres *c, const char *fh)
{
	nfs_fh4 *f = &add_res(c, OP_GETFH)
			      ->nfs_resop4_u.opgetfh.GETFH4res_u.resok4.object;

	f->nfs_fh4_len = (u_int)strlen(fh);
	f->nfs_fh4_val = (char *)fh;
}

/* Encode c into buf and sweep pick_call with the items; the length. */
static uint32_t sweep_call(struct cargs *c, uint8_t *buf, const struct item *it,
			   unsigned n)
{
	uint32_t len = enc_args(&c->a, buf);

	sweep_items(W->pick_call, buf, len, it, n);
	return len;
}

/* Encode c into buf and sweep pick_reply with the items; the length. */
static uint32_t sweep_reply(struct cres *c, uint8_t *buf, const struct item *it,
			    unsigned n)
{
	uint32_t len = enc_res(&c->r, buf);

	sweep_items(W->pick_reply, buf, len, it, n);
	return len;
}

/* plan() of the call c succeeds, with nslots slots. */
static void plan_call(struct cargs *c, struct ulb_plan *p, unsigned nslots)
{
	static uint8_t buf[BUF_MAX];
	uint32_t len = enc_args(&c->a, buf);

	ck_assert_int_eq(plan(buf, len, p), 0);
	ck_assert_uint_eq(p->nslots, nslots);
}

/* ---------------------------------------------------------------------- */
/* Calls: WRITE data and CREATE NF4LNK linkdata (RFC 8267 section 6.1)     */

START_TEST(test_call_sequence_putfh_write)
{
	static const struct item it = { "WRITE-DATA-0123456789", 0 };
	static uint8_t buf[BUF_MAX];
	struct cargs c;
	uint32_t len;

	cargs_init(&c, "write-tag", 1);
	arg_sequence(&c);
	arg_putfh(&c, "filehandle-of-the-file");
	arg_write(&c, "WRITE-DATA-0123456789");
	len = sweep_call(&c, buf, &it, 1);
	/* a call is never a reply: no READ data in it */
	ck_assert_int_eq(pick(W->pick_reply, buf, len, find(buf, len, it.data),
			      21),
			 -1);
}
END_TEST

START_TEST(test_call_putfh_write_getattr)
{
	static const struct item it[] = {
		{ "first-write", 0 },
		{ "second-write-payload", 1 },
	};
	static uint8_t buf[BUF_MAX];
	struct cargs c;

	cargs_init(&c, "", 0);
	arg_putfh(&c, "fh-1");
	arg_write(&c, "first-write");
	arg_getattr(&c);
	arg_write(&c, "second-write-payload");
	arg_getattr(&c);
	sweep_call(&c, buf, it, ARRAY_SIZE(it));
}
END_TEST

START_TEST(test_call_create_symlink)
{
	static const struct item it[] = {
		{ "write-before-link", 0 },
		{ "../the/link/target", 1 },
		{ "write-after-link", 2 },
	};
	static uint8_t buf[BUF_MAX];
	struct cargs c;

	/* the other createtype4 arms carry nothing eligible */
	cargs_init(&c, "create", 0);
	arg_putfh(&c, "dir-fh");
	arg_create(&c, NF4DIR, NULL, "a-directory");
	arg_create(&c, NF4BLK, NULL, "a-block-dev");
	arg_create(&c, NF4REG, NULL, "regular"); /* default arm */
	arg_write(&c, "write-before-link");
	arg_create(&c, NF4LNK, "../the/link/target", "the-link-name");
	add_arg(&c, OP_GETFH);
	arg_create(&c, NF4SOCK, NULL, "a-socket");
	arg_write(&c, "write-after-link");
	sweep_call(&c, buf, it, ARRAY_SIZE(it));
}
END_TEST

/* A tag of odd length is padded; the offsets after it still line up. */
START_TEST(test_call_odd_tag)
{
	static const char *tags[] = { "a", "ab", "abc", "abcde", "" };
	static const struct item it = { "data-after-odd-tag", 0 };
	static uint8_t buf[BUF_MAX];
	struct cargs c;
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(tags); i++) {
		cargs_init(&c, tags[i], 2);
		arg_putfh(&c, "fh5!!"); /* odd too */
		arg_write(&c, "data-after-odd-tag");
		sweep_call(&c, buf, &it, 1);
	}
}
END_TEST

/* Every operation whose arguments the walker knows, then a WRITE. */
static void arg_every_op(struct cargs *c)
{
	nfs_argop4 *op;
	static stateid4 ids[2];
	static char owner[] = "lock-owner-name";
	static const nfs_opnum4 voids[] = {
		OP_GETFH,    OP_LOOKUPP,   OP_PUTPUBFH, OP_PUTROOTFH,
		OP_READLINK, OP_RESTOREFH, OP_SAVEFH,	OP_ILLEGAL,
	};
	static const nfs_opnum4 fixed[] = {
		OP_ACCESS,
		OP_CLOSE,
		OP_COMMIT,
		OP_DELEGPURGE,
		OP_DELEGRETURN,
		OP_LOCKU,
		OP_OPENATTR,
		OP_OPEN_CONFIRM,
		OP_OPEN_DOWNGRADE,
		OP_RENEW,
		OP_SETCLIENTID_CONFIRM,
		OP_DESTROY_SESSION,
		OP_FREE_STATEID,
		OP_SECINFO_NO_NAME,
		OP_DESTROY_CLIENTID,
		OP_RECLAIM_COMPLETE,
		OP_ALLOCATE,
		OP_DEALLOCATE,
		OP_READ_PLUS,
		OP_SEEK,
	};
	unsigned i;

	arg_sequence(c);
	for (i = 0; i < ARRAY_SIZE(voids); i++)
		add_arg(c, voids[i]);
	for (i = 0; i < ARRAY_SIZE(fixed); i++)
		add_arg(c, fixed[i]); /* all zero: sizes are what count */
	ustr(&add_arg(c, OP_LINK)->nfs_argop4_u.oplink.newname, "link-nm");
	ustr(&add_arg(c, OP_LOOKUP)->nfs_argop4_u.oplookup.objname, "lkup");
	ustr(&add_arg(c, OP_REMOVE)->nfs_argop4_u.opremove.target, "rm-me");
	op = add_arg(c, OP_RENAME);
	ustr(&op->nfs_argop4_u.oprename.oldname, "old-name");
	ustr(&op->nfs_argop4_u.oprename.newname, "new-name!");
	ustr(&add_arg(c, OP_SECINFO)->nfs_argop4_u.opsecinfo.name, "sec");
	fattr(&add_arg(c, OP_NVERIFY)->nfs_argop4_u.opnverify.obj_attributes,
	      "nverify");
	fattr(&add_arg(c, OP_VERIFY)->nfs_argop4_u.opverify.obj_attributes,
	      "verify-attrs");
	fattr(&add_arg(c, OP_SETATTR)->nfs_argop4_u.opsetattr.obj_attributes,
	      "setattr-a");
	op = add_arg(c, OP_READDIR);
	op->nfs_argop4_u.opreaddir.attr_request.bitmap4_len = 3;
	op->nfs_argop4_u.opreaddir.attr_request.bitmap4_val = bits;
	op = add_arg(c, OP_LOCK); /* new lock owner */
	op->nfs_argop4_u.oplock.locker.new_lock_owner = TRUE;
	op->nfs_argop4_u.oplock.locker.locker4_u.open_owner.lock_owner.owner
		.owner_len = sizeof(owner) - 1;
	op->nfs_argop4_u.oplock.locker.locker4_u.open_owner.lock_owner.owner
		.owner_val = owner;
	add_arg(c, OP_LOCK); /* existing lock owner */
	op = add_arg(c, OP_LOCKT);
	op->nfs_argop4_u.oplockt.owner.owner.owner_len = 3;
	op->nfs_argop4_u.oplockt.owner.owner.owner_val = owner;
	op = add_arg(c, OP_RELEASE_LOCKOWNER);
	op->nfs_argop4_u.oprelease_lockowner.lock_owner.owner.owner_len = 5;
	op->nfs_argop4_u.oprelease_lockowner.lock_owner.owner.owner_val = owner;
	op = add_arg(c, OP_TEST_STATEID);
	op->nfs_argop4_u.optest_stateid.ts_stateids.ts_stateids_len = 2;
	op->nfs_argop4_u.optest_stateid.ts_stateids.ts_stateids_val = ids;
	arg_read(c, 1000);
}

/* OPEN with every openflag4/createhow4 and open_claim4 arm. */
static void arg_opens(struct cargs *c)
{
	static const struct {
		opentype4 type;
		createmode4 mode;
		open_claim_type4 claim;
	} o[] = {
		{ OPEN4_CREATE, UNCHECKED4, CLAIM_NULL },
		{ OPEN4_CREATE, GUARDED4, CLAIM_PREVIOUS },
		{ OPEN4_CREATE, EXCLUSIVE4, CLAIM_DELEGATE_CUR },
		{ OPEN4_CREATE, EXCLUSIVE4_1, CLAIM_DELEGATE_PREV },
		{ OPEN4_NOCREATE, 0, CLAIM_FH },
		{ OPEN4_NOCREATE, 0, CLAIM_DELEG_CUR_FH },
		{ OPEN4_NOCREATE, 0, CLAIM_DELEG_PREV_FH },
	};
	static char owner[] = "open-owner";
	OPEN4args *a;
	createhow4 *h;
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(o); i++) {
		a = &add_arg(c, OP_OPEN)->nfs_argop4_u.opopen;
		a->owner.owner.owner_len = (u_int)i + 3;
		a->owner.owner.owner_val = owner;
		a->openhow.opentype = o[i].type;
		h = &a->openhow.openflag4_u.how;
		h->mode = o[i].mode;
		if (o[i].mode <= GUARDED4)
			fattr(&h->createhow4_u.createattrs, "open-create");
		if (o[i].mode == EXCLUSIVE4_1)
			fattr(&h->createhow4_u.ch_createboth.cva_attrs, "both");
		a->claim.claim = o[i].claim;
		if (o[i].claim == CLAIM_NULL)
			ustr(&a->claim.open_claim4_u.file, "open-file");
		if (o[i].claim == CLAIM_DELEGATE_CUR)
			ustr(&a->claim.open_claim4_u.delegate_cur_info.file,
			     "deleg-cur");
		if (o[i].claim == CLAIM_DELEGATE_PREV)
			ustr(&a->claim.open_claim4_u.file_delegate_prev,
			     "deleg-prev");
	}
}

START_TEST(test_call_every_op)
{
	static const struct item it[] = {
		{ "every-op-link-target", 0 },
		{ "every-op-write-data", 1 },
		{ "last-write", 2 },
	};
	static uint8_t buf[BUF_MAX];
	struct cargs c;

	cargs_init(&c, "every-op", 2);
	arg_every_op(&c);
	arg_create(&c, NF4LNK, "every-op-link-target", "ln");
	arg_opens(&c);
	arg_write(&c, "every-op-write-data");
	arg_create(&c, NF4CHR, NULL, "chr");
	arg_write(&c, "last-write");
	sweep_call(&c, buf, it, ARRAY_SIZE(it));
}
END_TEST

/*
 * An operation the walker does not know ends the walk: nothing after it is
 * eligible.  rpcgen cannot encode one the excerpt leaves out, so a void
 * GETFH's opcode is overwritten with EXCHANGE_ID's.
 */
START_TEST(test_call_unknown_op)
{
	static uint8_t buf[BUF_MAX];
	struct cargs c;
	struct ulb_plan p;
	uint32_t len, d, op;

	cargs_init(&c, "unk", 1);
	arg_putfh(&c, "fh");
	arg_read(&c, 300);
	add_arg(&c, OP_GETFH);
	arg_read(&c, 400);
	arg_write(&c, "write-after-unknown");
	len = enc_args(&c.a, buf);
	d = find(buf, len, "write-after-unknown");
	ck_assert_int_eq(pick(W->pick_call, buf, len, d, 19), 0);
	op = 4 + 4 + 4 + 4 + (4 + 4 + 4) + (4 + 28); /* GETFH opcode */
	ck_assert_uint_eq(be32(buf + op), OP_GETFH);
	put32(buf + op, OP_EXCHANGE_ID);
	ck_assert_int_eq(pick(W->pick_call, buf, len, d, 19), -1);
	sweep(W->pick_call, buf, len, NULL, 0);
	/* the plan keeps the READ before it, knows nothing of the rest */
	ck_assert_int_eq(plan(buf, len, &p), 0);
	ck_assert_uint_eq(p.nslots, 1);
	ck_assert_uint_eq(p.room[0], 300);
	ck_assert_uint_eq(p.reply_max, 0);
	ck_assert_uint_eq(p.inline_room, 0);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Replies: READ and READLINK data; slot = i-th READ/READLINK (V1-WC-3)    */

START_TEST(test_reply_two_reads)
{
	static const struct item it[] = {
		{ "first-read-data", 0 },
		{ "second-read-data!", 1 },
	};
	static uint8_t buf[BUF_MAX];
	struct cres c;
	uint32_t len;

	cres_init(&c, "two-reads", NFS4_OK);
	res_sequence(&c);
	add_res(&c, OP_PUTFH);
	res_read(&c, NFS4_OK, "first-read-data");
	res_getattr(&c, "attrs-between");
	res_read(&c, NFS4_OK, "second-read-data!");
	len = sweep_reply(&c, buf, it, ARRAY_SIZE(it));
	/* a reply is never a call */
	ck_assert_int_eq(pick(W->pick_call, buf, len,
			      find(buf, len, it[0].data), 15),
			 -1);
}
END_TEST

/* A READ that fails still takes its Write chunk (RFC 8267 section 6.4). */
START_TEST(test_reply_failed_read)
{
	static const struct item it[] = {
		{ "ok-read-after-failed", 1 },
		{ "/link/after/failed", 3 },
	};
	static uint8_t buf[BUF_MAX];
	struct cres c;

	cres_init(&c, "t", NFS4ERR_IO);
	add_res(&c, OP_PUTFH);
	res_read(&c, NFS4ERR_IO, NULL);
	res_read(&c, NFS4_OK, "ok-read-after-failed");
	res_readlink(&c, NFS4ERR_INVAL, NULL);
	res_readlink(&c, NFS4_OK, "/link/after/failed");
	sweep_reply(&c, buf, it, ARRAY_SIZE(it));
}
END_TEST

START_TEST(test_reply_readlink)
{
	static const struct item it = { "some/where/else", 0 };
	static uint8_t buf[BUF_MAX];
	struct cres c;

	cres_init(&c, "readlink", NFS4_OK);
	res_sequence(&c);
	add_res(&c, OP_PUTFH);
	res_readlink(&c, NFS4_OK, "some/where/else");
	sweep_reply(&c, buf, &it, 1);
}
END_TEST

/*
 * Every result the walker knows, with the statuses whose results carry
 * more than the status (SETATTR's attrsset always, LOCK/LOCKT's
 * LOCK4denied), then a READ: it is found, with the slot of the READs and
 * READLINKs before it.
 */
static void res_every_op(struct cres *c)
{
	static const nfs_opnum4 ok[] = {
		OP_ACCESS,
		OP_CLOSE,
		OP_COMMIT,
		OP_DELEGPURGE,
		OP_DELEGRETURN,
		OP_LINK,
		OP_LOCK,
		OP_LOCKU,
		OP_LOOKUP,
		OP_LOOKUPP,
		OP_NVERIFY,
		OP_OPENATTR,
		OP_OPEN_CONFIRM,
		OP_OPEN_DOWNGRADE,
		OP_PUTFH,
		OP_PUTPUBFH,
		OP_PUTROOTFH,
		OP_REMOVE,
		OP_RENAME,
		OP_RENEW,
		OP_RESTOREFH,
		OP_SAVEFH,
		OP_SETCLIENTID_CONFIRM,
		OP_VERIFY,
		OP_WRITE,
		OP_RELEASE_LOCKOWNER,
		OP_DESTROY_SESSION,
		OP_FREE_STATEID,
		OP_DESTROY_CLIENTID,
		OP_RECLAIM_COMPLETE,
		OP_ALLOCATE,
		OP_DEALLOCATE,
		OP_SEEK,
		OP_LOCKT,
		OP_CREATE,
		OP_TEST_STATEID,
	};
	static char owner[] = "denied-owner";
	static nfsstat4 codes[3];
	nfs_resop4 *op;
	unsigned i;

	res_sequence(c);
	for (i = 0; i < ARRAY_SIZE(ok); i++)
		add_res(c, ok[i]); /* NFS4_OK, zero results */
	/* the same with an error: nothing after the status */
	for (i = 0; i < ARRAY_SIZE(ok); i++)
		add_res(c, ok[i])->nfs_resop4_u.opaccess.status = NFS4ERR_IO;
	op = add_res(c, OP_SETATTR);
	op->nfs_resop4_u.opsetattr.status = NFS4ERR_INVAL;
	op->nfs_resop4_u.opsetattr.attrsset.bitmap4_len = 2;
	op->nfs_resop4_u.opsetattr.attrsset.bitmap4_val = bits;
	op = add_res(c, OP_LOCK);
	op->nfs_resop4_u.oplock.status = NFS4ERR_DENIED;
	op->nfs_resop4_u.oplock.LOCK4res_u.denied.owner.owner.owner_len = 12;
	op->nfs_resop4_u.oplock.LOCK4res_u.denied.owner.owner.owner_val = owner;
	op = add_res(c, OP_LOCKT);
	op->nfs_resop4_u.oplockt.status = NFS4ERR_DENIED;
	op->nfs_resop4_u.oplockt.LOCKT4res_u.denied.owner.owner.owner_len = 5;
	op->nfs_resop4_u.oplockt.LOCKT4res_u.denied.owner.owner.owner_val =
		owner;
	op = add_res(c, OP_CREATE);
	op->nfs_resop4_u.opcreate.CREATE4res_u.resok4.attrset.bitmap4_len = 1;
	op->nfs_resop4_u.opcreate.CREATE4res_u.resok4.attrset.bitmap4_val =
		bits;
	op = add_res(c, OP_TEST_STATEID);
	op->nfs_resop4_u.optest_stateid.TEST_STATEID4res_u.tsr_resok4
		.tsr_status_codes.tsr_status_codes_len = 3;
	op->nfs_resop4_u.optest_stateid.TEST_STATEID4res_u.tsr_resok4
		.tsr_status_codes.tsr_status_codes_val = codes;
	res_getattr(c, "getattr-attrlist");
	res_getfh(c, "getfh-handle");
	add_res(c, OP_ILLEGAL)->nfs_resop4_u.opillegal.status =
		NFS4ERR_OP_ILLEGAL;
}

START_TEST(test_reply_every_op)
{
	static const struct item it[] = {
		{ "read-before-all", 0 },
		{ "readlink-after-all", 2 },
		{ "read-after-all", 3 },
	};
	static uint8_t buf[BUF_MAX];
	struct cres c;

	cres_init(&c, "every-result", NFS4_OK);
	res_read(&c, NFS4_OK, "read-before-all");
	res_every_op(&c);
	res_readlink(&c, NFS4ERR_IO, NULL);
	res_readlink(&c, NFS4_OK, "readlink-after-all");
	res_every_op(&c);
	res_read(&c, NFS4_OK, "read-after-all");
	sweep_reply(&c, buf, it, ARRAY_SIZE(it));
}
END_TEST

/*
 * Results the walker does not know end the walk, even a bare error status
 * (the walker cannot know it is bare without knowing the result).
 */
START_TEST(test_reply_unknown_result)
{
	static const nfs_opnum4 unk[] = {
		OP_OPEN,      OP_READDIR, OP_SECINFO, OP_SECINFO_NO_NAME,
		OP_READ_PLUS,
	};
	static uint8_t buf[BUF_MAX];
	struct cres c;
	uint32_t len, d, op;
	unsigned i;

	for (i = 0; i < 2 * ARRAY_SIZE(unk); i++) {
		cres_init(&c, "", NFS4_OK);
		add_res(&c, OP_PUTFH);
		add_res(&c, unk[i / 2])->nfs_resop4_u.opopen.status =
			i % 2 ? NFS4ERR_IO : NFS4_OK;
		res_read(&c, NFS4_OK, "read-after-unknown-result");
		len = enc_res(&c.r, buf);
		find(buf, len, "read-after-unknown-result");
		sweep(W->pick_reply, buf, len, NULL, 0);
	}

	/* an unknown opcode: a PUTFH result made EXCHANGE_ID's */
	cres_init(&c, "", NFS4_OK);
	add_res(&c, OP_PUTFH);
	add_res(&c, OP_PUTFH);
	res_read(&c, NFS4_OK, "read-after-unknown");
	len = enc_res(&c.r, buf);
	d = find(buf, len, "read-after-unknown");
	ck_assert_int_eq(pick(W->pick_reply, buf, len, d, 18), 0);
	op = 4 + 4 + 4 + 8;
	ck_assert_uint_eq(be32(buf + op), OP_PUTFH);
	put32(buf + op, OP_EXCHANGE_ID);
	sweep(W->pick_reply, buf, len, NULL, 0);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* plan(): rooms, reply_max, inline_room                                   */

START_TEST(test_plan_rooms)
{
	struct cargs c;
	struct ulb_plan p;

	cargs_init(&c, "plan", 1);
	arg_sequence(&c);
	arg_putfh(&c, "fh");
	arg_read(&c, 65536);
	add_arg(&c, OP_READLINK);
	arg_write(&c, "not-a-result");
	arg_read(&c, 0); /* room 0, the slot is kept */
	arg_read(&c, 17);
	plan_call(&c, &p, 4);
	ck_assert_uint_eq(p.room[0], 65536);
	ck_assert_uint_eq(p.room[1], 4096); /* Linux NFS4_MAXPATHLEN */
	ck_assert_uint_eq(p.room[2], 0);
	ck_assert_uint_eq(p.room[3], 17);
	ck_assert_uint_eq(p.inline_room, 0);
	ck_assert_uint_gt(p.reply_max, 0);

	/* an unbounded result: GETATTR */
	arg_getattr(&c);
	plan_call(&c, &p, 4);
	ck_assert_uint_eq(p.reply_max, 0);
}
END_TEST

/* Past ULB_PLAN_MAX, READ/READLINK results come inline. */
START_TEST(test_plan_spill)
{
	struct cargs c;
	struct ulb_plan p;
	uint32_t i;

	cargs_init(&c, "many", 0);
	arg_putfh(&c, "fh");
	for (i = 0; i < ULB_PLAN_MAX + 2; i++)
		arg_read(&c, 1000 + i);
	add_arg(&c, OP_READLINK);
	plan_call(&c, &p, ULB_PLAN_MAX);
	for (i = 0; i < ULB_PLAN_MAX; i++)
		ck_assert_uint_eq(p.room[i], 1000 + i);
	ck_assert_uint_eq(p.inline_room,
			  1000 + ULB_PLAN_MAX + 1000 + ULB_PLAN_MAX + 1 + 4096);
	ck_assert_uint_gt(p.reply_max, 0);
}
END_TEST

/* reply_max 0 for results with no bound or that the walker cannot parse */
START_TEST(test_plan_unbounded)
{
	static const nfs_opnum4 unb[] = {
		OP_GETATTR,
		OP_SETATTR,
		OP_CREATE,
		OP_TEST_STATEID,
	};
	struct cargs c;
	struct ulb_plan p;
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(unb); i++) {
		cargs_init(&c, "", 1);
		arg_read(&c, 10);
		add_arg(&c, unb[i]);
		arg_read(&c, 20);
		plan_call(&c, &p, 2);
		ck_assert_uint_eq(p.reply_max, 0);
	}
	/* OPEN's result is unknown: pick_reply stops there, so no slot
	 * is offered past it */
	cargs_init(&c, "", 1);
	arg_read(&c, 10);
	arg_opens(&c);
	arg_read(&c, 20);
	plan_call(&c, &p, 1);
	ck_assert_uint_eq(p.room[0], 10);
	ck_assert_uint_eq(p.reply_max, 0);
	/* a minor version past 2 is not parsed at all */
	cargs_init(&c, "", 3);
	arg_read(&c, 10);
	plan_call(&c, &p, 0);
	ck_assert_uint_eq(p.reply_max, 0);
}
END_TEST

/*
 * reply_max bounds the real COMPOUND4res with the READ/READLINK data left
 * out: every bounded result at its largest (a 128-octet file handle, a
 * LOCK4denied with a 1024-octet owner...), and it is tight - at most the
 * 3-octet pad of each eligible item above the real size.
 */
START_TEST(test_plan_reply_max)
{
	static uint8_t buf[BUF_MAX], rbuf[BUF_MAX];
	static char fh[NFS4_FHSIZE + 1], owner[NFS4_OPAQUE_LIMIT];
	static char data[1001], link[4097];
	struct cargs a;
	struct cres r;
	struct ulb_plan p;
	nfs_resop4 *op;
	uint32_t len, rlen;

	memset(fh, 'h', NFS4_FHSIZE);
	memset(data, 'd', 1000);
	memset(link, 'l', 4096);
	cargs_init(&a, "odd", 1);
	cres_init(&r, "odd", NFS4_OK);
	arg_sequence(&a);
	res_sequence(&r);
	arg_putfh(&a, "fh");
	add_res(&r, OP_PUTFH);
	arg_read(&a, 1000);
	res_read(&r, NFS4_OK, data);
	add_arg(&a, OP_GETFH);
	res_getfh(&r, fh);
	add_arg(&a, OP_LOCK);
	op = add_res(&r, OP_LOCK);
	op->nfs_resop4_u.oplock.status = NFS4ERR_DENIED;
	op->nfs_resop4_u.oplock.LOCK4res_u.denied.owner.owner.owner_len =
		NFS4_OPAQUE_LIMIT;
	op->nfs_resop4_u.oplock.LOCK4res_u.denied.owner.owner.owner_val = owner;
	add_arg(&a, OP_READLINK);
	res_readlink(&r, NFS4_OK, link);
	add_arg(&a, OP_RENAME);
	add_res(&r, OP_RENAME);
	add_arg(&a, OP_WRITE);
	add_res(&r, OP_WRITE);
	add_arg(&a, OP_SEEK);
	add_res(&r, OP_SEEK);
	add_arg(&a, OP_ACCESS);
	add_res(&r, OP_ACCESS);
	len = enc_args(&a.a, buf);
	rlen = enc_res(&r.r, rbuf);
	ck_assert_int_eq(plan(buf, len, &p), 0);
	ck_assert_uint_eq(p.nslots, 2);
	rlen -= 1000 + 4096;
	/* data lengths are multiples of 4: the real pads are empty */
	ck_assert_uint_eq(p.reply_max, rlen + 2 * 3);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Garbage: never a crash, never a yes                                     */

static void put_words(uint8_t *buf, const uint32_t *w, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		put32(buf + 4 * i, w[i]);
}

START_TEST(test_garbage_counts)
{
	static const uint32_t many_ops[] = { 0,		  1,
					     0xffffffff,  OP_PUTROOTFH,
					     OP_READLINK, OP_PUTROOTFH };
	static const uint32_t huge_tag[] = { 0xfffffffc, 1, 1, OP_READ };
	static const uint32_t huge_fh[] = { 0,		1,	 2, OP_PUTFH,
					    0xfffffff0, OP_READ, 0, 0 };
	static const uint32_t res_many[] = { 0, 0, 0xffffffff, OP_READLINK,
					     0, 4, 0x41414141 };
	static const uint32_t big_fh[] = { 0, 0, 2, OP_PUTFH, 132, 0 };
	uint8_t buf[64];
	struct ulb_plan p;
	uint32_t off;

	memset(buf, 0, sizeof(buf));
	put_words(buf, many_ops, ARRAY_SIZE(many_ops));
	ck_assert_int_eq(plan(buf, sizeof(many_ops), &p), EINVAL);
	ck_assert_uint_eq(p.nslots, 0);
	put_words(buf, huge_tag, ARRAY_SIZE(huge_tag));
	ck_assert_int_eq(plan(buf, sizeof(huge_tag), &p), EINVAL);
	put_words(buf, huge_fh, ARRAY_SIZE(huge_fh));
	ck_assert_int_eq(plan(buf, sizeof(huge_fh), &p), EINVAL);
	/* nfs_fh4 is opaque<128> */
	put_words(buf, big_fh, ARRAY_SIZE(big_fh));
	ck_assert_int_eq(plan(buf, 64, &p), EINVAL);
	for (off = 0; off <= 64; off += 4) {
		ck_assert_int_eq(pick(W->pick_call, buf, 64, off, 4), -1);
		ck_assert_int_eq(pick(W->pick_reply, buf, 64, off, 4), -1);
	}
	memset(buf, 0, sizeof(buf));
	put_words(buf, res_many, ARRAY_SIZE(res_many));
	for (off = 0; off <= 64; off += 4)
		ck_assert_int_eq(pick(W->pick_reply, buf, 64, off, 4), -1);
	ck_assert_int_eq(pick(W->pick_reply, buf, 64, 0xfffffffc, 4), -1);
	ck_assert_int_eq(pick(W->pick_call, buf, 64, 0xfffffffc, 4), -1);
}
END_TEST

/* 1024 operations is the most a COMPOUND may have; 1025 is garbage. */
START_TEST(test_garbage_too_many_ops)
{
	static uint8_t buf[4 * (3 + 1025)];
	struct ulb_plan p;
	uint32_t i;

	memset(buf, 0, sizeof(buf));
	put32(buf + 8, 1024);
	for (i = 0; i < 1025; i++)
		put32(buf + 12 + 4 * i, OP_PUTROOTFH);
	ck_assert_int_eq(plan(buf, sizeof(buf) - 4, &p), 0);
	ck_assert_uint_eq(p.reply_max, 4 + 4 + 4 + 1024 * 8);
	put32(buf + 8, 1025);
	ck_assert_int_eq(plan(buf, sizeof(buf), &p), EINVAL);
	ck_assert_uint_eq(p.reply_max, 0);
}
END_TEST

/* Every truncation of a good call, and trailing octets, give EINVAL. */
START_TEST(test_garbage_truncated)
{
	static uint8_t buf[BUF_MAX];
	struct cargs c;
	struct ulb_plan p, full;
	struct fview f;
	unsigned beyond = 0, skipped = 0, stopped = 0;
	uint32_t len, n;
	int r;

	cargs_init(&c, "trunc", 1);
	arg_sequence(&c);
	arg_putfh(&c, "fh-x");
	arg_read(&c, 100);
	arg_write(&c, "w");
	arg_getattr(&c);
	len = enc_args(&c.a, buf);
	ck_assert_int_eq(plan(buf, len, &full), 0);
	ck_assert_uint_eq(full.nslots, 1);
	for (n = 0; n < len; n++) {
		ck_assert_int_eq(plan(buf, n, &p), EINVAL);
		ck_assert_uint_eq(p.nslots, 0);
		/* the view ends early though len claims more: the walker
		 * skips what it need not read (opaque data, stateids,
		 * bitmap words), else it stops */
		fview_init(&f, buf, n, len, &beyond);
		r = W->plan(&f.v, len, &p);
		if (r == 0) {
			ck_assert(memcmp(&p, &full, sizeof(p)) == 0);
			skipped++;
		} else {
			ck_assert_int_eq(r, EINVAL);
			stopped++;
		}
	}
	/* both ways were taken, or the test says nothing about one */
	ck_assert_uint_gt(skipped, 0);
	ck_assert_uint_gt(stopped, 0);
	ck_assert_int_eq(plan(buf, len + 4, &p), EINVAL);
	ck_assert_uint_eq(beyond, 0);
}
END_TEST

static uint32_t xorshift(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* Random words, mostly small so the walk gets somewhere. */
START_TEST(test_garbage_random)
{
	uint8_t buf[256];
	struct ulb_plan p;
	uint32_t seed = 0x8267u, w, off, n;
	unsigned iter, i;
	int r;

	for (iter = 0; iter < 2000; iter++) {
		for (i = 0; i < sizeof(buf) / 4; i++) {
			w = xorshift(&seed);
			switch (w & 3) {
			case 0:
				w >>= 2;
				break;
			case 1:
				w = (w >> 2) % 72; /* an opcode */
				break;
			default:
				w = (w >> 2) % 20;
			}
			put32(buf + 4 * i, w);
		}
		put32(buf + 4, iter % 3); /* minor version */
		n = 4 * (xorshift(&seed) % (sizeof(buf) / 4 + 1));
		r = plan(buf, n, &p);
		ck_assert(r == 0 || r == EINVAL);
		ck_assert_uint_le(p.nslots, ULB_PLAN_MAX);
		if (r == EINVAL)
			ck_assert_uint_eq(p.nslots, 0);
		for (off = 4; off <= n; off += 4) {
			r = pick(W->pick_call, buf, n, off,
				 be32(buf + off - 4));
			ck_assert_int_le(r, 1024);
			r = pick(W->pick_reply, buf, n, off,
				 be32(buf + off - 4));
			ck_assert_int_le(r, 1024);
		}
	}
}
END_TEST

Suite *nfs4_suite(void)
{
	Suite *s = suite_create("nfs4");
	TCase *tc = tcase_create("call");

	tcase_add_test(tc, test_call_sequence_putfh_write);
	tcase_add_test(tc, test_call_putfh_write_getattr);
	tcase_add_test(tc, test_call_create_symlink);
	tcase_add_test(tc, test_call_odd_tag);
	tcase_add_test(tc, test_call_every_op);
	tcase_add_test(tc, test_call_unknown_op);
	suite_add_tcase(s, tc);

	tc = tcase_create("reply");
	tcase_add_test(tc, test_reply_two_reads);
	tcase_add_test(tc, test_reply_failed_read);
	tcase_add_test(tc, test_reply_readlink);
	tcase_add_test(tc, test_reply_every_op);
	tcase_add_test(tc, test_reply_unknown_result);
	suite_add_tcase(s, tc);

	tc = tcase_create("plan");
	tcase_add_test(tc, test_plan_rooms);
	tcase_add_test(tc, test_plan_spill);
	tcase_add_test(tc, test_plan_unbounded);
	tcase_add_test(tc, test_plan_reply_max);
	suite_add_tcase(s, tc);

	tc = tcase_create("garbage");
	tcase_add_test(tc, test_garbage_counts);
	tcase_add_test(tc, test_garbage_too_many_ops);
	tcase_add_test(tc, test_garbage_truncated);
	tcase_add_test(tc, test_garbage_random);
	suite_add_tcase(s, tc);
	return s;
}
