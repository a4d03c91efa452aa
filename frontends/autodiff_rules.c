/*
 * autodiff_rules.c — the gradient rule of each op (ops.def's last column),
 * written in ops of the table so that the backward pass is lowered like
 * the forward one.  Each rule reads the forward node's operands (and,
 * where cheaper than recomputing, its outputs), and hands each wanted
 * input its gradient through grad_add, which sums over a broadcast and
 * over several readers.
 *
 * The formulas are the textbook ones PopART's grad ops implement
 * (e.g. Softmax: dx = y (dy - sum(dy y)); LayerNorm and BatchNormalization
 * in training mode: dx = invstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat))).
 * Normalisations recompute their statistics from the input rather than
 * keep them from the forward pass.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "autodiff.h"
#include "ops_impl.h"

#define SHAPE(t) (&grad_graph(c)->tensors[(t)].shape)
#define DTYPE(t) (grad_graph(c)->tensors[(t)].dtype)

static int mul(grad_ctx *c, int a, int b) { return grad_binary(c, GRAPH_OP_MUL, a, b); }
static int add(grad_ctx *c, int a, int b) { return grad_binary(c, GRAPH_OP_ADD, a, b); }
static int sub(grad_ctx *c, int a, int b) { return grad_binary(c, GRAPH_OP_SUB, a, b); }
static int divide(grad_ctx *c, int a, int b) { return grad_binary(c, GRAPH_OP_DIV, a, b); }
static int neg(grad_ctx *c, int a) { return grad_unary(c, GRAPH_OP_NEG, a); }
static int scalar_like(grad_ctx *c, double v, int t) { return grad_scalar(c, v, DTYPE(t)); }

static int where(grad_ctx *c, int cond, int a, int b)
{
    int in[3] = { cond, a, b };
    return grad_op(c, GRAPH_OP_WHERE, in, 3);
}

/* The forward node, copied: its arrays stay where they are while nodes are added. */
static graph_node node_of(grad_ctx *c, int k)
{
    return grad_graph(c)->nodes[k];
}

static int in_of(const graph_node *n, int i)
{
    return i < n->n_inputs ? n->inputs[i] : -1;
}

/* ---- element-wise ---------------------------------------------------------------------- */

bool grad_add_op(grad_ctx *c, int k, const int *dy)
{
    graph_node n = node_of(c, k);
    grad_add(c, n.inputs[0], dy[0]);
    grad_add(c, n.inputs[1], dy[0]);
    return true;
}

bool grad_sub_op(grad_ctx *c, int k, const int *dy)
{
    graph_node n = node_of(c, k);
    grad_add(c, n.inputs[0], dy[0]);
    if (grad_wanted(c, n.inputs[1]))
        grad_add(c, n.inputs[1], neg(c, dy[0]));
    return true;
}

bool grad_mul_op(grad_ctx *c, int k, const int *dy)
{
    graph_node n = node_of(c, k);
    int a = n.inputs[0], b = n.inputs[1];
    if (grad_wanted(c, a))
        grad_add(c, a, mul(c, dy[0], b));
    if (grad_wanted(c, b))
        grad_add(c, b, mul(c, dy[0], a));
    return true;
}

bool grad_div_op(grad_ctx *c, int k, const int *dy)
{
    graph_node n = node_of(c, k);
    int a = n.inputs[0], b = n.inputs[1], y = n.outputs[0];
    if (grad_wanted(c, a))
        grad_add(c, a, divide(c, dy[0], b));
    if (grad_wanted(c, b))                          /* d(a/b)/db = -y / b */
        grad_add(c, b, neg(c, divide(c, mul(c, dy[0], y), b)));
    return true;
}

bool grad_neg_op(grad_ctx *c, int k, const int *dy)
{
    graph_node n = node_of(c, k);
    grad_add(c, n.inputs[0], neg(c, dy[0]));
    return true;
}

bool grad_relu(grad_ctx *c, int k, const int *dy)
{
    graph_node n = node_of(c, k);
    int x = n.inputs[0], zero = scalar_like(c, 0, x);
    grad_add(c, x, where(c, grad_binary(c, GRAPH_OP_GREATER, x, zero), dy[0], zero));
    return true;
}

bool grad_abs(grad_ctx *c, int k, const int *dy)
{
    graph_node n = node_of(c, k);
    int x = n.inputs[0];
    grad_add(c, x, where(c, grad_binary(c, GRAPH_OP_LESS, x, scalar_like(c, 0, x)), neg(c, dy[0]), dy[0]));
    return true;
}

