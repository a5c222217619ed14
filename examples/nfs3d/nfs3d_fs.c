/*
 * nfs3d_fs.c - the exported directory as rpcrdma-nfs3d(8) sees it: file
 * handles, the caller's identity, attributes, and errno as nfsstat3.
 *
 * File handles are the kernel's own (name_to_handle_at(2)), wrapped:
 *
 *	octet 0	'R' (0x52), a handle of ours
 *	octet 1	1, the layout version
 *	octet 2	n, the length of the kernel handle
 *	octet 3	0
 *	4..7	the kernel handle type, big-endian
 *	8..	the kernel handle, n octets (at most 56: NFS3_FHSIZE is 64)
 *
 * The kernel handle names the inode and its generation, not a path or a
 * process, so a handle stays valid across a restart of the server (and,
 * on file systems whose handles say so, across a reboot) until the file
 * is removed: then open_by_handle_at(2) says ESTALE and the client gets
 * NFS3ERR_STALE.  A handle is opened relative to the exported
 * directory's file system, so, as with the Linux server's default
 * "no_subtree_check", a handle of any file on that file system is
 * honoured: export the root of a file system (a tmpfs, say) to confine
 * clients to it.  Both calls need CAP_DAC_READ_SEARCH: the server runs as
 * root.
 *
 * Identity: requests that change the namespace or attributes run with the
 * caller's AUTH_SYS uid, gid and groups as the file system identity of a
 * helper thread (setfsuid(2), setfsgid(2), the raw setgroups system call,
 * which unlike glibc's wrapper changes only the calling thread; see
 * nfs3d_as_caller for why not svc_run's thread), so the kernel checks
 * permissions and new files belong to the caller.  AUTH_NONE
 * is the anonymous user 65534.  READ and WRITE are checked here, with the
 * owner allowed whatever the mode says (what the Linux server does, so
 * that "cp" of a read-only file can write the copy it created).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "nfs3d.h"

#define FH_MAGIC      0x52u
#define FH_VERS	      1u
#define FH_HDR	      8u
#define FH_MAX_KERNEL (NFS3_FHSIZE - FH_HDR)

struct nfs3d_export nfs3d_exp = { .root_fd = -1 };

struct kernel_fh {
	struct file_handle h;
	unsigned char room[MAX_HANDLE_SZ];
};

/* ---- Errors ------------------------------------------------------------- */

nfsstat3 nfs3d_errno(int err)
{
	switch (err) {
	case 0:
		return NFS3_OK;
	case EPERM:
		return NFS3ERR_PERM;
	case ENOENT:
		return NFS3ERR_NOENT;
	case ENXIO:
		return NFS3ERR_NXIO;
	case EACCES:
		return NFS3ERR_ACCES;
	case EEXIST:
		return NFS3ERR_EXIST;
	case EXDEV:
		return NFS3ERR_XDEV;
	case ENODEV:
		return NFS3ERR_NODEV;
	case ENOTDIR:
		return NFS3ERR_NOTDIR;
	case EISDIR:
		return NFS3ERR_ISDIR;
	case EINVAL:
		return NFS3ERR_INVAL;
	case EFBIG:
		return NFS3ERR_FBIG;
	case ENOSPC:
		return NFS3ERR_NOSPC;
	case EROFS:
		return NFS3ERR_ROFS;
	case EMLINK:
		return NFS3ERR_MLINK;
	case ENAMETOOLONG:
		return NFS3ERR_NAMETOOLONG;
	case ENOTEMPTY:
		return NFS3ERR_NOTEMPTY;
	case EDQUOT:
		return NFS3ERR_DQUOT;
	case ESTALE:
		return NFS3ERR_STALE;
	case EOPNOTSUPP:
		return NFS3ERR_NOTSUPP;
	case ELOOP:
		return NFS3ERR_INVAL;
	case ENOMEM:
		return NFS3ERR_SERVERFAULT;
	default:
		return NFS3ERR_IO;
	}
}

/* ---- File handles ------------------------------------------------------- */

static nfsstat3 fh_wrap(const struct kernel_fh *k, nfs_fh3 *out)
{
	unsigned char *p;
	uint32_t type = (uint32_t)k->h.handle_type;

	memset(out, 0, sizeof(*out));
	if (k->h.handle_bytes == 0 || k->h.handle_bytes > FH_MAX_KERNEL) {
		fprintf(stderr,
			"rpcrdma-nfs3d: a file handle of %u octets "
			"does not fit in NFSv3's 64\n",
			k->h.handle_bytes);
		return NFS3ERR_SERVERFAULT;
	}
	p = malloc(FH_HDR + k->h.handle_bytes);
	if (!p)
		return NFS3ERR_SERVERFAULT;
	p[0] = FH_MAGIC;
	p[1] = FH_VERS;
	p[2] = (unsigned char)k->h.handle_bytes;
	p[3] = 0;
	p[4] = (unsigned char)(type >> 24);
	p[5] = (unsigned char)(type >> 16);
	p[6] = (unsigned char)(type >> 8);
	p[7] = (unsigned char)type;
	memcpy(p + FH_HDR, k->h.f_handle, k->h.handle_bytes);
	out->data.data_val = (char *)p;
	out->data.data_len = FH_HDR + k->h.handle_bytes;
	return NFS3_OK;
}

