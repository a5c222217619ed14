/*
 * rl_log.c - the level in force and the printing of one line (rl_log.h).
 *
 * The level is read from RPCRDMA_LOG once; afterwards a message costs one
 * relaxed atomic load when its level is off.  A line is formatted whole
 * and handed to stderr in one call, so lines of several threads do not
 * interleave within a line.
 */
#define _GNU_SOURCE
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "compiler.h"
#include "conf/rc_env.h"
#include "log/rl_log.h"

#define RL_PREFIX   "rpcrdma: "
#define RL_LINE_MAX 1024

/* -1: not read yet.  Racing first readers store the same value. */
static int level = -1;

static const char *const names[] = {
	[RL_QUIET] = "quiet", [RL_ERROR] = "error", [RL_WARN] = "warn",
	[RL_INFO] = "info",   [RL_DEBUG] = "debug",
};

int rl_level_parse(const char *s)
{
	size_t i;

	if (!s)
		return -1;
	if (s[0] >= '0' && s[0] <= '0' + RL_DEBUG && !s[1])
		return s[0] - '0';
	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcasecmp(s, names[i]))
			return (int)i;
	return -1;
}

static void print_line(const char *fmt, va_list ap)
	__attribute__((format(printf, 1, 0)));
static void print_line(const char *fmt, va_list ap)
{
	char line[RL_LINE_MAX];
	size_t n = sizeof(RL_PREFIX) - 1;
	int len;

	memcpy(line, RL_PREFIX, n);
	len = vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	if (len < 0)
		return;
	n += (size_t)len < sizeof(line) - n - 1 ? (size_t)len :
						  sizeof(line) - n - 2;
	line[n++] = '\n';
	line[n] = '\0';
	fputs(line, stderr);
}

static void log_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void log_say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	print_line(fmt, ap);
	va_end(ap);
}

static int read_env(void)
{
	const char *e = rc_getenv("RPCRDMA_LOG");
	static bool told;
	int lv;

	if (!e || !*e)
		return RL_DEFAULT;
	lv = rl_level_parse(e);
	if (lv >= 0)
		return lv;
	if (!__atomic_exchange_n(&told, true, __ATOMIC_RELAXED))
		log_say("RPCRDMA_LOG='%s' ignored: expected quiet, error, warn, info, "
			"debug or 0 to 4",
			e);
	return RL_DEFAULT;
}

enum rl_level rl_level(void)
{
	int lv = __atomic_load_n(&level, __ATOMIC_RELAXED);

	if (lv < 0) {
		lv = read_env();
		__atomic_store_n(&level, lv, __ATOMIC_RELAXED);
	}
	return (enum rl_level)lv;
}

void rl_reload(void)
{
	__atomic_store_n(&level, -1, __ATOMIC_RELAXED);
}

bool rl_enabled(enum rl_level lv)
{
	return lv != RL_QUIET && lv <= rl_level();
}

void rl_vlog(enum rl_level lv, const char *fmt, va_list ap)
{
	if (rl_enabled(lv))
		print_line(fmt, ap);
}

void rl_log(enum rl_level lv, const char *fmt, ...)
{
	va_list ap;

	if (!rl_enabled(lv))
		return;
	va_start(ap, fmt);
	print_line(fmt, ap);
	va_end(ap);
}
