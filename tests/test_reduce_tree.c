/*
 * test_reduce_tree.c — per-channel reductions (ReduceSum, ReduceMean,
 * ReduceMax, ReduceMin over N, H and W) of images kept channels-last, and
 * the same over the rows of a row-major matrix (a bias's gradient), on
 * all 1472 tiles of a GC200, with far more partial rows than one tile
 * should take: the partials are combined in stages of bounded fan-in.
 * Each case is compiled, simulated and held against the host evaluator,
 * and its control programs are read back: in no exchange phase does a
 * tile receive more than COMBINE_FAN_IN pieces from other tiles, or send
 * more than that.
 *
 * Tolerance.  With inputs multiples of 1/8 in [-2, 2) every partial sum
 * of up to 2^13 of them is a multiple of 1/8 below 2^14 in magnitude:
 * exact in f32 in any order, so sums, maxima and minima must equal the
 * evaluator's bit for bit; a mean is that exact sum times the f32 1 / m
 * (two roundings against the evaluator's one: within 2 ulp, 2.4e-7
 * relative).  With inputs of 16 fraction bits the sums round: any order
 * of adding m terms in f32 (a tree of any shape included) is within
 * (m - 1) 2^-24 sum |x| of the exact sum (each of the m - 1 additions
 * rounds a partial sum bounded by sum |x| once), plus the evaluator's
 * own rounding (2^-24 |sum|).  A partial row lost or counted twice moves
 * a sum of eighths by at least 1/8 and a maximum or minimum for most
 * channels.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontends/graph_eval.h"
#include "frontends/lower.h"
#include "frontends/simulate.h"
#include "isa/elf/executable.h"
#include "isa/exchange_port.h"
#include "control_fixture.h"
#include "graph_fixture.h"
#include "test_util.h"

#define D(...) ((const int64_t[]){ __VA_ARGS__ })
/* The most pieces a tile takes or gives in one exchange phase of the
 * reduction (lower_data.c). */
#define COMBINE_FAN_IN 64

/* x [n, c, h, w] through a 1x1 MaxPool of stride 1 (the same values, kept
 * channels-last) and op over N, H and W (kept dims: [1, c, 1, 1]). */
static graph *stats_graph(graph_op op, int64_t n, int64_t c, int64_t h, int64_t w)
{
    graph *g = graph_new("reduce_tree", 15);
    input(g, "x", 4, D(n, c, h, w));
    graph_set_attr_ints(node(g, GRAPH_OP_MAXPOOL, "x", "y"), "kernel_shape", D(1, 1), 2);
    graph_set_attr_ints(node(g, op, "y", "r"), "axes", D(0, 2, 3), 3);
    finish(g, "r");
    return g;
}

/* x [r, c] (row-major, not an image) through Relu of x + 4 (every
 * element kept, moved by 4: x is in [-2, 2)) and op over its rows, as a
 * bias's gradient sums dY over the batch: the columns of a matrix kept
 * row-major folded where its rows lie (lower_data.c reduce_columns). */
static graph *rows_graph(graph_op op, int64_t r, int64_t c)
{
    graph *g = graph_new("reduce_rows", 15);
    input(g, "x", 2, D(r, c));
    scalar(g, "four", 4.0f);
    node(g, GRAPH_OP_ADD, "x,four", "x4");
    node(g, GRAPH_OP_RELU, "x4", "y");
    graph_set_attr_ints(node(g, op, "y", "s"), "axes", D(0), 1);
    finish(g, "s");
    return g;
}

/* The most receives from other tiles (*recv) and sends to other tiles
 * (*send) a tile's control program has between two syncs, its steps
 * walked one by one (control_fixture.h). */
static void tile_fan(const ipu_exe *e, uint32_t tile, uint32_t *recv, uint32_t *send)
{
    control_walk cw;
    control_walk_begin(&cw, e, tile);
    control_step st;
    uint32_t r = 0, s = 0;
    while (control_walk_next(&cw, &st)) {
        if (st.kind == CONTROL_SYNC || st.kind == CONTROL_END) {
            r = s = 0;
            continue;
        }
        for (uint32_t k = 0; k < st.transfers; k++) {
            uint32_t peer = control_endpoint(&st, k);
            if (peer != XCH_BROADCAST && (peer & (XCH_HOST | XCH_STREAM_MEMORY)))
                continue;
            if (control_receives(&st) && ++r > *recv)
                *recv = r;
            if (control_sends(&st) && ++s > *send)
                *send = s;
        }
    }
    control_walk_end(&cw);
}

