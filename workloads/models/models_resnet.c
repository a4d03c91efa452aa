/*
 * models_resnet.c — the whole ResNet-50 v1.5 (models.h): for inference as
 * exporters write it (Conv, BatchNormalization on running statistics,
 * Relu), and for training (BatchNormalization on the batch's statistics,
 * the labels as an input).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models_internal.h"

/* How a BatchNormalization's scale starts: 1 +- 0.1, or 0 (the last of
 * a bottleneck block's in training). */
enum rn_scale { RN_SCALE_ONE, RN_SCALE_ZERO };

/* Conv (no bias) -> BatchNormalization [-> Relu], as exported.  For
 * inference (training_mode 0) the compiler folds the BatchNormalization
 * into the weights and the Relu into the convolution's epilogue
 * (frontends/fusion.h); with training_mode 1 it normalises with the
 * batch's mean and variance over N, H and W (the mean and var inputs are
 * the running statistics, which its outputs 1 and 2 update). */
static int rn_conv_bn(model_builder *b, const char *name, int x, int64_t cin, int64_t cout, int64_t k, int64_t stride,
                      bool relu, bool training, enum rn_scale scale)
{
    char w[96], nm[96];
    snprintf(w, sizeof w, "%s.weight", name);
    int64_t wd[4] = { cout, cin, k, k }, cd[1] = { cout };
    /* He initialisation: uniform with variance 2 / fan-in. */
    int ins[2] = { x, model_const(b, w, 4, wd, sqrt(6.0 / (double)(cin * k * k)), 0) };
    int t = model_node(b, GRAPH_OP_CONV, name, ins, 2);
    graph_node *cn = &b->g->nodes[b->g->n_nodes - 1];
    int64_t k2[2] = { k, k }, st[2] = { stride, stride }, pads[4] = { k / 2, k / 2, k / 2, k / 2 };
    graph_set_attr_ints(cn, "kernel_shape", k2, 2);
    graph_set_attr_ints(cn, "strides", st, 2);
    graph_set_attr_ints(cn, "pads", pads, 4);
    static const char *const part[4] = { "scale", "bias", "mean", "var" };
    static const double spread[4] = { 0.1, 0.1, 0.1, 0.1 }, centre[4] = { 1.0, 0.0, 0.0, 1.0 };
    int bn_in[5] = { t, 0, 0, 0, 0 };
    for (int q = 0; q < 4; q++) {
        snprintf(nm, sizeof nm, "%s.bn.%s", name, part[q]);
        bool zero = q == 0 && scale == RN_SCALE_ZERO;
        bn_in[q + 1] = model_const(b, nm, 1, cd, zero ? 0 : spread[q], zero ? 0 : centre[q]);
    }
    /* In training the running mean and variance are outputs 1 and 2,
     * updated with momentum 0.9 as the MLPerf reference does (training
     * turns them into variables, frontends/autodiff.h). */
    int outs[3];
    for (int q = 0; q < (training ? 3 : 1); q++) {
        snprintf(nm, sizeof nm, "%s.bn%s", name, q == 0 ? "" : q == 1 ? ".running_mean" : ".running_var");
        char *unique = graph_unique_name(b->g, nm);
        outs[q] = graph_add_tensor(b->g, unique);
        free(unique);
    }
    snprintf(nm, sizeof nm, "%s.bn", name);
    int k_bn = graph_add_node(b->g, GRAPH_OP_BATCHNORM, nm, bn_in, 5, outs, training ? 3 : 1);
    graph_set_attr_float(&b->g->nodes[k_bn], "epsilon", 1e-5);
    if (training) {
        graph_set_attr_int(&b->g->nodes[k_bn], "training_mode", 1);
        graph_set_attr_float(&b->g->nodes[k_bn], "momentum", 0.9);
    }
    t = outs[0];
    if (relu) {
        snprintf(nm, sizeof nm, "%s.relu", name);
        t = model_node(b, GRAPH_OP_RELU, nm, &t, 1);
    }
    return t;
}

/* A bottleneck block: 1x1 (mid), 3x3 (mid, the block's stride: v1.5),
 * 1x1 (out), plus the shortcut (a 1x1 projection where the shape
 * changes), then Relu.  For training the last BatchNormalization's scale
 * starts at zero, as the MLPerf reference initialises it (Goyal et al.,
 * "Accurate, Large Minibatch SGD", 2017, section 5.1; the reference's
 * bn_output_scale 0): each block starts as its shortcut, which keeps
 * the first steps of a deep network from amplifying the rounding of the
 * arithmetic (batch statistics over few values a channel do). */
