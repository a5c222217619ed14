/*
 * t_rt_bench.c - what fencing costs per RPC on a real device: one
 * rt_reg_expose() + rt_reg_revoke() of a range, in MW mode (window bind and
 * local invalidation over pool memory; and over ordinary memory, which adds
 * a registration) and in MR mode (ibv_reg_mr + ibv_dereg_mr), for 4 KiB to
 * 8 MiB, with the revoke waiting on the completion channel and busy-polling;
 * and what copying the same octets out of pool memory costs.  The CLIENT's
 * choice for a caller's result buffer (RPCRDMA_DDP_REG_MIN, rpcrdma_ulb(3))
 * is between "mw, heap memory" (register the caller's buffer, zero copy)
 * and "mw, pool memory" + "copy" (pool buffer, one copy): the last line
 * prints the smallest size at which registering wins.
 *
 * Prints, per variant, the median of interleaved rounds in microseconds per
 * expose+revoke.  A
 * measurement, never a pass/fail test: compare ratios within one run
 * (Soft-RoCE latency moves between boots).
 *   tests/vm/run -- tests/vm/t_rt_bench [iterations-for-4KiB]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/vm/t_rt_util.h"

#define ROUNDS 7

struct variant {
	const char *name;
	enum rt_reg_mode mode;
	bool pool;
	bool busy;
	bool copy; /* memcpy from pool to heap memory, no exposure */
	/* per run */
	void *dst;
	struct rt_conn *c;
	struct rt_regset *set;
	void *buf;
	double us[ROUNDS];
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Microseconds per expose+revoke over iters; < 0 on error. */
static double batch(struct variant *v, size_t len, int iters)
{
	struct rw_segment seg;
	struct rt_err err;
	int64_t t0 = t_now_us();
	int i;

	for (i = 0; v->copy && i < iters; i++) {
		memcpy(v->dst, v->buf, len);
		__asm__ __volatile__("" : : "r"(v->dst) : "memory");
	}
	for (i = 0; !v->copy && i < iters; i++) {
		if (rt_reg_expose(v->set, v->buf, len, RT_REMOTE_WRITE, &seg, 1,
				  &err) != 1 ||
		    rt_reg_revoke(v->set, &err)) {
			fprintf(stderr, "%s: %s\n", v->name, err.msg);
			return -1;
		}
	}
	return (double)(t_now_us() - t0) / iters;
}

static int open_variant(struct t_srv *s, struct variant *v, size_t len)
{
	struct rt_conn_attr ca;
	struct rt_err err;

	rt_conn_attr_init(&ca);
	ca.reg_mode = v->mode;
	ca.busy_poll = v->busy;
	v->c = t_connect(t_addr4(), s->port, &ca, &err);
	if (!v->c) {
		printf("%s: connect failed: %s\n", v->name, err.msg);
		return -1;
	}
	v->set = rt_regset_create(v->c, &err);
	v->buf = v->pool ? rt_reg_buf_alloc(v->c, len, &err) :
			   aligned_alloc(4096, len);
	v->dst = v->copy ? aligned_alloc(4096, len) : NULL;
	if (!v->set || !v->buf || (v->copy && !v->dst))
		return -1;
	memset(v->buf, 1, len);
	if (v->dst)
		memset(v->dst, 2, len);
	return 0;
}

static void close_variant(struct variant *v)
{
	if (v->pool)
		rt_reg_buf_free(v->c, v->buf);
	else
		free(v->buf);
	free(v->dst);
	v->dst = NULL;
	rt_regset_destroy(v->set);
	rt_conn_destroy(v->c);
	v->c = NULL;
}

/* Rounds interleave the variants so that drift in the emulated machine's
 * speed hits them alike; each reports its median round. */
static double median(struct variant *v)
{
	return v->us[ROUNDS / 2];
}

static struct variant *find(struct variant *v, unsigned int nv,
			    const char *name)
{
	unsigned int i;

	for (i = 0; i < nv; i++)
		if (!strcmp(v[i].name, name))
			return &v[i];
	return NULL;
}

/* Zero copy (register the caller's memory) against a pool buffer plus one
 * copy, for this size: the CLIENT's RPCRDMA_DDP_REG_MIN decision. */
