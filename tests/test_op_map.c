/*
 * test_op_map.c — the op map of an executable (sim/program/op_map.h) and a
 * run's cycles by op (sim/engine/op_stats.h): ops and superstep owners
 * encoded and read back, names the text cannot hold made safe, malformed
 * sections refused with their line, and supersteps' cycles given to their
 * owners so that the ops' cycles add up to the chip's.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine/op_stats.h"
#include "sim/program/op_map.h"
#include "test_util.h"

/* m encoded as `want` exactly, and decoded again into back. */
static void round_trip(const op_map *m, const char *want, op_map *back)
{
    uint8_t *bytes;
    size_t size;
    char err[160];
    CU_ASSERT_TRUE_FATAL(op_map_encode(m, &bytes, &size));
    CU_ASSERT_EQUAL(size, strlen(want));
    CU_ASSERT_NSTRING_EQUAL((const char *)bytes, want, strlen(want));
    CU_ASSERT_TRUE_FATAL(op_map_decode(bytes, size, back, err, sizeof err));
    free(bytes);
}

static void test_round_trip(void)
{
    op_map m = { 0 };
    CU_ASSERT_EQUAL(op_map_add_op(&m, "MatMul", "layer0.attention.query.matmul"), 0);
    CU_ASSERT_EQUAL(op_map_add_op(&m, "Add", "grad/Add 3\nx"), 1);     /* a newline in a name */
    CU_ASSERT_EQUAL(op_map_add_op(&m, "Odd-Type", ""), 2);              /* no name */
    CU_ASSERT_TRUE(op_map_note(&m, 1, OP_MAP_COMPUTE, 0));
    CU_ASSERT_TRUE(op_map_note(&m, 1, OP_MAP_EXCHANGE, 1));
    CU_ASSERT_TRUE(op_map_note(&m, 3, OP_MAP_EXCHANGE, 2));
    CU_ASSERT_EQUAL(m.n_supersteps, 4);
    CU_ASSERT_EQUAL(op_map_owner(&m, 0, OP_MAP_COMPUTE), -1);           /* before any note: none */
    CU_ASSERT_EQUAL(op_map_owner(&m, 9, OP_MAP_EXCHANGE), -1);          /* past the end: none */
    op_map back;
    round_trip(&m, "op MatMul layer0.attention.query.matmul\nop Add grad/Add 3_x\nop Odd_Type ?\n"
                   "superstep -1 -1\nsuperstep 0 1\nsuperstep -1 -1\nsuperstep -1 2\n", &back);
    CU_ASSERT_EQUAL(back.n_ops, 3);
    CU_ASSERT_STRING_EQUAL(back.ops[1].type, "Add");
    CU_ASSERT_STRING_EQUAL(back.ops[1].name, "grad/Add 3_x");
    CU_ASSERT_EQUAL(back.n_supersteps, 4);
    CU_ASSERT_EQUAL(op_map_owner(&back, 1, OP_MAP_COMPUTE), 0);
    CU_ASSERT_EQUAL(op_map_owner(&back, 3, OP_MAP_EXCHANGE), 2);
    op_map_free(&back);
    op_map_free(&m);
}

static void refused(const char *text, const char *want)
{
    op_map m;
    char err[160] = "";
    CU_ASSERT_FALSE(op_map_decode(text, strlen(text), &m, err, sizeof err));
    CU_ASSERT_EQUAL(m.n_ops, 0);
    if (!strstr(err, want)) {
        fprintf(stderr, "\n  '%s': got '%s', want '%s'\n", text, err, want);
        CU_FAIL("wrong message");
    }
}

static void test_bad_sections(void)
{
    refused("op MatMul a\nsuperstep 0 1\n", "line 2: superstep: not -1 or one of the 1 ops: '1'");
    refused("op MatMul a\nsuperstep 0 0\nop Add b\n", "line 3: an op after the supersteps");
    refused("op Mat-Mul a\n", "line 1: an op type of letters, digits and '_' expected");
    refused("op MatMul\n", "line 1: expected 'op TYPE NAME'");
    refused("superstep 0\n", "line 1: expected 'superstep C X'");
    refused("superstep -2 -1\n", "line 1: superstep: not -1 or one of the 0 ops: '-2'");
    refused("step 0 0\n", "line 1: expected 'op', 'superstep' or 'stage'");
    refused("op A a\nsuperstep 0 0\nstage 2\n", "line 3: expected 'stage 1', got 'stage 2'");
    refused("op A a\nstage 1\nsuperstep 0 0\nstage 1\n", "line 4: stages out of order: 'stage 1'");
    refused("op A a\nstage 1\nop B b\n", "line 3: an op after the supersteps");
    const char nul[] = "op A b\0c\n";
    op_map m;
    char err[160];
    CU_ASSERT_FALSE(op_map_decode(nul, sizeof nul - 1, &m, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "not text"));
    /* empty: no ops, no supersteps */
    CU_ASSERT_TRUE(op_map_decode("", 0, &m, err, sizeof err));
    CU_ASSERT_EQUAL(m.n_ops + m.n_supersteps, 0);
}

/* Three supersteps of chip 0 and one of chip 1: op 0 computes in 0 and 1,
 * op 1 fetches in 1 and computes in 2, nothing owns the exchange of 0 and
 * 2.  Every cycle of chip 0 goes to exactly one op (or none). */
