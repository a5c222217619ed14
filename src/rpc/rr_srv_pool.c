/*
 * rr_srv_pool.c - the responder's requests: the pool of request objects,
 * the FIFOs they wait in, the cookies that name them in transport events,
 * and what a request holds until it is freed (its sink of pulled Read
 * chunks, its reply sources).  The bottom of the server files: it calls
 * no other of them (rr_srv_priv.h draws the graph).
 *
 * Event cookies carry a request's index and generation: a late completion
 * for a request object that has been reused since cannot be mistaken for
 * one of the new request.
 */
#include <stdlib.h>

#include "rpc/rr_srv_pool.h"

/* ---- Queues ------------------------------------------------------------- */

void rr_srv_q_push(struct rr_srv_queue *q, struct rr_sreq *r)
{
	r->next = NULL;
	if (q->tail)
		q->tail->next = r;
	else
		q->head = r;
	q->tail = r;
	q->n++;
}

struct rr_sreq *rr_srv_q_pop(struct rr_srv_queue *q)
{
	struct rr_sreq *r = q->head;

	if (!r)
		return NULL;
	q->head = r->next;
	if (!q->head)
		q->tail = NULL;
	q->n--;
	r->next = NULL;
	return r;
}

static struct rr_sreq *req_new(struct rr_srv *s)
{
	struct rr_sreq **all, *r;

	if (s->nall >= s->max_reqs)
		return NULL;
	all = realloc(s->all, (s->nall + 1) * sizeof(*all));
	if (!all)
		return NULL;
	s->all = all;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->idx = s->nall;
	/* the versions we speak, which ERR_VERS also advertises (V1-ERR-6,
	 * V2-NEG-4), and our chunk limits (V2-ERR-7/9/11) */
	rw_hdr_space_init(&r->sp, &s->lim);
	s->all[s->nall++] = r;
	return r;
}

struct rr_sreq *rr_srv_req_get(struct rr_srv *s)
{
	struct rr_sreq *r = rr_srv_q_pop(&s->free);

	if (!r)
		r = req_new(s);
	if (!r)
		return NULL;
	r->gen++;
	r->answered = false;
	r->counted = false;
	r->len = 0;
	r->pull_len = 0;
	r->sink = NULL;
	r->nchunks = 0;
	r->rsrc = NULL;
	r->isrc = NULL;
	r->send_pending = false;
	r->ctl = RR_CTL_ERROR;
	r->replay = NULL;
	r->state = RR_FREE;
	return r;
}

void rr_srv_req_put(struct rr_srv *s, struct rr_sreq *r)
{
	rr_srv_release_sink(s, r);
	rr_srv_release_reply(s, r); /* its Send is done, if it had one */
	if (r->counted) {
		r->counted = false;
		s->st.inflight--;
	}
	r->state = RR_FREE;
	rr_srv_q_push(&s->free, r);
}

uint64_t rr_srv_cookie(const struct rr_sreq *r)
{
	return (uint64_t)r->gen << 32 | r->idx;
}

struct rr_sreq *rr_srv_req_by_cookie(struct rr_srv *s, uint64_t cookie)
{
	uint32_t idx = (uint32_t)cookie, gen = (uint32_t)(cookie >> 32);

	if (idx >= s->nall || s->all[idx]->gen != gen)
		return NULL;
	return s->all[idx];
}

void rr_srv_answered(struct rr_srv *s, struct rr_sreq *r)
{
	r->answered = true;
	if (r->counted) {
		r->counted = false;
		s->st.inflight--;
	}
}

void rr_srv_done(struct rr_srv *s, struct rr_sreq *r)
{
	if (r->state != RR_CURRENT)
		return;
	/* Argument items the decoder copied out of the pulled chunks
	 * (counted once, whatever became of the decode). */
	s->st.ddp_copies += rw_axdr_copies(&r->ax);
	s->st.ddp_copy_bytes += rw_axdr_bytes_copied(&r->ax);
	if (!r->answered) {
		s->st.dropped++;
		rr_srv_answered(s, r);
	}
	rr_srv_release_sink(s, r);
	if (r->send_pending) {
		r->state = RR_SENDING; /* freed once its Send is done */
		return;
	}
	rr_srv_req_put(s, r);
}

/* ---- What a request holds ---------------------------------------------- */

void rr_srv_release_sink(struct rr_srv *s, struct rr_sreq *r)
{
	if (!r->sink)
		return;
	rt_lmem_free(s->c, r->sink);
	r->sink = NULL;
	s->pull_held -= r->pull_len;
}

/* Free what r's reply was sent from (its Send has completed, or was never
 * posted). */
void rr_srv_release_reply(struct rr_srv *s, struct rr_sreq *r)
{
	if (r->rsrc)
		rt_lmem_free(s->c, r->rsrc);
	if (r->isrc)
		rt_lmem_free(s->c, r->isrc);
	r->rsrc = NULL;
	r->isrc = NULL;
}
