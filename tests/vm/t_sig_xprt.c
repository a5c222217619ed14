/*
 * t_sig_xprt.c - SIGTERM/SIGINT end svc_run(), SIGUSR1 drops every
 * connection (t_sig_xprt.h).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "tests/vm/t_sig_xprt.h"

static struct {
	SVCXPRT **lx;
	struct rpcrdma_attr attr;
	struct sockaddr_storage addr;
	rpcprog_t prog;
	rpcvers_t vers;
	void (*dispatch)(struct svc_req *, SVCXPRT *);
} relisten;

void t_sig_relisten(SVCXPRT **lx, const struct rpcrdma_attr *attr,
		    rpcprog_t prog, rpcvers_t vers,
		    void (*dispatch)(struct svc_req *, SVCXPRT *))
{
	relisten.lx = lx;
	relisten.attr = *attr;
	memcpy(&relisten.addr, (*lx)->xp_ltaddr.buf,
	       (*lx)->xp_ltaddr.len < sizeof(relisten.addr) ?
		       (*lx)->xp_ltaddr.len :
		       sizeof(relisten.addr));
	relisten.prog = prog;
	relisten.vers = vers;
	relisten.dispatch = dispatch;
}

/* Destroying the listener destroys its connections (svc_rdma_create(3));
 * the same port is free again at once. */
static void drop_all(void)
{
	SVCXPRT *x;

	if (!relisten.lx)
		return;
	svc_destroy(*relisten.lx);
	*relisten.lx = NULL;
	x = svc_rdma_create((struct sockaddr *)&relisten.addr, &relisten.attr);
	if (!x || !svc_reg(x, relisten.prog, relisten.vers, relisten.dispatch,
			   NULL)) {
		fprintf(stderr,
			"cannot listen again after dropping every connection\n");
		exit(1);
	}
	*relisten.lx = x;
	printf("dropped every connection, listening on port %u\n", x->xp_port);
	fflush(stdout);
}

static bool_t sig_recv(SVCXPRT *x, struct rpc_msg *msg)
{
	struct signalfd_siginfo si;

	if (read(x->xp_fd, &si, sizeof(si)) != (ssize_t)sizeof(si))
		return FALSE;
	if (si.ssi_signo == SIGUSR1)
		drop_all();
	else
		svc_exit(); /* svc_run returns after this poll round */
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

SVCXPRT *t_sig_xprt(void)
{
	SVCXPRT *x;
	sigset_t set;
	int fd;

	/* A shell starting us in the background may have us ignore SIGINT:
	 * an ignored signal never reaches a signalfd. */
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR1);
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
