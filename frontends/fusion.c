/*
 * fusion.c — the inference rewrites of fusion.h: BatchNormalization folded
 * into Conv, decomposed LayerNorm recognised, bias and activation moved
 * into matmul and convolution epilogues.
 */
#include "fusion.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph_eval.h"
#include "ops_impl.h"
#include "sim/base/diag.h"

/* The one node reading t, when t has exactly one reader and is not a graph
 * output (so the pattern may swallow it); else -1. */
static int sole_reader(const graph *g, int t)
{
    int k;
    if (t < 0 || g->tensors[t].is_output || graph_consumers(g, t, &k, 1) != 1)
        return -1;
    return k;
}

static bool near(double v, double want)
{
    return fabs(v - want) <= 1e-4 * fabs(want);
}

/* Node k is the binary op `op` with t as one operand: the other operand,
 * else -1. */
static int other_operand(const graph *g, int k, graph_op op, int t)
{
    if (k < 0)
        return -1;
    const graph_node *n = &g->nodes[k];
    if (n->removed || n->op != op || n->n_inputs != 2)
        return -1;
    if (n->inputs[0] == t)
        return n->inputs[1];
    if (n->inputs[1] == t)
        return n->inputs[0];
    return -1;
}

/* Node k is `op` with t as operand and a constant scalar operand near want. */
static bool op_with_scalar(const graph *g, int k, graph_op op, int t, double want)
{
    double v;
    int c = other_operand(g, k, op, t);
    /* Div and Sub are not commutative: the constant must be the divisor */
    if (op == GRAPH_OP_DIV && (k < 0 || g->nodes[k].inputs[0] != t))
        return false;
    return c >= 0 && graph_constant_scalar(g, c, &v) && near(v, want);
}

static int output0(const graph *g, int k)
{
    return g->nodes[k].outputs[0];
}

/* ---- BatchNormalization into Conv ---------------------------------------------------- */

int fusion_fold_batchnorm(graph *g)
{
    int count = 0;
    for (int k = 0; k < g->n_nodes; k++) {
        graph_node *conv = &g->nodes[k];
        if (conv->removed || conv->op != GRAPH_OP_CONV)
            continue;
        int r = sole_reader(g, output0(g, k));
        if (r < 0)
            continue;
        const graph_node *bn = &g->nodes[r];
        if (bn->op != GRAPH_OP_BATCHNORM || bn->inputs[0] != output0(g, k) || !graph_node_first_output_only(bn) ||
            (g->opset >= 14 && graph_attr_int(bn, "training_mode")))
            continue;
        int w = conv->inputs[1], b = conv->n_inputs > 2 ? conv->inputs[2] : -1;
        if (!graph_is_constant(g, w) || (b >= 0 && !graph_is_constant(g, b)))
            continue;
        bool consts = true;
        for (int i = 1; i < 5; i++)
            consts = consts && graph_is_constant(g, bn->inputs[i]);
        if (!consts)
            continue;
        graph_shape ws = g->tensors[w].shape;
        graph_dtype wt = g->tensors[w].dtype;
        int64_t m = ws.dims[0], per = graph_shape_numel(&ws) / (m ? m : 1);
        size_t es = graph_dtype_size(wt);
        void *nw = malloc((size_t)graph_shape_numel(&ws) * es + 1), *nb = malloc((size_t)m * es + 1);
        if (!nw || !nb)
            fatal("out of memory");
        double eps = graph_attr_float(bn, "epsilon");
        for (int64_t c = 0; c < m; c++) {
            const graph_tensor *sc = &g->tensors[bn->inputs[1]], *bi = &g->tensors[bn->inputs[2]],
                               *mean = &g->tensors[bn->inputs[3]], *var = &g->tensors[bn->inputs[4]];
            double s = graph_load_f64(sc->dtype, sc->data, (size_t)c) /
                       sqrt(graph_load_f64(var->dtype, var->data, (size_t)c) + eps);
            for (int64_t i = 0; i < per; i++) {
                size_t at = (size_t)(c * per + i);
                graph_store_f64(wt, nw, at, graph_load_f64(wt, g->tensors[w].data, at) * s);
            }
            double b0 = b >= 0 ? graph_load_f64(g->tensors[b].dtype, g->tensors[b].data, (size_t)c) : 0;
            graph_store_f64(wt, nb, (size_t)c,
                            (b0 - graph_load_f64(mean->dtype, mean->data, (size_t)c)) * s +
                                graph_load_f64(bi->dtype, bi->data, (size_t)c));
        }
        /* new constants: the old ones may be shared with other nodes */
        char base[300];
        snprintf(base, sizeof base, "%s_bn", g->tensors[w].name);
        int nwt = graph_add_constant(g, base, wt, &ws, nw);
        graph_shape bs = { .rank = 1, .dims = { m } };
        snprintf(base, sizeof base, "%s_bias_bn", g->tensors[w].name);
        int nbt = graph_add_constant(g, base, wt, &bs, nb);
        free(nw);
        free(nb);
        conv = &g->nodes[k];
        bn = &g->nodes[r];
        int ins[3] = { conv->inputs[0], nwt, nbt }, outs[1] = { bn->outputs[0] };
        g->nodes[r].removed = true;
        graph_replace_node(g, k, GRAPH_OP_CONV, NULL, ins, 3, outs, 1);
        count++;
    }
    graph_compact(g);
    return count;
}

