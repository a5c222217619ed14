/*
 * nfs_store.h - the octets of a file (or a link's text) of the in-memory
 * NFS servers of the direct data placement VM tests
 * (nfs3_server.c, nfs4_server.c), so that both grow, write and read them
 * the same way: a WRITE past the end fills the gap with zeros, a READ
 * returns what there is up to its count and says whether that reaches the
 * end, and no file grows past NS_MAX_SIZE.
 *
 * The servers run on svc_run's one thread: no lock.
 */
#ifndef NFS_STORE_H
#define NFS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NS_MAX_SIZE (16u << 20) /* octets per file or link */

/* Empty: all zeros. */
struct ns_data {
	uint8_t *data;
	uint64_t size;
};

/* Make d hold end octets (the new ones zero); false if it may not. */
bool ns_grow(struct ns_data *d, uint64_t end);

/* len octets of p at off, growing d; false if it may not (FBIG). */
bool ns_write(struct ns_data *d, uint64_t off, const void *p, uint32_t len);

/*
 * A malloc'd copy of the octets at off, count at most: *n of them, *eof
 * whether they reach the end.  NULL without memory.
 */
char *ns_read(const struct ns_data *d, uint64_t off, uint32_t count,
	      uint32_t *n, bool *eof);

/* A malloc'd copy of len octets (at least one octet allocated). */
char *ns_dup(const void *p, size_t len);

/* Free what d holds; it is empty again. */
void ns_free(struct ns_data *d);

#endif /* NFS_STORE_H */
