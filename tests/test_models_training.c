/*
 * test_models_training.c — the built-in training models
 * (workloads/models/models.h): BERT pre-training's inputs, outputs, tied
 * weights and loss; its host evaluation (finite logits, each sequence of a
 * batch computed as alone, the attention mask hiding the padding); ResNet-50
 * with BatchNormalization on batch statistics, the same network as the
 * inference build otherwise; and their compiles for a GC200 with f16
 * matmuls through the inference path (fusion, decomposition, lowering).
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontends/decompose.h"
#include "frontends/fusion.h"
#include "frontends/graph_eval.h"
#include "frontends/lower.h"
#include "isa/elf/executable.h"
#include "sim/program/machine.h"
#include "test_util.h"
#include "workloads/models/convergence.h"
#include "workloads/models/models.h"

#define VOCAB 30522

static graph *build(const char *spec)
{
    char err[1024];
    graph *g = models_build_training(spec, err, sizeof err);
    if (!g)
        fprintf(stderr, "%s\n", err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    return g;
}

static const graph_node *node_named(const graph *g, const char *name)
{
    for (int k = 0; k < g->n_nodes; k++)
        if (!strcmp(g->nodes[k].name, name))
            return &g->nodes[k];
    return NULL;
}

/* Tensor t has this name, dtype and shape. */
static bool tensor_is(const graph *g, int t, const char *name, graph_dtype dtype, int rank, const int64_t *dims)
{
    const graph_tensor *x = &g->tensors[t];
    if (strcmp(x->name, name) || x->dtype != dtype || x->shape.rank != rank)
        return false;
    for (int d = 0; d < rank; d++)
        if (x->shape.dims[d] != dims[d])
            return false;
    return true;
}

/* Zeroed values for every input of g. */
static graph_value *zero_inputs(const graph *g)
{
    graph_value *in = calloc((size_t)g->n_inputs, sizeof *in);
    for (int i = 0; i < g->n_inputs; i++) {
        const graph_tensor *t = &g->tensors[g->inputs[i]];
        in[i] = (graph_value){ t->dtype, t->shape,
                               calloc((size_t)graph_shape_numel(&t->shape), graph_dtype_size(t->dtype)) };
    }
    return in;
}

static void free_values(graph_value *v, int n)
{
    for (int i = 0; i < n; i++)
        graph_value_free(&v[i]);
    free(v);
}

