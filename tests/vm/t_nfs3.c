/*
 * t_nfs3.c - NFSv3 READ and WRITE shapes over RPC-over-RDMA with the
 * BUILT-IN Upper-Layer Binding (RFC 8267 section 4 as
 * src/ulb/ulb_nfs.c has it): the RFC 1813 excerpt tests/unit/ulb/nfs3.x
 * through rpcgen -M, the project's CLIENT against nfs3_server (in memory),
 * both with RPCRDMA_ULB_CONF=/dev/null so no configuration file adds to
 * the table.
 *
 * It owns the checks that WRITE's file data, and nothing else, travels in
 * a Read chunk (exactly one per WRITE too large for a Short Call, none
 * below the default minimum), that READ's data comes back in a Write chunk
 * whose room is
 * the call's count with the exact length returned (short reads at EOF
 * too), that an unused Write chunk moves nothing, that SYMLINK's path is
 * the other eligible argument, and that every octet written reads back.
 * Counters are CLGET_RDMA_STATS deltas around single calls.
 *
 * One line per check; exit 0 only when all passed, 77 without a device.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "glue/rpcrdma_attr.h" /* RPCRDMA_DEFAULT_DDP_MIN */
#include "nfs3.h"
#include "tests/vm/t_clnt_util.h"
#include "tests/vm/t_ddp_util.h"

/* Rooms from here on surely get a Write chunk (smaller READs fit inline
 * anyway, and the client may keep them there). */
#define WRITE_CHUNK_SURE 4096u

static const uint32_t sizes[] = {
	1, 3, 1000, 1025, 4097, 100001, MiB, MiB + 3,
};
#define NFILES (sizeof(sizes) / sizeof(sizes[0]))

/* What each file should hold now. */
static uint8_t *image[NFILES];

/* ---- Helpers ---------------------------------------------------------------- */

static void handle(nfs_fh3 *fh, unsigned int i, char *buf)
{
	/* never empty: an empty handle would shift WRITE's data to item 0 */
	snprintf(buf, 32, "ddp-nfs3-file-%u", i);
	fh->data.data_len = (u_int)strlen(buf);
	fh->data.data_val = buf;
}

static const char *status(enum clnt_stat st, CLIENT *cl)
{
	return st == RPC_SUCCESS ? "ok" : td_errmsg(cl);
}

/* ---- WRITE -------------------------------------------------------------------- */

static void write_file(CLIENT *cl, unsigned int i, uint64_t off,
		       const uint8_t *data, uint32_t len)
{
	struct rpcrdma_clnt_stats a, b;
	unsigned long long rc;
	WRITE3args arg;
	WRITE3res res;
	char fhb[32];
	enum clnt_stat st;

	memset(&arg, 0, sizeof(arg));
	memset(&res, 0, sizeof(res));
	handle(&arg.file, i, fhb);
	arg.offset = off;
	arg.count = len;
	arg.stable = FILE_SYNC;
	arg.data.data_len = len;
	arg.data.data_val = (char *)data;
	td_stats(cl, &a);
	st = nfsproc3_write_3(&arg, &res, cl);
	td_stats(cl, &b);
	CHECK(st == RPC_SUCCESS && res.status == NFS3_OK &&
		      res.WRITE3res_u.resok.count == len &&
		      res.WRITE3res_u.resok.committed == FILE_SYNC,
	      "WRITE %u octets at %llu to %s: NFS3_OK, count %u, FILE_SYNC [%s]",
	      len, (unsigned long long)off, fhb,
	      st == RPC_SUCCESS ? res.WRITE3res_u.resok.count : 0,
	      status(st, cl));
	rc = TD_D(&b, &a, read_chunks);
	CHECK(td_read_chunk_ok(rc, len) &&
		      TD_D(&b, &a, read_bytes) == (rc ? len : 0) &&
		      TD_D(&b, &a, write_chunks) == 0 &&
		      TD_D(&b, &a, long_replies) == 0 &&
		      TD_D(&b, &a, long_calls) == 0,
	      "WRITE %u: %s (%llu, %llu octets), no Write chunk (%llu), "
	      "reply inline (%llu Long), no Long call (%llu)",
	      len,
	      len < RPCRDMA_DEFAULT_DDP_MIN ?
		      "below the minimum: no Read chunk" :
	      len < TD_MUST_REDUCE ?
		      "the data in a Read chunk or inline (the Call fits)" :
		      "the data, and only it, in a Read chunk",
	      rc, TD_D(&b, &a, read_bytes), TD_D(&b, &a, write_chunks),
	      TD_D(&b, &a, long_replies), TD_D(&b, &a, long_calls));
	if (st == RPC_SUCCESS)
		xdr_free((xdrproc_t)xdr_WRITE3res, (char *)&res);
}

