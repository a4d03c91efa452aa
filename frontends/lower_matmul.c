/*
 * lower_matmul.c — MatMul, Gemm, Conv and the fused matmul and convolution
 * (bias, activation) on the AMP: C[M x N] = A[M x K] B[K x N].
 *
 * Two codelets: sv_matmul_f16 (f16 operands, f32 partial sums) and
 * sv_matmul_f32 (f32 operands and sums, the AMP's f32 path at a quarter of
 * the f16 rate).  f32 graphs use the f32 one, so their results are f32
 * products; --f16-matmul (lower_options.f16_matmul) computes them in f16
 * instead (A cast on the tiles, constant B at compile time).
 *
 * Plan: a gm x gn x gk grid of tiles per batch item; tile (l, i, j)
 * computes the block of rows [i mt, ..) and columns [j nt, ..) of C over
 * its share [l kt, ..) of K.  It receives its rows of A (every tile of a
 * grid row the same rows: broadcast or multicast) and its block of B:
 * constant weights are packed for $CWEI at compile time and stored in
 * parts over the tiles of their grid column, which gather the whole
 * block before the products (a weight is stored once, not once per grid
 * row, and the column's tiles share the memory); B computed at run time is
 * received and packed on the tile, except convolution weights kept
 * channels-last (variables) on the f16 path: packed in parts once a grid
 * column and gathered like constant weights.  K and the columns are padded with
 * zeros to the codelet's weight blocks and output groups.  With gk > 1
 * the gk partial blocks are summed by a reduce-scatter: each of the gk
 * tiles of a block receives the others' partials of its share of the
 * rows, sent in a staggered order (no tile receives two streams at once),
 * and adds them (f16 partials in one pass, vtx_reduce_partials_f16; f32
 * ones by the column-reduce codelet, then one add), so the result ends
 * spread over all of them.  The epilogue (alpha, bias times
 * beta, activation, cast) runs on each tile's share.  The grid is the
 * one with the lowest estimate — the codelet's own exact cycle count for
 * the block (workloads/codelets/matmul*.h), receiving A at the exchange's
 * 4 bytes a cycle (no sooner than the tile holding most of it sends it),
 * packing, the partial sums and the epilogue — among those whose blocks
 * fit in a tile.  Rows of A a tile holds already are read in place.
 * Where no grid fits, the matmul is serialised (lw_mm_plan_serial): its
 * rows, columns or K in parts, one after another on one grid.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower_matmul.h"
#include "lower_ops.h"
#include "ops_impl.h"
#include "isa/isa.h"
#include "isa/fp16.h"
#include "workloads/codelets/matmul.h"
#include "workloads/codelets/matmul_f32.h"
#include "workloads/kernels/matmul_model.h"

#define CONV_RUNTIME_WEIGHTS_MAX 65536u


/* The Transpose that made tensor t, when it swaps the last two axes and
 * every user of t is a MatMul taking it as its second operand, or (f32)
 * as its first with a second computed at run time of the same batch
 * dimensions: the matmul reads the Transpose's input instead (B^T, or A^T
 * turned on the tile). */
bool lw_transpose_into_matmul(const graph *g, int t)
{
    const graph_tensor *tt = &g->tensors[t];
    if (tt->producer < 0 || g->nodes[tt->producer].op != GRAPH_OP_TRANSPOSE || tt->is_output)
        return false;
    const graph_node *tr = &g->nodes[tt->producer];
    int r = tt->shape.rank;
    const graph_attr *perm = graph_attr_find(tr, "perm");
    if (r < 2 || !perm || (int)perm->n != r || perm->ints[r - 1] != r - 2 || perm->ints[r - 2] != r - 1)
        return false;
    for (int d = 0; d < r - 2; d++)
        if (perm->ints[d] != d)
            return false;
    int used = 0;           /* 1: as B, 2: as A */
    for (int i = 0; i < g->n_nodes; i++)
        for (int k = 0; k < g->nodes[i].n_inputs; k++)
            if (g->nodes[i].inputs[k] == t) {
                const graph_node *u = &g->nodes[i];
                if (u->op != GRAPH_OP_MATMUL || k > 1)
                    return false;
                const graph_tensor *other = &g->tensors[u->inputs[1 - k]];
                if (k == 1 ? other->data != NULL
                           : tt->dtype != GDT_F32 || other->dtype != GDT_F32 || other->data || other->shape.rank != r)
                    return false;
                for (int d = 0; k == 0 && d < r - 2; d++)
                    if (other->shape.dims[d] != tt->shape.dims[d])
                        return false;                     /* batch dimensions broadcast */
                int as = k == 1 ? 1 : 2;
                if (used && used != as)
                    return false;
                used = as;
            }
    return used != 0;
}

/* B's type, and a run-time B that is a Cast of an f16 weight read as that
 * weight (lw_cast_into_matmul): its f16 elements fetched, half the bytes. */
static void weights_type(const graph *g, mm_shape *s)
{
    s->b_f32 = s->f32_inputs;
    if (s->wgrad || !s->b_act || !lw_cast_into_matmul(g, s->b_src))
        return;
    int src = g->nodes[g->tensors[s->b_src].producer].inputs[0];
    if (s->b == s->b_src)
        s->b = src;
    s->b_src = src;
    s->b_f32 = false;
}

/* The Transpose folded into this MatMul's first operand
 * (lw_transpose_into_matmul): A read as given, [K, M]. */
static bool a_transposed(const graph *g, int a)
{
    const graph_tensor *ta = &g->tensors[a];
    return ta->shape.rank >= 2 && ta->producer >= 0 && lw_transpose_into_matmul(g, a);
}

/* The operands every matmul-like node names the same way. */
static void init_shape(const graph_node *n, mm_shape *s)
{
    memset(s, 0, sizeof *s);
    s->a = n->inputs[0];
    s->b = n->inputs[1];
    s->bias = n->n_inputs > 2 ? n->inputs[2] : -1;
    s->out = n->outputs[0];
    s->activation = -1;
    s->batch = 1;
    s->b_src = s->b;
    s->alpha = s->beta = 1.0;
    s->dh = s->dw = 1;
}

/* The bias: MatMul's fused [N], or Gemm's C broadcast to [M, N]. */
static bool describe_bias(const graph *g, mm_shape *s, graph_dtype dt, const char **why)
{
    if (s->bias < 0)
        return true;
    const graph_tensor *tc = &g->tensors[s->bias];
    int r = tc->shape.rank;
    for (int d = 0; d + 2 < r; d++)
        if (tc->shape.dims[d] != 1) {
            *why = "a bias of more than two dimensions";
            return false;
        }
    uint64_t bm = r >= 2 ? (uint64_t)tc->shape.dims[r - 2] : 1, bn = r >= 1 ? (uint64_t)tc->shape.dims[r - 1] : 1;
    if (tc->dtype != dt || (bm != 1 && bm != s->m) || (bn != 1 && bn != s->n)) {
        *why = "the bias must be of the operands' type and broadcast to [M, N]";
        return false;
    }
    if (!tc->data && dt != GDT_F32) {
        *why = "an f16 bias must be a constant";
        return false;
    }
    s->bias_row = bm == 1 ? 0 : bn;
    s->bias_col = bn == 1 ? 0 : 1;
    return true;
}

/* Gemm's attributes. */
static bool describe_gemm(const graph_node *n, mm_shape *s, const char **why)
{
    (void)why;
    s->trans_a = graph_attr_find(n, "transA") && graph_attr_int(n, "transA");
    s->trans_b = graph_attr_find(n, "transB") && graph_attr_int(n, "transB");
    s->alpha = graph_attr_find(n, "alpha") ? graph_attr_float(n, "alpha") : 1.0;
    s->beta = graph_attr_find(n, "beta") ? graph_attr_float(n, "beta") : 1.0;
    return true;
}

static bool describe_activation_b(const graph *g, const graph_node *n, mm_shape *s, const char **why)
{
    const graph_tensor *ta = &g->tensors[s->a], *tb = &g->tensors[s->b];
    if (n->op != GRAPH_OP_MATMUL && n->op != GRAPH_OP_GEMM) {
        *why = "a second operand computed at run time is lowered for MatMul and Gemm only";
        return false;
    }
    if (ta->dtype != GDT_F32 || tb->dtype != GDT_F32) {
        *why = "a second operand computed at run time must be f32";
        return false;
    }
    s->f32_inputs = true;
    s->b_act = true;
    int ra = ta->shape.rank, rb = tb->shape.rank;
    if (n->op == GRAPH_OP_GEMM) {
        describe_gemm(n, s, why);
        if (ra != 2 || rb != 2) {
            *why = "Gemm takes 2-D operands";
            return false;
        }
        s->k = (uint64_t)ta->shape.dims[s->trans_a ? 0 : 1];
        s->m = (uint64_t)ta->shape.dims[s->trans_a ? 1 : 0];
        s->n = (uint64_t)tb->shape.dims[s->trans_b ? 0 : 1];
        if ((uint64_t)tb->shape.dims[s->trans_b ? 1 : 0] != s->k) {
            *why = "inner dimensions differ";
            return false;
        }
        s->b_transposed = s->trans_b;
        if (!s->m || !s->k || !s->n) {
            *why = "empty matmul";
            return false;
        }
        weights_type(g, s);
        return describe_bias(g, s, GDT_F32, why);
    }
    if (ra < 2 || rb < 2 || ra != rb) {
        *why = "operands computed at run time need the same rank, at least 2";
        return false;
    }
    for (int d = 0; d < ra - 2; d++)
        if (ta->shape.dims[d] != tb->shape.dims[d]) {
            *why = "broadcast batch dimensions are not yet supported";
            return false;
        }
    s->m = (uint64_t)ta->shape.dims[ra - 2];
    s->k = (uint64_t)ta->shape.dims[ra - 1];
    s->n = (uint64_t)tb->shape.dims[rb - 1];
    if (a_transposed(g, s->a)) {
        s->trans_a = true;
        s->a = g->nodes[ta->producer].inputs[0];
    }
    uint64_t per_item = s->m * s->k;
    s->batch = per_item ? (uint64_t)graph_shape_numel(&ta->shape) / per_item : 1;
    if ((uint64_t)tb->shape.dims[rb - 2] != s->k) {
        *why = "inner dimensions differ";
        return false;
    }
    if (lw_transpose_into_matmul(g, s->b)) {
        s->b_transposed = true;
        s->b_src = g->nodes[tb->producer].inputs[0];
    }
    if (!s->m || !s->k || !s->n) {
        *why = "empty matmul";
        return false;
    }
    weights_type(g, s);
    return true;
}

