// rowwise.S — row-wise f32 codelets of the kernel library (worker vertices,
// calling convention in workloads/codelets/abi.h; record layouts and the
// bit-exact C models in workloads/codelets/rowwise.h, rowwise_model.c):
//
//   vtx_reduce_rows_f32     out[r] = sum / max / min / product / sum of squares /
//                           sum of |x| / mean of in[r][*]
//   vtx_reduce_cols_f32     out[c] = the same reductions of in[*][c] (f32 or f16 out)
//   vtx_reduce_partials_f16 out[c] = the f32 sum of rows of f16 partials (f32 or f16 out)
//   vtx_softmax_rows_f32    out[r] = softmax(in[r])           (in place allowed)
//   vtx_layernorm_rows_f32  out[r] = (in[r] - mean) * rstd * gamma + beta
//                           (in place allowed; mean, rstd optionally stored)
//   vtx_layernorm_part{1,2,3}_f32  the same with a row's columns shared by the
//                           six workers: three compute sets (sums, squares, out)
//   vtx_softmax_part{1,2,3}_f32    softmax so (maxima, exponentials and sums, out)
//   vtx_gather_rows         out row i = table row idx[i]
//   vtx_transpose_f32       out[c][r] = in[r][c]
//
// Each worker gets one record: a block of rows.  Rows are read in 64-bit
// pairs with ld64step; the loads run one pair ahead of the arithmetic (the
// aux half of a bundle reads a pair while the main half loads the next,
// ISA2 §2.5: the main half's ARF result is written after the aux half has
// read its operands), so every row is read up to 8 bytes past its last
// column (in the row padding, the next row, or the tensor's slack, abi.h).
// Only single-access loads and stores are used: no placement can raise a
// memory conflict.  Row steps must be multiples of 8 (rowwise.h).
//
// Order of operations (the models follow it; see rowwise.h):
//   sum, sum of squares, mean: lanes (even, odd columns) accumulated in
//     $AACC with f32v2acc / f32v2mac (x*x rounded, then added); the odd last
//     column joins lane 0 last; read out with f32v2gina (which also leaves
//     $AACC[0,2] zero for the next row), then lane 0 + lane 1; mean then
//     multiplies by the record's scale (f32mul, no division).
//   max, min: lanes started at x[0] (f32v2max / f32v2min over the pairs),
//     max(lane 0, lane 1), then max with the odd last column.
//   product: lanes from 1.0 (f32v2mul), the odd last column into lane 0,
//     then lane 0 * lane 1.  Sum of |x|: f32v2abs, then the sum's lanes.
//   column reduce: no lanes; each column folded in row order from its row-0
//     value (rowwise.h).  Columns 12 at a time in $a2..$a13 over all rows
//     (the block path: one rpt pass a row of 6 ld64step + 6 pair ops + 1
//     pointer add, single-access loads only), else one column at a time
//     with word loads (any 4-byte alignment; SUMSQ and ABS_SUM always).
//   softmax: m = the max as above; e = f32exp(x - m) stored to out, summed
//     in lanes; r = f32oox(lane 0 + lane 1) (one reciprocal per row, ISA2
//     f32oox); out = e * r (a multiply, not a division).  x - m <= 0, so
//     exp never overflows, whatever the magnitudes.
//   layer norm: mean = (lanes' sum) / cols (f32div); var = (lanes' sum of
//     (x - mean)^2) / cols, the biased variance of ONNX
//     LayerNormalization, computed in a second pass over the row (not as
//     E[x^2] - mean^2, which cancels); rstd = f32oorx(var + eps);
//     out = ((x - mean) * rstd) * gamma + beta.
//   gather: an index k < 0 is taken as k + table_rows (ONNX Gather); one
//     still outside [0, table_rows) stops the worker with `trap 0x47`
//     (ROWWISE_TRAP_GATHER_INDEX), a simulated fault naming tile, worker and
//     pc, before anything outside the table is read.  Rows are copied in
//     64-bit pairs when the row bytes are a multiple of 8, else in words.
//   transpose: word copies (ld32step, st32, add): 3 issues per element.
//
// Timing (one worker issue every 6 tile cycles; f32exp, f32oox and f32div
// take 3 worker cycles, f32oorx 4, ISA2 Table 4.1).  Worker cycles per row
// with P = cols / 2 pairs and o = cols % 2 (tests/test_codelets_rowwise.c
// counts every issue):
//   reduce sum/sumsq  7 + P + o      mean 8 + P + o      max 8 + P + o
//   softmax           20 + 11 P + 9 o     (pass 2: 8 per pair, exp-bound)
//   reduce min        8 + P + o       prod 7 + P + o      abs sum 7 + 2 P + 2 o
//   layer norm        26 + 7 P + 8 o + (P > 0), + 10 with MEAN_OUT/INV_STD_OUT
//   reduce cols, R rows, per block of 12 columns: 19 + 7 (R - 1) (f16 out
//     21, mean + 8); per column taken alone: 7 + 3 (R - 1) (mean + 1,
//     f16: +2 to +4)
//   reduce partials, R rows, per group of 8 columns: 13 + R with f16 out,
//     11 + R with f32 out (one pace load a row after the first); 11 + 3 R
//     and 8 + 3 R where the rows cannot be paced (rowwise.h)
//   softmax parts, per row of a worker's P pairs: 8 + P (maxima),
//     14 + 8 P (exponentials), 15 + 2 P (out)
//   layer norm parts, per row of a worker's P pairs: 7 + P (sums),
//     15 + 2 P (squares), 36 + 4 P (out; + 7 or 8 with MEAN_OUT/INV_STD_OUT)
//   gather            10 + 2 (row bytes / 8), or 10 + 2 (row bytes / 4)
//   transpose         6 + 3 cols
// Six workers issue one bundle a tile cycle between them, so worker cycles
// per element are tile cycles per element.  Measured on one GC200 tile, six
// workers of 16 rows of BERT-Base's width (tests/test_codelets_rowwise.c;
// 6 x 64 rows of 768 f32 would not fit in one tile's memory):
//
//   codelet        rows x cols     tile cycles    cycles/element
//   softmax         96 x 768          407,508         5.527   (f32exp: 3 of 5.5)
//   layer norm      96 x 768          260,766         3.537
//   reduce sum      96 x 768           37,626         0.510
//   reduce max      96 x 768           37,734         0.512
//   reduce cols sum  8 x 1152           6,678         0.725   (block path; 7/12 =
//                                                              0.583 as R grows)
//   reduce cols sum  8 x 1152, 4-byte  32,400         3.516   (one column at a
//                    aligned                                   time; (3 R + 4) / R)
//   reduce cols mean 8 x 1152, f16 out  7,650         0.830
//   gather          96 x 3072 B        74,772         1.014   (per 4-byte word)

    .equ RW_FP_CLR_ZAACC, 1 << 3          // $FP_CLR: zero $AACC (ISA2 §2.7.5.2.13)

    .equ REDUCE_ROWS_V_IN, 0
    .equ REDUCE_ROWS_V_OUT, 1
    .equ REDUCE_ROWS_V_ROWS, 2
    .equ REDUCE_ROWS_V_COLS, 3
    .equ REDUCE_ROWS_V_IN_STEP, 4
    .equ REDUCE_ROWS_V_OP, 5
    .equ REDUCE_ROWS_V_SCALE, 6
    .equ REDUCE_OP_SUM, 0
    .equ REDUCE_OP_MAX, 1
    .equ REDUCE_OP_SUMSQ, 2
    .equ REDUCE_OP_MEAN, 3
    .equ REDUCE_OP_MIN, 4
    .equ REDUCE_OP_PROD, 5
    .equ REDUCE_OP_ABS_SUM, 6

    .equ REDUCE_COLS_V_IN, 0
    .equ REDUCE_COLS_V_OUT, 1
    .equ REDUCE_COLS_V_ROWS, 2
    .equ REDUCE_COLS_V_COLS, 3
    .equ REDUCE_COLS_V_IN_STEP, 4
    .equ REDUCE_COLS_V_OP, 5
    .equ REDUCE_COLS_V_SCALE, 6
    .equ REDUCE_COLS_V_OUT_F16, 7
    .equ REDUCE_COLS_SPLIT_V_CHUNK, 8

    .equ LAYERNORM_PART_V_IN, 0
    .equ LAYERNORM_PART_V_OUT, 1
    .equ LAYERNORM_PART_V_GAMMA, 2
    .equ LAYERNORM_PART_V_BETA, 3
    .equ LAYERNORM_PART_V_ROWS, 4
    .equ LAYERNORM_PART_V_PAIRS, 5
    .equ LAYERNORM_PART_V_STEP, 6
    .equ LAYERNORM_PART_V_EPS, 7
    .equ LAYERNORM_PART_V_STATS, 8
    .equ LAYERNORM_PART_V_SLOT, 9
    .equ LAYERNORM_PART_V_COLS, 10
    .equ LAYERNORM_PART_V_MEAN_OUT, 11
    .equ LAYERNORM_PART_V_INV_STD_OUT, 12

    .equ SOFTMAX_PART_V_IN, 0
    .equ SOFTMAX_PART_V_OUT, 1
    .equ SOFTMAX_PART_V_ROWS, 2
    .equ SOFTMAX_PART_V_PAIRS, 3
    .equ SOFTMAX_PART_V_STEP, 4
    .equ SOFTMAX_PART_V_STATS, 5
    .equ SOFTMAX_PART_V_SLOT, 6

    .equ RED_PARTIALS_V_FIRST, 0
    .equ RED_PARTIALS_V_REST, 1
    .equ RED_PARTIALS_V_OUT, 2
    .equ RED_PARTIALS_V_ROWS, 3
    .equ RED_PARTIALS_V_COLS, 4
    .equ RED_PARTIALS_V_STEP, 5
    .equ RED_PARTIALS_V_OUT_F16, 6

    .equ SOFTMAX_ROWS_V_IN, 0
    .equ SOFTMAX_ROWS_V_OUT, 1
    .equ SOFTMAX_ROWS_V_ROWS, 2
    .equ SOFTMAX_ROWS_V_COLS, 3
    .equ SOFTMAX_ROWS_V_STEP, 4

    .equ LAYERNORM_ROWS_V_IN, 0
    .equ LAYERNORM_ROWS_V_OUT, 1
    .equ LAYERNORM_ROWS_V_GAMMA, 2
    .equ LAYERNORM_ROWS_V_BETA, 3
    .equ LAYERNORM_ROWS_V_ROWS, 4
    .equ LAYERNORM_ROWS_V_COLS, 5
    .equ LAYERNORM_ROWS_V_STEP, 6
    .equ LAYERNORM_ROWS_V_EPS, 7
    .equ LAYERNORM_ROWS_V_MEAN_OUT, 8
    .equ LAYERNORM_ROWS_V_INV_STD_OUT, 9

    .equ GATHER_ROWS_V_TABLE, 0
    .equ GATHER_ROWS_V_IDX, 1
    .equ GATHER_ROWS_V_OUT, 2
    .equ GATHER_ROWS_V_N, 3
    .equ GATHER_ROWS_V_ROW_BYTES, 4
    .equ GATHER_ROWS_V_TABLE_ROWS, 5

    .equ TRANSPOSE_V_IN, 0
    .equ TRANSPOSE_V_OUT, 1
    .equ TRANSPOSE_V_ROWS, 2
    .equ TRANSPOSE_V_COLS, 3
    .equ TRANSPOSE_V_IN_STEP, 4
    .equ TRANSPOSE_V_OUT_STEP, 5

    .equ ROWWISE_TRAP_BAD_OP, 0x52
    .equ ROWWISE_TRAP_GATHER_INDEX, 0x47
    .equ ROWWISE_TRAP_PARTIALS_COLS, 0x50

    .text

