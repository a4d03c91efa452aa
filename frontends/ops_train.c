/*
 * ops_train.c — inference and host evaluation of the ops a training graph
 * adds to a forward graph: the class losses SoftmaxCrossEntropyLoss and
 * NegativeLogLikelihoodLoss (ai.onnx, opset 12 on), and the optimizer
 * steps Momentum, Adam and Adagrad (ai.onnx.preview.training, opset 1),
 * and ipusim's ScaledAdd, Zeros (a gradient sum's start) and AdamUpdater.
 * The evaluation is the reference the compiled rewrites (decompose_train.c)
 * are held against: f64 arithmetic, one rounding to the output's dtype, as
 * graph_eval.c.
 *
 * Models the ONNX reference semantics of these ops (and PopART's loss and
 * optimizer ops, which compute the same).  Does not model PopART's loss
 * scaling or its optimizer state kept on the tiles between steps.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph_eval.h"
#include "ops_impl.h"
#include "sim/base/diag.h"

/* ---- SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss ----------------------------------------- */

/* The reduction attribute as 0 (none), 1 (sum) or 2 (mean); -1 otherwise. */
static int loss_reduction(const graph_node *n)
{
    const char *r = graph_attr_string(n, "reduction");
    return !strcmp(r, "none") ? 0 : !strcmp(r, "sum") ? 1 : !strcmp(r, "mean") ? 2 : -1;
}

/* Scores or log-probabilities [N, C, d1..dk] (float), labels [N, d1..dk]
 * (i32 or i64), weights [C] of the scores' dtype; the loss per element
 * (reduction none) or a scalar, and SoftmaxCrossEntropyLoss's log_prob of
 * the scores' shape. */
bool ops_infer_class_loss(graph *g, graph_node *n, char *err, size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, 0), *lab = ops_input(g, n, 1), *w = ops_input(g, n, 2);
    char s1[200], s2[200];
    if (!graph_dtype_is_float(x->dtype))
        return graph_node_error(g, n, err, err_size, "input '%s' is %s; %s takes f16, bf16, f32 or f64", x->name,
                                graph_dtype_name(x->dtype), graph_ops[n->op].name);
    if (x->shape.rank < 2)
        return graph_node_error(g, n, err, err_size, "input '%s' needs rank 2 or more ([N, C, d1, ...])", x->name);
    if (lab->dtype != GDT_I32 && lab->dtype != GDT_I64)
        return graph_node_error(g, n, err, err_size, "labels '%s' are %s; i32 or i64 are taken", lab->name,
                                graph_dtype_name(lab->dtype));
    graph_shape want = { .rank = x->shape.rank - 1, .dims = { x->shape.dims[0] } };
    for (int d = 2; d < x->shape.rank; d++)
        want.dims[d - 1] = x->shape.dims[d];
    if (!graph_shape_equal(&lab->shape, &want))
        return graph_node_error(g, n, err, err_size, "labels '%s' of shape %s do not match the input's %s (want %s)",
                                lab->name, graph_shape_str(&lab->shape, s1, sizeof s1),
                                graph_shape_str(&x->shape, s2, sizeof s2), graph_shape_str(&want, s1, sizeof s1));
    if (w && (w->shape.rank != 1 || w->shape.dims[0] != x->shape.dims[1] || w->dtype != x->dtype))
        return graph_node_error(g, n, err, err_size, "weights '%s' (%s%s) are not %s[%lld] (one per class)", w->name,
                                graph_dtype_name(w->dtype), graph_shape_str(&w->shape, s1, sizeof s1),
                                graph_dtype_name(x->dtype), (long long)x->shape.dims[1]);
    int red = loss_reduction(n);
    if (red < 0)
        return graph_node_error(g, n, err, err_size, "reduction '%s' is not none, sum or mean",
                                graph_attr_string(n, "reduction"));
    graph_shape scalar = { .rank = 0 };
    ops_set_output(g, n, 0, x->dtype, red ? &scalar : &want);
    ops_set_output(g, n, 1, x->dtype, &x->shape);
    return true;
}

