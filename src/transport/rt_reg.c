/*
 * rt_reg.c - chunk memory registration and fencing (rt_reg.h): the only
 * code that grants the peer access to our memory and the only code that
 * takes it away.
 *
 * Normal operation (MW mode)
 *   rt_reg_expose() takes a free type 2 window, picks a new key byte, and
 *   posts IBV_WR_BIND_MW over the MR under the range: a pool MR
 *   (rt_reg_buf_alloc(), registered once with MW_BIND and no remote access)
 *   or, for other memory, an MR registered now for this RPC, also without
 *   remote access.  The bind is unsignalled and sits on the send queue ahead
 *   of the Send that will carry the handle, so the window is valid before
 *   the peer can know it.  rt_reg_revoke() posts IBV_WR_LOCAL_INV for each
 *   window of the set (the last one signalled) and waits for the
 *   completion.  A window the peer invalidated with Send With Invalidate is
 *   fenced already: rt_reg_peer_invalidated() records it when a Receive
 *   completion names exactly its handle, and it is not invalidated twice.
 *
 * Normal operation (MR mode)
 *   One ibv_reg_mr() with exactly the rights asked for; ibv_dereg_mr() is
 *   the fence, synchronous by definition.
 *
 * Transport recovery
 *   If the connection is dead, or dies while we wait, or an invalidation
 *   fails or does not complete in time, the connection is ended (its QP in
 *   the error state: nothing can reach our memory through it, and the
 *   protection domain is the connection's alone) and every window of the
 *   set is deallocated, every MR deregistered.  An MR that refuses
 *   deregistration stays on the connection's list to try again when it is
 *   destroyed; by then its QP is gone.
 *
 * Read sinks on iWARP (doc/architecture.md, "Who may grant remote access")
 *   An iWARP RDMA Read is carried out by the responder writing into the
 *   sink, so the sink needs remote write access, which cached local memory
 *   never has.  rt_reg_sink_get() registers each sink fragment of one
 *   rt_post_read() for exactly its octets with LOCAL_WRITE | REMOTE_WRITE;
 *   every work request of that Read holds a reference, and the last one
 *   to finish (completed, flushed or never posted) deregisters the MRs
 *   before its RT_EV_READ_DONE is queued, so the pulled data is handed up
 *   fenced.  Such an MR's key is never advertised: only the Read Request
 *   names it.  Other transports use the cached memory's local key.
 */
#define _GNU_SOURCE /* secure_getenv */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "conf/rc_env.h"
#include "transport/rt_priv.h"
#include "transport/rt_buf_priv.h"
#include "transport/rt_cq.h"
#include "transport/rt_post.h"
#include "transport/rt_reg_priv.h"
#include "transport/rt_state.h"

/* Spin this long on the CQ before sleeping while invalidations run. */
#define RT_REG_SPIN_US 200

/* ---- Windows --------------------------------------------------------- */

static struct rt_mw *mw_alloc(struct rt_conn *c)
{
	struct rt_mw *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->mw = ibv_alloc_mw(c->pd, IBV_MW_TYPE_2);
	if (!m->mw) {
		free(m);
		return NULL;
	}
	m->rkey = m->mw->rkey;
	m->anext = c->mw_all;
	c->mw_all = m;
	return m;
}

static struct rt_mw *mw_get(struct rt_conn *c)
{
	struct rt_mw *m = c->mw_free;

	if (m) {
		c->mw_free = m->next;
		m->next = NULL;
		return m;
	}
	return mw_alloc(c);
}

static void mw_put(struct rt_conn *c, struct rt_mw *m)
{
	m->next = c->mw_free;
	c->mw_free = m;
}

/* Destroy a window whatever its state: the fence of last resort. */
static void mw_destroy(struct rt_conn *c, struct rt_mw *m)
{
	struct rt_mw **pp;

	for (pp = &c->mw_all; *pp; pp = &(*pp)->anext) {
		if (*pp == m) {
			*pp = m->anext;
			break;
		}
	}
	if (c->ring)
		rt_sq_forget_ctx(c, m);
	ibv_dealloc_mw(m->mw);
	free(m);
}

