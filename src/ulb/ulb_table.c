/*
 * ulb_table.c - the Upper-Layer Binding table: entries keyed by (program,
 * version, procedure, direction) saying which body items are DDP-eligible
 * and how much room a requester provides for results (RFC 8166 §6,
 * V1-ULB-1..4, V1-WC-1, V1-RP-1/2).  Also the public entry points of
 * rpcrdma_ulb(3) and the conversion to the wire layer's rw_ddp_policy.
 *
 * The table is a sorted array behind a read-write lock: registrations are
 * rare (start-up, configuration load) while every RPC looks up, and a
 * lookup copies the entry out so no caller holds a pointer into the array.
 * The built-in bindings and the configuration file are loaded once, lazily,
 * by whichever entry point runs first.
 */
#define _GNU_SOURCE /* secure_getenv */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "compiler.h"
#include "conf/rc_env.h"
#include "log/rl_log.h"
#include "ulb/ulb.h"

#ifndef RPCRDMA_ULB_CONF
#define RPCRDMA_ULB_CONF "/etc/rpcrdma/ulb.conf"
#endif

struct ulb_slot {
	struct rpcrdma_ulb_entry e;
	enum ulb_source src;
	const struct ulb_walker *walk; /* a walker binding, or NULL */
};

static pthread_rwlock_t ulb_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct ulb_slot *ulb_slots;
static size_t ulb_nslots;
static size_t ulb_cap;
static pthread_once_t ulb_once = PTHREAD_ONCE_INIT;
/* Bumped by every change of the table, under its write lock: an answer
 * remembered with the generation it was read in holds while it stays. */
static atomic_uint ulb_gen = 1;

/* ---------------------------------------------------------------------- */
/* lazy initialization                                                     */

/*
 * Built-ins first, then the file, so the file's entries override them.  A
 * missing file at the default path is normal (no local bindings: said at
 * level info); a file named by RPCRDMA_ULB_CONF that cannot be read is
 * worth a warning.  secure_getenv: a set-user-ID program does not read a
 * file its caller names.
 */
static void init(void)
{
	const char *env = rc_getenv("RPCRDMA_ULB_CONF");
	const char *path = env && *env ? env : RPCRDMA_ULB_CONF;
	int n;

	ulb_nfs_register();
	n = ulb_conf_load(path, NULL);
	if (n < 0 && !env && errno == ENOENT)
		rl_info("%s: no such file: no Upper-Layer Bindings beyond the "
			"built-in NFS ones",
			path);
	else if (n < 0)
		rl_warn("%s: %s", path, strerror(errno));
}

static void ensure_init(void)
{
	pthread_once(&ulb_once, init);
}

/* ---------------------------------------------------------------------- */
/* the sorted array                                                        */

static int key_cmp(const struct rpcrdma_ulb_entry *a, rpcprog_t prog,
		   rpcvers_t vers, rpcproc_t proc, enum rpcrdma_ulb_dir dir)
{
	if (a->prog != prog)
		return a->prog < prog ? -1 : 1;
	if (a->vers != vers)
		return a->vers < vers ? -1 : 1;
	if (a->proc != proc)
		return a->proc < proc ? -1 : 1;
	if (a->dir != dir)
		return a->dir < dir ? -1 : 1;
	return 0;
}

