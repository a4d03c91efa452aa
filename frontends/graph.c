/*
 * graph.c — the graph IR: tensors, nodes, attributes and their specs from
 * ops.def, topological order, inference with constant folding, pruning and
 * the text listing.
 */
#include "graph.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "graph_eval.h"
#include "ops_impl.h"
#include "sim/base/diag.h"

const graph_op_desc graph_ops[GRAPH_OP_COUNT] = {
#define OP(id, name, domain, since, min_in, max_in, min_out, max_out, static_in, attrs, infer, eval, \
           layout_class, lowering_rule, grad_rule) \
    { name, domain, since, min_in, max_in, min_out, max_out, static_in, attrs, infer, eval },
#include "ops.def"
#undef OP
};

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        fatal("out of memory (%zu bytes)", n);
    return p;
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        fatal("out of memory (%zu bytes)", n * size);
    return p;
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        fatal("out of memory (%zu bytes)", n);
    return p;
}

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xmalloc(n), s, n);
}

/* ---- dtypes and shapes ---------------------------------------------------- */

const char *graph_dtype_name(graph_dtype t)
{
    switch (t) {
    case GDT_F32: return "f32";
    case GDT_U8: return "u8";
    case GDT_I8: return "i8";
    case GDT_U16: return "u16";
    case GDT_I16: return "i16";
    case GDT_I32: return "i32";
    case GDT_I64: return "i64";
    case GDT_STRING: return "string";
    case GDT_BOOL: return "bool";
    case GDT_F16: return "f16";
    case GDT_F64: return "f64";
    case GDT_U32: return "u32";
    case GDT_U64: return "u64";
    case GDT_C64: return "complex64";
    case GDT_C128: return "complex128";
    case GDT_BF16: return "bf16";
    case GDT_UNDEFINED: return "undefined";
    }
    return "unknown dtype";
}

size_t graph_dtype_size(graph_dtype t)
{
    switch (t) {
    case GDT_BOOL: case GDT_U8: case GDT_I8: return 1;
    case GDT_U16: case GDT_I16: case GDT_F16: case GDT_BF16: return 2;
    case GDT_F32: case GDT_I32: case GDT_U32: return 4;
    case GDT_F64: case GDT_I64: case GDT_U64: return 8;
    default: return 0;
    }
}

bool graph_dtype_is_float(graph_dtype t)
{
    return t == GDT_F32 || t == GDT_F16 || t == GDT_BF16 || t == GDT_F64;
}

double graph_dtype_unit_roundoff(graph_dtype t)
{
    switch (t) {
    case GDT_F16: return 0x1p-11;
    case GDT_BF16: return 0x1p-8;
    case GDT_F32: return 0x1p-24;
    case GDT_F64: return 0x1p-53;
    default: return 0;
    }
}

bool graph_dtype_is_int(graph_dtype t)
{
    switch (t) {
    case GDT_U8: case GDT_I8: case GDT_U16: case GDT_I16: case GDT_I32: case GDT_I64:
    case GDT_U32: case GDT_U64:
        return true;
    default:
        return false;
    }
}

int64_t graph_shape_numel(const graph_shape *s)
{
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++)
        n *= s->dims[i];
    return n;
}

bool graph_shape_equal(const graph_shape *a, const graph_shape *b)
{
    if (a->rank != b->rank)
        return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i])
            return false;
    return true;
}

char *graph_shape_str(const graph_shape *s, char *buf, size_t size)
{
    size_t n = 0;
    n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "[");
    for (int i = 0; i < s->rank; i++)
        n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "%s%lld", i ? "," : "",
                              (long long)s->dims[i]);
    snprintf(buf + n, n < size ? size - n : 0, "]");
    return buf;
}

/* ---- the op table ------------------------------------------------------------ */

graph_op graph_op_lookup(const char *domain, const char *op_type)
{
    if (!domain || !strcmp(domain, "ai.onnx"))
        domain = "";
    for (int i = 0; i < GRAPH_OP_COUNT; i++)
        if (!strcmp(graph_ops[i].name, op_type) && !strcmp(graph_ops[i].domain, domain))
            return (graph_op)i;
    return GRAPH_OP_COUNT;
}

/* One parsed item of an attribute spec. */
typedef struct attr_spec {
    char name[40];
    enum graph_attr_type type;
    bool required;
    bool has_default;
    char def[24];
} attr_spec;

typedef struct op_spec {
    int n;
    attr_spec items[12];
} op_spec;

static const char *attr_type_name(enum graph_attr_type t)
{
    static const char *names[] = { "int", "float", "string", "ints", "floats", "tensor" };
    return names[t];
}

static op_spec *spec_of(graph_op op)
{
    static op_spec specs[GRAPH_OP_COUNT];
    static bool parsed[GRAPH_OP_COUNT];
    ALWAYS((unsigned)op < GRAPH_OP_COUNT);
    op_spec *s = &specs[op];
    if (parsed[op])
        return s;
    const char *p = graph_ops[op].attrs;
    while (*p) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        const char *end = strchr(p, ' ');
        if (!end)
            end = p + strlen(p);
        ALWAYS(s->n < (int)(sizeof s->items / sizeof s->items[0]));
        attr_spec *a = &s->items[s->n++];
        const char *colon = memchr(p, ':', (size_t)(end - p));
        ALWAYS(colon && (size_t)(colon - p) < sizeof a->name);
        memcpy(a->name, p, (size_t)(colon - p));
        const char *t = colon + 1, *eq = memchr(t, '=', (size_t)(end - t));
        const char *tend = eq ? eq : end;
        if (tend > t && tend[-1] == '!') {
            a->required = true;
            tend--;
        }
        size_t tl = (size_t)(tend - t);
        bool found = false;
        for (int k = GATTR_INT; k <= GATTR_TENSOR; k++)
            if (strlen(attr_type_name((enum graph_attr_type)k)) == tl &&
                !memcmp(attr_type_name((enum graph_attr_type)k), t, tl)) {
                a->type = (enum graph_attr_type)k;
                found = true;
            }
        ALWAYS(found);
        if (eq) {
            ALWAYS((size_t)(end - eq - 1) < sizeof a->def);
            memcpy(a->def, eq + 1, (size_t)(end - eq - 1));
            a->has_default = true;
        }
        p = end;
    }
    parsed[op] = true;
    return s;
}

