/*
 * test_autodiff.c — every gradient rule against central finite
 * differences of the host evaluator, in f64: for a small graph
 * y = f(weights), the loss L = sum(y * R) with a fixed random R, the
 * gradient autodiff builds (evaluated) must match (L(w + h) - L(w - h)) / 2h
 * for each weight element.  With h = 1e-5 in f64 the difference's error is
 * O(h^2 |f'''|) + O(eps / h), about 1e-9 for these smooth functions of
 * unit-sized values; the bound used is 1e-6 relative to max(1, |grad|).
 * Kinks (Relu, Abs, Max) are kept 0.1 or more away from the inputs.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontends/autodiff.h"
#include "frontends/graph.h"
#include "frontends/graph_eval.h"
#include "test_util.h"

#define MAX_WEIGHTS 4

typedef struct fd_case {
    const char *name;
    /* builds y from the weights it adds (f64 constants); returns y */
    int (*build)(graph *g, int *w, int *n_w);
} fd_case;

static uint32_t seed_state;

static double drand(void)
{
    seed_state = seed_state * 1664525u + 1013904223u;
    return (double)((seed_state >> 8) & 0xffff) / 32768.0 - 1.0;
}

/* An f64 constant of this shape, uniform in [lo, hi), away from 0 by gap
 * (each value's sign random when gap > 0). */
static int weight(graph *g, const char *name, int rank, const int64_t *dims, double lo, double hi, double gap)
{
    graph_shape s = { .rank = rank };
    memcpy(s.dims, dims, (size_t)rank * sizeof *dims);
    int64_t n = graph_shape_numel(&s);
    double *v = malloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++) {
        double u = lo + (hi - lo) * (drand() + 1) / 2;
        if (gap > 0)
            u = (drand() < 0 ? -1 : 1) * (gap + fabs(u));
        v[i] = u;
    }
    int t = graph_add_constant(g, name, GDT_F64, &s, v);
    free(v);
    return t;
}

static int node(graph *g, graph_op op, const int *in, int n_in)
{
    char *name = graph_unique_name(g, graph_ops[op].name);
    int o = graph_add_tensor(g, name);
    free(name);
    graph_add_node(g, op, "", in, n_in, &o, 1);
    return o;
}

static int node2(graph *g, graph_op op, int a, int b)
{
    int in[2] = { a, b };
    return node(g, op, in, 2);
}

static graph_node *last(graph *g)
{
    return &g->nodes[g->n_nodes - 1];
}

static int ints(graph *g, const int64_t *v, int n)
{
    graph_shape s = { .rank = 1, .dims = { n } };
    return graph_add_constant(g, "shape", GDT_I64, &s, v);
}

/* ---- the forward graphs ------------------------------------------------------------------ */

#define D(...) ((const int64_t[]){ __VA_ARGS__ })

static int b_add_broadcast(graph *g, int *w, int *n)
{
    w[0] = weight(g, "a", 2, D(3, 4), -1, 1, 0);
    w[1] = weight(g, "b", 1, D(4), -1, 1, 0);
    w[2] = weight(g, "c", 2, D(3, 1), -1, 1, 0);
    *n = 3;
    return node2(g, GRAPH_OP_SUB, node2(g, GRAPH_OP_ADD, w[0], w[1]), w[2]);
}

static int b_mul_div(graph *g, int *w, int *n)
{
    w[0] = weight(g, "a", 2, D(2, 3), -1, 1, 0);
    w[1] = weight(g, "b", 2, D(1, 3), 0.5, 1.5, 0.5);
    w[2] = weight(g, "c", 2, D(2, 3), 0.5, 1, 0.5);
    *n = 3;
    return node2(g, GRAPH_OP_DIV, node2(g, GRAPH_OP_MUL, w[0], w[1]), w[2]);
}

static int b_unary(graph *g, int *w, int *n, graph_op op, double lo, double hi, double gap)
{
    w[0] = weight(g, "x", 2, D(2, 5), lo, hi, gap);
    *n = 1;
    return node(g, op, w, 1);
}