/* ---- decomposed LayerNorm ------------------------------------------------------------ */

/* A keepdims ReduceMean over trailing axes [axis, rank): axis, else -1. */
static int trailing_mean(graph *g, int k)
{
    const graph_node *n = &g->nodes[k];
    bool reduced[GRAPH_MAX_RANK];
    char err[256];
    if (n->removed || n->op != GRAPH_OP_REDUCEMEAN || !graph_attr_int(n, "keepdims") ||
        !ops_reduce_axes(g, n, reduced, err, sizeof err))
        return -1;
    int rank = g->tensors[n->inputs[0]].shape.rank, axis = rank;
    while (axis > 0 && reduced[axis - 1])
        axis--;
    for (int d = 0; d < axis; d++)
        if (reduced[d])
            return -1;
    return axis < rank ? axis : -1;
}

/* A constant of the normalised shape (or one that broadcasts to it). */
static bool fits_norm(const graph *g, int t, const graph_shape *norm)
{
    graph_shape o;
    return graph_is_constant(g, t) && ops_broadcast(norm, &g->tensors[t].shape, &o) && graph_shape_equal(&o, norm) &&
           g->tensors[t].shape.rank <= norm->rank;
}

int fusion_layernorm(graph *g)
{
    int count = 0;
    for (int k = 0; k < g->n_nodes; k++) {
        int axis = trailing_mean(g, k);
        if (axis < 0)
            continue;
        int x = g->nodes[k].inputs[0], mean = output0(g, k);
        /* Sub(x, mean) */
        int sub = sole_reader(g, mean);
        if (sub < 0 || g->nodes[sub].op != GRAPH_OP_SUB || g->nodes[sub].inputs[0] != x ||
            g->nodes[sub].inputs[1] != mean)
            continue;
        int d = output0(g, sub);
        int readers[3];
        if (g->tensors[d].is_output || graph_consumers(g, d, readers, 3) != 2)
            continue;
        /* one reader squares d, the other divides it */
        int sq = -1, div = -1;
        for (int i = 0; i < 2; i++) {
            const graph_node *n = &g->nodes[readers[i]];
            if (n->op == GRAPH_OP_DIV && n->inputs[0] == d)
                div = readers[i];
            else if ((n->op == GRAPH_OP_POW && n->inputs[0] == d && op_with_scalar(g, readers[i], GRAPH_OP_POW, d, 2)) ||
                     (n->op == GRAPH_OP_MUL && n->inputs[0] == d && n->inputs[1] == d))
                sq = readers[i];
        }
        if (sq < 0 || div < 0)
            continue;
        int var_mean = sole_reader(g, output0(g, sq));
        if (var_mean < 0 || trailing_mean(g, var_mean) != axis)
            continue;
        int add = sole_reader(g, output0(g, var_mean));
        double eps;
        int eps_t = other_operand(g, add, GRAPH_OP_ADD, output0(g, var_mean));
        if (eps_t < 0 || !graph_constant_scalar(g, eps_t, &eps))
            continue;
        int sqrt_k = sole_reader(g, output0(g, add));
        if (sqrt_k < 0 || g->nodes[sqrt_k].op != GRAPH_OP_SQRT || sole_reader(g, output0(g, sqrt_k)) != div ||
            g->nodes[div].inputs[1] != output0(g, sqrt_k))
            continue;
        /* optional affine part */
        const graph_tensor *xt = &g->tensors[x];
        graph_shape norm = { .rank = xt->shape.rank - axis };
        memcpy(norm.dims, xt->shape.dims + axis, (size_t)norm.rank * sizeof(int64_t));
        int out = output0(g, div), gamma = -1, beta = -1, mul = -1, badd = -1;
        int r = sole_reader(g, out);
        int c = other_operand(g, r, GRAPH_OP_MUL, out);
        if (c >= 0 && fits_norm(g, c, &norm)) {
            mul = r;
            gamma = c;
            out = output0(g, mul);
            r = sole_reader(g, out);
            c = other_operand(g, r, GRAPH_OP_ADD, out);
            if (c >= 0 && fits_norm(g, c, &norm)) {
                badd = r;
                beta = c;
                out = output0(g, badd);
            }
        }
        if (gamma < 0) {
            /* LayerNormalization needs a scale: ones */
            size_t es = graph_dtype_size(xt->dtype), cnt = (size_t)graph_shape_numel(&norm);
            void *ones = malloc(cnt * es + 1);
            if (!ones)
                fatal("out of memory");
            for (size_t i = 0; i < cnt; i++)
                graph_store_f64(xt->dtype, ones, i, 1.0);
            gamma = graph_add_constant(g, "layernorm_scale", xt->dtype, &norm, ones);
            free(ones);
        }
        int removed[] = { sub, sq, var_mean, add, sqrt_k, div, mul, badd };
        for (size_t i = 0; i < sizeof removed / sizeof removed[0]; i++)
            if (removed[i] >= 0)
                g->nodes[removed[i]].removed = true;
        int ins[3] = { x, gamma, beta }, outs[1] = { out };
        graph_replace_node(g, k, GRAPH_OP_LAYERNORM, NULL, ins, beta >= 0 ? 3 : 2, outs, 1);
        graph_node *ln = &g->nodes[k];
        graph_clear_attrs(ln);
        graph_set_attr_int(ln, "axis", axis);
        graph_set_attr_float(ln, "epsilon", eps);
        count++;
    }
    graph_compact(g);
    return count;
}

