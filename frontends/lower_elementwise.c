/*
 * lower_elementwise.c — the ops that keep their input's pieces or follow
 * them: views (their output is their input's pieces), element-wise ops of
 * one operand (vtx_unary_f32) and of two with numpy broadcasting
 * (vtx_binary_f32), and the row ops Softmax and LayerNormalization
 * (vtx_softmax_rows_f32, vtx_layernorm_rows_f32).  The codelet function of
 * an element-wise op is the one its row of ops.def names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower_ops.h"
#include "ops_impl.h"
#include "workloads/codelets/elementwise.h"

/* A view: the output is the input's pieces (a constant stays a constant). */
bool lw_lower_view(lowering *lw, const graph_node *n, int index)
{
    (void)index;
    int in = n->inputs[0], out = n->outputs[0];
    if (lw_gt(lw, in)->data && !lw->tensor[in].placed)
        return true;              /* a constant view stays a constant: fetched where used */
    ltensor *li = &lw->tensor[in], *lo = &lw->tensor[out];
    if (li->permuted) {
        if (!graph_shape_equal(&lw_gt(lw, in)->shape, &lw_gt(lw, out)->shape))
            return lw_fail(lw, "internal: a view of the channels-last tensor '%s' that changes its shape",
                           lw_gt(lw, in)->name);
        lw_same_layout(lw, out, in);
    }
    for (size_t k = 0; k < li->n; k++)
        if (!lw_add_piece(lw, out, li->p[k].tile, li->p[k].addr, li->p[k].first, li->p[k].count))
            return false;
    lo->placed = true;
    return true;
}

/* An element-wise op of one operand, the codelet function of its row. */
bool lw_lower_unary(lowering *lw, const graph_node *n, int index)
{
    return lw_lower_unary_fn(lw, n, index, lw_op_rules[n->op].function);
}

/* Variable r's new value `out` (its update, or a view of it) computed by
 * node `index` from r itself, with no later node reading r: written over
 * r's pieces, the optimizer updating the weight in place, as Poplar's
 * do; the end of the step then has nothing to copy (lower_updates). */
bool lw_variable_updated_in_place(lowering *lw, int r, int out, int index)
{
    const graph *g = lw->g;
    const graph_tensor *v = &g->tensors[r];
    if (!v->is_variable || v->update < 0 || lw->tensor[v->update].root != out)
        return false;
    for (int k = index + 1; k < g->n_nodes; k++)
        for (int i = 0; i < g->nodes[k].n_inputs; i++)
            if (g->nodes[k].inputs[i] >= 0 && lw->tensor[g->nodes[k].inputs[i]].root == r)
                return false;
    return true;
}

/* Output `out` of node `index` in the storage of its input `in` when this
 * node is the last to read that storage (the codelets write out over in0
 * element by element: vtx_unary_f32 and vtx_binary_f32 allow out = in):
 * the same pieces, and the blocks handed from in's storage to out, so
 * that they go back to the tiles after out's last reader (counted as
 * reused storage).  Not for the graph's inputs, outputs and constants,
 * nor when the other operand (-1 none) reads the same storage; a variable
 * only for its update (lw_variable_updated_in_place), its storage staying
 * its own.  False when it may not. */
bool lw_place_in_place(lowering *lw, int out, int in, int other, int index)
{
    int r = lw->tensor[in].root;
    ltensor *li = &lw->tensor[in], *root = &lw->tensor[r], *lo = &lw->tensor[out];
    const graph_tensor *gr = lw_gt(lw, r);
    bool variable = gr->is_variable && lw_variable_updated_in_place(lw, r, out, index);
    if ((!variable && (lw->last_reader[r] != index || root->released || !root->n_blocks || gr->is_variable)) ||
        lo->root != out || lo->n || gr->is_input || gr->is_output || gr->data ||
        li->element_bytes != lo->element_bytes || !li->placed || (other >= 0 && lw->tensor[other].root == r) ||
        graph_shape_numel(&lw_gt(lw, in)->shape) != graph_shape_numel(&lw_gt(lw, out)->shape))
        return false;
    for (size_t k = 0; k < li->n; k++)
        if (!lw_add_piece(lw, out, li->p[k].tile, li->p[k].addr, li->p[k].first, li->p[k].count))
            return false;
    if (variable)
        return true;
    if (!lw_grow((void **)&lo->blocks, &lo->cap_blocks, lo->n_blocks + root->n_blocks, sizeof *lo->blocks))
        return lw_fail(lw, "out of host memory");
    memcpy(lo->blocks + lo->n_blocks, root->blocks, root->n_blocks * sizeof *root->blocks);
    for (size_t b = 0; b < root->n_blocks; b++)
        lw->rep->reused_bytes += root->blocks[b].size;
    lo->n_blocks += root->n_blocks;
    root->n_blocks = 0;
    return true;
}

/* ---- tiles that hold many pieces of the output ----------------------------
 * A matmul's output comes as a piece per row of each block, so a tile may
 * hold hundreds of pieces of one tensor.  There the six workers share the
 * tile's pieces in one compute set a round instead of one compute set a
 * piece: the pieces become items of work (a record each), neighbours that
 * continue each other at a constant step are merged into one strided
 * record, and the items are dealt out in order, split where a worker's
 * share ends. */

/* One record's work: rows of cols elements (unary: one row, in1 unused). */
typedef struct ew_item {
    uint32_t in0, in1, out, rows, cols, row_step, in1_row_step, in1_col_step;
    uint32_t eb;                  /* bytes of an in0 and out element; 0: 4 (scaled add: 2 for f16) */
} ew_item;

/* The items of a tile, and each worker's. */
typedef struct ew_batch {
    ew_item *it;
    size_t n, cap;
    ew_item *w[CODELET_WORKERS];
    size_t wn[CODELET_WORKERS], wcap[CODELET_WORKERS];
} ew_batch;

/* Whether an op on a tile that holds `pieces` pieces of its output deals
 * them out to the workers together: in the backward pass and the update,
 * where the weight gradients are (the forward pass, and so every inference
 * program, keeps a compute set a piece). */
static bool batched(const graph_node *n, size_t pieces)
{
    return n->phase != GRAPH_PHASE_FORWARD && pieces > CODELET_WORKERS;
}

static bool item_push(lowering *lw, ew_item **v, size_t *n, size_t *cap, const ew_item *x)
{
    if (!lw_grow((void **)v, cap, *n + 1, sizeof **v))
        return lw_fail(lw, "out of host memory");
    (*v)[(*n)++] = *x;
    return true;
}

/* Item b continued into item a when it follows it: the same row continued
 * (a single even row and b's elements right after it), or the next rows
 * at a's row steps (8-byte multiples, keeping the rows paired). */
static bool item_merge(ew_item *a, const ew_item *b, bool unary)
{
    if (!b->rows || !b->cols)
        return true;
    uint32_t eb = a->eb ? a->eb : 4;
    if (a->rows == 1 && b->rows == 1 && a->cols % 2 == 0 && b->in0 == a->in0 + a->cols * eb &&
        b->out == a->out + a->cols * eb && (unary || (b->in1_col_step == a->in1_col_step &&
                                                      b->in1 == a->in1 + a->cols * a->in1_col_step))) {
        a->cols += b->cols;
        return true;
    }
    if (unary || a->eb || b->cols != a->cols || b->in1_col_step != a->in1_col_step)
        return false;                 /* a scaled add's items are single rows */
    uint32_t step = a->row_step, step1 = a->in1_row_step;
    if (a->rows == 1) {
        step = b->out - a->out;
        step1 = b->in1 - a->in1;
        if (b->out < a->out + a->cols * 4 || b->in1 < a->in1)
            return false;
    }
    if (step % 8 || step1 % 8 || step < a->cols * 4 || b->out != a->out + a->rows * step ||
        b->in0 != a->in0 + a->rows * step || b->in1 != a->in1 + a->rows * step1 ||
        (b->rows > 1 && (b->row_step != step || b->in1_row_step != step1)))
        return false;
    a->row_step = step;
    a->in1_row_step = step1;
    a->rows += b->rows;
    return true;
}

