/*
 * nfs4_server.c - a tiny in-memory NFSv4 server (the RFC 7530/5661/7862
 * excerpt tests/unit/ulb/nfs4.x, rpcgen -M) over RPC-over-RDMA, for the VM
 * test of the built-in NFSv4 binding (t_nfs4.c).  Nothing about
 * RDMA here: the library moves WRITE data, CREATE link text, READ data and
 * READLINK text by direct data placement because its built-in COMPOUND
 * walker (RFC 8267 section 6) says so; the test runs both ends with
 * RPCRDMA_ULB_CONF=/dev/null, so no file adds to it.
 *
 * It owns COMPOUND (minor versions 0 to 2) with: SEQUENCE (first in 4.1+,
 * echoes session, sequence and slot), PUTROOTFH, PUTFH, GETFH, GETATTR
 * (TYPE, SIZE, FILEID), READ, WRITE (FILE_SYNC4), COMMIT, READLINK and
 * CREATE of an NF4LNK in the root directory (the new object becomes the
 * current filehandle).  Objects: the root directory "nfs4-root", empty
 * regular files "nfs4-file-0" .. "nfs4-file-15", the symbolic link
 * "nfs4-symlink" (NFS4_PRESET_LINK), and the links CREATE makes.  READ and
 * WRITE take only the anonymous and the all-ones stateid, anything else is
 * NFS4ERR_BAD_STATEID; on a directory they are NFS4ERR_ISDIR, on a link
 * NFS4ERR_SYMLINK.  As RFC 7530 section 15.2 requires, the COMPOUND stops
 * at the first operation that fails: the result array ends with it and the
 * COMPOUND's status is its status.  Every other operation of the excerpt
 * answers NFS4ERR_NOTSUPP.  Failures are logged on stderr.
 *
 * usage: nfs4_server [-4|-6] [-a ADDR] [-p PORT] [-c CREDITS]
 * (prints "listening on ADDR port N"; SIGTERM: clean exit 0, ddp_serve.h)
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/rpc.h>

#include "nfs4.h"
#include "tests/vm/ddp_serve.h"
#include "tests/vm/nfs_store.h"

#define NFS4_MAX_OBJS	 64 /* of NS_MAX_SIZE octets each */
#define NFS4_NAME_MAX	 64 /* octets of a name CREATE takes */
#define NFS4_PRE_FILES	 16
#define NFS4_PRESET_LINK "nfs4/preset/target"

/* GETATTR: the attributes this server has (bitmap word 0). */
#define FATTR4_TYPE   1
#define FATTR4_SIZE   4
#define FATTR4_FILEID 20
#define ATTR_BIT(a)   (1u << (a))
#define ATTRS_SUPPORTED                                  \
	(ATTR_BIT(FATTR4_TYPE) | ATTR_BIT(FATTR4_SIZE) | \
	 ATTR_BIT(FATTR4_FILEID))
#define ATTRS_MAX 20 /* octets of all three encoded */

/* The dispatch function of nfs4_svc.c (rpcgen declares it nowhere). */
void nfs4_program_4(struct svc_req *rq, SVCXPRT *x);

struct obj {
	char fh[NFS4_FHSIZE];
	u_int fhlen; /* 0: slot free */
	nfs_ftype4 type;
	char name[NFS4_NAME_MAX + 1]; /* in the root; "" for the root */
	struct ns_data d;	      /* file contents or link text */
};

/* One thread (svc_run's) only: no lock.  objs[0] is the root. */
static struct obj objs[NFS4_MAX_OBJS];
static uint64_t root_change = 1;
static const char write_verf[NFS4_VERIFIER_SIZE] = "nfs4-vf1";

/* What one COMPOUND has established so far. */
struct cstate {
	struct obj *cur; /* the current filehandle */
	uint32_t minor;
	u_int index; /* of the operation running */
};

/* ---- Objects --------------------------------------------------------------- */

static struct obj *obj_new(const char *fh, nfs_ftype4 type, const char *name)
{
	unsigned int i;

