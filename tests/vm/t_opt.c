/*
 * t_opt.c - command-line helpers of the test programs (t_opt.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/vm/t_opt.h"

unsigned long t_opt_number(const char *s, void (*usage)(void))
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end)
		usage();
	return v;
}

int t_opt_family(const char *addr, int family)
{
	return addr && strchr(addr, ':') ? AF_INET6 : family;
}

socklen_t t_opt_sockaddr(struct sockaddr_storage *ss, int family,
			 const char *addr, unsigned int port)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	const char *a = addr ? addr : family == AF_INET6 ? "::" : "0.0.0.0";

	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET6) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		return inet_pton(AF_INET6, a, &s6->sin6_addr) == 1 ?
			       sizeof(*s6) :
			       0;
	}
	s4->sin_family = AF_INET;
	s4->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, a, &s4->sin_addr) == 1 ? sizeof(*s4) : 0;
}
