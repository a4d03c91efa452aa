/*
 * lower_streaming.c — variables kept in streaming memory (the DDR behind
 * each gateway), as PopART keeps an optimizer's state OffChip: in tile
 * memory only while a step updates them.
 *
 * Before the first node that reads such a variable in a step, its pieces
 * are placed as a variable in tile memory would be (lw_place_variable: on
 * its weight's pieces, or the tiles lower_variables planned for it), or,
 * when that node is an AdamUpdater whose gradient lies a piece or so a
 * tile, on the gradient's pieces (placed_like), and loaded: an exchange phase in
 * which each tile reads its pieces from its own streaming-memory buffer
 * (XCH_STREAM_MEMORY | the tile's global number; a replica's tiles are
 * its own buffers, relocated as tiles).  The state first read before that
 * update's last node comes in the same phase (a weight's two moments):
 * each phase waits for the link's latency once.  After the last node that
 * reads or writes the variable or its update, the update's value (written
 * over the variable by the optimizer's last op, or copied into it here)
 * is sent back to the buffer and the storage freed.  A buffer is read in
 * order and lets go of what was read when it is written
 * (isa/exchange_port.h), so each tile's pieces are stored back in the
 * order they were loaded: a variable is stored only once every one loaded
 * before it has been.  A buffer between steps holds its tile's pieces in
 * that order: the tensor map names each piece's buffer and offset
 * (TMAP_STREAMING, sim/program/tensor_map.h), and the buffers are zero
 * before the first step (an optimizer's state starts at zero).
 */
#include <stdlib.h>
#include <string.h>

#include "isa/exchange_port.h"
#include "lower_internal.h"
#include "lower_ops.h"

static bool streaming_variable(const lowering *lw, int t)
{
    const graph_tensor *x = lw_gt(lw, t);
    return x->is_variable && x->in_streaming_memory;
}

bool lw_streaming_plan(lowering *lw)
{
    const graph *g = lw->g;
    int *owner = malloc(((size_t)g->n_tensors + 1) * sizeof *owner);
    lw->stream_done = malloc(((size_t)g->n_tensors + 1) * sizeof *lw->stream_done);
    lw->stream_base = calloc((size_t)g->n_tensors + 1, sizeof *lw->stream_base);
    lw->stream_first = malloc(((size_t)g->n_tensors + 1) * sizeof *lw->stream_first);
    lw->stream_queue = malloc(((size_t)g->n_tensors + 1) * sizeof *lw->stream_queue);
    if (!owner || !lw->stream_done || !lw->stream_base || !lw->stream_first || !lw->stream_queue) {
        free(owner);
        return lw_fail(lw, "out of host memory");
    }
    bool any = false;
    for (int t = 0; t < g->n_tensors; t++)
        owner[t] = lw->stream_done[t] = lw->stream_first[t] = -1;
    for (int t = 0; t < g->n_tensors; t++) {
        if (!streaming_variable(lw, t))
            continue;
        any = true;
        owner[lw->tensor[t].root] = t;
        if (g->tensors[t].update >= 0)
            owner[lw->tensor[g->tensors[t].update].root] = t;
    }
    for (int i = 0; any && i < g->n_nodes; i++) {
        const graph_node *n = &g->nodes[i];
        for (int k = 0; k < n->n_inputs + n->n_outputs; k++) {
            int x = k < n->n_inputs ? n->inputs[k] : n->outputs[k - n->n_inputs];
            int v = x >= 0 ? owner[lw->tensor[x].root] : -1;
            if (v >= 0 && i > lw->stream_done[v])
                lw->stream_done[v] = i;
            if (v >= 0 && k < n->n_inputs && lw->stream_first[v] < 0 && lw->tensor[x].root == v) {
                lw->stream_first[v] = i;
                lw->stream_queue[lw->n_stream_queue++] = v;      /* in the order they are first read */
            }
        }
    }
    free(owner);
    uint64_t capacity = (uint64_t)machine_get(lw->opts->machine, MP_streaming_memory_bytes);
    if (any && !capacity)
        return lw_fail(lw, "%s: the optimizer state is to be kept in streaming memory, and machine %s has none "
                       "(streaming_memory_bytes = 0)", g->source, lw->opts->machine->name);
    return true;
}

