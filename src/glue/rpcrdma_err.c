/*
 * rpcrdma_err.c - rpc_createerr with words (rpcrdma_err.h): the per-thread
 * record of why the latest constructor of ours failed, its hold/release
 * logging rule, and the reachability probe the takeover asks before
 * rpcbind.  src/netid/netid_err.c shows the words through libtirpc's
 * clnt_spcreateerror() and clnt_pcreateerror().
 *
 * The words are kept per thread, like rpc_createerr itself, together with
 * the status and errno they explain; they are shown only while
 * rpc_createerr still holds that pair, so a later failure of any other
 * transport is printed exactly as libtirpc prints it.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <rpc/rpc.h>

#include "glue/rpcrdma_err.h"
#include "log/rl_log.h"
#include "rpc/rr_call.h"

/* What to try when no RDMA device serves an address: the cause is on
 * this host, and these commands show and fix it. */
#define NODEV_HINT                                              \
	" (see ibv_devices and 'rdma link'; to add Soft-RoCE: " \
	"rdma link add rxe0 type rxe netdev ETH)"

struct why {
	enum clnt_stat stat;
	int err;
	char who[32];
	char words[RPCRDMA_ERR_WORDS_LEN]; /* "" when none */
};

static __thread struct why why;
static __thread unsigned int held; /* rpcrdma_createerr_hold() depth */

void rpcrdma_createerr(enum clnt_stat stat, int err)
{
	rpc_createerr.cf_stat = stat;
	rpc_createerr.cf_error.re_status = stat;
	rpc_createerr.cf_error.re_errno = err;
	why.words[0] = '\0';
}

void *rpcrdma_createerr_why(enum clnt_stat stat, int err, const char *who,
			    const char *fmt, ...)
{
	size_t n;
	va_list ap;

	rpcrdma_createerr(stat, err);
	why.stat = stat;
	why.err = err;
	snprintf(why.who, sizeof(why.who), "%s", who);
	va_start(ap, fmt);
	vsnprintf(why.words, sizeof(why.words), fmt, ap);
	va_end(ap);
	n = strlen(why.words);
	if (err == ENODEV && n < sizeof(why.words))
		snprintf(why.words + n, sizeof(why.words) - n, "%s",
			 NODEV_HINT);
	rl_log(held ? RL_INFO : RL_ERROR, "%s: %s", why.who, why.words);
	return NULL;
}

void rpcrdma_createerr_hold(void)
{
	held++;
}

void rpcrdma_createerr_release(bool failed)
{
	if (held)
		held--;
	/* at level info the failure was printed when it happened */
	if (!held && failed && rpcrdma_createerr_words() &&
	    !rl_enabled(RL_INFO))
		rl_err("%s: %s", why.who, why.words);
}

const char *rpcrdma_createerr_words(void)
{
	if (!why.words[0] || rpc_createerr.cf_stat != why.stat ||
	    rpc_createerr.cf_error.re_errno != why.err)
		return NULL;
	return why.words;
}

int rpcrdma_unreachable(const struct sockaddr *sa, const char *who,
			unsigned int timeout_ms)
{
	struct rt_err err;

	if (!rr_clnt_probe(sa, timeout_ms, &err))
		return 0;
	rpcrdma_createerr_why(RPC_SYSTEMERROR, err.code, who, "%s", err.msg);
	return -1;
}
