/*
 * red_codec.h - encode/decode helpers over the red_prog.x program, shared
 * by check_reduce.c and check_pick.c (and the refused-decode marker by
 * check_probe.c): one whole message encoded plainly (the oracle) or through
 * the reducing encoder, the checks of a reduced encoding against its
 * oracle, the Read and Write chunks a peer holds after its RDMA transfers,
 * and the decodes of a reduced Call and Reply as svc_vc / clnt_vc do them.
 * The values encoded come from red_fixture.h, the envelopes from red_msg.h.
 *
 * Every helper asserts (Check) instead of returning an error, except the
 * decoders, whose error is what the tests are about.
 */
#ifndef TESTS_RED_CODEC_H
#define TESTS_RED_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rpc/rpc.h>

#include "wire/rw_xdr.h"
#include "red_fixture.h"

/* Room for the moved items of any message the tests build. */
#define RC_MAX_ITEMS 16

/* An xdrproc said no although the stream had no complaint. */
#define RC_DEC_REFUSED RW_XERR_NR

static inline uint32_t rc_round4(uint32_t n)
{
	return (n + 3u) & ~3u;
}

/* An encoded message: bytes plus, for reduced ones, the moved items. */
struct rc_enc {
	unsigned char *buf;
	size_t cap;
	uint32_t len;  /* reduced (or plain) length */
	uint32_t ulen; /* unreduced length */
	uint32_t body; /* unreduced offset of the body
					 * (reduced encodings only) */
	struct rw_ddp_item items[RC_MAX_ITEMS];
	unsigned nitems;
};

void rc_enc_free(struct rc_enc *e);

/*
 * The envelope a message body goes in: a Call of procedure nr with
 * AUTH_NONE (rc_put_call) or an accepted Reply, nr unused (rc_put_reply).
 */
typedef bool (*rc_put_fn)(XDR *x, void *obj, xdrproc_t proc, uint32_t nr);

bool rc_put_call(XDR *x, void *obj, xdrproc_t proc, uint32_t nr);
bool rc_put_reply(XDR *x, void *obj, xdrproc_t proc, uint32_t nr);

/* Plain xdrmem encoding into cap octets: the oracle. */
void rc_ref_encode(struct rc_enc *e, rc_put_fn put, xdrproc_t proc, void *obj,
		   uint32_t nr, size_t cap);

/* Reducing encoding with pol into cap octets; asserts success. */
void rc_red_encode(struct rc_enc *e, rc_put_fn put, xdrproc_t proc, void *obj,
		   uint32_t nr, size_t cap, const struct rw_ddp_policy *pol);

/*
 * The message most tests are about: red_mixed_make(s, n) in a Call of nr
 * (or a Reply), encoded plainly into *ref and with pol into *red, both
 * with room red_mixed_cap(n).  rc_mixed_free frees all three.
 */
void rc_mixed_encode(struct red_mixed_store *s, size_t n, rc_put_fn put,
		     uint32_t nr, const struct rw_ddp_policy *pol,
		     struct rc_enc *ref, struct rc_enc *red);
void rc_mixed_free(struct red_mixed_store *s, struct rc_enc *ref,
		   struct rc_enc *red);

/* What rc_check_items asserts beyond the common part. */
enum {
	RC_ITEMS_ASCEND = 1u << 0, /* positions strictly ascend */
	RC_ITEMS_CUTS = 1u << 1,   /* each cut is where the oracle had
					 * the item less what moved before,
					 * reduced = oracle less the moved */
};

/*
 * Every moved item is where the oracle has it: 4-aligned unreduced
 * position (V1-RC-1/2), its bytes there, zero pad after (V1-CH-7); the
 * unreduced length is the oracle's and the rebuilt stream is the oracle.
 * what: RC_ITEMS_* to check as well.
 */
void rc_check_items(const struct rc_enc *red, const struct rc_enc *ref,
		    unsigned what);

/* Decoded value re-encodes to the oracle: the values survived. */
void rc_check_reencodes(rc_put_fn put, xdrproc_t proc, void *obj, uint32_t nr,
			const struct rc_enc *ref);

/*
 * Read chunks built from moved items, as a responder has them after its
 * RDMA Reads, one chunk an item at the item's position.
 */
enum {
	RC_RCH_SPLIT = 1u << 0, /* two segments (V1-CH-8, V1-RC-4) */
	RC_RCH_PAD = 1u << 1,	/* pad included (V1-RC-6, AMB-V1-12);
				 * implies RC_RCH_COPY */
	RC_RCH_COPY = 1u << 2,	/* data in memory of its own, not in
				 * the caller's buffers */
};

struct rc_rchunks {
	struct rw_ddp_chunk c[RC_MAX_ITEMS];
	struct rw_ddp_seg s[RC_MAX_ITEMS][2];
	unsigned char *copy[RC_MAX_ITEMS];
	unsigned n;
};

void rc_rchunks_make(struct rc_rchunks *rc, const struct rc_enc *red,
		     unsigned how);
void rc_rchunks_free(struct rc_rchunks *rc);

/*
 * Write chunks as the requester has them after the responder's RDMA
 * Writes: nchunks offered, chunk k holding a copy of the moved item whose
 * slot is k (the rank among moved items unless RW_DDP_PICK said
 * otherwise), with returned length = item length (V1-WC-10); every other
 * chunk comes back empty (V1-WC-6, RFC 8267 6.4).
 */
struct rc_wchunks {
	struct rw_ddp_chunk c[RC_MAX_ITEMS];
	struct rw_ddp_seg s[RC_MAX_ITEMS];
	char *mem[RC_MAX_ITEMS];
	unsigned n;
};

void rc_wchunks_make(struct rc_wchunks *wc, const struct rc_enc *red,
		     unsigned nchunks);
void rc_wchunks_free(struct rc_wchunks *wc);

/*
 * Responder side: decode a reduced Call of len octets with its Read
 * chunks into obj (which the caller has cleared), asserting the xid.
 */
enum rw_xdr_err rc_decode_call(const void *pay, uint32_t len,
			       const struct rw_ddp_chunk *c, unsigned n,
			       const struct rw_ddp_policy *pol, xdrproc_t proc,
			       void *obj);

/*
 * Requester side: decode a reduced Reply with its Write chunks into obj
 * (cleared by the caller); *a stays for the caller to read its counters.
 */
enum rw_xdr_err rc_decode_reply(const void *pay, uint32_t len,
				const struct rw_ddp_chunk *c, unsigned n,
				const struct rw_ddp_policy *pol, xdrproc_t proc,
				void *obj, struct rw_axdr *a);

#endif /* TESTS_RED_CODEC_H */
