/*
 * check_attr.c - the settings only the environment gives
 * (src/glue/rpcrdma_attr.c): RPCRDMA_XCHAREXT, which peers a server reads
 * xcharext-02 characteristics from (AMB-V2-1: compatibility mode
 * off by default, enabled per peer by configuration; AMB-X-1).
 *
 * rpcrdma_env_xcharext() is hidden in librpcrdma, so the runner compiles
 * rpcrdma_attr.c itself (tests/unit/unit.am).  Each case builds the peer's
 * struct sockaddr as rdma_cm would hand it over (address and a port, which
 * must not matter) and asks whether compatibility is on for it.
 *
 * Also poll_us, event mode's polling before sleeping:
 * its default, RPCRDMA_POLL_US, its limits, and the adaptation of the
 * budget (src/rpc/rr_spin.h, header only).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <check.h>

#include "glue/rpcrdma_attr.h"
#include "rpc/rr_spin.h"
#include "check_util.h"

/* Is compatibility on for peer addr (numeric v4 or v6) under value? */
static bool xch_on(const char *value, const char *addr)
{
	struct sockaddr_storage ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct rpcrdma_env env;

	memset(&env, 0, sizeof(env));
	env.xcharext = value;
	memset(&ss, 0, sizeof(ss));
	if (strchr(addr, ':')) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(20049);
		ck_assert_int_eq(inet_pton(AF_INET6, addr, &s6->sin6_addr), 1);
	} else {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(20049);
		ck_assert_int_eq(inet_pton(AF_INET, addr, &s4->sin_addr), 1);
	}
	return rpcrdma_env_xcharext(&env, (struct sockaddr *)&ss);
}

/* Unset or empty: off for everyone, the default (AMB-V2-1). */
START_TEST(test_xcharext_off_by_default)
{
	ck_assert(!xch_on(NULL, "192.0.2.1"));
	ck_assert(!xch_on(NULL, "2001:db8::1"));
	ck_assert(!xch_on("", "192.0.2.1"));
	ck_assert(!xch_on("", "2001:db8::1"));
}
END_TEST

START_TEST(test_xcharext_all)
{
	ck_assert(xch_on("all", "192.0.2.1"));
	ck_assert(xch_on("all", "198.51.100.200"));
	ck_assert(xch_on("all", "2001:db8::1"));
	ck_assert(xch_on("all", "fe80::1"));
	/* "all" is the whole value, not one entry of a list, nor a prefix */
	ck_assert(!xch_on("all,192.0.2.9", "192.0.2.1"));
	ck_assert(!xch_on("allx", "192.0.2.1"));
	ck_assert(!xch_on("ALL", "192.0.2.1"));
}
END_TEST

/* A list of IPv4 and IPv6 addresses: each entry names its peer, in either
 * family, wherever it stands in the list, whatever the peer's port. */
START_TEST(test_xcharext_list_names_peer)
{
	static const char list[] = "192.0.2.1,2001:db8::1,198.51.100.7";

	ck_assert(xch_on(list, "192.0.2.1"));
	ck_assert(xch_on(list, "2001:db8::1"));
	ck_assert(xch_on(list, "198.51.100.7"));
	ck_assert(xch_on("2001:db8::1", "2001:db8::1"));
	ck_assert(xch_on("192.0.2.1", "192.0.2.1"));
	/* empty entries are skipped, not taken as the end of the list */
	ck_assert(xch_on(",,192.0.2.1,", "192.0.2.1"));
	ck_assert(xch_on("198.51.100.7,,2001:db8::1", "2001:db8::1"));
}
END_TEST

/* Addresses not in the list are off, including those an entry is a prefix
 * of, or that are a prefix of an entry. */
