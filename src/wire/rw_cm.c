/*
 * rw_cm.c - RFC 8797 connection private data: encoding, decoding, and the
 * inline thresholds both sides end up using.
 */
#include "wire/rw_cm.h"

static uint8_t size_encode(uint32_t octets)
{
	if (octets < RW_CM_MIN_SIZE)
		octets = RW_CM_MIN_SIZE;
	if (octets > RW_CM_MAX_SIZE)
		octets = RW_CM_MAX_SIZE;
	return (uint8_t)((octets >> 10) - 1);
}

static uint32_t size_decode(uint8_t v)
{
	return ((uint32_t)v + 1) << 10;
}

void rw_cm_encode(const struct rw_cm_private *p, uint8_t buf[RW_CM_LEN])
{
	buf[0] = (uint8_t)(RW_CM_MAGIC >> 24);
	buf[1] = (uint8_t)(RW_CM_MAGIC >> 16);
	buf[2] = (uint8_t)(RW_CM_MAGIC >> 8);
	buf[3] = (uint8_t)RW_CM_MAGIC;
	buf[4] = RW_CM_VERSION;
	buf[5] = p->remote_inv ? RW_CM_F_SND_W_INV_OK : 0;
	buf[6] = size_encode(p->send_size);
	buf[7] = size_encode(p->recv_size);
}

void rw_cm_decode(const void *data, size_t len, struct rw_cm_private *p)
{
	const uint8_t *b = data;
	uint32_t magic;

	p->valid = false;
	p->remote_inv = false;
	p->send_size = RW_CM_MIN_SIZE;
	p->recv_size = RW_CM_MIN_SIZE;
	/* Future versions may append fields: read only what we know. */
	if (!b || len < RW_CM_LEN)
		return;
	magic = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
		(uint32_t)b[2] << 8 | b[3];
	if (magic != RW_CM_MAGIC || b[4] != RW_CM_VERSION)
		return;
	p->valid = true;
	p->remote_inv = b[5] & RW_CM_F_SND_W_INV_OK;
	p->send_size = size_decode(b[6]);
	p->recv_size = size_decode(b[7]);
}

static uint32_t cm_min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

void rw_cm_negotiate(const struct rw_cm_private *local,
		     const struct rw_cm_private *peer, struct rw_cm_inline *out)
{
	out->send = cm_min_u32(local->send_size, peer->recv_size);
	out->recv = cm_min_u32(local->recv_size, peer->send_size);
	out->peer_remote_inv = peer->valid && peer->remote_inv;
}
