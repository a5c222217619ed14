/*
 * t_iwarp.c - RDMA Read sinks and remote access (doc/architecture.md, "Who may
 * grant remote access"): the responder's cached sink memory never carries a
 * remote right, and on an iWARP device, where the peer answering a Read writes
 * into the sink, each Read's sink is registered with remote write by rt_reg.c
 * for that Read alone and deregistered before the Read's completion is
 * reported.
 *
 * A server thread (below, one connection at a time) pulls each of the
 * client's Read chunks into cached local memory (rt_lmem_alloc(), in three
 * fragments when it can) and answers with whether the bytes are right, the
 * sink's address and local key, and its connection's counters, read in its
 * own thread after the Read completed.  The client checks for each Read:
 *   - the data arrived intact;
 *   - iWARP: one more sink registration, with one MR per fragment, and all
 *     of them released already (sink_deregs == sink_regs, registrations ==
 *     deregistrations: no remote-access registration live between RPCs);
 *     any other transport: no registration at all on the server.
 * Then it RDMA Writes into the server's cached sink under its local key:
 * the device must refuse it (the connection ends) and the bytes must stay.
 * Last, on a new connection, it offers a Read chunk whose handle it has
 * revoked: the server's Read fails, and by the time its failure is
 * reported no registration of it may be live.
 *
 * Run in the VM: with "tests/vm/run --siw" (TIRPC_RDMA_VM_DEV=siw) the
 * device must be iWARP; on Soft-RoCE the iWARP checks are skipped with a
 * SKIP line and the rest runs.  Exit 1 if a check failed, 77 without a
 * device (the host).
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler.h"
#include "tests/vm/t_rt_util.h"

#define IW_READ 0x49

struct iw_cmd {
	uint32_t op;
	uint32_t seed;
	struct rw_segment seg;
};

struct iw_reply {
	int32_t status; /* 0: bytes right, 1: wrong, else -errno/wc status */
	uint32_t nfrag;
	uint64_t sink_addr;
	uint32_t sink_lkey;
	uint32_t pad;
	uint64_t sink_regs;
	uint64_t sink_deregs;
	uint64_t registrations;
	uint64_t deregistrations;
};

/* ---- The server (its own thread owns every server object) ------------- */

static struct {
	struct rt_listener *l;
	pthread_t th;
	atomic_bool stop;
	uint16_t port;
	/* the last sink, kept for the client's Write probe */
	struct rt_lmem *last;
	uint32_t last_len;
	uint32_t last_seed;
	/* after the connection ended: -1 not yet, 0 last sink intact, 1 not */
	atomic_int probe;
	bool dead; /* RT_EV_DEAD seen while waiting for a Read */
	/* the last Read that failed: its status, the counters after it */
	atomic_int bad_done;
	atomic_int bad_status;
	atomic_llong bad_sink_regs;
	atomic_llong bad_live_sinks;
	atomic_llong bad_live_mrs;
} srv = { .probe = -1 };

/* Wait for the Read's event; a connection that ends still reports it
 * (flushed), and only then has the Read let go of its sink. */
static int srv_wait(struct rt_conn *c, enum rt_ev_type type)
{
	int64_t deadline = t_now_ms() + T_TIMEOUT_MS;
	struct rt_event ev;

	while (t_now_ms() < deadline) {
		if (rt_conn_poll(c, &ev, 1, 100) <= 0)
			continue;
		if (ev.type == type)
			return ev.status;
		if (ev.type == RT_EV_DEAD)
			srv.dead = true;
	}
	return -ETIMEDOUT;
}

static void srv_bad_read(int status, const struct rt_stats *st)
{
	atomic_store(&srv.bad_status, status);
	atomic_store(&srv.bad_sink_regs, (long long)st->sink_regs);
	atomic_store(&srv.bad_live_sinks,
		     (long long)(st->sink_regs - st->sink_deregs));
	atomic_store(&srv.bad_live_mrs,
		     (long long)(st->registrations - st->deregistrations));
	atomic_store(&srv.bad_done, 1);
}

static void srv_read(struct rt_conn *c, const struct iw_cmd *cmd,
		     struct iw_reply *r)
{
	uint32_t len = cmd->seg.length, third = len / 3, i;
	struct rt_sge sge[3];
	struct rt_stats st;
	struct rt_err err;
	struct rt_lmem *m;
	uint8_t *p;

