/*
 * tests/vm/verbs_basic: the first real-verbs test, run inside the Soft-RoCE
 * VM (tests/vm/run).  It proves the test bed itself before any of the
 * library is involved: rdma_cm connection set-up over IPv4 and IPv6,
 * Send/Receive, RDMA Write into a buffer the server advertises and RDMA Read
 * from it, each checked byte for byte at several sizes.
 *
 * A server thread and a client (the main thread) talk over one RC
 * connection in strict request/response: every client message gets exactly
 * one server reply, and each side re-posts its single Receive before it
 * sends, so a message never meets a Receive queue without a buffer (no RNR
 * retries, whose timers are slow under emulation).
 *
 * Nothing blocks without a deadline: rdma_cm events and completions are
 * waited for with poll() on the event channel and completion channel fds,
 * so a stuck step fails with a message naming it instead of hanging.
 *
 * usage: verbs_basic [4|6|ADDRESS]...   (default: $RDMA_ADDR4 and $RDMA_ADDR6)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "tests/vm/t_util.h"

#define DEFAULT_ADDR4 "192.0.2.1"
#define DEFAULT_ADDR6 "2001:db8::1"
#define DEFAULT_PORT  7471

enum {
	MAX_MSG = 1 << 20, /* largest Send and RDMA transfer */
	GUARD = 64,	   /* bytes past each transfer that must not change */
	STEP_MS = 30000,   /* any single step; TCG is slow, rxe slower */
	RESOLVE_MS = 5000, /* rdma_resolve_addr/route timeouts */
	CONNECT_RETRY_MS = 15000, /* server thread may not listen yet */
	RETRY_PAUSE_MS = 100,
	POLL_SLICE_MS = 200,	/* how often a waiting server checks "stop" */
	FILL = 0x5a,		/* untouched bytes around transfers */
	CTL_MAGIC = 0x76627331, /* "vbs1" */
};

/* What a control message asks for (client) or answers (server). */
enum ctl_op {
	CTL_HELLO = 1, /* -> ADVERT: where the server's buffer is */
	CTL_ADVERT,
	CTL_SEND_NEXT,	  /* next message is len bytes of pattern(seed) */
	CTL_WROTE,	  /* I wrote pattern(seed) into [0, len): check it */
	CTL_FILL,	  /* put pattern(seed) into [0, len) for me to read */
	CTL_READ_CHECKED, /* my read is verified; reset your buffer */
	CTL_BYE,
	CTL_ACK, /* status: 0, or 1 + first bad offset */
};

/*
 * Both peers are this process, so host byte order is fine; a real protocol
 * would fix it.
 */
struct ctl_msg {
	uint32_t magic;
	uint32_t op;
	uint32_t len;
	uint32_t seed;
	uint64_t status;
	uint64_t addr;
	uint32_t rkey;
	uint32_t pad;
};

/* Work request ids: one outstanding of each kind at a time (lockstep). */
enum wr_kind {
	WR_SEND,
	WR_RECV,
	WR_RDMA,
	WR_KINDS
};

/* One address family's run: what both threads share. */
struct phase {
	const char *label;	      /* "IPv4 192.0.2.1" */
	struct sockaddr_storage addr; /* with the port */
	atomic_bool client_gave_up;   /* lets the server stop waiting */
	bool server_failed;
};

/* One side of the connection and everything registered for it. */
struct conn {
	struct phase *ph;
	const char *who;
	struct rdma_event_channel *ec;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	uint8_t *recv_buf, *send_buf, *buf;
	size_t recv_size, send_size, buf_size;
	struct ibv_mr *recv_mr, *send_mr, *buf_mr;
	int buf_access;
	bool done[WR_KINDS];
	uint32_t recv_len;
	bool stop_on_give_up; /* server side only */
};

static atomic_int n_pass; /* failures: t_failures (t_util.h) */

