/*
 * check_pick.c - RW_DDP_PICK, the designator that parses the body through
 * a struct rw_ddp_view (src/wire/rw_xdr.h) so an NFSv4 COMPOUND can be
 * reduced and reassembled: Write chunk i belongs to the i-th READ op, and a
 * READ that failed leaves its chunk empty (RFC 8267 section 6.4;
 * V1-WC-3 result-to-chunk mapping, V1-WC-6 unused chunks come back empty,
 * V1-DDP-1 a chunk only at an eligible item).
 *
 * The designator below is a real parser of red_mixed (tests/unit/
 * red_prog.x): it walks the body word by word through the view - skipping
 * opaque data by its length word, as an NFSv4 parser skips operations -
 * and designates blob as slot 0 and last as slot 1.  To reach last it must
 * read the name length that follows blob, which the reducing encoder has
 * already cut out and the reassembling decoder has inserted from a chunk,
 * so each stream type's view is exercised past moved data.  Every call is
 * logged; the tests assert on the log (which item the parser found at
 * which offset, what the view answered) as well as on the streams' own
 * output (items, slots, positions, reduced bytes, decoded values, errors).
 *
 * Oracles: a plain xdrmem encoding of the same message (positions, length
 * words, rebuilt bytes, re-encoded decoded values) and the header-only
 * encoding (where the body starts).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "wire/rw_xdr.h"
#include "red_msg.h"
#include "red_fixture.h"
#include "red_codec.h"
#include "check_util.h"

/* ---------------------------------------------------------------------- */
/* The designator: a red_mixed parser over the view                        */

/* The opaque items of red_mixed, by field. */
enum {
	PK_BLOB = 0,
	PK_NAME,
	PK_TAG,
	PK_OPT,	  /* opt->body */
	PK_LIST0, /* list[i] is PK_LIST0 + i */
	PK_LAST = PK_LIST0 + RED_LIST_MAX,
	PK_NR
};

static const char *const pk_names[PK_NR] = {
	[PK_BLOB] = "blob",	    [PK_NAME] = "name",
	[PK_TAG] = "tag",	    [PK_OPT] = "opt.body",
	[PK_LIST0] = "list[0]",	    [PK_LIST0 + 1] = "list[1]",
	[PK_LIST0 + 2] = "list[2]", [PK_LAST] = "last",
};

/* The slot each field gets (< 0: not eligible): the ULB's mapping. */
static int pk_slot[PK_NR];

/* What one pick() call saw and answered. */
struct pk_call {
	uint32_t off;	 /* body offset it was asked about */
	uint32_t len;	 /* item length it was given */
	int field;	 /* what the parse found there, -1 nothing */
	uint32_t plen;	 /* the item's length word, as parsed */
	int slot;	 /* what it returned */
	bool parse_fail; /* the view refused a word the parse needed */
	bool ahead_seen; /* the view gave a word at/after off */
	bool lenword_ok; /* word(off - 4) == len (counted items) */
	int moved_probe; /* at last: word inside blob's data, when blob
				 * is an item: 1 given, 0 refused, -1 n/a */
};

#define PK_LOG_MAX 32

static struct {
	unsigned n;
	struct pk_call c[PK_LOG_MAX];
} pk_log;

static void pk_log_reset(void)
{
	memset(&pk_log, 0, sizeof(pk_log));
}

static void pk_set(int blob, int name, int list1, int last)
{
	unsigned i;

	for (i = 0; i < PK_NR; i++)
		pk_slot[i] = -1;
	pk_slot[PK_BLOB] = blob;
	pk_slot[PK_NAME] = name;
	pk_slot[PK_LIST0 + 1] = list1;
	pk_slot[PK_LAST] = last;
}

/* The policy the tests are about: blob -> Write chunk 0, last -> 1. */
static void pk_set_blob_last(void)
{
	pk_set(0, -1, -1, 1);
}

struct pk_walk {
	const struct rw_ddp_view *v;
	uint32_t off;	   /* the item asked about */
	uint32_t p;	   /* parse cursor, body offset */
	uint32_t len;	   /* length of the last opaque parsed */
	uint32_t blob_off; /* where blob's data starts */
	uint32_t blob_len;
	bool fail;
};

enum {
	PK_GO,
	PK_HIT,
	PK_MISS,
	PK_FAIL
};

/* The word at the cursor, which must lie before the item asked about:
 * a designator never needs anything at or after it. */
static int pk_get(struct pk_walk *w, uint32_t *val)
{
	if (w->off < w->p + 4)
		return PK_MISS;
	if (!w->v->word(w->v, w->p, val)) {
		w->fail = true;
		return PK_FAIL;
	}
	w->p += 4;
	return PK_GO;
}

/* An opaque at the cursor: counted (length word first) or fixed. */
static int pk_opaque(struct pk_walk *w, bool counted, uint32_t fixed)
{
	uint32_t n = fixed;
	int r;

	if (counted && (r = pk_get(w, &n)) != PK_GO)
		return r;
	w->len = n;
	/* an empty opaque is never an item: the next field starts here */
	if (w->off == w->p && n)
		return PK_HIT;
	if (w->off < w->p + rc_round4(n) || n > RED_DATA_MAX)
		return PK_MISS;
	w->p += rc_round4(n);
	return PK_GO;
}

#define PK_STEP(w, field, counted, fixed)              \
	do {                                           \
		int r_ = pk_opaque(w, counted, fixed); \
		if (r_ == PK_HIT)                      \
			return field;                  \
		if (r_ != PK_GO)                       \
			return -1;                     \
	} while (0)

/*
 * Parse red_mixed up to body offset w->off: which field's data starts
 * there?  -1 if none (or the view refused a word: w->fail).
 */
