/*
 * t_nfs4.c - NFSv4 COMPOUNDs over RPC-over-RDMA with the BUILT-IN
 * Upper-Layer Binding (RFC 8267 section 6 as the COMPOUND walker
 * src/ulb/ulb_nfs4.c has it): the RFC 7530/5661/7862 excerpt
 * tests/unit/ulb/nfs4.x through rpcgen -M, the project's CLIENT against
 * nfs4_server (in memory), both with RPCRDMA_ULB_CONF=/dev/null so no
 * configuration file adds to the table.
 *
 * It owns the checks that WRITE's data and CREATE(NF4LNK)'s link text, and
 * nothing else, travel in a Read chunk (exactly one once the Call cannot
 * be Short, none below the default minimum); that each READ and READLINK
 * of a COMPOUND gets a Write chunk of its own, in operation order, sized
 * by READ's count, at most four of them (later data inline), with the
 * exact octets placed; that a READ which fails, and so ends the COMPOUND,
 * leaves its chunk unused; that no Reply chunk is offered for a result of
 * no bound (GETATTR, CREATE): such a reply is asked inline, and resent
 * with the room the server names when it does not fit; that a READLINK
 * text larger than its room gets WRITE_RESOURCE and a resend in v2; and
 * that every octet written reads back.  Counters are CLGET_RDMA_STATS deltas around single calls.
 *
 * One line per check; exit 0 only when all passed, 77 without a device.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "glue/rpcrdma_attr.h" /* RPCRDMA_DEFAULT_DDP_MIN */
#include "nfs4.h"
#include "tests/vm/t_clnt_util.h"
#include "tests/vm/t_ddp_util.h"

/* Write chunks one Call offers at most (RR_MAX_WRITES). */
#define MAX_WRITES 4u
/* The room the binding gives a READLINK (NFS4_PATH_ROOM of ulb_nfs4.c). */
#define PATH_ROOM 4096u
/* READ counts up to here leave the whole reply under the default inline
 * threshold (4096) with room for its header and every other result: the
 * client offers no Write chunk.  1025 and 3 and 1 are tested. */
#define INLINE_SURE 2048u
#define MAX_OPS	    12u
/* nfs4_server's objects */
#define PRESET_LINK "nfs4/preset/target"
#define ATTR_FILE   8 /* the file WRITE + GETATTR use */
#define FATTR4_TYPE 1
#define FATTR4_SIZE 4
#define ATTR_BIT(a) (1u << (a))

static const uint32_t sizes[] = {
	1, 3, 1025, 4097, 100001, MiB, MiB + 3,
};
#define NFILES (sizeof(sizes) / sizeof(sizes[0]))

/* What each file should hold now. */
static uint8_t *image[NFILES];
/* The verifier the latest WRITE returned. */
static char last_verf[NFS4_VERIFIER_SIZE];

static const stateid4 anon_sid; /* all zeros: anonymous */
static const stateid4 bad_sid = { 7, "bad-stateid!" };

/* ---- Building a COMPOUND ------------------------------------------------------ */

struct cmp {
	COMPOUND4args args;
	nfs_argop4 ops[MAX_OPS];
	uint32_t seq; /* the SEQUENCE's sequenceid */
	char tag[32];
};

static const char *session = "t_nfs4 session:1"; /* 16 octets */
static uint32_t next_seq = 1;

static nfs_argop4 *op_add(struct cmp *c, nfs_opnum4 op)
{
	nfs_argop4 *a;

	if (c->args.argarray.argarray_len >= MAX_OPS) {
		fprintf(stderr, "t_nfs4: more than %u operations\n", MAX_OPS);
		exit(1);
	}
	a = &c->ops[c->args.argarray.argarray_len++];
	memset(a, 0, sizeof(*a));
	a->argop = op;
	return a;
}

/* Tag and minor version 1, then SEQUENCE on slot 0. */
static void c_init(struct cmp *c, const char *tag)
{
	SEQUENCE4args *s;

	memset(c, 0, sizeof(*c));
	snprintf(c->tag, sizeof(c->tag), "%s", tag);
	c->args.tag.utf8string_len = (u_int)strlen(c->tag);
	c->args.tag.utf8string_val = c->tag;
	c->args.minorversion = 1;
	c->args.argarray.argarray_val = c->ops;
	s = &op_add(c, OP_SEQUENCE)->nfs_argop4_u.opsequence;
	memcpy(s->sa_sessionid, session, NFS4_SESSIONID_SIZE);
	s->sa_sequenceid = c->seq = next_seq++;
}

static void c_putfh(struct cmp *c, const char *fh)
{
	nfs_fh4 *o = &op_add(c, OP_PUTFH)->nfs_argop4_u.opputfh.object;

	o->nfs_fh4_len = (u_int)strlen(fh);
	o->nfs_fh4_val = (char *)fh;
}

