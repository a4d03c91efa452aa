/*
 * lower_reduce.c — reductions over any axes (lw_lower_reduce): ReduceSum,
 * Mean, Max, Min, Prod, SumSquare, L1, L2, LogSum and LogSumExp.
 *   - the reduced elements of each output element fetched as a row onto
 *     the tiles and folded by vtx_reduce_rows_f32 (a vtx_unary_f32 pass
 *     before or after for the forms it has no op for), rows longer than
 *     the codelet takes in two levels;
 *   - over the leading axes (a bias's gradient, a normalisation's
 *     statistics of an image kept channels-last), the partials folded
 *     where the input lies and combined in stages of bounded fan-in
 *     (vtx_reduce_cols_f32): as pixels of whole rows (reduce_columns), or
 *     in the blocks a matmul's output lies in (reduce_segments).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower_internal.h"
#include "ops_impl.h"
#include "isa/isa.h"

/* View elements [e0, e0 + len) of tensor t (view element (o_0, .., o_r-1)
 * is t's element sum o_d mul[d]; the span within one view row) into tile
 * memory at addr: a run per stretch that is consecutive in t. */
static void fetch_view_span(lowering *lw, int t, const int64_t *dims, const int64_t *mul, int rank, uint64_t e0,
                            uint64_t len, uint32_t tile, uint32_t addr)
{
    uint32_t eb = lw->tensor[t].element_bytes;
    uint64_t c = 0;
    while (c < len && !lw->failed) {
        uint64_t q = e0 + c;
        int64_t src = 0, o[GRAPH_MAX_RANK];
        for (int d = rank - 1; d >= 0; d--) {
            o[d] = (int64_t)(q % (uint64_t)dims[d]);
            q /= (uint64_t)dims[d];
            src += o[d] * mul[d];
        }
        /* The innermost view axis when it steps by 1 in t, while in the span. */
        uint64_t run = 1;
        if (rank && mul[rank - 1] == 1)
            run = (uint64_t)(dims[rank - 1] - o[rank - 1]);
        if (run > len - c)
            run = len - c;
        lw_fetch_into(lw, t, (uint64_t)src, run, tile, addr + (uint32_t)(c * eb));
        c += run;
    }
}

/* Elements [row0 cols, (row0 + rows) cols) of such a view into tile
 * memory at buf, row by row `step` bytes apart. */
static void fetch_view_rows(lowering *lw, int t, const int64_t *dims, const int64_t *mul, int rank, uint64_t row0,
                            uint64_t rows, uint64_t cols, uint32_t tile, uint32_t buf, uint32_t step)
{
    for (uint64_t r = 0; r < rows && !lw->failed; r++)
        fetch_view_span(lw, t, dims, mul, rank, (row0 + r) * cols, cols, tile, buf + (uint32_t)(r * step));
}

/* ---- rows longer than the reduce codelet takes ------------------------------------------ */

/* A row reduction in two levels, as PopLibs' reduce does: each row cut
 * into nc chunks of cl elements (the last chunk the rest), a partial result
 * per chunk (vtx_reduce_rows_f32) on the tiles the chunks are spread over,
 * then the nc partials of each row brought to the row's tile and folded
 * (vtx_reduce_cols_f32).  Chunks are numbered chunk-major (u = j rows + r):
 * a tile's chunks are then at most two runs of one length each, the full
 * ones and the last ones, a compute set each. */
typedef struct long_reduce {
    const int64_t *dims, *mul;
    int rank, in, out, op1, op2, pre;
    uint64_t rows, cols, nc, cl, last, units, full; /* full = (nc - 1) rows: the chunks of cl elements */
    uint32_t tiles;
    uint64_t *l, *h;                                /* pass-1 tile i's chunks [l, h) */
    uint32_t *tile, *src, *part;                    /* its tile, its fetched chunks, its partials */
    const char *what;
} long_reduce;

/* Where chunk u's partial lies on pass-1 tile i: the full chunks' from
 * part on, the last chunks' from the next even slot (8-byte aligned). */
static uint32_t lr_part_addr(const long_reduce *R, uint32_t i, uint64_t u)
{
    uint64_t l = R->l[i];
    if (u < R->full || l >= R->full)
        return R->part[i] + (uint32_t)((u - l) * 4);
    uint64_t b = (R->full - l + 1) & ~(uint64_t)1;
    return R->part[i] + (uint32_t)((b + u - R->full) * 4);
}

/* Pass 1: every tile's chunks fetched (a chunk cl elements apart), then
 * e^x over them (when the reduction has it) and a compute set per run of
 * chunks of one length, writing the partials. */
static bool lr_partials(lowering *lw, long_reduce *R)
{
    for (uint32_t i = 0; i < R->tiles && !lw->failed; i++) {
        uint64_t n = R->h[i] - R->l[i];
        if (!n)
            continue;
        uint32_t tile = R->tile[i] = lw_tile_of(lw, i);
        R->src[i] = lw_scratch_alloc(lw, tile, n * R->cl * 4, PREFER_REGION1, 8, R->what);
        R->part[i] = R->src[i] ? lw_scratch_alloc(lw, tile, (n + 2) * 4, PREFER_REGION1, 8, R->what) : 0;
        for (uint64_t u = R->l[i]; R->part[i] && u < R->h[i] && !lw->failed; u++) {
            uint64_t j = u / R->rows, r = u % R->rows;
            fetch_view_span(lw, R->in, R->dims, R->mul, R->rank, r * R->cols + j * R->cl,
                            u < R->full ? R->cl : R->last, tile, R->src[i] + (uint32_t)((u - R->l[i]) * R->cl * 4));
        }
    }
    if (!lw->failed)
        lw_end_phase(lw);
    for (uint32_t i = 0; i < R->tiles && !lw->failed; i++) {
        uint64_t l = R->l[i], h = R->h[i];
        if (h == l)
            continue;
        uint32_t tile = R->tile[i];
        worker_set ws;
        if (R->pre >= 0) {
            /* In place, the padding of the last chunks included (never read
             * into a result). */
            if (!lw_workers_begin(lw, tile, KERNEL_UNARY_WORDS, (h - l) * R->cl / 2, &ws))
                return false;
            for (int w = 0; w < CODELET_WORKERS; w++)
                kernel_unary_record(ws.rec[w], R->src[i] + (uint32_t)(ws.lo[w] * 8), R->src[i] + (uint32_t)(ws.lo[w] * 8),
                                    (uint32_t)((ws.hi[w] - ws.lo[w]) * 2), R->pre, 0, 0);
            lw_workers_run(lw, tile, lw->kernels.vtx_unary_f32, &ws);
        }
        /* The run of full chunks, then the run of last chunks. */
        uint64_t cut = h < R->full ? h : (l > R->full ? l : R->full);
        uint64_t run0[2] = { l, cut }, run1[2] = { cut, h };
        for (int k = 0; k < 2 && !lw->failed; k++) {
            uint64_t a = run0[k], n = run1[k] - a, len = k ? R->last : R->cl;
            if (!n)
                continue;
            uint32_t in0 = R->src[i] + (uint32_t)((a - l) * R->cl * 4), out0 = lr_part_addr(R, i, a);
            if (!lw_workers_begin(lw, tile, KERNEL_REDUCE_WORDS, (n + 1) / 2, &ws))
                return false;
            for (int w = 0; w < CODELET_WORKERS; w++) {
                uint64_t c0 = ws.lo[w] * 2, c1 = ws.hi[w] * 2 < n ? ws.hi[w] * 2 : n;
                kernel_reduce_record(ws.rec[w], in0 + (uint32_t)(c0 * R->cl * 4), out0 + (uint32_t)(c0 * 4),
                                     (uint32_t)(c1 > c0 ? c1 - c0 : 0), (uint32_t)len, (uint32_t)R->cl * 4, R->op1, 1);
            }
            lw_workers_run(lw, tile, lw->kernels.vtx_reduce_rows_f32, &ws);
        }
    }
    return !lw->failed;
}

