/*
 * test_conv_var.c — convolutions whose weights are variables (a training
 * step's weights), compiled for a GC200 and simulated:
 *   - the weights kept channels-last ([Cout, KH, KW, C], the tensor map's
 *     perm 0, 2, 3, 1) and read by the Conv and the ConvTranspose in runs,
 *     on ResNet-50's convolutions scaled down (3x3 stride 1 and 2, 1x1
 *     stride 2, the 7x7 stride-2 stem) and one past the old limit of
 *     65,536 run-time weights, f32, f16 and f32 on the f16 path
 *     (--f16-matmul), against the evaluator with test_conv_grad.c's bound;
 *   - a permuted variable written and read by name on the host;
 *   - a small CNN trained by simulate_training: one SGD step (momentum and
 *     weight decay: the state variables are kept channels-last too)
 *     against graph_eval_step, and the loss falling over 20 steps;
 *   - the cycles of ResNet-50's res2 3x3 convolution with constant and
 *     with variable weights.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontends/autodiff.h"
#include "frontends/graph_eval.h"
#include "frontends/simulate.h"
#include "graph_fixture.h"
#include "isa/fp16.h"
#include "sim/engine/engine.h"
#include "sim/engine/program_io.h"
#include "test_util.h"
#include "train_fixture.h"

#define D(...) ((const int64_t[]){ __VA_ARGS__ })

/* X [n, c, h, w], W [m, c, k, k]. */
typedef struct conv_case {
    int64_t n, c, h, w, m, k, stride, pad;
} conv_case;

static int64_t out_extent(const conv_case *cc, int64_t in)
{
    return (in + 2 * cc->pad - cc->k) / cc->stride + 1;
}

static void set_window(graph_node *nd, const conv_case *cc)
{
    int64_t k[2] = { cc->k, cc->k }, s[2] = { cc->stride, cc->stride }, p[4] = { cc->pad, cc->pad, cc->pad, cc->pad };
    graph_set_attr_ints(nd, "kernel_shape", k, 2);
    graph_set_attr_ints(nd, "strides", s, 2);
    graph_set_attr_ints(nd, "pads", p, 4);
}

/* Random values in [-2, 2) that f16 holds exactly. */
static void *random_values(graph_dtype t, size_t n)
{
    void *v = malloc(n * graph_dtype_size(t) + 8);
    for (size_t i = 0; i < n; i++)
        graph_store_f64(t, v, i, (double)rnd());
    return v;
}

static void *absolute(graph_dtype t, const void *v, size_t n)
{
    void *a = malloc(n * graph_dtype_size(t) + 8);
    for (size_t i = 0; i < n; i++)
        graph_store_f64(t, a, i, fabs(graph_load_f64(t, v, i)));
    return a;
}

/* y = Conv(x, w) (transpose: y = ConvTranspose(x, w), x then of the
 * Conv's output extent and output_padding giving back its input's) with
 * w a variable of values wv (a constant when !variable). */
static graph *conv_graph(const conv_case *cc, graph_dtype t, bool transpose, const void *wv, bool variable)
{
    int64_t oh = out_extent(cc, cc->h), ow = out_extent(cc, cc->w);
    graph *g = graph_new("conv_var", 13);
    int x = transpose ? input(g, "x", 4, D(cc->n, cc->m, oh, ow)) : input(g, "x", 4, D(cc->n, cc->c, cc->h, cc->w));
    g->tensors[x].dtype = t;
    graph_shape ws = { .rank = 4, .dims = { cc->m, cc->c, cc->k, cc->k } };
    int w = graph_add_tensor(g, "w");
    graph_set_constant(g, w, t, &ws, wv);
    if (variable)
        graph_make_variable(g, w);
    graph_node *nd = node(g, transpose ? GRAPH_OP_CONV_TRANSPOSE : GRAPH_OP_CONV, "x,w", "y");
    set_window(nd, cc);
    if (transpose) {
        int64_t op_pad[2] = { cc->h - ((oh - 1) * cc->stride + cc->k - 2 * cc->pad),
                              cc->w - ((ow - 1) * cc->stride + cc->k - 2 * cc->pad) };
        graph_set_attr_ints(nd, "output_padding", op_pad, 2);
    }
    finish(g, "y");
    return g;
}

