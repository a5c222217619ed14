/*
 * t_clnt_srv.c - a fake rtest responder for the client-side VM tests, built
 * on the transport (rt_) and wire (rw_) layers, single-threaded.  It serves
 * rtest.x (every procedure), Long Calls (PZRC pulled by RDMA Read) and Long
 * Replies (RDMA Write into the Reply chunk, RDMA_NOMSG), grants the credits
 * it was started with, and answers the test-hook procedures of
 * t_clnt_util.h by misbehaving on purpose (RDMA_ERROR, malformed or foreign
 * Replies first, no reply at all).  Version Two property messages are
 * taken and dropped: it has no properties to change, and a REQPROP gets
 * no RESPROP.
 *
 * It lets the client be tested without the project's responder, and keeps
 * the failure modes a correct server never produces.  Run as
 * "t_clnt --serve PORT CREDITS"; it listens on both test addresses and
 * exits on SIGTERM or when its parent dies.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <rpc/rpc.h>

#include "rtest.h"
#include "tests/vm/t_clnt_util.h"
#include "transport/rt_buf.h"
#include "transport/rt_conn.h"
#include "wire/rw_chunk.h"
#include "wire/rw_plan.h"
#include "wire/rw_role.h"

#define S_MAX_CONNS 64
#define S_STASH	    256
#define S_WAIT_MS   10000

struct s_conn {
	struct rt_conn *c;
	struct rt_event stash[S_STASH]; /* events seen while waiting */
	unsigned int nstash;
	unsigned int inflight; /* Calls received, not answered */
	bool dead;
};

static struct s_conn *conns[S_MAX_CONNS];
static volatile sig_atomic_t stop;
static rtest_stats stats;
static struct rw_hdr_space hsp;
static uint64_t cookies = 1;
/* T_CLNT_FAKE_DROP_V2: speak version 1 only and end the connection on a
 * message of another version, as some implementations do, instead of
 * answering ERR_VERS (the client must remember it: V2-NEG-6) */
static bool drop_v2;

static void on_term(int sig)
{
	stop = 1;
}

static void note_inflight(struct s_conn *s, int delta)
{
	s->inflight += delta;
	if (s->inflight > stats.max_inflight)
		stats.max_inflight = s->inflight;
}

/* Wait for the completion of the work with cookie; other events are kept
 * for later.  Returns its status, or -1. */
static int wait_cookie(struct s_conn *s, uint64_t cookie)
{
	int64_t deadline = t_ms() + S_WAIT_MS;
	struct rt_event ev;
	int n;

	while (t_ms() < deadline) {
		n = rt_conn_poll(s->c, &ev, 1, 100);
		if (n < 0)
			return -1;
		if (n == 0)
			continue;
		if (ev.type == RT_EV_DEAD) {
			s->dead = true;
			return -1;
		}
		if (ev.type == RT_EV_RECV) {
			note_inflight(s, 1);
			if (s->nstash < S_STASH)
				s->stash[s->nstash++] = ev;
			continue;
		}
		if (ev.cookie == cookie)
			return ev.status;
	}
	return -1;
}

static int send_buf(struct s_conn *s, const void *msg, uint32_t len, bool wait)
{
	struct rt_sbuf *b = rt_sbuf_get(s->c, NULL);
	uint64_t ck = cookies++;

	if (!b || len > rt_sbuf_size(b))
		return -1;
	memcpy(rt_sbuf_data(b), msg, len);
	if (rt_post_send(s->c, b, len, NULL, 0, 0, ck, wait ? RT_WR_SIGNAL : 0,
			 NULL))
		return -1;
	return wait ? wait_cookie(s, ck) : 0;
}

/* ---- rtest procedures ---------------------------------------------------- */

union s_args {
	rtest_data data;
	rtest_ints ints;
	rtest_fill_args fill;
	int ms;
	char *str;
};

union s_res {
	rtest_data data;
	quad_t sum;
	int ms;
	rtest_stats st;
	char *str;
};

struct s_proc {
	xdrproc_t xargs;
	xdrproc_t xres;
};