static int b_relu(graph *g, int *w, int *n) { return b_unary(g, w, n, GRAPH_OP_RELU, 0, 1, 0.1); }
static int b_abs(graph *g, int *w, int *n) { return b_unary(g, w, n, GRAPH_OP_ABS, 0, 1, 0.1); }
static int b_neg(graph *g, int *w, int *n) { return b_unary(g, w, n, GRAPH_OP_NEG, -1, 1, 0); }
static int b_sigmoid(graph *g, int *w, int *n) { return b_unary(g, w, n, GRAPH_OP_SIGMOID, -2, 2, 0); }
static int b_tanh(graph *g, int *w, int *n) { return b_unary(g, w, n, GRAPH_OP_TANH, -2, 2, 0); }
static int b_exp(graph *g, int *w, int *n) { return b_unary(g, w, n, GRAPH_OP_EXP, -1, 1, 0); }
static int b_log(graph *g, int *w, int *n) { return b_unary(g, w, n, GRAPH_OP_LOG, 0.2, 2, 0); }
static int b_sqrt(graph *g, int *w, int *n) { return b_unary(g, w, n, GRAPH_OP_SQRT, 0.2, 2, 0); }
static int b_reciprocal(graph *g, int *w, int *n) { return b_unary(g, w, n, GRAPH_OP_RECIPROCAL, 0.5, 2, 0); }
static int b_erf(graph *g, int *w, int *n) { return b_unary(g, w, n, GRAPH_OP_ERF, -2, 2, 0); }
static int b_gelu(graph *g, int *w, int *n) { return b_unary(g, w, n, GRAPH_OP_GELU, -3, 3, 0); }

static int b_gelu_tanh(graph *g, int *w, int *n)
{
    int y = b_unary(g, w, n, GRAPH_OP_GELU, -3, 3, 0);
    graph_set_attr_string(last(g), "approximate", "tanh");
    return y;
}

static int b_pow(graph *g, int *w, int *n)
{
    w[0] = weight(g, "x", 2, D(2, 3), 0.3, 1.5, 0);
    *n = 1;
    double three = 3, two = 2;
    graph_shape s = { 0 };
    int p3 = graph_add_constant(g, "p3", GDT_F64, &s, &three), p2 = graph_add_constant(g, "p2", GDT_F64, &s, &two);
    return node2(g, GRAPH_OP_ADD, node2(g, GRAPH_OP_POW, w[0], p3), node2(g, GRAPH_OP_POW, w[0], p2));
}

static int b_where_max_min(graph *g, int *w, int *n)
{
    w[0] = weight(g, "a", 2, D(2, 4), 0, 1, 0);
    w[1] = weight(g, "b", 2, D(2, 4), 0, 1, 0);
    /* keep a and b apart so the choice does not flip under h */
    double *a = g->tensors[w[0]].data, *b = g->tensors[w[1]].data;
    for (int i = 0; i < 8; i++)
        b[i] = a[i] + (i % 2 ? 0.3 : -0.3);
    *n = 2;
    double zero = 0;
    graph_shape s = { 0 };
    int z = graph_add_constant(g, "zero", GDT_F64, &s, &zero);
    int in[3] = { node2(g, GRAPH_OP_GREATER, w[0], z), node2(g, GRAPH_OP_MAX, w[0], w[1]),
                  node2(g, GRAPH_OP_MIN, w[0], w[1]) };
    return node(g, GRAPH_OP_WHERE, in, 3);
}

static int b_matmul_2d(graph *g, int *w, int *n)
{
    w[0] = weight(g, "a", 2, D(3, 4), -1, 1, 0);
    w[1] = weight(g, "b", 2, D(4, 5), -1, 1, 0);
    *n = 2;
    return node2(g, GRAPH_OP_MATMUL, w[0], w[1]);
}