/* log-softmax over axis 1 of x [N, C, D] in f64. */
static void log_softmax_axis1(graph_dtype t, const void *x, int64_t batch, int64_t c, int64_t inner, double *out)
{
    for (int64_t b = 0; b < batch; b++)
        for (int64_t s = 0; s < inner; s++) {
            size_t base = (size_t)(b * c * inner + s);
            double mx = -INFINITY, sum = 0;
            for (int64_t k = 0; k < c; k++)
                mx = fmax(mx, graph_load_f64(t, x, base + (size_t)(k * inner)));
            for (int64_t k = 0; k < c; k++)
                sum += exp(graph_load_f64(t, x, base + (size_t)(k * inner)) - mx);
            double lse = mx + log(sum);
            for (int64_t k = 0; k < c; k++)
                out[base + (size_t)(k * inner)] = graph_load_f64(t, x, base + (size_t)(k * inner)) - lse;
        }
}

/* loss[b, s] = -w[label] * logp[b, label, s]; a label equal to ignore_index
 * weighs 0.  mean divides the sum by the sum of the weights taken. */
bool ops_eval_class_loss(const graph *g, const graph_node *n, const void *const *in, void *const *out, char *err,
                         size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, 0), *lab = ops_input(g, n, 1), *w = ops_input(g, n, 2);
    const graph_tensor *y = ops_output(g, n, 0);
    int64_t batch = x->shape.dims[0], c = x->shape.dims[1], inner = 1;
    for (int d = 2; d < x->shape.rank; d++)
        inner *= x->shape.dims[d];
    size_t count = (size_t)(batch * c * inner), rows = (size_t)(batch * inner);
    double *logp = malloc(count * sizeof *logp + 1);
    if (!logp)
        fatal("out of memory");
    if (n->op == GRAPH_OP_SOFTMAX_CROSS_ENTROPY_LOSS)
        log_softmax_axis1(x->dtype, in[0], batch, c, inner, logp);
    else
        for (size_t i = 0; i < count; i++)
            logp[i] = graph_load_f64(x->dtype, in[0], i);
    if (out[1])
        for (size_t i = 0; i < count; i++)
            graph_store_f64(x->dtype, out[1], i, logp[i]);
    bool has_ii = graph_attr_find(n, "ignore_index") != NULL;
    int64_t ii = has_ii ? graph_attr_int(n, "ignore_index") : 0;
    int red = loss_reduction(n);
    double sum = 0, weight_sum = 0;
    bool ok = true;
    for (size_t r = 0; r < rows && ok; r++) {
        int64_t label = graph_load_i64(lab->dtype, in[1], r);
        double loss = 0, wt = 0;
        if (!has_ii || label != ii) {
            if (label < 0 || label >= c) {
                ok = graph_node_error(g, n, err, err_size, "label %lld at element %zu of '%s' is outside [0, %lld)%s",
                                      (long long)label, r, lab->name, (long long)c,
                                      has_ii ? " and is not ignore_index" : "");
                break;
            }
            wt = w ? graph_load_f64(w->dtype, in[2], (size_t)label) : 1;
            size_t b = r / (size_t)inner, s = r % (size_t)inner;
            loss = -wt * logp[(b * (size_t)c + (size_t)label) * (size_t)inner + s];
        }
        if (red == 0)
            graph_store_f64(y->dtype, out[0], r, loss);
        sum += loss;
        weight_sum += wt;
    }
    if (ok && red)
        graph_store_f64(y->dtype, out[0], 0, red == 1 ? sum : sum / weight_sum);
    free(logp);
    return ok;
}

/* ---- Momentum, Adam, Adagrad ------------------------------------------------------------------ */

/* State tensors per optimized tensor beyond X and G: Momentum's V,
 * Adagrad's H, Adam's V and H. */
static int optimizer_states(graph_op op)
{
    return op == GRAPH_OP_ADAM ? 2 : 1;
}

/* Inputs R (scalar learning rate, float), T (scalar update count, i64),
 * then X_1..X_n, G_1..G_n and each state's n tensors, all of X_i's shape
 * and a float dtype; outputs X_new_1..X_new_n and the new states, in that
 * order (trailing groups may be left out). */
