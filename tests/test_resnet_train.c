/*
 * test_resnet_train.c — a training step of a small ResNet (the stem
 * convolution, BatchNormalization on the batch's statistics, Relu, MaxPool,
 * one bottleneck block with a projection shortcut, GlobalAveragePool and
 * the classifier, under softmax cross-entropy) compiled for a GC200 and
 * simulated against the host evaluator's step: the loss, every weight's
 * gradient, every weight after the update and the BatchNormalizations'
 * running statistics; the loss falling over 20 simulated steps; a
 * per-channel reduction of a channels-last image at the speed of a
 * reduction over rows.
 *
 * Tolerance, as validate --train states it (validation/validate_train.c):
 * per element 2^-11 sqrt(k) (|want| + rms(want)) with k the convolutions
 * and matmuls on the path, here at most 12 (f32 on the tiles, the
 * evaluator in f64 rounded per op: the simulated values differ by the f32
 * rounding of sums of a few thousand terms, far below this, while a wrong
 * gradient or a misread channel order is far outside it).
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
#include "test_util.h"
#include "train_fixture.h"

#define D(...) ((const int64_t[]){ __VA_ARGS__ })
#define BATCH 2
#define SIZE 32
#define CLASSES 10
#define MOMENTUM 0.9

/* Small random weights: rnd() in [-2, 2) scaled to He's spread. */
static int weight(graph *g, const char *name, int rank, const int64_t *dims, double scale)
{
    int t = cnst(g, name, rank, dims, NULL);
    float *v = g->tensors[t].data;
    for (int64_t i = 0; i < graph_shape_numel(&g->tensors[t].shape); i++)
        v[i] = (float)(v[i] * scale);
    return t;
}

/* A constant of n equal values. */
static int fill(graph *g, const char *name, int64_t n, float v)
{
    float *d = malloc((size_t)n * sizeof *d);
    for (int64_t i = 0; i < n; i++)
        d[i] = v;
    int t = cnst(g, name, 1, &n, d);
    free(d);
    return t;
}

/* Conv (no bias) -> BatchNormalization (training, with its running
 * statistics as outputs 1 and 2) [-> Relu]; returns the result's name. */
static const char *conv_bn(graph *g, const char *name, const char *x, int64_t cin, int64_t cout, int64_t k,
                           int64_t stride, bool relu)
{
    static char out[64];
    char w[64], c[64], bn[64], p[4][64];
    snprintf(w, sizeof w, "%s.w", name);
    snprintf(c, sizeof c, "%s.conv", name);
    weight(g, w, 4, D(cout, cin, k, k), sqrt(6.0 / (double)(cin * k * k)) / 2);
    char ins[160];
    snprintf(ins, sizeof ins, "%s,%s", x, w);
    graph_node *cn = node(g, GRAPH_OP_CONV, ins, c);
    graph_set_attr_ints(cn, "kernel_shape", D(k, k), 2);
    graph_set_attr_ints(cn, "strides", D(stride, stride), 2);
    graph_set_attr_ints(cn, "pads", D(k / 2, k / 2, k / 2, k / 2), 4);
    static const char *const part[4] = { "scale", "bias", "mean", "var" };
    static const float value[4] = { 1.0f, 0.0f, 0.0f, 1.0f };
    int in[5] = { graph_find_tensor(g, c) };
    for (int q = 0; q < 4; q++) {
        snprintf(p[q], sizeof p[q], "%s.bn.%s", name, part[q]);
        in[q + 1] = fill(g, p[q], cout, value[q] + (q < 2 ? 0.05f * (float)q : 0.0f));
    }
    snprintf(bn, sizeof bn, "%s.bn", name);
    char rm[80], rv[80];
    snprintf(rm, sizeof rm, "%s.running_mean", name);
    snprintf(rv, sizeof rv, "%s.running_var", name);
    int o[3] = { graph_add_tensor(g, bn), graph_add_tensor(g, rm), graph_add_tensor(g, rv) };
    int k_bn = graph_add_node(g, GRAPH_OP_BATCHNORM, bn, in, 5, o, 3);
    graph_set_attr_float(&g->nodes[k_bn], "epsilon", 1e-5);
    graph_set_attr_float(&g->nodes[k_bn], "momentum", MOMENTUM);
    graph_set_attr_int(&g->nodes[k_bn], "training_mode", 1);
    snprintf(out, sizeof out, "%s", bn);
    if (relu) {
        char r[64];
        snprintf(r, sizeof r, "%s.relu", name);
        node(g, GRAPH_OP_RELU, bn, r);
        snprintf(out, sizeof out, "%s", r);
    }
    return out;
}

