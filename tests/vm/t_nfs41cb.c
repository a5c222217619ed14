/*
 * t_nfs41cb.c - NFSv4.1 callbacks from the Linux kernel NFS server over
 * RPC-over-RDMA: the backward direction (RFC 8167) of
 * librpcrdma against a peer we did not write.
 *
 * An rpcgen NFSv4.1 client (tests/vm/nfs41.x) on a librpcrdma CLIENT
 * serves the callback program on svc_rdma_bc_create(cl) before it creates
 * its session, then: EXCHANGE_ID, CREATE_SESSION with the back channel on
 * the same connection (CONN_BACK_CHAN, our own csa_cb_program, AUTH_SYS
 * callback credentials), RECLAIM_COMPLETE; it waits for nfsd to report
 * the callback channel up (/proc/fs/nfsd/clients/N/info "callback state:
 * UP", and no CB_PATH_DOWN in SEQUENCE's status flags; Linux 6.1 sends no
 * CB_NULL to an NFSv4.1 client, so none is required, one that comes is
 * answered); OPENs a file for read wanting a read delegation, and gets
 * one.  A second client - the kernel NFS
 * client, mounted by the wrapper (t_nfs41cb.sh) - opens the file for
 * write: nfsd sends CB_COMPOUND(CB_SEQUENCE, CB_RECALL) over our
 * connection; we answer it (CB_SEQUENCE echoing the session, slot and
 * sequence, RFC 5661 section 20.9.3; CB_RECALL NFS4_OK after checking its
 * stateid and filehandle are the delegation's), then DELEGRETURN, and the
 * second client's write completes.  CLOSE, DESTROY_SESSION,
 * DESTROY_CLIENTID.  Over IPv4 (netid rdma) and IPv6 (rdma6), a file each.
 * Transport checks: the callbacks counted by CLGET_RDMA_STATS as taken
 * and answered, none dropped (the kernel's backward calls are inline
 * RDMA_MSG without chunks, within our grant: V1-BD-3, V1-BD-8, V1-BD-9),
 * on the one connection of the CLIENT.
 *
 * The kernel speaks RPC-over-RDMA version 1 only: unless RPCRDMA_VERSION
 * is 1, the CLIENT offers version 2 (the variable is set to "auto", so a
 * forced 2 cannot make the test meaningless) and must go on in version 1.
 *
 * usage: t_nfs41cb EXPORT MOUNT [PORT]
 *   EXPORT  the directory nfsd exports as the NFSv4 root (fsid=0)
 *   MOUNT   where the kernel client has mounted it (vers=4.1)
 *   PORT    nfsd's RDMA port (20049)
 * One line per check; exit 0 only when all passed, 77 without a device.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "nfs41.h"
#include "tests/vm/t_clnt_util.h"
#include "tests/vm/t_ddp_util.h"

#define WATCHDOG_S     100 /* the VM suite kills at 120 s */
#define CALL_TIMEOUT_S 10
/* Our csa_cb_program: not the conventional 0x40000000, so a callback that
 * reaches the dispatch function proves the server took ours. */
#define CB_PROG 0x40000141u
/* AUTH_SYS credentials the server is to call back with. */
#define CB_UID	     4141u
#define CB_GID	     4142u
#define MAX_OPS	     6u
#define MAX_BC_SLOTS 16u
/* An RPC-over-RDMA version 1 header without chunks: what a Receive holds
 * beyond the RPC message. */
#define V1_HDR	       28u
#define CB_UP_WAIT_MS  15000
#define GRACE_WAIT_MS  25000
#define RECALL_WAIT_MS 20000
#define WRITER_WAIT_MS 30000
#define RENEW_MS       2000 /* lease renewal: nfsd's lease is 10 s */
#define NFSD_CLIENTS   "/proc/fs/nfsd/clients"

static const char initial_text[] = "t_nfs41cb: before the recall\n";
static const char writer_text[] = "t_nfs41cb: the second client's write\n";

/* rpcgen's dispatch function of the callback program (nfs41_svc.c). */
void nfs4_callback_1(struct svc_req *rq, SVCXPRT *x);

/* ---- What the callback service saw (shared with its polling thread) ------ */

/* What the callback service saw and what it needs to know: set by the
 * main thread (the session, the delegation) and by the callbacks. */
struct cbseen {
	bool have_session;
	sessionid4 sid;
	unsigned int nslots; /* back channel slots granted */
	bool have_deleg;
	stateid4 deleg;
	char fh[NFS4_FHSIZE];
	u_int fhlen;
	uint32_t slot_seq[MAX_BC_SLOTS]; /* last sequenceid per slot */
	unsigned int calls;		 /* reached the dispatch function */
	unsigned int not_sys;		 /* ... without our AUTH_SYS cred */
	unsigned int nulls, compounds;
	unsigned int seq_ok, seq_bad; /* CB_SEQUENCEs taken, refused */
	uint32_t cb_seq, cb_slot;     /* the last CB_SEQUENCE's */
	unsigned int recalls, recall_bad;
	nfsstat4 recall_status; /* our last CB_RECALL answer */
	bool recall_truncate;
	unsigned int other_ops;	    /* operations not expected */
	int64_t null_ms, recall_ms; /* first arrival */
	uint32_t flavor, uid, gid;  /* of the last call */
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct cbseen s;
} cb = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

static void cb_reset(void)
{
	pthread_mutex_lock(&cb.lock);
	memset(&cb.s, 0, sizeof(cb.s));
	pthread_mutex_unlock(&cb.lock);
}

static struct cbseen cb_snapshot(void)
{
	struct cbseen s;

	pthread_mutex_lock(&cb.lock);
	s = cb.s;
	pthread_mutex_unlock(&cb.lock);
	return s;
}

/* Every callback: its credentials, then rpcgen's dispatch. */
static void cb_dispatch(struct svc_req *rq, SVCXPRT *x)
{
	const struct authunix_parms *sys = (const void *)rq->rq_clntcred;

	pthread_mutex_lock(&cb.lock);
	cb.s.calls++;
	cb.s.flavor = rq->rq_cred.oa_flavor;
	if (rq->rq_cred.oa_flavor == AUTH_SYS && sys) {
		cb.s.uid = sys->aup_uid;
		cb.s.gid = sys->aup_gid;
	}
	if (rq->rq_cred.oa_flavor != AUTH_SYS || !sys ||
	    sys->aup_uid != CB_UID || sys->aup_gid != CB_GID)
		cb.s.not_sys++;
	pthread_mutex_unlock(&cb.lock);
	nfs4_callback_1(rq, x);
}

