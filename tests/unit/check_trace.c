/*
 * check_trace.c - the trace log of src/trace (tr_trace.h, rpcrdma-trace(7)):
 * RPCRDMA_TRACE read by tr_open_env(), the format of a line, appending to
 * a file or writing to standard error, nothing written while off, lines of
 * concurrent threads kept whole, a long line cut, a file that cannot be
 * opened, connection ids.  The events of src/rpc are checked by
 * check_rpc_trace.c, the probes by probes.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "check_util.h"
#include "trace/tr_trace.h"

#define TMPL	    "/tmp/check_trace.XXXXXX"
#define NTHREADS    4
#define PER_THREAD  500
#define LINE_PREFIX "^rpcrdma-trace: [0-9]+\\.[0-9]{6} pid=[0-9]+ "

/* A new empty file; its name in path. */
static void tmpfile_new(char path[sizeof(TMPL)])
{
	int fd;

	memcpy(path, TMPL, sizeof(TMPL));
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
}

/* The file's contents, NUL-terminated (free it). */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	size_t cap = 1 << 16, n = 0, k;
	char *buf = malloc(cap + 1);

	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(buf);
	while ((k = fread(buf + n, 1, cap - n, f)) > 0) {
		n += k;
		if (n == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
			ck_assert_ptr_nonnull(buf);
		}
	}
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

static bool matches(const char *re, const char *s)
{
	regex_t rx;
	int ret;

	ck_assert_int_eq(regcomp(&rx, re, REG_EXTENDED | REG_NOSUB), 0);
	ret = regexec(&rx, s, 0, NULL, 0);
	regfree(&rx);
	return ret == 0;
}

/* RPCRDMA_TRACE names the file; one event is one line, in the documented
 * shape: time, pid, conn, xid in eight hex digits, event, key=value. */
START_TEST(test_env_file_line)
{
	char path[sizeof(TMPL)], want[256];
	char *s;

	tmpfile_new(path);
	ck_assert_int_eq(setenv("RPCRDMA_TRACE", path, 1), 0);
	ck_assert_int_eq(tr_open_env(), 0);
	ck_assert(tr_on);
	TR_EVENT(unit_event, 7, 0xabcd, "a=%u b=%s", 1u, "two");
	tr_close();
	ck_assert(!tr_on);
	s = slurp(path, NULL);
	snprintf(want, sizeof(want),
		 "^rpcrdma-trace: [0-9]+\\.[0-9]{6} pid=%ld conn=7 "
		 "xid=0x0000abcd unit_event a=1 b=two\n$",
		 (long)getpid());
	ck_assert_msg(matches(want, s), "line: %s", s);
	free(s);
	unlink(path);
}
END_TEST

/* Unset (or empty): the log is off and an event writes nothing, not even
 * to a file that was open before. */
START_TEST(test_unset_writes_nothing)
{
	char path[sizeof(TMPL)];
	size_t len;
	char *s;

	tmpfile_new(path);
	ck_assert_int_eq(tr_open(path), 0);
	TR_EVENT(unit_event, 1, 1, "n=%d", 1);
	ck_assert_int_eq(unsetenv("RPCRDMA_TRACE"), 0);
	ck_assert_int_eq(tr_open_env(), 0);
	ck_assert(!tr_on);
	TR_EVENT(unit_event, 1, 2, "n=%d", 2);
	ck_assert_int_eq(setenv("RPCRDMA_TRACE", "", 1), 0);
	ck_assert_int_eq(tr_open_env(), 0);
	ck_assert(!tr_on);
	TR_EVENT(unit_event, 1, 3, "n=%d", 3);
	s = slurp(path, &len);
	/* only the line written while it was on */
	ck_assert_msg(matches("^[^\n]*xid=0x00000001 unit_event n=1\n$", s),
		      "file: %s", s);
	free(s);
	unlink(path);
}
END_TEST

/* A file is appended to, never truncated: two processes may share it. */
START_TEST(test_appends)
{
	char path[sizeof(TMPL)];
	FILE *f;
	char *s;

	tmpfile_new(path);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("before\n", f);
	fclose(f);
	ck_assert_int_eq(tr_open(path), 0);
	TR_EVENT(unit_event, 2, 0, "k=%d", 5);
	tr_close();
	s = slurp(path, NULL);
	ck_assert_msg(matches("^before\n" LINE_PREFIX
			      "conn=2 xid=0x00000000 unit_event k=5\n$",
			      s),
		      "file: %s", s);
	free(s);
	unlink(path);
}
END_TEST

