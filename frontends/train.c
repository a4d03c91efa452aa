/*
 * train.c — one training step as a graph (autodiff.h train_graph): the
 * loss on the model's outputs, the trainable weights made variables, the
 * backward pass from autodiff, and the optimizer's update of each weight
 * and of its state, all in ops of the table.
 *
 * The update follows the optimizers as PyTorch and Graphcore's recipes
 * define them (PopART's SGD with momentum and weight decay; Adam with its
 * bias correction; LAMB, You et al. 2019, the trust ratio |w| / |r| per
 * weight tensor; LARS, You et al. 2017, the trust ratio
 * eta |w| / (|g| + wd |w|)), in f32.  A step of several data-parallel
 * replicas sums the gradients over them first (one ReplicatedAllReduce of
 * them all, lower_collectives.c) and updates with their mean; a step of
 * several micro-batches (train_pipeline.c) sums theirs first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autodiff.h"
#include "decompose.h"
#include "fusion.h"
#include "merge_common.h"
#include "ops_impl.h"
#include "isa/fp16.h"
#include "sim/base/diag.h"

void train_options_default(train_options *o)
{
    *o = (train_options){ .optimizer = TRAIN_SGD, .lr = 0.01, .beta1 = 0.9, .beta2 = 0.999, .epsilon = 1e-6,
                          .lars_eta = 0.001, .loss_scale = 1, .stochastic_rounding = true };
}

static const char *const optimizer_names[] = { "sgd", "adam", "lamb", "lars" };

bool train_optimizer_parse(const char *name, enum train_optimizer *out)
{
    for (int i = 0; i < 4; i++)
        if (!strcmp(name, optimizer_names[i])) {
            *out = (enum train_optimizer)i;
            return true;
        }
    return false;
}

const char *train_optimizer_name(enum train_optimizer o)
{
    return (unsigned)o < 4 ? optimizer_names[o] : "?";
}

/* ---- building ops (forward and update phases) ------------------------------------------- */

typedef struct builder {
    graph *g;
    train_info *info;
    char *err;
    size_t err_size;
    bool failed;
    bool state_offchip;   /* state_of's variables kept in streaming memory */
    bool state_f16;       /* ... and kept in f16 */
} builder;

static int op_n(builder *b, graph_op op, const int *in, int n_in)
{
    if (b->failed)
        return -1;
    for (int i = 0; i < n_in; i++)
        if (in[i] < 0) {
            b->failed = true;
            return -1;
        }
    char base[64];
    snprintf(base, sizeof base, "train_%s", graph_ops[op].name);
    char *name = graph_unique_name(b->g, base);
    int out = graph_add_tensor(b->g, name);
    free(name);
    int k = graph_add_node(b->g, op, "", in, n_in, &out, 1);
    return k;
}

static int finish(builder *b, int k)
{
    if (b->failed || k < 0)
        return -1;
    if (!graph_infer_node(b->g, &b->g->nodes[k], b->err, b->err_size)) {
        b->failed = true;
        return -1;
    }
    return b->g->nodes[k].outputs[0];
}

static int op2(builder *b, graph_op op, int a, int c)
{
    int in[2] = { a, c };
    return finish(b, op_n(b, op, in, 2));
}

static int scalar(builder *b, double v)
{
    float f = (float)v;
    graph_shape s = { .rank = 0 };
    return graph_add_constant(b->g, "train_const", GDT_F32, &s, &f);
}

static int ints(builder *b, const int64_t *v, int n)
{
    graph_shape s = { .rank = 1, .dims = { n } };
    return graph_add_constant(b->g, "train_shape", GDT_I64, &s, v);
}

/* Reduce over every axis to a scalar. */
static int reduce_all(builder *b, graph_op op, int x)
{
    if (x < 0)
        return -1;
    int k = op_n(b, op, &x, 1);
    if (k < 0)
        return -1;
    graph_set_attr_int(&b->g->nodes[k], "keepdims", 0);
    return finish(b, k);
}

/* ---- the loss ------------------------------------------------------------------------ */

/* A graph input named name (made if the graph has none) of this dtype and shape. */
static int label_input(builder *b, const char *name, graph_dtype dt, const graph_shape *s)
{
    graph *g = b->g;
    int t = graph_find_tensor(g, name);
    if (t >= 0) {
        const graph_tensor *x = &g->tensors[t];
        char s1[200], s2[200];
        if (x->dtype != dt || !graph_shape_equal(&x->shape, s)) {
            snprintf(b->err, b->err_size, "%s: loss: '%s' is %s%s, the loss needs %s%s", g->source, name,
                     graph_dtype_name(x->dtype), graph_shape_str(&x->shape, s1, sizeof s1), graph_dtype_name(dt),
                     graph_shape_str(s, s2, sizeof s2));
            b->failed = true;
            return -1;
        }
        return t;
    }
    t = graph_add_tensor(g, name);
    g->tensors[t].dtype = dt;
    g->tensors[t].shape = *s;
    g->tensors[t].shape_known = true;
    graph_add_input(g, t);
    return t;
}

/* -mean over samples of the log-probability lp [.., C] picks at labels [..]:
 * lp seen as a table of M C one-element rows, looked up at row
 * m C + label[m] (a Gather on axis 0: its gradient is the scatter-add of
 * the embedding gradient, and no [M, C] one-hot or [C] class range is
 * made, which for a vocabulary of 30522 words would be tensors of whole
 * rows of classes). */
