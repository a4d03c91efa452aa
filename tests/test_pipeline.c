/*
 * test_pipeline.c — training steps of several micro-batches, and pipelined
 * over stages with the micro-batches overlapped (train_pipeline.c, the
 * lowering's pipeline cycles in lower.c):
 *
 *   - a step of two micro-batches updates the weights with the mean of the
 *     gradients each micro-batch gives alone (host evaluator), and the
 *     simulated step, a pipeline of two stages, gives the evaluator's
 *     values for the same graph;
 *   - the schedule: every stage reads only what its own chip holds or an
 *     IpuCopy brought, and each node runs in the cycle its micro-batch and
 *     stage give (forward t = m + s, backward t = m + 2S - 2 - s);
 *   - each f16 weight's Cast on its layer's stage, each weight's Adam
 *     moments read on the weight's stage;
 *   - the overlapped step takes the time its schedule predicts: the
 *     serial run (one stage at a time) gives each stage's forward and
 *     backward time per micro-batch, F_s and B_s; the pipeline's cycles
 *     then take sum over t of max over s of the work stage s has in cycle
 *     t; the simulated overlapped step is held within 12% of that, and
 *     well below the serial step.
 *
 * Tolerance of the first check: the mean of two f32 gradients (sums of 8
 * products of values below 2) against the same computed in f64 and
 * rounded per op: 1e-5 absolute and relative.  A gradient of one
 * micro-batch only, or a sum instead of a mean, is off by half or more.
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
#include "sim/engine/phase_stats.h"
#include "sim/engine/program_io.h"
#include "test_util.h"
#include "control_fixture.h"
#include "train_fixture.h"

#define WEIGHTS 4
#define MB_MAX 8

static const char *const weight_names[WEIGHTS] = { "w1", "b1", "w2", "b2" };
static const int weight_elements[WEIGHTS] = { 32, 8, 24, 3 };

static graph *step_with(uint32_t stages, uint32_t micro_batches, bool recompute)
{
    graph *g = train_mlp(5);
    train_options o;
    train_options_default(&o);
    o.loss = "softmax-ce:logits:labels";
    o.lr = 0.5;
    o.stages = stages;
    o.micro_batches = micro_batches;
    o.recompute = recompute;
    train_info info;
    return train_built(g, &o, &info);
}

static graph *step(uint32_t stages, uint32_t micro_batches) { return step_with(stages, micro_batches, false); }

/* g made a training step of `loss` at rate lr, a pipeline of two stages
 * over M micro-batches. */
static graph *two_stages(graph *g, const char *loss, double lr, uint32_t M)
{
    train_options o;
    train_options_default(&o);
    o.loss = loss;
    o.lr = lr;
    o.stages = 2;
    o.micro_batches = M;
    train_info info;
    return train_built(g, &o, &info);
}

static float x_data[MB_MAX][32];
static int32_t label_data[MB_MAX][8];

/* Micro-batch m's data; in[] for graph g's inputs ("x", "labels",
 * "mbM/x", "mbM/labels"). */
static void feed(const graph *g, graph_value *in)
{
    for (int m = 0; m < MB_MAX; m++) {
        for (int i = 0; i < 32; i++)
            x_data[m][i] = (float)((i * 7 + m * 5) % 13) / 6.0f - 1.0f;
        for (int i = 0; i < 8; i++)
            label_data[m][i] = (i * 5 + m * 2) % 3;   /* classes of both models */
    }
    for (int i = 0; i < g->n_inputs; i++) {
        const graph_tensor *t = &g->tensors[g->inputs[i]];
        int m = 0;
        const char *name = t->name;
        if (!strncmp(name, "mb", 2)) {
            m = atoi(name + 2);
            name = strchr(name, '/') + 1;
        }
        CU_ASSERT_FATAL(m < MB_MAX);
        in[i] = (graph_value){ .dtype = t->dtype, .shape = t->shape,
                               .data = !strcmp(name, "x") ? (void *)x_data[m] : (void *)label_data[m] };
    }
}

static const float *weight(const graph *g, int k)
{
    int t = graph_find_tensor(g, weight_names[k]);
    CU_ASSERT_FATAL(t >= 0 && g->tensors[t].init);
    return g->tensors[t].init;
}

/* Two micro-batches: w - lr (g0 + g1) / 2, g_m micro-batch m's gradient
 * alone; and the simulated pipeline of two stages gives the same. */
