/*
 * rt_cm.c - the connection manager side of a connection: the client's
 * address/route resolution and connect with one deadline, the listener and
 * its accept, and the CM events that end a connection later on.
 *
 * Nothing here blocks without a bound: the client waits on its event
 * channel fd with poll() and the remaining time; the listener's processing
 * reads its channel without blocking.  Every failure names the address and
 * the cause.
 *
 * Accepted connections report their CM events on the listener's channel
 * (rdma_cm gives a child id the listener's channel), so the listener marks
 * them dead.  It may do so from another thread than the one using the
 * connection: it only touches the connection's atomic flags, its QP (moving
 * it to the error state is thread-safe in verbs) and its wake-up fd, and
 * only while the connection is linked, under the listener's lock; a
 * connection unlinks itself before freeing anything.
 *
 * Their completion events come the same way: the listener keeps one
 * completion channel per device and every connection it accepts there
 * makes its CQ on it, so that an accepted connection needs no fd but its
 * wake-up eventfd.  Whoever finds a channel readable - the listener's
 * processing, or a connection waiting by itself (rt_cq_wait) - takes the
 * events and asks each connection, still linked, to re-arm its CQ; it
 * wakes it through its eventfd unless the listener's caller serves it at
 * once (rt_listener_woken) and no thread waits for it; and it acknowledges
 * every event whatever became of the connection, since ibv_destroy_cq()
 * waits for that.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "transport/rt_priv.h"
#include "transport/rt_cq.h"
#include "transport/rt_setup.h"
#include "transport/rt_state.h"

#define RT_LISTEN_BACKLOG 16
#define RT_CHAN_BUDGET	  64 /* completion events taken per call */
#define RT_CM_EVERY	  8  /* rt_listener_process() with completions */

static int64_t cm_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -1 : 0;
}

/* ---- Client ---------------------------------------------------------- */

struct rt_connecting {
	struct rt_conn *conn;
	const struct sockaddr *dst;
	int64_t start;
	int64_t deadline;
	char addr[RT_ADDR_STRLEN];     /* host only */
	char addrport[RT_ADDR_STRLEN]; /* host:port */
};

/*
 * Wait for the next CM event until the deadline.  Returns 0 with *evp set,
 * or -ETIMEDOUT.  A poll failure other than EINTR is reported as such.
 */
static int wait_cm_event(struct rt_connecting *attempt,
			 struct rdma_cm_event **evp)
{
	struct pollfd pfd = { .fd = attempt->conn->cm_ch->fd,
			      .events = POLLIN };
	int64_t left;

	for (;;) {
		if (!rdma_get_cm_event(attempt->conn->cm_ch, evp))
			return 0;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		left = attempt->deadline - cm_now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
			return -errno;
	}
}

static int elapsed(const struct rt_connecting *attempt)
{
	return (int)(cm_now_ms() - attempt->start);
}

/* A failure of step what with errno code; "no such device" means the
 * address is not on an RDMA device, which is what the user must hear. */
static int step_failed(const struct rt_connecting *attempt, const char *what,
		       int code, const char *detail, struct rt_err *err)
{
	if (code == ENODEV)
		return rt_err_set(err, ENODEV,
				  "no RDMA device for address %s (%s)",
				  attempt->addr, what);
	if (detail)
		return rt_err_set(err, code, "%s: %s (%s)", what,
				  strerror(code), detail);
	return rt_err_set(err, code, "%s: %s", what, strerror(code));
}

/* Wait for want; anything else is a failure described with what. */
static int expect_event(struct rt_connecting *attempt,
			enum rdma_cm_event_type want, const char *what,
			struct rt_err *err)
{
	struct rdma_cm_event *ev;
	int ret, status;
	enum rdma_cm_event_type got;