static int n_failed(void)
{
	return __atomic_load_n(&t_failures, __ATOMIC_RELAXED);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void pass(const struct phase *ph, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int fail(const struct conn *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void pass(const struct phase *ph, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	CHECK(true, "%s: %s", ph->label, msg);
	atomic_fetch_add(&n_pass, 1);
}

/* A failed check or step: one line naming the phase, the side and the step. */
static int fail(const struct conn *c, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	CHECK(false, "%s: %s: %s", c->ph->label, c->who, msg);
	return -1;
}

/*
 * Byte i of the test pattern for a seed: a hash of both, so that shifted,
 * truncated or stale data (another step's seed) never matches by accident
 * and there is no short period to hide a misplaced page.
 */
static uint8_t pattern_byte(uint32_t seed, size_t i)
{
	uint32_t h = (uint32_t)i * 0x9e3779b1u ^ seed;

	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	return (uint8_t)h;
}

static void fill_pattern(uint8_t *p, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = pattern_byte(seed, i);
}

/* 0 if p[0, len) is the pattern and the GUARD bytes after it are FILL,
 * else 1 + the first bad offset (fits the ACK's status field). */
static uint64_t check_pattern(const uint8_t *p, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != pattern_byte(seed, i))
			return i + 1;
	for (size_t i = len; i < len + GUARD; i++)
		if (p[i] != FILL)
			return i + 1;
	return 0;
}

static int set_nonblock(struct conn *c, int fd, const char *what)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return fail(c, "make %s non-blocking: %s", what,
			    strerror(errno));
	return 0;
}

/*
 * Wait until fd is readable or the deadline passes.  Returns 1 readable,
 * 0 timed out, -1 error or (server) the client gave up.  Sliced so that a
 * server whose client is gone does not sit out a whole step timeout.
 */
static int wait_fd(struct conn *c, int fd, int64_t deadline)
{
	for (;;) {
		int64_t left = deadline - now_ms();
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int r;

		if (left <= 0)
			return 0;
		if (c->stop_on_give_up && atomic_load(&c->ph->client_gave_up))
			return -1;
		r = poll(&pfd, 1,
			 left < POLL_SLICE_MS ? (int)left : POLL_SLICE_MS);
		if (r > 0)
			return 1;
		if (r < 0 && errno != EINTR) {
			fail(c, "poll: %s", strerror(errno));
			return -1;
		}
	}
}

/* Next rdma_cm event within timeout_ms; the caller acks it. */
static int get_cm_event(struct conn *c, int timeout_ms, const char *step,
			struct rdma_cm_event **ev)
{
	int64_t deadline = now_ms() + timeout_ms;

	for (;;) {
		int r;

		if (rdma_get_cm_event(c->ec, ev) == 0)
			return 0;
		if (errno != EAGAIN)
			return fail(c, "%s: rdma_get_cm_event: %s", step,
				    strerror(errno));
		r = wait_fd(c, c->ec->fd, deadline);
		if (r == 0)
			return fail(c, "%s: no rdma_cm event within %d s", step,
				    timeout_ms / 1000);
		if (r < 0)
			return -1;
	}
}

/* Wait for one specific event and ack it (ESTABLISHED, ADDR_RESOLVED, ...). */
static int expect_cm_event(struct conn *c, enum rdma_cm_event_type type,
			   int timeout_ms, const char *step)
{
	struct rdma_cm_event *ev;
	int ok;

	if (get_cm_event(c, timeout_ms, step, &ev))
		return -1;
	ok = ev->event == type;
	if (!ok)
		fail(c, "%s: got %s (status %d), wanted %s", step,
		     rdma_event_str(ev->event), ev->status,
		     rdma_event_str(type));
	rdma_ack_cm_event(ev);
	return ok ? 0 : -1;
}

/* Take every available completion; a failed one fails the step. */
static int drain_cq(struct conn *c, const char *step)
{
	struct ibv_wc wc[4];
	int n;

	while ((n = ibv_poll_cq(c->cq, 4, wc)) > 0) {
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				return fail(c,
					    "%s: completion of wr %" PRIu64
					    ": %s",
					    step, wc[i].wr_id,
					    ibv_wc_status_str(wc[i].status));
			if (wc[i].wr_id == WR_RECV)
				c->recv_len = wc[i].byte_len;
			c->done[wc[i].wr_id] = true;
		}
	}
	if (n < 0)
		return fail(c, "%s: ibv_poll_cq failed", step);
	return 0;
}

