/*
 * test_decompose.c — the decomposition pass on graphs built with the IR
 * API: each rewrite removes the op it replaces, the rewritten graph
 * evaluates (f64 evaluator) to the original's values within a few f32 ulps,
 * and it compiles for a GC200 whose simulated results agree too.  The
 * values include what exp(y log|x|) gets wrong without its fixes: negative
 * bases, zero bases and exponents, non-integer powers of negative numbers.
 * Also the nodes that must be left as they are.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontends/decompose.h"
#include "frontends/graph_eval.h"
#include "frontends/ops_impl.h"
#include "frontends/simulate.h"
#include "graph_fixture.h"
#include "test_util.h"

/* Output 0 of g fed in[i] for input i: from the evaluator, or compiled
 * and simulated on a GC200. */
static graph_value outcome(const graph *g, float *const *in, bool simulated)
{
    graph_value v[8], out = { 0 };
    char err[1024];
    CU_ASSERT_FATAL(g->n_inputs <= 8 && g->n_outputs == 1);
    for (int i = 0; i < g->n_inputs; i++)
        v[i] = (graph_value){ .dtype = GDT_F32, .shape = g->tensors[g->inputs[i]].shape, .data = in[i] };
    bool ok;
    if (simulated) {
        lower_options lo = { .machine = gc200() };
        simulate_result r;
        ok = simulate_graph(g, &lo, v, &out, &r, err, sizeof err);
    } else {
        ok = graph_eval(g, v, &out, err, sizeof err);
    }
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    return out;
}

/* got equals want within atol + rtol |want|; NaN only where want is NaN,
 * infinities exactly. */
static void expect_close(const graph_value *got, const graph_value *want, double atol, double rtol, const char *what)
{
    CU_ASSERT_FATAL(got->dtype == GDT_F32 && graph_shape_equal(&got->shape, &want->shape));
    size_t n = (size_t)graph_shape_numel(&want->shape), bad = 0;
    for (size_t i = 0; i < n; i++) {
        double g = ((const float *)got->data)[i], w = ((const float *)want->data)[i];
        bool ok = isnan(w) || isnan(g) ? isnan(w) && isnan(g)
                  : isinf(w) || isinf(g) ? g == w
                                         : fabs(g - w) <= atol + rtol * fabs(w);
        if (!ok && !bad++)
            fprintf(stderr, "\n  %s: element %zu is %.9g, expected %.9g\n", what, i, g, w);
    }
    CU_ASSERT_EQUAL(bad, 0);
}

/* Decompose g and hold the result against the original's: the evaluator
 * within a few f32 ulps (every rewritten op rounds to f32), the simulated
 * IPU within its kernels' accuracy. */