	ret = wait_cm_event(attempt, &ev);
	if (ret == -ETIMEDOUT)
		return rt_err_set(err, ETIMEDOUT, "%s: timed out after %d ms",
				  what, elapsed(attempt));
	if (ret)
		return step_failed(attempt, what, -ret, NULL, err);
	got = ev->event;
	status = ev->status;
	rdma_ack_cm_event(ev);
	if (got == want)
		return 0;
	if (status < 0)
		status = -status;
	return step_failed(attempt, what, status ? status : EIO,
			   rdma_event_str(got), err);
}

static int resolve(struct rt_connecting *attempt, struct rt_err *err)
{
	struct rt_conn *conn = attempt->conn;
	char what[128];
	int ret;

	snprintf(what, sizeof(what), "address %s not resolved", attempt->addr);
	if (rdma_resolve_addr(conn->id, NULL, (struct sockaddr *)attempt->dst,
			      (int)conn->attr.timeout_ms))
		return step_failed(attempt, what, errno, NULL, err);
	ret = expect_event(attempt, RDMA_CM_EVENT_ADDR_RESOLVED, what, err);
	if (ret)
		return ret;
	if (!conn->id->verbs)
		return rt_err_set(err, ENODEV, "no RDMA device for address %s",
				  attempt->addr);
	snprintf(what, sizeof(what), "route resolution failed for %s",
		 attempt->addr);
	if (rdma_resolve_route(conn->id,
			       (int)(attempt->deadline - cm_now_ms()) > 0 ?
				       (int)(attempt->deadline - cm_now_ms()) :
				       1))
		return step_failed(attempt, what, errno, NULL, err);
	return expect_event(attempt, RDMA_CM_EVENT_ROUTE_RESOLVED, what, err);
}

/* IB CM reject reasons that a client can meet (IBTA 12.6.7.2). */
static const char *reject_reason(int status, char *buf, size_t len)
{
	switch (status) {
	case 1:
	case 2:
	case 3:
	case 4:
		return "no resources at the server";
	case 8:
		return "no listener on that port";
	case 26:
		return "timed out waiting for the server";
	case 28:
		return "rejected by the server";
	default:
		snprintf(buf, len, "reject reason %d", status);
		return buf;
	}
}

/* The outcome of rdma_connect(): ESTABLISHED with the server's private
 * data, or why not. */
static int connect_result(struct rt_connecting *attempt, struct rt_err *err)
{
	struct rt_conn *conn = attempt->conn;
	struct rdma_cm_event *ev;
	char rbuf[32];
	int ret, status;

	ret = wait_cm_event(attempt, &ev);
	if (ret == -ETIMEDOUT)
		return rt_err_set(err, ETIMEDOUT,
				  "connection to %s timed out after %d ms",
				  attempt->addrport, elapsed(attempt));
	if (ret)
		return rt_err_set(err, -ret, "connection to %s: %s",
				  attempt->addrport, strerror(-ret));
	status = ev->status;
	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		rt_conn_set_peer_private(conn, ev->param.conn.private_data,
					 ev->param.conn.private_data_len);
		ret = 0;
		break;
	case RDMA_CM_EVENT_REJECTED:
		ret = rt_err_set(err, ECONNREFUSED,
				 "connection refused by %s: %s",
				 attempt->addrport,
				 reject_reason(status, rbuf, sizeof(rbuf)));
		break;
	case RDMA_CM_EVENT_UNREACHABLE:
		ret = rt_err_set(err, EHOSTUNREACH, "%s unreachable: %s",
				 attempt->addrport,
				 strerror(status < 0 ? -status : ETIMEDOUT));
		break;
	default:
		ret = rt_err_set(err, ECONNABORTED,
				 "connection to %s failed: %s (status %d)",
				 attempt->addrport, rdma_event_str(ev->event),
				 status);
		break;
	}
	rdma_ack_cm_event(ev);
	return ret;
}

int rt_dev_present(struct rt_err *err)
{
	struct ibv_device **list;
	int n = 0;

	list = ibv_get_device_list(&n);
	if (list)
		ibv_free_device_list(list);
	if (list && n > 0)
		return 0;
	return rt_err_set(err, ENODEV, "no RDMA device on this host");
}

