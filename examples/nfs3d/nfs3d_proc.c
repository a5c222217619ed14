/*
 * nfs3d_proc.c - the NFS version 3 procedures of rpcrdma-nfs3d(8) (RFC
 * 1813 section 3.3), READDIR and READDIRPLUS aside (nfs3d_dir.c).
 *
 * Each procedure opens the files its handles name (nfs3d_fs.c), does one
 * system call on them as the caller, and answers with the attributes RFC
 * 1813 asks for: post-operation attributes, and before/after (wcc_data)
 * around a change.  A request that cannot be served gets its nfsstat3,
 * never a crash: every handle, name, count and offset is peer data and is
 * checked before use.  Results are malloc'd and freed after the reply by
 * nfs_program_3_freeresult (xdr_free), so every procedure first zeroes its
 * result.
 *
 * WRITE data arrives by RDMA Read and READ data leaves by RDMA Write
 * (direct data placement, RFC 8267): that is librpcrdma's business, driven
 * by its built-in NFSv3 binding; nothing here knows about it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "nfs3d.h"

#define DEFAULT_FILE_MODE 0644
#define DEFAULT_DIR_MODE  0755

static void close_fd(int fd)
{
	if (fd >= 0)
		close(fd);
}

/* ---- Setting attributes ------------------------------------------------- */

static struct timespec set_time(time_how how, const nfstime3 *t)
{
	struct timespec ts = { 0, UTIME_OMIT };

	if (how == SET_TO_SERVER_TIME) {
		ts.tv_nsec = UTIME_NOW;
	} else if (how == SET_TO_CLIENT_TIME) {
		ts.tv_sec = t->seconds;
		ts.tv_nsec = t->nseconds < 1000000000u ? t->nseconds : 0;
	}
	return ts;
}

/*
 * Apply what s sets to the file fd (O_PATH) is open on, sb its mode; as
 * the caller (nfs3d_as_caller): the kernel checks the permissions.
 * skip_mode: the mode was given to the call that created the file.
 */
static int set_attrs(int fd, const struct stat *sb, const sattr3 *s,
		     bool skip_mode)
{
	struct timespec ts[2];
	char path[32];
	uid_t uid = (uid_t)-1;
	gid_t gid = (gid_t)-1;

	nfs3d_fd_path(fd, path);
	if (s->size.set_it) {
		if (S_ISDIR(sb->st_mode))
			return EISDIR;
		if (!S_ISREG(sb->st_mode))
			return EINVAL;
		if (s->size.set_size3_u.size > (size3)INT64_MAX)
			return EFBIG;
		if (truncate(path, (off_t)s->size.set_size3_u.size))
			return errno;
	}
	if (s->uid.set_it)
		uid = s->uid.set_uid3_u.uid;
	if (s->gid.set_it)
		gid = s->gid.set_gid3_u.gid;
	if ((s->uid.set_it || s->gid.set_it) &&
	    fchownat(fd, "", uid, gid, AT_EMPTY_PATH))
		return errno;
	if (s->mode.set_it && !skip_mode && !S_ISLNK(sb->st_mode) &&
	    chmod(path, s->mode.set_mode3_u.mode & 07777))
		return errno;
	ts[0] = set_time(s->atime.set_it, &s->atime.set_atime_u.atime);
	ts[1] = set_time(s->mtime.set_it, &s->mtime.set_mtime_u.mtime);
	if ((ts[0].tv_nsec != UTIME_OMIT || ts[1].tv_nsec != UTIME_OMIT) &&
	    !S_ISLNK(sb->st_mode) && utimensat(AT_FDCWD, path, ts, 0))
		return errno;
	return 0;
}

/* The operands of one operation run by nfs3d_as_caller. */
struct fs_op {
	int dfd; /* the directory (set_attrs: the file) */
	const char *name;
	int dfd2; /* RENAME's and LINK's other directory */
	const char *name2;
	const struct stat *sb;
	const void *how;     /* sattr3, createhow3, mknoddata3 */
	const sattr3 *attrs; /* MKNOD: the attributes its arm gives */
	bool skip_mode;
	int flags;
	mode_t mode;
};

static int op_set_attrs(void *arg)
{
	const struct fs_op *o = arg;

	return set_attrs(o->dfd, o->sb, o->how, o->skip_mode);
}