static void test_cycles_by_op(void)
{
    op_map m = { 0 };
    op_map_add_op(&m, "MatMul", "mm");
    op_map_add_op(&m, "Add", "add");
    op_map_note(&m, 0, OP_MAP_COMPUTE, 0);
    op_map_note(&m, 1, OP_MAP_COMPUTE, 0);
    op_map_note(&m, 1, OP_MAP_EXCHANGE, 1);
    op_map_note(&m, 2, OP_MAP_COMPUTE, 1);
    engine_superstep s[4] = {
        { .chip = 0, .index = 0, .c = { .cycles = 190, .compute_cycles = 100, .exchange_cycles = 0, .sync_cycles = 90 } },
        { .chip = 0, .index = 1, .c = { .cycles = 560, .compute_cycles = 300, .exchange_cycles = 150, .sync_cycles = 90,
                                        .wait_cycles = 20 } },
        { .chip = 1, .index = 0, .c = { .cycles = 999, .compute_cycles = 999 } },
        { .chip = 0, .index = 2, .c = { .cycles = 75, .compute_cycles = 40, .exchange_cycles = 35 } },
    };
    engine_stats st = { .supersteps = s, .n_supersteps = 4 };
    op_totals t[3];
    op_stats_sum(&st, &m, 0, 1, t);
    CU_ASSERT_EQUAL(t[0].compute_cycles, 400);
    CU_ASSERT_EQUAL(t[0].cycles, 400);
    CU_ASSERT_EQUAL(t[0].supersteps, 2);
    CU_ASSERT_EQUAL(t[1].compute_cycles, 40);
    CU_ASSERT_EQUAL(t[1].exchange_cycles, 150);
    CU_ASSERT_EQUAL(t[1].sync_cycles, 110);
    CU_ASSERT_EQUAL(t[1].cycles, 300);
    CU_ASSERT_EQUAL(t[1].supersteps, 2);
    CU_ASSERT_EQUAL(t[2].op, -1);
    CU_ASSERT_EQUAL(t[2].cycles, 90 + 35);                 /* superstep 0's sync, 2's exchange */
    CU_ASSERT_EQUAL(t[0].cycles + t[1].cycles + t[2].cycles, 190 + 560 + 75);
    op_stats_sort(t, 3);
    CU_ASSERT_EQUAL(t[0].op, 0);
    CU_ASSERT_EQUAL(t[1].op, 1);
    CU_ASSERT_EQUAL(t[2].op, -1);
    op_map_free(&m);
}

/* A pipelined step: chip 0 (stage 0) and chip 1 (stage 1) run different
 * ops in the same superstep, each chip's cycles going to its own; chip 2
 * is the next replica's stage 0.  The map round-trips with its stage. */
static void test_stages(void)
{
    op_map m = { 0 };
    op_map_add_op(&m, "MatMul", "stage0.mm");
    op_map_add_op(&m, "Relu", "stage1.relu");
    CU_ASSERT_TRUE(op_map_note_stage(&m, 0, 0, OP_MAP_COMPUTE, 0));
    CU_ASSERT_TRUE(op_map_note_stage(&m, 1, 0, OP_MAP_COMPUTE, 1));
    CU_ASSERT_TRUE(op_map_note_stage(&m, 1, 1, OP_MAP_EXCHANGE, 1));
    CU_ASSERT_EQUAL(m.n_stages, 2);
    CU_ASSERT_EQUAL(op_map_owner_stage(&m, 1, 0, OP_MAP_COMPUTE), 1);
    CU_ASSERT_EQUAL(op_map_owner_stage(&m, 0, 0, OP_MAP_COMPUTE), 0);
    CU_ASSERT_EQUAL(op_map_owner_stage(&m, 5, 0, OP_MAP_COMPUTE), 0);      /* past the stages: stage 0's */
    op_map back;
    round_trip(&m, "op MatMul stage0.mm\nop Relu stage1.relu\nsuperstep 0 -1\nstage 1\nsuperstep 1 -1\n"
                   "superstep -1 1\n", &back);
    CU_ASSERT_EQUAL(back.n_stages, 2);
    CU_ASSERT_EQUAL(op_map_owner_stage(&back, 1, 1, OP_MAP_EXCHANGE), 1);
    engine_superstep s[3] = {
        { .chip = 0, .index = 0, .c = { .cycles = 100, .compute_cycles = 100 } },
        { .chip = 1, .index = 0, .c = { .cycles = 100, .compute_cycles = 60, .wait_cycles = 40 } },
        { .chip = 2, .index = 0, .c = { .cycles = 100, .compute_cycles = 70, .sync_cycles = 30 } },
    };
    engine_stats st = { .supersteps = s, .n_supersteps = 3 };
    op_totals t[3];
    op_stats_sum(&st, &back, 1, 1, t);
    CU_ASSERT_EQUAL(t[1].compute_cycles, 60);
    CU_ASSERT_EQUAL(t[0].cycles, 0);
    op_stats_sum(&st, &back, 2, 1, t);
    CU_ASSERT_EQUAL(t[0].compute_cycles, 70);
    CU_ASSERT_EQUAL(t[1].cycles, 0);
    /* chips 0 and 1 together, each to its own stage's ops (run --ops) */
    op_stats_sum(&st, &back, 0, 2, t);
    CU_ASSERT_EQUAL(t[0].compute_cycles, 100);
    CU_ASSERT_EQUAL(t[1].compute_cycles, 60);
    CU_ASSERT_EQUAL(t[2].sync_cycles, 40);       /* chip 1's wait: no op's */
    op_map_free(&back);
    op_map_free(&m);
}

void test_register(void)
{
    ADD_SUITE("op map",
              { "ops and superstep owners encoded and read back", test_round_trip },
              { "malformed sections refused with their line", test_bad_sections },
              { "a chip's cycles given to the ops that own them", test_cycles_by_op },
              { "a pipeline's stages, each chip's cycles to its own ops", test_stages });
}
