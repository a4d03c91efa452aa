/*
 * test_fusion.c — the inference fusions on graphs built with the IR API:
 * each test shows the graph before and after (exact listings) and checks
 * that the fused graph evaluates to the same values on random inputs.
 * Also the cases that must not fuse.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontends/fusion.h"
#include "frontends/graph_eval.h"
#include "graph_fixture.h"
#include "test_util.h"

/* Evaluate on the inputs (random, from a fixed seed); malloc'd output 0. */
static float *run(const graph *g, size_t *n)
{
    graph_value in[4];
    uint32_t keep = rng;
    rng = 99;
    for (int i = 0; i < g->n_inputs; i++) {
        const graph_tensor *x = &g->tensors[g->inputs[i]];
        size_t c = (size_t)graph_shape_numel(&x->shape);
        float *v = malloc(c * sizeof *v);
        for (size_t k = 0; k < c; k++)
            v[k] = rnd();
        in[i] = (graph_value){ .dtype = GDT_F32, .shape = x->shape, .data = v };
    }
    rng = keep;
    graph_value out;
    char err[512];
    bool ok = graph_eval(g, in, &out, err, sizeof err);
    for (int i = 0; i < g->n_inputs; i++)
        free(in[i].data);
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    *n = (size_t)graph_shape_numel(&out.shape);
    return out.data;
}

/* Fuse and check: the listing after, and the values against before's.
 * The fused graph rounds once where the original rounded after every op,
 * so the two agree to a few f32 ulps of the values involved. */