/* rdma_create_event_channel() failed: most often because the host has no
 * RDMA device at all, which is what the user must hear. */
static int cm_open_failed(struct rt_err *err)
{
	int code = errno ? errno : ENODEV;

	if (rt_dev_present(err))
		return -ENODEV;
	return rt_err_set(err, code,
			  "cannot open the RDMA connection manager: %s",
			  strerror(code));
}

static int client_channel(struct rt_conn *conn, struct rt_err *err)
{
	conn->cm_ch = rdma_create_event_channel();
	if (!conn->cm_ch || nonblock(conn->cm_ch->fd))
		return cm_open_failed(err);
	if (rdma_create_id(conn->cm_ch, &conn->id, conn, RDMA_PS_TCP))
		return rt_err_set(err, errno, "cannot create an RDMA CM id: %s",
				  strerror(errno));
	return 0;
}

static int check_dst(const struct sockaddr *dst, struct rt_err *err)
{
	if (!dst || (dst->sa_family != AF_INET && dst->sa_family != AF_INET6))
		return rt_err_set(err, EAFNOSUPPORT,
				  "RDMA needs an IPv4 or IPv6 address");
	return 0;
}

static int client_connect(struct rt_connecting *attempt, struct rt_err *err)
{
	struct rt_conn *conn = attempt->conn;
	struct rdma_cm_id *id;
	struct rdma_conn_param p;
	int ret;

	ret = client_channel(conn, err);
	if (!ret)
		ret = resolve(attempt, err);
	if (ret)
		return ret;
	/* rt_conn_setup() owns the id from here on, whatever happens. */
	id = conn->id;
	conn->id = NULL;
	ret = rt_conn_setup(conn, id, err);
	if (ret)
		return ret;
	if (epoll_ctl(conn->epfd, EPOLL_CTL_ADD, conn->cm_ch->fd,
		      &(struct epoll_event){ .events = EPOLLIN,
					     .data.fd = conn->cm_ch->fd }))
		return rt_err_set(err, errno, "cannot poll the CM channel");
	rt_conn_cm_params(conn, &p);
	rt_conn_ack_timeout(conn);
	if (rdma_connect(conn->id, &p))
		return rt_err_set(err, errno, "connection to %s: %s",
				  attempt->addrport, strerror(errno));
	ret = connect_result(attempt, err);
	if (ret)
		return ret;
	rt_conn_query_rd_atomic(conn);
	rw_credits_reset(&conn->credits);
	conn->up = true;
	return 0;
}

/* What was agreed, for the trace: "connect" on the client, "accept" on
 * the server (rpcrdma-trace(7)). */
#define TRACE_ESTABLISHED(event, conn, peer)                                \
	TR_EVENT(event, (conn)->trace_id, 0,                                \
		 "peer=%s dev=%s inline_send=%u inline_recv=%u credits=%u " \
		 "remote_inv=%d ord=%u ird=%u",                             \
		 peer, (conn)->devname, (conn)->inl.send, (conn)->inl.recv, \
		 (conn)->attr.credits, (conn)->inl.peer_remote_inv,         \
		 (conn)->ord, (conn)->ird)

/* A connection to dst about to be made, its deadline running. */
static int connecting_init(struct rt_connecting *attempt,
			   const struct sockaddr *dst,
			   const struct rt_conn_attr *attr, struct rt_err *err)
{
	int ret;

	rt_err_clear(err);
	ret = check_dst(dst, err);
	if (ret)
		return ret;
	attempt->dst = dst;
	attempt->conn = rt_conn_alloc(attr);
	if (!attempt->conn)
		return rt_err_set(err, ENOMEM, "out of memory");
	attempt->start = cm_now_ms();
	attempt->deadline = attempt->start + attempt->conn->attr.timeout_ms;
	rt_addr_str(dst, 0, attempt->addr);
	rt_addr_str(dst, 1, attempt->addrport);
	return 0;
}

