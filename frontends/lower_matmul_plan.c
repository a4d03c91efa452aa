/*
 * lower_matmul_plan.c — the matmul planner: which codelet computes a
 * matmul, and the gm x gn x gk grid of tiles it runs on, chosen by an
 * estimate of the tile cycles of each grid (the codelet's own exact count
 * for its block, receiving A — no sooner than the tile holding most of A
 * sends it — and B, packing, the partial sums and the epilogue) among the
 * grids whose blocks fit the tiles' free memory; where none fits, the
 * serial parts that do; and why nothing fits (lower_matmul.c describes
 * the lowering itself).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower_matmul.h"
#include "workloads/codelets/matmul.h"
#include "workloads/codelets/matmul_f32.h"

mm_kind lw_mm_kind(const lowering *lw, const mm_shape *s)
{
    if (s->f32_inputs && !lw->opts->f16_matmul)
        return (mm_kind){ true, MATMUL_F32_K_BLOCK, MATMUL_F32_N_GROUP, 4, 4, false, 4 };
    /* f16 partials (--partials half), except for run-time convolution
     * weights packed in parts (gather_weight_parts packs for f32 partials) */
    if (lw->opts->half_partials && !s->w_rows)
        return (mm_kind){ false, 16, 16, 2, 2, true, 2 };
    return (mm_kind){ false, 16, 8, 2, 2, false, 4 };
}

/* Tile cycles of the codelet on an mt x kt x nt block with A in region 0
 * and C in region 1 (the fast placement when the row steps allow): the
 * codelet's own exact count (workloads/codelets/matmul*.h). */
static double matmul_cycles(const lowering *lw, const mm_kind *kd, uint64_t mt, uint64_t kt, uint64_t nt)
{
    const machine *m = lw->opts->machine;
    if (kd->f32) {
        matmul_f32_args a = { .a = 0x50000, .b = 0x90000, .c = 0xa0000, .m = (uint32_t)mt, .k = (uint32_t)kt,
                              .n = (uint32_t)nt, .a_row_step = (uint32_t)kt * 4, .c_row_step = (uint32_t)nt * 4,
                              .amp_peak_macs = machine_u32(m, MP_amp_f32_peak_macs_per_cycle) };
        return (double)matmul_f32_cycles(&a, 0);
    }
    matmul_f16_args a = { .a = 0x50000, .b = 0x90000, .c = 0xa0000, .m = (uint32_t)mt, .k = (uint32_t)kt,
                          .n = (uint32_t)nt, .a_row_step = (uint32_t)kt * 2, .c_row_step = (uint32_t)nt * kd->c_eb,
                          .partials = kd->f16_partials ? MATMUL_PARTIALS_F16 : MATMUL_PARTIALS_F32,
                          .amp_peak_macs = machine_u32(m, MP_amp_f16_peak_macs_per_cycle),
                          .worklists = true };
    return (double)matmul_f16_cycles(&a, 0);
}

/* The bytes of a stretch's blocks together; *most raised to its largest. */
static uint64_t stretch_bytes(const lw_block_need *blocks, int n, uint64_t *most)
{
    uint64_t sum = 0;
    for (int q = 0; q < n; q++) {
        sum += blocks[q].bytes;
        *most = blocks[q].bytes > *most ? blocks[q].bytes : *most;
    }
    return sum;
}

/* Whether a tile's blocks for a grid fit the room as the tile takes and
 * gives them back (fetch_operands, prepare_a, pack_runtime_b, emit_product,
 * free_temps in lower_matmul.c): prepare[] are B as received, A as
 * received, the bias and A's later forms; product[] B widened and turned,
 * the packed block, then C and the codelet's scratch; reduce[] the
 * partials' blocks.  A form
 * of A is made while the form before it still holds its room, and B's
 * packed block (gathered first where B is a weight) beside B as received. */