/* Add an item to the tile's list, merged into the last where it follows it. */
static bool batch_add(lowering *lw, ew_batch *b, const ew_item *x, bool unary)
{
    if (b->n && item_merge(&b->it[b->n - 1], x, unary))
        return true;
    return item_push(lw, &b->it, &b->n, &b->cap, x);
}

/* The first `units` of item x (rows, or elements of a single row) split
 * off into *head, x keeping the rest. */
static void item_split(ew_item *x, uint64_t units, ew_item *head)
{
    *head = *x;
    if (x->rows > 1) {
        head->rows = (uint32_t)units;
        x->rows -= (uint32_t)units;
        x->in0 += (uint32_t)units * x->row_step;
        x->out += (uint32_t)units * x->row_step;
        x->in1 += (uint32_t)units * x->in1_row_step;
    } else {
        head->cols = (uint32_t)units;
        x->cols -= (uint32_t)units;
        x->in0 += (uint32_t)units * (x->eb ? x->eb : 4);
        x->out += (uint32_t)units * (x->eb ? x->eb : 4);
        x->in1 += (uint32_t)units * x->in1_col_step;
    }
}

/* Deal the items out to the workers in order, about the same number of
 * elements each; an item is split (at whole rows, or at an even element
 * of a single row) where a worker's share ends. */
static bool batch_deal(lowering *lw, ew_batch *b)
{
    uint64_t total = 0, done = 0;
    for (size_t i = 0; i < b->n; i++)
        total += (uint64_t)b->it[i].rows * b->it[i].cols;
    int w = 0;
    for (size_t i = 0; i < b->n && !lw->failed; i++) {
        ew_item x = b->it[i];
        while (!lw->failed) {
            uint64_t work = (uint64_t)x.rows * x.cols, target = total * (uint64_t)(w + 1) / CODELET_WORKERS;
            if (w == CODELET_WORKERS - 1 || done + work <= target) {
                item_push(lw, &b->w[w], &b->wn[w], &b->wcap[w], &x);
                done += work;
                break;
            }
            uint64_t room = target > done ? target - done : 0;
            uint64_t units = x.rows > 1 ? (room + x.cols / 2) / x.cols : room & ~(uint64_t)1;
            if (units >= (x.rows > 1 ? x.rows : x.cols)) {
                item_push(lw, &b->w[w], &b->wn[w], &b->wcap[w], &x);
                done += work;
                break;
            }
            if (units) {
                ew_item head;
                item_split(&x, units, &head);
                item_push(lw, &b->w[w], &b->wn[w], &b->wcap[w], &head);
                done += (uint64_t)head.rows * head.cols;
            }
            w++;
        }
    }
    return !lw->failed;
}

/* The records batch_run writes: of vtx_unary_f32 (function fn, a and b its
 * scale and shift), vtx_binary_f32 (op fn) or vtx_scaled_add_* (scale a). */
enum ew_kind { EW_UNARY, EW_BINARY, EW_SCALED_ADD };

/* The tile's compute sets of codelet `entry`: round r runs each worker's
 * r-th item (a worker without one gets an empty record). */
static bool batch_run(lowering *lw, ew_batch *b, uint32_t tile, enum ew_kind kind, uint32_t entry, uint32_t fn,
                      float ua, float ub)
{
    if (!batch_deal(lw, b))
        return false;
    size_t rounds = 0;
    for (int w = 0; w < CODELET_WORKERS; w++)
        if (b->wn[w] > rounds)
            rounds = b->wn[w];
    uint32_t words = kind == EW_UNARY ? KERNEL_UNARY_WORDS : kind == EW_BINARY ? KERNEL_BINARY_WORDS
                                                                               : KERNEL_SCALED_ADD_WORDS;
    for (size_t r = 0; r < rounds && !lw->failed; r++) {
        uint32_t *recs[CODELET_WORKERS];
        uint32_t off = lw_six_records(lw, tile, words, recs);
        if (lw->failed)
            return false;
        for (int w = 0; w < CODELET_WORKERS; w++) {
            ew_item x = r < b->wn[w] ? b->w[w][r] : (ew_item){ b->it[0].in0, b->it[0].in1, b->it[0].out, 0, 0, 0, 0, 0, 0 };
            if (kind == EW_UNARY)
                kernel_unary_record_fn(recs[w], x.in0, x.out, x.rows ? x.cols : 0, fn, ua, ub);
            else if (kind == EW_BINARY)
                kernel_binary_record_op(recs[w], x.in0, x.in1, x.out, x.rows, x.cols, x.row_step, x.in1_row_step,
                                        x.in1_col_step, fn);
            else
                kernel_scaled_add_record(recs[w], x.in0, x.in1, x.out, x.rows ? x.cols : 0, ua);
        }
        lw_step_run(lw, tile, entry, off, words);
    }
    return !lw->failed;
}

static void batch_free(ew_batch *b)
{
    free(b->it);
    for (int w = 0; w < CODELET_WORKERS; w++)
        free(b->w[w]);
    memset(b, 0, sizeof *b);
}

/* The output's pieces grouped by tile (each tile's in order): order[] the
 * piece indices, start[t]..start[t + 1] those of the t-th tile met;
 * malloc'd, NULL when out of host memory. */
static size_t *pieces_by_tile(lowering *lw, const ltensor *lo, size_t **start, size_t *groups)
{
    size_t *order = malloc((lo->n + 1) * sizeof *order), *st = malloc((lo->n + 2) * sizeof *st);
    /* pieces name program tiles: every pipeline stage's, not only chip 0's */
    size_t *count = calloc(lw->program_tiles + 1, sizeof *count), *slot = malloc((lw->program_tiles + 1) * sizeof *slot);
    if (!order || !st || !count || !slot) {
        free(order); free(st); free(count); free(slot);
        lw_fail(lw, "out of host memory");
        return NULL;
    }
    for (size_t k = 0; k < lo->n; k++)
        count[lo->p[k].tile]++;
    size_t g = 0, at = 0;
    for (size_t k = 0; k < lo->n; k++) {
        uint32_t t = lo->p[k].tile;
        if (count[t]) {
            slot[t] = at;
            st[g++] = at;
            at += count[t];
            count[t] = 0;
        }
        order[slot[t]++] = k;
    }
    st[g] = at;
    free(count);
    free(slot);
    *start = st;
    *groups = g;
    return order;
}

/* One compute set of the unary op on output piece p (its input at src):
 * the six workers' shares of its pairs. */
static void unary_piece(lowering *lw, const piece *p, uint32_t src, int function, float a, float b)
{
    worker_set ws;
    if (!lw_workers_begin(lw, p->tile, KERNEL_UNARY_WORDS, (p->count + 1) / 2, &ws))
        return;
    for (int w = 0; w < CODELET_WORKERS; w++) {
        uint64_t e0 = ws.lo[w] * 2, e1 = ws.hi[w] * 2 < p->count ? ws.hi[w] * 2 : p->count;
        kernel_unary_record_fn(ws.rec[w], src + (uint32_t)(e0 * 4), p->addr + (uint32_t)(e0 * 4),
                               (uint32_t)(e1 > e0 ? e1 - e0 : 0), (uint32_t)function, a, b);
    }
    lw_workers_run(lw, p->tile, lw->kernels.vtx_unary_f32, &ws);
}

/* The codelet function of the unary op on tensor `in` (a and b: its scale
 * and shift, for ELEMENTWISE_SCALE_SHIFT) into the node's output. */
