/*
 * check_hdr.c - the transport-header codec (rw_hdr): every header vector of
 * doc/requirements.md §6 decoded to the expected fields and encoded from them
 * to the exact bytes, the version dispatch (AMB-X-4), per-type minimum lengths,
 * truncation at every length, limits, v2 errors and properties.
 * Requirement IDs of doc/requirements.md §1-2 are in the test names or
 * comments.
 */
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "compiler.h"
#include "hdr_vectors.h"
#include "wire/rw_chunk.h"

static struct rw_hdr_space sp;

static const struct rw_limits lim12 = {
	.vers_low = 1,
	.vers_high = 2,
	.max_read_chunks = 8,
	.max_write_chunks = 8,
	.max_chunk_segs = 16,
	.max_props = 16,
};

static void setup(void)
{
	rw_hdr_space_init(&sp, &lim12);
}

/* ---- Expected fields of each vector ----------------------------------- */

static struct rw_read_seg x_reads[4];
static struct rw_segment x_wsegs[2][2];
static struct rw_chunk x_writes[2];
static struct rw_segment x_rsegs[2];
static struct rw_prop x_props[4];
static const uint8_t be_8192[4] = { 0, 0, 0x20, 0 };
static const uint8_t be_16384[4] = { 0, 0, 0x40, 0 };
static const uint8_t be_12288[4] = { 0, 0, 0x30, 0 };
static const uint8_t be_genl[4] = { 0, 0, 0, 2 };
static uint8_t xc_info[32];

static struct rw_segment seg(uint32_t handle, uint32_t len, uint64_t off)
{
	struct rw_segment s = {
		.handle = handle,
		.length = len,
		.offset = off,
	};

	return s;
}

static void x_read(struct rw_hdr *h, uint32_t pos, struct rw_segment s)
{
	h->reads = x_reads;
	x_reads[h->nreads].position = pos;
	x_reads[h->nreads].seg = s;
	h->nreads++;
}

/* The TV9 Write chunk with the given second length (0: all unused). */
static void x_write_tv9(struct rw_hdr *h, uint32_t len0, uint32_t len1)
{
	x_wsegs[0][0] = seg(0xa004, len0, 0x00007f3a12370000ull);
	x_wsegs[0][1] = seg(0xa005, len1, 0x00007f3a12380000ull);
	x_writes[0].nsegs = 2;
	x_writes[0].segs = x_wsegs[0];
	h->writes = x_writes;
	h->nwrites = 1;
}

static void x_reply(struct rw_hdr *h, uint32_t len)
{
	x_rsegs[0] = seg(0xa006, len, 0x00007f3a12390000ull);
	h->has_reply = true;
	h->reply.nsegs = 1;
	h->reply.segs = x_rsegs;
}

static void x_prop(struct rw_hdr *h, uint32_t id, const uint8_t *v)
{
	h->props.props = x_props;
	x_props[h->props.n].id = id;
	x_props[h->props.n].len = 4;
	x_props[h->props.n].data = v;
	h->props.n++;
}

static void x_err(struct rw_hdr *h, uint32_t vers, uint32_t code)
{
	rw_hdr_init(h, vers, RW_ERROR, 0x12345678, 16);
	h->err.code = code;
}

