/*
 * t_util.h - what the helpers of the VM tests share (t_clnt_util,
 * t_svc_util, t_netid_util): the check and note lines, the monotonic clock,
 * the watchdog and the rtest data pattern.  Each helper keeps its own names
 * (t_, ts_, tn_: macros over these), its own failure count and its own
 * check line style.
 *
 * libc only: t_netid_util is also linked without librpcrdma.
 */
#ifndef T_UTIL_H
#define T_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One line per check: "ok" or "FAIL", sep (": " or " - "), the message;
 * flushed.  A failure adds one to *failures. */
void tu_check(int *failures, const char *sep, bool ok, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* "# " and the message; flushed. */
void tu_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* CLOCK_MONOTONIC in microseconds and in milliseconds. */
int64_t tu_now_us(void);
int64_t tu_now_ms(void);

/* After seconds, write line to stdout and _exit(status): a test that
 * hangs ends with a FAIL line. */
void tu_watchdog(unsigned int seconds, const char *line, int status);

/* rtest's FILL pattern: byte i = (seed + i * 131) & 0xff. */
void tu_fill(void *buf, size_t len, uint32_t seed);
/* Index of the first byte that differs from the pattern, or -1. */
long tu_fill_check(const void *buf, size_t len, uint32_t seed);

/*
 * In a test server's process, before it executes the server: the suite's
 * RPCRDMA_VERSION chooses the version of the test clients only, so the
 * servers speak both and also answer the raw v1 clients; a test that wants
 * a server of one version says so in TIRPC_RDMA_SERVER_VERSION.
 */
void tu_server_env(void);

#endif /* T_UTIL_H */
