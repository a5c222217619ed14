/*
 * t_ddp_util.h - helpers shared by the direct data placement VM tests
 * (issue 6: t_ddp.c with ddpt_server.c, t_nfs3.c with nfs3_server.c):
 * the environment a test process must start with (RPCRDMA_ULB_CONF and
 * friends are read once, so the program re-executes itself when they
 * differ), starting a test server with its own environment, CLIENTs, and
 * deltas of the CLIENT's counters (CLGET_RDMA_STATS).
 *
 * Check lines, patterns and addresses come from t_clnt_util.h; the server
 * process and the raw client from t_svc_util.h.
 */
#ifndef T_DDP_UTIL_H
#define T_DDP_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "tests/vm/t_svc_util.h"

#define MiB (1u << 20)

/* One environment variable a test process needs; value NULL: unset. */
struct td_env {
	const char *name;
	const char *value;
};

/*
 * Make sure the process runs with env[0..n): if any differs, set them all
 * and execute /proc/self/exe again with argv (does not return then).
 * Returns only when the environment is already right.
 */
void td_env_ensure(char **argv, const struct td_env *env, unsigned int n);

/*
 * Start the server binary "name" (next to this program) on host, port 0,
 * with RPCRDMA_ULB_CONF=conf in its environment (NULL: unset), via
 * ts_server_start.  0 or -1.  Stop it with ts_server_stop.
 */
int td_server_start(struct ts_server *s, const char *name, const char *host,
		    const char *conf);

/* clnt_rdma_create to the server with reg_mode; NULL with a note. */
CLIENT *td_client(const struct ts_server *s, rpcprog_t prog, rpcvers_t vers,
		  enum rpcrdma_reg_mode reg);

/* CLGET_RDMA_STATS; all zeros and false when refused. */
bool td_stats(CLIENT *cl, struct rpcrdma_clnt_stats *st);

/* after - before of one counter of two snapshots. */
#define TD_D(a, b, f) ((unsigned long long)((a)->f - (b)->f))

/* Why the latest call of cl failed, one line (CLGET_RDMA_ERRMSG). */
const char *td_errmsg(CLIENT *cl);

/* A buffer of len octets plus guard octets of 0xa5 behind it. */
#define TD_GUARD 64
uint8_t *td_guarded(size_t len);
/* Are the TD_GUARD octets at p[len..] still 0xa5? */
bool td_guard_ok(const uint8_t *p, size_t len);

/*
 * Zero copy needs the CLIENT's probe of the caller's results (rw_pxdr),
 * which is off in ASan builds: ASan's xdr_string interceptor strlen()s a
 * NULL string that libtirpc itself refuses cleanly.  There every result
 * item goes through pool memory and one copy, and the tests expect that.
 */
#if defined(__SANITIZE_ADDRESS__)
#define TD_ZERO_COPY 0
#else
#define TD_ZERO_COPY 1
#endif

#endif /* T_DDP_UTIL_H */