/* Fields of the header vector name (doc/requirements.md §6). */
static bool expect(const char *name, struct rw_hdr *h)
{
	const uint64_t pzrc_off = 0x00007f3a12340000ull;

	if (!strcmp(name, "V1-TV1") || !strcmp(name, "V1-TV2")) {
		rw_hdr_init(h, 1, RW_MSG, 0x12345678, 32);
	} else if (!strcmp(name, "V1-TV3")) {
		rw_hdr_init(h, 1, RW_MSG, 0x12345678, 16);
	} else if (!strcmp(name, "V1-TV4a") || !strcmp(name, "V1-TV4b")) {
		x_err(h, name[6] == 'a' ? 2 : 1, RW_ERR_VERS);
		h->err.low = 1;
		h->err.high = 1;
	} else if (!strcmp(name, "V1-TV5")) {
		x_err(h, 1, RW_ERR_CHUNK);
	} else if (!strcmp(name, "V1-TV6") || !strcmp(name, "V1-TV7")) {
		rw_hdr_init(h, 1, RW_NOMSG, 0x12345678, 32);
		x_read(h, 0, seg(0xa001, 2048, pzrc_off));
		if (name[5] == '7')
			x_reply(h, 16384);
	} else if (!strcmp(name, "V1-TV8")) {
		rw_hdr_init(h, 1, RW_MSG, 0x12345678, 32);
		x_read(h, 96, seg(0xa002, 4096, 0x00007f3a12350000ull));
		x_read(h, 96, seg(0xa003, 1905, 0x00007f3a12360000ull));
	} else if (!strcmp(name, "V1-TV9")) {
		rw_hdr_init(h, 1, RW_MSG, 0x12345678, 32);
		x_write_tv9(h, 4096, 4096);
	} else if (!strcmp(name, "V1-TV10a") || !strcmp(name, "V1-TV10b")) {
		rw_hdr_init(h, 1, RW_MSG, 0x12345678, 16);
		x_write_tv9(h, 4096, name[7] == 'a' ? 1905 : 1908);
	} else if (!strcmp(name, "V1-TV11a")) {
		rw_hdr_init(h, 1, RW_MSG, 0x12345678, 32);
		x_reply(h, 16384);
	} else if (!strcmp(name, "V1-TV11b")) {
		rw_hdr_init(h, 1, RW_NOMSG, 0x12345678, 16);
		x_reply(h, 3000);
	} else if (!strcmp(name, "V1-TV12")) {
		rw_hdr_init(h, 1, RW_MSG, 0x12345678, 16);
		x_write_tv9(h, 0, 0);
	} else if (!strcmp(name, "V2-TV1") || !strcmp(name, "V2-TV2")) {
		rw_hdr_init(h, 2, RW_MSG, 0x12345678, name[5] == '1' ? 32 : 16);
		h->direction = name[5] == '1' ? RW_DIR_CALL : RW_DIR_REPLY;
	} else if (!strcmp(name, "V2-TV3")) {
		rw_hdr_init(h, 2, RW_NOMSG, 0x12345678, 32);
		h->inv_handle = 0xa001;
		x_read(h, 0, seg(0xa001, 2048, pzrc_off));
	} else if (!strcmp(name, "V2-TV4")) {
		x_err(h, 3, RW_ERR_VERS);
		h->err.low = 1;
		h->err.high = 2;
	} else if (!strcmp(name, "V2-TV5")) {
		x_err(h, 2, RW2_ERR_WRITE_RESOURCE);
		h->err.chunk_index = 1;
		h->err.length_needed = 8192;
	} else if (!strcmp(name, "V2-TV6")) {
		x_err(h, 2, RW2_ERR_INVAL_OPTION);
	} else if (!strcmp(name, "V2-TV7")) {
		x_err(h, 2, RW2_ERR_READ_CHUNKS);
		h->err.max = 0;
	} else if (!strcmp(name, "V2-TV8")) {
		x_err(h, 2, RW2_ERR_REPLY_RESOURCE);
		h->err.length_needed = 65536;
	} else if (!strcmp(name, "V2-TV9a") || !strcmp(name, "V2-TV9b")) {
		rw_hdr_init(h, 2, RW2_CONNPROP, 0x12345679, 32);
		x_prop(h, RW2_PROP_RBSIZ, be_8192);
		if (name[6] == 'a') {
			h->subset1.nwords = 1;
			h->subset1.words[0] = 1;
		}
	} else if (!strcmp(name, "V2-TV10")) {
		rw_hdr_init(h, 2, RW2_CONNPROP, 0x12345679, 32);
		x_prop(h, RW2_PROP_RBSIZ, be_8192);
		x_prop(h, RW2_PROP_BRS, be_genl);
		h->subset1.nwords = 1;
		h->subset1.words[0] = 3;
	} else if (!strcmp(name, "V2-TV11")) {
		rw_hdr_init(h, 2, RW2_REQPROP, 0xc001, 32);
		x_prop(h, RW2_PROP_RBSIZ, be_16384);
	} else if (!strcmp(name, "V2-TV12a")) {
		rw_hdr_init(h, 2, RW2_RESPROP, 0xc001, 16);
		h->subset1.nwords = 1;
		h->subset1.words[0] = 1;
		h->props.props = x_props;
	} else if (!strcmp(name, "V2-TV12b")) {
		rw_hdr_init(h, 2, RW2_RESPROP, 0xc001, 16);
		x_prop(h, RW2_PROP_RBSIZ, be_12288);
	} else if (!strcmp(name, "V2-TV13")) {
		rw_hdr_init(h, 2, RW2_UPDPROP, 0xc002, 32);
		x_prop(h, RW2_PROP_BRS, be_genl);
	} else if (!strcmp(name, "XC-TV1") || !strcmp(name, "XC-TV3")) {
		bool one = name[5] == '1';

		rw_hdr_init(h, 2, RW2_OPTIONAL, one ? 0x12345679 : 0xc002, 32);
		h->opt.dir = RW_DIR_CALL;
		h->opt.type = one ? 1 : 4;
		h->opt.len = one ? 20 : 16;
		h->opt.info = xc_info;
		hdr_hex(one ? "00000001 00000001 00000004 00002000 00000000" :
			      "00000003 00000004 00000002 00000000",
			xc_info, sizeof(xc_info));
	} else {
		return false;
	}
	return true;
}

/* Vectors that are complete, valid headers: name and header octets. */
static const struct {
	const char *name;
	uint32_t hdr_len;
} good[] = {
	{ "V1-TV1", 28 },   { "V1-TV2", 28 },	{ "V1-TV3", 28 },
	{ "V1-TV4a", 28 },  { "V1-TV4b", 28 },	{ "V1-TV5", 20 },
	{ "V1-TV6", 52 },   { "V1-TV7", 72 },	{ "V1-TV8", 76 },
	{ "V1-TV9", 68 },   { "V1-TV10a", 68 }, { "V1-TV10b", 68 },
	{ "V1-TV11a", 48 }, { "V1-TV11b", 48 }, { "V1-TV12", 68 },
	{ "V2-TV1", 36 },   { "V2-TV2", 36 },	{ "V2-TV3", 60 },
	{ "V2-TV4", 28 },   { "V2-TV5", 28 },	{ "V2-TV6", 20 },
	{ "V2-TV7", 24 },   { "V2-TV8", 24 },	{ "V2-TV9a", 40 },
	{ "V2-TV9b", 36 },  { "V2-TV10", 52 },	{ "V2-TV11", 32 },
	{ "V2-TV12a", 32 }, { "V2-TV12b", 40 }, { "V2-TV13", 32 },
	{ "XC-TV1", 48 },   { "XC-TV3", 44 },
};

/* V1-HDR-1, V1-HDR-4, V1-HDR-6, doc/requirements.md §6: decode ->
 * expected fields, header length. */