/*
 * Wait for the completion of the outstanding work request of one kind.
 * The CQ is re-polled after arming it: a completion that arrived between
 * the empty poll and ibv_req_notify_cq raises no event.
 */
static int wait_wr(struct conn *c, enum wr_kind kind, const char *step)
{
	int64_t deadline = now_ms() + STEP_MS;

	for (;;) {
		struct ibv_cq *cq;
		void *ctx;
		int r;

		if (drain_cq(c, step))
			return -1;
		if (c->done[kind])
			break;
		if (ibv_req_notify_cq(c->cq, 0))
			return fail(c, "%s: ibv_req_notify_cq failed", step);
		if (drain_cq(c, step))
			return -1;
		if (c->done[kind])
			break;
		r = wait_fd(c, c->cc->fd, deadline);
		if (r == 0)
			return fail(c, "%s: no completion within %d s", step,
				    STEP_MS / 1000);
		if (r < 0)
			return -1;
		if (ibv_get_cq_event(c->cc, &cq, &ctx) == 0)
			ibv_ack_cq_events(cq, 1);
	}
	c->done[kind] = false;
	return 0;
}

static uint8_t *alloc_buf(size_t size)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, size))
		return NULL;
	memset(p, FILL, size);
	return p;
}

/*
 * Protection domain, completion channel and CQ, QP and the three buffers.
 * Access rights are the least each buffer needs: Receive buffers and the
 * RDMA Read sink are written by the local HCA (LOCAL_WRITE), Send and RDMA
 * Write sources are only read by it (no flag), and only the server's target
 * buffer is open to the peer (REMOTE_WRITE/READ; REMOTE_WRITE requires
 * LOCAL_WRITE).
 */
static int conn_setup(struct conn *c)
{
	struct ibv_qp_init_attr qpa = {
		.cap = { .max_send_wr = 4,
			 .max_recv_wr = 4,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};
	struct ibv_context *verbs = c->id->verbs;

	if (!(c->pd = ibv_alloc_pd(verbs)))
		return fail(c, "ibv_alloc_pd failed");
	if (!(c->cc = ibv_create_comp_channel(verbs)))
		return fail(c, "ibv_create_comp_channel failed");
	if (set_nonblock(c, c->cc->fd, "completion channel"))
		return -1;
	if (!(c->cq = ibv_create_cq(verbs, 16, NULL, c->cc, 0)))
		return fail(c, "ibv_create_cq failed");
	qpa.send_cq = qpa.recv_cq = c->cq;
	if (rdma_create_qp(c->id, c->pd, &qpa))
		return fail(c, "rdma_create_qp: %s", strerror(errno));

	c->recv_buf = alloc_buf(c->recv_size);
	c->send_buf = alloc_buf(c->send_size);
	c->buf = alloc_buf(c->buf_size);
	if (!c->recv_buf || !c->send_buf || !c->buf)
		return fail(c, "out of memory");
	c->recv_mr = ibv_reg_mr(c->pd, c->recv_buf, c->recv_size,
				IBV_ACCESS_LOCAL_WRITE);
	c->send_mr = ibv_reg_mr(c->pd, c->send_buf, c->send_size, 0);
	c->buf_mr = ibv_reg_mr(c->pd, c->buf, c->buf_size, c->buf_access);
	if (!c->recv_mr || !c->send_mr || !c->buf_mr)
		return fail(c, "ibv_reg_mr: %s", strerror(errno));
	return 0;
}

/* Undo conn_setup and the id, in dependency order; safe on partial set-up. */
static void conn_teardown(struct conn *c)
{
	if (c->id && c->id->qp)
		rdma_destroy_qp(c->id);
	if (c->recv_mr)
		ibv_dereg_mr(c->recv_mr);
	if (c->send_mr)
		ibv_dereg_mr(c->send_mr);
	if (c->buf_mr)
		ibv_dereg_mr(c->buf_mr);
	free(c->recv_buf);
	free(c->send_buf);
	free(c->buf);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->cc)
		ibv_destroy_comp_channel(c->cc);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->id)
		rdma_destroy_id(c->id);
	c->id = NULL;
	c->pd = NULL;
	c->cc = NULL;
	c->cq = NULL;
	c->recv_buf = c->send_buf = c->buf = NULL;
	c->recv_mr = c->send_mr = c->buf_mr = NULL;
	memset(c->done, 0, sizeof(c->done));
}