bool_t cb_null_1_svc(void *arg, void *res, struct svc_req *rq)
{
	pthread_mutex_lock(&cb.lock);
	if (!cb.s.nulls++)
		cb.s.null_ms = t_ms();
	pthread_cond_broadcast(&cb.cond);
	pthread_mutex_unlock(&cb.lock);
	return TRUE;
}

/*
 * CB_SEQUENCE (RFC 5661 section 20.9.3), lock held: our session, a slot
 * we granted, the next sequenceid of that slot; the reply echoes the
 * session, sequenceid and slot.  We cache no replies, so a retry gets
 * NFS4ERR_RETRY_UNCACHED_REP.
 */
static nfsstat4 cb_sequence(const CB_SEQUENCE4args *a, CB_SEQUENCE4resok *ok)
{
	uint32_t *last;

	if (!cb.s.have_session ||
	    memcmp(a->csa_sessionid, cb.s.sid, NFS4_SESSIONID_SIZE))
		return NFS4ERR_BADSESSION;
	if (a->csa_slotid >= cb.s.nslots)
		return NFS4ERR_BADSLOT;
	last = &cb.s.slot_seq[a->csa_slotid];
	if (a->csa_sequenceid == *last && *last)
		return NFS4ERR_RETRY_UNCACHED_REP;
	if (a->csa_sequenceid != *last + 1)
		return NFS4ERR_SEQ_MISORDERED;
	*last = a->csa_sequenceid;
	memcpy(ok->csr_sessionid, a->csa_sessionid, NFS4_SESSIONID_SIZE);
	ok->csr_sequenceid = a->csa_sequenceid;
	ok->csr_slotid = a->csa_slotid;
	ok->csr_highest_slotid = cb.s.nslots - 1;
	ok->csr_target_highest_slotid = cb.s.nslots - 1;
	return NFS4_OK;
}

static bool same_stateid(const stateid4 *a, const stateid4 *b)
{
	return a->seqid == b->seqid &&
	       !memcmp(a->other, b->other, NFS4_OTHER_SIZE);
}

/* CB_RECALL (section 20.2), lock held: the delegation we hold, by its
 * stateid and filehandle. */
static nfsstat4 cb_recall(const CB_RECALL4args *a)
{
	bool ok = cb.s.have_deleg && same_stateid(&a->stateid, &cb.s.deleg) &&
		  a->fh.nfs_fh4_len == cb.s.fhlen &&
		  !memcmp(a->fh.nfs_fh4_val, cb.s.fh, cb.s.fhlen);

	if (!cb.s.recalls++)
		cb.s.recall_ms = t_ms();
	cb.s.recall_truncate = a->truncate;
	if (!ok)
		cb.s.recall_bad++;
	cb.s.recall_status = ok ? NFS4_OK : NFS4ERR_BAD_STATEID;
	pthread_cond_broadcast(&cb.cond);
	return cb.s.recall_status;
}

/* One operation of a CB_COMPOUND into its result (lock held). */
static nfsstat4 cb_op(const nfs_cb_argop4 *op, nfs_cb_resop4 *r, u_int i)
{
	const CB_SEQUENCE4args *sa = &op->nfs_cb_argop4_u.opcbsequence;
	CB_SEQUENCE4res *sr = &r->nfs_cb_resop4_u.opcbsequence;

	r->resop = op->argop;
	if (op->argop == OP_CB_SEQUENCE) {
		sr->csr_status =
			i ? NFS4ERR_SEQUENCE_POS :
			    cb_sequence(sa, &sr->CB_SEQUENCE4res_u.csr_resok4);
		if (sr->csr_status == NFS4_OK) {
			cb.s.seq_ok++;
			cb.s.cb_seq = sa->csa_sequenceid;
			cb.s.cb_slot = sa->csa_slotid;
		} else {
			cb.s.seq_bad++;
		}
		return sr->csr_status;
	}
	if (op->argop == OP_CB_RECALL && i == 0) {
		/* NFSv4.1: CB_SEQUENCE first, or nothing is done */
		cb.s.other_ops++;
		return r->nfs_cb_resop4_u.opcbrecall.status =
			       NFS4ERR_OP_NOT_IN_SESSION;
	}
	if (op->argop == OP_CB_RECALL)
		return r->nfs_cb_resop4_u.opcbrecall.status =
			       cb_recall(&op->nfs_cb_argop4_u.opcbrecall);
	r->resop = OP_CB_ILLEGAL;
	cb.s.other_ops++;
	return r->nfs_cb_resop4_u.opcbillegal.status = NFS4ERR_OP_ILLEGAL;
}

bool_t cb_compound_1_svc(CB_COMPOUND4args *a, CB_COMPOUND4res *res,
			 struct svc_req *rq)
{
	u_int n = a->argarray.argarray_len, i;

	memset(res, 0, sizeof(*res));
	/* the tag is echoed (RFC 5661 section 19.2.3) */
	res->tag.utf8string_val = malloc(a->tag.utf8string_len + 1);
	res->resarray.resarray_val = calloc(n ? n : 1, sizeof(nfs_cb_resop4));
	if (!res->tag.utf8string_val || !res->resarray.resarray_val) {
		xdr_free((xdrproc_t)xdr_CB_COMPOUND4res, (char *)res);
		svcerr_systemerr(rq->rq_xprt);
		return FALSE;
	}
	if (a->tag.utf8string_len)
		memcpy(res->tag.utf8string_val, a->tag.utf8string_val,
		       a->tag.utf8string_len);
	res->tag.utf8string_len = a->tag.utf8string_len;
	pthread_mutex_lock(&cb.lock);
	cb.s.compounds++;
	if (a->minorversion != 1) {
		res->status = NFS4ERR_MINOR_VERS_MISMATCH;
		cb.s.other_ops++;
		n = 0;
	}
	for (i = 0; i < n; i++) {
		res->resarray.resarray_len = i + 1;
		res->status = cb_op(&a->argarray.argarray_val[i],
				    &res->resarray.resarray_val[i], i);
		if (res->status != NFS4_OK)
			break;
	}
	pthread_mutex_unlock(&cb.lock);
	return TRUE;
}

