/*
 * lower_data.c — the ops that move or gather data without an element-wise
 * codelet of their own:
 *   - data movement in runs (lw_lower_runs): Transpose, Concat, Slice,
 *     Expand and Gather with constant indices;
 *   - casts between f32 and f16 (lw_lower_cast: vtx_cast_f32_to_f16 and
 *     vtx_cast_f16_to_f32 on the tiles that hold the input);
 *   - reductions over any axes (lw_lower_reduce: vtx_reduce_rows_f32,
 *     with a vtx_unary_f32 pass before or after for the forms it lacks);
 *   - the exact cheaper forms of Pow by a constant (lw_pow_form);
 *   - MaxPool, AveragePool and GlobalAveragePool on images kept
 *     channels-last (lw_lower_pool: blocks of output pixels, a compute set
 *     of vtx_maxpool_nhwc_f32 or vtx_avgpool_nhwc_f32 on each).
 *
 * Data movement is lowered as runs: the output is split linearly over the
 * tiles, and for each output piece the elements are walked in order; a run
 * is a stretch of consecutive output elements that come from consecutive
 * elements of one input, and each run is fetched (lower_internal.h) into
 * its place: received from the tile that holds it, copied locally, or
 * placed at compile time for constants.  No codelet runs on the data; the
 * exchange does the permutation, as Poplar's rearrangements do.  A run must
 * start and end on 4-byte boundaries (the exchange moves 32-bit words):
 * f32 and i32/i64 always do; f16 only in even runs at even offsets.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower_internal.h"
#include "ops_impl.h"
#include "isa/isa.h"

/* Where output element e comes from: input *k, element returned. */
typedef struct run_map {
    graph_op op;
    int rank;
    int64_t out_dims[GRAPH_MAX_RANK];
    /* Transpose, Slice, Expand: source index = sum(o[d] * mul[d]) + base */
    int64_t mul[GRAPH_MAX_RANK], base;
    /* Concat: the axis, and the cumulative extents of the inputs along it */
    int axis, n_in;
    int64_t cum[65], in_dims[64][GRAPH_MAX_RANK];
    /* Gather with constant indices */
    const int64_t *indices;
    int64_t n_indices, gather_axis_len, outer, inner;
} run_map;

static int64_t source_of(const run_map *m, uint64_t e, int *k)
{
    int64_t o[GRAPH_MAX_RANK];
    uint64_t r = e;
    for (int d = m->rank - 1; d >= 0; d--) {
        o[d] = (int64_t)(r % (uint64_t)m->out_dims[d]);
        r /= (uint64_t)m->out_dims[d];
    }
    *k = 0;
    if (m->op == GRAPH_OP_CONCAT) {
        int64_t a = o[m->axis];
        int j = 0;
        while (j + 1 < m->n_in && a >= m->cum[j + 1])
            j++;
        *k = j;
        o[m->axis] = a - m->cum[j];
        int64_t idx = 0;
        for (int d = 0; d < m->rank; d++)
            idx = idx * m->in_dims[j][d] + o[d];
        return idx;
    }
    if (m->op == GRAPH_OP_GATHER) {
        /* out = [outer][n_indices][inner] -> in = [outer][axis_len][inner] */
        int64_t inner = (int64_t)(e % (uint64_t)m->inner);
        int64_t q = (int64_t)(e / (uint64_t)m->inner);
        int64_t i = q % m->n_indices, outer = q / m->n_indices;
        int64_t ix = m->indices[i] < 0 ? m->indices[i] + m->gather_axis_len : m->indices[i];
        return (outer * m->gather_axis_len + ix) * m->inner + inner;
    }
    int64_t idx = m->base;
    for (int d = 0; d < m->rank; d++)
        idx += o[d] * m->mul[d];
    return idx;
}

/* Row-major strides (elements) of a shape: the last axis 1. */
static void row_major_strides(const graph_shape *s, int64_t *stride)
{
    int64_t acc = 1;
    for (int d = s->rank - 1; d >= 0; d--) {
        stride[d] = acc;
        acc *= s->dims[d];
    }
}

