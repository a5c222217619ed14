/*
 * t_transport.c - the transport layer (rt_) against a real Soft-RoCE
 * device: connections over IPv4 and IPv6 with RFC 8797 private data both
 * ways, Send/Receive of several sizes and bursts, RDMA Read and Write
 * through rt_reg in both registration modes with byte-for-byte checks,
 * fencing against a misbehaving raw-verbs peer, remote invalidation,
 * disconnect detection and connection failures with their messages.
 *
 * Run inside the VM (tests/vm/run -- tests/vm/t_transport).  One line per
 * check ("ok" or "FAIL"); exit status 1 if any check failed.  Without an
 * RDMA device (the host) it says so and exits 77 (skipped).
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler.h"
#include "tests/vm/t_rt_util.h"

static struct t_srv srv4; /* rt command server on the IPv4 address */

static void server_attr(struct rt_conn_attr *a)
{
	rt_conn_attr_init(a);
	a->inline_send = 16384;
	a->inline_recv = 8192;
	a->credits = 16;
	a->rdma_depth = 4; /* 8 MiB transfers must wait for room */
}

static void client_attr(struct rt_conn_attr *a, enum rt_reg_mode mode)
{
	rt_conn_attr_init(a);
	a->credits = 16;
	a->reg_mode = mode;
	a->timeout_ms = 5000;
}

static int echo_once(struct rt_conn *c, uint32_t len, uint32_t seed)
{
	static uint8_t out[65536], in[65536];
	int n;

	t_pattern_fill(out, len, seed);
	if (len >= 4)
		memcpy(out, &(uint32_t){ T_ECHO }, 4);
	if (t_send(c, out, len))
		return -1;
	n = t_recv(c, in, sizeof(in), T_TIMEOUT_MS, NULL);
	return n == (int)len && !memcmp(in, out, len) ? 0 : -1;
}

/* ---- Connections and private data ------------------------------------ */

static bool wait_up(struct rt_conn *c)
{
	int64_t deadline = t_now_ms() + T_TIMEOUT_MS;

	while (rt_conn_state(c) != RT_CONN_UP && t_now_ms() < deadline)
		usleep(1000);
	return rt_conn_state(c) == RT_CONN_UP;
}

static void test_connect(struct t_srv *s, const char *host, int idx)
{
	const struct rw_cm_inline *ci, *si;
	struct rt_conn_attr ca;
	struct rt_conn *c, *sc;
	struct rt_err err;

	client_attr(&ca, RT_REG_AUTO);
	ca.inline_recv = 32768; /* server: send 16384, recv 8192 */
	c = t_connect(host, s->port, &ca, &err);
	CHECK(c != NULL, "connect to %s port %u%s%s", host, s->port,
	      c ? "" : ": ", c ? "" : err.msg);
	if (!c)
		return;
	sc = t_srv_conn(s, idx, T_TIMEOUT_MS);
	CHECK(sc != NULL && wait_up(sc) && rt_conn_state(c) == RT_CONN_UP,
	      "%s: both ends established", host);
	if (!sc)
		goto out;
	ci = rt_conn_inline(c);
	si = rt_conn_inline(sc);
	CHECK(rt_conn_peer_private(c)->valid && rt_conn_peer_private(sc)->valid,
	      "%s: RFC 8797 private data received by both ends", host);
	CHECK(ci->send == 4096 && ci->recv == 16384,
	      "%s: client thresholds send %u recv %u (want 4096/16384)", host,
	      ci->send, ci->recv);
	CHECK(si->send == 16384 && si->recv == 4096,
	      "%s: server thresholds send %u recv %u (want 16384/4096)", host,
	      si->send, si->recv);
	CHECK(ci->send == si->recv && ci->recv == si->send,
	      "%s: both ends agree on the minimums", host);
	CHECK(si->peer_remote_inv == rt_conn_local_private(c)->remote_inv,
	      "%s: server sees the client's Send With Invalidate flag (%d)",
	      host, si->peer_remote_inv);
	CHECK(rt_conn_ord(sc) >= 16 && rt_conn_ird(c) >= 16,
	      "%s: outstanding RDMA Reads: server ORD %u, client IRD %u (>= 16)",
	      host, rt_conn_ord(sc), rt_conn_ird(c));
	CHECK(echo_once(c, 4096, 7) == 0, "%s: echo of 4096 octets", host);
	NOTE("device %s, registration mode %s", rt_conn_device(c),
	     rt_reg_mode_name(rt_reg_mode(c)));
out:
	rt_conn_destroy(c);
}

