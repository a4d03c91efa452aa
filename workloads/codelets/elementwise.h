/*
 * elementwise.h — the element-wise codelets of the kernel library
 * (workloads/codelets/elementwise.S): vertex record layouts and the
 * bit-exact C models (elementwise_model.c).
 *
 * Codelets (worker vertices, calling convention in abi.h):
 *   vtx_binary_f32        out[r][c] = in0[r][c] OP in1[r * in1_row_step +
 *                         c * in1_col_step], OP in enum elementwise_binary_op
 *   vtx_binary_f32_split  vtx_binary_f32 on one row, one record for the six
 *                         workers (below)
 *   vtx_binary_f32_split_rows
 *                         vtx_binary_f32 on rows, one record for the six
 *   vtx_unary_f32         out[i] = F(in[i]), F in enum elementwise_unary_fn
 *   vtx_unary_f32_split   vtx_unary_f32, one record for the six workers
 *   vtx_cast_f32_to_f16   out[i] = (f16) in[i], round to nearest even
 *   vtx_cast_f32_to_f16_sr  the same rounded stochastically (ISA2 §2.13.6):
 *                         each f32v2tof16 (a pair, in order) or f32tof16
 *                         (an odd last element) advances the worker
 *                         context's PRNG once and takes its rounding bits
 *                         from it; two more cycles (worker, $FP_CTL.ESR set)
 *   vtx_cast_f16_to_f32   out[i] = (f32) in[i]
 *   vtx_scaled_add_f32    out[i] = x[i] + scale * y[i] (popops' scaledAddTo:
 *                         f32v2axpy, the product rounded to f32, then the
 *                         sum: the same bits as a Mul and an Add); out may
 *                         be x or y (in place)
 *   vtx_scaled_add_f16    the same with x and out f16, y f32: x widened
 *                         (exact), the f32 result rounded once to f16 (to
 *                         nearest even; _sr: stochastically, each
 *                         f32v2tof16 taking a PRNG step as
 *                         vtx_cast_f32_to_f16_sr does)
 *   vtx_copy              n bytes from src to dst
 *   vtx_fill              n bytes of zeros at dst
 *
 * Alignment and placement (what the compiler must give, and what makes a
 * codelet take its fast loop; every placement that meets the alignment is
 * correct and never raises a memory conflict):
 *   - binary: in0, in1 and out 8-byte aligned; row steps and the in1 column
 *     step multiples of 4 bytes.  A row is "paired" when its in0/out start
 *     (and, for a column step of 4, its in1 start) is 8-byte aligned: it
 *     runs two elements per f32v2 instruction; other rows, and column steps
 *     other than 0 and 4, run element by element.  A paired row of add, sub,
 *     mul, max or min takes the one-bundle-per-pair loop (ld2xst64pace /
 *     ldst64pace) when its streams are apart (below); else the loop of
 *     single loads and stores.  out may equal in0 (in place).
 *   - unary: in and out 8-byte aligned; out may equal in.  relu and abs
 *     take the one-bundle-per-pair loop (ldst64pace) when in and out are
 *     apart.
 *   - casts: in and out 8-byte aligned.  An f16 tensor is padded to 8
 *     bytes: f32 -> f16 with n odd writes one 32-bit word whose upper half
 *     is the padding element (it gets a copy of the last element).
 *   - copy: src, dst 4-byte aligned, bytes a multiple of 4; 64-bit loop
 *     when both are 8-byte aligned (a 4-byte head when both are 4 mod 8),
 *     word by word otherwise.
 *   "Apart" (GC200 and Bow memory, ISA2 §2.8.4; on GC2, whose last 16 KiB
 *   are one element that is not interleaved, streams both in it are not
 *   apart by bit 3: the compiler should avoid that element for those):
 *   two address streams that step together by 8 bytes, starting
 *   at p and q (the store stream counted from where it would be at the
 *   same bundle, i.e. out - 24 for a store three pairs behind the loads),
 *   never meet in one memory element when |p - q| >= 32 KiB, or when both
 *   start in the interleaved region 1 (from 0x80000) and differ in address
 *   bit 3 (ISA2 §2.8.4, §2.8.11.1).  ld2xst64pace also needs in1 in region 1
 *   (ISA2 §3.7.5.1.2).  Tensors of one operation laid out one after another
 *   in region 1 are apart as soon as each is 32 KiB long, and in place
 *   (out = in0) is apart in region 1.
 *
 * Every codelet may read up to 24 bytes past the end of an input (within
 * CODELET_READ_SLACK_BYTES); what it computes from those bytes is never
 * stored, but arithmetic on them may set sticky $FP_STS flags (no
 * exception: $FP_CTL is 0).  A record with an op or function number out of
 * range stops the worker with `trap ELEMENTWISE_TRAP_BAD_OP`.
 */
