/*
 * netid_simple.c - rpc_reg(), libtirpc's simplified server interface, for
 * the nettypes that select rdma or rdma6: "rdma" and "rdma6" themselves,
 * "netpath" (NULL, "") when NETPATH names an rdma netid, and any nettype
 * whose entries libtirpc lists with an rdma one (a visible rdma line in
 * /etc/netconfig makes "visible" such a nettype).  libtirpc's own
 * rpc_reg() cannot serve them: it rejects "rdma" as a nettype, and asks
 * the kernel what socket a listener's fd is, which an RDMA listener is not.
 *
 * As libtirpc's svc_simple.c: one list of procedures; one transport per
 * netid, made by the first registration on it and shared by every later
 * procedure, version and program; each (program, version, netid)
 * registered with rpcbind once; one dispatch function, universal(), that
 * answers NULLPROC with xdr_void, decodes a registered procedure's
 * arguments with its xdr_in into a zeroed buffer, calls it and sends what
 * it returns with its xdr_out - nothing when it returns NULL and xdr_out
 * is not xdr_void, which is how batching servers are written.  The
 * transports come from the routes svc_tp_create() takes (netid_svc.c), so
 * NETPATH=rdma:tcp gives the procedure to both.
 *
 * On purpose unlike libtirpc 1.3: a procedure never registered is answered
 * PROC_UNAVAIL (libtirpc's sends nothing, and its caller waits for its
 * timeout); the whole buffer is zeroed (libtirpc's clears its first four
 * octets); the arguments are freed after a call left unanswered too.
 *
 * Other nettypes go to libtirpc's rpc_reg(), with one exception.  libtirpc
 * hands a call to the dispatch function registered last for its program
 * and version, whatever transport the call came on, so two dispatch
 * functions of one program and version lose calls.  Hence universal() also
 * serves what libtirpc's rpc_reg() was given (entries without a netid: on
 * libtirpc's transports, never on rdma ones), and once a program and
 * version is served here, its later registrations are all done here: on
 * this file's transports, or, on a netid where libtirpc's rpc_reg() holds
 * that program and version already, on libtirpc's.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/nettype.h>
#include <rpc/rpc.h>

#include "compiler.h"
#include "netid/rpcrdma_netid.h"

/* The buffer arguments are decoded into: libtirpc's size for tcp. */
#define ARGS_SIZE (64 * 1024)

typedef char *(*simple_fn)(char *);

/* A transport made here, one per netid; never destroyed (as libtirpc). */
struct simple_xprt {
	SVCXPRT *x;
	char *netid;
	struct simple_xprt *next;
};

/* A registered procedure.  netid NULL: registered by libtirpc's rpc_reg()
 * on its transports, whose netids are never rdma ones. */
struct simple_proc {
	rpcprog_t prog;
	rpcvers_t vers;
	rpcproc_t proc;
	simple_fn fn;
	xdrproc_t xin, xout;
	const char *netid; /* the simple_xprt's */
	struct simple_proc *next;
};

static pthread_mutex_t simple_lock = PTHREAD_MUTEX_INITIALIZER;
static struct simple_xprt *xprts;
static struct simple_proc *procs;

/* ---- The lists (simple_lock held) ---------------------------------------- */

static struct simple_xprt *xprt_find(const char *netid)
{
	struct simple_xprt *t;

	for (t = xprts; t; t = t->next)
		if (!strcmp(t->netid, netid))
			return t;
	return NULL;
}

/* prog/vers has a procedure on a transport of this file (netid NULL: on
 * any of them). */
static bool served_here(rpcprog_t prog, rpcvers_t vers, const char *netid)
{
	const struct simple_proc *p;

	for (p = procs; p; p = p->next)
		if (p->netid && p->prog == prog && p->vers == vers &&
		    (!netid || !strcmp(p->netid, netid)))
			return true;
	return false;
}

static bool proc_add(const struct simple_proc *want, const char *netid)
{
	struct simple_proc *p = malloc(sizeof(*p));

	if (!p)
		return false;
	*p = *want;
	p->netid = netid;
	p->next = procs;
	procs = p;
	return true;
}

/* ---- The dispatch function -------------------------------------------------- */

/* The procedure for a call on netid: registered on that netid, else (not
 * on rdma) by libtirpc's rpc_reg().  Copied out of the list. */
static bool simple_lookup(const struct svc_req *rq, const char *netid,
			  struct simple_proc *out)
{
	const struct simple_proc *p, *tirpc = NULL;
	bool on_rdma = netid && rpcrdma_netid_family(netid);

