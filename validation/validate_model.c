/*
 * validate_model.c — what `ipusim validate --model MODEL` does: compile a
 * model, simulate it, and hold every output against a reference computed on the
 * host from the same inputs.
 *
 * Reference and tolerance:
 *   - an output made by one matmul or convolution of the graph's input
 *     (the built-in matmul:MxKxN, resnet50 layers, or an ONNX MatMul/Conv):
 *     cblas_sgemm (after im2col for a convolution) on the inputs' f32
 *     values, and for every element the bound of the arithmetic of the
 *     codelet that computed it (matmul_bounds below);
 *   - anything else: the host reference evaluator (frontends/graph_eval.h,
 *     f64 arithmetic), with the ONNX runner's tolerance (validate.h).
 * Also printed: simulated cycles and time, and for matmuls TFLOPS (of the
 * model's multiply-adds, and of those the AMP issued) and the
 * fraction of the AMP's peak reached.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontends/graph_eval.h"
#include "frontends/lower.h"
#include "frontends/ops_impl.h"
#include "frontends/simulate.h"
#include "validate.h"
#include "isa/fp16.h"
#include "sim/base/diag.h"
#include "sim/engine/program_io.h"
#include "reference.h"
#include "workloads/codelets/matmul_f32.h"

/* The node producing tensor t, or NULL. */
static const graph_node *producer(const graph *g, int t)
{
    int p = g->tensors[t].producer;
    return p >= 0 && p < g->n_nodes ? &g->nodes[p] : NULL;
}

float *validate_as_f32(graph_dtype dt, const void *data, size_t n)
{
    float *f = malloc((n ? n : 1) * sizeof *f);
    if (!f)
        fatal("out of memory");
    for (size_t i = 0; i < n; i++)
        f[i] = (float)graph_load_f64(dt, data, i);
    return f;
}

static float *as_f32(const graph_value *v, size_t n)
{
    return validate_as_f32(v->dtype, v->data, n);
}

/* The per-element bounds of a matmul's result against cblas_sgemm:
 *   - f16 operands on the AMP (sv_matmul_f16): validation/reference.h's
 *     bound for 4-product exact dot products rounded to f32, f32 partial
 *     sums over K, the result rounded to f16 when the output is f16;
 *   - f32 operands computed in f16 (--f16-matmul): the same, plus the
 *     rounding of both operands to f16, |d(ab)| <= (2u + u^2)|ab| with
 *     u = 2^-11;
 *   - f32 operands on the AMP's f32 path (sv_matmul_f32): the codelet's
 *     own bound, 2 gamma(K + 2) sum|ab| + (3K + 1) 2^-126
 *     (workloads/codelets/matmul_f32.h). */
static void matmul_bounds(size_t k, const double *sum_abs, const float *want, size_t n, bool f32_operands,
                          const lower_options *o, bool f16_output, double *bound)
{
    const bool f16_matmul = o->f16_matmul;
    /* f16 partials (--partials half): the running sum rounded to f16 every
     * 16 terms, and K split over tiles (lower_matmul_sum.c): each part's
     * sum rounded to f16, the parts summed in f32 (k_split). */
    ref_dot_policy pol = { .k = k, .accum = o->half_partials ? REF_ACCUM_F16 : REF_ACCUM_F32, .block = 16,
                           .terms_per_rounding = 4, .f16_output = f16_output, .stochastic = false,
                           .k_split = o->half_partials };
    double input_rounding = f32_operands && f16_matmul ? 2.0 * ldexp(1, -11) + ldexp(1, -22) : 0.0;
    for (size_t i = 0; i < n; i++)
        bound[i] = f32_operands && !f16_matmul ? matmul_f32_error_bound(k, sum_abs[i])
                                               : ref_dot_bound(&pol, sum_abs[i], want[i]) + input_rounding * sum_abs[i];
}

