/*
 * graph_eval.c — the host reference evaluator: element access in every
 * dtype, the graph walk, and one evaluation function per op row of
 * ops.def.  The arithmetic each op uses is stated in graph_eval.h.
 */
#include "graph_eval.h"

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops_impl.h"
#include "isa/fp16.h"
#include "sim/base/diag.h"

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        fatal("out of memory (%zu bytes)", n);
    return p;
}

/* ---- element access ------------------------------------------------------------ */

float graph_bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

uint16_t graph_bf16_from_f32(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40);       /* NaN stays NaN (quiet) */
    u += 0x7fffu + ((u >> 16) & 1);                /* round to nearest even */
    return (uint16_t)(u >> 16);
}

double graph_load_f64(graph_dtype t, const void *data, size_t i)
{
    switch (t) {
    case GDT_F32: return ((const float *)data)[i];
    case GDT_F64: return ((const double *)data)[i];
    case GDT_F16: return fp16_to_f32(((const uint16_t *)data)[i]);
    case GDT_BF16: return graph_bf16_to_f32(((const uint16_t *)data)[i]);
    case GDT_U8: return ((const uint8_t *)data)[i];
    case GDT_I8: return ((const int8_t *)data)[i];
    case GDT_U16: return ((const uint16_t *)data)[i];
    case GDT_I16: return ((const int16_t *)data)[i];
    case GDT_I32: return ((const int32_t *)data)[i];
    case GDT_I64: return (double)((const int64_t *)data)[i];
    case GDT_U32: return ((const uint32_t *)data)[i];
    case GDT_U64: return (double)((const uint64_t *)data)[i];
    case GDT_BOOL: return ((const uint8_t *)data)[i] != 0;
    default: panic("load of dtype %s", graph_dtype_name(t));
    }
}

int64_t graph_load_i64(graph_dtype t, const void *data, size_t i)
{
    switch (t) {
    case GDT_U8: return ((const uint8_t *)data)[i];
    case GDT_I8: return ((const int8_t *)data)[i];
    case GDT_U16: return ((const uint16_t *)data)[i];
    case GDT_I16: return ((const int16_t *)data)[i];
    case GDT_I32: return ((const int32_t *)data)[i];
    case GDT_I64: return ((const int64_t *)data)[i];
    case GDT_U32: return ((const uint32_t *)data)[i];
    case GDT_U64: return (int64_t)((const uint64_t *)data)[i];
    case GDT_BOOL: return ((const uint8_t *)data)[i] != 0;
    default: {
        double v = graph_load_f64(t, data, i);
        if (isnan(v))
            return 0;
        if (v >= 9223372036854775807.0)
            return INT64_MAX;
        if (v <= -9223372036854775808.0)
            return INT64_MIN;
        return (int64_t)v;
    }
    }
}

/* Wrap to the width of t (two's complement), as integer arithmetic does. */
void graph_store_i64(graph_dtype t, void *data, size_t i, int64_t v)
{
    switch (t) {
    case GDT_U8: ((uint8_t *)data)[i] = (uint8_t)v; break;
    case GDT_I8: ((int8_t *)data)[i] = (int8_t)(uint8_t)v; break;
    case GDT_U16: ((uint16_t *)data)[i] = (uint16_t)v; break;
    case GDT_I16: ((int16_t *)data)[i] = (int16_t)(uint16_t)v; break;
    case GDT_I32: ((int32_t *)data)[i] = (int32_t)(uint32_t)v; break;
    case GDT_I64: ((int64_t *)data)[i] = v; break;
    case GDT_U32: ((uint32_t *)data)[i] = (uint32_t)v; break;
    case GDT_U64: ((uint64_t *)data)[i] = (uint64_t)v; break;
    case GDT_BOOL: ((uint8_t *)data)[i] = v != 0; break;
    default: graph_store_f64(t, data, i, (double)v); break;
    }
}

static double clampd(double v, double lo, double hi)
{
    return isnan(v) ? 0 : v < lo ? lo : v > hi ? hi : v;
}

/* Floats to integers truncate towards zero and saturate at the range. */
void graph_store_f64(graph_dtype t, void *data, size_t i, double v)
{
    switch (t) {
    case GDT_F32: ((float *)data)[i] = (float)v; break;
    case GDT_F64: ((double *)data)[i] = v; break;
    case GDT_F16: ((uint16_t *)data)[i] = fp16_from_f32((float)v); break;
    case GDT_BF16: ((uint16_t *)data)[i] = graph_bf16_from_f32((float)v); break;
    case GDT_U8: ((uint8_t *)data)[i] = (uint8_t)clampd(v, 0, UINT8_MAX); break;
    case GDT_I8: ((int8_t *)data)[i] = (int8_t)clampd(v, INT8_MIN, INT8_MAX); break;
    case GDT_U16: ((uint16_t *)data)[i] = (uint16_t)clampd(v, 0, UINT16_MAX); break;
    case GDT_I16: ((int16_t *)data)[i] = (int16_t)clampd(v, INT16_MIN, INT16_MAX); break;
    case GDT_I32: ((int32_t *)data)[i] = (int32_t)clampd(v, INT32_MIN, INT32_MAX); break;
    case GDT_U32: ((uint32_t *)data)[i] = (uint32_t)clampd(v, 0, UINT32_MAX); break;
    case GDT_I64:
        ((int64_t *)data)[i] = isnan(v) ? 0 : v >= 9223372036854775807.0 ? INT64_MAX
                             : v <= -9223372036854775808.0 ? INT64_MIN : (int64_t)v;
        break;
    case GDT_U64:
        ((uint64_t *)data)[i] = isnan(v) || v <= 0 ? 0 : v >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)v;
        break;
    case GDT_BOOL: ((uint8_t *)data)[i] = v != 0; break;
    default: panic("store of dtype %s", graph_dtype_name(t));
    }
}

void graph_value_free(graph_value *v)
{
    free(v->data);
    v->data = NULL;
}

/* ---- iteration over broadcast operands ---------------------------------------------- */

/* Strides (in elements) of `in` seen through the broadcast to `out`: 0
 * along dims it is broadcast in. */
static void bcast_strides(const graph_shape *out, const graph_shape *in, int64_t *str)
{
    int64_t s = 1;
    for (int d = out->rank - 1; d >= 0; d--) {
        int di = d - (out->rank - in->rank);
        if (di < 0 || in->dims[di] == 1)
            str[d] = 0;
        else
            str[d] = s;
        if (di >= 0)
            s *= in->dims[di];
    }
}

/* A walk over out's elements carrying up to 3 operand offsets. */
typedef struct nd_iter {
    int rank, n;
    int64_t dims[GRAPH_MAX_RANK], idx[GRAPH_MAX_RANK];
    int64_t str[3][GRAPH_MAX_RANK];
    size_t off[3];
} nd_iter;

static void iter_init(nd_iter *it, const graph_shape *out, int n, const graph_shape *const *ins)
{
    memset(it, 0, sizeof *it);
    it->rank = out->rank;
    it->n = n;
    memcpy(it->dims, out->dims, sizeof it->dims);
    for (int k = 0; k < n; k++)
        bcast_strides(out, ins[k], it->str[k]);
}

static inline void iter_next(nd_iter *it)
{
    for (int d = it->rank - 1; d >= 0; d--) {
        it->idx[d]++;
        for (int k = 0; k < it->n; k++)
            it->off[k] += (size_t)it->str[k][d];
        if (it->idx[d] < it->dims[d])
            return;
        for (int k = 0; k < it->n; k++)
            it->off[k] -= (size_t)(it->str[k][d] * it->dims[d]);
        it->idx[d] = 0;
    }
}

static const graph_tensor *in_t(const graph *g, const graph_node *n, int i)
{
    return ops_input(g, n, i);
}

static const graph_tensor *out_t(const graph *g, const graph_node *n, int i)
{
    return ops_output(g, n, i);
}

static size_t numel(const graph_tensor *t)
{
    return (size_t)graph_shape_numel(&t->shape);
}

