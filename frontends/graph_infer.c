/*
 * graph_infer.c — shape and dtype inference for every op of ops.def, and
 * the geometry (broadcasting, windows, slices, reduction axes) that the
 * evaluator computes the same way.
 *
 * Inference follows the ONNX operator specifications of opsets 11-17; where
 * an op changed inside that range (axes moving from attribute to input in
 * opset 13, Softmax's 2-D coercion before 13) the graph's opset decides.
 * Everything is static: an input that decides a shape is a constant here
 * (graph_infer_node checks the static_in column first).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph_eval.h"
#include "ops_impl.h"
#include "sim/base/diag.h"

static const char *shape_s(const graph_shape *s, char *buf, size_t size)
{
    return graph_shape_str(s, buf, size);
}

/* ---- shared geometry ------------------------------------------------------------ */

int ops_norm_axis(int64_t axis, int rank)
{
    if (axis < -rank || axis >= rank)
        return -1;
    return (int)(axis < 0 ? axis + rank : axis);
}

bool ops_broadcast(const graph_shape *a, const graph_shape *b, graph_shape *out)
{
    int r = a->rank > b->rank ? a->rank : b->rank;
    graph_shape o = { .rank = r };
    for (int i = 0; i < r; i++) {
        int ia = i - (r - a->rank), ib = i - (r - b->rank);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da == db || db == 1)
            o.dims[i] = da;
        else if (da == 1)
            o.dims[i] = db;
        else
            return false;
    }
    *out = o;
    return true;
}

bool ops_const_ints(const graph_tensor *t, int64_t *v, size_t max, size_t *count)
{
    if (!t->data || (t->dtype != GDT_I64 && t->dtype != GDT_I32))
        return false;
    int64_t n = graph_shape_numel(&t->shape);
    if (n < 0 || (size_t)n > max)
        return false;
    for (int64_t i = 0; i < n; i++)
        v[i] = graph_load_i64(t->dtype, t->data, (size_t)i);
    *count = (size_t)n;
    return true;
}

/* An ints attribute of exactly `want` values with every value >= min; the
 * default when absent. */
static bool window_ints(const graph *g, const graph_node *n, const char *name, int want, int64_t min,
                        int64_t def, int64_t *v, char *err, size_t err_size)
{
    const int64_t *a;
    size_t count = graph_attr_ints(n, name, &a);
    if (!graph_attr_find(n, name)) {
        for (int i = 0; i < want; i++)
            v[i] = def;
        return true;
    }
    if ((int)count != want)
        return graph_node_error(g, n, err, err_size, "attribute '%s' has %zu values, expected %d", name, count,
                                want);
    for (int i = 0; i < want; i++) {
        if (a[i] < min)
            return graph_node_error(g, n, err, err_size, "attribute '%s' has value %lld (below %lld)", name,
                                    (long long)a[i], (long long)min);
        v[i] = a[i];
    }
    return true;
}

bool ops_window_init(const graph *g, const graph_node *n, const graph_shape *x, const int64_t *kernel,
                     bool ceil_mode, ops_window *w, char *err, size_t err_size)
{
    int ns = x->rank - 2;
    *w = (ops_window){ .n_spatial = ns };
    if (!window_ints(g, n, "strides", ns, 1, 1, w->stride, err, err_size))
        return false;
    if (!window_ints(g, n, "dilations", ns, 1, 1, w->dilation, err, err_size))
        return false;
    int64_t pads[2 * GRAPH_MAX_RANK];
    if (!window_ints(g, n, "pads", 2 * ns, 0, 0, pads, err, err_size))
        return false;
    const char *auto_pad = graph_attr_string(n, "auto_pad");
    bool same_upper = !strcmp(auto_pad, "SAME_UPPER"), same_lower = !strcmp(auto_pad, "SAME_LOWER");
    bool valid = !strcmp(auto_pad, "VALID");
    if (!same_upper && !same_lower && !valid && strcmp(auto_pad, "NOTSET"))
        return graph_node_error(g, n, err, err_size, "auto_pad '%s' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID",
                                auto_pad);
    for (int i = 0; i < ns; i++) {
        w->in[i] = x->dims[2 + i];
        w->kernel[i] = kernel[i];
        int64_t extent = (kernel[i] - 1) * w->dilation[i] + 1;
        if (same_upper || same_lower) {
            w->out[i] = (w->in[i] + w->stride[i] - 1) / w->stride[i];
            int64_t total = (w->out[i] - 1) * w->stride[i] + extent - w->in[i];
            if (total < 0)
                total = 0;
            w->pad_begin[i] = same_upper ? total / 2 : total - total / 2;
            w->pad_end[i] = total - w->pad_begin[i];
            continue;
        }
        if (!valid) {
            w->pad_begin[i] = pads[i];
            w->pad_end[i] = pads[ns + i];
        }
        int64_t span = w->in[i] + w->pad_begin[i] + w->pad_end[i] - extent;
        if (span < 0) {
            char buf[200];
            return graph_node_error(g, n, err, err_size,
                                    "window of extent %lld does not fit spatial dim %d of input %s (padded %lld)",
                                    (long long)extent, i, shape_s(x, buf, sizeof buf),
                                    (long long)(w->in[i] + w->pad_begin[i] + w->pad_end[i]));
        }
        w->out[i] = (ceil_mode ? (span + w->stride[i] - 1) / w->stride[i] : span / w->stride[i]) + 1;
        /* A last window that would start in the end padding is dropped
         * (the rule of PyTorch and onnxruntime for ceil_mode). */
        if (ceil_mode && (w->out[i] - 1) * w->stride[i] >= w->in[i] + w->pad_begin[i])
            w->out[i]--;
    }
    return true;
}

/* ---- elementwise -------------------------------------------------------------------- */

static bool need_float(graph *g, const graph_node *n, int i, char *err, size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, i);
    if (x && !graph_dtype_is_float(x->dtype))
        return graph_node_error(g, n, err, err_size, "input '%s' is %s; %s takes f16, bf16, f32 or f64", x->name,
                                graph_dtype_name(x->dtype), graph_ops[n->op].name);
    return true;
}

static bool need_numeric(graph *g, const graph_node *n, int i, char *err, size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, i);
    if (x && !graph_dtype_is_float(x->dtype) && !graph_dtype_is_int(x->dtype))
        return graph_node_error(g, n, err, err_size, "input '%s' is %s; %s takes numbers", x->name,
                                graph_dtype_name(x->dtype), graph_ops[n->op].name);
    return true;
}