	for (i = 0; i < NFS4_MAX_OBJS; i++) {
		if (objs[i].fhlen)
			continue;
		snprintf(objs[i].fh, sizeof(objs[i].fh), "%s", fh);
		objs[i].fhlen = (u_int)strlen(objs[i].fh);
		objs[i].type = type;
		snprintf(objs[i].name, sizeof(objs[i].name), "%s", name);
		return &objs[i];
	}
	return NULL;
}

static struct obj *obj_by_fh(const nfs_fh4 *fh)
{
	unsigned int i;

	for (i = 0; i < NFS4_MAX_OBJS; i++)
		if (objs[i].fhlen && objs[i].fhlen == fh->nfs_fh4_len &&
		    !memcmp(objs[i].fh, fh->nfs_fh4_val, fh->nfs_fh4_len))
			return &objs[i];
	return NULL;
}

static bool name_taken(const char *name)
{
	unsigned int i;

	for (i = 1; i < NFS4_MAX_OBJS; i++)
		if (objs[i].fhlen && !strcmp(objs[i].name, name))
			return true;
	return false;
}

static bool objs_init(void)
{
	struct obj *l;
	char fh[32], name[32];
	unsigned int i;

	if (!obj_new("nfs4-root", NF4DIR, ""))
		return false;
	for (i = 0; i < NFS4_PRE_FILES; i++) {
		snprintf(fh, sizeof(fh), "nfs4-file-%u", i);
		snprintf(name, sizeof(name), "file-%u", i);
		if (!obj_new(fh, NF4REG, name))
			return false;
	}
	l = obj_new("nfs4-symlink", NF4LNK, "symlink");
	return l &&
	       ns_write(&l->d, 0, NFS4_PRESET_LINK, strlen(NFS4_PRESET_LINK));
}

static void objs_free(void)
{
	unsigned int i;

	for (i = 0; i < NFS4_MAX_OBJS; i++)
		ns_free(&objs[i].d);
}

/* ---- Checks shared by READ, WRITE, COMMIT ------------------------------------ */

static bool stateid_ok(const stateid4 *s)
{
	static const char zero[NFS4_OTHER_SIZE], ones[NFS4_OTHER_SIZE] = {
		-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	};

	if (s->seqid == 0 && !memcmp(s->other, zero, sizeof(zero)))
		return true; /* anonymous */
	return s->seqid == UINT32_MAX &&
	       !memcmp(s->other, ones, sizeof(ones)); /* READ bypass */
}

/* The current filehandle as a regular file, with stateid s (NULL: none). */
static nfsstat4 file_check(const struct obj *o, const stateid4 *s)
{
	if (!o)
		return NFS4ERR_NOFILEHANDLE;
	if (o->type == NF4DIR)
		return NFS4ERR_ISDIR;
	if (o->type == NF4LNK)
		return NFS4ERR_SYMLINK;
	if (o->type != NF4REG)
		return NFS4ERR_WRONG_TYPE;
	if (s && !stateid_ok(s))
		return NFS4ERR_BAD_STATEID;
	return NFS4_OK;
}

/* ---- Operations: each sets its result's status and returns it ---------------- */

static nfsstat4 op_sequence(struct cstate *cs, const SEQUENCE4args *a,
			    SEQUENCE4res *r)
{
	SEQUENCE4resok *ok = &r->SEQUENCE4res_u.sr_resok4;

	if (cs->minor == 0)
		return r->sr_status = NFS4ERR_NOTSUPP;
	if (cs->index != 0)
		return r->sr_status = NFS4ERR_SEQUENCE_POS;
	memcpy(ok->sr_sessionid, a->sa_sessionid, sizeof(ok->sr_sessionid));
	ok->sr_sequenceid = a->sa_sequenceid;
	ok->sr_slotid = a->sa_slotid;
	ok->sr_highest_slotid = a->sa_highest_slotid;
	ok->sr_target_highest_slotid = a->sa_highest_slotid;
	ok->sr_status_flags = 0;
	return r->sr_status = NFS4_OK;
}

static nfsstat4 op_putrootfh(struct cstate *cs, PUTROOTFH4res *r)
{
	cs->cur = &objs[0];
	return r->status = NFS4_OK;
}

