/*
 * t_rt_util.c - helpers of the transport layer's VM tests (t_rt_util.h):
 * check lines, patterns, the rt command server thread, the raw verbs peer
 * thread and client round trips.  Every wait here has a deadline.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/vm/t_rt_util.h"

bool t_have_device(void)
{
	int n = 0;
	struct ibv_device **l = ibv_get_device_list(&n);

	if (l)
		ibv_free_device_list(l);
	if (n > 0)
		return true;
	printf("SKIP: no RDMA device (run it inside tests/vm/run)\n");
	return false;
}

int64_t t_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t t_now_ms(void)
{
	return t_now_us() / 1000;
}

static void watchdog_fired(int sig)
{
	static const char msg[] = "FAIL - watchdog: the test ran out of time\n";

	(void)sig;
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(2);
}

void t_watchdog(unsigned int seconds)
{
	signal(SIGALRM, watchdog_fired);
	alarm(seconds);
}

static uint8_t pattern_byte(size_t i, uint32_t seed)
{
	return (uint8_t)(seed + i * 131u + (i >> 8) * 7u + (i >> 16));
}

void t_pattern_fill(void *buf, size_t len, uint32_t seed)
{
	uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pattern_byte(i, seed);
}

long t_pattern_check(const void *buf, size_t len, uint32_t seed)
{
	const uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pattern_byte(i, seed))
			return (long)i;
	return -1;
}

long t_all_bytes(const void *buf, size_t len, uint8_t v)
{
	const uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != v)
			return (long)i;
	return -1;
}

const char *t_addr4(void)
{
	const char *s = getenv("RDMA_ADDR4");

	return s && *s ? s : "192.0.2.1";
}

const char *t_addr6(void)
{
	const char *s = getenv("RDMA_ADDR6");

	return s && *s ? s : "2001:db8::1";
}

void t_sockaddr(struct sockaddr_storage *ss, const char *host, uint16_t port)
{
	memset(ss, 0, sizeof(*ss));
	if (strchr(host, ':')) {
		struct sockaddr_in6 *in6 = (void *)ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		inet_pton(AF_INET6, host, &in6->sin6_addr);
	} else {
		struct sockaddr_in *in = (void *)ss;

		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		inet_pton(AF_INET, host, &in->sin_addr);
	}
}

/* ---- The rt command server ------------------------------------------- */

struct t_sconn {
	struct rt_conn *c;
	struct rt_event backlog[64];
	unsigned int nb;
};

static struct rt_sbuf *srv_sbuf(struct rt_conn *c)
{
	int64_t deadline = t_now_ms() + T_TIMEOUT_MS;
	struct rt_err err;
	struct rt_sbuf *b;

	while (!(b = rt_sbuf_get(c, &err))) {
		if (err.code != EAGAIN || t_now_ms() > deadline)
			return NULL;
		usleep(100);
	}
	return b;
}

static void srv_send(struct rt_conn *c, const void *msg, uint32_t len,
		     uint32_t inv_rkey)
{
	struct rt_sbuf *b = srv_sbuf(c);
	struct rt_err err;

	if (!b)
		return;
	memcpy(rt_sbuf_data(b), msg, len);
	if (rt_post_send(c, b, len, NULL, 0, inv_rkey, 0, 0, &err))
		fprintf(stderr, "server: send failed: %s\n", err.msg);
}

static void srv_reply(struct rt_conn *c, uint32_t op, int32_t status,
		      uint32_t inv_rkey)
{
	struct t_reply r = { .op = op, .status = status };

	srv_send(c, &r, sizeof(r), inv_rkey);
}

static void srv_death(struct t_srv *s, struct rt_conn *c)
{
	pthread_mutex_lock(&s->mu);
	s->last_death = *rt_conn_error(c);
	pthread_mutex_unlock(&s->mu);
	atomic_store(&s->last_death_ms, t_now_ms());
	atomic_fetch_add(&s->deaths, 1);
}

