/*
 * rowwise.h — the row-wise codelets of the kernel library
 * (workloads/codelets/rowwise.S): their vertex record layouts and their
 * bit-exact C models (workloads/codelets/rowwise_model.c).
 *
 * Every record is 32-bit words at word offsets <NAME>_V_* (the same
 * numbers as the .equ in rowwise.S); pointers are tile addresses, 8-byte
 * aligned (abi.h).  A record whose row (or index) count is 0 does nothing.
 *
 * Conditions on every record, beyond abi.h:
 *   - row steps (in bytes) are multiples of 8, so every row of f32 starts
 *     8-byte aligned and is read and written in 64-bit pairs; a tensor of
 *     odd width is laid out with its rows padded to an even width (the
 *     padding is read, never written);
 *   - reduce, softmax and layer norm take cols >= 1 and at most
 *     ROWWISE_MAX_COLS (one rpt block of pairs, ISA2 rpt: 4095 at most);
 *   - gather copies rows of at most ROWWISE_MAX_ROW_BYTES bytes; transpose
 *     takes at most ROWWISE_MAX_TRANSPOSE_COLS input columns.
 *
 * Arithmetic (all f32, $FP_CTL = 0: round to nearest even, denormal
 * operands and results flushed to ±0, NaN results the tile's fixed quiet
 * NaN; see isa/fparith.h).  The models perform the codelets' operations in
 * the codelets' order with the same primitives, so their results equal the
 * simulated codelets' bit for bit.  Lanes: a row is read in pairs
 * (x[2k], x[2k+1]); a sum (f32v2acc, or f32v2mac for squares) keeps lane 0
 * for even columns and lane 1 for odd ones, each summed in increasing
 * column order from +0 (accumulators are cleared); an odd last column is
 * added to lane 0 last (with +0 into lane 1, which changes nothing); the
 * result is lane 0 + lane 1 (one f32 rounding).  A max (f32v2max) starts
 * both lanes at x[0], takes max(lane 0, lane 1), then the odd last column.
 *
 * Reads past the data: every row is read up to 8 bytes past its last
 * column (softmax also reads its output rows so), within the slack abi.h
 * leaves after every tensor; nothing read there reaches the arithmetic.
 */
#ifndef IPUSIM_CODELETS_ROWWISE_H
#define IPUSIM_CODELETS_ROWWISE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ROWWISE_MAX_COLS 8191u                 /* 4095 pairs and an odd last column */
#define ROWWISE_MAX_ROW_BYTES (4095u * 8u)     /* gather: 4095 64-bit pairs */
#define ROWWISE_MAX_TRANSPOSE_COLS 4095u

/* trap codes (the simulated fault "trap N", ISA2 trap) */
#define ROWWISE_TRAP_BAD_OP 0x52u              /* reduce: unknown op */
#define ROWWISE_TRAP_GATHER_INDEX 0x47u        /* gather: index out of range */
#define ROWWISE_TRAP_PARTIALS_COLS 0x50u       /* reduce partials: cols not a multiple of 8 */

/* ---- vtx_reduce_rows_f32: out[r] = REDUCE_c in[r][c] ------------------- */
enum reduce_rows_vertex {
    REDUCE_ROWS_V_IN = 0,       /* in: rows x cols f32, rows in_step bytes apart */
    REDUCE_ROWS_V_OUT = 1,      /* out: rows f32, contiguous */
    REDUCE_ROWS_V_ROWS = 2,
    REDUCE_ROWS_V_COLS = 3,
    REDUCE_ROWS_V_IN_STEP = 4,  /* bytes from one input row to the next */
    REDUCE_ROWS_V_OP = 5,       /* enum reduce_op */
    REDUCE_ROWS_V_SCALE = 6,    /* f32 bits: mean multiplies the sum by it (1/cols) */
    REDUCE_ROWS_V_WORDS = 7,
};

enum reduce_op {
    REDUCE_OP_SUM = 0,          /* lanes of f32v2acc */
    REDUCE_OP_MAX = 1,          /* lanes of f32v2max, both started at x[0] */
    REDUCE_OP_SUMSQ = 2,        /* lanes of f32v2mac (x·x rounded, then added) */
    REDUCE_OP_MEAN = 3,         /* the sum, then one f32mul by scale */
    REDUCE_OP_MIN = 4,          /* lanes of f32v2min, both started at x[0] */
    REDUCE_OP_PROD = 5,         /* lanes of f32v2mul, both started at 1.0 */
    REDUCE_OP_ABS_SUM = 6,      /* lanes of f32v2acc over |x| (ONNX ReduceL1) */
};

