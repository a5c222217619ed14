/*
 * fake_rt.c - the transport layer's functions over an in-memory connection
 * that the test drives as the peer (fake_rt.h says what it promises).
 *
 * It owns: the fake connections (a global list, kept after
 * rt_conn_destroy() so that a test can still read their logs, freed by
 * fake_reset()), their event queues and eventfds, Send and Receive
 * buffers, local memory, pool memory, exposures, the peer's memory, the
 * send queue of posted work, and the global settings and counters.
 * Nothing here knows RPC or RPC-over-RDMA beyond the credit and RFC 8797
 * state the real transport also keeps (rw_credit.h, rw_cm.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include "fake_rt.h"
#include "trace/tr_trace.h"

/* Handles and keys the fake hands out start here (easy to spot in a
 * hex dump, never 0). */
#define FK_HANDLE_BASE 0x5e000000u
#define FK_LKEY_BASE   0x1c000000u

struct rt_sbuf {
	uint8_t *data;
	uint32_t size;
	bool busy; /* handed out, or its Send not completed */
};

struct rt_rbuf {
	uint8_t *data;
	uint32_t size;
	bool posted;
	bool lent; /* delivered, not posted again (counts for the grant) */
};

struct rt_lmem {
	struct rt_lmem *next;
	void *addr;
	size_t len;
	uint32_t lkey;
	bool owned; /* rt_lmem_alloc (ours to free) */
};

struct fk_pool {
	struct fk_pool *next;
	void *p;
	size_t len;
};

struct fk_peer_mem {
	struct fk_peer_mem *next;
	uint32_t handle;
	uint64_t offset;
	uint8_t *buf;
	size_t len;
};

enum fk_kind {
	FK_SEND,
	FK_READ,
	FK_WRITE
};

/* Posted work, completed in posting order. */
struct fk_work {
	struct fk_work *next;
	enum fk_kind kind;
	uint64_t cookie;
	bool signal;
	bool released; /* held work the test let go */
	int status;    /* 0, or the errno it completes with */
	struct rt_sbuf *sbuf;
	struct rt_sge sink[RT_MAX_SGE];
	unsigned int nsink;
	struct rw_segment seg;
};

struct rt_regset {
	struct rt_regset *next;
	struct rt_conn *conn;
	uint32_t id;
};

struct rt_conn {
	struct rt_conn *next;
	struct rt_conn_attr attr;
	uint32_t trace_id; /* from the real trace unit, as rt_conn.c does */
	bool dead, destroyed;
	struct rt_err err;
	int efd;
	bool kicked; /* rt_conn_kick(): efd readable until a full poll */

	struct rt_event *evq;
	unsigned int evq_head, evq_n, evq_cap;

	struct rw_cm_private local, peer;
	struct rw_cm_inline inl;
	enum rt_reg_mode mode;
	unsigned int ord, ird;
	bool hold_sends, hold_reads, revoke_fails;
	bool dev_send_inv; /* rt_conn_can_send_inv() */
	bool peer_fault;   /* rt_conn_peer_fault() */
	uint64_t peer_fault_cookie;
	void (*on_send)(struct rt_conn *c, const struct fake_msg *m, void *arg);
	void *peer_arg;

	struct rw_credits cr;
	struct rw_srv_credits scr;

	struct rt_sbuf *sbufs;
	unsigned int nsbufs;
	struct rt_rbuf *rbufs;
	unsigned int nrbufs, rposted, rlent;

	struct rt_lmem *lmems;
	unsigned int lmem_live, lmem_allocs;
	struct fk_pool *pool;
	struct rt_regset *sets;

	struct fake_reg *regs;
	unsigned int nregs, regs_cap;
	struct fake_msg *sends;
	unsigned int nsends, sends_cap;
	struct fk_work *wq_head, *wq_tail;
	struct fk_peer_mem *pmem;

	unsigned int nreads, nwrites, writes_cap, disconnects;
	uint32_t *wlens;
	struct rw_segment *wsegs;
	struct rt_stats st;
	struct sockaddr_in peer_addr, local_addr;
};

struct rt_listener {
	struct rt_listener *next;
	int efd;
	struct rt_conn **pending;
	unsigned int npending, cap;
};

static struct {
	pthread_mutex_t lock;
	bool inited;
	struct fake_cfg cfg;
	uint64_t seq;
	unsigned int misuses;
	char misuse[RT_ERR_MSG_LEN];
	unsigned int connects;
	struct rt_conn *last;
	struct rt_conn *conns;
	struct rt_listener *listeners;
	uint32_t next_handle, next_key, next_set;
} fk = { .lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP };

/* ---- Basics ------------------------------------------------------------ */

static void cfg_defaults(void)
{
	memset(&fk.cfg, 0, sizeof(fk.cfg));
	fk.cfg.peer_priv.valid = true;
	fk.cfg.peer_priv.remote_inv = true;
	fk.cfg.peer_priv.send_size = 4096;
	fk.cfg.peer_priv.recv_size = 4096;
	fk.cfg.ord = 4;
	fk.cfg.ird = 4;
	fk.cfg.reg_mode = RT_REG_MW;
	fk.inited = true;
}

static void lock(void)
{
	pthread_mutex_lock(&fk.lock);
	if (!fk.inited)
		cfg_defaults();
}

static void unlock(void)
{
	pthread_mutex_unlock(&fk.lock);
}

static void misuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void misuse(const char *fmt, ...)
{
	va_list ap;

	if (!fk.misuses++) {
		va_start(ap, fmt);
		vsnprintf(fk.misuse, sizeof(fk.misuse), fmt, ap);
		va_end(ap);
	}
}

/* A call on a destroyed connection is the caller's bug. */
static bool gone(const struct rt_conn *c, const char *fn)
{
	if (!c) {
		misuse("%s on a NULL connection", fn);
		return true;
	}
	if (c->destroyed) {
		misuse("%s on a destroyed connection", fn);
		return true;
	}
	return false;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		abort(); /* a test fixture out of memory: give up */
	return p;
}

static void grow(void **arr, unsigned int *cap, unsigned int need, size_t size)
{
	unsigned int ncap = *cap ? *cap : 8;
	void *p;

	if (need <= *cap)
		return;
	while (ncap < need)
		ncap *= 2;
	p = realloc(*arr, (size_t)ncap * size);
	if (!p)
		abort();
	*arr = p;
	*cap = ncap;
}

/* ---- Events ------------------------------------------------------------ */

static void wake(struct rt_conn *c)
{
	uint64_t one = 1;

	if (c->efd >= 0 && write(c->efd, &one, sizeof(one)) < 0)
		misuse("eventfd write failed: %s", strerror(errno));
}

