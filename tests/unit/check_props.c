/*
 * check_props.c - transport properties (src/wire/rw_props.h): the rules a
 * receiver applies to CONNPROP, UPDPROP and REQPROP (v2-05 §6), the
 * xcharext-02 codec of compatibility mode (AMB-V2-1), and the resend a
 * requester derives from each RDMA_ERROR (rw_resend_plan, v2-05 §7.2.4).
 */
#include <check.h>
#include <string.h>

#include "wire/rw_props.h"
#include "wire/rw_role.h"
#include "check_util.h"

static uint8_t words[16][4];

/* Entry i of props: id and a one-word value (len 4), or empty (len 0). */
static void prop(struct rw_prop *props, unsigned i, uint32_t id, int len,
		 uint32_t v)
{
	words[i][0] = (uint8_t)(v >> 24);
	words[i][1] = (uint8_t)(v >> 16);
	words[i][2] = (uint8_t)(v >> 8);
	words[i][3] = (uint8_t)v;
	props[i].id = id;
	props[i].len = (uint32_t)len;
	props[i].data = words[i];
}

/* V2-PROP-4: empty = default; V2-PROP-3 / V2-OPS-7: unknown id skipped;
 * AMB-V2-11: last occurrence wins; V2-OPS-6: absent = default, fixed. */
START_TEST(test_initial_rules)
{
	struct rw_prop pp[5];
	struct rw_propset ps = { .n = 5, .props = pp };
	struct rw_subset nochg = { 0 };
	struct rw_props p;

	prop(pp, 0, RW2_PROP_RBSIZ, 4, 8192);
	prop(pp, 1, 77, 4, 1);		       /* unknown */
	prop(pp, 2, 0xffffff00u, 12, 0);       /* experimental, odd length */
	prop(pp, 3, RW2_PROP_RBSIZ, 4, 16384); /* last occurrence */
	prop(pp, 4, RW2_PROP_BRS, 0, 0);       /* empty: default INLINE */
	rw_subset_set(&nochg, 3);
	ck_assert_int_eq(rw_props_initial(&p, RW_PC_V2, &ps, &nochg), RW_R_OK);
	ck_assert_uint_eq(p.val[RW_SP_RBSIZ], 16384);
	ck_assert_uint_eq(p.val[RW_SP_BRS], RW2_BRS_INLINE);
	ck_assert_uint_eq(p.advertised,
			  RW_SP_BIT(RW_SP_RBSIZ) | RW_SP_BIT(RW_SP_BRS));
	/* RBSIZ is nochg (position 3), REQREMINV absent: fixed; BRS may
	 * change */
	ck_assert(p.nochg & RW_SP_BIT(RW_SP_RBSIZ));
	ck_assert(p.nochg & RW_SP_BIT(RW_SP_REQREMINV));
	ck_assert(!(p.nochg & RW_SP_BIT(RW_SP_BRS)));
}
END_TEST

/* V2-PROP-2: a known id with data of the wrong length or an impossible
 * value is an XDR error, and nothing is applied. */
START_TEST(test_bad_values)
{
	static const struct {
		uint32_t id;
		int len;
		uint32_t v;
	} bad[] = {
		{ RW2_PROP_RBSIZ, 8, 4096 },
		{ RW2_PROP_RBSIZ, 2, 0 },
		{ RW2_PROP_BRS, 4, 3 },
		{ RW2_PROP_BRS, 4, 0xffffffffu },
	};
	struct rw_prop pp[2];
	struct rw_propset ps = { .n = 2, .props = pp };
	struct rw_props p;

	rw_props_init(&p);
	prop(pp, 0, RW2_PROP_BRS, 4, RW2_BRS_GENL);
	prop(pp, 1, bad[_i].id, bad[_i].len, bad[_i].v);
	ck_assert_int_eq(rw_props_initial(&p, RW_PC_V2, &ps, NULL),
			 RW_R_BAD_PROP);
	ck_assert_int_eq(rw_props_update(&p, RW_PC_V2, &ps), RW_R_BAD_PROP);
	ck_assert_uint_eq(p.val[RW_SP_BRS], RW2_BRS_INLINE);
	ck_assert_uint_eq(p.advertised, 0);
}
END_TEST

/* An update of a property said not to change is ignored and counted; so
 * is a Receive Buffer Size below the floor (V2-SEC-1, AMB-V2-17). */
