/*
 * t_svc_util.h - helpers of the server-side VM tests: check lines, the
 * rtest_server process (start it, wait for its "listening" line, stop it
 * with SIGTERM and judge its exit status: under the ASan build a leak makes
 * it non-zero), and a raw RPC-over-RDMA client built on the transport (rt_)
 * and wire (rw_) layers.  The raw client can send anything, valid or not,
 * and returns what the server answered both as bytes and decoded, so tests
 * can check the exact wire format (doc/requirements.md §6).
 */
#ifndef T_SVC_UTIL_H
#define T_SVC_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <rpc/rpc.h>

#include "tests/vm/t_util.h"
#include "transport/rt_buf.h"
#include "transport/rt_conn.h"
#include "transport/rt_reg.h"
#include "wire/rw_role.h"

#define TS_TIMEOUT_MS 20000

/* ---- Checks ------------------------------------------------------------ */

/* Checks and notes: CHECK, CHECK_OK, NOTE (t_util.h). */
#define ts_now_ms() tu_now_ms()
#define ts_now_us() tu_now_us()
/* Exit 1 with a FAIL line if the program runs longer than seconds. */
#define ts_watchdog(seconds) \
	tu_watchdog((seconds), "FAIL - watchdog: test ran too long\n", 1)
/* Device present?  Prints the skip line and returns false if not. */
bool ts_have_rdma(void);
const char *ts_addr4(void);
const char *ts_addr6(void);

/* The rtest pattern (t_util.h). */
#define ts_fill(buf, len, seed)	      tu_fill((buf), (len), (seed))
#define ts_check_fill(buf, len, seed) tu_fill_check((buf), (len), (seed))

/* ---- The server process ------------------------------------------------- */

struct ts_server {
	pid_t pid;
	int out; /* its stdout */
	uint16_t port;
	char host[64];
};

/*
 * Start rtest_server (from $RTEST_SERVER, else next to this program) on
 * host, port 0, with the extra arguments args (NULL-terminated, may be
 * NULL), and wait for its "listening on ... port N" line.  0 or -1.
 */
int ts_server_start(struct ts_server *s, const char *host,
		    const char *const *args);

/* SIGTERM, then wait (SIGKILL after 30 s).  The exit status, or -1 if it
 * died by a signal or had to be killed. */
int ts_server_stop(struct ts_server *s);

/* A /proc/PID/status field in kB (e.g. "VmHWM"), or -1. */
long ts_proc_kb(pid_t pid, const char *field);

/* The fds process pid holds (/proc/PID/fd), or -1. */
int ts_proc_fds(pid_t pid);

/* ---- Raw client ----------------------------------------------------------- */

struct tc {
	struct rt_conn *c;
	struct rt_regset *rs;
	uint32_t xid;
	uint32_t grant; /* latest non-zero grant */
	/* Set after tc_connect(): shown every message tc_recv() takes,
	 * including those tc_rpc() passes over while it waits. */
	void (*on_recv)(void *arg, const uint8_t *msg, uint32_t len);
	void *on_recv_arg;
};

/* Connect, retrying while refused, within timeout_ms.  0 or -errno. */
int tc_connect(struct tc *t, const struct ts_server *s, int timeout_ms);
void tc_close(struct tc *t);
bool tc_dead(struct tc *t);
/* Wait until the connection is dead: ms waited, or -1. */
int tc_wait_dead(struct tc *t, int timeout_ms);

int tc_send(struct tc *t, const void *msg, uint32_t len);
/* The next message: its length, -ETIMEDOUT or -ENOTCONN. */
int tc_recv(struct tc *t, void *buf, uint32_t cap, int timeout_ms);

/* How the Read list lists the Read chunks of the moved items. */
enum tc_reads {
	TC_READS_ASCENDING = 0, /* as a requester must (AMB-V1-6) */
	TC_READS_REVERSED,	/* last chunk first */
	TC_READS_INTERLEAVED,	/* each item in two segments, the chunks'
				 * segments alternating: a1 b1 a2 b2 */
	TC_READS_OVERLAP,	/* the last chunk moved 4 octets after the
				 * first one's position (AMB-V1-5) */
};

