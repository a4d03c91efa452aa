/*
 * lower_matmul.h — what the matmul lowering (lower_matmul.c) and its
 * planner (lower_matmul_plan.c) share: a matmul's shape as the lowering
 * sees it, the codelet that computes it and the grid of tiles it runs on.
 */
#ifndef IPUSIM_FRONTENDS_LOWER_MATMUL_H
#define IPUSIM_FRONTENDS_LOWER_MATMUL_H

#include "lower_internal.h"

typedef struct mm_shape {
    int a, b, bias, out;             /* tensor indices (bias -1 if none) */
    uint64_t m, k, n;
    bool trans_a, trans_b;           /* Gemm's: A given as [K, M], B as [N, K] */
    double alpha, beta;              /* Gemm: alpha A B + beta bias */
    /* The bias seen as [M, N]: element (r, c) at r bias_row + c bias_col. */
    uint64_t bias_row, bias_col;
    int activation;                  /* -1 none, else enum kernel_unary */
    bool f32_inputs;                 /* A (and the result's partials) f32 */
    bool b_f32;                      /* B's elements f32; else f16: B a Cast of an f16 weight
                                        (lw_cast_into_matmul) or an f16 graph's; the AMP's f16
                                        path packs them as they are, the f32 path widens them */
    /* A convolution as a matmul: A's rows are the im2col rows of X kept
     * channels-last (output pixel p: KH x KW runs of C channels), K is
     * ordered (kh, kw, c), B is W [Cout, C, KH, KW] reordered to [K, Cout]. */
    /* B computed at run time (attention, Gemm's inputs, run-time conv
     * weights): per batch item b of `batch`, C_b = A_b B_b; B read from
     * b_src, which is B itself or, when b_transposed, an [.., N, K]
     * tensor: a Transpose of the last two axes made B from it (the
     * Transpose itself is never lowered), or Gemm's transB. */
    bool b_act, b_transposed;
    int b_src;
    uint64_t batch;
    bool conv;
    int64_t n_img, c_in, h, w, kh, kw, sh, sw, ph, pw, oh, ow;
    /* The gradients (lower_conv_grad.c): the image's pixels dh, dw apart
     * with zeros between (a transposed convolution's input; 1 otherwise);
     * the weights [C, Cout, KH, KW] read flipped (ConvTranspose's, w_flip);
     * the weight gradient (wgrad): A is dY [pixels, Cout] taken as [K, M]
     * (trans_a), B the im2col rows of the image b, C = dW kept as
     * [Cout, KH, KW, C]. */
    int64_t dh, dw;
    bool w_flip, wgrad;
    /* Run-time convolution weights read in runs (w_rows): kept as
     * [Cout, KH, KW, C] (lower_layout.c; with one kernel tap, ONNX's order
     * is the same), a Conv's row of K per output channel is B's column
     * (b_transposed), a ConvTranspose's [C, KH, KW, Cout] has B's row
     * (kh, kw, c) read flipped as a run of its columns.  Otherwise an
     * element at a time (small f32 ones only). */
    bool w_rows;
    /* Plan grids that do not split K (a serialised part of K, which adds
     * into the output's block: lower_matmul.c, plan_serial). */
    bool k_whole;
} mm_shape;

/* Which codelet, and its granularity. */
typedef struct mm_kind {
    bool f32;                         /* sv_matmul_f32; else sv_matmul_f16 */
    uint32_t k_block, n_group;        /* K and N rounded up to these */
    uint32_t a_eb, w_eb;              /* bytes of an element of A and of the packed weights */
    bool f16_partials;                /* sv_matmul_f16 summing in f16 (--partials half) */
    uint32_t c_eb;                    /* bytes of a partial sum: 4, or 2 with f16 partials */
} mm_kind;

/* Planner figures (measured on compiled matmuls): what a send costs the
 * sending tile beyond its bytes (the control program's step and the
 * exchange set-up), and what a compute set costs beyond its elements (six
 * records, the workers' set-up). */
#define XCH_SEND_OVERHEAD_CYCLES 20.0
#define PASS_OVERHEAD_CYCLES 600.0

/* The most serial parts a matmul is cut into when no grid fits
 * (lw_mm_plan_serial). */
#define MM_SERIAL_MAX 16u

/* A serialised matmul's cut: its rows, its columns or K. */
enum mm_axis { MM_AXIS_M, MM_AXIS_N, MM_AXIS_K };
typedef struct mm_serial {
    uint32_t parts;                   /* 1: not serialised */
    enum mm_axis axis;
    uint64_t part;                    /* rows, columns or K of a part (the last may have fewer) */
} mm_serial;

/* A grid considered, its estimate and the score it was ranked by. */
typedef struct mm_grid_choice {
    uint32_t gm, gn, gk;
    uint64_t mt, nt, kt;
    double cycles, score;
} mm_grid_choice;