// ---- vtx_reduce_rows_f32 ------------------------------------------------------
// $m0 row, $m1 out, $m2 rows - 1 (brnzdec), $m3 pairs, $m4 odd, $m5 row step,
// $m6 load offset in the row, $a6 scale.
//
// The sum-like row loop: f32v2acc, or f32v2mac (x * x) when \square.
.macro RW_REDUCE_ACC square
    .if \square
    f32v2mac $a0:1, $a0:1
    .else
    f32v2acc $a0:1
    .endif
.endm
.macro RW_REDUCE_ACC_LOOP label, square, scale
\label:
    ld64step $a0:1, $m0, $m6+=, 1                              // pair 0
    rpt     $m3, 0
    {
    ld64step $a0:1, $m0, $m6+=, 1
    RW_REDUCE_ACC \square
    }
    { brz   $m4, 1f ; mov $a1, $a15 }                          // odd: (x[c-1], 0)
    {
    nop
    RW_REDUCE_ACC \square
    }
1:
    { setzi $m6, 0 ; f32v2gina $a0:1, $azeros }                // lanes out, zeros in
    { add   $m0, $m0, $m5 ; f32add $a0, $a0, $a1 }
    .if \scale
    { nop ; f32mul $a0, $a0, $a6 }
    .endif
    st32step $a0, $mzero, $m1+=, 1
    brnzdec $m2, \label
    exitz   $mzero
.endm

    .align 8
    .globl vtx_reduce_rows_f32
    .worker
vtx_reduce_rows_f32:
    { ld32  $m2, $m13, $mzero, REDUCE_ROWS_V_ROWS ; setzi $a0, RW_FP_CLR_ZAACC }
    { ld32  $m3, $m13, $mzero, REDUCE_ROWS_V_COLS ; uput $FP_CLR, $a0 }
    brz     $m2, rw_reduce_exit
    ld32    $m0, $m13, $mzero, REDUCE_ROWS_V_IN
    ld32    $m1, $m13, $mzero, REDUCE_ROWS_V_OUT
    ld32    $m5, $m13, $mzero, REDUCE_ROWS_V_IN_STEP
    ld32    $m7, $m13, $mzero, REDUCE_ROWS_V_OP
    ld32    $a6, $m13, $mzero, REDUCE_ROWS_V_SCALE
    and     $m4, $m3, 1
    shr     $m3, $m3, 1
    add     $m2, $m2, -1
    setzi   $m6, 0
    brz     $m7, rw_reduce_sum_row
    cmpeq   $m8, $m7, REDUCE_OP_MAX
    brnz    $m8, rw_reduce_max_row
    cmpeq   $m8, $m7, REDUCE_OP_SUMSQ
    brnz    $m8, rw_reduce_sumsq_row
    cmpeq   $m8, $m7, REDUCE_OP_MEAN
    brnz    $m8, rw_reduce_mean_row
    cmpeq   $m8, $m7, REDUCE_OP_MIN
    brnz    $m8, rw_reduce_min_row
    cmpeq   $m8, $m7, REDUCE_OP_PROD
    brnz    $m8, rw_reduce_prod
    cmpeq   $m8, $m7, REDUCE_OP_ABS_SUM
    brnz    $m8, rw_reduce_abs_row
    trap    ROWWISE_TRAP_BAD_OP
    .align 8
    RW_REDUCE_ACC_LOOP rw_reduce_sum_row, 0, 0
    .align 8
    RW_REDUCE_ACC_LOOP rw_reduce_sumsq_row, 1, 0
    .align 8
    RW_REDUCE_ACC_LOOP rw_reduce_mean_row, 0, 1
// max and min: lanes started at x[0], combined, then the odd last column.
.macro RW_REDUCE_EXTREME_LOOP label, v2op, op
\label:
    ld32    $a4, $m0, $mzero, 0
    ld64step $a0:1, $m0, $m6+=, 1
    { rpt   $m3, 0 ; mov $a5, $a4 }                            // lanes start at x[0]
    { ld64step $a0:1, $m0, $m6+=, 1 ; \v2op $a4:5, $a4:5, $a0:1 }
    { brz   $m4, 1f ; \op $a4, $a4, $a5 }
    { nop ; \op $a4, $a4, $a0 }                                // odd last column
1:
    st32step $a4, $mzero, $m1+=, 1
    add     $m0, $m0, $m5
    setzi   $m6, 0
    brnzdec $m2, \label
    exitz   $mzero
