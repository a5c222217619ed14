/*
 * rpcrdma-stat.c - rpcrdma-stat(1): the counters and connections of
 * running programs that use librpcrdma, read from the statistics sockets
 * they make with RPCRDMA_STATS_SOCKET, once or every few seconds, as
 * nfsstat(8) and mountstats(8) show those of NFS.
 *
 * Owns the command line, finding the sockets (by process id, by path, or
 * every one in a directory), reading each answer within a deadline and
 * saying clearly why one could not be read, and printing: the answer's
 * lines as they are, then, with -i, how much each counter grew since the
 * sample before.  The protocol (socket names, first and last lines) is
 * the library's, in src/glue/rpcrdma_statsock.h, included for its macros
 * only: the tool links nothing but libc.
 *
 * Exit status: 0 if every program was read at every sample, 1 if one
 * could not be, 2 on a usage error.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
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

#include "glue/rpcrdma_statsock.h"

#define EXIT_UNREAD 1
#define EXIT_USAGE  2

#define DEFAULT_DIR "/run/rpcrdma"
#define MAX_ANSWER  ((size_t)64 << 20) /* more is not an answer */

/* Values that are levels, not totals: -i shows them as they are. */
static const char *const gauges[] = { "credits",      "max_granted",
				      "max_inflight", "conns_active",
				      "inflight",     "version",
				      "cache_bytes" };

struct stat_opts {
	double interval_s;   /* -i, 0: once */
	unsigned long count; /* samples, 0: until interrupted */
	double wait_s;	     /* -W: each read */
	const char *dir;
};

/* One name value pair of an answer. */
struct counter {
	char *label; /* points into the answer it came from */
	char *name;
	uint64_t value;
};

/* A program to read. */
struct target {
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	pid_t pid;  /* from the argument or the name, 0: a path given */
	bool gone;  /* failed once: left out of later samples */
	char *prev; /* the previous sample's answer, for -i */
	struct counter *pc;
	size_t npc;
};

/* The programs to read (global: a usage error exits while they are
 * being made). */
static struct target *targets;
static size_t ntargets;

static void usage(void)
{
	fprintf(stderr,
		"usage: rpcrdma-stat [-i SECONDS] [-c COUNT] [-d DIR] [-W SECONDS]\n"
		"                    [PID|SOCKET]...\n");
	exit(EXIT_USAGE);
}

static void die_usage(const char *what, const char *arg)
{
	fprintf(stderr, "rpcrdma-stat: %s: %s\n", what, arg);
	usage();
}

/* ---- The command line ---------------------------------------------------- */

static unsigned long parse_count(const char *arg)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || *arg == '-' || !v)
		die_usage("bad count", arg);
	return v;
}

/* Seconds, fractions allowed; more than 0, at most a day. */
static double parse_seconds(const char *arg, const char *what)
{
	double v;
	char *end;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(v) || v < 0.001 ||
	    v > 86400)
		die_usage(what, arg);
	return v;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* Where programs put their sockets when RPCRDMA_STATS_SOCKET names a
 * directory: -d, else that variable if it names one, else DEFAULT_DIR. */
static const char *default_dir(void)
{
	const char *v = getenv(RPCRDMA_STATSOCK_ENV);
	struct stat st;

	if (v && *v &&
	    (v[strlen(v) - 1] == '/' || (!stat(v, &st) && S_ISDIR(st.st_mode))))
		return v;
	return DEFAULT_DIR;
}

static void target_pid(struct target *t, const char *dir, const char *arg)
{
	unsigned long v;
	int n;

	errno = 0;
	v = strtoul(arg, NULL, 10);
	if (errno || !v || v > INT_MAX)
		die_usage("not a process id", arg);
	t->pid = (pid_t)v;
	n = snprintf(t->path, sizeof(t->path),
		     "%s/" RPCRDMA_STATSOCK_PREFIX
		     "%ld" RPCRDMA_STATSOCK_SUFFIX,
		     dir, (long)t->pid);
	if (n < 0 || (size_t)n >= sizeof(t->path))
		die_usage("directory name too long for a socket", dir);
}