int nfs4_callback_1_freeresult(SVCXPRT *x, xdrproc_t proc, caddr_t res)
{
	xdr_free(proc, res);
	return 1;
}

/* ---- One client of the kernel server ------------------------------------- */

struct pass {
	const char *net; /* "rdma" or "rdma6" */
	const char *host;
	const char *file; /* its name in the export */
	CLIENT *cl;
	struct rpcrdma_clnt_stats st0; /* counters after creation */
	SVCXPRT *cbx;
	pthread_t poller;
	atomic_bool stop;
	bool polling;
	unsigned int bc_credits; /* the CLIENT's backward grant */
	char owner[96];		 /* co_ownerid, nfsd's "name" */
	clientid4 clid;
	sequenceid4 cs_seq;
	bool have_session;
	sessionid4 sid;
	uint32_t seq;	       /* slot 0's next sequenceid */
	uint32_t status_flags; /* the last SEQUENCE's */
	int64_t last_renew_ms;
	int64_t session_ms; /* CREATE_SESSION answered */
	bool opened, have_deleg;
	stateid4 open_sid, deleg_sid;
	char fh[NFS4_FHSIZE];
	u_int fhlen;
	char dir[PATH_MAX]; /* the client in NFSD_CLIENTS */
};

static const char *export_dir, *mount_dir;
static uint16_t nfs_port = 20049;
static bool v1_forced;

static void *poll_loop(void *arg)
{
	struct pass *p = arg;

	while (!p->stop)
		if (svc_rdma_bc_poll(p->cbx, 100) < 0)
			break;
	return NULL;
}

/* ---- COMPOUNDs ----------------------------------------------------------- */

struct cmp {
	COMPOUND4args args;
	nfs_argop4 ops[MAX_OPS];
	COMPOUND4res res;
	enum clnt_stat st;
	char why[200];
};

static nfs_argop4 *op_add(struct cmp *c, nfs_opnum4 op)
{
	nfs_argop4 *a;

	if (c->args.argarray.argarray_len >= MAX_OPS) {
		fprintf(stderr, "t_nfs41cb: more than %u operations\n",
			MAX_OPS);
		exit(1);
	}
	a = &c->ops[c->args.argarray.argarray_len++];
	memset(a, 0, sizeof(*a));
	a->argop = op;
	return a;
}

/* A COMPOUND of minor version 1, starting with SEQUENCE on slot 0 if the
 * session exists (seq). */
static void c_begin(struct cmp *c, struct pass *p, const char *tag, bool seq)
{
	SEQUENCE4args *s;

	memset(c, 0, sizeof(*c));
	c->args.tag.utf8string_len = (u_int)strlen(tag);
	c->args.tag.utf8string_val = (char *)tag;
	c->args.minorversion = 1;
	c->args.argarray.argarray_val = c->ops;
	if (!seq)
		return;
	s = &op_add(c, OP_SEQUENCE)->nfs_argop4_u.opsequence;
	memcpy(s->sa_sessionid, p->sid, NFS4_SESSIONID_SIZE);
	s->sa_sequenceid = p->seq;
	s->sa_slotid = 0;
	s->sa_highest_slotid = 0;
	s->sa_cachethis = FALSE;
}

static void c_putfh(struct cmp *c, struct pass *p)
{
	nfs_fh4 *o = &op_add(c, OP_PUTFH)->nfs_argop4_u.opputfh.object;

	o->nfs_fh4_len = p->fhlen;
	o->nfs_fh4_val = p->fh;
}

/* The result of the first op of that number, or NULL. */
static nfs_resop4 *c_res(struct cmp *c, nfs_opnum4 op)
{
	for (u_int i = 0; i < c->res.resarray.resarray_len; i++)
		if (c->res.resarray.resarray_val[i].resop == op)
			return &c->res.resarray.resarray_val[i];
	return NULL;
}

/* Does the reply have one result per operation, in order? */
static bool c_complete(const struct cmp *c)
{
	u_int n = c->args.argarray.argarray_len;

	if (c->res.resarray.resarray_len != n)
		return false;
	for (u_int i = 0; i < n; i++)
		if (c->res.resarray.resarray_val[i].resop != c->ops[i].argop)
			return false;
	return true;
}

/* Call it: true when the COMPOUND's status is NFS4_OK and every operation
 * has its result.  A SEQUENCE the server took moves slot 0 on and renews
 * the lease; c->why says what went wrong. */
static bool c_call(struct pass *p, struct cmp *c)
{
	nfs_resop4 *r;
	u_int n;

	c->st = nfsproc4_compound_4(&c->args, &c->res, p->cl);
	if (c->st != RPC_SUCCESS) {
		snprintf(c->why, sizeof(c->why), "%s [%s]", clnt_sperrno(c->st),
			 td_errmsg(p->cl));
		return false;
	}
	r = c->args.argarray.argarray_len && c->ops[0].argop == OP_SEQUENCE ?
		    c_res(c, OP_SEQUENCE) :
		    NULL;
	if (r && r->nfs_resop4_u.opsequence.sr_status == NFS4_OK) {
		p->seq++;
		p->last_renew_ms = t_ms();
		p->status_flags = r->nfs_resop4_u.opsequence.SEQUENCE4res_u
					  .sr_resok4.sr_status_flags;
	}
	n = c->res.resarray.resarray_len;
	snprintf(c->why, sizeof(c->why),
		 "status %d at operation %u of %u (op %d)", c->res.status, n,
		 c->args.argarray.argarray_len,
		 n ? (int)c->res.resarray.resarray_val[n - 1].resop : -1);
	if (c->res.status == NFS4_OK && !c_complete(c)) {
		snprintf(c->why, sizeof(c->why),
			 "NFS4_OK, but %u results for %u operations", n,
			 c->args.argarray.argarray_len);
		return false;
	}
	return c->res.status == NFS4_OK;
}

