/*
 * lower_exchange.c — the steps of each tile's control program (words for
 * workloads/codelets/supervisor.S: compute sets of six worker records, a
 * supervisor codelet, sends and receives, syncs) and the exchange phase
 * being built: transfers between tiles and from the host, merged into
 * multicasts where one piece goes to several tiles, local copies after
 * the exchange, and the chip (or system) sync ending the phase.
 */
#include <stdlib.h>
#include <string.h>

#include "lower_ops.h"
#include "exchange/exchange.h"
#include "sim/base/hash.h"
#include "workloads/codelets/elementwise.h"
#include "workloads/codelets/rowwise.h"

/* ---- steps --------------------------------------------------------------- */

/* Append a record of `words` words (zero-filled) and return its byte
 * offset in the tile's record area; *rec points at its words (valid until
 * the next record). */
uint32_t lw_new_record(lowering *lw, uint32_t tile, uint32_t words, uint32_t **rec)
{
    ltile *t = &lw->tile[tile];
    size_t at = t->records.n;
    size_t padded = lw_padded_words(words);
    if (!lw_grow((void **)&t->records.w, &t->records.cap, at + padded, sizeof(uint32_t))) {
        lw_fail(lw, "out of host memory");
        *rec = NULL;
        return 0;
    }
    memset(t->records.w + at, 0, padded * sizeof(uint32_t));
    t->records.n += padded;
    t->last_record_words = (uint32_t)padded;
    *rec = t->records.w + at;
    return (uint32_t)(at * 4);
}

static bool lw_patch_here(lowering *lw, uint32_t tile)
{
    ltile *t = &lw->tile[tile];
    if (!lw_grow((void **)&t->patch, &t->cap_patch, t->n_patch + 1, sizeof *t->patch))
        return lw_fail(lw, "out of host memory");
    t->patch[t->n_patch++] = t->steps.n;
    return true;
}

/* The six records just made at rec0 (bytes of them, the last on the tile)
 * when the tile already holds the same words for an earlier compute set:
 * that one's offset, the new ones given back; else rec0, remembered.
 * Worker records and the matmuls' supervisor records (lw_step_call) are
 * read-only, except vtx_maxpool_grad_nhwc_f32's (it keeps its place in
 * them), which are never shared.  Poplar likewise keeps one copy of
 * identical vertex state. */
static uint32_t share_records(lowering *lw, uint32_t tile, uint32_t entry, uint32_t rec0, uint32_t bytes)
{
    ltile *t = &lw->tile[tile];
    if (entry == lw->kernels.vtx_maxpool_grad_nhwc_f32 || lw->pin_records || (size_t)rec0 + bytes != t->records.n * 4)
        return rec0;
    const uint32_t *w = t->records.w + rec0 / 4;
    uint64_t h = hash_fnv1a(w, bytes) ^ bytes;
    if (t->n_shared * 2 >= t->cap_shared) {
        size_t cap = t->cap_shared ? t->cap_shared * 2 : 64;
        shared_records *n = calloc(cap, sizeof *n);
        if (!n) {
            lw_fail(lw, "out of host memory");
            return rec0;
        }
        for (size_t i = 0; i < t->cap_shared; i++)
            if (t->shared[i].bytes) {
                size_t at = (size_t)t->shared[i].hash & (cap - 1);
                while (n[at].bytes)
                    at = (at + 1) & (cap - 1);
                n[at] = t->shared[i];
            }
        free(t->shared);
        t->shared = n;
        t->cap_shared = cap;
    }
    size_t at = (size_t)h & (t->cap_shared - 1);
    for (; t->shared[at].bytes; at = (at + 1) & (t->cap_shared - 1)) {
        const shared_records *e = &t->shared[at];
        if (e->hash == h && e->bytes == bytes && !memcmp(t->records.w + e->off / 4, w, bytes)) {
            t->records.n = rec0 / 4;
            lw->rep->shared_record_bytes += bytes;
            return e->off;
        }
    }
    t->shared[at] = (shared_records){ h, rec0, bytes };
    t->n_shared++;
    return rec0;
}

/* Records of a split codelet (elementwise.h, rowwise.h): one record the
 * six workers share, each finding its part from its context number.  A
 * codelet whose workers' parts lie along one dimension is described by its
 * fields: the count of units (elements, columns), the two pointers that
 * advance by a unit's bytes (out's 2 instead of 4 where the f16 field is
 * set), the fields every worker's record must share, and where CHUNK goes. */
typedef struct split_form {
    uint32_t words, count, ptr[2], f16_field;   /* f16_field: out's unit is 2 bytes when set (else ~0u) */
    uint32_t same[5], n_same, idle_field;       /* idle_field: a 0 there is a worker with nothing (or ~0u) */
    uint32_t split_words;
} split_form;

static const split_form unary_form = {
    UNARY_F32_V_WORDS, UNARY_F32_V_N, { UNARY_F32_V_IN, UNARY_F32_V_OUT }, ~0u,
    { UNARY_F32_V_FN, UNARY_F32_V_A, UNARY_F32_V_B }, 3, ~0u, UNARY_F32_SPLIT_V_WORDS,
};
static const split_form reduce_cols_form = {
    REDUCE_COLS_V_WORDS, REDUCE_COLS_V_COLS, { REDUCE_COLS_V_IN, REDUCE_COLS_V_OUT }, REDUCE_COLS_V_OUT_F16,
    { REDUCE_COLS_V_ROWS, REDUCE_COLS_V_IN_STEP, REDUCE_COLS_V_OP, REDUCE_COLS_V_SCALE, REDUCE_COLS_V_OUT_F16 }, 5,
    REDUCE_COLS_V_ROWS, REDUCE_COLS_SPLIT_V_WORDS,
};

/* Whether the six records at r (padded words apart) are parts that follow
 * one another along one dimension as form f describes (idle workers
 * aside): then the merged record into *merged and true. */
static bool merge_along(const uint32_t *r, uint32_t padded, const split_form *f, uint32_t *merged)
{
    const uint32_t *first = NULL, *prev = NULL;
    uint64_t units = 0;
    for (int k = 0; k < CODELET_WORKERS; k++) {
        const uint32_t *w = r + (size_t)k * padded;
        if (w[f->count] == 0 || (f->idle_field != ~0u && w[f->idle_field] == 0))
            continue;
        if (prev) {
            uint64_t done = prev[f->count];
            uint64_t out_unit = f->f16_field != ~0u && prev[f->f16_field] ? 2 : 4;
            if ((uint64_t)w[f->ptr[0]] != prev[f->ptr[0]] + done * 4 ||
                (uint64_t)w[f->ptr[1]] != prev[f->ptr[1]] + done * out_unit)
                return false;
            for (uint32_t q = 0; q < f->n_same; q++)
                if (w[f->same[q]] != prev[f->same[q]])
                    return false;
        } else {
            first = w;
        }
        units += w[f->count];
        prev = w;
    }
    if (units > UINT32_MAX / 4)
        return false;
    memcpy(merged, first ? first : r, f->words * sizeof *merged);
    merged[f->count] = (uint32_t)units;
    /* even units a worker: each worker's part starts 8-byte aligned */
    merged[f->words] = (uint32_t)(((units + 1) / 2 + CODELET_WORKERS - 1) / CODELET_WORKERS * 2);
    return true;
}

