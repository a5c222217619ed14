/*
 * red_fixture.h - test fixtures over the red_prog.x program, shared by
 * check_reduce.c, check_probe.c, check_pick.c and red_codec.c: filled
 * buffers, a checked malloc, and the red_mixed, red_two_args and
 * red_write_args values the tests encode, probe and decode.  The values are
 * arbitrary but fixed; the tests assert on lengths, positions and pointers,
 * never on the bytes filled in.
 */
#ifndef TESTS_RED_FIXTURE_H
#define TESTS_RED_FIXTURE_H

#include <stddef.h>

#include <rpc/rpc.h>

#include "tests/unit/red_prog.h" /* rpcgen output, in the build dir */

/* n octets of a pattern that depends on seed. */
void red_fill(void *p, size_t n, unsigned seed);

/* malloc that fails the test instead of returning NULL (n 0 is 1 octet). */
void *red_xmalloc(size_t n);

/*
 * A red_mixed whose opaque items are told apart by their lengths: blob n,
 * name min(n, RED_NAME_MAX), tag 6, opt body n + 1, list n + 2..n + 4,
 * last n + 5.  bufs[i] holds blen[i] = n + i filled octets.
 */
struct red_mixed_store {
	red_mixed m;
	red_opt opt;
	red_blob list[3];
	char *bufs[6];
	size_t blen[6];
	char name[RED_NAME_MAX + 1];
};

void red_mixed_make(struct red_mixed_store *s, size_t n);
void red_mixed_free(struct red_mixed_store *s);

/* Room for any encoding of red_mixed_make(n), with an RPC header. */
size_t red_mixed_cap(size_t n);

/*
 * AMB-V1-5: prefix 0x100.., a<> of 5 octets from a,
 * mid 0xabcdef01, b<> of 10 octets from b; a and b are filled here.
 */
void red_two_make(red_two_args *t, char *a, char *b);

/* An NFSv3-like WRITE: 32-octet fh, offset 0, len octets, FILE_SYNC. */
void red_write_make(red_write_args *w, char *fh, char *data, u_int len);

#endif /* TESTS_RED_FIXTURE_H */
