/*
 * rw_props.c - transport properties: one semantic model, the v2-05 and
 * xcharext-02 codecs, and the rules for initial sets, updates and change
 * requests (rw_props.h, v2-05 §6, AMB-V2-1).
 */
#include <string.h>

#include "rw_be.h"
#include "rw_props.h"

static const uint32_t rw_prop_defaults[RW_SP_NR] = {
	[RW_SP_RBSIZ] = RW2_RBSIZ_DEFAULT,
	[RW_SP_BRS] = RW2_BRS_INLINE,
	[RW_SP_REQREMINV] = 0,
};

/* id -> semantic property, per codec (AMB-X-1). */
static const int rw_v2_ids[] = { [1] = RW_SP_RBSIZ, [2] = RW_SP_BRS };
static const int rw_xc_ids[] = {
	[1] = RW_SP_RBSIZ, [2] = RW_SP_REQREMINV, [3] = RW_SP_BRS
};

void rw_props_init(struct rw_props *p)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->val, rw_prop_defaults, sizeof(p->val));
}

int rw_prop_sem(enum rw_pcodec c, uint32_t id)
{
	if (c == RW_PC_V2)
		return id >= 1 && id <= 2 ? rw_v2_ids[id] : -1;
	return id >= 1 && id <= 3 ? rw_xc_ids[id] : -1;
}

uint32_t rw_prop_id(enum rw_pcodec c, enum rw_sprop sp)
{
	uint32_t id;

	for (id = 1; id <= 3; id++)
		if (rw_prop_sem(c, id) == (int)sp)
			return id;
	return 0;
}

enum rw_reason rw_prop_get(enum rw_sprop sp, const struct rw_prop *p,
			   uint32_t *val)
{
	uint32_t v;

	if (!p->len) {
		*val = rw_prop_defaults[sp];
		return RW_R_OK;
	}
	if (p->len != 4)
		return RW_R_BAD_PROP;
	v = rw_get32(p->data);
	if ((sp == RW_SP_BRS && v > RW2_BRS_GENL) ||
	    (sp == RW_SP_REQREMINV && v > 1))
		return RW_R_BAD_PROP;
	*val = v;
	return RW_R_OK;
}

/* Check every known entry before anything changes: a set is applied whole
 * or not at all. */
static enum rw_reason props_check(enum rw_pcodec c, const struct rw_propset *ps)
{
	uint32_t i, v;
	int sp;

	for (i = 0; i < ps->n; i++) {
		sp = rw_prop_sem(c, ps->props[i].id);
		if (sp >= 0 &&
		    rw_prop_get((enum rw_sprop)sp, &ps->props[i], &v))
			return RW_R_BAD_PROP;
	}
	return RW_R_OK;
}

/* A peer's Receive Buffer Size below the floor is not believed. */
static bool prop_sane(enum rw_sprop sp, uint32_t v)
{
	return sp != RW_SP_RBSIZ || v >= RW_PROP_RBSIZ_FLOOR;
}

/* Apply entries in order, so the last occurrence of an id wins. */
static void props_apply(struct rw_props *p, enum rw_pcodec c,
			const struct rw_propset *ps, bool initial)
{
	uint32_t i, v;
	int sp;

	for (i = 0; i < ps->n; i++) {
		sp = rw_prop_sem(c, ps->props[i].id);
		if (sp < 0)
			continue; /* unknown: skipped (V2-PROP-3) */
		/* props_check() passed the set; a failure here is still
		 * an entry not taken, never a value made up */
		if (rw_prop_get((enum rw_sprop)sp, &ps->props[i], &v) ||
		    (!initial && (p->nochg & RW_SP_BIT(sp))) ||
		    !prop_sane((enum rw_sprop)sp, v)) {
			p->ignored++;
			continue;
		}
		p->val[sp] = v;
		p->advertised |= RW_SP_BIT(sp);
	}
}

enum rw_reason rw_props_initial(struct rw_props *p, enum rw_pcodec c,
				const struct rw_propset *start,
				const struct rw_subset *nochg)
{
	uint32_t i, given = 0;
	int sp;

	if (props_check(c, start))
		return RW_R_BAD_PROP;
	rw_props_init(p);
	props_apply(p, c, start, true);
	for (i = 0; i < start->n; i++) {
		sp = rw_prop_sem(c, start->props[i].id);
		if (sp < 0)
			continue;
		given |= RW_SP_BIT(sp);
		if (nochg && rw_subset_test(nochg, i))
			p->nochg |= RW_SP_BIT(sp);
	}
	/* absent from the initial set: default and unchangeable (V2-OPS-6) */
	p->nochg |= ~given & (RW_SP_BIT(RW_SP_NR) - 1);
	return RW_R_OK;
}