/* The bytes piece q of a variable takes in its buffer and moves
 * (tmap_streaming_bytes: an f16 piece of an odd count padded, its block's
 * alignment leaving room for the padding). */
static uint32_t piece_bytes(const ltensor *lt, size_t q)
{
    return (uint32_t)tmap_streaming_bytes(lt->p[q].count * lt->element_bytes);
}

/* The tensor whose pieces variable v takes when node i, the first to
 * read it, is an AdamUpdater reading it as a moment: the gradient's, so
 * that the update runs where the gradient lies and writes the moments and
 * the direction over their inputs (lower_optimizer.c); else -1. */
static int placed_like(const lowering *lw, int v, int i)
{
    const graph_node *n = &lw->g->nodes[i];
    if (n->op != GRAPH_OP_ADAM_UPDATER || (n->inputs[1] != v && n->inputs[2] != v))
        return -1;
    const ltensor *lg = &lw->tensor[n->inputs[0]];
    if (!lg->placed || !lg->n || lg->permuted || lg->element_bytes != lw->tensor[v].element_bytes)
        return -1;
    /* a piece or so a tile (a matmul's output comes as a piece a row of
     * each block: the update would take a compute set a piece) */
    bool *seen = calloc((size_t)lw->program_tiles + 1, 1);
    size_t tiles = 0;
    for (size_t k = 0; seen && k < lg->n; k++) {
        tiles += !seen[lg->p[k].tile];
        seen[lg->p[k].tile] = true;
    }
    free(seen);
    return tiles && lg->n <= 2 * tiles ? n->inputs[0] : -1;
}

/* Variable v placed (like tensor `like`, else on the tiles lower_variables
 * planned for it) and its pieces' loads added to the exchange phase being
 * built. */
static bool load_variable(lowering *lw, int v, int like)
{
    uint32_t stage = lw->stage, base = lw->op_base, tiles = lw->op_tiles;
    lw->stage = lw->home_stage[v];
    lw->op_base = lw->stream_base[v];
    lw->op_tiles = 0;
    char what[96];
    snprintf(what, sizeof what, "variable '%s'", lw_gt(lw, v)->name);
    bool placed = like >= 0 ? lw_place_like(lw, v, like, what)
                            : lw_place_variable(lw, v, LW_VARIABLE_EMPTY);
    lw->stage = stage;
    lw->op_base = base;
    lw->op_tiles = tiles;
    if (!placed)
        return false;
    const ltensor *lt = &lw->tensor[v];
    for (size_t q = 0; q < lt->n; q++) {
        uint32_t bytes = piece_bytes(lt, q);
        if (!lw_add_host_receive(lw, lt->p[q].tile, lt->p[q].addr, bytes, XCH_STREAM_MEMORY | lt->p[q].tile))
            return false;
        lw->rep->streaming_bytes += bytes;
    }
    if (!lw_grow((void **)&lw->stream_order, &lw->cap_stream_order, lw->n_stream_order + 1, sizeof *lw->stream_order))
        return lw_fail(lw, "out of host memory");
    lw->stream_order[lw->n_stream_order++] = v;
    lw->rep->streaming_variables++;
    return true;
}

bool lw_streaming_load(lowering *lw, int i)
{
    const graph_node *n = &lw->g->nodes[i];
    /* the update that needs a variable loaded lasts until its last node;
     * the state it or another update reads before then comes in the same
     * phase (a weight's first and second moments together) */
    int window = -1;
    for (int k = 0; k < n->n_inputs; k++) {
        int v = n->inputs[k] >= 0 ? lw->tensor[n->inputs[k]].root : -1;
        if (v >= 0 && streaming_variable(lw, v) && !lw->tensor[v].placed && lw->stream_done[v] > window)
            window = lw->stream_done[v] > i ? lw->stream_done[v] : i;
    }
    if (window < 0)
        return true;
    for (size_t q = lw->stream_next; q < lw->n_stream_queue && !lw->failed; q++) {
        int v = lw->stream_queue[q];
        if (lw->tensor[v].placed)
            continue;
        if (lw->stream_first[v] > window)
            break;
        load_variable(lw, v, placed_like(lw, v, i));
    }
    while (lw->stream_next < lw->n_stream_queue && lw->tensor[lw->stream_queue[lw->stream_next]].placed)
        lw->stream_next++;
    /* the loads in an exchange phase of their own, before the node's compute */
    return !lw->failed && lw_end_phase(lw);
}