/* Sigmoid, Tanh, Exp, Sqrt, Reciprocal from their output; Log, Erf from their input. */
bool grad_unary_math(grad_ctx *c, int k, const int *dy)
{
    graph_node n = node_of(c, k);
    int x = n.inputs[0], y = n.outputs[0], d;
    switch (n.op) {
    case GRAPH_OP_SIGMOID: d = mul(c, y, sub(c, scalar_like(c, 1, y), y)); break;
    case GRAPH_OP_TANH: d = sub(c, scalar_like(c, 1, y), mul(c, y, y)); break;
    case GRAPH_OP_EXP: d = y; break;
    case GRAPH_OP_SQRT: d = divide(c, scalar_like(c, 0.5, y), y); break;
    case GRAPH_OP_RECIPROCAL: d = neg(c, mul(c, y, y)); break;
    case GRAPH_OP_LOG: grad_add(c, x, divide(c, dy[0], x)); return true;
    case GRAPH_OP_ERF:                              /* 2 / sqrt(pi) exp(-x^2) */
        d = mul(c, scalar_like(c, 2.0 / sqrt(M_PI), x), grad_unary(c, GRAPH_OP_EXP, neg(c, mul(c, x, x))));
        break;
    default: return grad_fail(c, k, "not an op of this rule");
    }
    grad_add(c, x, mul(c, dy[0], d));
    return true;
}

/* GELU from its input, recomputed as PopLibs' non-linearity gradient does:
 * d/dx [x Phi(x)] = Phi(x) + x phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2,
 * phi(x) = exp(-x^2 / 2) / sqrt(2 pi); the tanh form: with t = tanh(u),
 * u = k (x + a x^3), k = sqrt(2 / pi), a = 0.044715,
 * (1 + t) / 2 + x (1 - t^2) k (1 + 3 a x^2) / 2. */
bool grad_gelu(grad_ctx *c, int k, const int *dy)
{
    graph_node n = node_of(c, k);
    int x = n.inputs[0], d;
    int one = scalar_like(c, 1, x), half = scalar_like(c, 0.5, x), xx = mul(c, x, x);
    if (!strcmp(graph_attr_string(&n, "approximate"), "tanh")) {
        const double kk = sqrt(2.0 / M_PI), a = 0.044715;
        int u = mul(c, mul(c, x, add(c, mul(c, xx, scalar_like(c, a, x)), one)), scalar_like(c, kk, x));
        int t = grad_unary(c, GRAPH_OP_TANH, u);
        int slope = mul(c, mul(c, x, sub(c, one, mul(c, t, t))),
                        add(c, mul(c, xx, scalar_like(c, 1.5 * a * kk, x)), scalar_like(c, 0.5 * kk, x)));
        d = add(c, mul(c, add(c, t, one), half), slope);
    } else {
        int cdf = mul(c, add(c, grad_unary(c, GRAPH_OP_ERF, mul(c, x, scalar_like(c, 1 / sqrt(2.0), x))), one), half);
        int pdf = mul(c, grad_unary(c, GRAPH_OP_EXP, mul(c, xx, scalar_like(c, -0.5, x))),
                      scalar_like(c, 1 / sqrt(2 * M_PI), x));
        d = add(c, cdf, mul(c, x, pdf));
    }
    grad_add(c, x, mul(c, dy[0], d));
    return true;
}

/* Pow with a constant exponent p: p x^(p-1). */
bool grad_pow(grad_ctx *c, int k, const int *dy)
{
    graph_node n = node_of(c, k);
    int x = n.inputs[0], e = n.inputs[1];
    double p;
    if (grad_wanted(c, e) || !graph_constant_scalar(grad_graph(c), e, &p))
        return grad_fail(c, k, "only a constant scalar exponent is differentiated");
    int d = p == 2 ? mul(c, scalar_like(c, 2, x), x)
                   : mul(c, scalar_like(c, p, x), grad_binary(c, GRAPH_OP_POW, x, scalar_like(c, p - 1, e)));
    grad_add(c, x, mul(c, dy[0], d));
    return true;
}

bool grad_where(grad_ctx *c, int k, const int *dy)
{
    graph_node n = node_of(c, k);
    int cond = n.inputs[0], a = n.inputs[1], b = n.inputs[2], zero = scalar_like(c, 0, dy[0]);
    if (grad_wanted(c, a))
        grad_add(c, a, where(c, cond, dy[0], zero));
    if (grad_wanted(c, b))
        grad_add(c, b, where(c, cond, zero, dy[0]));
    return true;
}

/* Max and Min of two operands: the gradient goes to the one chosen (the
 * first on a tie). */