static void target_path(struct target *t, const char *arg)
{
	if (strlen(arg) >= sizeof(t->path))
		die_usage("path too long for a socket", arg);
	strcpy(t->path, arg);
}

/* The pid in a socket's name rpcrdma.PID.sock, or 0. */
static pid_t name_pid(const char *name)
{
	size_t lp = strlen(RPCRDMA_STATSOCK_PREFIX);
	size_t ls = strlen(RPCRDMA_STATSOCK_SUFFIX);
	size_t n = strlen(name);
	char digits[16];

	if (n <= lp + ls || n - lp - ls >= sizeof(digits) ||
	    strncmp(name, RPCRDMA_STATSOCK_PREFIX, lp) ||
	    strcmp(name + n - ls, RPCRDMA_STATSOCK_SUFFIX))
		return 0;
	memcpy(digits, name + lp, n - lp - ls);
	digits[n - lp - ls] = '\0';
	if (!all_digits(digits) || strtoul(digits, NULL, 10) > INT_MAX)
		return 0;
	return (pid_t)strtoul(digits, NULL, 10);
}

static int by_pid(const void *a, const void *b)
{
	const struct target *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Every socket of dir, by pid; exits with a message if there is none. */
static void scan(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	struct target *t;
	pid_t pid;

	if (!d) {
		fprintf(stderr,
			"rpcrdma-stat: %s: %s (programs make their sockets "
			"there when started with " RPCRDMA_STATSOCK_ENV
			"=%s; -d names another directory)\n",
			dir, strerror(errno), dir);
		exit(EXIT_UNREAD);
	}
	while ((e = readdir(d))) {
		char arg[32];

		pid = name_pid(e->d_name);
		if (!pid)
			continue;
		t = realloc(targets, (ntargets + 1) * sizeof(*t));
		if (!t) {
			perror("rpcrdma-stat");
			exit(EXIT_UNREAD);
		}
		targets = t;
		memset(&t[ntargets], 0, sizeof(*t));
		snprintf(arg, sizeof(arg), "%ld", (long)pid);
		target_pid(&t[ntargets++], dir, arg);
	}
	closedir(d);
	if (!ntargets) {
		fprintf(stderr,
			"rpcrdma-stat: no statistics socket in %s (start "
			"programs with " RPCRDMA_STATSOCK_ENV "=%s)\n",
			dir, dir);
		exit(EXIT_UNREAD);
	}
	qsort(targets, ntargets, sizeof(*targets), by_pid);
}

/* The options into o, the programs into targets. */
static void parse_args(struct stat_opts *o, int argc, char **argv)
{
	int opt, i;

	*o = (struct stat_opts){ .wait_s = 5 };
	while ((opt = getopt(argc, argv, "i:c:d:W:h")) != -1) {
		switch (opt) {
		case 'i':
			o->interval_s = parse_seconds(optarg, "bad interval");
			break;
		case 'c':
			o->count = parse_count(optarg);
			break;
		case 'd':
			o->dir = optarg;
			break;
		case 'W':
			o->wait_s = parse_seconds(optarg, "bad timeout");
			break;
		default:
			usage();
		}
	}
	if (o->count && !o->interval_s)
		o->interval_s = 1;
	if (o->interval_s && !o->count)
		o->count = ULONG_MAX; /* until interrupted */
	if (!o->count)
		o->count = 1;
	if (!o->dir)
		o->dir = default_dir();
	if (optind == argc) {
		scan(o->dir);
		return;
	}
	ntargets = (size_t)(argc - optind);
	targets = calloc(ntargets, sizeof(*targets));
	if (!targets) {
		perror("rpcrdma-stat");
		exit(EXIT_UNREAD);
	}
	for (i = optind; i < argc; i++) {
		if (all_digits(argv[i]))
			target_pid(&targets[i - optind], o->dir, argv[i]);
		else
			target_path(&targets[i - optind], argv[i]);
	}
}

/* ---- Reading an answer ------------------------------------------------ */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Why a connect to t failed, in words a user can act on. */
static void connect_error(const struct target *t, int err, const char *dir,
			  char *why, size_t len)
{
	struct stat st;
	bool alive = t->pid && (!kill(t->pid, 0) || errno == EPERM);

	if (err == ENOENT && t->pid && !alive) {
		snprintf(why, len, "no such process (and no socket %s)",
			 t->path);
	} else if (err == ENOENT && t->pid) {
		snprintf(why, len,
			 "process %ld has no statistics socket %s (it was "
			 "not started with " RPCRDMA_STATSOCK_ENV
			 "=%s, or has made no RDMA client or server yet)",
			 (long)t->pid, t->path, dir);
	} else if (err == ENOENT) {
		snprintf(why, len, "no such socket");
	} else if (err == EACCES || err == EPERM) {
		if (!stat(t->path, &st))
			snprintf(why, len,
				 "permission denied (the socket belongs to "
				 "uid %u: run as that user or as root)",
				 (unsigned)st.st_uid);
		else
			snprintf(why, len, "permission denied (%s)",
				 strerror(err));
	} else if (err == ECONNREFUSED && !lstat(t->path, &st) &&
		   !S_ISSOCK(st.st_mode)) {
		snprintf(why, len, "not a socket");
	} else if (err == ECONNREFUSED) {
		snprintf(why, len,
			 "stale socket: no process answers on it (its "
			 "program %s; the file may be removed)",
			 t->pid && alive ? "is gone, and its pid reused" :
					   "was killed or is gone");
	} else if (err == EAGAIN || err == EINPROGRESS) {
		snprintf(why, len, "no answer: the program is too busy");
	} else {
		snprintf(why, len, "%s", strerror(err));
	}
}

/* Read until EOF or the deadline; the answer in *out (NUL-terminated).
 * 0, or -1 with why set. */
static int read_all(int fd, int64_t deadline, char **out, char *why, size_t len)
{
	size_t n = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	ssize_t r;

	if (!buf)
		goto nomem;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int64_t left = deadline - now_ms();

		if (left <= 0 || !poll(&pfd, 1, (int)left)) {
			snprintf(why, len,
				 "no answer within the timeout (-W); the "
				 "program may be stopped");
			goto fail;
		}
		if (n + 1 >= cap) {
			char *b;

			if (cap >= MAX_ANSWER) {
				snprintf(why, len,
					 "answer longer than %zu MiB: not a "
					 "statistics socket?",
					 MAX_ANSWER >> 20);
				goto fail;
			}
			b = realloc(buf, cap * 2);
			if (!b)
				goto nomem;
			buf = b;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0) {
			snprintf(why, len, "read: %s", strerror(errno));
			goto fail;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*out = buf;
	return 0;
nomem:
	snprintf(why, len, "out of memory");
fail:
	free(buf);
	return -1;
}

/* Is text a whole answer?  If not, why. */
static bool answer_ok(const char *text, char *why, size_t len)
{
	size_t n = strlen(text), le = strlen(RPCRDMA_STATSOCK_END);
	const char *msg;

	if (!strncmp(text, RPCRDMA_STATSOCK_ERROR,
		     strlen(RPCRDMA_STATSOCK_ERROR))) {
		msg = text + strlen(RPCRDMA_STATSOCK_ERROR);
		snprintf(why, len, "refused by the program: %.*s",
			 (int)strcspn(msg, "\n"), msg);
		return false;
	}
	if (strncmp(text, RPCRDMA_STATSOCK_FIRST,
		    strlen(RPCRDMA_STATSOCK_FIRST))) {
		snprintf(why, len, "%s",
			 n ? "not an rpcrdma statistics socket" :
			     "empty answer (the program was exiting?)");
		return false;
	}
	if (n < le || strcmp(text + n - le, RPCRDMA_STATSOCK_END) ||
	    (n > le && text[n - le - 1] != '\n')) {
		snprintf(why, len,
			 "answer cut short (the program exited, or this "
			 "reader was too slow)");
		return false;
	}
	return true;
}

/* The answer of t, or NULL with why set. */
static char *ask(const struct target *t, const struct stat_opts *o, char *why,
		 size_t len)
{
	int64_t deadline = now_ms() + (int64_t)(o->wait_s * 1000);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = (time_t)o->wait_s,
			      .tv_usec =
				      (suseconds_t)(fmod(o->wait_s, 1) * 1e6) };
	char *text = NULL;
	int fd, e;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(why, len, "socket: %s", strerror(errno));
		return NULL;
	}
	strcpy(sa.sun_path, t->path);
	/* bounds connect() too, when the program's backlog is full */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		e = errno;
		close(fd);
		connect_error(t, e, o->dir, why, len);
		return NULL;
	}
	e = read_all(fd, deadline, &text, why, len);
	close(fd);
	if (e)
		return NULL;
	if (!answer_ok(text, why, len)) {
		free(text);
		return NULL;
	}
	return text;
}

