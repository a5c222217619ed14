/*
 * rw_credit.c - RPC-over-RDMA credit accounting (RFC 8166 §3.3).
 *
 * Values on the wire are absolute limits, not increments (V1-CR-9): a Reply
 * replaces the grant, it does not add to it.  The requester's usable window
 * is min(requested, granted) - inflight, and on a new connection only one
 * Call may be outstanding until a valid Reply reports the real grant
 * (V1-CR-6).  The responder never advertises more than the Receives it has
 * posted (V1-CR-8) and never 0 (V1-CR-3).
 */
#include "wire/rw_credit.h"

static uint32_t credit_min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

void rw_credits_init(struct rw_credits *c, uint32_t requested)
{
	c->requested = requested ? requested : 1;
	c->zero_grants = 0;
	rw_credits_reset(c);
}

void rw_credits_reset(struct rw_credits *c)
{
	c->granted = 1;
	c->inflight = 0;
	c->established = false;
}

uint32_t rw_credits_window(const struct rw_credits *c)
{
	uint32_t limit =
		c->established ? credit_min_u32(c->requested, c->granted) : 1;

	return c->inflight < limit ? limit - c->inflight : 0;
}

bool rw_credits_take(struct rw_credits *c)
{
	if (!rw_credits_window(c))
		return false;
	c->inflight++;
	return true;
}

void rw_credits_cancel(struct rw_credits *c)
{
	if (c->inflight)
		c->inflight--;
}

void rw_credits_complete(struct rw_credits *c, uint32_t grant, bool is_error)
{
	if (c->inflight)
		c->inflight--;
	if (!grant) {
		c->zero_grants++;
		return;
	}
	/* An RDMA_ERROR's credit value is not a grant report while the
	 * connection is still probing (AMB-V1-8, v2-05 §8). */
	if (is_error && !c->established)
		return;
	c->granted = grant;
	c->established = true;
}

void rw_srv_credits_init(struct rw_srv_credits *s, uint32_t target)
{
	s->target = target ? target : 1;
	s->posted = 0;
	s->advertised = 0;
}

uint32_t rw_srv_credits_grant(struct rw_srv_credits *s)
{
	uint32_t grant = credit_min_u32(s->target, s->posted);

	if (!grant)
		grant = 1; /* every connection supports one exchange (V1-CR-7) */
	if (grant > s->advertised)
		s->advertised = grant;
	return grant;
}

uint32_t rw_srv_credits_min_posted(const struct rw_srv_credits *s)
{
	return s->advertised > 1 ? s->advertised : 1;
}