/* Output y of g on input x: the evaluator, or compiled and simulated. */
static graph_value run(const graph *g, void *x, bool simulated, bool f16_matmul, uint64_t *cycles)
{
    graph_value in = { .dtype = g->tensors[g->inputs[0]].dtype, .shape = g->tensors[g->inputs[0]].shape, .data = x };
    graph_value out = { 0 };
    char err[1024];
    bool ok;
    if (simulated) {
        lower_options lo = { .machine = gc200(), .f16_matmul = f16_matmul };
        simulate_result r;
        ok = simulate_graph(g, &lo, &in, &out, &r, err, sizeof err);
        if (ok && cycles)
            *cycles = r.cycles;
    } else {
        ok = graph_eval(g, &in, &out, err, sizeof err);
    }
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    return out;
}

/* test_conv_grad.c's bound: the evaluator rounds the exact sum once; the
 * AMP adds K products exactly formed (f16 operands) or rounded once (f32
 * path) in f32, at most K u S off with u = 2^-24 and S the sum of the
 * products' magnitudes; --f16-matmul rounds f32 operands to f16 first
 * (2^-10 S more); the result's own rounding may land an ulp apart. */
static double tolerance(double want, double s, double k, graph_dtype t, bool f16_matmul)
{
    const double u = ldexp(1.0, -24);
    double ulp = t == GDT_F16 ? ldexp(1.0, -10) : ldexp(1.0, -23);
    return ulp * fabs(want) + (k + 1) * u * s + (f16_matmul ? ldexp(1.0, -10) * s : 0.0) + u;
}

/* Case cc in dtype t with variable weights simulated against the
 * evaluator (the same graph on |x|, |w| gives S). */
static void check_variable(const conv_case *cc, graph_dtype t, bool transpose, bool f16_matmul)
{
    size_t nw = (size_t)(cc->m * cc->c * cc->k * cc->k);
    void *w = random_values(t, nw), *aw = absolute(t, w, nw);
    graph *g = conv_graph(cc, t, transpose, w, true), *ga = conv_graph(cc, t, transpose, aw, true);
    size_t nx = (size_t)graph_shape_numel(&g->tensors[g->inputs[0]].shape);
    void *x = random_values(t, nx), *ax = absolute(t, x, nx);
    graph_value want = run(g, x, false, false, NULL), sum = run(ga, ax, false, false, NULL);
    graph_value got = run(g, x, true, f16_matmul, NULL);
    double k = (double)(cc->k * cc->k * (transpose ? cc->m : cc->c));
    CU_ASSERT_FATAL(got.dtype == t && graph_shape_equal(&got.shape, &want.shape));
    size_t n = (size_t)graph_shape_numel(&want.shape), bad = 0;
    for (size_t i = 0; i < n; i++) {
        double gv = graph_load_f64(t, got.data, i), wv = graph_load_f64(t, want.data, i);
        double tol = tolerance(wv, graph_load_f64(t, sum.data, i), k, t, f16_matmul);
        if (!(fabs(gv - wv) <= tol) && !bad++)
            fprintf(stderr, "\n  %s %s k%lld s%lld c%lld m%lld: element %zu is %.9g, expected %.9g (tolerance %.3g)\n",
                    transpose ? "ConvTranspose" : "Conv", t == GDT_F16 ? "f16" : "f32", (long long)cc->k,
                    (long long)cc->stride, (long long)cc->c, (long long)cc->m, i, gv, wv, tol);
    }
    CU_ASSERT_EQUAL(bad, 0);
    graph_value_free(&want);
    graph_value_free(&sum);
    graph_value_free(&got);
    free(w);
    free(aw);
    free(x);
    free(ax);
    graph_free(g);
    graph_free(ga);
}

