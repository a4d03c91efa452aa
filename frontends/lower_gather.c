/*
 * lower_gather.c — Gather whose indices are computed at run time (the
 * embedding lookup of BERT's token ids), and its gradient GatherGrad (the
 * scatter-add, at the end of the file): ONNX Gather on axis 0 of a table
 * data [V, D...] with indices of any shape (i32 or i64), out =
 * indices.shape + data.shape[1:]; rows of any element type that are whole
 * 32-bit words (f32, f16 with an even row, i32, ...); partials summed in
 * f32 and f16.
 *
 * The plan is Poplar's multiSlice: the table is cut into C column slices
 * of w elements and R row ranges, one block a tile (C x R table tiles);
 * the indices are fetched to every table tile (one piece taken by many
 * tiles: the exchange sends it once, lw_end_phase's multicast); each table
 * tile runs vtx_gather_range (workloads/codelets/embedding.h) on all N
 * indices into a partial [N x its slice], rows it holds copied and the
 * others zeroed.  The output is placed in whole rows on other tiles; an
 * output tile receives, from every table tile, the rows of the partial it
 * owns (one block per table tile, contiguous on both sides) and then
 *   - with R = 1 copies each slice into place (vtx_copy: bit-exact), or
 *   - with R > 1 sums the R partials of each slice: exactly one of them
 *     is the row, the others zeros.  An f32 table's partials are summed
 *     by vtx_reduce_cols_f32 (SUM): the result is the row except that a
 *     looked-up -0.0 comes out as +0.0, a denormal as 0 (the tile's f32
 *     arithmetic flushes them) and a NaN as the tile's quiet NaN.  An f16
 *     table's (rows and slices whole groups of 8 elements) are summed as
 *     PopLibs reduces half partials, in f32 from +0 and rounded back to
 *     f16 (vtx_reduce_partials_f16): the row exactly, except -0.0 as +0.0
 *     and an infinity or NaN as the tile's quiet NaN.  Other types are
 *     not summed: their table is split by columns only.
 * A table that fits one tile with its output is gathered straight into
 * the output (no second exchange).  Other axes a > 0 (data seen as
 * [outer][V][D], one axis-0 lookup per outer index) are lowered only that
 * way, the whole table on one tile.
 *
 * The split is chosen by an estimate of tile cycles (gather, exchange
 * steps and bytes, the copy or sum compute sets) over slice widths and
 * output tile counts, the table's rows split as little as tile memory
 * allows (fewer partials to sum); a plan that copies is taken over one
 * that sums unless the sum is more than 5% faster.  When no plan fits all
 * N indices, the lookup runs in passes of fewer (halved until a plan with
 * output tiles fits), each the phases below for its indices and its rows
 * of the output, the table's blocks placed once; when none fits even so,
 * the smallest plan is lowered anyway and tile memory gives its "does not
 * fit" error.
 *
 * i64 indices: the codelet reads i32 indices.  Each table tile receives
 * the i64 indices and narrows them in place with vtx_transpose_f32 (word
 * copies): the N x 2 words seen as a matrix, transposed, give the N low
 * words in a row.  An index outside [-2^31, 2^31) is out of range for any
 * table this lowering takes (V <= 2^31) and its low word is taken as it
 * is, as a hardware lookup of 32-bit indices would: such an index is not
 * detected unless its low word is also out of range.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower_internal.h"
#include "ops_impl.h"

/* Supervisor tile cycles of one exchange step (ctl_send / ctl_recv: seven
 * supervisor instructions, one issue every six tile cycles). */
#define GATHER_STEP_CYCLES 42.0
/* A compute set's supervisor start-up and its workers' record loads. */
#define GATHER_SET_CYCLES 100.0
/* The most row ranges' partials of a slice an output tile sums: more are
 * summed in groups of this many first, on the table tiles (sum_groups). */
#define GATHER_FAN_IN 16u
/* The table block a tile may take beyond its share of the table. */
#define GATHER_BLOCK_BYTES 32768u

typedef struct gather_plan {
    uint64_t w;            /* slice width in elements (the last slice may be narrower) */
    uint32_t c, r;         /* column slices, row ranges: c x r table tiles */
    uint32_t out_tiles;    /* 0: direct, the single table tile holds the output */
    double cycles;         /* estimated tile cycles of the whole op */
    uint64_t mem_bytes;    /* the most a tile needs */
    bool sums;
} gather_plan;

typedef struct gather_shape {
    uint64_t v, d, n;      /* table rows, elements a row, indices */
    uint32_t eb, ieb;      /* bytes an element of data, of indices */
    bool computed;         /* the table is made at run time (else a constant) */
    bool can_sum;          /* f32, or f16 with D a multiple of 8: partials may be summed */
    bool f16_sums;         /* summed as f16 (vtx_reduce_partials_f16): slices of 8k elements */
} gather_shape;

/* The elements a sum record's columns come in: groups of 8 for f16
 * (vtx_reduce_partials_f16's COLS), pairs for f32. */
static uint64_t sum_unit(const gather_shape *s) { return s->f16_sums ? 8 : 2; }

/* Whether a plan whose slices are w wide may sum its partials. */
static bool sums_at(const gather_shape *s, uint64_t w)
{
    return s->can_sum && (!s->f16_sums || w % 8 == 0);
}

/* Tile cycles a partial element summed over `parts` partials: the f32
 * codelet's general path, 1.5 an element; the f16 one's paced loop, 13 +
 * R issues a group of 8 columns a worker (rowwise.h), six workers. */
static double sum_cycles_per_element(const gather_shape *s, uint64_t parts)
{
    return s->f16_sums ? (13.0 + (double)parts) / (8.0 * (double)parts) : 1.5;
}

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* Bytes of the i32 index buffer a table tile needs (i64: the raw indices
 * and their transpose, the low words first). */
static uint64_t index_bytes(const gather_shape *s)
{
    uint64_t even = (s->n + 1) & ~(uint64_t)1;
    return s->ieb == 8 ? s->n * 8 + even * 8 : s->n * 4;
}

/* Estimate of a plan with output tiles `out_tiles` (0: direct); fills
 * cycles and mem_bytes. */
static void estimate(const gather_shape *s, gather_plan *p, uint32_t tiles)
{
    uint64_t rows_here = ceil_div(s->v, p->r);
    uint64_t slice_bytes = p->w * s->eb;
    double pairs = (double)ceil_div(slice_bytes, 8);
    double n = (double)s->n;
    /* Indices in (and narrowed: 3 issues a word of the transpose). */
    double cycles = n * s->ieb / 4.0 + (s->ieb == 8 ? 6.0 * n : 0) + GATHER_SET_CYCLES;
    /* vtx_gather_range (embedding.h): 12 + P a row, 2 + P more for each
     * row held here (about N / R of them). */
    cycles += GATHER_SET_CYCLES + n * (12.0 + pairs) + n / p->r * (2.0 + pairs);
    if (s->computed && p->c > 1)
        cycles += (double)rows_here * GATHER_STEP_CYCLES;   /* a transfer a table row */
    uint64_t table_tile = rows_here * slice_bytes + index_bytes(s) + 3 * CODELET_READ_SLACK_BYTES;
    if (!p->out_tiles) {
        p->cycles = cycles;
        p->mem_bytes = table_tile + s->n * s->d * s->eb;
        return;
    }
    uint64_t nrows = ceil_div(s->n, p->out_tiles);
    table_tile += s->n * slice_bytes;                          /* the partial */
    /* More row ranges than GATHER_FAN_IN: each table tile first sums its
     * share of the rows of its group's partials (sum_groups), and an
     * output tile takes a slice's rows from a tile or two of each group. */
    uint64_t parts = p->r > GATHER_FAN_IN ? ceil_div(p->r, GATHER_FAN_IN) : p->r;
    if (parts != p->r) {
        uint64_t share = ceil_div(s->n, GATHER_FAN_IN);
        cycles += GATHER_FAN_IN * 2.0 * GATHER_STEP_CYCLES + n * (double)slice_bytes / 4.0 + 100.0 +
                  GATHER_SET_CYCLES + (double)(share * p->w) * sum_cycles_per_element(s, GATHER_FAN_IN) *
                                          GATHER_FAN_IN / CODELET_WORKERS;
        table_tile += s->n * slice_bytes + share * slice_bytes;
    }
    double send = p->out_tiles * GATHER_STEP_CYCLES + n * (double)slice_bytes / 4.0;
    double recv = (double)p->c * parts * (parts != p->r ? 2.0 : 1.0) * GATHER_STEP_CYCLES +
                  (double)(parts * nrows * s->d * s->eb) / 4.0;
    cycles += (send > recv ? send : recv) + 100.0;
    double sets = p->c == 1 ? 1.0 : (double)ceil_div(nrows * p->c, CODELET_WORKERS);
    double per_element = parts > 1 ? sum_cycles_per_element(s, parts) : 0.5;
    cycles += sets * GATHER_SET_CYCLES + (double)(parts * nrows * s->d) * per_element;
    p->cycles = cycles;
    uint64_t block = ALIGN8(nrows * p->w * s->eb);
    uint64_t out_tile = nrows * s->d * s->eb + (uint64_t)p->c * parts * block + 2 * CODELET_READ_SLACK_BYTES;
    /* Output tiles after the table tiles; when they wrap round, a tile can
     * be both. */
    bool overlap = (uint64_t)p->c * p->r + p->out_tiles > tiles;
    p->mem_bytes = overlap ? table_tile + out_tile : (table_tile > out_tile ? table_tile : out_tile);
}

