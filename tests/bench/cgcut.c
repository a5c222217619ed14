/*
 * cgcut.c - libcgcut.so, preloaded into a program run under callgrind that
 * cannot cut its counts itself (rbench.sh: perftest's ib_send_lat -e, the
 * raw-verbs reference of the instruction figures; tests/bench/cg.sh).  It
 * counts the program's calls of ibv_get_cq_event(), which ib_send_lat -e
 * makes a fixed number of times per iteration, and at the calls CGCUT_AT
 * lists ("K0 K1 K2 ...", increasing) dumps callgrind's counts ("CGCUT_NAME
 * 0", "CGCUT_NAME 1", ...), so that the dumps after the first hold whole
 * iterations of the timed loop and nothing of the set-up, the CPU clock's
 * calibration or the report.  Dumps only, no CALLGRIND_ZERO_STATS: the
 * first segment after one was charged hundreds of thousands of
 * instructions too many (rbench.c).  The caller
 * counts the iterations of a dump by its sends (calls of write(), rxe's
 * doorbell), not from the cuts.
 *
 * Its own instructions are in its own object, which cg.sh leaves out: the
 * program's call reaches libibverbs' ibv_get_cq_event() as it would
 * without it, one indirect call later.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <infiniband/verbs.h>
#include <valgrind/callgrind.h>

#define MAX_CUTS 16

static unsigned long cuts[MAX_CUTS];
static char labels[MAX_CUTS][64]; /* made beforehand: libc's snprintf()
				   * would count in the dumps */
static unsigned int ncuts, next_cut;
static unsigned long calls;
static int (*real_get_cq_event)(struct ibv_comp_channel *, struct ibv_cq **,
				void **);

__attribute__((constructor)) static void cgcut_init(void)
{
	const char *s = getenv("CGCUT_AT"), *name = getenv("CGCUT_NAME");
	char *end;

	if (!name || !*name)
		name = "cut";
	while (s && ncuts < MAX_CUTS) {
		unsigned long k = strtoul(s, &end, 10);

		if (end == s)
			break;
		snprintf(labels[ncuts], sizeof(labels[ncuts]), "%s %u", name,
			 ncuts);
		cuts[ncuts++] = k;
		s = end;
	}
	real_get_cq_event =
		(int (*)(struct ibv_comp_channel *, struct ibv_cq **,
			 void **))dlsym(RTLD_NEXT, "ibv_get_cq_event");
}

int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq,
		     void **cq_context)
{
	calls++;
	if (next_cut < ncuts && calls == cuts[next_cut])
		CALLGRIND_DUMP_STATS_AT(labels[next_cut++]);
	if (!real_get_cq_event)
		return -1;
	return real_get_cq_event(channel, cq, cq_context);
}