bool grad_max_min(grad_ctx *c, int k, const int *dy)
{
    graph_node n = node_of(c, k);
    if (n.n_inputs == 1) {
        grad_add(c, n.inputs[0], dy[0]);
        return true;
    }
    if (n.n_inputs != 2)
        return grad_fail(c, k, "only one or two operands are differentiated");
    int a = n.inputs[0], b = n.inputs[1], zero = scalar_like(c, 0, dy[0]);
    int b_wins = grad_binary(c, n.op == GRAPH_OP_MAX ? GRAPH_OP_LESS : GRAPH_OP_GREATER, a, b);
    if (grad_wanted(c, a))
        grad_add(c, a, where(c, b_wins, zero, dy[0]));
    if (grad_wanted(c, b))
        grad_add(c, b, where(c, b_wins, dy[0], zero));
    return true;
}

/* Cast between float types: the gradient cast back (grad_add casts). */
bool grad_cast(grad_ctx *c, int k, const int *dy)
{
    graph_node n = node_of(c, k);
    if (!graph_dtype_is_float(DTYPE(n.inputs[0])))
        return true;
    grad_add(c, n.inputs[0], dy[0]);
    return true;
}

/* ---- shape and data movement ------------------------------------------------------------ */

/* Identity, Dropout (its inference form: no mask), Reshape, Flatten, Squeeze, Unsqueeze. */
bool grad_view(grad_ctx *c, int k, const int *dy)
{
    graph_node n = node_of(c, k);
    int x = n.inputs[0];
    if (n.op == GRAPH_OP_DROPOUT && n.n_outputs > 1 && n.outputs[1] >= 0)
        return grad_fail(c, k, "Dropout with a mask output is not differentiated");
    grad_add(c, x, grad_reshape(c, dy[0], SHAPE(x)));
    return true;
}

bool grad_transpose_op(grad_ctx *c, int k, const int *dy)
{
    graph_node n = node_of(c, k);
    int x = n.inputs[0], r = SHAPE(x)->rank;
    int64_t perm[GRAPH_MAX_RANK], inv[GRAPH_MAX_RANK];
    const int64_t *p;
    if (graph_attr_ints(&n, "perm", &p) == (size_t)r)
        memcpy(perm, p, (size_t)r * sizeof *perm);
    else
        for (int i = 0; i < r; i++)
            perm[i] = r - 1 - i;
    for (int i = 0; i < r; i++)
        inv[perm[i]] = i;
    grad_add(c, x, grad_transpose(c, dy[0], inv, r));
    return true;
}

/* Expand: summed back over the broadcast axes (grad_add). */
bool grad_expand_op(grad_ctx *c, int k, const int *dy)
{
    graph_node n = node_of(c, k);
    grad_add(c, n.inputs[0], dy[0]);
    return true;
}

bool grad_concat(grad_ctx *c, int k, const int *dy)
{
    graph_node n = node_of(c, k);
    int r = SHAPE(n.outputs[0])->rank;
    int axis = ops_norm_axis(graph_attr_int(&n, "axis"), r);
    int64_t off = 0;
    for (int i = 0; i < n.n_inputs; i++) {
        int x = n.inputs[i];
        int64_t len = SHAPE(x)->dims[axis];
        if (grad_wanted(c, x)) {
            int64_t s = off, e = off + len, a = axis;
            int in[4] = { dy[0], grad_ints(c, &s, 1), grad_ints(c, &e, 1), grad_ints(c, &a, 1) };
            grad_add(c, x, grad_op(c, GRAPH_OP_SLICE, in, 4));
        }
        off += len;
    }
    return true;
}

/* The axes a reduction node reduces (all when none are given). */
static int reduce_axes_of(grad_ctx *c, const graph_node *n, int64_t *axes)
{
    const graph *g = grad_graph(c);
    int r = g->tensors[n->inputs[0]].shape.rank, na = 0;
    const int64_t *v = NULL;
    size_t cnt = 0;
    if (n->n_inputs > 1 && n->inputs[1] >= 0) {
        const graph_tensor *t = &g->tensors[n->inputs[1]];
        v = t->data;
        cnt = (size_t)graph_shape_numel(&t->shape);
    } else {
        cnt = graph_attr_ints(n, "axes", &v);
    }
    if (cnt == 0) {
        if (n->op == GRAPH_OP_REDUCESUM && graph_attr_int(n, "noop_with_empty_axes"))
            return 0;
        for (int d = 0; d < r; d++)
            axes[na++] = d;
        return na;
    }
    for (size_t i = 0; i < cnt; i++)
        axes[na++] = ops_norm_axis(v[i], r);
    return na;
}