typedef struct mm_grid {
    uint32_t gm, gn, gk;
    uint64_t mt, nt, kt;              /* block rows, columns (whole output groups), K (whole weight blocks) */
    double cycles;                    /* the estimate */
    double score;                     /* what it was ranked by: the estimate, or bytes first */
    mm_grid_choice runner_up;         /* the next best (gm 0: none) */
    bool least_memory;                /* no grid fit every tile's free blocks: the one needing least */
    /* When no grid fits at all (lw_mm_plan_grid false): the one needing
     * the fewest bytes a tile, and those bytes (0: none is possible). */
    uint64_t least_bytes;
    uint32_t least_gm, least_gn, least_gk;
    uint64_t least_mt, least_nt, least_kt;
} mm_grid;


/* The codelet for s: sv_matmul_f32 for f32 operands (unless --f16-matmul),
 * else sv_matmul_f16. */
mm_kind lw_mm_kind(const lowering *lw, const mm_shape *s);
/* The grid with the lowest estimate among those whose blocks fit the free
 * blocks of every tile; where none does, of those whose bytes fit the one
 * that needs least; false when none fits at all. */
bool lw_mm_plan_grid(const lowering *lw, const mm_shape *s, const mm_kind *kd, mm_grid *best);
/* The same with A taken to be spread over each grid row's tiles (a_spread,
 * ltensor.lhs_spread: each tile receives its block from the others, twice
 * as fast where the two tiles of a supertile take the same block) or
 * where it lies now. */
bool lw_mm_plan_grid_as(const lowering *lw, const mm_shape *s, const mm_kind *kd, mm_grid *best, bool a_spread);

/* Where no grid's blocks fit the tiles' free blocks (*grid the one
 * needing least, or none), a serialised plan, as PopART serialises a large
 * matmul (serializeMatMul: a vocabulary's logits and their gradients): of
 * the rows, the columns or K, the cut with the lowest estimate among each
 * one's fewest parts (up to MM_SERIAL_MAX) whose grid fits; the parts are
 * computed one after another on that grid, each part's scratch free again
 * before the next (lower_matmul.c).  *grid becomes a part's grid, its
 * estimate that of all the parts.  For one batch item, not a convolution
 * (every tile's block is then fetched by its place in the product, which
 * the parts shift); constant weights by rows only (packed and kept once,
 * gathered again for each part); K only where the parts can add into the
 * output's block (f32, grids that do not split K again).
 * False, with *grid and *ser as they were, when no number of parts fits. */
bool lw_mm_plan_serial(const lowering *lw, const mm_shape *s, const mm_kind *kd, mm_grid *grid, mm_serial *ser);
/* "does not fit" for node n (false): A itself too big for the tiles'
 * region 0 (its rows stay there, at least M K / tiles of it a tile, K
 * padded to kp), or the bytes of the blocks of the grid needing least
 * (grid), or of the smallest block, against the fullest tile. */
bool lw_mm_fail_no_grid(lowering *lw, const graph_node *n, const mm_shape *s, const mm_kind *kd, uint64_t kp,
                        const mm_grid *grid);
/* The side of the product axis a cuts. */
uint64_t lw_mm_side(const mm_shape *s, enum mm_axis a);


/* ---- a matmul being lowered (lower_matmul.c; its partial sums and
 * epilogue in lower_matmul_sum.c) ---------------------------------------- */

/* The bias this tile's share (rows [r0, r1) of the output, columns
 * [n0, n1)) adds, on the tile: an address and the in1 steps of the add
 * (bytes).  Fetched in the operands' phase. */
typedef struct mm_bias {
    uint32_t addr, row_step, col_step;
} mm_bias;

/* A matmul being lowered: its shape, codelet and grid, and per grid tile
 * (slot: batch item, K share l, grid row i, grid column j) the addresses
 * of its operands and results. */