START_TEST(test_update_rules)
{
	struct rw_prop pp[2];
	struct rw_propset ps = { .n = 1, .props = pp };
	struct rw_subset nochg = { 0 };
	struct rw_props p;

	prop(pp, 0, RW2_PROP_BRS, 4, RW2_BRS_NONE);
	rw_subset_set(&nochg, 0);
	ck_assert_int_eq(rw_props_initial(&p, RW_PC_V2, &ps, &nochg), RW_R_OK);
	/* RBSIZ absent from the initial set: fixed at 4096 */
	prop(pp, 0, RW2_PROP_RBSIZ, 4, 65536);
	prop(pp, 1, RW2_PROP_BRS, 4, RW2_BRS_GENL);
	ps.n = 2;
	ck_assert_int_eq(rw_props_update(&p, RW_PC_V2, &ps), RW_R_OK);
	ck_assert_uint_eq(p.val[RW_SP_RBSIZ], 4096);
	ck_assert_uint_eq(p.val[RW_SP_BRS], RW2_BRS_NONE);
	ck_assert_uint_eq(p.ignored, 2);

	/* a changeable RBSIZ of 100 octets is not believed */
	ps.n = 0;
	ck_assert_int_eq(rw_props_initial(&p, RW_PC_V2, &ps, NULL), RW_R_OK);
	p.nochg = 0;
	prop(pp, 0, RW2_PROP_RBSIZ, 4, 100);
	ps.n = 1;
	ck_assert_int_eq(rw_props_update(&p, RW_PC_V2, &ps), RW_R_OK);
	ck_assert_uint_eq(p.val[RW_SP_RBSIZ], 4096);
	ck_assert_uint_eq(p.ignored, 1);
	prop(pp, 0, RW2_PROP_RBSIZ, 4, 2048);
	ck_assert_int_eq(rw_props_update(&p, RW_PC_V2, &ps), RW_R_OK);
	ck_assert_uint_eq(p.val[RW_SP_RBSIZ], 2048);
	/* it bounds what we send, never below the floor */
	ck_assert_uint_eq(rw_props_send_limit(&p, 4096), 2048);
	ck_assert_uint_eq(rw_props_send_limit(&p, 1500), 1500);
}
END_TEST

/* V2-OPS-8, V2-PROP-6, AMB-V2-11: each REQPROP position is done (already
 * so) or rejected (a change, an unknown id, a duplicated id, a bad value),
 * never both (V2-OPS-11). */
START_TEST(test_answer)
{
	struct rw_prop pp[5];
	struct rw_propset want = { .n = 5, .props = pp };
	struct rw_subset done, rej;
	struct rw_props local;
	unsigned i;

	rw_props_init(&local);
	local.val[RW_SP_RBSIZ] = 8192;
	prop(pp, 0, RW2_PROP_RBSIZ, 4, 8192); /* in force: done ... */
	prop(pp, 1, RW2_PROP_RBSIZ, 4, 8192); /* ... but duplicated */
	prop(pp, 2, RW2_PROP_BRS, 0, 0);      /* default INLINE = ours */
	prop(pp, 3, 99, 4, 1);		      /* unknown */
	prop(pp, 4, 98, 0, 0);
	rw_props_answer(&local, RW_PC_V2, &want, &done, &rej);
	ck_assert(rw_subset_test(&done, 2) && !rw_subset_test(&rej, 2));
	for (i = 0; i < 5; i++)
		if (i != 2)
			ck_assert(!rw_subset_test(&done, i) &&
				  rw_subset_test(&rej, i));
	ck_assert_uint_eq(done.words[0], 0x4); /* AMB-V2-7: LSB */
	ck_assert_uint_eq(rej.words[0], 0x1b);

	/* a change, and an impossible value: rejected */
	prop(pp, 0, RW2_PROP_RBSIZ, 4, 4096);
	prop(pp, 1, RW2_PROP_BRS, 4, 7);
	want.n = 2;
	rw_props_answer(&local, RW_PC_V2, &want, &done, &rej);
	ck_assert_uint_eq(done.nwords, 0);
	ck_assert_uint_eq(rej.words[0], 0x3);
}
END_TEST

/* Our CONNPROP body: RBSIZ and BRS with their values, both nochg; it
 * decodes back through the header codec to the same properties. */
