/*
 * ops_grad_pool.c — inference and host evaluation of the gradients of
 * pools and lookups, the internal ops the reverse-mode passes create:
 *
 *   MaxPoolGrad(X, dY) -> dX   (ipusim domain; MaxPool's attributes)
 *       dX has X's shape and dtype, zeros except where a window's
 *       gradient lands: each output position's dY goes to the first
 *       maximum of its window (row-major order within the window, the
 *       rule of PyTorch and of ONNX MaxPool's Indices output), and the
 *       values of overlapping windows that land on one input position are
 *       summed.  A window whose first position is a NaN, or whose values
 *       are all NaN, gives its dY to the first NaN (as MaxPool's Indices).
 *   GatherGrad(dY, indices[, initial]) -> dTable   (ipusim domain; axis, shape)
 *       the gradient of Gather(table, indices, axis) with respect to the
 *       table, of the `shape` attribute: zeros (or `initial`, the table's
 *       shape and dY's dtype: a gradient the table has from elsewhere)
 *       with dY's slices added at their indices (a scatter-add, PopLibs'
 *       multiUpdateAdd); repeated indices accumulate; negative indices
 *       count from the end of the axis, as Gather's.
 *
 * Arithmetic: f64 sums, one rounding to the dtype (graph_eval.h), so an
 * evaluation does not depend on the order of the windows or indices.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph_eval.h"
#include "ops_impl.h"

/* ---- MaxPoolGrad --------------------------------------------------------------- */

/* The forward pool's window over X (kernel_shape, pads, strides...). */
static bool pool_window_of(const graph *g, const graph_node *n, const graph_shape *x, ops_window *w, char *err,
                           size_t err_size)
{
    const int64_t *k;
    size_t nk = graph_attr_ints(n, "kernel_shape", &k);
    if (x->rank < 3)
        return graph_node_error(g, n, err, err_size, "X needs rank 3 or more ([N,C,spatial...])");
    if (nk != (size_t)x->rank - 2)
        return graph_node_error(g, n, err, err_size, "kernel_shape has %zu values for %d spatial dims", nk,
                                x->rank - 2);
    for (size_t i = 0; i < nk; i++)
        if (k[i] < 1)
            return graph_node_error(g, n, err, err_size, "kernel_shape has value %lld", (long long)k[i]);
    return ops_window_init(g, n, x, k, graph_attr_int(n, "ceil_mode") != 0, w, err, err_size);
}

bool graph_infer_maxpool_grad(graph *g, graph_node *n, char *err, size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, 0), *dy = ops_input(g, n, 1);
    if (!graph_dtype_is_float(x->dtype) || dy->dtype != x->dtype)
        return graph_node_error(g, n, err, err_size, "X '%s' (%s) and dY '%s' (%s) must be of one float dtype",
                                x->name, graph_dtype_name(x->dtype), dy->name, graph_dtype_name(dy->dtype));
    ops_window w;
    if (!pool_window_of(g, n, &x->shape, &w, err, err_size))
        return false;
    graph_shape want = x->shape;
    for (int i = 0; i < w.n_spatial; i++)
        want.dims[2 + i] = w.out[i];
    if (!graph_shape_equal(&want, &dy->shape)) {
        char a[200], b[200];
        return graph_node_error(g, n, err, err_size, "dY is %s; the pool of X %s gives %s",
                                graph_shape_str(&dy->shape, a, sizeof a), graph_shape_str(&x->shape, b, sizeof b),
                                graph_shape_str(&want, a, sizeof a));
    }
    ops_set_output(g, n, 0, x->dtype, &x->shape);
    return true;
}

/* The offset in its plane of the first maximum of the window of output
 * position `oidx` (the rule of graph_eval_pool's Indices); -1 when the
 * window has no position inside X. */