/* A handle of ours, checked octet by octet: it is peer data. */
static bool fh_unwrap(const nfs_fh3 *fh, struct kernel_fh *k)
{
	const unsigned char *p = (const unsigned char *)fh->data.data_val;
	u_int len = fh->data.data_len;

	if (!p || len <= FH_HDR || len > NFS3_FHSIZE || p[0] != FH_MAGIC ||
	    p[1] != FH_VERS || p[2] != len - FH_HDR || p[3] != 0)
		return false;
	k->h.handle_bytes = len - FH_HDR;
	k->h.handle_type = (int)((uint32_t)p[4] << 24 | (uint32_t)p[5] << 16 |
				 (uint32_t)p[6] << 8 | p[7]);
	memcpy(k->h.f_handle, p + FH_HDR, len - FH_HDR);
	return true;
}

static nfsstat3 fh_open_err(int err)
{
	static atomic_bool said; /* the workers open files too */

	switch (err) {
	case ESTALE:
	case ENOENT:
		return NFS3ERR_STALE;
	case EINVAL:
	case EBADF:
		return NFS3ERR_BADHANDLE;
	case EPERM:
		if (!atomic_exchange(&said, true))
			fprintf(stderr,
				"rpcrdma-nfs3d: open_by_handle_at: "
				"%s (run as root)\n",
				strerror(err));
		return NFS3ERR_SERVERFAULT;
	default:
		return nfs3d_errno(err);
	}
}

int nfs3d_fh_open(const nfs_fh3 *fh, int flags, struct stat *sb, nfsstat3 *st)
{
	struct kernel_fh k;
	int fd;

	if (!fh_unwrap(fh, &k)) {
		*st = NFS3ERR_BADHANDLE;
		return -1;
	}
	fd = open_by_handle_at(nfs3d_exp.root_fd, &k.h, flags | O_CLOEXEC);
	if (fd < 0) {
		*st = fh_open_err(errno);
		return -1;
	}
	if (sb && fstat(fd, sb)) {
		*st = nfs3d_errno(errno);
		close(fd);
		return -1;
	}
	*st = NFS3_OK;
	return fd;
}

static nfsstat3 fh_name(int dirfd, const char *name, int flags, nfs_fh3 *out)
{
	struct kernel_fh k;
	int mnt;

	memset(out, 0, sizeof(*out));
	k.h.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(dirfd, name, &k.h, &mnt, flags))
		return errno == EOVERFLOW ? NFS3ERR_SERVERFAULT :
					    nfs3d_errno(errno);
	return fh_wrap(&k, out);
}

nfsstat3 nfs3d_fh_make(int dirfd, const char *name, nfs_fh3 *out)
{
	return fh_name(dirfd, name, 0, out);
}

nfsstat3 nfs3d_fh_of_fd(int fd, nfs_fh3 *out)
{
	return fh_name(fd, "", AT_EMPTY_PATH, out);
}

bool nfs3d_is_root(const struct stat *sb)
{
	return sb->st_dev == nfs3d_exp.dev && sb->st_ino == nfs3d_exp.ino;
}

void nfs3d_fd_path(int fd, char buf[32])
{
	snprintf(buf, 32, "/proc/self/fd/%d", fd);
}

/* ---- The export --------------------------------------------------------- */

static void new_verifier(void)
{
	uint64_t v;

	if (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v))
		v = (uint64_t)time(NULL) << 20 ^ (uint64_t)getpid();
	memcpy(nfs3d_exp.verf, &v, sizeof(nfs3d_exp.verf));
}

