/*
 * check_stats.c - the counter printer and the RPCRDMA_STATS registry
 * (src/glue/rpcrdma_stats.[ch]).
 *
 * The printer tests fill every member of struct rpcrdma_clnt_stats and
 * struct rpcrdma_svc_stats with a distinct value, print them into a memory
 * stream and parse the "rpcrdma: LABEL: name value ..." lines back.  The
 * layout tests fail when a member of either structure is in neither the
 * printer's list (RPCRDMA_*_STATS_FIELDS) nor the reserved members: a
 * counter added to <rpc/rpcrdma.h> must be added to the printer too.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <check.h>

#include <rpc/rpcrdma.h>

#include "glue/rpcrdma_stats.h"
#include "check_util.h"

#define MAX_FIELDS 64

/* One printed member: name, offset, size and the value written into it. */
struct field {
	const char *group;
	const char *name;
	size_t off, size;
	uint64_t value;
};

/* A value that shows a truncation or a mix-up: > 32 bits for 64-bit
 * members, distinct for each ordinal. */
static uint64_t value_for(unsigned i, size_t size)
{
	return size == 8 ? 0x100000000ULL * (i + 1) + 7 * i + 1 : 1000u + i;
}

#define FILL(type)                                                     \
	static unsigned fill_##type(struct type *st, struct field *fl) \
	{                                                              \
		unsigned n = 0;                                        \
                                                                       \
		memset(st, 0xa5, sizeof(*st)); /* reserved: garbage */ \
		RPCRDMA_FIELDS_##type(FILL_ONE) return n;              \
	}
#define FILL_ONE(g, m)                                                \
	fl[n] = (struct field){ #g, #m, offsetof(__typeof__(*st), m), \
				sizeof(st->m), 0 };                   \
	st->m = (__typeof__(st->m))value_for(n, sizeof(st->m));       \
	fl[n].value = st->m;                                          \
	n++;
#define RPCRDMA_FIELDS_rpcrdma_clnt_stats RPCRDMA_CLNT_STATS_FIELDS
#define RPCRDMA_FIELDS_rpcrdma_svc_stats  RPCRDMA_SVC_STATS_FIELDS
#define RPCRDMA_FIELDS_rpcrdma_stats_conn RPCRDMA_CONN_STATS_FIELDS
FILL(rpcrdma_clnt_stats)
FILL(rpcrdma_svc_stats)
FILL(rpcrdma_stats_conn)

/* What the printer wrote, parsed. */
struct parsed {
	unsigned lines;
	unsigned ntok; /* name/value pairs */
	char *names[2 * MAX_FIELDS];
	uint64_t values[2 * MAX_FIELDS];
	unsigned line_of[2 * MAX_FIELDS];
};

static void parsed_free(struct parsed *p)
{
	for (unsigned i = 0; i < p->ntok; i++)
		free(p->names[i]);
}

/* Parse text: every line "PREFIX name value name value ...", PREFIX being
 * "rpcrdma: LABEL:" or "rpcrdma:" for an empty label. */
static void parse(const char *text, const char *label, struct parsed *p)
{
	char prefix[256];
	const char *s = text;

	memset(p, 0, sizeof(*p));
	if (label && *label)
		snprintf(prefix, sizeof(prefix), "rpcrdma: %s:", label);
	else
		snprintf(prefix, sizeof(prefix), "rpcrdma:");
	while (*s) {
		const char *nl = strchr(s, '\n');
		char *line, *save = NULL, *name, *val, *end;

		ck_assert_msg(nl, "last line not terminated: \"%s\"", s);
		line = strndup(s, nl - s);
		ck_assert_msg(!strncmp(line, prefix, strlen(prefix)) &&
				      line[strlen(prefix)] == ' ',
			      "line \"%s\" does not start \"%s \"", line,
			      prefix);
		for (name = strtok_r(line + strlen(prefix), " ", &save); name;
		     name = strtok_r(NULL, " ", &save)) {
			val = strtok_r(NULL, " ", &save);
			ck_assert_msg(val, "name \"%s\" without a value", name);
			ck_assert_uint_lt(p->ntok, 2 * MAX_FIELDS);
			errno = 0;
			p->values[p->ntok] = strtoull(val, &end, 10);
			ck_assert_msg(!errno && *end == '\0' && *val >= '0' &&
					      *val <= '9',
				      "\"%s %s\": not a number", name, val);
			p->names[p->ntok] = strdup(name);
			p->line_of[p->ntok] = p->lines;
			p->ntok++;
		}
		free(line);
		p->lines++;
		s = nl + 1;
	}
}

