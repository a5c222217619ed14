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

/* Reads we initiate and accept concurrently (V1-CR-10): Linux
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
	struct rt_conn *conn = calloc(1, sizeof(*conn));

	if (!conn)
		return NULL;
	if (attr)
		conn->attr = *attr;
	else
		rt_conn_attr_init(&conn->attr);
	rt_conn_attr_normalize(&conn->attr);
	conn->trace_id = tr_conn_id_new();
	conn->epfd = -1;
	conn->wakefd = -1;
	atomic_init(&conn->ext_up, false);
	atomic_init(&conn->ext_dead, false);
	atomic_init(&conn->closed, false);
	atomic_init(&conn->rearm, false);
	atomic_init(&conn->waiters, 0);
	atomic_init(&conn->woken, false);
	rw_credits_init(&conn->credits, conn->attr.credits);
	rw_srv_credits_init(&conn->srv_credits, conn->attr.credits);
	return conn;
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

/*
 * The pollable fd.  A client's is an epoll set of its completion channel,
 * a wake-up eventfd (death noticed elsewhere, work left over) and its CM
 * event channel (added by rt_cm.c).  An accepted connection has the
 * eventfd alone: its CM events and its completion events arrive on its
 * listener's channels, which wake it (rt_cm.c), so that a server holding
 * many connections spends one fd on each.
 */
static int setup_fds(struct rt_conn *conn, struct rt_err *err)
{
	conn->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (conn->wakefd < 0)
		goto fail;
	if (conn->accepted)
		return 0;
	conn->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (conn->epfd < 0 || epoll_add(conn->epfd, conn->wakefd))
		goto fail;
	return 0;
fail:
	return rt_err_set(err, errno, "cannot create a pollable fd: %s",
			  strerror(errno));
}

static int query_device(struct rt_conn *conn, struct ibv_device_attr *da,
			struct rt_err *err)
{
	struct ibv_port_attr pa;
	int ret;

	snprintf(conn->devname, sizeof(conn->devname), "%s",
		 ibv_get_device_name(conn->ctx->device));
	ret = ibv_query_device(conn->ctx, da);
	if (ret)
		return rt_err_set(err, ret, "cannot query RDMA device %s: %s",
				  conn->devname, strerror(ret));
	ret = ibv_query_port(conn->ctx, conn->id->port_num, &pa);
	conn->max_msg = ret || !pa.max_msg_sz ? (1u << 31) : pa.max_msg_sz;
	conn->max_sge = clamp_u32((uint32_t)da->max_sge, 1, RT_MAX_SGE);
	conn->ord =
		clamp_u32((uint32_t)da->max_qp_init_rd_atom, 0, RT_ORD_WANT);
	conn->ird = clamp_u32((uint32_t)da->max_qp_rd_atom, 0, RT_IRD_WANT);
	conn->iwarp = conn->ctx->device->transport_type == IBV_TRANSPORT_IWARP;
	/* Soft-RoCE's provider copies the kernel's work completion flags
	 * unchanged, where "with invalidate" is bit 2 (IBV_WC_IP_CSUM_OK in
	 * userspace, meaningless on an RC queue pair) instead of
	 * IBV_WC_WITH_INV. */
	conn->quirk_inv_flag = da->vendor_id == RT_RXE_VENDOR_ID;
	/* Soft-RoCE (rxe_requester, Linux 6.1) rewinds its send queue to
	 * the oldest unacknowledged Send when it retransmits and runs a
	 * window bind behind it a second time, with the old rkey: the bind
	 * fails (IBV_WC_MW_BIND_ERR) or the queue stalls.  A bind always
	 * follows other calls' Sends, so windows are not chosen by default
	 * there (rt_reg.c choose_mode). */
	conn->quirk_mw_rebind = da->vendor_id == RT_RXE_VENDOR_ID;
	conn->dev_send_inv = da->device_cap_flags &
			     IBV_DEVICE_MEM_MGT_EXTENSIONS;
	conn->dev_mw = (da->device_cap_flags & IBV_DEVICE_MEM_WINDOW) &&
		       (da->device_cap_flags & (IBV_DEVICE_MEM_WINDOW_TYPE_2A |
						IBV_DEVICE_MEM_WINDOW_TYPE_2B));
	return 0;
}