.endm
    .align 8
    RW_REDUCE_EXTREME_LOOP rw_reduce_max_row, f32v2max, f32max
    .align 8
    RW_REDUCE_EXTREME_LOOP rw_reduce_min_row, f32v2min, f32min
// product: lanes like the sum's, both started at 1.0 ($a8:9), the odd last
// column into lane 0 last, then lane 0 * lane 1.
    .align 8
rw_reduce_prod:
    setzi   $a8, 1
    f32fromui32 $a8, $a8
    { nop ; mov $a9, $a8 }
rw_reduce_prod_row:
    { ld64step $a0:1, $m0, $m6+=, 1 ; mov $a2:3, $a8:9 }
    { rpt   $m3, 0 ; fnop }
    { ld64step $a0:1, $m0, $m6+=, 1 ; f32v2mul $a2:3, $a2:3, $a0:1 }
    { brz   $m4, 1f ; fnop }
    { nop ; f32mul $a2, $a2, $a0 }                             // odd last column
1:
    { add   $m0, $m0, $m5 ; f32mul $a2, $a2, $a3 }
    st32step $a2, $mzero, $m1+=, 1
    setzi   $m6, 0
    brnzdec $m2, rw_reduce_prod_row
    exitz   $mzero
// sum of |x| (ONNX ReduceL1): f32v2abs, then the lanes of f32v2acc as the
// sum's; two aux issues a pair.
    .align 8
rw_reduce_abs_row:
    ld64step $a0:1, $m0, $m6+=, 1
    rpt     $m3, (2f - 1f) / 8 - 1
1:
    { ld64step $a0:1, $m0, $m6+=, 1 ; f32v2abs $a2:3, $a0:1 }
    { nop ; f32v2acc $a2:3 }
2:
    { brz   $m4, 1f ; mov $a3, $a15 }
    { nop ; f32abs $a2, $a0 }                                  // odd: (|x[c-1]|, 0)
    { nop ; f32v2acc $a2:3 }
1:
    { setzi $m6, 0 ; f32v2gina $a0:1, $azeros }
    { add   $m0, $m0, $m5 ; f32add $a0, $a0, $a1 }
    st32step $a0, $mzero, $m1+=, 1
    brnzdec $m2, rw_reduce_abs_row
    exitz   $mzero
    .align 8
rw_reduce_exit:
    exitz   $mzero

// ---- vtx_softmax_rows_f32 -------------------------------------------------------
// $m0 in row, $m1 out row, $m2 rows - 1, $m3 pairs, $m4 odd, $m5 row step,
// $m6 load offset, $m7 store offset; $a4:5 the row max (both lanes),
// $a6:7 the reciprocal of the sum.
    .align 8
    .globl vtx_softmax_rows_f32
    .worker
vtx_softmax_rows_f32:
    { ld32  $m2, $m13, $mzero, SOFTMAX_ROWS_V_ROWS ; setzi $a0, RW_FP_CLR_ZAACC }
    { ld32  $m3, $m13, $mzero, SOFTMAX_ROWS_V_COLS ; uput $FP_CLR, $a0 }
    brz     $m2, rw_softmax_exit
    ld32    $m0, $m13, $mzero, SOFTMAX_ROWS_V_IN
    ld32    $m1, $m13, $mzero, SOFTMAX_ROWS_V_OUT
    ld32    $m5, $m13, $mzero, SOFTMAX_ROWS_V_STEP
    and     $m4, $m3, 1
    shr     $m3, $m3, 1
    add     $m2, $m2, -1
    setzi   $m6, 0
    setzi   $m7, 0                       // pass 2 stores from here: never assume a register is zero
    nop                                  // (keeps the bundles below 8-byte aligned)
rw_softmax_row:
    // pass 1: the max
    ld32    $a4, $m0, $mzero, 0
    ld64step $a0:1, $m0, $m6+=, 1
    { rpt   $m3, 0 ; mov $a5, $a4 }
    { ld64step $a0:1, $m0, $m6+=, 1 ; f32v2max $a4:5, $a4:5, $a0:1 }
    { brz   $m4, 1f ; f32max $a4, $a4, $a5 }
    { nop ; f32max $a4, $a4, $a0 }
1:
    { setzi $m6, 0 ; mov $a5, $a4 }
    // pass 2: e = exp(x - max) to out, summed in $AACC
    ld64step $a0:1, $m0, $m6+=, 1
    rpt     $m3, (2f - 1f) / 8 - 1
1:
    { ld64step $a0:1, $m0, $m6+=, 1 ; f32v2sub $a2:3, $a0:1, $a4:5 }
    f32exp  $a2, $a2
    f32exp  $a3, $a3
    { st64step $a2:3, $m1, $m7+=, 1 ; f32v2acc $a2:3 }
2:
    { brz   $m4, 1f ; mov $a3, $a15 }
    { nop ; f32sub $a2, $a0, $a4 }
    f32exp  $a2, $a2
    st32    $a2, $m1, $m7, 0
    { nop ; f32v2acc $a2:3 }
1:
    { setzi $m6, 0 ; f32v2gina $a2:3, $azeros }
    { setzi $m7, 0 ; f32add $a2, $a2, $a3 }
    // pass 3: out = e * (1 / sum)
    { ld64step $a0:1, $m1, $m6+=, 1 ; f32oox $a6, $a2 }
    { rpt   $m3, (2f - 1f) / 8 - 1 ; mov $a7, $a6 }
1:
    { ld64step $a0:1, $m1, $m6+=, 1 ; f32v2mul $a2:3, $a0:1, $a6:7 }
    { st64step $a2:3, $m1, $m7+=, 1 ; fnop }
2:
    { brz   $m4, 1f ; fnop }
    { nop ; f32mul $a2, $a0, $a6 }
    { st32  $a2, $m1, $m7, 0 ; fnop }
1:
    add     $m0, $m0, $m5
    add     $m1, $m1, $m5
    setzi   $m6, 0
    setzi   $m7, 0
    brnzdec $m2, rw_softmax_row
    exitz   $mzero
    .align 8
rw_softmax_exit:
    exitz   $mzero

// ---- vtx_layernorm_rows_f32 -----------------------------------------------------
// $m0 in row, $m1 out row, $m2 rows - 1, $m3 pairs, $m4 odd, $m5 row step,
// $m6 x load offset (one pair ahead), $m7 store offset (one pair behind),
// $m8 gamma, $m9 beta, $m10 gamma/beta offset, $m11 pairs - 1;
// $a4:5 mean, $a6 cols (f32), $a7 eps, $a8:9 rstd, $a10:11 working pair,
// $a12:13 the result stored next.
    .align 8
    .globl vtx_layernorm_rows_f32
    .worker
vtx_layernorm_rows_f32:
    { ld32  $m2, $m13, $mzero, LAYERNORM_ROWS_V_ROWS ; setzi $a0, RW_FP_CLR_ZAACC }
    { ld32  $m3, $m13, $mzero, LAYERNORM_ROWS_V_COLS ; uput $FP_CLR, $a0 }
    brz     $m2, rw_layernorm_exit
    ld32    $m0, $m13, $mzero, LAYERNORM_ROWS_V_IN
    ld32    $a6, $m13, $mzero, LAYERNORM_ROWS_V_COLS
    ld32    $m1, $m13, $mzero, LAYERNORM_ROWS_V_OUT
    { ld32  $a7, $m13, $mzero, LAYERNORM_ROWS_V_EPS ; f32fromui32 $a6, $a6 }
    ld32    $m5, $m13, $mzero, LAYERNORM_ROWS_V_STEP
    ld32    $m8, $m13, $mzero, LAYERNORM_ROWS_V_GAMMA
    ld32    $m9, $m13, $mzero, LAYERNORM_ROWS_V_BETA
    and     $m4, $m3, 1
    shr     $m3, $m3, 1
    add     $m11, $m3, -1
    add     $m2, $m2, -1
    setzi   $m6, 0
    ld32    $m7, $m13, $mzero, LAYERNORM_ROWS_V_MEAN_OUT
    ld32    $m10, $m13, $mzero, LAYERNORM_ROWS_V_INV_STD_OUT
    or      $m7, $m7, $m10
    brnz    $m7, rw_layernorm_stats_row
