/*
 * lower_data.c — the ops that move or gather data without an element-wise
 * codelet of their own:
 *   - data movement in runs (lw_lower_runs): Transpose, Concat, Slice,
 *     Expand and Gather with constant indices;
 *   - casts between f32 and f16 (lw_lower_cast: vtx_cast_f32_to_f16 and
 *     vtx_cast_f16_to_f32 on the tiles that hold the input);
 *   (reductions are in lower_reduce.c);
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
#include "lower_ops.h"
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
void lw_row_major_strides(const graph_shape *s, int64_t *stride)
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
    lw_row_major_strides(&in->shape, st);
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

/* Whether node u reads tensor t as the weights of a matmul or convolution:
 * B of MatMul, Gemm or FusedMatMul, W of Conv, FusedConv or ConvTranspose. */
static bool reads_as_weights(const graph_node *u, int k)
{
    return k == 1 && (u->op == GRAPH_OP_MATMUL || u->op == GRAPH_OP_GEMM || u->op == GRAPH_OP_FUSED_MATMUL ||
                      u->op == GRAPH_OP_CONV || u->op == GRAPH_OP_FUSED_CONV || u->op == GRAPH_OP_CONV_TRANSPOSE);
}

/* f16 weights fetched in rows whose ends stay 4-byte aligned: a matmul's
 * B with even K and N, a convolution's W with an even count of output
 * channels and of elements an output channel (ResNet-50's first layer, 3 x
 * 7 x 7, keeps its Cast). */
static bool even_rows(const graph_shape *s)
{
    if (s->rank < 2)
        return false;
    if (s->rank == 4) {
        int64_t per = s->dims[0] ? graph_shape_numel(s) / s->dims[0] : 1;
        return s->dims[0] % 2 == 0 && per % 2 == 0;
    }
    return s->dims[s->rank - 1] % 2 == 0 && s->dims[s->rank - 2] % 2 == 0;
}

bool lw_cast_into_matmul(const graph *g, int t)
{
    const graph_tensor *tt = &g->tensors[t];
    if (tt->producer < 0 || tt->is_output || tt->dtype != GDT_F32 || !even_rows(&tt->shape))
        return false;
    const graph_node *c = &g->nodes[tt->producer];
    if (c->op != GRAPH_OP_CAST || g->tensors[c->inputs[0]].dtype != GDT_F16)
        return false;
    bool any = false;
    for (int i = 0; i < g->n_nodes; i++) {
        const graph_node *u = &g->nodes[i];
        for (int k = 0; k < u->n_inputs; k++) {
            if (u->inputs[k] != t || u->removed)
                continue;
            if (u->op == GRAPH_OP_TRANSPOSE && lw_transpose_into_matmul(g, u->outputs[0])) {
                /* read as B through the Transpose, never as A */
                for (int j = 0; j < g->n_nodes; j++)
                    for (int q = 0; q < g->nodes[j].n_inputs; q++)
                        if (g->nodes[j].inputs[q] == u->outputs[0] && q != 1)
                            return false;
            } else if (!reads_as_weights(u, k)) {
                return false;
            }
            any = true;
        }
    }
    return any;
}

/* Pieces the cast codelet can take as they are: each starts at an element
 * a multiple of 4 and an 8-byte address and holds a multiple of 4
 * elements unless it ends the tensor (an odd count writes the element
 * after it). */
static bool castable_pieces(const ltensor *t, uint64_t total)
{
    if (!t->placed || !t->n)
        return false;
    for (size_t k = 0; k < t->n; k++) {
        const piece *p = &t->p[k];
        if (p->first % 4 || p->addr % 8 || (p->count % 4 && p->first + p->count != total))
            return false;
    }
    return true;
}

/* The variable whose update is `out` when node `index` may write it over
 * the variable's pieces (of its type, castable); else -1. */
static int updated_variable(lowering *lw, int out, int index)
{
    const graph *g = lw->g;
    for (int t = 0; t < g->n_tensors; t++) {
        const graph_tensor *x = &g->tensors[t];
        if (x->is_variable && x->update >= 0 && lw->tensor[x->update].root == out) {
            const ltensor *lv = &lw->tensor[t];
            bool ok = x->dtype == g->tensors[out].dtype && lw->tensor[out].root == out && !lw->tensor[out].n &&
                      castable_pieces(lv, (uint64_t)graph_shape_numel(&x->shape)) &&
                      lw_variable_updated_in_place(lw, t, out, index);
            return ok ? t : -1;
        }
    }
    return -1;
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
    if (lw_cast_into_matmul(g, out)) {
        lw->rep->folded_casts++;
        return true;                  /* its matmuls read the f16 weight as it is */
    }
    bool stochastic = down && graph_attr_find(n, "rounding") && !strcmp(graph_attr_string(n, "rounding"), "stochastic");
    uint64_t total = (uint64_t)graph_shape_numel(&g->tensors[out].shape);
    char what[96];
    snprintf(what, sizeof what, "tensor '%s'", g->tensors[out].name);
    /* An f16 weight's update written over the weight (no copy at the end of
     * the step); a weight's f32 value beside the weight's pieces, so that
     * the optimizer's element-wise ops and that update stay on its tiles;
     * else pieces of 4 elements (8 bytes of f16), so both sides stay aligned. */
    lw_same_layout(lw, out, in);
    int v = updated_variable(lw, out, index);
    if (v >= 0) {
        const ltensor *lv = &lw->tensor[v];
        for (size_t k = 0; k < lv->n; k++)
            if (!lw_add_piece(lw, out, lv->p[k].tile, lv->p[k].addr, lv->p[k].first, lv->p[k].count))
                return false;
    } else if (lw_gt(lw, lw->tensor[in].root)->is_variable && castable_pieces(&lw->tensor[in], total)) {
        if (!lw_place_like(lw, out, in, what))
            return false;
    } else {
        uint32_t tiles = lw_plan_tiles(lw, total, 4, 1.0, 200);
        if (!lw_place_linear(lw, out, 4, tiles, what))
            return false;
    }
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
        lw_workers_run(lw, p->tile, stochastic ? lw->kernels.vtx_cast_f32_to_f16_sr
                                    : down      ? lw->kernels.vtx_cast_f32_to_f16
                                                : lw->kernels.vtx_cast_f16_to_f32, &ws);
    }
    free(src);
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
