/*
 * rr_listen.c - the server's listener for the glue (rr_listen.h): the
 * transport's listener and accepted connections passed through unchanged,
 * so that src/glue reaches the network only through src/rpc.
 */
#include "config.h"

#include "rpc/rr_listen.h"

void rr_conn_attr_init(struct rt_conn_attr *a)
{
	rt_conn_attr_init(a);
}

struct rt_listener *rr_listen(const struct sockaddr *addr, int backlog,
			      const struct rt_conn_attr *attr,
			      struct rt_err *err)
{
	return rt_listen(addr, backlog, attr, err);
}

int rr_listener_fd(const struct rt_listener *l)
{
	return rt_listener_fd(l);
}

uint16_t rr_listener_port(const struct rt_listener *l)
{
	return rt_listener_port(l);
}

int rr_listener_accept(struct rt_listener *l, struct rt_conn **newc,
		       unsigned int max, struct rt_err *err)
{
	return rt_listener_process(l, newc, max, err);
}

unsigned int rr_listener_woken(struct rt_listener *l, int *fds,
			       unsigned int max)
{
	return rt_listener_woken(l, fds, max);
}

void rr_listener_destroy(struct rt_listener *l)
{
	rt_listener_destroy(l);
}

void rr_conn_refuse(struct rt_conn *c)
{
	rt_conn_destroy(c);
}

const struct sockaddr *rr_conn_peer_addr(const struct rt_conn *c)
{
	return rt_conn_peer_addr(c);
}

const struct sockaddr *rr_conn_local_addr(const struct rt_conn *c)
{
	return rt_conn_local_addr(c);
}

const char *rr_addr_str(const struct sockaddr *sa, int with_port,
			char buf[RR_ADDR_STRLEN])
{
	return rt_addr_str(sa, with_port, buf);
}

bool rr_addr_same_host(const struct sockaddr *a, const struct sockaddr *b)
{
	return rt_addr_same_host(a, b);
}
