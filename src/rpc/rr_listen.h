/*
 * rr_listen.h - the server's listener and its accepted connections as the
 * glue sees them (prefix rr_): the server gets its connections through
 * src/rpc as the client does (rr_clnt_create), so that src/glue calls
 * nothing in src/transport.
 *
 * These are thin wrappers over the transport's listener interface
 * (rt_conn.h, "Server"), with its threading rules: a listener is used by
 * one thread at a time; an accepted connection is handed to
 * rr_srv_create() or refused with rr_conn_refuse().
 */
#ifndef RR_LISTEN_H
#define RR_LISTEN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "transport/rt_conn.h"
#include "transport/rt_err.h"

/* Room for an address as text (rr_addr_str). */
#define RR_ADDR_STRLEN RT_ADDR_STRLEN

/* The defaults of a connection's parameters (rt_conn_attr_init()). */
void rr_conn_attr_init(struct rt_conn_attr *a);

/* Listen on addr (port 0: a free one) with attr for every connection it
 * accepts; NULL with err set if it cannot. */
struct rt_listener *rr_listen(const struct sockaddr *addr, int backlog,
			      const struct rt_conn_attr *attr,
			      struct rt_err *err);

/* Its fd, readable when rr_listener_accept() has work. */
int rr_listener_fd(const struct rt_listener *l);

/* The bound port, host order. */
uint16_t rr_listener_port(const struct rt_listener *l);

/* Up to max new connections into newc without blocking; their number, or
 * -errno when the listener itself failed (rt_listener_process()). */
int rr_listener_accept(struct rt_listener *l, struct rt_conn **newc,
		       unsigned int max, struct rt_err *err);

/* The fds of connections rr_listener_accept() woke for their completions
 * (rt_listener_woken()): readable, perhaps no longer a connection's. */
unsigned int rr_listener_woken(struct rt_listener *l, int *fds,
			       unsigned int max);

/* Stop listening; accepted connections live on. */
void rr_listener_destroy(struct rt_listener *l);

/* An accepted connection the server will not serve: closed at once. */
void rr_conn_refuse(struct rt_conn *c);

/* The addresses of an accepted connection. */
const struct sockaddr *rr_conn_peer_addr(const struct rt_conn *c);
const struct sockaddr *rr_conn_local_addr(const struct rt_conn *c);

/* sa as text, with the port if with_port. */
const char *rr_addr_str(const struct sockaddr *sa, int with_port,
			char buf[RR_ADDR_STRLEN]);

/* Do a and b name the same host (ports aside)? */
bool rr_addr_same_host(const struct sockaddr *a, const struct sockaddr *b);

#endif /* RR_LISTEN_H */