static bool describe(const graph *g, const graph_node *n, mm_shape *s, const char **why)
{
    init_shape(n, s);
    const graph_tensor *ta = &g->tensors[s->a], *tb = &g->tensors[s->b];
    if (!tb->data)
        return describe_activation_b(g, n, s, why);
    if (tb->shape.rank != 2 || ta->shape.rank < 1) {
        *why = "only a 2-D constant second operand is supported";
        return false;
    }
    if (ta->dtype != tb->dtype || (ta->dtype != GDT_F16 && ta->dtype != GDT_F32)) {
        *why = "operands must both be f16 or both f32";
        return false;
    }
    s->f32_inputs = ta->dtype == GDT_F32;
    if (n->op == GRAPH_OP_GEMM) {
        describe_gemm(n, s, why);
    } else if (n->op == GRAPH_OP_FUSED_MATMUL) {
        s->trans_b = graph_attr_find(n, "transB") && graph_attr_int(n, "transB");
        const char *act = graph_attr_find(n, "activation") ? graph_attr_string(n, "activation") : "none";
        if (strcmp(act, "relu") == 0)
            s->activation = KERNEL_UNARY_RELU;
        else if (strcmp(act, "gelu") == 0 || strcmp(act, "gelu_erf") == 0)
            s->activation = KERNEL_UNARY_GELU_ERF;
        else if (strcmp(act, "gelu_tanh") == 0)
            s->activation = KERNEL_UNARY_GELU_TANH;
        else if (strcmp(act, "none") != 0) {
            *why = "unknown fused activation";
            return false;
        }
    } else if (s->bias >= 0) {
        *why = "MatMul has two inputs";
        return false;
    }
    if (ta->shape.rank == 1) {
        *why = "a 1-D first operand is not yet supported";
        return false;
    }
    if (s->trans_a) {
        if (ta->shape.rank != 2) {
            *why = "Gemm takes 2-D operands";
            return false;
        }
        s->k = (uint64_t)ta->shape.dims[0];
        s->m = (uint64_t)ta->shape.dims[1];
    } else {
        s->k = (uint64_t)ta->shape.dims[ta->shape.rank - 1];
        s->m = (uint64_t)graph_shape_numel(&ta->shape) / (s->k ? s->k : 1);
    }
    uint64_t bk = (uint64_t)tb->shape.dims[s->trans_b ? 1 : 0];
    s->n = (uint64_t)tb->shape.dims[s->trans_b ? 0 : 1];
    if (bk != s->k) {
        *why = "inner dimensions differ";
        return false;
    }
    if (s->m == 0 || s->n == 0 || s->k == 0) {
        *why = "empty matmul";
        return false;
    }
    weights_type(g, s);
    return describe_bias(g, s, ta->dtype, why);
}

/* Run-time weights of a convolution: read in runs where they are kept
 * channels-last (or have one kernel tap), else an element at a time into
 * the (kh, kw, c) order of K, so only small f32 ones (false with why). */
static bool runtime_weights(const graph *g, mm_shape *s, const char **why)
{
    s->w_rows = s->kh * s->kw == 1 || lw_weights_channels_last(g, s->b);
    if (s->w_rows)
        return true;
    if (!s->b_f32) {
        *why = "f16 convolution weights computed at run time must be kept channels-last (a variable, or "
               "element-wise ops of variables)";
        return false;
    }
    if (s->k * s->n > CONV_RUNTIME_WEIGHTS_MAX) {
        *why = "run-time convolution weights of more than 65536 elements are read in runs only when kept "
               "channels-last (a variable, or element-wise ops of variables)";
        return false;
    }
    return true;
}

static bool describe_conv(const graph *g, const graph_node *n, mm_shape *s, const char **why)
{
    init_shape(n, s);
    s->conv = true;
    s->batch = 1;
    s->b_src = s->b;
    const graph_tensor *x = &g->tensors[s->a], *wt = &g->tensors[s->b];
    if (x->shape.rank != 4 || wt->shape.rank != 4) {
        *why = "only 2-D convolutions are lowered";
        return false;
    }
    if (graph_attr_find(n, "group") && graph_attr_int(n, "group") != 1) {
        *why = "grouped convolutions are not yet supported";
        return false;
    }
    if (x->dtype != wt->dtype || (x->dtype != GDT_F16 && x->dtype != GDT_F32)) {
        *why = "operands must both be f16 or both f32";
        return false;
    }
    ops_window win;
    char err[256];
    if (!ops_window_init(g, n, &x->shape, wt->shape.dims + 2, false, &win, err, sizeof err) || win.n_spatial != 2) {
        *why = "bad convolution window";
        return false;
    }
    if (win.dilation[0] != 1 || win.dilation[1] != 1) {
        *why = "dilated convolutions are not yet supported";
        return false;
    }
    s->f32_inputs = x->dtype == GDT_F32;
    s->n_img = x->shape.dims[0];
    s->c_in = x->shape.dims[1];
    s->h = x->shape.dims[2];
    s->w = x->shape.dims[3];
    s->kh = win.kernel[0];
    s->kw = win.kernel[1];
    s->sh = win.stride[0];
    s->sw = win.stride[1];
    s->ph = win.pad_begin[0];
    s->pw = win.pad_begin[1];
    s->oh = win.out[0];
    s->ow = win.out[1];
    s->m = (uint64_t)(s->n_img * s->oh * s->ow);
    s->k = (uint64_t)(s->kh * s->kw * s->c_in);
    s->n = (uint64_t)wt->shape.dims[0];
    if (!s->f32_inputs && s->c_in % 2) {
        *why = "f16 images with an odd number of channels are not yet supported";
        return false;
    }
    if (n->op == GRAPH_OP_FUSED_CONV) {
        const char *act = graph_attr_find(n, "activation") ? graph_attr_string(n, "activation") : "none";
        if (strcmp(act, "relu") == 0)
            s->activation = KERNEL_UNARY_RELU;
        else if (strcmp(act, "none") != 0) {
            *why = "unknown fused activation";
            return false;
        }
    }
    if (!wt->data)
        s->b_act = s->b_transposed = true;
    weights_type(g, s);
    if (s->b_act && !runtime_weights(g, s, why))
        return false;
    if (s->bias >= 0) {
        const graph_tensor *tc = &g->tensors[s->bias];
        if (tc->dtype != x->dtype || (uint64_t)graph_shape_numel(&tc->shape) != s->n ||
            (!tc->data && x->dtype != GDT_F32)) {
            *why = "the bias must be Cout elements of the image's type (f16 ones constant)";
            return false;
        }
        s->bias_col = 1;
    }
    return lw_channels_last_ok(g, n, why);
}

bool lw_matmul_supported(const graph *g, const graph_node *n, const char **why)
{
    mm_shape s;
    if (n->op == GRAPH_OP_CONV || n->op == GRAPH_OP_FUSED_CONV)
        return describe_conv(g, n, &s, why);
    return describe(g, n, &s, why);
}

/* Constant weights are kept in at most this many parts down a grid column,
 * each of at least this many bytes (lw_lower_matmul). */
#define WEIGHT_PARTS 8u
#define WEIGHT_PART_MIN_BYTES 2048u

/* Rows of a block of `rows` that share `share` of a split over gk tiles. */
void lw_mm_reduce_share(uint64_t rows, uint32_t gk, uint32_t share, uint64_t *r0, uint64_t *r1)
{
    uint64_t per = (rows + gk - 1) / gk;
    *r0 = share * per < rows ? share * per : rows;
    *r1 = *r0 + per < rows ? *r0 + per : rows;
}

/* The least bytes of A a tile's part of a spread block is (below, the
 * transfers' set-up outweighs the data: a 64 x 64 x 64 product's 16-byte
 * parts took 6 % longer than the rows sent from one tile). */
#define LHS_SPREAD_MIN_BYTES 512u

