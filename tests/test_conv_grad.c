/*
 * test_conv_grad.c — the two gradients of a convolution: ConvTranspose
 * (the data gradient) and ConvWeightGrad (the weight gradient).
 *   - The evaluator against the definition: both are the transposes of
 *     the convolution's Jacobians, so for random X, W, dY in f64
 *     <dY, Conv(X, W)> = <ConvTranspose(dY, W), X> = <ConvWeightGrad(X, dY), W>,
 *     over strides, pads, dilations and groups; and exact values of a
 *     small case worked by hand.
 *   - Compiled for a GC200 and simulated against the evaluator on
 *     ResNet-50's convolutions scaled down (3x3 stride 1 and 2, 1x1
 *     stride 2, the 7x7 stride-2 stem), f16 and f32, with a bound derived
 *     from the AMP's arithmetic (tolerance()).
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontends/graph_eval.h"
#include "frontends/simulate.h"
#include "graph_fixture.h"
#include "isa/fp16.h"
#include "test_util.h"

/* A forward convolution: X [n, c, h, w], W [m, c / group, k, k]. */
typedef struct conv_case {
    int64_t n, c, h, w, m, k, stride, pad, dilation, group;
} conv_case;

static int64_t out_extent(const conv_case *cc, int64_t in)
{
    return (in + 2 * cc->pad - (cc->k - 1) * cc->dilation - 1) / cc->stride + 1;
}

static void set_window(graph_node *nd, const conv_case *cc)
{
    int64_t k[2] = { cc->k, cc->k }, s[2] = { cc->stride, cc->stride }, d[2] = { cc->dilation, cc->dilation };
    int64_t p[4] = { cc->pad, cc->pad, cc->pad, cc->pad };
    graph_set_attr_ints(nd, "kernel_shape", k, 2);
    graph_set_attr_ints(nd, "strides", s, 2);
    graph_set_attr_ints(nd, "dilations", d, 2);
    graph_set_attr_ints(nd, "pads", p, 4);
    graph_set_attr_int(nd, "group", cc->group);
}

static int typed_input(graph *g, const char *name, graph_dtype t, const int64_t *dims)
{
    int i = input(g, name, 4, dims);
    g->tensors[i].dtype = t;
    return i;
}

/* One node of the gradient or the forward convolution over inputs a and b
 * (b a constant of values const_b when given), its output "y": op
 * GRAPH_OP_CONV (X, W), GRAPH_OP_CONV_TRANSPOSE (dY, W: output_padding
 * gives back X's extent) or GRAPH_OP_CONV_WEIGHT_GRAD (X, dY). */
static graph *conv_graph_b(graph_op op, const conv_case *cc, graph_dtype t, const void *const_b)
{
    int64_t x[4] = { cc->n, cc->c, cc->h, cc->w }, wt[4] = { cc->m, cc->c / cc->group, cc->k, cc->k };
    int64_t y[4] = { cc->n, cc->m, out_extent(cc, cc->h), out_extent(cc, cc->w) };
    graph *g = graph_new("conv_grad", 13);
    typed_input(g, "a", t, op == GRAPH_OP_CONV_TRANSPOSE ? y : x);
    const int64_t *bd = op == GRAPH_OP_CONV_WEIGHT_GRAD ? y : wt;
    if (const_b) {
        graph_shape s = { .rank = 4, .dims = { bd[0], bd[1], bd[2], bd[3] } };
        graph_set_constant(g, graph_add_tensor(g, "b"), t, &s, const_b);
    } else {
        typed_input(g, "b", t, bd);
    }
    graph_node *nd = node(g, op, "a,b", "y");
    set_window(nd, cc);
    if (op == GRAPH_OP_CONV_TRANSPOSE) {
        int64_t op_pad[2];
        for (int i = 0; i < 2; i++) {
            int64_t in = i ? cc->w : cc->h;
            op_pad[i] = in - ((out_extent(cc, in) - 1) * cc->stride + (cc->k - 1) * cc->dilation + 1 - 2 * cc->pad);
        }
        graph_set_attr_ints(nd, "output_padding", op_pad, 2);
    }
    finish(g, "y");
    return g;
}

