/*
 * fuzz_nfs4.c - libFuzzer target for the NFSv4 COMPOUND walker
 * (ulb_nfs4_walker, src/ulb/ulb_nfs4.c), alone and as the RW_DDP_PICK
 * designator of the reassembling decoder (struct rw_axdr,
 * src/wire/rw_reasm.c).  A hostile peer controls every word of both.
 *
 * Input layout (big-endian words):
 *   word flags  bit 0: 0 Call (pick_call, RW_AXDR_READ with Read chunks),
 *                      1 Reply (pick_reply, RW_AXDR_WRITE, Write chunks)
 *               bit 1: decoder 0 guided, 1 greedy (below)
 *               bits 2-3: words decoded before rw_xdr_begin_body() (an
 *                      RPC header stand-in)
 *               bits 4-5: number of chunks (0..3)
 *               bit 6: each chunk in two segments
 *   per chunk: word position (Read chunks; Write chunks ignore it),
 *              word length
 *   the payload, then the chunk data in order, taken from the end of the
 *   input (lengths clipped to what is left)
 * Payload and segments are copied into buffers of exactly their size so
 * ASan sees any overread.
 *
 * (a) The walker over a flat view of the body (the payload after the
 *     header words).  pick_call and pick_reply at every 4-aligned offset,
 *     with the preceding word as the length, and plan(); abort() on:
 *   - a read at or past the offset asked about (plan: past len), or an
 *     unaligned one (the stream's view relies on alignment);
 *   - a slot for an offset whose preceding word is not the length (offset
 *     0, or the same offset with another length);
 *   - slots that do not strictly increase with the offset (each READ,
 *     READLINK, WRITE or CREATE NF4LNK has one eligible item, so two
 *     items never share a slot);
 *   - plan() returning other than 0 or EINVAL, more than ULB_PLAN_MAX
 *     slots, or a plan that is not zeroed on EINVAL.
 * (b) The same input through rw_axdr with the policy
 *     ulb_walk_policy(&ulb_nfs4_walker, ...), decoded by either
 *   - guided: a loop of xdr_u_int; after each word, the walker over what
 *     was decoded so far says whether the word is the length of an
 *     eligible item, which is then read as xdr_opaque does (the way a
 *     real COMPOUND decoder reaches the items); or
 *   - greedy: a loop of xdr_bytes, every word taken as an opaque length;
 *   checking for crashes, UB and leaks.  Oracle: a guided READ-mode decode
 *   the stream accepts gives the body rw_ddp_flatten() gives.
 *
 * Built with -DNFS4_FUZZ_SEEDGEN instead of -fsanitize=fuzzer, main()
 * writes the seed corpus (real COMPOUND encodings from the rpcgen output
 * of tests/unit/ulb/nfs4.x, whole and reduced) into the directory argv[1];
 * from the source directory, after "make tests/unit/ulb/nfs4_xdr.c" in the
 * build directory:
 *   cc -DNFS4_FUZZ_SEEDGEN -DHAVE_CONFIG_H -I$builddir -Iinclude -Isrc
 *      -I. -I$builddir/xdr -I/usr/include/tirpc tests/fuzz/fuzz_nfs4.c
 *      src/ulb/ulb_*.c src/wire/rw_xdr.c src/wire/rw_reduce.c
 *      src/wire/rw_reasm.c $builddir/tests/unit/ulb/nfs4_xdr.c
 *      -ltirpc -pthread
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/rpc.h>

#include "ulb/ulb.h"
#include "wire/rw_xdr.h"

#define MAX_CHUNKS 3
#define FLAT_MAX   8192u  /* part (a) is quadratic: bound its offsets */
#define GREEDY_MAX 65536u /* xdr_bytes maxsize */

static const struct ulb_walker *W = &ulb_nfs4_walker;

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static uint32_t round4(uint32_t n)
{
	return (n + 3) & ~3u;
}

/* Exact-size copies: an overread hits a redzone. */
static uint8_t *fz_dup(const uint8_t *p, uint32_t n)
{
	uint8_t *d = malloc(n ? n : 1);

	if (!d)
		abort();
	memcpy(d, p, n);
	return d;
}

/* ---------------------------------------------------------------------- */
/* (a) the walker over a flat view                                         */