static void test_no_private_data(void)
{
	struct rw_cm_private spd;
	struct t_raw_srv raw;
	struct rt_conn_attr ca;
	struct rt_conn *c, *sc;
	struct rt_err err;
	char msg[64];
	int idx = atomic_load(&srv4.accepted);

	CHECK(t_raw_connect_nopd(t_addr4(), srv4.port, &spd, msg,
				 sizeof(msg)) == 0,
	      "raw client without private data connects to the rt server (%s)",
	      msg);
	CHECK(spd.valid && spd.send_size == 16384 && spd.recv_size == 8192,
	      "raw client got the server's private data (send %u recv %u)",
	      spd.send_size, spd.recv_size);
	sc = t_srv_conn(&srv4, idx, T_TIMEOUT_MS);
	CHECK(sc && !rt_conn_peer_private(sc)->valid &&
		      rt_conn_inline(sc)->send == 1024 &&
		      rt_conn_inline(sc)->recv == 1024 &&
		      !rt_conn_inline(sc)->peer_remote_inv,
	      "server: peer without private data gets the v1 defaults (send %u recv %u)",
	      sc ? rt_conn_inline(sc)->send : 0,
	      sc ? rt_conn_inline(sc)->recv : 0);

	if (t_raw_srv_start(&raw, t_addr4())) {
		CHECK(false, "raw server starts");
		return;
	}
	client_attr(&ca, RT_REG_AUTO);
	c = t_connect(t_addr4(), raw.port, &ca, &err);
	CHECK(c && !rt_conn_peer_private(c)->valid &&
		      rt_conn_inline(c)->send == 1024 &&
		      rt_conn_inline(c)->recv == 1024 &&
		      !rt_conn_inline(c)->peer_remote_inv,
	      "client: server without private data gets the v1 defaults%s%s",
	      c ? "" : ": ", c ? "" : err.msg);
	rt_conn_destroy(c);
	t_raw_srv_stop(&raw);
}

/* ---- Send and Receive ------------------------------------------------ */

static void test_sizes(struct rt_conn *c)
{
	static const uint32_t sizes[] = { 1,	2,    3,    100,  1023, 1024,
					  1025, 2048, 4000, 4095, 4096 };
	unsigned int i, ok = 0;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		int r = echo_once(c, sizes[i], i + 1);

		ok += r == 0;
		if (r)
			CHECK(false, "echo of %u octets", sizes[i]);
	}
	CHECK(ok == ARRAY_SIZE(sizes),
	      "echo of %u sizes from 1 to 4096 octets, content verified", ok);
	CHECK(rt_conn_recvs_posted(c) == 16,
	      "Receives re-posted: %u posted after the exchanges",
	      rt_conn_recvs_posted(c));
}

static void test_limits(struct rt_conn *c)
{
	struct rt_lmem *m;
	struct rt_sbuf *b;
	struct rt_sge sge;
	struct rt_err err;
	int ret;

	m = rt_lmem_alloc(c, 4096, &err);
	b = rt_sbuf_get(c, &err);
	if (!m || !b) {
		CHECK(false, "buffers for the limit test: %s", err.msg);
		return;
	}
	sge = rt_lmem_sge(m, rt_lmem_addr(m), 1);
	ret = rt_post_send(c, b, 4096, &sge, 1, 0, 0, 0, &err);
	CHECK(ret == -EMSGSIZE, "Send of 4097 octets refused: %s", err.msg);
	rt_lmem_free(c, m);
}

/* Header in a Send buffer, payload from registered local memory. */
static void test_gather(struct rt_conn *c)
{
	uint8_t in[4096];
	struct rt_lmem *m = NULL;
	struct rt_sbuf *b = NULL;
	struct rt_sge sge;
	struct rt_err err;
	int n = -1;

	m = rt_lmem_alloc(c, 3000, &err);
	b = m ? rt_sbuf_get(c, &err) : NULL;
	if (b) {
		t_pattern_fill(rt_sbuf_data(b), 96, 11);
		memcpy(rt_sbuf_data(b), &(uint32_t){ T_ECHO }, 4);
		t_pattern_fill(rt_lmem_addr(m), 3000, 12);
		sge = rt_lmem_sge(m, rt_lmem_addr(m), 3000);
		if (!rt_post_send(c, b, 96, &sge, 1, 0, 0, 0, &err))
			n = t_recv(c, in, sizeof(in), T_TIMEOUT_MS, NULL);
	}
	CHECK(n == 3096 && t_pattern_check(in + 4, 92, 11 + 4 * 131) < 0 &&
		      t_pattern_check(in + 96, 3000, 12) < 0,
	      "Send gathering a header and a registered payload (%d octets)",
	      n);
	if (m)
		rt_lmem_free(c, m);
}

static void test_burst(struct rt_conn *c, unsigned int n)
{
	uint8_t out[512], in[512];
	unsigned int i, sent = 0, good = 0;
	int len;

	for (i = 0; i < n; i++) {
		t_pattern_fill(out, sizeof(out), 100 + i);
		memcpy(out, &(uint32_t){ T_ECHO }, 4);
		sent += t_send(c, out, sizeof(out)) == 0;
	}
	for (i = 0; i < n; i++) {
		len = t_recv(c, in, sizeof(in), T_TIMEOUT_MS, NULL);
		t_pattern_fill(out, sizeof(out), 100 + i);
		memcpy(out, &(uint32_t){ T_ECHO }, 4);
		good += len == (int)sizeof(out) &&
			!memcmp(in, out, sizeof(out));
	}
	CHECK(sent == n && good == n,
	      "burst of %u Sends up to the posted Receives: %u sent, %u echoed in order",
	      n, sent, good);
	CHECK(rt_conn_state(c) == RT_CONN_UP,
	      "connection still up after the burst");
}