static bool fits_as_taken(const uint64_t *room, const mm_shape *s, const lw_block_need prepare[6],
                          const lw_block_need product[8], const lw_block_need reduce[7], bool b_tile, bool b_turn,
                          bool a_cast, bool one_tile)
{
    lw_block_need first = product[5], later = product[5];   /* the packed block */
    first.bytes = b_tile ? 0 : product[5].bytes;
    later.bytes = b_tile ? product[5].bytes : 0;
    later.kept = false;
    const lw_block_need ev[] = {
        /* 0 */ first, prepare[0], prepare[1], prepare[2], prepare[3], prepare[4],
        /* 6 */ { .ends = !s->trans_a ? 0 : s->f32_inputs ? 3 : 5 },
        /* 7 */ prepare[5],
        /* 8 */ { .ends = !a_cast ? 0 : s->trans_a ? 6 : 3 },
        /* 9 */ product[3], product[4],
        /* 11 */ { .ends = !b_turn ? 0 : b_tile && !s->b_f32 ? 10 : 2 },
        /* 12 */ later, product[6], product[7],
        /* 15: the product's blocks given back, C and the bias kept */
        { .ends = 1 }, { .ends = 2 }, { .ends = 3 }, { .ends = 5 }, { .ends = 6 },
        { .ends = 8 }, { .ends = 10 }, { .ends = 11 }, { .ends = 13 }, { .ends = 15 },
        /* 25 */ reduce[2], reduce[3], reduce[4], reduce[5], reduce[6]
    };
    return lw_blocks_fit_as(room, ev, (int)(sizeof ev / sizeof *ev), one_tile);
}

/* A candidate grid: the best so far when its score is lower (ties to the
 * earlier), else the runner-up when lower than that. */
static void consider(mm_grid *best, const mm_grid_choice *cand, bool least_memory)
{
    if (cand->score < best->score * 0.999) {
        if (best->gm)
            best->runner_up = (mm_grid_choice){ best->gm, best->gn, best->gk, best->mt, best->nt, best->kt,
                                                best->cycles, best->score };
        best->gm = cand->gm, best->gn = cand->gn, best->gk = cand->gk;
        best->mt = cand->mt, best->nt = cand->nt, best->kt = cand->kt;
        best->cycles = cand->cycles, best->score = cand->score;
        best->least_memory = least_memory;
    } else if (cand->score < best->runner_up.score * 0.999) {
        best->runner_up = *cand;
    }
}

/* A's exchange: no sooner than its busiest sender sends send_bytes at 4
 * bytes a cycle; or (send_bytes 0) spread over the grid row's gn tiles, each
 * taking its block of `block` bytes from the others, a supertile's two
 * tiles together (pair) when gn is even (the pairs lie inside a row). */
static double a_cycles(uint64_t send_bytes, uint64_t block, uint32_t gn, bool pair)
{
    if (send_bytes)
        return (double)send_bytes / 4.0;
    return (double)block / (4.0 * (pair && gn % 2 == 0 ? 2.0 : 1.0)) +
           (double)gn * XCH_SEND_OVERHEAD_CYCLES / (pair ? 2.0 : 1.0);
}

/* The partial sums of a share of `elems` outputs brought together and
 * summed (K split over gk tiles; lower_matmul_sum.c): f16 partials in one
 * pass (vtx_reduce_partials_f16: 13 + gk issues a group of 8 columns, 11 +
 * gk with f32 out for an epilogue), the share alone widened for an
 * epilogue. */
