/*
 * matmul_f32.h — the f32 matrix-product codelets of the kernel library
 * (workloads/codelets/matmul_f32.S): record layouts, trap codes, the
 * packed weight layout, the bit-exact C model, the error bound against an
 * f32 reference, and the helpers the compiler uses to place operands and
 * to count cycles.
 *
 * sv_matmul_f32 (supervisor codelet, abi.h):
 *
 *     C[M x N] += A[M x K] * B[K x N]     A, B, C f32
 *
 * on the AMP's f32 path (f32sisov2amp, 16 MACs an issue: ISA2 §2.9.11),
 * sizes and addresses from its record at run time.
 *
 * Granularity: the f32 AMP's weight block is 8 inputs (K) by 16 units
 * (N): eight phases each multiply one input by one 32-bit half of each of
 * the 16 units' four $CWEI entries (64 entries, 512 bytes).  So K must be
 * a multiple of 8 and N a multiple of 16; M is any value 0 .. 6 * 4095
 * (M, K or N = 0: the codelet returns at once and touches nothing).
 *
 * Operands (pointers 8-byte aligned unless said otherwise):
 *   A  M rows of K f32, row r at A + r * A_ROW_STEP (A_ROW_STEP >= 4 K);
 *   B  the weights packed by matmul_pack_weights_f32 (or vtx_pack_b_f32),
 *      k * n f32, 16-byte aligned and in region 1 (ld128putcs, ISA2
 *      §2.7.7);
 *   C  M rows of N f32, row r at C + r * C_ROW_STEP (C_ROW_STEP >= 4 N);
 *      C holds the initial partial sums (zeros for a plain product) and
 *      receives the result.  C must not overlap A or B.
 *   SCRATCH: MATMUL_F32_SCRATCH_BYTES, 8-byte aligned, for the six worker
 *      records; not shared with another codelet running at the same time.
 * Reads: never outside the rows of A and C and the k * n values of B.
 *
 * Placement (ISA2 §2.8.11.1; memmodel/tile_memory.h): the fast loop's
 * ld2xst64pace reads a word of A, a word of C and writes a word of C in
 * one instruction (matmul_f32.S's header: the loaded and the stored word
 * of C have word indices of different parity).  The fast condition,
 * tested by the supervisor at run time, is all of:
 *   - C in region 1 (C >= 0x80000: ld2xst64pace's second load);
 *   - C_ROW_STEP % 16 == 0;
 *   - A_ROW_STEP <= 4040 and C_ROW_STEP <= 4040 bytes (the pace strides
 *     are signed 10-bit counts of 8-byte atoms, and a chunk may be walked
 *     backwards: -(step / 8) - 7 >= -512);
 *   - A and C in disjoint 32 KiB address blocks:
 *       (A_last >> 15) < (C >> 15)  or  (C_last >> 15) < (A >> 15),
 *     with A_last = A + (M-1) A_ROW_STEP + 4 K - 1 and C_last = C + (M-1)
 *     C_ROW_STEP + 4 N - 1.  A 32 KiB block from 0x80000 is one interleaved
 *     element pair; A anywhere in region 0 (outside the code's elements)
 *     with C in region 1 meets it.
 * matmul_f32_fast_placement() evaluates it.  Otherwise every row takes the
 * slow loop: single 64-bit loads and stores (never a conflict, any region,
 * any row step that is a multiple of 8), 26 worker issues a row and weight
 * block instead of 8.
 *
 * Rows are shared among the six workers (the first M % 6 take one more).
 * The fast loop reads 2 rows of A and 3 of C past the end of a worker's
 * chunk; a chunk with 3 rows after it is walked forwards, one with 3 rows
 * before it backwards, and one with neither (only when M <= 5) takes the
 * slow loop (matmul_f32_chunk()).  With the fast condition and M >= 6
 * every row is fast.
 *
 * Arithmetic (isa/exec_amp.c, exec_f32_amp): for each output element and
 * each block of 8 inputs, the partial sum is read from C (denormals
 * flushed, a NaN becomes the tile's quiet NaN), the 8 products x * w (each
 * operand flushed, the product rounded to f32 nearest even) are added one
 * after the other in input order (each sum rounded to f32, flushed), and
 * the sum is written back to C (flushed; NaN -> the quiet NaN).
 * matmul_model_f32() does exactly this.
 *
 * Error bound against an f32 reference (cblas_sgemm), for finite data
 * without overflow, with u = 2^-24: the codelet's sum of K products and
 * K additions onto c0 is, by the standard analysis of recursive summation
 * (Higham, Accuracy and Stability of Numerical Algorithms, §3.1), within
 * gamma(K + 1) (|c0| + sum_k |a_k b_k|) of the exact value, where gamma(n)
 * = n u / (1 - n u); each flush of a denormal (at most 2 per addition and
 * K / 8 block results) moves it by less than 2^-126.  The reference, in
 * any order and with or without fused multiply-adds, is within the same
 * gamma(K + 1) (the c0 added to it after is one more rounding).  So
 *   |C - C_ref| <= 2 gamma(K + 2) (|c0| + sum_k |a_k b_k|) + (3 K + 1) 2^-126
 * per element: matmul_f32_error_bound().
 *
 * Refused (trap n, ISA_EXC_BREAK with t->trap_code = n): MATMUL_F32_TRAP_*.
 *
 * Measured (tests/test_codelets_matmul_f32.c, A in region 0, C and B in
 * region 1, every chunk fast, the caller's 4 instructions included):
 *   M = 384, K = 128, N = 64: 211,619 cycles, 14.87 MACs a tile cycle =
 *   0.929 of the f32 AMP's peak of 16 (IPU_FACTS.md).
 * Cycles of a call with every chunk fast and M = 6 R: 327 + 6 G + G Bk
 * (229 + 48 R), G = N / 16 groups, Bk = K / 8 blocks (matmul_f32.S): a
 * weight block costs 32 ld128putcs and 5 supervisor issues, and per worker
 * 8 R AMP issues plus 32 (record, pipeline fill, rpt, exitz) that run six
 * at a time.
 */