START_TEST(test_start_round_trip)
{
	struct rw_prop store[RW_SP_NR];
	uint8_t data[4 * RW_SP_NR], buf[256];
	struct rw_hdr h, d;
	struct rw_hdr_space sp;
	struct rw_props local, peer;
	size_t n;

	rw_props_init(&local);
	local.val[RW_SP_RBSIZ] = 65536;
	local.val[RW_SP_BRS] = RW2_BRS_NONE;
	rw_hdr_init(&h, RW_VERS_2, RW2_CONNPROP, 7, 1);
	rw_props_start(&local, &h.props, &h.subset1, store, data);
	n = rw_encode_call(&h, buf, sizeof(buf));
	ck_assert_uint_eq(n, 16 + 4 + 2 * 12 + 8);
	rw_hdr_space_init(&sp, &rw_v2_limits);
	ck_assert_int_eq(rw_hdr_decode(buf, n, &d, &sp), RW_R_OK);
	ck_assert_int_eq(rw_props_initial(&peer, RW_PC_V2, &d.props,
					  &d.subset1),
			 RW_R_OK);
	ck_assert_uint_eq(peer.val[RW_SP_RBSIZ], 65536);
	ck_assert_uint_eq(peer.val[RW_SP_BRS], RW2_BRS_NONE);
	ck_assert_uint_eq(peer.nochg, RW_SP_BIT(RW_SP_NR) - 1);
}
END_TEST

/* AMB-X-1: xcharext id 2 is REQREMINV (a bool), id 3 is BRS; the v2
 * codec must never read them so (AMB-X-1). */
START_TEST(test_codecs_apart)
{
	struct rw_prop pp[2];
	struct rw_propset ps = { .n = 2, .props = pp };
	struct rw_props x, v;

	prop(pp, 0, 2, 4, 1);
	prop(pp, 1, 3, 4, RW2_BRS_GENL);
	ck_assert_int_eq(rw_props_initial(&x, RW_PC_XCHAR, &ps, NULL), RW_R_OK);
	ck_assert_uint_eq(x.val[RW_SP_REQREMINV], 1);
	ck_assert_uint_eq(x.val[RW_SP_BRS], RW2_BRS_GENL);
	ck_assert_int_eq(rw_props_initial(&v, RW_PC_V2, &ps, NULL), RW_R_OK);
	ck_assert_uint_eq(v.val[RW_SP_BRS], RW2_BRS_INLINE); /* id 2 = 1 */
	ck_assert_uint_eq(v.val[RW_SP_REQREMINV], 0);
	ck_assert_int_eq(rw_prop_sem(RW_PC_V2, 3), -1);
	ck_assert_uint_eq(rw_prop_id(RW_PC_V2, RW_SP_REQREMINV), 0);
	/* XC-2: a REQREMINV that is not a bool */
	prop(pp, 0, 2, 4, 2);
	ck_assert_int_eq(rw_props_initial(&x, RW_PC_XCHAR, &ps, NULL),
			 RW_R_BAD_PROP);
}
END_TEST

/* xcharext optinfo bodies (xcharext-02 §4): INITXCH, UPDXCH with pendclr,
 * truncation anywhere (XC-1), RESPXCH out. */
START_TEST(test_xchar_bodies)
{
	static const uint8_t init[] = {
		0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0x20, 0, 0, 0,
		0, 3, 0, 0, 0, 4, 0, 0, 0, 2, 0, 0, 0, 1, 0,	0, 0, 3,
	};
	static const uint8_t upd[] = {
		0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0x40, 0, 0, 0, 0, 1,
	};
	struct rw_xchar_msg m;
	struct rw_props p;
	struct rw_subset done = { .nwords = 1, .words = { 1 } }, rej = { 0 };
	uint8_t out[64];
	uint32_t cut;

	ck_assert_int_eq(rw_xchar_decode(RW_XC_INITXCH, init, sizeof(init), &m),
			 RW_R_OK);
	ck_assert_uint_eq(m.set.n, 2);
	ck_assert_int_eq(rw_props_initial(&p, RW_PC_XCHAR, &m.set, &m.nochg),
			 RW_R_OK);
	ck_assert_uint_eq(p.val[RW_SP_RBSIZ], 8192);
	ck_assert_uint_eq(p.val[RW_SP_BRS], RW2_BRS_GENL);
	ck_assert(p.nochg & RW_SP_BIT(RW_SP_RBSIZ));
	ck_assert(p.nochg & RW_SP_BIT(RW_SP_BRS));
	for (cut = 0; cut < sizeof(init); cut += 4)
		ck_assert_int_ne(rw_xchar_decode(RW_XC_INITXCH, init, cut, &m),
				 RW_R_OK);

	ck_assert_int_eq(rw_xchar_decode(RW_XC_UPDXCH, upd, sizeof(upd), &m),
			 RW_R_OK);
	ck_assert(m.pendclr);
	ck_assert_uint_eq(m.set.n, 1);
	ck_assert_uint_eq(m.set.props[0].id, 1);
	for (cut = 0; cut < sizeof(upd); cut += 4)
		ck_assert_int_ne(rw_xchar_decode(RW_XC_UPDXCH, upd, cut, &m),
				 RW_R_OK);
	ck_assert_int_eq(rw_xchar_decode(RW_XC_RESPXCH, upd, sizeof(upd), &m),
			 RW_R_BAD_OPTION);

	ck_assert_uint_eq(rw_xchar_respxch(&done, &rej, out, sizeof(out)), 16);
	ck_assert_uint_eq(out[3], 1);  /* done: one word */
	ck_assert_uint_eq(out[7], 1);  /* ... position 0 */
	ck_assert_uint_eq(out[11], 0); /* rej: empty */
	ck_assert_uint_eq(out[15], 0); /* pend: empty */
	ck_assert_uint_eq(rw_xchar_respxch(&done, &rej, out, 15), 0);
}
END_TEST