/* Pass 2: output rows [l2, l2 + n) on `tile`: their partials received as
 * nc rows of n (chunk j's partials of the rows), a scratch block of
 * n nc words; returns it (0 when it did not fit). */
static uint32_t lr_gather_partials(lowering *lw, const long_reduce *R, uint64_t l2, uint64_t n, uint32_t tile)
{
    uint32_t q = lw_scratch_alloc(lw, tile, n * R->nc * 4, PREFER_REGION1, 8, R->what);
    for (uint64_t j = 0; q && j < R->nc && !lw->failed; j++) {
        uint64_t u0 = j * R->rows + l2, u1 = u0 + n;
        for (uint32_t i = 0; i < R->tiles && !lw->failed; i++) {
            uint64_t a = R->l[i] > u0 ? R->l[i] : u0, b = R->h[i] < u1 ? R->h[i] : u1;
            if (a >= b)
                continue;
            uint32_t src = lr_part_addr(R, i, a), dst = q + (uint32_t)((j * n + a - u0) * 4);
            if (R->tile[i] == tile)
                lw_add_local_copy(lw, tile, src, dst, (uint32_t)((b - a) * 4));
            else
                lw_add_transfer(lw, R->tile[i], src, tile, dst, (uint32_t)((b - a) * 4));
        }
    }
    return lw->failed ? 0 : q;
}

/* The two passes, then the unary after the reduction (post, -1 none). */
static bool lr_lower(lowering *lw, long_reduce *R, int post, float scale)
{
    if (!lr_partials(lw, R))
        return false;
    uint32_t tiles2 = lw_plan_tiles(lw, R->rows, 2, (double)R->nc * 1.5, 300);
    uint64_t *l2 = malloc(tiles2 * sizeof *l2), *h2 = malloc(tiles2 * sizeof *h2);
    uint32_t *q = calloc(tiles2, sizeof *q), *o = calloc(tiles2, sizeof *o);
    if (!l2 || !h2 || !q || !o) {
        free(l2); free(h2); free(q); free(o);
        return lw_fail(lw, "out of host memory");
    }
    lw_linear_split(R->rows, 2, tiles2, l2, h2);
    for (uint32_t k = 0; k < tiles2 && !lw->failed; k++) {
        uint64_t n = h2[k] - l2[k];
        if (!n)
            continue;
        uint32_t tile = lw_tile_of(lw, k);
        o[k] = lw_tensor_alloc(lw, R->out, tile, n * 4, PREFER_REGION1, 8, false, R->what);
        if (o[k] && lw_add_piece(lw, R->out, tile, o[k], l2[k], n))
            q[k] = lr_gather_partials(lw, R, l2[k], n, tile);
    }
    if (!lw->failed)
        lw_end_phase(lw);
    for (uint32_t k = 0; k < tiles2 && !lw->failed; k++) {
        uint64_t n = h2[k] - l2[k];
        if (!n)
            continue;
        uint32_t tile = lw_tile_of(lw, k);
        worker_set ws;
        if (!lw_workers_begin(lw, tile, KERNEL_REDUCE_COLS_WORDS, (n + 1) / 2, &ws))
            break;
        for (int w = 0; w < CODELET_WORKERS; w++) {
            uint64_t c0 = ws.lo[w] * 2, c1 = ws.hi[w] * 2 < n ? ws.hi[w] * 2 : n;
            kernel_reduce_cols_record(ws.rec[w], q[k] + (uint32_t)(c0 * 4), o[k] + (uint32_t)(c0 * 4), (uint32_t)R->nc,
                                      (uint32_t)(c1 > c0 ? c1 - c0 : 0), (uint32_t)n * 4, R->op2, scale, false);
        }
        lw_workers_run(lw, tile, lw->kernels.vtx_reduce_cols_f32, &ws);
        if (post < 0)
            continue;
        if (!lw_workers_begin(lw, tile, KERNEL_UNARY_WORDS, (n + 1) / 2, &ws))
            break;
        for (int w = 0; w < CODELET_WORKERS; w++) {
            uint64_t e0 = ws.lo[w] * 2, e1 = ws.hi[w] * 2 < n ? ws.hi[w] * 2 : n;
            kernel_unary_record(ws.rec[w], o[k] + (uint32_t)(e0 * 4), o[k] + (uint32_t)(e0 * 4),
                                (uint32_t)(e1 > e0 ? e1 - e0 : 0), post, 0, 0);
        }
        lw_workers_run(lw, tile, lw->kernels.vtx_unary_f32, &ws);
    }
    free(l2); free(h2); free(q); free(o);
    return !lw->failed;
}

/* A reduction of rows x cols (the view dims/mul) with rows longer than the
 * reduce codelet takes: the chunking, the ops of the two levels (a sum of
 * squares or of magnitudes sums its partials; a mean sums, then scales by
 * 1 / cols), and the passes. */
static bool reduce_long_rows(lowering *lw, const graph_node *n, int index, const int64_t *dims, const int64_t *mul,
                             int rank, uint64_t rows, uint64_t cols, int op, int pre, int post, const char *what)
{
    const uint64_t max_cols = KERNEL_REDUCE_MAX_COLS & ~1u;
    long_reduce R = { .dims = dims, .mul = mul, .rank = rank, .in = n->inputs[0], .out = n->outputs[0],
                      .op1 = op, .op2 = op, .pre = pre, .rows = rows, .cols = cols, .what = what };
    R.nc = (cols + max_cols - 1) / max_cols;
    R.cl = ((cols + R.nc - 1) / R.nc + 1) & ~(uint64_t)1;
    if (R.nc > KERNEL_REDUCE_COLS_MAX_ROWS || (R.nc - 1) * R.cl >= cols)
        return lw_unsupported(lw, n, index, "rows longer than two levels of the reduce codelets take");
    R.last = cols - (R.nc - 1) * R.cl;
    R.units = R.nc * rows;
    R.full = (R.nc - 1) * rows;
    float scale = 1;
    if (op == KERNEL_REDUCE_MEAN) {
        R.op1 = KERNEL_REDUCE_SUM;
        scale = 1.0f / (float)cols;
    } else if (op == KERNEL_REDUCE_SUMSQ || op == KERNEL_REDUCE_ABS_SUM) {
        R.op2 = KERNEL_REDUCE_SUM;
    }
    R.tiles = lw_plan_tiles(lw, R.units, 2, (double)R.cl * 2.0, 300);
    R.l = malloc(R.tiles * sizeof *R.l);
    R.h = malloc(R.tiles * sizeof *R.h);
    R.tile = calloc(R.tiles, sizeof *R.tile);
    R.src = calloc(R.tiles, sizeof *R.src);
    R.part = calloc(R.tiles, sizeof *R.part);
    bool ok = R.l && R.h && R.tile && R.src && R.part;
    if (ok) {
        lw_linear_split(R.units, 2, R.tiles, R.l, R.h);
        ok = lr_lower(lw, &R, post, scale);
    } else {
        lw_fail(lw, "out of host memory");
    }
    free(R.l); free(R.h); free(R.tile); free(R.src); free(R.part);
    return ok && !lw->failed;
}