struct flat {
	struct rw_ddp_view v;
	const uint8_t *buf;
	uint32_t len;	/* octets in buf */
	uint32_t limit; /* no word may be read past it */
};

static bool flat_word(const struct rw_ddp_view *v, uint32_t off, uint32_t *w)
{
	const struct flat *f = v->s;

	if ((uint64_t)off + 4 > f->limit || (off & 3))
		abort(); /* read past what a stream has seen, or unaligned */
	if ((uint64_t)off + 4 > f->len)
		return false;
	*w = be32(f->buf + off);
	return true;
}

static int flat_pick(rw_ddp_pick_fn fn, const uint8_t *buf, uint32_t len,
		     uint32_t off, uint32_t ilen)
{
	struct flat f = { { flat_word, &f }, buf, len, off };

	return fn(&f.v, off, ilen);
}

static void flat_plan(const uint8_t *buf, uint32_t blen, uint32_t len)
{
	static const struct ulb_plan zero;
	struct flat f = { { flat_word, &f }, buf, blen, len };
	struct ulb_plan p;
	int r;

	memset(&p, 0xa5, sizeof(p));
	r = W->plan(&f.v, len, &p);
	if (r != 0 && r != EINVAL)
		abort();
	if (p.nslots > ULB_PLAN_MAX)
		abort();
	if (r == EINVAL && memcmp(&p, &zero, sizeof(p)))
		abort();
}

static void fz_flat(const uint8_t *buf, uint32_t len)
{
	const rw_ddp_pick_fn fns[2] = { W->pick_call, W->pick_reply };
	int last[2] = { -1, -1 };
	uint32_t off, lw, lim = len < FLAT_MAX ? len : FLAT_MAX;
	unsigned k;

	for (k = 0; k < 2; k++)
		if (flat_pick(fns[k], buf, len, 0, len) >= 0)
			abort(); /* no length word before offset 0 */
	for (off = 4; off <= lim; off += 4) {
		lw = be32(buf + off - 4);
		for (k = 0; k < 2; k++) {
			int s = flat_pick(fns[k], buf, len, off, lw);

			if (s < 0)
				continue;
			if (s <= last[k])
				abort(); /* slots must ascend */
			last[k] = s;
			if (flat_pick(fns[k], buf, len, off, lw + 1) >= 0 ||
			    flat_pick(fns[k], buf, len, off,
				      lw ^ 0x80000000u) >= 0)
				abort(); /* a slot for another length */
		}
	}
	flat_plan(buf, len, len);
	if (len & 3)
		flat_plan(buf, len, len & ~3u);
}

/* ---------------------------------------------------------------------- */
/* (b) the walker as the designator of the reassembling decoder            */

struct fz_case {
	unsigned mode, decoder, hdr, nchunks;
	struct rw_ddp_chunk chunks[MAX_CHUNKS];
	struct rw_ddp_seg segs[MAX_CHUNKS][2];
	uint8_t *pay;
	uint32_t plen;
};

static void fz_parse(struct fz_case *c, const uint8_t *data, size_t size)
{
	uint32_t flags, pos[MAX_CHUNKS], len[MAX_CHUNKS], left, i, j, split;
	size_t at = 0;

	memset(c, 0, sizeof(*c));
	flags = size >= 4 ? be32(data) : 0;
	at = size >= 4 ? 4 : size;
	c->mode = flags & 1;
	c->decoder = (flags >> 1) & 1;
	c->hdr = (flags >> 2) & 3;
	c->nchunks = (flags >> 4) & 3;
	split = (flags >> 6) & 1;
	for (i = 0; i < c->nchunks; i++) {
		pos[i] = at + 4 <= size ? be32(data + at) : 0;
		at = at + 4 <= size ? at + 4 : size;
		len[i] = at + 4 <= size ? be32(data + at) : 0;
		at = at + 4 <= size ? at + 4 : size;
	}
	/* chunk data from the end, in order; the payload before it */
	left = (uint32_t)(size - at);
	for (i = 0; i < c->nchunks; i++) {
		if (len[i] > left)
			len[i] = left;
		left -= len[i];
	}
	c->plen = left;
	c->pay = fz_dup(data + at, c->plen);
	at += c->plen;
	for (i = 0; i < c->nchunks; i++) {
		uint32_t n[2] = { len[i], 0 };

		if (split) {
			n[0] = len[i] / 2;
			n[1] = len[i] - n[0];
		}
		c->chunks[i].position = pos[i];
		c->chunks[i].nsegs = split ? 2 : 1;
		c->chunks[i].segs = c->segs[i];
		for (j = 0; j < c->chunks[i].nsegs; j++) {
			c->segs[i][j].data = fz_dup(data + at, n[j]);
			c->segs[i][j].len = n[j];
			at += n[j];
		}
	}
}

