/*
 * rw_tape.h - a recorded encoding of an RPC message that can be played back
 * through any XDR encoder later, for a reply that could not be sent.
 *
 * A responder that must answer RDMA2_ERR_REPLY_RESOURCE or
 * RDMA2_ERR_WRITE_RESOURCE (v1: ERR_CHUNK) has already executed the
 * procedure; the requester resends with the same XID and larger chunks
 * (V2-ERR-13, AMB-V2-4).  Executing it again would be wrong for anything
 * that is not idempotent, and the RPC layer has freed the results by then.
 * So the reply is recorded once, with the XDR operations that produced it,
 * and the resend is answered from the recording.
 *
 * Why operations and not just octets: the reducing encoder (rw_rxdr) finds
 * DDP-eligible items by the x_putbytes calls that write them, on 4-octet
 * boundaries after rw_xdr_begin_body().  The tape keeps the image of the
 * unreduced message, every x_putbytes run appended to it and the body
 * mark, and rw_tape_play() repeats exactly that sequence: the runs with
 * XDR_PUTBYTES, everything between them as XDR words, the mark with
 * rw_xdr_begin_body().  The encoder then cuts the same items as the first
 * time, whatever Write chunks the resend offers.
 *
 * XDR_SETPOS back into the message (RPCSEC_GSS back-patches lengths) and
 * XDR_INLINE write into the image without recording runs, which is right:
 * only appended x_putbytes runs are ever items.
 *
 * Memory: the image and the run list grow with malloc, up to the limit given
 * to rw_tape_init(); beyond it the encoding fails (RW_XERR_NOSPACE).
 */
#ifndef RW_TAPE_H
#define RW_TAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rpc/types.h>
#include <rpc/xdr.h>

#include "rw_xdr.h"

struct rw_tape_run {
	uint32_t off; /* in the unreduced message */
	uint32_t len;
};

struct rw_tape {
	uint8_t *img;		  /* the unreduced message */
	uint32_t len;		  /* its length (high-water mark) */
	uint32_t cap;		  /* allocated */
	uint32_t max;		  /* the most it may grow to */
	uint32_t body;		  /* offset of the body mark ... */
	bool has_body;		  /* ... if rw_xdr_begin_body() was called */
	struct rw_tape_run *runs; /* appended x_putbytes runs, ascending */
	uint32_t nruns;
	uint32_t runcap;
};

/* An encoding stream that records into a tape. */
struct rw_txdr {
	XDR xdr; /* pass &x->xdr to xdrprocs */
	struct rw_tape *t;
	uint32_t pos;
	enum rw_xdr_err err;
};

/* An empty tape that may grow to max octets of message. */
void rw_tape_init(struct rw_tape *t, uint32_t max);

/* Free what the tape holds; it is empty (and reusable) afterwards. */
void rw_tape_free(struct rw_tape *t);

/* Octets the tape holds in memory (image and run list). */
size_t rw_tape_bytes(const struct rw_tape *t);

/* Start recording into t (emptied first). */
void rw_txdr_create(struct rw_txdr *x, struct rw_tape *t);

/* RW_XERR_OK, or why the recording failed (NOSPACE past the limit or out of
 * memory, BAD_ARG for a decode operation). */
enum rw_xdr_err rw_txdr_error(const struct rw_txdr *x);

/* rw_xdr_begin_body() for a recording stream; false for any other. */
bool rw_txdr_begin_body(XDR *xdrs);

/*
 * Play the recording into xdrs (an encoder): the same x_putbytes runs at
 * the same offsets, XDR words in between, rw_xdr_begin_body() at the mark.
 * Returns false if xdrs refused something.
 */
bool rw_tape_play(const struct rw_tape *t, XDR *xdrs);

#endif /* RW_TAPE_H */