static graph *conv_graph(graph_op op, const conv_case *cc, graph_dtype t)
{
    return conv_graph_b(op, cc, t, NULL);
}

/* Random values in [-2, 2) that f16 holds exactly (multiples of 1/16384). */
static void *random_values(graph_dtype t, size_t n)
{
    void *v = malloc(n * graph_dtype_size(t) + 8);
    for (size_t i = 0; i < n; i++)
        graph_store_f64(t, v, i, (double)rnd());
    return v;
}

static size_t numel4(const graph *g, int t)
{
    return (size_t)graph_shape_numel(&g->tensors[t].shape);
}

/* Output y of g for inputs a and b: the evaluator, or compiled for a GC200
 * and simulated (cycles then set). */
static graph_value run(const graph *g, void *a, void *b, bool simulated, bool f16_matmul, uint64_t *cycles)
{
    graph_value in[2], out = { 0 };
    void *d[2] = { a, b };
    for (int i = 0; i < g->n_inputs; i++)
        in[i] = (graph_value){ .dtype = g->tensors[g->inputs[i]].dtype, .shape = g->tensors[g->inputs[i]].shape,
                               .data = d[i] };
    char err[1024];
    bool ok;
    if (simulated) {
        lower_options lo = { .machine = gc200(), .f16_matmul = f16_matmul };
        simulate_result r;
        ok = simulate_graph(g, &lo, in, &out, &r, err, sizeof err);
        if (ok && cycles)
            *cycles = r.cycles;
    } else {
        ok = graph_eval(g, in, &out, err, sizeof err);
    }
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    return out;
}

static double dot(const graph_value *a, const void *b, graph_dtype bt)
{
    size_t n = (size_t)graph_shape_numel(&a->shape);
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += graph_load_f64(a->dtype, a->data, i) * graph_load_f64(bt, b, i);
    return s;
}

/* <dY, Conv(X, W)> = <ConvTranspose(dY, W), X> = <ConvWeightGrad(X, dY), W>
 * in f64 (the three sums differ by rounding alone). */
static void check_adjoint(const conv_case *cc)
{
    graph *fwd = conv_graph(GRAPH_OP_CONV, cc, GDT_F64), *dx = conv_graph(GRAPH_OP_CONV_TRANSPOSE, cc, GDT_F64);
    graph *dw = conv_graph(GRAPH_OP_CONV_WEIGHT_GRAD, cc, GDT_F64);
    size_t nx = numel4(fwd, fwd->inputs[0]), nw = numel4(fwd, fwd->inputs[1]), ny = numel4(dx, dx->inputs[0]);
    void *x = random_values(GDT_F64, nx), *w = random_values(GDT_F64, nw), *dy = random_values(GDT_F64, ny);
    graph_value y = run(fwd, x, w, false, false, NULL), gx = run(dx, dy, w, false, false, NULL);
    graph_value gw = run(dw, x, dy, false, false, NULL);
    CU_ASSERT_TRUE(graph_shape_equal(&gx.shape, &fwd->tensors[fwd->inputs[0]].shape));
    CU_ASSERT_TRUE(graph_shape_equal(&gw.shape, &fwd->tensors[fwd->inputs[1]].shape));
    double s = dot(&y, dy, GDT_F64), sx = dot(&gx, x, GDT_F64), sw = dot(&gw, w, GDT_F64);
    double tol = 1e-11 * (double)(nx + nw + ny) * 16.0;
    if (fabs(s - sx) > tol || fabs(s - sw) > tol)
        fprintf(stderr, "\n  k%lld s%lld p%lld d%lld g%lld: %.15g %.15g %.15g\n", (long long)cc->k,
                (long long)cc->stride, (long long)cc->pad, (long long)cc->dilation, (long long)cc->group, s, sx, sw);
    CU_ASSERT_DOUBLE_EQUAL(sx, s, tol);
    CU_ASSERT_DOUBLE_EQUAL(sw, s, tol);
    CU_ASSERT_TRUE(fabs(s) > 1.0);          /* not a trivial identity of zeros */
    graph_value_free(&y);
    graph_value_free(&gx);
    graph_value_free(&gw);
    free(x);
    free(w);
    free(dy);
    graph_free(fwd);
    graph_free(dx);
    graph_free(dw);
}