static struct s_proc proc_of(uint32_t proc)
{
	struct s_proc p = { (xdrproc_t)xdr_void, (xdrproc_t)xdr_void };

	switch (proc) {
	case RTEST_ECHO:
		p.xargs = (xdrproc_t)xdr_rtest_data;
		p.xres = (xdrproc_t)xdr_rtest_data;
		break;
	case RTEST_SUM:
		p.xargs = (xdrproc_t)xdr_rtest_ints;
		p.xres = (xdrproc_t)xdr_quad_t;
		break;
	case RTEST_FILL:
		p.xargs = (xdrproc_t)xdr_rtest_fill_args;
		p.xres = (xdrproc_t)xdr_rtest_data;
		break;
	case RTEST_SLEEP:
		p.xargs = (xdrproc_t)xdr_int;
		p.xres = (xdrproc_t)xdr_int;
		break;
	case RTEST_STATS:
		p.xres = (xdrproc_t)xdr_rtest_stats;
		break;
	case RTEST_ECHOSTR:
		p.xargs = (xdrproc_t)xdr_wrapstring;
		p.xres = (xdrproc_t)xdr_wrapstring;
		break;
	}
	return p;
}

static void run_proc(uint32_t proc, union s_args *a, union s_res *r)
{
	u_int i;

	switch (proc) {
	case RTEST_ECHO:
		r->data = a->data;
		break;
	case RTEST_SUM:
		r->sum = 0;
		for (i = 0; i < a->ints.rtest_ints_len; i++)
			r->sum += a->ints.rtest_ints_val[i];
		break;
	case RTEST_FILL:
		r->data.rtest_data_len = a->fill.len;
		r->data.rtest_data_val = malloc(a->fill.len ? a->fill.len : 1);
		t_fill(r->data.rtest_data_val, a->fill.len, a->fill.seed);
		break;
	case RTEST_SLEEP:
		usleep((useconds_t)a->ms * 1000);
		r->ms = a->ms;
		break;
	case RTEST_STATS:
		r->st = stats;
		break;
	case RTEST_ECHOSTR:
		r->str = a->str;
		break;
	}
}

/* ---- Replies ------------------------------------------------------------- */

static uint32_t grant(struct s_conn *s)
{
	uint32_t g = rw_srv_credits_grant(rt_conn_srv_credits(s->c));

	if (g > stats.max_granted)
		stats.max_granted = g;
	return g;
}

static void reply_error(struct s_conn *s, const struct rw_rx_call *rx,
			bool vers)
{
	uint8_t buf[64];
	/* the versions we speak for a version we do not; the hook's 1..1
	 * for one we do */
	uint32_t high = rx->why == RW_R_BAD_VERS ? RW_VERS_2 : RW_VERS_1;
	size_t n = vers ? rw_err_vers(rx, grant(s), 1, high, buf, sizeof(buf)) :
			  rw_err_chunk(rx, grant(s), buf, sizeof(buf));

	if (n)
		send_buf(s, buf, (uint32_t)n, false);
}

/* RDMA_MSG: header + payload inline. */
/* A reply that fits nowhere: v1 can only say ERR_CHUNK; v2 names the Reply
 * chunk the resend needs, and the client resends (V2-ERR-14). */
static void reply_no_room(struct s_conn *s, const struct rw_rx_call *rx,
			  uint32_t need)
{
	uint8_t buf[64];
	size_t n;

	if (rx->hdr.vers != RW_VERS_2) {
		reply_error(s, rx, false);
		return;
	}
	n = rw_err2(rx, grant(s), RW2_ERR_REPLY_RESOURCE, need, 0, buf,
		    sizeof(buf));
	if (n)
		send_buf(s, buf, (uint32_t)n, false);
}