bool lw_matmul_input_layout(lowering *lw, int tensor, lw_lhs_layout *layout)
{
    const graph *g = lw->g;
    const graph_node *user = NULL;
    for (int i = 0; i < g->n_nodes; i++)
        for (int k = 0; k < g->nodes[i].n_inputs; k++)
            if (g->nodes[i].inputs[k] == tensor) {
                if (user || k != 0)
                    return false;
                user = &g->nodes[i];
            }
    if (!user || !(user->op == GRAPH_OP_MATMUL || user->op == GRAPH_OP_GEMM || user->op == GRAPH_OP_FUSED_MATMUL))
        return false;
    mm_shape s;
    const char *why;
    mm_grid grid;
    if (!describe(g, user, &s, &why) || s.trans_a)
        return false;
    mm_kind kd = lw_mm_kind(lw, &s);
    /* Only where memory is not what decides the plan: the operands and
     * the result take at most an eighth of the tiles' memory (else the
     * plan made now, before the other operands are placed, may not be the
     * one that fits when the matmul is lowered). */
    const uint64_t in_eb = s.f32_inputs ? 4 : 2;
    const uint64_t operand_bytes = s.m * s.k * in_eb + s.k * s.n * in_eb + s.m * s.n * 4;
    bool spread = s.batch == 1 && g->tensors[tensor].shape.rank == 2 &&
                  operand_bytes <= (uint64_t)lw->tiles * (lw->mem_end - lw->mem_base) / 8;
    if (!kd.f32 && s.k % 2)
        return false;
    /* Spread where each tile's part of a block is worth a transfer of its
     * own (LHS_SPREAD_MIN_BYTES); else the rows on a grid row's first tile. */
    if (spread && (!lw_mm_plan_grid_as(lw, &s, &kd, &grid, true) || grid.least_memory ||
                   grid.mt * grid.kt * in_eb < (uint64_t)grid.gn * LHS_SPREAD_MIN_BYTES))
        spread = false;
    if (!spread && (!lw_mm_plan_grid_as(lw, &s, &kd, &grid, false) || grid.gk > 1))
        return false;
    *layout = (lw_lhs_layout){ grid.gm, grid.gn, grid.gk, grid.mt, grid.kt, spread };
    return true;
}

static float f32_of_bits(const void *p, size_t i, bool f32)
{
    if (f32)
        return ((const float *)p)[i];
    return fp16_to_f32(((const f16_t *)p)[i]);
}

/* The channels of taps [x0, x1) of kernel row y at image pixel (img, iy,
 * ix of tap x0), clipped to the columns [k0, k1) of a row at `row`. */
static void fetch_taps(lowering *lw, const mm_shape *s, int t, int64_t img, int64_t iy, int64_t ix, int64_t y,
                       int64_t x0, int64_t x1, uint64_t k0, uint64_t k1, uint32_t tile, uint32_t row, uint32_t eb)
{
    uint64_t q0 = (uint64_t)((y * s->kw + x0) * s->c_in), q1 = (uint64_t)((y * s->kw + x1) * s->c_in);
    uint64_t c0 = q0 > k0 ? q0 : k0, c1 = q1 < k1 ? q1 : k1;
    if (c0 >= c1)
        return;
    uint64_t first = (uint64_t)(((img * s->h + iy) * s->w + ix) * s->c_in) + (c0 - q0);
    lw_fetch_into(lw, t, first, c1 - c0, tile, row + (uint32_t)((c0 - k0) * eb));
}

/* im2col by the exchange: row p (an output pixel) of image t [N, C, H, W]
 * kept channels-last gets, for each (kh, kw) inside the image, the C
 * channels of the pixel there, columns ordered (kh, kw, c) and clipped to
 * [k0, k1); rows `row_bytes` apart from buf; padding stays zero.  The kw
 * runs of one kernel row are adjacent in the image when they are all
 * inside and its pixels are (dw 1): one fetch.  With dh, dw > 1 the
 * image's pixels are that far apart with zeros between (a transposed
 * convolution's input): the taps on the zeros are left out. */
static void im2col_rows(lowering *lw, const mm_shape *s, int t, uint64_t p0, uint64_t p1, uint64_t k0, uint64_t k1,
                        uint32_t tile, uint32_t buf, uint32_t row_bytes, uint32_t eb)
{
    for (uint64_t p = p0; p < p1 && !lw->failed; p++) {
        int64_t img = (int64_t)p / (s->oh * s->ow), rem = (int64_t)p % (s->oh * s->ow);
        int64_t oy = rem / s->ow, ox = rem % s->ow;
        uint32_t row = buf + (uint32_t)((p - p0) * row_bytes);
        for (int64_t y = 0; y < s->kh; y++) {
            int64_t vy = oy * s->sh - s->ph + y;
            if (vy < 0 || vy % s->dh || vy / s->dh >= s->h)
                continue;
            if (s->dw > 1) {
                for (int64_t x = 0; x < s->kw; x++) {
                    int64_t vx = ox * s->sw - s->pw + x;
                    if (vx >= 0 && vx % s->dw == 0 && vx / s->dw < s->w)
                        fetch_taps(lw, s, t, img, vy / s->dh, vx / s->dw, y, x, x + 1, k0, k1, tile, row, eb);
                }
                continue;
            }
            int64_t x0 = 0, x1 = s->kw;
            while (x0 < x1 && ox * s->sw - s->pw + x0 < 0)
                x0++;
            while (x1 > x0 && ox * s->sw - s->pw + x1 - 1 >= s->w)
                x1--;
            if (x0 < x1)
                fetch_taps(lw, s, t, img, vy / s->dh, ox * s->sw - s->pw + x0, y, x0, x1, k0, k1, tile, row, eb);
        }
    }
}

/* Tile `tile`'s rows [m0, m1) of A over K [k0, k1), rows padded to kt
 * elements of in_eb bytes (the padding zero); the address.  With transA,
 * the kt x (m1 - m0) block of A as given (turned on the tile later). */
static uint32_t fetch_a_block(lowering *lw, const mm_shape *s, uint32_t tile, uint64_t a_off, uint64_t m0,
                              uint64_t m1, uint64_t k0, uint64_t k1, uint64_t kt, uint32_t in_eb, const char *what)
{
    /* Whole rows: where the tile holds them they are used in place (the
     * codelet or the cast reads them there), else received. */
    if (!s->conv && !s->trans_a && k0 == 0 && k1 == kt && kt == s->k)
        return lw_fetch(lw, s->a, a_off + m0 * s->k, (m1 - m0) * s->k, tile, PREFER_REGION0);
    /* Zeroed at run time where the exchange leaves gaps (K padding, the
     * image's border), scratch of this op only. */
    uint32_t rb = (uint32_t)(kt * in_eb);
    bool gaps = s->conv || s->wgrad || k1 - k0 != kt;
    uint32_t buf = gaps ? lw_scratch_zeroed(lw, tile, (m1 - m0) * rb, PREFER_REGION0, 8, what)
                        : lw_scratch_alloc(lw, tile, (m1 - m0) * rb, PREFER_REGION0, 8, what);
    if (!buf)
        return 0;
    if (s->trans_a && m0 == 0 && m1 == s->m) {
        lw_fetch_into(lw, s->a, a_off + k0 * s->m, (k1 - k0) * s->m, tile, buf);
        return lw->failed ? 0 : buf;
    }
    if (s->trans_a) {
        for (uint64_t kk = k0; kk < k1 && !lw->failed; kk++)
            lw_fetch_into(lw, s->a, a_off + kk * s->m + m0, m1 - m0, tile,
                          buf + (uint32_t)((kk - k0) * (m1 - m0) * in_eb));
        return lw->failed ? 0 : buf;
    }
    if (!s->conv) {
        if (k0 == 0 && k1 == kt && k1 == s->k)
            lw_fetch_into(lw, s->a, a_off + m0 * s->k, (m1 - m0) * s->k, tile, buf);
        else
            for (uint64_t r = m0; r < m1 && !lw->failed; r++)
                lw_fetch_into(lw, s->a, a_off + r * s->k + k0, k1 - k0, tile, buf + (uint32_t)((r - m0) * rb));
        return lw->failed ? 0 : buf;
    }
    im2col_rows(lw, s, s->a, m0, m1, k0, k1, tile, buf, rb, in_eb);
    return lw->failed ? 0 : buf;
}

/* Where B's element (kk = (kh, kw, c), j) of a convolution is in its
 * weights: W [Cout, C, KH, KW], or ConvTranspose's [C, Cout, KH, KW] read
 * flipped (w_flip). */
static uint64_t conv_weight_src(const mm_shape *s, uint64_t kk, uint64_t j)
{
    const uint64_t c_in = (uint64_t)s->c_in, kh = (uint64_t)s->kh, kw = (uint64_t)s->kw;
    uint64_t c = kk % c_in, r = kk / c_in, x = r % kw, y = r / kw;
    if (s->w_flip)
        return ((c * s->n + j) * kh + (kh - 1 - y)) * kw + (kw - 1 - x);
    return ((j * c_in + c) * kh + y) * kw + x;
}

/* A convolution's run-time weights kept [Cout, KH, KW, C] (w_rows), the
 * block K [k0, k1) x columns [n0, n1) into buf (eb bytes an element): a
 * Conv's as nt rows of kt, each column's run of K at once (the whole block
 * at once when its rows are all of K, adjacent in the weights); a
 * ConvTranspose's [C, KH, KW, Cout] as kt rows of nt, B's row (kh, kw, c)
 * the run of columns at (c, KH - 1 - kh, KW - 1 - kw).  Each tile of a
 * grid column asks for the same runs, which the exchange multicasts. */
static void fetch_weight_runs(lowering *lw, const mm_shape *s, uint32_t tile, uint64_t k0, uint64_t k1, uint64_t kt,
                              uint64_t n0, uint64_t n1, uint64_t nt, uint32_t buf, uint32_t eb)
{
    if (!s->w_flip) {
        if (k0 == 0 && k1 == s->k && kt == s->k) {
            lw_fetch_into(lw, s->b_src, n0 * s->k, (n1 - n0) * s->k, tile, buf);
            return;
        }
        for (uint64_t q = n0; q < n1 && !lw->failed; q++)
            lw_fetch_into(lw, s->b_src, q * s->k + k0, k1 - k0, tile, buf + (uint32_t)((q - n0) * kt * eb));
        return;
    }
    const uint64_t c_in = (uint64_t)s->c_in, kh = (uint64_t)s->kh, kw = (uint64_t)s->kw;
    for (uint64_t kk = k0; kk < k1 && !lw->failed; kk++) {
        uint64_t c = kk % c_in, r = kk / c_in, x = r % kw, y = r / kw;
        uint64_t first = ((c * kh + (kh - 1 - y)) * kw + (kw - 1 - x)) * s->n + n0;
        lw_fetch_into(lw, s->b_src, first, n1 - n0, tile, buf + (uint32_t)((kk - k0) * nt * eb));
    }
}

