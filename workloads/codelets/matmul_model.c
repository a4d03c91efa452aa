/*
 * matmul_model.c — the host side of the matmul codelets (matmul.h): the
 * fast-placement condition, the chunk rule and the cycle count, each the
 * same decision or sum that workloads/codelets/matmul.S makes or takes
 * (the cycle count launch by launch: the call's first launch, a group's
 * first block and the other blocks cost the workers different set-up).
 * The arithmetic model is matmul_model_f16 (workloads/kernels/matmul_model.c): the
 * codelet computes exactly what amp_matmul.S does.
 */
#include "matmul.h"

#include "abi.h"

#define REGION1_BASE 0x80000u
#define PAIR_SHIFT 15u   /* 32 KiB blocks: one interleaved element pair of region 1 */

static uint32_t c_elem_bytes(enum matmul_partials p)
{
    return p == MATMUL_PARTIALS_F16 ? 2u : 4u;
}

bool matmul_f16_fast_placement(const matmul_f16_args *a)
{
    if (a->m == 0)
        return true;
    uint32_t a_last = a->a + (a->m - 1) * a->a_row_step + 2 * a->k - 1;
    uint32_t c_last = a->c + (a->m - 1) * a->c_row_step + a->n * c_elem_bytes(a->partials) - 1;
    bool disjoint = (a_last >> PAIR_SHIFT) < (a->c >> PAIR_SHIFT) || (c_last >> PAIR_SHIFT) < (a->a >> PAIR_SHIFT);
    return disjoint && a->c >= REGION1_BASE && a->c_row_step % 16 == 0
        && a->a_row_step <= MATMUL_MAX_FAST_ROW_STEP_BYTES && a->c_row_step <= MATMUL_MAX_FAST_ROW_STEP_BYTES;
}

enum matmul_chunk matmul_chunk_of(uint32_t m, bool fast, unsigned w, uint32_t *first_row, uint32_t *rows)
{
    uint32_t q = m / CODELET_WORKERS, extra = m % CODELET_WORKERS;
    uint32_t start = w * q + (w < extra ? w : extra);
    uint32_t r = q + (w < extra);
    *first_row = start;
    *rows = r;
    if (r == 0)
        return MATMUL_CHUNK_EMPTY;
    /* The fast loop reads 2 rows of A and 3 of C beyond the chunk's end, in
     * the direction it walks. */
    if (fast && m - (start + r) >= 3)
        return MATMUL_CHUNK_FORWARD;
    if (fast && start >= 3) {
        *first_row = start + r - 1;
        return MATMUL_CHUNK_BACKWARD;
    }
    return MATMUL_CHUNK_SLOW;
}

enum matmul_chunk matmul_f16_chunk(const matmul_f16_args *a, unsigned w, uint32_t *first_row, uint32_t *rows)
{
    return matmul_chunk_of(a->m, matmul_f16_fast_placement(a), w, first_row, rows);
}

/* ld2x64pace's packed strides (ISA2 §4.1.1.3, atoms of 8 bytes): field 1
 * from an A row's word 3 to the next row's word 0, field 2 the same for C,
 * field 3 zero; backwards the next row is the one before. */
static uint32_t pace_strides(uint32_t a_step, uint32_t c_step, bool backwards)
{
    int32_t da = (int32_t)(a_step / 8), dc = (int32_t)(c_step / 8);
    if (backwards) {
        da = -da;
        dc = -dc;
    }
    return ((uint32_t)(da - 3) & 0x3ffu) | (((uint32_t)(dc - 3) & 0x3ffu) << 10);
}

