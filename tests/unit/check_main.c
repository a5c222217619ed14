/*
 * check_main.c - runs every host unit-test suite in one Check runner, so one
 * summary line reports them all.
 */
#include <stdlib.h>
#include <string.h>

#include <rpc/rpcrdma.h>

#include "config.h"
#include "check_util.h"

START_TEST(test_version_string)
{
	ck_assert_str_eq(rpcrdma_version(), PACKAGE_VERSION);
}
END_TEST

Suite *version_suite(void)
{
	Suite *s = suite_create("version");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_version_string);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(NULL);
	int failed;

#define SUITE(fn) srunner_add_suite(sr, fn());
#include "suites.def"
#undef SUITE

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