/* The same for vtx_binary_f32: parts along one row (each worker's record
 * one row, in1 advancing by its column step), or consecutive rows of one
 * geometry; *as_rows says which. */
static bool merge_binary(const uint32_t *r, uint32_t padded, uint32_t *merged, bool *as_rows)
{
    bool along = true, rows_ok = true;
    const uint32_t *first = NULL, *prev = NULL;
    uint64_t elements = 0, rows = 0;
    for (int k = 0; k < CODELET_WORKERS; k++) {
        const uint32_t *w = r + (size_t)k * padded;
        if (w[BINARY_F32_V_ROWS] == 0 || w[BINARY_F32_V_COLS] == 0)
            continue;
        if (w[BINARY_F32_V_ROWS] != 1)
            along = false;
        if (prev) {
            uint64_t done = prev[BINARY_F32_V_COLS], done_rows = prev[BINARY_F32_V_ROWS];
            uint32_t col_step = prev[BINARY_F32_V_IN1_COL_STEP], row_step = prev[BINARY_F32_V_ROW_STEP];
            if (w[BINARY_F32_V_OP] != prev[BINARY_F32_V_OP] || w[BINARY_F32_V_IN1_COL_STEP] != col_step)
                return false;
            along = along && (uint64_t)w[BINARY_F32_V_IN0] == prev[BINARY_F32_V_IN0] + done * 4 &&
                    (uint64_t)w[BINARY_F32_V_OUT] == prev[BINARY_F32_V_OUT] + done * 4 &&
                    (uint64_t)w[BINARY_F32_V_IN1] == prev[BINARY_F32_V_IN1] + done * col_step;
            rows_ok = rows_ok && w[BINARY_F32_V_COLS] == prev[BINARY_F32_V_COLS] &&
                      w[BINARY_F32_V_ROW_STEP] == row_step &&
                      w[BINARY_F32_V_IN1_ROW_STEP] == prev[BINARY_F32_V_IN1_ROW_STEP] &&
                      (uint64_t)w[BINARY_F32_V_IN0] == prev[BINARY_F32_V_IN0] + done_rows * row_step &&
                      (uint64_t)w[BINARY_F32_V_OUT] == prev[BINARY_F32_V_OUT] + done_rows * row_step &&
                      (uint64_t)w[BINARY_F32_V_IN1] ==
                          prev[BINARY_F32_V_IN1] + done_rows * prev[BINARY_F32_V_IN1_ROW_STEP];
            if (!along && !rows_ok)
                return false;
        } else {
            first = w;
        }
        elements += w[BINARY_F32_V_COLS];
        rows += w[BINARY_F32_V_ROWS];
        prev = w;
    }
    if (elements > UINT32_MAX / 4)
        return false;
    memcpy(merged, first ? first : r, BINARY_F32_V_WORDS * sizeof *merged);
    *as_rows = !along;
    if (along) {
        merged[BINARY_F32_V_COLS] = (uint32_t)elements;
        merged[BINARY_F32_V_ROWS] = elements ? 1 : 0;
        merged[BINARY_F32_V_ROW_STEP] = (uint32_t)elements * 4;
        merged[BINARY_F32_V_IN1_ROW_STEP] = 0;
        merged[BINARY_F32_SPLIT_V_CHUNK] =
            (uint32_t)(((elements + 1) / 2 + CODELET_WORKERS - 1) / CODELET_WORKERS * 2);
    } else {
        merged[BINARY_F32_V_ROWS] = (uint32_t)rows;
        merged[BINARY_F32_SPLIT_V_CHUNK] = (uint32_t)((rows + CODELET_WORKERS - 1) / CODELET_WORKERS);
    }
    return true;
}

/* The six records of a compute set at rec0 (the tile's last), merged into
 * one record of the entry's split codelet where the workers' parts allow
 * (merge_along, merge_binary).  Returns the split codelet's entry and sets
 * *split_words, or 0 (the records left as they are). */
static uint32_t merge_worker_records(lowering *lw, uint32_t tile, uint32_t entry, uint32_t rec0, uint32_t words,
                                     uint32_t *split_words)
{
    const kernel_symbols *ks = &lw->kernels;
    ltile *t = &lw->tile[tile];
    uint32_t padded = lw_padded_words(words);
    if ((size_t)rec0 / 4 + (size_t)padded * CODELET_WORKERS != t->records.n)
        return 0;
    const uint32_t *r = t->records.w + rec0 / 4;
    uint32_t merged[16], n, split;
    bool as_rows;
    if (entry == ks->vtx_binary_f32 && merge_binary(r, padded, merged, &as_rows)) {
        n = BINARY_F32_SPLIT_V_WORDS;
        split = as_rows ? ks->vtx_binary_f32_split_rows : ks->vtx_binary_f32_split;
    } else if (entry == ks->vtx_unary_f32 && merge_along(r, padded, &unary_form, merged)) {
        n = unary_form.split_words;
        split = ks->vtx_unary_f32_split;
    } else if (entry == ks->vtx_reduce_cols_f32 && merge_along(r, padded, &reduce_cols_form, merged)) {
        n = reduce_cols_form.split_words;
        split = ks->vtx_reduce_cols_f32_split;
    } else {
        return 0;
    }
    memset(t->records.w + rec0 / 4, 0, (size_t)lw_padded_words(n) * sizeof *t->records.w);
    memcpy(t->records.w + rec0 / 4, merged, n * sizeof *merged);
    t->records.n = rec0 / 4 + lw_padded_words(n);
    lw->rep->merged_record_bytes += (uint64_t)(padded * CODELET_WORKERS - lw_padded_words(n)) * 4;
    *split_words = n;
    return split;
}

/* In a pipeline cycle each stage's supersteps are its own: the op is
 * noted for the stage being built; elsewhere in a pipelined step, for
 * every stage (op_map.h). */
