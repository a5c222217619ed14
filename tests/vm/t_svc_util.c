/*
 * t_svc_util.c - helpers of the server-side VM tests (t_svc_util.h): check
 * lines, the rtest_server process, and the raw RPC-over-RDMA client.
 *
 * The raw client speaks RPC-over-RDMA v1 through the wire layer: it encodes
 * the RPC call with the reducing XDR stream (so a body item can be moved
 * into a Read chunk at its real position), exposes chunk memory with
 * rt_reg, builds the transport header with rw_encode_call, and decodes the
 * server's answer with rw_hdr_decode and xdr_replymsg.  Negative tests send
 * hand-made bytes with tc_send.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/vm/t_svc_util.h"
#include "wire/rw_xdr.h"

/* ---- Checks ------------------------------------------------------------ */

bool ts_have_rdma(void)
{
	int n = 0;
	struct ibv_device **l = ibv_get_device_list(&n);

	if (l)
		ibv_free_device_list(l);
	if (n > 0)
		return true;
	printf("SKIP: no RDMA device (run it in the VM: tests/vm/run)\n");
	return false;
}

const char *ts_addr4(void)
{
	const char *a = getenv("RDMA_ADDR4");

	return a ? a : "192.0.2.1";
}

const char *ts_addr6(void)
{
	const char *a = getenv("RDMA_ADDR6");

	return a ? a : "2001:db8::1";
}

uint32_t tc_be(uint32_t v)
{
	return htonl(v);
}

/* ---- The server process ------------------------------------------------- */

static const char *server_path(char *buf, size_t len)
{
	const char *e = getenv("RTEST_SERVER");
	char self[PATH_MAX], *dir;
	ssize_t n;

	if (e)
		return e;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return "rtest_server";
	self[n] = 0;
	dir = dirname(self);
	snprintf(buf, len, "%s/rtest_server", dir);
	if (access(buf, X_OK)) /* we may be libtool's .libs/lt-* */
		snprintf(buf, len, "%s/../rtest_server", dir);
	return buf;
}

static void server_exec(const char *host, const char *const *args, int out)
{
	const char *argv[32];
	char path[PATH_MAX];
	int n = 0;

	dup2(out, 1);
	tu_server_env();
	argv[n++] = server_path(path, sizeof(path));
	argv[n++] = "-a";
	argv[n++] = host;
	argv[n++] = "-p";
	argv[n++] = "0";
	while (args && *args && n < 31)
		argv[n++] = *args++;
	argv[n] = NULL;
	execv(argv[0], (char *const *)argv);
	fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* Read the "listening on ADDR port N" line within the deadline. */
static int read_banner(struct ts_server *s, int timeout_ms)
{
	int64_t deadline = ts_now_ms() + timeout_ms;
	char line[256], host[64];
	size_t got = 0;
	unsigned int port;
	ssize_t n;

	while (got < sizeof(line) - 1) {
		struct pollfd p = { .fd = s->out, .events = POLLIN };
		int64_t left = deadline - ts_now_ms();

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return -1;
		n = read(s->out, line + got, 1);
		if (n <= 0)
			return -1;
		if (line[got++] == '\n')
			break;
	}
	line[got] = 0;
	if (sscanf(line, "listening on %63s port %u", host, &port) != 2)
		return -1;
	s->port = (uint16_t)port;
	return 0;
}

int ts_server_start(struct ts_server *s, const char *host,
		    const char *const *args)
{
	int p[2];

	memset(s, 0, sizeof(*s));
	snprintf(s->host, sizeof(s->host), "%s", host);
	if (pipe(p))
		return -1;
	fflush(stdout);
	s->pid = fork();
	if (s->pid < 0)
		return -1;
	if (s->pid == 0) {
		close(p[0]);
		server_exec(host, args, p[1]);
	}
	close(p[1]);
	s->out = p[0];
	if (read_banner(s, 60000)) {
		ts_server_stop(s);
		return -1;
	}
	return 0;
}

int ts_server_stop(struct ts_server *s)
{
	int64_t deadline = ts_now_ms() + 30000;
	int st = 0;
	pid_t r;

	if (s->pid <= 0)
		return -1;
	kill(s->pid, SIGTERM);
	while ((r = waitpid(s->pid, &st, WNOHANG)) == 0 &&
	       ts_now_ms() < deadline)
		usleep(10000);
	if (r == 0) {
		kill(s->pid, SIGKILL);
		waitpid(s->pid, &st, 0);
		st = -1;
	}
	close(s->out);
	s->pid = 0;
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

long ts_proc_kb(pid_t pid, const char *field)
{
	char path[64], line[256];
	size_t fl = strlen(field);
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, fl) && line[fl] == ':')
			v = strtol(line + fl + 1, NULL, 10);
	fclose(f);
	return v;
}