static void fz_free(struct fz_case *c)
{
	unsigned i, j;

	for (i = 0; i < c->nchunks; i++)
		for (j = 0; j < c->chunks[i].nsegs; j++)
			free((void *)c->segs[i][j].data);
	free(c->pay);
}

/* Guided: the loop a COMPOUND decoder amounts to, driven by the walker. */
static void fz_guided(struct fz_case *c, struct rw_axdr *a)
{
	rw_ddp_pick_fn fn = c->mode ? W->pick_reply : W->pick_call;
	uint32_t cap = c->plen, used = 0, w, i, ulen;
	enum rw_xdr_err e;
	uint8_t *sh, *flat;
	unsigned n;

	for (i = 0; i < c->nchunks; i++)
		for (n = 0; n < c->chunks[i].nsegs; n++)
			cap += c->segs[i][n].len;
	cap += 4 * c->nchunks;
	sh = malloc(cap ? cap : 1);
	if (!sh)
		abort();
	while (a->poff < a->plen && rw_axdr_error(a) == RW_XERR_OK) {
		if (!xdr_u_int(&a->xdr, &w))
			break;
		if (used + 4 > cap)
			abort(); /* more than payload and chunks hold */
		memcpy(sh + used, (uint8_t[4]){ w >> 24, w >> 16, w >> 8, w },
		       4);
		used += 4;
		if (flat_pick(fn, sh, used, used, w) < 0)
			continue;
		if (w > cap - used || round4(w) > cap - used)
			break; /* the stream cannot hold it either */
		/* as xdr_opaque, but the pad goes into the body as well */
		if (!XDR_GETBYTES(&a->xdr, (char *)sh + used, w) ||
		    (round4(w) != w &&
		     !XDR_GETBYTES(&a->xdr, (char *)sh + used + w,
				   round4(w) - w)))
			break;
		used += round4(w);
	}
	e = rw_axdr_finish(a);
	if (e != RW_XERR_OK || c->mode)
		goto out;
	if (XDR_GETPOS(&a->xdr) != 4 * c->hdr + used)
		abort();
	ulen = rw_ddp_flatten(c->pay, c->plen, c->chunks, c->nchunks, NULL, 0,
			      &e);
	if (e != RW_XERR_OK || ulen != 4 * c->hdr + used)
		abort();
	flat = malloc(ulen ? ulen : 1);
	if (!flat || rw_ddp_flatten(c->pay, c->plen, c->chunks, c->nchunks,
				    flat, ulen, &e) != ulen)
		abort();
	if (memcmp(flat + 4 * c->hdr, sh, used))
		abort();
	free(flat);
out:
	free(sh);
}

/* Greedy: every word is an opaque length, so picks run at every item. */
static void fz_greedy(struct rw_axdr *a)
{
	while (a->poff < a->plen && rw_axdr_error(a) == RW_XERR_OK) {
		char *p = NULL;
		u_int n = 0;
		bool ok = xdr_bytes(&a->xdr, &p, &n, GREEDY_MAX);

		free(p);
		if (!ok)
			break;
	}
	(void)rw_axdr_finish(a);
}

