/*
 * rpcrdma_stats.c - printing struct rpcrdma_clnt_stats and struct
 * rpcrdma_svc_stats, and the registry of live CLIENTs and servers: printed
 * when destroyed or when the program exits with RPCRDMA_STATS=1, served
 * on demand with RPCRDMA_STATS_SOCKET (rpcrdma_statsock.c;
 * rpcrdma-environ(7)).  The contract is in rpcrdma_stats.h.
 */
#define _GNU_SOURCE /* secure_getenv */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rpc/rpcrdma.h>

#include "conf/rc_env.h"
#include "glue/rpcrdma_stats.h"
#include "glue/rpcrdma_statsock.h"

/* ---- Printer ------------------------------------------------------------ */

struct stats_line {
	FILE *f;
	const char *label;
	const char *group; /* of the line being written, NULL: none yet */
};

static void stats_put(struct stats_line *l, const char *group, const char *name,
		      uint64_t v)
{
	if (!l->group || strcmp(l->group, group)) {
		if (l->group)
			fputc('\n', l->f);
		if (l->label && *l->label)
			fprintf(l->f, "rpcrdma: %s:", l->label);
		else
			fputs("rpcrdma:", l->f);
		l->group = group;
	}
	fprintf(l->f, " %s %" PRIu64, name, v);
}

static void end(struct stats_line *l)
{
	if (l->group)
		fputc('\n', l->f);
	funlockfile(l->f);
}

#define PUT_FIELD(g, m) stats_put(&l, #g, #m, (uint64_t)st->m);

void rpcrdma_stats_print_clnt(FILE *f, const char *label,
			      const struct rpcrdma_clnt_stats *st)
{
	struct stats_line l = { f, label, NULL };

	flockfile(f);
	RPCRDMA_CLNT_STATS_FIELDS(PUT_FIELD)
	end(&l);
}

void rpcrdma_stats_print_svc(FILE *f, const char *label,
			     const struct rpcrdma_svc_stats *st)
{
	struct stats_line l = { f, label, NULL };

	flockfile(f);
	RPCRDMA_SVC_STATS_FIELDS(PUT_FIELD)
	end(&l);
}

void rpcrdma_stats_print_conn(FILE *f, const char *label,
			      const struct rpcrdma_stats_conn *st)
{
	struct stats_line l = { f, label, NULL };

	flockfile(f);
	RPCRDMA_CONN_STATS_FIELDS(PUT_FIELD)
	end(&l);
}

#undef PUT_FIELD

char *rpcrdma_stats_label(char *buf, size_t len, const char *kind,
			  const struct sockaddr *sa, rpcprog_t prog,
			  rpcvers_t vers)
{
	char a[INET6_ADDRSTRLEN] = "?";
	char addr[INET6_ADDRSTRLEN + 16] = "";
	char pv[48] = "";

	if (!len)
		return buf;
	if (sa && sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)sa;

		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		snprintf(addr, sizeof(addr), " %s:%u", a,
			 (unsigned)ntohs(s4->sin_port));
	} else if (sa && sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)sa;

		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		snprintf(addr, sizeof(addr), " [%s]:%u", a,
			 (unsigned)ntohs(s6->sin6_port));
	} else if (sa) {
		snprintf(addr, sizeof(addr), " family%d", (int)sa->sa_family);
	}
	if (prog)
		snprintf(pv, sizeof(pv), " prog 0x%lx v%lu",
			 (unsigned long)prog, (unsigned long)vers);
	snprintf(buf, len, "%s%s%s", kind ? kind : "", addr, pv);
	return buf;
}

/* ---- Registry ----------------------------------------------------------- */

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rpcrdma_stats_reg *reg_head; /* tracked objects */
static bool reg_hooks; /* atexit() and pthread_atfork() done;
				 * written under reg_lock, read atomically */

void rpcrdma_stats_reg_init(struct rpcrdma_stats_reg *reg,
			    void (*get)(struct rpcrdma_stats_reg *, FILE *))
{
	memset(reg, 0, sizeof(*reg));
	reg->get = get;
}

bool rpcrdma_stats_enabled(void)
{
	const char *e = rc_getenv("RPCRDMA_STATS");

	return e && *e && strcmp(e, "0");
}

/* Where to print: RPCRDMA_STATS_FILE (append) or stderr.  Reported once
 * if the file cannot be opened. */