/* A run-time B's block: K [k0, k1) x columns [n0, n1), f32, zero-padded to
 * kt x nt; when B comes transposed ([.., N, K]), as nt rows of kt (row q
 * is column n0 + q of B).  The address. */
static uint32_t fetch_b_block(lowering *lw, const mm_shape *s, uint32_t tile, uint64_t bt, uint64_t k0, uint64_t k1,
                              uint64_t kt, uint64_t n0, uint64_t n1, uint64_t nt, const char *what)
{
    bool gaps = s->wgrad || k1 - k0 != kt || n1 - n0 != nt;
    const uint32_t eb = s->b_f32 ? 4 : 2;   /* f16 (an image, weights): widened on the tile */
    uint32_t buf = gaps ? lw_scratch_zeroed(lw, tile, kt * nt * eb, PREFER_REGION1, 8, what)
                        : lw_scratch_alloc(lw, tile, kt * nt * eb, PREFER_REGION1, 8, what);
    if (!buf)
        return 0;
    const uint64_t b_off = bt * s->k * s->n;
    if (s->wgrad) {
        /* The im2col rows of the image for output pixels [k0, k1). */
        im2col_rows(lw, s, s->b_src, k0, k1, n0, n1, tile, buf, (uint32_t)nt * eb, eb);
    } else if (s->conv && s->w_rows) {
        fetch_weight_runs(lw, s, tile, k0, k1, kt, n0, n1, nt, buf, eb);
    } else if (s->conv) {
        /* W: B's element (kk = (kh, kw, c), j) one by one. */
        for (uint64_t q = n0; q < n1 && !lw->failed; q++)
            for (uint64_t kk = k0; kk < k1 && !lw->failed; kk++)
                lw_fetch_into(lw, s->b_src, conv_weight_src(s, kk, q), 1, tile,
                              buf + (uint32_t)(((q - n0) * kt + kk - k0) * 4));
    } else if (s->b_transposed) {
        for (uint64_t q = n0; q < n1 && !lw->failed; q++)
            lw_fetch_into(lw, s->b_src, b_off + q * s->k + k0, k1 - k0, tile, buf + (uint32_t)((q - n0) * kt * eb));
    } else {
        for (uint64_t kk = k0; kk < k1 && !lw->failed; kk++)
            lw_fetch_into(lw, s->b_src, b_off + kk * s->n + n0, n1 - n0, tile, buf + (uint32_t)((kk - k0) * nt * eb));
    }
    return lw->failed ? 0 : buf;
}

/* out[c][r] = in[r][c] for rows x cols f32 on the tile: input rows shared
 * out among the workers. */
static void turn_on_tile(lowering *lw, uint32_t tile, uint32_t in, uint32_t out, uint64_t rows, uint64_t cols)
{
    worker_set ws;
    if (lw_workers_begin(lw, tile, KERNEL_TRANSPOSE_WORDS, rows, &ws))
        for (int w = 0; w < CODELET_WORKERS; w++)
            kernel_transpose_record(ws.rec[w], in + (uint32_t)(ws.lo[w] * cols * 4), out + (uint32_t)(ws.lo[w] * 4),
                                    (uint32_t)(ws.hi[w] - ws.lo[w]), (uint32_t)cols, (uint32_t)cols * 4,
                                    (uint32_t)rows * 4);
    lw_workers_run(lw, tile, lw->kernels.vtx_transpose_f32, &ws);
}

static mm_bias fetch_bias(lowering *lw, const mm_shape *s, uint32_t tile, uint64_t r0, uint64_t r1, uint64_t n0,
                          uint64_t n1, const char *what)
{
    mm_bias b = { 0, 0, 0 };
    const graph *g = lw->g;
    if (s->bias < 0 || r0 >= r1)
        return b;
    uint64_t width = s->bias_col ? n1 - n0 : 1, rows = s->bias_row ? r1 - r0 : 1;
    b.col_step = s->bias_col ? 4 : 0;
    b.row_step = s->bias_row ? (uint32_t)width * 4 : 0;
    if (!s->f32_inputs) {
        /* An f16 bias (a constant, of N values): widened at compile time. */
        float *wide = malloc(width * sizeof *wide);
        if (!wide) {
            lw_fail(lw, "out of host memory");
            return b;
        }
        for (uint64_t q = 0; q < width; q++)
            wide[q] = fp16_to_f32(((const f16_t *)g->tensors[s->bias].data)[(n0 + q) * s->bias_col]) *
                      (float)s->beta;
        b.addr = lw_tile_alloc(lw, tile, width * 4, PREFER_REGION1, 8, what);
        if (b.addr)
            lw_tile_data(lw, tile, b.addr, wide, (uint32_t)(width * 4), "bias");
        free(wide);
        return b;
    }
    uint64_t first = r0 * s->bias_row + n0 * s->bias_col;
    if (rows == 1 && s->beta == 1.0) {
        b.addr = lw_fetch(lw, s->bias, first, width, tile, PREFER_REGION1);
        return b;
    }
    /* Rows of a matrix bias, or a copy to scale by beta. */
    b.addr = lw_scratch_alloc(lw, tile, rows * width * 4, PREFER_REGION1, 8, what);
    if (!b.addr)
        return b;
    if (s->bias_row && width == s->n)
        lw_fetch_into(lw, s->bias, first, rows * width, tile, b.addr);
    else
        for (uint64_t r = 0; r < rows && !lw->failed; r++)
            lw_fetch_into(lw, s->bias, first + r * s->bias_row, width, tile, b.addr + (uint32_t)(r * width * 4));
    return b;
}

/* The constant weights' block (k0.., n0..) of kt x nt, packed for the
 * codelet, from B as f32 (kpad x np). */
static void pack_block(const mm_kind *kd, const float *bfull, uint64_t np, uint64_t k0, uint64_t n0, uint64_t kt,
                       uint64_t nt, float *block, void *packed)
{
    for (uint64_t kk = 0; kk < kt; kk++)
        memcpy(block + kk * nt, bfull + (k0 + kk) * np + n0, nt * sizeof *block);
    if (kd->f32) {
        matmul_pack_weights_f32(block, kt, nt, packed);
        return;
    }
    /* f16: narrowed in place (the f32 values came from f16 or are rounded
     * now), then packed. */
    f16_t *h = (f16_t *)block;
    for (uint64_t q = 0; q < kt * nt; q++)
        h[q] = fp16_from_f32(block[q]);
    matmul_pack_weights(h, kt, nt, kd->f16_partials ? MATMUL_PARTIALS_F16 : MATMUL_PARTIALS_F32, packed);
}

/* Run `step` on every tile of the grid that has rows and columns, batch
 * item by batch item, until lw fails (a false step ends its grid row). */
typedef bool (*mm_tile_step)(lowering *lw, mm_plan *P, const mm_tile *t);
static void for_each_tile(lowering *lw, mm_plan *P, mm_tile_step step)
{
    const mm_shape *s = &P->s;
    for (uint64_t bt = 0; bt < s->batch && !lw->failed; bt++)
        for (uint32_t l = 0; l < P->gk && !lw->failed; l++)
            for (uint32_t i = 0; i < P->gm && P->lo[MM_AXIS_M] + i * P->mt < P->hi[MM_AXIS_M] && !lw->failed; i++)
                for (uint32_t j = 0; j < P->gn && P->lo[MM_AXIS_N] + j * P->nt < P->hi[MM_AXIS_N] && !lw->failed;
                     j++) {
                    mm_tile t = { .bt = bt, .l = l, .i = i, .j = j, .slot = lw_mm_slot_of(P, bt, l, i, j) };
                    t.tile = lw_tile_of(lw, t.slot);
                    t.m0 = P->lo[MM_AXIS_M] + i * P->mt;
                    t.m1 = t.m0 + P->mt < P->hi[MM_AXIS_M] ? t.m0 + P->mt : P->hi[MM_AXIS_M];
                    t.k0 = P->lo[MM_AXIS_K] + l * P->kt;
                    t.k1 = t.k0 + P->kt < P->hi[MM_AXIS_K] ? t.k0 + P->kt : P->hi[MM_AXIS_K];
                    t.n0 = P->lo[MM_AXIS_N] + j * P->nt;
                    t.n1 = t.n0 + P->nt < P->hi[MM_AXIS_N] ? t.n0 + P->nt : P->hi[MM_AXIS_N];
                    lw_mm_reduce_share(t.m1 - t.m0, P->gk, l, &t.r0, &t.r1);
                    if (!step(lw, P, &t))
                        break;
                }
}

static bool plan_described(lowering *lw, const graph_node *n, int index, mm_plan *P);

/* The node's shape, codelet and grid (false: lw failed, the node
 * unsupported or no grid fitting). */