static nfsstat4 op_putfh(struct cstate *cs, const PUTFH4args *a, PUTFH4res *r)
{
	struct obj *o = obj_by_fh(&a->object);

	if (!o)
		return r->status = NFS4ERR_BADHANDLE;
	cs->cur = o;
	return r->status = NFS4_OK;
}

static nfsstat4 op_getfh(struct cstate *cs, GETFH4res *r)
{
	nfs_fh4 *fh = &r->GETFH4res_u.resok4.object;

	if (!cs->cur)
		return r->status = NFS4ERR_NOFILEHANDLE;
	fh->nfs_fh4_val = ns_dup(cs->cur->fh, cs->cur->fhlen);
	if (!fh->nfs_fh4_val)
		return r->status = NFS4ERR_SERVERFAULT;
	fh->nfs_fh4_len = cs->cur->fhlen;
	return r->status = NFS4_OK;
}

/* fattr4 of o: the attributes of want, in bit order (RFC 7530 5.8). */
static bool encode_attrs(const struct obj *o, uint32_t want, fattr4 *f)
{
	nfs_ftype4 type = o->type;
	nfs4_uint64 size = o->d.size, fileid = (nfs4_uint64)(o - objs) + 1;
	bool ok = true;
	XDR x;

	f->attrmask.bitmap4_val = malloc(sizeof(nfs4_uint32));
	f->attr_vals.attrlist4_val = malloc(ATTRS_MAX);
	if (!f->attrmask.bitmap4_val || !f->attr_vals.attrlist4_val)
		return false; /* xdr_free takes what was allocated */
	f->attrmask.bitmap4_len = 1;
	f->attrmask.bitmap4_val[0] = want;
	xdrmem_create(&x, f->attr_vals.attrlist4_val, ATTRS_MAX, XDR_ENCODE);
	if (want & ATTR_BIT(FATTR4_TYPE))
		ok = ok && xdr_nfs_ftype4(&x, &type);
	if (want & ATTR_BIT(FATTR4_SIZE))
		ok = ok && xdr_nfs4_uint64(&x, &size);
	if (want & ATTR_BIT(FATTR4_FILEID))
		ok = ok && xdr_nfs4_uint64(&x, &fileid);
	f->attr_vals.attrlist4_len = xdr_getpos(&x);
	xdr_destroy(&x);
	return ok;
}

static nfsstat4 op_getattr(struct cstate *cs, const GETATTR4args *a,
			   GETATTR4res *r)
{
	const bitmap4 *req = &a->attr_request;
	uint32_t want = req->bitmap4_len ? req->bitmap4_val[0] : 0;

	if (!cs->cur)
		return r->status = NFS4ERR_NOFILEHANDLE;
	if (!encode_attrs(cs->cur, want & ATTRS_SUPPORTED,
			  &r->GETATTR4res_u.resok4.obj_attributes))
		return r->status = NFS4ERR_SERVERFAULT;
	return r->status = NFS4_OK;
}

static nfsstat4 op_read(struct cstate *cs, const READ4args *a, READ4res *r)
{
	READ4resok *ok = &r->READ4res_u.resok4;
	const struct obj *f = cs->cur;
	uint32_t n;
	bool eof;

	r->status = file_check(f, &a->stateid);
	if (r->status != NFS4_OK)
		return r->status;
	ok->data.data_val = ns_read(&f->d, a->offset, a->count, &n, &eof);
	if (!ok->data.data_val)
		return r->status = NFS4ERR_SERVERFAULT;
	ok->data.data_len = n;
	ok->eof = eof;
	return r->status = NFS4_OK;
}

static nfsstat4 op_write(struct cstate *cs, const WRITE4args *a, WRITE4res *r)
{
	WRITE4resok *ok = &r->WRITE4res_u.resok4;
	struct obj *f = cs->cur;

	r->status = file_check(f, &a->stateid);
	if (r->status != NFS4_OK)
		return r->status;
	if (!ns_write(&f->d, a->offset, a->data.data_val, a->data.data_len))
		return r->status = NFS4ERR_FBIG;
	ok->count = a->data.data_len;
	ok->committed = FILE_SYNC4;
	memcpy(ok->writeverf, write_verf, sizeof(write_verf));
	return r->status = NFS4_OK;
}