static bool build_map(lowering *lw, const graph_node *n, int index, run_map *m, int64_t **owned)
{
    const graph *g = lw->g;
    const graph_tensor *out = &g->tensors[n->outputs[0]], *in = &g->tensors[n->inputs[0]];
    memset(m, 0, sizeof *m);
    m->op = n->op;
    m->rank = out->shape.rank;
    for (int d = 0; d < m->rank; d++)
        m->out_dims[d] = out->shape.dims[d];
    int64_t st[GRAPH_MAX_RANK];
    row_major_strides(&in->shape, st);
    char err[256];
    switch (n->op) {
    case GRAPH_OP_CAST:                 /* to the type it has: a copy */
        for (int d = 0; d < m->rank; d++)
            m->mul[d] = st[d];
        return true;
    case GRAPH_OP_TRANSPOSE: {
        int64_t perm[GRAPH_MAX_RANK];
        const graph_attr *a = graph_attr_find(n, "perm");
        for (int d = 0; d < m->rank; d++)
            perm[d] = a ? a->ints[d] : m->rank - 1 - d;
        for (int d = 0; d < m->rank; d++)
            m->mul[d] = st[perm[d]];
        return true;
    }
    case GRAPH_OP_SLICE: {
        ops_slice sl;
        if (!ops_slice_init(g, n, &sl, err, sizeof err))
            return lw_unsupported(lw, n, index, err);
        for (int d = 0; d < m->rank; d++) {
            m->mul[d] = st[d] * sl.step[d];
            m->base += sl.start[d] * st[d];
        }
        return true;
    }
    case GRAPH_OP_EXPAND: {
        int off = m->rank - in->shape.rank;
        for (int d = 0; d < m->rank; d++)
            m->mul[d] = d < off || in->shape.dims[d - off] == 1 ? 0 : st[d - off];
        const ltensor *lo = &lw->tensor[n->outputs[0]];
        if (lo->permuted) {
            /* Written channels-last: output element e counts in the stored
             * order of the axes, perm[]. */
            int64_t mul[GRAPH_MAX_RANK];
            memcpy(mul, m->mul, sizeof mul);
            for (int d = 0; d < m->rank; d++) {
                m->out_dims[d] = out->shape.dims[lo->perm[d]];
                m->mul[d] = mul[lo->perm[d]];
            }
        }
        return true;
    }
    case GRAPH_OP_CONCAT: {
        m->axis = ops_norm_axis(graph_attr_int(n, "axis"), m->rank);
        m->n_in = n->n_inputs;
        if (m->n_in > 64)
            return lw_unsupported(lw, n, index, "more than 64 inputs");
        for (int j = 0; j < m->n_in; j++) {
            const graph_tensor *t = &g->tensors[n->inputs[j]];
            for (int d = 0; d < m->rank; d++)
                m->in_dims[j][d] = t->shape.dims[d];
            m->cum[j + 1] = m->cum[j] + t->shape.dims[m->axis];
        }
        return true;
    }
    case GRAPH_OP_GATHER: {
        const graph_tensor *ix = &g->tensors[n->inputs[1]];
        if (!ix->data)
            return lw_unsupported(lw, n, index, "indices that are not constants (an embedding lookup at run time) "
                                                "are not yet supported");
        int axis = ops_norm_axis(graph_attr_int(n, "axis"), in->shape.rank);
        int64_t count = graph_shape_numel(&ix->shape);
        int64_t *v = malloc((size_t)(count ? count : 1) * sizeof *v);
        if (!v)
            return lw_fail(lw, "out of host memory");
        size_t got;
        if (!ops_const_ints(ix, v, (size_t)count, &got)) {
            free(v);
            return lw_unsupported(lw, n, index, "indices must be i32 or i64");
        }
        *owned = v;
        m->indices = v;
        m->n_indices = count;
        m->gather_axis_len = in->shape.dims[axis];
        m->outer = 1;
        m->inner = 1;
        for (int d = 0; d < axis; d++)
            m->outer *= in->shape.dims[d];
        for (int d = axis + 1; d < in->shape.rank; d++)
            m->inner *= in->shape.dims[d];
        for (int64_t i = 0; i < count; i++)
            if (v[i] < -m->gather_axis_len || v[i] >= m->gather_axis_len)
                return lw_unsupported(lw, n, index, "an index is out of range");
        return true;
    }
    default:
        return lw_unsupported(lw, n, index, "no lowering for this op yet");
    }
}

