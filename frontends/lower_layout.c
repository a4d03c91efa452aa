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
 * Besides the images themselves, an element-wise op may take a per-channel
 * operand ([C, 1, 1] or [1, C, 1, 1], BatchNormalization's statistics and
 * affine terms): in the stored order it is a row of C broadcast over the
 * pixels.  Two more kinds of op take part: an Expand of [N, C, 1, 1] (or
 * per-channel values) to a whole image writes it channels-last when its
 * readers take that (GlobalAveragePool's gradient), and a ReduceSum,
 * ReduceMean, ReduceSumSquare, ReduceMax or ReduceMin over N and the
 * spatial axes reads an image channels-last (per-channel statistics: in
 * the stored order a reduction over the rows of an [N H W, C] matrix,
 * lw_lower_reduce), its result [C] or [1, C, 1, 1] being the same in
 * either order.
 * A convolution or pool whose image or result is not in the set is not
 * lowered (lw_channels_last_ok says why); an image of 1 x 1 pixels is
 * taken in any order.
 *
 * A weight gradient (ConvWeightGrad) is computed as [Cout, KH, KW, C], the
 * order of a convolution's result; when its readers take ONNX order only
 * (the optimizer's update of a weight kept in ONNX order) it is turned
 * into [Cout, C, KH, KW] after it is computed, a transpose of each output
 * channel's KH KW x C block on the tile (lw_weight_grad_to_onnx_order).
 *
 * Which op does what is its layout class in ops.def (enum lw_layout,
 * lower_ops.h): LAYOUT_CHANNELS_LAST, LAYOUT_ELEMENTWISE (and _FIRST, over
 * input 0 alone), LAYOUT_PAIRWISE (output k as input k), LAYOUT_BARRIER for
 * every other op.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower_ops.h"
#include "ops_impl.h"

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

/* Ops whose output k keeps input k's order. */
static bool pairwise_op(graph_op op)
{
    return lw_op_rules[op].layout == LAYOUT_PAIRWISE;
}

/* Element-wise ops the lowering runs in any order of the elements (their
 * layout class in ops.def). */
static bool elementwise_op(graph_op op)
{
    return lw_op_rules[op].layout == LAYOUT_ELEMENTWISE || lw_op_rules[op].layout == LAYOUT_ELEMENTWISE_FIRST;
}

/* Shape s, against a rank-4 image shape `img`, is one value per channel:
 * [C, 1, 1] or [1, C, 1, 1] with C > 1. */
bool lw_per_channel(const graph_shape *s, const graph_shape *img)
{
    if (img->rank != 4 || img->dims[1] < 2 || s->rank < 3 || s->rank > 4)
        return false;
    int c_axis = s->rank - 3;
    for (int d = 0; d < s->rank; d++)
        if (s->dims[d] != (d == c_axis ? img->dims[1] : 1))
            return false;
    return true;
}

/* A reduction that reads a rank-4 image channels-last: f32, over N, H and
 * W (not C), of a form the column reduction folds in two stages. */
bool lw_reduce_reads_nhwc(const graph *g, const graph_node *n)
{
    if (n->op != GRAPH_OP_REDUCESUM && n->op != GRAPH_OP_REDUCEMEAN && n->op != GRAPH_OP_REDUCESUMSQUARE &&
        n->op != GRAPH_OP_REDUCEMAX && n->op != GRAPH_OP_REDUCEMIN)
        return false;
    const graph_tensor *x = &g->tensors[n->inputs[0]];
    if (x->shape.rank != 4 || x->dtype != GDT_F32)
        return false;
    bool reduced[GRAPH_MAX_RANK] = { false };
    char err[256];
    if (!ops_reduce_axes(g, n, reduced, err, sizeof err))
        return false;
    return reduced[0] && !reduced[1] && reduced[2] && reduced[3];
}

/* An Expand of [N, C, 1, 1] or of per-channel values to a whole rank-4
 * image, which it can write channels-last. */
static bool expand_to_image(const graph *g, const graph_node *n)
{
    if (n->op != GRAPH_OP_EXPAND || n->outputs[0] < 0)
        return false;
    const graph_shape *si = &g->tensors[n->inputs[0]].shape, *so = &g->tensors[n->outputs[0]].shape;
    if (so->rank != 4 || (so->dims[2] == 1 && so->dims[3] == 1))
        return false;
    bool pixel = si->rank == 4 && si->dims[2] == 1 && si->dims[3] == 1 && si->dims[1] == so->dims[1] &&
                 (si->dims[0] == so->dims[0] || si->dims[0] == 1);
    return pixel || lw_per_channel(si, so);
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
        else if (graph_shape_numel(&g->tensors[t].shape) != 1 &&
                 !(n->n_inputs == 2 && lw_per_channel(&g->tensors[t].shape, so)))
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
        if (writes_nhwc(g, n) || elementwise_of(g, n, in) || expand_to_image(g, n))
            in[n->outputs[0]] = true;
        for (int k = 0; pairwise_op(n->op) && k < n->n_outputs; k++)
            if (n->inputs[k] >= 0 && n->outputs[k] >= 0 && in[n->inputs[k]])
                in[n->outputs[k]] = true;
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
                bool ok = (ok_reader && (elementwise_op(n->op) || image_input(n->op, k))) ||
                          (k == 0 && lw_reduce_reads_nhwc(g, n));
                /* A 1 x 1 pool reads the image as any pool does; a
                 * convolution reads its weights in either order. */
                if (lw_channels_last_op(n->op) && image_input(n->op, k) && !writes_nhwc(g, n))
                    ok = true;
                if (weight_input(n->op, k))
                    ok = true;
                if (pairwise_op(n->op))
                    ok = k < n->n_outputs && n->outputs[k] >= 0 && in[n->outputs[k]];
                if (!ok) {
                    in[t] = false;
                    changed = true;
                }
            }
            /* A pairwise result whose input left the set leaves too. */
            for (int k = 0; pairwise_op(n->op) && k < n->n_outputs; k++)
                if (n->outputs[k] >= 0 && in[n->outputs[k]] && !in[n->inputs[k]]) {
                    in[n->outputs[k]] = false;
                    changed = true;
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
    } else if (writes_nhwc(g, n) && !in[n->outputs[0]] && n->op != GRAPH_OP_CONV_WEIGHT_GRAD) {
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

bool lw_weight_grad_to_onnx_order(lowering *lw, const graph_node *n, int index)
{
    const graph *g = lw->g;
    int t = n->outputs[0];
    ltensor *lt = &lw->tensor[t];
    const graph_shape *s = &g->tensors[t].shape;
    bool *in = lw_nhwc_set(g);
    if (!in)
        return lw_fail(lw, "out of host memory");
    bool keep = in[t] || !lt->permuted;
    free(in);
    if (keep)
        return true;
    if (lt->element_bytes != 4 || s->rank != 4 || s->dims[1] > (int64_t)KERNEL_TRANSPOSE_MAX_COLS)
        return lw_unsupported(lw, n, index, "a weight gradient read in ONNX order that is not f32");
    uint64_t taps = (uint64_t)(s->dims[2] * s->dims[3]), c = (uint64_t)s->dims[1], row = taps * c;
    uint64_t rows = (uint64_t)s->dims[0];
    char what[96];
    snprintf(what, sizeof what, "tensor '%s'", g->tensors[t].name);
    /* The new pieces, whole output channels, placed aside from the old ones. */
    lw_sort_pieces(lw, t);
    piece *old = lt->p;
    size_t old_n = lt->n, old_cap = lt->cap;
    lt->p = NULL;
    lt->n = lt->cap = 0;
    uint32_t tiles = lw_plan_tiles(lw, rows * row, row, 2.0, 300);
    bool placed = lw_place_linear(lw, t, row, tiles, what);
    piece *fresh = lt->p;
    size_t fresh_n = lt->n;
    lt->p = old;
    lt->n = old_n;
    lt->cap = old_cap;
    uint32_t *src = calloc(fresh_n + 1, sizeof *src);
    if (!src) {
        free(fresh);
        return lw_fail(lw, "out of host memory");
    }
    /* Each new piece's channels as computed ([KH KW, C] each) onto its tile. */
    for (size_t k = 0; placed && k < fresh_n && !lw->failed; k++)
        src[k] = lw_fetch(lw, t, fresh[k].first, fresh[k].count, fresh[k].tile, PREFER_REGION1);
    if (!lw->failed)
        lw_end_phase(lw);
    free(lt->p);
    lt->p = fresh;
    lt->n = lt->cap = fresh_n;
    lt->permuted = false;
    /* A record transposes one channel: round j, worker w its share's j-th. */
    for (size_t k = 0; placed && k < fresh_n && !lw->failed; k++) {
        uint64_t channels = fresh[k].count / row;
        for (uint64_t j = 0; j * CODELET_WORKERS < channels && !lw->failed; j++) {
            worker_set ws;
            if (!lw_workers_begin(lw, fresh[k].tile, KERNEL_TRANSPOSE_WORDS, channels, &ws))
                break;
            for (int w = 0; w < CODELET_WORKERS; w++) {
                uint64_t r = ws.lo[w] + j;
                uint32_t off = (uint32_t)((r < ws.hi[w] ? r : 0) * row * 4);
                kernel_transpose_record(ws.rec[w], src[k] + off, fresh[k].addr + off, r < ws.hi[w] ? (uint32_t)taps : 0,
                                        (uint32_t)c, (uint32_t)c * 4, (uint32_t)taps * 4);
            }
            lw_workers_run(lw, fresh[k].tile, lw->kernels.vtx_transpose_f32, &ws);
        }
    }
    free(src);
    return !lw->failed;
}

void lw_keep_channels_last(ltensor *t, bool permuted)
{
    t->permuted = permuted;
    t->perm[0] = 0;
    t->perm[1] = 2;
    t->perm[2] = 3;
    t->perm[3] = 1;
}