/* Every READ here comes with its PUTFH (fh NULL: PUTROOTFH). */
static void c_read(struct cmp *c, const char *fh, uint64_t off, uint32_t count,
		   const stateid4 *sid)
{
	READ4args *r;

	if (fh)
		c_putfh(c, fh);
	else
		op_add(c, OP_PUTROOTFH);
	r = &op_add(c, OP_READ)->nfs_argop4_u.opread;
	r->stateid = *sid;
	r->offset = off;
	r->count = count;
}

static void c_write(struct cmp *c, uint64_t off, const uint8_t *data,
		    uint32_t len)
{
	WRITE4args *w = &op_add(c, OP_WRITE)->nfs_argop4_u.opwrite;

	w->stateid = anon_sid;
	w->offset = off;
	w->stable = FILE_SYNC4;
	w->data.data_len = len;
	w->data.data_val = (char *)data;
}

static void c_getattr(struct cmp *c, nfs4_uint32 *mask)
{
	bitmap4 *b =
		&op_add(c, OP_GETATTR)->nfs_argop4_u.opgetattr.attr_request;

	b->bitmap4_len = 1;
	b->bitmap4_val = mask;
}

static void c_create_link(struct cmp *c, const char *name, const char *text,
			  uint32_t len)
{
	CREATE4args *a = &op_add(c, OP_CREATE)->nfs_argop4_u.opcreate;

	a->objtype.type = NF4LNK;
	a->objtype.createtype4_u.linkdata.utf8string_len = len;
	a->objtype.createtype4_u.linkdata.utf8string_val = (char *)text;
	a->objname.utf8string_len = (u_int)strlen(name);
	a->objname.utf8string_val = (char *)name;
}

static const char *fh_of(unsigned int i)
{
	static char fhs[16][24];

	snprintf(fhs[i % 16], sizeof(fhs[0]), "nfs4-file-%u", i);
	return fhs[i % 16];
}

/* ---- Calling it ------------------------------------------------------------------ */

struct outcome {
	enum clnt_stat st;
	COMPOUND4res res;
	struct rpcrdma_clnt_stats a, b; /* counters before, after */
	CLIENT *cl;
};

static void compound(CLIENT *cl, struct cmp *c, struct outcome *o)
{
	memset(o, 0, sizeof(*o));
	o->cl = cl;
	td_stats(cl, &o->a);
	o->st = nfsproc4_compound_4(&c->args, &o->res, cl);
	td_stats(cl, &o->b);
}

static void done(struct outcome *o)
{
	xdr_free((xdrproc_t)xdr_COMPOUND4res, (char *)&o->res);
}

#define D(o, f) TD_D(&(o)->b, &(o)->a, f)

static const char *status(const struct outcome *o)
{
	static char m[160];

	if (o->st != RPC_SUCCESS)
		return td_errmsg(o->cl);
	snprintf(m, sizeof(m), "status %d, %u result(s)", o->res.status,
		 o->res.resarray.resarray_len);
	return m;
}

/* Result i if it is one of op; NULL otherwise. */
static nfs_resop4 *res_op(struct outcome *o, u_int i, nfs_opnum4 op)
{
	nfs_resop4 *r;

	if (o->st != RPC_SUCCESS || i >= o->res.resarray.resarray_len)
		return NULL;
	r = &o->res.resarray.resarray_val[i];
	return r->resop == op ? r : NULL;
}

/* Every result starts with its status (ILLEGAL4res is just that). */
static nfsstat4 res_status(const nfs_resop4 *r)
{
	return r->nfs_resop4_u.opillegal.status;
}

/* The SEQUENCE result echoes session, sequence and slot; the tag too. */
static bool session_ok(struct outcome *o, const struct cmp *c)
{
	nfs_resop4 *r = res_op(o, 0, OP_SEQUENCE);
	const SEQUENCE4resok *ok;
	const utf8str_cs *t = &o->res.tag;

	if (!r || r->nfs_resop4_u.opsequence.sr_status != NFS4_OK)
		return false;
	ok = &r->nfs_resop4_u.opsequence.SEQUENCE4res_u.sr_resok4;
	return !memcmp(ok->sr_sessionid, session, NFS4_SESSIONID_SIZE) &&
	       ok->sr_sequenceid == c->seq && ok->sr_slotid == 0 &&
	       t->utf8string_len == strlen(c->tag) &&
	       !memcmp(t->utf8string_val, c->tag, t->utf8string_len);
}