static void decompose_and_compare(graph *g, float *const *in, decompose_stats *st)
{
    graph_value want = outcome(g, in, false);
    char err[512];
    bool ok = decompose_graph(g, st, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    graph_value got = outcome(g, in, false), sim = outcome(g, in, true);
    expect_close(&got, &want, 1e-6, 4e-6, "evaluated");
    expect_close(&sim, &want, 1e-6, 1e-4, "simulated");
    graph_value_free(&want);
    graph_value_free(&got);
    graph_value_free(&sim);
}

static int count_op(const graph *g, graph_op op)
{
    int c = 0;
    for (int k = 0; k < g->n_nodes; k++)
        c += g->nodes[k].op == op;
    return c;
}

/* n random values in [-2, 2) (malloc'd). */
static float *random_values(size_t n)
{
    float *v = malloc(n * sizeof *v + 1);
    for (size_t i = 0; i < n; i++)
        v[i] = rnd();
    return v;
}

/* ---- BatchNormalization ---------------------------------------------------------------- */

static const int64_t d2345[] = { 2, 3, 4, 5 }, d3[] = { 3 }, d43[] = { 4, 3 };

/* A batch norm of x over 3 channels: parameters as inputs (run time) or
 * constants; variances kept positive. */
static graph *batchnorm_graph(int rank, const int64_t *dims, bool constant_parameters, int64_t training_mode)
{
    static const float var[] = { 0.5f, 1.5f, 0.01f };
    graph *g = graph_new("batchnorm", 15);
    input(g, "x", rank, dims);
    const char *names[] = { "scale", "B", "mean", "var" };
    for (int i = 0; i < 4; i++) {
        if (constant_parameters)
            cnst(g, names[i], 1, d3, i == 3 ? var : NULL);
        else
            input(g, names[i], 1, d3);
    }
    graph_node *n = node(g, GRAPH_OP_BATCHNORM, "x,scale,B,mean,var", "y");
    graph_set_attr_float(n, "epsilon", 1e-3);
    if (training_mode)
        graph_set_attr_int(n, "training_mode", training_mode);
    finish(g, "y");
    return g;
}

static void batchnorm_case(int rank, const int64_t *dims, bool constant_parameters)
{
    graph *g = batchnorm_graph(rank, dims, constant_parameters, 0);
    float *in[5];
    for (int i = 0; i < g->n_inputs; i++)
        in[i] = random_values((size_t)graph_shape_numel(&g->tensors[g->inputs[i]].shape));
    if (!constant_parameters)
        for (int c = 0; c < 3; c++)
            in[4][c] = fabsf(in[4][c]);          /* var */
    decompose_stats st;
    decompose_and_compare(g, in, &st);
    CU_ASSERT_EQUAL(st.batchnorms, 1);
    CU_ASSERT_EQUAL(count_op(g, GRAPH_OP_BATCHNORM), 0);
    if (constant_parameters) {
        /* s and t folded: x * s + t is all that runs */
        CU_ASSERT_EQUAL(g->n_nodes, 2);
        CU_ASSERT_EQUAL(count_op(g, GRAPH_OP_MUL), 1);
        CU_ASSERT_EQUAL(count_op(g, GRAPH_OP_ADD), 1);
    }
    for (int i = 0; i < g->n_inputs; i++)
        free(in[i]);
    graph_free(g);
}

static void test_batchnorm_run_time(void)
{
    batchnorm_case(4, d2345, false);
    batchnorm_case(2, d43, false);
}

static void test_batchnorm_constant(void)
{
    batchnorm_case(4, d2345, true);
    batchnorm_case(2, d43, true);
}

/* Training mode normalises with the batch's statistics: not the
 * inference rewrite but the training one (tests/test_ops_train.c). */
static void test_batchnorm_training_kept(void)
{
    graph *g = batchnorm_graph(4, d2345, false, 1);
    decompose_stats st;
    char err[512];
    CU_ASSERT_TRUE(decompose_graph(g, &st, err, sizeof err));
    CU_ASSERT_EQUAL(st.batchnorms, 0);
    CU_ASSERT_EQUAL(st.batchnorms_training, 1);
    CU_ASSERT_EQUAL(count_op(g, GRAPH_OP_BATCHNORM), 0);
    CU_ASSERT_EQUAL(count_op(g, GRAPH_OP_REDUCEMEAN), 2);
    graph_free(g);
}

/* ---- Softmax ----------------------------------------------------------------------- */

static const int64_t d234[] = { 2, 3, 4 };

/* Every Softmax left normalises the last axis alone. */
static bool softmax_on_last_axis_only(const graph *g)
{
    for (int k = 0; k < g->n_nodes; k++) {
        const graph_node *n = &g->nodes[k];
        int from, to, rank = g->tensors[n->inputs[0]].shape.rank;
        if (n->op == GRAPH_OP_SOFTMAX && (!ops_softmax_range(g, n, &from, &to) || from != rank - 1 || to != rank))
            return false;
    }
    return true;
}

/* y = op(x) for a [2,3,4] input x over `axis` (absent: the opset's
 * default): Softmax or LogSoftmax. */
static graph *row_op_graph(graph_op op, int opset, const int64_t *axis)
{
    graph *g = graph_new(graph_ops[op].name, opset);
    input(g, "x", 3, d234);
    graph_node *n = node(g, op, "x", "y");
    if (axis)
        graph_set_attr_int(n, "axis", *axis);
    finish(g, "y");
    return g;
}

/* Softmax of a [2,3,4] input over `axis` (absent: the opset's default). */
static void softmax_case(int opset, const int64_t *axis)
{
    graph *g = row_op_graph(GRAPH_OP_SOFTMAX, opset, axis);
    int from, to;
    CU_ASSERT_TRUE_FATAL(ops_softmax_range(g, &g->nodes[0], &from, &to));
    bool rewritten = from != 2;
    float *x = random_values(24);
    for (int i = 0; i < 24; i++)
        x[i] *= 4;                          /* [-8, 8): exp spans 7 orders */
    if (rewritten) {
        /* the lowering itself takes the last axis only, read as the opset
         * reads it (before 13 the default axis is 1) */
        graph_value v = { .dtype = GDT_F32, .shape = g->tensors[g->inputs[0]].shape, .data = x }, out = { 0 };
        lower_options lo = { .machine = gc200() };
        simulate_result r;
        char err[512];
        CU_ASSERT_FALSE(simulate_graph(g, &lo, &v, &out, &r, err, sizeof err));
        CU_ASSERT_TRUE(r.plan.unsupported);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "only the last axis is supported"));
    }
    decompose_stats st;
    decompose_and_compare(g, &x, &st);
    CU_ASSERT_EQUAL(st.softmaxes, rewritten);
    CU_ASSERT_TRUE(softmax_on_last_axis_only(g));
    CU_ASSERT_EQUAL(g->n_nodes, rewritten ? 3 : 1);
    CU_ASSERT_EQUAL(count_op(g, opset >= 13 ? GRAPH_OP_TRANSPOSE : GRAPH_OP_RESHAPE), rewritten ? 2 : 0);
    free(x);
    graph_free(g);
}

