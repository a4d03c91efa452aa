/*
 * lower_logic.c — comparisons (Equal, Less, Greater), Where, the logical
 * ops (And, Or, Not) and integer element-wise arithmetic (Add, Sub, Mul,
 * Max, Min on i32), lowered onto the logic codelets
 * (workloads/codelets/logic.h).
 *
 * The output is split linearly over tiles in chunks of 8 elements (a bool
 * output is one byte an element: chunks of 8 keep every piece 8-byte
 * aligned), or mirrors the pieces of an input of the same shape when those
 * start at multiples of 4 elements, so that input needs no exchange.  Each
 * input's elements for a piece are fetched as one range (a broadcast input
 * is small); every input may be broadcast (numpy rules).  On a tile the
 * piece is shared by the six workers at multiples of 4 elements (two
 * workers never write one word of a bool output); a worker's elements run
 * in records, one per run of rows whose inputs step by constant row
 * steps, and one compute set per round of records.
 *
 * Operands kept channels-last (lower_layout.c: every other operand is one
 * of the same shape or a single value) pair up element by element in
 * their stored order, which the result keeps.
 *
 * Not lowered: i64 (and other integer widths) arithmetic and comparisons,
 * Where on elements other than 32 bits.
 */
#include <stdlib.h>
#include <string.h>

#include "lower_internal.h"
#include "workloads/codelets/logic.h"

/* Planner figure: tile cycles per element with six workers busy (logic.S:
 * 7 to 13). */
#define LOGIC_CYCLES_PER_ELEMENT 12.0
#define LOGIC_MAX_INPUTS 3

static bool is_int_arith(graph_op op)
{
    return op == GRAPH_OP_ADD || op == GRAPH_OP_SUB || op == GRAPH_OP_MUL || op == GRAPH_OP_MAX ||
           op == GRAPH_OP_MIN;
}

static bool is_int_dtype(graph_dtype d)
{
    return d == GDT_I32 || d == GDT_I64 || d == GDT_I16 || d == GDT_I8 || d == GDT_U8 || d == GDT_U16 ||
           d == GDT_U32 || d == GDT_U64;
}

bool lw_logic_handles(const graph *g, const graph_node *n)
{
    switch (n->op) {
    case GRAPH_OP_EQUAL:
    case GRAPH_OP_LESS:
    case GRAPH_OP_GREATER:
    case GRAPH_OP_WHERE:
    case GRAPH_OP_NOT:
    case GRAPH_OP_AND:
    case GRAPH_OP_OR:
        return true;
    default:
        return is_int_arith(n->op) && n->n_inputs >= 1 && n->inputs[0] >= 0 &&
               is_int_dtype(g->tensors[n->inputs[0]].dtype);
    }
}

/* Why a comparison of dtype d is not lowered, naming d. */
static const char *compare_dtype_why(graph_dtype d)
{
#define CMP_WHY(t) "comparisons of " t " are not supported (f32 and i32 are)"
    static const char *const why[] = {
        [GDT_U8] = CMP_WHY("u8"), [GDT_I8] = CMP_WHY("i8"), [GDT_U16] = CMP_WHY("u16"),
        [GDT_I16] = CMP_WHY("i16"), [GDT_I64] = CMP_WHY("i64"), [GDT_STRING] = CMP_WHY("string"),
        [GDT_BOOL] = CMP_WHY("bool"), [GDT_F16] = CMP_WHY("f16"), [GDT_F64] = CMP_WHY("f64"),
        [GDT_U32] = CMP_WHY("u32"), [GDT_U64] = CMP_WHY("u64"), [GDT_BF16] = CMP_WHY("bf16"),
    };
#undef CMP_WHY
    return (unsigned)d < sizeof why / sizeof why[0] && why[d] ? why[d]
                                                                : "comparisons of this type are not supported (f32 and i32 are)";
}

bool lw_logic_supported(const graph *g, const graph_node *n, const char **why)
{
    *why = NULL;
    graph_dtype d0 = g->tensors[n->inputs[0]].dtype;
    switch (n->op) {
    case GRAPH_OP_EQUAL:
    case GRAPH_OP_LESS:
    case GRAPH_OP_GREATER:
        if (d0 != GDT_F32 && d0 != GDT_I32) {
            *why = compare_dtype_why(d0);
            return false;
        }
        return true;
    case GRAPH_OP_WHERE: {
        graph_dtype dx = g->tensors[n->inputs[1]].dtype;
        if (dx != GDT_F32 && dx != GDT_I32) {
            *why = "Where is supported on f32 and i32 values only";
            return false;
        }
        return true;
    }
    case GRAPH_OP_NOT:
    case GRAPH_OP_AND:
    case GRAPH_OP_OR:
        return true;
    default:
        if (n->n_inputs != 2) {
            *why = "only two inputs are supported";
            return false;
        }
        if (d0 != GDT_I32) {
            *why = "integer arithmetic is supported on i32 only (the tile is 32-bit)";
            return false;
        }
        return true;
    }
}