static int setup_cq(struct rt_conn *conn, const struct ibv_device_attr *da,
		    struct rt_err *err)
{
	uint32_t cqe = conn->sq_size + conn->nrbufs;

	if (!conn->attr.busy_poll && !conn->accepted) {
		conn->cch = ibv_create_comp_channel(conn->ctx);
		if (!conn->cch || set_nonblock(conn->cch->fd) ||
		    epoll_add(conn->epfd, conn->cch->fd))
			return rt_err_set(
				err, errno ? errno : ENOMEM,
				"cannot create a completion channel on %s",
				conn->devname);
	}
	cqe = clamp_u32(cqe, 1, (uint32_t)da->max_cqe);
	conn->cq = ibv_create_cq(conn->ctx, (int)cqe, conn,
				 conn->cch ? conn->cch : conn->scch, 0);
	if (!conn->cq)
		return rt_err_set(
			err, errno ? errno : ENOMEM,
			"cannot create a completion queue of %u entries on %s",
			cqe, conn->devname);
	if ((conn->cch || conn->scch) && ibv_req_notify_cq(conn->cq, 0))
		return rt_err_set(err, EIO, "cannot arm the completion queue");
	return 0;
}

static int setup_qp(struct rt_conn *conn, struct rt_err *err)
{
	struct ibv_qp_init_attr qa;

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = conn->cq;
	qa.recv_cq = conn->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.sq_sig_all = 0; /* selective signalling (rt_post.c) */
	qa.cap.max_send_wr = conn->sq_size;
	qa.cap.max_recv_wr = conn->nrbufs;
	qa.cap.max_send_sge = conn->max_sge;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(conn->id, conn->pd, &qa))
		return rt_err_set(
			err, errno,
			"cannot create a queue pair on %s (%u send, %u receive WRs): %s",
			conn->devname, conn->sq_size, conn->nrbufs,
			strerror(errno));
	conn->qp = conn->id->qp;
	return 0;
}

static void size_queues(struct rt_conn *conn, const struct ibv_device_attr *da)
{
	uint32_t maxwr = (uint32_t)da->max_qp_wr;

	conn->nrbufs =
		clamp_u32(conn->attr.credits + conn->attr.recv_extra, 1, maxwr);
	conn->sq_size = clamp_u32(conn->attr.send_bufs + conn->attr.rdma_depth +
					  RT_REG_SQ_SLOTS,
				  4, maxwr);
}