static const attr_spec *spec_find(graph_op op, const char *name)
{
    op_spec *s = spec_of(op);
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->items[i].name, name))
            return &s->items[i];
    return NULL;
}

/* ---- graph construction ------------------------------------------------------ */

static uint32_t hash_name(const char *s)
{
    uint32_t h = 2166136261u;      /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

static void hash_insert(graph *g, int t)
{
    uint32_t mask = (uint32_t)g->hash_cap - 1;
    for (uint32_t h = hash_name(g->tensors[t].name) & mask;; h = (h + 1) & mask)
        if (!g->name_hash[h]) {
            g->name_hash[h] = t + 1;
            return;
        }
}

static void hash_rebuild(graph *g)
{
    int cap = 64;
    while (cap < 2 * g->n_tensors + 2)
        cap *= 2;
    free(g->name_hash);
    g->name_hash = xcalloc((size_t)cap, sizeof *g->name_hash);
    g->hash_cap = cap;
    for (int t = 0; t < g->n_tensors; t++)
        hash_insert(g, t);
}

graph *graph_new(const char *source, int opset)
{
    graph *g = xcalloc(1, sizeof *g);
    g->source = xstrdup(source ? source : "graph");
    g->opset = opset;
    g->origin = -1;
    hash_rebuild(g);
    return g;
}

static void *dup_bytes(const void *p, size_t n)
{
    if (!p)
        return NULL;
    void *q = xmalloc(n ? n : 1);
    memcpy(q, p, n);
    return q;
}

graph *graph_clone(const graph *g)
{
    graph *c = graph_new(g->source, g->opset);
    c->phase = g->phase;
    for (int t = 0; t < g->n_tensors; t++) {
        const graph_tensor *x = &g->tensors[t];
        int k = graph_add_tensor(c, x->name);
        if (k != t)
            panic("graph_clone: tensor %d copied as %d", t, k);
        graph_tensor *y = &c->tensors[k];
        char *name = y->name;
        size_t bytes = (size_t)graph_shape_numel(&x->shape) * graph_dtype_size(x->dtype);
        *y = *x;
        y->name = name;
        y->data = dup_bytes(x->data, bytes);
        y->init = dup_bytes(x->init, bytes);
        y->is_input = y->is_output = false;
    }
    for (int k = 0; k < g->n_nodes; k++) {
        const graph_node *n = &g->nodes[k];
        c->phase = n->phase;
        int j = graph_add_node(c, n->op, n->name, n->inputs, n->n_inputs, n->outputs, n->n_outputs);
        graph_copy_attrs(&c->nodes[j], n);
        c->nodes[j].removed = n->removed;
        c->nodes[j].stage = n->stage;
        c->nodes[j].cycle = n->cycle;
        c->nodes[j].origin = n->origin;
    }
    c->origin = g->origin;
    c->pipeline_stages = g->pipeline_stages;
    c->micro_batches = g->micro_batches;
    c->pipeline_cycles = g->pipeline_cycles;
    c->phase = g->phase;
    for (int i = 0; i < g->n_inputs; i++)
        graph_add_input(c, g->inputs[i]);
    for (int i = 0; i < g->n_outputs; i++)
        graph_add_output(c, g->outputs[i]);
    c->unsupported = g->unsupported;
    return c;
}

static void free_tensor_contents(graph_tensor *t)
{
    free(t->name);
    free(t->data);
    free(t->init);
}

static void free_attr(graph_attr *a)
{
    free(a->name);
    free(a->s);
    free(a->ints);
    free(a->floats);
    if (a->tensor) {
        free_tensor_contents(a->tensor);
        free(a->tensor);
    }
}

static void free_node_contents(graph_node *n)
{
    free(n->name);
    free(n->inputs);
    free(n->outputs);
    for (int i = 0; i < n->n_attrs; i++)
        free_attr(&n->attrs[i]);
    free(n->attrs);
}

void graph_free(graph *g)
{
    if (!g)
        return;
    for (int t = 0; t < g->n_tensors; t++)
        free_tensor_contents(&g->tensors[t]);
    for (int i = 0; i < g->n_nodes; i++)
        free_node_contents(&g->nodes[i]);
    free(g->tensors);
    free(g->nodes);
    free(g->inputs);
    free(g->outputs);
    free(g->name_hash);
    free(g->source);
    free(g);
}

int graph_find_tensor(const graph *g, const char *name)
{
    uint32_t mask = (uint32_t)g->hash_cap - 1;
    for (uint32_t h = hash_name(name) & mask; g->name_hash[h]; h = (h + 1) & mask)
        if (!strcmp(g->tensors[g->name_hash[h] - 1].name, name))
            return g->name_hash[h] - 1;
    return -1;
}

int graph_add_tensor(graph *g, const char *name)
{
    if (graph_find_tensor(g, name) >= 0)
        return -1;
    if (g->n_tensors == g->cap_tensors) {
        g->cap_tensors = g->cap_tensors ? 2 * g->cap_tensors : 64;
        g->tensors = xrealloc(g->tensors, (size_t)g->cap_tensors * sizeof *g->tensors);
    }
    int t = g->n_tensors++;
    g->tensors[t] = (graph_tensor){ .name = xstrdup(name), .producer = -1, .update = -1, .state_of = -1 };
    if (2 * g->n_tensors + 2 > g->hash_cap)
        hash_rebuild(g);
    else
        hash_insert(g, t);
    return t;
}

char *graph_unique_name(const graph *g, const char *base)
{
    size_t n = strlen(base) + 24;
    char *name = xmalloc(n);
    snprintf(name, n, "%s", base);
    for (int k = 1; graph_find_tensor(g, name) >= 0; k++)
        snprintf(name, n, "%s_%d", base, k);
    return name;
}

void graph_set_constant(graph *g, int t, graph_dtype dtype, const graph_shape *shape, const void *data)
{
    graph_tensor *x = &g->tensors[t];
    size_t bytes = (size_t)graph_shape_numel(shape) * graph_dtype_size(dtype);
    free(x->data);
    x->data = xmalloc(bytes);
    if (bytes)
        memcpy(x->data, data, bytes);
    x->dtype = dtype;
    x->shape = *shape;
    x->shape_known = true;
}

int graph_add_constant(graph *g, const char *base, graph_dtype dtype, const graph_shape *shape,
                       const void *data)
{
    char *name = graph_unique_name(g, base);
    int t = graph_add_tensor(g, name);
    free(name);
    graph_set_constant(g, t, dtype, shape, data);
    return t;
}

void graph_add_input(graph *g, int t)
{
    g->inputs = xrealloc(g->inputs, (size_t)(g->n_inputs + 1) * sizeof *g->inputs);
    g->inputs[g->n_inputs++] = t;
    g->tensors[t].is_input = true;
}

void graph_add_output(graph *g, int t)
{
    g->outputs = xrealloc(g->outputs, (size_t)(g->n_outputs + 1) * sizeof *g->outputs);
    g->outputs[g->n_outputs++] = t;
    g->tensors[t].is_output = true;
}

int graph_add_node(graph *g, graph_op op, const char *name, const int *inputs, int n_inputs,
                   const int *outputs, int n_outputs)
{
    if (g->n_nodes == g->cap_nodes) {
        g->cap_nodes = g->cap_nodes ? 2 * g->cap_nodes : 64;
        g->nodes = xrealloc(g->nodes, (size_t)g->cap_nodes * sizeof *g->nodes);
    }
    int k = g->n_nodes++;
    graph_node *n = &g->nodes[k];
    *n = (graph_node){ .name = xstrdup(name ? name : ""), .op = op, .phase = g->phase, .n_inputs = n_inputs,
                       .n_outputs = n_outputs, .stage = -1, .cycle = -1, .origin = g->origin };
    n->inputs = xmalloc((size_t)n_inputs * sizeof *n->inputs);
    n->outputs = xmalloc((size_t)n_outputs * sizeof *n->outputs);
    if (n_inputs)
        memcpy(n->inputs, inputs, (size_t)n_inputs * sizeof *inputs);
    if (n_outputs)
        memcpy(n->outputs, outputs, (size_t)n_outputs * sizeof *outputs);
    for (int i = 0; i < n_outputs; i++)
        if (outputs[i] >= 0)
            g->tensors[outputs[i]].producer = k;
    return k;
}

void graph_replace_node(graph *g, int k, graph_op op, const char *name, const int *inputs, int n_inputs,
                        const int *outputs, int n_outputs)
{
    graph_node *n = &g->nodes[k];
    /* copy first: inputs and outputs may point into the node itself */
    char *keep = xstrdup(name ? name : n->name);
    int *ins = xmalloc((size_t)n_inputs * sizeof *ins), *outs = xmalloc((size_t)n_outputs * sizeof *outs);
    if (n_inputs)
        memcpy(ins, inputs, (size_t)n_inputs * sizeof *inputs);
    if (n_outputs)
        memcpy(outs, outputs, (size_t)n_outputs * sizeof *outputs);
    for (int i = 0; i < n->n_outputs; i++)
        if (n->outputs[i] >= 0 && g->tensors[n->outputs[i]].producer == k)
            g->tensors[n->outputs[i]].producer = -1;
    graph_attr *attrs = n->attrs;
    int n_attrs = n->n_attrs;
    n->attrs = NULL;
    n->n_attrs = 0;
    enum graph_phase phase = n->phase;
    int stage = n->stage, cycle = n->cycle, origin = n->origin;
    free_node_contents(n);
    *n = (graph_node){ .name = keep, .op = op, .phase = phase, .n_inputs = n_inputs, .n_outputs = n_outputs, .inputs = ins,
                       .outputs = outs, .attrs = attrs, .n_attrs = n_attrs, .stage = stage, .cycle = cycle,
                       .origin = origin };
    for (int i = 0; i < n_outputs; i++)
        if (outputs[i] >= 0)
            g->tensors[outputs[i]].producer = k;
}

/* ---- attributes ------------------------------------------------------------------ */

static graph_attr *attr_slot(graph_node *n, const char *name, enum graph_attr_type type)
{
    for (int i = 0; i < n->n_attrs; i++)
        if (!strcmp(n->attrs[i].name, name)) {
            char *keep = n->attrs[i].name;
            n->attrs[i].name = NULL;
            free_attr(&n->attrs[i]);
            n->attrs[i] = (graph_attr){ .name = keep, .type = type };
            return &n->attrs[i];
        }
    n->attrs = xrealloc(n->attrs, (size_t)(n->n_attrs + 1) * sizeof *n->attrs);
    graph_attr *a = &n->attrs[n->n_attrs++];
    *a = (graph_attr){ .name = xstrdup(name), .type = type };
    return a;
}

void graph_set_attr_int(graph_node *n, const char *name, int64_t v)
{
    attr_slot(n, name, GATTR_INT)->i = v;
}

void graph_set_attr_float(graph_node *n, const char *name, double v)
{
    attr_slot(n, name, GATTR_FLOAT)->f = v;
}

void graph_set_attr_string(graph_node *n, const char *name, const char *v)
{
    attr_slot(n, name, GATTR_STRING)->s = xstrdup(v);
}

void graph_set_attr_ints(graph_node *n, const char *name, const int64_t *v, size_t count)
{
    graph_attr *a = attr_slot(n, name, GATTR_INTS);
    a->ints = xmalloc(count * sizeof *v);
    if (count)
        memcpy(a->ints, v, count * sizeof *v);
    a->n = count;
}

void graph_set_attr_floats(graph_node *n, const char *name, const double *v, size_t count)
{
    graph_attr *a = attr_slot(n, name, GATTR_FLOATS);
    a->floats = xmalloc(count * sizeof *v);
    if (count)
        memcpy(a->floats, v, count * sizeof *v);
    a->n = count;
}

void graph_set_attr_tensor(graph_node *n, const char *name, graph_tensor *t)
{
    attr_slot(n, name, GATTR_TENSOR)->tensor = t;
}

void graph_copy_attrs(graph_node *dst, const graph_node *src)
{
    for (int i = 0; i < src->n_attrs; i++) {
        const graph_attr *a = &src->attrs[i];
        switch (a->type) {
        case GATTR_INT: graph_set_attr_int(dst, a->name, a->i); break;
        case GATTR_FLOAT: graph_set_attr_float(dst, a->name, a->f); break;
        case GATTR_STRING: graph_set_attr_string(dst, a->name, a->s); break;
        case GATTR_INTS: graph_set_attr_ints(dst, a->name, a->ints, a->n); break;
        case GATTR_FLOATS: graph_set_attr_floats(dst, a->name, a->floats, a->n); break;
        case GATTR_TENSOR: {
            graph_tensor *t = xcalloc(1, sizeof *t);
            *t = *a->tensor;
            t->name = xstrdup(a->tensor->name);
            size_t bytes = (size_t)graph_shape_numel(&t->shape) * graph_dtype_size(t->dtype);
            t->data = xmalloc(bytes);
            if (bytes)
                memcpy(t->data, a->tensor->data, bytes);
            graph_set_attr_tensor(dst, a->name, t);
            break;
        }
        }
    }
}

void graph_clear_attrs(graph_node *n)
{
    for (int i = 0; i < n->n_attrs; i++)
        free_attr(&n->attrs[i]);
    free(n->attrs);
    n->attrs = NULL;
    n->n_attrs = 0;
}

const graph_attr *graph_attr_find(const graph_node *n, const char *name)
{
    for (int i = 0; i < n->n_attrs; i++)
        if (!strcmp(n->attrs[i].name, name))
            return &n->attrs[i];
    return NULL;
}

static const attr_spec *default_of(const graph_node *n, const char *name, enum graph_attr_type type)
{
    const attr_spec *s = spec_find(n->op, name);
    if (!s || s->type != type || !s->has_default)
        panic("op %s has no default for %s attribute '%s'", graph_ops[n->op].name,
              attr_type_name(type), name);
    return s;
}

int64_t graph_attr_int(const graph_node *n, const char *name)
{
    const graph_attr *a = graph_attr_find(n, name);
    if (a && a->type == GATTR_INT)
        return a->i;
    return strtoll(default_of(n, name, GATTR_INT)->def, NULL, 10);
}

double graph_attr_float(const graph_node *n, const char *name)
{
    const graph_attr *a = graph_attr_find(n, name);
    if (a && a->type == GATTR_FLOAT)
        return a->f;
    /* ONNX attributes are f32: a default reads as the f32 a file would hold. */
    return (float)strtod(default_of(n, name, GATTR_FLOAT)->def, NULL);
}

const char *graph_attr_string(const graph_node *n, const char *name)
{
    const graph_attr *a = graph_attr_find(n, name);
    if (a && a->type == GATTR_STRING)
        return a->s;
    return default_of(n, name, GATTR_STRING)->def;
}

size_t graph_attr_ints(const graph_node *n, const char *name, const int64_t **v)
{
    const graph_attr *a = graph_attr_find(n, name);
    if (!a || a->type != GATTR_INTS) {
        *v = NULL;
        return 0;
    }
    *v = a->ints;
    return a->n;
}

bool graph_check_attrs(graph *g, const graph_node *n, char *err, size_t err_size)
{
    for (int i = 0; i < n->n_attrs; i++) {
        const graph_attr *a = &n->attrs[i];
        const attr_spec *s = spec_find(n->op, a->name);
        if (!s)
            return graph_node_unsupported(g, n, err, err_size, "unsupported attribute '%s'", a->name);
        if (s->type != a->type)
            return graph_node_error(g, n, err, err_size, "attribute '%s' is %s, expected %s", a->name,
                                    attr_type_name(a->type), attr_type_name(s->type));
    }
    op_spec *spec = spec_of(n->op);
    for (int i = 0; i < spec->n; i++)
        if (spec->items[i].required && !graph_attr_find(n, spec->items[i].name))
            return graph_node_error(g, n, err, err_size, "attribute '%s' is required",
                                    spec->items[i].name);
    return true;
}

/* ---- messages -------------------------------------------------------------------- */

const char *graph_node_label(const graph *g, const graph_node *n, char *buf, size_t size)
{
    if (n->name && n->name[0])
        snprintf(buf, size, "node '%s' (%s)", n->name, graph_ops[n->op].name);
    else
        snprintf(buf, size, "node #%d (%s)", (int)(n - g->nodes), graph_ops[n->op].name);
    return buf;
}

bool graph_node_error(const graph *g, const graph_node *n, char *err, size_t err_size,
                      const char *fmt, ...)
{
    char label[300], msg[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(err, err_size, "%s: %s: %s", g->source, graph_node_label(g, n, label, sizeof label), msg);
    return false;
}

bool graph_node_unsupported(graph *g, const graph_node *n, char *err, size_t err_size,
                            const char *fmt, ...)
{
    char msg[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    g->unsupported = true;
    return graph_node_error(g, n, err, err_size, "%s", msg);
}

/* ---- topological order ------------------------------------------------------------- */

/* The node that must run before node k because it produces input i of k;
 * -1 when the input is a graph input, a constant or omitted. */
static int producer_of(const graph *g, const graph_node *n, int i)
{
    int t = n->inputs[i];
    return t < 0 ? -1 : g->tensors[t].producer;
}

/* The first input of node k produced by a node not yet ordered. */
static int first_pending_producer(const graph *g, const bool *done, int k)
{
    const graph_node *n = &g->nodes[k];
    for (int i = 0; i < n->n_inputs; i++) {
        int p = producer_of(g, n, i);
        if (p >= 0 && !done[p])
            return p;
    }
    panic("node %d is not ready but has no pending producer", k);
}

static void report_cycle(const graph *g, const bool *done, char *err, size_t err_size)
{
    /* Every node left over has an input produced by another node left over
     * (or it would have become ready).  Following the first such producer
     * n times from any of them lands on a cycle of that walk. */
    int k = 0;
    while (k < g->n_nodes && done[k])
        k++;
    for (int step = 0; step < g->n_nodes; step++)
        k = first_pending_producer(g, done, k);
    /* path[0] = k, path[j + 1] produces an input of path[j] */
    int path[8], len = 0, at = k;
    do {
        path[len++] = at;
        at = first_pending_producer(g, done, at);
    } while (at != k && len < 8);
    size_t off = (size_t)snprintf(err, err_size, "%s: graph has a cycle: ", g->source);
    char label[300];
    for (int j = len - 1; j >= -1; j--) {
        if (j < 0 && at != k)
            break;
        const graph_node *n = &g->nodes[path[j < 0 ? len - 1 : j]];
        off += (size_t)snprintf(err + (off < err_size ? off : err_size), off < err_size ? err_size - off : 0,
                                "%s%s", j == len - 1 ? "" : " -> ", graph_node_label(g, n, label, sizeof label));
    }
    if (at != k && off < err_size)
        snprintf(err + off, err_size - off, " -> ...");
}

bool graph_sort(graph *g, char *err, size_t err_size)
{
    int n = g->n_nodes;
    int *pending = xcalloc((size_t)n, sizeof *pending);   /* inputs not yet produced */
    int *order = xmalloc((size_t)n * sizeof *order);
    bool *done = xcalloc((size_t)n, sizeof *done);
    /* consumers lists: for each node, the nodes reading its outputs */
    int *cons_start = xcalloc((size_t)n + 1, sizeof *cons_start);
    for (int k = 0; k < n; k++)
        for (int i = 0; i < g->nodes[k].n_inputs; i++) {
            int p = producer_of(g, &g->nodes[k], i);
            if (p >= 0) {
                cons_start[p + 1]++;
                pending[k]++;
            }
        }
    for (int k = 0; k < n; k++)
        cons_start[k + 1] += cons_start[k];
    int *cons = xmalloc((size_t)cons_start[n] * sizeof *cons + 1);
    int *fill = xmalloc((size_t)n * sizeof *fill + 1);
    memcpy(fill, cons_start, (size_t)n * sizeof *fill);
    for (int k = 0; k < n; k++)
        for (int i = 0; i < g->nodes[k].n_inputs; i++) {
            int p = producer_of(g, &g->nodes[k], i);
            if (p >= 0)
                cons[fill[p]++] = k;
        }
    /* Kahn's algorithm with a FIFO seeded in file order: a sorted graph
     * comes out unchanged. */
    int head = 0, tail = 0;
    int *queue = xmalloc((size_t)n * sizeof *queue + 1);
    for (int k = 0; k < n; k++)
        if (!pending[k])
            queue[tail++] = k;
    int emitted = 0;
    while (head < tail) {
        int k = queue[head++];
        order[emitted++] = k;
        done[k] = true;
        for (int c = cons_start[k]; c < cons_start[k + 1]; c++)
            if (--pending[cons[c]] == 0)
                queue[tail++] = cons[c];
    }
    bool ok = emitted == n;
    if (!ok)
        report_cycle(g, done, err, err_size);
    else {
        graph_node *sorted = xmalloc((size_t)g->cap_nodes * sizeof *sorted);
        int *where = xmalloc((size_t)n * sizeof *where + 1);
        for (int i = 0; i < n; i++) {
            sorted[i] = g->nodes[order[i]];
            where[order[i]] = i;
        }
        free(g->nodes);
        g->nodes = sorted;
        for (int t = 0; t < g->n_tensors; t++)
            if (g->tensors[t].producer >= 0)
                g->tensors[t].producer = where[g->tensors[t].producer];
        free(where);
    }
    free(pending);
    free(order);
    free(done);
    free(cons_start);
    free(cons);
    free(fill);
    free(queue);
    return ok;
}

/* ---- inference and folding ------------------------------------------------------------ */

bool graph_infer_node(graph *g, graph_node *n, char *err, size_t err_size)
{
    const graph_op_desc *d = &graph_ops[n->op];
    if (n->n_inputs < d->min_inputs || n->n_inputs > d->max_inputs) {
        if (d->min_inputs == d->max_inputs)
            return graph_node_error(g, n, err, err_size, "has %d inputs, expected %d", n->n_inputs,
                                    d->min_inputs);
        return graph_node_error(g, n, err, err_size, "has %d inputs, expected %d to %d", n->n_inputs,
                                d->min_inputs, d->max_inputs);
    }
    if (n->n_outputs < d->min_outputs || n->n_outputs > d->max_outputs) {
        if (d->min_outputs == d->max_outputs)
            return graph_node_error(g, n, err, err_size, "has %d outputs, expected %d", n->n_outputs,
                                    d->min_outputs);
        return graph_node_error(g, n, err, err_size, "has %d outputs, expected %d to %d", n->n_outputs,
                                d->min_outputs, d->max_outputs);
    }
    for (int i = 0; i < d->min_outputs; i++)
        if (n->outputs[i] < 0)
            return graph_node_error(g, n, err, err_size, "output %d is required but left empty", i);
    for (int i = 0; i < n->n_inputs; i++) {
        int t = n->inputs[i];
        if (t < 0) {
            if (i < d->min_inputs)
                return graph_node_error(g, n, err, err_size, "input %d is required but left empty", i);
            continue;
        }
        const graph_tensor *x = &g->tensors[t];
        if (!x->shape_known || x->dtype == GDT_UNDEFINED)
            return graph_node_error(g, n, err, err_size, "input '%s' has no known type and shape", x->name);
        if ((d->static_inputs >> i) & 1 && !x->data)
            return graph_node_error(g, n, err, err_size,
                                    "input '%s' decides an output shape and must be a constant "
                                    "(ipusim compiles static shapes)", x->name);
    }
    if (!graph_check_attrs(g, n, err, err_size))
        return false;
    if (!d->infer)
        return graph_node_error(g, n, err, err_size, "has no shape inference");
    if (!d->infer(g, n, err, err_size))
        return false;
    for (int i = 0; i < n->n_outputs; i++) {
        int t = n->outputs[i];
        if (t < 0)
            continue;
        const graph_tensor *x = &g->tensors[t];
        if (!x->shape_known || x->dtype == GDT_UNDEFINED)
            panic("%s inferred no type for output %d", graph_ops[n->op].name, i);
        /* A shape from a hostile or broken file must not overflow or
         * exhaust the host: 2^32 elements is far beyond any model's tensor. */
        uint64_t count = 1;
        for (int k = 0; k < x->shape.rank; k++) {
            if (x->shape.dims[k] < 0)
                panic("%s inferred dimension %lld", graph_ops[n->op].name, (long long)x->shape.dims[k]);
            if (__builtin_mul_overflow(count, (uint64_t)x->shape.dims[k], &count))
                count = UINT64_MAX;
        }
        if (count > GRAPH_MAX_ELEMENTS) {
            char buf[300];
            return graph_node_unsupported(g, n, err, err_size, "output '%s' of shape %s has more than 2^32 elements",
                                          x->name, graph_shape_str(&x->shape, buf, sizeof buf));
        }
    }
    return true;
}

/* Evaluate node n on its constant inputs; its outputs become constants. */
static bool fold_node(graph *g, graph_node *n, char *err, size_t err_size)
{
    const void *in[64] = { 0 };
    void *out[8] = { 0 };
    ALWAYS(n->n_inputs <= 64 && n->n_outputs <= 8);
    for (int i = 0; i < n->n_inputs; i++)
        in[i] = n->inputs[i] >= 0 ? g->tensors[n->inputs[i]].data : NULL;
    for (int i = 0; i < n->n_outputs; i++) {
        int t = n->outputs[i];
        if (t < 0)
            continue;
        graph_tensor *x = &g->tensors[t];
        out[i] = xmalloc((size_t)graph_shape_numel(&x->shape) * graph_dtype_size(x->dtype));
    }
    bool ok = graph_ops[n->op].eval(g, n, in, out, err, err_size);
    for (int i = 0; i < n->n_outputs; i++) {
        int t = n->outputs[i];
        if (t < 0)
            continue;
        if (ok) {
            free(g->tensors[t].data);
            g->tensors[t].data = out[i];
            g->tensors[t].producer = -1;
        } else
            free(out[i]);
    }
    if (ok)
        n->removed = true;
    return ok;
}

bool graph_infer_all(graph *g, bool fold, char *err, size_t err_size)
{
    for (int k = 0; k < g->n_nodes; k++) {
        graph_node *n = &g->nodes[k];
        if (n->removed)
            continue;
        if (!graph_infer_node(g, n, err, err_size))
            return false;
        if (!fold)
            continue;
        bool all_outputs_known = true, all_inputs_const = true;
        for (int i = 0; i < n->n_outputs; i++)
            if (n->outputs[i] >= 0 && !g->tensors[n->outputs[i]].data) {
                all_outputs_known = false;
                if (graph_shape_numel(&g->tensors[n->outputs[i]].shape) > GRAPH_FOLD_MAX_ELEMENTS)
                    all_inputs_const = false;       /* too big to keep as a constant */
            }
        for (int i = 0; i < n->n_inputs; i++)
            if (n->inputs[i] >= 0 && !g->tensors[n->inputs[i]].data)
                all_inputs_const = false;
        if (all_outputs_known) {
            /* inference computed the values (Shape, Size) */
            for (int i = 0; i < n->n_outputs; i++)
                if (n->outputs[i] >= 0)
                    g->tensors[n->outputs[i]].producer = -1;
            n->removed = true;
        } else if (all_inputs_const && graph_ops[n->op].eval && n->op != GRAPH_OP_ZEROS) {
            /* (a Zeros is storage written every run: a running sum's start) */
            if (!fold_node(g, n, err, err_size))
                return false;
        }
    }
    graph_prune(g);
    return true;
}

/* ---- pruning ---------------------------------------------------------------------------- */

void graph_prune(graph *g)
{
    bool *live = xcalloc((size_t)g->n_tensors, sizeof *live);
    for (int i = 0; i < g->n_outputs; i++)
        live[g->outputs[i]] = true;
    for (int t = 0; t < g->n_tensors; t++)
        if (g->tensors[t].is_variable && g->tensors[t].update >= 0)
            live[g->tensors[t].update] = live[t] = true;
    /* reverse topological order: a node is live when one of its outputs is */
    for (int k = g->n_nodes - 1; k >= 0; k--) {
        graph_node *n = &g->nodes[k];
        if (n->removed)
            continue;
        bool any = false;
        for (int i = 0; i < n->n_outputs; i++)
            if (n->outputs[i] >= 0 && live[n->outputs[i]])
                any = true;
        if (!any) {
            n->removed = true;
            continue;
        }
        for (int i = 0; i < n->n_inputs; i++)
            if (n->inputs[i] >= 0)
                live[n->inputs[i]] = true;
    }
    free(live);
    graph_compact(g);
}

void graph_compact(graph *g)
{
    bool *used = xcalloc((size_t)g->n_tensors, sizeof *used);
    for (int i = 0; i < g->n_inputs; i++)
        used[g->inputs[i]] = true;
    for (int i = 0; i < g->n_outputs; i++)
        used[g->outputs[i]] = true;
    for (int t = 0; t < g->n_tensors; t++)
        if (g->tensors[t].is_variable && g->tensors[t].update >= 0)
            used[g->tensors[t].update] = used[t] = true;
    int kept = 0;
    int *node_map = xmalloc((size_t)g->n_nodes * sizeof *node_map + 1);
    for (int k = 0; k < g->n_nodes; k++) {
        graph_node *n = &g->nodes[k];
        if (n->removed) {
            node_map[k] = -1;
            /* outputs of a removed node that stay (folded constants) have
             * no producer any more */
            for (int i = 0; i < n->n_outputs; i++)
                if (n->outputs[i] >= 0 && g->tensors[n->outputs[i]].producer == k)
                    g->tensors[n->outputs[i]].producer = -1;
            free_node_contents(n);
            continue;
        }
        for (int i = 0; i < n->n_inputs; i++)
            if (n->inputs[i] >= 0)
                used[n->inputs[i]] = true;
        for (int i = 0; i < n->n_outputs; i++)
            if (n->outputs[i] >= 0)
                used[n->outputs[i]] = true;
        node_map[k] = kept;
        g->nodes[kept++] = *n;
    }
    g->n_nodes = kept;
    int *map = xmalloc((size_t)g->n_tensors * sizeof *map + 1);
    int nt = 0;
    for (int t = 0; t < g->n_tensors; t++) {
        if (!used[t]) {
            map[t] = -1;
            free_tensor_contents(&g->tensors[t]);
            continue;
        }
        map[t] = nt;
        graph_tensor *x = &g->tensors[t];
        if (x->producer >= 0)
            x->producer = node_map[x->producer];
        g->tensors[nt++] = *x;
    }
    g->n_tensors = nt;
    for (int k = 0; k < g->n_nodes; k++) {
        graph_node *n = &g->nodes[k];
        for (int i = 0; i < n->n_inputs; i++)
            if (n->inputs[i] >= 0)
                n->inputs[i] = map[n->inputs[i]];
        for (int i = 0; i < n->n_outputs; i++)
            if (n->outputs[i] >= 0)
                n->outputs[i] = map[n->outputs[i]];
    }
    for (int i = 0; i < g->n_inputs; i++)
        g->inputs[i] = map[g->inputs[i]];
    for (int i = 0; i < g->n_outputs; i++)
        g->outputs[i] = map[g->outputs[i]];
    for (int t = 0; t < g->n_tensors; t++) {
        if (g->tensors[t].update >= 0)
            g->tensors[t].update = map[g->tensors[t].update];
        if (g->tensors[t].state_of >= 0)
            g->tensors[t].state_of = map[g->tensors[t].state_of];
    }
    free(map);
    free(node_map);
    free(used);
    hash_rebuild(g);
}

void graph_make_variable(graph *g, int t)
{
    graph_tensor *x = &g->tensors[t];
    x->is_variable = true;
    x->init = x->data;
    x->data = NULL;
}

int graph_add_variable(graph *g, const char *base, graph_dtype dtype, const graph_shape *shape,
                       const void *init)
{
    size_t bytes = (size_t)graph_shape_numel(shape) * graph_dtype_size(dtype);
    void *zeros = init ? NULL : xcalloc(1, bytes ? bytes : 1);
    int t = graph_add_constant(g, base, dtype, shape, init ? init : zeros);
    free(zeros);
    graph_make_variable(g, t);
    return t;
}

void graph_set_update(graph *g, int v, int t)
{
    g->tensors[v].update = t;
}

bool graph_is_update(const graph *g, int t)
{
    for (int v = 0; v < g->n_tensors; v++)
        if (g->tensors[v].is_variable && g->tensors[v].update == t)
            return true;
    return false;
}

bool graph_node_folded(const graph *g, const graph_node *n)
{
    for (int k = 0; k < n->n_outputs; k++)
        if (n->outputs[k] >= 0 && !g->tensors[n->outputs[k]].data)
            return false;
    return true;
}

bool graph_is_constant(const graph *g, int t)
{
    return t >= 0 && g->tensors[t].data != NULL;
}

bool graph_constant_scalar(const graph *g, int t, double *v)
{
    if (!graph_is_constant(g, t) || graph_shape_numel(&g->tensors[t].shape) != 1)
        return false;
    *v = graph_load_f64(g->tensors[t].dtype, g->tensors[t].data, 0);
    return true;
}

bool graph_node_first_output_only(const graph_node *n)
{
    for (int i = 1; i < n->n_outputs; i++)
        if (n->outputs[i] >= 0)
            return false;
    return true;
}

int64_t graph_value_limit(const graph *g, int t)
{
    if (g->tensors[t].value_limit > 0)
        return g->tensors[t].value_limit;
    int64_t limit = 0;
    for (int k = 0; k < g->n_nodes; k++) {
        const graph_node *n = &g->nodes[k];
        if (n->removed || n->op != GRAPH_OP_GATHER || n->n_inputs < 2 || n->inputs[1] != t || n->inputs[0] < 0)
            continue;
        const graph_shape *table = &g->tensors[n->inputs[0]].shape;
        int64_t axis = graph_attr_int(n, "axis");
        axis = axis < 0 ? axis + table->rank : axis;
        if (axis >= 0 && axis < table->rank && (!limit || table->dims[axis] < limit))
            limit = table->dims[axis];
    }
    return limit;
}

int graph_consumers(const graph *g, int t, int *nodes, int max)
{
    int count = 0;
    for (int k = 0; k < g->n_nodes; k++) {
        const graph_node *n = &g->nodes[k];
        if (n->removed)
            continue;
        for (int i = 0; i < n->n_inputs; i++)
            if (n->inputs[i] == t) {
                if (nodes && count < max)
                    nodes[count] = k;
                count++;
                break;
            }
    }
    return count;
}

/* ---- listing ------------------------------------------------------------------------------- */

static void dump_type(FILE *f, const graph_tensor *x)
{
    char buf[200];
    if (x->shape_known)
        fprintf(f, "%s%s", graph_dtype_name(x->dtype), graph_shape_str(&x->shape, buf, sizeof buf));
    else
        fprintf(f, "?");
}

static void dump_attr(FILE *f, const graph_attr *a)
{
    fprintf(f, "%s=", a->name);
    switch (a->type) {
    case GATTR_INT: fprintf(f, "%lld", (long long)a->i); break;
    case GATTR_FLOAT: fprintf(f, "%g", a->f); break;
    case GATTR_STRING: fprintf(f, "%s", a->s); break;
    case GATTR_INTS:
        fputc('[', f);
        for (size_t i = 0; i < a->n; i++)
            fprintf(f, "%s%lld", i ? "," : "", (long long)a->ints[i]);
        fputc(']', f);
        break;
    case GATTR_FLOATS:
        fputc('[', f);
        for (size_t i = 0; i < a->n; i++)
            fprintf(f, "%s%g", i ? "," : "", a->floats[i]);
        fputc(']', f);
        break;
    case GATTR_TENSOR: dump_type(f, a->tensor); break;
    }
}

void graph_dump(const graph *g, FILE *f)
{
    fprintf(f, "graph %s opset %d\n", g->source, g->opset);
    for (int i = 0; i < g->n_inputs; i++) {
        fprintf(f, "  input %s ", g->tensors[g->inputs[i]].name);
        dump_type(f, &g->tensors[g->inputs[i]]);
        fputc('\n', f);
    }
    for (int t = 0; t < g->n_tensors; t++)
        if (g->tensors[t].data) {
            fprintf(f, "  const %s ", g->tensors[t].name);
            dump_type(f, &g->tensors[t]);
            fputc('\n', f);
        }
    for (int k = 0; k < g->n_nodes; k++) {
        const graph_node *n = &g->nodes[k];
        if (n->removed)
            continue;
        fprintf(f, "  %s(", graph_ops[n->op].name);
        for (int i = 0; i < n->n_inputs; i++)
            fprintf(f, "%s%s", i ? ", " : "", n->inputs[i] >= 0 ? g->tensors[n->inputs[i]].name : "");
        fprintf(f, ")");
        for (int i = 0; i < n->n_attrs; i++) {
            fputs(i ? ", " : " {", f);
            dump_attr(f, &n->attrs[i]);
        }
        fprintf(f, "%s -> ", n->n_attrs ? "}" : "");
        for (int i = 0; i < n->n_outputs; i++) {
            if (i)
                fputs(", ", f);
            if (n->outputs[i] < 0)
                continue;
            fprintf(f, "%s ", g->tensors[n->outputs[i]].name);
            dump_type(f, &g->tensors[n->outputs[i]]);
        }
        fputc('\n', f);
    }
    for (int i = 0; i < g->n_outputs; i++) {
        fprintf(f, "  output %s ", g->tensors[g->outputs[i]].name);
        dump_type(f, &g->tensors[g->outputs[i]]);
        fputc('\n', f);
    }
}

char *graph_dump_string(const graph *g)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f)
        fatal("out of memory");
    graph_dump(g, f);
    fclose(f);
    return buf;
}

/* A node's multiply-adds (0 for ops that are not matmuls or convolutions). */
static double node_macs(const graph *g, const graph_node *n)
{
    const graph_shape *a = &g->tensors[n->inputs[0]].shape, *b = &g->tensors[n->inputs[1]].shape;
    double out = (double)graph_shape_numel(&g->tensors[n->outputs[0]].shape);
    switch (n->op) {
    case GRAPH_OP_MATMUL:
    case GRAPH_OP_FUSED_MATMUL:
        return a->rank ? out * (double)a->dims[a->rank - 1] : 0;
    case GRAPH_OP_GEMM:
        return a->rank == 2 ? out * (double)a->dims[graph_attr_find(n, "transA") && graph_attr_int(n, "transA") ? 0 : 1]
                            : 0;
    case GRAPH_OP_CONV:
    case GRAPH_OP_FUSED_CONV:     /* W [Cout, Cin/group, kernel...] */
        return b->rank && b->dims[0] ? out * (double)graph_shape_numel(b) / (double)b->dims[0] : 0;
    case GRAPH_OP_CONV_TRANSPOSE: /* each element of dY meets W's [Cout/group, kernel...] */
        return b->rank && b->dims[0]
                   ? (double)graph_shape_numel(a) * (double)graph_shape_numel(b) / (double)b->dims[0] : 0;
    case GRAPH_OP_CONV_WEIGHT_GRAD: /* dY [N, Cout, pixels...]: each dW element sums N x pixels */
        return b->rank > 1 && b->dims[1] ? out * (double)graph_shape_numel(b) / (double)b->dims[1] : 0;
    default:
        return 0;
    }
}

double graph_model_macs(const graph *g)
{
    double macs = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const graph_node *n = &g->nodes[i];
        if (n->removed || n->n_inputs < 2 || n->n_outputs < 1 || n->outputs[0] < 0 || n->inputs[0] < 0 ||
            n->inputs[1] < 0 || graph_node_folded(g, n))
            continue;
        macs += node_macs(g, n);
    }
    return macs;
}

double graph_node_work(const graph *g, const graph_node *n)
{
    if (n->removed || n->n_outputs < 1 || n->outputs[0] < 0 || graph_node_folded(g, n))
        return 0;
    double out = (double)graph_shape_numel(&g->tensors[n->outputs[0]].shape);
    if (n->n_inputs >= 2 && n->inputs[0] >= 0 && n->inputs[1] >= 0)
        out += node_macs(g, n) / 16.0;
    return out;
}