static bool same_dtype(graph *g, const graph_node *n, int i, int j, char *err, size_t err_size)
{
    const graph_tensor *a = ops_input(g, n, i), *b = ops_input(g, n, j);
    if (a && b && a->dtype != b->dtype)
        return graph_node_error(g, n, err, err_size, "inputs '%s' (%s) and '%s' (%s) differ in type", a->name,
                                graph_dtype_name(a->dtype), b->name, graph_dtype_name(b->dtype));
    return true;
}

bool graph_infer_unary(graph *g, graph_node *n, char *err, size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, 0);
    if (n->op != GRAPH_OP_IDENTITY && !need_numeric(g, n, 0, err, err_size))
        return false;
    ops_set_output(g, n, 0, x->dtype, &x->shape);
    return true;
}

bool graph_infer_unary_float(graph *g, graph_node *n, char *err, size_t err_size)
{
    if (!need_float(g, n, 0, err, err_size))
        return false;
    return graph_infer_unary(g, n, err, err_size);
}

bool graph_infer_unary_bool(graph *g, graph_node *n, char *err, size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, 0);
    if (x->dtype != GDT_BOOL)
        return graph_node_error(g, n, err, err_size, "input '%s' is %s; %s takes bool", x->name,
                                graph_dtype_name(x->dtype), graph_ops[n->op].name);
    ops_set_output(g, n, 0, GDT_BOOL, &x->shape);
    return true;
}

bool graph_infer_cast(graph *g, graph_node *n, char *err, size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, 0);
    int64_t to = graph_attr_int(n, "to");
    if (to <= 0 || to > GDT_BF16 || !graph_dtype_size((graph_dtype)to))
        return graph_node_unsupported(g, n, err, err_size, "cast to %s is not supported",
                                      to > 0 && to <= GDT_BF16 ? graph_dtype_name((graph_dtype)to) : "an unknown type");
    /* rounding (ipusim's): "stochastic" rounds f32 to f16 with the tile
     * PRNG's bits (an f16 weight's update, train.c), "nearest" to nearest even */
    const char *rounding = graph_attr_find(n, "rounding") ? graph_attr_string(n, "rounding") : "nearest";
    if (strcmp(rounding, "nearest") && strcmp(rounding, "stochastic"))
        return graph_node_error(g, n, err, err_size, "rounding '%s': expected nearest or stochastic", rounding);
    if (!strcmp(rounding, "stochastic") && (x->dtype != GDT_F32 || to != GDT_F16))
        return graph_node_error(g, n, err, err_size, "stochastic rounding is of f32 to f16 only, not %s to %s",
                                graph_dtype_name(x->dtype), graph_dtype_name((graph_dtype)to));
    ops_set_output(g, n, 0, (graph_dtype)to, &x->shape);
    return true;
}

bool graph_infer_dropout(graph *g, graph_node *n, char *err, size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, 0), *ratio = ops_input(g, n, 1), *mode = ops_input(g, n, 2);
    if (!need_float(g, n, 0, err, err_size))
        return false;
    bool training = mode && graph_load_i64(mode->dtype, mode->data, 0) != 0;
    double r = ratio ? graph_load_f64(ratio->dtype, ratio->data, 0) : graph_attr_float(n, "ratio");
    if (training && r != 0)
        return graph_node_unsupported(g, n, err, err_size,
                                      "training-mode Dropout (random masks) is not supported");
    ops_set_output(g, n, 0, x->dtype, &x->shape);
    ops_set_output(g, n, 1, GDT_BOOL, &x->shape);
    return true;
}

static bool broadcast_inputs(graph *g, const graph_node *n, int first, int count, graph_shape *out,
                             char *err, size_t err_size)
{
    *out = ops_input(g, n, first)->shape;
    for (int i = first + 1; i < first + count; i++) {
        const graph_tensor *b = ops_input(g, n, i);
        graph_shape o;
        if (!ops_broadcast(out, &b->shape, &o)) {
            char s1[200], s2[200];
            return graph_node_error(g, n, err, err_size, "cannot broadcast input shapes %s and %s",
                                    shape_s(out, s1, sizeof s1), shape_s(&b->shape, s2, sizeof s2));
        }
        *out = o;
    }
    return true;
}

bool graph_infer_binary(graph *g, graph_node *n, char *err, size_t err_size)
{
    graph_shape s;
    if (!need_numeric(g, n, 0, err, err_size) || !same_dtype(g, n, 0, 1, err, err_size) ||
        !broadcast_inputs(g, n, 0, 2, &s, err, err_size))
        return false;
    ops_set_output(g, n, 0, ops_input(g, n, 0)->dtype, &s);
    return true;
}

bool graph_infer_pow(graph *g, graph_node *n, char *err, size_t err_size)
{
    graph_shape s;
    if (!need_numeric(g, n, 0, err, err_size) || !need_numeric(g, n, 1, err, err_size) ||
        !broadcast_inputs(g, n, 0, 2, &s, err, err_size))
        return false;
    ops_set_output(g, n, 0, ops_input(g, n, 0)->dtype, &s);
    return true;
}

bool graph_infer_compare(graph *g, graph_node *n, char *err, size_t err_size)
{
    graph_shape s;
    if (!same_dtype(g, n, 0, 1, err, err_size) || !broadcast_inputs(g, n, 0, 2, &s, err, err_size))
        return false;
    ops_set_output(g, n, 0, GDT_BOOL, &s);
    return true;
}

bool graph_infer_logical(graph *g, graph_node *n, char *err, size_t err_size)
{
    graph_shape s;
    for (int i = 0; i < 2; i++)
        if (ops_input(g, n, i)->dtype != GDT_BOOL)
            return graph_node_error(g, n, err, err_size, "input '%s' is %s; %s takes bool", ops_input(g, n, i)->name,
                                    graph_dtype_name(ops_input(g, n, i)->dtype), graph_ops[n->op].name);
    if (!broadcast_inputs(g, n, 0, 2, &s, err, err_size))
        return false;
    ops_set_output(g, n, 0, GDT_BOOL, &s);
    return true;
}

bool graph_infer_variadic(graph *g, graph_node *n, char *err, size_t err_size)
{
    graph_shape s;
    for (int i = 0; i < n->n_inputs; i++)
        if (!ops_input(g, n, i))
            return graph_node_error(g, n, err, err_size, "input %d is empty", i);
        else if (!need_numeric(g, n, i, err, err_size) || !same_dtype(g, n, 0, i, err, err_size))
            return false;
    if (!broadcast_inputs(g, n, 0, n->n_inputs, &s, err, err_size))
        return false;
    ops_set_output(g, n, 0, ops_input(g, n, 0)->dtype, &s);
    return true;
}

