/*
 * svc_rdma.c - RPC-over-RDMA SVCXPRTs for libtirpc's unchanged svc_run():
 * svc_rdma_create() and the two ops vectors (doc/libtirpc-contract.md,
 * "Serving").
 *
 * The listening SVCXPRT's xp_fd is the rdma_cm event channel.  Its xp_recv
 * accepts connections - each becomes a connection SVCXPRT, registered on
 * this thread so the next poll sees it - and, like svc_vc's rendezvous,
 * never yields a message; its other ops refuse.  Limits apply as requests
 * come in: max_conns at once, max_conns_per_peer per client address (at
 * which the address's least recently used idle connection is closed to
 * make room, so one program's idle connections cannot lock its host's
 * other programs out), and connections whose fd svc_run could not poll
 * (>= _rpc_dtablesize()) are refused with a message rather than silently
 * ignored.
 * Connections idle past idle_timeout are closed by a timer the listener
 * registers with svc_run as an SVCXPRT of its own (a timerfd).
 *
 * A connection SVCXPRT's xp_fd is its connection's fd (rr_srv_fd: the
 * completion fd plus a kick).  svc_run polls level-triggered, but the fd is
 * readable only while the transport has something new: so every xp_recv
 * collects everything (rr_srv_progress) into the responder's own queues,
 * and xp_stat what completed meanwhile (rr_srv_collect: no system call;
 * what it leaves keeps the fd readable), polling for the next call within
 * the adaptive budget of poll_us before it gives up.  xp_stat says
 * XPRT_MOREREQS while a request is ready - up to one grant's worth of calls
 * per turn, after which it kicks its own fd and says XPRT_IDLE, so that
 * svc_run serves the other connections too.
 * Decoding, Read chunks, replies and RDMA_ERRORs are rr_serve.h's; this
 * file only speaks libtirpc: call header, SVCAUTH_UNWRAP/WRAP exactly as
 * svc_vc, xp_verf and xp_p3 set up for _gss_authenticate.
 *
 * Direct data placement follows the Upper-Layer Binding table (RFC
 * 8166 §6): once the call header names the procedure, its CALL entry says
 * which argument items may come in Read chunks (any other is refused by
 * the decoder: GARBAGE_ARGS, V1-DDP-1, AMB-V1-15) and its REPLY entry which
 * result items go into the Write chunks the call offered (V1-WC-2).
 * Without an entry nothing is eligible, and under RPCSEC_GSS integrity or
 * privacy never anything: they wrap the body in one opaque (V1-GSS-3).
 * Authentication only (service none) leaves the body as the procedure's
 * XDR, so its items are placed as under AUTH_SYS (V1-WC-2; the Linux
 * client with sec=krb5 sends WRITE data in Read chunks):
 * rr_policy_gss_wrapped() reads the service from the credential.
 *
 * Detached calls (svc_rdma_detach): a dispatch routine may take its call
 * off the connection; it gets an SVCXPRT of its own (struct svr_call) that
 * holds the connection and copies what the next call overwrites (request,
 * call_id, verifier, auth, addresses), served on any thread while
 * svc_run goes on with the connection.  The rr_srv locks what they share.
 *
 * Lifetime: a connection that ends (client gone, error) is reported with
 * XPRT_DIED from xp_stat and destroyed by svc_getreq_common, never from
 * inside a dispatch.  Destroying the listening SVCXPRT stops listening and
 * destroys every connection it accepted (one in the middle of a call is
 * marked dead and goes at its xp_stat), so a server that leaves svc_run
 * can free everything.  The state shared by a listener and its connections
 * lives until the last of them is destroyed; it holds the record of XIDs
 * that failed for an operational reason (rr_srv_xidlog.h, V1-ERR-11), so
 * that a client that reconnects and sends one again gets ERR_CHUNK.
 */
#include "config.h"

#include <errno.h>
#include <netconfig.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpc_com.h>
#include <rpc/svc_auth.h>
#include <rpc/svc_mt.h>

#include <rpc/rpcrdma.h>

#include "compiler.h"
#include "glue/rpcrdma_attr.h"
#include "glue/rpcrdma_err.h"
#include "glue/rpcrdma_stats.h"
#include "glue/svc_rdma.h"
#include "glue/svc_xprt.h"
#include "log/rl_log.h"
#include "rpc/rr_clock.h"
#include "rpc/rr_listen.h"
#include "rpc/rr_policy.h"
#include "rpc/rr_serve.h"
#include "rpc/rr_srv_xidlog.h"

#define LSN_BACKLOG 64
#define LSN_BATCH   16
#define LSN_WOKEN   64 /* connections served per listener wake-up */
/* Receives for calls a connection starts with; a client that uses them
 * all gets more, up to attr.credits: an idle connection registers
 * 8 + bc_credits Receive and 4 Send buffers, 64 KiB. */
#define CONN_RECV_START 8

struct svr_conn;

/* What a listener and the connections it accepted share. */
struct svr {
	atomic_uint refs; /* the listener's, each connection's */
	struct rpcrdma_attr attr;
	struct rpcrdma_env env;
	struct rr_srv_opts opts;
	struct rt_listener *lsn;
	SVCXPRT *lsn_xprt; /* the listening SVCXPRT, or NULL */
	SVCXPRT *reaper;   /* its idle timer's, or NULL */
	int64_t idle_ms;   /* attr.idle_timeout; 0: never */
	uint64_t use_seq;  /* calls taken, all connections (svc_run's) */
	const char *netid; /* "rdma" or "rdma6" */
	/* conns, nconns and st change on the svc_run() thread only; lock
	 * is taken there to change them and by readers on other threads
	 * (SVCGET_RDMA_STATS on a connection of a threaded server, the
	 * registry's get() and conns(): rpcrdma_stats.h). */
	pthread_mutex_t lock;
	struct svr_conn *conns;
	unsigned int nconns;
	struct svr_conn **byfd; /* conns by their xp_fd (serve_woken) */
	unsigned int nbyfd;
	struct rpcrdma_svc_stats st; /* listener counters and those of
					 * connections already destroyed */
	time_t last_warn;
	struct rpcrdma_stats_reg stats_reg; /* RPCRDMA_STATS printing */
	char stats_label[RPCRDMA_STATS_LABEL_LEN];
};

