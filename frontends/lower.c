/*
 * lower.c — the lowering driver (lower.h): graph in, executable out.  It
 * checks every node against the op table (lower_ops.c, the lowering
 * column of ops.def), sets the machine up (tiles, replicas, pipeline
 * stages), places the graph inputs, lowers the nodes in order with the
 * lowering their rows name, giving storage back after each tensor's last
 * reader, and has lower_program.c write the executable.
 *
 * The lowering keeps, per tile, a control program (words of steps for
 * workloads/codelets/supervisor.S), the vertex records its steps point at,
 * the transfers of the exchange phase being built (lower_exchange.c), and
 * its memory (lower_memory.c).  Per tensor it keeps the pieces (lower.h).
 * An op chooses the tiles and pieces of its output; for every input it asks
 * `lw_fetch` for the elements a tile needs at a tile address: when one
 * local piece covers them that is the piece itself, a constant is placed
 * there at compile time, and anything else is received from the tiles that
 * hold it in the op's exchange phase (pieces on the tile itself are copied
 * locally with vtx_copy after the phase).
 */
#include "lower.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exchange/exchange.h"
#include "lower_ops.h"
#include "isa/isa.h"
#include "sim/base/grow.h"
#include "sim/program/tensor_map.h"
#include "workloads/codelets/codelet_library.h"

/* ---- small utilities --------------------------------------------------- */

/* ---- small utilities --------------------------------------------------- */

bool lw_fail(lowering *lw, const char *fmt, ...)
{
    if (!lw->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(lw->err, lw->err_size, fmt, ap);
        va_end(ap);
        lw->failed = true;
    }
    return false;
}

bool lw_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    return base_grow(p, cap, need, elem);
}

bool lw_push_word(lowering *lw, word_vec *v, uint32_t w)
{
    if (!lw_grow((void **)&v->w, &v->cap, v->n + 1, sizeof *v->w))
        return lw_fail(lw, "out of host memory");
    v->w[v->n++] = w;
    return true;
}

const char *lw_node_label(const graph_node *n, int index, char *buf, size_t size)
{
    if (n->name && n->name[0])
        snprintf(buf, size, "node '%s' (%s)", n->name, graph_ops[n->op].name);
    else
        snprintf(buf, size, "node #%d (%s)", index, graph_ops[n->op].name);
    return buf;
}

bool lw_unsupported(lowering *lw, const graph_node *n, int index, const char *why)
{
    lw->rep->unsupported = true;
    char label[160];
    return lw_fail(lw, "%s: %s: %s", lw->g->source, lw_node_label(n, index, label, sizeof label), why);
}

/* ---- inputs -------------------------------------------------------------- */

/* A matmul's A [M, K] laid out for its plan (lw_matmul_input_layout): the
 * block of grid row i and K share l, its rows' segments in order, cut in
 * gn even runs of whole 8-byte words, run j on the op's tile (l gm + i) gn
 * + j, one piece a row segment.  False (nothing placed) where rows or
 * segments would not stay 8-byte aligned or a grid row has one tile. */
static bool place_lhs(lowering *lw, int t, const lw_lhs_layout *L, const char *what)
{
    const graph_tensor *g = lw_gt(lw, t);
    const uint64_t m = (uint64_t)g->shape.dims[0], k = (uint64_t)g->shape.dims[1];
    const uint32_t eb = lw->tensor[t].element_bytes, word = 8 / eb;
    if (L->gn < 2 || (k * eb) % 8 || (L->kt * eb) % 8)
        return false;
    lw->tensor[t].lhs_spread = true;
    lw->tensor[t].lhs_base = lw->op_base;
    for (uint32_t l = 0; l < L->gk; l++)
        for (uint32_t i = 0; i < L->gm; i++) {
            const uint64_t m0 = i * L->mt, m1 = m0 + L->mt < m ? m0 + L->mt : m;
            const uint64_t k0 = l * L->kt, k1 = k0 + L->kt < k ? k0 + L->kt : k;
            if (m0 >= m1 || k0 >= k1)
                continue;
            const uint64_t cols = k1 - k0, elems = (m1 - m0) * cols;
            const uint64_t run = ((elems + L->gn - 1) / L->gn + word - 1) / word * word;
            for (uint32_t j = 0; j < L->gn && !lw->failed; j++) {
                uint64_t e0 = j * run, e1 = e0 + run < elems ? e0 + run : elems;
                if (e0 >= e1)
                    break;
                uint32_t tile = lw_tile_of(lw, (l * L->gm + i) * L->gn + j);
                uint32_t a = lw_tensor_alloc(lw, t, tile, (e1 - e0) * eb, PREFER_REGION0, 8, false, what);
                for (uint64_t e = e0, at = 0; a && e < e1;) {
                    uint64_t r = e / cols, c = e % cols, n = cols - c < e1 - e ? cols - c : e1 - e;
                    lw_add_piece(lw, t, tile, a + (uint32_t)(at * eb), (m0 + r) * k + k0 + c, n);
                    e += n;
                    at += n;
                }
            }
        }
    lw_sort_pieces(lw, t);
    return !lw->failed;
}