static void c_done(struct cmp *c)
{
	if (c->st == RPC_SUCCESS)
		xdr_free((xdrproc_t)xdr_COMPOUND4res, (char *)&c->res);
	memset(&c->res, 0, sizeof(c->res));
}

/* SEQUENCE alone: renews the lease, refreshes the status flags. */
static bool sequence(struct pass *p)
{
	struct cmp c;
	bool ok;

	c_begin(&c, p, "renew", true);
	ok = c_call(p, &c);
	if (!ok)
		NOTE("%s: SEQUENCE: %s", p->net, c.why);
	c_done(&c);
	return ok;
}

static void renew_if_due(struct pass *p)
{
	if (p->have_session && t_ms() - p->last_renew_ms >= RENEW_MS)
		sequence(p);
}

/* ---- nfsd's view: /proc/fs/nfsd/clients ---------------------------------- */

/* The value after "key: " in the info file of dir, "" when absent. */
static bool info_value(const char *dir, const char *key, char *val, size_t len)
{
	char path[PATH_MAX + 16], line[512];
	size_t kl = strlen(key);
	bool found = false;
	FILE *f;

	val[0] = 0;
	snprintf(path, sizeof(path), "%s/info", dir);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, kl) || line[kl] != ':')
			continue;
		snprintf(val, len, "%s", line + kl + 1 + (line[kl + 1] == ' '));
		val[strcspn(val, "\n")] = 0;
		found = true;
	}
	fclose(f);
	return found;
}

/* Find our client (nfsd's "name" is our co_ownerid) in NFSD_CLIENTS. */
static bool nfsd_client(struct pass *p)
{
	char name[sizeof(p->owner) + 3], val[256];
	struct dirent *e;
	DIR *d = opendir(NFSD_CLIENTS);

	p->dir[0] = 0;
	if (!d)
		return false;
	snprintf(name, sizeof(name), "\"%s\"", p->owner);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p->dir, sizeof(p->dir), NFSD_CLIENTS "/%s", e->d_name);
		if (info_value(p->dir, "name", val, sizeof(val)) &&
		    !strcmp(val, name))
			break;
		p->dir[0] = 0;
	}
	closedir(d);
	return p->dir[0] != 0;
}

/* Does the states file of our client hold a line with every needle? */
static bool states_line(const struct pass *p, const char *n1, const char *n2,
			const char *n3)
{
	char path[PATH_MAX + 16], line[1024];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/states", p->dir);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, n1) && strstr(line, n2) &&
			strstr(line, n3);
	fclose(f);
	return found;
}

/* ---- The steps ----------------------------------------------------------- */

static unsigned int version(CLIENT *cl)
{
	unsigned int v = 0;

	clnt_control(cl, CLGET_RDMA_VERSION, (char *)&v);
	return v;
}

static bool client_create(struct pass *p)
{
	struct timeval tv = { CALL_TIMEOUT_S, 0 };
	struct sockaddr_storage ss;
	struct rpcrdma_attr a;
	AUTH *auth;

	rpcrdma_attr_init(&a);
	p->bc_credits = a.bc_credits;
	t_sockaddr(&ss, p->host, nfs_port);
	p->cl = clnt_rdma_create((struct sockaddr *)&ss, NFS4_PROGRAM, NFS_V4,
				 &a);
	if (!CHECK_OK(p->cl != NULL, "%s: CLIENT for NFSv4 at %s port %u",
		      p->net, p->host, nfs_port)) {
		NOTE("%s", clnt_spcreateerror("clnt_rdma_create"));
		return false;
	}
	clnt_control(p->cl, CLSET_TIMEOUT, (char *)&tv);
	/* root, as the export's no_root_squash lets it read the file */
	auth = authunix_create("t_nfs41cb", 0, 0, 0, NULL);
	if (auth) {
		auth_destroy(p->cl->cl_auth);
		p->cl->cl_auth = auth;
	}
	td_stats(p->cl, &p->st0);
	return true;
}

/* Ready for callbacks before the session exists (RFC 8167 readiness,
 * V1-BD-7): the SVCXPRT, the program, the thread that polls it. */
static bool serve_callbacks(struct pass *p)
{
	p->cbx = svc_rdma_bc_create(p->cl);
	if (!CHECK_OK(p->cbx != NULL, "%s: svc_rdma_bc_create on the CLIENT",
		      p->net))
		return false;
	if (!CHECK_OK(svc_reg(p->cbx, CB_PROG, NFS_CB, cb_dispatch, NULL),
		      "%s: svc_reg of the callback program 0x%x on it", p->net,
		      CB_PROG))
		return false;
	p->stop = false;
	p->polling = !pthread_create(&p->poller, NULL, poll_loop, p);
	return CHECK_OK(p->polling, "%s: a thread polls it", p->net);
}

/* NFSPROC4_NULL settles the transport version: the kernel answers
 * version 2 with ERR_VERS (V2-NEG-4), the CLIENT goes on in version 1. */
static bool null_call(struct pass *p)
{
	struct rpcrdma_clnt_stats s;
	enum clnt_stat st;
	unsigned int v;

	st = nfsproc4_null_4(NULL, NULL, p->cl);
	if (!CHECK_OK(st == RPC_SUCCESS, "%s: NULL answered (%s)", p->net,
		      st == RPC_SUCCESS ? "ok" : td_errmsg(p->cl)))
		return false;
	v = version(p->cl);
	td_stats(p->cl, &s);
	if (v1_forced)
		CHECK(v == 1 && !TD_D(&s, &p->st0, v2_calls) &&
			      !TD_D(&s, &p->st0, vers_fallbacks),
		      "%s: RPCRDMA_VERSION=1: version %u from the start (v2 calls %llu, fallbacks %llu)",
		      p->net, v, TD_D(&s, &p->st0, v2_calls),
		      TD_D(&s, &p->st0, vers_fallbacks));
	else
		CHECK(v == 1 && TD_D(&s, &p->st0, vers_fallbacks) == 1 &&
			      TD_D(&s, &p->st0, resends) == 1 &&
			      s.connects == 1,
		      "%s: version 2 offered, the kernel answers ERR_VERS: the CLIENT sends again in version %u on the same connection (fallbacks %llu, resends %llu, connections %u) (V2-NEG-4, V2-NEG-5)",
		      p->net, v, TD_D(&s, &p->st0, vers_fallbacks),
		      TD_D(&s, &p->st0, resends), s.connects);
	NOTE("%s: the kernel grants %u forward credits", p->net, s.credits);
	return v == 1;
}