/* ---- READ ---------------------------------------------------------------------- */

/* READ count at off of file i; want = the octets expected (image). */
static void read_file(CLIENT *cl, unsigned int i, uint64_t off, uint32_t count,
		      const uint8_t *want, uint32_t wlen, bool eof,
		      uint8_t *caller)
{
	READ3resok *ok;
	struct rpcrdma_clnt_stats a, b;
	READ3args arg;
	READ3res res;
	char fhb[32];
	enum clnt_stat st;
	bool good, sure = count >= WRITE_CHUNK_SURE;
	unsigned long long wc, wb;

	memset(&arg, 0, sizeof(arg));
	memset(&res, 0, sizeof(res));
	ok = &res.READ3res_u.resok;
	handle(&arg.file, i, fhb);
	arg.offset = off;
	arg.count = count;
	if (caller) {
		/* the arm that will hold the data, with the caller's buffer
		 * of the room's capacity in it */
		res.status = NFS3_OK;
		ok->data.data_val = (char *)caller;
		ok->data.data_len = count;
	}
	td_stats(cl, &a);
	st = nfsproc3_read_3(&arg, &res, cl);
	td_stats(cl, &b);
	good = st == RPC_SUCCESS && res.status == NFS3_OK &&
	       ok->count == wlen && ok->data.data_len == wlen &&
	       !ok->eof == !eof && !memcmp(ok->data.data_val, want, wlen);
	if (caller)
		good = good && ok->data.data_val == (char *)caller;
	CHECK(good, "READ %u at %llu of %s%s: %u octets intact, eof %s [%s]",
	      count, (unsigned long long)off, fhb,
	      caller ? " into the caller's buffer" : "", wlen,
	      eof ? "TRUE" : "FALSE", status(st, cl));
	wc = TD_D(&b, &a, write_chunks);
	wb = TD_D(&b, &a, write_bytes);
	CHECK((sure ? wc == 1 : wc <= 1) && wb == (wc ? wlen : 0) &&
		      TD_D(&b, &a, read_chunks) == 0 &&
		      TD_D(&b, &a, long_calls) == 0 &&
		      TD_D(&b, &a, reply_chunks) == 0 &&
		      TD_D(&b, &a, ddp_zero_copies) +
				      TD_D(&b, &a, ddp_copies) ==
			      wc,
	      "READ %u: the data in a Write chunk of room %u (%llu, %llu "
	      "octets%s), nothing else reduced (Read %llu, Reply %llu) "
	      "(V1-WC-4/10)",
	      count, count, wc, wb, sure ? "" : "; optional below 4 KiB",
	      TD_D(&b, &a, read_chunks), TD_D(&b, &a, reply_chunks));
	if (caller && count >= MiB)
		CHECK(TD_D(&b, &a, ddp_zero_copies) == TD_ZERO_COPY &&
			      TD_D(&b, &a, ddp_copies) == !TD_ZERO_COPY,
		      "READ %u into the caller's buffer (READ3res preset to "
		      "NFS3_OK): zero copy %llu, copies %llu",
		      count, TD_D(&b, &a, ddp_zero_copies),
		      TD_D(&b, &a, ddp_copies));
	if (st == RPC_SUCCESS && !caller)
		xdr_free((xdrproc_t)xdr_READ3res, (char *)&res);
}

static void read_missing(CLIENT *cl)
{
	struct rpcrdma_clnt_stats a, b;
	READ3args arg;
	READ3res res;
	char fhb[32];
	enum clnt_stat st;

	memset(&arg, 0, sizeof(arg));
	memset(&res, 0, sizeof(res));
	handle(&arg.file, 999, fhb);
	arg.count = 65536;
	td_stats(cl, &a);
	st = nfsproc3_read_3(&arg, &res, cl);
	td_stats(cl, &b);
	CHECK(st == RPC_SUCCESS && res.status == NFS3ERR_NOENT &&
		      TD_D(&b, &a, write_bytes) == 0,
	      "READ of an unknown handle: NFS3ERR_NOENT, the Write chunk "
	      "unused (%llu octets) (V1-WC-6) [%s]",
	      TD_D(&b, &a, write_bytes), status(st, cl));
	if (st == RPC_SUCCESS)
		xdr_free((xdrproc_t)xdr_READ3res, (char *)&res);
}

/* ---- Other procedures: error statuses ------------------------------------------ */

