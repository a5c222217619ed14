/*
 * t_fence.c - fencing of the CLIENT's chunk memory (V1-MR-2..7, V1-ERR-12,
 * RFC 8166 §4.4) against a deliberately misbehaving peer written with raw
 * verbs and rdma_cm (a thread of this process, nothing of librpcrdma).
 *
 * The peer accepts the CLIENT's connection, answers its Call correctly -
 * inline, through the Reply chunk, after pulling a Long Call's PZRC, or
 * late, after the caller gave up - but keeps the handles the Call
 * advertised.  Once clnt_call() has returned, it tries to use them again:
 * an RDMA Write into the Reply chunk, an RDMA Read of the PZRC.  Each
 * attempt must fail with a remote access error on a connection that is
 * still up (a connection gone would prove nothing about the fence), and the
 * client's memory at the advertised address must be what it was before the
 * attempt.  What is attacked must have been offered by that very Call: each
 * scenario checks that first.  Every scenario runs in both registration
 * modes.
 *
 * One line per check; exit 1 if any failed, 77 (skip) without a device.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <pthread.h>
#include <rdma/rdma_cma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "rtest.h"
#include "tests/vm/t_clnt_util.h"
#include "wire/rw_chunk.h"
#include "wire/rw_hdr.h"

#define F_PORT	  (T_PORT + 2)
#define F_NRECV	  16
#define F_BUF	  4096
#define F_WORK	  (1u << 20)
#define F_WAIT_MS 10000
#define F_ATTACK  4096

enum f_serve {
	F_SHORT, /* reply inline */
	F_LONG,	 /* reply through the Reply chunk */
	F_NONE,	 /* keep the reply for F_LATE */
};

/* The peer: one connection at a time, driven by the test thread. */
struct f_peer {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *lid;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *rmr, *smr, *wmr;
	uint8_t *rbuf, *sbuf, *work;
	/* what the last Call offered */
	bool has_reply, has_pzrc;
	struct rw_segment reply_seg, pzrc_seg;
	/* a reply kept back (F_NONE) */
	uint8_t late[F_BUF];
	uint32_t late_len;
};

static struct f_peer peer;

/* ---- Verbs helpers --------------------------------------------------------- */

static int cm_wait(struct rdma_event_channel *ch, enum rdma_cm_event_type want,
		   struct rdma_cm_event **out)
{
	int64_t deadline = t_ms() + F_WAIT_MS;
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	while (t_ms() < deadline) {
		if (rdma_get_cm_event(ch, &ev)) {
			poll(&pfd, 1, 100);
			continue;
		}
		if (ev->event == want) {
			if (out) {
				*out = ev;
				return 0;
			}
			rdma_ack_cm_event(ev);
			return 0;
		}
		rdma_ack_cm_event(ev);
	}
	return -1;
}

/* Next completion of the given kind (Receive or not); -1 on timeout. */
static int cq_wait(struct ibv_wc *wc, bool recv)
{
	int64_t deadline = t_ms() + F_WAIT_MS;

	while (t_ms() < deadline) {
		int n = ibv_poll_cq(peer.cq, 1, wc);

		if (n < 0)
			return -1;
		if (n == 0) {
			usleep(500);
			continue;
		}
		if (wc->status != IBV_WC_SUCCESS)
			return 0; /* caller looks at the status */
		if (((wc->opcode & IBV_WC_RECV) != 0) == recv)
			return 0;
	}
	return -1;
}

static int post_recv(unsigned int i)
{
	struct ibv_sge sge = { (uintptr_t)(peer.rbuf + i * F_BUF), F_BUF,
			       peer.rmr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(peer.id->qp, &wr, &bad);
}

/* RDMA Read or Write between work memory and a peer segment, signalled;
 * returns the completion status, or -1 if none came. */
static int rdma_op(enum ibv_wr_opcode op, const struct rw_segment *seg,
		   uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)peer.work, len, peer.wmr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	struct ibv_wc wc;

	wr.wr.rdma.remote_addr = seg->offset;
	wr.wr.rdma.rkey = seg->handle;
	if (ibv_post_send(peer.id->qp, &wr, &bad))
		return -1;
	if (cq_wait(&wc, false))
		return -1;
	return wc.status;
}

static int send_msg(uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)peer.sbuf, len, peer.smr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	struct ibv_wc wc;

	if (ibv_post_send(peer.id->qp, &wr, &bad) || cq_wait(&wc, false))
		return -1;
	return wc.status == IBV_WC_SUCCESS ? 0 : -1;
}

