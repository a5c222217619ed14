/*
 * rpcrdma_netid.h - internal interface of the netid layer (src/netid): how
 * librpcrdma makes netids "rdma" and "rdma6" work through libtirpc's own
 * entry points (clnt_create(), svc_tp_create(), getnetconfigent(), ...).
 * It stands on the public constructors (include/rpc/rpcrdma.h) and the
 * glue's rpcrdma_err.h alone, never on CLIENT or SVCXPRT internals.
 *
 * The layer is split by job:
 *   interpose.c  libtirpc's real functions (dlvsym) and the start-up check
 *   netconfig.c  netid tests, synthesized netconfig entries, universal
 *                addresses, NETPATH walking
 *   netid_env.c  RPCRDMA_PORT and RPCRDMA_RPCBIND
 *   netid_clnt.c the client entry points
 *   netid_svc.c  the server entry points
 *   netid_simple.c rpc_reg(), the simplified interface, and its dispatcher
 *   netid_err.c  the clnt_spcreateerror() and clnt_pcreateerror() that
 *                show the words of glue/rpcrdma_err.h
 *   rpcb_rdma.c  rpcbind: finding a remote rdma service
 *   rpcb_reg.c   rpcbind: registering local rdma services
 *
 * The one rule: an rdma netconfig never reaches libtirpc's code, which
 * knows nothing of it and, given one, closes fd 0 (its __rpc_nconf2fd
 * reports failure as fd 0).  Every other netid is forwarded unchanged.
 */
#ifndef RPCRDMA_GLUE_NETID_H
#define RPCRDMA_GLUE_NETID_H

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <netconfig.h>
#include <rpc/rpc.h>

#include "glue/rpcrdma_err.h"
#include "log/rl_log.h"

/* ---- libtirpc's own functions (interpose.c) ------------------------------ */

struct rpcrdma_real {
	CLIENT *(*clnt_create)(const char *, const rpcprog_t, const rpcvers_t,
			       const char *);
	CLIENT *(*clnt_create_timed)(const char *, const rpcprog_t,
				     const rpcvers_t, const char *,
				     const struct timeval *);
	CLIENT *(*clnt_create_vers)(const char *, const rpcprog_t, rpcvers_t *,
				    const rpcvers_t, const rpcvers_t,
				    const char *);
	CLIENT *(*clnt_create_vers_timed)(const char *, const rpcprog_t,
					  rpcvers_t *, const rpcvers_t,
					  const rpcvers_t, const char *,
					  const struct timeval *);
	CLIENT *(*clnt_tp_create)(const char *, const rpcprog_t,
				  const rpcvers_t, const struct netconfig *);
	CLIENT *(*clnt_tp_create_timed)(const char *, const rpcprog_t,
					const rpcvers_t,
					const struct netconfig *,
					const struct timeval *);
	CLIENT *(*clnt_tli_create)(const int, const struct netconfig *,
				   struct netbuf *, const rpcprog_t,
				   const rpcvers_t, const u_int, const u_int);
	enum clnt_stat (*rpc_call)(const char *, const rpcprog_t,
				   const rpcvers_t, const rpcproc_t,
				   const xdrproc_t, const char *,
				   const xdrproc_t, char *, const char *);
	int (*svc_create)(void (*)(struct svc_req *, SVCXPRT *),
			  const rpcprog_t, const rpcvers_t, const char *);
	SVCXPRT *(*svc_tp_create)(void (*)(struct svc_req *, SVCXPRT *),
				  const rpcprog_t, const rpcvers_t,
				  const struct netconfig *);
	SVCXPRT *(*svc_tli_create)(const int, const struct netconfig *,
				   const struct t_bind *, const u_int,
				   const u_int);
	bool_t (*svc_reg)(SVCXPRT *, const rpcprog_t, const rpcvers_t,
			  void (*)(struct svc_req *, SVCXPRT *),
			  const struct netconfig *);
	void (*svc_unreg)(const rpcprog_t, const rpcvers_t);
	int (*rpc_reg)(rpcprog_t, rpcvers_t, rpcproc_t, char *(*)(char *),
		       xdrproc_t, xdrproc_t, char *);
	bool_t (*rpcb_set)(const rpcprog_t, const rpcvers_t,
			   const struct netconfig *, const struct netbuf *);
	bool_t (*rpcb_unset)(const rpcprog_t, const rpcvers_t,
			     const struct netconfig *);
	bool_t (*rpcb_getaddr)(const rpcprog_t, const rpcvers_t,
			       const struct netconfig *, struct netbuf *,
			       const char *);
	struct netconfig *(*getnetconfigent)(const char *);
	char *(*taddr2uaddr)(const struct netconfig *, const struct netbuf *);
	struct netbuf *(*uaddr2taddr)(const struct netconfig *, const char *);
	char *(*clnt_spcreateerror)(const char *);
	void (*clnt_pcreateerror)(const char *);
};