static int pick_nll(builder *b, int lp, const char *labels_name)
{
    graph *g = b->g;
    graph_shape s = g->tensors[lp].shape, ls = s;
    int64_t classes = s.dims[s.rank - 1];
    ls.rank--;
    int labels = label_input(b, labels_name, GDT_I32, &ls);
    if (labels < 0)
        return -1;
    if (!g->tensors[labels].value_limit || g->tensors[labels].value_limit > classes)
        g->tensors[labels].value_limit = classes;
    train_info *info = b->info;
    if (info->n_labels < 4) {
        info->label[info->n_labels] = labels;
        snprintf(info->label_name[info->n_labels], sizeof info->label_name[0], "%s", labels_name);
        info->label_classes[info->n_labels++] = classes;
    }
    int64_t samples = graph_shape_numel(&ls);
    int32_t *starts = malloc((size_t)samples * sizeof *starts + 1);
    if (!starts)
        panic("out of host memory");
    for (int64_t i = 0; i < samples; i++)
        starts[i] = (int32_t)(i * classes);
    graph_shape rs = { .rank = 1, .dims = { samples } };
    int row0 = graph_add_constant(g, "train_sample_rows", GDT_I32, &rs, starts);
    free(starts);
    int64_t flat_labels[1] = { samples }, table[2] = { samples * classes, 1 };
    int rows = op2(b, GRAPH_OP_ADD, op2(b, GRAPH_OP_RESHAPE, labels, ints(b, flat_labels, 1)), row0);
    int picked = op2(b, GRAPH_OP_GATHER, op2(b, GRAPH_OP_RESHAPE, lp, ints(b, table, 2)), rows);
    return op2(b, GRAPH_OP_MUL, reduce_all(b, GRAPH_OP_REDUCESUM, picked), scalar(b, -1.0 / (double)samples));
}

/* One term "kind:OUTPUT:OTHER" of the loss spec. */
static int loss_term(builder *b, const char *term)
{
    graph *g = b->g;
    char kind[32], out[256], other[256];
    const char *c1 = strchr(term, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c1 || !c2 || (size_t)(c1 - term) >= sizeof kind || (size_t)(c2 - c1 - 1) >= sizeof out ||
        strlen(c2 + 1) >= sizeof other || c2 == c1 + 1 || !c2[1]) {
        snprintf(b->err, b->err_size,
                 "%s: loss '%s': expected KIND:OUTPUT:LABELS (softmax-ce, nll) or mse:OUTPUT:TARGET", g->source,
                 term);
        b->failed = true;
        return -1;
    }
    snprintf(kind, sizeof kind, "%.*s", (int)(c1 - term), term);
    snprintf(out, sizeof out, "%.*s", (int)(c2 - c1 - 1), c1 + 1);
    snprintf(other, sizeof other, "%s", c2 + 1);
    int y = graph_find_tensor(g, out);
    if (y < 0) {
        snprintf(b->err, b->err_size, "%s: loss '%s': the model has no tensor '%s'", g->source, term, out);
        b->failed = true;
        return -1;
    }
    const graph_tensor *yt = &g->tensors[y];
    if (!graph_dtype_is_float(yt->dtype)) {
        snprintf(b->err, b->err_size, "%s: loss '%s': '%s' is %s, not a float tensor", g->source, term, out,
                 graph_dtype_name(yt->dtype));
        b->failed = true;
        return -1;
    }
    if (!strcmp(kind, "mse")) {
        int target = label_input(b, other, yt->dtype, &yt->shape);
        int d = op2(b, GRAPH_OP_SUB, y, target);
        return reduce_all(b, GRAPH_OP_REDUCEMEAN, op2(b, GRAPH_OP_MUL, d, d));
    }
    if (strcmp(kind, "softmax-ce") && strcmp(kind, "nll")) {
        snprintf(b->err, b->err_size, "%s: loss '%s': unknown kind '%s' (softmax-ce, nll or mse)", g->source, term,
                 kind);
        b->failed = true;
        return -1;
    }
    if (yt->shape.rank < 1) {
        snprintf(b->err, b->err_size, "%s: loss '%s': '%s' is a scalar, not scores over classes", g->source, term,
                 out);
        b->failed = true;
        return -1;
    }
    int lp = y;
    if (!strcmp(kind, "softmax-ce")) {
        int k = op_n(b, GRAPH_OP_LOGSOFTMAX, &y, 1);
        if (k >= 0)
            graph_set_attr_int(&g->nodes[k], "axis", -1);
        lp = finish(b, k);
    }
    return pick_nll(b, lp, other);
}

/* The loss of spec (terms joined by '+', summed), or the first output. */
static int build_loss(builder *b, const char *spec)
{
    graph *g = b->g;
    if (!spec) {
        if (g->n_outputs < 1 || graph_shape_numel(&g->tensors[g->outputs[0]].shape) != 1) {
            snprintf(b->err, b->err_size, "%s: no loss: name one (--loss) or give the model a scalar first output",
                     g->source);
            b->failed = true;
            return -1;
        }
        return g->outputs[0];
    }
    char *copy = strdup(spec), *save = NULL;
    int loss = -1;
    for (char *t = strtok_r(copy, "+", &save); t && !b->failed; t = strtok_r(NULL, "+", &save)) {
        int term = loss_term(b, t);
        loss = loss < 0 ? term : op2(b, GRAPH_OP_ADD, loss, term);
    }
    free(copy);
    if (b->failed || loss < 0)
        return -1;
    /* the loss by name, as a view (no code) */
    char *name = graph_unique_name(g, "loss");
    int out = graph_add_tensor(g, name);
    free(name);
    return finish(b, graph_add_node(g, GRAPH_OP_IDENTITY, "loss", &loss, 1, &out, 1));
}

