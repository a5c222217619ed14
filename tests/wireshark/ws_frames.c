/*
 * ws_frames.c - the transport headers our own codec (src/wire/rw_hdr.c,
 * rw_props.c) writes, one of each message shape of both versions, printed
 * for tests/wireshark/dissect.sh to wrap in RoCEv2 frames and read back
 * with tshark and tools/wireshark/rpcrdma.lua.
 *
 * One line per header: NAME, the fields the dissector must show
 * (vers,xid,credits,proc,err,direction,inv_handle, with "-" for a field the
 * message does not have), then the octets as hex.  A MSG carries a NULL
 * Call (RFC 5531: prog 100003 vers 3 proc 0, AUTH_NONE) whose XID is the
 * header's (V1-HDR-2), so that rpc.xid and rpc.program can be checked.
 */
#include <stdio.h>
#include <string.h>

#include "wire/rw_hdr.h"
#include "wire/rw_props.h"

#define XID_CALL 0x2a000001u

static unsigned char buf[4096];

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static size_t put_words(size_t off, const uint32_t *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		put32(buf + off + 4 * i, w[i]);
	return 4 * n;
}

/* A NULL Call after the header at buf + off: its octets. */
static size_t null_call(size_t off, uint32_t xid)
{
	const uint32_t w[] = { xid, 0, 2, 100003, 3, 0, 0, 0, 0, 0 };

	return put_words(off, w, sizeof(w) / sizeof(w[0]));
}

/*
 * NFSv3 with its data moved by RDMA (RFC 8166 3.4.5-3.4.6): the message
 * stops after the length word of the data item moved.  A WRITE Call of
 * NFS_DATA octets (RFC 1813 3.3.7: a file handle of 8 octets, offset,
 * count, FILE_SYNC, data<>) whose data is in a Read chunk at position
 * NFS_WRITE_POS; a READ Call and its Reply of NFS_RESULT octets, the data
 * in a Write chunk (3.3.6: NFS3_OK, no attributes, count, eof, data<>).
 */
#define NFS_DATA      4096u
#define NFS_RESULT    100u
#define NFS_WRITE_POS 72u

static size_t nfs_write_call(size_t off, uint32_t xid)
{
	const uint32_t w[] = { xid,	   0, 2, 100003,   3, 7,
			       0,	   0, 0, 0,	   8, 0x01020304,
			       0x05060708, 0, 0, NFS_DATA, 2, NFS_DATA };

	return put_words(off, w, sizeof(w) / sizeof(w[0]));
}

static size_t nfs_read_call(size_t off, uint32_t xid)
{
	const uint32_t w[] = { xid,	   0, 2, 100003,    3, 6,
			       0,	   0, 0, 0,	    8, 0x01020304,
			       0x05060708, 0, 0, NFS_RESULT };

	return put_words(off, w, sizeof(w) / sizeof(w[0]));
}

static size_t nfs_read_reply(size_t off, uint32_t xid)
{
	const uint32_t w[] = { xid, 1, 0,	   0, 0,	 0,
			       0,   0, NFS_RESULT, 1, NFS_RESULT };

	return put_words(off, w, sizeof(w) / sizeof(w[0]));
}

/* Print header h and the RPC message body() writes after it, if any. */
static int emit(const char *name, const struct rw_hdr *h,
		size_t (*body)(size_t off, uint32_t xid), const char *err)
{
	size_t n = rw_hdr_encode(h, buf, sizeof(buf));

	if (n == 0) {
		fprintf(stderr, "ws_frames: %s: rw_hdr_encode refused it\n",
			name);
		return 1;
	}
	if (body)
		n += body(n, h->xid);
	printf("%s\t%u,0x%08x,%u,%u,%s,", name, h->vers, h->xid, h->credit,
	       h->proc, err);
	if (h->vers == RW_VERS_2 && h->proc <= RW_NOMSG)
		printf("%u,0x%08x\t", h->direction, h->inv_handle);
	else
		printf("-,-\t");
	for (size_t i = 0; i < n; i++)
		printf("%02x", buf[i]);
	printf("\n");
	return 0;
}