struct rt_conn *rt_connect(const struct sockaddr *dst,
			   const struct rt_conn_attr *attr, struct rt_err *err)
{
	struct rt_connecting attempt;

	if (connecting_init(&attempt, dst, attr, err))
		return NULL;
	if (client_connect(&attempt, err)) {
		attempt.conn->dead = true; /* no disconnect, no event */
		rt_conn_free(attempt.conn);
		return NULL;
	}
	TRACE_ESTABLISHED(connect, attempt.conn, attempt.addrport);
	return attempt.conn;
}

/* As rt_connect() up to the route, then nothing more: a connection's
 * resources are never made. */
int rt_probe(const struct sockaddr *dst, unsigned int timeout_ms,
	     struct rt_err *err)
{
	struct rt_connecting attempt;
	struct rt_conn_attr a;
	int ret;

	if (!dst)
		return rt_dev_present(err);
	rt_conn_attr_init(&a);
	if (timeout_ms)
		a.timeout_ms = timeout_ms;
	ret = connecting_init(&attempt, dst, &a, err);
	if (ret)
		return ret;
	ret = rt_dev_present(err);
	if (!ret)
		ret = client_channel(attempt.conn, err);
	if (!ret)
		ret = resolve(&attempt, err);
	attempt.conn->dead = true; /* no disconnect, no event */
	rt_conn_free(attempt.conn);
	return ret;
}

/* A client's CM events after the connection is up: anything but TIMEWAIT
 * means the connection is over. */
static void client_event(struct rt_conn *conn, const struct rdma_cm_event *ev)
{
	char a[RT_ADDR_STRLEN];
	struct rt_err why;

	rt_addr_str(rt_conn_peer_addr(conn), 1, a);
	switch (ev->event) {
	case RDMA_CM_EVENT_DISCONNECTED:
		rt_err_set(&why, ECONNRESET,
			   "connection to %s closed by the peer", a);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		rt_err_set(&why, ENODEV, "RDMA device %s removed",
			   conn->devname);
		break;
	case RDMA_CM_EVENT_ADDR_CHANGE:
		rt_err_set(&why, ENETRESET,
			   "local address of the connection to %s changed", a);
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	case RDMA_CM_EVENT_ESTABLISHED:
		return;
	default:
		rt_err_set(&why, ECONNABORTED, "connection to %s: %s", a,
			   rdma_event_str(ev->event));
		break;
	}
	rt_conn_kill(conn, &why);
}

void rt_cm_client_events(struct rt_conn *conn)
{
	struct rdma_cm_event *ev;

	if (!conn->cm_ch)
		return;
	while (!rdma_get_cm_event(conn->cm_ch, &ev)) {
		client_event(conn, ev);
		rdma_ack_cm_event(ev);
	}
}

/* ---- Listener -------------------------------------------------------- */

/*
 * An IPv6 wildcard listener would also take IPv4 connections (the rdma_cm
 * default), so netids rdma and rdma6 could not listen on the same port -
 * NFS's 20049, say.  Like libtirpc's IPV6_V6ONLY for tcp6, an AF_INET6
 * listener takes IPv6 only.
 */
static int listen_v6only(struct rt_listener *l, const struct sockaddr *addr)
{
	int afonly = 1;

	if (addr->sa_family != AF_INET6)
		return 0;
	return rdma_set_option(l->id, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY,
			       &afonly, sizeof(afonly));
}

static bool addr_is_any(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(
			&((const struct sockaddr_in6 *)sa)->sin6_addr);
	return ((const struct sockaddr_in *)sa)->sin_addr.s_addr ==
	       htonl(INADDR_ANY);
}

/*
 * rdma_bind_addr() failed with code.  Two of its errnos mislead: ENODEV
 * means no RDMA device has that address, and EADDRNOTAVAIL for the
 * wildcard address means a listener holds the port on a specific one.
 */
static int bind_failed(const struct sockaddr *addr, const char *a, int code,
		       struct rt_err *err)
{
	char host[RT_ADDR_STRLEN];

