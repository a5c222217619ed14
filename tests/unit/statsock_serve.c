/*
 * statsock_serve.c - a stand-in program for tests/unit/stat-tool.sh: the
 * registry and statistics socket of the library (src/glue/rpcrdma_stats.c,
 * rpcrdma_statsock.c, compiled in) serving fake objects, so that
 * rpcrdma-stat(1) can be tested on a host without an RDMA device.
 *
 *     RPCRDMA_STATS_SOCKET=DIR statsock_serve NOBJ
 *
 * tracks NOBJ objects labelled "fake K" (K = 1..NOBJ), prints "ready" on
 * stdout, and exits normally (removing its socket) at SIGTERM.  Each
 * time an object is asked for its counters its total "calls" grows by 5
 * (5 at the first answer) and its "replies" by 4, while "credits" stays
 * 32; its conns() callback lists one connection, "fake K conn
 * 192.0.2.5:4000K", whose "requests" grow by 3 and whose "inflight" is 2.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include "glue/rpcrdma_stats.h"

struct fake {
	char label[32];
	unsigned k;
	uint64_t asked;	 /* by get() */
	uint64_t listed; /* by conns() */
	struct rpcrdma_stats_reg reg;
};

static void fake_get(struct rpcrdma_stats_reg *reg, FILE *f)
{
	struct fake *o = RPCRDMA_STATS_OWNER(reg, struct fake, reg);
	struct rpcrdma_clnt_stats st;

	o->asked++;
	memset(&st, 0, sizeof(st));
	st.calls = 5 * o->asked;
	st.replies = 4 * o->asked;
	st.credits = 32;
	rpcrdma_stats_print_clnt(f, o->label, &st);
}

static void fake_conns(struct rpcrdma_stats_reg *reg, FILE *f)
{
	struct fake *o = RPCRDMA_STATS_OWNER(reg, struct fake, reg);
	struct sockaddr_in peer = { .sin_family = AF_INET,
				    .sin_port = htons(40000 + o->k) };
	struct rpcrdma_stats_conn c = { .version = 2, .inflight = 2 };
	char kind[64], label[RPCRDMA_STATS_LABEL_LEN];

	o->listed++;
	c.requests = 3 * o->listed;
	inet_pton(AF_INET, "192.0.2.5", &peer.sin_addr);
	snprintf(kind, sizeof(kind), "%s conn", o->label);
	rpcrdma_stats_label(label, sizeof(label), kind,
			    (struct sockaddr *)&peer, 0, 0);
	rpcrdma_stats_print_conn(f, label, &c);
}

static volatile sig_atomic_t stop;
static struct fake *o; /* alive until exit, after the registry forgets it */

static void on_term(int sig)
{
	stop = 1;
}

int main(int argc, char **argv)
{
	unsigned n = argc == 2 ? (unsigned)atoi(argv[1]) : 0;
	struct sigaction sa = { .sa_handler = on_term };
	sigset_t term, old;

	if (!n || n > 1000) {
		fprintf(stderr, "usage: statsock_serve NOBJ (1 to 1000)\n");
		return 2;
	}
	/* SIGTERM only while waiting for it: no wake-up is lost */
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, &old);
	sigaction(SIGTERM, &sa, NULL);
	o = calloc(n, sizeof(*o));
	if (!o)
		return 1;
	for (unsigned k = 0; k < n; k++) {
		o[k].k = k + 1;
		snprintf(o[k].label, sizeof(o[k].label), "fake %u", k + 1);
		rpcrdma_stats_reg_init(&o[k].reg, fake_get);
		o[k].reg.conns = fake_conns;
		rpcrdma_stats_track(&o[k].reg);
	}
	printf("ready\n");
	fflush(stdout);
	while (!stop)
		sigsuspend(&old);
	/* objects still tracked: exit() removes the socket */
	return 0;
}