bool lw_lower_runs(lowering *lw, const graph_node *n, int index)
{
    const graph *g = lw->g;
    int out = n->outputs[0];
    uint32_t eb = lw->tensor[out].element_bytes;
    if (eb == 0 || (eb < 4 && eb != 2))
        return lw_unsupported(lw, n, index, "elements of this type are not moved by the exchange yet");
    if (n->op == GRAPH_OP_EXPAND && g->tensors[out].shape.rank == 4) {
        /* An image its readers take channels-last (lower_layout.c). */
        bool *nhwc = lw_nhwc_set(g);
        if (!nhwc)
            return lw_fail(lw, "out of host memory");
        if (nhwc[out]) {
            static const uint32_t perm[4] = { 0, 2, 3, 1 };
            lw->tensor[out].permuted = true;
            memcpy(lw->tensor[out].perm, perm, sizeof perm);
        }
        free(nhwc);
    }
    run_map m;
    int64_t *owned = NULL;
    if (!build_map(lw, n, index, &m, &owned)) {
        free(owned);
        return false;
    }
    uint64_t total = (uint64_t)graph_shape_numel(&g->tensors[out].shape);
    char what[96];
    snprintf(what, sizeof what, "tensor '%s'", g->tensors[out].name);
    uint64_t gran = lw_gran_of(eb);
    /* Moving data costs about a cycle per 4 bytes at the receiver, and a
     * transfer's set-up for each run. */
    uint32_t tiles = lw_plan_tiles(lw, total, gran, (double)eb / 4.0 + 2.0, 300);
    if (!total)
        lw->tensor[out].placed = true;                 /* an empty tensor: nothing to move */
    if (total && !lw_place_linear(lw, out, gran, tiles, what)) {
        free(owned);
        return false;
    }
    const ltensor *lo = &lw->tensor[out];
    for (size_t p = 0; p < lo->n && !lw->failed; p++) {
        const piece *pc = &lo->p[p];
        uint64_t e = pc->first, end = pc->first + pc->count;
        while (e < end && !lw->failed) {
            int k, k2;
            int64_t src = source_of(&m, e, &k);
            uint64_t len = 1;
            while (e + len < end && source_of(&m, e + len, &k2) == src + (int64_t)len && k2 == k)
                len++;
            if (eb == 2 && ((src | (int64_t)len | (int64_t)(e - pc->first)) & 1)) {
                lw_unsupported(lw, n, index, "f16 data moved in runs of odd length or offset (not yet supported)");
                break;
            }
            lw_fetch_into(lw, n->inputs[k], (uint64_t)src, len, pc->tile, pc->addr + (uint32_t)((e - pc->first) * eb));
            e += len;
        }
    }
    free(owned);
    if (!lw->failed)
        lw_end_phase(lw);
    return !lw->failed;
}

/* Cast between f32 and f16 on the tiles that hold the input. */
bool lw_lower_cast(lowering *lw, const graph_node *n, int index)
{
    const graph *g = lw->g;
    int in = n->inputs[0], out = n->outputs[0];
    graph_dtype from = g->tensors[in].dtype, to = g->tensors[out].dtype;
    if (from == to)
        return lw_lower_runs(lw, n, index);
    bool down = from == GDT_F32 && to == GDT_F16;
    if (!down && !(from == GDT_F16 && to == GDT_F32))
        return lw_unsupported(lw, n, index, "only casts between f32 and f16 are lowered");
    uint64_t total = (uint64_t)graph_shape_numel(&g->tensors[out].shape);
    char what[96];
    snprintf(what, sizeof what, "tensor '%s'", g->tensors[out].name);
    /* Pieces of 4 elements (8 bytes of f16), so both sides stay aligned. */
    uint32_t tiles = lw_plan_tiles(lw, total, 4, 1.0, 200);
    if (!lw_place_linear(lw, out, 4, tiles, what))
        return false;
    const ltensor *lo = &lw->tensor[out];
    uint32_t *src = malloc((lo->n + 1) * sizeof *src);
    if (!src)
        return lw_fail(lw, "out of host memory");
    for (size_t k = 0; k < lo->n && !lw->failed; k++)
        src[k] = lw_fetch(lw, in, lo->p[k].first, lo->p[k].count, lo->p[k].tile, PREFER_REGION1);
    if (!lw->failed)
        lw_end_phase(lw);
    uint32_t ein = lw->tensor[in].element_bytes, eout = lw->tensor[out].element_bytes;
    for (size_t k = 0; k < lo->n && !lw->failed; k++) {
        const piece *p = &lo->p[k];
        worker_set ws;
        if (!lw_workers_begin(lw, p->tile, KERNEL_CAST_WORDS, (p->count + 3) / 4, &ws))
            break;
        for (int w = 0; w < CODELET_WORKERS; w++) {
            uint64_t e0 = ws.lo[w] * 4, e1 = ws.hi[w] * 4 < p->count ? ws.hi[w] * 4 : p->count;
            kernel_cast_record(ws.rec[w], src[k] + (uint32_t)(e0 * ein), p->addr + (uint32_t)(e0 * eout),
                               (uint32_t)(e1 > e0 ? e1 - e0 : 0));
        }
        lw_workers_run(lw, p->tile, down ? lw->kernels.vtx_cast_f32_to_f16 : lw->kernels.vtx_cast_f16_to_f32, &ws);
    }
    free(src);
    return !lw->failed;
}

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
    int combine = op == KERNEL_REDUCE_MAX || op == KERNEL_REDUCE_MIN ? op : KERNEL_REDUCE_SUM;
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
        int combine = op == KERNEL_REDUCE_MAX || op == KERNEL_REDUCE_MIN ? op : KERNEL_REDUCE_SUM;
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
    int combine = op == KERNEL_REDUCE_MAX || op == KERNEL_REDUCE_MIN ? op : KERNEL_REDUCE_SUM;
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

