/*
 * lower_program.c — the end of the program and the executable: the graph
 * outputs sent to the host after a sync, every tile's control program
 * closed and placed (in one block, or two joined by a ctl_jump), the
 * sections of each tile for each replica (the library image with the
 * tile's control program in ctl_table, vertex records, data), the
 * library's symbols (once, on every tile), and the tensor map.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower_ops.h"
#include "exchange/exchange.h"
#include "isa/isa.h"
#include "sim/program/model_record.h"
#include "sim/program/tensor_map.h"

/* A control-program step as supervisor.S lays it out. */
typedef struct step_shape {
    size_t words;                     /* 0: no step starts here, or its count word is cut off */
    uint64_t transfers;               /* the sends or receives it makes ... */
    bool sends;                       /* ... sends, else receives */
    bool compute, sync;               /* a compute set or supervisor codelet; a sync */
} step_shape;

/* The step at w (n words left in the program). */
static step_shape decode_step(const lowering *lw, const uint32_t *w, size_t n)
{
    const kernel_symbols *k = &lw->kernels;
    const uint32_t h = w[0];
    step_shape s = { 0 };
    if (h == k->ctl_run || h == k->ctl_call) {
        s.words = h == k->ctl_run ? 4 : 3, s.compute = true;
    } else if (h == k->ctl_send || h == k->ctl_recv) {
        s.words = 4, s.transfers = 1, s.sends = h == k->ctl_send;
    } else if (h == k->ctl_sends || h == k->ctl_recvs) {
        s.sends = h == k->ctl_sends;
        if (n >= 4)
            s.transfers = (uint64_t)w[3] + 1, s.words = 4 + (size_t)s.transfers;
    } else if (h == k->ctl_sends16 || h == k->ctl_recvs16 || h == k->ctl_recvs16_group) {
        /* half a word a transfer (after the group's base word) */
        const size_t based = h == k->ctl_recvs16_group;
        s.sends = h == k->ctl_sends16;
        if (n >= 4 + based)
            s.transfers = lw_narrow_run_blocks(w[3]), s.words = 4 + based + (size_t)(s.transfers + 1) / 2;
    } else if (h == k->ctl_send_list || h == k->ctl_recv_list || h == k->ctl_send_list_group ||
               h == k->ctl_recv_list_group) {
        /* two words a transfer (after the group's base word) */
        const size_t based = h == k->ctl_send_list_group || h == k->ctl_recv_list_group;
        s.sends = h == k->ctl_send_list || h == k->ctl_send_list_group;
        if (n >= 2)
            s.transfers = (uint64_t)w[1] + 1, s.words = 2 + based + 2 * (size_t)s.transfers;
    } else if (h == k->ctl_send_rows || h == k->ctl_recv_rows) {
        s.words = 6, s.sends = h == k->ctl_send_rows;
        s.transfers = n >= 5 ? (uint64_t)w[4] + 1 : 0;
    } else if (h == k->ctl_jump || h == k->ctl_sub) {
        s.words = 2;
    } else if (h == k->ctl_sync_chip || h == k->ctl_sync_system || h == k->ctl_end || h == k->ctl_ret) {
        s.words = 1, s.sync = h == k->ctl_sync_chip || h == k->ctl_sync_system;
    }
    return s;
}

/* Tile i's control program in one block where a region has room for it;
 * else in two, one a region: the first (in the larger room) ends at a step
 * boundary with a ctl_jump to the second. */