/* A block of whole pixels of a channels-last image on one tile: rows of C
 * f32 at addr, and where its fold leaves its partial row. */
typedef struct pixel_block {
    uint32_t tile, addr, rows, partial;
} pixel_block;

/* The image's pixels as blocks on the tiles that hold them: the whole
 * pixels of each piece in place, a pixel split between pieces fetched
 * whole onto the tile of its first element (onto the op's next tile
 * instead where that one already has SPLIT_PIXELS_BYTES of them: an
 * output of a matmul holds a block of rows' starts); a block of at most
 * `most` rows.  NULL (lw failed) on no host memory. */
#define SPLIT_PIXELS_BYTES 16384u
static pixel_block *pixel_blocks(lowering *lw, int in, uint64_t c, uint64_t most, size_t *n_out)
{
    const ltensor *lt = &lw->tensor[in];
    size_t n = 0, cap = lt->n * 2 + 8;
    pixel_block *b = malloc(cap * sizeof *b);
    if (!b) {
        lw_fail(lw, "out of host memory");
        return NULL;
    }
    uint64_t *fetched = calloc(lw->program_tiles, sizeof *fetched);   /* bytes of split pixels a tile */
    if (!fetched) {
        free(b);
        lw_fail(lw, "out of host memory");
        return NULL;
    }
    uint32_t next = 0;
    for (size_t k = 0; k < lt->n && !lw->failed; k++) {
        const piece *p = &lt->p[k];
        uint64_t r0 = (p->first + c - 1) / c, r1 = (p->first + p->count) / c;
        for (uint64_t r = r0; r < r1; r += most) {
            if (n + 2 > cap && !(b = realloc(b, (cap *= 2) * sizeof *b))) {
                lw_fail(lw, "out of host memory");
                return NULL;
            }
            uint64_t rows = r1 - r < most ? r1 - r : most;
            b[n++] = (pixel_block){ p->tile, p->addr + (uint32_t)((r * c - p->first) * 4), (uint32_t)rows, 0 };
        }
        /* The pixel that starts in this piece and ends in a later one. */
        uint64_t end = p->first + p->count;
        if (end % c && end / c * c >= p->first) {
            if (n + 2 > cap && !(b = realloc(b, (cap *= 2) * sizeof *b))) {
                lw_fail(lw, "out of host memory");
                return NULL;
            }
            uint32_t tile = p->tile;
            for (uint32_t tries = 0; fetched[tile] + c * 4 > SPLIT_PIXELS_BYTES && tries < lw->tiles; tries++)
                tile = lw_tile_of(lw, next++ % lw->tiles);
            fetched[tile] += c * 4;
            uint32_t a = lw_fetch(lw, in, end / c * c, c, tile, PREFER_REGION1);
            if (a)
                b[n++] = (pixel_block){ tile, a, 1, 0 };
        }
    }
    free(fetched);
    *n_out = n;
    return b;
}

/* The op that combines a reduction's partials: a sum of sums (of
 * squares, of magnitudes, a mean's), else the op itself. */
static int combine_op(int op)
{
    return op == KERNEL_REDUCE_MAX || op == KERNEL_REDUCE_MIN || op == KERNEL_REDUCE_PROD ? op : KERNEL_REDUCE_SUM;
}

/* Worker records of vtx_reduce_cols_f32 over columns [0, c) of `rows`
 * rows at in (step c f32), into out: the workers share the columns in
 * pairs. */
static void fold_columns(lowering *lw, uint32_t tile, uint32_t in, uint32_t out, uint32_t rows, uint64_t c,
                         uint32_t in_step_bytes, int op, float scale)
{
    worker_set ws;
    if (!lw_workers_begin(lw, tile, KERNEL_REDUCE_COLS_WORDS, (c + 1) / 2, &ws))
        return;
    for (int w = 0; w < CODELET_WORKERS; w++) {
        uint64_t c0 = ws.lo[w] * 2, c1 = ws.hi[w] * 2 < c ? ws.hi[w] * 2 : c;
        kernel_reduce_cols_record(ws.rec[w], in + (uint32_t)(c0 * 4), out + (uint32_t)(c0 * 4), rows,
                                  (uint32_t)(c1 > c0 ? c1 - c0 : 0), in_step_bytes, op, scale, false);
    }
    lw_workers_run(lw, tile, lw->kernels.vtx_reduce_cols_f32, &ws);
}

/* Stage 1: each block folded on its tile into a partial row of C: the six
 * workers a share of its pixels each (a partial row each), then those rows
 * folded into one. */
static void fold_blocks(lowering *lw, pixel_block *b, size_t nb, uint64_t c, int op, int combine, const char *what)
{
    for (size_t k = 0; k < nb && !lw->failed; k++) {
        uint32_t nw = b[k].rows < CODELET_WORKERS ? b[k].rows : CODELET_WORKERS;
        /* one worker: its partial row is the block's, in the block's slot */
        uint32_t part = nw == 1 && b[k].partial ? b[k].partial
                                                : lw_scratch_alloc(lw, b[k].tile, nw * c * 4, PREFER_REGION1, 8, what);
        worker_set ws;
        if (!part || !lw_workers_begin(lw, b[k].tile, KERNEL_REDUCE_COLS_WORDS, b[k].rows, &ws))
            return;
        for (int w = 0; w < CODELET_WORKERS; w++)
            kernel_reduce_cols_record(ws.rec[w], b[k].addr + (uint32_t)(ws.lo[w] * c * 4),
                                      part + (uint32_t)((uint64_t)w * c * 4), (uint32_t)(ws.hi[w] - ws.lo[w]),
                                      (uint32_t)c, (uint32_t)c * 4, op, 1.0f, false);
        lw_workers_run(lw, b[k].tile, lw->kernels.vtx_reduce_cols_f32, &ws);
        if (nw > 1) {
            if (!b[k].partial)
                b[k].partial = lw_scratch_alloc(lw, b[k].tile, c * 4, PREFER_REGION1, 8, what);
            if (b[k].partial)
                fold_columns(lw, b[k].tile, part, b[k].partial, nw, c, (uint32_t)c * 4, combine, 1.0f);
        } else {
            b[k].partial = part;
        }
    }
}