/* libtirpc's functions, resolved once; aborts with a message if libtirpc
 * lacks one of them (a call through NULL would only crash later). */
const struct rpcrdma_real *rpcrdma_real(void);
#define REAL(fn) (rpcrdma_real()->fn)

/*
 * The start-up check asks libtirpc's clnt_tp_create() for a client on this
 * private netconfig: if libtirpc's internal call reaches our
 * clnt_tp_create_timed(), it calls rpcrdma_selfcheck_hit() instead of
 * doing anything.
 */
extern const struct netconfig rpcrdma_selfcheck_nconf;
void rpcrdma_selfcheck_hit(void);

/* ---- Netids, netconfig entries, addresses (netconfig.c) ------------------ */

/* AF_INET for "rdma", AF_INET6 for "rdma6", 0 for anything else. */
int rpcrdma_netid_family(const char *netid);
/* The same for a netconfig (NULL allowed). */
int rpcrdma_nconf_family(const struct netconfig *nconf);
/* "rdma" or "rdma6" for a family, NULL for others. */
const char *rpcrdma_family_netid(int family);

/* A netconfig entry for "rdma"/"rdma6" that freenetconfigent() frees. */
struct netconfig *rpcrdma_nconf_make(const char *netid);

/* Universal address (RFC 5665: the tcp/tcp6 formats) <-> sockaddr. */
char *rpcrdma_taddr2uaddr(int family, const struct netbuf *nb);
struct netbuf *rpcrdma_uaddr2taddr(int family, const char *uaddr);
void rpcrdma_netbuf_free(struct netbuf *nb);

/*
 * NETPATH: librpcrdma walks it itself (instead of libtirpc) only when the
 * nettype selects it - NULL, "" or "netpath" in any case - and NETPATH
 * names rdma or rdma6.  rpcrdma_netpath_next() returns the next usable
 * entry (getnetconfigent(): release it with freenetconfigent()), skipping
 * unknown netids and semantics RPC cannot use, as libtirpc does.
 */
bool rpcrdma_nettype_is_rdma(const char *nettype);
bool rpcrdma_netpath_has_rdma(const char *nettype);

struct rpcrdma_netpath {
	char *list;
	char *next;
};
bool rpcrdma_netpath_begin(struct rpcrdma_netpath *np);
struct netconfig *rpcrdma_netpath_next(struct rpcrdma_netpath *np);
void rpcrdma_netpath_end(struct rpcrdma_netpath *np);

/* ---- Environment (netid_env.c) ------------------------------------------- */

/* Port of an rdma service of prog: RPCRDMA_PORT, else 20049 for NFS
 * (program 100003), else 0 (client: ask rpcbind; server: any port). */
unsigned int rpcrdma_env_port(rpcprog_t prog);
/* The RPCRDMA_PORT entry that applies to every program, or 0. */
unsigned int rpcrdma_env_port_any(void);
/* Whether servers register with rpcbind (RPCRDMA_RPCBIND, default yes). */
bool rpcrdma_env_rpcbind(void);

