/*
 * test_phases.c — the phases blob of an executable (sim/program/phases.h):
 * the phases and a training step's samples encoded and read back, and each
 * malformed blob refused with its line.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
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
    CU_ASSERT_EQUAL(back.n_stretches, 3);
    CU_ASSERT_EQUAL(back.s[2].first_superstep, 28);
    CU_ASSERT_STRING_EQUAL(back.name[1], "backward");
    CU_ASSERT_EQUAL(phases_of_superstep(&back, 27), 1);
    free(text);
    /* without samples (an inference program, or one compiled before they
     * were recorded) */
    const char *old = "superstep 0 forward\nsuperstep 5 update\n";
    CU_ASSERT_TRUE(phases_decode(old, strlen(old), &back, err, sizeof err));
    CU_ASSERT_EQUAL(back.samples, 0);
    CU_ASSERT_EQUAL(back.n, 2);
    /* a pipelined step: its stages and micro-batches */
    program_phases pp = { .samples = 64, .pipeline_stages = 4, .micro_batches = 16, .pipeline_cycles = 24,
                          .all_reduce_bytes = 102228128 };
    CU_ASSERT_TRUE(phases_add(&pp, 0, "forward"));
    CU_ASSERT_TRUE(phases_add(&pp, 2, "pipeline"));
    CU_ASSERT_TRUE(phases_add(&pp, 700, "update"));
    text = phases_encode(&pp, &size);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    const char *want_pipeline = "samples 64\npipeline 4 16 24\nall-reduce 102228128\nsuperstep 0 forward\n"
                                "superstep 2 pipeline\nsuperstep 700 update\n";
    CU_ASSERT_EQUAL(size, strlen(want_pipeline));
    CU_ASSERT_NSTRING_EQUAL(text, want_pipeline, strlen(want_pipeline));
    CU_ASSERT_TRUE_FATAL(phases_decode(text, size, &back, err, sizeof err));
    CU_ASSERT_EQUAL(back.pipeline_stages, 4);
    CU_ASSERT_EQUAL(back.micro_batches, 16);
    CU_ASSERT_EQUAL(back.pipeline_cycles, 24);
    CU_ASSERT_EQUAL(back.all_reduce_bytes, 102228128);
    CU_ASSERT_EQUAL(back.n, 3);
    free(text);
}

/* Updates between stretches of the backward pass: a phase comes back,
 * and its supersteps are counted under the one name. */
static void test_phases_come_back(void)
{
    program_phases ph = { 0 };
    CU_ASSERT_TRUE(phases_add(&ph, 0, "forward"));
    CU_ASSERT_TRUE(phases_add(&ph, 10, "backward"));
    CU_ASSERT_TRUE(phases_add(&ph, 14, "update"));
    CU_ASSERT_TRUE(phases_add(&ph, 15, "backward"));
    CU_ASSERT_TRUE(phases_add(&ph, 20, "backward"));      /* goes on */
    CU_ASSERT_TRUE(phases_add(&ph, 22, "update"));
    CU_ASSERT_EQUAL(ph.n, 3);
    CU_ASSERT_EQUAL(ph.n_stretches, 5);
    static const struct { uint32_t superstep; int phase; } at[] = {
        { 0, 0 }, { 9, 0 }, { 10, 1 }, { 13, 1 }, { 14, 2 }, { 15, 1 }, { 21, 1 }, { 22, 2 }, { 1000, 2 },
    };
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++)
        CU_ASSERT_EQUAL(phases_of_superstep(&ph, at[i].superstep), at[i].phase);
    size_t size;
    char *text = phases_encode(&ph, &size);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    const char *want = "superstep 0 forward\nsuperstep 10 backward\nsuperstep 14 update\nsuperstep 15 backward\n"
                       "superstep 22 update\n";
    CU_ASSERT_EQUAL(size, strlen(want));
    CU_ASSERT_NSTRING_EQUAL(text, want, strlen(want));
    program_phases back;
    char err[128];
    CU_ASSERT_TRUE_FATAL(phases_decode(text, size, &back, err, sizeof err));
    CU_ASSERT_EQUAL(back.n, 3);
    CU_ASSERT_EQUAL(back.n_stretches, 5);
    CU_ASSERT_EQUAL(phases_of_superstep(&back, 16), 1);
    free(text);
    /* renaming the last stretch drops a phase nothing else has */
    program_phases r = { 0 };
    CU_ASSERT_TRUE(phases_add(&r, 0, "forward"));
    CU_ASSERT_TRUE(phases_add(&r, 0, "backward"));
    CU_ASSERT_EQUAL(r.n, 1);
    CU_ASSERT_STRING_EQUAL(r.name[0], "backward");
    /* a ninth distinct phase has no room */
    program_phases many = { 0 };
    char name[16];
    for (uint32_t i = 0; i < PHASES_MAX; i++) {
        snprintf(name, sizeof name, "p%u", i);
        CU_ASSERT_TRUE(phases_add(&many, i, name));
    }
    CU_ASSERT_FALSE(phases_add(&many, PHASES_MAX, "one_more"));
}

static void test_bad_blobs(void)
{
    static const struct { const char *blob, *msg; } cases[] = {
        { "samples 0\nsuperstep 0 forward\n", "phases: line 1: no samples" },
        { "samples -5\nsuperstep 0 forward\n", "phases: line 1: expected \"superstep N NAME\"" },
        { "samples 12x\n", "phases: line 1: expected \"superstep N NAME\"" },
        { "superstep 0 forward\nsamples 4\n", "phases: line 2: expected \"superstep N NAME\"" },
        { "pipeline 4 8\nsuperstep 0 pipeline\n", "phases: line 1: expected \"pipeline CHIPS MICRO_BATCHES CYCLES\"" },
        { "pipeline 0 8 14\nsuperstep 0 pipeline\n", "phases: line 1: expected \"pipeline CHIPS MICRO_BATCHES CYCLES\"" },
        { "pipeline 2 8 7\nsuperstep 0 pipeline\n", "phases: line 1: expected \"pipeline CHIPS MICRO_BATCHES CYCLES\"" },
        { "superstep 0 forward\npipeline 2 4 6\n", "phases: line 2: expected \"superstep N NAME\"" },
        { "all-reduce 0\nsuperstep 0 forward\n", "phases: line 1: expected \"all-reduce BYTES\"" },
        { "all-reduce 12 kB\nsuperstep 0 forward\n", "phases: line 1: expected \"all-reduce BYTES\"" },
        { "superstep 0 forward\nall-reduce 4\n", "phases: line 2: expected \"superstep N NAME\"" },
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
              { "a phase that comes back counts under its name", test_phases_come_back },
              { "malformed blobs refused", test_bad_blobs });
}
