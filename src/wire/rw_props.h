/*
 * rw_props.h - RPC-over-RDMA v2 transport properties (v2-05 §6) and the
 * xcharext-02 characteristics read in compatibility mode (AMB-V2-1), as
 * one model of semantic properties with two codecs.
 *
 * The model (AMB-X-1): Receive Buffer Size, Backward Request
 * Support and xcharext's Requester Remote Invalidation, each a uint32 with
 * a default, plus which of them the advertiser said will not change.  The
 * codec - v2-05 ids {1 RBSIZ, 2 BRS} or xcharext ids {1 RBSIZ, 2 REQREMINV,
 * 3 BRS} - is chosen by the carrier alone: procs 6-9 are v2-05, an
 * RDMA2_OPTIONAL with opttype 1-4 is xcharext (never guessed, AMB-X-1).
 *
 * Rules kept here, so both sides and every carrier apply them alike:
 *   - a zero-length value is the default (V2-PROP-4), an unknown id is
 *     skipped (V2-PROP-3, V2-OPS-7, XC-3), a known id with data of the wrong
 *     length or an impossible enum value is an XDR error (V2-PROP-2, XC-2);
 *   - the last occurrence of an id wins in CONNPROP/UPDPROP (AMB-V2-11);
 *   - properties absent from an initial set are default and unchangeable
 *     (V2-OPS-6); a later update of a property said not to change is
 *     ignored and counted;
 *   - a change request is answered for each entry: "done" when the value
 *     asked for is the one in force (nothing to change), "rejected"
 *     otherwise, for duplicated ids and for unknown ids (V2-PROP-6,
 *     AMB-V2-11): this implementation never changes its properties on a
 *     live connection, its Receive buffers being posted at their size.
 *   - sanity (V2-SEC-1, AMB-V2-17): a peer's Receive Buffer Size only ever
 *     bounds what we send, never below 1024 octets; it is never a reason to
 *     shrink our own Receives.
 */
#ifndef RW_PROPS_H
#define RW_PROPS_H

#include <stdbool.h>
#include <stdint.h>

#include "rw_hdr.h"

enum rw_sprop {
	RW_SP_RBSIZ = 0, /* Receive Buffer Size, octets */
	RW_SP_BRS,	 /* Backward Request Support, RW2_BRS_* */
	RW_SP_REQREMINV, /* xcharext only: bool */
	RW_SP_NR
};

enum rw_pcodec {
	RW_PC_V2,    /* draft-cel-nfsv4-rpcrdma-version-two-05 */
	RW_PC_XCHAR, /* draft-dnoveck-nfsv4-rpcrdma-xcharext-02 */
};

/* xcharext-02 optional operations (opttype of RDMA2_OPTIONAL). */
#define RW_XC_INITXCH 1u
#define RW_XC_REQXCH  2u
#define RW_XC_RESPXCH 3u
#define RW_XC_UPDXCH  4u

/* Smallest Receive Buffer Size taken from a peer (V2-INL-1). */
#define RW_PROP_RBSIZ_FLOOR 1024u

/* One side's properties as known to an endpoint. */
struct rw_props {
	uint32_t val[RW_SP_NR];
	uint32_t advertised; /* bit per enum rw_sprop: given by the peer */
	uint32_t nochg;	     /* bit per enum rw_sprop: will not change */
	uint32_t ignored;    /* updates refused (nochg, insane values) */
};

#define RW_SP_BIT(sp) (1u << (sp))

/* Defaults: RBSIZ 4096, BRS INLINE, REQREMINV false; nothing advertised. */
void rw_props_init(struct rw_props *p);

/* The semantic property of id in codec c, or -1 if c does not know it. */
int rw_prop_sem(enum rw_pcodec c, uint32_t id);

/* The id of sp in codec c, or 0 if c has none (REQREMINV in v2). */
uint32_t rw_prop_id(enum rw_pcodec c, enum rw_sprop sp);

/*
 * The value of entry p as property sp: *val is set (the default for an
 * empty value) and RW_R_OK returned, or RW_R_BAD_PROP for data that is not
 * one XDR word or not a valid value of the property's type.
 */
enum rw_reason rw_prop_get(enum rw_sprop sp, const struct rw_prop *p,
			   uint32_t *val);

/*
 * An initial set (CONNPROP start/nochg, INITXCH): p is reset (counter
 * included) to the defaults, then the set applied; the absent ones, and those nochg
 * marks, will not change.  RW_R_BAD_PROP (nothing changed) for an invalid
 * value of a known property.
 */
enum rw_reason rw_props_initial(struct rw_props *p, enum rw_pcodec c,
				const struct rw_propset *start,
				const struct rw_subset *nochg);

/* An update (UPDPROP now, UPDXCH): applied, except to properties that were
 * said not to change (counted in p->ignored).  RW_R_BAD_PROP as above. */
enum rw_reason rw_props_update(struct rw_props *p, enum rw_pcodec c,
			       const struct rw_propset *now);

/*
 * Answer a change request want against our own properties local: the
 * positions done (the value asked for is already in force) and rejected
 * (anything else), as propsubsets; every position is in exactly one.
 */
void rw_props_answer(const struct rw_props *local, enum rw_pcodec c,
		     const struct rw_propset *want, struct rw_subset *done,
		     struct rw_subset *rejected);

/*
 * Encode local as an initial set in codec RW_PC_V2: RBSIZ and BRS, both
 * marked not to change.  props[] and data[] are the storage the set points
 * into (at least RW_SP_NR entries and 4 * RW_SP_NR octets).
 */
void rw_props_start(const struct rw_props *local, struct rw_propset *start,
		    struct rw_subset *nochg, struct rw_prop *props,
		    uint8_t *data);

/* The largest message we may send to a peer with these properties, given
 * our own limit ours (its Receive Buffer Size, never below the floor). */
uint32_t rw_props_send_limit(const struct rw_props *peer, uint32_t ours);

/* ---- xcharext-02 optinfo bodies (compatibility mode, xcharext-02 §4) ----- */

struct rw_xchar_msg {
	uint32_t type;		/* RW_XC_* */
	struct rw_propset set;	/* INITXCH start, REQXCH want, UPDXCH
					 * now (one entry) */
	struct rw_subset nochg; /* INITXCH */
	bool pendclr;		/* UPDXCH */
	struct rw_prop props[RW_MAX_PROPS];
};

/* Decode the optinfo of opttype type (1-4); RW_R_BAD_OPTION for another
 * type, RW_R_TRUNCATED / RW_R_TOO_MANY_PROPS / RW_R_BAD_BOOL otherwise. */
enum rw_reason rw_xchar_decode(uint32_t type, const void *info, uint32_t len,
			       struct rw_xchar_msg *m);

/* A RESPXCH optinfo {done, rej, pend (empty)} into buf: its octets or 0. */
size_t rw_xchar_respxch(const struct rw_subset *done,
			const struct rw_subset *rej, void *buf, size_t cap);

#endif /* RW_PROPS_H */