/* What the call header of the current call named: the key of its
 * Upper-Layer Binding entries. */
struct call_id {
	rpcprog_t prog;
	rpcvers_t vers;
	rpcproc_t proc;
	bool wrapped;  /* RPCSEC_GSS wraps the body or
					 * carries no procedure: nothing is
					 * eligible (rr_policy_gss_wrapped) */
	bool gss;      /* any RPCSEC_GSS: never detached, its
					 * context state is the xprt's */
	bool unplaced; /* the procedure has no Upper-Layer
					 * Binding that places an item:
					 * nothing is eligible */
};

struct svr_conn {
	atomic_uint refs; /* the SVCXPRT's, and one per backward
					 * CLIENT (clnt_rdma_bc.c) */
	SVCXPRT *xprt;
	struct svr *srv;
	struct rr_srv *rr;
	struct rr_sreq *cur; /* the call being dispatched */
	struct call_id id;   /* ... its procedure */
	struct svr_conn *next;
	struct svr_conn *prev;
	int fd;				/* xprt->xp_fd, kept past the xprt */
	bool in_call;			/* inside svc_getreq_common */
	unsigned int streak;		/* calls taken in this turn */
	struct rr_policy_memo ulb_memo; /* svc_run's thread only */
	bool dead;
	bool gss_purged; /* RPCSEC_GSS seen: svc_xprt_gss_purge done */
	/* svc_run's thread only: when it last took a call (srv->use_seq),
	 * and the reaper's view of that (seen_use, since idle_since). */
	uint64_t last_use;
	uint64_t seen_use;
	int64_t idle_since; /* rr_clock_ms() */
	char verf[MAX_AUTH_BYTES];
};

static const struct xp_ops lsn_ops;
static const struct xp_ops2 lsn_ops2;
static const struct xp_ops conn_ops;
static const struct xp_ops2 conn_ops2;

/* ---- Helpers ------------------------------------------------------------ */

/* Messages about refused connections come from peers: at most one a
 * second, so a flood of them cannot flood the log. */
