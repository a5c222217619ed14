/*
 * nfs3d_mount.c - the MOUNT version 3 procedures of rpcrdma-nfs3d(8) (RFC
 * 1813 Appendix I), served over TCP: MNT gives the handle of the exported
 * directory, or of a directory below it on the same file system, with
 * AUTH_SYS as the one flavour; EXPORT lists the one export, open to every
 * host; DUMP lists nobody (mounts are not recorded), UMNT and UMNTALL do
 * nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nfs3d.h"

bool_t mountproc3_null_3_svc(void *arg, void *res, struct svc_req *rq)
{
	return TRUE;
}

/* Is real the exported directory or below it? */
static bool under_export(const char *real)
{
	size_t n = strlen(nfs3d_exp.path);

	if (strncmp(real, nfs3d_exp.path, n))
		return false;
	return real[n] == '\0' || real[n] == '/' || n == 1;
}

static mountstat3 mnt_handle(const char *path, nfs_fh3 *fh)
{
	char *real = path ? realpath(path, NULL) : NULL;
	mountstat3 st = MNT3_OK;
	struct stat sb;

	if (!real)
		return errno == ENOTDIR ? MNT3ERR_NOTDIR : MNT3ERR_NOENT;
	if (!under_export(real) || stat(real, &sb) ||
	    sb.st_dev != nfs3d_exp.dev)
		st = MNT3ERR_ACCES;
	else if (!S_ISDIR(sb.st_mode))
		st = MNT3ERR_NOTDIR;
	else if (nfs3d_fh_make(AT_FDCWD, real, fh) != NFS3_OK)
		st = MNT3ERR_SERVERFAULT;
	free(real);
	return st;
}

bool_t mountproc3_mnt_3_svc(dirpath *arg, mountres3 *res, struct svc_req *rq)
{
	mountres3_ok *ok = &res->mountres3_u.mountinfo;
	nfs_fh3 fh;

	memset(res, 0, sizeof(*res));
	res->fhs_status = mnt_handle(*arg, &fh);
	if (res->fhs_status != MNT3_OK)
		return TRUE;
	ok->fhandle.fhandle3_len = fh.data.data_len;
	ok->fhandle.fhandle3_val = fh.data.data_val;
	ok->auth_flavors.auth_flavors_val = malloc(sizeof(int));
	if (!ok->auth_flavors.auth_flavors_val) {
		free(fh.data.data_val);
		memset(res, 0, sizeof(*res));
		res->fhs_status = MNT3ERR_SERVERFAULT;
		return TRUE;
	}
	ok->auth_flavors.auth_flavors_val[0] = AUTH_SYS;
	ok->auth_flavors.auth_flavors_len = 1;
	return TRUE;
}

bool_t mountproc3_dump_3_svc(void *arg, mountlist *res, struct svc_req *rq)
{
	*res = NULL;
	return TRUE;
}

bool_t mountproc3_umnt_3_svc(dirpath *arg, void *res, struct svc_req *rq)
{
	return TRUE;
}

bool_t mountproc3_umntall_3_svc(void *arg, void *res, struct svc_req *rq)
{
	return TRUE;
}

bool_t mountproc3_export_3_svc(void *arg, exports *res, struct svc_req *rq)
{
	struct exportnode *e = calloc(1, sizeof(*e));

	/* without memory, no export: an empty list (FALSE: no reply) */
	*res = NULL;
	if (e && (e->ex_dir = strdup(nfs3d_exp.path)))
		*res = e;
	else
		free(e);
	return TRUE;
}

int mount_program_3_freeresult(SVCXPRT *x, xdrproc_t proc, caddr_t res)
{
	xdr_free(proc, res);
	return 1;
}
