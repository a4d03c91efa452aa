/*
 * lower_layout.c — which images are kept channels-last.
 *
 * Convolutions and pools read and write images channels-last (NHWC: the C
 * channels of a pixel together, what im2col by the exchange and the pool
 * codelets want), while ONNX speaks NCHW.  A tensor so kept is stored in
 * the order of its axes (0, 2, 3, 1) (ltensor.perm; the tensor map tells
 * the host, sim/program/tensor_map.h).  The set of such tensors:
 *   - starts from the outputs of convolutions and pools (a pool whose
 *     output is 1 x 1 pixels is the same in either order: not counted),
 *     the images that graph inputs give to convolutions and pools, and
 *     grows through element-wise ops (Relu, Add of a residual, ...) whose
 *     inputs are all in it or single values, since element-wise arithmetic
 *     does not care about the order as long as every operand has it;
 *   - and from the variables of rank 4 with more than one kernel tap
 *     (KH x KW): convolution weights and the optimizer's state of them,
 *     kept as [Cout, KH, KW, C], the K order (kh, kw, c) of the
 *     convolution's matmul per output channel, as poplin::createWeights
 *     lays weights out for the convolution — with the same perm as an
 *     image, the order ConvWeightGrad writes dW in, so the update
 *     w - lr dW pairs its elements in stored order;
 *   - then loses every tensor one of whose readers cannot take the order
 *     (a Reshape, a MatMul, an element-wise op with an operand that is not
 *     kept so), repeatedly, until what is left is consistent; a variable
 *     and its update (the value it takes at the end of a step, copied in
 *     stored order) are kept so both or neither.
 * A convolution or pool whose image or result is not in the set is not
 * lowered (lw_channels_last_ok says why); an image of 1 x 1 pixels is
 * taken in any order.
 *
 * Which op does what is its layout class in ops.def (enum lw_layout,
 * lower_ops.h): LAYOUT_CHANNELS_LAST, LAYOUT_ELEMENTWISE (and _FIRST, over
 * input 0 alone), LAYOUT_BARRIER for every other op.
 */
#include <stdlib.h>
#include <string.h>

#include "lower_ops.h"

bool lw_channels_last_op(graph_op op)
{
    return lw_op_rules[op].layout == LAYOUT_CHANNELS_LAST;
}

/* Whether input k of a channels-last op is an image it reads channels-last:
 * input 0, and the dY (input 1) of ConvWeightGrad and MaxPoolGrad as well. */
static bool image_input(graph_op op, int k)
{
    return k == 0 || ((op == GRAPH_OP_CONV_WEIGHT_GRAD || op == GRAPH_OP_MAXPOOLGRAD) && k == 1);
}

/* Whether input k of node n is a convolution's weights, which it reads in
 * either order (lower_matmul.c). */
static bool weight_input(graph_op op, int k)
{
    return k == 1 && (op == GRAPH_OP_CONV || op == GRAPH_OP_FUSED_CONV || op == GRAPH_OP_CONV_TRANSPOSE);
}

/* A variable kept as [Cout, KH, KW, C] when its readers allow. */
static bool weight_variable(const graph_tensor *t)
{
    return t->is_variable && t->shape.rank == 4 && t->shape.dims[2] * t->shape.dims[3] != 1;
}

/* Element-wise ops the lowering runs in any order of the elements (their
 * layout class in ops.def). */
static bool elementwise_op(graph_op op)
{
    return lw_op_rules[op].layout == LAYOUT_ELEMENTWISE || lw_op_rules[op].layout == LAYOUT_ELEMENTWISE_FIRST;
}

/* A pool or convolution that writes its result channels-last. */
static bool writes_nhwc(const graph *g, const graph_node *n)
{
    if (!lw_channels_last_op(n->op) || n->outputs[0] < 0)
        return false;
    const graph_shape *s = &g->tensors[n->outputs[0]].shape;
    return s->rank == 4 && !(s->dims[2] == 1 && s->dims[3] == 1);
}

/* Element-wise node n with every operand in the set or a single value,
 * and at least one in it. */
static bool elementwise_of(const graph *g, const graph_node *n, const bool *in_set)
{
    if (!elementwise_op(n->op) || n->outputs[0] < 0)
        return false;
    const graph_shape *so = &g->tensors[n->outputs[0]].shape;
    bool any = false;
    for (int k = 0; k < n->n_inputs; k++) {
        int t = n->inputs[k];
        if (t < 0 || (lw_op_rules[n->op].layout == LAYOUT_ELEMENTWISE_FIRST && k > 0))
            continue;
        if (in_set[t] && graph_shape_equal(&g->tensors[t].shape, so))
            any = true;
        else if (graph_shape_numel(&g->tensors[t].shape) != 1)
            return false;
    }
    return any;
}