typedef struct mm_plan {
    mm_shape s;
    mm_kind kd;
    uint32_t gm, gn, gk;
    uint64_t mt, nt, kt;
    uint32_t in_eb;                   /* bytes of an element of A as given */
    uint32_t per_batch;               /* gm gn gk tiles a batch item */
    uint32_t w_bytes;                 /* a block's packed weights */
    uint64_t np;                      /* constant B's columns, padded to gn nt */
    float *bfull;                     /* constant B as f32, (gk kt) x np */
    float *block;                     /* one block of it, kt x nt ... */
    void *packed;                     /* ... packed for the codelet */
    uint32_t *a_addr, *b_addr, *bw_addr, *c_addr, *recv;
    uint32_t *kept;                   /* constant weights' parts kept, WEIGHT_PARTS per (item, K share,
                                         column), 0: none yet (later serial parts gather them again) */
    /* per slot, MM_TEMPS scratch blocks only the product reads (A as
     * fetched, turned and cast; B as received, cast, turned and packed;
     * the codelet's scratch): free again once it has run */
    uint32_t *temps;
    bool w_parts;                     /* variable weights packed in parts (gather_weight_parts) */
    /* Serialised (PopART's serialised matmul): where no grid's blocks fit
     * the tiles, the output's rows or columns, or K, are cut into `serial`
     * parts of `part`, computed one after another on the same grid, each
     * part's scratch free again before the next.  The grid computes
     * [lo[a], hi[a]) of each axis a (MM_AXIS_*: rows, columns, K; all of
     * them when not serialised).  Parts of K add into the output's block
     * (the codelet's C += A B), the epilogue after the last. */
    uint32_t serial, part_now;
    /* a later part follows: the part's product blocks are held to its end
     * (lw_mm_free_temps gives nothing back), so that the blocks of its sum
     * and epilogue leave the next part the room this one had */
    bool hold;
    enum mm_axis serial_axis;
    uint64_t part, lo[3], hi[3];
    /* Serialised by rows, its output read only by the Add into a running
     * sum over the micro-batches that follows it (graph_node.accumulates;
     * poplin's matMulAcc): that node (-1: none), each part's rows added
     * into the sum as they are made and their blocks given back, so the
     * output is never whole on the tiles; the Add's op in the op map. */
    int acc_node;
    int32_t acc_op;
    mm_bias *bias;
    char what[160];
} mm_plan;

/* One tile of the grid and its block: rows [m0, m1), K [k0, k1), columns
 * [n0, n1), and its share [r0, r1) of the block's rows for the sum of the
 * partials and the epilogue. */
typedef struct mm_tile {
    uint64_t bt;
    uint32_t l, i, j, slot, tile;
    uint64_t m0, m1, k0, k1, n0, n1, r0, r1;
} mm_tile;

enum { MM_TEMPS = 8 };

/* Scratch block addr (0: none) of the slot's product, freed after it. */
static inline void lw_mm_note_temp(mm_plan *P, uint32_t slot, uint32_t addr)
{
    uint32_t *tp = &P->temps[(size_t)slot * MM_TEMPS];
    for (int i = 0; i < MM_TEMPS && addr; i++)
        if (!tp[i] || tp[i] == addr) {
            tp[i] = addr;
            return;
        }
}

static inline uint32_t lw_mm_slot_of(const mm_plan *P, uint64_t bt, uint32_t l, uint32_t i, uint32_t j)
{
    return (uint32_t)(bt * P->per_batch) + (l * P->gm + i) * P->gn + j;
}

/* The product's scratch on the slot's tile given back (its compute sets
 * are made), C and the bias kept. */
static inline void lw_mm_give_back_temps(lowering *lw, mm_plan *P, const mm_tile *t)
{
    uint32_t *tp = &P->temps[(size_t)t->slot * MM_TEMPS];
    for (int i = 0; i < MM_TEMPS; i++) {
        if (tp[i] && tp[i] != P->c_addr[t->slot] && tp[i] != P->bias[t->slot].addr)
            lw_scratch_free(lw, t->tile, tp[i]);
        tp[i] = 0;
    }
}

/* The product's scratch free again for the sum of the partials and the
 * epilogue, unless a later serial part follows (P->hold: the part's end
 * gives it back). */
static inline void lw_mm_free_temps(lowering *lw, mm_plan *P, const mm_tile *t)
{
    if (!P->hold)
        lw_mm_give_back_temps(lw, P, t);
}

/* K split: every tile's buffer for the partials of its share of the rows
 * (lw_mm_receive_partials), then each tile's partials of the other
 * shares' rows sent to them (lw_mm_send_partials); then its share's sum
 * and epilogue (lw_mm_finish_share).  Steps of for_each_tile: false ends
 * a grid row. */
bool lw_mm_receive_partials(lowering *lw, mm_plan *P, const mm_tile *t);
bool lw_mm_send_partials(lowering *lw, mm_plan *P, const mm_tile *t);
/* The rows [*r0, *r1) of a block of `rows` that K share `share` of gk sums. */
void lw_mm_reduce_share(uint64_t rows, uint32_t gk, uint32_t share, uint64_t *r0, uint64_t *r1);
/* n elements (a multiple of 4; the f16 partials' rows are whole groups of
 * 16) cast on the tile from in to out: f16 to f32 (up, exact) or f32 to
 * f16 (vtx_cast_*). */
void lw_mm_cast(lowering *lw, uint32_t tile, uint32_t in, uint32_t out, uint64_t n, bool up);
/* Whether a tile's C block is the output's block as it stands (no K
 * split; f32 partials for an f32 output, f16 partials for an f16 output
 * with no epilogue to compute). */
bool lw_mm_c_is_output(const lowering *lw, const mm_plan *P);
bool lw_mm_finish_share(lowering *lw, mm_plan *P, const mm_tile *t);

#endif
