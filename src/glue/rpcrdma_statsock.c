/*
 * rpcrdma_statsock.c - the statistics socket of RPCRDMA_STATS_SOCKET: the
 * AF_UNIX socket, the thread that answers it and their life across fork()
 * and exit().  What it answers is the registry's (rpcrdma_stats_report());
 * the contract and the protocol are in rpcrdma_statsock.h.
 */
#define _GNU_SOURCE /* secure_getenv, accept4, SO_PEERCRED */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "conf/rc_env.h"
#include "glue/rpcrdma_stats.h"
#include "glue/rpcrdma_statsock.h"

#define SUN_PATH_LEN sizeof(((struct sockaddr_un *)0)->sun_path)
#define BACKLOG	     16

/* This process's socket; under the registry's lock. */
static pid_t tried_by; /* the process that made it or said why not */
static pid_t made_by;  /* the process that made it, 0: none */
static int listen_fd = -1;
static char sock_path[SUN_PATH_LEN];

const char *rpcrdma_statsock_wanted(void)
{
	const char *v = rc_getenv(RPCRDMA_STATSOCK_ENV);

	return v && *v ? v : NULL;
}

/* Why this process serves no socket, once. */
static void sock_say(const char *where, const char *path, const char *what,
		     int err)
{
	fprintf(stderr,
		"rpcrdma: no statistics socket (" RPCRDMA_STATSOCK_ENV
		"=%s): %s: %s: %s\n",
		where, path, what, strerror(err));
}

/* The socket's path for where, or -ENAMETOOLONG. */
static int path_for(const char *where, char *buf, size_t len)
{
	size_t n = strlen(where);
	bool slash = n && where[n - 1] == '/';
	struct stat st;
	int r;

	if (slash || (!stat(where, &st) && S_ISDIR(st.st_mode)))
		r = snprintf(buf, len,
			     "%s%s" RPCRDMA_STATSOCK_PREFIX
			     "%ld" RPCRDMA_STATSOCK_SUFFIX,
			     where, slash ? "" : "/", (long)getpid());
	else
		r = snprintf(buf, len, "%s", where);
	return r < 0 || (size_t)r >= len ? -ENAMETOOLONG : 0;
}

static void sun_set(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, path, strlen(path) + 1);
}

/* Is path a socket file of this user? */
static bool is_ours(const char *path)
{
	struct stat st;

	return !lstat(path, &st) && S_ISSOCK(st.st_mode) &&
	       st.st_uid == geteuid();
}

/* Is path a socket of ours that nobody answers on any more (its maker is
 * gone)?  Only such a file is replaced: never another user's, never a
 * file of another kind, never a live socket. */
static bool stale(const char *path)
{
	struct sockaddr_un sa;
	int fd, r, e;

	if (!is_ours(path))
		return false;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return false;
	sun_set(&sa, path);
	/* Non-blocking: a live socket with a full backlog says EAGAIN. */
	r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	e = errno;
	close(fd);
	return r < 0 && e == ECONNREFUSED;
}

/* A listening socket at path, or -1 with *what and errno set. */
static int listen_at(const char *path, const char **what)
{
	struct sockaddr_un sa;
	int fd, r, e;

	sun_set(&sa, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		*what = "socket";
		return -1;
	}
	/* Linux gives the file the socket's mode less the umask: owner
	 * only from its creation, with no window for others to connect. */
	if (fchmod(fd, 0600)) {
		*what = "fchmod";
		goto fail;
	}
	r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (r && errno == EADDRINUSE && stale(path) && !unlink(path))
		r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (r) {
		e = errno;
		*what = e != EADDRINUSE ? "bind" :
			is_ours(path)	? "a running process answers there" :
					  "there is a file that is not a "
					  "socket of this user";
		errno = e;
		goto fail;
	}
	if (listen(fd, BACKLOG)) {
		*what = "listen";
		e = errno;
		unlink(path);
		errno = e;
		goto fail;
	}
	return fd;
fail:
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

static int64_t sock_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Send what fits before the deadline; a reader that stalls gets a cut
 * answer (no last line). */
static void send_all(int fd, const char *p, size_t n, int64_t deadline)
{
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	int64_t left;
	ssize_t w;

	while (n) {
		w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			p += w;
			n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
		    errno != EINTR)
			return; /* the client went away */
		left = deadline - sock_now_ms();
		if (left <= 0)
			return;
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
			return;
	}
}