static void fuse_and_compare(graph *g, const char *after, fusion_stats *st)
{
    size_t n0, n1;
    float *before = run(g, &n0);
    char err[512];
    bool ok = fusion_run_all(g, st, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    expect_listing(g, after);
    float *fused = run(g, &n1);
    CU_ASSERT_EQUAL_FATAL(n0, n1);
    double worst = 0;
    for (size_t i = 0; i < n0; i++) {
        double e = fabs((double)before[i] - fused[i]) / (1e-5 + 1e-5 * fabs(before[i]));
        worst = e > worst ? e : worst;
    }
    CU_ASSERT(worst <= 1.0);
    if (worst > 1.0)
        fprintf(stderr, "\n  fused differs: worst err/tol %g\n", worst);
    free(before);
    free(fused);
}

static const int64_t d48[] = { 4, 8 }, d816[] = { 8, 16 }, d16[] = { 16 }, d168[] = { 16, 8 }, d8[] = { 8 };
static const int64_t dm1[] = { -1 };

/* The exact GELU the way PyTorch exports it: Div, Erf, Add, Mul, Mul. */
static void gelu_pytorch(graph *g, const char *x, const char *out)
{
    char b[64];
    snprintf(b, sizeof b, "%s,sqrt2", x);
    node(g, GRAPH_OP_DIV, b, "ge_div");
    node(g, GRAPH_OP_ERF, "ge_div", "ge_erf");
    node(g, GRAPH_OP_ADD, "ge_erf,one", "ge_add");
    snprintf(b, sizeof b, "%s,ge_add", x);
    node(g, GRAPH_OP_MUL, b, "ge_mul");
    snprintf(b, sizeof b, "ge_mul,half");
    node(g, GRAPH_OP_MUL, b, out);
}

static void decomposed_layernorm(graph *g, const char *x, const char *out)
{
    char b[64];
    graph_node *n = node(g, GRAPH_OP_REDUCEMEAN, x, "ln_mean");
    graph_set_attr_ints(n, "axes", dm1, 1);
    snprintf(b, sizeof b, "%s,ln_mean", x);
    node(g, GRAPH_OP_SUB, b, "ln_d");
    node(g, GRAPH_OP_POW, "ln_d,two", "ln_sq");
    n = node(g, GRAPH_OP_REDUCEMEAN, "ln_sq", "ln_var");
    graph_set_attr_ints(n, "axes", dm1, 1);
    node(g, GRAPH_OP_ADD, "ln_var,eps", "ln_ve");
    node(g, GRAPH_OP_SQRT, "ln_ve", "ln_std");
    node(g, GRAPH_OP_DIV, "ln_d,ln_std", "ln_n");
    node(g, GRAPH_OP_MUL, "ln_n,gamma", "ln_g");
    node(g, GRAPH_OP_ADD, "ln_g,beta", out);
}

/* A BERT feed-forward block: MatMul+bias+GELU, MatMul+bias, residual,
 * LayerNorm in its decomposed form. */
static void test_bert_ffn(void)
{
    graph *g = graph_new("ffn", 13);
    input(g, "x", 2, d48);
    cnst(g, "W1", 2, d816, NULL);
    cnst(g, "b1", 1, d16, NULL);
    cnst(g, "W2", 2, d168, NULL);
    cnst(g, "b2", 1, d8, NULL);
    cnst(g, "gamma", 1, d8, NULL);
    cnst(g, "beta", 1, d8, NULL);
    scalar(g, "sqrt2", 1.4142135381698608f);
    scalar(g, "one", 1);
    scalar(g, "half", 0.5f);
    scalar(g, "two", 2);
    scalar(g, "eps", 1e-12f);
    node(g, GRAPH_OP_MATMUL, "x,W1", "h1");
    node(g, GRAPH_OP_ADD, "h1,b1", "h1b");
    gelu_pytorch(g, "h1b", "act");
    node(g, GRAPH_OP_MATMUL, "act,W2", "h2");
    node(g, GRAPH_OP_ADD, "b2,h2", "h2b");                 /* bias first: Add commutes */
    node(g, GRAPH_OP_ADD, "h2b,x", "res");
    decomposed_layernorm(g, "res", "y");
    finish(g, "y");
    static const char consts[] = "graph ffn opset 13\n"
                                 "  input x f32[4,8]\n"
                                 "  const W1 f32[8,16]\n"
                                 "  const b1 f32[16]\n"
                                 "  const W2 f32[16,8]\n"
                                 "  const b2 f32[8]\n"
                                 "  const gamma f32[8]\n"
                                 "  const beta f32[8]\n";
    char before[4096];
    snprintf(before, sizeof before, "%s%s", consts,
             "  const sqrt2 f32[]\n"
             "  const one f32[]\n"
             "  const half f32[]\n"
             "  const two f32[]\n"
             "  const eps f32[]\n"
             "  MatMul(x, W1) -> h1 f32[4,16]\n"
             "  Add(h1, b1) -> h1b f32[4,16]\n"
             "  Div(h1b, sqrt2) -> ge_div f32[4,16]\n"
             "  Erf(ge_div) -> ge_erf f32[4,16]\n"
             "  Add(ge_erf, one) -> ge_add f32[4,16]\n"
             "  Mul(h1b, ge_add) -> ge_mul f32[4,16]\n"
             "  Mul(ge_mul, half) -> act f32[4,16]\n"
             "  MatMul(act, W2) -> h2 f32[4,8]\n"
             "  Add(b2, h2) -> h2b f32[4,8]\n"
             "  Add(h2b, x) -> res f32[4,8]\n"
             "  ReduceMean(res) {axes=[-1]} -> ln_mean f32[4,1]\n"
             "  Sub(res, ln_mean) -> ln_d f32[4,8]\n"
             "  Pow(ln_d, two) -> ln_sq f32[4,8]\n"
             "  ReduceMean(ln_sq) {axes=[-1]} -> ln_var f32[4,1]\n"
             "  Add(ln_var, eps) -> ln_ve f32[4,1]\n"
             "  Sqrt(ln_ve) -> ln_std f32[4,1]\n"
             "  Div(ln_d, ln_std) -> ln_n f32[4,8]\n"
             "  Mul(ln_n, gamma) -> ln_g f32[4,8]\n"
             "  Add(ln_g, beta) -> y f32[4,8]\n"
             "  output y f32[4,8]\n");
    expect_listing(g, before);
    char after[4096];
    snprintf(after, sizeof after, "%s%s", consts,
             "  FusedMatMul(x, W1, b1) {activation=gelu_erf} -> act f32[4,16]\n"
             "  FusedMatMul(act, W2, b2) {activation=none} -> h2b f32[4,8]\n"
             "  Add(h2b, x) -> res f32[4,8]\n"
             "  LayerNormalization(res, gamma, beta) {axis=1, epsilon=1e-12} -> y f32[4,8]\n"
             "  output y f32[4,8]\n");
    fusion_stats st;
    fuse_and_compare(g, after, &st);
    CU_ASSERT_EQUAL(st.matmul_epilogues, 2);
    CU_ASSERT_EQUAL(st.gelus, 1);
    CU_ASSERT_EQUAL(st.layernorms, 1);
    graph_free(g);
}

/* The two other arrangements of the exact GELU (HuggingFace's
 * x * 0.5 * (1 + erf(x / sqrt 2)), and x * ((1 + erf) * 0.5)), with the
 * scaling as a multiplication by 1/sqrt 2. */
static void test_gelu_arrangements(void)
{
    for (int form = 0; form < 2; form++) {
        graph *g = graph_new("gelu", 13);
        input(g, "x", 2, d48);
        cnst(g, "W", 2, d816, NULL);
        cnst(g, "b", 1, d16, NULL);
        scalar(g, "rsqrt2", 0.70710678f);
        scalar(g, "one", 1);
        scalar(g, "half", 0.5f);
        node(g, GRAPH_OP_MATMUL, "x,W", "h");
        node(g, GRAPH_OP_ADD, "h,b", "z");
        node(g, GRAPH_OP_MUL, "z,rsqrt2", "s");
        node(g, GRAPH_OP_ERF, "s", "e");
        node(g, GRAPH_OP_ADD, "one,e", "e1");
        if (form == 0) {
            node(g, GRAPH_OP_MUL, "z,half", "zh");
            node(g, GRAPH_OP_MUL, "zh,e1", "y");
        } else {
            node(g, GRAPH_OP_MUL, "e1,half", "eh");
            node(g, GRAPH_OP_MUL, "z,eh", "y");
        }
        finish(g, "y");
        fusion_stats st;
        fuse_and_compare(g,
                         "graph gelu opset 13\n"
                         "  input x f32[4,8]\n"
                         "  const W f32[8,16]\n"
                         "  const b f32[16]\n"
                         "  FusedMatMul(x, W, b) {activation=gelu_erf} -> y f32[4,16]\n"
                         "  output y f32[4,16]\n",
                         &st);
        CU_ASSERT_EQUAL(st.gelus, 1);
        graph_free(g);
    }
}

/* Before a training graph is differentiated: the written-out GELU (each
 * arrangement) becomes one Gelu node reading x alone, the same values
 * (the erf form is the Gelu's own formula; the node evaluates in f64, so a
 * few f32 ulps apart); a GELU whose inner value another node reads stays
 * as it is.  The inference epilogue then takes the Gelu node too. */
static void test_gelu_node(void)
{
    for (int form = 0; form < 3; form++) {
        graph *g = graph_new("gelu", 13);
        input(g, "x", 2, d48);
        cnst(g, "W", 2, d816, NULL);
        cnst(g, "b", 1, d16, NULL);
        scalar(g, "sqrt2", 1.41421356f);
        scalar(g, "one", 1);
        scalar(g, "half", 0.5f);
        node(g, GRAPH_OP_MATMUL, "x,W", "h");
        node(g, GRAPH_OP_ADD, "h,b", "z");
        node(g, GRAPH_OP_DIV, "z,sqrt2", "s");
        node(g, GRAPH_OP_ERF, "s", "e");
        node(g, GRAPH_OP_ADD, "e,one", "e1");
        if (form == 1) {                     /* (x * 0.5) * e1 */
            node(g, GRAPH_OP_MUL, "z,half", "zh");
            node(g, GRAPH_OP_MUL, "zh,e1", "y");
        } else {                             /* (x * e1) * 0.5 */
            node(g, GRAPH_OP_MUL, "z,e1", "p");
            node(g, GRAPH_OP_MUL, "p,half", form == 2 ? "y0" : "y");
        }
        if (form == 2)                       /* e1 read by another node: no GELU */
            node(g, GRAPH_OP_ADD, "y0,e1", "y");
        finish(g, "y");
        size_t n0, n1;
        float *before = run(g, &n0);
        int made = fusion_gelu(g);
        CU_ASSERT_EQUAL(made, form == 2 ? 0 : 1);
        if (form == 2) {
            free(before);
            graph_free(g);
            continue;
        }
        expect_listing(g, "graph gelu opset 13\n"
                          "  input x f32[4,8]\n"
                          "  const W f32[8,16]\n"
                          "  const b f32[16]\n"
                          "  MatMul(x, W) -> h f32[4,16]\n"
                          "  Add(h, b) -> z f32[4,16]\n"
                          "  Gelu(z) {approximate=none} -> y f32[4,16]\n"
                          "  output y f32[4,16]\n");
        float *after = run(g, &n1);
        CU_ASSERT_EQUAL_FATAL(n0, n1);
        for (size_t i = 0; i < n0; i++)
            CU_ASSERT(fabsf(after[i] - before[i]) <= 4e-7f * (1 + fabsf(before[i])));
        fusion_stats st;
        fuse_and_compare(g,
                         "graph gelu opset 13\n"
                         "  input x f32[4,8]\n"
                         "  const W f32[8,16]\n"
                         "  const b f32[16]\n"
                         "  FusedMatMul(x, W, b) {activation=gelu_erf} -> y f32[4,16]\n"
                         "  output y f32[4,16]\n",
                         &st);
        free(before);
        free(after);
        graph_free(g);
    }
}

/* ResNet's Conv -> BatchNormalization -> Relu: one FusedConv with the
 * normalisation in its weights. */
static void test_conv_bn_relu(void)
{
    static const int64_t dx[] = { 1, 3, 8, 8 }, dw[] = { 4, 3, 3, 3 }, d4[] = { 4 };
    static const float var[] = { 0.5f, 1, 2, 0.25f };
    for (int with_bias = 0; with_bias < 2; with_bias++) {
        graph *g = graph_new("resnet", 13);
        input(g, "x", 4, dx);
        cnst(g, "W", 4, dw, NULL);
        cnst(g, "B", 1, d4, NULL);
        cnst(g, "scale", 1, d4, NULL);
        cnst(g, "bias", 1, d4, NULL);
        cnst(g, "mean", 1, d4, NULL);
        cnst(g, "var", 1, d4, var);
        graph_node *c = node(g, GRAPH_OP_CONV, with_bias ? "x,W,B" : "x,W", "c");
        static const int64_t pads[] = { 1, 1, 1, 1 }, strides[] = { 2, 2 };
        graph_set_attr_ints(c, "pads", pads, 4);
        graph_set_attr_ints(c, "strides", strides, 2);
        node(g, GRAPH_OP_BATCHNORM, "c,scale,bias,mean,var", "bn");
        node(g, GRAPH_OP_RELU, "bn", "y");
        finish(g, "y");
        char after[1024];
        snprintf(after, sizeof after,
                 "graph resnet opset 13\n"
                 "  input x f32[1,3,8,8]\n"
                 "  const W_bn f32[4,3,3,3]\n"
                 "  const W_bias_bn f32[4]\n"
                 "  FusedConv(x, W_bn, W_bias_bn) {pads=[1,1,1,1], strides=[2,2], activation=relu} -> y f32[1,4,4,4]\n"
                 "  output y f32[1,4,4,4]\n");
        fusion_stats st;
        fuse_and_compare(g, after, &st);
        CU_ASSERT_EQUAL(st.batchnorms_folded, 1);
        CU_ASSERT_EQUAL(st.conv_epilogues, 1);
        graph_free(g);
    }
}

/* Gemm with transB (a Linear layer) and Relu. */
static void test_gemm_relu(void)
{
    static const int64_t dw[] = { 16, 8 };
    graph *g = graph_new("gemm", 13);
    input(g, "x", 2, d48);
    cnst(g, "W", 2, dw, NULL);
    cnst(g, "b", 1, d16, NULL);
    graph_node *n = node(g, GRAPH_OP_GEMM, "x,W,b", "h");
    graph_set_attr_int(n, "transB", 1);
    node(g, GRAPH_OP_RELU, "h", "y");
    finish(g, "y");
    fuse_and_compare(g,
                     "graph gemm opset 13\n"
                     "  input x f32[4,8]\n"
                     "  const W f32[16,8]\n"
                     "  const b f32[16]\n"
                     "  FusedMatMul(x, W, b) {activation=relu, transB=1} -> y f32[4,16]\n"
                     "  output y f32[4,16]\n",
                     NULL);
    graph_free(g);
}

/* What must stay as it is: an intermediate read elsewhere, a bias that is
 * not per column, Gemm with alpha != 1, BatchNormalization in training
 * mode, LayerNorm reductions over different axes. */
/* An optimizer's p + s q and p - s q made ScaledAdd (fusion_scaled_add):
 * the same bits as the Mul and the Add or Sub (the product rounded to f32,
 * then the sum); a product read twice stays a Mul; an f16 weight's update
 * Cast(ScaledAdd(Cast(w16), g)) one ScaledAdd of w16 keeping the rounding. */
static void test_scaled_add(void)
{
    graph *g = graph_new("sgd", 13);
    g->phase = GRAPH_PHASE_UPDATE;                /* the optimizer's nodes */
    input(g, "p", 2, d48);
    input(g, "q", 2, d48);
    input(g, "r", 2, d48);
    scalar(g, "s", 0.5f);
    scalar(g, "t", 0.3f);
    scalar(g, "u", 0.7f);
    node(g, GRAPH_OP_MUL, "q,s", "qs");
    node(g, GRAPH_OP_ADD, "p,qs", "a");          /* p + 0.5 q */
    node(g, GRAPH_OP_MUL, "t,r", "rt");
    node(g, GRAPH_OP_SUB, "a,rt", "b");          /* a - 0.3 r */
    node(g, GRAPH_OP_MUL, "r,u", "ru");
    node(g, GRAPH_OP_ADD, "ru,b", "c");          /* 0.7 r + b: the scaled operand first */
    node(g, GRAPH_OP_MUL, "q,u", "m");
    node(g, GRAPH_OP_ADD, "c,m", "d");           /* m read twice: kept */
    node(g, GRAPH_OP_ADD, "d,m", "e");
    node(g, GRAPH_OP_MUL, "r,t", "rt2");
    node(g, GRAPH_OP_SUB, "rt2,e", "f");         /* the minuend scaled: kept */
    finish(g, "f");
    size_t n0, n1;
    float *before = run(g, &n0);
    CU_ASSERT_EQUAL(fusion_scaled_add(g), 3);
    char err[512];
    CU_ASSERT_TRUE_FATAL(graph_infer_all(g, false, err, sizeof err));
    expect_listing(g, "graph sgd opset 13\n"
                      "  input p f32[4,8]\n"
                      "  input q f32[4,8]\n"
                      "  input r f32[4,8]\n"
                      "  const t f32[]\n"
                      "  const u f32[]\n"
                      "  Mul(q, u) -> m f32[4,8]\n"
                      "  Mul(r, t) -> rt2 f32[4,8]\n"
                      "  ScaledAdd(p, q) {scale=0.5} -> a f32[4,8]\n"
                      "  ScaledAdd(a, r) {scale=-0.3} -> b f32[4,8]\n"
                      "  ScaledAdd(b, r) {scale=0.7} -> c f32[4,8]\n"
                      "  Add(c, m) -> d f32[4,8]\n"
                      "  Add(d, m) -> e f32[4,8]\n"
                      "  Sub(rt2, e) -> f f32[4,8]\n"
                      "  output f f32[4,8]\n");
    float *after = run(g, &n1);
    CU_ASSERT_EQUAL_FATAL(n0, n1);
    CU_ASSERT_EQUAL(memcmp(before, after, n0 * sizeof *before), 0);   /* bit for bit */
    free(before);
    free(after);
    graph_free(g);

    /* an f16 weight's update: w16 - 0.01 g, rounded stochastically */
    g = graph_new("f16_update", 13);
    g->phase = GRAPH_PHASE_UPDATE;
    input(g, "g", 1, d8);
    scalar(g, "lr", 0.01f);
    uint16_t ones[8];
    for (int i = 0; i < 8; i++)
        ones[i] = 0x3c00;
    graph_shape s8 = { .rank = 1, .dims = { 8 } };
    int w = graph_add_variable(g, "w", GDT_F16, &s8, ones);
    char cast_in[64];
    snprintf(cast_in, sizeof cast_in, "%s", g->tensors[w].name);
    graph_set_attr_int(node(g, GRAPH_OP_CAST, cast_in, "w32"), "to", GDT_F32);
    node(g, GRAPH_OP_MUL, "g,lr", "gl");
    node(g, GRAPH_OP_SUB, "w32,gl", "w32n");
    graph_node *c = node(g, GRAPH_OP_CAST, "w32n", "wn");
    graph_set_attr_int(c, "to", GDT_F16);
    graph_set_attr_string(c, "rounding", "stochastic");
    graph_set_update(g, w, graph_find_tensor(g, "wn"));
    node(g, GRAPH_OP_ADD, "g,g", "loss");
    finish(g, "loss");
    CU_ASSERT_EQUAL(fusion_scaled_add(g), 1);
    CU_ASSERT_TRUE_FATAL(graph_infer_all(g, false, err, sizeof err));
    int wn = graph_find_tensor(g, "wn");
    const graph_node *u = &g->nodes[g->tensors[wn].producer];
    CU_ASSERT_EQUAL(u->op, GRAPH_OP_SCALED_ADD);
    CU_ASSERT_EQUAL(u->inputs[0], graph_find_tensor(g, cast_in));
    CU_ASSERT_EQUAL(u->inputs[1], graph_find_tensor(g, "g"));
    CU_ASSERT_DOUBLE_EQUAL(graph_attr_float(u, "scale"), -0.01, 1e-9);
    CU_ASSERT_STRING_EQUAL(graph_attr_string(u, "rounding"), "stochastic");
    CU_ASSERT_EQUAL(g->tensors[wn].dtype, GDT_F16);
    CU_ASSERT_EQUAL(g->tensors[graph_find_tensor(g, cast_in)].update, wn);   /* (compacted: names, not numbers) */
    graph_free(g);

    /* the same pattern in the backward pass stays as it is: only the optimizer's are fused */
    g = graph_new("backward", 13);
    g->phase = GRAPH_PHASE_BACKWARD;
    input(g, "p", 2, d48);
    input(g, "q", 2, d48);
    scalar(g, "s", 0.5f);
    node(g, GRAPH_OP_MUL, "q,s", "qs");
    node(g, GRAPH_OP_ADD, "p,qs", "a");
    finish(g, "a");
    CU_ASSERT_EQUAL(fusion_scaled_add(g), 0);
    graph_free(g);
}

static void test_no_fusion(void)
{
    static const int64_t d416[] = { 4, 16 }, dm2[] = { -2 }, dx[] = { 2, 3, 4, 4 }, dw[] = { 3, 3, 1, 1 },
                         d3[] = { 3 };
    graph *g = graph_new("keep", 13);
    input(g, "x", 2, d48);
    cnst(g, "W", 2, d816, NULL);
    cnst(g, "full", 2, d416, NULL);
    node(g, GRAPH_OP_MATMUL, "x,W", "h");
    node(g, GRAPH_OP_ADD, "h,full", "hb");      /* [4,16] bias: not one per column */
    node(g, GRAPH_OP_RELU, "hb", "r");
    node(g, GRAPH_OP_ADD, "r,hb", "y");         /* hb read twice */
    finish(g, "y");
    char *before = graph_dump_string(g);
    fuse_and_compare(g, before, NULL);
    free(before);
    graph_free(g);

    g = graph_new("keep2", 13);
    input(g, "x", 2, d48);
    cnst(g, "W", 2, d816, NULL);
    graph_node *n = node(g, GRAPH_OP_GEMM, "x,W", "h");
    graph_set_attr_float(n, "alpha", 2);
    node(g, GRAPH_OP_RELU, "h", "y");
    finish(g, "y");
    before = graph_dump_string(g);
    fuse_and_compare(g, before, NULL);
    free(before);
    graph_free(g);

    g = graph_new("keep3", 15);
    input(g, "x", 4, dx);
    cnst(g, "W", 4, dw, NULL);
    for (int i = 0; i < 4; i++)
        cnst(g, (const char *[]){ "s", "b", "m", "v" }[i], 1, d3, (const float[]){ 1, 1, 1 });
    node(g, GRAPH_OP_CONV, "x,W", "c");
    n = node(g, GRAPH_OP_BATCHNORM, "c,s,b,m,v", "y");
    graph_set_attr_int(n, "training_mode", 1);
    finish(g, "y");
    before = graph_dump_string(g);
    fuse_and_compare(g, before, NULL);
    free(before);
    graph_free(g);

    g = graph_new("keep4", 13);
    input(g, "x", 2, d48);
    cnst(g, "gamma", 1, d8, NULL);
    cnst(g, "beta", 1, d8, NULL);
    scalar(g, "two", 2);
    scalar(g, "eps", 1e-5f);
    decomposed_layernorm(g, "x", "y");
    graph_set_attr_ints(&g->nodes[0], "axes", dm2, 1);    /* mean over rows, variance over columns */
    finish(g, "y");
    before = graph_dump_string(g);
    fuse_and_compare(g, before, NULL);
    free(before);
    graph_free(g);
}

void test_register(void)
{
    ADD_SUITE("fusion",
              { "BERT FFN: MatMul+bias+GELU, MatMul+bias, LayerNorm", test_bert_ffn },
              { "GELU arrangements", test_gelu_arrangements },
              { "GELU as one node before autodiff, then in the epilogue", test_gelu_node },
              { "Conv+BatchNormalization+Relu", test_conv_bn_relu },
              { "Gemm(transB)+Relu", test_gemm_relu },
              { "an optimizer's updates as ScaledAdd, bit for bit", test_scaled_add },
              { "patterns that must not fuse", test_no_fusion });
}