	if (code == ENODEV)
		return rt_err_set(err, code,
				  "cannot bind RDMA listener to %s: no RDMA "
				  "device for address %s",
				  a, rt_addr_str(addr, 0, host));
	if (code == EADDRNOTAVAIL && addr_is_any(addr))
		return rt_err_set(err, code,
				  "cannot bind RDMA listener to %s: the port is "
				  "in use on a specific address (%s)",
				  a, strerror(code));
	return rt_err_set(err, code, "cannot bind RDMA listener to %s: %s", a,
			  strerror(code));
}

/* Make the listener's fd readable while fd is. */
static int listener_watch(struct rt_listener *l, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev);
}

static int listen_setup(struct rt_listener *l, const struct sockaddr *addr,
			int backlog, struct rt_err *err)
{
	char a[RT_ADDR_STRLEN];

	rt_addr_str(addr, 1, a);
	l->ch = rdma_create_event_channel();
	if (!l->ch || nonblock(l->ch->fd))
		return cm_open_failed(err);
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0 || listener_watch(l, l->ch->fd))
		return rt_err_set(err, errno,
				  "cannot create the listener's fd: %s",
				  strerror(errno));
	if (rdma_create_id(l->ch, &l->id, l, RDMA_PS_TCP))
		return rt_err_set(err, errno, "cannot create an RDMA CM id: %s",
				  strerror(errno));
	if (listen_v6only(l, addr))
		return rt_err_set(err, errno,
				  "cannot make %s an IPv6-only listener: %s", a,
				  strerror(errno));
	if (rdma_bind_addr(l->id, (struct sockaddr *)addr))
		return bind_failed(addr, a, errno, err);
	if (rdma_listen(l->id, backlog > 0 ? backlog : RT_LISTEN_BACKLOG))
		return rt_err_set(err, errno,
				  "cannot listen for RDMA on %s: %s", a,
				  strerror(errno));
	l->port = ntohs(rdma_get_src_port(l->id));
	return 0;
}

static void listener_free(struct rt_listener *l)
{
	unsigned int i;

	if (l->id)
		rdma_destroy_id(l->id);
	for (i = 0; i < l->nchans; i++)
		ibv_destroy_comp_channel(l->chans[i].cch);
	if (l->epfd >= 0)
		close(l->epfd);
	if (l->ch)
		rdma_destroy_event_channel(l->ch);
	pthread_mutex_destroy(&l->lock);
	free(l);
}

struct rt_listener *rt_listen(const struct sockaddr *addr, int backlog,
			      const struct rt_conn_attr *attr,
			      struct rt_err *err)
{
	struct rt_listener *l;

