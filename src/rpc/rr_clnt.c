/*
 * rr_clnt.c - the requester state of one CLIENT: the connection to its
 * server and how it is replaced, and the control functions of rr_call.h.
 *
 * Connections are counted references (struct rr_conn): the rr_clnt holds
 * one on its current connection, every call one on the connection it was
 * sent on, a polling leader one on the connection it polls.  A connection
 * found dead stops being current at once - its calls are failed, the next
 * call connects anew (with one credit and fresh registrations, V1-CR-6,
 * RFC 8166 §4.5.3-4.5.5) - and it is destroyed when the last reference goes, so
 * that no call can touch a freed connection while it fences its memory.
 *
 * Connecting happens without the lock held (it can take the whole connect
 * timeout); threads that need a connection meanwhile wait, each with its
 * own deadline.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/rr_call_priv.h"
#include "rpc/rr_util.h"

/* ---- Connections -------------------------------------------------------- */

/* ---- Versions (v2-05 §8) ---------------------------------------------- */

/*
 * The version a new connection speaks.  A v2 Call that probes the server
 * (auto) or insists on v2 is at most 1024 octets until a Reply settles the
 * version (V2-NEG-2); a v1 connection is plain RFC 8166, its thresholds
 * those of its RFC 8797 private data.
 */
/* The version and inline sizes in force, and why they changed (state):
 * "probe", "chosen", "settled", "fallback" or "props". */
static void trace_vers(const struct rr_conn *conn, const char *state)
{
	TR_EVENT(version, conn->trace_id, 0,
		 "vers=%u state=%s call_inline=%u reply_inline=%u", conn->vers,
		 state, conn->call_inline, conn->reply_inline);
}

static void conn_init_vers(struct rr_clnt *rr, struct rr_conn *conn)
{
	const struct rw_cm_inline *inl = rt_conn_inline(conn->rt);
	bool v2 = rr->opts.vers == RR_VERS_2 ||
		  (rr->opts.vers == RR_VERS_AUTO &&
		   !rr_vcache_lacks_v2(rr_clnt_peer(rr)));

	rw_props_init(&conn->peer);
	conn->vers = v2 ? RW_VERS_2 : RW_VERS_1;
	conn->negotiating = v2 && rr->opts.vers == RR_VERS_AUTO;
	conn->call_inline = inl->send;
	if (v2 && conn->call_inline > RW_V1_INLINE_DEFAULT)
		conn->call_inline = RW_V1_INLINE_DEFAULT;
	conn->reply_inline = inl->recv;
	if (!v2 && rr->opts.vers == RR_VERS_AUTO)
		rr->st.vers_fallbacks++; /* remembered: v1 at once */
	trace_vers(conn, conn->negotiating ? "probe" : "chosen");
}

/* What a v2 peer accepts inline: at least 4096 (V2-INL-2), its Receive
 * Buffer Size once it says so (V2-PROP-8, AMB-V2-17), never more than
 * RFC 8797 and our Send buffers allow. */
static void conn_v2_limits(struct rr_clnt *rr, struct rr_conn *conn)
{
	const struct rw_cm_private *pd = rt_conn_peer_private(conn->rt);
	uint32_t send = RW_V2_INLINE_DEFAULT;

	if (pd->valid && pd->recv_size > send)
		send = pd->recv_size;
	if (conn->peer.advertised & RW_SP_BIT(RW_SP_RBSIZ))
		send = rw_props_send_limit(&conn->peer, UINT32_MAX);
	conn->call_inline = rt_conn_set_inline_send(conn->rt, send);
	/* we post Receives of inline_recv, never below 4096 in v2 */
	conn->reply_inline = rr->opts.conn.inline_recv;
}

void rr_conn_settled(struct rr_clnt *rr, struct rr_conn *conn)
{
	if (conn->known)
		return;
	conn->known = true;
	conn->negotiating = false;
	if (conn->vers == RW_VERS_2)
		conn_v2_limits(rr, conn);
	else
		conn->call_inline = rt_conn_inline(conn->rt)->send;
	trace_vers(conn, "settled");
}

void rr_conn_fall_back(struct rr_clnt *rr, struct rr_conn *conn)
{
	if (!conn->negotiating)
		return;
	conn->negotiating = false;
	conn->fell_back = true;
	conn->vers = RW_VERS_1;
	rr->st.vers_fallbacks++;
	trace_vers(conn, "fallback");
}