bool nfs3d_export_open(const char *path, bool read_only)
{
	char *real = realpath(path, NULL);
	struct kernel_fh k;
	struct stat sb;
	nfs_fh3 fh;
	int fd;

	if (!real) {
		fprintf(stderr, "rpcrdma-nfs3d: %s: %s\n", path,
			strerror(errno));
		return false;
	}
	fd = open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb)) {
		fprintf(stderr, "rpcrdma-nfs3d: %s: %s\n", real,
			strerror(errno));
		goto fail;
	}
	nfs3d_exp.root_fd = fd;
	if (nfs3d_fh_of_fd(fd, &fh) != NFS3_OK) {
		fprintf(stderr,
			"rpcrdma-nfs3d: %s: no file handles on this "
			"file system (name_to_handle_at: %s)\n",
			real, strerror(errno));
		goto fail;
	}
	memcpy(nfs3d_exp.root_fh, fh.data.data_val, fh.data.data_len);
	nfs3d_exp.root_fh_len = fh.data.data_len;
	free(fh.data.data_val);
	/* Handles must open: this needs CAP_DAC_READ_SEARCH. */
	if (!fh_unwrap(&(nfs_fh3){ { nfs3d_exp.root_fh_len,
				     nfs3d_exp.root_fh } },
		       &k) ||
	    (fd = open_by_handle_at(nfs3d_exp.root_fd, &k.h,
				    O_PATH | O_CLOEXEC)) < 0) {
		fprintf(stderr,
			"rpcrdma-nfs3d: open_by_handle_at: %s (the "
			"server must run as root)\n",
			strerror(errno));
		goto fail;
	}
	close(fd);
	nfs3d_exp.path = real;
	nfs3d_exp.dev = sb.st_dev;
	nfs3d_exp.ino = sb.st_ino;
	nfs3d_exp.fsid = (uint64_t)major(sb.st_dev) << 32 | minor(sb.st_dev);
	nfs3d_exp.read_only = read_only;
	new_verifier();
	return true;
fail:
	if (nfs3d_exp.root_fd >= 0)
		close(nfs3d_exp.root_fd);
	nfs3d_exp.root_fd = -1;
	free(real);
	return false;
}

/* ---- Identity ----------------------------------------------------------- */

void nfs3d_cred_get(const struct svc_req *rq, struct nfs3d_cred *c)
{
	const struct authunix_parms *p = (const void *)rq->rq_clntcred;
	unsigned int i;

	memset(c, 0, sizeof(*c));
	c->uid = NFS3D_ANON_ID;
	c->gid = NFS3D_ANON_ID;
	if (rq->rq_cred.oa_flavor != AUTH_SYS || !p)
		return;
	c->uid = p->aup_uid;
	c->gid = p->aup_gid;
	for (i = 0; i < p->aup_len && i < NFS3D_MAX_GROUPS; i++)
		c->groups[i] = p->aup_gids[i];
	c->ngroups = i;
}

static void cred_enter(const struct nfs3d_cred *c)
{
	syscall(SYS_setgroups, (size_t)c->ngroups, c->groups);
	setfsgid(c->gid);
	setfsuid(c->uid);
}

static void cred_leave(void)
{
	setfsuid(geteuid());
	setfsgid(getegid());
	syscall(SYS_setgroups, (size_t)0, NULL);
}

/*
 * The identity thread.  A thread whose credentials changed may no longer
 * write to the verbs and rdma_cm descriptors it opened (the kernel's
 * ib_safe_file_access() compares the credentials the file was opened
 * with, and setfsuid makes new ones even to go back), so svc_run's thread
 * never changes its own: it hands the operation to this thread, which
 * takes the caller's identity, runs it, takes its own back, and waits for
 * the next.  Only svc_run's thread calls it (the workers of nfs3d_pool.c
 * serve no procedure that does), so one thread and one slot are enough.
 */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	bool started;
	bool pending; /* an operation waits for the thread */
	const struct nfs3d_cred *cred;
	nfs3d_fs_fn fn;
	void *arg;
	int result;
} ident = { .lock = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static void *ident_main(void *unused)
{
	pthread_mutex_lock(&ident.lock);
	for (;;) {
		while (!ident.pending)
			pthread_cond_wait(&ident.cv, &ident.lock);
		cred_enter(ident.cred);
		ident.result = ident.fn(ident.arg);
		cred_leave();
		ident.pending = false;
		pthread_cond_broadcast(&ident.cv);
	}
	return NULL;
}

static bool ident_start(void)
{
	sigset_t all, old;
	pthread_t tid;
	int err;

	/* signals stay with the main thread's signalfd */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&tid, NULL, ident_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		fprintf(stderr, "rpcrdma-nfs3d: cannot start a thread: %s\n",
			strerror(err));
		return false;
	}
	pthread_detach(tid);
	ident.started = true;
	return true;
}

int nfs3d_as_caller(const struct svc_req *rq, nfs3d_fs_fn fn, void *arg)
{
	struct nfs3d_cred c;
	int r;

	nfs3d_cred_get(rq, &c);
	/* the server's own identity (root, usually): nothing to change */
	if (c.uid == geteuid() && c.gid == getegid())
		return fn(arg);
	if (!ident.started && !ident_start())
		return EACCES;
	pthread_mutex_lock(&ident.lock);
	ident.cred = &c;
	ident.fn = fn;
	ident.arg = arg;
	ident.pending = true;
	pthread_cond_broadcast(&ident.cv);
	while (ident.pending)
		pthread_cond_wait(&ident.cv, &ident.lock);
	r = ident.result;
	pthread_mutex_unlock(&ident.lock);
	return r;
}

