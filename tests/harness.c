/*
 * harness.c — main() for every CUnit test program.  The test file provides
 * test_register(), which adds its suites to the registry.
 */
#include <CUnit/Basic.h>
#include <stdio.h>

#include "isa/isa.h"

void test_register(void);

int main(void)
{
    isa_init();
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    test_register();
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures();
    unsigned failed_suites = CU_get_number_of_suites_failed();
    CU_cleanup_registry();
    return (failed || failed_suites) ? 1 : 0;
}
