/*
 * decompose_train.c — the rewrites of decompose.h for the ops a training
 * graph adds: SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss into a
 * one-hot selection and reductions, the Momentum, Adam and Adagrad steps
 * into element-wise ops, and BatchNormalization in training mode into the
 * batch's mean and variance (ReduceMean) and element-wise ops.  Every op
 * they emit is one the tiles compute in f32 (or i32 for the labels).
 *
 * Models PopART's loss and optimizer patterns (the ops decomposed before
 * lowering, the batch statistics of popnn's batch norm computed as
 * reductions).  Does not model PopLibs' fused kernels for them (popnn's
 * NLL and batch-norm vertices, popops' optimizer map expressions) nor
 * PopART's optimizer state streamed from the host.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "decompose_internal.h"
#include "graph_eval.h"
#include "kernels.h"
#include "ops_impl.h"
#include "sim/base/diag.h"

/* Largest label lookup table (i64 labels narrowed to i32 by a Gather of
 * it): rows from min(0, ignore_index) to max(C, ignore_index + 1). */
#define LABEL_TABLE_MAX_ROWS (1 << 20)

/* Note why node n was left (the first such node only). */
static bool left(decompose_stats *st, const graph *g, const graph_node *n, const char *why)
{
    char label[300];
    if (!st->left[0])
        snprintf(st->left, sizeof st->left, "%s: %s", graph_node_label(g, n, label, sizeof label), why);
    return false;
}

/* A reduction over the given axes; ReduceSum takes them as an input from
 * opset 13, the others as an attribute (opsets 11 to 17); no axes: all. */
static int reduce_list(rewrite *rw, graph_op op, int x, const int64_t *axes, int count, bool keepdims)
{
    int y;
    if (op == GRAPH_OP_REDUCESUM && rw->g->opset >= 13 && count) {
        y = binary(rw, op, x, shape_constant(rw, axes, count));
    } else {
        y = unary(rw, op, x);
        if (count)
            graph_set_attr_ints(last_node(rw), "axes", axes, (size_t)count);
    }
    graph_set_attr_int(last_node(rw), "keepdims", keepdims);
    return y;
}

/* The sum of every element of x (of shape s: a new tensor's is not
 * inferred yet) as a scalar: trailing axes summed in groups of at most
 * KERNEL_REDUCE_MAX_COLS elements (the reduce codelet's row), the last
 * axis first, until one element is left. */
static int reduce_sum_all(rewrite *rw, int x, graph_shape s)
{
    while (s.rank > 0) {
        int from = s.rank - 1;
        uint64_t cols = (uint64_t)s.dims[from];
        while (from > 0 && cols * (uint64_t)s.dims[from - 1] <= KERNEL_REDUCE_MAX_COLS)
            cols *= (uint64_t)s.dims[--from];
        if (from == 0)
            return reduce_list(rw, GRAPH_OP_REDUCESUM, x, NULL, 0, false);
        int64_t axes[GRAPH_MAX_RANK];
        for (int d = from; d < s.rank; d++)
            axes[d - from] = d;
        x = reduce_list(rw, GRAPH_OP_REDUCESUM, x, axes, s.rank - from, false);
        s.rank = from;
    }
    return x;
}

static int reshape(rewrite *rw, int x, const int64_t *dims, int rank)
{
    return binary(rw, GRAPH_OP_RESHAPE, x, shape_constant(rw, dims, rank));
}

/* ---- SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss ---------------------------------------- */

/* Labels as i32: i32 ones as they are; i64 ones looked up (Gather, whose
 * lowering narrows run-time i64 indices) in an i32 table holding each
 * index of [lo, hi) at the row Gather reads for it (a negative one at
 * rows + index), so the result equals the label for every label of that
 * range.  -1 when the table would be too large. */
static int labels_i32(rewrite *rw, int labels, int64_t lo, int64_t hi)
{
    graph *g = rw->g;
    if (g->tensors[labels].dtype == GDT_I32)
        return labels;
    int64_t rows = hi - lo;
    if (rows > LABEL_TABLE_MAX_ROWS)
        return -1;
    int32_t *table = malloc((size_t)rows * sizeof *table);
    if (!table)
        return -1;
    for (int64_t r = 0; r < rows; r++)
        table[r] = (int32_t)(r < hi ? r : r - rows);
    graph_shape s = { .rank = 1, .dims = { rows } };
    int t = graph_add_constant(g, rw->base, GDT_I32, &s, table);
    free(table);
    return binary(rw, GRAPH_OP_GATHER, t, labels);
}