static int pk_locate(struct pk_walk *w)
{
	uint32_t present, count, i;

	w->p = 4 + 8; /* int before, hyper h */
	PK_STEP(w, PK_BLOB, true, 0);
	w->blob_off = w->p - rc_round4(w->len);
	w->blob_len = w->len;
	PK_STEP(w, PK_NAME, true, 0); /* its length word follows
						 * blob, whether or not blob
						 * was moved */
	PK_STEP(w, PK_TAG, false, 6);
	w->p += 5 * 4 + 8; /* red_attr */
	if (pk_get(w, &present) != PK_GO)
		return -1;
	if (present > 1)
		return -1;
	if (present) {
		w->p += 4; /* flags */
		PK_STEP(w, PK_OPT, true, 0);
	}
	if (pk_get(w, &count) != PK_GO || count > RED_LIST_MAX)
		return -1;
	for (i = 0; i < count; i++)
		PK_STEP(w, PK_LIST0 + (int)i, true, 0);
	w->p += 8; /* uhyper after */
	PK_STEP(w, PK_LAST, true, 0);
	return -1;
}

/* Does the view give any word at or after the item's own data? */
static bool pk_ahead_seen(const struct rw_ddp_view *v, uint32_t off,
			  uint32_t len)
{
	const uint32_t probe[] = {
		off,
		off + 4,
		off + len,
		off + rc_round4(len),
		off + rc_round4(len) + 4,
		0xfffffffcu,
		0xffffffffu,
	};
	uint32_t w;
	unsigned i;

	for (i = 0; i < sizeof(probe) / sizeof(probe[0]); i++)
		if (v->word(v, probe[i], &w))
			return true;
	return false;
}

static int pk_pick(const struct rw_ddp_view *v, uint32_t off, uint32_t len)
{
	struct pk_walk w = { .v = v, .off = off };
	struct pk_call *c = NULL;
	uint32_t lw;
	int field, slot = -1;

	field = pk_locate(&w);
	if (field >= 0 && w.len == len)
		slot = pk_slot[field];
	if (pk_log.n < PK_LOG_MAX)
		c = &pk_log.c[pk_log.n];
	pk_log.n++;
	if (!c)
		return slot;
	c->off = off;
	c->len = len;
	c->field = field;
	c->plen = w.len;
	c->slot = slot;
	c->parse_fail = w.fail;
	c->ahead_seen = pk_ahead_seen(v, off, len);
	c->lenword_ok = off >= 4 && v->word(v, off - 4, &lw) && lw == len;
	c->moved_probe = -1;
	if (field == PK_LAST && w.blob_len) {
		/* first and last word of blob's data (+ pad) */
		c->moved_probe =
			v->word(v, w.blob_off, &lw) ||
			v->word(v, w.blob_off + rc_round4(w.blob_len) - 4, &lw);
	}
	return slot;
}

static const struct rw_ddp_policy pol_pick = {
	.mode = RW_DDP_PICK,
	.pick = pk_pick,
};

static const struct rw_ddp_policy pol_pick1 = {
	.mode = RW_DDP_PICK,
	.pick = pk_pick,
	.max_chunks = 1,
};

/* ---------------------------------------------------------------------- */
/* helpers (the shared ones are in red_codec.c)                           */

/* Where the body starts: the length of the message with no body. */
static uint32_t header_len(rc_put_fn put, uint32_t nr)
{
	struct rc_enc h;
	uint32_t n;

	rc_ref_encode(&h, put, RED_XDR_VOID, NULL, nr, 256);
	n = h.len;
	rc_enc_free(&h);
	return n;
}

static uint32_t ref_word(const struct rc_enc *ref, uint32_t at)
{
	uint32_t w;

	ck_assert_uint_le((uint64_t)at + 4, ref->len);
	memcpy(&w, ref->buf + at, 4);
	return ntohl(w);
}

/* The decoded red_mixed holds the original's values. */
static void check_mixed_eq(const red_mixed *out,
			   const struct red_mixed_store *s)
{
	size_t n = s->m.blob.red_blob_len;
	unsigned i;

	ck_assert_int_eq(out->before, s->m.before);
	ck_assert(out->h == s->m.h);
	ck_assert_uint_eq(out->blob.red_blob_len, n);
	ck_assert(!n || !memcmp(out->blob.red_blob_val, s->bufs[0], n));
	ck_assert_ptr_nonnull(out->name);
	ck_assert_str_eq(out->name, s->name);
	ck_assert(!memcmp(out->tag, "tagtag", 6));
	ck_assert_uint_eq(out->attr.size, s->m.attr.size);
	ck_assert_ptr_nonnull(out->opt);
	ck_assert_uint_eq(out->opt->flags, 0xf00d);
	ck_assert_uint_eq(out->opt->body.red_blob_len, n + 1);
	ck_assert(!memcmp(out->opt->body.red_blob_val, s->bufs[1], n + 1));
	ck_assert_uint_eq(out->list.list_len, 3);
	for (i = 0; i < 3; i++) {
		ck_assert_uint_eq(out->list.list_val[i].red_blob_len,
				  n + 2 + i);
		ck_assert(!memcmp(out->list.list_val[i].red_blob_val,
				  s->bufs[2 + i], n + 2 + i));
	}
	ck_assert(out->after == s->m.after);
	ck_assert_uint_eq(out->last.red_blob_len, n + 5);
	ck_assert(!memcmp(out->last.red_blob_val, s->bufs[5], n + 5));
}

/* The red_mixed in a reduced Call / Reply; out is cleared first, so it can
 * be freed whatever the outcome. */
static enum rw_xdr_err pk_decode_call(const struct rc_enc *red,
				      const struct rw_ddp_chunk *c, unsigned n,
				      const struct rw_ddp_policy *pol,
				      red_mixed *out)
{
	memset(out, 0, sizeof(*out));
	return rc_decode_call(red->buf, red->len, c, n, pol,
			      (xdrproc_t)xdr_red_mixed, out);
}

static enum rw_xdr_err pk_decode_reply(const struct rc_enc *red,
				       const struct rw_ddp_chunk *c, unsigned n,
				       const struct rw_ddp_policy *pol,
				       red_mixed *out, struct rw_axdr *a)
{
	memset(out, 0, sizeof(*out));
	return rc_decode_reply(red->buf, red->len, c, n, pol,
			       (xdrproc_t)xdr_red_mixed, out, a);
}

static void out_free(red_mixed *out)
{
	xdr_free((xdrproc_t)xdr_red_mixed, (char *)out);
}

/*
 * A Reply decoded through a: the original's values, the oracle when
 * re-encoded, and the decoder's own account of the Write chunks (used,
 * copies, octets copied).
 */
