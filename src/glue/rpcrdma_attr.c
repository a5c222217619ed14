/*
 * rpcrdma_attr.c - defaults of struct rpcrdma_attr and the environment
 * variables that override them.
 *
 * One place decides what "0 keeps a default" means, so the CLIENT and the
 * SVCXPRT constructors cannot drift apart.
 */
#define _GNU_SOURCE
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/rpcrdma.h>

#include "compiler.h"
#include "conf/rc_env.h"
#include "glue/rpcrdma_attr.h"
#include "log/rl_log.h"
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
	const char *e = rc_getenv(name), *end;
	uint32_t v;

	static bool warned;

	if (!e || !*e)
		return dflt;
	if (!ulb_octets(e, &end, &v) || *end) {
		if (!__atomic_exchange_n(&warned, true, __ATOMIC_RELAXED))
			rl_warn("%s=%s is not an octet count (N, Nk or Nm): "
				"using %zu",
				name, e, dflt);
		return dflt;
	}
	return v;
}

static enum rpcrdma_reg_mode env_reg_mode(enum rpcrdma_reg_mode mode)
{
	if (mode != RPCRDMA_REG_AUTO)
		return mode;
	switch (rc_reg_mode()) {
	case 1:
		return RPCRDMA_REG_MW;
	case 2:
		return RPCRDMA_REG_MR;
	default:
		return mode;
	}
}

static enum rpcrdma_comp_mode env_comp_mode(enum rpcrdma_comp_mode m)
{
	const char *e = rc_getenv("RPCRDMA_COMP_MODE");

	if (!e)
		return m;
	if (!strcmp(e, "poll"))
		return RPCRDMA_COMP_POLL;
	if (!strcmp(e, "event"))
		return RPCRDMA_COMP_EVENT;
	return m;
}

static enum rpcrdma_version env_version(enum rpcrdma_version v)
{
	const char *e = rc_getenv("RPCRDMA_VERSION");

	if (v != RPCRDMA_VERSION_AUTO || !e)
		return v;
	if (!strcmp(e, "1"))
		return RPCRDMA_VERSION_1;
	if (!strcmp(e, "2"))
		return RPCRDMA_VERSION_2;
	return v;
}

/* A decimal count from the environment, dflt when unset or malformed. */
static uint32_t env_u32(const char *name, uint32_t dflt)
{
	const char *e = rc_getenv(name);
	unsigned long v;
	char *end;

	if (!e || !*e)
		return dflt;
	v = strtoul(e, &end, 10);
	if (*end || v > UINT32_MAX) {
		rl_warn("%s=%s is not a number: using %u", name, e, dflt);
		return dflt;
	}
	return (uint32_t)v;
}

void rpcrdma_env_read(struct rpcrdma_env *env)
{
	memset(env, 0, sizeof(*env));
	env->v2_retry_s =
		env_u32("RPCRDMA_V2_RETRY", RPCRDMA_DEFAULT_V2_RETRY_S);
	env->no_remote_inv = !env_u32("RPCRDMA_REMOTE_INV", 1);
	env->max_read_chunks = env_u32("RPCRDMA_MAX_READ_CHUNKS", 0);
	env->max_write_chunks = env_u32("RPCRDMA_MAX_WRITE_CHUNKS", 0);
	env->max_chunk_segs = env_u32("RPCRDMA_MAX_SEGMENTS", 0);
	env->replay_bytes = rpcrdma_env_size("RPCRDMA_REPLAY_BYTES", 0);
	env->xcharext = rc_getenv("RPCRDMA_XCHAREXT");
}

/* The address of peer as text, without the port. */
static const char *peer_text(const struct sockaddr *peer, char *buf,
			     socklen_t len)
{
	const void *a =
		peer->sa_family == AF_INET6 ?
			(const void *)&((const struct sockaddr_in6 *)peer)
				->sin6_addr :
			(const void *)&((const struct sockaddr_in *)peer)
				->sin_addr;

	return inet_ntop(peer->sa_family, a, buf, len);
}

bool rpcrdma_env_xcharext(const struct rpcrdma_env *env,
			  const struct sockaddr *peer)
{
	char addr[INET6_ADDRSTRLEN];
	const char *p, *end;
	size_t n;

	if (!env->xcharext || !*env->xcharext)
		return false;
	if (!strcmp(env->xcharext, "all"))
		return true;
	if (!peer_text(peer, addr, sizeof(addr)))
		return false;
	n = strlen(addr);
	for (p = env->xcharext; *p; p = *end ? end + 1 : end) {
		end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		if ((size_t)(end - p) == n && !strncmp(p, addr, n))
			return true;
	}
	return false;
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
	fill_u(&a->bc_credits,
	       env_u32("RPCRDMA_BC_CREDITS", RPCRDMA_DEFAULT_BC_CREDITS));
	if (!a->poll_us) {
		a->poll_us =
			env_u32("RPCRDMA_POLL_US", RPCRDMA_DEFAULT_POLL_US);
		if (!a->poll_us || a->poll_us > RPCRDMA_POLL_MAX)
			a->poll_us = RPCRDMA_POLL_NONE; /* "0": never */
	}
	if (!a->idle_timeout) {
		a->idle_timeout = env_u32("RPCRDMA_IDLE_TIMEOUT",
					  RPCRDMA_DEFAULT_IDLE_TIMEOUT);
		if (!a->idle_timeout || a->idle_timeout > RPCRDMA_IDLE_MAX)
			a->idle_timeout = RPCRDMA_IDLE_NONE; /* "0": never */
	}
	a->reg_mode = env_reg_mode(a->reg_mode);
	a->comp_mode = env_comp_mode(a->comp_mode);
	a->version = env_version(a->version);
}

uint32_t rpcrdma_attr_poll_us(const struct rpcrdma_attr *a)
{
	return a->poll_us == RPCRDMA_POLL_NONE ? 0 : (uint32_t)a->poll_us;
}

uint32_t rpcrdma_attr_idle_s(const struct rpcrdma_attr *a)
{
	return a->idle_timeout == RPCRDMA_IDLE_NONE ? 0 :
						      (uint32_t)a->idle_timeout;
}

unsigned int rpcrdma_attr_bc(const struct rpcrdma_attr *a)
{
	return a->bc_credits == RPCRDMA_BC_NONE ? 0 : a->bc_credits;
}

int rpcrdma_attr_check(const struct rpcrdma_attr *a)
{
	for (size_t i = 0; i < ARRAY_SIZE(a->reserved); i++)
		if (a->reserved[i])
			return -1;
	if (a->reg_mode > RPCRDMA_REG_MR || a->comp_mode > RPCRDMA_COMP_POLL ||
	    a->version > RPCRDMA_VERSION_2 ||
	    (a->poll_us > RPCRDMA_POLL_MAX &&
	     a->poll_us != RPCRDMA_POLL_NONE) ||
	    (a->idle_timeout > RPCRDMA_IDLE_MAX &&
	     a->idle_timeout != RPCRDMA_IDLE_NONE))
		return -1;
	/* each costs a Receive buffer on every connection */
	if (a->bc_credits > RPCRDMA_MAX_BC_CREDITS &&
	    a->bc_credits != RPCRDMA_BC_NONE)
		return -1;
	return 0;
}