#ifndef IPUSIM_CODELETS_ELEMENTWISE_H
#define IPUSIM_CODELETS_ELEMENTWISE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "isa/fp16.h"

#define ELEMENTWISE_TRAP_BAD_OP 0x45u   /* trap code: op/function out of range */

/* vtx_binary_f32 record (32-bit words). */
enum binary_f32_vertex {
    BINARY_F32_V_IN0 = 0,          /* in0, row 0 */
    BINARY_F32_V_IN1,              /* in1 element (0, 0) */
    BINARY_F32_V_OUT,              /* out, row 0 (may equal in0) */
    BINARY_F32_V_ROWS,             /* rows (0: nothing to do) */
    BINARY_F32_V_COLS,             /* elements per row */
    BINARY_F32_V_ROW_STEP,         /* bytes between rows of in0 and out (>= cols * 4) */
    BINARY_F32_V_IN1_ROW_STEP,     /* bytes between rows of in1 */
    BINARY_F32_V_IN1_COL_STEP,     /* bytes between columns of in1: 4 contiguous, 0 broadcast */
    BINARY_F32_V_OP,               /* enum elementwise_binary_op */
    BINARY_F32_V_WORDS
};

/* vtx_binary_f32_split and vtx_unary_f32_split records: the record of
 * vtx_binary_f32 (ROWS 0 or 1) or vtx_unary_f32, then CHUNK, the elements
 * each worker takes (even).  The compute set starts the six workers on the
 * one record (vertex step 0); worker w ($WSR) takes elements [w CHUNK,
 * (w + 1) CHUNK) cut at COLS (N), and runs them as the plain codelet runs a
 * row of its own record.  vtx_binary_f32_split_rows takes the record of
 * vtx_binary_f32 with CHUNK in rows: worker w takes rows [w CHUNK, (w + 1)
 * CHUNK) cut at ROWS (16 issues more than the plain start, 10 for a worker
 * left with nothing).  The work split is the compiler's, each worker
 * finds its share (15 issues more than the plain codelet's start for
 * binary, 12 for unary; 10 for a worker left with nothing), as
 * PopLibs' supervisor vertices split a region between their workers.
 * One record instead of six: 40 bytes a compute set for binary (240 as six
 * records), 32 for unary (144). */
enum binary_f32_split_vertex {
    BINARY_F32_SPLIT_V_CHUNK = BINARY_F32_V_WORDS,
    BINARY_F32_SPLIT_V_WORDS
};

/* The ops with an f32v2 instruction come first (the fast loops take
 * op < ELEMENTWISE_BINARY_V2_OPS). */
enum elementwise_binary_op {
    ELEMENTWISE_ADD = 0,           /* f32v2add */
    ELEMENTWISE_SUB,               /* f32v2sub: in0 - in1 */
    ELEMENTWISE_MUL,               /* f32v2mul */
    ELEMENTWISE_MAX,               /* f32v2max (maxNum: a quiet NaN loses) */
    ELEMENTWISE_MIN,               /* f32v2min */
    ELEMENTWISE_DIV,               /* f32div, one lane at a time: in0 / in1 */
    ELEMENTWISE_BINARY_OPS,
    ELEMENTWISE_BINARY_V2_OPS = ELEMENTWISE_DIV
};

