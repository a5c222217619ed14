/*
 * fuzz_v2.c - libFuzzer target for what an RPC-over-RDMA v2 endpoint does
 * with a received message beyond decoding it (fuzz_hdr owns the codec):
 * the responder's classification and error, the transport properties of
 * CONNPROP / UPDPROP / REQPROP and of xcharext-02 options (v2-05 §6,
 * AMB-V2-1), and the requester's resend decision for an RDMA_ERROR
 * answering a v2 Call (v2-05 §7.2.4).  For every input:
 *   - a responder error, when one is due, can be built and decodes as an
 *     RDMA_ERROR echoing the XID (V2-ERR-2);
 *   - properties: an initial set or update either applies whole or
 *     reports RW_R_BAD_PROP and changes nothing; the peer's send limit is
 *     never below the floor (AMB-V2-17); a REQPROP answer puts every
 *     position in exactly one of done / rejected, and the RESPROP built
 *     from it decodes to the same subsets (V2-OPS-8/9/11);
 *   - xcharext bodies decode within their length or are refused;
 *   - a resend plan asks only for what the error allows: more room than
 *     the Call had, fewer Write chunks than it had, v1 only after ERR_VERS
 *     while negotiating (V2-ERR-8/10/13, V2-NEG-5).
 * Seeds (tests/fuzz/seeds/v2/): the v2 header vectors of doc/requirements.md §6
 * and property and option messages.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/rw_props.h"
#include "wire/rw_role.h"

#define FUZZ_CHECK(cond)                                                   \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, \
				#cond);                                    \
			abort();                                           \
		}                                                          \
	} while (0)

static struct rw_hdr_space sp, sp2;
static uint8_t out[4096];

static void check_error(const struct rw_rx_call *rx, const struct rw_action *a)
{
	struct rw_hdr e;
	size_t n;

	if (a->what != RW_ACT_REPLY_ERR)
		return;
	n = rw_err_from_action(rx, a, 7, out, sizeof(out));
	if (!n)
		return; /* runts and RDMA_ERRORs are not answered */
	FUZZ_CHECK(rw_hdr_decode(out, n, &e, &sp2) == RW_R_OK);
	FUZZ_CHECK(e.proc == RW_ERROR && e.xid == rx->hdr.xid &&
		   e.credit == 7 && e.err.code == a->err);
}

static void check_props_apply(enum rw_pcodec c, const struct rw_propset *ps,
			      const struct rw_subset *nochg)
{
	struct rw_props p, before;
	enum rw_reason why;

	why = rw_props_initial(&p, c, ps, nochg);
	if (why) {
		FUZZ_CHECK(why == RW_R_BAD_PROP);
		return;
	}
	FUZZ_CHECK(rw_props_send_limit(&p, 65536) >= RW_PROP_RBSIZ_FLOOR);
	before = p;
	why = rw_props_update(&p, c, ps);
	if (why) {
		FUZZ_CHECK(why == RW_R_BAD_PROP &&
			   !memcmp(&p, &before, sizeof(p)));
		return;
	}
	/* applying the same set again changes no value */
	FUZZ_CHECK(!memcmp(p.val, before.val, sizeof(p.val)));
}

static void check_answer(enum rw_pcodec c, const struct rw_propset *want,
			 uint32_t xid)
{
	struct rw_subset done, rej;
	struct rw_props local;
	struct rw_hdr r, d;
	uint32_t i;
	size_t n;

	rw_props_init(&local);
	rw_props_answer(&local, c, want, &done, &rej);
	for (i = 0; i < want->n && i < 32 * RW_MAX_SUBSET_WORDS; i++)
		FUZZ_CHECK(rw_subset_test(&done, i) != rw_subset_test(&rej, i));
	if (c != RW_PC_V2)
		return;
	rw_hdr_init(&r, RW_VERS_2, RW2_RESPROP, xid, 1);
	r.subset1 = done;
	r.subset2 = rej;
	n = rw_hdr_encode(&r, out, sizeof(out));
	FUZZ_CHECK(n);
	FUZZ_CHECK(rw_hdr_decode(out, n, &d, &sp2) == RW_R_OK);
	FUZZ_CHECK(d.xid == xid &&
		   rw_subset_test(&d.subset1, 0) == rw_subset_test(&done, 0));
	for (i = 0; i < want->n && i < 32 * RW_MAX_SUBSET_WORDS; i++)
		FUZZ_CHECK(rw_subset_test(&d.subset1, i) ==
				   rw_subset_test(&done, i) &&
			   rw_subset_test(&d.subset2, i) ==
				   rw_subset_test(&rej, i));
}