/* ---- Printing ------------------------------------------------------------ */

static bool is_gauge(const char *name)
{
	for (size_t i = 0; i < sizeof(gauges) / sizeof(gauges[0]); i++)
		if (!strcmp(name, gauges[i]))
			return true;
	return false;
}

/*
 * Split one line "rpcrdma: LABEL: name value ..." in place: *label and
 * the pairs.  False for a line of another shape (printed as it is).
 */
static bool split_line(char *line, char **label, char **pairs)
{
	char *sep;

	if (strncmp(line, "rpcrdma: ", 9))
		return false;
	sep = strstr(line + 9, ": ");
	if (!sep)
		return false;
	*sep = '\0';
	*label = line + 9;
	*pairs = sep + 2;
	return true;
}

/* Parse the counters of text (modified in place) into *c. */
static size_t parse_counters(char *text, struct counter **c)
{
	char *line, *save = NULL, *label, *pairs, *name, *val, *s2, *end;
	size_t n = 0, cap = 0;

	*c = NULL;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!split_line(line, &label, &pairs))
			continue;
		s2 = NULL;
		for (name = strtok_r(pairs, " ", &s2); name;
		     name = strtok_r(NULL, " ", &s2)) {
			val = strtok_r(NULL, " ", &s2);
			if (!val)
				break;
			if (n == cap) {
				struct counter *m;

				cap = cap ? cap * 2 : 64;
				m = realloc(*c, cap * sizeof(**c));
				if (!m)
					return n;
				*c = m;
			}
			(*c)[n] = (struct counter){ label, name,
						    strtoull(val, &end, 10) };
			if (*end)
				continue; /* not a number */
			n++;
		}
	}
	return n;
}

