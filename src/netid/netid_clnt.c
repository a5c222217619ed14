/*
 * netid_clnt.c - the client entry points of libtirpc for netids "rdma" and
 * "rdma6": clnt_create(), clnt_create_timed(), clnt_create_vers(),
 * clnt_create_vers_timed(), clnt_tp_create(), clnt_tp_create_timed(),
 * clnt_tli_create() and rpc_call().
 *
 * Each one looks at its netid or nettype and either does the rdma work
 * itself - name lookup, port (RPCRDMA_PORT, the NFS convention or the
 * host's rpcbind), clnt_rdma_create() - or forwards the call to libtirpc
 * unchanged.  libtirpc rejects "rdma" as a nettype (it knows only its own
 * nettypes and says "Unknown protocol" before reading /etc/netconfig), and
 * given an rdma netconfig it would close fd 0, so the rdma paths never
 * call into it with one.  The nettype "netpath" is walked here, instead of by libtirpc, when
 * NETPATH names an rdma netid: libtirpc would reach our clnt_tp_create_timed
 * for it only through its PLT, which not every build has.
 */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/param.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "compiler.h"
#include "netid/rpcrdma_netid.h"

/* What clnt_create_vers and rpc_call wait for a reply (as libtirpc). */
#define VERS_PROBE_S 10
#define RPC_CALL_S   25

/* ---- One rdma CLIENT ---------------------------------------------------------- */