/* The program's name as one word, for the first line. */
static void comm_word(char *buf, size_t len)
{
	size_t i;

	snprintf(buf, len, "%s", program_invocation_short_name);
	for (i = 0; buf[i]; i++)
		if (buf[i] <= ' ' || buf[i] > '~' || buf[i] == ':')
			buf[i] = '_';
	if (!buf[0])
		snprintf(buf, len, "?");
}

/* Is the peer the owner (our effective uid) or root? */
static bool peer_allowed(int fd, char *why, size_t len)
{
	struct ucred cr;
	socklen_t n = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &n)) {
		snprintf(why, len, "peer credentials: %s", strerror(errno));
		return false;
	}
	if (cr.uid == geteuid() || cr.uid == 0)
		return true;
	snprintf(why, len, "uid %u is neither the owner (uid %u) nor root",
		 (unsigned)cr.uid, (unsigned)geteuid());
	return false;
}

static void answer(int fd)
{
	int64_t deadline = sock_now_ms() + RPCRDMA_STATSOCK_TIMEOUT_MS;
	char comm[64], why[128];
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	f = open_memstream(&buf, &len);
	if (!f)
		return;
	if (!peer_allowed(fd, why, sizeof(why))) {
		fprintf(f, RPCRDMA_STATSOCK_ERROR "%s\n", why);
	} else {
		comm_word(comm, sizeof(comm));
		fprintf(f, RPCRDMA_STATSOCK_FIRST "%ld comm %s\n",
			(long)getpid(), comm);
		rpcrdma_stats_report(f);
		fputs(RPCRDMA_STATSOCK_END, f);
	}
	/* Out of memory: nothing is sent, the client sees no answer. */
	if (!fclose(f))
		send_all(fd, buf, len, deadline);
	free(buf);
	/* The end of the answer, even if a fork()ed child holds a copy of
	 * the fd. */
	shutdown(fd, SHUT_RDWR);
}

static void *serve(void *arg)
{
	int lfd = (int)(intptr_t)arg;
	const struct timespec pause = { 0, 100 * 1000 * 1000 };
	int fd;

	for (;;) {
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0) {
			answer(fd);
			close(fd);
		} else if (errno == EBADF || errno == EINVAL ||
			   errno == ENOTSOCK) {
			return NULL; /* the socket is gone */
		} else if (errno != EINTR && errno != ECONNABORTED) {
			nanosleep(&pause, NULL); /* EMFILE, ENOBUFS, ... */
		}
	}
}

/* The serving thread, detached, with every signal blocked so that the
 * program's handlers run on its own threads. */
static int start_thread(int fd)
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t t;
	int e;

	if ((e = pthread_attr_init(&attr)))
		return e;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = pthread_create(&t, &attr, serve, (void *)(intptr_t)fd);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (!e)
		pthread_setname_np(t, "rpcrdma-stat");
	return e;
}

void rpcrdma_statsock_start(const char *where)
{
	char path[SUN_PATH_LEN];
	const char *what;
	pid_t me = getpid();
	int fd, e;

	if (tried_by == me)
		return;
	tried_by = me;
	if (path_for(where, path, sizeof(path))) {
		sock_say(where, where, "socket path", ENAMETOOLONG);
		return;
	}
	fd = listen_at(path, &what);
	if (fd < 0) {
		sock_say(where, path, what, errno);
		return;
	}
	e = start_thread(fd);
	if (e) {
		close(fd);
		unlink(path);
		sock_say(where, path, "thread", e);
		return;
	}
	listen_fd = fd;
	made_by = me;
	memcpy(sock_path, path, sizeof(path));
}

void rpcrdma_statsock_exit(void)
{
	if (made_by && made_by == getpid())
		unlink(sock_path);
}

void rpcrdma_statsock_forked(void)
{
	if (listen_fd >= 0)
		close(listen_fd);
	listen_fd = -1;
	made_by = 0;
}
