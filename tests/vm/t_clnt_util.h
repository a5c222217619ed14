/*
 * t_clnt_util.h - helpers of the client-side VM tests (t_clnt*, t_fence):
 * check lines, the rtest data pattern, addresses, clocks, and the test
 * server process (a fake rtest responder, t_clnt_srv.c, or the project's
 * rtest server) started in the background and stopped again.
 */
#ifndef T_CLNT_UTIL_H
#define T_CLNT_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "tests/vm/t_util.h"

#define T_PORT 21049 /* the test server's port */

/* Extra procedures of the fake responder (t_clnt_srv.c), test hooks
 * beyond rtest.x: each makes the server misbehave in one way. */
enum t_hook_proc {
	T_PROC_ERR_CHUNK = 100, /* answer RDMA_ERROR / ERR_CHUNK */
	T_PROC_ERR_VERS,	/* answer RDMA_ERROR / ERR_VERS 1..1 */
	T_PROC_BAD_FIRST,	/* a malformed Reply (Read list), then
					 * the right one */
	T_PROC_XID_FIRST,	/* a Reply for another XID first */
	T_PROC_RUNT_FIRST,	/* a 12-octet message first */
	T_PROC_NOREPLY,		/* never answer */
	T_PROC_LONG_REPLY,	/* void reply through the Reply chunk */
	T_PROC_ERR_V2_FIRST,	/* RDMA_ERROR of the other version
					 * first (V1-ERR-10), then the right
					 * one */
	T_PROC_SEED = 1000,	/* + i: seed i of the fuzzers' header
					 * corpus first, under the Call's XID,
					 * then the right Reply */
};

/* Seed i (in name order) of the fuzzers' header corpus (FUZZ_SEEDS/hdr)
 * into buf: its length, or -1 if there is no seed i. */
int t_seed(unsigned int i, void *buf, size_t cap, char *name, size_t ncap);

/* Checks and notes: CHECK, CHECK_OK, NOTE (t_util.h). */
#define t_ms() tu_now_ms()
#define t_us() tu_now_us()
/* Exit with a FAIL line if the program runs longer than seconds. */
void t_watchdog(unsigned int seconds);

/* An RDMA device to run on?  If not, "SKIP: no RDMA device" is printed
 * and the test exits 77 (the VM suite's skip). */
bool t_have_device(void);

/* rtest's FILL pattern (t_util.h). */
#define t_fill(buf, len, seed)	     tu_fill((buf), (len), (seed))
#define t_fill_check(buf, len, seed) tu_fill_check((buf), (len), (seed))

const char *t_addr4(void);
const char *t_addr6(void);
/* host (numeric v4 or v6) and port into ss; returns its length. */
socklen_t t_sockaddr(struct sockaddr_storage *ss, const char *host,
		     uint16_t port);

/* ---- The server process ------------------------------------------------- */

struct t_server {
	pid_t pid;
	pid_t pid6; /* a second process for IPv6, if "%a" */
	uint16_t port;
	char what[64]; /* "fake responder" or the rtest server */
};

/*
 * Start a server for rtest on both test addresses, port T_PORT, granting
 * credits: $T_CLNT_SERVER if set (its command line, "%p" replaced by the
 * port, "%c" by the credits and "%a" by the address: with "%a", one process
 * per address), else this program re-executed as "--serve" (the fake
 * responder).  Waits until it accepts connections (at
 * most timeout_ms).  Returns 0 or -1.
 */
int t_server_start(struct t_server *s, unsigned int credits, int timeout_ms);
/* SIGKILL (as a crash would) or SIGTERM, then reap.  Idempotent. */
void t_server_kill(struct t_server *s, bool crash);

/* The fake responder (t_clnt_srv.c): serve until SIGTERM or the parent
 * dies.  Returns an exit status. */
int t_clnt_serve(uint16_t port, unsigned int credits);

#endif /* T_CLNT_UTIL_H */
