/*
 * check_ulb.c - the Upper-Layer Binding table (src/ulb/; rpcrdma_ulb(3),
 * rpcrdma-ulb.conf(5); RFC 8166 §6, V1-ULB-1..4, V1-WC-1, V1-RP-1/2).
 *
 * Registration, lookup and precedence; size resolution from encoded
 * arguments; the conversion to rw_ddp_policy; the configuration parser line
 * by line and on whole files (tests/unit/ulb/good.conf, bad.conf); lazy
 * loading through RPCRDMA_ULB_CONF; and the built-in NFSv3 bindings checked against what
 * the reducing encoder does with rpcgen code of the same shape
 * (tests/unit/red_prog.x mirrors WRITE3args and READ3resok) and with the
 * RFC 1813 types themselves (tests/unit/ulb/nfs3.x).
 *
 * Each test uses its own program numbers, so the tests also pass when Check
 * does not fork (CK_FORK=no) and the table outlives a test.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "compiler.h"
#include "ulb/ulb.h"
#include "rpc/rr_policy.h"
#include "red_msg.h"
#include "tests/unit/ulb/nfs3.h" /* rpcgen output, in the build dir */
#include "check_util.h"

#define NFS_PROG 100003u

static struct rpcrdma_ulb_entry mk(rpcprog_t prog, rpcproc_t proc,
				   enum rpcrdma_ulb_dir dir, uint64_t items)
{
	struct rpcrdma_ulb_entry e;

	memset(&e, 0, sizeof(e));
	e.prog = prog;
	e.vers = 1;
	e.proc = proc;
	e.dir = dir;
	e.items = items;
	if (dir == RPCRDMA_ULB_REPLY && items) {
		e.room.kind = RPCRDMA_ULB_SIZE_FIXED;
		e.room.value = 8192;
	}
	return e;
}

/* ---------------------------------------------------------------------- */
/* table                                                                   */

START_TEST(test_register_lookup)
{
	struct rpcrdma_ulb_entry e = mk(400001, 7, RPCRDMA_ULB_CALL, 2), got;

	ck_assert_int_eq(rpcrdma_ulb_lookup(400001, 1, 7, RPCRDMA_ULB_CALL,
					    &got),
			 ENOENT);
	ck_assert_int_eq(rpcrdma_ulb_register(&e), 0);
	ck_assert_int_eq(rpcrdma_ulb_lookup(400001, 1, 7, RPCRDMA_ULB_CALL,
					    &got),
			 0);
	ck_assert(memcmp(&e, &got, sizeof(e)) == 0);
	/* the key is all four: other direction, version, procedure */
	ck_assert_int_eq(rpcrdma_ulb_lookup(400001, 1, 7, RPCRDMA_ULB_REPLY,
					    &got),
			 ENOENT);
	ck_assert_int_eq(rpcrdma_ulb_lookup(400001, 2, 7, RPCRDMA_ULB_CALL,
					    &got),
			 ENOENT);
	ck_assert_int_eq(rpcrdma_ulb_lookup(400001, 1, 6, RPCRDMA_ULB_CALL,
					    &got),
			 ENOENT);
	/* replace */
	e.items = 1;
	ck_assert_int_eq(rpcrdma_ulb_register(&e), 0);
	ck_assert_int_eq(rpcrdma_ulb_lookup(400001, 1, 7, RPCRDMA_ULB_CALL,
					    &got),
			 0);
	ck_assert_uint_eq(got.items, 1);
	ck_assert_int_eq(rpcrdma_ulb_unregister(400001, 1, 7, RPCRDMA_ULB_CALL),
			 0);
	ck_assert_int_eq(rpcrdma_ulb_unregister(400001, 1, 7, RPCRDMA_ULB_CALL),
			 ENOENT);
	ck_assert_int_eq(rpcrdma_ulb_lookup(400001, 1, 7, RPCRDMA_ULB_CALL,
					    NULL),
			 ENOENT);
}
END_TEST

/* Whether a program has any binding (ulb_bound), and the generation a
 * caller remembers that answer with (rr_policy_bound): the same while the
 * table does not change, another after a registration or a removal. */
START_TEST(test_bound_generation)
{
	struct rpcrdma_ulb_entry e = mk(400002, 3, RPCRDMA_ULB_REPLY, 2);
	unsigned int gen, gen2;
	bool bound = true;

	gen = ulb_bound(400002, 1, &bound);
	ck_assert(!bound);
	ck_assert_uint_eq(ulb_generation(), gen);
	ck_assert_uint_eq(ulb_bound(400002, 1, &bound), gen);
	ck_assert_int_eq(rpcrdma_ulb_register(&e), 0);
	ck_assert_uint_ne(ulb_generation(), gen);
	gen2 = ulb_bound(400002, 1, &bound);
	ck_assert(bound);
	ck_assert_uint_eq(gen2, ulb_generation());
	ulb_bound(400002, 2, &bound);
	ck_assert(!bound);
	ulb_bound(400003, 1, &bound);
	ck_assert(!bound);
	ulb_bound(400001, 1, &bound);
	ck_assert(!bound);
	ck_assert_int_eq(rpcrdma_ulb_unregister(400002, 1, 3,
						RPCRDMA_ULB_REPLY),
			 0);
	ck_assert_uint_ne(ulb_generation(), gen2);
	ulb_bound(400002, 1, &bound);
	ck_assert(!bound);
	/* the built-in bindings (RFC 8267): NFS version 3 */
	ulb_bound(100003, 3, &bound);
	ck_assert(bound);
}
END_TEST

/* Many keys registered out of order all stay findable (sorted insert). */
/* Per procedure (rr_policy_bound): a procedure without an entry in a
 * program with some is unbound, remembered until the table changes. */
START_TEST(test_bound_proc)
{
	struct rpcrdma_ulb_entry e = mk(400004, 6, RPCRDMA_ULB_REPLY, 1);
	struct rr_policy_memo memo;

	memset(&memo, 0, sizeof(memo));
	ck_assert(!rr_policy_bound(&memo, 400004, 1, 6));
	ck_assert_int_eq(rpcrdma_ulb_register(&e), 0);
	ck_assert(rr_policy_bound(&memo, 400004, 1, 6));
	ck_assert(!rr_policy_bound(&memo, 400004, 1, 0));
	ck_assert(!rr_policy_bound(&memo, 400004, 1, 7));
	ck_assert(rr_policy_bound(&memo, 400004, 1, 6));
	ck_assert(memo.procs_known & (1u << 0));
	ck_assert(!(memo.procs_bound & (1u << 0)));
	/* procedures past 63 are not remembered: the program's answer */
	ck_assert(rr_policy_bound(&memo, 400004, 1, 100));
	/* a CALL entry alone binds too; the memo sees the change */
	e = mk(400004, 0, RPCRDMA_ULB_CALL, 1);
	ck_assert_int_eq(rpcrdma_ulb_register(&e), 0);
	ck_assert(rr_policy_bound(&memo, 400004, 1, 0));
	ck_assert(!rr_policy_bound(&memo, 400004, 2, 0));
	ck_assert_int_eq(rpcrdma_ulb_unregister(400004, 1, 0, RPCRDMA_ULB_CALL),
			 0);
	ck_assert_int_eq(rpcrdma_ulb_unregister(400004, 1, 6,
						RPCRDMA_ULB_REPLY),
			 0);
	ck_assert(!rr_policy_bound(&memo, 400004, 1, 6));
	/* the built-in NFSv3 binding: READ has one, 22 (no procedure) none */
	ck_assert(rr_policy_bound(&memo, 100003, 3, 6));
	ck_assert(!rr_policy_bound(&memo, 100003, 3, 22));
}
END_TEST

/* A binding that only bounds the results (rpcrdma-ulbgen's "reply max"
 * of every procedure) places nothing: rr_policy_placed is false for it,
 * true for one with an eligible item in either direction. */