/* Every member printed once with its value, nothing else, one line per
 * group (members of a group contiguous in the list). */
static void check_parsed(const struct parsed *p, const struct field *fl,
			 unsigned n)
{
	unsigned groups = 0;

	ck_assert_uint_eq(p->ntok, n);
	for (unsigned i = 0; i < n; i++) {
		unsigned hits = 0, at = 0;

		if (!i || strcmp(fl[i].group, fl[i - 1].group))
			groups++;
		for (unsigned k = 0; k < p->ntok; k++)
			if (!strcmp(p->names[k], fl[i].name)) {
				hits++;
				at = k;
			}
		ck_assert_msg(hits == 1, "member %s printed %u times",
			      fl[i].name, hits);
		ck_assert_msg(p->values[at] == fl[i].value,
			      "%s printed %llu, holds %llu", fl[i].name,
			      (unsigned long long)p->values[at],
			      (unsigned long long)fl[i].value);
		ck_assert_msg(at == i, "%s printed at %u, listed at %u",
			      fl[i].name, at, i);
		ck_assert_uint_eq(p->line_of[at], groups - 1);
	}
	ck_assert_uint_eq(p->lines, groups);
}

/* Print with fn into a memory stream; returns the text (free it). */
#define PRINT_TO_STRING(fn, label, st)                   \
	({                                               \
		char *buf_ = NULL;                       \
		size_t len_ = 0;                         \
		FILE *f_ = open_memstream(&buf_, &len_); \
                                                         \
		ck_assert_ptr_nonnull(f_);               \
		fn(f_, label, st);                       \
		ck_assert_int_eq(fclose(f_), 0);         \
		buf_;                                    \
	})

/* Every byte of a structure belongs to exactly one printed or reserved
 * member: no member is missing from the list, no padding hides one. */
static void check_layout(const char *what, size_t size, const struct field *fl,
			 unsigned n, const size_t *roff, const size_t *rsize,
			 unsigned nr)
{
	unsigned char owner[1024];

	ck_assert_uint_le(size, sizeof(owner));
	memset(owner, 0, size);
	for (unsigned i = 0; i < n + nr; i++) {
		size_t off = i < n ? fl[i].off : roff[i - n];
		size_t sz = i < n ? fl[i].size : rsize[i - n];

		for (size_t b = off; b < off + sz; b++) {
			ck_assert_msg(!owner[b], "%s: byte %zu twice", what, b);
			owner[b] = 1;
		}
	}
	for (size_t b = 0; b < size; b++)
		ck_assert_msg(owner[b],
			      "%s: byte %zu belongs to no "
			      "printed member: a counter was added to "
			      "<rpc/rpcrdma.h> but not to "
			      "src/glue/rpcrdma_stats.h",
			      what, b);
}

START_TEST(test_clnt_layout)
{
	struct rpcrdma_clnt_stats st;
	struct field fl[MAX_FIELDS];
	unsigned n = fill_rpcrdma_clnt_stats(&st, fl);

	/* no reserved member left: waits_polled took the last one */
	ck_assert_uint_eq(n, RPCRDMA_CLNT_STATS_NFIELDS);
	check_layout("struct rpcrdma_clnt_stats", sizeof(st), fl, n, NULL, NULL,
		     0);
}
END_TEST

