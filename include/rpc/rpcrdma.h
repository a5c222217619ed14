/*
 * rpc/rpcrdma.h - public interface of librpcrdma, the RPC-over-RDMA
 * transport for libtirpc (netids "rdma" and "rdma6").
 *
 * Link with "-lrpcrdma -ltirpc" (in that order), or use
 * "pkg-config --libs librpcrdma".
 */
#ifndef _RPC_RPCRDMA_H
#define _RPC_RPCRDMA_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <rpc/rpc.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version string of the library actually loaded, e.g. "0.2.0". */
const char *rpcrdma_version(void);

/*
 * How chunk memory is exposed to the peer.  AUTO picks memory windows when
 * the device has type 2 windows, else one registration per RPC.  The
 * environment variable RPCRDMA_REG_MODE=mw|mr overrides AUTO.
 */
enum rpcrdma_reg_mode {
	RPCRDMA_REG_AUTO = 0,
	RPCRDMA_REG_MW = 1, /* type 2 memory windows over registered pools */
	RPCRDMA_REG_MR = 2, /* ibv_reg_mr / ibv_dereg_mr per RPC */
};

/*
 * How completions are waited for.  EVENT sleeps on the completion channel;
 * POLL spins on the completion queue (lowest latency, one busy core).  The
 * environment variable RPCRDMA_COMP_MODE=event|poll overrides the default.
 */
enum rpcrdma_comp_mode {
	RPCRDMA_COMP_EVENT = 0,
	RPCRDMA_COMP_POLL = 1,
};

/*
 * The RPC-over-RDMA version spoken (rpcrdma-versions(7)).  AUTO: a CLIENT
 * offers version 2 and goes on in version 1 on the same connection if the
 * server answers ERR_VERS (a server found not to speak version 2 is spoken
 * to in version 1 for a while); a server answers each client in the version
 * it uses.  1 or 2 forces that version: a server then refuses the other
 * with ERR_VERS, a CLIENT fails its calls with RPC_SYSTEMERROR /
 * EPROTONOSUPPORT if the server does not speak it.  The environment
 * variable RPCRDMA_VERSION=1|2|auto overrides AUTO.
 */
enum rpcrdma_version {
	RPCRDMA_VERSION_AUTO = 0,
	RPCRDMA_VERSION_1 = 1,
	RPCRDMA_VERSION_2 = 2,
};

/*
 * Options of clnt_rdma_create() and svc_rdma_create().  Initialize with
 * rpcrdma_attr_init(), then change what you need; 0 keeps a default.
 */
struct rpcrdma_attr {
	unsigned int credits;	  /* client: credits requested; server:
					 * most credits granted per connection
					 * (default 32) */
	unsigned int inline_send; /* largest message sent inline (4096;
					 * the peer may lower it, RFC 8797) */
	unsigned int inline_recv; /* receive buffer size (4096) */
	enum rpcrdma_reg_mode reg_mode;
	enum rpcrdma_comp_mode comp_mode;
	unsigned int connect_timeout_ms; /* address, route, connect (5000) */
	size_t max_reply_size;		 /* client: largest reply it accepts
					 * (256 MiB); a reply of unknown size
					 * that does not fit inline is asked
					 * for again with a Reply chunk */
	size_t max_read_bytes;		 /* server: most octets one request may
					 * ask it to pull by RDMA Read (16 MiB) */
	unsigned int max_conns;		 /* server: connections at once (256) */
	unsigned int max_conns_per_peer; /* server: per client address (64);
					  * a peer at the limit that connects
					  * again has its least recently
					  * used idle connection closed */
	enum rpcrdma_version version;	 /* RPCRDMA_VERSION_AUTO */
	unsigned int bc_credits;	 /* backward-direction calls taken at
					 * once on a connection (client: the
					 * Receives kept for them; 4;
					 * RPCRDMA_BC_NONE: none) */
	unsigned long poll_us;		 /* event mode: most microseconds a
					 * waiting thread polls the
					 * completion queue before it sleeps,
					 * adapted to the peer (default
					 * RPCRDMA_POLL_US, or 500;
					 * RPCRDMA_POLL_NONE: never) */
	unsigned long idle_timeout;	 /* server: seconds a connection may
					 * go without a call before the
					 * server closes it (default
					 * RPCRDMA_IDLE_TIMEOUT, or 360;
					 * RPCRDMA_IDLE_NONE: never) */
	unsigned long reserved[5];	 /* must be zero */
};

