/*
 * t_ddp_util.c - helpers of the direct data placement VM tests
 * (t_ddp_util.h): process environment, the server process, CLIENTs and
 * their counters.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "tests/vm/t_clnt_util.h"
#include "tests/vm/t_ddp_util.h"

/* ---- Environment ----------------------------------------------------------- */

static bool env_is(const struct td_env *e)
{
	const char *v = getenv(e->name);

	if (!e->value)
		return !v;
	return v && !strcmp(v, e->value);
}

void td_env_ensure(char **argv, const struct td_env *env, unsigned int n)
{
	unsigned int i;
	bool same = true;

	for (i = 0; i < n; i++)
		same = same && env_is(&env[i]);
	if (same)
		return;
	for (i = 0; i < n; i++) {
		if (env[i].value)
			setenv(env[i].name, env[i].value, 1);
		else
			unsetenv(env[i].name);
	}
	fflush(stdout);
	execv("/proc/self/exe", argv);
	fprintf(stderr, "re-executing %s: %s\n", argv[0], strerror(errno));
	exit(1);
}

/* ---- The server process ------------------------------------------------------ */

static void sibling(const char *name, char *buf, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0) {
		snprintf(buf, len, "%s", name);
		return;
	}
	self[n] = 0;
	snprintf(buf, len, "%s/%s", dirname(self), name);
}

/* setenv or unsetenv; value NULL unsets. */
static void put_env(const char *name, const char *value)
{
	if (value)
		setenv(name, value, 1);
	else
		unsetenv(name);
}

static char *save_env(const char *name)
{
	const char *v = getenv(name);

	return v ? strdup(v) : NULL;
}

int td_server_start(struct ts_server *s, const char *name, const char *host,
		    const char *conf)
{
	char *old_srv = save_env("RTEST_SERVER");
	char *old_conf = save_env("RPCRDMA_ULB_CONF");
	char path[PATH_MAX];
	int ret;

	sibling(name, path, sizeof(path));
	/* ts_server_start runs $RTEST_SERVER in our environment */
	put_env("RTEST_SERVER", path);
	put_env("RPCRDMA_ULB_CONF", conf);
	ret = ts_server_start(s, host, NULL);
	put_env("RTEST_SERVER", old_srv);
	put_env("RPCRDMA_ULB_CONF", old_conf);
	free(old_srv);
	free(old_conf);
	return ret;
}

/* ---- CLIENTs --------------------------------------------------------------- */

CLIENT *td_client(const struct ts_server *s, rpcprog_t prog, rpcvers_t vers,
		  enum rpcrdma_reg_mode reg)
{
	struct timeval tv = { 30, 0 };
	struct sockaddr_storage ss;
	struct rpcrdma_attr a;
	CLIENT *cl;

	rpcrdma_attr_init(&a);
	a.reg_mode = reg;
	/* room for the 8 MiB echo of the control without an entry; with
	 * an entry the entry's sizes decide (no Reply chunk for ECHO) */
	a.max_reply_size = 8 * MiB + 4096;
	a.connect_timeout_ms = 5000;
	t_sockaddr(&ss, s->host, s->port);
	cl = clnt_rdma_create((struct sockaddr *)&ss, prog, vers, &a);
	if (!cl) {
		t_note("clnt_rdma_create(%s port %u): %s", s->host, s->port,
		       clnt_spcreateerror("create"));
		return NULL;
	}
	clnt_control(cl, CLSET_TIMEOUT, &tv);
	return cl;
}

bool td_stats(CLIENT *cl, struct rpcrdma_clnt_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (clnt_control(cl, CLGET_RDMA_STATS, (char *)st))
		return true;
	memset(st, 0, sizeof(*st));
	return false;
}

const char *td_errmsg(CLIENT *cl)
{
	static char m[RPCRDMA_ERRMSG_LEN];

	if (!clnt_control(cl, CLGET_RDMA_ERRMSG, m))
		snprintf(m, sizeof(m), "(no message)");
	return m;
}

/* ---- Buffers --------------------------------------------------------------- */

uint8_t *td_guarded(size_t len)
{
	uint8_t *p = malloc(len + TD_GUARD);

	if (!p) {
		fprintf(stderr, "out of memory (%zu octets)\n", len);
		exit(1);
	}
	memset(p, 0, len);
	memset(p + len, 0xa5, TD_GUARD);
	return p;
}

bool td_guard_ok(const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i < TD_GUARD; i++)
		if (p[len + i] != 0xa5)
			return false;
	return true;
}
