/*
 * nfs3d_dir.c - READDIR and READDIRPLUS of rpcrdma-nfs3d(8) (RFC 1813
 * sections 3.3.16 and 3.3.17).
 *
 * Cookies are the directory offsets the kernel gives (getdents64's d_off,
 * lseek(2) back to them), as the Linux server does; the cookie verifier
 * is always zero and never checked.  Entries are taken while the encoded
 * result stays within the client's count (READDIR) or maxcount and
 * dircount (READDIRPLUS), XDR overhead included, so the reply fits the
 * Reply chunk the client sized from that count (the built-in binding's
 * READDIR entries); the server's own cap is NFS3D_MAX_DIR.  ".." of the
 * exported directory is the exported directory itself.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nfs3d.h"

#define XDR_PAD(n) (((n) + 3u) & ~3u)
/* post_op_attr with attributes: the boolean and a fattr3 */
#define POST_ATTR_LEN (4u + 84u)
/* resok around the entries: dir_attributes, cookieverf, the list's end
 * (a FALSE pointer) and eof */
#define RESOK_FIXED (POST_ATTR_LEN + 8u + 4u + 4u)

/* A directory read with getdents64 from a cookie on. */
struct dir_read {
	int fd;
	/* getdents64 records hold 64-bit fields */
	char buf[16384] __attribute__((aligned(8)));
	ssize_t len;
	ssize_t pos;
	bool end; /* getdents64 said there is no more */
	int err;
};

static struct dirent64 *next_entry(struct dir_read *d)
{
	struct dirent64 *e;

	if (d->pos >= d->len) {
		if (d->end || d->err)
			return NULL;
		d->len = getdents64(d->fd, d->buf, sizeof(d->buf));
		d->pos = 0;
		if (d->len < 0)
			d->err = errno;
		if (d->len <= 0) {
			d->end = d->len == 0;
			return NULL;
		}
	}
	e = (struct dirent64 *)(d->buf + d->pos);
	d->pos += e->d_reclen;
	return e;
}

/*
 * Open the directory a handle names for reading from cookie, as c may;
 * false with *st.  dsb: its attributes.
 */
static bool dir_open(const struct svc_req *rq, const nfs_fh3 *fh,
		     cookie3 cookie, struct dir_read *d, struct stat *dsb,
		     nfsstat3 *st)
{
	struct nfs3d_cred c;

	memset(d, 0, sizeof(*d));
	d->fd = nfs3d_fh_open(fh, O_RDONLY | O_DIRECTORY, dsb, st);
	if (d->fd < 0) {
		if (*st == NFS3ERR_INVAL) /* ELOOP: not a directory */
			*st = NFS3ERR_NOTDIR;
		return false;
	}
	nfs3d_cred_get(rq, &c);
	if (!nfs3d_access(&c, dsb, ACCESS3_READ))
		*st = NFS3ERR_ACCES;
	else if (cookie > (cookie3)INT64_MAX ||
		 (cookie && lseek(d->fd, (off_t)cookie, SEEK_SET) < 0))
		*st = NFS3ERR_BAD_COOKIE;
	if (*st == NFS3_OK)
		return true;
	close(d->fd);
	d->fd = -1;
	return false;
}

/* What to call an entry: ".." of the export root is the root itself. */
static const char *entry_name(const struct stat *dsb, const char *name)
{
	if (nfs3d_is_root(dsb) && !strcmp(name, ".."))
		return ".";
	return name;
}

static fileid3 entry_fileid(const struct stat *dsb, const struct dirent64 *e)
{
	if (nfs3d_is_root(dsb) && !strcmp(e->d_name, ".."))
		return dsb->st_ino;
	return e->d_ino;
}

/* The directory octets one entry costs: fileid, name, cookie, and the
 * pointer before it. */
static uint32_t entry_len(const char *name)
{
	return 4u + 8u + 4u + XDR_PAD((uint32_t)strlen(name)) + 8u;
}

/* ---- READDIR ------------------------------------------------------------- */

bool_t nfsproc3_readdir_3_svc(READDIR3args *arg, READDIR3res *res,
			      struct svc_req *rq)
{
	READDIR3resok *ok = &res->READDIR3res_u.resok;
	uint32_t room = arg->count, used = RESOK_FIXED, len;
	entry3 **tail = &ok->reply.entries, *n;
	struct dirent64 *e;
	struct dir_read d;
	struct stat dsb;
	bool full = false;

