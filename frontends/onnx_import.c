/*
 * onnx_import.c — ModelProto to graph IR, through the protobuf-c bindings
 * generated from onnx.proto at build time (frontends/onnx.cmake).
 *
 * Data in raw_data is little-endian, as ONNX specifies; it is copied as it
 * is, which is right on the little-endian hosts ipusim builds on.
 */
#include "onnx_import.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ops_impl.h"
#include "sim/base/diag.h"
#include "sim/base/fileio.h"

#ifdef IPUSIM_HAVE_ONNX

#include "onnx.pb-c.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "raw_data is copied as little-endian");

bool onnx_available(void)
{
    return true;
}

static const char *str(const char *s)
{
    return s ? s : "";
}

/* Builds one import: the file's name and the first error. */
typedef struct importer {
    const char *source;
    const onnx_import_options *opt;
    enum onnx_status status;
    char *err;
    size_t err_size;
    graph *g;
} importer;

static bool fail(importer *im, enum onnx_status status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(importer *im, enum onnx_status status, const char *fmt, ...)
{
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(im->err, im->err_size, "%s: %s", im->source, msg);
    im->status = status;
    return false;
}

static const char *node_ref(const Onnx__NodeProto *np, size_t index, char *buf, size_t size)
{
    if (np->name && np->name[0])
        snprintf(buf, size, "node '%s'", np->name);
    else
        snprintf(buf, size, "node #%zu", index);
    return buf;
}

/* ---- tensors ----------------------------------------------------------------------- */

static bool dtype_supported(int32_t t)
{
    return t > 0 && t <= GDT_BF16 && graph_dtype_size((graph_dtype)t) > 0;
}

/* memcpy that allows an empty source (protobuf-c leaves empty fields NULL). */
static void copy_bytes(void *dst, const void *src, size_t n)
{
    if (n)
        memcpy(dst, src, n);
}

/* How much data tp carries for dtype t: *have bytes of raw_data, or values
 * of the typed field that holds t (named in *field), and *want, what the
 * shape's count elements need in the same unit. */
static void tensor_data_present(const Onnx__TensorProto *tp, int32_t t, uint64_t count, uint64_t *have,
                                uint64_t *want, const char **field)
{
    *want = count;
    if (tp->has_raw_data) {
        *have = tp->raw_data.len;
        *want = count * graph_dtype_size((graph_dtype)t);   /* at most 2^32 x 8 */
        *field = "raw_data bytes";
        return;
    }
    switch (t) {
    case GDT_F32: *have = tp->n_float_data; *field = "float_data values"; break;
    case GDT_F64: *have = tp->n_double_data; *field = "double_data values"; break;
    case GDT_I64: *have = tp->n_int64_data; *field = "int64_data values"; break;
    case GDT_U32: case GDT_U64: *have = tp->n_uint64_data; *field = "uint64_data values"; break;
    /* bool, 8/16/32-bit integers, f16 and bf16 (as bit patterns) */
    default: *have = tp->n_int32_data; *field = "int32_data values"; break;
    }
}

/* Copy tp's count values of dtype t into buf; their number was checked. */
static void copy_tensor_data(const Onnx__TensorProto *tp, int32_t t, uint64_t count, void *buf)
{
    if (tp->has_raw_data) {
        copy_bytes(buf, tp->raw_data.data, tp->raw_data.len);
        return;
    }
    switch (t) {
    case GDT_F32: copy_bytes(buf, tp->float_data, count * sizeof(float)); break;
    case GDT_F64: copy_bytes(buf, tp->double_data, count * sizeof(double)); break;
    case GDT_I64: copy_bytes(buf, tp->int64_data, count * sizeof(int64_t)); break;
    case GDT_U32: case GDT_U64:
        for (size_t i = 0; i < count; i++)
            graph_store_i64((graph_dtype)t, buf, i, (int64_t)tp->uint64_data[i]);
        break;
    default:
        for (size_t i = 0; i < count; i++)
            graph_store_i64(t == GDT_F16 || t == GDT_BF16 ? GDT_U16 : (graph_dtype)t, buf, i, tp->int32_data[i]);
        break;
    }
}

/* A TensorProto's dtype, shape and data (malloc'd into *data).  what names
 * it in messages ("initializer 'W'").  The data present must match the
 * shape before anything is allocated: a small file may claim a huge one. */
static bool convert_tensor(importer *im, const Onnx__TensorProto *tp, const char *what, graph_dtype *dtype,
                           graph_shape *shape, void **data)
{
    *data = NULL;
    if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
        const char *file = "?";
        for (size_t i = 0; i < tp->n_external_data; i++)
            if (!strcmp(str(tp->external_data[i]->key), "location"))
                file = str(tp->external_data[i]->value);
        return fail(im, ONNX_UNSUPPORTED,
                    "%s keeps its data in an external file ('%s'); ipusim reads self-contained .onnx files only",
                    what, file);
    }
    if (tp->segment)
        return fail(im, ONNX_UNSUPPORTED, "%s is segmented, which ipusim does not support", what);
    int32_t t = tp->data_type;
    if (!dtype_supported(t))
        return fail(im, ONNX_UNSUPPORTED, "%s has dtype %s, which ipusim does not support", what,
                    t > 0 && t <= GDT_BF16 ? graph_dtype_name((graph_dtype)t) : "undefined");
    if (tp->n_dims > GRAPH_MAX_RANK)
        return fail(im, ONNX_UNSUPPORTED, "%s has rank %zu (ipusim supports up to %d)", what, tp->n_dims,
                    GRAPH_MAX_RANK);
    graph_shape s = { .rank = (int)tp->n_dims };
    uint64_t count = 1;
    for (size_t i = 0; i < tp->n_dims; i++) {
        if (tp->dims[i] < 0)
            return fail(im, ONNX_INVALID, "%s has dimension %lld", what, (long long)tp->dims[i]);
        s.dims[i] = tp->dims[i];
        if (__builtin_mul_overflow(count, (uint64_t)tp->dims[i], &count) || count > GRAPH_MAX_ELEMENTS)
            return fail(im, ONNX_UNSUPPORTED, "%s has more than 2^32 elements", what);
    }
    uint64_t have, want;
    const char *field;
    tensor_data_present(tp, t, count, &have, &want, &field);
    if (have != want) {
        char sbuf[200];
        return fail(im, ONNX_INVALID, "%s has %llu %s for %s%s (%llu expected)", what, (unsigned long long)have,
                    field, graph_dtype_name((graph_dtype)t), graph_shape_str(&s, sbuf, sizeof sbuf),
                    (unsigned long long)want);
    }
    void *buf = malloc((size_t)count * graph_dtype_size((graph_dtype)t) + 1);
    if (!buf)
        return fail(im, ONNX_INVALID, "%s: out of memory for %llu elements", what, (unsigned long long)count);
    copy_tensor_data(tp, t, count, buf);
    if (t == GDT_BOOL)
        for (size_t i = 0; i < count; i++)
            ((uint8_t *)buf)[i] = ((uint8_t *)buf)[i] != 0;
    *dtype = (graph_dtype)t;
    *shape = s;
    *data = buf;
    return true;
}