/* The cheapest plan that fits `avail` bytes a tile (largest block
 * `block_avail`), with staged one with output tiles (not the direct
 * lookup into the output); false when none does (then *best is the
 * smallest). */
static bool choose_plan(const gather_shape *s, uint32_t tiles, uint64_t avail, uint64_t block_avail, bool staged,
                        gather_plan *best)
{
    uint64_t g = lw_gran_of(s->eb);
    bool found = false, found_exact = false;
    gather_plan best_exact = { 0 }, best_any = { 0 }, smallest = { 0 };
    smallest.mem_bytes = UINT64_MAX;
    for (uint64_t w = g;; w = w * 2 < s->d ? w * 2 : s->d) {
        if (w > s->d)
            w = s->d;
        bool last = w == s->d;
        if (w * s->eb > KERNEL_GATHER_MAX_ROW_BYTES)
            break;
        gather_plan p = { .w = w, .c = (uint32_t)ceil_div(s->d, w) };
        /* Rows per tile: as many as the largest free block takes next to
         * the partial and the indices. */
        uint64_t fixed = s->n * w * s->eb + index_bytes(s) + 4 * CODELET_READ_SLACK_BYTES;
        uint64_t room = block_avail * 9 / 10 > fixed ? block_avail * 9 / 10 - fixed : 0;
        uint64_t rows = room / (w * s->eb);
        /* No more rows than spreading the table over every tile needs, or
         * than a block of GATHER_BLOCK_BYTES holds if that is more: a
         * scratch block stays a floor under every later persistent block
         * of its tile (lower_internal.h), so a large table is spread thin. */
        uint64_t spread = ceil_div(s->v, tiles / p.c ? tiles / p.c : 1), small = GATHER_BLOCK_BYTES / (w * s->eb);
        if (rows > spread && rows > small)
            rows = spread > small ? spread : small;
        p.r = rows ? (uint32_t)min_u64(ceil_div(s->v, rows), UINT32_MAX) : UINT32_MAX;
        if (p.r == 0)
            p.r = 1;
        if (p.r > s->v)
            p.r = (uint32_t)s->v;
        p.sums = p.r > 1;
        if ((p.sums && !sums_at(s, w)) || (uint64_t)p.c * p.r > tiles || p.r > KERNEL_REDUCE_COLS_MAX_ROWS) {
            /* Nothing fits: remember the plan that needs least. */
            {
                gather_plan q = p;
                q.r = sums_at(s, w) ? (uint32_t)min_u64(p.r, tiles / p.c ? tiles / p.c : 1) : 1;
                q.sums = q.r > 1;
                q.out_tiles = (uint32_t)min_u64(s->n, tiles);
                estimate(s, &q, tiles);
                if (q.mem_bytes < smallest.mem_bytes)
                    smallest = q;
            }
            if (last)
                break;
            continue;
        }
        uint32_t max_out = (uint32_t)min_u64(s->n, tiles);
        for (uint32_t o = p.c == 1 && p.r == 1 && !staged ? 0 : 1; o <= max_out; o++) {
            gather_plan q = p;
            q.out_tiles = o;
            estimate(s, &q, tiles);
            if (q.mem_bytes < smallest.mem_bytes)
                smallest = q;
            if (q.mem_bytes > avail * 9 / 10)
                continue;
            if (!found || q.cycles < best_any.cycles)
                best_any = q;
            found = true;
            if (!q.sums && (!found_exact || q.cycles < best_exact.cycles)) {
                best_exact = q;
                found_exact = true;
            }
        }
        if (last)
            break;
    }
    if (!found) {
        *best = smallest;
        return false;
    }
    *best = found_exact && best_exact.cycles <= best_any.cycles * 1.05 ? best_exact : best_any;
    return true;
}

/* The free bytes of every tile of this stage: the least total, and the
 * least largest block (persistent blocks stay below every scratch block,
 * so both kinds come out of the space between them). */
static void free_bytes(const lowering *lw, uint64_t *avail, uint64_t *block)
{
    *avail = *block = UINT64_MAX;
    for (uint32_t i = 0; i < lw->tiles; i++) {
        const ltile *t = &lw->tile[lw->stage * lw->tiles + i];
        uint64_t f0 = t->region0_scratch_floor > t->region0_kept_end
                          ? t->region0_scratch_floor - t->region0_kept_end : 0;
        uint64_t f1 = t->region1_scratch_floor > t->region1_kept_end
                          ? t->region1_scratch_floor - t->region1_kept_end : 0;
        if (f0 + f1 < *avail)
            *avail = f0 + f1;
        if ((f0 > f1 ? f0 : f1) < *block)
            *block = f0 > f1 ? f0 : f1;
    }
}

/* Rows [r0, r1), columns [c0, c0 + wc) of the table into one block of
 * (r1 - r0) x wc elements on `tile`; its address, 0 on failure. */
static uint32_t place_table_block(lowering *lw, int data, const gather_shape *s, uint64_t r0, uint64_t r1,
                                  uint64_t c0, uint64_t wc, uint32_t tile)
{
    const graph_tensor *gt = lw_gt(lw, data);
    if (wc == s->d)
        return lw_fetch(lw, data, r0 * s->d, (r1 - r0) * s->d, tile, PREFER_REGION1);
    uint64_t bytes = (r1 - r0) * wc * s->eb;
    char what[96];
    snprintf(what, sizeof what, s->computed ? "a copy of '%s'" : "constant '%s'", gt->name);
    if (!s->computed) {
        /* A slice of a constant: its columns packed at compile time. */
        uint32_t a = lw_tile_alloc(lw, tile, bytes, PREFER_REGION1, 16, what);
        if (!a)
            return 0;
        uint8_t *buf = malloc(bytes ? bytes : 1);
        if (!buf) {
            lw_fail(lw, "out of host memory");
            return 0;
        }
        const uint8_t *src = gt->data;
        for (uint64_t r = r0; r < r1; r++)
            memcpy(buf + (r - r0) * wc * s->eb, src + (r * s->d + c0) * s->eb, wc * s->eb);
        bool ok = lw_tile_data(lw, tile, a, buf, (uint32_t)bytes, gt->name);
        free(buf);
        return ok ? a : 0;
    }
    uint32_t a = lw_scratch_alloc(lw, tile, bytes, PREFER_REGION1, 8, what);
    for (uint64_t r = r0; r < r1 && a && !lw->failed; r++)
        lw_fetch_into(lw, data, r * s->d + c0, wc, tile, a + (uint32_t)((r - r0) * wc * s->eb));
    return lw->failed ? 0 : a;
}