/* g compiled for the whole chip: the most pieces any tile receives from
 * (*recv) or sends to (*send) other tiles in one exchange phase. */
static void program_fan(const graph *g, uint32_t *recv, uint32_t *send)
{
    lower_options lo = { .machine = gc200() };
    lower_report rep;
    char err[1024];
    ipu_exe *e = lower_graph(g, &lo, &rep, err, sizeof err);
    if (!e)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_FATAL(e != NULL);
    *recv = *send = 0;
    for (size_t t = 0; t < e->n_tiles; t++)
        tile_fan(e, e->tiles[t].tile, recv, send);
    exe_free(e);
}

/* g simulated on the whole chip and evaluated on the host with input x:
 * *got and *want; its cycles on the chip (less the supersteps of the
 * input and of the output). */
static uint64_t run_both(const graph *g, float *x, graph_value *got, graph_value *want)
{
    graph_value in = { .dtype = GDT_F32, .shape = g->tensors[g->inputs[0]].shape, .data = x };
    lower_options lo = { .machine = gc200() };
    simulate_result r;
    char err[1024];
    bool ok = simulate_graph(g, &lo, &in, got, &r, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    CU_ASSERT_TRUE_FATAL(graph_eval(g, &in, want, err, sizeof err));
    return r.cycles - r.input_cycles - r.output_cycles;
}

/* Channels of got farther from want than rel |want| + abs_tol[c]
 * (abs_tol NULL: 0). */
static size_t channels_off(const graph_value *got, const graph_value *want, size_t c, double rel,
                           const double *abs_tol)
{
    size_t bad = 0;
    for (size_t k = 0; k < c; k++) {
        double a = ((const float *)got->data)[k], b = ((const float *)want->data)[k];
        if (!(fabs(a - b) <= rel * fabs(b) + (abs_tol ? abs_tol[k] : 0)))
            bad++;
    }
    return bad;
}

/* Multiples of 1/8 in [-2, 2), a different pattern in every channel. */
static float *eighths(size_t n)
{
    float *x = malloc(n * sizeof *x);
    CU_ASSERT_FATAL(x != NULL);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)((int)(rnd() * 4.0f)) / 8.0f;
    return x;
}

/* Each op over an image of [n, c, h, w] of eighths: exact (a mean within
 * 2 ulp), and within the fan-in in every exchange phase. */
static void eighths_case(int64_t n, int64_t c, int64_t h, int64_t w)
{
    static const struct { graph_op op; double rel; } ops[] = {
        { GRAPH_OP_REDUCESUM, 0 }, { GRAPH_OP_REDUCEMEAN, 2.4e-7 },
        { GRAPH_OP_REDUCEMAX, 0 }, { GRAPH_OP_REDUCEMIN, 0 },
    };
    size_t numel = (size_t)(n * c * h * w);
    float *x = eighths(numel);
    for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
        graph *g = stats_graph(ops[k].op, n, c, h, w);
        graph_value got = { 0 }, want = { 0 };
        uint64_t cycles = run_both(g, x, &got, &want);
        size_t bad = channels_off(&got, &want, (size_t)c, ops[k].rel, NULL);
        uint32_t recv = 0, send = 0;
        program_fan(g, &recv, &send);
        if (bad || getenv("REDUCE_TREE_VERBOSE"))
            fprintf(stderr, "\n  %s of [%lld,%lld,%lld,%lld]: %zu channels off, %llu cycles, "
                    "at most %u receives and %u sends a tile in a phase", graph_ops[ops[k].op].name,
                    (long long)n, (long long)c, (long long)h, (long long)w, bad, (unsigned long long)cycles,
                    recv, send);
        CU_ASSERT_EQUAL(bad, 0);
        CU_ASSERT_TRUE(recv >= 2 && recv <= COMBINE_FAN_IN);
        CU_ASSERT_TRUE(send >= 1 && send <= COMBINE_FAN_IN);
        graph_value_free(&got);
        graph_value_free(&want);
        graph_free(g);
    }
    free(x);
}

/* Each op over the rows of an [r, c] matrix of eighths (plus 4): exact
 * (a mean within 2 ulp), within the fan-in in every exchange phase. */