START_TEST(test_placed_proc)
{
	struct rpcrdma_ulb_entry max = mk(400006, 0, RPCRDMA_ULB_REPLY, 0);
	struct rpcrdma_ulb_entry rd = mk(400006, 3, RPCRDMA_ULB_REPLY, 1);
	struct rpcrdma_ulb_entry wr = mk(400006, 2, RPCRDMA_ULB_CALL, 1);
	struct rr_policy_memo memo;

	max.reply_max.kind = RPCRDMA_ULB_SIZE_FIXED;
	max.reply_max.value = 4;
	ck_assert_int_eq(rpcrdma_ulb_register(&max), 0);
	ck_assert_int_eq(rpcrdma_ulb_register(&rd), 0);
	ck_assert_int_eq(rpcrdma_ulb_register(&wr), 0);
	memset(&memo, 0, sizeof(memo));
	ck_assert(rr_policy_bound(&memo, 400006, 1, 0));
	ck_assert(!rr_policy_placed(&memo, 400006, 1, 0));
	ck_assert(rr_policy_placed(&memo, 400006, 1, 2));  /* CALL */
	ck_assert(rr_policy_placed(&memo, 400006, 1, 3));  /* REPLY */
	ck_assert(!rr_policy_placed(&memo, 400006, 1, 1)); /* no entry */
	/* a REPLY entry after a CALL entry that places nothing */
	wr = mk(400006, 3, RPCRDMA_ULB_CALL, 0);
	ck_assert_int_eq(rpcrdma_ulb_register(&wr), 0);
	ck_assert(rr_policy_placed(&memo, 400006, 1, 3));
	/* the memo follows the table */
	ck_assert_int_eq(rpcrdma_ulb_unregister(400006, 1, 3,
						RPCRDMA_ULB_REPLY),
			 0);
	ck_assert(rr_policy_bound(&memo, 400006, 1, 3));
	ck_assert(!rr_policy_placed(&memo, 400006, 1, 3));
	/* past 63 the table is asked each time */
	rd = mk(400006, 70, RPCRDMA_ULB_REPLY, 1);
	ck_assert_int_eq(rpcrdma_ulb_register(&rd), 0);
	ck_assert(rr_policy_placed(&memo, 400006, 1, 70));
	ck_assert(!rr_policy_placed(&memo, 400006, 1, 71));
}
END_TEST

/* A CLIENT's cache gives what the table says, for procedures that share
 * a slot too, and follows the table when it changes. */
START_TEST(test_clnt_cache)
{
	struct rpcrdma_ulb_entry rd = mk(400007, 3, RPCRDMA_ULB_REPLY, 1);
	struct rpcrdma_ulb_entry wr = mk(400007, 2, RPCRDMA_ULB_CALL, 2);
	struct rpcrdma_ulb_entry reply;
	struct rr_policy_cache *cache = calloc(1, sizeof(*cache));
	rpcproc_t alias = 3 + RR_POLICY_SLOTS;
	struct rr_req req;

	ck_assert_ptr_nonnull(cache);
	ck_assert_int_eq(rpcrdma_ulb_register(&rd), 0);
	ck_assert_int_eq(rpcrdma_ulb_register(&wr), 0);
	for (int round = 0; round < 2; round++) {
		ck_assert(rr_policy_bound(&cache->memo, 400007, 1, 3));
		memset(&req, 0, sizeof(req));
		ck_assert(rr_policy_clnt(cache, 400007, 1, 3, 1024, &req,
					 &reply));
		ck_assert_int_eq(req.ddp.mode, RW_DDP_NONE);
		ck_assert_ptr_eq(req.reply_ulb, &reply);
		ck_assert_uint_eq(reply.items, 1);
		ck_assert_uint_eq(reply.room.value, 8192);
		ck_assert(rr_policy_bound(&cache->memo, 400007, 1, 2));
		memset(&req, 0, sizeof(req));
		ck_assert(!rr_policy_clnt(cache, 400007, 1, 2, 1024, &req,
					  &reply));
		ck_assert_int_eq(req.ddp.mode, RW_DDP_ITEMS);
		ck_assert_uint_eq(req.ddp.mask, 2);
		ck_assert_uint_eq(req.ddp.min_len, 1024);
		ck_assert_ptr_null(req.reply_ulb);
		/* the second round is answered by the slots */
		ck_assert_uint_eq(cache->slots[3].gen, cache->memo.gen);
	}
	/* a procedure of the same slot has its own answer */
	memset(&req, 0, sizeof(req));
	ck_assert(!rr_policy_clnt(cache, 400007, 1, alias, 1024, &req, &reply));
	ck_assert_int_eq(req.ddp.mode, RW_DDP_NONE);
	/* a changed table is seen once the memo is asked again */
	rd.room.value = 4096;
	ck_assert_int_eq(rpcrdma_ulb_register(&rd), 0);
	ck_assert(rr_policy_bound(&cache->memo, 400007, 1, 3));
	memset(&req, 0, sizeof(req));
	ck_assert(rr_policy_clnt(cache, 400007, 1, 3, 1024, &req, &reply));
	ck_assert_uint_eq(reply.room.value, 4096);
	free(cache);
}
END_TEST

START_TEST(test_many)
{
	struct rpcrdma_ulb_entry e, got;
	unsigned i;

	for (i = 0; i < 200; i++) {
		e = mk(400002, (i * 37) % 200, i & 1, (uint64_t)1 << (i % 64));
		ck_assert_int_eq(rpcrdma_ulb_register(&e), 0);
	}
	for (i = 0; i < 200; i++) {
		ck_assert_int_eq(rpcrdma_ulb_lookup(400002, 1, (i * 37) % 200,
						    i & 1, &got),
				 0);
		ck_assert_uint_eq(got.items, (uint64_t)1 << (i % 64));
	}
	for (i = 0; i < 200; i++)
		ck_assert_int_eq(rpcrdma_ulb_unregister(400002, 1, i, i & 1) ==
						 0 ||
					 rpcrdma_ulb_unregister(400002, 1, i,
								!(i & 1)) == 0,
				 1);
}
END_TEST

START_TEST(test_register_invalid)
{
	struct rpcrdma_ulb_entry e;

	ck_assert_int_eq(rpcrdma_ulb_register(NULL), EINVAL);

	e = mk(400003, 1, RPCRDMA_ULB_CALL, 1);
	e.room.kind = RPCRDMA_ULB_SIZE_FIXED; /* room on a call */
	ck_assert_int_eq(rpcrdma_ulb_register(&e), EINVAL);

	e = mk(400003, 1, RPCRDMA_ULB_REPLY, 1);
	e.room.kind = RPCRDMA_ULB_SIZE_NONE; /* eligible, no room (V1-WC-1) */
	ck_assert_int_eq(rpcrdma_ulb_register(&e), EINVAL);

	e = mk(400003, 1, RPCRDMA_ULB_REPLY, 1);
	e.room.kind = RPCRDMA_ULB_SIZE_ARG;
	e.room.offset = -6; /* not a word */
	ck_assert_int_eq(rpcrdma_ulb_register(&e), EINVAL);

	e = mk(400003, 1, RPCRDMA_ULB_REPLY, 0);
	e.reply_max.kind = (enum rpcrdma_ulb_size_kind)7;
	ck_assert_int_eq(rpcrdma_ulb_register(&e), EINVAL);

	e = mk(400003, 1, (enum rpcrdma_ulb_dir)2, 0);
	ck_assert_int_eq(rpcrdma_ulb_register(&e), EINVAL);

	e = mk(400003, 1, RPCRDMA_ULB_CALL, 0);
	e.reserved[3] = 1;
	ck_assert_int_eq(rpcrdma_ulb_register(&e), EINVAL);

	ck_assert_int_eq(rpcrdma_ulb_lookup(400003, 1, 1, RPCRDMA_ULB_CALL,
					    NULL),
			 ENOENT);
	ck_assert_int_eq(rpcrdma_ulb_lookup(400003, 1, 1, RPCRDMA_ULB_REPLY,
					    NULL),
			 ENOENT);
}
END_TEST

