/*
 * decompose.c — the rewrites of decompose.h: BatchNormalization into a
 * per-channel multiply-add, Softmax moved to the last axis, Max and Min
 * into binary ones, Pow into multiplications or exp(y log|x|); the table
 * of every rewrite (the training ops' are in decompose_train.c) and the
 * pass.
 */
#include "decompose.h"
#include "decompose_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_eval.h"
#include "lower.h"
#include "ops_impl.h"
#include "sim/base/diag.h"

/* Largest |n| of a constant integer exponent done by multiplying: at most
 * 3 squarings and 3 products, and exact where exp(n log|x|) is not. */
#define POW_MAX_MULTIPLIED 8

/* ---- BatchNormalization ------------------------------------------------------------- */

static bool decompose_batchnorm(graph *g, int k, decompose_stats *st)
{
    const graph_node *n = &g->nodes[k];
    if (!graph_node_first_output_only(n) || (g->opset >= 14 && graph_attr_int(n, "training_mode")))
        return false;
    int x = n->inputs[0], scale = n->inputs[1], bias = n->inputs[2], mean = n->inputs[3], var = n->inputs[4];
    for (int i = 0; i < 5; i++)
        if (!is_f32(g, n->inputs[i]))
            return false;
    graph_shape xs = g->tensors[x].shape;
    float eps = (float)graph_attr_float(n, "epsilon");
    rewrite rw = rewrite_begin(g, k);
    int std = unary(&rw, GRAPH_OP_SQRT, binary(&rw, GRAPH_OP_ADD, var, scalar_f32(&rw, eps)));
    int s = binary(&rw, GRAPH_OP_DIV, scale, std);
    int t = binary(&rw, GRAPH_OP_SUB, bias, binary(&rw, GRAPH_OP_MUL, mean, s));
    if (xs.rank > 2) {
        /* [C] to [C, 1, ..., 1], which broadcasts along [N, C, D1, ...]; a
         * [N, C] input takes [C] as it is */
        int64_t dims[GRAPH_MAX_RANK] = { xs.dims[1] };
        for (int d = 1; d < xs.rank - 1; d++)
            dims[d] = 1;
        int shape = shape_constant(&rw, dims, xs.rank - 1);
        s = binary(&rw, GRAPH_OP_RESHAPE, s, shape);
        t = binary(&rw, GRAPH_OP_RESHAPE, t, shape);
    }
    rewrite_end(&rw, binary(&rw, GRAPH_OP_ADD, binary(&rw, GRAPH_OP_MUL, x, s), t));
    st->batchnorms++;
    return true;
}

/* ---- Softmax ---------------------------------------------------------------------- */

static int softmax_last_axis(rewrite *rw, int x, int64_t axis)
{
    int y = unary(rw, GRAPH_OP_SOFTMAX, x);
    graph_set_attr_int(last_node(rw), "axis", axis);
    return y;
}

static bool decompose_softmax(graph *g, int k, decompose_stats *st)
{
    const graph_node *n = &g->nodes[k];
    int x = n->inputs[0], from, to;
    graph_shape xs = g->tensors[x].shape;
    if (!is_f32(g, x) || !ops_softmax_range(g, n, &from, &to) || from == xs.rank - 1 ||
        graph_shape_numel(&xs) == 0)
        return false;
    rewrite rw = rewrite_begin(g, k);
    int y;
    if (g->opset >= 13) {
        /* one axis: swapped with the last, and back (the swap is its own inverse) */
        int64_t perm[GRAPH_MAX_RANK];
        for (int d = 0; d < xs.rank; d++)
            perm[d] = d;
        perm[from] = xs.rank - 1;
        perm[xs.rank - 1] = from;
        y = softmax_last_axis(&rw, transpose(&rw, x, perm, xs.rank), -1);
        y = transpose(&rw, y, perm, xs.rank);
    } else {
        /* the 2-D view the opset defines: [dims before axis, the rest] */
        int64_t rows[2] = { 1, 1 };
        for (int d = 0; d < xs.rank; d++)
            rows[d >= from] *= xs.dims[d];
        y = binary(&rw, GRAPH_OP_RESHAPE, x, shape_constant(&rw, rows, 2));
        y = softmax_last_axis(&rw, y, 1);
        y = binary(&rw, GRAPH_OP_RESHAPE, y, shape_constant(&rw, xs.dims, xs.rank));
    }
    rewrite_end(&rw, y);
    st->softmaxes++;
    return true;
}

/* ---- LogSoftmax --------------------------------------------------------------------- */

/* d - log(sum(exp(d))) with d = x - max(x) over the normalised axes: no
 * exp overflows (d <= 0) and the log's argument is at least 1. */