/* ReduceSum and ReduceMean: the gradient spread back over what was reduced. */
bool grad_reduce_op(grad_ctx *c, int k, const int *dy)
{
    graph_node n = node_of(c, k);
    int x = n.inputs[0];
    int64_t axes[GRAPH_MAX_RANK];
    int na = reduce_axes_of(c, &n, axes);
    graph_shape kept = *SHAPE(x);
    int64_t count = 1;
    for (int i = 0; i < na; i++) {
        count *= kept.dims[axes[i]];
        kept.dims[axes[i]] = 1;
    }
    int d = grad_reshape(c, dy[0], &kept);
    if (n.op == GRAPH_OP_REDUCEMEAN && count > 1)
        d = mul(c, d, scalar_like(c, 1.0 / (double)count, d));
    grad_add(c, x, grad_expand(c, d, SHAPE(x)));
    return true;
}

bool grad_global_average_pool(grad_ctx *c, int k, const int *dy)
{
    graph_node n = node_of(c, k);
    int x = n.inputs[0];
    int64_t count = graph_shape_numel(SHAPE(x)) / graph_shape_numel(SHAPE(n.outputs[0]));
    int d = mul(c, dy[0], scalar_like(c, 1.0 / (double)count, dy[0]));
    grad_add(c, x, grad_expand(c, d, SHAPE(x)));
    return true;
}

/* ---- matrix products ------------------------------------------------------------------- */

/* x with its last two axes swapped. */
static int swap_last2(grad_ctx *c, int x)
{
    int r = SHAPE(x)->rank;
    int64_t perm[GRAPH_MAX_RANK];
    for (int i = 0; i < r; i++)
        perm[i] = i;
    perm[r - 2] = r - 1;
    perm[r - 1] = r - 2;
    return grad_transpose(c, x, perm, r);
}

static int matmul(grad_ctx *c, int a, int b)
{
    return grad_binary(c, GRAPH_OP_MATMUL, a, b);
}

/* x as a matrix of its last axis' columns, all other axes as rows. */
static int rows_of(grad_ctx *c, int x)
{
    const graph_shape *s = SHAPE(x);
    graph_shape m = { .rank = 2, .dims = { graph_shape_numel(s) / s->dims[s->rank - 1], s->dims[s->rank - 1] } };
    return grad_reshape(c, x, &m);
}

/* numpy matmul: rank-1 operands promoted (a row, b a column), batch axes
 * broadcast.  dA = dY B^T, dB = A^T dY; a rank-2 B under a batched A is
 * the common case of a weight, and its gradient is one matmul of the
 * batch's rows. */
bool grad_matmul(grad_ctx *c, int k, const int *dy)
{
    graph_node n = node_of(c, k);
    int A = n.inputs[0], B = n.inputs[1];
    graph_shape sa = *SHAPE(A), sb = *SHAPE(B);
    if (sa.rank == 1)
        sa = (graph_shape){ .rank = 2, .dims = { 1, sa.dims[0] } };
    if (sb.rank == 1)
        sb = (graph_shape){ .rank = 2, .dims = { sb.dims[0], 1 } };
    int a = grad_reshape(c, A, &sa), b = grad_reshape(c, B, &sb);
    graph_shape ba = { .rank = sa.rank - 2 }, bb = { .rank = sb.rank - 2 }, so;
    memcpy(ba.dims, sa.dims, (size_t)ba.rank * sizeof(int64_t));
    memcpy(bb.dims, sb.dims, (size_t)bb.rank * sizeof(int64_t));
    if (!ops_broadcast(&ba, &bb, &so))
        return grad_fail(c, k, "batch axes do not broadcast");
    so.dims[so.rank++] = sa.dims[sa.rank - 2];
    so.dims[so.rank++] = sb.dims[sb.rank - 1];
    int d = grad_reshape(c, dy[0], &so);
    if (grad_wanted(c, A)) {
        int da = matmul(c, d, swap_last2(c, b));
        grad_add(c, A, grad_reshape(c, grad_unbroadcast(c, da, &sa), SHAPE(A)));
    }
    if (grad_wanted(c, B)) {
        int db;
        if (sb.rank == 2 && sa.rank > 2)
            db = matmul(c, grad_transpose(c, rows_of(c, a), (const int64_t[]){ 1, 0 }, 2), rows_of(c, d));
        else
            db = grad_unbroadcast(c, matmul(c, swap_last2(c, a), d), &sb);
        grad_add(c, B, grad_reshape(c, db, SHAPE(B)));
    }
    return true;
}

