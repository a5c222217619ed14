/*
 * rpcb_reg.c - registering local rdma services with rpcbind: RPCBPROC_SET
 * and RPCBPROC_UNSET at the local rpcbind, and the list of registrations
 * made for servers, removed at normal exit.
 *
 * libtirpc's rpcb_set() cannot be used: it needs taddr2uaddr() of an rdma
 * netconfig, which it only finds through its PLT (not on every build).  So
 * the library speaks to rpcbind itself, as libtirpc's local_rpcb() does:
 * its AF_LOCAL socket first (rpcbind then knows our uid), loopback tcp
 * next.  rpcbind keeps one address per (program, version, netid) and
 * never checks whether an rdma one is still alive, hence the cleanup at
 * exit - in the process that registered, not in children it forked.
 */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpcb_prot.h>

#include "netid/rpcrdma_netid.h"

#define LOCAL_CONNECT_MS 5000
#define LOCAL_CALL_S	 10

/* ---- Talking to the local rpcbind ------------------------------------------ */

/* errs[0]: the AF_LOCAL socket's errno, errs[1]: loopback tcp's. */
static CLIENT *local_rpcbind(int errs[2])
{
	struct sockaddr_un sun = { .sun_family = AF_LOCAL };
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(111),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6,
				     .sin6_port = htons(111),
				     .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	CLIENT *cl;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", _PATH_RPCBINDSOCK);
	cl = rpcrdma_rpcb_client((struct sockaddr *)&sun, LOCAL_CONNECT_MS,
				 &errs[0]);
	if (!cl)
		cl = rpcrdma_rpcb_client((struct sockaddr *)&sin,
					 LOCAL_CONNECT_MS, &errs[1]);
	if (!cl)
		cl = rpcrdma_rpcb_client((struct sockaddr *)&sin6,
					 LOCAL_CONNECT_MS, &errs[1]);
	return cl;
}

static bool rpcb_op(rpcproc_t proc, rpcprog_t prog, rpcvers_t vers,
		    const char *netid, const char *uaddr, const char **why)
{
	static __thread char msg[200];
	struct timeval tv = { LOCAL_CALL_S, 0 };
	char owner[16];
	RPCB parms;
	bool_t ok = FALSE;
	enum clnt_stat st;
	CLIENT *cl;
	int errs[2];

	cl = local_rpcbind(errs);
	if (!cl) {
		snprintf(msg, sizeof(msg),
			 "rpcbind is not running? %s: %s, "
			 "port 111 of localhost: %s",
			 _PATH_RPCBINDSOCK, strerror(errs[0]),
			 strerror(errs[1]));
		goto fail;
	}
	snprintf(owner, sizeof(owner), "%u", (unsigned int)geteuid());
	parms.r_prog = prog;
	parms.r_vers = vers;
	parms.r_netid = (char *)netid;
	parms.r_addr = (char *)(uaddr ? uaddr : "");
	parms.r_owner = owner;
	st = rpcrdma_rpcb_call(cl, proc, (xdrproc_t)xdr_rpcb, &parms,
			       (xdrproc_t)xdr_bool, &ok, tv);
	clnt_destroy(cl);
	if (st != RPC_SUCCESS) {
		snprintf(msg, sizeof(msg), "rpcbind did not answer: %s",
			 clnt_sperrno(st));
		goto fail;
	}
	if (ok)
		return true;
	snprintf(msg, sizeof(msg),
		 proc == RPCBPROC_SET ?
			 "rpcbind refused (another address is registered for it, or "
			 "the caller may not register)" :
			 "rpcbind had nothing to remove");
fail:
	if (why)
		*why = msg;
	return false;
}

bool rpcrdma_rpcb_set(rpcprog_t prog, rpcvers_t vers, const char *netid,
		      const char *uaddr, const char **why)
{
	return rpcb_op(RPCBPROC_SET, prog, vers, netid, uaddr, why);
}

bool rpcrdma_rpcb_unset(rpcprog_t prog, rpcvers_t vers, const char *netid,
			const char **why)
{
	return rpcb_op(RPCBPROC_UNSET, prog, vers, netid, NULL, why);
}

/* ---- Registrations to remove at exit --------------------------------------- */

struct reg {
	rpcprog_t prog;
	rpcvers_t vers;
	char netid[8];
	pid_t pid;
	struct reg *next;
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct reg *regs;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

static void unregister_all(void)
{
	struct reg *r, *next;

	pthread_mutex_lock(&reg_lock);
	r = regs;
	regs = NULL;
	pthread_mutex_unlock(&reg_lock);
	for (; r; r = next) {
		next = r->next;
		if (r->pid == getpid())
			rpcrdma_rpcb_unset(r->prog, r->vers, r->netid, NULL);
		free(r);
	}
}

static void at_exit(void)
{
	atexit(unregister_all);
}

void rpcrdma_reg_remember(rpcprog_t prog, rpcvers_t vers, const char *netid)
{
	struct reg *r;

	pthread_once(&exit_once, at_exit);
	pthread_mutex_lock(&reg_lock);
	for (r = regs; r; r = r->next)
		if (r->prog == prog && r->vers == vers &&
		    !strcmp(r->netid, netid))
			break;
	if (!r && (r = calloc(1, sizeof(*r)))) {
		r->prog = prog;
		r->vers = vers;
		snprintf(r->netid, sizeof(r->netid), "%s", netid);
		r->next = regs;
		regs = r;
	}
	if (r)
		r->pid = getpid();
	pthread_mutex_unlock(&reg_lock);
}

void rpcrdma_reg_forget(rpcprog_t prog, rpcvers_t vers, const char *netid)
{
	struct reg **p, *r;

	pthread_mutex_lock(&reg_lock);
	for (p = &regs; (r = *p);) {
		if (r->prog == prog && r->vers == vers &&
		    (!netid || !strcmp(r->netid, netid))) {
			*p = r->next;
			free(r);
		} else {
			p = &r->next;
		}
	}
	pthread_mutex_unlock(&reg_lock);
}
