/*
 * test_train.c — training steps built by autodiff (frontends/autodiff.h),
 * compiled and simulated on a GC200 against the host evaluator's step of
 * the same graph: the loss, each weight's gradient and each updated
 * weight; the loss of a small MLP falling over 20 simulated steps; the
 * optimizers' updates against their formulas; bad loss specs.
 *
 * Tolerance.  The simulated step computes in f32 on the AMP's f32 path
 * and the f32 codelets, the evaluator in f64 rounded to f32 per op; the
 * sums of at most 64 products of values below 4 differ by a few f32 ulps
 * of the partial sums, so 1e-4 absolute plus 1e-3 relative holds the
 * gradients with a wide margin while a wrong rule (off by a factor or a
 * sign) is far outside it.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontends/autodiff.h"
#include "frontends/graph_eval.h"
#include "frontends/lower.h"
#include "frontends/simulate.h"
#include "isa/fp16.h"
#include "sim/engine/program_io.h"
#include "graph_fixture.h"
#include "test_util.h"
#include "train_fixture.h"

#define D(...) ((const int64_t[]){ __VA_ARGS__ })

/* x [8,4] -> Relu(x W1 + b1) W2 + b2 -> logits [8,3] */
static graph *mlp(void)
{
    return train_mlp(7);
}

static float x_data[32];
static int32_t label_data[8];

static void data(graph_value *in, const graph *g)
{
    for (int i = 0; i < 32; i++)
        x_data[i] = (float)((i * 7) % 11) / 5.0f - 1.0f;
    for (int i = 0; i < 8; i++)
        label_data[i] = (i * 5) % 3;
    train_inputs(in, g, x_data, label_data);
}

static graph *trained(const train_options *o, train_info *info)
{
    return train_built(mlp(), o, info);
}

/* SGD on the classifier's softmax cross-entropy, lr 0.5, with momentum. */
static train_options sgd(double momentum)
{
    train_options o;
    train_options_default(&o);
    o.loss = "softmax-ce:logits:labels";
    o.lr = 0.5;
    o.momentum = momentum;
    return o;
}

/* One SGD step simulated against the evaluator's: loss, gradients, weights. */
static void test_step_matches_reference(void)
{
    train_options o = sgd(0.9);
    o.weight_decay = 0.01;
    o.anchor_gradients = true;
    train_info info;
    graph *sim = trained(&o, &info), *ref = trained(&o, &info);
    CU_ASSERT_EQUAL(info.weights, 4);
    CU_ASSERT_EQUAL(info.weight_elements, 4 * 8 + 8 + 8 * 3 + 3);
    CU_ASSERT_EQUAL(info.state, 4);
    CU_ASSERT_EQUAL(sim->n_outputs, 5);
    graph_value in[2];
    data(in, sim);
    lower_options lo = { .machine = gc200(), .tiles = 16 };
    CU_ASSERT_EQUAL(train_check_step(sim, ref, in, &lo, 1e-4, 1e-3), 8);
    graph_free(sim);
    graph_free(ref);
}

/* The optimizer's last op writes each weight's new value over the weight
 * (SGD: w + (-lr) g; with momentum: w - lr v), and momentum's m v + g is
 * written over v (each one ScaledAdd, fusion_scaled_add), so the end of
 * the step copies nothing (before the ScaledAdd, the four momentum states
 * were copied); either way the step matches the evaluator's (the plain SGD
 * step: test_sgd_update_formula). */
