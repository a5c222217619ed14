/*
 * rt_setup.c - one connection's verbs resources and lifecycle (rt_setup.h):
 * parameters, protection domain, completion queue and channel, queue pair,
 * the pollable fd, RFC 8797 private data, and freeing it all.  rt_cm.c
 * calls it to make the connections it connects or accepts; it calls the
 * units that own each resource (rt_buf, rt_reg, rt_post) to set theirs up
 * and free them.  Ending a connection is rt_state.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "transport/rt_priv.h"
#include "transport/rt_buf_priv.h"
#include "transport/rt_post.h"
#include "transport/rt_reg_priv.h"
#include "transport/rt_setup.h"

/* Reads we initiate and accept concurrently (digest 1.1, V1-CR-10): Linux
 * uses 16 outstanding Reads on its server; ORD/IRD of 1 is the ntirpc
 * anti-pattern. */
#define RT_ORD_WANT 16u
#define RT_IRD_WANT 64u
/* Send-queue room for memory window binds and invalidations. */
#define RT_REG_SQ_SLOTS	 64u
#define RT_RETRY_COUNT	 6
#define RT_ACK_TIMEOUT	 16
#define RT_RXE_VENDOR_ID 0xffffffu /* Soft-RoCE (rdma_rxe) */

static uint32_t clamp_u32(uint32_t v, uint32_t lo, uint32_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* Inline sizes as RFC 8797 can express them: whole KiB, 1..256 KiB. */
static uint32_t inline_size(uint32_t v)
{
	v = clamp_u32(v ? v : 4096, RW_CM_MIN_SIZE, RW_CM_MAX_SIZE);
	return v & ~(RW_CM_MIN_SIZE - 1);
}

void rt_conn_attr_normalize(struct rt_conn_attr *a)
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

struct rt_conn *rt_conn_alloc(const struct rt_conn_attr *attr)
{
	struct rt_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	if (attr)
		c->attr = *attr;
	else
		rt_conn_attr_init(&c->attr);
	rt_conn_attr_normalize(&c->attr);
	c->trace_id = tr_conn_id_new();
	c->epfd = -1;
	c->wakefd = -1;
	atomic_init(&c->ext_up, false);
	atomic_init(&c->ext_dead, false);
	atomic_init(&c->closed, false);
	rw_credits_init(&c->credits, c->attr.credits);
	rw_srv_credits_init(&c->srv_credits, c->attr.credits);
	return c;
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

static int epoll_add(int epfd, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

/* The pollable fd: an epoll set of the completion channel, a wake-up
 * eventfd (death noticed elsewhere, work left over) and, for a client, its
 * CM event channel (added by rt_cm.c). */
static int setup_fds(struct rt_conn *c, struct rt_err *err)
{
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	c->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (c->epfd < 0 || c->wakefd < 0 || epoll_add(c->epfd, c->wakefd))
		return rt_err_set(err, errno, "cannot create a pollable fd: %s",
				  strerror(errno));
	return 0;
}

static int query_device(struct rt_conn *c, struct ibv_device_attr *da,
			struct rt_err *err)
{
	struct ibv_port_attr pa;
	int ret;

	snprintf(c->devname, sizeof(c->devname), "%s",
		 ibv_get_device_name(c->ctx->device));
	ret = ibv_query_device(c->ctx, da);
	if (ret)
		return rt_err_set(err, ret, "cannot query RDMA device %s: %s",
				  c->devname, strerror(ret));
	ret = ibv_query_port(c->ctx, c->id->port_num, &pa);
	c->max_msg = ret || !pa.max_msg_sz ? (1u << 31) : pa.max_msg_sz;
	c->max_sge = clamp_u32((uint32_t)da->max_sge, 1, RT_MAX_SGE);
	c->ord = clamp_u32((uint32_t)da->max_qp_init_rd_atom, 0, RT_ORD_WANT);
	c->ird = clamp_u32((uint32_t)da->max_qp_rd_atom, 0, RT_IRD_WANT);
	c->iwarp = c->ctx->device->transport_type == IBV_TRANSPORT_IWARP;
	/* Soft-RoCE's provider copies the kernel's work completion flags
	 * unchanged, where "with invalidate" is bit 2 (IBV_WC_IP_CSUM_OK in
	 * userspace, meaningless on an RC queue pair) instead of
	 * IBV_WC_WITH_INV. */
	c->quirk_inv_flag = da->vendor_id == RT_RXE_VENDOR_ID;
	/* Soft-RoCE (rxe_requester, Linux 6.1) rewinds its send queue to
	 * the oldest unacknowledged Send when it retransmits and runs a
	 * window bind behind it a second time, with the old rkey: the bind
	 * fails (IBV_WC_MW_BIND_ERR) or the queue stalls.  A bind always
	 * follows other calls' Sends, so windows are not chosen by default
	 * there (rt_reg.c choose_mode). */
	c->quirk_mw_rebind = da->vendor_id == RT_RXE_VENDOR_ID;
	c->dev_send_inv = da->device_cap_flags & IBV_DEVICE_MEM_MGT_EXTENSIONS;
	c->dev_mw = (da->device_cap_flags & IBV_DEVICE_MEM_WINDOW) &&
		    (da->device_cap_flags & (IBV_DEVICE_MEM_WINDOW_TYPE_2A |
					     IBV_DEVICE_MEM_WINDOW_TYPE_2B));
	return 0;
}

static int setup_cq(struct rt_conn *c, const struct ibv_device_attr *da,
		    struct rt_err *err)
{
	uint32_t cqe = c->sq_size + c->nrbufs;

	if (!c->attr.busy_poll) {
		c->cch = ibv_create_comp_channel(c->ctx);
		if (!c->cch || set_nonblock(c->cch->fd) ||
		    epoll_add(c->epfd, c->cch->fd))
			return rt_err_set(
				err, errno ? errno : ENOMEM,
				"cannot create a completion channel on %s",
				c->devname);
	}
	cqe = clamp_u32(cqe, 1, (uint32_t)da->max_cqe);
	c->cq = ibv_create_cq(c->ctx, (int)cqe, c, c->cch, 0);
	if (!c->cq)
		return rt_err_set(
			err, errno ? errno : ENOMEM,
			"cannot create a completion queue of %u entries on %s",
			cqe, c->devname);
	if (c->cch && ibv_req_notify_cq(c->cq, 0))
		return rt_err_set(err, EIO, "cannot arm the completion queue");
	return 0;
}

static int setup_qp(struct rt_conn *c, struct rt_err *err)
{
	struct ibv_qp_init_attr qa;

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.sq_sig_all = 0; /* selective signalling (rt_post.c) */
	qa.cap.max_send_wr = c->sq_size;
	qa.cap.max_recv_wr = c->nrbufs;
	qa.cap.max_send_sge = c->max_sge;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(c->id, c->pd, &qa))
		return rt_err_set(
			err, errno,
			"cannot create a queue pair on %s (%u send, %u receive WRs): %s",
			c->devname, c->sq_size, c->nrbufs, strerror(errno));
	c->qp = c->id->qp;
	return 0;
}

static void size_queues(struct rt_conn *c, const struct ibv_device_attr *da)
{
	uint32_t maxwr = (uint32_t)da->max_qp_wr;

	c->nrbufs = clamp_u32(c->attr.credits + c->attr.recv_extra, 1, maxwr);
	c->sq_size = clamp_u32(c->attr.send_bufs + c->attr.rdma_depth +
				       RT_REG_SQ_SLOTS,
			       4, maxwr);
}

static int alloc_rings(struct rt_conn *c, struct rt_err *err)
{
	c->ring = calloc(c->sq_size, sizeof(*c->ring));
	c->evq_cap = c->sq_size + c->nrbufs + 4;
	c->evq = calloc(c->evq_cap, sizeof(*c->evq));
	if (!c->ring || !c->evq)
		return rt_err_set(err, ENOMEM, "out of memory");
	return 0;
}

/*
 * Build everything of a connection on an rdma_cm id whose device is known
 * (client: route resolved; server: connection request): PD, CQ and channel,
 * QP, buffers with every Receive posted, registration mode, private data.
 */
/* Our RFC 8797 private data.  Send With Invalidate is advertised only when
 * every handle we hand out is a memory window, the one kind the peer can
 * invalidate (a Send With Invalidate naming an MR would kill the
 * connection). */
static void build_private(struct rt_conn *c)
{
	c->local_pd.valid = true;
	c->local_pd.remote_inv = c->reg_mode == RT_REG_MW &&
				 !c->attr.no_remote_inv;
	c->local_pd.send_size = c->attr.inline_send;
	c->local_pd.recv_size = c->attr.inline_recv;
	c->advertised_inv = c->local_pd.remote_inv;
	rw_cm_encode(&c->local_pd, c->pd_buf);
	/* Until the peer's arrives: v1 defaults (1 KiB each way). */
	rw_cm_decode(NULL, 0, &c->peer_pd);
	rw_cm_negotiate(&c->local_pd, &c->peer_pd, &c->inl);
}

int rt_conn_setup(struct rt_conn *c, struct rdma_cm_id *id, struct rt_err *err)
{
	struct ibv_device_attr da;
	int ret;

	c->id = id;
	c->ctx = id->verbs;
	memcpy(&c->peer_addr, rdma_get_peer_addr(id), sizeof(c->peer_addr));
	memcpy(&c->local_addr, rdma_get_local_addr(id), sizeof(c->local_addr));
	if (!c->ctx) {
		char a[RT_ADDR_STRLEN];

		return rt_err_set(err, ENODEV, "no RDMA device for address %s",
				  rt_addr_str(rt_conn_peer_addr(c), 0, a));
	}
	ret = query_device(c, &da, err);
	if (ret)
		return ret;
	size_queues(c, &da);
	c->pd = ibv_alloc_pd(c->ctx);
	if (!c->pd)
		return rt_err_set(err, ENOMEM,
				  "cannot allocate a protection domain on %s",
				  c->devname);
	ret = setup_fds(c, err);
	if (!ret)
		ret = setup_cq(c, &da, err);
	if (!ret)
		ret = setup_qp(c, err);
	if (!ret)
		ret = alloc_rings(c, err);
	if (!ret)
		ret = rt_reg_setup(c, err);
	if (!ret)
		ret = rt_buf_setup(c, err);
	if (!ret)
		ret = rt_buf_post_all_recvs(c, err);
	if (!ret)
		build_private(c);
	return ret;
}

/* The peer's private data (any length; none or foreign: v1 defaults). */
void rt_conn_set_peer_private(struct rt_conn *c, const void *data, size_t len)
{
	rw_cm_decode(data, len, &c->peer_pd);
	rw_cm_negotiate(&c->local_pd, &c->peer_pd, &c->inl);
}

void rt_conn_cm_params(const struct rt_conn *c, struct rdma_conn_param *p)
{
	memset(p, 0, sizeof(*p));
	p->private_data = c->pd_buf;
	p->private_data_len = RW_CM_LEN;
	p->responder_resources = (uint8_t)clamp_u32(c->ird, 0, 255);
	p->initiator_depth = (uint8_t)clamp_u32(c->ord, 0, 255);
	p->retry_count = RT_RETRY_COUNT;
	/* No RNR retries: a Send that finds no Receive is a credit bug and
	 * must surface, not be papered over (prior-art 3.2). */
	p->rnr_retry_count = 0;
	p->flow_control = 0;
}

/*
 * Local ACK timeout 4.096 us * 2^16 = 268 ms, times RT_RETRY_COUNT + 1
 * tries: a peer whose QP vanished without a disconnect is noticed within
 * about two seconds of the next transfer instead of the 16 s that rdma_cm's
 * default gives on Soft-RoCE.  Best effort: older kernels lack the option.
 */
void rt_conn_ack_timeout(struct rt_conn *c)
{
	uint8_t t = RT_ACK_TIMEOUT;

	rdma_set_option(c->id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &t,
			sizeof(t));
}

/* What the connection manager negotiated is what the QP really got. */
void rt_conn_query_rd_atomic(struct rt_conn *c)
{
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;

	if (ibv_query_qp(c->qp, &qa,
			 IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC,
			 &qia))
		return;
	c->ord = qa.max_rd_atomic;
	c->ird = qa.max_dest_rd_atomic;
}

void rt_conn_free(struct rt_conn *c)
{
	if (c->qp)
		rdma_destroy_qp(c->id);
	c->qp = NULL;
	rt_reg_free(c);
	rt_sq_free(c);
	if (c->cq) {
		if (c->cq_unacked)
			ibv_ack_cq_events(c->cq, c->cq_unacked);
		ibv_destroy_cq(c->cq);
	}
	if (c->cch)
		ibv_destroy_comp_channel(c->cch);
	rt_buf_free(c);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->epfd >= 0)
		close(c->epfd);
	if (c->wakefd >= 0)
		close(c->wakefd);
	if (c->id)
		rdma_destroy_id(c->id);
	if (c->cm_ch)
		rdma_destroy_event_channel(c->cm_ch);
	free(c->evq);
	free(c);
}
