/*
 * lower_matmul_sum.c — the end of a planned matmul (lower_matmul.c) on
 * each tile: with K split over gk tiles, the partial sums of each block
 * brought together (a reduce-scatter: tile l of a block sums the l-th
 * share of its rows), then the epilogue of the share (alpha, the bias
 * times beta, the activation, the cast to f16) and the rows made pieces
 * of the output.
 */
#include "lower_matmul.h"
#include "ops_impl.h"

/* f(x) = a x + b over n f32 (n even or the slack after it) in place. */
static void scale_on_tile(lowering *lw, uint32_t tile, uint32_t addr, uint64_t n, float a)
{
    worker_set ws;
    if (lw_workers_begin(lw, tile, KERNEL_UNARY_WORDS, (n + 1) / 2, &ws))
        for (int w = 0; w < CODELET_WORKERS; w++) {
            uint64_t e0 = ws.lo[w] * 2, e1 = ws.hi[w] * 2 < n ? ws.hi[w] * 2 : n;
            kernel_unary_record(ws.rec[w], addr + (uint32_t)(e0 * 4), addr + (uint32_t)(e0 * 4),
                                (uint32_t)(e1 > e0 ? e1 - e0 : 0), KERNEL_UNARY_SCALE_SHIFT, a, 0.0f);
        }
    lw_workers_run(lw, tile, lw->kernels.vtx_unary_f32, &ws);
}

void lw_mm_cast(lowering *lw, uint32_t tile, uint32_t in, uint32_t out, uint64_t n, bool up)
{
    const uint32_t ein = up ? 8 : 16, eout = up ? 16 : 8;   /* bytes of 4 elements */
    worker_set ws;
    if (lw_workers_begin(lw, tile, KERNEL_CAST_WORDS, n / 4, &ws))
        for (int w = 0; w < CODELET_WORKERS; w++)
            kernel_cast_record(ws.rec[w], in + (uint32_t)(ws.lo[w] * ein), out + (uint32_t)(ws.lo[w] * eout),
                               (uint32_t)((ws.hi[w] - ws.lo[w]) * 4));
    lw_workers_run(lw, tile, up ? lw->kernels.vtx_cast_f16_to_f32 : lw->kernels.vtx_cast_f32_to_f16, &ws);
}

/* `rows` rows of nt elements of eb bytes at addr on the tile become the
 * output's columns [n0, n1) of its rows from first_row. */
static bool share_pieces(lowering *lw, const mm_shape *s, uint32_t tile, uint32_t addr, uint64_t rows,
                         uint64_t first_row, uint64_t n0, uint64_t n1, uint64_t nt, uint32_t eb)
{
    for (uint64_t r = 0; r < rows && !lw->failed; r++)
        lw_add_piece(lw, s->out, tile, addr + (uint32_t)(r * nt * eb), (first_row + r) * s->n + n0, n1 - n0);
    return !lw->failed;
}

/* A block of the tile's share of the sum or epilogue, in region 1 where
 * it may: a piece of the output, or scratch.  Where a later serial part
 * follows, the part's product blocks are still held (P->hold), and the
 * block goes beside them, so that the next part finds its blocks where
 * this one had them (the output's piece in the released packed weights
 * had left the next part's packed block no room); where it finds no room
 * there, they are given back first.  0 when lw failed. */
static uint32_t share_alloc(lowering *lw, mm_plan *P, const mm_tile *t, bool out, uint64_t bytes)
{
    uint32_t at = 0;
    for (int k = P->hold ? 0 : 1; k < 2 && !at && !lw->failed; k++) {
        if (k && P->hold)
            lw_mm_give_back_temps(lw, P, t);
        lw->no_room_quiet = k == 0;
        at = out ? lw_tensor_alloc(lw, P->s.out, t->tile, bytes, PREFER_REGION1, 8, false, P->what)
                 : lw_scratch_alloc(lw, t->tile, bytes, PREFER_REGION1, 8, P->what);
        lw->no_room_quiet = false;
    }
    return at;
}

/* The epilogue of `rows` rows of a tile's block at `c` (nt f32 a row,
 * columns [n0, n1) of the output, its first row first_row): alpha, the
 * bias (times beta), the activation, the cast to f16, and the rows become
 * pieces of the output. */