/* bc_credits: no backward-direction calls at all (0 keeps the default). */
#define RPCRDMA_BC_NONE (~0u)
/* poll_us: never poll before sleeping (0 keeps the default). */
#define RPCRDMA_POLL_NONE (~0ul)
/* poll_us: the most accepted (one second). */
#define RPCRDMA_POLL_MAX 1000000ul
/* idle_timeout: never close an idle connection (0 keeps the default). */
#define RPCRDMA_IDLE_NONE (~0ul)
/* idle_timeout: the most accepted (one week). */
#define RPCRDMA_IDLE_MAX 604800ul

void rpcrdma_attr_init(struct rpcrdma_attr *attr);

/*
 * Create a CLIENT that talks RPC-over-RDMA to prog/vers at raddr (AF_INET or
 * AF_INET6, with the port the server listens on).  attr may be NULL.
 * Returns NULL with rpc_createerr set and a message naming the cause
 * (clnt_spcreateerror()) on failure.
 */
CLIENT *clnt_rdma_create(const struct sockaddr *raddr, rpcprog_t prog,
			 rpcvers_t vers, const struct rpcrdma_attr *attr);

/*
 * Create a listening SVCXPRT on laddr (wildcard allowed; port 0 picks a free
 * port, see xp_port / xp_ltaddr).  It is registered with svc_run(); accepted
 * connections become SVCXPRTs of their own.  attr may be NULL.  Returns NULL
 * on failure, with errno and rpc_createerr (RPC_SYSTEMERROR, that errno)
 * set; clnt_spcreateerror() names the cause.
 */
SVCXPRT *svc_rdma_create(const struct sockaddr *laddr,
			 const struct rpcrdma_attr *attr);

/*
 * Take the call being dispatched off xprt, a connection SVCXPRT of netid
 * rdma or rdma6 (a dispatch routine's rq_xprt), so that another thread
 * serves it while xprt goes on with the next calls.  The new SVCXPRT owns
 * that call alone: svc_getargs(), svc_sendreply(), svcerr_*(),
 * svc_freeargs() and svc_getrpccaller() work on it from any thread, and
 * svc_destroy() releases it, answered or not (unanswered, the call is
 * dropped).  NULL, the call staying on xprt, if xprt is no such
 * connection, the call uses RPCSEC_GSS, or memory is short;
 * svc_rdma_detach(3).
 */
SVCXPRT *svc_rdma_detach(SVCXPRT *xprt);

/*
 * The backward direction (RFC 8167, rpcrdma_bc(3)): a server calls its
 * client back on the client's own connection.
 *
 * clnt_rdma_bc_create: a CLIENT for prog/vers served by the client of the
 * connection xprt (a connection SVCXPRT of an RDMA server, e.g. a request's
 * rq_xprt), used with clnt_call as usual.  Calls are inline: one larger
 * than the client's Receive buffers fails (RPC_CANTENCODEARGS).  NULL with
 * rpc_createerr set if xprt is not such a connection.
 *
 * svc_rdma_bc_create: an SVCXPRT, registered with svc_run(), that serves
 * the backward calls arriving on cl's connections (cl from
 * clnt_rdma_create() or clnt_create(..., "rdma")): svc_reg() the callback
 * program on it.  Until it exists backward calls are dropped (the program
 * is not ready).  A program that never calls svc_run() polls xp_fd and
 * calls svc_rdma_bc_poll().  NULL with rpc_createerr set if cl is not an
 * RDMA CLIENT or keeps no Receives for backward calls (RPCRDMA_BC_NONE).
 *
 * svc_rdma_bc_poll: wait up to timeout_ms for backward calls on xprt and
 * dispatch them (as svc_getreq_common); 1 if it served, 0 on timeout, -1
 * with errno EINVAL if xprt is not from svc_rdma_bc_create().
 */
CLIENT *clnt_rdma_bc_create(SVCXPRT *xprt, rpcprog_t prog, rpcvers_t vers);
SVCXPRT *svc_rdma_bc_create(CLIENT *cl);
int svc_rdma_bc_poll(SVCXPRT *xprt, int timeout_ms);

/*
 * clnt_control() requests specific to RDMA transports, beyond the CLSET_ and
 * CLGET_ requests of clnt_vc.  Values are chosen far above libtirpc's.
 */