	m = rt_lmem_alloc(c, len, &err);
	if (!m) {
		r->status = -ENOMEM;
		return;
	}
	p = rt_lmem_addr(m);
	memset(p, 0, len);
	r->nfrag = third ? 3 : 1;
	for (i = 0; i < r->nfrag; i++) {
		uint32_t off = i * third;
		uint32_t n = r->nfrag == 1 ? len :
			     i == 2	   ? len - 2 * third :
					     third;

		sge[i] = rt_lmem_sge(m, p + off, n);
	}
	r->status = rt_post_read(c, sge, r->nfrag, &cmd->seg, 1, RT_WR_SIGNAL,
				 &err);
	if (!r->status)
		r->status = srv_wait(c, RT_EV_READ_DONE);
	if (!r->status && t_pattern_check(p, len, cmd->seed) >= 0)
		r->status = 1;
	rt_conn_stats(c, &st);
	r->sink_addr = (uintptr_t)p;
	r->sink_lkey = rt_lmem_lkey(m);
	r->sink_regs = st.sink_regs;
	r->sink_deregs = st.sink_deregs;
	r->registrations = st.registrations;
	r->deregistrations = st.deregistrations;
	if (r->status != 0 && r->status != 1)
		srv_bad_read(r->status, &st);
	if (r->status == -ETIMEDOUT)
		return; /* the Read may still be running: keep m */
	if (srv.last)
		rt_lmem_free(c, srv.last); /* back into the cache */
	srv.last = m;
	srv.last_len = len;
	srv.last_seed = cmd->seed;
}

static void srv_recv(struct rt_conn *c, struct rt_event *ev)
{
	struct iw_reply r = { .status = -EINVAL };
	struct iw_cmd cmd;
	bool ok = ev->len == sizeof(cmd);

	if (ok)
		memcpy(&cmd, ev->data, sizeof(cmd));
	rt_recv_repost(c, ev->rbuf);
	if (ok && cmd.op == IW_READ)
		srv_read(c, &cmd, &r);
	if (t_send(c, &r, sizeof(r)) && !srv.dead)
		fprintf(stderr, "server: cannot send a reply\n");
}

/* The connection ended: is the last sink still what the Read put there? */
static void srv_end(struct rt_conn *c)
{
	int probe = 1;

	if (srv.last) {
		if (t_pattern_check(rt_lmem_addr(srv.last), srv.last_len,
				    srv.last_seed) < 0)
			probe = 0;
		rt_lmem_free(c, srv.last);
		srv.last = NULL;
	}
	rt_conn_destroy(c);
	atomic_store(&srv.probe, probe);
}

static void *srv_thread(void *arg)
{
	struct rt_conn *c = NULL, *nc;
	struct pollfd pfd[2];
	struct rt_event ev;
	struct rt_err err;

	(void)arg;
	while (!atomic_load(&srv.stop)) {
		pfd[0] = (struct pollfd){ rt_listener_fd(srv.l), POLLIN, 0 };
		pfd[1] = (struct pollfd){ c ? rt_conn_fd(c) : -1, POLLIN, 0 };
		poll(pfd, 2, 20);
		if (rt_listener_process(srv.l, &nc, 1, &err) == 1) {
			/* The client has one connection at a time: a new
			 * one means it is done with the old one, whose end
			 * the server may not have seen yet. */
			if (c) {
				NOTE("server: a new connection before the old one's end");
				srv_end(c);
			}
			c = nc;
		}
		while (c && rt_conn_poll(c, &ev, 1, 0) == 1) {
			if (ev.type == RT_EV_RECV)
				srv_recv(c, &ev);
			if (ev.type == RT_EV_DEAD || srv.dead) {
				srv.dead = false;
				srv_end(c);
				c = NULL;
			}
		}
	}
	if (c)
		rt_conn_destroy(c);
	return NULL;
}

static int srv_start(void)
{
	struct sockaddr_storage ss;
	struct rt_conn_attr a;
	struct rt_err err;

	rt_conn_attr_init(&a);
	a.rdma_depth = 4; /* an 8 MiB Read waits for room: queued work */
	t_sockaddr(&ss, t_addr4(), 0);
	srv.l = rt_listen((struct sockaddr *)&ss, 0, &a, &err);
	if (!srv.l) {
		NOTE("listen on %s: %s", t_addr4(), err.msg);
		return -1;
	}
	srv.port = rt_listener_port(srv.l);
	return pthread_create(&srv.th, NULL, srv_thread, NULL) ? -1 : 0;
}

static void srv_stop(void)
{
	atomic_store(&srv.stop, true);
	pthread_join(srv.th, NULL);
	rt_listener_destroy(srv.l);
}

/* ---- The client ------------------------------------------------------- */

static const uint32_t sizes[] = { 1, 4096, 65536, (1u << 20) + 3,
				  (8u << 20) + 5 };