/* What to send. */
struct tc_call {
	uint32_t prog, vers; /* 0: rtest */
	uint32_t proc;
	uint32_t xid;	      /* 0: the next one */
	uint32_t payload_xid; /* RPC XID if not the same (0) */
	xdrproc_t xargs;
	void *args;
	AUTH *auth;	    /* NULL: AUTH_NONE */
	bool long_call;	    /* payload in a Position-Zero Read chunk */
	bool read_item;	    /* the first body opaque goes in a Read chunk */
	bool read_item_pad; /* ... with its XDR pad (V1-RC-6) */
	uint64_t read_mask; /* with read_item: the body items moved
				 * (RW_DDP_ITEM bits, at most 4; 0: item 0) */
	enum tc_reads read_order; /* not ASCENDING: the header is encoded
					 * as is, unchecked */
	size_t reply_chunk;	  /* offer a Reply chunk of this size */
	size_t reply_guard;	  /* register this much more behind it, not
				 * exposed, filled with 0xa5 */
	uint32_t write_segs;	  /* offer one Write chunk of this many ... */
	uint32_t write_seg_len;	  /* ... segments of this size */
	uint32_t credit;	  /* requested (0: 32) */
	uint32_t rdma_vers;	  /* RPC-over-RDMA version (0: 1) */
	uint32_t inv_handle;	  /* v2 rdma_inv_handle: TC_INV_REPLY names
				 * the Reply chunk's handle, other values
				 * go as they are */
	int die_after_us;	  /* >= 0 with die: SIGKILL ourselves this long
				 * after posting the Send, chunks exposed */
	bool die;
	bool (*drop_when)(void *); /* polled while the answer is awaited:
					 * when it says true, end the
					 * connection (tc_rpc() returns
					 * -ECONNABORTED; tc_close() it) */
	void *drop_arg;
};

#define TC_INV_REPLY 0xffffffffu

/* What came back. */
struct tc_reply {
	uint8_t raw[8192];
	uint32_t len;
	enum rw_reason why; /* of rw_hdr_decode() */
	struct rw_hdr h;
	struct rw_hdr_space sp;
	bool rpc; /* an RPC reply was decoded */
	uint32_t rpc_xid;
	uint32_t rp_stat; /* MSG_ACCEPTED / MSG_DENIED */
	uint32_t ar_stat; /* accept_stat */
	uint32_t payload_len;
	bool guard_ok;			 /* reply_guard bytes untouched */
	struct rw_segment offered_w[16]; /* the Write chunk offered */
	struct rw_segment offered_r[4];	 /* the Reply chunk offered */
	bool res_ok;			 /* results decoded */
};

/*
 * Send one call and wait for its answer (whatever it is).  0 when an
 * answer arrived, -ETIMEDOUT, -ENOTCONN, -EINVAL (could not build it),
 * -ECONNABORTED (call->drop_when).
 * rep is cleared first (len 0, why RW_R_RUNT): without an answer it holds
 * nothing of an earlier call.
 * Results are decoded into call->... xres/res when the reply is accepted;
 * free them with xdr_free().
 */
int tc_rpc(struct tc *t, const struct tc_call *call, xdrproc_t xres, void *res,
	   struct tc_reply *rep, int timeout_ms);

/* A Short call (RDMA_MSG, no chunks) as bytes: its length, or 0. */
uint32_t tc_short_call(struct tc *t, uint32_t xid, uint32_t proc,
		       xdrproc_t xargs, void *args, void *buf, uint32_t cap);

/* Decode an answer received by hand (chunk buffers not supported). */
void tc_decode(const void *raw, uint32_t len, xdrproc_t xres, void *res,
	       struct tc_reply *rep);

/* Big-endian words of a message, for building headers by hand. */
uint32_t tc_be(uint32_t v);

#endif /* T_SVC_UTIL_H */