bool graph_infer_where(graph *g, graph_node *n, char *err, size_t err_size)
{
    const graph_tensor *c = ops_input(g, n, 0);
    graph_shape s;
    if (c->dtype != GDT_BOOL)
        return graph_node_error(g, n, err, err_size, "condition '%s' is %s, not bool", c->name,
                                graph_dtype_name(c->dtype));
    if (!same_dtype(g, n, 1, 2, err, err_size) || !broadcast_inputs(g, n, 0, 3, &s, err, err_size))
        return false;
    ops_set_output(g, n, 0, ops_input(g, n, 1)->dtype, &s);
    return true;
}

/* ---- matrix products -------------------------------------------------------------------- */

/* numpy matmul: 1-D operands are promoted and the promoted dim dropped;
 * batch dims broadcast. */
static bool matmul_shape(graph *g, const graph_node *n, const graph_shape *a, const graph_shape *b,
                         graph_shape *out, char *err, size_t err_size)
{
    char s1[200], s2[200];
    if (a->rank < 1 || b->rank < 1)
        return graph_node_error(g, n, err, err_size, "operands must have rank 1 or more, not %s x %s",
                                shape_s(a, s1, sizeof s1), shape_s(b, s2, sizeof s2));
    int64_t k_a = a->dims[a->rank - 1];
    int64_t k_b = b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2];
    if (k_a != k_b)
        return graph_node_error(g, n, err, err_size, "inner dimensions differ: %s x %s", shape_s(a, s1, sizeof s1),
                                shape_s(b, s2, sizeof s2));
    graph_shape ba = { .rank = a->rank > 2 ? a->rank - 2 : 0 }, bb = { .rank = b->rank > 2 ? b->rank - 2 : 0 };
    memcpy(ba.dims, a->dims, (size_t)ba.rank * sizeof(int64_t));
    memcpy(bb.dims, b->dims, (size_t)bb.rank * sizeof(int64_t));
    graph_shape o;
    if (!ops_broadcast(&ba, &bb, &o))
        return graph_node_error(g, n, err, err_size, "batch dimensions do not broadcast: %s x %s",
                                shape_s(a, s1, sizeof s1), shape_s(b, s2, sizeof s2));
    if (o.rank + 2 > GRAPH_MAX_RANK)
        return graph_node_unsupported(g, n, err, err_size, "rank above %d", GRAPH_MAX_RANK);
    if (a->rank >= 2)
        o.dims[o.rank++] = a->dims[a->rank - 2];
    if (b->rank >= 2)
        o.dims[o.rank++] = b->dims[b->rank - 1];
    *out = o;
    return true;
}

bool graph_infer_matmul(graph *g, graph_node *n, char *err, size_t err_size)
{
    graph_shape s;
    if (!need_numeric(g, n, 0, err, err_size) || !same_dtype(g, n, 0, 1, err, err_size) ||
        !matmul_shape(g, n, &ops_input(g, n, 0)->shape, &ops_input(g, n, 1)->shape, &s, err, err_size))
        return false;
    ops_set_output(g, n, 0, ops_input(g, n, 0)->dtype, &s);
    return true;
}

/* A bias that broadcasts one way (numpy rules, without growing out). */
static bool bias_fits(graph *g, const graph_node *n, int i, const graph_shape *out, char *err, size_t err_size)
{
    const graph_tensor *c = ops_input(g, n, i);
    graph_shape o;
    if (!c)
        return true;
    if (!ops_broadcast(out, &c->shape, &o) || !graph_shape_equal(&o, out)) {
        char s1[200], s2[200];
        return graph_node_error(g, n, err, err_size, "bias '%s' of shape %s does not broadcast to the output %s",
                                c->name, shape_s(&c->shape, s1, sizeof s1), shape_s(out, s2, sizeof s2));
    }
    return true;
}

bool graph_infer_gemm(graph *g, graph_node *n, char *err, size_t err_size)
{
    const graph_tensor *a = ops_input(g, n, 0), *b = ops_input(g, n, 1);
    char s1[200], s2[200];
    if (!need_numeric(g, n, 0, err, err_size) || !same_dtype(g, n, 0, 1, err, err_size) ||
        !same_dtype(g, n, 0, 2, err, err_size))
        return false;
    if (a->shape.rank != 2 || b->shape.rank != 2)
        return graph_node_error(g, n, err, err_size, "operands must be matrices, not %s x %s",
                                shape_s(&a->shape, s1, sizeof s1), shape_s(&b->shape, s2, sizeof s2));
    bool ta = graph_attr_int(n, "transA") != 0, tb = graph_attr_int(n, "transB") != 0;
    int64_t m = a->shape.dims[ta ? 1 : 0], ka = a->shape.dims[ta ? 0 : 1];
    int64_t kb = b->shape.dims[tb ? 1 : 0], nn = b->shape.dims[tb ? 0 : 1];
    if (ka != kb)
        return graph_node_error(g, n, err, err_size, "inner dimensions differ: %s%s x %s%s",
                                shape_s(&a->shape, s1, sizeof s1), ta ? "^T" : "", shape_s(&b->shape, s2, sizeof s2),
                                tb ? "^T" : "");
    graph_shape o = { .rank = 2, .dims = { m, nn } };
    if (!bias_fits(g, n, 2, &o, err, err_size))
        return false;
    ops_set_output(g, n, 0, a->dtype, &o);
    return true;
}

enum ops_activation ops_activation_of(const graph_node *n)
{
    const char *a = graph_attr_string(n, "activation");
    if (!strcmp(a, "none"))
        return OPS_ACT_NONE;
    if (!strcmp(a, "relu"))
        return OPS_ACT_RELU;
    if (!strcmp(a, "gelu_erf"))
        return OPS_ACT_GELU_ERF;
    if (!strcmp(a, "gelu_tanh"))
        return OPS_ACT_GELU_TANH;
    return OPS_ACT_INVALID;
}

double ops_activate(enum ops_activation a, double x)
{
    switch (a) {
    case OPS_ACT_RELU: return x > 0 ? x : 0;
    case OPS_ACT_GELU_ERF: return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    case OPS_ACT_GELU_TANH: return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    default: return x;
    }
}

bool graph_infer_fused_matmul(graph *g, graph_node *n, char *err, size_t err_size)
{
    const graph_tensor *a = ops_input(g, n, 0), *b = ops_input(g, n, 1);
    if (ops_activation_of(n) == OPS_ACT_INVALID)
        return graph_node_error(g, n, err, err_size, "unknown activation '%s'", graph_attr_string(n, "activation"));
    if (!need_float(g, n, 0, err, err_size) || !same_dtype(g, n, 0, 1, err, err_size) ||
        !same_dtype(g, n, 0, 2, err, err_size))
        return false;
    graph_shape bs = b->shape, s;
    if (graph_attr_int(n, "transB")) {
        if (bs.rank != 2)
            return graph_node_error(g, n, err, err_size, "transB needs a matrix B");
        bs.dims[0] = b->shape.dims[1];
        bs.dims[1] = b->shape.dims[0];
    }
    if (!matmul_shape(g, n, &a->shape, &bs, &s, err, err_size) || !bias_fits(g, n, 2, &s, err, err_size))
        return false;
    ops_set_output(g, n, 0, a->dtype, &s);
    return true;
}

