/*
 * test_long_rows.c — ops over rows longer than the row codelets take
 * (ROWWISE_MAX_COLS, 8191 columns), as a vocabulary of 30522 words makes
 * them: reductions in two levels (a partial per chunk, then the partials
 * folded) and element-wise ops whose rows are split over tiles; also the
 * element-wise ops by one constant value done as a x + b.  Each case is
 * compiled for a few tiles of a GC200, simulated, and held against the
 * host evaluator.
 *
 * Inputs are multiples of 1/8 in [-2, 2): a sum of up to 30522 of them
 * (|sum| < 2^16, 3 fraction bits) and a sum of their squares (< 2^17, 6
 * fraction bits) are exact in f32 in any order, so sums, sums of squares,
 * maxima and minima must equal the evaluator's bit for bit; a mean is the
 * exact sum times the f32 1 / C (two roundings against the evaluator's
 * one: within 2 ulp); a log-sum-exp adds C values of e^x, each within a
 * few ulp (f32exp), with C - 1 roundings: within (C + 4) 2^-24 of its
 * log.  A chunk lost or counted twice moves any of them far more.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontends/graph_eval.h"
#include "frontends/lower.h"
#include "frontends/simulate.h"
#include "graph_fixture.h"
#include "test_util.h"

#define TILES 16

/* Values k / 8 in [-2, 2). */
static float *eighths(size_t n)
{
    float *x = malloc(n * sizeof *x + 4);
    CU_ASSERT_FATAL(x != NULL);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)((int)(rnd() * 4.0f)) / 8.0f;
    return x;
}

/* g (one input x) simulated on TILES tiles and evaluated on the host:
 * *got and *want; false (and a CUnit failure) when either fails. */