/* ---- matmul and conv epilogues ------------------------------------------------------------ */

/* The exact GELU on x: the nodes computing x * 0.5 * (1 + erf(x / sqrt 2))
 * in the three arrangements exporters produce.  On a match: its output
 * tensor, and the nodes to remove in nodes[0..4]. */
static int match_gelu(const graph *g, int x, int nodes[5])
{
    int readers[3];
    if (x < 0 || g->tensors[x].is_output || graph_consumers(g, x, readers, 3) != 2)
        return -1;
    for (int which = 0; which < 2; which++) {
        int scale = readers[which], other = readers[1 - which];
        /* x / sqrt(2) or x * (1 / sqrt(2)) */
        if (!op_with_scalar(g, scale, GRAPH_OP_DIV, x, sqrt(2.0)) &&
            !op_with_scalar(g, scale, GRAPH_OP_MUL, x, 1 / sqrt(2.0)))
            continue;
        int erf_k = sole_reader(g, output0(g, scale));
        if (erf_k < 0 || g->nodes[erf_k].op != GRAPH_OP_ERF)
            continue;
        int add1 = sole_reader(g, output0(g, erf_k));
        if (!op_with_scalar(g, add1, GRAPH_OP_ADD, output0(g, erf_k), 1.0))
            continue;
        int e = output0(g, add1), last;
        int r = sole_reader(g, e);
        if (other_operand(g, other, GRAPH_OP_MUL, x) == e) {
            /* (x * e) * 0.5, e read there alone */
            if (r != other)
                continue;
            last = sole_reader(g, output0(g, other));
            if (!op_with_scalar(g, last, GRAPH_OP_MUL, output0(g, other), 0.5))
                continue;
        } else if (op_with_scalar(g, other, GRAPH_OP_MUL, x, 0.5) && other_operand(g, r, GRAPH_OP_MUL, e) ==
                   output0(g, other)) {
            /* (x * 0.5) * e */
            last = r;
            if (sole_reader(g, output0(g, other)) != last)
                continue;
        } else if (op_with_scalar(g, r, GRAPH_OP_MUL, e, 0.5) && other_operand(g, other, GRAPH_OP_MUL, x) ==
                   output0(g, r)) {
            /* x * (e * 0.5) */
            last = other;
            nodes[0] = scale;
            nodes[1] = erf_k;
            nodes[2] = add1;
            nodes[3] = r;
            nodes[4] = other;
            return output0(g, last);
        } else
            continue;
        nodes[0] = scale;
        nodes[1] = erf_k;
        nodes[2] = add1;
        nodes[3] = other;
        nodes[4] = last;
        return output0(g, last);
    }
    return -1;
}

