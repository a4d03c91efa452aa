/*
 * ops_grad_conv.c — inference and host evaluation of the two gradients of
 * a convolution Y = Conv(X, W):
 *   - ConvTranspose (ONNX, opset 1 and 11): the data gradient,
 *     dX = ConvTranspose(dY, W) with the Conv's strides and pads, and
 *     output_padding (or output_shape) giving back X's extent;
 *   - ConvWeightGrad (domain "ipusim"): the weight gradient,
 *     dW[m][c][k] = sum over n and output positions o of
 *     dY[n][m][o] X[n][c][o s - pad + k d].
 * Both for any number of spatial dims, groups and dilations; f64
 * arithmetic, one rounding to the result's dtype.
 */
#include <stdlib.h>
#include <string.h>

#include "graph_eval.h"
#include "ops_grad_conv.h"
#include "ops_impl.h"

/* An ints attribute of ns values, `dflt` each when absent. */
static bool attr_ints(const graph *g, const graph_node *n, const char *name, int ns, int64_t dflt, int64_t *v,
                      char *err, size_t err_size)
{
    const int64_t *a;
    size_t cnt = graph_attr_ints(n, name, &a);
    for (int i = 0; i < ns; i++)
        v[i] = cnt ? a[i] : dflt;
    if (cnt && cnt != (size_t)ns)
        return graph_node_error(g, n, err, err_size, "attribute %s has %zu values, the op needs %d", name, cnt, ns);
    return true;
}

/* Strides and dilations (at least 1) and the group count. */
static bool common_attrs(const graph *g, const graph_node *n, conv_grad_window *w, char *err, size_t err_size)
{
    int ns = w->n_spatial;
    if (!attr_ints(g, n, "strides", ns, 1, w->stride, err, err_size) ||
        !attr_ints(g, n, "dilations", ns, 1, w->dilation, err, err_size))
        return false;
    for (int i = 0; i < ns; i++)
        if (w->stride[i] < 1 || w->dilation[i] < 1)
            return graph_node_error(g, n, err, err_size, "strides and dilations must be at least 1");
    w->group = graph_attr_int(n, "group");
    if (w->group < 1)
        return graph_node_error(g, n, err, err_size, "group must be at least 1");
    return true;
}