static nfsstat4 op_commit(struct cstate *cs, COMMIT4res *r)
{
	r->status = file_check(cs->cur, NULL);
	if (r->status == NFS4_OK)
		memcpy(r->COMMIT4res_u.resok4.writeverf, write_verf,
		       sizeof(write_verf));
	return r->status;
}

static nfsstat4 op_readlink(struct cstate *cs, READLINK4res *r)
{
	linktext4 *l = &r->READLINK4res_u.resok4.link;
	const struct obj *o = cs->cur;

	if (!o)
		return r->status = NFS4ERR_NOFILEHANDLE;
	if (o->type != NF4LNK)
		return r->status = NFS4ERR_INVAL;
	l->utf8string_val = ns_dup(o->d.data, o->d.size);
	if (!l->utf8string_val)
		return r->status = NFS4ERR_SERVERFAULT;
	l->utf8string_len = (u_int)o->d.size;
	return r->status = NFS4_OK;
}

/* May CREATE a of the name (NUL-terminated copy) run in dir? */
static nfsstat4 create_check(const struct obj *dir, const CREATE4args *a,
			     char *name)
{
	const component4 *n = &a->objname;

	if (!dir)
		return NFS4ERR_NOFILEHANDLE;
	if (dir->type != NF4DIR)
		return NFS4ERR_NOTDIR;
	if (a->objtype.type != NF4LNK)
		return NFS4ERR_BADTYPE;
	if (!n->utf8string_len ||
	    memchr(n->utf8string_val, 0, n->utf8string_len))
		return NFS4ERR_INVAL;
	if (n->utf8string_len > NFS4_NAME_MAX)
		return NFS4ERR_NAMETOOLONG;
	memcpy(name, n->utf8string_val, n->utf8string_len);
	name[n->utf8string_len] = 0;
	if (name_taken(name))
		return NFS4ERR_EXIST;
	if (a->objtype.createtype4_u.linkdata.utf8string_len > NS_MAX_SIZE)
		return NFS4ERR_NAMETOOLONG;
	return NFS4_OK;
}

static nfsstat4 op_create(struct cstate *cs, const CREATE4args *a,
			  CREATE4res *r)
{
	const linktext4 *text = &a->objtype.createtype4_u.linkdata;
	CREATE4resok *ok = &r->CREATE4res_u.resok4;
	char name[NFS4_NAME_MAX + 1], fh[32];
	struct obj *l;

	r->status = create_check(cs->cur, a, name);
	if (r->status != NFS4_OK)
		return r->status;
	snprintf(fh, sizeof(fh), "nfs4-obj-%llu",
		 (unsigned long long)root_change);
	l = obj_new(fh, NF4LNK, name);
	if (!l)
		return r->status = NFS4ERR_NOSPC;
	if (!ns_write(&l->d, 0, text->utf8string_val, text->utf8string_len)) {
		l->fhlen = 0;
		return r->status = NFS4ERR_NOSPC;
	}
	ok->cinfo.atomic = TRUE;
	ok->cinfo.before = root_change++;
	ok->cinfo.after = root_change;
	cs->cur = l;
	return r->status = NFS4_OK;
}

/* Any other operation of the excerpt: every result starts with status. */
static nfsstat4 op_notsupp(nfs_resop4 *r)
{
	return r->nfs_resop4_u.opillegal.status = NFS4ERR_NOTSUPP;
}

/* ---- COMPOUND ------------------------------------------------------------------- */

/* Session rules of 4.1+: SEQUENCE first, and only there (RFC 5661 2.10.6). */
static bool out_of_session(const struct cstate *cs, nfs_opnum4 op,
			   nfs_resop4 *r)
{
	if (cs->minor == 0 || cs->index != 0 || op == OP_SEQUENCE)
		return false;
	r->nfs_resop4_u.opillegal.status = NFS4ERR_OP_NOT_IN_SESSION;
	return true;
}