/* A case of a [2,3,4] input under opsets 11 and 13, with the default axis
 * and each of -3 .. 2. */
static void every_axis(void (*one)(int opset, const int64_t *axis))
{
    static const int opsets[] = { 11, 13 };
    for (int o = 0; o < 2; o++) {
        one(opsets[o], NULL);
        for (int64_t a = -3; a < 3; a++)
            one(opsets[o], &a);
    }
}

static void test_softmax_axes(void)
{
    every_axis(softmax_case);
}

/* ---- LogSoftmax and Clip ---------------------------------------------------------- */

/* LogSoftmax of a [2,3,4] input over `axis` (absent: the opset's default),
 * with values up to 1e4 apart within a row: exp(x) alone would overflow. */
static void log_softmax_case(int opset, const int64_t *axis)
{
    graph *g = row_op_graph(GRAPH_OP_LOGSOFTMAX, opset, axis);
    float *x = random_values(24);
    for (int i = 0; i < 24; i++)
        x[i] = i % 3 ? x[i] * 4 : 1e4f + x[i];
    decompose_stats st;
    decompose_and_compare(g, &x, &st);
    CU_ASSERT_EQUAL(st.log_softmaxes, 1);
    CU_ASSERT_EQUAL(count_op(g, GRAPH_OP_LOGSOFTMAX), 0);
    CU_ASSERT_EQUAL(count_op(g, GRAPH_OP_REDUCELOGSUMEXP), 1);
    free(x);
    graph_free(g);
}

static void test_log_softmax_axes(void)
{
    every_axis(log_softmax_case);
}

/* Clip with min, max, both or neither, against values known by hand. */
static void test_clip(void)
{
    static const float x[6] = { -3, -1, 0, 0.5f, 2, 7 };
    static const float want[4][6] = {
        { -3, -1, 0, 0.5f, 2, 7 },          /* neither */
        { -1, -1, 0, 0.5f, 2, 7 },          /* min -1 */
        { -3, -1, 0, 0.5f, 1, 1 },          /* max 1 */
        { -1, -1, 0, 0.5f, 1, 1 },          /* both */
    };
    static const int64_t d6[] = { 6 };
    for (int c = 0; c < 4; c++) {
        graph *g = graph_new("clip", 13);
        input(g, "x", 1, d6);
        scalar(g, "lo", -1);
        scalar(g, "hi", 1);
        const char *ins[] = { "x", "x,lo", "x,,hi", "x,lo,hi" };
        if (c == 2) {
            /* min omitted: an empty input */
            int in[3] = { graph_find_tensor(g, "x"), -1, graph_find_tensor(g, "hi") }, out = graph_add_tensor(g, "y");
            graph_add_node(g, GRAPH_OP_CLIP, "y", in, 3, &out, 1);
        } else {
            node(g, GRAPH_OP_CLIP, ins[c], "y");
        }
        finish(g, "y");
        float *in = (float *)x;
        graph_value v = outcome(g, &in, false);
        for (int i = 0; i < 6; i++)
            CU_ASSERT_EQUAL(((const float *)v.data)[i], want[c][i]);
        graph_value_free(&v);
        decompose_stats st;
        decompose_and_compare(g, &in, &st);
        CU_ASSERT_EQUAL(st.clips, 1);
        CU_ASSERT_EQUAL(count_op(g, GRAPH_OP_CLIP), 0);
        CU_ASSERT_EQUAL(count_op(g, GRAPH_OP_MAX), c & 1);
        CU_ASSERT_EQUAL(count_op(g, GRAPH_OP_MIN), c >> 1);
        graph_free(g);
    }
}

