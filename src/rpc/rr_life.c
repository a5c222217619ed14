/*
 * rr_life.c - an rr_clnt is made and ended here, at the top of the
 * requester's files: it calls any of them, none calls it.
 *
 * The requester's files call one way (rr_call_priv.h); the three calls that
 * go inherently back up - draining a connection, which dispatches Replies,
 * backward Calls and deaths (rr_recv.c); failing a call when its connection
 * is lost (rr_call.c); the backward fd following a new or lost connection
 * (rr_bc.c) - go through the hooks of struct rr_clnt, set here before
 * anything can use them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/rr_call_priv.h"
#include "rpc/rr_util.h"

struct rr_clnt *rr_clnt_create(const struct sockaddr *dst,
			       const struct rr_opts *opts, struct rt_err *err)
{
	struct rr_clnt *rr;
	socklen_t len;

	rt_err_clear(err);
	len = dst && dst->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
						  sizeof(struct sockaddr_in);
	if (!dst || (dst->sa_family != AF_INET && dst->sa_family != AF_INET6)) {
		rt_err_set(err, EAFNOSUPPORT,
			   "RDMA needs an IPv4 or IPv6 address");
		return NULL;
	}
	rr = calloc(1, sizeof(*rr));
	if (!rr || pthread_mutex_init(&rr->lock, NULL)) {
		free(rr);
		rt_err_set(err, ENOMEM, "out of memory");
		return NULL;
	}
	/* the calls up from the files below, where they need them */
	rr->drain = rr_recv_drain;
	rr->call_fail = rr_call_fail;
	rr->bc_conn_changed = rr_bc_conn_changed;
	memcpy(&rr->dst, dst, len);
	rr->opts = *opts;
	if (!rr->opts.max_reply || rr->opts.max_reply > RR_MAX_REPLY)
		rr->opts.max_reply = rr->opts.max_reply ? RR_MAX_REPLY :
							  (size_t)1 << 20;
	if (!rr->opts.conn.timeout_ms)
		rr->opts.conn.timeout_ms = 5000;
	rr->want_busy = opts->conn.busy_poll;
	rr_spin_init(&rr->spin, opts->poll_us);
	/* a v2 server may send 4096 octets once v2 is known (V2-INL-1) */
	if (rr->opts.vers != RR_VERS_1 &&
	    rr->opts.conn.inline_recv < RW_V2_INLINE_DEFAULT)
		rr->opts.conn.inline_recv = RW_V2_INLINE_DEFAULT;
	rr->ctl_xid = (uint32_t)rr_clock_us() * 2654435761u;
	rw_hdr_space_init(&rr->hsp, &rw_v2_limits);
	rr->conn =
		rr_conn_open(rr, rr_deadline_ms(rr->opts.conn.timeout_ms), err);
	if (!rr->conn) {
		pthread_mutex_destroy(&rr->lock);
		free(rr);
		return NULL;
	}
	rr->st.connects++;
	return rr;
}

/*
 * No call may be running.  Orphaned calls are finished by ending the
 * connection: their memory is fenced by rt_reg_revoke() on the dead
 * connection, then everything is freed.
 */
void rr_clnt_destroy(struct rr_clnt *rr)
{
	if (!rr)
		return;
	rr_clnt_bc_disable(rr);
	pthread_mutex_lock(&rr->lock);
	rr_conn_end(rr);
	rr_slots_free(rr);
	pthread_mutex_unlock(&rr->lock);
	pthread_mutex_destroy(&rr->lock);
	free(rr);
}
