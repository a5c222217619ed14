/*
 * check_log.c - the logging unit (src/log/rl_log.c): RPCRDMA_LOG's values,
 * the default level, and which lines reach stderr, in what form.
 *
 * Each case captures stderr (fd 2) in a temporary file around the calls it
 * makes and compares what was written with what it expects, byte for byte.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "log/rl_log.h"
#include "check_util.h"

struct capture {
	FILE *f;
	int saved;
};

static void capture_begin(struct capture *c)
{
	fflush(stderr);
	c->f = tmpfile();
	ck_assert_ptr_nonnull(c->f);
	c->saved = dup(2);
	ck_assert_int_ge(c->saved, 0);
	ck_assert_int_eq(dup2(fileno(c->f), 2), 2);
}

/* What was written to stderr since capture_begin (malloc'd). */
static char *capture_end(struct capture *c)
{
	char *buf;
	long n;

	fflush(stderr);
	ck_assert_int_eq(dup2(c->saved, 2), 2);
	close(c->saved);
	n = ftell(c->f);
	ck_assert_int_ge(n, 0);
	buf = calloc(1, (size_t)n + 1);
	ck_assert_ptr_nonnull(buf);
	rewind(c->f);
	ck_assert_int_eq(fread(buf, 1, (size_t)n, c->f), (size_t)n);
	fclose(c->f);
	return buf;
}

/* RPCRDMA_LOG=value (NULL: unset), read again. */
static void set_level(const char *value)
{
	if (value)
		setenv("RPCRDMA_LOG", value, 1);
	else
		unsetenv("RPCRDMA_LOG");
	rl_reload();
}

/* One message of each level under RPCRDMA_LOG=value: what stderr got. */
static char *each_level(const char *value)
{
	struct capture c;

	set_level(value);
	capture_begin(&c);
	rl_err("e%d", 1);
	rl_warn("w%d", 2);
	rl_info("i%d", 3);
	rl_debug("d%d", 4);
	rl_log(RL_QUIET, "never");
	return capture_end(&c);
}

START_TEST(test_parse)
{
	ck_assert_int_eq(rl_level_parse("quiet"), RL_QUIET);
	ck_assert_int_eq(rl_level_parse("error"), RL_ERROR);
	ck_assert_int_eq(rl_level_parse("WARN"), RL_WARN);
	ck_assert_int_eq(rl_level_parse("Info"), RL_INFO);
	ck_assert_int_eq(rl_level_parse("debug"), RL_DEBUG);
	ck_assert_int_eq(rl_level_parse("0"), RL_QUIET);
	ck_assert_int_eq(rl_level_parse("4"), RL_DEBUG);
	ck_assert_int_eq(rl_level_parse("5"), -1);
	ck_assert_int_eq(rl_level_parse("10"), -1);
	ck_assert_int_eq(rl_level_parse("-1"), -1);
	ck_assert_int_eq(rl_level_parse("warning"), -1);
	ck_assert_int_eq(rl_level_parse(""), -1);
	ck_assert_int_eq(rl_level_parse(NULL), -1);
}
END_TEST

/* Unset, the default: errors and warnings, with the prefix. */
START_TEST(test_default_level)
{
	char *out = each_level(NULL);

	ck_assert_int_eq(rl_level(), RL_WARN);
	ck_assert_str_eq(out, "rpcrdma: e1\nrpcrdma: w2\n");
	free(out);
}
END_TEST

START_TEST(test_levels)
{
	char *out;

	out = each_level("quiet");
	ck_assert_str_eq(out, "");
	ck_assert(!rl_enabled(RL_ERROR));
	free(out);
	out = each_level("error");
	ck_assert_str_eq(out, "rpcrdma: e1\n");
	free(out);
	out = each_level("info");
	ck_assert_str_eq(out, "rpcrdma: e1\nrpcrdma: w2\nrpcrdma: i3\n");
	free(out);
	out = each_level("4");
	ck_assert_str_eq(out, "rpcrdma: e1\nrpcrdma: w2\nrpcrdma: i3\n"
			      "rpcrdma: d4\n");
	ck_assert(rl_enabled(RL_DEBUG));
	free(out);
}
END_TEST

/* A value not understood: the default, and one line saying so. */
START_TEST(test_bad_value)
{
	char *out = each_level("loud");

	ck_assert_str_eq(out, "rpcrdma: RPCRDMA_LOG='loud' ignored: expected "
			      "quiet, error, warn, info, debug or 0 to 4\n"
			      "rpcrdma: e1\nrpcrdma: w2\n");
	free(out);
}
END_TEST

/* A message too long for one line is cut, and still ends the line. */
START_TEST(test_long_line)
{
	static char big[3000];
	struct capture c;
	char *out;
	size_t n;

	memset(big, 'x', sizeof(big) - 1);
	set_level(NULL);
	capture_begin(&c);
	rl_warn("%s", big);
	rl_warn("after");
	out = capture_end(&c);
	n = strlen(out);
	ck_assert_uint_gt(n, 900);
	ck_assert_uint_lt(n, 1100);
	ck_assert_str_eq(out + n - strlen("\nrpcrdma: after\n"),
			 "\nrpcrdma: after\n");
	ck_assert_int_eq(strncmp(out, "rpcrdma: xxx", 12), 0);
	free(out);
}
END_TEST

Suite *log_suite(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("level");

	tcase_add_test(tc, test_parse);
	tcase_add_test(tc, test_default_level);
	tcase_add_test(tc, test_levels);
	tcase_add_test(tc, test_bad_value);
	tcase_add_test(tc, test_long_line);
	suite_add_tcase(s, tc);
	return s;
}
