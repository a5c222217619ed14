/*
 * nfs_store.c - the file octets of the in-memory NFS test servers
 * (nfs_store.h).
 */
#include <stdlib.h>
#include <string.h>

#include "tests/vm/nfs_store.h"

bool ns_grow(struct ns_data *d, uint64_t end)
{
	uint8_t *p;

	if (end <= d->size)
		return true;
	if (end > NS_MAX_SIZE)
		return false;
	p = realloc(d->data, end);
	if (!p)
		return false;
	memset(p + d->size, 0, end - d->size);
	d->data = p;
	d->size = end;
	return true;
}

bool ns_write(struct ns_data *d, uint64_t off, const void *p, uint32_t len)
{
	uint64_t end = off + len;

	if (end < off || !ns_grow(d, end))
		return false;
	if (len)
		memcpy(d->data + off, p, len);
	return true;
}

char *ns_read(const struct ns_data *d, uint64_t off, uint32_t count,
	      uint32_t *n, bool *eof)
{
	uint64_t k = off >= d->size ? 0 : d->size - off;

	if (k > count)
		k = count;
	*n = (uint32_t)k;
	*eof = off + k >= d->size;
	return ns_dup(k ? d->data + off : NULL, k);
}

char *ns_dup(const void *p, size_t len)
{
	char *d = malloc(len ? len : 1);

	if (d && len)
		memcpy(d, p, len);
	return d;
}

void ns_free(struct ns_data *d)
{
	free(d->data);
	d->data = NULL;
	d->size = 0;
}
