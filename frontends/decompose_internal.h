/*
 * decompose_internal.h — what the rewrites of decompose.h share (internal
 * to frontends/decompose*.c): a rewrite in progress (the nodes replacing
 * one node, appended to the graph), the emitters of the ops they use, and
 * the rewrites of the training ops (decompose_train.c) registered in
 * decompose.c's table.
 */
#ifndef IPUSIM_FRONTENDS_DECOMPOSE_INTERNAL_H
#define IPUSIM_FRONTENDS_DECOMPOSE_INTERNAL_H

#include <stdio.h>
#include <stdlib.h>

#include "decompose.h"
#include "graph.h"

/* The nodes replacing one node, appended to the graph (graph_sort puts them
 * in order); their tensors are named after the replaced node's output. */
typedef struct rewrite {
    graph *g;
    int out;                    /* the replaced node's output, written by the last new node */
    int first_new;              /* index of the first node added */
    char base[256];             /* the output's name */
    char node_name[256];        /* the replaced node's name ("" if none) */
} rewrite;

/* Start replacing node k (it is marked removed; graph_compact drops it). */
static inline rewrite rewrite_begin(graph *g, int k)
{
    graph_node *n = &g->nodes[k];
    rewrite rw = { .g = g, .out = n->outputs[0], .first_new = g->n_nodes };
    snprintf(rw.base, sizeof rw.base, "%s", g->tensors[rw.out].name);
    snprintf(rw.node_name, sizeof rw.node_name, "%s", n->name);
    g->phase = n->phase;              /* the nodes replacing it are of its phase ... */
    g->origin = n->origin;            /* ... and its origin */
    n->removed = true;
    return rw;
}

/* A node op(ins) writing a new tensor; returns the tensor. */
static inline int emit(rewrite *rw, graph_op op, const int *ins, int n_ins)
{
    graph *g = rw->g;
    char *name = graph_unique_name(g, rw->base);
    int out = graph_add_tensor(g, name);
    free(name);
    char node_name[300] = "";
    if (rw->node_name[0])
        snprintf(node_name, sizeof node_name, "%s/%s", rw->node_name, graph_ops[op].name);
    graph_add_node(g, op, node_name, ins, n_ins, &out, 1);
    return out;
}

static inline int unary(rewrite *rw, graph_op op, int a)
{
    return emit(rw, op, &a, 1);
}

static inline int binary(rewrite *rw, graph_op op, int a, int b)
{
    int ins[2] = { a, b };
    return emit(rw, op, ins, 2);
}

static inline int where(rewrite *rw, int cond, int a, int b)
{
    int ins[3] = { cond, a, b };
    return emit(rw, GRAPH_OP_WHERE, ins, 3);
}

static inline graph_node *last_node(rewrite *rw)
{
    return &rw->g->nodes[rw->g->n_nodes - 1];
}

/* The result of the rewrite is t: the last node added writes the replaced
 * node's output instead (its own tensor, now unused, goes at graph_compact);
 * when t was not made by it (an input passed through), a copy does. */
static inline void rewrite_end(rewrite *rw, int t)
{
    graph *g = rw->g;
    if (g->n_nodes > rw->first_new && last_node(rw)->outputs[0] == t) {
        last_node(rw)->outputs[0] = rw->out;
        g->tensors[t].producer = -1;
    } else {
        int ins[1] = { t };
        graph_add_node(g, GRAPH_OP_IDENTITY, rw->node_name, ins, 1, &rw->out, 1);
    }
    g->tensors[rw->out].producer = g->n_nodes - 1;
}

static inline int scalar_f32(rewrite *rw, float v)
{
    graph_shape s = { .rank = 0 };
    return graph_add_constant(rw->g, rw->base, GDT_F32, &s, &v);
}

/* A 1-D i64 constant: a shape for Reshape and Expand. */
static inline int shape_constant(rewrite *rw, const int64_t *dims, int rank)
{
    graph_shape s = { .rank = 1, .dims = { rank } };
    return graph_add_constant(rw->g, rw->base, GDT_I64, &s, dims);
}

static inline bool is_f32(const graph *g, int t)
{
    return g->tensors[t].dtype == GDT_F32;
}

static inline int transpose(rewrite *rw, int x, const int64_t *perm, int rank)
{
    int y = unary(rw, GRAPH_OP_TRANSPOSE, x);
    graph_set_attr_ints(last_node(rw), "perm", perm, (size_t)rank);
    return y;
}

/* A keepdims reduction of x over the axes [from, to) (an attribute in
 * opsets 11 to 17, the ones imported). */
static inline int reduce_axes(rewrite *rw, graph_op op, int x, int from, int to)
{
    int y = unary(rw, op, x);
    int64_t axes[GRAPH_MAX_RANK];
    for (int d = from; d < to; d++)
        axes[d - from] = d;
    graph_set_attr_ints(last_node(rw), "axes", axes, (size_t)(to - from));
    graph_set_attr_int(last_node(rw), "keepdims", 1);
    return y;
}

/* The replaced node's output out is t: the new node writing t writes out
 * instead (and the new nodes reading t read out), or (t an input passed
 * through, or a tensor already bound) a copy does.  For nodes of several
 * outputs; out < 0 (omitted) is skipped. */
static inline void rewrite_bind(rewrite *rw, int out, int t)
{
    graph *g = rw->g;
    if (out < 0)
        return;
    int p = g->tensors[t].producer;
    if (p >= rw->first_new && !g->tensors[t].is_output) {
        for (int k = rw->first_new; k < g->n_nodes; k++) {
            graph_node *n = &g->nodes[k];
            for (int i = 0; i < n->n_inputs; i++)
                if (n->inputs[i] == t)
                    n->inputs[i] = out;
            for (int i = 0; i < n->n_outputs; i++)
                if (n->outputs[i] == t)
                    n->outputs[i] = out;
        }
        g->tensors[t].producer = -1;
    } else {
        int ins[1] = { t };
        p = graph_add_node(g, GRAPH_OP_IDENTITY, rw->node_name, ins, 1, &out, 1);
    }
    g->tensors[out].producer = p;
}

/* The rewrites of decompose_train.c (each returns whether it rewrote node k). */
bool decompose_class_loss(graph *g, int k, decompose_stats *st);
bool decompose_optimizer(graph *g, int k, decompose_stats *st);
bool decompose_batchnorm_training(graph *g, int k, decompose_stats *st);

#endif