/* Variable v's new value into its pieces, sent to the tiles' buffers in
 * the order it was loaded; its storage (and its update's) freed. */
static bool store_variable(lowering *lw, int v)
{
    const graph_tensor *x = lw_gt(lw, v);
    const ltensor *lv = &lw->tensor[v];
    int u = x->update >= 0 ? lw->tensor[x->update].root : -1;
    bool copied = u >= 0 && u != v && !lw_same_pieces(lv, &lw->tensor[u], true);
    for (size_t k = 0; copied && k < lv->n && !lw->failed; k++)
        lw_fetch_into(lw, x->update, lv->p[k].first, lv->p[k].count, lv->p[k].tile, lv->p[k].addr);
    if (lw->failed || !lw_end_phase(lw))
        return false;
    if (copied)
        lw->rep->updates_copied++;
    else if (u >= 0)
        lw->rep->updates_in_place++;
    for (size_t k = 0; k < lv->n && !lw->failed; k++)
        lw_push_send(lw, lv->p[k].tile, lv->p[k].addr, piece_bytes(lv, k),
                     XCH_STREAM_MEMORY | lw_global_tile(lw, lv->p[k].tile), EXE_RELOC_TILE);
    /* the next phase's end syncs after the sends (their bytes leave the
     * tile as they are issued, so the storage may be reused at once) */
    lw->phase_has_transfers = true;
    return lw_release_tensor(lw, v) && (!copied || lw_release_tensor(lw, u));
}

bool lw_streaming_store(lowering *lw, int i)
{
    while (lw->stream_stored < lw->n_stream_order && !lw->failed) {
        int v = lw->stream_order[lw->stream_stored];
        if (lw->stream_done[v] > i)
            break;
        lw->stream_stored++;
        if (!store_variable(lw, v))
            return false;
    }
    return !lw->failed;
}

bool lw_streaming_map(lowering *lw)
{
    uint64_t capacity = (uint64_t)machine_get(lw->opts->machine, MP_streaming_memory_bytes);
    uint64_t need = lw->rep->streaming_bytes * (lw->replicas ? lw->replicas : 1);
    if (need > capacity)
        return lw_fail(lw, "%s: the optimizer state kept in streaming memory takes %llu bytes (%u replica%s), more "
                       "than machine %s has (streaming_memory_bytes = %llu)", lw->g->source, (unsigned long long)need,
                       lw->replicas ? lw->replicas : 1, lw->replicas > 1 ? "s" : "", lw->opts->machine->name,
                       (unsigned long long)capacity);
    uint64_t *offset = calloc((size_t)lw->program_tiles + 1, sizeof *offset);
    bool ok = offset != NULL;
    for (size_t o = 0; o < lw->n_stream_order && ok; o++) {
        int v = lw->stream_order[o];
        const graph_tensor *x = lw_gt(lw, v);
        const ltensor *lt = &lw->tensor[v];
        uint64_t dims[TMAP_MAX_RANK];
        for (int d = 0; d < x->shape.rank && d < TMAP_MAX_RANK; d++)
            dims[d] = (uint64_t)x->shape.dims[d];
        tmap_tensor *mt = tmap_add_tensor(lw->tmap, x->name, (uint32_t)x->dtype, lt->element_bytes,
                                          (uint32_t)x->shape.rank, dims, TMAP_VARIABLE | TMAP_STREAMING);
        ok = mt != NULL;
        for (int d = 0; ok && lt->permuted && d < x->shape.rank; d++)
            mt->perm[d] = lt->perm[d];
        for (size_t k = 0; ok && k < lt->n; k++) {
            uint32_t tile = lw_global_tile(lw, lt->p[k].tile);
            ok = tmap_add_piece(mt, tile, (uint32_t)offset[lt->p[k].tile], lt->p[k].first, lt->p[k].count, tile);
            offset[lt->p[k].tile] += piece_bytes(lt, k);
        }
    }
    free(offset);
    return ok || lw_fail(lw, "out of host memory");
}