/* ---- value infos ------------------------------------------------------------------------- */

/* The declared type of a graph input or output; dims are -1 where not a
 * number (symbolic dims are looked up in the bindings when bind). */
static bool value_info_type(importer *im, const Onnx__ValueInfoProto *vi, const char *what, bool bind,
                            graph_dtype *dtype, graph_shape *shape, bool *has_shape)
{
    const Onnx__TypeProto *tp = vi->type;
    *has_shape = false;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type) {
        if (!tp)
            return fail(im, ONNX_INVALID, "%s '%s' has no type", what, str(vi->name));
        return fail(im, ONNX_UNSUPPORTED, "%s '%s' is not a tensor (sequences, maps and optionals are not supported)",
                    what, str(vi->name));
    }
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    *dtype = tt->has_elem_type ? (graph_dtype)tt->elem_type : GDT_UNDEFINED;
    if (*dtype != GDT_UNDEFINED && !dtype_supported(tt->elem_type))
        return fail(im, ONNX_UNSUPPORTED, "%s '%s' has dtype %s, which ipusim does not support", what,
                    str(vi->name), tt->elem_type <= GDT_BF16 && tt->elem_type > 0 ?
                    graph_dtype_name((graph_dtype)tt->elem_type) : "unknown");
    if (!tt->shape)
        return true;
    if (tt->shape->n_dim > GRAPH_MAX_RANK)
        return fail(im, ONNX_UNSUPPORTED, "%s '%s' has rank %zu (ipusim supports up to %d)", what, str(vi->name),
                    tt->shape->n_dim, GRAPH_MAX_RANK);
    shape->rank = (int)tt->shape->n_dim;
    *has_shape = true;
    for (size_t i = 0; i < tt->shape->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
        shape->dims[i] = -1;
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            if (d->dim_value < 0)
                return fail(im, ONNX_INVALID, "%s '%s' has dimension %lld", what, str(vi->name),
                            (long long)d->dim_value);
            shape->dims[i] = d->dim_value;
        } else if (bind && d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM) {
            for (size_t k = 0; im->opt && k < im->opt->n_dims; k++)
                if (!strcmp(im->opt->dims[k].name, str(d->dim_param)))
                    shape->dims[i] = im->opt->dims[k].value;
        }
    }
    return true;
}