#define CLGET_RDMA_REG_MODE  0x52440001 /* enum rpcrdma_reg_mode * */
#define CLSET_RDMA_REG_MODE  0x52440002 /* enum rpcrdma_reg_mode * */
#define CLGET_RDMA_COMP_MODE 0x52440003 /* enum rpcrdma_comp_mode * */
#define CLSET_RDMA_COMP_MODE 0x52440004 /* enum rpcrdma_comp_mode * */
#define CLGET_RDMA_CREDITS   0x52440005 /* unsigned int *: current grant */
#define CLGET_RDMA_VERSION \
	0x52440008 /* unsigned int *: version of the
						 * current connection, 1 or 2
						 * (0: none yet) */
#define CLGET_RDMA_PEER_PROPS \
	0x52440009 /* struct rpcrdma_props *: the
						 * server's */
#define CLGET_RDMA_CALL_STATS \
	0x5244000a /* struct rpcrdma_clnt_call_stats
						 * *: calls no reply ends */

/*
 * Calls of one CLIENT that no reply of their own ends (CLGET_RDMA_CALL_STATS,
 * clnt_rdma_create(3)): one-way calls (a zero timeout: batching), the NULL
 * calls the library sends so that the server's reply gives back the credits
 * one-way calls hold, and the connections it closed because calls that
 * timed out held every credit.
 */
struct rpcrdma_clnt_call_stats {
	uint64_t oneway_calls; /* calls sent with a zero timeout */
	uint64_t null_calls;   /* NULL calls sent for their credits */
	uint64_t abandoned;    /* calls whose caller stopped waiting (timed
				 * out) */
	uint64_t late_replies; /* replies that came after that */
	uint64_t recoveries;   /* connections closed: timed-out calls held
				 * every credit */
	uint64_t reserved[11]; /* zero */
};

/*
 * Transport properties of the peer of a connection (RPC-over-RDMA version
 * 2): what its CONNPROP/UPDPROP said, or the defaults (received 0).
 */
struct rpcrdma_props {
	uint32_t version;  /* RPC-over-RDMA version of the connection */
	uint32_t received; /* 1 once the peer sent its properties */
	uint32_t rbsiz;	   /* Receive Buffer Size (4096) */
	uint32_t brs;	   /* Backward Request Support: 0 none,
				 * 1 inline (default), 2 general */
	uint32_t reserved[4];
};

/*
 * svc_control() request of RDMA SVCXPRTs (use the SVC_CONTROL() macro on
 * the listening SVCXPRT or on any connection it accepted, e.g. a request's
 * rq_xprt): counters of the server, cumulative over every connection the
 * listener accepted.
 */
#define SVCGET_RDMA_STATS 0x52440101 /* struct rpcrdma_svc_stats * */
/* On a connection SVCXPRT (e.g. a request's rq_xprt): */
#define SVCGET_RDMA_VERSION \
	0x52440102 /* unsigned int *: the version
						 * the client's calls use */
#define SVCGET_RDMA_PEER_PROPS \
	0x52440103 /* struct rpcrdma_props *: the
						 * client's */

struct rpcrdma_svc_stats {
	uint64_t requests;	 /* calls handed to the RPC layer */
	uint64_t replies_inline; /* replies sent inline (RDMA_MSG) */
	uint64_t replies_long;	 /* replies written into a Reply chunk */
	uint64_t err_vers;	 /* RDMA_ERROR/ERR_VERS sent */
	uint64_t err_chunk;	 /* RDMA_ERROR/ERR_CHUNK sent, all causes: */
	uint64_t err_too_big;	 /*   Read chunks over max_read_bytes */
	uint64_t err_no_room; /*   reply larger than inline and Reply chunk */
	uint64_t discarded;   /* messages dropped unanswered (runts, ...) */
	uint64_t dropped;     /* calls the RPC layer did not answer */
	uint64_t read_chunks; /* Read chunks pulled by RDMA Read */
	uint64_t read_bytes;
	uint64_t write_chunks; /* Write chunks filled by RDMA Write */
	uint64_t write_bytes;
	uint64_t reply_chunks; /* Reply chunks filled by RDMA Write */
	uint64_t reply_bytes;
	uint64_t inline_bytes; /* octets received and sent inline */
	uint64_t ddp_copies;   /* DDP items copied between the RPC layer's
				 * memory and registered memory */
	uint64_t ddp_copy_bytes;
	uint64_t err_write_room; /* ERR_CHUNK: a result item larger than its
				 * Write chunk (also in err_chunk) */
	uint32_t max_inflight;	 /* most calls received and not yet answered
				 * on one connection */
	uint32_t max_granted;	 /* largest credit grant sent */
	uint32_t conns_accepted;
	uint32_t conns_rejected; /* over max_conns, or max_conns_per_peer
				 * with every one of the peer's busy */
	uint32_t conns_active;
	uint32_t conns_reaped;	 /* closed by the server: idle past
				 * idle_timeout, or the least recently used
				 * of a peer at max_conns_per_peer */
	uint64_t v2_requests;	 /* calls received in version 2 */
	uint64_t replies_inv;	 /* replies sent With Invalidate */
	uint64_t err_resource;	 /* REPLY_RESOURCE / WRITE_RESOURCE sent
				 * (also in err_chunk) */
	uint64_t replays_done;	 /* resends answered from a kept reply: the
				 * procedure did not run again */
	uint64_t replays_missed; /* replies too large to keep: a resend runs
				 * the procedure again */
	uint64_t bc_calls;	 /* backward calls sent to clients
				 * (clnt_rdma_bc_create) */
	uint64_t bc_replies;	 /* ... answered */
	uint64_t bc_timeouts;	 /* ... given up by their caller */
};
#define CLGET_RDMA_ERRMSG \
	0x52440006 /* char[RPCRDMA_ERRMSG_LEN]: why the
						 * last call failed, one line */
