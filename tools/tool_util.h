/*
 * tool_util.h - what rpcrdma-ping(1) and rpcrdma-bench(1) share: making
 * their CLIENT (at a given port with clnt_rdma_create(), else through the
 * rpcbind of the host), saying why it could not be made, the server's
 * address as text, and the parsing of the options both take.  Public API
 * only (<rpc/rpcrdma.h> and libtirpc), as the tools themselves.
 */
#ifndef TOOL_UTIL_H
#define TOOL_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

/* The server a tool calls and how. */
struct tool_target {
	const char *host;
	int family;	   /* AF_INET (netid rdma) or AF_INET6 (rdma6) */
	const char *netid; /* "rdma" or "rdma6", of family */
	unsigned int port; /* 0: ask the rpcbind of host */
	rpcprog_t prog;
	rpcvers_t vers;
	double wait_s;	    /* bounds the rpcbind exchange and the connection */
	bool version_given; /* -V: rdma_vers goes into the attributes */
	enum rpcrdma_version rdma_vers;
	bool poll; /* completions by polling */
};

/*
 * A CLIENT for t: with a port, clnt_rdma_create() at each address of the
 * host in the family until one connects; without, clnt_create_timed().
 * NULL with rpc_createerr set when none could be made.
 */
CLIENT *tool_connect(const struct tool_target *t);

/*
 * Why no CLIENT could be made, on stderr: "TOOL: " and the text of
 * clnt_spcreateerror(host) (which names a missing RDMA device and how to
 * add one, so the tools add no hint of their own for it), then suffix.
 */
void tool_create_failed(const char *tool, const char *host, const char *suffix);

/* The numeric host and port of a socket address ("?" and 0 if none). */
void tool_addr_text(const struct sockaddr *sa, socklen_t len, char *host,
		    size_t hlen, unsigned int *port);
/* The same, of the server a CLIENT is connected to. */
void tool_peer_text(CLIENT *cl, char *host, size_t hlen, unsigned int *port);

/* s without its trailing newlines (the RPC error texts end with one). */
const char *tool_chomp(char *s);
struct timeval tool_timeval(double s);

/* Seconds, fractions allowed, from min_s to a day: false if arg is not. */
bool tool_parse_seconds(const char *arg, double min_s, double *v);
/* -V's "1", "2" or "auto": false if arg is none of them. */
bool tool_parse_rdma_version(const char *arg, enum rpcrdma_version *v);

#endif /* TOOL_UTIL_H */