bool matmul_f16_wl_record(const matmul_f16_args *a, uint32_t rec[MATMUL_F16_WL_WORDS], const char **why)
{
    uint32_t group = matmul_group(a->partials);
    const char *bad = !a->m || !a->k || !a->n ? "a size is zero"
                    : a->k % MATMUL_K_BLOCK || a->n % group ? "K or N not a multiple of its block"
                    : a->m > MATMUL_MAX_ROWS ? "more rows than six workers' rpt counts take"
                    : a->n / group > MATMUL_WL_MAX_LOOP || a->k / MATMUL_K_BLOCK > MATMUL_WL_MAX_LOOP
                        ? "more output groups or weight blocks than the loops word holds"
                    : (a->a | a->c | a->a_row_step | a->c_row_step) % 8 || a->b % 16 ? "an operand misaligned"
                    : a->b < REGION1_BASE ? "B below region 1"
                    : NULL;
    if (bad) {
        if (why)
            *why = bad;
        return false;
    }
    bool stubs = false;
    for (unsigned w = 0; w < CODELET_WORKERS; w++) {
        uint32_t first, rows;
        enum matmul_chunk k = matmul_f16_chunk(a, w, &first, &rows);
        uint32_t kind = k == MATMUL_CHUNK_FORWARD ? 1 : k == MATMUL_CHUNK_BACKWARD ? 2 : k == MATMUL_CHUNK_SLOW ? 3 : 0;
        stubs |= kind == 0 || kind == 3;
        rec[MATMUL_F16_WL_WORKER + w] = kind ? first | rows << 16 | (4 * kind) << 28 : 0;
    }
    rec[MATMUL_F16_WL_A_LESS_32] = a->a - 32;
    rec[MATMUL_F16_WL_C_LESS_32] = a->c - 32;
    rec[MATMUL_F16_WL_A_ROW_STEP] = a->a_row_step;
    rec[MATMUL_F16_WL_C_ROW_STEP] = a->c_row_step;
    rec[MATMUL_F16_WL_STRIDES_FORWARDS] = pace_strides(a->a_row_step, a->c_row_step, false);
    rec[MATMUL_F16_WL_STRIDES_BACKWARDS] = pace_strides(a->a_row_step, a->c_row_step, true);
    rec[MATMUL_F16_WL_B] = a->b;
    rec[MATMUL_F16_WL_LOOPS] = (a->n / group - 1) | (a->k / MATMUL_K_BLOCK - 1) << 15 | (uint32_t)stubs << 30 |
                               (a->partials == MATMUL_PARTIALS_F16 ? 1u : 0u) << 31;
    return true;
}

/* Supervisor issues of one call (matmul.S) before the first ld128putcs,
 * from the control program's call: the call, 110 before the worker records
 * (checks, placement test, strides, rows a worker), 6 x 35 for the records,
 * 18 choosing the variant and the entries (19 with f16 partials: a nop
 * aligns the loop head).  After the loops: ld32 + br. */
#define MATMUL_SETUP_ISSUES (1u + 110u + 6u * 35u + 18u)
/* sv_matmul_f16_wl: the call, 13 loading B and the loops word, unpacking
 * it and choosing the variant, 7 the entries (8 with f16 partials: the
 * nop).  After the loops: br. */
#define MATMUL_WL_SETUP_ISSUES (1u + 13u + 7u)

/* How a launch of the workers enters (matmul.S's mmc_block_loops). */
enum launch { LAUNCH_FIRST, LAUNCH_GROUP, LAUNCH_BLOCK };

/* Worker issues of one launch (matmul.S's mmc_worker).  The fast loop:
 * 2 (group: A back to its first block, C to the next group) + 1 (A to the
 * next block), tapack, 11 filling the pipeline, rpt, 4 a row, exitz; the
 * first launch adds 9 reading the record (and starts as a group); 1 more
 * through the dispatch stub when stubs are used.  The slow loop: the same
 * with 5 set-up issues (group) or 3 (block), rpt, 14 a row, exitz, always
 * through a stub; its first launch 14 reading the record.  An idle worker:
 * 7 the first time, then 2 (the stub and exitz). */
static uint64_t worker_issues(enum matmul_chunk kind, uint64_t rows, enum launch l, bool stubs, bool wl)
{
    switch (kind) {
    case MATMUL_CHUNK_FORWARD:
    case MATMUL_CHUNK_BACKWARD:
        if (l == LAUNCH_FIRST)
            return 4 * rows + (wl ? 40 : 26);
        return 4 * rows + (l == LAUNCH_GROUP ? 17 : 15) + stubs;
    case MATMUL_CHUNK_SLOW:
        if (l == LAUNCH_FIRST)
            return 14 * rows + (wl ? 32 : 21);
        return 14 * rows + (l == LAUNCH_GROUP ? 8 : 6);
    default:
        return l == LAUNCH_FIRST ? (wl ? 9 : 7) : 2;
    }
}

