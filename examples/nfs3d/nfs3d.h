/*
 * nfs3d.h - rpcrdma-nfs3d(8), an NFS version 3 server on librpcrdma: what
 * its parts share.
 *
 *   nfs3d_main.c   options, the RDMA listeners, MOUNT over TCP, svc_run
 *   nfs3d_fs.c     the export: file handles (name_to_handle_at and
 *                  open_by_handle_at, so they survive a restart), the
 *                  caller's identity, attributes, errno to nfsstat3
 *   nfs3d_proc.c   the NFSv3 procedures but the directory reads
 *   nfs3d_dir.c    READDIR and READDIRPLUS
 *   nfs3d_mount.c  the MOUNT version 3 procedures
 *   nfs3d_pool.c   worker threads for READ, WRITE and COMMIT
 *
 * Every procedure runs on svc_run's thread but READ, WRITE and COMMIT,
 * which the workers serve (svc_rdma_detach); these share nothing but the
 * constant nfs3d_exp, and never change a thread's credentials.  The
 * others run as the caller through the one identity thread
 * (nfs3d_as_caller), one at a time.
 */
#ifndef NFS3D_H
#define NFS3D_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include <rpc/rpc.h>

#include "nfs3_prot.h"

/* Largest READ and WRITE (FSINFO rtmax, wtmax): the Linux client's most. */
#define NFS3D_MAX_IO (1u << 20)
/* Largest directory read we build, whatever the client asks. */
#define NFS3D_MAX_DIR (1u << 20)
/* Longest symbolic link target we read (Linux PATH_MAX). */
#define NFS3D_MAX_PATH 4096u
/* Identity of AUTH_NONE callers and of AUTH_SYS ones we cannot read. */
#define NFS3D_ANON_ID	 65534u
#define NFS3D_MAX_GROUPS 16

struct nfs3d_export {
	const char *path; /* canonical path of the exported directory */
	int root_fd;	  /* open on it: open_by_handle_at's mount fd
				 * (fdget() refuses an O_PATH descriptor) */
	dev_t dev;	  /* its file system ... */
	ino_t ino;	  /* ... and inode */
	uint64_t fsid;	  /* fattr3.fsid */
	char root_fh[NFS3_FHSIZE];
	u_int root_fh_len;
	writeverf3 verf; /* new at each start: unstable data is resent */
	bool read_only;
};

extern struct nfs3d_export nfs3d_exp;

/* The caller's identity: what AUTH_SYS says, or the anonymous one. */
struct nfs3d_cred {
	uid_t uid;
	gid_t gid;
	unsigned int ngroups;
	gid_t groups[NFS3D_MAX_GROUPS];
};

/* ---- nfs3d_fs.c ------------------------------------------------------- */

/* Open the exported directory and make its handle; false with a message. */
bool nfs3d_export_open(const char *path, bool read_only);

/* errno as an NFS status (NFS3ERR_IO for what has no better name). */
nfsstat3 nfs3d_errno(int err);

/*
 * The file a handle names, opened with flags (O_PATH at least) by handle:
 * a descriptor, or -1 with *st the status (BADHANDLE for a malformed
 * handle, STALE for a file that is gone).  With sb, its attributes too.
 */
int nfs3d_fh_open(const nfs_fh3 *fh, int flags, struct stat *sb, nfsstat3 *st);

/* The handle of name in directory dirfd (not followed) into out, its
 * octets malloc'd; NFS3_OK or the status. */
nfsstat3 nfs3d_fh_make(int dirfd, const char *name, nfs_fh3 *out);

/* The handle of the file fd is open on (O_PATH), as nfs3d_fh_make. */
nfsstat3 nfs3d_fh_of_fd(int fd, nfs_fh3 *out);

/* Is sb the exported directory itself? */
bool nfs3d_is_root(const struct stat *sb);

/* "/proc/self/fd/N" for fd, to reach an O_PATH file by path. */
void nfs3d_fd_path(int fd, char buf[32]);

void nfs3d_cred_get(const struct svc_req *rq, struct nfs3d_cred *c);

/* An operation on the file system: 0 or an errno. */
typedef int (*nfs3d_fs_fn)(void *arg);

/*
 * fn(arg) with the file system identity of rq's caller (fsuid, fsgid,
 * groups), so that the kernel checks its permissions and what it makes
 * belongs to it; what fn returns.  Handles are opened as the server,
 * before: open_by_handle_at needs CAP_DAC_READ_SEARCH.
 */
int nfs3d_as_caller(const struct svc_req *rq, nfs3d_fs_fn fn, void *arg);

/* ACCESS3_* bits of want that c has on a file of attributes sb. */
uint32_t nfs3d_access(const struct nfs3d_cred *c, const struct stat *sb,
		      uint32_t want);

void nfs3d_fattr(const struct stat *sb, fattr3 *a);
void nfs3d_post_attr(const struct stat *sb, post_op_attr *p);
/* post_op_attr of fd (O_PATH), or none if it cannot be read. */
void nfs3d_post_attr_fd(int fd, post_op_attr *p);
void nfs3d_pre_attr(const struct stat *sb, pre_op_attr *p);
/* A wcc_data: before from pre (NULL: none), after from fd. */
void nfs3d_wcc(const struct stat *pre, int fd, wcc_data *w);

/* A filename3 that may name an entry: not empty, no '/', not "." or "..",
 * at most NAME_MAX.  NFS3_OK or the status to answer. */
nfsstat3 nfs3d_name_ok(const char *name);

/* ---- nfs3d_pool.c ------------------------------------------------------- */

/* Start threads workers (0 or 1: none) with at most queue_max calls
 * waiting for them; false with a message. */
bool nfs3d_pool_start(unsigned int threads, unsigned int queue_max);

/* From the dispatch routine: true if the call was handed to a worker
 * (READ, WRITE, COMMIT on an RDMA connection, room in the queue), false
 * if the caller serves it. */
bool nfs3d_pool_submit(struct svc_req *rq, SVCXPRT *xprt);

/* Answer what is queued, join the workers. */
void nfs3d_pool_stop(void);

/* ---- nfs3d_main.c ------------------------------------------------------- */

/* The dispatch functions rpcgen wrote (nfs3_prot_svc.c). */
void nfs_program_3(struct svc_req *rq, SVCXPRT *x);
void mount_program_3(struct svc_req *rq, SVCXPRT *x);

/* -v: one line per call on standard error. */
extern int nfs3d_verbose;

#endif /* NFS3D_H */
