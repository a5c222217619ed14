/*
 * ddp_serve.c - the main loop of the direct data placement test servers
 * (ddp_serve.h): options, listener, banner, svc_run() and shutdown through
 * a signalfd SVCXPRT polled by svc_run itself (svc_exit() is then called
 * from svc_run's own thread, never from a signal handler).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "tests/vm/ddp_serve.h"

void ddp_pattern(void *buf, size_t len, unsigned int seed)
{
	uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)((seed + i * 131u) & 0xff);
}

/* ---- Shutdown: a signalfd polled by svc_run ------------------------------- */

static bool_t sig_recv(SVCXPRT *x, struct rpc_msg *msg)
{
	struct signalfd_siginfo si;

	if (read(x->xp_fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		svc_exit();	/* svc_run returns after this poll round */
	return FALSE;
}

static enum xprt_stat sig_stat(SVCXPRT *x)
{
	return XPRT_IDLE;
}

static bool_t sig_refuse(SVCXPRT *x, xdrproc_t p, void *w)
{
	return FALSE;
}

static bool_t sig_reply(SVCXPRT *x, struct rpc_msg *m)
{
	return FALSE;
}

static void sig_destroy(SVCXPRT *x)
{
	xprt_unregister(x);
	close(x->xp_fd);
	free(x);
}

static const struct xp_ops sig_ops = {
	.xp_recv = sig_recv,
	.xp_stat = sig_stat,
	.xp_getargs = sig_refuse,
	.xp_reply = sig_reply,
	.xp_freeargs = sig_refuse,
	.xp_destroy = sig_destroy,
};

static SVCXPRT *sig_xprt(void)
{
	SVCXPRT *x;
	sigset_t set;
	int fd;

	/* started in the background, we may have SIGINT ignored: an
	 * ignored signal never reaches a signalfd */
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return NULL;
	fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	x = fd < 0 ? NULL : calloc(1, sizeof(*x));
	if (!x) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	x->xp_fd = fd;
	x->xp_ops = &sig_ops;
	xprt_register(x);
	return x;
}

/* ---- Options -------------------------------------------------------------- */

struct opts {
	int family;
	const char *addr;
	unsigned long port;
	struct rpcrdma_attr attr;
};

static void usage(const char *name)
{
	fprintf(stderr, "usage: %s [-4|-6] [-a ADDR] [-p PORT] [-c CREDITS]\n",
		name);
	exit(2);
}

static unsigned long number(const char *name, const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end)
		usage(name);
	return v;
}

static void parse(int argc, char **argv, const char *name, struct opts *o)
{
	int c;

	memset(o, 0, sizeof(*o));
	o->family = AF_INET;
	rpcrdma_attr_init(&o->attr);
	while ((c = getopt(argc, argv, "46a:p:c:")) != -1) {
		switch (c) {
		case '4': o->family = AF_INET; break;
		case '6': o->family = AF_INET6; break;
		case 'a': o->addr = optarg; break;
		case 'p': o->port = number(name, optarg); break;
		case 'c':
			o->attr.credits = (unsigned int)number(name, optarg);
			break;
		default: usage(name);
		}
	}
	if (optind != argc || o->port > 65535)
		usage(name);
	if (o->addr && strchr(o->addr, ':'))
		o->family = AF_INET6;
}

static int make_addr(const struct opts *o, struct sockaddr_storage *ss)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	const char *a = o->addr ? o->addr :
			o->family == AF_INET6 ? "::" : "0.0.0.0";

	memset(ss, 0, sizeof(*ss));
	if (o->family == AF_INET6) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)o->port);
		return inet_pton(AF_INET6, a, &s6->sin6_addr) == 1 ? 0 : -1;
	}
	s4->sin_family = AF_INET;
	s4->sin_port = htons((uint16_t)o->port);
	return inet_pton(AF_INET, a, &s4->sin_addr) == 1 ? 0 : -1;
}

static void banner(const struct sockaddr_storage *ss, unsigned int port)
{
	char abuf[INET6_ADDRSTRLEN];

	inet_ntop(ss->ss_family, ss->ss_family == AF_INET6 ?
		  (const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr :
		  (const void *)&((const struct sockaddr_in *)ss)->sin_addr,
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
	if (make_addr(&o, &ss)) {
		fprintf(stderr, "%s: bad address '%s'\n", name, o.addr);
		return 2;
	}
	sx = sig_xprt();
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
	banner(&ss, lx->xp_port);

	svc_run();

	svc_destroy(lx);	/* and every connection it accepted */
	svc_destroy(sx);
	return 0;
}
