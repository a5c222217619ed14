/*
 * rw_tape.c - recording an XDR encoding (struct rw_txdr) and playing it back
 * (rw_tape_play), for replies kept for a resend (rw_tape.h).
 */
#include <stdlib.h>
#include <string.h>

#include "rw_tape.h"
#include "rw_xdr_priv.h"

static const struct xdr_ops rw_txdr_ops;

static struct rw_txdr *txdr_of(XDR *xdrs)
{
	return (struct rw_txdr *)xdrs->x_private;
}

static bool_t txdr_fail(struct rw_txdr *x, enum rw_xdr_err e)
{
	if (x->err == RW_XERR_OK)
		x->err = e;
	return FALSE;
}

void rw_tape_init(struct rw_tape *t, uint32_t max)
{
	memset(t, 0, sizeof(*t));
	t->max = max;
}

void rw_tape_free(struct rw_tape *t)
{
	free(t->img);
	free(t->runs);
	rw_tape_init(t, t->max);
}

size_t rw_tape_bytes(const struct rw_tape *t)
{
	return t->cap + (size_t)t->runcap * sizeof(*t->runs);
}

/* Room for the image to reach end octets: doubling, within the limit. */
static bool tape_grow(struct rw_tape *t, uint64_t end)
{
	uint64_t cap = t->cap ? t->cap : 4096;
	uint8_t *img;

	if (end > t->max)
		return false;
	if (end <= t->cap)
		return true;
	while (cap < end)
		cap *= 2;
	if (cap > t->max)
		cap = t->max;
	img = realloc(t->img, (size_t)cap);
	if (!img)
		return false;
	t->img = img;
	t->cap = (uint32_t)cap;
	return true;
}

static bool tape_add_run(struct rw_tape *t, uint32_t off, uint32_t len)
{
	struct rw_tape_run *runs;
	uint32_t cap;

	if (t->nruns == t->runcap) {
		cap = t->runcap ? t->runcap * 2 : 16;
		runs = realloc(t->runs, cap * sizeof(*runs));
		if (!runs)
			return false;
		t->runs = runs;
		t->runcap = cap;
	}
	t->runs[t->nruns].off = off;
	t->runs[t->nruns].len = len;
	t->nruns++;
	return true;
}

/* Write n octets at the stream position, growing the image. */
static bool txdr_write(struct rw_txdr *x, const void *src, uint32_t n)
{
	struct rw_tape *t = x->t;

	if (x->err != RW_XERR_OK)
		return false;
	if (!tape_grow(t, (uint64_t)x->pos + n))
		return txdr_fail(x, RW_XERR_NOSPACE);
	memcpy(t->img + x->pos, src, n);
	x->pos += n;
	if (x->pos > t->len)
		t->len = x->pos;
	return true;
}

static bool_t txdr_getlong(XDR *xdrs, long *lp)
{
	return txdr_fail(txdr_of(xdrs), RW_XERR_BAD_ARG);
}

static bool_t txdr_getbytes(XDR *xdrs, char *addr, u_int len)
{
	return txdr_fail(txdr_of(xdrs), RW_XERR_BAD_ARG);
}

static bool_t txdr_putlong(XDR *xdrs, const long *lp)
{
	uint8_t w[4];

	rw_xdr_put32(w, (uint32_t)*lp);
	return txdr_write(txdr_of(xdrs), w, 4);
}

/* Only a run appended at the end of the message can be an item: record
 * those; a write over earlier octets (after a setpos) just changes them. */
static bool_t txdr_putbytes(XDR *xdrs, const char *addr, u_int len)
{
	struct rw_txdr *x = txdr_of(xdrs);
	bool append = x->pos == x->t->len;
	uint32_t off = x->pos;

	if (len == 0)
		return x->err == RW_XERR_OK;
	if (!txdr_write(x, addr, len))
		return FALSE;
	if (append && !tape_add_run(x->t, off, len))
		return txdr_fail(x, RW_XERR_NOSPACE);
	return TRUE;
}

static u_int txdr_getpostn(XDR *xdrs)
{
	return txdr_of(xdrs)->pos;
}