/* Gemm: Y = alpha A' B' + beta C, A' = A or A^T (transA), B' likewise. */
bool grad_gemm(grad_ctx *c, int k, const int *dy)
{
    graph_node n = node_of(c, k);
    int A = n.inputs[0], B = n.inputs[1], C = in_of(&n, 2), d = dy[0];
    double alpha = graph_attr_float(&n, "alpha"), beta = graph_attr_float(&n, "beta");
    bool ta = graph_attr_int(&n, "transA") != 0, tb = graph_attr_int(&n, "transB") != 0;
    static const int64_t t2[2] = { 1, 0 };
    int da = alpha != 1 ? mul(c, d, scalar_like(c, alpha, d)) : d;
    if (grad_wanted(c, A))          /* dA' = alpha dY B'^T */
        grad_add(c, A, ta ? matmul(c, tb ? grad_transpose(c, B, t2, 2) : B, grad_transpose(c, da, t2, 2))
                          : matmul(c, da, tb ? B : grad_transpose(c, B, t2, 2)));
    if (grad_wanted(c, B))          /* dB' = alpha A'^T dY */
        grad_add(c, B, tb ? matmul(c, grad_transpose(c, da, t2, 2), ta ? grad_transpose(c, A, t2, 2) : A)
                          : matmul(c, ta ? A : grad_transpose(c, A, t2, 2), da));
    if (C >= 0 && grad_wanted(c, C))
        grad_add(c, C, beta != 1 ? mul(c, d, scalar_like(c, beta, d)) : d);
    return true;
}

/* Conv: the input's gradient a ConvTranspose of dY by the same weights
 * (sized to the input), the weights' a ConvWeightGrad of the input and
 * dY, the bias's dY summed over the batch and the image. */
bool grad_conv(grad_ctx *c, int k, const int *dy)
{
    graph_node n = node_of(c, k);
    int x = n.inputs[0], w = n.inputs[1], b = in_of(&n, 2), r = SHAPE(x)->rank;
    graph *g = grad_graph(c);
    int64_t kernel[GRAPH_MAX_RANK], spatial[GRAPH_MAX_RANK];
    for (int d = 2; d < r; d++) {
        kernel[d - 2] = SHAPE(w)->dims[d];
        spatial[d - 2] = SHAPE(x)->dims[d];
    }
    if (grad_wanted(c, x)) {
        int in[2] = { dy[0], w };
        int t = grad_node(c, GRAPH_OP_CONV_TRANSPOSE, in, 2, 1);
        graph_copy_attrs(&g->nodes[t], &n);
        graph_set_attr_ints(&g->nodes[t], "kernel_shape", kernel, (size_t)(r - 2));
        graph_set_attr_ints(&g->nodes[t], "output_shape", spatial, (size_t)(r - 2));
        grad_add(c, x, grad_infer(c, t));
    }
    if (grad_wanted(c, w)) {
        int in[2] = { x, dy[0] };
        int t = grad_node(c, GRAPH_OP_CONV_WEIGHT_GRAD, in, 2, 1);
        graph_copy_attrs(&g->nodes[t], &n);
        graph_set_attr_ints(&g->nodes[t], "kernel_shape", kernel, (size_t)(r - 2));
        grad_add(c, w, grad_infer(c, t));
    }
    if (b >= 0 && grad_wanted(c, b)) {
        int64_t axes[GRAPH_MAX_RANK];
        int na = 0;
        for (int d = 0; d < r; d++)
            if (d != 1)
                axes[na++] = d;
        grad_add(c, b, grad_reduce(c, GRAPH_OP_REDUCESUM, dy[0], axes, na, false));
    }
    return true;
}

/* MaxPool: each window's gradient to its first maximum (MaxPoolGrad). */
bool grad_maxpool(grad_ctx *c, int k, const int *dy)
{
    graph_node n = node_of(c, k);
    if (n.n_outputs > 1 && n.outputs[1] >= 0)
        return grad_fail(c, k, "a MaxPool with an Indices output is not differentiated");
    if (graph_attr_int(&n, "storage_order"))
        return grad_fail(c, k, "storage_order 1 is not differentiated");
    graph *g = grad_graph(c);
    int in[2] = { n.inputs[0], dy[0] };
    int t = grad_node(c, GRAPH_OP_MAXPOOLGRAD, in, 2, 1);
    graph_node *m = &g->nodes[t];
    static const char *const keep[] = { "auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "strides" };
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
        const graph_attr *a = graph_attr_find(&n, keep[i]);
        if (!a)
            continue;
        if (a->type == GATTR_INT)
            graph_set_attr_int(m, a->name, a->i);
        else if (a->type == GATTR_STRING)
            graph_set_attr_string(m, a->name, a->s);
        else if (a->type == GATTR_INTS)
            graph_set_attr_ints(m, a->name, a->ints, a->n);
    }
    grad_add(c, n.inputs[0], grad_infer(c, t));
    return true;
}