static void symlink_case(CLIENT *cl, uint32_t plen)
{
	struct rpcrdma_clnt_stats a, b;
	unsigned long long rc;
	SYMLINK3args arg;
	SYMLINK3res res;
	char fhb[32], name[] = "link";
	char *path = malloc(plen + 1);
	enum clnt_stat st;

	memset(path, 'p', plen);
	path[plen] = 0;
	memset(&arg, 0, sizeof(arg));
	memset(&res, 0, sizeof(res));
	handle(&arg.where.dir, 0, fhb);
	arg.where.name = name;
	arg.symlink.symlink_data = path;
	td_stats(cl, &a);
	st = nfsproc3_symlink_3(&arg, &res, cl);
	td_stats(cl, &b);
	rc = TD_D(&b, &a, read_chunks);
	CHECK(st == RPC_SUCCESS && res.status == NFS3ERR_NOTSUPP &&
		      td_read_chunk_ok(rc, plen) &&
		      TD_D(&b, &a, read_bytes) == (rc ? plen : 0),
	      "SYMLINK, path of %u: NFS3ERR_NOTSUPP; the path, item 2, %s "
	      "(%llu Read chunk, %llu octets) [%s]",
	      plen, plen >= TD_MUST_REDUCE ? "in a Read chunk" : "inline", rc,
	      TD_D(&b, &a, read_bytes), status(st, cl));
	if (st == RPC_SUCCESS)
		xdr_free((xdrproc_t)xdr_SYMLINK3res, (char *)&res);
	free(path);
}

static void readlink_case(CLIENT *cl)
{
	struct rpcrdma_clnt_stats a, b;
	READLINK3args arg;
	READLINK3res res;
	char fhb[32];
	enum clnt_stat st;

	memset(&arg, 0, sizeof(arg));
	memset(&res, 0, sizeof(res));
	handle(&arg.symlink, 0, fhb);
	td_stats(cl, &a);
	st = nfsproc3_readlink_3(&arg, &res, cl);
	td_stats(cl, &b);
	CHECK(st == RPC_SUCCESS && res.status == NFS3ERR_NOTSUPP &&
		      TD_D(&b, &a, write_bytes) == 0 &&
		      TD_D(&b, &a, read_chunks) == 0,
	      "READLINK: NFS3ERR_NOTSUPP, nothing placed (%llu octets) [%s]",
	      TD_D(&b, &a, write_bytes), status(st, cl));
	if (st == RPC_SUCCESS)
		xdr_free((xdrproc_t)xdr_READLINK3res, (char *)&res);
}

/* ---- The test --------------------------------------------------------------------- */

static void read_all(CLIENT *cl)
{
	unsigned int i;

	for (i = 0; i < NFILES; i++)
		read_file(cl, i, 0, sizes[i], image[i], sizes[i], true, NULL);
}

/* Overwrite the middle of the 1 MiB file at an odd offset, read it all. */
static void overwrite(CLIENT *cl, unsigned int i)
{
	const uint32_t off = 12345, len = 70001;
	uint8_t *data = malloc(len);

	t_fill(data, len, 77);
	write_file(cl, i, off, data, len);
	memcpy(image[i] + off, data, len);
	read_file(cl, i, 0, sizes[i], image[i], sizes[i], true, NULL);
	free(data);
}

static void short_reads(CLIENT *cl, unsigned int i)
{
	uint32_t size = sizes[i], off = size - 1001;
	uint8_t *buf = td_guarded(MiB);

	/* count beyond EOF: 1001 octets come back in a room of 65536 */
	read_file(cl, i, off, 65536, image[i] + off, 1001, true, NULL);
	/* not at EOF */
	read_file(cl, i, 1, 65536, image[i] + 1, 65536, false, NULL);
	/* the 1 MiB file into the caller's buffer */
	read_file(cl, 6, 0, MiB, image[6], MiB, true, buf);
	CHECK(td_guard_ok(buf, MiB), "... nothing written past the buffer");
	free(buf);
}

/* The checks after td_nfs_main's NULL and WRITE of every file. */
static void run(CLIENT *cl)
{
	read_all(cl);
	overwrite(cl, 6);
	short_reads(cl, 5); /* the 100001-octet file */
	read_missing(cl);
	symlink_case(cl, 14);
	symlink_case(cl, 5000);
	readlink_case(cl);
}

int main(int argc, char **argv)
{
	static const struct td_nfs t = {
		.name = "t_nfs3",
		.server = "nfs3_server",
		.prog = NFS_PROGRAM,
		.vers = NFS_V3,
		.call_proc = NFSPROC3_WRITE,
		.reply_proc = NFSPROC3_READ,
		.entries =
			"the built-in NFSv3 WRITE and READ entries are there",
		.null = nfsproc3_null_3,
		.files = { sizes, NFILES, image, write_file },
		.run = run,
	};

	return td_nfs_main(argc, argv, &t);
}