static void fz_decode(struct fz_case *c)
{
	struct rw_ddp_policy pol;
	struct rw_axdr a;
	unsigned i;
	u_int w;

	ulb_walk_policy(W, c->mode, 0, &pol);
	if (pol.mode != RW_DDP_PICK)
		abort();
	if (!rw_axdr_create(&a, c->pay, c->plen,
			    c->mode ? RW_AXDR_WRITE : RW_AXDR_READ, c->chunks,
			    c->nchunks, &pol))
		return;
	for (i = 0; i < c->hdr; i++)
		if (!xdr_u_int(&a.xdr, &w))
			return;
	if (!rw_xdr_begin_body(&a.xdr))
		abort();
	if (c->decoder)
		fz_greedy(&a);
	else
		fz_guided(c, &a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_case c;
	uint32_t body;

	if (size > UINT32_MAX / 2)
		return 0;
	fz_parse(&c, data, size);
	body = 4 * c.hdr < c.plen ? 4 * c.hdr : c.plen;
	fz_flat(c.pay + body, c.plen - body);
	fz_decode(&c);
	fz_free(&c);
	return 0;
}

#ifdef NFS4_FUZZ_SEEDGEN
/* ---------------------------------------------------------------------- */
/* Seed corpus: real COMPOUNDs in the input layout above, whole (no        */
/* chunks) and reduced by the walker (its items in chunks).                */

#include "tests/unit/ulb/nfs4.h" /* rpcgen output, in the build dir */

#define OPS_MAX 16

struct fz_out {
	uint8_t buf[16384];
	size_t n;
};

static void put32(struct fz_out *o, uint32_t v)
{
	o->buf[o->n++] = (uint8_t)(v >> 24);
	o->buf[o->n++] = (uint8_t)(v >> 16);
	o->buf[o->n++] = (uint8_t)(v >> 8);
	o->buf[o->n++] = (uint8_t)v;
}

static void putmem(struct fz_out *o, const void *p, size_t n)
{
	memcpy(o->buf + o->n, p, n);
	o->n += n;
}

static void seed_write(const char *dir, const char *name,
		       const struct fz_out *o)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(o->buf, 1, o->n, f) != o->n || fclose(f))
		abort();
}

/*
 * Write obj (COMPOUND4args, mode 0, or COMPOUND4res, mode 1) as a seed
 * after hdr header words; reduce: its eligible items go into chunks (Read
 * chunks by position, Write chunks by slot, empty ones for slots without
 * an item).
 */
static void seed(const char *dir, const char *name, unsigned mode,
		 unsigned decoder, unsigned hdr, bool reduce, bool split,
		 void *obj)
{
	static uint8_t pay[16384];
	xdrproc_t proc = mode ? (xdrproc_t)xdr_COMPOUND4res :
				(xdrproc_t)xdr_COMPOUND4args;
	struct rw_ddp_item items[MAX_CHUNKS];
	const struct rw_ddp_item *ch[MAX_CHUNKS] = { NULL };
	struct rw_ddp_policy pol;
	struct fz_out o = { .n = 0 };
	struct rw_rxdr r;
	unsigned i, nch = 0;
	u_int w = 0x11223344;

	memset(&pol, 0, sizeof(pol));
	if (reduce) {
		ulb_walk_policy(W, mode, 1, &pol);
		pol.max_chunks = MAX_CHUNKS; /* later items inline */
	} else
		pol.mode = RW_DDP_NONE;
	if (!rw_rxdr_create(&r, pay, sizeof(pay), &pol, items, MAX_CHUNKS))
		abort();
	for (i = 0; i < hdr; i++)
		if (!xdr_u_int(&r.xdr, &w))
			abort();
	if (!rw_xdr_begin_body(&r.xdr) || !proc(&r.xdr, obj) ||
	    rw_rxdr_finish(&r) != RW_XERR_OK)
		abort();
	for (i = 0; i < rw_rxdr_nitems(&r); i++) {
		unsigned k = mode ? items[i].slot : i;

		if (k >= MAX_CHUNKS)
			abort();
		ch[k] = &items[i];
		if (k + 1 > nch)
			nch = k + 1;
	}
	put32(&o, mode | decoder << 1 | hdr << 2 | nch << 4 |
			  (split ? 1u << 6 : 0));
	for (i = 0; i < nch; i++) {
		put32(&o, ch[i] ? ch[i]->position : 0);
		put32(&o, ch[i] ? ch[i]->len : 0);
	}
	putmem(&o, pay, rw_rxdr_reduced_len(&r));
	for (i = 0; i < nch; i++)
		if (ch[i])
			putmem(&o, ch[i]->data, ch[i]->len);
	seed_write(dir, name, &o);
}

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
	nfs_argop4 *op = &c->op[c->a.argarray.argarray_len++];

	op->argop = opnum;
	return op;
}

