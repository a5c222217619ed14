/*
 * rr_probe.c - whether a server address can be reached over RDMA at all,
 * before a CLIENT is made (rr_call.h): the transport's probe, in a file of
 * its own so that programs linking the requester without it (the unit
 * tests over a fake transport) do not need it.
 */
#include "rpc/rr_call_priv.h"

int rr_clnt_probe(const struct sockaddr *dst, unsigned int timeout_ms,
		  struct rt_err *err)
{
	return rt_probe(dst, timeout_ms, err);
}