START_TEST(test_svc_layout)
{
	struct rpcrdma_svc_stats st;
	struct field fl[MAX_FIELDS];
	unsigned n = fill_rpcrdma_svc_stats(&st, fl);

	/* no reserved member left: conns_reaped took the last one */
	ck_assert_uint_eq(n, RPCRDMA_SVC_STATS_NFIELDS);
	check_layout("struct rpcrdma_svc_stats", sizeof(st), fl, n, NULL, NULL,
		     0);
}
END_TEST

/* The connection line of the statistics socket: every member listed. */
START_TEST(test_conn_layout)
{
	struct rpcrdma_stats_conn st;
	struct field fl[MAX_FIELDS];
	unsigned n = fill_rpcrdma_stats_conn(&st, fl);

	ck_assert_uint_eq(n, RPCRDMA_CONN_STATS_NFIELDS);
	check_layout("struct rpcrdma_stats_conn", sizeof(st), fl, n, NULL, NULL,
		     0);
}
END_TEST

START_TEST(test_conn_print)
{
	const char *label = "svc 0.0.0.0:20049 conn 192.0.2.5:40001";
	struct rpcrdma_stats_conn st;
	struct field fl[MAX_FIELDS];
	unsigned n = fill_rpcrdma_stats_conn(&st, fl);
	struct parsed p;
	char *out;

	out = PRINT_TO_STRING(rpcrdma_stats_print_conn, label, &st);
	parse(out, label, &p);
	check_parsed(&p, fl, n);
	ck_assert_uint_eq(p.lines, 1);
	parsed_free(&p);
	free(out);
}
END_TEST

START_TEST(test_clnt_print)
{
	const char *label = "clnt 192.0.2.1:20049 prog 0x20005243 v1";
	struct rpcrdma_clnt_stats st;
	struct field fl[MAX_FIELDS];
	unsigned n = fill_rpcrdma_clnt_stats(&st, fl);
	struct parsed p;
	char *out;

	out = PRINT_TO_STRING(rpcrdma_stats_print_clnt, label, &st);
	parse(out, label, &p);
	check_parsed(&p, fl, n);
	parsed_free(&p);
	free(out);
}
END_TEST

START_TEST(test_svc_print)
{
	const char *label = "svc [::]:20049";
	struct rpcrdma_svc_stats st;
	struct field fl[MAX_FIELDS];
	unsigned n = fill_rpcrdma_svc_stats(&st, fl);
	struct parsed p;
	char *out;

	out = PRINT_TO_STRING(rpcrdma_stats_print_svc, label, &st);
	parse(out, label, &p);
	check_parsed(&p, fl, n);
	parsed_free(&p);
	free(out);
}
END_TEST

/* The exact text a test script would grep, with small values. */
START_TEST(test_clnt_print_grep)
{
	struct rpcrdma_clnt_stats st;
	char *out;

	memset(&st, 0, sizeof(st));
	st.calls = 12;
	st.replies = 12;
	st.read_chunks = 1;
	st.read_bytes = 8388608;
	st.ddp_zero_copies = 3;
	st.max_inflight = 4;
	st.waits_polled = 99;
	out = PRINT_TO_STRING(rpcrdma_stats_print_clnt,
			      "clnt 192.0.2.1:20049 prog 0x20005243 v1", &st);
	ck_assert_ptr_nonnull(strstr(
		out,
		"rpcrdma: clnt 192.0.2.1:20049 prog 0x20005243 v1: calls 12 "
		"replies 12 long_calls 0 "));
	ck_assert_ptr_nonnull(
		strstr(out, " read_chunks 1 read_bytes 8388608 "));
	ck_assert_ptr_nonnull(strstr(out, " ddp_zero_copies 3 "));
	ck_assert_ptr_nonnull(strstr(out, " max_inflight 4\n"));
	ck_assert_ptr_null(strstr(out, "reserved"));
	ck_assert_ptr_nonnull(strstr(out, " waits_polled 99\n"));
	free(out);
}
END_TEST