static int64_t first_max(const ops_window *w, graph_dtype t, const void *x, int64_t plane_at, const int64_t *oidx)
{
    int ns = w->n_spatial;
    int64_t kk = 1;
    for (int d = 0; d < ns; d++)
        kk *= w->kernel[d];
    double best = -INFINITY;
    int64_t best_at = -1;
    for (int64_t kp = 0; kp < kk; kp++) {
        int64_t rem = kp, off = 0, pos[GRAPH_MAX_RANK];
        bool inside = true;
        for (int d = ns - 1; d >= 0; d--) {
            int64_t kd = rem % w->kernel[d];
            rem /= w->kernel[d];
            pos[d] = oidx[d] * w->stride[d] - w->pad_begin[d] + kd * w->dilation[d];
            if (pos[d] < 0 || pos[d] >= w->in[d])
                inside = false;
        }
        if (!inside)
            continue;
        for (int d = 0; d < ns; d++)
            off = off * w->in[d] + pos[d];
        double v = graph_load_f64(t, x, (size_t)(plane_at + off));
        if (best_at < 0 || v > best) {
            best = v;
            best_at = off;
        }
    }
    return best_at;
}

bool graph_eval_maxpool_grad(const graph *g, const graph_node *n, const void *const *in, void *const *out,
                             char *err, size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, 0), *dy = ops_input(g, n, 1), *dx = ops_output(g, n, 0);
    ops_window w;
    if (!pool_window_of(g, n, &x->shape, &w, err, err_size))
        return false;
    int ns = w.n_spatial;
    int64_t planes = x->shape.dims[0] * x->shape.dims[1], in_size = 1, out_size = 1;
    for (int d = 0; d < ns; d++) {
        in_size *= w.in[d];
        out_size *= w.out[d];
    }
    size_t total = (size_t)(planes * in_size);
    double *acc = calloc(total ? total : 1, sizeof *acc);
    if (!acc)
        return graph_node_error(g, n, err, err_size, "out of host memory");
    for (int64_t pl = 0; pl < planes; pl++) {
        int64_t oidx[GRAPH_MAX_RANK] = { 0 };
        for (int64_t p = 0; p < out_size; p++) {
            int64_t at = first_max(&w, x->dtype, in[0], pl * in_size, oidx);
            if (at >= 0)
                acc[pl * in_size + at] += graph_load_f64(dy->dtype, in[1], (size_t)(pl * out_size + p));
            for (int d = ns - 1; d >= 0; d--) {
                if (++oidx[d] < w.out[d])
                    break;
                oidx[d] = 0;
            }
        }
    }
    for (size_t i = 0; i < total; i++)
        graph_store_f64(dx->dtype, out[0], i, acc[i]);
    free(acc);
    return true;
}

/* ---- GatherGrad -------------------------------------------------------------------- */