START_TEST(test_xcharext_list_other_peer)
{
	static const char list[] = "192.0.2.1,2001:db8::1,198.51.100.7";

	ck_assert(!xch_on(list, "192.0.2.2"));
	ck_assert(!xch_on(list, "192.0.2.10"));
	ck_assert(!xch_on(list, "198.51.100.70"));
	ck_assert(!xch_on(list, "2001:db8::2"));
	ck_assert(!xch_on(list, "2001:db8::10"));
	ck_assert(!xch_on(list, "2001:db8::1:1"));
	ck_assert(!xch_on("192.0.2.10", "192.0.2.1"));
	ck_assert(!xch_on("2001:db8::10", "2001:db8::1"));
	/* the IPv4 address inside an IPv6 one is another peer */
	ck_assert(!xch_on(list, "::ffff:198.51.100.8"));
}
END_TEST

/*
 * Values that name no address turn nothing on, and never crash: garbage,
 * separators alone, an entry with a port or a prefix length, spaces (the
 * list is compared as the text inet_ntop(3) writes, rpcrdma-environ(7)).
 */
START_TEST(test_xcharext_garbage)
{
	static const char *const bad[] = {
		",",
		",,,",
		" ",
		"yes",
		"1",
		"*",
		"192.0.2.1:20049",
		"192.0.2.1/24",
		" 192.0.2.1",
		"192.0.2.1 ",
		"192.0.2.1x",
		"192.0.2",
		"2001:DB8::1",
		"2001:db8:0::1",
		"[2001:db8::1]",
		"192.0.2.1;2001:db8::1",
		"1111:2222:3333:4444:5555:6666:7777:8888:9999:aaaa:bbbb",
	};
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(!xch_on(bad[i], "192.0.2.1"),
			      "\"%s\" named 192.0.2.1", bad[i]);
		ck_assert_msg(!xch_on(bad[i], "2001:db8::1"),
			      "\"%s\" named 2001:db8::1", bad[i]);
	}
	/* garbage beside a good entry does not hide it */
	ck_assert(xch_on("yes,192.0.2.1 ,192.0.2.1", "192.0.2.1"));
}
END_TEST

/* A peer address of a family that has no text form: off, unless "all". */
START_TEST(test_xcharext_other_family)
{
	struct sockaddr_un un;
	struct rpcrdma_env env;

	memset(&env, 0, sizeof(env));
	memset(&un, 0, sizeof(un));
	un.sun_family = AF_UNIX;
	env.xcharext = "192.0.2.1,2001:db8::1";
	ck_assert(!rpcrdma_env_xcharext(&env, (struct sockaddr *)&un));
	env.xcharext = "all";
	ck_assert(rpcrdma_env_xcharext(&env, (struct sockaddr *)&un));
}
END_TEST

/* rpcrdma_env_read() takes the value from RPCRDMA_XCHAREXT. */
START_TEST(test_xcharext_from_environment)
{
	struct rpcrdma_env env;

	unsetenv("RPCRDMA_XCHAREXT");
	rpcrdma_env_read(&env);
	ck_assert_ptr_null(env.xcharext);
	setenv("RPCRDMA_XCHAREXT", "198.51.100.7,2001:db8::1", 1);
	rpcrdma_env_read(&env);
	ck_assert_str_eq(env.xcharext, "198.51.100.7,2001:db8::1");
	unsetenv("RPCRDMA_XCHAREXT");
}
END_TEST

/* poll_us after rpcrdma_attr_fill() of a zeroed attr under env (NULL:
 * unset), in microseconds as the library uses it (0: never). */
static uint32_t filled_poll_us(const char *env, unsigned long set)
{
	struct rpcrdma_attr a;
	uint32_t us;

	memset(&a, 0, sizeof(a));
	a.poll_us = set;
	if (env)
		setenv("RPCRDMA_POLL_US", env, 1);
	else
		unsetenv("RPCRDMA_POLL_US");
	rpcrdma_attr_fill(&a);
	ck_assert_int_eq(rpcrdma_attr_check(&a), 0);
	us = rpcrdma_attr_poll_us(&a);
	unsetenv("RPCRDMA_POLL_US");
	return us;
}