static void check_reply_decoded(const struct rw_axdr *a, red_mixed *out,
				const struct red_mixed_store *s,
				const struct rc_enc *ref, unsigned used,
				unsigned copies, unsigned copied)
{
	check_mixed_eq(out, s);
	ck_assert_uint_eq(rw_axdr_chunks_used(a), used);
	ck_assert_uint_eq(rw_axdr_copies(a), copies);
	ck_assert_uint_eq(rw_axdr_bytes_copied(a), copied);
	rc_check_reencodes(rc_put_reply, (xdrproc_t)xdr_red_mixed, out, 0, ref);
}

/*
 * The pick was called for exactly these fields, in order, at offsets where
 * the oracle has each item's data (its length word right before, for
 * counted items), parsed the length the stream gave, and never had a word
 * it needed refused.
 */
static void check_log(const int *fields, unsigned n, const struct rc_enc *ref,
		      uint32_t body)
{
	unsigned i;

	ck_assert_uint_eq(pk_log.n, n);
	for (i = 0; i < n; i++) {
		const struct pk_call *c = &pk_log.c[i];

		ck_assert_msg(c->field == fields[i],
			      "call %u at %u: found %s, expected %s", i, c->off,
			      c->field >= 0 ? pk_names[c->field] : "nothing",
			      pk_names[fields[i]]);
		ck_assert(!c->parse_fail);
		ck_assert_uint_eq(c->plen, c->len);
		ck_assert_int_eq(c->slot, pk_slot[c->field]);
		if (fields[i] != PK_TAG)
			ck_assert_uint_eq(ref_word(ref, body + c->off - 4),
					  c->len);
		else
			ck_assert(
				!memcmp(ref->buf + body + c->off, "tagtag", 6));
		if (i)
			ck_assert_uint_gt(c->off, pk_log.c[i - 1].off);
	}
}

/* Every field of a red_mixed_make(n) in body order (n > 0: all items). */
static const int fields_all[] = {
	PK_BLOB,  PK_NAME,	PK_TAG,	      PK_OPT,
	PK_LIST0, PK_LIST0 + 1, PK_LIST0 + 2, PK_LAST,
};
/* n == 0: blob and name are empty, never reach the stream */
static const int fields_n0[] = {
	PK_TAG, PK_OPT, PK_LIST0, PK_LIST0 + 1, PK_LIST0 + 2, PK_LAST,
};