int fusion_gelu(graph *g)
{
    int count = 0;
    for (int x = 0; x < g->n_tensors; x++) {
        int nodes[5];
        int out = match_gelu(g, x, nodes);
        if (out < 0)
            continue;
        int last = g->tensors[out].producer;
        for (int i = 0; i < 5; i++)
            if (nodes[i] != last)
                g->nodes[nodes[i]].removed = true;
        int ins[1] = { x }, outs[1] = { out };
        graph_replace_node(g, last, GRAPH_OP_GELU, NULL, ins, 1, outs, 1);
        graph_clear_attrs(&g->nodes[last]);
        graph_set_attr_string(&g->nodes[last], "approximate", "none");
        count++;
    }
    graph_compact(g);
    return count;
}

/* After the value t (pre-activation), an activation the epilogue can take:
 * its output tensor and kind; the nodes to remove in nodes (-1 padded). */
static int match_activation(const graph *g, int t, enum ops_activation *act, int nodes[5])
{
    for (int i = 0; i < 5; i++)
        nodes[i] = -1;
    int r = sole_reader(g, t);
    if (r >= 0 && g->nodes[r].op == GRAPH_OP_RELU) {
        nodes[0] = r;
        *act = OPS_ACT_RELU;
        return output0(g, r);
    }
    if (r >= 0 && g->nodes[r].op == GRAPH_OP_GELU) {
        nodes[0] = r;
        *act = strcmp(graph_attr_string(&g->nodes[r], "approximate"), "tanh") ? OPS_ACT_GELU_ERF : OPS_ACT_GELU_TANH;
        return output0(g, r);
    }
    int out = match_gelu(g, t, nodes);
    if (out >= 0) {
        *act = OPS_ACT_GELU_ERF;
        return out;
    }
    *act = OPS_ACT_NONE;
    return t;
}

/* A constant bias with one value per column of an output of shape out. */
static bool column_bias(const graph *g, int c, const graph_shape *out)
{
    if (!graph_is_constant(g, c) || out->rank < 1)
        return false;
    const graph_shape *s = &g->tensors[c].shape;
    if (s->rank < 1 || s->rank > out->rank || s->dims[s->rank - 1] != out->dims[out->rank - 1])
        return false;
    for (int i = 0; i < s->rank - 1; i++)
        if (s->dims[i] != 1)
            return false;
    return true;
}

static const char *activation_name(enum ops_activation a)
{
    return a == OPS_ACT_RELU ? "relu" : a == OPS_ACT_GELU_ERF ? "gelu_erf" : a == OPS_ACT_GELU_TANH ? "gelu_tanh"
                                                                                                      : "none";
}