/* vtx_unary_f32 record. */
enum unary_f32_vertex {
    UNARY_F32_V_IN = 0,
    UNARY_F32_V_OUT,               /* may equal in */
    UNARY_F32_V_N,                 /* elements */
    UNARY_F32_V_FN,                /* enum elementwise_unary_fn */
    UNARY_F32_V_A,                 /* f32 bits: scale of SCALE_SHIFT */
    UNARY_F32_V_B,                 /* f32 bits: shift of SCALE_SHIFT */
    UNARY_F32_V_WORDS
};

enum unary_f32_split_vertex {
    UNARY_F32_SPLIT_V_CHUNK = UNARY_F32_V_WORDS,
    UNARY_F32_SPLIT_V_WORDS
};

enum elementwise_unary_fn {
    ELEMENTWISE_RELU = 0,          /* max(x, +0) (f32v2max: relu(NaN) = +0) */
    ELEMENTWISE_NEG,               /* sign bit flipped (f32neg) */
    ELEMENTWISE_ABS,               /* sign bit cleared (f32v2abs) */
    ELEMENTWISE_EXP,               /* f32exp */
    ELEMENTWISE_LOG,               /* f32ln */
    ELEMENTWISE_SQRT,              /* f32sqrt */
    ELEMENTWISE_RSQRT,             /* f32oorx */
    ELEMENTWISE_RECIPROCAL,        /* f32oox */
    ELEMENTWISE_TANH,              /* f32tanh */
    ELEMENTWISE_SIGMOID,           /* f32sigm */
    ELEMENTWISE_ERF,               /* Abramowitz & Stegun 7.1.26 (below) */
    ELEMENTWISE_GELU_ERF,          /* x/2 (1 + erf(x / sqrt 2)) */
    ELEMENTWISE_GELU_TANH,         /* x/2 (1 + tanh(sqrt(2/pi) x (1 + 0.044715 x^2))) */
    ELEMENTWISE_SCALE_SHIFT,       /* a * x + b: the product rounded, then the sum */
    ELEMENTWISE_FLOOR,             /* ONNX Floor: r = f32int(x), r - 1 where r > x (below) */
    ELEMENTWISE_CEIL,              /* ONNX Ceil: -floor(-x) */
    ELEMENTWISE_UNARY_FNS
};

/* vtx_cast_f32_to_f16(_sr) and vtx_cast_f16_to_f32 records. */
enum cast_vertex {
    CAST_V_IN = 0,
    CAST_V_OUT,
    CAST_V_N,                      /* elements */
    CAST_V_WORDS
};
#define CAST_F32_TO_F16_V_WORDS CAST_V_WORDS
#define CAST_F16_TO_F32_V_WORDS CAST_V_WORDS