static uint32_t rand32(struct rt_conn *c)
{
	uint32_t x = c->key_seed;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	c->key_seed = x;
	return x;
}

/* A new key byte for the window's handle, never the current one; the
 * step is random so that handles are hard to predict (V1-MR-8). */
static uint32_t next_rkey(struct rt_conn *c, uint32_t rkey)
{
	uint32_t step = rand32(c) % 255;

	return ibv_inc_rkey((rkey & ~0xffu) | ((rkey + step) & 0xffu));
}

void rt_reg_wr_done(struct rt_conn *c, uint8_t kind, struct rt_mw *mw,
		    int status)
{
	if (status != IBV_WC_SUCCESS) {
		mw->failed = true;
		return;
	}
	/* only the invalidation of the binding it was posted for */
	if (kind == RT_K_LINV && mw->state == RT_MW_INVALIDATING) {
		mw->state = RT_MW_FREE;
		c->st.invalidations++;
	}
}

/* ---- Mode ------------------------------------------------------------ */

static enum rt_reg_mode env_mode(void)
{
	switch (rc_reg_mode()) {
	case 1:
		return RT_REG_MW;
	case 2:
		return RT_REG_MR;
	default:
		return RT_REG_AUTO;
	}
}

/* Windows are usable if the device says so and one can be allocated. */
static bool mw_usable(struct rt_conn *c)
{
	struct rt_mw *m;

	if (!c->dev_mw)
		return false;
	if (c->mw_free)
		return true;
	m = mw_alloc(c);
	if (!m)
		return false;
	mw_put(c, m);
	return true;
}

static int choose_mode(struct rt_conn *c, enum rt_reg_mode m,
		       struct rt_err *err)
{
	if (m == RT_REG_AUTO)
		m = env_mode();
	if (m == RT_REG_MW && !mw_usable(c))
		return rt_err_set(
			err, ENOTSUP,
			"memory windows (type 2) not supported by RDMA device %s; use RPCRDMA_REG_MODE=mr",
			c->devname);
	if (m == RT_REG_AUTO)
		m = mw_usable(c) && !c->quirk_mw_rebind ? RT_REG_MW : RT_REG_MR;
	c->reg_mode = m;
	return 0;
}

int rt_reg_setup(struct rt_conn *c, struct rt_err *err)
{
	uint32_t seed = 0;

	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed))
		seed = (uint32_t)time(NULL) ^ (uint32_t)getpid() ^
		       (uint32_t)(uintptr_t)c;
	c->key_seed = seed ? seed : 0x9e3779b9u;
	return choose_mode(c, c->attr.reg_mode, err);
}

enum rt_reg_mode rt_reg_mode(const struct rt_conn *c)
{
	return c->reg_mode;
}

const char *rt_reg_mode_name(enum rt_reg_mode m)
{
	switch (m) {
	case RT_REG_MW:
		return "mw";
	case RT_REG_MR:
		return "mr";
	default:
		return "auto";
	}
}

int rt_reg_set_mode(struct rt_conn *c, enum rt_reg_mode m, struct rt_err *err)
{
	enum rt_reg_mode old = c->reg_mode;
	int ret;

	if (c->live_expos)
		return rt_err_set(err, EBUSY,
				  "%u exposures are live on this connection",
				  c->live_expos);
	ret = choose_mode(c, m, err);
	if (ret)
		return ret;
	if (c->reg_mode == RT_REG_MR && c->advertised_inv) {
		c->reg_mode = old;
		return rt_err_set(
			err, EINVAL,
			"this connection advertised Send With Invalidate: its handles must stay memory windows");
	}
	return 0;
}

/* ---- The registration pool ------------------------------------------- */