/* ---- rw_resend_plan ----------------------------------------------------- */

static struct rw_segment wsegs[2] = { { 0x11, 4096, 0x1000 },
				      { 0x12, 8192, 0x9000 } };
static struct rw_chunk wch[2] = { { 1, &wsegs[0] }, { 1, &wsegs[1] } };
static struct rw_segment rseg = { 0x13, 65536, 0x20000 };
static struct rw_read_seg reads[2] = { { 0, { 0x14, 100, 0x30000 } },
				       { 16, { 0x15, 200, 0x40000 } } };

static void call_hdr(struct rw_hdr *c, uint32_t vers, bool item_read)
{
	rw_hdr_init(c, vers, RW_MSG, 0x1234, 8);
	c->direction = RW_DIR_CALL;
	c->nwrites = 2;
	c->writes = wch;
	c->has_reply = true;
	c->reply.nsegs = 1;
	c->reply.segs = &rseg;
	c->nreads = 1;
	c->reads = item_read ? &reads[1] : &reads[0];
}

static struct rw_hdr err_hdr(uint32_t vers, uint32_t code)
{
	struct rw_hdr e;

	rw_hdr_init(&e, vers, RW_ERROR, 0x1234, 8);
	e.err.code = code;
	return e;
}

/* V2-NEG-5, AMB-V2-19: ERR_VERS resends in v1 only while negotiating and
 * only if the range has v1; otherwise it is final (V1-ERR-9). */
START_TEST(test_resend_vers)
{
	struct rw_hdr c, e = err_hdr(RW_VERS_1, RW_ERR_VERS);
	struct rw_resend r;

	call_hdr(&c, RW_VERS_2, false);
	e.err.low = e.err.high = 1;
	r = rw_resend_plan(&c, &e, true, false);
	ck_assert_int_eq(r.what, RW_RESEND_VERS);
	ck_assert_uint_eq(r.vers, 1);
	e.vers = RW_VERS_2; /* an RFC 8166 server echoes our version */
	ck_assert_int_eq(rw_resend_plan(&c, &e, true, false).what,
			 RW_RESEND_VERS);
	ck_assert_int_eq(rw_resend_plan(&c, &e, false, false).what,
			 RW_RESEND_NONE);
	e.err.low = e.err.high = 3;
	ck_assert_int_eq(rw_resend_plan(&c, &e, true, false).what,
			 RW_RESEND_NONE);
	e.err.low = 1;
	e.xid++;
	ck_assert_int_eq(rw_resend_plan(&c, &e, true, false).what,
			 RW_RESEND_NONE);
}
END_TEST

/* V2-ERR-8, AMB-V2-8: READ_CHUNKS resends without item chunks, unless the
 * Call had nothing but its PZRC. */
START_TEST(test_resend_reads)
{
	struct rw_hdr c, e = err_hdr(RW_VERS_2, RW2_ERR_READ_CHUNKS);

	call_hdr(&c, RW_VERS_2, true);
	ck_assert_int_eq(rw_resend_plan(&c, &e, false, false).what,
			 RW_RESEND_NO_READS);
	call_hdr(&c, RW_VERS_2, false);
	ck_assert_int_eq(rw_resend_plan(&c, &e, false, false).what,
			 RW_RESEND_NONE);
}
END_TEST

/* V2-ERR-10, V2-ERR-13: fewer Write chunks, a larger Write chunk (1-based
 * index, 0 = unknown: final), a larger Reply chunk. */
