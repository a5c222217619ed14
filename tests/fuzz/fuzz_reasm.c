/*
 * fuzz_reasm.c - libFuzzer target for the reassembling XDR decoder
 * (struct rw_axdr, rw_ddp_flatten; src/wire/rw_reasm.c).
 *
 * The input is split into chunk descriptors, a reduced payload and chunk
 * data; the payload and every segment are copied into buffers of exactly
 * their size so ASan sees any overread.  Then one of:
 *   - a whole Call (READ mode) or Reply (WRITE mode) through rpcgen code
 *     from tests/unit/red_prog.x, as libtirpc's svc_vc/clnt_vc decode it;
 *   - a raw script of x_getlong / x_getbytes / x_inline / x_setpostn calls.
 * Besides crashes and leaks it checks two oracles and aborts on violation:
 *   - READ: whenever the stream accepts a message, rw_ddp_flatten() of the
 *     same descriptors decoded by plain xdrmem gives the same values;
 *   - raw: a failed stream stays failed, and its position never goes back.
 *
 * Input layout (big-endian):
 *   u8 flags   bit 0: 0 READ, 1 WRITE; bits 1-2: decoder (0..2 rpcgen
 *              types, 3 raw script); bit 3: policy from the next byte
 *   u8 mask    ordinals 0..7 designated (0xff: all)
 *   u8 nchunks (low 3 bits)
 *   per chunk: u32 position, u8 nsegs (low 2 bits), u16 len per segment
 *   u16 payload length, u8 script length, script bytes
 *   payload, then chunk data taken in order (lengths clipped to what is
 *   left)
 *
 * Built with -DRW_FUZZ_SEEDGEN instead of -fsanitize=fuzzer, main() writes
 * the seed corpus (valid reduced encodings) into the directory argv[1]:
 *   cc -DRW_FUZZ_SEEDGEN -Isrc -I$builddir ... tests/fuzz/fuzz_reasm.c
 *      src/wire/rw_*.c $builddir/tests/unit/red_prog_xdr.c -ltirpc
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/rpc.h>

#include "wire/rw_xdr.h"
#include "../unit/red_msg.h"

#define MAX_CHUNKS 7
#define MAX_SEGS   3

struct fz_in {
	const uint8_t *p;
	size_t left;
};

static uint32_t fz_take(struct fz_in *in, unsigned n)
{
	uint32_t v = 0;

	while (n--) {
		v <<= 8;
		if (in->left) {
			v |= *in->p++;
			in->left--;
		}
	}
	return v;
}

static const uint8_t *fz_bytes(struct fz_in *in, uint32_t *n)
{
	const uint8_t *p = in->p;

	if (*n > in->left)
		*n = (uint32_t)in->left;
	in->p += *n;
	in->left -= *n;
	return p;
}

struct fz_case {
	unsigned mode, decoder;
	bool has_pol;
	struct rw_ddp_policy pol;
	struct rw_ddp_chunk chunks[MAX_CHUNKS];
	struct rw_ddp_seg segs[MAX_CHUNKS][MAX_SEGS];
	uint8_t *segmem[MAX_CHUNKS][MAX_SEGS];
	unsigned nchunks;
	uint8_t *pay;
	uint32_t plen;
	const uint8_t *script;
	uint32_t slen;
};

/* Exact-size copies: an overread of payload or chunk data hits a redzone. */
static uint8_t *fz_dup(const uint8_t *p, uint32_t n)
{
	uint8_t *d = malloc(n ? n : 1);

	if (!d)
		abort();
	memcpy(d, p, n);
	return d;
}

