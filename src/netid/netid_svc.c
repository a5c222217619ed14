/*
 * netid_svc.c - the server entry points of libtirpc for netids "rdma" and
 * "rdma6": svc_create(), svc_tp_create(), svc_tli_create(), svc_reg(),
 * svc_unreg(), rpcb_set() and rpcb_unset().
 *
 * An rdma netconfig gets a listening SVCXPRT from svc_rdma_create() - on
 * the bind address given, else the wildcard address and the port of
 * RPCRDMA_PORT (or NFS's 20049), else any port - and is registered with
 * libtirpc's svc_reg() without a netconfig (the dispatch table only), then
 * with the local rpcbind by rpcb_reg.c unless RPCRDMA_RPCBIND=0.  A failed
 * rpcbind registration is reported, not fatal: clients can still be given
 * the port.  Registrations made here are removed by svc_unreg() and at
 * normal exit.  Every other netid goes to libtirpc unchanged, and an rdma
 * netconfig never does (libtirpc would close fd 0 on it).
 *
 * svc_create() keeps one SVCXPRT per netid and reuses it for further
 * versions, as libtirpc's does, in a list of its own: for nettypes "rdma"
 * and "rdma6", and for "netpath" when NETPATH names an rdma netid (then
 * its other netids are created here through libtirpc's svc_tp_create()).
 * rpc_reg() (netid_simple.c) makes and registers its transports through
 * rpcrdma_svc_listener() and rpcrdma_svc_register(), the same routes.
 */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "compiler.h"
#include "netid/rpcrdma_netid.h"

typedef void (*dispatch_fn)(struct svc_req *, SVCXPRT *);

/* ---- Listeners ---------------------------------------------------------------- */

static socklen_t family_len(int family)
{
	return family == AF_INET ? sizeof(struct sockaddr_in) :
				   sizeof(struct sockaddr_in6);
}

static SVCXPRT *rdma_listen(const char *netid, const struct netbuf *bind,
			    unsigned int port)
{
	int family = rpcrdma_netid_family(netid);
	const struct sockaddr *sa = bind ? bind->buf : NULL;
	struct sockaddr_storage ss;

	memset(&ss, 0, sizeof(ss));
	if (bind && bind->len) {
		if (!sa || bind->len < family_len(family) ||
		    sa->sa_family != family)
			return rpcrdma_createerr_why(
				RPC_SYSTEMERROR, EAFNOSUPPORT, "svc_tli_create",
				"netid %s needs an %s bind address", netid,
				family == AF_INET ? "IPv4" : "IPv6");
		memcpy(&ss, sa, family_len(family));
	} else {
		ss.ss_family = family;
		if (family == AF_INET)
			((struct sockaddr_in *)&ss)->sin_port = htons(port);
		else
			((struct sockaddr_in6 *)&ss)->sin6_port = htons(port);
	}
	return svc_rdma_create((struct sockaddr *)&ss, NULL);
}

/* ---- Registration --------------------------------------------------------------- */

static void rpcbind_register(SVCXPRT *x, rpcprog_t prog, rpcvers_t vers,
			     const char *netid)
{
	char *ua =
		rpcrdma_taddr2uaddr(rpcrdma_netid_family(netid), &x->xp_ltaddr);
	const char *why = "no universal address for the listener";

	if (ua && rpcrdma_rpcb_set(prog, vers, netid, ua, &why)) {
		rpcrdma_reg_remember(prog, vers, netid);
	} else {
		rl_warn("svc_reg: program %lu version %lu on %s (%s) not "
			"registered with rpcbind: %s; clients need its port "
			"(RPCRDMA_PORT=%lu=%u)",
			(unsigned long)prog, (unsigned long)vers, netid,
			ua ? ua : "?", why, (unsigned long)prog, x->xp_port);
	}
	free(ua);
}

static void rpcbind_unregister(rpcprog_t prog, rpcvers_t vers,
			       const char *netid)
{
	rpcrdma_rpcb_unset(prog, vers, netid, NULL);
	rpcrdma_reg_forget(prog, vers, netid);
}

/* svc_reg() for an rdma netconfig. */
static bool_t rdma_reg(SVCXPRT *x, rpcprog_t prog, rpcvers_t vers,
		       dispatch_fn dispatch, const struct netconfig *nconf)
{
	if (!x || !x->xp_netid || strcmp(x->xp_netid, nconf->nc_netid)) {
		rl_err("svc_reg: netid %s needs an RDMA SVCXPRT of that "
		       "netid (this one is %s)",
		       nconf->nc_netid,
		       x && x->xp_netid ? x->xp_netid : "unknown");
		return FALSE;
	}
	if (!REAL(svc_reg)(x, prog, vers, dispatch, NULL))
		return FALSE;
	if (rpcrdma_env_rpcbind())
		rpcbind_register(x, prog, vers, nconf->nc_netid);
	return TRUE;
}