static bool exchange_id(struct pass *p)
{
	EXCHANGE_ID4args *e;
	EXCHANGE_ID4resok *ok;
	nfs_impl_id4 impl;
	uint64_t verf;
	struct cmp c;
	bool good;

	c_begin(&c, p, "exchange_id", false);
	e = &op_add(&c, OP_EXCHANGE_ID)->nfs_argop4_u.opexchange_id;
	/* this incarnation of the client: the process and the time */
	verf = (uint64_t)getpid() << 32 ^ (uint64_t)time(NULL);
	memcpy(e->eia_clientowner.co_verifier, &verf, NFS4_VERIFIER_SIZE);
	e->eia_clientowner.co_ownerid.co_ownerid_len = (u_int)strlen(p->owner);
	e->eia_clientowner.co_ownerid.co_ownerid_val = p->owner;
	e->eia_flags = 0;
	e->eia_state_protect.spa_how = SP4_NONE;
	memset(&impl, 0, sizeof(impl));
	impl.nii_domain.utf8string_val = (char *)"tirpc-rdma";
	impl.nii_domain.utf8string_len = 10;
	impl.nii_name.utf8string_val = (char *)"t_nfs41cb";
	impl.nii_name.utf8string_len = 9;
	e->eia_client_impl_id.eia_client_impl_id_len = 1;
	e->eia_client_impl_id.eia_client_impl_id_val = &impl;
	good = c_call(p, &c);
	if (CHECK_OK(good, "%s: EXCHANGE_ID (%s)", p->net,
		     good ? "ok" : c.why)) {
		ok = &c_res(&c, OP_EXCHANGE_ID)
			      ->nfs_resop4_u.opexchange_id.EXCHANGE_ID4res_u
			      .eir_resok4;
		p->clid = ok->eir_clientid;
		p->cs_seq = ok->eir_sequenceid;
		NOTE("%s: client id 0x%016llx, flags 0x%x", p->net,
		     (unsigned long long)p->clid, ok->eir_flags);
	}
	c_done(&c);
	return good;
}

static void chan_attrs(channel_attrs4 *ca, count4 req, count4 resp,
		       count4 cached, count4 ops, count4 reqs)
{
	memset(ca, 0, sizeof(*ca));
	ca->ca_maxrequestsize = req;
	ca->ca_maxresponsesize = resp;
	ca->ca_maxresponsesize_cached = cached;
	ca->ca_maxoperations = ops;
	ca->ca_maxrequests = reqs;
}

static bool create_session(struct pass *p)
{
	CREATE_SESSION4args *a;
	CREATE_SESSION4resok *ok;
	callback_sec_parms4 sec;
	channel_attrs4 *back;
	count4 slots = p->bc_credits < MAX_BC_SLOTS ? p->bc_credits :
						      MAX_BC_SLOTS;
	struct cmp c;
	bool good;

	c_begin(&c, p, "create_session", false);
	a = &op_add(&c, OP_CREATE_SESSION)->nfs_argop4_u.opcreate_session;
	a->csa_clientid = p->clid;
	a->csa_sequence = p->cs_seq;
	a->csa_flags = CREATE_SESSION4_FLAG_CONN_BACK_CHAN;
	/* fore: one slot; replies inline in our 4096-octet Receives (no
	 * Reply chunk is offered for these operations) */
	chan_attrs(&a->csa_fore_chan_attrs, 65536, 4096 - V1_HDR, 1024, 8, 1);
	/* back: calls inline in our Receives, as many as our backward
	 * grant, replies inline in the server's */
	chan_attrs(&a->csa_back_chan_attrs, 4096 - V1_HDR, 4096 - V1_HDR, 0, 4,
		   slots);
	a->csa_cb_program = CB_PROG;
	memset(&sec, 0, sizeof(sec));
	sec.cb_secflavor = AUTH_SYS;
	sec.callback_sec_parms4_u.cbsp_sys_cred.machinename =
		(char *)"t_nfs41cb";
	sec.callback_sec_parms4_u.cbsp_sys_cred.uid = CB_UID;
	sec.callback_sec_parms4_u.cbsp_sys_cred.gid = CB_GID;
	a->csa_sec_parms.csa_sec_parms_len = 1;
	a->csa_sec_parms.csa_sec_parms_val = &sec;
	good = c_call(p, &c);
	p->session_ms = t_ms();
	if (!CHECK_OK(good,
		      "%s: CREATE_SESSION, back channel on this connection (%s)",
		      p->net, good ? "ok" : c.why)) {
		c_done(&c);
		return false;
	}
	ok = &c_res(&c, OP_CREATE_SESSION)
		      ->nfs_resop4_u.opcreate_session.CREATE_SESSION4res_u
		      .csr_resok4;
	back = &ok->csr_back_chan_attrs;
	memcpy(p->sid, ok->csr_sessionid, NFS4_SESSIONID_SIZE);
	p->have_session = true;
	p->seq = 1;
	pthread_mutex_lock(&cb.lock);
	memcpy(cb.s.sid, p->sid, NFS4_SESSIONID_SIZE);
	cb.s.have_session = true;
	/* the server may lower our slot count, never raise it */
	cb.s.nslots = back->ca_maxrequests && back->ca_maxrequests < slots ?
			      back->ca_maxrequests :
			      slots;
	pthread_mutex_unlock(&cb.lock);
	CHECK(ok->csr_flags & CREATE_SESSION4_FLAG_CONN_BACK_CHAN,
	      "%s: the server binds the connection to the back channel (csr_flags 0x%x has CONN_BACK_CHAN)",
	      p->net, ok->csr_flags);
	CHECK(back->ca_maxrequests >= 1 &&
		      back->ca_maxrequests <= p->bc_credits,
	      "%s: back channel: %u slot(s), within our backward grant of %u (V1-BD-3)",
	      p->net, back->ca_maxrequests, p->bc_credits);
	NOTE("%s: back channel attrs: request %u, response %u, ops %u, slots %u; fore: request %u, response %u, slots %u",
	     p->net, back->ca_maxrequestsize, back->ca_maxresponsesize,
	     back->ca_maxoperations, back->ca_maxrequests,
	     ok->csr_fore_chan_attrs.ca_maxrequestsize,
	     ok->csr_fore_chan_attrs.ca_maxresponsesize,
	     ok->csr_fore_chan_attrs.ca_maxrequests);
	c_done(&c);
	return true;
}

