/*
 * rw_be.h - big-endian loads and stores for the transport-header codec.
 *
 * Received buffers have no alignment guarantee, so every access goes through
 * memcpy: the compiler turns it into one (possibly unaligned) load or store
 * plus a byte swap, and UBSan has no misaligned pointer to complain about.
 */
#ifndef RW_BE_H
#define RW_BE_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t rw_get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return be32toh(v);
}

static inline uint64_t rw_get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return be64toh(v);
}

static inline void rw_put32(uint8_t *p, uint32_t v)
{
	v = htobe32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void rw_put64(uint8_t *p, uint64_t v)
{
	v = htobe64(v);
	memcpy(p, &v, sizeof(v));
}

/* XDR pads opaque data to a multiple of four octets (RFC 4506 4.10). */
static inline uint64_t rw_pad4(uint64_t n)
{
	return (4 - (n & 3)) & 3;
}

#endif /* RW_BE_H */