/* Reductions over any axes (ReduceSum, Mean, Max, Min, Prod, SumSquare,
 * L1, L2, LogSum, LogSumExp): the input seen with the kept axes first and
 * the reduced ones last is fetched as rows of the reduced elements (a row
 * an output element; rows padded to an even length so that they stay
 * 8-byte aligned), then the reduce codelet, with a unary pass before it
 * (e^x) or after it (sqrt, log) for the forms it has no op for. */
#define REDUCE_COLUMNS_MAX 4096u
#define REDUCE_COLUMNS_MIN_ROWS 32u

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
    row_major_strides(s, st);
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
    bool leading = !trailing && pre < 0 && post < 0 && rows > 1 && rows <= REDUCE_COLUMNS_MAX && cols >= REDUCE_COLUMNS_MIN_ROWS;
    for (int d = 0, seen_kept = 0; d < s->rank && leading; d++) {
        if (!reduced[d])
            seen_kept = 1;
        else if (seen_kept)
            leading = false;
    }
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

/* Pow with a constant scalar exponent that has an exact cheaper form:
 * 2 (x * x), 1 (a copy), 0.5 (sqrt), -1 (reciprocal), -0.5 (rsqrt).
 * Returns the unary function (or -2 for x * x, -3 for a copy), -1 if none. */
int lw_pow_form(const graph *g, const graph_node *n)
{
    const graph_tensor *e = &g->tensors[n->inputs[1]];
    if (!e->data || graph_shape_numel(&e->shape) != 1 || g->tensors[n->inputs[0]].dtype != GDT_F32)
        return -1;
    double v;
    switch (e->dtype) {
    case GDT_F32: v = *(const float *)e->data; break;
    case GDT_F64: v = *(const double *)e->data; break;
    case GDT_I32: v = *(const int32_t *)e->data; break;
    case GDT_I64: v = (double)*(const int64_t *)e->data; break;
    default: return -1;
    }
    if (v == 2.0)
        return -2;
    if (v == 1.0)
        return -3;
    if (v == 0.5)
        return KERNEL_UNARY_SQRT;
    if (v == -1.0)
        return KERNEL_UNARY_RECIPROCAL;
    if (v == -0.5)
        return KERNEL_UNARY_RSQRT;
    return -1;
}

bool lower_pow_is_direct(const graph *g, const graph_node *n)
{
    return lw_pow_form(g, n) != -1;
}

/* A pool with one output pixel (the global average pool before
 * ResNet-50's classifier): the channels of every image spread over the
 * tiles, each tile receiving its channels of every pixel the window
 * reaches (a run a pixel) and its workers sharing them. */