START_TEST(test_vectors_decode_fields)
{
	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		uint8_t buf[256];
		struct rw_hdr got, want;
		size_t n = hdr_vec(good[i].name, buf, sizeof(buf));

		ck_assert(expect(good[i].name, &want));
		ck_assert_msg(rw_hdr_decode(buf, n, &got, &sp) == RW_R_OK,
			      "%s: %s", good[i].name,
			      rw_reason_str(rw_hdr_decode(buf, n, &got, &sp)));
		ck_assert_msg(rw_hdr_equal(&want, &got), "%s fields",
			      good[i].name);
		ck_assert_uint_eq(got.hdr_len, good[i].hdr_len);
	}
}
END_TEST

/* V1-HDR-1, V1-HDR-4, V1-HDR-6, doc/requirements.md §6: fields -> exactly
 * the vector's bytes: version 1 (V1-HDR-4), then the Read list, the Write
 * list and the Reply chunk after the four fixed words (V1-HDR-6). */
START_TEST(test_vectors_encode_exact)
{
	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		uint8_t buf[256], out[256];
		struct rw_hdr want;
		size_t n;

		hdr_vec(good[i].name, buf, sizeof(buf));
		ck_assert(expect(good[i].name, &want));
		ck_assert_uint_eq(rw_hdr_encoded_len(&want), good[i].hdr_len);
		n = rw_hdr_encode(&want, out, sizeof(out));
		ck_assert_msg(n == good[i].hdr_len, "%s: %zu", good[i].name, n);
		ck_assert_msg(!memcmp(buf, out, n), "%s bytes", good[i].name);
		/* one octet short of room: refused, nothing half-written
		 * counts as success */
		ck_assert_uint_eq(rw_hdr_encode(&want, out, n - 1), 0);
	}
}
END_TEST

/* V1-ERR-2, AMB-V1-7: no valid header decodes from a strict prefix, and
 * the decoder never reads past the length (the buffer is exact-size, so
 * ASan would catch a read beyond it). */
START_TEST(test_truncation_every_length)
{
	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		uint8_t buf[256];
		size_t n = hdr_vec(good[i].name, buf, sizeof(buf));

		n = good[i].hdr_len;
		for (size_t len = 0; len < n; len++) {
			uint8_t *copy = malloc(len ? len : 1);
			struct rw_hdr h;
			enum rw_reason why;

			memcpy(copy, buf, len);
			why = rw_hdr_decode(copy, len, &h, &sp);
			free(copy);
			ck_assert_msg(why != RW_R_OK, "%s accepted at %zu",
				      good[i].name, len);
			if (len < RW_FIXED_LEN)
				ck_assert_int_eq(why, RW_R_RUNT);
		}
	}
}
END_TEST

/* AMB-V1-7: per-type minimum lengths decide what is a runt. */
START_TEST(test_amb_v1_7_minimum_lengths)
{
	uint8_t buf[64];
	struct rw_hdr h;

	hdr_vec("V1-TV1", buf, sizeof(buf));
	ck_assert_int_eq(rw_hdr_decode(buf, 27, &h, &sp), RW_R_RUNT);
	ck_assert_int_eq(rw_hdr_decode(buf, 28, &h, &sp), RW_R_OK);
	hdr_vec("V2-TV1", buf, sizeof(buf));
	ck_assert_int_eq(rw_hdr_decode(buf, 35, &h, &sp), RW_R_RUNT);
	ck_assert_int_eq(rw_hdr_decode(buf, 36, &h, &sp), RW_R_OK);
	hdr_vec("V1-TV5", buf, sizeof(buf));
	ck_assert_int_eq(rw_hdr_decode(buf, 19, &h, &sp), RW_R_RUNT);
	ck_assert_int_eq(rw_hdr_decode(buf, 20, &h, &sp), RW_R_OK);
	/* the fixed words are there for the caller even on a runt MSG */
	ck_assert_uint_eq(h.xid, 0x12345678);
	hdr_vec("V1-TV4b", buf, sizeof(buf));
	ck_assert_int_eq(rw_hdr_decode(buf, 24, &h, &sp), RW_R_BAD_ERROR);
	ck_assert_int_eq(rw_hdr_decode(buf, 28, &h, &sp), RW_R_OK);
	/* N-1 */
	ck_assert_int_eq(rw_hdr_decode(buf, 12, &h, &sp), RW_R_RUNT);
	ck_assert_int_eq(rw_hdr_decode(buf, 0, &h, &sp), RW_R_RUNT);
}
END_TEST

/* V1-HDR-2 / V1-PROC-1: the payload of V1-TV2 follows the 28-octet header
 * and starts with the same XID. */
START_TEST(test_v1_proc_1_payload_follows)
{
	uint8_t buf[128];
	struct rw_hdr h;
	size_t n = hdr_vec("V1-TV2", buf, sizeof(buf));

	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_OK);
	ck_assert_uint_eq(h.hdr_len, 28);
	ck_assert_uint_eq(n - h.hdr_len, 40);
	ck_assert_int_eq(rw_check_payload(&h, buf + h.hdr_len, n - h.hdr_len),
			 RW_R_OK);
}
END_TEST

/* V1-PROC-4..7: MSGP and DONE are recognised, refused, never encoded (the
 * encoder makes no RDMA_DONE: V1-PROC-6). */
START_TEST(test_v1_proc_4_7_msgp_done)
{
	uint8_t buf[64], out[64];
	struct rw_hdr h;
	size_t n;

	n = hdr_vec("V1-TV13", buf, sizeof(buf));
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_DEPRECATED_PROC);
	ck_assert_uint_eq(h.proc, RW_MSGP);
	ck_assert_uint_eq(h.xid, 0x12345678);
	n = hdr_vec("V1-TV14", buf, sizeof(buf));
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_DEPRECATED_PROC);
	ck_assert_uint_eq(h.proc, RW_DONE);

	rw_hdr_init(&h, 1, RW_MSGP, 1, 1);
	ck_assert_uint_eq(rw_hdr_encoded_len(&h), 0);
	ck_assert_uint_eq(rw_hdr_encode(&h, out, sizeof(out)), 0);
	rw_hdr_init(&h, 1, RW_DONE, 1, 1);
	ck_assert_uint_eq(rw_hdr_encode(&h, out, sizeof(out)), 0);
}
END_TEST