static void test_adjoint(void)
{
    static const conv_case cases[] = {
        { 2, 3, 7, 6, 4, 3, 1, 1, 1, 1 }, { 2, 3, 7, 8, 4, 3, 2, 1, 1, 1 }, { 1, 4, 9, 9, 6, 1, 2, 0, 1, 1 },
        { 1, 3, 11, 10, 4, 7, 2, 3, 1, 1 }, { 2, 4, 8, 7, 6, 3, 2, 2, 2, 2 }, { 1, 6, 6, 6, 9, 2, 3, 0, 1, 3 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_adjoint(&cases[i]);
}

/* The model's MACs: a Conv's data gradient and weight gradient take the
 * multiply-adds of the Conv itself, N x M x pixels of Y x C / group x
 * kernel pixels, whatever the stride and groups. */
static void test_model_macs(void)
{
    static const conv_case cases[] = {
        { 2, 3, 7, 6, 4, 3, 1, 1, 1, 1 }, { 2, 4, 8, 7, 6, 3, 2, 2, 2, 2 }, { 1, 6, 6, 6, 9, 2, 3, 0, 1, 3 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const conv_case *cc = &cases[i];
        double want = (double)(cc->n * cc->m * out_extent(cc, cc->h) * out_extent(cc, cc->w) * (cc->c / cc->group) *
                               cc->k * cc->k);
        static const graph_op ops[] = { GRAPH_OP_CONV, GRAPH_OP_CONV_TRANSPOSE, GRAPH_OP_CONV_WEIGHT_GRAD };
        for (int o = 0; o < 3; o++) {
            graph *g = conv_graph(ops[o], cc, GDT_F32);
            CU_ASSERT_DOUBLE_EQUAL(graph_model_macs(g), want, 0);
            graph_free(g);
        }
    }
    /* MatMul (batched) and Gemm with transA: K an output element. */
    graph *g = graph_new("mm", 13);
    int64_t a[3] = { 2, 5, 7 }, b[2] = { 7, 3 }, ga[2] = { 7, 5 };
    input(g, "a", 3, a);
    input(g, "b", 2, b);
    input(g, "ga", 2, ga);
    node(g, GRAPH_OP_MATMUL, "a,b", "y");
    graph_node *gm = node(g, GRAPH_OP_GEMM, "ga,b", "z");
    graph_set_attr_int(gm, "transA", 1);
    graph_add_output(g, graph_find_tensor(g, "z"));
    finish(g, "y");
    CU_ASSERT_DOUBLE_EQUAL(graph_model_macs(g), 2 * 5 * 3 * 7 + 5 * 3 * 7, 0);
    graph_free(g);
}

/* Worked by hand: a 2 x 2 input, a 2 x 2 kernel of 1, 2, 3, 4, stride 2:
 * each input pixel spreads its value times the kernel over its own 2 x 2
 * block; with pads 1 the outer ring is cut off.  The weight gradient of the
 * same window: dW[0][0][i][j] = sum over the output of dY times X shifted. */
static void test_worked_values(void)
{
    conv_case cc = { 1, 1, 4, 4, 1, 2, 2, 0, 1, 1 };
    graph *g = conv_graph(GRAPH_OP_CONV_TRANSPOSE, &cc, GDT_F32);
    float dy[4] = { 1, 2, 3, 4 }, w[4] = { 1, 2, 3, 4 };
    graph_value r = run(g, dy, w, false, false, NULL);
    static const float want[16] = { 1, 2, 2, 4, 3, 4, 6, 8, 3, 6, 4, 8, 9, 12, 12, 16 };
    CU_ASSERT_EQUAL(graph_shape_numel(&r.shape), 16);
    CU_ASSERT_EQUAL(memcmp(r.data, want, sizeof want), 0);
    graph_value_free(&r);
    graph_free(g);

    cc = (conv_case){ 1, 1, 4, 4, 1, 2, 2, 1, 1, 1 };   /* pads 1: result 2 x 2 of the 4 x 4 above's middle */
    cc.h = cc.w = 2;
    g = conv_graph(GRAPH_OP_CONV_TRANSPOSE, &cc, GDT_F32);
    r = run(g, dy, w, false, false, NULL);
    static const float mid[4] = { 4, 6, 6, 4 };
    CU_ASSERT_EQUAL(graph_shape_numel(&r.shape), 4);
    CU_ASSERT_EQUAL(memcmp(r.data, mid, sizeof mid), 0);
    graph_value_free(&r);
    graph_free(g);

    /* X 3 x 3 of 1..9, dY 2 x 2 of 1, 0, 0, 2, kernel 2, stride 1:
     * dW[i][j] = X[i][j] + 2 X[i + 1][j + 1]. */
    cc = (conv_case){ 1, 1, 3, 3, 1, 2, 1, 0, 1, 1 };
    g = conv_graph(GRAPH_OP_CONV_WEIGHT_GRAD, &cc, GDT_F32);
    float x[9] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 }, d[4] = { 1, 0, 0, 2 };
    r = run(g, x, d, false, false, NULL);
    static const float dwant[4] = { 11, 14, 20, 23 };
    CU_ASSERT_EQUAL(graph_shape_numel(&r.shape), 4);
    CU_ASSERT_EQUAL(memcmp(r.data, dwant, sizeof dwant), 0);
    graph_value_free(&r);
    graph_free(g);
}

/* The bound on |simulated - evaluated| for element i: the evaluator
 * rounds the exact sum once; the AMP forms products exactly in f32 (f16
 * operands: 11 x 11 bits) or rounded (f32 path: one f32 rounding) and
 * adds K of them in f32 in some order, an error of at most K u S with
 * u = 2^-24 and S the sum of the products' magnitudes (the same graph on
 * |inputs|); --f16-matmul first rounds f32 operands to f16 (2^-11 each,
 * so 2^-10 S more).  Rounding the f32 sum to the result's dtype and the
 * evaluator's own rounding may land one ulp apart: 2^-10 |want| for an
 * f16 result, 2^-23 |want| for f32; 2^-24 covers f16's subnormals. */
static double tolerance(double want, double s, double k, graph_dtype t, bool f16_matmul)
{
    const double u = ldexp(1.0, -24);
    double ulp = t == GDT_F16 ? ldexp(1.0, -10) : ldexp(1.0, -23);
    return ulp * fabs(want) + (k + 1) * u * s + (f16_matmul ? ldexp(1.0, -10) * s : 0.0) + u;
}

static void *absolute(graph_dtype t, const void *v, size_t n)
{
    void *a = malloc(n * graph_dtype_size(t) + 8);
    for (size_t i = 0; i < n; i++)
        graph_store_f64(t, a, i, fabs(graph_load_f64(t, v, i)));
    return a;
}

/* Op op of case cc in dtype t compiled, simulated and held against the
 * evaluator; k: the terms of each sum.  A Conv's or ConvTranspose's
 * weights are constants, as at inference, unless runtime_w.  Returns the
 * simulated cycles. */
static uint64_t check_simulated(graph_op op, const conv_case *cc, graph_dtype t, bool f16_matmul, bool runtime_w)
{
    graph *g = conv_graph(op, cc, t);
    size_t na = numel4(g, g->inputs[0]), nb = numel4(g, g->inputs[1]);
    void *a = random_values(t, na), *b = random_values(t, nb);
    void *aa = absolute(t, a, na), *ab = absolute(t, b, nb);
    uint64_t cycles = 0;
    graph_value want = run(g, a, b, false, false, NULL), sum = run(g, aa, ab, false, false, NULL);
    graph *gc = op == GRAPH_OP_CONV_WEIGHT_GRAD || runtime_w ? NULL : conv_graph_b(op, cc, t, b);
    graph_value got = run(gc ? gc : g, a, b, true, f16_matmul, &cycles);
    graph_free(gc);
    double k = op == GRAPH_OP_CONV_WEIGHT_GRAD
                   ? (double)(cc->n * out_extent(cc, cc->h) * out_extent(cc, cc->w))
                   : (double)(cc->k * cc->k * (op == GRAPH_OP_CONV ? cc->c : cc->m));
    CU_ASSERT_FATAL(got.dtype == t && graph_shape_equal(&got.shape, &want.shape));
    size_t n = (size_t)graph_shape_numel(&want.shape), bad = 0;
    for (size_t i = 0; i < n; i++) {
        double gv = graph_load_f64(t, got.data, i), wv = graph_load_f64(t, want.data, i);
        double tol = tolerance(wv, graph_load_f64(t, sum.data, i), k, t, f16_matmul);
        if (!(fabs(gv - wv) <= tol) && !bad++)
            fprintf(stderr, "\n  %s k%lld s%lld p%lld: element %zu is %.9g, expected %.9g (tolerance %.3g)\n",
                    graph_ops[op].name, (long long)cc->k, (long long)cc->stride, (long long)cc->pad, i, gv, wv, tol);
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_TRUE(cycles > 0);
    graph_value_free(&want);
    graph_value_free(&sum);
    graph_value_free(&got);
    free(a);
    free(b);
    free(aa);
    free(ab);
    graph_free(g);
    return cycles;
}

/* ResNet-50's convolutions scaled down: 3x3 stride 1 pads 1, 3x3 stride 2
 * pads 1, 1x1 stride 2 (the shortcut), 7x7 stride 2 pads 3 (the stem). */
static const conv_case resnet_like[] = {
    { 2, 16, 8, 8, 16, 3, 1, 1, 1, 1 },
    { 1, 16, 10, 10, 24, 3, 2, 1, 1, 1 },
    { 2, 16, 8, 8, 32, 1, 2, 0, 1, 1 },
    { 1, 4, 16, 16, 8, 7, 2, 3, 1, 1 },
};
#define N_RESNET_LIKE (sizeof resnet_like / sizeof resnet_like[0])

static void test_data_grad_simulated(void)
{
    for (size_t i = 0; i < N_RESNET_LIKE; i++) {
        check_simulated(GRAPH_OP_CONV_TRANSPOSE, &resnet_like[i], GDT_F16, false, false);
        check_simulated(GRAPH_OP_CONV_TRANSPOSE, &resnet_like[i], GDT_F32, false, false);
    }
    check_simulated(GRAPH_OP_CONV_TRANSPOSE, &resnet_like[1], GDT_F32, true, false);
    /* f32 weights computed at run time (a training step's), fetched flipped */
    check_simulated(GRAPH_OP_CONV_TRANSPOSE, &resnet_like[0], GDT_F32, false, true);
    check_simulated(GRAPH_OP_CONV_TRANSPOSE, &resnet_like[3], GDT_F32, false, true);
}

static void test_weight_grad_simulated(void)
{
    for (size_t i = 0; i < N_RESNET_LIKE; i++) {
        check_simulated(GRAPH_OP_CONV_WEIGHT_GRAD, &resnet_like[i], GDT_F16, false, false);
        check_simulated(GRAPH_OP_CONV_WEIGHT_GRAD, &resnet_like[i], GDT_F32, false, false);
    }
    check_simulated(GRAPH_OP_CONV_WEIGHT_GRAD, &resnet_like[1], GDT_F32, true, false);
}

void test_register(void)
{
    ADD_SUITE("conv_grad",
              { "gradients are the transposes of Conv's Jacobians (evaluator)", test_adjoint },
              { "values worked by hand (evaluator)", test_worked_values },
              { "the model's MACs of a Conv and its gradients", test_model_macs },
              { "ConvTranspose simulated on ResNet-50-like shapes", test_data_grad_simulated },
              { "ConvWeightGrad simulated on ResNet-50-like shapes", test_weight_grad_simulated });
}
