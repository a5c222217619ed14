/*
 * prog_server.c - the procedures of prog.x (tools/debcheck): what an
 * rpcgen user writes by hand, knowing nothing of RDMA.  Each call says on
 * stderr which netid carried it, so the check sees where it arrived.
 */
#include <stdio.h>
#include <stdlib.h>

#include "prog.h"

#define FILL_MAX (1u << 20)

static void prog_log(const char *proc, struct svc_req *req)
{
	const char *netid = req->rq_xprt->xp_netid;

	fprintf(stderr, "prog_server: %s over %s\n", proc, netid ? netid : "?");
}

/*
 * The octets both sides expect, a hash of their position so that data out
 * of place shows, and their checksum (FNV-1a).
 */
static char prog_octet(unsigned int i)
{
	return (char)((i * 2654435761u) >> 24);
}

static unsigned int prog_sum(const unsigned char *data, unsigned int len)
{
	unsigned int sum = 2166136261u, i;

	for (i = 0; i < len; i++)
		sum = (sum ^ data[i]) * 16777619u;
	return sum;
}

text *echo_1_svc(text *arg, struct svc_req *req)
{
	static text result;

	prog_log("ECHO", req);
	result = *arg;
	return &result;
}

unsigned int *sum_1_svc(blob *data, struct svc_req *req)
{
	static unsigned int result;

	prog_log("SUM", req);
	result = prog_sum((unsigned char *)data->blob_val, data->blob_len);
	return &result;
}

blob *fill_1_svc(unsigned int *len, struct svc_req *req)
{
	static blob result;
	unsigned int i;

	prog_log("FILL", req);
	free(result.blob_val);
	result.blob_val = NULL;
	result.blob_len = 0;
	if (*len > FILL_MAX)
		return &result;
	result.blob_val = malloc(*len ? *len : 1);
	if (!result.blob_val)
		return &result;
	for (i = 0; i < *len; i++)
		result.blob_val[i] = prog_octet(i);
	result.blob_len = *len;
	return &result;
}