static int cmp_block_tile(const void *x, const void *y)
{
    const pixel_block *a = x, *b = y;
    return a->tile != b->tile ? (a->tile < b->tile ? -1 : 1) : (a->addr < b->addr ? -1 : a->addr > b->addr);
}

/* The blocks of one tile given adjacent slots for their partial rows
 * (b[k].partial set, the blocks sorted by tile), so that fold_blocks'
 * rows of a tile fold into one there (merge_tile_partials). */
static void tile_slots(lowering *lw, pixel_block *b, size_t nb, uint64_t c, const char *what)
{
    qsort(b, nb, sizeof *b, cmp_block_tile);
    for (size_t k = 0; k < nb && !lw->failed;) {
        size_t e = k + 1;
        while (e < nb && b[e].tile == b[k].tile)
            e++;
        if (e - k > 1) {
            uint32_t rows = lw_scratch_alloc(lw, b[k].tile, (e - k) * c * 4, PREFER_REGION1, 8, what);
            for (size_t j = k; j < e && rows; j++)
                b[j].partial = rows + (uint32_t)((j - k) * c * 4);
        }
        k = e;
    }
}

/* A tile's partial rows (adjacent, tile_slots) folded into its first
 * block's: one block a tile is left; returns how many. */
static size_t merge_tile_partials(lowering *lw, pixel_block *b, size_t nb, uint64_t c, int combine,
                                  const char *what)
{
    size_t out = 0;
    for (size_t k = 0; k < nb && !lw->failed;) {
        size_t e = k + 1;
        while (e < nb && b[e].tile == b[k].tile)
            e++;
        pixel_block m = b[k];
        if (e - k > 1) {
            m.partial = lw_scratch_alloc(lw, b[k].tile, c * 4, PREFER_REGION1, 8, what);
            if (m.partial)
                fold_columns(lw, b[k].tile, b[k].partial, m.partial, (uint32_t)(e - k), c, (uint32_t)c * 4, combine,
                             1.0f);
        }
        b[out++] = m;
        k = e;
    }
    return out;
}

/* The most pieces one tile receives, and the most it sends, in one
 * exchange phase of a per-channel reduction's combine: with more partial
 * rows than this they are first folded in groups (PopLibs adds
 * intermediate stages to a reduction with many partials the same way). */
#define COMBINE_FAN_IN 64u
/* The fewest columns a tile of a group folds: narrower rows are folded
 * whole on one tile of the group, wider ones split over a few. */
#define COMBINE_MIN_SPAN 128u

/* The combine of the partial rows: the last stage's ranges of columns
 * (one a tile), and where range q of partial row j lies when that stage
 * begins (tile[j * tiles + q], its first column at addr[...]). */
typedef struct combine_plan {
    uint32_t tiles;
    uint64_t lo[COMBINE_FAN_IN], hi[COMBINE_FAN_IN];
    size_t rows;
    uint32_t *tile, *addr;
} combine_plan;

/* The group stage, for more blocks than COMBINE_FAN_IN: groups of
 * consecutive blocks (at most COMBINE_FAN_IN groups of at most
 * COMBINE_FAN_IN blocks: there are at most KERNEL_REDUCE_COLS_MAX_ROWS,
 * 64 x 64, blocks), each group's columns split over up to H of its
 * tiles along the last stage's ranges (H by COMBINE_MIN_SPAN, at most one
 * a block and one a range): every block sends each of them its columns
 * (one piece each), and each folds the group's rows of its columns
 * (combine).  P->rows are the groups. */
static void combine_in_groups(lowering *lw, const pixel_block *b, size_t nb, uint64_t c, combine_plan *P,
                              int combine, const char *what)
{
    const uint32_t T = P->tiles;
    const size_t groups = P->rows;
    const uint64_t by_width = (c + COMBINE_MIN_SPAN - 1) / COMBINE_MIN_SPAN;
    uint32_t *buf = calloc(groups * T, sizeof *buf);    /* holder i of group j: [j * T + i] */
    if (!buf) {
        lw_fail(lw, "out of host memory");
        return;
    }
    for (int pass = 0; pass < 2 && !lw->failed; pass++) {
        for (size_t j = 0; j < groups && !lw->failed; j++) {
            size_t k0 = j * nb / groups, k1 = (j + 1) * nb / groups, gj = k1 - k0;
            uint64_t h = gj < T ? gj : T;
            h = h < by_width ? h : by_width;
            for (uint32_t i = 0; i < h && !lw->failed; i++) {
                uint32_t qa = (uint32_t)(i * T / h), qb = (uint32_t)((i + 1) * T / h);
                uint64_t c0 = P->lo[qa], w = P->hi[qb - 1] - c0;
                uint32_t tile = b[k0 + i * gj / h].tile, *q = &buf[j * T + i];
                if (!w)
                    continue;
                if (pass == 0) {
                    /* the group's rows of columns [c0, c0 + w) received */
                    *q = lw_scratch_alloc(lw, tile, gj * w * 4, PREFER_REGION1, 8, what);
                    for (size_t k = k0; k < k1 && *q; k++) {
                        uint32_t src = b[k].partial + (uint32_t)(c0 * 4), dst = *q + (uint32_t)((k - k0) * w * 4);
                        if (b[k].tile == tile)
                            lw_add_local_copy(lw, tile, src, dst, (uint32_t)w * 4);
                        else
                            lw_add_transfer(lw, b[k].tile, src, tile, dst, (uint32_t)w * 4);
                    }
                    continue;
                }
                /* ... then folded into the group's partial of those columns */
                uint32_t row = lw_scratch_alloc(lw, tile, w * 4, PREFER_REGION1, 8, what);
                if (!row)
                    break;
                fold_columns(lw, tile, *q, row, (uint32_t)gj, w, (uint32_t)w * 4, combine, 1.0f);
                for (uint32_t r = qa; r < qb; r++) {
                    P->tile[j * T + r] = tile;
                    P->addr[j * T + r] = row + (uint32_t)((P->lo[r] - c0) * 4);
                }
            }
        }
        if (pass == 0 && !lw->failed)
            lw_end_phase(lw);
    }
    free(buf);
}

/* The last stage: each tile receives its range of columns of every
 * partial row and folds them into its piece of the output (a mean scales
 * by 1 / m there). */
