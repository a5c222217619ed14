/*
 * fuzz_hdr.c - libFuzzer target for the transport-header decoder.
 *
 * Every input is decoded as a header (with roomy and with tight limits),
 * validated as a Call and as a Reply, and mapped to an action for both
 * roles.  For every accepted input the following must hold:
 *   - it re-encodes to exactly hdr_len octets, equal to the input except
 *     for opaque pad octets (re-encoded as zero);
 *   - the re-encoding decodes to the same fields;
 *   - the rpcgen reference codec decodes the input to the same fields and
 *     consumes the same hdr_len octets;
 *   - a header valid as a Call with a non-zero credit passes rw_encode_call.
 * For every input: a requester never answers, and an error a responder is
 * told to send can be built and decodes as that error, echoing XID and
 * version.
 *
 * Seeds (tests/fuzz/seeds/hdr/) are the header vectors of doc/requirements.md
 * §6-7, written as raw octets from their hex words (the same hex as
 * tests/unit/hdr_vectors.c, e.g. "echo WORDS | xxd -r -p > V1-TV8.bin").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hdr_ref.h"
#include "wire/rw_role.h"

#define FUZZ_CHECK(cond)                                                   \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, \
				#cond);                                    \
			abort();                                           \
		}                                                          \
	} while (0)

static const struct rw_limits lim_roomy = {
	.vers_low = 1,
	.vers_high = 2,
	.max_read_chunks = 8,
	.max_write_chunks = 8,
	.max_chunk_segs = 16,
	.max_props = 16,
};

static const struct rw_limits lim_tight = {
	.vers_low = 1,
	.vers_high = 2,
	.max_read_chunks = 1,
	.max_write_chunks = 1,
	.max_chunk_segs = 2,
	.max_props = 1,
};

static uint8_t out[1 << 16], out2[1 << 16];

/* Re-encode an accepted header and decode it again. */
static void fuzz_roundtrip(const uint8_t *data, const struct rw_hdr *h,
			   const struct rw_limits *lim)
{
	static struct rw_hdr_space sp2;
	struct rw_hdr h2;
	size_t n, used = 0;

	n = rw_hdr_encode(h, out, sizeof(out));
	FUZZ_CHECK(n == h->hdr_len && n == rw_hdr_encoded_len(h));
	for (size_t i = 0; i < n; i++)
		FUZZ_CHECK(out[i] == data[i] || out[i] == 0);
	rw_hdr_space_init(&sp2, lim);
	FUZZ_CHECK(rw_hdr_decode(out, n, &h2, &sp2) == RW_R_OK);
	FUZZ_CHECK(rw_hdr_equal(h, &h2) && h2.hdr_len == n);
	FUZZ_CHECK(hdr_ref_decode_matches(data, n, h, &used));
	FUZZ_CHECK(used == n);
}

/* Structural checks and the role-aware encoder on an accepted header. */
static void fuzz_validate(const struct rw_hdr *h)
{
	struct rw_read_chunk c;
	struct rw_read_iter it;
	enum rw_reason why;
	int more;

	if (h->proc == RW_MSG || h->proc == RW_NOMSG) {
		rw_read_iter_init(&it, h);
		while ((more = rw_read_iter_next(&it, &c)) != 0)
			FUZZ_CHECK(more < 0 || c.nsegs > 0);
	}
	why = rw_validate_call(h);
	(void)rw_validate_reply(h, h);
	if (why == RW_R_OK && h->credit && h->proc != RW_ERROR) {
		size_t n = rw_encode_call(h, out2, sizeof(out2));

		FUZZ_CHECK(n == h->hdr_len && !memcmp(out, out2, n));
	}
}

/* What each role does about the input, and the error a responder sends. */
static void fuzz_actions(const uint8_t *data, size_t size,
			 const struct rw_limits *lim)
{
	static struct rw_hdr_space sp, sp3;
	struct rw_rx_call rx;
	struct rw_action a;
	struct rw_hdr e;
	size_t n;

	rw_hdr_space_init(&sp, lim);
	rw_recv_call(data, size, &rx, &sp);
	a = rw_reason_action(RW_ROLE_REQUESTER, rx.hdr.vers, rx.why, lim);
	FUZZ_CHECK(a.what != RW_ACT_REPLY_ERR && a.what != RW_ACT_GARBAGE_ARGS);
	a = rw_reason_action(RW_ROLE_RESPONDER, rx.hdr.vers, rx.why, lim);
	FUZZ_CHECK((a.what == RW_ACT_ACCEPT) == (rx.why == RW_R_OK));
	n = rw_err_from_action(&rx, &a, 5, out2, sizeof(out2));
	if (a.what != RW_ACT_REPLY_ERR) {
		FUZZ_CHECK(n == 0);
		return;
	}
	FUZZ_CHECK(n > 0);
	rw_hdr_space_init(&sp3, lim);
	FUZZ_CHECK(rw_hdr_decode(out2, n, &e, &sp3) == RW_R_OK);
	FUZZ_CHECK(e.proc == RW_ERROR && e.err.code == a.err);
	FUZZ_CHECK(e.xid == rx.hdr.xid && e.vers == rx.hdr.vers);
	FUZZ_CHECK(e.credit == 5 && e.hdr_len == n);
}

static void fuzz_one(const uint8_t *data, size_t size,
		     const struct rw_limits *lim)
{
	static struct rw_hdr_space sp;
	struct rw_hdr h;
	enum rw_reason why;

	rw_hdr_space_init(&sp, lim);
	why = rw_hdr_decode(data, size, &h, &sp);
	FUZZ_CHECK(why < RW_R_NR_REASONS);
	FUZZ_CHECK(why == RW_R_OK || why == RW_R_UNKNOWN_ERROR ||
		   h.hdr_len == 0);
	FUZZ_CHECK(h.hdr_len <= size);
	if (why == RW_R_OK) {
		fuzz_roundtrip(data, &h, lim);
		fuzz_validate(&h);
	}
	fuzz_actions(data, size, lim);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_one(data, size, &lim_roomy);
	fuzz_one(data, size, &lim_tight);
	return 0;
}
