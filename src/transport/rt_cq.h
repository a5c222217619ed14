/*
 * rt_cq.h - the completion queue service of one connection (rt_cq.c), over
 * rt_state: the units above call it to drain completions and to wait.
 */
#ifndef RT_CQ_H
#define RT_CQ_H

#include "transport/rt_priv.h"

/* Everything that needs doing without blocking: the client's CM events,
 * completions, queued work. */
void rt_cq_service(struct rt_conn *conn);

/* Completions and queued work only: no system call on providers that poll
 * in user space. */
void rt_cq_reap(struct rt_conn *conn);

/* Wait for the connection's fd, at most timeout_ms (< 0: no limit). */
int rt_cq_wait(struct rt_conn *conn, int timeout_ms);

/* A work completion status as text. */
const char *rt_wc_status_str(int status);

/*
 * Hooks: what the service hands each completion and each round to.  They
 * are implemented above, by the unit named, and declared here so that the
 * call goes one way, up through this header: rt_cq.c includes nothing of
 * those units.
 */

/* rt_buf.c: a Receive completed (index: its buffer). */
void rt_buf_recv_done(struct rt_conn *conn, uint32_t index,
		      const struct ibv_wc *wc);

/* rt_post.c: a send-queue work request completed (seq: its wr_id). */
void rt_sq_complete(struct rt_conn *conn, uint64_t seq, int status);

/* rt_post.c: post the work that waits for room, as far as there is room. */
void rt_sq_run_pending(struct rt_conn *conn);

/* rt_cm.c: the client's own CM events (DISCONNECTED, device removal). */
void rt_cm_client_events(struct rt_conn *conn);

/* rt_cm.c: an accepted connection's completion channel is readable: hand
 * its events to the connections they belong to (any of the listener's). */
void rt_cm_chan_events(struct rt_conn *conn);

#endif /* RT_CQ_H */
