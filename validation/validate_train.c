/*
 * validate_train.c — `ipusim validate --model MODEL --train --steps N`: a
 * training step compiled once and simulated N times (the weights carried
 * in tile memory from step to step), each step held against the host
 * evaluator's step of the same graph (frontends/graph_eval.h
 * graph_eval_step: f64 arithmetic, each op's result rounded to its type).
 *
 * Compared each step: the loss, every weight's gradient (the graph's
 * Gradient___NAME outputs) and every weight's change w_new - w_old (a
 * change, not the weight, so that a wrong update cannot hide under the
 * weight's size).  Each step of the reference starts from the weights
 * the simulated step started from (after the comparison the reference
 * takes the simulation's new weights), so every step checks one step's
 * arithmetic: two trajectories left to drift apart would compound f16
 * roundings through momentum and flip a Relu here and there within a few
 * steps, which says nothing about the step.
 *
 * Tolerance, per element, as validate --model's (validate_model.c): the
 * error of a result of L matmuls on the longest path of the graph (the
 * backward pass doubles it) follows the size of the terms of its dot
 * products, c sqrt(L) (|want| + rms(want)) with c = 2^-10 when the
 * matmuls round their operands to f16 (--f16-matmul: the reference's
 * matmuls then read their operands rounded to f16 too, as the AMP does,
 * round_matmul_operands) and 2^-18 in f32;
 * rms is the larger of this step's and the first step's (as the loss falls
 * the gradients shrink, the rounding of the terms behind them does not).
 * The optimizers' own arithmetic is element-wise and adds a few f32
 * roundings, far inside that; a weight's change also carries the rounding
 * of the new weight to its type, 2u |w| (u = 2^-24 in f32).
 *
 * That bound assumes the step is well conditioned, and a deep network's
 * step need not be: batch statistics over a few values a channel amplify
 * a rounding, and a Relu whose input is that close to zero flips, which
 * moves every gradient below it (in ResNet-50 b2:s64 with every block's
 * last BatchNormalization scale at 1, a change of one ulp in the input
 * image moves the weights' changes by 1% rel L2).  So each step the
 * reference is also run MCA_RUNS times in Monte Carlo arithmetic
 * (graph_eval_step_mca: every op's result perturbed at its type's
 * rounding), and a tensor outside its per-element bound passes when its
 * relative L2 error is within SPREAD_FACTOR times the farthest of those
 * runs from the reference: as close as the arithmetic lets anything
 * computed in that precision come.  The report says which tensors passed
 * that way and by what margin.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontends/autodiff.h"
#include "frontends/graph_eval.h"
#include "frontends/simulate.h"
#include "reference.h"
#include "sim/base/diag.h"
#include "validate.h"

/* Monte Carlo arithmetic runs of the reference a step, and how many
 * times the farthest of them the simulation may be from the reference
 * (the simulation is one more draw of the rounding, and the farthest of
 * two draws underestimates how far a third may land). */
enum { MCA_RUNS = 2 };
#define SPREAD_FACTOR 2.0

typedef struct train_check {
    const char *model;
    graph *sim, *ref;             /* the simulated step's graph, the reference's */
    const lower_options *o;
    const graph_value *inputs;
    int depth;
    double c;
    int failed;
    long long samples;
    FILE *out;
    char *err;
    size_t err_size;
    void **before;                /* per tensor of sim: its variable's value before the step */
    graph *mca[MCA_RUNS];         /* the reference's step in Monte Carlo arithmetic (graph_eval_step_mca) */
    graph_value *mca_out[MCA_RUNS];
    int by_spread;                /* tensors outside the per-element bound, within the spread */
    double *first_rms;            /* per tensor of sim: the rms of its first step's reference (0: not yet) */
    bool *rounded;                /* per tensor: an f16 weight rounded stochastically, f32 in the reference */
    double sr_error, sr_gap;      /* its changes: sum of (simulated - reference), of the f16 gaps */
} train_check;

/* The reference's own spread: the largest ||run - want|| / ||want - base||
 * (base NULL: ||want||) of the Monte Carlo arithmetic runs' values
 * runs[0 .. MCA_RUNS), n elements of dtype dt each, in f64 (a weight's
 * change is the difference of two of them). */
