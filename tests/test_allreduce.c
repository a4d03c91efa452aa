/*
 * test_allreduce.c — data-parallel training across chips: the gradients
 * of every replica summed by the ring all-reduce (lower_collectives.c) on
 * two IPU-M2000s of an IPU-POD16 (8 replicas, one a chip, the ring crossing
 * between the boards), each replica fed its own batch.
 *
 *   - the all-reduced gradients (anchored, every replica's) equal the sum
 *     of the host evaluator's gradients of each replica's batch;
 *   - every replica's weights are the same bit for bit after each of two
 *     steps, and after the first equal w - lr (sum / 8) from the host sums;
 *   - the replicas' chips exchanged over the IPU-Links.
 *
 * Tolerance.  Each replica's gradient is a sum of 8 products (batch 8 of
 * values below 2), computed in f32 by the simulation and in f64 rounded
 * per op by the evaluator; the ring adds 8 such gradients in f32 in an
 * order that depends on the slice.  A few f32 ulps of sums below 64: 1e-4
 * absolute plus 1e-4 relative holds them, while a missing or doubled
 * replica (an error of 1/8 of the sum or more) is far outside.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontends/autodiff.h"
#include "frontends/graph_eval.h"
#include "frontends/lower.h"
#include "graph_fixture.h"
#include "sim/engine/engine.h"
#include "sim/engine/program_io.h"
#include "test_util.h"
#include "train_fixture.h"

#define D(...) ((const int64_t[]){ __VA_ARGS__ })
#define REPLICAS 8                /* the most a test runs */
#define WEIGHTS 4

static const char *const weight_names[WEIGHTS] = { "w1", "b1", "w2", "b2" };
static const int weight_elements[WEIGHTS] = { 32, 8, 24, 3 };

/* x [8,4] -> Relu(x W1 + b1) W2 + b2 -> logits [8,3], a training step of
 * SGD (lr 0.5) for `replicas` replicas, every gradient anchored. */
static graph *step(uint32_t replicas)
{
    graph *g = train_mlp(11);
    train_options o;
    train_options_default(&o);
    o.loss = "softmax-ce:logits:labels";
    o.lr = 0.5;
    o.anchor_gradients = true;
    o.replicas = replicas;
    train_info info;
    return train_built(g, &o, &info);
}

static float x_data[REPLICAS][32];
static int32_t label_data[REPLICAS][8];

/* Replica r's batch: its own inputs and labels. */
static void batch(uint32_t r, int salt, graph_value *in, const graph *g)
{
    for (int i = 0; i < 32; i++)
        x_data[r][i] = (float)((i * 7 + (int)r * 5 + salt * 3) % 13) / 6.0f - 1.0f;
    for (int i = 0; i < 8; i++)
        label_data[r][i] = (i * 5 + (int)r + salt) % 3;
    train_inputs(in, g, x_data[r], label_data[r]);
}

static const tmap_tensor *of_replica(const tensor_map *m, uint32_t r, const char *name)
{
    char full[96];
    if (r)
        snprintf(full, sizeof full, "replica%u/%s", r, name);
    else
        snprintf(full, sizeof full, "%s", name);
    const tmap_tensor *t = tmap_find(m, full);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    return t;
}

/* One run of the program: every replica's batch (salt), the weights
 * w[r][k] written first when carry, read back after; grads[r][k] the
 * anchored gradients. */
static void run_step(const machine *m, const ipu_exe *e, const tensor_map *map, const graph *g, uint32_t replicas,
                     int salt, bool carry,
                     float w[REPLICAS][WEIGHTS][32], float grads[REPLICAS][WEIGHTS][32], uint64_t *link_bytes)
{
    char err[512];
    engine *eng = engine_new(m, e, err, sizeof err);
    if (!eng)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(eng);
    for (uint32_t r = 0; r < replicas; r++) {
        graph_value in[2];
        batch(r, salt, in, g);
        for (int i = 0; i < g->n_inputs; i++) {
            const graph_tensor *t = &g->tensors[g->inputs[i]];
            size_t bytes = (size_t)graph_shape_numel(&t->shape) * graph_dtype_size(t->dtype);
            CU_ASSERT_TRUE_FATAL(program_set_input(eng, of_replica(map, r, t->name), in[i].data, bytes, err,
                                                   sizeof err));
        }
        for (int k = 0; carry && k < WEIGHTS; k++)
            CU_ASSERT_TRUE_FATAL(program_write_tensor(eng, of_replica(map, r, weight_names[k]), w[r][k],
                                                      (size_t)weight_elements[k] * 4, err, sizeof err));
    }
    engine_options eo = { .max_cycles = 100000000ull, .trace_tile_first = 1, .trace_tile_last = 0 };
    enum engine_status st = engine_run(eng, &eo);
    if (st != ENGINE_DONE)
        fprintf(stderr, "\n  %s\n", engine_message(eng));
    CU_ASSERT_EQUAL_FATAL(st, ENGINE_DONE);
    for (uint32_t r = 0; r < replicas; r++)
        for (int k = 0; k < WEIGHTS; k++) {
            char name[64];
            snprintf(name, sizeof name, "Gradient___%s", weight_names[k]);
            CU_ASSERT_TRUE(program_read_output(eng, of_replica(map, r, name), grads[r][k], err, sizeof err));
            CU_ASSERT_TRUE(program_read_tensor(eng, of_replica(map, r, weight_names[k]), w[r][k], err, sizeof err));
        }
    const engine_stats *s = engine_get_stats(eng);
    *link_bytes = 0;
    for (uint32_t c = 0; c < s->n_chips; c++)
        *link_bytes += s->chips[c].c.link_bytes;
    engine_free(eng);
}

