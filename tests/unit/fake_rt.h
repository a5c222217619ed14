/*
 * fake_rt.h - a link-time fake of the transport layer (rt_conn.h, rt_buf.h,
 * rt_reg.h) for host tests of src/rpc, and the peer's side of it.
 *
 * fake_rt.c defines every rt_* function of those headers (rt_err.c is
 * linked as it is) over an in-memory connection: no verbs, no device, no
 * network.  The code under test sees an established connection; the test
 * plays the peer through the fake_* functions below:
 *   - it injects Receives (raw octets, optionally Send With Invalidate) and
 *     reads back every Send the code under test posted, with its inv_rkey;
 *   - it sees every exposure (rt_reg_expose: address, length, access, the
 *     handle given) and every revocation, with a sequence number that
 *     orders them against the test's own marks (fake_mark);
 *   - it RDMA-reads and -writes the exposed memory as the peer would, and
 *     only while the exposure is live and grants that access;
 *   - it provides the peer's memory that the code under test RDMA-reads and
 *     -writes (fake_peer_mem), addressed by the handles in the segments;
 *   - it completes, holds or fails work, and ends the connection.
 * Connection parameters (RFC 8797 private data of the peer, so the inline
 * thresholds; ORD; registration mode; Send buffers) come from fake_cfg(),
 * read when a connection is made (rt_connect or fake_conn_new).
 *
 * What the real transport promises and the fake keeps: events come out of
 * rt_conn_poll() in the order things happened, rt_conn_fd() is an eventfd
 * readable exactly while events are pending, work completes in posting
 * order, a failed completion ends the connection (RT_EV_DEAD after the
 * failed work's own event, flushed ECONNRESET events after it), Send
 * buffers come back when their Send completes, the credit state of the
 * requester starts at one credit and the responder's "posted" follows the
 * Receives really posted.  What the code under test does wrong with the
 * transport's contract (an unknown buffer or key, a buffer freed while
 * exposed, a Receive posted twice, a call on a destroyed connection) is
 * counted as a misuse (fake_misuses), which the tests assert to be 0.
 *
 * Threading: every function may be called from any thread; one recursive
 * lock guards the fake.  The on_send hook runs inside rt_post_send(), with
 * that lock (and possibly the code under test's own) held: it may call
 * fake_* functions only.
 */
#ifndef TESTS_FAKE_RT_H
#define TESTS_FAKE_RT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/rt_buf.h"
#include "transport/rt_conn.h"
#include "transport/rt_reg.h"
#include "wire/rw_cm.h"

/* One Send the code under test posted, as the peer received it. */
struct fake_msg {
	uint8_t *data;
	uint32_t len;
	uint32_t inv_rkey;     /* Send With Invalidate: the handle, else 0 */
	uint64_t seq;	       /* when it was posted (fake_mark order) */
	uint32_t recvs_posted; /* Receives posted at that moment */
};

struct fake_cfg {
	/* The peer's RFC 8797 private data; the inline thresholds are
	 * negotiated from it and the connection's attributes
	 * (rw_cm_negotiate).  Default: valid, 4096 both ways, accepts Send
	 * With Invalidate. */
	struct rw_cm_private peer_priv;
	unsigned int ord, ird;	   /* default 4 and 4 */
	enum rt_reg_mode reg_mode; /* what RT_REG_AUTO becomes (MW) */
	bool no_windows;	   /* the "device" has no memory windows */
	bool no_send_inv;	   /* ... cannot Send With Invalidate */
	int connect_err;	   /* rt_connect() fails with this errno */
	/* Sends stay in flight until fake_complete_sends(), RDMA Reads until
	 * fake_complete_reads(): or until the code under test waits for them
	 * (blocks in rt_conn_poll(), or finds every Send buffer queued behind
	 * them in rt_sbuf_get()), which lets time pass for the peer too and
	 * completes them all, as a real peer would in the end. */
	bool hold_sends;
	bool hold_reads;
	bool revoke_fails; /* a revocation closes the connection
					 * and returns -EIO (V1-ERR-12) */
	/* Called for every Send as the peer receives it (scripted peer). */
	void (*on_send)(struct rt_conn *c, const struct fake_msg *m, void *arg);
	void *peer_arg;
};

/* One exposure (rt_reg_expose) and what became of it. */
struct fake_reg {
	uint32_t set_id; /* the rt_regset's number, from 1 */
	uint32_t handle;
	void *addr;
	size_t len;
	enum rt_access acc;
	bool live;
	bool remote_inv; /* fenced by the peer's Send With Invalidate */
	uint64_t seq_expose, seq_revoke;
};

/* Forget everything (every connection, log and setting), free all the fake
 * holds; the settings go back to their defaults. */
void fake_reset(void);

/* The settings for connections made from now on. */
struct fake_cfg *fake_cfg(void);