/* vtx_scaled_add_f32 / _f16 / _f16_sr record.  x, y and out 8-byte
 * aligned (f16: x and out 4-byte aligned; a worker's share of an f16
 * tensor starts at an even element).  f32: the pace loop (one bundle a
 * pair, ld2xst64pace) when y is in region 1 and x, y and out - 24 are
 * apart from each other (the binary codelet's test); else three bundles a
 * pair.  f16: three bundles a pair.  Loads run up to 24 bytes past x and y.
 * Worker issues for n >= 1 (one each; P = floor(n / 2), Q = ceil(n / 2),
 * rpt blocks of at most 4095 iterations: 4 issues more a block past the
 * first), held exactly by tests/test_codelets_elementwise.c ("scaled add"):
 *   f32 pace:    68 + P + (P odd), 2 more with an odd last element
 *                (three apart tests of 15 issues each among the 68)
 *   f32 single:  23 + 3 Q, when y is in region 0 (a stream found not apart
 *                adds the tests run before it: 15 each)
 *   f16:         24 + 3 Q, 32 + 3 Q with an odd last element; _sr 2 more
 *   n = 0: 7 (_sr 9).
 * Per element at large n, six workers: f32 0.5 tile cycles (pace), 1.5
 * (single); f16 1.5.  PopLibs' estimates (popops PerformanceEstimation.cpp,
 * getScaledArithmeticSupervisorCycleEstimate): float, the interleaved
 * fast path 1 worker cycle a pair (0.5 a element), 3 otherwise; half data
 * with float deltas 5 worker cycles a vector of 4 (1.25 tile cycles an
 * element against our 1.5: ipusim's ISA table has no f32v4tof16). */
enum scaled_add_vertex {
    SCALED_ADD_V_X = 0,            /* x: f32 (f16 for the f16 codelets) */
    SCALED_ADD_V_Y,                /* y: f32 */
    SCALED_ADD_V_OUT,              /* out: x's type; may equal x (f32: or y) */
    SCALED_ADD_V_N,                /* elements (0: nothing to do) */
    SCALED_ADD_V_SCALE,            /* f32 bits of the scale */
    SCALED_ADD_V_WORDS
};

/* vtx_fill record: BYTES (a multiple of 4) of zeros from DST (8-byte
 * aligned); writes nothing past them. */
enum fill_vertex {
    FILL_V_DST = 0,
    FILL_V_BYTES,
    FILL_V_WORDS
};

/* vtx_copy record. */
enum copy_vertex {
    COPY_V_SRC = 0,
    COPY_V_DST,
    COPY_V_BYTES,                  /* a multiple of 4 */
    COPY_V_WORDS
};

/*
 * The bit-exact models.  Each performs the codelet's instructions on one
 * element in the codelet's order with the tile's arithmetic (isa/fparith.h:
 * operands and results of f32 arithmetic flushed from the denormal range,
 * NaN results the tile's fixed quiet NaN, special cases as ISA2's
 * pseudo-code, $FP_CTL = 0), so a simulated codelet's output equals the
 * model's bit for bit.  Transcendentals are ipusim's (the C library in
 * double, rounded once, see fparith.h), which is what the simulator gives.
 *
 * erf is A&S 7.1.26 (Abramowitz & Stegun, Handbook of Mathematical
 * Functions, 1964, eq. 7.1.26):
 *     erf(x) = sign(x) (1 - (a1 t + a2 t^2 + a3 t^3 + a4 t^4 + a5 t^5) e^(-x^2)),
 *     t = 1 / (1 + p |x|), p = 0.3275911, a1..a5 = 0.254829592,
 *     -0.284496736, 1.421413741, -1.453152027, 1.061405429,
 * with |error| <= 1.5e-7 in exact arithmetic.  In f32 the codelet adds
 * the roundings of the evaluation: t = 1/(1 + p|x|) (one rounding each
 * for the product, the sum and the reciprocal: 3u relative, and the
 * polynomial's derivative in t is below 1.1), ten Horner steps on values
 * below 1.5 (each at most u * 1.5 absolute, shrunk by later factors t <= 1),
 * e^-x^2 (2u relative), the product and 1 - q e (2u): in all below
 * 3.3u + 15u + 4u ~= 1.3e-6 with u = 2^-24, so the codelet stays within
 * ELEMENTWISE_ERF_ABS_ERROR = 1.5e-6 of the true erf (measured on random
 * inputs: 4.4e-7).  sign(x) is taken as max(min(x, 2^-126), -2^-126) *
 * 2^126 (exact), so erf(±0) = ±0 exactly, erf(±inf) = ±1, erf(NaN) = NaN.
 * gelu_tanh(-inf) is NaN (-inf * 0); gelu_erf(-inf) likewise.
 *
 * floor and ceil.  The tile rounds to an integral value only to nearest
 * even: ipusim's f32int has no rounding-mode operand (isa.def; ISA2's
 * f32int takes a TileRoundMode, Table 4.3), and f32toi32 rounds to nearest
 * too and saturates.  So floor is built from what there is, one lane at a
 * time (exact at every step):
 *     r = f32int(x)                 nearest integer, ties to even
 *     d = f32fromi32(f32cmpgt(r, x))  -1.0 where r > x (the mask 0xffffffff
 *                                   read as i32 is -1), +0.0 elsewhere
 *     floor(x) = f32min(r + d, x)
 * r + d is exact (|r| < 2^24 when r > x; d = +0 otherwise) and is floor(x)
 * but for the sign of a zero: -0 + +0 = +0 for x = -0.  floor(x) <= x, and
 * the tile's f32min picks the negative of two zeros, so the min keeps
 * every other value and gives floor(-0) = -0.  ceil(x) = -floor(-x), the
 * negations f32v2mul by -1 (exact; a subtraction from zero would turn -0
 * into +0).  Every f32 comes out as ONNX wants: integers (all |x| >= 2^23
 * among them) and ±inf unchanged, ±0 kept, floor(-0.5) = -1, ceil(-0.5) =
 * -0, NaN gives the tile's quiet NaN (a signalling NaN sets the invalid
 * flag of $FP_STS, as any NaN in the compare does).  Denormal inputs are
 * read as ±0 like every f32 operand (fparith.h), so floor(-2^-149) = -0
 * and ceil(2^-149) = +0 (ONNX: -1 and 1).
 */