static void copy_elem(void *dst, size_t di, const void *src, size_t si, size_t es)
{
    switch (es) {
    case 1: ((uint8_t *)dst)[di] = ((const uint8_t *)src)[si]; break;
    case 2: ((uint16_t *)dst)[di] = ((const uint16_t *)src)[si]; break;
    case 4: ((uint32_t *)dst)[di] = ((const uint32_t *)src)[si]; break;
    default: ((uint64_t *)dst)[di] = ((const uint64_t *)src)[si]; break;
    }
}

/* ---- Monte Carlo arithmetic ---------------------------------------------------------- */

/* Ops whose floating results are their inputs' values moved, selected or
 * converted, with no arithmetic of their own to perturb. */
static bool moves_values(const graph_node *n)
{
    graph_eval_fn f = graph_ops[n->op].eval;
    return f == graph_eval_copy || f == graph_eval_identity || f == graph_eval_transpose || f == graph_eval_slice ||
           f == graph_eval_concat || f == graph_eval_expand || f == graph_eval_gather || f == graph_eval_where ||
           f == graph_eval_cast || f == graph_eval_constant || f == graph_eval_constant_of_shape ||
           f == graph_eval_shape || f == graph_eval_size || f == graph_eval_range;
}

/* splitmix64: the k-th draw of a stream, the same whatever order the
 * elements are visited in. */