/* Wait for a completion event of type; other events wait in the backlog. */
static int srv_wait(struct t_srv *s, struct t_sconn *sc, enum rt_ev_type type)
{
	int64_t deadline = t_now_ms() + T_TIMEOUT_MS;
	struct rt_event ev;
	int n;

	while (t_now_ms() < deadline) {
		n = rt_conn_poll(sc->c, &ev, 1, 100);
		if (n <= 0)
			continue;
		if (ev.type == type)
			return ev.status;
		if (ev.type == RT_EV_DEAD) {
			srv_death(s, sc->c);
			return -ENOTCONN;
		}
		if (ev.type == RT_EV_RECV && sc->nb < 64)
			sc->backlog[sc->nb++] = ev;
	}
	return -ETIMEDOUT;
}

/* The local memory of a transfer, in nsge pieces. */
static unsigned int split_sges(struct rt_lmem *m, uint32_t len, uint32_t nsge,
			       struct rt_sge *sge)
{
	uint32_t i, off = 0, part;
	char *base = rt_lmem_addr(m);

	if (nsge < 1 || nsge > 3 || len < nsge)
		nsge = 1;
	part = len / nsge;
	for (i = 0; i < nsge; i++) {
		uint32_t l = i + 1 == nsge ? len - off : part;

		sge[i] = rt_lmem_sge(m, base + off, l);
		off += l;
	}
	return nsge;
}

static void srv_rdma(struct t_srv *s, struct t_sconn *sc,
		     const struct t_cmd *cmd)
{
	uint32_t len = cmd->seg.length;
	struct rt_sge sge[3];
	struct rt_lmem *m;
	struct rt_err err;
	unsigned int n;
	int st;

	m = rt_lmem_alloc(sc->c, len ? len : 1, &err);
	if (!m) {
		srv_reply(sc->c, cmd->op, -ENOMEM, 0);
		return;
	}
	n = split_sges(m, len, cmd->nsge, sge);
	if (cmd->op == T_WRITE) {
		/* The reply goes right behind the Writes: the layer must keep
		 * it behind them even when they wait for room. */
		t_pattern_fill(rt_lmem_addr(m), len, cmd->seed);
		st = rt_post_write(sc->c, sge, n, &cmd->seg, 1, RT_WR_SIGNAL,
				   &err);
		if (!st)
			srv_reply(sc->c, cmd->op, 0, 0);
		if (!st)
			st = srv_wait(s, sc, RT_EV_WRITE_DONE);
		if (!st)
			st = 2; /* replied already */
	} else {
		memset(rt_lmem_addr(m), 0, len);
		st = rt_post_read(sc->c, sge, n, &cmd->seg, 2, RT_WR_SIGNAL,
				  &err);
		if (!st)
			st = srv_wait(s, sc, RT_EV_READ_DONE);
		if (!st &&
		    t_pattern_check(rt_lmem_addr(m), len, cmd->seed) >= 0)
			st = 1;
	}
	if (st == 0 || st == 1)
		srv_reply(sc->c, cmd->op, st, 0);
	else if (st != 2)
		fprintf(stderr, "server: RDMA %s failed: %d\n",
			cmd->op == T_WRITE ? "Write" : "Read", st);
	if (st != -ETIMEDOUT)
		rt_lmem_free(sc->c, m); /* else it may still be in use */
}

static void srv_recv(struct t_srv *s, struct t_sconn *sc, struct rt_event *ev)
{
	struct t_cmd cmd;

	if (ev->len >= sizeof(cmd))
		memcpy(&cmd, ev->data, sizeof(cmd));
	else
		cmd.op = T_ECHO;
	switch (cmd.op) {
	case T_WRITE:
	case T_READ:
		rt_recv_repost(sc->c, ev->rbuf);
		srv_rdma(s, sc, &cmd);
		return;
	case T_INV:
		rt_recv_repost(sc->c, ev->rbuf);
		srv_reply(sc->c, cmd.op, 0, cmd.seg.handle);
		return;
	case T_CLOSE:
		rt_recv_repost(sc->c, ev->rbuf);
		rt_conn_disconnect(sc->c);
		return;
	default:
		srv_send(sc->c, ev->data, ev->len, 0);
		rt_recv_repost(sc->c, ev->rbuf);
		return;
	}
}

static void srv_event(struct t_srv *s, struct t_sconn *sc, struct rt_event *ev)
{
	if (ev->type == RT_EV_RECV)
		srv_recv(s, sc, ev);
	else if (ev->type == RT_EV_DEAD)
		srv_death(s, sc->c);
}