/* One compute set of vtx_copy, vtx_reduce_cols_f32 or
 * vtx_reduce_partials_f16 records on `tile`. */
typedef struct move_set {
    uint32_t n;
    bool f16;                           /* sums of f16 partials */
    uint32_t in[CODELET_WORKERS], out[CODELET_WORKERS];
    uint32_t amount[CODELET_WORKERS];   /* sums: columns; copies: bytes */
} move_set;

/* Records of `ms` (rows > 1: sums of `rows` partials in_step apart; 1: copies). */
static bool flush_moves(lowering *lw, uint32_t tile, move_set *ms, uint32_t rows, uint32_t in_step)
{
    if (!ms->n)
        return true;
    uint32_t words = rows <= 1 ? KERNEL_COPY_WORDS : ms->f16 ? KERNEL_REDUCE_PARTIALS_WORDS : KERNEL_REDUCE_COLS_WORDS;
    uint32_t *recs[CODELET_WORKERS];
    uint32_t off = lw_six_records(lw, tile, words, recs);
    if (lw->failed)
        return false;
    for (uint32_t k = 0; k < ms->n; k++) {
        if (rows > 1 && ms->f16)
            kernel_reduce_partials_record(recs[k], ms->in[k], ms->in[k] + in_step, ms->out[k], rows,
                                          ms->amount[k], in_step, true);
        else if (rows > 1)
            kernel_reduce_cols_record(recs[k], ms->in[k], ms->out[k], rows, ms->amount[k], in_step,
                                      KERNEL_REDUCE_SUM, 1.0f, false);
        else
            kernel_copy_record(recs[k], ms->in[k], ms->out[k], ms->amount[k]);
    }
    /* Workers without a move: an empty record (rows or bytes 0) does nothing. */
    ms->n = 0;
    uint32_t vertex = rows <= 1 ? lw->kernels.vtx_copy
                      : ms->f16 ? lw->kernels.vtx_reduce_partials_f16 : lw->kernels.vtx_reduce_cols_f32;
    return lw_step_run(lw, tile, vertex, off, words);
}

static bool add_move(lowering *lw, uint32_t tile, move_set *ms, uint32_t in, uint32_t out, uint32_t amount,
                     uint32_t rows, uint32_t in_step)
{
    ms->in[ms->n] = in;
    ms->out[ms->n] = out;
    ms->amount[ms->n] = amount;
    if (++ms->n == CODELET_WORKERS)
        return flush_moves(lw, tile, ms, rows, in_step);
    return true;
}

/* A Gather being lowered: its shape and plan, the table tiles' rows
 * [rl, rh) of the table, the output tiles' rows [nl, nh) of the result,
 * and per table tile (k = c R + r) its block of the table, its raw and
 * narrowed indices and the rows it gathers; per output tile its staging
 * area and its rows of the output. */
typedef struct gather_run {
    gather_shape s;
    gather_plan p;
    int data, ix, out;
    uint64_t outer, total, even_n;
    uint32_t table_tiles, n_out;
    uint64_t *rl, *rh, *nl, *nh;
    uint32_t *idx, *raw, *tab, *part, *stage, *oaddr;
    /* Summed in groups first (R > GATHER_FAN_IN): the R row ranges of a
     * slice in `groups` groups of up to GATHER_FAN_IN; group member k
     * (a table tile) holds the group's sum of the output rows [gl, gh) at
     * gsum.  parts: the partials an output tile sums a slice (groups, or
     * R). */
    uint32_t groups, parts;
    uint64_t *gl, *gh;
    uint32_t *gsum;
    /* In passes of the indices (pass < all_n, the lookup's N): this
     * pass's first index; G->s.n is the pass's count. */
    uint64_t i0, pass, all_n;
    char what[96];
} gather_run;

/* Table tile k's group, its place in it and the group's size. */
static void group_of(const gather_run *G, uint32_t k, uint32_t *g, uint32_t *j, uint32_t *m)
{
    uint32_t r = k % G->p.r;
    *g = r / GATHER_FAN_IN;
    *j = r % GATHER_FAN_IN;
    *m = (uint32_t)min_u64(GATHER_FAN_IN, G->p.r - *g * GATHER_FAN_IN);
}

/* Phase 1b (groups): each member of a group receives its rows of the
 * group's partials and sums them (vtx_reduce_cols_f32), so that an output
 * tile receives a slice's rows from `groups` tiles, not from R. */
static void sum_groups(lowering *lw, gather_run *G)
{
    uint32_t *buf = calloc(G->table_tiles, sizeof *buf);
    if (!buf) {
        lw_fail(lw, "out of host memory");
        return;
    }
    for (uint32_t k = 0; k < G->table_tiles && !lw->failed; k++) {
        uint32_t g, j, m, tile = lw_tile_of(lw, k);
        group_of(G, k, &g, &j, &m);
        uint64_t lo[GATHER_FAN_IN], hi[GATHER_FAN_IN];
        lw_linear_split(G->s.n, 1, m, lo, hi);
        G->gl[k] = lo[j];
        G->gh[k] = hi[j];
        uint64_t wc = min_u64(G->p.w, G->s.d - (uint64_t)(k / G->p.r) * G->p.w), rows = hi[j] - lo[j];
        uint32_t bytes = (uint32_t)(rows * wc * G->s.eb);
        if (!rows)
            continue;
        buf[k] = lw_scratch_alloc(lw, tile, (uint64_t)m * bytes, PREFER_REGION1, 8, "partial rows of a group");
        G->gsum[k] = buf[k] ? lw_scratch_alloc(lw, tile, bytes, PREFER_REGION1, 8, "a group's sum") : 0;
        for (uint32_t i = 0; i < m && G->gsum[k] && !lw->failed; i++) {
            uint32_t ki = k - j + i, from = lw_tile_of(lw, ki);
            uint32_t src = G->part[ki] + (uint32_t)(lo[j] * wc * G->s.eb), dst = buf[k] + i * bytes;
            if (from == tile)
                lw_add_local_copy(lw, tile, src, dst, bytes);
            else
                lw_add_transfer(lw, from, src, tile, dst, bytes);
        }
    }
    if (!lw->failed)
        lw_end_phase(lw);
    for (uint32_t k = 0; k < G->table_tiles && !lw->failed; k++) {
        uint32_t g, j, m, tile = lw_tile_of(lw, k);
        group_of(G, k, &g, &j, &m);
        uint64_t wc = min_u64(G->p.w, G->s.d - (uint64_t)(k / G->p.r) * G->p.w), cols = (G->gh[k] - G->gl[k]) * wc;
        if (!cols)
            continue;
        uint64_t wl[CODELET_WORKERS], wh[CODELET_WORKERS], u = sum_unit(&G->s), eb = G->s.eb;
        lw_worker_split(ceil_div(cols, u), wl, wh);
        move_set ms = { .f16 = G->s.f16_sums };
        for (int w = 0; w < CODELET_WORKERS && !lw->failed; w++) {
            uint64_t c0 = wl[w] * u, c1 = wh[w] * u < cols ? wh[w] * u : cols;
            if (c1 > c0)
                add_move(lw, tile, &ms, buf[k] + (uint32_t)(c0 * eb), G->gsum[k] + (uint32_t)(c0 * eb),
                         (uint32_t)(c1 - c0), m, (uint32_t)(cols * eb));
        }
        if (!lw->failed)
            flush_moves(lw, tile, &ms, m, (uint32_t)(cols * eb));
    }
    for (uint32_t k = 0; k < G->table_tiles && G->pass < G->all_n && buf; k++)
        if (buf[k])        /* summed: free for the passes to come */
            lw_scratch_free(lw, lw_tile_of(lw, k), buf[k]);
    free(buf);
}