/* ---- Connection ------------------------------------------------------------ */

static int peer_listen(void)
{
	struct sockaddr_storage ss;

	peer.ch = rdma_create_event_channel();
	if (!peer.ch || rdma_create_id(peer.ch, &peer.lid, NULL, RDMA_PS_TCP))
		return -1;
	fcntl(peer.ch->fd, F_SETFL, fcntl(peer.ch->fd, F_GETFL) | O_NONBLOCK);
	t_sockaddr(&ss, t_addr4(), F_PORT);
	if (rdma_bind_addr(peer.lid, (struct sockaddr *)&ss) ||
	    rdma_listen(peer.lid, 4))
		return -1;
	return 0;
}

static int peer_resources(void)
{
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC };
	unsigned int i;

	peer.pd = ibv_alloc_pd(peer.id->verbs);
	peer.cq = peer.pd ? ibv_create_cq(peer.id->verbs, 64, NULL, NULL, 0) :
			    NULL;
	if (!peer.cq)
		return -1;
	qa.send_cq = peer.cq;
	qa.recv_cq = peer.cq;
	qa.cap.max_send_wr = 32;
	qa.cap.max_recv_wr = F_NRECV;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(peer.id, peer.pd, &qa))
		return -1;
	peer.rbuf = calloc(F_NRECV, F_BUF);
	peer.sbuf = calloc(1, F_BUF);
	peer.work = calloc(1, F_WORK);
	peer.rmr = ibv_reg_mr(peer.pd, peer.rbuf, F_NRECV * F_BUF,
			      IBV_ACCESS_LOCAL_WRITE);
	peer.smr = ibv_reg_mr(peer.pd, peer.sbuf, F_BUF, 0);
	peer.wmr =
		ibv_reg_mr(peer.pd, peer.work, F_WORK, IBV_ACCESS_LOCAL_WRITE);
	if (!peer.rmr || !peer.smr || !peer.wmr)
		return -1;
	for (i = 0; i < F_NRECV; i++)
		if (post_recv(i))
			return -1;
	return 0;
}

/* Accept the next connection (no RFC 8797 private data: v1 defaults). */
static int peer_accept(void)
{
	struct rdma_conn_param p = { .responder_resources = 4,
				     .initiator_depth = 4,
				     .retry_count = 3 };
	struct rdma_cm_event *ev;

	if (cm_wait(peer.ch, RDMA_CM_EVENT_CONNECT_REQUEST, &ev))
		return -1;
	peer.id = ev->id;
	rdma_ack_cm_event(ev);
	if (peer_resources() || rdma_accept(peer.id, &p))
		return -1;
	return cm_wait(peer.ch, RDMA_CM_EVENT_ESTABLISHED, NULL);
}

static void peer_close(void)
{
	if (!peer.id)
		return;
	rdma_disconnect(peer.id);
	rdma_destroy_qp(peer.id);
	ibv_dereg_mr(peer.rmr);
	ibv_dereg_mr(peer.smr);
	ibv_dereg_mr(peer.wmr);
	ibv_destroy_cq(peer.cq);
	ibv_dealloc_pd(peer.pd);
	rdma_destroy_id(peer.id);
	free(peer.rbuf);
	free(peer.sbuf);
	free(peer.work);
	peer.id = NULL;
}

/* ---- Serving one Call ------------------------------------------------------- */

/* The RPC reply to xid: accepted, with results encoded by xres. */
static uint32_t rpc_reply(uint8_t *buf, uint32_t cap, uint32_t xid,
			  xdrproc_t xres, void *res)
{
	struct rpc_msg m;
	XDR x;

	memset(&m, 0, sizeof(m));
	m.rm_xid = xid;
	m.rm_direction = REPLY;
	m.rm_reply.rp_stat = MSG_ACCEPTED;
	m.acpted_rply.ar_verf = _null_auth;
	m.acpted_rply.ar_stat = SUCCESS;
	m.acpted_rply.ar_results.where = res;
	m.acpted_rply.ar_results.proc = xres;
	xdrmem_create(&x, (char *)buf, cap, XDR_ENCODE);
	return xdr_replymsg(&x, &m) ? xdr_getpos(&x) : 0;
}

/* Keep the handles the Call advertised. */
static void loot(const struct rw_hdr *h)
{
	peer.has_reply = h->has_reply && h->reply.nsegs;
	if (peer.has_reply)
		peer.reply_seg = h->reply.segs[0];
	peer.has_pzrc = h->nreads > 0;
	if (peer.has_pzrc)
		peer.pzrc_seg = h->reads[0].seg;
}

