/*
 * rt_err.h - failure reports of the transport layer.
 *
 * Every transport call that can fail fills a struct rt_err: an errno value
 * for programs and one line of text naming the cause for people ("connection
 * refused by 192.0.2.1:20049: ...", "address 203.0.113.5 not resolved: timed
 * out after 2000 ms").  The glue copies the text into its own error reports
 * (clnt_spcreateerror, syslog) verbatim, so it says what failed and why in
 * terms of addresses and devices, never of internal function names.
 *
 * A NULL struct rt_err pointer is accepted everywhere: the report is dropped.
 */
#ifndef RT_ERR_H
#define RT_ERR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#define RT_ERR_MSG_LEN 200

struct rt_err {
	int code;		  /* errno value; 0: no error */
	char msg[RT_ERR_MSG_LEN]; /* NUL-terminated, one line */
};

/* Record code (<= 0 becomes EIO) and a printf-style message; returns -code
 * for tail calls. */
int rt_err_set(struct rt_err *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Reset to "no error". */
void rt_err_clear(struct rt_err *e);

/* Copy src into dst (either may be NULL). */
void rt_err_copy(struct rt_err *dst, const struct rt_err *src);

/*
 * Format an IPv4/IPv6 address for messages: "192.0.2.1:20049",
 * "[2001:db8::1]:20049", or without the port when with_port is 0 or the
 * port is 0.  Returns buf.
 */
#define RT_ADDR_STRLEN 64
const char *rt_addr_str(const struct sockaddr *sa, int with_port,
			char buf[RT_ADDR_STRLEN]);

/* Same host: family and IPv4/IPv6 address equal, whatever the ports. */
bool rt_addr_same_host(const struct sockaddr *a, const struct sockaddr *b);

#endif /* RT_ERR_H */
