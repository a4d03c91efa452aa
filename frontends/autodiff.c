/*
 * autodiff.c — reverse-mode differentiation over the graph IR (autodiff.h):
 * the rule table from ops.def's gradient column, the context the rules
 * build with, and the pass that applies them in reverse topological order.
 */
#include "autodiff.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/fp16.h"
#include "sim/base/diag.h"

/* the rules ops.def names are defined in autodiff_rules.c */
#define DECLARE_GRAD(fn) bool fn(grad_ctx *c, int k, const int *dy);
#define DECLARE_GRAD_NONE
#define DECLARE_GRAD_STOP
#define OP(id, name, domain, since, min_in, max_in, min_out, max_out, static_in, attrs, infer, eval, layout, \
           lowering, grad_rule)                                                                             \
    DECLARE_##grad_rule
#include "ops.def"
#undef OP

/* An op whose outputs carry no gradient: nothing flows back. */
static bool grad_stop(grad_ctx *c, int k, const int *dy)
{
    (void)c, (void)k, (void)dy;
    return true;
}

#define GRAD(fn) fn
#define GRAD_NONE NULL
#define GRAD_STOP grad_stop
static const graph_grad_fn grad_rules[GRAPH_OP_COUNT] = {
#define OP(id, name, domain, since, min_in, max_in, min_out, max_out, static_in, attrs, infer, eval, layout, \
           lowering, grad_rule)                                                                             \
    [GRAPH_OP_##id] = grad_rule,
#include "ops.def"
#undef OP
};

struct grad_ctx {
    graph *g;
    int n_tracked;        /* tensors that existed before the backward pass */
    int *grad;            /* per tracked tensor: its gradient so far, or -1 */
    bool *wanted;         /* per tracked tensor: on a path from a wrt tensor */
    char *err;
    size_t err_size;
    bool failed;
};

graph *grad_graph(grad_ctx *c)
{
    return c->g;
}

bool grad_wanted(const grad_ctx *c, int t)
{
    return t >= 0 && t < c->n_tracked && c->wanted[t];
}

static void set_error(grad_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_error(grad_ctx *c, const char *fmt, ...)
{
    if (c->failed)
        return;
    c->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, c->err_size, fmt, ap);
    va_end(ap);
}