static bool matmul_epilogue(lowering *lw, mm_plan *P, const mm_tile *t, uint32_t c, uint64_t rows,
                            uint64_t first_row)
{
    const graph *g = lw->g;
    const mm_shape *s = &P->s;
    const mm_bias *bias = &P->bias[t->slot];
    const uint32_t tile = t->tile;
    const uint64_t n0 = t->n0, n1 = t->n1, nt = P->nt;
    if (!rows)
        return true;
    if (s->alpha != 1.0)
        scale_on_tile(lw, tile, c, rows * nt, (float)s->alpha);
    if (s->bias >= 0) {
        if (!bias->addr)
            return false;
        if (s->beta != 1.0 && s->f32_inputs)
            scale_on_tile(lw, tile, bias->addr, (s->bias_row ? rows : 1) * (s->bias_col ? n1 - n0 : 1),
                          (float)s->beta);
        worker_set ws;
        if (lw_workers_begin(lw, tile, KERNEL_BINARY_WORDS, rows, &ws))
            for (int w = 0; w < CODELET_WORKERS; w++)
                kernel_binary_record(ws.rec[w], c + (uint32_t)(ws.lo[w] * nt * 4),
                                     bias->addr + (uint32_t)ws.lo[w] * bias->row_step,
                                     c + (uint32_t)(ws.lo[w] * nt * 4), (uint32_t)(ws.hi[w] - ws.lo[w]),
                                     (uint32_t)(n1 - n0), (uint32_t)nt * 4, bias->row_step, bias->col_step,
                                     KERNEL_BINARY_ADD);
        lw_workers_run(lw, tile, lw->kernels.vtx_binary_f32, &ws);
    }
    if (s->activation >= 0) {
        worker_set ws;
        if (lw_workers_begin(lw, tile, KERNEL_UNARY_WORDS, rows * nt / 2, &ws))
            for (int w = 0; w < CODELET_WORKERS; w++)
                kernel_unary_record(ws.rec[w], c + (uint32_t)(ws.lo[w] * 8), c + (uint32_t)(ws.lo[w] * 8),
                                    (uint32_t)((ws.hi[w] - ws.lo[w]) * 2), s->activation, 0, 0);
        lw_workers_run(lw, tile, lw->kernels.vtx_unary_f32, &ws);
    }
    uint32_t res = c, res_eb = 4;
    if (g->tensors[s->out].dtype == GDT_F16) {
        res = share_alloc(lw, P, t, true, rows * nt * 2);
        if (!res)
            return false;
        lw_mm_cast(lw, tile, c, res, rows * nt, false);
        res_eb = 2;
    }
    return share_pieces(lw, s, tile, res, rows, first_row, n0, n1, nt, res_eb);
}

/* K split: tile l of block (i, j) takes the l-th share of the block's
 * rows; its buffer holds the other gk - 1 tiles' partials of them, in K
 * order. */
bool lw_mm_receive_partials(lowering *lw, mm_plan *P, const mm_tile *t)
{
    lw_mm_free_temps(lw, P, t);
    if (t->r0 == t->r1)
        return true;
    const uint64_t bytes = (t->r1 - t->r0) * P->nt * P->kd.c_eb;
    P->recv[t->slot] = share_alloc(lw, P, t, false, (P->gk - 1) * bytes);
    return P->recv[t->slot] != 0;
}

/* The tile's partials of the other shares, sent to their tiles in a
 * staggered order: tile l sends to l + 1, l + 2, ... (mod gk), so that at
 * each step every tile of the block receives from one sender, as Poplar
 * schedules an all-to-all (all sending to share 0 first made each receiver
 * in turn take gk - 1 streams while the others waited). */
bool lw_mm_send_partials(lowering *lw, mm_plan *P, const mm_tile *t)
{
    const uint64_t nt = P->nt, eb = P->kd.c_eb;
    for (uint32_t d = 1; d < P->gk && !lw->failed; d++) {
        const uint32_t q = (t->l + d) % P->gk;
        uint64_t r0, r1;
        lw_mm_reduce_share(t->m1 - t->m0, P->gk, q, &r0, &r1);
        if (r0 == r1)
            continue;
        const uint32_t to = lw_mm_slot_of(P, t->bt, q, t->i, t->j), at = t->l < q ? t->l : t->l - 1;
        const uint64_t bytes = (r1 - r0) * nt * eb;
        lw_add_transfer(lw, t->tile, P->c_addr[t->slot] + (uint32_t)(r0 * nt * eb), lw_tile_of(lw, to),
                        P->recv[to] + (uint32_t)(at * bytes), (uint32_t)bytes);
    }
    return !lw->failed;
}

/* Whether the epilogue has work beyond making the rows pieces of an f16
 * output: alpha, a bias, an activation, or an f32 output. */
static bool epilogue_computes(const lowering *lw, const mm_shape *s)
{
    return s->alpha != 1.0 || s->bias >= 0 || s->activation >= 0 || lw->g->tensors[s->out].dtype != GDT_F16;
}

bool lw_mm_c_is_output(const lowering *lw, const mm_plan *P)
{
    if (P->gk != 1)
        return false;
    return P->kd.f16_partials ? !epilogue_computes(lw, &P->s) : lw->g->tensors[P->s.out].dtype != GDT_F16;
}

/* The received partials of `elems` f32 (the column-reduce codelet first
 * when there are several) added to the tile's own at c, into dst (false:
 * lw failed). */
