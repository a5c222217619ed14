/*
 * t_ddp_util.h - helpers shared by the direct data placement VM tests
 * (t_ddp.c with ddpt_server.c, t_nfs3.c with nfs3_server.c,
 * t_nfs4.c with nfs4_server.c): the environment a test process must start
 * with (RPCRDMA_ULB_CONF and friends are read once, so the program
 * re-executes itself when they differ), starting a test server with its
 * own environment, a watchdog that kills it too, CLIENTs, deltas of the
 * CLIENT's counters (CLGET_RDMA_STATS), and the frame of the tests of a
 * built-in NFS binding (td_nfs_main), which differ only in their calls.
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

/*
 * After seconds: SIGKILL each server of srv[0..n) that runs (at most
 * TD_WATCHDOG_MAX; a server started later counts too), print "FAIL -
 * watchdog: the test ran too long" and _exit(2).  SIGKILL, not the clean
 * SIGTERM exit the servers take when the test dies (PR_SET_PDEATHSIG): a
 * test that hangs may hang because its server is stuck.
 */
#define TD_WATCHDOG_S	110 /* the VM suite kills at 120 s */
#define TD_WATCHDOG_MAX 2
void td_watchdog(unsigned int seconds, struct ts_server *const *srv,
		 unsigned int n);

/* clnt_rdma_create to the server with reg_mode; NULL with a note. */
CLIENT *td_client(const struct ts_server *s, rpcprog_t prog, rpcvers_t vers,
		  enum rpcrdma_reg_mode reg);
/* The same with max_reply_size (0: the library's default) and a call
 * timeout of timeout_s (CLSET_TIMEOUT). */
CLIENT *td_client_sized(const struct ts_server *s, rpcprog_t prog,
			rpcvers_t vers, enum rpcrdma_reg_mode reg,
			size_t max_reply, unsigned int timeout_s);

/* CLGET_RDMA_STATS; when refused, all zeros, a FAIL line and false: the
 * deltas of zeros would pass every "nothing moved" check. */
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
/* A buffer of len octets of the t_fill pattern of seed. */
uint8_t *td_filled(size_t len, uint32_t seed);

/* ---- Tests of a built-in NFS binding (t_nfs3, t_nfs4) ---------------------- */

/*
 * Eligible arguments from here on make a Call too large to be Short with
 * the default inline threshold (4096): one Read chunk is certain.
 */
#define TD_MUST_REDUCE 4096u

/*
 * Read chunks of an eligible argument item of len octets, n of them, as
 * the built-in bindings must give: none below the transport's default
 * minimum (the built-in entries and the walker have no minimum of their
 * own); exactly one once the Call cannot be Short; in between the Call
 * fits inline and may stay Short (RFC 8166 §3.5), so zero or one.
 */
bool td_read_chunk_ok(unsigned long long n, uint32_t len);

/*
 * The files every such test writes first: file i gets sizes[i] octets of
 * the t_fill pattern of seed i + 1, kept in image[i] (the test updates it
 * as it writes more), through write (a WRITE of len octets at off, with
 * its checks).
 */
struct td_files {
	const uint32_t *sizes;
	unsigned int n;
	uint8_t **image;
	void (*write)(CLIENT *cl, unsigned int i, uint64_t off,
		      const uint8_t *data, uint32_t len);
};

/* What such a test is; the rest of its frame is the same for all. */
struct td_nfs {
	const char *name;   /* "t_nfs3": its usage line */
	const char *server; /* "nfs3_server", next to the test */
	rpcprog_t prog;
	rpcvers_t vers;	      /* "CLIENT for NFS vN", "NFSPROCN_NULL" */
	rpcproc_t call_proc;  /* a built-in Call entry */
	rpcproc_t reply_proc; /* and a built-in Reply entry */
	const char *entries;  /* the check line that they are there */
	/* rpcgen's NULL procedure stub (nfsproc3_null_3...) */
	enum clnt_stat (*null)(void *arg, void *res, CLIENT *cl);
	struct td_files files;	 /* written first */
	void (*run)(CLIENT *cl); /* then the test's own calls */
};

/*
 * main() of such a test: no arguments (usage, exit 2), the environment
 * RPCRDMA_ULB_CONF=/dev/null (built-in table only) and no
 * RPCRDMA_DDP_REG_MIN, 77 without a device, the watchdog, the built-in
 * entries, the server (same environment) on t_addr4(), a CLIENT and NULL,
 * the files, t->run, the server's clean exit, and the "PASS/FAIL: N
 * failure(s)" line.
 * Returns the exit status: 0 only when every check passed.
 */
int td_nfs_main(int argc, char **argv, const struct td_nfs *t);

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
