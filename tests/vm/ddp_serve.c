/*
 * ddp_serve.c - the main loop of the direct data placement test servers
 * (ddp_serve.h): options, listener, banner, svc_run() and shutdown through
 * a signalfd SVCXPRT polled by svc_run itself (svc_exit() is then called
 * from svc_run's own thread, never from a signal handler).
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "tests/vm/ddp_serve.h"
#include "tests/vm/t_opt.h"
#include "tests/vm/t_sig_xprt.h"

void ddp_pattern(void *buf, size_t len, unsigned int seed)
{
	uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)((seed + i * 131u) & 0xff);
}

/* ---- Options -------------------------------------------------------------- */

struct opts {
	int family;
	const char *addr;
	unsigned long port;
	struct rpcrdma_attr attr;
};

static const char *prog_name;

static void usage(void)
{
	fprintf(stderr, "usage: %s [-4|-6] [-a ADDR] [-p PORT] [-c CREDITS]\n",
		prog_name);
	exit(2);
}

static void parse(int argc, char **argv, const char *name, struct opts *o)
{
	int c;

	prog_name = name;
	memset(o, 0, sizeof(*o));
	o->family = AF_INET;
	rpcrdma_attr_init(&o->attr);
	while ((c = getopt(argc, argv, "46a:p:c:")) != -1) {
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
			o->port = t_opt_number(optarg, usage);
			break;
		case 'c':
			o->attr.credits =
				(unsigned int)t_opt_number(optarg, usage);
			break;
		default:
			usage();
		}
	}
	if (optind != argc || o->port > 65535)
		usage();
	o->family = t_opt_family(o->addr, o->family);
}

static void banner(const struct sockaddr_storage *ss, unsigned int port)
{
	char abuf[INET6_ADDRSTRLEN];

	inet_ntop(ss->ss_family,
		  ss->ss_family == AF_INET6 ?
			  (const void *)&((const struct sockaddr_in6 *)ss)
				  ->sin6_addr :
			  (const void *)&((const struct sockaddr_in *)ss)
				  ->sin_addr,
		  abuf, sizeof(abuf));
	printf("listening on %s port %u\n", abuf, port);
	fflush(stdout);
}

int ddp_serve(int argc, char **argv, const char *name, rpcprog_t prog,
	      rpcvers_t vers, ddp_dispatch_fn dispatch)
{
	struct sockaddr_storage ss;
	SVCXPRT *lx, *sx;
	struct opts o;

	parse(argc, argv, name, &o);
	if (!t_opt_sockaddr(&ss, o.family, o.addr, (unsigned int)o.port)) {
		fprintf(stderr, "%s: bad address '%s'\n", name, o.addr);
		return 2;
	}
	sx = t_sig_xprt();
	/* never outlive the test that started us (one that crashed, say):
	 * SIGTERM, taken by sig_xprt's signalfd, is a clean exit */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() == 1)
		return 1;
	lx = svc_rdma_create((struct sockaddr *)&ss, &o.attr);
	if (!sx || !lx) {
		fprintf(stderr, "%s: cannot listen\n", name);
		return 1;
	}
	/* No netconfig: not registered with rpcbind. */
	if (!svc_reg(lx, prog, vers, dispatch, NULL)) {
		fprintf(stderr, "%s: svc_reg failed\n", name);
		return 1;
	}
	t_sig_relisten(&lx, &o.attr, prog, vers, dispatch);
	banner(&ss, lx->xp_port);

	svc_run();

	svc_destroy(lx); /* and every connection it accepted */
	svc_destroy(sx);
	return 0;
}