/* svc_reg() refused prog/vers (e.g. registered with another dispatch
 * function): rpc_createerr RPC_FAILED, with words. */
static void *reg_failed(const char *who, rpcprog_t prog, rpcvers_t vers,
			const struct netconfig *nconf)
{
	return rpcrdma_createerr_why(
		RPC_FAILED, 0, who,
		"could not register program %lu version %lu on %s (svc_reg "
		"failed: registered already with another dispatch function?)",
		(unsigned long)prog, (unsigned long)vers, nconf->nc_netid);
}

/* svc_tp_create() for an rdma netconfig, as libtirpc's for the others. */
static SVCXPRT *rdma_svc_tp_create(dispatch_fn dispatch, rpcprog_t prog,
				   rpcvers_t vers,
				   const struct netconfig *nconf)
{
	SVCXPRT *x = rdma_listen(nconf->nc_netid, NULL, rpcrdma_env_port(prog));

	if (!x)
		return NULL;
	if (rpcrdma_env_rpcbind())
		rpcbind_unregister(prog, vers, nconf->nc_netid);
	if (!rdma_reg(x, prog, vers, dispatch, nconf)) {
		SVC_DESTROY(x);
		return reg_failed("svc_tp_create", prog, vers, nconf);
	}
	return x;
}

/* ---- For rpc_reg() (netid_simple.c) ------------------------------------------------ */

SVCXPRT *rpcrdma_svc_listener(const struct netconfig *nc, rpcprog_t prog)
{
	if (!rpcrdma_nconf_family(nc))
		return REAL(svc_tli_create)(RPC_ANYFD, nc, NULL, 0, 0);
	return rdma_listen(nc->nc_netid, NULL, rpcrdma_env_port(prog));
}

bool rpcrdma_svc_register(SVCXPRT *x, rpcprog_t prog, rpcvers_t vers,
			  dispatch_fn dispatch, const struct netconfig *nc)
{
	if (!nc)
		return REAL(svc_reg)(x, prog, vers, dispatch, NULL);
	if (rpcrdma_nconf_family(nc)) {
		if (rpcrdma_env_rpcbind())
			rpcbind_unregister(prog, vers, nc->nc_netid);
		return rdma_reg(x, prog, vers, dispatch, nc);
	}
	REAL(rpcb_unset)(prog, vers, nc);
	return REAL(svc_reg)(x, prog, vers, dispatch, nc);
}

/* ---- svc_create() ------------------------------------------------------------------ */

struct xlist {
	SVCXPRT *x;
	struct xlist *next;
};

static pthread_mutex_t xlist_lock = PTHREAD_MUTEX_INITIALIZER;
static struct xlist *xlist;

static struct xlist *xlist_find(const char *netid)
{
	struct xlist *l;

	for (l = xlist; l; l = l->next)
		if (l->x->xp_netid && !strcmp(l->x->xp_netid, netid))
			return l;
	return NULL;
}

/* Another version on the transport svc_create() made for nc before. */
static bool reuse(struct xlist *l, dispatch_fn dispatch, rpcprog_t prog,
		  rpcvers_t vers, const struct netconfig *nc)
{
	bool ok = rpcrdma_svc_register(l->x, prog, vers, dispatch, nc);

	if (!ok)
		reg_failed("svc_create", prog, vers, nc);
	return ok;
}

static int create_on(dispatch_fn dispatch, rpcprog_t prog, rpcvers_t vers,
		     const struct netconfig *nc)
{
	struct xlist *l;
	SVCXPRT *x;
	int n = 0;

	pthread_mutex_lock(&xlist_lock);
	l = xlist_find(nc->nc_netid);
	if (l) {
		n = reuse(l, dispatch, prog, vers, nc);
		goto out;
	}
	if (rpcrdma_nconf_family(nc))
		x = rdma_svc_tp_create(dispatch, prog, vers, nc);
	else
		x = REAL(svc_tp_create)(dispatch, prog, vers, nc);
	if (!x)
		goto out;
	l = malloc(sizeof(*l));
	if (l) {
		l->x = x;
		l->next = xlist;
		xlist = l;
	}
	n = 1;
out:
	pthread_mutex_unlock(&xlist_lock);
	return n;
}

static int create_netpath(dispatch_fn dispatch, rpcprog_t prog, rpcvers_t vers)
{
	struct rpcrdma_netpath np;
	struct netconfig *nc;
	int n = 0;

	if (!rpcrdma_netpath_begin(&np)) {
		rpcrdma_createerr_why(RPC_SYSTEMERROR, ENOMEM, "svc_create",
				      "out of memory");
		return 0;
	}
	while ((nc = rpcrdma_netpath_next(&np))) {
		n += create_on(dispatch, prog, vers, nc);
		freenetconfigent(nc);
	}
	rpcrdma_netpath_end(&np);
	return n;
}