static nfsstat3 set_attrs_as(const struct svc_req *rq, int fd,
			     const struct stat *sb, const sattr3 *s,
			     bool skip_mode)
{
	struct fs_op o = {
		.dfd = fd, .sb = sb, .how = s, .skip_mode = skip_mode
	};

	return nfs3d_errno(nfs3d_as_caller(rq, op_set_attrs, &o));
}

/* ---- NULL, GETATTR, SETATTR, ACCESS ---------------------------------------- */

bool_t nfsproc3_null_3_svc(void *arg, void *res, struct svc_req *rq)
{
	return TRUE;
}

bool_t nfsproc3_getattr_3_svc(GETATTR3args *arg, GETATTR3res *res,
			      struct svc_req *rq)
{
	struct stat sb;
	int fd;

	memset(res, 0, sizeof(*res));
	fd = nfs3d_fh_open(&arg->object, O_PATH, &sb, &res->status);
	if (fd < 0)
		return TRUE;
	close(fd);
	nfs3d_fattr(&sb, &res->GETATTR3res_u.resok.obj_attributes);
	return TRUE;
}

static bool same_time(const struct timespec *ts, const nfstime3 *t)
{
	return (nfs3_uint32)ts->tv_sec == t->seconds &&
	       (nfs3_uint32)ts->tv_nsec == t->nseconds;
}

bool_t nfsproc3_setattr_3_svc(SETATTR3args *arg, SETATTR3res *res,
			      struct svc_req *rq)
{
	wcc_data *w = &res->SETATTR3res_u.resok.obj_wcc;
	struct stat sb;
	int fd;

	memset(res, 0, sizeof(*res));
	fd = nfs3d_fh_open(&arg->object, O_PATH, &sb, &res->status);
	if (fd < 0)
		return TRUE;
	if (arg->guard.check &&
	    !same_time(&sb.st_ctim, &arg->guard.sattrguard3_u.obj_ctime))
		res->status = NFS3ERR_NOT_SYNC;
	else if (nfs3d_exp.read_only)
		res->status = NFS3ERR_ROFS;
	else
		res->status =
			set_attrs_as(rq, fd, &sb, &arg->new_attributes, false);
	/* resok and resfail have the same shape */
	nfs3d_wcc(&sb, fd, w);
	close(fd);
	return TRUE;
}

bool_t nfsproc3_access_3_svc(ACCESS3args *arg, ACCESS3res *res,
			     struct svc_req *rq)
{
	struct nfs3d_cred c;
	struct stat sb;
	int fd;

	memset(res, 0, sizeof(*res));
	fd = nfs3d_fh_open(&arg->object, O_PATH, &sb, &res->status);
	if (fd < 0)
		return TRUE;
	close(fd);
	nfs3d_cred_get(rq, &c);
	nfs3d_post_attr(&sb, &res->ACCESS3res_u.resok.obj_attributes);
	res->ACCESS3res_u.resok.access = nfs3d_access(&c, &sb, arg->access);
	return TRUE;
}

/* ---- LOOKUP, READLINK ---------------------------------------------------------- */

/* The directory a handle names, O_PATH, with its attributes in dsb. */
static int open_dir(const nfs_fh3 *fh, struct stat *dsb, nfsstat3 *st)
{
	int fd = nfs3d_fh_open(fh, O_PATH, dsb, st);

	if (fd >= 0 && !S_ISDIR(dsb->st_mode)) {
		*st = NFS3ERR_NOTDIR;
		close(fd);
		return -1;
	}
	return fd;
}

/* A name LOOKUP may follow: "." and ".." too. */
static nfsstat3 lookup_name_ok(const char *name)
{
	nfsstat3 st = nfs3d_name_ok(name);

	if (st == NFS3ERR_EXIST) /* "." or ".." */
		return NFS3_OK;
	if (st == NFS3ERR_INVAL) /* empty */
		return NFS3ERR_NOENT;
	return st;
}

bool_t nfsproc3_lookup_3_svc(LOOKUP3args *arg, LOOKUP3res *res,
			     struct svc_req *rq)
{
	LOOKUP3resok *ok = &res->LOOKUP3res_u.resok;
	const char *name = arg->what.name;
	struct nfs3d_cred c;
	struct stat dsb, sb;
	int dfd;