/* AMB-X-4 dispatch: words 0-3, then rdma_vers, only then rdma_proc. */
START_TEST(test_dispatch_version_first)
{
	uint8_t buf[64];
	struct rw_hdr h;
	struct rw_hdr_space v1only;
	size_t n;

	rw_hdr_space_init(&v1only, NULL);
	/* v2 header at a v1-only receiver: unsupported version */
	n = hdr_vec("V2-TV1", buf, sizeof(buf));
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &v1only), RW_R_BAD_VERS);
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_OK);
	/* vers 3 */
	buf[7] = 3;
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_BAD_VERS);
	buf[7] = 0;
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_BAD_VERS);
	/* N-2a: proc 5 is not v1; N-2b: 3 is not v2 */
	n = hdr_vec("N-2a", buf, sizeof(buf));
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_BAD_PROC);
	n = hdr_vec("N-2b", buf, sizeof(buf));
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_BAD_PROC);
	for (uint32_t proc = 5; proc < 12; proc++) {
		n = hdr_vec("V1-TV1", buf, sizeof(buf));
		buf[15] = (uint8_t)proc;
		ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_BAD_PROC);
	}
	n = hdr_vec("V2-TV1", buf, sizeof(buf));
	buf[15] = 2;
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_BAD_PROC);
	buf[15] = 10;
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_BAD_PROC);
	buf[12] = 0x80;
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_BAD_PROC);
}
END_TEST

/* V1-EXT-2, AMB-V1-1, AMB-X-4: ERR_VERS keeps one layout in every version,
 * so it decodes whatever rdma_vers says; other errors of a version we do
 * not speak cannot be decoded. */
START_TEST(test_v1_ext_2_err_vers_any_version)
{
	uint8_t buf[64];
	struct rw_hdr h;
	struct rw_hdr_space v1only;
	size_t n;

	rw_hdr_space_init(&v1only, NULL);
	n = hdr_vec("V2-TV4", buf, sizeof(buf));
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &v1only), RW_R_OK);
	ck_assert_uint_eq(h.vers, 3);
	ck_assert_uint_eq(h.err.low, 1);
	ck_assert_uint_eq(h.err.high, 2);
	buf[4] = 0xff;
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &v1only), RW_R_OK);
	n = hdr_vec("V1-TV4a", buf, sizeof(buf));
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &v1only), RW_R_OK);
	ck_assert_uint_eq(h.vers, 2);
	/* a v2 error other than ERR_VERS at a v1-only receiver */
	n = hdr_vec("V2-TV6", buf, sizeof(buf));
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &v1only), RW_R_BAD_ERROR);
	ck_assert_uint_eq(h.err.code, RW2_ERR_INVAL_OPTION);
	/* the fixed offsets: a v2 ERR_VERS is byte-identical to a v1 one but
	 * for the version word */
	{
		uint8_t a[32], b[32];
		struct rw_hdr e;

		x_err(&e, 1, RW_ERR_VERS);
		e.err.low = 1;
		e.err.high = 2;
		ck_assert_uint_eq(rw_hdr_encode(&e, a, sizeof(a)), 28);
		e.vers = 2;
		ck_assert_uint_eq(rw_hdr_encode(&e, b, sizeof(b)), 28);
		ck_assert(!memcmp(a, b, 4) && !memcmp(a + 8, b + 8, 20));
	}
}
END_TEST

/* XDR optional-data discriminators and v2 directions are 0 or 1. */
START_TEST(test_bad_bool_and_direction)
{
	uint8_t buf[128];
	struct rw_hdr h;
	size_t n;

	n = hdr_vec("V1-TV7", buf, sizeof(buf));
	buf[19] = 2; /* read list entry flag */
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_BAD_BOOL);
	n = hdr_vec("V1-TV7", buf, sizeof(buf));
	buf[43] = 2; /* read list terminator */
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_BAD_BOOL);
	n = hdr_vec("V1-TV7", buf, sizeof(buf));
	buf[44] = 0x80; /* write list terminator */
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_BAD_BOOL);
	n = hdr_vec("V1-TV7", buf, sizeof(buf));
	buf[51] = 3; /* reply chunk present flag */
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_BAD_BOOL);
	n = hdr_vec("V2-TV1", buf, sizeof(buf));
	buf[19] = 2; /* rdma_direction (V2-DIR-2) */
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_BAD_DIRECTION);
	n = hdr_vec("XC-TV1", buf, sizeof(buf));
	buf[16] = 1; /* rdma_optdir */
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_BAD_DIRECTION);
}
END_TEST

/* A count that could never fit the message is a truncation, never a
 * resource refusal or a loop over garbage. */