/* Decode the Call, build its reply payload into work memory. */
static uint32_t answer(const uint8_t *pay, uint32_t len, uint32_t *xid)
{
	char cred[MAX_AUTH_BYTES], verf[MAX_AUTH_BYTES];
	xdrproc_t xv = (xdrproc_t)(void (*)(void))xdr_void;
	rtest_data d = { 0, NULL };
	struct rpc_msg m;
	uint32_t n;
	XDR x;

	memset(&m, 0, sizeof(m));
	m.rm_call.cb_cred.oa_base = cred;
	m.rm_call.cb_verf.oa_base = verf;
	xdrmem_create(&x, (char *)pay, len, XDR_DECODE);
	if (!xdr_callmsg(&x, &m))
		return 0;
	*xid = m.rm_xid;
	if (m.rm_call.cb_proc != RTEST_ECHO)
		return rpc_reply(peer.work, F_WORK, m.rm_xid, xv, NULL);
	if (!xdr_rtest_data(&x, &d))
		return 0;
	n = rpc_reply(peer.work + F_WORK / 2, F_WORK / 2, m.rm_xid,
		      (xdrproc_t)xdr_rtest_data, &d);
	memmove(peer.work, peer.work + F_WORK / 2, n);
	xdr_free((xdrproc_t)xdr_rtest_data, (char *)&d);
	return n;
}

/* Send the reply payload (in work memory) inline, or into the Reply chunk
 * with an RDMA_NOMSG header; or keep it for later. */
static int reply(uint32_t xid, uint32_t plen, enum f_serve how)
{
	struct rw_segment seg;
	struct rw_hdr h;
	size_t n;

	rw_hdr_init(&h, RW_VERS_1, how == F_LONG ? RW_NOMSG : RW_MSG, xid, 8);
	if (how == F_LONG) {
		if (!peer.has_reply || plen > peer.reply_seg.length ||
		    rdma_op(IBV_WR_RDMA_WRITE, &peer.reply_seg, plen))
			return -1;
		seg = peer.reply_seg;
		seg.length = plen;
		h.has_reply = true;
		h.reply.nsegs = 1;
		h.reply.segs = &seg;
	}
	n = rw_hdr_encode(&h, peer.sbuf, F_BUF);
	if (!n || (how != F_LONG && n + plen > 1024))
		return -1;
	if (how != F_LONG)
		memcpy(peer.sbuf + n, peer.work, plen);
	n += how == F_LONG ? 0 : plen;
	if (how == F_NONE) {
		memcpy(peer.late, peer.sbuf, n);
		peer.late_len = (uint32_t)n;
		return 0;
	}
	return send_msg((uint32_t)n);
}

static int serve(enum f_serve how)
{
	struct rw_hdr_space sp;
	struct ibv_wc wc;
	struct rw_hdr h;
	const uint8_t *msg, *pay;
	uint32_t plen, xid = 0;

	/* Nothing of an earlier Call may pass for this one's offer. */
	peer.has_reply = peer.has_pzrc = false;
	if (cq_wait(&wc, true) || wc.status != IBV_WC_SUCCESS)
		return -1;
	msg = peer.rbuf + wc.wr_id * F_BUF;
	rw_hdr_space_init(&sp, NULL);
	if (rw_hdr_decode(msg, wc.byte_len, &h, &sp) != RW_R_OK)
		return -1;
	loot(&h);
	pay = msg + h.hdr_len;
	plen = wc.byte_len - h.hdr_len;
	if (h.proc == RW_NOMSG) {
		if (!peer.has_pzrc || peer.pzrc_seg.length > F_WORK / 2 ||
		    rdma_op(IBV_WR_RDMA_READ, &peer.pzrc_seg,
			    peer.pzrc_seg.length))
			return -1;
		memcpy(peer.work + F_WORK / 2, peer.work, peer.pzrc_seg.length);
		pay = peer.work + F_WORK / 2;
		plen = peer.pzrc_seg.length;
	}
	plen = answer(pay, plen, &xid);
	post_recv((unsigned int)wc.wr_id);
	return plen ? reply(xid, plen, how) : -1;
}

/* ---- The test thread's side ------------------------------------------------- */

struct f_call {
	CLIENT *cl;
	uint32_t len; /* echo of len octets; 0: NULL call */
	int ms;	      /* timeout */
	enum clnt_stat st;
	bool data_ok;
};

