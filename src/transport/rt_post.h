/*
 * rt_post.h - the send queue of one connection (rt_post.c) as the rest of
 * src/transport uses it; the caller's posting API is in rt_conn.h.
 */
#ifndef RT_POST_H
#define RT_POST_H

#include "transport/rt_priv.h"

/* Post w, or queue it behind the work that waits for room; when it cannot
 * be, its completion is retired as flushed. */
int rt_sq_submit(struct rt_conn *conn, struct rt_work *w, struct rt_err *err);

/* ctx is about to be freed: no record may point to it any more. */
void rt_sq_forget_ctx(struct rt_conn *conn, const void *ctx);

void rt_sq_free(struct rt_conn *conn);

/*
 * Hook, implemented above (rt_reg.c): a window bind or invalidation was
 * retired, with its status.  Declared here so that rt_post.c does not
 * include rt_reg's headers.
 */
void rt_reg_wr_done(struct rt_conn *conn, uint8_t kind, struct rt_mw *mw,
		    int status);

/*
 * Hooks, implemented above (rt_reg.c): on iWARP the sink of an RDMA Read
 * needs remote write, granted for that Read alone.  rt_reg_sink_get()
 * gives *sink (NULL where no grant is needed) over the n sges; each Read
 * work request holds it (rt_reg_sink_hold) and the last put deregisters
 * it, before the Read is reported.
 */
struct rt_sink;
int rt_reg_sink_get(struct rt_conn *conn, const struct rt_sge *sge,
		    unsigned int n, struct rt_sink **sink, struct rt_err *err);
const struct rt_sge *rt_reg_sink_sge(const struct rt_sink *sink);
void rt_reg_sink_hold(struct rt_sink *sink);
void rt_reg_sink_put(struct rt_conn *conn, struct rt_sink *sink);

#endif /* RT_POST_H */