#define RPCRDMA_ERRMSG_LEN 256
#define CLGET_RDMA_STATS   0x52440007 /* struct rpcrdma_clnt_stats * */

/*
 * Counters of one CLIENT (CLGET_RDMA_STATS), cumulative over every
 * connection it made.  With RPCRDMA_STATS=1 in the environment they are
 * printed on stderr when the CLIENT is destroyed or the program exits
 * (rpcrdma-environ(7)).  Octets count RPC message data, never transport
 * headers.
 */
struct rpcrdma_clnt_stats {
	uint64_t calls;	       /* calls sent */
	uint64_t replies;      /* replies accepted */
	uint64_t long_calls;   /* calls sent Long (Position-Zero Read chunk) */
	uint64_t long_replies; /* replies that came in the Reply chunk */
	uint64_t inline_bytes; /* octets sent and received inline */
	uint64_t long_bytes;   /* octets of Long calls, read by the server */
	uint64_t read_chunks;  /* argument items sent as Read chunks */
	uint64_t read_bytes;
	uint64_t write_chunks;	  /* Write chunks offered for result items */
	uint64_t write_bytes;	  /* octets the server placed in them */
	uint64_t reply_chunks;	  /* Reply chunks offered */
	uint64_t reply_bytes;	  /* octets received in Reply chunks */
	uint64_t ddp_zero_copies; /* result items placed straight into the
				 * caller's buffer */
	uint64_t ddp_copies;	  /* result items copied out of a pool buffer */
	uint64_t ddp_copy_bytes;
	uint64_t ddp_caller_regs; /* caller buffers registered for a chunk */
	uint64_t registrations;	  /* memory exposed to the server (windows
				 * bound, regions registered) */
	uint64_t invalidations;	  /* exposures fenced by us */
	uint64_t remote_invalidations; /* ... by the server's Send With
				 * Invalidate */
	uint64_t err_vers;	       /* RDMA_ERROR / ERR_VERS received */
	uint64_t err_chunk;	       /* RDMA_ERROR / ERR_CHUNK received */
	uint64_t timeouts;
	uint64_t discarded;	 /* malformed replies dropped */
	uint64_t conn_losses;	 /* connections found dead */
	uint32_t connects;	 /* connections made */
	uint32_t credits;	 /* credit grant in force now */
	uint32_t max_granted;	 /* largest grant received */
	uint32_t max_inflight;	 /* credits used: most calls outstanding */
	uint64_t v2_calls;	 /* calls sent in version 2 */
	uint64_t vers_fallbacks; /* connections that went on in version 1 */
	uint64_t resends;	 /* calls sent again (same XID) after an
				 * RDMA_ERROR that asked for more room */
	uint64_t inv_nominated;	 /* version 2 calls asking the server to
				 * invalidate a handle remotely */
	uint64_t bc_calls;	 /* backward calls taken from the server
				 * (svc_rdma_bc_create) */
	uint64_t bc_replies;	 /* ... answered */
	uint64_t bc_dropped;	 /* ... dropped: before the program was
				 * ready, with chunks, over the grant */
	uint64_t waits_polled;	 /* event mode: waits for a reply that
				 * polling ended, without sleeping
				 * (rpcrdma_attr_init(3), poll_us) */
};