	pthread_mutex_lock(&simple_lock);
	for (p = procs; p; p = p->next) {
		if (p->prog != rq->rq_prog || p->vers != rq->rq_vers ||
		    p->proc != rq->rq_proc)
			continue;
		if (p->netid && netid && !strcmp(p->netid, netid))
			break;
		if (!p->netid && !on_rdma && !tirpc)
			tirpc = p;
	}
	if (!p)
		p = tirpc;
	if (p)
		*out = *p;
	pthread_mutex_unlock(&simple_lock);
	return p != NULL;
}

static void universal(struct svc_req *rq, SVCXPRT *x)
{
	struct simple_proc p;
	char *args, *res;

	if (rq->rq_proc == NULLPROC) {
		if (!svc_sendreply(x, RPCRDMA_XDR_VOID, NULL))
			rl_err("rpc_reg: svc_sendreply failed");
		return;
	}
	if (!simple_lookup(rq, x->xp_netid, &p)) {
		rl_info("rpc_reg: never registered prog %lu vers %lu proc %lu "
			"on %s: PROC_UNAVAIL",
			(unsigned long)rq->rq_prog, (unsigned long)rq->rq_vers,
			(unsigned long)rq->rq_proc,
			x->xp_netid ? x->xp_netid : "?");
		svcerr_noproc(x);
		return;
	}
	args = calloc(1, ARGS_SIZE);
	if (!args) {
		rl_err("rpc_reg: out of memory");
		svcerr_systemerr(x);
		return;
	}
	/* After a failed decode the caller frees nothing, as rpcgen's
	 * dispatch functions (librpcrdma's transports have freed it). */
	if (!svc_getargs(x, p.xin, args)) {
		svcerr_decode(x);
		free(args);
		return;
	}
	res = p.fn(args);
	/* Not sent also when an RDMA reply did not fit what the call
	 * offered, which the client then asks again: said at level info. */
	if ((res || p.xout == RPCRDMA_XDR_VOID) &&
	    !svc_sendreply(x, p.xout, res))
		rl_info("rpc_reg: trouble replying to prog %lu vers %lu",
			(unsigned long)rq->rq_prog, (unsigned long)rq->rq_vers);
	svc_freeargs(x, p.xin, args);
	free(args);
}

/* ---- Which netconfig entries a nettype selects --------------------------------- */

/*
 * "rdma"/"rdma6": that entry; "netpath" with NETPATH naming an rdma
 * netid: NETPATH, walked by netconfig.c (libtirpc's walk finds rdma
 * entries only through its PLT); anything else: libtirpc's own selection.
 */
struct walk {
	struct netconfig *one;	/* the rdma nettype's entry, until taken */
	struct netconfig *held; /* the entry last returned, ours to free */
	struct rpcrdma_netpath np;
	bool netpath;
	void *tirpc; /* __rpc_setconf()'s handle */
};

static bool walk_begin(struct walk *w, const char *nettype)
{
	memset(w, 0, sizeof(*w));
	if (rpcrdma_nettype_is_rdma(nettype))
		return (w->one = rpcrdma_nconf_make(nettype)) != NULL;
	if (rpcrdma_netpath_has_rdma(nettype))
		return (w->netpath = rpcrdma_netpath_begin(&w->np));
	w->tirpc = __rpc_setconf(nettype);
	return w->tirpc != NULL;
}

static struct netconfig *walk_next(struct walk *w)
{
	if (w->held)
		freenetconfigent(w->held);
	w->held = NULL;
	if (w->one) {
		w->held = w->one;
		w->one = NULL;
	} else if (w->netpath) {
		w->held = rpcrdma_netpath_next(&w->np);
	} else if (w->tirpc) {
		return __rpc_getconf(w->tirpc);
	}
	return w->held;
}

static void walk_end(struct walk *w)
{
	if (w->held)
		freenetconfigent(w->held);
	if (w->one)
		freenetconfigent(w->one);
	if (w->netpath)
		rpcrdma_netpath_end(&w->np);
	if (w->tirpc)
		__rpc_endconf(w->tirpc);
}

/* Does libtirpc's selection for nettype hold an rdma entry? */
static bool tirpc_lists_rdma(const char *nettype)
{
	void *handle = __rpc_setconf(nettype);
	struct netconfig *nc;
	bool found = false;

	if (!handle)
		return false;
	while (!found && (nc = __rpc_getconf(handle)))
		found = rpcrdma_nconf_family(nc) != 0;
	__rpc_endconf(handle);
	return found;
}

/* ---- Registering -------------------------------------------------------------- */

/* libtirpc's rpc_reg() was given prog/vers. */
static bool tirpc_has(rpcprog_t prog, rpcvers_t vers)
{
	const struct simple_proc *p;

	for (p = procs; p; p = p->next)
		if (!p->netid && p->prog == prog && p->vers == vers)
			return true;
	return false;
}

static struct simple_xprt *xprt_keep(SVCXPRT *x, const char *netid)
{
	struct simple_xprt *t = calloc(1, sizeof(*t));