#define ELEMENTWISE_ERF_ABS_ERROR 1.5e-6

float elementwise_model_binary(enum elementwise_binary_op op, float a, float b);
float elementwise_model_unary(enum elementwise_unary_fn fn, float x, float a, float b);
f16_t elementwise_model_f32_to_f16(float x);
/* vtx_cast_f32_to_f16_sr of one element: x rounded with the 32 bits
 * `random` (fp16_sr_bits of the instruction's PRNG step, its lane), then
 * converted as vtx_cast_f32_to_f16 converts.  The worker's n elements take
 * their bits in order: pair p (elements 2p, 2p + 1) the p-th step, lanes 0
 * and 1; an odd last element the next step, lane 0. */
f16_t elementwise_model_f32_to_f16_sr(float x, uint32_t random);
float elementwise_model_f16_to_f32(f16_t h);
/* vtx_scaled_add_f32 of one element: x + scale y, the product rounded to
 * f32 first (f32v2axpy, exec_aux.c). */
float elementwise_model_scaled_add_f32(float x, float y, float scale);
/* vtx_scaled_add_f16 of one element; with sr, vtx_scaled_add_f16_sr's
 * rounding with the 32 bits `random` (as elementwise_model_f32_to_f16_sr:
 * pair p the worker's p-th PRNG step, lanes 0 and 1; an odd last element
 * is rounded again, alone, with the step after the last pair's, lane 0). */
f16_t elementwise_model_scaled_add_f16(f16_t x, float y, float scale, bool sr, uint32_t random);

/* Whole-record models over host arrays laid out as on the tile: steps in
 * bytes as in the record, in1_col_step_bytes any multiple of 4.  The
 * binary model writes out[r * row_step + c] elementwise; out may be in0. */
void elementwise_model_binary_f32(enum elementwise_binary_op op, const float *in0, const float *in1, float *out,
                                  uint32_t rows, uint32_t cols, uint32_t row_step_bytes,
                                  uint32_t in1_row_step_bytes, uint32_t in1_col_step_bytes);
void elementwise_model_unary_f32(enum elementwise_unary_fn fn, float a, float b, const float *in, float *out,
                                 size_t n);

#endif
