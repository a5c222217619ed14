/*
 * tr_trace.c - the trace log (tr_trace.h): where its lines go, their common
 * beginning, the lock that keeps lines from different threads whole, and
 * the connection ids.
 *
 * A line is built in a buffer of the caller's stack and written with one
 * write(2) under the lock; the file is opened O_APPEND, so two processes
 * tracing into the same file (a client and a server on one host) do not
 * overwrite each other either.  A line longer than TR_LINE_MAX is cut and
 * ends in "...".  Write errors are ignored: the trace never changes what
 * the library does.
 */
#define _GNU_SOURCE /* secure_getenv */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conf/rc_env.h"
#include "trace/tr_trace.h"

#define TR_LINE_MAX 512
#define TR_ENV	    "RPCRDMA_TRACE"

bool tr_on;

static pthread_mutex_t tr_lock = PTHREAD_MUTEX_INITIALIZER;
static int tr_fd = -1;	 /* under tr_lock */
static bool tr_fd_owned; /* ours to close (not stderr) */
static atomic_uint tr_conn_ids;

uint32_t tr_conn_id_new(void)
{
	return atomic_fetch_add_explicit(&tr_conn_ids, 1,
					 memory_order_relaxed) +
	       1;
}

/* The common beginning: time since boot (CLOCK_MONOTONIC, so lines of two
 * processes on one host compare), pid, connection, XID, event. */
static int line_start(char *buf, size_t cap, uint32_t conn, uint32_t xid,
		      const char *event)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return snprintf(
		buf, cap,
		"rpcrdma-trace: %lld.%06ld pid=%ld conn=%u xid=0x%08x %s",
		(long long)ts.tv_sec, ts.tv_nsec / 1000, (long)getpid(), conn,
		xid, event);
}

static void write_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n) {
		w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

void tr_emit(uint32_t conn, uint32_t xid, const char *event, const char *fmt,
	     ...)
{
	char line[TR_LINE_MAX];
	size_t n;
	va_list ap;
	int k;

	k = line_start(line, sizeof(line), conn, xid, event);
	n = k < 0 ? 0 : (size_t)k;
	if (n < sizeof(line) - 1 && fmt[0]) {
		line[n++] = ' ';
		line[n] = '\0';
		va_start(ap, fmt);
		k = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
		va_end(ap);
		n += k < 0 ? 0 : (size_t)k;
	}
	if (n >= sizeof(line) - 1) {
		/* cut: say so, and keep the line a line */
		n = sizeof(line) - 4;
		memcpy(line + n, "...", 3);
		n += 3;
	}
	line[n++] = '\n';
	pthread_mutex_lock(&tr_lock);
	if (tr_fd >= 0)
		write_all(tr_fd, line, n);
	pthread_mutex_unlock(&tr_lock);
}

/* Close the current file (lock held). */
static void close_locked(void)
{
	tr_on = false;
	if (tr_fd >= 0 && tr_fd_owned)
		close(tr_fd);
	tr_fd = -1;
	tr_fd_owned = false;
}

int tr_open(const char *spec)
{
	int fd = STDERR_FILENO, ret = 0;
	bool owned = false;

	if (spec && spec[0] && strcmp(spec, "-") && strcmp(spec, "stderr")) {
		fd = open(spec, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
			  0600);
		if (fd < 0) {
			ret = -errno;
			fprintf(stderr,
				"rpcrdma: %s=%s: cannot open the trace file: %s; no trace\n",
				TR_ENV, spec, strerror(-ret));
		}
		owned = true;
	}
	pthread_mutex_lock(&tr_lock);
	close_locked();
	if (spec && spec[0] && !ret) {
		tr_fd = fd;
		tr_fd_owned = owned;
		tr_on = true;
	}
	pthread_mutex_unlock(&tr_lock);
	return ret;
}

int tr_open_env(void)
{
	return tr_open(rc_getenv(TR_ENV));
}

void tr_close(void)
{
	pthread_mutex_lock(&tr_lock);
	close_locked();
	pthread_mutex_unlock(&tr_lock);
}

/* Once, when the library is loaded: the variable is read here only. */
__attribute__((constructor)) static void tr_init(void)
{
	tr_open_env();
}