static void srv_serve_conn(struct t_srv *s, struct t_sconn *sc)
{
	struct rt_event ev[8];
	int n, i;

	while (sc->nb) {
		struct rt_event e = sc->backlog[0];

		memmove(sc->backlog, sc->backlog + 1,
			--sc->nb * sizeof(sc->backlog[0]));
		srv_event(s, sc, &e);
	}
	while ((n = rt_conn_poll(sc->c, ev, 8, 0)) > 0)
		for (i = 0; i < n; i++)
			srv_event(s, sc, &ev[i]);
}

static void srv_accept(struct t_srv *s, struct t_sconn *sc)
{
	struct rt_conn *nc[4];
	struct rt_err err;
	int n, i;

	n = rt_listener_process(s->l, nc, 4, &err);
	if (n < 0)
		atomic_store(&s->listen_errno, -n);
	if (err.code)
		fprintf(stderr, "server: %s\n", err.msg);
	for (i = 0; i < n; i++) {
		pthread_mutex_lock(&s->mu);
		if (s->n < T_SRV_MAX_CONNS) {
			sc[s->n].c = nc[i];
			sc[s->n].nb = 0;
			s->conns[s->n++] = nc[i];
			nc[i] = NULL;
		}
		pthread_mutex_unlock(&s->mu);
		if (nc[i])
			rt_conn_destroy(nc[i]);
		else
			atomic_fetch_add(&s->accepted, 1);
	}
}

static void *srv_thread(void *arg)
{
	struct t_srv *s = arg;
	struct t_sconn *sc = calloc(T_SRV_MAX_CONNS, sizeof(*sc));
	struct pollfd pfd[T_SRV_MAX_CONNS + 1];
	unsigned int i, n;

	while (sc && !atomic_load(&s->stop)) {
		pfd[0] = (struct pollfd){ rt_listener_fd(s->l), POLLIN, 0 };
		pthread_mutex_lock(&s->mu);
		n = s->n;
		pthread_mutex_unlock(&s->mu);
		for (i = 0; i < n; i++)
			pfd[i + 1] = (struct pollfd){ rt_conn_fd(sc[i].c),
						      POLLIN, 0 };
		poll(pfd, n + 1, 20);
		srv_accept(s, sc);
		for (i = 0; i < n; i++)
			srv_serve_conn(s, &sc[i]);
	}
	free(sc);
	return NULL;
}

int t_srv_start(struct t_srv *s, const char *host,
		const struct rt_conn_attr *attr)
{
	struct sockaddr_storage ss;
	struct rt_err err;

	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->mu, NULL);
	t_sockaddr(&ss, host, 0);
	s->l = rt_listen((struct sockaddr *)&ss, 0, attr, &err);
	if (!s->l) {
		NOTE("listen on %s: %s", host, err.msg);
		return -1;
	}
	s->port = rt_listener_port(s->l);
	return pthread_create(&s->th, NULL, srv_thread, s) ? -1 : 0;
}

void t_srv_stop(struct t_srv *s)
{
	unsigned int i;

	if (!s->l)
		return;
	atomic_store(&s->stop, true);
	pthread_join(s->th, NULL);
	for (i = 0; i < s->n; i++)
		rt_conn_destroy(s->conns[i]);
	rt_listener_destroy(s->l);
	s->l = NULL;
}

struct rt_conn *t_srv_conn(struct t_srv *s, int idx, int timeout_ms)
{
	int64_t deadline = t_now_ms() + timeout_ms;
	struct rt_conn *c = NULL;

	do {
		pthread_mutex_lock(&s->mu);
		if ((unsigned int)idx < s->n)
			c = s->conns[idx];
		pthread_mutex_unlock(&s->mu);
		if (c)
			return c;
		usleep(1000);
	} while (t_now_ms() < deadline);
	return NULL;
}

/* ---- Client side ----------------------------------------------------- */