START_TEST(test_resend_resources)
{
	struct rw_hdr c, e;
	struct rw_resend r;

	call_hdr(&c, RW_VERS_2, false);
	e = err_hdr(RW_VERS_2, RW2_ERR_WRITE_CHUNKS);
	e.err.max = 1;
	r = rw_resend_plan(&c, &e, false, false);
	ck_assert_int_eq(r.what, RW_RESEND_WRITES);
	ck_assert_uint_eq(r.max, 1);
	e.err.max = 2; /* we offered no more than that: bogus */
	ck_assert_int_eq(rw_resend_plan(&c, &e, false, false).what,
			 RW_RESEND_NONE);

	e = err_hdr(RW_VERS_2, RW2_ERR_WRITE_RESOURCE);
	e.err.chunk_index = 2;
	e.err.length_needed = 10000;
	r = rw_resend_plan(&c, &e, false, false);
	ck_assert_int_eq(r.what, RW_RESEND_WRITE_ROOM);
	ck_assert_uint_eq(r.index, 1);
	ck_assert_uint_eq(r.length, 10000);
	e.err.chunk_index = 0;
	ck_assert_int_eq(rw_resend_plan(&c, &e, false, false).what,
			 RW_RESEND_NONE);
	e.err.chunk_index = 3;
	ck_assert_int_eq(rw_resend_plan(&c, &e, false, false).what,
			 RW_RESEND_NONE);
	e.err.chunk_index = 1;
	e.err.length_needed = 4096; /* no more than it had */
	ck_assert_int_eq(rw_resend_plan(&c, &e, false, false).what,
			 RW_RESEND_NONE);

	e = err_hdr(RW_VERS_2, RW2_ERR_REPLY_RESOURCE);
	e.err.length_needed = 1u << 26;
	r = rw_resend_plan(&c, &e, false, false);
	ck_assert_int_eq(r.what, RW_RESEND_REPLY_ROOM);
	ck_assert_uint_eq(r.length, 1u << 26);
	e.err.length_needed = 65536;
	ck_assert_int_eq(rw_resend_plan(&c, &e, false, false).what,
			 RW_RESEND_NONE);
}
END_TEST

/* The permanent ones (V2-ERR-16 and the others of v2-05 §7.2.4), an error of
 * another version than the Call's (V1-ERR-10), and v1 ERR_CHUNK: a larger
 * Reply chunk only when the Call's was not sized from a known bound. */
START_TEST(test_resend_final)
{
	static const uint32_t codes[] = {
		RW2_ERR_BAD_XDR,      RW2_ERR_INVAL_PROC, RW2_ERR_SEGMENTS,
		RW2_ERR_INVAL_OPTION, RW2_ERR_SYSTEM,	  77
	};
	struct rw_hdr c, e;
	unsigned i;

	call_hdr(&c, RW_VERS_2, true);
	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		e = err_hdr(RW_VERS_2, codes[i]);
		ck_assert_int_eq(rw_resend_plan(&c, &e, false, true).what,
				 RW_RESEND_NONE);
	}
	call_hdr(&c, RW_VERS_1, false);
	e = err_hdr(RW_VERS_2, RW2_ERR_REPLY_RESOURCE);
	e.err.length_needed = 1u << 20;
	ck_assert_int_eq(rw_resend_plan(&c, &e, false, true).what,
			 RW_RESEND_NONE);
	e = err_hdr(RW_VERS_1, RW_ERR_CHUNK);
	ck_assert_int_eq(rw_resend_plan(&c, &e, false, true).what,
			 RW_RESEND_REPLY_ROOM);
	ck_assert_int_eq(rw_resend_plan(&c, &e, false, false).what,
			 RW_RESEND_NONE);
}
END_TEST

Suite *props_suite(void)
{
	Suite *s = suite_create("props");
	TCase *tc = tcase_create("props");
	TCase *rs = tcase_create("resend");

	tcase_add_test(tc, test_initial_rules);
	tcase_add_loop_test(tc, test_bad_values, 0, 4);
	tcase_add_test(tc, test_update_rules);
	tcase_add_test(tc, test_answer);
	tcase_add_test(tc, test_start_round_trip);
	tcase_add_test(tc, test_codecs_apart);
	tcase_add_test(tc, test_xchar_bodies);
	suite_add_tcase(s, tc);
	tcase_add_test(rs, test_resend_vers);
	tcase_add_test(rs, test_resend_reads);
	tcase_add_test(rs, test_resend_resources);
	tcase_add_test(rs, test_resend_final);
	suite_add_tcase(s, rs);
	return s;
}
