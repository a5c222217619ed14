/*
 * netid_err.c - libtirpc's clnt_spcreateerror() and clnt_pcreateerror()
 * taken over to show the words our constructors keep with rpc_createerr
 * (src/glue/rpcrdma_err.h).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <rpc/rpc.h>

#include "compiler.h"
#include "glue/rpcrdma_err.h"
#include "netid/rpcrdma_netid.h"

/* ---- Exported entry points ------------------------------------------------ */

/* libtirpc's text, then ours: "host: RPC: Remote system error - No such
 * device: no RDMA device on this host (...)". */
RPCRDMA_EXPORT char *clnt_spcreateerror(const char *s)
{
	static __thread char buf[RPCRDMA_ERR_WORDS_LEN + 256];
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
