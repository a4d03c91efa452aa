/*
 * merge_common.c — common subexpressions merged (merge_common.h): a node
 * computing what an earlier one already computes (the same op, the same
 * attributes, the same inputs, constants compared by value) is dropped and
 * its readers read the earlier node's outputs.
 *
 * A training graph has them wherever a gradient rule recomputes a value of
 * the forward pass: BatchNormalization's mean, centred input and inverse
 * deviation, rebuilt by its rule in the ops the forward pass is decomposed
 * into.  Poplar keeps such values from the forward pass; so does this.
 */
#include "merge_common.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/diag.h"
#include "sim/base/hash.h"

/* Constants compared by value up to this size; larger ones (weights) only
 * by tensor. */
#define MERGE_CONSTANT_MAX_BYTES 4096

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
}

static size_t constant_bytes(const graph_tensor *t)
{
    return (size_t)graph_shape_numel(&t->shape) * graph_dtype_size(t->dtype);
}

/* Small constants equal in dtype, shape and bytes. */
static bool same_constant(const graph_tensor *a, const graph_tensor *b)
{
    return a->dtype == b->dtype && graph_shape_equal(&a->shape, &b->shape) &&
           memcmp(a->data, b->data, constant_bytes(a)) == 0;
}

static bool same_attr(const graph_attr *a, const graph_attr *b)
{
    if (a->type != b->type || strcmp(a->name, b->name) != 0)
        return false;
    switch (a->type) {
    case GATTR_INT: return a->i == b->i;
    case GATTR_FLOAT: return a->f == b->f;
    case GATTR_STRING: return strcmp(a->s, b->s) == 0;
    case GATTR_INTS: return a->n == b->n && (!a->n || memcmp(a->ints, b->ints, a->n * sizeof *a->ints) == 0);
    case GATTR_FLOATS:
        return a->n == b->n && (!a->n || memcmp(a->floats, b->floats, a->n * sizeof *a->floats) == 0);
    case GATTR_TENSOR: return a->tensor == b->tensor;
    }
    return false;
}

/* The same attributes, in any order. */
static bool same_attrs(const graph_node *a, const graph_node *b)
{
    if (a->n_attrs != b->n_attrs)
        return false;
    for (int i = 0; i < a->n_attrs; i++) {
        int j = 0;
        while (j < b->n_attrs && strcmp(a->attrs[i].name, b->attrs[j].name) != 0)
            j++;
        if (j == b->n_attrs || !same_attr(&a->attrs[i], &b->attrs[j]))
            return false;
    }
    return true;
}

/* Ops whose outputs are not a function of their inputs and attributes
 * (a training Dropout draws a mask), and ops with a tensor attribute
 * (compared by pointer only): never merged. */
static bool mergeable(const graph_node *n)
{
    if (n->removed || n->op == GRAPH_OP_DROPOUT)
        return false;
    for (int i = 0; i < n->n_attrs; i++)
        if (n->attrs[i].type == GATTR_TENSOR)
            return false;
    return true;
}

/* Two nodes compute the same outputs (inputs already replaced by their
 * representatives). */
static bool same_node(const graph_node *a, const graph_node *b)
{
    if (a->op != b->op || a->n_inputs != b->n_inputs || a->n_outputs != b->n_outputs)
        return false;
    for (int i = 0; i < a->n_inputs; i++)
        if (a->inputs[i] != b->inputs[i])
            return false;
    for (int i = 0; i < a->n_outputs; i++)
        if ((a->outputs[i] < 0) != (b->outputs[i] < 0))
            return false;
    return same_attrs(a, b);
}

static uint64_t node_hash(const graph_node *n)
{
    uint64_t h = mix(0, (uint64_t)n->op);
    for (int i = 0; i < n->n_inputs; i++)
        h = mix(h, (uint64_t)(int64_t)n->inputs[i]);
    return h;
}

/* Open addressing over node or tensor indices + 1 (0: empty). */
typedef struct index_table {
    int *slot;
    size_t cap;
} index_table;