bool *lw_nhwc_set(const graph *g)
{
    bool *in = calloc((size_t)g->n_tensors + 1, sizeof *in);
    if (!in)
        return NULL;
    /* Grow: results of convolutions and pools, images of graph inputs, and
     * element-wise ops over them (nodes are in topological order). */
    for (int i = 0; i < g->n_nodes; i++) {
        const graph_node *n = &g->nodes[i];
        for (int k = 0; lw_channels_last_op(n->op) && k < n->n_inputs; k++) {
            int x = n->inputs[k];
            if (image_input(n->op, k) && x >= 0 && g->tensors[x].is_input && g->tensors[x].shape.rank == 4)
                in[x] = true;
        }
    }
    for (int t = 0; t < g->n_tensors; t++)
        if (weight_variable(&g->tensors[t]))
            in[t] = true;
    for (int i = 0; i < g->n_nodes; i++) {
        const graph_node *n = &g->nodes[i];
        if (writes_nhwc(g, n) || elementwise_of(g, n, in))
            in[n->outputs[0]] = true;
    }
    /* Shrink: drop a tensor one of whose readers cannot take the order. */
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = 0; i < g->n_nodes; i++) {
            const graph_node *n = &g->nodes[i];
            bool ok_reader = (lw_channels_last_op(n->op) && writes_nhwc(g, n)) ||
                             (elementwise_of(g, n, in) && in[n->outputs[0]]);
            for (int k = 0; k < n->n_inputs; k++) {
                int t = n->inputs[k];
                if (t < 0 || !in[t])
                    continue;
                bool ok = ok_reader && (elementwise_op(n->op) || image_input(n->op, k));
                /* A 1 x 1 pool reads the image as any pool does; a
                 * convolution reads its weights in either order. */
                if (lw_channels_last_op(n->op) && image_input(n->op, k) && !writes_nhwc(g, n))
                    ok = true;
                if (weight_input(n->op, k))
                    ok = true;
                if (!ok) {
                    in[t] = false;
                    changed = true;
                }
            }
            /* An element-wise result whose operands left the set leaves too. */
            if (elementwise_op(n->op) && n->outputs[0] >= 0 && in[n->outputs[0]] && !elementwise_of(g, n, in)) {
                in[n->outputs[0]] = false;
                changed = true;
            }
        }
        /* A variable takes its update's value in stored order. */
        for (int t = 0; t < g->n_tensors; t++) {
            int u = g->tensors[t].update;
            if (g->tensors[t].is_variable && u >= 0 && u != t && in[t] != in[u]) {
                in[t] = in[u] = false;
                changed = true;
            }
        }
    }
    return in;
}

bool lw_channels_last_ok(const graph *g, const graph_node *n, const char **why)
{
    bool *in = lw_nhwc_set(g);
    if (!in) {
        *why = "out of host memory";
        return false;
    }
    bool ok = true;
    const graph_shape *xs = &g->tensors[n->inputs[0]].shape;
    bool one_pixel = xs->rank == 4 && xs->dims[2] == 1 && xs->dims[3] == 1;   /* the same in either order */
    if (!in[n->inputs[0]] && !one_pixel) {
        *why = "the image must be kept channels-last: a graph input, or made by convolutions, pools and "
               "element-wise ops over them, and read only by such ops";
        ok = false;
    } else if (writes_nhwc(g, n) && !in[n->outputs[0]]) {
        *why = "the result is kept channels-last, so it may only be read by convolutions, pools and element-wise "
               "ops (or be a graph output)";
        ok = false;
    }
    free(in);
    return ok;
}

bool lw_weights_channels_last(const graph *g, int tensor)
{
    const graph_shape *s = &g->tensors[tensor].shape;
    if (g->tensors[tensor].data || s->rank != 4 || s->dims[2] * s->dims[3] == 1)
        return false;
    bool *in = lw_nhwc_set(g);
    bool ok = in && in[tensor];
    free(in);
    return ok;
}

bool lw_conv_input_layout(const graph *g, int tensor)
{
    if (!g->tensors[tensor].is_input)
        return false;
    bool *in = lw_nhwc_set(g);
    bool ok = in && in[tensor];
    free(in);
    return ok;
}