/* ---- Max and Min ------------------------------------------------------------------- */

static const int64_t d1[] = { 1 }, d31[] = { 3, 1 }, d4[] = { 4 }, d34[] = { 3, 4 };

static void max_min_case(graph_op op, int n_inputs)
{
    static const char *const names[] = { "a", "b", "c", "d" };
    static const int64_t *const dims[] = { d34, d31, d4, d1 };
    static const int ranks[] = { 2, 2, 1, 1 };
    graph *g = graph_new("max_min", 13);
    char ins[32] = "";
    float *in[4];
    for (int i = 0; i < n_inputs; i++) {
        input(g, names[i], ranks[i], dims[i]);
        snprintf(ins + strlen(ins), sizeof ins - strlen(ins), "%s%s", i ? "," : "", names[i]);
        in[i] = random_values((size_t)graph_shape_numel(&g->tensors[g->inputs[i]].shape));
    }
    node(g, op, ins, "y");
    finish(g, "y");
    decompose_stats st;
    decompose_and_compare(g, in, &st);
    CU_ASSERT_EQUAL(st.max_mins, n_inputs != 2);
    CU_ASSERT_EQUAL(count_op(g, op), n_inputs == 1 ? 0 : n_inputs - 1);
    for (int k = 0; k < g->n_nodes; k++)
        if (g->nodes[k].op == op)
            CU_ASSERT_EQUAL(g->nodes[k].n_inputs, 2);
    for (int i = 0; i < n_inputs; i++)
        free(in[i]);
    graph_free(g);
}

static void test_max_min(void)
{
    for (int n = 1; n <= 4; n++) {
        max_min_case(GRAPH_OP_MAX, n);
        max_min_case(GRAPH_OP_MIN, n);
    }
}

/* ---- Pow --------------------------------------------------------------------------- */

/* Bases with negative numbers, zero, one and fractions; exponents with
 * zero, odd and even integers of both signs and non-integers. */
static const float bases[] = { -2, -1.5f, -1, -0.25f, 0, 0.5f, 1, 3 };
static const float exponents[] = { 0, 1, 2, 3, -1, -2, -3, 0.5f, 2.5f, -1.5f };
static const int64_t d81[] = { 8, 1 }, d10[] = { 10 }, d8[] = { 8 };

/* Every base to every exponent, both at run time ([8,1] and [10]). */
static void test_pow_run_time(void)
{
    graph *g = graph_new("pow", 15);
    input(g, "x", 2, d81);
    input(g, "y", 1, d10);
    node(g, GRAPH_OP_POW, "x,y", "z");
    finish(g, "z");
    float *in[2] = { (float *)bases, (float *)exponents };
    decompose_stats st;
    decompose_and_compare(g, in, &st);
    CU_ASSERT_EQUAL(st.pows_by_exp_log, 1);
    CU_ASSERT_EQUAL(count_op(g, GRAPH_OP_POW), 0);
    graph_free(g);
}

/* The bases to a constant exponent e of dtype t (f32, or i64 when e is
 * an integer). */
static void pow_constant_case(double e, graph_dtype t, bool multiplied)
{
    graph *g = graph_new("pow", 15);
    input(g, "x", 1, d8);
    int c = graph_add_tensor(g, "e");
    graph_shape s = { .rank = 0 };
    float f = (float)e;
    int64_t i = (int64_t)e;
    graph_set_constant(g, c, t, &s, t == GDT_F32 ? (const void *)&f : (const void *)&i);
    node(g, GRAPH_OP_POW, "x,e", "z");
    finish(g, "z");
    float *in[1] = { (float *)bases };
    decompose_stats st;
    decompose_and_compare(g, in, &st);
    CU_ASSERT_EQUAL(st.pows_by_multiplying, multiplied);
    CU_ASSERT_EQUAL(st.pows_by_exp_log, !multiplied);
    CU_ASSERT_EQUAL(count_op(g, GRAPH_OP_POW), 0);
    if (multiplied)
        CU_ASSERT_EQUAL(count_op(g, GRAPH_OP_EXP), 0);
    graph_free(g);
}

