/*
 * matmul_f32_model.c — the host side of the f32 matmul codelets
 * (matmul_f32.h): the packed weight layout, the bit-exact arithmetic
 * model, the error bound, the fast-placement condition, the chunk rule and
 * the cycle count, each the same decision or sum that
 * workloads/codelets/matmul_f32.S makes or takes.
 */
#include "matmul_f32.h"

#include <math.h>

#include "abi.h"
#include "isa/fparith.h"

#define REGION1_BASE 0x80000u
#define PAIR_SHIFT 15u   /* 32 KiB blocks: one interleaved element pair of region 1 */

unsigned matmul_f32_unit_channel(unsigned unit)
{
    unsigned set = unit / 8, u = unit % 8;
    return 4 * (u / 2) + 2 * set + u % 2;
}

void matmul_pack_weights_f32(const float *b, size_t k, size_t n, float *packed)
{
    size_t out = 0;
    for (size_t g = 0; g < n / MATMUL_F32_N_GROUP; g++)
        for (size_t blk = 0; blk < k; blk += MATMUL_F32_K_BLOCK)
            for (unsigned u = 0; u < MATMUL_F32_N_GROUP; u++) {
                size_t ch = g * MATMUL_F32_N_GROUP + matmul_f32_unit_channel(u);
                for (size_t e = 0; e < MATMUL_F32_K_BLOCK; e++)
                    packed[out++] = b[(blk + e) * n + ch];
            }
}

/* An f32 value read by the AMP as a partial sum (TFPU_F32FromBits:
 * denormals flushed, a NaN -> the tile's quiet NaN), and a result written
 * out (the same). */
static float amp_f32_in_out(float v)
{
    return isnan(v) ? fp32_qnan() : fp32_flush(v);
}

void matmul_model_f32(const float *a, const float *b, size_t m, size_t k, size_t n, float *c)
{
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            float acc = amp_f32_in_out(c[i * n + j]);
            for (size_t blk = 0; blk < k; blk += MATMUL_F32_K_BLOCK) {
                /* Phases 0..7 (set 1: one issue later through $TAS): one
                 * product each, added to the running sum in input order. */
                for (size_t e = 0; e < MATMUL_F32_K_BLOCK; e++) {
                    float x = fp32_flush(a[i * k + blk + e]), w = fp32_flush(b[(blk + e) * n + j]);
                    acc = fp32_add(acc, fp32_mul(x, w));
                }
                /* Out to C, and back in as the next block's partial. */
                acc = amp_f32_in_out(amp_f32_in_out(acc));
            }
            c[i * n + j] = amp_f32_in_out(acc);
        }
}

double matmul_f32_error_bound(size_t k, double sum_abs)
{
    const double u = ldexp(1.0, -24);
    double nu = (double)(k + 2) * u;
    return 2.0 * nu / (1.0 - nu) * sum_abs + (double)(3 * k + 1) * ldexp(1.0, -126);
}

bool matmul_f32_fast_placement(const matmul_f32_args *a)
{
    if (a->m == 0)
        return true;
    uint32_t a_last = a->a + (a->m - 1) * a->a_row_step + 4 * a->k - 1;
    uint32_t c_last = a->c + (a->m - 1) * a->c_row_step + 4 * a->n - 1;
    bool disjoint = (a_last >> PAIR_SHIFT) < (a->c >> PAIR_SHIFT) || (c_last >> PAIR_SHIFT) < (a->a >> PAIR_SHIFT);
    return disjoint && a->c >= REGION1_BASE && a->c_row_step % 16 == 0
        && a->a_row_step <= MATMUL_F32_MAX_FAST_ROW_STEP_BYTES
        && a->c_row_step <= MATMUL_F32_MAX_FAST_ROW_STEP_BYTES;
}

enum matmul_f32_chunk matmul_f32_chunk(const matmul_f32_args *a, unsigned w, uint32_t *first_row, uint32_t *rows)
{
    return (enum matmul_f32_chunk)matmul_chunk_of(a->m, matmul_f32_fast_placement(a), w, first_row, rows);
}