static double spread_of(graph_dtype dt, const void *const *runs, const void *want, const void *base, size_t n)
{
    double most = 0;
    for (int m = 0; m < MCA_RUNS; m++) {
        double d2 = 0, w2 = 0;
        for (size_t k = 0; k < n; k++) {
            double d = graph_load_f64(dt, runs[m], k) - graph_load_f64(dt, want, k);
            double w = graph_load_f64(dt, want, k) - (base ? graph_load_f64(dt, base, k) : 0);
            d2 += d * d;
            w2 += w * w;
        }
        double r = w2 > 0 ? sqrt(d2 / w2) : d2 > 0 ? INFINITY : 0;
        most = r > most ? r : most;
    }
    return most;
}

/* got against want with the per-element bound c sqrt(L) (|want| + rms),
 * plus extra[k] when given; failing that, against the reference's own
 * spread (spread: the largest relative L2 distance of a Monte Carlo
 * arithmetic run from the reference); one report line. */
static void compare(train_check *tc, int key, const char *what, graph_dtype dt, const void *got, const void *want,
                    size_t n, const double *extra, double spread)
{
    float *g = validate_as_f32(dt, got, n), *w = validate_as_f32(dt, want, n);
    double *bound = malloc((n ? n : 1) * sizeof *bound), rms = 0;
    if (!bound)
        fatal("out of memory");
    for (size_t k = 0; k < n; k++)
        rms += (double)w[k] * w[k];
    rms = n ? sqrt(rms / (double)n) : 0;
    /* the terms behind a gradient keep the size they had at the first
     * step (activations, probabilities near 1) while the gradient itself
     * shrinks as the loss falls: their rounding stays */
    if (!tc->first_rms[key])
        tc->first_rms[key] = rms;
    double scale = rms > tc->first_rms[key] ? rms : tc->first_rms[key];
    for (size_t k = 0; k < n; k++)
        bound[k] = tc->c * (fabs(w[k]) + scale) + (extra ? extra[k] : 0) + 1e-30;
    ref_error_stats st = ref_compare(g, w, bound, n);
    fprintf(tc->out, "  ");
    ref_print_report(tc->out, what, &st);
    bool conditioned = !st.nonfinite && st.over_bound && st.rel_l2 <= SPREAD_FACTOR * spread;
    if (st.over_bound && !st.nonfinite)
        fprintf(tc->out, "    the reference's own spread (Monte Carlo arithmetic, %d runs): rel L2 %.3e; this error "
                         "%.2f times it, %s %g times\n", MCA_RUNS, spread,
                spread > 0 ? st.rel_l2 / spread : INFINITY, conditioned ? "within" : "beyond", SPREAD_FACTOR);
    if ((st.over_bound && !conditioned) || st.nonfinite)
        tc->failed++;
    else if (st.over_bound)
        tc->by_spread++;
    free(g);
    free(w);
    free(bound);
}

/* f16 weights updated with stochastic rounding (train.c; the rounding is a
 * Cast's, or the fused update's, a ScaledAdd's): in the reference
 * they are f32, their update not rounded, so that it holds the expected
 * value of the simulation's rounding (E[SR(x)] = x); a simulated weight is
 * then within one f16 gap of it.  Marks them in rounded[]. */