static void warn_rate(struct svr *srv, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void warn_rate(struct svr *srv, const char *fmt, ...)
{
	time_t now = time(NULL);
	char msg[256];
	va_list ap;

	if (now == srv->last_warn || !rl_enabled(RL_WARN))
		return;
	srv->last_warn = now;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rl_warn("svc_rdma: %s", msg);
}

static void svr_put(struct svr *srv)
{
	if (atomic_fetch_sub(&srv->refs, 1) != 1)
		return;
	/* the listener and every connection are gone: print once */
	rpcrdma_stats_untrack(&srv->stats_reg, true);
	rr_xidlog_destroy(srv->opts.xidlog);
	pthread_mutex_destroy(&srv->lock);
	free(srv->byfd);
	free(srv);
}

/* ---- Counters ----------------------------------------------------------- */

static uint32_t max_u32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

static void stats_add(struct rpcrdma_svc_stats *t, const struct rr_srv_stats *s)
{
	t->requests += s->requests;
	t->replies_inline += s->replies_inline;
	t->replies_long += s->replies_long;
	t->err_vers += s->err_vers;
	t->err_chunk += s->err_chunk;
	t->err_too_big += s->err_too_big;
	t->err_no_room += s->err_no_room;
	t->discarded += s->discarded;
	t->dropped += s->dropped;
	t->err_write_room += s->err_write_room;
	t->read_chunks += s->read_chunks;
	t->read_bytes += s->read_bytes;
	t->write_chunks += s->write_chunks;
	t->write_bytes += s->write_bytes;
	t->reply_chunks += s->reply_chunks;
	t->reply_bytes += s->reply_bytes;
	t->inline_bytes += s->inline_bytes;
	t->ddp_copies += s->ddp_copies;
	t->ddp_copy_bytes += s->ddp_copy_bytes;
	t->v2_requests += s->v2_requests;
	t->replies_inv += s->replies_inv;
	t->err_resource += s->err_resource;
	t->replays_done += s->replays_done;
	t->replays_missed += s->replays_missed;
	t->bc_calls += s->bc_calls;
	t->bc_replies += s->bc_replies;
	t->bc_timeouts += s->bc_timeouts;
	t->max_inflight = max_u32(t->max_inflight, s->max_inflight);
	t->max_granted = max_u32(t->max_granted, s->max_granted);
}

static void svr_stats(struct svr *srv, struct rpcrdma_svc_stats *out)
{
	struct rr_srv_stats s;
	struct svr_conn *conn;

	pthread_mutex_lock(&srv->lock);
	*out = srv->st;
	for (conn = srv->conns; conn; conn = conn->next) {
		rr_srv_stats(conn->rr, &s);
		stats_add(out, &s);
	}
	out->conns_active = srv->nconns;
	pthread_mutex_unlock(&srv->lock);
}

/* ---- Connection SVCXPRT -------------------------------------------------- */

static void conn_end_call(struct svr_conn *conn)
{
	if (conn->cur)
		rr_sreq_done(conn->rr, conn->cur);
	conn->cur = NULL;
}

/* What the reply path needs to know of the call just decoded: its
 * procedure, its flavour, whether a ULB binds it.  A connection's first
 * RPCSEC_GSS call also drops libtirpc's context of the SVCXPRT's address
 * (svc_xprt_gss_purge says why). */
static void conn_take_call(struct svr_conn *conn, SVCXPRT *xprt,
			   const struct rpc_msg *msg)
{
	conn->id.prog = msg->rm_call.cb_prog;
	conn->id.vers = msg->rm_call.cb_vers;
	conn->id.proc = msg->rm_call.cb_proc;
	conn->id.wrapped = rr_policy_gss_wrapped(&msg->rm_call.cb_cred);
	conn->id.gss = msg->rm_call.cb_cred.oa_flavor == RPCSEC_GSS;
	conn->id.unplaced = !rr_policy_placed(&conn->ulb_memo, conn->id.prog,
					      conn->id.vers, conn->id.proc);
	if (conn->id.gss && !conn->gss_purged) {
		svc_xprt_gss_purge(xprt);
		xprt->xp_verf.oa_base = conn->verf;
		conn->gss_purged = true;
	}
}

static bool_t conn_recv(SVCXPRT *xprt, struct rpc_msg *msg)
{
	struct svr_conn *conn = xprt->xp_p1;
	struct rr_sreq *req;

	conn->in_call = true;
	conn_end_call(conn);
	/* RPCSEC_GSS points it at svc_getreq_common's stack: reset it. */
	xprt->xp_verf.oa_base = conn->verf;
	if (conn->dead)
		return FALSE;
	req = rr_srv_next(conn->rr);
	if (!req && rr_srv_progress(conn->rr) > 0)
		req = rr_srv_next(conn->rr);
	for (; req; req = rr_srv_next(conn->rr)) {
		if (xdr_callmsg(rr_sreq_xdr(req), msg)) {
			conn->cur = req;
			conn_take_call(conn, xprt, msg);
			conn->streak++;
			conn->last_use = ++conn->srv->use_seq;
			return TRUE;
		}
		/* Not an RPC call we can read: there is no XID to give an
		 * RPC reply to, only the transport's (V1-ERR-7). */
		rr_sreq_fail(conn->rr, req);
		rr_sreq_done(conn->rr, req);
	}
	return FALSE;
}

static enum xprt_stat conn_stat(SVCXPRT *xprt)
{
	struct svr_conn *conn = xprt->xp_p1;
	int n;

	conn_end_call(conn);
	conn->in_call = false;
	if (conn->dead)
		return XPRT_DIED;
	/* Not woken by the fd: what completed while the call ran. */
	n = rr_srv_collect(conn->rr);
	if (n < 0) {
		conn->dead = true;
		return XPRT_DIED;
	}
	if (!n) {
		conn->streak = 0;
		return XPRT_IDLE;
	}
	/* One grant's worth of calls per turn: a client that keeps its
	 * window full must not keep svc_run from the other connections.
	 * The fd stays readable, so the rest is taken after the poll. */
	if (conn->streak >= conn->srv->attr.credits) {
		conn->streak = 0;
		rr_srv_defer(conn->rr);
		return XPRT_IDLE;
	}
	return XPRT_MOREREQS;
}

/* A call's DDP policy in direction dir (rr_policy.h): its Upper-Layer
 * Binding entry, or nothing eligible (V1-GSS-3, V1-WC-2). */
static void call_policy(const struct call_id *id, enum rpcrdma_ulb_dir dir,
			struct rw_ddp_policy *pol)
{
	rr_policy_srv(id->prog, id->vers, id->proc, id->wrapped || id->unplaced,
		      dir, pol);
}

/* Decode the arguments of req, a call whose header named id, through
 * xprt's auth.  Touches only req: safe on any thread (rr_serve.h). */
static bool_t req_getargs(SVCXPRT *xprt, struct rr_sreq *req,
			  const struct call_id *id, xdrproc_t proc, void *where)
{
	SVCAUTH *auth = svc_xprt_auth(xprt);
	struct rw_ddp_policy pol;
	XDR *xdrs = rr_sreq_xdr(req);
	bool_t ok;

	/* Read chunks only at the items the binding names (V1-DDP-1); a
	 * second getargs finds the body begun and keeps the policy. */
	call_policy(id, RPCRDMA_ULB_CALL, &pol);
	rr_sreq_set_ddp(req, &pol);
	rr_begin_body(xdrs);
	if (auth)
		ok = SVCAUTH_UNWRAP(auth, xdrs, proc, where);
	else
		ok = proc(xdrs, where);
	/* A Read chunk the message never used is a malformed call. */
	if (ok && rr_sreq_args_done(req))
		ok = FALSE;
	if (!ok) /* the caller answers GARBAGE_ARGS and frees nothing */
		xdr_free(proc, where);
	return ok;
}

/* As svc_vc_reply: the results go through SVCAUTH_WRAP, so the RPC header
 * is encoded with xdr_void in their place.  rr_sreq_reply() serializes
 * with the connection's other users. */
static bool_t req_reply(SVCXPRT *xprt, struct rr_srv *rr, struct rr_sreq *req,
			const struct call_id *id, struct rpc_msg *msg)
{
	struct svc_xprt_reply rep;
	struct rr_sreq_enc enc = { .encode = svc_xprt_reply_encode,
				   .size_hint = svc_xprt_reply_size,
				   .arg = &rep,
				   .ddp = { .mode = RW_DDP_NONE } };

	svc_xprt_reply_init(&rep, xprt, msg);
	/* The results the binding names go into the Write chunks the call
	 * offered (V1-WC-2/3). */
	if (rep.has_results)
		call_policy(id, RPCRDMA_ULB_REPLY, &enc.ddp);
	msg->rm_xid = rr_sreq_xid(req);
	return rr_sreq_reply(rr, req, &enc) == 0;
}

static bool_t conn_getargs(SVCXPRT *xprt, xdrproc_t proc, void *where)
{
	struct svr_conn *conn = xprt->xp_p1;

	if (!conn->cur)
		return FALSE;
	return req_getargs(xprt, conn->cur, &conn->id, proc, where);
}

static bool_t conn_reply(SVCXPRT *xprt, struct rpc_msg *msg)
{
	struct svr_conn *conn = xprt->xp_p1;

	if (!conn->cur || conn->dead)
		return FALSE;
	return req_reply(xprt, conn->rr, conn->cur, &conn->id, msg);
}

static bool_t conn_freeargs(SVCXPRT *xprt, xdrproc_t proc, void *where)
{
	xdr_free(proc, where);
	return TRUE;
}

static void conn_unlink(struct svr_conn *conn)
{
	struct svr *srv = conn->srv;

	if (conn->prev)
		conn->prev->next = conn->next;
	else
		srv->conns = conn->next;
	if (conn->next)
		conn->next->prev = conn->prev;
	srv->nconns--;
	if (conn->fd >= 0 && (unsigned int)conn->fd < srv->nbyfd)
		srv->byfd[conn->fd] = NULL;
}

/* Make room for fd in srv->byfd (lock held). */
static bool byfd_room(struct svr *srv, int fd)
{
	unsigned int n = srv->nbyfd ? srv->nbyfd : 64;
	struct svr_conn **m;

	if ((unsigned int)fd < srv->nbyfd)
		return true;
	while (n <= (unsigned int)fd)
		n *= 2;
	m = realloc(srv->byfd, n * sizeof(*m));
	if (!m)
		return false;
	memset(m + srv->nbyfd, 0, (n - srv->nbyfd) * sizeof(*m));
	srv->byfd = m;
	srv->nbyfd = n;
	return true;
}

/* The last reference is gone: the connection with it. */
static void conn_put(struct svr_conn *conn)
{
	struct svr *srv = conn->srv;

	if (atomic_fetch_sub(&conn->refs, 1) != 1)
		return;
	/* Fences, disconnects and frees the connection and its memory. */
	rr_srv_destroy(conn->rr);
	free(conn);
	svr_put(srv);
}

/*
 * svc_run is done with the connection: it leaves the server's books and
 * its SVCXPRT goes; a backward CLIENT still holding it keeps the rest
 * (disconnected: its calls fail) until clnt_destroy().
 */
static void conn_destroy(SVCXPRT *xprt)
{
	struct svr_conn *conn = xprt->xp_p1;
	struct svr *srv = conn->srv;
	struct rr_srv_stats s;

	xprt_unregister(xprt);
	conn_end_call(conn);
	pthread_mutex_lock(&srv->lock);
	rr_srv_stats(conn->rr, &s);
	stats_add(&srv->st, &s);
	conn_unlink(conn);
	pthread_mutex_unlock(&srv->lock);
	rr_srv_disconnect(conn->rr);
	if (conn->gss_purged)
		svc_xprt_gss_purge(xprt);
	svc_xprt_free(xprt);
	conn->xprt = NULL;
	conn_put(conn);
}

/* ---- Backward CLIENTs (svc_rdma.h) --------------------------------------- */

struct svr_conn *svc_rdma_conn_hold(SVCXPRT *xprt)
{
	struct svr_conn *conn;

	if (!xprt || xprt->xp_ops != &conn_ops)
		return NULL;
	conn = xprt->xp_p1;
	atomic_fetch_add(&conn->refs, 1);
	return conn;
}

void svc_rdma_conn_release(struct svr_conn *conn)
{
	if (conn)
		conn_put(conn);
}

struct rr_srv *svc_rdma_conn_srv(const struct svr_conn *conn)
{
	return conn->rr;
}

const char *svc_rdma_conn_netid(const struct svr_conn *conn)
{
	return conn->srv->netid;
}

static void conn_props(const struct svr_conn *conn, struct rpcrdma_props *o)
{
	struct rw_props p;

	rr_srv_peer_props(conn->rr, &p);
	memset(o, 0, sizeof(*o));
	o->version = rr_srv_version(conn->rr);
	o->received = p.advertised != 0;
	o->rbsiz = p.val[RW_SP_RBSIZ];
	o->brs = p.val[RW_SP_BRS];
}

/* The connection's SVCGET_ requests, for it and for its detached calls. */
static bool_t conn_ctl(struct svr_conn *conn, const u_int rq, void *in)
{
	if (!in)
		return FALSE;
	switch (rq) {
	case SVCGET_RDMA_STATS:
		svr_stats(conn->srv, in);
		return TRUE;
	case SVCGET_RDMA_VERSION:
		*(unsigned int *)in = rr_srv_version(conn->rr);
		return TRUE;
	case SVCGET_RDMA_PEER_PROPS:
		conn_props(conn, in);
		return TRUE;
	default:
		return FALSE;
	}
}

static bool_t conn_control(SVCXPRT *xprt, const u_int rq, void *in)
{
	return conn_ctl(xprt->xp_p1, rq, in);
}

static const struct xp_ops conn_ops = {
	.xp_recv = conn_recv,
	.xp_stat = conn_stat,
	.xp_getargs = conn_getargs,
	.xp_reply = conn_reply,
	.xp_freeargs = conn_freeargs,
	.xp_destroy = conn_destroy,
};

static const struct xp_ops2 conn_ops2 = {
	.xp_control = conn_control,
};

/* ---- SVCXPRTs that never yield a message (listener, idle timer) --------- */

static enum xprt_stat nomsg_stat(SVCXPRT *xprt)
{
	return XPRT_IDLE;
}

static bool_t nomsg_args(SVCXPRT *xprt, xdrproc_t proc, void *where)
{
	return FALSE;
}

static bool_t nomsg_reply(SVCXPRT *xprt, struct rpc_msg *msg)
{
	return FALSE;
}

/* ---- Idle connections ---------------------------------------------------- */

/*
 * Closing a connection loses nothing when svc_run is not inside a call on
 * it, nothing else holds it (a detached call, a backward CLIENT) and it has
 * no call in progress or queued (rr_srv_idle).
 */
static bool conn_closable(struct svr_conn *conn)
{
	return !conn->in_call && atomic_load(&conn->refs) == 1 &&
	       rr_srv_idle(conn->rr);
}

/* Close conn on the server's own initiative (svc_run's thread, between
 * calls): its client sees a disconnect and connects again when it next
 * calls. */
static void conn_reap(struct svr_conn *conn, const char *why)
{
	struct svr *srv = conn->srv;
	char a[RR_ADDR_STRLEN];

	rr_addr_str(rr_srv_peer_addr(conn->rr), 1, a);
	rl_info("svc_rdma: connection from %s closed: %s", a, why);
	pthread_mutex_lock(&srv->lock);
	srv->st.conns_reaped++;
	pthread_mutex_unlock(&srv->lock);
	conn_destroy(conn->xprt);
}

/*
 * One tick of the idle timer.  A connection's idle time starts at the
 * first tick that finds no new call on it, so it is closed between
 * idle_timeout and idle_timeout plus a tick after its last call, and the
 * call path reads no clock for it (a system call in some VMs).
 */
static void reap_idle(struct svr *srv)
{
	struct svr_conn *conn, *next;
	int64_t now = rr_clock_ms();

	for (conn = srv->conns; conn; conn = next) {
		next = conn->next;
		if (conn->last_use != conn->seen_use) {
			conn->seen_use = conn->last_use;
			conn->idle_since = now;
		} else if (now - conn->idle_since < srv->idle_ms) {
			continue;
		} else if (conn_closable(conn)) {
			conn_reap(conn, "idle longer than idle_timeout");
		} else {
			conn->idle_since = now; /* busy: not idle after all */
		}
	}
}

/*
 * The idle timer is an SVCXPRT of its own, over a timerfd, because svc_run
 * has no other clock: it never yields a message; its xp_recv reaps.  It
 * belongs to the listener, which destroys it.
 */
static bool_t reaper_recv(SVCXPRT *xprt, struct rpc_msg *msg)
{
	uint64_t ticks;

	if (read(xprt->xp_fd, &ticks, sizeof(ticks)) == sizeof(ticks))
		reap_idle(xprt->xp_p1);
	return FALSE;
}

static void reaper_destroy(SVCXPRT *xprt)
{
	struct svr *srv = xprt->xp_p1;

	xprt_unregister(xprt);
	close(xprt->xp_fd);
	srv->reaper = NULL;
	svc_xprt_free(xprt);
}

static bool_t reaper_control(SVCXPRT *xprt, const u_int rq, void *in)
{
	return FALSE;
}

static const struct xp_ops reaper_ops = {
	.xp_recv = reaper_recv,
	.xp_stat = nomsg_stat,
	.xp_getargs = nomsg_args,
	.xp_reply = nomsg_reply,
	.xp_freeargs = nomsg_args,
	.xp_destroy = reaper_destroy,
};

static const struct xp_ops2 reaper_ops2 = {
	.xp_control = reaper_control,
};

/* A timerfd ticking four times per idle_timeout (at most once a minute,
 * at least every 250 ms), or -1 with errno set. */
static int reaper_timer(int64_t idle_ms)
{
	int64_t tick = idle_ms / 4;
	struct itimerspec its;
	int fd;

	tick = tick < 250 ? 250 : tick > 60000 ? 60000 : tick;
	its.it_interval.tv_sec = tick / 1000;
	its.it_interval.tv_nsec = (long)(tick % 1000) * 1000000;
	its.it_value = its.it_interval;
	fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (timerfd_settime(fd, 0, &its, NULL)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The idle timer of the listener lsn, registered with svc_run; NULL when
 * done (or none is wanted), else why it could not be, with errno set. */
static const char *reaper_new(struct svr *srv, SVCXPRT *lsn)
{
	int fd;

	if (!srv->idle_ms)
		return NULL;
	fd = reaper_timer(srv->idle_ms);
	if (fd < 0)
		return "no timer for idle connections (timerfd_create)";
	if (fd >= _rpc_dtablesize()) {
		close(fd);
		errno = EMFILE;
		return "the idle timer's fd is beyond what svc_run() polls";
	}
	srv->reaper =
		svc_xprt_new(fd, &reaper_ops, &reaper_ops2, srv, srv->netid,
			     (const struct sockaddr *)lsn->xp_ltaddr.buf, NULL);
	if (!srv->reaper) {
		close(fd);
		errno = ENOMEM;
		return "out of memory";
	}
	xprt_register(srv->reaper);
	return NULL;
}

/* ---- Detached calls (svc_rdma_detach) ------------------------------------ */

/*
 * One call taken off its connection: the detached SVCXPRT's xp_p1.  It
 * holds the connection (conn_put), so the rr_srv and the request stay
 * valid whatever svc_run does meanwhile; once the connection is gone a
 * reply fails (rr_sreq_reply: -ENOTCONN) and destroy still frees all.
 * Everything a later call on the connection would overwrite - the
 * request, its call_id (DDP policy), the verifier, the auth, the
 * addresses - is the handle's own.
 */
struct svr_call {
	struct svr_conn *conn;
	struct rr_sreq *req;
	struct call_id id;
	char verf[MAX_AUTH_BYTES];
};

static bool_t call_recv(SVCXPRT *xprt, struct rpc_msg *msg)
{
	return FALSE; /* never registered: svc_run never asks */
}

static enum xprt_stat call_stat(SVCXPRT *xprt)
{
	return XPRT_IDLE;
}

static bool_t call_getargs(SVCXPRT *xprt, xdrproc_t proc, void *where)
{
	struct svr_call *call = xprt->xp_p1;

	return req_getargs(xprt, call->req, &call->id, proc, where);
}

/*
 * Off svc_run's thread, the reply may have collected completions (Receives
 * among them) while it waited for a Send buffer, and the end of a request
 * frees pull budget that Calls waiting for it need: svc_run would see
 * neither, its fd being readable only for new events.  The kick makes its
 * next poll() return, and xp_recv's rr_srv_progress() takes it all.
 */
static void call_wake_svc(struct svr_call *call)
{
	rr_srv_defer(call->conn->rr);
}

static bool_t call_reply(SVCXPRT *xprt, struct rpc_msg *msg)
{
	struct svr_call *call = xprt->xp_p1;
	bool_t ok = req_reply(xprt, call->conn->rr, call->req, &call->id, msg);

	call_wake_svc(call);
	return ok;
}

/* Unanswered, the call is dropped as svc_vc drops one: counted in
 * rpcrdma_svc_stats.dropped, the client times out or resends. */
static void call_destroy(SVCXPRT *xprt)
{
	struct svr_call *call = xprt->xp_p1;

	rr_sreq_done(call->conn->rr, call->req);
	call_wake_svc(call);
	conn_put(call->conn);
	svc_xprt_free(xprt);
	free(call);
}

static bool_t call_control(SVCXPRT *xprt, const u_int rq, void *in)
{
	struct svr_call *call = xprt->xp_p1;

	return conn_ctl(call->conn, rq, in);
}

static const struct xp_ops call_ops = {
	.xp_recv = call_recv,
	.xp_stat = call_stat,
	.xp_getargs = call_getargs,
	.xp_reply = call_reply,
	.xp_freeargs = conn_freeargs,
	.xp_destroy = call_destroy,
};

static const struct xp_ops2 call_ops2 = {
	.xp_control = call_control,
};

/* The handle's own copies of what the next call on xprt overwrites: the
 * reply verifier _authenticate left and the auth that wraps the body
 * (AUTH_NONE/AUTH_SYS: libtirpc's stateless svc_auth_none). */
static void call_copy_auth(SVCXPRT *dst, struct svr_call *call,
			   const SVCXPRT *src)
{
	u_int len = src->xp_verf.oa_length;

	if (len > MAX_AUTH_BYTES)
		len = MAX_AUTH_BYTES;
	dst->xp_verf.oa_flavor = src->xp_verf.oa_flavor;
	dst->xp_verf.oa_length = len;
	if (len)
		memcpy(call->verf, src->xp_verf.oa_base, len);
	dst->xp_verf.oa_base = call->verf;
	SVC_XP_AUTH(dst) = SVC_XP_AUTH(src);
	svc_flags(dst) = svc_flags(src);
}

RPCRDMA_EXPORT SVCXPRT *svc_rdma_detach(SVCXPRT *xprt)
{
	struct svr_conn *conn;
	struct svr_call *call;
	SVCXPRT *dx;

	if (!xprt || xprt->xp_ops != &conn_ops)
		return NULL;
	conn = xprt->xp_p1;
	/* RPCSEC_GSS keeps its context and sequence window per xprt. */
	if (!conn->cur || conn->id.gss)
		return NULL;
	call = calloc(1, sizeof(*call));
	if (!call)
		return NULL;
	dx = svc_xprt_new(-1, &call_ops, &call_ops2, call, conn->srv->netid,
			  (const struct sockaddr *)xprt->xp_ltaddr.buf,
			  (const struct sockaddr *)xprt->xp_rtaddr.buf);
	if (!dx) {
		free(call);
		return NULL;
	}
	call_copy_auth(dx, call, xprt);
	call->conn = svc_rdma_conn_hold(xprt);
	call->req = conn->cur;
	call->id = conn->id;
	/* conn_stat and the next conn_recv no longer end it */
	conn->cur = NULL;
	return dx;
}

/*
 * An SVCXPRT for an accepted connection, registered.  Takes accepted: NULL
 * when done, else why it could not be (accepted is then destroyed).  The
 * fd svc_run will poll is checked here, where it exists: libtirpc silently
 * never polls one at or above _rpc_dtablesize() (the soft RLIMIT_NOFILE
 * when it first asked, kept; not capped at FD_SETSIZE: svc_run polls).
 */
static const char *conn_new(struct svr *srv, struct rt_conn *accepted)
{
	struct svr_conn *conn = calloc(1, sizeof(*conn));
	struct rr_srv_opts opts = srv->opts;
	struct rt_err err;
	bool room;
	int fd;

	opts.xcharext =
		rpcrdma_env_xcharext(&srv->env, rr_conn_peer_addr(accepted));
	if (conn)
		conn->rr = rr_srv_create(accepted, &opts, &err);
	if (!conn || !conn->rr) {
		rr_conn_refuse(accepted);
		free(conn);
		return "out of memory";
	}
	fd = rr_srv_fd(conn->rr);
	if (fd >= _rpc_dtablesize()) {
		rr_srv_destroy(conn->rr);
		free(conn);
		return "its fd is beyond what svc_run() polls (libtirpc's "
		       "descriptor table: RLIMIT_NOFILE at its first use)";
	}
	/* room first: a conn missing from byfd would never be served woken */
	pthread_mutex_lock(&srv->lock);
	room = byfd_room(srv, fd);
	pthread_mutex_unlock(&srv->lock);
	if (room)
		conn->xprt = svc_xprt_new(fd, &conn_ops, &conn_ops2, conn,
					  srv->netid,
					  rr_conn_local_addr(accepted),
					  rr_conn_peer_addr(accepted));
	if (!conn->xprt) {
		rr_srv_destroy(conn->rr);
		free(conn);
		return "out of memory";
	}
	conn->xprt->xp_verf.oa_base = conn->verf;
	atomic_init(&conn->refs, 1);
	conn->srv = srv;
	/* accepted counts as used: the newest is the last one closed */
	conn->last_use = ++srv->use_seq;
	conn->seen_use = conn->last_use;
	conn->idle_since = rr_clock_ms();
	pthread_mutex_lock(&srv->lock);
	conn->fd = fd; /* byfd only grows: the room made above is there */
	srv->byfd[fd] = conn;
	conn->next = srv->conns;
	if (srv->conns)
		srv->conns->prev = conn;
	srv->conns = conn;
	srv->nconns++;
	pthread_mutex_unlock(&srv->lock);
	atomic_fetch_add(&srv->refs, 1);
	xprt_register(conn->xprt);
	return NULL;
}

/* ---- Listening SVCXPRT --------------------------------------------------- */

static unsigned int peer_conns(const struct svr *srv, const struct sockaddr *pa)
{
	const struct svr_conn *conn;
	unsigned int n = 0;

	for (conn = srv->conns; conn; conn = conn->next)
		if (rr_addr_same_host(rr_srv_peer_addr(conn->rr), pa))
			n++;
	return n;
}

/* The connection of peer pa that svc_run used least recently among those
 * that can be closed, or NULL. */
static struct svr_conn *peer_lru(struct svr *srv, const struct sockaddr *pa)
{
	struct svr_conn *conn, *lru = NULL;

	for (conn = srv->conns; conn; conn = conn->next)
		if (rr_addr_same_host(rr_srv_peer_addr(conn->rr), pa) &&
		    (!lru || conn->last_use < lru->last_use) &&
		    conn_closable(conn))
			lru = conn;
	return lru;
}

/*
 * A client address at max_conns_per_peer connects again: close its least
 * recently used idle connection to make room.  The limit bounds what one
 * host holds, but one program that leaves connections open must not lock
 * the host's others out.  False when none of them is idle.
 */
static bool make_room(struct svr *srv, const struct sockaddr *pa)
{
	struct svr_conn *lru = peer_lru(srv, pa);

	if (!lru)
		return false;
	conn_reap(lru, "least recently used of its address, which is at "
		       "max_conns_per_peer and connected again");
	return true;
}

/*
 * Why accepted must be refused, or NULL (after make_room() if its address
 * is at its limit).  The transport has accepted it already
 * (rr_listener_accept() offers no earlier hook), so a refused connection
 * is closed at once: the client sees it end before its first reply.
 */
static const char *refusal(struct svr *srv, struct rt_conn *accepted)
{
	const struct sockaddr *pa = rr_conn_peer_addr(accepted);

	if (srv->nconns >= srv->attr.max_conns)
		return "connections at the limit (max_conns)";
	if (peer_conns(srv, pa) >= srv->attr.max_conns_per_peer &&
	    !make_room(srv, pa))
		return "connections from this address at the limit "
		       "(max_conns_per_peer), none of them idle";
	return NULL;
}

static void admit_count(struct svr *srv, bool accepted)
{
	pthread_mutex_lock(&srv->lock);
	if (accepted)
		srv->st.conns_accepted++;
	else
		srv->st.conns_rejected++;
	pthread_mutex_unlock(&srv->lock);
}

static void admit(struct svr *srv, struct rt_conn *accepted)
{
	const char *why = refusal(srv, accepted);
	char a[RR_ADDR_STRLEN];

	rr_addr_str(rr_conn_peer_addr(accepted), 1, a);
	if (why) {
		/* counted first: a peer that saw the refusal and then asks
		 * for the statistics finds it there */
		admit_count(srv, false);
		rr_conn_refuse(accepted);
	} else {
		why = conn_new(srv, accepted);
		admit_count(srv, !why);
	}
	if (!why)
		return;
	warn_rate(srv, "connection from %s refused: %s", a, why);
}

/* The listener itself failed (e.g. its device went away): stop polling
 * it; the application still owns it and destroys it. */
static void lsn_failed(SVCXPRT *xprt, const struct rt_err *err)
{
	rl_err("svc_rdma: listener on port %u stopped: %s", xprt->xp_port,
	       err->msg);
	xprt_unregister(xprt);
}

/*
 * The listener took the completion events of the connections it accepted
 * (they share its completion channels): serve the connections they were
 * for now, rather than have the listener write their fds and svc_run
 * poll again (3 system calls more per wake-up; a sleeping server's NULL
 * round trip was 8 % longer).  Having asked once, we must serve every fd
 * it returns (rt_listener_woken()), but only while it is still one of
 * our connections' (srv->byfd): svc_getreq_common() on anything else's
 * could block, and a connection gone has nothing left to serve.
 */
static void serve_woken(struct svr *srv)
{
	int fds[LSN_WOKEN];
	unsigned int n = rr_listener_woken(srv->lsn, fds, LSN_WOKEN), i;
	bool ours;

	for (i = 0; i < n; i++) {
		pthread_mutex_lock(&srv->lock);
		ours = (unsigned int)fds[i] < srv->nbyfd && srv->byfd[fds[i]];
		pthread_mutex_unlock(&srv->lock);
		if (ours)
			svc_getreq_common(fds[i]);
	}
}

static bool_t lsn_recv(SVCXPRT *xprt, struct rpc_msg *msg)
{
	struct svr *srv = xprt->xp_p1;
	struct rt_conn *nc[LSN_BATCH];
	struct rt_err err;
	int n, i;

	do {
		n = rr_listener_accept(srv->lsn, nc, LSN_BATCH, &err);
		if (n < 0) {
			serve_woken(srv);
			lsn_failed(xprt, &err);
			return FALSE;
		}
		if (err.code)
			warn_rate(srv, "%s", err.msg);
		for (i = 0; i < n; i++)
			admit(srv, nc[i]);
	} while (n == LSN_BATCH);
	serve_woken(srv);
	/* There is never an RPC message on the listener. */
	return FALSE;
}

static void lsn_destroy(SVCXPRT *xprt)
{
	struct svr *srv = xprt->xp_p1;
	struct svr_conn *conn, *next;

	xprt_unregister(xprt);
	rr_listener_destroy(srv->lsn);
	srv->lsn = NULL;
	srv->lsn_xprt = NULL;
	for (conn = srv->conns; conn; conn = next) {
		next = conn->next;
		if (conn->in_call)
			conn->dead = true; /* goes at its xp_stat */
		else
			conn_destroy(conn->xprt);
	}
	if (srv->reaper)
		reaper_destroy(srv->reaper);
	svc_xprt_free(xprt);
	svr_put(srv);
}

static bool_t lsn_control(SVCXPRT *xprt, const u_int rq, void *in)
{
	if (rq != SVCGET_RDMA_STATS || !in)
		return FALSE;
	svr_stats(xprt->xp_p1, in);
	return TRUE;
}

static const struct xp_ops lsn_ops = {
	.xp_recv = lsn_recv,
	.xp_stat = nomsg_stat,
	.xp_getargs = nomsg_args,
	.xp_reply = nomsg_reply,
	.xp_freeargs = nomsg_args,
	.xp_destroy = lsn_destroy,
};

static const struct xp_ops2 lsn_ops2 = {
	.xp_control = lsn_control,
};

/* ---- svc_rdma_create() ------------------------------------------------ */

static void conn_attr(const struct rpcrdma_attr *a, struct rt_conn_attr *ca)
{
	rr_conn_attr_init(ca);
	ca->credits = a->credits;
	ca->inline_send = a->inline_send;
	ca->inline_recv = a->inline_recv;
	ca->timeout_ms = a->connect_timeout_ms;
	/* Receives for the Replies of backward calls (V1-BD-5) */
	ca->recv_extra = rpcrdma_attr_bc(a);
	ca->recv_start = CONN_RECV_START;
	ca->reg_mode = a->reg_mode == RPCRDMA_REG_MW ? RT_REG_MW :
		       a->reg_mode == RPCRDMA_REG_MR ? RT_REG_MR :
						       RT_REG_AUTO;
	/* svc_run sleeps in poll(): a server always uses completion events,
	 * whatever comp_mode says. */
	ca->busy_poll = false;
	ca->cache_bytes =
		rpcrdma_env_size("RPCRDMA_CACHE_BYTES", ca->cache_bytes);
}

static struct svr *svr_new(const struct rpcrdma_attr *a, int family)
{
	struct svr *srv = calloc(1, sizeof(*srv));

	if (!srv)
		return NULL;
	atomic_init(&srv->refs, 1);
	pthread_mutex_init(&srv->lock, NULL);
	srv->attr = *a;
	rpcrdma_env_read(&srv->env);
	srv->opts.max_read_bytes = a->max_read_bytes;
	srv->opts.vers_min = a->version == RPCRDMA_VERSION_2 ? 2 : 1;
	srv->opts.vers_max = a->version == RPCRDMA_VERSION_1 ? 1 : 2;
	srv->opts.max_read_chunks = srv->env.max_read_chunks;
	srv->opts.max_write_chunks = srv->env.max_write_chunks;
	srv->opts.max_chunk_segs = srv->env.max_chunk_segs;
	srv->opts.no_remote_inv = srv->env.no_remote_inv;
	srv->opts.replay_bytes = srv->env.replay_bytes;
	srv->opts.bc_max = rpcrdma_attr_bc(a);
	srv->opts.poll_us = rpcrdma_attr_poll_us(a);
	srv->idle_ms = (int64_t)rpcrdma_attr_idle_s(a) * 1000;
	/* failed XIDs outlive the connections they failed on (V1-ERR-11) */
	srv->opts.xidlog = rr_xidlog_create();
	if (!srv->opts.xidlog) {
		free(srv);
		return NULL;
	}
	srv->netid = family == AF_INET6 ? "rdma6" : "rdma";
	return srv;
}

static SVCXPRT *svr_fail(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A server that never had a listener (svr_put() is for the others). */
static void svr_unmake(struct svr *srv)
{
	rr_xidlog_destroy(srv->opts.xidlog);
	free(srv);
}

/* rpc_createerr (RPC_SYSTEMERROR, code) and errno = code, and why in
 * words (clnt_spcreateerror() shows them). */
static SVCXPRT *svr_fail(int code, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rpcrdma_createerr_why(RPC_SYSTEMERROR, code, "svc_rdma_create", "%s",
			      msg);
	errno = code;
	return NULL;
}

/* RPCRDMA_STATS: the counters when the server is gone or at exit;
 * RPCRDMA_STATS_SOCKET: whenever asked. */
static void svr_stats_print(struct rpcrdma_stats_reg *reg, FILE *f)
{
	struct svr *srv = RPCRDMA_STATS_OWNER(reg, struct svr, stats_reg);
	struct rpcrdma_svc_stats st;

	svr_stats(srv, &st);
	rpcrdma_stats_print_svc(f, srv->stats_label, &st);
}

/* RPCRDMA_STATS_SOCKET: one line per live connection. */
static void svr_stats_conns(struct rpcrdma_stats_reg *reg, FILE *f)
{
	struct svr *srv = RPCRDMA_STATS_OWNER(reg, struct svr, stats_reg);
	char kind[RPCRDMA_STATS_LABEL_LEN + 8], label[RPCRDMA_STATS_LABEL_LEN];
	struct rpcrdma_stats_conn line;
	struct rr_srv_stats s;
	struct svr_conn *conn;

	snprintf(kind, sizeof(kind), "%s conn", srv->stats_label);
	pthread_mutex_lock(&srv->lock);
	for (conn = srv->conns; conn; conn = conn->next) {
		rr_srv_stats(conn->rr, &s);
		line = (struct rpcrdma_stats_conn){
			.version = rr_srv_version(conn->rr),
			.max_granted = s.max_granted,
			.inflight = s.inflight,
			.max_inflight = s.max_inflight,
			.requests = s.requests,
			.replies = s.replies_inline + s.replies_long,
			.read_bytes = s.read_bytes,
			.write_bytes = s.write_bytes,
			.reply_bytes = s.reply_bytes,
		};
		rr_srv_cache(conn->rr, &line.cache_bytes, &line.cache_released);
		rpcrdma_stats_label(label, sizeof(label), kind,
				    rr_srv_peer_addr(conn->rr), 0, 0);
		rpcrdma_stats_print_conn(f, label, &line);
	}
	pthread_mutex_unlock(&srv->lock);
}

/* The listening SVCXPRT for lsn, registered with svc_run. */
static SVCXPRT *lsn_new(struct svr *srv, const struct sockaddr *laddr)
{
	struct sockaddr_storage bound;
	uint16_t port = htons(rr_listener_port(srv->lsn));
	SVCXPRT *xprt;

	memcpy(&bound, laddr, svc_xprt_sa_len(laddr));
	if (laddr->sa_family == AF_INET6)
		((struct sockaddr_in6 *)&bound)->sin6_port = port;
	else
		((struct sockaddr_in *)&bound)->sin_port = port;
	xprt = svc_xprt_new(rr_listener_fd(srv->lsn), &lsn_ops, &lsn_ops2, srv,
			    srv->netid, (struct sockaddr *)&bound, NULL);
	if (!xprt)
		return NULL;
	srv->lsn_xprt = xprt;
	xprt_register(xprt);
	rpcrdma_stats_label(srv->stats_label, sizeof(srv->stats_label), "svc",
			    (struct sockaddr *)&bound, 0, 0);
	rpcrdma_stats_reg_init(&srv->stats_reg, svr_stats_print);
	srv->stats_reg.conns = svr_stats_conns;
	rpcrdma_stats_track(&srv->stats_reg);
	return xprt;
}

RPCRDMA_EXPORT SVCXPRT *svc_rdma_create(const struct sockaddr *laddr,
					const struct rpcrdma_attr *attr)
{
	struct rpcrdma_attr a;
	struct rt_conn_attr ca;
	struct rt_err err;
	struct svr *srv;
	const char *why;
	SVCXPRT *xprt;
	int fd, code;

	if (!laddr ||
	    (laddr->sa_family != AF_INET && laddr->sa_family != AF_INET6))
		return svr_fail(EAFNOSUPPORT,
				"an IPv4 or IPv6 address is needed");
	if (attr)
		a = *attr;
	else
		memset(&a, 0, sizeof(a));
	rpcrdma_attr_fill(&a);
	if (rpcrdma_attr_check(&a))
		return svr_fail(
			EINVAL,
			"invalid struct rpcrdma_attr (reserved fields must be zero, enums in range, bc_credits at most 256, poll_us and idle_timeout at most their _MAX)");
	srv = svr_new(&a, laddr->sa_family);
	if (!srv)
		return svr_fail(ENOMEM, "out of memory");
	conn_attr(&a, &ca);
	srv->lsn = rr_listen(laddr, LSN_BACKLOG, &ca, &err);
	if (!srv->lsn) {
		svr_unmake(srv);
		return svr_fail(err.code, "%s", err.msg);
	}
	fd = rr_listener_fd(srv->lsn);
	if (fd >= _rpc_dtablesize()) {
		rr_listener_destroy(srv->lsn);
		svr_unmake(srv);
		return svr_fail(
			EMFILE,
			"listener fd %d is beyond what svc_run() polls (%d)",
			fd, _rpc_dtablesize());
	}
	xprt = lsn_new(srv, laddr);
	if (!xprt) {
		rr_listener_destroy(srv->lsn);
		svr_unmake(srv);
		return svr_fail(ENOMEM, "out of memory");
	}
	why = reaper_new(srv, xprt);
	if (why) {
		code = errno;
		lsn_destroy(xprt);
		return svr_fail(code, "%s", why);
	}
	return xprt;
}
