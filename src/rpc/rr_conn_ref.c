/*
 * rr_conn_ref.c - a connection's references: the last one takes the
 * connection, its counters added to the rr_clnt's first (rr_clnt.c adds the
 * current one's for rr_clnt_stats too).  Below rr_wait.c (a polling leader
 * holds a reference) and every other file that keeps one.
 */
#include <stdlib.h>
#include <string.h>

#include "rpc/rr_call_priv.h"

/* rt_stats is all uint64_t counters: add them field by field. */
void rr_conn_stats_add(struct rt_stats *to, const struct rt_conn *rt)
{
	uint64_t *t = (uint64_t *)to, f[sizeof(*to) / sizeof(uint64_t)];
	struct rt_stats from;
	size_t i;

	_Static_assert(sizeof(from) % sizeof(uint64_t) == 0,
		       "struct rt_stats holds uint64_t counters only");
	rt_conn_stats(rt, &from);
	memcpy(f, &from, sizeof(f));
	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		t[i] += f[i];
}

void rr_conn_put(struct rr_clnt *rr, struct rr_conn *conn)
{
	if (--conn->refs)
		return;
	rr_conn_stats_add(&rr->st.conn, conn->rt);
	rt_conn_destroy(conn->rt);
	free(conn);
}