START_TEST(test_impossible_counts)
{
	uint8_t buf[128];
	struct rw_hdr h;
	size_t n;

	n = hdr_vec("V1-TV9", buf, sizeof(buf));
	memset(buf + 24, 0xff, 4); /* nsegs */
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_TRUNCATED);
	n = hdr_vec("V1-TV11a", buf, sizeof(buf));
	memset(buf + 28, 0xff, 4);
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_TRUNCATED);
	n = hdr_vec("V2-TV10", buf, sizeof(buf));
	memset(buf + 16, 0xff, 4); /* propset count */
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_TRUNCATED);
	n = hdr_vec("V2-TV10", buf, sizeof(buf));
	memset(buf + 44, 0xff, 4); /* subset count */
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_TRUNCATED);
	n = hdr_vec("XC-TV1", buf, sizeof(buf));
	memset(buf + 24, 0xff, 4); /* optinfo length */
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_TRUNCATED);
	buf[24] = 0;
	buf[25] = 0;
	buf[26] = 0;
	buf[27] = 17; /* 17 fit in the 19 left, 17 + 3 pad do not */
	ck_assert_int_eq(rw_hdr_decode(buf, n - 1, &h, &sp), RW_R_TRUNCATED);
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_OK);
}
END_TEST

/* Encode a v1 Call with the given Read list positions (one segment each),
 * nw Write chunks of wsegs segments and a Reply chunk of rsegs (0: none). */
static size_t build_lists(uint8_t *buf, size_t cap, const uint32_t *pos,
			  uint32_t nr, uint32_t nw, uint32_t wsegs,
			  uint32_t rsegs)
{
	uint8_t *p = buf;

	/* beyond the encoder's ceilings, so built by hand */
	memset(buf, 0, cap);
	memcpy(p, "\0\0\0\7\0\0\0\1\0\0\0\1\0\0\0\1", 16);
	p += 16;
	for (uint32_t i = 0; i < nr; i++) {
		p[3] = 1;
		p[4] = (uint8_t)(pos[i] >> 24);
		p[5] = (uint8_t)(pos[i] >> 16);
		p[6] = (uint8_t)(pos[i] >> 8);
		p[7] = (uint8_t)pos[i];
		p[11] = 1; /* handle 1, length 0, offset 0 */
		p += 24;
	}
	p += 4;
	for (uint32_t i = 0; i < nw; i++) {
		p[3] = 1;
		p[7] = (uint8_t)wsegs;
		p += 8 + 16 * wsegs;
	}
	p += 4;
	if (rsegs) {
		p[3] = 1;
		p[7] = (uint8_t)rsegs;
		p += 8 + 16 * rsegs;
	} else {
		p += 4;
	}
	ck_assert_uint_le((size_t)(p - buf), cap);
	return (size_t)(p - buf);
}

/* V2-ERR-7, AMB-V2-8: max_read_chunks counts chunks other than the PZRC. */
START_TEST(test_limit_read_chunks)
{
	static uint8_t buf[8192];
	uint32_t pos[12] = { 0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44 };
	struct rw_hdr h;
	size_t n;

	n = build_lists(buf, sizeof(buf), pos, 9, 0, 0, 0); /* PZRC + 8 */
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_OK);
	ck_assert_uint_eq(h.nreads, 9);
	n = build_lists(buf, sizeof(buf), pos, 10, 0, 0, 0); /* PZRC + 9 */
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_TOO_MANY_READS);
	n = build_lists(buf, sizeof(buf), pos + 1, 9, 0, 0, 0); /* 9 */
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_TOO_MANY_READS);
	/* a second position-0 run is not a second free PZRC */
	{
		struct rw_limits lim = lim12;
		struct rw_hdr_space one;
		uint32_t p3[3] = { 0, 8, 0 };

		lim.max_read_chunks = 1;
		rw_hdr_space_init(&one, &lim);
		n = build_lists(buf, sizeof(buf), p3, 2, 0, 0, 0);
		ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &one), RW_R_OK);
		n = build_lists(buf, sizeof(buf), p3, 3, 0, 0, 0);
		ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &one),
				 RW_R_TOO_MANY_READS);
	}
}
END_TEST

/* V2-ERR-11: segments per chunk, for Read, Write and Reply chunks. */
START_TEST(test_limit_segments)
{
	static uint8_t buf[8192];
	uint32_t pos[RW_MAX_CHUNK_SEGS + 1];
	struct rw_limits lim = lim12;
	struct rw_hdr_space small;
	struct rw_hdr h;
	size_t n;

	for (size_t i = 0; i < ARRAY_SIZE(pos); i++)
		pos[i] = 96;
	n = build_lists(buf, sizeof(buf), pos, 16, 0, 0, 0);
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_OK);
	n = build_lists(buf, sizeof(buf), pos, 17, 0, 0, 0);
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_TOO_MANY_SEGS);
	n = build_lists(buf, sizeof(buf), NULL, 0, 1, 16, 16);
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_OK);
	n = build_lists(buf, sizeof(buf), NULL, 0, 1, 17, 0);
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_TOO_MANY_SEGS);
	n = build_lists(buf, sizeof(buf), NULL, 0, 0, 0, 17);
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_TOO_MANY_SEGS);
	/* configurable */
	lim.max_chunk_segs = 2;
	rw_hdr_space_init(&small, &lim);
	n = build_lists(buf, sizeof(buf), NULL, 0, 1, 3, 0);
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &small), RW_R_TOO_MANY_SEGS);
	n = build_lists(buf, sizeof(buf), pos, 2, 1, 2, 2);
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &small), RW_R_OK);
}
END_TEST

/* V2-ERR-9: Write chunks per list, configurable. */
START_TEST(test_limit_write_chunks)
{
	static uint8_t buf[8192];
	struct rw_limits lim = lim12;
	struct rw_hdr_space none;
	struct rw_hdr h;
	size_t n;

	n = build_lists(buf, sizeof(buf), NULL, 0, 8, 1, 0);
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_OK);
	ck_assert_uint_eq(h.nwrites, 8);
	n = build_lists(buf, sizeof(buf), NULL, 0, 9, 1, 0);
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_TOO_MANY_WRITES);
	lim.max_write_chunks = 0;
	rw_hdr_space_init(&none, &lim);
	n = build_lists(buf, sizeof(buf), NULL, 0, 1, 1, 0);
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &none),
			 RW_R_TOO_MANY_WRITES);
}
END_TEST

