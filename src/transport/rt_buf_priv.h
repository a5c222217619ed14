/*
 * rt_buf_priv.h - what rt_buf.c offers the rest of src/transport besides
 * rt_buf.h: the pools' setup and teardown, Receive posting, Send buffers
 * given back by the send queue, and local memory for rt_reg's pool.
 */
#ifndef RT_BUF_PRIV_H
#define RT_BUF_PRIV_H

#include "transport/rt_buf.h"
#include "transport/rt_priv.h"

int rt_buf_setup(struct rt_conn *c, struct rt_err *err);
int rt_buf_post_all_recvs(struct rt_conn *c, struct rt_err *err);
void rt_buf_sbuf_reclaim(struct rt_conn *c, struct rt_sbuf *b);
void rt_buf_free(struct rt_conn *c);
struct rt_lmem *rt_lmem_get(struct rt_conn *c, size_t len, bool regbuf,
			    struct rt_err *err);

/*
 * Hook, implemented above (rt_reg.c) and called from a Receive completion
 * that carries Send With Invalidate: the peer fenced the window with this
 * handle.  Declared here so that rt_buf.c does not include rt_reg's headers.
 */
void rt_reg_peer_invalidated(struct rt_conn *c, uint32_t rkey);

#endif /* RT_BUF_PRIV_H */