static void test_messages(void)
{
	struct rt_conn_attr ca;
	struct rt_conn *c;
	struct rt_err err;

	client_attr(&ca, RT_REG_AUTO);
	ca.inline_recv = 8192;
	c = t_connect(t_addr4(), srv4.port, &ca, &err);
	if (!c) {
		CHECK(false, "connect for messages: %s", err.msg);
		return;
	}
	test_sizes(c);
	test_limits(c);
	test_gather(c);
	test_burst(c, 16);
	rt_conn_destroy(c);
}

static bool rdma_write(struct rt_conn *c, struct rt_regset *set, void *buf,
		       size_t len, uint32_t seed, char *why, size_t whylen);

static void test_busy_poll(void)
{
	struct rt_conn_attr ca;
	struct rt_regset *set;
	struct rt_conn *c;
	struct rt_err err;
	char why[256];
	bool ok = true;
	void *buf;
	unsigned int i;

	client_attr(&ca, RT_REG_MW);
	ca.busy_poll = true;
	c = t_connect(t_addr4(), srv4.port, &ca, &err);
	if (!c) {
		CHECK(false, "busy-poll connection: %s", err.msg);
		return;
	}
	for (i = 1; i <= 4096; i *= 4)
		ok &= echo_once(c, i, i) == 0;
	CHECK(ok, "busy-poll: echoes of 1..4096 octets");
	set = rt_regset_create(c, &err);
	buf = rt_reg_buf_alloc(c, 1 << 20, &err);
	CHECK(buf && rdma_write(c, set, buf, 1 << 20, 3, why, sizeof(why)),
	      "busy-poll: RDMA Write of 1 MiB through a window (%s)", why);
	rt_reg_buf_free(c, buf);
	rt_regset_destroy(set);
	rt_conn_destroy(c);
}

/* ---- RDMA through rt_reg --------------------------------------------- */

static const size_t rdma_sizes[] = {
	1, 7, 4096, 65536, (1u << 20) + 3, 8u << 20
};

static bool rdma_write(struct rt_conn *c, struct rt_regset *set, void *buf,
		       size_t len, uint32_t seed, char *why, size_t whylen)
{
	struct t_cmd cmd = { .op = T_WRITE, .seed = seed, .nsge = 3 };
	struct rw_segment segs[4];
	struct rt_err err;
	int n, r;
	int32_t st;

	memset(buf, 0xee, len);
	n = rt_reg_expose(set, buf, len, RT_REMOTE_WRITE, segs, 4, &err);
	if (n != 1) {
		snprintf(why, whylen, "expose: %s", err.msg);
		return false;
	}
	cmd.seg = segs[0];
	st = t_call(c, &cmd, NULL);
	r = rt_reg_revoke(set, &err);
	snprintf(why, whylen, "reply %d, revoke %d %s, first bad byte %ld", st,
		 r, err.msg, t_pattern_check(buf, len, seed));
	return st == 0 && r == 0 && t_pattern_check(buf, len, seed) < 0;
}

static bool rdma_read(struct rt_conn *c, struct rt_regset *set, void *buf,
		      size_t len, uint32_t seed, char *why, size_t whylen)
{
	struct t_cmd cmd = { .op = T_READ, .seed = seed, .nsge = 3 };
	struct rw_segment segs[4];
	struct rt_err err;
	int n, r;
	int32_t st;

	t_pattern_fill(buf, len, seed);
	n = rt_reg_expose(set, buf, len, RT_REMOTE_READ, segs, 4, &err);
	if (n != 1) {
		snprintf(why, whylen, "expose: %s", err.msg);
		return false;
	}
	cmd.seg = segs[0];
	st = t_call(c, &cmd, NULL);
	r = rt_reg_revoke(set, &err);
	snprintf(why, whylen, "reply %d (1: data differ), revoke %d %s", st, r,
		 err.msg);
	return st == 0 && r == 0;
}