static void *do_call(void *arg)
{
	struct f_call *c = arg;
	struct timeval tv = { c->ms / 1000, (c->ms % 1000) * 1000 };
	xdrproc_t xv = (xdrproc_t)(void (*)(void))xdr_void;
	rtest_data in, out = { 0, NULL };

	if (!c->len) {
		c->st = clnt_call(c->cl, RTEST_NULL, xv, NULL, xv, NULL, tv);
		c->data_ok = true;
		return NULL;
	}
	in.rtest_data_len = c->len;
	in.rtest_data_val = malloc(c->len);
	t_fill(in.rtest_data_val, c->len, 77);
	c->st = clnt_call(c->cl, RTEST_ECHO, (xdrproc_t)xdr_rtest_data,
			  (char *)&in, (xdrproc_t)xdr_rtest_data, (char *)&out,
			  tv);
	c->data_ok = c->st == RPC_SUCCESS && out.rtest_data_len == c->len &&
		     t_fill_check(out.rtest_data_val, c->len, 77) < 0;
	free(in.rtest_data_val);
	if (c->st == RPC_SUCCESS)
		xdr_free((xdrproc_t)xdr_rtest_data, (char *)&out);
	return NULL;
}

static void *accept_thread(void *arg)
{
	*(int *)arg = peer_accept();
	return NULL;
}

/* Connect a CLIENT while the peer accepts. */
static CLIENT *connect_client(enum rpcrdma_reg_mode mode)
{
	struct sockaddr_storage ss;
	struct rpcrdma_attr a;
	pthread_t th;
	CLIENT *cl;
	int accepted = -1;

	peer.has_reply = peer.has_pzrc = false; /* a new scenario */
	rpcrdma_attr_init(&a);
	a.reg_mode = mode;
	/* the peer is an RFC 8166 responder of its own: version 1 */
	a.version = RPCRDMA_VERSION_1;
	t_sockaddr(&ss, t_addr4(), F_PORT);
	pthread_create(&th, NULL, accept_thread, &accepted);
	cl = clnt_rdma_create((struct sockaddr *)&ss, RTEST_PROG, RTEST_VERS,
			      &a);
	pthread_join(th, NULL);
	if (!cl)
		NOTE("%s", clnt_spcreateerror("clnt_rdma_create"));
	if (cl && accepted) {
		clnt_destroy(cl);
		cl = NULL;
	}
	return cl;
}

/* A call in a thread while the peer serves it on this one. */
static bool call_served(CLIENT *cl, uint32_t len, int ms, enum f_serve how,
			enum clnt_stat want)
{
	struct f_call c = { .cl = cl, .len = len, .ms = ms };
	pthread_t th;
	int served;

	pthread_create(&th, NULL, do_call, &c);
	served = serve(how);
	pthread_join(th, NULL);
	return served == 0 && c.st == want &&
	       (want != RPC_SUCCESS || c.data_ok);
}

/*
 * The attack: the peer uses a handle of a finished call on a connection
 * that is still up.  It must fail with a remote access error (the device
 * found no valid key: the fence) and leave the memory at the advertised
 * address as it was.  A flush or no completion at all would mean the
 * connection was gone, which says nothing about the fence: a failure too.
 */
static void attack(const char *what, const struct rw_segment *seg, bool write)
{
	uint32_t len = seg->length < F_ATTACK ? seg->length : F_ATTACK;
	uint8_t *target = (uint8_t *)(uintptr_t)seg->offset;
	uint8_t *before = malloc(len);
	int st;

	memcpy(before, target, len);
	memset(peer.work, 0xee, len);
	st = rdma_op(write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ, seg, len);
	CHECK(st == IBV_WC_REM_ACCESS_ERR,
	      "%s: RDMA %s with handle 0x%08x after the call returned: %s "
	      "(want: remote access error)",
	      what, write ? "Write" : "Read", seg->handle,
	      st < 0 ? "no completion" : ibv_wc_status_str(st));
	CHECK(!memcmp(before, target, len),
	      "%s: the %u octets at 0x%llx are unchanged", what, len,
	      (unsigned long long)seg->offset);
	free(before);
}

static void scenario_short(enum rpcrdma_reg_mode m, const char *mn)
{
	CLIENT *cl = connect_client(m);
	char what[64];

	snprintf(what, sizeof(what), "%s, inline reply", mn);
	CHECK(cl && call_served(cl, 0, 5000, F_SHORT, RPC_SUCCESS) &&
		      peer.has_reply,
	      "%s: call answered, Reply chunk offered", what);
	if (cl && peer.has_reply)
		attack(what, &peer.reply_seg, true);
	if (cl)
		clnt_destroy(cl);
	peer_close();
}