/* ---- convolution, normalisation, pooling ---------------------------------------------------- */

bool graph_infer_conv(graph *g, graph_node *n, char *err, size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, 0), *w = ops_input(g, n, 1), *b = ops_input(g, n, 2);
    char s1[200], s2[200];
    if (!need_float(g, n, 0, err, err_size) || !same_dtype(g, n, 0, 1, err, err_size) ||
        !same_dtype(g, n, 0, 2, err, err_size))
        return false;
    if (n->op == GRAPH_OP_FUSED_CONV && ops_activation_of(n) == OPS_ACT_INVALID)
        return graph_node_error(g, n, err, err_size, "unknown activation '%s'", graph_attr_string(n, "activation"));
    if (x->shape.rank < 3 || w->shape.rank != x->shape.rank)
        return graph_node_error(g, n, err, err_size, "input %s and weights %s are not [N,C,...] and [M,C/group,...]",
                                shape_s(&x->shape, s1, sizeof s1), shape_s(&w->shape, s2, sizeof s2));
    int64_t group = graph_attr_int(n, "group");
    int64_t c = x->shape.dims[1], m = w->shape.dims[0];
    if (group < 1 || c % group || m % group || w->shape.dims[1] != c / group)
        return graph_node_error(g, n, err, err_size,
                                "weights %s do not match input %s with group %lld (need [M,C/group,...])",
                                shape_s(&w->shape, s1, sizeof s1), shape_s(&x->shape, s2, sizeof s2),
                                (long long)group);
    if (b && (b->shape.rank != 1 || b->shape.dims[0] != m))
        return graph_node_error(g, n, err, err_size, "bias %s is not [%lld]", shape_s(&b->shape, s1, sizeof s1),
                                (long long)m);
    const int64_t *ks;
    size_t nk = graph_attr_ints(n, "kernel_shape", &ks);
    if (nk && (nk != (size_t)x->shape.rank - 2 || memcmp(ks, w->shape.dims + 2, nk * sizeof *ks)))
        return graph_node_error(g, n, err, err_size, "kernel_shape does not match the weights %s",
                                shape_s(&w->shape, s1, sizeof s1));
    ops_window win;
    if (!ops_window_init(g, n, &x->shape, w->shape.dims + 2, false, &win, err, err_size))
        return false;
    graph_shape o = { .rank = x->shape.rank, .dims = { x->shape.dims[0], m } };
    for (int i = 0; i < win.n_spatial; i++)
        o.dims[2 + i] = win.out[i];
    ops_set_output(g, n, 0, x->dtype, &o);
    return true;
}

static bool channel_vector(graph *g, const graph_node *n, int i, int64_t c, char *err, size_t err_size)
{
    const graph_tensor *t = ops_input(g, n, i);
    if (t->shape.rank != 1 || t->shape.dims[0] != c) {
        char s[200];
        return graph_node_error(g, n, err, err_size, "input '%s' of shape %s is not [%lld] (one per channel)",
                                t->name, shape_s(&t->shape, s, sizeof s), (long long)c);
    }
    return need_float(g, n, i, err, err_size);
}

bool graph_infer_batchnorm(graph *g, graph_node *n, char *err, size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, 0);
    if (!need_float(g, n, 0, err, err_size))
        return false;
    if (x->shape.rank < 2)
        return graph_node_error(g, n, err, err_size, "input needs rank 2 or more ([N,C,...])");
    int64_t c = x->shape.dims[1];
    for (int i = 1; i < 5; i++)
        if (!channel_vector(g, n, i, c, err, err_size))
            return false;
    bool training = g->opset >= 14 && graph_attr_int(n, "training_mode");
    if (graph_attr_find(n, "training_mode") && g->opset < 14)
        return graph_node_error(g, n, err, err_size, "attribute 'training_mode' exists from opset 14");
    if (n->n_outputs > 1 && !training)
        return graph_node_unsupported(g, n, err, err_size,
                                      g->opset >= 14 ? "extra outputs need training_mode=1"
                                                     : "training-mode outputs are not supported before opset 14");
    if (n->n_outputs > 3)
        return graph_node_error(g, n, err, err_size, "has %d outputs, at most 3 from opset 14", n->n_outputs);
    graph_shape cs = { .rank = 1, .dims = { c } };
    ops_set_output(g, n, 0, x->dtype, &x->shape);
    ops_set_output(g, n, 1, ops_input(g, n, 3)->dtype, &cs);
    ops_set_output(g, n, 2, ops_input(g, n, 4)->dtype, &cs);
    return true;
}

/* Unidirectional broadcast of input i to shape `to`. */
static bool fits(const graph_shape *from, const graph_shape *to)
{
    graph_shape o;
    return ops_broadcast(to, from, &o) && graph_shape_equal(&o, to);
}

bool ops_softmax_range(const graph *g, const graph_node *n, int *from, int *to)
{
    int rank = ops_input(g, n, 0)->shape.rank;
    int64_t axis;
    bool softmax = n->op == GRAPH_OP_SOFTMAX || n->op == GRAPH_OP_LOGSOFTMAX;
    if (softmax && g->opset < 13)
        axis = graph_attr_find(n, "axis") ? graph_attr_int(n, "axis") : 1;
    else
        axis = graph_attr_int(n, "axis");
    int a = ops_norm_axis(axis, rank);
    if (a < 0)
        return false;
    *from = a;
    /* (Log)Softmax from 13 normalises one axis; before 13, and
     * LayerNormalization, everything from the axis on. */
    *to = softmax && g->opset >= 13 ? a + 1 : rank;
    return true;
}