static double sum_cycles(const mm_kind *kd, uint32_t gk, uint64_t elems, bool epilogue_work)
{
    if (kd->f16_partials) {
        if (gk > 1)
            return (double)((gk - 1) * elems) * 2.0 / 4.0 +
                   (double)elems * (double)((epilogue_work ? 11 : 13) + gk) / 8.0 + PASS_OVERHEAD_CYCLES;
        return epilogue_work ? (double)elems * 0.4 + PASS_OVERHEAD_CYCLES : 0.0;
    }
    double c = 0.0;
    if (gk > 1)                                   /* receive the partials, sum them */
        c += (double)((gk - 1) * elems) * (gk > 2 ? 1.6 : 1.0) * (double)kd->c_eb / 4.0 +
             (double)elems * KERNEL_BINARY_CYCLES_PER_ELEMENT + (gk > 2 ? 2.0 : 1.0) * PASS_OVERHEAD_CYCLES + 200.0;
    return c;
}

/* B's block on a tile: received and packed (b_tile: B computed at run
 * time), or gathered from the parts kept down the grid column (constant
 * weights, or a variable's packed parts: the other parts received, the
 * tile's own copied into the block by the six workers). */
static double b_cycles(const mm_shape *s, const mm_kind *kd, uint32_t gm, uint32_t gk, uint64_t kt, uint64_t nt,
                       bool b_tile, bool b_turn, bool w_parts)
{
    double c = b_tile ? (double)(kt * nt) * (b_turn ? 2.4 : 1.4) : 0.0;   /* receive, pack B */
    if ((!s->b_act && gm > 1) || w_parts) {
        const double block = (double)(kt * nt * kd->w_eb), own = 1.0 / (double)gm;
        c += block * (1.0 - own) / 4.0 + block * own / 8.0 + 200.0;
    }
    if (b_tile && s->w_rows)                    /* a receive per run of weights, widen f16 */
        c += (double)(s->w_flip ? kt : gk == 1 ? 1 : nt) * XCH_SEND_OVERHEAD_CYCLES +
             (s->b_f32 ? 0.0 : (double)(kt * nt));
    if (b_tile && !s->conv && !s->wgrad) {      /* a receive per row of B's block, widen f16 */
        bool whole = s->b_transposed ? kt >= s->k : nt >= s->n;
        c += (whole ? 1.0 : (double)(s->b_transposed ? nt : kt)) * XCH_SEND_OVERHEAD_CYCLES +
             (s->b_f32 ? 0.0 : (double)(kt * nt));
    }
    if (w_parts)                                /* a part (at most six K blocks) packed */
        c += PASS_OVERHEAD_CYCLES + 6.0 * 290.0 + (s->b_f32 ? 0.0 : 16.0 * 8.0 * 6.0);
    return c;
}

/* The grid with the lowest estimate among those whose blocks fit: their
 * bytes together beside what the fullest tile holds, and (room not NULL)
 * each in a free block (lw_least_room); a grid about to become the best
 * also on each tile's own room (tile_rooms, lw_stage_rooms). */