static bool print_choice(struct variant *v, unsigned int nv, size_t len)
{
	double heap = median(find(v, nv, "mw, heap memory, channel"));
	double pool = median(find(v, nv, "mw, pool memory, channel"));
	double copy = median(find(v, nv, "copy, pool to heap"));

	printf("choice %8zu octets: register caller memory %.1f us, pool + copy %.1f + %.1f = %.1f us: %s\n",
	       len, heap, pool, copy, pool + copy,
	       heap < pool + copy ? "register" : "copy");
	return heap < pool + copy;
}

/* 1 if registering won at this size, 0 if copying did, -1 if a variant
 * could not be measured. */
static int run_size(struct t_srv *s, struct variant *v, unsigned int nv,
		    size_t len, int iters)
{
	unsigned int i, r;
	struct rt_stats st;

	for (i = 0; i < nv; i++) {
		if (open_variant(s, &v[i], len)) {
			while (i-- > 0)
				close_variant(&v[i]);
			return -1;
		}
	}
	for (r = 0; r < ROUNDS; r++)
		for (i = 0; i < nv; i++)
			v[i].us[r] = batch(&v[i], len, iters);
	for (i = 0; i < nv; i++) {
		qsort(v[i].us, ROUNDS, sizeof(v[i].us[0]), cmp_double);
		rt_conn_stats(v[i].c, &st);
		printf("%-28s %8zu octets: %8.1f us per expose+revoke (min %.1f, max %.1f; binds %llu, local invalidations %llu, registrations %llu)\n",
		       v[i].name, len, v[i].us[ROUNDS / 2], v[i].us[0],
		       v[i].us[ROUNDS - 1], (unsigned long long)st.binds,
		       (unsigned long long)st.invalidations,
		       (unsigned long long)st.registrations);
	}
	for (i = 0; i < nv; i++)
		close_variant(&v[i]);
	return print_choice(v, nv, len);
}

int main(int argc, char **argv)
{
	static struct variant variants[] = {
		{ .name = "mw, pool memory, channel",
		  .mode = RT_REG_MW,
		  .pool = true,
		  .busy = false },
		{ .name = "mw, pool memory, busy-poll",
		  .mode = RT_REG_MW,
		  .pool = true,
		  .busy = true },
		{ .name = "mw, heap memory, channel",
		  .mode = RT_REG_MW,
		  .pool = false,
		  .busy = false },
		{ .name = "mr, heap memory",
		  .mode = RT_REG_MR,
		  .pool = false,
		  .busy = false },
		{ .name = "mr, pool memory",
		  .mode = RT_REG_MR,
		  .pool = true,
		  .busy = false },
		{ .name = "copy, pool to heap",
		  .mode = RT_REG_MW,
		  .pool = true,
		  .copy = true },
	};
	static const size_t sizes[] = { 4096,	  16384,    65536,   262144,
					1u << 20, 4u << 20, 8u << 20 };
	size_t crossover = 0;
	int iters = argc > 1 ? atoi(argv[1]) : 200, won;
	unsigned int nv = sizeof(variants) / sizeof(variants[0]), j;
	struct rt_conn_attr sa;
	struct t_srv srv;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (iters < 1)
		iters = 200;
	if (!t_have_device())
		return 77;
	t_watchdog(1200);
	rt_conn_attr_init(&sa);
	if (t_srv_start(&srv, t_addr4(), &sa)) {
		CHECK(false, "cannot start the server on %s", t_addr4());
		return 1;
	}
	for (j = 0; j < sizeof(sizes) / sizeof(sizes[0]); j++) {
		/* fewer iterations for large sizes: about the same time each */
		int n = (int)(iters * 4096 / sizes[j]);

		/* the smallest size from which on registering always
		 * wins (sizes that could not be measured are skipped) */
		won = run_size(&srv, variants, nv, sizes[j], n < 3 ? 3 : n);
		if (won > 0 && !crossover)
			crossover = sizes[j];
		else if (!won)
			crossover = 0;
	}
	if (crossover)
		printf("crossover: registering the caller's buffer wins from %zu octets on\n",
		       crossover);
	else
		printf("crossover: copying wins at every size measured\n");
	t_srv_stop(&srv);
	return 0;
}
