/*
 * ops_impl.h — what the op implementations share (internal to frontends/):
 * the infer and eval functions named in ops.def, and the geometry both
 * inference and evaluation compute the same way (broadcasting, axes,
 * convolution and pooling windows, slices, reductions).
 *
 * Models PopART's per-op shape inference (Op::setup) and the ONNX
 * reference semantics; nothing of Poplar's tile code.  Does not model
 * grad ops or their inference.
 */
#ifndef IPUSIM_FRONTENDS_OPS_IMPL_H
#define IPUSIM_FRONTENDS_OPS_IMPL_H

#include "graph.h"

#define OP(id, name, domain, since, min_in, max_in, min_out, max_out, static_in, attrs, infer, eval,   \
           layout_class, lowering_rule, grad_rule)                                                                \
    bool infer(graph *g, graph_node *n, char *err, size_t err_size);                              \
    bool eval(const graph *g, const graph_node *n, const void *const *in, void *const *out,      \
              char *err, size_t err_size);
#include "ops.def"
#undef OP

/* Input i of n, or NULL when it is omitted or beyond the node's inputs. */
static inline const graph_tensor *ops_input(const graph *g, const graph_node *n, int i)
{
    return i < n->n_inputs && n->inputs[i] >= 0 ? &g->tensors[n->inputs[i]] : NULL;
}

/* Output i of n, or NULL when it is omitted. */
static inline const graph_tensor *ops_output(const graph *g, const graph_node *n, int i)
{
    return i < n->n_outputs && n->outputs[i] >= 0 ? &g->tensors[n->outputs[i]] : NULL;
}

/* Output i of n (when present) becomes of type t and shape s, inferred. */
static inline void ops_set_output(graph *g, const graph_node *n, int i, graph_dtype t, const graph_shape *s)
{
    if (i >= n->n_outputs || n->outputs[i] < 0)
        return;
    graph_tensor *x = &g->tensors[n->outputs[i]];
    x->dtype = t;
    x->shape = *s;
    x->shape_known = true;
}

/* An axis in [-rank, rank) as an index in [0, rank); -1 if out of range. */
int ops_norm_axis(int64_t axis, int rank);

/* numpy broadcasting of two shapes; false if they are incompatible. */
bool ops_broadcast(const graph_shape *a, const graph_shape *b, graph_shape *out);

/* The values of a constant integer tensor (i32 or i64), at most max. */
bool ops_const_ints(const graph_tensor *t, int64_t *v, size_t max, size_t *count);

/* Convolution and pooling windows over the spatial dims of X [N, C, ...]. */
typedef struct ops_window {
    int n_spatial;
    int64_t in[GRAPH_MAX_RANK], kernel[GRAPH_MAX_RANK], stride[GRAPH_MAX_RANK],
        dilation[GRAPH_MAX_RANK], pad_begin[GRAPH_MAX_RANK], pad_end[GRAPH_MAX_RANK],
        out[GRAPH_MAX_RANK];
} ops_window;

/* From the node's auto_pad, pads, strides, dilations (pooling without
 * dilations reads 1) and the kernel extent; ceil_mode for pooling. */
bool ops_window_init(const graph *g, const graph_node *n, const graph_shape *x, const int64_t *kernel,
                     bool ceil_mode, ops_window *w, char *err, size_t err_size);

/* Slice bounds per axis of the data, after clamping (start and step for
 * every axis; axes not sliced have start 0, step 1). */
typedef struct ops_slice {
    int64_t start[GRAPH_MAX_RANK], step[GRAPH_MAX_RANK];
    graph_shape out;
} ops_slice;
bool ops_slice_init(const graph *g, const graph_node *n, ops_slice *s, char *err, size_t err_size);

/* Which axes a Reduce* node reduces (reduced[d]) and whether any. */
bool ops_reduce_axes(const graph *g, const graph_node *n, bool *reduced, char *err, size_t err_size);

/* Softmax before opset 13 and LayerNormalization work on [outer, inner]
 * views split at an axis: the normalised axis range [from, to). */
bool ops_softmax_range(const graph *g, const graph_node *n, int *from, int *to);

/* The activation of a fused epilogue. */
enum ops_activation { OPS_ACT_NONE, OPS_ACT_RELU, OPS_ACT_GELU_ERF, OPS_ACT_GELU_TANH, OPS_ACT_INVALID };
enum ops_activation ops_activation_of(const graph_node *n);
double ops_activate(enum ops_activation a, double x);

#endif