/* Limits never exceed the arrays of rw_hdr_space. */
START_TEST(test_space_init_clamps)
{
	struct rw_limits big = {
		.vers_low = 0,
		.vers_high = 9,
		.max_read_chunks = 1000,
		.max_write_chunks = 1000,
		.max_chunk_segs = 1000,
		.max_props = 1000,
	};
	struct rw_hdr_space s;

	rw_hdr_space_init(&s, &big);
	ck_assert_uint_eq(s.lim.vers_low, 1);
	ck_assert_uint_eq(s.lim.vers_high, 2);
	ck_assert_uint_eq(s.lim.max_read_chunks, RW_MAX_READ_CHUNKS);
	ck_assert_uint_eq(s.lim.max_write_chunks, RW_MAX_WRITE_CHUNKS);
	ck_assert_uint_eq(s.lim.max_chunk_segs, RW_MAX_CHUNK_SEGS);
	ck_assert_uint_eq(s.lim.max_props, RW_MAX_PROPS);
	rw_hdr_space_init(&s, NULL);
	ck_assert_uint_eq(s.lim.vers_low, 1);
	ck_assert_uint_eq(s.lim.vers_high, 1);
	ck_assert_uint_eq(s.lim.max_chunk_segs, 16);
	ck_assert_uint_eq(s.lim.max_write_chunks, 8);
}
END_TEST

/* V2-ERR-3..16: every v2 error arm decodes and encodes with its body. */
START_TEST(test_v2_err_all_arms)
{
	static const uint32_t body_len[11] = { 0,  28, 20, 20, 24, 24,
					       24, 28, 24, 20, 20 };

	for (uint32_t code = 1; code <= 10; code++) {
		uint8_t buf[64];
		struct rw_hdr h, d;
		size_t n;

		x_err(&h, 2, code);
		h.err.low = 1;
		h.err.high = 2;
		h.err.max = 7;
		h.err.chunk_index = 3;
		h.err.length_needed = 0x10000;
		n = rw_hdr_encode(&h, buf, sizeof(buf));
		ck_assert_uint_eq(n, body_len[code]);
		ck_assert_int_eq(rw_hdr_decode(buf, n, &d, &sp), RW_R_OK);
		ck_assert(rw_hdr_equal(&h, &d));
		ck_assert_uint_eq(d.hdr_len, n);
		if (n > 20) /* the arm cut short cannot be decoded */
			ck_assert_int_eq(rw_hdr_decode(buf, n - 4, &d, &sp),
					 RW_R_BAD_ERROR);
	}
}
END_TEST

/* AMB-V2-10, V1-ERR-10: unknown codes keep xid and code for the caller. */
START_TEST(test_unknown_error_codes)
{
	uint8_t buf[64], out[64];
	struct rw_hdr h;
	size_t n;

	n = hdr_vec("V2-TV6", buf, sizeof(buf));
	buf[19] = 11;
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_UNKNOWN_ERROR);
	ck_assert_uint_eq(h.xid, 0x12345678);
	ck_assert_uint_eq(h.err.code, 11);
	ck_assert_uint_eq(h.hdr_len, 20);
	buf[19] = 0;
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_UNKNOWN_ERROR);
	n = hdr_vec("V1-TV5", buf, sizeof(buf));
	buf[19] = 3; /* v1 knows only ERR_VERS and ERR_CHUNK */
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_UNKNOWN_ERROR);
	/* and the encoder will not produce them */
	x_err(&h, 1, 3);
	ck_assert_uint_eq(rw_hdr_encode(&h, out, sizeof(out)), 0);
	x_err(&h, 2, 11);
	ck_assert_uint_eq(rw_hdr_encode(&h, out, sizeof(out)), 0);
	x_err(&h, 3, RW_ERR_CHUNK);
	ck_assert_uint_eq(rw_hdr_encode(&h, out, sizeof(out)), 0);
}
END_TEST

/* Things the raw encoder refuses besides MSGP/DONE. */
START_TEST(test_encode_refusals)
{
	uint8_t out[512];
	struct rw_segment s[RW_MAX_CHUNK_SEGS + 1];
	struct rw_hdr h;

	memset(s, 0, sizeof(s));
	rw_hdr_init(&h, 1, RW2_OPTIONAL, 1, 1); /* v2 proc in v1 */
	ck_assert_uint_eq(rw_hdr_encode(&h, out, sizeof(out)), 0);
	rw_hdr_init(&h, 2, RW_MSGP, 1, 1); /* v1 proc in v2 */
	ck_assert_uint_eq(rw_hdr_encode(&h, out, sizeof(out)), 0);
	rw_hdr_init(&h, 3, RW_MSG, 1, 1); /* unknown version */
	ck_assert_uint_eq(rw_hdr_encode(&h, out, sizeof(out)), 0);
	rw_hdr_init(&h, 2, RW_MSG, 1, 1);
	h.direction = 2;
	ck_assert_uint_eq(rw_hdr_encode(&h, out, sizeof(out)), 0);
	rw_hdr_init(&h, 2, RW2_OPTIONAL, 1, 1);
	h.opt.dir = 7;
	ck_assert_uint_eq(rw_hdr_encode(&h, out, sizeof(out)), 0);
	h.opt.dir = 0;
	h.opt.len = 4; /* no data */
	ck_assert_uint_eq(rw_hdr_encode(&h, out, sizeof(out)), 0);
	rw_hdr_init(&h, 1, RW_MSG, 1, 1);
	h.has_reply = true;
	h.reply.segs = s;
	h.reply.nsegs = RW_MAX_CHUNK_SEGS + 1;
	ck_assert_uint_eq(rw_hdr_encode(&h, out, sizeof(out)), 0);
	h.reply.nsegs = RW_MAX_CHUNK_SEGS;
	ck_assert_uint_eq(rw_hdr_encode(&h, out, sizeof(out)),
			  28 + 4 + 16 * RW_MAX_CHUNK_SEGS);
	rw_hdr_init(&h, 2, RW2_CONNPROP, 1, 1);
	h.subset1.nwords = RW_MAX_SUBSET_WORDS + 1;
	ck_assert_uint_eq(rw_hdr_encode(&h, out, sizeof(out)), 0);
}
END_TEST

