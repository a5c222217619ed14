/*
 * rr_srv_replay.c - replies kept for a resend (V2-ERR-13, AMB-V2-4).
 *
 * When a reply fits neither inline nor in what the Call offered, the
 * procedure has already run.  The requester resends the same XID with
 * more room (v2 REPLY_RESOURCE / WRITE_RESOURCE name the length; a v1
 * ERR_CHUNK makes our requester try a larger Reply chunk).  Running the
 * procedure a second time would be wrong for anything that is not
 * idempotent, so the reply is recorded (rw_tape: the XDR operations that
 * produced it) and the resend is answered from the record, through the
 * normal reply path, which then places items and chunks for the new Call.
 *
 * Records are per connection: the resend follows the error at once on the
 * same connection.  They are bounded in number (RR_REPLAY_MAX), in memory
 * (opts.replay_bytes, so per peer by max_conns_per_peer connections) and
 * in time (opts.replay_ms); a record is used once.  A resend that finds
 * none (expired, pushed out, never kept because too large) is executed as
 * a new Call: counted, never silent.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rpc/rr_clock.h"
#include "rpc/rr_srv_replay.h"
#include "wire/rw_be.h"

static size_t budget(const struct rr_srv *srv)
{
	return srv->opts.replay_bytes ? srv->opts.replay_bytes :
					RR_REPLAY_BYTES;
}

void rr_replay_free(struct rr_srv *srv, struct rr_replay *p)
{
	srv->replay_bytes -= rw_tape_bytes(&p->tape);
	srv->nreplays--;
	rw_tape_free(&p->tape);
	free(p);
}

/* Unlink and free the oldest record (the list's tail). */
static void drop_oldest(struct rr_srv *srv)
{
	struct rr_replay **pp = &srv->replays;

	while ((*pp)->next)
		pp = &(*pp)->next;
	rr_replay_free(srv, *pp);
	*pp = NULL;
	srv->st.replays_dropped++;
}

static void expire(struct rr_srv *srv, int64_t now)
{
	struct rr_replay **pp = &srv->replays, *p;

	while ((p = *pp)) {
		if (p->expires_ms > now) {
			pp = &p->next;
			continue;
		}
		*pp = p->next;
		rr_replay_free(srv, p);
		srv->st.replays_dropped++;
	}
}

/* The Call's RPC header words (rpcvers, prog, vers, proc), to be sure a
 * resend asks for the same thing; false if the payload is too short. */
static bool call_words(const struct rr_sreq *req, uint32_t w[3])
{
	if (!req->payload || req->plen < 24)
		return false;
	w[0] = rw_get32(req->payload + 12);
	w[1] = rw_get32(req->payload + 16);
	w[2] = rw_get32(req->payload + 20);
	return true;
}

bool rr_replay_keep(struct rr_srv *srv, struct rr_sreq *req,
		    const struct rr_sreq_enc *enc, uint32_t *len)
{
	size_t max = budget(srv);
	struct rr_replay *p;
	struct rw_txdr x;
	uint32_t w[3];
	bool ok;

	*len = 0;
	expire(srv, rr_clock_ms());
	if (!call_words(req, w))
		return false;
	p = calloc(1, sizeof(*p));
	if (!p)
		return false;
	rw_tape_init(&p->tape, max > UINT32_MAX ? UINT32_MAX : (uint32_t)max);
	rw_txdr_create(&x, &p->tape);
	ok = enc->encode(&x.xdr, enc->arg) && !rw_txdr_error(&x);
	*len = p->tape.len;
	if (!ok) {
		rw_tape_free(&p->tape);
		free(p);
		srv->st.replays_missed++;
		return false;
	}
	while (srv->replays &&
	       (srv->nreplays >= RR_REPLAY_MAX ||
		srv->replay_bytes + rw_tape_bytes(&p->tape) > max))
		drop_oldest(srv);
	p->xid = req->rx.hdr.xid;
	p->prog = w[0];
	p->vers = w[1];
	p->proc = w[2];
	p->pol = enc->ddp;
	p->expires_ms =
		rr_clock_ms() +
		(srv->opts.replay_ms ? srv->opts.replay_ms : RR_REPLAY_MS);
	p->next = srv->replays;
	srv->replays = p;
	srv->nreplays++;
	srv->replay_bytes += rw_tape_bytes(&p->tape);
	srv->st.replays_kept++;
	return true;
}

struct rr_replay *rr_replay_take(struct rr_srv *srv, const struct rr_sreq *req)
{
	struct rr_replay **pp, *p;
	uint32_t w[3];

	if (!srv->replays || !call_words(req, w))
		return NULL;
	expire(srv, rr_clock_ms());
	for (pp = &srv->replays; (p = *pp); pp = &p->next) {
		if (p->xid != req->rx.hdr.xid)
			continue;
		if (p->prog != w[0] || p->vers != w[1] || p->proc != w[2])
			return NULL; /* the XID was reused for another call */
		*pp = p->next;
		p->next = NULL;
		return p;
	}
	return NULL;
}

void rr_replay_free_all(struct rr_srv *srv)
{
	struct rr_replay *p;

	while ((p = srv->replays)) {
		srv->replays = p->next;
		rr_replay_free(srv, p);
	}
}

static bool_t play(XDR *xdrs, void *arg)
{
	return rw_tape_play(&((struct rr_replay *)arg)->tape, xdrs);
}

static size_t played_size(void *arg)
{
	return ((struct rr_replay *)arg)->tape.len;
}

void rr_replay_enc(struct rr_replay *p, struct rr_sreq_enc *enc)
{
	*enc = (struct rr_sreq_enc){ .encode = play,
				     .size_hint = played_size,
				     .arg = p,
				     .ddp = p->pol };
}
