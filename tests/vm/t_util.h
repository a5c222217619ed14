/*
 * t_util.h - what the VM tests share: the one check dialect (CHECK,
 * CHECK_OK, NOTE and the failure count t_failures), the monotonic clock,
 * the watchdog, the rtest data pattern, and the VM's network mode and
 * retransmission counters.  Every VM test in C links t_util.c; its
 * helpers (t_clnt_util, t_svc_util, t_netid_util, t_rt_util, t_ddp_util)
 * check and note through these, never a dialect of their own.
 *
 * libc only: t_netid_util is also linked without librpcrdma.
 */
#ifndef T_UTIL_H
#define T_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- Checks ------------------------------------------------------------ */

/* Failed checks of this program so far; its exit status says whether any. */
extern int t_failures;

/*
 * One line per check, "ok - MESSAGE" or "FAIL - MESSAGE", written at once
 * and flushed (threads may check); a failure adds one to t_failures.
 * Returns ok.  Notes are "# MESSAGE".  tests/vm/lib.sh writes the same.
 */
bool tu_check(bool ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void tu_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* CHECK(cond, fmt, ...): a check; CHECK_OK: the same, and its verdict
 * (if (!CHECK_OK(cl != NULL, "...")) return;); NOTE(fmt, ...): a note. */
#define CHECK(ok, ...)	  ((void)tu_check((ok), __VA_ARGS__))
#define CHECK_OK(ok, ...) tu_check((ok), __VA_ARGS__)
#define NOTE(...)	  tu_note(__VA_ARGS__)

/* The program's last line, "PASS: 0 failure(s)" or "FAIL: N failure(s)",
 * and its exit status: 0, or 1 if any check failed. */
int tu_done(void);

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

/* ---- The VM's network (tests/vm/run --net) ------------------------------ */

/*
 * True when the VM has two rxe devices (tests/vm/run --net two): the
 * server listens on RDMA_ADDR4 at one end of the veth, clients come from
 * the other, every frame crosses the veth and may be lost and resent
 * (TIRPC_RDMA_VM_NETEM).  With one device rxe hands packets to itself.
 */
bool tu_net_two(void);

/*
 * Soft-RoCE's retransmission counters (rxe: /sys/class/infiniband/DEV/
 * ports/1/hw_counters), each summed over every device, both ends of every
 * connection together: tu_retry_read() fills v[TU_NRETRY] (0 where a
 * counter is missing); tu_retry_delta() writes "name N ..." of b - a into
 * line and returns the sum of the differences.
 */
#define TU_NRETRY 8
void tu_retry_read(uint64_t v[TU_NRETRY]);
/* One hw_counter ("sent_pkts", ...) summed over every device. */
uint64_t tu_hw_counter(const char *name);

/*
 * Octets of memory regions that process pid has registered on any RDMA
 * device, from the kernel's resource tracking ("rdma resource show mr",
 * iproute2); -1 when that is not available.
 */
long long tu_mr_bytes(long pid);
uint64_t tu_retry_delta(const uint64_t a[TU_NRETRY],
			const uint64_t b[TU_NRETRY], char *line, size_t cap);

#endif /* T_UTIL_H */