static int b_matmul_batched_weight(graph *g, int *w, int *n)
{
    w[0] = weight(g, "a", 3, D(2, 3, 4), -1, 1, 0);
    w[1] = weight(g, "b", 2, D(4, 2), -1, 1, 0);
    *n = 2;
    return node2(g, GRAPH_OP_MATMUL, w[0], w[1]);
}

static int b_matmul_batched_broadcast(graph *g, int *w, int *n)
{
    w[0] = weight(g, "a", 4, D(2, 1, 3, 4), -1, 1, 0);
    w[1] = weight(g, "b", 3, D(3, 4, 2), -1, 1, 0);
    w[2] = weight(g, "v", 1, D(2), -1, 1, 0);
    *n = 3;
    return node2(g, GRAPH_OP_MATMUL, node2(g, GRAPH_OP_MATMUL, w[0], w[1]), w[2]);
}

static int b_gemm(graph *g, int *w, int *n)
{
    w[0] = weight(g, "a", 2, D(4, 3), -1, 1, 0);
    w[1] = weight(g, "b", 2, D(5, 4), -1, 1, 0);
    w[2] = weight(g, "c", 1, D(5), -1, 1, 0);
    *n = 3;
    int y = node(g, GRAPH_OP_GEMM, w, 3);
    graph_set_attr_int(last(g), "transA", 1);
    graph_set_attr_int(last(g), "transB", 1);
    graph_set_attr_float(last(g), "alpha", 0.75);
    graph_set_attr_float(last(g), "beta", 1.5);
    return y;
}

static int b_gemm_plain(graph *g, int *w, int *n)
{
    w[0] = weight(g, "a", 2, D(3, 4), -1, 1, 0);
    w[1] = weight(g, "b", 2, D(4, 2), -1, 1, 0);
    w[2] = weight(g, "c", 2, D(3, 2), -1, 1, 0);
    *n = 3;
    return node(g, GRAPH_OP_GEMM, w, 3);
}

static int b_softmax(graph *g, int *w, int *n)
{
    w[0] = weight(g, "x", 3, D(2, 3, 4), -2, 2, 0);
    *n = 1;
    int s = node(g, GRAPH_OP_SOFTMAX, w, 1);
    graph_set_attr_int(last(g), "axis", 1);
    int l = node(g, GRAPH_OP_LOGSOFTMAX, &s, 1);
    graph_set_attr_int(last(g), "axis", -1);
    return l;
}

static int b_layernorm(graph *g, int *w, int *n)
{
    w[0] = weight(g, "x", 2, D(3, 6), -2, 2, 0);
    w[1] = weight(g, "scale", 1, D(6), 0.5, 1.5, 0);
    w[2] = weight(g, "bias", 1, D(6), -1, 1, 0);
    *n = 3;
    int y = node(g, GRAPH_OP_LAYERNORM, w, 3);
    graph_set_attr_float(last(g), "epsilon", 1e-3);
    return y;
}

static int b_batchnorm(graph *g, int *w, int *n, int training)
{
    w[0] = weight(g, "x", 4, D(2, 3, 2, 2), -2, 2, 0);
    w[1] = weight(g, "scale", 1, D(3), 0.5, 1.5, 0);
    w[2] = weight(g, "bias", 1, D(3), -1, 1, 0);
    *n = 3;
    int mean = weight(g, "mean", 1, D(3), -0.5, 0.5, 0), var = weight(g, "var", 1, D(3), 0.5, 1.5, 0);
    int in[5] = { w[0], w[1], w[2], mean, var };
    int y = node(g, GRAPH_OP_BATCHNORM, in, 5);
    graph_set_attr_int(last(g), "training_mode", training);
    graph_set_attr_float(last(g), "epsilon", 1e-3);
    return y;
}

static int b_batchnorm_training(graph *g, int *w, int *n) { return b_batchnorm(g, w, n, 1); }
static int b_batchnorm_inference(graph *g, int *w, int *n) { return b_batchnorm(g, w, n, 0); }

