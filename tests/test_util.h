/*
 * test_util.h — small helpers shared by the CUnit tests.
 */
#ifndef IPUSIM_TEST_UTIL_H
#define IPUSIM_TEST_UTIL_H

#include <CUnit/CUnit.h>

/* Add a suite with the given tests: ADD_SUITE("name", {"t1", fn1}, ...). */
typedef struct test_case { const char *name; CU_TestFunc fn; } test_case;

static inline void add_suite(const char *name, const test_case *cases, unsigned n)
{
    CU_pSuite s = CU_add_suite(name, NULL, NULL);
    for (unsigned i = 0; i < n; i++)
        CU_add_test(s, cases[i].name, cases[i].fn);
}
#define ADD_SUITE(name, ...) do { \
        static const test_case cases_[] = { __VA_ARGS__ }; \
        add_suite(name, cases_, sizeof cases_ / sizeof cases_[0]); \
    } while (0)

#endif