static const onnx_known_input *known_input(const importer *im, const char *name)
{
    for (size_t i = 0; im->opt && i < im->opt->n_known; i++)
        if (!strcmp(im->opt->known[i].name, name))
            return &im->opt->known[i];
    return NULL;
}

static bool add_graph_input(importer *im, const Onnx__ValueInfoProto *vi)
{
    graph *g = im->g;
    const char *name = str(vi->name);
    if (graph_find_tensor(g, name) >= 0) {
        /* an input with an initializer of the same name (a default value,
         * IR version < 4): the initializer is the weight */
        return true;
    }
    graph_dtype dtype;
    graph_shape shape;
    bool has_shape;
    char s1[200], s2[200];
    if (!value_info_type(im, vi, "input", true, &dtype, &shape, &has_shape))
        return false;
    const onnx_known_input *k = known_input(im, name);
    if (k) {
        /* A u16 value for a bf16 input is taken as bf16 bit patterns: the
         * ONNX 1.12 backend test data stores bf16 tensors that way. */
        bool bf16_as_u16 = dtype == GDT_BF16 && k->value->dtype == GDT_U16;
        bool match = dtype == GDT_UNDEFINED || dtype == k->value->dtype || bf16_as_u16;
        if (has_shape && !im->opt->values_override_shapes) {
            match = match && shape.rank == k->value->shape.rank;
            for (int i = 0; match && i < shape.rank; i++)
                match = shape.dims[i] < 0 || shape.dims[i] == k->value->shape.dims[i];
        }
        if (!match)
            return fail(im, ONNX_INVALID, "input '%s' is declared %s%s but its value is %s%s", name,
                        graph_dtype_name(dtype), has_shape ? graph_shape_str(&shape, s1, sizeof s1) : "",
                        graph_dtype_name(k->value->dtype), graph_shape_str(&k->value->shape, s2, sizeof s2));
        if (!bf16_as_u16)
            dtype = k->value->dtype;
        shape = k->value->shape;
        has_shape = true;
    }
    if (dtype == GDT_UNDEFINED)
        return fail(im, ONNX_INVALID, "input '%s' has no element type", name);
    if (!has_shape)
        return fail(im, ONNX_UNSUPPORTED, "input '%s' has no shape (ipusim compiles static shapes)", name);
    for (int i = 0; i < shape.rank; i++)
        if (shape.dims[i] < 0) {
            const Onnx__TensorShapeProto__Dimension *d = vi->type->tensor_type->shape->dim[i];
            if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM)
                return fail(im, ONNX_UNSUPPORTED, "input '%s' dimension %d is symbolic ('%s'); give its size", name,
                            i, str(d->dim_param));
            return fail(im, ONNX_UNSUPPORTED, "input '%s' dimension %d has no size; give the input's shape", name, i);
        }
    int t = graph_add_tensor(g, name);
    g->tensors[t].dtype = dtype;
    g->tensors[t].shape = shape;
    g->tensors[t].shape_known = true;
    graph_add_input(g, t);
    return true;
}