static bool pool_by_channels(lowering *lw, const graph_node *n, const ops_window *win, bool avg, bool count_pad,
                             const char *what)
{
    const graph *g = lw->g;
    int in = n->inputs[0], out = n->outputs[0];
    const graph_shape *xs = &g->tensors[in].shape;
    uint64_t nb = (uint64_t)xs->dims[0], c = (uint64_t)xs->dims[1], h = (uint64_t)xs->dims[2],
             w = (uint64_t)xs->dims[3];
    int64_t r0 = -win->pad_begin[0] > 0 ? -win->pad_begin[0] : 0, r1 = win->kernel[0] - win->pad_begin[0];
    if (r1 > (int64_t)h)
        r1 = (int64_t)h;
    const uint64_t rows = r1 > r0 ? (uint64_t)(r1 - r0) : 0, cu = c % 2 ? 1 : 2;
    /* Units of channel pairs (single channels when C is odd). */
    uint64_t units = nb * (c / cu);
    double per_unit = (double)(rows * w * cu) * 1.5 + 4.0;
    uint32_t tiles = lw_plan_tiles(lw, units, 1, per_unit, 300);
    uint64_t *l = malloc(tiles * sizeof *l), *hh = malloc(tiles * sizeof *hh);
    if (!l || !hh) {
        free(l);
        free(hh);
        return lw_fail(lw, "out of host memory");
    }
    lw_linear_split(units, 1, tiles, l, hh);
    kernel_pool_shape sh = { (uint32_t)rows, (uint32_t)w, 0, (uint32_t)win->kernel[0], (uint32_t)win->kernel[1],
                             (uint32_t)win->stride[0], (uint32_t)win->stride[1], 0, (uint32_t)win->pad_begin[1], 1, 1 };
    /* The window's rows r0.. are rows 0.. of the received image. */
    sh.pt = (uint32_t)(win->pad_begin[0] + r0);
    uint32_t *src = calloc((size_t)tiles * nb + 1, sizeof *src), *dst = calloc((size_t)tiles * nb + 1, sizeof *dst);
    if (!src || !dst) {
        free(l); free(hh); free(src); free(dst);
        return lw_fail(lw, "out of host memory");
    }
    for (int pass = 0; pass < 2 && !lw->failed; pass++) {
        for (uint32_t ti = 0; ti < tiles && !lw->failed; ti++) {
            uint32_t tile = lw_tile_of(lw, ti);
            for (uint64_t img = 0; img < nb && !lw->failed; img++) {
                uint64_t u0 = l[ti] > img * (c / cu) ? l[ti] : img * (c / cu);
                uint64_t u1 = hh[ti] < (img + 1) * (c / cu) ? hh[ti] : (img + 1) * (c / cu);
                if (u0 >= u1)
                    continue;
                uint64_t c0 = (u0 - img * (c / cu)) * cu, cc = (u1 - u0) * cu;
                size_t slot = (size_t)ti * nb + img;
                if (pass == 0) {
                    /* Receive: its channels of every pixel, cc apart. */
                    src[slot] = lw_scratch_alloc(lw, tile, rows * w * cc * 4, PREFER_REGION1, 8, what);
                    dst[slot] = src[slot] ? lw_tensor_alloc(lw, out, tile, cc * 4, PREFER_REGION1, 8, false, what) : 0;
                    if (!dst[slot])
                        break;
                    for (uint64_t r = 0; r < rows && !lw->failed; r++)
                        for (uint64_t x = 0; x < w && !lw->failed; x++)
                            lw_fetch_into(lw, in, ((img * h + (uint64_t)r0 + r) * w + x) * c + c0, cc, tile,
                                          src[slot] + (uint32_t)((r * w + x) * cc * 4));
                    lw_add_piece(lw, out, tile, dst[slot], img * c + c0, cc);
                    continue;
                }
                /* The workers share the channels. */
                worker_set ws;
                if (!lw_workers_begin(lw, tile, KERNEL_POOL_WORDS, cc / cu, &ws))
                    break;
                kernel_pool_shape s2 = sh;
                s2.c = (uint32_t)cc;
                for (int k = 0; k < CODELET_WORKERS; k++)
                    kernel_pool_record(ws.rec[k], src[slot] + (uint32_t)(ws.lo[k] * cu * 4),
                                       dst[slot] + (uint32_t)(ws.lo[k] * cu * 4), &s2, 0, 1,
                                       (uint32_t)((ws.hi[k] - ws.lo[k]) * cu), count_pad);
                lw_workers_run(lw, tile, avg ? lw->kernels.vtx_avgpool_nhwc_f32 : lw->kernels.vtx_maxpool_nhwc_f32,
                               &ws);
            }
        }
        if (pass == 0 && !lw->failed)
            lw_end_phase(lw);
    }
    free(l);
    free(hh);
    free(src);
    free(dst);
    return !lw->failed;
}

