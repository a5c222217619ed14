/*
 * bench_hdr.c - transport-header codec vs the rpcgen reference codec.
 *
 * For three headers (a minimal RDMA_MSG; V1-TV8, two Read segments; and a
 * Call with those two Read segments, a Write list of 2 chunks x 2 segments
 * and a Reply chunk) it times rw_hdr_encode()/rw_hdr_decode() and
 * xdrmem_create() + xdr_rdma_msg() (decode followed by the xdr_free() it
 * requires), in the same run, and prints ns per operation (fastest of
 * BENCH_ROUNDS rounds) and the ratios.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rpc/rpc.h>

#include "bench.h"
#include "rpcrdma_v1.h"
#include "wire/rw_hdr.h"

#define BENCH_ROUND_NS 40000000ull /* one timed round: >= 40 ms */
#define BENCH_ROUNDS   5	   /* report the fastest round */

static volatile uint32_t bench_sink;

static uint64_t bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One benchmark case: the same header in both representations. */
struct bench_case {
	const char *name;
	struct rw_hdr h;
	rdma_msg ref;
	uint8_t wire[512];
	size_t len;
};

static struct rw_read_seg b_reads[2];
static struct rw_segment b_wsegs[2][2], b_rseg;
static struct rw_chunk b_writes[2];
static xdr_read_list r_reads[2];
static xdr_write_list r_writes[2];
static xdr_rdma_segment r_wsegs[2][2], r_rseg;
static xdr_write_chunk r_reply;

static struct rw_segment b_seg(uint32_t handle, uint32_t len, uint64_t off)
{
	struct rw_segment s = {
		.handle = handle,
		.length = len,
		.offset = off,
	};

	return s;
}

static void b_ref_seg(const struct rw_segment *s, xdr_rdma_segment *d)
{
	d->handle = s->handle;
	d->length = s->length;
	d->offset = s->offset;
}

/* Build the case: nreads Read segments, nwrites 2-segment Write chunks. */
static void bench_build(struct bench_case *c, const char *name, uint32_t nreads,
			uint32_t nwrites, bool reply)
{
	rpc_rdma_header *m = &c->ref.rdma_body.rdma_body_u.rdma_msg;
	XDR x;

	c->name = name;
	rw_hdr_init(&c->h, 1, RW_MSG, 0x12345678, 32);
	memset(&c->ref, 0, sizeof(c->ref));
	c->ref.rdma_xid = 0x12345678;
	c->ref.rdma_vers = 1;
	c->ref.rdma_credit = 32;
	c->ref.rdma_body.proc = RDMA_MSG;

	b_reads[0].position = 96;
	b_reads[0].seg = b_seg(0xa002, 4096, 0x00007f3a12350000ull);
	b_reads[1].position = 96;
	b_reads[1].seg = b_seg(0xa003, 1905, 0x00007f3a12360000ull);
	c->h.reads = b_reads;
	c->h.nreads = nreads;
	for (uint32_t i = 0; i < nreads; i++) {
		r_reads[i].entry.position = b_reads[i].position;
		b_ref_seg(&b_reads[i].seg, &r_reads[i].entry.target);
		r_reads[i].next = i + 1 < nreads ? &r_reads[i + 1] : NULL;
	}
	m->rdma_reads = nreads ? r_reads : NULL;

	c->h.writes = b_writes;
	c->h.nwrites = nwrites;
	for (uint32_t i = 0; i < nwrites; i++) {
		b_wsegs[i][0] = b_seg(0xa004 + 2 * i, 4096,
				      0x00007f3a12370000ull + 0x10000 * i);
		b_wsegs[i][1] = b_seg(0xa005 + 2 * i, 4096,
				      0x00007f3a12378000ull + 0x10000 * i);
		b_writes[i].nsegs = 2;
		b_writes[i].segs = b_wsegs[i];
		b_ref_seg(&b_wsegs[i][0], &r_wsegs[i][0]);
		b_ref_seg(&b_wsegs[i][1], &r_wsegs[i][1]);
		r_writes[i].entry.target.target_len = 2;
		r_writes[i].entry.target.target_val = r_wsegs[i];
		r_writes[i].next = i + 1 < nwrites ? &r_writes[i + 1] : NULL;
	}
	m->rdma_writes = nwrites ? r_writes : NULL;

	c->h.has_reply = reply;
	b_rseg = b_seg(0xa00f, 16384, 0x00007f3a12390000ull);
	c->h.reply.nsegs = 1;
	c->h.reply.segs = &b_rseg;
	b_ref_seg(&b_rseg, &r_rseg);
	r_reply.target.target_len = 1;
	r_reply.target.target_val = &r_rseg;
	m->rdma_reply = reply ? &r_reply : NULL;

	c->len = rw_hdr_encode(&c->h, c->wire, sizeof(c->wire));
	xdrmem_create(&x, (char *)c->wire, sizeof(c->wire), XDR_ENCODE);
	/* timing two codecs that disagree would compare nothing */
	if (!c->len || !xdr_rdma_msg(&x, &c->ref) || xdr_getpos(&x) != c->len) {
		fprintf(stderr, "bench_hdr: %s: codecs disagree\n", name);
		exit(1);
	}
}