static void fz_parse(struct fz_case *c, const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	uint32_t seglen[MAX_CHUNKS][MAX_SEGS];
	const uint8_t *pay;
	unsigned flags, mask, i, j;

	memset(c, 0, sizeof(*c));
	flags = fz_take(&in, 1);
	mask = fz_take(&in, 1);
	c->mode = flags & 1;
	c->decoder = (flags >> 1) & 3;
	c->has_pol = flags & 8;
	c->pol.mode = mask == 0xff ? RW_DDP_ALL : RW_DDP_ITEMS;
	c->pol.mask = mask;
	c->nchunks = fz_take(&in, 1) & 7;
	for (i = 0; i < c->nchunks; i++) {
		c->chunks[i].position = fz_take(&in, 4);
		c->chunks[i].nsegs = fz_take(&in, 1) & 3;
		c->chunks[i].segs = c->segs[i];
		for (j = 0; j < c->chunks[i].nsegs; j++)
			seglen[i][j] = fz_take(&in, 2);
	}
	c->plen = fz_take(&in, 2);
	c->slen = fz_take(&in, 1);
	c->script = fz_bytes(&in, &c->slen);
	pay = fz_bytes(&in, &c->plen);
	c->pay = fz_dup(pay, c->plen);
	for (i = 0; i < c->nchunks; i++) {
		for (j = 0; j < c->chunks[i].nsegs; j++) {
			const uint8_t *d = fz_bytes(&in, &seglen[i][j]);

			c->segmem[i][j] = fz_dup(d, seglen[i][j]);
			c->segs[i][j].data = c->segmem[i][j];
			c->segs[i][j].len = seglen[i][j];
		}
	}
}

static void fz_free(struct fz_case *c)
{
	unsigned i, j;

	for (i = 0; i < c->nchunks; i++)
		for (j = 0; j < c->chunks[i].nsegs; j++)
			free(c->segmem[i][j]);
	free(c->pay);
}

/* The rpcgen types the decoders pick from. */
union fz_obj {
	red_mixed mixed;
	red_write_args write;
	red_two_args two;
	red_read_res read;
};

static xdrproc_t fz_proc(const struct fz_case *c)
{
	static const xdrproc_t call[3] = {
		(xdrproc_t)xdr_red_mixed,
		(xdrproc_t)xdr_red_write_args,
		(xdrproc_t)xdr_red_two_args,
	};
	static const xdrproc_t reply[3] = {
		(xdrproc_t)xdr_red_mixed,
		(xdrproc_t)xdr_red_read_res,
		(xdrproc_t)xdr_red_read_res,
	};

	return c->mode ? reply[c->decoder] : call[c->decoder];
}

/* Encode obj plainly (as the peer's Call or Reply) for comparisons. */
static uint8_t *fz_reencode(const struct fz_case *c, xdrproc_t proc,
			    union fz_obj *obj, u_int *len)
{
	u_int cap = 8u << 20;
	uint8_t *buf = malloc(cap);
	XDR x;
	bool ok;

	if (!buf)
		abort();
	xdrmem_create(&x, (char *)buf, cap, XDR_ENCODE);
	ok = c->mode ?
		     red_put_reply(&x, RED_XID, proc, obj) :
		     red_put_call(&x, RED_XID, 0, authnone_create(), proc, obj);
	if (!ok)
		abort(); /* anything decoded must encode again */
	*len = XDR_GETPOS(&x);
	return buf;
}

/*
 * READ oracle: the stream accepted the message, so the flattened stream
 * must decode with xdrmem to the same values.
 */
static void fz_check_flat(struct fz_case *c, xdrproc_t proc, union fz_obj *got)
{
	union fz_obj ref;
	struct rpc_msg m;
	struct red_cred_area ca;
	enum rw_xdr_err err;
	uint8_t *flat, *e1, *e2;
	uint32_t ulen;
	u_int l1, l2;
	XDR x;

	ulen = rw_ddp_flatten(c->pay, c->plen, c->chunks, c->nchunks, NULL, 0,
			      &err);
	if (err != RW_XERR_OK)
		abort();
	flat = malloc(ulen ? ulen : 1);
	if (!flat || rw_ddp_flatten(c->pay, c->plen, c->chunks, c->nchunks,
				    flat, ulen, &err) != ulen)
		abort();
	memset(&ref, 0, sizeof(ref));
	xdrmem_create(&x, (char *)flat, ulen, XDR_DECODE);
	if (!red_get_call(&x, &m, &ca, proc, &ref) || XDR_GETPOS(&x) != ulen)
		abort();
	e1 = fz_reencode(c, proc, got, &l1);
	e2 = fz_reencode(c, proc, &ref, &l2);
	if (l1 != l2 || memcmp(e1, e2, l1))
		abort();
	free(e1);
	free(e2);
	xdr_free(proc, (char *)&ref);
	free(flat);
}