/* Every operation ran and succeeded. */
static bool all_ok(struct outcome *o, const struct cmp *c)
{
	return o->st == RPC_SUCCESS && o->res.status == NFS4_OK &&
	       o->res.resarray.resarray_len == c->args.argarray.argarray_len &&
	       session_ok(o, c);
}

/* The COMPOUND stopped at operation stop (an op) with status want. */
static bool stopped_at(struct outcome *o, const struct cmp *c, u_int stop,
		       nfs_opnum4 op, nfsstat4 want)
{
	nfs_resop4 *r = res_op(o, stop, op);

	return r && res_status(r) == want && o->res.status == want &&
	       o->res.resarray.resarray_len == stop + 1 && session_ok(o, c);
}

/* ---- WRITE -------------------------------------------------------------------- */

static const char *read_chunk_what(uint32_t len)
{
	return len < RPCRDMA_DEFAULT_DDP_MIN ?
		       "below the minimum: inline" :
	       len < TD_MUST_REDUCE ?
		       "in a Read chunk or inline (the Call fits)" :
		       "in a Read chunk";
}

static bool write_result_ok(struct outcome *o, u_int i, uint32_t len)
{
	nfs_resop4 *r = res_op(o, i, OP_WRITE);
	const WRITE4resok *ok;

	if (!r || res_status(r) != NFS4_OK)
		return false;
	ok = &r->nfs_resop4_u.opwrite.WRITE4res_u.resok4;
	memcpy(last_verf, ok->writeverf, sizeof(last_verf));
	return ok->count == len && ok->committed == FILE_SYNC4;
}

/* The counters of a Call whose only eligible item is len octets. */
static void check_read_chunk(struct outcome *o, const char *what, uint32_t len)
{
	unsigned long long rc = D(o, read_chunks);

	CHECK(td_read_chunk_ok(rc, len) && D(o, read_bytes) == (rc ? len : 0) &&
		      D(o, long_calls) == 0,
	      "%s %u: the data %s (%llu Read chunk, %llu octets), "
	      "no Long call (%llu)",
	      what, len, read_chunk_what(len), rc, D(o, read_bytes),
	      D(o, long_calls));
}

static void write_file(CLIENT *cl, unsigned int i, uint64_t off,
		       const uint8_t *data, uint32_t len)
{
	struct outcome o;
	struct cmp c;

	c_init(&c, "t_nfs4 write");
	c_putfh(&c, fh_of(i));
	c_write(&c, off, data, len);
	compound(cl, &c, &o);
	CHECK(all_ok(&o, &c) && write_result_ok(&o, 2, len),
	      "SEQUENCE+PUTFH+WRITE %u octets at %llu to %s: NFS4_OK, "
	      "count %u, FILE_SYNC4, session echoed [%s]",
	      len, (unsigned long long)off, fh_of(i), len, status(&o));
	check_read_chunk(&o, "WRITE", len);
	CHECK(D(&o, write_chunks) == 0 && D(&o, reply_chunks) == 0 &&
		      D(&o, long_replies) == 0,
	      "WRITE %u: no Write chunk (%llu), no Reply chunk (%llu: the "
	      "reply is bounded), reply inline (%llu Long)",
	      len, D(&o, write_chunks), D(&o, reply_chunks),
	      D(&o, long_replies));
	done(&o);
}

/* ---- READ ---------------------------------------------------------------------- */

struct rd {
	unsigned int file;
	uint32_t off, count;
};

/* The octets READ r returns, from the image. */
static uint32_t rd_len(const struct rd *r)
{
	uint32_t size = sizes[r->file];
	uint32_t n = r->off >= size ? 0 : size - r->off;

	return n < r->count ? n : r->count;
}

static bool rd_eof(const struct rd *r)
{
	return r->off + rd_len(r) >= sizes[r->file];
}

static long first_diff(const char *a, const uint8_t *b, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		if ((uint8_t)a[i] != b[i])
			return (long)i;
	return -1;
}

/* READ result i against r; a note says why not. */
static bool read_ok(struct outcome *o, u_int i, const struct rd *r)
{
	nfs_resop4 *res = res_op(o, i, OP_READ);
	const READ4resok *ok;
	uint32_t len = rd_len(r);
	long diff;

	if (!res || res_status(res) != NFS4_OK)
		return false;
	ok = &res->nfs_resop4_u.opread.READ4res_u.resok4;
	diff = ok->data.data_len == len ?
		       first_diff(ok->data.data_val, image[r->file] + r->off,
				  len) :
		       0;
	if (ok->data.data_len == len && !ok->eof == !rd_eof(r) && diff < 0)
		return true;
	NOTE("result %u: READ %u at %u of %s: %u octets (want %u), eof %d "
	     "(want %d), first difference at %ld",
	     i, r->count, r->off, fh_of(r->file), ok->data.data_len, len,
	     ok->eof, rd_eof(r), diff);
	return false;
}