static const conv_case resnet_like[] = {
    { 1, 64, 14, 14, 64, 3, 1, 1 },     /* a res3-like 3x3 (36,864 weights) */
    { 1, 16, 10, 10, 24, 3, 2, 1 },     /* 3x3 stride 2 */
    { 2, 16, 8, 8, 32, 1, 2, 0 },       /* the 1x1 stride-2 shortcut */
    { 1, 4, 16, 16, 8, 7, 2, 3 },       /* the 7x7 stem, Cin 4 */
    { 1, 128, 7, 7, 128, 3, 1, 1 },     /* 147,456 weights: past 65,536 */
};
#define N_CASES (sizeof resnet_like / sizeof resnet_like[0])

static void test_conv_variable(void)
{
    for (size_t i = 0; i < N_CASES; i++) {
        check_variable(&resnet_like[i], GDT_F32, false, false);
        check_variable(&resnet_like[i], GDT_F16, false, false);
    }
    check_variable(&resnet_like[0], GDT_F32, false, true);
    check_variable(&resnet_like[4], GDT_F32, false, true);
    /* res5's 3x3: 512 x 512 x 3 x 3 = 2,359,296 weights */
    check_variable(&(conv_case){ 1, 512, 7, 7, 512, 3, 1, 1 }, GDT_F32, false, true);
}

static void test_conv_transpose_variable(void)
{
    for (size_t i = 0; i < N_CASES; i++) {
        check_variable(&resnet_like[i], GDT_F32, true, false);
        check_variable(&resnet_like[i], GDT_F16, true, false);
    }
    check_variable(&resnet_like[1], GDT_F32, true, true);
}

/* The weights are kept [Cout, KH, KW, C]; written by name (new values,
 * reordered on the host), read back the same, and the convolution run on
 * them matches the evaluator's on them. */