/* ---- geometry -------------------------------------------------------------------- */

/* Broadcast strides (elements) of `in` against `out`, aligned on the right;
 * 0 where in's dimension is 1 or missing. */
void lw_broadcast_strides(const graph_shape *in, const graph_shape *out, int64_t *stride)
{
    int64_t s = 1;
    for (int d = out->rank - 1; d >= 0; d--) {
        int id = d - (out->rank - in->rank);
        stride[d] = (id < 0 || in->dims[id] == 1) ? 0 : s;
        if (id >= 0)
            s *= in->dims[id];
    }
}

/* Input element offset (broadcast strides) at the start of output row r
 * (rows of the output's last dimension). */
int64_t lw_row_offset(const graph_shape *out, const int64_t *stride, int64_t r)
{
    int64_t off = 0;
    for (int d = out->rank - 2; d >= 0; d--) {
        int64_t i = r % out->dims[d];
        r /= out->dims[d];
        off += i * stride[d];
    }
    return off;
}

typedef struct logic_in {
    int t;
    uint32_t eb;
    int64_t stride[GRAPH_MAX_RANK];
    int64_t col_stride;                 /* along the output's last dim */
    uint32_t addr;                      /* where element `lo` is on the piece's tile */
    int64_t lo;
} logic_in;

/* The address of elements [lo, hi) of tensor t on `tile`: in place when
 * one local piece holds them all (the codelets read any byte address),
 * else a copy of the range widened to 8-element bounds (exchange wants
 * aligned runs). */
static bool fetch_range(lowering *lw, logic_in *in, int64_t lo, int64_t hi, uint32_t tile)
{
    const ltensor *lt = &lw->tensor[in->t];
    if (lt->placed)
        for (size_t k = 0; k < lt->n; k++) {
            const piece *p = &lt->p[k];
            if (p->tile == tile && (int64_t)p->first <= lo && (int64_t)(p->first + p->count) >= hi) {
                in->addr = p->addr + (uint32_t)((uint64_t)(lo - (int64_t)p->first) * in->eb);
                in->lo = lo;
                return true;
            }
        }
    int64_t numel = graph_shape_numel(&lw_gt(lw, in->t)->shape);
    int64_t a = lo & ~(int64_t)7, b = (hi + 7) & ~(int64_t)7;
    if (b > numel)
        b = numel;
    uint32_t addr = lw_fetch(lw, in->t, (uint64_t)a, (uint64_t)(b - a), tile, PREFER_REGION1);
    if (!addr)
        return false;
    in->addr = addr + (uint32_t)((uint64_t)(lo - a) * in->eb);
    in->lo = lo;
    return true;
}

/* Place the output: like a same-shaped placed input whose pieces start at
 * multiples of 4 elements, else linearly. */
static bool place_output(lowering *lw, int out, const logic_in *ins, int n_in, const char *what)
{
    const graph_shape *so = &lw_gt(lw, out)->shape;
    ltensor *lo = &lw->tensor[out];
    for (int k = 0; k < n_in; k++) {
        const ltensor *li = &lw->tensor[ins[k].t];
        if (!li->placed || !li->n || li->permuted != lo->permuted || !graph_shape_equal(&lw_gt(lw, ins[k].t)->shape, so))
            continue;
        bool ok = true;
        for (size_t j = 0; j < li->n; j++)
            if (li->p[j].first % 4)
                ok = false;
        if (!ok)
            continue;
        for (size_t j = 0; j < li->n; j++) {
            const piece *p = &li->p[j];
            uint32_t a = lw_tensor_alloc(lw, out, p->tile, p->count * lo->element_bytes, PREFER_REGION1, 8, false, what);
            if (!a || !lw_add_piece(lw, out, p->tile, a, p->first, p->count))
                return false;
        }
        return true;
    }
    uint64_t total = (uint64_t)graph_shape_numel(so);
    uint32_t tiles = lw_plan_tiles(lw, total, 8, LOGIC_CYCLES_PER_ELEMENT, 200);
    return lw_place_linear(lw, out, 8, tiles, what);
}

static void logic_record(uint32_t *rec, uint32_t out, uint32_t n, uint32_t cols, uint32_t col0, uint32_t op)
{
    memset(rec, 0, LOGIC_V_WORDS * sizeof *rec);
    rec[LOGIC_V_OUT] = out;
    rec[LOGIC_V_N] = n;
    rec[LOGIC_V_COLS] = cols;
    rec[LOGIC_V_COL0] = col0;
    rec[LOGIC_V_OP] = op;
}