bool graph_infer_layernorm(graph *g, graph_node *n, char *err, size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, 0);
    int from, to;
    if (!need_float(g, n, 0, err, err_size) || !need_float(g, n, 1, err, err_size) ||
        !need_float(g, n, 2, err, err_size))
        return false;
    if (!ops_softmax_range(g, n, &from, &to))
        return graph_node_error(g, n, err, err_size, "axis %lld is out of range for rank %d",
                                (long long)graph_attr_int(n, "axis"), x->shape.rank);
    graph_shape norm = { .rank = to - from };
    memcpy(norm.dims, x->shape.dims + from, (size_t)norm.rank * sizeof(int64_t));
    for (int i = 1; i < 3; i++) {
        const graph_tensor *p = ops_input(g, n, i);
        if (p && !fits(&p->shape, &norm)) {
            char s1[200], s2[200];
            return graph_node_error(g, n, err, err_size, "%s '%s' of shape %s does not broadcast to %s",
                                    i == 1 ? "scale" : "bias", p->name, shape_s(&p->shape, s1, sizeof s1),
                                    shape_s(&norm, s2, sizeof s2));
        }
    }
    int64_t stash = graph_attr_int(n, "stash_type");
    if (stash != GDT_F32 && stash != GDT_F64)
        return graph_node_unsupported(g, n, err, err_size, "stash_type %lld is not supported", (long long)stash);
    graph_shape stat = x->shape;
    for (int i = from; i < stat.rank; i++)
        stat.dims[i] = 1;
    ops_set_output(g, n, 0, x->dtype, &x->shape);
    ops_set_output(g, n, 1, (graph_dtype)stash, &stat);
    ops_set_output(g, n, 2, (graph_dtype)stash, &stat);
    return true;
}

/* Clip(x, min, max): min and max, when given, are scalars of x's type. */
bool graph_infer_clip(graph *g, graph_node *n, char *err, size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, 0);
    if (!need_numeric(g, n, 0, err, err_size))
        return false;
    for (int i = 1; i < 3; i++) {
        const graph_tensor *b = ops_input(g, n, i);
        if (!b)
            continue;
        if (b->dtype != x->dtype || graph_shape_numel(&b->shape) != 1 || b->shape.rank > 1)
            return graph_node_error(g, n, err, err_size, "%s '%s' must be a scalar of the input's type (%s)",
                                    i == 1 ? "min" : "max", b->name, graph_dtype_name(x->dtype));
    }
    ops_set_output(g, n, 0, x->dtype, &x->shape);
    return true;
}

bool graph_infer_softmax(graph *g, graph_node *n, char *err, size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, 0);
    int from, to;
    if (!need_float(g, n, 0, err, err_size))
        return false;
    if (!ops_softmax_range(g, n, &from, &to))
        return graph_node_error(g, n, err, err_size, "axis %lld is out of range for rank %d",
                                (long long)graph_attr_int(n, "axis"), x->shape.rank);
    ops_set_output(g, n, 0, x->dtype, &x->shape);
    return true;
}

bool graph_infer_pool(graph *g, graph_node *n, char *err, size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, 0);
    char s[200];
    if (!need_numeric(g, n, 0, err, err_size))
        return false;
    if (n->op == GRAPH_OP_AVERAGEPOOL && !need_float(g, n, 0, err, err_size))
        return false;
    if (x->shape.rank < 3)
        return graph_node_error(g, n, err, err_size, "input %s is not [N,C,spatial...]",
                                shape_s(&x->shape, s, sizeof s));
    const int64_t *k;
    size_t nk = graph_attr_ints(n, "kernel_shape", &k);
    if (nk != (size_t)x->shape.rank - 2)
        return graph_node_error(g, n, err, err_size, "kernel_shape has %zu values for %d spatial dims", nk,
                                x->shape.rank - 2);
    for (size_t i = 0; i < nk; i++)
        if (k[i] < 1)
            return graph_node_error(g, n, err, err_size, "kernel_shape has value %lld", (long long)k[i]);
    if (n->op == GRAPH_OP_MAXPOOL && n->n_outputs > 1 && graph_attr_int(n, "storage_order") != 0 &&
        graph_attr_int(n, "storage_order") != 1)
        return graph_node_error(g, n, err, err_size, "storage_order must be 0 or 1");
    ops_window w;
    if (!ops_window_init(g, n, &x->shape, k, graph_attr_int(n, "ceil_mode") != 0, &w, err, err_size))
        return false;
    graph_shape o = x->shape;
    for (int i = 0; i < w.n_spatial; i++)
        o.dims[2 + i] = w.out[i];
    ops_set_output(g, n, 0, x->dtype, &o);
    ops_set_output(g, n, 1, GDT_I64, &o);
    return true;
}

bool graph_infer_global_pool(graph *g, graph_node *n, char *err, size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, 0);
    if (!need_float(g, n, 0, err, err_size))
        return false;
    if (x->shape.rank < 2)
        return graph_node_error(g, n, err, err_size, "input needs rank 2 or more ([N,C,...])");
    graph_shape o = x->shape;
    for (int i = 2; i < o.rank; i++)
        o.dims[i] = 1;
    ops_set_output(g, n, 0, x->dtype, &o);
    return true;
}

/* ---- reductions ---------------------------------------------------------------------------- */

bool ops_reduce_axes(const graph *g, const graph_node *n, bool *reduced, char *err, size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, 0);
    int64_t axes[GRAPH_MAX_RANK * 2];
    size_t count = 0;
    const graph_tensor *ax = ops_input(g, n, 1);
    if (ax) {
        if (!ops_const_ints(ax, axes, sizeof axes / sizeof axes[0], &count))
            return graph_node_error(g, n, err, err_size, "axes '%s' must be a constant list of integers", ax->name);
    } else {
        const int64_t *a;
        count = graph_attr_ints(n, "axes", &a);
        if (count > sizeof axes / sizeof axes[0])
            return graph_node_error(g, n, err, err_size, "too many axes");
        if (count)
            memcpy(axes, a, count * sizeof *a);
    }
    if (ax && graph_attr_find(n, "axes"))
        return graph_node_error(g, n, err, err_size, "axes given both as attribute and as input");
    for (int d = 0; d < x->shape.rank; d++)
        reduced[d] = false;
    if (count == 0) {
        bool noop = graph_attr_find(n, "noop_with_empty_axes") && graph_attr_int(n, "noop_with_empty_axes");
        for (int d = 0; d < x->shape.rank; d++)
            reduced[d] = !noop;
        return true;
    }
    for (size_t i = 0; i < count; i++) {
        int a = ops_norm_axis(axes[i], x->shape.rank);
        if (a < 0)
            return graph_node_error(g, n, err, err_size, "axis %lld is out of range for rank %d", (long long)axes[i],
                                    x->shape.rank);
        if (reduced[a])
            return graph_node_error(g, n, err, err_size, "axis %lld is repeated", (long long)axes[i]);
        reduced[a] = true;
    }
    return true;
}

bool graph_infer_reduce(graph *g, graph_node *n, char *err, size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, 0);
    bool reduced[GRAPH_MAX_RANK];
    if (!need_numeric(g, n, 0, err, err_size))
        return false;
    if (n->op == GRAPH_OP_REDUCESUM && g->opset < 13 && ops_input(g, n, 1))
        return graph_node_error(g, n, err, err_size, "axes as an input needs opset 13");
    if (!ops_reduce_axes(g, n, reduced, err, err_size))
        return false;
    bool keep = graph_attr_int(n, "keepdims") != 0;
    graph_shape o = { 0 };
    for (int d = 0; d < x->shape.rank; d++)
        if (!reduced[d])
            o.dims[o.rank++] = x->shape.dims[d];
        else if (keep)
            o.dims[o.rank++] = 1;
    ops_set_output(g, n, 0, x->dtype, &o);
    return true;
}

