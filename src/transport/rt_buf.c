/*
 * rt_buf.c - buffers of one connection: the Send and Receive buffer pools
 * (one slab each, local access only), Receive posting and completion, and
 * local memory for RDMA sinks and sources (rt_buf.h).
 *
 * Send buffers are registered as they are needed, RT_SBUF_START at setup
 * and RT_SBUF_GROW more whenever none is free: an idle connection (most of
 * a server's) holds few, one that keeps its credits in use soon has them
 * all.  A responder's Receives likewise when asked (attr.recv_start): the
 * grant target follows what is posted, and rt_conn_recv_grow() adds
 * RT_RECV_GROW at a time.  Each slab is allocated whole but untouched, so
 * its pages cost nothing until registered.
 *
 * Receives: all are posted by rt_conn_setup(), before rdma_connect() or
 * rdma_accept(), so that nothing the peer sends can find an empty queue
 * (V1-RB-1).  The count of posted Receives is kept in the responder credit
 * state too (rw_srv_credits.posted): a grant can then never exceed what is
 * really there (V1-CR-8).  A Receive lent to the caller (its message
 * decoded in place) counts as posted there: the caller posts it again
 * before it answers the message, so a Call in service holds the credit it
 * came with and gives it back before the Reply that frees it reaches the
 * peer.  A Receive completion is checked before it is trusted: its buffer
 * must be one of ours and posted, its length within the buffer.
 *
 * Memory: every block of RT_MAP_MIN octets or more (the slabs, the chunk
 * buffers of rt_lmem_get()) is mapped by itself and unmapped when freed,
 * never taken from malloc's heap.  glibc raises its mmap threshold to the
 * size of the largest mapped block freed (up to 32 MiB), so after the first
 * 2 MiB buffer freed later ones came from the heap, wedged between blocks
 * that live long (a connection's slabs, cached buffers): the heap grew to
 * its high-water mark and stayed there (tests/vm/README.md, the soak).
 * Smaller blocks stay on the heap, where they are cheap and cannot
 * fragment it by much.
 *
 * The cache of chunk buffers (lcache, rcache) keeps a freed buffer of a
 * size class registered for the next one of its class, up to
 * attr.cache_bytes idle octets per connection in all classes; a buffer
 * freed into a full cache is deregistered and unmapped
 * (st.cache_released).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "transport/rt_priv.h"
#include "transport/rt_buf_priv.h"
#include "transport/rt_cq.h"
#include "transport/rt_state.h"

#define RT_PAGE	      4096u
#define RT_SBUF_START 4u
#define RT_SBUF_GROW  8u
#define RT_RECV_GROW  8u
/* Blocks mapped by themselves from this size up: glibc's own mmap
 * threshold before it moves (the soak was flat with it pinned there). */
#define RT_MAP_MIN (128u << 10)

static size_t page_round(size_t n)
{
	return (n + RT_PAGE - 1) & ~(size_t)(RT_PAGE - 1);
}

/* len octets (a multiple of RT_PAGE once rounded), page-aligned, untouched:
 * their pages cost nothing until used or registered. */