static void fz_decode_msg(struct fz_case *c)
{
	xdrproc_t proc = fz_proc(c);
	union fz_obj obj;
	struct rw_axdr a;
	struct rpc_msg m;
	struct red_cred_area ca;
	bool ok;

	memset(&obj, 0, sizeof(obj));
	if (!rw_axdr_create(&a, c->pay, c->plen,
			    c->mode ? RW_AXDR_WRITE : RW_AXDR_READ, c->chunks,
			    c->nchunks, c->has_pol ? &c->pol : NULL))
		return;
	if (c->mode)
		ok = red_get_reply(&a.xdr, proc, &obj);
	else
		ok = red_get_call(&a.xdr, &m, &ca, proc, &obj);
	if (ok && rw_axdr_finish(&a) == RW_XERR_OK && !c->mode)
		fz_check_flat(c, proc, &obj);
	xdr_free(proc, (char *)&obj);
}

/*
 * Raw script: the XDR entry points in any order.  Ops (low 3 bits):
 * 0 getlong, 1 getbytes(13-bit n), 2 inline(4 * next byte), 3 begin_body,
 * 4 setpos checks, 5 xdr_bytes, 6 getbytes(13-bit n) into the next
 * chunk's own memory (zero copy), 7 getbytes(op >> 3).
 */