	rt_err_clear(err);
	if (check_dst(addr, err))
		return NULL;
	l = calloc(1, sizeof(*l));
	if (!l) {
		rt_err_set(err, ENOMEM, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&l->lock, NULL);
	l->epfd = -1;
	if (attr)
		l->attr = *attr;
	else
		rt_conn_attr_init(&l->attr);
	rt_conn_attr_normalize(&l->attr);
	if (listen_setup(l, addr, backlog, err)) {
		listener_free(l);
		return NULL;
	}
	return l;
}

int rt_listener_fd(const struct rt_listener *l)
{
	return l->epfd;
}

uint16_t rt_listener_port(const struct rt_listener *l)
{
	return l->port;
}

static void link_child(struct rt_listener *l, struct rt_conn *conn)
{
	pthread_mutex_lock(&l->lock);
	conn->listener = l;
	conn->linked = true;
	conn->lnext = l->children;
	conn->lprev = NULL;
	if (l->children)
		l->children->lprev = conn;
	l->children = conn;
	l->refs++;
	pthread_mutex_unlock(&l->lock);
}

static void listener_unlink(struct rt_conn *conn)
{
	struct rt_listener *l = conn->listener;

	pthread_mutex_lock(&l->lock);
	if (conn->linked) {
		if (conn->lprev)
			conn->lprev->lnext = conn->lnext;
		else
			l->children = conn->lnext;
		if (conn->lnext)
			conn->lnext->lprev = conn->lprev;
		conn->linked = false;
	}
	pthread_mutex_unlock(&l->lock);
}

/* An accepted connection is gone: the listener is freed with its last. */
static void listener_put(struct rt_listener *l)
{
	bool last;

	pthread_mutex_lock(&l->lock);
	last = --l->refs == 0 && l->closing;
	pthread_mutex_unlock(&l->lock);
	if (last)
		listener_free(l);
}

/*
 * Free a connection, accepted or not.  An accepted one leaves its
 * listener's list before anything is freed (the listener may look at it
 * from another thread until then) and gives its reference back last: the
 * listener's channel, destroyed with the listener, must outlive the
 * connection's id.
 */
static void conn_release(struct rt_conn *conn)
{
	struct rt_listener *l = conn->listener;

	if (l)
		listener_unlink(conn);
	rt_conn_free(conn);
	if (l)
		listener_put(l);
}

void rt_conn_destroy(struct rt_conn *conn)
{
	if (!conn)
		return;
	rt_conn_disconnect(conn);
	conn_release(conn);
}

void rt_listener_destroy(struct rt_listener *l)
{
	bool last;

	if (!l)
		return;
	/* Stop listening first, while our own reference keeps l alive:
	 * accepted connections may still use the channel. */
	if (l->id)
		rdma_destroy_id(l->id);
	l->id = NULL;
	pthread_mutex_lock(&l->lock);
	l->closing = true;
	last = l->refs == 0;
	pthread_mutex_unlock(&l->lock);
	if (last)
		listener_free(l);
}

/* The listener's completion channel for a device, made on first use. */
static struct ibv_comp_channel *listener_chan(struct rt_listener *l,
					      struct ibv_context *ctx,
					      struct rt_err *err)
{
	struct ibv_comp_channel *cch = NULL;
	unsigned int i;

	pthread_mutex_lock(&l->lock);
	for (i = 0; i < l->nchans; i++)
		if (l->chans[i].ctx == ctx)
			cch = l->chans[i].cch;
	if (cch || l->nchans == RT_LISTEN_DEVS)
		goto out;
	cch = ibv_create_comp_channel(ctx);
	if (!cch)
		goto out;
	if (nonblock(cch->fd) || listener_watch(l, cch->fd)) {
		ibv_destroy_comp_channel(cch);
		cch = NULL;
		goto out;
	}
	l->chans[l->nchans].ctx = ctx;
	l->chans[l->nchans++].cch = cch;
out:
	pthread_mutex_unlock(&l->lock);
	if (!cch)
		rt_err_set(err, errno ? errno : EMFILE,
			   "cannot make a completion channel on %s%s",
			   ibv_get_device_name(ctx->device),
			   i == RT_LISTEN_DEVS ? ": too many devices" : "");
	return cch;
}

/* Remember a connection for rt_listener_woken(), once; false when there
 * is no more room. */
static bool note_woken(struct rt_listener *l, int fd)
{
	unsigned int i;

	for (i = 0; i < l->nwoken; i++)
		if (l->woken[i] == fd)
			return true;
	if (l->nwoken == RT_LISTEN_WOKEN)
		return false;
	l->woken[l->nwoken++] = fd;
	return true;
}

/*
 * Take up to RT_CHAN_BUDGET events from a shared completion channel; what
 * is left keeps the listener's fd readable.  Returns how many it took.
 * note: the caller is the listener's processing (l->woken is its own);
 * a connection it notes for a caller that serves them (serves_woken) is
 * woken through its fd only if a thread waits for it (wait_shared in
 * rt_cq.c: rearm first, then waiters, against its waiters then rearm).
 */
static unsigned int chan_events(struct rt_listener *l,
				struct ibv_comp_channel *cch, bool note)
{
	struct rt_conn *conn;
	struct ibv_cq *cq;
	unsigned int n;
	void *ctx;

