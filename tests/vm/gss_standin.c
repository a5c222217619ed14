/*
 * gss_standin.c - a stand-in RPCSEC_GSS service for ddpt_server, so that
 * t_ddp can see what the transport does with RPCSEC_GSS calls the server
 * accepts, without Kerberos (V1-WC-2, V1-GSS-3).
 *
 * libtirpc's svc_getreq_common() calls _gss_authenticate() through the PLT:
 * the definition here takes its place (the program exports it,
 * tests/vm/ddp.am).  A call whose RPCSEC_GSS credential is
 * RPCSEC_GSS_DATA on the context "fake" (t_ddp.c's fake_gss_create) is
 * accepted with the service the credential names: none leaves arguments
 * and results as the procedure's XDR; integrity and privacy are both
 * handled as integrity, rpc_gss_integ_data (RFC 2203 section 5.3.2.2):
 * the sequence number and the body as one opaque, then a 16-octet checksum
 * nobody checks.  Every other call goes to libtirpc's own
 * _gss_authenticate.  One thread (svc_run's): no lock.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/rpc.h>
#include <rpc/svc_auth.h>
#include <rpc/svc_mt.h>

#define GS_HANDLE    "fake"
#define GS_CKSUM_LEN 16u
#define GS_SVC_NONE  1u

static uint32_t gs_service; /* of the call being served */

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static int gs_wrap(SVCAUTH *a, XDR *x, xdrproc_t f, caddr_t p)
{
	char ck[GS_CKSUM_LEN] = "stand-in cksum", *body, *c = ck;
	u_int len, n = GS_CKSUM_LEN;
	uint32_t seq = 1;
	bool_t ok;
	XDR m;

	if (gs_service == GS_SVC_NONE)
		return (*f)(x, p);
	len = (u_int)xdr_sizeof(f, p) + 4;
	body = malloc(len);
	if (!body)
		return FALSE;
	xdrmem_create(&m, body, len, XDR_ENCODE);
	ok = xdr_u_int(&m, &seq) && (*f)(&m, p) &&
	     xdr_bytes(x, &body, &len, len) && xdr_bytes(x, &c, &n, n);
	free(body);
	return ok;
}

static int gs_unwrap(SVCAUTH *a, XDR *x, xdrproc_t f, caddr_t p)
{
	char ck[GS_CKSUM_LEN], *body = NULL, *c = ck;
	u_int len = 0, n = 0;
	uint32_t seq;
	bool_t ok;
	XDR m;

	if (gs_service == GS_SVC_NONE)
		return (*f)(x, p);
	if (!xdr_bytes(x, &body, &len, ~0u) ||
	    !xdr_bytes(x, &c, &n, GS_CKSUM_LEN)) {
		free(body);
		return FALSE;
	}
	xdrmem_create(&m, body, len, XDR_DECODE);
	ok = xdr_u_int(&m, &seq) && (*f)(&m, p);
	free(body);
	return ok;
}

static int gs_destroy(SVCAUTH *a)
{
	return TRUE;
}

static struct svc_auth_ops gs_ops = {
	.svc_ah_wrap = gs_wrap,
	.svc_ah_unwrap = gs_unwrap,
	.svc_ah_destroy = gs_destroy,
};

/* The credential's service if it is RPCSEC_GSS_DATA on "fake", else 0. */
static uint32_t standin_service(const struct opaque_auth *c)
{
	const uint8_t *p = (const uint8_t *)c->oa_base;
	size_t hl = strlen(GS_HANDLE);

	/* version, gss_proc, seq_num, service, handle: 4 words and "fake" */
	if (c->oa_flavor != RPCSEC_GSS || !p || c->oa_length != 20 + hl ||
	    get32(p) != 1 || get32(p + 4) != 0 || get32(p + 16) != hl ||
	    memcmp(p + 20, GS_HANDLE, hl))
		return 0;
	return get32(p + 12);
}

enum auth_stat _gss_authenticate(struct svc_req *rq, struct rpc_msg *msg,
				 bool_t *no_dispatch)
{
	static enum auth_stat (*real)(struct svc_req *, struct rpc_msg *,
				      bool_t *);
	uint32_t svc = standin_service(&msg->rm_call.cb_cred);
	SVCXPRT *x = rq->rq_xprt;

	if (svc) {
		gs_service = svc;
		rq->rq_cred = msg->rm_call.cb_cred;
		rq->rq_clntcred = NULL;
		SVC_XP_AUTH(x).svc_ah_ops = &gs_ops;
		SVC_XP_AUTH(x).svc_ah_private = NULL;
		x->xp_verf.oa_flavor = AUTH_NONE;
		x->xp_verf.oa_length = 0;
		*no_dispatch = FALSE;
		return AUTH_OK;
	}
	if (!real)
		real = (enum auth_stat(*)(struct svc_req *, struct rpc_msg *,
					  bool_t *))dlsym(RTLD_NEXT,
							  "_gss_authenticate");
	return real ? real(rq, msg, no_dispatch) : AUTH_FAILED;
}
