/*
 * ulb_nfs.c - the built-in Upper-Layer Bindings: NFS versions 2 and 3 as
 * RFC 8267 section 4 defines them (prior-art 4), and the registration of
 * the NFSv4 walker.  For versions 2 and 3 the DDP-eligible items are
 * exactly
 *
 *	WRITE    argument: the file data
 *	SYMLINK  argument: the link target path
 *	READ     result:   the file data, room = the call's count argument
 *	READLINK result:   the link target path, room = the largest path
 *
 * and nothing else.  Ordinals count the body items (opaque, string and
 * fixed-opaque data runs, rw_xdr.h) in XDR order; in every NFS argument the
 * file handle is the first one.  An empty file handle or file name would
 * shift the later ordinals down by one: the eligible item then has an
 * ordinal that is not designated and simply stays inline, never the wrong
 * item moved.
 *
 * NFSv4 (program 100003 version 4) has no entry here.  Its one procedure,
 * COMPOUND, carries any sequence of operations, so the ordinal of
 * WRITE4args.data depends on what precedes it (the tag, each PUTFH handle,
 * every stateid's fixed opaque "other"...): a positional item number cannot
 * name it, and neither can one argument offset give READ4's count.  It is
 * bound by parsing instead: the walker of ulb_nfs4.c, registered below.
 *
 * reply_max is the largest result body besides the items placed in Write
 * chunks (status, attributes, counts, length words), rounded up.  Every
 * other NFSv3 procedure has bounded results too, so each has its largest
 * reply declared: without it the client offers a Reply chunk of
 * max_reply_size on every call - a registration and an invalidation for
 * each GETATTR, WRITE, COMMIT - and a server such as Linux's then answers
 * through that chunk.  These are the sizes rpcrdma-ulbgen -s
 * computes from RFC 1813's XDR (examples/nfs3d/nfs3_prot.x; check_ulb.c
 * compares them with tests/unit/ulb/nfs3_prot.conf, its output):
 * nfs_fh3 at most 4 + 64, fattr3 84, post_op_attr 4 + 84, wcc_data
 * (4 + 24) + (4 + 84).
 */
#include "compiler.h"
#include "ulb/ulb.h"

#define NFS_PROGRAM 100003u

/* Linux NFS3_MAXPATHLEN (PATH_MAX); NFSv2 fixes NFS_MAXPATHLEN = 1024. */
#define NFS3_PATH_ROOM 4096u
#define NFS2_PATH_ROOM 1024u

#define FIXED(n)                               \
	{                                      \
		RPCRDMA_ULB_SIZE_FIXED, (n), 0 \
	}
#define ARG(off, plus)                              \
	{                                           \
		RPCRDMA_ULB_SIZE_ARG, (plus), (off) \
	}
#define NOSIZE                              \
	{                                   \
		RPCRDMA_ULB_SIZE_NONE, 0, 0 \
	}

#define CALL_ITEM(v, p, k)                                                     \
	{                                                                      \
		NFS_PROGRAM, (v), (p), RPCRDMA_ULB_CALL, RW_DDP_ITEM(k), 0, 0, \
			NOSIZE, NOSIZE,                                        \
		{                                                              \
			0                                                      \
		}                                                              \
	}
#define REPLY_ITEM(v, p, room, max)                                          \
	{                                                                    \
		NFS_PROGRAM, (v), (p), RPCRDMA_ULB_REPLY, RW_DDP_ITEM(0), 0, \
			1, room, max,                                        \
		{                                                            \
			0                                                    \
		}                                                            \
	}
#define REPLY_SIZE(v, p, max)                                              \
	{                                                                  \
		NFS_PROGRAM, (v), (p), RPCRDMA_ULB_REPLY, 0, 0, 0, NOSIZE, \
			max,                                               \
		{                                                          \
			0                                                  \
		}                                                          \
	}

