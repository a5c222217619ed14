/*
 * t_rt_util.h - helpers of the transport layer's VM tests: check lines,
 * data patterns, a command server built on rt_ (a thread), a misbehaving
 * peer written with raw verbs (a thread), and client-side round trips.
 *
 * Test command protocol (client -> rt server, one Send each, fixed struct):
 *   T_ECHO   the server sends the message back unchanged
 *   T_WRITE  RDMA Write pattern(seed) of seg.length octets into seg, then
 *            reply (status 0 when the Write completed)
 *   T_READ   RDMA Read seg, compare with pattern(seed), reply 0 if equal
 *   T_INV    reply with Send With Invalidate of seg.handle
 *   T_CLOSE  the server disconnects this connection
 * The raw peer understands T_WRITE, T_READ, T_INV, T_DROPQP (destroy only
 * its QP) and T_DROPALL (destroy QP and CM id, as a dying process would).
 */
#ifndef T_RT_UTIL_H
#define T_RT_UTIL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "tests/vm/t_util.h"
#include "transport/rt_buf.h"
#include "transport/rt_conn.h"
#include "transport/rt_reg.h"

#define T_TIMEOUT_MS 10000

enum t_op {
	T_ECHO = 0x45,
	T_WRITE,
	T_READ,
	T_INV,
	T_CLOSE,
	T_DROPQP,
	T_DROPALL,
};

struct t_cmd {
	uint32_t op;
	uint32_t seed;
	uint32_t nsge; /* local fragments the server uses (1..3) */
	uint32_t pad;
	struct rw_segment seg;
};

struct t_reply {
	uint32_t op;
	int32_t status; /* 0 ok; else an ibv_wc_status or -errno */
};

/* ---- Checks ------------------------------------------------------------ */

/* Checks and notes: CHECK, CHECK_OK, NOTE (t_util.h). */
/* An RDMA device to run on?  If not, "SKIP: no RDMA device" is printed:
 * the caller exits 77, and only then. */
bool t_have_device(void);
int64_t t_now_us(void);
int64_t t_now_ms(void);

/* Exit with a FAIL line if the whole program runs longer than seconds. */
void t_watchdog(unsigned int seconds);

void t_pattern_fill(void *buf, size_t len, uint32_t seed);
/* Index of the first byte that differs from the pattern, or -1. */
long t_pattern_check(const void *buf, size_t len, uint32_t seed);
/* -1 if every byte is v, else the first index that is not. */
long t_all_bytes(const void *buf, size_t len, uint8_t v);

/* Address helpers: "192.0.2.1" / "2001:db8::1" and a port. */
void t_sockaddr(struct sockaddr_storage *ss, const char *host, uint16_t port);
const char *t_addr4(void);
const char *t_addr6(void);

/* ---- The rt command server (thread) ---------------------------------- */

#define T_SRV_MAX_CONNS 32

struct t_srv {
	struct rt_listener *l;
	pthread_t th;
	atomic_bool stop;
	pthread_mutex_t mu; /* conns, n, accepted */
	struct rt_conn *conns[T_SRV_MAX_CONNS];
	unsigned int n;
	atomic_int accepted;
	atomic_int deaths;
	atomic_llong last_death_ms;
	atomic_int listen_errno;  /* rt_listener_process() failure */
	struct rt_err last_death; /* under mu */
	uint16_t port;
};

/* Listen on host:0 with attr and serve in a thread. */
int t_srv_start(struct t_srv *s, const char *host,
		const struct rt_conn_attr *attr);
void t_srv_stop(struct t_srv *s);
/* The connection accepted as number idx (0-based), waiting for it. */
struct rt_conn *t_srv_conn(struct t_srv *s, int idx, int timeout_ms);

/* ---- Client side ----------------------------------------------------- */

/* rt_connect, retried while refused (a server may still be starting). */
struct rt_conn *t_connect(const char *host, uint16_t port,
			  const struct rt_conn_attr *attr, struct rt_err *err);

/* Send len octets of msg. */
int t_send(struct rt_conn *c, const void *msg, uint32_t len);

/* Wait for the next Receive; copies it out, re-posts, returns length or
 * -1 on timeout/death.  ev (optional) gets the event. */
int t_recv(struct rt_conn *c, void *buf, uint32_t cap, int timeout_ms,
	   struct rt_event *ev);

/* Send a command and wait for its reply: returns reply status, or
 * INT32_MIN if no reply came. */
int32_t t_call(struct rt_conn *c, const struct t_cmd *cmd, struct rt_event *ev);

/* Wait until the connection is dead; returns ms waited or -1. */
int t_wait_dead(struct rt_conn *c, int timeout_ms);

/* ---- The raw verbs peer (thread) -------------------------------------- */

struct t_raw_srv {
	pthread_t th;
	atomic_bool stop;
	atomic_bool ready;
	uint16_t port;
	atomic_int results;	/* operations finished */
	atomic_int last_status; /* their ibv_wc_status */
	atomic_int conns;	/* connections served */
	char host[64];
};

int t_raw_srv_start(struct t_raw_srv *r, const char *host);
void t_raw_srv_stop(struct t_raw_srv *r);
/* Wait until results > before; returns the last status or -1. */
int t_raw_wait_result(struct t_raw_srv *r, int before, int timeout_ms);

/*
 * Connect to an rt server with raw rdma_cm and no private data; store what
 * the server sent (decoded) in *srv_pd.  Returns 0 if established.
 */
int t_raw_connect_nopd(const char *host, uint16_t port,
		       struct rw_cm_private *srv_pd, char *msg, size_t msglen);

#endif /* T_RT_UTIL_H */