static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Each element of a floating result times 1 + d, d uniform in [-u, u]
 * (u: the unit roundoff of its type), rounded to its type again: the
 * rounding of one arithmetic result made random (Monte Carlo arithmetic,
 * Parker 1997, with the type's own precision).  Not f64, the evaluator's
 * own arithmetic. */
static void perturb(const graph_tensor *t, void *data, uint64_t stream, double u_least)
{
    double u = t->dtype == GDT_F64 ? 0 : graph_dtype_unit_roundoff(t->dtype);
    if (!u)
        return;
    u = u > u_least ? u : u_least;
    size_t n = numel(t);
    for (size_t i = 0; i < n; i++) {
        double r = (double)(mix64(stream ^ mix64(i)) >> 11) * 0x1p-53;
        graph_store_f64(t->dtype, data, i, graph_load_f64(t->dtype, data, i) * (1 + u * (2 * r - 1)));
    }
}

/* The products a matmul-like node sums for each result: K of a MatMul or
 * Gemm, C x KH x KW of a convolution, the pixels of a weight gradient
 * (0: not such a node). */
static double summed_terms(const graph *g, const graph_node *n)
{
    if (n->n_inputs < 2 || n->n_outputs < 1 || n->inputs[0] < 0 || n->inputs[1] < 0 || n->outputs[0] < 0)
        return 0;
    const graph_shape *a = &g->tensors[n->inputs[0]].shape, *b = &g->tensors[n->inputs[1]].shape;
    const graph_shape *y = &g->tensors[n->outputs[0]].shape;
    switch (n->op) {
    case GRAPH_OP_MATMUL:
    case GRAPH_OP_FUSED_MATMUL:
        return a->rank ? (double)a->dims[a->rank - 1] : 0;
    case GRAPH_OP_GEMM: {
        const graph_attr *ta = graph_attr_find(n, "transA");
        return a->rank == 2 ? (double)a->dims[ta && ta->i ? 0 : 1] : 0;
    }
    case GRAPH_OP_CONV:
    case GRAPH_OP_FUSED_CONV:
        return b->rank == 4 ? (double)(b->dims[1] * b->dims[2] * b->dims[3]) : 0;
    case GRAPH_OP_CONV_TRANSPOSE:
        return b->rank == 4 ? (double)(b->dims[0] * b->dims[2] * b->dims[3]) : 0;
    case GRAPH_OP_CONV_WEIGHT_GRAD:
        return y->rank == 4 && y->dims[0] ? (double)graph_shape_numel(b) / (double)y->dims[0] : 0;
    default:
        return 0;
    }
}

/* ---- the graph walk ------------------------------------------------------------------ */

/* Evaluate g; with advance (g itself, writable), each variable then takes
 * its update's value; with mca_seed non-zero, each op's floating results
 * are perturbed (perturb). */
static bool eval_graph(const graph *g, const graph_value *inputs, graph_value *outputs, graph *advance,
                       uint64_t mca_seed, double partials_roundoff, char *err, size_t err_size)
{
    size_t nt = (size_t)g->n_tensors;
    void **val = calloc(nt + 1, sizeof *val);
    bool *owned = calloc(nt + 1, sizeof *owned);
    int *last_use = malloc((nt + 1) * sizeof *last_use);
    if (!val || !owned || !last_use)
        fatal("out of memory");
    bool ok = true;
    char s1[200], s2[200];
    for (size_t t = 0; t < nt; t++) {
        val[t] = g->tensors[t].is_variable ? g->tensors[t].init : g->tensors[t].data;
        last_use[t] = -1;
    }
    for (int i = 0; i < g->n_inputs; i++) {
        const graph_tensor *x = &g->tensors[g->inputs[i]];
        if (inputs[i].dtype != x->dtype || !graph_shape_equal(&inputs[i].shape, &x->shape)) {
            snprintf(err, err_size, "%s: input '%s' is %s%s, expected %s%s", g->source, x->name,
                     graph_dtype_name(inputs[i].dtype), graph_shape_str(&inputs[i].shape, s1, sizeof s1),
                     graph_dtype_name(x->dtype), graph_shape_str(&x->shape, s2, sizeof s2));
            ok = false;
            goto done;
        }
        val[g->inputs[i]] = inputs[i].data;
    }
    for (int k = 0; k < g->n_nodes; k++)
        for (int i = 0; i < g->nodes[k].n_inputs; i++)
            if (g->nodes[k].inputs[i] >= 0)
                last_use[g->nodes[k].inputs[i]] = k;
    for (int i = 0; i < g->n_outputs; i++)
        last_use[g->outputs[i]] = INT_MAX;
    for (size_t t = 0; t < nt; t++)
        if (g->tensors[t].is_variable && g->tensors[t].update >= 0)
            last_use[g->tensors[t].update] = INT_MAX;
    for (int k = 0; k < g->n_nodes && ok; k++) {
        const graph_node *n = &g->nodes[k];
        if (n->removed)
            continue;
        const void *in[64] = { 0 };
        void *out[8] = { 0 };
        ALWAYS(n->n_inputs <= 64 && n->n_outputs <= 8);
        for (int i = 0; i < n->n_inputs; i++) {
            int t = n->inputs[i];
            if (t < 0)
                continue;
            if (!val[t])
                panic("tensor '%s' has no value when node %d runs", g->tensors[t].name, k);
            in[i] = val[t];
        }
        for (int i = 0; i < n->n_outputs && ok; i++) {
            const graph_tensor *o = out_t(g, n, i);
            if (!o)
                continue;
            size_t bytes = numel(o) * graph_dtype_size(o->dtype);
            out[i] = malloc(bytes ? bytes : 1);
            if (!out[i]) {
                ok = graph_node_error(g, n, err, err_size, "out of memory for output '%s' (%zu bytes)", o->name,
                                      bytes);
                break;
            }
            val[n->outputs[i]] = out[i];
            owned[n->outputs[i]] = true;
        }
        if (ok)
            ok = graph_ops[n->op].eval(g, n, in, out, err, err_size);
        if (ok && mca_seed && !moves_values(n)) {
            /* a matmul summing in f16 every 16 products: K / 16 roundings */
            double terms = partials_roundoff ? summed_terms(g, n) : 0;
            double u_least = terms > 16 ? partials_roundoff * sqrt(terms / 16) : partials_roundoff * (terms > 0);
            for (int i = 0; i < n->n_outputs; i++)
                if (out[i])
                    perturb(out_t(g, n, i), out[i], mix64(mca_seed ^ mix64(((uint64_t)k << 8) | (uint64_t)i)),
                            u_least);
        }
        for (int i = 0; i < n->n_inputs; i++) {
            int t = n->inputs[i];
            if (t >= 0 && last_use[t] == k && owned[t]) {
                free(val[t]);
                val[t] = NULL;
                owned[t] = false;
            }
        }
        /* outputs nothing reads */
        for (int i = 0; i < n->n_outputs; i++) {
            int t = n->outputs[i];
            if (t >= 0 && last_use[t] < 0 && owned[t]) {
                free(val[t]);
                val[t] = NULL;
                owned[t] = false;
            }
        }
    }
    if (ok)
        for (int i = 0; i < g->n_outputs; i++) {
            const graph_tensor *x = &g->tensors[g->outputs[i]];
            size_t bytes = numel(x) * graph_dtype_size(x->dtype);
            if (!val[g->outputs[i]])
                panic("output '%s' has no value", x->name);
            outputs[i] = (graph_value){ .dtype = x->dtype, .shape = x->shape, .data = xmalloc(bytes) };
            memcpy(outputs[i].data, val[g->outputs[i]], bytes);
        }
    if (ok && advance)
        for (size_t t = 0; t < nt; t++) {
            graph_tensor *x = &advance->tensors[t];
            if (x->is_variable && x->update >= 0)
                memcpy(x->init, val[x->update], numel(x) * graph_dtype_size(x->dtype));
        }
done:
    for (size_t t = 0; t < nt; t++)
        if (owned[t])
            free(val[t]);
    free(val);
    free(owned);
    free(last_use);
    return ok;
}

bool graph_eval(const graph *g, const graph_value *inputs, graph_value *outputs, char *err, size_t err_size)
{
    return eval_graph(g, inputs, outputs, NULL, 0, 0, err, err_size);
}

bool graph_eval_step(graph *g, const graph_value *inputs, graph_value *outputs, char *err, size_t err_size)
{
    return eval_graph(g, inputs, outputs, g, 0, 0, err, err_size);
}

bool graph_eval_step_mca(graph *g, const graph_value *inputs, uint64_t seed, double partials_roundoff,
                         graph_value *outputs, char *err, size_t err_size)
{
    ALWAYS(seed != 0);
    return eval_graph(g, inputs, outputs, g, seed, partials_roundoff, err, err_size);
}

/* ---- elementwise ------------------------------------------------------------------------ */

static double unary_f64(graph_op op, double x)
{
    switch (op) {
    case GRAPH_OP_RELU: return x < 0 ? 0 : x;
    case GRAPH_OP_SQRT: return sqrt(x);
    case GRAPH_OP_ERF: return erf(x);
    case GRAPH_OP_TANH: return tanh(x);
    case GRAPH_OP_EXP: return exp(x);
    case GRAPH_OP_LOG: return log(x);
    case GRAPH_OP_SIGMOID: return 1 / (1 + exp(-x));
    case GRAPH_OP_RECIPROCAL: return 1 / x;
    case GRAPH_OP_NEG: return -x;
    case GRAPH_OP_ABS: return fabs(x);
    case GRAPH_OP_FLOOR: return floor(x);
    case GRAPH_OP_CEIL: return ceil(x);
    case GRAPH_OP_NOT: return x == 0;
    default: panic("not a unary op: %s", graph_ops[op].name);
    }
}

/* GELU: x/2 (1 + erf(x / sqrt 2)), or with approximate=tanh x/2 (1 +
 * tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
static double gelu_f64(double x, bool tanh_form)
{
    if (tanh_form)
        return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    return 0.5 * x * (1 + erf(x / sqrt(2.0)));
}

bool graph_eval_unary(const graph *g, const graph_node *n, const void *const *in, void *const *out, char *err,
                      size_t err_size)
{
    (void)err;
    (void)err_size;
    const graph_tensor *x = in_t(g, n, 0), *y = out_t(g, n, 0);
    size_t count = numel(x);
    if (n->op == GRAPH_OP_GELU) {
        bool tanh_form = !strcmp(graph_attr_string(n, "approximate"), "tanh");
        for (size_t i = 0; i < count; i++)
            graph_store_f64(y->dtype, out[0], i, gelu_f64(graph_load_f64(x->dtype, in[0], i), tanh_form));
        return true;
    }
    bool int_path = graph_dtype_is_int(x->dtype) &&
                    (n->op == GRAPH_OP_RELU || n->op == GRAPH_OP_NEG || n->op == GRAPH_OP_ABS);
    if (int_path) {
        for (size_t i = 0; i < count; i++) {
            int64_t v = graph_load_i64(x->dtype, in[0], i);
            uint64_t u = (uint64_t)v;
            int64_t r = n->op == GRAPH_OP_RELU ? (v < 0 ? 0 : v)
                      : n->op == GRAPH_OP_NEG ? (int64_t)(0 - u)
                      : (v < 0 ? (int64_t)(0 - u) : v);
            graph_store_i64(y->dtype, out[0], i, r);
        }
    } else if (x->dtype == GDT_F32) {
        const float *a = in[0];
        float *o = out[0];
        for (size_t i = 0; i < count; i++)
            o[i] = (float)unary_f64(n->op, a[i]);
    } else {
        for (size_t i = 0; i < count; i++)
            graph_store_f64(y->dtype, out[0], i, unary_f64(n->op, graph_load_f64(x->dtype, in[0], i)));
    }
    return true;
}

bool graph_eval_identity(const graph *g, const graph_node *n, const void *const *in, void *const *out, char *err,
                         size_t err_size)
{
    (void)err;
    (void)err_size;
    const graph_tensor *x = in_t(g, n, 0);
    memcpy(out[0], in[0], numel(x) * graph_dtype_size(x->dtype));
    return true;
}

bool graph_eval_copy(const graph *g, const graph_node *n, const void *const *in, void *const *out, char *err,
                     size_t err_size)
{
    return graph_eval_identity(g, n, in, out, err, err_size);
}

/* Rounding "stochastic" (an f16 weight's update) is evaluated to nearest:
 * the training validator compares such weights with their unrounded value
 * instead (validation/validate_train.c). */
bool graph_eval_cast(const graph *g, const graph_node *n, const void *const *in, void *const *out, char *err,
                     size_t err_size)
{
    (void)err;
    (void)err_size;
    const graph_tensor *x = in_t(g, n, 0), *y = out_t(g, n, 0);
    size_t count = numel(x);
    bool exact_int = !graph_dtype_is_float(x->dtype) && !graph_dtype_is_float(y->dtype);
    for (size_t i = 0; i < count; i++) {
        if (exact_int)
            graph_store_i64(y->dtype, out[0], i, graph_load_i64(x->dtype, in[0], i));
        else
            graph_store_f64(y->dtype, out[0], i, graph_load_f64(x->dtype, in[0], i));
    }
    return true;
}

bool graph_eval_dropout(const graph *g, const graph_node *n, const void *const *in, void *const *out, char *err,
                        size_t err_size)
{
    graph_eval_identity(g, n, in, out, err, err_size);
    if (out[1])
        memset(out[1], 1, numel(out_t(g, n, 1)));
    return true;
}

static double binary_f64(graph_op op, double a, double b)
{
    switch (op) {
    case GRAPH_OP_ADD: return a + b;
    case GRAPH_OP_SUB: return a - b;
    case GRAPH_OP_MUL: return a * b;
    case GRAPH_OP_DIV: return a / b;
    case GRAPH_OP_POW: return pow(a, b);
    case GRAPH_OP_EQUAL: return a == b;
    case GRAPH_OP_LESS: return a < b;
    case GRAPH_OP_GREATER: return a > b;
    case GRAPH_OP_AND: return a != 0 && b != 0;
    case GRAPH_OP_OR: return a != 0 || b != 0;
    case GRAPH_OP_MIN: return isnan(a) || a < b ? a : b;
    case GRAPH_OP_MAX: return isnan(a) || a > b ? a : b;
    default: panic("not a binary op: %s", graph_ops[op].name);
    }
}

static int64_t ipow(int64_t base, int64_t e)
{
    if (e < 0)
        return base == 1 ? 1 : base == -1 ? (e & 1 ? -1 : 1) : 0;
    uint64_t r = 1, b = (uint64_t)base;
    while (e) {
        if (e & 1)
            r *= b;
        b *= b;
        e >>= 1;
    }
    return (int64_t)r;
}

/* Integer arithmetic wraps (done in uint64); division truncates, and by 0 gives 0. */
static int64_t binary_i64(graph_op op, int64_t a, int64_t b)
{
    switch (op) {
    case GRAPH_OP_ADD: return (int64_t)((uint64_t)a + (uint64_t)b);
    case GRAPH_OP_SUB: return (int64_t)((uint64_t)a - (uint64_t)b);
    case GRAPH_OP_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
    case GRAPH_OP_DIV: return b == 0 ? 0 : (a == INT64_MIN && b == -1) ? INT64_MIN : a / b;
    case GRAPH_OP_POW: return ipow(a, b);
    case GRAPH_OP_EQUAL: return a == b;
    case GRAPH_OP_LESS: return a < b;
    case GRAPH_OP_GREATER: return a > b;
    case GRAPH_OP_AND: return a && b;
    case GRAPH_OP_OR: return a || b;
    case GRAPH_OP_MIN: return a < b ? a : b;
    case GRAPH_OP_MAX: return a > b ? a : b;
    default: panic("not a binary op: %s", graph_ops[op].name);
    }
}

static bool is_intlike(graph_dtype t)
{
    return graph_dtype_is_int(t) || t == GDT_BOOL;
}

/* out = op(a, b) with broadcasting; a or b may alias out when its shape is out's. */
static void binary_bcast(graph_op op, graph_dtype ta, const void *a, const graph_shape *sa, graph_dtype tb,
                         const void *b, const graph_shape *sb, graph_dtype to, void *out, const graph_shape *so)
{
    size_t count = (size_t)graph_shape_numel(so);
    bool int_path = is_intlike(ta) && is_intlike(tb);
    if (ta == GDT_F32 && tb == GDT_F32 && to == GDT_F32 && graph_shape_equal(sa, so) && graph_shape_equal(sb, so)) {
        const float *x = a, *y = b;
        float *o = out;
        for (size_t i = 0; i < count; i++)
            o[i] = (float)binary_f64(op, x[i], y[i]);
        return;
    }
    nd_iter it;
    const graph_shape *shapes[2] = { sa, sb };
    iter_init(&it, so, 2, shapes);
    for (size_t i = 0; i < count; i++, iter_next(&it)) {
        if (int_path)
            graph_store_i64(to, out, i, binary_i64(op, graph_load_i64(ta, a, it.off[0]), graph_load_i64(tb, b, it.off[1])));
        else
            graph_store_f64(to, out, i, binary_f64(op, graph_load_f64(ta, a, it.off[0]), graph_load_f64(tb, b, it.off[1])));
    }
}

bool graph_eval_binary(const graph *g, const graph_node *n, const void *const *in, void *const *out, char *err,
                       size_t err_size)
{
    (void)err;
    (void)err_size;
    const graph_tensor *a = in_t(g, n, 0), *b = in_t(g, n, 1), *y = out_t(g, n, 0);
    binary_bcast(n->op, a->dtype, in[0], &a->shape, b->dtype, in[1], &b->shape, y->dtype, out[0], &y->shape);
    return true;
}

/* out = x broadcast to out's shape (element copies, any dtype). */
static void expand_to(const void *x, const graph_shape *sx, size_t es, void *out, const graph_shape *so)
{
    nd_iter it;
    const graph_shape *shapes[1] = { sx };
    iter_init(&it, so, 1, shapes);
    size_t count = (size_t)graph_shape_numel(so);
    for (size_t i = 0; i < count; i++, iter_next(&it))
        copy_elem(out, i, x, it.off[0], es);
}

bool graph_eval_variadic(const graph *g, const graph_node *n, const void *const *in, void *const *out, char *err,
                         size_t err_size)
{
    (void)err;
    (void)err_size;
    const graph_tensor *y = out_t(g, n, 0), *x0 = in_t(g, n, 0);
    expand_to(in[0], &x0->shape, graph_dtype_size(y->dtype), out[0], &y->shape);
    for (int i = 1; i < n->n_inputs; i++) {
        const graph_tensor *x = in_t(g, n, i);
        binary_bcast(n->op, y->dtype, out[0], &y->shape, x->dtype, in[i], &x->shape, y->dtype, out[0], &y->shape);
    }
    return true;
}

bool graph_eval_where(const graph *g, const graph_node *n, const void *const *in, void *const *out, char *err,
                      size_t err_size)
{
    (void)err;
    (void)err_size;
    const graph_tensor *y = out_t(g, n, 0);
    const graph_shape *shapes[3] = { &in_t(g, n, 0)->shape, &in_t(g, n, 1)->shape, &in_t(g, n, 2)->shape };
    size_t es = graph_dtype_size(y->dtype), count = numel(y);
    nd_iter it;
    iter_init(&it, &y->shape, 3, shapes);
    const uint8_t *c = in[0];
    for (size_t i = 0; i < count; i++, iter_next(&it)) {
        if (c[it.off[0]])
            copy_elem(out[0], i, in[1], it.off[1], es);
        else
            copy_elem(out[0], i, in[2], it.off[2], es);
    }
    return true;
}

/* ---- matrix products ---------------------------------------------------------------------- */

/* The dtype a product is computed in: f32 for f16/bf16/f32, f64 otherwise. */
static bool product_in_f32(graph_dtype t)
{
    return t == GDT_F32 || t == GDT_F16 || t == GDT_BF16;
}

/* Whole tensor as f32 or f64; returns data itself when it already is. */
static void *as_compute(graph_dtype t, const void *data, size_t count, bool f32, void **owned)
{
    *owned = NULL;
    if ((f32 && t == GDT_F32) || (!f32 && t == GDT_F64))
        return (void *)data;
    void *buf = xmalloc(count * (f32 ? sizeof(float) : sizeof(double)));
    for (size_t i = 0; i < count; i++) {
        double v = graph_load_f64(t, data, i);
        if (f32)
            ((float *)buf)[i] = (float)v;
        else
            ((double *)buf)[i] = v;
    }
    *owned = buf;
    return buf;
}

/* C[m x n] = op(A) op(B), row-major, in f32 or f64. */
static void gemm(bool f32, bool ta, bool tb, int64_t m, int64_t nn, int64_t k, const void *a, const void *b, void *c)
{
    if (m == 0 || nn == 0)
        return;
    if (k == 0) {
        memset(c, 0, (size_t)(m * nn) * (f32 ? sizeof(float) : sizeof(double)));
        return;
    }
    int lda = (int)(ta ? m : k), ldb = (int)(tb ? k : nn);
    if (f32)
        cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m, (int)nn,
                    (int)k, 1.0f, a, lda, b, ldb, 0.0f, c, (int)nn);
    else
        cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m, (int)nn,
                    (int)k, 1.0, a, lda, b, ldb, 0.0, c, (int)nn);
}