/* A block of a pool's output pixels on one tile, and the input it receives. */
typedef struct pool_block {
    uint32_t tile, src, dst;
    uint64_t img, o0, o1, c0, c1;     /* output rows and columns */
    uint64_t x0, wr;                  /* the input columns received */
} pool_block;

/* The pool's blocks of output pixels (*nbl of them, malloc'd; NULL when
 * out of host memory, lw failed). */
static pool_block *pool_blocks(lowering *lw, const ops_window *win, uint64_t nb, uint64_t c, uint64_t oh, uint64_t ow,
                               size_t *n_blocks)
{
    /* Whole rows when there are rows enough for the tiles, else pieces of
     * rows. */
    pool_block *bl = NULL;
    size_t nbl = 0;
    if (nb * oh * 2 >= lw->tiles || ow == 1) {
        uint64_t units = nb * oh;
        double per_row = (double)(ow * c) * (double)(win->kernel[0] * win->kernel[1]) / 8.0 + 50.0;
        uint32_t tiles = lw_plan_tiles(lw, units, 1, per_row, 300);
        uint64_t *l = malloc(tiles * sizeof *l), *hh = malloc(tiles * sizeof *hh);
        bl = calloc((size_t)tiles * nb + 1, sizeof *bl);
        if (!l || !hh || !bl) {
            free(l); free(hh); free(bl);
            lw_fail(lw, "out of host memory");
            return NULL;
        }
        lw_linear_split(units, 1, tiles, l, hh);
        for (uint32_t ti = 0; ti < tiles; ti++)
            for (uint64_t img = 0; img < nb; img++) {
                uint64_t u0 = l[ti] > img * oh ? l[ti] : img * oh;
                uint64_t u1 = hh[ti] < (img + 1) * oh ? hh[ti] : (img + 1) * oh;
                if (u0 < u1)
                    bl[nbl++] = (pool_block){ lw_tile_of(lw, ti), 0, 0, img, u0 - img * oh, u1 - img * oh, 0, ow,
                                              0, 0 };
            }
        free(l);
        free(hh);
    } else {
        uint64_t groups = lw->tiles / (nb * oh);
        if (groups > ow)
            groups = ow;
        uint64_t cw = (ow + groups - 1) / groups;
        groups = (ow + cw - 1) / cw;
        bl = calloc(nb * oh * groups + 1, sizeof *bl);
        if (!bl) {
            lw_fail(lw, "out of host memory");
            return NULL;
        }
        for (uint64_t img = 0; img < nb; img++)
            for (uint64_t o = 0; o < oh; o++)
                for (uint64_t q = 0; q < groups; q++, nbl++)
                    bl[nbl] = (pool_block){ lw_tile_of(lw, (uint32_t)nbl), 0, 0, img, o, o + 1, q * cw,
                                            (q + 1) * cw < ow ? (q + 1) * cw : ow, 0, 0 };
    }
    *n_blocks = nbl;
    return bl;
}

/* Pass 1 of a pool: each block receives the input rows (or the part of
 * them) its windows reach and is given its output pixels; the exchange
 * phase ends. */