static bool plan_matmul(lowering *lw, const graph_node *n, int index, mm_plan *P)
{
    const graph *g = lw->g;
    mm_shape *s = &P->s;
    const char *why;
    bool is_conv = n->op == GRAPH_OP_CONV || n->op == GRAPH_OP_FUSED_CONV;
    if (!(is_conv ? describe_conv(g, n, s, &why) : describe(g, n, s, &why)))
        return lw_unsupported(lw, n, index, why);
    return plan_described(lw, n, index, P);
}

/* The codelet and grid of the matmul P->s describes. */
static bool plan_described(lowering *lw, const graph_node *n, int index, mm_plan *P)
{
    const graph *g = lw->g;
    const mm_shape *s = &P->s;
    const mm_kind kd = P->kd = lw_mm_kind(lw, s);
    P->in_eb = s->f32_inputs ? 4 : 2;
    const uint64_t kp = (s->k + kd.k_block - 1) / kd.k_block * kd.k_block;
    if (!kd.f32 && kp != s->k && s->k % 2 && !s->f32_inputs && !s->wgrad)
        return lw_unsupported(lw, n, index, "f16 rows of odd length K are not yet supported");
    if (!kd.f32 && s->trans_a && !s->wgrad && !s->f32_inputs)
        return lw_unsupported(lw, n, index, "transA=1 of f16 operands is lowered on the f32 path only (compile without --f16-matmul)");
    mm_grid grid;
    mm_serial ser = { 1, MM_AXIS_M, 0 };
    if (!lw_mm_plan_grid(lw, s, &kd, &grid)) {
        if (!lw_mm_plan_serial(lw, s, &kd, &grid, &ser))     /* (grid as it was) */
            return lw_mm_fail_no_grid(lw, n, s, &kd, kp, &grid);
    } else if (grid.least_memory) {
        lw_mm_plan_serial(lw, s, &kd, &grid, &ser);
    }
    P->serial = ser.parts, P->serial_axis = ser.axis, P->part = ser.part;
    for (enum mm_axis a = MM_AXIS_M; a <= MM_AXIS_K; a++) {
        P->lo[a] = 0;
        P->hi[a] = P->serial > 1 && a == ser.axis ? ser.part : lw_mm_side(s, a);
    }
    P->gm = grid.gm, P->gn = grid.gn, P->gk = grid.gk;
    P->mt = grid.mt, P->nt = grid.nt, P->kt = grid.kt;
    if (lw->opts->verbose)
        printf("plan: %s: %llux%llux%llu on a %u x %u x %u grid of tiles (M x N x K), blocks of %llu x %llu x %llu, "
               "%s, estimated %.0f cycles%s\n", g->tensors[s->out].name, (unsigned long long)s->m,
               (unsigned long long)s->k, (unsigned long long)s->n, P->gm, P->gn, P->gk, (unsigned long long)P->mt,
               (unsigned long long)P->nt, (unsigned long long)P->kt, kd.f32 ? "f32 AMP" : kd.f16_partials ? "f16 AMP, f16 partials" : "f16 AMP, f32 partials",
               grid.cycles, grid.least_memory ? " (no grid fits every tile's free blocks: the one needing least)" : "");
    if (lw->opts->verbose && grid.runner_up.gm)
        printf("  runner-up: a %u x %u x %u grid, blocks of %llu x %llu x %llu, estimated %.0f cycles\n",
               grid.runner_up.gm, grid.runner_up.gn, grid.runner_up.gk, (unsigned long long)grid.runner_up.mt,
               (unsigned long long)grid.runner_up.nt, (unsigned long long)grid.runner_up.kt, grid.runner_up.cycles);
    if (P->serial > 1) {
        lw->rep->serialised_matmuls++;
        lw->rep->serialised_by[P->serial_axis]++;
        lw->rep->serial_parts += P->serial;
        if (lw->opts->verbose)
            printf("plan: %s: serialised: %u parts of %llu %s, one after another on that grid\n",
                   g->tensors[s->out].name, P->serial, (unsigned long long)P->part,
                   P->serial_axis == MM_AXIS_M   ? "rows"
                   : P->serial_axis == MM_AXIS_N ? "columns"
                                                 : "of K, summed in place");
    }
    P->np = (uint64_t)P->gn * P->nt;
    P->per_batch = P->gm * P->gn * P->gk;
    P->w_bytes = (uint32_t)(P->kt * P->nt * kd.w_eb);
    snprintf(P->what, sizeof P->what, "matmul '%s'", g->tensors[s->out].name);
    return true;
}

static void free_plan(mm_plan *P)
{
    free(P->bfull);
    free(P->block);
    free(P->packed);
    free(P->a_addr);
    free(P->b_addr);
    free(P->bw_addr);
    free(P->c_addr);
    free(P->recv);
    free(P->temps);
    free(P->bias);
    free(P->kept);
}

/* The plan's buffers, and constant B as f32, K x N, padded to (gk kt) x
 * (gn nt) with zeros (false: out of host memory, lw failed). */
static bool plan_buffers(lowering *lw, mm_plan *P)
{
    const mm_shape *s = &P->s;
    const graph_tensor *tb = &lw->g->tensors[s->b];
    const uint64_t np = P->np, kpad = (uint64_t)P->gk * P->kt;
    const size_t slots = (size_t)P->per_batch * s->batch;
    P->bfull = calloc(s->b_act ? 1 : kpad * np, sizeof *P->bfull);
    P->block = malloc(P->kt * P->nt * sizeof *P->block);
    P->packed = malloc(P->w_bytes);
    P->a_addr = calloc(slots, sizeof *P->a_addr), P->b_addr = calloc(slots, sizeof *P->b_addr);
    P->bw_addr = calloc(slots, sizeof *P->bw_addr), P->c_addr = calloc(slots, sizeof *P->c_addr);
    P->recv = calloc(slots, sizeof *P->recv);
    P->temps = calloc(slots * MM_TEMPS, sizeof *P->temps);
    P->bias = calloc(slots, sizeof *P->bias);
    P->kept = calloc((size_t)s->batch * P->gk * P->gn * WEIGHT_PARTS, sizeof *P->kept);
    if (!P->kept || !P->bfull || !P->block || !P->packed || !P->a_addr || !P->b_addr || !P->bw_addr || !P->c_addr || !P->recv ||
        !P->temps || !P->bias)
        return lw_fail(lw, "out of host memory");
    for (uint64_t kk = 0; kk < s->k && !s->b_act; kk++)
        for (uint64_t j = 0; j < s->n; j++) {
            size_t src = s->trans_b ? j * s->k + kk : kk * s->n + j;
            if (s->conv)
                src = conv_weight_src(s, kk, j);
            P->bfull[kk * np + j] = f32_of_bits(tb->data, src, s->f32_inputs);
        }
    return true;
}

/* The packed block (bt, l, j) of constant weights kept in `parts` parts
 * down its grid column (rows_used tiles): each part loaded with the
 * executable on one tile of the column, copied locally into that tile's
 * block and multicast to the others'. */
static void spread_weight_parts(lowering *lw, mm_plan *P, uint64_t bt, uint32_t l, uint32_t j, uint32_t rows_used,
                                uint32_t parts)
{
    const uint32_t w_bytes = P->w_bytes, part = (w_bytes / parts + 15u) & ~15u;
    for (uint32_t q = 0; q < parts && !lw->failed; q++) {
        const uint32_t holder = lw_mm_slot_of(P, bt, l, q * rows_used / parts, j);
        const uint32_t tile = lw_tile_of(lw, holder);
        const uint32_t p0 = q * part < w_bytes ? q * part : w_bytes;
        const uint32_t p1 = p0 + part < w_bytes ? p0 + part : w_bytes;
        uint32_t *k = &P->kept[((bt * P->gk + l) * P->gn + j) * WEIGHT_PARTS + q], kept = *k;
        if (!kept) {
            kept = p0 < p1 ? lw_tile_alloc(lw, tile, p1 - p0, PREFER_REGION1, 16, P->what) : 0;
            if (!kept)
                continue;
            lw_tile_data(lw, tile, kept, (const uint8_t *)P->packed + p0, p1 - p0, "weights");
            *k = kept;
        }
        lw_add_local_copy(lw, tile, kept, P->bw_addr[holder] + p0, p1 - p0);
        for (uint32_t i = 0; i < rows_used && !lw->failed; i++) {
            const uint32_t to = lw_mm_slot_of(P, bt, l, i, j);
            if (to != holder)
                lw_add_transfer(lw, tile, kept, lw_tile_of(lw, to), P->bw_addr[to] + p0, p1 - p0);
        }
    }
}

/* Constant weights: each (K, column) block's packed weights are kept in up
 * to WEIGHT_PARTS parts on tiles spread down the grid column (loaded with
 * the executable), so that the column's tiles share their memory; in a
 * phase of its own every tile of the column gathers the whole block into
 * scratch, a part it keeps by a local copy and the others from the
 * exchange (each part multicast to the column).  A weight is stored once,
 * as Poplar keeps it, and crosses the exchange once a step; the bound on
 * the parts bounds the receives (steps of the control program) each tile
 * gets. */