/* ---- vtx_reduce_cols_f32: out[c] = REDUCE_r in[r][c] --------------------- *
 * Every reduce_op.  Each column is folded in row order: acc = t(x[0][c]) (a
 * register copy: with one row the input's bits come out), then
 * acc = op(acc, t(x[r][c])) for r = 1 .. rows - 1, where t is x itself (x*x
 * rounded for SUMSQ, |x| for ABS_SUM) and op is f32add (SUM, MEAN, SUMSQ,
 * ABS_SUM), f32max, f32min or f32mul; MEAN then multiplies by SCALE.  No
 * lanes: a column's result does not depend on the path that computed it.
 * Conditions: in, in_step 4-byte aligned (any row start), out 4-byte
 * aligned; rows <= REDUCE_COLS_MAX_ROWS.  A record with rows = 0 or
 * cols = 0 writes nothing.
 * Fast path (0.58 tile cycles an element, see rowwise.S): in, in_step and,
 * for f32 output, out multiples of 8, cols >= 12, op SUM, MEAN, MAX, MIN or
 * PROD; the other columns of a record (cols mod 12) and every other case
 * take 1.5 cycles an element.  Reads exactly the elements reduced. */
enum reduce_cols_vertex {
    REDUCE_COLS_V_IN = 0,       /* in: rows x cols f32, rows in_step bytes apart */
    REDUCE_COLS_V_OUT = 1,      /* out: cols f32, or cols f16 (OUT_F16) */
    REDUCE_COLS_V_ROWS = 2,
    REDUCE_COLS_V_COLS = 3,
    REDUCE_COLS_V_IN_STEP = 4,  /* bytes from one input row to the next, a multiple of 4 */
    REDUCE_COLS_V_OP = 5,       /* enum reduce_op */
    REDUCE_COLS_V_SCALE = 6,    /* f32 bits: MEAN multiplies by it (1/rows) */
    REDUCE_COLS_V_OUT_F16 = 7,  /* 0: f32 out; 1: f16 out, round to nearest even
                                   (f32tof16), an odd cols' last word padded with a
                                   copy of the last element (as vtx_cast_f32_to_f16) */
    REDUCE_COLS_V_WORDS = 8,
};
#define REDUCE_COLS_MAX_ROWS 4096u             /* rows - 1 is one rpt count */

/* vtx_reduce_cols_f32_split: the record of vtx_reduce_cols_f32, then CHUNK
 * (even): one record for the six workers (the compute set's vertex step
 * 0), worker w ($WSR) folding columns [w CHUNK, (w + 1) CHUNK) cut at COLS,
 * as PopLibs' supervisor vertices split a region; 17 issue slots more than
 * the plain codelet's start (10 for a worker left with no column). */
enum reduce_cols_split_vertex {
    REDUCE_COLS_SPLIT_V_CHUNK = REDUCE_COLS_V_WORDS,
    REDUCE_COLS_SPLIT_V_WORDS
};

/* ---- vtx_reduce_partials_f16: out[c] = sum_r p[r][c] ----------------------- *
 * The sum of ROWS rows of f16 partial sums, as poplin's ReduceAdd sums
 * half partials: row 0 at FIRST, row r >= 1 at REST + (r - 1) STEP (a
 * tile's own partials and those the others sent it need not be side by
 * side).  Each column is summed in f32 in row order from +0: acc = +0,
 * then acc = f32add(widen(p[r][c]), acc), where widen is exact and turns an
 * f16 infinity into the quiet NaN (f16v8acc's arithmetic operand, ISA2
 * §2.9.4.2); then stored as f32 or rounded to f16 (f32v2tof16: to nearest
 * even, or stochastically with $FP_CTL.ESR).  The model is
 * rowwise_model_reduce_partials.
 * Conditions: FIRST, REST, OUT and STEP multiples of 8; COLS a multiple of
 * 8 (else the worker stops with trap ROWWISE_TRAP_PARTIALS_COLS); ROWS <=
 * REDUCE_PARTIALS_MAX_ROWS.  Reads exactly the partials summed.
 * Worker cycles before the exitz: set-up 23 with f32 out, 24 with f16;
 * where the rows cannot be paced (REST below region 1: 18 / 19; STEP of
 * 4096 or more: 20 / 21); then per group of 8 columns 11 + R (f32 out) or
 * 13 + R (f16) paced, 8 + 3 R or 11 + 3 R not; ROWS = 0 takes 3, COLS = 0
 * 4.  Paced, 8 columns of R = 4 rows with f16 out take 17 issues: 2.1 tile
 * cycles a column with six workers (poplin's ReduceAdd: 3 issues a row). */
