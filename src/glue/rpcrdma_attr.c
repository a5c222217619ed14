/*
 * rpcrdma_attr.c - defaults of struct rpcrdma_attr and the environment
 * variables that override them.
 *
 * One place decides what "0 keeps a default" means, so the CLIENT and the
 * SVCXPRT constructors cannot drift apart.
 */
#include "config.h"

#include <err.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/rpcrdma.h>

#include "compiler.h"
#include "glue/rpcrdma_attr.h"
#include "ulb/ulb.h"

RPCRDMA_EXPORT void rpcrdma_attr_init(struct rpcrdma_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	rpcrdma_attr_fill(attr);
}

static void fill_u(unsigned int *v, unsigned int dflt)
{
	if (!*v)
		*v = dflt;
}

static void fill_sz(size_t *v, size_t dflt)
{
	if (!*v)
		*v = dflt;
}

size_t rpcrdma_env_size(const char *name, size_t dflt)
{
	const char *e = getenv(name), *end;
	uint32_t v;

	static bool warned;

	if (!e || !*e)
		return dflt;
	if (!ulb_octets(e, &end, &v) || *end) {
		if (!__atomic_exchange_n(&warned, true, __ATOMIC_RELAXED))
			warnx("%s=%s is not an octet count (N, Nk or Nm): using %zu",
			      name, e, dflt);
		return dflt;
	}
	return v;
}

static enum rpcrdma_reg_mode env_reg_mode(enum rpcrdma_reg_mode m)
{
	const char *e = getenv("RPCRDMA_REG_MODE");

	if (m != RPCRDMA_REG_AUTO || !e)
		return m;
	if (!strcmp(e, "mw"))
		return RPCRDMA_REG_MW;
	if (!strcmp(e, "mr"))
		return RPCRDMA_REG_MR;
	return m;
}

static enum rpcrdma_comp_mode env_comp_mode(enum rpcrdma_comp_mode m)
{
	const char *e = getenv("RPCRDMA_COMP_MODE");

	if (!e)
		return m;
	if (!strcmp(e, "poll"))
		return RPCRDMA_COMP_POLL;
	if (!strcmp(e, "event"))
		return RPCRDMA_COMP_EVENT;
	return m;
}

void rpcrdma_attr_fill(struct rpcrdma_attr *a)
{
	fill_u(&a->credits, RPCRDMA_DEFAULT_CREDITS);
	fill_u(&a->inline_send, RPCRDMA_DEFAULT_INLINE);
	fill_u(&a->inline_recv, RPCRDMA_DEFAULT_INLINE);
	fill_u(&a->connect_timeout_ms, RPCRDMA_DEFAULT_CONNECT_MS);
	fill_sz(&a->max_reply_size, RPCRDMA_DEFAULT_MAX_REPLY);
	fill_sz(&a->max_read_bytes, RPCRDMA_DEFAULT_MAX_READ);
	fill_u(&a->max_conns, RPCRDMA_DEFAULT_MAX_CONNS);
	fill_u(&a->max_conns_per_peer, RPCRDMA_DEFAULT_MAX_CONNS_PER_PEER);
	a->reg_mode = env_reg_mode(a->reg_mode);
	a->comp_mode = env_comp_mode(a->comp_mode);
}

int rpcrdma_attr_check(const struct rpcrdma_attr *a)
{
	for (size_t i = 0; i < ARRAY_SIZE(a->reserved); i++)
		if (a->reserved[i])
			return -1;
	if (a->reg_mode > RPCRDMA_REG_MR || a->comp_mode > RPCRDMA_COMP_POLL)
		return -1;
	return 0;
}