static const size_t sizes[] = { 0, 1, 3, 4, 4096 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

/* ---------------------------------------------------------------------- */
/* 1, 2: the reducing encoder                                              */

static void rx_blob_last(size_t n, rc_put_fn put, uint32_t nr)
{
	struct red_mixed_store s;
	struct rc_enc red, ref;
	uint32_t hdr = header_len(put, nr), lp;

	pk_set_blob_last();
	pk_log_reset();
	rc_mixed_encode(&s, n, put, nr, &pol_pick, &ref, &red);
	ck_assert_uint_eq(red.body, hdr);

	/* last is the final field: its data ends the unreduced stream */
	lp = ref.len - rc_round4((uint32_t)n + 5);
	ck_assert_uint_eq(ref_word(&ref, lp - 4), n + 5);
	if (n) {
		ck_assert_uint_eq(red.nitems, 2);
		/* blob after int + hyper + its length word */
		ck_assert_uint_eq(ref_word(&ref, hdr + 12), n);
		ck_assert_uint_eq(red.items[0].position, hdr + 16);
		ck_assert_uint_eq(red.items[0].len, n);
		ck_assert_uint_eq(red.items[0].ordinal, 0);
		ck_assert_uint_eq(red.items[0].slot, 0);
		ck_assert_ptr_eq(red.items[0].data, s.bufs[0]);
		ck_assert_uint_eq(red.items[1].position, lp);
		ck_assert_uint_eq(red.items[1].len, n + 5);
		ck_assert_uint_eq(red.items[1].ordinal, 7);
		ck_assert_uint_eq(red.items[1].slot, 1);
		ck_assert_ptr_eq(red.items[1].data, s.bufs[5]);
		ck_assert_uint_eq(red.len, ref.len - rc_round4((uint32_t)n) -
						   rc_round4((uint32_t)n + 5));
		check_log(fields_all, 8, &ref, hdr);
		/* the name length word, read after blob was cut out */
		ck_assert_uint_eq(pk_log.c[1].off,
				  16 + rc_round4((uint32_t)n) + 4);
	} else {
		/* blob empty is no item; last keeps its slot 1, not 0:
		 * the slot is the ULB's (V1-WC-3, RFC 8267 6.4), not a
		 * rank among moved items */
		ck_assert_uint_eq(red.nitems, 1);
		ck_assert_uint_eq(red.items[0].position, lp);
		ck_assert_uint_eq(red.items[0].len, 5);
		ck_assert_uint_eq(red.items[0].ordinal, 5);
		ck_assert_uint_eq(red.items[0].slot, 1);
		ck_assert_ptr_eq(red.items[0].data, s.bufs[5]);
		ck_assert_uint_eq(red.len, ref.len - 8);
		check_log(fields_n0, 6, &ref, hdr);
	}
	ck_assert_uint_eq(pk_log.c[pk_log.n - 1].off, lp - hdr);
	rc_check_items(&red, &ref, RC_ITEMS_CUTS);
	rc_mixed_free(&s, &ref, &red);
}

/*
 * V1-WC-3, RFC 8267 6.4: the parsing designator moves exactly blob (slot
 * 0) and last (slot 1), at the oracle's positions, in a Call and in a
 * Reply; with n = 0 blob is no item and only last moves, still slot 1.
 */
START_TEST(test_wc_3_rxdr_moves_blob_and_last_with_slots)
{
	rx_blob_last(sizes[_i], rc_put_call, RED_MIXED);
	rx_blob_last(sizes[_i], rc_put_reply, 0);
}
END_TEST

/*
 * V1-WC-3: with one Write chunk offered (max_chunks 1) a result whose
 * slot is 1 stays inline: only blob moves, last is in the reduced payload
 * at its unreduced place minus blob.  With n = 0 nothing moves at all.
 */
START_TEST(test_wc_3_rxdr_max_chunks_1_last_inline)
{
	struct red_mixed_store s;
	struct rc_enc red, ref;
	uint32_t hdr = header_len(rc_put_reply, 0), lp;
	size_t n;

	pk_set_blob_last();
	for (n = 0; n <= 4096; n += 4096) {
		pk_log_reset();
		rc_mixed_encode(&s, n, rc_put_reply, 0, &pol_pick1, &ref, &red);
		lp = ref.len - rc_round4((uint32_t)n + 5);
		if (n) {
			ck_assert_uint_eq(red.nitems, 1);
			ck_assert_uint_eq(red.items[0].position, hdr + 16);
			ck_assert_uint_eq(red.items[0].slot, 0);
			ck_assert_ptr_eq(red.items[0].data, s.bufs[0]);
			ck_assert_uint_eq(red.len, ref.len - n);
			/* last's length word and data inline, shifted by
			 * the blob cut */
			ck_assert(!memcmp(red.buf + lp - 4 - n,
					  ref.buf + lp - 4, 4 + n + 5));
			check_log(fields_all, 8, &ref, hdr);
		} else {
			ck_assert_uint_eq(red.nitems, 0);
			ck_assert_uint_eq(red.len, ref.len);
			ck_assert(!memcmp(red.buf, ref.buf, ref.len));
			check_log(fields_n0, 6, &ref, hdr);
		}
		/* the pick still said 1 for last; the stream kept it */
		ck_assert_int_eq(pk_log.c[pk_log.n - 1].slot, 1);
		rc_check_items(&red, &ref, RC_ITEMS_CUTS);
		rc_mixed_free(&s, &ref, &red);
	}
}
END_TEST

/* ---------------------------------------------------------------------- */
/* 3: the reassembling decoder, Read chunks                                */

static void rd_roundtrip(size_t n, unsigned how)
{
	struct red_mixed_store s;
	struct rc_enc red, ref;
	struct rc_rchunks rc;
	red_mixed out;
	uint32_t hdr = header_len(rc_put_call, RED_MIXED);
	unsigned i;

	pk_set_blob_last();
	rc_mixed_encode(&s, n, rc_put_call, RED_MIXED, &pol_pick, &ref, &red);
	ck_assert_uint_eq(red.nitems, n ? 2 : 1);
	rc_rchunks_make(&rc, &red, how);

	pk_log_reset();
	ck_assert_int_eq(pk_decode_call(&red, rc.c, rc.n, &pol_pick, &out),
			 RW_XERR_OK);
	check_mixed_eq(&out, &s);
	rc_check_reencodes(rc_put_call, (xdrproc_t)xdr_red_mixed, &out,
			   RED_MIXED, &ref);
	out_free(&out);

	/* asked at the chunk positions only, and found blob and last
	 * there: to reach last it parsed the words after blob's chunk */
	if (n)
		check_log((const int[]){ PK_BLOB, PK_LAST }, 2, &ref, hdr);
	else
		check_log((const int[]){ PK_LAST }, 1, &ref, hdr);
	for (i = 0; i < pk_log.n; i++)
		ck_assert_uint_eq(pk_log.c[i].off + hdr, red.items[i].position);
	rc_rchunks_free(&rc);
	rc_mixed_free(&s, &ref, &red);
}

/*
 * V1-DDP-1: Read chunks at the items the designator accepts rebuild a
 * red_mixed equal to the original (each size; chunks exact, and padded in
 * two segments).
 */
START_TEST(test_ddp_1_axdr_read_roundtrip)
{
	rd_roundtrip(sizes[_i], RC_RCH_COPY);
	rd_roundtrip(sizes[_i], RC_RCH_SPLIT | RC_RCH_PAD);
}
END_TEST

/*
 * V1-DDP-1: a Read chunk at name (or at list[1]) - built by reducing with
 * a designator that also picks it - is refused under the blob/last
 * designator, while the same descriptors decode under the one that made
 * them.
 */
START_TEST(test_ddp_1_axdr_read_refuses_name_and_list)
{
	struct red_mixed_store s;
	struct rc_enc red;
	struct rc_rchunks rc;
	red_mixed out;
	unsigned pass;

	red_mixed_make(&s, 12);
	for (pass = 0; pass < 2; pass++) {
		int bad = pass ? PK_LIST0 + 1 : PK_NAME;

		/* the sender's designator: blob, name or list[1], last
		 * (slots ascend, as the encoder requires) */
		pk_set(0, pass ? -1 : 1, pass ? 1 : -1, 2);
		rc_red_encode(&red, rc_put_call, (xdrproc_t)xdr_red_mixed, &s.m,
			      RED_MIXED, red_mixed_cap(12), &pol_pick);
		ck_assert_uint_eq(red.nitems, 3);
		ck_assert_uint_eq(red.items[1].ordinal, pass ? 5 : 1);
		ck_assert_uint_eq(red.items[1].len, pass ? 15 : 12);
		rc_rchunks_make(&rc, &red, RC_RCH_COPY);

		pk_log_reset();
		ck_assert_int_eq(pk_decode_call(&red, rc.c, rc.n, &pol_pick,
						&out),
				 RW_XERR_OK);
		check_mixed_eq(&out, &s);
		out_free(&out);

		/* the receiver's ULB: blob and last only */
		pk_set_blob_last();
		pk_log_reset();
		ck_assert_int_eq(pk_decode_call(&red, rc.c, rc.n, &pol_pick,
						&out),
				 RW_XERR_NOT_ELIGIBLE);
		out_free(&out);
		/* refused at the second chunk, which the parse identified */
		ck_assert_uint_eq(pk_log.n, 2);
		ck_assert_int_eq(pk_log.c[1].field, bad);
		ck_assert_int_eq(pk_log.c[1].slot, -1);
		ck_assert_uint_eq(pk_log.c[1].off + red.body,
				  red.items[1].position);
		rc_rchunks_free(&rc);
		rc_enc_free(&red);
	}
	red_mixed_free(&s);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* 4: the reassembling decoder, Write chunks                               */

/*
 * RFC 8267 6.4, V1-WC-6: blob is empty (the "failed READ"): Write chunk 0
 * comes back empty and last comes from chunk 1.  Chunk 0 returned with
 * data is a DDP violation (RW_XERR_UNUSED_CHUNK).
 */
START_TEST(test_wc_6_axdr_write_skips_empty_chunk)
{
	struct red_mixed_store s;
	struct rc_enc red, ref;
	struct rc_wchunks wc;
	struct rw_axdr a;
	red_mixed out;
	char junk[8] = "junkjunk";
	uint32_t hdr = header_len(rc_put_reply, 0);

	pk_set_blob_last();
	rc_mixed_encode(&s, 0, rc_put_reply, 0, &pol_pick, &ref, &red);
	ck_assert_uint_eq(red.nitems, 1);
	ck_assert_uint_eq(red.items[0].slot, 1);
	rc_wchunks_make(&wc, &red, 2);
	ck_assert_uint_eq(wc.s[0].len, 0);
	ck_assert_uint_eq(wc.s[1].len, 5);

	pk_log_reset();
	ck_assert_int_eq(pk_decode_reply(&red, wc.c, wc.n, &pol_pick, &out, &a),
			 RW_XERR_OK);
	check_reply_decoded(&a, &out, &s, &ref, 2, 1, 5);
	ck_assert_uint_eq(out.last.red_blob_len, 5);
	ck_assert(!memcmp(out.last.red_blob_val, s.bufs[5], 5));
	ck_assert_uint_eq(XDR_GETPOS(&a.xdr), ref.len);
	out_free(&out);
	/* every item asked while chunks remained: the whole parse */
	check_log(fields_n0, 6, &ref, hdr);

	/* chunk 0 filled although no result claims it */
	wc.s[0].data = junk;
	wc.s[0].len = sizeof(junk);
	ck_assert_int_eq(pk_decode_reply(&red, wc.c, wc.n, &pol_pick, &out, &a),
			 RW_XERR_UNUSED_CHUNK);
	out_free(&out);
	/* ... even with 1 octet */
	wc.s[0].len = 1;
	ck_assert_int_eq(pk_decode_reply(&red, wc.c, wc.n, &pol_pick, &out, &a),
			 RW_XERR_UNUSED_CHUNK);
	out_free(&out);
	rc_wchunks_free(&wc);
	rc_mixed_free(&s, &ref, &red);
}
END_TEST

/*
 * V1-WC-3: slots must ascend with the items.  A designator giving blob
 * slot 1 and last slot 0, three Write chunks offered: with chunk 0 holding
 * last (where that designator sends it) the skip over it at blob already
 * fails (RW_XERR_UNUSED_CHUNK); with chunk 0 empty blob takes chunk 1 and
 * last would go back to chunk 0 (RW_XERR_SLOT_ORDER).  Two items in the
 * same slot are out of order too.
 */
/*
 * A reply whose blob and last were placed in slots 1 and 0: the responder's
 * encoder refuses to make one (test_wc_3_rxdr_refuses_slot_order), so it
 * is encoded with ascending slots and relabelled, the payload being the
 * same; the decoder then runs the reversed designator.
 */
static void encode_reversed(struct rc_enc *red, struct red_mixed_store *s)
{
	pk_set(0, -1, -1, 1);
	rc_red_encode(red, rc_put_reply, (xdrproc_t)xdr_red_mixed, &s->m, 0,
		      red_mixed_cap(5), &pol_pick);
	ck_assert_uint_eq(red->nitems, 2);
	red->items[0].slot = 1;
	red->items[1].slot = 0;
	pk_set(1, -1, -1, 0);
}

/* The responder's encoder refuses slots that do not ascend: it would put
 * two results in one chunk, or reorder them (V1-WC-3). */
START_TEST(test_wc_3_rxdr_refuses_slot_order)
{
	static const int last_slot[] = { 0, 1 }; /* below, equal */
	struct rw_ddp_item items[RC_MAX_ITEMS];
	struct red_mixed_store s;
	struct rw_rxdr r;
	unsigned char *buf;
	unsigned i;

	red_mixed_make(&s, 5);
	buf = red_xmalloc(red_mixed_cap(5));
	for (i = 0; i < 2; i++) {
		pk_set(1, -1, -1, last_slot[i]);
		ck_assert(rw_rxdr_create(&r, buf, red_mixed_cap(5), &pol_pick,
					 items, RC_MAX_ITEMS));
		ck_assert(!rc_put_reply(&r.xdr, &s.m, (xdrproc_t)xdr_red_mixed,
					0));
		ck_assert_int_eq(rw_rxdr_finish(&r), RW_XERR_SLOT_ORDER);
		ck_assert_uint_eq(rw_rxdr_nitems(&r), 1);
		ck_assert_uint_eq(items[0].slot, 1);
	}
	free(buf);
	red_mixed_free(&s);
}
END_TEST

START_TEST(test_wc_3_axdr_write_slot_order)
{
	struct red_mixed_store s;
	struct rc_enc red;
	struct rc_wchunks wc;
	struct rw_axdr a;
	red_mixed out;

	red_mixed_make(&s, 5);
	encode_reversed(&red, &s);
	/* chunk 0: last, 1: blob, 2: empty */
	rc_wchunks_make(&wc, &red, 3);
	ck_assert_uint_eq(wc.s[0].len, 10);
	ck_assert_uint_eq(wc.s[1].len, 5);
	ck_assert_uint_eq(wc.s[2].len, 0);

	pk_log_reset();
	ck_assert_int_eq(pk_decode_reply(&red, wc.c, wc.n, &pol_pick, &out, &a),
			 RW_XERR_UNUSED_CHUNK);
	out_free(&out);
	ck_assert_int_eq(pk_log.c[pk_log.n - 1].field, PK_BLOB);

	wc.s[0].len = 0; /* last's chunk came back empty */
	pk_log_reset();
	ck_assert_int_eq(pk_decode_reply(&red, wc.c, wc.n, &pol_pick, &out, &a),
			 RW_XERR_SLOT_ORDER);
	out_free(&out);
	ck_assert_int_eq(pk_log.c[pk_log.n - 1].field, PK_LAST);
	ck_assert_int_eq(pk_log.c[pk_log.n - 1].slot, 0);
	ck_assert_uint_eq(rw_axdr_chunks_used(&a), 2);
	rc_wchunks_free(&wc);
	rc_enc_free(&red);

	/* blob and last both slot 0, two chunks offered */
	pk_set(0, -1, -1, 1);
	rc_red_encode(&red, rc_put_reply, (xdrproc_t)xdr_red_mixed, &s.m, 0,
		      red_mixed_cap(5), &pol_pick);
	ck_assert_uint_eq(red.nitems, 2);
	pk_set(0, -1, -1, 0);
	memset(&wc, 0, sizeof(wc));
	wc.s[0].data = red.items[0].data;
	wc.s[0].len = red.items[0].len;
	wc.c[0] = (struct rw_ddp_chunk){ 0, 1, &wc.s[0] };
	wc.c[1] = (struct rw_ddp_chunk){ 0, 1, &wc.s[1] };
	pk_log_reset();
	ck_assert_int_eq(pk_decode_reply(&red, wc.c, 2, &pol_pick, &out, &a),
			 RW_XERR_SLOT_ORDER);
	out_free(&out);
	ck_assert_int_eq(pk_log.c[pk_log.n - 1].field, PK_LAST);
	rc_enc_free(&red);
	red_mixed_free(&s);
}
END_TEST

/*
 * The same blob-1/last-0 designator with exactly the two Write chunks it
 * needs, chunk 0 returned empty.  Blob takes chunk 1, the last one; last
 * is designated for chunk 0, an offered chunk (V1-WC-3), so the decoder
 * must still ask pick() once the chunks are used up and fail with
 * RW_XERR_SLOT_ORDER, not read last's data "inline" from a payload that
 * does not have it (for a result in the middle of a message the following
 * fields would be consumed as its data).
 */
START_TEST(test_wc_3_axdr_write_slot_order_after_last_chunk)
{
	struct red_mixed_store s;
	struct rc_enc red;
	struct rc_wchunks wc;
	struct rw_axdr a;
	red_mixed out;
	enum rw_xdr_err e;

	red_mixed_make(&s, 5);
	encode_reversed(&red, &s);
	rc_wchunks_make(&wc, &red, 2); /* chunk 0: last, 1: blob */
	ck_assert_int_eq(pk_decode_reply(&red, wc.c, wc.n, &pol_pick, &out, &a),
			 RW_XERR_UNUSED_CHUNK);
	out_free(&out);

	wc.s[0].len = 0; /* last's chunk came back empty */
	pk_log_reset();
	e = pk_decode_reply(&red, wc.c, wc.n, &pol_pick, &out, &a);
	out_free(&out);
	ck_assert_uint_eq(rw_axdr_chunks_used(&a), 2);
	ck_assert_msg(e == RW_XERR_SLOT_ORDER,
		      "last (slot 0) after chunk 1 was used: got %s (%d), "
		      "pick() last asked about %s",
		      rw_xdr_err_str(e), (int)e,
		      pk_log.n && pk_log.c[pk_log.n - 1].field >= 0 ?
			      pk_names[pk_log.c[pk_log.n - 1].field] :
			      "nothing");
	rc_wchunks_free(&wc);
	rc_enc_free(&red);
	red_mixed_free(&s);
}
END_TEST

/*
 * V1-WC-3: a slot past the Write chunks offered stays inline on both
 * sides: the responder's encoder (max_chunks 2) keeps last (slot 5) in the
 * payload, the requester's decoder with two chunks reads it from there and
 * accepts chunk 1 back empty (V1-WC-6).
 */
START_TEST(test_wc_3_slot_past_offered_chunks_inline)
{
	static const struct rw_ddp_policy pol2 = {
		.mode = RW_DDP_PICK,
		.pick = pk_pick,
		.max_chunks = 2,
	};
	struct red_mixed_store s;
	struct rc_enc red, ref;
	struct rc_wchunks wc;
	struct rw_axdr a;
	red_mixed out;

	pk_set(0, -1, -1, 5);
	pk_log_reset();
	rc_mixed_encode(&s, 9, rc_put_reply, 0, &pol2, &ref, &red);
	ck_assert_uint_eq(red.nitems, 1);
	ck_assert_uint_eq(red.items[0].slot, 0);
	ck_assert_uint_eq(red.len, ref.len - 12);
	ck_assert_int_eq(pk_log.c[pk_log.n - 1].slot, 5);
	rc_check_items(&red, &ref, RC_ITEMS_CUTS);
	rc_wchunks_make(&wc, &red, 2);
	ck_assert_uint_eq(wc.s[1].len, 0);
	pk_log_reset();
	ck_assert_int_eq(pk_decode_reply(&red, wc.c, wc.n, &pol2, &out, &a),
			 RW_XERR_OK);
	check_mixed_eq(&out, &s);
	rc_check_reencodes(rc_put_reply, (xdrproc_t)xdr_red_mixed, &out, 0,
			   &ref);
	out_free(&out);
	ck_assert_uint_eq(rw_axdr_chunks_used(&a), 1);
	ck_assert_uint_eq(rw_axdr_copies(&a), 1);
	ck_assert_int_eq(pk_log.c[pk_log.n - 1].field, PK_LAST);
	ck_assert_int_eq(pk_log.c[pk_log.n - 1].slot, 5);
	rc_wchunks_free(&wc);
	rc_mixed_free(&s, &ref, &red);
}
END_TEST

/* V1-WC-3: n = 5, blob from chunk 0 and last from chunk 1. */
START_TEST(test_wc_3_axdr_write_both_items)
{
	struct red_mixed_store s;
	struct rc_enc red, ref;
	struct rc_wchunks wc;
	struct rw_axdr a;
	red_mixed out;
	uint32_t hdr = header_len(rc_put_reply, 0);

	pk_set_blob_last();
	rc_mixed_encode(&s, 5, rc_put_reply, 0, &pol_pick, &ref, &red);
	ck_assert_uint_eq(red.nitems, 2);
	rc_wchunks_make(&wc, &red, 2);
	ck_assert_uint_eq(wc.s[0].len, 5);
	ck_assert_uint_eq(wc.s[1].len, 10);

	pk_log_reset();
	ck_assert_int_eq(pk_decode_reply(&red, wc.c, wc.n, &pol_pick, &out, &a),
			 RW_XERR_OK);
	check_reply_decoded(&a, &out, &s, &ref, 2, 2, 15);
	ck_assert_uint_eq(XDR_GETPOS(&a.xdr), ref.len);
	out_free(&out);
	check_log(fields_all, 8, &ref, hdr);
	rc_wchunks_free(&wc);

	/* a third chunk offered and returned empty (V1-WC-6) */
	rc_wchunks_make(&wc, &red, 3);
	ck_assert_int_eq(pk_decode_reply(&red, wc.c, wc.n, &pol_pick, &out, &a),
			 RW_XERR_OK);
	check_mixed_eq(&out, &s);
	out_free(&out);
	ck_assert_uint_eq(rw_axdr_chunks_used(&a), 2);
	rc_wchunks_free(&wc);
	rc_wchunks_make(&wc, &red, 2);

	/* a 5-octet chunk 0 extended to 8 is the RFC 5666 rounding
	 * (AMB-V1-12); to 9 is too long */
	{
		char b8[9];

		memcpy(b8, s.bufs[0], 5);
		memset(b8 + 5, 0, 4);
		wc.s[0].data = b8;
		wc.s[0].len = 8;
		ck_assert_int_eq(pk_decode_reply(&red, wc.c, wc.n, &pol_pick,
						 &out, &a),
				 RW_XERR_OK);
		check_mixed_eq(&out, &s);
		out_free(&out);
		wc.s[0].len = 9;
		ck_assert_int_eq(pk_decode_reply(&red, wc.c, wc.n, &pol_pick,
						 &out, &a),
				 RW_XERR_CHUNK_LEN);
		out_free(&out);
	}
	rc_wchunks_free(&wc);
	rc_mixed_free(&s, &ref, &red);
}
END_TEST

/*
 * V1-WC-3: only one Write chunk offered, so the responder encoded with
 * max_chunks 1: blob from chunk 0, last inline from the payload.
 */
START_TEST(test_wc_3_axdr_write_one_chunk_last_inline)
{
	struct red_mixed_store s;
	struct rc_enc red, ref;
	struct rc_wchunks wc;
	struct rw_axdr a;
	red_mixed out;

	pk_set_blob_last();
	rc_mixed_encode(&s, 5, rc_put_reply, 0, &pol_pick1, &ref, &red);
	ck_assert_uint_eq(red.nitems, 1);
	ck_assert_uint_eq(red.len, ref.len - 8);
	rc_wchunks_make(&wc, &red, 1);

	pk_log_reset();
	ck_assert_int_eq(pk_decode_reply(&red, wc.c, wc.n, &pol_pick, &out, &a),
			 RW_XERR_OK);
	check_reply_decoded(&a, &out, &s, &ref, 1, 1, 5);
	out_free(&out);
	/* past the last chunk the decoder still asks, since a slot below
	 * it would be out of order: last has slot 1, no chunk, inline */
	ck_assert_int_eq(pk_log.c[0].field, PK_BLOB);
	ck_assert_int_eq(pk_log.c[pk_log.n - 1].field, PK_LAST);
	ck_assert_int_eq(pk_log.c[pk_log.n - 1].slot, 1);

	/* the same inline reply with no chunk offered at all */
	pk_log_reset();
	{
		struct rc_enc plain;

		rc_red_encode(&plain, rc_put_reply, (xdrproc_t)xdr_red_mixed,
			      &s.m, 0, red_mixed_cap(5), NULL);
		ck_assert_int_eq(pk_decode_reply(&plain, NULL, 0, &pol_pick,
						 &out, &a),
				 RW_XERR_OK);
		check_mixed_eq(&out, &s);
		out_free(&out);
		ck_assert_uint_eq(pk_log.n, 0);
		rc_enc_free(&plain);
	}
	rc_wchunks_free(&wc);
	rc_mixed_free(&s, &ref, &red);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* 5: the view's bounds                                                    */

/* Every pick call so far: nothing at or after the item, its length word
 * right before it. */
static void check_view_bounds(const char *what)
{
	unsigned i;

	ck_assert_uint_gt(pk_log.n, 0);
	for (i = 0; i < pk_log.n; i++) {
		const struct pk_call *c = &pk_log.c[i];

		ck_assert_msg(!c->ahead_seen,
			      "%s: call %u (%s at %u): the view gave a word at "
			      "or after the item",
			      what, i, c->field >= 0 ? pk_names[c->field] : "?",
			      c->off);
		if (c->field != PK_TAG)
			ck_assert_msg(c->lenword_ok,
				      "%s: call %u: length word not seen", what,
				      i);
	}
}

/*
 * The view ends where the item starts, on all three streams: word() at the
 * item's own data offset, 4 past it, at and after its end and near 4 GiB
 * is false; the length word just before it is the item's length.
 */
START_TEST(test_view_refuses_item_and_beyond)
{
	struct red_mixed_store s;
	struct rc_enc red;
	struct rc_rchunks rc;
	struct rc_wchunks wc;
	struct rw_axdr a;
	red_mixed out;

	pk_set_blob_last();
	red_mixed_make(&s, 7);

	pk_log_reset();
	rc_red_encode(&red, rc_put_call, (xdrproc_t)xdr_red_mixed, &s.m,
		      RED_MIXED, red_mixed_cap(7), &pol_pick);
	ck_assert_uint_eq(pk_log.n, 8);
	check_view_bounds("rxdr");
	rc_rchunks_make(&rc, &red, RC_RCH_COPY);
	pk_log_reset();
	ck_assert_int_eq(pk_decode_call(&red, rc.c, rc.n, &pol_pick, &out),
			 RW_XERR_OK);
	out_free(&out);
	ck_assert_uint_eq(pk_log.n, 2);
	check_view_bounds("axdr READ");
	rc_rchunks_free(&rc);
	rc_enc_free(&red);

	rc_red_encode(&red, rc_put_reply, (xdrproc_t)xdr_red_mixed, &s.m, 0,
		      red_mixed_cap(7), &pol_pick);
	rc_wchunks_make(&wc, &red, 2);
	pk_log_reset();
	ck_assert_int_eq(pk_decode_reply(&red, wc.c, wc.n, &pol_pick, &out, &a),
			 RW_XERR_OK);
	out_free(&out);
	ck_assert_uint_eq(pk_log.n, 8);
	check_view_bounds("axdr WRITE");
	rc_wchunks_free(&wc);
	rc_enc_free(&red);
	red_mixed_free(&s);
}
END_TEST

/*
 * rw_xdr.h: the view "fails ... inside chunk data".  When last is picked,
 * blob's data has been moved (encoder) or inserted from a chunk (decoder);
 * a word inside it must be refused, on both sides alike, so a designator
 * cannot decide differently at the two peers.  Checked per stream: 0 =
 * rxdr, 1 = axdr READ, 2 = axdr WRITE.
 *
 * On the encoder that means rw_reduce.c's rxdr_view_word() must refuse a moved
 * item's memory and pad, which rw_rxdr_peek_word() would read.
 */
START_TEST(test_view_refuses_moved_data)
{
	static const char *const what[] = { "rxdr", "axdr READ", "axdr WRITE" };
	struct red_mixed_store s;
	struct rc_enc red;
	struct rc_rchunks rc;
	struct rc_wchunks wc;
	struct rw_axdr a;
	red_mixed out;
	size_t n = 7;

	pk_set_blob_last();
	red_mixed_make(&s, n);
	rc_red_encode(&red, _i == 2 ? rc_put_reply : rc_put_call,
		      (xdrproc_t)xdr_red_mixed, &s.m, _i == 2 ? 0 : RED_MIXED,
		      red_mixed_cap(n), &pol_pick);
	ck_assert_uint_eq(red.nitems, 2);
	if (_i == 1) {
		rc_rchunks_make(&rc, &red, RC_RCH_COPY);
		pk_log_reset();
		ck_assert_int_eq(pk_decode_call(&red, rc.c, rc.n, &pol_pick,
						&out),
				 RW_XERR_OK);
		out_free(&out);
		rc_rchunks_free(&rc);
	} else if (_i == 2) {
		rc_wchunks_make(&wc, &red, 2);
		pk_log_reset();
		ck_assert_int_eq(pk_decode_reply(&red, wc.c, wc.n, &pol_pick,
						 &out, &a),
				 RW_XERR_OK);
		out_free(&out);
		rc_wchunks_free(&wc);
	} else {
		/* pk_log from red_encode */
	}
	ck_assert_int_eq(pk_log.c[pk_log.n - 1].field, PK_LAST);
	ck_assert_msg(pk_log.c[pk_log.n - 1].moved_probe == 0,
		      "%s: the view gave a word inside blob's moved data",
		      what[_i]);
	rc_enc_free(&red);
	red_mixed_free(&s);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* 6: the probe                                                            */

/*
 * V1-WC-3: the probe never designates in RW_DDP_PICK mode (it has no view
 * to give a designator); the walk runs to the end, finds nothing and never
 * calls pick().  The same structure with blob and last designated by
 * ordinal is found, so the probe would see them if it designated.
 */
START_TEST(test_wc_3_probe_finds_nothing)
{
	static const struct rw_ddp_policy by_ordinal = {
		.mode = RW_DDP_ITEMS,
		.mask = RW_DDP_ITEM(0) | RW_DDP_ITEM(7),
	};
	struct rw_probe_item found[RC_MAX_ITEMS];
	struct red_mixed_store s;
	struct rw_pxdr p;

	pk_set_blob_last();
	red_mixed_make(&s, 64);
	memset(found, 0xa5, sizeof(found));
	pk_log_reset();
	rw_pxdr_create(&p, &pol_pick, found, RC_MAX_ITEMS);
	ck_assert(xdr_red_mixed(&p.xdr, &s.m));
	ck_assert_uint_eq(rw_pxdr_found(&p), 0);
	ck_assert_uint_eq(pk_log.n, 0);
	ck_assert_uint_eq(found[0].ordinal, 0xa5a5a5a5u);

	rw_pxdr_create(&p, &by_ordinal, found, RC_MAX_ITEMS);
	ck_assert(xdr_red_mixed(&p.xdr, &s.m));
	ck_assert_uint_eq(rw_pxdr_found(&p), 2);
	ck_assert_ptr_eq(found[0].data, s.bufs[0]);
	ck_assert_ptr_eq(found[1].data, s.bufs[5]);
	red_mixed_free(&s);
}
END_TEST

Suite *pick_suite(void)
{
	Suite *s = suite_create("pick");
	TCase *enc = tcase_create("encode");
	TCase *dec = tcase_create("decode");
	TCase *view = tcase_create("view");

	tcase_add_loop_test(enc, test_wc_3_rxdr_moves_blob_and_last_with_slots,
			    0, NSIZES);
	tcase_add_test(enc, test_wc_3_rxdr_max_chunks_1_last_inline);
	tcase_add_test(enc, test_wc_3_rxdr_refuses_slot_order);
	tcase_add_test(enc, test_wc_3_probe_finds_nothing);
	suite_add_tcase(s, enc);

	tcase_add_loop_test(dec, test_ddp_1_axdr_read_roundtrip, 0, NSIZES);
	tcase_add_test(dec, test_ddp_1_axdr_read_refuses_name_and_list);
	tcase_add_test(dec, test_wc_6_axdr_write_skips_empty_chunk);
	tcase_add_test(dec, test_wc_3_axdr_write_slot_order);
	tcase_add_test(dec, test_wc_3_axdr_write_slot_order_after_last_chunk);
	tcase_add_test(dec, test_wc_3_axdr_write_both_items);
	tcase_add_test(dec, test_wc_3_axdr_write_one_chunk_last_inline);
	tcase_add_test(dec, test_wc_3_slot_past_offered_chunks_inline);
	suite_add_tcase(s, dec);

	tcase_add_test(view, test_view_refuses_item_and_beyond);
	tcase_add_loop_test(view, test_view_refuses_moved_data, 0, 3);
	suite_add_tcase(s, view);
	return s;
}