static void ring_all_reduce(uint32_t replicas, const char *preset, uint32_t pipeline)
{
    char err[512];
    machine m;
    CU_ASSERT_TRUE_FATAL(machine_preset(preset, &m, err, sizeof err));
    graph *sim = step(replicas);
    lower_options lo = { .machine = &m, .replicas = replicas, .pipeline = pipeline, .tiles = 16 };
    lower_report rep;
    ipu_exe *e = lower_graph(sim, &lo, &rep, err, sizeof err);
    if (!e)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_EQUAL(rep.replicas, replicas);
    tensor_map *map = program_tensor_map(e, "mlp", err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(map);

    static float w[REPLICAS][WEIGHTS][32], grads[REPLICAS][WEIGHTS][32];
    uint64_t link_bytes;
    run_step(&m, e, map, sim, replicas, 0, false, w, grads, &link_bytes);
    /* each weight's elements cross a link 2 (R - 1) / R times a replica */
    CU_ASSERT_TRUE(link_bytes >= (uint64_t)replicas * 2 * (replicas - 1) / replicas * 67 * 4);

    /* the host: each replica's gradients from its own batch, summed */
    double sum[WEIGHTS][32] = { { 0 } };
    float w0[WEIGHTS][32];
    for (uint32_t r = 0; r < replicas; r++) {
        graph *ref = step(1);
        if (r == 0)
            for (int k = 0; k < WEIGHTS; k++)
                memcpy(w0[k], ref->tensors[graph_find_tensor(ref, weight_names[k])].init, (size_t)weight_elements[k] * 4);
        graph_value in[2], out[8];
        batch(r, 0, in, ref);
        CU_ASSERT_TRUE_FATAL(graph_eval_step(ref, in, out, err, sizeof err));
        for (int o = 0; o < ref->n_outputs; o++) {
            const char *name = ref->tensors[ref->outputs[o]].name;
            for (int k = 0; k < WEIGHTS; k++)
                if (!strncmp(name, "Gradient___", 11) && !strcmp(name + 11, weight_names[k]))
                    for (int i = 0; i < weight_elements[k]; i++)
                        sum[k][i] += ((const float *)out[o].data)[i];
            graph_value_free(&out[o]);
        }
        graph_free(ref);
    }
    int bad = 0;
    for (uint32_t r = 0; r < replicas; r++)
        for (int k = 0; k < WEIGHTS; k++)
            for (int i = 0; i < weight_elements[k]; i++) {
                double want = sum[k][i], got = grads[r][k][i];
                double want_w = (float)(w0[k][i] - (float)(0.5 * (float)(want / replicas)));
                if (!(fabs(got - want) <= 1e-4 + 1e-4 * fabs(want)) && bad++ < 4)
                    fprintf(stderr, "\n  replica %u %s[%d]: all-reduced %.8g, host sum %.8g\n", r, weight_names[k], i,
                            got, want);
                if (!(fabs(w[r][k][i] - want_w) <= 1e-4 + 1e-4 * fabs(want_w)) && bad++ < 4)
                    fprintf(stderr, "\n  replica %u %s[%d]: updated %.8g, from the host sum %.8g\n", r,
                            weight_names[k], i, w[r][k][i], want_w);
            }
    CU_ASSERT_EQUAL(bad, 0);
    for (uint32_t r = 1; r < replicas; r++)
        CU_ASSERT_TRUE(!memcmp(w[r], w[0], sizeof w[0]) && !memcmp(grads[r], grads[0], sizeof grads[0]));

    /* a second step from the weights the first left, on new batches */
    run_step(&m, e, map, sim, replicas, 1, true, w, grads, &link_bytes);
    for (uint32_t r = 1; r < replicas; r++)
        CU_ASSERT_TRUE(!memcmp(w[r], w[0], sizeof w[0]));
    CU_ASSERT_TRUE(memcmp(w[0][0], w0[0], sizeof w0[0]) != 0);
    tmap_free(map);
    exe_free(e);
    graph_free(sim);
}

/* Two replicas go round one ring (clockwise); eight, the ring pair (half
 * the block each way), on two boards of a pod; two replicas of a pipeline
 * of two stages, each stage's gradients round a ring of their own chips. */
static void test_ring_all_reduce(void)
{
    ring_all_reduce(2, "m2000", 0);
    ring_all_reduce(REPLICAS, "ipu-pod16", 0);
    ring_all_reduce(2, "m2000", 2);
}

/* The step's all-reduce is for the replicas it was built for: a program
 * with another count is refused, naming both. */
static void test_replicas_must_match(void)
{
    char err[512];
    machine m;
    CU_ASSERT_TRUE_FATAL(machine_preset("m2000", &m, err, sizeof err));
    graph *g = step(4);
    lower_options lo = { .machine = &m, .replicas = 2, .tiles = 16 };
    lower_report rep;
    ipu_exe *e = lower_graph(g, &lo, &rep, err, sizeof err);
    CU_ASSERT_PTR_NULL(e);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "sums its gradients over 4 replicas; the program has 2"));
    exe_free(e);
    graph_free(g);
    /* the host evaluator holds one replica */
    g = step(4);
    graph_value in[2], out[8];
    batch(0, 0, in, g);
    CU_ASSERT_FALSE(graph_eval_step(g, in, out, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "the sum over 4 replicas needs every replica's values"));
    graph_free(g);
}