static bool run_both(const graph *g, float *x, graph_value *got, graph_value *want)
{
    graph_value in = { .dtype = GDT_F32, .shape = g->tensors[g->inputs[0]].shape, .data = x };
    lower_options lo = { .machine = gc200(), .tiles = TILES };
    simulate_result r;
    char err[1024];
    bool ok = simulate_graph(g, &lo, &in, got, &r, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE(ok);
    bool ev = ok && graph_eval(g, &in, want, err, sizeof err);
    CU_ASSERT_TRUE(!ok || ev);
    return ok && ev;
}

/* Elements of got farther from want than tol (relative to |want|, plus abs). */
static size_t count_off(const graph_value *got, const graph_value *want, double rel, double abs_tol)
{
    size_t n = (size_t)graph_shape_numel(&want->shape), bad = 0;
    for (size_t i = 0; i < n; i++) {
        double a = ((const float *)got->data)[i], b = ((const float *)want->data)[i];
        if (!(fabs(a - b) <= rel * fabs(b) + abs_tol))
            bad++;
    }
    return bad;
}

/* g simulated and evaluated on n eighths as its input: the elements off
 * by more than rel |want| + abs_tol (0 when either run failed, which the
 * runs assert). */
static size_t off_on_eighths(const graph *g, size_t n, double rel, double abs_tol)
{
    float *x = eighths(n);
    graph_value got = { 0 }, want = { 0 };
    size_t bad = run_both(g, x, &got, &want) ? count_off(&got, &want, rel, abs_tol) : 0;
    graph_value_free(&got);
    graph_value_free(&want);
    free(x);
    return bad;
}

/* op over axis `axis` (keepdims) of x [rows, cols]. */
static graph *reduce_graph(graph_op op, int64_t rows, int64_t cols, int64_t axis)
{
    const int64_t d[2] = { rows, cols };
    graph *g = graph_new("long_reduce", 11);      /* opset 11: axes an attribute */
    input(g, "x", 2, d);
    graph_set_attr_ints(node(g, op, "x", "y"), "axes", &axis, 1);
    finish(g, "y");
    return g;
}

/* Each reduction over rows of lengths around the codelet's limit and
 * BERT's vocabulary: within the tolerance above. */
static void test_long_reductions(void)
{
    static const int64_t lengths[] = { 8191, 8192, 8193, 16382, 16383, 24574, 30522 };
    static const struct { graph_op op; double rel; bool lse; } ops[] = {
        { GRAPH_OP_REDUCESUM, 0, false },       { GRAPH_OP_REDUCEMAX, 0, false },
        { GRAPH_OP_REDUCEMIN, 0, false },       { GRAPH_OP_REDUCESUMSQUARE, 0, false },
        { GRAPH_OP_REDUCEMEAN, 2.4e-7, false }, { GRAPH_OP_REDUCELOGSUMEXP, 0, true },
    };
    for (size_t li = 0; li < sizeof lengths / sizeof *lengths; li++)
        for (size_t oi = 0; oi < sizeof ops / sizeof *ops; oi++) {
            int64_t cols = lengths[li];
            graph *g = reduce_graph(ops[oi].op, 3, cols, 1);
            double abs_tol = ops[oi].lse ? (double)(cols + 4) * ldexp(1, -24) : 0;
            size_t bad = off_on_eighths(g, (size_t)(3 * cols), ops[oi].rel, abs_tol);
            if (bad)
                fprintf(stderr, "\n  %s over %lld: %zu rows off\n", graph_ops[ops[oi].op].name, (long long)cols, bad);
            CU_ASSERT_EQUAL(bad, 0);
            graph_free(g);
        }
}

/* A reduction over the first axis (the rows fetched as a strided view),
 * 9001 long, of 5 columns: exact sums and maxima. */
static void test_long_strided_reduction(void)
{
    static const graph_op ops[] = { GRAPH_OP_REDUCESUM, GRAPH_OP_REDUCEMAX };
    for (int k = 0; k < 2; k++) {
        graph *g = reduce_graph(ops[k], 9001, 5, 0);
        CU_ASSERT_EQUAL(off_on_eighths(g, 9001 * 5, 0, 0), 0);
        graph_free(g);
    }
}

/* x [3, 30522] less its rows' maxima [3, 1], plus a bias [30522], then
 * 1 - that, times 0.5 (the long rows split over the tiles, the constant
 * operands in the records): every step exact against the evaluator (the
 * same f32 roundings). */
static void test_long_rows_elementwise(void)
{
    const int64_t d[2] = { 3, 30522 }, bd[1] = { 30522 };
    graph *g = graph_new("long_binary", 11);
    input(g, "x", 2, d);
    cnst(g, "bias", 1, bd, NULL);
    scalar(g, "one", 1.0f);
    scalar(g, "half", 0.5f);
    int64_t axis = 1;
    graph_set_attr_ints(node(g, GRAPH_OP_REDUCEMAX, "x", "m"), "axes", &axis, 1);
    node(g, GRAPH_OP_SUB, "x,m", "d");
    node(g, GRAPH_OP_ADD, "d,bias", "b");
    node(g, GRAPH_OP_SUB, "one,b", "c");
    node(g, GRAPH_OP_MUL, "c,half", "y");
    finish(g, "y");
    CU_ASSERT_EQUAL(off_on_eighths(g, 3 * 30522, 0, 0), 0);
    graph_free(g);
}

/* The element-wise ops of a backward pass on a matmul's output, which
 * comes as a piece per row of each block (many pieces a tile): y = (x w)
 * / 2 + x v + bias, the Mul by 1/2 a x + b on the pieces of x w, the Add
 * of x v to them (two tensors of one shape, x v fetched piece by piece),
 * then the bias broadcast by rows.  backward false puts the same
 * nodes in the forward pass (a compute set a piece).  x, w, v and bias
 * are multiples of 1/8 in [-2, 2) and K is 8: every product, sum and half
 * is exact in f32, so the result must equal the evaluator's bit for bit.
 * *compute_sets: the plan's. */
static void matmul_pieces_case(bool backward, uint64_t *compute_sets)
{
    const int64_t M = 48, K = 8, N = 512;
    const int64_t xd[2] = { M, K }, wd[2] = { K, N }, bd[1] = { N };
    float *w = eighths((size_t)(K * N)), *v = eighths((size_t)(K * N)), *b = eighths((size_t)N);
    graph *g = graph_new("matmul_pieces", 13);
    input(g, "x", 2, xd);
    cnst(g, "w", 2, wd, w);
    cnst(g, "v", 2, wd, v);
    cnst(g, "bias", 1, bd, b);
    scalar(g, "half", 0.5f);
    node(g, GRAPH_OP_MATMUL, "x,w", "p");
    node(g, GRAPH_OP_MATMUL, "x,v", "q");
    if (backward)
        g->phase = GRAPH_PHASE_BACKWARD;
    node(g, GRAPH_OP_MUL, "p,half", "h");
    node(g, GRAPH_OP_ADD, "h,q", "hq");
    node(g, GRAPH_OP_ADD, "hq,bias", "y");
    finish(g, "y");
    float *x = eighths((size_t)(M * K));
    graph_value got = { 0 }, want = { 0 };
    graph_value in = { .dtype = GDT_F32, .shape = g->tensors[g->inputs[0]].shape, .data = x };
    lower_options lo = { .machine = gc200(), .tiles = TILES };
    simulate_result r;
    char err[1024];
    bool ok = simulate_graph(g, &lo, &in, &got, &r, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE(ok);
    if (ok) {
        *compute_sets = r.plan.compute_sets;
        CU_ASSERT_TRUE_FATAL(graph_eval(g, &in, &want, err, sizeof err));
        CU_ASSERT_EQUAL(count_off(&got, &want, 0, 0), 0);
    }
    graph_value_free(&got);
    graph_value_free(&want);
    free(x);
    free(w);
    free(v);
    free(b);
    graph_free(g);
}

/* In the backward pass the six workers share a tile's pieces: the same
 * values as the forward pass's compute set a piece, in fewer compute sets. */
static void test_backward_elementwise_pieces(void)
{
    uint64_t fwd = 0, bwd = 0;
    matmul_pieces_case(false, &fwd);
    matmul_pieces_case(true, &bwd);
    CU_ASSERT_TRUE(bwd > 0 && bwd * 2 < fwd);
    printf("(compute sets: %llu a piece, %llu shared) ", (unsigned long long)fwd, (unsigned long long)bwd);
}

void test_register(void)
{
    ADD_SUITE("lowering: rows longer than the row codelets take",
              { "reductions in two levels", test_long_reductions },
              { "a long reduction over the first axis", test_long_strided_reduction },
              { "element-wise ops on long rows and by constants", test_long_rows_elementwise },
              { "backward element-wise ops share a tile's pieces", test_backward_elementwise_pieces });
}
