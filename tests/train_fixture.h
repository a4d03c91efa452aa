/*
 * train_fixture.h — what the training tests share: a simulated training
 * step held against the host evaluator's step of the same graph (every
 * output — the loss and the anchored gradients — and every variable after
 * the step), and the loss of the first and the last of several simulated
 * steps.  Header-only (static functions) so any tests/test_*.c can use it.
 */
#ifndef IPUSIM_TESTS_TRAIN_FIXTURE_H
#define IPUSIM_TESTS_TRAIN_FIXTURE_H

#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "frontends/autodiff.h"
#include "frontends/graph_eval.h"
#include "frontends/simulate.h"
#include "graph_fixture.h"

/* x [8,4] -> Relu(x W1 + b1) W2 + b2 -> logits [8,3], its weights random
 * from seed (graph_fixture.h's rnd): the small classifier the training
 * tests train.  Needs graph_fixture.h. */
static inline graph *train_mlp(uint32_t seed)
{
    rng = seed;
    graph *g = graph_new("mlp", 13);
    input(g, "x", 2, (const int64_t[]){ 8, 4 });
    cnst(g, "w1", 2, (const int64_t[]){ 4, 8 }, NULL);
    cnst(g, "b1", 1, (const int64_t[]){ 8 }, NULL);
    cnst(g, "w2", 2, (const int64_t[]){ 8, 3 }, NULL);
    cnst(g, "b2", 1, (const int64_t[]){ 3 }, NULL);
    node(g, GRAPH_OP_MATMUL, "x,w1", "h0");
    node(g, GRAPH_OP_ADD, "h0,b1", "h1");
    node(g, GRAPH_OP_RELU, "h1", "h");
    node(g, GRAPH_OP_MATMUL, "h,w2", "l0");
    node(g, GRAPH_OP_ADD, "l0,b2", "logits");
    finish(g, "logits");
    return g;
}

/* g (an inference graph) made one training step (train_prepare), fused. */
static inline graph *train_built(graph *g, const train_options *o, train_info *info)
{
    char err[800];
    bool ok = train_prepare(g, o, true, info, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    return g;
}

/* The step's inputs: "x" takes x, every other input (the labels) labels. */
static inline void train_inputs(graph_value *in, const graph *g, void *x, void *labels)
{
    for (int i = 0; i < g->n_inputs; i++) {
        const graph_tensor *t = &g->tensors[g->inputs[i]];
        in[i] = (graph_value){ .dtype = t->dtype, .shape = t->shape, .data = !strcmp(t->name, "x") ? x : labels };
    }
}

/* got within atol + rtol |want| of want, element by element (f32, or f16
 * weights). */
static inline void train_expect_close(const graph_value *got, const graph_value *want, const char *what, double atol,
                                      double rtol)
{
    CU_ASSERT_FATAL(graph_shape_equal(&got->shape, &want->shape) && got->dtype == want->dtype &&
                    (got->dtype == GDT_F32 || got->dtype == GDT_F16));
    int64_t n = graph_shape_numel(&got->shape), bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double a = graph_load_f64(got->dtype, got->data, (size_t)i), b = graph_load_f64(want->dtype, want->data, (size_t)i);
        if (!(fabs(a - b) <= atol + rtol * fabs(b)) && bad++ < 3)
            fprintf(stderr, "\n  %s[%lld]: simulated %.8g, reference %.8g\n", what, (long long)i, a, b);
    }
    CU_ASSERT_EQUAL(bad, 0);
}

/* One step of sim simulated (compiled with lo) and of ref (the same graph)
 * on the evaluator, from inputs in: every output and every variable after
 * the step within atol + rtol |want|.  Returns the variables compared. */
static inline int train_check_step(graph *sim, graph *ref, const graph_value *in, const lower_options *lo, double atol,
                                   double rtol)
{
    graph_value out_sim[16], out_ref[16];
    char err[800];
    simulate_result r;
    CU_ASSERT_FATAL(sim->n_outputs <= 16);
    bool ok = simulate_training(sim, lo, in, 1, out_sim, &r, NULL, NULL, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    ok = graph_eval_step(ref, in, out_ref, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    CU_ASSERT_TRUE(r.cycles > 0);
    for (int i = 0; i < sim->n_outputs; i++)
        train_expect_close(&out_sim[i], &out_ref[i], sim->tensors[sim->outputs[i]].name, atol, rtol);
    int vars = 0;
    for (int t = 0; t < sim->n_tensors; t++) {
        const graph_tensor *x = &sim->tensors[t];
        if (!x->is_variable)
            continue;
        int rt = graph_find_tensor(ref, x->name);
        CU_ASSERT_FATAL(rt >= 0);
        graph_value a = { .dtype = x->dtype, .shape = x->shape, .data = x->init },
                    b = { .dtype = x->dtype, .shape = x->shape, .data = ref->tensors[rt].init };
        train_expect_close(&a, &b, x->name, atol, rtol);
        vars++;
    }
    for (int i = 0; i < sim->n_outputs; i++) {
        graph_value_free(&out_sim[i]);
        graph_value_free(&out_ref[i]);
    }
    return vars;
}

/* The simulated loss (output 0) of step 1 and of step `steps`. */
static inline void train_loss_first_last(graph *g, const lower_options *lo, const graph_value *in, int steps,
                                         double *first, double *last)
{
    graph_value out[16];
    char err[800];
    simulate_result r;
    CU_ASSERT_FATAL(g->n_outputs <= 16);
    bool ok = simulate_training(g, lo, in, 1, out, &r, NULL, NULL, err, sizeof err);
    if (ok) {
        *first = ((float *)out[0].data)[0];
        for (int i = 0; i < g->n_outputs; i++)
            graph_value_free(&out[i]);
        ok = simulate_training(g, lo, in, steps - 1, out, &r, NULL, NULL, err, sizeof err);
    }
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    *last = ((float *)out[0].data)[0];
    for (int i = 0; i < g->n_outputs; i++)
        graph_value_free(&out[i]);
}

#endif