/* Phase 1: the indices (and a computed table's blocks) to the table tiles. */
static void place_tables(lowering *lw, gather_run *G)
{
    for (uint32_t c = 0; c < G->p.c && !lw->failed; c++) {
        uint64_t c0 = c * G->p.w, wc = min_u64(G->p.w, G->s.d - c0);
        for (uint32_t r = 0; r < G->p.r && !lw->failed; r++) {
            uint32_t k = c * G->p.r + r, tile = lw_tile_of(lw, k);
            if (G->i0 == 0)    /* the table's blocks stay for every pass */
                G->tab[k] = G->outer > 1
                                ? lw_fetch(lw, G->data, 0, G->outer * G->s.v * G->s.d, tile, PREFER_REGION1)
                                : place_table_block(lw, G->data, &G->s, G->rl[r], G->rh[r], c0, wc, tile);
            if (!G->tab[k])
                break;
            G->raw[k] = lw_fetch(lw, G->ix, G->i0, G->s.n, tile, PREFER_REGION1);
            if (!G->raw[k])
                break;
            G->idx[k] = G->s.ieb == 8
                            ? lw_scratch_alloc(lw, tile, G->even_n * 8, PREFER_REGION1, 8, "narrowed indices")
                            : G->raw[k];
            if (!G->idx[k])
                break;
            if (G->p.out_tiles) {
                G->part[k] = lw_scratch_alloc(lw, tile, G->s.n * wc * G->s.eb, PREFER_REGION1, 8, "gathered rows");
            } else {
                G->part[k] = lw_tensor_alloc(lw, G->out, tile, G->total * G->s.eb, PREFER_REGION1, 8, false,
                                             G->what);
                if (G->part[k])
                    lw_add_piece(lw, G->out, tile, G->part[k], 0, G->total);
            }
        }
    }
    if (!lw->failed)
        lw_end_phase(lw);
}

/* On every table tile the gathers, after narrowing i64 indices (low
 * words: out row 0 of the N x 2 words transposed). */
static void run_gathers(lowering *lw, gather_run *G)
{
    for (uint32_t k = 0; k < G->table_tiles && !lw->failed; k++) {
        uint32_t c = k / G->p.r, r = k % G->p.r, tile = lw_tile_of(lw, k);
        uint64_t wc = min_u64(G->p.w, G->s.d - (uint64_t)c * G->p.w);
        /* In both compute sets the workers share the N indices alike. */
        worker_set ws;
        if (G->s.ieb == 8) {
            if (!lw_workers_begin(lw, tile, KERNEL_TRANSPOSE_WORDS, G->s.n, &ws))
                break;
            for (int w = 0; w < CODELET_WORKERS; w++)
                kernel_transpose_record(ws.rec[w], G->raw[k] + (uint32_t)(ws.lo[w] * 8),
                                        G->idx[k] + (uint32_t)(ws.lo[w] * 4), (uint32_t)(ws.hi[w] - ws.lo[w]), 2, 8,
                                        (uint32_t)(G->even_n * 4));
            lw_workers_run(lw, tile, lw->kernels.vtx_transpose_f32, &ws);
        }
        uint32_t step = (uint32_t)(G->p.out_tiles ? wc * G->s.eb : G->s.d * G->s.eb);
        for (uint64_t o = 0; o < G->outer && !lw->failed; o++) {
            /* outer > 1: table o at o V D, its output rows at o N D */
            uint32_t t_o = G->tab[k] + (uint32_t)(o * G->s.v * G->s.d * G->s.eb);
            uint32_t p_o = G->part[k] + (uint32_t)(o * G->s.n * step);
            if (!lw_workers_begin(lw, tile, KERNEL_GATHER_RANGE_WORDS, G->s.n, &ws))
                break;
            for (int w = 0; w < CODELET_WORKERS; w++)
                kernel_gather_range_record(ws.rec[w], t_o, G->idx[k] + (uint32_t)(ws.lo[w] * 4),
                                           p_o + (uint32_t)(ws.lo[w] * step), (uint32_t)(ws.hi[w] - ws.lo[w]),
                                           (uint32_t)(wc * G->s.eb), step, (uint32_t)G->rl[r],
                                           (uint32_t)(G->rh[r] - G->rl[r]), (uint32_t)G->s.v);
            lw_workers_run(lw, tile, lw->kernels.vtx_gather_range, &ws);
        }
    }
}

/* Phase 2: each output tile's rows of every partial, into its staging
 * area, block (c, r) at stage + (c R + r) B. */
static void collect_partials(lowering *lw, gather_run *G)
{
    uint64_t max_rows = 0;
    for (uint32_t o = 0; o < G->n_out; o++)
        if (G->nh[o] - G->nl[o] > max_rows)
            max_rows = G->nh[o] - G->nl[o];
    for (uint32_t o = 0; o < G->n_out && !lw->failed; o++) {
        uint64_t nrows = G->nh[o] - G->nl[o];
        if (!nrows)
            continue;
        uint32_t tile = lw_tile_of(lw, (G->table_tiles + o) % lw->tiles);
        uint32_t bsz = (uint32_t)ALIGN8(nrows * G->p.w * G->s.eb);
        G->oaddr[o] = lw_tensor_alloc(lw, G->out, tile, nrows * G->s.d * G->s.eb, PREFER_REGION1, 8, false,
                                      G->what);
        if (!G->oaddr[o])
            break;
        lw_add_piece(lw, G->out, tile, G->oaddr[o], (G->i0 + G->nl[o]) * G->s.d, nrows * G->s.d);
        G->stage[o] = lw_scratch_alloc(lw, tile, (uint64_t)G->p.c * G->parts * bsz, PREFER_REGION1, 8, "partial rows");
        if (!G->stage[o])
            break;
        for (uint32_t k = 0; k < G->table_tiles && !lw->failed; k++) {
            uint64_t wc = min_u64(G->p.w, G->s.d - (uint64_t)(k / G->p.r) * G->p.w);
            /* the rows [a, b) of this output tile that k holds: all of them
             * (its partial), or those of its group's sum */
            uint64_t a = G->nl[o], b = G->nh[o];
            uint32_t base = G->part[k], block = k;
            if (G->groups) {
                uint32_t g, j, m;
                group_of(G, k, &g, &j, &m);
                a = a > G->gl[k] ? a : G->gl[k];
                b = b < G->gh[k] ? b : G->gh[k];
                if (a >= b)
                    continue;
                base = G->gsum[k] - (uint32_t)(G->gl[k] * wc * G->s.eb);
                block = (k / G->p.r) * G->parts + g;
            }
            uint32_t from = lw_tile_of(lw, k), bytes = (uint32_t)((b - a) * wc * G->s.eb);
            uint32_t src = base + (uint32_t)(a * wc * G->s.eb);
            uint32_t dst = G->stage[o] + block * bsz + (uint32_t)((a - G->nl[o]) * wc * G->s.eb);
            if (from != tile)
                lw_add_transfer(lw, from, src, tile, dst, bytes);
            else     /* the table tile is this output tile too: copied after the exchange */
                lw_add_local_copy(lw, tile, src, dst, bytes);
        }
    }
    if (!lw->failed)
        lw_end_phase(lw);
}

/* The slices into the output rows: copies (R = 1) or sums of the R
 * partials, six records a compute set. */
