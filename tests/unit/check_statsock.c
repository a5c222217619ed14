/*
 * check_statsock.c - the statistics socket of RPCRDMA_STATS_SOCKET
 * (src/glue/rpcrdma_statsock.[ch]) on the host: AF_UNIX needs no RDMA.
 *
 * Each test forks a "program" that sets the variable, tracks fake objects
 * in the registry (rpcrdma_stats_track() with get() and conns() callbacks
 * of its own) and waits; the test process plays rpcrdma-stat(1): it
 * connects, reads the answer and checks the text, the socket file, the
 * program's threads, and what is left once the program has exited.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "glue/rpcrdma_stats.h"
#include "glue/rpcrdma_statsock.h"
#include "check_util.h"

#define WAIT_MS 30000 /* any wait of the test: a hang fails */

static char dir[64];

static void dir_setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/check_statsock.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void dir_teardown(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[PATH_MAX];

	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.') {
			snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
			unlink(p);
		}
	if (d)
		closedir(d);
	rmdir(dir);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static char *sock_of(pid_t pid)
{
	static char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/rpcrdma.%ld.sock", dir, (long)pid);
	return p;
}

static unsigned count(const char *hay, const char *needle)
{
	size_t left = strlen(hay), len = strlen(needle);
	const char *s = hay, *hit;
	unsigned n = 0;

	/* memmem, not strstr: ASan's strstr rescans the whole haystack on
	 * every call, which made 40000 hits in 4 MiB take 28 s. */
	while ((hit = memmem(s, left, needle, len))) {
		n++;
		left -= (size_t)(hit - s) + 1;
		s = hit + 1;
	}
	return n;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);

	return a >= b && !strcmp(s + a - b, tail);
}

/* ---- The program ------------------------------------------------------ */

/* A fake object: get() counts how often it was asked, so that a second
 * answer shows the counters of the moment, not of the track. */
struct obj {
	const char *label;
	uint64_t asked;
	unsigned big; /* lines of filler get() adds */
	struct rpcrdma_stats_reg reg;
};

static void obj_get(struct rpcrdma_stats_reg *reg, FILE *f)
{
	struct obj *o = RPCRDMA_STATS_OWNER(reg, struct obj, reg);
	struct rpcrdma_clnt_stats st;

	memset(&st, 0, sizeof(st));
	st.calls = ++o->asked;
	st.replies = 7;
	rpcrdma_stats_print_clnt(f, o->label, &st);
	for (unsigned i = 0; i < o->big; i++)
		fprintf(f, "rpcrdma: %s: filler %u %0100u\n", o->label, i, 0);
}

static void obj_conns(struct rpcrdma_stats_reg *reg, FILE *f)
{
	struct obj *o = RPCRDMA_STATS_OWNER(reg, struct obj, reg);
	struct sockaddr_in peer = { .sin_family = AF_INET,
				    .sin_port = htons(40001) };
	struct rpcrdma_stats_conn c = { .version = 2,
					.max_granted = 32,
					.inflight = 1,
					.max_inflight = 3,
					.requests = 11,
					.replies = 10 };
	char kind[RPCRDMA_STATS_LABEL_LEN + 8], label[RPCRDMA_STATS_LABEL_LEN];

	inet_pton(AF_INET, "192.0.2.5", &peer.sin_addr);
	snprintf(kind, sizeof(kind), "%s conn", o->label);
	rpcrdma_stats_label(label, sizeof(label), kind,
			    (struct sockaddr *)&peer, 0, 0);
	rpcrdma_stats_print_conn(f, label, &c);
}

/* Every object made, reachable until the program exits (it outlives
 * the registry, which forgets what is alive at exit). */
static struct obj *objs[8];
static unsigned nobjs;

static struct obj *obj_new(const char *label, bool conns, unsigned big)
{
	struct obj *o = calloc(1, sizeof(*o));

	if (!o || nobjs == sizeof(objs) / sizeof(objs[0]))
		_exit(3);
	objs[nobjs++] = o;
	o->label = label;
	o->big = big;
	rpcrdma_stats_reg_init(&o->reg, obj_get);
	if (conns)
		o->reg.conns = obj_conns;
	rpcrdma_stats_track(&o->reg);
	return o;
}

static unsigned threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	unsigned n = 0;

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* A program: fn runs in a child, which then reports one line on the ready
 * pipe (what fn returned, e.g. its thread counts), waits until the test
 * closes the go pipe and exits normally (atexit handlers run). */