static void test_accumulated_mean(void)
{
    char err[512];
    graph *two = step(1, 2);
    CU_ASSERT_EQUAL(two->micro_batches, 2);
    CU_ASSERT_EQUAL(two->n_inputs, 4);
    graph_value in[8], out[8];
    feed(two, in);
    CU_ASSERT_TRUE_FATAL(graph_eval_step(two, in, out, err, sizeof err));
    for (int o = 0; o < two->n_outputs; o++)
        graph_value_free(&out[o]);

    double want[WEIGHTS][32] = { { 0 } };
    float w0[WEIGHTS][32];
    for (int m = 0; m < 2; m++) {
        graph *one = train_mlp(5);
        train_options o;
        train_options_default(&o);
        o.loss = "softmax-ce:logits:labels";
        o.lr = 0.5;
        o.anchor_gradients = true;
        train_info info;
        train_built(one, &o, &info);
        for (int k = 0; k < WEIGHTS; k++)
            memcpy(w0[k], weight(one, k), (size_t)weight_elements[k] * 4);
        graph_value in1[2], out1[8];
        for (int i = 0; i < one->n_inputs; i++) {
            const graph_tensor *t = &one->tensors[one->inputs[i]];
            in1[i] = (graph_value){ .dtype = t->dtype, .shape = t->shape,
                                    .data = !strcmp(t->name, "x") ? (void *)x_data[m] : (void *)label_data[m] };
        }
        CU_ASSERT_TRUE_FATAL(graph_eval_step(one, in1, out1, err, sizeof err));
        for (int q = 0; q < one->n_outputs; q++) {
            const char *name = one->tensors[one->outputs[q]].name;
            for (int k = 0; k < WEIGHTS; k++)
                if (!strncmp(name, "Gradient___", 11) && !strcmp(name + 11, weight_names[k]))
                    for (int i = 0; i < weight_elements[k]; i++)
                        want[k][i] += ((const float *)out1[q].data)[i] / 2;
            graph_value_free(&out1[q]);
        }
        graph_free(one);
    }
    int bad = 0;
    for (int k = 0; k < WEIGHTS; k++)
        for (int i = 0; i < weight_elements[k]; i++) {
            double expect = w0[k][i] - 0.5 * want[k][i], got = weight(two, k)[i];
            if (!(fabs(got - expect) <= 1e-5 + 1e-5 * fabs(expect)) && bad++ < 4)
                fprintf(stderr, "\n  %s[%d]: after two micro-batches %.8g, w - lr mean(g) %.8g\n", weight_names[k], i,
                        got, expect);
        }
    CU_ASSERT_EQUAL(bad, 0);
    graph_free(two);

    /* the same step pipelined on two chips, simulated, against the evaluator */
    machine m;
    CU_ASSERT_TRUE_FATAL(machine_preset("m2000", &m, err, sizeof err));
    graph *sim = step(2, 2), *ref = step(2, 2);
    lower_options lo = { .machine = &m, .pipeline = 2, .tiles = 16 };
    feed(sim, in);
    CU_ASSERT_EQUAL(train_check_step(sim, ref, in, &lo, 1e-5, 1e-5), WEIGHTS);
    graph_free(sim);
    graph_free(ref);
}

/* Every forward and backward node of micro-batch m on stage s in cycle
 * m + s (forward) or m + 2S - 2 - s (backward); what it reads made on its
 * stage or copied there; the nodes in the order of their cycles. */
static void test_schedule(void)
{
    const uint32_t S = 3, M = 4;
    graph *g = step(S, M);
    CU_ASSERT_EQUAL(g->pipeline_stages, S);
    int copies = 0, last = -1, stages_seen = 0;
    for (int k = 0; k < g->n_nodes; k++) {
        const graph_node *n = &g->nodes[k];
        CU_ASSERT_TRUE(n->stage >= 0 && n->stage < (int)S);
        if (n->phase == GRAPH_PHASE_UPDATE) {
            CU_ASSERT_EQUAL(n->cycle, -1);
            continue;
        }
        CU_ASSERT_TRUE(n->cycle >= -1 && n->cycle < (int)(M + 2 * S - 2));
        if (n->op == GRAPH_OP_IPU_COPY) {
            copies++;
            continue;
        }
        stages_seen |= 1 << n->stage;
        CU_ASSERT_TRUE(n->cycle >= last);
        last = n->cycle;
        int m = 0;
        if (!strncmp(n->name, "mb", 2))
            m = atoi(n->name + 2);
        if (n->name[0] && n->op != GRAPH_OP_ADD)
            CU_ASSERT_EQUAL(n->cycle, n->phase == GRAPH_PHASE_FORWARD ? m + n->stage : m + 2 * (int)S - 2 - n->stage);
        for (int i = 0; i < n->n_inputs; i++) {
            int t = n->inputs[i];
            if (t < 0 || g->tensors[t].data)
                continue;
            int p = g->tensors[t].producer;
            if (p >= 0) {
                CU_ASSERT_TRUE(g->nodes[p].stage == n->stage || g->nodes[p].phase == GRAPH_PHASE_UPDATE);
                CU_ASSERT_TRUE(p < k);
            }
        }
    }
    CU_ASSERT_EQUAL(stages_seen, (1 << S) - 1);
    CU_ASSERT_TRUE(copies > 0);
    graph_free(g);
}

/* A weight the first stage reads and the last reads again (a decoder tied
 * to an embedding, here W1 and its transpose): the reading node runs on
 * chip 0, a third pipeline stage, and W1 is never copied; the step gives
 * the evaluator's values. */