static bool in_group(const struct nfs3d_cred *c, gid_t gid)
{
	unsigned int i;

	if (c->gid == gid)
		return true;
	for (i = 0; i < c->ngroups; i++)
		if (c->groups[i] == gid)
			return true;
	return false;
}

uint32_t nfs3d_access(const struct nfs3d_cred *c, const struct stat *sb,
		      uint32_t want)
{
	bool dir = S_ISDIR(sb->st_mode);
	unsigned int bits;
	uint32_t r = 0;

	if (c->uid == 0) {
		bits = 6 | ((sb->st_mode & 0111) || dir ? 1 : 0);
	} else if (c->uid == sb->st_uid) {
		bits = (sb->st_mode >> 6) & 7;
	} else if (in_group(c, sb->st_gid)) {
		bits = (sb->st_mode >> 3) & 7;
	} else {
		bits = sb->st_mode & 7;
	}
	if (bits & 4)
		r |= ACCESS3_READ;
	if ((bits & 2) && !nfs3d_exp.read_only)
		r |= ACCESS3_MODIFY | ACCESS3_EXTEND |
		     (dir ? ACCESS3_DELETE : 0);
	if (bits & 1)
		r |= dir ? ACCESS3_LOOKUP : ACCESS3_EXECUTE;
	return r & want;
}

/* ---- Attributes --------------------------------------------------------- */

static ftype3 ftype(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFDIR:
		return NF3DIR;
	case S_IFBLK:
		return NF3BLK;
	case S_IFCHR:
		return NF3CHR;
	case S_IFLNK:
		return NF3LNK;
	case S_IFSOCK:
		return NF3SOCK;
	case S_IFIFO:
		return NF3FIFO;
	default:
		return NF3REG;
	}
}

static void ntime(const struct timespec *ts, nfstime3 *t)
{
	t->seconds = (nfs3_uint32)ts->tv_sec;
	t->nseconds = (nfs3_uint32)ts->tv_nsec;
}

void nfs3d_fattr(const struct stat *sb, fattr3 *a)
{
	memset(a, 0, sizeof(*a));
	a->type = ftype(sb->st_mode);
	a->mode = sb->st_mode & 07777;
	a->nlink = (nfs3_uint32)sb->st_nlink;
	a->uid = sb->st_uid;
	a->gid = sb->st_gid;
	a->size = (size3)sb->st_size;
	a->used = (size3)sb->st_blocks * 512;
	a->rdev.specdata1 = major(sb->st_rdev);
	a->rdev.specdata2 = minor(sb->st_rdev);
	a->fsid = nfs3d_exp.fsid;
	a->fileid = sb->st_ino;
	ntime(&sb->st_atim, &a->atime);
	ntime(&sb->st_mtim, &a->mtime);
	ntime(&sb->st_ctim, &a->ctime);
}

void nfs3d_post_attr(const struct stat *sb, post_op_attr *p)
{
	memset(p, 0, sizeof(*p));
	if (!sb)
		return;
	p->attributes_follow = TRUE;
	nfs3d_fattr(sb, &p->post_op_attr_u.attributes);
}

void nfs3d_post_attr_fd(int fd, post_op_attr *p)
{
	struct stat sb;

	nfs3d_post_attr(fd >= 0 && !fstat(fd, &sb) ? &sb : NULL, p);
}

void nfs3d_pre_attr(const struct stat *sb, pre_op_attr *p)
{
	wcc_attr *w = &p->pre_op_attr_u.attributes;

	memset(p, 0, sizeof(*p));
	if (!sb)
		return;
	p->attributes_follow = TRUE;
	w->size = (size3)sb->st_size;
	ntime(&sb->st_mtim, &w->mtime);
	ntime(&sb->st_ctim, &w->ctime);
}

void nfs3d_wcc(const struct stat *pre, int fd, wcc_data *w)
{
	nfs3d_pre_attr(pre, &w->before);
	nfs3d_post_attr_fd(fd, &w->after);
}

nfsstat3 nfs3d_name_ok(const char *name)
{
	size_t len = name ? strlen(name) : 0;

	if (!len)
		return NFS3ERR_INVAL;
	if (len > NAME_MAX)
		return NFS3ERR_NAMETOOLONG;
	if (strchr(name, '/'))
		return NFS3ERR_ACCES;
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return NFS3ERR_EXIST;
	return NFS3_OK;
}