/* Gather of a table's rows: the rows' gradients added into a zero table
 * at their indices (GatherGrad, a scatter-add). */
bool grad_gather(grad_ctx *c, int k, const int *dy)
{
    graph_node n = node_of(c, k);
    int data = n.inputs[0];
    if (!grad_wanted(c, data))
        return true;
    int in[2] = { dy[0], n.inputs[1] };
    int t = grad_node(c, GRAPH_OP_GATHERGRAD, in, 2, 1);
    graph_set_attr_int(&grad_graph(c)->nodes[t], "axis", graph_attr_int(&n, "axis"));
    graph_set_attr_ints(&grad_graph(c)->nodes[t], "shape", SHAPE(data)->dims, (size_t)SHAPE(data)->rank);
    grad_add(c, data, grad_infer(c, t));
    return true;
}

/* ---- losses ----------------------------------------------------------------------------- */

/* SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss over scores
 * [N, C, d...] and labels [N, d...]: sample i's gradient is
 * (p_i - onehot_i) c_i (softmax-ce; -onehot_i c_i for nll on log
 * probabilities), c_i its weight (the class weight of its label, 0 for an
 * ignored label) times dy over the reduction's divisor (mean: the weights'
 * sum).  The log_prob output's own gradient adds dlp - p sum(dlp). */
bool grad_class_loss(grad_ctx *c, int k, const int *dy)
{
    graph_node n = node_of(c, k);
    graph *g = grad_graph(c);
    int x = n.inputs[0], lab = n.inputs[1], w = in_of(&n, 2);
    if (!grad_wanted(c, x))
        return true;
    const graph_shape *sx = SHAPE(x), *sl = SHAPE(lab);
    int r = sx->rank;
    int64_t classes = sx->dims[1], axis = 1;
    const char *red = graph_attr_string(&n, "reduction");
    graph_shape col = *sx;
    col.dims[1] = 1;                                  /* [N, 1, d...]: a value per sample */
    graph_shape cls = { .rank = r };                  /* [1, C, 1...]: the class numbers */
    for (int d = 0; d < r; d++)
        cls.dims[d] = d == 1 ? classes : 1;
    int64_t *num = malloc((size_t)classes * sizeof *num);
    int32_t *num32 = malloc((size_t)classes * sizeof *num32);
    for (int64_t i = 0; i < classes; i++)
        num[i] = num32[i] = (int32_t)i;
    int range = graph_add_constant(g, "grad_classes", DTYPE(lab), &cls, DTYPE(lab) == GDT_I64 ? (void *)num : (void *)num32);
    free(num);
    free(num32);
    int onehot = grad_binary(c, GRAPH_OP_EQUAL, grad_reshape(c, lab, &col), range);
    int zero = scalar_like(c, 0, x), one = scalar_like(c, 1, x);
    /* each sample's weight */
    int wi = w >= 0 ? grad_binary(c, GRAPH_OP_GATHER, w, lab) : -1;
    const graph_attr *ii = graph_attr_find(&n, "ignore_index");
    if (ii) {
        int keep = grad_unary(c, GRAPH_OP_NOT, grad_binary(c, GRAPH_OP_EQUAL, lab, grad_scalar(c, (double)ii->i, DTYPE(lab))));
        wi = where(c, keep, wi >= 0 ? wi : one, zero);
    }
    int coef;
    if (!strcmp(red, "none")) {
        coef = wi >= 0 ? mul(c, dy[0], wi) : dy[0];
    } else {
        coef = dy[0];
        if (wi >= 0)
            coef = mul(c, wi, coef);
        if (!strcmp(red, "mean")) {
            int64_t count = graph_shape_numel(sl), all[GRAPH_MAX_RANK];
            for (int d = 0; d < sl->rank; d++)
                all[d] = d;
            coef = wi >= 0 ? divide(c, coef, grad_reduce(c, GRAPH_OP_REDUCESUM, wi, all, sl->rank, false))
                           : mul(c, coef, scalar_like(c, 1.0 / (double)count, x));
        }
        if (wi < 0)
            coef = grad_expand(c, coef, sl);
    }
    coef = grad_reshape(c, coef, &col);
    int oh = where(c, onehot, one, zero);
    int p = -1;
    if (n.op == GRAPH_OP_SOFTMAX_CROSS_ENTROPY_LOSS) {
        int t = grad_node(c, GRAPH_OP_SOFTMAX, &x, 1, 1);
        graph_set_attr_int(&g->nodes[t], "axis", 1);
        p = grad_infer(c, t);
        grad_add(c, x, mul(c, sub(c, p, oh), coef));
    } else {
        grad_add(c, x, neg(c, mul(c, oh, coef)));
    }
    if (n.op == GRAPH_OP_SOFTMAX_CROSS_ENTROPY_LOSS && n.n_outputs > 1 && n.outputs[1] >= 0 && dy[1] >= 0)
        grad_add(c, x, sub(c, dy[1], mul(c, p, grad_reduce(c, GRAPH_OP_REDUCESUM, dy[1], &axis, 1, true))));
    return true;
}

