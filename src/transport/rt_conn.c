/*
 * rt_conn.c - the accessors of rt_conn.h: a connection's attributes, state
 * and negotiated parameters, read by the layers above.  Calls nothing of
 * the other units: everything in src/transport may include rt_conn.h.
 * Setting a connection up and freeing it is rt_setup.c's, ending it
 * rt_state.c's, connecting and accepting rt_cm.c's.
 */
#include <string.h>

#include "transport/rt_priv.h"

void rt_conn_attr_init(struct rt_conn_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->inline_send = 4096;
	a->inline_recv = 4096;
	a->credits = 32;
	a->recv_extra = 0;
	a->send_bufs = 0; /* credits + 8 */
	a->rdma_depth = 16;
	a->signal_every = 16;
	a->timeout_ms = 5000;
	a->reg_mode = RT_REG_AUTO;
	a->cache_bytes = RT_CACHE_BYTES;
}

int rt_conn_fd(const struct rt_conn *conn)
{
	return conn->epfd >= 0 ? conn->epfd : conn->wakefd;
}

enum rt_state rt_conn_state(const struct rt_conn *conn)
{
	if (conn->dead || atomic_load(&conn->ext_dead))
		return RT_CONN_DEAD;
	if (conn->up || atomic_load(&conn->ext_up))
		return RT_CONN_UP;
	return RT_CONN_ACCEPTING;
}

const struct rt_err *rt_conn_error(const struct rt_conn *conn)
{
	if (!conn->dead &&
	    atomic_load_explicit(&conn->ext_dead, memory_order_acquire))
		return &conn->ext_err;
	return &conn->err;
}

bool rt_conn_peer_fault(const struct rt_conn *conn, uint64_t *cookie)
{
	if (conn->peer_fault)
		*cookie = conn->peer_fault_cookie;
	return conn->peer_fault;
}

const struct rw_cm_inline *rt_conn_inline(const struct rt_conn *conn)
{
	return &conn->inl;
}

uint32_t rt_conn_set_inline_send(struct rt_conn *conn, uint32_t send)
{
	conn->inl.send = send < conn->attr.inline_send ? send :
							 conn->attr.inline_send;
	return conn->inl.send;
}

bool rt_conn_can_send_inv(const struct rt_conn *conn)
{
	return conn->dev_send_inv;
}

const struct rw_cm_private *rt_conn_peer_private(const struct rt_conn *conn)
{
	return &conn->peer_pd;
}

const struct rw_cm_private *rt_conn_local_private(const struct rt_conn *conn)
{
	return &conn->local_pd;
}

const struct sockaddr *rt_conn_peer_addr(const struct rt_conn *conn)
{
	return (const struct sockaddr *)&conn->peer_addr;
}

const struct sockaddr *rt_conn_local_addr(const struct rt_conn *conn)
{
	return (const struct sockaddr *)&conn->local_addr;
}

uint32_t rt_conn_trace_id(const struct rt_conn *conn)
{
	return conn->trace_id;
}

const char *rt_conn_device(const struct rt_conn *conn)
{
	return conn->devname;
}

unsigned int rt_conn_ord(const struct rt_conn *conn)
{
	return conn->ord;
}

unsigned int rt_conn_ird(const struct rt_conn *conn)
{
	return conn->ird;
}

struct rw_credits *rt_conn_credits(struct rt_conn *conn)
{
	return &conn->credits;
}

struct rw_srv_credits *rt_conn_srv_credits(struct rt_conn *conn)
{
	return &conn->srv_credits;
}

unsigned int rt_conn_recvs_posted(const struct rt_conn *conn)
{
	return conn->rposted;
}

void rt_conn_stats(const struct rt_conn *conn, struct rt_stats *out)
{
	*out = conn->st;
}

size_t rt_conn_cache_bytes(const struct rt_conn *conn)
{
	return conn->cached;
}
