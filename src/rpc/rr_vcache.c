/*
 * rr_vcache.c - servers that do not speak RPC-over-RDMA v2, per address,
 * for every rr_clnt of the process (v2-05 §8, V2-NEG-6, AMB-V2-20).
 *
 * A connection lost right after ERR_VERS, or while its first v2 message
 * went unanswered, says the server probably lacks v2 (or drops what it does
 * not understand).  Trying v2 again on the very next connection could fail
 * the same way forever; remembering the address for a while makes the next
 * connection speak v1 at once.  Entries expire, so a server upgraded since
 * is asked again later.
 *
 * A small fixed table: when it is full the entry closest to expiry goes.
 */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "rpc/rr_call_priv.h"
#include "rpc/rr_util.h"

#define RR_VCACHE_SIZE 64

struct rr_vcache_ent {
	struct sockaddr_storage addr;
	int64_t expires_ms; /* 0: free */
};

static struct rr_vcache_ent rr_vcache[RR_VCACHE_SIZE];
static pthread_mutex_t rr_vcache_lock = PTHREAD_MUTEX_INITIALIZER;

/* Same address and port. */
static bool same_server(const struct sockaddr_storage *a,
			const struct sockaddr *b)
{
	const struct sockaddr_in6 *a6 = (const void *)a, *b6 = (const void *)b;
	const struct sockaddr_in *a4 = (const void *)a, *b4 = (const void *)b;

	if (a->ss_family != b->sa_family)
		return false;
	if (b->sa_family == AF_INET6)
		return a6->sin6_port == b6->sin6_port &&
		       !memcmp(&a6->sin6_addr, &b6->sin6_addr,
			       sizeof(a6->sin6_addr));
	return a4->sin_port == b4->sin_port &&
	       a4->sin_addr.s_addr == b4->sin_addr.s_addr;
}

static struct rr_vcache_ent *vcache_find(const struct sockaddr *server,
					 int64_t now)
{
	unsigned int i;

	for (i = 0; i < RR_VCACHE_SIZE; i++) {
		struct rr_vcache_ent *e = &rr_vcache[i];

		if (e->expires_ms && e->expires_ms <= now)
			e->expires_ms = 0;
		if (e->expires_ms && same_server(&e->addr, server))
			return e;
	}
	return NULL;
}

bool rr_vcache_lacks_v2(const struct sockaddr *server)
{
	bool found;

	pthread_mutex_lock(&rr_vcache_lock);
	found = vcache_find(server, rr_now_ms()) != NULL;
	pthread_mutex_unlock(&rr_vcache_lock);
	return found;
}

/* A free entry, else the one closest to expiry. */
static struct rr_vcache_ent *victim(void)
{
	struct rr_vcache_ent *v = &rr_vcache[0];
	unsigned int i;

	for (i = 0; i < RR_VCACHE_SIZE; i++) {
		if (!rr_vcache[i].expires_ms)
			return &rr_vcache[i];
		if (rr_vcache[i].expires_ms < v->expires_ms)
			v = &rr_vcache[i];
	}
	return v;
}

void rr_vcache_note(const struct sockaddr *server, uint32_t ttl_s)
{
	int64_t now = rr_now_ms();
	struct rr_vcache_ent *e;

	if (!ttl_s)
		return;
	pthread_mutex_lock(&rr_vcache_lock);
	e = vcache_find(server, now);
	if (!e)
		e = victim();
	memset(&e->addr, 0, sizeof(e->addr));
	memcpy(&e->addr, server,
	       server->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
					       sizeof(struct sockaddr_in));
	e->expires_ms = now + (int64_t)ttl_s * 1000;
	pthread_mutex_unlock(&rr_vcache_lock);
}