/* Worker w's run starting at piece element e (< end): how many elements it
 * covers (whole rows while every input's row offsets step evenly), and the
 * record for it. */
static uint64_t fill_run(const graph_shape *so, const logic_in *ins, int n_in, uint64_t first, uint64_t e,
                         uint64_t end, uint64_t cols, uint32_t out_addr, uint32_t out_eb, uint32_t op, uint32_t *rec)
{
    int64_t E = (int64_t)(first + e), R = E / (int64_t)cols, c0 = E % (int64_t)cols;
    int64_t step[LOGIC_MAX_INPUTS] = {0};
    for (int k = 0; k < n_in; k++)
        step[k] = lw_row_offset(so, ins[k].stride, R + 1) - lw_row_offset(so, ins[k].stride, R);
    /* Extend over rows R+1, R+2, ... while they follow the steps. */
    int64_t rows = 1;
    while ((uint64_t)((R + rows) * (int64_t)cols) < first + end) {
        bool even = true;
        for (int k = 0; k < n_in && even; k++)
            even = lw_row_offset(so, ins[k].stride, R + rows) == lw_row_offset(so, ins[k].stride, R) + rows * step[k];
        if (!even)
            break;
        rows++;
    }
    uint64_t stop = (uint64_t)((R + rows) * (int64_t)cols) - first;
    if (stop > end)
        stop = end;
    logic_record(rec, out_addr + (uint32_t)(e * out_eb), (uint32_t)(stop - e), (uint32_t)cols, (uint32_t)c0, op);
    for (int k = 0; k < n_in; k++) {
        int64_t off = lw_row_offset(so, ins[k].stride, R) + c0 * ins[k].col_stride - ins[k].lo;
        uint32_t eb = ins[k].eb;
        rec[LOGIC_V_IN0 + 3 * k] = ins[k].addr + (uint32_t)(off * (int64_t)eb);
        rec[LOGIC_V_IN0_COL_STEP + 3 * k] = (uint32_t)(ins[k].col_stride * (int64_t)eb);
        rec[LOGIC_V_IN0_ROW_JUMP + 3 * k] =
            (uint32_t)((step[k] - (int64_t)cols * ins[k].col_stride) * (int64_t)eb);
    }
    return stop;
}