int ts_proc_fds(pid_t pid)
{
	struct dirent *e;
	char path[64];
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%ld/fd", (long)pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* ---- Raw client: connection ---------------------------------------------- */

static void make_addr(struct sockaddr_storage *ss, const char *host,
		      uint16_t port)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (strchr(host, ':')) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		inet_pton(AF_INET6, host, &s6->sin6_addr);
	} else {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		inet_pton(AF_INET, host, &s4->sin_addr);
	}
}

int tc_connect(struct tc *t, const struct ts_server *s, int timeout_ms)
{
	int64_t deadline = ts_now_ms() + timeout_ms;
	struct sockaddr_storage ss;
	struct rt_conn_attr a;
	struct rt_err err;

	memset(t, 0, sizeof(*t));
	make_addr(&ss, s->host, s->port);
	rt_conn_attr_init(&a);
	a.credits = 32;
	a.timeout_ms = 5000;
	for (;;) {
		t->c = rt_connect((struct sockaddr *)&ss, &a, &err);
		if (t->c)
			break;
		if (err.code != ECONNREFUSED || ts_now_ms() > deadline) {
			NOTE("connect to %s port %u: %s", s->host, s->port,
			     err.msg);
			return -err.code;
		}
		usleep(100000);
	}
	t->rs = rt_regset_create(t->c, &err);
	t->xid = (uint32_t)ts_now_us() * 2654435761u;
	t->grant = 1;
	return t->rs ? 0 : -ENOMEM;
}

void tc_close(struct tc *t)
{
	if (t->rs)
		rt_regset_destroy(t->rs);
	if (t->c)
		rt_conn_destroy(t->c);
	memset(t, 0, sizeof(*t));
}

bool tc_dead(struct tc *t)
{
	struct rt_event ev;

	/* collect what is pending so a death is noticed */
	while (rt_conn_poll(t->c, &ev, 1, 0) > 0)
		if (ev.type == RT_EV_RECV)
			rt_recv_repost(t->c, ev.rbuf);
	return rt_conn_state(t->c) == RT_CONN_DEAD;
}

int tc_wait_dead(struct tc *t, int timeout_ms)
{
	int64_t start = ts_now_ms();

	while (ts_now_ms() - start < timeout_ms) {
		if (tc_dead(t))
			return (int)(ts_now_ms() - start);
		usleep(10000);
	}
	return -1;
}

/* TIRPC_RDMA_TEST_DEBUG=1: the first words of every message sent and received. */
static void dump(const char *what, const void *p, uint32_t len)
{
	const uint8_t *b = p;
	uint32_t i;

	printf("# %s %u:", what, len);
	for (i = 0; i + 4 <= len && i < 96; i += 4)
		printf(" %02x%02x%02x%02x", b[i], b[i + 1], b[i + 2], b[i + 3]);
	printf("\n");
}

int tc_send(struct tc *t, const void *msg, uint32_t len)
{
	int64_t deadline = ts_now_ms() + TS_TIMEOUT_MS;
	struct rt_sbuf *b;
	struct rt_err err;

	/* rt_sbuf_get() reaps Send completions itself; polling here would
	 * swallow Receive events. */
	while (!(b = rt_sbuf_get(t->c, &err))) {
		if (err.code != EAGAIN || ts_now_ms() > deadline)
			return -1;
		usleep(100);
	}
	if (len > rt_sbuf_size(b)) {
		rt_sbuf_put(t->c, b);
		return -1;
	}
	memcpy(rt_sbuf_data(b), msg, len);
	if (getenv("TIRPC_RDMA_TEST_DEBUG"))
		dump("send", msg, len);
	return rt_post_send(t->c, b, len, NULL, 0, 0, 0, 0, &err) ? -1 : 0;
}