static int alloc_rings(struct rt_conn *conn, struct rt_err *err)
{
	conn->ring = calloc(conn->sq_size, sizeof(*conn->ring));
	conn->evq_cap = conn->sq_size + conn->nrbufs + 4;
	conn->evq = calloc(conn->evq_cap, sizeof(*conn->evq));
	if (!conn->ring || !conn->evq)
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
static void build_private(struct rt_conn *conn)
{
	conn->local_pd.valid = true;
	conn->local_pd.remote_inv = conn->reg_mode == RT_REG_MW &&
				    !conn->attr.no_remote_inv;
	conn->local_pd.send_size = conn->attr.inline_send;
	conn->local_pd.recv_size = conn->attr.inline_recv;
	conn->advertised_inv = conn->local_pd.remote_inv;
	rw_cm_encode(&conn->local_pd, conn->pd_buf);
	/* Until the peer's arrives: v1 defaults (1 KiB each way). */
	rw_cm_decode(NULL, 0, &conn->peer_pd);
	rw_cm_negotiate(&conn->local_pd, &conn->peer_pd, &conn->inl);
}

int rt_conn_setup(struct rt_conn *conn, struct rdma_cm_id *id,
		  struct rt_err *err)
{
	struct ibv_device_attr da;
	int ret;

	conn->id = id;
	conn->ctx = id->verbs;
	memcpy(&conn->peer_addr, rdma_get_peer_addr(id),
	       sizeof(conn->peer_addr));
	memcpy(&conn->local_addr, rdma_get_local_addr(id),
	       sizeof(conn->local_addr));
	if (!conn->ctx) {
		char a[RT_ADDR_STRLEN];

		return rt_err_set(err, ENODEV, "no RDMA device for address %s",
				  rt_addr_str(rt_conn_peer_addr(conn), 0, a));
	}
	ret = query_device(conn, &da, err);
	if (ret)
		return ret;
	size_queues(conn, &da);
	conn->pd = ibv_alloc_pd(conn->ctx);
	if (!conn->pd)
		return rt_err_set(err, ENOMEM,
				  "cannot allocate a protection domain on %s",
				  conn->devname);
	ret = setup_fds(conn, err);
	if (!ret)
		ret = setup_cq(conn, &da, err);
	if (!ret)
		ret = setup_qp(conn, err);
	if (!ret)
		ret = alloc_rings(conn, err);
	if (!ret)
		ret = rt_reg_setup(conn, err);
	if (!ret)
		ret = rt_buf_setup(conn, err);
	if (!ret)
		ret = rt_buf_post_all_recvs(conn, err);
	if (!ret)
		build_private(conn);
	return ret;
}

/* The peer's private data (any length; none or foreign: v1 defaults). */
void rt_conn_set_peer_private(struct rt_conn *conn, const void *data,
			      size_t len)
{
	rw_cm_decode(data, len, &conn->peer_pd);
	rw_cm_negotiate(&conn->local_pd, &conn->peer_pd, &conn->inl);
}

void rt_conn_cm_params(const struct rt_conn *conn, struct rdma_conn_param *p)
{
	memset(p, 0, sizeof(*p));
	p->private_data = conn->pd_buf;
	p->private_data_len = RW_CM_LEN;
	p->responder_resources = (uint8_t)clamp_u32(conn->ird, 0, 255);
	p->initiator_depth = (uint8_t)clamp_u32(conn->ord, 0, 255);
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
void rt_conn_ack_timeout(struct rt_conn *conn)
{
	uint8_t t = RT_ACK_TIMEOUT;

	rdma_set_option(conn->id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT,
			&t, sizeof(t));
}

/* What the connection manager negotiated is what the QP really got. */
void rt_conn_query_rd_atomic(struct rt_conn *conn)
{
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;

	if (ibv_query_qp(conn->qp, &qa,
			 IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC,
			 &qia))
		return;
	conn->ord = qa.max_rd_atomic;
	conn->ird = qa.max_dest_rd_atomic;
}

void rt_conn_free(struct rt_conn *conn)
{
	if (conn->qp)
		rdma_destroy_qp(conn->id);
	conn->qp = NULL;
	rt_reg_free(conn);
	rt_sq_free(conn);
	if (conn->cq) {
		if (conn->cq_unacked)
			ibv_ack_cq_events(conn->cq, conn->cq_unacked);
		ibv_destroy_cq(conn->cq);
	}
	if (conn->cch)
		ibv_destroy_comp_channel(conn->cch);
	rt_buf_free(conn);
	if (conn->pd)
		ibv_dealloc_pd(conn->pd);
	if (conn->epfd >= 0)
		close(conn->epfd);
	if (conn->wakefd >= 0)
		close(conn->wakefd);
	if (conn->id)
		rdma_destroy_id(conn->id);
	if (conn->cm_ch)
		rdma_destroy_event_channel(conn->cm_ch);
	free(conn->evq);
	free(conn);
}
