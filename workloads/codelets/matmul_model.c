/*
 * matmul_model.c — the host side of the matmul codelets (matmul.h): the
 * fast-placement condition, the chunk rule and the cycle count, each the
 * same decision or sum that workloads/codelets/matmul.S makes or takes.
 * The arithmetic model is matmul_model_f16 (workloads/matmul_model.c): the
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

enum matmul_chunk matmul_f16_chunk(const matmul_f16_args *a, unsigned w, uint32_t *first_row, uint32_t *rows)
{
    uint32_t q = a->m / CODELET_WORKERS, extra = a->m % CODELET_WORKERS;
    uint32_t start = w * q + (w < extra ? w : extra);
    uint32_t r = q + (w < extra);
    *first_row = start;
    *rows = r;
    if (r == 0)
        return MATMUL_CHUNK_EMPTY;
    bool fast = matmul_f16_fast_placement(a);
    /* The fast loop reads 2 rows of A and 3 of C beyond the chunk's end, in
     * the direction it walks. */
    if (fast && a->m - (start + r) >= 3)
        return MATMUL_CHUNK_FORWARD;
    if (fast && start >= 3) {
        *first_row = start + r - 1;
        return MATMUL_CHUNK_BACKWARD;
    }
    return MATMUL_CHUNK_SLOW;
}

/* Supervisor issues of one call (matmul.S) outside the block loops, from
 * the control program's call to the codelet's return: the call, 110 before
 * the worker records (checks, placement test, strides, rows a worker),
 * 6 x 35 for the records, 7 choosing the variant, 3 more before the loops
 * (4 with f16 partials: a nop aligns the loop heads), and ld32 + br at the
 * end. */
#define MATMUL_SETUP_ISSUES (1u + 110u + 6u * 35u + 7u + 3u + 2u)

/* Worker issues a block (matmul.S's mmc_worker): the fast loop 11 set-up
 * issues, 11 filling the pipeline, rpt, 4 a row, exitz; the slow loop 2
 * to reach it, 12 set-up issues, rpt, 14 a row, exitz; an idle worker 5. */
static uint64_t worker_issues(enum matmul_chunk kind, uint64_t rows)
{
    switch (kind) {
    case MATMUL_CHUNK_FORWARD:
    case MATMUL_CHUNK_BACKWARD:
        return 4 * rows + 24;
    case MATMUL_CHUNK_SLOW:
        return 14 * rows + 16;
    default:
        return 5;
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
    uint64_t issues[CODELET_WORKERS];
    for (unsigned w = 0; w < CODELET_WORKERS; w++) {
        uint32_t first, rows;
        enum matmul_chunk kind = matmul_f16_chunk(a, w, &first, &rows);
        issues[w] = worker_issues(kind, rows);
    }
    /* The supervisor issues one instruction a cycle while it owns every
     * slot.  Slot s is the cycles c with c % 6 == s, and worker k takes
     * slot k - 1 at runall (sim/tile.c): started by a runall at cycle T it
     * issues first at the next cycle of its slot, then every 6 cycles.
     * When the last worker has exited (cycle E) the supervisor owns the
     * next slot and its sync issues at E + 1.  (With equal issue counts n
     * this is T + 6 n + 1 whatever T is, as tests/test_matmul_kernel.c
     * works out; with unequal counts the phase of T matters.) */
    uint64_t t = call_cycle + MATMUL_SETUP_ISSUES - 2 + (a->partials == MATMUL_PARTIALS_F16);
    for (uint64_t g = 0; g < groups; g++) {
        t += 2;                                   /* setzi, ld32 */
        for (uint64_t b = 0; b < blocks; b++) {
            t += 2 + loads;                       /* st32 x2, ld128putcs */
            uint64_t runall = t, last_exit = 0;
            for (unsigned k = 1; k <= CODELET_WORKERS; k++) {
                uint64_t first = runall + 1 + (k - 1 + 6 * 6 - (runall + 1) % 6) % 6;
                uint64_t e = first + 6 * (issues[k - 1] - 1);
                if (e > last_exit)
                    last_exit = e;
            }
            t = last_exit + 2;                    /* the sync at E + 1 */
            t += 2;                               /* add, brnzdec */
        }
        t += 2;                                   /* add, brnzdec */
    }
    t += 2;                                       /* ld32, br */
    return t - call_cycle;
}