int tc_recv(struct tc *t, void *buf, uint32_t cap, int timeout_ms)
{
	int64_t deadline = ts_now_ms() + timeout_ms, left;
	struct rt_event ev;
	int n;

	for (;;) {
		left = deadline - ts_now_ms();
		n = rt_conn_poll(t->c, &ev, 1, left > 0 ? (int)left : 0);
		if (n < 0)
			return -ENOTCONN;
		if (n == 0) {
			if (left <= 0)
				return -ETIMEDOUT;
			continue;
		}
		if (ev.type == RT_EV_DEAD)
			return -ENOTCONN;
		if (ev.type != RT_EV_RECV)
			continue;
		memcpy(buf, ev.data, ev.len < cap ? ev.len : cap);
		n = (int)ev.len;
		if (getenv("TIRPC_RDMA_TEST_DEBUG"))
			dump("recv", ev.data, ev.len);
		if (t->on_recv)
			t->on_recv(t->on_recv_arg, ev.data, ev.len);
		rt_recv_repost(t->c, ev.rbuf);
		return n;
	}
}

/* ---- Raw client: RPC ------------------------------------------------------ */

/* The RPC call message (header, AUTH, arguments) through the reducing
 * stream; items moved per pol.  Its reduced length, or 0. */
static uint32_t encode_call(const struct tc_call *k, uint32_t xid,
			    const struct rw_ddp_policy *pol, void *buf,
			    size_t cap, struct rw_ddp_item *items,
			    unsigned int *nitems)
{
	AUTH *auth = k->auth ? k->auth : authnone_create();
	struct rw_rxdr x;
	struct rpc_msg m;
	uint32_t proc = k->proc;
	bool ok;

	memset(&m, 0, sizeof(m));
	m.rm_xid = xid;
	m.rm_direction = CALL;
	m.rm_call.cb_rpcvers = RPC_MSG_VERSION;
	m.rm_call.cb_prog = k->prog ? k->prog : 0x20005243;
	m.rm_call.cb_vers = k->vers ? k->vers : 1;
	rw_rxdr_create(&x, buf, cap, pol, items, 4);
	ok = xdr_callhdr(&x.xdr, &m) && xdr_u_int32_t(&x.xdr, &proc) &&
	     AUTH_MARSHALL(auth, &x.xdr) && rw_xdr_begin_body(&x.xdr) &&
	     (!k->xargs || k->xargs(&x.xdr, k->args));
	if (!ok || rw_rxdr_finish(&x) != RW_XERR_OK)
		return 0;
	*nitems = rw_rxdr_nitems(&x);
	return rw_rxdr_reduced_len(&x);
}

uint32_t tc_short_call(struct tc *t, uint32_t xid, uint32_t proc,
		       xdrproc_t xargs, void *args, void *buf, uint32_t cap)
{
	struct tc_call k = { .proc = proc, .xargs = xargs, .args = args };
	struct rw_ddp_item items[4];
	unsigned int n = 0;
	struct rw_hdr h;
	size_t hl;
	uint32_t pl;

	rw_hdr_init(&h, RW_VERS_1, RW_MSG, xid, 32);
	hl = rw_encode_call(&h, buf, cap);
	if (!hl)
		return 0;
	pl = encode_call(&k, xid, NULL, (uint8_t *)buf + hl, cap - hl, items,
			 &n);
	return pl ? (uint32_t)(hl + pl) : 0;
}

static void decode_rpc(const void *pay, uint32_t len, xdrproc_t xres, void *res,
		       struct tc_reply *rep)
{
	struct rpc_msg r;
	XDR x;