bool ops_infer_optimizer(graph *g, graph_node *n, char *err, size_t err_size)
{
    int groups = 2 + optimizer_states(n->op), tensors = (n->n_inputs - 2) / groups;
    char s1[200], s2[200];
    if ((n->n_inputs - 2) % groups)
        return graph_node_error(g, n, err, err_size, "has %d inputs: R, T and %d groups of equally many tensors "
                                "are expected", n->n_inputs, groups);
    if (n->n_outputs % tensors || n->n_outputs / tensors > groups - 1)
        return graph_node_error(g, n, err, err_size, "has %d outputs for %d optimized tensors (X_new and the %d "
                                "states of each, in groups)", n->n_outputs, tensors, groups - 2);
    const char *mode = n->op == GRAPH_OP_MOMENTUM ? graph_attr_string(n, "mode") : "standard";
    if (strcmp(mode, "standard") && strcmp(mode, "nesterov"))
        return graph_node_error(g, n, err, err_size, "mode '%s' is not standard or nesterov", mode);
    const graph_tensor *r = ops_input(g, n, 0), *t = ops_input(g, n, 1);
    if (!r || !graph_dtype_is_float(r->dtype) || graph_shape_numel(&r->shape) != 1 || r->shape.rank > 1)
        return graph_node_error(g, n, err, err_size, "the learning rate R must be a float scalar");
    if (!t || t->dtype != GDT_I64 || graph_shape_numel(&t->shape) != 1 || t->shape.rank > 1)
        return graph_node_error(g, n, err, err_size, "the update count T must be an i64 scalar");
    for (int i = 0; i < tensors; i++) {
        const graph_tensor *x = ops_input(g, n, 2 + i);
        for (int k = 0; k < groups; k++) {
            const graph_tensor *o = ops_input(g, n, 2 + k * tensors + i);
            if (!o)
                return graph_node_error(g, n, err, err_size, "input %d may not be omitted", 2 + k * tensors + i);
            if (!graph_dtype_is_float(o->dtype) || o->dtype != x->dtype || !graph_shape_equal(&o->shape, &x->shape))
                return graph_node_error(g, n, err, err_size, "input '%s' (%s%s) is not of '%s''s dtype and shape (%s%s)",
                                        o->name, graph_dtype_name(o->dtype), graph_shape_str(&o->shape, s1, sizeof s1),
                                        x->name, graph_dtype_name(x->dtype), graph_shape_str(&x->shape, s2, sizeof s2));
        }
        for (int k = 0; k * tensors < n->n_outputs; k++)
            ops_set_output(g, n, k * tensors + i, x->dtype, &x->shape);
    }
    return true;
}

/* The optimizer's attributes and the step's scalars. */
typedef struct step_params {
    double r, norm;                 /* learning rate (adjusted for T), L2 coefficient */
    double alpha, beta, eps, post;  /* Adam's and Momentum's coefficients */
    int64_t t;
    bool nesterov;
} step_params;

/* One element of X's update: x, g and the states in, the new values out
 * (new x, then the states). */
static void step_element(graph_op op, const step_params *p, double x, double grad, const double *st, double *res)
{
    double gr = p->norm * x + grad;
    if (op == GRAPH_OP_MOMENTUM) {
        double v = p->alpha * st[0] + (p->t > 0 ? p->beta : 1) * gr;
        res[0] = x - p->r * (p->nesterov ? gr + p->alpha * v : v);
        res[1] = v;
    } else if (op == GRAPH_OP_ADAGRAD) {
        double h = st[0] + gr * gr;
        res[0] = x - p->r * gr / (sqrt(h) + p->eps);
        res[1] = h;
    } else {
        double v = p->alpha * st[0] + (1 - p->alpha) * gr, h = p->beta * st[1] + (1 - p->beta) * gr * gr;
        res[0] = (1 - p->post) * (x - p->r * (v / (sqrt(h) + p->eps)));
        res[1] = v;
        res[2] = h;
    }
}

/* The attributes of n and its scalars R and T, R adjusted for T as the op
 * defines (Adagrad's decay, Adam's bias correction). */