struct rt_conn *t_connect(const char *host, uint16_t port,
			  const struct rt_conn_attr *attr, struct rt_err *err)
{
	int64_t deadline = t_now_ms() + T_TIMEOUT_MS;
	struct sockaddr_storage ss;
	struct rt_conn *c;

	t_sockaddr(&ss, host, port);
	for (;;) {
		c = rt_connect((struct sockaddr *)&ss, attr, err);
		if (c || err->code != ECONNREFUSED || t_now_ms() > deadline)
			return c;
		usleep(100 * 1000);
	}
}

int t_send(struct rt_conn *c, const void *msg, uint32_t len)
{
	int64_t deadline = t_now_ms() + T_TIMEOUT_MS;
	struct rt_sbuf *b;
	struct rt_err err;

	while (!(b = rt_sbuf_get(c, &err))) {
		if (err.code != EAGAIN || t_now_ms() > deadline)
			return -1;
		usleep(100);
	}
	if (len > rt_sbuf_size(b)) {
		rt_sbuf_put(c, b);
		return -1;
	}
	memcpy(rt_sbuf_data(b), msg, len);
	return rt_post_send(c, b, len, NULL, 0, 0, 0, 0, &err) ? -1 : 0;
}

int t_recv(struct rt_conn *c, void *buf, uint32_t cap, int timeout_ms,
	   struct rt_event *evout)
{
	int64_t deadline = t_now_ms() + timeout_ms;
	struct rt_event ev;
	int64_t left;
	uint32_t len;

	while ((left = deadline - t_now_ms()) > 0) {
		if (rt_conn_poll(c, &ev, 1, (int)left) <= 0)
			continue;
		if (ev.type == RT_EV_DEAD)
			return -1;
		if (ev.type != RT_EV_RECV)
			continue;
		len = ev.len < cap ? ev.len : cap;
		memcpy(buf, ev.data, len);
		if (evout)
			*evout = ev;
		rt_recv_repost(c, ev.rbuf);
		return (int)ev.len;
	}
	return -1;
}

int32_t t_call(struct rt_conn *c, const struct t_cmd *cmd, struct rt_event *ev)
{
	struct t_reply r;

	if (t_send(c, cmd, sizeof(*cmd)))
		return INT32_MIN;
	if (t_recv(c, &r, sizeof(r), T_TIMEOUT_MS, ev) != (int)sizeof(r))
		return INT32_MIN;
	return r.status;
}

int t_wait_dead(struct rt_conn *c, int timeout_ms)
{
	int64_t start = t_now_ms(), left;
	struct pollfd p = { rt_conn_fd(c), POLLIN, 0 };
	struct rt_event ev;

	for (;;) {
		if (rt_conn_poll(c, &ev, 1, 0) > 0) {
			if (ev.type == RT_EV_DEAD)
				break;
			continue;
		}
		if (rt_conn_state(c) == RT_CONN_DEAD)
			break;
		left = start + timeout_ms - t_now_ms();
		if (left <= 0)
			return -1;
		poll(&p, 1, (int)left);
	}
	return (int)(t_now_ms() - start);
}

/* ---- The raw verbs peer ----------------------------------------------- */

#define RAW_BUF	      (8u << 20)
#define RAW_NRECV     8
#define RAW_RECV_SIZE 4096u
#define RAW_WRID_RECV (1ull << 62)

struct raw_conn {
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	char *buf; /* RAW_BUF of data, then the Receive buffers,
				 * then one Send buffer */
	bool qp_gone;
	bool dead;
};

static struct rdma_cm_event *raw_event(struct rdma_event_channel *ch,
				       int timeout_ms)
{
	struct pollfd p = { ch->fd, POLLIN, 0 };
	struct rdma_cm_event *ev;

	if (!rdma_get_cm_event(ch, &ev))
		return ev;
	if (poll(&p, 1, timeout_ms) <= 0)
		return NULL;
	return rdma_get_cm_event(ch, &ev) ? NULL : ev;
}

static int raw_post_recv(struct raw_conn *rc, unsigned int i)
{
	struct ibv_sge sge = { (uintptr_t)(rc->buf + RAW_BUF +
					   i * RAW_RECV_SIZE),
			       RAW_RECV_SIZE, rc->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = RAW_WRID_RECV | i,
				  .sg_list = &sge,
				  .num_sge = 1 },
			   *bad;

	return ibv_post_recv(rc->id->qp, &wr, &bad);
}