static double load_compute(bool f32, const void *p, size_t i)
{
    return f32 ? ((const float *)p)[i] : ((const double *)p)[i];
}

/* Batched matmul with numpy broadcasting; the product goes to acc (f32 or
 * f64, numel(out) values).  tb: B is a matrix given transposed. */
static void matmul_core(const graph_tensor *ta_, const void *a, const graph_tensor *tb_, const void *b, bool tb,
                        bool f32, void *acc)
{
    graph_shape sa = ta_->shape, sb = tb_->shape;
    if (tb) {
        sb.dims[0] = tb_->shape.dims[1];
        sb.dims[1] = tb_->shape.dims[0];
    }
    /* promote 1-D operands */
    if (sa.rank == 1) {
        sa.rank = 2;
        sa.dims[1] = sa.dims[0];
        sa.dims[0] = 1;
    }
    if (sb.rank == 1) {
        sb.rank = 2;
        sb.dims[1] = 1;
    }
    int64_t m = sa.dims[sa.rank - 2], k = sa.dims[sa.rank - 1], nn = sb.dims[sb.rank - 1];
    graph_shape ba = { .rank = sa.rank - 2 }, bb = { .rank = sb.rank - 2 }, bo;
    memcpy(ba.dims, sa.dims, (size_t)ba.rank * sizeof(int64_t));
    memcpy(bb.dims, sb.dims, (size_t)bb.rank * sizeof(int64_t));
    ALWAYS(ops_broadcast(&ba, &bb, &bo));
    void *ao, *bo_owned;
    const void *ac = as_compute(ta_->dtype, a, numel(ta_), f32, &ao);
    const void *bc = as_compute(tb_->dtype, b, numel(tb_), f32, &bo_owned);
    size_t es = f32 ? sizeof(float) : sizeof(double);
    size_t batches = (size_t)graph_shape_numel(&bo);
    nd_iter it;
    const graph_shape *shapes[2] = { &ba, &bb };
    iter_init(&it, &bo, 2, shapes);
    for (size_t i = 0; i < batches; i++, iter_next(&it))
        gemm(f32, false, tb, m, nn, k, (const char *)ac + it.off[0] * (size_t)(m * k) * es,
             (const char *)bc + it.off[1] * (size_t)(k * nn) * es, (char *)acc + i * (size_t)(m * nn) * es);
    free(ao);
    free(bo_owned);
}