static step_params step_params_of(const graph *g, const graph_node *n, const void *const *in)
{
    step_params p = { 0 };
    p.r = graph_load_f64(ops_input(g, n, 0)->dtype, in[0], 0);
    p.t = graph_load_i64(GDT_I64, in[1], 0);
    p.norm = graph_attr_float(n, "norm_coefficient");
    if (n->op == GRAPH_OP_MOMENTUM) {
        p.alpha = graph_attr_float(n, "alpha");
        p.beta = graph_attr_float(n, "beta");
        p.nesterov = !strcmp(graph_attr_string(n, "mode"), "nesterov");
    } else if (n->op == GRAPH_OP_ADAGRAD) {
        p.eps = graph_attr_float(n, "epsilon");
        p.r /= 1 + (double)p.t * graph_attr_float(n, "decay_factor");
    } else {
        p.alpha = graph_attr_float(n, "alpha");
        p.beta = graph_attr_float(n, "beta");
        p.eps = graph_attr_float(n, "epsilon");
        p.post = graph_attr_float(n, "norm_coefficient_post");
        if (p.t > 0)
            p.r *= sqrt(1 - pow(p.beta, (double)p.t)) / (1 - pow(p.alpha, (double)p.t));
    }
    return p;
}

bool ops_eval_optimizer(const graph *g, const graph_node *n, const void *const *in, void *const *out, char *err,
                        size_t err_size)
{
    (void)err;
    (void)err_size;
    int states = optimizer_states(n->op), tensors = (n->n_inputs - 2) / (2 + states);
    step_params p = step_params_of(g, n, in);
    for (int i = 0; i < tensors; i++) {
        const graph_tensor *x = ops_input(g, n, 2 + i);
        size_t count = (size_t)graph_shape_numel(&x->shape);
        for (size_t e = 0; e < count; e++) {
            double st[2], res[3];
            for (int k = 0; k < states; k++)
                st[k] = graph_load_f64(x->dtype, in[2 + (2 + k) * tensors + i], e);
            step_element(n->op, &p, graph_load_f64(x->dtype, in[2 + i], e),
                         graph_load_f64(x->dtype, in[2 + tensors + i], e), st, res);
            for (int k = 0; k <= states; k++) {
                int o = k * tensors + i;
                if (o < n->n_outputs && out[o])
                    graph_store_f64(x->dtype, out[o], e, res[k]);
            }
        }
    }
    return true;
}

/* ---- ScaledAdd ------------------------------------------------------------------------------------ */

bool ops_infer_scaled_add(graph *g, graph_node *n, char *err, size_t err_size)
{
    const graph_tensor *x = ops_input(g, n, 0), *y = ops_input(g, n, 1);
    char s1[200], s2[200];
    if (!x || !y)
        return graph_node_error(g, n, err, err_size, "needs both inputs, x and y");
    if ((x->dtype != GDT_F32 && x->dtype != GDT_F16) || y->dtype != GDT_F32)
        return graph_node_unsupported(g, n, err, err_size, "x %s and y %s: x f32 or f16, y f32 are supported",
                                      graph_dtype_name(x->dtype), graph_dtype_name(y->dtype));
    if (!graph_shape_equal(&x->shape, &y->shape))
        return graph_node_error(g, n, err, err_size, "x %s and y %s differ in shape",
                                graph_shape_str(&x->shape, s1, sizeof s1), graph_shape_str(&y->shape, s2, sizeof s2));
    const char *rounding = graph_attr_find(n, "rounding") ? graph_attr_string(n, "rounding") : "nearest";
    if (strcmp(rounding, "nearest") && strcmp(rounding, "stochastic"))
        return graph_node_error(g, n, err, err_size, "rounding '%s': expected nearest or stochastic", rounding);
    if (!strcmp(rounding, "stochastic") && x->dtype != GDT_F16)
        return graph_node_error(g, n, err, err_size, "stochastic rounding is of an f16 result only, not %s",
                                graph_dtype_name(x->dtype));
    ops_set_output(g, n, 0, x->dtype, &x->shape);
    return true;
}

/* x + (f32) (scale y) rounded to f32, then to x's dtype: the bits of the
 * Mul and the Add (and the Cast) it replaces, a stochastic rounding taken
 * to nearest (its expected value is the f32 sum). */
