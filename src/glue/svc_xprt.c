/*
 * svc_xprt.rep - the parts every SVCXPRT of the library shares (svc_xprt.h).
 */
#include "config.h"

#include <netconfig.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/rpc.h>
#include <rpc/svc_mt.h>

#include "glue/svc_xprt.h"
#include "rpc/rr_policy.h"

/* SVCXPRT_EXT is libtirpc's private layout: allocate more than it needs. */
#define EXT_SIZE (sizeof(SVCXPRT_EXT) < 256 ? 256 : sizeof(SVCXPRT_EXT))

socklen_t svc_xprt_sa_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
					   sizeof(struct sockaddr_in);
}

uint16_t svc_xprt_sa_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	return ntohs(((const struct sockaddr_in *)sa)->sin_port);
}

static bool set_netbuf(struct netbuf *nb, const struct sockaddr *sa)
{
	socklen_t len = svc_xprt_sa_len(sa);

	nb->buf = malloc(len);
	if (!nb->buf)
		return false;
	memcpy(nb->buf, sa, len);
	nb->len = nb->maxlen = len;
	return true;
}

SVCXPRT *svc_xprt_new(int fd, const struct xp_ops *ops,
		      const struct xp_ops2 *ops2, void *p1, const char *netid,
		      const struct sockaddr *laddr,
		      const struct sockaddr *raddr)
{
	SVCXPRT *xprt = calloc(1, sizeof(*xprt));

	if (!xprt)
		return NULL;
	xprt->xp_fd = fd;
	xprt->xp_ops = ops;
	xprt->xp_ops2 = ops2;
	xprt->xp_p1 = p1;
	xprt->xp_p3 = calloc(1, EXT_SIZE);
	xprt->xp_netid = strdup(netid);
	xprt->xp_type = NC_TPI_COTS_ORD;
	xprt->xp_port = svc_xprt_sa_port(laddr);
	if (!xprt->xp_p3 || !xprt->xp_netid ||
	    !set_netbuf(&xprt->xp_ltaddr, laddr))
		goto fail;
	if (raddr) {
		if (!set_netbuf(&xprt->xp_rtaddr, raddr))
			goto fail;
		memcpy(&xprt->xp_raddr, raddr, svc_xprt_sa_len(raddr));
		xprt->xp_addrlen = (int)svc_xprt_sa_len(raddr);
	}
	return xprt;
fail:
	free(xprt->xp_ltaddr.buf);
	free(xprt->xp_netid);
	free(xprt->xp_p3);
	free(xprt);
	return NULL;
}

void svc_xprt_free(SVCXPRT *xprt)
{
	free(xprt->xp_rtaddr.buf);
	free(xprt->xp_ltaddr.buf);
	free(xprt->xp_netid);
	free(xprt->xp_p3);
	free(xprt);
}

SVCAUTH *svc_xprt_auth(SVCXPRT *xprt)
{
	SVCAUTH *a = &SVC_XP_AUTH(xprt);

	return a->svc_ah_ops ? a : NULL;
}

/*
 * _svcauth_gss (exported by libtirpc, declared in <rpc/auth.h>) looks up
 * the context of rq_xprt's address, or makes an empty one, and installs
 * it on the SVCXPRT before it reads the credential; with none it stops
 * there (AUTH_BADCRED).  Destroying what it installed removes the entry.
 */
void svc_xprt_gss_purge(SVCXPRT *xprt)
{
	bool_t no_dispatch = FALSE;
	struct rpc_msg msg;
	struct svc_req rq;

	memset(&rq, 0, sizeof(rq));
	memset(&msg, 0, sizeof(msg));
	rq.rq_xprt = xprt;
	SVC_XP_AUTH(xprt).svc_ah_ops = NULL;
	SVC_XP_AUTH(xprt).svc_ah_private = NULL;
	(void)_svcauth_gss(&rq, &msg, &no_dispatch);
	if (SVC_XP_AUTH(xprt).svc_ah_ops && SVC_XP_AUTH(xprt).svc_ah_private)
		SVCAUTH_DESTROY(&SVC_XP_AUTH(xprt));
	SVC_XP_AUTH(xprt).svc_ah_ops = NULL;
	SVC_XP_AUTH(xprt).svc_ah_private = NULL;
}

void svc_xprt_reply_init(struct svc_xprt_reply *rep, SVCXPRT *xprt,
			 struct rpc_msg *msg)
{
	memset(rep, 0, sizeof(*rep));
	rep->xprt = xprt;
	rep->msg = msg;
	if (msg->rm_reply.rp_stat != MSG_ACCEPTED ||
	    msg->rm_reply.rp_acpt.ar_stat != SUCCESS)
		return;
	rep->has_results = true;
	rep->proc = msg->acpted_rply.ar_results.proc;
	rep->where = msg->acpted_rply.ar_results.where;
	msg->acpted_rply.ar_results.proc = (xdrproc_t)(void (*)(void))xdr_void;
	msg->acpted_rply.ar_results.where = NULL;
}

/*
 * The Reply nearly every call gets - accepted, an AUTH_NONE verifier of no
 * octets, SUCCESS - written as six words at once where xdr_replymsg puts
 * them one at a time through the stream (the mirror of the client's
 * msg_reply_common() in clnt_msg.c).  False, nothing written, for any other.
 */
static bool xprt_reply_common(XDR *xdrs, const struct svc_xprt_reply *rep)
{
	const struct opaque_auth *verf = &rep->msg->acpted_rply.ar_verf;
	int32_t *buf;

	if (!rep->has_results || verf->oa_flavor != AUTH_NONE ||
	    verf->oa_length)
		return false;
	buf = XDR_INLINE(xdrs, 6 * BYTES_PER_XDR_UNIT);
	if (!buf)
		return false;
	IXDR_PUT_U_INT32(buf, rep->msg->rm_xid);
	IXDR_PUT_ENUM(buf, REPLY);
	IXDR_PUT_ENUM(buf, MSG_ACCEPTED);
	IXDR_PUT_ENUM(buf, AUTH_NONE);
	IXDR_PUT_U_INT32(buf, 0);
	IXDR_PUT_ENUM(buf, SUCCESS);
	return true;
}

bool_t svc_xprt_reply_encode(XDR *xdrs, void *arg)
{
	struct svc_xprt_reply *rep = arg;
	SVCAUTH *auth = svc_xprt_auth(rep->xprt);

	if (!xprt_reply_common(xdrs, rep) && !xdr_replymsg(xdrs, rep->msg))
		return FALSE;
	if (!rep->has_results)
		return TRUE;
	rr_begin_body(xdrs);
	if (auth)
		return SVCAUTH_WRAP(auth, xdrs, rep->proc, rep->where);
	return rep->proc(xdrs, rep->where);
}

size_t svc_xprt_reply_size(void *arg)
{
	struct svc_xprt_reply *rep = arg;

	return rep->has_results ? xdr_sizeof(rep->proc, rep->where) : 0;
}