/* 0 takes the default or the environment; "0" there means never; a value
 * of the caller's wins over the environment. */
START_TEST(test_poll_us_default_and_environment)
{
	ck_assert_uint_eq(filled_poll_us(NULL, 0), RPCRDMA_DEFAULT_POLL_US);
	ck_assert_uint_eq(filled_poll_us("200", 0), 200);
	ck_assert_uint_eq(filled_poll_us("0", 0), 0);
	ck_assert_uint_eq(filled_poll_us("20x", 0), RPCRDMA_DEFAULT_POLL_US);
	ck_assert_uint_eq(filled_poll_us("200", 7), 7);
	ck_assert_uint_eq(filled_poll_us("200", RPCRDMA_POLL_NONE), 0);
}
END_TEST

/* Beyond RPCRDMA_POLL_MAX: refused from the caller, never from the
 * environment (which falls back to never polling). */
START_TEST(test_poll_us_limits)
{
	struct rpcrdma_attr a;

	memset(&a, 0, sizeof(a));
	rpcrdma_attr_fill(&a);
	a.poll_us = RPCRDMA_POLL_MAX;
	ck_assert_int_eq(rpcrdma_attr_check(&a), 0);
	a.poll_us = RPCRDMA_POLL_MAX + 1;
	ck_assert_int_eq(rpcrdma_attr_check(&a), -1);
	ck_assert_uint_eq(filled_poll_us("2000000", 0), 0);
}
END_TEST

/* The budget: a wait polling ended keeps it; one that ended asleep within
 * the most allowed doubles it (from RR_SPIN_START_US), a longer one halves
 * it, and below RR_SPIN_START_US it is none. */
START_TEST(test_poll_budget_adapts)
{
	struct rr_spin spin;

	rr_spin_init(&spin, 100);
	ck_assert_uint_eq(spin.cur_us, 100);
	rr_spin_adapt(&spin, true, 0, 5000);
	ck_assert_uint_eq(spin.cur_us, 100);
	rr_spin_adapt(&spin, false, 0, 5000);
	ck_assert_uint_eq(spin.cur_us, 50);
	rr_spin_adapt(&spin, false, 0, 101);
	ck_assert_uint_eq(spin.cur_us, 25);
	rr_spin_adapt(&spin, false, 0, 5000);
	rr_spin_adapt(&spin, false, 0, 5000);
	ck_assert_uint_eq(spin.cur_us, 0);
	rr_spin_adapt(&spin, false, 1000, 1080);
	ck_assert_uint_eq(spin.cur_us, RR_SPIN_START_US);
	rr_spin_adapt(&spin, false, 1000, 1100);
	ck_assert_uint_eq(spin.cur_us, 2 * RR_SPIN_START_US);
	for (int i = 0; i < 10; i++)
		rr_spin_adapt(&spin, false, 0, 60);
	ck_assert_uint_eq(spin.cur_us, 100);
	rr_spin_init(&spin, 0);
	rr_spin_adapt(&spin, false, 0, 10);
	ck_assert_uint_eq(spin.cur_us, 0);
}
END_TEST

Suite *attr_suite(void)
{
	Suite *s = suite_create("attr");
	TCase *xch = tcase_create("xcharext");
	TCase *poll = tcase_create("poll_us");

	tcase_add_test(xch, test_xcharext_off_by_default);
	tcase_add_test(xch, test_xcharext_all);
	tcase_add_test(xch, test_xcharext_list_names_peer);
	tcase_add_test(xch, test_xcharext_list_other_peer);
	tcase_add_test(xch, test_xcharext_garbage);
	tcase_add_test(xch, test_xcharext_other_family);
	tcase_add_test(xch, test_xcharext_from_environment);
	suite_add_tcase(s, xch);
	tcase_add_test(poll, test_poll_us_default_and_environment);
	tcase_add_test(poll, test_poll_us_limits);
	tcase_add_test(poll, test_poll_budget_adapts);
	suite_add_tcase(s, poll);
	return s;
}