void rr_conn_oneway_done(struct rr_conn *conn, const struct rr_call *call)
{
	if (!conn->oneway_credit || call->seq <= conn->oneway_seq || conn->lost)
		return;
	conn->oneway_credit = false;
	rw_credits_cancel(rt_conn_credits(conn->rt));
}

/*
 * Our properties, sent once v2 is settled (AMB-V2-9): the Receive Buffer
 * Size we post and whether backward Calls may come (V2-OPS-4/5).  It is a
 * one-way message, so it holds a credit until a Reply to a later Call
 * arrives (AMB-V2-6); with fewer than two credits free it waits, since it
 * must never take the credit the next Call needs.
 */
static void conn_send_connprop(struct rr_clnt *rr, struct rr_conn *conn)
{
	struct rw_credits *credits = rt_conn_credits(conn->rt);
	struct rw_prop props[RW_SP_NR];
	uint8_t data[4 * RW_SP_NR];
	struct rw_props local;
	struct rt_sbuf *b;
	struct rt_err err;
	struct rw_hdr h;
	size_t n;

	if (conn->vers != RW_VERS_2 || !conn->known || conn->connprop_sent ||
	    conn->lost || rw_credits_window(credits) < 2)
		return;
	b = rt_sbuf_get(conn->rt, &err);
	if (!b)
		return;
	rw_props_init(&local);
	local.val[RW_SP_RBSIZ] = rr->opts.conn.inline_recv;
	local.val[RW_SP_BRS] = rr->opts.conn.recv_extra ? RW2_BRS_INLINE :
							  RW2_BRS_NONE;
	rw_hdr_init(&h, RW_VERS_2, RW2_CONNPROP, rr->ctl_xid++,
		    credits->requested);
	rw_props_start(&local, &h.props, &h.subset1, props, data);
	n = rw_encode_call(&h, rt_sbuf_data(b), rt_sbuf_size(b));
	rw_credits_take(credits);
	if (!n ||
	    rt_post_send(conn->rt, b, (uint32_t)n, NULL, 0, 0, 0, 0, &err)) {
		if (!n)
			rt_sbuf_put(conn->rt, b);
		rw_credits_cancel(credits);
		conn->connprop_sent = true; /* not again */
		return;
	}
	conn->connprop_sent = true;
	conn->oneway_credit = true;
	conn->oneway_seq = conn->seq;
	rr->st.connprops++;
}

/* The server's CONNPROP or UPDPROP (a backward-direction one-way message,
 * AMB-V2-6): its properties, and what they allow us to send. */
void rr_conn_peer_props(struct rr_clnt *rr, struct rr_conn *conn,
			const struct rw_hdr *h)
{
	enum rw_reason why;

	if (h->proc == RW2_CONNPROP)
		why = rw_props_initial(&conn->peer, RW_PC_V2, &h->props,
				       &h->subset1);
	else
		why = rw_props_update(&conn->peer, RW_PC_V2, &h->props);
	if (why) {
		rr->st.discarded++;
		return;
	}
	rr->st.peer_props++;
	if (conn->known && conn->vers == RW_VERS_2) {
		conn_v2_limits(rr, conn);
		trace_vers(conn, "props");
	}
}

/* Connect with the lock released; the connect timeout is cut to what is
 * left of the caller's deadline. */
struct rr_conn *rr_conn_open(struct rr_clnt *rr, int64_t deadline,
			     struct rt_err *err)
{
	struct rt_conn_attr attr = rr->opts.conn;
	int64_t left = deadline - rr_now_ms();
	struct rr_conn *conn = calloc(1, sizeof(*conn));

	if (!conn) {
		rt_err_set(err, ENOMEM, "out of memory");
		return NULL;
	}
	attr.busy_poll = rr->want_busy;
	if (left < attr.timeout_ms)
		attr.timeout_ms = left > 0 ? (uint32_t)left : 1;
	conn->rt = rt_connect((const struct sockaddr *)&rr->dst, &attr, err);
	if (!conn->rt) {
		free(conn);
		return NULL;
	}
	conn->trace_id = rt_conn_trace_id(conn->rt);
	conn->refs = 1; /* the rr_clnt's, as its current connection */
	conn->busy_poll = attr.busy_poll;
	conn_init_vers(rr, conn);
	return conn;
}