static void test_pow_constant(void)
{
    static const double by_multiplying[] = { 0, 3, -3, -2, 4, 5, 7, 8, -8 };
    for (size_t k = 0; k < sizeof by_multiplying / sizeof by_multiplying[0]; k++)
        pow_constant_case(by_multiplying[k], GDT_F32, true);
    pow_constant_case(3, GDT_I64, true);
    static const double by_exp_log[] = { 9, -11, 2.5, -1.5, 0.25 };
    for (size_t k = 0; k < sizeof by_exp_log / sizeof by_exp_log[0]; k++)
        pow_constant_case(by_exp_log[k], GDT_F32, false);
    pow_constant_case(9, GDT_I64, false);
}

/* An i64 exponent vector: converted to an f32 constant, then exp/log. */
static void test_pow_integer_vector(void)
{
    static const int64_t e[] = { 0, 1, 2, 3, -1, -2, 9, 10 };
    graph *g = graph_new("pow", 15);
    input(g, "x", 1, d8);
    int c = graph_add_tensor(g, "e");
    graph_shape s = { .rank = 1, .dims = { 8 } };
    graph_set_constant(g, c, GDT_I64, &s, e);
    node(g, GRAPH_OP_POW, "x,e", "z");
    finish(g, "z");
    float *in[1] = { (float *)bases };
    decompose_stats st;
    decompose_and_compare(g, in, &st);
    CU_ASSERT_EQUAL(st.pows_by_exp_log, 1);
    CU_ASSERT_EQUAL(count_op(g, GRAPH_OP_POW), 0);
    graph_free(g);
}

/* Left for the lowering: its direct forms, and a run-time i32 exponent
 * (a Cast from i32 is not lowered). */
static void test_pow_kept(void)
{
    char err[512];
    decompose_stats st;
    graph *g = graph_new("pow", 15);
    input(g, "x", 1, d8);
    scalar(g, "half", 0.5f);
    node(g, GRAPH_OP_POW, "x,half", "z");
    finish(g, "z");
    CU_ASSERT_TRUE(decompose_graph(g, &st, err, sizeof err));
    CU_ASSERT_EQUAL(count_op(g, GRAPH_OP_POW), 1);
    graph_free(g);

    g = graph_new("pow", 15);
    input(g, "x", 1, d8);
    int y = input(g, "y", 1, d8);
    g->tensors[y].dtype = GDT_I32;
    node(g, GRAPH_OP_POW, "x,y", "z");
    finish(g, "z");
    CU_ASSERT_TRUE(decompose_graph(g, &st, err, sizeof err));
    CU_ASSERT_EQUAL(st.pows_by_exp_log + st.pows_by_multiplying, 0);
    CU_ASSERT_EQUAL(count_op(g, GRAPH_OP_POW), 1);
    CU_ASSERT_EQUAL(g->n_nodes, 1);
    graph_free(g);
}

void test_register(void)
{
    ADD_SUITE("decompose",
              { "BatchNormalization with run-time parameters", test_batchnorm_run_time },
              { "BatchNormalization with constant parameters folds", test_batchnorm_constant },
              { "BatchNormalization in training mode: the training rewrite", test_batchnorm_training_kept },
              { "Softmax over every axis, opsets 11 and 13", test_softmax_axes },
              { "LogSoftmax over every axis, opsets 11 and 13", test_log_softmax_axes },
              { "Clip with min, max, both or neither", test_clip },
              { "Max and Min of 1 to 4 inputs", test_max_min },
              { "Pow with a run-time exponent", test_pow_run_time },
              { "Pow with constant exponents", test_pow_constant },
              { "Pow with an i64 exponent vector", test_pow_integer_vector },
              { "Pow forms left to the lowering", test_pow_kept });
}
