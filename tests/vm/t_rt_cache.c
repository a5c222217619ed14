/*
 * t_rt_cache.c - a connection's cache of chunk buffers (rt_buf.c) on a real
 * device: its byte cap, the counter of buffers let go because of it, and
 * that a buffer let go is unmapped, not left on the heap.
 *
 * On one connection with a cap of CAP octets: ROUNDS rounds, each holding
 * up to 6 buffers at once of 1 octet to 3 MiB (size classes of 4 KiB to
 * 4 MiB), half from rt_lmem_alloc() and half from the registration pool
 * (rt_reg_buf_alloc()), every page written, then freed in a random order.
 * At every free the cache either takes the buffer (its bytes grow by the
 * buffer's class, the counter stays) or lets it go (the bytes stay, the
 * counter grows by one and, for a mapped buffer, its pages are no longer
 * in the address space: mincore() says ENOMEM); the bytes never pass the
 * cap.  After the rounds the process's RSS is within the cap (and a margin
 * for the rest) of what it was before.  Buffers the cache holds are mapped
 * until rt_conn_destroy(), then unmapped.  A connection with a cap of 0
 * caches nothing.
 *
 * Run inside the VM (tests/vm/run -- tests/vm/t_rt_cache); exits 77 on a
 * host without an RDMA device.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/vm/t_rt_util.h"

#define MiB	   ((size_t)1 << 20)
#define CAP	   (4 * MiB)
#define ROUNDS	   300
#define MAX_HELD   6
#define MAP_MIN	   ((size_t)128 << 10) /* rt_buf.c's RT_MAP_MIN */
#define RSS_MARGIN (4 * MiB)

struct held {
	void *addr;
	size_t cls;	   /* the size class: what the cache accounts */
	struct rt_lmem *m; /* rt_lmem_alloc(); NULL: the pool */
};

static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* The power-of-two class of len, 4 KiB at least (rt_buf.c). */
static size_t class_of(size_t len)
{
	size_t c = 4096;

	while (c < len)
		c <<= 1;
	return c;
}

/* Is any page of [p, p + len) outside the address space? */
static bool unmapped(void *p, size_t len)
{
	static unsigned char vec[(4 * MiB) / 4096];

	return mincore(p, len, vec) < 0 && errno == ENOMEM;
}

static long rss_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kb = strtol(line + 6, NULL, 10);
	fclose(f);
	return kb;
}

static uint64_t released(struct rt_conn *c)
{
	struct rt_stats st;

	rt_conn_stats(c, &st);
	return st.cache_released;
}

static bool take(struct rt_conn *c, struct held *h, size_t len, bool pool)
{
	struct rt_err err;

	h->cls = class_of(len);
	if (pool) {
		h->m = NULL;
		h->addr = rt_reg_buf_alloc(c, len, &err);
	} else {
		h->m = rt_lmem_alloc(c, len, &err);
		h->addr = h->m ? rt_lmem_addr(h->m) : NULL;
	}
	if (!h->addr)
		NOTE("%zu octets: %s", len, err.msg);
	else
		memset(h->addr, 0x5a, len); /* resident, as chunk data is */
	return h->addr != NULL;
}

static void give_back(struct rt_conn *c, struct held *h)
{
	if (h->m)
		rt_lmem_free(c, h->m);
	else
		rt_reg_buf_free(c, h->addr);
}

/* What one free did: counted in the cache or let go (and unmapped). */
struct tally {
	size_t cap; /* the connection's */
	unsigned int frees, kept, let_go, bad, mapped_go, still_mapped;
	size_t most;
	char why[160];
};

static void free_one(struct rt_conn *c, struct held *h, struct tally *t)
{
	size_t before = rt_conn_cache_bytes(c), after;
	uint64_t r0 = released(c), r1;

	give_back(c, h);
	after = rt_conn_cache_bytes(c);
	r1 = released(c);
	t->frees++;
	if (after > t->most)
		t->most = after;
	if (after == before + h->cls && r1 == r0) {
		t->kept++;
		return;
	}
	if (after == before && r1 == r0 + 1 && before + h->cls > t->cap) {
		t->let_go++;
		if (h->cls >= MAP_MIN) {
			t->mapped_go++;
			if (!unmapped(h->addr, h->cls))
				t->still_mapped++;
		}
		return;
	}
	if (!t->bad++)
		snprintf(t->why, sizeof(t->why),
			 "a free of class %zu: cache %zu -> %zu octets, released %llu -> %llu",
			 h->cls, before, after, (unsigned long long)r0,
			 (unsigned long long)r1);
}