int fusion_matmul_epilogue(graph *g, int *gelus)
{
    int count = 0;
    if (gelus)
        *gelus = 0;
    for (int k = 0; k < g->n_nodes; k++) {
        graph_node *n = &g->nodes[k];
        if (n->removed || (n->op != GRAPH_OP_MATMUL && n->op != GRAPH_OP_GEMM))
            continue;
        if (!graph_dtype_is_float(g->tensors[n->inputs[0]].dtype))
            continue;
        int bias = -1, bias_add = -1, y = output0(g, k);
        const graph_shape *ys = &g->tensors[y].shape;
        bool trans_b = false;
        if (n->op == GRAPH_OP_GEMM) {
            if (graph_attr_float(n, "alpha") != 1 || graph_attr_float(n, "beta") != 1 || graph_attr_int(n, "transA"))
                continue;
            trans_b = graph_attr_int(n, "transB") != 0;
            if (n->n_inputs > 2 && n->inputs[2] >= 0) {
                bias = n->inputs[2];
                if (!column_bias(g, bias, ys))
                    continue;
            }
        } else {
            int r = sole_reader(g, y);
            int c = other_operand(g, r, GRAPH_OP_ADD, y);
            if (c >= 0 && column_bias(g, c, ys) && graph_shape_equal(&g->tensors[output0(g, r)].shape, ys)) {
                bias = c;
                bias_add = r;
                y = output0(g, r);
            }
        }
        enum ops_activation act;
        int act_nodes[5];
        int out = match_activation(g, y, &act, act_nodes);
        if (bias < 0 && act == OPS_ACT_NONE)
            continue;           /* a plain matmul: nothing to fuse */
        if (bias_add >= 0)
            g->nodes[bias_add].removed = true;
        for (int i = 0; i < 5; i++)
            if (act_nodes[i] >= 0)
                g->nodes[act_nodes[i]].removed = true;
        n = &g->nodes[k];
        int ins[3] = { n->inputs[0], n->inputs[1], bias }, outs[1] = { out };
        graph_replace_node(g, k, GRAPH_OP_FUSED_MATMUL, NULL, ins, bias >= 0 ? 3 : 2, outs, 1);
        n = &g->nodes[k];
        graph_clear_attrs(n);
        graph_set_attr_string(n, "activation", activation_name(act));
        if (trans_b)
            graph_set_attr_int(n, "transB", 1);
        count++;
        if (gelus && act == OPS_ACT_GELU_ERF)
            (*gelus)++;
    }
    graph_compact(g);
    return count;
}

int fusion_conv_epilogue(graph *g)
{
    int count = 0;
    for (int k = 0; k < g->n_nodes; k++) {
        graph_node *n = &g->nodes[k];
        if (n->removed || n->op != GRAPH_OP_CONV)
            continue;
        int r = sole_reader(g, output0(g, k));
        if (r < 0 || g->nodes[r].op != GRAPH_OP_RELU)
            continue;
        g->nodes[r].removed = true;
        int outs[1] = { output0(g, r) };
        n = &g->nodes[k];
        graph_replace_node(g, k, GRAPH_OP_FUSED_CONV, NULL, n->inputs, n->n_inputs, outs, 1);
        graph_set_attr_string(&g->nodes[k], "activation", "relu");
        count++;
    }
    graph_compact(g);
    return count;
}

/* ---- optimizer updates as scaled adds --------------------------------------------------- */

/* t (f32, of shape like) produced by a Mul of it by a constant scalar,
 * read by node k alone and no variable's update: the Mul's node, *q its
 * other operand and *s the scalar; else -1. */
static int scaled_operand(const graph *g, int t, int k, const graph_shape *like, int *q, double *s)
{
    int m = t >= 0 ? g->tensors[t].producer : -1;
    if (m < 0 || g->nodes[m].removed || g->nodes[m].op != GRAPH_OP_MUL || g->nodes[m].n_inputs != 2 ||
        sole_reader(g, t) != k || graph_is_update(g, t) || g->tensors[t].dtype != GDT_F32)
        return -1;
    for (int side = 0; side < 2; side++) {
        int c = g->nodes[m].inputs[1 - side], o = g->nodes[m].inputs[side];
        if (graph_constant_scalar(g, c, s) && g->tensors[o].dtype == GDT_F32 &&
            graph_shape_equal(&g->tensors[o].shape, like) && !graph_constant_scalar(g, o, &(double){ 0 })) {
            *q = o;
            return m;
        }
    }
    return -1;
}