bool ops_eval_scaled_add(const graph *g, const graph_node *n, const void *const *in, void *const *out, char *err,
                         size_t err_size)
{
    (void)err;
    (void)err_size;
    const graph_tensor *x = &g->tensors[n->inputs[0]];
    float scale = (float)graph_attr_float(n, "scale");
    size_t count = (size_t)graph_shape_numel(&x->shape);
    for (size_t i = 0; i < count; i++) {
        float p = (float)((double)scale * (double)((const float *)in[1])[i]);
        float r = (float)(graph_load_f64(x->dtype, in[0], i) + (double)p);
        graph_store_f64(x->dtype, out[0], i, r);
    }
    return true;
}

/* ---- Zeros -------------------------------------------------------------------------------------- */

bool ops_infer_zeros(graph *g, graph_node *n, char *err, size_t err_size)
{
    int64_t to = graph_attr_int(n, "to");
    const int64_t *dims = NULL;
    size_t rank = graph_attr_ints(n, "shape", &dims);
    if (to <= 0 || to > GDT_BF16 || !graph_dtype_size((graph_dtype)to))
        return graph_node_error(g, n, err, err_size, "to %lld is not a dtype", (long long)to);
    if (rank > GRAPH_MAX_RANK)
        return graph_node_error(g, n, err, err_size, "shape of rank %zu: at most %d", rank, GRAPH_MAX_RANK);
    graph_shape s = { .rank = (int)rank };
    for (size_t d = 0; d < rank; d++) {
        if (dims[d] < 0)
            return graph_node_error(g, n, err, err_size, "shape dimension %zu is %lld", d, (long long)dims[d]);
        s.dims[d] = dims[d];
    }
    ops_set_output(g, n, 0, (graph_dtype)to, &s);
    return true;
}

bool ops_eval_zeros(const graph *g, const graph_node *n, const void *const *in, void *const *out, char *err,
                    size_t err_size)
{
    (void)in, (void)err, (void)err_size;
    const graph_tensor *y = &g->tensors[n->outputs[0]];
    memset(out[0], 0, (size_t)graph_shape_numel(&y->shape) * graph_dtype_size(y->dtype));
    return true;
}

/* ---- AdamUpdater ----------------------------------------------------------------------------------- */

bool ops_infer_adam_updater(graph *g, graph_node *n, char *err, size_t err_size)
{
    static const char *const names[] = { "g", "m", "v", "c1", "c2", "w" };
    char s1[200], s2[200];
    for (int i = 0; i < n->n_inputs; i++) {
        const graph_tensor *x = ops_input(g, n, i), *gt = ops_input(g, n, 0);
        if (!x)
            return graph_node_error(g, n, err, err_size, "input %s is omitted", names[i]);
        if (x->dtype != GDT_F32 && !(i == 5 && x->dtype == GDT_F16))
            return graph_node_unsupported(g, n, err, err_size, "%s is %s: f32 is supported (w: f32 or f16)", names[i],
                                          graph_dtype_name(x->dtype));
        if ((i == 3 || i == 4) && graph_shape_numel(&x->shape) != 1)
            return graph_node_error(g, n, err, err_size, "%s %s: a scalar is expected", names[i],
                                    graph_shape_str(&x->shape, s1, sizeof s1));
        if (i != 3 && i != 4 && !graph_shape_equal(&x->shape, &gt->shape))
            return graph_node_error(g, n, err, err_size, "%s %s: g's shape %s is expected", names[i],
                                    graph_shape_str(&x->shape, s1, sizeof s1), graph_shape_str(&gt->shape, s2, sizeof s2));
    }
    const char *decay = graph_attr_string(n, "decay");
    if (strcmp(decay, "none") && strcmp(decay, "l2") && strcmp(decay, "decoupled"))
        return graph_node_error(g, n, err, err_size, "decay '%s': expected none, l2 or decoupled", decay);
    if (strcmp(decay, "none") && n->n_inputs < 6)
        return graph_node_error(g, n, err, err_size, "decay '%s' reads the weight: give it as the sixth input", decay);
    const graph_tensor *gt = ops_input(g, n, 0);
    graph_shape shape = gt->shape;
    for (int o = 0; o < 3; o++)
        ops_set_output(g, n, o, GDT_F32, &shape);
    return true;
}