static void responder(const uint8_t *data, size_t size)
{
	struct rw_rx_call rx;
	struct rw_xchar_msg m;
	struct rw_action a;
	enum rw_reason why;

	why = rw_recv_call(data, size, &rx, &sp);
	a = rw_reason_action(RW_ROLE_RESPONDER, rx.hdr.vers, why, &sp.lim);
	check_error(&rx, &a);
	if (!why && rx.hdr.proc == RW2_CONNPROP)
		check_props_apply(RW_PC_V2, &rx.hdr.props, &rx.hdr.subset1);
	if (!why && rx.hdr.proc == RW2_UPDPROP)
		check_props_apply(RW_PC_V2, &rx.hdr.props, NULL);
	if (!why && rx.hdr.proc == RW2_REQPROP)
		check_answer(RW_PC_V2, &rx.hdr.props, rx.hdr.xid);
	if (why != RW_R_BAD_OPTION || rx.hdr.proc != RW2_OPTIONAL)
		return;
	why = rw_xchar_decode(rx.hdr.opt.type, rx.hdr.opt.info, rx.hdr.opt.len,
			      &m);
	if (why)
		return;
	FUZZ_CHECK(m.set.n <= RW_MAX_PROPS);
	for (uint32_t i = 0; i < m.set.n; i++)
		FUZZ_CHECK(m.set.props[i].data + m.set.props[i].len <=
			   rx.hdr.opt.info + rx.hdr.opt.len);
	if (m.type == RW_XC_REQXCH)
		check_answer(RW_PC_XCHAR, &m.set, rx.hdr.xid);
	else
		check_props_apply(RW_PC_XCHAR, &m.set,
				  m.type == RW_XC_INITXCH ? &m.nochg : NULL);
}

/* A v2 Call with one item Read chunk, two Write chunks and a Reply chunk,
 * as the input's RDMA_ERROR answers it. */
static void requester(const uint8_t *data, size_t size)
{
	static struct rw_segment ws[2] = { { 1, 4096, 0x1000 },
					   { 2, 8192, 0x3000 } };
	static struct rw_chunk wc[2] = { { 1, &ws[0] }, { 1, &ws[1] } };
	static struct rw_segment rs = { 3, 65536, 0x9000 };
	static struct rw_read_seg rd = { 8, { 4, 100, 0x20000 } };
	struct rw_resend plan;
	struct rw_hdr call, h;
	uint32_t have = 0;

	if (rw_hdr_decode(data, size, &h, &sp) != RW_R_OK || h.proc != RW_ERROR)
		return;
	rw_hdr_init(&call, RW_VERS_2, RW_MSG, h.xid, 8);
	call.direction = RW_DIR_CALL;
	call.nreads = 1;
	call.reads = &rd;
	call.nwrites = 2;
	call.writes = wc;
	call.has_reply = true;
	call.reply.nsegs = 1;
	call.reply.segs = &rs;
	for (int neg = 0; neg < 2; neg++) {
		plan = rw_resend_plan(&call, &h, neg, neg);
		switch (plan.what) {
		case RW_RESEND_VERS:
			FUZZ_CHECK(neg && h.err.code == RW_ERR_VERS &&
				   plan.vers == RW_VERS_1);
			break;
		case RW_RESEND_WRITES:
			FUZZ_CHECK(plan.max < call.nwrites);
			break;
		case RW_RESEND_WRITE_ROOM:
			FUZZ_CHECK(plan.index < call.nwrites);
			rw_chunk_len(&call.writes[plan.index], &have);
			FUZZ_CHECK(plan.length > have);
			break;
		case RW_RESEND_REPLY_ROOM:
			rw_chunk_len(&call.reply, &have);
			FUZZ_CHECK(plan.length > have);
			break;
		case RW_RESEND_NO_READS:
			FUZZ_CHECK(h.err.code == RW2_ERR_READ_CHUNKS);
			break;
		default:
			FUZZ_CHECK(plan.what == RW_RESEND_NONE);
			break;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!sp.lim.vers_high) {
		rw_hdr_space_init(&sp, &rw_v2_limits);
		rw_hdr_space_init(&sp2, &rw_v2_limits);
	}
	responder(data, size);
	requester(data, size);
	return 0;
}