static bool plan_grid_in(const lowering *lw, const mm_shape *s, const mm_kind *kd, mm_grid *best,
                         const uint64_t *room, const lw_rooms *tile_rooms, uint64_t a_most, bool a_spread)
{
    const graph *g = lw->g;
    const uint64_t kblocks = (s->k + kd->k_block - 1) / kd->k_block;
    const uint32_t in_eb = s->f32_inputs ? 4 : 2;
    /* the tile's memory less the library, and less what the fullest tile
     * holds already (weights, variables, tensors still to be read, the
     * records and control program): the op's blocks go beside it */
    uint64_t avail = (lw->mem_end - lw->mem_base) - lw_library_bytes(lw);
    uint64_t kept = lw_fullest_tile(lw, NULL);
    avail = avail > kept ? avail - kept : 0;
    const uint64_t ngroups = (s->n + kd->n_group - 1) / kd->n_group;
    const bool b_turn = kd->f32 && s->b_act && s->b_transposed;   /* B^T turned on the tile */
    const bool w_parts = s->w_rows && !kd->f32;   /* packed in parts down the column (gather_weight_parts) */
    const bool b_tile = s->b_act && !w_parts;     /* B received and packed on every tile */
    /* region 1 past the library: the most packed weights a tile can hold */
    const uint64_t r1_room = lw->mem_end > lw->region1_start ? lw->mem_end - lw->region1_start : 0;
    memset(best, 0, sizeof *best);
    best->cycles = best->score = best->runner_up.score = 1e300;
    const bool pair = machine_u32(lw->opts->machine, MP_exchange_supertile_receive) != 0;
    /* Batch items (attention heads) side by side, each with its grid. */
    uint32_t tiles = s->batch && s->batch <= lw->tiles ? (uint32_t)(lw->tiles / s->batch) : 0;
    for (uint32_t gk = 1; gk <= tiles && gk <= kblocks && (gk == 1 || !s->k_whole); gk++) {
        uint64_t kt = (kblocks + gk - 1) / gk * kd->k_block;
        if (gk > 1 && (kblocks + gk - 2) / (gk - 1) == (kblocks + gk - 1) / gk)
            continue;                                      /* same K share as gk - 1 */
        if ((gk - 1) * kt >= kblocks * kd->k_block)
            continue;                                      /* the last share would be empty */
        if (b_turn && kt > KERNEL_TRANSPOSE_MAX_COLS)
            continue;
        uint32_t tiles_k = tiles / gk;
        for (uint32_t gn = 1; gn <= tiles_k && gn <= ngroups; gn++) {
            uint64_t nt = (ngroups + gn - 1) / gn * kd->n_group;
            if (gn > 1 && (ngroups + gn - 2) / (gn - 1) == (ngroups + gn - 1) / gn)
                continue;                                  /* same block width as gn - 1 */
            uint32_t max_gm = tiles_k / gn;
            for (uint32_t gm = 1; gm <= max_gm && gm <= s->m; gm++) {
                uint64_t mt = (s->m + gm - 1) / gm;
                if (gm > 1 && (s->m + gm - 2) / (gm - 1) == mt)
                    continue;
                uint64_t share = (mt + gk - 1) / gk;
                const bool widen = s->wgrad && !s->f32_inputs, h = kd->f16_partials;
                const bool out_f16 = g->tensors[s->out].dtype == GDT_F16;
                const bool epilogue_work = s->alpha != 1.0 || s->bias >= 0 || s->activation >= 0 || !out_f16;
                /* Two stretches, each with the blocks it holds at once: the
                 * product (in the order a tile takes them: B received, A,
                 * the bias; A turned or cast, B widened, turned and packed
                 * (B^T packed where it was received), C, the codelet's
                 * scratch), then, the product's operands free again
                 * (lower_matmul.c, free_temps), the sum of the partials and
                 * the epilogue: C, the bias, the partials received and
                 * their sum, the share of the result. */
                const enum region_pref R0 = PREFER_REGION0, R1 = PREFER_REGION1;
                const uint64_t bias_bytes = (s->bias_row ? share : 1) * nt * 4;
                /* constant weights, loaded with the executable: kept for the run
                 * on a grid column's first tile where the block is one part
                 * (lower_matmul.c); the other rows' copies are scratch, and
                 * this room, the least over tiles, is theirs too */
                const bool c_weights = !s->b_act && gm == 1;
                /* A turned (transA) or cast on the tile: each form free
                 * once the next is made (prepare_a), so the product holds
                 * the last; before it, A as received and its next form */
                const uint64_t a_in = mt * kt * (s->f32_inputs ? 4 : 2), a_wide = s->trans_a ? mt * kt * 4 : 0;
                const uint64_t a_final = mt * kt * kd->a_eb;
                const bool a_cast = (s->f32_inputs || s->trans_a) && !kd->f32;
                const lw_block_need prepare[] = {
                    { b_tile ? kt * nt * 4 : 0, R1 }, { a_in, R0 }, { bias_bytes, R1 },
                    { s->trans_a && !s->f32_inputs ? mt * kt * 4 : 0, R0 }, { a_wide, R0 }, { a_cast ? a_final : 0, R0 }
                };
                /* (packed weights: region 1 only, where the AMP reads them) */
                const lw_block_need product[] = {
                    { b_tile ? kt * nt * 4 : 0, R1 }, { a_cast || s->trans_a ? a_final : a_in, R0 }, { bias_bytes, R1 },
                    { widen || (b_tile && !s->b_f32) ? kt * nt * 2 : 0, R1 },
                    { b_turn ? kt * nt * 4 : 0, R1 }, { b_turn ? 0 : kt * nt * kd->w_eb, NEED_REGION1, c_weights },
                    { mt * nt * kd->c_eb, R1 }, { 4096, R1 }
                };
                /* (f16 partials, h: summed in one pass, into f32 for an
                 * epilogue, lower_matmul_sum.c) */
                const lw_block_need reduce[] = {
                    { mt * nt * kd->c_eb, R1 }, { bias_bytes, R1 },
                    { gk > 1 ? (gk - 1) * share * nt * kd->c_eb : 0, R1 }, { gk > 2 && !h ? share * nt * 4 : 0, R1 },
                    { gk > 1 && !out_f16 ? share * nt * 4 : 0, R1 }, { out_f16 ? share * nt * 2 : 0, R1 },
                    { h ? share * nt * 4 : 0, R1 }
                };
                enum { N_PREPARE = sizeof prepare / sizeof *prepare, N_PRODUCT = sizeof product / sizeof *product,
                       N_REDUCE = sizeof reduce / sizeof *reduce };
                uint64_t most = 0, prepare_bytes = stretch_bytes(prepare, N_PREPARE, &most);
                uint64_t product_bytes = stretch_bytes(product, N_PRODUCT, &most);
                uint64_t reduce_bytes = stretch_bytes(reduce, N_REDUCE, &most);
                uint64_t bytes = product_bytes > reduce_bytes ? product_bytes : reduce_bytes;
                bytes = prepare_bytes > bytes ? prepare_bytes : bytes;
                if (mt * kt * kd->a_eb > lw_region0_above_code(lw) || (s->wgrad && !s->f32_inputs && mt % 2) ||
                    lw_block_room(kt * nt * kd->w_eb) > r1_room)
                    continue;                          /* (the packed weights: region 1 only) */
                if (bytes > avail) {
                    if (!best->least_bytes || bytes < best->least_bytes) {
                        best->least_bytes = bytes;
                        best->least_gm = gm, best->least_gn = gn, best->least_gk = gk;
                        best->least_mt = mt, best->least_nt = nt, best->least_kt = kt;
                    }
                    continue;
                }
                if (room && !fits_as_taken(room, s, prepare, product, reduce, b_tile, b_turn, a_cast, false))
                    continue;
                /* A: received at 4 bytes a cycle, no sooner than its
                 * busiest sender sends (above). */
                /* the epilogue: alpha, bias, activation, a cast to f16
                 * (f16 partials' sums are rounded to f16 as they are made) */
                const bool epilogue = s->alpha != 1.0 || s->bias >= 0 || s->activation >= 0 || (out_f16 && !h);
                double c = matmul_cycles(lw, kd, mt, kt, nt) +
                           a_cycles(a_spread ? 0 : (a_most ? (a_most > mt * kt ? a_most : mt * kt) : mt * s->k) * in_eb,
                                    mt * kt * in_eb, gn, pair) +
                           /* A split along K where it was not laid out for
                            * the plan: a send per row and share */
                           (gk > 1 && !a_spread ? (double)(mt * gk) * XCH_SEND_OVERHEAD_CYCLES : 0.0) +
                           (epilogue ? (double)(share * nt) : 0.0) +
                           (s->f32_inputs && !kd->f32 ? (double)(mt * kt) : 0.0) +  /* cast A */
                           (s->trans_a ? (double)(mt * kt) : 0.0) +             /* turn A */
                           b_cycles(s, kd, gm, gk, kt, nt, b_tile, b_turn, w_parts);
                if (s->wgrad)                               /* a receive per pixel row of A and */
                    c += ((mt == s->m ? 1.0 : (double)kt) +      /* per kernel row run of B's im2col */
                          (double)kt * (double)((nt + (uint64_t)(s->kw * s->c_in) - 1) / (uint64_t)(s->kw * s->c_in) + 1)) *
                             XCH_SEND_OVERHEAD_CYCLES +
                         (s->f32_inputs ? 0.0 : (double)(2 * mt * kt + kt * nt));   /* widen A, B; narrow A */
                c += sum_cycles(kd, gk, share * nt, epilogue_work);
                double score = c;
                if (!room)   /* no grid fits: the one that needs least, its largest block first (ties by cycles) */
                    score = (double)(most + bytes) * 1e6 + c;
                if (room && tile_rooms && score < best->score * 0.999) {
                    bool every = true;
                    for (size_t t = 0; t < tile_rooms->n && every; t++)
                        every = fits_as_taken(tile_rooms->v + t * LW_ROOM_SIZE, s, prepare, product, reduce,
                                              b_tile, b_turn, a_cast, true);
                    if (!every)
                        continue;
                }
                const mm_grid_choice cand = { gm, gn, gk, mt, nt, kt, c, score };
                consider(best, &cand, !room);
            }
        }
    }
    return best->gm != 0;
}