/* ---- the optimizer ---------------------------------------------------------------------- */

/* A zero-initialised state variable shaped like w (f32, or f16 kept and
 * read through a Cast to f32), and the f32 value the update reads. */
typedef struct state {
    int var, f32;
} state;

static int cast_to(builder *b, int x, graph_dtype to, const char *rounding);

static state state_of(builder *b, int w, const char *what, train_info *info)
{
    char base[300];
    snprintf(base, sizeof base, "%s/%s", b->g->tensors[w].name, what);
    info->state++;
    graph_shape shape = b->g->tensors[w].shape;   /* adding the variable may move the tensors */
    int v = graph_add_variable(b->g, base, b->state_f16 ? GDT_F16 : GDT_F32, &shape, NULL);
    if (v >= 0) {
        b->g->tensors[v].in_streaming_memory = b->state_offchip;
        b->g->tensors[v].state_of = w;
    }
    return (state){ v, v >= 0 && b->state_f16 ? cast_to(b, v, GDT_F32, "nearest") : v };
}

/* The state's new value (f32), rounded to nearest where it is kept in f16. */
static void set_state(builder *b, state s, int value)
{
    if (s.var >= 0 && value >= 0)
        graph_set_update(b->g, s.var, s.var == s.f32 ? value : cast_to(b, value, GDT_F16, "nearest"));
}

static int mul(builder *b, int a, int c) { return op2(b, GRAPH_OP_MUL, a, c); }
static int add(builder *b, int a, int c) { return op2(b, GRAPH_OP_ADD, a, c); }
static int sub(builder *b, int a, int c) { return op2(b, GRAPH_OP_SUB, a, c); }
static int divide(builder *b, int a, int c) { return op2(b, GRAPH_OP_DIV, a, c); }
static int scaled(builder *b, int x, double s) { return s == 1 ? x : mul(b, x, scalar(b, s)); }

/* num / den where both norms are positive, else 1 (the trust ratio's guard). */
static int ratio_or_one(builder *b, int num, int den)
{
    int ok = op2(b, GRAPH_OP_GREATER, mul(b, num, den), scalar(b, 0));
    int in[3] = { ok, divide(b, num, add(b, den, scalar(b, 1e-30))), scalar(b, 1) };
    return finish(b, op_n(b, GRAPH_OP_WHERE, in, 3));
}

typedef struct adam_step {
    int c1, c2;          /* 1 / (1 - beta^t), this step's bias corrections */
} adam_step;

/* The step's bias corrections, from two scalar variables beta1^t and beta2^t. */
static adam_step adam_corrections(builder *b, const train_options *o, train_info *info)
{
    graph_shape s = { .rank = 0 };
    float one = 1;
    int p1 = graph_add_variable(b->g, "adam/beta1_power", GDT_F32, &s, &one);
    int p2 = graph_add_variable(b->g, "adam/beta2_power", GDT_F32, &s, &one);
    info->state += 2;
    int n1 = scaled(b, p1, o->beta1), n2 = scaled(b, p2, o->beta2);
    graph_set_update(b->g, p1, n1);
    graph_set_update(b->g, p2, n2);
    return (adam_step){ .c1 = divide(b, scalar(b, 1), sub(b, scalar(b, 1), n1)),
                        .c2 = divide(b, scalar(b, 1), sub(b, scalar(b, 1), n2)) };
}

/* Adam's and LAMB's moments of weight `named` (value w, f32) updated and
 * the update's direction made from gradient g, in one AdamUpdater node
 * (ops.def; the element-wise steps it stands for, rounded as they would
 * be: gw = g (+ decay w for Adam), m = beta1 m + (1 - beta1) gw,
 * v = beta2 v + (1 - beta2) gw gw, (m c1) / (sqrt(v c2) + epsilon)
 * (+ decay w for LAMB)); an f16 weight is read as it is. */
static int adam_direction(builder *b, const train_options *o, int w, int named, int g, const adam_step *as,
                          train_info *info)
{
    state m = state_of(b, named, "first_moment", info), v = state_of(b, named, "second_moment", info);
    bool decay = o->weight_decay != 0;
    int in[6] = { g, m.f32, v.f32, as->c1, as->c2, b->g->tensors[named].dtype == GDT_F16 ? named : w };
    for (int i = 0; i < 6; i++)
        if (in[i] < 0)
            b->failed = true;
    if (b->failed)
        return -1;
    static const char *const what[3] = { "train_AdamUpdater", "train_AdamUpdater/first_moment",
                                         "train_AdamUpdater/second_moment" };
    int out[3];
    for (int i = 0; i < 3; i++) {
        char *name = graph_unique_name(b->g, what[i]);
        out[i] = graph_add_tensor(b->g, name);
        free(name);
    }
    int k = graph_add_node(b->g, GRAPH_OP_ADAM_UPDATER, "", in, decay ? 6 : 5, out, 3);
    graph_node *n = &b->g->nodes[k];
    graph_set_attr_float(n, "beta1", o->beta1);
    graph_set_attr_float(n, "beta2", o->beta2);
    graph_set_attr_float(n, "epsilon", o->epsilon);
    if (decay) {
        graph_set_attr_float(n, "weight_decay", o->weight_decay);
        graph_set_attr_string(n, "decay", o->optimizer == TRAIN_LAMB ? "decoupled" : "l2");
    }
    if (finish(b, k) < 0)
        return -1;
    set_state(b, m, out[1]);
    set_state(b, v, out[2]);
    return out[0];
}