/* The one-hot selection of the labels, weighted: [N, d1..dk, C] f32 with
 * w[c] (1 without weights) where c is the label, 0 elsewhere and on a
 * whole row whose label is ignore_index.  Equal of the labels (i32, as
 * [N, d1..dk, 1]) against the classes 0..C-1 (an i32 constant whose entry
 * for ignore_index, when a class, is INT32_MIN, which no label of the
 * range equals), then Where: the tile compares i32 and selects 32-bit
 * words, but casts neither i64 nor bool (so neither Cast nor a Gather of
 * f32 rows of an identity, which would take C x C words). */
static int weighted_one_hot(rewrite *rw, int lab32, const graph_shape *ls, int64_t c, bool has_ii, int64_t ii,
                            int weights)
{
    graph *g = rw->g;
    int64_t dims[GRAPH_MAX_RANK];
    memcpy(dims, ls->dims, (size_t)ls->rank * sizeof *dims);
    dims[ls->rank] = 1;
    int col = reshape(rw, lab32, dims, ls->rank + 1);
    int32_t *classes = malloc((size_t)c * sizeof *classes);
    if (!classes)
        fatal("out of memory");
    for (int64_t k = 0; k < c; k++)
        classes[k] = (int32_t)k;
    if (has_ii && ii >= 0 && ii < c)
        classes[ii] = INT32_MIN;
    graph_shape cs = { .rank = 1, .dims = { c } };
    int cls = graph_add_constant(g, rw->base, GDT_I32, &cs, classes);
    free(classes);
    int w = weights >= 0 ? weights : scalar_f32(rw, 1);
    return where(rw, binary(rw, GRAPH_OP_EQUAL, col, cls), w, scalar_f32(rw, 0));
}

/* log-softmax over axis 1 (x - max, minus the log-sum-exp of that): the
 * rewrite of LogSoftmax in decompose.c, over axis 1 of [N, C, d1..dk]. */
static int log_softmax_axis1(rewrite *rw, int x)
{
    int d = binary(rw, GRAPH_OP_SUB, x, reduce_axes(rw, GRAPH_OP_REDUCEMAX, x, 1, 2));
    return binary(rw, GRAPH_OP_SUB, d, reduce_axes(rw, GRAPH_OP_REDUCELOGSUMEXP, d, 1, 2));
}

/* loss = -sum over C of logp x one-hot(labels) x w, per element; summed,
 * or divided by the sum of the one-hot's weights (mean). */
