/*
 * rr_srv_conn.c - the connection as every server file sees it: ending it
 * (rr_srv_kill) and why it ended (rr_srv_error), waking svc_run
 * (rr_srv_kick), the credit grant each answer carries, and waiting for a
 * Send buffer while the event loop runs.  It
 * calls no other server file: running the event loop and telling the
 * backward callers that the connection ended go up through the hooks
 * rr_serve.c sets in struct rr_srv (rr_srv_priv.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "rpc/rr_clock.h"
#include "rpc/rr_srv_conn.h"

void rr_srv_kill(struct rr_srv *srv, int code, const char *fmt, ...)
{
	va_list ap;
	char msg[RT_ERR_MSG_LEN];

	if (!srv->err.code) {
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		rt_err_set(&srv->err, code, "%s", msg);
	}
	srv->dead = true;
	srv->lost(srv); /* rr_srv_bc_lost */
	rt_conn_disconnect(srv->conn);
}

const struct rt_err *rr_srv_error(const struct rr_srv *srv)
{
	return srv->err.code ? &srv->err : rt_conn_error(srv->conn);
}

uint32_t rr_srv_grant(struct rr_srv *srv)
{
	uint32_t g = rw_srv_credits_grant(rt_conn_srv_credits(srv->conn));

	if (g > srv->st.max_granted)
		srv->st.max_granted = g;
	return g;
}

void rr_srv_kick(struct rr_srv *srv)
{
	if (!srv->kicked)
		rt_conn_kick(srv->conn);
	srv->kicked = true;
}

struct rt_sbuf *rr_srv_sbuf_wait(struct rr_srv *srv)
{
	int64_t deadline = 0, left;
	struct rt_sbuf *b;
	struct rt_err err;

	for (;;) {
		if (srv->dead)
			return NULL;
		b = rt_sbuf_get(srv->conn, &err);
		if (b)
			return b;
		if (err.code != EAGAIN)
			return NULL;
		/* The clock only once there is a wait: a free buffer is
		 * the rule, and reading the clock may be a system call. */
		if (!deadline)
			deadline = rr_clock_ms() + RR_SEND_WAIT_MS;
		left = deadline - rr_clock_ms();
		if (left <= 0) {
			/* A reply that cannot be sent: close, so the peer
			 * learns it is lost (V1-ERR-13). */
			rr_srv_kill(srv, ETIMEDOUT,
				    "no Send buffer came free within %d ms",
				    RR_SEND_WAIT_MS);
			return NULL;
		}
		if (srv->wait_events(srv, (int)left) < 0)
			return NULL;
	}
}