static void fz_raw(struct fz_case *c)
{
	static char scratch[8192];
	struct rw_axdr a;
	u_int pos, last = 0;
	uint32_t i;

	if (!rw_axdr_create(&a, c->pay, c->plen,
			    c->mode ? RW_AXDR_WRITE : RW_AXDR_READ, c->chunks,
			    c->nchunks, c->has_pol ? &c->pol : NULL))
		return;
	for (i = 0; i < c->slen; i++) {
		uint8_t op = c->script[i];
		uint32_t n = i + 1 < c->slen ? c->script[i + 1] : 0;
		bool failed = rw_axdr_error(&a) != RW_XERR_OK;
		bool ok = true, pure = true;
		long l;

		switch (op & 7) {
		case 0:
			ok = XDR_GETLONG(&a.xdr, &l);
			break;
		case 1:
			n |= (uint32_t)(op >> 3) << 8;
			i++;
			ok = XDR_GETBYTES(&a.xdr, scratch, n);
			break;
		case 2: {
			int32_t *p = XDR_INLINE(&a.xdr, n * 4);
			volatile uint8_t sum = 0;
			uint32_t k;

			i++;
			pure = false;
			for (k = 0; p && k < n * 4; k++)
				sum += ((uint8_t *)p)[k];
			(void)sum;
			break;
		}
		case 3:
			pure = false;
			(void)rw_xdr_begin_body(&a.xdr);
			break;
		case 4:
			pure = false;
			if (XDR_SETPOS(&a.xdr, XDR_GETPOS(&a.xdr)) == failed)
				abort();
			if (XDR_SETPOS(&a.xdr, XDR_GETPOS(&a.xdr) + 4))
				abort();
			break;
		case 5: {
			char *p = NULL;
			u_int len = 0;

			pure = false; /* xdr_bytes may refuse on its own */
			ok = xdr_bytes(&a.xdr, &p, &len, 4096);
			free(p);
			break;
		}
		case 6: {
			uint32_t k = rw_axdr_chunks_used(&a);
			char *dst = scratch;

			n |= (uint32_t)(op >> 3) << 8;
			i++;
			if (k < c->nchunks && c->chunks[k].nsegs &&
			    n <= c->segs[k][0].len)
				dst = (char *)c->segmem[k][0];
			ok = XDR_GETBYTES(&a.xdr, dst, n);
			break;
		}
		default:
			ok = XDR_GETBYTES(&a.xdr, scratch, op >> 3);
			break;
		}
		if (failed && ok && pure)
			abort(); /* errors are sticky */
		if (!ok && pure && rw_axdr_error(&a) == RW_XERR_OK)
			abort(); /* a refused read says why */
		pos = XDR_GETPOS(&a.xdr);
		if (pos < last)
			abort();
		last = pos;
	}
	(void)rw_axdr_finish(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_case c;

	fz_parse(&c, data, size);
	if (c.decoder == 3)
		fz_raw(&c);
	else
		fz_decode_msg(&c);
	fz_free(&c);
	return 0;
}

#ifdef RW_FUZZ_SEEDGEN
/* ---------------------------------------------------------------------- */
/* Seed corpus: valid reduced encodings in the input layout above.         */

struct fz_out {
	uint8_t buf[16384];
	size_t n;
};

static void put(struct fz_out *o, uint32_t v, unsigned bytes)
{
	while (bytes--)
		o->buf[o->n++] = (uint8_t)(v >> (8 * bytes));
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

/* Reduce obj as a Call or Reply and write it as a seed. */
static void seed_msg(const char *dir, const char *name, unsigned mode,
		     unsigned decoder, xdrproc_t proc, void *obj, bool split,
		     bool padded, const uint8_t *script, size_t slen)
{
	static uint8_t pay[16384];
	static const struct rw_ddp_policy all = { .mode = RW_DDP_ALL,
						  .min_len = 1 };
	struct rw_ddp_item items[MAX_CHUNKS];
	struct fz_out o = { .n = 0 };
	struct rw_rxdr r;
	unsigned i, nsegs;
	bool ok;

	if (!rw_rxdr_create(&r, pay, sizeof(pay), &all, items, MAX_CHUNKS))
		abort();
	ok = mode ? red_put_reply(&r.xdr, RED_XID, proc, obj) :
		    red_put_call(&r.xdr, RED_XID, 0, authnone_create(), proc,
				 obj);
	if (!ok || rw_rxdr_finish(&r) != RW_XERR_OK)
		abort();
	put(&o, mode | decoder << 1 | 8, 1);
	put(&o, 0xff, 1);
	put(&o, r.nitems, 1);
	for (i = 0; i < r.nitems; i++) {
		uint32_t len = items[i].len +
			       (padded ? (4 - items[i].len % 4) % 4 : 0);

		nsegs = split && len > 1 ? 2 : 1;
		put(&o, items[i].position, 4);
		put(&o, nsegs, 1);
		if (nsegs == 2) {
			put(&o, len / 2, 2);
			put(&o, len - len / 2, 2);
		} else {
			put(&o, len, 2);
		}
	}
	put(&o, rw_rxdr_reduced_len(&r), 2);
	put(&o, (uint32_t)slen, 1);
	if (slen)
		putmem(&o, script, slen);
	putmem(&o, pay, rw_rxdr_reduced_len(&r));
	for (i = 0; i < r.nitems; i++) {
		putmem(&o, items[i].data, items[i].len);
		if (padded)
			putmem(&o, "\0\0\0", (4 - items[i].len % 4) % 4);
	}
	seed_write(dir, name, &o);
}

int main(int argc, char **argv)
{
	static char d1[1000], d2[300], d3[5], d4[10], fh[32];
	red_write_args w;
	red_two_args t;
	red_read_res rr;
	red_attr attr = { 1, 0644, 2, 1000, 100, 4096 };
	red_opt opt;
	red_blob list[2];
	red_mixed mx;
	char name[] = "reassembly";
	unsigned i;

	if (argc != 2) {
		fprintf(stderr, "usage: %s SEEDDIR\n", argv[0]);
		return 2;
	}
	for (i = 0; i < sizeof(d1); i++)
		d1[i] = (char)(i * 7 + 1);
	memcpy(d2, d1, sizeof(d2));
	memcpy(d3, d1, sizeof(d3));
	memcpy(d4, d1 + 5, sizeof(d4));
	for (i = 0; i < 32; i++)
		fh[i] = (char)(i + 1);

	memset(&w, 0, sizeof(w));
	w.file.red_fh_len = 32;
	w.file.red_fh_val = fh;
	w.count = 1000;
	w.stable = RED_FILE_SYNC;
	w.data.data_len = 1000;
	w.data.data_val = d1;
	seed_msg(argv[1], "call-write", 0, 1, (xdrproc_t)xdr_red_write_args, &w,
		 false, false, NULL, 0);
	w.data.data_len = 997;
	seed_msg(argv[1], "call-write-split-padded", 0, 1,
		 (xdrproc_t)xdr_red_write_args, &w, true, true, NULL, 0);

	memset(&t, 0, sizeof(t));
	for (i = 0; i < 15; i++)
		t.prefix[i] = i;
	t.a.a_len = 5;
	t.a.a_val = d3;
	t.mid = 0xabcdef01;
	t.b.b_len = 10;
	t.b.b_val = d4;
	seed_msg(argv[1], "call-two-example2", 0, 2,
		 (xdrproc_t)xdr_red_two_args, &t, false, false, NULL, 0);

	memset(&mx, 0, sizeof(mx));
	mx.before = -1;
	mx.h = -2;
	mx.blob.red_blob_len = 300;
	mx.blob.red_blob_val = d2;
	mx.name = name;
	memcpy(mx.tag, "tagtag", 6);
	mx.attr = attr;
	opt.flags = 7;
	opt.body.red_blob_len = 3;
	opt.body.red_blob_val = d3;
	mx.opt = &opt;
	list[0].red_blob_len = 5;
	list[0].red_blob_val = d3;
	list[1].red_blob_len = 10;
	list[1].red_blob_val = d4;
	mx.list.list_len = 2;
	mx.list.list_val = list;
	mx.after = 99;
	mx.last.red_blob_len = 1;
	mx.last.red_blob_val = d4;
	seed_msg(argv[1], "call-mixed", 0, 0, (xdrproc_t)xdr_red_mixed, &mx,
		 true, false, NULL, 0);
	seed_msg(argv[1], "reply-mixed", 1, 0, (xdrproc_t)xdr_red_mixed, &mx,
		 false, false, NULL, 0);

	memset(&rr, 0, sizeof(rr));
	rr.attr = &attr;
	rr.count = 997;
	rr.eof = TRUE;
	rr.data.data_len = 997;
	rr.data.data_val = d1;
	seed_msg(argv[1], "reply-read", 1, 1, (xdrproc_t)xdr_red_read_res, &rr,
		 true, true, NULL, 0);

	/*
	 * Raw scripts.  The WRITE Call (data 997 octets): inline the 10
	 * header words, begin the body, the fh by xdr_bytes, four words,
	 * the data length, 997 octets (op 0x19, 0xe5), the 3 pad octets
	 * (op 0x1f), the setpos checks.
	 */
	{
		static const uint8_t s1[] = {
			0x02, 0x0a, 0x03, 0x05, 0x00, 0x00, 0x00,
			0x00, 0x00, 0x19, 0xe5, 0x1f, 0x04,
		};

		seed_msg(argv[1], "raw-call-write", 0, 3,
			 (xdrproc_t)xdr_red_write_args, &w, false, false, s1,
			 sizeof(s1));
	}
	/*
	 * The READ Reply: 6 header words inline, the body, eleven words
	 * (attr present, attr, count, eof, data length), the data into the Write
	 * chunk's own memory (op 0x1e, 0xe5: zero copy), its pad.
	 */
	{
		static const uint8_t s2[] = {
			0x02, 0x06, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
			0x00, 0x00, 0x00, 0x00, 0x00, 0x1e, 0xe5, 0x1f, 0x04,
		};

		seed_msg(argv[1], "raw-reply-zero-copy", 1, 3,
			 (xdrproc_t)xdr_red_read_res, &rr, false, false, s2,
			 sizeof(s2));
	}
	return 0;
}
#endif