static int post_recv(struct conn *c)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)c->recv_buf,
		.length = (uint32_t)c->recv_size,
		.lkey = c->recv_mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = WR_RECV,
				  .sg_list = &sge,
				  .num_sge = 1 };
	struct ibv_recv_wr *bad;

	if (ibv_post_recv(c->id->qp, &wr, &bad))
		return fail(c, "ibv_post_recv failed");
	return 0;
}

/* Post a Send, RDMA Write or RDMA Read (rkey/raddr unused for Send). */
static int post_send(struct conn *c, enum ibv_wr_opcode op, uint8_t *local,
		     struct ibv_mr *mr, size_t len, uint64_t raddr,
		     uint32_t rkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)local,
		.length = (uint32_t)len,
		.lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = op == IBV_WR_SEND ? WR_SEND : WR_RDMA,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	};
	struct ibv_send_wr *bad;

	if (ibv_post_send(c->id->qp, &wr, &bad))
		return fail(c, "ibv_post_send (opcode %d, %zu B) failed", op,
			    len);
	return 0;
}

/* Send len bytes of send_buf and wait until the HCA is done with them. */
static int send_and_wait(struct conn *c, size_t len, const char *step)
{
	if (post_send(c, IBV_WR_SEND, c->send_buf, c->send_mr, len, 0, 0))
		return -1;
	return wait_wr(c, WR_SEND, step);
}

static int send_ctl(struct conn *c, const struct ctl_msg *m, const char *step)
{
	memcpy(c->send_buf, m, sizeof(*m));
	return send_and_wait(c, sizeof(*m), step);
}

/* The Receive that completed, as a control message; re-posts the Receive. */
static int take_ctl(struct conn *c, struct ctl_msg *m, const char *step)
{
	if (c->recv_len != sizeof(*m))
		return fail(c, "%s: control message of %u B, expected %zu",
			    step, c->recv_len, sizeof(*m));
	memcpy(m, c->recv_buf, sizeof(*m));
	/* The next Receive may be a 1-byte Send whose guard bytes are these. */
	memset(c->recv_buf, FILL, sizeof(*m));
	if (m->magic != CTL_MAGIC)
		return fail(c, "%s: bad magic 0x%08x", step, m->magic);
	return post_recv(c);
}

/* ---- server ---------------------------------------------------------- */

static int server_listen(struct conn *c, struct rdma_cm_id **listen_id)
{
	if (!(c->ec = rdma_create_event_channel()))
		return fail(c, "rdma_create_event_channel: %s",
			    strerror(errno));
	if (set_nonblock(c, c->ec->fd, "event channel"))
		return -1;
	if (rdma_create_id(c->ec, listen_id, NULL, RDMA_PS_TCP))
		return fail(c, "rdma_create_id: %s", strerror(errno));
	if (rdma_bind_addr(*listen_id, (struct sockaddr *)&c->ph->addr))
		return fail(c, "rdma_bind_addr: %s", strerror(errno));
	if (rdma_listen(*listen_id, 1))
		return fail(c, "rdma_listen: %s", strerror(errno));
	return 0;
}

/* First connect request: set up its QP, post the first Receive, accept. */
static int server_accept(struct conn *c)
{
	struct rdma_conn_param param = {
		.responder_resources = 1,
		.initiator_depth = 1,
		.rnr_retry_count = 7,
	};
	struct rdma_cm_event *ev;
	int64_t wait_ms = CONNECT_RETRY_MS + STEP_MS;

	if (get_cm_event(c, (int)wait_ms, "wait for connect request", &ev))
		return -1;
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		fail(c, "wait for connect request: got %s",
		     rdma_event_str(ev->event));
		rdma_ack_cm_event(ev);
		return -1;
	}
	c->id = ev->id;
	rdma_ack_cm_event(ev);
	if (conn_setup(c) || post_recv(c))
		return -1;
	if (rdma_accept(c->id, &param))
		return fail(c, "rdma_accept: %s", strerror(errno));
	return expect_cm_event(c, RDMA_CM_EVENT_ESTABLISHED, STEP_MS, "accept");
}

