/*
 * test_ops_train.c — the ops a training graph adds (frontends/ops_train.c):
 * SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss (every reduction,
 * ignore_index, class weights, i32 and i64 labels), the Momentum (standard
 * and Nesterov), Adam and Adagrad steps, evaluated against values worked
 * out by hand; then each rewritten (decompose_train.c), with
 * BatchNormalization in training mode, compiled for a GC200 and simulated,
 * against the evaluator's values of the original graph.  Also the steps
 * left as they are (a run-time update count the step depends on).
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontends/decompose.h"
#include "frontends/graph_eval.h"
#include "frontends/simulate.h"
#include "graph_fixture.h"
#include "test_util.h"

#define MAX_IO 8

/* The graph's outputs fed in[i] for input i: from the evaluator, or
 * compiled and simulated on a GC200. */
static void run(const graph *g, const graph_value *in, graph_value *out, bool simulated)
{
    char err[1024];
    bool ok;
    CU_ASSERT_FATAL(g->n_inputs <= MAX_IO && g->n_outputs <= MAX_IO);
    if (simulated) {
        lower_options lo = { .machine = gc200() };
        simulate_result r;
        ok = simulate_graph(g, &lo, in, out, &r, err, sizeof err);
    } else {
        ok = graph_eval(g, in, out, err, sizeof err);
    }
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
}

/* got's f32 values equal want within atol + rtol |want|. */
static void expect_close(const graph_value *got, const double *want, size_t n, double atol, double rtol,
                         const char *what)
{
    CU_ASSERT_FATAL(got->dtype == GDT_F32 && (size_t)graph_shape_numel(&got->shape) == n);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        double g = ((const float *)got->data)[i];
        if (!(fabs(g - want[i]) <= atol + rtol * fabs(want[i])) && !bad++)
            fprintf(stderr, "\n  %s: element %zu is %.9g, expected %.9g\n", what, i, g, want[i]);
    }
    CU_ASSERT_EQUAL(bad, 0);
}

/* An input of dtype t. */
static int typed_input(graph *g, const char *name, graph_dtype t, int rank, const int64_t *dims)
{
    int x = input(g, name, rank, dims);
    g->tensors[x].dtype = t;
    return x;
}

/* A loss node reading the named tensors, writing "loss" (and "log_prob"
 * as its second output when asked). */
static graph_node *loss_node(graph *g, graph_op op, const char *ins, bool log_prob)
{
    graph_node *n = node(g, op, ins, "loss");
    if (log_prob) {
        int lp = graph_add_tensor(g, "log_prob");
        int k = (int)(n - g->nodes);
        g->nodes[k].n_outputs = 2;
        g->nodes[k].outputs = realloc(g->nodes[k].outputs, 2 * sizeof(int));
        g->nodes[k].outputs[1] = lp;
        g->tensors[lp].producer = k;
        n = &g->nodes[k];
    }
    return n;
}

