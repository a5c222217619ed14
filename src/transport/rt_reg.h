/*
 * rt_reg.h - chunk memory registration and fencing (RFC 8166 §4.4, V1-MR-*,
 * V1-SEC-*, V1-ERR-12).  The only module that gives the peer access to our
 * memory, and the only one that takes it away.
 *
 * Model
 *   A requester exposes the memory of each RPC's chunks while that RPC is
 *   outstanding and revokes it before the RPC completes to its caller:
 *       set = rt_regset_create(conn)            once per RPC slot
 *       n = rt_reg_expose(set, buf, len, RT_REMOTE_WRITE, segs, max, err)
 *       ... encode segs into the Call, send, receive the Reply ...
 *       rt_reg_revoke(set, reply_inv_rkey, err) before anyone looks at buf
 *   The same rt_reg_revoke() serves a normal Reply, a timeout, an abort and
 *   a lost connection; when it returns, no handle of the set works any more:
 *   either every window was invalidated and every per-RPC MR deregistered,
 *   or the connection has been closed (queue pair in the error state) and
 *   the windows deallocated.  A failed local
 *   invalidation closes the connection before rt_reg_revoke() returns
 *   (V1-ERR-12), and rt_reg_revoke() then returns -errno with the cause.
 *
 * Access rights: RT_REMOTE_READ (a Read chunk: the peer reads) exposes with
 *   IBV_ACCESS_REMOTE_READ only; RT_REMOTE_WRITE (a Write or Reply chunk)
 *   with IBV_ACCESS_REMOTE_WRITE (and the local write it requires) only.
 *   Never remote atomics, never both unless both are asked for.
 *
 * Modes (rt_reg_mode(), RT_REG_* in rt_conn.h)
 *   RT_REG_MW  type 2 memory windows (the userspace analogue of FRWR):
 *              memory of rt_reg_buf_alloc() is registered once with
 *              IBV_ACCESS_MW_BIND | LOCAL_WRITE and no remote access; an
 *              exposure binds a window over it (IBV_WR_BIND_MW, fresh key
 *              byte each time, posted ahead of the Send that advertises it)
 *              and revocation posts IBV_WR_LOCAL_INV and waits for it.
 *              Memory outside
 *              the pool is registered for the RPC (MW_BIND, no remote
 *              access) and a window bound over that, so every handle of the
 *              connection is a window; this costs a registration and is
 *              counted, so keep chunk data in rt_reg_buf_alloc() memory.
 *   RT_REG_MR  one ibv_reg_mr with exactly the remote rights per exposure,
 *              ibv_dereg_mr at revocation (synchronous).  Used where the
 *              device lacks type 2 windows.  Handles cannot be invalidated
 *              remotely: rt_regset_inv_handle() is 0 and the connection does
 *              not advertise Send With Invalidate.
 *   The mode is chosen per connection when it is created: attr.reg_mode,
 *   else the environment variable RPCRDMA_REG_MODE=mw|mr, else MW if the
 *   device has IBV_DEVICE_MEM_WINDOW_TYPE_2A/2B and a window can really be
 *   allocated, else MR.  Forcing MW on a device without windows fails the
 *   connection with a message saying so.
 *
 * Remote invalidation: every Receive completion that carries
 *   IBV_WC_WITH_INV is looked at by the layer itself, and the window whose
 *   handle is exactly its invalidated_rkey is recorded as fenced (the
 *   device did it); rt_reg_revoke() does not invalidate it again and counts
 *   it in rt_stats.remote_invs.  Any other window is invalidated locally.
 *   No handle is taken on the peer's word: only a completion names it.  (The
 *   glue still checks, for RPC-over-RDMA v2, that the handle the peer
 *   invalidated is the one its Call nominated: RT_EV_RECV carries it.)
 *   Invalidating a window twice must be avoided anyway: Soft-RoCE on Linux
 *   6.1 dereferences NULL when a free window is invalidated.
 *
 * Segments: one handle covers the whole range; ranges longer than
 * RT_REG_MAX_SEG are split into several segments with the same handle
 * (rw_segment.length is 32 bits).  Offsets are virtual addresses.
 *
 * All calls follow the connection's threading rules (rt_conn.h).
 */