START_TEST(test_svc_print_grep)
{
	struct rpcrdma_svc_stats st;
	char *out;

	memset(&st, 0, sizeof(st));
	st.requests = 5;
	st.write_chunks = 2;
	st.write_bytes = 1048576;
	st.err_write_room = 1;
	st.conns_active = 3;
	st.conns_reaped = 77;
	out = PRINT_TO_STRING(rpcrdma_stats_print_svc, "svc 0.0.0.0:20049",
			      &st);
	ck_assert_ptr_nonnull(
		strstr(out, "rpcrdma: svc 0.0.0.0:20049: requests 5 "));
	ck_assert_ptr_nonnull(
		strstr(out, " write_chunks 2 write_bytes 1048576 "));
	ck_assert_ptr_nonnull(strstr(out, " err_write_room 1\n"));
	ck_assert_ptr_nonnull(strstr(out, " conns_active 3 "));
	ck_assert_ptr_nonnull(strstr(out, " conns_reaped 77 "));
	ck_assert_ptr_null(strstr(out, "reserved"));
	free(out);
}
END_TEST

START_TEST(test_print_no_label)
{
	struct rpcrdma_clnt_stats st;
	struct field fl[MAX_FIELDS];
	unsigned n = fill_rpcrdma_clnt_stats(&st, fl);
	struct parsed p;
	char *out;

	out = PRINT_TO_STRING(rpcrdma_stats_print_clnt, NULL, &st);
	ck_assert(!strncmp(out, "rpcrdma: calls ", 15));
	parse(out, NULL, &p);
	check_parsed(&p, fl, n);
	parsed_free(&p);
	free(out);
}
END_TEST

START_TEST(test_label)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(20049) };
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6,
				     .sin6_port = htons(20049) };
	char b[RPCRDMA_STATS_LABEL_LEN];

	inet_pton(AF_INET, "192.0.2.1", &sin.sin_addr);
	inet_pton(AF_INET6, "2001:db8::1", &sin6.sin6_addr);
	ck_assert_str_eq(rpcrdma_stats_label(b, sizeof(b), "clnt",
					     (struct sockaddr *)&sin,
					     0x20005243, 1),
			 "clnt 192.0.2.1:20049 prog 0x20005243 v1");
	ck_assert_str_eq(rpcrdma_stats_label(b, sizeof(b), "clnt",
					     (struct sockaddr *)&sin6, 100003,
					     3),
			 "clnt [2001:db8::1]:20049 prog 0x186a3 v3");
	sin6.sin6_addr = in6addr_any;
	ck_assert_str_eq(rpcrdma_stats_label(b, sizeof(b), "svc",
					     (struct sockaddr *)&sin6, 0, 0),
			 "svc [::]:20049");
	ck_assert_str_eq(rpcrdma_stats_label(b, sizeof(b), "svc", NULL, 0, 0),
			 "svc");
	ck_assert_str_eq(rpcrdma_stats_label(b, 8, "clnt",
					     (struct sockaddr *)&sin, 1, 1),
			 "clnt 19");
}
END_TEST

/* ---- Registry ----------------------------------------------------------- */

struct obj {
	struct rpcrdma_clnt_stats st;
	const char *label;
	struct rpcrdma_stats_reg reg;
};

static void obj_get(struct rpcrdma_stats_reg *reg, FILE *f)
{
	struct obj *o = RPCRDMA_STATS_OWNER(reg, struct obj, reg);

	rpcrdma_stats_print_clnt(f, o->label, &o->st);
}

static void obj_init(struct obj *o, const char *label, uint64_t calls)
{
	memset(o, 0, sizeof(*o));
	o->label = label;
	o->st.calls = calls;
	rpcrdma_stats_reg_init(&o->reg, obj_get);
}

static char stats_path[64];