static void note_op(lowering *lw, int which, int32_t op)
{
    uint32_t first = lw->in_cycle ? lw->cycle_stage : 0;
    uint32_t last = lw->in_cycle ? lw->cycle_stage : lw->overlap ? lw->stages - 1 : 0;
    for (uint32_t s = first; s <= last; s++)
        if (!op_map_note_stage(&lw->ops, s, lw->syncs, which, op)) {
            lw_fail(lw, "out of host memory");
            return;
        }
}

/* The superstep being built has compute: the first op to give it a
 * compute set owns its compute cycles (sim/program/op_map.h). */
static void note_compute(lowering *lw)
{
    if (lw->cur_op >= 0 &&
        op_map_owner_stage(&lw->ops, lw->in_cycle ? lw->cycle_stage : 0, lw->syncs, OP_MAP_COMPUTE) < 0)
        note_op(lw, OP_MAP_COMPUTE, lw->cur_op);
}

void lw_count_sync(lowering *lw)
{
    note_op(lw, OP_MAP_EXCHANGE, lw->cur_op);
    lw->syncs++;
}

/* runall of `entry` on the six records of lw_six_records at offset rec0,
 * each of record_words words (the tile's earlier copy of the same records
 * when it has one). */
bool lw_step_run(lowering *lw, uint32_t tile, uint32_t entry, uint32_t rec0, uint32_t record_words)
{
    ltile *t = &lw->tile[tile];
    uint32_t rec_bytes = lw_padded_words(record_words) * 4, all_bytes = rec_bytes * CODELET_WORKERS, split_words;
    uint32_t split = merge_worker_records(lw, tile, entry, rec0, record_words, &split_words);
    if (split) {
        entry = split;
        rec_bytes = 0;                /* the six workers start on the one record */
        all_bytes = lw_padded_words(split_words) * 4;
    }
    rec0 = share_records(lw, tile, entry, rec0, all_bytes);
    note_compute(lw);
    lw_push_word(lw, &t->steps, lw->kernels.ctl_run);
    lw_push_word(lw, &t->steps, entry);
    lw_patch_here(lw, tile);
    lw_push_word(lw, &t->steps, rec0);
    lw_push_word(lw, &t->steps, rec_bytes);
    lw->rep->compute_sets++;
    return !lw->failed;
}

bool lw_step_call(lowering *lw, uint32_t tile, uint32_t entry, uint32_t rec)
{
    ltile *t = &lw->tile[tile];
    /* the record made last: shared with an earlier one alike */
    if (rec / 4 + t->last_record_words == t->records.n)
        rec = share_records(lw, tile, entry, rec, t->last_record_words * 4);
    note_compute(lw);
    lw_push_word(lw, &t->steps, lw->kernels.ctl_call);
    lw_push_word(lw, &t->steps, entry);
    lw_patch_here(lw, tile);
    lw_push_word(lw, &t->steps, rec);
    lw->rep->compute_sets++;
    return !lw->failed;
}

/* Six records of `words` words for one compute set; returns the offset of
 * the first, and recs[k] the words of worker k's. */
uint32_t lw_six_records(lowering *lw, uint32_t tile, uint32_t words, uint32_t *recs[CODELET_WORKERS])
{
    uint32_t padded = lw_padded_words(words);
    uint32_t *all;
    uint32_t off = lw_new_record(lw, tile, padded * CODELET_WORKERS, &all);
    for (int k = 0; k < CODELET_WORKERS; k++)
        recs[k] = all ? all + (size_t)k * padded : NULL;
    return off;
}

/* ---- exchange ------------------------------------------------------------ */

bool lw_add_transfer(lowering *lw, uint32_t from, uint32_t src_addr, uint32_t to, uint32_t dst_addr,
                         uint32_t bytes)
{
    ltile *s = &lw->tile[from], *r = &lw->tile[to];
    /* The rest of the last transfer between the two tiles (the next bytes
     * on both sides, as a row of a block fetched a row at a time): one
     * transfer, one step on each side. */
    if (s->n_sends && r->n_recvs) {
        xfer *ps = &s->sends[s->n_sends - 1], *pr = &r->recvs[r->n_recvs - 1];
        if (ps->peer == to && ps->mate == r->n_recvs - 1 && pr->peer == from && pr->mate == s->n_sends - 1 &&
            ps->group < 0 && pr->group < 0 && ps->bytes % 4 == 0 && ps->addr + ps->bytes == src_addr &&
            pr->addr + pr->bytes == dst_addr && ps->bytes + (uint64_t)bytes <= LW_TRANSFER_MAX_BYTES) {
            ps->bytes += bytes;
            pr->bytes += bytes;
            lw->rep->exchange_bytes += bytes;
            lw->phase_bytes += bytes;
            return true;
        }
    }
    if (!lw_grow((void **)&s->sends, &s->cap_sends, s->n_sends + 1, sizeof *s->sends) ||
        !lw_grow((void **)&r->recvs, &r->cap_recvs, r->n_recvs + 1, sizeof *r->recvs))
        return lw_fail(lw, "out of host memory");
    s->sends[s->n_sends++] = (xfer){ src_addr, bytes, to, (uint32_t)r->n_recvs, -1, 0, true };
    r->recvs[r->n_recvs++] = (xfer){ dst_addr, bytes, from, (uint32_t)(s->n_sends - 1), -1, 0, true };
    lw->phase_has_transfers = true;
    lw->rep->exchange_bytes += bytes;
    lw->phase_bytes += bytes;
    return true;
}

bool lw_note_peer(lowering *lw, uint32_t tile, enum exe_reloc_kind kind)
{
    return lw_note_rotated(lw, tile, -1, kind, 0, 0);
}

bool lw_push_send(lowering *lw, uint32_t tile, uint32_t addr, uint32_t bytes, uint32_t endpoint,
                  enum exe_reloc_kind kind)
{
    word_vec *steps = &lw->tile[tile].steps;
    lw_push_word(lw, steps, lw->kernels.ctl_send);
    lw_push_word(lw, steps, addr);
    lw_push_word(lw, steps, bytes);
    lw_push_word(lw, steps, endpoint);
    return lw_note_peer(lw, tile, kind) && !lw->failed;
}

bool lw_note_rotated(lowering *lw, uint32_t tile, int64_t record_offset, enum exe_reloc_kind kind, uint32_t shift,
                     uint32_t slice_bytes)
{
    ltile *t = &lw->tile[tile];
    struct peer_ref **v = record_offset < 0 ? &t->peers : &t->record_words;
    size_t *n = record_offset < 0 ? &t->n_peers : &t->n_record_words;
    size_t *cap = record_offset < 0 ? &t->cap_peers : &t->cap_record_words;
    if (!lw_grow((void **)v, cap, *n + 1, sizeof **v))
        return lw_fail(lw, "out of host memory");
    (*v)[(*n)++] = (struct peer_ref){ .word = record_offset < 0 ? t->steps.n - 1 : (size_t)record_offset,
                                      .kind = (uint8_t)kind, .shift = (uint16_t)shift, .slice_bytes = slice_bytes };
    return true;
}