bool lw_mm_plan_grid(const lowering *lw, const mm_shape *s, const mm_kind *kd, mm_grid *best)
{
    return lw_mm_plan_grid_as(lw, s, kd, best, !s->conv && !s->wgrad && lw->tensor[s->a].lhs_spread);
}

bool lw_mm_plan_grid_as(const lowering *lw, const mm_shape *s, const mm_kind *kd, mm_grid *best, bool a_spread)
{
    uint64_t room[LW_ROOM_SIZE];
    lw_least_room(lw, room);
    /* A's sends: each element goes once (a multicast to the tiles of its
     * grid row and K share), so the tile holding most of A sends longest.
     * Before A is placed (its layout chosen for this plan,
     * lw_matmul_input_layout), and for an image's im2col rows (a_most 0),
     * a grid row's rows are taken to be on one tile, which sends them all. */
    const uint64_t a_most = s->conv || s->wgrad ? 0 : lw_most_on_a_tile(lw, s->a);
    lw_rooms tile_rooms;
    bool each = lw_stage_rooms(lw, &tile_rooms);
    bool ok = plan_grid_in(lw, s, kd, best, room, each ? &tile_rooms : NULL, a_most, a_spread) ||
              plan_grid_in(lw, s, kd, best, NULL, NULL, a_most, a_spread);
    free(tile_rooms.v);
    return ok;
}

