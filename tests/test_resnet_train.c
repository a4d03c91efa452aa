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
    for (int i = 0; i < g->n_inputs; i++) {
        const graph_tensor *t = &g->tensors[g->inputs[i]];
        in[i] = (graph_value){ .dtype = t->dtype, .shape = t->shape,
                               .data = !strcmp(t->name, "x") ? (void *)x_data : (void *)label_data };
    }
}

static graph *trained(const train_options *o, train_info *info)
{
    graph *g = mini_resnet();
    char err[800];
    bool ok = train_prepare(g, o, true, info, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    return g;
}

static void step_matches_reference(void)
{
    train_options o;
    train_options_default(&o);
    o.loss = "softmax-ce:logits:labels";
    o.lr = 0.1;
    o.momentum = 0.9;
    o.anchor_gradients = true;
    train_info info;
    graph *sim = trained(&o, &info);
    if (getenv("DUMP")) { char *s = graph_dump_string(sim); fputs(s, stderr); free(s); }
    graph_value in[2], out_sim[64];
    data(in, sim);
    char err[800];
    simulate_result r;
    lower_options lo = { .machine = gc200(), .tiles = 64 };
    bool ok = simulate_training(sim, &lo, in, 1, out_sim, &r, NULL, NULL, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    graph_free(sim);
}

void test_register(void)
{
    ADD_SUITE("resnet_train", { "a step of a small ResNet simulated against the evaluator's", step_matches_reference });
}