/* The new value of weight w from its gradient g (loss scale divided out). */
static int update_weight(builder *b, const train_options *o, int w, int named, int g, const adam_step *as,
                         train_info *info)
{
    if (o->optimizer == TRAIN_SGD || o->optimizer == TRAIN_LARS) {
        int gw = o->weight_decay ? add(b, g, scaled(b, w, o->weight_decay)) : g;
        if (o->optimizer == TRAIN_LARS) {
            int wn = reduce_all(b, GRAPH_OP_REDUCEL2, w), gn = reduce_all(b, GRAPH_OP_REDUCEL2, g);
            int trust = scaled(b, ratio_or_one(b, wn, add(b, gn, scaled(b, wn, o->weight_decay))), o->lars_eta);
            gw = mul(b, gw, trust);
        }
        /* w + (-lr) g (equal to w - lr g in f32: negation is exact), w
         * first, so that the sum is written over w (lower_elementwise.c) */
        if (!o->momentum)
            return add(b, w, scaled(b, gw, -o->lr));
        state v = state_of(b, named, "momentum", info);
        int vn = add(b, scaled(b, v.f32, o->momentum), gw);
        set_state(b, v, vn);
        return sub(b, w, scaled(b, vn, o->lr));
    }
    int dir = adam_direction(b, o, w, named, g, as, info);
    if (o->optimizer == TRAIN_LAMB) {
        /* the weight's norm from its own Cast of an f16 weight, so that
         * the update's Cast is read by the update alone (fused into a
         * scaled add of the f16 weight, fusion_scaled_add) */
        int wf = b->g->tensors[named].dtype == GDT_F16 ? cast_to(b, named, GDT_F32, "nearest") : w;
        dir = mul(b, dir, ratio_or_one(b, reduce_all(b, GRAPH_OP_REDUCEL2, wf), reduce_all(b, GRAPH_OP_REDUCEL2, dir)));
    }
    return sub(b, w, scaled(b, dir, o->lr));
}

/* ---- f16 weights ----------------------------------------------------------------------- */

/* Cast x to `to` (rounding "nearest" or "stochastic"). */
static int cast_to(builder *b, int x, graph_dtype to, const char *rounding)
{
    int k = op_n(b, GRAPH_OP_CAST, &x, 1);
    if (k < 0)
        return -1;
    graph_set_attr_int(&b->g->nodes[k], "to", to);
    if (strcmp(rounding, "nearest"))
        graph_set_attr_string(&b->g->nodes[k], "rounding", rounding);
    return finish(b, k);
}

/* A lookup (Gather node k) of an f16 table: its rows gathered as f16, then
 * cast to f32 for its readers (Gather(Cast(W)) = Cast(Gather(W)), a copy
 * and an exact widening), so that the table stays f16. */
static void gather_rows_f16(builder *b, int k)
{
    graph *g = b->g;
    int out = g->nodes[k].outputs[0];
    char name[300];
    snprintf(name, sizeof name, "%s/f16", g->tensors[out].name);
    char *unique = graph_unique_name(g, name);
    int rows = graph_add_tensor(g, unique);
    free(unique);
    g->nodes[k].outputs[0] = rows;
    g->tensors[rows].producer = k;
    g->tensors[out].producer = -1;
    int c = graph_add_node(g, GRAPH_OP_CAST, "", &rows, 1, &out, 1);
    graph_set_attr_int(&g->nodes[c], "to", GDT_F32);
    char err[512];
    if (!graph_infer_node(g, &g->nodes[k], err, sizeof err) || !graph_infer_node(g, &g->nodes[c], err, sizeof err)) {
        snprintf(b->err, b->err_size, "%s", err);
        b->failed = true;
    }
}

/* Weight w stored as f16 (its values rounded to nearest): a variable of
 * the forward phase's Cast to f32 read wherever w was, so the forward and
 * backward passes are the same f32 graph (the matmuls read the f16 weight
 * itself, lower_matmul.c; a lookup gathers f16 rows, gather_rows_f16); the
 * value the update starts from. */
static int weight_to_f16(builder *b, int w)
{
    graph *g = b->g;
    graph_tensor *x = &g->tensors[w];
    size_t n = (size_t)graph_shape_numel(&x->shape);
    f16_t *h = malloc((n ? n : 1) * sizeof *h);
    if (!h)
        panic("out of host memory");
    for (size_t i = 0; i < n; i++)
        h[i] = fp16_from_f32(((const float *)x->init)[i]);
    free(x->init);
    x->init = h;
    x->dtype = GDT_F16;
    enum graph_phase phase = g->phase;
    g->phase = GRAPH_PHASE_FORWARD;
    int before = g->n_nodes, w32 = cast_to(b, w, GDT_F32, "nearest");
    if (w32 < 0) {
        g->phase = phase;
        return -1;
    }
    for (int k = 0; k < before; k++) {
        if (g->nodes[k].op == GRAPH_OP_GATHER && g->nodes[k].inputs[0] == w && g->nodes[k].inputs[1] != w) {
            gather_rows_f16(b, k);
            continue;
        }
        for (int i = 0; i < g->nodes[k].n_inputs; i++)
            if (g->nodes[k].inputs[i] == w)
                g->nodes[k].inputs[i] = w32;
    }
    g->phase = phase;
    if (!graph_consumers(g, w32, NULL, 0))
        g->nodes[g->tensors[w32].producer].removed = true;   /* only looked up: no f32 table */
    return b->failed ? -1 : w32;
}