struct prog {
	pid_t pid;
	int ready; /* read end */
	int go;	   /* write end */
	char said[256];
};

static void prog_start(struct prog *p, void (*fn)(char *say, size_t len),
		       const char *errfile)
{
	int r[2], g[2];
	char say[256] = "";
	struct pollfd pfd;
	ssize_t n;

	ck_assert_int_eq(pipe(r), 0);
	ck_assert_int_eq(pipe(g), 0);
	fflush(NULL);
	p->pid = fork();
	ck_assert_int_ge(p->pid, 0);
	if (!p->pid) {
		close(r[0]);
		close(g[1]);
		if (errfile) {
			int fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC,
				      0600);

			if (fd < 0 || dup2(fd, 2) < 0)
				_exit(4);
			close(fd);
		}
		fn(say, sizeof(say));
		strcat(say, "\n");
		if (write(r[1], say, strlen(say)) < 0)
			_exit(5);
		while (read(g[0], say, 1) > 0)
			;
		exit(0);
	}
	close(r[1]);
	close(g[0]);
	p->ready = r[0];
	p->go = g[1];
	pfd = (struct pollfd){ .fd = p->ready, .events = POLLIN };
	ck_assert_int_eq(poll(&pfd, 1, WAIT_MS), 1);
	n = read(p->ready, p->said, sizeof(p->said) - 1);
	ck_assert_int_gt(n, 0);
	p->said[n] = '\0';
}