static void rdma_sizes_run(struct rt_conn *c, struct rt_regset *set, bool pool,
			   const char *mode)
{
	const char *kind = pool ? "pool" : "heap";
	unsigned int i;
	char why[256];
	void *buf;
	size_t len;
	struct rt_err err;

	for (i = 0; i < ARRAY_SIZE(rdma_sizes); i++) {
		len = rdma_sizes[i];
		buf = pool ? rt_reg_buf_alloc(c, len, &err) : malloc(len);
		if (!buf) {
			CHECK(false, "%s: %zu octets of %s memory", mode, len,
			      kind);
			continue;
		}
		CHECK(rdma_write(c, set, buf, len, 31 * i + 1, why,
				 sizeof(why)),
		      "%s: RDMA Write of %zu octets into %s memory, verified (%s)",
		      mode, len, kind, why);
		CHECK(rdma_read(c, set, buf, len, 17 * i + 5, why, sizeof(why)),
		      "%s: RDMA Read of %zu octets from %s memory, verified (%s)",
		      mode, len, kind, why);
		if (pool)
			rt_reg_buf_free(c, buf);
		else
			free(buf);
	}
}

/* The rt server answers with Send With Invalidate of our handle. */
static void rdma_remote_inv(struct rt_conn *c, struct rt_regset *set)
{
	struct t_cmd cmd = { .op = T_INV };
	struct rw_segment seg = { 0 };
	struct rt_stats a = { 0 }, b = { 0 };
	struct rt_event ev = { 0 };
	struct rt_err err;
	void *buf = rt_reg_buf_alloc(c, 4096, &err);
	int r = -1;
	int32_t st = -1;

	if (buf && rt_reg_expose(set, buf, 4096, RT_REMOTE_WRITE, &seg, 1,
				 &err) == 1) {
		cmd.seg = seg;
		CHECK(rt_regset_inv_handle(set) == seg.handle,
		      "mw: the set nominates its one handle for remote invalidation");
		rt_conn_stats(c, &a);
		st = t_call(c, &cmd, &ev);
		r = rt_reg_revoke(set, &err);
		rt_conn_stats(c, &b);
	}
	CHECK(st == 0 && (ev.wc_flags & RT_WC_WITH_INV) &&
		      ev.inv_rkey == seg.handle,
	      "mw: Reply arrived With Invalidate of handle 0x%x", seg.handle);
	CHECK(r == 0 && b.remote_invs == a.remote_invs + 1 &&
		      b.invalidations == a.invalidations,
	      "mw: revoke honoured the remote invalidation (no local one)");
	rt_reg_buf_free(c, buf);
}

static void rdma_stats(struct rt_conn *c, enum rt_reg_mode mode)
{
	struct rt_stats s;

	rt_conn_stats(c, &s);
	NOTE("counters: exposures %llu binds %llu invalidations %llu remote %llu regs %llu deregs %llu reads %llu writes %llu queued %llu signalled %llu sends %llu recvs %llu errors %llu",
	     (unsigned long long)s.exposures, (unsigned long long)s.binds,
	     (unsigned long long)s.invalidations,
	     (unsigned long long)s.remote_invs,
	     (unsigned long long)s.registrations,
	     (unsigned long long)s.deregistrations, (unsigned long long)s.reads,
	     (unsigned long long)s.writes, (unsigned long long)s.queued,
	     (unsigned long long)s.signalled, (unsigned long long)s.sends,
	     (unsigned long long)s.recvs, (unsigned long long)s.errors);
	/* with no exposure at all every equation below holds */
	if (mode == RT_REG_MW)
		CHECK(s.exposures > 0 && s.binds == s.exposures &&
			      s.invalidations + s.remote_invs == s.binds &&
			      s.errors == 0,
		      "mw: every bind was invalidated, no errors");
	else
		CHECK(s.exposures > 0 && s.registrations == s.exposures &&
			      s.deregistrations == s.registrations &&
			      s.binds == 0 && s.errors == 0,
		      "mr: every registration was deregistered, no errors");
}

static void test_rdma(enum rt_reg_mode mode)
{
	const char *name = rt_reg_mode_name(mode);
	struct rt_conn_attr ca;
	struct rt_regset *set;
	struct rt_conn *c;
	struct rt_err err;

	int idx = atomic_load(&srv4.accepted);
	struct rt_stats ss;
	struct rt_conn *sc;

	client_attr(&ca, mode);
	c = t_connect(t_addr4(), srv4.port, &ca, &err);
	CHECK(c && rt_reg_mode(c) == mode, "%s: connection in %s mode%s%s",
	      name, name, c ? "" : ": ", c ? "" : err.msg);
	if (!c)
		return;
	set = rt_regset_create(c, &err);
	rdma_sizes_run(c, set, true, name);
	rdma_sizes_run(c, set, false, name);
	sc = t_srv_conn(&srv4, idx, T_TIMEOUT_MS);
	memset(&ss, 0, sizeof(ss));
	if (sc)
		rt_conn_stats(sc, &ss); /* the server is idle now */
	CHECK(sc && ss.queued > 0 && ss.errors == 0,
	      "%s: server queued %llu RDMA/Send WRs beyond its window of 4 and kept their order%s",
	      name, (unsigned long long)ss.queued,
	      sc ? "" : " (its connection not found)");
	if (mode == RT_REG_MW)
		rdma_remote_inv(c, set);
	rdma_stats(c, mode);
	rt_regset_destroy(set);
	rt_conn_destroy(c);
}