static const struct counter *find(const struct target *t, const char *label,
				  const char *name)
{
	for (size_t i = 0; i < t->npc; i++)
		if (!strcmp(t->pc[i].name, name) &&
		    !strcmp(t->pc[i].label, label))
			return &t->pc[i];
	return NULL;
}

/* One line of a later sample: each total as its growth since the sample
 * before, if the object was in it, levels as they are. */
static void print_delta_line(const struct target *t, char *line)
{
	char *label, *pairs, *name, *val, *save = NULL, *end;
	const struct counter *p;
	uint64_t v;

	if (!split_line(line, &label, &pairs)) {
		puts(line);
		return;
	}
	printf("rpcrdma: %s:", label);
	for (name = strtok_r(pairs, " ", &save); name;
	     name = strtok_r(NULL, " ", &save)) {
		val = strtok_r(NULL, " ", &save);
		if (!val)
			break;
		v = strtoull(val, &end, 10);
		p = *end || is_gauge(name) ? NULL : find(t, label, name);
		if (p && p->value <= v)
			printf(" %s %llu", name,
			       (unsigned long long)(v - p->value));
		else
			printf(" %s %s", name, val);
	}
	putchar('\n');
}

/* The heading and the lines of one program's answer. */
static void print_answer(struct target *t, char *text, bool delta)
{
	char *line, *save = NULL, *copy;
	long pid = 0;
	char comm[64] = "?";
	bool any = false;

	sscanf(text, RPCRDMA_STATSOCK_FIRST "%ld comm %63s", &pid, comm);
	printf("pid %ld (%s) %s:\n", pid, comm, t->path);
	copy = strdup(text);
	if (!copy) {
		perror("rpcrdma-stat");
		exit(EXIT_UNREAD);
	}
	for (line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, RPCRDMA_STATSOCK_FIRST,
			     strlen(RPCRDMA_STATSOCK_FIRST)) ||
		    !strncmp(line, RPCRDMA_STATSOCK_END,
			     strlen(RPCRDMA_STATSOCK_END) - 1))
			continue;
		any = true;
		if (delta)
			print_delta_line(t, line);
		else
			puts(line);
	}
	free(copy);
	if (!any)
		puts("  (no RPC-over-RDMA client or server alive)");
}