enum reduce_partials_vertex {
    RED_PARTIALS_V_FIRST = 0,   /* row 0: COLS f16 */
    RED_PARTIALS_V_REST = 1,    /* rows 1 .. ROWS - 1, STEP bytes apart */
    RED_PARTIALS_V_OUT = 2,     /* COLS f32, or COLS f16 (OUT_F16) */
    RED_PARTIALS_V_ROWS = 3,
    RED_PARTIALS_V_COLS = 4,
    RED_PARTIALS_V_STEP = 5,
    RED_PARTIALS_V_OUT_F16 = 6,
    RED_PARTIALS_V_WORDS = 7,
};
#define REDUCE_PARTIALS_MAX_ROWS 4096u         /* rows - 1 is one rpt count */

/* ---- vtx_softmax_rows_f32: out[r] = softmax(in[r]); in place allowed ---- */
enum softmax_rows_vertex {
    SOFTMAX_ROWS_V_IN = 0,
    SOFTMAX_ROWS_V_OUT = 1,     /* may equal in */
    SOFTMAX_ROWS_V_ROWS = 2,
    SOFTMAX_ROWS_V_COLS = 3,
    SOFTMAX_ROWS_V_STEP = 4,    /* bytes between rows, in and out alike */
    SOFTMAX_ROWS_V_WORDS = 5,
};

/* ---- vtx_layernorm_rows_f32: in place allowed ---------------------------
 * MEAN_OUT and INV_STD_OUT (ONNX LayerNormalization's 2nd and 3rd outputs)
 * receive the mean and rstd the row was normalized with, as f32, at
 * [r]; 0 writes nothing (4-byte aligned is enough). */
enum layernorm_rows_vertex {
    LAYERNORM_ROWS_V_IN = 0,
    LAYERNORM_ROWS_V_OUT = 1,   /* may equal in */
    LAYERNORM_ROWS_V_GAMMA = 2, /* cols f32 */
    LAYERNORM_ROWS_V_BETA = 3,  /* cols f32 */
    LAYERNORM_ROWS_V_ROWS = 4,
    LAYERNORM_ROWS_V_COLS = 5,
    LAYERNORM_ROWS_V_STEP = 6,  /* bytes between rows, in and out alike */
    LAYERNORM_ROWS_V_EPS = 7,   /* f32 bits */
    LAYERNORM_ROWS_V_MEAN_OUT = 8,     /* 0, or rows f32: each row's mean */
    LAYERNORM_ROWS_V_INV_STD_OUT = 9,  /* 0, or rows f32: each row's rstd */
    LAYERNORM_ROWS_V_WORDS = 10,
};

/* ---- vtx_layernorm_part{1,2,3}_f32: a row's columns shared by workers ---
 * vtx_layernorm_rows_f32's result where a tile holds fewer rows than it has
 * workers: each of the six records names one worker's columns of every row
 * (IN, OUT, GAMMA, BETA at its first column, PAIRS of them), and the same
 * records run as three compute sets, one after another: part 1 writes the
 * worker's sum of its columns of each row to STATS[12 r + SLOT]; part 2
 * reads the six, adds them in slot order and divides by COLS (the mean),
 * and writes its sum of (x - mean)^2 to STATS[12 r + 6 + SLOT]; part 3
 * works the mean out again, adds the six squares in slot order, divides by
 * COLS, rstd = f32oorx(var + eps), and writes out = ((x - mean) * rstd) *
 * gamma + beta for its columns (the record naming MEAN_OUT / INV_STD_OUT
 * also stores the row's mean and rstd at [r]).  Each worker's sums are
 * lanes as in vtx_layernorm_rows_f32 (even and odd columns, f32v2acc /
 * f32v2mac), so the sums differ from the whole-row codelet's only in their
 * order; the model is rowwise_model_layernorm_parts.
 * Conditions: PAIRS >= 1 in every record (a row of at least 12 columns);
 * the worker's first column even; STATS 8-byte aligned, 48 bytes a row.
 * Worker cycles before the exitz: 10, 10 and 14 to start, then a row of P
 * pairs 7 + P (part 1), 15 + 2 P (part 2), 36 + 4 P (part 3; + 7 with
 * MEAN_OUT or INV_STD_OUT, + 8 with both). */
