/*
 * trace_file.h - the trace log (src/trace) written to a temporary file and
 * read back, for the tests of what src/rpc traces (check_rpc_trace.c for
 * the forward direction, check_rpc_bc.c for the backward one).
 */
#ifndef TRACE_FILE_H
#define TRACE_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The whole log once tf_read() read it; NUL-terminated. */
extern char *tf_lines;

/* Start the log in a new temporary file. */
void tf_open(void);

/* Stop the log and read its file into tf_lines. */
void tf_read(void);

/* Stop the log, remove its file, forget tf_lines. */
void tf_close(void);

/*
 * The events of (conn, xid) in file order, each "event key=value...\n",
 * after checking that every line has the documented beginning.
 */
void tf_events(uint32_t conn, uint32_t xid, char *out, size_t cap);

#define ck_assert_events(conn, xid, want)                                   \
	do {                                                                \
		char got_[4096];                                            \
		tf_events((conn), (xid), got_, sizeof(got_));               \
		ck_assert_msg(!strcmp(got_, (want)),                        \
			      "XID 0x%08x: got\n%swanted\n%sin\n%s",        \
			      (unsigned int)(xid), got_, (want), tf_lines); \
	} while (0)

#endif /* TRACE_FILE_H */
