/*
 * rt_setup.h - making and freeing one connection (rt_setup.c), for
 * rt_cm.c: allocation, verbs resources, RFC 8797 private data and the
 * connection manager's parameters.
 */
#ifndef RT_SETUP_H
#define RT_SETUP_H

#include "transport/rt_priv.h"

void rt_conn_attr_normalize(struct rt_conn_attr *a);
struct rt_conn *rt_conn_alloc(const struct rt_conn_attr *attr);
int rt_conn_setup(struct rt_conn *conn, struct rdma_cm_id *id,
		  struct rt_err *err);
void rt_conn_set_peer_private(struct rt_conn *conn, const void *data,
			      size_t len);
void rt_conn_cm_params(const struct rt_conn *conn, struct rdma_conn_param *p);
void rt_conn_query_rd_atomic(struct rt_conn *conn);
void rt_conn_ack_timeout(struct rt_conn *conn);

/* Free every resource of conn and conn itself.  An accepted connection's
 * link to its listener is rt_cm.c's, undone before and after this. */
void rt_conn_free(struct rt_conn *conn);

#endif /* RT_SETUP_H */