/* x [2, 4, 32, 32] -> stem 7x7 s2 (16) -> MaxPool 3x3 s2 -> bottleneck
 * (1x1 8, 3x3 8 s2, 1x1 32; projection 1x1 32 s2) -> GlobalAveragePool ->
 * Gemm -> logits [2, 10]. */
static graph *mini_resnet(void)
{
    rng = 11;
    graph *g = graph_new("mini_resnet", 15);
    input(g, "x", 4, D(BATCH, 4, SIZE, SIZE));
    int lab = graph_add_tensor(g, "labels");
    g->tensors[lab].dtype = GDT_I32;
    g->tensors[lab].shape = (graph_shape){ .rank = 1, .dims = { BATCH } };
    g->tensors[lab].shape_known = true;
    graph_add_input(g, lab);
    char t[64];
    snprintf(t, sizeof t, "%s", conv_bn(g, "stem", "x", 4, 16, 7, 2, true));
    graph_node *mp = node(g, GRAPH_OP_MAXPOOL, t, "pool");
    graph_set_attr_ints(mp, "kernel_shape", D(3, 3), 2);
    graph_set_attr_ints(mp, "strides", D(2, 2), 2);
    graph_set_attr_ints(mp, "pads", D(1, 1, 1, 1), 4);
    snprintf(t, sizeof t, "%s", conv_bn(g, "b.conv1", "pool", 16, 8, 1, 1, true));
    snprintf(t, sizeof t, "%s", conv_bn(g, "b.conv2", t, 8, 8, 3, 2, true));
    char main_path[64];
    snprintf(main_path, sizeof main_path, "%s", conv_bn(g, "b.conv3", t, 8, 32, 1, 1, false));
    char ins[160];
    snprintf(ins, sizeof ins, "%s,%s", main_path, conv_bn(g, "b.down", "pool", 16, 32, 1, 2, false));
    node(g, GRAPH_OP_ADD, ins, "b.add");
    node(g, GRAPH_OP_RELU, "b.add", "b.relu");
    node(g, GRAPH_OP_GLOBALAVERAGEPOOL, "b.relu", "gap");
    graph_set_attr_int(node(g, GRAPH_OP_FLATTEN, "gap", "flat"), "axis", 1);
    weight(g, "fc.w", 2, D(CLASSES, 32), 0.5 / sqrt(32.0));
    weight(g, "fc.b", 1, D(CLASSES), 0.02);
    graph_set_attr_int(node(g, GRAPH_OP_GEMM, "flat,fc.w,fc.b", "logits"), "transB", 1);
    finish(g, "logits");
    return g;
}

static float x_data[BATCH * 4 * SIZE * SIZE];
static int32_t label_data[BATCH] = { 3, 7 };

static void data(graph_value *in, const graph *g)
{
    for (size_t i = 0; i < sizeof x_data / sizeof x_data[0]; i++)
        x_data[i] = (float)((i * 37) % 23) / 11.0f - 1.0f;
    train_inputs(in, g, x_data, label_data);
}

static graph *trained(const train_options *o, train_info *info)
{
    return train_built(mini_resnet(), o, info);
}

/* The per-element bound of validate --train in f32: 2^-18 sqrt(L)
 * (|want| + rms(want)) + extra, L = 10 (five matmuls and convolutions on
 * the longest path, doubled by the backward pass). */
static int count_outside(const float *got, const float *want, int64_t n, const float *extra, const char *what)
{
    double rms = 0, c = ldexp(1, -18) * sqrt(10.0);
    for (int64_t i = 0; i < n; i++)
        rms += (double)want[i] * want[i];
    rms = n ? sqrt(rms / (double)n) : 0;
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double bound = c * (fabs(want[i]) + rms) + (extra ? extra[i] : 0) + 1e-30;
        if (!(fabs((double)got[i] - want[i]) <= bound) && bad++ < 3)
            fprintf(stderr, "\n  %s[%lld]: simulated %.9g, reference %.9g (bound %.3g)\n", what, (long long)i,
                    got[i], want[i], bound);
    }
    return bad;
}

static train_options sgd_options(void)
{
    train_options o;
    train_options_default(&o);
    o.loss = "softmax-ce:logits:labels";
    o.lr = 0.1;
    o.momentum = 0.9;
    o.anchor_gradients = true;
    return o;
}

/* One SGD step with momentum simulated against the evaluator's: the loss,
 * every anchored gradient, every variable's change (weights, momenta,
 * running statistics); the running mean is momentum old + (1 - momentum)
 * batch mean. */