/* ns per call of fn(c) over one round of at least BENCH_ROUND_NS. */
static double bench_round(void (*fn)(const struct bench_case *),
			  const struct bench_case *c)
{
	uint64_t iters = 0, batch = 1024, start = bench_now(), t;

	do {
		for (uint64_t i = 0; i < batch; i++)
			fn(c);
		iters += batch;
		t = bench_now() - start;
	} while (t < BENCH_ROUND_NS);
	return (double)t / (double)iters;
}

/* The fastest of several rounds: other load on the machine only ever
 * adds time, so the minimum is the most repeatable figure. */
static double bench_time(void (*fn)(const struct bench_case *),
			 const struct bench_case *c)
{
	double best = bench_round(fn, c);

	for (int r = 1; r < BENCH_ROUNDS; r++) {
		double t = bench_round(fn, c);

		if (t < best)
			best = t;
	}
	return best;
}

static void rw_enc(const struct bench_case *c)
{
	uint8_t buf[512];

	bench_sink += (uint32_t)rw_hdr_encode(&c->h, buf, sizeof(buf));
	bench_sink += buf[c->len - 1];
}

static void rw_dec(const struct bench_case *c)
{
	static struct rw_hdr_space sp;
	static bool init;
	struct rw_hdr h;

	if (!init) {
		rw_hdr_space_init(&sp, NULL);
		init = true;
	}
	bench_sink += rw_hdr_decode(c->wire, c->len, &h, &sp);
	bench_sink += h.hdr_len + h.nreads;
}

static void ref_enc(const struct bench_case *c)
{
	uint8_t buf[512];
	XDR x;

	xdrmem_create(&x, (char *)buf, sizeof(buf), XDR_ENCODE);
	/* rpcgen's prototype is not const; encoding does not write. */
	bench_sink += xdr_rdma_msg(&x, (rdma_msg *)(uintptr_t)&c->ref);
	bench_sink += xdr_getpos(&x) + buf[c->len - 1];
}

static void ref_dec(const struct bench_case *c)
{
	rdma_msg m;
	XDR x;

	memset(&m, 0, sizeof(m));
	xdrmem_create(&x, (char *)(uintptr_t)c->wire, (u_int)c->len,
		      XDR_DECODE);
	bench_sink += xdr_rdma_msg(&x, &m);
	bench_sink += xdr_getpos(&x) + m.rdma_xid;
	xdr_free((xdrproc_t)xdr_rdma_msg, (char *)&m);
}

static void bench_case_run(struct bench_case *c)
{
	double me = bench_time(rw_enc, c), re = bench_time(ref_enc, c);
	double md = bench_time(rw_dec, c), rd = bench_time(ref_dec, c);

	printf("hdr %-30s %4zu B  encode %7.1f ns (rpcgen %7.1f, x%5.1f)"
	       "  decode %7.1f ns (rpcgen %7.1f, x%5.1f)\n",
	       c->name, c->len, me, re, re / me, md, rd, rd / md);
}

void bench_hdr_run(void)
{
	static struct bench_case c;

	printf("hdr: rw_hdr codec vs rpcgen (xdrmem + xdr_rdma_msg; rpcgen "
	       "decode includes xdr_free)\n");
	bench_build(&c, "minimal RDMA_MSG (V1-TV1)", 0, 0, false);
	bench_case_run(&c);
	bench_build(&c, "2 Read segs (V1-TV8)", 2, 0, false);
	bench_case_run(&c);
	bench_build(&c, "2 Read + 2x2 Write + Reply", 2, 2, true);
	bench_case_run(&c);
}
