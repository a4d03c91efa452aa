/*
 * matmul.h — the matrix-product codelets of the kernel library
 * (workloads/codelets/matmul.S): record layouts, trap codes, and C helpers
 * the compiler uses to place operands and to estimate cycles.
 *
 * sv_matmul_f16 (supervisor codelet, abi.h):
 *
 *     C[M x N] += A[M x K] * B[K x N]     A, B f16; C f16 or f32 partials
 *
 * on the AMP, exactly as workloads/kernels/amp_matmul.S does it for fixed
 * sizes (same weight blocks, same worker pipeline, same arithmetic: the
 * bit-exact model is matmul_model_f16 in workloads/kernels/matmul_model.c), with
 * sizes and addresses taken from its record at run time.
 *
 * Operands (all pointers 8-byte aligned unless said otherwise):
 *   A  M rows of K f16, row r at A + r * A_ROW_STEP (A_ROW_STEP >= 2 K);
 *   B  the weights packed by matmul_pack_weights (k * n f16), 16-byte
 *      aligned and in region 1 (ld128putcs, ISA2 §2.7.7);
 *   C  M rows of N partial sums (f16 or f32 by PARTIALS), row r at
 *      C + r * C_ROW_STEP (C_ROW_STEP >= N * element bytes); C holds the
 *      initial partial sums (zeros for a plain product) and receives the
 *      result.  C must not overlap A or B.
 *   K a multiple of 16; N a multiple of the output group, 16 with f16
 *   partials and 8 with f32 partials; M any value 0 .. 6 * 4095 (M, K or
 *   N = 0: the codelet returns at once and touches nothing).
 *   SCRATCH: MATMUL_F16_SCRATCH_BYTES of tile memory, 8-byte aligned,
 *   where the supervisor writes the six worker records; not shared with
 *   another codelet running at the same time.
 *
 * Reads: never outside the rows of A and C and the k * n values of B (the
 * fast loop's pipeline reads ahead, but only into rows of the same tensor:
 * see "Placement" below), so no slack is needed after A, B or C.
 *
 * Placement (ISA2 §2.8.11.1; memmodel/tile_memory.h): the fast loop's
 * ld2xst64pace reads a word of A, a word of C and writes a word of C in
 * one instruction.  With its pipeline the loaded and the stored word of C
 * are 2 or 3 rows apart and their word indices differ by an odd number,
 * so they lie in different elements of a region-1 pair whenever
 * C_ROW_STEP is a multiple of 16; the A word and the loaded C word have
 * the same word index, so A and C must not share a memory element at all.
 * The fast condition, tested by the supervisor at run time, is all of:
 *   - C in region 1 (C >= 0x80000; ld2xst64pace's second load);
 *   - C_ROW_STEP % 16 == 0;
 *   - A_ROW_STEP <= 4072 and C_ROW_STEP <= 4072 bytes (the pace strides
 *     are signed 10-bit counts of 8-byte atoms, and a chunk may be walked
 *     backwards: -(step / 8) - 3 >= -512);
 *   - A and C in disjoint 32 KiB address blocks:
 *       (A_last >> 15) < (C >> 15)  or  (C_last >> 15) < (A >> 15),
 *     with A_last = A + (M-1) A_ROW_STEP + 2K - 1 and C_last = C + (M-1)
 *     C_ROW_STEP + N * element bytes - 1 (the last bytes used).  A block of
 *     32 KiB from 0x80000 is one interleaved element pair; region 0 lies
 *     below every region-1 block, so A anywhere in region 0 (outside the
 *     code's elements, abi.h) with C in region 1 meets it.
 * matmul_f16_fast_placement() evaluates it.  Otherwise every row takes
 * the slow loop: single 64-bit loads and stores (never a conflict, any
 * region, any row length), 14 worker issues a row instead of 4.
 *
 * Rows are shared among the six workers as amp_matmul.S does (the first
 * M % 6 take one more).  The fast loop reads 2 rows of A and 3 of C past
 * the end of a worker's chunk; a chunk with 3 rows after it is walked
 * forwards, one with 3 rows before it backwards (over-reads then fall in
 * the previous chunk), and one with neither (only when M <= 5) takes the
 * slow loop.  With the fast condition and M >= 6 every row is fast.
 *
 * Refused (trap n, ISA_EXC_BREAK with t->trap_code = n): MATMUL_TRAP_*.
 */
