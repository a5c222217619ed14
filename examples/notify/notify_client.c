/*
 * notify_client.c - a client of the notification example (notify_server.c,
 * rpcrdma_bc(3)).
 *
 *   notify_client HOST listen         subscribe, print events until killed
 *   notify_client HOST publish TEXT   publish TEXT, print how many got it
 *
 * A listener serves the callback program on its own connection: it makes
 * an SVCXPRT for its CLIENT with svc_rdma_bc_create(), registers the
 * callback program on it with svc_reg(), subscribes, and runs the
 * ordinary svc_run().  NETID (default "rdma") picks the transport, e.g.
 * NETID=rdma6 with an IPv6 HOST.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "notify.h"
#include "notify_cb.h"

/* The dispatch function rpcgen -m writes (declared nowhere). */
void notify_cb_1(struct svc_req *rqstp, SVCXPRT *transp);

bool_t notify_event_1_svc(notify_cb_event *ev, void *result,
			  struct svc_req *rqstp)
{
	printf("event %u: %s\n", ev->seq, ev->text);
	return TRUE;
}

int notify_cb_1_freeresult(SVCXPRT *transp, xdrproc_t xdr_result,
			   caddr_t result)
{
	xdr_free(xdr_result, result);
	return 1;
}

static int listen_for(CLIENT *cl)
{
	SVCXPRT *cbx = svc_rdma_bc_create(cl);

	if (!cbx)
		return 1;
	if (!svc_reg(cbx, NOTIFY_CB, NOTIFY_CB_V1, notify_cb_1, NULL)) {
		fprintf(stderr, "notify_client: svc_reg failed\n");
		return 1;
	}
	/* ready: only now may the server call back */
	if (notify_subscribe_1(NULL, NULL, cl) != RPC_SUCCESS) {
		clnt_perror(cl, "notify_client: subscribe");
		return 1;
	}
	printf("subscribed\n");
	svc_run();
	return 1;
}

static int publish(CLIENT *cl, char *text)
{
	u_int n = 0;

	if (notify_publish_1(&text, &n, cl) != RPC_SUCCESS) {
		clnt_perror(cl, "notify_client: publish");
		return 1;
	}
	printf("published to %u subscriber(s)\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	const char *netid = getenv("NETID") ? getenv("NETID") : "rdma";
	CLIENT *cl;
	int rc;

	if (!(argc == 3 && !strcmp(argv[2], "listen")) &&
	    !(argc == 4 && !strcmp(argv[2], "publish"))) {
		fprintf(stderr, "usage: notify_client HOST listen\n"
				"       notify_client HOST publish TEXT\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	cl = clnt_create(argv[1], NOTIFY_PROG, NOTIFY_V1, netid);
	if (!cl) {
		clnt_pcreateerror(argv[1]);
		return 1;
	}
	if (!strcmp(argv[2], "listen"))
		return listen_for(cl);
	rc = publish(cl, argv[3]);
	clnt_destroy(cl);
	return rc;
}