static void set_port(struct sockaddr_storage *ss, unsigned int port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

static CLIENT *rdma_connect(const struct sockaddr_storage *ss, rpcprog_t prog,
			    rpcvers_t vers, const struct timeval *tp)
{
	struct rpcrdma_attr a;

	rpcrdma_attr_init(&a);
	if (tp)
		a.connect_timeout_ms = rpcrdma_tv_ms(tp, 0);
	return clnt_rdma_create((const struct sockaddr *)ss, prog, vers, &a);
}

/* Can an RDMA device reach sa (NULL: any device at all)?  -1 with the
 * cause in rpc_createerr if not (rpcrdma_err.h). */
static int unreachable(const struct sockaddr *sa, const char *netid,
		       const struct timeval *tp)
{
	return rpcrdma_unreachable(sa, netid,
				   (unsigned int)rpcrdma_tv_ms(tp, 0));
}

/*
 * clnt_tp_create_timed() for netid: every address of host in turn, the
 * port from the environment (or the NFS convention) or from the host's
 * rpcbind, asked only once the address is known to be reachable over
 * RDMA; tp bounds each rpcbind exchange and each RDMA connect.
 */
static CLIENT *rdma_clnt_tp_create(const char *host, rpcprog_t prog,
				   rpcvers_t vers, const char *netid,
				   const struct timeval *tp)
{
	unsigned int port = rpcrdma_env_port(prog);
	struct sockaddr_storage ss;
	struct addrinfo *res, *ai;
	CLIENT *cl = NULL;

	res = rpcrdma_resolve(host, rpcrdma_netid_family(netid));
	if (!res)
		return NULL;
	rpcrdma_createerr_hold();
	if (!port && unreachable(NULL, netid, tp))
		ai = NULL;
	else
		ai = res;
	for (; ai && !cl; ai = ai->ai_next) {
		if (port) {
			memset(&ss, 0, sizeof(ss));
			memcpy(&ss, ai->ai_addr, ai->ai_addrlen);
			set_port(&ss, port);
		} else if (unreachable(ai->ai_addr, netid, tp) ||
			   rpcrdma_rpcb_lookup(ai->ai_addr, prog, vers, netid,
					       tp, &ss)) {
			continue;
		}
		cl = rdma_connect(&ss, prog, vers, tp);
	}
	freeaddrinfo(res);
	rpcrdma_createerr_release(!cl);
	return cl;
}

/* ---- NETPATH ---------------------------------------------------------------- */

/*
 * The first transport of NETPATH that gives a CLIENT.  As libtirpc's
 * clnt_create_timed(), report a failure more telling than "unknown host"
 * or "name to address translation failed" if one happened on the way.
 */
static CLIENT *netpath_create(const char *host, rpcprog_t prog, rpcvers_t vers,
			      const struct timeval *tp)
{
	__typeof__(rpc_createerr) saved = { .cf_stat = RPC_SUCCESS };
	struct rpcrdma_netpath np;
	struct netconfig *nc;
	CLIENT *cl = NULL;

	if (!rpcrdma_netpath_begin(&np)) {
		rpcrdma_createerr(RPC_SYSTEMERROR, ENOMEM);
		return NULL;
	}
	rpcrdma_createerr_hold();
	rpcrdma_createerr(RPC_UNKNOWNPROTO, 0);
	while (!cl && (nc = rpcrdma_netpath_next(&np))) {
		if (rpcrdma_nconf_family(nc))
			cl = rdma_clnt_tp_create(host, prog, vers, nc->nc_netid,
						 tp);
		else
			cl = REAL(clnt_tp_create_timed)(host, prog, vers, nc,
							tp);
		freenetconfigent(nc);
		if (!cl && rpc_createerr.cf_stat != RPC_N2AXLATEFAILURE &&
		    rpc_createerr.cf_stat != RPC_UNKNOWNHOST)
			saved = rpc_createerr;
	}
	rpcrdma_netpath_end(&np);
	if (!cl && saved.cf_stat != RPC_SUCCESS &&
	    (rpc_createerr.cf_stat == RPC_N2AXLATEFAILURE ||
	     rpc_createerr.cf_stat == RPC_UNKNOWNHOST))
		rpc_createerr = saved;
	rpcrdma_createerr_release(!cl);
	return cl;
}

/* Ours to handle: an rdma netid as nettype, or NETPATH naming one. */
static bool nettype_ours(const char *nettype)
{
	return rpcrdma_nettype_is_rdma(nettype) ||
	       rpcrdma_netpath_has_rdma(nettype);
}

static CLIENT *create_timed(const char *host, rpcprog_t prog, rpcvers_t vers,
			    const char *nettype, const struct timeval *tp)
{
	if (rpcrdma_nettype_is_rdma(nettype))
		return rdma_clnt_tp_create(host, prog, vers, nettype, tp);
	return netpath_create(host, prog, vers, tp);
}

/* ---- clnt_create_vers: libtirpc's negotiation, over our CLIENTs ------------ */

static CLIENT *create_vers(const char *host, rpcprog_t prog,
			   rpcvers_t *vers_out, rpcvers_t low, rpcvers_t high,
			   const char *nettype, const struct timeval *tp)
{
	struct timeval to = { VERS_PROBE_S, 0 };
	struct rpc_err e = { .re_status = RPC_SUCCESS };
	enum clnt_stat st;
	CLIENT *cl;

	cl = create_timed(host, prog, high, nettype, tp);
	if (!cl)
		return NULL;
	for (;;) {
		st = clnt_call(cl, NULLPROC, RPCRDMA_XDR_VOID, NULL,
			       RPCRDMA_XDR_VOID, NULL, to);
		if (st == RPC_SUCCESS) {
			*vers_out = high;
			return cl;
		}
		clnt_geterr(cl, &e);
		if (st != RPC_PROGVERSMISMATCH || high <= low)
			break;
		high = e.re_vers.high < high ? e.re_vers.high : high - 1;
		if (e.re_vers.low > low)
			low = e.re_vers.low;
		if (low > high)
			break;
		CLNT_CONTROL(cl, CLSET_VERS, (char *)&high);
	}
	rpc_createerr.cf_stat = st;
	rpc_createerr.cf_error = e;
	clnt_destroy(cl);
	return NULL;
}

/* ---- Exported entry points ----------------------------------------------------- */

RPCRDMA_EXPORT CLIENT *clnt_tp_create_timed(const char *host,
					    const rpcprog_t prog,
					    const rpcvers_t vers,
					    const struct netconfig *nconf,
					    const struct timeval *tp)
{
	if (nconf == &rpcrdma_selfcheck_nconf) {
		rpcrdma_selfcheck_hit();
		rpcrdma_createerr(RPC_UNKNOWNPROTO, 0);
		return NULL;
	}
	if (!rpcrdma_nconf_family(nconf))
		return REAL(clnt_tp_create_timed)(host, prog, vers, nconf, tp);
	return rdma_clnt_tp_create(host, prog, vers, nconf->nc_netid, tp);
}

RPCRDMA_EXPORT CLIENT *clnt_tp_create(const char *host, const rpcprog_t prog,
				      const rpcvers_t vers,
				      const struct netconfig *nconf)
{
	if (!rpcrdma_nconf_family(nconf))
		return REAL(clnt_tp_create)(host, prog, vers, nconf);
	return rdma_clnt_tp_create(host, prog, vers, nconf->nc_netid, NULL);
}

RPCRDMA_EXPORT CLIENT *clnt_create_timed(const char *host, const rpcprog_t prog,
					 const rpcvers_t vers,
					 const char *nettype,
					 const struct timeval *tp)
{
	if (!nettype_ours(nettype))
		return REAL(clnt_create_timed)(host, prog, vers, nettype, tp);
	return create_timed(host, prog, vers, nettype, tp);
}

RPCRDMA_EXPORT CLIENT *clnt_create(const char *host, const rpcprog_t prog,
				   const rpcvers_t vers, const char *nettype)
{
	if (!nettype_ours(nettype))
		return REAL(clnt_create)(host, prog, vers, nettype);
	return create_timed(host, prog, vers, nettype, NULL);
}

RPCRDMA_EXPORT CLIENT *
clnt_create_vers_timed(const char *host, const rpcprog_t prog,
		       rpcvers_t *vers_out, const rpcvers_t low,
		       const rpcvers_t high, const char *nettype,
		       const struct timeval *tp)
{
	if (!nettype_ours(nettype))
		return REAL(clnt_create_vers_timed)(host, prog, vers_out, low,
						    high, nettype, tp);
	return create_vers(host, prog, vers_out, low, high, nettype, tp);
}

RPCRDMA_EXPORT CLIENT *
clnt_create_vers(const char *host, const rpcprog_t prog, rpcvers_t *vers_out,
		 const rpcvers_t low, const rpcvers_t high, const char *nettype)
{
	if (!nettype_ours(nettype))
		return REAL(clnt_create_vers)(host, prog, vers_out, low, high,
					      nettype);
	return create_vers(host, prog, vers_out, low, high, nettype, NULL);
}

/*
 * An RDMA connection is not a file descriptor: the caller's fd cannot be
 * used, and must not be touched.
 */
RPCRDMA_EXPORT CLIENT *
clnt_tli_create(const int fd, const struct netconfig *nconf,
		struct netbuf *svcaddr, const rpcprog_t prog,
		const rpcvers_t vers, const u_int sendsz, const u_int recvsz)
{
	int family = rpcrdma_nconf_family(nconf);
	const struct sockaddr *sa;

	if (!family)
		return REAL(clnt_tli_create)(fd, nconf, svcaddr, prog, vers,
					     sendsz, recvsz);
	if (fd != RPC_ANYFD)
		return rpcrdma_createerr_why(
			RPC_SYSTEMERROR, EOPNOTSUPP, "clnt_tli_create",
			"netid %s cannot use file descriptor %d (an RDMA "
			"connection is not one): pass RPC_ANYFD",
			nconf->nc_netid, fd);
	/* libtirpc has no text for RPC_UNKNOWNADDR: say it with errno. */
	sa = svcaddr ? svcaddr->buf : NULL;
	if (!sa || svcaddr->len < sizeof(sa_family_t))
		return rpcrdma_createerr_why(
			RPC_SYSTEMERROR, EDESTADDRREQ, "clnt_tli_create",
			"netid %s needs the server's address", nconf->nc_netid);
	if (sa->sa_family != family ||
	    svcaddr->len < (family == AF_INET ? sizeof(struct sockaddr_in) :
						sizeof(struct sockaddr_in6)))
		return rpcrdma_createerr_why(
			RPC_SYSTEMERROR, EAFNOSUPPORT, "clnt_tli_create",
			"netid %s needs an %s server address", nconf->nc_netid,
			family == AF_INET ? "IPv4" : "IPv6");
	return clnt_rdma_create(sa, prog, vers, NULL);
}

/* ---- rpc_call(): one cached CLIENT per thread, as libtirpc -------------------- */

struct call_cache {
	CLIENT *cl;
	pid_t pid;
	rpcprog_t prog;
	rpcvers_t vers;
	char host[MAXHOSTNAMELEN];
	char nettype[32];
};

static pthread_key_t call_key;
static pthread_once_t call_once = PTHREAD_ONCE_INIT;

static void call_cache_free(void *p)
{
	struct call_cache *c = p;

	if (c->cl && c->pid == getpid())
		clnt_destroy(c->cl);
	free(c);
}

static void call_key_init(void)
{
	pthread_key_create(&call_key, call_cache_free);
}

static struct call_cache *call_cache(void)
{
	struct call_cache *c;

	pthread_once(&call_once, call_key_init);
	c = pthread_getspecific(call_key);
	if (!c && (c = calloc(1, sizeof(*c))) &&
	    pthread_setspecific(call_key, c)) {
		free(c);
		c = NULL;
	}
	return c;
}

static bool cache_hit(const struct call_cache *c, const char *host,
		      rpcprog_t prog, rpcvers_t vers, const char *nettype)
{
	return c->cl && c->pid == getpid() && c->prog == prog &&
	       c->vers == vers && !strcmp(c->host, host) &&
	       !strcmp(c->nettype, nettype);
}

static CLIENT *cached_client(const char *host, rpcprog_t prog, rpcvers_t vers,
			     const char *nettype)
{
	struct call_cache *c = call_cache();

	if (!c) {
		rpcrdma_createerr(RPC_SYSTEMERROR, ENOMEM);
		return NULL;
	}
	if (cache_hit(c, host, prog, vers, nettype))
		return c->cl;
	if (c->cl && c->pid == getpid())
		clnt_destroy(c->cl);
	c->cl = create_timed(host, prog, vers, nettype, NULL);
	if (!c->cl)
		return NULL;
	c->pid = getpid();
	c->prog = prog;
	c->vers = vers;
	snprintf(c->host, sizeof(c->host), "%s", host);
	snprintf(c->nettype, sizeof(c->nettype), "%s", nettype);
	if (strcmp(c->host, host) || strcmp(c->nettype, nettype))
		c->host[0] = '\0'; /* too long to compare: never a hit */
	return c->cl;
}

static void cache_drop(void)
{
	struct call_cache *c = call_cache();

	if (c && c->cl) {
		if (c->pid == getpid())
			clnt_destroy(c->cl);
		c->cl = NULL;
	}
}

RPCRDMA_EXPORT enum clnt_stat
rpc_call(const char *host, const rpcprog_t prog, const rpcvers_t vers,
	 const rpcproc_t proc, const xdrproc_t inproc, const char *in,
	 const xdrproc_t outproc, char *out, const char *nettype)
{
	struct timeval to = { RPC_CALL_S, 0 };
	enum clnt_stat st;
	CLIENT *cl;

	if (!nettype_ours(nettype) || !host)
		return REAL(rpc_call)(host, prog, vers, proc, inproc, in,
				      outproc, out, nettype);
	if (!nettype || !*nettype)
		nettype = "netpath";
	cl = cached_client(host, prog, vers, nettype);
	if (!cl)
		return rpc_createerr.cf_stat;
	st = clnt_call(cl, proc, inproc, (char *)in, outproc, out, to);
	if (st != RPC_SUCCESS)
		cache_drop();
	return st;
}