static void test_env_mode(void)
{
	static const char *const names[] = { "mr", "mw" };
	static const enum rt_reg_mode modes[] = { RT_REG_MR, RT_REG_MW };
	struct rt_conn_attr ca;
	struct rt_conn *c;
	struct rt_err err;
	unsigned int i;

	for (i = 0; i < 2; i++) {
		setenv("RPCRDMA_REG_MODE", names[i], 1);
		client_attr(&ca, RT_REG_AUTO);
		c = t_connect(t_addr4(), srv4.port, &ca, &err);
		CHECK(c && rt_reg_mode(c) == modes[i] &&
			      rt_conn_local_private(c)->remote_inv == (i == 1),
		      "RPCRDMA_REG_MODE=%s selects %s (Send With Invalidate advertised: %d)",
		      names[i], c ? rt_reg_mode_name(rt_reg_mode(c)) : err.msg,
		      c ? rt_conn_local_private(c)->remote_inv : -1);
		rt_conn_destroy(c);
	}
	unsetenv("RPCRDMA_REG_MODE");
}

static void test_mode_api(void)
{
	struct rt_conn_attr ca;
	struct rt_regset *set;
	struct rt_conn *c;
	struct rt_err err;
	char why[256];
	void *buf;
	int r;

	client_attr(&ca, RT_REG_MW);
	c = t_connect(t_addr4(), srv4.port, &ca, &err);
	if (!c) {
		CHECK(false, "connect for the mode API: %s", err.msg);
		return;
	}
	r = rt_reg_set_mode(c, RT_REG_MR, &err);
	CHECK(r == -EINVAL,
	      "MW -> MR refused after advertising Send With Invalidate: %s",
	      err.msg);
	rt_conn_destroy(c);

	ca.no_remote_inv = true;
	c = t_connect(t_addr4(), srv4.port, &ca, &err);
	if (!c) {
		CHECK(false, "connect without Send With Invalidate: %s",
		      err.msg);
		return;
	}
	r = rt_reg_set_mode(c, RT_REG_MR, &err);
	CHECK(r == 0 && rt_reg_mode(c) == RT_REG_MR,
	      "MW -> MR by API on a connection that did not advertise it");
	set = rt_regset_create(c, &err);
	buf = malloc(65536);
	CHECK(rdma_write(c, set, buf, 65536, 99, why, sizeof(why)),
	      "RDMA Write after switching to MR (%s)", why);
	rt_reg_expose(set, buf, 4096, RT_REMOTE_READ, (struct rw_segment[1]){},
		      1, &err);
	r = rt_reg_set_mode(c, RT_REG_MW, &err);
	CHECK(r == -EBUSY, "mode change refused while memory is exposed: %s",
	      err.msg);
	rt_reg_revoke(set, &err);
	r = rt_reg_set_mode(c, RT_REG_MW, &err);
	CHECK(r == 0 && rt_reg_mode(c) == RT_REG_MW,
	      "MR -> MW by API once nothing is exposed");
	CHECK(rdma_write(c, set, buf, 65536, 98, why, sizeof(why)),
	      "RDMA Write after switching back to MW (%s)", why);
	rt_regset_destroy(set);
	free(buf);
	rt_conn_destroy(c);
}

/* ---- Fencing against a misbehaving peer ------------------------------ */

struct fence_case {
	const char *what;
	enum rt_access expose; /* rights granted */
	uint32_t legit_op;     /* 0: none */
	uint32_t rogue_op;     /* after revoke (or, with no legit
					 * op, while exposed) */
	bool revoke_first;
	bool pool;
};