static void test_permuted_write(void)
{
    const conv_case *cc = &resnet_like[1];
    size_t nw = (size_t)(cc->m * cc->c * cc->k * cc->k);
    float *w0 = random_values(GDT_F32, nw), *w1 = random_values(GDT_F32, nw), *back = malloc(nw * sizeof *back);
    graph *g = conv_graph(cc, GDT_F32, false, w0, true), *g1 = conv_graph(cc, GDT_F32, false, w1, true);
    size_t nx = (size_t)graph_shape_numel(&g->tensors[g->inputs[0]].shape);
    float *x = random_values(GDT_F32, nx);
    char err[1024];
    lower_options lo = { .machine = gc200() };
    ipu_exe *e = lower_graph(g, &lo, NULL, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    tensor_map *map = program_tensor_map(e, "conv_var", err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(map);
    const tmap_tensor *tw = tmap_find(map, "w"), *tx = tmap_find(map, "x"), *ty = tmap_find(map, "y");
    CU_ASSERT_FATAL(tw && tx && ty);
    CU_ASSERT_TRUE(tw->role & TMAP_VARIABLE);
    CU_ASSERT_TRUE(tw->perm[0] == 0 && tw->perm[1] == 2 && tw->perm[2] == 3 && tw->perm[3] == 1);
    engine *eng = engine_new(gc200(), e, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(eng);
    /* as loaded: the initial values */
    CU_ASSERT_TRUE(program_read_tensor(eng, tw, back, err, sizeof err));
    CU_ASSERT_EQUAL(memcmp(back, w0, nw * sizeof *back), 0);
    CU_ASSERT_TRUE_FATAL(program_write_tensor(eng, tw, w1, nw * sizeof *w1, err, sizeof err));
    CU_ASSERT_TRUE(program_read_tensor(eng, tw, back, err, sizeof err));
    CU_ASSERT_EQUAL(memcmp(back, w1, nw * sizeof *back), 0);
    /* the stored order: output channel 1, kernel tap (0, 1), channel 2 */
    const uint64_t stored = ((1 * 3 + 0) * 3 + 1) * (uint64_t)cc->c + 2, logical = ((1 * cc->c + 2) * 3 + 0) * 3 + 1;
    float one = 0;
    for (size_t k = 0; k < tw->n_pieces; k++) {
        const tmap_piece *p = &tw->pieces[k];
        if (p->first <= stored && stored < p->first + p->count)
            tmem_read_bytes(&engine_tile(eng, p->tile)->s.mem, p->addr + (uint32_t)((stored - p->first) * 4),
                            (uint8_t *)&one, 4);
    }
    CU_ASSERT_EQUAL(one, w1[logical]);
    CU_ASSERT_TRUE_FATAL(program_set_input(eng, tx, x, nx * sizeof *x, err, sizeof err));
    engine_options eo = { .max_cycles = 2000000000ull };
    CU_ASSERT_EQUAL_FATAL(engine_run(eng, &eo), ENGINE_DONE);
    graph_value want = run(g1, x, false, false, NULL);
    size_t ny = (size_t)graph_shape_numel(&want.shape);
    float *y = malloc(ny * sizeof *y);
    CU_ASSERT_TRUE(program_read_output(eng, ty, y, err, sizeof err));
    size_t bad = 0;
    for (size_t i = 0; i < ny; i++)
        bad += !(fabs(y[i] - ((float *)want.data)[i]) <= 1e-4 + 1e-5 * fabs(((float *)want.data)[i]));
    CU_ASSERT_EQUAL(bad, 0);
    /* a wrong size is refused */
    CU_ASSERT_FALSE(program_write_tensor(eng, tw, w1, 8, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "tensor 'w': 8 bytes given, it has 13824");
    free(y);
    graph_value_free(&want);
    engine_free(eng);
    tmap_free(map);
    exe_free(e);
    graph_free(g);
    graph_free(g1);
    free(w0);
    free(w1);
    free(back);
    free(x);
}

/* ---- a small CNN trained --------------------------------------------------- */

/* x [4,4,6,6] -> Conv 3x3 s2 p1 (8) -> Relu -> Conv 3x3 (16) -> [4,16,1,1]
 * -> GlobalAveragePool -> Flatten -> Gemm (3) -> logits [4,3].  The
 * convolutions have no bias, as ResNet's (a bias's gradient sums an image
 * over N, H, W, a reduction of the channels-last order's leading axes);
 * the second one ends at one pixel, so the pool's gradient (an Expand)
 * is the same in either order. */
static graph *cnn(void)
{
    rng = 11;
    graph *g = graph_new("cnn", 13);
    input(g, "x", 4, D(4, 4, 6, 6));
    cnst(g, "w1", 4, D(8, 4, 3, 3), NULL);
    cnst(g, "w2", 4, D(16, 8, 3, 3), NULL);
    cnst(g, "w3", 2, D(16, 3), NULL);
    cnst(g, "b3", 1, D(3), NULL);
    /* weights of about 1 / sqrt(fan-in), so the logits start moderate */
    for (int t = 0; t < g->n_tensors; t++)
        if (g->tensors[t].data && g->tensors[t].shape.rank >= 1) {
            int64_t n = graph_shape_numel(&g->tensors[t].shape);
            for (int64_t i = 0; i < n; i++)
                ((float *)g->tensors[t].data)[i] *= 0.125f;
        }
    set_window(node(g, GRAPH_OP_CONV, "x,w1", "c1"), &(conv_case){ .k = 3, .stride = 2, .pad = 1 });
    node(g, GRAPH_OP_RELU, "c1", "r1");
    set_window(node(g, GRAPH_OP_CONV, "r1,w2", "c2"), &(conv_case){ .k = 3, .stride = 1, .pad = 0 });
    node(g, GRAPH_OP_GLOBALAVERAGEPOOL, "c2", "p");
    node(g, GRAPH_OP_FLATTEN, "p", "f");
    node(g, GRAPH_OP_GEMM, "f,w3,b3", "logits");
    finish(g, "logits");
    return g;
}

static float cnn_x[4 * 4 * 6 * 6];
static int32_t cnn_labels[4];

static void cnn_data(graph_value *in, const graph *g)
{
    for (int i = 0; i < 4 * 4 * 6 * 6; i++)
        cnn_x[i] = (float)((i * 7) % 13) / 6.0f - 1.0f;
    for (int i = 0; i < 4; i++)
        cnn_labels[i] = (i * 2) % 3;
    train_inputs(in, g, cnn_x, cnn_labels);
}

static graph *cnn_trained(const train_options *o, train_info *info)
{
    return train_built(cnn(), o, info);
}

/* Within test_train.c's bound: f32 sums of at most 144 products of values
 * below 4 on the AMP's f32 path and the evaluator's f64 differ by a few
 * f32 ulps of the partial sums; a wrong gradient is off by far more. */
#define CNN_ATOL 1e-4
#define CNN_RTOL 1e-3

/* One SGD step (momentum, weight decay) simulated against the evaluator's:
 * the loss, the anchored gradients, every variable after the step. */
static void test_cnn_step(void)
{
    train_options o;
    train_options_default(&o);
    o.loss = "softmax-ce:logits:labels";
    o.lr = 0.1;
    o.momentum = 0.9;
    o.weight_decay = 0.01;
    o.anchor_gradients = true;
    train_info info;
    graph *sim = cnn_trained(&o, &info), *ref = cnn_trained(&o, &info);
    CU_ASSERT_EQUAL(info.weights, 4);
    CU_ASSERT_EQUAL(info.state, 4);
    CU_ASSERT_EQUAL_FATAL(sim->n_outputs, 5);
    graph_value in[2];
    cnn_data(in, sim);
    lower_options lo = { .machine = gc200(), .tiles = 32 };
    CU_ASSERT_EQUAL(train_check_step(sim, ref, in, &lo, CNN_ATOL, CNN_RTOL), 8);
    graph_free(sim);
    graph_free(ref);
}

/* 20 simulated SGD steps: the loss falls to under half its first value. */
static void test_cnn_loss_falls(void)
{
    train_options o;
    train_options_default(&o);
    o.loss = "softmax-ce:logits:labels";
    o.lr = 0.2;
    o.momentum = 0.9;
    train_info info;
    graph *g = cnn_trained(&o, &info);
    graph_value in[2];
    cnn_data(in, g);
    lower_options lo = { .machine = gc200(), .tiles = 32 };
    double first = 0, last = 0;
    train_loss_first_last(g, &lo, in, 20, &first, &last);
    if (!(last < 0.5 * first))
        fprintf(stderr, "\n  loss %.4f -> %.4f\n", first, last);
    CU_ASSERT_TRUE(first > 0.5 && last < 0.5 * first);
    graph_free(g);
}

/* ResNet-50's res2 3x3 convolution (64 -> 64 at 56 x 56, batch 1) on the
 * f16 path, its weights constants (inference) and a variable (training):
 * the variable's are gathered by the exchange each run and packed on the
 * tiles, which costs at most a few thousand cycles more. */
static void test_res2_cycles(void)
{
    const conv_case cc = { 1, 64, 56, 56, 64, 3, 1, 1 };
    size_t nw = (size_t)(cc.m * cc.c * 9), nx = (size_t)(cc.c * cc.h * cc.w);
    void *w = random_values(GDT_F32, nw), *x = random_values(GDT_F32, nx);
    uint64_t cycles[2];
    for (int v = 0; v < 2; v++) {
        graph *g = conv_graph(&cc, GDT_F32, false, w, v == 1);
        graph_value y = run(g, x, true, true, &cycles[v]);
        graph_value_free(&y);
        graph_free(g);
    }
    printf("\n  res2 3x3 64->64 56x56 --f16-matmul: constant weights %llu cycles, variable weights %llu cycles\n",
           (unsigned long long)cycles[0], (unsigned long long)cycles[1]);
    CU_ASSERT_TRUE(cycles[1] <= cycles[0] + 5000);
    free(w);
    free(x);
}

void test_register(void)
{
    ADD_SUITE("conv_var",
              { "Conv with variable weights (channels-last, in runs) against the evaluator", test_conv_variable },
              { "ConvTranspose with variable weights against the evaluator", test_conv_transpose_variable },
              { "a channels-last variable written and read by name", test_permuted_write },
              { "a CNN's SGD step simulated against the evaluator's", test_cnn_step },
              { "a CNN's loss falls over 20 simulated steps", test_cnn_loss_falls },
              { "res2 3x3 cycles: constant vs variable weights", test_res2_cycles });
}