/*
 * SEQUENCE, then PUTFH + READ for each of rd[0..n): every READ's data and
 * eof; Write chunks for the first MAX_WRITES with exactly their data, or
 * none when the counts are so small that the whole reply surely fits
 * inline (the client then leaves the Write list empty, RFC 8267 6.4);
 * reply: a Reply chunk expected (0 or 1), and then used.
 */
static void reads(CLIENT *cl, const char *what, const struct rd *rd,
		  unsigned int n, unsigned long long reply)
{
	unsigned int i, wc = n < MAX_WRITES ? n : MAX_WRITES, good = 0;
	unsigned long long wb = 0, counts = 0;
	struct outcome o;
	struct cmp c;

	c_init(&c, "t_nfs4 read");
	for (i = 0; i < n; i++) {
		c_read(&c, fh_of(rd[i].file), rd[i].off, rd[i].count,
		       &anon_sid);
		counts += rd[i].count;
		if (i < MAX_WRITES)
			wb += rd_len(&rd[i]);
	}
	if (counts <= INLINE_SURE)
		wc = 0, wb = 0;
	compound(cl, &c, &o);
	for (i = 0; i < n; i++)
		good += read_ok(&o, 2 + 2 * i, &rd[i]);
	CHECK(all_ok(&o, &c) && good == n,
	      "%s: %u of %u READs intact (the first: %u at %u of %s) [%s]",
	      what, good, n, rd[0].count, rd[0].off, fh_of(rd[0].file),
	      status(&o));
	CHECK(D(&o, write_chunks) == wc && D(&o, write_bytes) == wb &&
		      D(&o, read_chunks) == 0 && D(&o, long_calls) == 0 &&
		      D(&o, reply_chunks) == reply &&
		      D(&o, long_replies) == reply,
	      "%s: %u Write chunk(s) (%llu), %llu octets placed (%llu)%s, "
	      "Reply chunk %llu (%llu; used %llu), no Read chunk (%llu)",
	      what, wc, D(&o, write_chunks), wb, D(&o, write_bytes),
	      n > MAX_WRITES ? ", the rest inline" : "", reply,
	      D(&o, reply_chunks), D(&o, long_replies), D(&o, read_chunks));
	CHECK(D(&o, ddp_zero_copies) == 0 && D(&o, ddp_copies) == wc,
	      "%s: every placed result copied out of pool memory (%llu; "
	      "zero copy %llu: never for NFSv4)",
	      what, D(&o, ddp_copies), D(&o, ddp_zero_copies));
	done(&o);
}

static void read_one(CLIENT *cl, const char *what, unsigned int file,
		     uint32_t off, uint32_t count)
{
	const struct rd r = { file, off, count };

	reads(cl, what, &r, 1, 0);
}

/* ---- 1. WRITE then READ back ------------------------------------------------------ */

static void read_all(CLIENT *cl)
{
	unsigned int i;

	for (i = 0; i < NFILES; i++)
		read_one(cl, "READ back", i, 0, sizes[i]);
}

/* Overwrite part of the 1 MiB file at an odd offset, read all of it;
 * short reads at and before EOF of the 100001-octet file. */
static void overwrite(CLIENT *cl)
{
	const uint32_t off = 12345, len = 70001;
	uint8_t *data = malloc(len);

	t_fill(data, len, 77);
	write_file(cl, 5, off, data, len);
	memcpy(image[5] + off, data, len);
	read_one(cl, "READ after overwrite", 5, 0, sizes[5]);
	read_one(cl, "READ past EOF (1001 of 65536)", 4, sizes[4] - 1001,
		 65536);
	read_one(cl, "READ before EOF", 4, 1, 65536);
	free(data);
}

/* ---- 2. and 6. Several READs in one COMPOUND ---------------------------------------- */

static void multi_reads(CLIENT *cl)
{
	static const struct rd two[] = {
		{ 3, 0, 4097 },
		{ 4, 0, 100001 },
	};
	static const struct rd five_small_last[] = {
		{ 3, 0, 4097 }, { 4, 0, 100001 }, { 5, 0, MiB },
		{ 6, 7, MiB },	{ 2, 25, 1000 },
	};
	static const struct rd five_large_last[] = {
		{ 0, 0, 1 },	{ 1, 0, 3 },	  { 2, 0, 1025 },
		{ 3, 0, 4097 }, { 4, 0, 100001 },
	};

	reads(cl, "2 READs (PUTFH a, READ, PUTFH b, READ)", two, 2, 0);
	reads(cl, "5 READs, the 5th of 1000 inline", five_small_last, 5, 0);
	reads(cl, "5 READs, the 5th of 100001 inline (Reply chunk)",
	      five_large_last, 5, 1);
}