bool validate_is_matmul(graph_op op)
{
    return op == GRAPH_OP_MATMUL || op == GRAPH_OP_GEMM || op == GRAPH_OP_CONV || op == GRAPH_OP_FUSED_MATMUL ||
           op == GRAPH_OP_FUSED_CONV || op == GRAPH_OP_CONV_TRANSPOSE || op == GRAPH_OP_CONV_WEIGHT_GRAD;
}

/* The most matmuls and convolutions on one path from an input to an
 * output (nodes are in topological order). */
int validate_matmul_depth(const graph *g)
{
    int *d = calloc((size_t)g->n_tensors + 1, sizeof *d), best = 0;
    if (!d)
        fatal("out of memory");
    for (int i = 0; i < g->n_nodes; i++) {
        const graph_node *n = &g->nodes[i];
        int in = 0;
        for (int k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] >= 0 && d[n->inputs[k]] > in)
                in = d[n->inputs[k]];
        bool mm = validate_is_matmul(n->op);
        for (int k = 0; k < n->n_outputs; k++)
            if (n->outputs[k] >= 0)
                d[n->outputs[k]] = in + mm;
        if (in + mm > best)
            best = in + mm;
    }
    free(d);
    return best;
}

/* A matmul output: the sgemm reference and the per-element bound. */
static bool check_matmul(const graph *g, const graph_node *n, const graph_value *a, const graph_value *got,
                         const lower_options *o, ref_error_stats *st)
{
    const graph_tensor *tb = &g->tensors[n->inputs[1]];
    bool f32_operands = tb->dtype == GDT_F32 && a->dtype == GDT_F32;
    if (!tb->data || tb->shape.rank != 2 || n->op != GRAPH_OP_MATMUL ||
        !((tb->dtype == GDT_F16 && a->dtype == GDT_F16) || f32_operands))
        return false;
    size_t k = (size_t)tb->shape.dims[0], nn = (size_t)tb->shape.dims[1];
    size_t m = (size_t)graph_shape_numel(&a->shape) / k;
    graph_value bv = { tb->dtype, tb->shape, tb->data };
    float *af = as_f32(a, m * k), *bf = as_f32(&bv, k * nn), *want = malloc(m * nn * sizeof *want);
    double *sum_abs = malloc(m * nn * sizeof *sum_abs), *bound = malloc(m * nn * sizeof *bound);
    if (!want || !sum_abs || !bound)
        fatal("out of memory");
    ref_matmul_f32(af, bf, want, m, k, nn);
    ref_matmul_abs_f64(af, bf, sum_abs, m, k, nn);
    matmul_bounds(k, sum_abs, want, m * nn, f32_operands, o, got->dtype == GDT_F16, bound);
    float *gf = as_f32(got, m * nn);
    *st = ref_compare(gf, want, bound, m * nn);
    free(af); free(bf); free(want); free(sum_abs); free(bound); free(gf);
    return true;
}

/* A convolution output: im2col on the host, cblas_sgemm, and the same
 * per-element bound as a matmul of K = C x KH x KW terms. */