/* One Read chunk pulled by the server; its reply in *r. */
static bool pull(struct rt_conn *c, struct rt_regset *set, uint32_t len,
		 uint32_t seed, struct iw_reply *r)
{
	struct iw_cmd cmd = { .op = IW_READ, .seed = seed };
	uint8_t *buf = malloc(len);
	struct rt_err err;
	int n;

	memset(r, 0, sizeof(*r));
	r->status = INT32_MIN;
	if (!buf)
		return false;
	t_pattern_fill(buf, len, seed);
	n = rt_reg_expose(set, buf, len, RT_REMOTE_READ, &cmd.seg, 1, &err);
	if (n == 1 && !t_send(c, &cmd, sizeof(cmd)) &&
	    t_recv(c, r, sizeof(*r), T_TIMEOUT_MS, NULL) != sizeof(*r))
		r->status = INT32_MIN;
	n = n == 1 ? rt_reg_revoke(set, &err) : -1;
	free(buf);
	return n == 0 && r->status != INT32_MIN;
}

static void check_sinks(bool iwarp, uint32_t len, const struct iw_reply *r,
			const struct iw_reply *prev)
{
	if (iwarp) {
		CHECK(r->sink_regs == prev->sink_regs + 1 &&
			      r->registrations ==
				      prev->registrations + r->nfrag,
		      "iWARP %u octets: the Read had its own sink registration, one MR per fragment (%llu reads, %llu MRs; before %llu, %llu)",
		      len, (unsigned long long)r->sink_regs,
		      (unsigned long long)r->registrations,
		      (unsigned long long)prev->sink_regs,
		      (unsigned long long)prev->registrations);
		CHECK(r->sink_deregs == r->sink_regs &&
			      r->deregistrations == r->registrations,
		      "iWARP %u octets: released before the Read was reported (live: %lld sink(s), %lld MR(s))",
		      len, (long long)(r->sink_regs - r->sink_deregs),
		      (long long)(r->registrations - r->deregistrations));
	} else {
		CHECK(r->sink_regs == 0 && r->registrations == 0,
		      "%u octets: no registration for the sink (%llu, %llu): its local key serves",
		      len, (unsigned long long)r->sink_regs,
		      (unsigned long long)r->registrations);
	}
}

static void test_reads(struct rt_conn *c, bool iwarp, struct iw_reply *last)
{
	struct iw_reply r, prev = { 0 };
	struct rt_regset *set;
	struct rt_err err;
	unsigned int i;

	set = rt_regset_create(c, &err);
	if (!set) {
		CHECK(false, "regset: %s", err.msg);
		return;
	}
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		bool ok = pull(c, set, sizes[i], 7 * i + 3, &r);

		CHECK(ok && r.status == 0,
		      "Read chunk of %u octets pulled intact in %u fragment(s) (status %d)",
		      sizes[i], r.nfrag, r.status);
		if (!ok)
			break;
		check_sinks(iwarp, sizes[i], &r, &prev);
		prev = r;
	}
	*last = prev;
	rt_regset_destroy(set);
}

/* RDMA Write into the server's cached sink under its local key. */
static void test_probe(struct rt_conn *c, const struct iw_reply *last)
{
	struct rw_segment seg = { last->sink_lkey, 16, last->sink_addr };
	int64_t deadline = t_now_ms() + T_TIMEOUT_MS;
	struct rt_lmem *src;
	struct rt_event ev;
	struct rt_sge sge;
	struct rt_err err;
	bool dead = false;
	int wst = INT32_MIN;

	src = rt_lmem_alloc(c, 16, &err);
	if (!src || !last->sink_addr) {
		CHECK(false, "probe: no source or no target");
		return;
	}
	memset(rt_lmem_addr(src), 0xa5, 16);
	sge = rt_lmem_sge(src, rt_lmem_addr(src), 16);
	if (rt_post_write(c, &sge, 1, &seg, 9, RT_WR_SIGNAL, &err))
		NOTE("probe: not posted: %s", err.msg);
	while (!dead && t_now_ms() < deadline) {
		if (rt_conn_poll(c, &ev, 1, 100) <= 0)
			continue;
		if (ev.type == RT_EV_WRITE_DONE)
			wst = ev.status;
		dead = ev.type == RT_EV_DEAD;
	}
	while (atomic_load(&srv.probe) < 0 && t_now_ms() < deadline + 5000)
		usleep(10000);
	NOTE("probe: Write completion %d; connection: %s", wst,
	     dead ? rt_conn_error(c)->msg : "still up");
	CHECK(dead,
	      "a Write into the server's cached sink (key 0x%x) ended the connection: the device refused it",
	      last->sink_lkey);
	CHECK(atomic_load(&srv.probe) == 0,
	      "the cached sink still holds what the Read put there (%d)",
	      atomic_load(&srv.probe));
	rt_lmem_free(c, src);
}

/* Is the connection's device an iWARP one?  Asked of the verbs directly,
 * not of the layer under test. */
/*
 * A Read chunk whose handle the client revoked before the server pulls
 * it: the server's Read fails, its connection ends, and the Read's sink
 * registration must be gone by the time the failure is reported.
 */
