/*
 * rc_env.h - every environment variable the library reads, and the one
 * way it reads them (prefix rc_, src/conf: the bottom of the stack, libc
 * only, usable by every layer).
 *
 * The table below is the list: a name missing from it reads as unset, and
 * tests/unit/layers.sh fails when a file of src/ calls getenv() or
 * secure_getenv() itself or passes rc_getenv() a literal name that is not
 * here.  rpcrdma-environ(7) documents each one (tools/analyze man checks).
 *
 * The rule: secure_getenv(), so a set-user-ID or set-group-ID program never
 * takes its settings from whoever runs it; NETPATH alone with getenv(),
 * because libtirpc reads it so and the two must agree on what it says.
 *
 * Header only, on purpose: every layer's convenience library and every
 * test program that links one of them directly (tests/unit, tests/fuzz,
 * tests/vm) gets it without a link change.  The caller defines _GNU_SOURCE
 * before its first include, as it did for secure_getenv().
 */
#ifndef RC_ENV_H
#define RC_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

struct rc_var {
	const char *name;
	bool plain; /* getenv(), not secure_getenv() */
};

/* The table; its number of entries in *n. */
static inline const struct rc_var *rc_vars(size_t *n)
{
	static const struct rc_var vars[] = {
		{ "NETPATH", true }, /* src/netid: as libtirpc reads it */
		{ "RPCRDMA_BC_CREDITS", false },
		{ "RPCRDMA_CACHE_BYTES", false },
		{ "RPCRDMA_COMP_MODE", false },
		{ "RPCRDMA_DDP_REG_MIN", false },
		{ "RPCRDMA_IDLE_TIMEOUT", false },
		{ "RPCRDMA_LOG", false },
		{ "RPCRDMA_MAX_READ_CHUNKS", false },
		{ "RPCRDMA_MAX_SEGMENTS", false },
		{ "RPCRDMA_MAX_WRITE_CHUNKS", false },
		{ "RPCRDMA_POLL_US", false },
		{ "RPCRDMA_PORT", false },
		/* RPCRDMA_REG_MODE: rc_reg_mode() below */
		{ "RPCRDMA_REG_MODE", false },
		{ "RPCRDMA_REMOTE_INV", false },
		{ "RPCRDMA_REPLAY_BYTES", false },
		{ "RPCRDMA_RPCBIND", false },
		{ "RPCRDMA_STATS", false },
		{ "RPCRDMA_STATS_FILE", false },
		{ "RPCRDMA_STATS_SOCKET", false },
		{ "RPCRDMA_TRACE", false },
		{ "RPCRDMA_ULB_CONF", false },
		{ "RPCRDMA_V2_RETRY", false },
		{ "RPCRDMA_VERSION", false },
		{ "RPCRDMA_XCHAREXT", false },
	};

	*n = sizeof(vars) / sizeof(vars[0]);
	return vars;
}

/* The value of name under its rule, or NULL (unset, or not in the table). */
static inline const char *rc_getenv(const char *name)
{
	const struct rc_var *v;
	size_t i, n;

	v = rc_vars(&n);
	for (i = 0; i < n; i++) {
		if (strcmp(v[i].name, name))
			continue;
		return v[i].plain ? getenv(name) : secure_getenv(name);
	}
	return NULL;
}

/*
 * RPCRDMA_REG_MODE, read by the transport for every connection and by
 * rpcrdma_attr_init() for the structure it fills (its man page says so):
 * 1 for "mw", 2 for "mr", 0 when unset or another word, so the two agree.
 */
static inline int rc_reg_mode(void)
{
	const char *e = rc_getenv("RPCRDMA_REG_MODE");

	if (e && !strcmp(e, "mw"))
		return 1;
	if (e && !strcmp(e, "mr"))
		return 2;
	return 0;
}

#endif /* RC_ENV_H */