	memset(&r, 0, sizeof(r));
	r.acpted_rply.ar_verf = _null_auth;
	r.acpted_rply.ar_results.where = res;
	r.acpted_rply.ar_results.proc =
		xres ? xres : (xdrproc_t)(void (*)(void))xdr_void;
	xdrmem_create(&x, (char *)pay, len, XDR_DECODE);
	rep->payload_len = len;
	rep->res_ok = xdr_replymsg(&x, &r);
	rep->rpc = rep->res_ok || r.rm_direction == REPLY;
	rep->rpc_xid = r.rm_xid;
	rep->rp_stat = r.rm_reply.rp_stat;
	rep->ar_stat =
		r.rm_reply.rp_stat == MSG_ACCEPTED ? r.acpted_rply.ar_stat : 0;
	xdr_destroy(&x);
}

static void decode_hdr(const void *raw, uint32_t len, struct tc_reply *rep)
{
	struct rw_limits lim = rw_default_limits;

	lim.vers_high = RW_VERS_2;
	if (raw != rep->raw)
		memcpy(rep->raw, raw,
		       len < sizeof(rep->raw) ? len : sizeof(rep->raw));
	rep->len = len;
	rw_hdr_space_init(&rep->sp, &lim);
	rep->why =
		rw_hdr_decode(rep->raw,
			      len < sizeof(rep->raw) ? len : sizeof(rep->raw),
			      &rep->h, &rep->sp);
	rep->rpc = false;
	rep->guard_ok = true;
}

void tc_decode(const void *raw, uint32_t len, xdrproc_t xres, void *res,
	       struct tc_reply *rep)
{
	decode_hdr(raw, len, rep);
	if (!rep->why && rep->h.proc == RW_MSG)
		decode_rpc(rep->raw + rep->h.hdr_len, rep->len - rep->h.hdr_len,
			   xres, res, rep);
}

/* Chunk memory of one call. */
struct tc_bufs {
	uint8_t *pay;
	uint8_t *reply;
	uint8_t *write;
	struct rw_read_seg reads[16];
	struct rw_segment pz[4], item[4][2], rseg[4], wseg[16];
	struct rw_chunk wch[1];
};

static int expose(struct tc *t, void *p, size_t len, enum rt_access acc,
		  struct rw_segment *segs, unsigned int max)
{
	struct rt_err err;
	int n = rt_reg_expose(t->rs, p, len, acc, segs, max, &err);

	if (n < 0)
		NOTE("expose %zu octets: %s", len, err.msg);
	return n;
}

/* One moved item as a Read chunk of one segment, or of two halves for
 * TC_READS_INTERLEAVED. */
static int add_item(struct tc *t, const struct tc_call *k,
		    struct rw_read_builder *rb, const struct rw_ddp_item *it,
		    struct rw_segment *segs)
{
	uint32_t len = it->len, half = 0;
	uint8_t *p = (uint8_t *)it->data;

	if (k->read_item_pad)
		len = (uint32_t)rw_roundup4(len);
	if (k->read_order == TC_READS_INTERLEAVED) {
		half = len / 2;
		if (!half || expose(t, p, half, RT_REMOTE_READ, segs, 1) != 1)
			return -1;
	}
	if (expose(t, p + half, len - half, RT_REMOTE_READ, segs + !!half, 1) !=
	    1)
		return -1;
	return rw_read_builder_add(rb, it->position, segs, 1 + !!half) ? -1 : 0;
}

/* Reorder a list the builder made in ascending order, chunks of nseg
 * segments each after the first skip entries (the PZRC). */
static void misorder(struct rw_read_seg *r, uint32_t n, uint32_t skip,
		     enum tc_reads order)
{
	struct rw_read_seg tmp[16];
	uint32_t i, nch = (n - skip) / 2;

	r += skip;
	n -= skip;
	memcpy(tmp, r, n * sizeof(*r));
	if (order == TC_READS_REVERSED) {
		for (i = 0; i < n; i++)
			r[i] = tmp[n - 1 - i];
	} else if (order == TC_READS_INTERLEAVED) {
		for (i = 0; i < nch; i++) { /* a1 a2 b1 b2 -> a1 b1 a2 b2 */
			r[i] = tmp[2 * i];
			r[nch + i] = tmp[2 * i + 1];
		}
	} else if (order == TC_READS_OVERLAP && n >= 2) {
		r[n - 1].position = r[0].position + 4;
	}
}

