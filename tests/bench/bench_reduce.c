/*
 * bench_reduce.c - benchmark of the reduction and reassembly XDR streams
 * (src/wire/rw_xdr.h) against plain xdrmem running the same rpcgen code,
 * both measured in the same run so only the ratios matter.
 *
 * The message is a Call with a 1 MiB opaque argument (tests/unit/red_prog.x
 * red_write_args, the NFSv3 WRITE shape), marshalled as clnt_vc does.  The
 * reducing encoder moves the data item out without touching it; xdrmem
 * copies it.  The reassembling decoder is timed copying the Read chunk into
 * the caller's buffer (what xdrmem does too) and with the destination being
 * the chunk memory itself (zero copy).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "../unit/red_msg.h"

#define BR_DATA	  (1u << 20)
#define BR_MIN_NS 200000000.0 /* time each case for at least 0.2 s */

struct br_ctx {
	red_write_args args;
	char *data;	/* the argument: Read chunk source */
	char *dst;	/* decode destination */
	uint8_t *plain; /* unreduced encoding */
	u_int plain_len;
	uint8_t red[256]; /* reduced payload */
	uint32_t red_len;
	struct rw_ddp_item item;
	struct rw_ddp_seg seg;
	struct rw_ddp_chunk chunk;
};

static const struct rw_ddp_policy br_pol = {
	.mode = RW_DDP_ITEMS,
	.mask = RW_DDP_ITEM(1),
	.min_len = 1024,
};

static double br_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Best ns per call over three rounds of at least BR_MIN_NS / 3 each. */
static double br_time(bool (*fn)(struct br_ctx *), struct br_ctx *c)
{
	double best = 0;
	int round;

	for (round = 0; round < 3; round++) {
		double t0 = br_now(), t;
		unsigned long n = 0;

		do {
			if (!fn(c)) {
				fprintf(stderr, "bench_reduce: case failed\n");
				exit(1);
			}
			n++;
			t = br_now() - t0;
		} while (t < BR_MIN_NS / 3);
		if (!round || t / n < best)
			best = t / n;
	}
	return best;
}

static bool br_enc_plain(struct br_ctx *c)
{
	XDR x;
	bool ok;

	xdrmem_create(&x, (char *)c->plain, c->plain_len, XDR_ENCODE);
	ok = red_put_call(&x, RED_XID, RED_WRITE, authnone_create(),
			  (xdrproc_t)xdr_red_write_args, &c->args);
	return ok && XDR_GETPOS(&x) == c->plain_len;
}

static bool br_enc_reduce(struct br_ctx *c)
{
	struct rw_rxdr r;

	rw_rxdr_create(&r, c->red, sizeof(c->red), &br_pol, &c->item, 1);
	return red_put_call(&r.xdr, RED_XID, RED_WRITE, authnone_create(),
			    (xdrproc_t)xdr_red_write_args, &c->args) &&
	       rw_rxdr_finish(&r) == RW_XERR_OK &&
	       rw_rxdr_reduced_len(&r) == c->red_len;
}

/* Decode into c->dst (preset, so neither side allocates). */
static bool br_decode(struct br_ctx *c, XDR *x, char *dst)
{
	struct rpc_msg m;
	struct red_cred_area ca;
	red_write_args out;
	char fh[RED_FH_MAX];

	memset(&out, 0, sizeof(out));
	out.file.red_fh_val = fh;
	out.data.data_val = dst;
	return red_get_call(x, &m, &ca, (xdrproc_t)xdr_red_write_args, &out) &&
	       out.data.data_len == BR_DATA;
}

static bool br_dec_plain(struct br_ctx *c)
{
	XDR x;

	xdrmem_create(&x, (char *)c->plain, c->plain_len, XDR_DECODE);
	return br_decode(c, &x, c->dst);
}

static bool br_dec_reasm(struct br_ctx *c, char *dst)
{
	struct rw_axdr a;

	return rw_axdr_create(&a, c->red, c->red_len, RW_AXDR_READ, &c->chunk,
			      1, &br_pol) &&
	       br_decode(c, &a.xdr, dst) && rw_axdr_finish(&a) == RW_XERR_OK;
}

static bool br_dec_copy(struct br_ctx *c)
{
	return br_dec_reasm(c, c->dst);
}

static bool br_dec_zero_copy(struct br_ctx *c)
{
	return br_dec_reasm(c, c->data);
}

static bool br_setup(struct br_ctx *c)
{
	static char fh[32] = "bench-file-handle-0123456789abcd";
	struct rw_rxdr r;
	uint32_t i;

	memset(c, 0, sizeof(*c));
	c->data = malloc(BR_DATA);
	c->dst = malloc(BR_DATA);
	c->plain_len = BR_DATA + 256;
	c->plain = malloc(c->plain_len);
	if (!c->data || !c->dst || !c->plain)
		return false;
	for (i = 0; i < BR_DATA; i++)
		c->data[i] = (char)(i * 13);
	c->args.file.red_fh_len = sizeof(fh);
	c->args.file.red_fh_val = fh;
	c->args.count = BR_DATA;
	c->args.stable = RED_FILE_SYNC;
	c->args.data.data_len = BR_DATA;
	c->args.data.data_val = c->data;

	/* sizes first, so the timed cases can check their results */
	rw_rxdr_create(&r, c->red, sizeof(c->red), &br_pol, &c->item, 1);
	if (!red_put_call(&r.xdr, RED_XID, RED_WRITE, authnone_create(),
			  (xdrproc_t)xdr_red_write_args, &c->args) ||
	    rw_rxdr_finish(&r) != RW_XERR_OK || rw_rxdr_nitems(&r) != 1)
		return false;
	c->red_len = rw_rxdr_reduced_len(&r);
	c->plain_len = rw_rxdr_unreduced_len(&r);
	c->seg.data = c->item.data;
	c->seg.len = c->item.len;
	c->chunk.position = c->item.position;
	c->chunk.nsegs = 1;
	c->chunk.segs = &c->seg;
	return br_enc_plain(c);
}

static void br_line(const char *what, double ns, double ref)
{
	if (ref > 0)
		printf("  %-40s %12.1f ns   ratio %.4f (%.1fx)\n", what, ns,
		       ns / ref, ref / ns);
	else
		printf("  %-40s %12.1f ns\n", what, ns);
}

void bench_reduce_run(void)
{
	struct br_ctx c;
	double enc_plain, enc_red, dec_plain, dec_copy, dec_zero;

	if (!br_setup(&c)) {
		fprintf(stderr, "bench_reduce: setup failed\n");
		exit(1);
	}
	enc_plain = br_time(br_enc_plain, &c);
	enc_red = br_time(br_enc_reduce, &c);
	dec_plain = br_time(br_dec_plain, &c);
	dec_copy = br_time(br_dec_copy, &c);
	dec_zero = br_time(br_dec_zero_copy, &c);

	printf("reduce: Call with a 1 MiB opaque argument (%u octets unreduced, "
	       "%u reduced, item at %u)\n",
	       c.plain_len, c.red_len, c.chunk.position);
	br_line("encode xdrmem + rpcgen (reference)", enc_plain, 0);
	br_line("encode rw_rxdr, item moved (zero copy)", enc_red, enc_plain);
	br_line("decode xdrmem + rpcgen (reference)", dec_plain, 0);
	br_line("decode rw_axdr, Read chunk copied", dec_copy, dec_plain);
	br_line("decode rw_axdr, Read chunk in place", dec_zero, dec_plain);

	free(c.data);
	free(c.dst);
	free(c.plain);
}