int main(void)
{
	struct rw_segment ws[2] = { { 0xa101, 8192, 0x7f0000001000ull },
				    { 0xa102, 4096, 0x7f0000003000ull } };
	struct rw_segment rs = { 0xa103, 1024, 0x7f0000005000ull };
	struct rw_read_seg rd[2] = { { 0, { 0xa104, 2048, 0x7f0000006000ull } },
				     { 96,
				       { 0xa105, 100, 0x7f0000007000ull } } };
	struct rw_chunk wc = { 2, ws };
	struct rw_prop props[2] = { { RW2_PROP_RBSIZ, 4, NULL },
				    { RW2_PROP_BRS, 4, NULL } };
	static const unsigned char rbsiz[4] = { 0, 0, 0x20, 0 };
	static const unsigned char brs[4] = { 0, 0, 0, 2 };
	unsigned char optinfo[64];
	struct rw_subset done = { 0 }, rej = { 0 };
	struct rw_hdr h;
	int fails = 0;
	uint32_t vers;

	props[0].data = rbsiz;
	props[1].data = brs;
	for (vers = RW_VERS_1; vers <= RW_VERS_2; vers++) {
		char name[32];

		/* A Short Call with every chunk list (V2-RI-1). */
		rw_hdr_init(&h, vers, RW_MSG, XID_CALL + vers, 32);
		h.direction = RW_DIR_CALL;
		h.inv_handle = vers == RW_VERS_2 ? 0xa103 : 0;
		h.nreads = 1;
		h.reads = &rd[1];
		h.nwrites = 1;
		h.writes = &wc;
		h.has_reply = true;
		h.reply.nsegs = 1;
		h.reply.segs = &rs;
		snprintf(name, sizeof(name), "codec-v%u-msg-call", vers);
		fails += emit(name, &h, null_call, "-");

		/* A Long Call: NOMSG with a position-zero Read chunk. */
		rw_hdr_init(&h, vers, RW_NOMSG, XID_CALL + 2 + vers, 32);
		h.direction = RW_DIR_CALL;
		h.nreads = 2;
		h.reads = rd;
		rd[1].position = 0;
		snprintf(name, sizeof(name), "codec-v%u-nomsg-call", vers);
		fails += emit(name, &h, NULL, "-");
		rd[1].position = 96;

		/* A Long Reply in the Reply chunk. */
		rw_hdr_init(&h, vers, RW_NOMSG, XID_CALL + vers, 16);
		h.direction = RW_DIR_REPLY;
		h.has_reply = true;
		h.reply.nsegs = 1;
		h.reply.segs = &rs;
		snprintf(name, sizeof(name), "codec-v%u-nomsg-reply", vers);
		fails += emit(name, &h, NULL, "-");

		/* ERR_VERS and ERR_CHUNK / BAD_XDR. */
		rw_hdr_init(&h, vers, RW_ERROR, XID_CALL + vers, 16);
		h.err.code = RW_ERR_VERS;
		h.err.low = 1;
		h.err.high = 2;
		snprintf(name, sizeof(name), "codec-v%u-err-vers", vers);
		fails += emit(name, &h, NULL, "1");
		h.err.code = RW_ERR_CHUNK;
		snprintf(name, sizeof(name), "codec-v%u-err-chunk", vers);
		fails += emit(name, &h, NULL, "2");
	}

	/* Every other v2 error body (draft section 7.2.4). */
	for (uint32_t code = RW2_ERR_INVAL_PROC; code <= RW2_ERR_SYSTEM;
	     code++) {
		char name[32], err[8];

		rw_hdr_init(&h, RW_VERS_2, RW_ERROR, XID_CALL, 16);
		h.err.code = code;
		h.err.max = 3;
		h.err.chunk_index = 1;
		h.err.length_needed = 9000;
		snprintf(name, sizeof(name), "codec-v2-err-%u", code);
		snprintf(err, sizeof(err), "%u", code);
		fails += emit(name, &h, NULL, err);
	}

	/* The property exchange (draft section 6.3). */
	rw_hdr_init(&h, RW_VERS_2, RW2_CONNPROP, 0x2b000001, 32);
	h.props.n = 2;
	h.props.props = props;
	rw_subset_set(&h.subset1, 1);
	fails += emit("codec-v2-connprop", &h, NULL, "-");
	rw_hdr_init(&h, RW_VERS_2, RW2_REQPROP, 0x2b000002, 32);
	h.props.n = 1;
	h.props.props = props;
	fails += emit("codec-v2-reqprop", &h, NULL, "-");
	rw_hdr_init(&h, RW_VERS_2, RW2_RESPROP, 0x2b000002, 16);
	rw_subset_set(&h.subset2, 0);
	h.props.n = 0;
	fails += emit("codec-v2-resprop", &h, NULL, "-");
	rw_hdr_init(&h, RW_VERS_2, RW2_UPDPROP, 0x2b000003, 16);
	h.props.n = 1;
	h.props.props = &props[1];
	fails += emit("codec-v2-updprop", &h, NULL, "-");

	/* An OPTIONAL carrying an xcharext-02 RESPXCH, the one xcharext body
	 * the library writes (AMB-V2-1), then one with an opttype nobody
	 * defines and a NULL Call after it (V2-PAY-3). */
	rw_subset_set(&done, 0);
	rw_subset_set(&rej, 2);
	rw_hdr_init(&h, RW_VERS_2, RW2_OPTIONAL, 0x2b000004, 16);
	h.opt.dir = RW_DIR_REPLY;
	h.opt.type = RW_XC_RESPXCH;
	h.opt.len = (uint32_t)rw_xchar_respxch(&done, &rej, optinfo,
					       sizeof(optinfo));
	h.opt.info = optinfo;
	fails += emit("codec-v2-optional-respxch", &h, NULL, "-");
	rw_hdr_init(&h, RW_VERS_2, RW2_OPTIONAL, XID_CALL + 9, 32);
	h.opt.dir = RW_DIR_CALL;
	h.opt.type = 0x4000;
	h.opt.len = 5;
	h.opt.info = (const uint8_t *)"hello";
	fails += emit("codec-v2-optional-call", &h, null_call, "-");

	/* NFSv3 WRITE and READ with their data moved, in v1 and v2. */
	rd[0].position = NFS_WRITE_POS;
	rd[0].seg.length = NFS_DATA;
	ws[0].length = NFS_RESULT;
	wc.nsegs = 1;
	for (vers = RW_VERS_1; vers <= RW_VERS_2; vers++) {
		char name[32];

		rw_hdr_init(&h, vers, RW_MSG, 0x2c000001 + vers, 32);
		h.direction = RW_DIR_CALL;
		h.nreads = 1;
		h.reads = rd;
		snprintf(name, sizeof(name), "nfs-v%u-write-call", vers);
		fails += emit(name, &h, nfs_write_call, "-");
		rw_hdr_init(&h, vers, RW_MSG, 0x2c000003 + vers, 32);
		h.direction = RW_DIR_CALL;
		h.nwrites = 1;
		h.writes = &wc;
		snprintf(name, sizeof(name), "nfs-v%u-read-call", vers);
		fails += emit(name, &h, nfs_read_call, "-");
		h.credit = 16;
		h.direction = RW_DIR_REPLY;
		snprintf(name, sizeof(name), "nfs-v%u-read-reply", vers);
		fails += emit(name, &h, nfs_read_reply, "-");
	}
	return fails ? 1 : 0;
}