static void finish_outputs(graph *g, const char *const *outs, int n)
{
    char err[512];
    for (int i = 0; i < n; i++)
        graph_add_output(g, graph_find_tensor(g, outs[i]));
    CU_ASSERT_TRUE_FATAL(graph_sort(g, err, sizeof err));
    bool ok = graph_infer_all(g, false, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
}

/* ---- the evaluator against values worked out by hand ------------------------------------------ */

/* Scores [2, 3]: row 0 all 0 (softmax 1/3 each), row 1 (0, ln 3, 0)
 * (softmax 1/5, 3/5, 1/5). */
static const float sce_scores[6] = { 0, 0, 0, 0, 1.0986122886681098f, 0 };

/* SoftmaxCrossEntropyLoss of sce_scores with labels, optional weights
 * (1, 2, 3), reduction and ignore_index (ii < -100: none); its outputs. */
static void sce_eval(const int64_t *labels, bool weights, const char *reduction, int64_t ii, graph_value *out)
{
    static const int64_t d23[] = { 2, 3 }, d2[] = { 2 }, d3[] = { 3 };
    static const float w[3] = { 1, 2, 3 };
    graph *g = graph_new("sce", 13);
    input(g, "x", 2, d23);
    typed_input(g, "labels", GDT_I64, 1, d2);
    if (weights)
        cnst(g, "w", 1, d3, w);
    graph_node *n = loss_node(g, GRAPH_OP_SOFTMAX_CROSS_ENTROPY_LOSS, weights ? "x,labels,w" : "x,labels", true);
    graph_set_attr_string(n, "reduction", reduction);
    if (ii > -100)
        graph_set_attr_int(n, "ignore_index", ii);
    finish_outputs(g, (const char *[]){ "loss", "log_prob" }, 2);
    graph_value in[2] = {
        { GDT_F32, g->tensors[g->inputs[0]].shape, (void *)sce_scores },
        { GDT_I64, g->tensors[g->inputs[1]].shape, (void *)labels },
    };
    run(g, in, out, false);
    graph_free(g);
}

static void test_sce_eval(void)
{
    double l3 = log(3), l5 = log(5);
    const double lp[6] = { -l3, -l3, -l3, -l5, l3 - l5, -l5 };
    graph_value out[2];
    const int64_t ones[2] = { 1, 1 }, mixed[2] = { 1, 0 };

    sce_eval(ones, false, "none", -1000, out);
    expect_close(&out[0], (double[]){ l3, l5 - l3 }, 2, 0, 1e-7, "none");
    expect_close(&out[1], lp, 6, 0, 1e-7, "log_prob");
    graph_value_free(&out[0]), graph_value_free(&out[1]);

    sce_eval(ones, false, "sum", -1000, out);
    expect_close(&out[0], (double[]){ l5 }, 1, 0, 1e-7, "sum");
    graph_value_free(&out[0]), graph_value_free(&out[1]);

    sce_eval(ones, false, "mean", -1000, out);
    expect_close(&out[0], (double[]){ l5 / 2 }, 1, 0, 1e-7, "mean");
    graph_value_free(&out[0]), graph_value_free(&out[1]);

    /* weights (1, 2, 3): both labels weigh 2; mean divides by 4 */
    sce_eval(ones, true, "none", -1000, out);
    expect_close(&out[0], (double[]){ 2 * l3, 2 * (l5 - l3) }, 2, 0, 1e-7, "weighted none");
    graph_value_free(&out[0]), graph_value_free(&out[1]);
    sce_eval(ones, true, "mean", -1000, out);
    expect_close(&out[0], (double[]){ 2 * l5 / 4 }, 1, 0, 1e-7, "weighted mean");
    graph_value_free(&out[0]), graph_value_free(&out[1]);

    /* ignore_index 0: row 1 (label 0) weighs nothing and leaves the mean */
    sce_eval(mixed, false, "none", 0, out);
    expect_close(&out[0], (double[]){ l3, 0 }, 2, 0, 1e-7, "ignored none");
    graph_value_free(&out[0]), graph_value_free(&out[1]);
    sce_eval(mixed, false, "mean", 0, out);
    expect_close(&out[0], (double[]){ l3 }, 1, 0, 1e-7, "ignored mean");
    graph_value_free(&out[0]), graph_value_free(&out[1]);
    sce_eval(mixed, true, "mean", 0, out);
    expect_close(&out[0], (double[]){ 2 * l3 / 2 }, 1, 0, 1e-7, "ignored weighted mean");
    graph_value_free(&out[0]), graph_value_free(&out[1]);
    /* a negative ignore_index */
    const int64_t neg[2] = { -7, 2 };
    sce_eval(neg, true, "sum", -7, out);
    expect_close(&out[0], (double[]){ 3 * l5 }, 1, 0, 1e-7, "negative ignore_index");
    graph_value_free(&out[0]), graph_value_free(&out[1]);
}

/* NegativeLogLikelihoodLoss of [N=2, C=3, d=2] log-probabilities with i32
 * labels: loss[n, d] = -w[label] * x[n, label, d]. */
static void test_nll_eval(void)
{
    static const int64_t d232[] = { 2, 3, 2 }, d22[] = { 2, 2 }, d3[] = { 3 };
    static const float x[12] = { -1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12 };
    static const float w[3] = { 0.5f, 2, 4 };
    static const int32_t labels[4] = { 0, 2, 1, 2 };
    /* picked x[n, label, d]: (0,0,0) -1, (0,2,1) -6, (1,1,0) -9, (1,2,1) -12 */
    const struct {
        bool weights;
        const char *reduction;
        int64_t ii;
        size_t n;
        double want[4];
    } cases[] = {
        { false, "none", -1000, 4, { 1, 6, 9, 12 } },
        { false, "sum", -1000, 1, { 28 } },
        { false, "mean", -1000, 1, { 7 } },
        { true, "none", -1000, 4, { 0.5, 24, 18, 48 } },
        { true, "mean", -1000, 1, { 90.5 / 10.5 } },
        { true, "sum", 2, 1, { 18.5 } },
        { false, "mean", 2, 1, { 5 } },
        { true, "mean", 2, 1, { 18.5 / 2.5 } },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        graph *g = graph_new("nll", 13);
        input(g, "x", 3, d232);
        typed_input(g, "labels", GDT_I32, 2, d22);
        if (cases[c].weights)
            cnst(g, "w", 1, d3, w);
        graph_node *n = loss_node(g, GRAPH_OP_NLL_LOSS, cases[c].weights ? "x,labels,w" : "x,labels", false);
        graph_set_attr_string(n, "reduction", cases[c].reduction);
        if (cases[c].ii > -100)
            graph_set_attr_int(n, "ignore_index", cases[c].ii);
        finish(g, "loss");
        graph_value in[2] = { { GDT_F32, g->tensors[g->inputs[0]].shape, (void *)x },
                              { GDT_I32, g->tensors[g->inputs[1]].shape, (void *)labels } }, out;
        run(g, in, &out, false);
        expect_close(&out, cases[c].want, cases[c].n, 0, 1e-7, cases[c].reduction);
        graph_value_free(&out);
        graph_free(g);
    }
}

/* A label outside [0, C) that is not ignore_index is an error. */
static void test_loss_bad_label(void)
{
    static const int64_t d23[] = { 2, 3 }, d2[] = { 2 };
    const int64_t labels[2] = { 0, 3 };
    graph *g = graph_new("nll", 13);
    input(g, "x", 2, d23);
    typed_input(g, "labels", GDT_I64, 1, d2);
    loss_node(g, GRAPH_OP_NLL_LOSS, "x,labels", false);
    finish(g, "loss");
    graph_value in[2] = { { GDT_F32, g->tensors[g->inputs[0]].shape, (void *)sce_scores },
                          { GDT_I64, g->tensors[g->inputs[1]].shape, (void *)labels } }, out;
    char err[512];
    CU_ASSERT_FALSE(graph_eval(g, in, &out, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "label 3 at element 1 of 'labels' is outside [0, 3)"));
    graph_free(g);

    /* constant labels: the rewrite leaves the node and says why */
    g = graph_new("nll", 13);
    input(g, "x", 2, d23);
    int l = graph_add_tensor(g, "labels");
    graph_shape s2 = { .rank = 1, .dims = { 2 } };
    graph_set_constant(g, l, GDT_I64, &s2, labels);
    loss_node(g, GRAPH_OP_NLL_LOSS, "x,labels", false);
    finish(g, "loss");
    decompose_stats st;
    CU_ASSERT_TRUE(decompose_graph(g, &st, err, sizeof err));
    CU_ASSERT_EQUAL(st.class_losses, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(st.left, "(NegativeLogLikelihoodLoss): label 3 at element 1 is outside [0, 3)"));
    graph_free(g);
}

/* One optimizer step on one tensor of one element: R, T, then x, g and
 * the states; attributes from attrs (name, value pairs, a NULL name ends
 * them; mode separately).  T is a constant when t_const. */
static graph *step_graph(graph_op op, int64_t t, bool t_const, const char *mode, const char *const *names,
                         const double *values)
{
    static const int64_t d1[] = { 1 };
    graph *g = graph_new("step", 15);
    input(g, "R", 0, NULL);
    int tt = graph_add_tensor(g, "T");
    graph_shape s0 = { .rank = 0 };
    if (t_const) {
        graph_set_constant(g, tt, GDT_I64, &s0, &t);
    } else {
        g->tensors[tt].dtype = GDT_I64;
        g->tensors[tt].shape_known = true;
        graph_add_input(g, tt);
    }
    int states = op == GRAPH_OP_ADAM ? 2 : 1;
    const char *tensors[] = { "X", "G", "V", "H" };
    char ins[64] = "R,T";
    for (int i = 0; i < 2 + states; i++) {
        input(g, tensors[i], 1, d1);
        strcat(ins, ",");
        strcat(ins, tensors[i]);
    }
    graph_node *n = node(g, op, ins, "X_new");
    int k = (int)(n - g->nodes);
    const char *outs[] = { "X_new", "S1_new", "S2_new" };
    g->nodes[k].n_outputs = 1 + states;
    g->nodes[k].outputs = realloc(g->nodes[k].outputs, (size_t)(1 + states) * sizeof(int));
    for (int i = 1; i <= states; i++) {
        g->nodes[k].outputs[i] = graph_add_tensor(g, outs[i]);
        g->tensors[g->nodes[k].outputs[i]].producer = k;
    }
    for (int i = 0; names[i]; i++)
        graph_set_attr_float(&g->nodes[k], names[i], values[i]);
    if (mode)
        graph_set_attr_string(&g->nodes[k], "mode", mode);
    finish_outputs(g, outs, 1 + states);
    return g;
}

/* The step's outputs for R, T, x, g and states (values in that order;
 * T's is only read when the graph takes it). */
static void step_run(graph *g, const float *v, int64_t t, graph_value *out, bool simulated)
{
    graph_value in[MAX_IO];
    int f = 0;
    for (int i = 0; i < g->n_inputs; i++) {
        const graph_tensor *x = &g->tensors[g->inputs[i]];
        if (x->dtype == GDT_I64)
            in[i] = (graph_value){ GDT_I64, x->shape, &t };
        else
            in[i] = (graph_value){ GDT_F32, x->shape, (void *)&v[f++] };
    }
    run(g, in, out, simulated);
}

static void step_expect(graph_op op, int64_t t, const char *mode, const char *const *names, const double *values,
                        const float *v, const double *want)
{
    graph *g = step_graph(op, t, true, mode, names, values);
    graph_value out[3];
    int n = g->n_outputs;
    step_run(g, v, t, out, false);
    for (int i = 0; i < n; i++) {
        expect_close(&out[i], &want[i], 1, 0, 1e-7, graph_ops[op].name);
        graph_value_free(&out[i]);
    }
    graph_free(g);
}

static void test_optimizer_eval(void)
{
    const char *momentum[] = { "alpha", "beta", "norm_coefficient", NULL };
    /* R 0.1, x 1, g -1, v 2; alpha 0.9, beta 0.5 */
    const float mv[] = { 0.1f, 1, -1, 2 };
    /* T = 1: v = 1.8 - 0.5 = 1.3, x = 1 - 0.13 */
    step_expect(GRAPH_OP_MOMENTUM, 1, "standard", momentum, (double[]){ 0.9, 0.5, 0 }, mv,
                (double[]){ 1 - 0.1 * 1.3, 1.3 });
    /* T = 0: beta taken as 1: v = 1.8 - 1 = 0.8 */
    step_expect(GRAPH_OP_MOMENTUM, 0, "standard", momentum, (double[]){ 0.9, 0.5, 0 }, mv,
                (double[]){ 1 - 0.1 * 0.8, 0.8 });
    /* Nesterov: x - R (g + alpha v_new) */
    step_expect(GRAPH_OP_MOMENTUM, 1, "nesterov", momentum, (double[]){ 0.9, 0.5, 0 }, mv,
                (double[]){ 1 - 0.1 * (-1 + 0.9 * 1.3), 1.3 });
    /* norm_coefficient 0.5: g = 0.5 x - 1 = -0.5; v = 1.8 - 0.25 */
    step_expect(GRAPH_OP_MOMENTUM, 1, "standard", momentum, (double[]){ 0.9, 0.5, 0.5 }, mv,
                (double[]){ 1 - 0.1 * 1.55, 1.55 });

    /* Adagrad: R 0.3, x 1, g 2, h 5, decay 0.5, T 2: r = 0.15, h = 9,
     * x = 1 - 0.15 * 2 / 3 */
    const char *adagrad[] = { "decay_factor", "epsilon", "norm_coefficient", NULL };
    step_expect(GRAPH_OP_ADAGRAD, 2, NULL, adagrad, (double[]){ 0.5, 0, 0 }, (const float[]){ 0.3f, 1, 2, 5 },
                (double[]){ 0.9, 9 });

    /* Adam: R 0.1, x 1, g -1, v 2, h 0.5; alpha 0.9, beta 0.99, eps 0 */
    const char *adam[] = { "alpha", "beta", "epsilon", "norm_coefficient", "norm_coefficient_post", NULL };
    const float av[] = { 0.1f, 1, -1, 2, 0.5f };
    double v = 0.9 * 2 - 0.1, h = 0.99 * 0.5 + 0.01;
    step_expect(GRAPH_OP_ADAM, 0, NULL, adam, (double[]){ 0.9, 0.99, 0, 0, 0 }, av,
                (double[]){ 1 - 0.1f * v / sqrt(h), v, h });
    /* T = 2: R sqrt(1 - 0.99^2) / (1 - 0.9^2); norm_coefficient_post 0.1 */
    double r2 = (double)0.1f * sqrt(1 - 0.99 * 0.99) / (1 - 0.81);
    step_expect(GRAPH_OP_ADAM, 2, NULL, adam, (double[]){ 0.9, 0.99, 0, 0, 0.1 }, av,
                (double[]){ 0.9 * (1 - r2 * v / sqrt(h)), v, h });
}

/* ---- rewritten, compiled and simulated against the evaluator ----------------------------------- */

/* Simulated against the evaluator of the graph before the rewrite: each
 * rewritten op rounds to f32 once (2^-24 relative), the tile's exp and
 * log are within a few ulps, and the sums add at most 60 terms (60 ulps of
 * the sum): 1e-4 relative with 1e-6 absolute (for results that cancel)
 * is far above that and far below a wrong element or weight. */
#define SIM_ATOL 1e-6
#define SIM_RTOL 1e-4

static void decompose_and_simulate(graph *g, const graph_value *in, decompose_stats *st)
{
    graph_value want[MAX_IO], got[MAX_IO];
    int n = g->n_outputs;
    run(g, in, want, false);
    char err[512];
    bool ok = decompose_graph(g, st, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    run(g, in, got, true);
    for (int i = 0; i < n; i++) {
        size_t count = (size_t)graph_shape_numel(&want[i].shape);
        double *w = malloc(count * sizeof *w + 1);
        for (size_t e = 0; e < count; e++)
            w[e] = ((const float *)want[i].data)[e];
        expect_close(&got[i], w, count, SIM_ATOL, SIM_RTOL, g->tensors[g->outputs[i]].name);
        free(w);
        graph_value_free(&want[i]);
        graph_value_free(&got[i]);
    }
}

static int count_op(const graph *g, graph_op op)
{
    int c = 0;
    for (int k = 0; k < g->n_nodes; k++)
        c += g->nodes[k].op == op;
    return c;
}

/* [N=3, C=4, d=5] scores, labels of dtype lt (ignore_index where a label
 * is 1 when ii), weights, every reduction. */
static void loss_simulated(graph_op op, graph_dtype lt, bool weights, const char *reduction, int64_t ii)
{
    static const int64_t d345[] = { 3, 4, 5 }, d35[] = { 3, 5 }, d4[] = { 4 };
    static const float w[4] = { 0.5f, 1, 2, 3 };
    graph *g = graph_new("loss", 13);
    input(g, "x", 3, d345);
    typed_input(g, "labels", lt, 2, d35);
    if (weights)
        cnst(g, "w", 1, d4, w);
    bool sce = op == GRAPH_OP_SOFTMAX_CROSS_ENTROPY_LOSS;
    graph_node *n = loss_node(g, op, weights ? "x,labels,w" : "x,labels", sce);
    graph_set_attr_string(n, "reduction", reduction);
    if (ii > -1000)
        graph_set_attr_int(n, "ignore_index", ii);
    finish_outputs(g, (const char *[]){ "loss", "log_prob" }, sce ? 2 : 1);
    float x[60];
    int64_t l64[15];
    int32_t l32[15];
    for (int i = 0; i < 60; i++)
        x[i] = rnd();
    for (int i = 0; i < 15; i++) {
        l64[i] = (i * 7) % 4;
        if (ii > -1000 && i % 4 == 1)
            l64[i] = ii;
        l32[i] = (int32_t)l64[i];
    }
    graph_value in[2] = { { GDT_F32, g->tensors[g->inputs[0]].shape, x },
                          { lt, g->tensors[g->inputs[1]].shape, lt == GDT_I64 ? (void *)l64 : (void *)l32 } };
    decompose_stats st;
    decompose_and_simulate(g, in, &st);
    CU_ASSERT_EQUAL(st.class_losses, 1);
    CU_ASSERT_EQUAL(count_op(g, op), 0);
    CU_ASSERT_EQUAL(count_op(g, GRAPH_OP_GATHER), lt == GDT_I64);
    graph_free(g);
}

static void test_loss_simulated(void)
{
    const char *reductions[] = { "none", "sum", "mean" };
    for (int r = 0; r < 3; r++) {
        loss_simulated(GRAPH_OP_SOFTMAX_CROSS_ENTROPY_LOSS, GDT_I64, false, reductions[r], -1000);
        loss_simulated(GRAPH_OP_SOFTMAX_CROSS_ENTROPY_LOSS, GDT_I64, true, reductions[r], -100);
        loss_simulated(GRAPH_OP_NLL_LOSS, GDT_I32, true, reductions[r], 2);
        loss_simulated(GRAPH_OP_NLL_LOSS, GDT_I64, false, reductions[r], 9);
    }
}

/* Each step with a constant T on [1] tensors, against the evaluator. */
static void step_simulated(graph_op op, int64_t t, const char *mode, const char *const *names, const double *values)
{
    graph *g = step_graph(op, t, true, mode, names, values);
    graph_value in[MAX_IO];
    float v[5] = { 0.05f, 1.5f, -0.75f, 0.25f, 0.5f };
    for (int i = 0; i < g->n_inputs; i++)
        in[i] = (graph_value){ GDT_F32, g->tensors[g->inputs[i]].shape, &v[i] };
    decompose_stats st;
    decompose_and_simulate(g, in, &st);
    CU_ASSERT_EQUAL(st.optimizers, 1);
    CU_ASSERT_EQUAL(count_op(g, op), 0);
    graph_free(g);
}

static void test_optimizer_simulated(void)
{
    const char *momentum[] = { "alpha", "beta", "norm_coefficient", NULL };
    const char *adagrad[] = { "decay_factor", "epsilon", "norm_coefficient", NULL };
    const char *adam[] = { "alpha", "beta", "epsilon", "norm_coefficient", "norm_coefficient_post", NULL };
    for (int64_t t = 0; t < 3; t += 2) {
        step_simulated(GRAPH_OP_MOMENTUM, t, "standard", momentum, (double[]){ 0.9, 0.5, 0.01 });
        step_simulated(GRAPH_OP_MOMENTUM, t, "nesterov", momentum, (double[]){ 0.9, 0.5, 0.01 });
        step_simulated(GRAPH_OP_ADAGRAD, t, NULL, adagrad, (double[]){ 0.1, 1e-6, 0.01 });
        step_simulated(GRAPH_OP_ADAM, t, NULL, adam, (double[]){ 0.9, 0.999, 1e-6, 0.01, 0.02 });
    }
}

/* A run-time T is left when the step depends on it (with the reason), and
 * rewritten when it does not (Adagrad without decay). */
static void test_optimizer_run_time_t(void)
{
    const char *adagrad[] = { "decay_factor", "epsilon", "norm_coefficient", NULL };
    graph *g = step_graph(GRAPH_OP_ADAGRAD, 0, false, NULL, adagrad, (double[]){ 0.1, 1e-6, 0 });
    decompose_stats st;
    char err[512];
    CU_ASSERT_TRUE(decompose_graph(g, &st, err, sizeof err));
    CU_ASSERT_EQUAL(st.optimizers, 0);
    CU_ASSERT_EQUAL(count_op(g, GRAPH_OP_ADAGRAD), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(st.left, "(Adagrad): the update count T is given at run time"));
    graph_free(g);

    g = step_graph(GRAPH_OP_ADAGRAD, 0, false, NULL, adagrad, (double[]){ 0, 1e-6, 0 });
    graph_value in[MAX_IO];
    float v[4] = { 0.05f, 1.5f, -0.75f, 0.25f };
    int64_t t = 7;
    for (int i = 0, f = 0; i < g->n_inputs; i++)
        in[i] = g->tensors[g->inputs[i]].dtype == GDT_I64
                    ? (graph_value){ GDT_I64, g->tensors[g->inputs[i]].shape, &t }
                    : (graph_value){ GDT_F32, g->tensors[g->inputs[i]].shape, &v[f++] };
    decompose_and_simulate(g, in, &st);
    CU_ASSERT_EQUAL(st.optimizers, 1);
    CU_ASSERT_EQUAL(st.left[0], 0);
    graph_free(g);
}

/* BatchNormalization in training mode on [2, 3, 4, 5] and [4, 3]: Y and
 * the running statistics. */
static void test_batchnorm_training_simulated(void)
{
    static const int64_t d2345[] = { 2, 3, 4, 5 }, d43[] = { 4, 3 }, d3[] = { 3 };
    const int64_t *shapes[] = { d2345, d43 };
    const int ranks[] = { 4, 2 };
    for (int s = 0; s < 2; s++) {
        graph *g = graph_new("bn", 15);
        input(g, "x", ranks[s], shapes[s]);
        const char *names[] = { "scale", "B", "mean", "var" };
        for (int i = 0; i < 4; i++)
            input(g, names[i], 1, d3);
        graph_node *n = node(g, GRAPH_OP_BATCHNORM, "x,scale,B,mean,var", "y");
        int k = (int)(n - g->nodes);
        g->nodes[k].n_outputs = 3;
        g->nodes[k].outputs = realloc(g->nodes[k].outputs, 3 * sizeof(int));
        g->nodes[k].outputs[1] = graph_add_tensor(g, "running_mean");
        g->nodes[k].outputs[2] = graph_add_tensor(g, "running_var");
        g->tensors[g->nodes[k].outputs[1]].producer = g->tensors[g->nodes[k].outputs[2]].producer = k;
        graph_set_attr_int(&g->nodes[k], "training_mode", 1);
        graph_set_attr_float(&g->nodes[k], "momentum", 0.8);
        finish_outputs(g, (const char *[]){ "y", "running_mean", "running_var" }, 3);
        float x[120], p[4][3];
        for (int i = 0; i < 120; i++)
            x[i] = rnd();
        for (int i = 0; i < 4; i++)
            for (int c = 0; c < 3; c++)
                p[i][c] = i == 3 ? fabsf(rnd()) : rnd();
        graph_value in[5] = { { GDT_F32, g->tensors[g->inputs[0]].shape, x } };
        for (int i = 0; i < 4; i++)
            in[i + 1] = (graph_value){ GDT_F32, g->tensors[g->inputs[i + 1]].shape, p[i] };
        decompose_stats st;
        decompose_and_simulate(g, in, &st);
        CU_ASSERT_EQUAL(st.batchnorms_training, 1);
        CU_ASSERT_EQUAL(count_op(g, GRAPH_OP_BATCHNORM), 0);
        graph_free(g);
    }
}

void test_register(void)
{
    ADD_SUITE("ops_train",
              { "SoftmaxCrossEntropyLoss evaluated: reductions, weights, ignore_index", test_sce_eval },
              { "NegativeLogLikelihoodLoss evaluated: reductions, weights, ignore_index", test_nll_eval },
              { "a label out of range is an error", test_loss_bad_label },
              { "Momentum, Nesterov, Adagrad and Adam steps evaluated", test_optimizer_eval },
              { "the losses rewritten and simulated", test_loss_simulated },
              { "the optimizer steps rewritten and simulated", test_optimizer_simulated },
              { "a run-time update count", test_optimizer_run_time_t },
              { "BatchNormalization in training mode rewritten and simulated", test_batchnorm_training_simulated });
}