static bool unary_of(lowering *lw, const graph_node *n, int index, int in, int function, float a, float b)
{
    int out = n->outputs[0];
    if (lw_gt(lw, in)->dtype != GDT_F32)
        return lw_unsupported(lw, n, index, "only f32 is supported");
    uint64_t total = (uint64_t)graph_shape_numel(&lw_gt(lw, out)->shape);
    char what[96];
    snprintf(what, sizeof what, "tensor '%s'", lw_gt(lw, out)->name);
    if (lw->tensor[in].placed && lw->tensor[in].n) {
        if (!lw_place_in_place(lw, out, in, -1, index) && !lw->failed && !lw_place_like(lw, out, in, what))
            return false;
    } else {
        uint32_t tiles = lw_plan_tiles(lw, total, 2, KERNEL_UNARY_CYCLES_PER_ELEMENT, 200);
        if (!lw_place_linear(lw, out, 2, tiles, what))
            return false;
    }
    lw_same_layout(lw, out, in);
    ltensor *lo = &lw->tensor[out];
    uint32_t *src = malloc((lo->n + 1) * sizeof *src);
    if (!src)
        return lw_fail(lw, "out of host memory");
    for (size_t k = 0; k < lo->n && !lw->failed; k++)
        src[k] = lw_fetch(lw, in, lo->p[k].first, lo->p[k].count, lo->p[k].tile, PREFER_REGION1);
    if (!lw->failed)
        lw_end_phase(lw);
    size_t *start = NULL, groups = 0, *order = lw->failed ? NULL : pieces_by_tile(lw, lo, &start, &groups);
    for (size_t g = 0; order && g < groups && !lw->failed; g++) {
        if (!batched(n, start[g + 1] - start[g])) {
            for (size_t i = start[g]; i < start[g + 1] && !lw->failed; i++)
                unary_piece(lw, &lo->p[order[i]], src[order[i]], function, a, b);
            continue;
        }
        ew_batch bt = { 0 };
        for (size_t i = start[g]; i < start[g + 1] && !lw->failed; i++) {
            const piece *p = &lo->p[order[i]];
            ew_item x = { src[order[i]], 0, p->addr, 1, (uint32_t)p->count, 0, 0, 0 };
            batch_add(lw, &bt, &x, true);
        }
        if (!lw->failed)
            batch_run(lw, &bt, lo->p[order[start[g]]].tile, EW_UNARY, lw->kernels.vtx_unary_f32, (uint32_t)function, a, b);
        batch_free(&bt);
    }
    free(order);
    free(start);
    free(src);
    return !lw->failed;
}

bool lw_lower_unary_fn(lowering *lw, const graph_node *n, int index, int function)
{
    return unary_of(lw, n, index, n->inputs[0], function, 0.0f, 0.0f);
}

/* Binary element-wise with numpy broadcasting.  The output is seen as rows
 * of its last dimension; input k's element (r, c) is at row_offset_k(r) +
 * c * colstep_k.  in0 must not be broadcast (commutative ops swap). */
typedef struct binary_plan {
    int in0, in1, out, function;
    const graph_shape *so;
    uint64_t total;
    int64_t cols;
    int64_t stride1[GRAPH_MAX_RANK];   /* in1's broadcast strides against the output */
    bool same, scalar, flat;           /* in1 the output's shape, one value; either */
    bool split;                        /* rows longer than KERNEL_ROW_MAX_COLS, split over tiles */
    graph_shape pixels;                /* in0 channels-last, in1 per channel: the output
                                          as stored, [N H W, C] (so points here) */
    uint64_t row_len, gran;
    uint32_t *a0, *a1;                 /* per output piece: where its in0 and in1 elements are */
    int64_t *base1;                    /* ... and in1's first element fetched (IN1_EXPANDED: in1
                                          fetched as the piece's own elements, row by row) */
    const ltensor *view;               /* the output's pieces computed: all of them, or those of
                                          a range of its elements (lw_accumulate_range) */
} binary_plan;

/* The operands as the codelet takes them (in0 the output's shape) and how
 * in1 is broadcast; false when the node is not supported. */
static bool binary_operands(lowering *lw, const graph_node *n, int index, binary_plan *bp)
{
    bp->out = n->outputs[0];
    const graph_shape *so = bp->so = &lw_gt(lw, bp->out)->shape;
    if (lw_gt(lw, bp->in0)->dtype != GDT_F32 || lw_gt(lw, bp->in1)->dtype != GDT_F32)
        return lw_unsupported(lw, n, index, "only f32 is supported");
    bool commutative = bp->function == ELEMENTWISE_ADD || bp->function == ELEMENTWISE_MUL ||
                       bp->function == ELEMENTWISE_MAX || bp->function == ELEMENTWISE_MIN;
    if (!graph_shape_equal(&lw_gt(lw, bp->in0)->shape, so)) {
        if (commutative && graph_shape_equal(&lw_gt(lw, bp->in1)->shape, so)) {
            int t = bp->in0;
            bp->in0 = bp->in1;
            bp->in1 = t;
        } else {
            return lw_unsupported(lw, n, index, "the first input is broadcast (not yet supported)");
        }
    }
    bp->total = (uint64_t)graph_shape_numel(so);
    if (lw->tensor[bp->in0].permuted && lw_per_channel(&lw_gt(lw, bp->in1)->shape, so)) {
        /* A row of C values broadcast over the stored pixels (lower_layout.c). */
        bp->pixels = (graph_shape){ .rank = 2, .dims = { (int64_t)bp->total / so->dims[1], so->dims[1] } };
        so = bp->so = &bp->pixels;
        graph_shape row = { .rank = 1, .dims = { so->dims[1] } };
        lw_broadcast_strides(&row, so, bp->stride1);
    } else {
        lw_broadcast_strides(&lw_gt(lw, bp->in1)->shape, so, bp->stride1);
    }
    bp->cols = so->rank ? so->dims[so->rank - 1] : 1;
    bp->same = graph_shape_equal(&lw_gt(lw, bp->in1)->shape, so);
    bp->scalar = graph_shape_numel(&lw_gt(lw, bp->in1)->shape) == 1;
    bp->flat = bp->same || bp->scalar;
    /* Rows too long to keep whole on a tile (a row of the 30522 words of
     * BERT's vocabulary) are split at even elements; a piece is then a
     * part row, whole rows and a part row. */
    bp->split = !bp->flat && bp->cols % 2 == 0 && (uint64_t)bp->cols > KERNEL_ROW_MAX_COLS;
    bp->row_len = bp->flat ? bp->total : (uint64_t)bp->cols;
    bp->gran = bp->flat || bp->split ? 2 : (uint64_t)bp->cols;
    return true;
}

/* The output's pieces: in0's when they hold whole rows, else a linear
 * split; stored in the order of a channels-last operand. */
static bool place_binary_output(lowering *lw, const binary_plan *bp, int index)
{
    const ltensor *l0 = &lw->tensor[bp->in0];
    char what[96];
    snprintf(what, sizeof what, "tensor '%s'", lw_gt(lw, bp->out)->name);
    bool like_in0 = l0->placed && l0->n && (bp->flat || l0->n <= lw->tiles);
    for (size_t k = 0; like_in0 && k < l0->n && !bp->flat; k++)
        if (l0->p[k].first % bp->gran || l0->p[k].count % bp->gran)
            like_in0 = false;
    if (like_in0) {
        if (!lw_place_in_place(lw, bp->out, bp->in0, bp->in1, index) && !lw->failed &&
            !lw_place_like(lw, bp->out, bp->in0, what))
            return false;
    } else {
        uint32_t tiles = lw_plan_tiles(lw, bp->total, bp->gran, KERNEL_BINARY_CYCLES_PER_ELEMENT, 200);
        if (!lw_place_linear(lw, bp->out, bp->gran, tiles, what))
            return false;
    }
    /* A channels-last operand: every other operand is one too or a single
     * value (lower_layout.c), so the elements pair up in stored order. */
    if (lw->tensor[bp->in0].permuted || lw->tensor[bp->in1].permuted) {
        bool per_channel = bp->so == &bp->pixels;
        if ((!bp->flat && !per_channel) ||
            (!bp->scalar && !per_channel && lw->tensor[bp->in0].permuted != lw->tensor[bp->in1].permuted))
            return lw_fail(lw, "internal: '%s' mixes channels-last and plain operands", lw_gt(lw, bp->out)->name);
        lw_same_layout(lw, bp->out, lw->tensor[bp->in0].permuted ? bp->in0 : bp->in1);
    }
    return true;
}

