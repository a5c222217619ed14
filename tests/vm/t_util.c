/*
 * t_util.c - what the helpers of the VM tests share (t_util.h).
 */
#include <dirent.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/vm/t_util.h"

int t_failures;

/* Print tag, the message and a newline under stdout's lock, so a line
 * of one thread never splits another's. */
static void put_line(const char *tag, const char *fmt, va_list ap)
{
	flockfile(stdout);
	fputs(tag, stdout);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
	funlockfile(stdout);
}

bool tu_check(bool ok, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	put_line(ok ? "ok - " : "FAIL - ", fmt, ap);
	va_end(ap);
	if (!ok)
		__atomic_add_fetch(&t_failures, 1, __ATOMIC_RELAXED);
	return ok;
}

void tu_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	put_line("# ", fmt, ap);
	va_end(ap);
}

int tu_done(void)
{
	int n = __atomic_load_n(&t_failures, __ATOMIC_RELAXED);

	printf("%s: %d failure(s)\n", n ? "FAIL" : "PASS", n);
	fflush(stdout);
	return n ? 1 : 0;
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

bool tu_net_two(void)
{
	const char *n = getenv("TIRPC_RDMA_VM_NET");

	return n && !strcmp(n, "two");
}

/*
 * Requester side: retries after an ACK timeout (completer_retry_err), NAKs
 * for a sequence error or RNR that make it resend (rcvd_seq_err,
 * rcvd_rnr_err), and the retry counts exhausted (the connection is then
 * lost); responder side: packets that came again or out of order.
 */
static const char *const tu_retry_names[TU_NRETRY] = {
	"completer_retry_err", "rcvd_seq_err",		 "rcvd_rnr_err",
	"duplicate_request",   "out_of_seq_request",	 "send_rnr_err",
	"retry_exceeded_err",  "retry_rnr_exceeded_err",
};

/* Each counter of names[0..n) summed over every device into v[]. */
static void hw_counters(const char *const *names, unsigned int n, uint64_t *v)
{
	DIR *d = opendir("/sys/class/infiniband");
	struct dirent *e;
	char path[512];

	memset(v, 0, n * sizeof(v[0]));
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		for (unsigned int i = 0; i < n; i++) {
			unsigned long long x = 0;
			FILE *f;

			snprintf(path, sizeof(path),
				 "/sys/class/infiniband/%s/ports/1/hw_counters/%s",
				 e->d_name, names[i]);
			f = fopen(path, "r");
			if (!f)
				continue;
			if (fscanf(f, "%llu", &x) == 1)
				v[i] += x;
			fclose(f);
		}
	}
	if (d)
		closedir(d);
}

void tu_retry_read(uint64_t v[TU_NRETRY])
{
	hw_counters(tu_retry_names, TU_NRETRY, v);
}

uint64_t tu_hw_counter(const char *name)
{
	uint64_t v;

	hw_counters(&name, 1, &v);
	return v;
}

uint64_t tu_retry_delta(const uint64_t a[TU_NRETRY],
			const uint64_t b[TU_NRETRY], char *line, size_t cap)
{
	uint64_t sum = 0;
	size_t n = 0;

	if (cap)
		line[0] = '\0';
	for (unsigned int i = 0; i < TU_NRETRY; i++) {
		unsigned long long d = b[i] - a[i];

		sum += d;
		if (n < cap)
			n += (size_t)snprintf(line + n, cap - n, "%s%s %llu",
					      i ? " " : "", tu_retry_names[i],
					      d);
	}
	return sum;
}

long long tu_mr_bytes(long pid)
{
	char line[1024];
	long long sum = 0;
	FILE *f = popen("rdma resource show mr 2>/dev/null", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, " pid "),
			   *m = strstr(line, " mrlen ");

		if (p && m && strtol(p + 5, NULL, 10) == pid)
			sum += strtoll(m + 7, NULL, 10);
	}
	if (pclose(f))
		return -1;
	return sum;
}