/* Answer one control request; *bye is set by CTL_BYE. */
static int server_handle(struct conn *c, const struct ctl_msg *req,
			 struct ctl_msg *rep, bool *bye)
{
	switch (req->op) {
	case CTL_HELLO:
		rep->op = CTL_ADVERT;
		rep->addr = (uintptr_t)c->buf;
		rep->rkey = c->buf_mr->rkey;
		rep->len = MAX_MSG;
		return 0;
	case CTL_WROTE:
		if (req->len > MAX_MSG)
			return fail(c, "WROTE of %u B", req->len);
		rep->status = check_pattern(c->buf, req->len, req->seed);
		memset(c->buf, FILL, c->buf_size);
		return 0;
	case CTL_FILL:
		if (req->len > MAX_MSG)
			return fail(c, "FILL of %u B", req->len);
		fill_pattern(c->buf, req->len, req->seed);
		return 0;
	case CTL_READ_CHECKED:
		memset(c->buf, FILL, c->buf_size);
		return 0;
	case CTL_BYE:
		*bye = true;
		return 0;
	default:
		return fail(c, "unknown request %u", req->op);
	}
}

/*
 * Serve requests until BYE.  A SEND_NEXT announces that the next message
 * is test data rather than a control message.
 */
static int server_serve(struct conn *c)
{
	uint32_t data_len = 0, data_seed = 0;
	bool expect_data = false, bye = false;

	while (!bye) {
		struct ctl_msg req, rep = { .magic = CTL_MAGIC, .op = CTL_ACK };

		if (wait_wr(c, WR_RECV, "receive request"))
			return -1;
		if (expect_data) {
			expect_data = false;
			rep.status = c->recv_len != data_len ?
					     UINT64_MAX :
					     check_pattern(c->recv_buf,
							   data_len, data_seed);
			memset(c->recv_buf, FILL, c->recv_size);
			if (post_recv(c))
				return -1;
		} else {
			if (take_ctl(c, &req, "receive request"))
				return -1;
			if (req.op == CTL_SEND_NEXT) {
				expect_data = true;
				data_len = req.len;
				data_seed = req.seed;
			} else if (server_handle(c, &req, &rep, &bye)) {
				return -1;
			}
		}
		if (send_ctl(c, &rep, "send reply"))
			return -1;
	}
	return expect_cm_event(c, RDMA_CM_EVENT_DISCONNECTED, STEP_MS,
			       "wait for disconnect");
}

/*
 * $VM_VERBS_SERVER_DELAY_MS holds the server back before it listens, as a
 * slow start under TCG would: a way to exercise the client's retries.
 */
static void server_delay(void)
{
	const char *s = getenv("VM_VERBS_SERVER_DELAY_MS");
	long ms = s ? strtol(s, NULL, 10) : 0;
	struct timespec ts;

	if (ms <= 0 || ms > 60000)
		return;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = ms % 1000 * 1000000L;
	nanosleep(&ts, NULL);
}

static void *server_main(void *arg)
{
	struct phase *ph = arg;
	struct conn c = {
		.ph = ph,
		.who = "server",
		.stop_on_give_up = true,
		/* Receives carry the Send test data, up to MAX_MSG (+ guard). */
		.recv_size = MAX_MSG + GUARD,
		.send_size = sizeof(struct ctl_msg),
		.buf_size = MAX_MSG + GUARD,
		.buf_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			      IBV_ACCESS_REMOTE_READ,
	};
	struct rdma_cm_id *listen_id = NULL;

	server_delay();
	if (server_listen(&c, &listen_id) || server_accept(&c) ||
	    server_serve(&c))
		ph->server_failed = true;
	conn_teardown(&c);
	if (listen_id)
		rdma_destroy_id(listen_id);
	if (c.ec)
		rdma_destroy_event_channel(c.ec);
	return NULL;
}

/* ---- client ---------------------------------------------------------- */

enum {
	TRY_OK,
	TRY_AGAIN,
	TRY_FAILED
};

/*
 * One connection attempt.  REJECTED and UNREACHABLE mean nobody listens
 * yet (the server thread is slow to start under TCG): worth another try.
 */