/* Graph inputs: linear pieces, each fed by its own host stream. */
static bool lower_input(lowering *lw, int t)
{
    const graph_tensor *g = lw_gt(lw, t);
    uint64_t total = (uint64_t)graph_shape_numel(&g->shape);
    uint32_t eb = lw->tensor[t].element_bytes;
    uint64_t gran = lw_gran_of(eb);
    char what[96];
    snprintf(what, sizeof what, "input '%s'", g->name);
    lw_lhs_layout lhs;
    if (g->shape.rank == 4 && lw_conv_input_layout(lw->g, t)) {
        /* An image for a convolution: kept channels-last (NHWC), whole
         * pixels per tile, spread over the tiles: every tile's pixels go to
         * the several tiles whose output rows need them (im2col), so the
         * fewer pixels a tile sends from, the sooner the exchange ends. */
        ltensor *lt = &lw->tensor[t];
        lw_keep_channels_last(lt, true);
        uint64_t pixel = (uint64_t)g->shape.dims[1];
        while ((pixel * eb) % 8)
            pixel *= 2;
        uint32_t tiles = lw_plan_tiles(lw, total, pixel, 4.0, 200);
        return lw_place_linear(lw, t, pixel, tiles, what);
    }
    if (g->shape.rank >= 1 && lw_matmul_input_layout(lw, t, &lhs)) {
        if (lhs.spread) {
            if (place_lhs(lw, t, &lhs, what) || lw->failed)
                return !lw->failed;
            /* (declined: a linear layout, below) */
        } else {
            /* The rows of each grid row on the grid row's first tile, in region 0. */
            uint64_t cols = (uint64_t)g->shape.dims[g->shape.rank - 1];
            for (uint64_t r = 0, i = 0; r * cols < total && !lw->failed; r += lhs.mt, i++) {
                uint64_t n = (total - r * cols < lhs.mt * cols ? total - r * cols : lhs.mt * cols);
                uint32_t tile = lw_tile_of(lw, (uint32_t)(i * lhs.gn));
                uint32_t a = lw_tensor_alloc(lw, t, tile, n * eb, PREFER_REGION0, 8, false, what);
                if (a)
                    lw_add_piece(lw, t, tile, a, r * cols, n);
            }
            return !lw->failed;
        }
    }
    if (g->shape.rank >= 1) {
        /* Whole rows where they stay 8-byte aligned, so row ops need no exchange. */
        uint64_t cols = (uint64_t)g->shape.dims[g->shape.rank - 1];
        if (cols && (cols * eb) % 8 == 0)
            gran = cols;
    }
    uint32_t tiles = lw_plan_tiles(lw, total, gran, 1.0, 200);
    return lw_place_linear(lw, t, gran, tiles, what);
}

/* ---- variables ----------------------------------------------------------- */

bool lw_place_variable(lowering *lw, int t, enum variable_placing how)
{
    bool with_init = how == LW_VARIABLE_WITH_INIT;
    const graph *g = lw->g;
    const graph_tensor *x = &g->tensors[t];
    ltensor *lt = &lw->tensor[t];
    const uint32_t eb = lt->element_bytes;
    uint64_t total = (uint64_t)graph_shape_numel(&x->shape), gran = lw_gran_of(eb);
    uint64_t cols = x->shape.rank ? (uint64_t)x->shape.dims[x->shape.rank - 1] : 1;
    uint8_t *stored = NULL;
    bool channels_last = lw_weights_channels_last(g, t);
    if (channels_last) {
        const int64_t *d = x->shape.dims;
        lw_keep_channels_last(lt, true);
        cols = (uint64_t)(d[1] * d[2] * d[3]);
        stored = with_init ? malloc(total * eb + 1) : NULL;
        if (with_init && !stored)
            return lw_fail(lw, "out of host memory");
        /* the initial values in the stored order, as the tensor map reorders them */
        tmap_tensor view = { .element_bytes = eb, .rank = 4 };
        for (uint32_t a = 0; a < 4; a++) {
            view.dims[a] = (uint64_t)d[a];
            view.perm[a] = lt->perm[a];
        }
        if (stored)
            tmap_permute(&view, x->init, stored, true);
    }
    /* (a weight's row of K: whole rows up to ResNet's 3 x 3 x 512) */
    if (cols && (cols * eb) % 8 == 0 && cols <= (channels_last ? 8192u : 4096u))
        gran = cols;
    char what[96];
    snprintf(what, sizeof what, "variable '%s'", x->name);
    /* optimizer state on its weight's pieces (the moments and the weight
     * of one update then lie together) */
    const ltensor *weight = x->state_of >= 0 ? &lw->tensor[x->state_of] : NULL;
    bool like_weight = weight && weight->placed && weight->n && weight->permuted == lt->permuted &&
                       graph_shape_numel(&g->tensors[x->state_of].shape) == (int64_t)total;
    uint32_t tiles = like_weight ? 0 : lw_plan_tiles(lw, total, gran, 1.0, 200);
    if (how == LW_VARIABLE_TILES_ONLY && like_weight)
        return true;                  /* placed on its weight's pieces when loaded */
    if (how == LW_VARIABLE_TILES_ONLY) {
        /* the tiles lw_place_linear would take (lw_tile_of) */
        uint64_t *l = malloc(tiles * sizeof *l), *h = malloc(tiles * sizeof *h);
        if (l && h) {
            lw_linear_split(total, gran, tiles, l, h);
            for (uint32_t i = 0; i < tiles; i++)
                if (h[i] != l[i] && i + 1 > lw->op_tiles)
                    lw->op_tiles = i + 1;
        }
        free(l);
        free(h);
        return (l && h) || lw_fail(lw, "out of host memory");
    }
    bool ok = like_weight ? lw_place_like(lw, t, x->state_of, what) : lw_place_linear(lw, t, gran, tiles, what);
    for (size_t k = 0; ok && with_init && k < lt->n; k++)
        lw_tile_data(lw, lt->p[k].tile, lt->p[k].addr, (stored ? stored : (const uint8_t *)x->init) + lt->p[k].first * eb,
                     (uint32_t)(lt->p[k].count * eb), x->name);
    free(stored);
    return ok && !lw->failed;
}