/* Application > configuration file > built-in, whatever the order. */
START_TEST(test_precedence)
{
	struct rpcrdma_ulb_entry e = mk(400004, 1, RPCRDMA_ULB_CALL, 1), got;

	ck_assert_int_eq(ulb_table_add(&e, ULB_SRC_CONF), 0);
	e.items = 2;
	ck_assert_int_eq(ulb_table_add(&e, ULB_SRC_BUILTIN), 0);
	ck_assert_int_eq(rpcrdma_ulb_lookup(400004, 1, 1, RPCRDMA_ULB_CALL,
					    &got),
			 0);
	ck_assert_uint_eq(got.items, 1); /* built-in did not win */
	e.items = 4;
	ck_assert_int_eq(rpcrdma_ulb_register(&e), 0);
	e.items = 8;
	ck_assert_int_eq(ulb_table_add(&e, ULB_SRC_CONF), 0);
	ck_assert_int_eq(rpcrdma_ulb_lookup(400004, 1, 1, RPCRDMA_ULB_CALL,
					    &got),
			 0);
	ck_assert_uint_eq(got.items, 4); /* application kept */
	ck_assert_int_eq(rpcrdma_ulb_unregister(400004, 1, 1, RPCRDMA_ULB_CALL),
			 0);
}
END_TEST

/* Lookups racing registrations see whole entries, old or new. */
#define RACE_ROUNDS 20000

static void *race_reader(void *arg)
{
	struct rpcrdma_ulb_entry got;
	unsigned i;

	for (i = 0; i < RACE_ROUNDS; i++) {
		if (rpcrdma_ulb_lookup(400005, 1, 1, RPCRDMA_ULB_CALL, &got))
			continue;
		/* writers keep min_len == items */
		if (got.min_len != (uint32_t)got.items)
			return (void *)1;
	}
	return NULL;
}

START_TEST(test_concurrent)
{
	struct rpcrdma_ulb_entry e = mk(400005, 1, RPCRDMA_ULB_CALL, 0);
	pthread_t t[3];
	void *ret;
	unsigned i;

	for (i = 0; i < 3; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, race_reader, NULL),
				 0);
	for (i = 0; i < RACE_ROUNDS; i++) {
		e.items = i | 1;
		e.min_len = (uint32_t)e.items;
		ck_assert_int_eq(rpcrdma_ulb_register(&e), 0);
		if (i % 7 == 0)
			rpcrdma_ulb_unregister(400005, 1, 1, RPCRDMA_ULB_CALL);
	}
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(pthread_join(t[i], &ret), 0);
		ck_assert_ptr_null(ret);
	}
}
END_TEST

/* ---------------------------------------------------------------------- */
/* sizes and policy                                                        */

START_TEST(test_sizes)
{
	static const uint8_t args[16] = {
		0, 0, 0, 1, 0, 0, 0x10, 0, 0xff, 0xff, 0xff, 0xf0, 0, 0, 0x20, 0
	};
	struct rpcrdma_ulb_entry e = mk(400006, 1, RPCRDMA_ULB_REPLY, 1);
	uint32_t room = 1, max = 1;

	/* fixed room, no max */
	ck_assert_int_eq(rpcrdma_ulb_sizes(&e, NULL, 0, &room, &max), 0);
	ck_assert_uint_eq(room, 8192);
	ck_assert_uint_eq(max, 0);

	/* from the front and from the end, with slack */
	e.room.kind = RPCRDMA_ULB_SIZE_ARG;
	e.room.offset = 4;
	e.room.value = 0;
	e.reply_max.kind = RPCRDMA_ULB_SIZE_ARG;
	e.reply_max.offset = -4;
	e.reply_max.value = 100;
	ck_assert_int_eq(rpcrdma_ulb_sizes(&e, args, sizeof(args), &room, &max),
			 0);
	ck_assert_uint_eq(room, 0x1000);
	ck_assert_uint_eq(max, 0x2000 + 100);

	/* the last word from the front, the first from the end */
	e.room.offset = 12;
	e.reply_max.offset = -16;
	ck_assert_int_eq(rpcrdma_ulb_sizes(&e, args, sizeof(args), &room, &max),
			 0);
	ck_assert_uint_eq(room, 0x2000);
	ck_assert_uint_eq(max, 1 + 100);

	/* a huge count plus slack saturates rather than wrapping small */
	e.reply_max.offset = 8;
	ck_assert_int_eq(rpcrdma_ulb_sizes(&e, args, sizeof(args), NULL, &max),
			 0);
	ck_assert_uint_eq(max, UINT32_MAX);

	/* outside the arguments */
	e.room.offset = 16;
	ck_assert_int_eq(rpcrdma_ulb_sizes(&e, args, sizeof(args), &room, &max),
			 EINVAL);
	e.room.offset = -20;
	ck_assert_int_eq(rpcrdma_ulb_sizes(&e, args, sizeof(args), &room, &max),
			 EINVAL);
	e.room.offset = 0;
	ck_assert_int_eq(rpcrdma_ulb_sizes(&e, args, 2, &room, &max), EINVAL);
	ck_assert_int_eq(rpcrdma_ulb_sizes(NULL, args, 16, &room, &max),
			 EINVAL);
}
END_TEST

