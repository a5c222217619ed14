/*
 * trace_file.c - the trace log in a temporary file, read back
 * (trace_file.h).
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_util.h"
#include "trace/tr_trace.h"
#include "trace_file.h"

#define TMPL	"/tmp/check_rpc_trace.XXXXXX"
#define MAX_LOG (1 << 20)

char *tf_lines;
static char path[sizeof(TMPL)];

void tf_open(void)
{
	int fd;

	memcpy(path, TMPL, sizeof(TMPL));
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(tr_open(path), 0);
	tf_lines = NULL;
}

void tf_read(void)
{
	FILE *f = fopen(path, "r");
	size_t n;

	tr_close();
	ck_assert_ptr_nonnull(f);
	free(tf_lines);
	tf_lines = calloc(1, MAX_LOG);
	ck_assert_ptr_nonnull(tf_lines);
	n = fread(tf_lines, 1, MAX_LOG - 1, f);
	fclose(f);
	ck_assert_uint_lt(n, MAX_LOG - 1);
}

void tf_close(void)
{
	tr_close();
	unlink(path);
	free(tf_lines);
	tf_lines = NULL;
}

void tf_events(uint32_t conn, uint32_t xid, char *out, size_t cap)
{
	const char *re = "^rpcrdma-trace: [0-9]+\\.[0-9]{6} pid=[0-9]+ "
			 "conn=([0-9]+) xid=0x([0-9a-f]{8}) ([a-z_]+ .*)$";
	char *copy = strdup(tf_lines), *line, *save;
	regmatch_t m[4];
	size_t used = 0;
	regex_t rx;

	ck_assert_ptr_nonnull(copy);
	ck_assert_int_eq(regcomp(&rx, re, REG_EXTENDED), 0);
	out[0] = '\0';
	for (line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		ck_assert_msg(regexec(&rx, line, 4, m, 0) == 0,
			      "not a trace line: %s", line);
		if (strtoul(line + m[1].rm_so, NULL, 10) != conn ||
		    strtoul(line + m[2].rm_so, NULL, 16) != xid)
			continue;
		used += (size_t)snprintf(out + used, cap - used, "%s\n",
					 line + m[3].rm_so);
		ck_assert_uint_lt(used, cap);
	}
	regfree(&rx);
	free(copy);
}