static void unround_reference(graph *ref, bool *rounded)
{
    for (int t = 0; t < ref->n_tensors; t++) {
        graph_tensor *x = &ref->tensors[t];
        if (!x->is_variable || x->update < 0 || x->dtype != GDT_F16)
            continue;
        graph_tensor *u = &ref->tensors[x->update];
        graph_node *c = u->producer >= 0 ? &ref->nodes[u->producer] : NULL;
        /* the rounding Cast, or the ScaledAdd that rounds the update (fusion_scaled_add) */
        if (!c || (c->op != GRAPH_OP_CAST && c->op != GRAPH_OP_SCALED_ADD) || !graph_attr_find(c, "rounding") ||
            strcmp(graph_attr_string(c, "rounding"), "stochastic"))
            continue;
        size_t n = (size_t)graph_shape_numel(&x->shape);
        float *w = malloc((n ? n : 1) * sizeof *w);
        if (!w)
            fatal("out of memory");
        for (size_t k = 0; k < n; k++)
            w[k] = (float)graph_load_f64(GDT_F16, x->init, k);
        free(x->init);
        x->init = w;
        x->dtype = GDT_F32;
        if (c->op == GRAPH_OP_CAST)
            graph_set_attr_int(c, "to", GDT_F32);
        graph_set_attr_string(c, "rounding", "nearest");
        u->dtype = GDT_F32;
        rounded[t] = true;
        /* its readers again: an embedding lookup then gathers f32 rows */
        for (int k = 0; k < ref->n_nodes; k++)
            for (int i = 0; i < ref->nodes[k].n_inputs; i++)
                if (ref->nodes[k].inputs[i] == t && !ref->nodes[k].removed) {
                    char err[256];
                    if (!graph_infer_node(ref, &ref->nodes[k], err, sizeof err))
                        fatal("the reference's f32 weight '%s': %s", x->name, err);
                    break;
                }
    }
}

/* Under --f16-matmul the AMP multiplies the f16 roundings of f32 operands:
 * the reference's matmuls and convolutions read the same, each operand
 * rounded to f16 and widened (two Casts) before them, so that it and its
 * Monte Carlo runs share the simulation's inputs to the products and the
 * tolerance is left for the sums.  Only the new nodes are inferred (the
 * graph's own tensors keep their numbers, which the comparisons share with
 * the simulated graph).  False with err if it does not sort again. */
static bool round_matmul_operands(graph *ref, char *err, size_t err_size)
{
    int n = ref->n_nodes;
    for (int k = 0; k < n; k++) {
        if (!validate_is_matmul(ref->nodes[k].op) || ref->nodes[k].removed)
            continue;
        for (int i = 0; i < 2 && i < ref->nodes[k].n_inputs; i++) {
            int x = ref->nodes[k].inputs[i];
            if (x < 0 || ref->tensors[x].dtype != GDT_F32)
                continue;
            int cast[2];
            for (int c = 0; c < 2; c++) {
                char name[64];
                snprintf(name, sizeof name, "f16_operand_%d_%d_%d", k, i, c);
                cast[c] = graph_add_tensor(ref, name);
                int in = c ? cast[0] : x;
                int at = graph_add_node(ref, GRAPH_OP_CAST, name, &in, 1, &cast[c], 1);
                ref->nodes[at].phase = ref->nodes[k].phase;
                graph_set_attr_int(&ref->nodes[at], "to", c ? GDT_F32 : GDT_F16);
                if (!graph_infer_node(ref, &ref->nodes[at], err, err_size))
                    return false;
            }
            ref->nodes[k].inputs[i] = cast[1];
        }
    }
    return graph_sort(ref, err, err_size);
}

/* The reference's variables take the simulation's values (an f16 weight
 * widened where the reference keeps it f32). */
static void reference_from_simulation(graph *ref, const graph *sim)
{
    for (int t = 0; t < sim->n_tensors; t++) {
        const graph_tensor *x = &sim->tensors[t];
        if (!x->is_variable)
            continue;
        size_t n = (size_t)graph_shape_numel(&x->shape);
        for (size_t k = 0; k < n; k++)
            graph_store_f64(ref->tensors[t].dtype, ref->tensors[t].init, k, graph_load_f64(x->dtype, x->init, k));
    }
}

/* The change of every variable in the step: simulated (sim's init now
 * against before) and reference (ref's init against the same before). */