/* A ring transfer's words: the single transfer's step, its address (a
 * slice noted), its bytes and the neighbour's tile (noted). */
static void ring_words(lowering *lw, uint32_t i, const lw_ring_xfer *x)
{
    ltile *t = &lw->tile[i];
    lw_push_word(lw, &t->steps, x->send ? lw->kernels.ctl_send : lw->kernels.ctl_recv);
    lw_push_word(lw, &t->steps, x->addr);
    if (x->slice_shift >= 0)
        lw_note_rotated(lw, i, -1, EXE_RELOC_SLICE, (uint32_t)x->slice_shift, x->slice_bytes);
    lw_push_word(lw, &t->steps, (x->bytes + 3u) & ~3u);
    lw_push_word(lw, &t->steps, lw_global_tile(lw, i) + x->peer_shift * lw->replica_stride);
    lw_note_rotated(lw, i, -1, EXE_RELOC_RING, x->peer_shift, 0);
}

bool lw_sync_all(lowering *lw, uint32_t step)
{
    if (!lw_end_phase(lw))
        return false;
    for (uint32_t i = lw->scope_lo; i < lw->scope_hi && !lw->failed; i++)
        lw_push_word(lw, &lw->tile[i].steps, step);
    lw_count_sync(lw);
    return !lw->failed;
}

bool lw_ring_phase(lowering *lw, const lw_ring_xfer *x, size_t per_tile)
{
    if (lw->phase_has_transfers && !lw_end_phase(lw))
        return false;
    for (uint32_t i = 0; i < lw->program_tiles && !lw->failed; i++) {
        const lw_ring_xfer *own = x + (size_t)i * per_tile;
        for (int send = 0; send < 2; send++)
            for (size_t k = 0; k < per_tile; k++)
                if (own[k].bytes && own[k].send == (send != 0)) {
                    ring_words(lw, i, &own[k]);
                    if (!send)
                        lw->rep->exchange_bytes += own[k].bytes;
                }
        lw_push_word(lw, &lw->tile[i].steps, lw->kernels.ctl_sync_system);
    }
    lw->rep->exchange_phases++;
    lw_count_sync(lw);
    return !lw->failed;
}

/* A receive from the host (endpoint: the stream) or from streaming memory
 * (XCH_STREAM_MEMORY | the program tile whose buffer it is). */
bool lw_add_host_receive(lowering *lw, uint32_t tile, uint32_t addr, uint32_t bytes, uint32_t endpoint)
{
    ltile *r = &lw->tile[tile];
    if (!lw_grow((void **)&r->recvs, &r->cap_recvs, r->n_recvs + 1, sizeof *r->recvs))
        return lw_fail(lw, "out of host memory");
    r->recvs[r->n_recvs++] = (xfer){ addr, bytes, endpoint, 0, -1, 0, true };
    lw->phase_has_transfers = true;
    return true;
}

bool lw_add_local_copy(lowering *lw, uint32_t tile, uint32_t src, uint32_t dst, uint32_t bytes)
{
    ltile *t = &lw->tile[tile];
    uint32_t *last = t->copies.n ? t->copies.w + t->copies.n - 3 : NULL;
    if (last && last[2] % 4 == 0 && last[0] + last[2] == src && last[1] + last[2] == dst &&
        last[2] + (uint64_t)bytes <= LW_TRANSFER_MAX_BYTES) {
        last[2] += bytes;      /* the next bytes of the last copy */
        return true;
    }
    lw_push_word(lw, &t->copies, src);
    lw_push_word(lw, &t->copies, dst);
    lw_push_word(lw, &t->copies, bytes);
    return !lw->failed;
}

/* The copies a tile owes itself, six at a time.  A copy longer than a
 * sixth of them all (and than LW_COPY_PIECE_MIN_BYTES, or when there are
 * fewer copies than workers LW_COPY_FEW_PIECE_MIN_BYTES) is cut into pieces
 * of that length (a multiple of 8 bytes, so every piece keeps its copy's
 * 8-byte phases and loop), so that one large copy is shared by the six
 * workers instead of taking one. */
static bool lw_flush_copies(lowering *lw, uint32_t tile)
{
    ltile *t = &lw->tile[tile];
    const size_t n = t->copies.n / 3;
    uint64_t total = 0;
    for (size_t k = 0; k < n; k++)
        total += t->copies.w[k * 3 + 2];
    uint64_t per = ALIGN8((total + CODELET_WORKERS - 1) / CODELET_WORKERS);
    const uint64_t min = n < CODELET_WORKERS ? LW_COPY_FEW_PIECE_MIN_BYTES : LW_COPY_PIECE_MIN_BYTES;
    per = per < min ? min : per;
    size_t k = 0;
    uint32_t src = 0, dst = 0, left = 0;
    while (!lw->failed) {
        uint32_t *recs[CODELET_WORKERS];
        uint32_t pieces[CODELET_WORKERS][3];
        int w = 0;
        for (; w < CODELET_WORKERS; w++) {
            if (!left) {
                if (k == n)
                    break;
                const uint32_t *c = t->copies.w + k++ * 3;
                src = c[0], dst = c[1], left = c[2];
            }
            uint32_t bytes = left > per ? (uint32_t)per : left;
            pieces[w][0] = src, pieces[w][1] = dst, pieces[w][2] = bytes;
            src += bytes, dst += bytes, left -= bytes;
        }
        if (!w)
            break;
        uint32_t off = lw_six_records(lw, tile, KERNEL_COPY_WORDS, recs);
        if (lw->failed)
            return false;
        for (int q = 0; q < w; q++)
            kernel_copy_record(recs[q], pieces[q][0], pieces[q][1], pieces[q][2]);
        lw_step_run(lw, tile, lw->kernels.vtx_copy, off, KERNEL_COPY_WORDS);
    }
    t->copies.n = 0;
    return !lw->failed;
}

/* When every receiver of a tile's sends in this phase gets the same
 * pieces in the same order (a grid row's rows of A, a bias everyone
 * needs), the sends can be broadcasts: the data leave the tile once and
 * every tile with a matching receive takes them (exchange.h).  Returns the
 * number of distinct pieces (the first `groups` sends are them, in order),
 * or 0 when the sends must stay point to point. */