static int client_try_connect(struct conn *c)
{
	struct rdma_conn_param param = {
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	struct rdma_cm_event *ev;
	enum rdma_cm_event_type type;
	int status;

	if (rdma_create_id(c->ec, &c->id, NULL, RDMA_PS_TCP)) {
		fail(c, "rdma_create_id: %s", strerror(errno));
		return TRY_FAILED;
	}
	if (rdma_resolve_addr(c->id, NULL, (struct sockaddr *)&c->ph->addr,
			      RESOLVE_MS)) {
		fail(c, "rdma_resolve_addr: %s", strerror(errno));
		return TRY_FAILED;
	}
	if (expect_cm_event(c, RDMA_CM_EVENT_ADDR_RESOLVED,
			    RESOLVE_MS + STEP_MS, "resolve address"))
		return TRY_FAILED;
	if (rdma_resolve_route(c->id, RESOLVE_MS)) {
		fail(c, "rdma_resolve_route: %s", strerror(errno));
		return TRY_FAILED;
	}
	if (expect_cm_event(c, RDMA_CM_EVENT_ROUTE_RESOLVED,
			    RESOLVE_MS + STEP_MS, "resolve route"))
		return TRY_FAILED;
	/* The first Receive is posted before connecting: the server's first
	 * reply may arrive before we see ESTABLISHED. */
	if (conn_setup(c) || post_recv(c))
		return TRY_FAILED;
	if (rdma_connect(c->id, &param)) {
		fail(c, "rdma_connect: %s", strerror(errno));
		return TRY_FAILED;
	}
	if (get_cm_event(c, STEP_MS, "connect", &ev))
		return TRY_FAILED;
	type = ev->event;
	status = ev->status;
	rdma_ack_cm_event(ev);
	if (type == RDMA_CM_EVENT_ESTABLISHED)
		return TRY_OK;
	if (type == RDMA_CM_EVENT_REJECTED || type == RDMA_CM_EVENT_UNREACHABLE)
		return TRY_AGAIN;
	fail(c, "connect: got %s (status %d)", rdma_event_str(type), status);
	return TRY_FAILED;
}

static int client_connect(struct conn *c)
{
	int64_t deadline = now_ms() + CONNECT_RETRY_MS;
	int attempts = 0;

	if (!(c->ec = rdma_create_event_channel()))
		return fail(c, "rdma_create_event_channel: %s",
			    strerror(errno));
	if (set_nonblock(c, c->ec->fd, "event channel"))
		return -1;
	for (;;) {
		struct timespec pause = { 0, RETRY_PAUSE_MS * 1000000L };
		int r = client_try_connect(c);

		attempts++;
		if (r == TRY_OK)
			break;
		conn_teardown(c);
		if (r == TRY_FAILED)
			return -1;
		if (now_ms() >= deadline)
			return fail(
				c,
				"connect: still rejected after %d attempts in %d s",
				attempts, CONNECT_RETRY_MS / 1000);
		nanosleep(&pause, NULL);
	}
	pass(c->ph, "connect (%d attempt%s)", attempts,
	     attempts > 1 ? "s" : "");
	return 0;
}

/* Send what is in send_buf, wait for the server's reply. */
static int client_rpc(struct conn *c, size_t len, struct ctl_msg *rep,
		      const char *step)
{
	if (send_and_wait(c, len, step) || wait_wr(c, WR_RECV, step) ||
	    take_ctl(c, rep, step))
		return -1;
	if (rep->op != CTL_ACK && rep->op != CTL_ADVERT)
		return fail(c, "%s: unexpected reply %u", step, rep->op);
	return 0;
}

static int client_ctl(struct conn *c, enum ctl_op op, uint32_t len,
		      uint32_t seed, struct ctl_msg *rep, const char *step)
{
	struct ctl_msg req = {
		.magic = CTL_MAGIC, .op = op, .len = len, .seed = seed
	};

	memcpy(c->send_buf, &req, sizeof(req));
	return client_rpc(c, sizeof(req), rep, step);
}

/*
 * Report a check whose transfer completed; status as in check_pattern().
 * Returns 0 (passed) or 1 (data wrong): unlike a failed step (-1), wrong
 * data leaves the connection usable and the remaining checks still run.
 */
static int verdict(struct conn *c, const char *what, size_t len,
		   uint64_t status)
{
	if (status == 0) {
		pass(c->ph, "%s %zu B", what, len);
		return 0;
	}
	if (status == UINT64_MAX)
		fail(c, "%s %zu B: wrong length received", what, len);
	else
		fail(c, "%s %zu B: data differs at offset %" PRIu64 "%s", what,
		     len, status - 1,
		     status - 1 >= len ? " (guard bytes after the data)" : "");
	return 1;
}

static int test_send(struct conn *c, size_t len, uint32_t seed)
{
	struct ctl_msg rep;

	if (client_ctl(c, CTL_SEND_NEXT, (uint32_t)len, seed, &rep,
		       "announce send"))
		return -1;
	fill_pattern(c->send_buf, len, seed);
	if (client_rpc(c, len, &rep, "send data"))
		return -1;
	return verdict(c, "send/recv", len, rep.status);
}

static int test_write(struct conn *c, const struct ctl_msg *adv, size_t len,
		      uint32_t seed)
{
	struct ctl_msg rep;

	fill_pattern(c->send_buf, len, seed);
	if (post_send(c, IBV_WR_RDMA_WRITE, c->send_buf, c->send_mr, len,
		      adv->addr, adv->rkey) ||
	    wait_wr(c, WR_RDMA, "RDMA Write"))
		return -1;
	/* The Send follows the Write on the same QP: the server sees the data. */
	if (client_ctl(c, CTL_WROTE, (uint32_t)len, seed, &rep, "report write"))
		return -1;
	return verdict(c, "rdma write", len, rep.status);
}

static int test_read(struct conn *c, const struct ctl_msg *adv, size_t len,
		     uint32_t seed)
{
	struct ctl_msg rep;
	uint64_t status;

	if (client_ctl(c, CTL_FILL, (uint32_t)len, seed, &rep,
		       "ask server to fill"))
		return -1;
	memset(c->buf, FILL, c->buf_size);
	if (post_send(c, IBV_WR_RDMA_READ, c->buf, c->buf_mr, len, adv->addr,
		      adv->rkey) ||
	    wait_wr(c, WR_RDMA, "RDMA Read"))
		return -1;
	status = check_pattern(c->buf, len, seed);
	if (client_ctl(c, CTL_READ_CHECKED, (uint32_t)len, seed, &rep,
		       "report read"))
		return -1;
	return verdict(c, "rdma read", len, status);
}

static const size_t sizes[] = { 1, 4096, 65537, MAX_MSG };

/* All checks over an established connection, then a clean disconnect. */
static int client_tests(struct conn *c)
{
	struct ctl_msg adv, rep;

	if (client_ctl(c, CTL_HELLO, 0, 0, &adv, "hello"))
		return -1;
	if (adv.op != CTL_ADVERT || adv.len < MAX_MSG)
		return fail(c, "hello: bad advertisement (op %u, %u B)", adv.op,
			    adv.len);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		/* A distinct seed per check: stale data from an earlier one fails. */
		uint32_t seed = (uint32_t)(i * 3 + 1) * 0x01000193u;

		if (test_send(c, sizes[i], seed) < 0 ||
		    test_write(c, &adv, sizes[i], seed + 1) < 0 ||
		    test_read(c, &adv, sizes[i], seed + 2) < 0)
			return -1;
	}
	if (client_ctl(c, CTL_BYE, 0, 0, &rep, "bye"))
		return -1;
	if (rdma_disconnect(c->id))
		return fail(c, "rdma_disconnect: %s", strerror(errno));
	if (expect_cm_event(c, RDMA_CM_EVENT_DISCONNECTED, STEP_MS,
			    "disconnect"))
		return -1;
	pass(c->ph, "disconnect");
	return 0;
}