/* ---- attributes ------------------------------------------------------------------------------ */

static bool convert_attr(importer *im, graph_node *n, const Onnx__AttributeProto *ap, const char *where)
{
    const char *name = str(ap->name);
    int type = ap->has_type ? (int)ap->type : 0;
    if (!type) {
        /* very old writers leave the type out: take it from the field set */
        type = ap->has_f ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT
             : ap->has_i ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT
             : ap->has_s ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING
             : ap->t ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR
             : ap->n_floats ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS
             : ap->n_ints ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS : 0;
    }
    if (ap->ref_attr_name && ap->ref_attr_name[0])
        return fail(im, ONNX_UNSUPPORTED, "%s: attribute '%s' refers to a function attribute", where, name);
    switch (type) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
        graph_set_attr_float(n, name, ap->f);
        return true;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
        graph_set_attr_int(n, name, ap->i);
        return true;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: {
        char *s = malloc(ap->s.len + 1);
        if (!s)
            fatal("out of memory");
        if (ap->s.len)
            memcpy(s, ap->s.data, ap->s.len);
        s[ap->s.len] = 0;
        graph_set_attr_string(n, name, s);
        free(s);
        return true;
    }
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
        graph_set_attr_ints(n, name, ap->ints, ap->n_ints);
        return true;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: {
        double *v = malloc(ap->n_floats * sizeof *v + 1);
        if (!v)
            fatal("out of memory");
        for (size_t i = 0; i < ap->n_floats; i++)
            v[i] = ap->floats[i];
        graph_set_attr_floats(n, name, v, ap->n_floats);
        free(v);
        return true;
    }
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: {
        if (!ap->t)
            return fail(im, ONNX_INVALID, "%s: tensor attribute '%s' has no tensor", where, name);
        char what[600];
        snprintf(what, sizeof what, "%s: attribute '%s'", where, name);
        graph_tensor *t = calloc(1, sizeof *t);
        if (!t)
            fatal("out of memory");
        if (!convert_tensor(im, ap->t, what, &t->dtype, &t->shape, &t->data)) {
            free(t);
            return false;
        }
        t->name = strdup(str(ap->t->name));
        if (!t->name)
            fatal("out of memory");
        t->shape_known = true;
        t->producer = -1;
        graph_set_attr_tensor(n, name, t);
        return true;
    }
    default: {
        static const char *kinds[] = { [5] = "graph", [9] = "tensors", [10] = "graphs", [8] = "strings",
                                       [11] = "sparse tensor", [12] = "sparse tensors", [13] = "type proto",
                                       [14] = "type protos" };
        const char *kind = type > 0 && type < 15 && kinds[type] ? kinds[type] : "unknown";
        return fail(im, ONNX_UNSUPPORTED, "%s: attribute '%s' of type %s is not supported", where, name, kind);
    }
    }
}

/* ---- the model ------------------------------------------------------------------------------- */

/* Graph inputs with known values whose values a static input depends on
 * become constants (so the shape arithmetic on them folds).  An input read
 * only through Shape or Size stays an input: its shape alone is folded. */