static void test_bad_read(bool iwarp)
{
	struct iw_cmd cmd = { .op = IW_READ, .seed = 5 };
	int64_t start = t_now_ms(), deadline = start + T_TIMEOUT_MS;
	struct rt_conn_attr ca;
	struct rt_regset *set;
	struct iw_reply r;
	struct rt_conn *c;
	struct rt_err err;
	static uint8_t buf[65536];
	int n = -1;

	rt_conn_attr_init(&ca);
	ca.timeout_ms = 5000;
	c = t_connect(t_addr4(), srv.port, &ca, &err);
	set = c ? rt_regset_create(c, &err) : NULL;
	if (set)
		n = rt_reg_expose(set, buf, sizeof(buf), RT_REMOTE_READ,
				  &cmd.seg, 1, &err);
	if (n == 1)
		n = rt_reg_revoke(set, &err);
	if (n || t_send(c, &cmd, sizeof(cmd))) {
		CHECK(false, "bad Read: setup: %s", err.msg);
		goto out;
	}
	n = t_recv(c, &r, sizeof(r), T_TIMEOUT_MS, NULL);
	NOTE("bad Read: client after %lld ms: %s",
	     (long long)(t_now_ms() - start), rt_conn_error(c)->msg);
	/* the server waits T_TIMEOUT_MS for the Read's event itself */
	while (!atomic_load(&srv.bad_done) &&
	       t_now_ms() < deadline + T_TIMEOUT_MS)
		usleep(10000);
	NOTE("bad Read: reply %d; the server's Read ended with %d after %lld ms",
	     n, atomic_load(&srv.bad_status), (long long)(t_now_ms() - start));
	CHECK(atomic_load(&srv.bad_done),
	      "a Read of a revoked handle failed on the server");
	if (atomic_load(&srv.bad_status) == -ETIMEDOUT)
		/* Seen about once in six runs on siw (Linux 6.1): after the
		 * peer's Terminate the failed Read is neither completed nor
		 * flushed, although the queue pair is in the error state.  The
		 * layer then never reports it, and rt_conn_destroy() releases
		 * its sink; the dead queue pair gives no access meanwhile. */
		NOTE("the device reported the failed Read neither completed nor flushed within %d ms; its sink is released by rt_conn_destroy() (live now: %lld sink(s))",
		     T_TIMEOUT_MS, atomic_load(&srv.bad_live_sinks));
	else if (iwarp)
		CHECK(atomic_load(&srv.bad_sink_regs) == 1 &&
			      atomic_load(&srv.bad_live_sinks) == 0 &&
			      atomic_load(&srv.bad_live_mrs) == 0,
		      "iWARP: the failed Read's sink was released before its failure was reported (live: %lld sink(s), %lld MR(s))",
		      atomic_load(&srv.bad_live_sinks),
		      atomic_load(&srv.bad_live_mrs));
	else
		CHECK(atomic_load(&srv.bad_live_mrs) == 0,
		      "no registration live after the failed Read");
out:
	rt_regset_destroy(set);
	if (c)
		rt_conn_destroy(c);
}

static bool device_iwarp(struct rt_conn *c)
{
	const char *name = rt_conn_device(c);
	struct ibv_device **l = ibv_get_device_list(NULL);
	bool iwarp = false;
	int i;

	for (i = 0; l && name && l[i]; i++)
		if (!strcmp(ibv_get_device_name(l[i]), name))
			iwarp = l[i]->transport_type == IBV_TRANSPORT_IWARP;
	if (l)
		ibv_free_device_list(l);
	NOTE("device %s: %s", name ? name : "?", iwarp ? "iWARP" : "not iWARP");
	return iwarp;
}

int main(void)
{
	const char *dev = getenv("TIRPC_RDMA_VM_DEV");
	struct iw_reply last = { 0 };
	struct rt_conn_attr ca;
	struct rt_conn *c;
	struct rt_err err;
	bool iwarp;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!t_have_device())
		return 77;
	t_watchdog(300);
	if (srv_start()) {
		CHECK(false, "rt server starts");
		return 1;
	}
	rt_conn_attr_init(&ca);
	ca.timeout_ms = 5000;
	c = t_connect(t_addr4(), srv.port, &ca, &err);
	if (!c) {
		CHECK(false, "connect: %s", err.msg);
		srv_stop();
		return 1;
	}
	iwarp = device_iwarp(c);
	if (dev && !strcmp(dev, "siw"))
		CHECK(iwarp, "the device is iWARP (tests/vm/run --siw)");
	else if (!iwarp)
		printf("SKIP: %s is not iWARP: the per-Read sink registrations are not exercised (run with tests/vm/run --siw)\n",
		       dev ? dev : "the device");
	test_reads(c, iwarp, &last);
	test_probe(c, &last);
	rt_conn_destroy(c);
	test_bad_read(iwarp);
	srv_stop();
	return tu_done();
}