/* Fail every call still waiting on conn; orphans are finished here. */
void rr_conn_lost(struct rr_clnt *rr, struct rr_conn *conn)
{
	const struct rt_err *why;
	unsigned int i;

	if (conn->lost)
		return;
	conn->lost = true;
	rr->st.conn_losses++;
	/* Lost while the server had not answered our v2 probe, or right
	 * after its ERR_VERS: speak v1 next time (V2-NEG-6, S-7). */
	if (rr->opts.vers == RR_VERS_AUTO && conn->seq &&
	    (conn->negotiating || (conn->fell_back && !conn->known)))
		rr_vcache_note(rr_clnt_peer(rr), rr->opts.v2_retry_s);
	why = rt_conn_error(conn->rt);
	for (i = 0; i < RR_XID_BUCKETS; i++) {
		struct rr_call *call = rr->xids[i], *next;

		for (; call; call = next) {
			next = call->next;
			if (call->conn == conn)
				rr->call_fail(rr, call, RR_CANTRECV,
					      why->code ? why->code :
							  ECONNRESET,
					      why->msg);
		}
	}
	rr_wake_all(rr);
	if (conn == rr->conn)
		rr->bc_conn_changed(rr);
}

/* The current connection stops being current. */
static void conn_detach(struct rr_clnt *rr)
{
	struct rr_conn *conn = rr->conn;

	rr->conn = NULL;
	if (conn)
		rr_conn_put(rr, conn);
}

/* Calls the layer finishes by itself (abandoned) that refer to conn. */
static unsigned int orphans_on(struct rr_clnt *rr, const struct rr_conn *conn)
{
	unsigned int i, n = 0;
	struct rr_call *call;

	for (i = 0; i < RR_XID_BUCKETS; i++)
		for (call = rr->xids[i]; call; call = call->next)
			n += call->conn == conn && call->state == RR_S_ORPHAN;
	return n;
}

/* An idle connection (no call but abandoned ones) in the wrong completion
 * or registration mode is replaced. */
static bool conn_wrong_mode(struct rr_clnt *rr, const struct rr_conn *conn)
{
	return (conn->busy_poll != rr->want_busy || conn->retire) &&
	       conn->refs == 1 + orphans_on(rr, conn);
}

void rr_conn_retire(struct rr_clnt *rr, struct rr_conn *conn)
{
	rt_conn_disconnect(conn->rt);
	rr_drain(rr, conn);
	rr_conn_lost(rr, conn);
}

static bool not_connecting(void *arg)
{
	return !((struct rr_clnt *)arg)->connecting;
}

/* Connect a new current connection; the lock is released meanwhile. */
static int conn_replace(struct rr_clnt *rr, int64_t deadline,
			struct rr_result *res)
{
	struct rr_conn *conn;
	struct rt_err err;

	rr->connecting = true;
	pthread_mutex_unlock(&rr->lock);
	conn = rr_conn_open(rr, deadline, &err);
	pthread_mutex_lock(&rr->lock);
	rr->connecting = false;
	rr_wake_all(rr);
	if (!conn) {
		rr_res_set(res, RR_CANTSEND, err.code, "%s", err.msg);
		return -1;
	}
	rr->st.connects++;
	conn_detach(rr);
	rr->conn = conn;
	rr->bc_conn_changed(rr);
	return 0;
}

struct rr_conn *rr_conn_get(struct rr_clnt *rr, int64_t deadline,
			    struct rr_result *res)
{
	struct rr_conn *conn;

	for (;;) {
		conn = rr->conn;
		if (conn && !conn->lost)
			rr_drain(rr, conn); /* notice a death first */
		if (conn && !conn->lost && !conn_wrong_mode(rr, conn)) {
			conn_send_connprop(rr, conn);
			conn->refs++;
			return conn;
		}
		if (conn && !conn->lost)
			rr_conn_retire(rr, conn);
		if (conn)
			conn_detach(rr);
		if (rr->connecting) {
			if (!rr_wait(rr, NULL, not_connecting, rr, deadline,
				     NULL)) {
				char a[RT_ADDR_STRLEN];

				rr_res_set(
					res, RR_CANTSEND, ETIMEDOUT,
					"timed out waiting for the connection to %s",
					rt_addr_str(rr_clnt_peer(rr), 1, a));
				return NULL;
			}
			continue;
		}
		if (conn_replace(rr, deadline, res))
			return NULL;
	}
}

/* The client goes: its current connection ends, abandoned calls are fenced
 * and finished on the way (lock held). */