static graph_value *evaluate(const graph *g, const graph_value *in)
{
    char err[1024];
    graph_value *out = calloc((size_t)g->n_outputs, sizeof *out);
    bool ok = graph_eval(g, in, out, err, sizeof err);
    if (!ok)
        fprintf(stderr, "%s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    return out;
}

/* The largest |a[i] - b[i]| over n f32 values. */
static double max_diff(const float *a, const float *b, size_t n)
{
    double worst = 0;
    for (size_t i = 0; i < n; i++)
        worst = fmax(worst, fabs((double)a[i] - (double)b[i]));
    return worst;
}

static bool all_finite(const graph_value *v)
{
    for (int64_t i = 0; i < graph_shape_numel(&v->shape); i++)
        if (!isfinite(((const float *)v->data)[i]))
            return false;
    return true;
}

/* Compile g for a GC200 with f16 matmuls; true when it gave an executable. */
static bool compile_gc200(const graph *g, lower_report *r)
{
    static machine m;
    char err[1024];
    CU_ASSERT_TRUE_FATAL(machine_preset("gc200", &m, err, sizeof err));
    lower_options o = { .machine = &m, .f16_matmul = true };
    ipu_exe *e = lower_graph(g, &o, r, err, sizeof err);
    if (!e) {
        fprintf(stderr, "%s\n", err);
        return false;
    }
    exe_free(e);
    return true;
}

/* ---- BERT ----------------------------------------------------------------- */

static void test_bert_graph(void)
{
    CU_ASSERT_EQUAL(models_bert_masked_positions(128), 20);
    CU_ASSERT_EQUAL(models_bert_masked_positions(512), 76);
    CU_ASSERT_EQUAL(models_bert_masked_positions(64), 10);      /* round(9.6) */
    CU_ASSERT_EQUAL(models_bert_masked_positions(384), 58);     /* round(57.6) */
    CU_ASSERT_EQUAL(models_bert_masked_positions(2), 1);

    graph *g = build("bert-base:s128:l1:b2");
    static const char *const names[6] = { "input_ids", "token_type_ids", "attention_mask", "masked_lm_positions",
                                          "masked_lm_ids", "next_sentence_label" };
    int64_t bs[2] = { 2, 128 }, bp[2] = { 2, 20 }, b[1] = { 2 };
    const int64_t *dims[6] = { bs, bs, bs, bp, bp, b };
    CU_ASSERT_EQUAL_FATAL(g->n_inputs, 6);
    for (int i = 0; i < 6; i++)
        CU_ASSERT_TRUE(tensor_is(g, g->inputs[i], names[i], GDT_I32, i == 5 ? 1 : 2, dims[i]));
    int64_t mlm[3] = { 2, 20, VOCAB }, nsp[2] = { 2, 2 }, table[2] = { VOCAB, 768 };
    CU_ASSERT_EQUAL_FATAL(g->n_outputs, 2);
    CU_ASSERT_TRUE(tensor_is(g, g->outputs[0], "mlm_logits", GDT_F32, 3, mlm));
    CU_ASSERT_TRUE(tensor_is(g, g->outputs[1], "nsp_logits", GDT_F32, 2, nsp));
    CU_ASSERT_STRING_EQUAL(models_training_loss(g),
                           "softmax-ce:mlm_logits:masked_lm_ids+softmax-ce:nsp_logits:next_sentence_label");
    /* tied weights: the decoder reads the lookup's own table, transposed */
    const graph_node *dec = node_named(g, "cls.predictions.decoder"), *look = node_named(g, "embeddings.words");
    CU_ASSERT_PTR_NOT_NULL_FATAL(dec);
    CU_ASSERT_PTR_NOT_NULL_FATAL(look);
    CU_ASSERT_EQUAL(dec->op, GRAPH_OP_GEMM);
    CU_ASSERT_EQUAL(graph_attr_int(dec, "transB"), 1);
    CU_ASSERT_EQUAL(look->op, GRAPH_OP_GATHER);
    CU_ASSERT_EQUAL(dec->inputs[1], look->inputs[0]);
    CU_ASSERT_TRUE(graph_is_constant(g, dec->inputs[1]));
    CU_ASSERT_TRUE(tensor_is(g, dec->inputs[1], "embeddings.word_embeddings", GDT_F32, 2, table));
    /* plain ops only (the gradient pass differentiates them), and the
     * position table kept as a weight (no folding) */
    int fused = 0, gathers = 0;
    for (int k = 0; k < g->n_nodes; k++) {
        fused += g->nodes[k].op == GRAPH_OP_FUSED_MATMUL || g->nodes[k].op == GRAPH_OP_FUSED_CONV;
        gathers += g->nodes[k].op == GRAPH_OP_GATHER;
    }
    CU_ASSERT_EQUAL(fused, 0);
    CU_ASSERT_EQUAL(gathers, 5);   /* words, token types, positions, masked rows, [CLS] rows */
    CU_ASSERT_TRUE(graph_find_tensor(g, "embeddings.position_embeddings") >= 0);
    graph_free(g);

    g = build("bert-large:s512:l2:b1");
    int64_t mlm_l[3] = { 1, 76, VOCAB }, table_l[2] = { VOCAB, 1024 };
    CU_ASSERT_TRUE(tensor_is(g, g->outputs[0], "mlm_logits", GDT_F32, 3, mlm_l));
    CU_ASSERT_TRUE(tensor_is(g, graph_find_tensor(g, "embeddings.word_embeddings"), "embeddings.word_embeddings",
                             GDT_F32, 2, table_l));
    CU_ASSERT_PTR_NOT_NULL(node_named(g, "layer1.output.layernorm"));
    CU_ASSERT_PTR_NULL(node_named(g, "layer2.output.layernorm"));
    graph_free(g);
}

static void test_bad_specs(void)
{
    char err[512];
    CU_ASSERT_PTR_NULL(models_build_training("bert-base:b0", err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "bert-base:b0: expected bert-base[:sSEQ][:lLAYERS][:bBATCH] (SEQ even, 2..512; "
                                "LAYERS 1..24; BATCH 1..64): BATCH is 0");
    CU_ASSERT_PTR_NULL(models_build_training("bert-large:s3", err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, ": SEQ is 3"));
    CU_ASSERT_PTR_NULL(models_build_training("resnet50:b65", err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, ": N is 65"));
    CU_ASSERT_PTR_NULL(models_build_training("matmul:2x2x2", err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "no built-in training model"));
    /* the inference specs take no batch, and are not training graphs */
    CU_ASSERT_PTR_NULL(models_build("bert-base:b2", err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "bert-base:b2: expected bert-base[:sSEQ][:lLAYERS] (SEQ even, 2..512; LAYERS 1..24)");
    graph *g = models_build("bert-base:s16", err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_PTR_NULL(models_training_loss(g));
    graph_free(g);
}

/* Sequence `which` of a pre-training batch: `valid` tokens then padding,
 * two segments, masked positions spread over the valid tokens. */
static void fill_sequence(graph_value *in, int64_t b, int64_t seq, int64_t p, int which, int64_t valid)
{
    int32_t *ids = in[0].data, *types = in[1].data, *mask = in[2].data, *pos = in[3].data, *label = in[4].data;
    for (int64_t s = 0; s < seq; s++) {
        ids[b * seq + s] = s < valid ? (int32_t)((s * 7919 + which * 104729 + 101) % VOCAB) : 0;
        types[b * seq + s] = s >= valid / 2 && s < valid;
        mask[b * seq + s] = s < valid;
    }
    for (int64_t j = 0; j < p; j++) {
        pos[b * p + j] = (int32_t)((j * 13 + which * 3) % valid);
        label[b * p + j] = (int32_t)((j * 31 + which) % VOCAB);
    }
    ((int32_t *)in[5].data)[b] = which & 1;
}

/* A batch of two sequences gives what each gives alone: the rows of both
 * heads, to within the reordering of the f32 products' sums that a
 * different number of rows gives OpenBLAS (K <= 3072 terms of size O(1):
 * well under 1e-3 after the layer norms); a wrong row offset in the
 * masked-row lookup, a sequence attending to the other's keys or the
 * [CLS] row of the wrong sequence each move the logits by O(0.1). */
static void test_bert_batch_is_per_sequence(void)
{
    const int64_t seq = 128, p = 20;
    graph *g2 = build("bert-base:s128:l1:b2"), *g1 = build("bert-base:s128:l1:b1");
    graph_value *in2 = zero_inputs(g2);
    fill_sequence(in2, 0, seq, p, 0, 128);
    fill_sequence(in2, 1, seq, p, 1, 77);
    graph_value *out2 = evaluate(g2, in2);
    CU_ASSERT_TRUE(all_finite(&out2[0]));
    CU_ASSERT_TRUE(all_finite(&out2[1]));
    const float *mlm2 = out2[0].data, *nsp2 = out2[1].data;
    double spread = 0;
    for (int b = 0; b < 2; b++) {
        graph_value *in1 = zero_inputs(g1);
        fill_sequence(in1, 0, seq, p, b, b ? 77 : 128);
        graph_value *out1 = evaluate(g1, in1);
        const float *mlm1 = out1[0].data, *nsp1 = out1[1].data;
        CU_ASSERT(max_diff(mlm2 + (size_t)b * p * VOCAB, mlm1, (size_t)p * VOCAB) < 1e-3);
        CU_ASSERT(max_diff(nsp2 + b * 2, nsp1, 2) < 1e-3);
        spread = fmax(spread, max_diff(mlm1, mlm1 + VOCAB, VOCAB));
        free_values(out1, g1->n_outputs);
        free_values(in1, g1->n_inputs);
    }
    /* the logits differ between rows: the comparison above can fail */
    CU_ASSERT(spread > 0.1);
    CU_ASSERT(max_diff(mlm2, mlm2 + (size_t)p * VOCAB, (size_t)p * VOCAB) > 0.1);
    free_values(out2, g2->n_outputs);
    free_values(in2, g2->n_inputs);
    graph_free(g2);
    graph_free(g1);
}

/* attention_mask 0 hides a position's key from every query: changing the
 * padded tokens changes nothing of the valid positions (the next-sentence
 * logits from the [CLS] row, the masked rows' logits: exp(-10000) is 0,
 * bit-identical), while without the mask the same change moves them. */
static void test_bert_attention_mask(void)
{
    const int64_t seq = 128, p = 20, valid = 90;
    graph *g = build("bert-base:s128:l1:b1");
    graph_value *in = zero_inputs(g);
    fill_sequence(in, 0, seq, p, 0, valid);
    graph_value *a = evaluate(g, in);
    int32_t *ids = in[0].data, *mask = in[2].data;
    for (int64_t s = valid; s < seq; s++)
        ids[s] = (int32_t)(1000 + s * 37);
    graph_value *b = evaluate(g, in);
    CU_ASSERT_EQUAL(memcmp(a[0].data, b[0].data, (size_t)p * VOCAB * 4), 0);
    CU_ASSERT_EQUAL(memcmp(a[1].data, b[1].data, 2 * 4), 0);
    for (int64_t s = 0; s < seq; s++)
        mask[s] = 1;
    graph_value *c = evaluate(g, in);
    for (int64_t s = valid; s < seq; s++)
        ids[s] = 0;
    graph_value *d = evaluate(g, in);
    CU_ASSERT(max_diff(c[1].data, d[1].data, 2) > 1e-3);
    CU_ASSERT(max_diff(c[0].data, d[0].data, (size_t)p * VOCAB) > 1e-3);
    free_values(a, 2);
    free_values(b, 2);
    free_values(c, 2);
    free_values(d, 2);
    free_values(in, g->n_inputs);
    graph_free(g);
}

/* Through the inference compile: the dense layers' bias and GELU fused
 * back into the matmuls (q, k, v, attention output, FFN in and out, the
 * masked-LM transform and decoder, pooler, classifier: 10, two with the
 * GELU), then lowered for a GC200. */
static void test_bert_compiles(void)
{
    static const char *const specs[2] = { "bert-base:s128:l1:b1", "bert-base:s64:l1:b2" };
    for (int i = 0; i < 2; i++) {
        graph *g = build(specs[i]);
        char err[1024];
        fusion_stats fs;
        CU_ASSERT_TRUE_FATAL(fusion_run_all(g, &fs, err, sizeof err));
        CU_ASSERT_EQUAL(fs.matmul_epilogues, 10);
        CU_ASSERT_EQUAL(fs.gelus, 2);
        CU_ASSERT_TRUE_FATAL(decompose_graph(g, NULL, err, sizeof err));
        lower_report r;
        CU_ASSERT_TRUE(compile_gc200(g, &r));
        CU_ASSERT_EQUAL(r.tiles_used, 1472);
        CU_ASSERT(r.max_tile_bytes <= r.memory_bytes);
        graph_free(g);
    }
}

/* ---- ResNet-50 ------------------------------------------------------------ */

/* BatchNormalization nodes of g with training_mode 1, and their count. */
static int batchnorms(const graph *g, int *training)
{
    int n = 0;
    *training = 0;
    for (int k = 0; k < g->n_nodes; k++)
        if (g->nodes[k].op == GRAPH_OP_BATCHNORM) {
            n++;
            *training += graph_attr_find(&g->nodes[k], "training_mode") &&
                         graph_attr_int(&g->nodes[k], "training_mode") == 1;
        }
    return n;
}

static bool all_zero(const graph_tensor *t)
{
    for (int64_t i = 0; i < graph_shape_numel(&t->shape); i++)
        if (graph_load_f64(t->dtype, t->data, (size_t)i) != 0)
            return false;
    return true;
}

/* The same nodes in the same order reading the same constants, but for
 * every block's last BatchNormalization scale, which training (a) starts
 * at zero as the MLPerf reference does; *zeroed counts those. */
static bool same_network(const graph *a, const graph *b, int *zeroed)
{
    *zeroed = 0;
    if (a->n_nodes != b->n_nodes)
        return false;
    for (int k = 0; k < a->n_nodes; k++) {
        const graph_node *x = &a->nodes[k], *y = &b->nodes[k];
        if (x->op != y->op || strcmp(x->name, y->name) || x->n_inputs != y->n_inputs)
            return false;
        for (int i = 0; i < x->n_inputs; i++) {
            const graph_tensor *s = &a->tensors[x->inputs[i]], *t = &b->tensors[y->inputs[i]];
            if (strcmp(s->name, t->name) || !graph_shape_equal(&s->shape, &t->shape) || !s->data != !t->data)
                return false;
            size_t len = strlen(s->name);
            if (s->data && len > 15 && !strcmp(s->name + len - 15, ".conv3.bn.scale")) {
                if (!all_zero(s) || all_zero(t))
                    return false;
                ++*zeroed;
                continue;
            }
            if (s->data && memcmp(s->data, t->data, (size_t)graph_shape_numel(&s->shape) * graph_dtype_size(s->dtype)))
                return false;
        }
    }
    return true;
}

static void set_training_mode(graph *g, int mode)
{
    for (int k = 0; k < g->n_nodes; k++)
        if (g->nodes[k].op == GRAPH_OP_BATCHNORM)
            graph_set_attr_int(&g->nodes[k], "training_mode", mode);
}

/* The running statistics' outputs kept (training) or left out, as
 * BatchNormalization allows them only in training mode. */
static void set_stat_outputs(graph *g, int keep)
{
    static int saved[64][2];
    int i = 0;
    for (int k = 0; k < g->n_nodes && i < 64; k++) {
        graph_node *n = &g->nodes[k];
        if (n->op != GRAPH_OP_BATCHNORM || n->n_outputs < 3)
            continue;
        for (int q = 0; q < 2; q++) {
            if (!keep && n->outputs[q + 1] >= 0) {
                saved[i][q] = n->outputs[q + 1];
                n->outputs[q + 1] = -1;
            } else if (keep && n->outputs[q + 1] < 0) {
                n->outputs[q + 1] = saved[i][q];
            }
        }
        i++;
    }
}

/* Images: image 0 the same in both batches, image 1 not. */
static void fill_images(graph_value *x, int second)
{
    float *v = x->data;
    int64_t per = graph_shape_numel(&x->shape) / 2;
    for (int64_t i = 0; i < per; i++) {
        v[i] = (float)sin(0.001 * (double)i);
        v[per + i] = (float)cos(0.0037 * (double)i * (second + 1));
    }
}

static void test_resnet_training(void)
{
    char err[512];
    graph *g = build("resnet50:b2:s64");
    int64_t xd[4] = { 2, 3, 64, 64 }, ld[1] = { 2 }, fc[2] = { 2, 1000 };
    CU_ASSERT_EQUAL_FATAL(g->n_inputs, 2);
    CU_ASSERT_TRUE(tensor_is(g, g->inputs[0], "x", GDT_F32, 4, xd));
    CU_ASSERT_TRUE(tensor_is(g, g->inputs[1], "labels", GDT_I32, 1, ld));
    CU_ASSERT_EQUAL_FATAL(g->n_outputs, 1);
    CU_ASSERT_TRUE(tensor_is(g, g->outputs[0], "fc", GDT_F32, 2, fc));
    CU_ASSERT_STRING_EQUAL(models_training_loss(g), "softmax-ce:fc:labels");
    int training;
    CU_ASSERT_EQUAL(batchnorms(g, &training), 53);
    CU_ASSERT_EQUAL(training, 53);
    graph *inf = models_build("resnet50:b2:s64", err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(inf);
    CU_ASSERT_EQUAL(batchnorms(inf, &training), 53);
    CU_ASSERT_EQUAL(training, 0);
    int zeroed;
    CU_ASSERT_TRUE(same_network(g, inf, &zeroed));
    CU_ASSERT_EQUAL(zeroed, 16);
    /* in training each BatchNormalization updates its running statistics
     * (outputs 1 and 2) with momentum 0.9 */
    int with_stats = 0;
    for (int k = 0; k < g->n_nodes; k++) {
        const graph_node *n = &g->nodes[k];
        if (n->op == GRAPH_OP_BATCHNORM && n->n_outputs == 3 && n->outputs[1] >= 0 && n->outputs[2] >= 0 &&
            graph_attr_float(n, "momentum") == 0.9)
            with_stats++;
    }
    CU_ASSERT_EQUAL(with_stats, 53);
    CU_ASSERT(graph_find_tensor(g, "layer1.0.conv2.bn.running_var") >= 0);
    /* with running statistics the inference compile folds all 53 */
    fusion_stats fs;
    CU_ASSERT_TRUE_FATAL(fusion_run_all(inf, &fs, err, sizeof err));
    CU_ASSERT_EQUAL(fs.batchnorms_folded, 53);
    CU_ASSERT_TRUE_FATAL(decompose_graph(inf, NULL, err, sizeof err));
    lower_report r;
    CU_ASSERT_TRUE(compile_gc200(inf, &r));
    graph_free(inf);

    /* batch statistics: image 0's logits depend on image 1 in training
     * mode, and not with the running statistics */
    graph_value *in = zero_inputs(g);
    double moved[2];
    for (int mode = 1; mode >= 0; mode--) {
        set_training_mode(g, mode);
        set_stat_outputs(g, mode);
        fill_images(&in[0], 0);
        graph_value *a = evaluate(g, in);
        fill_images(&in[0], 1);
        graph_value *b = evaluate(g, in);
        CU_ASSERT_TRUE(all_finite(&a[0]));
        moved[mode] = max_diff(a[0].data, b[0].data, 1000);
        CU_ASSERT(max_diff((float *)a[0].data + 1000, (float *)b[0].data + 1000, 1000) > 1e-3);
        free_values(a, 1);
        free_values(b, 1);
    }
    CU_ASSERT(moved[1] > 1e-3);
    CU_ASSERT(moved[0] < 1e-5);
    free_values(in, g->n_inputs);

    graph_free(g);
}

/* MLPerf's reference convergence points read by global batch: a point
 * itself, between two (linear), beyond the ends (the nearest), BERT in
 * samples, models without a reference. */
static void test_convergence(void)
{
    convergence c;
    CU_ASSERT_STRING_EQUAL(convergence_family("resnet50:b1:s32"), "resnet50");
    CU_ASSERT_STRING_EQUAL(convergence_family("bert-large:s128:l24"), "bert");
    CU_ASSERT_PTR_NULL(convergence_family("resnet50x"));
    CU_ASSERT_PTR_NULL(convergence_family("matmul:64x64x64"));
    CU_ASSERT_TRUE_FATAL(convergence_at("resnet50", 3264, &c));
    CU_ASSERT_DOUBLE_EQUAL(c.epochs, 35.2, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(c.samples, 35.2 * 1281167, 1e-3);
    CU_ASSERT_TRUE(c.batch_lo == 3264 && c.batch_hi == 3264);
    CU_ASSERT_TRUE_FATAL(convergence_at("resnet50", 3680, &c));     /* halfway from 3264 to 4096 */
    CU_ASSERT_DOUBLE_EQUAL(c.epochs, 37.6, 1e-9);
    CU_ASSERT_TRUE(c.batch_lo == 3264 && c.batch_hi == 4096);
    CU_ASSERT_TRUE_FATAL(convergence_at("resnet50", 16, &c));       /* below the smallest: its epochs */
    CU_ASSERT_DOUBLE_EQUAL(c.epochs, 35.0, 1e-9);
    CU_ASSERT_TRUE_FATAL(convergence_at("resnet50", 1e6, &c));
    CU_ASSERT_DOUBLE_EQUAL(c.epochs, 84.5, 1e-9);
    CU_ASSERT_TRUE_FATAL(convergence_at("bert", 256, &c));
    CU_ASSERT_DOUBLE_EQUAL(c.samples, 2552704, 1e-9);
    CU_ASSERT_EQUAL(c.epochs, 0);
    CU_ASSERT_FALSE(convergence_at("gpt3", 256, &c));
    CU_ASSERT_FALSE(convergence_at("bert", 0, &c));
}

void test_register(void)
{
    ADD_SUITE("models_training",
              { "BERT pre-training: inputs, outputs, tied decoder, loss", test_bert_graph },
              { "bad training specs; inference specs unchanged", test_bad_specs },
              { "BERT: a batch computes each sequence as alone", test_bert_batch_is_per_sequence },
              { "BERT: the attention mask hides padding", test_bert_attention_mask },
              { "BERT pre-training compiles for GC200 (f16 matmuls)", test_bert_compiles },
              { "ResNet-50 training: batch statistics, same network, compiles", test_resnet_training },
              { "MLPerf convergence points by global batch", test_convergence });
}