#ifndef IPUSIM_CODELETS_MATMUL_F32_H
#define IPUSIM_CODELETS_MATMUL_F32_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "matmul.h"

/* Vertex record of sv_matmul_f32: 32-bit words. */
enum matmul_f32_record {
    MATMUL_F32_V_A,           /* address of A */
    MATMUL_F32_V_B,           /* address of the packed weights (16-byte aligned, region 1) */
    MATMUL_F32_V_C,           /* address of C */
    MATMUL_F32_V_M,
    MATMUL_F32_V_K,           /* a multiple of MATMUL_F32_K_BLOCK */
    MATMUL_F32_V_N,           /* a multiple of MATMUL_F32_N_GROUP */
    MATMUL_F32_V_A_ROW_STEP,  /* bytes from one row of A to the next */
    MATMUL_F32_V_C_ROW_STEP,  /* bytes from one row of C to the next */
    MATMUL_F32_V_SCRATCH,     /* MATMUL_F32_SCRATCH_BYTES for the worker records */
    MATMUL_F32_V_WORDS
};

/* Scratch: six worker records of 8 words, a 4-word record shared by the
 * workers (row steps, the current block's offsets in A's and C's rows),
 * the supervisor's own saved values. */
#define MATMUL_F32_SCRATCH_BYTES 232u

/* Trap codes of sv_matmul_f32 (the operand of its trap instruction). */
enum matmul_f32_trap {
    MATMUL_F32_TRAP_SIZES = 0x68,  /* K not a multiple of 8, or N not a multiple of 16 */
    MATMUL_F32_TRAP_ALIGN,         /* A, C, a row step or SCRATCH not 8-byte aligned, or B not 16 */
    MATMUL_F32_TRAP_B_REGION,      /* B below 0x80000: ld128putcs needs region 1 */
    MATMUL_F32_TRAP_ROWS,          /* M > 6 * 4095 (rpt counts) */
};

#define MATMUL_F32_K_BLOCK 8u      /* inputs per weight block */
#define MATMUL_F32_N_GROUP 16u     /* output columns per weight block (16 AMP units) */
#define MATMUL_F32_MAX_ROWS (6u * 4095u)
#define MATMUL_F32_MAX_FAST_ROW_STEP_BYTES 4040u