static void bind_known_inputs(importer *im)
{
    graph *g = im->g;
    if (!im->opt || !im->opt->n_known)
        return;
    bool *needed = calloc((size_t)g->n_tensors + 1, sizeof *needed);
    int *stack = malloc(((size_t)g->n_tensors + 1) * sizeof *stack);
    if (!needed || !stack)
        fatal("out of memory");
    int top = 0;
    for (int k = 0; k < g->n_nodes; k++) {
        const graph_node *n = &g->nodes[k];
        for (int i = 0; i < n->n_inputs; i++)
            if (n->inputs[i] >= 0 && (graph_ops[n->op].static_inputs >> i) & 1 && !needed[n->inputs[i]]) {
                needed[n->inputs[i]] = true;
                stack[top++] = n->inputs[i];
            }
    }
    while (top) {
        int t = stack[--top], p = g->tensors[t].producer;
        if (p < 0)
            continue;
        const graph_node *n = &g->nodes[p];
        /* Shape and Size need only their input's shape, static once the
         * inputs are added: the input itself stays an input. */
        if (n->op == GRAPH_OP_SHAPE || n->op == GRAPH_OP_SIZE)
            continue;
        for (int i = 0; i < n->n_inputs; i++)
            if (n->inputs[i] >= 0 && !needed[n->inputs[i]]) {
                needed[n->inputs[i]] = true;
                stack[top++] = n->inputs[i];
            }
    }
    int kept = 0;
    for (int i = 0; i < g->n_inputs; i++) {
        int t = g->inputs[i];
        const onnx_known_input *k = known_input(im, g->tensors[t].name);
        if (needed[t] && k) {
            graph_set_constant(g, t, g->tensors[t].dtype, &k->value->shape, k->value->data);
            g->tensors[t].is_input = false;
        } else
            g->inputs[kept++] = t;
    }
    g->n_inputs = kept;
    free(needed);
    free(stack);
}

static bool check_outputs(importer *im, const Onnx__GraphProto *gp)
{
    graph *g = im->g;
    char s1[200], s2[200];
    for (size_t i = 0; i < gp->n_output; i++) {
        const graph_tensor *x = &g->tensors[g->outputs[i]];
        graph_dtype dtype;
        graph_shape shape;
        bool has_shape;
        if (!gp->output[i]->type)
            continue;
        if (!value_info_type(im, gp->output[i], "output", false, &dtype, &shape, &has_shape))
            return false;
        bool match = dtype == GDT_UNDEFINED || dtype == x->dtype;
        if (has_shape) {
            match = match && shape.rank == x->shape.rank;
            for (int d = 0; match && d < shape.rank; d++)
                match = shape.dims[d] < 0 || shape.dims[d] == x->shape.dims[d];
        }
        if (!match)
            return fail(im, ONNX_INVALID, "output '%s' is declared %s%s but is computed as %s%s", x->name,
                        graph_dtype_name(dtype), has_shape ? graph_shape_str(&shape, s1, sizeof s1) : "",
                        graph_dtype_name(x->dtype), graph_shape_str(&x->shape, s2, sizeof s2));
    }
    return true;
}

/* The ai.onnx opset the model imports; -1 if none.  A model of optimizer
 * steps alone may import the training domain only: it then follows the
 * newest ai.onnx opset (the one their rewrites emit ops of). */
static int64_t model_opset(const Onnx__ModelProto *mp)
{
    int64_t opset = -1;
    bool training = false;
    for (size_t i = 0; i < mp->n_opset_import; i++) {
        const char *d = str(mp->opset_import[i]->domain);
        if (!d[0] || !strcmp(d, "ai.onnx"))
            opset = mp->opset_import[i]->version;
        training |= !strcmp(d, "ai.onnx.preview.training");
    }
    const Onnx__GraphProto *gp = mp->graph;
    bool training_only = training && gp->n_node > 0;
    for (size_t k = 0; k < gp->n_node && training_only; k++)
        training_only = !strcmp(str(gp->node[k]->domain), "ai.onnx.preview.training");
    return opset < 0 && training_only ? ONNX_MAX_OPSET : opset;
}

