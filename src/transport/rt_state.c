/*
 * rt_state.c - the bottom of the transport (rt_state.h): ending a
 * connection, waking its fd, and the ring of events waiting for the caller.
 *
 * Ending a connection (rt_conn_kill) is one path for every cause: flushed
 * or failed completions, DISCONNECTED, device removal, a failed
 * invalidation, a local close.  It records the first cause, forces the queue
 * pair into the error state (the peer can no longer reach any memory of ours
 * through it, and every outstanding work request flushes), answers or sends
 * the disconnect, queues RT_EV_DEAD and wakes the fd.
 *
 * Events wait in a ring that grows as needed, so that a wait inside the
 * layer (rt_reg_revoke) can always keep draining completions without losing
 * what the caller has not collected yet.
 *
 * Every other unit calls these; this file calls nothing of theirs but
 * rt_sq_drop_pending(), a hook declared in rt_state.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "transport/rt_priv.h"
#include "transport/rt_state.h"

/* The flag is set after the write and cleared before the read
 * (rt_cq.c clear_wake), so that it is never false while the fd is
 * readable for good: at worst a read finds nothing. */
void rt_conn_wake(struct rt_conn *conn)
{
	uint64_t one = 1;

	if (conn->wakefd < 0)
		return;
	if (write(conn->wakefd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		return;
	atomic_store(&conn->woken, true);
}

static void qp_to_error(struct ibv_qp *qp)
{
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };

	if (qp)
		ibv_modify_qp(qp, &qa, IBV_QP_STATE);
}

void rt_conn_kill(struct rt_conn *conn, const struct rt_err *why)
{
	struct rt_event ev = { .type = RT_EV_DEAD };

	if (conn->dead)
		return;
	conn->dead = true;
	rt_err_copy(&conn->err, why);
	if (!conn->err.code)
		rt_err_set(&conn->err, ECONNABORTED, "connection ended");
	TR_EVENT(disconnect, conn->trace_id, 0, "code=%d reason=%s",
		 conn->err.code, conn->err.msg);
	qp_to_error(conn->qp);
	/* An accepted connection ended before the connection manager saw it
	 * established cannot send the disconnect request yet: the listener
	 * sends it when ESTABLISHED arrives (rt_cm.c). */
	atomic_store(&conn->closed, true);
	if (conn->id && conn->qp)
		rdma_disconnect(conn->id);
	rt_sq_drop_pending(conn);
	ev.status = conn->err.code;
	ev.status_str = conn->err.msg;
	rt_evq_push(conn, &ev);
	rt_conn_wake(conn);
}

void rt_conn_disconnect(struct rt_conn *conn)
{
	struct rt_err why;

	rt_err_set(&why, ESHUTDOWN, "connection closed locally");
	rt_conn_kill(conn, &why);
}

static int evq_grow(struct rt_conn *conn)
{
	unsigned int cap = conn->evq_cap ? conn->evq_cap * 2 : 16, i;
	struct rt_event *q = calloc(cap, sizeof(*q));

	if (!q)
		return -ENOMEM;
	for (i = 0; i < conn->evq_n; i++)
		q[i] = conn->evq[(conn->evq_head + i) % conn->evq_cap];
	free(conn->evq);
	conn->evq = q;
	conn->evq_cap = cap;
	conn->evq_head = 0;
	return 0;
}

int rt_evq_push(struct rt_conn *conn, const struct rt_event *ev)
{
	struct rt_err why;

	/* Losing an event would lose a Receive buffer or a caller's
	 * completion for good: the connection cannot go on without it. */
	if (conn->evq_n == conn->evq_cap && evq_grow(conn)) {
		conn->st.errors++;
		rt_err_set(&why, ENOMEM, "out of memory for completion events");
		rt_conn_kill(conn, &why);
		return -ENOMEM;
	}
	conn->evq[(conn->evq_head + conn->evq_n) % conn->evq_cap] = *ev;
	conn->evq_n++;
	return 0;
}

unsigned int rt_evq_pop(struct rt_conn *conn, struct rt_event *ev,
			unsigned int max)
{
	unsigned int n = 0;

	while (n < max && conn->evq_n) {
		ev[n++] = conn->evq[conn->evq_head];
		conn->evq_head = (conn->evq_head + 1) % conn->evq_cap;
		conn->evq_n--;
	}
	return n;
}