#ifndef IPUSIM_CODELETS_MATMUL_H
#define IPUSIM_CODELETS_MATMUL_H

#include <stdbool.h>
#include <stdint.h>

#include "workloads/kernels/matmul_model.h"

/* Vertex record of sv_matmul_f16: 32-bit words. */
enum matmul_f16_record {
    MATMUL_F16_V_A,           /* address of A */
    MATMUL_F16_V_B,           /* address of the packed weights (16-byte aligned, region 1) */
    MATMUL_F16_V_C,           /* address of C */
    MATMUL_F16_V_M,
    MATMUL_F16_V_K,
    MATMUL_F16_V_N,
    MATMUL_F16_V_A_ROW_STEP,  /* bytes from one row of A to the next */
    MATMUL_F16_V_C_ROW_STEP,  /* bytes from one row of C to the next */
    MATMUL_F16_V_PARTIALS,    /* enum matmul_partials: 0 f32 (f16v4sisoamp), 1 f16 (f16v4hihov4amp) */
    MATMUL_F16_V_SCRATCH,     /* MATMUL_F16_SCRATCH_BYTES for the worker records */
    MATMUL_F16_V_WORDS
};

/* Scratch: six worker records of 8 words (read by the workers at the
 * call's first launch only: they keep the values in registers for the
 * later weight blocks), a 2-word record shared by the workers (the row
 * steps, for the slow loop), then the supervisor's own saved values. */
#define MATMUL_F16_SCRATCH_BYTES 232u

/* Trap codes of sv_matmul_f16 (the operand of its trap instruction). */
enum matmul_trap {
    MATMUL_TRAP_SIZES = 0x60,  /* K not a multiple of 16, or N not a multiple of the group */
    MATMUL_TRAP_PARTIALS,      /* PARTIALS neither 0 nor 1 */
    MATMUL_TRAP_ALIGN,         /* A, C, a row step or SCRATCH not 8-byte aligned, or B not 16 */
    MATMUL_TRAP_B_REGION,      /* B below 0x80000: ld128putcs needs region 1 */
    MATMUL_TRAP_ROWS,          /* M > 6 * 4095 (rpt counts) */
};

#define MATMUL_MAX_ROWS (6u * 4095u)
#define MATMUL_MAX_FAST_ROW_STEP_BYTES 4072u

/* The record's operands, for the helpers below. */
typedef struct matmul_f16_args {
    uint32_t a, b, c;
    uint32_t m, k, n;
    uint32_t a_row_step, c_row_step;
    enum matmul_partials partials;
    uint32_t amp_peak_macs;   /* for matmul_f16_cycles: the machine's f16 AMP MACs a tile cycle
                                 (amp_f16_peak_macs_per_cycle; 0: GC200/Bow's 64) */
    bool worklists;           /* for matmul_f16_cycles: the call is sv_matmul_f16_wl's */
} matmul_f16_args;

/* True when the placement meets the fast condition above (the sizes are
 * assumed valid). */
bool matmul_f16_fast_placement(const matmul_f16_args *a);

/* How a worker's chunk is run: the rule above, for worker w (0..5). */
enum matmul_chunk { MATMUL_CHUNK_EMPTY, MATMUL_CHUNK_FORWARD, MATMUL_CHUNK_BACKWARD, MATMUL_CHUNK_SLOW };
enum matmul_chunk matmul_f16_chunk(const matmul_f16_args *a, unsigned w, uint32_t *first_row, uint32_t *rows);