static bool import_model(importer *im, const Onnx__ModelProto *mp)
{
    char ref[300];
    const Onnx__GraphProto *gp = mp->graph;
    if (!gp)
        return fail(im, ONNX_INVALID, "not a valid ONNX model (no graph)");
    int64_t opset = model_opset(mp);
    /* Ops first: a model of ops ipusim lacks is unsupported, whatever else
     * is wrong with it. */
    for (size_t k = 0; k < gp->n_node; k++) {
        const Onnx__NodeProto *np = gp->node[k];
        const char *domain = str(np->domain), *type = str(np->op_type);
        bool foreign = domain[0] && strcmp(domain, "ai.onnx");
        graph_op op = graph_op_lookup(domain, type);
        /* ai.onnx and ONNX's training domain; never ipusim's own ops */
        if (op == GRAPH_OP_COUNT ||
            (strcmp(graph_ops[op].domain, "") && strcmp(graph_ops[op].domain, "ai.onnx.preview.training")))
            return fail(im, ONNX_UNSUPPORTED, "unsupported op '%s%s%s' in %s", foreign ? domain : "",
                        foreign ? "." : "", type, node_ref(np, k, ref, sizeof ref));
    }
    if (opset < 0)
        return fail(im, ONNX_INVALID, "the model imports no ai.onnx opset");
    if (opset < ONNX_MIN_OPSET || opset > ONNX_MAX_OPSET)
        return fail(im, ONNX_UNSUPPORTED, "opset %lld is not supported (ipusim imports opsets %d to %d)",
                    (long long)opset, ONNX_MIN_OPSET, ONNX_MAX_OPSET);
    if (gp->n_sparse_initializer)
        return fail(im, ONNX_UNSUPPORTED, "sparse initializers are not supported");
    graph *g = im->g = graph_new(im->source, (int)opset);

    for (size_t i = 0; i < gp->n_initializer; i++) {
        const Onnx__TensorProto *tp = gp->initializer[i];
        char what[300];
        snprintf(what, sizeof what, "initializer '%s'", str(tp->name));
        if (!str(tp->name)[0])
            return fail(im, ONNX_INVALID, "initializer #%zu has no name", i);
        if (graph_find_tensor(g, tp->name) >= 0)
            return fail(im, ONNX_INVALID, "initializer '%s' is given twice", tp->name);
        graph_dtype dtype;
        graph_shape shape;
        void *data;
        if (!convert_tensor(im, tp, what, &dtype, &shape, &data))
            return false;
        int t = graph_add_tensor(g, tp->name);
        g->tensors[t].dtype = dtype;
        g->tensors[t].shape = shape;
        g->tensors[t].shape_known = true;
        g->tensors[t].data = data;
    }
    for (size_t i = 0; i < gp->n_input; i++)
        if (!add_graph_input(im, gp->input[i]))
            return false;

    /* Pass 1: every node's op and outputs, so inputs may name tensors
     * produced later in the file (sorting comes after). */
    size_t nn = gp->n_node;
    graph_op *ops = malloc(nn * sizeof *ops + 1);
    int **outs = calloc(nn + 1, sizeof *outs);
    if (!ops || !outs)
        fatal("out of memory");
    bool ok = true;
    for (size_t k = 0; k < nn && ok; k++) {
        const Onnx__NodeProto *np = gp->node[k];
        const char *type = str(np->op_type);
        ops[k] = graph_op_lookup(str(np->domain), type);
        if (graph_ops[ops[k]].since_opset > opset) {
            ok = fail(im, ONNX_INVALID, "%s (%s): %s is not in opset %lld (it appears in opset %d)",
                      node_ref(np, k, ref, sizeof ref), type, type, (long long)opset, graph_ops[ops[k]].since_opset);
            break;
        }
        outs[k] = malloc(np->n_output * sizeof **outs + 1);
        if (!outs[k])
            fatal("out of memory");
        for (size_t i = 0; i < np->n_output && ok; i++) {
            const char *name = np->output[i];
            if (!name[0]) {
                outs[k][i] = -1;
                continue;
            }
            int t = graph_add_tensor(g, name);
            if (t < 0) {
                int prev = graph_find_tensor(g, name);
                const graph_tensor *x = &g->tensors[prev];
                if (x->producer >= 0 || x->is_input || x->data)
                    ok = fail(im, ONNX_INVALID, "%s (%s): output '%s' is already %s", node_ref(np, k, ref, sizeof ref),
                              type, name, x->is_input ? "a graph input" : x->data ? "an initializer"
                                                                                   : "the output of another node");
                else
                    ok = fail(im, ONNX_INVALID, "%s (%s): output '%s' is written twice",
                              node_ref(np, k, ref, sizeof ref), type, name);
                break;
            }
            g->tensors[t].producer = (int)k;       /* a placeholder until the node exists */
            outs[k][i] = t;
        }
    }
    /* Pass 2: nodes with their inputs and attributes. */
    for (size_t k = 0; k < nn && ok; k++) {
        const Onnx__NodeProto *np = gp->node[k];
        int ins[64];
        if (np->n_input > 64) {
            ok = fail(im, ONNX_UNSUPPORTED, "%s (%s): has %zu inputs (at most 64)", node_ref(np, k, ref, sizeof ref),
                      str(np->op_type), np->n_input);
            break;
        }
        for (size_t i = 0; i < np->n_input && ok; i++) {
            ins[i] = np->input[i][0] ? graph_find_tensor(g, np->input[i]) : -1;
            if (np->input[i][0] && ins[i] < 0)
                ok = fail(im, ONNX_INVALID, "%s (%s): input '%s' is missing", node_ref(np, k, ref, sizeof ref),
                          str(np->op_type), np->input[i]);
        }
        if (!ok)
            break;
        int idx = graph_add_node(g, ops[k], str(np->name), ins, (int)np->n_input, outs[k], (int)np->n_output);
        ALWAYS(idx == (int)k);
        char where[400];
        snprintf(where, sizeof where, "%s (%s)", node_ref(np, k, ref, sizeof ref), str(np->op_type));
        for (size_t a = 0; a < np->n_attribute && ok; a++)
            ok = convert_attr(im, &g->nodes[idx], np->attribute[a], where);
    }
    for (size_t k = 0; k < nn; k++)
        free(outs[k]);
    free(outs);
    free(ops);
    if (!ok)
        return false;

    for (size_t i = 0; i < gp->n_output; i++) {
        const char *name = str(gp->output[i]->name);
        int t = graph_find_tensor(g, name);
        if (t < 0)
            return fail(im, ONNX_INVALID, "output '%s' is not produced by any node", name);
        graph_add_output(g, t);
    }
    if (!g->n_outputs)
        return fail(im, ONNX_INVALID, "the graph has no outputs");
    if (!graph_sort(g, im->err, im->err_size)) {
        im->status = ONNX_INVALID;
        return false;
    }
    bind_known_inputs(im);
    g->unsupported = false;
    if (!graph_infer_all(g, true, im->err, im->err_size)) {
        im->status = g->unsupported ? ONNX_UNSUPPORTED : ONNX_INVALID;
        return false;
    }
    return check_outputs(im, gp);
}