	for (n = 0; n < RT_CHAN_BUDGET; n++) {
		if (ibv_get_cq_event(cch, &cq, &ctx))
			break;
		conn = ctx;
		pthread_mutex_lock(&l->lock);
		if (conn->linked) {
			atomic_store(&conn->rearm, true);
			if (!note || !l->serves_woken ||
			    !note_woken(l, conn->wakefd) ||
			    atomic_load(&conn->waiters))
				rt_conn_wake(conn);
		}
		pthread_mutex_unlock(&l->lock);
		ibv_ack_cq_events(cq, 1);
	}
	return n;
}

void rt_cm_chan_events(struct rt_conn *conn)
{
	if (conn->scch && conn->listener)
		chan_events(conn->listener, conn->scch, false);
}

/* Serve one CONNECT_REQUEST: a connection with every Receive posted, the
 * client's private data parsed and ours in the accept. */
static struct rt_conn *accept_one(struct rt_listener *l, struct rdma_cm_id *id,
				  const struct rdma_conn_param *req,
				  struct rt_err *err)
{
	struct rdma_conn_param p;
	struct rt_conn *conn;
	char a[RT_ADDR_STRLEN];

	conn = rt_conn_alloc(&l->attr);
	if (!conn) {
		rt_err_set(err, ENOMEM, "out of memory");
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		return NULL;
	}
	id->context = conn;
	conn->accepted = true;
	if (!l->attr.busy_poll &&
	    !(conn->scch = listener_chan(l, id->verbs, err)))
		goto fail;
	if (rt_conn_setup(conn, id, err))
		goto fail;
	rt_conn_set_peer_private(conn, req->private_data,
				 req->private_data_len);
	rt_conn_cm_params(conn, &p);
	/*
	 * Never more than the client offered.  A connect request reports
	 * the client's depths from our side (the CM swaps them, as the
	 * kernel's svcrdma reads them): its initiator_depth is how many
	 * RDMA Reads the client will take from us - its responder
	 * resources - and its responder_resources how many it may issue.
	 * The Linux client offers 0 of the latter and many of the former.
	 */
	if (p.initiator_depth > req->initiator_depth)
		p.initiator_depth = req->initiator_depth;
	if (p.responder_resources > req->responder_resources)
		p.responder_resources = req->responder_resources;
	link_child(l, conn);
	rt_conn_ack_timeout(conn);
	if (rdma_accept(id, &p)) {
		rt_err_set(err, errno,
			   "cannot accept the connection from %s: %s",
			   rt_addr_str(rt_conn_peer_addr(conn), 1, a),
			   strerror(errno));
		goto fail;
	}
	rt_conn_query_rd_atomic(conn);
	TRACE_ESTABLISHED(accept, conn,
			  rt_addr_str(rt_conn_peer_addr(conn), 1, a));
	return conn;
fail:
	rdma_reject(id, NULL, 0);
	conn->dead = true;
	conn_release(conn);
	return NULL;
}

/* The listener noticed that an accepted connection ended. */
static void child_dead(struct rt_conn *conn, const struct rdma_cm_event *ev)
{
	char a[RT_ADDR_STRLEN];
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };

	if (atomic_load(&conn->ext_dead))
		return;
	rt_addr_str(rt_conn_peer_addr(conn), 1, a);
	if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
		rt_err_set(&conn->ext_err, ENODEV, "RDMA device %s removed",
			   conn->devname);
	else if (ev->event == RDMA_CM_EVENT_DISCONNECTED)
		rt_err_set(&conn->ext_err, ECONNRESET,
			   "connection from %s closed by the peer", a);
	else
		rt_err_set(&conn->ext_err, ECONNABORTED,
			   "connection from %s: %s", a,
			   rdma_event_str(ev->event));
	atomic_store_explicit(&conn->ext_dead, true, memory_order_release);
	/* Flush everything so the connection's own fd wakes up, and answer
	 * the peer's disconnect request. */
	ibv_modify_qp(conn->qp, &qa, IBV_QP_STATE);
	rdma_disconnect(conn->id);
	rt_conn_wake(conn);
}