START_TEST(test_policy)
{
	struct rpcrdma_ulb_entry e = mk(400007, 1, RPCRDMA_ULB_CALL, 0x6);
	struct rw_ddp_policy pol;

	/* no entry, or no items: no reduction (RFC 8166 §6) */
	ulb_ddp_policy(NULL, false, 1024, &pol);
	ck_assert_int_eq(pol.mode, RW_DDP_NONE);
	e.items = 0;
	ulb_ddp_policy(&e, false, 1024, &pol);
	ck_assert_int_eq(pol.mode, RW_DDP_NONE);

	e.items = 0x6;
	e.max_chunks = 1;
	ulb_ddp_policy(&e, false, 1024, &pol);
	ck_assert_int_eq(pol.mode, RW_DDP_ITEMS);
	ck_assert_uint_eq(pol.mask, 0x6);
	ck_assert_uint_eq(pol.min_len, 1024); /* transport default */
	ck_assert_uint_eq(pol.max_chunks, 1);
	ck_assert(!rw_ddp_designated(&pol, 0));
	ck_assert(rw_ddp_designated(&pol, 1));
	ck_assert(rw_ddp_designated(&pol, 2));

	e.min_len = 4096;
	ulb_ddp_policy(&e, false, 1024, &pol);
	ck_assert_uint_eq(pol.min_len, 4096);
	/* replies: every eligible result goes into its Write chunk (V1-WC-2) */
	ulb_ddp_policy(&e, true, 1024, &pol);
	ck_assert_uint_eq(pol.min_len, 0);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* configuration lines                                                     */

START_TEST(test_parse_good)
{
	struct rpcrdma_ulb_entry e;
	char why[160];

	ck_assert_int_eq(ulb_conf_parse_line("", &e, why, sizeof(why)), 0);
	ck_assert_int_eq(ulb_conf_parse_line("  # 1 2 3 call\n", &e, why,
					     sizeof(why)),
			 0);

	ck_assert_int_eq(
		ulb_conf_parse_line("100003 3 7 call ddp=1 min=4k chunks=2", &e,
				    why, sizeof(why)),
		1);
	ck_assert_uint_eq(e.prog, 100003);
	ck_assert_uint_eq(e.vers, 3);
	ck_assert_uint_eq(e.proc, 7);
	ck_assert_int_eq(e.dir, RPCRDMA_ULB_CALL);
	ck_assert_uint_eq(e.items, 2);
	ck_assert_uint_eq(e.min_len, 4096);
	ck_assert_uint_eq(e.max_chunks, 2);

	ck_assert_int_eq(
		ulb_conf_parse_line(
			"0x186a3 3 6 reply ddp=0,63 room=arg[-4] max=arg[8]+1m # x",
			&e, why, sizeof(why)),
		1);
	ck_assert_uint_eq(e.prog, 100003);
	ck_assert_int_eq(e.dir, RPCRDMA_ULB_REPLY);
	ck_assert_uint_eq(e.items, 1 | RW_DDP_ITEM(63));
	ck_assert_int_eq(e.room.kind, RPCRDMA_ULB_SIZE_ARG);
	ck_assert_int_eq(e.room.offset, -4);
	ck_assert_uint_eq(e.room.value, 0);
	ck_assert_int_eq(e.reply_max.kind, RPCRDMA_ULB_SIZE_ARG);
	ck_assert_int_eq(e.reply_max.offset, 8);
	ck_assert_uint_eq(e.reply_max.value, 1024 * 1024);

	ck_assert_int_eq(ulb_conf_parse_line("1\t2\t3\treply ddp=all room=64K",
					     &e, why, sizeof(why)),
			 1);
	ck_assert_uint_eq(e.items, ~(uint64_t)0);
	ck_assert_int_eq(e.room.kind, RPCRDMA_ULB_SIZE_FIXED);
	ck_assert_uint_eq(e.room.value, 65536);

	ck_assert_int_eq(ulb_conf_parse_line("4294967295 0 0 call ddp=none", &e,
					     why, sizeof(why)),
			 1);
	ck_assert_uint_eq(e.prog, 4294967295u);
	ck_assert_uint_eq(e.items, 0);
}
END_TEST

/* Every rejection names its reason precisely. */
static const struct {
	const char *line;
	const char *why;
} bad_lines[] = {
	{ "1 2 3", "got 3 fields" },
	{ "1 2 3 call\x01", "direction 'call\x01' is neither" },
	{ "x 2 3 call", "program 'x' is not a number" },
	{ "1 2.0 3 call", "version '2.0' is not a number" },
	{ "1 2 4294967296 call", "procedure '4294967296' is not a number" },
	{ "010x 2 3 call", "program '010x'" },
	{ "1 2 3 both", "direction 'both' is neither call nor reply" },
	{ "1 2 3 call ddp", "'ddp' is not KEYWORD=VALUE" },
	{ "1 2 3 call ddp=", "ddp: empty value" },
	{ "1 2 3 call ddp=1,,2", "ddp: '1,,2' is not a list" },
	{ "1 2 3 call ddp=1,", "ddp: '1,' is not a list" },
	{ "1 2 3 call ddp=64", "item ordinal 64 is out of range 0..63" },
	{ "1 2 3 call ddp=3,3", "item ordinal 3 is listed twice" },
	{ "1 2 3 call ddp=1 ddp=2", "keyword 'ddp' is given twice" },
	{ "1 2 3 call size=1", "unknown keyword 'size'" },
	{ "1 2 3 call min=4g", "min: '4g' is not a size" },
	{ "1 2 3 call min=4194304k", "min: '4194304k' is not a size" },
	{ "1 2 3 call chunks=65", "chunks: '65' is not a number 0..64" },
	{ "1 2 3 call room=4096", "room and max apply only to reply entries" },
	{ "1 2 3 call max=4096", "room and max apply only to reply entries" },
	{ "1 2 3 reply ddp=0", "no room is given" },
	{ "1 2 3 reply ddp=0 room=arg[2]",
	  "argument offset 2 is not a multiple of 4" },
	{ "1 2 3 reply ddp=0 room=arg[-6]",
	  "argument offset -6 is not a multiple of 4" },
	{ "1 2 3 reply ddp=0 room=arg[-0]", "the last word is -4" },
	{ "1 2 3 reply ddp=0 room=arg[4", "expected arg[OFFSET]" },
	{ "1 2 3 reply ddp=0 room=arg[x]", "expected arg[OFFSET]" },
	{ "1 2 3 reply ddp=0 room=arg[4]-8", "only '+N' may follow" },
	{ "1 2 3 reply ddp=0 room=arg[4]+", "only '+N' may follow" },
	{ "1 2 3 reply ddp=0 room=arg[2147483648]",
	  "offset 2147483648 is too large" },
	{ "1 2 3 reply max=lots", "max: 'lots' is not a size" },
};

START_TEST(test_parse_bad)
{
	struct rpcrdma_ulb_entry e;
	char why[160];

	memset(why, 0, sizeof(why));
	ck_assert_int_eq(ulb_conf_parse_line(bad_lines[_i].line, &e, why,
					     sizeof(why)),
			 -1);
	ck_assert_msg(strstr(why, bad_lines[_i].why),
		      "'%s': got '%s', want '%s'", bad_lines[_i].line, why,
		      bad_lines[_i].why);
}
END_TEST

START_TEST(test_parse_long)
{
	struct rpcrdma_ulb_entry e;
	char line[1100], why[160];

	memset(line, ' ', sizeof(line));
	line[sizeof(line) - 1] = '\0';
	ck_assert_int_eq(ulb_conf_parse_line(line, &e, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "longer than 1024"));
}
END_TEST

/* ---------------------------------------------------------------------- */
/* configuration files                                                     */

/* Load path into the table; return its messages in msgs. */
static int load(const char *path, char *msgs, size_t cap)
{
	FILE *f = tmpfile();
	size_t n;
	int bad;

	ck_assert_ptr_nonnull(f);
	bad = ulb_conf_load(path, f);
	rewind(f);
	n = fread(msgs, 1, cap - 1, f);
	msgs[n] = '\0';
	fclose(f);
	return bad;
}

START_TEST(test_file_good)
{
	struct rpcrdma_ulb_entry e;
	char msgs[4096];
	uint32_t room, max;
	static const uint8_t args[12] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0
	};

	ck_assert_int_eq(load(ULB_TESTDIR "/good.conf", msgs, sizeof(msgs)), 0);
	ck_assert_str_eq(msgs, "");

	ck_assert_int_eq(rpcrdma_ulb_lookup(400100, 1, 7, RPCRDMA_ULB_CALL, &e),
			 0);
	ck_assert_uint_eq(e.items, 2);
	ck_assert_uint_eq(e.min_len, 4096);
	ck_assert_uint_eq(e.max_chunks, 1);

	ck_assert_int_eq(rpcrdma_ulb_lookup(400100, 1, 6, RPCRDMA_ULB_REPLY,
					    &e),
			 0);
	ck_assert_uint_eq(e.items, 1);
	ck_assert_int_eq(rpcrdma_ulb_sizes(&e, args, sizeof(args), &room, &max),
			 0);
	ck_assert_uint_eq(room, 0x4000);
	ck_assert_uint_eq(max, 256);

	ck_assert_int_eq(rpcrdma_ulb_lookup(400004, 1, 2, RPCRDMA_ULB_CALL, &e),
			 0);
	ck_assert_uint_eq(e.items,
			  RW_DDP_ITEM(0) | RW_DDP_ITEM(2) | RW_DDP_ITEM(5));

	ck_assert_int_eq(rpcrdma_ulb_lookup(400100, 1, 2, RPCRDMA_ULB_REPLY,
					    &e),
			 0);
	ck_assert_uint_eq(e.items, ~(uint64_t)0);
	ck_assert_uint_eq(e.max_chunks, 3);
	ck_assert_int_eq(rpcrdma_ulb_sizes(&e, args, sizeof(args), &room, &max),
			 0);
	ck_assert_uint_eq(room, 0x4000 + 512);
	ck_assert_uint_eq(max, 1024 * 1024);

	ck_assert_int_eq(rpcrdma_ulb_lookup(400100, 1, 3, RPCRDMA_ULB_REPLY,
					    &e),
			 0);
	ck_assert_uint_eq(e.items, 0);
	ck_assert_int_eq(rpcrdma_ulb_sizes(&e, args, sizeof(args), &room, &max),
			 0);
	ck_assert_uint_eq(room, 0);
	ck_assert_uint_eq(max, 128);

	ck_assert_int_eq(rpcrdma_ulb_lookup(400100, 1, 4, RPCRDMA_ULB_REPLY,
					    NULL),
			 0);
	ck_assert_int_eq(rpcrdma_ulb_lookup(400100, 1, 5, RPCRDMA_ULB_CALL,
					    NULL),
			 0);
}
END_TEST