static void test_weights_updated_in_place(void)
{
    for (int momentum = 0; momentum < 2; momentum++) {
        train_options o = sgd(momentum ? 0.9 : 0);
        train_info info;
        graph *g = trained(&o, &info);
        lower_options lo = { .machine = gc200(), .tiles = 16 };
        lower_report rep;
        char err[512];
        ipu_exe *e = lower_graph(g, &lo, &rep, err, sizeof err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(e);
        CU_ASSERT_EQUAL(rep.updates_in_place, momentum ? 8 : 4);
        CU_ASSERT_EQUAL(rep.updates_copied, 0);
        exe_free(e);
        graph_free(g);
    }
}

/* Each weight's update runs as soon as its gradient is complete and the
 * backward pass no longer reads the weight (PopART's schedule); with
 * delay_updates, after the whole backward pass.  Both orders are
 * topological, keep every read of a weight before its update, and give
 * the evaluator's step; the interleaved one comes in several stretches
 * of update supersteps, the delayed one in one. */
static void test_updates_as_soon_as_ready(void)
{
    for (int delay = 0; delay < 2; delay++) {
        train_options o = sgd(0.9);
        o.delay_updates = delay;
        train_info info;
        graph *sim = trained(&o, &info), *ref = trained(&o, &info);
        int last_backward = -1, first_update = -1;
        for (int k = 0; k < sim->n_nodes; k++) {
            const graph_node *n = &sim->nodes[k];
            if (n->phase == GRAPH_PHASE_BACKWARD)
                last_backward = k;
            if (n->phase == GRAPH_PHASE_UPDATE && first_update < 0)
                first_update = k;
            /* no forward or backward node reads a variable after an update node read it */
            if (n->phase == GRAPH_PHASE_UPDATE)
                for (int i = 0; i < n->n_inputs; i++)
                    for (int j = k + 1; n->inputs[i] >= 0 && sim->tensors[n->inputs[i]].is_variable && j < sim->n_nodes; j++)
                        for (int q = 0; q < sim->nodes[j].n_inputs; q++)
                            CU_ASSERT_FALSE(sim->nodes[j].phase != GRAPH_PHASE_UPDATE &&
                                            sim->nodes[j].inputs[q] == n->inputs[i]);
            /* inputs come from earlier nodes */
            for (int i = 0; i < n->n_inputs; i++)
                if (n->inputs[i] >= 0)
                    CU_ASSERT(sim->tensors[n->inputs[i]].producer < k);
        }
        CU_ASSERT(first_update >= 0 && last_backward >= 0);
        CU_ASSERT(delay ? first_update > last_backward : first_update < last_backward);
        graph_value in[2];
        data(in, sim);
        lower_options lo = { .machine = gc200(), .tiles = 16 };
        simulate_result r;
        graph_value out[4];
        char err[800];
        bool ok = simulate_training(sim, &lo, in, 1, out, &r, NULL, NULL, err, sizeof err);
        if (!ok)
            fprintf(stderr, "\n  %s\n", err);
        CU_ASSERT_TRUE_FATAL(ok);
        for (int i = 0; i < sim->n_outputs; i++)
            graph_value_free(&out[i]);
        CU_ASSERT_EQUAL_FATAL(r.n_phases, 3);
        CU_ASSERT_STRING_EQUAL(r.phases[2].name, "update");
        CU_ASSERT(delay ? r.phases[2].stretches == 1 : r.phases[2].stretches > 1);
        graph_free(sim);
        /* the same step once more, against the evaluator's */
        sim = trained(&o, &info);
        CU_ASSERT_EQUAL(train_check_step(sim, ref, in, &lo, 1e-4, 1e-3), 8);
        graph_free(sim);
        graph_free(ref);
    }
}

/* Plain SGD: the new weight is w - lr g exactly as the evaluator's gradient says. */
static void test_sgd_update_formula(void)
{
    train_options o;
    train_options_default(&o);
    o.loss = "mse:logits:target";
    o.lr = 0.25;
    o.anchor_gradients = true;
    train_info info;
    graph *g = trained(&o, &info);
    CU_ASSERT_EQUAL(info.state, 0);
    float target[24];
    for (int i = 0; i < 24; i++)
        target[i] = (float)(i % 5) / 4.0f;
    graph_value in[2];
    data(in, g);
    for (int i = 0; i < g->n_inputs; i++)
        if (!strcmp(g->tensors[g->inputs[i]].name, "target"))
            in[i].data = target;
    int w2 = graph_find_tensor(g, "w2");
    float before[24];
    memcpy(before, g->tensors[w2].init, sizeof before);
    graph_value out[5];
    char err[800];
    CU_ASSERT_TRUE_FATAL(graph_eval_step(g, in, out, err, sizeof err));
    int gi = -1;
    for (int i = 0; i < g->n_outputs; i++)
        if (!strcmp(g->tensors[g->outputs[i]].name, "Gradient___w2"))
            gi = i;
    CU_ASSERT_FATAL(gi > 0);
    for (int i = 0; i < 24; i++)
        CU_ASSERT_DOUBLE_EQUAL(((float *)g->tensors[w2].init)[i], before[i] - 0.25f * ((float *)out[gi].data)[i], 1e-6);
    for (int i = 0; i < g->n_outputs; i++)
        graph_value_free(&out[i]);
    graph_free(g);
}

typedef struct losses {
    double v[32];
    int n;
} losses;

/* The loss falls over 20 simulated steps of each optimizer. */
static void test_loss_falls(void)
{
    static const struct { enum train_optimizer opt; double lr; } runs[] = {
        { TRAIN_SGD, 0.5 }, { TRAIN_ADAM, 0.05 }, { TRAIN_LAMB, 0.05 }, { TRAIN_LARS, 5 },
    };
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        train_options o;
        train_options_default(&o);
        o.loss = "softmax-ce:logits:labels";
        o.optimizer = runs[k].opt;
        o.lr = runs[k].lr;
        o.momentum = runs[k].opt == TRAIN_LARS ? 0.9 : 0;
        train_info info;
        graph *g = trained(&o, &info);
        graph_value in[2];
        data(in, g);
        lower_options lo = { .machine = gc200(), .tiles = 8 };
        double first = 0, last = 0;
        train_loss_first_last(g, &lo, in, 20, &first, &last);
        if (!(last < 0.5 * first))
            fprintf(stderr, "\n  %s: loss %.4f -> %.4f\n", train_optimizer_name(runs[k].opt), first, last);
        CU_ASSERT_TRUE(last < 0.5 * first);
        graph_free(g);
    }
}