/* Of those, the AMP issues: 10 filling the pipeline and 4 a row (fast),
 * 12 a row (slow). */
static uint64_t worker_amp_issues(enum matmul_chunk kind, uint64_t rows)
{
    switch (kind) {
    case MATMUL_CHUNK_FORWARD:
    case MATMUL_CHUNK_BACKWARD:
        return 10 + 4 * rows;
    case MATMUL_CHUNK_SLOW:
        return 12 * rows;
    default:
        return 0;
    }
}

uint64_t matmul_f16_cycles(const matmul_f16_args *a, uint64_t call_cycle)
{
    if (a->m == 0)
        return 4;                 /* call, ld32, brz, br */
    if (a->k == 0)
        return 6;
    if (a->n == 0)
        return 8;
    uint64_t group = matmul_group(a->partials);
    uint64_t groups = a->n / group, blocks = a->k / MATMUL_K_BLOCK;
    uint64_t loads = group * MATMUL_K_BLOCK * 2 / 16;            /* ld128putcs a block */
    enum matmul_chunk kinds[CODELET_WORKERS];
    uint32_t rows[CODELET_WORKERS];
    bool stubs = false;
    for (unsigned w = 0; w < CODELET_WORKERS; w++) {
        uint32_t first;
        kinds[w] = matmul_f16_chunk(a, w, &first, &rows[w]);
        stubs |= kinds[w] != MATMUL_CHUNK_FORWARD && kinds[w] != MATMUL_CHUNK_BACKWARD;
    }
    /* The supervisor issues one instruction a cycle while it owns every
     * slot.  Slot s is the cycles c with c % 6 == s, and worker k takes
     * slot k - 1 at runall (sim/engine/tile.c): started by a runall at cycle T it
     * issues first at the next cycle of its slot, then every 6 cycles.
     * When the last worker has exited (cycle E) the supervisor owns the
     * next slot and its sync issues at E + 1.  (With equal issue counts n
     * this is T + 6 n + 1 whatever T is, as tests/test_matmul_kernel.c
     * works out; with unequal counts the phase of T matters.)  t is the
     * cycle of the supervisor's next issue. */
    /* Worker turns an AMP issue takes: its MACs over the machine's rate. */
    uint64_t peak = a->amp_peak_macs ? a->amp_peak_macs : 64, macs = a->partials == MATMUL_PARTIALS_F16 ? 64 : 32;
    uint64_t amp_turns = (macs + peak - 1) / peak;
    uint64_t t = call_cycle + (a->worklists ? MATMUL_WL_SETUP_ISSUES : MATMUL_SETUP_ISSUES) +
                 (a->partials == MATMUL_PARTIALS_F16);
    for (uint64_t g = 0; g < groups; g++) {
        for (uint64_t b = 0; b < blocks; b++) {
            enum launch l = b ? LAUNCH_BLOCK : g ? LAUNCH_GROUP : LAUNCH_FIRST;
            t += loads;                           /* ld128putcs */
            uint64_t runall = t, last_exit = 0;
            for (unsigned k = 1; k <= CODELET_WORKERS; k++) {
                uint64_t first = runall + 1 + (k - 1 + 6 * 6 - (runall + 1) % 6) % 6;
                uint64_t e = first + 6 * (worker_issues(kinds[k - 1], rows[k - 1], l, stubs, a->worklists) - 1 +
                                          (amp_turns - 1) * worker_amp_issues(kinds[k - 1], rows[k - 1]));
                if (e > last_exit)
                    last_exit = e;
            }
            t = last_exit + 2;                    /* the sync at E + 1 */
            t += 2;                               /* mov, brnzdec */
        }
        t += 3;                                   /* mov, mov, brnzdec */
    }
    t += a->worklists ? 1 : 2;                    /* (ld32,) br */
    return t - call_cycle;
}