static FILE *out_open(void)
{
	static bool warned;
	const char *p = rc_getenv("RPCRDMA_STATS_FILE");
	FILE *f;

	if (!p || !*p)
		return stderr;
	f = fopen(p, "ae");
	if (f)
		return f;
	if (!warned) {
		warned = true;
		fprintf(stderr,
			"rpcrdma: RPCRDMA_STATS_FILE=%s: %s; "
			"printing statistics on stderr\n",
			p, strerror(errno));
	}
	return stderr;
}

static void out_close(FILE *f)
{
	if (f == stderr)
		fflush(f);
	else
		fclose(f);
}

static void unlink_reg(struct rpcrdma_stats_reg *reg)
{
	if (reg->prev)
		reg->prev->next = reg->next;
	else
		reg_head = reg->next;
	if (reg->next)
		reg->next->prev = reg->prev;
	reg->prev = reg->next = NULL;
	reg->tracked = false;
}

/* Print, then forget, every object this process tracked and still has;
 * remove its socket. */
static void stats_atexit(void)
{
	struct rpcrdma_stats_reg *reg;
	pid_t me = getpid();
	FILE *f = NULL;

	pthread_mutex_lock(&reg_lock);
	rpcrdma_statsock_exit();
	while ((reg = reg_head)) {
		unlink_reg(reg);
		if (reg->pid != me || !reg->print)
			continue;
		if (!f)
			f = out_open();
		reg->get(reg, f);
	}
	pthread_mutex_unlock(&reg_lock);
	if (f)
		out_close(f);
}

/* A child forked while another thread held reg_lock must not inherit it
 * locked: its exit handler takes it. */
static void fork_prepare(void)
{
	pthread_mutex_lock(&reg_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&reg_lock);
}

static void fork_child(void)
{
	pthread_mutex_init(&reg_lock, NULL);
	rpcrdma_statsock_forked();
}

void rpcrdma_stats_track(struct rpcrdma_stats_reg *reg)
{
	bool print;
	const char *sock;

	if (!reg || !reg->get)
		return;
	print = rpcrdma_stats_enabled();
	sock = rpcrdma_statsock_wanted();
	if (!print && !sock)
		return;
	pthread_mutex_lock(&reg_lock);
	if (!reg_hooks) {
		__atomic_store_n(&reg_hooks, true, __ATOMIC_RELEASE);
		/* On failure objects are still printed when destroyed. */
		atexit(stats_atexit);
		pthread_atfork(fork_prepare, fork_parent, fork_child);
	}
	if (sock)
		rpcrdma_statsock_start(sock);
	if (!reg->tracked) {
		reg->pid = getpid();
		reg->print = print;
		reg->prev = NULL;
		reg->next = reg_head;
		if (reg_head)
			reg_head->prev = reg;
		reg_head = reg;
		reg->tracked = true;
	}
	pthread_mutex_unlock(&reg_lock);
}

void rpcrdma_stats_untrack(struct rpcrdma_stats_reg *reg, bool print)
{
	FILE *f;

	/* Fast path: nothing was ever tracked (RPCRDMA_STATS off).  A
	 * tracked reg was linked after reg_hooks was set, by its owner,
	 * who is calling us now. */
	if (!reg || !__atomic_load_n(&reg_hooks, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&reg_lock);
	if (!reg->tracked) {
		pthread_mutex_unlock(&reg_lock);
		return;
	}
	unlink_reg(reg);
	if (print && reg->print && reg->pid == getpid()) {
		f = out_open();
		reg->get(reg, f);
		out_close(f);
	}
	pthread_mutex_unlock(&reg_lock);
}

unsigned int rpcrdma_stats_report(FILE *f)
{
	struct rpcrdma_stats_reg *reg, *last = NULL;
	pid_t me = getpid();
	unsigned int n = 0;

	pthread_mutex_lock(&reg_lock);
	for (reg = reg_head; reg; reg = reg->next)
		last = reg;
	/* Oldest first: the order the program made them in. */
	for (reg = last; reg; reg = reg->prev) {
		if (reg->pid != me)
			continue;
		reg->get(reg, f);
		if (reg->conns)
			reg->conns(reg, f);
		n++;
	}
	pthread_mutex_unlock(&reg_lock);
	return n;
}