static void child_event(struct rt_listener *l, struct rdma_cm_event *ev)
{
	struct rt_conn *conn = ev->id->context;

	pthread_mutex_lock(&l->lock);
	if (conn && conn->linked) {
		switch (ev->event) {
		case RDMA_CM_EVENT_ESTABLISHED:
			atomic_store(&conn->ext_up, true);
			if (atomic_load(&conn->closed))
				rdma_disconnect(conn->id);
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
		case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		case RDMA_CM_EVENT_CONNECT_ERROR:
		case RDMA_CM_EVENT_UNREACHABLE:
		case RDMA_CM_EVENT_REJECTED:
			child_dead(conn, ev);
			break;
		default:
			break;
		}
	}
	pthread_mutex_unlock(&l->lock);
}

static int listener_event(struct rt_listener *l, struct rdma_cm_event *ev)
{
	if (ev->id != l->id)
		return 0;
	if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL) {
		l->dead = true;
		return rt_err_set(&l->err, ENODEV,
				  "RDMA device of the listener removed");
	}
	return 0;
}

static int connect_request(struct rt_listener *l, struct rdma_cm_event *ev,
			   struct rt_conn **newc, struct rt_err *err)
{
	struct rdma_cm_id *id = ev->id;
	struct rdma_conn_param req = ev->param.conn;
	uint8_t pd[RW_CM_LEN];
	size_t pdlen = 0;

	/* The event's memory goes with the ack: keep what accept needs. */
	if (req.private_data && req.private_data_len >= RW_CM_LEN) {
		memcpy(pd, req.private_data, RW_CM_LEN);
		pdlen = RW_CM_LEN;
	}
	req.private_data = pdlen ? pd : NULL;
	req.private_data_len = (uint8_t)pdlen;
	rdma_ack_cm_event(ev);
	*newc = accept_one(l, id, &req, err);
	return *newc ? 1 : 0;
}

/* A request the listener cannot serve any more (its device is gone). */
static void refuse_request(struct rdma_cm_event *ev)
{
	struct rdma_cm_id *id = ev->id;

	rdma_ack_cm_event(ev);
	rdma_reject(id, NULL, 0);
	rdma_destroy_id(id);
}

int rt_listener_process(struct rt_listener *l, struct rt_conn **newc,
			unsigned int max, struct rt_err *err)
{
	struct rdma_cm_event *ev;
	unsigned int n = 0, i, taken = 0;

	rt_err_clear(err);
	if (!l->id)
		return rt_err_set(err, EBADF, "listener closed");
	for (i = 0; i < l->nchans; i++)
		taken += chan_events(l, l->chans[i].cch, true);
	/* Asking the CM channel costs a system call: while completions
	 * keep coming, only every RT_CM_EVERY-th time (its events wait in
	 * the channel and keep the fd readable). */
	if (taken && ++l->rounds % RT_CM_EVERY)
		return 0;
	/* A dead listener still hands its accepted connections their
	 * events (each learns about the device removal by its own). */
	while (n < max && !rdma_get_cm_event(l->ch, &ev)) {
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			if (l->dead)
				refuse_request(ev);
			else
				n += (unsigned int)connect_request(l, ev,
								   &newc[n],
								   err);
			continue;
		}
		if (ev->id == l->id)
			listener_event(l, ev);
		else
			child_event(l, ev);
		rdma_ack_cm_event(ev);
	}
	if (l->dead && !n)
		return rt_err_set(err, l->err.code, "%s", l->err.msg);
	return (int)n;
}

unsigned int rt_listener_woken(struct rt_listener *l, int *fds,
			       unsigned int max)
{
	unsigned int n = l->nwoken < max ? l->nwoken : max;

	l->serves_woken = true;
	memcpy(fds, l->woken, n * sizeof(*fds));
	memmove(l->woken, l->woken + n, (l->nwoken - n) * sizeof(*fds));
	l->nwoken -= n;
	return n;
}
