/*
 * t_netid_util.h - helpers of the netid tests (t_netid.c): check lines,
 * the fd 0 watch, the test program TNETID (procedures NULL, INC and WHO,
 * which answers "NETID VERS" of the transport and version a call came in
 * on), and calls on a CLIENT.
 *
 * Only libtirpc's interface is used, so the same sources build a program
 * linked "-lrpcrdma -ltirpc" and one linked "-ltirpc" alone for
 * LD_PRELOAD=librpcrdma.so.
 */
#ifndef T_NETID_UTIL_H
#define T_NETID_UTIL_H

#include <stdbool.h>

#include <rpc/rpc.h>

#include "t_util.h"

#define TNETID_PROG  0x20005151u /* the test server's program */
#define TNETID_PROG2 0x20005152u /* single-transport servers */
#define TNETID_UNREG 0x20005153u /* never registered */
#define TNETID_INC   1		 /* int -> int + 1 */
#define TNETID_WHO   2		 /* void -> "NETID VERS" */

#define TN_XDR_VOID ((xdrproc_t)(void (*)(void))xdr_void)

/* Checks and notes: CHECK, CHECK_OK, NOTE (t_util.h). */
/* Final line, and the exit status. */
int tn_done(const char *who);

/* Remember what fd 0 is (opening /dev/null there if it is closed), then
 * check after each rdma entry point that it is still that file. */
void tn_fd0_init(void);
void tn_check_fd0(const char *after);
/* A spare open fd (on /dev/null), and whether it is still open. */
int tn_spare_fd(void);
bool tn_fd_open(int fd);

/* The dispatch function of TNETID. */
void tn_dispatch(struct svc_req *rq, SVCXPRT *x);

/* WHO on cl into buf; false (buf: the error) if the call failed. */
bool tn_who(CLIENT *cl, char *buf, size_t len);
/* INC on cl. */
enum clnt_stat tn_inc(CLIENT *cl, int in, int *out);

/* cl made, WHO answers want and cl_netid is want's netid; destroys cl. */
void tn_check_client(CLIENT *cl, const char *what, const char *want);
/* cl NULL and clnt_spcreateerror() contains want. */
void tn_check_createerr(CLIENT *cl, const char *what, const char *want);

/* Exit 1 with a FAIL line if the program runs longer than seconds. */
#define tn_watchdog(seconds) \
	tu_watchdog((seconds), "FAIL - watchdog: the test took too long\n", 1)

#endif