bool conv_transpose_window(const graph *g, const graph_node *n, conv_grad_window *w, char *err, size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, 0), *wt = ops_input(g, n, 1);
    int r = x->shape.rank, ns = r - 2;
    memset(w, 0, sizeof *w);
    w->n_spatial = ns;
    if (r < 3 || wt->shape.rank != r)
        return graph_node_error(g, n, err, err_size, "input and weights must be [N, C, ...] and [C, M/group, ...]");
    if (!common_attrs(g, n, w, err, err_size))
        return false;
    w->batch = x->shape.dims[0];
    w->c_y = x->shape.dims[1];
    w->c_x = wt->shape.dims[1] * w->group;
    if (wt->shape.dims[0] != w->c_y || w->c_y % w->group)
        return graph_node_error(g, n, err, err_size, "weights of %lld input channels for an input of %lld, group %lld",
                                (long long)wt->shape.dims[0], (long long)w->c_y, (long long)w->group);
    int64_t outpad[GRAPH_MAX_RANK], pads[2 * GRAPH_MAX_RANK];
    if (!attr_ints(g, n, "output_padding", ns, 0, outpad, err, err_size) ||
        !attr_ints(g, n, "pads", 2 * ns, 0, pads, err, err_size))
        return false;
    const int64_t *ks, *os;
    size_t nk = graph_attr_ints(n, "kernel_shape", &ks), no = graph_attr_ints(n, "output_shape", &os);
    if (nk && (nk != (size_t)ns || memcmp(ks, wt->shape.dims + 2, nk * sizeof *ks)))
        return graph_node_error(g, n, err, err_size, "kernel_shape does not match the weights");
    if (no && no != (size_t)ns && no != (size_t)r)
        return graph_node_error(g, n, err, err_size, "output_shape has %zu values for %d spatial dims", no, ns);
    const char *auto_pad = graph_attr_string(n, "auto_pad");
    bool upper = !strcmp(auto_pad, "SAME_UPPER"), lower = !strcmp(auto_pad, "SAME_LOWER");
    bool valid = !strcmp(auto_pad, "VALID");
    if (!upper && !lower && !valid && strcmp(auto_pad, "NOTSET"))
        return graph_node_error(g, n, err, err_size, "auto_pad '%s' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID",
                                auto_pad);
    for (int i = 0; i < ns; i++) {
        w->y[i] = x->shape.dims[2 + i];
        w->kernel[i] = wt->shape.dims[2 + i];
        if (outpad[i] < 0 || (outpad[i] >= w->stride[i] && outpad[i] >= w->dilation[i]))
            return graph_node_error(g, n, err, err_size, "output_padding must be below the stride or the dilation");
        int64_t full = w->stride[i] * (w->y[i] - 1) + outpad[i] + (w->kernel[i] - 1) * w->dilation[i] + 1;
        if (no || upper || lower) {
            /* The pads follow from the result's extent (floor halves). */
            int64_t want = no ? os[no - (size_t)ns + (size_t)i] : w->y[i] * w->stride[i];
            int64_t total = full - want, half = total >= 0 ? total / 2 : -((-total + 1) / 2);
            w->pad_begin[i] = upper ? half : total - half;
            w->pad_end[i] = total - w->pad_begin[i];
        } else if (!valid) {
            w->pad_begin[i] = pads[i];
            w->pad_end[i] = pads[ns + i];
        }
        w->x[i] = full - w->pad_begin[i] - w->pad_end[i];
        if (w->x[i] < 1)
            return graph_node_error(g, n, err, err_size, "the result would have no elements along spatial dim %d", i);
    }
    return true;
}

bool conv_weight_grad_window(const graph *g, const graph_node *n, conv_grad_window *w, char *err,
                             size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, 0), *dy = ops_input(g, n, 1);
    int r = x->shape.rank, ns = r - 2;
    memset(w, 0, sizeof *w);
    w->n_spatial = ns;
    const int64_t *ks;
    if (r < 3 || dy->shape.rank != r || graph_attr_ints(n, "kernel_shape", &ks) != (size_t)ns)
        return graph_node_error(g, n, err, err_size,
                                "X and dY must be [N, C, ...] of one rank, kernel_shape one value a spatial dim");
    ops_window fw;
    if (!common_attrs(g, n, w, err, err_size) || !ops_window_init(g, n, &x->shape, ks, false, &fw, err, err_size))
        return false;
    w->batch = x->shape.dims[0];
    w->c_x = x->shape.dims[1];
    w->c_y = dy->shape.dims[1];
    if (dy->shape.dims[0] != w->batch || w->c_x % w->group || w->c_y % w->group)
        return graph_node_error(g, n, err, err_size, "X and dY differ in batch, or channels do not divide by group");
    for (int i = 0; i < ns; i++) {
        w->x[i] = fw.in[i];
        w->y[i] = dy->shape.dims[2 + i];
        w->kernel[i] = ks[i];
        w->pad_begin[i] = fw.pad_begin[i];
        w->pad_end[i] = fw.pad_end[i];
        if (fw.out[i] != w->y[i])
            return graph_node_error(g, n, err, err_size, "dY has %lld positions along spatial dim %d, the Conv %lld",
                                    (long long)w->y[i], i, (long long)fw.out[i]);
    }
    return true;
}

static bool float_input(const graph *g, const graph_node *n, int i, char *err, size_t err_size)
{
    graph_dtype t = ops_input(g, n, i)->dtype;
    if (t != GDT_F16 && t != GDT_F32 && t != GDT_F64 && t != GDT_BF16)
        return graph_node_error(g, n, err, err_size, "input %d must be a float tensor", i);
    return true;
}

