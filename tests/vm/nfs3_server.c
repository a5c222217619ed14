/*
 * nfs3_server.c - a tiny in-memory NFSv3 server (the RFC 1813 excerpt
 * tests/unit/ulb/nfs3.x, rpcgen -M) over RPC-over-RDMA, for the VM test of
 * the built-in NFSv3 binding (t_nfs3.c).  Nothing about RDMA here:
 * the library moves WRITE data and READ data by direct data placement
 * because its built-in table (RFC 8267) says so; the test runs both ends
 * with RPCRDMA_ULB_CONF=/dev/null, so no file adds to it.
 *
 * It owns: NULL; WRITE, which creates the file a handle names on first
 * use (any non-empty handle, at most NFS3_MAX_FILES of them) and writes
 * the data at the offset (FILE_SYNC); READ of what was written, with eof;
 * READ of an unknown handle answers NFS3ERR_NOENT; READLINK and SYMLINK
 * answer NFS3ERR_NOTSUPP.  Every answer has RFC 1813 shape.
 *
 * usage: nfs3_server [-4|-6] [-a ADDR] [-p PORT] [-c CREDITS]
 * (prints "listening on ADDR port N"; SIGTERM: clean exit 0, ddp_serve.h)
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/rpc.h>

#include "nfs3.h"
#include "tests/vm/ddp_serve.h"
#include "tests/vm/nfs_store.h"

#define NFS3_MAX_FILES 32 /* of NS_MAX_SIZE octets each */

/* The dispatch function of nfs3_svc.c (rpcgen declares it nowhere). */
void nfs_program_3(struct svc_req *rq, SVCXPRT *x);

struct file {
	char fh[NFS3_FHSIZE];
	u_int fhlen; /* 0: slot free */
	struct ns_data d;
};

/* One thread (svc_run's) only: no lock. */
static struct file files[NFS3_MAX_FILES];

static struct file *lookup(const nfs_fh3 *fh, bool create)
{
	u_int len = fh->data.data_len;
	unsigned int i;

	if (!len || len > NFS3_FHSIZE)
		return NULL;
	for (i = 0; i < NFS3_MAX_FILES; i++)
		if (files[i].fhlen == len &&
		    !memcmp(files[i].fh, fh->data.data_val, len))
			return &files[i];
	if (!create)
		return NULL;
	for (i = 0; i < NFS3_MAX_FILES; i++) {
		if (!files[i].fhlen) {
			memcpy(files[i].fh, fh->data.data_val, len);
			files[i].fhlen = len;
			return &files[i];
		}
	}
	return NULL;
}

static void attrs(const struct file *f, fattr3 *a)
{
	memset(a, 0, sizeof(*a));
	a->type = NF3REG;
	a->mode = 0644;
	a->nlink = 1;
	a->size = f->d.size;
	a->used = f->d.size;
	a->fileid = (fileid3)(f - files) + 1;
}

static void post_attrs(const struct file *f, post_op_attr *p)
{
	memset(p, 0, sizeof(*p));
	if (!f)
		return;
	p->attributes_follow = TRUE;
	attrs(f, &p->post_op_attr_u.attributes);
}

/* ---- Procedures ----------------------------------------------------------- */

bool_t nfsproc3_null_3_svc(void *arg, void *res, struct svc_req *rq)
{
	return TRUE;
}

bool_t nfsproc3_read_3_svc(READ3args *arg, READ3res *res, struct svc_req *rq)
{
	READ3resok *ok = &res->READ3res_u.resok;
	struct file *f = lookup(&arg->file, false);
	uint32_t n;
	bool eof;

	memset(res, 0, sizeof(*res));
	if (!f) {
		res->status = NFS3ERR_NOENT;
		return TRUE;
	}
	ok->data.data_val = ns_read(&f->d, arg->offset, arg->count, &n, &eof);
	if (!ok->data.data_val) {
		res->status = NFS3ERR_SERVERFAULT;
		return TRUE;
	}
	ok->data.data_len = n;
	ok->count = n;
	ok->eof = eof;
	post_attrs(f, &ok->file_attributes);
	res->status = NFS3_OK;
	return TRUE;
}

bool_t nfsproc3_write_3_svc(WRITE3args *arg, WRITE3res *res, struct svc_req *rq)
{
	static const char verf[NFS3_WRITEVERFSIZE] = "ddp-nfs3";
	WRITE3resok *ok = &res->WRITE3res_u.resok;
	struct file *f;

	memset(res, 0, sizeof(*res));
	if (arg->count != arg->data.data_len) {
		res->status = NFS3ERR_INVAL;
		return TRUE;
	}
	f = lookup(&arg->file, true);
	if (!f) {
		res->status = NFS3ERR_BADHANDLE;
		return TRUE;
	}
	if (!ns_write(&f->d, arg->offset, arg->data.data_val,
		      arg->data.data_len)) {
		res->status = NFS3ERR_FBIG;
		return TRUE;
	}
	post_attrs(f, &ok->file_wcc.after);
	ok->count = arg->count;
	ok->committed = FILE_SYNC;
	memcpy(ok->verf, verf, sizeof(verf));
	res->status = NFS3_OK;
	return TRUE;
}

bool_t nfsproc3_readlink_3_svc(READLINK3args *arg, READLINK3res *res,
			       struct svc_req *rq)
{
	memset(res, 0, sizeof(*res));
	res->status = NFS3ERR_NOTSUPP;
	return TRUE;
}

bool_t nfsproc3_symlink_3_svc(SYMLINK3args *arg, SYMLINK3res *res,
			      struct svc_req *rq)
{
	memset(res, 0, sizeof(*res));
	res->status = NFS3ERR_NOTSUPP;
	return TRUE;
}

int nfs_program_3_freeresult(SVCXPRT *x, xdrproc_t proc, caddr_t res)
{
	xdr_free(proc, res);
	return 1;
}

static void free_files(void)
{
	unsigned int i;

	for (i = 0; i < NFS3_MAX_FILES; i++)
		ns_free(&files[i].d);
}

int main(int argc, char **argv)
{
	int r = ddp_serve(argc, argv, "nfs3_server", NFS_PROGRAM, NFS_V3,
			  nfs_program_3);

	free_files();
	return r;
}