/* The rule itself, the same in both matmul codelets (matmul_f32.h): worker
 * w's (0..5) share of m rows (the first m % 6 take one more), how it is run
 * given whether the placement is fast, its first row run (the last of the
 * chunk when walked backwards) and its row count. */
enum matmul_chunk matmul_chunk_of(uint32_t m, bool fast, unsigned w, uint32_t *first_row, uint32_t *rows);

/*
 * sv_matmul_f16_wl (supervisor codelet): the same product, bit for bit
 * and on the same loops, with the work split done by the compiler, as
 * poplibs' ConvPartial1x1Out vertices take worklists made when the graph
 * is compiled (lib/poplin/ConvPartials.cpp): the record carries each
 * worker's list entry — its first row run, its row count and how it runs
 * them, by the rule above — and the fields they share: A's and C's
 * addresses and row steps, both packed pace strides, B, the output groups
 * and weight blocks less one, and whether the workers' kinds differ (the
 * dispatch stubs).  The supervisor loads B's address and the loop counts
 * and starts the workers; each works out its own A and C addresses at its
 * first launch (every worker's vertex base is the record, its index in
 * $WSR picks its entry).  No scratch, no checks at run time:
 * matmul_f16_wl_record refuses what sv_matmul_f16 would trap on (and
 * zero sizes, where the compiler makes no call).  The set-up takes 21
 * supervisor issues (22 with f16 partials) where sv_matmul_f16 takes 339
 * (340); a worker's first launch 4 R + 40 issues on the fast loop (14 R +
 * 32 slow, 9 idle) where sv_matmul_f16's takes 4 R + 26 (14 R + 21, 7).
 * The record is 14 words; sv_matmul_f16's is 10 words and 232 bytes of
 * scratch.
 */
enum matmul_f16_wl_record {
    MATMUL_F16_WL_WORKER = 0,   /* a word a worker: first row | rows << 16 | (4 kind) << 28,
                                   kind 0 idle, 1 forwards, 2 backwards, 3 slow */
    MATMUL_F16_WL_A_LESS_32 = 6,      /* A's and C's addresses - 32 (a launch adds 32 first) */
    MATMUL_F16_WL_C_LESS_32,
    MATMUL_F16_WL_A_ROW_STEP,
    MATMUL_F16_WL_C_ROW_STEP,
    MATMUL_F16_WL_STRIDES_FORWARDS,   /* ld2x64pace's packed strides, atoms */
    MATMUL_F16_WL_STRIDES_BACKWARDS,
    MATMUL_F16_WL_B,
    MATMUL_F16_WL_LOOPS,              /* N / group - 1 | (K / 16 - 1) << 15 | the workers' kinds
                                         differ (the stubs) << 30 | f16 partials << 31 */
    MATMUL_F16_WL_WORDS
};
#define MATMUL_WL_MAX_LOOP 0x8000u    /* output groups or weight blocks a call */

/* sv_matmul_f16_wl's record for a's operands (amp_peak_macs and worklists
 * ignored); false, with *why, for arguments it cannot take. */
bool matmul_f16_wl_record(const matmul_f16_args *a, uint32_t rec[MATMUL_F16_WL_WORDS], const char **why);

/* Tile cycles of one call of sv_matmul_f16 for valid arguments, from the
 * issue of the control program's call (at tile cycle call_cycle, with no
 * worker running) to the codelet's return, the caller's next instruction
 * excluded: the count matmul.S's header derives, for every row count and
 * placement, on a machine whose AMP does a->amp_peak_macs a cycle (an AMP
 * issue doing more, GC2's f16v4hihov4amp, holds its worker two turns).  call_cycle matters only when the workers' issue counts
 * differ (M not a multiple of 6, slow chunks): the phase of each runall
 * decides which worker starts first. */
uint64_t matmul_f16_cycles(const matmul_f16_args *a, uint64_t call_cycle);
/* (With a->worklists the call is sv_matmul_f16_wl's, on its record.) */

#endif