static int reply_short(struct s_conn *s, const struct rw_rx_call *rx,
		       const void *pay, uint32_t plen)
{
	uint8_t *buf = malloc(plen + 256);
	struct rw_hdr h;
	size_t n;
	int ret;

	rw_hdr_init(&h, rx->hdr.vers, RW_MSG, rx->hdr.xid, grant(s));
	h.direction = RW_DIR_REPLY;
	n = rw_encode_reply(rx, &h, buf, 256);
	if (!n) {
		free(buf);
		return -1;
	}
	memcpy(buf + n, pay, plen);
	ret = send_buf(s, buf, (uint32_t)n + plen, false);
	free(buf);
	return ret;
}

/* RDMA_NOMSG: RDMA Write into the Reply chunk, then the header. */
static int reply_long(struct s_conn *s, const struct rw_rx_call *rx,
		      struct rt_lmem *m, uint32_t plen)
{
	struct rw_segment out[RW_MAX_CHUNK_SEGS];
	uint8_t hb[512], *p = rt_lmem_addr(m);
	uint32_t i, done = 0, take;
	struct rt_sge sge;
	struct rw_hdr h;
	size_t n;

	if (rw_write_chunk_return(&rx->hdr.reply, plen, out) != RW_R_OK)
		return -1;
	for (i = 0; i < rx->hdr.reply.nsegs && done < plen; i++) {
		take = out[i].length;
		sge = rt_lmem_sge(m, p + done, take);
		if (rt_post_write(s->c, &sge, 1, &rx->hdr.reply.segs[i], 0, 0,
				  NULL))
			return -1;
		done += take;
	}
	rw_hdr_init(&h, rx->hdr.vers, RW_NOMSG, rx->hdr.xid, grant(s));
	h.direction = RW_DIR_REPLY;
	h.has_reply = true;
	h.reply.nsegs = rx->hdr.reply.nsegs;
	h.reply.segs = out;
	n = rw_encode_reply(rx, &h, hb, sizeof(hb));
	if (!n)
		return -1;
	/* Wait for the Send: the Writes before it are then done too, and
	 * the local memory may be freed. */
	return send_buf(s, hb, (uint32_t)n, true);
}

static int send_reply(struct s_conn *s, const struct rw_rx_call *rx,
		      uint32_t xid, xdrproc_t xres, void *res, bool force_long)
{
	size_t cap = xdr_sizeof(xres, res) + 64;
	struct rw_reply_in in = { .vers = rx->hdr.vers };
	struct rpc_msg m;
	struct rt_lmem *mem;
	uint32_t plen;
	XDR x;
	int ret;

	mem = rt_lmem_alloc(s->c, cap, NULL);
	if (!mem)
		return -1;
	memset(&m, 0, sizeof(m));
	m.rm_xid = xid;
	m.rm_direction = REPLY;
	m.rm_reply.rp_stat = MSG_ACCEPTED;
	m.acpted_rply.ar_verf = _null_auth;
	m.acpted_rply.ar_stat = SUCCESS;
	m.acpted_rply.ar_results.where = res;
	m.acpted_rply.ar_results.proc = xres;
	xdrmem_create(&x, rt_lmem_addr(mem), (u_int)cap, XDR_ENCODE);
	if (!xdr_replymsg(&x, &m)) {
		rt_lmem_free(s->c, mem);
		return -1;
	}
	plen = xdr_getpos(&x);
	in.reply_inline = rt_conn_inline(s->c)->send;
	in.reduced_len = plen;
	in.reply_chunk = rx->hdr.has_reply;
	in.reply_chunk_segs = rx->hdr.reply.nsegs;
	rw_chunk_len(&rx->hdr.reply, &in.reply_chunk_len);
	switch (force_long && in.reply_chunk ? RW_LONG : rw_plan_reply(&in)) {
	case RW_SHORT:
		ret = reply_short(s, rx, rt_lmem_addr(mem), plen);
		break;
	case RW_LONG:
		ret = reply_long(s, rx, mem, plen);
		break;
	default:
		reply_no_room(s, rx, plen);
		ret = 0;
		break;
	}
	rt_lmem_free(s->c, mem);
	return ret;
}

/* ---- Misbehaving on purpose ---------------------------------------------- */

/* What a hook sends before the proper reply (or instead of it); true if
 * the proper reply must still be sent. */