/* in1's elements output piece p needs: one contiguous range [*lo1, *hi1). */
static void in1_range(const binary_plan *bp, const piece *p, int64_t *lo1, int64_t *hi1)
{
    if (bp->same) {
        *lo1 = (int64_t)p->first;
        *hi1 = (int64_t)(p->first + p->count);
    } else if (bp->scalar) {
        *lo1 = 0;
        *hi1 = 1;
    } else {
        /* Row r's columns [c0, c1) of the piece (whole rows unless split). */
        uint64_t cols = (uint64_t)bp->cols, end = p->first + p->count;
        int64_t r0 = (int64_t)(p->first / cols), r1 = (int64_t)((end + cols - 1) / cols);
        int64_t col_step = bp->stride1[bp->so->rank - 1] ? 1 : 0;
        *lo1 = INT64_MAX;
        *hi1 = 0;
        for (int64_t r = r0; r < r1; r++) {
            uint64_t row0 = (uint64_t)r * cols;
            int64_t c0 = row0 < p->first ? (int64_t)(p->first - row0) : 0;
            int64_t c1 = row0 + cols > end ? (int64_t)(end - row0) : (int64_t)cols;
            int64_t o = lw_row_offset(bp->so, bp->stride1, r);
            int64_t b = o + c0 * col_step, e = col_step ? o + c1 : o + 1;
            if (b < *lo1) *lo1 = b;
            if (e > *hi1) *hi1 = e;
        }
        *lo1 &= ~(int64_t)1;
    }
}

/* A piece whose in1 rows lie far apart in in1 (an output piece across a
 * broadcast's wrap, as [b, s, h] + [1, s, h] from the end of one batch
 * item into the next): in1's contiguous range would be most of in1, so
 * its rows are fetched each beside the piece's row instead, a copy of the
 * piece's size. */
#define IN1_EXPANDED INT64_MIN

static bool fetch_in1_expanded(lowering *lw, binary_plan *bp, const piece *p, uint32_t *buf)
{
    uint64_t cols = (uint64_t)bp->cols, end = p->first + p->count;
    char what[96];
    snprintf(what, sizeof what, "rows of '%s' beside a piece of '%s'", lw_gt(lw, bp->in1)->name,
             lw_gt(lw, bp->out)->name);
    *buf = lw_fetch_buffer(lw, bp->in1, p->count, p->tile, PREFER_REGION1, what);
    for (uint64_t at = p->first; at < end && *buf && !lw->failed;) {
        uint64_t row = at / cols, stop = (row + 1) * cols < end ? (row + 1) * cols : end;
        int64_t o = lw_row_offset(bp->so, bp->stride1, (int64_t)row) + (int64_t)(at - row * cols);
        if (!lw_fetch_into(lw, bp->in1, (uint64_t)o, stop - at, p->tile, *buf + (uint32_t)((at - p->first) * 4)))
            return false;
        at = stop;
    }
    return *buf != 0;
}

/* Both operands' elements onto the tiles of every output piece, then the
 * exchange phase that brings them. */
static bool fetch_binary_operands(lowering *lw, binary_plan *bp)
{
    const ltensor *lo = bp->view;
    bp->a0 = malloc((lo->n + 1) * sizeof *bp->a0);
    bp->a1 = malloc((lo->n + 1) * sizeof *bp->a1);
    bp->base1 = malloc((lo->n + 1) * sizeof *bp->base1);
    if (!bp->a0 || !bp->a1 || !bp->base1)
        return lw_fail(lw, "out of host memory");
    for (size_t k = 0; k < lo->n && !lw->failed; k++) {
        const piece *p = &lo->p[k];
        bp->a0[k] = lw_fetch(lw, bp->in0, p->first, p->count, p->tile, PREFER_REGION1);
        int64_t lo1, hi1;
        in1_range(bp, p, &lo1, &hi1);
        bp->base1[k] = lo1;
        if (!bp->flat && bp->stride1[bp->so->rank - 1] && (uint64_t)(hi1 - lo1) > 2 * p->count + 64) {
            bp->base1[k] = IN1_EXPANDED;
            fetch_in1_expanded(lw, bp, p, &bp->a1[k]);
            continue;
        }
        bp->a1[k] = lw_fetch(lw, bp->in1, (uint64_t)lo1, (uint64_t)(hi1 - lo1), p->tile, PREFER_REGION1);
    }
    if (!lw->failed)
        lw_end_phase(lw);
    return !lw->failed;
}

/* Where the run of rows starting at row r of piece p ends (before `end`):
 * rows whose in1 rows are a constant step apart; flat pieces are one run. */
static uint64_t binary_run_end(const binary_plan *bp, const piece *p, uint64_t r, uint64_t end)
{
    if (bp->flat)
        return end;
    uint64_t run_end = r + 1;
    int64_t r_abs = (int64_t)(p->first / (uint64_t)bp->cols + r);
    int64_t o0 = lw_row_offset(bp->so, bp->stride1, r_abs);
    if (run_end < end) {
        int64_t step = lw_row_offset(bp->so, bp->stride1, r_abs + 1) - o0;
        while (run_end < end &&
               lw_row_offset(bp->so, bp->stride1, r_abs + (int64_t)(run_end - r)) == o0 + step * (int64_t)(run_end - r))
            run_end++;
    }
    return run_end;
}

/* The record for units [r, run_end) of output piece k (pairs of elements
 * when flat, rows otherwise). */
static void binary_run_record(const binary_plan *bp, size_t k, const piece *p, uint32_t *rec, uint64_t r,
                              uint64_t run_end)
{
    const graph_shape *so = bp->so;
    uint32_t col_step1 = bp->scalar ? 0 : (bp->same || bp->stride1[so->rank - 1]) ? 4 : 0;
    if (bp->flat) {
        uint64_t e0 = r * 2, e1 = run_end * 2 < p->count ? run_end * 2 : p->count;
        uint32_t in1_addr = bp->scalar ? bp->a1[k] : bp->a1[k] + (uint32_t)(e0 * 4);
        kernel_binary_record_op(rec, bp->a0[k] + (uint32_t)(e0 * 4), in1_addr, p->addr + (uint32_t)(e0 * 4), 1,
                                (uint32_t)(e1 - e0), (uint32_t)((e1 - e0) * 4), 0, col_step1,
                                (uint32_t)bp->function);
        return;
    }
    int64_t r_abs = (int64_t)(p->first / (uint64_t)bp->cols + r);
    int64_t o0 = lw_row_offset(so, bp->stride1, r_abs);
    int64_t step = run_end - r > 1 ? lw_row_offset(so, bp->stride1, r_abs + 1) - o0 : 0;
    uint32_t row_bytes = (uint32_t)bp->cols * 4;
    uint32_t in1_addr = bp->base1[k] == IN1_EXPANDED ? bp->a1[k] + (uint32_t)r * row_bytes
                                                     : bp->a1[k] + (uint32_t)((o0 - bp->base1[k]) * 4);
    if (bp->base1[k] == IN1_EXPANDED)
        step = (int64_t)bp->cols;
    kernel_binary_record_op(rec, bp->a0[k] + (uint32_t)(r * row_bytes), in1_addr,
                            p->addr + (uint32_t)(r * row_bytes), (uint32_t)(run_end - r), (uint32_t)bp->cols,
                            row_bytes, (uint32_t)(step * 4), col_step1, (uint32_t)bp->function);
}

/* A split piece (rows longer than a tile takes): where the segment starting
 * at element pos of piece p ends (before `end`): the rest of a part row,
 * or whole rows whose in1 rows are a constant step apart. */
static uint64_t split_segment_end(const binary_plan *bp, const piece *p, uint64_t pos, uint64_t end)
{
    uint64_t cols = (uint64_t)bp->cols, at = p->first + pos, c = at % cols;
    if (c || end - pos < cols)
        return end < pos + cols - c ? end : pos + cols - c;
    int64_t row = (int64_t)(at / cols), o0 = lw_row_offset(bp->so, bp->stride1, row);
    uint64_t rows = (end - pos) / cols, n = 1;
    if (rows > 1) {
        int64_t step = lw_row_offset(bp->so, bp->stride1, row + 1) - o0;
        while (n < rows && lw_row_offset(bp->so, bp->stride1, row + (int64_t)n) == o0 + step * (int64_t)n)
            n++;
    }
    return pos + n * cols;
}

/* The record for elements [pos, seg_end) of split piece k: one part row,
 * or whole rows. */