static void place_constant_weights(lowering *lw, mm_plan *P)
{
    const mm_shape *s = &P->s;
    const uint32_t w_bytes = P->w_bytes;
    /* (serialised by rows: a part's rows, gathered again each part from the parts kept) */
    const uint64_t m_rows = P->serial > 1 && P->serial_axis == MM_AXIS_M ? P->part : s->m;
    const uint32_t rows_used = (uint32_t)((m_rows + P->mt - 1) / P->mt);
    const bool again = P->part_now > 0;
    uint32_t parts = w_bytes / WEIGHT_PART_MIN_BYTES;
    parts = parts < 1 ? 1 : parts > WEIGHT_PARTS ? WEIGHT_PARTS : parts;
    parts = parts < rows_used ? parts : rows_used;
    for (uint64_t bt = 0; bt < s->batch && !lw->failed; bt++)
        for (uint32_t l = 0; l < P->gk && !lw->failed; l++)
            for (uint32_t j = 0; j < P->gn && j * P->nt < s->n && !lw->failed; j++) {
                for (uint32_t i = 0; i < rows_used && !lw->failed; i++) {
                    const uint32_t slot = lw_mm_slot_of(P, bt, l, i, j), tile = lw_tile_of(lw, slot);
                    /* kept for the run only where one part is the whole block, on row 0 */
                    if (parts > 1 || i > 0)
                        P->bw_addr[slot] = lw_scratch_alloc(lw, tile, w_bytes, NEED_REGION1, 16, P->what);
                    else if (!again)
                        P->bw_addr[slot] = lw_tile_alloc(lw, tile, w_bytes, NEED_REGION1, 16, P->what);
                }
                if (!again)
                    pack_block(&P->kd, P->bfull, P->np, l * P->kt, j * P->nt, P->kt, P->nt, P->block, P->packed);
                if (parts > 1) {
                    spread_weight_parts(lw, P, bt, l, j, rows_used, parts);
                    continue;
                }
                const uint32_t first = lw_mm_slot_of(P, bt, l, 0, j);
                for (uint32_t i = 0; i < rows_used && !lw->failed; i++) {
                    const uint32_t slot = lw_mm_slot_of(P, bt, l, i, j);
                    if (i == 0 && !again)
                        lw_tile_data(lw, lw_tile_of(lw, slot), P->bw_addr[slot], P->packed, w_bytes, "weights");
                    else
                        lw_add_transfer(lw, lw_tile_of(lw, first), P->bw_addr[first], lw_tile_of(lw, slot),
                                        P->bw_addr[slot], w_bytes);
                }
            }
    if (!lw->failed)
        lw_end_phase(lw);
}

static uint32_t cast_on_tile(lowering *lw, mm_plan *P, uint32_t tile, uint32_t in, uint64_t n, bool up,
                             enum region_pref pref);

/* Part (g, blocks [j0, j1)) of block (l, j) of variable weights on grid
 * tile `holder`: its columns 8 g .. 8 g + 7 over those K blocks fetched in
 * runs into *src (scratch; zeros where they pass K or N), and *part, the
 * scratch it is packed into; false when lw failed. */
static bool fetch_weight_part(lowering *lw, mm_plan *P, uint32_t holder, uint32_t l, uint32_t j, uint64_t g,
                              uint64_t j0, uint64_t j1, uint32_t *src, uint32_t *part)
{
    const mm_shape *s = &P->s;
    const uint32_t tile = lw_tile_of(lw, holder), eb = s->b_f32 ? 4 : 2;
    const uint64_t kc = (j1 - j0) * 16, n0 = j * P->nt + g * 8, n1 = n0 + 8 < s->n ? n0 + 8 : s->n;
    const uint64_t k0 = l * P->kt + j0 * 16, kl = l * P->kt + P->kt < s->k ? l * P->kt + P->kt : s->k;
    const uint64_t k1 = k0 + kc < kl ? k0 + kc : kl;
    *src = k1 == k0 + kc && n1 == n0 + 8 ? lw_scratch_alloc(lw, tile, kc * 8 * eb, PREFER_REGION1, 8, P->what)
                                         : lw_scratch_zeroed(lw, tile, kc * 8 * eb, PREFER_REGION1, 8, P->what);
    *part = *src ? lw_scratch_alloc(lw, tile, kc * 8 * 2, PREFER_REGION1, 16, P->what) : 0;
    if (!*part)
        return false;
    if (k0 < k1 && n0 < n1)
        fetch_weight_runs(lw, s, tile, k0, k1, kc, n0, n1, 8, *src, eb);
    return !lw->failed;
}

/* The part packed on its holder: the compute set after the fetch. */
static void pack_part_on_tile(lowering *lw, mm_plan *P, uint32_t tile, uint32_t src, uint32_t part, uint64_t kc)
{
    if (!P->s.b_f32 && !(src = cast_on_tile(lw, P, tile, src, kc * 8, true, PREFER_REGION1)))
        return;
    /* B^T's rows of K (Conv) or B's rows of 8 columns (ConvTranspose), f32 */
    const uint32_t ks = P->s.w_flip ? 32 : 4, ns = P->s.w_flip ? 4 : (uint32_t)kc * 4;
    worker_set ws;
    if (lw_workers_begin(lw, tile, KERNEL_PACK_WORDS, kc / 16, &ws))
        for (int w = 0; w < CODELET_WORKERS; w++)
            kernel_pack_record(ws.rec[w], src + (uint32_t)(ws.lo[w] * 16 * ks), part + (uint32_t)(ws.lo[w] * 256),
                               (uint32_t)(ws.hi[w] - ws.lo[w]), ws.hi[w] > ws.lo[w], ks, ns);
    lw_workers_run(lw, tile, lw->kernels.vtx_pack_b_f16, &ws);
}

/* Variable weights (f16 AMP): each (K, column) block is cut into parts
 * of an output group and at most six K blocks, spread down the grid
 * column; in a phase of their own the holders fetch their parts from the
 * variable's pieces in runs, then pack them (f32, or f16 widened, to the
 * codelet's f16 layout), and in the operands' phase every tile of the
 * column gathers the whole packed block as from constant weights' parts
 * (each part multicast to the column).  The block is packed once a column, not once
 * a tile, and crosses the exchange as f16. */
static void gather_weight_parts(lowering *lw, mm_plan *P)
{
    const mm_shape *s = &P->s;
    const uint32_t rows_used = (uint32_t)((s->m + P->mt - 1) / P->mt);
    const uint64_t groups = P->nt / 8, blocks = P->kt / 16, chunk = (blocks + (blocks + 5) / 6 - 1) / ((blocks + 5) / 6);
    const uint64_t per_group = (blocks + chunk - 1) / chunk, parts = groups * per_group;
    uint32_t *src = calloc(parts * P->gk * P->gn + 1, sizeof *src), *part = calloc(parts * P->gk * P->gn + 1, 4);
    if (!src || !part) {
        free(src);
        free(part);
        lw_fail(lw, "out of host memory");
        return;
    }
    for (int pass = 0; pass < 3 && !lw->failed; pass++) {
        for (uint32_t l = 0, at = 0; l < P->gk && !lw->failed; l++)
            for (uint32_t j = 0; j < P->gn && !lw->failed; j++)
                for (uint64_t q = 0; q < parts && !lw->failed; q++, at++) {
                    if (j * P->nt >= s->n)
                        continue;
                    const uint64_t g = q / per_group, j0 = q % per_group * chunk;
                    const uint64_t j1 = j0 + chunk < blocks ? j0 + chunk : blocks;
                    const uint32_t holder = lw_mm_slot_of(P, 0, l, (uint32_t)(q * rows_used / parts), j);
                    const uint32_t ht = lw_tile_of(lw, holder), off = (uint32_t)((g * blocks + j0) * 256);
                    if (pass == 0) {
                        fetch_weight_part(lw, P, holder, l, j, g, j0, j1, &src[at], &part[at]);
                    } else if (pass == 1) {
                        pack_part_on_tile(lw, P, ht, src[at], part[at], (j1 - j0) * 16);
                    } else {
                        for (uint32_t i = 0; i < rows_used && !lw->failed; i++) {
                            const uint32_t slot = lw_mm_slot_of(P, 0, l, i, j), tile = lw_tile_of(lw, slot);
                            if (q == 0 && !(P->bw_addr[slot] = lw_scratch_alloc(lw, tile, P->w_bytes, NEED_REGION1,
                                                                                 16, P->what)))
                                break;
                            if (slot == holder)
                                lw_add_local_copy(lw, tile, part[at], P->bw_addr[slot] + off, (uint32_t)((j1 - j0) * 256));
                            else
                                lw_add_transfer(lw, ht, part[at], tile, P->bw_addr[slot] + off,
                                                (uint32_t)((j1 - j0) * 256));
                        }
                    }
                }
        if (pass == 0 && !lw->failed)
            lw_end_phase(lw);
    }
    free(src);
    free(part);
}

/* Operands: the tile's rows of A, its block of a run-time B, the bias of
 * its share of the rows. */
static bool fetch_operands(lowering *lw, mm_plan *P, const mm_tile *t)
{
    const mm_shape *s = &P->s;
    if (s->b_act && !P->w_parts && !(P->b_addr[t->slot] = fetch_b_block(lw, s, t->tile, t->bt, t->k0, t->k1, P->kt, t->n0, t->n1,
                                                         P->nt, P->what)))
        return false;
    P->a_addr[t->slot] = fetch_a_block(lw, s, t->tile, t->bt * s->m * s->k, t->m0, t->m1, t->k0, t->k1, P->kt,
                                       P->in_eb, P->what);
    P->bias[t->slot] = fetch_bias(lw, s, t->tile, t->m0 + t->r0, t->m0 + t->r1, t->n0, t->n1, P->what);
    return true;
}

/* n elements (a multiple of 4) cast on the tile into a new scratch
 * buffer: f16 to f32 (up) or f32 to f16; its address, 0 when lw failed. */
static uint32_t cast_on_tile(lowering *lw, mm_plan *P, uint32_t tile, uint32_t in, uint64_t n, bool up,
                             enum region_pref pref)
{
    uint32_t out = lw_scratch_alloc(lw, tile, n * (up ? 4 : 2), pref, 8, P->what);
    if (out)
        lw_mm_cast(lw, tile, in, out, n, up);
    return out;
}

