/*
 * train_pipeline.c — a training step of several micro-batches, on several
 * pipeline stages, scheduled as Graphcore's software runs one (PopART's
 * pipelining with gradient accumulation):
 *
 *   - micro-batches: the forward and backward passes are made once for
 *     each micro-batch (the step's nodes that read the data copied, their
 *     tensors and inputs named "mbM/NAME" for micro-batch M > 0; nodes that
 *     read only weights stay one, graph_node.weights_only, run first in
 *     micro-batch 0's cycle); each gradient the update reads is the sum of
 *     the micro-batches' (a Zeros made once, then an Add a micro-batch into
 *     it in place, in its backward pass, as PopART zeroes its accumulators
 *     and adds every micro-batch's gradient into them), and the update
 *     divides by their count (train.c): every micro-batch's passes are then
 *     the same nodes, micro-batch 0's too; a table the first stage looks up
 *     and the tied head reads again has one accumulator both add into as
 *     they make their parts;
 *   - stages: the forward nodes are cut, in order, into runs of about equal
 *     work (graph_node_work), one a stage; a backward node runs on the
 *     stage of the forward node whose gradient it is (graph_node.origin;
 *     one a pass made since, on the stage of the forward tensors it reads),
 *     or lower where its gradient inputs come from a lower stage, so that
 *     the backward pass goes down the stages again; where a stage reads
 *     a tensor another stage made (or an input or weight another stage
 *     holds) an IpuCopy to the reading stage is made, once for each;
 *   - a tied weight: where a later stage's forward node reads a weight the
 *     first stage reads (BERT's masked-LM decoder and the word table), that
 *     node and what follows from it are one more stage, S, on chip 0
 *     (wrap_tied_head), as Graphcore's BERT runs its decoder on IPU 0;
 *   - the schedule: in pipeline cycle t, stage s runs the forward pass of
 *     micro-batch t - s and the backward pass of micro-batch
 *     t - (2 S - 2 - s), S the stages (PopART's pipeline stages: the
 *     forward stages on chips 0 .. S-1, then the backward stages on chips
 *     S-1 .. 0), M + 2 S - 2 cycles in all (S counting a tied head); the copies of what a cycle made
 *     run in the exchange after it; the all-reduce and the update follow
 *     the last cycle.  graph_node.cycle is the node's cycle (-1 for the
 *     all-reduce and the update), graph_node.stage its stage.
 *
 * The lowering (lower.c) runs the stages of one cycle at the same time,
 * each chip with syncs of its own, and ends the cycle with a sync of the
 * whole system: a cycle takes as long as its slowest stage.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autodiff.h"
#include "sim/base/diag.h"

static bool fwd_bwd(const graph_node *n)
{
    return n->phase == GRAPH_PHASE_FORWARD || n->phase == GRAPH_PHASE_BACKWARD;
}

/* ---- stages ------------------------------------------------------------------------------------ */

/* A weight the first stage reads (an embedding table) read again by a
 * forward node of a later stage (the masked-LM decoder tied to it): that
 * node and the forward nodes after it that read what it makes go to one
 * more stage, S, on chip 0 with the weight, as Graphcore's BERT runs its
 * decoder on the embedding's IPU; the table is not copied.  Returns the
 * stages counted so (S or S + 1). */
static uint32_t wrap_tied_head(graph *g, uint32_t stages)
{
    bool *first = calloc((size_t)g->n_tensors + 1, sizeof *first), *wrapped = calloc((size_t)g->n_tensors + 1, 1);
    if (!first || !wrapped)
        panic("out of host memory");
    /* the weights stage 0 reads, and what it computes of weights alone (an
     * f16 weight's Cast) */
    for (int k = 0; k < g->n_nodes; k++) {
        const graph_node *n = &g->nodes[k];
        if (n->phase != GRAPH_PHASE_FORWARD || n->stage != 0)
            continue;
        bool weights_only = true;
        for (int i = 0; i < n->n_inputs; i++) {
            int t = n->inputs[i];
            if (t < 0)
                continue;
            if (g->tensors[t].is_variable)
                first[t] = true;
            else if (!first[t] && !g->tensors[t].data)
                weights_only = false;
        }
        for (int i = 0; i < n->n_outputs && weights_only; i++)
            if (n->outputs[i] >= 0)
                first[n->outputs[i]] = true;
    }
    bool any = false;
    for (int k = 0; k < g->n_nodes && stages > 1; k++) {
        graph_node *n = &g->nodes[k];
        if (n->phase != GRAPH_PHASE_FORWARD || n->stage == 0)
            continue;
        bool wrap = false;
        for (int i = 0; i < n->n_inputs; i++)
            wrap |= n->inputs[i] >= 0 && (first[n->inputs[i]] || wrapped[n->inputs[i]]);
        if (!wrap)
            continue;
        n->stage = (int)stages;
        any = true;
        for (int i = 0; i < n->n_outputs; i++)
            if (n->outputs[i] >= 0)
                wrapped[n->outputs[i]] = true;
    }
    free(first);
    free(wrapped);
    return any ? stages + 1 : stages;
}

/* The forward nodes of weights alone (their inputs variables, constants
 * or what such nodes make: an f16 weight's Cast, a weight's transpose):
 * calloc'd, one a node. */