static void split_segment_record(const binary_plan *bp, size_t k, const piece *p, uint32_t *rec, uint64_t pos,
                                 uint64_t seg_end)
{
    const graph_shape *so = bp->so;
    uint64_t cols = (uint64_t)bp->cols, at = p->first + pos, c = at % cols, len = seg_end - pos;
    int64_t row = (int64_t)(at / cols), o0 = lw_row_offset(so, bp->stride1, row);
    int64_t col_step = bp->stride1[so->rank - 1] ? 1 : 0;
    bool part = c || len < cols;
    uint64_t rows = part ? 1 : len / cols;
    int64_t step = rows > 1 ? lw_row_offset(so, bp->stride1, row + 1) - o0 : 0;
    uint32_t in1_addr = bp->a1[k] + (uint32_t)((o0 + (int64_t)c * col_step - bp->base1[k]) * 4);
    if (bp->base1[k] == IN1_EXPANDED) {
        in1_addr = bp->a1[k] + (uint32_t)(pos * 4);
        step = (int64_t)cols;
    }
    kernel_binary_record_op(rec, bp->a0[k] + (uint32_t)(pos * 4), in1_addr, p->addr + (uint32_t)(pos * 4),
                            (uint32_t)rows, (uint32_t)(part ? len : cols), (uint32_t)cols * 4, (uint32_t)(step * 4),
                            (uint32_t)(col_step * 4), (uint32_t)bp->function);
}

/* Output piece k's compute sets: each worker's rows in runs of a constant
 * in1 row step, one record per run, one compute set per round of runs. */
static bool binary_piece_compute_sets(lowering *lw, const binary_plan *bp, size_t k)
{
    const piece *p = &bp->view->p[k];
    uint64_t units = bp->flat || bp->split ? (p->count + 1) / 2
                                           : (p->count / bp->row_len ? p->count / bp->row_len : 1);
    uint64_t wl[CODELET_WORKERS], wh[CODELET_WORKERS];
    lw_worker_split(units, wl, wh);
    for (int round = 0;; round++) {
        bool any = false;
        uint32_t *recs[CODELET_WORKERS];
        uint32_t off = 0;
        bool idle[CODELET_WORKERS];
        for (int w = 0; w < CODELET_WORKERS; w++) {
            /* Find worker w's round-th run. */
            idle[w] = true;
            /* Units of rows, or of elements when split. */
            uint64_t r = bp->split ? wl[w] * 2 : wl[w];
            uint64_t end = bp->split ? (wh[w] * 2 < p->count ? wh[w] * 2 : p->count) : wh[w];
            for (int seen = 0; r < end; seen++) {
                uint64_t run_end = bp->split ? split_segment_end(bp, p, r, end) : binary_run_end(bp, p, r, end);
                if (seen == round) {
                    idle[w] = false;
                    if (!any) {
                        off = lw_six_records(lw, p->tile, KERNEL_BINARY_WORDS, recs);
                        if (lw->failed)
                            return false;
                        any = true;
                    }
                    if (bp->split)
                        split_segment_record(bp, k, p, recs[w], r, run_end);
                    else
                        binary_run_record(bp, k, p, recs[w], r, run_end);
                    break;
                }
                r = run_end;
            }
        }
        if (!any)
            return true;
        for (int w = 0; w < CODELET_WORKERS; w++)
            if (idle[w])
                kernel_binary_record_op(recs[w], bp->a0[k], bp->a1[k], p->addr, 0, 0, 0, 0, 0,
                                        (uint32_t)bp->function);
        lw_step_run(lw, p->tile, lw->kernels.vtx_binary_f32, off, KERNEL_BINARY_WORDS);
    }
}

/* Output piece k's records (runs of a constant in1 row step, or the
 * segments of a split piece) as items of the tile's batch. */
static bool binary_piece_items(lowering *lw, const binary_plan *bp, size_t k, ew_batch *bt)
{
    const piece *p = &bp->view->p[k];
    uint64_t end = bp->flat ? (p->count + 1) / 2
                 : bp->split ? p->count
                             : (p->count / bp->row_len ? p->count / bp->row_len : 1);
    for (uint64_t r = 0; r < end && !lw->failed;) {
        uint64_t run_end = bp->split ? split_segment_end(bp, p, r, end) : binary_run_end(bp, p, r, end);
        uint32_t rec[BINARY_F32_V_WORDS];
        if (bp->split)
            split_segment_record(bp, k, p, rec, r, run_end);
        else
            binary_run_record(bp, k, p, rec, r, run_end);
        ew_item x = { rec[BINARY_F32_V_IN0], rec[BINARY_F32_V_IN1], rec[BINARY_F32_V_OUT], rec[BINARY_F32_V_ROWS],
                      rec[BINARY_F32_V_COLS], rec[BINARY_F32_V_ROW_STEP], rec[BINARY_F32_V_IN1_ROW_STEP],
                      rec[BINARY_F32_V_IN1_COL_STEP] };
        batch_add(lw, bt, &x, false);
        r = run_end;
    }
    return !lw->failed;
}

/* Which input of an Add, Sub or Mul is one constant f32 value while the
 * other has the output's shape (-1 none). */
static int scalar_operand(const lowering *lw, const graph_node *n)
{
    if (n->op != GRAPH_OP_ADD && n->op != GRAPH_OP_SUB && n->op != GRAPH_OP_MUL)
        return -1;
    for (int k = 0; k < 2; k++) {
        const graph_tensor *c = lw_gt(lw, n->inputs[k]), *x = lw_gt(lw, n->inputs[1 - k]);
        if (c->data && c->dtype == GDT_F32 && graph_shape_numel(&c->shape) == 1 && x->dtype == GDT_F32 &&
            !lw->tensor[n->inputs[k]].placed && graph_shape_equal(&x->shape, &lw_gt(lw, n->outputs[0])->shape))
            return k;
    }
    return -1;
}

/* An element-wise op of two operands, the codelet function of its row. */
bool lw_lower_binary(lowering *lw, const graph_node *n, int index)
{
    /* One operand a constant f32 value c and the other the output's shape:
     * a x + b on the vertex records' constants, no block of c on the tiles.
     * Each is exact as the binary op rounds: c - x = (-1) x + c and
     * x - c = 1 x + (-c) (the product exact, the sum the subtraction's
     * rounding), x + c = 1 x + c, x c = c x + (-0) (the product's rounding;
     * adding -0 changes no value, not even a zero's sign). */
    int k = scalar_operand(lw, n);
    if (k >= 0) {
        float c = *(const float *)lw_gt(lw, n->inputs[k])->data;
        int x = n->inputs[1 - k];
        switch (n->op) {
        case GRAPH_OP_ADD: return unary_of(lw, n, index, x, ELEMENTWISE_SCALE_SHIFT, 1.0f, c);
        case GRAPH_OP_SUB: return unary_of(lw, n, index, x, ELEMENTWISE_SCALE_SHIFT, k ? 1.0f : -1.0f, k ? -c : c);
        case GRAPH_OP_MUL: return unary_of(lw, n, index, x, ELEMENTWISE_SCALE_SHIFT, c, -0.0f);
        default: break;
        }
    }
    return lw_lower_binary_fn(lw, n, index, lw_op_rules[n->op].function, n->inputs[0], n->inputs[1]);
}

/* The operands of bp's pieces (bp->view) fetched, then each tile's
 * compute sets. */
static bool binary_pieces(lowering *lw, const graph_node *n, binary_plan *bp)
{
    if (fetch_binary_operands(lw, bp)) {
        const ltensor *lo = bp->view;
        size_t *start = NULL, groups = 0, *order = pieces_by_tile(lw, lo, &start, &groups);
        for (size_t g = 0; order && g < groups && !lw->failed; g++) {
            if (!batched(n, start[g + 1] - start[g])) {
                for (size_t i = start[g]; i < start[g + 1] && !lw->failed; i++)
                    binary_piece_compute_sets(lw, bp, order[i]);
                continue;
            }
            ew_batch bt = { 0 };
            for (size_t i = start[g]; i < start[g + 1] && !lw->failed; i++)
                binary_piece_items(lw, bp, order[i], &bt);
            if (!lw->failed)
                batch_run(lw, &bt, lo->p[order[start[g]]].tile, EW_BINARY, lw->kernels.vtx_binary_f32,
                          (uint32_t)bp->function, 0, 0);
            batch_free(&bt);
        }
        free(order);
        free(start);
    }
    free(bp->a0);
    free(bp->a1);
    free(bp->base1);
    bp->a0 = bp->a1 = NULL;
    bp->base1 = NULL;
    return !lw->failed;
}

