/*
 * rr_srv_pool.c - the responder's requests: the pool of request objects,
 * the FIFOs they wait in, the cookies that name them in transport events,
 * and what a request holds until it is freed (its Receive, its sink of
 * pulled Read chunks, its reply sources).
 *
 * Messages are decoded where they arrived: a request holds its Receive
 * until it is answered (a Call in service holds the credit it came with
 * either way) and the Receive is posted again just before the answer's
 * Send, so that the grant in it is backed (V1-CR-8, V1-RB-3).  Nothing is
 * copied on the way in; only what is still to be read after that point
 * (arguments a procedure decodes after replying, a backward Reply) is.
 *
 * The bottom of the server files: it calls no other of them
 * (rr_srv_priv.h draws the graph).
 *
 * Event cookies carry a request's index and generation: a late completion
 * for a request object that has been reused since cannot be mistaken for
 * one of the new request.
 */
#include <stdlib.h>
#include <string.h>

#include "rpc/rr_srv_pool.h"

/* ---- Queues ------------------------------------------------------------- */

void rr_srv_q_push(struct rr_srv_queue *q, struct rr_sreq *req)
{
	req->next = NULL;
	if (q->tail)
		q->tail->next = req;
	else
		q->head = req;
	q->tail = req;
	q->n++;
}

struct rr_sreq *rr_srv_q_pop(struct rr_srv_queue *q)
{
	struct rr_sreq *req = q->head;

	if (!req)
		return NULL;
	q->head = req->next;
	if (!q->head)
		q->tail = NULL;
	q->n--;
	req->next = NULL;
	return req;
}

static struct rr_sreq *req_new(struct rr_srv *srv)
{
	struct rr_sreq **all, *req;

	if (srv->nall >= srv->max_reqs)
		return NULL;
	all = realloc(srv->all, (srv->nall + 1) * sizeof(*all));
	if (!all)
		return NULL;
	srv->all = all;
	req = calloc(1, sizeof(*req));
	if (!req)
		return NULL;
	req->idx = srv->nall;
	/* the versions we speak, which ERR_VERS also advertises (V1-ERR-6,
	 * V2-NEG-4), and our chunk limits (V2-ERR-7/9/11) */
	rw_hdr_space_init(&req->sp, &srv->lim);
	srv->all[srv->nall++] = req;
	return req;
}

struct rr_sreq *rr_srv_req_get(struct rr_srv *srv)
{
	struct rr_sreq *req = rr_srv_q_pop(&srv->free);

	if (!req)
		req = req_new(srv);
	if (!req)
		return NULL;
	req->gen++;
	req->answered = false;
	req->counted = false;
	req->len = 0;
	req->msg = NULL;
	req->rbuf = NULL;
	req->ax_on_msg = false;
	req->pull_len = 0;
	req->sink = NULL;
	req->nchunks = 0;
	req->rsrc = NULL;
	req->isrc = NULL;
	req->send_pending = false;
	req->ctl = RR_CTL_ERROR;
	req->replay = NULL;
	req->state = RR_FREE;
	return req;
}

void rr_srv_req_put(struct rr_srv *srv, struct rr_sreq *req)
{
	rr_srv_release_recv(srv, req, false);
	rr_srv_release_sink(srv, req);
	rr_srv_release_reply(srv, req); /* its Send is done, if it had one */
	if (req->counted) {
		req->counted = false;
		srv->st.inflight--;
	}
	req->state = RR_FREE;
	rr_srv_q_push(&srv->free, req);
}

uint64_t rr_srv_cookie(const struct rr_sreq *req)
{
	return (uint64_t)req->gen << 32 | req->idx;
}

struct rr_sreq *rr_srv_req_by_cookie(struct rr_srv *srv, uint64_t cookie)
{
	uint32_t idx = (uint32_t)cookie, gen = (uint32_t)(cookie >> 32);

	if (idx >= srv->nall || srv->all[idx]->gen != gen)
		return NULL;
	return srv->all[idx];
}

void rr_srv_answered(struct rr_srv *srv, struct rr_sreq *req)
{
	rr_srv_release_recv(srv, req, false);
	req->answered = true;
	if (req->counted) {
		req->counted = false;
		srv->st.inflight--;
	}
}

void rr_srv_done(struct rr_srv *srv, struct rr_sreq *req)
{
	if (req->state != RR_CURRENT)
		return;
	/* Argument items the decoder copied out of the pulled chunks
	 * (counted once, whatever became of the decode). */
	srv->st.ddp_copies += rw_axdr_copies(&req->ax);
	srv->st.ddp_copy_bytes += rw_axdr_bytes_copied(&req->ax);
	if (!req->answered) {
		srv->st.dropped++;
		rr_srv_answered(srv, req);
	}
	rr_srv_release_sink(srv, req);
	if (req->send_pending) {
		req->state = RR_SENDING; /* freed once its Send is done */
		return;
	}
	rr_srv_req_put(srv, req);
}

/* ---- What a request holds ---------------------------------------------- */

static bool copy_room(struct rr_sreq *req, uint32_t len)
{
	uint8_t *m;

	if (len <= req->copy_cap)
		return true;
	m = realloc(req->copy, len);
	if (!m)
		return false;
	req->copy = m;
	req->copy_cap = len;
	return true;
}

/* Copy req's message out of its Receive; false out of memory. */
static bool copy_msg(struct rr_sreq *req)
{
	const uint8_t *was = req->msg;

	if (!copy_room(req, req->len))
		return false;
	memcpy(req->copy, was, req->len);
	req->msg = req->copy;
	if (req->ax_on_msg) {
		req->payload = req->copy + (req->payload - was);
		rw_axdr_move(&req->ax, req->payload);
	}
	return true;
}

bool rr_srv_release_recv(struct rr_srv *srv, struct rr_sreq *req, bool keep)
{
	bool need, ok;

	if (!req->rbuf)
		return true;
	need = keep || (req->ax_on_msg && rw_axdr_unread(&req->ax));
	ok = !need || copy_msg(req);
	if (!need || !ok) {
		if (need && req->ax_on_msg)
			rw_axdr_lose(&req->ax); /* its unread arguments */
		req->msg = NULL;
		req->len = 0;
	}
	req->ax_on_msg = false;
	rt_recv_repost(srv->conn, req->rbuf);
	req->rbuf = NULL;
	return ok;
}

void rr_srv_release_sink(struct rr_srv *srv, struct rr_sreq *req)
{
	if (!req->sink)
		return;
	rt_lmem_free(srv->conn, req->sink);
	req->sink = NULL;
	srv->pull_held -= req->pull_len;
}

/* Free what req's reply was sent from (its Send has completed, or was never
 * posted). */
void rr_srv_release_reply(struct rr_srv *srv, struct rr_sreq *req)
{
	if (req->rsrc)
		rt_lmem_free(srv->conn, req->rsrc);
	if (req->isrc)
		rt_lmem_free(srv->conn, req->isrc);
	req->rsrc = NULL;
	req->isrc = NULL;
}