static bool reclaim_complete(struct pass *p)
{
	struct cmp c;
	bool good;

	c_begin(&c, p, "reclaim_complete", true);
	op_add(&c, OP_RECLAIM_COMPLETE)
		->nfs_argop4_u.opreclaim_complete.rca_one_fs = FALSE;
	good = c_call(p, &c);
	CHECK(good, "%s: SEQUENCE + RECLAIM_COMPLETE (%s)", p->net,
	      good ? "ok" : c.why);
	c_done(&c);
	return good;
}

static const uint32_t cb_down_flags = SEQ4_STATUS_CB_PATH_DOWN |
				      SEQ4_STATUS_CB_PATH_DOWN_SESSION |
				      SEQ4_STATUS_BACKCHANNEL_FAULT;

/*
 * nfsd brings the callback channel up after CREATE_SESSION, from its
 * callback work queue.  For a 4.1 client Linux 6.1 sends no CB_NULL to
 * probe it (nfsd4_run_cb_work marks a session's channel up without a
 * call): the CB_RECALL below is the proof that it works.  A CB_NULL that
 * does come is answered (rpcgen's dispatch) and counted.
 */
static bool wait_cb_up(struct pass *p)
{
	int64_t deadline = t_ms() + CB_UP_WAIT_MS;
	char state[64] = "", addr[128] = "";
	unsigned int nulls;
	int64_t null_ms;

	for (;;) {
		sequence(p);
		pthread_mutex_lock(&cb.lock);
		nulls = cb.s.nulls;
		null_ms = cb.s.null_ms;
		pthread_mutex_unlock(&cb.lock);
		if (nfsd_client(p))
			info_value(p->dir, "callback state", state,
				   sizeof(state));
		if (!strcmp(state, "UP") || t_ms() >= deadline)
			break;
		usleep(200000);
	}
	NOTE("%s: CB_NULL calls from the server: %u%s", p->net, nulls,
	     nulls ? "" : " (Linux probes no NFSv4.1 back channel)");
	if (nulls)
		NOTE("%s: the first %lld ms after CREATE_SESSION", p->net,
		     (long long)(null_ms - p->session_ms));
	if (!CHECK_OK(p->dir[0], "%s: nfsd lists our client in " NFSD_CLIENTS,
		      p->net))
		return false;
	info_value(p->dir, "callback address", addr, sizeof(addr));
	CHECK(!strcmp(state, "UP"),
	      "%s: nfsd reports the callback channel up: %s/info \"callback state: %s\" (callback address %s)",
	      p->net, p->dir, state, addr);
	CHECK(!(p->status_flags & cb_down_flags),
	      "%s: SEQUENCE's sr_status_flags 0x%x: no CB_PATH_DOWN, CB_PATH_DOWN_SESSION, BACKCHANNEL_FAULT",
	      p->net, p->status_flags);
	return !strcmp(state, "UP");
}

/* The file nfsd exports, as the test writes it first. */
static bool file_write(const struct pass *p)
{
	char path[PATH_MAX];
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), "%s/%s", export_dir, p->file);
	f = fopen(path, "w");
	if (!f)
		return false;
	ok = fputs(initial_text, f) >= 0;
	return !fclose(f) && ok;
}

/* OPEN for read, wanting a read delegation; PUTROOTFH, OPEN, GETFH.
 * NFS4ERR_GRACE and NFS4ERR_DELAY are retried. */
static bool open_file(struct pass *p)
{
	int64_t deadline = t_ms() + GRACE_WAIT_MS;
	OPEN4resok *ok = NULL;
	GETFH4resok *fh;
	open_delegation4 *d;
	OPEN4args *o;
	struct cmp c;
	bool good;

	for (;;) {
		c_begin(&c, p, "open", true);
		op_add(&c, OP_PUTROOTFH);
		o = &op_add(&c, OP_OPEN)->nfs_argop4_u.opopen;
		o->share_access = OPEN4_SHARE_ACCESS_READ |
				  OPEN4_SHARE_ACCESS_WANT_READ_DELEG;
		o->share_deny = OPEN4_SHARE_DENY_NONE;
		o->owner.clientid = p->clid;
		o->owner.owner.owner_len = 9;
		o->owner.owner.owner_val = (char *)"t_nfs41cb";
		o->openhow.opentype = OPEN4_NOCREATE;
		o->claim.claim = CLAIM_NULL;
		o->claim.open_claim4_u.file.utf8string_val = (char *)p->file;
		o->claim.open_claim4_u.file.utf8string_len =
			(u_int)strlen(p->file);
		op_add(&c, OP_GETFH);
		good = c_call(p, &c);
		if (good || c.st != RPC_SUCCESS ||
		    (c.res.status != NFS4ERR_GRACE &&
		     c.res.status != NFS4ERR_DELAY) ||
		    t_ms() >= deadline)
			break;
		c_done(&c);
		usleep(500000);
	}
	if (!CHECK_OK(good,
		      "%s: SEQUENCE + PUTROOTFH + OPEN %s for read + GETFH (%s)",
		      p->net, p->file, good ? "ok" : c.why)) {
		c_done(&c);
		return false;
	}
	ok = &c_res(&c, OP_OPEN)->nfs_resop4_u.opopen.OPEN4res_u.resok4;
	fh = &c_res(&c, OP_GETFH)->nfs_resop4_u.opgetfh.GETFH4res_u.resok4;
	p->opened = true;
	p->open_sid = ok->stateid;
	p->fhlen = fh->object.nfs_fh4_len <= NFS4_FHSIZE ?
			   fh->object.nfs_fh4_len :
			   0;
	memcpy(p->fh, fh->object.nfs_fh4_val, p->fhlen);
	d = &ok->delegation;
	p->have_deleg = d->delegation_type == OPEN_DELEGATE_READ;
	if (p->have_deleg)
		p->deleg_sid = d->open_delegation4_u.read.stateid;
	CHECK(p->have_deleg,
	      "%s: nfsd grants a read delegation (delegation type %d%s)",
	      p->net, d->delegation_type,
	      d->delegation_type == OPEN_DELEGATE_NONE_EXT ?
		      ", none: see ond_why" :
		      "");
	if (d->delegation_type == OPEN_DELEGATE_NONE_EXT)
		NOTE("%s: why no delegation: %d", p->net,
		     d->open_delegation4_u.od_whynone.ond_why);
	c_done(&c);
	if (!p->have_deleg)
		return false;
	pthread_mutex_lock(&cb.lock);
	cb.s.deleg = p->deleg_sid;
	memcpy(cb.s.fh, p->fh, p->fhlen);
	cb.s.fhlen = p->fhlen;
	cb.s.have_deleg = true;
	pthread_mutex_unlock(&cb.lock);
	CHECK(states_line(p, "type: deleg", "access: r", p->file),
	      "%s: nfsd lists the delegation in %s/states", p->net, p->dir);
	return true;
}