static bool hook_first(struct s_conn *s, const struct rw_rx_call *rx,
		       uint32_t proc)
{
	uint8_t buf[128];
	struct rw_hdr h;
	uint32_t w0;
	size_t n;

	switch (proc) {
	case T_PROC_ERR_CHUNK:
	case T_PROC_ERR_VERS:
		reply_error(s, rx, proc == T_PROC_ERR_VERS);
		return false;
	case T_PROC_NOREPLY:
		return false;
	case T_PROC_ERR_V2_FIRST:
		/* an RDMA_ERROR of the other version, ERR_CHUNK (v1) or
		 * RDMA2_ERR_BAD_XDR (v2), both code 2: not an answer to the
		 * Call (V1-ERR-10, V2-NEG-7) */
		rw_hdr_init(&h,
			    rx->hdr.vers == RW_VERS_2 ? RW_VERS_1 : RW_VERS_2,
			    RW_ERROR, rx->hdr.xid, grant(s));
		h.err.code = RW_ERR_CHUNK;
		n = rw_hdr_encode(&h, buf, sizeof(buf));
		if (n)
			send_buf(s, buf, (uint32_t)n, false);
		return true;
	case T_PROC_RUNT_FIRST:
		memset(buf, 0, 12);
		memcpy(buf, &rx->hdr.xid, 4);
		send_buf(s, buf, 12, false);
		return true;
	case T_PROC_XID_FIRST:
	case T_PROC_BAD_FIRST:
		/* A reply header with our XID + 1, or with a Read list
		 * (never allowed in a Reply, V1-RC-9), and a fake payload. */
		memset(buf, 0, sizeof(buf));
		rw_hdr_init(&h, rx->hdr.vers, RW_MSG,
			    rx->hdr.xid + (proc == T_PROC_XID_FIRST), grant(s));
		h.direction = RW_DIR_REPLY;
		n = rw_hdr_encode(&h, buf, sizeof(buf));
		if (proc == T_PROC_BAD_FIRST) {
			/* Read list: present, position 0, one segment. */
			uint32_t w[6] = {
				htonl(1), 0, htonl(1), htonl(8), 0, 0
			};

			/* the lists start after direction and inv_handle
			 * in v2 */
			size_t at = rx->hdr.vers == RW_VERS_2 ? 24 : 16;

			memmove(buf + at + sizeof(w), buf + at, n - at);
			memcpy(buf + at, w, sizeof(w));
			n += sizeof(w);
		}
		/* an RPC Reply (msg_type REPLY): a Call would be a
		 * backward-direction message, not a bad Reply (RFC 8167) */
		w0 = htonl(rx->hdr.xid);
		memcpy(buf + n, &w0, 4);
		w0 = htonl(1);
		memcpy(buf + n + 4, &w0, 4);
		send_buf(s, buf, (uint32_t)n + 28, false);
		return true;
	default:
		if (proc >= T_PROC_SEED) {
			char name[256];
			int len = t_seed(proc - T_PROC_SEED, buf, sizeof(buf),
					 name, sizeof(name));
			uint32_t xid = htonl(rx->hdr.xid);

			if (len >= 4)
				memcpy(buf, &xid, 4);
			if (len >= 0)
				send_buf(s, buf, (uint32_t)len, false);
		}
		return true;
	}
}

/* ---- Calls ----------------------------------------------------------------- */

/* The Call's payload: inline, or pulled from the PZRC. */
static void *call_payload(struct s_conn *s, const struct rw_rx_call *rx,
			  const struct rt_event *ev, uint32_t *len,
			  struct rt_lmem **mem)
{
	struct rw_read_iter it;
	struct rw_read_chunk ch;
	struct rt_sge sge;
	uint8_t *p;
	uint32_t i, off = 0;
	uint64_t ck;