/* Variables (training weights, optimizer state): linear pieces in whole
 * rows where they stay 8-byte aligned, kept for the run, their initial
 * values loaded with the executable (as Poplar's variables are written by
 * the host before the first run and stay in tile memory between runs).
 * Convolution weights (and their optimizer state) are kept as
 * [Cout, KH, KW, C] (lower_layout.c), a row of K = KH KW C per output
 * channel, their initial values reordered on the host, as
 * poplin::createWeights lays them out for the convolution.  Each starts
 * on the tile after the previous one's last, so small ones do not pile up
 * on tile 0; an optimizer's state on its weight's pieces (graph_tensor.
 * state_of).  Those kept in streaming memory are placed when a step loads
 * them (lower_streaming.c), on the tiles they would have had here. */
static void lower_variables(lowering *lw)
{
    const graph *g = lw->g;
    for (int t = 0; t < g->n_tensors && !lw->failed; t++) {
        const graph_tensor *x = &g->tensors[t];
        if (!x->is_variable)
            continue;
        lw->op_tiles = 0;
        lw->stage = lw->home_stage[t];
        if (x->in_streaming_memory)
            lw->stream_base[t] = lw->op_base;
        lw_place_variable(lw, t, x->in_streaming_memory ? LW_VARIABLE_TILES_ONLY : LW_VARIABLE_WITH_INIT);
        lw->op_base = (lw->op_base + lw->op_tiles) % lw->tiles;
    }
    lw->stage = 0;
}

/* The end of a step: each variable takes its update's value, copied into
 * its pieces (the exchange brings what another tile computed), in one
 * phase after the last op; an update written over its variable's pieces
 * (the optimizer's last op, in place) has nothing to copy.  Both are kept in the same order (lower_layout.c
 * pairs a channels-last variable with a channels-last update), so the copy
 * is of the stored elements. */
static void lower_updates(lowering *lw)
{
    const graph *g = lw->g;
    lw_release_scratch(lw);
    for (int t = 0; t < g->n_tensors && !lw->failed; t++) {
        const graph_tensor *x = &g->tensors[t];
        if (!x->is_variable || x->update < 0 || lw->tensor[x->update].root == t || x->in_streaming_memory)
            continue;
        const ltensor *lv = &lw->tensor[t], *lu = &lw->tensor[lw->tensor[x->update].root];
        if (lu->permuted != lv->permuted || (lv->permuted && memcmp(lu->perm, lv->perm, sizeof lv->perm))) {
            lw_fail(lw, "%s: variable '%s' is kept %s and its update '%s' %s: the copy back does not reorder",
                    g->source, x->name, lv->permuted ? "channels-last" : "in its own order",
                    g->tensors[x->update].name, lu->permuted ? "channels-last" : "in its own order");
            break;
        }
        if (lw_same_pieces(lu, lv, true)) {     /* written over the variable (lower_elementwise.c) */
            lw->rep->updates_in_place++;
            continue;
        }
        lw->rep->updates_copied++;
        for (size_t k = 0; k < lv->n && !lw->failed; k++)
            lw_fetch_into(lw, x->update, lv->p[k].first, lv->p[k].count, lv->p[k].tile, lv->p[k].addr);
    }
    if (!lw->failed)
        lw_end_phase(lw);
}

/* ---- which nodes are lowered --------------------------------------------- */

/* Whether node n can be lowered: its row of the op table decides (outputs
 * past the first only where the row lowers them). */
