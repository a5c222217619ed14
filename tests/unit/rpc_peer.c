/*
 * rpc_peer.c - RPC and RPC-over-RDMA messages as the peer of a host test
 * builds and reads them (rpc_peer.h).
 */
#include <string.h>

#include <rpc/rpc.h>

#include "rpc_peer.h"
#include "wire/rw_xdr.h"

static uint8_t *put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return p + 4;
}

/* words[0..n) then an opaque<> of data[0..len) with its zero pad */
static uint32_t put_msg(void *buf, size_t cap, const uint32_t *words,
			unsigned int n, const void *data, uint32_t len)
{
	uint32_t total = n * 4u + 4u + ((len + 3u) & ~3u);
	uint8_t *p = buf;
	unsigned int i;

	if (cap < total)
		return 0;
	for (i = 0; i < n; i++)
		p = put32(p, words[i]);
	p = put32(p, len);
	if (len)
		memcpy(p, data, len);
	memset(p + len, 0, ((len + 3u) & ~3u) - len);
	return total;
}

uint32_t rp_call(void *buf, size_t cap, uint32_t xid, uint32_t proc,
		 const void *arg, uint32_t alen)
{
	const uint32_t w[] = { xid,  CALL,	2, RP_PROG,   RP_VERS,
			       proc, AUTH_NONE, 0, AUTH_NONE, 0 };

	return put_msg(buf, cap, w, 10, arg, alen);
}

uint32_t rp_reply(void *buf, size_t cap, uint32_t xid, const void *res,
		  uint32_t rlen)
{
	const uint32_t w[] = { xid, REPLY, MSG_ACCEPTED, AUTH_NONE, 0, SUCCESS };

	return put_msg(buf, cap, w, 6, res, rlen);
}

uint32_t rp_msg(void *buf, size_t cap, const struct rw_hdr *h,
		const void *payload, uint32_t plen)
{
	size_t n = rw_hdr_encode(h, buf, cap);

	if (!n || cap - n < plen)
		return 0;
	if (plen)
		memcpy((uint8_t *)buf + n, payload, plen);
	return (uint32_t)(n + plen);
}

void rp_fill(void *buf, size_t n, uint32_t seed)
{
	uint8_t *p = buf;
	uint32_t x = seed * 2654435761u + 1u;
	size_t i;

	for (i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (uint8_t)(x >> 16) | 1u;
	}
}

static bool words(XDR *xdrs, uint32_t *w, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!xdr_u_int(xdrs, &w[i]))
			return false;
	return true;
}

static bool put_opaque(XDR *xdrs, const void *data, uint32_t len)
{
	char *p = (char *)data;
	u_int n = len;

	return xdr_bytes(xdrs, &p, &n, ~0u);
}

bool rp_xdr_call(XDR *xdrs, void *arg)
{
	const struct rp_args *a = arg;
	uint32_t w[] = { a->xid,  CALL,	     2, RP_PROG,   RP_VERS,
			 a->proc, AUTH_NONE, 0, AUTH_NONE, 0 };

	return words(xdrs, w, 10) && (a->plain || rw_xdr_begin_body(xdrs)) &&
	       put_opaque(xdrs, a->data, a->len);
}

bool_t rp_xdr_reply(XDR *xdrs, void *arg)
{
	const struct rp_args *a = arg;
	uint32_t w[] = { a->xid, REPLY, MSG_ACCEPTED, AUTH_NONE, 0, SUCCESS };

	return words(xdrs, w, 6) && (a->plain || rw_xdr_begin_body(xdrs)) &&
	       put_opaque(xdrs, a->data, a->len);
}

bool rp_xdr_call_hdr(XDR *xdrs, struct rp_args *a)
{
	uint32_t w[10];

	if (!words(xdrs, w, 10))
		return false;
	a->xid = w[0];
	a->proc = w[5];
	return w[1] == CALL && w[2] == 2 && w[3] == RP_PROG &&
	       w[4] == RP_VERS && w[6] == AUTH_NONE && w[7] == 0 &&
	       w[8] == AUTH_NONE && w[9] == 0;
}

bool rp_xdr_reply_hdr(XDR *xdrs, const struct rp_args *a)
{
	uint32_t w[6];

	return words(xdrs, w, 6) && w[0] == a->xid && w[1] == REPLY &&
	       w[2] == MSG_ACCEPTED && w[3] == AUTH_NONE && w[4] == 0 &&
	       w[5] == SUCCESS;
}

bool rp_xdr_opaque(XDR *xdrs, struct rp_args *a)
{
	char *p = a->out;
	u_int n = 0;

	if (!xdr_bytes(xdrs, &p, &n, a->cap))
		return false;
	a->len = n;
	return true;
}
