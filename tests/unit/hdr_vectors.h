/*
 * hdr_vectors.h - the transport-header test vectors of doc/requirements.md §6
 * and the header-level negative vectors of 6.4, as the hex words printed there.
 * Shared by the unit tests and the benchmark; the fuzz seed corpus
 * (tests/fuzz/seeds/hdr/) holds the same bytes.
 */
#ifndef TESTS_HDR_VECTORS_H
#define TESTS_HDR_VECTORS_H

#include <stddef.h>
#include <stdint.h>

struct hdr_vector {
	const char *name; /* its ID, e.g. "V1-TV8" */
	const char *hex;  /* whitespace-separated hex words */
};

extern const struct hdr_vector hdr_vectors[];
extern const size_t hdr_nvectors;

/* The vector called name; NULL if there is none. */
const struct hdr_vector *hdr_vector_find(const char *name);

/* Parse hex (whitespace ignored) into buf; octets written, 0 on error. */
size_t hdr_hex(const char *hex, uint8_t *buf, size_t cap);

/* The bytes of vector name in buf; a Check failure if it is missing or
 * malformed.  Octets written. */
size_t hdr_vec(const char *name, uint8_t *buf, size_t cap);

#endif /* TESTS_HDR_VECTORS_H */
