/*
 * interpose.c - how librpcrdma takes over libtirpc's entry points: the
 * table of libtirpc's real functions, through which everything that is not
 * an rdma netid is forwarded unchanged, and the start-up check.
 *
 * Our clnt_create() & co. are exported under libtirpc's own version node
 * (TIRPC_0.3.0, src/librpcrdma.map), so the dynamic linker binds both the
 * program's references and, on a libtirpc that calls its own functions
 * through the PLT, libtirpc's internal ones to us - when we precede
 * libtirpc in the lookup order (link "-lrpcrdma -ltirpc", or LD_PRELOAD).
 * The real functions are found with dlvsym(RTLD_NEXT, name, "TIRPC_0.3.0"):
 * the next definition after ours, i.e. libtirpc's.
 *
 * The start-up check says once, on stderr and syslog (at RPCRDMA_LOG's
 * level warn and above), when that does not
 * hold: libtirpc ahead of us (wrong link order, RTLD_LOCAL dlopen, static
 * libtirpc), or a libtirpc that binds its internal calls directly
 * (-Bsymbolic-functions), which only matters for routes we do not take
 * over (getnetpath() and functions outside rpcrdma_netid(3)).
 */
#define _GNU_SOURCE
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <syslog.h>

#include "netid/rpcrdma_netid.h"
#include "log/rl_log.h"

#define TIRPC_NODE   "TIRPC_0.3.0"
#define TIRPC_SONAME "libtirpc.so.3"

static struct rpcrdma_real real;
static pthread_once_t real_once = PTHREAD_ONCE_INIT;

/* rdma netconfigs are told apart by netid: a private one for the check. */
const struct netconfig rpcrdma_selfcheck_nconf = {
	.nc_netid = (char *)"rpcrdma-selfcheck",
	.nc_semantics = NC_TPI_COTS_ORD,
	.nc_protofmly = (char *)"rpcrdma-selfcheck",
	.nc_proto = (char *)"rpcrdma-selfcheck",
	.nc_device = (char *)"-",
};
static bool selfcheck_reached;

/* ---- libtirpc's real functions -------------------------------------------- */

/*
 * RTLD_NEXT finds libtirpc when it follows us in the lookup order.  When it
 * precedes us (wrong link order) our entry points are never called by the
 * program, but our own code still needs libtirpc: ask the loaded library.
 */
static void *interpose_lookup(const char *name)
{
	static void *tirpc;
	void *p = dlvsym(RTLD_NEXT, name, TIRPC_NODE);

	if (p)
		return p;
	if (!tirpc)
		tirpc = dlopen(TIRPC_SONAME, RTLD_LAZY | RTLD_NOLOAD);
	if (tirpc)
		p = dlvsym(tirpc, name, TIRPC_NODE);
	if (!p) {
		/* Not versioned (an unusual libtirpc build)? */
		p = dlsym(RTLD_NEXT, name);
	}
	if (!p) {
		rl_err("fatal: libtirpc's %s@%s not found: %s", name,
		       TIRPC_NODE, dlerror());
		abort();
	}
	return p;
}

#define RESOLVE(fn) (*(void **)&real.fn = interpose_lookup(#fn))

static void resolve_all(void)
{
	RESOLVE(clnt_create);
	RESOLVE(clnt_create_timed);
	RESOLVE(clnt_create_vers);
	RESOLVE(clnt_create_vers_timed);
	RESOLVE(clnt_tp_create);
	RESOLVE(clnt_tp_create_timed);
	RESOLVE(clnt_tli_create);
	RESOLVE(rpc_call);
	RESOLVE(svc_create);
	RESOLVE(svc_tp_create);
	RESOLVE(svc_tli_create);
	RESOLVE(svc_reg);
	RESOLVE(svc_unreg);
	RESOLVE(rpc_reg);
	RESOLVE(rpcb_set);
	RESOLVE(rpcb_unset);
	RESOLVE(rpcb_getaddr);
	RESOLVE(getnetconfigent);
	RESOLVE(taddr2uaddr);
	RESOLVE(uaddr2taddr);
	RESOLVE(clnt_spcreateerror);
	RESOLVE(clnt_pcreateerror);
}

const struct rpcrdma_real *rpcrdma_real(void)
{
	pthread_once(&real_once, resolve_all);
	return &real;
}

/* ---- The start-up check ---------------------------------------------------- */

static void tell(const char *what)
{
	if (!rl_enabled(RL_WARN))
		return;
	rl_warn("%s", what);
	syslog(LOG_WARNING | LOG_USER, "librpcrdma: %s", what);
}

void rpcrdma_selfcheck_hit(void)
{
	selfcheck_reached = true;
}

/* Does the program's lookup of name reach this library? */
static bool we_win(const char *name)
{
	Dl_info mine, found;
	void *p = dlvsym(RTLD_DEFAULT, name, TIRPC_NODE);

	if (!p || !dladdr(p, &found) || !dladdr((void *)rpcrdma_real, &mine))
		return false;
	return found.dli_fbase == mine.dli_fbase;
}

/*
 * libtirpc's clnt_tp_create() calls clnt_tp_create_timed(): through the
 * PLT that is ours, which recognizes the private netconfig and only notes
 * the visit.  Bound directly, libtirpc's own version runs and fails at
 * once on the unknown netid (before any socket exists).
 */
static bool internal_routes(void)
{
	__typeof__(rpc_createerr) saved = rpc_createerr;
	CLIENT *cl;

	selfcheck_reached = false;
	cl = REAL(clnt_tp_create)("localhost", 0, 0, &rpcrdma_selfcheck_nconf);
	if (cl)
		clnt_destroy(cl);
	rpc_createerr = saved;
	return selfcheck_reached;
}

__attribute__((constructor)) static void rpcrdma_selfcheck(void)
{
	rpcrdma_real();
	if (!we_win("clnt_create")) {
		tell("libtirpc precedes librpcrdma in the symbol lookup order, so "
		     "netids rdma and rdma6 do not work through libtirpc's "
		     "functions (clnt_create, svc_create, ...): link with "
		     "-lrpcrdma before -ltirpc, or use LD_PRELOAD=librpcrdma.so.1 "
		     "(see rpcrdma_netid(3))");
		return;
	}
	if (!internal_routes())
		tell("this libtirpc calls its own functions directly (built "
		     "with -Bsymbolic-functions?): netids rdma and rdma6 work "
		     "through the functions rpcrdma_netid(3) lists, but not "
		     "through libtirpc functions that reach those internally "
		     "(getnetpath(), nettype \"visible\")");
}
