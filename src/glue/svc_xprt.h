/*
 * svc_xprt.h - what every SVCXPRT of the library shares: building one as
 * libtirpc's consumers expect it, the call's auth flavour, and the reply
 * as svc_vc_reply encodes it.  The forward SVCXPRTs (svc_rdma.rep) and the
 * one that serves backward calls on a CLIENT's connection (svc_rdma_bc.rep)
 * use the same code.
 */
#ifndef RPCRDMA_GLUE_SVC_XPRT_H
#define RPCRDMA_GLUE_SVC_XPRT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include <rpc/rpc.h>
#include <rpc/svc_auth.h>

socklen_t svc_xprt_sa_len(const struct sockaddr *sa);
uint16_t svc_xprt_sa_port(const struct sockaddr *sa);

/*
 * An SVCXPRT as libtirpc's consumers expect it (doc/libtirpc-contract.md,
 * "Inside a dispatch function"): a zeroed SVCXPRT_EXT in xp_p3
 * (_gss_authenticate writes into it), a malloc'd netid, local and remote
 * netbufs plus the legacy xp_raddr (raddr may be NULL), the local port,
 * connection-oriented semantics.  Not registered.
 */
SVCXPRT *svc_xprt_new(int fd, const struct xp_ops *ops,
		      const struct xp_ops2 *ops2, void *p1, const char *netid,
		      const struct sockaddr *laddr,
		      const struct sockaddr *raddr);
void svc_xprt_free(SVCXPRT *xprt);

/* The call's auth flavour, which wraps arguments and results as in svc_vc
 * (_gss_authenticate installs it for every call); NULL if it was
 * bypassed. */
SVCAUTH *svc_xprt_auth(SVCXPRT *xprt);

/*
 * libtirpc keeps RPCSEC_GSS contexts in a cache it searches by the
 * SVCXPRT's address.  Destroy the one of xprt's address, if any: before a
 * connection's first RPCSEC_GSS call reaches libtirpc (one left by an
 * SVCXPRT freed before - libtirpc 1.3.3's own svc_vc leaves them - would
 * be taken for this connection's, and its client's RPCSEC_GSS_INIT
 * refused), and before a connection's SVCXPRT that had one is freed.
 * Never through a pointer kept on the SVCXPRT, which libtirpc may have
 * freed meanwhile (it drops contexts idle for 5 minutes).  Leaves xp_verf
 * to be reset by the caller.
 */
void svc_xprt_gss_purge(SVCXPRT *xprt);

/* A reply as svc_vc_reply encodes it: the RPC header with xdr_void in
 * place of the results, which go through SVCAUTH_WRAP after it. */
struct svc_xprt_reply {
	SVCXPRT *xprt;
	struct rpc_msg *msg;
	bool has_results;
	xdrproc_t proc;
	caddr_t where;
};

/* Take msg's results out of its header into rep (accepted, SUCCESS). */
void svc_xprt_reply_init(struct svc_xprt_reply *rep, SVCXPRT *xprt,
			 struct rpc_msg *msg);
/* An rr_encode_fn / rr_sreq_enc encoder over rep, and its size estimate. */
bool_t svc_xprt_reply_encode(XDR *xdrs, void *arg);
size_t svc_xprt_reply_size(void *arg);

#endif /* RPCRDMA_GLUE_SVC_XPRT_H */
