/*
 * check_diff.c - differential test of the hand-written header codec against
 * the rpcgen reference codec (xdrmem + xdr_rdma_msg / xdr_rpcrdma2_xprt_hdr).
 *
 * Random well-formed headers of every shape (v1 MSG/NOMSG/ERROR, v2
 * MSG/NOMSG, all error arms, OPTIONAL, the four property messages), with
 * chunk lists within the decode limits, are encoded by both codecs, which
 * must produce identical bytes; each codec must then decode the other's
 * bytes back to the same fields, and no strict prefix of them may decode.
 * The seed is printed and can be replayed with RW_DIFF_SEED=<number>;
 * RW_DIFF_COUNT overrides the count.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check_util.h"
#include "compiler.h"
#include "hdr_ref.h"
#include "wire/rw_hdr.h"

#define DIFF_DEFAULT_COUNT 100000

static uint64_t rng;

static uint64_t rnd64(void) /* splitmix64 */
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t below(uint32_t n)
{
	return (uint32_t)(rnd64() % n);
}

/* Mostly arbitrary 32-bit values, with the edges a codec gets wrong. */
static uint32_t word(void)
{
	switch (below(8)) {
	case 0:
		return 0;
	case 1:
		return 0xffffffffu;
	case 2:
		return below(16);
	default:
		return (uint32_t)rnd64();
	}
}

/* Small counts usually, the full allowed range sometimes. */
static uint32_t count(uint32_t usual, uint32_t max)
{
	return below(10) < 8 ? below(usual + 1) : below(max + 1);
}

struct gen {
	struct rw_hdr h;
	struct rw_read_seg reads[RW_MAX_READ_SEGS];
	struct rw_chunk writes[RW_MAX_WRITE_CHUNKS];
	struct rw_segment wsegs[RW_MAX_WRITE_CHUNKS][RW_MAX_CHUNK_SEGS];
	struct rw_segment rsegs[RW_MAX_CHUNK_SEGS];
	struct rw_prop props[RW_MAX_PROPS];
	uint8_t data[RW_MAX_PROPS][48];
	uint8_t opt[96];
};

static void gen_seg(struct rw_segment *s)
{
	s->handle = word();
	s->length = word();
	s->offset = below(4) ? rnd64() : below(3);
}

/* Read list of up to 8 runs (distinct adjacent positions), each within
 * max_chunk_segs: exactly what the decoder's limits admit. */
static void gen_reads(struct gen *g)
{
	uint32_t nchunks = count(3, RW_DEFAULT_MAX_READ_CHUNKS), n = 0;
	uint32_t pos = 0;

	for (uint32_t c = 0; c < nchunks; c++) {
		uint32_t nsegs = 1 + count(2, RW_DEFAULT_MAX_CHUNK_SEGS - 1);
		uint32_t p = c == 0 && below(3) == 0 ? 0 : word();

		if (c && p == pos)
			p++;
		pos = p;
		for (uint32_t i = 0; i < nsegs; i++, n++) {
			g->reads[n].position = pos;
			gen_seg(&g->reads[n].seg);
		}
	}
	g->h.nreads = n;
	g->h.reads = g->reads;
}

static void gen_chunk(struct rw_chunk *c, struct rw_segment *segs)
{
	c->nsegs = below(20) ? 1 + count(2, RW_DEFAULT_MAX_CHUNK_SEGS - 1) : 0;
	c->segs = segs;
	for (uint32_t i = 0; i < c->nsegs; i++)
		gen_seg(&segs[i]);
}

static void gen_lists(struct gen *g)
{
	gen_reads(g);
	g->h.nwrites = count(2, RW_DEFAULT_MAX_WRITE_CHUNKS);
	g->h.writes = g->writes;
	for (uint32_t i = 0; i < g->h.nwrites; i++)
		gen_chunk(&g->writes[i], g->wsegs[i]);
	g->h.has_reply = below(2);
	gen_chunk(&g->h.reply, g->rsegs);
	if (!g->h.has_reply)
		g->h.reply.nsegs = 0;
}

static void gen_bytes(uint8_t *p, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		p[i] = (uint8_t)rnd64();
}