bool decompose_class_loss(graph *g, int k, decompose_stats *st)
{
    const graph_node *n = &g->nodes[k];
    int x = n->inputs[0], labels = n->inputs[1];
    const graph_shape xs = g->tensors[x].shape;
    int64_t c = xs.dims[1];
    if (!is_f32(g, x) || (n->n_inputs > 2 && n->inputs[2] >= 0 && !is_f32(g, n->inputs[2])))
        return left(st, g, n, "only f32 scores and weights are decomposed");
    if (graph_shape_numel(&xs) == 0)
        return left(st, g, n, "an empty input");
    bool has_ii = graph_attr_find(n, "ignore_index") != NULL;
    int64_t ii = has_ii ? graph_attr_int(n, "ignore_index") : 0;
    int64_t lo = has_ii && ii < 0 ? ii : 0, hi = has_ii && ii >= c ? ii + 1 : c;
    if (g->tensors[labels].dtype == GDT_I64 && hi - lo > LABEL_TABLE_MAX_ROWS)
        return left(st, g, n, "ignore_index is too far from the classes [0, C) for the i64 labels' lookup table");
    if (graph_is_constant(g, labels)) {
        /* constant labels are checked here; run-time ones out of range
         * select nothing (i32) or stop the Gather's worker (i64) */
        const graph_tensor *lt = &g->tensors[labels];
        for (size_t i = 0; i < (size_t)graph_shape_numel(&lt->shape); i++) {
            int64_t v = graph_load_i64(lt->dtype, lt->data, i);
            if ((v < 0 || v >= c) && !(has_ii && v == ii)) {
                char why[200];
                snprintf(why, sizeof why, "label %lld at element %zu is outside [0, %lld)", (long long)v, i,
                         (long long)c);
                return left(st, g, n, why);
            }
        }
    }
    const char *red = graph_attr_string(n, "reduction");
    int out1 = n->n_outputs > 1 ? n->outputs[1] : -1, weights = n->n_inputs > 2 ? n->inputs[2] : -1;
    bool softmax = n->op == GRAPH_OP_SOFTMAX_CROSS_ENTROPY_LOSS;
    graph_shape ls = g->tensors[labels].shape;
    /* n is not used below: emitting nodes moves the node array */
    rewrite rw = rewrite_begin(g, k);
    int logp = softmax ? log_softmax_axis1(&rw, x) : x;
    int lab32 = labels_i32(&rw, labels, lo, hi);
    int oh = weighted_one_hot(&rw, lab32, &ls, c, has_ii, ii, weights);
    if (xs.rank > 2) {
        /* [N, d1..dk, C] to the scores' [N, C, d1..dk] */
        int64_t perm[GRAPH_MAX_RANK] = { 0, xs.rank - 1 };
        for (int d = 2; d < xs.rank; d++)
            perm[d] = d - 1;
        oh = transpose(&rw, oh, perm, xs.rank);
    }
    int64_t axis1 = 1;
    int picked = reduce_list(&rw, GRAPH_OP_REDUCESUM, binary(&rw, GRAPH_OP_MUL, logp, oh), &axis1, 1, false);
    int loss;
    if (!strcmp(red, "none"))
        loss = unary(&rw, GRAPH_OP_NEG, picked);
    else {
        loss = reduce_sum_all(&rw, picked, ls);
        if (!strcmp(red, "mean"))
            loss = binary(&rw, GRAPH_OP_DIV, loss, reduce_sum_all(&rw, oh, xs));
        loss = unary(&rw, GRAPH_OP_NEG, loss);
    }
    rewrite_bind(&rw, rw.out, loss);
    if (out1 >= 0)
        rewrite_bind(&rw, out1, logp);
    st->class_losses++;
    return true;
}

/* ---- Momentum, Adam, Adagrad ----------------------------------------------------------------- */

/* a * s for a scalar s: nothing when s is 1. */
static int scale(rewrite *rw, int a, double s)
{
    return s == 1 ? a : binary(rw, GRAPH_OP_MUL, a, scalar_f32(rw, (float)s));
}

/* An optimizer node's attributes, read before the rewrite emits nodes
 * (which moves the node array). */
typedef struct step_attrs {
    graph_op op;
    double norm, alpha, beta, eps, post, decay;
    bool nesterov;
} step_attrs;

static step_attrs step_attrs_of(const graph_node *n)
{
    step_attrs a = { .op = n->op, .norm = graph_attr_float(n, "norm_coefficient") };
    if (n->op == GRAPH_OP_MOMENTUM) {
        a.alpha = graph_attr_float(n, "alpha");
        a.beta = graph_attr_float(n, "beta");
        a.nesterov = !strcmp(graph_attr_string(n, "mode"), "nesterov");
    } else if (n->op == GRAPH_OP_ADAGRAD) {
        a.eps = graph_attr_float(n, "epsilon");
        a.decay = graph_attr_float(n, "decay_factor");
    } else {
        a.alpha = graph_attr_float(n, "alpha");
        a.beta = graph_attr_float(n, "beta");
        a.eps = graph_attr_float(n, "epsilon");
        a.post = graph_attr_float(n, "norm_coefficient_post");
    }
    return a;
}

/* sqrt(h) + epsilon (no Add for epsilon 0). */
static int sqrt_plus(rewrite *rw, int h, double eps)
{
    int d = unary(rw, GRAPH_OP_SQRT, h);
    return eps == 0 ? d : binary(rw, GRAPH_OP_ADD, d, scalar_f32(rw, (float)eps));
}

/* The new X and states of one optimized tensor (ops_train.c's step, in
 * f32 element-wise ops); r is the learning rate adjusted for T (a scalar
 * tensor), coefficients folded at compile time with T.  in: X, G, then the
 * states; res: the new X, then the new states. */