uint64_t lw_mm_side(const mm_shape *s, enum mm_axis a)
{
    return a == MM_AXIS_M ? s->m : a == MM_AXIS_N ? s->n : s->k;
}

bool lw_mm_plan_serial(const lowering *lw, const mm_shape *s, const mm_kind *kd, mm_grid *grid, mm_serial *ser)
{
    if (s->conv || s->wgrad || s->w_rows || s->batch != 1)
        return false;
    const bool k_ok = lw->g->tensors[s->out].dtype == GDT_F32;
    double best = 1e300;
    bool found = false;
    for (enum mm_axis a = MM_AXIS_M; a <= MM_AXIS_K; a++) {
        if ((a == MM_AXIS_K && !k_ok) || (!s->b_act && a != MM_AXIS_M))
            continue;                 /* constant weights: packed once, the parts take rows */
        const uint64_t side = lw_mm_side(s, a), gran = a == MM_AXIS_N ? kd->n_group : a == MM_AXIS_K ? kd->k_block : 1;
        for (uint32_t parts = 2; parts <= MM_SERIAL_MAX; parts++) {
            uint64_t part = (side + parts - 1) / parts;
            part = (part + gran - 1) / gran * gran;
            if (part >= side || (parts - 1) * part >= side)
                continue;
            mm_shape sub = *s;
            *(a == MM_AXIS_M ? &sub.m : a == MM_AXIS_N ? &sub.n : &sub.k) = part;
            sub.k_whole = a == MM_AXIS_K;
            mm_grid g;
            if (!lw_mm_plan_grid(lw, &sub, kd, &g) || g.least_memory)
                continue;
            const uint32_t n_parts = (uint32_t)((side + part - 1) / part);
            g.cycles *= (double)n_parts;
            if (g.cycles < best) {
                best = g.cycles;
                *grid = g;
                *ser = (mm_serial){ n_parts, a, part };
                found = true;
            }
            break;
        }
    }
    return found;
}