static void combine_last(lowering *lw, const combine_plan *P, int out, int op, uint64_t m, const char *what)
{
    uint32_t buf[COMBINE_FAN_IN];
    for (uint32_t q = 0; q < P->tiles && !lw->failed; q++) {
        uint64_t cw = P->hi[q] - P->lo[q];
        uint32_t tile = lw_tile_of(lw, q);
        buf[q] = cw ? lw_scratch_alloc(lw, tile, P->rows * cw * 4, PREFER_REGION1, 8, what) : 0;
        for (size_t j = 0; j < P->rows && buf[q]; j++) {
            uint32_t from = P->tile[j * P->tiles + q], src = P->addr[j * P->tiles + q];
            uint32_t dst = buf[q] + (uint32_t)(j * cw * 4);
            if (from == tile)
                lw_add_local_copy(lw, tile, src, dst, (uint32_t)cw * 4);
            else
                lw_add_transfer(lw, from, src, tile, dst, (uint32_t)cw * 4);
        }
    }
    if (!lw->failed)
        lw_end_phase(lw);
    int combine = combine_op(op);
    for (uint32_t q = 0; q < P->tiles && !lw->failed; q++) {
        uint64_t cw = P->hi[q] - P->lo[q];
        if (!cw)
            continue;
        uint32_t tile = lw_tile_of(lw, q);
        uint32_t o = lw_tensor_alloc(lw, out, tile, cw * 4, PREFER_REGION1, 8, false, what);
        if (!o || !lw_add_piece(lw, out, tile, o, P->lo[q], cw))
            break;
        fold_columns(lw, tile, buf[q], o, (uint32_t)P->rows, cw, (uint32_t)cw * 4,
                     op == KERNEL_REDUCE_MEAN ? KERNEL_REDUCE_MEAN : combine, 1.0f / (float)m);
    }
}

/* The combine of nb partial rows of c columns: the last stage's ranges
 * (at most COMBINE_FAN_IN tiles), the group stage first when there are
 * more rows than COMBINE_FAN_IN, then the last stage. */
static void combine_partials(lowering *lw, const pixel_block *b, size_t nb, uint64_t c, int out, int op,
                             uint64_t m, const char *what)
{
    combine_plan P = { .rows = nb };
    if (nb > COMBINE_FAN_IN) {
        size_t per = (nb + COMBINE_FAN_IN - 1) / COMBINE_FAN_IN;
        P.rows = (nb + per - 1) / per;
    }
    P.tiles = lw_plan_tiles(lw, c, 2, (double)P.rows * 2.0, 300);
    if (P.tiles > COMBINE_FAN_IN)
        P.tiles = COMBINE_FAN_IN;
    lw_linear_split(c, 2, P.tiles, P.lo, P.hi);
    P.tile = calloc(P.rows * P.tiles, sizeof *P.tile);
    P.addr = calloc(P.rows * P.tiles, sizeof *P.addr);
    if (!P.tile || !P.addr) {
        lw_fail(lw, "out of host memory");
    } else if (nb > COMBINE_FAN_IN) {
        int combine = combine_op(op);
        combine_in_groups(lw, b, nb, c, &P, combine, what);
    } else {
        for (size_t k = 0; k < nb; k++)
            for (uint32_t q = 0; q < P.tiles; q++) {
                P.tile[k * P.tiles + q] = b[k].tile;
                P.addr[k * P.tiles + q] = b[k].partial + (uint32_t)(P.lo[q] * 4);
            }
    }
    if (!lw->failed)
        combine_last(lw, &P, out, op, m, what);
    free(P.tile);
    free(P.addr);
}

/* A reduction over N, H and W of an image kept channels-last
 * (lower_layout.c): in the stored order, the columns of an [N H W, C]
 * matrix folded over its rows, at the speed of a reduction over rows.
 * Stage 1 where the image lies, no exchange (fold_blocks); then the
 * blocks' partial rows combined (combine_partials): with more of them
 * than COMBINE_FAN_IN, folded in groups first; the last stage splits the
 * C results over at most COMBINE_FAN_IN tiles, each receiving its columns
 * of every partial row and folding them. */
static bool reduce_columns(lowering *lw, const graph_node *n, int index, int op, uint64_t m, uint64_t c);

static bool reduce_channels_last(lowering *lw, const graph_node *n, int index, int op)
{
    const graph *g = lw->g;
    const graph_shape *s = &g->tensors[n->inputs[0]].shape;
    uint64_t c = (uint64_t)s->dims[1], m = (uint64_t)(graph_shape_numel(s) / s->dims[1]);
    if (!lw_reduce_reads_nhwc(g, n) || c == 0 || m == 0)
        return lw_unsupported(lw, n, index, "a reduction of a channels-last image other than over N, H and W");
    return reduce_columns(lw, n, index, op, m, c);
}

/* The columns of the input seen as an [m, c] matrix folded over its m
 * rows, where its rows lie (reduce_channels_last's stages). */
static bool reduce_columns(lowering *lw, const graph_node *n, int index, int op, uint64_t m, uint64_t c)
{
    const graph *g = lw->g;
    int in = n->inputs[0], out = n->outputs[0];
    int first = op == KERNEL_REDUCE_MEAN ? KERNEL_REDUCE_SUM : op;
    int combine = combine_op(op);
    char what[96];
    snprintf(what, sizeof what, "tensor '%s'", g->tensors[out].name);
    size_t nb = 0;
    pixel_block *b = pixel_blocks(lw, in, c, (uint64_t)KERNEL_REDUCE_COLS_MAX_ROWS * CODELET_WORKERS, &nb);
    if (!b)
        return false;
    if (!lw->failed)
        lw_end_phase(lw);
    /* a tile's blocks folded into one partial row: a block a tile */
    tile_slots(lw, b, nb, c, what);
    fold_blocks(lw, b, nb, c, first, combine, what);
    nb = merge_tile_partials(lw, b, nb, c, combine, what);
    if (nb > KERNEL_REDUCE_COLS_MAX_ROWS) {
        free(b);
        return lw_unsupported(lw, n, index, "an input on more tiles than the reduce codelet folds");
    }
    if (!lw->failed)
        combine_partials(lw, b, nb, c, out, op, m, what);
    free(b);
    return !lw->failed;
}

/* ---- a leading reduction of blocks -------------------------------------------------------- */

/* A reduction over the leading axes of an input kept in blocks (a
 * matmul's output, the element-wise ops after it), as PopLibs' reduce
 * does it: the [m, c] matrix's rows cut where its pieces are, the rows of
 * a column range on one tile with one step between them a block, each
 * block folded where it lies (vtx_reduce_cols_f32 with the block's row
 * step) into a partial row of its range; then each range of columns the
 * partials cover alike goes to one of their tiles, which receives the
 * others' slices and folds them into its piece of the output.  A column
 * of a decoder's [160, 30522] logits gradient laid out by a 1 x 477 x 3
 * grid has three partials, its bias gradient three receives a tile; fetched
 * a column at a time onto the tiles (the path below) it took thousands.
 * Taken when a tile has at most SEGMENT_BLOCKS_A_TILE blocks and a column
 * at most COMBINE_FAN_IN partials; false (nothing emitted) otherwise. */
#define SEGMENT_BLOCKS_A_TILE 16u

typedef struct seg_block {
    uint32_t tile, addr, step, rows;   /* rows of [j0, j1) at addr, step bytes apart */
    uint64_t r0, j0, j1;
    uint32_t partial;                  /* its folded row (addr itself for one row) */
} seg_block;