static void optimizer_tensor(rewrite *rw, const step_attrs *a, int64_t t, int r, const int *in, int *res)
{
    int x = in[0], grad = in[1];
    int gr = a->norm == 0 ? grad : binary(rw, GRAPH_OP_ADD, scale(rw, x, a->norm), grad);
    if (a->op == GRAPH_OP_MOMENTUM) {
        int v = binary(rw, GRAPH_OP_ADD, scale(rw, in[2], a->alpha), scale(rw, gr, t > 0 ? a->beta : 1));
        int step = a->nesterov ? binary(rw, GRAPH_OP_ADD, gr, scale(rw, v, a->alpha)) : v;
        res[0] = binary(rw, GRAPH_OP_SUB, x, binary(rw, GRAPH_OP_MUL, step, r));
        res[1] = v;
    } else if (a->op == GRAPH_OP_ADAGRAD) {
        int h = binary(rw, GRAPH_OP_ADD, in[2], binary(rw, GRAPH_OP_MUL, gr, gr));
        int step = binary(rw, GRAPH_OP_DIV, binary(rw, GRAPH_OP_MUL, gr, r), sqrt_plus(rw, h, a->eps));
        res[0] = binary(rw, GRAPH_OP_SUB, x, step);
        res[1] = h;
    } else {
        int v = binary(rw, GRAPH_OP_ADD, scale(rw, in[2], a->alpha), scale(rw, gr, 1 - a->alpha));
        int h = binary(rw, GRAPH_OP_ADD, scale(rw, in[3], a->beta),
                       scale(rw, binary(rw, GRAPH_OP_MUL, gr, gr), 1 - a->beta));
        int step = binary(rw, GRAPH_OP_MUL, binary(rw, GRAPH_OP_DIV, v, sqrt_plus(rw, h, a->eps)), r);
        res[0] = scale(rw, binary(rw, GRAPH_OP_SUB, x, step), 1 - a->post);
        res[1] = v;
        res[2] = h;
    }
}

/* The learning rate adjusted for T, folded: Adagrad's 1 / (1 + T decay),
 * Adam's sqrt(1 - beta^T) / (1 - alpha^T) for T > 0. */
static double rate_factor(const step_attrs *a, int64_t t)
{
    if (a->op == GRAPH_OP_ADAGRAD)
        return 1 / (1 + (double)t * a->decay);
    if (a->op == GRAPH_OP_ADAM && t > 0)
        return sqrt(1 - pow(a->beta, (double)t)) / (1 - pow(a->alpha, (double)t));
    return 1;
}

/* Whether the step depends on T: Momentum's beta (1 while T is 0) unless
 * it is 1, Adagrad's decay unless its factor is 0, Adam's correction. */
static bool uses_t(const step_attrs *a)
{
    return a->op == GRAPH_OP_ADAM || (a->op == GRAPH_OP_MOMENTUM && a->beta != 1) ||
           (a->op == GRAPH_OP_ADAGRAD && a->decay != 0);
}

/* The step with T known when compiling (a constant) or not used: its
 * T-dependent factors fold.  A run-time T (i64) the step uses is left: the
 * tile converts no i64 (neither to i32 nor to f32). */
bool decompose_optimizer(graph *g, int k, decompose_stats *st)
{
    const graph_node *n = &g->nodes[k];
    double tv;
    for (int i = 0; i < n->n_inputs; i++)
        if (i != 1 && !is_f32(g, n->inputs[i]))
            return left(st, g, n, "only f32 tensors and learning rate are decomposed");
    step_attrs a = step_attrs_of(n);
    if (!graph_constant_scalar(g, n->inputs[1], &tv)) {
        if (uses_t(&a))
            return left(st, g, n, "the update count T is given at run time: its i64 value would need a "
                                  "conversion to f32, which the tile does not lower");
        tv = 1;         /* any T > 0: the step does not depend on it */
    }
    int64_t t = (int64_t)tv;
    int states = n->op == GRAPH_OP_ADAM ? 2 : 1, tensors = (n->n_inputs - 2) / (2 + states);
    int outs[64], n_outs = n->n_outputs, ins[64];
    memcpy(outs, n->outputs, (size_t)n_outs * sizeof *outs);
    memcpy(ins, n->inputs, (size_t)n->n_inputs * sizeof *ins);
    rewrite rw = rewrite_begin(g, k);
    int r = ins[0];
    if (g->tensors[r].shape.rank) {
        int64_t none = 0;
        r = reshape(&rw, r, &none, 0);
    }
    r = scale(&rw, r, rate_factor(&a, t));
    for (int i = 0; i < tensors; i++) {
        int in[4], res[3];
        for (int j = 0; j < 2 + states; j++)
            in[j] = ins[2 + j * tensors + i];
        optimizer_tensor(&rw, &a, t, r, in, res);
        for (int j = 0; j <= states; j++)
            if (j * tensors + i < n_outs)
                rewrite_bind(&rw, outs[j * tensors + i], res[j]);
    }
    st->optimizers++;
    return true;
}