static void scenario_long_reply(enum rpcrdma_reg_mode m, const char *mn)
{
	CLIENT *cl = connect_client(m);
	char what[64];
	bool served;

	snprintf(what, sizeof(what), "%s, reply in the Reply chunk", mn);
	served = cl && call_served(cl, 3000, 5000, F_LONG, RPC_SUCCESS);
	CHECK(peer.has_reply, "%s: the Call offered a Reply chunk (%u octets)",
	      what, peer.has_reply ? peer.reply_seg.length : 0);
	CHECK(served, "%s: call answered through the Reply chunk, data intact",
	      what);
	/* Without an offer there is nothing to attack: the check above
	 * failed already. */
	if (peer.has_reply)
		attack(what, &peer.reply_seg, true);
	if (cl)
		clnt_destroy(cl);
	peer_close();
}

static void scenario_long_call(enum rpcrdma_reg_mode m, const char *mn)
{
	CLIENT *cl = connect_client(m);
	char what[64];

	snprintf(what, sizeof(what), "%s, Long Call", mn);
	CHECK(cl && call_served(cl, 20000, 5000, F_LONG, RPC_SUCCESS) &&
		      peer.has_pzrc,
	      "%s: PZRC pulled, call answered", what);
	if (cl && peer.has_pzrc)
		attack(what, &peer.pzrc_seg, false);
	if (cl)
		clnt_destroy(cl);
	peer_close();
}

/* The caller gives up; the reply comes late; only then may the layer's
 * buffers be reused, and only fenced. */
static void scenario_late(enum rpcrdma_reg_mode m, const char *mn)
{
	CLIENT *cl = connect_client(m);
	struct rw_segment seg;
	char what[64];
	bool ok;

	snprintf(what, sizeof(what), "%s, reply after the timeout", mn);
	ok = cl && call_served(cl, 0, 500, F_NONE, RPC_TIMEDOUT) &&
	     peer.has_reply;
	CHECK(ok, "%s: the call timed out", what);
	if (!ok)
		goto out;
	seg = peer.reply_seg;
	memcpy(peer.sbuf, peer.late, peer.late_len);
	CHECK(send_msg(peer.late_len) == 0, "%s: late reply sent", what);
	CHECK(call_served(cl, 0, 5000, F_SHORT, RPC_SUCCESS),
	      "%s: the next call works", what);
	attack(what, &seg, true);
out:
	if (cl)
		clnt_destroy(cl);
	peer_close();
}

/*
 * A Reply chunk is offered only for a Reply whose largest size is known
 * and may not fit inline (V1-RP-1): the largest Reply of NULL and ECHO is
 * declared, as a program's binding would, so that every call offers one
 * (what max_reply_size did before a Reply of unknown size was asked
 * inline).
 */
#define F_REPLY_MAX 65536u
static int echo_bounded(void)
{
	struct rpcrdma_ulb_entry e = {
		.prog = RTEST_PROG,
		.vers = RTEST_VERS,
		.proc = RTEST_ECHO,
		.dir = RPCRDMA_ULB_REPLY,
		.reply_max = { .kind = RPCRDMA_ULB_SIZE_FIXED,
			       .value = F_REPLY_MAX - 512 },
	};
	int ret = rpcrdma_ulb_register(&e);

	e.proc = RTEST_NULL;
	return ret ? ret : rpcrdma_ulb_register(&e);
}

int main(void)
{
	static const struct {
		enum rpcrdma_reg_mode m;
		const char *name;
	} modes[] = { { RPCRDMA_REG_MW, "mw" }, { RPCRDMA_REG_MR, "mr" } };
	unsigned int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!t_have_device())
		return 77;
	/* under the suite's 120 s: a hang ends with a FAIL line */
	t_watchdog(110);
	CHECK(echo_bounded() == 0,
	      "NULL's and ECHO's results bounded to %u octets: every call offers a Reply chunk that large",
	      F_REPLY_MAX);
	CHECK(peer_listen() == 0, "raw verbs peer listening on %s port %u",
	      t_addr4(), F_PORT);
	for (i = 0; i < 2; i++) {
		scenario_short(modes[i].m, modes[i].name);
		scenario_long_reply(modes[i].m, modes[i].name);
		scenario_long_call(modes[i].m, modes[i].name);
		scenario_late(modes[i].m, modes[i].name);
	}
	rdma_destroy_id(peer.lid);
	rdma_destroy_event_channel(peer.ch);
	return tu_done();
}