/* ---- rows: softmax and normalisation ------------------------------------------------------ */

static bool softmax_axis(grad_ctx *c, int k, const graph_node *n, int64_t *axis)
{
    int r = SHAPE(n->inputs[0])->rank;
    int a = ops_norm_axis(graph_attr_int(n, "axis"), r);
    if (grad_graph(c)->opset < 13 && a != r - 1)
        return grad_fail(c, k, "an opset-11 softmax over axes %d.. is not differentiated", a);
    *axis = a;
    return true;
}

bool grad_softmax(grad_ctx *c, int k, const int *dy)
{
    graph_node n = node_of(c, k);
    int64_t axis;
    if (!softmax_axis(c, k, &n, &axis))
        return false;
    int y = n.outputs[0];
    int s = grad_reduce(c, GRAPH_OP_REDUCESUM, mul(c, dy[0], y), &axis, 1, true);
    grad_add(c, n.inputs[0], mul(c, y, sub(c, dy[0], s)));
    return true;
}

bool grad_log_softmax(grad_ctx *c, int k, const int *dy)
{
    graph_node n = node_of(c, k);
    int64_t axis;
    if (!softmax_axis(c, k, &n, &axis))
        return false;
    int y = n.outputs[0];
    int s = grad_reduce(c, GRAPH_OP_REDUCESUM, dy[0], &axis, 1, true);
    grad_add(c, n.inputs[0], sub(c, dy[0], mul(c, grad_unary(c, GRAPH_OP_EXP, y), s)));
    return true;
}

/* The normalised x over axes (kept), recomputed: xhat and 1 / sqrt(var + eps). */
/* The centred input x - mean(x) and 1 / sqrt(var(x) + eps) over axes, in
 * the ops the forward pass is decomposed into (so that merge_common.c
 * takes them from the forward pass). */
static int centre(grad_ctx *c, int x, const int64_t *axes, int na, double eps, int *invstd)
{
    int mean = grad_reduce(c, GRAPH_OP_REDUCEMEAN, x, axes, na, true);
    int xc = sub(c, x, mean);
    int var = grad_reduce(c, GRAPH_OP_REDUCEMEAN, mul(c, xc, xc), axes, na, true);
    *invstd = grad_unary(c, GRAPH_OP_RECIPROCAL,
                         grad_unary(c, GRAPH_OP_SQRT, add(c, var, scalar_like(c, eps, var))));
    return xc;
}

static int normalise(grad_ctx *c, int x, const int64_t *axes, int na, double eps, int *invstd)
{
    int xc = centre(c, x, axes, na, eps, invstd);
    return mul(c, xc, *invstd);
}

/* dx from dxhat for a normalisation over axes: invstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat)). */
static int normalise_back(grad_ctx *c, int dxhat, int xhat, int invstd, const int64_t *axes, int na)
{
    int m1 = grad_reduce(c, GRAPH_OP_REDUCEMEAN, dxhat, axes, na, true);
    int m2 = grad_reduce(c, GRAPH_OP_REDUCEMEAN, mul(c, dxhat, xhat), axes, na, true);
    return mul(c, invstd, sub(c, sub(c, dxhat, m1), mul(c, xhat, m2)));
}

bool grad_layernorm(grad_ctx *c, int k, const int *dy)
{
    graph_node n = node_of(c, k);
    if ((n.n_outputs > 1 && n.outputs[1] >= 0 && dy[1] >= 0) || (n.n_outputs > 2 && n.outputs[2] >= 0 && dy[2] >= 0))
        return grad_fail(c, k, "a gradient into the mean or inverse deviation outputs is not supported");
    int x = n.inputs[0], scale = n.inputs[1], bias = in_of(&n, 2), r = SHAPE(x)->rank;
    int first = ops_norm_axis(graph_attr_int(&n, "axis"), r);
    int64_t axes[GRAPH_MAX_RANK];
    int na = 0;
    for (int d = first; d < r; d++)
        axes[na++] = d;
    int invstd, xhat = normalise(c, x, axes, na, graph_attr_float(&n, "epsilon"), &invstd);
    if (grad_wanted(c, scale))
        grad_add(c, scale, mul(c, dy[0], xhat));
    if (bias >= 0 && grad_wanted(c, bias))
        grad_add(c, bias, dy[0]);
    if (grad_wanted(c, x))
        grad_add(c, x, normalise_back(c, mul(c, dy[0], scale), xhat, invstd, axes, na));
    return true;
}

