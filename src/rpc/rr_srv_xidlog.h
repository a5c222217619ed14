/*
 * rr_srv_xidlog.h - the responder's record of Calls whose processing failed
 * for an operational reason (RFC 8166 §4.5.3-4.5.5, V1-ERR-11).
 *
 * An RDMA Read or Write that the requester's device refuses (a stale
 * handle, a chunk shorter than it said), or a Send its Receive is too small
 * for, ends the connection.  A requester that reconnects and sends the
 * same XID again would fail the same way, for ever.  So the responder
 * notes the XID with the requester's address, and when that XID comes
 * again from that address on a new connection it answers RDMA_ERROR /
 * ERR_CHUNK ("no reply is possible") instead of processing it, once.
 *
 * The record belongs to a listener and is shared by the connections it
 * accepts (rr_srv_opts.xidlog), so it outlives them; it holds the latest
 * RR_XIDLOG_SIZE failures for RR_XIDLOG_TTL_S seconds and is thread-safe.
 * Failures of the link (retries exhausted, flushes) are not recorded: a
 * retransmission is the recovery for those (RFC 8166 §4.5.3-4.5.5).
 */
#ifndef RR_SRV_XIDLOG_H
#define RR_SRV_XIDLOG_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#define RR_XIDLOG_SIZE	64
#define RR_XIDLOG_TTL_S 300

struct rr_xidlog;
struct rr_srv;
struct rr_sreq;

/* An empty record, or NULL (out of memory). */
struct rr_xidlog *rr_xidlog_create(void);
void rr_xidlog_destroy(struct rr_xidlog *log);

/* Note that xid from peer's host (any port) failed; the oldest entry goes
 * when the record is full. */
void rr_xidlog_add(struct rr_xidlog *log, const struct sockaddr *peer,
		   uint32_t xid);

/* True, and the entry forgotten, if xid from peer's host is recorded and
 * younger than RR_XIDLOG_TTL_S. */
bool rr_xidlog_take(struct rr_xidlog *log, const struct sockaddr *peer,
		    uint32_t xid);

/* ---- Hooks of the responder (rr_serve.c, rr_srv_recv.c) ----------------- */

/* srv's connection ended with work of req refused by the peer's device
 * (rt_conn_peer_fault): record req's XID.  req may be NULL (nothing to do). */
void rr_srv_xid_failed(struct rr_srv *srv, struct rr_sreq *req);

/* req is a retransmission of a recorded XID: true, with req answered by
 * ERR_CHUNK (queued); false to process it. */
bool rr_srv_xid_refuse(struct rr_srv *srv, struct rr_sreq *req);

#endif /* RR_SRV_XIDLOG_H */
