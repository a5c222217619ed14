/*
 * netid_err.c - rpc_createerr with words (rpcrdma_err.h), and libtirpc's
 * clnt_spcreateerror() and clnt_pcreateerror() taken over to show them.
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

#include "compiler.h"
#include "glue/rpcrdma_err.h"
#include "glue/rpcrdma_netid.h"
#include "log/rl_log.h"

#define WORDS_LEN 384

/* What to try when no RDMA device serves an address: the cause is on
 * this host, and these commands show and fix it. */
#define NODEV_HINT                                              \
	" (see ibv_devices and 'rdma link'; to add Soft-RoCE: " \
	"rdma link add rxe0 type rxe netdev ETH)"

struct why {
	enum clnt_stat stat;
	int err;
	char who[32];
	char words[WORDS_LEN]; /* "" when none */
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

/* ---- Exported entry points ------------------------------------------------ */

/* libtirpc's text, then ours: "host: RPC: Remote system error - No such
 * device: no RDMA device on this host (...)". */
RPCRDMA_EXPORT char *clnt_spcreateerror(const char *s)
{
	static __thread char buf[WORDS_LEN + 256];
	const char *words = rpcrdma_createerr_words();
	char *text = REAL(clnt_spcreateerror)(s);
	size_t n;

	if (!words || !text)
		return text;
	n = strlen(text);
	while (n && text[n - 1] == '\n')
		n--;
	snprintf(buf, sizeof(buf), "%.*s: %s%s", (int)n, text, words,
		 text[n] ? "\n" : "");
	return buf;
}

RPCRDMA_EXPORT void clnt_pcreateerror(const char *s)
{
	if (!rpcrdma_createerr_words()) {
		REAL(clnt_pcreateerror)(s);
		return;
	}
	fprintf(stderr, "%s\n", clnt_spcreateerror(s));
}