	if (!t || !(t->netid = strdup(netid))) {
		free(t);
		return NULL;
	}
	t->x = x;
	t->next = xprts;
	xprts = t;
	return t;
}

static int not_registered(const struct simple_proc *want, const char *netid)
{
	rl_err("rpc_reg: couldn't register prog %lu vers %lu for %s",
	       (unsigned long)want->prog, (unsigned long)want->vers, netid);
	return 0;
}

/* want on nc: 1 done, 0 not on this one (said why), -1 out of memory
 * (stop, as libtirpc does). */
static int reg_on(const struct netconfig *nc, const struct simple_proc *want)
{
	struct simple_xprt *t = xprt_find(nc->nc_netid);
	SVCXPRT *x = t ? t->x : NULL;
	bool made = !x, first;
	int r;

	if (made && !(x = rpcrdma_svc_listener(nc, want->prog)))
		return 0;
	/* rpcbind hears of each program, version and netid once. */
	first = !served_here(want->prog, want->vers, nc->nc_netid);
	/*
	 * The dispatch table first: refused, rpcbind keeps what it has.
	 * Refused on a netid libtirpc's rpc_reg() holds prog/vers on: its
	 * calls there reach universal() (the header says why).
	 */
	if (!rpcrdma_svc_register(x, want->prog, want->vers, universal, NULL)) {
		if (rpcrdma_nconf_family(nc) ||
		    !tirpc_has(want->prog, want->vers))
			r = not_registered(want, nc->nc_netid);
		else
			r = proc_add(want, NULL) ? 1 : -1;
		goto drop;
	}
	if (first &&
	    !rpcrdma_svc_register(x, want->prog, want->vers, universal, nc)) {
		r = not_registered(want, nc->nc_netid);
		goto drop;
	}
	if (made && !(t = xprt_keep(x, nc->nc_netid))) {
		r = -1;
		goto drop;
	}
	return proc_add(want, t->netid) ? 1 : -1;
drop:
	if (made)
		SVC_DESTROY(x);
	return r;
}

static int reg_here(const struct simple_proc *want, const char *nettype)
{
	struct netconfig *nc;
	struct walk w;
	bool done = false;
	int r = 0;

	if (want->proc == NULLPROC) {
		rl_err("rpc_reg: can't reassign procedure number %u", NULLPROC);
		return -1;
	}
	pthread_mutex_lock(&simple_lock);
	if (!walk_begin(&w, nettype)) {
		walk_end(&w);
		pthread_mutex_unlock(&simple_lock);
		rl_err("rpc_reg: can't find appropriate transport");
		return -1;
	}
	while (r >= 0 && (nc = walk_next(&w))) {
		r = reg_on(nc, want);
		done |= r > 0;
	}
	walk_end(&w);
	pthread_mutex_unlock(&simple_lock);
	if (r < 0)
		rl_err("rpc_reg: out of memory");
	if (!done) {
		rl_err("rpc_reg: cant find suitable transport for %s", nettype);
		return -1;
	}
	return 0;
}

/* Is nettype's registration of prog/vers done here? */
static bool ours(const char *nettype, rpcprog_t prog, rpcvers_t vers)
{
	bool here;

	if (rpcrdma_nettype_is_rdma(nettype) ||
	    rpcrdma_netpath_has_rdma(nettype))
		return true;
	pthread_mutex_lock(&simple_lock);
	here = served_here(prog, vers, NULL);
	pthread_mutex_unlock(&simple_lock);
	return here || tirpc_lists_rdma(nettype);
}

/* ---- Exported entry point -------------------------------------------------------- */

RPCRDMA_EXPORT int rpc_reg(rpcprog_t prog, rpcvers_t vers, rpcproc_t proc,
			   char *(*fn)(char *), xdrproc_t xin, xdrproc_t xout,
			   char *nettype)
{
	const struct simple_proc want = { .prog = prog,
					  .vers = vers,
					  .proc = proc,
					  .fn = fn,
					  .xin = xin,
					  .xout = xout };
	const char *nt = nettype ? nettype : "netpath";
	bool noted;

	if (ours(nt, prog, vers))
		return reg_here(&want, nt);
	if (REAL(rpc_reg)(prog, vers, proc, fn, xin, xout, nettype))
		return -1;
	/* For calls that reach universal() (the header says why). */
	pthread_mutex_lock(&simple_lock);
	noted = proc_add(&want, NULL);
	pthread_mutex_unlock(&simple_lock);
	if (!noted)
		rl_err("rpc_reg: out of memory: prog %lu vers %lu proc %lu "
		       "is lost if the program is also served over rdma",
		       (unsigned long)prog, (unsigned long)vers,
		       (unsigned long)proc);
	return 0;
}