static bool node_supported(const lowering *lw, const graph_node *n, const char **why)
{
    const lw_op_rule *rule = &lw_op_rules[n->op];
    *why = NULL;
    for (int k = 1; k < n->n_outputs && !rule->all_outputs; k++)
        if (n->outputs[k] >= 0) {
            *why = "only the first output is lowered (the others are for training)";
            return false;
        }
    if (rule->supports)
        return rule->supports(lw->g, n, why);
    if (rule->lower)
        return true;                  /* the details are checked when lowering */
    *why = "no lowering for this op yet";
    return false;
}

bool lower_supports(const graph *g, const lower_options *o, char *err, size_t err_size)
{
    lowering lw = { .g = g, .opts = o, .cur_op = -1 };
    for (int i = 0; i < g->n_nodes; i++) {
        const graph_node *n = &g->nodes[i];
        const char *why;
        if (graph_node_folded(g, n))
            continue;
        if (!node_supported(&lw, n, &why)) {
            char label[160];
            snprintf(err, err_size, "%s: %s: %s", g->source, lw_node_label(n, i, label, sizeof label), why);
            return false;
        }
    }
    return true;
}

/* ---- the whole program --------------------------------------------------- */

/* Pipeline stages: the ops, in their order, cut into lw->stages runs of
 * about equal estimated work (multiply-accumulates for matmuls and
 * convolutions over the AMP's rate, elements for the rest), each run on
 * its own chip. */
static void assign_stages(lowering *lw)
{
    const graph *g = lw->g;
    double *cost = calloc((size_t)g->n_nodes + 1, sizeof *cost), total = 0;
    if (!cost)
        return;
    for (int i = 0; i < g->n_nodes; i++) {
        const graph_node *n = &g->nodes[i];
        cost[i] = lw_op_rules[n->op].view ? 0 : graph_node_work(g, n);
        total += cost[i];
    }
    double acc = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        uint32_t s = (uint32_t)(acc / (total > 0 ? total : 1) * lw->stages);
        lw->stage_of[i] = s < lw->stages ? s : lw->stages - 1;
        acc += cost[i];
    }
    free(cost);
}

/* A pipelined training step's stages (train_pipeline.c): each node's, and
 * the stage of each input and variable, the stage of the first node that
 * reads it. */
static void scheduled_stages(lowering *lw)
{
    const graph *g = lw->g;
    for (int t = 0; t < g->n_tensors; t++)
        lw->home_stage[t] = UINT32_MAX;
    for (int i = 0; i < g->n_nodes; i++) {
        const graph_node *n = &g->nodes[i];
        lw->stage_of[i] = n->stage > 0 ? (uint32_t)n->stage : 0;
        for (int k = 0; k < n->n_inputs && n->op != GRAPH_OP_IPU_COPY; k++)
            if (n->inputs[k] >= 0 && lw->home_stage[n->inputs[k]] == UINT32_MAX)
                lw->home_stage[n->inputs[k]] = lw->stage_of[i];
    }
    for (int t = 0; t < g->n_tensors; t++)
        if (lw->home_stage[t] == UINT32_MAX)
            lw->home_stage[t] = 0;
}

/* The machine the program is for: tiles of chip 0, replicas or pipeline
 * stages (one a chip, the program for chip 0 copied); false with lw->err
 * set when they do not fit the machine. */
static bool plan_machine(lowering *lw)
{
    const graph *g = lw->g;
    const lower_options *o = lw->opts;
    const machine *m = o->machine;
    uint32_t per_chip = machine_u32(m, MP_tiles_per_chip);
    lw->tiles = o->tiles && o->tiles < per_chip ? o->tiles : per_chip;
    lw->tiles_per_chip = per_chip;
    uint32_t chips = machine_u32(m, MP_chips);
    lw->stages = o->pipeline ? o->pipeline : 1;
    if (g->pipeline_stages && g->pipeline_stages != lw->stages) {
        snprintf(lw->err, lw->err_size, "%s: the training step was made for %u pipeline stage%s, and is compiled for "
                 "%u", g->source, g->pipeline_stages, g->pipeline_stages == 1 ? "" : "s", lw->stages);
        return false;
    }
    if (lw->stages > chips) {
        snprintf(lw->err, lw->err_size, "%s: %u pipeline stages on a machine of %u chip%s", g->source, lw->stages,
                 chips, chips == 1 ? "" : "s");
        return false;
    }
    lw->replicas = o->replicas ? o->replicas : lw->stages > 1 ? 1 : chips;
    if (lw->replicas * lw->stages > chips) {
        snprintf(lw->err, lw->err_size, "%s: %u replicas%s on a machine of %u chip%s", g->source, lw->replicas,
                 lw->stages > 1 ? " of a pipeline" : "", chips, chips == 1 ? "" : "s");
        return false;
    }
    lw->program_tiles = lw->stages * lw->tiles;
    lw->replica_stride = lw->stages * per_chip;
    lw->mem_base = machine_memory_base(m);
    lw->mem_end = lw->mem_base + machine_u32(m, MP_tile_memory_bytes);
    /* Region 1's last element, where it is not one of an interleaved pair
     * (any size, set by hand, whose region 1 is not whole 32 KiB
     * pairs), holds nothing: the codelets' paced loops take region 1 as
     * interleaved (two streams in it with address bit 3 apart never meet,
     * memmodel/tile_memory.h), and there two streams would conflict. */
    if (lw->mem_end > ISA_REGION1_BASE)
        lw->mem_end -= (lw->mem_end - ISA_REGION1_BASE) % 32768u;
    lw->rep->memory_bytes = machine_u32(m, MP_tile_memory_bytes);
    return true;
}