static void table_init(index_table *t, size_t n)
{
    t->cap = 16;
    while (t->cap < 2 * n + 16)
        t->cap *= 2;
    t->slot = calloc(t->cap, sizeof *t->slot);
    if (!t->slot)
        panic("out of host memory");
}

/* The first stored index for which equal(stored) holds among the entries
 * of hash h, else stores `index` and returns -1. */
static int table_find_or_add(index_table *t, uint64_t h, int index, bool (*equal)(const graph *, int, int),
                             const graph *g)
{
    size_t at = (size_t)h & (t->cap - 1);
    while (t->slot[at]) {
        if (equal(g, t->slot[at] - 1, index))
            return t->slot[at] - 1;
        at = (at + 1) & (t->cap - 1);
    }
    t->slot[at] = index + 1;
    return -1;
}

static bool equal_constants(const graph *g, int a, int b)
{
    return same_constant(&g->tensors[a], &g->tensors[b]);
}

static bool equal_nodes(const graph *g, int a, int b)
{
    return same_node(&g->nodes[a], &g->nodes[b]);
}

/* Every tensor's representative: itself, or the first small constant of
 * the same value. */
static int *constant_representatives(const graph *g)
{
    int *rep = malloc(((size_t)g->n_tensors + 1) * sizeof *rep);
    if (!rep)
        panic("out of host memory");
    index_table t;
    table_init(&t, (size_t)g->n_tensors);
    for (int i = 0; i < g->n_tensors; i++) {
        const graph_tensor *x = &g->tensors[i];
        rep[i] = i;
        if (!x->data || x->is_variable || x->is_input || x->is_output || x->dtype == GDT_UNDEFINED ||
            constant_bytes(x) > MERGE_CONSTANT_MAX_BYTES)
            continue;
        uint64_t h = mix(hash_fnv1a(x->data, constant_bytes(x)), (uint64_t)x->dtype);
        int first = table_find_or_add(&t, h, i, equal_constants, g);
        if (first >= 0)
            rep[i] = first;
    }
    free(t.slot);
    return rep;
}

int merge_common_nodes(graph *g)
{
    int *rep = constant_representatives(g);
    index_table t;
    table_init(&t, (size_t)g->n_nodes);
    int merged = 0;
    for (int k = 0; k < g->n_nodes; k++) {
        graph_node *n = &g->nodes[k];
        if (n->removed)
            continue;
        for (int i = 0; i < n->n_inputs; i++)
            if (n->inputs[i] >= 0)
                n->inputs[i] = rep[n->inputs[i]];
        if (!mergeable(n))
            continue;
        bool keep_outputs = false;
        for (int i = 0; i < n->n_outputs; i++)
            if (n->outputs[i] >= 0 && g->tensors[n->outputs[i]].is_output)
                keep_outputs = true;
        if (keep_outputs)
            continue;
        int first = table_find_or_add(&t, node_hash(n), k, equal_nodes, g);
        if (first < 0)
            continue;
        /* Node k is node first again: its readers (all later in the
         * order) read first's outputs, which are needed as early as the
         * earlier of the two phases. */
        graph_node *f = &g->nodes[first];
        /* An f16 weight's value for its update is cast from the weight
         * again (an element-wise pass) rather than kept from the forward
         * pass to the end of the step in f32 (train.c). */
        if (n->op == GRAPH_OP_CAST && n->phase == GRAPH_PHASE_UPDATE && f->phase != GRAPH_PHASE_UPDATE)
            continue;
        for (int i = 0; i < n->n_outputs; i++)
            if (n->outputs[i] >= 0)
                rep[n->outputs[i]] = f->outputs[i];
        if (n->phase < f->phase)
            f->phase = n->phase;
        n->removed = true;
        merged++;
    }
    /* Variables' updates read through the representatives too. */
    for (int i = 0; i < g->n_tensors; i++)
        if (g->tensors[i].is_variable && g->tensors[i].update >= 0)
            g->tensors[i].update = rep[g->tensors[i].update];
    free(t.slot);
    free(rep);
    if (merged)
        graph_compact(g);
    return merged;
}