/* ---- 3. READs that fail -------------------------------------------------------------- */

/* One PUTFH (or PUTROOTFH) and READ at offset 0 of such a COMPOUND. */
struct fh_read {
	const char *fh; /* NULL: PUTROOTFH */
	uint32_t count;
	const stateid4 *sid; /* NULL: not sent */
};

/*
 * A COMPOUND of SEQUENCE and rd that must stop at operation at (an op)
 * with status, said being the check line's account of it; the READ of
 * first (NULL: none) is result 2 and intact.  Write chunks: wc offered,
 * only first's data placed, no RDMA_ERROR.  what names the case.
 */
struct failing {
	const char *what;
	const char *tag;
	struct fh_read rd[2];
	u_int at;
	nfs_opnum4 op;
	nfsstat4 status;
	const char *said;
	const struct rd *first;
	unsigned long long wc;
};

/* Handles as fh_of() makes them; file 4 is the 100001-octet one. */
static const struct rd file4_all = { 4, 0, 100001 };

static const struct failing failing[] = {
	{ "READ of the root directory",
	  "t_nfs4 read dir",
	  { { NULL, 65536, &anon_sid } },
	  2,
	  OP_READ,
	  NFS4ERR_ISDIR,
	  "RPC_SUCCESS, NFS4ERR_ISDIR, 3 results",
	  NULL,
	  1 },
	{ "READ with a bad stateid, then PUTFH+READ",
	  "t_nfs4 bad stateid",
	  { { "nfs4-file-4", 100001, &bad_sid },
	    { "nfs4-file-5", MiB, &anon_sid } },
	  2,
	  OP_READ,
	  NFS4ERR_BAD_STATEID,
	  "NFS4ERR_BAD_STATEID, the COMPOUND stops there (3 of 5 results)",
	  NULL,
	  2 },
	{ "PUTFH of an unknown handle, READ",
	  "t_nfs4 bad handle",
	  { { "nfs4-no-such-file", 65536, &anon_sid } },
	  1,
	  OP_PUTFH,
	  NFS4ERR_BADHANDLE,
	  "NFS4ERR_BADHANDLE at PUTFH, the READ not run (2 of 3 results)",
	  NULL,
	  1 },
	/* a good READ, then one of the symbolic link: chunk 1 used, 2 not */
	{ "READ 100001, then READ of a symlink",
	  "t_nfs4 read+symlink",
	  { { "nfs4-file-4", 100001, &anon_sid },
	    { "nfs4-symlink", 65536, &anon_sid } },
	  4,
	  OP_READ,
	  NFS4ERR_SYMLINK,
	  "the first READ's data intact, the second NFS4ERR_SYMLINK "
	  "(5 results)",
	  &file4_all,
	  2 },
};

static void failing_reads(CLIENT *cl)
{
	const struct failing *f;
	unsigned long long wb;
	struct outcome o;
	struct cmp c;
	unsigned int i, k;

	for (i = 0; i < sizeof(failing) / sizeof(failing[0]); i++) {
		f = &failing[i];
		c_init(&c, f->tag);
		for (k = 0; k < 2 && f->rd[k].sid; k++)
			c_read(&c, f->rd[k].fh, 0, f->rd[k].count,
			       f->rd[k].sid);
		compound(cl, &c, &o);
		CHECK(stopped_at(&o, &c, f->at, f->op, f->status) &&
			      (!f->first || read_ok(&o, 2, f->first)),
		      "%s: %s [%s]", f->what, f->said, status(&o));
		wb = f->first ? f->first->count : 0;
		CHECK(D(&o, write_chunks) == f->wc &&
			      D(&o, write_bytes) == wb && D(&o, err_chunk) == 0,
		      "%s: %llu Write chunk(s) offered (%llu), %llu octets "
		      "placed (%llu), no RDMA_ERROR (%llu)",
		      f->what, f->wc, D(&o, write_chunks), wb,
		      D(&o, write_bytes), D(&o, err_chunk));
		done(&o);
	}
}

static bool attrs_ok(struct outcome *o, u_int i, nfs_ftype4 want,
		     uint64_t size);

/* ---- 4. CREATE(NF4LNK) and READLINK ----------------------------------------------------- */