/* The kernel library and its codelets, the check of every node, and where
 * the regions start; false with lw->err set. */
static bool load_library(lowering *lw)
{
    const graph *g = lw->g;
    lw->lib = codelet_library_get(lw->mem_base, lw->err, lw->err_size);
    if (!lw->lib)
        return false;
    if (!kernel_symbols_find(lw->lib, &lw->kernels, lw->err, lw->err_size))
        return false;
    if (!lower_supports(g, lw->opts, lw->err, lw->err_size)) {
        lw->rep->unsupported = true;
        return false;
    }
    lw->region0_start = (uint32_t)ALIGN8(lw->lib->region0_end);
    lw->region1_start = (uint32_t)ALIGN8(lw->lib->region1_end);
    lw->rep->library_bytes = lw_library_bytes(lw);
    if (lw->mem_end <= ISA_REGION1_BASE) {
        snprintf(lw->err, lw->err_size, "%s: the machine's tile memory (%u bytes) has no region 1; ipusim compiles "
                 "for GC200/Bow-sized tiles", g->source, machine_u32(lw->opts->machine, MP_tile_memory_bytes));
        return false;
    }
    return true;
}

/* Per-tile and per-tensor state: empty tiles, pipeline stages of the
 * nodes, element sizes and shared storage; false when out of host memory. */
static bool start_lowering(lowering *lw)
{
    const graph *g = lw->g;
    lw->tile = calloc(lw->program_tiles, sizeof *lw->tile);
    lw->sync_step = lw->stages > 1 ? lw->kernels.ctl_sync_system : lw->kernels.ctl_sync_chip;
    lw->scope_hi = lw->program_tiles;
    lw->overlap = g->pipeline_stages > 1 && !lw->opts->serial_pipeline;
    lw->stage_of = calloc((size_t)g->n_nodes + 1, sizeof *lw->stage_of);
    lw->early_op = malloc(((size_t)g->n_nodes + 1) * sizeof *lw->early_op);
    for (int i = 0; lw->early_op && i < g->n_nodes; i++)
        lw->early_op[i] = -1;
    lw->home_stage = calloc((size_t)g->n_tensors + 1, sizeof *lw->home_stage);
    lw->stage_syncs = calloc(lw->stages, sizeof *lw->stage_syncs);
    if (lw->stage_of && lw->home_stage && g->pipeline_stages)
        scheduled_stages(lw);
    else if (lw->stage_of && lw->stages > 1)
        assign_stages(lw);
    lw->tensor = calloc((size_t)g->n_tensors + 1, sizeof *lw->tensor);
    lw->last_reader = calloc((size_t)g->n_tensors + 1, sizeof *lw->last_reader);
    lw->tmap = tmap_new();
    if (!lw->tile || !lw->tensor || !lw->tmap || !lw->stage_of || !lw->early_op || !lw->last_reader ||
        !lw->home_stage || !lw->stage_syncs) {
        snprintf(lw->err, lw->err_size, "out of host memory");
        return false;
    }
    for (uint32_t i = 0; i < lw->program_tiles; i++) {
        lw->tile[i].region0_kept_end = lw->region0_start;
        lw->tile[i].region1_kept_end = lw->region1_start;
        lw->tile[i].region0_scratch_floor = ISA_REGION1_BASE;
        lw->tile[i].region1_scratch_floor = lw->mem_end;
        lw->tile[i].hold = lw->hold_bytes ? lw->hold_bytes[i] : 0;
        lw->tile[i].hold_firm = lw->hold_firm ? lw->hold_firm[i] : 0;
    }
    lw_release_scratch(lw);
    for (int t = 0; t < g->n_tensors; t++)
        lw->tensor[t].element_bytes = (uint32_t)graph_dtype_size(g->tensors[t].dtype);
    lw_tensor_roots(lw);
    return lw_streaming_plan(lw) && lw_sections_plan(lw);
}

/* The graph inputs from the host: their pieces, a host stream each, then
 * the phase's sync. */