enum layernorm_part_vertex {
    LAYERNORM_PART_V_IN = 0,
    LAYERNORM_PART_V_OUT = 1,          /* may equal in */
    LAYERNORM_PART_V_GAMMA = 2,
    LAYERNORM_PART_V_BETA = 3,
    LAYERNORM_PART_V_ROWS = 4,
    LAYERNORM_PART_V_PAIRS = 5,        /* the worker's columns / 2 */
    LAYERNORM_PART_V_STEP = 6,         /* bytes between rows, in and out alike */
    LAYERNORM_PART_V_EPS = 7,          /* f32 bits */
    LAYERNORM_PART_V_STATS = 8,        /* rows x 12 f32 the six workers share */
    LAYERNORM_PART_V_SLOT = 9,         /* 0..5: the worker's place in STATS */
    LAYERNORM_PART_V_COLS = 10,        /* the whole row's columns */
    LAYERNORM_PART_V_MEAN_OUT = 11,    /* 0, or rows f32 */
    LAYERNORM_PART_V_INV_STD_OUT = 12, /* 0, or rows f32 */
    LAYERNORM_PART_V_WORDS = 13,
};
#define ROWWISE_PART_STATS_BYTES 48u   /* a row of STATS: six slots, then six more (both part codelets) */

/* ---- vtx_softmax_part{1,2,3}_f32: a row's columns shared by workers ----
 * vtx_softmax_rows_f32's result with each of the six records naming one
 * worker's columns (IN, OUT at its first, PAIRS of them), the same records
 * run as three compute sets: part 1 writes the worker's max of its columns
 * of each row to STATS[12 r + SLOT] (lanes started at its first column);
 * part 2 takes the max of the six in slot order (f32max), writes e =
 * f32exp(x - max) to OUT over its columns and their lanes' sum to
 * STATS[12 r + 6 + SLOT]; part 3 adds the six sums in slot order, r =
 * f32oox(sum), and writes e * r over its columns.  The max is the whole
 * row's, so the values differ from vtx_softmax_rows_f32's only in the
 * order of the sum; the model is rowwise_model_softmax_parts.  Conditions
 * as the layer norm parts' (PAIRS >= 1; OUT may equal IN).
 * Worker cycles before the exitz: 11 to start, then a row of P pairs 8 + P
 * (part 1), 14 + 8 P (part 2: f32exp takes 3 issue slots), 15 + 2 P (part
 * 3; f32oox 3). */
enum softmax_part_vertex {
    SOFTMAX_PART_V_IN = 0,
    SOFTMAX_PART_V_OUT = 1,
    SOFTMAX_PART_V_ROWS = 2,
    SOFTMAX_PART_V_PAIRS = 3,
    SOFTMAX_PART_V_STEP = 4,
    SOFTMAX_PART_V_STATS = 5,          /* rows x 12 f32 the six workers share */
    SOFTMAX_PART_V_SLOT = 6,
    SOFTMAX_PART_V_WORDS = 7,
};

/* ---- vtx_gather_rows: out row i = table row idx[i] ----------------------- */
enum gather_rows_vertex {
    GATHER_ROWS_V_TABLE = 0,    /* table_rows rows of row_bytes */
    GATHER_ROWS_V_IDX = 1,      /* n i32 (4-byte aligned is enough) */
    GATHER_ROWS_V_OUT = 2,      /* n rows of row_bytes, contiguous */
    GATHER_ROWS_V_N = 3,
    GATHER_ROWS_V_ROW_BYTES = 4,   /* a multiple of 4, >= 4 */
    GATHER_ROWS_V_TABLE_ROWS = 5,
    GATHER_ROWS_V_WORDS = 6,
};