/* CREATE a link of text in the root; its handle into fh (NUL-ended). */
static bool create_link(CLIENT *cl, const char *name, const char *text,
			uint32_t len, char *fh, size_t fhcap)
{
	nfs_resop4 *g;
	struct outcome o;
	struct cmp c;
	bool ok;

	c_init(&c, "t_nfs4 create");
	op_add(&c, OP_PUTROOTFH);
	c_create_link(&c, name, text, len);
	op_add(&c, OP_GETFH);
	compound(cl, &c, &o);
	g = res_op(&o, 3, OP_GETFH);
	ok = all_ok(&o, &c) && g &&
	     g->nfs_resop4_u.opgetfh.GETFH4res_u.resok4.object.nfs_fh4_len <
		     fhcap;
	if (ok) {
		const nfs_fh4 *h =
			&g->nfs_resop4_u.opgetfh.GETFH4res_u.resok4.object;

		memcpy(fh, h->nfs_fh4_val, h->nfs_fh4_len);
		fh[h->nfs_fh4_len] = 0;
	}
	CHECK(ok,
	      "SEQUENCE+PUTROOTFH+CREATE(NF4LNK \"%s\", %u octets)"
	      "+GETFH: NFS4_OK, handle \"%s\" [%s]",
	      name, len, ok ? fh : "", status(&o));
	check_read_chunk(&o, "CREATE link text", len);
	/* a Reply of unknown size is asked inline: no Reply chunk, no
	 * registration for it */
	CHECK(D(&o, write_chunks) == 0 && D(&o, reply_chunks) == 0 &&
		      D(&o, resends) == 0,
	      "CREATE %u: no Write chunk (%llu), no Reply chunk (%llu: "
	      "CREATE4resok has a bitmap4, no bound: asked inline), no resend (%llu)",
	      len, D(&o, write_chunks), D(&o, reply_chunks), D(&o, resends));
	done(&o);
	return ok;
}

/* SEQUENCE+PUTFH+READLINK of fh, as every READLINK case sends it. */
static void readlink_call(CLIENT *cl, const char *fh, struct cmp *c,
			  struct outcome *o)
{
	c_init(c, "t_nfs4 readlink");
	c_putfh(c, fh);
	op_add(c, OP_READLINK);
	compound(cl, c, o);
}

/* READLINK of fh returns text (len octets) through its Write chunk. */
static void readlink_ok(CLIENT *cl, const char *fh, const char *text,
			uint32_t len)
{
	const READLINK4resok *ok = NULL;
	nfs_resop4 *r;
	struct outcome o;
	struct cmp c;

	readlink_call(cl, fh, &c, &o);
	r = res_op(&o, 2, OP_READLINK);
	if (r && all_ok(&o, &c))
		ok = &r->nfs_resop4_u.opreadlink.READLINK4res_u.resok4;
	CHECK(ok && ok->link.utf8string_len == len &&
		      !memcmp(ok->link.utf8string_val, text, len),
	      "READLINK of %s: the %u octets of link text round-trip (%u) "
	      "[%s]",
	      fh, len, ok ? ok->link.utf8string_len : 0, status(&o));
	CHECK(D(&o, write_chunks) == 1 && D(&o, write_bytes) == len &&
		      D(&o, reply_chunks) == 0 && D(&o, read_chunks) == 0,
	      "READLINK %u: the text in a Write chunk of room %u (%llu, "
	      "%llu octets), no Reply chunk (%llu), no Read chunk (%llu)",
	      len, PATH_ROOM, D(&o, write_chunks), D(&o, write_bytes),
	      D(&o, reply_chunks), D(&o, read_chunks));
	done(&o);
}

static unsigned int version(CLIENT *cl)
{
	unsigned int v = 0;

	clnt_control(cl, CLGET_RDMA_VERSION, &v);
	return v;
}

/*
 * READLINK of a text longer than the Write chunk the binding offers
 * (PATH_ROOM, as Linux's PATH_MAX): the responder may neither overrun the
 * chunk nor send the text inline instead (V1-WC-2).  In v1 it answers
 * RDMA_ERROR ERR_CHUNK; the CLIENT reports it and goes on.  In v2 it
 * answers WRITE_RESOURCE with the length (V2-ERR-12), the CLIENT resends
 * with that room and the text arrives (V2-ERR-13) - unless the results
 * cannot be probed (ASan builds), where it fails as in v1.
 */