static void compare_updates(train_check *tc, void **ref_before)
{
    for (int t = 0; t < tc->sim->n_tensors; t++) {
        const graph_tensor *x = &tc->sim->tensors[t];
        if (!x->is_variable || x->update < 0 || !graph_dtype_is_float(x->dtype))
            continue;
        size_t n = (size_t)graph_shape_numel(&x->shape);
        double *ds = malloc((n ? n : 1) * sizeof *ds), *dr = malloc((n ? n : 1) * sizeof *dr);
        double *round = malloc((n ? n : 1) * sizeof *round);
        if (!ds || !dr || !round)
            fatal("out of memory");
        /* the new weight is rounded to its type: half an ulp of it on each
         * side; rounded stochastically, to either f16 neighbour of the
         * reference's unrounded value, a gap of at most 2^-10 |w| (2^-24
         * among the subnormals) */
        double u = graph_dtype_unit_roundoff(x->dtype);
        graph_dtype rt = tc->ref->tensors[t].dtype;
        for (size_t k = 0; k < n; k++) {
            double wn = graph_load_f64(rt, tc->ref->tensors[t].init, k);
            ds[k] = graph_load_f64(x->dtype, x->init, k) - graph_load_f64(x->dtype, tc->before[t], k);
            dr[k] = wn - graph_load_f64(rt, ref_before[t], k);
            round[k] = tc->rounded[t] ? ldexp(fabs(wn), -10) + ldexp(1, -24) : 2 * u * fabs(wn);
            if (tc->rounded[t]) {
                tc->sr_error += ds[k] - dr[k];
                tc->sr_gap += round[k] * round[k];
            }
        }
        char what[300];
        snprintf(what, sizeof what, "change of %s", x->name);
        const void *runs[MCA_RUNS];
        for (int m = 0; m < MCA_RUNS; m++)
            runs[m] = tc->mca[m]->tensors[t].init;
        compare(tc, t, what, GDT_F64, ds, dr, n, round,
                spread_of(x->dtype, runs, tc->ref->tensors[t].init, ref_before[t], n));
        free(ds);
        free(dr);
        free(round);
    }
}

static void **save_variables(const graph *g)
{
    void **v = calloc((size_t)g->n_tensors + 1, sizeof *v);
    if (!v)
        fatal("out of memory");
    for (int t = 0; t < g->n_tensors; t++) {
        const graph_tensor *x = &g->tensors[t];
        if (!x->is_variable)
            continue;
        size_t bytes = (size_t)graph_shape_numel(&x->shape) * graph_dtype_size(x->dtype);
        v[t] = malloc(bytes ? bytes : 1);
        if (!v[t])
            fatal("out of memory");
        memcpy(v[t], x->init, bytes);
    }
    return v;
}

static void free_saved(void **v, int n)
{
    for (int t = 0; t < n; t++)
        free(v[t]);
    free(v);
}

static void print_phases(FILE *out, const simulate_result *r, double hz)
{
    for (uint32_t p = 0; p < r->n_phases; p++) {
        const phase_totals *ph = &r->phases[p];
        const engine_counts *k = &ph->c;
        double pc = r->cycles ? 100.0 * (double)k->cycles / (double)r->cycles : 0;
        fprintf(out, "  %-9s %12llu cycles (%5.1f%%, %9.3f us): compute %llu, exchange %llu, sync %llu, wait %llu; "
                     "%u supersteps", ph->name, (unsigned long long)k->cycles, pc, 1e6 * (double)k->cycles / hz,
                (unsigned long long)k->compute_cycles, (unsigned long long)k->exchange_cycles,
                (unsigned long long)k->sync_cycles, (unsigned long long)k->wait_cycles, ph->supersteps);
        if (ph->stretches > 1)
            fprintf(out, " in %u stretches", ph->stretches);
        fputc('\n', out);
    }
}