static bool decompose_log_softmax(graph *g, int k, decompose_stats *st)
{
    const graph_node *n = &g->nodes[k];
    int x = n->inputs[0], from, to;
    if (!is_f32(g, x) || !ops_softmax_range(g, n, &from, &to) || graph_shape_numel(&g->tensors[x].shape) == 0)
        return false;
    rewrite rw = rewrite_begin(g, k);
    int d = binary(&rw, GRAPH_OP_SUB, x, reduce_axes(&rw, GRAPH_OP_REDUCEMAX, x, from, to));
    rewrite_end(&rw, binary(&rw, GRAPH_OP_SUB, d, reduce_axes(&rw, GRAPH_OP_REDUCELOGSUMEXP, d, from, to)));
    st->log_softmaxes++;
    return true;
}

/* ---- Clip --------------------------------------------------------------------------- */

/* Min(Max(x, min), max), of what is given (neither: x itself). */
static bool decompose_clip(graph *g, int k, decompose_stats *st)
{
    const graph_node *n = &g->nodes[k];
    int x = n->inputs[0], lo = n->n_inputs > 1 ? n->inputs[1] : -1, hi = n->n_inputs > 2 ? n->inputs[2] : -1;
    graph_dtype t = g->tensors[x].dtype;
    if (t != GDT_F32 && t != GDT_I32)
        return false;
    rewrite rw = rewrite_begin(g, k);
    int y = lo >= 0 ? binary(&rw, GRAPH_OP_MAX, x, lo) : x;
    rewrite_end(&rw, hi >= 0 ? binary(&rw, GRAPH_OP_MIN, y, hi) : y);
    st->clips++;
    return true;
}

/* ---- Max and Min -------------------------------------------------------------------- */

static bool decompose_max_min(graph *g, int k, decompose_stats *st)
{
    const graph_node *n = &g->nodes[k];
    graph_dtype t = g->tensors[n->inputs[0]].dtype;
    if (n->n_inputs == 2 || (t != GDT_F32 && t != GDT_I32))
        return false;
    graph_op op = n->op;
    int count = n->n_inputs, ins[64];
    memcpy(ins, n->inputs, (size_t)count * sizeof *ins);
    /* the lowering broadcasts one operand of a binary op, not both: start
     * from an input of the output's shape, so every partial result has it */
    const graph_shape *out = &g->tensors[n->outputs[0]].shape;
    for (int i = 1; i < count; i++)
        if (graph_shape_equal(&g->tensors[ins[i]].shape, out)) {
            int first = ins[0];
            ins[0] = ins[i];
            ins[i] = first;
            break;
        }
    rewrite rw = rewrite_begin(g, k);
    int acc = ins[0];
    for (int i = 1; i < count; i++)
        acc = binary(&rw, op, acc, ins[i]);
    rewrite_end(&rw, acc);
    st->max_mins++;
    return true;
}

/* ---- Pow ---------------------------------------------------------------------------- */

/* x^n by squaring and multiplying; 1 / x^|n| for n < 0; ones for n = 0
 * (C pow gives 1 for any base, NaN included). */
static int pow_by_multiplying(rewrite *rw, int x, int n, const graph_shape *out)
{
    if (n == 0) {
        int ins[2] = { scalar_f32(rw, 1), shape_constant(rw, out->dims, out->rank) };
        return emit(rw, GRAPH_OP_EXPAND, ins, 2);
    }
    int acc = -1, power = x, m = abs(n);
    while (true) {
        if (m & 1)
            acc = acc < 0 ? power : binary(rw, GRAPH_OP_MUL, acc, power);
        m >>= 1;
        if (!m)
            break;
        power = binary(rw, GRAPH_OP_MUL, power, power);
    }
    return n < 0 ? unary(rw, GRAPH_OP_RECIPROCAL, acc) : acc;
}

/* x^y as exp(y log|x|) times the sign C pow gives: (-1)^y for a negative
 * base and an integer y, NaN for a non-integer y; and 1 where y = 0 (0^0
 * and NaN^0, which exp(0 * log 0) makes NaN). */