bool graph_infer_gather_grad(graph *g, graph_node *n, char *err, size_t err_size)
{
    const graph_tensor *dy = ops_input(g, n, 0), *idx = ops_input(g, n, 1);
    const int64_t *dims;
    size_t rank = graph_attr_ints(n, "shape", &dims);
    if (!graph_dtype_is_float(dy->dtype))
        return graph_node_error(g, n, err, err_size, "dY '%s' is %s, not a float dtype", dy->name,
                                graph_dtype_name(dy->dtype));
    if (idx->dtype != GDT_I64 && idx->dtype != GDT_I32)
        return graph_node_error(g, n, err, err_size, "indices '%s' are %s, not i32 or i64", idx->name,
                                graph_dtype_name(idx->dtype));
    if (rank < 1 || rank > GRAPH_MAX_RANK)
        return graph_node_error(g, n, err, err_size, "shape has %zu values (1 to %d)", rank, GRAPH_MAX_RANK);
    graph_shape table = { .rank = (int)rank };
    for (size_t d = 0; d < rank; d++) {
        if (dims[d] < 0)
            return graph_node_error(g, n, err, err_size, "shape has value %lld", (long long)dims[d]);
        table.dims[d] = dims[d];
    }
    int a = ops_norm_axis(graph_attr_int(n, "axis"), table.rank);
    if (a < 0)
        return graph_node_error(g, n, err, err_size, "axis %lld is out of range for rank %d",
                                (long long)graph_attr_int(n, "axis"), table.rank);
    if (table.rank - 1 + idx->shape.rank > GRAPH_MAX_RANK)
        return graph_node_unsupported(g, n, err, err_size, "rank above %d", GRAPH_MAX_RANK);
    /* dY is Gather's output: table.shape[:a] + indices.shape + table.shape[a+1:]. */
    graph_shape want = { 0 };
    for (int d = 0; d < a; d++)
        want.dims[want.rank++] = table.dims[d];
    for (int d = 0; d < idx->shape.rank; d++)
        want.dims[want.rank++] = idx->shape.dims[d];
    for (int d = a + 1; d < table.rank; d++)
        want.dims[want.rank++] = table.dims[d];
    if (!graph_shape_equal(&want, &dy->shape)) {
        char s1[200], s2[200];
        return graph_node_error(g, n, err, err_size, "dY is %s; a Gather on axis %d of %s gives %s",
                                graph_shape_str(&dy->shape, s1, sizeof s1), a,
                                graph_shape_str(&table, s2, sizeof s2), graph_shape_str(&want, s1, sizeof s1));
    }
    if (n->n_inputs > 2 && n->inputs[2] >= 0) {
        const graph_tensor *init = ops_input(g, n, 2);
        if (init->dtype != dy->dtype || !graph_shape_equal(&init->shape, &table)) {
            char s1[200], s2[200];
            return graph_node_error(g, n, err, err_size, "initial '%s' is %s%s, not the table's %s%s", init->name,
                                    graph_dtype_name(init->dtype), graph_shape_str(&init->shape, s1, sizeof s1),
                                    graph_dtype_name(dy->dtype), graph_shape_str(&table, s2, sizeof s2));
        }
    }
    ops_set_output(g, n, 0, dy->dtype, &table);
    return true;
}

bool graph_eval_gather_grad(const graph *g, const graph_node *n, const void *const *in, void *const *out,
                            char *err, size_t err_size)
{
    const graph_tensor *dy = ops_input(g, n, 0), *idx = ops_input(g, n, 1), *dt = ops_output(g, n, 0);
    int a = ops_norm_axis(graph_attr_int(n, "axis"), dt->shape.rank);
    size_t outer = 1, inner = 1, ni = (size_t)graph_shape_numel(&idx->shape);
    for (int d = 0; d < a; d++)
        outer *= (size_t)dt->shape.dims[d];
    for (int d = a + 1; d < dt->shape.rank; d++)
        inner *= (size_t)dt->shape.dims[d];
    int64_t len = dt->shape.dims[a];
    for (size_t j = 0; j < ni; j++) {
        int64_t k = graph_load_i64(idx->dtype, in[1], j);
        if (k < -len || k >= len)
            return graph_node_error(g, n, err, err_size, "index %lld is out of range for axis %d of size %lld",
                                    (long long)k, a, (long long)len);
    }
    size_t total = (size_t)graph_shape_numel(&dt->shape);
    double *acc = calloc(total ? total : 1, sizeof *acc);
    if (!acc)
        return graph_node_error(g, n, err, err_size, "out of host memory");
    if (n->n_inputs > 2 && in[2])
        for (size_t i = 0; i < total; i++)
            acc[i] = graph_load_f64(dt->dtype, in[2], i);
    for (size_t o = 0; o < outer; o++)
        for (size_t j = 0; j < ni; j++) {
            int64_t k = graph_load_i64(idx->dtype, in[1], j);
            if (k < 0)
                k += len;
            double *row = acc + (o * (size_t)len + (size_t)k) * inner;
            for (size_t e = 0; e < inner; e++)
                row[e] += graph_load_f64(dy->dtype, in[0], (o * ni + j) * inner + e);
        }
    for (size_t i = 0; i < total; i++)
        graph_store_f64(dt->dtype, out[0], i, acc[i]);
    free(acc);
    return true;
}