.macro RW_LAYERNORM_LOOP label, stats
\label:
    // pass 1: the mean
    ld64step $a0:1, $m0, $m6+=, 1
    rpt     $m3, 0
    { ld64step $a0:1, $m0, $m6+=, 1 ; f32v2acc $a0:1 }
    { brz   $m4, 1f ; mov $a1, $a15 }
    { nop ; f32v2acc $a0:1 }
1:
    { setzi $m6, 0 ; f32v2gina $a2:3, $azeros }
    { ld64step $a0:1, $m0, $m6+=, 1 ; f32add $a4, $a2, $a3 }
    { setzi $m7, 0 ; f32div $a4, $a4, $a6 }
    // pass 2: the variance, sum of (x - mean)^2
    { rpt   $m3, (2f - 1f) / 8 - 1 ; mov $a5, $a4 }
1:
    { ld64step $a0:1, $m0, $m6+=, 1 ; f32v2sub $a2:3, $a0:1, $a4:5 }
    { nop ; f32v2mac $a2:3, $a2:3 }
2:
    { brz   $m4, 1f ; mov $a3, $a15 }
    { nop ; f32sub $a2, $a0, $a4 }
    { nop ; f32v2mac $a2:3, $a2:3 }
1:
    { setzi $m6, 0 ; f32v2gina $a2:3, $azeros }
    { ld64step $a0:1, $m0, $m6+=, 1 ; f32add $a2, $a2, $a3 }
    { setzi $m10, 0 ; f32div $a2, $a2, $a6 }
    { nop ; f32add $a2, $a2, $a7 }
    { nop ; f32oorx $a8, $a2 }
    // pass 3: out = ((x - mean) * rstd) * gamma + beta.  Bundle k of a pair
    // (k = 1..4): gamma into $a0:1 as the aux half reads x from it, beta,
    // the next x pair, the store of the previous pair's result.
    { brz   $m3, 2f ; mov $a9, $a8 }
    { ld64  $a0:1, $m8, $m10, 0 ; f32v2sub $a10:11, $a0:1, $a4:5 }
    { ld64step $a2:3, $m9, $m10+=, 1 ; f32v2mul $a10:11, $a10:11, $a8:9 }
    { ld64step $a0:1, $m0, $m6+=, 1 ; f32v2mul $a10:11, $a10:11, $a0:1 }
    { rpt   $m11, (3f - 1f) / 8 - 1 ; f32v2add $a12:13, $a10:11, $a2:3 }
1:
    { ld64  $a0:1, $m8, $m10, 0 ; f32v2sub $a10:11, $a0:1, $a4:5 }
    { ld64step $a2:3, $m9, $m10+=, 1 ; f32v2mul $a10:11, $a10:11, $a8:9 }
    { ld64step $a0:1, $m0, $m6+=, 1 ; f32v2mul $a10:11, $a10:11, $a0:1 }
    { st64step $a12:13, $m1, $m7+=, 1 ; f32v2add $a12:13, $a10:11, $a2:3 }
3:
    { st64step $a12:13, $m1, $m7+=, 1 ; fnop }
2:
    { brz   $m4, 1f ; fnop }
    { ld32  $a2, $m8, $m10, 0 ; f32sub $a10, $a0, $a4 }
    { ld32  $a3, $m9, $m10, 0 ; f32mul $a10, $a10, $a8 }
    { nop ; f32mul $a10, $a10, $a2 }
    { nop ; f32add $a10, $a10, $a3 }
    { st32  $a10, $m1, $m7, 0 ; fnop }
1:
    .if \stats
    // the row's mean and rstd to MEAN_OUT[r], INV_STD_OUT[r] (r = rows - 1 - $m2)
    ld32    $m10, $m13, $mzero, LAYERNORM_ROWS_V_ROWS
    sub     $m10, $m10, $m2
    shl     $m10, $m10, 2
    add     $m10, $m10, -4
    ld32    $m7, $m13, $mzero, LAYERNORM_ROWS_V_MEAN_OUT
    brz     $m7, 4f
    st32    $a4, $m7, $m10, 0
4:
    ld32    $m7, $m13, $mzero, LAYERNORM_ROWS_V_INV_STD_OUT
    brz     $m7, 4f
    st32    $a8, $m7, $m10, 0
4:
    .endif
    add     $m0, $m0, $m5
    add     $m1, $m1, $m5
    setzi   $m6, 0
    brnzdec $m2, \label
    exitz   $mzero
.endm
    .align 8                              // (no padding: falls through from the brnz)
    RW_LAYERNORM_LOOP rw_layernorm_row, 0
    .align 8
    RW_LAYERNORM_LOOP rw_layernorm_stats_row, 1
    .align 8
rw_layernorm_exit:
    exitz   $mzero

// ---- vtx_layernorm_part{1,2,3}_f32 ------------------------------------------------
// A row's columns shared by the six workers, one record each (rowwise.h),
// the same records for three compute sets.  STATS holds 12 f32 a row: the
// workers' sums of their columns (slots 0..5), then their sums of squared
// deviations (slots 6..11).  Part 1 writes the sums; part 2 adds the six
// sums in slot order (the mean: that / COLS), then writes its squares;
// part 3 works the mean out the same way, adds the squares (the variance:
// / COLS), rstd = f32oorx(var + eps), and writes its columns of the result
// (and, where the record names them, the row's mean and rstd).
// $m0 in, $m1 out, $m2 rows - 1, $m3 pairs, $m4 the row's stats, $m5 step,
// $m6 the load offset, $m7 the store offset, $m8 gamma, $m9 beta,
// $m10 gamma and beta's offset, $m11 slot * 4 (parts 1, 2) or pairs - 1.
.macro RW_LN_PART_HEAD
    { ld32  $m2, $m13, $mzero, LAYERNORM_PART_V_ROWS ; setzi $a0, RW_FP_CLR_ZAACC }
    { ld32  $m3, $m13, $mzero, LAYERNORM_PART_V_PAIRS ; uput $FP_CLR, $a0 }
    { ld32  $m0, $m13, $mzero, LAYERNORM_PART_V_IN ; fnop }
    { ld32  $m4, $m13, $mzero, LAYERNORM_PART_V_STATS ; fnop }
    { ld32  $m5, $m13, $mzero, LAYERNORM_PART_V_STEP ; fnop }
    { ld32  $m11, $m13, $mzero, LAYERNORM_PART_V_SLOT ; fnop }
    { ld32  $a6, $m13, $mzero, LAYERNORM_PART_V_COLS ; fnop }
    { shl   $m11, $m11, 2 ; f32fromui32 $a6, $a6 }
    { add   $m2, $m2, -1 ; fnop }
    { setzi $m6, 0 ; fnop }
.endm
// Six STATS slots of the row at $m4, the 64-bit pairs from \pair on,
// folded by \op in slot order into \dst ($a8 on the way, $a2, $a3, $a10 to
// $a13 used), the row's first x pair loaded from \src into $a0:1 meanwhile
// ($m6 the load offset).  The layer norm and softmax parts all use it.
.macro RW_PART_FOLD6 op, pair, src, dst
    { ld64  $a2:3, $m4, $mzero, \pair ; fnop }
    { ld64  $a10:11, $m4, $mzero, \pair + 1 ; \op $a8, $a2, $a3 }
    { ld64  $a12:13, $m4, $mzero, \pair + 2 ; \op $a8, $a8, $a10 }
    { nop ; \op $a8, $a8, $a11 }
    { nop ; \op $a8, $a8, $a12 }
    { ld64step $a0:1, \src, $m6+=, 1 ; \op \dst, $a8, $a13 }
.endm
// The mean of the row at $m4 into $a4 (the six sums in slot order, / COLS).
.macro RW_LN_PART_MEAN
    RW_PART_FOLD6 f32add, 0, $m0, $a8
    { nop ; f32div $a4, $a8, $a6 }
.endm

    .align 8
    .globl vtx_layernorm_part1_f32
vtx_layernorm_part1_f32:
    RW_LN_PART_HEAD
