/*
 * ulb.h - internal interface of the Upper-Layer Binding table (RFC 8166 §6,
 * V1-ULB-*): what the CLIENT and SVCXPRT ask before marshalling, and the
 * pieces the table, the configuration file parser and the built-in NFS
 * bindings share.  The public half is in <rpc/rpcrdma.h> (rpcrdma_ulb(3)).
 */
#ifndef RPCRDMA_ULB_H
#define RPCRDMA_ULB_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rpc/rpcrdma.h>

#include "wire/rw_xdr.h"

/*
 * Where an entry came from.  A later registration replaces an earlier one
 * only from the same or a stronger source, so the outcome does not depend
 * on when the configuration file happens to be loaded: the application
 * beats the file, the file beats the built-in bindings.
 */
enum ulb_source {
	ULB_SRC_BUILTIN = 0,
	ULB_SRC_CONF,
	ULB_SRC_APP,
};

/* Add or replace one entry (ulb_table.c); 0 or an errno value. */
int ulb_table_add(const struct rpcrdma_ulb_entry *e, enum ulb_source src);

/* Check an entry for consistency; NULL if good, else why not. */
const char *ulb_entry_check(const struct rpcrdma_ulb_entry *e);

/*
 * Parse an octet count N, Nk or Nm (at most UINT32_MAX) at s; *end is left
 * after it.  Shared by the configuration file and RPCRDMA_* variables.
 */
bool ulb_octets(const char *s, const char **end, uint32_t *out);

/* Register the built-in bindings (ulb_nfs.c). */
void ulb_nfs_register(void);

/*
 * A binding that designates items by parsing the body (RW_DDP_PICK), for
 * procedures whose eligible items have no fixed ordinal: NFSv4 COMPOUND
 * (ulb_nfs4.c).  Registered for one (program, version, procedure) as a
 * CALL and a REPLY entry whose public face has no items and no sizes; an
 * application or configuration entry for the same key replaces it.
 */
#define ULB_PLAN_MAX 8u

/*
 * What a requester provides for the results of one call: one Write chunk
 * of room[i] octets per eligible result, in slot order (slot i is the
 * Write chunk the responder puts result i into), and the largest reply
 * besides those results (status, attributes, length words; no RPC header).
 */
struct ulb_plan {
	uint32_t nslots; /* eligible results, at most
					 * ULB_PLAN_MAX; later ones inline */
	uint32_t room[ULB_PLAN_MAX];
	uint32_t reply_max;   /* 0: unknown, the CLIENT default */
	uint32_t inline_room; /* most octets of the eligible
					 * results past ULB_PLAN_MAX, which
					 * come inline */
};

struct ulb_walker {
	const char *name;
	rw_ddp_pick_fn pick_call;  /* eligible argument items */
	rw_ddp_pick_fn pick_reply; /* eligible results and their slot */
	/* The plan for arguments of len octets seen through args (body
	 * offsets).  Returns 0, or EINVAL for arguments it cannot parse;
	 * the plan is then empty (nothing placed, reply_max 0). */
	int (*plan)(const struct rw_ddp_view *args, uint32_t len,
		    struct ulb_plan *p);
};

/* Register w for (prog, vers, proc) in both directions (built-in). */
int ulb_table_add_walker(rpcprog_t prog, rpcvers_t vers, rpcproc_t proc,
			 const struct ulb_walker *w);

/*
 * The entry for (prog, vers, proc, dir) and, if it is a walker binding,
 * its walker (else *walk = NULL); 0 or ENOENT.
 */
int ulb_lookup(rpcprog_t prog, rpcvers_t vers, rpcproc_t proc,
	       enum rpcrdma_ulb_dir dir, struct rpcrdma_ulb_entry *e,
	       const struct ulb_walker **walk);

/*
 * Whether the table has any entry for (prog, vers), in *bound, and the
 * generation of the table it was read in; ulb_generation() is the
 * table's generation now.  An answer remembered with its generation holds
 * while the two are equal: a caller that asks per call keeps the lookup
 * off its path for programs without a binding (rr_policy_bound()).
 */
unsigned int ulb_bound(rpcprog_t prog, rpcvers_t vers, bool *bound);

/* The same for one procedure: an entry in either direction, in *bound;
 * one that places something (an eligible item or a walker), in *placed. */
unsigned int ulb_proc_bound(rpcprog_t prog, rpcvers_t vers, rpcproc_t proc,
			    bool *bound, bool *placed);
unsigned int ulb_generation(void);

/* The NFSv4 COMPOUND walker (ulb_nfs4.c), registered by ulb_nfs_register. */
extern const struct ulb_walker ulb_nfs4_walker;

/*
 * Parse one configuration line (ulb_conf.c).  Returns 1 with *e filled for
 * an entry, 0 for a blank or comment line, -1 with why[] set for a bad one.
 */
int ulb_conf_parse_line(const char *line, struct rpcrdma_ulb_entry *e,
			char *why, size_t whylen);

/*
 * Load a configuration file: each good entry is registered with source
 * ULB_SRC_CONF, each bad one is reported to errs as "FILE:LINE: reason"
 * (errs NULL: as a warning of the library's log, log/rl_log.h) and
 * skipped.  Returns the number of bad entries, or -1 with errno set
 * if the file cannot be read.
 */
int ulb_conf_load(const char *path, FILE *errs);

/*
 * Resolve a REPLY entry's sizes (as rpcrdma_ulb_sizes()) for arguments of
 * len octets that are not one buffer: word(ctx, off, &w) reads the
 * big-endian word at offset off of the arguments (off + 4 <= len).
 */
typedef bool (*ulb_word_fn)(const void *ctx, size_t off, uint32_t *w);
int ulb_sizes_at(const struct rpcrdma_ulb_entry *e, ulb_word_fn word,
		 const void *ctx, size_t len, uint32_t *room,
		 uint32_t *reply_max);

/*
 * Turn an entry into the wire layer's policy (NULL entry: no reduction,
 * RFC 8166 §6).  A requester encoding a Call passes dflt_min, used when
 * the entry says min=0; a responder encoding a Reply and both decoders
 * pass reply = true, which clears min_len (V1-WC-2: every eligible result
 * goes into an offered Write chunk).
 */
void ulb_ddp_policy(const struct rpcrdma_ulb_entry *e, bool reply,
		    uint32_t dflt_min, struct rw_ddp_policy *pol);

/* The same for a walker binding: RW_DDP_PICK with its pick function. */
void ulb_walk_policy(const struct ulb_walker *w, bool reply, uint32_t dflt_min,
		     struct rw_ddp_policy *pol);

#endif /* RPCRDMA_ULB_H */