static bool check_conv(const graph *g, const graph_node *n, const graph_value *x, const graph_value *got,
                       const lower_options *opts, ref_error_stats *st)
{
    const graph_tensor *wt = &g->tensors[n->inputs[1]];
    if (n->op != GRAPH_OP_CONV || !wt->data || x->shape.rank != 4 || n->n_inputs > 2)
        return false;
    ops_window win;
    char err[256];
    if (!ops_window_init(g, n, &x->shape, wt->shape.dims + 2, false, &win, err, sizeof err))
        return false;
    size_t nb = (size_t)x->shape.dims[0], c = (size_t)x->shape.dims[1], h = (size_t)x->shape.dims[2],
           w = (size_t)x->shape.dims[3];
    size_t kh = (size_t)win.kernel[0], kw = (size_t)win.kernel[1], oh = (size_t)win.out[0], ow = (size_t)win.out[1];
    size_t cout = (size_t)wt->shape.dims[0], k = c * kh * kw, m = nb * oh * ow;
    float *xf = as_f32(x, nb * c * h * w);
    graph_value wv = { wt->dtype, wt->shape, wt->data };
    float *wf = as_f32(&wv, cout * k);
    float *col = calloc(m * k, sizeof *col), *wk = malloc(k * cout * sizeof *wk), *want = malloc(m * cout * sizeof *want);
    double *sum_abs = malloc(m * cout * sizeof *sum_abs), *bound = malloc(m * cout * sizeof *bound);
    if (!col || !wk || !want || !sum_abs || !bound)
        fatal("out of memory");
    /* col[p][(c, y, x)] and wk[(c, y, x)][cout]: the im2col reference. */
    for (size_t b = 0; b < nb; b++)
        for (size_t oy = 0; oy < oh; oy++)
            for (size_t ox = 0; ox < ow; ox++)
                for (size_t ci = 0; ci < c; ci++)
                    for (size_t y = 0; y < kh; y++)
                        for (size_t xx = 0; xx < kw; xx++) {
                            long iy = (long)(oy * (size_t)win.stride[0] + y) - (long)win.pad_begin[0];
                            long ix = (long)(ox * (size_t)win.stride[1] + xx) - (long)win.pad_begin[1];
                            if (iy < 0 || ix < 0 || iy >= (long)h || ix >= (long)w)
                                continue;
                            col[((b * oh + oy) * ow + ox) * k + (ci * kh + y) * kw + xx] =
                                xf[((b * c + ci) * h + (size_t)iy) * w + (size_t)ix];
                        }
    for (size_t q = 0; q < k; q++)
        for (size_t o = 0; o < cout; o++)
            wk[q * cout + o] = wf[o * k + q];
    ref_matmul_f32(col, wk, want, m, k, cout);
    ref_matmul_abs_f64(col, wk, sum_abs, m, k, cout);
    /* want is [p][cout] (NHWC); the output is NCHW */
    float *gf = as_f32(got, m * cout), *gp = malloc(m * cout * sizeof *gp);
    if (!gp)
        fatal("out of memory");
    for (size_t b = 0; b < nb; b++)
        for (size_t o = 0; o < cout; o++)
            for (size_t q = 0; q < oh * ow; q++)
                gp[(b * oh * ow + q) * cout + o] = gf[(b * cout + o) * oh * ow + q];
    matmul_bounds(k, sum_abs, want, m * cout, x->dtype == GDT_F32, opts, got->dtype == GDT_F16, bound);
    *st = ref_compare(gp, want, bound, m * cout);
    free(xf); free(wf); free(col); free(wk); free(want); free(sum_abs); free(bound); free(gf); free(gp);
    return true;
}