static void lower_inputs(lowering *lw)
{
    const graph *g = lw->g;
    for (int i = 0; i < g->n_inputs && !lw->failed; i++) {
        int t = g->inputs[i];
        if (g->tensors[t].data)
            continue;
        lw->stage = lw->home_stage[t];
        if (!lower_input(lw, t))
            break;
    }
    lw->stage = 0;
    uint32_t stream = 0;
    for (int i = 0; i < g->n_inputs && !lw->failed; i++) {
        const ltensor *lt = &lw->tensor[g->inputs[i]];
        if (g->tensors[g->inputs[i]].data)
            continue;
        for (size_t k = 0; k < lt->n; k++)
            lw_add_host_receive(lw, lt->p[k].tile, lt->p[k].addr, (uint32_t)(lt->p[k].count * lt->element_bytes),
                                XCH_HOST | stream++);
    }
    lw->rep->input_streams = stream;
    lower_variables(lw);
    if (!lw->failed)
        lw_end_phase(lw);
}

/* The phases a step is shown in: the graph's, and the replicas' all-reduce
 * (an update node, after the backward pass) apart from the rest of the
 * update, the part of the step that crosses chips. */
#define PHASE_ALL_REDUCE GRAPH_PHASES
#define PHASE_PIPELINE (GRAPH_PHASES + 1)
static const char *const phase_names[GRAPH_PHASES + 2] = { "forward", "backward", "update", "all-reduce",
                                                           "pipeline" };

/* A training step's next phase (graph.h) starts in a superstep of its
 * own: the pending exchange ends, every tile syncs, and the phase is
 * recorded at the superstep that follows (sim/program/phases.h). */
static void begin_phase(lowering *lw, int phase)
{
    if (!lw->phases.n_stretches)
        phases_add(&lw->phases, 0, phase_names[lw->cur_phase]);
    if (!lw_sync_all(lw, lw->sync_step))
        return;
    if (!phases_add(&lw->phases, lw->syncs, phase_names[phase]))
        lw_fail(lw, "%s: more than %d stretches of forward, backward, all-reduce and update supersteps", lw->g->source,
                PHASES_MAX_STRETCHES);
    lw->cur_phase = phase;
}

/* ---- pipeline cycles ------------------------------------------------------ */

/* The stage whose supersteps are being built ends its exchange phase, and
 * counts its syncs in the cycle. */
static void leave_stage(lowering *lw)
{
    lw_end_phase(lw);
    lw->stage_syncs[lw->cycle_stage] = lw->syncs - lw->cycle_base;
}

/* The next supersteps are stage s's: its exchange phases and syncs are for
 * its tiles alone, chip syncs, counted from the start of the cycle (the
 * stages' k-th supersteps of a cycle share a number, sim/program/op_map.h). */
static void enter_stage(lowering *lw, uint32_t s)
{
    lw->cycle_stage = s;
    lw->scope_lo = s * lw->tiles;
    lw->scope_hi = (s + 1) * lw->tiles;
    lw->syncs = lw->cycle_base + lw->stage_syncs[s];
    lw->sync_step = lw->kernels.ctl_sync_chip;
}

static void open_cycle(lowering *lw, int cycle)
{
    lw_end_phase(lw);               /* the copies of the cycle before, in one exchange */
    lw->in_cycle = true;
    lw->cycle = cycle;
    lw->cycle_base = lw->syncs;
    memset(lw->stage_syncs, 0, lw->stages * sizeof *lw->stage_syncs);
    enter_stage(lw, 0);
}

/* The end of a cycle: every stage's tiles sync (a chip sync) until each
 * has as many supersteps in the cycle as the stage with the most, then
 * the whole system syncs; the copies between the stages follow. */
static void close_cycle(lowering *lw)
{
    leave_stage(lw);
    uint32_t most = 0;
    for (uint32_t s = 0; s < lw->stages; s++)
        most = lw->stage_syncs[s] > most ? lw->stage_syncs[s] : most;
    for (uint32_t s = 0; s < lw->stages && !lw->failed; s++)
        for (uint32_t k = lw->stage_syncs[s]; k < most; k++)
            for (uint32_t i = s * lw->tiles; i < (s + 1) * lw->tiles; i++)
                lw_push_word(lw, &lw->tile[i].steps, lw->kernels.ctl_sync_chip);
    lw->syncs = lw->cycle_base + most;
    lw->in_cycle = false;
    lw->scope_lo = 0;
    lw->scope_hi = lw->program_tiles;
    lw->sync_step = lw->kernels.ctl_sync_system;
    lw_sync_all(lw, lw->sync_step);
}

/* Before node i of a pipelined step: leave the cycle it is not in, or
 * enter its cycle and its stage's supersteps. */
static void pipeline_section(lowering *lw, const graph_node *n, int phase)
{
    int cycle = lw->overlap && n->op != GRAPH_OP_IPU_COPY ? n->cycle : -1;
    if (lw->in_cycle && cycle != lw->cycle)
        close_cycle(lw);
    if (phase != lw->cur_phase)
        begin_phase(lw, phase);
    if (cycle < 0 || lw->failed)
        return;
    if (!lw->in_cycle)
        open_cycle(lw, cycle);
    if ((uint32_t)n->stage != lw->cycle_stage) {
        leave_stage(lw);
        enter_stage(lw, (uint32_t)n->stage);
    }
}