	*mem = NULL;
	if (rx->hdr.proc == RW_MSG) {
		*len = ev->len - rx->hdr.hdr_len;
		return (uint8_t *)ev->data + rx->hdr.hdr_len;
	}
	rw_read_iter_init(&it, &rx->hdr);
	if (rw_read_iter_next(&it, &ch) != 1 || ch.position != 0)
		return NULL;
	*mem = rt_lmem_alloc(s->c, ch.length ? ch.length : 4, NULL);
	if (!*mem)
		return NULL;
	p = rt_lmem_addr(*mem);
	for (i = 0; i < ch.nsegs; i++) {
		const struct rw_segment *seg = &rx->hdr.reads[ch.first + i].seg;

		ck = cookies++;
		sge = rt_lmem_sge(*mem, p + off, seg->length);
		if (rt_post_read(s->c, &sge, 1, seg, ck, RT_WR_SIGNAL, NULL) ||
		    wait_cookie(s, ck))
			return NULL;
		off += seg->length;
	}
	*len = ch.length;
	return p;
}

static void serve_rpc(struct s_conn *s, const struct rw_rx_call *rx, void *pay,
		      uint32_t len)
{
	char cred[MAX_AUTH_BYTES], verf[MAX_AUTH_BYTES];
	union s_args a;
	union s_res r;
	struct rpc_msg m;
	struct s_proc p;
	XDR x;

	memset(&m, 0, sizeof(m));
	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	m.rm_call.cb_cred.oa_base = cred;
	m.rm_call.cb_verf.oa_base = verf;
	xdrmem_create(&x, pay, len, XDR_DECODE);
	if (!xdr_callmsg(&x, &m) || m.rm_direction != CALL) {
		reply_error(s, rx, false);
		return;
	}
	stats.calls++;
	if (!hook_first(s, rx, m.rm_call.cb_proc))
		return;
	p = proc_of(m.rm_call.cb_proc);
	if (m.rm_call.cb_proc < T_PROC_ERR_CHUNK && !p.xargs(&x, &a)) {
		reply_error(s, rx, false);
		return;
	}
	run_proc(m.rm_call.cb_proc, &a, &r);
	send_reply(s, rx, m.rm_xid, p.xres, &r,
		   m.rm_call.cb_proc == T_PROC_LONG_REPLY);
	if (m.rm_call.cb_proc == RTEST_FILL)
		free(r.data.rtest_data_val);
	xdr_free(p.xargs, (char *)&a);
}

/* RDMA_MSG and RDMA_NOMSG carry Calls; the v2 property messages that
 * rw_recv_call() also accepts (CONNPROP, UPDPROP, REQPROP) do not. */
static bool is_call(const struct rw_hdr *h)
{
	return h->proc == RW_MSG || h->proc == RW_NOMSG;
}

static void serve_recv(struct s_conn *s, const struct rt_event *ev)
{
	struct rw_rx_call rx;
	struct rt_lmem *mem = NULL;
	enum rw_reason why;
	uint32_t len = 0;
	void *pay;

	why = rw_recv_call(ev->data, ev->len, &rx, &hsp);
	if (why == RW_R_BAD_VERS && drop_v2) {
		rt_conn_disconnect(s->c);
		s->dead = true;
	} else if (why != RW_R_OK) {
		/* ERR_VERS for a version it does not speak (V1-ERR-6,
		 * V2-NEG-4) */
		reply_error(s, &rx, why == RW_R_BAD_VERS);
	} else if (is_call(&rx.hdr)) {
		pay = call_payload(s, &rx, ev, &len, &mem);
		if (pay)
			serve_rpc(s, &rx, pay, len);
		else
			reply_error(s, &rx, false);
	}
	/* Otherwise a v2 property message: one-way, never answered
	 * (AMB-V2-6).  It has no chunk lists (rw_hdr_decode() clears their
	 * counts; before it did, this fake read an earlier Call's PZRC here,
	 * memory the client had fenced already). */
	if (mem)
		rt_lmem_free(s->c, mem);
	rt_recv_repost(s->c, ev->rbuf);
	note_inflight(s, -1);
}