bool lw_lower_binary_fn(lowering *lw, const graph_node *n, int index, int function, int in0, int in1)
{
    binary_plan bp = { .in0 = in0, .in1 = in1, .function = function };
    if (!binary_operands(lw, n, index, &bp) || !place_binary_output(lw, &bp, index))
        return false;
    bp.view = &lw->tensor[bp.out];
    return binary_pieces(lw, n, &bp);
}

bool lw_accumulate_range_ok(const lowering *lw, const graph_node *n)
{
    if (n->op != GRAPH_OP_ADD || !n->accumulates || n->n_inputs != 2 || n->n_outputs != 1 || n->inputs[0] < 0 ||
        n->inputs[1] < 0 || n->outputs[0] < 0)
        return false;
    const graph_tensor *x = lw_gt(lw, n->inputs[0]), *y = lw_gt(lw, n->inputs[1]), *o = lw_gt(lw, n->outputs[0]);
    return x->dtype == GDT_F32 && y->dtype == GDT_F32 && o->dtype == GDT_F32 && graph_shape_equal(&x->shape, &o->shape) &&
           graph_shape_equal(&y->shape, &o->shape) && !lw->tensor[n->inputs[0]].permuted &&
           !lw->tensor[n->inputs[1]].permuted && lw->tensor[n->inputs[1]].root != lw->tensor[n->inputs[0]].root;
}

/* The sum's pieces (lo) within [e0, e1), each from element `off` of its
 * part there, at most w elements, into view. */
static bool clip_pieces(lowering *lw, const ltensor *lo, uint64_t e0, uint64_t e1, uint64_t off, uint64_t w,
                        ltensor *view)
{
    view->n = 0;
    for (size_t k = 0; k < lo->n; k++) {
        const piece *p = &lo->p[k];
        uint64_t a = (p->first > e0 ? p->first : e0) + off, b = p->first + p->count < e1 ? p->first + p->count : e1;
        b = b < a + w ? b : a + w;
        if (a >= b)
            continue;
        if (!lw_grow((void **)&view->p, &view->cap, view->n + 1, sizeof *view->p))
            return lw_fail(lw, "out of host memory");
        view->p[view->n++] = (piece){ .tile = p->tile, .addr = p->addr + (uint32_t)((a - p->first) * lo->element_bytes),
                                      .first = a, .count = b - a };
    }
    return true;
}

/* The most elements (even) of each piece a round takes, w, whose copies
 * of the addend (in1, where the tile does not hold its elements already)
 * fit every tile's room (lw_tile_free_room: each copy its largest free
 * block, all of them its largest blocks together): all of a piece where
 * there is room, as a plain Add takes it; halved while there is not
 * (BERT-Large's tied word table has an f32 sum of 90 KB a tile, laid out
 * as the table, beside a part of its decoder's weight gradient), down to
 * ACCUMULATE_ROUND_MIN. */
#define ACCUMULATE_ROUND_MIN 256u

static uint64_t round_elements(lowering *lw, const ltensor *view, int in1)
{
    uint64_t w = 2, *largest = calloc(lw->program_tiles + 1, sizeof *largest);
    uint64_t *total = calloc(lw->program_tiles + 1, sizeof *total), *sum = calloc(lw->program_tiles + 1, sizeof *sum);
    uint64_t *most = calloc(lw->program_tiles + 1, sizeof *most);
    if (!largest || !total || !sum || !most) {
        lw_fail(lw, "out of host memory");
        w = 0;
    }
    for (size_t k = 0; w && k < view->n; k++) {
        w = view->p[k].count > w ? view->p[k].count : w;
        if (!total[view->p[k].tile])
            lw_tile_free_room(lw, view->p[k].tile, &largest[view->p[k].tile], &total[view->p[k].tile]);
    }
    w = (w + 1) & ~(uint64_t)1;
    for (bool fits = false; w && !fits;) {
        for (size_t k = 0; k < view->n; k++)
            sum[view->p[k].tile] = most[view->p[k].tile] = 0;
        for (size_t k = 0; k < view->n; k++) {
            uint32_t t = view->p[k].tile;
            if (lw_held_at(lw, in1, view->p[k].first, view->p[k].count, t))
                continue;
            uint64_t b = lw_block_room((view->p[k].count < w ? view->p[k].count : w) * 4);
            sum[t] += b;
            most[t] = b > most[t] ? b : most[t];
        }
        fits = true;
        for (size_t k = 0; k < view->n && fits; k++)
            fits = most[view->p[k].tile] <= largest[view->p[k].tile] && sum[view->p[k].tile] <= total[view->p[k].tile];
        if (!fits && w <= 2 * ACCUMULATE_ROUND_MIN)
            break;
        if (!fits)
            w = (w / 2 + 1) & ~(uint64_t)1;
    }
    free(largest);
    free(total);
    free(sum);
    free(most);
    return w;
}

bool lw_accumulate_range(lowering *lw, const graph_node *n, int index, uint64_t e0, uint64_t e1)
{
    binary_plan bp = { .in0 = n->inputs[0], .in1 = n->inputs[1], .function = ELEMENTWISE_ADD };
    if (!binary_operands(lw, n, index, &bp))
        return false;
    ltensor *lo = &lw->tensor[bp.out];
    if (!lo->placed && !place_binary_output(lw, &bp, index))
        return false;
    ltensor view = { 0 };
    uint64_t w = clip_pieces(lw, lo, e0, e1, 0, UINT64_MAX / 2, &view) ? round_elements(lw, &view, bp.in1) : 0;
    for (uint64_t off = 0; w && !lw->failed; off += w) {
        if (!clip_pieces(lw, lo, e0, e1, off, w, &view) || !view.n)
            break;
        /* the round before's fetched elements are free: its compute sets
         * run before this round's exchange */
        if (off)
            lw_release_scratch(lw);
        bp.view = &view;
        binary_pieces(lw, n, &bp);
    }
    free(view.p);
    return !lw->failed;
}

/* A tile's rows of a softmax or layer norm with each row's columns shared
 * by the six workers (vtx_softmax_part{1,2,3}_f32, vtx_layernorm_part
 * {1,2,3}_f32: three compute sets on the same records, rowwise.h) where
 * that takes fewer worker issues than whole rows a worker: a tile holding
 * fewer rows than it has workers (BERT's 128 tokens on 128 tiles: one row
 * each, five workers idle).  Rows of an even width of 12 or more. */
static bool rows_by_columns(bool layernorm, uint64_t rows, uint64_t cols)
{
    if (cols % 2 || cols < 2 * CODELET_WORKERS || !rows)
        return false;
    const uint64_t pairs = cols / 2, share = (pairs + CODELET_WORKERS - 1) / CODELET_WORKERS;
    const uint64_t rounds = (rows + CODELET_WORKERS - 1) / CODELET_WORKERS;
    const uint64_t whole = layernorm ? 19 + rounds * (27 + 7 * pairs) : 10 + rounds * (20 + 11 * pairs);
    const uint64_t parts = layernorm ? 34 + rows * (58 + 7 * share) : 33 + rows * (37 + 11 * share);
    return parts + 3 * 20 < whole;                   /* and three compute sets' starts */
}