static int b_reduce_pool(graph *g, int *w, int *n)
{
    w[0] = weight(g, "x", 4, D(2, 3, 2, 3), -1, 1, 0);
    *n = 1;
    int p = node(g, GRAPH_OP_GLOBALAVERAGEPOOL, w, 1);
    int m = node(g, GRAPH_OP_REDUCEMEAN, w, 1);
    graph_set_attr_ints(last(g), "axes", D(1, 3), 2);
    int in[2] = { w[0], ints(g, D(0, 2), 2) };
    int s = node(g, GRAPH_OP_REDUCESUM, in, 2);
    graph_set_attr_int(last(g), "keepdims", 0);
    /* [2,3,1,1] + [2,1,2,1] -> [2,3,2,1], times the sum of s [3,3] */
    int a = node2(g, GRAPH_OP_ADD, p, m);
    return node2(g, GRAPH_OP_MUL, a, node(g, GRAPH_OP_REDUCESUM, &s, 1));
}

static int b_shapes(graph *g, int *w, int *n)
{
    w[0] = weight(g, "x", 3, D(2, 3, 4), -1, 1, 0);
    w[1] = weight(g, "y", 2, D(1, 4), -1, 1, 0);
    *n = 2;
    int t = node(g, GRAPH_OP_TRANSPOSE, w, 1);
    graph_set_attr_ints(last(g), "perm", D(2, 0, 1), 3);
    int in[2] = { t, ints(g, D(8, 3), 2) };
    int r = node(g, GRAPH_OP_RESHAPE, in, 2);
    int ine[2] = { w[1], ints(g, D(3, 4), 2) };
    int e = node(g, GRAPH_OP_EXPAND, ine, 2);
    int et = node(g, GRAPH_OP_TRANSPOSE, &e, 1);
    int cat[2] = { r, et };
    int c = node(g, GRAPH_OP_CONCAT, cat, 2);
    graph_set_attr_int(last(g), "axis", 0);
    int f = node(g, GRAPH_OP_FLATTEN, &c, 1);
    return node(g, GRAPH_OP_TANH, &f, 1);
}

static int b_conv(graph *g, int *w, int *n, int64_t k, int64_t stride, int64_t pad, bool bias)
{
    w[0] = weight(g, "x", 4, D(2, 3, 5, 5), -1, 1, 0);
    w[1] = weight(g, "w", 4, ((const int64_t[]){ 4, 3, k, k }), -1, 1, 0);
    w[2] = weight(g, "b", 1, D(4), -1, 1, 0);
    *n = bias ? 3 : 2;
    int y = node(g, GRAPH_OP_CONV, w, *n);
    graph_set_attr_ints(last(g), "strides", ((const int64_t[]){ stride, stride }), 2);
    graph_set_attr_ints(last(g), "pads", ((const int64_t[]){ pad, pad, pad, pad }), 4);
    return node(g, GRAPH_OP_TANH, &y, 1);
}

static int b_conv3s1(graph *g, int *w, int *n) { return b_conv(g, w, n, 3, 1, 1, true); }
static int b_conv3s2(graph *g, int *w, int *n) { return b_conv(g, w, n, 3, 2, 1, false); }
static int b_conv1s2(graph *g, int *w, int *n) { return b_conv(g, w, n, 1, 2, 0, true); }

/* MaxPool 3x3 stride 2 pad 1 (the values distinct, so no window has a
 * tie a step of h could flip). */
static int b_maxpool(graph *g, int *w, int *n)
{
    w[0] = weight(g, "x", 4, D(1, 2, 5, 5), -1, 1, 0);
    double *x = g->tensors[w[0]].data;
    for (int i = 0; i < 50; i++)
        x[i] = 0.02 * (double)((i * 37) % 50) - 0.5;
    *n = 1;
    int y = node(g, GRAPH_OP_MAXPOOL, w, 1);
    graph_set_attr_ints(last(g), "kernel_shape", D(3, 3), 2);
    graph_set_attr_ints(last(g), "strides", D(2, 2), 2);
    graph_set_attr_ints(last(g), "pads", D(1, 1, 1, 1), 4);
    return node(g, GRAPH_OP_TANH, &y, 1);
}

