/*
 * test_phases.c — the phases blob of an executable (sim/program/phases.h):
 * the phases and a training step's samples encoded and read back, and each
 * malformed blob refused with its line.
 */
#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

#include "sim/program/phases.h"
#include "test_util.h"

static void test_round_trip(void)
{
    program_phases ph = { .samples = 128 };
    CU_ASSERT_TRUE(phases_add(&ph, 0, "forward"));
    CU_ASSERT_TRUE(phases_add(&ph, 13, "backward"));
    CU_ASSERT_TRUE(phases_add(&ph, 28, "update"));
    size_t size;
    char *text = phases_encode(&ph, &size);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    const char *want = "samples 128\nsuperstep 0 forward\nsuperstep 13 backward\nsuperstep 28 update\n";
    CU_ASSERT_EQUAL(size, strlen(want));
    CU_ASSERT_NSTRING_EQUAL(text, want, strlen(want));
    program_phases back;
    char err[128];
    CU_ASSERT_TRUE_FATAL(phases_decode(text, size, &back, err, sizeof err));
    CU_ASSERT_EQUAL(back.samples, 128);
    CU_ASSERT_EQUAL(back.n, 3);
    CU_ASSERT_EQUAL(back.p[2].first_superstep, 28);
    CU_ASSERT_STRING_EQUAL(back.p[1].name, "backward");
    CU_ASSERT_EQUAL(phases_of_superstep(&back, 27), 1);
    free(text);
    /* without samples (an inference program, or one compiled before they
     * were recorded) */
    const char *old = "superstep 0 forward\nsuperstep 5 update\n";
    CU_ASSERT_TRUE(phases_decode(old, strlen(old), &back, err, sizeof err));
    CU_ASSERT_EQUAL(back.samples, 0);
    CU_ASSERT_EQUAL(back.n, 2);
}

static void test_bad_blobs(void)
{
    static const struct { const char *blob, *msg; } cases[] = {
        { "samples 0\nsuperstep 0 forward\n", "phases: line 1: no samples" },
        { "samples -5\nsuperstep 0 forward\n", "phases: line 1: expected \"superstep N NAME\"" },
        { "samples 12x\n", "phases: line 1: expected \"superstep N NAME\"" },
        { "superstep 0 forward\nsamples 4\n", "phases: line 2: expected \"superstep N NAME\"" },
        { "samples 4", "phases: line 1 has no end" },
        { "superstep 3 forward\nsuperstep 3 update\n", "phases: line 2: superstep 3 does not follow 3" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        program_phases ph;
        char err[128] = "";
        CU_ASSERT_FALSE(phases_decode(cases[i].blob, strlen(cases[i].blob), &ph, err, sizeof err));
        CU_ASSERT_STRING_EQUAL(err, cases[i].msg);
    }
}

void test_register(void)
{
    ADD_SUITE("phases",
              { "phases and samples encoded and read back", test_round_trip },
              { "malformed blobs refused", test_bad_blobs });
}