static int cmp_seg(const void *x, const void *y)
{
    const seg_block *a = x, *b = y;
    if (a->tile != b->tile)
        return a->tile < b->tile ? -1 : 1;
    if (a->j0 != b->j0)
        return a->j0 < b->j0 ? -1 : 1;
    if (a->j1 != b->j1)
        return a->j1 < b->j1 ? -1 : 1;
    return a->r0 < b->r0 ? -1 : a->r0 > b->r0;
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/* The input's rows cut into row segments, joined into blocks (sorted by
 * tile, range and row); NULL when lw failed. */
static seg_block *segment_blocks(lowering *lw, int in, uint64_t c, size_t *n_out)
{
    const ltensor *lt = &lw->tensor[in];
    size_t n = 0, cap = lt->n + 16;
    seg_block *b = malloc(cap * sizeof *b);
    for (size_t k = 0; k < lt->n && b; k++) {
        const piece *p = &lt->p[k];
        for (uint64_t e = p->first; e < p->first + p->count && b;) {
            uint64_t r = e / c, end = (r + 1) * c < p->first + p->count ? (r + 1) * c : p->first + p->count;
            if (n == cap && !(b = realloc(b, (cap *= 2) * sizeof *b)))
                break;
            b[n++] = (seg_block){ p->tile, p->addr + (uint32_t)((e - p->first) * 4), 0, 1, r, e - r * c, end - r * c, 0 };
            e = end;
        }
    }
    if (!b) {
        lw_fail(lw, "out of host memory");
        return NULL;
    }
    qsort(b, n, sizeof *b, cmp_seg);
    size_t m = 0;
    for (size_t k = 0; k < n; k++) {
        seg_block *l = m ? &b[m - 1] : NULL;
        bool next_row = l && l->tile == b[k].tile && l->j0 == b[k].j0 && l->j1 == b[k].j1 &&
                        b[k].r0 == l->r0 + l->rows && l->rows < KERNEL_REDUCE_COLS_MAX_ROWS && b[k].addr > l->addr;
        if (next_row && l->rows == 1) {
            l->step = b[k].addr - l->addr;
            l->rows++;
        } else if (next_row && b[k].addr == l->addr + l->step * l->rows) {
            l->rows++;
        } else {
            b[m++] = b[k];
        }
    }
    *n_out = m;
    return b;
}

/* Index q of value v in the sorted cut[0 .. n). */
static size_t cut_index(const uint64_t *cut, size_t n, uint64_t v)
{
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (cut[mid] <= v)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* One level of the combine: range q's sources src[off[q] .. off[q + 1])
 * (tile, address of the range's first column) gathered in groups of at
 * most COMBINE_FAN_IN onto one tile of each group (rotated by the range,
 * so that the ranges' folds spread over their tiles) and folded: into the
 * output's piece when the range has one group (last), else into a new
 * partial, the next level's source.  One exchange phase, then the folds. */
typedef struct seg_source {
    uint32_t tile, addr;
} seg_source;

static bool combine_level(lowering *lw, const uint64_t *cut, size_t nr, size_t *off, seg_source *src, int out,
                          int combine, int last, uint64_t m, bool final, const char *what)
{
    /* per group (at its first source's index): the tile it is gathered
     * on, and where */
    size_t total = off[nr - 1];
    uint32_t *owner = calloc(2 * (total + 1), sizeof *owner), *buf = owner + total + 1;
    if (!owner)
        return lw_fail(lw, "out of host memory");
    for (size_t q = 0; q + 1 < nr && !lw->failed; q++) {
        uint64_t w = cut[q + 1] - cut[q];
        size_t np = off[q + 1] - off[q], groups = (np + COMBINE_FAN_IN - 1) / COMBINE_FAN_IN;
        if (!final && np <= COMBINE_FAN_IN)
            continue;                                 /* waits for the last level */
        for (size_t gi = 0; gi < groups && !lw->failed; gi++) {
            size_t i0 = off[q] + gi * np / groups, i1 = off[q] + (gi + 1) * np / groups;
            uint32_t to = owner[i0] = src[i0 + (q + gi) % (i1 - i0)].tile;
            uint32_t at = buf[i0] = lw_scratch_alloc(lw, to, (i1 - i0) * w * 4, PREFER_REGION1, 8, what);
            for (size_t i = i0; i < i1 && at; i++) {
                uint32_t dst = at + (uint32_t)((i - i0) * w * 4);
                if (src[i].tile == to)
                    lw_add_local_copy(lw, to, src[i].addr, dst, (uint32_t)w * 4);
                else
                    lw_add_transfer(lw, src[i].tile, src[i].addr, to, dst, (uint32_t)w * 4);
            }
        }
    }
    if (!lw->failed)
        lw_end_phase(lw);
    size_t n_next = 0;
    for (size_t q = 0; q + 1 < nr && !lw->failed; q++) {
        uint64_t w = cut[q + 1] - cut[q];
        size_t np = off[q + 1] - off[q], groups = (np + COMBINE_FAN_IN - 1) / COMBINE_FAN_IN;
        size_t first_next = n_next;
        if (!final && np <= COMBINE_FAN_IN) {
            memmove(&src[n_next], &src[off[q]], np * sizeof *src);
            n_next += np;
            off[q] = first_next;
            continue;
        }
        for (size_t gi = 0; gi < groups && !lw->failed; gi++) {
            size_t i0 = off[q] + gi * np / groups, i1 = off[q] + (gi + 1) * np / groups;
            uint32_t to = owner[i0], o;
            if (groups == 1) {
                o = lw_tensor_alloc(lw, out, to, w * 4, PREFER_REGION1, 8, false, what);
                if (!o || !lw_add_piece(lw, out, to, o, cut[q], w))
                    break;
            } else if (!(o = lw_scratch_alloc(lw, to, w * 4, PREFER_REGION1, 8, what))) {
                break;
            }
            fold_columns(lw, to, buf[i0], o, (uint32_t)(i1 - i0), w, (uint32_t)w * 4, groups == 1 ? last : combine,
                         1.0f / (float)m);
            src[n_next++] = (seg_source){ to, o };       /* n_next <= i0: the next level's sources */
        }
        off[q] = first_next;
    }
    off[nr - 1] = n_next;
    free(owner);
    return !lw->failed;
}

static bool reduce_segments(lowering *lw, const graph_node *n, int op, uint64_t m, uint64_t c, bool columns_ok)
{
    const graph *g = lw->g;
    int in = n->inputs[0], out = n->outputs[0];
    const int first = op == KERNEL_REDUCE_MEAN ? KERNEL_REDUCE_SUM : op, combine = combine_op(op);
    const int last = op == KERNEL_REDUCE_MEAN ? KERNEL_REDUCE_MEAN : combine;
    size_t nb = 0;
    seg_block *b = segment_blocks(lw, in, c, &nb);
    if (!b)
        return false;
    /* the ranges: between the blocks' column boundaries */
    uint64_t *cut = malloc((2 * nb + 2) * sizeof *cut);
    if (!cut) {
        free(b);
        return lw_fail(lw, "out of host memory");
    }
    size_t nc = 0;
    bool ok = true;
    for (size_t k = 0, run = 0; k < nb; k++) {
        run = k && b[k].tile == b[k - 1].tile ? run + 1 : 1;
        ok = ok && run <= SEGMENT_BLOCKS_A_TILE;
        cut[nc++] = b[k].j0;
        cut[nc++] = b[k].j1;
    }
    qsort(cut, nc, sizeof *cut, cmp_u64);
    size_t nr = 0;
    for (size_t k = 0; k < nc; k++)
        if (!nr || cut[k] != cut[nr - 1])
            cut[nr++] = cut[k];
    ok = ok && nr > 1 && cut[0] == 0 && cut[nr - 1] == c;
    /* ranges no wider than an even share of the columns over the tiles
     * (at least COMBINE_MIN_SPAN): whole rows on tiles are combined by
     * many tiles, a slice of the columns each */
    const uint64_t span = (c + lw->tiles - 1) / lw->tiles > COMBINE_MIN_SPAN ? (c + lw->tiles - 1) / lw->tiles
                                                                            : COMBINE_MIN_SPAN;
    size_t more = 0;
    for (size_t q = 0; q + 1 < nr && ok; q++)
        more += (cut[q + 1] - cut[q] - 1) / span;
    if (ok && more) {
        uint64_t *wide = malloc((nr + more) * sizeof *wide);
        if (!wide) {
            free(b);
            free(cut);
            return lw_fail(lw, "out of host memory");
        }
        size_t w = 0;
        for (size_t q = 0; q + 1 < nr; q++)
            for (uint64_t at = cut[q]; at < cut[q + 1]; at += span)
                wide[w++] = at;
        wide[w++] = c;
        free(cut);
        cut = wide;
        nr = w;
    }
    /* per range, the rows of the blocks covering it (all m of them) and
     * their count, then the blocks as sources (off: where a range's
     * start, CSR) */
    size_t *off = ok ? calloc(nr + 1, sizeof *off) : NULL;
    uint64_t *rows = ok ? calloc(nr, sizeof *rows) : NULL;
    size_t total = 0;
    if (ok && (!off || !rows))
        ok = lw_fail(lw, "out of host memory");
    for (size_t k = 0; k < nb && ok; k++)
        for (size_t q = cut_index(cut, nr, b[k].j0); q + 1 < nr && cut[q] < b[k].j1; q++) {
            rows[q] += b[k].rows;
            off[q + 1]++;
            total++;
        }
    for (size_t q = 0; q + 1 < nr && ok; q++)
        ok = rows[q] == m;
    /* a layout of whole rows on tiles (more than COMBINE_FAN_IN blocks a
     * range on average) folds better as pixels where it may (reduce_columns) */
    ok = ok && (total <= (nr - 1) * COMBINE_FAN_IN || !columns_ok);
    seg_source *src = ok ? malloc((total + 1) * sizeof *src) : NULL;
    size_t *fill = ok ? calloc(nr, sizeof *fill) : NULL;
    if (ok && (!src || !fill))
        ok = lw_fail(lw, "out of host memory");
    if (ok && !lw->failed) {
        for (size_t q = 0; q + 1 < nr; q++)
            off[q + 1] += off[q];
        char what[96];
        snprintf(what, sizeof what, "tensor '%s'", g->tensors[out].name);
        /* Stage 1: each block of several rows folded where it lies. */
        for (size_t k = 0; k < nb && !lw->failed; k++) {
            uint64_t w = b[k].j1 - b[k].j0;
            uint32_t part = b[k].addr;
            if (b[k].rows > 1 && (part = lw_scratch_alloc(lw, b[k].tile, w * 4, PREFER_REGION1, 8, what)) != 0)
                fold_columns(lw, b[k].tile, b[k].addr, part, b[k].rows, w, b[k].step, first, 1.0f);
            for (size_t q = cut_index(cut, nr, b[k].j0); q + 1 < nr && cut[q] < b[k].j1; q++)
                src[off[q] + fill[q]++] = (seg_source){ b[k].tile, part + (uint32_t)((cut[q] - b[k].j0) * 4) };
        }
        /* Then the ranges' partials combined, a level at a time. */
        bool final = false;
        while (!final && !lw->failed) {
            final = true;
            for (size_t q = 0; q + 1 < nr; q++)
                final = final && off[q + 1] - off[q] <= COMBINE_FAN_IN;
            combine_level(lw, cut, nr, off, src, out, combine, last, m, final, what);
        }
    }
    free(b);
    free(cut);
    free(off);
    free(rows);
    free(src);
    free(fill);
    return ok && !lw->failed;
}

/* Reductions over any axes (ReduceSum, Mean, Max, Min, Prod, SumSquare,
 * L1, L2, LogSum, LogSumExp): the input seen with the kept axes first and
 * the reduced ones last is fetched as rows of the reduced elements (a row
 * an output element; rows padded to an even length so that they stay
 * 8-byte aligned), then the reduce codelet, with a unary pass before it
 * (e^x) or after it (sqrt, log) for the forms it has no op for. */
#define REDUCE_COLUMNS_MAX 4096u
#define REDUCE_COLUMNS_MIN_ROWS 32u

/* Whether every reduced axis comes before every kept one. */
static bool reduced_axes_lead(const graph_shape *s, const bool *reduced)
{
    for (int d = 0, seen_kept = 0; d < s->rank; d++) {
        if (!reduced[d])
            seen_kept = 1;
        else if (seen_kept)
            return false;
    }
    return true;
}

bool lw_lower_reduce(lowering *lw, const graph_node *n, int index)
{
    const graph *g = lw->g;
    int in = n->inputs[0], out = n->outputs[0];
    const graph_shape *s = &g->tensors[in].shape;
    if (g->tensors[in].dtype != GDT_F32)
        return lw_unsupported(lw, n, index, "only f32 is supported");
    bool reduced[GRAPH_MAX_RANK] = { false };
    char err[256];
    if (!ops_reduce_axes(g, n, reduced, err, sizeof err))
        return lw_unsupported(lw, n, index, err);
    int op, pre = -1, post = -1;
    switch (n->op) {
    case GRAPH_OP_REDUCESUM: op = KERNEL_REDUCE_SUM; break;
    case GRAPH_OP_REDUCEMEAN: op = KERNEL_REDUCE_MEAN; break;
    case GRAPH_OP_REDUCEMAX: op = KERNEL_REDUCE_MAX; break;
    case GRAPH_OP_REDUCEMIN: op = KERNEL_REDUCE_MIN; break;
    case GRAPH_OP_REDUCEPROD: op = KERNEL_REDUCE_PROD; break;
    case GRAPH_OP_REDUCESUMSQUARE: op = KERNEL_REDUCE_SUMSQ; break;
    case GRAPH_OP_REDUCEL1: op = KERNEL_REDUCE_ABS_SUM; break;
    case GRAPH_OP_REDUCEL2: op = KERNEL_REDUCE_SUMSQ, post = KERNEL_UNARY_SQRT; break;
    case GRAPH_OP_REDUCELOGSUM: op = KERNEL_REDUCE_SUM, post = KERNEL_UNARY_LOG; break;
    case GRAPH_OP_REDUCELOGSUMEXP: op = KERNEL_REDUCE_SUM, pre = KERNEL_UNARY_EXP, post = KERNEL_UNARY_LOG; break;
    default: return lw_unsupported(lw, n, index, "no lowering for this reduction yet");
    }
    if (lw->tensor[in].permuted) {
        if (pre >= 0 || post >= 0)
            return lw_unsupported(lw, n, index, "this reduction of a channels-last image");
        return reduce_channels_last(lw, n, index, op);
    }
    /* The view: kept axes, then reduced axes. */
    int64_t st[GRAPH_MAX_RANK], dims[GRAPH_MAX_RANK], mul[GRAPH_MAX_RANK];
    lw_row_major_strides(s, st);
    int rank = 0;
    uint64_t cols = 1, rows = 1;
    bool trailing = true;
    for (int pass = 0; pass < 2; pass++)
        for (int d = 0; d < s->rank; d++)
            if (reduced[d] == (pass == 1)) {
                if (rank != d)
                    trailing = false;
                dims[rank] = s->dims[d];
                mul[rank++] = st[d];
                if (pass)
                    cols *= (uint64_t)s->dims[d];
                else
                    rows *= (uint64_t)s->dims[d];
            }
    if (!rows)
        return lw_unsupported(lw, n, index, "an empty output");
    if (!cols)
        return lw_unsupported(lw, n, index, "a reduction over no elements");
    /* Reduced axes first, kept ones after: the columns of a [cols, rows]
     * matrix folded where its rows lie (a bias's gradient), not each output
     * element's strided column fetched onto one tile (a receive an input
     * row); rows of at most REDUCE_COLUMNS_MAX (a row split between tiles
     * is fetched whole), and at least REDUCE_COLUMNS_MIN_ROWS of them (a
     * few strided receives cost less than the stages). */
    bool reduced_first = !trailing && pre < 0 && post < 0 && rows > 1 && reduced_axes_lead(s, reduced);
    bool leading = reduced_first && rows <= REDUCE_COLUMNS_MAX && cols >= REDUCE_COLUMNS_MIN_ROWS;
    if (reduced_first && reduce_segments(lw, n, op, cols, rows, leading))
        return true;
    if (lw->failed)
        return false;
    if (leading)
        return reduce_columns(lw, n, index, op, cols, rows);
    const uint64_t padded = (cols + 1) & ~(uint64_t)1;
    /* The reduced elements in place: no copy needed. */
    const bool direct = trailing && padded == cols && pre < 0;
    char what[96];
    snprintf(what, sizeof what, "tensor '%s'", g->tensors[out].name);
    if (cols > KERNEL_REDUCE_MAX_COLS)
        return reduce_long_rows(lw, n, index, dims, mul, rank, rows, cols, op, pre, post, what);
    /* Whole rows per tile, two rows at least (8-byte aligned outputs). */
    uint32_t tiles = lw_plan_tiles(lw, rows, 2, (double)cols * (direct ? 0.6 : 2.0), 300);
    uint64_t *l = malloc(tiles * sizeof *l), *h = malloc(tiles * sizeof *h);
    uint32_t *src = calloc(tiles, sizeof *src);
    if (!l || !h || !src) {
        free(l);
        free(h);
        free(src);
        return lw_fail(lw, "out of host memory");
    }
    lw_linear_split(rows, 2, tiles, l, h);
    for (uint32_t t = 0; t < tiles && !lw->failed; t++) {
        if (h[t] == l[t])
            continue;
        uint32_t tile = lw_tile_of(lw, t);
        if (direct) {
            src[t] = lw_fetch(lw, in, l[t] * cols, (h[t] - l[t]) * cols, tile, PREFER_REGION1);
        } else {
            src[t] = lw_scratch_alloc(lw, tile, (h[t] - l[t]) * padded * 4, PREFER_REGION1, 8, what);
            if (src[t])
                fetch_view_rows(lw, in, dims, mul, rank, l[t], h[t] - l[t], cols, tile, src[t],
                                (uint32_t)padded * 4);
        }
    }
    if (!lw->failed)
        lw_end_phase(lw);
    for (uint32_t ti = 0; ti < tiles && !lw->failed; ti++) {
        uint32_t t = lw_tile_of(lw, ti);
        uint64_t nrows = h[ti] - l[ti];
        if (!nrows)
            continue;
        uint32_t o = lw_tensor_alloc(lw, out, t, nrows * 4, PREFER_REGION1, 8, false, what);
        if (!o)
            break;
        lw_add_piece(lw, out, t, o, l[ti], nrows);
        worker_set ws;
        if (pre >= 0) {
            /* In place over the fetched rows (padding included: never read
             * into a result). */
            if (!lw_workers_begin(lw, t, KERNEL_UNARY_WORDS, nrows * padded / 2, &ws))
                break;
            for (int w = 0; w < CODELET_WORKERS; w++)
                kernel_unary_record(ws.rec[w], src[ti] + (uint32_t)(ws.lo[w] * 8), src[ti] + (uint32_t)(ws.lo[w] * 8),
                                    (uint32_t)((ws.hi[w] - ws.lo[w]) * 2), pre, 0, 0);
            lw_workers_run(lw, t, lw->kernels.vtx_unary_f32, &ws);
        }
        if (!lw_workers_begin(lw, t, KERNEL_REDUCE_WORDS, (nrows + 1) / 2, &ws))
            break;
        for (int w = 0; w < CODELET_WORKERS; w++) {
            uint64_t r0 = ws.lo[w] * 2, r1 = ws.hi[w] * 2 < nrows ? ws.hi[w] * 2 : nrows;
            kernel_reduce_record(ws.rec[w], src[ti] + (uint32_t)(r0 * padded * 4), o + (uint32_t)(r0 * 4),
                                 (uint32_t)(r1 > r0 ? r1 - r0 : 0), (uint32_t)cols, (uint32_t)padded * 4, op,
                                 1.0f / (float)cols);
        }
        lw_workers_run(lw, t, lw->kernels.vtx_reduce_rows_f32, &ws);
        if (post >= 0) {
            if (!lw_workers_begin(lw, t, KERNEL_UNARY_WORDS, (nrows + 1) / 2, &ws))
                break;
            for (int w = 0; w < CODELET_WORKERS; w++) {
                uint64_t e0 = ws.lo[w] * 2, e1 = ws.hi[w] * 2 < nrows ? ws.hi[w] * 2 : nrows;
                kernel_unary_record(ws.rec[w], o + (uint32_t)(e0 * 4), o + (uint32_t)(e0 * 4),
                                    (uint32_t)(e1 > e0 ? e1 - e0 : 0), post, 0, 0);
            }
            lw_workers_run(lw, t, lw->kernels.vtx_unary_f32, &ws);
        }
    }
    free(src);
    free(l);
    free(h);
    return !lw->failed;
}

