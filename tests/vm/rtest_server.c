/*
 * rtest_server.c - the rtest program (tests/rpc/rtest.x) served over
 * RPC-over-RDMA through the public API only: svc_rdma_create(), svc_reg()
 * and libtirpc's unchanged svc_run().  VM tests start it in the background.
 *
 * usage: rtest_server [-4|-6] [-a ADDR] [-p PORT] [-c CREDITS] [-i INLINE]
 *                     [--max-read BYTES] [--max-conns N]
 *                     [--max-conns-per-peer N] [--idle-timeout SECONDS]
 *                     [--pidfile FILE] [--spend-fds N]
 *
 * Listens on ADDR (default: the wildcard address of the family) and PORT
 * (default 0: any free port), then prints "listening on ADDR port N" and
 * flushes, so a script can wait for that line.  SIGTERM or SIGINT makes
 * svc_run() return (svc_exit() from svc_run's own thread, via a signalfd
 * SVCXPRT), everything is destroyed, and the exit status is 0: under a leak
 * checker a clean exit means nothing leaked.  SIGUSR1 drops every
 * connection and listens again on the same port (t_sig_relisten(), the
 * fault injection of t_fault.c).
 *
 * --spend-fds N (a test knob) raises the fd limit and opens N fds once
 * listening, so that the fds of new connections are beyond what svc_run
 * can poll (libtirpc sized its descriptor table by the limit before it
 * was raised): they must be refused with a message.
 *
 * RTEST_STATS answers from the transport's own counters
 * (SVC_CONTROL(SVCGET_RDMA_STATS)): calls handed to the RPC layer, the most
 * calls one connection ever had received and not yet answered, the largest
 * credit grant sent, connections accepted and closed by the server.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "rtest.h"
#include "tests/vm/t_opt.h"
#include "tests/vm/t_sig_xprt.h"

#define MAX_SLEEP_MS 60000

/* The dispatch function of rtest_svc.c (rpcgen declares it nowhere). */
void rtest_prog_1(struct svc_req *rq, SVCXPRT *x);

/* ---- Procedures ----------------------------------------------------------- */

bool_t rtest_null_1_svc(void *arg, void *res, struct svc_req *rq)
{
	return TRUE;
}

/* The argument's buffer becomes the result: no copy of large data. */
bool_t rtest_echo_1_svc(rtest_data *arg, rtest_data *res, struct svc_req *rq)
{
	*res = *arg;
	arg->rtest_data_val = NULL;
	arg->rtest_data_len = 0;
	return TRUE;
}

bool_t rtest_sum_1_svc(rtest_ints *arg, quad_t *res, struct svc_req *rq)
{
	u_int i;

	*res = 0;
	for (i = 0; i < arg->rtest_ints_len; i++)
		*res += arg->rtest_ints_val[i];
	return TRUE;
}

bool_t rtest_fill_1_svc(rtest_fill_args *arg, rtest_data *res,
			struct svc_req *rq)
{
	u_int i;

	if (arg->len > RTEST_MAXDATA) {
		svcerr_decode(rq->rq_xprt);
		return FALSE;
	}
	res->rtest_data_len = arg->len;
	res->rtest_data_val = malloc(arg->len ? arg->len : 1);
	if (!res->rtest_data_val) {
		svcerr_systemerr(rq->rq_xprt);
		return FALSE;
	}
	for (i = 0; i < arg->len; i++)
		res->rtest_data_val[i] = (char)((arg->seed + i * 131u) & 0xff);
	return TRUE;
}

bool_t rtest_sleep_1_svc(int *arg, int *res, struct svc_req *rq)
{
	int ms = *arg < 0 ? 0 : *arg > MAX_SLEEP_MS ? MAX_SLEEP_MS : *arg;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	*res = ms;
	return TRUE;
}

bool_t rtest_stats_1_svc(void *arg, rtest_stats *res, struct svc_req *rq)
{
	struct rpcrdma_svc_stats st;

	memset(&st, 0, sizeof(st));
	if (!SVC_CONTROL(rq->rq_xprt, SVCGET_RDMA_STATS, &st)) {
		svcerr_systemerr(rq->rq_xprt);
		return FALSE;
	}
	res->calls = st.requests;
	res->max_inflight = st.max_inflight;
	res->max_granted = st.max_granted;
	res->conns = st.conns_accepted;
	res->conns_reaped = st.conns_reaped;
	return TRUE;
}

bool_t rtest_echostr_1_svc(char **arg, char **res, struct svc_req *rq)
{
	*res = *arg;
	*arg = NULL;
	return TRUE;
}

/*
 * rtest's Upper-Layer Binding: ECHO's argument is DDP-eligible, so a
 * requester may send it in a Read chunk (t_svc does, byte by byte); the
 * server refuses a Read chunk at any item its table does not designate
 * (V1-DDP-1).
 */
static int ulb_register(void)
{
	struct rpcrdma_ulb_entry e = {
		.prog = RTEST_PROG,
		.vers = RTEST_VERS,
		.proc = RTEST_ECHO,
		.dir = RPCRDMA_ULB_CALL,
		.items = 1,
	};

	return rpcrdma_ulb_register(&e);
}