rw_ln_part1_row:
    { ld64step $a0:1, $m0, $m6+=, 1 ; fnop }
    { rpt   $m3, 0 ; fnop }
    { ld64step $a0:1, $m0, $m6+=, 1 ; f32v2acc $a0:1 }
    { setzi $m6, 0 ; f32v2gina $a2:3, $azeros }
    { add   $m0, $m0, $m5 ; f32add $a2, $a2, $a3 }
    { st32  $a2, $m4, $m11, 0 ; fnop }
    { add   $m4, $m4, 48 ; fnop }
    { brnzdec $m2, rw_ln_part1_row ; fnop }
    exitz   $mzero

    .align 8
    .globl vtx_layernorm_part2_f32
vtx_layernorm_part2_f32:
    RW_LN_PART_HEAD
rw_ln_part2_row:
    RW_LN_PART_MEAN
    { rpt   $m3, (2f - 1f) / 8 - 1 ; mov $a5, $a4 }
1:
    { ld64step $a0:1, $m0, $m6+=, 1 ; f32v2sub $a2:3, $a0:1, $a4:5 }
    { nop ; f32v2mac $a2:3, $a2:3 }
2:
    { setzi $m6, 0 ; f32v2gina $a2:3, $azeros }
    { add   $m0, $m0, $m5 ; f32add $a2, $a2, $a3 }
    { st32  $a2, $m4, $m11, 6 ; fnop }
    { add   $m4, $m4, 48 ; fnop }
    { brnzdec $m2, rw_ln_part2_row ; fnop }
    exitz   $mzero

    .align 8
    .globl vtx_layernorm_part3_f32
vtx_layernorm_part3_f32:
    RW_LN_PART_HEAD
    { ld32  $m1, $m13, $mzero, LAYERNORM_PART_V_OUT ; fnop }
    { ld32  $m8, $m13, $mzero, LAYERNORM_PART_V_GAMMA ; fnop }
    { ld32  $m9, $m13, $mzero, LAYERNORM_PART_V_BETA ; fnop }
    { ld32  $a7, $m13, $mzero, LAYERNORM_PART_V_EPS ; fnop }
rw_ln_part3_row:
    RW_LN_PART_MEAN
    // the variance: the six squares in slot order, / COLS; rstd
    { ld64  $a2:3, $m4, $mzero, 3 ; fnop }
    { ld64  $a12:13, $m4, $mzero, 4 ; fnop }
    { ld64  $a10:11, $m4, $mzero, 5 ; f32add $a9, $a2, $a3 }
    { nop ; f32add $a9, $a9, $a12 }
    { nop ; f32add $a9, $a9, $a13 }
    { nop ; f32add $a9, $a9, $a10 }
    { nop ; f32add $a9, $a9, $a11 }
    { nop ; f32div $a2, $a9, $a6 }
    { nop ; f32add $a2, $a2, $a7 }
    { add   $m11, $m3, -1 ; f32oorx $a8, $a2 }
    { setzi $m10, 0 ; mov $a5, $a4 }
    { setzi $m7, 0 ; mov $a9, $a8 }
    // out = ((x - mean) * rstd) * gamma + beta, as vtx_layernorm_rows_f32
    { ld64  $a0:1, $m8, $m10, 0 ; f32v2sub $a10:11, $a0:1, $a4:5 }
    { ld64step $a2:3, $m9, $m10+=, 1 ; f32v2mul $a10:11, $a10:11, $a8:9 }
    { ld64step $a0:1, $m0, $m6+=, 1 ; f32v2mul $a10:11, $a10:11, $a0:1 }
    { rpt   $m11, (3f - 1f) / 8 - 1 ; f32v2add $a12:13, $a10:11, $a2:3 }
1:
    { ld64  $a0:1, $m8, $m10, 0 ; f32v2sub $a10:11, $a0:1, $a4:5 }
    { ld64step $a2:3, $m9, $m10+=, 1 ; f32v2mul $a10:11, $a10:11, $a8:9 }
    { ld64step $a0:1, $m0, $m6+=, 1 ; f32v2mul $a10:11, $a10:11, $a0:1 }
    { st64step $a12:13, $m1, $m7+=, 1 ; f32v2add $a12:13, $a10:11, $a2:3 }
3:
    { st64step $a12:13, $m1, $m7+=, 1 ; fnop }
    // the row's mean and rstd (r = rows - 1 - $m2) where the record names them
    { ld32  $m7, $m13, $mzero, LAYERNORM_PART_V_MEAN_OUT ; fnop }
    { ld32  $m10, $m13, $mzero, LAYERNORM_PART_V_INV_STD_OUT ; fnop }
    { or    $m11, $m7, $m10 ; fnop }
    { brz   $m11, 4f ; fnop }
    { ld32  $m11, $m13, $mzero, LAYERNORM_PART_V_ROWS ; fnop }
    { sub   $m11, $m11, $m2 ; fnop }
    { shl   $m11, $m11, 2 ; fnop }
    { add   $m11, $m11, -4 ; fnop }
    { brz   $m7, 5f ; fnop }
    { st32  $a4, $m7, $m11, 0 ; fnop }
5:
    { brz   $m10, 4f ; fnop }
    { st32  $a8, $m10, $m11, 0 ; fnop }
4:
    { add   $m0, $m0, $m5 ; fnop }
    { add   $m1, $m1, $m5 ; fnop }
    { add   $m4, $m4, 48 ; fnop }
    { setzi $m6, 0 ; fnop }
    { brnzdec $m2, rw_ln_part3_row ; fnop }
    exitz   $mzero

// ---- vtx_softmax_part{1,2,3}_f32 --------------------------------------------------
// As the layer norm parts: STATS holds 12 f32 a row, the workers' maxima of
// their columns (slots 0..5), then their sums of exponentials (6..11).
// Part 1 writes the maxima (lanes started at the worker's first column);
// part 2 takes the max of the six in slot order, writes e = exp(x - max)
// over its columns and their sum; part 3 adds the six sums in slot order,
// r = f32oox(sum), and scales its columns of e by r.  $m0 in, $m1 out,
// $m2 rows - 1, $m3 pairs, $m4 the row's stats, $m5 step, $m6 the load
// offset, $m7 the store offset, $m11 slot * 4.
.macro RW_SM_PART_HEAD
    { ld32  $m2, $m13, $mzero, SOFTMAX_PART_V_ROWS ; setzi $a0, RW_FP_CLR_ZAACC }
    { ld32  $m3, $m13, $mzero, SOFTMAX_PART_V_PAIRS ; uput $FP_CLR, $a0 }
    { ld32  $m0, $m13, $mzero, SOFTMAX_PART_V_IN ; fnop }
    { ld32  $m1, $m13, $mzero, SOFTMAX_PART_V_OUT ; fnop }
    { ld32  $m4, $m13, $mzero, SOFTMAX_PART_V_STATS ; fnop }
    { ld32  $m5, $m13, $mzero, SOFTMAX_PART_V_STEP ; fnop }
    { ld32  $m11, $m13, $mzero, SOFTMAX_PART_V_SLOT ; fnop }
    { shl   $m11, $m11, 2 ; fnop }
    { add   $m2, $m2, -1 ; fnop }
    { setzi $m6, 0 ; fnop }
    { setzi $m7, 0 ; fnop }
.endm

    .align 8
    .globl vtx_softmax_part1_f32
vtx_softmax_part1_f32:
    RW_SM_PART_HEAD
rw_sm_part1_row:
    { ld32  $a4, $m0, $mzero, 0 ; fnop }
    { ld64step $a0:1, $m0, $m6+=, 1 ; fnop }
    { rpt   $m3, 0 ; mov $a5, $a4 }
    { ld64step $a0:1, $m0, $m6+=, 1 ; f32v2max $a4:5, $a4:5, $a0:1 }
    { setzi $m6, 0 ; f32max $a4, $a4, $a5 }
    { add   $m0, $m0, $m5 ; fnop }
    { st32  $a4, $m4, $m11, 0 ; fnop }
    { add   $m4, $m4, 48 ; fnop }
    { brnzdec $m2, rw_sm_part1_row ; fnop }
    exitz   $mzero

    .align 8
    .globl vtx_softmax_part2_f32