static void write_output_rows(lowering *lw, gather_run *G)
{
    for (uint32_t o = 0; o < G->n_out && !lw->failed; o++) {
        uint64_t nrows = G->nh[o] - G->nl[o];
        if (!nrows)
            continue;
        uint32_t tile = lw_tile_of(lw, (G->table_tiles + o) % lw->tiles);
        uint32_t bsz = (uint32_t)ALIGN8(nrows * G->p.w * G->s.eb);
        move_set ms = { .f16 = G->s.f16_sums };
        if (G->p.c == 1) {
            /* Whole rows: the block is the output's rows, in order; the
             * six workers take a range of it each, in words (copies, f32
             * sums) or groups of 8 f16 elements (f16 sums). */
            uint64_t unit = G->parts > 1 && G->s.f16_sums ? 16 : 4;
            uint64_t units = nrows * G->s.d * G->s.eb / unit, wl[CODELET_WORKERS], wh[CODELET_WORKERS];
            lw_worker_split(units, wl, wh);
            for (int w = 0; w < CODELET_WORKERS && !lw->failed; w++)
                if (wh[w] > wl[w])
                    add_move(lw, tile, &ms, G->stage[o] + (uint32_t)(wl[w] * unit),
                             G->oaddr[o] + (uint32_t)(wl[w] * unit),
                             (uint32_t)((wh[w] - wl[w]) * unit / (G->parts > 1 ? G->s.eb : 1)), G->parts, bsz);
        } else {
            for (uint64_t i = 0; i < nrows && !lw->failed; i++)
                for (uint32_t c = 0; c < G->p.c && !lw->failed; c++) {
                    uint64_t c0 = (uint64_t)c * G->p.w, wc = min_u64(G->p.w, G->s.d - c0);
                    add_move(lw, tile, &ms, G->stage[o] + c * G->parts * bsz + (uint32_t)(i * wc * G->s.eb),
                             G->oaddr[o] + (uint32_t)((i * G->s.d + c0) * G->s.eb),
                             (uint32_t)(G->parts > 1 ? wc : wc * G->s.eb), G->parts, bsz);
                }
        }
        if (!lw->failed)
            flush_moves(lw, tile, &ms, G->parts, bsz);
    }
}

/* A pass's buffers (indices, partials, sums, staging), free for the next. */
static void free_pass(lowering *lw, const gather_run *G)
{
    for (uint32_t k = 0; k < G->table_tiles; k++) {
        uint32_t tile = lw_tile_of(lw, k);
        lw_scratch_free(lw, tile, G->raw[k]);
        lw_scratch_free(lw, tile, G->idx[k]);
        lw_scratch_free(lw, tile, G->part[k]);
        lw_scratch_free(lw, tile, G->gsum[k]);
    }
    for (uint32_t o = 0; o < G->n_out; o++)
        lw_scratch_free(lw, lw_tile_of(lw, (G->table_tiles + o) % lw->tiles), G->stage[o]);
}

bool lw_lower_gather(lowering *lw, const graph_node *n, int index)
{
    const graph *g = lw->g;
    int data = n->inputs[0], ix = n->inputs[1], out = n->outputs[0];
    const graph_tensor *dt = &g->tensors[data], *it = &g->tensors[ix];
    if (dt->shape.rank < 1)
        return lw_unsupported(lw, n, index, "Gather of a scalar");
    int axis = ops_norm_axis(graph_attr_find(n, "axis") ? graph_attr_int(n, "axis") : 0, dt->shape.rank);
    if (it->dtype != GDT_I32 && it->dtype != GDT_I64)
        return lw_unsupported(lw, n, index, "indices must be i32 or i64");
    /* Axis a > 0: data seen as [outer][V][D] (outer: the axes before a),
     * one lookup of axis 0 for each outer index. */
    uint64_t outer = 1;
    for (int d = 0; d < axis; d++)
        outer *= (uint64_t)dt->shape.dims[d];
    gather_shape s = {
        .v = (uint64_t)dt->shape.dims[axis],
        .n = (uint64_t)graph_shape_numel(&it->shape),
        .eb = lw->tensor[data].element_bytes,
        .ieb = lw->tensor[ix].element_bytes,
        .computed = !dt->data || lw->tensor[data].placed,
    };
    s.d = s.v && outer ? (uint64_t)graph_shape_numel(&dt->shape) / s.v / outer : 0;
    s.f16_sums = dt->dtype == GDT_F16 && s.eb == 2 && s.d % 8 == 0;
    s.can_sum = dt->dtype == GDT_F32 || s.f16_sums;
    uint64_t total = outer * s.n * s.d;
    if (!total) {
        lw->tensor[out].placed = true;    /* an empty output: nothing to look up */
        return true;
    }
    if (s.v == 0)
        return lw_unsupported(lw, n, index, "every index is out of range of an empty table");
    if (s.v > (1ull << 31))
        return lw_unsupported(lw, n, index, "a table of more than 2^31 rows (the codelet's indices are i32)");
    if (s.eb == 0 || (s.d * s.eb) % 4)
        return lw_unsupported(lw, n, index, "table rows that are not a whole number of 32-bit words "
                                            "(the exchange and the gather codelet move words)");
    if (lw->tensor[data].permuted)
        return lw_unsupported(lw, n, index, "a table kept channels-last");

    gather_plan p;
    uint64_t avail, block;
    free_bytes(lw, &avail, &block);
    uint64_t pass = s.n;
    if (outer == 1 && !choose_plan(&s, lw->tiles, avail, block, false, &p)) {
        /* No plan fits all N indices: passes of fewer (an even number, so
         * that each pass's indices start 8-byte aligned), each a lookup of
         * its indices into its rows of the output, with the table's blocks
         * placed once. */
        for (uint64_t k = (s.n / 2) & ~(uint64_t)1; k >= 2; k = (k / 2) & ~(uint64_t)1) {
            gather_shape sk = s;
            sk.n = k;
            gather_plan q;
            if (choose_plan(&sk, lw->tiles, avail, block, true, &q)) {
                p = q;
                pass = k;
                break;
            }
        }
    } else if (outer > 1) {
        /* Other axes: only the whole table on one tile, gathered straight
         * into the output. */
        p = (gather_plan){ .w = s.d, .c = 1, .r = 1, .out_tiles = 0 };
        uint64_t need = outer * (s.v + s.n) * s.d * s.eb + index_bytes(&s) + 3 * CODELET_READ_SLACK_BYTES;
        if (s.d * s.eb > KERNEL_GATHER_MAX_ROW_BYTES || need > block * 9 / 10) {
            char why[200];
            snprintf(why, sizeof why, "Gather on axis %d of a table larger than a tile is not yet supported "
                     "(only axis 0, the embedding lookup, is split over tiles)", axis);
            return lw_unsupported(lw, n, index, why);
        }
    }
    if (p.c == 0)
        return lw_unsupported(lw, n, index, "table rows wider than the gather codelet takes");
    gather_run G = { .s = s, .p = p, .data = data, .ix = ix, .out = out, .outer = outer, .total = total,
                     .table_tiles = p.c * p.r, .n_out = p.out_tiles ? p.out_tiles : 1,
                     .even_n = (s.n + 1) & ~(uint64_t)1, .pass = pass, .all_n = s.n };
    snprintf(G.what, sizeof G.what, "tensor '%s'", lw_gt(lw, out)->name);
    G.rl = malloc((size_t)p.r * sizeof *G.rl), G.rh = malloc((size_t)p.r * sizeof *G.rh);
    G.idx = calloc(G.table_tiles, sizeof *G.idx), G.raw = calloc(G.table_tiles, sizeof *G.raw);
    G.tab = calloc(G.table_tiles, sizeof *G.tab), G.part = calloc(G.table_tiles, sizeof *G.part);
    G.nl = malloc(G.n_out * sizeof *G.nl), G.nh = malloc(G.n_out * sizeof *G.nh);
    G.stage = calloc(G.n_out, sizeof *G.stage), G.oaddr = calloc(G.n_out, sizeof *G.oaddr);
    G.groups = p.out_tiles && p.r > GATHER_FAN_IN ? (uint32_t)ceil_div(p.r, GATHER_FAN_IN) : 0;
    G.parts = G.groups ? G.groups : p.r;
    G.gl = calloc(G.table_tiles, sizeof *G.gl), G.gh = calloc(G.table_tiles, sizeof *G.gh);
    G.gsum = calloc(G.table_tiles, sizeof *G.gsum);
    if (!G.rl || !G.rh || !G.idx || !G.raw || !G.tab || !G.part || !G.nl || !G.nh || !G.stage || !G.oaddr ||
        !G.gl || !G.gh || !G.gsum) {
        lw_fail(lw, "out of host memory");
    } else {
        lw_linear_split(s.v, 1, p.r, G.rl, G.rh);
        for (G.i0 = 0; (G.i0 == 0 || G.i0 < s.n) && !lw->failed; G.i0 += pass) {
            G.s.n = min_u64(pass, s.n - G.i0);
            G.even_n = (G.s.n + 1) & ~(uint64_t)1;
            lw_linear_split(G.s.n, 1, G.n_out, G.nl, G.nh);
            place_tables(lw, &G);
            run_gathers(lw, &G);
            if (p.out_tiles && !lw->failed) {
                if (G.groups)
                    sum_groups(lw, &G);
                collect_partials(lw, &G);
                write_output_rows(lw, &G);
            }
            if (G.i0 + pass < s.n)
                free_pass(lw, &G);
        }
    }
    free(G.rl); free(G.rh); free(G.idx); free(G.raw); free(G.tab); free(G.part);
    free(G.nl); free(G.nh); free(G.stage); free(G.oaddr); free(G.gl); free(G.gh); free(G.gsum);
    return !lw->failed;
}