static int raw_setup(struct raw_conn *rc)
{
	struct ibv_qp_init_attr qa;
	size_t sz = RAW_BUF + (RAW_NRECV + 1) * RAW_RECV_SIZE;
	/* A rogue operation the victim refuses may lose its NAK when the
	 * victim's QP enters the error state; the raw peer then learns of the
	 * refusal from retry exhaustion.  rdma_cm's default ACK timeout makes
	 * that take about 8.6 s, too close to T_TIMEOUT_MS: use the
	 * transport's (about 2 s in all). */
	uint8_t ack_timeout = 16;
	unsigned int i;

	rdma_set_option(rc->id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT,
			&ack_timeout, sizeof(ack_timeout));

	rc->pd = ibv_alloc_pd(rc->id->verbs);
	rc->cq = rc->pd ? ibv_create_cq(rc->id->verbs, 64, NULL, NULL, 0) :
			  NULL;
	rc->buf = malloc(sz);
	if (!rc->cq || !rc->buf)
		return -1;
	rc->mr = ibv_reg_mr(rc->pd, rc->buf, sz, IBV_ACCESS_LOCAL_WRITE);
	if (!rc->mr)
		return -1;
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = rc->cq;
	qa.recv_cq = rc->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 16;
	qa.cap.max_recv_wr = RAW_NRECV;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(rc->id, rc->pd, &qa))
		return -1;
	for (i = 0; i < RAW_NRECV; i++)
		if (raw_post_recv(rc, i))
			return -1;
	return 0;
}

static void raw_teardown(struct raw_conn *rc)
{
	if (rc->id && !rc->qp_gone) {
		rdma_disconnect(rc->id);
		rdma_destroy_qp(rc->id);
	}
	if (rc->mr)
		ibv_dereg_mr(rc->mr);
	if (rc->cq)
		ibv_destroy_cq(rc->cq);
	if (rc->pd)
		ibv_dealloc_pd(rc->pd);
	if (rc->id)
		rdma_destroy_id(rc->id);
	free(rc->buf);
	memset(rc, 0, sizeof(*rc));
}

/* Busy-wait (with naps) for one completion. */
static int raw_poll(struct raw_conn *rc, struct ibv_wc *wc, int timeout_ms)
{
	int64_t deadline = t_now_ms() + timeout_ms;
	int n;

	do {
		n = ibv_poll_cq(rc->cq, 1, wc);
		if (n)
			return n < 0 ? -1 : 0;
		usleep(200);
	} while (t_now_ms() < deadline);
	return -1;
}

static int raw_post(struct raw_conn *rc, enum ibv_wr_opcode op, void *addr,
		    uint32_t len, const struct rw_segment *seg, uint32_t inv)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, rc->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 7,
				  .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;

	if (seg) {
		wr.wr.rdma.rkey = seg->handle;
		wr.wr.rdma.remote_addr = seg->offset;
	}
	wr.invalidate_rkey = inv;
	return ibv_post_send(rc->id->qp, &wr, &bad);
}

/* Post, wait, and return the work completion status (or -1). */
static int raw_op(struct raw_conn *rc, enum ibv_wr_opcode op, void *addr,
		  uint32_t len, const struct rw_segment *seg, uint32_t inv)
{
	struct ibv_wc wc;

	if (raw_post(rc, op, addr, len, seg, inv))
		return -1;
	if (raw_poll(rc, &wc, 2 * T_TIMEOUT_MS))
		return -1;
	return wc.status;
}

static void raw_reply(struct raw_conn *rc, uint32_t op, int32_t status,
		      uint32_t inv)
{
	struct t_reply *r =
		(void *)(rc->buf + RAW_BUF + RAW_NRECV * RAW_RECV_SIZE);

	r->op = op;
	r->status = status;
	raw_op(rc, inv ? IBV_WR_SEND_WITH_INV : IBV_WR_SEND, r, sizeof(*r),
	       NULL, inv);
}

static void raw_result(struct t_raw_srv *r, int status)
{
	atomic_store(&r->last_status, status);
	atomic_fetch_add(&r->results, 1);
}