static bool *nodes_of_weights(const graph *g)
{
    bool *of_weights = calloc((size_t)g->n_tensors + 1, sizeof *of_weights);
    bool *alone = calloc((size_t)g->n_nodes + 1, sizeof *alone);
    if (!of_weights || !alone)
        panic("out of host memory");
    for (int k = 0; k < g->n_nodes; k++) {
        const graph_node *n = &g->nodes[k];
        if (n->phase != GRAPH_PHASE_FORWARD)
            continue;
        alone[k] = true;
        for (int i = 0; i < n->n_inputs; i++) {
            int t = n->inputs[i];
            if (t >= 0 && !g->tensors[t].is_variable && !g->tensors[t].data && !of_weights[t])
                alone[k] = false;
        }
        for (int i = 0; i < n->n_outputs && alone[k]; i++)
            if (n->outputs[i] >= 0)
                of_weights[n->outputs[i]] = true;
    }
    free(of_weights);
    return alone;
}

/* After a tied head: chip 0 also runs the head, so the rest of the
 * forward pass is cut again with the head's work counted as chip 0's
 * first; what chip 0 reads or makes for the head (the tied weight's
 * lookup, its transpose) stays there. */
static void recut_after_head(graph *g, uint32_t stages, double total)
{
    double head = 0;
    bool *for_head = calloc((size_t)g->n_tensors + 1, sizeof *for_head);
    if (!for_head)
        panic("out of host memory");
    for (int k = 0; k < g->n_nodes; k++)
        if (g->nodes[k].phase == GRAPH_PHASE_FORWARD && g->nodes[k].stage == (int)stages) {
            head += graph_node_work(g, &g->nodes[k]);
            for (int i = 0; i < g->nodes[k].n_inputs; i++)
                if (g->nodes[k].inputs[i] >= 0)
                    for_head[g->nodes[k].inputs[i]] = true;
        }
    bool *weights_only = nodes_of_weights(g);
    double acc = head;
    for (int k = 0; k < g->n_nodes; k++) {
        graph_node *n = &g->nodes[k];
        if (n->phase != GRAPH_PHASE_FORWARD || n->stage == (int)stages)
            continue;
        bool stay = false;
        uint32_t v = (uint32_t)(acc / (total > 0 ? total : 1) * stages);
        for (int i = 0; i < n->n_inputs && n->stage == 0; i++)
            stay |= n->inputs[i] >= 0 && g->tensors[n->inputs[i]].is_variable && for_head[n->inputs[i]];
        for (int i = 0; i < n->n_outputs && n->stage == 0 && weights_only[k]; i++)
            stay |= n->outputs[i] >= 0 && for_head[n->outputs[i]];
        if (!stay)
            n->stage = (int)(v < stages ? v : stages - 1);
        acc += graph_node_work(g, n);
    }
    free(for_head);
    free(weights_only);
}

/* A forward node of weights alone (an f16 weight's Cast to f32), which
 * the topological order puts first, on the earliest stage that reads what
 * it makes, so that a weight goes with its layer (and only the tables the
 * first stage looks up count as the first stage's, wrap_tied_head). */
static void weights_with_readers(graph *g)
{
    bool *alone = nodes_of_weights(g);
    int *reader = malloc(((size_t)g->n_tensors + 1) * sizeof *reader);
    if (!reader)
        panic("out of host memory");
    for (int t = 0; t < g->n_tensors; t++)
        reader[t] = -1;
    for (int k = g->n_nodes - 1; k >= 0; k--) {
        graph_node *n = &g->nodes[k];
        if (n->phase != GRAPH_PHASE_FORWARD)
            continue;
        int first = -1;
        for (int i = 0; i < n->n_outputs && alone[k]; i++)
            if (n->outputs[i] >= 0 && reader[n->outputs[i]] >= 0 && (first < 0 || reader[n->outputs[i]] < first))
                first = reader[n->outputs[i]];
        if (first >= 0)
            n->stage = first;
        for (int i = 0; i < n->n_inputs; i++) {
            int t = n->inputs[i];
            if (t >= 0 && (reader[t] < 0 || n->stage < reader[t]))
                reader[t] = n->stage;
        }
    }
    free(alone);
    free(reader);
}

/* An update node of the optimizer's state and constants alone (unplaced:
 * a moment's decay, the Cast of f16 state) runs on the stage of the update
 * that reads what it makes, the weight's, so that the state lives on the
 * weight's chip: from the last node back (the nodes are in a topological
 * order), each tensor's update reader's stage in reader[]. */
static void state_with_its_weight(graph *g, bool *unplaced)
{
    int *reader = malloc(((size_t)g->n_tensors + 1) * sizeof *reader);
    if (!reader)
        panic("out of host memory");
    for (int t = 0; t < g->n_tensors; t++)
        reader[t] = -1;
    for (int k = g->n_nodes - 1; k >= 0; k--) {
        graph_node *n = &g->nodes[k];
        if (n->phase != GRAPH_PHASE_UPDATE)
            continue;
        for (int i = 0; i < n->n_outputs && unplaced[k]; i++)
            if (n->outputs[i] >= 0 && reader[n->outputs[i]] >= 0) {
                n->stage = reader[n->outputs[i]];
                unplaced[k] = false;
            }
        for (int i = 0; i < n->n_inputs && !unplaced[k]; i++)
            if (n->inputs[i] >= 0)
                reader[n->inputs[i]] = n->stage;
    }
    free(reader);
}

/* The forward nodes cut into `stages` runs of about equal work (and a
 * tied head, wrap_tied_head); every other node's stage from the tensors
 * it reads (above).  Stages here are the pipeline's (v), on chip v mod S;
 * returns how many. */
