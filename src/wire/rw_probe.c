/*
 * rw_probe.c - the probe stream (struct rw_pxdr, rw_xdr.h): runs a results
 * xdrproc in XDR_ENCODE without writing anything, to learn where the
 * caller's result buffers are before the call is sent (a Write chunk can
 * then point at one: zero copy).  Items are counted exactly as the
 * reducing encoder and the reassembling decoder count them: data runs put
 * with x_putbytes starting on a 4-octet boundary, never a pad.
 */
#include "rw_xdr_priv.h"

static const struct xdr_ops rw_pxdr_ops;

static struct rw_pxdr *pxdr_of(XDR *xdrs)
{
	return (struct rw_pxdr *)xdrs->x_private;
}

static bool_t pxdr_putlong(XDR *xdrs, const long *lp)
{
	(void)lp;
	pxdr_of(xdrs)->upos += 4;
	return TRUE;
}

static bool_t pxdr_putbytes(XDR *xdrs, const char *addr, u_int len)
{
	struct rw_pxdr *p = pxdr_of(xdrs);
	struct rw_probe_item *it;
	uint32_t k;

	if (!len)
		return TRUE;
	if (p->upos & 3u) { /* a pad, or bytes inside a run */
		p->upos += len;
		return TRUE;
	}
	k = p->ordinal++;
	p->upos += len;
	if (!rw_ddp_designated(&p->pol, k) || p->designated >= p->max)
		return TRUE;
	/* A NULL target (decode allocates) is an item but no buffer. */
	if (addr) {
		it = &p->items[p->n++];
		it->ordinal = k;
		it->index = p->designated;
		it->len = len;
		it->data = (void *)addr;
	}
	/* Everything wanted is known: stop walking the caller's structure. */
	return ++p->designated < p->max;
}

static bool_t pxdr_getlong(XDR *xdrs, long *lp)
{
	(void)xdrs;
	(void)lp;
	return FALSE;
}

static bool_t pxdr_getbytes(XDR *xdrs, char *addr, u_int len)
{
	(void)xdrs;
	(void)addr;
	(void)len;
	return FALSE;
}

static u_int pxdr_getpostn(XDR *xdrs)
{
	return (u_int)pxdr_of(xdrs)->upos;
}

static bool_t pxdr_setpostn(XDR *xdrs, u_int pos)
{
	return pos == pxdr_getpostn(xdrs);
}

/* No buffer: rpcgen's inline fast path falls back to x_putlong. */
static int32_t *pxdr_inline(XDR *xdrs, u_int len)
{
	(void)xdrs;
	(void)len;
	return NULL;
}

static void pxdr_destroy(XDR *xdrs)
{
	(void)xdrs;
}

static bool_t pxdr_control(XDR *xdrs, int req, void *info)
{
	(void)xdrs;
	(void)req;
	(void)info;
	return FALSE;
}

static const struct xdr_ops rw_pxdr_ops = {
	.x_getlong = pxdr_getlong,
	.x_putlong = pxdr_putlong,
	.x_getbytes = pxdr_getbytes,
	.x_putbytes = pxdr_putbytes,
	.x_getpostn = pxdr_getpostn,
	.x_setpostn = pxdr_setpostn,
	.x_inline = pxdr_inline,
	.x_destroy = pxdr_destroy,
	.x_control = pxdr_control,
};

void rw_pxdr_create(struct rw_pxdr *p, const struct rw_ddp_policy *pol,
		    struct rw_probe_item *items, unsigned max)
{
	memset(p, 0, sizeof(*p));
	p->xdr.x_op = XDR_ENCODE;
	p->xdr.x_ops = &rw_pxdr_ops;
	p->xdr.x_private = p;
	p->items = items;
	p->max = items ? max : 0;
	if (pol)
		p->pol = *pol;
	else
		p->pol.mode = RW_DDP_NONE;
}