static unsigned int regbuf_index(const struct rt_conn *c, uintptr_t addr)
{
	unsigned int lo = 0, hi = c->nregbufs;

	/* First entry whose address is above addr. */
	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if ((uintptr_t)c->regbufs[mid]->addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int rt_reg_regbuf_add(struct rt_conn *c, struct rt_lmem *m)
{
	unsigned int i;

	if (c->nregbufs == c->capregbufs) {
		unsigned int cap = c->capregbufs ? c->capregbufs * 2 : 16;
		struct rt_lmem **v = realloc(c->regbufs, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		c->regbufs = v;
		c->capregbufs = cap;
	}
	i = regbuf_index(c, (uintptr_t)m->addr);
	memmove(&c->regbufs[i + 1], &c->regbufs[i],
		(c->nregbufs - i) * sizeof(*c->regbufs));
	c->regbufs[i] = m;
	c->nregbufs++;
	return 0;
}

void rt_reg_regbuf_del(struct rt_conn *c, struct rt_lmem *m)
{
	unsigned int i = regbuf_index(c, (uintptr_t)m->addr);

	if (!i || c->regbufs[i - 1] != m)
		return;
	i--;
	memmove(&c->regbufs[i], &c->regbufs[i + 1],
		(c->nregbufs - i - 1) * sizeof(*c->regbufs));
	c->nregbufs--;
}

/* The pool buffer holding all of [addr, addr + len), if any. */
static struct rt_lmem *regbuf_find(const struct rt_conn *c, uintptr_t addr,
				   size_t len)
{
	unsigned int i = regbuf_index(c, addr);
	struct rt_lmem *m;

	if (!i)
		return NULL;
	m = c->regbufs[i - 1];
	if (addr + len > (uintptr_t)m->addr + m->cap)
		return NULL;
	return m;
}

void *rt_reg_buf_alloc(struct rt_conn *c, size_t len, struct rt_err *err)
{
	struct rt_lmem *m = rt_lmem_get(c, len, true, err);

	if (!m)
		return NULL;
	if (rt_reg_regbuf_add(c, m)) {
		rt_lmem_free(c, m);
		rt_err_set(err, ENOMEM, "out of memory");
		return NULL;
	}
	return m->addr;
}

void rt_reg_buf_free(struct rt_conn *c, void *p)
{
	struct rt_lmem *m;
	unsigned int i;

	if (!p)
		return;
	i = regbuf_index(c, (uintptr_t)p);
	if (!i || c->regbufs[i - 1]->addr != p)
		return; /* not ours */
	m = c->regbufs[i - 1];
	rt_reg_regbuf_del(c, m);
	rt_lmem_free(c, m);
}

/* ---- Exposure -------------------------------------------------------- */

struct rt_regset *rt_regset_create(struct rt_conn *c, struct rt_err *err)
{
	struct rt_regset *s = calloc(1, sizeof(*s));

	if (!s) {
		rt_err_set(err, ENOMEM, "out of memory");
		return NULL;
	}
	s->c = c;
	s->next = c->regsets;
	if (c->regsets)
		c->regsets->prev = s;
	c->regsets = s;
	return s;
}

static int expose_mr(struct rt_conn *c, struct rt_expo *e, void *addr,
		     size_t len, enum rt_access acc, struct rt_err *err)
{
	int flags = 0;

	if (acc & RT_REMOTE_READ)
		flags |= IBV_ACCESS_REMOTE_READ;
	if (acc & RT_REMOTE_WRITE)
		flags |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
	e->mr = ibv_reg_mr(c->pd, addr, len, flags);
	if (!e->mr)
		return rt_err_set(
			err, errno,
			"cannot register %zu octets for RDMA on %s: %s", len,
			c->devname, strerror(errno));
	c->st.registrations++;
	e->handle = e->mr->rkey;
	return 0;
}

/* The MR a window binds over: the pool's, or one made for this RPC with
 * no remote access (local write only if the window allows remote write,
 * as the verbs require, so read-only memory can still be a Read chunk). */
static int bind_target(struct rt_conn *c, struct rt_expo *e, void *addr,
		       size_t len, enum rt_access acc, struct ibv_mr **mrp,
		       struct rt_err *err)
{
	struct rt_lmem *m = regbuf_find(c, (uintptr_t)addr, len);
	int flags = IBV_ACCESS_MW_BIND;

	if (m) {
		*mrp = m->mr;
		return 0;
	}
	if (acc & RT_REMOTE_WRITE)
		flags |= IBV_ACCESS_LOCAL_WRITE;
	e->mr = ibv_reg_mr(c->pd, addr, len, flags);
	if (!e->mr)
		return rt_err_set(
			err, errno,
			"cannot register %zu octets for a memory window on %s: %s",
			len, c->devname, strerror(errno));
	c->st.registrations++;
	*mrp = e->mr;
	return 0;
}

static int expose_mw(struct rt_conn *c, struct rt_expo *e, void *addr,
		     size_t len, enum rt_access acc, struct rt_err *err)
{
	struct ibv_mr *mr = NULL;
	struct rt_work w;
	int ret;

	ret = bind_target(c, e, addr, len, acc, &mr, err);
	if (ret)
		return ret;
	e->mw = mw_get(c);
	if (!e->mw)
		return rt_err_set(err, ENOMEM,
				  "cannot allocate a memory window on %s",
				  c->devname);
	memset(&w, 0, sizeof(w));
	w.kind = RT_K_BIND;
	w.ctx = e->mw;
	w.wr.opcode = IBV_WR_BIND_MW;
	w.wr.bind_mw.mw = e->mw->mw;
	w.wr.bind_mw.rkey = next_rkey(c, e->mw->rkey);
	w.wr.bind_mw.bind_info.mr = mr;
	w.wr.bind_mw.bind_info.addr = (uintptr_t)addr;
	w.wr.bind_mw.bind_info.length = len;
	w.wr.bind_mw.bind_info.mw_access_flags =
		(acc & RT_REMOTE_READ ? IBV_ACCESS_REMOTE_READ : 0) |
		(acc & RT_REMOTE_WRITE ? IBV_ACCESS_REMOTE_WRITE : 0);
	e->mw->rkey = w.wr.bind_mw.rkey;
	e->mw->state = RT_MW_BOUND;
	e->handle = e->mw->rkey;
	ret = rt_sq_submit(c, &w, err);
	if (!ret)
		c->st.binds++;
	return ret;
}

/* Deregister; if that fails the MR may still be reachable, so the
 * connection ends and the MR is kept to retry when it is freed.  True if
 * an MR was deregistered. */
static bool drop_mr(struct rt_conn *c, struct ibv_mr **mrp)
{
	struct ibv_mr **z;
	struct rt_err why;
	int ret;

	if (!*mrp)
		return false;
	ret = ibv_dereg_mr(*mrp);
	if (!ret) {
		c->st.deregistrations++;
		*mrp = NULL;
		return true;
	}
	c->st.errors++;
	rt_err_set(&why, ret, "cannot deregister chunk memory on %s: %s",
		   c->devname, strerror(ret));
	rt_conn_kill(c, &why);
	z = realloc(c->zombies, (c->nzombies + 1) * sizeof(*z));
	if (z) {
		c->zombies = z;
		c->zombies[c->nzombies++] = *mrp;
	}
	*mrp = NULL;
	return false;
}

/* Give back what an exposure holds.  A window not known to be invalidated
 * is deallocated: that fences it whatever the connection's state.  True if
 * this fenced an MR-mode exposure: there the region is what the peer
 * holds, and deregistering it is the fence; under a window the region has
 * no remote access, and the window's invalidation is the fence. */
static bool release_expo(struct rt_conn *c, struct rt_expo *e)
{
	bool own_mr = !e->mw;

	if (e->mw) {
		if (e->mw->state == RT_MW_FREE && !e->mw->failed)
			mw_put(c, e->mw);
		else
			mw_destroy(c, e->mw);
		e->mw = NULL;
	}
	return drop_mr(c, &e->mr) && own_mr;
}

static int grow_set(struct rt_regset *s, struct rt_err *err)
{
	unsigned int cap = s->cap ? s->cap * 2 : 4;
	struct rt_expo *e;

	if (s->n < s->cap)
		return 0;
	e = realloc(s->e, cap * sizeof(*e));
	if (!e)
		return rt_err_set(err, ENOMEM, "out of memory");
	s->e = e;
	s->cap = cap;
	return 0;
}

static int expose_checks(struct rt_regset *s, void *addr, size_t len,
			 unsigned int acc, struct rt_err *err)
{
	if (!addr || !len || (uintptr_t)addr + len < (uintptr_t)addr)
		return rt_err_set(err, EINVAL, "no memory to expose");
	if (!acc || (acc & ~(unsigned int)(RT_REMOTE_READ | RT_REMOTE_WRITE)))
		return rt_err_set(err, EINVAL, "invalid access 0x%x", acc);
	if (s->c->dead)
		return rt_err_set(err, ENOTCONN, "connection is down: %s",
				  s->c->err.msg);
	return grow_set(s, err);
}

int rt_reg_expose(struct rt_regset *s, void *addr, size_t len,
		  enum rt_access acc, struct rw_segment *segs, unsigned int max,
		  struct rt_err *err)
{
	struct rt_conn *c = s->c;
	size_t nseg = (len + RT_REG_MAX_SEG - 1) / RT_REG_MAX_SEG, i;
	struct rt_expo *e;
	int ret;

	rt_err_clear(err);
	ret = expose_checks(s, addr, len, acc, err);
	if (ret)
		return ret;
	/* here, where segs is written: the clang analyser does not follow
	 * the failure paths of expose_checks() */
	if (!segs || nseg > max)
		return rt_err_set(
			err, E2BIG,
			"%zu octets need more segments than there is room for",
			len);
	e = &s->e[s->n];
	memset(e, 0, sizeof(*e));
	e->len = len;
	if (c->reg_mode == RT_REG_MW)
		ret = expose_mw(c, e, addr, len, acc, err);
	else
		ret = expose_mr(c, e, addr, len, acc, err);
	if (ret) {
		release_expo(c, e);
		return ret;
	}
	s->n++;
	c->live_expos++;
	c->st.exposures++;
	for (i = 0; i < nseg; i++) {
		size_t off = i * RT_REG_MAX_SEG;

		segs[i].handle = e->handle;
		segs[i].offset = (uintptr_t)addr + off;
		segs[i].length = (uint32_t)(len - off < RT_REG_MAX_SEG ?
						    len - off :
						    RT_REG_MAX_SEG);
	}
	return (int)nseg;
}

uint32_t rt_regset_inv_handle(const struct rt_regset *s)
{
	return s->n == 1 && s->e[0].mw ? s->e[0].handle : 0;
}

/* The largest window saves the most: its invalidation is the one most
 * likely to wait behind other work. */
uint32_t rt_regset_inv_any(const struct rt_regset *s)
{
	uint32_t handle = 0;
	size_t best = 0;
	unsigned int i;

	for (i = 0; i < s->n; i++) {
		if (s->e[i].mw && s->e[i].len >= best) {
			best = s->e[i].len;
			handle = s->e[i].handle;
		}
	}
	return handle;
}

unsigned int rt_regset_count(const struct rt_regset *s)
{
	return s->n;
}

/* ---- Read sinks (iWARP) ---------------------------------------------- */

struct rt_sink {
	struct rt_sink *next; /* c->sinks: every live sink */
	struct rt_sink *prev;
	unsigned int refs; /* work requests of the Read, and its poster */
	unsigned int n;
	struct rt_sge *sge; /* the fragments, keyed by the MRs below */
	struct ibv_mr **mr; /* [n] */
};

static void sink_unlink(struct rt_conn *c, struct rt_sink *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else
		c->sinks = s->next;
	if (s->next)
		s->next->prev = s->prev;
}

static void sink_release(struct rt_conn *c, struct rt_sink *s)
{
	unsigned int i;

	for (i = 0; i < s->n; i++)
		drop_mr(c, &s->mr[i]);
	c->st.sink_deregs++;
	sink_unlink(c, s);
	free(s->sge);
	free(s->mr);
	free(s);
}

static struct rt_sink *sink_alloc(struct rt_conn *c, unsigned int n,
				  struct rt_err *err)
{
	struct rt_sink *s = calloc(1, sizeof(*s));

	if (s) {
		s->sge = calloc(n, sizeof(*s->sge));
		s->mr = calloc(n, sizeof(*s->mr));
	}
	if (!s || !s->sge || !s->mr) {
		if (s) {
			free(s->sge);
			free(s->mr);
		}
		free(s);
		rt_err_set(err, ENOMEM, "out of memory");
		return NULL;
	}
	s->refs = 1;
	s->next = c->sinks;
	if (c->sinks)
		c->sinks->prev = s;
	c->sinks = s;
	c->st.sink_regs++;
	return s;
}

int rt_reg_sink_get(struct rt_conn *c, const struct rt_sge *sge, unsigned int n,
		    struct rt_sink **sp, struct rt_err *err)
{
	const int flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct rt_sink *s;
	unsigned int i;

	*sp = NULL;
	if (!c->iwarp)
		return 0;
	s = sink_alloc(c, n, err);
	if (!s)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		s->mr[i] = ibv_reg_mr(c->pd, sge[i].addr, sge[i].length, flags);
		if (!s->mr[i]) {
			int ret = rt_err_set(
				err, errno,
				"cannot register a %u-octet RDMA Read sink on %s: %s",
				sge[i].length, c->devname, strerror(errno));

			sink_release(c, s);
			return ret;
		}
		s->n++;
		c->st.registrations++;
		s->sge[i] = (struct rt_sge){ sge[i].addr, sge[i].length,
					     s->mr[i]->lkey };
	}
	*sp = s;
	return 0;
}

const struct rt_sge *rt_reg_sink_sge(const struct rt_sink *s)
{
	return s->sge;
}

void rt_reg_sink_hold(struct rt_sink *s)
{
	s->refs++;
}

void rt_reg_sink_put(struct rt_conn *c, struct rt_sink *s)
{
	if (s && !--s->refs)
		sink_release(c, s);
}

/* ---- Revocation ------------------------------------------------------ */

static bool bound(const struct rt_expo *e)
{
	return e->mw && e->mw->state == RT_MW_BOUND && !e->mw->failed;
}

/*
 * A Receive completion says the device invalidated handle rkey on the
 * peer's behalf (Send With Invalidate).  Only a window bound under exactly
 * that handle is concerned; a handle of ours that is not a bound window
 * would have failed the Send and the connection instead.
 */
void rt_reg_peer_invalidated(struct rt_conn *c, uint32_t rkey)
{
	struct rt_mw *m;

	for (m = c->mw_all; m; m = m->anext) {
		if (m->rkey != rkey || m->state == RT_MW_FREE)
			continue;
		/* Our own LOCAL_INV already posted owns the window until it
		 * completes: freed now, the window could be bound again
		 * before that completion, which would then mark the new
		 * binding free and leave it remotely accessible. */
		if (m->state == RT_MW_BOUND) {
			m->state = RT_MW_FREE;
			m->peer_inv = true;
		}
		return;
	}
}

/* Windows still needing a local invalidation; those the peer invalidated
 * are counted as remote invalidations honoured. */
static unsigned int count_bound(struct rt_regset *s)
{
	unsigned int i, left = 0;

	for (i = 0; i < s->n; i++) {
		struct rt_expo *e = &s->e[i];

		if (e->mw && e->mw->peer_inv) {
			e->mw->peer_inv = false;
			s->c->st.remote_invs++;
		}
		left += bound(e);
	}
	return left;
}

static void post_invalidations(struct rt_regset *s, unsigned int count)
{
	unsigned int i, posted = 0;
	struct rt_work w;

	for (i = 0; i < s->n && posted < count; i++) {
		struct rt_expo *e = &s->e[i];

		if (!bound(e))
			continue;
		memset(&w, 0, sizeof(w));
		w.kind = RT_K_LINV;
		w.ctx = e->mw;
		w.must_signal = ++posted == count; /* we wait for it */
		w.wr.opcode = IBV_WR_LOCAL_INV;
		w.wr.invalidate_rkey = e->mw->rkey;
		e->mw->state = RT_MW_INVALIDATING;
		if (rt_sq_submit(s->c, &w, NULL))
			return; /* connection dead: windows will be freed */
	}
}

static bool all_fenced(const struct rt_regset *s)
{
	unsigned int i;

	for (i = 0; i < s->n; i++)
		if (s->e[i].mw && s->e[i].mw->state != RT_MW_FREE)
			return false;
	return true;
}

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int fence_failed(struct rt_conn *c, struct rt_err *err)
{
	return rt_err_set(err, c->err.code,
			  "memory fenced by closing the connection: %s",
			  c->err.msg);
}

/*
 * Wait for the invalidations; on failure or timeout the connection ends.
 * A local invalidation completes in microseconds on hardware: spin on the
 * CQ for a moment before paying for a sleep and a wake-up.
 */
static int wait_fenced(struct rt_regset *s, struct rt_err *err)
{
	struct rt_conn *c = s->c;
	int64_t start = now_us(), left;
	struct rt_err why;

	for (;;) {
		if (now_us() - start < RT_REG_SPIN_US)
			rt_cq_reap(c);
		else
			rt_cq_service(c);
		if (c->dead)
			return fence_failed(c, err);
		if (all_fenced(s))
			return 0;
		left = RT_REG_REVOKE_TIMEOUT_MS - (now_us() - start) / 1000;
		if (left <= 0)
			break;
		if (now_us() - start >= RT_REG_SPIN_US)
			rt_cq_wait(c, (int)left);
	}
	c->st.errors++;
	rt_err_set(&why, ETIMEDOUT,
		   "invalidating memory windows on %s timed out after %d ms",
		   c->devname, RT_REG_REVOKE_TIMEOUT_MS);
	rt_conn_kill(c, &why);
	rt_err_copy(err, &why);
	return -ETIMEDOUT;
}

int rt_reg_revoke(struct rt_regset *s, struct rt_err *err)
{
	struct rt_conn *c = s->c;
	unsigned int i, left;
	int ret = 0;

	rt_err_clear(err);
	if (!s->n)
		return 0;
	c->st.revokes++;
	if (!c->dead) {
		/* Reap Receives first: a window the peer invalidated must not
		 * be invalidated again. */
		rt_cq_reap(c);
		left = count_bound(s);
		if (left && !c->dead)
			post_invalidations(s, left);
		if (!all_fenced(s))
			ret = wait_fenced(s, err);
	}
	for (i = 0; i < s->n; i++)
		if (release_expo(c, &s->e[i]))
			c->st.mr_fences++;
	c->live_expos -= s->n;
	s->n = 0;
	return ret;
}

void rt_regset_destroy(struct rt_regset *s)
{
	struct rt_conn *c;

	if (!s)
		return;
	c = s->c;
	rt_reg_revoke(s, NULL);
	if (s->prev)
		s->prev->next = s->next;
	else
		c->regsets = s->next;
	if (s->next)
		s->next->prev = s->prev;
	free(s->e);
	free(s);
}

/* The connection is being freed (its QP is gone): fence and free all. */
void rt_reg_free(struct rt_conn *c)
{
	struct rt_regset *s, *next;
	struct rt_sink *k, *knext;
	struct rt_mw *m;
	unsigned int i;

	for (s = c->regsets; s; s = next) {
		next = s->next;
		rt_regset_destroy(s);
	}
	while ((m = c->mw_all)) {
		c->mw_all = m->anext;
		ibv_dealloc_mw(m->mw);
		free(m);
	}
	c->mw_free = NULL;
	/* Reads still held by work the send queue never reported. */
	for (k = c->sinks; k; k = knext) {
		knext = k->next;
		sink_release(c, k);
	}
	for (i = 0; i < c->nzombies; i++)
		ibv_dereg_mr(c->zombies[i]);
	free(c->zombies);
	c->zombies = NULL;
	c->nzombies = 0;
	free(c->regbufs);
	c->regbufs = NULL;
	c->nregbufs = 0;
}