int validate_model(const char *model, graph *g, const lower_options *o, FILE *out, char *err, size_t err_size)
{
    const machine *m = o->machine;
    /* Inputs: the same pseudo-random values `ipusim run` would use. */
    graph_value *in = calloc((size_t)g->n_inputs + 1, sizeof *in);
    graph_value *sim = calloc((size_t)g->n_outputs + 1, sizeof *sim);
    graph_value *ref = calloc((size_t)g->n_outputs + 1, sizeof *ref);
    if (!in || !sim || !ref)
        fatal("out of memory");
    for (int i = 0; i < g->n_inputs; i++) {
        const graph_tensor *t = &g->tensors[g->inputs[i]];
        tmap_tensor tt = { .dtype = (uint32_t)t->dtype, .element_bytes = (uint32_t)graph_dtype_size(t->dtype),
                           .rank = (uint32_t)t->shape.rank };
        for (int d = 0; d < t->shape.rank; d++)
            tt.dims[d] = (uint64_t)t->shape.dims[d];
        in[i].dtype = t->dtype;
        in[i].shape = t->shape;
        in[i].data = malloc(program_tensor_bytes(&tt) + 1);
        if (!in[i].data)
            fatal("out of memory");
        program_random_input(&tt, 1 + (uint64_t)i, in[i].data);
    }
    simulate_result r;
    int failed = 0;
    if (!simulate_graph(g, o, in, sim, &r, err, err_size)) {
        failed = -1;
        goto done;
    }
    fprintf(out, "%s on %s: %u tiles, %u ops, %u exchange phases, fullest tile %.1f%% of its memory\n", model, m->name,
                 r.plan.tiles_used, r.plan.ops, r.plan.exchange_phases,
                 100.0 * (double)r.plan.max_tile_bytes / (double)r.plan.memory_bytes);
    fprintf(out, "simulated: %llu cycles, %.3f us at %.4g GHz (%.2f host s)\n", (unsigned long long)r.cycles,
                 r.seconds * 1e6, machine_get(m, MP_tile_clock_hz) / 1e9, r.host_seconds);
    uint64_t on_chip = r.cycles - r.input_cycles - r.output_cycles;
    double hz = machine_get(m, MP_tile_clock_hz);
    fprintf(out, "  inputs from the host %llu cycles, on the chip %llu cycles (%.3f us), outputs to the host %llu "
                 "cycles\n", (unsigned long long)r.input_cycles, (unsigned long long)on_chip,
                 (double)on_chip / hz * 1e6, (unsigned long long)r.output_cycles);
    double macs = (double)(r.amp_f16_macs + r.amp_f32_macs);
    if (macs > 0 && on_chip) {
        /* The peak of the path the MACs took (f32 MACs at the f32 rate). */
        bool f32 = r.amp_f32_macs > r.amp_f16_macs;
        double peak = machine_get(m, f32 ? MP_amp_f32_peak_macs_per_cycle : MP_amp_f16_peak_macs_per_cycle) *
                      (double)machine_u32(m, MP_tiles_per_chip);
        double useful = graph_model_macs(g);
        fprintf(out, "matmuls and convolutions: %.4g MACs; on the chip %.2f TFLOPS, %.1f%% of the chip's %s peak "
                     "(%.0f MACs/cycle); with the host transfers %.2f TFLOPS\n", useful,
                     2.0 * useful / ((double)on_chip / hz) / 1e12, 100.0 * useful / (double)on_chip / peak,
                     f32 ? "f32" : "f16", peak, 2.0 * useful / r.seconds / 1e12);
        fprintf(out, "AMP: %.4g MACs issued (%.2fx the model's: K and N padded to the AMP's weight blocks and "
                     "output groups, pipeline fill), %.1f%% of the peak\n", macs, macs / useful,
                     100.0 * macs / (double)on_chip / peak);
    }
    /* References: the f64 evaluator, run when an output needs it. */
    bool evaluated = false;
    char msg[4096];
    fprintf(out, "\n");
    for (int i = 0; i < g->n_outputs; i++) {
        const graph_tensor *t = &g->tensors[g->outputs[i]];
        const graph_node *p = producer(g, g->outputs[i]);
        ref_error_stats st;
        char label[256], shape[128];
        snprintf(label, sizeof label, "%s (%s %s)", t->name, graph_shape_str(&t->shape, shape, sizeof shape),
                 graph_dtype_name(t->dtype));
        bool direct = p && (p->op == GRAPH_OP_MATMUL || p->op == GRAPH_OP_CONV) && g->n_inputs == 1 &&
                      p->inputs[0] == g->inputs[0];
        if (direct && p->op == GRAPH_OP_CONV && check_conv(g, p, &in[0], &sim[i], o, &st)) {
            fprintf(out, "reference: im2col and cblas_sgemm on the inputs' f32 values; tolerance per element from the "
                         "AMP's arithmetic (%s)%s\n", in[0].dtype == GDT_F32 && !o->f16_matmul
                         ? "the f32 path, workloads/codelets/matmul_f32.h" : "validation/reference.h",
                         o->half_partials ? ", f16 partial sums (--partials half)" : "");
        } else if (direct && check_matmul(g, p, &in[0], &sim[i], o, &st)) {
            bool f32 = in[0].dtype == GDT_F32;
            fprintf(out, "reference: cblas_sgemm on the inputs' f32 values; tolerance per element from the AMP's "
                         "arithmetic (%s)%s%s\n", f32 && !o->f16_matmul ? "the f32 path, workloads/codelets/matmul_f32.h"
                                                                      : "validation/reference.h",
                         o->f16_matmul && f32 ? " and the rounding of f32 operands to f16 (--f16-matmul)" : "",
                         o->half_partials ? ", f16 partial sums (--partials half)" : "");
        } else {
            if (!evaluated && !graph_eval(g, in, ref, msg, sizeof msg)) {
                snprintf(err, err_size, "reference evaluator: %s", msg);
                failed = -1;
                goto done;
            }
            evaluated = true;
            size_t n = (size_t)graph_shape_numel(&t->shape);
            float *gf = as_f32(&sim[i], n), *wf = as_f32(&ref[i], n);
            double *bound = malloc((n ? n : 1) * sizeof *bound);
            if (!bound)
                fatal("out of memory");
            /* Through matmuls, an element's error follows the size of the
             * terms of the dot products behind it, not of its value, which
             * may be near zero; after normalising layers the terms are the
             * size of the tensor's rms.  One matmul in f16 (operands rounded
             * to f16, u = 2^-11) errs by up to 2u of that, one in f32 by
             * about sqrt(K) u = 2^-18 (u = 2^-24, K up to 4096: rounding
             * errors of either sign, Higham, Accuracy and Stability of
             * Numerical Algorithms, §2.8); the errors of the L matmuls on
             * the longest path through the graph add in quadrature.  So
             * c sqrt(L) (|want| + rms) per element, c = 2^-10 or 2^-18,
             * with the rel L2 error reported beside it; a graph without
             * matmuls gets the ONNX runner's tolerance.  f16 partial sums
             * (--partials half) round the running sum to f16 every 16
             * terms: K / 16 <= 256 roundings of u = 2^-11 of a sum the
             * size of the result, errors of either sign, sqrt(256) u =
             * 2^-7. */
            int depth = validate_matmul_depth(g);
            int c_exp = o->half_partials ? -7 : o->f16_matmul ? -10 : -18;
            double c = depth ? ldexp(1, c_exp) * sqrt((double)depth) : 0;
            double rms = 0;
            for (size_t k = 0; k < n; k++)
                rms += (double)wf[k] * wf[k];
            rms = n ? sqrt(rms / (double)n) : 0;
            for (size_t k = 0; k < n; k++)
                bound[k] = depth ? c * (fabs(wf[k]) + rms) : VALIDATE_ATOL + VALIDATE_RTOL * fabs(wf[k]);
            st = ref_compare(gf, wf, bound, n);
            if (depth)
                fprintf(out, "reference: the host evaluator (f64); tolerance 2^%d sqrt(%d) (|want| + rms(want)): %d "
                             "matmuls on the longest path, in %s\n", c_exp, depth, depth,
                             o->half_partials ? "f16 with f16 partial sums (--partials half)"
                             : o->f16_matmul ? "f16 (--f16-matmul)" : "f32");
            else
                fprintf(out, "reference: the host evaluator (f64); tolerance %g + %g |want| (the ONNX runner's)\n",
                             VALIDATE_ATOL, VALIDATE_RTOL);
            free(gf); free(wf); free(bound);
        }
        ref_print_report(out, label, &st);
        if (st.over_bound && t->shape.rank >= 1) {
            uint64_t cols = (uint64_t)t->shape.dims[t->shape.rank - 1];
            fprintf(out, "  worst element: %zu (row %llu, column %llu)\n", st.worst_abs_index,
                         (unsigned long long)(st.worst_abs_index / cols),
                         (unsigned long long)(st.worst_abs_index % cols));
        }
        if (st.over_bound || st.nonfinite)
            failed++;
    }
    fprintf(out, "\n%s: %d of %d outputs within tolerance\n", failed ? "FAIL" : "PASS", g->n_outputs - failed,
            g->n_outputs);
done:
    for (int i = 0; i < g->n_inputs; i++)
        graph_value_free(&in[i]);
    for (int i = 0; i < g->n_outputs; i++) {
        graph_value_free(&sim[i]);
        graph_value_free(&ref[i]);
    }
    free(in); free(sim); free(ref);
    return failed;
}