/* ---- GatherGrad: the scatter-add into the table (the embedding's gradient) ----
 *
 * PopLibs' multiUpdateAdd: the f32 table dT [V, D] is cut into C column
 * slices of w elements and R row ranges, one block a tile (C x R tiles);
 * each table tile receives all N indices and its slice of every dY row
 * (N x w; all of dY when C = 1), and runs vtx_scatter_add_range_f32
 * (embedding.h), its six workers holding disjoint rows of its block: the
 * block zeroed, then every dY row whose index falls in a worker's rows
 * added there in index order.  The block is dT's storage: rows of D when C
 * = 1, else one piece of w a row.  The plan is the estimate of tile cycles
 * (indices and dY in, the zeroing, every worker scanning every index, the
 * rows added) over C in 1, 2, 4 .. 16 (C bounded so that dT has at most 16
 * pieces a row), R as many row ranges as the tiles allow.  Where a table
 * tile cannot hold all N indices and their dY slice beside its block, the
 * indices come in passes of as many as it can (scatter_pass), each an
 * exchange and a scatter-add that adds in index order, so the sums are
 * those of one pass. */

typedef struct scatter_plan {
    uint64_t w;
    uint32_t c, r;
    double cycles;
    uint64_t mem_bytes;
} scatter_plan;

/* The cheapest plan that fits `avail` bytes a tile (else the smallest). */
static scatter_plan choose_scatter_plan(const gather_shape *s, uint32_t tiles, uint64_t avail)
{
    scatter_plan best = { 0 }, smallest = { 0 };
    bool found = false;
    smallest.mem_bytes = UINT64_MAX;
    for (uint32_t cw = 1; cw <= 16; cw *= 2) {
        uint64_t w = (ceil_div(s->d, cw) + 1) & ~(uint64_t)1;      /* pairs */
        if (w > s->d)
            w = s->d;
        if (w * 4 > KERNEL_GATHER_MAX_ROW_BYTES)
            continue;
        scatter_plan p = { .w = w, .c = (uint32_t)ceil_div(s->d, w) };
        if (p.c > tiles)
            break;
        p.r = (uint32_t)min_u64(tiles / p.c, s->v);
        uint64_t rows = ceil_div(s->v, p.r);
        double n = (double)s->n, pairs = (double)(w + 1) / 2;
        p.cycles = (p.c > 1 ? n : 1.0) * GATHER_STEP_CYCLES + n * (double)w + n * s->ieb / 4.0
                   + (double)rows * (pairs + 2) + 6.0 * n * 11.0 + n / p.r * (15.0 + 4.0 * pairs)
                   + 2 * GATHER_SET_CYCLES;
        p.mem_bytes = rows * w * 4 + s->n * w * 4 + index_bytes(s) + 3 * CODELET_READ_SLACK_BYTES;
        if (p.mem_bytes < smallest.mem_bytes)
            smallest = p;
        if (p.mem_bytes <= avail * 9 / 10 && (!found || p.cycles < best.cycles)) {
            best = p;
            found = true;
        }
        if (p.w == s->d && cw > 1)
            break;
    }
    return found ? best : smallest;
}

/* The indices [i0, i0 + s->n) on `tile`: *raw where they arrive, *idx
 * where the scatter reads them as i32 (raw itself, or room for i64 ones
 * narrowed). */
static bool fetch_indices(lowering *lw, int ix, const gather_shape *s, uint64_t i0, uint32_t tile, uint32_t *raw,
                          uint32_t *idx)
{
    *raw = lw_fetch(lw, ix, i0, s->n, tile, PREFER_REGION1);
    if (!*raw)
        return false;
    uint64_t even_n = (s->n + 1) & ~(uint64_t)1;
    *idx = s->ieb == 8 ? lw_scratch_alloc(lw, tile, even_n * 8, PREFER_REGION1, 8, "narrowed indices") : *raw;
    return *idx != 0;
}

/* dY's columns [c0, c0 + wc) of rows [i0, i0 + s->n) on `tile` (the whole
 * rows when wc is the row), wc apart; their address, 0 on failure. */
static uint32_t fetch_dy_columns(lowering *lw, int dyt, const gather_shape *s, uint64_t i0, uint64_t c0,
                                 uint64_t wc, uint32_t tile)
{
    if (wc == s->d)
        return lw_fetch(lw, dyt, i0 * s->d, s->n * s->d, tile, PREFER_REGION1);
    uint32_t dy = lw_scratch_alloc(lw, tile, s->n * wc * 4, PREFER_REGION1, 8, "gradient slices");
    for (uint64_t i = 0; i < s->n && dy && !lw->failed; i++)
        lw_fetch_into(lw, dyt, (i0 + i) * s->d + c0, wc, tile, dy + (uint32_t)(i * wc * 4));
    return lw->failed ? 0 : dy;
}

/* i64 indices at raw narrowed to i32 at idx on `tile` (i32 ones as they are). */
static void narrow_indices(lowering *lw, const gather_shape *s, uint32_t tile, uint32_t raw, uint32_t idx)
{
    if (s->ieb != 8 || !s->n)
        return;
    uint64_t even_n = (s->n + 1) & ~(uint64_t)1;
    worker_set ws;
    if (!lw_workers_begin(lw, tile, KERNEL_TRANSPOSE_WORDS, s->n, &ws))
        return;
    for (int w = 0; w < CODELET_WORKERS; w++)
        kernel_transpose_record(ws.rec[w], raw + (uint32_t)(ws.lo[w] * 8), idx + (uint32_t)(ws.lo[w] * 4),
                                (uint32_t)(ws.hi[w] - ws.lo[w]), 2, 8, (uint32_t)(even_n * 4));
    lw_workers_run(lw, tile, lw->kernels.vtx_transpose_f32, &ws);
}

/* One compute set on `tile`: the table rows [row0, row0 + rows), wc wide
 * and one after the other from blk (zeroed first when zero), += the dY
 * rows (wc apart from dy) whose indices name them, the six workers
 * sharing the rows. */
static void scatter_rows(lowering *lw, const gather_shape *s, uint32_t tile, uint32_t blk, uint64_t row0,
                         uint64_t rows, uint64_t wc, uint32_t idx, uint32_t dy, bool zero)
{
    worker_set ws;
    if (!lw_workers_begin(lw, tile, KERNEL_SCATTER_ADD_WORDS, rows, &ws))
        return;
    uint32_t row_bytes = (uint32_t)(wc * 4);
    for (int w = 0; w < CODELET_WORKERS; w++)
        kernel_scatter_add_record(ws.rec[w], blk + (uint32_t)(ws.lo[w] * row_bytes), idx, dy, (uint32_t)s->n,
                                  row_bytes, row_bytes, (uint32_t)(row0 + ws.lo[w]), (uint32_t)(ws.hi[w] - ws.lo[w]),
                                  (uint32_t)s->v, zero);
    lw_workers_run(lw, tile, lw->kernels.vtx_scatter_add_range_f32, &ws);
}