static uint32_t assign_stages(graph *g, uint32_t stages)
{
    double total = 0, acc = 0;
    for (int k = 0; k < g->n_nodes; k++)
        if (g->nodes[k].phase == GRAPH_PHASE_FORWARD)
            total += graph_node_work(g, &g->nodes[k]);
    int *home = malloc((size_t)g->n_tensors * sizeof *home + 1);
    if (!home)
        panic("out of host memory");
    for (int t = 0; t < g->n_tensors; t++)
        home[t] = -1;
    for (int k = 0; k < g->n_nodes; k++) {
        graph_node *n = &g->nodes[k];
        if (n->phase != GRAPH_PHASE_FORWARD)
            continue;
        uint32_t s = (uint32_t)(acc / (total > 0 ? total : 1) * stages);
        n->stage = (int)(s < stages ? s : stages - 1);
        acc += graph_node_work(g, n);
    }
    weights_with_readers(g);
    uint32_t pipeline = wrap_tied_head(g, stages);
    if (pipeline > stages) {
        recut_after_head(g, stages, total);
        weights_with_readers(g);
    }
    for (int k = 0; k < g->n_nodes; k++) {
        const graph_node *n = &g->nodes[k];
        if (n->phase == GRAPH_PHASE_FORWARD)
            for (int i = 0; i < n->n_inputs; i++)
                if (n->inputs[i] >= 0 && n->stage > home[n->inputs[i]])
                    home[n->inputs[i]] = n->stage;
    }
    /* the stage of each forward node by its tag (graph_node.origin) */
    int tags = 0;
    for (int k = 0; k < g->n_nodes; k++)
        if (g->nodes[k].origin >= tags)
            tags = g->nodes[k].origin + 1;
    int *tag_stage = malloc((size_t)tags * sizeof *tag_stage + 1);
    if (!tag_stage)
        panic("out of host memory");
    for (int i = 0; i < tags; i++)
        tag_stage[i] = -1;
    for (int k = 0; k < g->n_nodes; k++)
        if (g->nodes[k].phase == GRAPH_PHASE_FORWARD && g->nodes[k].origin >= 0)
            tag_stage[g->nodes[k].origin] = g->nodes[k].stage;
    bool *unplaced = calloc((size_t)g->n_nodes + 1, sizeof *unplaced);
    if (!unplaced)
        panic("out of host memory");
    for (int k = 0; k < g->n_nodes; k++) {
        graph_node *n = &g->nodes[k];
        if (n->phase == GRAPH_PHASE_FORWARD)
            continue;
        int forward = -1, backward = -1, produced = -1;
        /* an update node goes by its largest operands, the weight-shaped
         * ones, not by the scalars all updates share (Adam's corrections) */
        int64_t largest = 0;
        for (int i = 0; i < n->n_inputs && n->phase == GRAPH_PHASE_UPDATE; i++)
            if (n->inputs[i] >= 0 && graph_shape_numel(&g->tensors[n->inputs[i]].shape) > largest)
                largest = graph_shape_numel(&g->tensors[n->inputs[i]].shape);
        for (int i = 0; i < n->n_inputs; i++) {
            int t = n->inputs[i];
            if (t < 0 || graph_shape_numel(&g->tensors[t].shape) < largest)
                continue;
            int p = g->tensors[t].producer;
            if (p >= 0 && g->nodes[p].phase != GRAPH_PHASE_FORWARD) {
                int ps = g->nodes[p].stage;
                if (g->nodes[p].phase == GRAPH_PHASE_BACKWARD && (backward < 0 || ps < backward))
                    backward = ps;
                if (ps > produced)
                    produced = ps;
            } else if (home[t] > forward) {
                forward = home[t];
            }
        }
        if (n->phase == GRAPH_PHASE_UPDATE) {
            /* the update runs outside the cycles: near its operands (one
             * of the optimizer's state and constants alone: below) */
            n->stage = produced >= 0 ? produced : forward >= 0 ? forward : 0;
            unplaced[k] = produced < 0 && forward < 0;
            continue;
        }
        /* the stage of the forward node it is the gradient of; else of
         * the forward tensors it reads */
        int s = n->origin >= 0 && tag_stage[n->origin] >= 0 ? tag_stage[n->origin]
                : forward >= 0                              ? forward
                                                            : (int)pipeline - 1;
        if (backward >= 0 && backward < s)
            s = backward;
        n->stage = s;
        for (int i = 0; i < n->n_outputs; i++)
            if (n->outputs[i] >= 0)
                home[n->outputs[i]] = -1;
    }
    state_with_its_weight(g, unplaced);
    free(unplaced);
    /* A backward node of weights alone (a weight's transpose for the data
     * gradient) read on one stage only runs there, so the weight is not
     * sent across in its new form: from the last node back (reader[t]: -1
     * none yet, -2 several stages). */
    int *reader = malloc((size_t)g->n_tensors * sizeof *reader + 1);
    bool *weights = calloc((size_t)g->n_tensors + 1, sizeof *weights);
    if (!reader || !weights)
        panic("out of host memory");
    for (int t = 0; t < g->n_tensors; t++) {
        reader[t] = -1;
        weights[t] = g->tensors[t].is_variable || g->tensors[t].data;
    }
    for (int k = 0; k < g->n_nodes; k++) {
        const graph_node *n = &g->nodes[k];
        bool only = n->phase != GRAPH_PHASE_UPDATE;
        for (int i = 0; i < n->n_inputs && only; i++)
            only = n->inputs[i] < 0 || weights[n->inputs[i]];
        for (int i = 0; i < n->n_outputs && only; i++)
            if (n->outputs[i] >= 0)
                weights[n->outputs[i]] = true;
    }
    for (int k = g->n_nodes - 1; k >= 0; k--) {
        graph_node *n = &g->nodes[k];
        if (n->phase == GRAPH_PHASE_BACKWARD && n->n_outputs && n->outputs[0] >= 0 && weights[n->outputs[0]] &&
            reader[n->outputs[0]] >= 0)
            n->stage = reader[n->outputs[0]];
        if (n->phase == GRAPH_PHASE_UPDATE)
            continue;
        for (int i = 0; i < n->n_inputs; i++) {
            int t = n->inputs[i];
            if (t >= 0)
                reader[t] = reader[t] == -1 || reader[t] == n->stage ? n->stage : -2;
        }
    }
    free(reader);
    free(weights);
    free(home);
    free(tag_stage);
    return pipeline;
}