/* After each simulated step: the reference's step, then the comparisons. */
static bool each_step(int step, const graph_value *outputs, const simulate_result *r, void *ctx)
{
    train_check *tc = ctx;
    graph *ref = tc->ref;
    graph_value *rout = calloc((size_t)ref->n_outputs + 1, sizeof *rout);
    void **ref_before = save_variables(ref);
    char msg[1024];
    bool ok = true;
    for (int i = 0; i < MCA_RUNS && ok; i++) {
        tc->mca[i] = graph_clone(ref);
        tc->mca_out[i] = calloc((size_t)ref->n_outputs + 1, sizeof *tc->mca_out[i]);
        if (!tc->mca_out[i])
            fatal("out of memory");
        ok = graph_eval_step_mca(tc->mca[i], tc->inputs, (uint64_t)step * MCA_RUNS + (uint64_t)i + 1,
                                 tc->o->half_partials ? ldexp(1, -11) : 0, tc->mca_out[i],
                                 msg, sizeof msg);
    }
    ok = ok && graph_eval_step(ref, tc->inputs, rout, msg, sizeof msg);
    if (!ok) {
        snprintf(tc->err, tc->err_size, "reference evaluator: %s", msg);
    } else {
        double hz = machine_get(tc->o->machine, MP_tile_clock_hz);
        double sim_loss = graph_load_f64(outputs[0].dtype, outputs[0].data, 0);
        double ref_loss = graph_load_f64(rout[0].dtype, rout[0].data, 0);
        fprintf(tc->out, "step %d: loss %.6g (reference %.6g); %llu cycles, %.4g ms on %s, %.4g samples/s\n",
                step + 1, sim_loss, ref_loss, (unsigned long long)r->cycles, 1e3 * (double)r->cycles / hz,
                tc->o->machine->name, tc->samples / ((double)r->cycles / hz));
        print_phases(tc->out, r, hz);
        for (int i = 0; i < tc->sim->n_outputs; i++) {
            const graph_tensor *t = &tc->sim->tensors[tc->sim->outputs[i]];
            size_t n = (size_t)graph_shape_numel(&t->shape);
            const void *runs[MCA_RUNS];
            for (int m = 0; m < MCA_RUNS; m++)
                runs[m] = tc->mca_out[m][i].data;
            compare(tc, tc->sim->outputs[i], t->name, t->dtype, outputs[i].data, rout[i].data, n, NULL,
                    spread_of(t->dtype, runs, rout[i].data, NULL, n));
        }
        compare_updates(tc, ref_before);
        /* the next reference step starts where the simulation is */
        reference_from_simulation(ref, tc->sim);
    }
    for (int i = 0; i < ref->n_outputs; i++)
        graph_value_free(&rout[i]);
    free(rout);
    for (int m = 0; m < MCA_RUNS; m++) {
        for (int i = 0; tc->mca_out[m] && i < ref->n_outputs; i++)
            graph_value_free(&tc->mca_out[m][i]);
        free(tc->mca_out[m]);
        if (tc->mca[m])
            graph_free(tc->mca[m]);
        tc->mca[m] = NULL;
        tc->mca_out[m] = NULL;
    }
    free_saved(ref_before, ref->n_tensors);
    /* the next step's "before" is this step's result */
    free_saved(tc->before, tc->sim->n_tensors);
    tc->before = save_variables(tc->sim);
    return ok;
}

/* The values integer input t may take, [0, limit): a label's classes,
 * what the graph says (graph_value_limit), else 10. */
static int64_t integer_limit(const graph *g, int t, const struct train_info *info)
{
    for (int l = 0; l < info->n_labels; l++)
        if (!strcmp(info->label_name[l], g->tensors[t].name))
            return info->label_classes[l];
    int64_t limit = graph_value_limit(g, t);
    return limit > 0 ? limit : 10;
}

/* Inputs: floats as `ipusim run` fills them, integers in 0 .. limit - 1
 * (integer_limit). */
static graph_value *make_inputs(const graph *g, const struct train_info *info)
{
    graph_value *in = calloc((size_t)g->n_inputs + 1, sizeof *in);
    if (!in)
        fatal("out of memory");
    for (int i = 0; i < g->n_inputs; i++) {
        const graph_tensor *t = &g->tensors[g->inputs[i]];
        size_t n = (size_t)graph_shape_numel(&t->shape);
        in[i] = (graph_value){ .dtype = t->dtype, .shape = t->shape,
                               .data = calloc(1, n * graph_dtype_size(t->dtype) + 1) };
        int64_t limit = graph_dtype_is_float(t->dtype) ? 0 : integer_limit(g, g->inputs[i], info);
        uint64_t s = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
        for (size_t k = 0; k < n; k++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            double u = (double)(s >> 11) / 9007199254740992.0;
            if (graph_dtype_is_float(t->dtype))
                graph_store_f64(t->dtype, in[i].data, k, 2 * u - 1);
            else
                graph_store_i64(t->dtype, in[i].data, k, (int64_t)(u * (double)limit));
        }
    }
    return in;
}