/* Scratch block addr of the slot's product free at once, its last reader
 * made (what the tile takes next may be placed there). */
static void drop_temp(lowering *lw, mm_plan *P, uint32_t slot, uint32_t tile, uint32_t addr)
{
    uint32_t *tp = &P->temps[(size_t)slot * MM_TEMPS];
    for (int i = 0; i < MM_TEMPS; i++)
        tp[i] = tp[i] == addr ? 0 : tp[i];
    lw_scratch_free(lw, tile, addr);
}

/* The tile's rows of A as the codelet takes them: turned (transA; f16
 * widened first, the transposer moving f32) and cast to f16 (an f32 graph
 * on the f16 path) on the tile; 0 when lw failed. */
static uint32_t prepare_a(lowering *lw, mm_plan *P, const mm_tile *t, uint32_t a)
{
    const uint64_t rows = t->m1 - t->m0, kt = P->kt;
    lw_mm_note_temp(P, t->slot, a);
    if (P->s.trans_a) {
        if (!P->s.f32_inputs && !(a = cast_on_tile(lw, P, t->tile, a, kt * rows, true, PREFER_REGION0)))
            return 0;
        lw_mm_note_temp(P, t->slot, a);
        uint32_t at = lw_scratch_alloc(lw, t->tile, rows * kt * 4, PREFER_REGION0, 8, P->what);
        if (!at)
            return 0;
        turn_on_tile(lw, t->tile, a, at, kt, rows);
        drop_temp(lw, P, t->slot, t->tile, a);
        a = at;
        lw_mm_note_temp(P, t->slot, a);
    }
    if ((P->s.f32_inputs || P->s.trans_a) && !P->kd.f32) {
        uint32_t narrow = cast_on_tile(lw, P, t->tile, a, rows * kt, false, PREFER_REGION0);
        if (!narrow)
            return 0;
        drop_temp(lw, P, t->slot, t->tile, a);
        lw_mm_note_temp(P, t->slot, a = narrow);
    }
    return a;
}

/* A run-time B's block received at `src` (scratch), packed on the tile
 * into a new scratch block for the codelet: the output groups shared out
 * among the workers.  B^T is turned first, and the block it was received
 * in is free again once turned (the packed block may take it).  The
 * packed block's address; 0 when there was no room. */
static uint32_t pack_runtime_b(lowering *lw, mm_plan *P, const mm_tile *t, uint32_t src)
{
    const uint64_t kt = P->kt, nt = P->nt;
    if (!P->s.b_f32 && !(src = cast_on_tile(lw, P, t->tile, src, kt * nt, true, PREFER_REGION1)))
        return 0;
    lw_mm_note_temp(P, t->slot, P->b_addr[t->slot]);
    lw_mm_note_temp(P, t->slot, src);
    worker_set ws;
    uint32_t b = 0;
    if (P->kd.f32) {
        if (P->s.b_transposed) {
            uint32_t turned = lw_scratch_alloc(lw, t->tile, kt * nt * 4, PREFER_REGION1, 8, P->what);
            if (!turned)
                return 0;
            turn_on_tile(lw, t->tile, src, turned, nt, kt);
            drop_temp(lw, P, t->slot, t->tile, src);   /* the packed block may take it */
            src = turned;
            lw_mm_note_temp(P, t->slot, src);
        }
        if (!(b = lw_scratch_alloc(lw, t->tile, P->w_bytes, NEED_REGION1, 16, P->what)))
            return 0;
        lw_mm_note_temp(P, t->slot, b);
        if (lw_workers_begin(lw, t->tile, KERNEL_PACK_F32_WORDS, nt / MATMUL_F32_N_GROUP, &ws))
            for (int w = 0; w < CODELET_WORKERS; w++)
                kernel_pack_f32_record(ws.rec[w], src + (uint32_t)(ws.lo[w] * MATMUL_F32_N_GROUP * 4),
                                       b + (uint32_t)(ws.lo[w] * (kt / MATMUL_F32_K_BLOCK) * 512),
                                       (uint32_t)(kt / MATMUL_F32_K_BLOCK), (uint32_t)(ws.hi[w] - ws.lo[w]),
                                       (uint32_t)nt * 4);
        lw_workers_run(lw, t->tile, lw->kernels.vtx_pack_b_f32, &ws);
        return lw->failed ? 0 : b;
    }
    if (!(b = lw_scratch_alloc(lw, t->tile, P->w_bytes, NEED_REGION1, 16, P->what)))
        return 0;
    lw_mm_note_temp(P, t->slot, b);
    uint32_t ks = P->s.b_transposed ? 4 : (uint32_t)nt * 4;
    uint32_t ns = P->s.b_transposed ? (uint32_t)kt * 4 : 4;
    const uint32_t group = P->kd.n_group;      /* 8, or 16 with f16 partials */
    const uint32_t entry = P->kd.f16_partials ? lw->kernels.vtx_pack_b_f16_h16 : lw->kernels.vtx_pack_b_f16;
    const uint64_t groups = nt / group, blocks = kt / 16;
    if (groups < CODELET_WORKERS && blocks > 1) {
        /* Fewer groups than workers (attention's K^T: one group of 16):
         * each group's K blocks shared by 6 / groups workers. */
        uint32_t *rec[CODELET_WORKERS];
        uint32_t off = lw_six_records(lw, t->tile, KERNEL_PACK_WORDS, rec);
        if (lw->failed)
            return 0;
        const uint64_t per_group = CODELET_WORKERS / groups;
        for (uint64_t w = 0; w < CODELET_WORKERS; w++) {
            const uint64_t g = w / per_group, q = w % per_group;
            const uint64_t j0 = g < groups ? blocks * q / per_group : 0, j1 = g < groups ? blocks * (q + 1) / per_group : 0;
            kernel_pack_record(rec[w], src + (uint32_t)(g * group * ns + j0 * 16 * ks),
                               b + (uint32_t)((g * blocks + j0) * group * 32), (uint32_t)(j1 - j0), j1 > j0 ? 1 : 0,
                               ks, ns);
        }
        lw_step_run(lw, t->tile, entry, off, KERNEL_PACK_WORDS);
        return lw->failed ? 0 : b;
    }
    if (lw_workers_begin(lw, t->tile, KERNEL_PACK_WORDS, groups, &ws))
        for (int w = 0; w < CODELET_WORKERS; w++)
            kernel_pack_record(ws.rec[w], src + (uint32_t)(ws.lo[w] * group * ns),
                               b + (uint32_t)(ws.lo[w] * blocks * group * 32), (uint32_t)blocks,
                               (uint32_t)(ws.hi[w] - ws.lo[w]), ks, ns);
    lw_workers_run(lw, t->tile, entry, &ws);
    return lw->failed ? 0 : b;
}

/* Per tile: A turned or cast, a run-time B packed, C, the codelet's call. */
static bool emit_product(lowering *lw, mm_plan *P, const mm_tile *t)
{
    const mm_shape *s = &P->s;
    const mm_kind *kd = &P->kd;
    const uint32_t tile = t->tile, rows = (uint32_t)(t->m1 - t->m0), kt = (uint32_t)P->kt, nt = (uint32_t)P->nt;
    uint32_t a = P->a_addr[t->slot];
    if (!a || !(a = prepare_a(lw, P, t, a)))
        return false;
    const bool pack = s->b_act && !P->w_parts;
    uint32_t b = pack ? pack_runtime_b(lw, P, t, P->b_addr[t->slot]) : P->bw_addr[t->slot];
    /* C in region 1, and in a later 32 KiB block than A when A is there
     * too: the codelets' fast placement (matmul*.h).  C is the output's
     * block itself only where it is the result as it stands (no partials
     * to sum, f32); else scratch, the tile's share of the rows summed or
     * cast into the output's block (finish_share). */
    const bool c_is_out = lw_mm_c_is_output(lw, P);
    const uint32_t c_align = a >= ISA_REGION1_BASE ? 32768 : 8;
    /* a later part of K adds into the block the first part made */
    const bool c_again = P->serial_axis == MM_AXIS_K && P->part_now > 0;
    const uint64_t c_bytes = (uint64_t)rows * nt * kd->c_eb;
    uint32_t c = !b ? 0 : c_again ? P->c_addr[t->slot] : 0;
    /* where no free block holds C so aligned, C anywhere: the codelet's
     * slow loop where it then shares a 32 KiB block with A */
    for (int k = 0; b && !c_again && !c && !lw->failed && k < (c_align != 8 ? 2 : 1); k++) {
        const uint32_t align = k ? 8 : c_align;
        lw->no_room_quiet = align != 8;
        c = c_is_out ? lw_tensor_alloc(lw, s->out, tile, c_bytes, PREFER_REGION1, align, true, P->what)
                     : lw_scratch_zeroed(lw, tile, c_bytes, PREFER_REGION1, align, P->what);
        lw->no_room_quiet = false;
    }
    if (!c)
        return false;
    if (!pack)
        lw_mm_note_temp(P, t->slot, b);             /* the gathered weights, where scratch */
    P->c_addr[t->slot] = c;
    uint32_t *rec;
    if (!kd->f32) {
        /* The work split and the workers' lists made here, as poplibs
         * makes a ConvPartial1x1Out's worklists (matmul.h). */
        uint32_t wl[KERNEL_MATMUL_WL_WORDS];
        const char *why = NULL;
        if (!rows)
            return true;                            /* nothing to compute: C as allocated */
        if (!kernel_matmul_wl_record(wl, a, b, c, rows, kt, nt, kt * 2, nt * kd->c_eb, kd->f16_partials, &why))
            return lw_fail(lw, "%s: tile %u's product: %s", P->what, tile, why);
        uint32_t off = lw_new_record(lw, tile, KERNEL_MATMUL_WL_WORDS, &rec);
        if (!rec)
            return false;
        memcpy(rec, wl, sizeof wl);
        return lw_step_call(lw, tile, lw->kernels.sv_matmul_f16_wl, off);
    }
    uint32_t scratch = lw_scratch_alloc(lw, tile, KERNEL_MATMUL_F32_SCRATCH_BYTES, PREFER_REGION1, 8, P->what);
    if (!scratch)
        return false;
    lw_mm_note_temp(P, t->slot, scratch);
    uint32_t off = lw_new_record(lw, tile, KERNEL_MATMUL_F32_WORDS, &rec);
    if (!rec)
        return false;
    kernel_matmul_f32_record(rec, a, b, c, rows, kt, nt, kt * 4, nt * 4, scratch);
    lw_step_call(lw, tile, lw->kernels.sv_matmul_f32, off);
    return true;
}