/* ---- micro-batches ----------------------------------------------------------------------------- */

/* A new tensor of `like`'s dtype, shape and values, named from the format
 * (made unique). */
static int tensor_like(graph *g, int like, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int tensor_like(graph *g, int like, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *base = malloc((size_t)len + 1);
    if (!base)
        panic("out of host memory");
    va_start(ap, fmt);
    vsnprintf(base, (size_t)len + 1, fmt, ap);
    va_end(ap);
    char *name = graph_unique_name(g, base);
    int c = graph_add_tensor(g, name);
    free(name);
    free(base);
    const graph_tensor *x = &g->tensors[like];
    graph_tensor *y = &g->tensors[c];
    y->dtype = x->dtype;
    y->shape = x->shape;
    y->shape_known = x->shape_known;
    y->value_limit = x->value_limit;
    return c;
}

/* The tensors the step's forward and backward nodes make from the data
 * (the graph's inputs that are neither constants nor variables), found
 * until nothing changes (recomputed nodes come after the backward nodes
 * that read them); calloc'd, one a tensor. */
static bool *data_tensors(const graph *g)
{
    bool *data = calloc((size_t)g->n_tensors + 1, sizeof *data);
    if (!data)
        panic("out of host memory");
    for (int i = 0; i < g->n_inputs; i++) {
        const graph_tensor *x = &g->tensors[g->inputs[i]];
        data[g->inputs[i]] = !x->data && !x->is_variable;
    }
    for (bool changed = true; changed;) {
        changed = false;
        for (int k = 0; k < g->n_nodes; k++) {
            const graph_node *n = &g->nodes[k];
            if (!fwd_bwd(n) || n->removed)
                continue;
            bool reads = false;
            for (int i = 0; i < n->n_inputs; i++)
                reads |= n->inputs[i] >= 0 && data[n->inputs[i]];
            for (int i = 0; i < n->n_outputs; i++)
                if (n->outputs[i] >= 0 && reads && !data[n->outputs[i]])
                    data[n->outputs[i]] = changed = true;
        }
    }
    return data;
}

/* Micro-batch m's copy of tensor x (x itself for m = 0 or a tensor not of
 * the data). */
static int of_micro_batch(int x, uint32_t m, int *const *copies, const bool *data)
{
    return m && x >= 0 && data[x] ? copies[x][m] : x;
}

/* Whether backward tensor t is a scatter-add into a gradient that another
 * stage on the same chip makes (BERT's word table: the lookup's gradient
 * on the first stage scattered into the tied decoder's, made on the head,
 * train.c scatter_into_sums), read by the update alone. */
static bool scatter_into_other_stage(const graph *g, int t, const bool *data, int chips)
{
    const graph_node *n = &g->nodes[g->tensors[t].producer];
    if (n->op != GRAPH_OP_GATHERGRAD || n->phase != GRAPH_PHASE_BACKWARD || n->n_inputs != 3 || n->inputs[2] < 0)
        return false;
    int a = n->inputs[2], p = g->tensors[a].producer;
    if (p < 0 || !data[a] || g->nodes[p].phase != GRAPH_PHASE_BACKWARD || g->nodes[p].stage == n->stage ||
        g->nodes[p].stage % chips != n->stage % chips)
        return false;
    for (int k = 0; k < g->n_nodes; k++)
        for (int i = 0; i < g->nodes[k].n_inputs && !g->nodes[k].removed; i++)
            if (g->nodes[k].inputs[i] == t && g->nodes[k].phase != GRAPH_PHASE_UPDATE)
                return false;
    return true;
}

/* A gradient sum's start: zeros of t's dtype and shape, on stage `stage`
 * in micro-batch 0's backward cycle, laid out as variable `like` (the
 * weight t is the gradient of; -1: as the sum's first addend). */
static int sum_zeros(graph *g, int t, int like, int stage)
{
    int out = tensor_like(g, t, "accumulator/%s", g->tensors[t].name);
    int j = graph_add_node(g, GRAPH_OP_ZEROS, "", &like, like >= 0, &out, 1);
    graph_node *z = &g->nodes[j];
    const graph_shape *s = &g->tensors[t].shape;
    graph_set_attr_int(z, "to", g->tensors[t].dtype);
    graph_set_attr_ints(z, "shape", s->dims, (size_t)s->rank);
    z->stage = stage;
    z->cycle = 0;
    z->weights_only = true;
    return out;
}

/* The weight of as many elements as gradient t that the update reads it
 * with (or whose optimizer state it reads it with): read by update node
 * k, or by the update nodes that follow from k's output (the mean's
 * scaling, an all-reduce); -1: none. */
static int update_variable(const graph *g, int k, int t)
{
    int64_t numel = graph_shape_numel(&g->tensors[t].shape);
    for (int hops = 0; hops < 4 && k >= 0; hops++) {
        const graph_node *u = &g->nodes[k];
        for (int i = 0; i < u->n_inputs; i++) {
            int v = u->inputs[i];
            if (v >= 0 && g->tensors[v].is_variable && g->tensors[v].state_of >= 0)
                v = g->tensors[v].state_of;
            if (v >= 0 && g->tensors[v].is_variable && graph_shape_numel(&g->tensors[v].shape) == numel)
                return v;
        }
        int o = u->n_outputs ? u->outputs[0] : -1, next = -1;
        for (int j = k + 1; o >= 0 && j < g->n_nodes && next < 0; j++)
            for (int i = 0; i < g->nodes[j].n_inputs && next < 0; i++)
                if (g->nodes[j].inputs[i] == o && g->nodes[j].phase == GRAPH_PHASE_UPDATE && !g->nodes[j].removed)
                    next = j;
        k = next;
    }
    return -1;
}

/* The sum over the micro-batches of backward tensor t, as PopART
 * accumulates gradients: zeros (sum_zeros) laid out as `like`, made once a step, and an Add
 * a micro-batch on t's stage, in the cycle that makes it, into them in
 * place, so that every micro-batch's backward pass is the same nodes,
 * micro-batch 0's too.  A scatter-add into another stage's gradient
 * (scatter_into_other_stage) is one accumulator both stages add into, in
 * the order of their cycles: the head's gradient of each micro-batch
 * added as it is made, each micro-batch's lookup scattered into the sum
 * (PopLibs' multiUpdateAdd into the accumulator), so that no
 * micro-batch's table-sized gradient waits for the first stage's backward
 * pass of it; t's own scatter-adds are then dropped. */
static int micro_batch_sum(graph *g, int t, int like, int *const *copies, const bool *data, uint32_t micro_batches,
                           int chips)
{
    int p = g->tensors[t].producer;
    g->phase = GRAPH_PHASE_BACKWARD;
    if (scatter_into_other_stage(g, t, data, chips)) {
        int a = g->nodes[p].inputs[2], sa = g->nodes[g->tensors[a].producer].stage, st = g->nodes[p].stage;
        /* backward cycles go as m - stage: the sooner of the next of each */
        int acc = sum_zeros(g, t, like, sa > st ? sa : st);
        for (uint32_t ma = 0, ms = 0; ma < micro_batches || ms < micro_batches;) {
            int ka = (int)ma - sa, ks = (int)ms - st;
            bool add = ma < micro_batches && (ms >= micro_batches || ka < ks || (ka == ks && sa < st));
            int out = tensor_like(g, t, "accumulated");
            if (add) {
                int in[2] = { acc, of_micro_batch(a, ma, copies, data) };
                int j = graph_add_node(g, GRAPH_OP_ADD, "", in, 2, &out, 1);
                g->nodes[j].stage = sa;
                g->nodes[j].cycle = (int)ma++;
                g->nodes[j].accumulates = true;
            } else {
                int from = g->tensors[of_micro_batch(t, ms, copies, data)].producer;
                int in[3] = { of_micro_batch(g->nodes[p].inputs[0], ms, copies, data),
                              of_micro_batch(g->nodes[p].inputs[1], ms, copies, data), acc };
                int j = graph_add_node(g, GRAPH_OP_GATHERGRAD, "", in, 3, &out, 1);
                graph_copy_attrs(&g->nodes[j], &g->nodes[from]);
                g->nodes[j].stage = st;
                g->nodes[j].cycle = (int)ms++;
                g->nodes[j].accumulates = true;
                g->nodes[from].removed = true;
            }
            acc = out;
        }
        return acc;
    }
    int stage = g->nodes[p].stage, acc = sum_zeros(g, t, like, stage);
    for (uint32_t m = 0; m < micro_batches; m++) {
        int out = tensor_like(g, t, "accumulated");
        int in[2] = { acc, of_micro_batch(t, m, copies, data) };
        int j = graph_add_node(g, GRAPH_OP_ADD, "", in, 2, &out, 1);
        g->nodes[j].stage = stage;
        g->nodes[j].cycle = (int)m;
        g->nodes[j].accumulates = true;
        acc = out;
    }
    return acc;
}

/* Micro-batches 1 .. m - 1 of every forward and backward node that reads
 * the data (node.cycle holds each node's micro-batch until the schedule);
 * the update reading each gradient's sum over them (chips: the chips the
 * stages run on). */
static void unroll(graph *g, uint32_t micro_batches, uint32_t chips)
{
    int n_tensors = g->n_tensors, n_nodes = g->n_nodes, n_inputs = g->n_inputs, n_outputs = g->n_outputs;
    bool *data = data_tensors(g);
    int *map = malloc((size_t)n_tensors * sizeof *map + 1);
    int **copies = calloc((size_t)n_tensors + 1, sizeof *copies);
    if (!map || !copies)
        panic("out of host memory");
    for (int k = 0; k < n_nodes; k++) {
        graph_node *n = &g->nodes[k];
        n->cycle = 0;
        bool of_data = false;
        for (int i = 0; i < n->n_outputs; i++)
            of_data |= n->outputs[i] >= 0 && data[n->outputs[i]];
        n->weights_only = fwd_bwd(n) && !n->removed && !of_data;
    }
    for (int t = 0; t < n_tensors; t++)
        if (data[t] && !(copies[t] = malloc(micro_batches * sizeof **copies)))
            panic("out of host memory");
    for (uint32_t m = 1; m < micro_batches; m++) {
        for (int t = 0; t < n_tensors; t++) {
            map[t] = data[t] ? tensor_like(g, t, "mb%u/%s", m, g->tensors[t].name) : t;
            if (data[t])
                copies[t][m] = map[t];
        }
        for (int i = 0; i < n_inputs; i++)
            if (data[g->inputs[i]])
                graph_add_input(g, map[g->inputs[i]]);
        for (int i = 0; i < n_outputs; i++)
            if (data[g->outputs[i]])
                graph_add_output(g, map[g->outputs[i]]);
        for (int k = 0; k < n_nodes; k++) {
            const graph_node *n = &g->nodes[k];
            if (!fwd_bwd(n) || n->removed || n->weights_only)
                continue;
            int *in = malloc(((size_t)n->n_inputs + (size_t)n->n_outputs + 1) * sizeof *in), *out = in + n->n_inputs;
            if (!in)
                panic("out of host memory");
            for (int i = 0; i < n->n_inputs; i++)
                in[i] = n->inputs[i] < 0 ? -1 : map[n->inputs[i]];
            for (int i = 0; i < n->n_outputs; i++)
                out[i] = n->outputs[i] < 0 ? -1 : map[n->outputs[i]];
            char name[256];
            snprintf(name, sizeof name, "mb%u/%s", m, n->name);
            g->phase = n->phase;
            int j = graph_add_node(g, n->op, n->name[0] ? name : "", in, n->n_inputs, out, n->n_outputs);
            free(in);
            graph_copy_attrs(&g->nodes[j], &g->nodes[k]);
            g->nodes[j].stage = g->nodes[k].stage;
            g->nodes[j].recomputed = g->nodes[k].recomputed;
            g->nodes[j].cycle = (int)m;
        }
    }
    /* The update reads a backward tensor as its sum over the micro-batches
     * (added as each micro-batch's backward pass makes it), a forward one
     * as the last micro-batch's. */
    int *sum = malloc((size_t)n_tensors * sizeof *sum + 1);
    if (!sum)
        panic("out of host memory");
    for (int t = 0; t < n_tensors; t++)
        sum[t] = -1;
    for (int k = 0; k < n_nodes; k++) {
        if (g->nodes[k].phase != GRAPH_PHASE_UPDATE || g->nodes[k].removed)
            continue;
        for (int i = 0; i < g->nodes[k].n_inputs; i++) {
            int t = g->nodes[k].inputs[i];
            if (t < 0 || t >= n_tensors || !data[t])
                continue;
            if (sum[t] < 0) {
                int p = g->tensors[t].producer;
                sum[t] = g->nodes[p].phase == GRAPH_PHASE_FORWARD ? copies[t][micro_batches - 1]
                         : micro_batches > 1
                             ? micro_batch_sum(g, t, update_variable(g, k, t), copies, data, micro_batches,
                                               (int)chips)
                             : t;
            }
            g->nodes[k].inputs[i] = sum[t];
        }
    }
    g->phase = GRAPH_PHASE_FORWARD;
    for (int t = 0; t < n_tensors; t++)
        free(copies[t]);
    free(copies);
    free(sum);
    free(map);
    bool dropped = false;   /* the scatter-adds summed by parts */
    for (int k = 0; k < g->n_nodes && !dropped; k++)
        dropped = g->nodes[k].removed;
    if (dropped)
        graph_compact(g);
    free(data);
}

/* ---- recomputation ------------------------------------------------------------------------------ */

/* PopART's pipeline recomputation: each stage but the last (whose forward
 * and backward passes share a cycle) keeps only what it receives until
 * its backward pass, where the forward nodes whose tensors that pass reads
 * are made again (graph_node.recomputed, phase backward, on the stage,
 * "recompute/NAME"), and the stage's backward nodes read their tensors
 * instead: the stashed activations of a micro-batch are then the stage's
 * inputs alone, for one more forward pass of work. */
static void recompute_stages(graph *g, int stages)
{
    int n_nodes = g->n_nodes, n_tensors = g->n_tensors;
    bool *data = data_tensors(g), *need = calloc((size_t)n_nodes + 1, sizeof *need);
    int *again = malloc((size_t)n_tensors * sizeof *again + 1);
    if (!need || !again)
        panic("out of host memory");
    for (int t = 0; t < n_tensors; t++)
        again[t] = -1;
    /* a forward tensor of the data that a backward node of the same stage
     * reads, and what it is made from on that stage */
#define MADE_HERE(t, s) ((t) >= 0 && data[t] && g->tensors[t].producer >= 0 && \
                         g->nodes[g->tensors[t].producer].phase == GRAPH_PHASE_FORWARD && \
                         g->nodes[g->tensors[t].producer].stage == (s))
    for (int k = 0; k < n_nodes; k++) {
        const graph_node *n = &g->nodes[k];
        if (n->phase != GRAPH_PHASE_BACKWARD || n->removed || n->stage >= stages - 1)
            continue;
        for (int i = 0; i < n->n_inputs; i++)
            if (MADE_HERE(n->inputs[i], n->stage))
                need[g->tensors[n->inputs[i]].producer] = true;
    }
    for (int k = n_nodes - 1; k >= 0; k--) {
        const graph_node *n = &g->nodes[k];
        for (int i = 0; need[k] && i < n->n_inputs; i++)
            if (MADE_HERE(n->inputs[i], n->stage))
                need[g->tensors[n->inputs[i]].producer] = true;
    }
    for (int k = 0; k < n_nodes; k++) {
        if (!need[k])
            continue;
        const graph_node *n = &g->nodes[k];
        int *io = malloc(((size_t)n->n_inputs + (size_t)n->n_outputs + 1) * sizeof *io), *out = io + n->n_inputs;
        if (!io)
            panic("out of host memory");
        for (int i = 0; i < n->n_inputs; i++)     /* what another stage made comes as it was */
            io[i] = MADE_HERE(n->inputs[i], n->stage) ? again[n->inputs[i]] : n->inputs[i];
        for (int i = 0; i < n->n_outputs; i++)
            out[i] = n->outputs[i] < 0 ? -1 : (again[n->outputs[i]] = tensor_like(g, n->outputs[i], "recompute/%s",
                                                                                   g->tensors[n->outputs[i]].name));
        char name[256];
        snprintf(name, sizeof name, "recompute/%s", n->name);
        g->phase = GRAPH_PHASE_BACKWARD;
        g->origin = n->origin;
        int j = graph_add_node(g, n->op, n->name[0] ? name : "", io, n->n_inputs, out, n->n_outputs);
        free(io);
        graph_copy_attrs(&g->nodes[j], &g->nodes[k]);
        g->nodes[j].stage = g->nodes[k].stage;
        g->nodes[j].recomputed = true;
    }
    for (int k = 0; k < n_nodes; k++) {
        graph_node *n = &g->nodes[k];
        if (n->phase != GRAPH_PHASE_BACKWARD || n->removed || n->stage >= stages - 1)
            continue;
        for (int i = 0; i < n->n_inputs; i++)
            if (MADE_HERE(n->inputs[i], n->stage))
                n->inputs[i] = again[n->inputs[i]];
    }
#undef MADE_HERE
    g->phase = GRAPH_PHASE_FORWARD;
    g->origin = -1;
    free(again);
    free(need);
    free(data);
}