vtx_softmax_part2_f32:
    RW_SM_PART_HEAD
rw_sm_part2_row:
    RW_PART_FOLD6 f32max, 0, $m0, $a4
    { rpt   $m3, (2f - 1f) / 8 - 1 ; mov $a5, $a4 }
1:
    { ld64step $a0:1, $m0, $m6+=, 1 ; f32v2sub $a2:3, $a0:1, $a4:5 }
    f32exp  $a2, $a2
    f32exp  $a3, $a3
    { st64step $a2:3, $m1, $m7+=, 1 ; f32v2acc $a2:3 }
2:
    { setzi $m6, 0 ; f32v2gina $a2:3, $azeros }
    { setzi $m7, 0 ; f32add $a2, $a2, $a3 }
    { add   $m0, $m0, $m5 ; fnop }
    { add   $m1, $m1, $m5 ; fnop }
    { st32  $a2, $m4, $m11, 6 ; fnop }
    { add   $m4, $m4, 48 ; fnop }
    { brnzdec $m2, rw_sm_part2_row ; fnop }
    exitz   $mzero

    .align 8
    .globl vtx_softmax_part3_f32
vtx_softmax_part3_f32:
    RW_SM_PART_HEAD
rw_sm_part3_row:
    RW_PART_FOLD6 f32add, 3, $m1, $a8
    { nop ; f32oox $a6, $a8 }
    { rpt   $m3, (2f - 1f) / 8 - 1 ; mov $a7, $a6 }
1:
    { ld64step $a0:1, $m1, $m6+=, 1 ; f32v2mul $a2:3, $a0:1, $a6:7 }
    { st64step $a2:3, $m1, $m7+=, 1 ; fnop }
2:
    { setzi $m6, 0 ; fnop }
    { setzi $m7, 0 ; fnop }
    { add   $m1, $m1, $m5 ; fnop }
    { add   $m4, $m4, 48 ; fnop }
    { brnzdec $m2, rw_sm_part3_row ; fnop }
    exitz   $mzero

// ---- vtx_gather_rows ------------------------------------------------------------
// $m0 table, $m1 next index, $m2 out, $m3 n - 1, $m4 row bytes, $m5 table
// rows, $m6 index, $m7 source, $m9 pairs a row, $m10 words a row.
    .align 8
    .globl vtx_gather_rows
    .worker
vtx_gather_rows:
    ld32    $m3, $m13, $mzero, GATHER_ROWS_V_N
    brz     $m3, rw_gather_exit
    ld32    $m0, $m13, $mzero, GATHER_ROWS_V_TABLE
    ld32    $m1, $m13, $mzero, GATHER_ROWS_V_IDX
    ld32    $m2, $m13, $mzero, GATHER_ROWS_V_OUT
    ld32    $m4, $m13, $mzero, GATHER_ROWS_V_ROW_BYTES
    ld32    $m5, $m13, $mzero, GATHER_ROWS_V_TABLE_ROWS
    add     $m3, $m3, -1
    and     $m8, $m4, 7
    shr     $m9, $m4, 3
    shr     $m10, $m4, 2
    brnz    $m8, rw_gather_word_row
// ONNX Gather: k in [-rows, rows), negative k counts from the end.
.macro RW_GATHER_INDEX
    ld32step $m6, $mzero, $m1+=, 1
    shrs    $m7, $m6, 31                  // -1 for a negative index
    and     $m7, $m7, $m5
    add     $m6, $m6, $m7
    cmpult  $m8, $m6, $m5                 // unsigned: still negative is out of range
    mul     $m7, $m6, $m4
    brz     $m8, rw_gather_bad
    add     $m7, $m7, $m0
.endm
rw_gather_pair_row:
    RW_GATHER_INDEX
    { rpt   $m9, 0 ; fnop }
    ld64step $a0:1, $mzero, $m7+=, 1
    st64step $a0:1, $mzero, $m2+=, 1
    brnzdec $m3, rw_gather_pair_row
    exitz   $mzero
    .align 8
rw_gather_word_row:
    RW_GATHER_INDEX
    { rpt   $m10, 0 ; fnop }
    ld32step $a0, $mzero, $m7+=, 1
    st32step $a0, $mzero, $m2+=, 1
    brnzdec $m3, rw_gather_word_row
    exitz   $mzero
    .align 8
rw_gather_exit:
    exitz   $mzero
    .align 8
rw_gather_bad:
    trap    ROWWISE_TRAP_GATHER_INDEX

// ---- vtx_transpose_f32 ------------------------------------------------------------
// $m0 in row, $m1 out, $m2 rows - 1, $m3 cols, $m4 in step, $m5 out step,
// $m6 load offset, $m7 store offset, $m8 4 r (out[0][r]).
    .align 8
    .globl vtx_transpose_f32
    .worker
vtx_transpose_f32:
    ld32    $m2, $m13, $mzero, TRANSPOSE_V_ROWS
    brz     $m2, rw_transpose_exit
    ld32    $m0, $m13, $mzero, TRANSPOSE_V_IN
    ld32    $m1, $m13, $mzero, TRANSPOSE_V_OUT
    ld32    $m3, $m13, $mzero, TRANSPOSE_V_COLS
    ld32    $m4, $m13, $mzero, TRANSPOSE_V_IN_STEP
    ld32    $m5, $m13, $mzero, TRANSPOSE_V_OUT_STEP
    add     $m2, $m2, -1
    setzi   $m6, 0
    setzi   $m7, 0
    setzi   $m8, 0
    nop                                   // the row loop starts 8-byte aligned
rw_transpose_row:
    { rpt   $m3, (2f - 1f) / 8 - 1 ; fnop }
1:
    { ld32step $a0, $m0, $m6+=, 1 ; fnop }
    st32    $a0, $m1, $m7, 0
    add     $m7, $m7, $m5
2:
    add     $m0, $m0, $m4
    add     $m8, $m8, 4
    mov     $m7, $m8
    setzi   $m6, 0
    brnzdec $m2, rw_transpose_row
    exitz   $mzero
    .align 8
rw_transpose_exit:
    exitz   $mzero

// ---- vtx_reduce_cols_f32 ----------------------------------------------------------
// $m0 column block in row 0, $m1 out, $m2 rows - 1 (rpt count), $m4 columns
// left, $m5 in step, $m6 row offset, $m7 in step - 48, $m8 op, $m9 f16 out,
// $m10 scratch (the f16 half-word parity in the column loop).
//
// Every column is folded in row order: acc = t(x[0]), then acc = op(acc,
// t(x[r])) for r = 1..rows-1 (t: x itself, x*x for SUMSQ, |x| for ABS_SUM),
// MEAN then multiplies by the scale; rowwise.h.
    .align 8
    .globl vtx_reduce_cols_f32
    .worker
vtx_reduce_cols_f32:
    ld32    $m2, $m13, $mzero, REDUCE_COLS_V_ROWS
    ld32    $m4, $m13, $mzero, REDUCE_COLS_V_COLS
    brz     $m2, rw_cols_exit
    brz     $m4, rw_cols_exit
    ld32    $m0, $m13, $mzero, REDUCE_COLS_V_IN
    ld32    $m1, $m13, $mzero, REDUCE_COLS_V_OUT
    ld32    $m5, $m13, $mzero, REDUCE_COLS_V_IN_STEP
    ld32    $m8, $m13, $mzero, REDUCE_COLS_V_OP
    ld32    $m9, $m13, $mzero, REDUCE_COLS_V_OUT_F16