int rtest_prog_1_freeresult(SVCXPRT *x, xdrproc_t proc, caddr_t res)
{
	xdr_free(proc, res);
	return 1;
}

/* ---- Options -------------------------------------------------------------- */

struct opts {
	int family;
	const char *addr;
	unsigned int port;
	const char *pidfile;
	unsigned int spend_fds;
	struct rpcrdma_attr attr;
};

static void usage(void)
{
	fprintf(stderr,
		"usage: rtest_server [-4|-6] [-a ADDR] [-p PORT] [-c CREDITS] [-i INLINE]\n"
		"                    [--max-read BYTES] [--max-conns N]\n"
		"                    [--max-conns-per-peer N] [--idle-timeout SECONDS]\n"
		"                    [--pidfile FILE] [--spend-fds N]\n");
	exit(2);
}

/* A whole number, or usage(). */
static unsigned long number(const char *s)
{
	return t_opt_number(s, usage);
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "max-read", required_argument, NULL, 'R' },
		{ "max-conns", required_argument, NULL, 'M' },
		{ "max-conns-per-peer", required_argument, NULL, 'P' },
		{ "idle-timeout", required_argument, NULL, 'I' },
		{ "pidfile", required_argument, NULL, 'F' },
		{ "spend-fds", required_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->family = AF_INET;
	rpcrdma_attr_init(&o->attr);
	while ((c = getopt_long(argc, argv, "46a:p:c:i:", lo, NULL)) != -1) {
		switch (c) {
		case '4':
			o->family = AF_INET;
			break;
		case '6':
			o->family = AF_INET6;
			break;
		case 'a':
			o->addr = optarg;
			break;
		case 'p':
			o->port = (unsigned int)number(optarg);
			break;
		case 'c':
			o->attr.credits = (unsigned int)number(optarg);
			break;
		case 'i':
			o->attr.inline_send = (unsigned int)number(optarg);
			o->attr.inline_recv = o->attr.inline_send;
			break;
		case 'R':
			o->attr.max_read_bytes = number(optarg);
			break;
		case 'M':
			o->attr.max_conns = (unsigned int)number(optarg);
			break;
		case 'P':
			o->attr.max_conns_per_peer =
				(unsigned int)number(optarg);
			break;
		case 'I':
			o->attr.idle_timeout = number(optarg);
			break;
		case 'F':
			o->pidfile = optarg;
			break;
		case 'S':
			o->spend_fds = (unsigned int)number(optarg);
			break;
		default:
			usage();
		}
	}
	if (optind != argc || o->port > 65535)
		usage();
	o->family = t_opt_family(o->addr, o->family);
}

/* Raise the fd limit and open n fds (kept until exit). */
static void spend_fds(unsigned int n)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < 4096 &&
	    rl.rlim_max >= 4096) {
		rl.rlim_cur = 4096;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	while (n--)
		if (open("/dev/null", O_RDONLY | O_CLOEXEC) < 0)
			break;
}

static void write_pidfile(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		exit(1);
	}
	fprintf(f, "%ld\n", (long)getpid());
	fclose(f);
}

int main(int argc, char **argv)
{
	struct sockaddr_storage ss;
	char abuf[INET6_ADDRSTRLEN];
	SVCXPRT *lx, *sx;
	struct opts o;

	parse(argc, argv, &o);
	if (!t_opt_sockaddr(&ss, o.family, o.addr, o.port)) {
		fprintf(stderr, "rtest_server: bad address '%s'\n", o.addr);
		return 2;
	}
	sx = t_sig_xprt();
	lx = svc_rdma_create((struct sockaddr *)&ss, &o.attr);
	if (!sx || !lx) {
		fprintf(stderr, "rtest_server: cannot listen\n");
		return 1;
	}
	/* No netconfig: the program is not registered with rpcbind. */
	if (ulb_register()) {
		fprintf(stderr, "rtest_server: rpcrdma_ulb_register failed\n");
		return 1;
	}
	if (!svc_reg(lx, RTEST_PROG, RTEST_VERS, rtest_prog_1, NULL)) {
		fprintf(stderr, "rtest_server: svc_reg failed\n");
		return 1;
	}
	t_sig_relisten(&lx, &o.attr, RTEST_PROG, RTEST_VERS, rtest_prog_1);
	if (o.spend_fds)
		spend_fds(o.spend_fds);
	if (o.pidfile)
		write_pidfile(o.pidfile);
	inet_ntop(ss.ss_family,
		  ss.ss_family == AF_INET6 ?
			  (void *)&((struct sockaddr_in6 *)&ss)->sin6_addr :
			  (void *)&((struct sockaddr_in *)&ss)->sin_addr,
		  abuf, sizeof(abuf));
	printf("listening on %s port %u\n", abuf, lx->xp_port);
	fflush(stdout);

	svc_run();

	/* svc_unreg() would ask rpcbind; the callout is simply left. */
	svc_destroy(lx); /* and every connection it accepted */
	svc_destroy(sx);
	if (o.pidfile)
		unlink(o.pidfile);
	return 0;
}