static void rows_case(int64_t r, int64_t c)
{
    static const struct { graph_op op; double rel; } ops[] = {
        { GRAPH_OP_REDUCESUM, 0 }, { GRAPH_OP_REDUCEMEAN, 2.4e-7 },
        { GRAPH_OP_REDUCEMAX, 0 }, { GRAPH_OP_REDUCEMIN, 0 },
    };
    float *x = eighths((size_t)(r * c));
    for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
        graph *g = rows_graph(ops[k].op, r, c);
        graph_value got = { 0 }, want = { 0 };
        run_both(g, x, &got, &want);
        size_t bad = channels_off(&got, &want, (size_t)c, ops[k].rel, NULL);
        uint32_t recv = 0, send = 0;
        program_fan(g, &recv, &send);
        if (bad || getenv("REDUCE_TREE_VERBOSE"))
            fprintf(stderr, "\n  %s over the rows of [%lld,%lld]: %zu columns off, at most %u receives and %u "
                    "sends a tile in a phase", graph_ops[ops[k].op].name, (long long)r, (long long)c, bad, recv, send);
        CU_ASSERT_EQUAL(bad, 0);
        CU_ASSERT_TRUE(recv <= COMBINE_FAN_IN);
        CU_ASSERT_TRUE(send <= COMBINE_FAN_IN);
        graph_value_free(&got);
        graph_value_free(&want);
        graph_free(g);
    }
    free(x);
}

/* BERT-Base's bias gradients at batch 2 of 128 tokens: 256 rows of 768
 * on all tiles, a row split over about six of them. */
static void test_matrix_rows(void)
{
    rows_case(256, 768);
}

/* The intermediate layer's: 256 rows of 3072, several rows a tile. */
static void test_matrix_wide_rows(void)
{
    rows_case(256, 3072);
}

/* res2's activations at batch 2 of 224 pixels: 6272 pixels of 64
 * channels, a few pixels a tile (about 1500 partial rows). */
static void test_many_small_rows(void)
{
    eighths_case(2, 64, 56, 56);
}

/* 512 channels of 784 pixels: a pixel spans tiles, so a partial row a
 * pixel (784 of them, 2 KB each). */
static void test_wide_rows(void)
{
    eighths_case(4, 512, 14, 14);
}

/* 2048 channels of 576 pixels: each group's columns split over several
 * of its tiles, each folding the group's rows of its columns. */
static void test_split_groups(void)
{
    eighths_case(1, 2048, 24, 24);
}

/* ReduceSum of values with 16 fraction bits over [2, 64, 56, 56]: within
 * the bound of f32 summation in any order (the file's comment). */
static void test_rounded_sums(void)
{
    const int64_t n = 2, c = 64, h = 56, w = 56, m = n * h * w;
    size_t numel = (size_t)(n * c * h * w);
    float *x = malloc(numel * sizeof *x);
    CU_ASSERT_FATAL(x != NULL);
    double abs_sum[64] = { 0 }, tol[64];
    for (size_t i = 0; i < numel; i++) {
        x[i] = rnd();
        abs_sum[i / (size_t)(h * w) % (size_t)c] += fabs(x[i]);
    }
    for (int k = 0; k < c; k++)
        tol[k] = (double)(m - 1) * ldexp(abs_sum[k], -24);
    graph *g = stats_graph(GRAPH_OP_REDUCESUM, n, c, h, w);
    graph_value got = { 0 }, want = { 0 };
    run_both(g, x, &got, &want);
    CU_ASSERT_EQUAL(channels_off(&got, &want, (size_t)c, ldexp(1, -24), tol), 0);
    graph_value_free(&got);
    graph_value_free(&want);
    graph_free(g);
    free(x);
}

/* Relu(x) [m, k] times W [k, n] (both eighths: every product a multiple of
 * 1/64, every sum of 64 of them below 2^8, exact in f32 in any order), then
 * op over the m rows of the product: a leading reduction of an input kept
 * in the matmul's blocks, each block folded where it lies and a column's
 * few partials combined (lower_data.c reduce_segments).  Exact (a mean
 * within 2 ulp); at most COMBINE_FAN_IN receives a tile in a phase. */