static void rows_parts(lowering *lw, bool layernorm, uint32_t tile, uint32_t in, uint32_t out, uint32_t gamma,
                       uint32_t beta, uint32_t rows, uint32_t cols, uint32_t step, float eps, uint32_t mean_out,
                       uint32_t rstd_out, const char *what)
{
    const uint32_t entry[2][3] = {
        { lw->kernels.vtx_softmax_part1_f32, lw->kernels.vtx_softmax_part2_f32, lw->kernels.vtx_softmax_part3_f32 },
        { lw->kernels.vtx_layernorm_part1_f32, lw->kernels.vtx_layernorm_part2_f32,
          lw->kernels.vtx_layernorm_part3_f32 } };
    const uint32_t words = layernorm ? KERNEL_LAYERNORM_PART_WORDS : KERNEL_SOFTMAX_PART_WORDS;
    uint32_t stats = lw_scratch_alloc(lw, tile, (uint64_t)rows * KERNEL_ROW_PART_STATS_BYTES, PREFER_REGION1, 8,
                                      what);
    const uint32_t pairs = cols / 2;
    /* the same six records for the three parts (made three times: the
     * second and third are given back as copies of the first) */
    for (int part = 0; part < 3 && stats && !lw->failed; part++) {
        uint32_t *rec[CODELET_WORKERS];
        uint32_t off = lw_six_records(lw, tile, words, rec);
        if (lw->failed)
            return;
        for (uint32_t w = 0; w < CODELET_WORKERS; w++) {
            uint32_t p0 = pairs * w / CODELET_WORKERS, p1 = pairs * (w + 1) / CODELET_WORKERS, c0 = p0 * 8;
            if (layernorm)
                kernel_layernorm_part_record(rec[w], in + c0, out + c0, gamma + c0, beta + c0, rows, p1 - p0, step,
                                             eps, stats, w, cols, w ? 0 : mean_out, w ? 0 : rstd_out);
            else
                kernel_softmax_part_record(rec[w], in + c0, out + c0, rows, p1 - p0, step, stats, w);
        }
        lw_step_run(lw, tile, entry[layernorm][part], off, words);
    }
}

/* Softmax / LayerNormalization over the last axis: whole rows per tile.
 * Rows of odd length are kept padded to an even length (the codelets read
 * rows in 64-bit pairs from 8-byte aligned starts): fetched row by row
 * into the padded layout, and the output is a piece a row. */
bool lw_lower_rows(lowering *lw, const graph_node *n, int index)
{
    int in = n->inputs[0], out = n->outputs[0];
    const graph_shape *s = &lw_gt(lw, in)->shape;
    if (lw_gt(lw, in)->dtype != GDT_F32)
        return lw_unsupported(lw, n, index, "only f32 is supported");
    bool layernorm = n->op == GRAPH_OP_LAYERNORM;
    /* Rows of the axes from `from` on: layer norm's from its axis, softmax's
     * the last axis alone (read with the graph's opset: before 13 the
     * default axis is 1 and every axis from it is normalised; decompose.h
     * moves the others to the last). */
    int from, to;
    if (!ops_softmax_range(lw->g, n, &from, &to) || (!layernorm && from != s->rank - 1))
        return lw_unsupported(lw, n, index, "only the last axis is supported");
    int64_t axis = from;
    uint64_t cols = 1, total = (uint64_t)graph_shape_numel(s);
    for (int64_t d = axis; d < s->rank; d++)
        cols *= (uint64_t)s->dims[d];
    if (!cols || !total)
        return lw_unsupported(lw, n, index, "an empty tensor");
    if (cols > KERNEL_ROW_MAX_COLS)
        return lw_unsupported(lw, n, index, "rows longer than the row codelets take");
    const uint64_t padded = (cols + 1) & ~(uint64_t)1, rows_total = total / cols;
    /* Layer norm's statistics (its training outputs): a value a row. */
    int stat_out[2] = { -1, -1 };
    for (int k = 1; layernorm && k < 3 && k < n->n_outputs; k++)
        stat_out[k - 1] = n->outputs[k];
    char what[96];
    snprintf(what, sizeof what, "tensor '%s'", lw_gt(lw, out)->name);
    double per_element = layernorm ? KERNEL_LAYERNORM_CYCLES_PER_ELEMENT : KERNEL_SOFTMAX_CYCLES_PER_ELEMENT;
    /* Per tile: its first row, its rows, where they are and come from. */
    uint32_t tiles = lw_plan_tiles(lw, total, cols, per_element, 300);
    uint64_t *l = malloc((tiles + 1) * sizeof *l), *h = malloc((tiles + 1) * sizeof *h);
    uint32_t *dst = calloc(tiles + 1, sizeof *dst), *src = calloc(tiles + 1, sizeof *src);
    uint32_t *gam = calloc(tiles + 1, sizeof *gam), *bet = calloc(tiles + 1, sizeof *bet);
    uint32_t *tl = calloc(tiles + 1, sizeof *tl);
    uint32_t *stat_addr[2] = { NULL, NULL };
    for (int q = 0; q < 2; q++)
        if (stat_out[q] >= 0)
            stat_addr[q] = calloc(tiles + 1, sizeof *stat_addr[q]);
    if (!l || !h || !dst || !src || !gam || !bet || !tl || (stat_out[0] >= 0 && !stat_addr[0]) ||
        (stat_out[1] >= 0 && !stat_addr[1])) {
        free(l); free(h); free(dst); free(src); free(gam); free(bet); free(tl);
        free(stat_addr[0]);
        free(stat_addr[1]);
        return lw_fail(lw, "out of host memory");
    }
    if (padded == cols) {
        if (!lw_place_linear(lw, out, cols, tiles, what))
            goto out;
        const ltensor *lo = &lw->tensor[out];
        tiles = (uint32_t)lo->n;
        for (uint32_t k = 0; k < tiles && !lw->failed; k++) {
            l[k] = lo->p[k].first / cols;
            h[k] = l[k] + lo->p[k].count / cols;
            tl[k] = lo->p[k].tile;
            dst[k] = lo->p[k].addr;
            src[k] = lw_fetch(lw, in, lo->p[k].first, lo->p[k].count, lo->p[k].tile, PREFER_REGION1);
        }
    } else {
        lw_linear_split(rows_total, 1, tiles, l, h);
        for (uint32_t k = 0; k < tiles && !lw->failed; k++) {
            if (h[k] == l[k])
                continue;
            uint32_t tile = tl[k] = lw_tile_of(lw, k), step = (uint32_t)padded * 4;
            dst[k] = lw_tensor_alloc(lw, out, tile, (h[k] - l[k]) * padded * 4, PREFER_REGION1, 8, false, what);
            src[k] = dst[k] ? lw_scratch_alloc(lw, tile, (h[k] - l[k]) * padded * 4, PREFER_REGION1, 8, what) : 0;
            for (uint64_t r = l[k]; src[k] && r < h[k] && !lw->failed; r++) {
                lw_add_piece(lw, out, tile, dst[k] + (uint32_t)(r - l[k]) * step, r * cols, cols);
                lw_fetch_into(lw, in, r * cols, cols, tile, src[k] + (uint32_t)(r - l[k]) * step);
            }
        }
        lw->tensor[out].placed = true;
    }
    for (uint32_t k = 0; k < tiles && layernorm && !lw->failed; k++) {
        if (h[k] == l[k])
            continue;
        uint32_t tile = tl[k];
        for (int q = 0; q < 2; q++) {
            if (stat_out[q] < 0)
                continue;
            char sw[96];
            snprintf(sw, sizeof sw, "tensor '%s'", lw_gt(lw, stat_out[q])->name);
            stat_addr[q][k] = lw_tensor_alloc(lw, stat_out[q], tile, (h[k] - l[k]) * 4, PREFER_REGION1, 8, false, sw);
            if (stat_addr[q][k])
                lw_add_piece(lw, stat_out[q], tile, stat_addr[q][k], l[k], h[k] - l[k]);
        }
        gam[k] = lw_fetch(lw, n->inputs[1], 0, cols, tile, PREFER_REGION1);
        if (n->n_inputs > 2 && n->inputs[2] >= 0)
            bet[k] = lw_fetch(lw, n->inputs[2], 0, cols, tile, PREFER_REGION1);
    }
    if (!lw->failed)
        lw_end_phase(lw);
    float eps = layernorm ? (float)(graph_attr_find(n, "epsilon") ? graph_attr_float(n, "epsilon") : 1e-5) : 0;
    for (uint32_t k = 0; k < tiles && !lw->failed; k++) {
        if (h[k] == l[k])
            continue;
        uint32_t tile = tl[k], step = (uint32_t)padded * 4;
        if (layernorm && !bet[k]) {
            /* No bias: a zero row. */
            bet[k] = lw_tile_alloc(lw, tile, cols * 4, PREFER_REGION1, 8, "a zero bias");
            if (!bet[k] || !lw_tile_data(lw, tile, bet[k], NULL, (uint32_t)(cols * 4), "zeros"))
                break;
        }
        if (rows_by_columns(layernorm, h[k] - l[k], cols)) {
            rows_parts(lw, layernorm, tile, src[k], dst[k], gam[k], bet[k], (uint32_t)(h[k] - l[k]), (uint32_t)cols,
                       step, eps, stat_addr[0] ? stat_addr[0][k] : 0, stat_addr[1] ? stat_addr[1][k] : 0, what);
            continue;
        }
        worker_set ws;
        if (!lw_workers_begin(lw, tile, layernorm ? KERNEL_LAYERNORM_WORDS : KERNEL_SOFTMAX_WORDS, h[k] - l[k], &ws))
            break;
        for (int w = 0; w < CODELET_WORKERS; w++) {
            uint32_t o = (uint32_t)ws.lo[w] * step, nrows = (uint32_t)(ws.hi[w] - ws.lo[w]);
            if (layernorm)
                kernel_layernorm_record(ws.rec[w], src[k] + o, dst[k] + o, gam[k], bet[k], nrows, (uint32_t)cols,
                                        step, eps, stat_addr[0] ? stat_addr[0][k] + (uint32_t)ws.lo[w] * 4 : 0,
                                        stat_addr[1] ? stat_addr[1][k] + (uint32_t)ws.lo[w] * 4 : 0);
            else
                kernel_softmax_record(ws.rec[w], src[k] + o, dst[k] + o, nrows, (uint32_t)cols, step);
        }
        lw_workers_run(lw, tile, layernorm ? lw->kernels.vtx_layernorm_rows_f32 : lw->kernels.vtx_softmax_rows_f32,
                       &ws);
    }
out:
    free(l); free(h); free(dst); free(src); free(gam); free(bet); free(tl);
    free(stat_addr[0]);
    free(stat_addr[1]);
    return !lw->failed;
}