/* ---- copies between stages --------------------------------------------------------------------- */

/* Where a forward or backward node reads a tensor of another stage: an
 * IpuCopy onto its stage, one for each tensor and stage, with the cycle of
 * what it copies (node.cycle: the producer's micro-batch, -1 for an input
 * or a weight; the schedule turns it into the copy's boundary). */
static void copy_between_stages(graph *g, uint32_t stages)
{
    /* (node.stage is the pipeline's stage here, on chip stage mod S) */
    int n_nodes = g->n_nodes, n_tensors = g->n_tensors;
    int *first_stage = malloc((size_t)n_tensors * sizeof *first_stage + 1);
    int *copy = malloc((size_t)n_tensors * stages * sizeof *copy + 1);
    if (!first_stage || !copy)
        panic("out of host memory");
    for (int t = 0; t < n_tensors; t++)
        first_stage[t] = -1;
    for (size_t i = 0; i < (size_t)n_tensors * stages; i++)
        copy[i] = -1;
    /* an input or weight is held by the lowest stage that reads it */
    for (int k = 0; k < n_nodes; k++) {
        const graph_node *n = &g->nodes[k];
        if (!fwd_bwd(n) || n->removed)
            continue;
        for (int i = 0; i < n->n_inputs; i++) {
            int t = n->inputs[i];
            if (t >= 0 && g->tensors[t].producer < 0 && !g->tensors[t].data &&
                (first_stage[t] < 0 || n->stage % (int)stages < first_stage[t]))
                first_stage[t] = n->stage % (int)stages;
        }
    }
    for (int k = 0; k < n_nodes; k++) {
        if (!fwd_bwd(&g->nodes[k]) || g->nodes[k].removed)
            continue;
        for (int i = 0; i < g->nodes[k].n_inputs; i++) {
            int t = g->nodes[k].inputs[i], reader = g->nodes[k].stage % (int)stages;
            if (t < 0 || g->tensors[t].data)
                continue;
            int p = g->tensors[t].producer;
            int from = (p >= 0 ? g->nodes[p].stage : first_stage[t]) % (int)stages;
            if (from == reader)
                continue;
            int *c = &copy[(size_t)t * stages + (size_t)reader];
            if (*c < 0) {
                *c = tensor_like(g, t, "%s/stage%d", g->tensors[t].name, reader);
                g->phase = p >= 0 ? g->nodes[p].phase : GRAPH_PHASE_FORWARD;
                int j = graph_add_node(g, GRAPH_OP_IPU_COPY, "", &t, 1, c, 1);
                g->nodes[j].stage = reader;
                g->nodes[j].cycle = p >= 0 ? g->nodes[p].cycle : -1;
            }
            g->nodes[k].inputs[i] = *c;
        }
    }
    g->phase = GRAPH_PHASE_FORWARD;
    free(first_stage);
    free(copy);
}