/* ---- phases and main ------------------------------------------------- */

/*
 * Every server wait has a deadline and watches client_gave_up, so the
 * server ends soon after the client; if it does not, it is stuck in a call
 * that should never block: report it and stop, there is nothing to clean.
 */
static void join_server(struct phase *ph, pthread_t server)
{
	struct timespec deadline;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 2 * STEP_MS / 1000;
	if (pthread_timedjoin_np(server, NULL, &deadline) == 0)
		return;
	CHECK(false, "%s: server thread did not finish within %d s", ph->label,
	      2 * STEP_MS / 1000);
	_exit(1);
}

static int run_phase(struct phase *ph)
{
	struct conn c = {
		.ph = ph,
		.who = "client",
		.recv_size = sizeof(struct ctl_msg),
		.send_size = MAX_MSG,
		/* RDMA Read sink: written by the local HCA only. */
		.buf_size = MAX_MSG + GUARD,
		.buf_access = IBV_ACCESS_LOCAL_WRITE,
	};
	pthread_t server;
	int err, failed_before = n_failed();

	err = pthread_create(&server, NULL, server_main, ph);
	if (err) {
		CHECK(false, "%s: pthread_create: %s", ph->label,
		      strerror(err));
		return -1;
	}
	if (client_connect(&c) == 0)
		client_tests(&c);
	if (n_failed() != failed_before)
		atomic_store(&ph->client_gave_up, true);
	conn_teardown(&c);
	if (c.ec)
		rdma_destroy_event_channel(c.ec);
	join_server(ph, server);
	/* a server step that failed without a FAIL line of its own */
	if (ph->server_failed && n_failed() == failed_before)
		CHECK(false, "%s: the server side failed", ph->label);
	return n_failed() == failed_before ? 0 : -1;
}