/* ---- the step ------------------------------------------------------------------------- */

/* BatchNormalization in training mode with its running statistics among
 * the outputs: the statistics become variables updated each step. */
static void running_statistics(graph *g)
{
    for (int k = 0; k < g->n_nodes; k++) {
        const graph_node *n = &g->nodes[k];
        if (n->op != GRAPH_OP_BATCHNORM || !graph_attr_int(n, "training_mode"))
            continue;
        for (int i = 1; i <= 2 && i < n->n_outputs; i++) {
            int stat = n->inputs[2 + i], nv = n->outputs[i];
            if (nv >= 0 && g->tensors[stat].data) {
                graph_make_variable(g, stat);
                graph_set_update(g, stat, nv);
            }
        }
    }
}

/* Candidates: float constants of two or more elements. */
static int weight_candidates(const graph *g, int *wrt)
{
    int n = 0;
    for (int t = 0; t < g->n_tensors; t++) {
        const graph_tensor *x = &g->tensors[t];
        if (x->data && graph_dtype_is_float(x->dtype) && graph_shape_numel(&x->shape) >= 2)
            wrt[n++] = t;
    }
    return n;
}

static bool anchor_gradient(builder *b, int w, int grad)
{
    char name[300];
    snprintf(name, sizeof name, "Gradient___%s", b->g->tensors[w].name);
    if (graph_find_tensor(b->g, name) >= 0) {
        snprintf(b->err, b->err_size, "%s: the model already has a tensor '%s'", b->g->source, name);
        return false;
    }
    int out = graph_add_tensor(b->g, name);
    int k = graph_add_node(b->g, GRAPH_OP_IDENTITY, "", &grad, 1, &out, 1);
    if (finish(b, k) < 0)
        return false;
    graph_add_output(b->g, out);
    return true;
}

/* The gradients (grads[0 .. n), -1 none) summed over the replicas by one
 * ReplicatedAllReduce node, replaced by its outputs; those that are not
 * f32 are left for the update to refuse. */
static bool all_reduce_gradients(builder *b, uint32_t replicas, int *grads, int n)
{
    int *in = malloc(((size_t)n + 1) * sizeof *in), *out = malloc(((size_t)n + 1) * sizeof *out);
    int *at = malloc(((size_t)n + 1) * sizeof *at), m = 0;
    if (!in || !out || !at)
        panic("out of host memory");
    for (int i = 0; i < n; i++)
        if (grads[i] >= 0 && b->g->tensors[grads[i]].dtype == GDT_F32) {
            char *name = graph_unique_name(b->g, "all_reduced");
            out[m] = graph_add_tensor(b->g, name);
            free(name);
            at[m] = i;
            in[m++] = grads[i];
        }
    bool ok = true;
    if (m) {
        int k = graph_add_node(b->g, GRAPH_OP_ALL_REDUCE, "", in, m, out, m);
        graph_set_attr_int(&b->g->nodes[k], "replicas", replicas);
        ok = graph_infer_node(b->g, &b->g->nodes[k], b->err, b->err_size);
        for (int j = 0; ok && j < m; j++)
            grads[at[j]] = out[j];
    }
    free(in);
    free(out);
    free(at);
    return ok;
}