static void test_bad_loss_specs(void)
{
    static const struct { const char *spec, *msg; } cases[] = {
        { "softmax-ce:logits", "mlp: loss 'softmax-ce:logits': expected KIND:OUTPUT:LABELS (softmax-ce, nll) or "
                               "mse:OUTPUT:TARGET" },
        { "hinge:logits:y", "mlp: loss 'hinge:logits:y': unknown kind 'hinge' (softmax-ce, nll or mse)" },
        { "softmax-ce:nope:y", "mlp: loss 'softmax-ce:nope:y': the model has no tensor 'nope'" },
        { "softmax-ce:logits:x", "mlp: loss: 'x' is f32[8,4], the loss needs i32[8]" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        graph *g = mlp();
        train_options o;
        train_options_default(&o);
        o.loss = cases[i].spec;
        char err[800];
        CU_ASSERT_FALSE(train_graph(g, &o, NULL, err, sizeof err));
        CU_ASSERT_STRING_EQUAL(err, cases[i].msg);
        graph_free(g);
    }
}

/* f16 weights (as Graphcore's recipes keep them): each weight an f16
 * variable read through a Cast to f32, which a matmul folds (it reads the
 * f16 weight, fetched in rows of even length; the other Casts are made), the update computed in f32
 * and rounded to f16 over the weight itself.  Rounded to nearest the step
 * matches the evaluator's (an f16 ulp, 2^-10 relative, is the tolerance of
 * a weight that lands either side of a rounding boundary); rounded
 * stochastically it is within the same gap of it, and some weights round
 * the other way. */
/* Stochastic rounding over several steps: the tiles' PRNGs run on from one
 * step to the next.  w (f16, 1.0) gains a quarter of its f16 gap each step,
 * rounded stochastically: after two steps about 2 x 1/4 x 3/4 of the
 * elements have gained one gap.  Had each step started from the same
 * random bits, an element would round the same way both times (from 1.0,
 * or from one gap above it, the fraction rounded is the same), leaving none
 * exactly one gap up. */
static void test_rounding_across_steps(void)
{
    enum { N = 2048 };
    graph *g = graph_new("sr_steps", 13);
    input(g, "d", 1, D(N));
    uint16_t one[N];
    for (int i = 0; i < N; i++)
        one[i] = 0x3c00;                              /* 1.0 */
    graph_shape sh = { .rank = 1, .dims = { N } };
    int w = graph_add_variable(g, "w", GDT_F16, &sh, one);
    char wname[64];
    snprintf(wname, sizeof wname, "%s", g->tensors[w].name);
    graph_set_attr_int(node(g, GRAPH_OP_CAST, wname, "wf"), "to", GDT_F32);
    node(g, GRAPH_OP_ADD, "wf,d", "s");
    graph_node *c = node(g, GRAPH_OP_CAST, "s", "wn");
    graph_set_attr_int(c, "to", GDT_F16);
    graph_set_attr_string(c, "rounding", "stochastic");
    graph_set_update(g, w, graph_find_tensor(g, "wn"));
    finish(g, "s");

    float quarter_gap[N];
    for (int i = 0; i < N; i++)
        quarter_gap[i] = 0x1p-12f;                    /* the f16 gap at 1.0 is 2^-10 */
    graph_value in = { .dtype = GDT_F32, .shape = sh, .data = quarter_gap };
    graph_value out;
    lower_options lo = { .machine = gc200(), .tiles = 4 };
    char err[512];
    bool ok = simulate_training(g, &lo, &in, 2, &out, NULL, NULL, NULL, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    graph_value_free(&out);
    const uint16_t *after = g->tensors[graph_find_tensor(g, wname)].init;
    int by[3] = { 0 }, other = 0;
    for (int i = 0; i < N; i++) {
        if (after[i] >= 0x3c00 && after[i] <= 0x3c02)
            by[after[i] - 0x3c00]++;
        else
            other++;
    }
    CU_ASSERT_EQUAL(other, 0);
    /* binomial: one gap up with p = 3/8 (sd 0.0107 at N = 2048), two with
     * p = 1/16, none with p = 9/16; each held within 5 sd */
    CU_ASSERT(fabs(by[1] / (double)N - 0.375) < 5 * 0.0107);
    CU_ASSERT(fabs(by[2] / (double)N - 0.0625) < 5 * 0.00535);
    CU_ASSERT(fabs(by[0] / (double)N - 0.5625) < 5 * 0.011);
    graph_free(g);
}

static void test_f16_weights(void)
{
    graph_value in[2];
    void *rounded[2][4];
    for (int sr = 0; sr < 2; sr++) {
        train_options o = sgd(0.9);
        o.f16_weights = true;
        o.stochastic_rounding = sr;
        o.anchor_gradients = true;
        train_info info;
        graph *sim = trained(&o, &info), *ref = trained(&o, &info);
        static const char *const names[4] = { "w1", "b1", "w2", "b2" };
        for (int i = 0; i < 4; i++) {
            const graph_tensor *w = &sim->tensors[graph_find_tensor(sim, names[i])];
            CU_ASSERT_TRUE(w->is_variable);
            CU_ASSERT_EQUAL(w->dtype, GDT_F16);
            /* the update w16 - lr v as one ScaledAdd (fusion_scaled_add), rounded once to f16 */
            const graph_node *c = &sim->nodes[sim->tensors[w->update].producer];
            CU_ASSERT_EQUAL(c->op, GRAPH_OP_SCALED_ADD);
            CU_ASSERT_EQUAL(sim->tensors[c->inputs[0]].dtype, GDT_F16);
            CU_ASSERT_STRING_EQUAL(graph_attr_string(c, "rounding"), sr ? "stochastic" : "nearest");
        }
        lower_options lo = { .machine = gc200(), .tiles = 16 };
        lower_report rep;
        char err[512];
        ipu_exe *e = lower_graph(sim, &lo, &rep, err, sizeof err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(e);
        CU_ASSERT_EQUAL(rep.folded_casts, 1);        /* w1 [4, 8]; w2's 3 columns are odd, its Cast made */
        CU_ASSERT_EQUAL(rep.updates_in_place, 8);    /* the weights and momentum's states */
        CU_ASSERT_EQUAL(rep.updates_copied, 0);
        exe_free(e);
        data(in, sim);
        CU_ASSERT_EQUAL(train_check_step(sim, ref, in, &lo, 1e-4, 2e-3), 8);
        for (int i = 0; i < 4; i++) {
            const graph_tensor *w = &sim->tensors[graph_find_tensor(sim, names[i])];
            size_t bytes = (size_t)graph_shape_numel(&w->shape) * 2;
            rounded[sr][i] = malloc(bytes);
            memcpy(rounded[sr][i], w->init, bytes);
        }
        graph_free(sim);
        graph_free(ref);
    }
    int differ = 0;
    static const size_t count[4] = { 32, 8, 24, 3 };
    for (int i = 0; i < 4; i++) {
        differ += memcmp(rounded[0][i], rounded[1][i], count[i] * 2) != 0;
        free(rounded[0][i]);
        free(rounded[1][i]);
    }
    CU_ASSERT(differ > 0);
    /* the rounding attribute: nearest or stochastic, the latter of f32 to f16 only */
    graph *g = graph_new("cast", 13);
    input(g, "h", 1, D(4));
    g->tensors[graph_find_tensor(g, "h")].dtype = GDT_F16;
    graph_node *c = node(g, GRAPH_OP_CAST, "h", "y");
    graph_set_attr_int(c, "to", GDT_F32);
    graph_set_attr_string(c, "rounding", "stochastic");
    graph_add_output(g, graph_find_tensor(g, "y"));
    char err[512];
    CU_ASSERT_TRUE_FATAL(graph_sort(g, err, sizeof err));
    CU_ASSERT_FALSE(graph_infer_all(g, false, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "stochastic rounding is of f32 to f16 only, not f16 to f32"));
    graph_set_attr_string(&g->nodes[0], "rounding", "up");
    CU_ASSERT_FALSE(graph_infer_all(g, false, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "rounding 'up': expected nearest or stochastic"));
    graph_free(g);
}

/* An f16 table looked up (Gather) and also read by a matmul: the lookup
 * gathers f16 rows and widens them (no f32 copy of the table), the
 * matmul folds the table's Cast; the step matches the evaluator's. */
static void test_f16_table_lookup(void)
{
    for (int tied = 0; tied < 2; tied++) {
        rng = 11;
        graph *g = graph_new("lookup", 13);
        int ids = input(g, "ids", 1, D(8));
        g->tensors[ids].dtype = GDT_I32;
        cnst(g, "table", 2, D(10, 4), NULL);
        cnst(g, "w", 2, D(4, 4), NULL);
        node(g, GRAPH_OP_GATHER, "table,ids", "rows");
        node(g, GRAPH_OP_MATMUL, "rows,w", tied ? "h" : "logits");
        if (tied)                                   /* logits against the table, as BERT's decoder */
            graph_set_attr_int(node(g, GRAPH_OP_GEMM, "h,table", "logits"), "transB", 1);
        finish(g, "logits");
        train_options o = sgd(0);
        o.f16_weights = true;
        o.stochastic_rounding = false;
        train_info info;
        graph *ref = graph_clone(g);
        graph *sim = train_built(g, &o, &info);
        ref = train_built(ref, &o, &info);
        int gather = -1;
        for (int k = 0; k < sim->n_nodes; k++)
            if (sim->nodes[k].op == GRAPH_OP_GATHER && !strcmp(sim->tensors[sim->nodes[k].inputs[1]].name, "ids"))
                gather = k;
        CU_ASSERT_FATAL(gather >= 0);
        CU_ASSERT_EQUAL(sim->tensors[sim->nodes[gather].inputs[0]].dtype, GDT_F16);
        CU_ASSERT_EQUAL(sim->tensors[sim->nodes[gather].outputs[0]].dtype, GDT_F16);
        lower_options lo = { .machine = gc200(), .tiles = 16 };
        lower_report rep;
        char err[512];
        ipu_exe *e = lower_graph(sim, &lo, &rep, err, sizeof err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(e);
        CU_ASSERT_EQUAL(rep.folded_casts, tied ? 2u : 1u);   /* w; and the table under the decoder */
        exe_free(e);
        int32_t id[8] = { 3, 0, 9, 3, 5, 1, 7, 2 }, labels[8] = { 1, 0, 3, 2, 9, 1, 0, 3 };
        graph_value in[2];
        for (int i = 0; i < sim->n_inputs; i++) {
            const graph_tensor *t = &sim->tensors[sim->inputs[i]];
            in[i] = (graph_value){ .dtype = t->dtype, .shape = t->shape, .data = !strcmp(t->name, "ids") ? id : labels };
        }
        CU_ASSERT_EQUAL(train_check_step(sim, ref, in, &lo, 1e-4, 2e-3), 2);
        graph_free(sim);
        graph_free(ref);
    }
}

/* Adam (its weight decay into the gradient) and LAMB (its decay into the
 * direction, f16 weights) make each weight's moments and direction in
 * one AdamUpdater node (vtx_adam_updater_f32), no element-wise Sqrt or
 * Div left in the update; the moments lie on their weight's pieces and
 * are written over themselves (nothing copied at the end: the second
 * moments were copied when they lay on tiles of their own, their
 * variables planned one after another), LAMB's f16 weight is read as it is
 * and its new value is one f16 ScaledAdd; the simulated step matches the
 * evaluator's. */
static void test_adam_updater(void)
{
    static const char *const names[4] = { "w1", "b1", "w2", "b2" };
    for (int lamb = 0; lamb < 2; lamb++) {
        train_options o = sgd(0);
        o.optimizer = lamb ? TRAIN_LAMB : TRAIN_ADAM;
        o.lr = 0.01;
        o.weight_decay = 0.01;
        o.f16_weights = lamb;
        o.anchor_gradients = true;
        train_info info;
        graph *sim = trained(&o, &info), *ref = trained(&o, &info);
        int updaters = 0, spelled = 0;
        for (int k = 0; k < sim->n_nodes; k++) {
            const graph_node *n = &sim->nodes[k];
            if (n->phase != GRAPH_PHASE_UPDATE)
                continue;
            spelled += (n->op == GRAPH_OP_SQRT || n->op == GRAPH_OP_DIV) &&
                       graph_shape_numel(&sim->tensors[n->outputs[0]].shape) > 1;
            if (n->op != GRAPH_OP_ADAM_UPDATER)
                continue;
            updaters++;
            CU_ASSERT_EQUAL(n->n_inputs, 6);
            CU_ASSERT_STRING_EQUAL(graph_attr_string(n, "decay"), lamb ? "decoupled" : "l2");
            CU_ASSERT_EQUAL(sim->tensors[n->inputs[5]].dtype, lamb ? GDT_F16 : GDT_F32);
        }
        CU_ASSERT_EQUAL(updaters, 4);
        CU_ASSERT_EQUAL(spelled, 0);                 /* (the bias corrections and trust ratios are scalars) */
        for (int i = 0; lamb && i < 4; i++) {
            const graph_tensor *w = &sim->tensors[graph_find_tensor(sim, names[i])];
            CU_ASSERT_EQUAL(sim->nodes[sim->tensors[w->update].producer].op, GRAPH_OP_SCALED_ADD);
        }
        lower_options lo = { .machine = gc200(), .tiles = 16 };
        lower_report rep;
        char err[512];
        ipu_exe *e = lower_graph(sim, &lo, &rep, err, sizeof err);
        if (!e)
            fprintf(stderr, "\n  %s\n", err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(e);
        CU_ASSERT_EQUAL(rep.updates_copied, 0);      /* the moments on their weight's pieces */
        CU_ASSERT_EQUAL(rep.updates_in_place, 4 + 8 + 2);
        exe_free(e);
        graph_value in[2];
        data(in, sim);
        /* the weights, their moments and Adam's two powers of beta */
        CU_ASSERT_EQUAL(train_check_step(sim, ref, in, &lo, 1e-4, 2e-3), 4 + 8 + 2);
        graph_free(sim);
        graph_free(ref);
    }
}

/* Adam, lr 0.01, its state where offchip says, for `replicas`. */
static train_options adam_offchip(bool offchip, uint32_t replicas)
{
    train_options o = sgd(0);
    o.optimizer = TRAIN_ADAM;
    o.lr = 0.01;
    o.optimizer_state_offchip = offchip;
    o.replicas = replicas;
    return o;
}

/* Three Adam steps (on an M2000's first chip) with the state where o
 * keeps it: every variable's bytes after them into values[i] (the
 * weights, then the first and second moments), the cycles of the last. */
static uint64_t three_steps(const train_options *o, uint8_t values[12][128])
{
    static const char *const names[4] = { "w1", "b1", "w2", "b2" };
    static const char *const what[3] = { "", "/first_moment", "/second_moment" };
    train_info info;
    char err[512];
    graph *g = trained(o, &info);
    graph_value in[2], out[1];
    data(in, g);
    lower_options lo = { .machine = m2000(), .tiles = 16, .replicas = 1 };
    simulate_result r;
    bool ok = simulate_training(g, &lo, in, 3, out, &r, NULL, NULL, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    graph_value_free(&out[0]);
    CU_ASSERT_EQUAL(r.plan.streaming_variables, o->optimizer_state_offchip ? 8u : 0u);
    CU_ASSERT_EQUAL(r.plan.streaming_bytes, !o->optimizer_state_offchip ? 0u
                                            : o->f16_optimizer_state ? (32u + 8 + 24 + 4) * 2 * 2 : 67u * 2 * 4);
    for (int i = 0; i < 12; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s%s", names[i % 4], what[i / 4]);
        int t = graph_find_tensor(g, name);
        CU_ASSERT_TRUE_FATAL(t >= 0);
        const graph_tensor *x = &g->tensors[t];
        CU_ASSERT_EQUAL(x->in_streaming_memory, o->optimizer_state_offchip && i >= 4);
        CU_ASSERT_EQUAL(x->dtype, i >= 4 && o->f16_optimizer_state ? GDT_F16 : GDT_F32);
        memset(values[i], 0, 128);
        memcpy(values[i], x->init, (size_t)graph_shape_numel(&x->shape) * graph_dtype_size(x->dtype));
    }
    graph_free(g);
    return r.cycles;
}

/* The optimizer's state kept in streaming memory (Adam on an M2000, whose
 * gateway has DDR): three steps give the weights and the moments bit for
 * bit as with the state in tile memory, the moments read back from the
 * tiles' buffers; the loads and stores make the step slower.  With two
 * replicas, each replica's moments are in its own tiles' buffers and
 * equal after the all-reduced step.  A machine without streaming memory
 * is refused. */
static void test_state_in_streaming_memory(void)
{
    char err[512];
    train_info info;
    /* f32 state, then f16 (b2's moments, 3 elements, a padded piece) */
    for (int f16 = 0; f16 < 2; f16++) {
        static uint8_t values[2][12][128];
        uint64_t cycles[2];
        for (int offchip = 0; offchip < 2; offchip++) {
            train_options o = adam_offchip(offchip, 0);
            o.f16_optimizer_state = f16;
            cycles[offchip] = three_steps(&o, values[offchip]);
        }
        for (int i = 0; i < 12; i++)
            CU_ASSERT_EQUAL(memcmp(values[0][i], values[1][i], 128), 0);
        float m0, v0;
        if (f16) {
            m0 = fp16_to_f32(*(const f16_t *)values[1][4]);
            v0 = fp16_to_f32(*(const f16_t *)values[1][8]);
        } else {
            memcpy(&m0, values[1][4], 4);
            memcpy(&v0, values[1][8], 4);
        }
        /* the moments moved (in f16 the second's g^2 / 1000 of a small
         * gradient may round to 0, as f16 state does on the hardware) */
        CU_ASSERT(m0 != 0 && (f16 || v0 != 0));
        CU_ASSERT(cycles[1] > cycles[0]);
    }

    /* two replicas: each in its own tiles' buffers */
    train_options o = adam_offchip(true, 2);
    graph *g = trained(&o, &info);
    lower_options lo = { .machine = m2000(), .tiles = 16, .replicas = 2 };
    ipu_exe *e = lower_graph(g, &lo, NULL, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    tensor_map *map = program_tensor_map(e, "mlp", err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(map);
    engine *eng = engine_new(m2000(), e, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(eng);
    CU_ASSERT_TRUE_FATAL(program_fill_inputs(eng, map, NULL, 0, NULL, "", err, sizeof err));
    engine_options eo = { .max_cycles = 100000000ull, .trace_tile_first = 1, .trace_tile_last = 0 };
    CU_ASSERT_EQUAL_FATAL(engine_run(eng, &eo), ENGINE_DONE);
    const tmap_tensor *m0 = tmap_find(map, "w1/second_moment"), *m1 = tmap_find(map, "replica1/w1/second_moment");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m1);
    CU_ASSERT_EQUAL(m0->role, TMAP_VARIABLE | TMAP_STREAMING);
    CU_ASSERT_EQUAL(m0->pieces[0].stream, m0->pieces[0].tile);
    CU_ASSERT_EQUAL(m1->pieces[0].stream, m1->pieces[0].tile);
    CU_ASSERT_EQUAL(m1->pieces[0].tile, m0->pieces[0].tile + 1472);   /* chip 1's tile */
    float v0[32], v1[32];
    CU_ASSERT_TRUE(program_read_tensor(eng, m0, v0, err, sizeof err));
    CU_ASSERT_TRUE(program_read_tensor(eng, m1, v1, err, sizeof err));
    CU_ASSERT_EQUAL(memcmp(v0, v1, sizeof v0), 0);
    CU_ASSERT(v0[0] > 0);
    const engine_stats *st = engine_get_stats(eng);
    CU_ASSERT_EQUAL(st->chips[0].c.stream_bytes, 2 * 67 * 2 * 4);   /* loaded and stored */
    CU_ASSERT_EQUAL(st->chips[1].c.stream_bytes, 2 * 67 * 2 * 4);
    engine_free(eng);
    tmap_free(map);
    exe_free(e);
    graph_free(g);

    /* no streaming memory on a lone GC200 */
    o = adam_offchip(true, 0);
    g = trained(&o, &info);
    lo = (lower_options){ .machine = gc200(), .tiles = 16 };
    CU_ASSERT_PTR_NULL(lower_graph(g, &lo, NULL, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "the optimizer state is to be kept in streaming memory, and machine gc200 has "
                                       "none (streaming_memory_bytes = 0)"));
    graph_free(g);
}

void test_register(void)
{
    ADD_SUITE("train",
              { "each weight's update as soon as its gradient is complete", test_updates_as_soon_as_ready },
              { "an SGD step simulated against the evaluator's", test_step_matches_reference },
              { "SGD: w - lr g", test_sgd_update_formula },
              { "weights updated in place by the optimizer", test_weights_updated_in_place },
              { "the loss falls over 20 simulated steps (SGD, Adam, LAMB, LARS)", test_loss_falls },
              { "bad loss specs", test_bad_loss_specs },
              { "f16 weights, updated in f32 and rounded (to nearest, stochastically)", test_f16_weights },
              { "an f16 table looked up as f16 rows", test_f16_table_lookup },
              { "stochastic rounding: the PRNGs run on from step to step", test_rounding_across_steps },
              { "the optimizer state in streaming memory", test_state_in_streaming_memory },
              { "Adam's and LAMB's moments and direction in one AdamUpdater", test_adam_updater });
}