bool lw_lower_logic(lowering *lw, const graph_node *n, int index)
{
    const char *why;
    if (!lw_logic_supported(lw->g, n, &why))
        return lw_unsupported(lw, n, index, why);
    const char *sym;
    uint32_t op = 0;
    switch (n->op) {
    case GRAPH_OP_EQUAL: op = LOGIC_EQ; break;
    case GRAPH_OP_LESS: op = LOGIC_LT; break;
    case GRAPH_OP_GREATER: op = LOGIC_GT; break;
    case GRAPH_OP_AND: op = LOGIC_AND; break;
    case GRAPH_OP_OR: op = LOGIC_OR; break;
    case GRAPH_OP_NOT: op = LOGIC_NOT; break;
    case GRAPH_OP_ADD: op = LOGIC_ADD; break;
    case GRAPH_OP_SUB: op = LOGIC_SUB; break;
    case GRAPH_OP_MUL: op = LOGIC_MUL; break;
    case GRAPH_OP_MAX: op = LOGIC_MAX; break;
    case GRAPH_OP_MIN: op = LOGIC_MIN; break;
    default: break;
    }
    switch (n->op) {
    case GRAPH_OP_EQUAL:
    case GRAPH_OP_LESS:
    case GRAPH_OP_GREATER:
        sym = lw_gt(lw, n->inputs[0])->dtype == GDT_F32 ? "vtx_compare_f32" : "vtx_compare_i32";
        break;
    case GRAPH_OP_WHERE: sym = "vtx_where_f32"; break;
    case GRAPH_OP_AND:
    case GRAPH_OP_OR:
    case GRAPH_OP_NOT: sym = "vtx_logic_u8"; break;
    default: sym = "vtx_binary_i32"; break;
    }
    uint32_t entry;
    if (!codelet_library_symbol(lw->lib, sym, &entry))
        return lw_fail(lw, "internal: the kernel library has no %s", sym);

    int out = n->outputs[0];
    const graph_shape *so = &lw_gt(lw, out)->shape;
    int n_in = n->op == GRAPH_OP_NOT ? 1 : n->op == GRAPH_OP_WHERE ? 3 : 2;
    logic_in ins[LOGIC_MAX_INPUTS];
    memset(ins, 0, sizeof ins);
    /* Channels-last operands (a Relu's gradient on a convolution's image):
     * the elements pair up in stored order when every other operand is one
     * of the same shape or a single value (lower_layout.c). */
    int permuted = -1;
    for (int k = 0; k < n_in; k++)
        if (lw->tensor[n->inputs[k]].permuted)
            permuted = n->inputs[k];
    for (int k = 0; k < n_in; k++) {
        ins[k].t = n->inputs[k];
        ins[k].eb = lw->tensor[ins[k].t].element_bytes;
        const graph_shape *si = &lw_gt(lw, ins[k].t)->shape;
        if (permuted >= 0 && graph_shape_numel(si) != 1 &&
            (!lw->tensor[ins[k].t].permuted || !graph_shape_equal(si, so)))
            return lw_unsupported(lw, n, index, "channels-last operands mixed with others are not supported here");
        lw_broadcast_strides(&lw_gt(lw, ins[k].t)->shape, so, ins[k].stride);
        ins[k].col_stride = so->rank ? ins[k].stride[so->rank - 1] : 0;
    }
    uint64_t total = (uint64_t)graph_shape_numel(so);
    uint64_t cols = so->rank && so->dims[so->rank - 1] > 0 ? (uint64_t)so->dims[so->rank - 1] : 1;
    char what[96];
    snprintf(what, sizeof what, "tensor '%s'", lw_gt(lw, out)->name);
    if (total == 0) {
        lw->tensor[out].placed = true;
        return true;
    }
    ltensor *lo = &lw->tensor[out];
    if (permuted >= 0) {
        lo->permuted = true;
        memcpy(lo->perm, lw->tensor[permuted].perm, sizeof lo->perm);
    }
    if (!place_output(lw, out, ins, n_in, what))
        return false;
    uint32_t out_eb = lo->element_bytes;
    logic_in *pin = malloc((lo->n + 1) * LOGIC_MAX_INPUTS * sizeof *pin);
    if (!pin)
        return lw_fail(lw, "out of host memory");
    /* Fetch each input's range for each piece (one exchange phase). */
    for (size_t j = 0; j < lo->n && !lw->failed; j++) {
        const piece *p = &lo->p[j];
        int64_t r0 = (int64_t)(p->first / cols), r1 = (int64_t)((p->first + p->count - 1) / cols);
        for (int k = 0; k < n_in && !lw->failed; k++) {
            logic_in *in = &pin[j * LOGIC_MAX_INPUTS + (size_t)k];
            *in = ins[k];
            int64_t a = INT64_MAX, b = 0;
            for (int64_t r = r0; r <= r1; r++) {
                int64_t o = lw_row_offset(so, in->stride, r);
                int64_t c_lo = r == r0 ? (int64_t)(p->first % cols) : 0;
                int64_t c_hi = r == r1 ? (int64_t)((p->first + p->count - 1) % cols) : (int64_t)cols - 1;
                int64_t x = o + c_lo * in->col_stride, y = o + c_hi * in->col_stride + 1;
                if (x < a) a = x;
                if (y > b) b = y;
            }
            fetch_range(lw, in, a, b, p->tile);
        }
    }
    if (!lw->failed)
        lw_end_phase(lw);
    for (size_t j = 0; j < lo->n && !lw->failed; j++) {
        const piece *p = &lo->p[j];
        const logic_in *in = &pin[j * LOGIC_MAX_INPUTS];
        uint64_t wl[CODELET_WORKERS], wh[CODELET_WORKERS], at[CODELET_WORKERS], end[CODELET_WORKERS];
        lw_worker_split((p->count + 3) / 4, wl, wh);
        for (int w = 0; w < CODELET_WORKERS; w++) {
            at[w] = wl[w] * 4 < p->count ? wl[w] * 4 : p->count;
            end[w] = wh[w] * 4 < p->count ? wh[w] * 4 : p->count;
        }
        /* One compute set per round: every worker's next run. */
        for (;;) {
            bool any = false;
            for (int w = 0; w < CODELET_WORKERS; w++)
                any |= at[w] < end[w];
            if (!any)
                break;
            uint32_t *recs[CODELET_WORKERS];
            uint32_t off = lw_six_records(lw, p->tile, LOGIC_V_WORDS, recs);
            if (lw->failed)
                break;
            for (int w = 0; w < CODELET_WORKERS; w++) {
                if (at[w] < end[w])
                    at[w] = fill_run(so, in, n_in, p->first, at[w], end[w], cols, p->addr, out_eb, op, recs[w]);
                else
                    logic_record(recs[w], p->addr, 0, 1, 0, op);
            }
            lw_step_run(lw, p->tile, entry, off, LOGIC_V_WORDS);
        }
    }
    free(pin);
    return !lw->failed;
}
