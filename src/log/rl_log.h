/*
 * rl_log.h - the library's one way of telling people something (prefix
 * rl_): every line it prints goes through here, on stderr, as
 * "rpcrdma: <text>", when its level is within the level in force.
 *
 * The level in force comes from the environment variable RPCRDMA_LOG
 * (rpcrdma-environ(7)): quiet, error, warn (the default), info or debug,
 * or 0..4 for the same; read once, with secure_getenv(), on the first
 * message.  A value not understood leaves the default and says so once.
 *
 * Any layer may use it: it depends on libc only.  Whatever the library
 * reports to the program (rpc_createerr, CLGET_RDMA_ERRMSG, return values)
 * is separate; a line here is for the person running the program.
 */
#ifndef RL_LOG_H
#define RL_LOG_H

#include <stdarg.h>
#include <stdbool.h>

enum rl_level {
	RL_QUIET = 0, /* nothing at all */
	RL_ERROR,     /* something the program asked for failed */
	RL_WARN,      /* a setting ignored, a peer refused, ...: going on */
	RL_INFO,      /* what the library decided, once per occasion */
	RL_DEBUG,     /* details for whoever chases a problem */
};

#define RL_DEFAULT RL_WARN

/* A value of RPCRDMA_LOG as a level (names in any case, or a digit);
 * -1 if it is neither. */
int rl_level_parse(const char *s);

/* The level in force. */
enum rl_level rl_level(void);

/* Whether a message of level lv would be printed (to skip work). */
bool rl_enabled(enum rl_level lv);

/* Print "rpcrdma: " and the message as one line on stderr, if lv is
 * enabled (lv RL_QUIET is never printed). */
void rl_log(enum rl_level lv, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void rl_vlog(enum rl_level lv, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

#define rl_err(...)   rl_log(RL_ERROR, __VA_ARGS__)
#define rl_warn(...)  rl_log(RL_WARN, __VA_ARGS__)
#define rl_info(...)  rl_log(RL_INFO, __VA_ARGS__)
#define rl_debug(...) rl_log(RL_DEBUG, __VA_ARGS__)

/* Read RPCRDMA_LOG again (for tests, which change it in one process). */
void rl_reload(void);

#endif /* RL_LOG_H */
