/*
 * test_pool_grad.c — MaxPoolGrad and GatherGrad (frontends/ops_grad_pool.c,
 * lower_pool_grad.c, lower_gather.c): the evaluator on values worked by
 * hand (ties, overlapping windows, padding, repeated and negative
 * indices), and graphs compiled for a GC200 and simulated against the
 * evaluator; the scatter-add and the lookup of more indices than a tile
 * holds, in passes, bit for bit.
 *
 * Tolerances.  The evaluator sums in f64 and rounds once; the tile sums a
 * dX element's (or a table element's) k contributions one f32 addition at
 * a time, in window (index) order, from +0.  The first addition is exact,
 * each later one rounds once, so |tile - exact| <= (k - 1) u S (u = 2^-24,
 * S the sum of the contributions' magnitudes, to first order), and the
 * evaluator is within u |exact| of the exact sum: the bound used is
 * (k - 1) u S + u |ref| + the smallest normal (the tile flushes
 * denormals).  S comes from the evaluator itself, run on |dY| (which
 * windows or indices land where depends on X and the indices alone); k is
 * at most the windows covering a position (ceil(KH / SH) ceil(KW / SW)) for
 * MaxPoolGrad and the most repeated index for GatherGrad.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontends/graph_eval.h"
#include "frontends/lower.h"
#include "frontends/simulate.h"
#include "graph_fixture.h"
#include "test_util.h"
#include "train_fixture.h"

static const double U = 0x1p-24;

static graph_node *maxpool_grad(graph *g, const int64_t *k, const int64_t *s, const int64_t *p)
{
    graph_node *n = node(g, GRAPH_OP_MAXPOOLGRAD, "x,dy", "dx");
    graph_set_attr_ints(n, "kernel_shape", k, 2);
    graph_set_attr_ints(n, "strides", s, 2);
    graph_set_attr_ints(n, "pads", p, 4);
    return n;
}

/* MaxPoolGrad of X [1, c, h, w] (3x3... as given) as a graph of inputs x, dy. */
static graph *maxpool_grad_graph(int64_t c, int64_t h, int64_t w, const int64_t *k, const int64_t *s,
                                 const int64_t *p)
{
    graph *g = graph_new("maxpool_grad", 13);
    const int64_t xd[4] = { 1, c, h, w };
    int64_t oh = (h + p[0] + p[2] - k[0]) / s[0] + 1, ow = (w + p[1] + p[3] - k[1]) / s[1] + 1;
    const int64_t yd[4] = { 1, c, oh, ow };
    input(g, "x", 4, xd);
    input(g, "dy", 4, yd);
    maxpool_grad(g, k, s, p);
    finish(g, "dx");
    return g;
}