/* Read list: the PZRC and/or the moved items. */
static int add_reads(struct tc *t, const struct tc_call *k, struct tc_bufs *b,
		     uint32_t plen, const struct rw_ddp_item *items,
		     unsigned int nitems, struct rw_hdr *h)
{
	struct rw_read_builder rb;
	uint32_t skip;
	unsigned int i;
	int n;

	rw_read_builder_init(&rb, b->reads, 16);
	if (k->long_call) {
		n = expose(t, b->pay, plen, RT_REMOTE_READ, b->pz, 4);
		if (n < 0 || rw_read_builder_add(&rb, 0, b->pz, (uint32_t)n))
			return -1;
	}
	skip = rb.n;
	for (i = 0; k->read_item && i < nitems && i < 4; i++)
		if (add_item(t, k, &rb, &items[i], b->item[i]))
			return -1;
	if (k->read_order != TC_READS_ASCENDING)
		misorder(b->reads, rb.n, skip, k->read_order);
	rw_hdr_set_reads(h, &rb);
	return 0;
}

static int add_writes(struct tc *t, const struct tc_call *k, struct tc_bufs *b,
		      struct rw_hdr *h)
{
	struct rw_write_builder wb;
	uint32_t i;
	int n;

	if (k->reply_chunk) {
		b->reply = calloc(1, k->reply_chunk + k->reply_guard);
		if (!b->reply)
			return -1;
		memset(b->reply + k->reply_chunk, 0xa5, k->reply_guard);
		n = expose(t, b->reply, k->reply_chunk, RT_REMOTE_WRITE,
			   b->rseg, 4);
		if (n < 0 || rw_hdr_set_reply(h, b->rseg, (uint32_t)n))
			return -1;
	}
	if (!k->write_segs || k->write_segs > 16)
		return 0;
	b->write = calloc(k->write_segs, k->write_seg_len);
	if (!b->write)
		return -1;
	for (i = 0; i < k->write_segs; i++)
		if (expose(t, b->write + (size_t)i * k->write_seg_len,
			   k->write_seg_len, RT_REMOTE_WRITE, &b->wseg[i],
			   1) != 1)
			return -1;
	rw_write_builder_init(&wb, b->wch, 1);
	if (rw_write_builder_add(&wb, b->wseg, k->write_segs))
		return -1;
	rw_hdr_set_writes(h, &wb);
	return 0;
}

/* Wait for the answer to xid (others are dropped). */
static int wait_answer(struct tc *t, uint32_t xid, struct tc_reply *rep,
		       int timeout_ms)
{
	int64_t deadline = ts_now_ms() + timeout_ms;
	uint8_t *buf = rep->raw;
	int n;

	for (;;) {
		n = tc_recv(t, buf, sizeof(rep->raw),
			    (int)(deadline - ts_now_ms()));
		if (n < 0)
			return n;
		decode_hdr(buf, (uint32_t)n, rep);
		if (rep->len >= 4 && rep->h.xid == xid)
			return 0;
	}
}

/* wait_answer(), in slices of 5 ms, ending the connection when
 * k->drop_when() says so. */
static int wait_or_drop(struct tc *t, const struct tc_call *k, uint32_t xid,
			struct tc_reply *rep, int timeout_ms)
{
	int64_t deadline = ts_now_ms() + timeout_ms;
	int ret;

	do {
		ret = wait_answer(t, xid, rep, 5);
		if (ret != -ETIMEDOUT)
			return ret;
		if (k->drop_when(k->drop_arg)) {
			rt_conn_disconnect(t->c);
			return -ECONNABORTED;
		}
	} while (ts_now_ms() < deadline);
	return -ETIMEDOUT;
}