static void unwake(struct rt_conn *c)
{
	uint64_t v;

	if (c->efd >= 0 && read(c->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		misuse("eventfd read failed: %s", strerror(errno));
}

static void ev_push(struct rt_conn *c, const struct rt_event *ev)
{
	unsigned int i, ncap;
	struct rt_event *q;

	if (c->evq_n == c->evq_cap) {
		ncap = c->evq_cap ? c->evq_cap * 2 : 16;
		q = xcalloc(ncap, sizeof(*q));
		for (i = 0; i < c->evq_n; i++)
			q[i] = c->evq[(c->evq_head + i) % c->evq_cap];
		free(c->evq);
		c->evq = q;
		c->evq_cap = ncap;
		c->evq_head = 0;
	}
	c->evq[(c->evq_head + c->evq_n) % c->evq_cap] = *ev;
	if (!c->evq_n++)
		wake(c);
}

static unsigned int ev_pop(struct rt_conn *c, struct rt_event *ev,
			   unsigned int max)
{
	unsigned int n = 0;

	while (n < max && c->evq_n) {
		ev[n++] = c->evq[c->evq_head];
		c->evq_head = (c->evq_head + 1) % c->evq_cap;
		c->evq_n--;
	}
	if (n && !c->evq_n && !c->kicked)
		unwake(c);
	return n;
}

static const char *status_str(int status)
{
	return !status		    ? "success" :
	       status == ECONNRESET ? "Work Request Flushed Error" :
				      "remote access error";
}

/* ---- Work and connection death ----------------------------------------- */

static void work_push(struct rt_conn *c, struct fk_work *w)
{
	if (c->wq_tail)
		c->wq_tail->next = w;
	else
		c->wq_head = w;
	c->wq_tail = w;
}

static struct fk_work *work_pop(struct rt_conn *c)
{
	struct fk_work *w = c->wq_head;

	if (w) {
		c->wq_head = w->next;
		if (!c->wq_head)
			c->wq_tail = NULL;
	}
	return w;
}

static void conn_kill(struct rt_conn *c, int code, const char *msg);

static struct fk_peer_mem *peer_mem_find(struct rt_conn *c,
					 const struct rw_segment *seg)
{
	struct fk_peer_mem *m;

	for (m = c->pmem; m; m = m->next)
		if (m->handle == seg->handle && seg->offset >= m->offset &&
		    seg->offset - m->offset <= m->len &&
		    seg->length <= m->len - (seg->offset - m->offset))
			return m;
	return NULL;
}

/* The data of a Read lands in its sinks when it completes. */
static int read_land(struct rt_conn *c, struct fk_work *w)
{
	struct fk_peer_mem *m = peer_mem_find(c, &w->seg);
	const uint8_t *src;
	unsigned int i;

	if (!m)
		return EIO;
	src = m->buf + (w->seg.offset - m->offset);
	for (i = 0; i < w->nsink; i++) {
		memcpy(w->sink[i].addr, src, w->sink[i].length);
		src += w->sink[i].length;
	}
	c->st.read_bytes += w->seg.length;
	return 0;
}

static void work_complete(struct rt_conn *c, struct fk_work *w)
{
	struct rt_event ev = { .cookie = w->cookie };
	int status = c->dead ? ECONNRESET : w->status;

	if (!status && w->kind == FK_READ)
		status = read_land(c, w);
	if (w->kind == FK_SEND && w->sbuf)
		w->sbuf->busy = false;
	if (status == ECONNRESET)
		c->st.flushed++;
	if (w->signal) {
		ev.type = w->kind == FK_SEND ? RT_EV_SEND_DONE :
			  w->kind == FK_READ ? RT_EV_READ_DONE :
					       RT_EV_WRITE_DONE;
		ev.status = status;
		ev.status_str = status_str(status);
		ev_push(c, &ev);
	}
	if (status && status != ECONNRESET) {
		c->st.errors++;
		/* the peer's handle or Receive refused it (rt_post.c) */
		if (!c->dead) {
			c->peer_fault = true;
			c->peer_fault_cookie = w->cookie;
		}
		conn_kill(
			c, EIO,
			w->kind == FK_READ ?
				"RDMA Read failed on the fake connection: remote access error" :
				"work failed on the fake connection: remote access error");
	}
	free(w);
}

/* Complete from the head whatever is not held back. */
static void sq_run(struct rt_conn *c)
{
	struct fk_work *w;

	while ((w = c->wq_head)) {
		if (!c->dead && !w->released &&
		    ((w->kind == FK_READ && c->hold_reads) ||
		     (w->kind == FK_SEND && c->hold_sends)))
			break;
		work_complete(c, work_pop(c));
	}
}

/* Everything held completes (successfully, unless the test said
 * otherwise). */
static void release_all(struct rt_conn *c)
{
	struct fk_work *w;

	for (w = c->wq_head; w; w = w->next)
		w->released = true;
	sq_run(c);
}

/* RT_EV_DEAD first, then the flushes of what was still posted. */
static void conn_kill(struct rt_conn *c, int code, const char *msg)
{
	struct rt_event ev = { .type = RT_EV_DEAD };

	if (c->dead)
		return;
	c->dead = true;
	rt_err_set(&c->err, code, "%s", msg);
	ev.status = c->err.code;
	ev.status_str = c->err.msg;
	ev_push(c, &ev);
	sq_run(c);
}

/* ---- Connections ------------------------------------------------------- */

static uint32_t clamp_u32(uint32_t v, uint32_t lo, uint32_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static uint32_t inline_size(uint32_t v)
{
	v = clamp_u32(v ? v : 4096, RW_CM_MIN_SIZE, RW_CM_MAX_SIZE);
	return v & ~(RW_CM_MIN_SIZE - 1);
}

/* The real layer's normalization (rt_conn.c), minus device limits. */
static void attr_normalize(struct rt_conn_attr *a)
{
	a->inline_send = inline_size(a->inline_send);
	a->inline_recv = inline_size(a->inline_recv);
	a->credits = clamp_u32(a->credits ? a->credits : 32, 1, 4096);
	a->recv_extra = clamp_u32(a->recv_extra, 0, 4096);
	if (!a->send_bufs)
		a->send_bufs = a->credits + 8;
	a->send_bufs = clamp_u32(a->send_bufs, 2, 8192);
	a->rdma_depth = clamp_u32(a->rdma_depth ? a->rdma_depth : 16, 1, 1024);
	a->signal_every =
		clamp_u32(a->signal_every ? a->signal_every : 16, 1, 1024);
	if (!a->timeout_ms)
		a->timeout_ms = 5000;
}

static void addr_set(struct sockaddr_in *sa, const char *ip, uint16_t port)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons(port);
	inet_pton(AF_INET, ip, &sa->sin_addr);
}

static void conn_params(struct rt_conn *c)
{
	enum rt_reg_mode m = c->attr.reg_mode;

	if (m == RT_REG_AUTO)
		m = fk.cfg.reg_mode == RT_REG_AUTO ? RT_REG_MW :
						     fk.cfg.reg_mode;
	if (m == RT_REG_MW && fk.cfg.no_windows)
		m = RT_REG_MR;
	c->mode = m;
	c->local.valid = true;
	c->local.remote_inv = m == RT_REG_MW && !c->attr.no_remote_inv;
	c->local.send_size = c->attr.inline_send;
	c->local.recv_size = c->attr.inline_recv;
	c->peer = fk.cfg.peer_priv;
	if (!c->peer.valid)
		rw_cm_decode(NULL, 0, &c->peer); /* the v1 defaults */
	rw_cm_negotiate(&c->local, &c->peer, &c->inl);
	c->ord = fk.cfg.ord;
	c->ird = fk.cfg.ird;
	c->hold_sends = fk.cfg.hold_sends;
	c->hold_reads = fk.cfg.hold_reads;
	c->revoke_fails = fk.cfg.revoke_fails;
	c->dev_send_inv = !fk.cfg.no_send_inv;
	c->on_send = fk.cfg.on_send;
	c->peer_arg = fk.cfg.peer_arg;
}

static struct rt_conn *conn_make(const struct rt_conn_attr *attr)
{
	struct rt_conn *c = xcalloc(1, sizeof(*c));
	unsigned int i;

	if (attr)
		c->attr = *attr;
	else
		rt_conn_attr_init(&c->attr);
	attr_normalize(&c->attr);
	c->trace_id = tr_conn_id_new();
	c->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (c->efd < 0)
		abort();
	conn_params(c);
	rw_credits_init(&c->cr, c->attr.credits);
	rw_srv_credits_init(&c->scr, c->attr.credits);
	c->nsbufs = c->attr.send_bufs;
	c->sbufs = xcalloc(c->nsbufs, sizeof(*c->sbufs));
	for (i = 0; i < c->nsbufs; i++) {
		c->sbufs[i].size = c->attr.inline_send;
		c->sbufs[i].data = xcalloc(1, c->attr.inline_send);
	}
	/* every Receive posted before anything can arrive (V1-RB-1) */
	c->nrbufs = c->attr.credits + c->attr.recv_extra;
	c->rbufs = xcalloc(c->nrbufs, sizeof(*c->rbufs));
	for (i = 0; i < c->nrbufs; i++) {
		c->rbufs[i].size = c->attr.inline_recv;
		c->rbufs[i].data = xcalloc(1, c->attr.inline_recv);
		c->rbufs[i].posted = true;
	}
	c->rposted = c->nrbufs;
	c->scr.posted = c->rposted;
	addr_set(&c->local_addr, "192.0.2.1", 20049);
	addr_set(&c->peer_addr, "192.0.2.2", 40000);
	c->next = fk.conns;
	fk.conns = c;
	return c;
}

/* Everything but the logs (and the struct itself). */
static void conn_release(struct rt_conn *c)
{
	struct rt_regset *s, *sn;
	struct rt_lmem *m, *mn;
	struct fk_pool *p, *pn;
	struct fk_work *w;
	unsigned int i;

	while ((w = work_pop(c)))
		free(w);
	for (m = c->lmems; m; m = mn) {
		mn = m->next;
		if (m->owned)
			free(m->addr);
		free(m);
	}
	c->lmems = NULL;
	c->lmem_live = 0;
	for (p = c->pool; p; p = pn) {
		pn = p->next;
		free(p->p);
		free(p);
	}
	c->pool = NULL;
	for (s = c->sets; s; s = sn) {
		sn = s->next;
		free(s);
	}
	c->sets = NULL;
	for (i = 0; i < c->nsbufs; i++)
		free(c->sbufs[i].data);
	free(c->sbufs);
	c->sbufs = NULL;
	c->nsbufs = 0;
	for (i = 0; i < c->nrbufs; i++)
		free(c->rbufs[i].data);
	free(c->rbufs);
	c->rbufs = NULL;
	c->nrbufs = 0;
	free(c->evq);
	c->evq = NULL;
	c->evq_n = c->evq_cap = c->evq_head = 0;
	if (c->efd >= 0)
		close(c->efd);
	c->efd = -1;
}

static void conn_free(struct rt_conn *c)
{
	struct fk_peer_mem *m, *mn;
	unsigned int i;

	conn_release(c);
	for (m = c->pmem; m; m = mn) {
		mn = m->next;
		free(m);
	}
	for (i = 0; i < c->nsends; i++)
		free(c->sends[i].data);
	free(c->sends);
	free(c->regs);
	free(c->wlens);
	free(c->wsegs);
	free(c);
}

void rt_conn_attr_init(struct rt_conn_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->inline_send = 4096;
	a->inline_recv = 4096;
	a->credits = 32;
	a->rdma_depth = 16;
	a->signal_every = 16;
	a->timeout_ms = 5000;
	a->reg_mode = RT_REG_AUTO;
	a->cache_bytes = RT_CACHE_BYTES;
}

struct rt_conn *rt_connect(const struct sockaddr *dst,
			   const struct rt_conn_attr *attr, struct rt_err *err)
{
	struct rt_conn *c;
	char a[RT_ADDR_STRLEN];

	lock();
	fk.connects++;
	rt_err_clear(err);
	if (!dst || dst->sa_family != AF_INET) {
		unlock();
		rt_err_set(err, EAFNOSUPPORT, "the fake connects to IPv4 only");
		return NULL;
	}
	if (fk.cfg.connect_err) {
		rt_addr_str(dst, 1, a);
		rt_err_set(err, fk.cfg.connect_err,
			   "connection to %s failed: %s", a,
			   strerror(fk.cfg.connect_err));
		unlock();
		return NULL;
	}
	c = conn_make(attr);
	memcpy(&c->peer_addr, dst, sizeof(c->peer_addr));
	rw_credits_reset(&c->cr); /* a new connection: one credit */
	fk.last = c;
	unlock();
	return c;
}

enum rt_state rt_conn_state(const struct rt_conn *c)
{
	enum rt_state s;

	lock();
	s = c->dead || c->destroyed ? RT_CONN_DEAD : RT_CONN_UP;
	unlock();
	return s;
}

const struct rt_err *rt_conn_error(const struct rt_conn *c)
{
	return &c->err;
}

void rt_conn_disconnect(struct rt_conn *c)
{
	lock();
	if (!gone(c, "rt_conn_disconnect")) {
		c->disconnects++;
		conn_kill(c, ESHUTDOWN, "connection closed locally");
	}
	unlock();
}

/* Fenced with the connection: every exposure ends here. */
static void regs_end(struct rt_conn *c)
{
	unsigned int i;

	for (i = 0; i < c->nregs; i++) {
		if (!c->regs[i].live)
			continue;
		c->regs[i].live = false;
		c->regs[i].seq_revoke = ++fk.seq;
	}
}

void rt_conn_destroy(struct rt_conn *c)
{
	if (!c)
		return;
	lock();
	if (!gone(c, "rt_conn_destroy")) {
		conn_kill(c, ESHUTDOWN, "connection closed locally");
		regs_end(c);
		conn_release(c);
		c->destroyed = true;
	}
	unlock();
}

int rt_conn_fd(const struct rt_conn *c)
{
	int fd;

	lock();
	fd = gone(c, "rt_conn_fd") ? -1 : c->efd;
	unlock();
	return fd;
}

int rt_conn_wait(struct rt_conn *c, int timeout_ms)
{
	struct pollfd pfd = { .fd = rt_conn_fd(c), .events = POLLIN };

	return poll(&pfd, 1, timeout_ms);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void rt_conn_kick(struct rt_conn *c)
{
	lock();
	if (!gone(c, "rt_conn_kick")) {
		c->kicked = true;
		wake(c);
	}
	unlock();
}

/* As the real one: events first; with timeout 0 never -ENOTCONN.  A full
 * poll takes the kick, a collect leaves it. */
static int poll_events(struct rt_conn *c, struct rt_event *ev, unsigned int max,
		       int timeout_ms, bool full)
{
	int64_t deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	struct pollfd pfd;
	int64_t left = -1;
	unsigned int n;

	lock();
	if (gone(c, "rt_conn_poll")) {
		unlock();
		return -ENOTCONN;
	}
	if (full && c->kicked) {
		c->kicked = false;
		if (!c->evq_n)
			unwake(c);
	}
	for (;;) {
		n = max ? ev_pop(c, ev, max) : 0;
		if (n || timeout_ms == 0 || !max) {
			unlock();
			return (int)n;
		}
		if (c->dead) {
			unlock();
			return -ENOTCONN;
		}
		if (c->wq_head) {
			/* Blocking passes time for the peer too: what the
			 * test held back completes now (as a real peer
			 * answers a Read eventually). */
			release_all(c);
			continue;
		}
		if (timeout_ms > 0) {
			left = deadline - now_ms();
			if (left <= 0) {
				unlock();
				return 0;
			}
		}
		pfd.fd = c->efd;
		pfd.events = POLLIN;
		unlock();
		poll(&pfd, 1, (int)left);
		lock();
		if (c->destroyed) {
			unlock();
			return -ENOTCONN;
		}
	}
}

int rt_conn_poll(struct rt_conn *c, struct rt_event *ev, unsigned int max,
		 int timeout_ms)
{
	return poll_events(c, ev, max, timeout_ms, true);
}

/* The fake has no sources that need a system call: a poll that leaves
 * the kick. */
int rt_conn_collect(struct rt_conn *c, struct rt_event *ev, unsigned int max)
{
	return poll_events(c, ev, max, 0, false);
}

bool rt_conn_peer_fault(const struct rt_conn *c, uint64_t *cookie)
{
	bool fault;

	lock();
	fault = c->peer_fault;
	if (fault)
		*cookie = c->peer_fault_cookie;
	unlock();
	return fault;
}

const struct rw_cm_inline *rt_conn_inline(const struct rt_conn *c)
{
	return &c->inl;
}

/* As the real one: never beyond our own Send buffers. */
uint32_t rt_conn_set_inline_send(struct rt_conn *c, uint32_t send)
{
	uint32_t now;

	lock();
	c->inl.send = send < c->attr.inline_send ? send : c->attr.inline_send;
	now = c->inl.send;
	unlock();
	return now;
}

bool rt_conn_can_send_inv(const struct rt_conn *c)
{
	return c->dev_send_inv;
}

const struct rw_cm_private *rt_conn_peer_private(const struct rt_conn *c)
{
	return &c->peer;
}

const struct rw_cm_private *rt_conn_local_private(const struct rt_conn *c)
{
	return &c->local;
}

const struct sockaddr *rt_conn_peer_addr(const struct rt_conn *c)
{
	return (const struct sockaddr *)&c->peer_addr;
}

const struct sockaddr *rt_conn_local_addr(const struct rt_conn *c)
{
	return (const struct sockaddr *)&c->local_addr;
}

const char *rt_conn_device(const struct rt_conn *c)
{
	return "fake0";
}

uint32_t rt_conn_trace_id(const struct rt_conn *c)
{
	return c->trace_id;
}

unsigned int rt_conn_ord(const struct rt_conn *c)
{
	return c->ord;
}

unsigned int rt_conn_ird(const struct rt_conn *c)
{
	return c->ird;
}

struct rw_credits *rt_conn_credits(struct rt_conn *c)
{
	return &c->cr;
}

struct rw_srv_credits *rt_conn_srv_credits(struct rt_conn *c)
{
	return &c->scr;
}

/* The fake posts every Receive at setup (it ignores attr.recv_start): there
 * is never more to post. */
int rt_conn_recv_grow(struct rt_conn *c)
{
	int ret;

	lock();
	ret = gone(c, "rt_conn_recv_grow") ? -ENOTCONN : -ENOSPC;
	unlock();
	return ret;
}

unsigned int rt_conn_recvs_posted(const struct rt_conn *c)
{
	unsigned int n;

	lock();
	n = c->rposted;
	unlock();
	return n;
}

void rt_conn_stats(const struct rt_conn *c, struct rt_stats *out)
{
	lock();
	*out = c->st;
	unlock();
}

/* The fake frees every buffer when it is given back: it caches nothing. */
size_t rt_conn_cache_bytes(const struct rt_conn *c)
{
	(void)c;
	return 0;
}

/* ---- Listener ---------------------------------------------------------- */

struct rt_listener *rt_listen(const struct sockaddr *addr, int backlog,
			      const struct rt_conn_attr *attr,
			      struct rt_err *err)
{
	struct rt_listener *l = xcalloc(1, sizeof(*l));

	l->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (l->efd < 0)
		abort();
	lock();
	l->next = fk.listeners;
	fk.listeners = l;
	unlock();
	return l;
}

int rt_listener_fd(const struct rt_listener *l)
{
	return l->efd;
}

uint16_t rt_listener_port(const struct rt_listener *l)
{
	return 20049;
}

void fake_listener_offer(struct rt_listener *l, struct rt_conn *c)
{
	uint64_t one = 1;

	lock();
	grow((void **)&l->pending, &l->cap, l->npending + 1,
	     sizeof(*l->pending));
	l->pending[l->npending++] = c;
	if (write(l->efd, &one, sizeof(one)) < 0)
		misuse("eventfd write failed");
	unlock();
}

int rt_listener_process(struct rt_listener *l, struct rt_conn **newc,
			unsigned int max, struct rt_err *err)
{
	unsigned int n = 0;
	uint64_t v;

	lock();
	rt_err_clear(err);
	while (n < max && n < l->npending) {
		newc[n] = l->pending[n];
		n++;
	}
	memmove(l->pending, l->pending + n,
		(l->npending - n) * sizeof(*l->pending));
	l->npending -= n;
	if (!l->npending && read(l->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		misuse("eventfd read failed");
	unlock();
	return (int)n;
}

/* The fake's connections have fds of their own: the listener wakes none. */
unsigned int rt_listener_woken(struct rt_listener *l, int *fds,
			       unsigned int max)
{
	return 0;
}

static void listener_free(struct rt_listener *l)
{
	unsigned int i;

	for (i = 0; i < l->npending; i++)
		rt_conn_destroy(l->pending[i]);
	close(l->efd);
	free(l->pending);
	free(l);
}

void rt_listener_destroy(struct rt_listener *l)
{
	struct rt_listener **pp;

	if (!l)
		return;
	lock();
	for (pp = &fk.listeners; *pp; pp = &(*pp)->next) {
		if (*pp == l) {
			*pp = l->next;
			break;
		}
	}
	listener_free(l);
	unlock();
}

/* ---- Buffers ----------------------------------------------------------- */

struct rt_sbuf *rt_sbuf_get(struct rt_conn *c, struct rt_err *err)
{
	struct rt_sbuf *b = NULL;
	unsigned int i;

	lock();
	rt_err_clear(err);
	if (gone(c, "rt_sbuf_get") || c->dead) {
		rt_err_set(err, ENOTCONN, "the connection is closed");
		unlock();
		return NULL;
	}
	for (i = 0; i < c->nsbufs && !b; i++)
		if (!c->sbufs[i].busy)
			b = &c->sbufs[i];
	if (!b && c->wq_head) {
		/* Every buffer waits for a Send queued behind held work.  A
		 * real peer answers in the end, and the real layer reaps
		 * completions here: time passes, the held work completes. */
		release_all(c);
		for (i = 0; i < c->nsbufs && !b; i++)
			if (!c->sbufs[i].busy)
				b = &c->sbufs[i];
	}
	if (b)
		b->busy = true;
	else
		rt_err_set(err, EAGAIN, "every Send buffer is in flight");
	unlock();
	return b;
}

static bool sbuf_of(const struct rt_conn *c, const struct rt_sbuf *b)
{
	return c->sbufs && b >= c->sbufs && b < c->sbufs + c->nsbufs;
}

void rt_sbuf_put(struct rt_conn *c, struct rt_sbuf *b)
{
	lock();
	if (!gone(c, "rt_sbuf_put")) {
		if (!sbuf_of(c, b) || !b->busy)
			misuse("rt_sbuf_put of a buffer not handed out");
		else
			b->busy = false;
	}
	unlock();
}

void *rt_sbuf_data(const struct rt_sbuf *b)
{
	return b->data;
}

uint32_t rt_sbuf_size(const struct rt_sbuf *b)
{
	return b->size;
}

int rt_recv_repost(struct rt_conn *c, struct rt_rbuf *b)
{
	lock();
	if (gone(c, "rt_recv_repost")) {
		unlock();
		return -ENOTCONN;
	}
	if (!c->rbufs || b < c->rbufs || b >= c->rbufs + c->nrbufs ||
	    b->posted) {
		misuse("rt_recv_repost of a buffer that is not a lent Receive");
		unlock();
		return -EINVAL;
	}
	if (!c->dead) {
		b->posted = true;
		c->rposted++;
		if (b->lent) {
			b->lent = false;
			c->rlent--;
		}
		c->scr.posted = c->rposted + c->rlent;
	}
	unlock();
	return 0;
}

static struct rt_lmem *lmem_new(struct rt_conn *c, void *addr, size_t len,
				bool owned)
{
	struct rt_lmem *m = xcalloc(1, sizeof(*m));

	m->addr = addr;
	m->len = len;
	m->owned = owned;
	m->lkey = FK_LKEY_BASE + ++fk.next_key;
	m->next = c->lmems;
	c->lmems = m;
	c->lmem_live++;
	c->lmem_allocs++;
	return m;
}

struct rt_lmem *rt_lmem_alloc(struct rt_conn *c, size_t len, struct rt_err *err)
{
	struct rt_lmem *m = NULL;
	void *p;

	lock();
	if (gone(c, "rt_lmem_alloc") || c->dead) {
		rt_err_set(err, ENOTCONN, "the connection is closed");
	} else if (!len || len > ((size_t)1 << 31)) {
		rt_err_set(err, ENOMEM, "cannot register %zu octets", len);
	} else {
		p = malloc(len);
		if (p)
			m = lmem_new(c, p, len, true);
		else
			rt_err_set(err, ENOMEM, "out of memory");
	}
	unlock();
	return m;
}

struct rt_lmem *rt_lmem_map(struct rt_conn *c, void *addr, size_t len,
			    bool writable, struct rt_err *err)
{
	struct rt_lmem *m = NULL;

	lock();
	if (gone(c, "rt_lmem_map") || c->dead)
		rt_err_set(err, ENOTCONN, "the connection is closed");
	else
		m = lmem_new(c, addr, len, false);
	unlock();
	return m;
}

void rt_lmem_free(struct rt_conn *c, struct rt_lmem *m)
{
	struct rt_lmem **pp;

	if (!m)
		return;
	lock();
	if (gone(c, "rt_lmem_free")) {
		unlock();
		return;
	}
	for (pp = &c->lmems; *pp; pp = &(*pp)->next) {
		if (*pp == m) {
			*pp = m->next;
			if (m->owned)
				free(m->addr);
			free(m);
			c->lmem_live--;
			unlock();
			return;
		}
	}
	misuse("rt_lmem_free of memory the connection does not hold");
	unlock();
}

void *rt_lmem_addr(const struct rt_lmem *m)
{
	return m->addr;
}

size_t rt_lmem_len(const struct rt_lmem *m)
{
	return m->len;
}

uint32_t rt_lmem_lkey(const struct rt_lmem *m)
{
	return m->lkey;
}

struct rt_sge rt_lmem_sge(const struct rt_lmem *m, void *addr, uint32_t len)
{
	struct rt_sge s = { .addr = addr, .length = len, .lkey = m->lkey };
	uint8_t *a = addr, *base = m->addr;

	if (a < base || (size_t)(a - base) > m->len ||
	    len > m->len - (size_t)(a - base)) {
		lock();
		misuse("rt_lmem_sge outside its memory");
		unlock();
	}
	return s;
}

/* ---- Posting ----------------------------------------------------------- */

/* sge must lie in live local memory of c with its key. */
static bool sge_ok(const struct rt_conn *c, const struct rt_sge *s)
{
	const struct rt_lmem *m;
	const uint8_t *a = s->addr;

	for (m = c->lmems; m; m = m->next) {
		const uint8_t *base = m->addr;

		if (m->lkey == s->lkey && a >= base &&
		    (size_t)(a - base) <= m->len &&
		    s->length <= m->len - (size_t)(a - base))
			return true;
	}
	return false;
}

static void send_log(struct rt_conn *c, const struct rt_sbuf *b, uint32_t len,
		     const struct rt_sge *more, unsigned int nmore,
		     uint32_t total, uint32_t inv)
{
	struct fake_msg *m;
	uint32_t off = len;
	unsigned int i;

	grow((void **)&c->sends, &c->sends_cap, c->nsends + 1,
	     sizeof(*c->sends));
	m = &c->sends[c->nsends++];
	m->data = xcalloc(1, total);
	m->len = total;
	m->inv_rkey = inv;
	m->seq = ++fk.seq;
	m->recvs_posted = c->rposted;
	memcpy(m->data, b->data, len);
	for (i = 0; i < nmore; i++) {
		memcpy(m->data + off, more[i].addr, more[i].length);
		off += more[i].length;
	}
}

int rt_post_send(struct rt_conn *c, struct rt_sbuf *b, uint32_t len,
		 const struct rt_sge *more, unsigned int nmore,
		 uint32_t inv_rkey, uint64_t cookie, unsigned int flags,
		 struct rt_err *err)
{
	uint64_t total = len;
	struct fk_work *w;
	unsigned int i;
	int ret = 0;

	lock();
	if (gone(c, "rt_post_send")) {
		unlock();
		return rt_err_set(err, ENOTCONN, "destroyed");
	}
	if (!sbuf_of(c, b) || !b->busy) {
		misuse("rt_post_send of a buffer not handed out");
		unlock();
		return rt_err_set(err, EINVAL, "not a Send buffer");
	}
	if (nmore >= RT_MAX_SGE || len > b->size) {
		misuse("rt_post_send of %u octets in %u fragments", len,
		       nmore + 1);
		ret = rt_err_set(err, EINVAL, "bad fragments");
	}
	for (i = 0; !ret && i < nmore; i++)
		total += more[i].length;
	if (!ret && c->dead)
		ret = rt_err_set(err, ENOTCONN, "%s", c->err.msg);
	else if (!ret && total > c->inl.send)
		ret = rt_err_set(
			err, EMSGSIZE,
			"Send of %llu octets over the inline threshold %u",
			(unsigned long long)total, c->inl.send);
	else if (!ret && inv_rkey && !c->dev_send_inv)
		ret = rt_err_set(err, EINVAL,
				 "the device cannot send With Invalidate");
	else if (!ret && inv_rkey && !c->inl.peer_remote_inv &&
		 !(flags & RT_WR_INV_NOMINATED))
		ret = rt_err_set(
			err, EINVAL,
			"the peer does not accept Send With Invalidate");
	if (ret) {
		b->busy = false; /* the connection's again */
		unlock();
		return ret;
	}
	send_log(c, b, len, more, nmore, (uint32_t)total, inv_rkey);
	c->st.sends++;
	c->st.sends_inv += inv_rkey != 0;
	c->st.signalled += (flags & RT_WR_SIGNAL) != 0;
	w = xcalloc(1, sizeof(*w));
	w->kind = FK_SEND;
	w->cookie = cookie;
	w->signal = flags & RT_WR_SIGNAL;
	w->sbuf = b;
	work_push(c, w);
	sq_run(c);
	if (c->on_send)
		c->on_send(c, &c->sends[c->nsends - 1], c->peer_arg);
	unlock();
	return 0;
}

static int post_check(struct rt_conn *c, const char *fn,
		      const struct rt_sge *sges, unsigned int n,
		      const struct rw_segment *seg, uint64_t *total,
		      struct rt_err *err)
{
	unsigned int i;

	*total = 0;
	if (gone(c, fn))
		return rt_err_set(err, ENOTCONN, "destroyed");
	if (c->dead)
		return rt_err_set(err, ENOTCONN, "%s", c->err.msg);
	if (!n || n > RT_MAX_SGE) {
		misuse("%s with %u fragments", fn, n);
		return rt_err_set(err, EINVAL, "bad fragments");
	}
	for (i = 0; i < n; i++) {
		if (!sge_ok(c, &sges[i])) {
			misuse("%s: fragment %u is not live local memory", fn,
			       i);
			return rt_err_set(err, EINVAL, "bad fragment");
		}
		*total += sges[i].length;
	}
	return 0;
}

int rt_post_read(struct rt_conn *c, const struct rt_sge *sink,
		 unsigned int nsink, const struct rw_segment *seg,
		 uint64_t cookie, unsigned int flags, struct rt_err *err)
{
	struct rt_event ev = { .type = RT_EV_READ_DONE, .cookie = cookie };
	struct fk_work *w;
	uint64_t total;
	int ret;

	lock();
	ret = post_check(c, "rt_post_read", sink, nsink, seg, &total, err);
	if (!ret && total != seg->length) {
		misuse("rt_post_read: sinks of %llu octets for a segment of %u",
		       (unsigned long long)total, seg->length);
		ret = rt_err_set(err, EINVAL, "sink length mismatch");
	}
	if (ret) {
		unlock();
		return ret;
	}
	if (!seg->length) {
		if (flags & RT_WR_SIGNAL) {
			ev.status_str = status_str(0);
			ev_push(c, &ev);
		}
		unlock();
		return 0;
	}
	w = xcalloc(1, sizeof(*w));
	w->kind = FK_READ;
	w->cookie = cookie;
	w->signal = flags & RT_WR_SIGNAL;
	memcpy(w->sink, sink, nsink * sizeof(*sink));
	w->nsink = nsink;
	w->seg = *seg;
	c->nreads++;
	c->st.reads++;
	c->st.signalled += w->signal;
	work_push(c, w);
	sq_run(c);
	unlock();
	return 0;
}

/* A Write moves its data at once: the peer sees it before any later Send. */
static int write_land(struct rt_conn *c, const struct rt_sge *src,
		      unsigned int nsrc, const struct rw_segment *seg,
		      uint64_t total)
{
	struct fk_peer_mem *m;
	struct rw_segment s = *seg;
	uint8_t *dst;
	unsigned int i;

	s.length = (uint32_t)total;
	m = peer_mem_find(c, &s);
	if (!m)
		return EIO;
	dst = m->buf + (seg->offset - m->offset);
	for (i = 0; i < nsrc; i++) {
		memcpy(dst, src[i].addr, src[i].length);
		dst += src[i].length;
	}
	c->st.write_bytes += total;
	return 0;
}

int rt_post_write(struct rt_conn *c, const struct rt_sge *src,
		  unsigned int nsrc, const struct rw_segment *seg,
		  uint64_t cookie, unsigned int flags, struct rt_err *err)
{
	struct rt_event ev = { .type = RT_EV_WRITE_DONE, .cookie = cookie };
	struct fk_work *w;
	uint64_t total;
	int ret;

	lock();
	ret = post_check(c, "rt_post_write", src, nsrc, seg, &total, err);
	if (!ret && total > seg->length) {
		misuse("rt_post_write of %llu octets into a segment of %u",
		       (unsigned long long)total, seg->length);
		ret = rt_err_set(err, EINVAL, "source longer than the segment");
	}
	if (ret) {
		unlock();
		return ret;
	}
	if (!total) {
		if (flags & RT_WR_SIGNAL) {
			ev.status_str = status_str(0);
			ev_push(c, &ev);
		}
		unlock();
		return 0;
	}
	w = xcalloc(1, sizeof(*w));
	w->kind = FK_WRITE;
	w->cookie = cookie;
	w->signal = flags & RT_WR_SIGNAL;
	w->seg = *seg;
	w->status = write_land(c, src, nsrc, seg, total);
	grow((void **)&c->wlens, &c->writes_cap, c->nwrites + 1,
	     sizeof(*c->wlens));
	c->wsegs = realloc(c->wsegs, c->writes_cap * sizeof(*c->wsegs));
	if (!c->wsegs)
		abort();
	c->wlens[c->nwrites] = (uint32_t)total;
	c->wsegs[c->nwrites++] = *seg;
	c->st.writes++;
	c->st.signalled += w->signal;
	work_push(c, w);
	sq_run(c);
	unlock();
	return 0;
}

/* ---- Registration ------------------------------------------------------ */

struct rt_regset *rt_regset_create(struct rt_conn *c, struct rt_err *err)
{
	struct rt_regset *s = NULL;

	lock();
	if (gone(c, "rt_regset_create") || c->dead) {
		rt_err_set(err, ENOTCONN, "the connection is closed");
	} else {
		s = xcalloc(1, sizeof(*s));
		s->conn = c;
		s->id = ++fk.next_set;
		s->next = c->sets;
		c->sets = s;
	}
	unlock();
	return s;
}

static unsigned int set_live(const struct rt_regset *s, uint32_t *handle)
{
	const struct rt_conn *c = s->conn;
	unsigned int i, n = 0;

	for (i = 0; i < c->nregs; i++) {
		if (c->regs[i].set_id == s->id && c->regs[i].live) {
			n++;
			if (handle)
				*handle = c->regs[i].handle;
		}
	}
	return n;
}

int rt_reg_expose(struct rt_regset *s, void *addr, size_t len,
		  enum rt_access acc, struct rw_segment *segs, unsigned int max,
		  struct rt_err *err)
{
	struct rt_conn *c = s->conn;
	size_t nseg = (len + RT_REG_MAX_SEG - 1) / RT_REG_MAX_SEG, i;
	struct fake_reg *r;

	lock();
	if (gone(c, "rt_reg_expose")) {
		unlock();
		return rt_err_set(err, ENOTCONN, "destroyed");
	}
	if (c->dead) {
		unlock();
		return rt_err_set(err, ENOTCONN, "%s", c->err.msg);
	}
	if (!len || !acc || (acc & ~(RT_REMOTE_READ | RT_REMOTE_WRITE))) {
		unlock();
		return rt_err_set(err, EINVAL, "nothing to expose");
	}
	if (nseg > max) {
		unlock();
		return rt_err_set(err, E2BIG,
				  "%zu segments needed, room for %u", nseg,
				  max);
	}
	grow((void **)&c->regs, &c->regs_cap, c->nregs + 1, sizeof(*c->regs));
	r = &c->regs[c->nregs++];
	memset(r, 0, sizeof(*r));
	r->set_id = s->id;
	r->handle = FK_HANDLE_BASE + ++fk.next_handle;
	r->addr = addr;
	r->len = len;
	r->acc = acc;
	r->live = true;
	r->seq_expose = ++fk.seq;
	for (i = 0; i < nseg; i++) {
		segs[i].handle = r->handle;
		segs[i].offset = (uint64_t)(uintptr_t)addr + i * RT_REG_MAX_SEG;
		segs[i].length =
			(uint32_t)(len - i * RT_REG_MAX_SEG < RT_REG_MAX_SEG ?
					   len - i * RT_REG_MAX_SEG :
					   RT_REG_MAX_SEG);
	}
	c->st.exposures++;
	if (c->mode == RT_REG_MR)
		c->st.registrations++;
	else
		c->st.binds++;
	unlock();
	return (int)nseg;
}

uint32_t rt_regset_inv_handle(const struct rt_regset *s)
{
	uint32_t h = 0;

	lock();
	if (s->conn->mode != RT_REG_MW || set_live(s, &h) != 1)
		h = 0;
	unlock();
	return h;
}

/* As the real one: the largest live window (the last of equals). */
uint32_t rt_regset_inv_any(const struct rt_regset *s)
{
	const struct rt_conn *c = s->conn;
	uint32_t handle = 0;
	size_t best = 0;
	unsigned int i;

	lock();
	for (i = 0; c->mode == RT_REG_MW && i < c->nregs; i++) {
		const struct fake_reg *r = &c->regs[i];

		if (r->set_id == s->id && r->live && r->len >= best) {
			best = r->len;
			handle = r->handle;
		}
	}
	unlock();
	return handle;
}

unsigned int rt_regset_count(const struct rt_regset *s)
{
	unsigned int n;

	lock();
	n = set_live(s, NULL);
	unlock();
	return n;
}

int rt_reg_revoke(struct rt_regset *s, struct rt_err *err)
{
	struct rt_conn *c = s->conn;
	unsigned int i, n = 0;

	lock();
	rt_err_clear(err);
	if (gone(c, "rt_reg_revoke")) {
		unlock();
		return 0;
	}
	c->st.revokes++;
	for (i = 0; i < c->nregs; i++) {
		struct fake_reg *r = &c->regs[i];

		if (r->set_id != s->id || !r->live)
			continue;
		r->live = false;
		r->seq_revoke = ++fk.seq;
		n++;
		if (c->mode == RT_REG_MR) {
			c->st.deregistrations++;
			c->st.mr_fences++;
		} else {
			c->st.invalidations++;
		}
	}
	if (n && c->revoke_fails && !c->dead) {
		conn_kill(c, EIO, "a local invalidation failed");
		unlock();
		return rt_err_set(err, EIO, "a local invalidation failed");
	}
	unlock();
	return 0;
}

void rt_regset_destroy(struct rt_regset *s)
{
	struct rt_regset **pp;
	struct rt_conn *c;

	if (!s)
		return;
	c = s->conn;
	rt_reg_revoke(s, NULL);
	lock();
	for (pp = &c->sets; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			free(s);
			unlock();
			return;
		}
	}
	misuse("rt_regset_destroy of a set the connection does not hold");
	unlock();
}

enum rt_reg_mode rt_reg_mode(const struct rt_conn *c)
{
	return c->mode;
}

const char *rt_reg_mode_name(enum rt_reg_mode m)
{
	return m == RT_REG_MW ? "mw" : m == RT_REG_MR ? "mr" : "auto";
}

int rt_reg_set_mode(struct rt_conn *c, enum rt_reg_mode m, struct rt_err *err)
{
	unsigned int i;
	int ret = 0;

	lock();
	if (m == RT_REG_AUTO)
		m = fk.cfg.no_windows ? RT_REG_MR : RT_REG_MW;
	for (i = 0; i < c->nregs && !ret; i++)
		if (c->regs[i].live)
			ret = rt_err_set(err, EBUSY, "exposures are live");
	if (!ret && m == RT_REG_MW && fk.cfg.no_windows)
		ret = rt_err_set(err, ENOTSUP, "the device has no windows");
	if (!ret && m == RT_REG_MR && c->mode == RT_REG_MW &&
	    c->local.remote_inv)
		ret = rt_err_set(err, EINVAL,
				 "Send With Invalidate was advertised");
	if (!ret)
		c->mode = m;
	unlock();
	return ret;
}

void *rt_reg_buf_alloc(struct rt_conn *c, size_t len, struct rt_err *err)
{
	struct fk_pool *p = NULL;

	lock();
	if (gone(c, "rt_reg_buf_alloc") || c->dead) {
		rt_err_set(err, ENOTCONN, "the connection is closed");
	} else {
		p = xcalloc(1, sizeof(*p));
		p->len = len;
		p->p = calloc(1, len ? len : 1);
		if (!p->p) {
			free(p);
			p = NULL;
			rt_err_set(err, ENOMEM, "out of memory");
		} else {
			p->next = c->pool;
			c->pool = p;
		}
	}
	unlock();
	return p ? p->p : NULL;
}

/* Is any byte of [a, a + len) exposed now? */
static bool exposed(const struct rt_conn *c, const uint8_t *a, size_t len)
{
	unsigned int i;

	for (i = 0; i < c->nregs; i++) {
		const uint8_t *r = c->regs[i].addr;

		if (c->regs[i].live && r < a + len && a < r + c->regs[i].len)
			return true;
	}
	return false;
}

void rt_reg_buf_free(struct rt_conn *c, void *p)
{
	struct fk_pool **pp, *f;

	if (!p)
		return;
	lock();
	if (gone(c, "rt_reg_buf_free")) {
		unlock();
		return;
	}
	for (pp = &c->pool; *pp; pp = &(*pp)->next) {
		if ((*pp)->p != p)
			continue;
		f = *pp;
		if (exposed(c, p, f->len))
			misuse("rt_reg_buf_free of memory still exposed");
		*pp = f->next;
		free(f->p);
		free(f);
		unlock();
		return;
	}
	misuse("rt_reg_buf_free of memory not from rt_reg_buf_alloc");
	unlock();
}

/* ---- The test's side --------------------------------------------------- */

void fake_reset(void)
{
	struct rt_listener *l;
	struct rt_conn *c;

	lock();
	while ((l = fk.listeners)) {
		fk.listeners = l->next;
		listener_free(l);
	}
	while ((c = fk.conns)) {
		fk.conns = c->next;
		conn_free(c);
	}
	fk.last = NULL;
	fk.connects = 0;
	fk.misuses = 0;
	fk.misuse[0] = '\0';
	fk.seq = 0;
	cfg_defaults();
	unlock();
}

struct fake_cfg *fake_cfg(void)
{
	lock();
	unlock();
	return &fk.cfg;
}

uint64_t fake_mark(void)
{
	uint64_t s;

	lock();
	s = ++fk.seq;
	unlock();
	return s;
}

unsigned int fake_misuses(void)
{
	return fk.misuses;
}

const char *fake_misuse_msg(void)
{
	return fk.misuse;
}

struct rt_conn *fake_conn_new(const struct rt_conn_attr *attr)
{
	struct rt_conn *c;

	lock();
	c = conn_make(attr);
	unlock();
	return c;
}

unsigned int fake_connects(void)
{
	unsigned int n;

	lock();
	n = fk.connects;
	unlock();
	return n;
}

struct rt_conn *fake_last_conn(void)
{
	struct rt_conn *c;

	lock();
	c = fk.last;
	unlock();
	return c;
}

const struct rt_conn_attr *fake_conn_attr(const struct rt_conn *c)
{
	return &c->attr;
}

bool fake_destroyed(const struct rt_conn *c)
{
	return c->destroyed;
}

unsigned int fake_disconnects(const struct rt_conn *c)
{
	return c->disconnects;
}

void fake_kill(struct rt_conn *c, int code, const char *msg)
{
	lock();
	if (!c->destroyed)
		conn_kill(c, code, msg);
	unlock();
}

int fake_recv(struct rt_conn *c, const void *data, uint32_t len,
	      uint32_t inv_rkey)
{
	struct rt_event ev = { .type = RT_EV_RECV };
	struct rt_rbuf *b = NULL;
	unsigned int i;

	lock();
	if (c->destroyed || c->dead) {
		unlock();
		return -ENOTCONN;
	}
	for (i = 0; i < c->nrbufs && !b; i++)
		if (c->rbufs[i].posted)
			b = &c->rbufs[i];
	if (!b) {
		unlock();
		return -ENOBUFS;
	}
	if (len > b->size) {
		c->st.errors++;
		conn_kill(c, EIO, "a message longer than the Receive buffer");
		unlock();
		return -EMSGSIZE;
	}
	memcpy(b->data, data, len);
	b->posted = false;
	b->lent = true;
	c->rposted--;
	c->rlent++;
	c->scr.posted = c->rposted + c->rlent;
	c->st.recvs++;
	ev.rbuf = b;
	ev.data = b->data;
	ev.len = len;
	ev.status_str = status_str(0);
	if (inv_rkey) {
		ev.wc_flags = RT_WC_WITH_INV;
		ev.inv_rkey = inv_rkey;
		/* the "device" fences the window it names, nothing else */
		for (i = 0; c->mode == RT_REG_MW && i < c->nregs; i++) {
			struct fake_reg *r = &c->regs[i];

			if (r->handle != inv_rkey || !r->live)
				continue;
			r->live = false;
			r->remote_inv = true;
			r->seq_revoke = ++fk.seq;
			c->st.remote_invs++;
		}
	}
	ev_push(c, &ev);
	unlock();
	return 0;
}

unsigned int fake_nsends(const struct rt_conn *c)
{
	unsigned int n;

	lock();
	n = c->nsends;
	unlock();
	return n;
}

const struct fake_msg *fake_send(const struct rt_conn *c, unsigned int i)
{
	const struct fake_msg *m;

	lock();
	m = i < c->nsends ? &c->sends[i] : NULL;
	unlock();
	return m;
}

bool fake_send_get(const struct rt_conn *c, unsigned int i,
		   struct fake_msg *out)
{
	bool found;

	lock();
	found = i < c->nsends;
	if (found)
		*out = c->sends[i];
	unlock();
	return found;
}

bool fake_wait_sends(const struct rt_conn *c, unsigned int n, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;

	while (fake_nsends(c) < n) {
		if (now_ms() >= deadline)
			return false;
		usleep(1000);
	}
	return true;
}

void fake_sends_clear(struct rt_conn *c)
{
	unsigned int i;

	lock();
	for (i = 0; i < c->nsends; i++)
		free(c->sends[i].data);
	c->nsends = 0;
	unlock();
}

/* Let the n oldest held work requests of kind go (n = 0: all). */
static void release(struct rt_conn *c, enum fk_kind kind, unsigned int n,
		    int status)
{
	struct fk_work *w;
	unsigned int done = 0;

	for (w = c->wq_head; w && (!n || done < n); w = w->next) {
		if (w->kind != kind || w->released)
			continue;
		w->released = true;
		w->status = status;
		done++;
	}
	sq_run(c);
}

void fake_complete_sends(struct rt_conn *c, unsigned int n, int status)
{
	lock();
	release(c, FK_SEND, n, status);
	unlock();
}

void fake_complete_reads(struct rt_conn *c, unsigned int n, int status)
{
	lock();
	release(c, FK_READ, n, status);
	unlock();
}

unsigned int fake_reads_held(const struct rt_conn *c)
{
	const struct fk_work *w;
	unsigned int n = 0;

	lock();
	for (w = c->wq_head; w; w = w->next)
		n += w->kind == FK_READ;
	unlock();
	return n;
}

unsigned int fake_nregs(const struct rt_conn *c)
{
	return c->nregs;
}

const struct fake_reg *fake_reg(const struct rt_conn *c, unsigned int i)
{
	return i < c->nregs ? &c->regs[i] : NULL;
}

const struct fake_reg *fake_reg_find(const struct rt_conn *c, uint32_t handle)
{
	unsigned int i;

	for (i = 0; i < c->nregs; i++)
		if (c->regs[i].handle == handle)
			return &c->regs[i];
	return NULL;
}

unsigned int fake_live_regs(const struct rt_conn *c)
{
	unsigned int i, n = 0;

	lock();
	for (i = 0; i < c->nregs; i++)
		n += c->regs[i].live;
	unlock();
	return n;
}

/* The exposure through which the peer may access seg with acc. */
static uint8_t *peer_access(const struct rt_conn *c,
			    const struct rw_segment *seg, enum rt_access acc)
{
	unsigned int i;

	for (i = 0; i < c->nregs; i++) {
		const struct fake_reg *r = &c->regs[i];
		uint64_t base = (uint64_t)(uintptr_t)r->addr;

		if (r->handle == seg->handle && r->live && (r->acc & acc) &&
		    seg->offset >= base && seg->offset - base <= r->len &&
		    seg->length <= r->len - (seg->offset - base))
			return (uint8_t *)r->addr + (seg->offset - base);
	}
	return NULL;
}

int fake_peer_rdma_read(struct rt_conn *c, const struct rw_segment *seg,
			void *out)
{
	uint8_t *p;

	lock();
	p = c->destroyed ? NULL : peer_access(c, seg, RT_REMOTE_READ);
	if (p)
		memcpy(out, p, seg->length);
	unlock();
	return p ? 0 : -EACCES;
}

int fake_peer_rdma_write(struct rt_conn *c, const struct rw_segment *seg,
			 const void *in)
{
	uint8_t *p;

	lock();
	p = c->destroyed ? NULL : peer_access(c, seg, RT_REMOTE_WRITE);
	if (p)
		memcpy(p, in, seg->length);
	unlock();
	return p ? 0 : -EACCES;
}

void fake_peer_mem(struct rt_conn *c, uint32_t handle, uint64_t offset,
		   void *buf, size_t len)
{
	struct fk_peer_mem *m = xcalloc(1, sizeof(*m));

	m->handle = handle;
	m->offset = offset;
	m->buf = buf;
	m->len = len;
	lock();
	m->next = c->pmem;
	c->pmem = m;
	unlock();
}

unsigned int fake_nreads(const struct rt_conn *c)
{
	return c->nreads;
}

unsigned int fake_nwrites(const struct rt_conn *c)
{
	return c->nwrites;
}

uint32_t fake_write_len(const struct rt_conn *c, unsigned int i)
{
	return i < c->nwrites ? c->wlens[i] : 0;
}

const struct rw_segment *fake_write_seg(const struct rt_conn *c, unsigned int i)
{
	return i < c->nwrites ? &c->wsegs[i] : NULL;
}

unsigned int fake_lmem_live(const struct rt_conn *c)
{
	return c->lmem_live;
}

unsigned int fake_lmem_allocs(const struct rt_conn *c)
{
	return c->lmem_allocs;
}