#ifndef RT_REG_H
#define RT_REG_H

#include <stddef.h>
#include <stdint.h>

#include "transport/rt_conn.h"

struct rt_regset;

enum rt_access {
	RT_REMOTE_READ = 0x1,  /* the peer may RDMA Read (Read chunk) */
	RT_REMOTE_WRITE = 0x2, /* the peer may RDMA Write (Write/Reply) */
};

#define RT_REG_MAX_SEG (1u << 30)

/* A set of exposures belonging to one RPC; reusable after each revoke. */
struct rt_regset *rt_regset_create(struct rt_conn *c, struct rt_err *err);

/* Revoke (as rt_reg_revoke()) and free. */
void rt_regset_destroy(struct rt_regset *s);

/*
 * Expose [addr, addr + len) with access acc for the set's RPC.  Stores the
 * segments to advertise in segs[0..max) and returns their number (>= 1), or
 * -errno with err set (nothing exposed): -E2BIG when max is too small,
 * -ENOTCONN on a dead connection, -EINVAL for len 0 or a bad acc.
 */
int rt_reg_expose(struct rt_regset *s, void *addr, size_t len,
		  enum rt_access acc, struct rw_segment *segs, unsigned int max,
		  struct rt_err *err);

/*
 * The handle a Call may nominate for remote invalidation (RPC-over-RDMA v2
 * rdma_inv_handle; in v1 the peer may use any handle if the set has only
 * one): the set's handle if it has exactly one window, else 0.
 */
uint32_t rt_regset_inv_handle(const struct rt_regset *s);

/*
 * A handle an RPC-over-RDMA v2 Call may nominate (V2-RI-1, V2-RI-6): one of
 * the set's windows, whatever their number (the others are invalidated
 * locally, as always), or 0 when the set has none (MR mode: a registered
 * region cannot be invalidated remotely, V2-RI-2).
 */
uint32_t rt_regset_inv_any(const struct rt_regset *s);

/* Number of live exposures in the set. */
unsigned int rt_regset_count(const struct rt_regset *s);

/*
 * Fence every exposure of the set (windows the peer invalidated with Send
 * With Invalidate, as reported by their Receive completions, need nothing
 * more; completions not yet collected are reaped first).  Returns 0, or
 * -errno if fencing needed closing the connection (err says why).  Either
 * way nothing of the set is accessible to the peer when it returns, and the
 * set is empty and reusable.  Bounded wait (RT_REG_REVOKE_TIMEOUT_MS, then
 * the connection is closed).
 */
#define RT_REG_REVOKE_TIMEOUT_MS 5000
int rt_reg_revoke(struct rt_regset *s, struct rt_err *err);

/* The connection's registration mode (never RT_REG_AUTO). */
enum rt_reg_mode rt_reg_mode(const struct rt_conn *c);
const char *rt_reg_mode_name(enum rt_reg_mode m);

/*
 * Change the mode of a live connection (the glue's control request).  Only
 * while no exposure is live (-EBUSY).  MW needs window support (-ENOTSUP);
 * leaving MW for MR is refused (-EINVAL) once the connection has advertised
 * Send With Invalidate, since the peer could then invalidate a handle that
 * is not a window.  RT_REG_AUTO selects the default again.
 */
int rt_reg_set_mode(struct rt_conn *c, enum rt_reg_mode m, struct rt_err *err);

/*
 * Chunk memory from the connection's pre-registered pool (local access
 * only; the cheap path of MW mode).  NULL with err set on failure.  Freed
 * memory is kept registered for reuse while the connection's cache has
 * room (attr.cache_bytes, shared with rt_lmem_alloc(): rt_buf.h), else
 * deregistered and given back.  Must not be freed while exposed.
 */
void *rt_reg_buf_alloc(struct rt_conn *c, size_t len, struct rt_err *err);
void rt_reg_buf_free(struct rt_conn *c, void *p);

#endif /* RT_REG_H */
