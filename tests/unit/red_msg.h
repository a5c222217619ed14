/*
 * red_msg.h - whole RPC messages of the red_prog test program, marshalled and
 * unmarshalled the way libtirpc's clnt_vc and svc_vc do it
 * (doc/libtirpc-contract.md, "Calls on a CLIENT", "Inside a dispatch
 * function"), on any XDR stream: plain xdrmem for reference encodings,
 * rw_rxdr / rw_axdr for the streams under test.  Shared by the unit tests,
 * the reassembly fuzzer and the benchmark.
 */
#ifndef TESTS_RT_MSG_H
#define TESTS_RT_MSG_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rpc/rpc.h>

#include "tests/unit/red_prog.h" /* rpcgen output, in the build dir */
#include "wire/rw_xdr.h"

#define RED_XID 0x12345678u

/* xdr_void is declared without parameters; going through void (*)(void)
 * tells the compiler the cast to xdrproc_t is deliberate. */
#define RED_XDR_VOID ((xdrproc_t)(void (*)(void))xdr_void)

/* clnt_vc pre-marshals xid, CALL, rpcvers, prog and vers once per CLIENT. */
static inline u_int red_callhdr(char *buf, u_int cap, uint32_t xid)
{
	struct rpc_msg m;
	XDR x;
	u_int n = 0;

	memset(&m, 0, sizeof(m));
	m.rm_xid = xid;
	m.rm_direction = CALL;
	m.rm_call.cb_rpcvers = RPC_MSG_VERSION;
	m.rm_call.cb_prog = RED_PROG;
	m.rm_call.cb_vers = RED_VERS;
	xdrmem_create(&x, buf, cap, XDR_ENCODE);
	if (xdr_callhdr(&x, &m))
		n = XDR_GETPOS(&x);
	XDR_DESTROY(&x);
	return n;
}

/*
 * A Call as clnt_vc_call() builds it: XDR_PUTBYTES(header), XDR_PUTINT32
 * (proc), AUTH_MARSHALL, then the body through AUTH_WRAP.  The body marker
 * is a no-op on streams that are not ours.
 */
static inline bool red_put_call(XDR *x, uint32_t xid, uint32_t proc, AUTH *auth,
				xdrproc_t args, void *argp)
{
	char hdr[24];
	u_int n = red_callhdr(hdr, sizeof(hdr), xid);
	int32_t p = (int32_t)proc;

	if (!n || !XDR_PUTBYTES(x, hdr, n) || !XDR_PUTINT32(x, &p) ||
	    !AUTH_MARSHALL(auth, x))
		return false;
	(void)rw_xdr_begin_body(x);
	return AUTH_WRAP(auth, x, args, argp);
}

/* An accepted, successful Reply as svc_vc_reply() builds it. */
static inline bool red_put_reply(XDR *x, uint32_t xid, xdrproc_t res,
				 void *resp)
{
	struct rpc_msg m;

	memset(&m, 0, sizeof(m));
	m.rm_xid = xid;
	m.rm_direction = REPLY;
	m.rm_reply.rp_stat = MSG_ACCEPTED;
	m.acpted_rply.ar_verf = _null_auth;
	m.acpted_rply.ar_stat = SUCCESS;
	m.acpted_rply.ar_results.where = NULL;
	m.acpted_rply.ar_results.proc = RED_XDR_VOID;
	if (!xdr_replymsg(x, &m))
		return false;
	(void)rw_xdr_begin_body(x);
	return res(x, resp);
}

/* Room for a credential and a verifier, as svc_getreq_common provides. */
struct red_cred_area {
	char cred[MAX_AUTH_BYTES];
	char verf[MAX_AUTH_BYTES];
};

/* The responder's side: xdr_callmsg in xp_recv, the args in xp_getargs. */
static inline bool red_get_call(XDR *x, struct rpc_msg *m,
				struct red_cred_area *ca, xdrproc_t args,
				void *argp)
{
	memset(m, 0, sizeof(*m));
	m->rm_call.cb_cred.oa_base = ca->cred;
	m->rm_call.cb_verf.oa_base = ca->verf;
	if (!xdr_callmsg(x, m) || m->rm_direction != CALL)
		return false;
	(void)rw_xdr_begin_body(x);
	return args(x, argp);
}

/* The requester's side, as clnt_vc_call() decodes a Reply. */
static inline bool red_get_reply(XDR *x, xdrproc_t res, void *resp)
{
	struct rpc_msg m;
	bool ok;

	memset(&m, 0, sizeof(m));
	m.acpted_rply.ar_verf = _null_auth;
	m.acpted_rply.ar_results.where = NULL;
	m.acpted_rply.ar_results.proc = RED_XDR_VOID;
	ok = xdr_replymsg(x, &m) && m.rm_direction == REPLY &&
	     m.rm_reply.rp_stat == MSG_ACCEPTED &&
	     m.acpted_rply.ar_stat == SUCCESS;
	/* the verifier overlays the rejected-reply arm: only an accepted
	 * reply has one to free */
	if (m.rm_reply.rp_stat == MSG_ACCEPTED && m.acpted_rply.ar_verf.oa_base)
		xdr_free((xdrproc_t)xdr_opaque_auth,
			 (char *)&m.acpted_rply.ar_verf);
	if (!ok)
		return false;
	(void)rw_xdr_begin_body(x);
	return res(x, resp);
}

#endif /* TESTS_RT_MSG_H */