static void cres_init(struct cres *c, const char *tag)
{
	memset(c, 0, sizeof(*c));
	c->r.status = NFS4_OK;
	ustr(&c->r.tag, tag);
	c->r.resarray.resarray_val = c->op;
}

static nfs_resop4 *add_res(struct cres *c, nfs_opnum4 opnum)
{
	nfs_resop4 *op = &c->op[c->r.resarray.resarray_len++];

	op->resop = opnum;
	return op;
}

static void stateid(stateid4 *s)
{
	s->seqid = 1;
	memcpy(s->other, "stateidOther", NFS4_OTHER_SIZE);
}

static nfs4_uint32 bits[2] = { 0x0010011a, 0x00b0a23a };

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

static void arg_read(struct cargs *c, uint32_t count)
{
	READ4args *r = &add_arg(c, OP_READ)->nfs_argop4_u.opread;

	stateid(&r->stateid);
	r->offset = 8192;
	r->count = count;
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

static void arg_create_lnk(struct cargs *c, const char *link, const char *name)
{
	CREATE4args *a = &add_arg(c, OP_CREATE)->nfs_argop4_u.opcreate;

	a->objtype.type = NF4LNK;
	ustr(&a->objtype.createtype4_u.linkdata, link);
	ustr(&a->objname, name);
	a->createattrs.attrmask.bitmap4_len = 2;
	a->createattrs.attrmask.bitmap4_val = bits;
	a->createattrs.attr_vals.attrlist4_len = 16;
	a->createattrs.attr_vals.attrlist4_val = "createattrs-vals";
}

static void res_sequence(struct cres *c)
{
	SEQUENCE4res *s = &add_res(c, OP_SEQUENCE)->nfs_resop4_u.opsequence;

	memcpy(s->SEQUENCE4res_u.sr_resok4.sr_sessionid, "sessionid-16-oct",
	       NFS4_SESSIONID_SIZE);
	s->SEQUENCE4res_u.sr_resok4.sr_sequenceid = 9;
	s->SEQUENCE4res_u.sr_resok4.sr_highest_slotid = 63;
}

static void res_putfh(struct cres *c)
{
	add_res(c, OP_PUTFH)->nfs_resop4_u.opputfh.status = NFS4_OK;
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

static void res_readlink(struct cres *c, const char *link)
{
	READLINK4res *r = &add_res(c, OP_READLINK)->nfs_resop4_u.opreadlink;

	r->status = NFS4_OK;
	ustr(&r->READLINK4res_u.resok4.link, link);
}

static void res_write(struct cres *c, uint32_t count)
{
	WRITE4res *w = &add_res(c, OP_WRITE)->nfs_resop4_u.opwrite;

	w->status = NFS4_OK;
	w->WRITE4res_u.resok4.count = count;
	w->WRITE4res_u.resok4.committed = FILE_SYNC4;
	memcpy(w->WRITE4res_u.resok4.writeverf, "wverf-8o", NFS4_VERIFIER_SIZE);
}

static void res_create(struct cres *c)
{
	CREATE4res *r = &add_res(c, OP_CREATE)->nfs_resop4_u.opcreate;

	r->status = NFS4_OK;
	r->CREATE4res_u.resok4.cinfo.atomic = TRUE;
	r->CREATE4res_u.resok4.cinfo.before = 1;
	r->CREATE4res_u.resok4.cinfo.after = 2;
	r->CREATE4res_u.resok4.attrset.bitmap4_len = 2;
	r->CREATE4res_u.resok4.attrset.bitmap4_val = bits;
}

int main(int argc, char **argv)
{
	static const char fh[] = "filehandle-of-28-octets-here";
	static const char data[] =
		"The quick brown fox jumps over the lazy dog; "
		"the data of a READ or WRITE, 97 octets long, not aligned.";
	static const char data2[] = "second READ data, 29 octets.";
	const char *d = argv[1];
	struct cargs ca;
	struct cres cr;
	unsigned i;

	if (argc != 2) {
		fprintf(stderr, "usage: %s SEEDDIR\n", argv[0]);
		return 2;
	}

	/* SEQUENCE + PUTFH + READ */
	cargs_init(&ca, "seq-read", 1);
	arg_sequence(&ca);
	arg_putfh(&ca, fh);
	arg_read(&ca, 4096);
	seed(d, "call-seq-putfh-read", 0, 0, 0, false, false, &ca.a);
	seed(d, "call-seq-putfh-read-hdr", 0, 0, 2, false, false, &ca.a);
	cres_init(&cr, "seq-read");
	res_sequence(&cr);
	res_putfh(&cr);
	res_read(&cr, NFS4_OK, data);
	seed(d, "reply-seq-putfh-read", 1, 0, 0, false, false, &cr.r);
	seed(d, "reply-seq-putfh-read-w", 1, 0, 0, true, false, &cr.r);
	seed(d, "reply-seq-putfh-read-w-split", 1, 0, 2, true, true, &cr.r);
	seed(d, "reply-seq-putfh-read-greedy", 1, 1, 0, true, false, &cr.r);

	/* PUTFH + WRITE */
	cargs_init(&ca, "write", 0);
	arg_putfh(&ca, fh);
	arg_write(&ca, data);
	seed(d, "call-putfh-write", 0, 0, 0, false, false, &ca.a);
	seed(d, "call-putfh-write-r", 0, 0, 0, true, false, &ca.a);
	seed(d, "call-putfh-write-r-split-hdr", 0, 0, 3, true, true, &ca.a);
	seed(d, "call-putfh-write-greedy", 0, 1, 0, true, false, &ca.a);
	cres_init(&cr, "write");
	res_putfh(&cr);
	res_write(&cr, 97);
	seed(d, "reply-putfh-write", 1, 0, 0, false, false, &cr.r);

	/* PUTFH + CREATE NF4LNK */
	cargs_init(&ca, "symlink", 2);
	arg_putfh(&ca, fh);
	arg_create_lnk(&ca, "../link/target/path", "linkname");
	seed(d, "call-create-lnk", 0, 0, 0, false, false, &ca.a);
	seed(d, "call-create-lnk-r", 0, 0, 0, true, false, &ca.a);
	cres_init(&cr, "symlink");
	res_putfh(&cr);
	res_create(&cr);
	seed(d, "reply-create-lnk", 1, 0, 0, false, false, &cr.r);

	/* PUTFH + READ + READ */
	cargs_init(&ca, "", 1);
	arg_putfh(&ca, fh);
	arg_read(&ca, 97);
	arg_read(&ca, 29);
	seed(d, "call-read-read", 0, 0, 0, false, false, &ca.a);
	cres_init(&cr, "");
	res_putfh(&cr);
	res_read(&cr, NFS4_OK, data);
	res_read(&cr, NFS4_OK, data2);
	seed(d, "reply-read-read", 1, 0, 0, false, false, &cr.r);
	seed(d, "reply-read-read-w", 1, 0, 0, true, false, &cr.r);
	/* the first READ fails: its Write chunk comes back empty */
	cres_init(&cr, "");
	res_putfh(&cr);
	res_read(&cr, NFS4ERR_IO, NULL);
	res_read(&cr, NFS4_OK, data2);
	seed(d, "reply-read-read-failed-w", 1, 0, 0, true, false, &cr.r);

	/* PUTFH + READLINK + READ */
	cargs_init(&ca, "readlink", 0);
	arg_putfh(&ca, fh);
	add_arg(&ca, OP_READLINK);
	arg_read(&ca, 29);
	seed(d, "call-readlink-read", 0, 0, 0, false, false, &ca.a);
	cres_init(&cr, "readlink");
	res_putfh(&cr);
	res_readlink(&cr, "../link/target/path");
	res_read(&cr, NFS4_OK, data2);
	seed(d, "reply-readlink-read-w", 1, 0, 0, true, false, &cr.r);

	/* PUTFH + 10 READs: more slots than ULB_PLAN_MAX, more results than
	 * Write chunks */
	cargs_init(&ca, "read10", 2);
	arg_putfh(&ca, fh);
	for (i = 0; i < 10; i++)
		arg_read(&ca, 29 + i);
	seed(d, "call-read10", 0, 0, 0, false, false, &ca.a);
	cres_init(&cr, "read10");
	res_putfh(&cr);
	for (i = 0; i < 10; i++)
		res_read(&cr, NFS4_OK, data2);
	seed(d, "reply-read10-w", 1, 0, 0, true, false, &cr.r);
	return 0;
}
#endif