/* ---- data movement and shape arithmetic ----------------------------------------------------- */

bool graph_infer_transpose(graph *g, graph_node *n, char *err, size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, 0);
    const int64_t *perm;
    size_t np = graph_attr_ints(n, "perm", &perm);
    int r = x->shape.rank;
    graph_shape o = { .rank = r };
    if (!graph_attr_find(n, "perm")) {
        for (int i = 0; i < r; i++)
            o.dims[i] = x->shape.dims[r - 1 - i];
    } else {
        bool seen[GRAPH_MAX_RANK] = { 0 };
        if ((int)np != r)
            return graph_node_error(g, n, err, err_size, "perm has %zu values for rank %d", np, r);
        for (int i = 0; i < r; i++) {
            if (perm[i] < 0 || perm[i] >= r || seen[perm[i]])
                return graph_node_error(g, n, err, err_size, "perm is not a permutation of 0..%d", r - 1);
            seen[perm[i]] = true;
            o.dims[i] = x->shape.dims[perm[i]];
        }
    }
    ops_set_output(g, n, 0, x->dtype, &o);
    return true;
}

bool graph_infer_reshape(graph *g, graph_node *n, char *err, size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, 0), *st = ops_input(g, n, 1);
    int64_t v[GRAPH_MAX_RANK + 1];
    size_t count;
    char s1[200], s2[200];
    if (st->dtype != GDT_I64 || st->shape.rank != 1)
        return graph_node_error(g, n, err, err_size, "shape '%s' is not a 1-D i64 tensor", st->name);
    if (!ops_const_ints(st, v, sizeof v / sizeof v[0], &count) || count > GRAPH_MAX_RANK)
        return graph_node_unsupported(g, n, err, err_size, "target rank above %d", GRAPH_MAX_RANK);
    bool allowzero = graph_attr_int(n, "allowzero") != 0;
    graph_shape o = { .rank = (int)count };
    int infer_at = -1;
    int64_t known = 1;
    for (int i = 0; i < o.rank; i++) {
        if (v[i] == -1) {
            if (infer_at >= 0)
                return graph_node_error(g, n, err, err_size, "shape has more than one -1");
            infer_at = i;
            continue;
        }
        if (v[i] < -1)
            return graph_node_error(g, n, err, err_size, "shape has dimension %lld", (long long)v[i]);
        if (v[i] == 0 && !allowzero) {
            if (i >= x->shape.rank)
                return graph_node_error(g, n, err, err_size, "shape copies dim %d (0) beyond the input's rank %d",
                                        i, x->shape.rank);
            o.dims[i] = x->shape.dims[i];
        } else
            o.dims[i] = v[i];
        known *= o.dims[i];
    }
    int64_t total = graph_shape_numel(&x->shape);
    if (infer_at >= 0) {
        if (known == 0 || total % known)
            goto mismatch;
        o.dims[infer_at] = total / known;
    }
    if (graph_shape_numel(&o) != total)
        goto mismatch;
    ops_set_output(g, n, 0, x->dtype, &o);
    return true;
mismatch:
    for (int i = 0; i < o.rank; i++)
        if (i != infer_at)
            o.dims[i] = v[i];
        else
            o.dims[i] = -1;
    return graph_node_error(g, n, err, err_size, "cannot reshape %s (%lld elements) to %s",
                            shape_s(&x->shape, s1, sizeof s1), (long long)total, shape_s(&o, s2, sizeof s2));
}

bool graph_infer_flatten(graph *g, graph_node *n, char *err, size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, 0);
    int64_t axis = graph_attr_int(n, "axis");
    int r = x->shape.rank;
    if (axis < -r || axis > r)
        return graph_node_error(g, n, err, err_size, "axis %lld is out of range for rank %d", (long long)axis, r);
    if (axis < 0)
        axis += r;
    graph_shape o = { .rank = 2, .dims = { 1, 1 } };
    for (int i = 0; i < r; i++)
        o.dims[i < axis ? 0 : 1] *= x->shape.dims[i];
    ops_set_output(g, n, 0, x->dtype, &o);
    return true;
}

/* Axes of Squeeze/Unsqueeze: the attribute before opset 13, the input from 13. */
static bool squeeze_axes(graph *g, const graph_node *n, int64_t *axes, size_t *count, bool *given, char *err,
                         size_t err_size)
{
    const graph_tensor *ax = ops_input(g, n, 1);
    *given = true;
    if (ax) {
        if (graph_attr_find(n, "axes"))
            return graph_node_error(g, n, err, err_size, "axes given both as attribute and as input");
        if (!ops_const_ints(ax, axes, GRAPH_MAX_RANK, count))
            return graph_node_error(g, n, err, err_size, "axes '%s' must be a constant list of at most %d integers",
                                    ax->name, GRAPH_MAX_RANK);
        return true;
    }
    const int64_t *a;
    *count = graph_attr_ints(n, "axes", &a);
    *given = graph_attr_find(n, "axes") != NULL;
    if (*count > GRAPH_MAX_RANK)
        return graph_node_error(g, n, err, err_size, "too many axes");
    if (*count)
        memcpy(axes, a, *count * sizeof *a);
    return true;
}

bool graph_infer_squeeze(graph *g, graph_node *n, char *err, size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, 0);
    int64_t axes[GRAPH_MAX_RANK];
    size_t count;
    bool given, drop[GRAPH_MAX_RANK] = { 0 };
    if (!squeeze_axes(g, n, axes, &count, &given, err, err_size))
        return false;
    for (size_t i = 0; i < count; i++) {
        int a = ops_norm_axis(axes[i], x->shape.rank);
        if (a < 0)
            return graph_node_error(g, n, err, err_size, "axis %lld is out of range for rank %d", (long long)axes[i],
                                    x->shape.rank);
        if (x->shape.dims[a] != 1)
            return graph_node_error(g, n, err, err_size, "cannot squeeze axis %d of size %lld", a,
                                    (long long)x->shape.dims[a]);
        drop[a] = true;
    }
    graph_shape o = { 0 };
    for (int d = 0; d < x->shape.rank; d++)
        if (!(count ? drop[d] : x->shape.dims[d] == 1))
            o.dims[o.rank++] = x->shape.dims[d];
    ops_set_output(g, n, 0, x->dtype, &o);
    return true;
}