bool graph_eval_matmul(const graph *g, const graph_node *n, const void *const *in, void *const *out, char *err,
                       size_t err_size)
{
    (void)err;
    (void)err_size;
    const graph_tensor *a = in_t(g, n, 0), *b = in_t(g, n, 1), *y = out_t(g, n, 0);
    bool f32 = product_in_f32(y->dtype);
    size_t count = numel(y);
    if ((f32 && y->dtype == GDT_F32) || (!f32 && y->dtype == GDT_F64)) {
        matmul_core(a, in[0], b, in[1], false, f32, out[0]);
        return true;
    }
    void *acc = xmalloc(count * (f32 ? sizeof(float) : sizeof(double)));
    matmul_core(a, in[0], b, in[1], false, f32, acc);
    for (size_t i = 0; i < count; i++)
        graph_store_f64(y->dtype, out[0], i, load_compute(f32, acc, i));
    free(acc);
    return true;
}

/* y = act(alpha * acc + beta * c) with c broadcast, rounded once to y's dtype. */
static void epilogue(const graph_tensor *y, void *out, bool f32, const void *acc, double alpha,
                     const graph_tensor *c, const void *cdata, double beta, enum ops_activation act)
{
    size_t count = numel(y);
    nd_iter it;
    const graph_shape *shapes[1] = { c ? &c->shape : &y->shape };
    iter_init(&it, &y->shape, 1, shapes);
    for (size_t i = 0; i < count; i++, iter_next(&it)) {
        double v = alpha * load_compute(f32, acc, i);
        if (c)
            v += beta * graph_load_f64(c->dtype, cdata, it.off[0]);
        graph_store_f64(y->dtype, out, i, ops_activate(act, v));
    }
}

bool graph_eval_gemm(const graph *g, const graph_node *n, const void *const *in, void *const *out, char *err,
                     size_t err_size)
{
    (void)err;
    (void)err_size;
    const graph_tensor *a = in_t(g, n, 0), *b = in_t(g, n, 1), *c = in_t(g, n, 2), *y = out_t(g, n, 0);
    bool ta = graph_attr_int(n, "transA") != 0, tb = graph_attr_int(n, "transB") != 0;
    bool f32 = product_in_f32(y->dtype);
    int64_t m = y->shape.dims[0], nn = y->shape.dims[1], k = a->shape.dims[ta ? 0 : 1];
    void *ao, *bo;
    const void *ac = as_compute(a->dtype, in[0], numel(a), f32, &ao);
    const void *bc = as_compute(b->dtype, in[1], numel(b), f32, &bo);
    void *acc = xmalloc(numel(y) * (f32 ? sizeof(float) : sizeof(double)));
    gemm(f32, ta, tb, m, nn, k, ac, bc, acc);
    epilogue(y, out[0], f32, acc, graph_attr_float(n, "alpha"), c, in[2], graph_attr_float(n, "beta"), OPS_ACT_NONE);
    free(acc);
    free(ao);
    free(bo);
    return true;
}

bool graph_eval_fused_matmul(const graph *g, const graph_node *n, const void *const *in, void *const *out,
                             char *err, size_t err_size)
{
    (void)err;
    (void)err_size;
    const graph_tensor *a = in_t(g, n, 0), *b = in_t(g, n, 1), *c = in_t(g, n, 2), *y = out_t(g, n, 0);
    bool f32 = product_in_f32(y->dtype);
    void *acc = xmalloc(numel(y) * (f32 ? sizeof(float) : sizeof(double)));
    matmul_core(a, in[0], b, in[1], graph_attr_int(n, "transB") != 0, f32, acc);
    epilogue(y, out[0], f32, acc, 1.0, c, in[2], 1.0, ops_activation_of(n));
    free(acc);
    return true;
}

/* ---- convolution ------------------------------------------------------------------------------ */

/* col[(c * K + kp) * P + p] = x[c][input position of output p, kernel
 * position kp], 0 in the padding; K kernel positions, P output positions. */
#define DEFINE_IM2COL(T, NAME)                                                                           \
    static void NAME(const T *x, int64_t channels, const ops_window *w, T *col)                         \
    {                                                                                                   \
        int ns = w->n_spatial;                                                                          \
        int64_t kk = 1, pp = 1, in_size = 1;                                                            \
        for (int d = 0; d < ns; d++) {                                                                  \
            kk *= w->kernel[d];                                                                         \
            pp *= w->out[d];                                                                            \
            in_size *= w->in[d];                                                                        \
        }                                                                                               \
        for (int64_t c = 0; c < channels; c++)                                                          \
            for (int64_t kp = 0; kp < kk; kp++) {                                                       \
                int64_t kidx[GRAPH_MAX_RANK], rem = kp;                                                 \
                for (int d = ns - 1; d >= 0; d--) {                                                     \
                    kidx[d] = rem % w->kernel[d];                                                       \
                    rem /= w->kernel[d];                                                                \
                }                                                                                       \
                T *dst = col + (size_t)((c * kk + kp) * pp);                                            \
                const T *src = x + (size_t)(c * in_size);                                               \
                int64_t oidx[GRAPH_MAX_RANK] = { 0 };                                                   \
                for (int64_t p = 0; p < pp; p++) {                                                      \
                    int64_t off = 0;                                                                    \
                    bool inside = true;                                                                 \
                    for (int d = 0; d < ns; d++) {                                                      \
                        int64_t pos = oidx[d] * w->stride[d] - w->pad_begin[d] + kidx[d] * w->dilation[d]; \
                        if (pos < 0 || pos >= w->in[d])                                                 \
                            inside = false;                                                             \
                        off = off * w->in[d] + pos;                                                     \
                    }                                                                                   \
                    dst[p] = inside ? src[off] : (T)0;                                                  \
                    for (int d = ns - 1; d >= 0; d--) {                                                 \
                        if (++oidx[d] < w->out[d])                                                      \
                            break;                                                                      \
                        oidx[d] = 0;                                                                    \
                    }                                                                                   \
                }                                                                                       \
            }                                                                                           \
    }
DEFINE_IM2COL(float, im2col_f32)
DEFINE_IM2COL(double, im2col_f64)

bool graph_eval_conv(const graph *g, const graph_node *n, const void *const *in, void *const *out, char *err,
                     size_t err_size)
{
    const graph_tensor *x = in_t(g, n, 0), *wt = in_t(g, n, 1), *b = in_t(g, n, 2), *y = out_t(g, n, 0);
    ops_window w;
    if (!ops_window_init(g, n, &x->shape, wt->shape.dims + 2, false, &w, err, err_size))
        return false;
    bool f32 = product_in_f32(y->dtype);
    size_t es = f32 ? sizeof(float) : sizeof(double);
    int64_t batch = x->shape.dims[0], c = x->shape.dims[1], m = wt->shape.dims[0];
    int64_t group = graph_attr_int(n, "group"), cg = c / group, mg = m / group;
    int64_t kk = 1, pp = 1, in_size = 1;
    for (int d = 0; d < w.n_spatial; d++) {
        kk *= w.kernel[d];
        pp *= w.out[d];
        in_size *= w.in[d];
    }
    void *xo, *wo;
    const char *xc = as_compute(x->dtype, in[0], numel(x), f32, &xo);
    const char *wc = as_compute(wt->dtype, in[1], numel(wt), f32, &wo);
    void *col = xmalloc((size_t)(cg * kk * pp) * es);
    void *acc = xmalloc(numel(y) * es);
    for (int64_t bi = 0; bi < batch; bi++)
        for (int64_t gi = 0; gi < group; gi++) {
            const char *xs = xc + (size_t)((bi * c + gi * cg) * in_size) * es;
            if (f32)
                im2col_f32((const float *)xs, cg, &w, col);
            else
                im2col_f64((const double *)xs, cg, &w, col);
            gemm(f32, false, false, mg, pp, cg * kk, wc + (size_t)(gi * mg * cg * kk) * es, col,
                 (char *)acc + (size_t)((bi * m + gi * mg) * pp) * es);
        }
    enum ops_activation act = n->op == GRAPH_OP_FUSED_CONV ? ops_activation_of(n) : OPS_ACT_NONE;
    size_t count = numel(y);
    for (size_t i = 0; i < count; i++) {
        double v = load_compute(f32, acc, i);
        if (b)
            v += graph_load_f64(b->dtype, in[2], (i / (size_t)pp) % (size_t)m);
        graph_store_f64(y->dtype, out[0], i, ops_activate(act, v));
    }
    free(col);
    free(acc);
    free(xo);
    free(wo);
    return true;
}