/* The second client: a process that appends to the file through the
 * kernel NFS client's mount. */
static pid_t writer_start(const struct pass *p)
{
	char path[PATH_MAX];
	pid_t pid;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", mount_dir, p->file);
	pid = fork();
	if (pid)
		return pid;
	fd = open(path, O_WRONLY | O_APPEND);
	if (fd < 0)
		_exit(2);
	if (write(fd, writer_text, sizeof(writer_text) - 1) !=
	    (ssize_t)sizeof(writer_text) - 1)
		_exit(3);
	_exit(close(fd) ? 4 : 0);
}

/* Wait for the writer, renewing our lease meanwhile: its exit status, or
 * -1 after timeout_ms (then it is killed). */
static int writer_wait(struct pass *p, pid_t pid, int timeout_ms)
{
	int64_t deadline = t_ms() + timeout_ms;
	int status;

	while (t_ms() < deadline) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
		renew_if_due(p);
		usleep(50000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

static bool wait_recall(struct pass *p)
{
	int64_t deadline = t_ms() + RECALL_WAIT_MS;
	struct timespec ts;
	unsigned int n;

	pthread_mutex_lock(&cb.lock);
	while (!(n = cb.s.recalls) && t_ms() < deadline) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 200000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&cb.cond, &cb.lock, &ts);
		pthread_mutex_unlock(&cb.lock);
		renew_if_due(p);
		pthread_mutex_lock(&cb.lock);
	}
	pthread_mutex_unlock(&cb.lock);
	return n > 0;
}

static bool delegreturn(struct pass *p)
{
	struct cmp c;
	bool good;

	c_begin(&c, p, "delegreturn", true);
	c_putfh(&c, p);
	op_add(&c, OP_DELEGRETURN)->nfs_argop4_u.opdelegreturn.deleg_stateid =
		p->deleg_sid;
	good = c_call(p, &c);
	CHECK(good, "%s: SEQUENCE + PUTFH + DELEGRETURN: NFS4_OK (%s)", p->net,
	      good ? "ok" : c.why);
	c_done(&c);
	return good;
}

/* The exported file holds what we wrote and then the second client. */
static bool file_after_write(const struct pass *p)
{
	char path[PATH_MAX], buf[256];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", export_dir, p->file);
	f = fopen(path, "r");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	return n == sizeof(initial_text) - 1 + sizeof(writer_text) - 1 &&
	       !strncmp(buf, initial_text, sizeof(initial_text) - 1) &&
	       !strcmp(buf + sizeof(initial_text) - 1, writer_text);
}

/* The recall: the second client opens for write, nfsd calls CB_RECALL on
 * our back channel, we answer and return the delegation, the write goes
 * through. */
static void recall(struct pass *p)
{
	int64_t t0 = t_ms(), t_ret;
	struct cbseen s;
	bool got, ret_ok;
	int rc, status = 0;
	pid_t pid, early;

	pid = writer_start(p);
	if (!CHECK_OK(pid > 0, "%s: the second client's writer started",
		      p->net))
		return;
	got = wait_recall(p);
	/* the writer cannot finish before the delegation is back */
	early = waitpid(pid, &status, WNOHANG);
	s = cb_snapshot();
	CHECK(got && s.compounds >= 1,
	      "%s: CB_COMPOUND arrived over RDMA on our connection, %lld ms after the second client's open",
	      p->net, got ? (long long)(s.recall_ms - t0) : -1LL);
	CHECK(got && s.seq_ok >= 1 && !s.seq_bad && s.cb_slot == 0 &&
		      s.cb_seq == s.seq_ok,
	      "%s: CB_SEQUENCE of our session, slot %u, sequenceid %u: answered NFS4_OK echoing them (RFC 5661 20.9.3; refused %u)",
	      p->net, s.cb_slot, s.cb_seq, s.seq_bad);
	CHECK(got && s.recalls == 1 && !s.recall_bad &&
		      s.recall_status == NFS4_OK,
	      "%s: CB_RECALL names our delegation's stateid and the file's filehandle (%u octets); answered NFS4_OK (truncate %d)",
	      p->net, p->fhlen, s.recall_truncate);
	CHECK(early == 0,
	      "%s: the second client's open waits while we hold the delegation",
	      p->net);
	t_ret = t_ms();
	ret_ok = delegreturn(p);
	if (early == pid)
		rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
	else
		rc = writer_wait(p, pid, WRITER_WAIT_MS);
	CHECK(ret_ok && rc == 0,
	      "%s: the second client's write completed (exit %d, %lld ms after DELEGRETURN)",
	      p->net, rc, (long long)(t_ms() - t_ret));
	CHECK(file_after_write(p),
	      "%s: the exported file holds our text and then the second client's",
	      p->net);
	p->have_deleg = !ret_ok;
}