void rr_conn_end(struct rr_clnt *rr)
{
	struct rr_conn *conn = rr->conn;

	if (conn) {
		rr_conn_retire(rr, conn);
		conn_detach(rr);
	}
}

/* ---- Control ------------------------------------------------------------ */

/* The current connection if it is usable (lock held). */
static struct rr_conn *current(struct rr_clnt *rr)
{
	return rr->conn && !rr->conn->lost ? rr->conn : NULL;
}

int rr_clnt_fd(struct rr_clnt *rr)
{
	int fd;

	pthread_mutex_lock(&rr->lock);
	fd = rr->conn ? rt_conn_fd(rr->conn->rt) : -1;
	pthread_mutex_unlock(&rr->lock);
	return fd;
}

enum rt_reg_mode rr_clnt_reg_mode(struct rr_clnt *rr)
{
	enum rt_reg_mode m;

	pthread_mutex_lock(&rr->lock);
	m = current(rr) ? rt_reg_mode(rr->conn->rt) : rr->opts.conn.reg_mode;
	pthread_mutex_unlock(&rr->lock);
	return m;
}

/*
 * A connection that cannot change its mode now (exposures live, or it
 * advertised Send With Invalidate, which only windows can honour) is
 * replaced by the next call that finds it idle.  A mode the device cannot
 * do is refused.
 */
int rr_clnt_set_reg_mode(struct rr_clnt *rr, enum rt_reg_mode m,
			 struct rt_err *err)
{
	int ret = 0;

	pthread_mutex_lock(&rr->lock);
	if (current(rr)) {
		ret = rt_reg_set_mode(rr->conn->rt, m, err);
		if (ret == -EBUSY || ret == -EINVAL) {
			rr->conn->retire = true;
			ret = 0;
		}
	}
	if (!ret)
		rr->opts.conn.reg_mode = m;
	pthread_mutex_unlock(&rr->lock);
	return ret;
}

bool rr_clnt_busy_poll(struct rr_clnt *rr)
{
	bool b;

	pthread_mutex_lock(&rr->lock);
	b = current(rr) ? rr->conn->busy_poll : rr->want_busy;
	pthread_mutex_unlock(&rr->lock);
	return b;
}

void rr_clnt_set_busy_poll(struct rr_clnt *rr, bool busy)
{
	pthread_mutex_lock(&rr->lock);
	rr->want_busy = busy;
	pthread_mutex_unlock(&rr->lock);
}

uint32_t rr_clnt_credits(struct rr_clnt *rr, uint32_t *inflight)
{
	const struct rw_credits *credits;
	uint32_t g = 0, n = 0;

	pthread_mutex_lock(&rr->lock);
	if (current(rr)) {
		credits = rt_conn_credits(rr->conn->rt);
		g = credits->established ? credits->granted : 1;
		n = credits->inflight;
	}
	pthread_mutex_unlock(&rr->lock);
	if (inflight)
		*inflight = n;
	return g;
}

uint32_t rr_clnt_version(struct rr_clnt *rr, bool *known)
{
	uint32_t v = 0;
	bool is_known = false;

	pthread_mutex_lock(&rr->lock);
	if (current(rr)) {
		v = rr->conn->vers;
		is_known = rr->conn->known;
	}
	pthread_mutex_unlock(&rr->lock);
	if (known)
		*known = is_known;
	return v;
}

bool rr_clnt_peer_props(struct rr_clnt *rr, struct rw_props *out)
{
	bool ok;

	pthread_mutex_lock(&rr->lock);
	ok = current(rr) != NULL;
	if (ok)
		*out = rr->conn->peer;
	pthread_mutex_unlock(&rr->lock);
	return ok;
}

const struct sockaddr *rr_clnt_peer(const struct rr_clnt *rr)
{
	return (const struct sockaddr *)&rr->dst;
}

void rr_clnt_stats(struct rr_clnt *rr, struct rr_stats *out)
{
	pthread_mutex_lock(&rr->lock);
	*out = rr->st;
	if (rr->conn)
		rr_conn_stats_add(&out->conn, rr->conn->rt);
	pthread_mutex_unlock(&rr->lock);
}

void rr_clnt_conn_stats(struct rr_clnt *rr, struct rt_stats *out)
{
	pthread_mutex_lock(&rr->lock);
	if (rr->conn)
		rt_conn_stats(rr->conn->rt, out);
	else
		memset(out, 0, sizeof(*out));
	pthread_mutex_unlock(&rr->lock);
}
