/*
 * harness.c — main() for every CUnit test program.  The test file provides
 * test_register(), which adds its suites to the registry.  With an
 * argument, only the tests whose name contains it run (all of them
 * otherwise): `test_pipeline "sum part by part"`.
 */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <string.h>

#include "isa/isa.h"

void test_register(void);

/* The tests whose name contains `pattern`; how many ran. */
static unsigned run_matching(const char *pattern)
{
    unsigned ran = 0;
    for (CU_pSuite s = CU_get_registry()->pSuite; s; s = s->pNext)
        for (CU_pTest t = s->pTest; t; t = t->pNext)
            if (strstr(t->pName, pattern)) {
                CU_basic_run_test(s, t);
                ran++;
            }
    return ran;
}

int main(int argc, char **argv)
{
    isa_init();
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    test_register();
    CU_basic_set_mode(CU_BRM_VERBOSE);
    if (argc > 1) {
        if (!run_matching(argv[1])) {
            fprintf(stderr, "no test's name contains '%s'\n", argv[1]);
            CU_cleanup_registry();
            return 2;
        }
    } else {
        CU_basic_run_tests();
    }
    unsigned failed = CU_get_number_of_failures();
    unsigned failed_suites = CU_get_number_of_suites_failed();
    CU_cleanup_registry();
    return (failed || failed_suites) ? 1 : 0;
}