	memset(res, 0, sizeof(*res));
	dfd = open_dir(&arg->what.dir, &dsb, &res->status);
	if (dfd < 0)
		return TRUE;
	nfs3d_cred_get(rq, &c);
	res->status = lookup_name_ok(name);
	if (res->status == NFS3_OK && !nfs3d_access(&c, &dsb, ACCESS3_LOOKUP))
		res->status = NFS3ERR_ACCES;
	/* ".." of the exported directory is itself: never leave it */
	if (res->status == NFS3_OK && nfs3d_is_root(&dsb) &&
	    !strcmp(name, ".."))
		name = ".";
	if (res->status == NFS3_OK &&
	    fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW))
		res->status = nfs3d_errno(errno);
	if (res->status == NFS3_OK)
		res->status = nfs3d_fh_make(dfd, name, &ok->object);
	if (res->status == NFS3_OK) {
		nfs3d_post_attr(&sb, &ok->obj_attributes);
		nfs3d_post_attr(&dsb, &ok->dir_attributes);
	} else {
		nfs3d_post_attr(&dsb,
				&res->LOOKUP3res_u.resfail.dir_attributes);
	}
	close(dfd);
	return TRUE;
}

bool_t nfsproc3_readlink_3_svc(READLINK3args *arg, READLINK3res *res,
			       struct svc_req *rq)
{
	READLINK3resok *ok = &res->READLINK3res_u.resok;
	char *buf = NULL;
	struct stat sb;
	ssize_t n;
	int fd;

	memset(res, 0, sizeof(*res));
	fd = nfs3d_fh_open(&arg->symlink, O_PATH, &sb, &res->status);
	if (fd < 0)
		return TRUE;
	if (!S_ISLNK(sb.st_mode)) {
		res->status = NFS3ERR_INVAL;
	} else if (!(buf = malloc(NFS3D_MAX_PATH + 1))) {
		res->status = NFS3ERR_SERVERFAULT;
	} else {
		n = readlinkat(fd, "", buf, NFS3D_MAX_PATH + 1);
		if (n < 0)
			res->status = nfs3d_errno(errno);
		else if (n > (ssize_t)NFS3D_MAX_PATH)
			res->status = NFS3ERR_NAMETOOLONG;
		else
			buf[n] = '\0';
	}
	if (res->status == NFS3_OK) {
		ok->data = buf;
		buf = NULL;
	}
	free(buf);
	/* resok and resfail start alike */
	nfs3d_post_attr(&sb, &ok->symlink_attributes);
	close(fd);
	return TRUE;
}

/* ---- READ, WRITE, COMMIT --------------------------------------------------- */

/* May c read (or write) the file sb?  The owner always may (nfs3d_fs.c),
 * and reading an executable is reading. */
static bool may_io(const struct nfs3d_cred *c, const struct stat *sb,
		   bool write)
{
	uint32_t want = write ? ACCESS3_MODIFY : ACCESS3_READ | ACCESS3_EXECUTE;

	if (write && nfs3d_exp.read_only)
		return false;
	return c->uid == sb->st_uid || nfs3d_access(c, sb, want);
}

/* The regular file a READ, WRITE or COMMIT names, open for its I/O. */
static int open_file(const struct svc_req *rq, const nfs_fh3 *fh, bool write,
		     struct stat *sb, nfsstat3 *st)
{
	struct nfs3d_cred c;
	int fd;

	fd = nfs3d_fh_open(fh, O_PATH, sb, st);
	if (fd < 0)
		return -1;
	close(fd);
	if (S_ISDIR(sb->st_mode)) {
		*st = NFS3ERR_ISDIR;
		return -1;
	}
	if (!S_ISREG(sb->st_mode)) {
		*st = NFS3ERR_INVAL;
		return -1;
	}
	nfs3d_cred_get(rq, &c);
	if (!may_io(&c, sb, write)) {
		*st = write && nfs3d_exp.read_only ? NFS3ERR_ROFS :
						     NFS3ERR_ACCES;
		return -1;
	}
	return nfs3d_fh_open(fh, write ? O_WRONLY : O_RDONLY, NULL, st);
}