bool graph_infer_unsqueeze(graph *g, graph_node *n, char *err, size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, 0);
    int64_t axes[GRAPH_MAX_RANK];
    size_t count;
    bool given, add[GRAPH_MAX_RANK] = { 0 };
    if (!squeeze_axes(g, n, axes, &count, &given, err, err_size))
        return false;
    if (!given || !count)
        return graph_node_error(g, n, err, err_size, "axes are required");
    int r = x->shape.rank + (int)count;
    if (r > GRAPH_MAX_RANK)
        return graph_node_unsupported(g, n, err, err_size, "rank above %d", GRAPH_MAX_RANK);
    for (size_t i = 0; i < count; i++) {
        int a = ops_norm_axis(axes[i], r);
        if (a < 0 || add[a])
            return graph_node_error(g, n, err, err_size, "axis %lld is out of range or repeated for output rank %d",
                                    (long long)axes[i], r);
        add[a] = true;
    }
    graph_shape o = { .rank = r };
    for (int d = 0, k = 0; d < r; d++)
        o.dims[d] = add[d] ? 1 : x->shape.dims[k++];
    ops_set_output(g, n, 0, x->dtype, &o);
    return true;
}

bool graph_infer_expand(graph *g, graph_node *n, char *err, size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, 0), *st = ops_input(g, n, 1);
    int64_t v[GRAPH_MAX_RANK];
    size_t count;
    if (st->dtype != GDT_I64 || st->shape.rank != 1 || !ops_const_ints(st, v, GRAPH_MAX_RANK, &count))
        return graph_node_error(g, n, err, err_size, "shape '%s' is not a 1-D i64 tensor of at most %d values",
                                st->name, GRAPH_MAX_RANK);
    graph_shape want = { .rank = (int)count }, o;
    memcpy(want.dims, v, count * sizeof *v);
    if (!ops_broadcast(&x->shape, &want, &o)) {
        char s1[200], s2[200];
        return graph_node_error(g, n, err, err_size, "cannot expand %s to %s", shape_s(&x->shape, s1, sizeof s1),
                                shape_s(&want, s2, sizeof s2));
    }
    ops_set_output(g, n, 0, x->dtype, &o);
    return true;
}

bool graph_infer_concat(graph *g, graph_node *n, char *err, size_t err_size)
{
    const graph_tensor *x0 = ops_input(g, n, 0);
    char s1[200], s2[200];
    if (!x0)
        return graph_node_error(g, n, err, err_size, "input 0 is empty");
    int a = ops_norm_axis(graph_attr_int(n, "axis"), x0->shape.rank);
    if (a < 0)
        return graph_node_error(g, n, err, err_size, "axis %lld is out of range for rank %d",
                                (long long)graph_attr_int(n, "axis"), x0->shape.rank);
    graph_shape o = x0->shape;
    o.dims[a] = 0;
    for (int i = 0; i < n->n_inputs; i++) {
        const graph_tensor *x = ops_input(g, n, i);
        if (!x)
            return graph_node_error(g, n, err, err_size, "input %d is empty", i);
        if (!same_dtype(g, n, 0, i, err, err_size))
            return false;
        bool ok = x->shape.rank == x0->shape.rank;
        for (int d = 0; ok && d < x->shape.rank; d++)
            ok = d == a || x->shape.dims[d] == x0->shape.dims[d];
        if (!ok)
            return graph_node_error(g, n, err, err_size, "inputs %s and %s differ outside axis %d",
                                    shape_s(&x0->shape, s1, sizeof s1), shape_s(&x->shape, s2, sizeof s2), a);
        o.dims[a] += x->shape.dims[a];
    }
    ops_set_output(g, n, 0, x0->dtype, &o);
    return true;
}

bool ops_slice_init(const graph *g, const graph_node *n, ops_slice *s, char *err, size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, 0);
    int r = x->shape.rank;
    int64_t starts[GRAPH_MAX_RANK], ends[GRAPH_MAX_RANK], axes[GRAPH_MAX_RANK], steps[GRAPH_MAX_RANK];
    size_t ns, ne, na, nst;
    const char *what[] = { "", "starts", "ends", "axes", "steps" };
    int64_t *dst[] = { NULL, starts, ends, axes, steps };
    size_t *cnt[] = { NULL, &ns, &ne, &na, &nst };
    for (int i = 1; i <= 4; i++) {
        const graph_tensor *t = ops_input(g, n, i);
        if (!t) {
            *cnt[i] = (size_t)-1;
            continue;
        }
        if (t->shape.rank != 1 || !ops_const_ints(t, dst[i], GRAPH_MAX_RANK, cnt[i]))
            return graph_node_error(g, n, err, err_size, "%s '%s' is not a 1-D integer tensor of at most %d values",
                                    what[i], t->name, GRAPH_MAX_RANK);
    }
    if (ne != ns || (na != (size_t)-1 && na != ns) || (nst != (size_t)-1 && nst != ns))
        return graph_node_error(g, n, err, err_size, "starts, ends, axes and steps differ in length");
    s->out = x->shape;
    bool seen[GRAPH_MAX_RANK] = { 0 };
    for (int d = 0; d < r; d++) {
        s->start[d] = 0;
        s->step[d] = 1;
    }
    for (size_t i = 0; i < ns; i++) {
        int a = na == (size_t)-1 ? (int)i : ops_norm_axis(axes[i], r);
        if (a < 0 || a >= r || seen[a])
            return graph_node_error(g, n, err, err_size, "axis %lld is out of range or repeated",
                                    (long long)(na == (size_t)-1 ? (int64_t)i : axes[i]));
        seen[a] = true;
        int64_t dim = x->shape.dims[a], step = nst == (size_t)-1 ? 1 : steps[i];
        if (step == 0)
            return graph_node_error(g, n, err, err_size, "step is 0");
        int64_t st = starts[i], en = ends[i];
        if (st < 0)
            st += dim;
        if (en < 0)
            en += dim;
        int64_t len;
        if (step > 0) {
            st = st < 0 ? 0 : st > dim ? dim : st;
            en = en < 0 ? 0 : en > dim ? dim : en;
            len = en > st ? (en - st + step - 1) / step : 0;
        } else {
            st = st < 0 ? 0 : st > dim - 1 ? dim - 1 : st;
            en = en < -1 ? -1 : en > dim - 1 ? dim - 1 : en;
            len = st > en ? (st - en + (-step) - 1) / (-step) : 0;
        }
        s->start[a] = st;
        s->step[a] = step;
        s->out.dims[a] = len;
    }
    return true;
}

bool graph_infer_slice(graph *g, graph_node *n, char *err, size_t err_size)
{
    ops_slice s;
    if (!ops_slice_init(g, n, &s, err, err_size))
        return false;
    ops_set_output(g, n, 0, ops_input(g, n, 0)->dtype, &s.out);
    return true;
}