static size_t broadcast_groups(const ltile *t)
{
    if (t->n_sends < 2)
        return 0;
    /* The pieces are the sends to the first receiver, in order. */
    uint32_t first = t->sends[0].peer;
    size_t groups = 0;
    while (groups < t->n_sends && t->sends[groups].peer == first)
        groups++;
    if (t->n_sends % groups)
        return 0;
    for (size_t k = groups; k < t->n_sends; k++) {
        const xfer *a = &t->sends[k], *b = &t->sends[k % groups];
        if (a->addr != b->addr || a->bytes != b->bytes)
            return 0;
        if (k % groups && a->peer != t->sends[k - 1].peer)
            return 0;
        if (!(k % groups)) {
            /* A new receiver: not one seen before. */
            for (size_t j = 0; j < k; j += groups)
                if (t->sends[j].peer == a->peer)
                    return 0;
        }
    }
    return t->n_sends / groups > 1 ? groups : 0;
}

/* Multicast groups of sender tile i (exchange.h): a piece (an address and
 * size) sent to several tiles, each once, goes out once to a group of the
 * tiles that take it — one group per distinct set of receivers, at most
 * XCH_MULTICAST_GROUPS; other pieces stay point to point.  Marks the sends
 * (group, order, emit) and their receives on the other tiles. */
static bool multicast_groups(lowering *lw, uint32_t i)
{
    ltile *t = &lw->tile[i];
    size_t n = t->n_sends;
    size_t *idx = malloc((n + 1) * sizeof *idx);
    uint32_t *set_start = malloc(XCH_MULTICAST_GROUPS * sizeof *set_start);
    uint32_t *set_len = malloc(XCH_MULTICAST_GROUPS * sizeof *set_len);
    uint32_t *peers = malloc((n + 1) * sizeof *peers);
    if (!idx || !set_start || !set_len || !peers) {
        free(idx); free(set_start); free(set_len); free(peers);
        return lw_fail(lw, "out of host memory");
    }
    for (size_t k = 0; k < n; k++)
        idx[k] = k;
    /* Sort by (address, bytes, receiver, position): a piece's sends are
     * together, its receivers in order. */
    const xfer *sv = t->sends;
    {
        /* Bottom-up merge sort (the comparison needs the tile's sends). */
        size_t *tmp = malloc((n + 1) * sizeof *tmp);
        if (!tmp) {
            free(idx); free(set_start); free(set_len); free(peers);
            return lw_fail(lw, "out of host memory");
        }
        for (size_t w = 1; w < n; w *= 2) {
            for (size_t lo = 0; lo < n; lo += 2 * w) {
                size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
                size_t a = lo, b = mid, o = lo;
                while (a < mid || b < hi) {
                    bool take_a = b >= hi;
                    if (a < mid && b < hi) {
                        const xfer *x = &sv[idx[a]], *y = &sv[idx[b]];
                        take_a = x->addr != y->addr ? x->addr < y->addr
                               : x->bytes != y->bytes ? x->bytes < y->bytes
                               : x->peer != y->peer ? x->peer < y->peer : idx[a] < idx[b];
                    }
                    tmp[o++] = take_a ? idx[a++] : idx[b++];
                }
            }
            memcpy(idx, tmp, n * sizeof *idx);
        }
        free(tmp);
    }
    uint32_t groups = 0, n_peers = 0;
    for (size_t a = 0; a < n;) {
        size_t b = a + 1;
        while (b < n && sv[idx[b]].addr == sv[idx[a]].addr && sv[idx[b]].bytes == sv[idx[a]].bytes)
            b++;
        bool distinct = b - a >= 2;
        for (size_t k = a + 1; k < b && distinct; k++)
            distinct = sv[idx[k]].peer != sv[idx[k - 1]].peer;
        if (distinct) {
            /* The group of this set of receivers: an existing one or a new one. */
            uint32_t len = (uint32_t)(b - a), g = 0;
            for (; g < groups; g++) {
                if (set_len[g] != len)
                    continue;
                size_t k = 0;
                while (k < len && peers[set_start[g] + k] == sv[idx[a + k]].peer)
                    k++;
                if (k == len)
                    break;
            }
            if (g == groups && groups < XCH_MULTICAST_GROUPS) {
                set_start[g] = n_peers;
                set_len[g] = len;
                for (size_t k = a; k < b; k++)
                    peers[n_peers++] = sv[idx[k]].peer;
                groups++;
            }
            if (g < groups) {
                size_t first = idx[a];
                for (size_t k = a; k < b; k++)
                    if (idx[k] < first)
                        first = idx[k];
                for (size_t k = a; k < b; k++) {
                    xfer *x = &t->sends[idx[k]];
                    x->group = (int32_t)g;
                    x->order = (uint32_t)first;
                    x->emit = idx[k] == first;
                    xfer *r = &lw->tile[x->peer].recvs[x->mate];
                    r->group = (int32_t)g;
                    r->order = (uint32_t)first;
                }
            }
        }
        a = b;
    }
    free(idx);
    free(set_start);
    free(set_len);
    free(peers);
    return true;
}

/* Receives of a tile in the order they are posted: point to point and
 * host ones as they came, then multicast ones by (sender, group, the
 * sender's order), the order the senders issue them. */