bool train_graph(graph *g, const train_options *o, train_info *info, char *err, size_t err_size)
{
    train_info dummy;
    if (!info)
        info = &dummy;
    memset(info, 0, sizeof *info);
    builder b = { .g = g, .info = info, .err = err, .err_size = err_size,
                  .state_offchip = o->optimizer_state_offchip, .state_f16 = o->f16_optimizer_state };
    err[0] = 0;
    g->phase = GRAPH_PHASE_FORWARD;
    fusion_gelu(g);
    int loss = build_loss(&b, o->loss);
    if (loss < 0) {
        if (!err[0])
            snprintf(err, err_size, "%s: the loss could not be built", g->source);
        return false;
    }
    if (graph_shape_numel(&g->tensors[loss].shape) != 1)
        return snprintf(err, err_size, "%s: the loss '%s' is not a scalar", g->source, g->tensors[loss].name), false;
    for (int i = 0; i < g->n_outputs; i++)
        g->tensors[g->outputs[i]].is_output = false;
    g->n_outputs = 0;
    graph_add_output(g, loss);
    info->loss = loss;
    info->forward_nodes = g->n_nodes;
    running_statistics(g);

    int *wrt = malloc((size_t)g->n_tensors * sizeof *wrt + 1), *grads = malloc((size_t)g->n_tensors * sizeof *grads + 1);
    if (!wrt || !grads)
        panic("out of host memory");
    int n_wrt = weight_candidates(g, wrt);
    bool ok = autodiff_gradients(g, loss, o->loss_scale, wrt, n_wrt, grads, err, err_size);
    info->backward_nodes = g->n_nodes - info->forward_nodes;
    if (ok) {
        g->phase = GRAPH_PHASE_UPDATE;
        if (o->replicas > 1)
            ok = all_reduce_gradients(&b, o->replicas, grads, n_wrt);
        adam_step as = { -1, -1 };
        bool adam = o->optimizer == TRAIN_ADAM || o->optimizer == TRAIN_LAMB;
        for (int i = 0; i < n_wrt && ok && !b.failed; i++) {
            if (grads[i] < 0)
                continue;
            int w = wrt[i];
            graph_make_variable(g, w);
            info->weights++;
            info->weight_elements += graph_shape_numel(&g->tensors[w].shape);
            if (o->anchor_gradients)
                ok = anchor_gradient(&b, w, grads[i]);
            if (adam && as.c1 < 0)
                as = adam_corrections(&b, o, info);
            int gr = grads[i];
            if (g->tensors[gr].dtype != GDT_F32 || g->tensors[w].dtype != GDT_F32) {
                snprintf(err, err_size, "%s: weight '%s' is %s: the optimizer updates f32 weights", g->source,
                         g->tensors[w].name, graph_dtype_name(g->tensors[w].dtype));
                ok = false;
                break;
            }
            /* An f16 weight: updated in f32 from its value, the result
             * rounded to f16 (stochastically unless asked not to). */
            int value = w;
            if (o->f16_weights) {
                if (weight_to_f16(&b, w) < 0)
                    break;
                value = cast_to(&b, w, GDT_F32, "nearest");
            }
            /* the loss scale divided out, and the replicas' sum made their mean */
            double divide = o->loss_scale * (o->replicas > 1 ? o->replicas : 1) *
                            (o->micro_batches > 1 ? o->micro_batches : 1);
            if (divide != 1)
                gr = scaled(&b, gr, 1 / divide);
            int wn = update_weight(&b, o, value, w, gr, &as, info);
            if (wn >= 0 && o->f16_weights)
                wn = cast_to(&b, wn, GDT_F16, o->stochastic_rounding ? "stochastic" : "nearest");
            if (wn >= 0)
                graph_set_update(g, w, wn);
        }
        if (ok && !b.failed && info->weights == 0) {
            snprintf(err, err_size, "%s: the loss depends on no weight: nothing to train", g->source);
            ok = false;
        }
    }
    if (b.failed)
        ok = false;
    info->update_nodes = g->n_nodes - info->forward_nodes - info->backward_nodes;
    g->phase = GRAPH_PHASE_FORWARD;
    free(wrt);
    free(grads);
    if (!ok && !err[0])
        snprintf(err, err_size, "%s: the training step could not be built", g->source);
    return ok;
}

/* Bytes of tensor t. */
static uint64_t tensor_bytes(const graph *g, int t)
{
    return (uint64_t)graph_shape_numel(&g->tensors[t].shape) * graph_dtype_size(g->tensors[t].dtype);
}

/* A backward node writing at least SINK_GROWTH times the bytes it reads
 * (of tensors computed in the step: constants and variables stay anyway)
 * runs just before the first forward or backward node reading its
 * outputs (the end of the backward pass when only updates read them):
 * its inputs wait for it instead of its outputs waiting for their reader.
 * BERT's masked-LM decoder's weight gradient, the word embeddings' size
 * from 40 rows of activations and gradients, then waits for the
 * embedding's scatter-add at the end of the backward pass as those rows,
 * not as a table.  order[0 .. count): forward then backward nodes, moved
 * here; at: room for a position per node. */
#define SINK_GROWTH 4

static void sink_growing_nodes(const graph *g, int *order, int count, int *at)
{
    for (int q = 0; q < count; q++)
        at[order[q]] = q;
    for (int q = count - 1; q >= 0; q--) {
        int k = order[q];
        const graph_node *nd = &g->nodes[k];
        if (nd->phase != GRAPH_PHASE_BACKWARD || graph_node_folded(g, nd))
            continue;
        uint64_t in = 0, out = 0;
        for (int i = 0; i < nd->n_inputs; i++) {
            int t = nd->inputs[i];
            if (t >= 0 && !g->tensors[t].data && !g->tensors[t].is_variable)
                in += tensor_bytes(g, t);
        }
        for (int i = 0; i < nd->n_outputs; i++)
            if (nd->outputs[i] >= 0)
                out += tensor_bytes(g, nd->outputs[i]);
        if (out < SINK_GROWTH * in || out == 0)
            continue;
        int first = count;                  /* the first forward or backward reader */
        bool output = false;
        for (int i = 0; i < nd->n_outputs; i++) {
            int t = nd->outputs[i];
            if (t < 0)
                continue;
            output |= g->tensors[t].is_output;
            for (int j = 0; j < g->n_nodes; j++) {
                if (g->nodes[j].phase == GRAPH_PHASE_UPDATE || at[j] <= q)
                    continue;
                for (int r = 0; r < g->nodes[j].n_inputs; r++)
                    if (g->nodes[j].inputs[r] == t && at[j] < first)
                        first = at[j];
            }
        }
        if (output || first <= q + 1)
            continue;
        memmove(&order[q], &order[q + 1], (size_t)(first - 1 - q) * sizeof *order);
        order[first - 1] = k;
        for (int r = q; r < first; r++)
            at[order[r]] = r;
    }
}

/* Updates that could run at backward position after[k] wait, together,
 * until the gradients they read come to a sixteenth of all the step's
 * (at most UPDATE_BATCH_BYTES; or the backward pass ends): they then run
 * in one stretch of update supersteps, the weights on different tiles at
 * once, instead of a stretch each between the backward pass's; the
 * gradients waiting hold at most about that much memory.  (ResNet-50 at
 * batch 2 at 64 x 64: 12 stretches, 1.2% fewer cycles than 163.) */