int validate_training(const char *model, graph *g, const lower_options *o, const struct train_info *info, int steps,
                      FILE *out, char *err, size_t err_size)
{
    train_check tc = { .model = model, .sim = g, .ref = graph_clone(g), .o = o, .out = out, .err = err,
                       .err_size = err_size };
    tc.depth = validate_matmul_depth(g);
    /* as validate --model's: 2^-7 with f16 partial sums (validate_model.c) */
    int c_exp = o->half_partials ? -7 : o->f16_matmul ? -10 : -18;
    tc.c = ldexp(1, c_exp) * sqrt((double)(tc.depth ? tc.depth : 1));
    tc.samples = g->n_inputs && g->tensors[g->inputs[0]].shape.rank ? g->tensors[g->inputs[0]].shape.dims[0] : 1;
    graph_value *in = make_inputs(g, info);
    tc.inputs = in;
    tc.before = save_variables(g);
    tc.first_rms = calloc((size_t)g->n_tensors + 1, sizeof *tc.first_rms);
    tc.rounded = calloc((size_t)g->n_tensors + 1, sizeof *tc.rounded);
    if (!tc.first_rms || !tc.rounded)
        fatal("out of memory");
    unround_reference(tc.ref, tc.rounded);
    if (o->f16_matmul && !round_matmul_operands(tc.ref, err, err_size))
        fatal("%s: the reference's f16 operands: %s", model, err);
    fprintf(out, "%s: training step on %s, %d step%s: %d weights (%lld elements); reference: the host evaluator's "
                 "step (f64, rounded per op) from the same weights\n", model, o->machine->name, steps,
            steps == 1 ? "" : "s", info->weights, info->weight_elements);
    fprintf(out, "tolerance: 2^%d sqrt(%d) (|want| + rms(want)) per element: %d matmuls and convolutions on the "
                 "longest path of the step, in %s; a weight's change compared, not the weight\n", c_exp,
            tc.depth ? tc.depth : 1, tc.depth,
            o->half_partials ? "f16 with f16 partial sums (--partials half)" : o->f16_matmul ? "f16 (--f16-matmul)" : "f32");
    bool gradients = false;
    for (int i = 0; i < g->n_outputs; i++)
        gradients |= !strncmp(g->tensors[g->outputs[i]].name, "Gradient___", 11);
    if (!gradients)
        fprintf(out, "gradients: not outputs of this step; each weight's change (-lr times its gradient under plain "
                     "SGD) checks them\n");
    graph_value *outs = calloc((size_t)g->n_outputs + 1, sizeof *outs);
    simulate_result r;
    err[0] = 0;
    bool ok = simulate_training(g, o, in, steps, outs, &r, each_step, &tc, err, err_size);
    int failed = ok ? tc.failed : -1;
    if (ok)
        fprintf(out, "\n%s: %d step%s of %s within tolerance (%d tensors outside; %d outside the per-element bound "
                     "within the reference's spread)\n", tc.failed ? "FAIL" : "PASS", steps, steps == 1 ? "" : "s",
                model, tc.failed, tc.by_spread);
    if (ok && tc.sr_gap > 0)
        fprintf(out, "stochastic rounding of the f16 weights: every new weight within one f16 gap of the reference's "
                     "unrounded value, as above; their errors sum to %.2f times the largest standard deviation "
                     "unbiased rounding gives the sum\n", tc.sr_error / sqrt(tc.sr_gap / 4.0));
    for (int i = 0; ok && i < g->n_outputs; i++)
        graph_value_free(&outs[i]);
    free(outs);
    for (int i = 0; i < g->n_inputs; i++)
        graph_value_free(&in[i]);
    free(in);
    free_saved(tc.before, g->n_tensors);
    free(tc.first_rms);
    free(tc.rounded);
    graph_free(tc.ref);
    return failed;
}