bool graph_infer_conv_transpose(graph *g, graph_node *n, char *err, size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, 0), *b = ops_input(g, n, 2);
    conv_grad_window w;
    if (!float_input(g, n, 0, err, err_size) || !conv_transpose_window(g, n, &w, err, err_size))
        return false;
    if (ops_input(g, n, 1)->dtype != x->dtype || (b && b->dtype != x->dtype))
        return graph_node_error(g, n, err, err_size, "inputs must be of one dtype");
    if (b && (b->shape.rank != 1 || b->shape.dims[0] != w.c_x))
        return graph_node_error(g, n, err, err_size, "bias is not [%lld]", (long long)w.c_x);
    graph_shape s = { .rank = x->shape.rank, .dims = { w.batch, w.c_x } };
    for (int i = 0; i < w.n_spatial; i++)
        s.dims[2 + i] = w.x[i];
    ops_set_output(g, n, 0, x->dtype, &s);
    return true;
}

bool graph_infer_conv_weight_grad(graph *g, graph_node *n, char *err, size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, 0);
    conv_grad_window w;
    if (!float_input(g, n, 0, err, err_size) || !conv_weight_grad_window(g, n, &w, err, err_size))
        return false;
    if (ops_input(g, n, 1)->dtype != x->dtype)
        return graph_node_error(g, n, err, err_size, "X and dY must be of one dtype");
    graph_shape s = { .rank = x->shape.rank, .dims = { w.c_y, w.c_x / w.group } };
    for (int i = 0; i < w.n_spatial; i++)
        s.dims[2 + i] = w.kernel[i];
    ops_set_output(g, n, 0, x->dtype, &s);
    return true;
}

/* A tensor's values as f64 (malloc'd; NULL when out of memory). */
static double *as_f64(const graph_tensor *t, const void *data)
{
    size_t cnt = (size_t)graph_shape_numel(&t->shape);
    double *v = malloc((cnt ? cnt : 1) * sizeof *v);
    for (size_t i = 0; v && i < cnt; i++)
        v[i] = graph_load_f64(t->dtype, data, i);
    return v;
}

static int64_t product(const int64_t *d, int ns)
{
    int64_t p = 1;
    for (int i = 0; i < ns; i++)
        p *= d[i];
    return p;
}

/* Visit every (output position o of the forward Conv, kernel position k)
 * whose input position falls inside the image: f(o, k, i) with all three
 * as flat offsets. */
typedef void (*window_visit)(void *ctx, int64_t o, int64_t k, int64_t i);
static void for_each_tap(const conv_grad_window *w, window_visit f, void *ctx)
{
    int ns = w->n_spatial;
    int64_t ny = product(w->y, ns), nk = product(w->kernel, ns);
    for (int64_t o = 0; o < ny; o++)
        for (int64_t k = 0; k < nk; k++) {
            int64_t orem = o, krem = k, off = 0, mul = 1;
            bool inside = true;
            for (int d = ns - 1; d >= 0; d--) {
                int64_t od = orem % w->y[d], kd = krem % w->kernel[d];
                orem /= w->y[d];
                krem /= w->kernel[d];
                int64_t pos = od * w->stride[d] - w->pad_begin[d] + kd * w->dilation[d];
                if (pos < 0 || pos >= w->x[d])
                    inside = false;
                off += pos * mul;
                mul *= w->x[d];
            }
            if (inside)
                f(ctx, o, k, off);
        }
}

/* The sums of both gradients, one image and one group at a time. */
typedef struct grad_ctx {
    const double *dy, *x, *wt;        /* this image's and group's planes */
    double *out;
    int64_t cg, mg;                   /* channels of X and of dY in a group */
    int64_t nx, ny, nk;               /* positions in a plane of X, of dY, of the kernel */
    bool weight;                      /* dW (else dX) */
} grad_ctx;