/* A new sequence number: orders the test's own moments against the
 * fake's records (exposures, revocations, Sends). */
uint64_t fake_mark(void);

/* Misuses of the transport's contract seen so far, and the first one. */
unsigned int fake_misuses(void);
const char *fake_misuse_msg(void);

/* ---- Connections ------------------------------------------------------ */

/* An accepted, established connection (responder side), as the listener
 * would hand it over; attr NULL: defaults. */
struct rt_conn *fake_conn_new(const struct rt_conn_attr *attr);

/* rt_connect() calls so far (failed ones included), and the connection the
 * last successful one returned. */
unsigned int fake_connects(void);
struct rt_conn *fake_last_conn(void);

/* The attributes the connection was made with (after normalization). */
const struct rt_conn_attr *fake_conn_attr(const struct rt_conn *c);

bool fake_destroyed(const struct rt_conn *c);
unsigned int fake_disconnects(const struct rt_conn *c);

/* End the connection as a failure would: RT_EV_DEAD, -ENOTCONN. */
void fake_kill(struct rt_conn *c, int code, const char *msg);

/* ---- The peer sends, we receive ---------------------------------------- */

/*
 * Deliver a message into a posted Receive.  inv_rkey != 0 delivers it as
 * Send With Invalidate of that handle (a live window of ours is then
 * fenced by the "device").  -ENOBUFS: no Receive posted; -EMSGSIZE: longer
 * than the Receive buffer (the connection ends, as on a real one);
 * -ENOTCONN: dead.
 */
int fake_recv(struct rt_conn *c, const void *data, uint32_t len,
	      uint32_t inv_rkey);

/* ---- We send, the peer receives ---------------------------------------- */

unsigned int fake_nsends(const struct rt_conn *c);
const struct fake_msg *fake_send(const struct rt_conn *c, unsigned int i);
/* The same, copied under the fake's lock (safe while the code under test
 * posts more Sends on other threads); false if there is no Send i. */
bool fake_send_get(const struct rt_conn *c, unsigned int i,
		   struct fake_msg *out);
/* Wait up to timeout_ms until at least n Sends were posted. */
bool fake_wait_sends(const struct rt_conn *c, unsigned int n, int timeout_ms);
/* Drop the log (the count starts again at 0). */
void fake_sends_clear(struct rt_conn *c);

/* Complete the n oldest Sends held by hold_sends (all: n = 0) with
 * status 0 or an errno (a failure ends the connection). */
void fake_complete_sends(struct rt_conn *c, unsigned int n, int status);

/* ---- Our exposures, as the peer sees them ------------------------------ */

unsigned int fake_nregs(const struct rt_conn *c);
const struct fake_reg *fake_reg(const struct rt_conn *c, unsigned int i);
const struct fake_reg *fake_reg_find(const struct rt_conn *c, uint32_t handle);
unsigned int fake_live_regs(const struct rt_conn *c);

/* The peer's RDMA Read / Write of our memory through segment seg (only
 * length octets): 0, or -EACCES when no live exposure with that access
 * covers it (the peer would get a remote access error). */
int fake_peer_rdma_read(struct rt_conn *c, const struct rw_segment *seg,
			void *out);
int fake_peer_rdma_write(struct rt_conn *c, const struct rw_segment *seg,
			 const void *in);

/* ---- The peer's memory, for our RDMA Reads and Writes ------------------ */

/*
 * Make buf[0..len) the peer's memory under handle at virtual address
 * offset: our RDMA Reads of such a segment read it, our Writes write it.
 * Any other segment gets a remote access error (the connection ends).
 */
void fake_peer_mem(struct rt_conn *c, uint32_t handle, uint64_t offset,
		   void *buf, size_t len);

/* RDMA Read work requests and octets posted so far; Writes likewise, and
 * the octets of each Write in order (fake_write_len). */
unsigned int fake_nreads(const struct rt_conn *c);
unsigned int fake_nwrites(const struct rt_conn *c);
uint32_t fake_write_len(const struct rt_conn *c, unsigned int i);
const struct rw_segment *fake_write_seg(const struct rt_conn *c,
					unsigned int i);
/* RDMA Reads posted and not completed (hold_reads). */
unsigned int fake_reads_held(const struct rt_conn *c);

/* Complete the n oldest held Reads (all: n = 0) with status 0 or an
 * errno (a failure ends the connection, as on a real one). */
void fake_complete_reads(struct rt_conn *c, unsigned int n, int status);

/* Local memory (rt_lmem) live now, and allocated in all. */
unsigned int fake_lmem_live(const struct rt_conn *c);
unsigned int fake_lmem_allocs(const struct rt_conn *c);

/* ---- Listener (for a listener in src/rpc) ------------------------------ */

/* Queue c as a connection request rt_listener_process() accepts. */
void fake_listener_offer(struct rt_listener *l, struct rt_conn *c);

#endif /* TESTS_FAKE_RT_H */