/* Vertex record of vtx_pack_b_f32 (a worker codelet): 32-bit words. */
enum pack_f32_vertex {
    PACK_F32_V_SRC,          /* B's element (0, 16 g0): the worker's first group */
    PACK_F32_V_DST,          /* where group g0's blocks start in the packed weights (8-byte aligned) */
    PACK_F32_V_BLOCKS,       /* K / 8 */
    PACK_F32_V_GROUPS,       /* groups of 16 columns for this worker (0: nothing) */
    PACK_F32_V_ROW_STEP,     /* bytes from B(k, n) to B(k + 1, n), a multiple of 8 */
    PACK_F32_V_WORDS
};

/* The AMP unit order: the column (within its group of 16) that unit u
 * (0..15) computes, 4 (u % 8 / 2) + 2 (u / 8) + u % 2: result pair j of a
 * row (phase j, set j % 2, engine j / 2) is columns 2 j, 2 j + 1. */
unsigned matmul_f32_unit_channel(unsigned unit);

/* The packed weights: for every output group g (n / 16) and weight block
 * j (k / 8), g-major, 16 rows of 8 f32, row u holding B[8 j .. 8 j + 7]
 * [16 g + matmul_f32_unit_channel(u)]; read 8 bytes at a time a block is
 * the $CWEI entries 0 .. 63 in order (entry 4 u + p: unit u, inputs 2 p and
 * 2 p + 1).  b is row-major k x n; packed receives k * n values. */
void matmul_pack_weights_f32(const float *b, size_t k, size_t n, float *packed);

/* C += A * B as the codelet computes it, bit for bit.  a: m x k, b: k x n,
 * c: m x n, all row-major and dense; k a multiple of 8 (n any). */
void matmul_model_f32(const float *a, const float *b, size_t m, size_t k, size_t n, float *c);

/* The bound above: the largest |codelet - f32 reference| for one element
 * with K = k and sum_abs = |c0| + sum_k |a_k b_k|. */
double matmul_f32_error_bound(size_t k, double sum_abs);

/* The record's operands, for the helpers below. */
typedef struct matmul_f32_args {
    uint32_t a, b, c;
    uint32_t m, k, n;
    uint32_t a_row_step, c_row_step;
    uint32_t amp_peak_macs;   /* for matmul_f32_cycles: the machine's f32 AMP MACs a tile cycle
                                 (amp_f32_peak_macs_per_cycle; 0: GC200/Bow's 16) */
} matmul_f32_args;

/* True when the placement meets the fast condition above (the sizes are
 * assumed valid). */
bool matmul_f32_fast_placement(const matmul_f32_args *a);

/* How worker w's (0..5) chunk is run, by the rule above (matmul.h's
 * matmul_chunk_of, the f16 codelet's rule); its first row run (the last of
 * the chunk when walked backwards) and its row count. */
enum matmul_f32_chunk {
    MATMUL_F32_CHUNK_EMPTY = MATMUL_CHUNK_EMPTY,
    MATMUL_F32_CHUNK_FORWARD = MATMUL_CHUNK_FORWARD,
    MATMUL_F32_CHUNK_BACKWARD = MATMUL_CHUNK_BACKWARD,
    MATMUL_F32_CHUNK_SLOW = MATMUL_CHUNK_SLOW
};
enum matmul_f32_chunk matmul_f32_chunk(const matmul_f32_args *a, unsigned w, uint32_t *first_row,
                                       uint32_t *rows);

/* Tile cycles of one call of sv_matmul_f32 for valid arguments, from the
 * issue of the control program's call (at tile cycle call_cycle, with no
 * worker running) to the codelet's return, the caller's next instruction
 * excluded: matmul_f32.S's count, on a machine whose AMP does
 * a->amp_peak_macs f32 MACs a cycle (GC2's 8: each f32sisov2amp, 16 MACs,
 * holds its worker two turns).  call_cycle matters only when the
 * workers' issue counts differ (M not a multiple of 6, slow chunks): the
 * phase of each runall decides which worker starts first. */
uint64_t matmul_f32_cycles(const matmul_f32_args *a, uint64_t call_cycle);

#endif