/* Known propids carry a valid value of their type (V2-PROP-2). */
static void gen_prop(struct gen *g, uint32_t i)
{
	struct rw_prop *p = &g->props[i];

	p->data = g->data[i];
	switch (below(4)) {
	case 0:
		p->id = RW2_PROP_RBSIZ;
		p->len = below(2) * 4;
		gen_bytes(g->data[i], 4);
		break;
	case 1:
		p->id = RW2_PROP_BRS;
		p->len = below(2) * 4;
		memset(g->data[i], 0, 4);
		g->data[i][3] = (uint8_t)below(3);
		break;
	default:
		p->id = below(2) ? 0xffffff00u + below(256) : word() | 0x100;
		p->len = below(sizeof(g->data[i]) + 1);
		gen_bytes(g->data[i], p->len);
		break;
	}
}

static void gen_propset(struct gen *g)
{
	g->h.props.n = count(3, RW_DEFAULT_MAX_PROPS);
	g->h.props.props = g->props;
	for (uint32_t i = 0; i < g->h.props.n; i++)
		gen_prop(g, i);
}

static void gen_subset(struct rw_subset *s)
{
	s->nwords = count(2, RW_MAX_SUBSET_WORDS);
	for (uint32_t i = 0; i < s->nwords; i++)
		s->words[i] = word();
}

static void gen_error(struct gen *g, uint32_t vers)
{
	struct rw_hdr *h = &g->h;

	h->err.code = vers == RW_VERS_2 ? 1 + below(10) : 1 + below(2);
	if (vers != RW_VERS_1 && vers != RW_VERS_2)
		h->err.code = RW_ERR_VERS;
	h->err.low = word();
	h->err.high = word();
	h->err.max = word();
	h->err.chunk_index = word();
	h->err.length_needed = word();
}

static void gen_header(struct gen *g)
{
	static const uint32_t v2procs[] = {
		RW_MSG,	      RW_NOMSG,	   RW_ERROR,	RW2_OPTIONAL,
		RW2_CONNPROP, RW2_REQPROP, RW2_RESPROP, RW2_UPDPROP,
	};
	uint32_t vers = below(2) ? RW_VERS_1 : RW_VERS_2, proc;

	if (vers == RW_VERS_1)
		proc = below(4) ? below(2) : RW_ERROR;
	else
		proc = v2procs[below(ARRAY_SIZE(v2procs))];
	if (proc == RW_ERROR && below(8) == 0)
		vers = word(); /* ERR_VERS answering any version */
	rw_hdr_init(&g->h, vers, proc, word(), word());
	switch (proc) {
	case RW_MSG:
	case RW_NOMSG:
		if (vers == RW_VERS_2) {
			g->h.direction = below(2);
			g->h.inv_handle = word();
		}
		gen_lists(g);
		break;
	case RW_ERROR:
		gen_error(g, vers);
		break;
	case RW2_OPTIONAL:
		g->h.opt.dir = below(2);
		g->h.opt.type = word();
		g->h.opt.len = below(sizeof(g->opt) + 1);
		g->h.opt.info = g->opt;
		gen_bytes(g->opt, g->h.opt.len);
		break;
	default:
		gen_propset(g);
		gen_subset(&g->h.subset1);
		gen_subset(&g->h.subset2);
		break;
	}
}

static void dump(const char *what, const uint8_t *p, size_t n)
{
	fprintf(stderr, "%s (%zu):", what, n);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%s%02x", i % 4 ? "" : " ", p[i]);
	fprintf(stderr, "\n");
}

static uint64_t diff_seed(void)
{
	const char *env = getenv("RW_DIFF_SEED");

	if (env && *env)
		return strtoull(env, NULL, 0);
	return (uint64_t)time(NULL) * 1000003u ^ (uint64_t)getpid();
}

static unsigned long diff_count(void)
{
	const char *env = getenv("RW_DIFF_COUNT");

	return env && *env ? strtoul(env, NULL, 0) : DIFF_DEFAULT_COUNT;
}

/*
 * XDR is prefix-free, so no strict prefix of a header is a header.  The
 * prefix sits in an exact-size heap copy: ASan sees any read past it.
 */