/* Keep text as the previous sample of t. */
static void remember(struct target *t, char *text)
{
	free(t->prev);
	free(t->pc);
	t->prev = text;
	t->npc = parse_counters(t->prev, &t->pc);
}

/* One sample of every target left; false if one could not be read. */
static bool sample(struct target *t, size_t n, const struct stat_opts *o,
		   bool delta)
{
	char why[512];
	bool ok = true, first = true;
	char *text;

	for (size_t i = 0; i < n; i++) {
		if (t[i].gone)
			continue;
		text = ask(&t[i], o, why, sizeof(why));
		if (!text) {
			fflush(stdout);
			fprintf(stderr, "rpcrdma-stat: %s: %s\n", t[i].path,
				why);
			t[i].gone = true;
			ok = false;
			continue;
		}
		if (!first)
			putchar('\n');
		first = false;
		print_answer(&t[i], text, delta && t[i].prev);
		remember(&t[i], text);
	}
	fflush(stdout);
	return ok;
}

static bool any_left(const struct target *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!t[i].gone)
			return true;
	return false;
}

static void sleep_until(struct timespec *next, double interval_s)
{
	next->tv_sec += (time_t)interval_s;
	next->tv_nsec += (long)(fmod(interval_s, 1) * 1e9);
	if (next->tv_nsec >= 1000000000L) {
		next->tv_sec++;
		next->tv_nsec -= 1000000000L;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, next, NULL) ==
	       EINTR)
		;
}

int main(int argc, char **argv)
{
	struct stat_opts o;
	struct timespec next;
	struct target *t;
	size_t n;
	bool ok = true;

	parse_args(&o, argc, argv);
	t = targets;
	n = ntargets;
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (unsigned long k = 1; k <= o.count; k++) {
		if (k > 1)
			sleep_until(&next, o.interval_s);
		if (o.interval_s) {
			char when[32];
			time_t now = time(NULL);

			strftime(when, sizeof(when), "%H:%M:%S",
				 localtime(&now));
			if (k > 1)
				printf("\nsample %lu at %s: growth in the "
				       "last %g s\n",
				       k, when, o.interval_s);
			else
				printf("sample 1 at %s\n", when);
		}
		if (!sample(t, n, &o, k > 1))
			ok = false;
		if (!any_left(t, n))
			break;
	}
	for (size_t i = 0; i < n; i++) {
		free(t[i].prev);
		free(t[i].pc);
	}
	free(t);
	return ok ? 0 : EXIT_UNREAD;
}