static void tied_weight(bool share)
{
    const uint32_t M = 3;
    graph *built[2];
    for (int k = 0; k < 2; k++) {
        rng = 9;
        graph *g = graph_new("tied", 13);
        input(g, "x", 2, (const int64_t[]){ 8, 4 });
        cnst(g, "w1", 2, (const int64_t[]){ 4, 8 }, NULL);
        cnst(g, "w2", 2, (const int64_t[]){ 8, 8 }, NULL);
        node(g, GRAPH_OP_MATMUL, "x,w1", "h0");
        node(g, GRAPH_OP_RELU, "h0", "h");
        node(g, GRAPH_OP_MATMUL, "h,w2", "h2");
        node(g, GRAPH_OP_TRANSPOSE, "w1", "w1t");
        node(g, GRAPH_OP_MATMUL, "h2,w1t", "logits");
        finish(g, "logits");
        built[k] = two_stages(g, "softmax-ce:logits:labels", 0.5, M);
    }
    graph *g = built[0];
    CU_ASSERT_EQUAL(g->pipeline_cycles, M + 2 * 3 - 2);
    int logits = 0;
    for (int k = 0; k < g->n_nodes; k++) {
        const graph_node *n = &g->nodes[k];
        if (n->op == GRAPH_OP_IPU_COPY)
            CU_ASSERT_FALSE(g->tensors[n->inputs[0]].is_variable && !strcmp(g->tensors[n->inputs[0]].name, "w1"));
        for (int i = 0; i < n->n_outputs; i++)
            if (n->outputs[i] >= 0 && !strcmp(g->tensors[n->outputs[i]].name, "logits")) {
                CU_ASSERT_EQUAL(n->stage, 0);
                CU_ASSERT_EQUAL(n->cycle, 2);
                logits++;
            }
    }
    CU_ASSERT_EQUAL(logits, 1);
    char err[256];
    machine m;
    CU_ASSERT_TRUE_FATAL(machine_preset("m2000", &m, err, sizeof err));
    lower_options lo = { .machine = &m, .pipeline = 2, .tiles = 16, .share_programs = share };
    graph_value in[2 * MB_MAX];
    feed(g, in);
    CU_ASSERT_EQUAL(train_check_step(g, built[1], in, &lo, 1e-5, 1e-5), 2);
    graph_free(built[0]);
    graph_free(built[1]);
}

/* ... and with the micro-batches sharing each stage's program (the tied
 * head's sections on chip 0 beside stage 0's, in one arena). */
static void test_tied_weight(void)
{
    tied_weight(false);
    tied_weight(true);
}

/* One run of a compiled step: each chip's busy cycles (compute, exchange
 * and sync, no waiting) in each phase, and the cycles of the pipeline
 * phase (or of the whole step). */
typedef struct run_figures {
    uint64_t cycles, pipeline_cycles;
    double busy[2][2];            /* [stage][forward, backward] */
} run_figures;