/* ---- Exported entry points ------------------------------------------------------- */

RPCRDMA_EXPORT int svc_create(dispatch_fn dispatch, const rpcprog_t prog,
			      const rpcvers_t vers, const char *nettype)
{
	struct netconfig *nc;
	int n;

	if (rpcrdma_nettype_is_rdma(nettype)) {
		nc = rpcrdma_nconf_make(nettype);
		if (!nc) {
			rpcrdma_createerr_why(RPC_SYSTEMERROR, ENOMEM,
					      "svc_create", "out of memory");
			return 0;
		}
		n = create_on(dispatch, prog, vers, nc);
		freenetconfigent(nc);
		return n;
	}
	if (rpcrdma_netpath_has_rdma(nettype))
		return create_netpath(dispatch, prog, vers);
	return REAL(svc_create)(dispatch, prog, vers, nettype);
}

RPCRDMA_EXPORT SVCXPRT *svc_tp_create(dispatch_fn dispatch,
				      const rpcprog_t prog,
				      const rpcvers_t vers,
				      const struct netconfig *nconf)
{
	if (!rpcrdma_nconf_family(nconf))
		return REAL(svc_tp_create)(dispatch, prog, vers, nconf);
	return rdma_svc_tp_create(dispatch, prog, vers, nconf);
}

/* An RDMA listener is not a file descriptor: fd must be RPC_ANYFD. */
RPCRDMA_EXPORT SVCXPRT *svc_tli_create(const int fd,
				       const struct netconfig *nconf,
				       const struct t_bind *bindaddr,
				       const u_int sendsz, const u_int recvsz)
{
	if (!rpcrdma_nconf_family(nconf))
		return REAL(svc_tli_create)(fd, nconf, bindaddr, sendsz,
					    recvsz);
	if (fd != RPC_ANYFD)
		return rpcrdma_createerr_why(
			RPC_SYSTEMERROR, EOPNOTSUPP, "svc_tli_create",
			"netid %s cannot use file descriptor %d (an RDMA "
			"listener is not one): pass RPC_ANYFD",
			nconf->nc_netid, fd);
	return rdma_listen(nconf->nc_netid, bindaddr ? &bindaddr->addr : NULL,
			   rpcrdma_env_port_any());
}

RPCRDMA_EXPORT bool_t svc_reg(SVCXPRT *x, const rpcprog_t prog,
			      const rpcvers_t vers, dispatch_fn dispatch,
			      const struct netconfig *nconf)
{
	if (!rpcrdma_nconf_family(nconf))
		return REAL(svc_reg)(x, prog, vers, dispatch, nconf);
	return rdma_reg(x, prog, vers, dispatch, nconf);
}

/* libtirpc's removes every netid of prog/vers from rpcbind, rdma included. */
RPCRDMA_EXPORT void svc_unreg(const rpcprog_t prog, const rpcvers_t vers)
{
	REAL(svc_unreg)(prog, vers);
	rpcrdma_reg_forget(prog, vers, NULL);
}

/*
 * Explicit calls: done as asked (and not undone at exit), except that
 * RPCRDMA_RPCBIND=0 keeps rdma netids away from rpcbind altogether.
 */
RPCRDMA_EXPORT bool_t rpcb_set(const rpcprog_t prog, const rpcvers_t vers,
			       const struct netconfig *nconf,
			       const struct netbuf *addr)
{
	int family = rpcrdma_nconf_family(nconf);
	char *ua;
	bool ok;

	if (!family)
		return REAL(rpcb_set)(prog, vers, nconf, addr);
	if (!rpcrdma_env_rpcbind())
		return TRUE;
	ua = rpcrdma_taddr2uaddr(family, addr);
	if (!ua) {
		rpcrdma_createerr(RPC_N2AXLATEFAILURE, 0);
		return FALSE;
	}
	ok = rpcrdma_rpcb_set(prog, vers, nconf->nc_netid, ua, NULL);
	free(ua);
	if (!ok) {
		rpcrdma_createerr(RPC_PMAPFAILURE, 0);
		rpc_createerr.cf_error.re_status = RPC_FAILED;
	}
	return ok;
}

RPCRDMA_EXPORT bool_t rpcb_unset(const rpcprog_t prog, const rpcvers_t vers,
				 const struct netconfig *nconf)
{
	bool_t ok;

	if (!rpcrdma_nconf_family(nconf)) {
		ok = REAL(rpcb_unset)(prog, vers, nconf);
		if (!nconf)
			rpcrdma_reg_forget(prog, vers, NULL);
		return ok;
	}
	rpcrdma_reg_forget(prog, vers, nconf->nc_netid);
	if (!rpcrdma_env_rpcbind())
		return TRUE;
	return rpcrdma_rpcb_unset(prog, vers, nconf->nc_netid, NULL);
}