static void serve_conn(struct s_conn *s)
{
	struct rt_event ev[16];
	unsigned int i;
	int n;

	while (s->nstash && !s->dead) {
		struct rt_event e = s->stash[0];

		memmove(s->stash, s->stash + 1, --s->nstash * sizeof(e));
		serve_recv(s, &e);
	}
	n = rt_conn_poll(s->c, ev, 16, 0);
	for (i = 0; n > 0 && i < (unsigned int)n; i++) {
		if (ev[i].type == RT_EV_DEAD)
			s->dead = true;
		if (ev[i].type == RT_EV_RECV)
			note_inflight(s, 1);
	}
	for (i = 0; n > 0 && i < (unsigned int)n; i++)
		if (ev[i].type == RT_EV_RECV && !s->dead)
			serve_recv(s, &ev[i]);
	if (n < 0)
		s->dead = true;
}

/* ---- Main loop ------------------------------------------------------------- */

static struct rt_listener *listen_on(const char *host, uint16_t port,
				     unsigned int credits)
{
	struct sockaddr_storage ss;
	struct rt_conn_attr a;
	struct rt_err err;
	struct rt_listener *l;

	rt_conn_attr_init(&a);
	a.credits = credits;
	t_sockaddr(&ss, host, port);
	l = rt_listen((struct sockaddr *)&ss, 16, &a, &err);
	if (!l)
		fprintf(stderr, "t_clnt_server: %s\n", err.msg);
	return l;
}

static void add_conns(struct rt_listener *l)
{
	struct rt_conn *nc[8];
	int n, i, j;

	n = rt_listener_process(l, nc, 8, NULL);
	for (i = 0; i < n; i++) {
		for (j = 0; j < S_MAX_CONNS && conns[j]; j++)
			;
		if (j == S_MAX_CONNS) {
			rt_conn_destroy(nc[i]);
			continue;
		}
		conns[j] = calloc(1, sizeof(*conns[j]));
		conns[j]->c = nc[i];
		stats.conns++;
	}
}

static void reap_conns(void)
{
	int j;

	for (j = 0; j < S_MAX_CONNS; j++) {
		if (conns[j] && conns[j]->dead) {
			rt_conn_destroy(conns[j]->c);
			free(conns[j]);
			conns[j] = NULL;
		}
	}
}

static void wait_any(struct rt_listener **ls, int nl)
{
	struct pollfd pfd[S_MAX_CONNS + 2];
	int n = 0, j;

	for (j = 0; j < nl; j++)
		pfd[n++] = (struct pollfd){ rt_listener_fd(ls[j]), POLLIN, 0 };
	for (j = 0; j < S_MAX_CONNS; j++)
		if (conns[j])
			pfd[n++] = (struct pollfd){ rt_conn_fd(conns[j]->c),
						    POLLIN, 0 };
	poll(pfd, (nfds_t)n, 100);
}

int t_clnt_serve(uint16_t port, unsigned int credits)
{
	struct rt_listener *ls[2];
	int nl = 0, j;

	prctl(PR_SET_PDEATHSIG, SIGTERM);
	signal(SIGTERM, on_term);
	/* both versions, each Call answered in its own (V2-NEG-7) */
	drop_v2 = getenv("T_CLNT_FAKE_DROP_V2") != NULL;
	rw_hdr_space_init(&hsp, drop_v2 ? NULL : &rw_v2_limits);
	ls[nl] = listen_on(t_addr4(), port, credits);
	nl += ls[nl] != NULL;
	ls[nl] = listen_on(t_addr6(), port, credits);
	nl += ls[nl] != NULL;
	if (nl != 2)
		return 1;
	while (!stop) {
		wait_any(ls, nl);
		for (j = 0; j < nl; j++)
			add_conns(ls[j]);
		for (j = 0; j < S_MAX_CONNS; j++)
			if (conns[j])
				serve_conn(conns[j]);
		reap_conns();
	}
	for (j = 0; j < S_MAX_CONNS; j++)
		if (conns[j])
			conns[j]->dead = true;
	reap_conns();
	for (j = 0; j < nl; j++)
		rt_listener_destroy(ls[j]);
	return 0;
}