/* ---- normalisation ------------------------------------------------------------------------------ */

bool graph_eval_batchnorm(const graph *g, const graph_node *n, const void *const *in, void *const *out, char *err,
                          size_t err_size)
{
    (void)err;
    (void)err_size;
    const graph_tensor *x = in_t(g, n, 0), *y = out_t(g, n, 0);
    int64_t batch = x->shape.dims[0], c = x->shape.dims[1], sp = 1;
    for (int d = 2; d < x->shape.rank; d++)
        sp *= x->shape.dims[d];
    double eps = graph_attr_float(n, "epsilon");
    bool training = g->opset >= 14 && graph_attr_int(n, "training_mode");
    double momentum = graph_attr_float(n, "momentum");
    for (int64_t ch = 0; ch < c; ch++) {
        double scale = graph_load_f64(in_t(g, n, 1)->dtype, in[1], (size_t)ch);
        double bias = graph_load_f64(in_t(g, n, 2)->dtype, in[2], (size_t)ch);
        double mean = graph_load_f64(in_t(g, n, 3)->dtype, in[3], (size_t)ch);
        double var = graph_load_f64(in_t(g, n, 4)->dtype, in[4], (size_t)ch);
        if (training) {
            /* batch statistics (population variance), and the running
             * statistics updated with them */
            double sum = 0, sq = 0, cnt = (double)(batch * sp);
            for (int64_t bi = 0; bi < batch; bi++)
                for (int64_t s = 0; s < sp; s++)
                    sum += graph_load_f64(x->dtype, in[0], (size_t)((bi * c + ch) * sp + s));
            double bm = sum / cnt;
            for (int64_t bi = 0; bi < batch; bi++)
                for (int64_t s = 0; s < sp; s++) {
                    double d = graph_load_f64(x->dtype, in[0], (size_t)((bi * c + ch) * sp + s)) - bm;
                    sq += d * d;
                }
            double bv = sq / cnt;
            if (out[1])
                graph_store_f64(out_t(g, n, 1)->dtype, out[1], (size_t)ch, mean * momentum + bm * (1 - momentum));
            if (out[2])
                graph_store_f64(out_t(g, n, 2)->dtype, out[2], (size_t)ch, var * momentum + bv * (1 - momentum));
            mean = bm;
            var = bv;
        }
        double inv = 1 / sqrt(var + eps);
        for (int64_t bi = 0; bi < batch; bi++)
            for (int64_t s = 0; s < sp; s++) {
                size_t i = (size_t)((bi * c + ch) * sp + s);
                graph_store_f64(y->dtype, out[0], i, (graph_load_f64(x->dtype, in[0], i) - mean) * inv * scale + bias);
            }
    }
    return true;
}

/* The values of input i broadcast to shape s, as f64 (NULL if omitted). */
static double *expand_f64(const graph_tensor *t, const void *data, const graph_shape *s)
{
    if (!t)
        return NULL;
    size_t count = (size_t)graph_shape_numel(s);
    double *v = xmalloc(count * sizeof *v);
    nd_iter it;
    const graph_shape *shapes[1] = { &t->shape };
    iter_init(&it, s, 1, shapes);
    for (size_t i = 0; i < count; i++, iter_next(&it))
        v[i] = graph_load_f64(t->dtype, data, it.off[0]);
    return v;
}

bool graph_eval_layernorm(const graph *g, const graph_node *n, const void *const *in, void *const *out, char *err,
                          size_t err_size)
{
    (void)err;
    (void)err_size;
    const graph_tensor *x = in_t(g, n, 0), *y = out_t(g, n, 0);
    int from, to;
    ALWAYS(ops_softmax_range(g, n, &from, &to));
    graph_shape norm = { .rank = to - from };
    memcpy(norm.dims, x->shape.dims + from, (size_t)norm.rank * sizeof(int64_t));
    size_t inner = (size_t)graph_shape_numel(&norm), outer = inner ? numel(x) / inner : 0;
    double *scale = expand_f64(in_t(g, n, 1), in[1], &norm), *bias = expand_f64(in_t(g, n, 2), in[2], &norm);
    double eps = graph_attr_float(n, "epsilon");
    for (size_t o = 0; o < outer; o++) {
        double sum = 0, sq = 0;
        for (size_t i = 0; i < inner; i++)
            sum += graph_load_f64(x->dtype, in[0], o * inner + i);
        double mean = sum / (double)inner;
        for (size_t i = 0; i < inner; i++) {
            double d = graph_load_f64(x->dtype, in[0], o * inner + i) - mean;
            sq += d * d;
        }
        double inv = 1 / sqrt(sq / (double)inner + eps);
        for (size_t i = 0; i < inner; i++) {
            double v = (graph_load_f64(x->dtype, in[0], o * inner + i) - mean) * inv * scale[i];
            graph_store_f64(y->dtype, out[0], o * inner + i, bias ? v + bias[i] : v);
        }
        if (out[1])
            graph_store_f64(out_t(g, n, 1)->dtype, out[1], o, mean);
        if (out[2])
            graph_store_f64(out_t(g, n, 2)->dtype, out[2], o, inv);
    }
    free(scale);
    free(bias);
    return true;
}

/* Clip: x limited to [min, max] where they are given (integers exactly). */
bool graph_eval_clip(const graph *g, const graph_node *n, const void *const *in, void *const *out, char *err,
                     size_t err_size)
{
    (void)err;
    (void)err_size;
    const graph_tensor *x = in_t(g, n, 0), *y = out_t(g, n, 0);
    const graph_tensor *lo = in_t(g, n, 1), *hi = in_t(g, n, 2);
    if (graph_dtype_is_int(x->dtype)) {
        int64_t a = lo ? graph_load_i64(lo->dtype, in[1], 0) : INT64_MIN;
        int64_t b = hi ? graph_load_i64(hi->dtype, in[2], 0) : INT64_MAX;
        for (size_t i = 0; i < numel(x); i++) {
            int64_t v = graph_load_i64(x->dtype, in[0], i);
            v = v < a ? a : v;
            graph_store_i64(y->dtype, out[0], i, v > b ? b : v);     /* min > max: max */
        }
        return true;
    }
    double a = lo ? graph_load_f64(lo->dtype, in[1], 0) : -INFINITY;
    double b = hi ? graph_load_f64(hi->dtype, in[2], 0) : INFINITY;
    for (size_t i = 0; i < numel(x); i++) {
        double v = graph_load_f64(x->dtype, in[0], i);
        v = v < a ? a : v;
        graph_store_f64(y->dtype, out[0], i, v > b ? b : v);         /* NaN stays NaN; min > max: max */
    }
    return true;
}

bool graph_eval_softmax(const graph *g, const graph_node *n, const void *const *in, void *const *out, char *err,
                        size_t err_size)
{
    (void)err;
    (void)err_size;
    const graph_tensor *x = in_t(g, n, 0), *y = out_t(g, n, 0);
    int from, to;
    ALWAYS(ops_softmax_range(g, n, &from, &to));
    size_t outer = 1, len = 1, inner = 1;
    for (int d = 0; d < x->shape.rank; d++)
        *(d < from ? &outer : d < to ? &len : &inner) *= (size_t)x->shape.dims[d];
    bool log_softmax = n->op == GRAPH_OP_LOGSOFTMAX;
    double *row = xmalloc(len * sizeof *row);
    for (size_t o = 0; o < outer; o++)
        for (size_t i = 0; i < inner; i++) {
            double mx = -INFINITY, sum = 0;
            for (size_t k = 0; k < len; k++) {
                row[k] = graph_load_f64(x->dtype, in[0], (o * len + k) * inner + i);
                mx = row[k] > mx ? row[k] : mx;
            }
            for (size_t k = 0; k < len; k++) {
                row[k] -= mx;
                sum += exp(row[k]);
            }
            /* log softmax = (x - max) - log(sum exp(x - max)) */
            for (size_t k = 0; k < len; k++)
                graph_store_f64(y->dtype, out[0], (o * len + k) * inner + i,
                                log_softmax ? row[k] - log(sum) : exp(row[k]) / sum);
        }
    free(row);
    return true;
}