static void fence_one(struct t_raw_srv *raw, enum rt_reg_mode mode,
		      const struct fence_case *fc)
{
	const size_t len = 65536;
	const char *name = rt_reg_mode_name(mode);
	struct t_cmd cmd = { .nsge = 1 };
	struct rw_segment seg;
	struct rt_conn_attr ca;
	struct rt_regset *set;
	struct rt_conn *c;
	struct rt_err err;
	int before, st, n;
	int32_t legit = 0;
	void *buf;

	client_attr(&ca, mode);
	c = t_connect(t_addr4(), raw->port, &ca, &err);
	if (!c) {
		CHECK(false, "%s %s: connect to the raw peer: %s", name,
		      fc->what, err.msg);
		return;
	}
	set = rt_regset_create(c, &err);
	buf = fc->pool ? rt_reg_buf_alloc(c, len, &err) : malloc(len);
	n = set && buf ?
		    rt_reg_expose(set, buf, len, fc->expose, &seg, 1, &err) :
		    -1;
	/* a handle never exposed would be refused whatever the fence */
	CHECK(n == 1, "%s %s: %zu octets exposed under one handle%s%s", name,
	      fc->what, len, n == 1 ? "" : ": ", n == 1 ? "" : err.msg);
	if (n != 1) {
		if (fc->pool)
			rt_reg_buf_free(c, buf);
		else
			free(buf);
		rt_regset_destroy(set);
		rt_conn_destroy(c);
		return;
	}
	t_pattern_fill(buf, len, 5);
	cmd.seg = seg;
	if (fc->legit_op) {
		cmd.op = fc->legit_op;
		cmd.seed = fc->legit_op == T_READ ? 5 : 6;
		legit = t_call(c, &cmd, NULL);
		CHECK(legit == 0, "%s %s: legitimate %s while exposed succeeds",
		      name, fc->what,
		      fc->legit_op == T_READ ? "Read" : "Write");
	}
	if (fc->revoke_first)
		rt_reg_revoke(set, &err);
	memset(buf, 0x5a, len);
	before = atomic_load(&raw->results);
	cmd.op = fc->rogue_op;
	cmd.seed = 77;
	t_send(c, &cmd, sizeof(cmd));
	/* Refused: an error completion, or (rarely, under rxe) no completion
	 * at all while the peer waited 2 x T_TIMEOUT_MS; either way the rogue
	 * operation never succeeded, and the memory check below decides. */
	st = t_raw_wait_result(raw, before, 3 * T_TIMEOUT_MS);
	CHECK(st != IBV_WC_SUCCESS, "%s %s: refused with %s", name, fc->what,
	      st < 0 ? "no completion within the peer's wait" :
		       ibv_wc_status_str(st));
	usleep(100 * 1000);
	CHECK(t_all_bytes(buf, len, 0x5a) < 0,
	      "%s %s: exposed memory unchanged", name, fc->what);
	st = t_wait_dead(c, T_TIMEOUT_MS);
	NOTE("our connection %s (%s)", st >= 0 ? "ended" : "stayed up",
	     rt_conn_error(c)->msg);
	rt_reg_revoke(set, &err);
	if (fc->pool)
		rt_reg_buf_free(c, buf);
	else
		free(buf);
	rt_regset_destroy(set);
	rt_conn_destroy(c);
}