static void blocks_case(int64_t m, int64_t k, int64_t n)
{
    static const struct { graph_op op; double rel; } ops[] = {
        { GRAPH_OP_REDUCESUM, 0 }, { GRAPH_OP_REDUCEMEAN, 2.4e-7 },
        { GRAPH_OP_REDUCEMAX, 0 }, { GRAPH_OP_REDUCEMIN, 0 },
    };
    float *x = eighths((size_t)(m * k)), *w = eighths((size_t)(k * n));
    for (size_t q = 0; q < sizeof ops / sizeof *ops; q++) {
        graph *g = graph_new("reduce_blocks", 15);
        input(g, "x", 2, D(m, k));
        cnst(g, "W", 2, D(k, n), w);
        /* (through a Relu: a graph input that is only a matmul's A is laid
         * out for the matmul, its blocks gathered by every tile of a grid
         * row from all the others, many receives a tile by design) */
        node(g, GRAPH_OP_RELU, "x", "xr");
        node(g, GRAPH_OP_MATMUL, "xr,W", "y");
        graph_set_attr_ints(node(g, ops[q].op, "y", "s"), "axes", D(0), 1);
        finish(g, "s");
        graph_value got = { 0 }, want = { 0 };
        run_both(g, x, &got, &want);
        size_t bad = channels_off(&got, &want, (size_t)n, ops[q].rel, NULL);
        uint32_t recv = 0, send = 0;
        program_fan(g, &recv, &send);
        if (bad || getenv("REDUCE_TREE_VERBOSE"))
            fprintf(stderr, "\n  %s over the rows of a [%lld,%lld] product: %zu columns off, at most %u receives "
                    "and %u sends a tile in a phase", graph_ops[ops[q].op].name, (long long)m, (long long)n, bad,
                    recv, send);
        CU_ASSERT_EQUAL(bad, 0);
        CU_ASSERT_TRUE(recv <= COMBINE_FAN_IN);
        graph_value_free(&got);
        graph_value_free(&want);
        graph_free(g);
    }
    free(x);
    free(w);
}

/* The masked-LM decoder's shape, narrower: 160 rows of 2048 columns from
 * a 160 x 64 x 2048 product. */
static void test_product_blocks(void)
{
    blocks_case(160, 64, 2048);
}

/* ReduceSum and ReduceProd over the 160 rows of a [160, 8192] matrix kept
 * linearly (rows longer than the pixel path takes, a row over about nine
 * tiles): a column's 160 partials in more than COMBINE_FAN_IN, combined in
 * two levels.  The sum as test_rounded_sums bounds it; the product of
 * values 1 + e, |e| <= 2^-8 and a multiple of 2^-16, against the f64
 * reference within 160 roundings (160 2^-24 relative, with margin). */
static void test_long_rows_two_levels(void)
{
    const int64_t r = 160, c = 8192;
    float *x = malloc((size_t)(r * c) * sizeof *x);
    CU_ASSERT_FATAL(x != NULL);
    double *tol = calloc((size_t)c, sizeof *tol);
    CU_ASSERT_FATAL(tol != NULL);
    for (int pass = 0; pass < 2; pass++) {
        for (int64_t i = 0; i < r * c; i++) {
            x[i] = pass ? 1.0f + (float)((int)(rnd() * 256.0f)) / 65536.0f - 4.0f : rnd();
            tol[i % c] = pass ? 0 : tol[i % c] + fabs(x[i] + 4.0) * (double)(r - 1) * ldexp(1, -24);
        }
        graph *g = rows_graph(pass ? GRAPH_OP_REDUCEPROD : GRAPH_OP_REDUCESUM, r, c);
        graph_value got = { 0 }, want = { 0 };
        run_both(g, x, &got, &want);
        size_t bad = channels_off(&got, &want, (size_t)c, pass ? 200 * ldexp(1, -24) : ldexp(1, -24), pass ? NULL : tol);
        if (bad)
            fprintf(stderr, "\n  %s over the rows of [%lld,%lld]: %zu columns off", pass ? "ReduceProd" : "ReduceSum",
                    (long long)r, (long long)c, bad);
        CU_ASSERT_EQUAL(bad, 0);
        graph_value_free(&got);
        graph_value_free(&want);
        graph_free(g);
    }
    free(x);
    free(tol);
}

void test_register(void)
{
    ADD_SUITE("lowering: per-channel reductions combined in a tree",
              { "many partial rows of a few channels", test_many_small_rows },
              { "partial rows of 512 channels", test_wide_rows },
              { "2048 channels: groups split over several tiles", test_split_groups },
              { "sums of rounded values within the f32 summation bound", test_rounded_sums },
              { "the rows of a row-major matrix (a bias's gradient)", test_matrix_rows },
              { "the rows of a row-major matrix of 3072 columns", test_matrix_wide_rows },
              { "the rows of a matmul's product, folded in its blocks", test_product_blocks },
              { "rows of 8192: a column's partials combined in two levels", test_long_rows_two_levels });
}