/* Gather of rows with a repeated index: the row's gradients add up. */
static int b_gather(graph *g, int *w, int *n)
{
    w[0] = weight(g, "table", 2, D(5, 3), -1, 1, 0);
    *n = 1;
    int32_t ix[4] = { 3, 0, 3, 4 };
    graph_shape s = { .rank = 1, .dims = { 4 } };
    int idx = graph_add_constant(g, "ids", GDT_I32, &s, ix);
    return node2(g, GRAPH_OP_GATHER, w[0], idx);
}

/* SoftmaxCrossEntropyLoss / NegativeLogLikelihoodLoss over [3, 4, 2]
 * scores: labels with a repeat, class weights, an ignored label; the
 * log_prob output used too. */
static int b_class_loss(graph *g, int *w, int *n, graph_op op, const char *reduction, bool weights, bool ignore)
{
    w[0] = weight(g, "x", 3, D(3, 4, 2), -1.5, 1.5, 0);
    *n = 1;
    int32_t lab[6] = { 1, 3, 0, 1, 2, 3 };
    graph_shape ls = { .rank = 2, .dims = { 3, 2 } };
    int in[3] = { w[0], graph_add_constant(g, "labels", GDT_I32, &ls, lab), -1 };
    if (weights)
        in[2] = weight(g, "cw", 1, D(4), 0.5, 1.5, 0);
    char *name = graph_unique_name(g, "loss_out");
    int outs[2] = { graph_add_tensor(g, name), -1 };
    free(name);
    if (op == GRAPH_OP_SOFTMAX_CROSS_ENTROPY_LOSS)
        outs[1] = graph_add_tensor(g, "log_prob");
    graph_add_node(g, op, "", in, weights ? 3 : 2, outs, op == GRAPH_OP_SOFTMAX_CROSS_ENTROPY_LOSS ? 2 : 1);
    graph_set_attr_string(last(g), "reduction", reduction);
    if (ignore)
        graph_set_attr_int(last(g), "ignore_index", 3);
    if (op != GRAPH_OP_SOFTMAX_CROSS_ENTROPY_LOSS)
        return outs[0];
    /* the loss plus a multiple of the log-probabilities, so both outputs carry a gradient */
    int lp = node(g, GRAPH_OP_REDUCESUM, &outs[1], 1);
    graph_set_attr_int(last(g), "keepdims", 0);
    double tenth = 0.1;
    graph_shape s0 = { 0 };
    int sc = graph_add_constant(g, "tenth", GDT_F64, &s0, &tenth);
    return node2(g, GRAPH_OP_ADD, outs[0], node2(g, GRAPH_OP_MUL, lp, sc));
}

static int b_sce_mean(graph *g, int *w, int *n)
{
    return b_class_loss(g, w, n, GRAPH_OP_SOFTMAX_CROSS_ENTROPY_LOSS, "mean", false, false);
}
static int b_sce_weighted_ignore(graph *g, int *w, int *n)
{
    return b_class_loss(g, w, n, GRAPH_OP_SOFTMAX_CROSS_ENTROPY_LOSS, "mean", true, true);
}
static int b_sce_none(graph *g, int *w, int *n)
{
    return b_class_loss(g, w, n, GRAPH_OP_SOFTMAX_CROSS_ENTROPY_LOSS, "none", true, false);
}
static int b_nll_sum(graph *g, int *w, int *n)
{
    return b_class_loss(g, w, n, GRAPH_OP_NLL_LOSS, "sum", false, true);
}