static bool sum_partials(lowering *lw, mm_plan *P, const mm_tile *t, uint32_t c, uint32_t dst, uint64_t elems)
{
    const uint32_t tile = t->tile, gk = P->gk;
    uint32_t part = P->recv[t->slot];
    worker_set ws;
    if (gk > 2) {
        uint32_t sum = share_alloc(lw, P, t, false, elems * 4);
        if (!sum)
            return false;
        if (lw_workers_begin(lw, tile, KERNEL_REDUCE_COLS_WORDS, elems / 2, &ws))
            for (int w = 0; w < CODELET_WORKERS; w++)
                kernel_reduce_cols_record(ws.rec[w], part + (uint32_t)(ws.lo[w] * 8), sum + (uint32_t)(ws.lo[w] * 8),
                                          gk - 1, (uint32_t)((ws.hi[w] - ws.lo[w]) * 2), (uint32_t)(elems * 4),
                                          KERNEL_REDUCE_SUM, 1.0f, false);
        lw_workers_run(lw, tile, lw->kernels.vtx_reduce_cols_f32, &ws);
        part = sum;
    }
    if (lw_workers_begin(lw, tile, KERNEL_BINARY_WORDS, elems / 2, &ws))
        for (int w = 0; w < CODELET_WORKERS; w++) {
            uint32_t e0 = (uint32_t)(ws.lo[w] * 2), cnt = (uint32_t)((ws.hi[w] - ws.lo[w]) * 2);
            kernel_binary_record(ws.rec[w], c + e0 * 4, part + e0 * 4, dst + e0 * 4, cnt ? 1 : 0, cnt, cnt * 4, 0, 4,
                                 KERNEL_BINARY_ADD);
        }
    lw_workers_run(lw, tile, lw->kernels.vtx_binary_f32, &ws);
    return true;
}

/* f16 partials (K split): the share at c and the gk - 1 partials received
 * summed in one pass into out (f32, or rounded to f16), as poplin's
 * ReduceAdd sums half partials: each column in f32 from +0, the own share
 * first, then the others in K order (vtx_reduce_partials_f16, rowwise.h).
 * The columns go to the workers 8 at a time (elems is a multiple of the
 * AMP's 16 output channels). */
static bool sum_f16_partials(lowering *lw, mm_plan *P, const mm_tile *t, uint32_t c, uint32_t out, uint64_t elems,
                             bool out_f16)
{
    if (elems % 8)
        return lw_fail(lw, "%s: tile %u's share of %llu partial sums is not a whole number of 8-column groups",
                       P->what, t->tile, (unsigned long long)elems);
    const uint32_t eb = out_f16 ? 2 : 4;
    worker_set ws;
    if (lw_workers_begin(lw, t->tile, KERNEL_REDUCE_PARTIALS_WORDS, elems / 8, &ws))
        for (int w = 0; w < CODELET_WORKERS; w++) {
            uint32_t e0 = (uint32_t)(ws.lo[w] * 8);
            kernel_reduce_partials_record(ws.rec[w], c + e0 * 2, P->recv[t->slot] + e0 * 2, out + e0 * eb, P->gk,
                                          (uint32_t)((ws.hi[w] - ws.lo[w]) * 8), (uint32_t)(elems * 2), out_f16);
        }
    return lw_workers_run(lw, t->tile, lw->kernels.vtx_reduce_partials_f16, &ws);
}

/* The tile's share of the rows: the sum of the partials (K split; into
 * the output's block where it is f32, else in place before the cast), then
 * the epilogue.  f16 partials are widened first, except where they are the
 * result as it stands (lw_mm_c_is_output). */
bool lw_mm_finish_share(lowering *lw, mm_plan *P, const mm_tile *t)
{
    const uint64_t nt = P->nt, rows = t->r1 - t->r0;
    uint32_t c = P->c_addr[t->slot] + (uint32_t)(t->r0 * nt * P->kd.c_eb);
    uint64_t elems = rows * nt;
    lw_mm_free_temps(lw, P, t);
    const bool out_f16 = lw->g->tensors[P->s.out].dtype == GDT_F16;
    if (P->kd.f16_partials && elems) {
        const uint64_t first_row = t->bt * P->s.m + t->m0 + t->r0;
        if (lw_mm_c_is_output(lw, P)) {
            /* f16 sums as they stand: C is the output's block */
            return share_pieces(lw, &P->s, t->tile, c, rows, first_row, t->n0, t->n1, nt, 2);
        }
        if (P->gk > 1 && out_f16 && !epilogue_computes(lw, &P->s)) {
            uint32_t out = share_alloc(lw, P, t, true, elems * 2);
            return out && sum_f16_partials(lw, P, t, c, out, elems, true) &&
                   share_pieces(lw, &P->s, t->tile, out, rows, first_row, t->n0, t->n1, nt, 2);
        }
        /* The sum (or the share alone) in f32, finished as f32 partials
         * are: one rounding to f16 at the end. */
        uint32_t wide = share_alloc(lw, P, t, !out_f16, elems * 4);
        if (!wide)
            return false;
        if (P->gk > 1) {
            if (!sum_f16_partials(lw, P, t, c, wide, elems, false))
                return false;
        } else {
            lw_mm_cast(lw, t->tile, c, wide, elems, true);
        }
        c = wide;
    } else if (P->gk > 1 && elems) {
        uint32_t dst = out_f16 ? c : share_alloc(lw, P, t, true, elems * 4);
        if (!dst || !sum_partials(lw, P, t, c, dst, elems))
            return false;
        c = dst;
    }
    matmul_epilogue(lw, P, t, c, t->r1 - t->r0, t->bt * P->s.m + t->m0 + t->r0);
    return true;
}
