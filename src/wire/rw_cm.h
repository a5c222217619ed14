/*
 * rw_cm.h - RPC-over-RDMA connection private data (RFC 8797).
 *
 * Eight octets carried in the rdma_cm connect request and accept:
 *   0  magic 0xf6ab0e18 (big-endian)
 *   4  version (1)
 *   5  flags: bit 0 = the sender can receive Send With Invalidate
 *   6  send size, 7 receive size: (octets >> 10) - 1, i.e. 1 KiB..256 KiB
 * A peer that sends none, or something else, gets the v1 defaults (1024
 * each way, no remote invalidation).  Each side then sends at most
 * min(own send size, peer's receive size) and expects at most
 * min(own receive size, peer's send size).
 */
#ifndef RW_CM_H
#define RW_CM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RW_CM_MAGIC	     0xf6ab0e18u
#define RW_CM_VERSION	     1u
#define RW_CM_F_SND_W_INV_OK 0x01u
#define RW_CM_LEN	     8u
#define RW_CM_MIN_SIZE	     1024u
#define RW_CM_MAX_SIZE	     (256u * 1024u)

struct rw_cm_private {
	bool valid;	    /* false: absent or foreign (defaults apply) */
	bool remote_inv;    /* sender can receive Send With Invalidate */
	uint32_t send_size; /* octets the sender will send at most */
	uint32_t recv_size; /* octets of the sender's Receive buffers */
};

/* Encode p into buf (RW_CM_LEN octets); sizes are rounded down to a KiB
 * multiple and clamped to 1 KiB..256 KiB, the encodable range. */
void rw_cm_encode(const struct rw_cm_private *p, uint8_t buf[RW_CM_LEN]);

/* Decode private data of len octets (may be NULL/0).  Anything that is not
 * our magic and version 1 yields the v1 defaults with valid = false. */
void rw_cm_decode(const void *buf, size_t len, struct rw_cm_private *p);

/* Inline thresholds agreed for a connection. */
struct rw_cm_inline {
	uint32_t send;	      /* largest message we may send */
	uint32_t recv;	      /* largest message the peer may send us */
	bool peer_remote_inv; /* peer accepts Send With Invalidate */
};

void rw_cm_negotiate(const struct rw_cm_private *local,
		     const struct rw_cm_private *peer,
		     struct rw_cm_inline *out);

#endif /* RW_CM_H */