/* ---- the schedule ------------------------------------------------------------------------------ */

typedef struct slot {
    long long key;
    int at;                           /* its place among the nodes of its key: 2 node, or just after
                                         the node that makes what it adds into a running sum */
    int node;
} slot;

static int cmp_slot(const void *a, const void *b)
{
    const slot *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return (x->node > y->node) - (x->node < y->node);
}

/* Where node k goes among the nodes of its key (its stage's pass of a
 * cycle): in its own place, except an Add of a micro-batch's gradient
 * into a running sum (graph_node.accumulates), which goes just after the
 * node that made the gradient when that is of the same key: the gradient
 * is then dead at once instead of waiting, with every other weight's, for
 * the end of the backward pass (and a serialised matmul making it adds
 * each part into the sum, lower_matmul.c). */
static int place_in_key(const graph *g, const slot *order, int k)
{
    const graph_node *x = &g->nodes[k];
    if (!x->accumulates || x->op != GRAPH_OP_ADD || x->n_inputs != 2 || x->inputs[1] < 0)
        return 2 * k;
    int p = g->tensors[x->inputs[1]].producer;
    return p >= 0 && p < k && order[p].key == order[k].key ? 2 * p + 1 : 2 * k;
}

/* The cycle a forward or backward node of micro-batch m runs in on stage s. */
static int cycle_of(const graph_node *n, int m, int s, int stages)
{
    return n->phase == GRAPH_PHASE_FORWARD ? m + s : m + 2 * stages - 2 - s;
}