static float f32_mul(float a, float b) { return (float)((double)a * (double)b); }
static float f32_add(float a, float b) { return (float)((double)a + (double)b); }

/* The element-wise ops' values (optimizer.h), each step rounded to f32. */
bool ops_eval_adam_updater(const graph *g, const graph_node *n, const void *const *in, void *const *out, char *err,
                           size_t err_size)
{
    (void)err;
    (void)err_size;
    const float beta1 = (float)graph_attr_float(n, "beta1"), beta2 = (float)graph_attr_float(n, "beta2");
    const float b1c = (float)(1 - graph_attr_float(n, "beta1")), b2c = (float)(1 - graph_attr_float(n, "beta2"));
    const float eps = (float)graph_attr_float(n, "epsilon"), wd = (float)graph_attr_float(n, "weight_decay");
    const char *decay = graph_attr_string(n, "decay");
    bool l2 = !strcmp(decay, "l2"), decoupled = !strcmp(decay, "decoupled");
    const float c1 = ((const float *)in[3])[0], c2 = ((const float *)in[4])[0];
    const graph_tensor *wt = n->n_inputs > 5 ? &g->tensors[n->inputs[5]] : NULL;
    size_t count = (size_t)graph_shape_numel(&g->tensors[n->inputs[0]].shape);
    for (size_t i = 0; i < count; i++) {
        float w = wt ? (float)graph_load_f64(wt->dtype, in[5], i) : 0;
        float gw = ((const float *)in[0])[i];
        if (l2)
            gw = f32_add(gw, f32_mul(w, wd));
        float m = f32_add(f32_mul(((const float *)in[1])[i], beta1), f32_mul(gw, b1c));
        float v = f32_add(f32_mul(((const float *)in[2])[i], beta2), f32_mul(f32_mul(gw, gw), b2c));
        float den = f32_add((float)sqrt((double)f32_mul(v, c2)), eps);
        float r = (float)((double)f32_mul(m, c1) / (double)den);
        if (decoupled)
            r = f32_add(r, f32_mul(w, wd));
        ((float *)out[0])[i] = r;
        ((float *)out[1])[i] = m;
        ((float *)out[2])[i] = v;
    }
    return true;
}

/* ---- ReplicatedAllReduce ------------------------------------------------------------------------- */

bool ops_infer_all_reduce(graph *g, graph_node *n, char *err, size_t err_size)
{
    if (n->n_outputs != n->n_inputs)
        return graph_node_error(g, n, err, err_size, "%d inputs and %d outputs: an output for each input",
                                n->n_inputs, n->n_outputs);
    int64_t replicas = graph_attr_int(n, "replicas");
    if (replicas < 1 || replicas > 256)
        return graph_node_error(g, n, err, err_size, "replicas %lld: 1 to 256", (long long)replicas);
    for (int i = 0; i < n->n_inputs; i++) {
        const graph_tensor *x = ops_input(g, n, i);
        if (!x)
            return graph_node_error(g, n, err, err_size, "input %d is omitted", i);
        if (x->dtype != GDT_F32)
            return graph_node_unsupported(g, n, err, err_size, "input %d is %s: f32 is supported", i,
                                          graph_dtype_name(x->dtype));
        ops_set_output(g, n, i, x->dtype, &x->shape);
    }
    return true;
}

bool ops_eval_all_reduce(const graph *g, const graph_node *n, const void *const *in, void *const *out, char *err,
                         size_t err_size)
{
    int64_t replicas = graph_attr_int(n, "replicas");
    if (replicas != 1) {
        snprintf(err, err_size, "%s: the sum over %lld replicas needs every replica's values; the host evaluator "
                 "holds one (evaluate the step with one replica)", g->source, (long long)replicas);
        return false;
    }
    for (int i = 0; i < n->n_inputs; i++) {
        const graph_tensor *x = &g->tensors[n->inputs[i]];
        memcpy(out[i], in[i], (size_t)graph_shape_numel(&x->shape) * graph_dtype_size(x->dtype));
    }
    return true;
}