#define UPDATE_BATCH_BYTES (8u << 20)
#define UPDATE_BATCHES 16

/* The bytes of update node k's inputs the backward pass computed. */
static uint64_t gradient_bytes(const graph *g, int k)
{
    uint64_t b = 0;
    const graph_node *nd = &g->nodes[k];
    for (int i = 0; i < nd->n_inputs; i++) {
        int t = nd->inputs[i], p = t >= 0 ? g->tensors[t].producer : -1;
        if (p >= 0 && g->nodes[p].phase == GRAPH_PHASE_BACKWARD)
            b += tensor_bytes(g, t);
    }
    return b;
}

static void batch_updates(const graph *g, int *after, int fb)
{
    int n = g->n_nodes;
    uint64_t all = 0;
    for (int k = 0; k < n; k++)
        if (g->nodes[k].phase == GRAPH_PHASE_UPDATE)
            all += gradient_bytes(g, k);
    uint64_t batch = all / UPDATE_BATCHES < UPDATE_BATCH_BYTES ? all / UPDATE_BATCHES : UPDATE_BATCH_BYTES;
    int *by_at = malloc(((size_t)n + 1) * sizeof *by_at), *first = calloc((size_t)fb + 2, sizeof *first);
    if (!by_at || !first)
        panic("out of host memory");
    /* the update nodes by position (counting sort, node order kept) */
    for (int k = 0; k < n; k++)
        if (g->nodes[k].phase == GRAPH_PHASE_UPDATE)
            first[after[k] + 2]++;
    for (int q = 1; q <= fb + 1; q++)
        first[q] += first[q - 1];
    int *fill = malloc(((size_t)fb + 2) * sizeof *fill);
    if (!fill)
        panic("out of host memory");
    memcpy(fill, first, ((size_t)fb + 2) * sizeof *fill);
    for (int k = 0; k < n; k++)
        if (g->nodes[k].phase == GRAPH_PHASE_UPDATE)
            by_at[fill[after[k] + 1]++] = k;
    uint64_t pending = 0;
    int from = 0;                         /* the first waiting update in by_at */
    for (int q = -1; q < fb; q++) {
        int end = first[q + 2];
        for (int u = first[q + 1]; u < end; u++)
            pending += gradient_bytes(g, by_at[u]);
        if (pending >= batch || q == fb - 1) {
            for (int u = from; u < end; u++)
                after[by_at[u]] = q;
            from = end;
            pending = 0;
        }
    }
    free(by_at);
    free(first);
    free(fill);
}

/* The order the nodes run in: the forward pass, then the backward pass,
 * each in its present order, with each update node moved up to just after
 * the last node it waits for — the producers of its inputs, and every
 * forward or backward node reading a variable it reads (the weight is
 * overwritten by its update) — but not before the backward pass's first
 * node that runs code (so the phases come forward, backward, update).  A weight's
 * update then runs as soon as its gradient is complete, as PopART
 * schedules its optimizer ops, and the gradient's storage goes back to
 * its tiles there instead of staying till the end of the step.  With
 * delay, every update node after the backward pass (PopART's
 * delayVarUpdates).  Still a topological order: an update node follows
 * what it reads, and no forward or backward node reads an update's
 * output.  Backward nodes that grow much are sunk first
 * (sink_growing_nodes). */