/* A weight read by several nodes: the contributions add up. */
static int b_fan_out_mlp(graph *g, int *w, int *n)
{
    w[0] = weight(g, "x", 2, D(4, 3), -1, 1, 0);
    w[1] = weight(g, "w1", 2, D(3, 3), -1, 1, 0);
    w[2] = weight(g, "b1", 1, D(3), -1, 1, 0);
    *n = 3;
    int h = node(g, GRAPH_OP_SIGMOID, (int[]){ node2(g, GRAPH_OP_ADD, node2(g, GRAPH_OP_MATMUL, w[0], w[1]), w[2]) }, 1);
    return node2(g, GRAPH_OP_MUL, node2(g, GRAPH_OP_MATMUL, h, w[1]), h);
}

static const fd_case cases[] = {
    { "Add, Sub with broadcasting", b_add_broadcast },
    { "Mul, Div with broadcasting", b_mul_div },
    { "Relu", b_relu }, { "Abs", b_abs }, { "Neg", b_neg }, { "Sigmoid", b_sigmoid }, { "Tanh", b_tanh },
    { "Exp", b_exp }, { "Log", b_log }, { "Sqrt", b_sqrt }, { "Reciprocal", b_reciprocal }, { "Erf", b_erf },
    { "Gelu", b_gelu }, { "Gelu approximate=tanh", b_gelu_tanh },
    { "Pow 2 and 3", b_pow },
    { "Where, Max, Min", b_where_max_min },
    { "MatMul 2-D", b_matmul_2d },
    { "MatMul batched by a weight", b_matmul_batched_weight },
    { "MatMul broadcast batches, vector", b_matmul_batched_broadcast },
    { "Gemm transA transB alpha beta", b_gemm },
    { "Gemm plain", b_gemm_plain },
    { "Softmax, LogSoftmax", b_softmax },
    { "LayerNormalization", b_layernorm },
    { "BatchNormalization training", b_batchnorm_training },
    { "BatchNormalization inference", b_batchnorm_inference },
    { "GlobalAveragePool, ReduceMean, ReduceSum", b_reduce_pool },
    { "Transpose, Reshape, Expand, Concat, Flatten", b_shapes },
    { "fan-out: a weight read twice", b_fan_out_mlp },
    { "Conv 3x3 stride 1 pad 1 with bias", b_conv3s1 },
    { "Conv 3x3 stride 2 pad 1", b_conv3s2 },
    { "Conv 1x1 stride 2 with bias", b_conv1s2 },
    { "MaxPool 3x3 stride 2 pad 1", b_maxpool },
    { "Gather with a repeated index", b_gather },
    { "SoftmaxCrossEntropyLoss mean, with log_prob", b_sce_mean },
    { "SoftmaxCrossEntropyLoss mean, class weights, ignore_index", b_sce_weighted_ignore },
    { "SoftmaxCrossEntropyLoss none, class weights", b_sce_none },
    { "NegativeLogLikelihoodLoss sum, ignore_index", b_nll_sum },
};