/* Supervisor issues of one call (matmul_f32.S) before the first
 * ld128putcs, the call included: 1 + 101 (checks, placement test, strides,
 * rows a worker) + 6 x 35 (the worker records) + 12 (the loops' set-up)
 * + 1 (the nop that .align puts before the loop head). */
#define SETUP_ISSUES (1u + 101u + 6u * 35u + 12u + 1u)

/* Worker issues of one launch (matmul_f32.S's mmf_worker): 11 reading the
 * record and packing the addresses, then the fast loop (19 filling, rpt,
 * 8 a row, exitz), or 9 before the branch, then the slow loop (7, 26 a
 * row, exitz), or the idle worker's 9 + 2 + exitz. */
static uint64_t worker_issues(enum matmul_f32_chunk kind, uint64_t rows)
{
    switch (kind) {
    case MATMUL_F32_CHUNK_FORWARD:
    case MATMUL_F32_CHUNK_BACKWARD:
        return 11 + 19 + 1 + 8 * rows + 1;
    case MATMUL_F32_CHUNK_SLOW:
        return 9 + 7 + 26 * rows + 1;
    default:
        return 9 + 2 + 1;
    }
}

/* Of those, the AMP issues: 18 filling the pipeline and 8 a row (fast),
 * 24 a row (slow). */
static uint64_t worker_amp_issues(enum matmul_f32_chunk kind, uint64_t rows)
{
    switch (kind) {
    case MATMUL_F32_CHUNK_FORWARD:
    case MATMUL_F32_CHUNK_BACKWARD:
        return 18 + 8 * rows;
    case MATMUL_F32_CHUNK_SLOW:
        return 24 * rows;
    default:
        return 0;
    }
}

uint64_t matmul_f32_cycles(const matmul_f32_args *a, uint64_t call_cycle)
{
    if (a->m == 0)
        return 4;                 /* call, ld32, brz, br */
    if (a->k == 0)
        return 6;
    if (a->n == 0)
        return 8;
    uint64_t groups = a->n / MATMUL_F32_N_GROUP, blocks = a->k / MATMUL_F32_K_BLOCK;
    /* A worker's turns: its issues, an AMP issue taking as many as its 16
     * MACs need at the machine's rate. */
    uint64_t peak = a->amp_peak_macs ? a->amp_peak_macs : 16, amp_turns = (16 + peak - 1) / peak;
    uint64_t n_issues[CODELET_WORKERS];
    for (unsigned w = 0; w < CODELET_WORKERS; w++) {
        uint32_t first, rows;
        enum matmul_f32_chunk kind = matmul_f32_chunk(a, w, &first, &rows);
        n_issues[w] = worker_issues(kind, rows) + (amp_turns - 1) * worker_amp_issues(kind, rows);
    }
    /* The supervisor issues one instruction a cycle while it owns every
     * slot.  Worker k takes slot k - 1 at runall (sim/engine/tile.c): started by a
     * runall at cycle T it issues first at the next cycle of its slot, then
     * every 6 cycles.  When the last worker has exited (cycle E) the
     * supervisor's sync issues at E + 1.  t is the cycle of the
     * supervisor's next issue. */
    uint64_t t = call_cycle + SETUP_ISSUES;
    for (uint64_t g = 0; g < groups; g++) {
        for (uint64_t b = 0; b < blocks; b++) {
            t += 32;                              /* ld128putcs */
            uint64_t runall = t, last_exit = 0;
            for (unsigned k = 1; k <= CODELET_WORKERS; k++) {
                uint64_t first = runall + 1 + (k - 1 + 6 * 6 - (runall + 1) % 6) % 6;
                uint64_t e = first + 6 * (n_issues[k - 1] - 1);
                if (e > last_exit)
                    last_exit = e;
            }
            t = last_exit + 2;                    /* the sync at E + 1 */
            t += 3;                               /* add, st32, brnzdec */
        }
        t += 6;                                   /* setzi, st32, add, st32, mov, brnzdec */
    }
    t += 2;                                       /* ld32, br */
    return t - call_cycle;
}