static void readlink_too_long(CLIENT *cl, const char *fh, const char *text,
			      uint32_t len)
{
	const READLINK4resok *ok = NULL;
	nfs_resop4 *r;
	struct outcome o;
	struct cmp c;

	if (version(cl) == 2 && TD_ZERO_COPY) {
		readlink_call(cl, fh, &c, &o);
		r = res_op(&o, 2, OP_READLINK);
		if (r && all_ok(&o, &c))
			ok = &r->nfs_resop4_u.opreadlink.READLINK4res_u.resok4;
		CHECK(ok && ok->link.utf8string_len == len &&
			      !memcmp(ok->link.utf8string_val, text, len) &&
			      D(&o, resends) == 1 && D(&o, err_chunk) == 0 &&
			      D(&o, write_chunks) == 2 &&
			      D(&o, write_bytes) == len,
		      "READLINK of %s, %u octets > the %u-octet room: WRITE_RESOURCE, resent (%llu) with room for it, the text round-trips (%llu octets placed) [%s]",
		      fh, len, PATH_ROOM, D(&o, resends), D(&o, write_bytes),
		      status(&o));
		done(&o);
		return;
	}
	readlink_call(cl, fh, &c, &o);
	CHECK(o.st == RPC_SYSTEMERROR && D(&o, err_chunk) == 1 &&
		      D(&o, write_chunks) == 1 + D(&o, resends) &&
		      D(&o, write_bytes) == 0,
	      "READLINK of %s, %u octets > the %u-octet room: RDMA_ERROR "
	      "ERR_CHUNK (%llu), RPC_SYSTEMERROR (%s), nothing placed "
	      "(%llu) [%s]",
	      fh, len, PATH_ROOM, D(&o, err_chunk), clnt_sperrno(o.st),
	      D(&o, write_bytes), status(&o));
	done(&o);
}

/* GETATTR of the link: an NF4LNK of len octets, so the server got all
 * of a text READLINK cannot return. */
static void link_size(CLIENT *cl, const char *fh, uint32_t len)
{
	static nfs4_uint32 mask = ATTR_BIT(FATTR4_TYPE) | ATTR_BIT(FATTR4_SIZE);
	struct outcome o;
	struct cmp c;

	c_init(&c, "t_nfs4 link getattr");
	c_putfh(&c, fh);
	c_getattr(&c, &mask);
	compound(cl, &c, &o);
	CHECK(all_ok(&o, &c) && attrs_ok(&o, 2, NF4LNK, len),
	      "GETATTR of %s: NF4LNK of %u octets, as CREATE sent it [%s]", fh,
	      len, status(&o));
	done(&o);
}

static void symlink_case(CLIENT *cl, const char *name, uint32_t len)
{
	char *text = malloc(len), fh[NFS4_FHSIZE + 1];
	uint32_t i;

	for (i = 0; i < len; i++)
		text[i] = i % 40 == 39 ? '/' : (char)('a' + (i * 7) % 26);
	if (create_link(cl, name, text, len, fh, sizeof(fh))) {
		if (len <= PATH_ROOM)
			readlink_ok(cl, fh, text, len);
		else
			readlink_too_long(cl, fh, text, len);
		link_size(cl, fh, len);
	}
	free(text);
}

static void links(CLIENT *cl)
{
	readlink_ok(cl, "nfs4-symlink", PRESET_LINK, strlen(PRESET_LINK));
	symlink_case(cl, "link-14", 14);
	symlink_case(cl, "link-3000", 3000);
	symlink_case(cl, "link-4096", PATH_ROOM);
	symlink_case(cl, "link-5000", 5000);
	/* the CLIENT still works after the RDMA_ERROR */
	read_one(cl, "READ after the ERR_CHUNK", 3, 0, sizes[3]);
}

/* ---- 5. GETATTR: a result of no bound ------------------------------------------------- */

/* GETATTR result i: TYPE and SIZE decode to want and size. */
static bool attrs_ok(struct outcome *o, u_int i, nfs_ftype4 want, uint64_t size)
{
	nfs_resop4 *r = res_op(o, i, OP_GETATTR);
	const fattr4 *f;
	nfs_ftype4 type = 0;
	nfs4_uint64 sz = 0;
	bool ok;
	XDR x;

	if (!r || res_status(r) != NFS4_OK)
		return false;
	f = &r->nfs_resop4_u.opgetattr.GETATTR4res_u.resok4.obj_attributes;
	if (f->attrmask.bitmap4_len < 1 ||
	    f->attrmask.bitmap4_val[0] !=
		    (ATTR_BIT(FATTR4_TYPE) | ATTR_BIT(FATTR4_SIZE)))
		return false;
	xdrmem_create(&x, f->attr_vals.attrlist4_val,
		      f->attr_vals.attrlist4_len, XDR_DECODE);
	ok = xdr_nfs_ftype4(&x, &type) && xdr_nfs4_uint64(&x, &sz) &&
	     xdr_getpos(&x) == f->attr_vals.attrlist4_len;
	xdr_destroy(&x);
	if (!ok || type != want || sz != size)
		NOTE("GETATTR: type %d (want %d), size %llu (want %llu)", type,
		     want, (unsigned long long)sz, (unsigned long long)size);
	return ok && type == want && sz == size;
}