/* ---- pooling ------------------------------------------------------------------------------------ */

bool graph_eval_pool(const graph *g, const graph_node *n, const void *const *in, void *const *out, char *err,
                     size_t err_size)
{
    const graph_tensor *x = in_t(g, n, 0), *y = out_t(g, n, 0);
    const int64_t *k;
    graph_attr_ints(n, "kernel_shape", &k);
    ops_window w;
    if (!ops_window_init(g, n, &x->shape, k, graph_attr_int(n, "ceil_mode") != 0, &w, err, err_size))
        return false;
    bool is_max = n->op == GRAPH_OP_MAXPOOL;
    bool include_pad = !is_max && graph_attr_int(n, "count_include_pad");
    bool col_major = is_max && graph_attr_int(n, "storage_order") == 1;
    int ns = w.n_spatial;
    int64_t planes = x->shape.dims[0] * x->shape.dims[1], in_size = 1, out_size = 1, kk = 1;
    for (int d = 0; d < ns; d++) {
        in_size *= w.in[d];
        out_size *= w.out[d];
        kk *= w.kernel[d];
    }
    for (int64_t pl = 0; pl < planes; pl++) {
        int64_t oidx[GRAPH_MAX_RANK] = { 0 };
        for (int64_t p = 0; p < out_size; p++) {
            double best = -INFINITY, sum = 0;
            int64_t best_at = -1, count = 0;
            for (int64_t kp = 0; kp < kk; kp++) {
                int64_t rem = kp, off = 0, off_cm = 0, mul = 1;
                bool inside = true, in_padded = true;
                int64_t pos[GRAPH_MAX_RANK];
                for (int d = ns - 1; d >= 0; d--) {
                    int64_t kd = rem % w.kernel[d];
                    rem /= w.kernel[d];
                    pos[d] = oidx[d] * w.stride[d] - w.pad_begin[d] + kd * w.dilation[d];
                    if (pos[d] < 0 || pos[d] >= w.in[d])
                        inside = false;
                    if (pos[d] < -w.pad_begin[d] || pos[d] >= w.in[d] + w.pad_end[d])
                        in_padded = false;
                }
                if (!inside) {
                    count += include_pad && in_padded;
                    continue;
                }
                for (int d = 0; d < ns; d++)
                    off = off * w.in[d] + pos[d];
                for (int d = 0; d < ns; d++) {          /* column-major index for storage_order 1 */
                    off_cm += pos[d] * mul;
                    mul *= w.in[d];
                }
                double v = graph_load_f64(x->dtype, in[0], (size_t)(pl * in_size + off));
                if (best_at < 0 || v > best) {
                    best = v;
                    best_at = col_major ? off_cm : off;
                }
                sum += v;
                count++;
            }
            size_t oi = (size_t)(pl * out_size + p);
            if (is_max) {
                graph_store_f64(y->dtype, out[0], oi, best);
                if (out[1])
                    ((int64_t *)out[1])[oi] = pl * in_size + best_at;
            } else
                graph_store_f64(y->dtype, out[0], oi, count ? sum / (double)count : 0);
            for (int d = ns - 1; d >= 0; d--) {
                if (++oidx[d] < w.out[d])
                    break;
                oidx[d] = 0;
            }
        }
    }
    return true;
}

bool graph_eval_global_pool(const graph *g, const graph_node *n, const void *const *in, void *const *out,
                            char *err, size_t err_size)
{
    (void)err;
    (void)err_size;
    const graph_tensor *x = in_t(g, n, 0), *y = out_t(g, n, 0);
    size_t planes = numel(y), sp = planes ? numel(x) / planes : 0;
    for (size_t p = 0; p < planes; p++) {
        double sum = 0;
        for (size_t s = 0; s < sp; s++)
            sum += graph_load_f64(x->dtype, in[0], p * sp + s);
        graph_store_f64(y->dtype, out[0], p, sum / (double)sp);
    }
    return true;
}

/* ---- reductions ----------------------------------------------------------------------------------- */

bool graph_eval_reduce(const graph *g, const graph_node *n, const void *const *in, void *const *out, char *err,
                       size_t err_size)
{
    const graph_tensor *x = in_t(g, n, 0), *y = out_t(g, n, 0);
    bool reduced[GRAPH_MAX_RANK];
    if (!ops_reduce_axes(g, n, reduced, err, err_size))
        return false;
    int r = x->shape.rank;
    int64_t stride[GRAPH_MAX_RANK], s = 1;
    for (int d = r - 1; d >= 0; d--) {
        stride[d] = s;
        s *= x->shape.dims[d];
    }
    /* kept dims walk the output, reduced dims the window of each output */
    int kept[GRAPH_MAX_RANK], red[GRAPH_MAX_RANK], nk = 0, nr = 0;
    int64_t window = 1;
    for (int d = 0; d < r; d++) {
        if (reduced[d]) {
            red[nr++] = d;
            window *= x->shape.dims[d];
        } else
            kept[nk++] = d;
    }
    size_t count = numel(y);
    int64_t kidx[GRAPH_MAX_RANK] = { 0 };
    for (size_t o = 0; o < count; o++) {
        int64_t base = 0;
        for (int i = 0; i < nk; i++)
            base += kidx[i] * stride[kept[i]];
        double acc = 0, mx = -INFINITY;
        if (n->op == GRAPH_OP_REDUCEPROD)
            acc = 1;
        else if (n->op == GRAPH_OP_REDUCEMAX)
            acc = -INFINITY;
        else if (n->op == GRAPH_OP_REDUCEMIN)
            acc = INFINITY;
        if (n->op == GRAPH_OP_REDUCELOGSUMEXP) {
            /* subtract the max first so exp cannot overflow */
            int64_t ridx[GRAPH_MAX_RANK] = { 0 };
            for (int64_t e = 0; e < window; e++) {
                int64_t off = base;
                for (int i = 0; i < nr; i++)
                    off += ridx[i] * stride[red[i]];
                double v = graph_load_f64(x->dtype, in[0], (size_t)off);
                mx = v > mx ? v : mx;
                for (int i = nr - 1; i >= 0; i--) {
                    if (++ridx[i] < x->shape.dims[red[i]])
                        break;
                    ridx[i] = 0;
                }
            }
            if (!isfinite(mx))
                mx = 0;
        }
        int64_t ridx[GRAPH_MAX_RANK] = { 0 };
        for (int64_t e = 0; e < window; e++) {
            int64_t off = base;
            for (int i = 0; i < nr; i++)
                off += ridx[i] * stride[red[i]];
            double v = graph_load_f64(x->dtype, in[0], (size_t)off);
            switch (n->op) {
            case GRAPH_OP_REDUCEPROD: acc *= v; break;
            case GRAPH_OP_REDUCEMAX: acc = v > acc || isnan(v) ? v : acc; break;
            case GRAPH_OP_REDUCEMIN: acc = v < acc || isnan(v) ? v : acc; break;
            case GRAPH_OP_REDUCESUMSQUARE: case GRAPH_OP_REDUCEL2: acc += v * v; break;
            case GRAPH_OP_REDUCEL1: acc += fabs(v); break;
            case GRAPH_OP_REDUCELOGSUMEXP: acc += exp(v - mx); break;
            default: acc += v; break;
            }
            for (int i = nr - 1; i >= 0; i--) {
                if (++ridx[i] < x->shape.dims[red[i]])
                    break;
                ridx[i] = 0;
            }
        }
        switch (n->op) {
        case GRAPH_OP_REDUCEMEAN: acc /= (double)window; break;
        case GRAPH_OP_REDUCEL2: acc = sqrt(acc); break;
        case GRAPH_OP_REDUCELOGSUM: acc = log(acc); break;
        case GRAPH_OP_REDUCELOGSUMEXP: acc = log(acc) + mx; break;
        default: break;
        }
        graph_store_f64(y->dtype, out[0], o, acc);
        for (int i = nk - 1; i >= 0; i--) {
            if (++kidx[i] < x->shape.dims[kept[i]])
                break;
            kidx[i] = 0;
        }
    }
    return true;
}