static void run_with(const machine *m, graph *g, const lower_options *lo, run_figures *f)
{
    char err[512];
    ipu_exe *e = lower_graph(g, lo, NULL, err, sizeof err);
    if (!e)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    engine *eng = engine_new(m, e, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(eng);
    tensor_map *map = program_tensor_map(e, "mlp", err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(map);
    graph_value in[2 * MB_MAX];
    CU_ASSERT_FATAL(g->n_inputs <= 2 * MB_MAX);
    feed(g, in);
    for (int i = 0; i < g->n_inputs; i++) {
        const graph_tensor *t = &g->tensors[g->inputs[i]];
        const tmap_tensor *mt = tmap_find(map, t->name);
        CU_ASSERT_PTR_NOT_NULL_FATAL(mt);
        CU_ASSERT_TRUE_FATAL(program_set_input(eng, mt, in[i].data,
                                               (size_t)graph_shape_numel(&t->shape) * graph_dtype_size(t->dtype), err,
                                               sizeof err));
    }
    tmap_free(map);
    engine_options eo = { .max_cycles = 100000000ull, .trace_tile_first = 1, .trace_tile_last = 0 };
    enum engine_status status = engine_run(eng, &eo);
    if (status != ENGINE_DONE)
        fprintf(stderr, "\n  %s\n", engine_message(eng));
    CU_ASSERT_EQUAL_FATAL(status, ENGINE_DONE);
    const engine_stats *st = engine_get_stats(eng);
    static program_phases ph;
    CU_ASSERT_TRUE_FATAL(phase_stats_read(e, &ph, err, sizeof err));
    memset(f, 0, sizeof *f);
    f->cycles = st->chips[0].c.cycles;
    for (uint32_t chip = 0; chip < 2; chip++) {
        phase_totals tot[PHASES_MAX_STRETCHES > 16 ? 16 : PHASES_MAX_STRETCHES];
        CU_ASSERT_FATAL(ph.n <= 16);
        phase_stats_sum(st, &ph, chip, tot);
        for (int d = 0; d < 2; d++) {
            int i = phase_stats_find(&ph, d ? "backward" : "forward");
            if (i >= 0)
                f->busy[chip][d] = (double)(tot[i].c.compute_cycles + tot[i].c.exchange_cycles + tot[i].c.sync_cycles);
        }
        int p = phase_stats_find(&ph, "pipeline");
        if (p >= 0 && chip == 0)
            f->pipeline_cycles = tot[p].c.cycles;
    }
    engine_free(eng);
    exe_free(e);
}

static void run(const machine *m, graph *g, bool serial, run_figures *f)
{
    lower_options lo = { .machine = m, .pipeline = 2, .tiles = 16, .serial_pipeline = serial };
    run_with(m, g, &lo, f);
}

static void test_overlap_as_scheduled(void)
{
    char err[512];
    machine m;
    CU_ASSERT_TRUE_FATAL(machine_preset("m2000", &m, err, sizeof err));
    const int S = 2, M = 6;
    graph *g = step((uint32_t)S, (uint32_t)M);
    run_figures serial, overlap;
    run(&m, g, true, &serial);
    run(&m, g, false, &overlap);
    CU_ASSERT_TRUE_FATAL(overlap.pipeline_cycles > 0);
    /* F_s, B_s a micro-batch from the serial run; the schedule's cycles */
    double predicted = 0;
    for (int t = 0; t < M + 2 * S - 2; t++) {
        double most = 0;
        for (int s = 0; s < S; s++) {
            double work = 0;
            if (t - s >= 0 && t - s < M)
                work += serial.busy[s][0] / M;
            if (t - (2 * S - 2 - s) >= 0 && t - (2 * S - 2 - s) < M)
                work += serial.busy[s][1] / M;
            most = work > most ? work : most;
        }
        predicted += most;
    }
    double serial_fb = serial.busy[0][0] + serial.busy[0][1] + serial.busy[1][0] + serial.busy[1][1];
    fprintf(stderr, "\n  serial step %llu cycles (stages' forward %.0f %.0f, backward %.0f %.0f); overlapped step "
            "%llu, its pipeline %llu cycles; the schedule predicts %.0f (%+.1f%%)\n",
            (unsigned long long)serial.cycles, serial.busy[0][0], serial.busy[1][0], serial.busy[0][1],
            serial.busy[1][1], (unsigned long long)overlap.cycles, (unsigned long long)overlap.pipeline_cycles,
            predicted, 100.0 * ((double)overlap.pipeline_cycles / predicted - 1));
    CU_ASSERT_TRUE(fabs((double)overlap.pipeline_cycles / predicted - 1) <= 0.12);
    CU_ASSERT_TRUE((double)overlap.pipeline_cycles < 0.8 * serial_fb);
    CU_ASSERT_TRUE(overlap.cycles < serial.cycles);
    graph_free(g);
}

/* Recomputation (--recompute): stage 0 of a 2-stage pipeline of 4
 * micro-batches makes the forward nodes its backward pass reads again in
 * its backward cycles, and its backward nodes read nothing else its
 * forward pass made; the last stage recomputes nothing (its two passes
 * share a cycle).  The step's weights are bit for bit those of the step
 * without it (the same ops on the same values) and the evaluator's within
 * the tolerance above; the extra forward work makes the pipeline longer. */
static void test_recompute(void)
{
    char err[512];
    machine m;
    CU_ASSERT_TRUE_FATAL(machine_preset("m2000", &m, err, sizeof err));
    graph *g[2], *ref = step_with(2, 4, true);
    run_figures f[2];
    for (int r = 0; r < 2; r++) {
        g[r] = step_with(2, 4, r);
        run(&m, g[r], false, &f[r]);
    }
    int recomputed = 0;
    for (int k = 0; k < g[1]->n_nodes; k++) {
        const graph_node *n = &g[1]->nodes[k];
        recomputed += n->recomputed;
        CU_ASSERT(!n->recomputed || (n->stage == 0 && n->phase == GRAPH_PHASE_BACKWARD));
        if (n->recomputed || n->phase != GRAPH_PHASE_BACKWARD || n->stage != 0)
            continue;
        for (int i = 0; i < n->n_inputs; i++) {
            int p = n->inputs[i] >= 0 ? g[1]->tensors[n->inputs[i]].producer : -1;
            CU_ASSERT(p < 0 || g[1]->nodes[p].phase != GRAPH_PHASE_FORWARD || g[1]->nodes[p].stage != 0 ||
                      g[1]->nodes[p].op == GRAPH_OP_IPU_COPY);
        }
    }
    CU_ASSERT(recomputed >= 4 * 2);          /* at least fc1's MatMul and Add, for each micro-batch */
    CU_ASSERT(f[1].pipeline_cycles > f[0].pipeline_cycles);
    lower_options lo = { .machine = &m, .pipeline = 2, .tiles = 16 };
    graph_value in[2 * MB_MAX];
    feed(g[1], in);
    CU_ASSERT_EQUAL(train_check_step(g[1], ref, in, &lo, 1e-5, 1e-5), WEIGHTS);
    feed(g[0], in);
    graph *plain_ref = step_with(2, 4, false);
    CU_ASSERT_EQUAL(train_check_step(g[0], plain_ref, in, &lo, 1e-5, 1e-5), WEIGHTS);
    for (int k = 0; k < WEIGHTS; k++)
        CU_ASSERT_EQUAL(memcmp(weight(g[0], k), weight(g[1], k), (size_t)weight_elements[k] * 4), 0);
    graph_free(plain_ref);
    graph_free(ref);
    graph_free(g[0]);
    graph_free(g[1]);
}

/* Where a pipelined step's weights and optimizer state live: with f16
 * weights, each weight's Cast to f32 (a node of weights alone, which the
 * topological order puts first) runs on the stage of the layer that reads
 * it, so no weight counts as a table the first stage looks up and the
 * last reads again (no tied head: M + 2S - 2 cycles); each node of the
 * update that reads a weight's Adam moments runs on that weight's stage,
 * where the moments then live, not on chip 0 by default (a moment's decay
 * reads only the moment and a constant, and the bias corrections are
 * scalars every weight's update reads). */
static void test_weight_and_state_stages(void)
{
    const uint32_t S = 2, M = 4;
    graph *g = train_mlp(5);
    train_options o;
    train_options_default(&o);
    o.loss = "softmax-ce:logits:labels";
    o.lr = 0.01;
    o.optimizer = TRAIN_ADAM;
    o.f16_weights = true;
    o.stages = S;
    o.micro_batches = M;
    train_info info;
    g = train_built(g, &o, &info);
    CU_ASSERT_EQUAL(g->pipeline_cycles, M + 2 * S - 2);
    int stage_of[WEIGHTS];
    for (int w = 0; w < WEIGHTS; w++) {
        int v = graph_find_tensor(g, weight_names[w]);
        CU_ASSERT_FATAL(v >= 0 && g->tensors[v].dtype == GDT_F16);
        stage_of[w] = -1;
        for (int k = 0; k < g->n_nodes; k++) {
            const graph_node *n = &g->nodes[k];
            if (n->phase != GRAPH_PHASE_FORWARD || n->op != GRAPH_OP_CAST || n->inputs[0] != v)
                continue;
            CU_ASSERT_EQUAL(stage_of[w], -1);
            stage_of[w] = n->stage;
            for (int r = 0; r < g->n_nodes; r++)      /* its readers, of every micro-batch */
                for (int i = 0; i < g->nodes[r].n_inputs; i++)
                    if (g->nodes[r].inputs[i] == n->outputs[0] && g->nodes[r].phase == GRAPH_PHASE_FORWARD)
                        CU_ASSERT_EQUAL(g->nodes[r].stage, n->stage);
        }
        CU_ASSERT(stage_of[w] >= 0);
        int readers = 0;
        for (int mo = 0; mo < 2; mo++) {
            char name[64];
            snprintf(name, sizeof name, "%s/%s", weight_names[w], mo ? "second_moment" : "first_moment");
            int t = graph_find_tensor(g, name);
            CU_ASSERT_FATAL(t >= 0);
            for (int k = 0; k < g->n_nodes; k++)
                for (int i = 0; i < g->nodes[k].n_inputs; i++)
                    if (g->nodes[k].inputs[i] == t) {
                        CU_ASSERT_EQUAL(g->nodes[k].phase, GRAPH_PHASE_UPDATE);
                        CU_ASSERT_EQUAL(g->nodes[k].stage, stage_of[w]);
                        readers++;
                    }
        }
        CU_ASSERT(readers >= 2);
    }
    CU_ASSERT_EQUAL(stage_of[0], 0);     /* fc1 on the first stage, fc2 on the second */
    CU_ASSERT_EQUAL(stage_of[2], 1);
    char err[512];
    machine m;
    CU_ASSERT_TRUE_FATAL(machine_preset("m2000", &m, err, sizeof err));
    lower_options lo = { .machine = &m, .pipeline = 2, .tiles = 16 };
    ipu_exe *e = lower_graph(g, &lo, NULL, err, sizeof err);
    if (!e)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_PTR_NOT_NULL(e);
    exe_free(e);
    graph_free(g);
}

/* A table the first stage looks up and a tied decoder on the head reads
 * again (BERT's word embeddings): its gradient, the lookup's scatter-add
 * into the decoder's weight gradient, is one accumulator over the
 * micro-batches that the head adds each micro-batch's decoder gradient
 * into as it makes it and the first stage scatters each lookup into, so
 * that no micro-batch's table-sized gradient waits for the first stage's
 * backward pass of it: at no point of the schedule are more than two
 * table-sized gradients held (summing each micro-batch's whole gradient
 * at the first stage held three here, the head's of later micro-batches
 * waiting beside the sum); and the step gives the evaluator's values. */
static void test_tied_table_accumulated(void)
{
    enum { V = 24, D = 16, ROWS = 6, M = 4 };
    graph *built[2];
    for (int k = 0; k < 2; k++) {
        rng = 21;
        graph *g = graph_new("tied", 13);
        int ix = input(g, "ids", 1, (const int64_t[]){ ROWS });
        g->tensors[ix].dtype = GDT_I32;
        float small[V * D];          /* |values| below 1/4: sums of 16 products well within f32 */
        for (int e = 0; e < V * D; e++)
            small[e] = rnd() / 8;
        cnst(g, "table", 2, (const int64_t[]){ V, D }, small);
        node(g, GRAPH_OP_GATHER, "table,ids", "h0");
        for (int l = 1; l <= 3; l++) {   /* the layers, more work than the decoder */
            char w[8], ins[32], h[8];
            snprintf(w, sizeof w, "w%d", l);
            for (int e = 0; e < D * D; e++)
                small[e] = rnd() / 8;
            cnst(g, w, 2, (const int64_t[]){ D, D }, small);
            snprintf(ins, sizeof ins, "h%d,%s", l - 1, w);
            snprintf(h, sizeof h, "a%d", l);
            node(g, GRAPH_OP_MATMUL, ins, h);
            snprintf(ins, sizeof ins, "a%d", l);
            snprintf(h, sizeof h, "h%d", l);
            node(g, GRAPH_OP_RELU, ins, h);
        }
        graph_set_attr_int(node(g, GRAPH_OP_GEMM, "h3,table", "logits"), "transB", 1);
        finish(g, "logits");
        built[k] = two_stages(g, "mse:logits:target", 0.1, M);
    }
    graph *g = built[0];
    CU_ASSERT_EQUAL(g->pipeline_cycles, M + 2 * 3 - 2);       /* the decoder a stage of its own */
    /* table-sized tensors the backward pass makes, in the schedule's order:
     * [made, last read) */
    int *made = malloc((size_t)g->n_tensors * sizeof *made), *last = malloc((size_t)g->n_tensors * sizeof *last);
    CU_ASSERT_FATAL(made && last);
    for (int t = 0; t < g->n_tensors; t++)
        made[t] = last[t] = -1;
    int scatters = 0;
    for (int k = 0; k < g->n_nodes; k++) {
        const graph_node *n = &g->nodes[k];
        scatters += n->op == GRAPH_OP_GATHERGRAD;
        if (n->phase == GRAPH_PHASE_BACKWARD && n->outputs[0] >= 0 &&
            graph_shape_numel(&g->tensors[n->outputs[0]].shape) == V * D)
            made[n->outputs[0]] = k;
        for (int i = 0; i < n->n_inputs; i++)
            if (n->inputs[i] >= 0)
                last[n->inputs[i]] = k;
    }
    CU_ASSERT_EQUAL(scatters, M);
    int most = 0, tables = 0;
    for (int k = 0; k < g->n_nodes; k++) {
        int held = 0;                 /* after node k, still to be read */
        for (int t = 0; t < g->n_tensors; t++)
            held += made[t] >= 0 && made[t] <= k && last[t] > k;
        most = held > most ? held : most;
    }
    for (int t = 0; t < g->n_tensors; t++)
        tables += made[t] >= 0;
    CU_ASSERT_EQUAL(tables, 3 * M + 1);   /* the sum's zeros, the decoder's M gradients, M Adds, M scatter-adds */
    CU_ASSERT(most <= 2);
    free(made);
    free(last);
    char err[256];
    machine m;
    CU_ASSERT_TRUE_FATAL(machine_preset("m2000", &m, err, sizeof err));
    lower_options lo = { .machine = &m, .pipeline = 2, .tiles = 16 };
    graph_value in[2 * M];
    static int32_t ids[M][ROWS];
    static float target[M][ROWS * V];
    CU_ASSERT_FATAL(g->n_inputs == 2 * M);
    for (int i = 0; i < g->n_inputs; i++) {
        const graph_tensor *t = &g->tensors[g->inputs[i]];
        int mb = strncmp(t->name, "mb", 2) ? 0 : atoi(t->name + 2);
        for (int r = 0; r < ROWS; r++)
            ids[mb][r] = (r * 7 + mb * 3) % V;
        for (int e = 0; e < ROWS * V; e++)
            target[mb][e] = rnd() / 4;
        in[i] = (graph_value){ .dtype = t->dtype, .shape = t->shape,
                               .data = t->dtype == GDT_I32 ? (void *)ids[mb] : (void *)target[mb] };
    }
    CU_ASSERT_EQUAL(train_check_step(g, built[1], in, &lo, 1e-5, 1e-5), 4);
    graph_free(built[0]);
    graph_free(built[1]);
}

/* Micro-batch 0's passes are the others' node for node: the step of
 * test_recompute (two stages, four micro-batches, recomputation) sums each
 * gradient from a Zeros (PopART's zeroed accumulator, made once, before
 * micro-batch 0 adds into it as every other does), and what its cycles
 * make of weights alone (graph_node.weights_only) comes first in them.
 * The Zeros stay nodes when the graph is folded (storage written every
 * run, never a constant), and evaluate to zeros. */
static void test_micro_batches_alike(void)
{
    const int S = 2, M = 4;
    graph *g = step_with((uint32_t)S, (uint32_t)M, true);
    /* each (stage, phase, micro-batch)'s ops in order, weights_only apart */
    enum { MAX_OPS = 128 };
    static int ops[2][2][4][MAX_OPS];
    int n_ops[2][2][4] = { { { 0 } } }, zeros = 0, adds = 0;
    for (int k = 0; k < g->n_nodes; k++) {
        const graph_node *n = &g->nodes[k];
        if (n->op == GRAPH_OP_ZEROS) {
            zeros++;
            /* laid out as the weight it sums the gradient of (PopART's accumulator, the weight's clone) */
            CU_ASSERT(n->weights_only && n->phase == GRAPH_PHASE_BACKWARD && n->n_inputs == 1);
            CU_ASSERT(n->n_inputs == 1 && g->tensors[n->inputs[0]].is_variable && g->tensors[n->inputs[0]].state_of < 0 &&
                      graph_shape_numel(&g->tensors[n->inputs[0]].shape) ==
                          graph_shape_numel(&g->tensors[n->outputs[0]].shape));
            CU_ASSERT_EQUAL(n->cycle, 2 * S - 2 - n->stage);      /* micro-batch 0's backward cycle */
            int readers = 0;
            for (int j = 0; j < g->n_nodes; j++)
                for (int i = 0; i < g->nodes[j].n_inputs; i++)
                    if (g->nodes[j].inputs[i] == n->outputs[0]) {
                        readers++;
                        CU_ASSERT(g->nodes[j].accumulates && g->nodes[j].op == GRAPH_OP_ADD && i == 0);
                        CU_ASSERT(j > k && g->nodes[j].cycle == n->cycle);
                    }
            CU_ASSERT_EQUAL(readers, 1);
        }
        adds += n->accumulates;
        if (n->weights_only) {
            /* before every node of its cycle and stage that is not */
            for (int j = 0; j < k; j++)
                CU_ASSERT(g->nodes[j].weights_only || g->nodes[j].cycle != n->cycle ||
                          g->nodes[j].stage != n->stage || g->nodes[j].op == GRAPH_OP_IPU_COPY);
            continue;
        }
        if (n->cycle < 0 || n->op == GRAPH_OP_IPU_COPY)
            continue;
        int bwd = n->phase == GRAPH_PHASE_BACKWARD;
        int mb = bwd ? n->cycle - (2 * S - 2 - n->stage) : n->cycle - n->stage;
        CU_ASSERT_FATAL(n->stage < S && mb >= 0 && mb < M && n_ops[n->stage][bwd][mb] < MAX_OPS);
        ops[n->stage][bwd][mb][n_ops[n->stage][bwd][mb]++] = (int)n->op * 4 + n->accumulates * 2 + n->recomputed;
    }
    CU_ASSERT_EQUAL(zeros, WEIGHTS);
    CU_ASSERT_EQUAL(adds, WEIGHTS * M);
    for (int s = 0; s < S; s++)
        for (int b = 0; b < 2; b++)
            for (int m = 1; m < M; m++) {
                CU_ASSERT(n_ops[s][b][0] > 0);
                CU_ASSERT_EQUAL(n_ops[s][b][m], n_ops[s][b][0]);
                CU_ASSERT_EQUAL(memcmp(ops[s][b][m], ops[s][b][0], (size_t)n_ops[s][b][0] * sizeof(int)), 0);
            }
    char err[256];
    CU_ASSERT_TRUE(graph_infer_all(g, true, err, sizeof err));
    int kept = 0;
    for (int k = 0; k < g->n_nodes; k++)
        if (g->nodes[k].op == GRAPH_OP_ZEROS) {
            kept++;
            const graph_tensor *y = &g->tensors[g->nodes[k].outputs[0]];
            CU_ASSERT_PTR_NULL(y->data);
            size_t bytes = (size_t)graph_shape_numel(&y->shape) * graph_dtype_size(y->dtype);
            unsigned char *out = malloc(bytes + 1);
            CU_ASSERT_FATAL(out != NULL);
            memset(out, 0xa5, bytes);
            void *outs[1] = { out };
            CU_ASSERT_TRUE(graph_ops[GRAPH_OP_ZEROS].eval(g, &g->nodes[k], NULL, outs, err, sizeof err));
            for (size_t i = 0; i < bytes; i++)
                CU_ASSERT_EQUAL_FATAL(out[i], 0);
            free(out);
        }
    CU_ASSERT_EQUAL(kept, WEIGHTS);
    graph_free(g);
}

/* Programs shared between micro-batches (lower_section.c): the step of
 * test_recompute (two stages, four micro-batches, recomputation) compiled
 * without and with lower_options.share_programs.  With: later
 * micro-batches' sections run their template's steps through a ctl_sub
 * on most of their tiles, every tile's program walks as steps (ctl_sub and
 * ctl_ret among them, and none without), the control programs are at most
 * four fifths as large, and the step updates the weights bit for bit as
 * the unshared one (each section lowered as before, from its own memory,
 * its inputs first copied there: the same arithmetic in the same order),
 * both the evaluator's within 1e-5, in as many cycles within 5% (the
 * copies of a micro-batch's inputs into the arena and of what stays out of
 * it, and a phase ended at each section's start and end: 2.5% here on 16
 * tiles a chip; BERT-Base, 2 stages of 1472 tiles, 4 micro-batches, is
 * 0.5% faster shared). */
static void test_shared_programs(void)
{
    char err[512];
    machine m;
    CU_ASSERT_TRUE_FATAL(machine_preset("m2000", &m, err, sizeof err));
    graph *g[2];
    lower_report rep[2];
    run_figures f[2];
    for (int s = 0; s < 2; s++) {
        g[s] = step_with(2, 4, true);
        lower_options lo = { .machine = &m, .pipeline = 2, .tiles = 16, .share_programs = s };
        ipu_exe *e = lower_graph(g[s], &lo, &rep[s], err, sizeof err);
        if (!e)
            fprintf(stderr, "\n  %s\n", err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(e);
        uint32_t subs = 0, rets = 0;
        for (uint32_t chip = 0; chip < 2; chip++)
            for (uint32_t i = 0; i < 16; i++) {
                control_walk cw;
                control_step st;
                control_walk_begin(&cw, e, chip * machine_u32(&m, MP_tiles_per_chip) + i);
                while (control_walk_next(&cw, &st)) {
                    subs += st.kind == CONTROL_SUB;
                    rets += st.kind == CONTROL_RET;
                }
                control_walk_end(&cw);
            }
        exe_free(e);
        CU_ASSERT(s ? subs > 32 && rets > 0 : subs == 0 && rets == 0);
        run_with(&m, g[s], &lo, &f[s]);
        graph *ref = step_with(2, 4, true);
        graph_value in[2 * MB_MAX];
        feed(g[s], in);
        CU_ASSERT_EQUAL(train_check_step(g[s], ref, in, &lo, 1e-5, 1e-5), WEIGHTS);
        graph_free(ref);
    }
    CU_ASSERT_EQUAL(rep[0].shared_sections, 0);
    CU_ASSERT(rep[1].shared_sections >= 4);
    CU_ASSERT(rep[1].shared_section_tiles * 4 >= (uint64_t)rep[1].shared_sections * 16 * 3);
    CU_ASSERT(rep[1].control_bytes * 5 <= rep[0].control_bytes * 4);
    CU_ASSERT(rep[1].shared_control_bytes > 0);
    for (int k = 0; k < WEIGHTS; k++)
        CU_ASSERT_EQUAL(memcmp(weight(g[0], k), weight(g[1], k), (size_t)weight_elements[k] * 4), 0);
    printf("\n  control programs %llu -> %llu bytes (%u sections shared on %llu tiles); step %llu -> %llu cycles\n",
           (unsigned long long)rep[0].control_bytes, (unsigned long long)rep[1].control_bytes, rep[1].shared_sections,
           (unsigned long long)rep[1].shared_section_tiles, (unsigned long long)f[0].cycles,
           (unsigned long long)f[1].cycles);
    CU_ASSERT((double)f[1].cycles <= (double)f[0].cycles * 1.05);
    CU_ASSERT((double)f[1].cycles >= (double)f[0].cycles * 0.95);
    graph_free(g[0]);
    graph_free(g[1]);
    /* without recomputation: the activations the backward pass reads placed
     * outside the arena, the step still the evaluator's */
    graph *plain = step_with(2, 4, false), *ref = step_with(2, 4, false);
    lower_options lo = { .machine = &m, .pipeline = 2, .tiles = 16, .share_programs = true };
    graph_value in[2 * MB_MAX];
    feed(plain, in);
    CU_ASSERT_EQUAL(train_check_step(plain, ref, in, &lo, 1e-5, 1e-5), WEIGHTS);
    graph_free(plain);
    graph_free(ref);
}

void test_register(void)
{
    ADD_SUITE("pipeline",
              { "two micro-batches update with the mean gradient", test_accumulated_mean },
              { "stages and cycles as the schedule gives them", test_schedule },
              { "a tied weight's reader on the weight's chip, a stage of its own", test_tied_weight },
              { "the overlapped pipeline takes its schedule's time", test_overlap_as_scheduled },
              { "recomputation: the same step, the stashed activations the stages' inputs", test_recompute },
              { "f16 weights with their layers, the optimizer's state with its weight", test_weight_and_state_stages },
              { "a tied table's gradient: one accumulator both stages add into", test_tied_table_accumulated },
              { "micro-batch 0's passes are the others', each sum started from zeros", test_micro_batches_alike },
              { "micro-batches share each stage's program, the step bit for bit the same", test_shared_programs });
}
