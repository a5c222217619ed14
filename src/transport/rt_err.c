/*
 * rt_err.c - failure reports of the transport layer: the error struct and
 * the address formatting every message uses.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "transport/rt_err.h"

int rt_err_set(struct rt_err *e, int code, const char *fmt, ...)
{
	va_list ap;

	/* A failure always has a cause: errno may have been left at 0. */
	if (code <= 0)
		code = EIO;
	if (e) {
		e->code = code;
		va_start(ap, fmt);
		vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
		va_end(ap);
	}
	return -code;
}

void rt_err_clear(struct rt_err *e)
{
	if (e) {
		e->code = 0;
		e->msg[0] = '\0';
	}
}

void rt_err_copy(struct rt_err *dst, const struct rt_err *src)
{
	if (dst && src && dst != src)
		*dst = *src;
}

const char *rt_addr_str(const struct sockaddr *sa, int with_port,
			char buf[RT_ADDR_STRLEN])
{
	char host[INET6_ADDRSTRLEN];
	unsigned int port = 0;

	if (!sa) {
		snprintf(buf, RT_ADDR_STRLEN, "(no address)");
		return buf;
	}
	switch (sa->sa_family) {
	case AF_INET: {
		const struct sockaddr_in *in = (const void *)sa;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		port = ntohs(in->sin_port);
		if (with_port && port)
			snprintf(buf, RT_ADDR_STRLEN, "%s:%u", host, port);
		else
			snprintf(buf, RT_ADDR_STRLEN, "%s", host);
		break;
	}
	case AF_INET6: {
		const struct sockaddr_in6 *in6 = (const void *)sa;

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		port = ntohs(in6->sin6_port);
		if (with_port && port)
			snprintf(buf, RT_ADDR_STRLEN, "[%s]:%u", host, port);
		else
			snprintf(buf, RT_ADDR_STRLEN, "%s", host);
		break;
	}
	default:
		snprintf(buf, RT_ADDR_STRLEN, "(address family %d)",
			 sa->sa_family);
		break;
	}
	return buf;
}

bool rt_addr_same_host(const struct sockaddr *a, const struct sockaddr *b)
{
	if (!a || !b || a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr,
			       sizeof(struct in6_addr));
	return a->sa_family == AF_INET &&
	       ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
}
