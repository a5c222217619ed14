/*
 * notify_server.c - a server that notifies its clients (RFC 8167, the
 * backward direction; rpcrdma_bc(3)).
 *
 * Clients call NOTIFY_SUBSCRIBE; the server keeps, for each, a CLIENT that
 * calls back on that client's own RDMA connection
 * (clnt_rdma_bc_create(rqstp->rq_xprt, ...)).  NOTIFY_PUBLISH sends its
 * text to every subscriber with the callback program's NOTIFY_EVENT and
 * forgets those that have gone.  No listener on the clients, no route
 * back to them: the calls travel the connections they made.
 *
 * The transports come from netconfig as in any TI-RPC server: netids rdma
 * and rdma6, registered with rpcbind.  Everything else is rpcgen -M.
 *
 * usage: notify_server
 */
#include <netconfig.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "notify.h"
#include "notify_cb.h"

/* The dispatch function rpcgen -m writes (declared nowhere). */
void notify_prog_1(struct svc_req *rqstp, SVCXPRT *transp);

struct subscriber {
	struct subscriber *next;
	CLIENT *cb; /* calls back on the subscriber's connection */
	char addr[64];
};

static struct subscriber *subscribers;
static unsigned int seq;

static void addr_of(SVCXPRT *x, char *buf, size_t len)
{
	struct netbuf *nb = svc_getrpccaller(x);
	struct netconfig *nc = getnetconfigent(x->xp_netid);
	char *uaddr = nc ? taddr2uaddr(nc, nb) : NULL;

	snprintf(buf, len, "%s", uaddr ? uaddr : "?");
	free(uaddr);
	if (nc)
		freenetconfigent(nc);
}

bool_t notify_subscribe_1_svc(void *argp, void *result, struct svc_req *rqstp)
{
	struct subscriber *s = calloc(1, sizeof(*s));

	if (!s)
		return FALSE;
	s->cb = clnt_rdma_bc_create(rqstp->rq_xprt, NOTIFY_CB, NOTIFY_CB_V1);
	if (!s->cb) {
		clnt_pcreateerror("notify_server: clnt_rdma_bc_create");
		free(s);
		return FALSE;
	}
	addr_of(rqstp->rq_xprt, s->addr, sizeof(s->addr));
	s->next = subscribers;
	subscribers = s;
	printf("notify_server: %s subscribed\n", s->addr);
	return TRUE;
}

/* One call back; false if the subscriber is gone. */
static bool_t notify_one(struct subscriber *s, notify_cb_event *ev)
{
	struct timeval tv = { 5, 0 };

	clnt_control(s->cb, CLSET_TIMEOUT, (char *)&tv);
	if (notify_event_1(ev, NULL, s->cb) == RPC_SUCCESS)
		return TRUE;
	clnt_perror(s->cb, "notify_server: NOTIFY_EVENT");
	return FALSE;
}

bool_t notify_publish_1_svc(char **text, u_int *result, struct svc_req *rqstp)
{
	notify_cb_event ev = { ++seq, *text };
	struct subscriber **pp = &subscribers, *s;

	*result = 0;
	while ((s = *pp)) {
		if (notify_one(s, &ev)) {
			(*result)++;
			pp = &s->next;
			continue;
		}
		printf("notify_server: %s is gone\n", s->addr);
		*pp = s->next;
		clnt_destroy(s->cb);
		free(s);
	}
	printf("notify_server: event %u sent to %u subscriber(s)\n", seq,
	       *result);
	return TRUE;
}

int notify_prog_1_freeresult(SVCXPRT *transp, xdrproc_t xdr_result,
			     caddr_t result)
{
	xdr_free(xdr_result, result);
	return 1;
}

/* One transport per netid, registered with rpcbind. */
static int serve_on(const char *netid)
{
	struct netconfig *nc = getnetconfigent(netid);
	SVCXPRT *x;

	if (!nc) {
		fprintf(stderr, "notify_server: no netid %s\n", netid);
		return -1;
	}
	x = svc_tp_create(notify_prog_1, NOTIFY_PROG, NOTIFY_V1, nc);
	freenetconfigent(nc);
	if (!x) {
		fprintf(stderr, "notify_server: cannot serve on %s\n", netid);
		return -1;
	}
	printf("notify_server: serving on %s\n", netid);
	return 0;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	rpcb_unset(NOTIFY_PROG, NOTIFY_V1, NULL);
	/* either will do: a host may lack IPv6 */
	if (serve_on("rdma") + serve_on("rdma6") == -2)
		return 1;
	svc_run();
	fprintf(stderr, "notify_server: svc_run returned\n");
	return 1;
}