static bool_t txdr_setpostn(XDR *xdrs, u_int pos)
{
	struct rw_txdr *x = txdr_of(xdrs);

	if (x->err != RW_XERR_OK || !tape_grow(x->t, pos))
		return FALSE;
	if (pos > x->t->len) {
		memset(x->t->img + x->t->len, 0, pos - x->t->len);
		x->t->len = pos;
	}
	x->pos = pos;
	return TRUE;
}

static int32_t *txdr_inline(XDR *xdrs, u_int len)
{
	struct rw_txdr *x = txdr_of(xdrs);
	uint8_t *p;

	if (x->err != RW_XERR_OK || !tape_grow(x->t, (uint64_t)x->pos + len))
		return NULL;
	p = x->t->img + x->pos;
	if (!rw_xdr_aligned(p))
		return NULL;
	x->pos += len;
	if (x->pos > x->t->len)
		x->t->len = x->pos;
	return (int32_t *)(void *)p;
}

static void txdr_destroy(XDR *xdrs)
{
}

static bool_t txdr_control(XDR *xdrs, int req, void *arg)
{
	return FALSE;
}

static const struct xdr_ops rw_txdr_ops = {
	.x_getlong = txdr_getlong,
	.x_putlong = txdr_putlong,
	.x_getbytes = txdr_getbytes,
	.x_putbytes = txdr_putbytes,
	.x_getpostn = txdr_getpostn,
	.x_setpostn = txdr_setpostn,
	.x_inline = txdr_inline,
	.x_destroy = txdr_destroy,
	.x_control = txdr_control,
};

void rw_txdr_create(struct rw_txdr *x, struct rw_tape *t)
{
	rw_tape_free(t);
	memset(x, 0, sizeof(*x));
	x->t = t;
	x->xdr.x_op = XDR_ENCODE;
	x->xdr.x_ops = (struct xdr_ops *)&rw_txdr_ops;
	x->xdr.x_private = (char *)x;
}

enum rw_xdr_err rw_txdr_error(const struct rw_txdr *x)
{
	return x->err;
}

bool rw_txdr_begin_body(XDR *xdrs)
{
	struct rw_txdr *x;

	if (xdrs->x_ops != &rw_txdr_ops)
		return false;
	x = txdr_of(xdrs);
	x->t->body = x->pos;
	x->t->has_body = true;
	return true;
}

/* ---- Playback ----------------------------------------------------------- */

/*
 * Octets [from, to) of the image that no run wrote: XDR words, so that the
 * encoder never takes them for items; a tail shorter than a word (only
 * after an unpadded odd run) as bytes, which never start an item either.
 */
static bool tape_play_words(const struct rw_tape *t, uint32_t from, uint32_t to,
			    XDR *xdrs)
{
	int32_t w;

	for (; to - from >= 4; from += 4) {
		w = (int32_t)rw_xdr_get32(t->img + from);
		if (!XDR_PUTINT32(xdrs, &w))
			return false;
	}
	return from == to ||
	       XDR_PUTBYTES(xdrs, (const char *)t->img + from, to - from);
}

/* Words up to 'to', with the body mark where it falls (given to the
 * streams that know it: rw_xdr_begin_body() is false for xdrmem). */
static bool tape_play_gap(const struct rw_tape *t, uint32_t from, uint32_t to,
			  bool *marked, XDR *xdrs)
{
	if (t->has_body && !*marked && t->body >= from && t->body <= to) {
		if (!tape_play_words(t, from, t->body, xdrs))
			return false;
		rw_xdr_begin_body(xdrs);
		*marked = true;
		from = t->body;
	}
	return tape_play_words(t, from, to, xdrs);
}

bool rw_tape_play(const struct rw_tape *t, XDR *xdrs)
{
	bool marked = false;
	uint32_t off = 0, i;

	for (i = 0; i < t->nruns; i++) {
		const struct rw_tape_run *run = &t->runs[i];

		if (!tape_play_gap(t, off, run->off, &marked, xdrs) ||
		    !XDR_PUTBYTES(xdrs, (const char *)t->img + run->off,
				  run->len))
			return false;
		off = run->off + run->len;
	}
	return tape_play_gap(t, off, t->len, &marked, xdrs);
}
