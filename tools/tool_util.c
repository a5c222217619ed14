/*
 * tool_util.c - what rpcrdma-ping(1) and rpcrdma-bench(1) share
 * (tool_util.h): the CLIENT, its failure, addresses as text, options.
 */
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/tool_util.h"

/* With a port: every address of the host in the family, in turn. */
static CLIENT *connect_direct(const struct tool_target *t)
{
	struct addrinfo hints = { .ai_family = t->family,
				  .ai_socktype = SOCK_STREAM };
	struct rpcrdma_attr attr;
	struct addrinfo *res, *ai;
	char port[12];
	CLIENT *cl = NULL;

	snprintf(port, sizeof(port), "%u", t->port);
	if (getaddrinfo(t->host, port, &hints, &res)) {
		rpc_createerr.cf_stat = RPC_UNKNOWNHOST;
		return NULL;
	}
	rpcrdma_attr_init(&attr);
	attr.connect_timeout_ms = (unsigned int)(t->wait_s * 1000);
	if (t->version_given)
		attr.version = t->rdma_vers;
	if (t->poll)
		attr.comp_mode = RPCRDMA_COMP_POLL;
	for (ai = res; ai && !cl; ai = ai->ai_next)
		cl = clnt_rdma_create(ai->ai_addr, t->prog, t->vers, &attr);
	freeaddrinfo(res);
	return cl;
}

CLIENT *tool_connect(const struct tool_target *t)
{
	struct timeval tv = tool_timeval(t->wait_s);

	if (t->port)
		return connect_direct(t);
	return clnt_create_timed(t->host, t->prog, t->vers, t->netid, &tv);
}

void tool_create_failed(const char *tool, const char *host, const char *suffix)
{
	fprintf(stderr, "%s: %s%s\n", tool,
		tool_chomp(clnt_spcreateerror(host)), suffix);
}

void tool_addr_text(const struct sockaddr *sa, socklen_t len, char *host,
		    size_t hlen, unsigned int *port)
{
	char serv[NI_MAXSERV];

	if (getnameinfo(sa, len, host, (socklen_t)hlen, serv, sizeof(serv),
			NI_NUMERICHOST | NI_NUMERICSERV)) {
		snprintf(host, hlen, "?");
		*port = 0;
		return;
	}
	*port = (unsigned int)strtoul(serv, NULL, 10);
}

void tool_peer_text(CLIENT *cl, char *host, size_t hlen, unsigned int *port)
{
	struct netbuf nb = { 0 };

	snprintf(host, hlen, "?");
	*port = 0;
	if (clnt_control(cl, CLGET_SVC_ADDR, (char *)&nb) && nb.buf)
		tool_addr_text(nb.buf, nb.len, host, hlen, port);
}

const char *tool_chomp(char *s)
{
	size_t n = strlen(s);

	while (n && s[n - 1] == '\n')
		s[--n] = '\0';
	return s;
}

struct timeval tool_timeval(double s)
{
	struct timeval tv;

	tv.tv_sec = (time_t)s;
	tv.tv_usec = (suseconds_t)((s - (double)tv.tv_sec) * 1e6);
	return tv;
}

bool tool_parse_seconds(const char *arg, double min_s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(arg, &end);
	return !errno && end != arg && !*end && isfinite(*v) && *v >= min_s &&
	       *v <= 86400;
}

bool tool_parse_rdma_version(const char *arg, enum rpcrdma_version *v)
{
	if (!strcmp(arg, "1"))
		*v = RPCRDMA_VERSION_1;
	else if (!strcmp(arg, "2"))
		*v = RPCRDMA_VERSION_2;
	else if (!strcmp(arg, "auto"))
		*v = RPCRDMA_VERSION_AUTO;
	else
		return false;
	return true;
}