graph *onnx_import_buffer(const char *source, const void *data, size_t size, const onnx_import_options *opt,
                          enum onnx_status *status, char *err, size_t err_size)
{
    importer im = { .source = source, .opt = opt, .status = ONNX_OK, .err = err, .err_size = err_size };
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, size, data);
    if (!mp) {
        fail(&im, ONNX_INVALID, "not a valid ONNX model (protobuf parse failed)");
        *status = im.status;
        return NULL;
    }
    bool ok = import_model(&im, mp);
    onnx__model_proto__free_unpacked(mp, NULL);
    *status = im.status;
    if (!ok) {
        graph_free(im.g);
        return NULL;
    }
    return im.g;
}

graph *onnx_import_file(const char *path, const onnx_import_options *opt, enum onnx_status *status, char *err,
                        size_t err_size)
{
    char *data;
    size_t size;
    if (!read_file_limited(path, READ_LIMIT_ONNX, "a protobuf message may have", READ_FIFO, &data, &size, err,
                           err_size)) {
        *status = ONNX_IO_ERROR;
        return NULL;
    }
    graph *g = onnx_import_buffer(path, data, size, opt, status, err, err_size);
    free(data);
    return g;
}

bool onnx_read_tensor_file(const char *path, char **name, graph_value *v, enum onnx_status *status, char *err,
                           size_t err_size)
{
    char *data;
    size_t size;
    *name = NULL;
    if (!read_file_limited(path, READ_LIMIT_ONNX, "a protobuf message may have", READ_FIFO, &data, &size, err,
                           err_size)) {
        *status = ONNX_IO_ERROR;
        return false;
    }
    importer im = { .source = path, .status = ONNX_OK, .err = err, .err_size = err_size };
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, size, (const uint8_t *)data);
    free(data);
    if (!tp) {
        fail(&im, ONNX_INVALID, "not a valid ONNX tensor (protobuf parse failed)");
        *status = im.status;
        return false;
    }
    bool ok = convert_tensor(&im, tp, "tensor", &v->dtype, &v->shape, &v->data);
    if (ok) {
        *name = strdup(str(tp->name));
        if (!*name)
            fatal("out of memory");
    }
    onnx__tensor_proto__free_unpacked(tp, NULL);
    *status = im.status;
    return ok;
}