/* ---- vtx_transpose_f32: out[c][r] = in[r][c] ------------------------------ */
enum transpose_vertex {
    TRANSPOSE_V_IN = 0,
    TRANSPOSE_V_OUT = 1,        /* must not overlap in */
    TRANSPOSE_V_ROWS = 2,
    TRANSPOSE_V_COLS = 3,
    TRANSPOSE_V_IN_STEP = 4,    /* bytes between input rows (multiple of 4) */
    TRANSPOSE_V_OUT_STEP = 5,   /* bytes between output rows (multiple of 4) */
    TRANSPOSE_V_WORDS = 6,
};

/* ---- bit-exact models ------------------------------------------------------
 * Rows are `step` floats apart (the record's step in bytes / 4). */

/* out[r] for r < rows; scale is used by REDUCE_OP_MEAN only. */
void rowwise_model_reduce(const float *in, float *out, size_t rows, size_t cols, size_t step,
                          enum reduce_op op, float scale);

/* Column reduce: out[c] for c < cols (rowwise.h, vtx_reduce_cols_f32);
 * out_f16 (may be NULL when !f16) gets the f16 bits, with an odd cols' last
 * word's upper half (out_f16[cols]) a copy of the last element. */
void rowwise_model_reduce_cols(const float *in, float *out, uint16_t *out_f16, bool f16, size_t rows,
                               size_t cols, size_t step, enum reduce_op op, float scale);

/* The sums of vtx_reduce_partials_f16 (round to nearest even): first and
 * rest as the record has them, step in f16 elements; out (f32) and out_f16
 * (f16 bits) may each be NULL. */
void rowwise_model_reduce_partials(const uint16_t *first, const uint16_t *rest, size_t rows, size_t cols,
                                   size_t step, float *out, uint16_t *out_f16);

/* One row: m = max (lanes started at x[0]); e = exp(x - m) stored; s = the
 * lanes' sum of e; r = f32oox(s) (the reciprocal, rounded once); out = e * r.
 * in == out allowed. */
void rowwise_model_softmax(const float *in, float *out, size_t rows, size_t cols, size_t step);

/* One row: mean = sum / cols (f32div, cols converted exactly);
 * var = (lanes' sum of fl(fl(x - mean)^2)) / cols; rstd = f32oorx(var + eps);
 * out = ((x - mean) * rstd) * gamma + beta, each operation rounded.
 * in == out allowed. */
void rowwise_model_layernorm(const float *in, float *out, const float *gamma, const float *beta,
                             size_t rows, size_t cols, size_t step, float eps);
/* The same, with each row's mean and rstd to mean_out[r] and rstd_out[r]
 * when they are not NULL. */
void rowwise_model_layernorm_stats(const float *in, float *out, const float *gamma, const float *beta,
                                   size_t rows, size_t cols, size_t step, float eps, float *mean_out,
                                   float *rstd_out);

/* Layer norm with each row's columns shared by six workers, worker w
 * taking columns [bounds[w], bounds[w + 1]) (vtx_layernorm_part*_f32):
 * mean_out and rstd_out may be NULL. */
void rowwise_model_layernorm_parts(const float *in, float *out, const float *gamma, const float *beta,
                                   size_t rows, size_t cols, size_t step, const size_t bounds[7], float eps,
                                   float *mean_out, float *rstd_out);

/* Softmax with each row's columns shared by six workers, worker w taking
 * columns [bounds[w], bounds[w + 1]) (vtx_softmax_part*_f32). */
void rowwise_model_softmax_parts(const float *in, float *out, size_t rows, size_t cols, size_t step,
                                 const size_t bounds[7]);

/* Gather as the codelet does it: returns the position of the first index
 * out of [-table_rows, table_rows) (the codelet traps there, having copied
 * the rows before it), or n when every index is valid. */
size_t rowwise_model_gather(const void *table, const int32_t *idx, void *out, size_t n,
                            size_t row_bytes, size_t table_rows);

/* out[c * out_step + r] = in[r * in_step + c]: the bits are copied. */
void rowwise_model_transpose(const float *in, float *out, size_t rows, size_t cols, size_t in_step,
                             size_t out_step);

#endif