static void *pages_alloc(size_t len)
{
	void *p = NULL;

	len = page_round(len);
	if (!len)
		return NULL;
	if (len < RT_MAP_MIN)
		return posix_memalign(&p, RT_PAGE, len) ? NULL : p;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* Free what pages_alloc(len) gave, len the same; after deregistration. */
static void pages_free(void *p, size_t len)
{
	if (!p)
		return;
	len = page_round(len);
	if (len < RT_MAP_MIN)
		free(p);
	else
		munmap(p, len);
}

/* Register up to n more Send buffers and free them; -errno. */
static int sbufs_grow(struct rt_conn *c, unsigned int n)
{
	size_t sz = c->attr.inline_send;
	unsigned int first = c->sreg, i;
	struct ibv_mr *mr;

	if (n > c->nsbufs - first)
		n = c->nsbufs - first;
	if (!n)
		return -ENOSPC;
	/* Send buffers are only read by the device: no access flags. */
	mr = ibv_reg_mr(c->pd, (char *)c->sslab + first * sz, n * sz, 0);
	if (!mr)
		return -errno;
	c->smrs[c->nsmrs++] = mr;
	for (i = first + n; i-- > first;) {
		struct rt_sbuf *b = &c->sbufs[i];

		b->data = (char *)c->sslab + i * sz;
		b->size = (uint32_t)sz;
		b->lkey = mr->lkey;
		b->next = c->sfree;
		c->sfree = b;
	}
	c->sreg += n;
	c->nsfree += n;
	return 0;
}

static int setup_sbufs(struct rt_conn *c, struct rt_err *err)
{
	int ret;

	c->nsbufs = c->attr.send_bufs;
	c->sbufs = calloc(c->nsbufs, sizeof(*c->sbufs));
	/* at most one registration per growth step, and the first */
	c->smrs = calloc(c->nsbufs / RT_SBUF_GROW + 2, sizeof(*c->smrs));
	c->sslab_len = (size_t)c->attr.inline_send * c->nsbufs;
	c->sslab = pages_alloc(c->sslab_len);
	if (!c->sbufs || !c->smrs || !c->sslab)
		return rt_err_set(err, ENOMEM,
				  "out of memory for Send buffers");
	ret = sbufs_grow(c, RT_SBUF_START);
	if (ret)
		return rt_err_set(err, -ret,
				  "cannot register Send buffers on %s: %s",
				  c->devname, strerror(-ret));
	return 0;
}

/* Register up to n more Receive buffers (not posted yet); -errno. */
static int rbufs_grow(struct rt_conn *c, unsigned int n)
{
	size_t sz = c->attr.inline_recv;
	unsigned int first = c->rreg, i;
	struct ibv_mr *mr;

	if (n > c->nrbufs - first)
		n = c->nrbufs - first;
	if (!n)
		return -ENOSPC;
	mr = ibv_reg_mr(c->pd, (char *)c->rslab + first * sz, n * sz,
			IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		return -errno;
	c->rmrs[c->nrmrs++] = mr;
	for (i = first; i < first + n; i++) {
		struct rt_rbuf *b = &c->rbufs[i];

		b->data = (char *)c->rslab + i * sz;
		b->size = (uint32_t)sz;
		b->lkey = mr->lkey;
		b->index = (uint32_t)i;
	}
	c->rreg += n;
	return 0;
}

/* The grant target of what is registered: every Receive but those kept
 * for recv_extra, at least one, at most the credits. */
static void rbufs_target(struct rt_conn *c)
{
	uint32_t extra = c->attr.recv_extra, t = 1;

	if (c->rreg > extra + 1)
		t = c->rreg - extra;
	c->srv_credits.target = t < c->attr.credits ? t : c->attr.credits;
}

static int setup_rbufs(struct rt_conn *c, struct rt_err *err)
{
	unsigned int first = c->nrbufs;
	int ret;

	if (c->attr.recv_start && c->attr.recv_start < c->attr.credits)
		first = c->attr.recv_start + c->attr.recv_extra;
	c->rbufs = calloc(c->nrbufs, sizeof(*c->rbufs));
	c->rmrs = calloc(c->nrbufs / RT_RECV_GROW + 2, sizeof(*c->rmrs));
	c->rslab_len = (size_t)c->attr.inline_recv * c->nrbufs;
	c->rslab = pages_alloc(c->rslab_len);
	if (!c->rbufs || !c->rmrs || !c->rslab)
		return rt_err_set(err, ENOMEM,
				  "out of memory for Receive buffers");
	ret = rbufs_grow(c, first);
	if (ret)
		return rt_err_set(err, -ret,
				  "cannot register Receive buffers on %s: %s",
				  c->devname, strerror(-ret));
	rbufs_target(c);
	return 0;
}

int rt_buf_setup(struct rt_conn *c, struct rt_err *err)
{
	int ret = setup_sbufs(c, err);

	return ret ? ret : setup_rbufs(c, err);
}

/* What the grant may count: posted Receives and those lent out. */
static void credits_posted(struct rt_conn *c)
{
	c->srv_credits.posted = c->rposted + c->rlent;
}

static int post_recv(struct rt_conn *c, struct rt_rbuf *b)
{
	struct ibv_sge sge = { (uintptr_t)b->data, b->size, b->lkey };
	struct ibv_recv_wr wr = { .wr_id = RT_WRID_RECV | b->index,
				  .sg_list = &sge,
				  .num_sge = 1 };
	struct ibv_recv_wr *bad;
	int ret = ibv_post_recv(c->qp, &wr, &bad);

	if (ret)
		return ret;
	b->posted = true;
	c->rposted++;
	if (b->lent) {
		b->lent = false;
		c->rlent--;
	}
	credits_posted(c);
	return 0;
}

/* Post rbufs[from..rreg) that are not posted; -errno. */
static int post_from(struct rt_conn *c, unsigned int from, struct rt_err *err)
{
	unsigned int i;
	int ret;

	for (i = from; i < c->rreg; i++) {
		if (c->rbufs[i].posted)
			continue;
		ret = post_recv(c, &c->rbufs[i]);
		if (ret)
			return rt_err_set(err, ret,
					  "cannot post Receives on %s: %s",
					  c->devname, strerror(ret));
	}
	return 0;
}

int rt_buf_post_all_recvs(struct rt_conn *c, struct rt_err *err)
{
	return post_from(c, 0, err);
}

int rt_conn_recv_grow(struct rt_conn *c)
{
	unsigned int from = c->rreg;
	struct rt_err err;
	int ret;

	if (c->dead)
		return -ENOTCONN;
	ret = rbufs_grow(c, RT_RECV_GROW);
	if (ret)
		return ret;
	/* only the new ones: the caller may hold a taken one to repost */
	ret = post_from(c, from, &err);
	if (ret) {
		c->st.errors++;
		rt_conn_kill(c, &err);
		return ret;
	}
	rbufs_target(c);
	return 0;
}

int rt_recv_repost(struct rt_conn *c, struct rt_rbuf *b)
{
	struct rt_err why;
	int ret;

	if (!b || b < c->rbufs || b >= c->rbufs + c->rreg || b->posted)
		return -EINVAL;
	if (c->dead)
		return -ENOTCONN;
	ret = post_recv(c, b);
	if (ret) {
		c->st.errors++;
		rt_err_set(&why, ret, "cannot post a Receive on %s: %s",
			   c->devname, strerror(ret));
		rt_conn_kill(c, &why);
		return -ret;
	}
	return 0;
}

static void recv_failed(struct rt_conn *c, const struct ibv_wc *wc,
			const struct rt_rbuf *b)
{
	char a[RT_ADDR_STRLEN];
	struct rt_err why;

	rt_addr_str(rt_conn_peer_addr(c), 1, a);
	if (wc->status == IBV_WC_WR_FLUSH_ERR) {
		c->st.flushed++;
		if (c->dead)
			return;
		rt_err_set(&why, ECONNRESET,
			   "connection to %s ended: work flushed", a);
	} else if (wc->status == IBV_WC_LOC_LEN_ERR) {
		c->st.errors++;
		rt_err_set(
			&why, EPROTO,
			"%s sent a message larger than our %u-octet Receive buffers",
			a, b->size);
	} else {
		c->st.errors++;
		rt_err_set(&why, EIO,
			   "Receive failed on the connection to %s: %s", a,
			   rt_wc_status_str(wc->status));
	}
	rt_conn_kill(c, &why);
}

static bool recv_with_inv(const struct rt_conn *c, const struct ibv_wc *wc)
{
	if (wc->wc_flags & IBV_WC_WITH_INV)
		return true;
	return c->quirk_inv_flag && (wc->wc_flags & IBV_WC_IP_CSUM_OK);
}

void rt_buf_recv_done(struct rt_conn *c, uint32_t index,
		      const struct ibv_wc *wc)
{
	struct rt_event ev = { .type = RT_EV_RECV };
	struct rt_rbuf *b;
	struct rt_err why;

	if (index >= c->rreg || !c->rbufs[index].posted) {
		c->st.errors++;
		rt_err_set(&why, EIO,
			   "Receive completion for a buffer not posted on %s",
			   c->devname);
		rt_conn_kill(c, &why);
		return;
	}
	b = &c->rbufs[index];
	b->posted = false;
	c->rposted--;
	if (wc->status != IBV_WC_SUCCESS || wc->byte_len > b->size) {
		credits_posted(c);
		recv_failed(c, wc, b);
		return;
	}
	b->lent = true;
	c->rlent++;
	credits_posted(c);
	c->st.recvs++;
	ev.status_str = rt_wc_status_str(IBV_WC_SUCCESS);
	ev.rbuf = b;
	ev.data = b->data;
	ev.len = wc->byte_len;
	if (recv_with_inv(c, wc)) {
		ev.wc_flags |= RT_WC_WITH_INV;
		ev.inv_rkey = wc->invalidated_rkey;
		rt_reg_peer_invalidated(c, wc->invalidated_rkey);
	}
	rt_evq_push(c, &ev);
}

/* ---- Send buffers ---------------------------------------------------- */

struct rt_sbuf *rt_sbuf_get(struct rt_conn *c, struct rt_err *err)
{
	struct rt_sbuf *b;

	if (c->dead) {
		rt_err_set(err, ENOTCONN, "connection is down: %s", c->err.msg);
		return NULL;
	}
	if (!c->sfree)
		rt_cq_service(c); /* reap completed Sends */
	if (c->dead) {
		rt_err_set(err, ENOTCONN, "connection is down: %s", c->err.msg);
		return NULL;
	}
	/* all in use: more, while the connection may have more */
	if (!c->sfree)
		sbufs_grow(c, RT_SBUF_GROW);
	b = c->sfree;
	if (!b) {
		rt_err_set(err, EAGAIN, "all %u Send buffers are in use",
			   c->nsbufs);
		return NULL;
	}
	c->sfree = b->next;
	c->nsfree--;
	b->next = NULL;
	b->busy = true;
	return b;
}

void rt_buf_sbuf_reclaim(struct rt_conn *c, struct rt_sbuf *b)
{
	if (!b || !b->busy)
		return;
	b->busy = false;
	b->next = c->sfree;
	c->sfree = b;
	c->nsfree++;
}

void rt_sbuf_put(struct rt_conn *c, struct rt_sbuf *b)
{
	if (b >= c->sbufs && b < c->sbufs + c->nsbufs)
		rt_buf_sbuf_reclaim(c, b);
}

void *rt_sbuf_data(const struct rt_sbuf *b)
{
	return b->data;
}

uint32_t rt_sbuf_size(const struct rt_sbuf *b)
{
	return b->size;
}

/* ---- Local memory ---------------------------------------------------- */

static int size_class(size_t len)
{
	int k;

	for (k = 0; k < RT_LMEM_CLASSES; k++)
		if (len <= ((size_t)1 << (RT_LMEM_MIN_SHIFT + k)))
			return k;
	return -1;
}

static void lmem_link(struct rt_conn *c, struct rt_lmem *m)
{
	m->aprev = NULL;
	m->anext = c->lall;
	if (c->lall)
		c->lall->aprev = m;
	c->lall = m;
}

static void lmem_unlink(struct rt_conn *c, struct rt_lmem *m)
{
	if (m->aprev)
		m->aprev->anext = m->anext;
	else
		c->lall = m->anext;
	if (m->anext)
		m->anext->aprev = m->aprev;
}

/* Deregister, then give the memory back (a mapped buffer to the system). */
static void lmem_destroy(struct rt_lmem *m)
{
	if (m->mr)
		ibv_dereg_mr(m->mr);
	if (m->owned)
		pages_free(m->addr, m->cap);
	free(m);
}

/* Access for memory we own: local write, and window binding for the
 * registration pool; never remote access, on any transport (an iWARP Read
 * sink gets its remote write from rt_reg.c, for that Read alone). */
static int lmem_access(const struct rt_conn *c, bool regbuf)
{
	int acc = IBV_ACCESS_LOCAL_WRITE;

	if (regbuf && c->dev_mw)
		acc |= IBV_ACCESS_MW_BIND;
	return acc;
}

static struct rt_lmem *lmem_new(struct rt_conn *c, size_t len, int cls,
				bool regbuf, struct rt_err *err)
{
	struct rt_lmem *m = calloc(1, sizeof(*m));

	if (!m) {
		rt_err_set(err, ENOMEM, "out of memory");
		return NULL;
	}
	m->cap = cls >= 0 ? (size_t)1 << (RT_LMEM_MIN_SHIFT + cls) :
			    page_round(len);
	m->addr = pages_alloc(m->cap);
	m->owned = true;
	m->cls = cls;
	m->regbuf = regbuf;
	if (!m->addr) {
		free(m);
		rt_err_set(err, ENOMEM, "out of memory for %zu octets", len);
		return NULL;
	}
	m->mr = ibv_reg_mr(c->pd, m->addr, m->cap, lmem_access(c, regbuf));
	if (!m->mr) {
		rt_err_set(err, errno, "cannot register %zu octets on %s: %s",
			   m->cap, c->devname, strerror(errno));
		lmem_destroy(m);
		return NULL;
	}
	lmem_link(c, m);
	return m;
}

struct rt_lmem *rt_lmem_get(struct rt_conn *c, size_t len, bool regbuf,
			    struct rt_err *err)
{
	struct rt_lmem **cache = regbuf ? c->rcache : c->lcache;
	int cls = size_class(len);
	struct rt_lmem *m;

	if (!len) {
		rt_err_set(err, EINVAL, "zero-length memory");
		return NULL;
	}
	if (cls >= 0 && cache[cls]) {
		m = cache[cls];
		cache[cls] = m->next;
		c->cached -= m->cap;
	} else {
		m = lmem_new(c, len, cls, regbuf, err);
		if (!m)
			return NULL;
	}
	m->next = NULL;
	m->len = len;
	m->live = true;
	return m;
}

struct rt_lmem *rt_lmem_alloc(struct rt_conn *c, size_t len, struct rt_err *err)
{
	return rt_lmem_get(c, len, false, err);
}

struct rt_lmem *rt_lmem_map(struct rt_conn *c, void *addr, size_t len,
			    bool writable, struct rt_err *err)
{
	struct rt_lmem *m;

	if (!addr || !len) {
		rt_err_set(err, EINVAL, "no memory to register");
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		rt_err_set(err, ENOMEM, "out of memory");
		return NULL;
	}
	m->mr = ibv_reg_mr(c->pd, addr, len,
			   writable ? IBV_ACCESS_LOCAL_WRITE : 0);
	if (!m->mr) {
		rt_err_set(err, errno, "cannot register %zu octets on %s: %s",
			   len, c->devname, strerror(errno));
		free(m);
		return NULL;
	}
	m->addr = addr;
	m->len = len;
	m->cap = len;
	m->cls = -1;
	m->live = true;
	lmem_link(c, m);
	return m;
}

/*
 * Keep m, idle, for the next buffer of its class if the cache has room for
 * it.  The one freed is the one let go when the cache is full: what is
 * cached stays, and so does the traffic's steady state, while a burst
 * beyond it costs a registration per buffer, which is what it would cost
 * without a cache.
 */
static bool lmem_cache(struct rt_conn *c, struct rt_lmem *m)
{
	struct rt_lmem **cache;

	if (!m->owned || m->cls < 0)
		return false;
	if (m->cap > c->attr.cache_bytes ||
	    c->cached > c->attr.cache_bytes - m->cap) {
		c->st.cache_released++;
		return false;
	}
	cache = m->regbuf ? c->rcache : c->lcache;
	m->next = cache[m->cls];
	cache[m->cls] = m;
	c->cached += m->cap;
	return true;
}

void rt_lmem_free(struct rt_conn *c, struct rt_lmem *m)
{
	if (!m || !m->live)
		return;
	m->live = false;
	if (lmem_cache(c, m))
		return;
	lmem_unlink(c, m);
	lmem_destroy(m);
}

void *rt_lmem_addr(const struct rt_lmem *m)
{
	return m->addr;
}

size_t rt_lmem_len(const struct rt_lmem *m)
{
	return m->len;
}

uint32_t rt_lmem_lkey(const struct rt_lmem *m)
{
	return m->mr->lkey;
}

struct rt_sge rt_lmem_sge(const struct rt_lmem *m, void *addr, uint32_t len)
{
	struct rt_sge s = { addr, len, m->mr->lkey };

	return s;
}

void rt_buf_free(struct rt_conn *c)
{
	struct rt_lmem *m, *next;

	for (m = c->lall; m; m = next) {
		next = m->anext;
		lmem_destroy(m);
	}
	c->lall = NULL;
	memset(c->lcache, 0, sizeof(c->lcache));
	memset(c->rcache, 0, sizeof(c->rcache));
	c->cached = 0;
	while (c->nsmrs)
		ibv_dereg_mr(c->smrs[--c->nsmrs]);
	free(c->smrs);
	while (c->nrmrs)
		ibv_dereg_mr(c->rmrs[--c->nrmrs]);
	free(c->rmrs);
	pages_free(c->sslab, c->sslab_len);
	pages_free(c->rslab, c->rslab_len);
	c->sslab = c->rslab = NULL;
	free(c->sbufs);
	free(c->rbufs);
}