static void test_cap(struct t_srv *s)
{
	struct held h[MAX_HELD];
	struct rt_conn_attr ca;
	struct tally t = { .cap = CAP };
	unsigned int round, n, i;
	struct rt_conn *c;
	struct rt_err err;
	uint32_t r = 0x2545f491;
	long rss0, rss1;

	rt_conn_attr_init(&ca);
	CHECK(ca.cache_bytes == RT_CACHE_BYTES && RT_CACHE_BYTES >= CAP,
	      "default cap %zu octets", ca.cache_bytes);
	ca.cache_bytes = CAP;
	c = t_connect(t_addr4(), s->port, &ca, &err);
	if (!CHECK_OK(c != NULL, "connect: %s", c ? "up" : err.msg))
		return;
	rss0 = rss_kb();
	for (round = 0; round < ROUNDS && !t.bad; round++) {
		n = 1 + rnd(&r) % MAX_HELD;
		for (i = 0; i < n; i++) {
			size_t len = 1 + rnd(&r) % (3 * MiB);

			if (rnd(&r) % 3 == 0)
				len = 1 + rnd(&r) % 65536; /* small, heap */
			if (!take(c, &h[i], len, rnd(&r) % 2)) {
				t.bad++;
				n = i;
				break;
			}
		}
		while (n) { /* in a random order */
			i = rnd(&r) % n;
			free_one(c, &h[i], &t);
			h[i] = h[--n];
		}
	}
	rss1 = rss_kb();
	CHECK(!t.bad && t.frees > 1000,
	      "%u frees of 1 octet to 3 MiB: each kept (%u) or let go (%u)%s%s",
	      t.frees, t.kept, t.let_go, t.bad ? ": " : "", t.why);
	CHECK(t.most <= CAP && rt_conn_cache_bytes(c) <= CAP &&
		      t.most > CAP / 2,
	      "cache bytes at most %zu, the cap %zu (at the end %zu)", t.most,
	      CAP, rt_conn_cache_bytes(c));
	CHECK(released(c) == t.let_go && t.let_go > 0,
	      "cache_released %llu: one per buffer let go (%u)",
	      (unsigned long long)released(c), t.let_go);
	CHECK(t.mapped_go > 0 && !t.still_mapped,
	      "%u mapped buffers let go, %u of them still in the address space",
	      t.mapped_go, t.still_mapped);
	CHECK(rss0 > 0 && rss1 > 0 &&
		      rss1 - rss0 <= (long)((CAP + RSS_MARGIN) / 1024),
	      "RSS %ld kB before, %ld kB after (cache %zu kB, margin %zu kB)",
	      rss0, rss1, rt_conn_cache_bytes(c) / 1024, RSS_MARGIN / 1024);

	rt_conn_destroy(c);
}

/* Buffers the cache holds are unmapped when their connection goes. */
static void test_destroy(struct t_srv *s)
{
	struct rt_conn_attr ca;
	struct held h[3];
	struct rt_conn *c;
	struct rt_err err;
	unsigned int i, n, before = 0, after = 0;

	rt_conn_attr_init(&ca);
	ca.cache_bytes = CAP;
	c = t_connect(t_addr4(), s->port, &ca, &err);
	if (!CHECK_OK(c != NULL, "connect: %s", c ? "up" : err.msg))
		return;
	for (n = 0; n < 3 && take(c, &h[n], MiB, n == 1); n++)
		;
	for (i = 0; i < n; i++)
		give_back(c, &h[i]);
	for (i = 0; i < n; i++)
		before += !unmapped(h[i].addr, h[i].cls);
	CHECK(n == 3 && before == 3 && rt_conn_cache_bytes(c) == 3 * MiB,
	      "three 1 MiB buffers freed into the cache: %u still mapped, cache %zu octets",
	      before, rt_conn_cache_bytes(c));
	rt_conn_destroy(c);
	for (i = 0; i < n; i++)
		after += unmapped(h[i].addr, h[i].cls);
	CHECK(n == 3 && after == 3,
	      "rt_conn_destroy(): %u of the 3 cached buffers unmapped", after);
}

static void test_no_cache(struct t_srv *s)
{
	struct rt_conn_attr ca;
	struct tally t = { .cap = 0 };
	struct rt_conn *c;
	struct rt_err err;
	struct held h;
	unsigned int i;

	rt_conn_attr_init(&ca);
	ca.cache_bytes = 0;
	c = t_connect(t_addr4(), s->port, &ca, &err);
	if (!CHECK_OK(c != NULL, "connect with cache_bytes 0: %s",
		      c ? "up" : err.msg))
		return;
	for (i = 0; i < 16 && take(c, &h, (size_t)4096 << (i % 10), i % 2); i++)
		free_one(c, &h, &t);
	CHECK(i == 16 && t.let_go == 16 && released(c) == 16 &&
		      !rt_conn_cache_bytes(c),
	      "cache_bytes 0: every buffer let go (%u of %u, cache %zu)",
	      t.let_go, i, rt_conn_cache_bytes(c));
	rt_conn_destroy(c);
}

int main(void)
{
	static struct t_srv srv;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!t_have_device())
		return 77;
	t_watchdog(300);
	if (!CHECK_OK(t_srv_start(&srv, t_addr4(), NULL) == 0,
		      "rt server on %s", t_addr4()))
		return tu_done();
	test_cap(&srv);
	test_destroy(&srv);
	test_no_cache(&srv);
	t_srv_stop(&srv);
	return tu_done();
}