	memset(res, 0, sizeof(*res));
	if (!dir_open(rq, &arg->dir, arg->cookie, &d, &dsb, &res->status))
		return TRUE;
	if (room > NFS3D_MAX_DIR)
		room = NFS3D_MAX_DIR;
	while (!full && (e = next_entry(&d))) {
		len = entry_len(e->d_name);
		if (used + len > room) {
			full = true;
			break;
		}
		n = calloc(1, sizeof(*n));
		if (!n || !(n->name = strdup(e->d_name))) {
			free(n);
			res->status = NFS3ERR_SERVERFAULT;
			break;
		}
		n->fileid = entry_fileid(&dsb, e);
		n->cookie = (cookie3)e->d_off;
		*tail = n;
		tail = &n->nextentry;
		used += len;
	}
	if (res->status == NFS3_OK && d.err)
		res->status = nfs3d_errno(d.err);
	if (res->status == NFS3_OK && full && !ok->reply.entries)
		res->status = NFS3ERR_TOOSMALL;
	if (res->status != NFS3_OK) {
		xdr_free((xdrproc_t)xdr_dirlist3, (char *)&ok->reply);
		memset(ok, 0, sizeof(*ok));
	} else {
		ok->reply.eof = !full && d.end;
	}
	/* resfail's dir_attributes is resok's first field */
	nfs3d_post_attr(&dsb, &ok->dir_attributes);
	close(d.fd);
	return TRUE;
}

/* ---- READDIRPLUS ----------------------------------------------------------- */

/* One entryplus3 for e: its attributes and handle when they can be had
 * (a file removed meanwhile simply has neither); NULL without memory. */
static entryplus3 *plus_entry(int dfd, const struct stat *dsb,
			      const struct dirent64 *e)
{
	const char *name = entry_name(dsb, e->d_name);
	entryplus3 *n = calloc(1, sizeof(*n));
	struct stat sb;

	if (!n || !(n->name = strdup(e->d_name))) {
		free(n);
		return NULL;
	}
	n->fileid = entry_fileid(dsb, e);
	n->cookie = (cookie3)e->d_off;
	if (!fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW))
		nfs3d_post_attr(&sb, &n->name_attributes);
	if (nfs3d_fh_make(dfd, name, &n->name_handle.post_op_fh3_u.handle) ==
	    NFS3_OK)
		n->name_handle.handle_follows = TRUE;
	return n;
}

/* The octets n costs in the reply, all of it. */
static uint32_t plus_len(const entryplus3 *n)
{
	uint32_t len = entry_len(n->name) + 4u + 4u;

	if (n->name_attributes.attributes_follow)
		len += POST_ATTR_LEN - 4u;
	if (n->name_handle.handle_follows)
		len += 4u + XDR_PAD(n->name_handle.post_op_fh3_u.handle.data
					    .data_len);
	return len;
}

bool_t nfsproc3_readdirplus_3_svc(READDIRPLUS3args *arg, READDIRPLUS3res *res,
				  struct svc_req *rq)
{
	READDIRPLUS3resok *ok = &res->READDIRPLUS3res_u.resok;
	uint32_t room = arg->maxcount, dirroom = arg->dircount;
	uint32_t used = RESOK_FIXED, dirused = 0;
	entryplus3 **tail = &ok->reply.entries, *n;
	struct dirent64 *e;
	struct dir_read d;
	struct stat dsb;
	bool full = false;

	memset(res, 0, sizeof(*res));
	if (!dir_open(rq, &arg->dir, arg->cookie, &d, &dsb, &res->status))
		return TRUE;
	if (room > NFS3D_MAX_DIR)
		room = NFS3D_MAX_DIR;
	while ((e = next_entry(&d))) {
		n = plus_entry(d.fd, &dsb, e);
		if (!n) {
			res->status = NFS3ERR_SERVERFAULT;
			break;
		}
		if (used + plus_len(n) > room ||
		    (dirroom && dirused + entry_len(n->name) > dirroom)) {
			xdr_free((xdrproc_t)xdr_entryplus3, (char *)n);
			free(n);
			full = true;
			break;
		}
		*tail = n;
		tail = &n->nextentry;
		used += plus_len(n);
		dirused += entry_len(n->name);
	}
	if (res->status == NFS3_OK && d.err)
		res->status = nfs3d_errno(d.err);
	if (res->status == NFS3_OK && full && !ok->reply.entries)
		res->status = NFS3ERR_TOOSMALL;
	if (res->status != NFS3_OK) {
		xdr_free((xdrproc_t)xdr_dirlistplus3, (char *)&ok->reply);
		memset(ok, 0, sizeof(*ok));
	} else {
		ok->reply.eof = !full && d.end;
	}
	nfs3d_post_attr(&dsb, &ok->dir_attributes);
	close(d.fd);
	return TRUE;
}