/* ---- BatchNormalization in training mode -------------------------------------------------------- */

/* y = (x - mean) / sqrt(var + epsilon) * scale + B with the batch's mean
 * and biased variance over every axis but 1 (ReduceMean), and the running
 * statistics input * momentum + batch * (1 - momentum), as ONNX opset 14
 * defines them. */
bool decompose_batchnorm_training(graph *g, int k, decompose_stats *st)
{
    const graph_node *n = &g->nodes[k];
    if (g->opset < 14 || !graph_attr_int(n, "training_mode"))
        return false;
    for (int i = 0; i < 5; i++)
        if (!is_f32(g, n->inputs[i]))
            return left(st, g, n, "only f32 is decomposed");
    int x = n->inputs[0], scl = n->inputs[1], bias = n->inputs[2], rmean = n->inputs[3], rvar = n->inputs[4];
    graph_shape xs = g->tensors[x].shape;
    if (graph_shape_numel(&xs) == 0)
        return left(st, g, n, "an empty input");
    double eps = graph_attr_float(n, "epsilon"), momentum = graph_attr_float(n, "momentum");
    int outs[3] = { n->outputs[0], n->n_outputs > 1 ? n->outputs[1] : -1, n->n_outputs > 2 ? n->outputs[2] : -1 };
    int64_t axes[GRAPH_MAX_RANK] = { 0 }, cdims[GRAPH_MAX_RANK] = { xs.dims[1] };
    for (int d = 2; d < xs.rank; d++) {
        axes[d - 1] = d;
        cdims[d - 1] = 1;
    }
    rewrite rw = rewrite_begin(g, k);
    int mean = reduce_list(&rw, GRAPH_OP_REDUCEMEAN, x, axes, xs.rank - 1, true);
    int diff = binary(&rw, GRAPH_OP_SUB, x, mean);
    int var = reduce_list(&rw, GRAPH_OP_REDUCEMEAN, binary(&rw, GRAPH_OP_MUL, diff, diff), axes, xs.rank - 1, true);
    int inv = unary(&rw, GRAPH_OP_RECIPROCAL,
                    unary(&rw, GRAPH_OP_SQRT, binary(&rw, GRAPH_OP_ADD, var, scalar_f32(&rw, (float)eps))));
    /* [C] to [C, 1, ..., 1] (the rank of x less one), which broadcasts
     * along [1, C, 1, ...] and [N, C, d1, ...] */
    int s = binary(&rw, GRAPH_OP_MUL, inv, reshape(&rw, scl, cdims, xs.rank - 1));
    int y = binary(&rw, GRAPH_OP_ADD, binary(&rw, GRAPH_OP_MUL, diff, s), reshape(&rw, bias, cdims, xs.rank - 1));
    rewrite_bind(&rw, outs[0], y);
    int64_t c = xs.dims[1];
    if (outs[1] >= 0)
        rewrite_bind(&rw, outs[1], binary(&rw, GRAPH_OP_ADD, scale(&rw, rmean, momentum),
                                          scale(&rw, reshape(&rw, mean, &c, 1), 1 - momentum)));
    if (outs[2] >= 0)
        rewrite_bind(&rw, outs[2], binary(&rw, GRAPH_OP_ADD, scale(&rw, rvar, momentum),
                                          scale(&rw, reshape(&rw, var, &c, 1), 1 - momentum)));
    st->batchnorms_training++;
    return true;
}