/* pread until count octets or the end; the octets read, or -1. */
static ssize_t read_full(int fd, char *buf, size_t count, off_t off)
{
	size_t done = 0;
	ssize_t n;

	while (done < count) {
		n = pread(fd, buf + done, count - done, off + (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

bool_t nfsproc3_read_3_svc(READ3args *arg, READ3res *res, struct svc_req *rq)
{
	READ3resok *ok = &res->READ3res_u.resok;
	uint32_t count = arg->count;
	char *buf = NULL;
	struct stat sb;
	ssize_t n = -1;
	int fd;

	memset(res, 0, sizeof(*res));
	fd = open_file(rq, &arg->file, false, &sb, &res->status);
	if (fd < 0)
		return TRUE;
	if (count > NFS3D_MAX_IO)
		count = NFS3D_MAX_IO;
	if (arg->offset > (offset3)INT64_MAX)
		res->status = NFS3ERR_INVAL;
	else if (!(buf = malloc(count ? count : 1)))
		res->status = NFS3ERR_SERVERFAULT;
	else if ((n = read_full(fd, buf, count, (off_t)arg->offset)) < 0)
		res->status = nfs3d_errno(errno);
	if (res->status == NFS3_OK) {
		ok->data.data_val = buf;
		ok->data.data_len = (u_int)n;
		ok->count = (count3)n;
		buf = NULL;
		if (fstat(fd, &sb) == 0)
			ok->eof = arg->offset + (offset3)n >=
				  (offset3)sb.st_size;
	}
	free(buf);
	nfs3d_post_attr(&sb, &ok->file_attributes);
	close(fd);
	return TRUE;
}

static ssize_t write_full(int fd, const char *buf, size_t count, off_t off)
{
	size_t done = 0;
	ssize_t n;

	while (done < count) {
		n = pwrite(fd, buf + done, count - done, off + (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			return -1;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/* What a FILE_SYNC or DATA_SYNC WRITE asks; 0 or the errno. */
static int sync_file(int fd, stable_how how, bool *synced)
{
	*synced = true;
	if (how == FILE_SYNC ? fsync(fd) : fdatasync(fd))
		return errno;
	return 0;
}

bool_t nfsproc3_write_3_svc(WRITE3args *arg, WRITE3res *res, struct svc_req *rq)
{
	WRITE3resok *ok = &res->WRITE3res_u.resok;
	struct stat sb;
	bool synced = false;
	int fd, err = 0;

	memset(res, 0, sizeof(*res));
	fd = open_file(rq, &arg->file, true, &sb, &res->status);
	if (fd < 0)
		return TRUE;
	/* the count says how much of the data to write: never more than
	 * came (RFC 1813 section 3.3.7) */
	if (arg->count > arg->data.data_len || arg->count > NFS3D_MAX_IO ||
	    arg->offset > (offset3)INT64_MAX - arg->count ||
	    arg->stable > FILE_SYNC)
		err = EINVAL;
	else if (write_full(fd, arg->data.data_val, arg->count,
			    (off_t)arg->offset) < 0)
		err = errno;
	else if (arg->stable != UNSTABLE)
		err = sync_file(fd, arg->stable, &synced);
	res->status = nfs3d_errno(err);
	nfs3d_wcc(&sb, fd, &ok->file_wcc); /* resfail: the same shape */
	if (!err) {
		ok->count = arg->count;
		ok->committed = synced ? arg->stable : UNSTABLE;
		memcpy(ok->verf, nfs3d_exp.verf, sizeof(ok->verf));
	}
	close(fd);
	return TRUE;
}

bool_t nfsproc3_commit_3_svc(COMMIT3args *arg, COMMIT3res *res,
			     struct svc_req *rq)
{
	COMMIT3resok *ok = &res->COMMIT3res_u.resok;
	struct stat sb;
	int fd;

	memset(res, 0, sizeof(*res));
	fd = open_file(rq, &arg->file, true, &sb, &res->status);
	if (fd < 0)
		return TRUE;
	if (fsync(fd))
		res->status = nfs3d_errno(errno);
	nfs3d_wcc(&sb, fd, &ok->file_wcc);
	memcpy(ok->verf, nfs3d_exp.verf, sizeof(ok->verf));
	close(fd);
	return TRUE;
}

/* ---- Making files: CREATE, MKDIR, SYMLINK, MKNOD ----------------------------- */

/* What every procedure that makes a directory entry answers. */
struct made {
	post_op_fh3 *obj;
	post_op_attr *obj_attributes;
	wcc_data *dir_wcc;
};

/*
 * Common start: the directory (O_PATH, its attributes before in dsb) and
 * a name an entry may have, on an export that may change; -1 with *st.
 */
static int make_start(const diropargs3 *where, struct stat *dsb, nfsstat3 *st)
{
	int dfd = open_dir(&where->dir, dsb, st);

	if (dfd < 0)
		return -1;
	*st = nfs3d_exp.read_only ? NFS3ERR_ROFS : nfs3d_name_ok(where->name);
	if (*st != NFS3_OK) {
		close(dfd);
		return -1;
	}
	return dfd;
}

/*
 * Common end: the new entry's handle and attributes, after setting the
 * attributes s asks for (NULL: none) as the caller.  The directory's wcc
 * always.
 */
static void make_end(const struct svc_req *rq, int dfd, const char *name,
		     const struct stat *dsb, const sattr3 *s, nfsstat3 *st,
		     const struct made *m)
{
	struct stat sb;
	int fd = -1;

	if (*st == NFS3_OK && s) {
		fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &sb))
			*st = nfs3d_errno(errno);
		else
			*st = set_attrs_as(rq, fd, &sb, s, true);
		close_fd(fd);
	}
	if (*st == NFS3_OK &&
	    nfs3d_fh_make(dfd, name, &m->obj->post_op_fh3_u.handle) == NFS3_OK)
		m->obj->handle_follows = TRUE;
	if (*st == NFS3_OK && !fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW))
		nfs3d_post_attr(&sb, m->obj_attributes);
	nfs3d_wcc(dsb, dfd, m->dir_wcc);
}

static mode_t sattr_mode(const sattr3 *s, mode_t dflt)
{
	return s->mode.set_it ? s->mode.set_mode3_u.mode & 07777 : dflt;
}

/* The verifier of an EXCLUSIVE create, kept in the times as Linux does. */
static void verf_times(const createverf3 v, struct timespec ts[2])
{
	uint32_t w[2];

	memcpy(w, v, sizeof(w));
	ts[0].tv_sec = w[0] & 0x7fffffff;
	ts[0].tv_nsec = 0;
	ts[1].tv_sec = w[1] & 0x7fffffff;
	ts[1].tv_nsec = 0;
}

static int create_file(void *arg)
{
	const struct fs_op *o = arg;
	const createhow3 *how = o->how;
	const char *name = o->name;
	int dfd = o->dfd;
	struct timespec ts[2];
	struct stat sb;
	mode_t mode = DEFAULT_FILE_MODE;

	if (how->mode != EXCLUSIVE)
		mode = sattr_mode(&how->createhow3_u.obj_attributes, mode);
	if (!mknodat(dfd, name, S_IFREG | mode, 0)) {
		if (how->mode != EXCLUSIVE)
			return 0;
		verf_times(how->createhow3_u.verf, ts);
		return utimensat(dfd, name, ts, AT_SYMLINK_NOFOLLOW) ? errno :
								       0;
	}
	if (errno != EEXIST || how->mode == GUARDED)
		return errno;
	if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW))
		return errno;
	if (how->mode == UNCHECKED)
		return S_ISREG(sb.st_mode) ? 0 : EEXIST;
	/* EXCLUSIVE: a retransmission of ours finds its own verifier */
	verf_times(how->createhow3_u.verf, ts);
	return S_ISREG(sb.st_mode) && sb.st_atim.tv_sec == ts[0].tv_sec &&
			       sb.st_mtim.tv_sec == ts[1].tv_sec ?
		       0 :
		       EEXIST;
}

bool_t nfsproc3_create_3_svc(CREATE3args *arg, CREATE3res *res,
			     struct svc_req *rq)
{
	CREATE3resok *ok = &res->CREATE3res_u.resok;
	const struct made m = { &ok->obj, &ok->obj_attributes, &ok->dir_wcc };
	const char *name = arg->where.name;
	struct fs_op o = { .name = name, .how = &arg->how };
	struct stat dsb;
	int dfd;

	memset(res, 0, sizeof(*res));
	dfd = make_start(&arg->where, &dsb, &res->status);
	if (dfd < 0)
		return TRUE;
	o.dfd = dfd;
	res->status = nfs3d_errno(nfs3d_as_caller(rq, create_file, &o));
	/* resfail's dir_wcc is where resok's is: same union storage */
	make_end(rq, dfd, name, &dsb,
		 arg->how.mode == EXCLUSIVE ?
			 NULL :
			 &arg->how.createhow3_u.obj_attributes,
		 &res->status, &m);
	if (res->status != NFS3_OK)
		nfs3d_wcc(&dsb, dfd, &res->CREATE3res_u.resfail.dir_wcc);
	close(dfd);
	return TRUE;
}

static int op_mkdir(void *arg)
{
	const struct fs_op *o = arg;

	return mkdirat(o->dfd, o->name, o->mode) ? errno : 0;
}

bool_t nfsproc3_mkdir_3_svc(MKDIR3args *arg, MKDIR3res *res, struct svc_req *rq)
{
	MKDIR3resok *ok = &res->MKDIR3res_u.resok;
	const struct made m = { &ok->obj, &ok->obj_attributes, &ok->dir_wcc };
	struct fs_op o = { .name = arg->where.name,
			   .mode = sattr_mode(&arg->attributes,
					      DEFAULT_DIR_MODE) };
	struct stat dsb;
	int dfd;

	memset(res, 0, sizeof(*res));
	dfd = make_start(&arg->where, &dsb, &res->status);
	if (dfd < 0)
		return TRUE;
	o.dfd = dfd;
	res->status = nfs3d_errno(nfs3d_as_caller(rq, op_mkdir, &o));
	make_end(rq, dfd, arg->where.name, &dsb, &arg->attributes, &res->status,
		 &m);
	if (res->status != NFS3_OK)
		nfs3d_wcc(&dsb, dfd, &res->MKDIR3res_u.resfail.dir_wcc);
	close(dfd);
	return TRUE;
}

static int op_symlink(void *arg)
{
	const struct fs_op *o = arg;

	return symlinkat(o->name2, o->dfd, o->name) ? errno : 0;
}

bool_t nfsproc3_symlink_3_svc(SYMLINK3args *arg, SYMLINK3res *res,
			      struct svc_req *rq)
{
	SYMLINK3resok *ok = &res->SYMLINK3res_u.resok;
	const struct made m = { &ok->obj, &ok->obj_attributes, &ok->dir_wcc };
	const char *target = arg->symlink.symlink_data;
	struct fs_op o = { .name = arg->where.name, .name2 = target };
	struct stat dsb;
	int dfd, err;

	memset(res, 0, sizeof(*res));
	dfd = make_start(&arg->where, &dsb, &res->status);
	if (dfd < 0)
		return TRUE;
	if (!target || !*target) {
		err = EINVAL;
	} else if (strlen(target) > NFS3D_MAX_PATH) {
		err = ENAMETOOLONG;
	} else {
		o.dfd = dfd;
		err = nfs3d_as_caller(rq, op_symlink, &o);
	}
	res->status = nfs3d_errno(err);
	/* a link's mode means nothing; owner and times may be set */
	make_end(rq, dfd, arg->where.name, &dsb,
		 &arg->symlink.symlink_attributes, &res->status, &m);
	if (res->status != NFS3_OK)
		nfs3d_wcc(&dsb, dfd, &res->SYMLINK3res_u.resfail.dir_wcc);
	close(dfd);
	return TRUE;
}

static int make_node(void *arg)
{
	struct fs_op *o = arg;
	const mknoddata3 *what = o->how;
	const devicedata3 *dev = &what->mknoddata3_u.device;
	const sattr3 **attrs = &o->attrs;
	const char *name = o->name;
	int dfd = o->dfd;
	mode_t type;

	switch (what->type) {
	case NF3CHR:
	case NF3BLK:
		type = what->type == NF3CHR ? S_IFCHR : S_IFBLK;
		*attrs = &dev->dev_attributes;
		return mknodat(dfd, name, type | sattr_mode(*attrs, 0644),
			       makedev(dev->spec.specdata1,
				       dev->spec.specdata2)) ?
			       errno :
			       0;
	case NF3SOCK:
	case NF3FIFO:
		type = what->type == NF3SOCK ? S_IFSOCK : S_IFIFO;
		*attrs = &what->mknoddata3_u.pipe_attributes;
		return mknodat(dfd, name, type | sattr_mode(*attrs, 0644), 0) ?
			       errno :
			       0;
	default:
		return -1; /* NFS3ERR_BADTYPE */
	}
}

bool_t nfsproc3_mknod_3_svc(MKNOD3args *arg, MKNOD3res *res, struct svc_req *rq)
{
	MKNOD3resok *ok = &res->MKNOD3res_u.resok;
	const struct made m = { &ok->obj, &ok->obj_attributes, &ok->dir_wcc };
	struct fs_op o = { .name = arg->where.name, .how = &arg->what };
	struct stat dsb;
	int dfd, err;

	memset(res, 0, sizeof(*res));
	dfd = make_start(&arg->where, &dsb, &res->status);
	if (dfd < 0)
		return TRUE;
	o.dfd = dfd;
	err = nfs3d_as_caller(rq, make_node, &o);
	res->status = err < 0 ? NFS3ERR_BADTYPE : nfs3d_errno(err);
	make_end(rq, dfd, arg->where.name, &dsb, o.attrs, &res->status, &m);
	if (res->status != NFS3_OK)
		nfs3d_wcc(&dsb, dfd, &res->MKNOD3res_u.resfail.dir_wcc);
	close(dfd);
	return TRUE;
}

/* ---- Removing and renaming: REMOVE, RMDIR, RENAME, LINK ----------------------- */

/* A name an entry may be removed or renamed by: "." and ".." may not. */
static nfsstat3 unlink_name_ok(const char *name)
{
	nfsstat3 st = nfs3d_name_ok(name);

	return st == NFS3ERR_EXIST ? NFS3ERR_INVAL : st;
}

static int op_unlink(void *arg)
{
	const struct fs_op *o = arg;

	return unlinkat(o->dfd, o->name, o->flags) ? errno : 0;
}

static bool_t remove_entry(const struct svc_req *rq, const diropargs3 *obj,
			   int flags, nfsstat3 *st, wcc_data *w)
{
	struct fs_op o = { .name = obj->name, .flags = flags };
	struct stat dsb;
	int dfd;

	dfd = open_dir(&obj->dir, &dsb, st);
	if (dfd < 0)
		return TRUE;
	*st = nfs3d_exp.read_only ? NFS3ERR_ROFS : unlink_name_ok(obj->name);
	if (*st == NFS3_OK) {
		o.dfd = dfd;
		*st = nfs3d_errno(nfs3d_as_caller(rq, op_unlink, &o));
	}
	nfs3d_wcc(&dsb, dfd, w);
	close(dfd);
	return TRUE;
}

bool_t nfsproc3_remove_3_svc(REMOVE3args *arg, REMOVE3res *res,
			     struct svc_req *rq)
{
	memset(res, 0, sizeof(*res));
	/* resok and resfail: the same wcc_data in the same place */
	return remove_entry(rq, &arg->object, 0, &res->status,
			    &res->REMOVE3res_u.resok.dir_wcc);
}

bool_t nfsproc3_rmdir_3_svc(RMDIR3args *arg, RMDIR3res *res, struct svc_req *rq)
{
	memset(res, 0, sizeof(*res));
	return remove_entry(rq, &arg->object, AT_REMOVEDIR, &res->status,
			    &res->RMDIR3res_u.resok.dir_wcc);
}

static int op_rename(void *arg)
{
	const struct fs_op *o = arg;

	return renameat(o->dfd, o->name, o->dfd2, o->name2) ? errno : 0;
}

bool_t nfsproc3_rename_3_svc(RENAME3args *arg, RENAME3res *res,
			     struct svc_req *rq)
{
	RENAME3resok *ok = &res->RENAME3res_u.resok;
	struct fs_op o = { .name = arg->from.name, .name2 = arg->to.name };
	struct stat fsb, tsb;
	int ffd, tfd;

	memset(res, 0, sizeof(*res));
	ffd = open_dir(&arg->from.dir, &fsb, &res->status);
	if (ffd < 0)
		return TRUE;
	tfd = open_dir(&arg->to.dir, &tsb, &res->status);
	if (tfd >= 0) {
		res->status = nfs3d_exp.read_only ?
				      NFS3ERR_ROFS :
				      unlink_name_ok(arg->from.name);
		if (res->status == NFS3_OK)
			res->status = unlink_name_ok(arg->to.name);
	}
	if (tfd >= 0 && res->status == NFS3_OK) {
		o.dfd = ffd;
		o.dfd2 = tfd;
		res->status = nfs3d_errno(nfs3d_as_caller(rq, op_rename, &o));
	}
	nfs3d_wcc(&fsb, ffd, &ok->fromdir_wcc);
	if (tfd >= 0)
		nfs3d_wcc(&tsb, tfd, &ok->todir_wcc);
	close_fd(tfd);
	close(ffd);
	return TRUE;
}

static int op_link(void *arg)
{
	const struct fs_op *o = arg;

	return linkat(AT_FDCWD, o->name2, o->dfd, o->name, AT_SYMLINK_FOLLOW) ?
		       errno :
		       0;
}

bool_t nfsproc3_link_3_svc(LINK3args *arg, LINK3res *res, struct svc_req *rq)
{
	LINK3resok *ok = &res->LINK3res_u.resok;
	struct fs_op o = { .name = arg->link.name };
	struct stat sb, dsb;
	char path[32];
	int fd, dfd;

	memset(res, 0, sizeof(*res));
	fd = nfs3d_fh_open(&arg->file, O_PATH, &sb, &res->status);
	if (fd < 0)
		return TRUE;
	dfd = make_start(&arg->link, &dsb, &res->status);
	if (dfd >= 0 && S_ISDIR(sb.st_mode))
		res->status = NFS3ERR_ISDIR;
	if (dfd >= 0 && res->status == NFS3_OK) {
		/* by its /proc path: linkat(AT_EMPTY_PATH) would need a
		 * capability the caller does not have */
		nfs3d_fd_path(fd, path);
		o.dfd = dfd;
		o.name2 = path;
		res->status = nfs3d_errno(nfs3d_as_caller(rq, op_link, &o));
	}
	nfs3d_post_attr_fd(fd, &ok->file_attributes);
	if (dfd >= 0)
		nfs3d_wcc(&dsb, dfd, &ok->linkdir_wcc);
	close_fd(dfd);
	close(fd);
	return TRUE;
}

/* ---- File system: FSSTAT, FSINFO, PATHCONF ------------------------------------ */

bool_t nfsproc3_fsstat_3_svc(FSSTAT3args *arg, FSSTAT3res *res,
			     struct svc_req *rq)
{
	FSSTAT3resok *ok = &res->FSSTAT3res_u.resok;
	struct statvfs vfs;
	struct stat sb;
	int fd;

	memset(res, 0, sizeof(*res));
	fd = nfs3d_fh_open(&arg->fsroot, O_PATH, &sb, &res->status);
	if (fd < 0)
		return TRUE;
	nfs3d_post_attr(&sb, &ok->obj_attributes);
	if (fstatvfs(fd, &vfs)) {
		res->status = nfs3d_errno(errno);
	} else {
		ok->tbytes = (size3)vfs.f_blocks * vfs.f_frsize;
		ok->fbytes = (size3)vfs.f_bfree * vfs.f_frsize;
		ok->abytes = (size3)vfs.f_bavail * vfs.f_frsize;
		ok->tfiles = vfs.f_files;
		ok->ffiles = vfs.f_ffree;
		ok->afiles = vfs.f_favail;
		ok->invarsec = 0;
	}
	close(fd);
	return TRUE;
}

bool_t nfsproc3_fsinfo_3_svc(FSINFO3args *arg, FSINFO3res *res,
			     struct svc_req *rq)
{
	FSINFO3resok *ok = &res->FSINFO3res_u.resok;
	struct stat sb;
	int fd;

	memset(res, 0, sizeof(*res));
	fd = nfs3d_fh_open(&arg->fsroot, O_PATH, &sb, &res->status);
	if (fd < 0)
		return TRUE;
	close(fd);
	nfs3d_post_attr(&sb, &ok->obj_attributes);
	ok->rtmax = NFS3D_MAX_IO;
	ok->rtpref = NFS3D_MAX_IO;
	ok->rtmult = 4096;
	ok->wtmax = NFS3D_MAX_IO;
	ok->wtpref = NFS3D_MAX_IO;
	ok->wtmult = 4096;
	ok->dtpref = 65536;
	ok->maxfilesize = (size3)INT64_MAX;
	ok->time_delta.seconds = 0;
	ok->time_delta.nseconds = 1;
	ok->properties = FSF3_LINK | FSF3_SYMLINK | FSF3_HOMOGENEOUS |
			 FSF3_CANSETTIME;
	return TRUE;
}

bool_t nfsproc3_pathconf_3_svc(PATHCONF3args *arg, PATHCONF3res *res,
			       struct svc_req *rq)
{
	PATHCONF3resok *ok = &res->PATHCONF3res_u.resok;
	struct stat sb;
	char path[32];
	long v;
	int fd;

	memset(res, 0, sizeof(*res));
	fd = nfs3d_fh_open(&arg->object, O_PATH, &sb, &res->status);
	if (fd < 0)
		return TRUE;
	nfs3d_fd_path(fd, path);
	nfs3d_post_attr(&sb, &ok->obj_attributes);
	v = pathconf(path, _PC_LINK_MAX);
	ok->linkmax = v > 0 && v < UINT32_MAX ? (nfs3_uint32)v : UINT32_MAX;
	v = pathconf(path, _PC_NAME_MAX);
	ok->name_max = v > 0 && v <= NAME_MAX ? (nfs3_uint32)v : NAME_MAX;
	ok->no_trunc = TRUE;
	ok->chown_restricted = TRUE;
	ok->case_insensitive = FALSE;
	ok->case_preserving = TRUE;
	close(fd);
	return TRUE;
}

int nfs_program_3_freeresult(SVCXPRT *x, xdrproc_t proc, caddr_t res)
{
	xdr_free(proc, res);
	return 1;
}