/* Each node's cycle, and the nodes in the schedule's order: before cycle
 * 0 the copies of inputs and weights; in cycle t each stage's nodes of
 * weights alone, its forward nodes, then its backward ones (recomputed
 * first, each Add into a gradient sum just after the node making its
 * gradient, place_in_key), then the copies of what the cycle made;
 * after the last cycle the update.  False (err) where a node would read
 * what a later cycle makes. */
static bool schedule(graph *g, int stages, int chips, char *err, size_t err_size)
{
    int n = g->n_nodes;
    slot *order = malloc((size_t)n * sizeof *order + 1);
    graph_node *sorted = malloc((size_t)n * sizeof *sorted + 1);
    if (!order || !sorted)
        panic("out of host memory");
    int last = 0;
    for (int k = 0; k < n; k++) {
        graph_node *x = &g->nodes[k];
        if (x->op != GRAPH_OP_IPU_COPY && fwd_bwd(x)) {
            x->cycle = cycle_of(x, x->cycle, x->stage, stages);
            last = x->cycle > last ? x->cycle : last;
        }
    }
    for (int k = 0; k < n; k++) {
        graph_node *x = &g->nodes[k];
        if (x->op == GRAPH_OP_IPU_COPY) {
            int p = g->tensors[x->inputs[0]].producer;
            x->cycle = p >= 0 ? g->nodes[p].cycle : -1;
        }
    }
    for (int k = 0; k < n; k++) {
        graph_node *x = &g->nodes[k];
        long long key;
        if (x->phase == GRAPH_PHASE_UPDATE) {
            x->cycle = -1;
            key = 2LL * (last + 2);
        } else if (x->op == GRAPH_OP_IPU_COPY) {
            key = 2LL * (x->cycle + 1);          /* the exchange after cycle x->cycle */
        } else {
            key = 2LL * x->cycle + 1;
        }
        bool bwd = x->phase == GRAPH_PHASE_BACKWARD;
        key = key * (4 * stages + 1) + (x->op == GRAPH_OP_IPU_COPY || x->phase == GRAPH_PHASE_UPDATE ? 0
                                        : x->weights_only ? 4 * x->stage
                                                          : 4 * x->stage + 1 + bwd + (bwd && !x->recomputed));
        order[k] = (slot){ key, 2 * k, k };
    }
    for (int k = 0; k < n; k++)
        order[k].at = place_in_key(g, order, k);
    /* what each node reads must be made in an earlier cycle, or earlier in its own on its stage */
    for (int k = 0; k < n; k++) {
        const graph_node *x = &g->nodes[k];
        if (x->op == GRAPH_OP_IPU_COPY || !fwd_bwd(x))
            continue;
        for (int i = 0; i < x->n_inputs; i++) {
            int t = x->inputs[i], p = t >= 0 ? g->tensors[t].producer : -1;
            if (p < 0 || order[p].key < order[k].key || (order[p].key == order[k].key && order[p].at < order[k].at))
                continue;
            char label[160];
            snprintf(err, err_size, "%s: %s of pipeline stage %d, cycle %d, reads '%s' made later in the schedule "
                     "(stage %d, cycle %d): the step cannot be pipelined this way", g->source,
                     graph_node_label(g, x, label, sizeof label), x->stage, x->cycle, g->tensors[t].name,
                     g->nodes[p].stage, g->nodes[p].cycle);
            free(order);
            free(sorted);
            return false;
        }
    }
    qsort(order, (size_t)n, sizeof *order, cmp_slot);
    for (int k = 0; k < n; k++)
        sorted[k] = g->nodes[order[k].node];
    memcpy(g->nodes, sorted, (size_t)n * sizeof *sorted);
    free(sorted);
    free(order);
    for (int k = 0; k < n; k++) {
        g->nodes[k].stage %= chips;
        for (int i = 0; i < g->nodes[k].n_outputs; i++)
            if (g->nodes[k].outputs[i] >= 0)
                g->tensors[g->nodes[k].outputs[i]].producer = k;
    }
    return true;
}

bool train_pipeline(graph *g, uint32_t stages, uint32_t micro_batches, bool recompute, char *err, size_t err_size)
{
    if (stages < 1)
        stages = 1;
    if (micro_batches < 1)
        micro_batches = 1;
    if (!graph_sort(g, err, err_size))
        return false;
    graph_compact(g);
    g->origin = -1;
    for (int k = 0; k < g->n_nodes; k++)
        g->nodes[k].stage = 0;
    uint32_t pipeline = stages > 1 ? assign_stages(g, stages) : 1;
    if (recompute && pipeline > 1)
        recompute_stages(g, (int)pipeline);
    unroll(g, micro_batches, stages);
    if (stages > 1)
        copy_between_stages(g, stages);
    if (!schedule(g, (int)pipeline, (int)stages, err, err_size))
        return false;
    g->pipeline_stages = stages;
    g->micro_batches = micro_batches;
    g->pipeline_cycles = micro_batches + 2 * pipeline - 2;
    return true;
}