/* A fresh RPCRDMA_STATS_FILE (absent) and RPCRDMA_STATS=value. */
static void env_setup(const char *value)
{
	int fd;

	snprintf(stats_path, sizeof(stats_path), "/tmp/check_stats.XXXXXX");
	fd = mkstemp(stats_path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	unlink(stats_path);
	ck_assert_int_eq(setenv("RPCRDMA_STATS_FILE", stats_path, 1), 0);
	/* the socket (check_statsock.c) would track objects too */
	unsetenv("RPCRDMA_STATS_SOCKET");
	if (value)
		ck_assert_int_eq(setenv("RPCRDMA_STATS", value, 1), 0);
	else
		ck_assert_int_eq(unsetenv("RPCRDMA_STATS"), 0);
}

static void env_teardown(void)
{
	unlink(stats_path);
	unsetenv("RPCRDMA_STATS_FILE");
	unsetenv("RPCRDMA_STATS");
}

/* The stats file's text ("" when absent); free it. */
static char *slurp(void)
{
	FILE *f = fopen(stats_path, "r");
	char *buf = calloc(1, 65536);
	size_t n = 0;

	ck_assert_ptr_nonnull(buf);
	if (f) {
		n = fread(buf, 1, 65535, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

static unsigned count(const char *hay, const char *needle)
{
	unsigned n = 0;

	for (const char *s = hay; (s = strstr(s, needle)); s++)
		n++;
	return n;
}

START_TEST(test_enabled_values)
{
	static const struct {
		const char *v;
		bool on;
	} cases[] = {
		{ NULL, false }, { "", false },	  { "0", false },
		{ "1", true },	 { "yes", true }, { "00", true },
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		env_setup(cases[i].v);
		ck_assert_msg(rpcrdma_stats_enabled() == cases[i].on,
			      "RPCRDMA_STATS=%s",
			      cases[i].v ? cases[i].v : "(unset)");
		env_teardown();
	}
}
END_TEST

/* Printed once, when untracked with print, to RPCRDMA_STATS_FILE
 * (appended). */
START_TEST(test_untrack_prints)
{
	struct obj a, b;
	char *t;

	env_setup("1");
	obj_init(&a, "obj A", 7);
	obj_init(&b, "obj B", 8);
	rpcrdma_stats_track(&a.reg);
	rpcrdma_stats_track(&b.reg);
	rpcrdma_stats_track(&a.reg); /* twice: still once */
	t = slurp();
	ck_assert_str_eq(t, ""); /* nothing until destroyed */
	free(t);

	a.st.calls = 17; /* printed when untracked */
	rpcrdma_stats_untrack(&a.reg, true);
	rpcrdma_stats_untrack(&a.reg, true);  /* not tracked: nothing */
	rpcrdma_stats_untrack(&b.reg, false); /* forgotten, not printed */
	rpcrdma_stats_track(&b.reg);
	rpcrdma_stats_untrack(&b.reg, true);
	t = slurp();
	ck_assert_uint_eq(count(t, "rpcrdma: obj A: calls 17 "), 1);
	ck_assert_uint_eq(count(t, "rpcrdma: obj A:"), 9); /* 9 groups */
	ck_assert_uint_eq(count(t, "rpcrdma: obj B: calls 8 "), 1);
	ck_assert_uint_eq(count(t, "\n"), 18);
	free(t);
	env_teardown();
}
END_TEST

/* RPCRDMA_STATS unset, empty or 0: nothing tracked, nothing printed. */
START_TEST(test_disabled_prints_nothing)
{
	static const char *const off[] = { NULL, "", "0" };

	for (unsigned i = 0; i < 3; i++) {
		struct obj a;
		char *t;

		env_setup(off[i]);
		obj_init(&a, "obj A", 7);
		rpcrdma_stats_track(&a.reg);
		ck_assert(!a.reg.tracked);
		rpcrdma_stats_untrack(&a.reg, true);
		t = slurp();
		ck_assert_str_eq(t, "");
		free(t);
		ck_assert_int_ne(access(stats_path, F_OK), 0);
		env_teardown();
	}
}
END_TEST

/* Run fn in a child that then calls exit(0); returns when it is done. */
static void in_child(void (*fn)(void))
{
	pid_t pid;
	int status;

	fflush(NULL);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (!pid) {
		fn();
		exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static struct obj alive, gone;

static void grandchild(void)
{
	/* A fork()ed child does not print its parent's objects. */
}

static void child_alive_at_exit(void)
{
	obj_init(&alive, "alive", 41);
	obj_init(&gone, "gone", 42);
	rpcrdma_stats_track(&alive.reg);
	rpcrdma_stats_track(&gone.reg);
	rpcrdma_stats_untrack(&gone.reg, true);
	in_child(grandchild);
}

/* Objects still alive at exit are printed by the atexit() handler, once,
 * and only by the process that tracked them. */
START_TEST(test_atexit_prints_alive)
{
	char *t;

	env_setup("1");
	in_child(child_alive_at_exit);
	t = slurp();
	ck_assert_uint_eq(count(t, "rpcrdma: alive: calls 41 "), 1);
	ck_assert_uint_eq(count(t, "rpcrdma: gone: calls 42 "), 1);
	free(t);
	env_teardown();
}
END_TEST

static void child_disabled(void)
{
	obj_init(&alive, "alive", 41);
	rpcrdma_stats_track(&alive.reg);
	/* Turned on later: objects tracked while off stay untracked. */
	setenv("RPCRDMA_STATS", "1", 1);
}

START_TEST(test_atexit_disabled)
{
	char *t;

	env_setup(NULL);
	in_child(child_disabled);
	t = slurp();
	ck_assert_str_eq(t, "");
	free(t);
	env_teardown();
}
END_TEST

/* An unwritable RPCRDMA_STATS_FILE: printed on stderr instead. */
START_TEST(test_bad_file_falls_back)
{
	struct obj a;
	char errpath[] = "/tmp/check_stats_err.XXXXXX";
	int fd = mkstemp(errpath), saved = dup(2);
	FILE *f;
	char buf[4096];
	size_t n;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_ge(saved, 0);
	setenv("RPCRDMA_STATS", "1", 1);
	setenv("RPCRDMA_STATS_FILE", "/nonexistent/dir/stats", 1);
	fflush(stderr);
	dup2(fd, 2);
	obj_init(&a, "obj A", 5);
	rpcrdma_stats_track(&a.reg);
	rpcrdma_stats_untrack(&a.reg, true);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(fd);
	f = fopen(errpath, "r");
	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	unlink(errpath);
	ck_assert_ptr_nonnull(
		strstr(buf, "RPCRDMA_STATS_FILE=/nonexistent/dir/stats"));
	ck_assert_ptr_nonnull(strstr(buf, "rpcrdma: obj A: calls 5 "));
	unsetenv("RPCRDMA_STATS");
	unsetenv("RPCRDMA_STATS_FILE");
}
END_TEST

Suite *stats_suite(void)
{
	Suite *s = suite_create("stats");
	TCase *tc = tcase_create("print");
	TCase *tr = tcase_create("registry");

	tcase_add_test(tc, test_clnt_layout);
	tcase_add_test(tc, test_svc_layout);
	tcase_add_test(tc, test_conn_layout);
	tcase_add_test(tc, test_conn_print);
	tcase_add_test(tc, test_clnt_print);
	tcase_add_test(tc, test_svc_print);
	tcase_add_test(tc, test_clnt_print_grep);
	tcase_add_test(tc, test_svc_print_grep);
	tcase_add_test(tc, test_print_no_label);
	tcase_add_test(tc, test_label);
	suite_add_tcase(s, tc);

	tcase_add_test(tr, test_enabled_values);
	tcase_add_test(tr, test_untrack_prints);
	tcase_add_test(tr, test_disabled_prints_nothing);
	tcase_add_test(tr, test_atexit_prints_alive);
	tcase_add_test(tr, test_atexit_disabled);
	tcase_add_test(tr, test_bad_file_falls_back);
	suite_add_tcase(s, tr);
	return s;
}
