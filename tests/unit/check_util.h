/*
 * check_util.h - helpers shared by the host unit tests.
 */
#ifndef TESTS_CHECK_UTIL_H
#define TESTS_CHECK_UTIL_H

#include <check.h>

#define SUITE(fn) Suite *fn(void);
#include "suites.def"
#undef SUITE

#endif