rw_cols_go:
    add     $m2, $m2, -1
    cmpult  $m10, $m8, REDUCE_OP_ABS_SUM + 1
    brz     $m10, rw_cols_bad_op
    // The block path needs in, in step (and out, for f32) 8-byte aligned,
    // 12 columns or more, and an op of one aux issue.
    cmpeq   $m10, $m9, 0
    mul     $m10, $m10, $m1                    // out when f32, else 0
    or      $m10, $m10, $m0
    or      $m10, $m10, $m5
    and     $m10, $m10, 7
    brnz    $m10, rw_cols_generic
    cmpult  $m10, $m4, 12
    brnz    $m10, rw_cols_generic
    add     $m7, $m5, -48
    brz     $m8, rw_cols_block_sum
    cmpeq   $m10, $m8, REDUCE_OP_MEAN
    brnz    $m10, rw_cols_block_mean
    cmpeq   $m10, $m8, REDUCE_OP_MAX
    brnz    $m10, rw_cols_block_max
    cmpeq   $m10, $m8, REDUCE_OP_MIN
    brnz    $m10, rw_cols_block_min
    cmpeq   $m10, $m8, REDUCE_OP_PROD
    brnz    $m10, rw_cols_block_prod
    bri     rw_cols_generic                    // SUMSQ, ABS_SUM
    .align 8
rw_cols_bad_op:
    trap    ROWWISE_TRAP_BAD_OP

// vtx_reduce_cols_f32_split: one record for the six workers (the compute
// set's vertex step is 0): worker w ($WSR) takes columns [w CHUNK, (w + 1)
// CHUNK) cut at COLS (CHUNK even, the compiler's) and folds them as
// vtx_reduce_cols_f32 folds its record's.
    .align 8
    .globl vtx_reduce_cols_f32_split
vtx_reduce_cols_f32_split:
    ld32    $m2, $m13, $mzero, REDUCE_COLS_V_ROWS
    ld32    $m4, $m13, $mzero, REDUCE_COLS_V_COLS
    get     $m3, $WSR
    ld32    $m6, $m13, $mzero, REDUCE_COLS_SPLIT_V_CHUNK
    and     $m3, $m3, 7
    mul     $m3, $m3, $m6                      // the worker's first column
    min     $m3, $m3, $m4
    add     $m6, $m3, $m6
    min     $m6, $m6, $m4
    sub     $m4, $m6, $m3                      // its columns
    brz     $m2, rw_cols_exit
    brz     $m4, rw_cols_exit
    ld32    $m0, $m13, $mzero, REDUCE_COLS_V_IN
    ld32    $m1, $m13, $mzero, REDUCE_COLS_V_OUT
    ld32    $m5, $m13, $mzero, REDUCE_COLS_V_IN_STEP
    ld32    $m8, $m13, $mzero, REDUCE_COLS_V_OP
    ld32    $m9, $m13, $mzero, REDUCE_COLS_V_OUT_F16
    shl     $m6, $m3, 2
    add     $m0, $m0, $m6
    shl     $m6, $m3, 1                        // 2 bytes a column of f16 out,
    cmpeq   $m10, $m9, 0                       // 4 of f32
    mul     $m10, $m10, $m6
    add     $m1, $m1, $m6
    add     $m1, $m1, $m10
    bri     rw_cols_go

// A block of 12 columns (6 pairs) held in $a2..$a13 over all the rows: row 0
// loaded, then one rpt pass a row: 6 ld64step, 6 pair ops, 1 add: 7 issues
// for 12 elements.  Only single-access loads: no placement can conflict.
.macro RW_COLS_BLOCK label, op, mean
    .align 8
\label:
    ld64    $a2:3, $m0, $mzero, 0
    ld64    $a4:5, $m0, $mzero, 1
    ld64    $a6:7, $m0, $mzero, 2
    ld64    $a8:9, $m0, $mzero, 3
    ld64    $a10:11, $m0, $mzero, 4
    ld64    $a12:13, $m0, $mzero, 5
    mov     $m6, $m5
    rpt     $m2, (2f - 1f) / 8 - 1
1:
    { ld64step $a0:1, $m0, $m6+=, 1 ; fnop }
    { ld64step $a0:1, $m0, $m6+=, 1 ; \op $a2:3, $a2:3, $a0:1 }
    { ld64step $a0:1, $m0, $m6+=, 1 ; \op $a4:5, $a4:5, $a0:1 }
    { ld64step $a0:1, $m0, $m6+=, 1 ; \op $a6:7, $a6:7, $a0:1 }
    { ld64step $a0:1, $m0, $m6+=, 1 ; \op $a8:9, $a8:9, $a0:1 }
    { ld64step $a0:1, $m0, $m6+=, 1 ; \op $a10:11, $a10:11, $a0:1 }
    { add   $m6, $m6, $m7 ; \op $a12:13, $a12:13, $a0:1 }
2:
    .if \mean
    ld32    $a0, $m13, $mzero, REDUCE_COLS_V_SCALE
    mov     $a1, $a0
    { nop ; f32v2mul $a2:3, $a2:3, $a0:1 }
    { nop ; f32v2mul $a4:5, $a4:5, $a0:1 }
    { nop ; f32v2mul $a6:7, $a6:7, $a0:1 }
    { nop ; f32v2mul $a8:9, $a8:9, $a0:1 }
    { nop ; f32v2mul $a10:11, $a10:11, $a0:1 }
    { nop ; f32v2mul $a12:13, $a12:13, $a0:1 }
    .endif
    add     $m0, $m0, 48
    brnz    $m9, 3f
    st64step $a2:3, $mzero, $m1+=, 1
    st64step $a4:5, $mzero, $m1+=, 1
    st64step $a6:7, $mzero, $m1+=, 1
    st64step $a8:9, $mzero, $m1+=, 1
    st64step $a10:11, $mzero, $m1+=, 1
    st64step $a12:13, $mzero, $m1+=, 1
4:                                             // 8-byte aligned: no branch penalty
    add     $m4, $m4, -12
    cmpult  $m10, $m4, 12
    brz     $m10, \label
    brnz    $m4, rw_cols_generic
    exitz   $mzero
    .align 8
3:
    { nop ; f32v2tof16 $a0, $a2:3 }
    { st32step $a0, $mzero, $m1+=, 1 ; f32v2tof16 $a1, $a4:5 }
    { st32step $a1, $mzero, $m1+=, 1 ; f32v2tof16 $a0, $a6:7 }
    { st32step $a0, $mzero, $m1+=, 1 ; f32v2tof16 $a1, $a8:9 }
    { st32step $a1, $mzero, $m1+=, 1 ; f32v2tof16 $a0, $a10:11 }
    { st32step $a0, $mzero, $m1+=, 1 ; f32v2tof16 $a1, $a12:13 }
    st32step $a1, $mzero, $m1+=, 1
    bri     4b
.endm
    RW_COLS_BLOCK rw_cols_block_sum, f32v2add, 0
    RW_COLS_BLOCK rw_cols_block_mean, f32v2add, 1
    RW_COLS_BLOCK rw_cols_block_max, f32v2max, 0
    RW_COLS_BLOCK rw_cols_block_min, f32v2min, 0
    RW_COLS_BLOCK rw_cols_block_prod, f32v2mul, 0

// One column at a time, word loads (any 4-byte alignment, every op): 3
// issues an element.  $a4 the column's accumulator, $a2 t(x), $a6 scale;
// $m4 columns left - 1 (brnzdec).  f16: an even column waits in $a8 for its
// odd neighbour; the last column, if even, is stored in both halves.
.macro RW_COLS_T kind, d, s
    .if \kind == 0
    mov     \d, \s
    .elseif \kind == 1
    f32mul  \d, \s, \s
    .else
    f32abs  \d, \s
    .endif
.endm
.macro RW_COLS_COLUMN label, kind, op, mean
    .align 8
\label:
    ld32    $a0, $m0, $mzero, 0
    mov     $m6, $m5
    {
    rpt     $m2, (2f - 1f) / 8 - 1
    RW_COLS_T \kind, $a4, $a0
    }
1:
    { ld32  $a0, $m0, $m6, 0 ; fnop }
    {
    add     $m6, $m6, $m5
    RW_COLS_T \kind, $a2, $a0
    }
    { nop ; \op $a4, $a4, $a2 }
2:
    .if \mean
    { nop ; f32mul $a4, $a4, $a6 }
    .endif
    brnz    $m9, 3f
    st32step $a4, $mzero, $m1+=, 1
    add     $m0, $m0, 4
    brnzdec $m4, \label
    exitz   $mzero
    .align 8                                   // branch targets 8-byte aligned: no penalty
