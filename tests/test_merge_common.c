/*
 * test_merge_common.c — common subexpressions merged (frontends/
 * merge_common.h): which nodes go, which stay, and that the graph computes
 * bit for bit what it computed before; in a training step, the statistics
 * BatchNormalization's gradient rule recomputes taken from the forward
 * pass.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontends/graph_eval.h"
#include "frontends/merge_common.h"
#include "frontends/autodiff.h"
#include "graph_fixture.h"
#include "test_util.h"

#define D(...) ((const int64_t[]){ __VA_ARGS__ })

static int live_nodes(const graph *g, graph_op op)
{
    int n = 0;
    for (int k = 0; k < g->n_nodes; k++)
        n += !g->nodes[k].removed && g->nodes[k].op == op;
    return n;
}

/* The graph's outputs for inputs of fixed values (the first input's
 * elements i / 7 - 1). */
static graph_value *outputs_of(const graph *g)
{
    graph_value *in = calloc((size_t)g->n_inputs + 1, sizeof *in);
    graph_value *out = calloc((size_t)g->n_outputs + 1, sizeof *out);
    CU_ASSERT_FATAL(in && out);
    for (int i = 0; i < g->n_inputs; i++) {
        const graph_tensor *t = &g->tensors[g->inputs[i]];
        int64_t n = graph_shape_numel(&t->shape);
        in[i] = (graph_value){ t->dtype, t->shape, malloc((size_t)n * sizeof(float)) };
        for (int64_t e = 0; e < n; e++)
            ((float *)in[i].data)[e] = (float)(e % 13) / 7.0f - 1.0f;
    }
    char err[512];
    bool ok = graph_eval(g, in, out, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    for (int i = 0; i < g->n_inputs; i++)
        free(in[i].data);
    free(in);
    return out;
}

static void expect_same_values(const graph *g, graph_value *before)
{
    graph_value *after = outputs_of(g);
    for (int i = 0; i < g->n_outputs; i++) {
        size_t bytes = (size_t)graph_shape_numel(&after[i].shape) * graph_dtype_size(after[i].dtype);
        CU_ASSERT_EQUAL(memcmp(before[i].data, after[i].data, bytes), 0);
        graph_value_free(&before[i]);
        graph_value_free(&after[i]);
    }
    free(before);
    free(after);
}

/* x [4, 6]: two Relus of x, two Muls by equal constants held in two
 * tensors, a Mul by a different constant, two Softmaxes of different axes
 * and two of the same: the duplicates go, the rest stay. */
static void test_duplicates_merged(void)
{
    graph *g = graph_new("dup", 13);
    input(g, "x", 2, D(4, 6));
    scalar(g, "two_a", 2.0f);
    scalar(g, "two_b", 2.0f);
    scalar(g, "three", 3.0f);
    node(g, GRAPH_OP_RELU, "x", "r1");
    node(g, GRAPH_OP_RELU, "x", "r2");
    node(g, GRAPH_OP_MUL, "r1,two_a", "m1");
    node(g, GRAPH_OP_MUL, "r2,two_b", "m2");            /* = m1: r2 is r1, two_b is two_a */
    node(g, GRAPH_OP_MUL, "r2,three", "m3");
    graph_set_attr_int(node(g, GRAPH_OP_SOFTMAX, "m1", "s0"), "axis", 0);
    graph_set_attr_int(node(g, GRAPH_OP_SOFTMAX, "m2", "s1"), "axis", 1);
    graph_set_attr_int(node(g, GRAPH_OP_SOFTMAX, "m2", "s1b"), "axis", 1);
    node(g, GRAPH_OP_ADD, "s0,s1", "a1");
    node(g, GRAPH_OP_ADD, "a1,s1b", "a2");
    node(g, GRAPH_OP_ADD, "a2,m3", "y");
    finish(g, "y");
    graph_value *before = outputs_of(g);
    CU_ASSERT_EQUAL(g->n_nodes, 11);
    CU_ASSERT_EQUAL(merge_common_nodes(g), 3);         /* r2, m2, s1b */
    CU_ASSERT_EQUAL(g->n_nodes, 8);
    CU_ASSERT_EQUAL(live_nodes(g, GRAPH_OP_RELU), 1);
    CU_ASSERT_EQUAL(live_nodes(g, GRAPH_OP_MUL), 2);
    CU_ASSERT_EQUAL(live_nodes(g, GRAPH_OP_SOFTMAX), 2);
    CU_ASSERT_EQUAL(merge_common_nodes(g), 0);         /* nothing left to merge */
    expect_same_values(g, before);
    graph_free(g);
}

/* Two nodes writing graph outputs are both kept (each output has its own
 * node); a chain repeated in full goes in one pass. */
static void test_outputs_kept_chains_merged(void)
{
    graph *g = graph_new("chain", 13);
    input(g, "x", 1, D(8));
    node(g, GRAPH_OP_EXP, "x", "e1");
    node(g, GRAPH_OP_NEG, "e1", "n1");
    node(g, GRAPH_OP_EXP, "x", "e2");
    node(g, GRAPH_OP_NEG, "e2", "n2");
    node(g, GRAPH_OP_SUB, "n1,n2", "d");
    node(g, GRAPH_OP_SIGMOID, "x", "o1");
    node(g, GRAPH_OP_SIGMOID, "x", "o2");
    graph_add_output(g, graph_find_tensor(g, "o1"));
    graph_add_output(g, graph_find_tensor(g, "d"));
    finish(g, "o2");
    graph_value *before = outputs_of(g);
    CU_ASSERT_EQUAL(merge_common_nodes(g), 2);         /* e2 and n2; o1 and o2 stay */
    CU_ASSERT_EQUAL(live_nodes(g, GRAPH_OP_EXP), 1);
    CU_ASSERT_EQUAL(live_nodes(g, GRAPH_OP_NEG), 1);
    CU_ASSERT_EQUAL(live_nodes(g, GRAPH_OP_SIGMOID), 2);
    expect_same_values(g, before);
    graph_free(g);
}

/* Nodes of op in phase reading an input of `numel` elements. */
static int image_nodes(const graph *g, graph_op op, enum graph_phase phase, int64_t numel)
{
    int n = 0;
    for (int k = 0; k < g->n_nodes; k++) {
        const graph_node *x = &g->nodes[k];
        n += !x->removed && x->op == op && x->phase == phase && x->inputs[0] >= 0 &&
             graph_shape_numel(&g->tensors[x->inputs[0]].shape) == numel;
    }
    return n;
}

/* A training step of Conv -> BatchNormalization -> Relu -> GlobalAveragePool
 * -> Gemm: the forward pass reads the image for the mean and the variance;
 * the backward pass takes x - mean and 1 / sqrt(var + eps) from it (no
 * statistic recomputed) and reads the image in two sums, sum(dy) and
 * sum(dy (x - mean)). */
static void test_batchnorm_statistics_shared(void)
{
    rng = 3;
    graph *g = graph_new("bn", 15);
    input(g, "x", 4, D(2, 3, 6, 6));
    int lab = graph_add_tensor(g, "labels");
    g->tensors[lab].dtype = GDT_I32;
    g->tensors[lab].shape = (graph_shape){ .rank = 1, .dims = { 2 } };
    g->tensors[lab].shape_known = true;
    graph_add_input(g, lab);
    cnst(g, "w", 4, D(4, 3, 3, 3), NULL);
    cnst(g, "gamma", 1, D(4), NULL);
    cnst(g, "beta", 1, D(4), NULL);
    cnst(g, "mean", 1, D(4), NULL);
    cnst(g, "var", 1, D(4), (const float[]){ 1, 1, 1, 1 });
    cnst(g, "fc", 2, D(4, 5), NULL);
    graph_set_attr_ints(node(g, GRAPH_OP_CONV, "x,w", "y0"), "pads", D(1, 1, 1, 1), 4);
    graph_set_attr_int(node(g, GRAPH_OP_BATCHNORM, "y0,gamma,beta,mean,var", "y1"), "training_mode", 1);
    node(g, GRAPH_OP_RELU, "y1", "y2");
    node(g, GRAPH_OP_GLOBALAVERAGEPOOL, "y2", "y3");
    graph_set_attr_int(node(g, GRAPH_OP_FLATTEN, "y3", "y4"), "axis", 1);
    node(g, GRAPH_OP_MATMUL, "y4,fc", "logits");
    finish(g, "logits");
    train_options o;
    train_options_default(&o);
    o.loss = "softmax-ce:logits:labels";
    o.lr = 0.1;
    train_info info;
    char err[800];
    bool ok = train_prepare(g, &o, false, &info, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    const int64_t image = 2 * 4 * 6 * 6;
    CU_ASSERT_EQUAL(image_nodes(g, GRAPH_OP_REDUCEMEAN, GRAPH_PHASE_FORWARD, image), 2);
    CU_ASSERT_EQUAL(image_nodes(g, GRAPH_OP_REDUCEMEAN, GRAPH_PHASE_BACKWARD, image), 0);
    CU_ASSERT_EQUAL(image_nodes(g, GRAPH_OP_REDUCESUM, GRAPH_PHASE_BACKWARD, image), 2);
    CU_ASSERT_EQUAL(image_nodes(g, GRAPH_OP_SUB, GRAPH_PHASE_BACKWARD, image), 0);
    CU_ASSERT_EQUAL(image_nodes(g, GRAPH_OP_SUB, GRAPH_PHASE_FORWARD, image), 1);
    graph_free(g);
}

void test_register(void)
{
    ADD_SUITE("merge_common",
              { "duplicate nodes merged, bit-identical outputs", test_duplicates_merged },
              { "graph outputs kept, repeated chains merged", test_outputs_kept_chains_merged },
              { "BatchNormalization's statistics taken from the forward pass", test_batchnorm_statistics_shared });
}