bool grad_fail(grad_ctx *c, int k, const char *fmt, ...)
{
    char what[400], label[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    set_error(c, "%s: %s: gradient: %s", c->g->source,
              graph_node_label(c->g, &c->g->nodes[k], label, sizeof label), what);
    return false;
}

int grad_node(grad_ctx *c, graph_op op, const int *in, int n_in, int n_out)
{
    graph *g = c->g;
    int outs[8];
    if (n_out > 8)
        panic("grad_node: %d outputs", n_out);
    for (int i = 0; i < n_out; i++) {
        char base[64];
        snprintf(base, sizeof base, "grad_%s", graph_ops[op].name);
        char *name = graph_unique_name(g, base);
        outs[i] = graph_add_tensor(g, name);
        free(name);
    }
    char nname[64];
    snprintf(nname, sizeof nname, "grad/%s_%d", graph_ops[op].name, g->n_nodes);
    return graph_add_node(g, op, nname, in, n_in, outs, n_out);
}

int grad_infer(grad_ctx *c, int k)
{
    if (c->failed)
        return -1;
    for (int i = 0; i < c->g->nodes[k].n_inputs; i++)
        if (c->g->nodes[k].inputs[i] < -1) {
            set_error(c, "%s: gradient: an operand of a backward node was not built", c->g->source);
            return -1;
        }
    char e[600];
    if (!graph_infer_node(c->g, &c->g->nodes[k], e, sizeof e)) {
        set_error(c, "%s", e);
        return -1;
    }
    return c->g->nodes[k].outputs[0];
}

int grad_op(grad_ctx *c, graph_op op, const int *in, int n_in)
{
    for (int i = 0; i < n_in; i++)
        if (in[i] < 0 && !(in[i] == -1 && i > 0)) {
            if (!c->failed)
                set_error(c, "%s: gradient: an operand of %s was not built", c->g->source, graph_ops[op].name);
            return -1;
        }
    if (c->failed)
        return -1;
    return grad_infer(c, grad_node(c, op, in, n_in, 1));
}

int grad_unary(grad_ctx *c, graph_op op, int a)
{
    return grad_op(c, op, &a, 1);
}

int grad_binary(grad_ctx *c, graph_op op, int a, int b)
{
    int in[2] = { a, b };
    return grad_op(c, op, in, 2);
}

int grad_scalar(grad_ctx *c, double v, graph_dtype dt)
{
    graph_shape s = { .rank = 0 };
    uint8_t bytes[8];
    switch (dt) {
    case GDT_F64: memcpy(bytes, &v, 8); break;
    case GDT_F16: {
        f16_t h = fp16_from_f32((float)v);
        memcpy(bytes, &h, 2);
        break;
    }
    case GDT_I64: { int64_t i = (int64_t)v; memcpy(bytes, &i, 8); break; }
    case GDT_I32: { int32_t i = (int32_t)v; memcpy(bytes, &i, 4); break; }
    default: { float f = (float)v; memcpy(bytes, &f, 4); dt = GDT_F32; break; }
    }
    return graph_add_constant(c->g, "grad_const", dt, &s, bytes);
}

int grad_ints(grad_ctx *c, const int64_t *v, int n)
{
    graph_shape s = { .rank = 1, .dims = { n } };
    return graph_add_constant(c->g, "grad_shape", GDT_I64, &s, v);
}

/* The shape functions below copy `to` first: it may be a tensor's shape,
 * and the tensors they add may move the graph's tensors. */
int grad_reshape(grad_ctx *c, int x, const graph_shape *to_shape)
{
    graph_shape copy = *to_shape;
    const graph_shape *to = &copy;
    if (x < 0)
        return -1;
    if (graph_shape_equal(&c->g->tensors[x].shape, to))
        return x;
    int in[2] = { x, grad_ints(c, to->dims, to->rank) };
    return grad_op(c, GRAPH_OP_RESHAPE, in, 2);
}

int grad_transpose(grad_ctx *c, int x, const int64_t *perm, int rank)
{
    if (x < 0)
        return -1;
    bool identity = true;
    for (int i = 0; i < rank; i++)
        identity &= perm[i] == i;
    if (identity)
        return x;
    int k = grad_node(c, GRAPH_OP_TRANSPOSE, &x, 1, 1);
    graph_set_attr_ints(&c->g->nodes[k], "perm", perm, (size_t)rank);
    return grad_infer(c, k);
}

int grad_reduce(grad_ctx *c, graph_op op, int x, const int64_t *axes, int n_axes, bool keepdims)
{
    if (x < 0)
        return -1;
    if (n_axes == 0)
        return x;
    int k;
    if (op == GRAPH_OP_REDUCESUM && c->g->opset >= 13) {
        int in[2] = { x, grad_ints(c, axes, n_axes) };
        k = grad_node(c, op, in, 2, 1);
    } else {
        k = grad_node(c, op, &x, 1, 1);
        graph_set_attr_ints(&c->g->nodes[k], "axes", axes, (size_t)n_axes);
    }
    graph_set_attr_int(&c->g->nodes[k], "keepdims", keepdims);
    return grad_infer(c, k);
}

int grad_unbroadcast(grad_ctx *c, int dx, const graph_shape *to_shape)
{
    graph_shape copy = *to_shape;
    const graph_shape *to = &copy;
    if (dx < 0)
        return -1;
    const graph_shape *from = &c->g->tensors[dx].shape;
    if (graph_shape_equal(from, to))
        return dx;
    int64_t axes[GRAPH_MAX_RANK];
    int n = 0, lead = from->rank - to->rank;
    for (int d = 0; d < from->rank; d++)
        if (d < lead || (to->dims[d - lead] == 1 && from->dims[d] != 1))
            axes[n++] = d;
    int r = grad_reduce(c, GRAPH_OP_REDUCESUM, dx, axes, n, true);
    return grad_reshape(c, r, to);
}

int grad_expand(grad_ctx *c, int x, const graph_shape *to_shape)
{
    graph_shape copy = *to_shape;
    const graph_shape *to = &copy;
    if (x < 0)
        return -1;
    if (graph_shape_equal(&c->g->tensors[x].shape, to))
        return x;
    int in[2] = { x, grad_ints(c, to->dims, to->rank) };
    return grad_op(c, GRAPH_OP_EXPAND, in, 2);
}

void grad_add(grad_ctx *c, int t, int dt)
{
    if (dt < 0 || t < 0 || t >= c->n_tracked || c->failed)
        return;
    graph *g = c->g;
    if (!graph_shape_equal(&g->tensors[dt].shape, &g->tensors[t].shape))
        dt = grad_unbroadcast(c, dt, &g->tensors[t].shape);
    if (dt >= 0 && g->tensors[dt].dtype != g->tensors[t].dtype) {
        int k = grad_node(c, GRAPH_OP_CAST, &dt, 1, 1);
        graph_set_attr_int(&g->nodes[k], "to", g->tensors[t].dtype);
        dt = grad_infer(c, k);
    }
    if (dt < 0)
        return;
    c->grad[t] = c->grad[t] < 0 ? dt : grad_binary(c, GRAPH_OP_ADD, c->grad[t], dt);
}

/* Which tensors lie on a path from a wrt tensor (forward order). */
static void mark_wanted(grad_ctx *c, const int *wrt, int n_wrt)
{
    graph *g = c->g;
    for (int i = 0; i < n_wrt; i++)
        if (wrt[i] >= 0)
            c->wanted[wrt[i]] = true;
    for (int k = 0; k < g->n_nodes; k++) {
        const graph_node *n = &g->nodes[k];
        bool any = false;
        for (int i = 0; i < n->n_inputs; i++)
            any |= n->inputs[i] >= 0 && c->wanted[n->inputs[i]] && graph_dtype_is_float(g->tensors[n->inputs[i]].dtype);
        if (!any || grad_rules[n->op] == grad_stop)
            continue;
        for (int i = 0; i < n->n_outputs; i++)
            if (n->outputs[i] >= 0 && graph_dtype_is_float(g->tensors[n->outputs[i]].dtype))
                c->wanted[n->outputs[i]] = true;
    }
}

bool autodiff_gradients(graph *g, int loss, double seed, const int *wrt, int n_wrt, int *grads, char *err,
                        size_t err_size)
{
    grad_ctx c = { .g = g, .n_tracked = g->n_tensors, .err = err, .err_size = err_size };
    c.grad = malloc((size_t)g->n_tensors * sizeof *c.grad + 1);
    c.wanted = calloc((size_t)g->n_tensors + 1, sizeof *c.wanted);
    if (!c.grad || !c.wanted)
        panic("out of host memory");
    for (int t = 0; t < g->n_tensors; t++)
        c.grad[t] = -1;
    mark_wanted(&c, wrt, n_wrt);
    int n_forward = g->n_nodes;
    enum graph_phase saved = g->phase;
    g->phase = GRAPH_PHASE_BACKWARD;
    /* each node a rule makes tagged with its forward node (graph_node.origin) */
    for (int k = 0; k < n_forward; k++)
        g->nodes[k].origin = k;
    g->origin = -1;
    if (c.wanted[loss]) {
        int s = grad_scalar(&c, seed, g->tensors[loss].dtype);
        c.grad[loss] = grad_expand(&c, s, &g->tensors[loss].shape);
    }
    int dy[16];
    for (int k = n_forward - 1; k >= 0 && !c.failed; k--) {
        const graph_node *n = &g->nodes[k];
        if (n->removed)
            continue;
        bool flows = false, needed = false;
        for (int i = 0; i < n->n_outputs && i < 16; i++) {
            dy[i] = n->outputs[i] >= 0 ? c.grad[n->outputs[i]] : -1;
            flows |= dy[i] >= 0;
        }
        for (int i = 0; i < n->n_inputs; i++)
            needed |= grad_wanted(&c, n->inputs[i]);
        if (!flows || !needed)
            continue;
        graph_grad_fn rule = grad_rules[n->op];
        g->origin = k;
        if (!rule) {
            grad_fail(&c, k, "ipusim has no gradient rule for %s (the loss depends on a weight through it)",
                      graph_ops[n->op].name);
            break;
        }
        if (!rule(&c, k, dy) && !c.failed)
            grad_fail(&c, k, "the rule failed");
    }
    g->phase = saved;
    g->origin = -1;
    for (int i = 0; i < n_wrt; i++)
        grads[i] = wrt[i] >= 0 && wrt[i] < c.n_tracked ? c.grad[wrt[i]] : -1;
    bool ok = !c.failed;
    free(c.grad);
    free(c.wanted);
    return ok;
}