/* RFC 8166 §4.2-4.3 / v2-05 §7.2 size table. */
START_TEST(test_header_sizes)
{
	struct rw_segment s[3] = { { 0 } };
	struct rw_read_seg r[2] = { { 0 } };
	struct rw_chunk w[2] = { { 3, s }, { 2, s } };
	struct rw_hdr h;

	rw_hdr_init(&h, 1, RW_MSG, 1, 1);
	ck_assert_uint_eq(rw_hdr_encoded_len(&h), 28);
	h.reads = r;
	h.nreads = 2;
	ck_assert_uint_eq(rw_hdr_encoded_len(&h), 28 + 2 * 24);
	h.nreads = 0;
	h.writes = w;
	h.nwrites = 2; /* 1 3 HLOO*3 1 2 HLOO*2 0 (RFC 8166 §4.3) */
	ck_assert_uint_eq(rw_hdr_encoded_len(&h), 28 + 8 + 48 + 8 + 32);
	h.nwrites = 0;
	h.has_reply = true;
	h.reply = w[1]; /* 1 2 HLOO HLOO */
	ck_assert_uint_eq(rw_hdr_encoded_len(&h), 28 + 4 + 32);
	rw_hdr_init(&h, 2, RW_NOMSG, 1, 1);
	ck_assert_uint_eq(rw_hdr_encoded_len(&h), 36);
	rw_hdr_init(&h, 2, RW2_CONNPROP, 1, 1);
	ck_assert_uint_eq(rw_hdr_encoded_len(&h), 24);
	x_err(&h, 1, RW_ERR_CHUNK);
	ck_assert_uint_eq(rw_hdr_encoded_len(&h), 20);
	x_err(&h, 1, RW_ERR_VERS);
	ck_assert_uint_eq(rw_hdr_encoded_len(&h), 28);
}
END_TEST

/* V2-PROP-1 (N-12), V2-PROP-2 (N-13 and more), V2-PROP-3 (N-14). */
START_TEST(test_v2_prop_1_2_3_checks)
{
	uint8_t buf[64];
	struct rw_hdr h;
	size_t n;

	n = hdr_vec("N-12", buf, sizeof(buf));
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_TRUNCATED);
	n = hdr_vec("N-13", buf, sizeof(buf));
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_BAD_PROP);
	n = hdr_vec("N-14", buf, sizeof(buf));
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_OK);
	ck_assert_uint_eq(h.props.n, 1);
	ck_assert_ptr_null(rw_prop_find(&h.props, RW2_PROP_RBSIZ));
	ck_assert_uint_eq(rw_prop_u32(rw_prop_find(&h.props, RW2_PROP_RBSIZ),
				      RW2_RBSIZ_DEFAULT),
			  4096);
	/* BRS outside its enum; RBSIZ too long */
	n = hdr_vec("V2-TV13", buf, sizeof(buf));
	buf[31] = 3;
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_BAD_PROP);
	n = hdr_hex("0000c002 00000002 00000020 00000009 00000001 00000001 "
		    "00000008 00002000 00000000",
		    buf, sizeof(buf));
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_BAD_PROP);
	/* unknown ids may carry any length */
	buf[23] = 0x55;
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_OK);
}
END_TEST

/* V2-PROP-4 (V2-TV14) and opaque padding (V2-TV15). */
START_TEST(test_v2_prop_4_default_and_padding)
{
	static const uint8_t hello[5] = { 'h', 'e', 'l', 'l', 'o' };
	uint8_t buf[64], frag[16], out[64];
	struct rw_prop p = { .id = 0xffffff00, .len = 5, .data = hello };
	struct rw_hdr h;
	size_t n, f;

	/* UPDPROP carrying the V2-TV14 propval: RBSIZ, zero length */
	n = hdr_hex("0000c002 00000002 00000020 00000009 00000001", buf, 64);
	f = hdr_vec("V2-TV14", frag, sizeof(frag));
	memcpy(buf + n, frag, f);
	ck_assert_int_eq(rw_hdr_decode(buf, n + f, &h, &sp), RW_R_OK);
	ck_assert_uint_eq(h.props.props[0].len, 0);
	ck_assert_uint_eq(rw_prop_u32(rw_prop_find(&h.props, RW2_PROP_RBSIZ),
				      RW2_RBSIZ_DEFAULT),
			  RW2_RBSIZ_DEFAULT);
	/* V2-TV15 encodes with three zero pad octets */
	rw_hdr_init(&h, 2, RW2_UPDPROP, 0xc002, 32);
	h.props.n = 1;
	h.props.props = &p;
	ck_assert_uint_eq(rw_hdr_encode(&h, out, sizeof(out)), 20 + 16);
	f = hdr_vec("V2-TV15", frag, sizeof(frag));
	ck_assert(!memcmp(out + 20, frag, f));
	/* a sender's non-zero pad is tolerated (RFC 4506 binds the sender) */
	out[20 + 15] = 0xee;
	ck_assert_int_eq(rw_hdr_decode(out, 36, &h, &sp), RW_R_OK);
	ck_assert_uint_eq(h.props.props[0].len, 5);
	ck_assert(!memcmp(h.props.props[0].data, "hello", 5));
}
END_TEST