/* x made by a Cast of an f16 tensor to f32 and read by node k alone (and
 * no variable's update): that Cast's node; else -1. */
static int widened_f16(const graph *g, int x, int k)
{
    int c = g->tensors[x].producer;
    if (c < 0 || g->nodes[c].removed || g->nodes[c].op != GRAPH_OP_CAST || sole_reader(g, x) != k ||
        graph_is_update(g, x) || g->tensors[g->nodes[c].inputs[0]].dtype != GDT_F16)
        return -1;
    return c;
}

int fusion_scaled_add(graph *g)
{
    int made = 0;
    for (int k = 0; k < g->n_nodes; k++) {
        graph_node *n = &g->nodes[k];
        if (n->removed || (n->op != GRAPH_OP_ADD && n->op != GRAPH_OP_SUB) || n->n_inputs != 2 ||
            n->phase != GRAPH_PHASE_UPDATE)
            continue;
        int out = output0(g, k);
        const graph_shape *so = &g->tensors[out].shape;
        if (g->tensors[out].dtype != GDT_F32)
            continue;
        /* the scaled operand: the second (Sub: the subtrahend only), else the first of an Add */
        for (int side = 1; side >= (n->op == GRAPH_OP_ADD ? 0 : 1); side--) {
            int q, p = n->inputs[1 - side];
            double sc;
            int m = scaled_operand(g, n->inputs[side], k, so, &q, &sc);
            if (m < 0 || g->tensors[p].dtype != GDT_F32 || !graph_shape_equal(&g->tensors[p].shape, so) ||
                graph_constant_scalar(g, p, &(double){ 0 }))
                continue;
            bool sub = n->op == GRAPH_OP_SUB;
            g->nodes[m].removed = true;
            int ins[2] = { p, q };
            graph_replace_node(g, k, GRAPH_OP_SCALED_ADD, NULL, ins, 2, &out, 1);
            graph_clear_attrs(&g->nodes[k]);
            graph_set_attr_float(&g->nodes[k], "scale", sub ? -sc : sc);
            made++;
            break;
        }
    }
    /* an f16 weight's update: Cast(ScaledAdd(Cast(w16), q)) */
    for (int k = 0; k < g->n_nodes; k++) {
        graph_node *n = &g->nodes[k];
        if (n->removed || n->op != GRAPH_OP_SCALED_ADD)
            continue;
        int out = output0(g, k), c_in = widened_f16(g, n->inputs[0], k), c_out = sole_reader(g, out);
        if (c_in < 0 || c_out < 0 || graph_is_update(g, out) || g->nodes[c_out].op != GRAPH_OP_CAST ||
            g->tensors[output0(g, c_out)].dtype != GDT_F16)
            continue;
        const char *rounding = graph_attr_find(&g->nodes[c_out], "rounding")
                                   ? graph_attr_string(&g->nodes[c_out], "rounding") : "nearest";
        char keep[16];
        snprintf(keep, sizeof keep, "%s", rounding);
        int ins[2] = { g->nodes[c_in].inputs[0], n->inputs[1] }, res = output0(g, c_out);
        g->nodes[c_in].removed = true;
        g->nodes[c_out].removed = true;
        graph_replace_node(g, k, GRAPH_OP_SCALED_ADD, NULL, ins, 2, &res, 1);
        if (strcmp(keep, "nearest"))
            graph_set_attr_string(&g->nodes[k], "rounding", keep);
    }
    if (made)
        graph_compact(g);
    return made;
}

bool fusion_run_all(graph *g, fusion_stats *stats, char *err, size_t err_size)
{
    fusion_stats s = { 0 };
    s.batchnorms_folded = fusion_fold_batchnorm(g);
    s.layernorms = fusion_layernorm(g);
    s.matmul_epilogues = fusion_matmul_epilogue(g, &s.gelus);
    s.conv_epilogues = fusion_conv_epilogue(g);
    if (stats)
        *stats = s;
    return graph_infer_all(g, false, err, err_size);
}