/* BatchNormalization in training mode, in the fewest passes over the
 * image (as popnn's batch-norm gradients: two per-channel sums, then one
 * affine combination).  With xc = x - mean and s = 1 / sqrt(var + eps)
 * from the forward pass, g the scale [1, C, 1, ...] and M the elements a
 * channel:
 *   dbias = sum(dy),  dscale = s sum(dy xc),
 *   dx = g s dy - (g s / M) (dbias + s xc dscale)
 *      = dy (g s) + xc (-g s^3 sum(dy xc) / M) + (-g s sum(dy) / M),
 * the three factors per channel. */
static bool grad_batchnorm_training(grad_ctx *c, const graph_node *n, int dy, int g, const int64_t *axes, int na)
{
    int x = n->inputs[0], scale = n->inputs[1], bias = n->inputs[2];
    int64_t channels = SHAPE(x)->dims[1];
    double m = (double)graph_shape_numel(SHAPE(x)) / (double)channels;
    int invstd, xc = centre(c, x, axes, na, graph_attr_float(n, "epsilon"), &invstd);
    int sum_dy = grad_reduce(c, GRAPH_OP_REDUCESUM, dy, axes, na, true);
    int sum_dy_xc = grad_reduce(c, GRAPH_OP_REDUCESUM, mul(c, dy, xc), axes, na, true);
    graph_shape vec = { .rank = 1, .dims = { channels } };
    if (grad_wanted(c, scale))
        grad_add(c, scale, grad_reshape(c, mul(c, sum_dy_xc, invstd), &vec));
    if (grad_wanted(c, bias))
        grad_add(c, bias, grad_reshape(c, sum_dy, &vec));
    if (grad_wanted(c, x)) {
        int gs = mul(c, g, invstd);
        int k_xc = mul(c, mul(c, gs, mul(c, invstd, invstd)), mul(c, sum_dy_xc, scalar_like(c, -1.0 / m, x)));
        int k_0 = mul(c, gs, mul(c, sum_dy, scalar_like(c, -1.0 / m, x)));
        grad_add(c, x, add(c, add(c, mul(c, dy, gs), mul(c, xc, k_xc)), k_0));
    }
    return true;
}

/* BatchNormalization over N and the spatial axes per channel (axis 1):
 * in training mode with the batch's statistics, else with the constant
 * running ones. */
bool grad_batchnorm(grad_ctx *c, int k, const int *dy)
{
    graph_node n = node_of(c, k);
    int x = n.inputs[0], scale = n.inputs[1], bias = n.inputs[2], var_in = n.inputs[4], r = SHAPE(x)->rank;
    if (r < 2)
        return grad_fail(c, k, "an input of rank %d", r);
    int64_t axes[GRAPH_MAX_RANK];
    int na = 0;
    graph_shape chan = { .rank = r };
    for (int d = 0; d < r; d++) {
        chan.dims[d] = d == 1 ? SHAPE(x)->dims[1] : 1;
        if (d != 1)
            axes[na++] = d;
    }
    double eps = graph_attr_float(&n, "epsilon");
    int s = grad_reshape(c, scale, &chan);
    if (graph_attr_int(&n, "training_mode"))
        return grad_batchnorm_training(c, &n, dy[0], s, axes, na);
    int invstd = grad_reshape(c, grad_unary(c, GRAPH_OP_RECIPROCAL, grad_unary(c, GRAPH_OP_SQRT,
                                            add(c, var_in, scalar_like(c, eps, var_in)))), &chan);
    int xhat = mul(c, sub(c, x, grad_reshape(c, n.inputs[3], &chan)), invstd);
    if (grad_wanted(c, scale))
        grad_add(c, scale, grad_reduce(c, GRAPH_OP_REDUCESUM, mul(c, dy[0], xhat), axes, na, false));
    if (grad_wanted(c, bias))
        grad_add(c, bias, grad_reduce(c, GRAPH_OP_REDUCESUM, dy[0], axes, na, false));
    if (grad_wanted(c, x))
        grad_add(c, x, mul(c, mul(c, dy[0], s), invstd));
    return true;
}