/* V2-PROP-5, AMB-V2-7: propsubset bit N is word N/32, LSB first. */
START_TEST(test_v2_prop_5_subset_bits)
{
	uint8_t buf[64];
	struct rw_subset s = { 0 };
	struct rw_hdr h;
	size_t n;

	n = hdr_vec("V2-TV10", buf, sizeof(buf));
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_OK);
	ck_assert(rw_subset_test(&h.subset1, 0));
	ck_assert(rw_subset_test(&h.subset1, 1));
	ck_assert(!rw_subset_test(&h.subset1, 2));
	ck_assert(!rw_subset_test(&h.subset1, 40)); /* missing word */
	ck_assert_uint_eq(rw_prop_u32(rw_prop_find(&h.props, RW2_PROP_BRS),
				      RW2_BRS_INLINE),
			  RW2_BRS_GENL);
	ck_assert(rw_subset_set(&s, 33));
	ck_assert_uint_eq(s.nwords, 2);
	ck_assert_uint_eq(s.words[0], 0);
	ck_assert_uint_eq(s.words[1], 2);
	ck_assert(rw_subset_set(&s, 0));
	ck_assert_uint_eq(s.words[0], 1);
	ck_assert(!rw_subset_set(&s, 32 * RW_MAX_SUBSET_WORDS));
}
END_TEST

/* Over max_props (configurable) and over RW_MAX_SUBSET_WORDS. */
START_TEST(test_limit_props)
{
	uint8_t buf[512];
	struct rw_limits lim = lim12;
	struct rw_hdr_space one;
	struct rw_hdr h;
	size_t n;

	n = hdr_vec("V2-TV10", buf, sizeof(buf));
	lim.max_props = 1;
	rw_hdr_space_init(&one, &lim);
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &one), RW_R_TOO_MANY_PROPS);
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_OK);
	/* RESPROP whose first subset has 9 words */
	n = hdr_hex("0000c001 00000002 00000010 00000008 00000009", buf, 64);
	memset(buf + n, 0, 9 * 4 + 8);
	ck_assert_int_eq(rw_hdr_decode(buf, n + 44, &h, &sp),
			 RW_R_TOO_MANY_PROPS);
	buf[19] = 8;
	ck_assert_int_eq(rw_hdr_decode(buf, n + 40, &h, &sp), RW_R_OK);
}
END_TEST

/* Every reason has a name. */
START_TEST(test_reason_names)
{
	for (int r = 0; r < RW_R_NR_REASONS; r++)
		ck_assert_str_ne(rw_reason_str((enum rw_reason)r), "?");
	ck_assert_str_eq(rw_reason_str(RW_R_NR_REASONS), "?");
}
END_TEST

/* Decoding reuses rw_hdr_space without state leaking between headers. */
START_TEST(test_decode_reuse)
{
	uint8_t a[128], b[128], out[128];
	struct rw_hdr h;
	size_t na = hdr_vec("V1-TV7", a, sizeof(a)),
	       nb = hdr_vec("V1-TV1", b, 128);

	ck_assert_int_eq(rw_hdr_decode(a, na, &h, &sp), RW_R_OK);
	ck_assert_int_eq(rw_hdr_decode(b, nb, &h, &sp), RW_R_OK);
	ck_assert_uint_eq(h.nreads, 0);
	ck_assert(!h.has_reply);
	ck_assert_uint_eq(rw_hdr_encode(&h, out, sizeof(out)), 28);
	ck_assert(!memcmp(out, b, 28));
}
END_TEST

Suite *hdr_suite(void)
{
	Suite *s = suite_create("hdr");
	TCase *tc = tcase_create("vectors");
	TCase *tl = tcase_create("limits");
	TCase *tp = tcase_create("v2");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_checked_fixture(tl, setup, NULL);
	tcase_add_checked_fixture(tp, setup, NULL);
	tcase_add_test(tc, test_vectors_decode_fields);
	tcase_add_test(tc, test_vectors_encode_exact);
	tcase_add_test(tc, test_truncation_every_length);
	tcase_add_test(tc, test_amb_v1_7_minimum_lengths);
	tcase_add_test(tc, test_v1_proc_1_payload_follows);
	tcase_add_test(tc, test_v1_proc_4_7_msgp_done);
	tcase_add_test(tc, test_dispatch_version_first);
	tcase_add_test(tc, test_v1_ext_2_err_vers_any_version);
	tcase_add_test(tc, test_bad_bool_and_direction);
	tcase_add_test(tc, test_encode_refusals);
	tcase_add_test(tc, test_header_sizes);
	tcase_add_test(tc, test_reason_names);
	tcase_add_test(tc, test_decode_reuse);
	tcase_add_test(tl, test_impossible_counts);
	tcase_add_test(tl, test_limit_read_chunks);
	tcase_add_test(tl, test_limit_segments);
	tcase_add_test(tl, test_limit_write_chunks);
	tcase_add_test(tl, test_space_init_clamps);
	tcase_add_test(tl, test_limit_props);
	tcase_add_test(tp, test_v2_err_all_arms);
	tcase_add_test(tp, test_unknown_error_codes);
	tcase_add_test(tp, test_v2_prop_1_2_3_checks);
	tcase_add_test(tp, test_v2_prop_4_default_and_padding);
	tcase_add_test(tp, test_v2_prop_5_subset_bits);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, tl);
	suite_add_tcase(s, tp);
	return s;
}