/* A convolution's weights kept channels-last ([Cout, KH, KW, C], as the
 * convolutions read the large ones) stay so through the all-reduce: its
 * output keeps its gradient's order, the update stays in place, and a
 * step runs with every replica's weights the same. */
static void test_channels_last_weights(void)
{
    char err[512];
    machine m;
    CU_ASSERT_TRUE_FATAL(machine_preset("m2000", &m, err, sizeof err));
    rng = 5;
    graph *g = graph_new("conv", 13);
    input(g, "x", 4, D(1, 128, 8, 8));
    cnst(g, "w", 4, D(64, 128, 3, 3), NULL);          /* 73,728 elements: read channels-last */
    graph_node *c = node(g, GRAPH_OP_CONV, "x,w", "y");
    graph_set_attr_ints(c, "pads", D(1, 1, 1, 1), 4);
    node(g, GRAPH_OP_GLOBALAVERAGEPOOL, "y", "p");
    finish(g, "p");
    train_options o;
    train_options_default(&o);
    o.loss = "mse:p:target";
    o.lr = 1e-3;
    o.replicas = 4;
    train_info info;
    train_built(g, &o, &info);
    lower_options lo = { .machine = &m, .tiles = 64 };
    lower_report rep;
    ipu_exe *e = lower_graph(g, &lo, &rep, err, sizeof err);
    if (!e)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_EQUAL(rep.updates_copied, 0);
    tensor_map *map = program_tensor_map(e, "conv", err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(map);
    engine *eng = engine_new(&m, e, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(eng);
    CU_ASSERT_TRUE_FATAL(program_fill_inputs(eng, map, NULL, 0, NULL, "", err, sizeof err));
    engine_options eo = { .max_cycles = 100000000ull, .trace_tile_first = 1, .trace_tile_last = 0 };
    CU_ASSERT_EQUAL_FATAL(engine_run(eng, &eo), ENGINE_DONE);
    static float w[4][64 * 128 * 9];
    for (uint32_t r = 0; r < 4; r++)
        CU_ASSERT_TRUE(program_read_tensor(eng, of_replica(map, r, "w"), w[r], err, sizeof err));
    for (uint32_t r = 1; r < 4; r++)
        CU_ASSERT_TRUE(!memcmp(w[r], w[0], sizeof w[0]));
    CU_ASSERT_TRUE(memcmp(w[0], g->tensors[graph_find_tensor(g, "w")].init, sizeof w[0]) != 0);
    engine_free(eng);
    tmap_free(map);
    exe_free(e);
    graph_free(g);
}

void test_register(void)
{
    ADD_SUITE("allreduce",
              { "ring all-reduce over 2 replicas, 8 on two boards, 2 pipelines: host sums, identical weights",
                test_ring_all_reduce },
              { "the replicas the step was built for", test_replicas_must_match },
              { "channels-last convolution weights through the all-reduce", test_channels_last_weights });
}