/* Index of the key, or of where it would be inserted; caller holds lock. */
static size_t table_find(rpcprog_t prog, rpcvers_t vers, rpcproc_t proc,
			 enum rpcrdma_ulb_dir dir, bool *found)
{
	size_t lo = 0, hi = ulb_nslots;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = key_cmp(&ulb_slots[mid].e, prog, vers, proc, dir);

		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

static int grow(void)
{
	size_t cap = ulb_cap ? ulb_cap * 2 : 32;
	struct ulb_slot *s;

	s = realloc(ulb_slots, cap * sizeof(*s));
	if (!s)
		return ENOMEM;
	ulb_slots = s;
	ulb_cap = cap;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* checks shared by registration and the configuration parser              */

static bool size_ok(const struct rpcrdma_ulb_size *sz)
{
	switch (sz->kind) {
	case RPCRDMA_ULB_SIZE_NONE:
	case RPCRDMA_ULB_SIZE_FIXED:
		return true;
	case RPCRDMA_ULB_SIZE_ARG:
		return sz->offset % 4 == 0;
	}
	return false;
}

const char *ulb_entry_check(const struct rpcrdma_ulb_entry *e)
{
	size_t i;

	if (e->dir != RPCRDMA_ULB_CALL && e->dir != RPCRDMA_ULB_REPLY)
		return "direction is neither call nor reply";
	for (i = 0; i < ARRAY_SIZE(e->reserved); i++)
		if (e->reserved[i])
			return "reserved fields are not zero";
	if (e->dir == RPCRDMA_ULB_CALL) {
		/* results are sized by the requester only (V1-WC-1) */
		if (e->room.kind != RPCRDMA_ULB_SIZE_NONE ||
		    e->reply_max.kind != RPCRDMA_ULB_SIZE_NONE)
			return "room and max apply only to reply entries";
		return NULL;
	}
	if (!size_ok(&e->room))
		return "room: bad size kind, or offset not a multiple of 4";
	if (!size_ok(&e->reply_max))
		return "max: bad size kind, or offset not a multiple of 4";
	/* a Write chunk must be sized for the largest result (V1-WC-1,
	 * V1-ULB-2): eligibility without a known maximum is meaningless */
	if (e->items && e->room.kind == RPCRDMA_ULB_SIZE_NONE)
		return "reply items are DDP-eligible but no room is given";
	return NULL;
}

/* Add or replace one entry, the table's lock held. */
static int table_put(const struct rpcrdma_ulb_entry *e, enum ulb_source src,
		     const struct ulb_walker *walk)
{
	struct ulb_slot *sl;
	bool found;
	size_t i;
	int err;

	i = table_find(e->prog, e->vers, e->proc, e->dir, &found);
	atomic_fetch_add(&ulb_gen, 1);
	if (found) {
		sl = &ulb_slots[i];
		if (src >= sl->src) {
			sl->e = *e;
			sl->src = src;
			sl->walk = walk;
		}
		return 0;
	}
	if (ulb_nslots == ulb_cap) {
		err = grow();
		if (err)
			return err;
	}
	memmove(&ulb_slots[i + 1], &ulb_slots[i],
		(ulb_nslots - i) * sizeof(*ulb_slots));
	sl = &ulb_slots[i];
	sl->e = *e;
	sl->src = src;
	sl->walk = walk;
	ulb_nslots++;
	return 0;
}

int ulb_table_add(const struct rpcrdma_ulb_entry *e, enum ulb_source src)
{
	int err;

	if (!e || ulb_entry_check(e))
		return EINVAL;
	pthread_rwlock_wrlock(&ulb_lock);
	err = table_put(e, src, NULL);
	pthread_rwlock_unlock(&ulb_lock);
	return err;
}

/*
 * A walker binding's public face is an entry with no items and no sizes:
 * rpcrdma_ulb_lookup() shows the procedure is bound, and any entry an
 * application or the file registers for it replaces the walker.
 */
int ulb_table_add_walker(rpcprog_t prog, rpcvers_t vers, rpcproc_t proc,
			 const struct ulb_walker *w)
{
	struct rpcrdma_ulb_entry e = {
		.prog = prog,
		.vers = vers,
		.proc = proc,
	};
	int err;

	if (!w || !w->pick_call || !w->pick_reply || !w->plan)
		return EINVAL;
	pthread_rwlock_wrlock(&ulb_lock);
	e.dir = RPCRDMA_ULB_CALL;
	err = table_put(&e, ULB_SRC_BUILTIN, w);
	e.dir = RPCRDMA_ULB_REPLY;
	if (!err)
		err = table_put(&e, ULB_SRC_BUILTIN, w);
	pthread_rwlock_unlock(&ulb_lock);
	return err;
}

/* ---------------------------------------------------------------------- */
/* public API                                                              */

RPCRDMA_EXPORT int rpcrdma_ulb_register(const struct rpcrdma_ulb_entry *entry)
{
	ensure_init();
	return ulb_table_add(entry, ULB_SRC_APP);
}

RPCRDMA_EXPORT int rpcrdma_ulb_unregister(rpcprog_t prog, rpcvers_t vers,
					  rpcproc_t proc,
					  enum rpcrdma_ulb_dir dir)
{
	size_t i;
	bool found;

	ensure_init();
	pthread_rwlock_wrlock(&ulb_lock);
	i = table_find(prog, vers, proc, dir, &found);
	if (found) {
		memmove(&ulb_slots[i], &ulb_slots[i + 1],
			(ulb_nslots - i - 1) * sizeof(*ulb_slots));
		ulb_nslots--;
		atomic_fetch_add(&ulb_gen, 1);
	}
	pthread_rwlock_unlock(&ulb_lock);
	return found ? 0 : ENOENT;
}

int ulb_lookup(rpcprog_t prog, rpcvers_t vers, rpcproc_t proc,
	       enum rpcrdma_ulb_dir dir, struct rpcrdma_ulb_entry *e,
	       const struct ulb_walker **walk)
{
	size_t i;
	bool found;

	ensure_init();
	pthread_rwlock_rdlock(&ulb_lock);
	i = table_find(prog, vers, proc, dir, &found);
	if (found && e)
		*e = ulb_slots[i].e;
	if (walk)
		*walk = found ? ulb_slots[i].walk : NULL;
	pthread_rwlock_unlock(&ulb_lock);
	return found ? 0 : ENOENT;
}

unsigned int ulb_generation(void)
{
	ensure_init();
	return atomic_load(&ulb_gen);
}

unsigned int ulb_bound(rpcprog_t prog, rpcvers_t vers, bool *bound)
{
	unsigned int gen;
	bool found;
	size_t i;

	ensure_init();
	pthread_rwlock_rdlock(&ulb_lock);
	/* the first key of (prog, vers) sorts first: procedure 0, CALL */
	i = table_find(prog, vers, 0, RPCRDMA_ULB_CALL, &found);
	*bound = found || (i < ulb_nslots && ulb_slots[i].e.prog == prog &&
			   ulb_slots[i].e.vers == vers);
	gen = atomic_load(&ulb_gen);
	pthread_rwlock_unlock(&ulb_lock);
	return gen;
}

/* Does the slot at i hold an entry of (prog, vers, proc)? */
static bool slot_is(size_t i, rpcprog_t prog, rpcvers_t vers, rpcproc_t proc)
{
	return i < ulb_nslots && ulb_slots[i].e.prog == prog &&
	       ulb_slots[i].e.vers == vers && ulb_slots[i].e.proc == proc;
}

/* Does the entry place anything: an eligible item, or a walker's pick? */
static bool slot_places(size_t i)
{
	return ulb_slots[i].e.items || ulb_slots[i].walk;
}

unsigned int ulb_proc_bound(rpcprog_t prog, rpcvers_t vers, rpcproc_t proc,
			    bool *bound, bool *placed)
{
	unsigned int gen;
	bool found;
	size_t i;

	ensure_init();
	pthread_rwlock_rdlock(&ulb_lock);
	/* CALL sorts before REPLY: at most two slots, from i on */
	i = table_find(prog, vers, proc, RPCRDMA_ULB_CALL, &found);
	*bound = slot_is(i, prog, vers, proc);
	*placed = *bound &&
		  (slot_places(i) ||
		   (slot_is(i + 1, prog, vers, proc) && slot_places(i + 1)));
	gen = atomic_load(&ulb_gen);
	pthread_rwlock_unlock(&ulb_lock);
	return gen;
}

RPCRDMA_EXPORT int rpcrdma_ulb_lookup(rpcprog_t prog, rpcvers_t vers,
				      rpcproc_t proc, enum rpcrdma_ulb_dir dir,
				      struct rpcrdma_ulb_entry *entry)
{
	return ulb_lookup(prog, vers, proc, dir, entry, NULL);
}

RPCRDMA_EXPORT int rpcrdma_ulb_load(const char *path)
{
	ensure_init();
	if (!path) {
		errno = EINVAL;
		return -1;
	}
	return ulb_conf_load(path, NULL);
}

/* ---------------------------------------------------------------------- */
/* sizes and policy                                                        */

static int size_resolve(const struct rpcrdma_ulb_size *sz, ulb_word_fn word,
			const void *ctx, size_t len, uint32_t *out)
{
	uint32_t w;
	size_t off;
	uint64_t v;

	*out = 0;
	switch (sz->kind) {
	case RPCRDMA_ULB_SIZE_NONE:
		return 0;
	case RPCRDMA_ULB_SIZE_FIXED:
		*out = sz->value;
		return 0;
	case RPCRDMA_ULB_SIZE_ARG:
		break;
	default:
		return EINVAL;
	}
	if (sz->offset >= 0) {
		off = (size_t)sz->offset;
		if (len < 4 || off > len - 4)
			return EINVAL;
	} else {
		if ((size_t) - (int64_t)sz->offset > len)
			return EINVAL;
		off = len - (size_t) - (int64_t)sz->offset;
	}
	if (!word(ctx, off, &w))
		return EINVAL;
	v = (uint64_t)w + sz->value;
	/* a peer-controlled count must not wrap into a small chunk */
	*out = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
	return 0;
}

int ulb_sizes_at(const struct rpcrdma_ulb_entry *e, ulb_word_fn word,
		 const void *ctx, size_t len, uint32_t *room,
		 uint32_t *reply_max)
{
	uint32_t r, m;
	int err;

	if (!e)
		return EINVAL;
	err = size_resolve(&e->room, word, ctx, len, &r);
	if (!err)
		err = size_resolve(&e->reply_max, word, ctx, len, &m);
	if (err)
		return err;
	if (room)
		*room = r;
	if (reply_max)
		*reply_max = m;
	return 0;
}

/* The arguments as one buffer (rpcrdma_ulb_sizes()). */
static bool flat_word(const void *ctx, size_t off, uint32_t *w)
{
	const uint8_t *a = ctx;

	if (!a)
		return false;
	*w = (uint32_t)a[off] << 24 | (uint32_t)a[off + 1] << 16 |
	     (uint32_t)a[off + 2] << 8 | a[off + 3];
	return true;
}

RPCRDMA_EXPORT int rpcrdma_ulb_sizes(const struct rpcrdma_ulb_entry *entry,
				     const void *args, size_t len,
				     uint32_t *room, uint32_t *reply_max)
{
	return ulb_sizes_at(entry, flat_word, args, len, room, reply_max);
}

void ulb_ddp_policy(const struct rpcrdma_ulb_entry *e, bool reply,
		    uint32_t dflt_min, struct rw_ddp_policy *pol)
{
	memset(pol, 0, sizeof(*pol));
	if (!e || !e->items) {
		pol->mode = RW_DDP_NONE;
		return;
	}
	pol->mode = RW_DDP_ITEMS;
	pol->mask = e->items;
	pol->max_chunks = e->max_chunks;
	pol->min_len = reply ? 0 : (e->min_len ? e->min_len : dflt_min);
}

void ulb_walk_policy(const struct ulb_walker *w, bool reply, uint32_t dflt_min,
		     struct rw_ddp_policy *pol)
{
	memset(pol, 0, sizeof(*pol));
	if (!w) {
		pol->mode = RW_DDP_NONE;
		return;
	}
	pol->mode = RW_DDP_PICK;
	pol->pick = reply ? w->pick_reply : w->pick_call;
	pol->min_len = reply ? 0 : dflt_min;
}
