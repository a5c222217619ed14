/*
 * rt_state.h - the bottom of the transport: ending a connection, waking its
 * fd, and the queue of events the caller collects (rt_state.c).  Every
 * other unit of src/transport may call these; this unit calls none of
 * theirs except the one hook below.
 */
#ifndef RT_STATE_H
#define RT_STATE_H

#include "transport/rt_priv.h"

/* The connection is dead from now on, for the first cause given (why may
 * be NULL or empty): QP in the error state, disconnect sent or answered,
 * waiting work flushed, RT_EV_DEAD queued, fd woken.  Idempotent. */
void rt_conn_kill(struct rt_conn *conn, const struct rt_err *why);

/* Make the connection's fd readable, so its user services it. */
void rt_conn_wake(struct rt_conn *conn);

/* Queue an event for rt_conn_poll(); out of memory kills the connection
 * (-ENOMEM), for a lost event would lose a buffer or a completion. */
int rt_evq_push(struct rt_conn *conn, const struct rt_event *ev);

/* Take up to max queued events, oldest first; how many were taken. */
unsigned int rt_evq_pop(struct rt_conn *conn, struct rt_event *ev,
			unsigned int max);

/*
 * Hook, implemented above (rt_post.c) and called from rt_conn_kill(): flush
 * the work still waiting for send-queue room.  Declared here so the call
 * goes one way, up through this header, and rt_state.c includes nothing of
 * the units above it.
 */
void rt_sq_drop_pending(struct rt_conn *conn);

#endif /* RT_STATE_H */