static bool place_steps(lowering *lw, uint32_t i)
{
    ltile *t = &lw->tile[i];
    const uint64_t slack = CODELET_READ_SLACK_BYTES;
    uint64_t bytes = t->steps.n * 4;
    uint64_t room1 = t->region1_scratch_floor > ALIGN8(t->region1_kept_end) ? t->region1_scratch_floor - ALIGN8(t->region1_kept_end) : 0;
    uint64_t room0 = t->region0_scratch_floor > ALIGN8(t->region0_kept_end) ? t->region0_scratch_floor - ALIGN8(t->region0_kept_end) : 0;
    t->split_word = 0;
    if (lw->opts->control_room_bytes) {
        room1 = room1 < lw->opts->control_room_bytes ? room1 : lw->opts->control_room_bytes;
        room0 = room0 < lw->opts->control_room_bytes ? room0 : lw->opts->control_room_bytes;
    }
    if (ALIGN8(bytes) + slack <= (room1 > room0 ? room1 : room0)) {
        t->step_base = lw_tile_alloc(lw, i, bytes, PREFER_REGION1, 8, "the control program");
        return t->step_base != 0;
    }
    bool first_r1 = room1 >= room0;
    uint64_t first_room = first_r1 ? room1 : room0, second_room = first_r1 ? room0 : room1;
    /* the last step boundary whose steps and the jump fit the first room */
    size_t w = 0, split = 0;
    while (w < t->steps.n && (w + 2) * 4 + slack <= first_room) {
        split = w;
        size_t n = decode_step(lw, t->steps.w + w, t->steps.n - w).words;
        if (!n)
            return lw_fail(lw, "internal: tile %u: word %zu of the control program is no step", i, w);
        w += n;
    }
    uint64_t rest = (t->steps.n - split) * 4;
    if (!split || ALIGN8(rest) + slack > second_room)
        return lw_no_room(lw, i, ALIGN8(bytes) + slack, "the control program") != 0;
    t->step_base = lw_bump_alloc(lw, i, (split + 2) * 4, ALIGN8((split + 2) * 4) + slack, 7, !first_r1);
    t->step_base2 = lw_bump_alloc(lw, i, rest, ALIGN8(rest) + slack, 7, first_r1);
    t->split_word = split;
    lw->rep->split_programs++;
    return t->step_base && t->step_base2;
}

/* After tile i's vertex records or control program found no room: what
 * the tile holds, appended to the message, so that a model that does not
 * fit shows what fills the tile (the control program and the records grow
 * with the exchanges and compute sets the tile takes part in). */
static void explain_control(lowering *lw, uint32_t i)
{
    const ltile *t = &lw->tile[i];
    uint64_t runs = 0, recvs = 0, sends = 0, syncs = 0;
    for (size_t w = 0; w < t->steps.n;) {
        const step_shape st = decode_step(lw, t->steps.w + w, t->steps.n - w);
        if (!st.words)
            return;
        runs += st.compute;
        recvs += st.sends ? 0 : st.transfers;
        sends += st.sends ? st.transfers : 0;
        syncs += st.sync;
        w += st.words;
    }
    size_t len = strlen(lw->err);
    uint64_t kept = (t->region0_kept_end - lw->region0_start) + (t->region1_kept_end - lw->region1_start);
    uint64_t rec_bytes = t->records.n * 4;
    if (t->rec_base && kept >= rec_bytes)
        kept -= rec_bytes;                          /* the records were placed before the program failed */
    snprintf(lw->err + len, lw->err_size > len ? lw->err_size - len : 0,
             "; tile %u holds %llu bytes kept for the run (tensors and variables), %llu of vertex records and "
             "%llu of control program: %llu compute sets, %llu receives and %llu sends of the exchange "
             "(16 bytes each; 4, or 2, in a run into consecutive blocks; 24 a run of rows to or from one tile), "
             "%llu syncs",
             i, (unsigned long long)kept, (unsigned long long)rec_bytes,
             (unsigned long long)(t->steps.n * 4), (unsigned long long)runs, (unsigned long long)recvs,
             (unsigned long long)sends, (unsigned long long)syncs);
}