/* ---- data movement ------------------------------------------------------------------------------------ */

bool graph_eval_transpose(const graph *g, const graph_node *n, const void *const *in, void *const *out, char *err,
                          size_t err_size)
{
    (void)err;
    (void)err_size;
    const graph_tensor *x = in_t(g, n, 0), *y = out_t(g, n, 0);
    int r = x->shape.rank;
    int64_t perm[GRAPH_MAX_RANK], in_stride[GRAPH_MAX_RANK], s = 1;
    const int64_t *p;
    if (graph_attr_ints(n, "perm", &p))
        memcpy(perm, p, (size_t)r * sizeof *p);
    else
        for (int i = 0; i < r; i++)
            perm[i] = r - 1 - i;
    for (int d = r - 1; d >= 0; d--) {
        in_stride[d] = s;
        s *= x->shape.dims[d];
    }
    /* walk the output; its dim i steps the input's dim perm[i] */
    nd_iter it;
    memset(&it, 0, sizeof it);
    it.rank = r;
    it.n = 1;
    memcpy(it.dims, y->shape.dims, sizeof it.dims);
    for (int i = 0; i < r; i++)
        it.str[0][i] = in_stride[perm[i]];
    size_t es = graph_dtype_size(x->dtype), count = numel(y);
    for (size_t i = 0; i < count; i++, iter_next(&it))
        copy_elem(out[0], i, in[0], it.off[0], es);
    return true;
}

bool graph_eval_expand(const graph *g, const graph_node *n, const void *const *in, void *const *out, char *err,
                       size_t err_size)
{
    (void)err;
    (void)err_size;
    const graph_tensor *x = in_t(g, n, 0), *y = out_t(g, n, 0);
    expand_to(in[0], &x->shape, graph_dtype_size(x->dtype), out[0], &y->shape);
    return true;
}

bool graph_eval_concat(const graph *g, const graph_node *n, const void *const *in, void *const *out, char *err,
                       size_t err_size)
{
    (void)err;
    (void)err_size;
    const graph_tensor *y = out_t(g, n, 0);
    int a = ops_norm_axis(graph_attr_int(n, "axis"), y->shape.rank);
    size_t es = graph_dtype_size(y->dtype), outer = 1, inner = es;
    for (int d = 0; d < a; d++)
        outer *= (size_t)y->shape.dims[d];
    for (int d = a + 1; d < y->shape.rank; d++)
        inner *= (size_t)y->shape.dims[d];
    size_t row = (size_t)y->shape.dims[a] * inner, at = 0;
    for (int i = 0; i < n->n_inputs; i++) {
        size_t chunk = (size_t)in_t(g, n, i)->shape.dims[a] * inner;
        for (size_t o = 0; o < outer; o++)
            memcpy((char *)out[0] + o * row + at, (const char *)in[i] + o * chunk, chunk);
        at += chunk;
    }
    return true;
}

bool graph_eval_slice(const graph *g, const graph_node *n, const void *const *in, void *const *out, char *err,
                      size_t err_size)
{
    const graph_tensor *x = in_t(g, n, 0), *y = out_t(g, n, 0);
    ops_slice s;
    if (!ops_slice_init(g, n, &s, err, err_size))
        return false;
    int r = x->shape.rank;
    int64_t stride[GRAPH_MAX_RANK], st = 1, base = 0;
    for (int d = r - 1; d >= 0; d--) {
        stride[d] = st;
        st *= x->shape.dims[d];
    }
    nd_iter it;
    memset(&it, 0, sizeof it);
    it.rank = r;
    it.n = 1;
    memcpy(it.dims, y->shape.dims, sizeof it.dims);
    for (int d = 0; d < r; d++) {
        it.str[0][d] = s.step[d] * stride[d];
        base += s.start[d] * stride[d];
    }
    it.off[0] = (size_t)base;
    size_t es = graph_dtype_size(x->dtype), count = numel(y);
    for (size_t i = 0; i < count; i++, iter_next(&it))
        copy_elem(out[0], i, in[0], it.off[0], es);
    return true;
}

bool graph_eval_gather(const graph *g, const graph_node *n, const void *const *in, void *const *out, char *err,
                       size_t err_size)
{
    const graph_tensor *x = in_t(g, n, 0), *idx = in_t(g, n, 1);
    int a = ops_norm_axis(graph_attr_int(n, "axis"), x->shape.rank);
    size_t es = graph_dtype_size(x->dtype), outer = 1, inner = es;
    for (int d = 0; d < a; d++)
        outer *= (size_t)x->shape.dims[d];
    for (int d = a + 1; d < x->shape.rank; d++)
        inner *= (size_t)x->shape.dims[d];
    int64_t len = x->shape.dims[a];
    size_t ni = numel(idx);
    for (size_t j = 0; j < ni; j++) {
        int64_t k = graph_load_i64(idx->dtype, in[1], j);
        if (k < -len || k >= len)
            return graph_node_error(g, n, err, err_size, "index %lld is out of range for axis %d of size %lld",
                                    (long long)k, a, (long long)len);
    }
    for (size_t o = 0; o < outer; o++)
        for (size_t j = 0; j < ni; j++) {
            int64_t k = graph_load_i64(idx->dtype, in[1], j);
            if (k < 0)
                k += len;
            memcpy((char *)out[0] + (o * ni + j) * inner, (const char *)in[0] + (o * (size_t)len + (size_t)k) * inner,
                   inner);
        }
    return true;
}

bool graph_eval_shape(const graph *g, const graph_node *n, const void *const *in, void *const *out, char *err,
                      size_t err_size)
{
    (void)in;
    (void)err;
    (void)err_size;
    /* inference computed the values */
    const graph_tensor *y = out_t(g, n, 0);
    memcpy(out[0], y->data, numel(y) * sizeof(int64_t));
    return true;
}

bool graph_eval_size(const graph *g, const graph_node *n, const void *const *in, void *const *out, char *err,
                     size_t err_size)
{
    return graph_eval_shape(g, n, in, out, err, err_size);
}

bool graph_eval_constant(const graph *g, const graph_node *n, const void *const *in, void *const *out, char *err,
                         size_t err_size)
{
    return graph_eval_shape(g, n, in, out, err, err_size);
}

bool graph_eval_constant_of_shape(const graph *g, const graph_node *n, const void *const *in, void *const *out,
                                  char *err, size_t err_size)
{
    (void)in;
    (void)err;
    (void)err_size;
    const graph_tensor *y = out_t(g, n, 0);
    const graph_attr *v = graph_attr_find(n, "value");
    size_t es = graph_dtype_size(y->dtype), count = numel(y);
    if (!v) {
        memset(out[0], 0, count * es);
        return true;
    }
    for (size_t i = 0; i < count; i++)
        copy_elem(out[0], i, v->tensor->data, 0, es);
    return true;
}

bool graph_eval_range(const graph *g, const graph_node *n, const void *const *in, void *const *out, char *err,
                      size_t err_size)
{
    (void)err;
    (void)err_size;
    const graph_tensor *y = out_t(g, n, 0);
    size_t count = numel(y);
    if (graph_dtype_is_int(y->dtype)) {
        int64_t start = graph_load_i64(y->dtype, in[0], 0), delta = graph_load_i64(y->dtype, in[2], 0);
        for (size_t i = 0; i < count; i++)
            graph_store_i64(y->dtype, out[0], i, start + (int64_t)i * delta);
    } else {
        double start = graph_load_f64(y->dtype, in[0], 0), delta = graph_load_f64(y->dtype, in[2], 0);
        for (size_t i = 0; i < count; i++)
            graph_store_f64(y->dtype, out[0], i, start + (double)i * delta);
    }
    return true;
}