/* The Add into a running sum that reads matmul node `index`'s output and
 * nothing else, lowered next (the nodes between it and the matmul
 * folded, in the same section of a pipeline's shared programs), where P
 * is serialised by rows of one batch item and that Add can run over the
 * rows of a part (lw_accumulate_range_ok); -1: none. */
static int accumulating_reader(const lowering *lw, const graph_node *n, int index, const mm_plan *P)
{
    const graph *g = lw->g;
    int out = P->s.out;
    if (n->op != GRAPH_OP_MATMUL || P->serial < 2 || P->serial_axis != MM_AXIS_M || P->s.batch != 1 ||
        P->s.conv || P->s.wgrad || P->s.n % 2 || out < 0 || lw->tensor[out].root != out || g->tensors[out].is_output)
        return -1;
    int j = lw->last_reader[out];
    if (j <= index || j >= g->n_nodes || !lw_accumulate_range_ok(lw, &g->nodes[j]) || g->nodes[j].inputs[1] != out)
        return -1;
    for (int k = index + 1; k < j; k++)
        if (!graph_node_folded(g, &g->nodes[k]))
            return -1;
    /* (in the matmul's shared section, or as outside one as it is) */
    return lw_section_in(lw, index) == lw_section_in(lw, j) ? j : -1;
}

/* Part q's rows of the output added into the running sum (P->acc_node),
 * as the Add's op, then the part's blocks of the output given back (from
 * its mark-th). */
static bool accumulate_part(lowering *lw, mm_plan *P, size_t mark)
{
    const graph_node *a = &lw->g->nodes[P->acc_node];
    int32_t op = lw->cur_op;
    if (P->part_now == 0) {
        if ((P->acc_op = lw_node_op(lw, P->acc_node)) < 0)
            return false;
        lw->early_op[P->acc_node] = P->acc_op;
        lw->rep->accumulated_in_parts++;
    }
    lw->cur_op = P->acc_op;
    lw_sort_pieces(lw, P->s.out);             /* (read by element, lw_fetch) */
    const uint64_t n = P->s.n;
    bool ok = lw_accumulate_range(lw, a, P->acc_node, P->lo[MM_AXIS_M] * n, P->hi[MM_AXIS_M] * n) &&
              lw_release_blocks_from(lw, P->s.out, mark);
    lw->cur_op = op;
    return ok;
}

/* The planned matmul P: weights, operands, products, partial sums and
 * epilogues. */
static bool lower_planned(lowering *lw, mm_plan *P)
{
    if (!plan_buffers(lw, P)) {
        free_plan(P);
        return false;
    }
    if (P->s.w_rows && P->s.kh * P->s.kw != 1 && !lw->tensor[P->s.b_src].permuted) {
        free_plan(P);
        return lw_fail(lw, "internal: the weights '%s' are not kept channels-last", lw_gt(lw, P->s.b_src)->name);
    }
    P->w_parts = P->s.w_rows && !P->kd.f32;
    if (P->w_parts)
        gather_weight_parts(lw, P);
    for (uint32_t q = 0; q < P->serial && !lw->failed; q++) {
        P->part_now = q;
        P->hold = q + 1 < P->serial;
        if (q) {
            /* the next part: the last one's scratch is free (its compute
             * sets run before the exchange that fills the next's) */
            lw_release_scratch(lw);
            memset(P->temps, 0, (size_t)P->per_batch * P->s.batch * MM_TEMPS * sizeof *P->temps);
            const enum mm_axis a = P->serial_axis;
            const uint64_t side = lw_mm_side(&P->s, a);
            P->lo[a] = q * P->part;
            P->hi[a] = P->lo[a] + P->part < side ? P->lo[a] + P->part : side;
        }
        const size_t mark = lw->tensor[P->s.out].n_blocks;
        if (!P->s.b_act)
            place_constant_weights(lw, P);
        for_each_tile(lw, P, fetch_operands);
        if (!lw->failed)
            lw_end_phase(lw);
        for_each_tile(lw, P, emit_product);
        if (P->gk > 1) {
            for_each_tile(lw, P, lw_mm_receive_partials);
            for_each_tile(lw, P, lw_mm_send_partials);
            if (!lw->failed)
                lw_end_phase(lw);
        }
        if (P->serial_axis != MM_AXIS_K || q + 1 == P->serial)
            for_each_tile(lw, P, lw_mm_finish_share);
        if (P->acc_node >= 0 && !lw->failed)
            accumulate_part(lw, P, mark);
    }
    if (P->s.conv || P->s.wgrad) {
        /* The result is kept channels-last: NCHW seen as NHWC (dW
         * [Cout, C, KH, KW] as [Cout, KH, KW, C]); 1 x 1 pixels are the
         * same in either order. */
        lw_keep_channels_last(&lw->tensor[P->s.out], P->s.wgrad ? P->s.kh * P->s.kw != 1 : P->s.oh * P->s.ow != 1);
    }
    free_plan(P);
    return !lw->failed;
}

bool lw_lower_matmul(lowering *lw, const graph_node *n, int index)
{
    mm_plan P;
    memset(&P, 0, sizeof P);
    /* A laid out for this op's plan: the op's tiles are the ones it was
     * laid out on. */
    const ltensor *a = n->n_inputs ? &lw->tensor[n->inputs[0]] : NULL;
    if (a && a->lhs_spread && lw->op_tiles == 0)
        lw->op_base = a->lhs_base;
    if (!plan_matmul(lw, n, index, &P))
        return false;
    P.acc_node = accumulating_reader(lw, n, index, &P);
    if (P.acc_node >= 0) {
        /* the sum placed first where it starts here (lw_place_zeros), not
         * like the output's first part */
        if (!lw_place_zeros(lw, &lw->g->nodes[P.acc_node]))
            return false;
        if (lw->opts->verbose)
            printf("plan: %s: each part's rows added into '%s' as they are made\n", lw_gt(lw, P.s.out)->name,
                   lw_gt(lw, lw->g->nodes[P.acc_node].outputs[0])->name);
    }
    return lower_planned(lw, &P);
}

/* The matmul of a gradient of a convolution (lw_conv_grad); false with
 * why when it is not lowered. */
static bool describe_grad(const lowering *lw, const lw_conv_grad *cg, mm_shape *s, const char **why)
{
    memset(s, 0, sizeof *s);
    s->activation = -1;
    s->batch = 1;
    s->alpha = s->beta = 1.0;
    s->bias = -1;
    s->out = cg->result;
    s->f32_inputs = cg->f32_inputs;
    s->n_img = cg->n_img, s->c_in = cg->c_in, s->h = cg->h, s->w = cg->w;
    s->kh = cg->kh, s->kw = cg->kw, s->sh = cg->sh, s->sw = cg->sw, s->ph = cg->ph, s->pw = cg->pw;
    s->dh = cg->dh, s->dw = cg->dw, s->oh = cg->oh, s->ow = cg->ow;
    if (cg->weights) {
        /* dW [Cout, (kh, kw, c)] = dY^T [Cout, pixels] im2col(X) [pixels, (kh, kw, c)] */
        s->wgrad = s->trans_a = s->b_act = true;
        s->a = cg->other;
        s->b = s->b_src = cg->image;
        s->m = (uint64_t)cg->c_out;
        s->k = (uint64_t)(cg->n_img * cg->oh * cg->ow);
        s->n = (uint64_t)(cg->kh * cg->kw * cg->c_in);
        weights_type(lw->g, s);
        return true;
    }
    s->conv = s->w_flip = true;
    s->a = cg->image;
    s->b = s->b_src = cg->other;
    s->m = (uint64_t)(cg->n_img * cg->oh * cg->ow);
    s->k = (uint64_t)(cg->kh * cg->kw * cg->c_in);
    s->n = (uint64_t)cg->c_out;
    s->b_act = !lw->g->tensors[s->b].data;
    weights_type(lw->g, s);
    if (s->b_act) {
        if (!runtime_weights(lw->g, s, why))
            return false;
        s->b_transposed = !s->w_rows;
    }
    s->bias = cg->bias;
    s->bias_col = cg->bias >= 0;
    return true;
}

bool lw_lower_conv_grad(lowering *lw, const graph_node *n, int index, const lw_conv_grad *cg)
{
    mm_plan P;
    memset(&P, 0, sizeof P);
    P.acc_node = -1;
    const char *why;
    if (!describe_grad(lw, cg, &P.s, &why))
        return lw_unsupported(lw, n, index, why);
    return plan_described(lw, n, index, &P) && lower_planned(lw, &P);
}