static int cmp_alloc(const void *a, const void *b)
{
    const data_item *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Close tile i's control program and place its records and steps (once). */
static bool close_tile(lowering *lw, uint32_t i)
{
    ltile *t = &lw->tile[i];
    /* Blocks given to several tensors in turn overlap: one section each
     * stretch of memory. */
    if (t->n_allocs > 1)
        qsort(t->allocs, t->n_allocs, sizeof *t->allocs, cmp_alloc);
    size_t n = 0;
    for (size_t k = 0; k < t->n_allocs; k++) {
        data_item *prev = n ? &t->allocs[n - 1] : NULL;
        if (prev && t->allocs[k].addr < prev->addr + prev->size) {
            uint32_t end = t->allocs[k].addr + t->allocs[k].size;
            if (end > prev->addr + prev->size)
                prev->size = end - prev->addr;
        } else {
            t->allocs[n++] = t->allocs[k];
        }
    }
    t->n_allocs = n;
    lw_push_word(lw, &t->steps, lw->kernels.ctl_end);
    if (lw->failed)
        return false;
    uint32_t rec_bytes = (uint32_t)(t->records.n * 4);
    t->rec_base = rec_bytes ? lw_tile_alloc(lw, i, rec_bytes, PREFER_REGION1, 8, "vertex records") : 0;
    if (lw->failed || !place_steps(lw, i)) {
        explain_control(lw, i);
        return false;
    }
    for (size_t k = 0; k < t->n_patch; k++)
        t->steps.w[t->patch[k]] += t->rec_base;
    /* ctl_sub's and ctl_jump's step indices made addresses */
    for (size_t k = 0; k < t->n_step_refs; k++) {
        uint32_t *w = &t->steps.w[t->step_refs[k]];
        *w = t->split_word && *w >= t->split_word ? t->step_base2 + (uint32_t)(*w - t->split_word) * 4
                                                  : t->step_base + *w * 4;
    }
    lower_report *rep = lw->rep;
    rep->control_bytes += t->steps.n * 4;
    rep->record_bytes += rec_bytes;
    if (t->steps.n * 4 > rep->max_control_bytes)
        rep->max_control_bytes = t->steps.n * 4;
    if (rec_bytes > rep->max_record_bytes)
        rep->max_record_bytes = rec_bytes;
    rep->program_tiles++;
    return true;
}

/* Tile i's sections in the executable (replica 0's; the other replicas,
 * on chip r, have the same but for the words relocated: tile numbers, tile
 * endpoints and host streams moved on by a chip's worth). */
static bool finish_tile(lowering *lw, uint32_t i, ipu_exe *e)
{
    ltile *t = &lw->tile[i];
    uint32_t rec_bytes = (uint32_t)(t->records.n * 4), step_bytes = (uint32_t)(t->steps.n * 4);
    uint32_t rec_base = t->rec_base, step_base = t->step_base;
    uint32_t gt = lw_global_tile(lw, i);
    uint32_t *steps = t->steps.w;
    for (size_t k = 0; lw->replicas > 1 && k < t->n_peers; k++) {
        size_t word = t->peers[k].word;
        uint32_t addr = t->split_word && word >= t->split_word ? t->step_base2 + (uint32_t)(word - t->split_word) * 4
                                                                 : step_base + (uint32_t)word * 4;
        const struct peer_ref *q = &t->peers[k];
        if (!exe_add_reloc_rotated(e, gt, addr, (enum exe_reloc_kind)q->kind, q->shift, q->slice_bytes))
            return lw_fail(lw, "out of host memory");
    }
    for (size_t k = 0; lw->replicas > 1 && k < t->n_record_words; k++) {
        const struct peer_ref *q = &t->record_words[k];
        if (!exe_add_reloc_rotated(e, gt, rec_base + (uint32_t)q->word, (enum exe_reloc_kind)q->kind, q->shift,
                                   q->slice_bytes))
            return lw_fail(lw, "out of host memory");
    }
    bool ok;
    if (t->split_word) {
        /* the first block, its jump, and the second block */
        size_t first = t->split_word;
        uint32_t *head = malloc((first + 2) * 4);
        ok = head != NULL;
        if (ok) {
            memcpy(head, steps, first * 4);
            head[first] = lw->kernels.ctl_jump;
            head[first + 1] = t->step_base2;
            ok = exe_add_section(e, gt, ".control", step_base, head, (uint32_t)(first + 2) * 4, 0, lw->err,
                                 lw->err_size) &&
                 exe_add_section(e, gt, ".control.1", t->step_base2, steps + first,
                                 (uint32_t)(t->steps.n - first) * 4, 0, lw->err, lw->err_size);
        } else {
            snprintf(lw->err, lw->err_size, "out of host memory");
        }
        free(head);
    } else {
        ok = exe_add_section(e, gt, ".control", step_base, steps, step_bytes, 0, lw->err, lw->err_size);
    }
    if (!ok)
        return lw_fail(lw, "tile %u: %s", gt, lw->err);
    uint32_t i_saved = i;
    i = gt;
    char err[256];
    /* The library image, with this tile's control program in ctl_table. */
    const ipu_exe *img = lw->lib->image;
    for (size_t s = 0; s < img->n_sections; s++) {
        const exe_section *sec = &img->sections[s];
        const uint8_t *bytes = sec->bytes;
        uint8_t *copy = NULL;
        if (bytes && lw->kernels.ctl_table >= sec->addr && lw->kernels.ctl_table + 4 <= sec->addr + sec->size) {
            copy = malloc(sec->size);
            if (!copy)
                return lw_fail(lw, "out of host memory");
            memcpy(copy, bytes, sec->size);
            memcpy(copy + (lw->kernels.ctl_table - sec->addr), &step_base, 4);
            bytes = copy;
        }
        ok = exe_add_section(e, i, sec->name, sec->addr, bytes, sec->size, sec->flags, err, sizeof err);
        free(copy);
        if (!ok)
            return lw_fail(lw, "tile %u: %s", i, err);
    }
    if (rec_bytes && !exe_add_section(e, i, ".vertex", rec_base, t->records.w, rec_bytes, EXE_SEC_WRITE, err,
                                      sizeof err))
        return lw_fail(lw, "tile %u: %s", i, err);
    /* One section per block: zero-filled unless data were placed in it. */
    for (size_t a = 0; a < t->n_allocs; a++) {
        const data_item *blk = &t->allocs[a];
        if (blk->addr == rec_base || blk->addr == step_base || (t->split_word && blk->addr == t->step_base2))
            continue;
        uint8_t *bytes = NULL;
        for (size_t d = 0; d < t->n_data; d++) {
            const data_item *di = &t->data[d];
            if (!di->bytes || di->addr < blk->addr || di->addr >= blk->addr + blk->size)
                continue;
            if (!bytes && !(bytes = calloc(1, blk->size)))
                return lw_fail(lw, "out of host memory");
            uint32_t n = di->size < blk->addr + blk->size - di->addr ? di->size : blk->addr + blk->size - di->addr;
            memcpy(bytes + (di->addr - blk->addr), di->bytes, n);
        }
        char name[40];
        snprintf(name, sizeof name, bytes ? ".data.%zu" : ".bss.%zu", a);
        ok = exe_add_section(e, i, name, blk->addr, bytes, blk->size, EXE_SEC_WRITE | (bytes ? 0 : EXE_SEC_NOBITS),
                             err, sizeof err);
        free(bytes);
        if (!ok)
            return lw_fail(lw, "tile %u: %s", i, err);
    }
    if (!exe_set_entry(e, i, lw->kernels.supervisor))
        return lw_fail(lw, "out of host memory");
    uint64_t used = lw_tile_used_bytes(lw, t) + (lw->region0_start - lw->mem_base) + (lw->region1_start - ISA_REGION1_BASE);
    if (used > lw->rep->max_tile_bytes) {
        lw->rep->max_tile_bytes = used;
        lw->rep->max_tile = i_saved;
    }
    return true;
}

/* Tensor map entries (and symbols on each tile) for every tensor kept, of
 * replica 0 (the executable and the map make the other replicas'). */
static bool map_tensor(lowering *lw, ipu_exe *e, int t, uint32_t role)
{
    const graph_tensor *g = lw_gt(lw, t);
    const ltensor *lt = &lw->tensor[t];
    uint64_t dims[TMAP_MAX_RANK];
    for (int d = 0; d < g->shape.rank && d < TMAP_MAX_RANK; d++)
        dims[d] = (uint64_t)g->shape.dims[d];
    if (lw->tensor[lt->root].released)
        role |= TMAP_TRANSIENT;
    tmap_tensor *mt = tmap_add_tensor(lw->tmap, g->name, (uint32_t)g->dtype, lt->element_bytes, (uint32_t)g->shape.rank,
                                      dims, role);
    if (!mt)
        return lw_fail(lw, "out of host memory");
    if (lt->permuted)
        for (int d = 0; d < g->shape.rank; d++)
            mt->perm[d] = lt->perm[d];
    if ((role & TMAP_INPUT) && !graph_dtype_is_float(g->dtype)) {
        int64_t limit = graph_value_limit(lw->g, t);
        mt->value_limit = limit > 0 ? (uint64_t)limit : 0;
    }
    for (size_t k = 0; k < lt->n; k++) {
        uint32_t stream = TMAP_NO_STREAM;
        if (role & TMAP_INPUT)
            stream = lw->next_in_stream++;
        else if (role & TMAP_OUTPUT)
            stream = lw->next_out_stream++;
        uint32_t tile = lw_global_tile(lw, lt->p[k].tile);
        if (!tmap_add_piece(mt, tile, lt->p[k].addr, lt->p[k].first, lt->p[k].count, stream))
            return lw_fail(lw, "out of host memory");
        if (!(role & TMAP_OUTPUT) || (role & TMAP_INPUT))
            exe_add_symbol(e, tile, g->name, lt->p[k].addr, (uint32_t)(lt->p[k].count * lt->element_bytes), EXE_SYM_DATA, true);
    }
    return true;
}

/* Graph outputs never computed on a tile (constants, inputs passed
 * through) placed on tile 0. */
static bool place_constant_outputs(lowering *lw)
{
    const graph *g = lw->g;
    for (int i = 0; i < g->n_outputs && !lw->failed; i++) {
        int t = g->outputs[i];
        if (lw->tensor[t].placed)
            continue;
        const graph_tensor *gtn = lw_gt(lw, t);
        uint64_t n = (uint64_t)graph_shape_numel(&gtn->shape);
        if (!gtn->data)
            return lw_fail(lw, "%s: output '%s' is never computed", g->source, gtn->name);
        uint32_t a = lw_fetch(lw, t, 0, n, 0, PREFER_REGION1);
        if (a)
            lw_add_piece(lw, t, 0, a, 0, n);
    }
    return !lw->failed;
}

bool lw_send_outputs(lowering *lw)
{
    const graph *g = lw->g;
    if (!place_constant_outputs(lw))
        return false;
    /* The outputs leave in a superstep of their own, after a chip sync, so
     * the statistics show the computation apart from the host transfers. */
    lw_end_phase(lw);
    for (uint32_t i = 0; i < lw->program_tiles && !lw->failed; i++)
        lw_push_word(lw, &lw->tile[i].steps, lw->sync_step);
    lw_count_sync(lw);
    for (int i = 0; i < g->n_outputs && !lw->failed; i++) {
        const ltensor *lt = &lw->tensor[g->outputs[i]];
        for (size_t k = 0; k < lt->n; k++)
            lw_push_send(lw, lt->p[k].tile, lt->p[k].addr,
                         (uint32_t)((lt->p[k].count * lt->element_bytes + 3) & ~3ull),
                         XCH_HOST | lw->rep->output_streams++, EXE_RELOC_HOST_OUT);
    }
    return !lw->failed;
}

/* The tensor map: inputs and outputs first (their streams are numbered in
 * this order, as the steps of lower_graph and lw_send_outputs), then
 * weights and activations; replica 0's (the map names the others). */
static void map_tensors(lowering *lw, ipu_exe *e)
{
    const graph *g = lw->g;
    /* replica 0's; the map names the others (decoding makes them) */
    if (lw->replicas > 1) {
        lw->tmap->replicas = lw->replicas;
        lw->tmap->tile_stride = lw->replica_stride;
        lw->tmap->input_streams = lw->rep->input_streams;
        lw->tmap->output_streams = lw->rep->output_streams;
    }
    for (int i = 0; i < g->n_inputs && !lw->failed; i++)
        if (!g->tensors[g->inputs[i]].data)
            map_tensor(lw, e, g->inputs[i], TMAP_INPUT);
    for (int i = 0; i < g->n_outputs && !lw->failed; i++)
        map_tensor(lw, e, g->outputs[i], TMAP_OUTPUT);
    for (int t = 0; t < g->n_tensors && !lw->failed; t++)
        if (lw->tensor[t].placed && !g->tensors[t].is_input && !g->tensors[t].is_output &&
            !(g->tensors[t].is_variable && g->tensors[t].in_streaming_memory))
            map_tensor(lw, e, t, g->tensors[t].is_variable ? TMAP_VARIABLE
                                 : g->tensors[t].data                ? TMAP_WEIGHT
                                                                     : TMAP_ACTIVATION);
    if (!lw->failed)
        lw_streaming_map(lw);
}

bool lw_write_executable(lowering *lw, ipu_exe *e)
{
    map_tensors(lw, e);
    if (lw->phases.n > 1) {
        /* A training step takes a batch: the leading dimension of the
         * model's first input (images, token sequences), on each replica. */
        const graph *g = lw->g;
        if (g->n_inputs && g->tensors[g->inputs[0]].shape.rank)
            lw->phases.samples = (uint64_t)g->tensors[g->inputs[0]].shape.dims[0] * lw->replicas *
                                 (g->micro_batches ? g->micro_batches : 1);
        if (lw->overlap) {
            lw->phases.pipeline_stages = g->pipeline_stages;
            lw->phases.micro_batches = g->micro_batches;
            lw->phases.pipeline_cycles = g->pipeline_cycles;
        }
        size_t size;
        char *text = phases_encode(&lw->phases, &size);
        if (!text || !exe_set_blob(&e->bsp, text, size))
            lw_fail(lw, "out of host memory");
        free(text);
    }
    if (lw->ops.n_ops) {
        uint8_t *blob = NULL;
        size_t size;
        if (!op_map_encode(&lw->ops, &blob, &size) || !exe_set_blob(&e->ops, blob, size))
            lw_fail(lw, "out of host memory");
        free(blob);
    }
    /* Tiles past the last one holding anything only sync: they get no
     * code, and the syncs of the rest do not wait for them. */
    uint32_t used = 1;
    for (uint32_t i = 0; i < lw->program_tiles; i++)
        if (lw->tile[i].n_allocs || lw->tile[i].records.n)
            used = i + 1;
    if (lw->stages > 1)
        used = lw->program_tiles;     /* every stage's tiles take part in the system syncs */
    /* what each tile's records and control program take (the end step and
     * the alignment and read slack of three blocks included), in case one
     * finds no room */
    lw->control_bytes = malloc(((size_t)lw->program_tiles + 1) * sizeof *lw->control_bytes);
    if (!lw->control_bytes)
        return lw_fail(lw, "out of host memory");
    for (uint32_t i = 0; i < lw->program_tiles; i++) {
        uint64_t b = i < used ? (lw->tile[i].steps.n + 3 + lw->tile[i].records.n) * 4 + 3 * (CODELET_READ_SLACK_BYTES + 8) : 0;
        lw->control_bytes[i] = b < UINT32_MAX ? (uint32_t)b : UINT32_MAX - 1;
    }
    lw->control_bytes[lw->program_tiles] = UINT32_MAX;
    for (uint32_t i = 0; i < used && !lw->failed; i++) {
        lw->tile[i].hold = 0;
        if (!close_tile(lw, i) && lw->failed)
            lw->control_no_room = strstr(lw->err, "has no room") != NULL;
    }
    for (uint32_t i = 0; i < used && !lw->failed; i++)
        finish_tile(lw, i, e);
    e->replicas.count = lw->replicas;
    e->replicas.tile_stride = lw->replica_stride;
    e->replicas.input_streams = lw->rep->input_streams;
    e->replicas.output_streams = lw->rep->output_streams;
    char why[256];
    if (!lw->failed && !lw->opts->compact_replicas && !exe_expand_replicas(e, why, sizeof why))
        lw_fail(lw, "%s", why);
    /* The library's symbols, at the same addresses on every tile with code: once. */
    const ipu_exe *img = lw->lib->image;
    for (size_t s = 0; s < img->n_symbols && !lw->failed; s++)
        if (img->symbols[s].global &&
            !exe_add_symbol(e, EXE_EVERY_TILE, img->symbols[s].name, img->symbols[s].addr, img->symbols[s].size,
                            (enum exe_symbol_kind)img->symbols[s].kind, true))
            lw_fail(lw, "out of host memory");
    lw->rep->tiles_used = lw->stages > 1 ? lw->tiles : used;
    lw->rep->replicas = lw->replicas;
    lw->rep->stages = lw->stages;
    if (lw->failed)
        return false;
    uint8_t *blob;
    size_t size;
    if (!tmap_encode(lw->tmap, &blob, &size) || !exe_set_blob(&e->tensors, blob, size))
        lw_fail(lw, "out of host memory");
    free(blob);
    /* The machine it is compiled for, the default of `ipusim run`. */
    blob = NULL;
    if (!lw->failed && (!machine_encode(lw->opts->machine, &blob, &size) || !exe_set_blob(&e->machine, blob, size)))
        lw_fail(lw, "out of host memory");
    free(blob);
    /* The model's name and MACs, for run's useful utilisation: every replica
     * runs the whole graph. */
    model_record mr = { .model_macs = (uint64_t)(graph_model_macs(lw->g) * lw->replicas + 0.5) };
    snprintf(mr.model, sizeof mr.model, "%s", lw->g->source ? lw->g->source : "");
    blob = NULL;
    if (!lw->failed && (!model_record_encode(&mr, &blob, &size) || !exe_set_blob(&e->model, blob, size)))
        lw_fail(lw, "out of host memory");
    free(blob);
    return !lw->failed;
}
