/*
 * t_ddp_util.c - helpers of the direct data placement VM tests
 * (t_ddp_util.h): process environment, the server process and the
 * watchdog, CLIENTs and their counters, buffers, and the frame of the NFS
 * tests.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "glue/rpcrdma_attr.h" /* RPCRDMA_DEFAULT_DDP_MIN */
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

/* ---- Watchdog: also kills the servers ---------------------------------------- */

static struct ts_server *wd_srv[TD_WATCHDOG_MAX];
static unsigned int wd_n;

static void watchdog_fired(int sig)
{
	static const char msg[] = "FAIL - watchdog: the test ran too long\n";
	unsigned int i;

	(void)sig;
	for (i = 0; i < wd_n; i++)
		if (wd_srv[i]->pid > 0)
			kill(wd_srv[i]->pid, SIGKILL);
	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(2);
}

void td_watchdog(unsigned int seconds, struct ts_server *const *srv,
		 unsigned int n)
{
	unsigned int i;

	if (n > TD_WATCHDOG_MAX) {
		fprintf(stderr, "td_watchdog: more than %u servers\n",
			TD_WATCHDOG_MAX);
		exit(1);
	}
	for (i = 0; i < n; i++)
		wd_srv[i] = srv[i];
	wd_n = n;
	signal(SIGALRM, watchdog_fired);
	alarm(seconds);
}

/* ---- CLIENTs --------------------------------------------------------------- */

CLIENT *td_client(const struct ts_server *s, rpcprog_t prog, rpcvers_t vers,
		  enum rpcrdma_reg_mode reg)
{
	/* room for the 8 MiB echo of the control without an entry; with
	 * an entry the entry's sizes decide (no Reply chunk for ECHO) */
	return td_client_sized(s, prog, vers, reg, 8 * MiB + 4096, 30);
}

CLIENT *td_client_sized(const struct ts_server *s, rpcprog_t prog,
			rpcvers_t vers, enum rpcrdma_reg_mode reg,
			size_t max_reply, unsigned int timeout_s)
{
	struct timeval tv = { timeout_s, 0 };
	struct sockaddr_storage ss;
	struct rpcrdma_attr a;
	CLIENT *cl;

	rpcrdma_attr_init(&a);
	a.reg_mode = reg;
	if (max_reply)
		a.max_reply_size = max_reply;
	a.connect_timeout_ms = 5000;
	t_sockaddr(&ss, s->host, s->port);
	cl = clnt_rdma_create((struct sockaddr *)&ss, prog, vers, &a);
	if (!cl) {
		NOTE("clnt_rdma_create(%s port %u): %s", s->host, s->port,
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
	CHECK(false, "CLGET_RDMA_STATS refused: the counters of the "
		     "checks that follow are not real");
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

uint8_t *td_filled(size_t len, uint32_t seed)
{
	uint8_t *p = malloc(len ? len : 1);

	if (!p) {
		fprintf(stderr, "out of memory (%zu octets)\n", len);
		exit(1);
	}
	t_fill(p, len, seed);
	return p;
}

/* ---- Tests of a built-in NFS binding ---------------------------------------- */

bool td_read_chunk_ok(unsigned long long n, uint32_t len)
{
	if (len < RPCRDMA_DEFAULT_DDP_MIN)
		return n == 0;
	if (len >= TD_MUST_REDUCE)
		return n == 1;
	return n <= 1;
}

/* static: the watchdog reads its pid */
static struct ts_server nfs_srv;

static void nfs_run(const struct td_nfs *t)
{
	const struct td_files *f = &t->files;
	unsigned int i;
	CLIENT *cl;

	cl = td_client(&nfs_srv, t->prog, t->vers, RPCRDMA_REG_AUTO);
	CHECK(cl != NULL, "CLIENT for NFS v%u", (unsigned int)t->vers);
	if (!cl)
		return;
	CHECK(t->null(NULL, NULL, cl) == RPC_SUCCESS, "NFSPROC%u_NULL",
	      (unsigned int)t->vers);
	for (i = 0; i < f->n; i++) {
		f->image[i] = td_filled(f->sizes[i], i + 1);
		f->write(cl, i, 0, f->image[i], f->sizes[i]);
	}
	t->run(cl);
	clnt_destroy(cl);
	for (i = 0; i < f->n; i++)
		free(f->image[i]);
}

int td_nfs_main(int argc, char **argv, const struct td_nfs *t)
{
	static const struct td_env env[] = {
		{ "RPCRDMA_ULB_CONF", "/dev/null" }, /* built-in only */
		{ "RPCRDMA_DDP_REG_MIN", NULL },
	};
	struct ts_server *const srv[] = { &nfs_srv };
	struct rpcrdma_ulb_entry e;
	int r;

	if (argc != 1) {
		fprintf(stderr, "usage: %s\n", t->name);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	td_env_ensure(argv, env, 2); /* may re-execute us */
	if (!ts_have_rdma())
		return 77;
	td_watchdog(TD_WATCHDOG_S, srv, 1);
	CHECK(!rpcrdma_ulb_lookup(t->prog, t->vers, t->call_proc,
				  RPCRDMA_ULB_CALL, &e) &&
		      !rpcrdma_ulb_lookup(t->prog, t->vers, t->reply_proc,
					  RPCRDMA_ULB_REPLY, &e),
	      "%s", t->entries);
	r = td_server_start(&nfs_srv, t->server, t_addr4(), "/dev/null");
	CHECK(r == 0, "%s listening on %s port %u", t->server, t_addr4(),
	      nfs_srv.port);
	if (!r) {
		nfs_run(t);
		CHECK(ts_server_stop(&nfs_srv) == 0, "%s exits 0 on SIGTERM",
		      t->server);
	}
	return tu_done();
}