bool graph_infer_gather(graph *g, graph_node *n, char *err, size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, 0), *idx = ops_input(g, n, 1);
    int a = ops_norm_axis(graph_attr_int(n, "axis"), x->shape.rank);
    if (a < 0)
        return graph_node_error(g, n, err, err_size, "axis %lld is out of range for rank %d",
                                (long long)graph_attr_int(n, "axis"), x->shape.rank);
    if (idx->dtype != GDT_I64 && idx->dtype != GDT_I32)
        return graph_node_error(g, n, err, err_size, "indices '%s' are %s, not i32 or i64", idx->name,
                                graph_dtype_name(idx->dtype));
    if (x->shape.rank - 1 + idx->shape.rank > GRAPH_MAX_RANK)
        return graph_node_unsupported(g, n, err, err_size, "rank above %d", GRAPH_MAX_RANK);
    graph_shape o = { 0 };
    for (int d = 0; d < a; d++)
        o.dims[o.rank++] = x->shape.dims[d];
    for (int d = 0; d < idx->shape.rank; d++)
        o.dims[o.rank++] = idx->shape.dims[d];
    for (int d = a + 1; d < x->shape.rank; d++)
        o.dims[o.rank++] = x->shape.dims[d];
    ops_set_output(g, n, 0, x->dtype, &o);
    return true;
}

/* Shape and Size: the values follow from the input's shape, so inference
 * writes them and the node folds away whatever the input is. */
static void set_output_data(graph *g, const graph_node *n, const void *data)
{
    graph_tensor *o = &g->tensors[n->outputs[0]];
    graph_set_constant(g, n->outputs[0], o->dtype, &o->shape, data);
}

bool graph_infer_shape(graph *g, graph_node *n, char *err, size_t err_size)
{
    (void)err;
    (void)err_size;
    const graph_tensor *x = ops_input(g, n, 0);
    int64_t r = x->shape.rank, start = graph_attr_int(n, "start");
    int64_t end = graph_attr_find(n, "end") ? graph_attr_int(n, "end") : r;
    start = start < 0 ? start + r : start;
    end = end < 0 ? end + r : end;
    start = start < 0 ? 0 : start > r ? r : start;
    end = end < 0 ? 0 : end > r ? r : end;
    graph_shape o = { .rank = 1, .dims = { end > start ? end - start : 0 } };
    int64_t v[GRAPH_MAX_RANK];
    for (int64_t i = 0; i < o.dims[0]; i++)
        v[i] = x->shape.dims[start + i];
    ops_set_output(g, n, 0, GDT_I64, &o);
    set_output_data(g, n, v);
    return true;
}

bool graph_infer_size(graph *g, graph_node *n, char *err, size_t err_size)
{
    (void)err;
    (void)err_size;
    int64_t v = graph_shape_numel(&ops_input(g, n, 0)->shape);
    graph_shape o = { 0 };
    ops_set_output(g, n, 0, GDT_I64, &o);
    set_output_data(g, n, &v);
    return true;
}

bool graph_infer_constant(graph *g, graph_node *n, char *err, size_t err_size)
{
    if (n->n_attrs != 1)
        return graph_node_error(g, n, err, err_size, "needs exactly one of value, value_float, value_floats, "
                                "value_int, value_ints");
    const graph_attr *a = &n->attrs[0];
    graph_shape s = { 0 };
    graph_dtype t;
    void *data;
    float f;
    float *fs = NULL;
    if (a->type == GATTR_TENSOR) {
        s = a->tensor->shape;
        t = a->tensor->dtype;
        data = a->tensor->data;
    } else if (a->type == GATTR_FLOAT) {
        t = GDT_F32;
        f = (float)a->f;
        data = &f;
    } else if (a->type == GATTR_INT) {
        t = GDT_I64;
        data = (void *)&a->i;
    } else if (a->type == GATTR_INTS) {
        t = GDT_I64;
        s = (graph_shape){ .rank = 1, .dims = { (int64_t)a->n } };
        data = a->ints;
    } else {
        t = GDT_F32;
        s = (graph_shape){ .rank = 1, .dims = { (int64_t)a->n } };
        fs = malloc(a->n * sizeof *fs + 1);
        if (!fs)
            fatal("out of memory");
        for (size_t i = 0; i < a->n; i++)
            fs[i] = (float)a->floats[i];
        data = fs;
    }
    ops_set_output(g, n, 0, t, &s);
    set_output_data(g, n, data);
    free(fs);
    return true;
}

bool graph_infer_constant_of_shape(graph *g, graph_node *n, char *err, size_t err_size)
{
    const graph_tensor *st = ops_input(g, n, 0);
    int64_t v[GRAPH_MAX_RANK];
    size_t count;
    if (st->dtype != GDT_I64 || st->shape.rank != 1)
        return graph_node_error(g, n, err, err_size, "input '%s' is not a 1-D i64 tensor", st->name);
    if (!ops_const_ints(st, v, GRAPH_MAX_RANK, &count))
        return graph_node_unsupported(g, n, err, err_size, "rank above %d", GRAPH_MAX_RANK);
    graph_shape o = { .rank = (int)count };
    for (size_t i = 0; i < count; i++) {
        if (v[i] < 0)
            return graph_node_error(g, n, err, err_size, "shape has dimension %lld", (long long)v[i]);
        o.dims[i] = v[i];
    }
    graph_dtype t = GDT_F32;
    const graph_attr *val = graph_attr_find(n, "value");
    if (val) {
        if (graph_shape_numel(&val->tensor->shape) != 1)
            return graph_node_error(g, n, err, err_size, "value must hold one element");
        t = val->tensor->dtype;
    }
    ops_set_output(g, n, 0, t, &o);
    return true;
}

bool graph_infer_range(graph *g, graph_node *n, char *err, size_t err_size)
{
    const graph_tensor *t0 = ops_input(g, n, 0);
    double v[3];
    for (int i = 0; i < 3; i++) {
        const graph_tensor *t = ops_input(g, n, i);
        if (t->shape.rank != 0 || t->dtype != t0->dtype)
            return graph_node_error(g, n, err, err_size, "start, limit and delta must be scalars of one type");
        v[i] = graph_load_f64(t->dtype, t->data, 0);
    }
    if (v[2] == 0)
        return graph_node_error(g, n, err, err_size, "delta is 0");
    double count = ceil((v[1] - v[0]) / v[2]);
    graph_shape o = { .rank = 1, .dims = { count > 0 ? (int64_t)count : 0 } };
    ops_set_output(g, n, 0, t0->dtype, &o);
    return true;
}