static void write_getattr(CLIENT *cl)
{
	static nfs4_uint32 mask = ATTR_BIT(FATTR4_TYPE) | ATTR_BIT(FATTR4_SIZE);
	const uint32_t len = 8192;
	uint8_t *data = malloc(len);
	struct outcome o;
	struct cmp c;

	t_fill(data, len, 99);
	c_init(&c, "t_nfs4 write+getattr");
	c_putfh(&c, fh_of(ATTR_FILE));
	c_write(&c, 0, data, len);
	c_getattr(&c, &mask);
	compound(cl, &c, &o);
	CHECK(all_ok(&o, &c) && write_result_ok(&o, 2, len) &&
		      attrs_ok(&o, 3, NF4REG, len),
	      "SEQUENCE+PUTFH+WRITE %u+GETATTR(TYPE, SIZE): NFS4_OK, the "
	      "attributes decode, size %u [%s]",
	      len, len, status(&o));
	check_read_chunk(&o, "WRITE before GETATTR", len);
	CHECK(D(&o, reply_chunks) == 0 && D(&o, write_chunks) == 0 &&
		      D(&o, resends) == 0,
	      "WRITE+GETATTR: no Reply chunk (%llu: fattr4 has no bound, "
	      "the reply is asked inline and fits; %llu resent), no Write chunk (%llu)",
	      D(&o, reply_chunks), D(&o, resends), D(&o, write_chunks));
	done(&o);
	free(data);
}

static void read_getattr(CLIENT *cl)
{
	static nfs4_uint32 mask = ATTR_BIT(FATTR4_TYPE) | ATTR_BIT(FATTR4_SIZE);
	const struct rd r = { 4, 0, 100001 };
	struct outcome o;
	struct cmp c;

	c_init(&c, "t_nfs4 read+getattr");
	c_read(&c, fh_of(r.file), r.off, r.count, &anon_sid);
	c_getattr(&c, &mask);
	compound(cl, &c, &o);
	CHECK(all_ok(&o, &c) && read_ok(&o, 2, &r) &&
		      attrs_ok(&o, 3, NF4REG, sizes[r.file]),
	      "SEQUENCE+PUTFH+READ %u+GETATTR: data intact, size %u [%s]",
	      r.count, sizes[r.file], status(&o));
	CHECK(D(&o, write_chunks) == 1 && D(&o, write_bytes) == r.count &&
		      D(&o, reply_chunks) == 0 && D(&o, resends) == 0,
	      "READ+GETATTR: 1 Write chunk (%llu) of %u octets (%llu), and "
	      "no Reply chunk (%llu: the rest is asked inline and fits)",
	      D(&o, write_chunks), r.count, D(&o, write_bytes),
	      D(&o, reply_chunks));
	done(&o);
}

static void commit(CLIENT *cl)
{
	nfs_resop4 *r;
	struct outcome o;
	struct cmp c;
	COMMIT4args *a;

	c_init(&c, "t_nfs4 commit");
	c_putfh(&c, fh_of(ATTR_FILE));
	a = &op_add(&c, OP_COMMIT)->nfs_argop4_u.opcommit;
	a->offset = 0;
	a->count = 0;
	compound(cl, &c, &o);
	r = res_op(&o, 2, OP_COMMIT);
	CHECK(all_ok(&o, &c) && r &&
		      !memcmp(r->nfs_resop4_u.opcommit.COMMIT4res_u.resok4
				      .writeverf,
			      last_verf, sizeof(last_verf)) &&
		      D(&o, read_chunks) + D(&o, write_chunks) +
				      D(&o, reply_chunks) ==
			      0,
	      "SEQUENCE+PUTFH+COMMIT: NFS4_OK, WRITE's verifier, no chunk "
	      "(%llu Read, %llu Write, %llu Reply) [%s]",
	      D(&o, read_chunks), D(&o, write_chunks), D(&o, reply_chunks),
	      status(&o));
	done(&o);
}

/* ---- The test --------------------------------------------------------------------- */

/* The checks after td_nfs_main's NULL and WRITE of every file. */
static void run(CLIENT *cl)
{
	read_all(cl); /* 1 */
	overwrite(cl);
	multi_reads(cl);   /* 2, 6 */
	failing_reads(cl); /* 3 */
	links(cl);	   /* 4 */
	write_getattr(cl); /* 5 */
	read_getattr(cl);
	commit(cl);
}

int main(int argc, char **argv)
{
	static const struct td_nfs t = {
		.name = "t_nfs4",
		.server = "nfs4_server",
		.prog = NFS4_PROGRAM,
		.vers = NFS_V4,
		.call_proc = NFSPROC4_COMPOUND,
		.reply_proc = NFSPROC4_COMPOUND,
		.entries = "the built-in NFSv4 COMPOUND entries are there",
		.null = nfsproc4_null_4,
		.files = { sizes, NFILES, image, write_file },
		.run = run,
	};

	return td_nfs_main(argc, argv, &t);
}