static float *eval_one(const graph *g, graph_value *in)
{
    graph_value out = { 0 };
    char err[512];
    bool ok = graph_eval(g, in, &out, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    return out.data;
}

/* ---- the evaluator by hand ----------------------------------------------------- */

static void test_eval_maxpool_grad(void)
{
    /* 2x2 windows, stride 1 (overlapping), on a 3 x 4 plane with ties:
     * first max in row-major order, sums where windows share it. */
    const int64_t k[2] = { 2, 2 }, s[2] = { 1, 1 }, p[4] = { 0, 0, 0, 0 };
    graph *g = maxpool_grad_graph(1, 3, 4, k, s, p);
    float x[12] = { 1, 3, 3, 0,
                    2, 3, 1, 5,
                    0, 0, 4, 4 };
    float dy[6] = { 1, 2, 4, 8, 16, 32 };
    graph_value in[2] = { { GDT_F32, g->tensors[g->inputs[0]].shape, x },
                          { GDT_F32, g->tensors[g->inputs[1]].shape, dy } };
    float *dx = eval_one(g, in);
    const float want[12] = { 0, 1 + 2, 0, 0,
                             0, 8, 0, 4 + 32,
                             0, 0, 16, 0 };
    for (int i = 0; i < 12; i++)
        CU_ASSERT_EQUAL(dx[i], want[i]);
    free(dx);
    graph_free(g);
    /* 3x3 stride 2 pad 1: the windows clipped by the padding. */
    const int64_t k3[2] = { 3, 3 }, s2[2] = { 2, 2 }, p1[4] = { 1, 1, 1, 1 };
    g = maxpool_grad_graph(1, 3, 4, k3, s2, p1);
    in[0].shape = g->tensors[g->inputs[0]].shape;
    in[1].shape = g->tensors[g->inputs[1]].shape;
    dx = eval_one(g, in);
    const float want_p[12] = { 0, 1, 0, 0,
                               0, 4, 0, 2 + 8,
                               0, 0, 0, 0 };
    for (int i = 0; i < 12; i++)
        CU_ASSERT_EQUAL(dx[i], want_p[i]);
    free(dx);
    graph_free(g);
}

static graph *gather_grad_graph(int64_t v, int64_t d, int64_t n, graph_dtype idt)
{
    graph *g = graph_new("gather_grad", 13);
    const int64_t yd[2] = { n, d }, id[1] = { n };
    input(g, "dy", 2, yd);
    int ix = input(g, "idx", 1, id);
    g->tensors[ix].dtype = idt;
    graph_node *nd = node(g, GRAPH_OP_GATHERGRAD, "dy,idx", "dt");
    const int64_t shape[2] = { v, d };
    graph_set_attr_ints(nd, "shape", shape, 2);
    finish(g, "dt");
    return g;
}

static void test_eval_gather_grad(void)
{
    graph *g = gather_grad_graph(5, 2, 4, GDT_I64);
    float dy[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    int64_t idx[4] = { 2, 0, 2, -1 };          /* 2 twice: rows accumulate; -1 is row 4 */
    graph_value in[2] = { { GDT_F32, g->tensors[g->inputs[0]].shape, dy },
                          { GDT_I64, g->tensors[g->inputs[1]].shape, idx } };
    float *dt = eval_one(g, in);
    const float want[10] = { 3, 4, 0, 0, 1 + 5, 2 + 6, 0, 0, 7, 8 };
    for (int i = 0; i < 10; i++)
        CU_ASSERT_EQUAL(dt[i], want[i]);
    free(dt);
    /* An index out of range is an error. */
    idx[1] = 5;
    graph_value out = { 0 };
    char err[512];
    CU_ASSERT_FALSE(graph_eval(g, in, &out, err, sizeof err));
    CU_ASSERT(strstr(err, "out of range") != NULL);
    graph_free(g);
}

/* ---- compiled and simulated ------------------------------------------------------ */

/* g compiled for `tiles` tiles of a GC200 (0: all) and simulated on in:
 * its output 0 into *out; the simulated result. */
static simulate_result simulated(const graph *g, graph_value *in, uint32_t tiles, graph_value *out)
{
    lower_options lo = { .machine = gc200(), .tiles = tiles };
    simulate_result r;
    char err[1024];
    *out = (graph_value){ 0 };
    bool ok = simulate_graph(g, &lo, in, out, &r, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    return r;
}

/* Simulate g on `tiles` tiles (0: all) and compare output 0 with the
 * evaluator within (kmax - 1) u S + u |ref| + 2^-126, S the evaluator on
 * in_abs; the simulated result. */
static simulate_result sim_vs_eval(const graph *g, graph_value *in, graph_value *in_abs, uint32_t tiles,
                                   double kmax)
{
    graph_value out;
    simulate_result r = simulated(g, in, tiles, &out);
    float *ref = eval_one(g, in), *mag = eval_one(g, in_abs);
    size_t n = (size_t)graph_shape_numel(&out.shape), bad = 0;
    const float *got = out.data;
    for (size_t i = 0; i < n; i++) {
        double tol = (kmax - 1) * U * mag[i] + U * fabs(ref[i]) + 0x1p-126;
        if (!(fabs((double)got[i] - ref[i]) <= tol) && bad++ < 4)
            fprintf(stderr, "\n  element %zu: simulated %.9g, evaluator %.9g", i, got[i], ref[i]);
    }
    CU_ASSERT_EQUAL(bad, 0);
    free(ref);
    free(mag);
    graph_value_free(&out);
    return r;
}

/* X on 8 levels (ties in most windows), dY of mixed signs and magnitudes. */
static void fill_pool_inputs(float *x, size_t nx, float *dy, float *dy_abs, size_t ny)
{
    for (size_t i = 0; i < nx; i++)
        x[i] = floorf(rnd() * 2.0f) / 2.0f;
    for (size_t i = 0; i < ny; i++) {
        dy[i] = rnd() * ldexpf(1.0f, (int)(i % 7) - 3);
        dy_abs[i] = fabsf(dy[i]);
    }
}

static void run_maxpool_grad(int64_t c, int64_t h, int64_t w, const int64_t *k, const int64_t *s, const int64_t *p,
                             uint32_t tiles)
{
    graph *g = maxpool_grad_graph(c, h, w, k, s, p);
    size_t nx = (size_t)graph_shape_numel(&g->tensors[g->inputs[0]].shape);
    size_t ny = (size_t)graph_shape_numel(&g->tensors[g->inputs[1]].shape);
    float *x = malloc(nx * 4), *dy = malloc(ny * 4), *dya = malloc(ny * 4);
    fill_pool_inputs(x, nx, dy, dya, ny);
    graph_value in[2] = { { GDT_F32, g->tensors[g->inputs[0]].shape, x },
                          { GDT_F32, g->tensors[g->inputs[1]].shape, dy } };
    graph_value in_abs[2] = { in[0], in[1] };
    in_abs[1].data = dya;
    double kmax = (double)((k[0] + s[0] - 1) / s[0] * ((k[1] + s[1] - 1) / s[1]));
    sim_vs_eval(g, in, in_abs, tiles, kmax);
    free(x); free(dy); free(dya);
    graph_free(g);
}

/* Overlapping 3x3 s2 p1 windows: blocks of whole rows split by rows or by
 * channels among the workers (few tiles), and parts of rows (many tiles);
 * disjoint 2x2 s2 windows; odd C. */
static void test_sim_maxpool_grad(void)
{
    const int64_t k3[2] = { 3, 3 }, s2[2] = { 2, 2 }, p1[4] = { 1, 1, 1, 1 }, k2[2] = { 2, 2 },
                  p0[4] = { 0, 0, 0, 0 }, s1[2] = { 1, 1 };
    run_maxpool_grad(8, 20, 20, k3, s2, p1, 2);      /* 10 rows a tile: workers by rows */
    run_maxpool_grad(8, 20, 20, k3, s2, p1, 8);      /* 2-3 rows a tile: workers by channels */
    run_maxpool_grad(8, 20, 20, k3, s2, p1, 64);     /* parts of rows */
    run_maxpool_grad(5, 12, 10, k2, s2, p0, 16);     /* disjoint windows, odd C */
    run_maxpool_grad(3, 9, 11, k3, s1, p1, 40);      /* stride 1: up to 9 windows a position */
}

static void run_gather_grad(int64_t v, int64_t d, int64_t n, graph_dtype idt, uint32_t tiles, uint32_t seed,
                            simulate_result *r)
{
    graph *g = gather_grad_graph(v, d, n, idt);
    float *dy = malloc((size_t)(n * d) * 4), *dya = malloc((size_t)(n * d) * 4);
    int64_t *idx = malloc((size_t)n * 8);
    int32_t *idx32 = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n * d; i++) {
        dy[i] = rnd() * ldexpf(1.0f, (int)(i % 9) - 4);
        dya[i] = fabsf(dy[i]);
    }
    rng = rng * 1664525u + seed;
    int kmax = 1;
    int *count = calloc((size_t)v, sizeof *count);
    for (int64_t i = 0; i < n; i++) {
        rng = rng * 1664525u + 1013904223u;
        int64_t t = (int64_t)((rng >> 8) % (uint32_t)(i % 3 == 0 ? (v < 5 ? v : 5) : v));   /* repeats */
        count[t]++;
        kmax = count[t] > kmax ? count[t] : kmax;
        idx[i] = i % 4 == 1 ? t - v : t;                                                      /* negatives */
        idx32[i] = (int32_t)idx[i];
    }
    graph_value in[2] = { { GDT_F32, g->tensors[g->inputs[0]].shape, dy },
                          { idt, g->tensors[g->inputs[1]].shape, idt == GDT_I64 ? (void *)idx : (void *)idx32 } };
    graph_value in_abs[2] = { in[0], in[1] };
    in_abs[0].data = dya;
    CU_ASSERT(kmax > 1);
    simulate_result s = sim_vs_eval(g, in, in_abs, tiles, kmax);
    if (r)
        *r = s;
    free(dy); free(dya); free(idx); free(idx32); free(count);
    graph_free(g);
}

/* Repeated and negative indices, i32 and i64, whole rows a tile (C = 1)
 * and column slices. */
static void test_sim_gather_grad(void)
{
    run_gather_grad(300, 16, 40, GDT_I32, 8, 1, NULL);
    run_gather_grad(300, 16, 40, GDT_I64, 8, 2, NULL);
    run_gather_grad(1000, 96, 64, GDT_I32, 64, 3, NULL);
    run_gather_grad(50, 10, 30, GDT_I64, 200, 4, NULL);
}

/* More indices than a tile holds beside its dY rows (60,000 of them and
 * their dY, 720 KB, on each of 4 tiles of 624 KiB, as BERT-Base's 1024
 * tokens a batch with 196 KB of dY columns a tile did not fit): the
 * scatter-add runs in passes of the indices, each adding its rows in index
 * order, so the table is bit for bit the one-pass sum, here the host's f32
 * additions in index order from +0 (no denormals: |dY| >= 2^-6). */
static void test_sim_gather_grad_passes(void)
{
    enum { V = 64, D = 2, N = 60000 };
    graph *g = gather_grad_graph(V, D, N, GDT_I32);
    float *dy = malloc((size_t)N * D * 4), *want = calloc(V * D, 4);
    int32_t *idx = malloc((size_t)N * 4);
    CU_ASSERT_FATAL(dy && want && idx);
    rng = 5;
    for (int64_t i = 0; i < N; i++) {
        rng = rng * 1664525u + 1013904223u;
        int32_t t = (int32_t)((rng >> 8) % V);
        idx[i] = i % 5 == 2 ? t - V : t;
        for (int j = 0; j < D; j++) {
            float x = rnd();
            dy[i * D + j] = (x < 0 ? -1.0f : 1.0f) * (fabsf(x) + 0.0625f) * ldexpf(1.0f, (int)(i % 5) - 2);
            want[t * D + j] += dy[i * D + j];
        }
    }
    graph_value in[2] = { { GDT_F32, g->tensors[g->inputs[0]].shape, dy },
                          { GDT_I32, g->tensors[g->inputs[1]].shape, idx } };
    graph_value out;
    simulated(g, in, 4, &out);
    CU_ASSERT_EQUAL_FATAL(graph_shape_numel(&out.shape), V * D);
    CU_ASSERT_EQUAL(memcmp(out.data, want, V * D * 4), 0);
    graph_value_free(&out);
    free(dy);
    free(want);
    free(idx);
    graph_free(g);
}

/* The lookup too: 60,000 i32 indices (40,000 i64 ones, narrowed on the tiles)
 * into a table computed at run time (an input) on 4 tiles, where no plan
 * holds every index and its partial row on a table tile, runs in passes
 * of the indices, the table's blocks placed once; each output row is the
 * table's row, bit for bit (normal values: the sums of a row with zeros
 * are exact). */
static void run_gather_passes(graph_dtype idt, int64_t N)
{
    enum { V = 64, D = 2 };
    graph *g = graph_new("gather", 13);
    input(g, "table", 2, (const int64_t[]){ V, D });
    int ix = input(g, "idx", 1, (const int64_t[]){ N });
    g->tensors[ix].dtype = idt;
    node(g, GRAPH_OP_GATHER, "table,idx", "rows");
    finish(g, "rows");
    float table[V * D];
    int64_t *idx = malloc((size_t)N * 8);
    int32_t *idx32 = malloc((size_t)N * 4);
    CU_ASSERT_FATAL(idx && idx32);
    rng = 7;
    for (int i = 0; i < V * D; i++)
        table[i] = (rnd() < 0 ? -1.0f : 1.0f) * (float)(i + 1) / 8.0f;
    for (int64_t i = 0; i < N; i++) {
        rng = rng * 1664525u + 1013904223u;
        int64_t t = (int64_t)((rng >> 8) % V);
        idx[i] = i % 7 == 3 ? t - V : t;
        idx32[i] = (int32_t)idx[i];
    }
    graph_value in[2] = { { GDT_F32, g->tensors[g->inputs[0]].shape, table },
                          { idt, g->tensors[g->inputs[1]].shape, idt == GDT_I64 ? (void *)idx : (void *)idx32 } };
    graph_value out;
    simulated(g, in, 4, &out);
    CU_ASSERT_EQUAL_FATAL(graph_shape_numel(&out.shape), (int64_t)N * D);
    const float *got = out.data;
    int64_t bad = 0;
    for (int64_t i = 0; i < N; i++) {
        int64_t t = idx[i] < 0 ? idx[i] + V : idx[i];
        bad += memcmp(&got[i * D], &table[t * D], D * 4) != 0;
    }
    CU_ASSERT_EQUAL(bad, 0);
    graph_value_free(&out);
    free(idx);
    free(idx32);
    graph_free(g);
}

static void test_sim_gather_passes(void)
{
    run_gather_passes(GDT_I32, 60000);
    run_gather_passes(GDT_I64, 40000);
}

/* GatherGrad(dY, idx, G): the scatter-add into an initial gradient G.  G a
 * matmul's result read by nothing else (P [v, k] x Q [k, d]): added into
 * G's storage, the matmul's blocks (many tiles: column slices; few: whole
 * rows); G an input of the graph: into blocks of the scatter's own plan
 * that start as G's rows.  Repeated and negative indices as above.  With
 * chunked, dY's rows must come to G's tiles in more than one chunk. */
static void run_gather_grad_into(int64_t v, int64_t d, int64_t n, int64_t k, bool computed, uint32_t tiles,
                                 uint32_t seed, bool chunked)
{
    graph *g = graph_new("gather_grad_into", 13);
    const int64_t yd[2] = { n, d }, id[1] = { n }, pd[2] = { v, k }, qd[2] = { k, d }, gd[2] = { v, d };
    input(g, "dy", 2, yd);
    int ix = input(g, "idx", 1, id);
    g->tensors[ix].dtype = GDT_I64;
    if (computed) {
        input(g, "p", 2, pd);
        input(g, "q", 2, qd);
        node(g, GRAPH_OP_MATMUL, "p,q", "g0");
    } else {
        input(g, "g0", 2, gd);
    }
    graph_node *nd = node(g, GRAPH_OP_GATHERGRAD, "dy,idx,g0", "dt");
    graph_set_attr_ints(nd, "shape", gd, 2);
    finish(g, "dt");
    size_t ny = (size_t)(n * d), np = (size_t)(v * k), nq = (size_t)(k * d), ng = (size_t)(v * d);
    float *dy = malloc(ny * 4), *dya = malloc(ny * 4), *a = malloc((np + nq + ng) * 4), *aa = malloc((np + nq + ng) * 4);
    int64_t *idx = malloc((size_t)n * 8);
    for (size_t i = 0; i < ny; i++) {
        dy[i] = rnd() * ldexpf(1.0f, (int)(i % 9) - 4);
        dya[i] = fabsf(dy[i]);
    }
    for (size_t i = 0; i < np + nq + ng; i++) {
        a[i] = rnd();
        aa[i] = fabsf(a[i]);
    }
    rng = rng * 1664525u + seed;
    int *count = calloc((size_t)v, sizeof *count), kmax = 1;
    for (int64_t i = 0; i < n; i++) {
        rng = rng * 1664525u + 1013904223u;
        int64_t t = (int64_t)((rng >> 8) % (uint32_t)(i % 3 == 0 ? 5 : v));
        kmax = ++count[t] > kmax ? count[t] : kmax;
        idx[i] = i % 4 == 1 ? t - v : t;
    }
    graph_value in[4] = { { GDT_F32, g->tensors[g->inputs[0]].shape, dy },
                          { GDT_I64, g->tensors[g->inputs[1]].shape, idx },
                          { GDT_F32, g->tensors[g->inputs[2]].shape, a } };
    if (computed)
        in[3] = (graph_value){ GDT_F32, g->tensors[g->inputs[3]].shape, a + np };
    else
        in[2].data = a + np + nq;
    graph_value in_abs[4] = { in[0], in[1], in[2], in[3] };
    in_abs[0].data = dya;
    in_abs[2].data = aa + ((char *)in[2].data - (char *)a) / 4;
    if (computed)
        in_abs[3].data = aa + np;
    /* G's own rounding (a k-term dot product) and the sums into it */
    simulate_result r = sim_vs_eval(g, in, in_abs, tiles, (double)(kmax + (computed ? k : 0) + 1));
    CU_ASSERT_EQUAL(r.plan.scatters_in_place, computed ? 1u : 0u);
    if (computed)
        CU_ASSERT(chunked ? r.plan.scatter_chunks > 1 : r.plan.scatter_chunks == 1);
    free(dy); free(dya); free(a); free(aa); free(idx); free(count);
    graph_free(g);
}

static void test_sim_gather_grad_into(void)
{
    run_gather_grad_into(600, 96, 48, 16, true, 0, 5, false);   /* many tiles: column slices of the matmul */
    run_gather_grad_into(300, 32, 40, 8, true, 4, 6, false);    /* few tiles: whole rows */
    run_gather_grad_into(300, 16, 40, 8, false, 8, 7, false);   /* an input: the scatter's own blocks */
    /* dY's slices more than a tile holds at once (2048 rows of the
     * whole rows of 96 on 8 tiles: 768 KiB): in chunks of rows, added in
     * index order */
    run_gather_grad_into(600, 96, 2048, 16, true, 8, 8, true);
}

/* Add(G, GatherGrad(dY, idx)) in a training step: train_prepare makes it
 * one GatherGrad into G, and G's matmul waits for it. */
static void test_train_fuses_scatter_add(void)
{
    graph *g = graph_new("tied", 13);
    const int64_t xd[2] = { 6, 32 }, wd[2] = { 200, 32 }, id[1] = { 6 };
    int ix = input(g, "ids", 1, id);
    g->tensors[ix].dtype = GDT_I64;
    input(g, "x", 2, xd);
    float w[200 * 32];
    for (int i = 0; i < 200 * 32; i++)
        w[i] = rnd();
    cnst(g, "table", 2, wd, w);
    const int64_t md[2] = { 32, 32 };
    cnst(g, "m", 2, md, NULL);
    node(g, GRAPH_OP_GATHER, "table,ids", "emb");
    node(g, GRAPH_OP_ADD, "emb,x", "h0");
    node(g, GRAPH_OP_RELU, "h0", "h1");
    node(g, GRAPH_OP_MATMUL, "h1,m", "h");
    graph_node *mm = node(g, GRAPH_OP_GEMM, "h,table", "logits");
    graph_set_attr_int(mm, "transB", 1);
    finish(g, "logits");
    train_options o;
    train_options_default(&o);
    o.loss = "mse:logits:target";
    train_info info;
    train_built(g, &o, &info);
    int fused = 0, plain = 0;
    for (int k = 0; k < g->n_nodes; k++)
        if (g->nodes[k].op == GRAPH_OP_GATHERGRAD) {
            *(g->nodes[k].n_inputs == 3 ? &fused : &plain) += 1;
            /* the decoder's weight gradient (6400 elements from 6 rows of
             * 200 and of 32) runs just before the scatter-add into it, at
             * the end of the backward pass, not where its inputs are ready */
            int p = g->tensors[g->nodes[k].inputs[g->nodes[k].n_inputs - 1]].producer;
            CU_ASSERT(g->nodes[k].n_inputs < 3 || p == k - 1);
        }
    CU_ASSERT_EQUAL(fused, 1);
    CU_ASSERT_EQUAL(plain, 0);
    graph_free(g);
}

void test_register(void)
{
    ADD_SUITE("pool_grad",
              {"MaxPoolGrad evaluator: ties, overlap, padding", test_eval_maxpool_grad},
              {"GatherGrad evaluator: repeated and negative indices", test_eval_gather_grad},
              {"MaxPoolGrad compiled and simulated vs evaluator", test_sim_maxpool_grad},
              {"GatherGrad compiled and simulated vs evaluator", test_sim_gather_grad},
              {"GatherGrad of more indices than a tile holds, in passes", test_sim_gather_grad_passes},
              {"Gather of more indices than a tile holds, in passes", test_sim_gather_passes},
              {"GatherGrad into an initial gradient, in place and not", test_sim_gather_grad_into},
              {"training: the tied table's gradient sum scatters into the other term", test_train_fuses_scatter_add});
}