/* ---------------------------------------------------------------------- */
/*
 * Upper-Layer Bindings (rpcrdma_ulb(3), rpcrdma-ulb.conf(5)).
 *
 * Which data items of a procedure's arguments or results may be moved by
 * RDMA (DDP-eligible, RFC 8166 section 6), and how much room a requester
 * provides for its results.  Without an entry nothing is reduced: calls and
 * replies go inline or as Long messages.  Entries come from the built-in
 * NFS bindings (RFC 8267), the file named by RPCRDMA_ULB_CONF (default
 * $sysconfdir/rpcrdma/ulb.conf, loaded once, on first use) and
 * rpcrdma_ulb_register(), the later overriding the earlier.
 */
enum rpcrdma_ulb_dir {
	RPCRDMA_ULB_CALL = 0,  /* the procedure's arguments */
	RPCRDMA_ULB_REPLY = 1, /* the procedure's results */
};

enum rpcrdma_ulb_size_kind {
	RPCRDMA_ULB_SIZE_NONE = 0, /* not given */
	RPCRDMA_ULB_SIZE_FIXED,	   /* 'value' octets */
	RPCRDMA_ULB_SIZE_ARG,	   /* the unsigned int argument at 'offset'
					 * plus 'value' octets */
};

/*
 * A size known before the call is sent.  For RPCRDMA_ULB_SIZE_ARG, offset
 * locates a 4-octet unsigned int in the encoded arguments (the procedure's
 * XDR body, after the RPC header and credentials): offset >= 0 counts from
 * the first octet of the arguments, offset < 0 back from their end (-4 is
 * the last word).  Both must be multiples of 4.
 */
struct rpcrdma_ulb_size {
	enum rpcrdma_ulb_size_kind kind;
	uint32_t value;
	int32_t offset;
};

/*
 * One binding.  Body items are the opaque, string and fixed-opaque data
 * runs of the arguments (CALL) or results (REPLY), numbered from 0 in XDR
 * order; items of zero octets are not counted.  Bit k of items makes item
 * k DDP-eligible.
 */
struct rpcrdma_ulb_entry {
	rpcprog_t prog;
	rpcvers_t vers;
	rpcproc_t proc;
	enum rpcrdma_ulb_dir dir;
	uint64_t items;			   /* DDP-eligible body items */
	uint32_t min_len;		   /* CALL: shorter items stay inline;
					 * REPLY: smallest room worth a Write
					 * chunk.  0 = transport default */
	uint32_t max_chunks;		   /* most items moved, 0 = no limit */
	struct rpcrdma_ulb_size room;	   /* REPLY: maximum size of each
					 * eligible result (the Write chunk) */
	struct rpcrdma_ulb_size reply_max; /* REPLY: largest encoded results
					 * (no RPC header or verifier) with
					 * the eligible ones in Write chunks;
					 * add 'room' for each result not
					 * given a Write chunk */
	unsigned long reserved[4];	   /* must be zero */
};

/* Add or replace the entry for (prog, vers, proc, dir); 0 or an errno. */
int rpcrdma_ulb_register(const struct rpcrdma_ulb_entry *entry);

/* Remove an entry of any origin; 0 or ENOENT. */
int rpcrdma_ulb_unregister(rpcprog_t prog, rpcvers_t vers, rpcproc_t proc,
			   enum rpcrdma_ulb_dir dir);

/* Copy the entry for (prog, vers, proc, dir) to *entry; 0 or ENOENT. */
int rpcrdma_ulb_lookup(rpcprog_t prog, rpcvers_t vers, rpcproc_t proc,
		       enum rpcrdma_ulb_dir dir,
		       struct rpcrdma_ulb_entry *entry);

/*
 * Load another configuration file.  Bad entries are reported on stderr as
 * "rpcrdma: FILE:LINE: reason" (warnings: RPCRDMA_LOG) and skipped.  Returns the number of bad entries, or
 * -1 with errno set if the file cannot be read.
 */
int rpcrdma_ulb_load(const char *path);

/*
 * Resolve a REPLY entry's sizes for one call whose encoded arguments are
 * args[0..len): *room (per eligible result) and *reply_max; 0 where the
 * entry gives no size.  Returns 0, or EINVAL if an offset falls outside
 * the arguments.
 */
int rpcrdma_ulb_sizes(const struct rpcrdma_ulb_entry *entry, const void *args,
		      size_t len, uint32_t *room, uint32_t *reply_max);

#ifdef __cplusplus
}
#endif

#endif /* _RPC_RPCRDMA_H */