/* Act on one command; false when the connection is over. */
static bool raw_command(struct t_raw_srv *r, struct raw_conn *rc,
			const struct t_cmd *cmd)
{
	uint32_t len = cmd->seg.length < RAW_BUF ? cmd->seg.length : RAW_BUF;
	int st;

	switch (cmd->op) {
	case T_WRITE:
		t_pattern_fill(rc->buf, len, cmd->seed);
		st = raw_op(rc, IBV_WR_RDMA_WRITE, rc->buf, len, &cmd->seg, 0);
		raw_result(r, st);
		if (st != IBV_WC_SUCCESS)
			return false;
		raw_reply(rc, cmd->op, 0, 0);
		return true;
	case T_READ:
		memset(rc->buf, 0, len);
		st = raw_op(rc, IBV_WR_RDMA_READ, rc->buf, len, &cmd->seg, 0);
		raw_result(r, st);
		if (st != IBV_WC_SUCCESS)
			return false;
		raw_reply(rc, cmd->op,
			  t_pattern_check(rc->buf, len, cmd->seed) < 0 ? 0 : 1,
			  0);
		return true;
	case T_INV:
		/* Count it before replying: the client moves on at once. */
		raw_result(r, 0);
		raw_reply(rc, cmd->op, 0, cmd->seg.handle);
		return true;
	case T_DROPQP:
		/* Vanish without a word: no disconnect, no QP. */
		rdma_destroy_qp(rc->id);
		rc->qp_gone = true;
		raw_result(r, 0);
		return false;
	case T_DROPALL:
		rdma_destroy_qp(rc->id);
		rc->qp_gone = true;
		rdma_destroy_id(rc->id);
		rc->id = NULL;
		raw_result(r, 0);
		return false;
	default:
		raw_reply(rc, cmd->op, -EINVAL, 0);
		return true;
	}
}

/* Serve one accepted connection until it ends, stop, or a new request
 * arrives (returned through *next). */
static void raw_serve(struct t_raw_srv *r, struct rdma_event_channel *ch,
		      struct raw_conn *rc, struct rdma_cm_id **next)
{
	struct rdma_cm_event *ev;
	struct ibv_wc wc;
	struct t_cmd cmd;

	while (!atomic_load(&r->stop) && !rc->dead) {
		ev = raw_event(ch, 0);
		if (ev) {
			if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
				*next = ev->id;
			else if (ev->id == rc->id &&
				 ev->event != RDMA_CM_EVENT_ESTABLISHED)
				rc->dead = true;
			rdma_ack_cm_event(ev);
			if (*next)
				return;
			continue;
		}
		if (rc->qp_gone) {
			usleep(1000);
			continue;
		}
		if (ibv_poll_cq(rc->cq, 1, &wc) != 1) {
			usleep(200);
			continue;
		}
		if (!(wc.wr_id & RAW_WRID_RECV))
			continue;
		if (wc.status != IBV_WC_SUCCESS)
			return;
		memcpy(&cmd,
		       rc->buf + RAW_BUF + (wc.wr_id & 0xff) * RAW_RECV_SIZE,
		       sizeof(cmd));
		raw_post_recv(rc, (unsigned int)(wc.wr_id & 0xff));
		/* A QP dropped on purpose lingers until the peer notices. */
		if (!raw_command(r, rc, &cmd) && (!rc->qp_gone || !rc->id))
			return;
	}
}

static void raw_accept(struct t_raw_srv *r, struct rdma_event_channel *ch,
		       struct rdma_cm_id *id, struct rdma_cm_id **next)
{
	struct raw_conn rc = { .id = id };
	struct rdma_conn_param p = { .responder_resources = 16,
				     .initiator_depth = 16,
				     .retry_count = 6,
				     .rnr_retry_count = 7 };

	/* No private data: the rt client must fall back to v1 defaults. */
	if (raw_setup(&rc) || rdma_accept(id, &p)) {
		rdma_reject(id, NULL, 0);
		raw_teardown(&rc);
		return;
	}
	atomic_fetch_add(&r->conns, 1);
	raw_serve(r, ch, &rc, next);
	raw_teardown(&rc);
}