/* "-" and "stderr" write to file descriptor 2. */
START_TEST(test_stderr)
{
	static const char *const specs[] = { "-", "stderr" };
	char path[sizeof(TMPL)];
	int fd, saved;
	unsigned int i;
	char *s;

	tmpfile_new(path);
	fd = open(path, O_WRONLY | O_APPEND);
	ck_assert_int_ge(fd, 0);
	saved = dup(STDERR_FILENO);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_eq(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(tr_open(specs[i]), 0);
		TR_EVENT(unit_event, 3, i, "spec=%s", specs[i]);
		tr_close();
	}
	/* closing the log leaves standard error open */
	ck_assert_int_eq(fcntl(STDERR_FILENO, F_GETFD), 0);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(fd);
	s = slurp(path, NULL);
	ck_assert_msg(matches("^[^\n]*unit_event spec=-\n"
			      "[^\n]*unit_event spec=stderr\n$",
			      s),
		      "file: %s", s);
	free(s);
	unlink(path);
}
END_TEST

/* A file that cannot be opened: -errno, the log stays off. */
START_TEST(test_bad_file)
{
	ck_assert_int_eq(tr_open("/nonexistent-dir/trace"), -ENOENT);
	ck_assert(!tr_on);
}
END_TEST

static void *writer(void *arg)
{
	unsigned int t = (unsigned int)(uintptr_t)arg, i;
	char pad[301];

	/* long lines, so that a write split in two would show */
	memset(pad, 'a' + (int)t, sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	for (i = 0; i < PER_THREAD; i++)
		TR_EVENT(unit_event, t, i, "thread=%u seq=%u pad=%s", t, i,
			 pad);
	return NULL;
}

/* Lines of threads writing at once never interleave: every line is whole
 * and each thread's lines come in its order. */
START_TEST(test_threads_whole_lines)
{
	unsigned int next[NTHREADS] = { 0 }, t, seq, lines = 0;
	pthread_t th[NTHREADS];
	char path[sizeof(TMPL)];
	char *s, *line, *save;

	tmpfile_new(path);
	ck_assert_int_eq(tr_open(path), 0);
	for (t = 0; t < NTHREADS; t++)
		ck_assert_int_eq(pthread_create(&th[t], NULL, writer,
						(void *)(uintptr_t)t),
				 0);
	for (t = 0; t < NTHREADS; t++)
		pthread_join(th[t], NULL);
	tr_close();
	s = slurp(path, NULL);
	for (line = strtok_r(s, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char re[512];

		ck_assert_msg(sscanf(strstr(line, "thread=") ?
					     strstr(line, "thread=") :
					     "",
				     "thread=%u seq=%u", &t, &seq) == 2,
			      "line %u: %s", lines, line);
		ck_assert_uint_lt(t, NTHREADS);
		ck_assert_uint_eq(seq, next[t]);
		next[t]++;
		snprintf(re, sizeof(re),
			 LINE_PREFIX "conn=%u xid=0x%08x unit_event "
				     "thread=%u seq=%u pad=%c{300}$",
			 t, seq, t, seq, 'a' + (int)t);
		ck_assert_msg(matches(re, line), "line %u: %s", lines, line);
		lines++;
	}
	ck_assert_uint_eq(lines, NTHREADS * PER_THREAD);
	free(s);
	unlink(path);
}
END_TEST

/* A line beyond the buffer is cut, ends in "..." and stays one line. */
START_TEST(test_long_line_cut)
{
	char path[sizeof(TMPL)], big[2000];
	size_t len;
	char *s;

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	tmpfile_new(path);
	ck_assert_int_eq(tr_open(path), 0);
	TR_EVENT(unit_event, 4, 4, "big=%s", big);
	TR_EVENT(unit_event, 4, 5, "after=%d", 1);
	tr_close();
	s = slurp(path, &len);
	ck_assert_msg(matches(LINE_PREFIX "conn=4 xid=0x00000004 unit_event "
					  "big=x+\\.\\.\\.\n" LINE_PREFIX
					  "[^\n]*after=1\n$",
			      s),
		      "file: %.100s", s);
	ck_assert_int_eq((int)(strchr(s, '\n') - s) + 1, 512);
	free(s);
	unlink(path);
}
END_TEST

/* Connection ids count up from 1 and are never given twice. */
START_TEST(test_conn_ids)
{
	uint32_t a = tr_conn_id_new(), b = tr_conn_id_new();

	ck_assert_uint_ge(a, 1);
	ck_assert_uint_eq(b, a + 1);
}
END_TEST

Suite *trace_suite(void)
{
	Suite *s = suite_create("trace");
	TCase *tc = tcase_create("log");

	tcase_add_test(tc, test_env_file_line);
	tcase_add_test(tc, test_unset_writes_nothing);
	tcase_add_test(tc, test_appends);
	tcase_add_test(tc, test_stderr);
	tcase_add_test(tc, test_bad_file);
	tcase_add_test(tc, test_threads_whole_lines);
	tcase_add_test(tc, test_long_line_cut);
	tcase_add_test(tc, test_conn_ids);
	suite_add_tcase(s, tc);
	return s;
}
