/*
 * test_graph_eval.c — the graph IR and the reference evaluator where the
 * ONNX node tests do not reach: topological sorting, attribute checks,
 * grouped and dilated convolution and batched matmul broadcasting against
 * direct loops, integer edge cases (wrapping, division by zero,
 * saturating casts), f16 and bf16 rounding bit patterns, the Monte Carlo
 * arithmetic runs validate --train measures conditioning with.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontends/graph.h"
#include "frontends/graph_eval.h"
#include "test_util.h"

static int tensor(graph *g, const char *name, graph_dtype t, int rank, const int64_t *dims)
{
    int x = graph_add_tensor(g, name);
    g->tensors[x].dtype = t;
    g->tensors[x].shape.rank = rank;
    if (rank)
        memcpy(g->tensors[x].shape.dims, dims, (size_t)rank * sizeof *dims);
    g->tensors[x].shape_known = true;
    return x;
}

static int input(graph *g, const char *name, graph_dtype t, int rank, const int64_t *dims)
{
    int x = tensor(g, name, t, rank, dims);
    graph_add_input(g, x);
    return x;
}

static graph_node *node1(graph *g, graph_op op, const char *name, const int *ins, int n_in)
{
    int o = graph_add_tensor(g, name);
    int k = graph_add_node(g, op, name, ins, n_in, &o, 1);
    return &g->nodes[k];
}

static bool prepare(graph *g, const char *output, char *err, size_t err_size)
{
    graph_add_output(g, graph_find_tensor(g, output));
    return graph_sort(g, err, err_size) && graph_infer_all(g, false, err, err_size);
}

static void prepare_ok(graph *g, const char *output)
{
    char err[512];
    bool ok = prepare(g, output, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
}

/* Evaluate with the given input data; returns output 0 (caller frees). */
static graph_value eval(const graph *g, void *const *data)
{
    graph_value in[4], out;
    char err[512];
    for (int i = 0; i < g->n_inputs; i++)
        in[i] = (graph_value){ .dtype = g->tensors[g->inputs[i]].dtype, .shape = g->tensors[g->inputs[i]].shape,
                               .data = data[i] };
    bool ok = graph_eval(g, in, &out, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    return out;
}

static float frand(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static void test_sort_and_cycle_free_order(void)
{
    static const int64_t d2[] = { 2 };
    graph *g = graph_new("order", 13);
    int x = input(g, "x", GDT_F32, 1, d2);
    /* written consumer-first: c reads b's output, b reads a's */
    int b_out = graph_add_tensor(g, "tb"), a_out = graph_add_tensor(g, "ta"), c_out = graph_add_tensor(g, "y");
    graph_add_node(g, GRAPH_OP_RELU, "c", &b_out, 1, &c_out, 1);
    graph_add_node(g, GRAPH_OP_NEG, "b", &a_out, 1, &b_out, 1);
    graph_add_node(g, GRAPH_OP_ABS, "a", &x, 1, &a_out, 1);
    prepare_ok(g, "y");
    CU_ASSERT_STRING_EQUAL(g->nodes[0].name, "a");
    CU_ASSERT_STRING_EQUAL(g->nodes[1].name, "b");
    CU_ASSERT_STRING_EQUAL(g->nodes[2].name, "c");
    float v[2] = { -3, 4 };
    void *data[1] = { v };
    graph_value y = eval(g, data);
    CU_ASSERT_EQUAL(((float *)y.data)[0], 0);   /* relu(-|x|) */
    CU_ASSERT_EQUAL(((float *)y.data)[1], 0);
    graph_value_free(&y);
    graph_free(g);
}

static void test_attribute_checks(void)
{
    static const int64_t d23[] = { 2, 3 }, d3[] = { 3 };
    char err[512];
    graph *g = graph_new("attrs", 13);
    int x = input(g, "x", GDT_F32, 2, d23);
    graph_set_attr_float(node1(g, GRAPH_OP_SOFTMAX, "sm", &x, 1), "axis", 1);
    CU_ASSERT_FALSE(prepare(g, "sm", err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "attrs: node 'sm' (Softmax): attribute 'axis' is float, expected int");
    graph_free(g);
    g = graph_new("attrs", 13);
    x = input(g, "x", GDT_F32, 2, d23);
    node1(g, GRAPH_OP_CAST, "", &x, 1);
    g->nodes[0].name[0] = 0;
    graph_add_output(g, g->nodes[0].outputs[0]);
    CU_ASSERT_FALSE(graph_infer_all(g, false, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "attrs: node #0 (Cast): attribute 'to' is required");
    graph_free(g);
    /* an input of the wrong rank for its role */
    g = graph_new("attrs", 13);
    int ins[3] = { input(g, "x", GDT_F32, 2, d23), input(g, "w", GDT_F32, 1, d3), -1 };
    node1(g, GRAPH_OP_CONV, "conv", ins, 2);
    CU_ASSERT_FALSE(prepare(g, "conv", err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "attrs: node 'conv' (Conv): input [2,3] and weights [3] are not [N,C,...] and "
                                "[M,C/group,...]");
    graph_free(g);
}

/* Grouped, dilated, strided, padded 2-D convolution against direct loops,
 * in f32 (sgemm) and f64 (dgemm). */
static void test_grouped_dilated_conv(void)
{
    enum { N = 2, C = 4, H = 7, W = 6, M = 6, G = 2, KH = 3, KW = 2 };
    static const int64_t dx[] = { N, C, H, W }, dw[] = { M, C / G, KH, KW }, db[] = { M };
    static const int64_t strides[] = { 2, 1 }, dil[] = { 2, 2 }, pads[] = { 1, 0, 2, 1 };
    for (int f64 = 0; f64 < 2; f64++) {
        graph_dtype t = f64 ? GDT_F64 : GDT_F32;
        graph *g = graph_new("conv", 13);
        int ins[3] = { input(g, "x", t, 4, dx), input(g, "w", t, 4, dw), input(g, "b", t, 1, db) };
        graph_node *n = node1(g, GRAPH_OP_CONV, "y", ins, 3);
        graph_set_attr_int(n, "group", G);
        graph_set_attr_ints(n, "strides", strides, 2);
        graph_set_attr_ints(n, "dilations", dil, 2);
        graph_set_attr_ints(n, "pads", pads, 4);
        prepare_ok(g, "y");
        const graph_shape *ys = &g->tensors[g->outputs[0]].shape;
        /* H: (7 + 1 + 2 - 5) / 2 + 1 = 3;  W: (6 + 0 + 1 - 3) / 1 + 1 = 5 */
        CU_ASSERT_EQUAL(ys->dims[2], 3);
        CU_ASSERT_EQUAL(ys->dims[3], 5);
        double x[N * C * H * W], w[M * (C / G) * KH * KW], b[M];
        uint32_t s = 7;
        for (size_t i = 0; i < sizeof x / sizeof *x; i++)
            x[i] = frand(&s);
        for (size_t i = 0; i < sizeof w / sizeof *w; i++)
            w[i] = frand(&s);
        for (size_t i = 0; i < M; i++)
            b[i] = frand(&s);
        float xf[sizeof x / sizeof *x], wf[sizeof w / sizeof *w], bf[M];
        for (size_t i = 0; i < sizeof x / sizeof *x; i++)
            xf[i] = (float)x[i];
        for (size_t i = 0; i < sizeof w / sizeof *w; i++)
            wf[i] = (float)w[i];
        for (size_t i = 0; i < M; i++)
            bf[i] = (float)b[i];
        void *data[3] = { f64 ? (void *)x : xf, f64 ? (void *)w : wf, f64 ? (void *)b : bf };
        graph_value y = eval(g, data);
        int64_t oh = ys->dims[2], ow = ys->dims[3];
        double worst = 0;
        for (int ni = 0; ni < N; ni++)
            for (int m = 0; m < M; m++)
                for (int i = 0; i < oh; i++)
                    for (int j = 0; j < ow; j++) {
                        double acc = b[m];
                        int grp = m / (M / G);
                        for (int c = 0; c < C / G; c++)
                            for (int ki = 0; ki < KH; ki++)
                                for (int kj = 0; kj < KW; kj++) {
                                    int hi = i * 2 - 1 + ki * 2, wj = j * 1 - 0 + kj * 2;
                                    if (hi < 0 || hi >= H || wj < 0 || wj >= W)
                                        continue;
                                    acc += x[((ni * C + grp * (C / G) + c) * H + hi) * W + wj] *
                                           w[((m * (C / G) + c) * KH + ki) * KW + kj];
                                }
                        size_t at = (size_t)(((ni * M + m) * oh + i) * ow + j);
                        double got = f64 ? ((double *)y.data)[at] : ((float *)y.data)[at];
                        worst = fmax(worst, fabs(got - acc));
                    }
        CU_ASSERT(worst < (f64 ? 1e-13 : 1e-5));
        graph_value_free(&y);
        graph_free(g);
    }
}

/* [2,1,2,3] x [3,3,2]: batch dims broadcast to [2,3]. */
static void test_matmul_batch_broadcast(void)
{
    static const int64_t da[] = { 2, 1, 2, 3 }, db[] = { 3, 3, 2 };
    graph *g = graph_new("mm", 13);
    int ins[2] = { input(g, "a", GDT_F32, 4, da), input(g, "b", GDT_F32, 3, db) };
    node1(g, GRAPH_OP_MATMUL, "y", ins, 2);
    prepare_ok(g, "y");
    char buf[64];
    CU_ASSERT_STRING_EQUAL(graph_shape_str(&g->tensors[g->outputs[0]].shape, buf, sizeof buf), "[2,3,2,2]");
    float a[12], b[18];
    for (int i = 0; i < 12; i++)
        a[i] = (float)(i - 5);
    for (int i = 0; i < 18; i++)
        b[i] = (float)(i % 7 - 3);
    void *data[2] = { a, b };
    graph_value y = eval(g, data);
    for (int p = 0; p < 2; p++)
        for (int q = 0; q < 3; q++)
            for (int i = 0; i < 2; i++)
                for (int j = 0; j < 2; j++) {
                    float acc = 0;
                    for (int k = 0; k < 3; k++)
                        acc += a[(p * 2 + i) * 3 + k] * b[(q * 3 + k) * 2 + j];
                    CU_ASSERT_EQUAL(((float *)y.data)[((p * 3 + q) * 2 + i) * 2 + j], acc);
                }
    graph_value_free(&y);
    graph_free(g);
}

static void test_integer_edges(void)
{
    static const int64_t d4[] = { 4 };
    graph *g = graph_new("int", 13);
    int ins[2] = { input(g, "a", GDT_I64, 1, d4), input(g, "b", GDT_I64, 1, d4) };
    node1(g, GRAPH_OP_DIV, "y", ins, 2);
    prepare_ok(g, "y");
    int64_t a[4] = { 7, -7, INT64_MIN, 5 }, b[4] = { 2, 2, -1, 0 };
    void *data[2] = { a, b };
    graph_value y = eval(g, data);
    const int64_t *q = y.data;
    CU_ASSERT_EQUAL(q[0], 3);           /* truncation towards zero */
    CU_ASSERT_EQUAL(q[1], -3);
    CU_ASSERT_EQUAL(q[2], INT64_MIN);   /* the one overflowing quotient wraps */
    CU_ASSERT_EQUAL(q[3], 0);           /* division by zero gives 0 */
    graph_value_free(&y);
    graph_free(g);

    g = graph_new("u8", 13);
    int u[2] = { input(g, "a", GDT_U8, 1, d4), input(g, "b", GDT_U8, 1, d4) };
    node1(g, GRAPH_OP_ADD, "y", u, 2);
    prepare_ok(g, "y");
    uint8_t ua[4] = { 255, 200, 1, 0 }, ub[4] = { 1, 100, 2, 0 };
    void *udata[2] = { ua, ub };
    y = eval(g, udata);
    static const uint8_t want[4] = { 0, 44, 3, 0 };
    CU_ASSERT_EQUAL(memcmp(y.data, want, 4), 0);
    graph_value_free(&y);
    graph_free(g);

    /* float -> i8 truncates and saturates; NaN gives 0 */
    g = graph_new("cast", 13);
    int c = input(g, "x", GDT_F32, 1, d4);
    graph_set_attr_int(node1(g, GRAPH_OP_CAST, "y", &c, 1), "to", GDT_I8);
    prepare_ok(g, "y");
    float f[4] = { 300.0f, -1e10f, -2.9f, NAN };
    void *fdata[1] = { f };
    y = eval(g, fdata);
    static const int8_t want8[4] = { 127, -128, -2, 0 };
    CU_ASSERT_EQUAL(memcmp(y.data, want8, 4), 0);
    graph_value_free(&y);
    graph_free(g);
}

static void test_half_precision_rounding(void)
{
    static const int64_t d5[] = { 5 };
    /* 1 + 2^-8 is halfway between bf16 1.0 and 1 + 2^-7: to even (1.0);
     * 1 + 3 * 2^-8 halfway between 1 + 2^-7 and 1 + 2^-6: to even (1 + 2^-6) */
    float f[5] = { 1.00390625f, 1.01171875f, -2.0f, 65520.0f, 1.0f + 1.0f / 2048 };
    static const uint16_t want_bf16[5] = { 0x3F80, 0x3F82, 0xC000, 0x4780, 0x3F80 };
    /* f16: 65520 rounds up to infinity; 1 + 2^-11 is halfway: to even (1.0) */
    static const uint16_t want_f16[5] = { 0x3C04, 0x3C0C, 0xC000, 0x7C00, 0x3C00 };
    for (int k = 0; k < 2; k++) {
        graph *g = graph_new("half", 13);
        int x = input(g, "x", GDT_F32, 1, d5);
        graph_set_attr_int(node1(g, GRAPH_OP_CAST, "y", &x, 1), "to", k ? GDT_F16 : GDT_BF16);
        prepare_ok(g, "y");
        void *data[1] = { f };
        graph_value y = eval(g, data);
        CU_ASSERT_EQUAL(memcmp(y.data, k ? want_f16 : want_bf16, sizeof want_f16), 0);
        graph_value_free(&y);
        graph_free(g);
    }
}

static void test_eval_checks_inputs(void)
{
    static const int64_t d23[] = { 2, 3 };
    graph *g = graph_new("in", 13);
    int x = input(g, "x", GDT_F32, 2, d23);
    node1(g, GRAPH_OP_RELU, "y", &x, 1);
    prepare_ok(g, "y");
    float v[6] = { 0 };
    graph_value in = { .dtype = GDT_F32, .shape = { .rank = 2, .dims = { 3, 2 } }, .data = v }, out;
    char err[256];
    CU_ASSERT_FALSE(graph_eval(g, &in, &out, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "in: input 'x' is f32[3,2], expected f32[2,3]");
    graph_free(g);
}

/* Monte Carlo arithmetic: an op that computes has each result moved by at
 * most its type's rounding, the same seed gives the same bits, different
 * seeds different ones, and an op that only moves values is left alone. */
static void test_monte_carlo_arithmetic(void)
{
    static const int64_t d[] = { 64, 48 };
    graph *g = graph_new("mca", 13);
    int x = input(g, "x", GDT_F32, 2, d);
    int xx[2] = { x, x };
    node1(g, GRAPH_OP_MUL, "m", xx, 2);
    int m = graph_find_tensor(g, "m");
    node1(g, GRAPH_OP_TRANSPOSE, "t", &m, 1);
    graph_add_output(g, m);
    prepare_ok(g, "t");
    float v[64 * 48];
    uint32_t seed = 7;
    for (int i = 0; i < 64 * 48; i++)
        v[i] = frand(&seed);
    graph_value in = { .dtype = GDT_F32, .shape = g->tensors[x].shape, .data = v }, plain[2], a[2], b[2], c[2];
    char err[256];
    CU_ASSERT_TRUE_FATAL(graph_eval_step(g, &in, plain, err, sizeof err));
    CU_ASSERT_TRUE_FATAL(graph_eval_step_mca(g, &in, 1, 0, a, err, sizeof err));
    CU_ASSERT_TRUE_FATAL(graph_eval_step_mca(g, &in, 1, 0, b, err, sizeof err));
    CU_ASSERT_TRUE_FATAL(graph_eval_step_mca(g, &in, 2, 0, c, err, sizeof err));
    const float *pm = plain[0].data, *am = a[0].data, *at = a[1].data, *cm = c[0].data;
    CU_ASSERT_EQUAL(memcmp(a[0].data, b[0].data, sizeof v), 0);
    CU_ASSERT_EQUAL(memcmp(a[1].data, b[1].data, sizeof v), 0);
    int moved = 0, differ = 0, over = 0, not_moved_by_t = 0;
    for (int i = 0; i < 64; i++)
        for (int j = 0; j < 48; j++) {
            int k = i * 48 + j;
            moved += am[k] != pm[k];
            differ += am[k] != cm[k];
            /* x(1 + d) with |d| <= 2^-24, then rounded: within 2 ulps of x */
            over += fabs((double)am[k] - pm[k]) > 2.5 * ldexp(1, -24) * fabs((double)pm[k]);
            not_moved_by_t += at[j * 64 + i] == am[k];
        }
    CU_ASSERT_TRUE(moved > 64 * 48 / 4);
    CU_ASSERT_TRUE(differ > 64 * 48 / 4);
    CU_ASSERT_EQUAL(over, 0);
    CU_ASSERT_EQUAL(not_moved_by_t, 64 * 48);
    for (int i = 0; i < 2; i++) {
        graph_value_free(&plain[i]);
        graph_value_free(&a[i]);
        graph_value_free(&b[i]);
        graph_value_free(&c[i]);
    }
    graph_free(g);
}

/* Monte Carlo arithmetic for matmuls summing in f16 (partials_roundoff
 * u16): a result of K = 256 products moved by up to u16 sqrt(K / 16) =
 * 2^-9 of it, and by at most f32's rounding without it. */
static void test_monte_carlo_f16_partials(void)
{
    static const int64_t d[] = { 32, 256 };
    graph *g = graph_new("mca16", 15);
    int x = input(g, "x", GDT_F32, 2, d);
    node1(g, GRAPH_OP_TRANSPOSE, "xt", &x, 1);
    int in[2] = { x, graph_find_tensor(g, "xt") };
    node1(g, GRAPH_OP_MATMUL, "y", in, 2);
    prepare_ok(g, "y");
    static float v[32 * 256];
    uint32_t seed = 11;
    for (int i = 0; i < 32 * 256; i++)
        v[i] = frand(&seed);
    CU_ASSERT_EQUAL_FATAL(g->n_outputs, 1);
    graph_value xin = { .dtype = GDT_F32, .shape = g->tensors[x].shape, .data = v }, plain, f32u, f16p;
    char err[256];
    CU_ASSERT_TRUE_FATAL(graph_eval_step(g, &xin, &plain, err, sizeof err));
    CU_ASSERT_TRUE_FATAL(graph_eval_step_mca(g, &xin, 3, 0, &f32u, err, sizeof err));
    CU_ASSERT_TRUE_FATAL(graph_eval_step_mca(g, &xin, 3, ldexp(1, -11), &f16p, err, sizeof err));
    const float *p = plain.data, *a = f32u.data, *h = f16p.data;
    double most_a = 0, most_h = 0;
    for (int k = 0; k < 32 * 32; k++) {
        double ra = fabs((double)a[k] - p[k]) / fabs((double)p[k]), rh = fabs((double)h[k] - p[k]) / fabs((double)p[k]);
        most_a = ra > most_a ? ra : most_a;
        most_h = rh > most_h ? rh : most_h;
    }
    CU_ASSERT_TRUE(most_a <= 2.5 * ldexp(1, -24));
    CU_ASSERT_TRUE(most_h > ldexp(1, -11) && most_h <= ldexp(1, -9) * 1.001);
    graph_value_free(&plain);
    graph_value_free(&f32u);
    graph_value_free(&f16p);
    graph_free(g);
}

void test_register(void)
{
    ADD_SUITE("graph_eval",
              { "topological sort of a graph written out of order", test_sort_and_cycle_free_order },
              { "attribute and operand checks", test_attribute_checks },
              { "grouped dilated strided conv vs direct loops (f32, f64)", test_grouped_dilated_conv },
              { "matmul batch broadcasting", test_matmul_batch_broadcast },
              { "integer wrap, truncation, division by zero, saturation", test_integer_edges },
              { "bf16 and f16 rounding bit patterns", test_half_precision_rounding },
              { "evaluation checks its inputs", test_eval_checks_inputs },
              { "Monte Carlo arithmetic: bounded, repeatable, values moved untouched", test_monte_carlo_arithmetic },
              { "Monte Carlo arithmetic of f16 partial sums", test_monte_carlo_f16_partials });
}
