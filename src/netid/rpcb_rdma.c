/*
 * rpcb_rdma.c - finding an rdma service through the rpcbind of its host,
 * and rpcb_getaddr() for netids rdma and rdma6.
 *
 * rpcbind answers GETADDR from the netid of the transport the query came
 * in on, not from r_netid (it has no rdma transport, so the answer is the
 * tcp registration or ""), and leaves GETADDRLIST unanswered once an rdma
 * entry exists.  DUMP lists every registration with its netid, so: DUMP
 * over tcp/tcp6 to port 111 (version 4, else 3), keep r_prog and r_netid,
 * prefer r_vers, accept any version as GETADDR v4 does (clnt_create_vers
 * then negotiates with the PROG_MISMATCH of its first call), and replace a
 * wildcard address by the address rpcbind was reached at.
 *
 * Every step has a deadline: the connection to rpcbind (libtirpc's own
 * connect() has none) and the call.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpcb_prot.h>

#include "compiler.h"
#include "netid/rpcrdma_netid.h"

#define RPCBIND_PORT	   111
#define DEFAULT_CONNECT_MS 10000
#define DEFAULT_CALL_S	   25

int rpcrdma_tv_ms(const struct timeval *tp, int dflt)
{
	long long ms;

	if (!tp)
		return dflt;
	ms = (long long)tp->tv_sec * 1000 + tp->tv_usec / 1000;
	if (ms < 1)
		return 1;
	return ms > 3600000 ? 3600000 : (int)ms;
}

static socklen_t sa_len(const struct sockaddr *sa)
{
	switch (sa->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	default:
		return sizeof(struct sockaddr_un);
	}
}

/* connect() within timeout_ms; the socket is blocking again afterwards. */
static int timed_connect(const struct sockaddr *sa, int timeout_ms, int *err)
{
	struct pollfd pfd = { .events = POLLOUT };
	socklen_t elen = sizeof(*err);
	int fd, r;

	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0) {
		*err = errno;
		return -1;
	}
	*err = 0;
	if (connect(fd, sa, sa_len(sa)) < 0) {
		if (errno != EINPROGRESS) {
			*err = errno;
			goto fail;
		}
		pfd.fd = fd;
		do
			r = poll(&pfd, 1, timeout_ms);
		while (r < 0 && errno == EINTR);
		if (r <= 0) {
			*err = r ? errno : ETIMEDOUT;
			goto fail;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, err, &elen) < 0)
			*err = errno;
		if (*err)
			goto fail;
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
		*err = errno;
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

/*
 * A CLIENT for rpcbind at sa (AF_INET, AF_INET6 or AF_LOCAL, with its
 * port), or NULL with *err set.  libtirpc builds it on our connected
 * socket: no netconfig is involved.
 */
CLIENT *rpcrdma_rpcb_client(const struct sockaddr *sa, int timeout_ms, int *err)
{
	struct netbuf nb = { .buf = (void *)sa,
			     .len = sa_len(sa),
			     .maxlen = sa_len(sa) };
	int fd = timed_connect(sa, timeout_ms, err);
	CLIENT *cl;

	if (fd < 0)
		return NULL;
	cl = REAL(clnt_tli_create)(fd, NULL, &nb, RPCBPROG, RPCBVERS4, 0, 0);
	if (!cl) {
		*err = rpc_createerr.cf_error.re_errno ?
			       rpc_createerr.cf_error.re_errno :
			       EIO;
		close(fd);
		return NULL;
	}
	CLNT_CONTROL(cl, CLSET_FD_CLOSE, NULL);
	return cl;
}

/* A call to rpcbind version 4, else 3 (both have SET, UNSET and DUMP). */
enum clnt_stat rpcrdma_rpcb_call(CLIENT *cl, rpcproc_t proc, xdrproc_t xargs,
				 void *args, xdrproc_t xres, void *res,
				 struct timeval tv)
{
	enum clnt_stat st;
	rpcvers_t v3 = RPCBVERS;

	st = clnt_call(cl, proc, xargs, args, xres, res, tv);
	if (st != RPC_PROGVERSMISMATCH)
		return st;
	CLNT_CONTROL(cl, CLSET_VERS, (char *)&v3);
	return clnt_call(cl, proc, xargs, args, xres, res, tv);
}

/* ---- Lookup ----------------------------------------------------------------- */

static const RPCB *pick(const rpcblist *l, rpcprog_t prog, rpcvers_t vers,
			const char *netid)
{
	const RPCB *any = NULL;

	for (; l; l = l->rpcb_next) {
		const RPCB *m = &l->rpcb_map;

		if (m->r_prog != prog || !m->r_netid ||
		    strcmp(m->r_netid, netid))
			continue;
		if (m->r_vers == vers)
			return m;
		if (!any)
			any = m;
	}
	return any;
}

static bool is_wildcard(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	return IN6_IS_ADDR_UNSPECIFIED(
		&((const struct sockaddr_in6 *)sa)->sin6_addr);
}