static void pool_receive(lowering *lw, const graph_node *n, const ops_window *win, pool_block *bl, size_t nbl,
                         const char *what)
{
    int in = n->inputs[0], out = n->outputs[0];
    const graph_shape *xs = &lw->g->tensors[in].shape;
    uint64_t c = (uint64_t)xs->dims[1], h = (uint64_t)xs->dims[2], w = (uint64_t)xs->dims[3],
             oh = (uint64_t)win->out[0], ow = (uint64_t)win->out[1];
    for (size_t q = 0; q < nbl && !lw->failed; q++) {
        pool_block *B = &bl[q];
        int64_t r0 = (int64_t)B->o0 * win->stride[0] - win->pad_begin[0],
                r1 = (int64_t)(B->o1 - 1) * win->stride[0] - win->pad_begin[0] + win->kernel[0];
        int64_t x0 = (int64_t)B->c0 * win->stride[1] - win->pad_begin[1],
                x1 = (int64_t)(B->c1 - 1) * win->stride[1] - win->pad_begin[1] + win->kernel[1];
        r0 = r0 < 0 ? 0 : r0;
        r1 = r1 > (int64_t)h ? (int64_t)h : r1;
        x0 = x0 < 0 ? 0 : x0;
        x1 = x1 > (int64_t)w ? (int64_t)w : x1;
        uint64_t wr = x1 > x0 ? (uint64_t)(x1 - x0) : 0;
        B->x0 = (uint64_t)x0;
        B->wr = wr;
        if (r1 > r0 && wr) {
            uint32_t a;
            if (wr == w) {
                a = lw_fetch(lw, in, (B->img * h + (uint64_t)r0) * w * c, (uint64_t)(r1 - r0) * w * c, B->tile,
                             PREFER_REGION1);
            } else {
                a = lw_scratch_alloc(lw, B->tile, (uint64_t)(r1 - r0) * wr * c * 4, PREFER_REGION1, 8, what);
                for (int64_t ih = r0; a && ih < r1 && !lw->failed; ih++)
                    lw_fetch_into(lw, in, ((B->img * h + (uint64_t)ih) * w + (uint64_t)x0) * c, wr * c, B->tile,
                                  a + (uint32_t)((uint64_t)(ih - r0) * wr * c * 4));
            }
            if (!a)
                break;
            /* shifted so that row ih of the image is at a + (ih - r0) W' C */
            B->src = a - (uint32_t)((uint64_t)r0 * wr * c * 4);
        }
        uint64_t pw = B->c1 - B->c0;
        uint32_t o = lw_tensor_alloc(lw, out, B->tile, (B->o1 - B->o0) * pw * c * 4, PREFER_REGION1, 8, false, what);
        if (!o)
            break;
        if (pw == ow)
            lw_add_piece(lw, out, B->tile, o, (B->img * oh + B->o0) * ow * c, (B->o1 - B->o0) * ow * c);
        else
            for (uint64_t r = B->o0; r < B->o1 && !lw->failed; r++)
                lw_add_piece(lw, out, B->tile, o + (uint32_t)((r - B->o0) * pw * c * 4),
                             ((B->img * oh + r) * ow + B->c0) * c, pw * c);
        B->dst = o - (uint32_t)(B->o0 * pw * c * 4);
    }
    if (!lw->failed)
        lw_end_phase(lw);
}

/* Pass 2 of a pool: a compute set on each block's tile, its six workers
 * sharing the block's output rows, or its channels when it has fewer rows
 * than workers. */
static void pool_compute_sets(lowering *lw, const graph_node *n, const ops_window *win, const pool_block *bl,
                              size_t nbl, bool avg, bool count_pad)
{
    const graph_shape *xs = &lw->g->tensors[n->inputs[0]].shape;
    uint64_t c = (uint64_t)xs->dims[1], h = (uint64_t)xs->dims[2], oh = (uint64_t)win->out[0];
    for (size_t q = 0; q < nbl && !lw->failed; q++) {
        const pool_block *B = &bl[q];
        uint64_t x0 = B->x0, wr = B->wr, pw = B->c1 - B->c0;
        bool by_channel = B->o1 - B->o0 < CODELET_WORKERS;
        /* Split by channel: in pairs when C is even (the codelet's 8-byte
         * aligned pixels), one by one when it is odd. */
        const uint64_t cu = c % 2 ? 1 : 2;
        worker_set ws;
        if (!lw_workers_begin(lw, B->tile, KERNEL_POOL_WORDS, by_channel ? c / cu : B->o1 - B->o0, &ws))
            break;
        /* The block's columns: the received ones, the window's left edge
         * moved with them. */
        kernel_pool_shape sh = { (uint32_t)h, (uint32_t)wr, (uint32_t)c, (uint32_t)win->kernel[0],
                                 (uint32_t)win->kernel[1], (uint32_t)win->stride[0], (uint32_t)win->stride[1],
                                 (uint32_t)win->pad_begin[0],
                                 (uint32_t)(win->pad_begin[1] + (int64_t)x0
                                            - (int64_t)(B->c0 * (uint64_t)win->stride[1])),
                                 (uint32_t)oh, (uint32_t)pw };
        for (int k = 0; k < CODELET_WORKERS; k++) {
            if (by_channel)
                kernel_pool_record(ws.rec[k], B->src + (uint32_t)(ws.lo[k] * cu * 4),
                                   B->dst + (uint32_t)(ws.lo[k] * cu * 4), &sh, (uint32_t)B->o0, (uint32_t)B->o1,
                                   (uint32_t)((ws.hi[k] - ws.lo[k]) * cu), count_pad);
            else
                kernel_pool_record(ws.rec[k], B->src, B->dst, &sh, (uint32_t)(B->o0 + ws.lo[k]),
                                   (uint32_t)(B->o0 + ws.hi[k]), (uint32_t)c, count_pad);
        }
        lw_workers_run(lw, B->tile, avg ? lw->kernels.vtx_avgpool_nhwc_f32 : lw->kernels.vtx_maxpool_nhwc_f32, &ws);
    }
}