int32_t lw_node_op(lowering *lw, int i)
{
    const graph_node *n = &lw->g->nodes[i];
    char label[24];
    snprintf(label, sizeof label, "#%d", i);
    int32_t op = op_map_add_op(&lw->ops, graph_ops[n->op].name, n->name && n->name[0] ? n->name : label);
    if (op < 0)
        lw_fail(lw, "out of host memory");
    return op;
}

/* Node i with the lowering its row of the op table names; then its
 * outputs' pieces in order and the storage it was the last to read freed. */
static void lower_node(lowering *lw, int i)
{
    const graph_node *n = &lw->g->nodes[i];
    if (graph_node_folded(lw->g, n))
        return;
    lw->rep->ops++;
    /* Each op starts where the previous one's tiles ended, so no tile
     * holds the first piece of everything. */
    if (lw->stage_of[i] != lw->stage) {
        lw->stage = lw->stage_of[i];
        lw->op_base = 0;
    } else {
        lw->op_base = (lw->op_base + lw->op_tiles) % lw->tiles;
    }
    lw->op_tiles = 0;
    lw_release_scratch(lw);
    if (lw->sections && !lw_section_in(lw, i) && (!lw_section_leave(lw) || !lw_sections_release(lw, i)))
        return;
    int phase = n->op == GRAPH_OP_ALL_REDUCE ? PHASE_ALL_REDUCE : (int)n->phase;
    if (lw->overlap && (n->cycle >= 0 || n->op == GRAPH_OP_IPU_COPY))
        phase = PHASE_PIPELINE;
    pipeline_section(lw, n, phase);
    if (lw->sections && !lw_section_enter(lw, i))
        return;
    const lw_op_rule *rule = &lw_op_rules[n->op];
    if (lw->early_op[i] >= 0) {
        lw->cur_op = lw->early_op[i];     /* lowered with an earlier node: its pieces and storage */
    } else {
        lw->cur_op = lw_node_op(lw, i);
        if (lw->failed || !lw_streaming_load(lw, i) || !lw_place_zeros(lw, n))
            return;
        if (rule->lower)
            rule->lower(lw, n, i);
        else
            lw_unsupported(lw, n, i, "no lowering for this op yet");
    }
    for (int k = 0; k < n->n_outputs && !lw->failed; k++)
        if (n->outputs[k] >= 0)
            lw_sort_pieces(lw, n->outputs[k]);
    if (!lw->failed && lw_release_dead(lw, i))
        lw_streaming_store(lw, i);
    lw->cur_op = -1;
}

/* Everything the lowering allocated on the host. */
static void free_lowering(lowering *lw)
{
    lw_sections_free(lw);
    free(lw->stage_of);
    free(lw->early_op);
    free(lw->home_stage);
    free(lw->stream_done);
    free(lw->stream_base);
    free(lw->stream_first);
    free(lw->stream_queue);
    free(lw->stream_order);
    free(lw->stage_syncs);
    op_map_free(&lw->ops);
    free(lw->lent);
    free(lw->control_bytes);
    free(lw->arena_need);
    free(lw->last_reader);
    if (lw->tile) {
        for (uint32_t i = 0; i < lw->program_tiles; i++) {
            ltile *t = &lw->tile[i];
            free(t->steps.w);
            free(t->records.w);
            free(t->shared);
            free(t->patch);
            free(t->step_refs);
            free(t->sends);
            free(t->recvs);
            free(t->copies.w);
            for (size_t d = 0; d < t->n_data; d++)
                free(t->data[d].bytes);
            free(t->data);
            free(t->allocs);
            free(t->peers);
            free(t->record_words);
            free(t->free);
        }
    }
    if (lw->tensor)
        for (int t = 0; t < lw->g->n_tensors; t++) {
            free(lw->tensor[t].p);
            free(lw->tensor[t].blocks);
        }
    free(lw->tile);
    free(lw->tensor);
    tmap_free(lw->tmap);
}

/* One lowering of the graph, with `hold` bytes held back on each tile for
 * its records and control program (NULL: none); on a tile whose found no
 * room, *need (allocated here) says what each tile's take. */
