/*
 * t_util.c - what the helpers of the VM tests share (t_util.h).
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/vm/t_util.h"

void tu_check(int *failures, const char *sep, bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s%s", ok ? "ok" : "FAIL", sep);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		(*failures)++;
}

void tu_note(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

int64_t tu_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t tu_now_ms(void)
{
	return tu_now_us() / 1000;
}

static const char *wd_line;
static size_t wd_len;
static int wd_status;

static void wd_fired(int sig)
{
	(void)sig;
	if (write(1, wd_line, wd_len) < 0)
		_exit(wd_status);
	_exit(wd_status);
}

void tu_watchdog(unsigned int seconds, const char *line, int status)
{
	wd_line = line;
	wd_len = strlen(line);
	wd_status = status;
	signal(SIGALRM, wd_fired);
	alarm(seconds);
}

void tu_fill(void *buf, size_t len, uint32_t seed)
{
	uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)((seed + i * 131u) & 0xff);
}

long tu_fill_check(const void *buf, size_t len, uint32_t seed)
{
	const uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != (uint8_t)((seed + i * 131u) & 0xff))
			return (long)i;
	return -1;
}

void tu_server_env(void)
{
	const char *v = getenv("TIRPC_RDMA_SERVER_VERSION");

	if (v && *v)
		setenv("RPCRDMA_VERSION", v, 1);
	else
		unsetenv("RPCRDMA_VERSION");
}