/* MaxPool, AveragePool and GlobalAveragePool on an image kept channels-last
 * (lw_conv_input_layout): blocks of output pixels spread over the tiles (whole
 * rows, or parts of rows when there are fewer rows than tiles); a tile
 * receives the input rows its windows reach (one contiguous NHWC range)
 * and its six workers share its output rows, or, for a single row (a
 * global pool), its channels. */
bool lw_lower_pool(lowering *lw, const graph_node *n, int index)
{
    const graph *g = lw->g;
    int in = n->inputs[0], out = n->outputs[0];
    const graph_shape *xs = &g->tensors[in].shape;
    if (g->tensors[in].dtype != GDT_F32 || xs->rank != 4)
        return lw_unsupported(lw, n, index, "only 2-D f32 pooling is lowered");
    int64_t kernel[2] = { xs->dims[2], xs->dims[3] };
    bool global = n->op == GRAPH_OP_GLOBALAVERAGEPOOL;
    bool avg = n->op != GRAPH_OP_MAXPOOL;
    ops_window win;
    memset(&win, 0, sizeof win);
    char err[256];
    if (global) {
        win.kernel[0] = kernel[0];
        win.kernel[1] = kernel[1];
        win.stride[0] = win.stride[1] = 1;
        win.out[0] = win.out[1] = 1;
    } else {
        const graph_attr *ka = graph_attr_find(n, "kernel_shape");
        if (!ka || ka->n != 2)
            return lw_unsupported(lw, n, index, "only 2-D windows are lowered");
        kernel[0] = ka->ints[0];
        kernel[1] = ka->ints[1];
        bool ceil_mode = graph_attr_find(n, "ceil_mode") && graph_attr_int(n, "ceil_mode");
        if (!ops_window_init(g, n, xs, kernel, ceil_mode, &win, err, sizeof err))
            return lw_unsupported(lw, n, index, err);
        if (win.dilation[0] != 1 || win.dilation[1] != 1)
            return lw_unsupported(lw, n, index, "dilated pooling is not yet supported");
    }
    uint64_t nb = (uint64_t)xs->dims[0], c = (uint64_t)xs->dims[1], oh = (uint64_t)win.out[0],
             ow = (uint64_t)win.out[1];
    if ((uint64_t)win.kernel[1] > KERNEL_POOL_MAX_KW)
        return lw_unsupported(lw, n, index, "a window wider than the pool codelet takes");
    bool count_pad = avg && graph_attr_find(n, "count_include_pad") && graph_attr_int(n, "count_include_pad");
    lw_keep_channels_last(&lw->tensor[out], oh * ow != 1);   /* 1 x 1 pixels: the same in either order */
    char what[96];
    snprintf(what, sizeof what, "tensor '%s'", g->tensors[out].name);
    if (oh * ow == 1)
        return pool_by_channels(lw, n, &win, avg, count_pad, what);
    size_t nbl = 0;
    pool_block *bl = pool_blocks(lw, &win, nb, c, oh, ow, &nbl);
    if (!bl)
        return false;
    pool_receive(lw, n, &win, bl, nbl, what);
    pool_compute_sets(lw, n, &win, bl, nbl, avg, count_pad);
    free(bl);
    return !lw->failed;
}