/* Phase 1 on table tile k: dT's block placed (*blk), holding the initial
 * gradient's rows where there is one (fetch_scatter_pass then brings each
 * pass's indices and dY slice). */
static bool place_scatter_tile(lowering *lw, const graph_node *n, const gather_shape *s, const scatter_plan *p,
                               uint32_t k, const uint64_t *rl, const uint64_t *rh, uint32_t *blk, const char *what)
{
    int out = n->outputs[0];
    uint32_t c = k / p->r, r = k % p->r, tile = lw_tile_of(lw, k);
    uint64_t c0 = (uint64_t)c * p->w, wc = min_u64(p->w, s->d - c0), rows = rh[r] - rl[r];
    *blk = lw_tensor_alloc(lw, out, tile, rows * wc * 4, PREFER_REGION1, 8, false, what);
    if (!*blk)
        return false;
    /* with an initial gradient, the block starts as its rows of it */
    int init = n->n_inputs > 2 ? n->inputs[2] : -1;
    for (uint64_t i = 0; init >= 0 && i < rows && !lw->failed; i++)
        lw_fetch_into(lw, init, (rl[r] + i) * s->d + c0, wc, tile, *blk + (uint32_t)(i * wc * 4));
    if (p->c == 1)
        lw_add_piece(lw, out, tile, *blk, rl[r] * s->d, rows * s->d);
    else
        for (uint64_t i = 0; i < rows && !lw->failed; i++)
            lw_add_piece(lw, out, tile, *blk + (uint32_t)(i * wc * 4), (rl[r] + i) * s->d + c0, wc);
    return !lw->failed;
}

/* A pass on table tile k: the indices [i0, i0 + s->n) and their dY slice
 * received. */
static bool fetch_scatter_pass(lowering *lw, const graph_node *n, const gather_shape *s, const scatter_plan *p,
                               uint32_t k, uint64_t i0, uint32_t *raw, uint32_t *idx, uint32_t *dy)
{
    uint32_t tile = lw_tile_of(lw, k);
    uint64_t c0 = (uint64_t)(k / p->r) * p->w, wc = min_u64(p->w, s->d - c0);
    if (!fetch_indices(lw, n->inputs[1], s, i0, tile, raw, idx))
        return false;
    *dy = fetch_dy_columns(lw, n->inputs[0], s, i0, c0, wc, tile);
    return *dy != 0;
}

/* The indices a pass takes: all of them where the plan fits, else as many
 * as fit beside the table block (an even number, so that every pass's dY
 * rows start 8-byte aligned), as PopLibs splits the lookups of an update
 * that would not fit at once. */
static uint64_t scatter_pass(const gather_shape *s, const scatter_plan *p, uint64_t room)
{
    uint64_t limit = room * 9 / 10;
    uint64_t fixed = ceil_div(s->v, p->r) * p->w * 4 + 4 * CODELET_READ_SLACK_BYTES;
    uint64_t per = p->w * 4 + (s->ieb == 8 ? 16 : 4);
    if (p->mem_bytes <= limit || limit < fixed + 2 * per)
        return s->n ? s->n : 1;
    return ((limit - fixed) / per) & ~(uint64_t)1;
}

/* Phase 2 on table tile k: i64 indices narrowed, then the scatter-add, the
 * workers sharing the block's rows. */
static void run_scatter_tile(lowering *lw, const gather_shape *s, const scatter_plan *p, uint32_t k,
                             const uint64_t *rl, const uint64_t *rh, uint32_t blk, uint32_t raw, uint32_t idx,
                             uint32_t dy, bool zero)
{
    uint32_t c = k / p->r, r = k % p->r, tile = lw_tile_of(lw, k);
    uint64_t wc = min_u64(p->w, s->d - (uint64_t)c * p->w);
    narrow_indices(lw, s, tile, raw, idx);
    if (!lw->failed)
        scatter_rows(lw, s, tile, blk, rl[r], rh[r] - rl[r], wc, idx, dy, zero);
}

/* ---- GatherGrad into an initial gradient's storage ----
 * With an initial gradient G (GatherGrad's third input) that no later
 * node reads, the scatter-add goes into G's storage as it lies: each tile
 * holding rows of G in rectangles (consecutive rows of one column range,
 * one after the other in memory: a matmul's output block) receives the
 * indices and dY's columns of each of its column ranges, and adds into
 * every rectangle in place, zeroing nothing.  No table-sized block beside
 * G; taken when every tile's dY columns fit beside what it keeps. */

typedef struct scatter_rect {
    uint32_t tile, addr;
    uint64_t row, col, width, rows;
} scatter_rect;

static int cmp_rect(const void *a, const void *b)
{
    const scatter_rect *x = a, *y = b;
    if (x->tile != y->tile)
        return x->tile < y->tile ? -1 : 1;
    if (x->col != y->col || x->width != y->width)
        return x->col != y->col ? (x->col < y->col ? -1 : 1) : (x->width < y->width ? -1 : 1);
    return x->row < y->row ? -1 : x->row > y->row;
}

/* G's pieces as rectangles, sorted by tile and column range; NULL with
 * *n 0 when there are none (or no host memory). */
static scatter_rect *rectangles(const lowering *lw, int t, uint64_t d, size_t *n)
{
    const ltensor *lt = &lw->tensor[t];
    size_t segs = 0, cap = lt->n + 16;
    scatter_rect *r = malloc(cap * sizeof *r);
    for (size_t k = 0; r && k < lt->n; k++)
        for (uint64_t e = lt->p[k].first, end = e + lt->p[k].count; e < end && r;) {
            uint64_t col = e % d, w = min_u64(d - col, end - e);
            if (segs == cap) {
                scatter_rect *m = realloc(r, (cap *= 2) * sizeof *r);
                if (!m)
                    free(r);
                r = m;
                if (!r)
                    break;
            }
            r[segs++] = (scatter_rect){ lt->p[k].tile, lt->p[k].addr + (uint32_t)((e - lt->p[k].first) * 4), e / d,
                                        col, w, 1 };
            e += w;
        }
    if (!r) {
        *n = 0;
        return NULL;
    }
    qsort(r, segs, sizeof *r, cmp_rect);
    size_t m = 0;
    for (size_t k = 0; k < segs; k++) {
        scatter_rect *q = m ? &r[m - 1] : NULL;
        if (q && q->tile == r[k].tile && q->col == r[k].col && q->width == r[k].width &&
            q->row + q->rows == r[k].row && q->addr + q->rows * q->width * 4 == r[k].addr)
            q->rows++;
        else
            r[m++] = r[k];
    }
    *n = m;
    return r;
}

/* The dY rows a chunk of the scatter-add in place takes: all of them
 * where every tile's indices and dY columns fit its free blocks (each
 * column range's slice in one block, which the indices, fetched first,
 * may have shortened), else as many as fit on the tile with the least
 * room, chunks of equal size; 0 where not one row fits. */
static uint64_t scatter_chunk_rows(const lowering *lw, const gather_shape *s, const scatter_rect *r, size_t nr)
{
    uint64_t chunk = s->n;
    const uint64_t slack = CODELET_READ_SLACK_BYTES + 8, index_row = s->ieb + (s->ieb == 8 ? 4 : 0);
    for (size_t k = 0; k < nr && chunk;) {
        uint64_t row = index_row, widest = 0, blocks = 2;
        size_t j = k;
        for (; j < nr && r[j].tile == r[k].tile; j++)
            if (j == k || r[j].col != r[j - 1].col || r[j].width != r[j - 1].width) {
                row += r[j].width * 4;
                widest = r[j].width * 4 > widest ? r[j].width * 4 : widest;
                blocks++;
            }
        uint64_t largest, total;
        lw_tile_free_room(lw, r[k].tile, &largest, &total);
        total = total * 9 / 10;
        /* (the chunk's indices are fetched first and may take their bytes
         * from the largest block too) */
        uint64_t by_block = largest > 2 * slack ? (largest - 2 * slack) / (widest + index_row) : 0;
        uint64_t by_total = total > blocks * slack ? (total - blocks * slack) / row : 0;
        chunk = by_block < chunk ? by_block : chunk;
        chunk = by_total < chunk ? by_total : chunk;
        k = j;
    }
    if (!chunk)
        return 0;
    uint64_t chunks = ceil_div(s->n, chunk);
    return ceil_div(s->n, chunks);
}

