/*
 * lower_ops.c — the lowering's op table: per op of ops.def its layout
 * class and its lowering (the function lowering a node, the check deciding
 * whether a node can be lowered, whether its output is its input's
 * storage, the codelet function of an element-wise op), and the small
 * lowerings that choose between the forms of one op.
 *
 * The lowering column of ops.def is one of:
 *   LOWER(fn, supports)             fn lowers the node; supports (or NULL)
 *                                   decides whether it can be
 *   LOWER_ALIAS(fn, supports, alias) the same, and alias says when the
 *                                   output is the input's storage
 *   LOWER_ALL_OUTPUTS(fn, supports) the same, lowering every output (not
 *                                   only the first)
 *   LOWER_VIEW                      the output is the input's pieces
 *   LOWER_UNARY(f), LOWER_BINARY(f) element-wise with the codelet function
 *                                   f of workloads/codelets/elementwise.h
 *   LOWER_FOLDED                    always folded to a constant: no code
 *   LOWER_NONE                      no lowering yet
 */
#include <string.h>

#include "lower_ops.h"
#include "workloads/codelets/elementwise.h"

/* Pow by a constant with a cheaper exact form (lw_pow_form): x * x, a
 * copy, or a unary codelet. */
static bool lower_pow(lowering *lw, const graph_node *n, int index)
{
    switch (lw_pow_form(lw->g, n)) {
    case -2: return lw_lower_binary_fn(lw, n, index, ELEMENTWISE_MUL, n->inputs[0], n->inputs[0]);
    case -3: return lw_lower_view(lw, n, index);
    case KERNEL_UNARY_SQRT: return lw_lower_unary_fn(lw, n, index, ELEMENTWISE_SQRT);
    case KERNEL_UNARY_RSQRT: return lw_lower_unary_fn(lw, n, index, ELEMENTWISE_RSQRT);
    case KERNEL_UNARY_RECIPROCAL: return lw_lower_unary_fn(lw, n, index, ELEMENTWISE_RECIPROCAL);
    default: return lw_unsupported(lw, n, index, "no lowering for this op yet");
    }
}

/* Pow by 1: the output is the base. */
static bool pow_is_copy(const graph *g, const graph_node *n)
{
    return lw_pow_form(g, n) == -3;
}

/* Pow reaches the lowering in its direct forms; decompose.h rewrites the
 * other f32 ones into Exp, Log and Mul, which needs an f32 exponent (a
 * constant of another dtype is converted there, a run-time one would need
 * a Cast the tile does not have). */
static bool pow_supported(const graph *g, const graph_node *n, const char **why)
{
    graph_dtype base = g->tensors[n->inputs[0]].dtype, exponent = g->tensors[n->inputs[1]].dtype;
    if (lower_pow_is_direct(g, n))
        return true;
    if (base != GDT_F32)
        *why = "only f32 bases are lowered";
    else if (graph_dtype_is_int(exponent) && !g->tensors[n->inputs[1]].data)
        *why = "a run-time exponent must be f32 (casts from integers to f32 are not lowered)";
    else if (exponent != GDT_F32 && !g->tensors[n->inputs[1]].data)
        *why = "a run-time exponent must be f32";
    else
        *why = "only constant exponents 2, 1, 0.5, -1 and -0.5 are lowered directly (decompose the others first)";
    return false;
}

/* Gelu: the element-wise codelet of its form. */
static bool lower_gelu(lowering *lw, const graph_node *n, int index)
{
    bool tanh_form = !strcmp(graph_attr_string(n, "approximate"), "tanh");
    return lw_lower_unary_fn(lw, n, index, tanh_form ? ELEMENTWISE_GELU_TANH : ELEMENTWISE_GELU_ERF);
}

static bool gelu_supported(const graph *g, const graph_node *n, const char **why)
{
    (void)g;
    const char *form = graph_attr_string(n, "approximate");
    if (strcmp(form, "none") && strcmp(form, "tanh")) {
        *why = "approximate is 'none' or 'tanh'";
        return false;
    }
    return true;
}

/* A Transpose folded into the MatMuls reading it: never made. */
static bool transpose_is_folded(const graph *g, const graph_node *n)
{
    return lw_transpose_into_matmul(g, n->outputs[0]);
}

/* Transpose: nothing when folded into its MatMuls, else moved in runs. */
static bool lower_transpose(lowering *lw, const graph_node *n, int index)
{
    if (transpose_is_folded(lw->g, n)) {
        lw->rep->folded_transposes++;
        return true;                  /* read transposed by the MatMul that uses it */
    }
    return lw_lower_runs(lw, n, index);
}

/* Gather: indices known at run time only (lower_gather.c), or constant
 * indices moved in runs. */
static bool lower_gather(lowering *lw, const graph_node *n, int index)
{
    if (!lw->g->tensors[n->inputs[1]].data)
        return lw_lower_gather(lw, n, index);
    return lw_lower_runs(lw, n, index);
}

/* Add, Sub, Mul, Div, Max, Min: f32 on vtx_binary_f32, integers with the
 * logic codelets (lower_logic.c). */
static bool lower_arith(lowering *lw, const graph_node *n, int index)
{
    if (lw_logic_handles(lw->g, n))
        return lw_lower_logic(lw, n, index);
    return lw_lower_binary(lw, n, index);
}

static bool arith_supported(const graph *g, const graph_node *n, const char **why)
{
    if (lw_logic_handles(g, n))
        return lw_logic_supported(g, n, why);
    if (n->n_inputs != 2) {
        *why = "only two inputs are supported";
        return false;
    }
    return true;
}

/* Clip and LogSoftmax reach the lowering only when decompose.h left them:
 * a dtype it does not rewrite. */
static bool left_by_decompose(const graph *g, const graph_node *n, const char **why)
{
    *why = graph_dtype_is_int(g->tensors[n->inputs[0]].dtype)
               ? "integer arithmetic is supported on i32 only (the tile is 32-bit)"
               : "only f32 is supported";
    return false;
}

/* A Constant is data placed where it is read, never code. */
static bool constant_is_data(const graph *g, const graph_node *n, const char **why)
{
    (void)g, (void)n, (void)why;
    return true;
}

#define LOWER(fn, ok) .lower = fn, .supports = ok
#define LOWER_ALIAS(fn, ok, alias) .lower = fn, .supports = ok, .aliases = alias
#define LOWER_ALL_OUTPUTS(fn, ok) .lower = fn, .supports = ok, .all_outputs = true
#define LOWER_VIEW .lower = lw_lower_view, .view = true
#define LOWER_UNARY(f) .lower = lw_lower_unary, .function = f
#define LOWER_BINARY(f) .lower = lower_arith, .supports = arith_supported, .function = f
#define LOWER_FOLDED .supports = constant_is_data
#define LOWER_NONE .lower = NULL

const lw_op_rule lw_op_rules[GRAPH_OP_COUNT] = {
#define OP(id, name, domain, since, min_in, max_in, min_out, max_out, static_in, attrs, infer, eval, \
           layout_class, lowering_rule, grad_rule)                                                              \
    [GRAPH_OP_##id] = { .layout = layout_class, lowering_rule },
#include "ops.def"
#undef OP
};