static void accumulate(void *ctx, int64_t o, int64_t k, int64_t i)
{
    grad_ctx *c = ctx;
    for (int64_t m = 0; m < c->mg; m++) {
        double d = c->dy[m * c->ny + o];
        if (c->weight)
            for (int64_t ch = 0; ch < c->cg; ch++)
                c->out[(m * c->cg + ch) * c->nk + k] += d * c->x[ch * c->nx + i];
        else
            for (int64_t ch = 0; ch < c->cg; ch++)
                c->out[ch * c->nx + i] += d * c->wt[(m * c->cg + ch) * c->nk + k];
    }
}

/* dX (weight false: dy, wt given) or dW (x, dy given) into acc (zeros).
 * ConvTranspose's weights [C_y, C_x/group, k] are the forward Conv's. */
static void gradient_sums(const conv_grad_window *w, const double *dy, const double *x, const double *wt, double *acc,
                          bool weight)
{
    int ns = w->n_spatial;
    grad_ctx c = { .cg = w->c_x / w->group, .mg = w->c_y / w->group, .nx = product(w->x, ns),
                   .ny = product(w->y, ns), .nk = product(w->kernel, ns), .weight = weight };
    for (int64_t b = 0; b < w->batch; b++)
        for (int64_t gi = 0; gi < w->group; gi++) {
            c.dy = dy + (b * w->c_y + gi * c.mg) * c.ny;
            if (weight) {
                c.x = x + (b * w->c_x + gi * c.cg) * c.nx;
                c.out = acc + gi * c.mg * c.cg * c.nk;
            } else {
                c.wt = wt + gi * c.mg * c.cg * c.nk;
                c.out = acc + (b * w->c_x + gi * c.cg) * c.nx;
            }
            for_each_tap(w, accumulate, &c);
        }
}

bool graph_eval_conv_transpose(const graph *g, const graph_node *n, const void *const *in, void *const *out,
                               char *err, size_t err_size)
{
    const graph_tensor *dy = ops_input(g, n, 0), *wt = ops_input(g, n, 1), *b = ops_input(g, n, 2);
    const graph_tensor *y = ops_output(g, n, 0);
    conv_grad_window w;
    if (!conv_transpose_window(g, n, &w, err, err_size))
        return false;
    size_t cnt = (size_t)graph_shape_numel(&y->shape), plane = (size_t)product(w.x, w.n_spatial);
    double *dyv = as_f64(dy, in[0]), *wv = as_f64(wt, in[1]), *acc = calloc(cnt ? cnt : 1, sizeof *acc);
    bool ok = dyv && wv && acc;
    if (ok) {
        gradient_sums(&w, dyv, NULL, wv, acc, false);
        for (size_t i = 0; i < cnt; i++)
            graph_store_f64(y->dtype, out[0], i,
                            acc[i] + (b ? graph_load_f64(b->dtype, in[2], (i / plane) % (size_t)w.c_x) : 0.0));
    }
    free(dyv);
    free(wv);
    free(acc);
    return ok || graph_node_error(g, n, err, err_size, "out of host memory");
}

bool graph_eval_conv_weight_grad(const graph *g, const graph_node *n, const void *const *in, void *const *out,
                                 char *err, size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, 0), *dy = ops_input(g, n, 1), *y = ops_output(g, n, 0);
    conv_grad_window w;
    if (!conv_weight_grad_window(g, n, &w, err, err_size))
        return false;
    size_t cnt = (size_t)graph_shape_numel(&y->shape);
    double *xv = as_f64(x, in[0]), *dyv = as_f64(dy, in[1]), *acc = calloc(cnt ? cnt : 1, sizeof *acc);
    bool ok = xv && dyv && acc;
    if (ok) {
        gradient_sums(&w, dyv, xv, NULL, acc, true);
        for (size_t i = 0; i < cnt; i++)
            graph_store_f64(y->dtype, out[0], i, acc[i]);
    }
    free(xv);
    free(dyv);
    free(acc);
    return ok || graph_node_error(g, n, err, err_size, "out of host memory");
}