static void step_matches_reference(void)
{
    train_options o = sgd_options();
    train_info info;
    graph *sim = trained(&o, &info), *ref = trained(&o, &info);
    /* 5 convolutions, 5 BN scales and biases, the classifier's 2 */
    CU_ASSERT_EQUAL(info.weights, 17);
    CU_ASSERT_EQUAL(sim->n_outputs, 18);
    graph_value in[2], out_sim[18], out_ref[18];
    data(in, sim);
    /* The weights before the step, and stem's batch mean by hand. */
    int nt = sim->n_tensors;
    float **before = calloc((size_t)nt, sizeof *before);
    for (int t = 0; t < nt; t++)
        if (sim->tensors[t].is_variable) {
            size_t bytes = (size_t)graph_shape_numel(&sim->tensors[t].shape) * 4;
            before[t] = malloc(bytes);
            memcpy(before[t], sim->tensors[t].init, bytes);
        }
    char err[800];
    simulate_result r;
    lower_options lo = { .machine = gc200(), .tiles = 64 };
    bool ok = simulate_training(sim, &lo, in, 1, out_sim, &r, NULL, NULL, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    CU_ASSERT_TRUE_FATAL(graph_eval_step(ref, in, out_ref, err, sizeof err));
    double loss = ((float *)out_ref[0].data)[0];
    /* ln 10 for an untrained classifier of 10 classes is about 2.3 */
    CU_ASSERT_TRUE(loss > 1.0 && loss < 5.0);
    for (int i = 0; i < sim->n_outputs; i++) {
        CU_ASSERT_FATAL(graph_shape_equal(&out_sim[i].shape, &out_ref[i].shape));
        CU_ASSERT_EQUAL(count_outside(out_sim[i].data, out_ref[i].data, graph_shape_numel(&out_ref[i].shape), NULL,
                                      sim->tensors[sim->outputs[i]].name), 0);
    }
    /* Each variable's change, with the rounding of the new value, 2u|w|. */
    int vars = 0, stats = 0;
    for (int t = 0; t < nt; t++) {
        const graph_tensor *x = &sim->tensors[t];
        if (!x->is_variable)
            continue;
        int rt = graph_find_tensor(ref, x->name);
        CU_ASSERT_FATAL(rt >= 0);
        int64_t n = graph_shape_numel(&x->shape);
        float *ds = malloc((size_t)n * 4), *dr = malloc((size_t)n * 4), *extra = malloc((size_t)n * 4);
        for (int64_t i = 0; i < n; i++) {
            ds[i] = ((float *)x->init)[i] - before[t][i];
            dr[i] = ((float *)ref->tensors[rt].init)[i] - before[t][i];
            extra[i] = (float)(2 * ldexp(1, -24) * fabs(before[t][i]));
        }
        CU_ASSERT_EQUAL(count_outside(ds, dr, n, extra, x->name), 0);
        free(ds);
        free(dr);
        free(extra);
        vars++;
        stats += strstr(x->name, "running_") != NULL || strstr(x->name, ".bn.mean") || strstr(x->name, ".bn.var");
    }
    /* weights, their momenta, and the running mean and variance of each of the 5 BNs */
    CU_ASSERT_EQUAL(vars, 17 + 17 + 10);
    CU_ASSERT_EQUAL(stats, 10);
    /* stem's running mean: 0.9 old + 0.1 mean over N, H, W of stem's convolution (the evaluator's) */
    graph *fwd = mini_resnet();
    graph_add_output(fwd, graph_find_tensor(fwd, "stem.conv"));
    graph_value fo[2];
    CU_ASSERT_TRUE_FATAL(graph_eval(fwd, in, fo, err, sizeof err));
    int rm = graph_find_tensor(sim, "stem.bn.mean");
    CU_ASSERT_FATAL(rm >= 0 && sim->tensors[rm].is_variable);
    const float *conv = fo[1].data;
    int64_t px = SIZE / 2 * SIZE / 2;
    for (int ch = 0; ch < 16; ch++) {
        double mean = 0;
        for (int b = 0; b < BATCH; b++)
            for (int64_t i = 0; i < px; i++)
                mean += conv[(b * 16 + ch) * px + i];
        mean /= (double)(BATCH * px);
        double want = MOMENTUM * before[rm][ch] + (1 - MOMENTUM) * mean;
        CU_ASSERT_DOUBLE_EQUAL(((float *)sim->tensors[rm].init)[ch], want, 1e-5 * (1 + fabs(want)));
    }
    CU_ASSERT_TRUE(fabs(((float *)sim->tensors[rm].init)[0] - before[rm][0]) > 1e-4);
    for (int i = 0; i < 2; i++)
        graph_value_free(&fo[i]);
    graph_free(fwd);
    for (int t = 0; t < nt; t++)
        free(before[t]);
    free(before);
    for (int i = 0; i < sim->n_outputs; i++) {
        graph_value_free(&out_sim[i]);
        graph_value_free(&out_ref[i]);
    }
    graph_free(sim);
    graph_free(ref);
}

/* The loss falls over 20 simulated steps of SGD with momentum. */
static void loss_falls(void)
{
    train_options o = sgd_options();
    o.anchor_gradients = false;
    train_info info;
    graph *g = trained(&o, &info);
    graph_value in[2], out[1];
    data(in, g);
    char err[800];
    lower_options lo = { .machine = gc200(), .tiles = 64 };
    simulate_result r;
    bool ok = simulate_training(g, &lo, in, 1, out, &r, NULL, NULL, err, sizeof err);
    double first = ok ? ((float *)out[0].data)[0] : 0, last = 0;
    if (ok) {
        graph_value_free(&out[0]);
        ok = simulate_training(g, &lo, in, 19, out, &r, NULL, NULL, err, sizeof err);
    }
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    last = ((float *)out[0].data)[0];
    graph_value_free(&out[0]);
    if (getenv("RN_VERBOSE"))
        fprintf(stderr, "\n  loss %.4f -> %.4f, %llu cycles a step\n", first, last, (unsigned long long)r.cycles);
    CU_ASSERT_TRUE(last < 0.5 * first);
    graph_free(g);
}

/* x [2, 64, 56, 56] (res2's activations at batch 2, 224 pixels) through
 * a 1x1 MaxPool of stride 1 (the same values, kept channels-last) and, when
 * reduce, BatchNormalization's mean over N, H and W; its cycles. */
static uint64_t stats_cycles(bool nhwc, bool reduce, float *mean_out)
{
    graph *g = graph_new("bn_stats", 15);
    input(g, "x", 4, D(2, 64, 56, 56));
    const char *src = "x";
    if (nhwc) {
        graph_node *mp = node(g, GRAPH_OP_MAXPOOL, "x", "y");
        graph_set_attr_ints(mp, "kernel_shape", D(1, 1), 2);
        src = "y";
    }
    if (reduce) {
        graph_node *r = node(g, GRAPH_OP_REDUCEMEAN, src, "mean");
        graph_set_attr_ints(r, "axes", D(0, 2, 3), 3);
    }
    finish(g, reduce ? "mean" : "y");
    size_t n = 2 * 64 * 56 * 56;
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)((i * 13) % 29) / 7.0f - 2.0f + (float)(i / 3136 % 64) / 16.0f;
    graph_value in = { GDT_F32, g->tensors[g->inputs[0]].shape, x }, out, want;
    char err[800];
    simulate_result r;
    lower_options lo = { .machine = gc200() };
    bool ok = simulate_graph(g, &lo, &in, &out, &r, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    if (reduce) {
        CU_ASSERT_TRUE_FATAL(graph_eval(g, &in, &want, err, sizeof err));
        /* a sum of 6272 values below 4 in f32: within 6272 u of their magnitude */
        CU_ASSERT_EQUAL(count_outside(out.data, want.data, 64, NULL, "mean"), 0);
        memcpy(mean_out, out.data, 64 * sizeof *mean_out);
        graph_value_free(&want);
    }
    graph_value_free(&out);
    free(x);
    graph_free(g);
    /* on the chip: less the input's superstep and the output's */
    return r.cycles - r.input_cycles - r.output_cycles;
}

/* The per-channel mean of a channels-last image costs about what the same
 * mean over rows of an image in ONNX order does (cycles on the chip,
 * less the supersteps of the input and of the outputs). */
static void channels_last_stats_speed(void)
{
    float a[64], b[64];
    uint64_t rows = stats_cycles(false, true, a);
    uint64_t pool = stats_cycles(true, false, NULL), both = stats_cycles(true, true, b);
    uint64_t cols = both > pool ? both - pool : 0;
    if (getenv("RN_VERBOSE"))
        fprintf(stderr, "\n  mean of [2,64,56,56]: %llu cycles over rows (ONNX order), "
                "channels-last: pool %llu, pool + mean %llu, the mean %llu\n", (unsigned long long)rows,
                (unsigned long long)pool, (unsigned long long)both, (unsigned long long)cols);
    for (int c = 0; c < 64; c++)
        CU_ASSERT_DOUBLE_EQUAL(a[c], b[c], 1e-5 * (1 + fabs(a[c])));
    CU_ASSERT(cols > 0 && cols < rows + rows / 2);
}

void test_register(void)
{
    ADD_SUITE("resnet_train", { "a step of a small ResNet simulated against the evaluator's", step_matches_reference },
              { "the loss of a small ResNet falls over 20 simulated steps", loss_falls },
              { "BatchNormalization's mean of a channels-last image at the speed of one over rows",
                channels_last_stats_speed });
}