static ipu_exe *lower_once(const graph *g, const lower_options *o, lower_report *report, char *err,
                           size_t err_size, const uint32_t *hold, const uint32_t *firm, uint32_t **need,
                           const uint32_t *arena, uint32_t **arena_need)
{
    lower_report dummy;
    lowering lw = { .g = g, .opts = o, .cur_op = -1, .rep = report ? report : &dummy, .err = err, .err_size = err_size,
                    .hold_bytes = hold, .hold_firm = firm, .arena_hint = arena };
    memset(lw.rep, 0, sizeof *lw.rep);
    *need = NULL;
    *arena_need = NULL;
    if (!plan_machine(&lw) || !load_library(&lw))
        return NULL;
    ipu_exe *e = NULL;
    if (start_lowering(&lw)) {
        /* 1. Inputs from the host.  2. The ops.  3. Outputs to the host. */
        lower_inputs(&lw);
        for (int i = 0; i < g->n_nodes && !lw.failed; i++) {
            lower_node(&lw, i);
            if (o->progress)
                o->progress(o->progress_ctx, (uint32_t)i + 1, (uint32_t)g->n_nodes);
        }
        lw_release_scratch(&lw);
        if (!lw.failed)
            lw_section_leave(&lw);
        if (!lw.failed)
            lw_sections_done(&lw);
        if (lw.in_cycle && !lw.failed)
            close_cycle(&lw);
        if (!lw.failed && lw_streaming_store(&lw, INT_MAX))
            lower_updates(&lw);
        e = exe_new();
        if (!e) {
            lw_fail(&lw, "out of host memory");
        } else {
            lw_send_outputs(&lw);
            lw_write_executable(&lw, e);
        }
    }
    if (lw.failed && lw.control_no_room) {
        *need = lw.control_bytes;
        lw.control_bytes = NULL;
    }
    if (lw.failed)
        lw_sections_failed(&lw);
    if (lw.failed && lw.arena_retry && lw.arena_need) {
        lw.arena_need[4 * (size_t)lw.program_tiles] = UINT32_MAX;
        *arena_need = lw.arena_need;
        lw.arena_need = NULL;
    }
    free_lowering(&lw);
    if (lw.failed || !e) {
        exe_free(e);
        return NULL;
    }
    return e;
}

/* Where the ops' scratch and tensors leave a tile too little room for its
 * vertex records and control program (they are placed last, when their
 * size is known), the graph is lowered again with that room held back on
 * every tile from the start: what the first lowering needed (firm) and a
 * margin, the plans then choosing within the rest; a constant that comes
 * late and finds no other room may take the margin (lw_tile_alloc). */
#define CONTROL_TRIES 3
#define ARENA_TRIES 4

ipu_exe *lower_graph(const graph *g, const lower_options *o, lower_report *report, char *err, size_t err_size)
{
    uint32_t *hold = NULL, *firm = NULL, *need = NULL, *arena = NULL, *arena_need = NULL;
    ipu_exe *e = NULL;
    for (int attempt = 0, arena_tries = 0; attempt < CONTROL_TRIES; attempt++) {
        e = lower_once(g, o, report, err, err_size, hold, firm, &need, arena, &arena_need);
        /* shared programs (lower_section.c): the first lowering measured
         * what each stage's sections need of their arena and what the rest
         * of the program takes beside it; again with that and a margin (or,
         * where a section found its arena too small, a quarter more) */
        if (!e && arena_need && arena_tries++ < ARENA_TRIES) {
            if (!arena) {
                arena = arena_need;       /* as measured, and a margin */
                for (size_t k = 0; arena[k] != UINT32_MAX; k++)
                    arena[k] = arena[k] ? lw_arena_margin(arena[k]) : 0;
            } else {
                for (size_t k = 0; arena_need[k] != UINT32_MAX; k++)
                    arena[k] = arena_need[k] > arena[k] ? arena_need[k] : arena[k];
                free(arena_need);
            }
            arena_need = NULL;
            free(need);
            need = NULL;
            attempt--;
            continue;
        }
        free(arena_need);
        arena_need = NULL;
        if (report)
            report->lowerings = (uint32_t)attempt + 1;
        if (!e && attempt > 0 && hold) {
            uint32_t most = 0;
            for (uint32_t i = 0; hold[i] != UINT32_MAX; i++)
                most = hold[i] > most ? hold[i] : most;
            size_t len = strlen(err);
            snprintf(err + len, err_size > len ? err_size - len : 0,
                     " (lowered %d times: the first left a tile too little room for its vertex records and control "
                     "program; up to %u bytes a tile held back for them)", attempt + 1, most);
        }
        if (e || !need || attempt + 1 == CONTROL_TRIES)
            break;
        if (!hold) {
            size_t n = 0;
            while (need[n] != UINT32_MAX)
                n++;
            firm = malloc((n + 1) * sizeof *firm);
            if (!firm) {
                snprintf(err, err_size, "out of host memory");
                break;
            }
            memcpy(firm, need, (n + 1) * sizeof *firm);
            hold = need;
            for (uint32_t i = 0; need[i] != UINT32_MAX; i++)
                hold[i] = need[i] + need[i] / 12 + 1024;
        } else {
            for (uint32_t i = 0; hold[i] != UINT32_MAX; i++) {
                uint32_t more = need[i] + need[i] / 6 + 2048;
                if (more > hold[i])
                    hold[i] = more;
                if (need[i] > firm[i])
                    firm[i] = need[i];
            }
            free(need);
        }
        need = NULL;
    }
    free(hold);
    free(firm);
    free(need);
    free(arena);
    return e;
}