static const struct rpcrdma_ulb_entry ulb_nfs[] = {
	/*
	 * NFSv2 (RFC 1094).  fhandle is opaque[32]: item 0.
	 * READ:     readargs {file; offset; count; totalcount}: count at 36.
	 * WRITE:    {file (0); beginoffset; offset; totalcount; data (1)}.
	 * SYMLINK:  {from.dir (0); from.name (1); to (2); attributes}.
	 */
	REPLY_ITEM(2, 5, FIXED(NFS2_PATH_ROOM), FIXED(128)), /* READLINK */
	REPLY_ITEM(2, 6, ARG(36, 0), FIXED(128)),	     /* READ */
	CALL_ITEM(2, 8, 1),				     /* WRITE */
	CALL_ITEM(2, 13, 2),				     /* SYMLINK */

	/*
	 * NFSv3 (RFC 1813).  nfs_fh3 is opaque<64>: item 0.
	 * READ:     READ3args {file; offset (8); count}: count is the last
	 *           word; READ3resok {attrs; count; eof; data (0)}.
	 * WRITE:    WRITE3args {file (0); offset; count; stable; data (1)}.
	 * SYMLINK:  {where.dir (0); where.name (1); attrs; path (2)}.
	 * READLINK: READLINK3resok {attrs; data (0)}.
	 * READDIR / READDIRPLUS have no eligible item, but their largest
	 * reply is the last argument (count, maxcount: the size of the resok
	 * body) plus room for the status and the attributes of an error.
	 */
	REPLY_ITEM(3, 5, FIXED(NFS3_PATH_ROOM), FIXED(128)), /* READLINK */
	REPLY_ITEM(3, 6, ARG(-4, 0), FIXED(128)),	     /* READ */
	CALL_ITEM(3, 7, 1),				     /* WRITE */
	CALL_ITEM(3, 10, 2),				     /* SYMLINK */
	REPLY_SIZE(3, 16, ARG(-4, 128)),		     /* READDIR */
	REPLY_SIZE(3, 17, ARG(-4, 128)),		     /* READDIRPLUS */

	/* NFSv3: the largest reply of every other procedure */
	REPLY_SIZE(3, 0, FIXED(0)),    /* NULL */
	REPLY_SIZE(3, 1, FIXED(88)),   /* GETATTR: status, fattr3 */
	REPLY_SIZE(3, 2, FIXED(120)),  /* SETATTR: wcc_data */
	REPLY_SIZE(3, 3, FIXED(248)),  /* LOOKUP: fh, 2 post_op_attr */
	REPLY_SIZE(3, 4, FIXED(96)),   /* ACCESS */
	REPLY_SIZE(3, 7, FIXED(136)),  /* WRITE: wcc, count, verf */
	REPLY_SIZE(3, 8, FIXED(280)),  /* CREATE: post_op_fh3 ... */
	REPLY_SIZE(3, 9, FIXED(280)),  /* MKDIR */
	REPLY_SIZE(3, 10, FIXED(280)), /* SYMLINK */
	REPLY_SIZE(3, 11, FIXED(280)), /* MKNOD */
	REPLY_SIZE(3, 12, FIXED(120)), /* REMOVE */
	REPLY_SIZE(3, 13, FIXED(120)), /* RMDIR */
	REPLY_SIZE(3, 14, FIXED(236)), /* RENAME: 2 wcc_data */
	REPLY_SIZE(3, 15, FIXED(208)), /* LINK */
	REPLY_SIZE(3, 18, FIXED(144)), /* FSSTAT */
	REPLY_SIZE(3, 19, FIXED(140)), /* FSINFO */
	REPLY_SIZE(3, 20, FIXED(116)), /* PATHCONF */
	REPLY_SIZE(3, 21, FIXED(128)), /* COMMIT */
};

void ulb_nfs_register(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ulb_nfs); i++)
		(void)ulb_table_add(&ulb_nfs[i], ULB_SRC_BUILTIN);
	(void)ulb_table_add_walker(NFS_PROGRAM, 4, 1, &ulb_nfs4_walker);
}