static void test_fencing(struct t_raw_srv *raw, enum rt_reg_mode mode)
{
	static const struct fence_case cases[] = {
		{ "Write after revoke (pool)", RT_REMOTE_WRITE, T_WRITE,
		  T_WRITE, true, true },
		{ "Write after revoke (heap)", RT_REMOTE_WRITE, T_WRITE,
		  T_WRITE, true, false },
		{ "Read after revoke", RT_REMOTE_READ, T_READ, T_READ, true,
		  true },
		{ "Write into a read-only exposure", RT_REMOTE_READ, 0, T_WRITE,
		  false, true },
		{ "Read from a write-only exposure", RT_REMOTE_WRITE, 0, T_READ,
		  false, true },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		fence_one(raw, mode, &cases[i]);
}

/* Send With Invalidate from the raw peer, then a Write with that handle. */
static void test_raw_remote_inv(struct t_raw_srv *raw)
{
	struct t_cmd cmd = { .op = T_INV, .nsge = 1 };
	struct rt_conn_attr ca;
	struct rt_regset *set;
	struct rt_stats a = { 0 }, b = { 0 };
	struct rw_segment seg = { 0 };
	struct rt_event ev = { 0 };
	struct rt_conn *c;
	struct rt_err err;
	void *buf;
	int before, st, r;

	client_attr(&ca, RT_REG_MW);
	c = t_connect(t_addr4(), raw->port, &ca, &err);
	if (!c) {
		CHECK(false, "connect to the raw peer: %s", err.msg);
		return;
	}
	set = rt_regset_create(c, &err);
	buf = rt_reg_buf_alloc(c, 8192, &err);
	rt_reg_expose(set, buf, 8192, RT_REMOTE_WRITE, &seg, 1, &err);
	cmd.seg = seg;
	rt_conn_stats(c, &a);
	st = t_call(c, &cmd, &ev);
	r = rt_reg_revoke(set, &err);
	rt_conn_stats(c, &b);
	CHECK(st == 0 && (ev.wc_flags & RT_WC_WITH_INV) &&
		      ev.inv_rkey == seg.handle && r == 0 &&
		      b.remote_invs == a.remote_invs + 1 &&
		      b.invalidations == a.invalidations,
	      "raw peer's Send With Invalidate honoured for handle 0x%x",
	      seg.handle);
	memset(buf, 0x5a, 8192);
	before = atomic_load(&raw->results);
	cmd.op = T_WRITE;
	t_send(c, &cmd, sizeof(cmd));
	/* Refused is either a NAK (remote access error) or, when the
	 * device drops the packet, the peer's retries running out, which
	 * takes up to retry_cnt x the ack timeout: seen beyond 10 s on a
	 * loaded machine, so wait longer than for a plain result. */
	st = t_raw_wait_result(raw, before, 4 * T_TIMEOUT_MS);
	CHECK(st != -1 && st != IBV_WC_SUCCESS &&
		      t_all_bytes(buf, 8192, 0x5a) < 0,
	      "Write with the remotely invalidated handle refused (%s), memory unchanged",
	      st < 0 ? "no result" : ibv_wc_status_str(st));
	t_wait_dead(c, T_TIMEOUT_MS);
	rt_reg_buf_free(c, buf);
	rt_regset_destroy(set);
	rt_conn_destroy(c);
}

/* The abort/disconnect path: revoking on a dead connection whose binds
 * have not been reaped yet destroys the windows; the flushes that come
 * later must not touch them. */
static void test_revoke_dead(void)
{
	struct rw_segment seg;
	struct rt_conn_attr ca;
	struct rt_regset *set;
	struct rt_event ev;
	struct rt_conn *c;
	struct rt_err err;
	void *buf[3];
	int i, r, n = 0;

	client_attr(&ca, RT_REG_MW);
	c = t_connect(t_addr4(), srv4.port, &ca, &err);
	if (!c) {
		CHECK(false, "connect for the revoke on a dead connection: %s",
		      err.msg);
		return;
	}
	set = rt_regset_create(c, &err);
	for (i = 0; i < 3; i++) {
		buf[i] = rt_reg_buf_alloc(c, 4096, &err);
		n += rt_reg_expose(set, buf[i], 4096, RT_REMOTE_WRITE, &seg, 1,
				   &err) == 1;
	}
	rt_conn_disconnect(c);
	r = rt_reg_revoke(set, &err);
	CHECK(n == 3 && r == 0 && rt_regset_count(set) == 0,
	      "revoke on a dead connection fences %d windows by destroying them",
	      n);
	while (rt_conn_poll(c, &ev, 1, 100) > 0)
		;
	CHECK(rt_conn_state(c) == RT_CONN_DEAD,
	      "flushes after the windows were destroyed are harmless");
	for (i = 0; i < 3; i++)
		rt_reg_buf_free(c, buf[i]);
	rt_regset_destroy(set);
	rt_conn_destroy(c);
}

/* ---- Disconnects and failures ---------------------------------------- */

static void test_server_closes(void)
{
	struct t_cmd cmd = { .op = T_CLOSE };
	struct rt_conn_attr ca;
	struct rt_conn *c;
	struct rt_err err;
	struct pollfd p;
	int64_t t0;
	int woke, ms;

	client_attr(&ca, RT_REG_AUTO);
	c = t_connect(t_addr4(), srv4.port, &ca, &err);
	if (!c) {
		CHECK(false, "connect for the server's disconnect: %s",
		      err.msg);
		return;
	}
	t0 = t_now_ms();
	t_send(c, &cmd, sizeof(cmd));
	p = (struct pollfd){ rt_conn_fd(c), POLLIN, 0 };
	woke = poll(&p, 1, T_TIMEOUT_MS);
	ms = t_wait_dead(c, T_TIMEOUT_MS);
	CHECK(woke == 1 && ms >= 0,
	      "server disconnects: client fd woke and connection dead after %lld ms (%s)",
	      (long long)(t_now_ms() - t0), rt_conn_error(c)->msg);
	rt_conn_destroy(c);
}

static void test_client_closes(void)
{
	int before = atomic_load(&srv4.deaths);
	struct rt_conn_attr ca;
	struct rt_conn *c;
	struct rt_err err;
	int64_t t0, deadline;

	client_attr(&ca, RT_REG_AUTO);
	c = t_connect(t_addr4(), srv4.port, &ca, &err);
	if (!c) {
		CHECK(false, "connect for the client's disconnect: %s",
		      err.msg);
		return;
	}
	CHECK(echo_once(c, 64, 1) == 0,
	      "an echo before the client disconnects");
	before = atomic_load(&srv4.deaths);
	t0 = t_now_ms();
	rt_conn_destroy(c);
	deadline = t0 + T_TIMEOUT_MS;
	while (atomic_load(&srv4.deaths) == before && t_now_ms() < deadline)
		usleep(1000);
	pthread_mutex_lock(&srv4.mu);
	CHECK(atomic_load(&srv4.deaths) > before,
	      "client disconnects: server connection dead after %lld ms (%s)",
	      (long long)(atomic_load(&srv4.last_death_ms) - t0),
	      srv4.last_death.msg);
	pthread_mutex_unlock(&srv4.mu);
}

static void test_peer_vanishes(struct t_raw_srv *raw, uint32_t op,
			       const char *what)
{
	struct t_cmd cmd = { .op = op };
	struct rt_conn_attr ca;
	struct rt_conn *c;
	struct rt_err err;
	int before, ms;
	int64_t t0;

	client_attr(&ca, RT_REG_AUTO);
	c = t_connect(t_addr4(), raw->port, &ca, &err);
	if (!c) {
		CHECK(false, "connect to the raw peer: %s", err.msg);
		return;
	}
	before = atomic_load(&raw->results);
	t_send(c, &cmd, sizeof(cmd));
	t_raw_wait_result(raw, before, T_TIMEOUT_MS);
	t0 = t_now_ms();
	/* Only traffic can tell that a QP vanished without a word. */
	if (op == T_DROPQP)
		t_send(c, &(struct t_cmd){ .op = T_ECHO }, sizeof(cmd));
	ms = t_wait_dead(c, 3 * T_TIMEOUT_MS);
	CHECK(ms >= 0, "%s: connection dead after %lld ms (%s)", what,
	      (long long)(t_now_ms() - t0), rt_conn_error(c)->msg);
	rt_conn_destroy(c);
}

static void connect_fails(const char *host, uint16_t port, int want,
			  const char *words, uint32_t timeout_ms)
{
	struct sockaddr_storage ss;
	struct rt_conn_attr ca;
	struct rt_conn *c;
	struct rt_err err;
	int64_t t0 = t_now_ms(), ms;

	client_attr(&ca, RT_REG_AUTO);
	ca.timeout_ms = timeout_ms;
	t_sockaddr(&ss, host, port);
	c = rt_connect((struct sockaddr *)&ss, &ca, &err);
	ms = t_now_ms() - t0;
	CHECK(!c && (!want || err.code == want) &&
		      (!words || strstr(err.msg, words)) &&
		      ms <= timeout_ms + 1000,
	      "connect to %s:%u fails in %lld ms: \"%s\" (%s)", host, port,
	      (long long)ms, err.msg, strerror(err.code));
	rt_conn_destroy(c);
}

static void test_connect_failures(void)
{
	struct sockaddr_storage ss;
	struct rt_listener *l;
	struct rt_err err;
	uint16_t port = 20049;

	/* A port known to be free: bind one, then close it. */
	t_sockaddr(&ss, t_addr4(), 0);
	l = rt_listen((struct sockaddr *)&ss, 0, NULL, &err);
	if (l) {
		port = rt_listener_port(l);
		rt_listener_destroy(l);
	}
	connect_fails(t_addr4(), port, ECONNREFUSED, "refused", 5000);
	connect_fails(t_addr6(), port, ECONNREFUSED, "refused", 5000);
	connect_fails("192.0.2.99", 20049, 0, "192.0.2.99", 2000);
	connect_fails("127.0.0.1", 20049, 0, "127.0.0.1", 2000);
	connect_fails("198.51.100.1", 20049, 0, "198.51.100.1", 2000);
}

/* rdma and rdma6 listeners share one port (an IPv6 listener is IPv6-only,
 * as libtirpc makes tcp6), and each family's client reaches its own. */
static void test_dual_stack_port(void)
{
	struct sockaddr_storage s4, s6;
	struct rt_listener *l4, *l6 = NULL;
	struct rt_err err;
	uint16_t port;

	t_sockaddr(&s4, "0.0.0.0", 0);
	l4 = rt_listen((struct sockaddr *)&s4, 0, NULL, &err);
	if (!l4) {
		CHECK(false, "IPv4 wildcard listener: %s", err.msg);
		return;
	}
	port = rt_listener_port(l4);
	t_sockaddr(&s6, "::", port);
	l6 = rt_listen((struct sockaddr *)&s6, 0, NULL, &err);
	CHECK(l6 != NULL, "IPv4 and IPv6 wildcard listeners share port %u%s%s",
	      port, l6 ? "" : ": ", l6 ? "" : err.msg);
	if (l6)
		rt_listener_destroy(l6);
	rt_listener_destroy(l4);
}

int main(void)
{
	struct rt_conn_attr sa;
	struct t_raw_srv raw;
	struct t_srv srv6;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!t_have_device())
		return 77;
	t_watchdog(600);
	server_attr(&sa);
	if (t_srv_start(&srv4, t_addr4(), &sa) ||
	    t_srv_start(&srv6, t_addr6(), &sa)) {
		CHECK(false, "rt servers start");
		return 1;
	}
	test_connect(&srv4, t_addr4(), 0);
	test_connect(&srv6, t_addr6(), 0);
	test_no_private_data();
	test_messages();
	test_rdma(RT_REG_MW);
	test_rdma(RT_REG_MR);
	test_busy_poll();
	test_env_mode();
	test_mode_api();
	if (!t_raw_srv_start(&raw, t_addr4())) {
		test_fencing(&raw, RT_REG_MW);
		test_fencing(&raw, RT_REG_MR);
		test_raw_remote_inv(&raw);
		test_peer_vanishes(&raw, T_DROPALL,
				   "peer destroys QP and CM id");
		test_peer_vanishes(&raw, T_DROPQP,
				   "peer QP destroyed silently");
		t_raw_srv_stop(&raw);
	} else {
		CHECK(false, "raw peer starts");
	}
	test_revoke_dead();
	test_server_closes();
	test_client_closes();
	test_connect_failures();
	test_dual_stack_port();
	t_srv_stop(&srv6);
	t_srv_stop(&srv4);
	return tu_done();
}