bool onnx_model_input_names(const char *path, char ***names, size_t *count, enum onnx_status *status, char *err,
                            size_t err_size)
{
    char *data;
    size_t size;
    *names = NULL;
    *count = 0;
    if (!read_file_limited(path, READ_LIMIT_ONNX, "a protobuf message may have", READ_FIFO, &data, &size, err,
                           err_size)) {
        *status = ONNX_IO_ERROR;
        return false;
    }
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, size, (const uint8_t *)data);
    free(data);
    if (!mp || !mp->graph) {
        snprintf(err, err_size, "%s: not a valid ONNX model (%s)", path, mp ? "no graph" : "protobuf parse failed");
        *status = ONNX_INVALID;
        if (mp)
            onnx__model_proto__free_unpacked(mp, NULL);
        return false;
    }
    const Onnx__GraphProto *gp = mp->graph;
    *names = calloc(gp->n_input + 1, sizeof **names);
    if (!*names)
        fatal("out of memory");
    for (size_t i = 0; i < gp->n_input; i++) {
        const char *name = str(gp->input[i]->name);
        bool init = false;
        for (size_t k = 0; k < gp->n_initializer && !init; k++)
            init = !strcmp(str(gp->initializer[k]->name), name);
        if (!init && !((*names)[(*count)++] = strdup(name)))
            fatal("out of memory");
    }
    onnx__model_proto__free_unpacked(mp, NULL);
    *status = ONNX_OK;
    return true;
}

#else /* !IPUSIM_HAVE_ONNX */

/* Built without the generated bindings (frontends/onnx.cmake not included):
 * every entry point says so. */
static const char no_onnx[] = "ipusim was built without ONNX support (protobuf-c and frontends/onnx.cmake)";

bool onnx_available(void)
{
    return false;
}

graph *onnx_import_buffer(const char *source, const void *data, size_t size, const onnx_import_options *opt,
                          enum onnx_status *status, char *err, size_t err_size)
{
    (void)data;
    (void)size;
    (void)opt;
    snprintf(err, err_size, "%s: %s", source, no_onnx);
    *status = ONNX_UNSUPPORTED;
    return NULL;
}

graph *onnx_import_file(const char *path, const onnx_import_options *opt, enum onnx_status *status, char *err,
                        size_t err_size)
{
    return onnx_import_buffer(path, NULL, 0, opt, status, err, err_size);
}

bool onnx_read_tensor_file(const char *path, char **name, graph_value *v, enum onnx_status *status, char *err,
                           size_t err_size)
{
    (void)v;
    *name = NULL;
    snprintf(err, err_size, "%s: %s", path, no_onnx);
    *status = ONNX_UNSUPPORTED;
    return false;
}

bool onnx_model_input_names(const char *path, char ***names, size_t *count, enum onnx_status *status, char *err,
                            size_t err_size)
{
    *names = NULL;
    *count = 0;
    snprintf(err, err_size, "%s: %s", path, no_onnx);
    *status = ONNX_UNSUPPORTED;
    return false;
}

#endif