3:
    brnz    $m10, 5f
    mov     $a8, $a4                           // even column: wait for the odd one
    setzi   $m10, 1
    add     $m0, $m0, 4
    brnzdec $m4, \label
    f32tof16 $a9, $a8                          // the last column, in both halves
    st32step $a9, $mzero, $m1+=, 1
    exitz   $mzero
    .align 8
5:
    mov     $a9, $a4
    f32v2tof16 $a10, $a8:9
    st32step $a10, $mzero, $m1+=, 1
    setzi   $m10, 0
    add     $m0, $m0, 4
    brnzdec $m4, \label
    exitz   $mzero
.endm
    .align 8
rw_cols_generic:
    ld32    $a6, $m13, $mzero, REDUCE_COLS_V_SCALE
    setzi   $m10, 0
    add     $m4, $m4, -1
    brz     $m8, rw_cols_column_sum
    cmpeq   $m11, $m8, REDUCE_OP_MAX
    brnz    $m11, rw_cols_column_max
    cmpeq   $m11, $m8, REDUCE_OP_SUMSQ
    brnz    $m11, rw_cols_column_sumsq
    cmpeq   $m11, $m8, REDUCE_OP_MEAN
    brnz    $m11, rw_cols_column_mean
    cmpeq   $m11, $m8, REDUCE_OP_MIN
    brnz    $m11, rw_cols_column_min
    cmpeq   $m11, $m8, REDUCE_OP_PROD
    brnz    $m11, rw_cols_column_prod
    bri     rw_cols_column_abs
    RW_COLS_COLUMN rw_cols_column_sum, 0, f32add, 0
    RW_COLS_COLUMN rw_cols_column_max, 0, f32max, 0
    RW_COLS_COLUMN rw_cols_column_sumsq, 1, f32add, 0
    RW_COLS_COLUMN rw_cols_column_mean, 0, f32add, 1
    RW_COLS_COLUMN rw_cols_column_min, 0, f32min, 0
    RW_COLS_COLUMN rw_cols_column_prod, 0, f32mul, 0
    RW_COLS_COLUMN rw_cols_column_abs, 2, f32add, 0
    .align 8
rw_cols_exit:
    exitz   $mzero

// ---- vtx_reduce_partials_f16 ----------------------------------------------------
// Columns 8 at a time: the first row's 16 bytes loaded with two ld64, then
// each further row's loaded while the previous one goes into the
// accumulators (f16v8acc: lane i into $AACC[2i], each half widened exactly
// and added in f32), the last row added after the loop; f32v2gina reads the
// eight sums out in column order and leaves $AACC zero for the next group.
// Paced rows (REST in region 1, STEP < 4096): one ld2x64pace a row loads
// its two 64-bit halves from the two elements of a region-1 pair (address
// bit 3), both addresses stepping STEP; otherwise two ld64 and an add.
// $m0:1 the pace pair, $m2 rows - 1, $m3 the pace stride (STEP / 8),
// $m4 groups - 1, $m5 STEP, $m6 the first row, $m7 the other rows, $m8 the
// row pointer (generic) or REST + 8, $m9 OUT_F16, $m10 out.
.macro RW_PARTIALS_GROUP label, fast, f16
    .align 8
\label:
    { ld64  $a0:1, $m6, $mzero, 0 ; fnop }
    { ld64  $a2:3, $m6, $mzero, 1 ; fnop }
    { rpt   $m2, (2f - 1f) / 8 - 1 ; fnop }
1:
    .if \fast
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m3, 0b0101 ; f16v8acc $a0:3 }
    .else
    { ld64  $a0:1, $m8, $mzero, 0 ; f16v8acc $a0:3 }
    { ld64  $a2:3, $m8, $mzero, 1 ; fnop }
    { add   $m8, $m8, $m5 ; fnop }
    .endif
2:
    { add   $m6, $m6, 16 ; f16v8acc $a0:3 }
    { add   $m7, $m7, 16 ; f32v2gina $a0:1, $azeros }
    .if \fast
    { add   $m8, $m7, 8 ; f32v2gina $a2:3, $azeros }
    .else
    { mov   $m8, $m7 ; f32v2gina $a2:3, $azeros }
    .endif
    .if \f16
    .if \fast
    { tapack $m0:1, $m7, $m8, $mzero ; f32v2tof16 $a0, $a0:1 }
    .else
    { nop ; f32v2tof16 $a0, $a0:1 }
    .endif
    { nop ; f32v2tof16 $a1, $a2:3 }
    { st64step $a0:1, $mzero, $m10+=, 1 ; f32v2gina $a4:5, $azeros }
    { nop ; f32v2gina $a6:7, $azeros }
    { nop ; f32v2tof16 $a4, $a4:5 }
    { nop ; f32v2tof16 $a5, $a6:7 }
    { st64step $a4:5, $mzero, $m10+=, 1 ; fnop }
    .else
    { st64step $a0:1, $mzero, $m10+=, 1 ; f32v2gina $a4:5, $azeros }
    { st64step $a2:3, $mzero, $m10+=, 1 ; f32v2gina $a6:7, $azeros }
    { st64step $a4:5, $mzero, $m10+=, 1 ; fnop }
    .if \fast
    { st64step $a6:7, $mzero, $m10+=, 1 ; fnop }
    { tapack $m0:1, $m7, $m8, $mzero ; fnop }
    .else
    { st64step $a6:7, $mzero, $m10+=, 1 ; fnop }
    .endif
    .endif
    { brnzdec $m4, \label ; fnop }
    exitz   $mzero
.endm

    .align 8
    .globl vtx_reduce_partials_f16
vtx_reduce_partials_f16:
    { ld32  $m2, $m13, $mzero, RED_PARTIALS_V_ROWS ; setzi $a0, RW_FP_CLR_ZAACC }
    { ld32  $m4, $m13, $mzero, RED_PARTIALS_V_COLS ; uput $FP_CLR, $a0 }
    { brz   $m2, rw_partials_exit ; fnop }
    { brz   $m4, rw_partials_exit ; fnop }
    { and   $m8, $m4, 7 ; fnop }
    { brnz  $m8, rw_partials_bad_cols ; fnop }
    { ld32  $m6, $m13, $mzero, RED_PARTIALS_V_FIRST ; fnop }
    { ld32  $m7, $m13, $mzero, RED_PARTIALS_V_REST ; fnop }
    { ld32  $m10, $m13, $mzero, RED_PARTIALS_V_OUT ; fnop }
    { ld32  $m5, $m13, $mzero, RED_PARTIALS_V_STEP ; fnop }
    { ld32  $m9, $m13, $mzero, RED_PARTIALS_V_OUT_F16 ; fnop }
    { add   $m2, $m2, -1 ; fnop }
    { shr   $m4, $m4, 3 ; fnop }
    { add   $m4, $m4, -1 ; fnop }
    { mov   $m8, $m7 ; fnop }
    // Paced rows need REST in region 1 (address bit 19) and STEP / 8 in a
    // pace stride field (a signed 10-bit number of 64-bit atoms).
    { shr   $m3, $m7, 19 ; fnop }
    { brz   $m3, rw_partials_generic ; fnop }
    { shr   $m3, $m5, 12 ; fnop }
    { brnz  $m3, rw_partials_generic ; fnop }
    { shr   $m3, $m5, 3 ; fnop }
    { add   $m8, $m7, 8 ; fnop }
    { tapack $m0:1, $m7, $m8, $mzero ; fnop }
    { brz   $m9, rw_partials_fast_f32 ; fnop }
    { bri   rw_partials_fast_f16 ; fnop }
rw_partials_generic:
    { brz   $m9, rw_partials_generic_f32 ; fnop }
    { bri   rw_partials_generic_f16 ; fnop }
rw_partials_bad_cols:
    trap    ROWWISE_TRAP_PARTIALS_COLS
    RW_PARTIALS_GROUP rw_partials_fast_f16, 1, 1
    RW_PARTIALS_GROUP rw_partials_fast_f32, 1, 0
    RW_PARTIALS_GROUP rw_partials_generic_f16, 0, 1
    RW_PARTIALS_GROUP rw_partials_generic_f32, 0, 0
    .align 8
rw_partials_exit:
    exitz   $mzero