/* ---- ScaledAdd ------------------------------------------------------------------------------
 * x + scale y (vtx_scaled_add_f32, or _f16 / _f16_sr for f16 x), as
 * popops' scaledAddTo updates a weight: written over x where x's storage is
 * free to take it (the variable being updated, in place, as Poplar's
 * optimizers do), y fetched onto the tiles of the output's pieces in region
 * 1 (the f32 codelet's pace loop wants it there).  A piece is a compute set
 * of the six workers' shares, at even elements; on a tile holding many
 * pieces (the update phase), the pieces become items dealt out together. */

/* Pieces the codelets take as they are: each starting at an even element
 * and an 8-byte address. */
static bool scaled_add_pieces_ok(const ltensor *t)
{
    for (size_t k = 0; k < t->n; k++)
        if (t->p[k].first % 2 || t->p[k].addr % 8)
            return false;
    return true;
}

bool lw_lower_scaled_add(lowering *lw, const graph_node *n, int index)
{
    int x = n->inputs[0], y = n->inputs[1], out = n->outputs[0];
    bool f16 = lw_gt(lw, x)->dtype == GDT_F16;
    bool sr = graph_attr_find(n, "rounding") && !strcmp(graph_attr_string(n, "rounding"), "stochastic");
    float scale = (float)graph_attr_float(n, "scale");
    uint32_t eb = f16 ? 2 : 4, entry = !f16 ? lw->kernels.vtx_scaled_add_f32
                                      : sr   ? lw->kernels.vtx_scaled_add_f16_sr
                                             : lw->kernels.vtx_scaled_add_f16;
    uint64_t total = (uint64_t)graph_shape_numel(&lw_gt(lw, out)->shape);
    if (lw->tensor[x].permuted != lw->tensor[y].permuted && total > 1)
        return lw_fail(lw, "internal: '%s' mixes channels-last and plain operands", lw_gt(lw, out)->name);
    char what[96];
    snprintf(what, sizeof what, "tensor '%s'", lw_gt(lw, out)->name);
    const ltensor *lx = &lw->tensor[x], *ly = &lw->tensor[y];
    bool placed = false, x_ok = lx->placed && lx->n && scaled_add_pieces_ok(lx);
    /* over x, or (f32) over y (momentum's m v + g written over v), the
     * variable this updates first; else like x */
    bool y_ok = !f16 && ly->placed && ly->n && scaled_add_pieces_ok(ly);
    bool y_first = y_ok && lw_gt(lw, ly->root)->is_variable;
    if (y_first)
        placed = lw_place_in_place(lw, out, y, x, index);
    if (!placed && !lw->failed && x_ok)
        placed = lw_place_in_place(lw, out, x, y, index);
    if (!placed && !lw->failed && y_ok && !y_first)
        placed = lw_place_in_place(lw, out, y, x, index);
    if (!placed && !lw->failed && x_ok)
        placed = lw_place_like(lw, out, x, what);
    if (lw->failed)
        return false;
    if (!placed) {
        uint32_t tiles = lw_plan_tiles(lw, total, 4, KERNEL_BINARY_CYCLES_PER_ELEMENT, 200);
        if (!lw_place_linear(lw, out, 4, tiles, what))
            return false;
    }
    lw_same_layout(lw, out, x);
    ltensor *lo = &lw->tensor[out];
    uint32_t *sx = malloc((lo->n + 1) * sizeof *sx), *sy = malloc((lo->n + 1) * sizeof *sy);
    if (!sx || !sy) {
        free(sx);
        free(sy);
        return lw_fail(lw, "out of host memory");
    }
    /* y in region 1 for the f32 pace loop; the f16 codelet reads it the same
     * from either, so there region 1 is left to the matmuls */
    for (size_t k = 0; k < lo->n && !lw->failed; k++) {
        sx[k] = lw_fetch(lw, x, lo->p[k].first, lo->p[k].count, lo->p[k].tile, PREFER_REGION1);
        sy[k] = lw_fetch(lw, y, lo->p[k].first, lo->p[k].count, lo->p[k].tile, f16 ? PREFER_REGION0 : PREFER_REGION1);
    }
    if (!lw->failed)
        lw_end_phase(lw);
    size_t *start = NULL, groups = 0, *order = lw->failed ? NULL : pieces_by_tile(lw, lo, &start, &groups);
    for (size_t g = 0; order && g < groups && !lw->failed; g++) {
        ew_batch bt = { 0 };
        for (size_t i = start[g]; i < start[g + 1] && !lw->failed; i++) {
            const piece *p = &lo->p[order[i]];
            ew_item it = { sx[order[i]], sy[order[i]], p->addr, 1, (uint32_t)p->count, 0, 0, 4, eb };
            if (batched(n, start[g + 1] - start[g])) {
                batch_add(lw, &bt, &it, false);
                continue;
            }
            /* a compute set of the piece: the workers' shares of its pairs */
            worker_set ws;
            if (!lw_workers_begin(lw, p->tile, KERNEL_SCALED_ADD_WORDS, (p->count + 1) / 2, &ws))
                break;
            for (int w = 0; w < CODELET_WORKERS; w++) {
                uint64_t e0 = ws.lo[w] * 2, e1 = ws.hi[w] * 2 < p->count ? ws.hi[w] * 2 : p->count;
                kernel_scaled_add_record(ws.rec[w], it.in0 + (uint32_t)(e0 * eb), it.in1 + (uint32_t)(e0 * 4),
                                         it.out + (uint32_t)(e0 * eb), (uint32_t)(e1 > e0 ? e1 - e0 : 0), scale);
            }
            lw_workers_run(lw, p->tile, entry, &ws);
        }
        if (bt.n && !lw->failed)
            batch_run(lw, &bt, lo->p[order[start[g]]].tile, EW_SCALED_ADD, entry, 0, scale, 0);
        batch_free(&bt);
    }
    free(order);
    free(start);
    free(sx);
    free(sy);
    return !lw->failed;
}