static void order_steps(graph *g, bool delay)
{
    int n = g->n_nodes, m = 0;
    graph_node *sorted = malloc((size_t)n * sizeof *sorted + 1);
    int *pos = malloc((size_t)n * sizeof *pos + 1);          /* per node: its place among forward and backward */
    int *after = malloc((size_t)n * sizeof *after + 1);      /* per update node: the place it follows */
    int *last_read = malloc((size_t)g->n_tensors * sizeof *last_read + 1);
    if (!sorted || !pos || !after || !last_read)
        panic("out of host memory");
    int fb = 0, first_backward = -1;
    int *fb_order = malloc((size_t)n * sizeof *fb_order + 1);
    if (!fb_order)
        panic("out of host memory");
    for (int p = GRAPH_PHASE_FORWARD; p <= GRAPH_PHASE_BACKWARD; p++)
        for (int k = 0; k < n; k++)
            if (g->nodes[k].phase == (enum graph_phase)p)
                fb_order[fb++] = k;
    sink_growing_nodes(g, fb_order, fb, pos);
    for (int q = 0; q < fb; q++) {
        int k = fb_order[q];
        if (g->nodes[k].phase == GRAPH_PHASE_BACKWARD && first_backward < 0 && !graph_node_folded(g, &g->nodes[k]))
            first_backward = q;
        pos[k] = q;
    }
    free(fb_order);
    if (first_backward < 0)
        first_backward = fb - 1;
    for (int t = 0; t < g->n_tensors; t++)
        last_read[t] = -1;
    for (int k = 0; k < n; k++)
        if (g->nodes[k].phase != GRAPH_PHASE_UPDATE)
            for (int i = 0; i < g->nodes[k].n_inputs; i++) {
                int t = g->nodes[k].inputs[i];
                if (t >= 0 && pos[k] > last_read[t])
                    last_read[t] = pos[k];
            }
    for (int k = 0; k < n; k++) {
        const graph_node *u = &g->nodes[k];
        if (u->phase != GRAPH_PHASE_UPDATE)
            continue;
        int at = first_backward;
        for (int i = 0; i < u->n_inputs; i++) {
            int t = u->inputs[i];
            if (t < 0)
                continue;
            int p = g->tensors[t].producer;
            if (p >= 0) {
                int w = g->nodes[p].phase == GRAPH_PHASE_UPDATE ? after[p] : pos[p];
                at = w > at ? w : at;
            }
            if (g->tensors[t].is_variable && last_read[t] > at)
                at = last_read[t];
        }
        after[k] = delay ? fb - 1 : at;
    }
    if (!delay)
        batch_updates(g, after, fb);
    /* forward and backward in their order, each followed by the updates
     * that wait for it, in their order (bucketed by after[] + 1) */
    int *start = calloc((size_t)fb + 2, sizeof *start), *fb_node = malloc((size_t)fb * sizeof *fb_node + 1);
    int *upd = malloc((size_t)n * sizeof *upd + 1);
    if (!start || !fb_node || !upd)
        panic("out of host memory");
    for (int k = 0; k < n; k++) {
        if (g->nodes[k].phase != GRAPH_PHASE_UPDATE)
            fb_node[pos[k]] = k;
        else
            start[after[k] + 2]++;
    }
    for (int q = 1; q <= fb + 1; q++)
        start[q] += start[q - 1];
    for (int k = 0; k < n; k++)
        if (g->nodes[k].phase == GRAPH_PHASE_UPDATE)
            upd[start[after[k] + 1]++] = k;
    /* start[q + 1] is now the end of bucket q + 1; bucket q + 1 began
     * where bucket q ended */
    for (int q = -1, u = 0; q < fb; q++) {
        if (q >= 0)
            sorted[m++] = g->nodes[fb_node[q]];
        for (; u < start[q + 1]; u++)
            sorted[m++] = g->nodes[upd[u]];
    }
    if (m != n)
        panic("order_steps: %d of %d nodes placed", m, n);
    memcpy(g->nodes, sorted, (size_t)n * sizeof *sorted);
    free(sorted);
    free(pos);
    free(after);
    free(last_read);
    free(start);
    free(fb_node);
    free(upd);
    for (int k = 0; k < g->n_nodes; k++)
        for (int i = 0; i < g->nodes[k].n_outputs; i++)
            if (g->nodes[k].outputs[i] >= 0)
                g->tensors[g->nodes[k].outputs[i]].producer = k;
}

/* Whether t is some variable's new value. */
/* A table's gradient summed from a scatter-add and another term (BERT's
 * word embeddings, tied to the masked-LM decoder: the decoder's weight
 * gradient plus the lookup's): Add(a, GatherGrad(dY, ids)), the
 * GatherGrad's result read by the Add alone, becomes GatherGrad(dY, ids,
 * a) in the Add's place, which the lowering scatters into a's storage
 * where a is not read later (PopLibs' multiUpdateAdd into the gradient):
 * no table-sized temporary beside the sum.  Returns how many. */
static int scatter_into_sums(graph *g)
{
    int fused = 0;
    for (int k = 0; k < g->n_nodes; k++) {
        graph_node *n = &g->nodes[k];
        if (n->removed || n->op != GRAPH_OP_ADD || n->n_inputs != 2 || n->inputs[0] < 0 || n->inputs[1] < 0)
            continue;
        for (int side = 0; side < 2; side++) {
            int s = n->inputs[side], a = n->inputs[1 - side], p = g->tensors[s].producer;
            const graph_tensor *ts = &g->tensors[s], *ta = &g->tensors[a], *to = &g->tensors[n->outputs[0]];
            if (p < 0 || g->nodes[p].removed || g->nodes[p].op != GRAPH_OP_GATHERGRAD || g->nodes[p].n_inputs != 2 ||
                s == a || ts->is_output || graph_consumers(g, s, NULL, 2) != 1 || ta->dtype != ts->dtype ||
                to->dtype != ts->dtype || !graph_shape_equal(&ta->shape, &ts->shape) ||
                !graph_shape_equal(&to->shape, &ts->shape) || graph_is_update(g, s))
                continue;
            int ins[3] = { g->nodes[p].inputs[0], g->nodes[p].inputs[1], a }, out = n->outputs[0];
            graph_replace_node(g, k, GRAPH_OP_GATHERGRAD, NULL, ins, 3, &out, 1);
            graph_copy_attrs(&g->nodes[k], &g->nodes[p]);
            g->nodes[p].removed = true;
            fused++;
            break;
        }
    }
    if (fused)
        graph_compact(g);
    return fused;
}

bool train_prepare(graph *g, const train_options *o, bool fuse, train_info *info, char *err, size_t err_size)
{
    if (!train_graph(g, o, info, err, err_size) || !graph_sort(g, err, err_size) ||
        !graph_infer_all(g, true, err, err_size))
        return false;
    if (fuse && !fusion_run_all(g, NULL, err, err_size))
        return false;
    if (!decompose_graph(g, NULL, err, err_size))
        return false;
    /* What the backward pass recomputes of the forward pass (a
     * normalisation's statistics) is taken from the forward pass. */
    merge_common_nodes(g);
    scatter_into_sums(g);
    if (fuse && fusion_scaled_add(g) && !graph_infer_all(g, false, err, err_size))
        return false;
    g->phase = GRAPH_PHASE_FORWARD;
    if (o->stages > 1 || o->micro_batches > 1)
        return train_pipeline(g, o->stages, o->micro_batches, o->recompute, err, err_size);
    order_steps(g, o->delay_updates);
    return true;
}