/* ---- rpcbind (rpcb_rdma.c, rpcb_reg.c) ----------------------------------- */

/*
 * Where is prog/vers on netid at the host whose address is host (port
 * ignored)?  Asks that host's rpcbind (DUMP, filtered by netid: exact
 * version preferred, any version accepted) within tp (NULL: default) and
 * fills *out.  0, or -1 with rpc_createerr set.
 */
int rpcrdma_rpcb_lookup(const struct sockaddr *host, rpcprog_t prog,
			rpcvers_t vers, const char *netid,
			const struct timeval *tp, struct sockaddr_storage *out);

/* Addresses of host in family, or NULL with RPC_UNKNOWNHOST. */
struct addrinfo *rpcrdma_resolve(const char *host, int family);

/* A CLIENT of the rpcbind at sa (its port included; AF_LOCAL allowed),
 * connected within timeout_ms, or NULL with *err an errno value. */
CLIENT *rpcrdma_rpcb_client(const struct sockaddr *sa, int timeout_ms,
			    int *err);
/* clnt_call() to rpcbind version 4, else version 3. */
enum clnt_stat rpcrdma_rpcb_call(CLIENT *cl, rpcproc_t proc, xdrproc_t xargs,
				 void *args, xdrproc_t xres, void *res,
				 struct timeval tv);

/* RPCBPROC_SET / UNSET at the local rpcbind; true on success.  On failure
 * why (if not NULL) says why, in words. */
bool rpcrdma_rpcb_set(rpcprog_t prog, rpcvers_t vers, const char *netid,
		      const char *uaddr, const char **why);
bool rpcrdma_rpcb_unset(rpcprog_t prog, rpcvers_t vers, const char *netid,
			const char **why);

/* Remember / forget a registration made for a server, so that it is
 * removed at exit (atexit).  netid NULL: every netid of prog/vers. */
void rpcrdma_reg_remember(rpcprog_t prog, rpcvers_t vers, const char *netid);
void rpcrdma_reg_forget(rpcprog_t prog, rpcvers_t vers, const char *netid);

/* ---- Server transports (netid_svc.c), for rpc_reg() ---------------------- */

/*
 * A listener for nc as svc_tp_create() makes it, registered nowhere: for
 * an rdma netid svc_rdma_create() on the wildcard address and the port
 * RPCRDMA_PORT (or the NFS convention) gives prog; for the others
 * libtirpc's svc_tli_create(RPC_ANYFD, nc, NULL, 0, 0).  NULL on failure,
 * which the constructor has reported.
 */
SVCXPRT *rpcrdma_svc_listener(const struct netconfig *nc, rpcprog_t prog);

/*
 * prog/vers with dispatch on x.  nc NULL: the dispatch table only
 * (libtirpc's svc_reg() without a netconfig).  Otherwise as
 * svc_tp_create() registers: the old rpcbind entry of prog/vers on nc's
 * netid removed, then svc_reg() with nc - for an rdma netid ours (rpcbind
 * unless RPCRDMA_RPCBIND=0, removed at exit), for the others libtirpc's.
 */
bool rpcrdma_svc_register(SVCXPRT *x, rpcprog_t prog, rpcvers_t vers,
			  void (*dispatch)(struct svc_req *, SVCXPRT *),
			  const struct netconfig *nc);

/* ---- Shared by the client and server entry points ------------------------ */

/* xdr_void as an xdrproc_t (its prototype has no arguments). */
#define RPCRDMA_XDR_VOID ((xdrproc_t)(void (*)(void))xdr_void)

/* A timeout in ms (at least 1), or dflt if tp is NULL. */
int rpcrdma_tv_ms(const struct timeval *tp, int dflt);

/* rpcrdma_createerr(), rpcrdma_createerr_why() and rpcrdma_unreachable():
 * glue/rpcrdma_err.h; messages: log/rl_log.h. */

#endif /* RPCRDMA_GLUE_NETID_H */