static void decode_answer(const struct tc_call *k, struct tc_bufs *b,
			  xdrproc_t xres, void *res, struct tc_reply *rep)
{
	uint32_t len = 0, i;
	size_t g;

	memcpy(rep->offered_w, b->wseg, sizeof(rep->offered_w));
	memcpy(rep->offered_r, b->rseg, sizeof(rep->offered_r));
	if (rep->why)
		return;
	if (rep->h.proc == RW_MSG) {
		decode_rpc(rep->raw + rep->h.hdr_len, rep->len - rep->h.hdr_len,
			   xres, res, rep);
	} else if (rep->h.proc == RW_NOMSG && rep->h.has_reply && b->reply) {
		for (i = 0; i < rep->h.reply.nsegs; i++)
			len += rep->h.reply.segs[i].length;
		if (len <= k->reply_chunk)
			decode_rpc(b->reply, len, xres, res, rep);
	}
	for (g = 0; b->reply && g < k->reply_guard; g++)
		if (b->reply[k->reply_chunk + g] != 0xa5)
			rep->guard_ok = false;
}

int tc_rpc(struct tc *t, const struct tc_call *k, xdrproc_t xres, void *res,
	   struct tc_reply *rep, int timeout_ms)
{
	struct rw_ddp_policy pol = { .mode = RW_DDP_ITEMS,
				     .mask = k->read_mask ? k->read_mask :
							    RW_DDP_ITEM(0),
				     .max_chunks = 4 };
	uint32_t xid = k->xid ? k->xid : ++t->xid, plen;
	struct rw_ddp_item items[4];
	struct tc_bufs b;
	unsigned int nitems = 0;
	uint8_t msg[4096];
	struct rw_hdr h;
	struct rt_err err;
	size_t cap, hl;
	int ret = -EINVAL;

	rep->len = 0;
	rep->why = RW_R_RUNT;
	rep->rpc = false;
	rep->res_ok = false;
	memset(&b, 0, sizeof(b));
	cap = (k->xargs ? xdr_sizeof(k->xargs, k->args) : 0) + 2048;
	b.pay = malloc(cap);
	if (!b.pay)
		goto out;
	plen = encode_call(k, k->payload_xid ? k->payload_xid : xid,
			   k->read_item ? &pol : NULL, b.pay, cap, items,
			   &nitems);
	if (!plen)
		goto out;
	rw_hdr_init(&h, k->rdma_vers ? k->rdma_vers : RW_VERS_1,
		    k->long_call ? RW_NOMSG : RW_MSG, xid,
		    k->credit ? k->credit : 32);
	h.direction = RW_DIR_CALL;
	if (add_reads(t, k, &b, plen, items, nitems, &h) ||
	    add_writes(t, k, &b, &h))
		goto out;
	if (h.vers == RW_VERS_2)
		h.inv_handle = k->inv_handle != TC_INV_REPLY ? k->inv_handle :
			       h.has_reply ? h.reply.segs[0].handle :
					     0;
	/* rw_encode_call() refuses what a requester must not send (a Read
	 * list out of order, a foreign inv_handle, AMB-V2-14): this client
	 * exists to send those too */
	hl = k->read_order ? 0 : rw_encode_call(&h, msg, sizeof(msg));
	if (!hl)
		hl = rw_hdr_encode(&h, msg, sizeof(msg));
	if (!hl || (!k->long_call && hl + plen > sizeof(msg)))
		goto out;
	if (!k->long_call)
		memcpy(msg + hl, b.pay, plen);
	if (tc_send(t, msg, (uint32_t)(k->long_call ? hl : hl + plen)))
		goto out;
	if (k->die) {
		if (k->die_after_us > 0)
			usleep((useconds_t)k->die_after_us);
		raise(SIGKILL);
	}
	ret = k->drop_when ? wait_or_drop(t, k, xid, rep, timeout_ms) :
			     wait_answer(t, xid, rep, timeout_ms);
	if (!ret) {
		if (rep->h.credit)
			t->grant = rep->h.credit;
		decode_answer(k, &b, xres, res, rep);
	}
out:
	rt_reg_revoke(t->rs, &err);
	free(b.pay);
	free(b.reply);
	free(b.write);
	return ret;
}