/* The case's graph with L = sum(y * R) as its output; weights in w. */
static graph *build_case(const fd_case *fc, int *w, int *n_w, int *loss)
{
    seed_state = 12345;
    graph *g = graph_new("fd", 17);
    int y = fc->build(g, w, n_w);
    char err[600];
    bool ok = graph_sort(g, err, sizeof err);
    for (int k = 0; ok && k < g->n_nodes; k++)
        ok = graph_infer_node(g, &g->nodes[k], err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n%s: %s\n", fc->name, err);
    CU_ASSERT_TRUE_FATAL(ok);
    int r = weight(g, "R", g->tensors[y].shape.rank, g->tensors[y].shape.dims, -1, 1, 0);
    int prod = node2(g, GRAPH_OP_MUL, y, r);
    *loss = node(g, GRAPH_OP_REDUCESUM, &prod, 1);
    graph_set_attr_int(last(g), "keepdims", 0);
    graph_add_output(g, *loss);
    char names[MAX_WEIGHTS][64];
    for (int i = 0; i < *n_w; i++)
        snprintf(names[i], sizeof names[i], "%s", g->tensors[w[i]].name);
    ok = graph_sort(g, err, sizeof err) && graph_infer_all(g, false, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n%s: %s\n", fc->name, err);
    CU_ASSERT_TRUE_FATAL(ok);
    /* pruning renumbers: the loss and the weights found again */
    *loss = g->outputs[0];
    for (int i = 0; i < *n_w; i++)
        w[i] = graph_find_tensor(g, names[i]);
    return g;
}

static double eval_loss(const graph *g)
{
    graph_value out;
    char err[600];
    bool ok = graph_eval(g, NULL, &out, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n%s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    double v = ((double *)out.data)[0];
    graph_value_free(&out);
    return v;
}

static void check_case(const fd_case *fc)
{
    int w[MAX_WEIGHTS], n_w, loss, grads[MAX_WEIGHTS];
    graph *g = build_case(fc, w, &n_w, &loss);
    char err[600];
    bool ok = autodiff_gradients(g, loss, 1.0, w, n_w, grads, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n%s: %s\n", fc->name, err);
    CU_ASSERT_TRUE_FATAL(ok);
    for (int i = 0; i < n_w; i++) {
        if (grads[i] < 0)
            fprintf(stderr, "\n%s: no gradient for weight %d\n", fc->name, i);
        CU_ASSERT_TRUE_FATAL(grads[i] >= 0);
        graph_add_output(g, grads[i]);
    }
    graph_value out[1 + MAX_WEIGHTS];
    ok = graph_eval(g, NULL, out, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n%s: %s\n", fc->name, err);
    CU_ASSERT_TRUE_FATAL(ok);
    int checked = 0, bad = 0;
    for (int i = 0; i < n_w; i++) {
        int64_t count = graph_shape_numel(&out[1 + i].shape);
        for (int64_t j = 0; j < count; j++) {
            int wf[MAX_WEIGHTS], nf, lf;
            const double h = 1e-5;
            double f[2];
            for (int s = 0; s < 2; s++) {
                graph *p = build_case(fc, wf, &nf, &lf);
                ((double *)p->tensors[wf[i]].data)[j] += s ? -h : h;
                f[s] = eval_loss(p);
                graph_free(p);
            }
            double fd = (f[0] - f[1]) / (2 * h), ad = ((double *)out[1 + i].data)[j];
            double tol = 1e-6 * fmax(1, fabs(fd));
            if (fabs(fd - ad) > tol && bad++ < 3)
                fprintf(stderr, "\n%s: weight %d element %lld: autodiff %.9g, finite difference %.9g\n", fc->name, i,
                        (long long)j, ad, fd);
            checked++;
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_TRUE(checked > 0);
    for (int i = 0; i <= n_w; i++)
        graph_value_free(&out[i]);
    graph_free(g);
}

static void test_rules_match_finite_differences(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(&cases[i]);
}

/* An op without a rule is named when the loss depends on a weight through it. */
static void test_missing_rule_is_named(void)
{
    graph *g = graph_new("m.onnx", 17);
    int w = weight(g, "w", 2, D(2, 2), -1, 1, 0);
    int y = node(g, GRAPH_OP_REDUCEPROD, &w, 1);
    graph_set_attr_int(last(g), "keepdims", 0);
    char err[600];
    graph_add_output(g, y);
    CU_ASSERT_TRUE_FATAL(graph_sort(g, err, sizeof err) && graph_infer_all(g, false, err, sizeof err));
    int grad;
    CU_ASSERT_FALSE(autodiff_gradients(g, y, 1.0, &w, 1, &grad, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "m.onnx: node #0 (ReduceProd): gradient: ipusim has no gradient rule for ReduceProd "
                                "(the loss depends on a weight through it)");
    graph_free(g);
}

void test_register(void)
{
    ADD_SUITE("autodiff",
              { "every rule against central finite differences (f64)", test_rules_match_finite_differences },
              { "an op without a rule is named", test_missing_rule_is_named });
}