static int rn_block(model_builder *b, const char *name, int x, int64_t cin, int64_t mid, int64_t cout, int64_t stride,
                    bool training)
{
    char nm[96];
    snprintf(nm, sizeof nm, "%s.conv1", name);
    int t = rn_conv_bn(b, nm, x, cin, mid, 1, 1, true, training, RN_SCALE_ONE);
    snprintf(nm, sizeof nm, "%s.conv2", name);
    t = rn_conv_bn(b, nm, t, mid, mid, 3, stride, true, training, RN_SCALE_ONE);
    snprintf(nm, sizeof nm, "%s.conv3", name);
    t = rn_conv_bn(b, nm, t, mid, cout, 1, 1, false, training, training ? RN_SCALE_ZERO : RN_SCALE_ONE);
    int sc = x;
    if (cin != cout || stride != 1) {
        snprintf(nm, sizeof nm, "%s.downsample", name);
        sc = rn_conv_bn(b, nm, x, cin, cout, 1, stride, false, training, RN_SCALE_ONE);
    }
    int in2[2] = { t, sc };
    snprintf(nm, sizeof nm, "%s.add", name);
    t = model_node(b, GRAPH_OP_ADD, nm, in2, 2);
    snprintf(nm, sizeof nm, "%s.relu", name);
    return model_node(b, GRAPH_OP_RELU, nm, &t, 1);
}

/* The network on the input x [batch, 3, size, size]: stem, max pool, the
 * four stages of bottleneck blocks, global average pool and the
 * classifier; returns the logits "fc" [batch, 1000]. */
static int rn_network(model_builder *b, int x, bool training)
{
    int t = rn_conv_bn(b, "conv1", x, 3, 64, 7, 2, true, training, RN_SCALE_ONE);
    t = model_node(b, GRAPH_OP_MAXPOOL, "maxpool", &t, 1);
    graph_node *mp = &b->g->nodes[b->g->n_nodes - 1];
    int64_t k2[2] = { 3, 3 }, st[2] = { 2, 2 }, pads[4] = { 1, 1, 1, 1 };
    graph_set_attr_ints(mp, "kernel_shape", k2, 2);
    graph_set_attr_ints(mp, "strides", st, 2);
    graph_set_attr_ints(mp, "pads", pads, 4);
    static const struct { int64_t mid, out, blocks, stride; } stages[4] = {
        { 64, 256, 3, 1 }, { 128, 512, 4, 2 }, { 256, 1024, 6, 2 }, { 512, 2048, 3, 2 },
    };
    int64_t cin = 64;
    for (int s = 0; s < 4; s++)
        for (int64_t k = 0; k < stages[s].blocks; k++) {
            char nm[48];
            snprintf(nm, sizeof nm, "layer%d.%lld", s + 1, (long long)k);
            t = rn_block(b, nm, t, cin, stages[s].mid, stages[s].out, k == 0 ? stages[s].stride : 1, training);
            cin = stages[s].out;
        }
    t = model_node(b, GRAPH_OP_GLOBALAVERAGEPOOL, "avgpool", &t, 1);
    t = model_node(b, GRAPH_OP_FLATTEN, "flatten", &t, 1);
    graph_set_attr_int(&b->g->nodes[b->g->n_nodes - 1], "axis", 1);
    int64_t wd[2] = { 1000, 2048 }, bd[1] = { 1000 };
    int fc[3] = { t, model_const(b, "fc.weight", 2, wd, 1.0 / sqrt(2048.0), 0),
                  model_const(b, "fc.bias", 1, bd, 0.02, 0) };
    t = model_node(b, GRAPH_OP_GEMM, "fc", fc, 3);
    graph_set_attr_int(&b->g->nodes[b->g->n_nodes - 1], "transB", 1);
    return t;
}

/* resnet50[:bN][:sSIZE]: the batch and image size into *batch and *size;
 * false with err on a bad option. */
static bool rn_parse(const char *spec, long *batch, long *size, char *err, size_t err_size)
{
    const char *opt = spec + 8;
    while (*opt) {
        char *end = NULL;
        long v = opt[0] == ':' && (opt[1] == 'b' || opt[1] == 's') ? model_spec_number(opt + 2, &end) : 0;
        if (!end || end == opt + 2 || (*end && *end != ':') || (opt[1] == 'b' && (v < 1 || v > 64)) ||
            (opt[1] == 's' && (v < 32 || v > 224 || v % 32))) {
            int n = end && end > opt + 2 && (!*end || *end == ':') ? (int)(end - (opt + 2)) : 0;
            snprintf(err, err_size, "%s: expected resnet50[:bN][:sSIZE] with a batch N of 1..64 and an image "
                     "SIZE a multiple of 32 in 32..224%s%s%.*s", spec, n ? ": " : "",
                     n ? (opt[1] == 'b' ? "N is " : "SIZE is ") : "", n, opt + 2);
            return false;
        }
        *(opt[1] == 'b' ? batch : size) = v;
        opt = end;
    }
    return true;
}

graph *models_build_resnet50(const char *spec, bool training, char *err, size_t err_size)
{
    long batch = 1, size = 224;
    if (!rn_parse(spec, &batch, &size, err, err_size))
        return NULL;
    model_builder b = { .g = graph_new(spec, 17), .seed = 0x13198a2e03707344ull, .mask = -1 };
    if (!b.g) {
        snprintf(err, err_size, "out of host memory");
        return NULL;
    }
    int64_t xd[4] = { batch, 3, size, size }, ld[1] = { batch };
    int x = model_input(b.g, "x", GDT_F32, 4, xd);
    if (training)
        model_input(b.g, "labels", GDT_I32, 1, ld);
    graph_add_output(b.g, rn_network(&b, x, training));
    return model_finish(b.g, !training, err, err_size);
}
