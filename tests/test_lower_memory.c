/*
 * test_lower_memory.c — the lowering's plan of tile memory: a tensor's
 * storage goes back to its tiles after the last node reading it and later
 * tensors are placed there, so a chain of ops needs the memory of the
 * tensors alive at once, not of all of them.  Each case compiles a graph
 * for a few tiles of a GC200, simulates it and checks the values exactly
 * (or against the evaluator for a matmul): a tensor whose storage was
 * given away too early, a view whose storage went with its input, or
 * matmul partials placed on a dead tensor's values without being zeroed
 * all show as wrong values.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontends/graph_eval.h"
#include "frontends/lower.h"
#include "frontends/lower_internal.h"
#include "frontends/simulate.h"
#include "isa/fp16.h"
#include "sim/engine/program_io.h"
#include "workloads/codelets/matmul_f32.h"
#include "workloads/models/models.h"
#include "graph_fixture.h"
#include "matmul_check.h"
#include "test_util.h"

/* 96 x 1024 f32 on 4 tiles: 96 KiB of every tile a tensor; ten of them
 * (960 KiB) would not fit in a tile's 624 KiB. */
#define ROWS 96
#define COLS 1024
#define TILES 4

/* Compile g with lo and run it on x; the output's values. */
static graph_value run_with(const graph *g, const lower_options *lo, float *x, lower_report *plan)
{
    graph_value in = { .dtype = GDT_F32, .shape = g->tensors[g->inputs[0]].shape, .data = x }, out = { 0 };
    simulate_result r;
    char err[1024];
    bool ok = simulate_graph(g, lo, &in, &out, &r, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    *plan = r.plan;
    return out;
}

/* The same for TILES tiles of a GC200. */
static graph_value run(const graph *g, float *x, lower_report *plan)
{
    lower_options lo = { .machine = gc200(), .tiles = TILES };
    return run_with(g, &lo, x, plan);
}

/* y_k = y_(k-1) + 1, n times, on 96 x 1024 f32; the graph of y_n. */
static graph *chain(int n)
{
    const int64_t d[2] = { ROWS, COLS };
    graph *g = graph_new("chain", 13);
    input(g, "y0", 2, d);
    scalar(g, "one", 1.0f);
    char in[32], out[32];
    for (int k = 1; k <= n; k++) {
        snprintf(in, sizeof in, "y%d,one", k - 1);
        snprintf(out, sizeof out, "y%d", k);
        node(g, GRAPH_OP_ADD, in, out);
    }
    finish(g, out);
    return g;
}

/* Elements of y that are not x + n. */
static size_t not_plus(const graph_value *y, const float *x, float n)
{
    size_t bad = 0;
    for (size_t i = 0; i < ROWS * COLS; i++)
        bad += ((const float *)y->data)[i] != x[i] + n;           /* exact: x has 14 bits */
    return bad;
}

static float *input_values(void)
{
    float *x = malloc(ROWS * COLS * sizeof *x);
    CU_ASSERT_FATAL(x != NULL);
    for (size_t i = 0; i < ROWS * COLS; i++)
        x[i] = rnd();
    return x;
}

/* x [2, 150, 1024] + c [1, 150, 1024] (a constant) + (c + 1) (computed)
 * on 15 tiles: a piece of x across the end of its first item needs c's
 * rows from near its end and from its start.  Those rows are fetched
 * beside the piece (its size, 80 KiB), not c's whole range of them
 * (600 KiB, more than a tile has).  Exact: the values have 14 bits. */
static void test_broadcast_across_items(void)
{
    const int64_t dx[3] = { 2, 150, 1024 }, dc[3] = { 1, 150, 1024 };
    const size_t nx = 2 * 150 * 1024, nc = 150 * 1024;
    float *x = malloc(nx * sizeof *x), *c = malloc(nc * sizeof *c);
    CU_ASSERT_FATAL(x && c);
    for (size_t i = 0; i < nx; i++)
        x[i] = rnd();
    for (size_t i = 0; i < nc; i++)
        c[i] = rnd();
    graph *g = graph_new("broadcast", 13);
    input(g, "x", 3, dx);
    cnst(g, "c", 3, dc, c);
    scalar(g, "one", 1.0f);
    node(g, GRAPH_OP_ADD, "x,c", "t");
    node(g, GRAPH_OP_ADD, "c,one", "u");
    node(g, GRAPH_OP_ADD, "t,u", "y");
    finish(g, "y");
    lower_options lo = { .machine = gc200(), .tiles = 15 };
    lower_report plan;
    graph_value y = run_with(g, &lo, x, &plan);
    size_t bad = 0;
    for (size_t i = 0; i < nx; i++)
        bad += ((const float *)y.data)[i] != x[i] + c[i % nc] + (c[i % nc] + 1.0f);
    CU_ASSERT_EQUAL(bad, 0);
    graph_value_free(&y);
    free(x);
    free(c);
    graph_free(g);
}

/* On a GC2 region 1 ends in an element that is not interleaved (256 KiB
 * from 0x4C000: one 32 KiB pair from 0x80000, then 16 KiB alone), where
 * the matmul codelets' fast loop, which takes region 1 as interleaved,
 * would read and write one element at once.  Scratch is taken from the
 * top, so C is never scratch there: the product of f16 operands with
 * f16 output runs without a memory conflict and matches the evaluator
 * (f16 values of K = 256 products: within 1e-2 of them, of order 1). */
static void test_matmul_below_unpaired_element(void)
{
    static machine m;
    char err[1024];
    CU_ASSERT_TRUE_FATAL(machine_preset("gc2", &m, err, sizeof err));
    graph *g = models_build("matmul:384x256x512:f16", err, sizeof err);
    CU_ASSERT_FATAL(g != NULL);
    CU_ASSERT_FATAL(g->n_inputs >= 1 && g->n_inputs <= 2);
    graph_value in[2];
    for (int i = 0; i < g->n_inputs; i++) {
        const graph_tensor *x = &g->tensors[g->inputs[i]];
        size_t n = (size_t)graph_shape_numel(&x->shape);
        CU_ASSERT_FATAL(x->dtype == GDT_F16);
        uint16_t *v = malloc(n * 2);
        CU_ASSERT_FATAL(v != NULL);
        for (size_t k = 0; k < n; k++)
            v[k] = fp16_from_f32(rnd());
        in[i] = (graph_value){ .dtype = x->dtype, .shape = x->shape, .data = v };
    }
    graph_value got = { 0 }, want = { 0 };
    lower_options lo = { .machine = &m };
    simulate_result r;
    bool ok = simulate_graph(g, &lo, in, &got, &r, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    CU_ASSERT_TRUE_FATAL(graph_eval(g, in, &want, err, sizeof err));
    size_t n = (size_t)graph_shape_numel(&want.shape), bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += fabsf(fp16_to_f32(((const uint16_t *)got.data)[i]) - fp16_to_f32(((const uint16_t *)want.data)[i])) >
               1e-2f * (1 + fabsf(fp16_to_f32(((const uint16_t *)want.data)[i])));
    CU_ASSERT_EQUAL(bad, 0);
    graph_value_free(&got);
    graph_value_free(&want);
    for (int i = 0; i < g->n_inputs; i++)
        free(in[i].data);
    graph_free(g);
}

/* y_k = y_(k-1) + 1, nine times: ten tensors, two alive at a time. */
static void test_chain_reuses_storage(void)
{
    graph *g = chain(9);
    float *x = input_values();
    lower_report plan;
    graph_value y = run(g, x, &plan);
    CU_ASSERT(plan.reused_bytes >= 8ull * ROWS * COLS * 4 / 2);   /* most of eight tensors' storage */
    CU_ASSERT(plan.max_tile_bytes < plan.memory_bytes);
    CU_ASSERT_EQUAL(not_plus(&y, x, 9.0f), 0);
    graph_value_free(&y);
    free(x);
    graph_free(g);
}

/* A control program no region has room for goes in two blocks, the first
 * ending with a jump to the second: the program runs as in one.  The room
 * is narrowed until the programs split. */
static void test_control_program_in_two_blocks(void)
{
    graph *g = chain(3);
    float *x = input_values();
    bool split = false;
    for (uint32_t room = 128; room <= 8192 && !split; room *= 2) {
        lower_options lo = { .machine = gc200(), .tiles = TILES, .control_room_bytes = room };
        lower_report plan;
        char err[512];
        ipu_exe *e = lower_graph(g, &lo, &plan, err, sizeof err);
        if (!e) {
            CU_ASSERT(strstr(err, "does not fit: tile") && strstr(err, "for the control program"));
            /* and what fills the tile */
            CU_ASSERT(strstr(err, "bytes kept for the run (tensors and variables)") &&
                      strstr(err, "of control program: ") && strstr(err, " receives and ") &&
                      strstr(err, " compute sets, "));
            continue;
        }
        exe_free(e);
        if (!plan.split_programs)
            break;                                                 /* one block: room enough */
        split = true;
        graph_value y = run_with(g, &lo, x, &plan);
        CU_ASSERT_EQUAL(plan.split_programs, TILES);
        CU_ASSERT_EQUAL(not_plus(&y, x, 3.0f), 0);
        graph_value_free(&y);
    }
    CU_ASSERT_TRUE(split);
    free(x);
    graph_free(g);
}

/* A Reshape's output is its input's storage: that storage stays taken
 * until the view's last reader, though the input's own last reader (the
 * Reshape) comes earlier and new tensors are placed in between.  x is
 * read at the end (through a view of its own), so the only storage free
 * for b is a's if a's went back too early. */
static void test_view_keeps_storage(void)
{
    const int64_t d[2] = { ROWS, COLS }, flat[1] = { ROWS * COLS };
    graph *g = graph_new("view", 13);
    input(g, "x", 2, d);
    scalar(g, "one", 1.0f);
    scalar(g, "two", 2.0f);
    graph_shape s1 = { .rank = 1, .dims = { 1 } };
    int fs = graph_add_tensor(g, "flat_shape");
    graph_set_constant(g, fs, GDT_I64, &s1, flat);
    node(g, GRAPH_OP_RESHAPE, "x,flat_shape", "xf");
    node(g, GRAPH_OP_ADD, "x,one", "a");
    node(g, GRAPH_OP_RESHAPE, "a,flat_shape", "v");
    node(g, GRAPH_OP_ADD, "v,two", "b");
    node(g, GRAPH_OP_ADD, "v,b", "c");
    node(g, GRAPH_OP_ADD, "c,xf", "z");
    finish(g, "z");
    float *x = input_values();
    lower_report plan;
    graph_value z = run(g, x, &plan);
    size_t bad = 0;
    for (size_t i = 0; i < ROWS * COLS; i++)
        bad += ((const float *)z.data)[i] != 3.0f * x[i] + 4.0f;
    CU_ASSERT_EQUAL(bad, 0);
    graph_value_free(&z);
    free(x);
    graph_free(g);
}

/* The AMP codelets add into their partials: placed where a dead tensor's
 * values are, they must be zeroed first. */
static void test_matmul_partials_on_reused_storage(void)
{
    const int64_t d[2] = { 64, 256 }, wd[2] = { 256, 64 };
    graph *g = graph_new("partials", 13);
    input(g, "x", 2, d);
    scalar(g, "one", 1.0f);
    cnst(g, "w", 2, wd, NULL);
    node(g, GRAPH_OP_ADD, "x,one", "a");
    node(g, GRAPH_OP_ADD, "a,one", "b");
    node(g, GRAPH_OP_MATMUL, "b,w", "y");
    finish(g, "y");
    float *x = input_values();         /* the first 64 x 256 of them */
    lower_report plan;
    graph_value y = run(g, x, &plan);
    CU_ASSERT(plan.reused_bytes > 0);
    graph_value in = { .dtype = GDT_F32, .shape = g->tensors[g->inputs[0]].shape, .data = x }, want = { 0 };
    char err[512];
    CU_ASSERT_TRUE_FATAL(graph_eval(g, &in, &want, err, sizeof err));
    /* f32 products of K = 256 terms of |b w| <= 4 x 2: well inside 1e-3
     * absolute; a stale partial is of the order of the values, 1 to 100. */
    size_t bad = 0;
    for (size_t i = 0; i < 64 * 64; i++)
        bad += fabs(((const float *)y.data)[i] - ((const float *)want.data)[i]) > 1e-3;
    CU_ASSERT_EQUAL(bad, 0);
    graph_value_free(&y);
    graph_value_free(&want);
    free(x);
    graph_free(g);
}


/* An op's scratch goes where a dead tensor was, and tensors made later go
 * where the op's scratch was: a is dead (its last reader's output is
 * small, so nothing was made in its place) when the matmul (B received,
 * turned and packed on the tile: B^T is b) takes its scratch, and the
 * chain after it keeps five tensors of 64 KiB a tile alive at once.  The
 * values show any block handed to two owners at once. */
static void test_scratch_and_tensors_share_blocks(void)
{
    const int64_t d[2] = { 64, COLS };
    graph *g = graph_new("share", 13);
    input(g, "x", 2, d);
    scalar(g, "one", 1.0f);
    int64_t perm[2] = { 1, 0 };
    scalar(g, "two", 2.0f);
    node(g, GRAPH_OP_ADD, "x,one", "a");
    node(g, GRAPH_OP_ADD, "x,two", "b");
    graph_set_attr_ints(node(g, GRAPH_OP_REDUCESUM, "a", "as"), "axes", (const int64_t[]){ 1 }, 1);
    graph_node *t = node(g, GRAPH_OP_TRANSPOSE, "b", "bt");
    graph_set_attr_ints(t, "perm", perm, 2);
    node(g, GRAPH_OP_MATMUL, "b,bt", "c");
    node(g, GRAPH_OP_ADD, "b,one", "z1");
    node(g, GRAPH_OP_ADD, "z1,one", "z2");
    node(g, GRAPH_OP_ADD, "z2,one", "z3");
    node(g, GRAPH_OP_ADD, "z3,one", "z4");
    node(g, GRAPH_OP_ADD, "z1,z2", "s2");
    node(g, GRAPH_OP_ADD, "s2,z3", "s3");
    node(g, GRAPH_OP_ADD, "s3,z4", "s4");
    node(g, GRAPH_OP_ADD, "s4,b", "s5");
    node(g, GRAPH_OP_REDUCESUM, "c", "cs");
    node(g, GRAPH_OP_ADD, "s5,cs", "s6");
    node(g, GRAPH_OP_ADD, "s6,as", "y");
    finish(g, "y");
    float *x = input_values();
    lower_report plan;
    graph_value y = run(g, x, &plan);
    CU_ASSERT(plan.lent_bytes > 0);
    CU_ASSERT(plan.reused_scratch_bytes > 0);
    graph_value in = { .dtype = GDT_F32, .shape = g->tensors[g->inputs[0]].shape, .data = x }, want = { 0 };
    char err[512];
    CU_ASSERT_TRUE_FATAL(graph_eval(g, &in, &want, err, sizeof err));
    size_t bad = 0;
    for (size_t i = 0; i < 64 * COLS; i++)
        bad += fabs(((const float *)y.data)[i] - ((const float *)want.data)[i]) > 1e-3 * fabs(((const float *)want.data)[i]);
    CU_ASSERT_EQUAL(bad, 0);
    graph_value_free(&y);
    graph_value_free(&want);
    free(x);
    graph_free(g);
}


/* A Transpose of a MatMul's first operand is never made: the matmul reads
 * A as given ([K, M], turned on the tile), as a weight's gradient X^T dY
 * does, and item by item in a batch (attention's S^T dC); the same with
 * --f16-matmul (turned in f32, then cast). */
static void transposed_case(int64_t batch)
{
    const int64_t d3[3] = { batch, 96, 64 }, *d = batch > 1 ? d3 : d3 + 1;
    const int rank = batch > 1 ? 3 : 2;
    graph *g = graph_new("xt_dy", 13);
    input(g, "x", rank, d);
    scalar(g, "one", 1.0f);
    int64_t perm3[3] = { 0, 2, 1 }, perm2[2] = { 1, 0 };
    node(g, GRAPH_OP_ADD, "x,one", "dy");
    graph_set_attr_ints(node(g, GRAPH_OP_TRANSPOSE, "x", "xt"), "perm", rank == 3 ? perm3 : perm2, (size_t)rank);
    node(g, GRAPH_OP_MATMUL, "xt,dy", "dw");
    finish(g, "dw");
    float *x = input_values();
    graph_value in = { .dtype = GDT_F32, .shape = g->tensors[g->inputs[0]].shape, .data = x }, want = { 0 };
    char err[512];
    CU_ASSERT_TRUE_FATAL(graph_eval(g, &in, &want, err, sizeof err));
    for (int f16 = 0; f16 < 2; f16++) {
        lower_options lo = { .machine = gc200(), .tiles = TILES, .f16_matmul = f16 };
        lower_report plan;
        graph_value y = run_with(g, &lo, x, &plan);
        CU_ASSERT_EQUAL(plan.folded_transposes, 1);
        /* against the sum of the K = 96 products' magnitudes: f32 sums
         * within K 2^-24 of it; f16 operands (each rounded by 2^-11) 2^-10
         * more */
        size_t bad = 0;
        for (int64_t b = 0; b < batch; b++)
            for (size_t i = 0; i < 64; i++)
                for (size_t j = 0; j < 64; j++) {
                    const float *xb = x + b * 96 * 64;
                    double mag = 0;
                    for (size_t k = 0; k < 96; k++)
                        mag += fabs(xb[k * 64 + i]) * fabs(xb[k * 64 + j] + 1.0);
                    size_t at = (size_t)b * 64 * 64 + i * 64 + j;
                    double w = ((const float *)want.data)[at], got = ((const float *)y.data)[at];
                    bad += fabs(got - w) > (f16 ? ldexp(1, -10) + 96.0 * ldexp(1, -24) : 97.0 * ldexp(1, -24)) * mag;
                }
        CU_ASSERT_EQUAL(bad, 0);
        graph_value_free(&y);
    }
    graph_value_free(&want);
    free(x);
    graph_free(g);
}

static void test_transposed_first_operand(void)
{
    transposed_case(1);
    transposed_case(3);
}


/* Records and control programs are placed last, when their size is known;
 * where ops' scratch left a tile too little room for them, the graph is
 * lowered again with that room held back from the start.  On 16 tiles of
 * 512 KiB a matmul early takes much scratch, and 116 transposes of a
 * 64 x 64 block after it (a receive an element) make long control
 * programs: the second lowering fits, and runs as the evaluator says. */
static void test_room_held_for_control(void)
{
    const int64_t d[2] = { 128, 1024 }, sq[2] = { 64, 64 };
    graph *g = graph_new("held", 13);
    input(g, "x", 2, d);
    input(g, "s", 2, sq);
    scalar(g, "one", 1.0f);
    int64_t perm[2] = { 1, 0 };
    node(g, GRAPH_OP_ADD, "x,one", "a");
    graph_set_attr_ints(node(g, GRAPH_OP_TRANSPOSE, "a", "at"), "perm", perm, 2);
    node(g, GRAPH_OP_MATMUL, "a,at", "c");
    char in[64], out[48];
    snprintf(out, sizeof out, "s");
    for (int k = 1; k <= 116; k++) {
        snprintf(in, sizeof in, "%s", out);
        snprintf(out, sizeof out, "t%d", k);
        graph_set_attr_ints(node(g, GRAPH_OP_TRANSPOSE, in, out), "perm", perm, 2);
    }
    node(g, GRAPH_OP_REDUCESUM, "c", "cs");
    scalar(g, "tiny", 0x1p-30f);
    node(g, GRAPH_OP_MUL, "cs,tiny", "csm");
    char fin[128];
    snprintf(fin, sizeof fin, "%s,csm", out);
    node(g, GRAPH_OP_ADD, fin, "y");
    finish(g, "y");
    machine m = *gc200();
    char err[1024];
    CU_ASSERT_TRUE_FATAL(machine_set(&m, "tile_memory_bytes=524288", err, sizeof err));
    lower_options lo = { .machine = &m, .tiles = 16 };
    float *x = malloc(128 * 1024 * sizeof *x), sv[64 * 64];
    CU_ASSERT_FATAL(x != NULL);
    for (size_t i = 0; i < 128 * 1024; i++)
        x[i] = rnd();
    for (size_t i = 0; i < 64 * 64; i++)
        sv[i] = (float)i / 64.0f;
    graph_value ins[2] = { { .dtype = GDT_F32, .shape = g->tensors[g->inputs[0]].shape, .data = x },
                           { .dtype = GDT_F32, .shape = g->tensors[g->inputs[1]].shape, .data = sv } };
    graph_value y = { 0 }, want = { 0 };
    simulate_result r;
    bool ok = simulate_graph(g, &lo, ins, &y, &r, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    CU_ASSERT_EQUAL(r.plan.lowerings, 2);
    CU_ASSERT_TRUE_FATAL(graph_eval(g, ins, &want, err, sizeof err));
    /* y = s (116 transposes) + 2^-30 sum(a a^T): the sum of 2^24
     * products of |a| < 3 (about 2^24.6 in magnitude), rounded along at
     * most 1024 + 16384 additions, is within 2^-10 of that sum, 2e-5
     * once scaled; then the f32 add rounds y by 2^-24.  A transpose gone
     * wrong moves y by at least 1/64. */
    size_t bad = 0;
    for (size_t i = 0; i < 64 * 64; i++) {
        double w = ((const float *)want.data)[i];
        bad += fabs(((const float *)y.data)[i] - w) > ldexp(fabs(w), -23) + 3e-5;
    }
    CU_ASSERT_EQUAL(bad, 0);
    graph_value_free(&y);
    graph_value_free(&want);
    free(x);
    graph_free(g);
}

/* An f32 matmul on one tile whose rows of A are there already (a graph
 * input laid out for it): the codelet reads them in place.  Before, they
 * were copied into scratch first, by one worker, which took longer than
 * the product itself (35 x 384 x 16: 40 K cycles of copy beside the
 * codelet's 25 K).  The on-chip cycles (without the host's transfers) are
 * the codelet's own count and a little (the epilogue, the compute sets'
 * calls, the syncs); the values are the codelet's C model's. */
static void test_matmul_rows_of_a_in_place(void)
{
    enum { M = 36, K = 384, N = 16 };
    const int64_t da[2] = { M, K }, db[2] = { K, N };
    float *a = malloc(M * K * sizeof *a), *b = malloc(K * N * sizeof *b), c[M * N] = { 0 };
    CU_ASSERT_FATAL(a && b);
    for (size_t i = 0; i < M * K; i++)
        a[i] = rnd();
    for (size_t i = 0; i < K * N; i++)
        b[i] = rnd();
    graph *g = graph_new("inplace", 13);
    input(g, "a", 2, da);
    cnst(g, "b", 2, db, b);
    node(g, GRAPH_OP_MATMUL, "a,b", "c");
    finish(g, "c");
    lower_options lo = { .machine = gc200(), .tiles = 1 };
    graph_value in = { .dtype = GDT_F32, .shape = g->tensors[g->inputs[0]].shape, .data = a }, y = { 0 };
    simulate_result r;
    char err[1024];
    bool ok = simulate_graph(g, &lo, &in, &y, &r, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    matmul_model_f32(a, b, M, K, N, c);
    CU_ASSERT_EQUAL(memcmp(y.data, c, sizeof c), 0);
    matmul_f32_args args = { .a = 0x50000, .b = 0x90000, .c = 0xa0000, .m = M, .k = K, .n = N,
                             .a_row_step = K * 4, .c_row_step = N * 4 };
    uint64_t codelet = matmul_f32_cycles(&args, 0), on_chip = r.cycles - r.input_cycles - r.output_cycles;
    CU_ASSERT(on_chip >= codelet);
    CU_ASSERT(on_chip <= codelet + 1500);
    if (on_chip > codelet + 1500)
        fprintf(stderr, "\n  on chip %llu cycles, the codelet %llu\n", (unsigned long long)on_chip,
                (unsigned long long)codelet);
    graph_value_free(&y);
    free(a);
    free(b);
    graph_free(g);
}

/* A graph input that is only a matmul's A is laid out for the matmul's
 * plan, as poplin::createMatMulInputLHS lays it out: each block of A (a
 * grid row's rows, a share of K) spread in even runs over the tiles of its
 * grid row, no tile holding much more than its run, and every tile
 * gathering its block from the others.  Values are eighths (every sum
 * exact in f32 in any order): the product equals the evaluator's.  The
 * gather is where a supertile's two tiles take the same data: with
 * exchange_supertile_receive off the same program takes longer. */
static void test_matmul_a_spread(void)
{
    enum { M = 192, K = 1024, N = 512 };
    const int64_t da[2] = { M, K }, db[2] = { K, N };
    float *a = malloc(M * K * sizeof *a), *b = malloc(K * N * sizeof *b);
    CU_ASSERT_FATAL(a && b);
    for (size_t i = 0; i < M * K; i++)
        a[i] = (float)((int)(rnd() * 16.0f)) / 8.0f;
    for (size_t i = 0; i < K * N; i++)
        b[i] = (float)((int)(rnd() * 16.0f)) / 8.0f;
    graph *g = graph_new("spread", 13);
    input(g, "a", 2, da);
    cnst(g, "b", 2, db, b);
    node(g, GRAPH_OP_MATMUL, "a,b", "c");
    finish(g, "c");
    char err[1024];
    machine paired = *gc200(), apart = *gc200();
    CU_ASSERT_TRUE_FATAL(machine_set(&apart, "exchange_supertile_receive=0", err, sizeof err));
    lower_options lo = { .machine = &paired };
    ipu_exe *e = lower_graph(g, &lo, NULL, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    tensor_map *map = program_tensor_map(e, "spread", err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(map);
    const tmap_tensor *ta = tmap_find(map, "a");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ta);
    static uint64_t held[4096];
    memset(held, 0, sizeof held);
    uint32_t tiles = 0;
    uint64_t most = 0;
    for (size_t k = 0; k < ta->n_pieces; k++) {
        const tmap_piece *pc = &ta->pieces[k];
        CU_ASSERT_TRUE(pc->first / K == (pc->first + pc->count - 1) / K);   /* within a row */
        tiles += held[pc->tile] == 0;
        held[pc->tile] += pc->count;
        most = held[pc->tile] > most ? held[pc->tile] : most;
    }
    printf("\n    a: %zu pieces on %u tiles, at most %llu elements a tile", ta->n_pieces, tiles,
           (unsigned long long)most);
    CU_ASSERT_TRUE(tiles >= 256);
    CU_ASSERT_TRUE(most <= 2 * (uint64_t)(M * K) / tiles);
    tmap_free(map);
    exe_free(e);
    graph_value in = { .dtype = GDT_F32, .shape = g->tensors[g->inputs[0]].shape, .data = a }, y = { 0 }, want = { 0 };
    simulate_result r[2];
    for (int i = 0; i < 2; i++) {
        lo.machine = i ? &apart : &paired;
        bool ok = simulate_graph(g, &lo, &in, &y, &r[i], err, sizeof err);
        if (!ok)
            fprintf(stderr, "\n  %s\n", err);
        CU_ASSERT_TRUE_FATAL(ok);
        if (!i) {
            CU_ASSERT_TRUE_FATAL(graph_eval(g, &in, &want, err, sizeof err));
            CU_ASSERT_EQUAL(memcmp(y.data, want.data, M * N * sizeof(float)), 0);
        }
        graph_value_free(&y);
    }
    uint64_t on_chip[2];
    for (int i = 0; i < 2; i++)
        on_chip[i] = r[i].cycles - r[i].input_cycles - r[i].output_cycles;
    printf(", on the chip %llu cycles (%llu with a supertile's tiles receiving apart)", (unsigned long long)on_chip[0],
           (unsigned long long)on_chip[1]);
    CU_ASSERT_TRUE(on_chip[0] < on_chip[1]);
    graph_value_free(&want);
    free(a);
    free(b);
    graph_free(g);
}

/* A tile's local copies are shared by its six workers: a Concat of two
 * 96 KiB inputs on one tile is two copies, which before took a worker each
 * (8 bytes a worker issue, one issue in six tile cycles: 74 K cycles).
 * Cut into six pieces, the 192 KiB take about a sixth of the time a single
 * worker would (24.6 K cycles and the pieces' calls).  Exact values. */
static void test_local_copies_shared_by_workers(void)
{
    enum { R = 24, C = 1024 };
    const int64_t d[2] = { R, C };
    float *x = malloc(2 * R * C * sizeof *x);
    CU_ASSERT_FATAL(x != NULL);
    for (size_t i = 0; i < 2 * R * C; i++)
        x[i] = rnd();
    graph *g = graph_new("copies", 13);
    input(g, "x", 2, d);
    input(g, "z", 2, d);
    graph_set_attr_int(node(g, GRAPH_OP_CONCAT, "x,z", "y"), "axis", 0);
    finish(g, "y");
    lower_options lo = { .machine = gc200(), .tiles = 1 };
    graph_value ins[2] = { { .dtype = GDT_F32, .shape = g->tensors[g->inputs[0]].shape, .data = x },
                           { .dtype = GDT_F32, .shape = g->tensors[g->inputs[1]].shape, .data = x + R * C } },
                y = { 0 };
    simulate_result r;
    char err[1024];
    bool ok = simulate_graph(g, &lo, ins, &y, &r, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    CU_ASSERT_EQUAL(memcmp(y.data, x, 2 * R * C * sizeof *x), 0);
    uint64_t on_chip = r.cycles - r.input_cycles - r.output_cycles, one_worker = 2 * R * C * 4 / 8 * 6;
    CU_ASSERT(on_chip < one_worker / 6 + 3000);
    if (on_chip >= one_worker / 6 + 3000)
        fprintf(stderr, "\n  on chip %llu cycles\n", (unsigned long long)on_chip);
    graph_value_free(&y);
    free(x);
    graph_free(g);
}

/* A matmul no grid of which fits the tiles at once is serialised, as
 * PopART serialises BERT's vocabulary matmuls: its rows, columns or K cut
 * into parts computed one after another on one grid, each part's scratch
 * free for the next; parts of K add into the output's block.  Each case
 * is sized so that only the serial plan fits (and the cut named is the
 * cheapest), with B computed at run time or constant; the values are held to the f32
 * codelet's error bound against a double product (matmul_f32.h). */
static void serial_case(int M, int K, int N, uint32_t tiles, uint32_t memory_kib, int axis, bool constant_b)
{
    const int64_t da[2] = { M, K }, db[2] = { K, N };
    float *a = malloc((size_t)M * K * sizeof *a), *b = malloc((size_t)K * N * sizeof *b);
    CU_ASSERT_FATAL(a && b);
    for (size_t i = 0; i < (size_t)M * K; i++)
        a[i] = rnd();
    for (size_t i = 0; i < (size_t)K * N; i++)
        b[i] = rnd();
    graph *g = graph_new("serial", 13);
    input(g, "a", 2, da);
    if (constant_b)
        cnst(g, "b", 2, db, b);
    else
        input(g, "b", 2, db);
    node(g, GRAPH_OP_MATMUL, "a,b", "c");
    finish(g, "c");
    machine m = *gc200();
    char err[1024], set[64];
    snprintf(set, sizeof set, "tile_memory_bytes=%u", memory_kib * 1024u);
    CU_ASSERT_TRUE_FATAL(machine_set(&m, set, err, sizeof err));
    lower_options lo = { .machine = &m, .tiles = tiles };
    graph_value ins[2] = { { .dtype = GDT_F32, .shape = g->tensors[g->inputs[0]].shape, .data = a },
                           { .dtype = GDT_F32, .shape = g->tensors[g->inputs[g->n_inputs - 1]].shape, .data = b } },
                y = { 0 };
    simulate_result r;
    bool ok = simulate_graph(g, &lo, ins, &y, &r, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n  %dx%dx%d: %s\n", M, K, N, err);
    CU_ASSERT_TRUE_FATAL(ok);
    if (r.plan.serialised_by[axis] != 1)
        fprintf(stderr, "\n  %dx%dx%d: serialised by rows %u, columns %u, K %u\n", M, K, N, r.plan.serialised_by[0],
                r.plan.serialised_by[1], r.plan.serialised_by[2]);
    CU_ASSERT_EQUAL(r.plan.serialised_matmuls, 1);
    CU_ASSERT_EQUAL(r.plan.serialised_by[axis], 1);
    CU_ASSERT(r.plan.serial_parts >= 2);
    CU_ASSERT_EQUAL(matmul_f32_out_of_bound(a, b, y.data, (size_t)M, (size_t)K, (size_t)N), 0);
    graph_value_free(&y);
    free(a);
    free(b);
    graph_free(g);
}

static void test_matmul_serialised(void)
{
    /* by K, not by rows: both fit, and K's parts add into the output's
     * block where rows' re-gather B (223,254 cycles against 244,334) */
    serial_case(1024, 256, 64, 16, 336, 2, false);
    serial_case(2, 8, 32768, 16, 304, 1, false);     /* columns (K one weight block, two rows) */
    serial_case(64, 256, 1024, 16, 336, 2, false);   /* K, added into the output's block */
    /* constant weights by rows: packed and kept once, gathered again for each part */
    serial_case(2048, 256, 64, 16, 304, 0, true);
}

/* A serialised matmul whose output only an Add into a running sum reads
 * (graph_node.accumulates: a weight gradient summed over micro-batches):
 * each part's rows are added into the sum as they are made and their
 * blocks given back (poplin's matMulAcc), so the whole product never lies
 * on the tiles.  The sum s + A B comes out bit for bit as the same graph
 * gives it with a plain Add after the whole product (the same plan, the
 * same f32 additions), within the codelet's bound of the product, and the
 * fullest tile holds less (by rows, B constant: 2048 x 256 x 64 on 16
 * tiles of 336 KiB, in 5 parts).  Each part's Add fetches the product's
 * rows to the sum's tiles in rounds whose copies fit the room there. */
static graph *sum_of_product(const float *b, bool accumulates)
{
    enum { M = 2048, K = 256, N = 64 };
    graph *g = graph_new("sum", 13);
    input(g, "s0", 2, (const int64_t[]){ M, N });
    input(g, "a", 2, (const int64_t[]){ M, K });
    cnst(g, "b", 2, (const int64_t[]){ K, N }, b);
    node(g, GRAPH_OP_RELU, "s0", "s");                 /* the running sum, made on the tiles */
    node(g, GRAPH_OP_MATMUL, "a,b", "c");
    node(g, GRAPH_OP_ADD, "s,c", "y")->accumulates = accumulates;
    finish(g, "y");
    return g;
}

static void test_matmul_added_by_parts(void)
{
    enum { M = 2048, K = 256, N = 64 };
    float *a = malloc((size_t)M * K * sizeof *a), *b = malloc((size_t)K * N * sizeof *b);
    float *sum = malloc((size_t)M * N * sizeof *sum);
    CU_ASSERT_FATAL(a && b && sum);
    for (size_t i = 0; i < (size_t)M * K; i++)
        a[i] = rnd();
    for (size_t i = 0; i < (size_t)K * N; i++)
        b[i] = rnd();
    for (size_t i = 0; i < (size_t)M * N; i++)
        sum[i] = rnd();
    machine m = *gc200();
    char err[1024];
    CU_ASSERT_TRUE_FATAL(machine_set(&m, "tile_memory_bytes=344064", err, sizeof err));
    lower_options lo = { .machine = &m, .tiles = 16 };
    graph_value y[2] = { { 0 }, { 0 } };
    simulate_result r[2];
    for (int k = 0; k < 2; k++) {                 /* k = 1: the Add a running sum's */
        graph *g = sum_of_product(b, k == 1);
        graph_value ins[2] = { { .dtype = GDT_F32, .shape = g->tensors[g->inputs[0]].shape, .data = sum },
                               { .dtype = GDT_F32, .shape = g->tensors[g->inputs[1]].shape, .data = a } };
        bool ok = simulate_graph(g, &lo, ins, &y[k], &r[k], err, sizeof err);
        if (!ok)
            fprintf(stderr, "\n  %s\n", err);
        CU_ASSERT_TRUE_FATAL(ok);
        CU_ASSERT_EQUAL(r[k].plan.serialised_by[0], 1);
        CU_ASSERT_EQUAL(r[k].plan.accumulated_in_parts, (uint32_t)k);
        graph_free(g);
    }
    CU_ASSERT_EQUAL(memcmp(y[0].data, y[1].data, (size_t)M * N * sizeof *sum), 0);
    CU_ASSERT(r[1].plan.max_tile_bytes < r[0].plan.max_tile_bytes);
    fprintf(stderr, "\n  the fullest tile %llu -> %llu bytes, %llu -> %llu cycles\n",
            (unsigned long long)r[0].plan.max_tile_bytes, (unsigned long long)r[1].plan.max_tile_bytes,
            (unsigned long long)r[0].cycles, (unsigned long long)r[1].cycles);
    float *prod = malloc((size_t)M * N * sizeof *prod);
    CU_ASSERT_FATAL(prod != NULL);
    for (size_t i = 0; i < (size_t)M * N; i++)
        prod[i] = ((const float *)y[1].data)[i] - (sum[i] > 0 ? sum[i] : 0.0f);
    CU_ASSERT_EQUAL(matmul_f32_out_of_bound(a, b, prod, (size_t)M, (size_t)K, (size_t)N), 0);
    free(prod);
    graph_value_free(&y[0]);
    graph_value_free(&y[1]);
    free(a);
    free(b);
    free(sum);
}

/* The room of a tile (tile 538 of bert-base:s256:l1:b4 --train before the
 * decoder's weight gradient, 30522 x 152 x 768 on a 122 x 6 x 2 grid, as
 * lw_stage_rooms gives it: each region's scratch floor slot first, whole)
 * and the blocks the grid takes there in order: A, B as received and
 * turned, the bias, the packed weights and C.  Taken best-fit, A goes in
 * the 55,728-byte released block of region 1 and C then fits the floor's
 * slot there.  The tile took A from the highest free block, the one at
 * the floor, as scratch_alloc takes every scratch block that block holds,
 * and the packed weights after it: C found 125,264 bytes where it needs
 * 128,576.  lw_blocks_fit_as with floor_first, as the matmul planner
 * checks each tile's own room, says so. */
static void test_room_floor_first(void)
{
    enum { B = LW_ROOM_BLOCKS };
    uint64_t room[LW_ROOM_SIZE] = { 0 };
    room[0] = 17392 + 155712;                         /* region 0: new bytes and the block at the floor */
    room[B] = 35088 + 172224;                         /* region 1: the same */
    room[B + 1] = 55728, room[B + 2] = 37056, room[B + 3] = 13776;
    room[2 * B] = 17392, room[2 * B + 1] = 35088;
    const lw_block_need ev[] = {
        { .bytes = 40960, .pref = PREFER_REGION1 },   /* 1: A */
        { .bytes = 80320, .pref = PREFER_REGION0 },   /* 2: B as received */
        { .bytes = 528, .pref = PREFER_REGION1 },     /* 3: the bias */
        { .bytes = 80320, .pref = PREFER_REGION0 },   /* 4: B turned */
        { .ends = 2 },                                /* B as received given back */
        { .bytes = 40960, .pref = NEED_REGION1 },     /* the packed weights */
        { .bytes = 128512, .pref = PREFER_REGION1 },  /* C */
    };
    const int n = (int)(sizeof ev / sizeof *ev);
    CU_ASSERT_TRUE(lw_blocks_fit_as(room, ev, n, false));
    CU_ASSERT_FALSE(lw_blocks_fit_as(room, ev, n, true));
    /* C a quarter smaller: the tile holds it either way. */
    lw_block_need smaller[sizeof ev / sizeof *ev];
    memcpy(smaller, ev, sizeof ev);
    smaller[n - 1].bytes = 96384;
    CU_ASSERT_TRUE(lw_blocks_fit_as(room, smaller, n, true));
}

/* A tensor that neither the new bytes of a region (8 KiB between the
 * blocks kept for the run and the scratch's floor) nor the free block at
 * the floor (16 KiB, scratch before) holds alone, but the two together
 * do: it takes them as one block, the floor raised past it, the rest of
 * the free block left free at the new floor (BERT-Large's pipeline needed
 * this of a weight gradient's C inside a stage's arena). */
static void test_tensor_across_floor(void)
{
    const uint32_t base = ISA_REGION1_BASE - 0x10000, tensor_bytes = 20 * 1024;
    ltile t = { 0 };
    t.region0_kept_end = base;
    t.region0_scratch_floor = base + 0x2000;
    t.region1_kept_end = t.region1_scratch_floor = ISA_REGION1_BASE + 0x1000;
    t.free = malloc(sizeof *t.free);
    CU_ASSERT_FATAL(t.free != NULL);
    t.free[0] = (mem_block){ 0, base + 0x2000, 0x4000, false };
    t.n_free = t.cap_free = 1;
    ltensor x = { .root = 0 };
    lower_report rep = { 0 };
    char err[512] = "";
    graph *g = graph_new("floor", 13);
    lowering lw = { .g = g, .tile = &t, .tensor = &x, .rep = &rep, .tiles = 1, .program_tiles = 1, .err = err,
                    .err_size = sizeof err, .cur_op = -1 };
    uint32_t at = lw_tensor_alloc(&lw, 0, 0, tensor_bytes, PREFER_REGION0, 8, false, "tensor 'x'");
    if (!at)
        fprintf(stderr, "\n  %s\n", err);
    const uint32_t end = base + tensor_bytes + CODELET_READ_SLACK_BYTES;
    CU_ASSERT_EQUAL(at, base);
    CU_ASSERT_EQUAL(t.region0_kept_end, end);
    CU_ASSERT_EQUAL(t.region0_scratch_floor, end);
    CU_ASSERT_EQUAL_FATAL(t.n_free, 1);
    CU_ASSERT_EQUAL(t.free[0].addr, end);
    CU_ASSERT_EQUAL(t.free[0].size, base + 0x6000 - end);
    CU_ASSERT_EQUAL(x.n_blocks, 1);
    /* A second one finds the 3.9 KiB left too little: no room, said so. */
    CU_ASSERT_EQUAL(lw_tensor_alloc(&lw, 0, 0, tensor_bytes, PREFER_REGION0, 8, false, "tensor 'x'"), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "no room for a block"));
    free(t.free);
    free(t.allocs);
    free(x.blocks);
    graph_free(g);
}

void test_register(void)
{
    ADD_SUITE("lowering: tile memory",
              { "a chain of ten tensors fits where ten would not", test_chain_reuses_storage },
              { "a broadcast operand's rows fetched beside a piece across items", test_broadcast_across_items },
              { "GC2: a matmul's C never in the element that is not interleaved", test_matmul_below_unpaired_element },
              { "a control program in two blocks", test_control_program_in_two_blocks },
              { "a view keeps its input's storage", test_view_keeps_storage },
              { "matmul partials on reused storage start at zero", test_matmul_partials_on_reused_storage },
              { "scratch in a dead tensor's block, tensors in past scratch", test_scratch_and_tensors_share_blocks },
              { "a transposed first operand is read as given", test_transposed_first_operand },
              { "room held back for records and control programs", test_room_held_for_control },
              { "an f32 matmul reads the rows of A it holds in place", test_matmul_rows_of_a_in_place },
              { "a matmul's A from the host is spread over its grid rows", test_matmul_a_spread },
              { "a tile's local copies are shared by its workers", test_local_copies_shared_by_workers },
              { "a matmul that fits no grid at once is serialised", test_matmul_serialised },
              { "a serialised matmul added into a running sum part by part", test_matmul_added_by_parts },
              { "a tile's own room: scratch from the floor's block first", test_room_floor_first },
              { "a tensor in new bytes and the free block at the floor together", test_tensor_across_floor });
}