static void diff_prefix(const uint8_t *buf, size_t n, struct rw_hdr_space *sp,
			unsigned long iter, uint64_t seed)
{
	size_t len = below((uint32_t)n);
	uint8_t *copy = malloc(len ? len : 1);
	struct rw_hdr d;
	enum rw_reason why;

	ck_assert_ptr_nonnull(copy);
	memcpy(copy, buf, len);
	why = rw_hdr_decode(copy, len, &d, sp);
	free(copy);
	if (why == RW_R_OK)
		ck_abort_msg("prefix of %zu/%zu accepted: seed %llu "
			     "iteration %lu",
			     len, n, (unsigned long long)seed, iter);
}

/* Both codecs, both directions, one header. */
static void diff_one(const struct gen *g, struct rw_hdr_space *sp,
		     unsigned long iter, uint64_t seed)
{
	static uint8_t mine[8192], ref[8192];
	struct rw_hdr d;
	size_t n1, n2, used = 0;
	enum rw_reason why;

	n1 = rw_hdr_encode(&g->h, mine, sizeof(mine));
	n2 = hdr_ref_encode(&g->h, ref, sizeof(ref));
	if (n1 != n2 || !n1 || memcmp(mine, ref, n1)) {
		dump("mine", mine, n1);
		dump("rpcgen", ref, n2);
		ck_abort_msg("encode differs: seed %llu iteration %lu",
			     (unsigned long long)seed, iter);
	}
	why = rw_hdr_decode(ref, n2, &d, sp);
	if (why || !rw_hdr_equal(&g->h, &d) || d.hdr_len != n2) {
		dump("rpcgen", ref, n2);
		ck_abort_msg("decode of rpcgen bytes: %s, seed %llu "
			     "iteration %lu",
			     rw_reason_str(why), (unsigned long long)seed,
			     iter);
	}
	if (!hdr_ref_decode_matches(mine, n1, &g->h, &used) || used != n1) {
		dump("mine", mine, n1);
		ck_abort_msg("rpcgen decode of my bytes: seed %llu "
			     "iteration %lu",
			     (unsigned long long)seed, iter);
	}
	if (iter % 8 == 0)
		diff_prefix(mine, n1, sp, iter, seed);
}

/* V1-PROC-5/7: what rpcgen would send as MSGP/DONE is recognised. */
static void diff_deprecated(struct gen *g, struct rw_hdr_space *sp)
{
	static uint8_t ref[8192];
	struct rw_hdr d;
	size_t n;

	rw_hdr_init(&g->h, RW_VERS_1, below(2) ? RW_MSGP : RW_DONE, word(),
		    word());
	if (g->h.proc == RW_MSGP)
		gen_lists(g);
	n = hdr_ref_encode(&g->h, ref, sizeof(ref));
	ck_assert_uint_gt(n, 0);
	ck_assert_int_eq(rw_hdr_decode(ref, n, &d, sp), RW_R_DEPRECATED_PROC);
	ck_assert_uint_eq(d.xid, g->h.xid);
	ck_assert_uint_eq(d.credit, g->h.credit);
	ck_assert_uint_eq(d.proc, g->h.proc);
	ck_assert_uint_eq(rw_hdr_encode(&g->h, ref, sizeof(ref)), 0);
}

START_TEST(test_diff_random_headers)
{
	static struct gen g;
	static struct rw_hdr_space sp;
	struct rw_limits lim = rw_default_limits;
	uint64_t seed = diff_seed();
	unsigned long n = diff_count();

	printf("diff: %lu headers, seed %llu (replay: RW_DIFF_SEED=%llu)\n", n,
	       (unsigned long long)seed, (unsigned long long)seed);
	fflush(stdout);
	rng = seed;
	lim.vers_high = RW_VERS_2;
	rw_hdr_space_init(&sp, &lim);
	for (unsigned long i = 0; i < n; i++) {
		if (below(100) == 0) {
			diff_deprecated(&g, &sp);
			continue;
		}
		gen_header(&g);
		diff_one(&g, &sp, i, seed);
	}
}
END_TEST

Suite *diff_suite(void)
{
	Suite *s = suite_create("diff");
	TCase *tc = tcase_create("rpcgen");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_diff_random_headers);
	suite_add_tcase(s, tc);
	return s;
}
