/*
 * rw_credit.h - RPC-over-RDMA credit accounting (RFC 8166 §3.3, V1-CR-*).
 *
 * Credits are the number of Receives the peer guarantees to have posted.
 * The requester side counts Calls in flight against the latest grant; the
 * responder side decides which grant it may advertise given the Receives it
 * really has posted.  Both are plain state machines: the transport calls them
 * at the right moments and they decide, so the rules live in one place.
 */
#ifndef RW_CREDIT_H
#define RW_CREDIT_H

#include <stdbool.h>
#include <stdint.h>

/* Requester: one per connection. */
struct rw_credits {
	uint32_t requested;   /* what our Calls ask for (never 0, AMB-V1-16) */
	uint32_t granted;     /* latest non-zero grant received */
	uint32_t inflight;    /* Calls sent and not yet answered */
	bool established;     /* a valid non-error Reply has arrived */
	uint64_t zero_grants; /* protocol violations seen (N-17) */
};

void rw_credits_init(struct rw_credits *c, uint32_t requested);

/* A new connection starts over at one credit (V1-CR-6, RFC 8166
 * §4.5.3-4.5.5). */
void rw_credits_reset(struct rw_credits *c);

/* How many more Calls may be sent now: min(requested, granted) - inflight,
 * and at most one in total before the first valid Reply. */
uint32_t rw_credits_window(const struct rw_credits *c);

/* Take a credit for a Call about to be sent; false if none is available. */
bool rw_credits_take(struct rw_credits *c);

/* Give back a credit taken for a Call that was never sent. */
void rw_credits_cancel(struct rw_credits *c);

/*
 * A Reply (is_error false) or an RDMA_ERROR (is_error true) completed one
 * Call.  A grant of 0 keeps the previous grant and is counted (AMB-V1-8);
 * an RDMA_ERROR never establishes the connection's grant while still in the
 * initial single-credit state.
 */
void rw_credits_complete(struct rw_credits *c, uint32_t grant, bool is_error);

/* Responder: one per connection. */
struct rw_srv_credits {
	uint32_t target;     /* configured grant (the most we want to offer) */
	uint32_t posted;     /* Receives currently posted */
	uint32_t advertised; /* largest grant sent so far */
};

void rw_srv_credits_init(struct rw_srv_credits *s, uint32_t target);

/*
 * The grant to put in the next Reply or RDMA_ERROR: never more than the
 * Receives actually posted (V1-CR-8, V1-RB-3) nor than target, never 0
 * (V1-CR-3).  Records the value as advertised.
 */
uint32_t rw_srv_credits_grant(struct rw_srv_credits *s);

/*
 * Receives the responder must keep posted: the largest grant it has ever
 * advertised on this connection, since Calls sent under an older, larger
 * grant may still arrive (AMB-V1-9).
 */
uint32_t rw_srv_credits_min_posted(const struct rw_srv_credits *s);

#endif /* RW_CREDIT_H */