static int pow_by_exp_log(rewrite *rw, int x, int y, const graph_shape *out)
{
    int one = scalar_f32(rw, 1), zero = scalar_f32(rw, 0);
    /* the lowering broadcasts one operand of a binary op, not both: x is
     * given the result's shape, y is broadcast against it */
    if (!graph_shape_equal(&rw->g->tensors[x].shape, out))
        x = binary(rw, GRAPH_OP_EXPAND, x, shape_constant(rw, out->dims, out->rank));
    int magnitude = unary(rw, GRAPH_OP_EXP,
                          binary(rw, GRAPH_OP_MUL, y, unary(rw, GRAPH_OP_LOG, unary(rw, GRAPH_OP_ABS, x))));
    int integer = binary(rw, GRAPH_OP_EQUAL, unary(rw, GRAPH_OP_FLOOR, y), y);
    int half = unary(rw, GRAPH_OP_FLOOR, binary(rw, GRAPH_OP_MUL, y, scalar_f32(rw, 0.5f)));
    int even = binary(rw, GRAPH_OP_EQUAL, binary(rw, GRAPH_OP_ADD, half, half), y);
    int sign = where(rw, even, one, scalar_f32(rw, -1));
    sign = where(rw, integer, sign, scalar_f32(rw, NAN));
    int factor = where(rw, binary(rw, GRAPH_OP_LESS, x, zero), sign, one);
    int power = binary(rw, GRAPH_OP_MUL, magnitude, factor);
    return where(rw, binary(rw, GRAPH_OP_EQUAL, y, zero), one, power);
}

/* A constant exponent of another dtype as an f32 constant. */
static int f32_constant(graph *g, int t)
{
    const graph_tensor *c = &g->tensors[t];
    size_t count = (size_t)graph_shape_numel(&c->shape);
    float *v = malloc(count * sizeof *v + 1);
    if (!v)
        fatal("out of memory");
    for (size_t i = 0; i < count; i++)
        v[i] = (float)graph_load_f64(c->dtype, c->data, i);
    char base[300];
    snprintf(base, sizeof base, "%s_f32", c->name);
    graph_shape s = c->shape;
    int f = graph_add_constant(g, base, GDT_F32, &s, v);
    free(v);
    return f;
}

static bool decompose_pow(graph *g, int k, decompose_stats *st)
{
    const graph_node *n = &g->nodes[k];
    int x = n->inputs[0], y = n->inputs[1];
    graph_shape out = g->tensors[n->outputs[0]].shape;
    double e;
    if (!is_f32(g, x) || lower_pow_is_direct(g, n))
        return false;
    if (graph_constant_scalar(g, y, &e) && e == nearbyint(e) && fabs(e) <= POW_MAX_MULTIPLIED &&
        graph_shape_equal(&g->tensors[x].shape, &out)) {
        rewrite rw = rewrite_begin(g, k);
        rewrite_end(&rw, pow_by_multiplying(&rw, x, (int)e, &out));
        st->pows_by_multiplying++;
        return true;
    }
    if (!is_f32(g, y)) {
        if (!graph_is_constant(g, y))
            return false;       /* a run-time cast from an integer is not lowered */
        y = f32_constant(g, y);
    }
    rewrite rw = rewrite_begin(g, k);
    rewrite_end(&rw, pow_by_exp_log(&rw, x, y, &out));
    st->pows_by_exp_log++;
    return true;
}

/* ---- the pass ----------------------------------------------------------------------- */

static const struct {
    graph_op op;
    bool (*rewrite)(graph *g, int k, decompose_stats *st);
} decompositions[] = {
    { GRAPH_OP_BATCHNORM, decompose_batchnorm },
    { GRAPH_OP_SOFTMAX, decompose_softmax },
    { GRAPH_OP_LOGSOFTMAX, decompose_log_softmax },
    { GRAPH_OP_CLIP, decompose_clip },
    { GRAPH_OP_MAX, decompose_max_min },
    { GRAPH_OP_MIN, decompose_max_min },
    { GRAPH_OP_POW, decompose_pow },
    { GRAPH_OP_BATCHNORM, decompose_batchnorm_training },
    { GRAPH_OP_SOFTMAX_CROSS_ENTROPY_LOSS, decompose_class_loss },
    { GRAPH_OP_NLL_LOSS, decompose_class_loss },
    { GRAPH_OP_MOMENTUM, decompose_optimizer },
    { GRAPH_OP_ADAM, decompose_optimizer },
    { GRAPH_OP_ADAGRAD, decompose_optimizer },
};

bool decompose_graph(graph *g, decompose_stats *stats, char *err, size_t err_size)
{
    decompose_stats s = { 0 };
    int n_nodes = g->n_nodes;
    bool changed = false;
    for (int k = 0; k < n_nodes; k++)
        for (size_t i = 0; i < sizeof decompositions / sizeof decompositions[0]; i++)
            if (!g->nodes[k].removed && g->nodes[k].op == decompositions[i].op)
                changed |= decompositions[i].rewrite(g, k, &s);
    if (stats)
        *stats = s;
    if (!changed)
        return true;
    graph_compact(g);
    /* constant parameters (BatchNorm's, a constant exponent's) fold here */
    return graph_sort(g, err, err_size) && graph_infer_all(g, true, err, err_size);
}