/* The registered address, a wildcard one made concrete with host. */
static int to_sockaddr(const RPCB *m, int family, const struct sockaddr *host,
		       struct sockaddr_storage *out)
{
	struct netbuf *nb = rpcrdma_uaddr2taddr(family, m->r_addr);
	uint16_t port;

	if (!nb)
		return -1;
	memcpy(out, nb->buf, nb->len);
	rpcrdma_netbuf_free(nb);
	if (!is_wildcard((struct sockaddr *)out))
		return 0;
	port = family == AF_INET ? ((struct sockaddr_in *)out)->sin_port :
				   ((struct sockaddr_in6 *)out)->sin6_port;
	memcpy(out, host, sa_len(host));
	if (family == AF_INET)
		((struct sockaddr_in *)out)->sin_port = port;
	else
		((struct sockaddr_in6 *)out)->sin6_port = port;
	return 0;
}

static void rpcb_failed(enum clnt_stat why, int err)
{
	rpcrdma_createerr(RPC_PMAPFAILURE, err);
	rpc_createerr.cf_error.re_status = why;
}

int rpcrdma_rpcb_lookup(const struct sockaddr *host, rpcprog_t prog,
			rpcvers_t vers, const char *netid,
			const struct timeval *tp, struct sockaddr_storage *out)
{
	struct timeval tv = tp ? *tp : (struct timeval){ DEFAULT_CALL_S, 0 };
	int family = rpcrdma_netid_family(netid), err, rc = -1;
	struct sockaddr_storage rb;
	rpcblist *list = NULL;
	enum clnt_stat st;
	const RPCB *m;
	CLIENT *cl;

	memcpy(&rb, host, sa_len(host));
	if (family == AF_INET)
		((struct sockaddr_in *)&rb)->sin_port = htons(RPCBIND_PORT);
	else
		((struct sockaddr_in6 *)&rb)->sin6_port = htons(RPCBIND_PORT);
	cl = rpcrdma_rpcb_client((struct sockaddr *)&rb,
				 rpcrdma_tv_ms(tp, DEFAULT_CONNECT_MS), &err);
	if (!cl) {
		rpcb_failed(err == ETIMEDOUT ? RPC_TIMEDOUT : RPC_CANTSEND,
			    err);
		return -1;
	}
	st = rpcrdma_rpcb_call(cl, RPCBPROC_DUMP, RPCRDMA_XDR_VOID, NULL,
			       (xdrproc_t)xdr_rpcblist_ptr, &list, tv);
	if (st != RPC_SUCCESS) {
		rpcb_failed(st, 0);
		goto out;
	}
	m = pick(list, prog, vers, netid);
	if (!m)
		rpcrdma_createerr(RPC_PROGNOTREGISTERED, 0);
	else if (to_sockaddr(m, family, host, out))
		rpcb_failed(RPC_CANTDECODERES, EINVAL); /* a bad r_addr */
	else
		rc = 0;
out:
	xdr_free((xdrproc_t)xdr_rpcblist_ptr, (char *)&list);
	clnt_destroy(cl);
	return rc;
}

struct addrinfo *rpcrdma_resolve(const char *host, int family)
{
	struct addrinfo hints = { .ai_family = family,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL;

	if (!host || getaddrinfo(host, NULL, &hints, &res)) {
		rpcrdma_createerr(RPC_UNKNOWNHOST, 0);
		return NULL;
	}
	return res;
}

/* ---- rpcb_getaddr() ----------------------------------------------------------- */

static bool_t rdma_getaddr(rpcprog_t prog, rpcvers_t vers, const char *netid,
			   struct netbuf *address, const char *host)
{
	struct addrinfo *res, *ai;
	struct sockaddr_storage ss;
	socklen_t len;

	res = rpcrdma_resolve(host, rpcrdma_netid_family(netid));
	if (!res)
		return FALSE;
	for (ai = res; ai; ai = ai->ai_next) {
		if (rpcrdma_rpcb_lookup(ai->ai_addr, prog, vers, netid, NULL,
					&ss))
			continue;
		freeaddrinfo(res);
		len = sa_len((struct sockaddr *)&ss);
		if (!address || len > address->maxlen) {
			rpcrdma_createerr(RPC_FAILED, 0);
			return FALSE;
		}
		memcpy(address->buf, &ss, len);
		address->len = len;
		return TRUE;
	}
	freeaddrinfo(res);
	return FALSE;
}

RPCRDMA_EXPORT bool_t rpcb_getaddr(const rpcprog_t prog, const rpcvers_t vers,
				   const struct netconfig *nconf,
				   struct netbuf *address, const char *host)
{
	if (!rpcrdma_nconf_family(nconf))
		return REAL(rpcb_getaddr)(prog, vers, nconf, address, host);
	return rdma_getaddr(prog, vers, nconf->nc_netid, address, host);
}