static int cmp_multicast_recv(const void *a, const void *b)
{
    const xfer *x = *(const xfer *const *)a, *y = *(const xfer *const *)b;
    if (x->peer != y->peer) return x->peer < y->peer ? -1 : 1;
    if (x->group != y->group) return x->group < y->group ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* The endpoint word of receive rv on tile i, noted for the replicas. */
static uint32_t receive_endpoint(lowering *lw, const xfer *rv, enum exe_reloc_kind *kind)
{
    if (rv->group >= 0) {
        *kind = EXE_RELOC_TILE;
        return xch_multicast_recv((uint32_t)rv->group, lw_global_tile(lw, rv->peer));
    }
    bool host = rv->peer & XCH_HOST;
    *kind = host ? EXE_RELOC_HOST_IN : EXE_RELOC_TILE;
    if (rv->peer & XCH_STREAM_MEMORY)     /* the tile's own buffer: a replica's are its tiles' */
        return XCH_STREAM_MEMORY | lw_global_tile(lw, rv->peer & XCH_ENDPOINT_INDEX);
    return host ? rv->peer : lw_global_tile(lw, rv->peer);
}

/* ---- the steps of a phase's transfers ------------------------------------- */

/* A tile's transfers of one phase are written as steps (supervisor.S) in
 * the fewest words, in three kinds:
 *   - rows: transfers to or from one endpoint, of one size, their blocks a
 *     constant stride apart (the rows of a block one tile sends another),
 *     one ctl_send_rows / ctl_recv_rows of ROWS_STEP_WORDS words;
 *   - runs: transfers of one size into or from consecutive blocks, an
 *     endpoint each (a block gathered a row a tile), one ctl_recvs /
 *     ctl_sends of 4 words and a word an endpoint, or ctl_recvs16 /
 *     ctl_sends16 with half a word an endpoint where every endpoint of
 *     the run (renumbered for the last replica) is below 65536, or
 *     ctl_recvs16_group where they are the receives of multicast groups
 *     whose bits above the half (the group's) are the same, a base word
 *     of the step;
 *   - single transfers, 4 words each, or two words each in a list of
 *     them (ctl_recv_list / ctl_send_list: singles one after another,
 *     each of fewer than 65536 bytes, its endpoint a half word; the
 *     _group forms with a base word the list's endpoints share above
 *     their halves, a multicast group's bits).
 * The plain steps (runs and singles) are found first; a chain of rows
 * replaces its transfers where it takes fewer words than their share of
 * the plain steps.  The exchange matches the i-th send from one tile to
 * another with the i-th receive there from that tile (exchange.h), so a
 * chain holds an endpoint's transfers in their order, and a run of plain
 * steps does not reach past the start of a chain. */
#define ROWS_STEP_WORDS 6u
#define PLAIN_STEP_WORDS 4u
#define SHARE_UNIT 64u                /* shares of a word (find_chains) */

/* One transfer of the phase on a tile, in the order they are issued. */
typedef struct step_item {
    const xfer *x;
    uint32_t endpoint;
    enum exe_reloc_kind kind;
    bool host;                        /* from the host: never in rows or runs */
    bool note;                        /* the endpoint is renumbered for replicas */
    bool narrow;                      /* it fits half a word in every replica ... */
    uint32_t base;                    /* ... above these bits (a multicast group's; 0: a tile) */
} step_item;

/* Whether the low half of item s's endpoint stays below 65536 in every
 * replica (only tiles' endpoints are renumbered, by adding to the word),
 * *base set to the bits above it. */
static bool endpoint_half(const lowering *lw, const step_item *s, uint32_t *base)
{
    uint64_t top = s->endpoint & 0xffffu;
    if (s->note && lw->replicas > 1)
        top += (uint64_t)(lw->replicas - 1) * lw->replica_stride;
    *base = s->endpoint & ~0xffffu;
    return top <= 0xffffu;
}

/* Whether item s's endpoint takes half a word in a run, s->base set to
 * the bits above it: 0 for a tile (below 65536 in every replica), a
 * multicast group's bits for its receive (XCH_MULTICAST | g << 17 |
 * sender: the sender's tile renumbered) where `group` allows it. */
static bool narrow_endpoint(const lowering *lw, step_item *s, bool group)
{
    s->base = 0;
    if (s->host || s->kind != EXE_RELOC_TILE)
        return false;
    if (group && s->endpoint != XCH_BROADCAST && (s->endpoint & XCH_MULTICAST))
        return endpoint_half(lw, s, &s->base);
    uint32_t base;
    return endpoint_half(lw, s, &base) && !base;
}

/* Whether a run of m transfers (items at[0 .. m)) takes half a word an
 * endpoint: two or more, every endpoint narrow above the same base. */
static bool run_narrow(const step_item *it, const size_t *at, size_t m)
{
    bool narrow = m > 1;
    for (size_t q = 0; q < m && narrow; q++)
        narrow = it[at[q]].narrow && it[at[q]].base == it[at[0]].base;
    return narrow;
}

static uint32_t padded_bytes(const xfer *x) { return (x->bytes + 3u) & ~3u; }

/* The plain run from item k: items k .. of one size into consecutive
 * blocks (not host ones), among those not in a chain, up to the next
 * chain's start (chain[j] set at a chain's first item, member[j] at all of
 * its items; both NULL: none).  Returns its length; at[] its items. */
static size_t plain_run(const step_item *it, size_t n, size_t k, const size_t *chain, const bool *member,
                        size_t *at)
{
    size_t m = 1;
    at[0] = k;
    if (it[k].host)
        return 1;
    uint32_t bytes = padded_bytes(it[k].x), end = it[k].x->addr + bytes;
    for (size_t j = k + 1; j < n; j++) {
        if (chain && chain[j])
            break;
        if (member && member[j])
            continue;
        if (it[j].host || padded_bytes(it[j].x) != bytes || it[j].x->addr != end)
            break;
        at[m++] = j;
        end += bytes;
    }
    return m;
}

/* share[k]: the words item k takes in the plain steps (a single's 4, a
 * run's 4 + n shared by its n transfers), in 1/SHARE_UNIT words; at[]
 * room for n items.  A run is counted in its wide form even where its
 * endpoints will take half a word each: a chain of rows costs three
 * supervisor issues a row where a run costs 4.5 or 5 a block, so rows are
 * kept wherever they saved words over the wide run. */
static void plain_shares(const step_item *it, size_t n, uint64_t *share, size_t *at)
{
    for (size_t k = 0; k < n;) {
        size_t m = plain_run(it, n, k, NULL, NULL, at);
        uint64_t words = m == 1 ? PLAIN_STEP_WORDS : PLAIN_STEP_WORDS + (uint64_t)m;
        for (size_t q = 0; q < m; q++)
            share[at[q]] = words * SHARE_UNIT / m;
        k = at[m - 1] + 1;
    }
}

/* The chains of rows: chain[k] = its length at a chain's first item
 * (0 elsewhere), next[k] the chain's item after k, member[k] for every
 * item of one.  A chain takes an endpoint's next transfers while they
 * have one size and a constant stride; with adjacent, only transfers
 * next to each other in the order (sends: the order they leave in is kept
 * as planned). */
static void find_chains(const step_item *it, size_t n, bool adjacent, size_t *chain, size_t *next, bool *member,
                        size_t *at)
{
    uint64_t *share = malloc((n + 1) * sizeof *share);
    size_t *same = malloc((n + 1) * sizeof *same);      /* the next item of the same endpoint (n: none) */
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    size_t *seen = malloc(cap * sizeof *seen);          /* endpoint -> its latest item, open addressing */
    if (!share || !same || !seen) {
        free(share); free(same); free(seen);
        return;                       /* plain steps only */
    }
    plain_shares(it, n, share, at);
    for (size_t k = 0; k < cap; k++)
        seen[k] = n;
    for (size_t k = n; k-- > 0;) {
        same[k] = n;
        if (it[k].host)
            continue;
        size_t h = (size_t)(it[k].endpoint * 2654435761u) & (cap - 1);
        while (seen[h] != n && it[seen[h]].endpoint != it[k].endpoint)
            h = (h + 1) & (cap - 1);
        same[k] = seen[h];
        seen[h] = k;
    }
    for (size_t a = 0; a < n; a++) {
        if (member[a] || it[a].host)
            continue;
        uint32_t bytes = padded_bytes(it[a].x);
        uint64_t words = share[a];
        size_t len = 1, last = a;
        int64_t stride = 0;
        for (size_t b = same[a]; b < n; b = same[b]) {
            if (adjacent && b != last + 1)
                break;
            int64_t d = (int64_t)it[b].x->addr - (int64_t)it[last].x->addr;
            if (padded_bytes(it[b].x) != bytes || (len > 1 && d != stride) || d < INT32_MIN || d > INT32_MAX)
                break;
            stride = d;
            next[last] = b;
            last = b;
            words += share[b];
            len++;
        }
        if (len < 2 || words <= (uint64_t)ROWS_STEP_WORDS * SHARE_UNIT)
            continue;
        chain[a] = len;
        for (size_t k = a, q = 0; q < len; q++, k = next[k])
            member[k] = true;
    }
    free(share);
    free(same);
    free(seen);
}

/* The handlers of one direction's steps (supervisor.S). */
typedef struct step_handlers {
    uint32_t rows, run, run16;
    uint32_t run16_group;             /* receives only (0 for sends) */
    uint32_t list, list_group, single;
} step_handlers;

/* Whether item s may be in a list: its endpoint base | a half word (in
 * every replica), *base set. */
static bool list_item(const lowering *lw, const step_item *s, uint32_t *base)
{
    if (s->host || s->kind != EXE_RELOC_TILE || s->endpoint == XCH_BROADCAST || padded_bytes(s->x) > 0xffffu)
        return false;
    return endpoint_half(lw, s, base);
}

/* The single transfers that follow single item k in the order the steps
 * are written, one list with it (at most 65536): their items into lst[],
 * their number returned (1: k alone); look[] room for n items. */
static size_t list_run(const lowering *lw, const step_item *it, size_t n, size_t k, const size_t *chain,
                       const bool *member, size_t *look, size_t *lst)
{
    uint32_t base, b;
    size_t m = 0;
    if (!list_item(lw, &it[k], &base))
        return 1;
    lst[m++] = k;
    for (size_t j = k + 1; j < n && m < 65536; j++) {
        if (member[j] && !chain[j])
            continue;                 /* in a chain written before */
        if (chain[j] || plain_run(it, n, j, chain, member, look) != 1 || !list_item(lw, &it[j], &b) || b != base)
            break;
        lst[m++] = j;
    }
    return m;
}

/* The steps of tile i's transfers it[0 .. n). */
static void emit_steps(lowering *lw, uint32_t i, const step_item *it, size_t n, bool adjacent, const step_handlers *h)
{
    ltile *t = &lw->tile[i];
    size_t *chain = calloc(n + 1, sizeof *chain), *next = calloc(n + 1, sizeof *next);
    size_t *at = malloc((n + 1) * sizeof *at), *lst = malloc((n + 1) * sizeof *lst);
    size_t *look = malloc((n + 1) * sizeof *look);
    bool *member = calloc(n + 1, sizeof *member);
    if (!chain || !next || !member || !at || !lst || !look) {
        free(chain); free(next); free(member); free(at); free(lst); free(look);
        lw_fail(lw, "out of host memory");
        return;
    }
    find_chains(it, n, adjacent, chain, next, member, at);
    for (size_t k = 0; k < n && !lw->failed; k++) {
        if (chain[k]) {
            const xfer *x1 = it[next[k]].x;
            lw_push_word(lw, &t->steps, h->rows);
            lw_push_word(lw, &t->steps, it[k].x->addr);
            lw_push_word(lw, &t->steps, padded_bytes(it[k].x));
            lw_push_word(lw, &t->steps, x1->addr - it[k].x->addr);
            lw_push_word(lw, &t->steps, (uint32_t)(chain[k] - 1));
            lw_push_word(lw, &t->steps, it[k].endpoint);
            if (it[k].note)
                lw_note_peer(lw, i, it[k].kind);
            continue;
        }
        if (member[k])
            continue;
        size_t m = plain_run(it, n, k, chain, member, at);
        const size_t listed = m == 1 ? list_run(lw, it, n, k, chain, member, look, lst) : 0;
        if (listed > 1) {
            uint32_t base = 0;
            list_item(lw, &it[k], &base);
            lw_push_word(lw, &t->steps, base ? h->list_group : h->list);
            lw_push_word(lw, &t->steps, (uint32_t)(listed - 1));
            if (base)
                lw_push_word(lw, &t->steps, base);
            for (size_t q = 0; q < listed; q++) {
                const step_item *s = &it[lst[q]];
                lw_push_word(lw, &t->steps, s->x->addr);
                lw_push_word(lw, &t->steps, padded_bytes(s->x) | (s->endpoint & 0xffffu) << 16);
                if (s->note)
                    lw_note_peer(lw, i, EXE_RELOC_TILE_HIGH);
            }
            k = lst[listed - 1];
            continue;
        }
        const bool narrow = run_narrow(it, at, m), based = narrow && it[k].base;
        lw_push_word(lw, &t->steps, m == 1 ? h->single : based ? h->run16_group : narrow ? h->run16 : h->run);
        lw_push_word(lw, &t->steps, it[k].x->addr);
        lw_push_word(lw, &t->steps, padded_bytes(it[k].x));
        if (m > 1)
            lw_push_word(lw, &t->steps, narrow ? lw_narrow_run_count(m) : (uint32_t)(m - 1));
        if (based)
            lw_push_word(lw, &t->steps, it[k].base);
        for (size_t q = 0; narrow && q < m; q += 2) {
            const step_item *lo = &it[at[q]], *hi = q + 1 < m ? &it[at[q + 1]] : NULL;
            lw_push_word(lw, &t->steps, (lo->endpoint & 0xffffu) | (hi ? (hi->endpoint & 0xffffu) << 16 : 0));
            if (lo->note)
                lw_note_peer(lw, i, EXE_RELOC_TILE);
            if (hi && hi->note)
                lw_note_peer(lw, i, EXE_RELOC_TILE_HIGH);
        }
        for (size_t q = 0; !narrow && q < m; q++) {
            lw_push_word(lw, &t->steps, it[at[q]].endpoint);
            if (it[at[q]].note)
                lw_note_peer(lw, i, it[at[q]].kind);
        }
        k = at[m - 1];
    }
    free(chain);
    free(next);
    free(member);
    free(at);
    free(lst);
    free(look);
}

/* Tile i's receives in the order they are posted (rows chains gather an
 * endpoint's receives from later in the order). */
static void emit_receives(lowering *lw, uint32_t i, const xfer *const *rv, size_t n)
{
    step_item *it = malloc((n + 1) * sizeof *it);
    if (!it) {
        lw_fail(lw, "out of host memory");
        return;
    }
    for (size_t k = 0; k < n; k++) {
        it[k].x = rv[k];
        it[k].endpoint = receive_endpoint(lw, rv[k], &it[k].kind);
        it[k].host = rv[k]->peer & (XCH_HOST | XCH_STREAM_MEMORY);   /* a step each, in order */
        it[k].note = true;
        it[k].narrow = narrow_endpoint(lw, &it[k], true);
    }
    const kernel_symbols *ks = &lw->kernels;
    const step_handlers h = { ks->ctl_recv_rows, ks->ctl_recvs, ks->ctl_recvs16, ks->ctl_recvs16_group,
                              ks->ctl_recv_list, ks->ctl_recv_list_group, ks->ctl_recv };
    emit_steps(lw, i, it, n, false, &h);
    free(it);
}

/* A sender whose pieces each go to a multicast group of their own (a
 * matmul's A gathered: a row's K pieces to the grid rows' K shares) starts
 * at piece (i mod m) of its m instead of the first, so that the tiles
 * sending to the same groups (a block's rows, held on consecutive tiles)
 * do not all send to the first group at once while the others wait: the
 * staggered order Poplar's exchange scheduling gives such a gather.  The
 * receivers' order is unchanged (a group's streams are matched by sender
 * and group, exchange.h). */
static void stagger_multicasts(step_item *it, size_t m, uint32_t i)
{
    if (m < 2)
        return;
    for (size_t k = 0; k < m; k++) {
        if (it[k].x->group < 0)
            return;
        for (size_t q = 0; q < k; q++)
            if (it[q].x->group == it[k].x->group)
                return;
    }
    size_t rot = i % m;
    if (!rot)
        return;
    step_item *tmp = malloc(rot * sizeof *tmp);
    if (!tmp)
        return;                       /* (the order is only a schedule: unstaggered is still right) */
    memcpy(tmp, it, rot * sizeof *tmp);
    memmove(it, it + rot, (m - rot) * sizeof *it);
    memcpy(it + m - rot, tmp, rot * sizeof *tmp);
    free(tmp);
}

/* Tile i's sends in order: the first `groups` as broadcasts when the
 * tile broadcasts, else those issued (a multicast piece once). */
static void emit_sends(lowering *lw, uint32_t i, size_t groups)
{
    ltile *t = &lw->tile[i];
    size_t n = groups ? groups : t->n_sends, m = 0;
    step_item *it = malloc((n + 1) * sizeof *it);
    if (!it) {
        lw_fail(lw, "out of host memory");
        return;
    }
    for (size_t k = 0; k < n; k++) {
        const xfer *sd = &t->sends[k];
        if (!groups && !sd->emit)
            continue;
        step_item *s = &it[m++];
        s->x = sd;
        s->host = false;
        s->kind = EXE_RELOC_TILE;
        s->note = !groups && sd->group < 0;
        s->endpoint = groups ? XCH_BROADCAST
                    : sd->group >= 0 ? xch_multicast_send((uint32_t)sd->group) : lw_global_tile(lw, sd->peer);
        s->narrow = narrow_endpoint(lw, s, false);
    }
    if (!groups)
        stagger_multicasts(it, m, i);
    const kernel_symbols *ks = &lw->kernels;
    const step_handlers h = { ks->ctl_send_rows, ks->ctl_sends, ks->ctl_sends16, 0, ks->ctl_send_list,
                              ks->ctl_send_list_group, ks->ctl_send };
    emit_steps(lw, i, it, m, true, &h);
    free(it);
}

/* End the exchange phase under construction: on every tile the receives
 * (posted first, so no stream waits for its xrecv), the sends, and a chip
 * sync; then the local copies.  A sender whose pieces all go to the same
 * tiles broadcasts them; otherwise pieces taken by several tiles go out
 * once each to a multicast group.  A phase with no transfers adds nothing. */
bool lw_end_phase(lowering *lw)
{
    if (lw->phase_has_transfers) {
        for (uint32_t i = 0; i < lw->program_tiles; i++)
            if ((i < lw->scope_lo || i >= lw->scope_hi) && (lw->tile[i].n_sends || lw->tile[i].n_recvs))
                return lw_fail(lw, "%s: tile %u of pipeline stage %u takes part in an exchange of stage %u within a "
                               "pipeline cycle (a copy between the stages is missing)", lw->g->source,
                               i % lw->tiles, i / lw->tiles, lw->cycle_stage);
        size_t *bcast = calloc(lw->program_tiles + 1, sizeof *bcast);
        if (!bcast)
            return lw_fail(lw, "out of host memory");
        for (uint32_t i = lw->scope_lo; i < lw->scope_hi && !lw->failed; i++) {
            bcast[i] = broadcast_groups(&lw->tile[i]);
            if (!bcast[i] && lw->tile[i].n_sends > 1)
                multicast_groups(lw, i);
        }
        const xfer **mc = NULL, **order = NULL;
        size_t cap_mc = 0, cap_order = 0;
        for (uint32_t i = lw->scope_lo; i < lw->scope_hi && !lw->failed; i++) {
            ltile *t = &lw->tile[i];
            size_t n_mc = 0, n_order = 0;
            for (size_t k = 0; k < t->n_recvs; k++) {
                const xfer *rv = &t->recvs[k];
                if (!lw_grow((void **)&order, &cap_order, n_order + 1, sizeof *order))
                    break;
                if (rv->group >= 0) {
                    if (!lw_grow((void **)&mc, &cap_mc, n_mc + 1, sizeof *mc))
                        break;
                    mc[n_mc++] = rv;
                    continue;
                }
                order[n_order++] = rv;
            }
            if (n_mc > 1)
                qsort(mc, n_mc, sizeof *mc, cmp_multicast_recv);
            if (n_mc && lw_grow((void **)&order, &cap_order, n_order + n_mc, sizeof *order)) {
                memcpy(order + n_order, mc, n_mc * sizeof *mc);
                n_order += n_mc;
            }
            emit_receives(lw, i, order, n_order);
            emit_sends(lw, i, bcast[i]);
            lw_push_word(lw, &t->steps, lw->sync_step);
        }
        for (uint32_t i = 0; i < lw->program_tiles; i++)
            lw->tile[i].n_sends = lw->tile[i].n_recvs = 0;
        free(mc);
        free(order);
        free(bcast);
        lw->rep->exchange_phases++;
        lw_count_sync(lw);
        lw->phase_has_transfers = false;
    }
    for (uint32_t i = 0; i < lw->program_tiles; i++)
        if (lw->tile[i].copies.n && !lw_flush_copies(lw, i))
            return false;
    lw->phase_bytes = 0;
    return !lw->failed;
}