static uint16_t test_port(void)
{
	const char *s = getenv("VM_VERBS_PORT");
	long port = s ? strtol(s, NULL, 10) : DEFAULT_PORT;

	return port > 0 && port < 65536 ? (uint16_t)port : DEFAULT_PORT;
}

/* "192.0.2.1", "2001:db8::1" or "[2001:db8::1]" with the test port. */
static int parse_addr(const char *text, struct sockaddr_storage *ss)
{
	char buf[INET6_ADDRSTRLEN + 2];
	size_t n = strlen(text);
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	if (n >= sizeof(buf))
		return -1;
	if (n >= 2 && text[0] == '[' && text[n - 1] == ']') {
		memcpy(buf, text + 1, n - 2);
		buf[n - 2] = '\0';
	} else {
		memcpy(buf, text, n + 1);
	}
	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, buf, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(test_port());
		return 0;
	}
	if (inet_pton(AF_INET6, buf, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(test_port());
		return 0;
	}
	return -1;
}

static const char *env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);

	return v && *v ? v : dflt;
}

static int run_address(const char *text)
{
	struct phase ph = { .label = NULL };
	char label[96];

	if (parse_addr(text, &ph.addr)) {
		CHECK(false, "%s: not an IPv4 or IPv6 address", text);
		return -1;
	}
	snprintf(label, sizeof(label), "%s %s",
		 ph.addr.ss_family == AF_INET ? "IPv4" : "IPv6", text);
	ph.label = label;
	return run_phase(&ph);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: verbs_basic [4|6|ADDRESS]...\n"
		"Connect over rdma_cm to each address (default: $RDMA_ADDR4 and\n"
		"$RDMA_ADDR6, else %s and %s; 4 or 6 picks one of them) and check\n"
		"Send/Receive, RDMA Write and RDMA Read.  Port: $VM_VERBS_PORT or %d.\n",
		DEFAULT_ADDR4, DEFAULT_ADDR6, DEFAULT_PORT);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *addr4 = env_or("RDMA_ADDR4", DEFAULT_ADDR4);
	const char *addr6 = env_or("RDMA_ADDR6", DEFAULT_ADDR6);
	struct sockaddr_storage ss;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "4") && strcmp(argv[i], "6") &&
		    parse_addr(argv[i], &ss))
			usage();
	if (argc == 1) {
		run_address(addr4);
		run_address(addr6);
	}
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "4"))
			run_address(addr4);
		else if (!strcmp(argv[i], "6"))
			run_address(addr6);
		else
			run_address(argv[i]);
	}
	NOTE("verbs_basic: %d passed", atomic_load(&n_pass));
	if (atomic_load(&n_pass) == 0)
		CHECK(false, "verbs_basic: no check passed");
	return tu_done();
}