static nfsstat4 run_op(struct cstate *cs, nfs_argop4 *a, nfs_resop4 *r)
{
	r->resop = a->argop;
	if (out_of_session(cs, a->argop, r))
		return NFS4ERR_OP_NOT_IN_SESSION;
	switch (a->argop) {
	case OP_SEQUENCE:
		return op_sequence(cs, &a->nfs_argop4_u.opsequence,
				   &r->nfs_resop4_u.opsequence);
	case OP_PUTROOTFH:
		return op_putrootfh(cs, &r->nfs_resop4_u.opputrootfh);
	case OP_PUTFH:
		return op_putfh(cs, &a->nfs_argop4_u.opputfh,
				&r->nfs_resop4_u.opputfh);
	case OP_GETFH:
		return op_getfh(cs, &r->nfs_resop4_u.opgetfh);
	case OP_GETATTR:
		return op_getattr(cs, &a->nfs_argop4_u.opgetattr,
				  &r->nfs_resop4_u.opgetattr);
	case OP_READ:
		return op_read(cs, &a->nfs_argop4_u.opread,
			       &r->nfs_resop4_u.opread);
	case OP_WRITE:
		return op_write(cs, &a->nfs_argop4_u.opwrite,
				&r->nfs_resop4_u.opwrite);
	case OP_COMMIT:
		return op_commit(cs, &r->nfs_resop4_u.opcommit);
	case OP_READLINK:
		return op_readlink(cs, &r->nfs_resop4_u.opreadlink);
	case OP_CREATE:
		return op_create(cs, &a->nfs_argop4_u.opcreate,
				 &r->nfs_resop4_u.opcreate);
	default:
		return op_notsupp(r);
	}
}

static void log_failure(const COMPOUND4args *arg, u_int i, nfsstat4 st)
{
	fprintf(stderr,
		"nfs4_server: COMPOUND of %u: op %u (opcode %d) "
		"failed with %d, result array ends there\n",
		arg->argarray.argarray_len, i,
		arg->argarray.argarray_val[i].argop, st);
}

bool_t nfsproc4_null_4_svc(void *arg, void *res, struct svc_req *rq)
{
	return TRUE;
}

bool_t nfsproc4_compound_4_svc(COMPOUND4args *arg, COMPOUND4res *res,
			       struct svc_req *rq)
{
	u_int n = arg->argarray.argarray_len;
	struct cstate cs = { NULL, arg->minorversion, 0 };
	nfsstat4 st = NFS4_OK;

	memset(res, 0, sizeof(*res));
	res->tag.utf8string_val =
		ns_dup(arg->tag.utf8string_val, arg->tag.utf8string_len);
	res->resarray.resarray_val = calloc(n ? n : 1, sizeof(nfs_resop4));
	if (!res->tag.utf8string_val || !res->resarray.resarray_val)
		return FALSE; /* SYSTEM_ERR; freeresult frees */
	res->tag.utf8string_len = arg->tag.utf8string_len;
	if (arg->minorversion > 2) {
		res->status = NFS4ERR_MINOR_VERS_MISMATCH;
		return TRUE;
	}
	for (cs.index = 0; cs.index < n && st == NFS4_OK; cs.index++) {
		st = run_op(&cs, &arg->argarray.argarray_val[cs.index],
			    &res->resarray.resarray_val[cs.index]);
		res->resarray.resarray_len = cs.index + 1;
		if (st != NFS4_OK)
			log_failure(arg, cs.index, st);
	}
	res->status = st;
	return TRUE;
}

int nfs4_program_4_freeresult(SVCXPRT *x, xdrproc_t proc, caddr_t res)
{
	xdr_free(proc, res);
	return 1;
}

int main(int argc, char **argv)
{
	int r;

	if (!objs_init()) {
		fprintf(stderr, "nfs4_server: cannot make the objects\n");
		return 1;
	}
	r = ddp_serve(argc, argv, "nfs4_server", NFS4_PROGRAM, NFS_V4,
		      nfs4_program_4);
	objs_free();
	return r;
}
