/*
 * netid_env.c - the environment variables of the netid layer
 * (rpcrdma-environ(7)):
 *
 *   RPCRDMA_PORT=LIST     fixed ports of rdma services, a list separated
 *                         by commas of PORT (every program) or PROG=PORT
 *                         (that program; PORT 0: ask rpcbind / any port).
 *                         Without an entry NFS (100003) uses 20049, the
 *                         NFS/RDMA convention, and everything else rpcbind
 *                         (client) or a free port (server).
 *   RPCRDMA_RPCBIND=0|1   whether servers register with rpcbind (1).
 *
 * Read at every use, so a program may change them with setenv().  A value
 * that does not parse is ignored, with one message.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf/rc_env.h"
#include "netid/rpcrdma_netid.h"

#define NFS_PROGRAM   100003
#define NFS_RDMA_PORT 20049

struct port_rule {
	unsigned int any;	/* PORT entry: 0 if none */
	unsigned int prog_port; /* PROG=PORT entry for the program */
	bool prog_found;
};

/* A number filling [s, end): base 0 for programs (0x...), 10 for ports. */
static bool parse_num(const char *s, const char *end, int base,
		      unsigned long max, unsigned long *v)
{
	char *e;

	if (s == end || *s == '-' || *s == '+')
		return false;
	errno = 0;
	*v = strtoul(s, &e, base);
	return !errno && e == end && *v <= max;
}

/* One entry, [s, end): "PORT" or "PROG=PORT". */
static bool parse_entry(const char *s, const char *end, rpcprog_t prog,
			struct port_rule *r)
{
	const char *eq = memchr(s, '=', end - s);
	unsigned long p, port;

	if (!eq) {
		if (!parse_num(s, end, 10, 65535, &port) || !port)
			return false;
		r->any = port;
		return true;
	}
	if (!parse_num(s, eq, 0, 0xffffffffUL, &p) ||
	    !parse_num(eq + 1, end, 10, 65535, &port))
		return false;
	if (p == prog) {
		r->prog_port = port;
		r->prog_found = true;
	}
	return true;
}

static bool parse_ports(const char *v, rpcprog_t prog, struct port_rule *r)
{
	const char *p = v, *end;

	memset(r, 0, sizeof(*r));
	while (*p) {
		p += strspn(p, ", \t");
		if (!*p)
			break;
		end = p + strcspn(p, ", \t");
		if (!parse_entry(p, end, prog, r))
			return false;
		p = end;
	}
	return true;
}

static bool port_rule(rpcprog_t prog, struct port_rule *r)
{
	static bool told;
	const char *v = rc_getenv("RPCRDMA_PORT");

	memset(r, 0, sizeof(*r));
	if (!v || parse_ports(v, prog, r))
		return true;
	if (!told) {
		told = true;
		rl_warn("RPCRDMA_PORT='%s' ignored: expected PORT or PROG=PORT, "
			"separated by commas",
			v);
	}
	memset(r, 0, sizeof(*r));
	return false;
}

unsigned int rpcrdma_env_port(rpcprog_t prog)
{
	struct port_rule r;

	port_rule(prog, &r);
	if (r.prog_found)
		return r.prog_port;
	if (r.any)
		return r.any;
	return prog == NFS_PROGRAM ? NFS_RDMA_PORT : 0;
}

unsigned int rpcrdma_env_port_any(void)
{
	struct port_rule r;

	/* No program has number 0 in a PROG=PORT entry that matters here. */
	port_rule(0, &r);
	return r.any;
}

bool rpcrdma_env_rpcbind(void)
{
	static const char *const no[] = { "0", "no", "off", "false" };
	static const char *const yes[] = { "1", "yes", "on", "true" };
	static bool told;
	const char *v = rc_getenv("RPCRDMA_RPCBIND");

	if (!v)
		return true;
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		if (!strcasecmp(v, no[i]))
			return false;
		if (!strcasecmp(v, yes[i]))
			return true;
	}
	if (!told) {
		told = true;
		rl_warn("RPCRDMA_RPCBIND='%s' ignored: expected 0 or 1", v);
	}
	return true;
}