/* Why no grid fits: A itself is too big for the tiles' region 0 (its rows
 * stay there, at least M K / tiles of it a tile), or a tile cannot hold
 * even the smallest block. */
bool lw_mm_fail_no_grid(lowering *lw, const graph_node *n, const mm_shape *s, const mm_kind *kd, uint64_t kp,
                        const mm_grid *grid)
{
    const graph *g = lw->g;
    uint64_t tiles = s->batch && s->batch <= lw->tiles ? lw->tiles / s->batch : 1;
    uint64_t a_need = (s->m * kp * kd->a_eb + tiles - 1) / tiles, region0 = lw_region0_above_code(lw);
    if (a_need > region0)
        return lw_fail(lw, "%s: node '%s' (%s): does not fit: its rows of A (%llu x %llu) need at least %llu "
                       "bytes a tile over %llu tiles, and a tile keeps them in its %llu bytes of region 0",
                       g->source, n->name && n->name[0] ? n->name : "?", graph_ops[n->op].name,
                       (unsigned long long)s->m, (unsigned long long)s->k, (unsigned long long)a_need,
                       (unsigned long long)tiles, (unsigned long long)region0);
    uint32_t fullest = 0;
    uint64_t most = lw_fullest_tile(lw, &fullest);
    char held[512];
    lw_describe_holders(lw, fullest, held, sizeof held);
    if (grid->least_bytes)
        return lw_fail(lw, "%s: node '%s' (%s): does not fit: a tile needs at least %llu bytes for the blocks of the "
                       "grid needing least (%u x %u x %u tiles, M x N x K, blocks of %llu x %llu x %llu) with the "
                       "library, a tile has %llu, of which the fullest, tile %u, holds %llu already (tensors, "
                       "records and control program%s)", g->source, n->name && n->name[0] ? n->name : "?",
                       graph_ops[n->op].name, (unsigned long long)(grid->least_bytes + lw_library_bytes(lw)),
                       grid->least_gm, grid->least_gn, grid->least_gk, (unsigned long long)grid->least_mt,
                       (unsigned long long)grid->least_nt, (unsigned long long)grid->least_kt,
                       (unsigned long long)(lw->mem_end - lw->mem_base), fullest, (unsigned long long)most, held);
    uint64_t need = kd->k_block * kd->a_eb + kd->k_block * kd->n_group * kd->w_eb + kd->n_group * kd->c_eb +
                    lw_library_bytes(lw);
    return lw_fail(lw, "%s: node '%s' (%s): does not fit: a tile needs at least %llu bytes for one row of A, "
                   "%u rows and %u columns of B and the row of C, with the library, a tile has %llu, of which the "
                   "fullest, tile %u, holds %llu already (tensors, records and control program%s)", g->source,
                   n->name && n->name[0] ? n->name : "?",
                   graph_ops[n->op].name, (unsigned long long)need, kd->k_block, kd->n_group,
                   (unsigned long long)(lw->mem_end - lw->mem_base), fullest, (unsigned long long)most, held);
}