static bool close_file(struct pass *p)
{
	CLOSE4args *a;
	struct cmp c;
	bool good;

	c_begin(&c, p, "close", true);
	c_putfh(&c, p);
	a = &op_add(&c, OP_CLOSE)->nfs_argop4_u.opclose;
	a->seqid = 0;
	a->open_stateid = p->open_sid;
	good = c_call(p, &c);
	CHECK(good, "%s: SEQUENCE + PUTFH + CLOSE (%s)", p->net,
	      good ? "ok" : c.why);
	c_done(&c);
	p->opened = !good;
	return good;
}

/* After the recall the channel is still up: nfsd took our CB_SEQUENCE
 * reply (a bad one marks the back channel faulty). */
static void still_up(struct pass *p)
{
	char state[64];

	sequence(p);
	info_value(p->dir, "callback state", state, sizeof(state));
	CHECK(!strcmp(state, "UP") && !(p->status_flags & cb_down_flags),
	      "%s: after the recall nfsd still reports the callback channel %s, status flags 0x%x",
	      p->net, state, p->status_flags);
}

/* Every callback the dispatch function saw is counted by the CLIENT as
 * taken and answered, nothing dropped (V1-BD-8: the kernel's calls are
 * inline RDMA_MSG with no chunks, or they would be dropped). */
static void counters(struct pass *p)
{
	struct rpcrdma_clnt_stats s;
	struct cbseen c = cb_snapshot();

	td_stats(p->cl, &s);
	CHECK(c.compounds >= 1 && c.calls == c.nulls + c.compounds &&
		      TD_D(&s, &p->st0, bc_calls) == c.calls &&
		      TD_D(&s, &p->st0, bc_replies) == c.calls &&
		      !TD_D(&s, &p->st0, bc_dropped),
	      "%s: CLGET_RDMA_STATS: backward calls %llu, replies %llu, dropped %llu; served %u (CB_NULL %u, CB_COMPOUND %u) (V1-BD-8, V1-BD-9)",
	      p->net, TD_D(&s, &p->st0, bc_calls),
	      TD_D(&s, &p->st0, bc_replies), TD_D(&s, &p->st0, bc_dropped),
	      c.calls, c.nulls, c.compounds);
	CHECK(!c.not_sys && c.flavor == AUTH_SYS && c.uid == CB_UID &&
		      c.gid == CB_GID,
	      "%s: every callback came with the AUTH_SYS credentials of csa_sec_parms (uid %u gid %u)",
	      p->net, c.uid, c.gid);
	CHECK(!c.other_ops, "%s: no callback operation we did not expect (%u)",
	      p->net, c.other_ops);
	CHECK(version(p->cl) == 1 && s.connects == 1 && !s.conn_losses,
	      "%s: one version 1 connection throughout (connections %u, losses %llu)",
	      p->net, s.connects, (unsigned long long)s.conn_losses);
}

static void destroy(struct pass *p)
{
	DESTROY_SESSION4args *ds;
	struct cmp c;
	bool good;

	c_begin(&c, p, "destroy_session", false);
	ds = &op_add(&c, OP_DESTROY_SESSION)->nfs_argop4_u.opdestroy_session;
	memcpy(ds->dsa_sessionid, p->sid, NFS4_SESSIONID_SIZE);
	good = c_call(p, &c);
	CHECK(good, "%s: DESTROY_SESSION (%s)", p->net, good ? "ok" : c.why);
	c_done(&c);
	p->have_session = !good;

	c_begin(&c, p, "destroy_clientid", false);
	op_add(&c, OP_DESTROY_CLIENTID)
		->nfs_argop4_u.opdestroy_clientid.dca_clientid = p->clid;
	good = c_call(p, &c);
	CHECK(good, "%s: DESTROY_CLIENTID (%s)", p->net, good ? "ok" : c.why);
	c_done(&c);
	CHECK(!nfsd_client(p), "%s: nfsd no longer lists our client", p->net);
}

static void teardown(struct pass *p)
{
	if (p->polling) {
		p->stop = true;
		pthread_join(p->poller, NULL);
		p->polling = false;
	}
	if (p->cbx)
		svc_destroy(p->cbx);
	p->cbx = NULL;
	if (p->cl) {
		auth_destroy(p->cl->cl_auth);
		p->cl->cl_auth = NULL;
		clnt_destroy(p->cl);
	}
	p->cl = NULL;
}

static void run(struct pass *p)
{
	snprintf(p->owner, sizeof(p->owner), "t_nfs41cb/%d/%s", (int)getpid(),
		 p->net);
	cb_reset();
	if (!CHECK_OK(file_write(p), "%s: %s/%s written", p->net, export_dir,
		      p->file))
		return;
	if (!client_create(p))
		return;
	if (!serve_callbacks(p) || !null_call(p) || !exchange_id(p) ||
	    !create_session(p))
		goto out;
	if (reclaim_complete(p) && wait_cb_up(p) && open_file(p)) {
		recall(p);
		still_up(p);
	}
	if (p->have_deleg)
		delegreturn(p);
	if (p->opened)
		close_file(p);
	counters(p);
	destroy(p);
out:
	teardown(p);
}

int main(int argc, char **argv)
{
	const char *v = getenv("RPCRDMA_VERSION");
	struct pass passes[2] = {
		{ .net = "rdma", .file = "deleg4" },
		{ .net = "rdma6", .file = "deleg6" },
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: t_nfs41cb EXPORT MOUNT [PORT]\n");
		return 2;
	}
	export_dir = argv[1];
	mount_dir = argv[2];
	if (argc == 4)
		nfs_port = (uint16_t)atoi(argv[3]);
	if (!t_have_device())
		return 77;
	v1_forced = v && !strcmp(v, "1");
	if (!v1_forced)
		setenv("RPCRDMA_VERSION", "auto", 1);
	signal(SIGPIPE, SIG_IGN);
	t_watchdog(WATCHDOG_S);
	passes[0].host = t_addr4();
	passes[1].host = t_addr6();
	for (unsigned int i = 0; i < 2; i++)
		run(&passes[i]);
	return tu_done();
}
