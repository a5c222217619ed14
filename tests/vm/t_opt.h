/*
 * t_opt.h - command-line helpers of the test programs that take an address
 * and a port (rtest_server.c, ddp_serve.c, tests/bench/rbench.c): whole
 * numbers, the address family of ADDR, and the socket address ADDR and
 * PORT name.
 */
#ifndef T_OPT_H
#define T_OPT_H

#include <sys/socket.h>

/* s as a whole unsigned number (strtoul, base 0); else usage(), which
 * must not return. */
unsigned long t_opt_number(const char *s, void (*usage)(void));

/* AF_INET6 if addr (NULL: none given) is an IPv6 address (has a ':'),
 * else family. */
int t_opt_family(const char *addr, int family);

/* addr (numeric, of family; NULL: the wildcard address of family) and
 * port into ss: its length, or 0 if addr is not an address of family. */
socklen_t t_opt_sockaddr(struct sockaddr_storage *ss, int family,
			 const char *addr, unsigned int port);

#endif /* T_OPT_H */