enum rw_reason rw_props_update(struct rw_props *p, enum rw_pcodec c,
			       const struct rw_propset *now)
{
	if (props_check(c, now))
		return RW_R_BAD_PROP;
	props_apply(p, c, now, false);
	return RW_R_OK;
}

static bool props_dup(enum rw_pcodec c, const struct rw_propset *ps, uint32_t i)
{
	uint32_t j;

	for (j = 0; j < ps->n; j++)
		if (j != i && ps->props[j].id == ps->props[i].id)
			return true;
	return false;
}

void rw_props_answer(const struct rw_props *local, enum rw_pcodec c,
		     const struct rw_propset *want, struct rw_subset *done,
		     struct rw_subset *rejected)
{
	uint32_t i, v;
	int sp;

	memset(done, 0, sizeof(*done));
	memset(rejected, 0, sizeof(*rejected));
	for (i = 0; i < want->n; i++) {
		sp = rw_prop_sem(c, want->props[i].id);
		if (sp >= 0 && !props_dup(c, want, i) &&
		    !rw_prop_get((enum rw_sprop)sp, &want->props[i], &v) &&
		    v == local->val[sp])
			rw_subset_set(done, i);
		else
			rw_subset_set(rejected, i);
	}
}

void rw_props_start(const struct rw_props *local, struct rw_propset *start,
		    struct rw_subset *nochg, struct rw_prop *props,
		    uint8_t *data)
{
	static const enum rw_sprop sent[] = { RW_SP_RBSIZ, RW_SP_BRS };
	uint32_t i;

	memset(nochg, 0, sizeof(*nochg));
	for (i = 0; i < sizeof(sent) / sizeof(sent[0]); i++) {
		rw_put32(data + 4 * i, local->val[sent[i]]);
		props[i].id = rw_prop_id(RW_PC_V2, sent[i]);
		props[i].len = 4;
		props[i].data = data + 4 * i;
		rw_subset_set(nochg, i);
	}
	start->props = props;
	start->n = i;
}

uint32_t rw_props_send_limit(const struct rw_props *peer, uint32_t ours)
{
	uint32_t rb = peer->val[RW_SP_RBSIZ];

	if (rb < RW_PROP_RBSIZ_FLOOR)
		rb = RW_PROP_RBSIZ_FLOOR;
	return rb < ours ? rb : ours;
}

/* ---- xcharext-02 optinfo ------------------------------------------------ */

enum rw_reason rw_xchar_decode(uint32_t type, const void *info, uint32_t len,
			       struct rw_xchar_msg *m)
{
	enum rw_reason why;
	size_t off = 0;
	uint32_t v;

	memset(&m->set, 0, sizeof(m->set));
	memset(&m->nochg, 0, sizeof(m->nochg));
	m->pendclr = false;
	m->type = type;
	switch (type) {
	case RW_XC_INITXCH:
		why = rw_body_get_propset(info, len, &off, &m->set, m->props,
					  RW_MAX_PROPS);
		return why ? why :
			     rw_body_get_subset(info, len, &off, &m->nochg);
	case RW_XC_REQXCH:
		return rw_body_get_propset(info, len, &off, &m->set, m->props,
					   RW_MAX_PROPS);
	case RW_XC_UPDXCH: /* one xcharval, then pendclr */
		m->set.props = m->props;
		m->set.n = 1;
		why = rw_body_get_u32(info, len, &off, &m->props[0].id);
		if (!why)
			why = rw_body_get_opaque(info, len, &off,
						 &m->props[0].len,
						 &m->props[0].data);
		if (!why)
			why = rw_body_get_u32(info, len, &off, &v);
		if (!why && v > 1)
			why = RW_R_BAD_BOOL;
		m->pendclr = !why && v == 1;
		return why;
	default: /* RESPXCH answers a REQXCH we never send */
		return RW_R_BAD_OPTION;
	}
}

size_t rw_xchar_respxch(const struct rw_subset *done,
			const struct rw_subset *rej, void *buf, size_t cap)
{
	static const struct rw_subset none;
	uint8_t *p = buf;
	size_t a, b, c;

	a = rw_body_put_subset(done, p, cap);
	b = a ? rw_body_put_subset(rej, p + a, cap - a) : 0;
	c = b ? rw_body_put_subset(&none, p + a + b, cap - a - b) : 0;
	return c ? a + b + c : 0;
}
