/*
 * t_contract.h - the libtirpc contract test (doc/libtirpc-contract.md):
 * its program TCONTRACT, served over tcp and rdma by the same process
 * (t_contract_srv.c), and what client and server share: the procedures,
 * their XDR and the server's loops.
 *
 * Only libtirpc's interface (and SVCGET_RDMA_STATS of <rpc/rpcrdma.h>):
 * every check runs the same code over netid tcp and netid rdma.
 */
#ifndef T_CONTRACT_H
#define T_CONTRACT_H

#include <stdbool.h>

#include <rpc/rpc.h>

#include "t_util.h"

#define CT_PROG	   0x20005161u /* versions CT_VERS_LO..CT_VERS_HI */
#define CT_PROG2   0x20005162u /* svc_register()ed on demand */
#define CT_UNREG   0x20005163u /* never registered */
#define CT_VERS_LO 1
#define CT_VERS_HI 2

/* Procedures (NULLPROC is 0). */
enum {
	CT_INC = 1,	  /* int -> int + 1 */
	CT_WHO = 2,	  /* void -> "NETID VERS" of the call */
	CT_CALLER = 3,	  /* void -> struct ct_caller */
	CT_ERR = 4,	  /* int (enum ct_err) -> that svcerr_*() */
	CT_FREEARGS = 5,  /* string -> int: CT_FA_* bits, length << 8 */
	CT_CONTROL = 6,	  /* void -> int[CT_CTL_N]: SVC_CONTROL answers */
	CT_FDS = 7,	  /* void -> int[CT_FDS_N]: the server's fd tables */
	CT_ECHO = 8,	  /* string -> the same string */
	CT_SLEEP = 9,	  /* int ms -> void, after sleeping that long */
	CT_REGISTER = 10, /* int on -> int: svc_register/svc_unregister */
	CT_ACTION = 11,	  /* int (enum ct_action) -> int accepted */
	CT_DONE = 12,	  /* void -> void, then the server ends */
};

/* CT_ERR: which svcerr_*() the server answers with. */
enum ct_err {
	CT_E_NOPROC = 1,
	CT_E_DECODE,
	CT_E_SYSTEMERR,
	CT_E_AUTH, /* AUTH_BADCRED */
	CT_E_WEAKAUTH,
	CT_E_NOPROG,
	CT_E_PROGVERS, /* low CT_PV_LOW, high CT_PV_HIGH */
};
#define CT_PV_LOW  4
#define CT_PV_HIGH 7

/* CT_FREEARGS: svc_getargs() TRUE, svc_freeargs() TRUE, the string
 * pointer NULL after it. */
#define CT_FA_GOT   1
#define CT_FA_FREED 2
#define CT_FA_NULL  4

/*
 * CT_CONTROL: SVC_CONTROL() on the connection the call came in on and on
 * its listener, one bit per request that returned TRUE: CT_C_* of the
 * connection in CT_CTL_CONN, of the listener in CT_CTL_LSN; the
 * listener's SVCGET_CONNMAXREC after SVCSET_CONNMAXREC CT_MAXREC in
 * CT_CTL_MAXREC (-1 if refused); SVCGET_RDMA_STATS's requests of the
 * connection in CT_CTL_REQUESTS (-1 if refused).
 */
enum {
	CT_C_GET_VERSQUIET = 1,
	CT_C_SET_VERSQUIET = 2,
	CT_C_GET_CONNMAXREC = 4,
	CT_C_SET_CONNMAXREC = 8,
	CT_C_UNKNOWN = 16,
	CT_C_RDMA_STATS = 32,
};
enum {
	CT_CTL_CONN,
	CT_CTL_LSN,
	CT_CTL_MAXREC,
	CT_CTL_REQUESTS,
	CT_CTL_N
};
#define CT_MAXREC (1 << 20)

/*
 * CT_FDS: the connection's xp_fd is in svc_fdset (CT_FD_IN_SET) and in
 * svc_pollfd (CT_FD_IN_POLL), so is its listener's (CT_FD_LSN); how many
 * svc_pollfd entries are in use (CT_FD_NPOLL), svc_maxfd (CT_FD_MAX).
 */
enum {
	CT_FD_IN_SET,
	CT_FD_IN_POLL,
	CT_FD_LSN,
	CT_FD_NPOLL,
	CT_FD_MAX,
	CT_FDS_N
};

/* CT_ACTION: done by the server's own loops between two rounds, outside
 * any dispatch (svc_run: refused). */
enum ct_action {
	CT_A_UNREGISTER = 1, /* xprt_unregister() the IPv4 listeners */
	CT_A_REGISTER,	     /* xprt_register() them again */
	CT_A_DESTROY,	     /* svc_destroy() them */
};

/* CT_CALLER: svc_getrpccaller() (a struct netbuf) and svc_getcaller()
 * (xp_raddr, a sockaddr_in6 for either family) of the call. */
struct ct_caller {
	int rpc_family;
	u_int rpc_len;
	u_int rpc_port;
	char *rpc_addr;
	int caller_family;
	u_int caller_port;
	char *caller_addr;
	int addrlen; /* xp_addrlen */
};
bool_t xdr_ct_caller(XDR *xdrs, struct ct_caller *c);
bool_t xdr_ct_ints(XDR *xdrs, int *v, u_int n);

#define CT_XDR_VOID ((xdrproc_t)(void (*)(void))xdr_void)

/* ---- The server (t_contract_srv.c) --------------------------------------- */

/*
 * Serve TCONTRACT versions 1 and 2 over tcp and rdma (and, unless
 * ipv4_only, tcp6 and rdma6), registered with rpcbind, in loop, one of:
 * "run" (svc_run), "select" (select on svc_fdset, svc_getreqset),
 * "getreq" (the same, svc_getreq with the first 32 fds), "poll" (poll on
 * svc_pollfd, svc_getreq_poll), "common" (the same, svc_getreq_common per
 * fd).  Prints "ready" when it serves; returns the exit status.
 */
int ct_serve(const char *loop, bool ipv4_only);

#endif
