/*
 * t_netid_order.c - a program linked the wrong way round ("-ltirpc
 * -lrpcrdma"): libtirpc's clnt_create() & co. win, so librpcrdma's
 * start-up check must say so, once, on stderr.  t_netid.sh checks that.
 */
#include <stdio.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

int main(void)
{
	struct netconfig *nc = getnetconfigent("rdma");

	printf("librpcrdma %s, getnetconfigent(\"rdma\") %s\n",
	       rpcrdma_version(), nc ? "found" : "answered by libtirpc");
	if (nc)
		freenetconfigent(nc);
	return 0;
}
