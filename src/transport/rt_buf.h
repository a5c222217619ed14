/*
 * rt_buf.h - buffers of one connection: Send and Receive buffers, and local
 * memory for RDMA Read sinks and RDMA Write sources.
 *
 * All of it is registered on the connection's own protection domain with
 * LOCAL access only: none of it is ever advertised to the peer (memory the
 * peer may touch is exposed through rt_reg.h, per RPC).
 *
 * Send buffers: attr.send_bufs of them, each of the local inline send size,
 * registered once.  rt_sbuf_get() hands one out; rt_post_send() takes it
 * back and the layer reclaims it when the Send (or a later signalled work
 * request) has completed.
 *
 * Receive buffers: attr.credits + attr.recv_extra of them, each of the local
 * inline receive size (>= 1024), registered once and all posted before the
 * connection can receive anything (V1-RB-1).  RT_EV_RECV lends one to the
 * caller; rt_recv_repost() posts it again.  A lent Receive counts toward
 * the grant (rw_srv_credits.posted): a responder that decodes a Call in
 * place must post its buffer again before it sends anything that answers
 * the Call.
 *
 * Local memory (responder side; the choice made here): two ways, both
 * LOCAL access only.
 *   - rt_lmem_alloc(): memory owned by the layer, registered once and cached
 *     per connection in power-of-two size classes, so steady-state RDMA Read
 *     sinks (argument chunks pulled by a server) cost no registration.  The
 *     cache holds at most attr.cache_bytes idle octets (rt_conn.h,
 *     RT_CACHE_BYTES); a buffer freed beyond that is deregistered and its
 *     pages given back to the system (rt_stats.cache_released).
 *   - rt_lmem_map(): the caller's own memory registered for this request
 *     (e.g. a large result to RDMA Write without a copy); one
 *     ibv_reg_mr/ibv_dereg_mr pair per use.
 * On iWARP an RDMA Read sink also needs remote write access
 * (doc/architecture.md, "Who may grant remote access"):
 * rt_post_read() has rt_reg.c register the sink for that Read alone, so
 * this memory itself never has it.
 * Memory must not be freed while a work request using it is outstanding
 * (wait for its RT_EV_*_DONE, or for a later signalled Send's).
 */
#ifndef RT_BUF_H
#define RT_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/rt_conn.h"

/*
 * A free Send buffer, or NULL if all are in use (-EAGAIN in err) or the
 * connection is dead (-ENOTCONN).  When all are in flight, completions are
 * reaped first, so NULL means the caller must wait (rt_conn_poll()).
 */
struct rt_sbuf *rt_sbuf_get(struct rt_conn *c, struct rt_err *err);

/* Give back a buffer that will not be sent. */
void rt_sbuf_put(struct rt_conn *c, struct rt_sbuf *b);

void *rt_sbuf_data(const struct rt_sbuf *b);
uint32_t rt_sbuf_size(const struct rt_sbuf *b);

/*
 * Post a Receive buffer again once its message has been consumed.  On a
 * dead connection the buffer is simply kept.  Returns 0 or -errno (a post
 * failure ends the connection).
 */
int rt_recv_repost(struct rt_conn *c, struct rt_rbuf *b);

struct rt_lmem;

/* len octets of registered memory owned by the layer (contents undefined). */
struct rt_lmem *rt_lmem_alloc(struct rt_conn *c, size_t len,
			      struct rt_err *err);

/* Register the caller's [addr, addr + len) locally; writable: it will be
 * an RDMA Read sink (local write), else a source only. */
struct rt_lmem *rt_lmem_map(struct rt_conn *c, void *addr, size_t len,
			    bool writable, struct rt_err *err);

/* Release either kind (an allocated one goes back to the cache). */
void rt_lmem_free(struct rt_conn *c, struct rt_lmem *m);

void *rt_lmem_addr(const struct rt_lmem *m);
size_t rt_lmem_len(const struct rt_lmem *m);
uint32_t rt_lmem_lkey(const struct rt_lmem *m);

/* An rt_sge covering [addr, addr + len) of m (must lie within it). */
struct rt_sge rt_lmem_sge(const struct rt_lmem *m, void *addr, uint32_t len);

#endif /* RT_BUF_H */