START_TEST(test_file_bad)
{
	static const char *const want[] = {
		"bad.conf:4: expected PROGRAM VERSION PROCEDURE call|reply, got 3 fields\n",
		"bad.conf:5: version 'x' is not a number",
		"bad.conf:6: direction 'sideways' is neither call nor reply\n",
		"bad.conf:7: ddp: item ordinal 64 is out of range 0..63\n",
		"bad.conf:8: unknown keyword 'colour'",
		"bad.conf:9: reply items are DDP-eligible but no room is given\n",
		"bad.conf:10: room: argument offset -6 is not a multiple of 4\n",
		"bad.conf:11: room and max apply only to reply entries\n",
		"bad.conf:12: duplicates the entry at line 3\n",
		"bad.conf:13: keyword 'min' is given twice\n",
		"bad.conf:14: max: 'lots' is not a size",
	};
	struct rpcrdma_ulb_entry e;
	char msgs[4096];
	size_t i;

	ck_assert_int_eq(load(ULB_TESTDIR "/bad.conf", msgs, sizeof(msgs)),
			 (int)ARRAY_SIZE(want));
	for (i = 0; i < ARRAY_SIZE(want); i++)
		ck_assert_msg(strstr(msgs, want[i]), "missing '%s' in:\n%s",
			      want[i], msgs);
	/* the good lines around the bad ones are in; the bad ones are not */
	ck_assert_int_eq(rpcrdma_ulb_lookup(400200, 1, 1, RPCRDMA_ULB_CALL, &e),
			 0);
	ck_assert_uint_eq(e.items, 2); /* line 3, not line 12 */
	ck_assert_int_eq(rpcrdma_ulb_lookup(400200, 1, 12, RPCRDMA_ULB_REPLY,
					    NULL),
			 0);
	for (i = 2; i < 12; i++) {
		ck_assert_int_eq(rpcrdma_ulb_lookup(400200, 1, i,
						    RPCRDMA_ULB_CALL, NULL),
				 ENOENT);
		ck_assert_int_eq(rpcrdma_ulb_lookup(400200, 1, i,
						    RPCRDMA_ULB_REPLY, NULL),
				 ENOENT);
	}
}
END_TEST