/* The scatter-add in place, in chunks of dY rows where all at once would
 * not fit (the rows added in index order all the same); false (nothing
 * done, no failure) where not one row fits. */
static bool scatter_in_place(lowering *lw, const graph_node *n, int index, const gather_shape *s)
{
    int dyt = n->inputs[0], ix = n->inputs[1], init = n->inputs[2], out = n->outputs[0];
    size_t nr;
    scatter_rect *r = rectangles(lw, init, s->d, &nr);
    if (!r)
        return false;
    uint64_t chunk = s->n ? scatter_chunk_rows(lw, s, r, nr) : 1;
    if (!chunk || !lw_place_in_place(lw, out, init, dyt, index)) {
        free(r);
        return false;
    }
    lw->tensor[out].placed = true;
    uint32_t *dy = calloc(nr + 1, sizeof *dy), *raw = calloc(nr + 1, sizeof *raw), *idx = calloc(nr + 1, sizeof *idx);
    if (!dy || !raw || !idx) {
        free(r); free(dy); free(raw); free(idx);
        return lw_fail(lw, "out of host memory");
    }
    for (uint64_t i0 = 0; i0 < s->n && !lw->failed; i0 += chunk) {
        gather_shape sc = *s;
        sc.n = min_u64(chunk, s->n - i0);
        lw->rep->scatter_chunks++;
        /* phase 1: the chunk's indices and dY columns in; per rectangle its dY block */
        for (size_t k = 0; k < nr && !lw->failed; k++) {
            bool same_tile = k && r[k].tile == r[k - 1].tile;
            if (same_tile) {
                raw[k] = raw[k - 1];
                idx[k] = idx[k - 1];
            } else if (!fetch_indices(lw, ix, &sc, i0, r[k].tile, &raw[k], &idx[k])) {
                break;
            }
            dy[k] = same_tile && r[k].col == r[k - 1].col && r[k].width == r[k - 1].width
                        ? dy[k - 1]
                        : fetch_dy_columns(lw, dyt, &sc, i0, r[k].col, r[k].width, r[k].tile);
        }
        if (!lw->failed)
            lw_end_phase(lw);
        /* phase 2: each tile's indices narrowed once, then a compute set a rectangle */
        for (size_t k = 0; k < nr && !lw->failed; k++) {
            if (!k || r[k].tile != r[k - 1].tile)
                narrow_indices(lw, &sc, r[k].tile, raw[k], idx[k]);
            if (!lw->failed)
                scatter_rows(lw, &sc, r[k].tile, r[k].addr, r[k].row, r[k].rows, r[k].width, idx[k], dy[k], false);
        }
        /* the chunk's blocks free for the next */
        for (size_t k = 0; k < nr && !lw->failed && i0 + chunk < s->n; k++) {
            if (!k || dy[k] != dy[k - 1] || r[k].tile != r[k - 1].tile)
                lw_scratch_free(lw, r[k].tile, dy[k]);
            if (!k || r[k].tile != r[k - 1].tile) {
                if (idx[k] != raw[k])
                    lw_scratch_free(lw, r[k].tile, idx[k]);
                lw_scratch_free(lw, r[k].tile, raw[k]);
            }
        }
    }
    lw->rep->scatters_in_place++;
    free(r); free(dy); free(raw); free(idx);
    return true;
}

bool lw_lower_gather_grad(lowering *lw, const graph_node *n, int index)
{
    const graph *g = lw->g;
    int dyt = n->inputs[0], ix = n->inputs[1], out = n->outputs[0];
    const graph_tensor *ot = &g->tensors[out];
    int axis = ops_norm_axis(graph_attr_int(n, "axis"), ot->shape.rank);
    if (axis != 0)
        return lw_unsupported(lw, n, index, "GatherGrad on an axis other than 0 is not lowered (the "
                                            "embedding gradient, axis 0, is)");
    if (ot->dtype != GDT_F32)
        return lw_unsupported(lw, n, index, "only f32 (the scatter-add codelet adds in f32)");
    if (lw->tensor[dyt].permuted)
        return lw_unsupported(lw, n, index, "a gradient kept channels-last");
    gather_shape s = {
        .v = (uint64_t)ot->shape.dims[0],
        .n = (uint64_t)graph_shape_numel(&g->tensors[ix].shape),
        .eb = 4,
        .ieb = lw->tensor[ix].element_bytes,
        .can_sum = true,
    };
    uint64_t total = (uint64_t)graph_shape_numel(&ot->shape);
    if (!total) {
        lw->tensor[out].placed = true;
        return true;
    }
    s.d = total / s.v;
    if (s.v > (1ull << 31))
        return lw_unsupported(lw, n, index, "a table of more than 2^31 rows (the codelet's indices are i32)");
    int init = n->n_inputs > 2 ? n->inputs[2] : -1;
    if (init >= 0 && lw->tensor[init].permuted)
        return lw_unsupported(lw, n, index, "an initial gradient kept channels-last");
    if (init >= 0 && (scatter_in_place(lw, n, index, &s) || lw->failed))
        return !lw->failed;
    uint64_t avail, block;
    free_bytes(lw, &avail, &block);
    scatter_plan p = choose_scatter_plan(&s, lw->tiles, block < avail ? block : avail);
    if (!p.c)
        return lw_unsupported(lw, n, index, "table rows wider than the scatter-add codelet takes");
    uint32_t tiles = p.c * p.r;
    char what[96];
    snprintf(what, sizeof what, "tensor '%s'", ot->name);
    uint64_t *rl = malloc(p.r * sizeof *rl), *rh = malloc(p.r * sizeof *rh);
    uint32_t *addr = calloc((size_t)tiles * 4, sizeof *addr);
    if (!rl || !rh || !addr) {
        free(rl); free(rh); free(addr);
        return lw_fail(lw, "out of host memory");
    }
    lw_linear_split(s.v, 1, p.r, rl, rh);
    /* In passes of indices where they do not fit at once: each adds its
     * rows in index order, so the sums are those of one pass. */
    uint64_t pass = scatter_pass(&s, &p, block < avail ? block : avail);
    for (uint64_t i0 = 0; (i0 == 0 || i0 < s.n) && !lw->failed; i0 += pass) {
        gather_shape sp = s;
        sp.n = min_u64(pass, s.n - i0);
        for (uint32_t k = 0; k < tiles && !lw->failed; k++) {
            uint32_t *a = &addr[4 * k];
            if ((i0 == 0 && !place_scatter_tile(lw, n, &sp, &p, k, rl, rh, &a[0], what)) ||
                (sp.n && !fetch_scatter_pass(lw, n, &sp, &p, k, i0, &a[1], &a[2], &a[3])))
                break;
        }
        if (!lw->failed)
            lw_end_phase(lw);
        for (uint32_t k = 0; k < tiles && !lw->failed; k++)
            run_scatter_tile(lw, &sp, &p, k, rl, rh, addr[4 * k], addr[4 * k + 1], addr[4 * k + 2],
                             addr[4 * k + 3], init < 0 && i0 == 0);
        for (uint32_t k = 0; k < tiles && i0 + pass < s.n; k++)    /* the pass's buffers, for the next */
            for (int j = 1; j < 4; j++)
                lw_scratch_free(lw, lw_tile_of(lw, k), addr[4 * k + j]);
    }
    free(rl); free(rh); free(addr);
    return !lw->failed;
}
