/*
 * svc_xprt.c - the parts every SVCXPRT of the library shares (svc_xprt.h).
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
	SVCXPRT *x = calloc(1, sizeof(*x));

	if (!x)
		return NULL;
	x->xp_fd = fd;
	x->xp_ops = ops;
	x->xp_ops2 = ops2;
	x->xp_p1 = p1;
	x->xp_p3 = calloc(1, EXT_SIZE);
	x->xp_netid = strdup(netid);
	x->xp_type = NC_TPI_COTS_ORD;
	x->xp_port = svc_xprt_sa_port(laddr);
	if (!x->xp_p3 || !x->xp_netid || !set_netbuf(&x->xp_ltaddr, laddr))
		goto fail;
	if (raddr) {
		if (!set_netbuf(&x->xp_rtaddr, raddr))
			goto fail;
		memcpy(&x->xp_raddr, raddr, svc_xprt_sa_len(raddr));
		x->xp_addrlen = (int)svc_xprt_sa_len(raddr);
	}
	return x;
fail:
	free(x->xp_ltaddr.buf);
	free(x->xp_netid);
	free(x->xp_p3);
	free(x);
	return NULL;
}

void svc_xprt_free(SVCXPRT *x)
{
	free(x->xp_rtaddr.buf);
	free(x->xp_ltaddr.buf);
	free(x->xp_netid);
	free(x->xp_p3);
	free(x);
}

SVCAUTH *svc_xprt_auth(SVCXPRT *x)
{
	SVCAUTH *a = &SVC_XP_AUTH(x);

	return a->svc_ah_ops ? a : NULL;
}

void svc_xprt_reply_init(struct svc_xprt_reply *c, SVCXPRT *x,
			 struct rpc_msg *msg)
{
	memset(c, 0, sizeof(*c));
	c->x = x;
	c->msg = msg;
	if (msg->rm_reply.rp_stat != MSG_ACCEPTED ||
	    msg->rm_reply.rp_acpt.ar_stat != SUCCESS)
		return;
	c->has_results = true;
	c->proc = msg->acpted_rply.ar_results.proc;
	c->where = msg->acpted_rply.ar_results.where;
	msg->acpted_rply.ar_results.proc = (xdrproc_t)(void (*)(void))xdr_void;
	msg->acpted_rply.ar_results.where = NULL;
}

bool_t svc_xprt_reply_encode(XDR *xdrs, void *arg)
{
	struct svc_xprt_reply *c = arg;
	SVCAUTH *auth = svc_xprt_auth(c->x);

	if (!xdr_replymsg(xdrs, c->msg))
		return FALSE;
	if (!c->has_results)
		return TRUE;
	rr_begin_body(xdrs);
	if (auth)
		return SVCAUTH_WRAP(auth, xdrs, c->proc, c->where);
	return c->proc(xdrs, c->where);
}

size_t svc_xprt_reply_size(void *arg)
{
	struct svc_xprt_reply *c = arg;

	return c->has_results ? xdr_sizeof(c->proc, c->where) : 0;
}