/* Let it exit; its status must be 0. */
static void prog_end(struct prog *p)
{
	int status;

	close(p->go);
	close(p->ready);
	ck_assert_int_eq(waitpid(p->pid, &status, 0), p->pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* ---- The reader -------------------------------------------------------- */

static int dial(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_uint_lt(strlen(path), sizeof(sa.sun_path));
	strcpy(sa.sun_path, path);
	ck_assert_msg(!connect(fd, (struct sockaddr *)&sa, sizeof(sa)),
		      "connect %s: %s", path, strerror(errno));
	return fd;
}

/* Everything until EOF, within WAIT_MS; NUL-terminated, free it. */
static char *slurp_fd(int fd)
{
	int64_t end = now_ms() + WAIT_MS;
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	ssize_t n;

	ck_assert_ptr_nonnull(buf);
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int64_t left = end - now_ms();

		ck_assert_msg(left > 0, "no end of the answer within %d ms",
			      WAIT_MS);
		/* a poll that times out must not fall into a blocking read */
		ck_assert_msg(poll(&pfd, 1, (int)left) > 0,
			      "no end of the answer within %d ms", WAIT_MS);
		if (len + 4096 > cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			ck_assert_ptr_nonnull(buf);
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		ck_assert_int_ge(n, 0);
		if (!n)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	close(fd);
	return buf;
}

static char *ask(const char *path)
{
	return slurp_fd(dial(path));
}

/* ---- Tests --------------------------------------------------------------- */

static char stats_file[PATH_MAX];

static void two_objects(char *say, size_t len)
{
	struct obj *c;
	unsigned before;

	unsetenv("RPCRDMA_STATS");
	setenv("RPCRDMA_STATS_FILE", stats_file, 1);
	setenv(RPCRDMA_STATSOCK_ENV, dir, 1);
	before = threads();
	obj_new("obj A", false, 0);
	obj_new("obj B", true, 0);
	c = obj_new("obj C", false, 0);
	rpcrdma_stats_untrack(&c->reg, true); /* not printed: STATS unset */
	snprintf(say, len, "threads %u %u", before, threads());
}

/* The counters of every tracked object, as they are when asked, in the
 * registry's format, the server's connections, from a socket only the
 * owner may use, removed at exit; not printed (RPCRDMA_STATS unset). */
START_TEST(test_serves_counters)
{
	struct prog p;
	struct stat st;
	char first[128], *t, *u, *a, *b;
	unsigned before, after;

	dir_setup();
	snprintf(stats_file, sizeof(stats_file), "%s/stats.txt", dir);
	prog_start(&p, two_objects, NULL);
	ck_assert_int_eq(sscanf(p.said, "threads %u %u", &before, &after), 2);
	ck_assert_uint_eq(after, before + 1); /* the serving thread */

	ck_assert_int_eq(lstat(sock_of(p.pid), &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	ck_assert_uint_eq(st.st_uid, geteuid());

	t = ask(sock_of(p.pid));
	snprintf(first, sizeof(first), "rpcrdma: pid %ld comm %s\n",
		 (long)p.pid, program_invocation_short_name);
	ck_assert_msg(!strncmp(t, first, strlen(first)), "answer \"%.200s\"",
		      t);
	ck_assert(ends_with(t, "\nrpcrdma: end\n"));
	a = strstr(t, "rpcrdma: obj A: calls 1 replies 7 long_calls 0 ");
	b = strstr(t, "rpcrdma: obj B: calls 1 replies 7 long_calls 0 ");
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert(a < b);				   /* oldest first */
	ck_assert_uint_eq(count(t, "rpcrdma: obj A:"), 9); /* 9 groups */
	ck_assert_ptr_nonnull(
		strstr(t,
		       "\nrpcrdma: obj B conn 192.0.2.5:40001: version 2 "
		       "max_granted 32 inflight 1 max_inflight 3 requests 11 "
		       "replies 10 read_bytes 0 write_bytes 0 reply_bytes 0 "
		       "cache_bytes 0 cache_released 0\n"));
	ck_assert_uint_eq(count(t, " conn "), 1); /* A has no conns() */
	ck_assert_ptr_null(strstr(t, "obj C"));	  /* untracked */

	/* Asked again: the values of now. */
	u = ask(sock_of(p.pid));
	ck_assert_ptr_nonnull(strstr(u, "rpcrdma: obj A: calls 2 "));
	ck_assert_ptr_nonnull(strstr(u, "rpcrdma: obj B: calls 2 "));
	free(t);
	free(u);

	prog_end(&p);
	ck_assert_int_ne(access(sock_of(p.pid), F_OK), 0);
	ck_assert_int_eq(errno, ENOENT);
	/* served, never printed: neither at untrack nor at exit */
	ck_assert_int_ne(access(stats_file, F_OK), 0);
	dir_teardown();
}
END_TEST

static void one_big(char *say, size_t len)
{
	setenv(RPCRDMA_STATSOCK_ENV, dir, 1);
	/* 40000 lines of filler: far more than a socket buffer holds */
	obj_new("big", false, 40000);
}

/* A client that connects and never reads holds the thread for
 * RPCRDMA_STATSOCK_TIMEOUT_MS at most, and gets a cut answer; one that
 * goes away at once costs nothing; the next ones are answered in full. */
START_TEST(test_silent_client)
{
	struct prog p;
	int silent, gone;
	int64_t t0, waited;
	char *t, *cut;

	dir_setup();
	prog_start(&p, one_big, NULL);
	silent = dial(sock_of(p.pid));
	gone = dial(sock_of(p.pid));
	close(gone);

	t0 = now_ms();
	t = ask(sock_of(p.pid));
	waited = now_ms() - t0;
	ck_assert(ends_with(t, "\nrpcrdma: end\n"));
	ck_assert_uint_eq(count(t, ": filler "), 40000);
	ck_assert_uint_gt(strlen(t), 4u << 20);
	/* it was answered only once the silent client's time was up */
	ck_assert_msg(waited >= RPCRDMA_STATSOCK_TIMEOUT_MS - 100 &&
			      waited < RPCRDMA_STATSOCK_TIMEOUT_MS + WAIT_MS,
		      "answered after %lld ms", (long long)waited);

	cut = slurp_fd(silent);
	ck_assert_msg(!ends_with(cut, "rpcrdma: end\n"),
		      "the silent client got the whole answer (%zu octets)",
		      strlen(cut));
	ck_assert(!strncmp(cut, "rpcrdma: pid ", 13));
	ck_assert_uint_lt(strlen(cut), strlen(t));
	free(cut);
	free(t);

	t = ask(sock_of(p.pid)); /* and the thread still serves */
	ck_assert(ends_with(t, "\nrpcrdma: end\n"));
	free(t);
	prog_end(&p);
	dir_teardown();
}
END_TEST

static const char *off_value;

static void unset_program(char *say, size_t len)
{
	unsigned before;

	setenv("RPCRDMA_STATS", "1", 1);
	setenv("RPCRDMA_STATS_FILE", "/dev/null", 1);
	if (off_value)
		setenv(RPCRDMA_STATSOCK_ENV, off_value, 1);
	else
		unsetenv(RPCRDMA_STATSOCK_ENV);
	before = threads();
	obj_new("obj A", true, 0);
	snprintf(say, len, "threads %u %u", before, threads());
}

static bool dir_empty(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	bool empty = true;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			empty = false;
	closedir(d);
	return empty;
}

/* Unset or empty: no thread, no socket, even with RPCRDMA_STATS on. */
START_TEST(test_unset_no_socket)
{
	static const char *const values[] = { NULL, "" };

	for (unsigned i = 0; i < 2; i++) {
		struct prog p;
		unsigned before, after;

		dir_setup();
		off_value = values[i];
		prog_start(&p, unset_program, NULL);
		ck_assert_int_eq(sscanf(p.said, "threads %u %u", &before,
					&after),
				 2);
		ck_assert_uint_eq(after, before);
		ck_assert(dir_empty());
		prog_end(&p);
		dir_teardown();
	}
}
END_TEST

static int g_go[2]; /* the grandchild exits at EOF: the test closes it */

/* The grandchild: its own object; says so; waits for g_go's EOF. */
static void grandchild(int ready)
{
	char c;

	close(g_go[1]);
	obj_new("child obj", false, 0);
	if (write(ready, "g", 1) != 1)
		_exit(6);
	while (read(g_go[0], &c, 1) > 0)
		;
	exit(0);
}

static void forking_program(char *say, size_t len)
{
	struct pollfd pfd;
	int r[2];
	pid_t g;
	char c;

	setenv(RPCRDMA_STATSOCK_ENV, dir, 1);
	obj_new("parent obj", false, 0);
	/* Fork only once the serving thread waits in accept(): GCC 12's
	 * ASan does not hold its allocator's lock across fork(), so a fork
	 * while that thread is still starting (and allocating) leaves the
	 * grandchild's allocator locked for ever.  glibc's malloc has no
	 * such hole; the wait is for the sanitizer only. */
	free(ask(sock_of(getpid())));
	if (pipe(r))
		_exit(7);
	g = fork();
	if (g < 0)
		_exit(8);
	if (!g)
		grandchild(r[1]);
	close(g_go[0]);
	close(g_go[1]);
	pfd = (struct pollfd){ .fd = r[0], .events = POLLIN };
	if (poll(&pfd, 1, WAIT_MS) != 1 || read(r[0], &c, 1) != 1)
		_exit(9);
	snprintf(say, len, "grandchild %ld", (long)g);
}

/* A fork()ed child serves its own objects on its own socket, never its
 * parent's; its exit leaves the parent's socket alone. */
START_TEST(test_fork_child)
{
	struct prog p;
	long g;
	int64_t end;
	char *t, gpath[PATH_MAX];

	dir_setup();
	ck_assert_int_eq(pipe(g_go), 0);
	prog_start(&p, forking_program, NULL);
	close(g_go[0]);
	ck_assert_int_eq(sscanf(p.said, "grandchild %ld", &g), 1);
	snprintf(gpath, sizeof(gpath), "%s", sock_of((pid_t)g));

	/* the parent asked itself once before it forked */
	t = ask(sock_of(p.pid));
	ck_assert_ptr_nonnull(strstr(t, "rpcrdma: parent obj: calls 2 "));
	ck_assert_ptr_null(strstr(t, "child obj"));
	free(t);
	t = ask(gpath);
	ck_assert_ptr_nonnull(strstr(t, "rpcrdma: child obj: calls 1 "));
	ck_assert_ptr_null(strstr(t, "parent obj"));
	ck_assert_uint_eq(count(t, "\nrpcrdma: "), 10); /* 9 groups, end */
	free(t);

	/* The grandchild exits first: its socket goes, its parent's stays
	 * and still answers. */
	close(g_go[1]);
	end = now_ms() + WAIT_MS;
	while (!access(gpath, F_OK) && now_ms() < end)
		usleep(10000);
	ck_assert_int_ne(access(gpath, F_OK), 0);
	t = ask(sock_of(p.pid));
	ck_assert_ptr_nonnull(strstr(t, "rpcrdma: parent obj: calls 3 "));
	free(t);

	prog_end(&p);
	ck_assert_int_ne(access(sock_of(p.pid), F_OK), 0);
	dir_teardown();
}
END_TEST

static char fixed[PATH_MAX];

static void fixed_path_program(char *say, size_t len)
{
	setenv(RPCRDMA_STATSOCK_ENV, fixed, 1);
	obj_new("obj A", false, 0);
}

/* A socket file left by a process that is gone: bound, never listened
 * on, closed. */
static void make_stale(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	ck_assert_int_ge(fd, 0);
	strcpy(sa.sun_path, path);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
}

static char *slurp_file(const char *path)
{
	int fd = open(path, O_RDONLY);
	char *buf = calloc(1, 4096);
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	ck_assert_ptr_nonnull(buf);
	n = read(fd, buf, 4095);
	ck_assert_int_ge(n, 0);
	close(fd);
	return buf;
}

/* A path, not a directory: used as it is; a stale socket there is
 * replaced. */
START_TEST(test_path_stale_replaced)
{
	char first[64], *t;
	struct prog p;

	dir_setup();
	snprintf(fixed, sizeof(fixed), "%s/fixed.sock", dir);
	make_stale(fixed);
	prog_start(&p, fixed_path_program, NULL);
	t = ask(fixed);
	snprintf(first, sizeof(first), "rpcrdma: pid %ld comm ", (long)p.pid);
	ck_assert(!strncmp(t, first, strlen(first)));
	ck_assert_ptr_nonnull(strstr(t, "rpcrdma: obj A: calls 1 "));
	free(t);
	prog_end(&p);
	ck_assert_int_ne(access(fixed, F_OK), 0);
	dir_teardown();
}
END_TEST

/* A socket someone answers on is never taken over, nor removed; a file
 * that is not a socket neither; each is said once, on stderr. */
START_TEST(test_path_in_use)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char err[PATH_MAX], *t;
	struct stat before, after;
	struct prog p;
	int lfd, fd;

	dir_setup();
	snprintf(fixed, sizeof(fixed), "%s/fixed.sock", dir);
	snprintf(err, sizeof(err), "%s/stderr", dir);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_ge(lfd, 0);
	strcpy(sa.sun_path, fixed);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(lfd, 4), 0);
	ck_assert_int_eq(lstat(fixed, &before), 0);

	prog_start(&p, fixed_path_program, err);
	prog_end(&p);
	ck_assert_int_eq(lstat(fixed, &after), 0);
	ck_assert_uint_eq(before.st_ino, after.st_ino);
	t = slurp_file(err);
	ck_assert_msg(count(t, "rpcrdma: no statistics socket") == 1 &&
			      strstr(t, "a running process answers there"),
		      "stderr: \"%s\"", t);
	free(t);
	close(lfd);
	unlink(fixed);

	/* a regular file */
	fd = open(fixed, O_WRONLY | O_CREAT, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	prog_start(&p, fixed_path_program, err);
	prog_end(&p);
	ck_assert_int_eq(lstat(fixed, &after), 0);
	ck_assert(S_ISREG(after.st_mode));
	t = slurp_file(err);
	ck_assert_msg(strstr(t, "there is a file that is not a socket"),
		      "stderr: \"%s\"", t);
	free(t);
	dir_teardown();
}
END_TEST

static void missing_dir_program(char *say, size_t len)
{
	unsigned before;

	setenv(RPCRDMA_STATSOCK_ENV, "/nonexistent/rpcrdma/", 1);
	before = threads();
	obj_new("obj A", false, 0);
	obj_new("obj B", false, 0);
	snprintf(say, len, "threads %u %u", before, threads());
}

/* A directory that does not exist: said once, no thread. */
START_TEST(test_missing_dir)
{
	char err[PATH_MAX], *t;
	unsigned before, after;
	struct prog p;

	dir_setup();
	snprintf(err, sizeof(err), "%s/stderr", dir);
	prog_start(&p, missing_dir_program, err);
	ck_assert_int_eq(sscanf(p.said, "threads %u %u", &before, &after), 2);
	ck_assert_uint_eq(after, before);
	prog_end(&p);
	t = slurp_file(err);
	ck_assert_msg(count(t, "rpcrdma: no statistics socket") == 1 &&
			      strstr(t, "/nonexistent/rpcrdma/rpcrdma.") &&
			      strstr(t, "No such file or directory"),
		      "stderr: \"%s\"", t);
	free(t);
	dir_teardown();
}
END_TEST

Suite *statsock_suite(void)
{
	Suite *s = suite_create("statsock");
	TCase *tc = tcase_create("socket");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_serves_counters);
	tcase_add_test(tc, test_silent_client);
	tcase_add_test(tc, test_unset_no_socket);
	tcase_add_test(tc, test_fork_child);
	tcase_add_test(tc, test_path_stale_replaced);
	tcase_add_test(tc, test_path_in_use);
	tcase_add_test(tc, test_missing_dir);
	suite_add_tcase(s, tc);
	return s;
}