static void *raw_thread(void *arg)
{
	struct t_raw_srv *r = arg;
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *lid = NULL, *next = NULL, *id;
	struct sockaddr_storage ss;
	struct rdma_cm_event *ev;

	t_sockaddr(&ss, r->host, 0);
	if (!ch || fcntl(ch->fd, F_SETFL, O_NONBLOCK) ||
	    rdma_create_id(ch, &lid, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(lid, (struct sockaddr *)&ss) ||
	    rdma_listen(lid, 4)) {
		atomic_store(&r->ready, true);
		return NULL;
	}
	r->port = ntohs(rdma_get_src_port(lid));
	atomic_store(&r->ready, true);
	while (!atomic_load(&r->stop)) {
		id = next;
		next = NULL;
		if (!id) {
			ev = raw_event(ch, 50);
			if (!ev)
				continue;
			if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
				id = ev->id;
			rdma_ack_cm_event(ev);
		}
		if (id)
			raw_accept(r, ch, id, &next);
	}
	if (next)
		rdma_destroy_id(next);
	rdma_destroy_id(lid);
	rdma_destroy_event_channel(ch);
	return NULL;
}

int t_raw_srv_start(struct t_raw_srv *r, const char *host)
{
	int64_t deadline = t_now_ms() + T_TIMEOUT_MS;

	memset(r, 0, sizeof(*r));
	snprintf(r->host, sizeof(r->host), "%s", host);
	if (pthread_create(&r->th, NULL, raw_thread, r))
		return -1;
	while (!atomic_load(&r->ready) && t_now_ms() < deadline)
		usleep(1000);
	return r->port ? 0 : -1;
}

void t_raw_srv_stop(struct t_raw_srv *r)
{
	atomic_store(&r->stop, true);
	pthread_join(r->th, NULL);
}

int t_raw_wait_result(struct t_raw_srv *r, int before, int timeout_ms)
{
	int64_t deadline = t_now_ms() + timeout_ms;

	while (atomic_load(&r->results) <= before) {
		if (t_now_ms() > deadline)
			return -1;
		usleep(1000);
	}
	return atomic_load(&r->last_status);
}

/* ---- Raw client without private data ---------------------------------- */

static int raw_expect(struct rdma_event_channel *ch, enum rdma_cm_event_type t,
		      struct rw_cm_private *pd)
{
	struct rdma_cm_event *ev = raw_event(ch, T_TIMEOUT_MS);
	int ok;

	if (!ev)
		return -1;
	ok = ev->event == t;
	if (ok && pd)
		rw_cm_decode(ev->param.conn.private_data,
			     ev->param.conn.private_data_len, pd);
	rdma_ack_cm_event(ev);
	return ok ? 0 : -1;
}

int t_raw_connect_nopd(const char *host, uint16_t port,
		       struct rw_cm_private *srv_pd, char *msg, size_t msglen)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_conn_param p = { .responder_resources = 1,
				     .initiator_depth = 1,
				     .retry_count = 6 };
	struct raw_conn rc = { 0 };
	struct sockaddr_storage ss;
	int ret = -1;

	t_sockaddr(&ss, host, port);
	snprintf(msg, msglen, "setup");
	if (!ch || fcntl(ch->fd, F_SETFL, O_NONBLOCK) ||
	    rdma_create_id(ch, &rc.id, NULL, RDMA_PS_TCP))
		goto out;
	snprintf(msg, msglen, "address/route");
	if (rdma_resolve_addr(rc.id, NULL, (struct sockaddr *)&ss, 2000) ||
	    raw_expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED, NULL) ||
	    rdma_resolve_route(rc.id, 2000) ||
	    raw_expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL))
		goto out;
	snprintf(msg, msglen, "verbs");
	if (raw_setup(&rc))
		goto out;
	snprintf(msg, msglen, "connect");
	if (rdma_connect(rc.id, &p) ||
	    raw_expect(ch, RDMA_CM_EVENT_ESTABLISHED, srv_pd))
		goto out;
	snprintf(msg, msglen, "established");
	ret = 0;
	rdma_disconnect(rc.id);
	raw_expect(ch, RDMA_CM_EVENT_DISCONNECTED, NULL);
out:
	raw_teardown(&rc);
	if (ch)
		rdma_destroy_event_channel(ch);
	return ret;
}