START_TEST(test_file_missing)
{
	errno = 0;
	ck_assert_int_eq(rpcrdma_ulb_load(ULB_TESTDIR "/no-such.conf"), -1);
	ck_assert_int_eq(errno, ENOENT);
	errno = 0;
	ck_assert_int_eq(rpcrdma_ulb_load(NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

/*
 * RPCRDMA_ULB_CONF is read once, on first use.  Only meaningful in a fresh
 * process: with CK_FORK=no an earlier test already did the first use, so
 * ulb_suite() leaves it out then, with a SKIP line (never a silent pass).
 */
START_TEST(test_env)
{
	struct rpcrdma_ulb_entry e;

	ck_assert_int_eq(setenv("RPCRDMA_ULB_CONF", ULB_TESTDIR "/good.conf",
				1),
			 0);
	ck_assert_int_eq(rpcrdma_ulb_lookup(400100, 1, 6, RPCRDMA_ULB_REPLY,
					    &e),
			 0);
	ck_assert_uint_eq(e.items, 1);
	/* the built-ins are there too */
	ck_assert_int_eq(rpcrdma_ulb_lookup(NFS_PROG, 3, 7, RPCRDMA_ULB_CALL,
					    NULL),
			 0);
	unsetenv("RPCRDMA_ULB_CONF");
}
END_TEST

/*
 * What rpcrdma-ulbgen writes for tests/unit/ulb/annotated.x (ulbgen.sh
 * checks the output is this file): it loads cleanly and says what the
 * annotations mean.
 */
START_TEST(test_file_ulbgen)
{
	static const uint8_t args[] = { /* ann_pread_args */
					0, 1, 0, 0, 0, 0, 0, 0,
					0, 0, 0, 0, 0, 0, 0, 0
	};
	struct rpcrdma_ulb_entry e;
	char msgs[4096];
	uint32_t room, max;

	ck_assert_int_eq(load(ULB_TESTDIR "/annotated.conf", msgs,
			      sizeof(msgs)),
			 0);
	ck_assert_str_eq(msgs, "");

	ck_assert_int_eq(rpcrdma_ulb_lookup(400300, 1, 7, RPCRDMA_ULB_CALL, &e),
			 0);
	ck_assert_uint_eq(e.items, RW_DDP_ITEM(1)); /* after the handle */
	ck_assert_uint_eq(e.min_len, 4096);
	ck_assert_int_eq(rpcrdma_ulb_lookup(400300, 1, 10, RPCRDMA_ULB_CALL,
					    &e),
			 0);
	ck_assert_uint_eq(e.items, RW_DDP_ITEM(3)); /* dir, name, verf */

	ck_assert_int_eq(rpcrdma_ulb_lookup(400300, 1, 6, RPCRDMA_ULB_REPLY,
					    &e),
			 0);
	ck_assert_uint_eq(e.items, RW_DDP_ITEM(0));
	ck_assert_int_eq(e.room.kind, RPCRDMA_ULB_SIZE_ARG);
	ck_assert_int_eq(e.room.offset, -4);
	ck_assert_int_eq(e.reply_max.kind, RPCRDMA_ULB_SIZE_FIXED);
	ck_assert_uint_eq(e.reply_max.value, 256);

	ck_assert_int_eq(rpcrdma_ulb_lookup(400300, 1, 20, RPCRDMA_ULB_REPLY,
					    &e),
			 0);
	ck_assert_int_eq(e.room.offset, 0);
	ck_assert_uint_eq(e.max_chunks, 1);
	ck_assert_int_eq(rpcrdma_ulb_sizes(&e, args, sizeof(args), &room, &max),
			 0);
	ck_assert_uint_eq(room, 65536);
	/* status, attr pointer + attr, count, eof, data length word */
	ck_assert_uint_eq(max, 4 + 4 + 24 + 4 + 4 + 4);

	ck_assert_int_eq(rpcrdma_ulb_lookup(400300, 1, 5, RPCRDMA_ULB_REPLY,
					    &e),
			 0);
	ck_assert_uint_eq(e.room.value, 1024); /* the string's bound */
	ck_assert_uint_eq(e.reply_max.value, 8);

	/* procedures without annotations get no entry */
	ck_assert_int_eq(rpcrdma_ulb_lookup(400300, 1, 21, RPCRDMA_ULB_REPLY,
					    NULL),
			 ENOENT);
	ck_assert_int_eq(rpcrdma_ulb_lookup(400300, 1, 6, RPCRDMA_ULB_CALL,
					    NULL),
			 ENOENT);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* built-in NFS bindings (RFC 8267)                                        */

START_TEST(test_nfs_entries)
{
	static const struct {
		rpcvers_t vers;
		rpcproc_t proc;
		enum rpcrdma_ulb_dir dir;
		uint64_t items;
	} want[] = {
		{ 2, 5, RPCRDMA_ULB_REPLY, 1 }, /* READLINK path */
		{ 2, 6, RPCRDMA_ULB_REPLY, 1 }, /* READ data */
		{ 2, 8, RPCRDMA_ULB_CALL, 2 },	/* WRITE data */
		{ 2, 13, RPCRDMA_ULB_CALL, 4 }, /* SYMLINK path */
		{ 3, 5, RPCRDMA_ULB_REPLY, 1 }, { 3, 6, RPCRDMA_ULB_REPLY, 1 },
		{ 3, 7, RPCRDMA_ULB_CALL, 2 },	{ 3, 10, RPCRDMA_ULB_CALL, 4 },
	};
	struct rpcrdma_ulb_entry e;
	rpcproc_t p;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(want); i++) {
		ck_assert_int_eq(rpcrdma_ulb_lookup(NFS_PROG, want[i].vers,
						    want[i].proc, want[i].dir,
						    &e),
				 0);
		ck_assert_uint_eq(e.items, want[i].items);
		ck_assert_ptr_null(ulb_entry_check(&e));
		/* nothing else of the same procedure is eligible */
		if (rpcrdma_ulb_lookup(NFS_PROG, want[i].vers, want[i].proc,
				       !want[i].dir, &e) == 0)
			ck_assert_uint_eq(e.items, 0);
	}
	/* no other NFSv3 procedure has an eligible item (RFC 8267 4.2) */
	for (p = 0; p <= 21; p++) {
		if (p == 5 || p == 6 || p == 7 || p == 10)
			continue;
		if (rpcrdma_ulb_lookup(NFS_PROG, 3, p, RPCRDMA_ULB_CALL, &e) ==
		    0)
			ck_assert_uint_eq(e.items, 0);
		if (rpcrdma_ulb_lookup(NFS_PROG, 3, p, RPCRDMA_ULB_REPLY, &e) ==
		    0)
			ck_assert_uint_eq(e.items, 0);
	}
	/* NFSv4 NULL has nothing; COMPOUND is a walker binding (below) */
	ck_assert_int_eq(rpcrdma_ulb_lookup(NFS_PROG, 4, 0, RPCRDMA_ULB_CALL,
					    NULL),
			 ENOENT);
}
END_TEST

/*
 * NFSv4 COMPOUND is bound by position (RFC 8267 6.4, V1-WC-3): a walker
 * entry whose public face has no items and no sizes, in both directions;
 * an application entry replaces it, as it would any built-in binding.
 */
START_TEST(test_nfs4_walker_entry)
{
	const struct ulb_walker *w = NULL;
	struct rpcrdma_ulb_entry e, app;
	struct rw_ddp_policy pol;
	int dir;

	for (dir = RPCRDMA_ULB_CALL; dir <= RPCRDMA_ULB_REPLY; dir++) {
		ck_assert_int_eq(ulb_lookup(NFS_PROG, 4, 1, dir, &e, &w), 0);
		ck_assert_ptr_eq(w, &ulb_nfs4_walker);
		ck_assert_uint_eq(e.items, 0);
		ck_assert_int_eq(e.room.kind, RPCRDMA_ULB_SIZE_NONE);
		ck_assert_int_eq(e.reply_max.kind, RPCRDMA_ULB_SIZE_NONE);
		ck_assert_ptr_null(ulb_entry_check(&e));
		ck_assert_int_eq(rpcrdma_ulb_lookup(NFS_PROG, 4, 1, dir, &app),
				 0);
		ck_assert_mem_eq(&app, &e, sizeof(e));
	}
	ulb_walk_policy(w, false, 1024, &pol);
	ck_assert_int_eq(pol.mode, RW_DDP_PICK);
	ck_assert_ptr_eq((void *)pol.pick, (void *)w->pick_call);
	ck_assert_uint_eq(pol.min_len, 1024);
	ulb_walk_policy(w, true, 1024, &pol);
	ck_assert_ptr_eq((void *)pol.pick, (void *)w->pick_reply);
	ck_assert_uint_eq(pol.min_len, 0); /* V1-WC-2 */
	ulb_walk_policy(NULL, true, 0, &pol);
	ck_assert_int_eq(pol.mode, RW_DDP_NONE);
	/* incomplete walkers are refused */
	ck_assert_int_eq(ulb_table_add_walker(400009, 4, 1, NULL), EINVAL);

	/* the application's entry wins, and is an ordinary one */
	memset(&app, 0, sizeof(app));
	app.prog = NFS_PROG;
	app.vers = 4;
	app.proc = 1;
	app.dir = RPCRDMA_ULB_REPLY;
	app.reply_max.kind = RPCRDMA_ULB_SIZE_FIXED;
	app.reply_max.value = 512;
	ck_assert_int_eq(rpcrdma_ulb_register(&app), 0);
	ck_assert_int_eq(ulb_lookup(NFS_PROG, 4, 1, RPCRDMA_ULB_REPLY, &e, &w),
			 0);
	ck_assert_ptr_null(w);
	ck_assert_uint_eq(e.reply_max.value, 512);
	/* a built-in never comes back over it */
	ck_assert_int_eq(ulb_table_add_walker(NFS_PROG, 4, 1, &ulb_nfs4_walker),
			 0);
	ck_assert_int_eq(ulb_lookup(NFS_PROG, 4, 1, RPCRDMA_ULB_REPLY, &e, &w),
			 0);
	ck_assert_ptr_null(w);
	/* the call direction kept its walker */
	ck_assert_int_eq(ulb_lookup(NFS_PROG, 4, 1, RPCRDMA_ULB_CALL, &e, &w),
			 0);
	ck_assert_ptr_eq(w, &ulb_nfs4_walker);
	/* restore the built-in for the other tests */
	ck_assert_int_eq(rpcrdma_ulb_unregister(NFS_PROG, 4, 1,
						RPCRDMA_ULB_REPLY),
			 0);
	ck_assert_int_eq(ulb_table_add_walker(NFS_PROG, 4, 1, &ulb_nfs4_walker),
			 0);
	ck_assert_int_eq(ulb_lookup(NFS_PROG, 4, 1, RPCRDMA_ULB_REPLY, &e, &w),
			 0);
	ck_assert_ptr_eq(w, &ulb_nfs4_walker);
}
END_TEST

/*
 * The NFSv3 WRITE binding, applied by the reducing encoder to rpcgen code
 * of WRITE3args' shape, moves the file data and only it (V1-TV8 layout).
 */
START_TEST(test_nfs3_write_ordinal)
{
	static char fh[32], data[6001];
	red_write_args a = {
		.file = { sizeof(fh), fh },
		.offset = 0,
		.count = sizeof(data),
		.stable = RED_FILE_SYNC,
		.data = { sizeof(data), data },
	};
	struct rpcrdma_ulb_entry e;
	struct rw_ddp_policy pol;
	struct rw_ddp_item items[4];
	static uint8_t buf[8192];
	struct rw_rxdr r;

	ck_assert_int_eq(rpcrdma_ulb_lookup(NFS_PROG, 3, 7, RPCRDMA_ULB_CALL,
					    &e),
			 0);
	ulb_ddp_policy(&e, false, 1024, &pol);
	ck_assert(rw_rxdr_create(&r, buf, sizeof(buf), &pol, items, 4));
	ck_assert(red_put_call(&r.xdr, RED_XID, RED_WRITE, authnone_create(),
			       (xdrproc_t)xdr_red_write_args, &a));
	ck_assert_int_eq(rw_rxdr_finish(&r), RW_XERR_OK);
	ck_assert_uint_eq(rw_rxdr_nitems(&r), 1);
	ck_assert_uint_eq(items[0].ordinal, 1);
	ck_assert_ptr_eq(items[0].data, data);
	ck_assert_uint_eq(items[0].len, sizeof(data));
	ck_assert_uint_eq(items[0].position, 96); /* V1-TV8 */
}
END_TEST

/*
 * The NFSv3 READ binding: the data of READ3resok's shape is result item 0,
 * and the Write chunk's room comes from the count at the end of the
 * encoded READ3args (file handle, offset, count).
 */
START_TEST(test_nfs3_read)
{
	static char data[5000], fh[28];
	red_attr attr = { 1, 0644, 1, 0, 0, sizeof(data) };
	red_read_res res = {
		.attr = &attr,
		.count = sizeof(data),
		.eof = TRUE,
		.data = { sizeof(data), data },
	};
	struct rpcrdma_ulb_entry e;
	struct rw_ddp_policy pol;
	struct rw_ddp_item items[4];
	static uint8_t buf[8192];
	char args[128], *fhp = fh;
	u_int fhlen = sizeof(fh);
	u_quad_t off = 1 << 20;
	u_int count = 65536;
	uint32_t room, max;
	struct rw_rxdr r;
	XDR x;

	ck_assert_int_eq(rpcrdma_ulb_lookup(NFS_PROG, 3, 6, RPCRDMA_ULB_REPLY,
					    &e),
			 0);
	ulb_ddp_policy(&e, true, 1024, &pol);
	ck_assert(rw_rxdr_create(&r, buf, sizeof(buf), &pol, items, 4));
	ck_assert(red_put_reply(&r.xdr, RED_XID, (xdrproc_t)xdr_red_read_res,
				&res));
	ck_assert_int_eq(rw_rxdr_finish(&r), RW_XERR_OK);
	ck_assert_uint_eq(rw_rxdr_nitems(&r), 1);
	ck_assert_uint_eq(items[0].ordinal, 0);
	ck_assert_ptr_eq(items[0].data, data);

	/* READ3args: nfs_fh3 file; offset3 offset; count3 count */
	xdrmem_create(&x, args, sizeof(args), XDR_ENCODE);
	ck_assert(xdr_bytes(&x, &fhp, &fhlen, 64));
	ck_assert(xdr_u_int64_t(&x, &off));
	ck_assert(xdr_u_int(&x, &count));
	ck_assert_int_eq(rpcrdma_ulb_sizes(&e, args, XDR_GETPOS(&x), &room,
					   &max),
			 0);
	ck_assert_uint_eq(room, 65536);
	ck_assert_uint_ge(max, 4 + 88 + 12); /* status, attrs, count/eof/len */
	XDR_DESTROY(&x);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* the NFSv3 entries on RFC 1813 encodings (tests/unit/ulb/nfs3.x)         */

/*
 * Encode a Call (call = true) or Reply body with the built-in NFSv3 entry
 * of proc; return how many items moved and the first in *it.  min_len 1 so
 * even short paths move.
 */
static unsigned nfs3_reduce(rpcproc_t proc, bool call, xdrproc_t xdr, void *obj,
			    struct rw_ddp_item *it)
{
	static uint8_t buf[16384];
	struct rw_ddp_item items[8];
	struct rpcrdma_ulb_entry e;
	struct rw_ddp_policy pol;
	struct rw_rxdr r;
	bool ok;

	ck_assert_int_eq(rpcrdma_ulb_lookup(NFS_PROG, 3, proc,
					    call ? RPCRDMA_ULB_CALL :
						   RPCRDMA_ULB_REPLY,
					    &e),
			 0);
	ulb_ddp_policy(&e, !call, 1, &pol);
	ck_assert(rw_rxdr_create(&r, buf, sizeof(buf), &pol, items, 8));
	if (call)
		ok = red_put_call(&r.xdr, RED_XID, proc, authnone_create(), xdr,
				  obj);
	else
		ok = red_put_reply(&r.xdr, RED_XID, xdr, obj);
	ck_assert(ok);
	ck_assert_int_eq(rw_rxdr_finish(&r), RW_XERR_OK);
	if (rw_rxdr_nitems(&r))
		*it = items[0];
	return rw_rxdr_nitems(&r);
}

static char nfs3_fh[32];

START_TEST(test_nfs3_rfc1813_write)
{
	static char data[3000];
	WRITE3args a = {
		.file = { .data = { sizeof(nfs3_fh), nfs3_fh } },
		.count = sizeof(data),
		.stable = FILE_SYNC,
		.data = { sizeof(data), data },
	};
	struct rw_ddp_item it;

	ck_assert_uint_eq(nfs3_reduce(7, true, (xdrproc_t)xdr_WRITE3args, &a,
				      &it),
			  1);
	ck_assert_ptr_eq(it.data, data);
	ck_assert_uint_eq(it.len, sizeof(data));
}
END_TEST

static void nfs3_symlink_args(SYMLINK3args *a, char *name, char *path)
{
	memset(a, 0, sizeof(*a));
	a->where.dir.data.data_len = sizeof(nfs3_fh);
	a->where.dir.data.data_val = nfs3_fh;
	a->where.name = name;
	a->symlink.symlink_attributes.mode.set_it = TRUE;
	a->symlink.symlink_attributes.mode.set_mode3_u.mode = 0777;
	a->symlink.symlink_data = path;
}

START_TEST(test_nfs3_rfc1813_symlink)
{
	static char path[] = "../some/where/else", name[] = "link",
		    empty[] = "";
	SYMLINK3args a;
	struct rw_ddp_item it;

	nfs3_symlink_args(&a, name, path);
	ck_assert_uint_eq(nfs3_reduce(10, true, (xdrproc_t)xdr_SYMLINK3args, &a,
				      &it),
			  1);
	ck_assert_ptr_eq(it.data, path);
	ck_assert_uint_eq(it.len, strlen(path));

	/* an empty name shifts the path to item 1: it then stays inline,
	 * and no other item is ever moved in its place */
	nfs3_symlink_args(&a, empty, path);
	ck_assert_uint_eq(nfs3_reduce(10, true, (xdrproc_t)xdr_SYMLINK3args, &a,
				      &it),
			  0);
}
END_TEST

START_TEST(test_nfs3_rfc1813_read)
{
	static char data[2000];
	READ3res res;
	READ3args a = {
		.file = { .data = { sizeof(nfs3_fh), nfs3_fh } },
		.offset = 4096,
		.count = 32768,
	};
	struct rpcrdma_ulb_entry e;
	struct rw_ddp_item it;
	char args[256];
	uint32_t room, max;
	XDR x;

	memset(&res, 0, sizeof(res));
	res.status = NFS3_OK;
	res.READ3res_u.resok.file_attributes.attributes_follow = TRUE;
	res.READ3res_u.resok.count = sizeof(data);
	res.READ3res_u.resok.data.data_len = sizeof(data);
	res.READ3res_u.resok.data.data_val = data;
	ck_assert_uint_eq(nfs3_reduce(6, false, (xdrproc_t)xdr_READ3res, &res,
				      &it),
			  1);
	ck_assert_ptr_eq(it.data, data);

	/* an error reply has no item */
	res.status = NFS3ERR_IO;
	ck_assert_uint_eq(nfs3_reduce(6, false, (xdrproc_t)xdr_READ3res, &res,
				      &it),
			  0);

	/* the room is the call's count (V1-WC-1) */
	xdrmem_create(&x, args, sizeof(args), XDR_ENCODE);
	ck_assert(xdr_READ3args(&x, &a));
	ck_assert_int_eq(rpcrdma_ulb_lookup(NFS_PROG, 3, 6, RPCRDMA_ULB_REPLY,
					    &e),
			 0);
	ck_assert_int_eq(rpcrdma_ulb_sizes(&e, args, XDR_GETPOS(&x), &room,
					   &max),
			 0);
	ck_assert_uint_eq(room, 32768);
	ck_assert_uint_ge(max, 104); /* status, attrs, count, eof, length */
	XDR_DESTROY(&x);
}
END_TEST

/*
 * Under RPCSEC_GSS the Reply's largest size comes from the plain
 * arguments, every result inline, plus the wrapping (V1-RP-1, V1-GSS-3):
 * an NFSv3 READ of 1 MiB needs a Reply chunk of more than 1 MiB.  Known
 * only from what was encoded: a count read from the end of the arguments
 * (READ3args' is their last word) needs all of them.
 */
START_TEST(test_gss_reply_max)
{
	READ3args a = {
		.file = { .data = { sizeof(nfs3_fh), nfs3_fh } },
		.offset = 0,
		.count = 1048576,
	};
	char args[256];
	uint32_t max;
	XDR x;

	xdrmem_create(&x, args, sizeof(args), XDR_ENCODE);
	ck_assert(xdr_READ3args(&x, &a));
	max = rr_policy_gss_reply_max(NFS_PROG, 3, 6, args, XDR_GETPOS(&x),
				      true);
	ck_assert_uint_gt(max, 1048576 + 104);
	ck_assert_uint_lt(max, 1048576 + 4096);
	/* the same octets as a prefix: the count's place is not known */
	ck_assert_uint_eq(rr_policy_gss_reply_max(NFS_PROG, 3, 6, args,
						  XDR_GETPOS(&x), false),
			  0);
	/* too short to hold the count */
	ck_assert_uint_eq(rr_policy_gss_reply_max(NFS_PROG, 3, 6, args, 2,
						  true),
			  0);
	/* no binding: nothing known */
	ck_assert_uint_eq(rr_policy_gss_reply_max(400099, 1, 6, args,
						  XDR_GETPOS(&x), true),
			  0);
	XDR_DESTROY(&x);
}
END_TEST

START_TEST(test_nfs3_rfc1813_readlink)
{
	static char path[] = "/a/link/target";
	READLINK3res res;
	struct rw_ddp_item it;

	memset(&res, 0, sizeof(res));
	res.status = NFS3_OK;
	res.READLINK3res_u.resok.data = path;
	ck_assert_uint_eq(nfs3_reduce(5, false, (xdrproc_t)xdr_READLINK3res,
				      &res, &it),
			  1);
	ck_assert_ptr_eq(it.data, path);
	ck_assert_uint_eq(it.len, strlen(path));
}
END_TEST

/*
 * rpcrdma-ulbgen on nfs3.x, annotated as RFC 8267 says (ulbgen.sh checks
 * its output is nfs3.conf), agrees with the built-in entries.
 */
START_TEST(test_nfs3_ulbgen_agrees)
{
	static const struct {
		rpcproc_t proc;
		enum rpcrdma_ulb_dir dir;
	} keys[] = {
		{ 5, RPCRDMA_ULB_REPLY },
		{ 6, RPCRDMA_ULB_REPLY },
		{ 7, RPCRDMA_ULB_CALL },
		{ 10, RPCRDMA_ULB_CALL },
	};
	struct rpcrdma_ulb_entry built[ARRAY_SIZE(keys)], gen;
	char msgs[1024];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(keys); i++)
		ck_assert_int_eq(rpcrdma_ulb_lookup(NFS_PROG, 3, keys[i].proc,
						    keys[i].dir, &built[i]),
				 0);
	/* the file's entries replace the built-in ones in the table */
	ck_assert_int_eq(load(ULB_TESTDIR "/nfs3.conf", msgs, sizeof(msgs)), 0);
	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		ck_assert_int_eq(rpcrdma_ulb_lookup(NFS_PROG, 3, keys[i].proc,
						    keys[i].dir, &gen),
				 0);
		ck_assert_uint_eq(gen.items, built[i].items);
		ck_assert_int_eq(gen.room.kind, built[i].room.kind);
		ck_assert_int_eq(gen.room.offset, built[i].room.offset);
		ck_assert_uint_eq(gen.room.value, built[i].room.value);
		/* built-in maxima are the exact ones rounded up */
		ck_assert_uint_le(gen.reply_max.value,
				  built[i].reply_max.value);
		/* put the built-in entry back for tests that do not fork */
		ck_assert_int_eq(ulb_table_add(&built[i], ULB_SRC_CONF), 0);
	}
}
END_TEST

/*
 * Every NFSv3 procedure has its largest reply declared: the
 * built-in REPLY entries give exactly the maxima rpcrdma-ulbgen -s
 * computes from the whole of RFC 1813's XDR (examples/nfs3d/nfs3_prot.x;
 * nfs3_prot.conf is its output, ulbgen.sh checks it), and the procedures
 * it cannot bound alone (an unbounded opaque or list: READLINK, READ,
 * READDIR, READDIRPLUS) are bounded by their own entries, so no NFSv3
 * call offers a Reply chunk of max_reply_size (V1-RP-1, V1-ULB-4).
 */
START_TEST(test_nfs3_reply_sizes)
{
	struct rpcrdma_ulb_entry gen, built;
	char line[512], why[128];
	bool seen[22] = { false };
	unsigned int n = 0;
	FILE *f = fopen(ULB_TESTDIR "/nfs3_prot.conf", "r");
	rpcproc_t p;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		if (ulb_conf_parse_line(line, &gen, why, sizeof(why)) != 1 ||
		    gen.prog != NFS_PROG)
			continue;
		ck_assert_uint_eq(gen.vers, 3);
		ck_assert_int_eq(gen.dir, RPCRDMA_ULB_REPLY);
		ck_assert_int_eq(rpcrdma_ulb_lookup(NFS_PROG, 3, gen.proc,
						    RPCRDMA_ULB_REPLY, &built),
				 0);
		ck_assert_int_eq(built.reply_max.kind, gen.reply_max.kind);
		ck_assert_uint_eq(built.reply_max.value, gen.reply_max.value);
		ck_assert_uint_lt(gen.proc, ARRAY_SIZE(seen));
		seen[gen.proc] = true;
		n++;
	}
	fclose(f);
	/* NULL to COMMIT but READLINK, READ, READDIR, READDIRPLUS */
	ck_assert_uint_eq(n, 18);
	for (p = 0; p < ARRAY_SIZE(seen); p++) {
		ck_assert_int_eq(rpcrdma_ulb_lookup(NFS_PROG, 3, p,
						    RPCRDMA_ULB_REPLY, &built),
				 0);
		ck_assert_int_ne(built.reply_max.kind, RPCRDMA_ULB_SIZE_NONE);
		if (!seen[p])
			ck_assert(p == 5 || p == 6 || p == 16 || p == 17);
	}
}
END_TEST

Suite *ulb_suite(void)
{
	Suite *s = suite_create("ulb");
	TCase *tc = tcase_create("table");
	const char *fork;

	tcase_add_test(tc, test_register_lookup);
	tcase_add_test(tc, test_bound_generation);
	tcase_add_test(tc, test_gss_reply_max);
	tcase_add_test(tc, test_bound_proc);
	tcase_add_test(tc, test_placed_proc);
	tcase_add_test(tc, test_clnt_cache);
	tcase_add_test(tc, test_many);
	tcase_add_test(tc, test_register_invalid);
	tcase_add_test(tc, test_precedence);
	tcase_add_test(tc, test_concurrent);
	tcase_add_test(tc, test_sizes);
	tcase_add_test(tc, test_policy);
	suite_add_tcase(s, tc);

	tc = tcase_create("conf");
	tcase_add_test(tc, test_parse_good);
	tcase_add_loop_test(tc, test_parse_bad, 0, (int)ARRAY_SIZE(bad_lines));
	tcase_add_test(tc, test_parse_long);
	tcase_add_test(tc, test_file_good);
	tcase_add_test(tc, test_file_bad);
	tcase_add_test(tc, test_file_ulbgen);
	tcase_add_test(tc, test_file_missing);
	fork = getenv("CK_FORK");
	if (fork && !strcmp(fork, "no"))
		printf("SKIP: ulb/conf/test_env needs a process of its own "
		       "(CK_FORK=no)\n");
	else
		tcase_add_test(tc, test_env);
	suite_add_tcase(s, tc);

	tc = tcase_create("nfs");
	tcase_add_test(tc, test_nfs_entries);
	tcase_add_test(tc, test_nfs4_walker_entry);
	tcase_add_test(tc, test_nfs3_write_ordinal);
	tcase_add_test(tc, test_nfs3_read);
	tcase_add_test(tc, test_nfs3_rfc1813_write);
	tcase_add_test(tc, test_nfs3_rfc1813_symlink);
	tcase_add_test(tc, test_nfs3_rfc1813_read);
	tcase_add_test(tc, test_nfs3_rfc1813_readlink);
	tcase_add_test(tc, test_nfs3_ulbgen_agrees);
	tcase_add_test(tc, test_nfs3_reply_sizes);
	suite_add_tcase(s, tc);
	return s;
}
