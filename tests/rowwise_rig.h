/*
 * rowwise_rig.h — one simulated GC200 tile running six worker records of a
 * kernel-library codelet (workloads/codelets/rowwise.S) under a small
 * supervisor (runall, sync 0, exitz), for the codelet tests; the hand count
 * of a run's cycles from each worker's issues (conventions in
 * tests/test_codelets_rowwise.c).
 */
#ifndef IPUSIM_TESTS_ROWWISE_RIG_H
#define IPUSIM_TESTS_ROWWISE_RIG_H

#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/asm/asm.h"
#include "sim/program/machine.h"
#include "sim/engine/tile.h"
#include "test_util.h"

#define WORKERS 6u
#define RUNALL_CYCLE 3u
#define REC_ADDR 0x80000u        /* the six records */
#define DATA_ADDR 0x81000u       /* tensors from here (region 1) */
#define SLACK_BYTES 64u
#define SNAN_BITS 0x7fa00001u    /* filled into padding and slack */

static const double U = 0x1p-24;  /* unit roundoff of f32, round to nearest */

/* ---- small helpers ---------------------------------------------------------- */

static uint32_t lcg_state;
static inline double rnd_unit(void)    /* [-1, 1) */
{
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return (double)((int32_t)(lcg_state >> 8) - (1 << 23)) / (double)(1 << 23);
}

static inline uint32_t bits_of(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

static inline float float_of(uint32_t b)
{
    float f;
    memcpy(&f, &b, 4);
    return f;
}

static inline uint32_t rows_of(unsigned total, unsigned w) { return total / WORKERS + (w < total % WORKERS); }

/* ---- the tile ------------------------------------------------------------------ */

typedef struct rig {
    ipu_exe *e;
    ipu_tile *t;
    uint32_t next;               /* bump allocator for tensors */
} rig;

typedef struct run_result {
    bool ran;                    /* ended normally */
    enum tile_stop stop;
    uint64_t cycles;
    char fault[1024];
    uint32_t fp_sts;             /* $FP_STS of the workers, ORed */
} run_result;

static inline bool rig_open(rig *r, const char *entry, unsigned record_words)
{
    char text[512], err[4096];
    snprintf(text, sizeof text,
             ".include \"workloads/codelets/rowwise.S\"\n"
             "    .align 8\n    .globl __supervisor\n    .supervisor\n__supervisor:\n"
             "    setzi $m5, %u\n    setzi $m6, %u\n    setzi $m7, %s\n"
             "    runall $m7, $m5, $m6\n    sync 0\n    exitz $mzero\n",
             REC_ADDR, record_words * 4u, entry);
    const char *dirs[] = {IPUSIM_SOURCE_DIR};
    asm_options opt = {.include_dirs = dirs, .n_include_dirs = 1};
    memset(r, 0, sizeof *r);
    r->e = asm_assemble_string(text, "rowwise_test.S", &opt, err, sizeof err);
    if (!r->e) {
        fprintf(stderr, "\nassembly failed:\n%s\n", err);
        return false;
    }
    machine mach;
    r->t = calloc(1, sizeof *r->t);
    if (!r->t || !machine_preset("gc200", &mach, err, sizeof err) || !tile_init(r->t, &mach, 0)
        || !tile_load(r->t, r->e, err, sizeof err)) {
        fprintf(stderr, "\nset-up failed: %s\n", err);
        return false;
    }
    r->next = DATA_ADDR;
    return true;
}

static inline void rig_close(rig *r)
{
    if (r->t) {
        tile_free(r->t);
        free(r->t);
    }
    exe_free(r->e);
}

/* Tile memory for `bytes`, 8-byte aligned, followed by the slack; all of
 * it filled with signalling NaNs first. */
static inline uint32_t rig_alloc(rig *r, size_t bytes)
{
    uint32_t addr = r->next;
    size_t span = (bytes + SLACK_BYTES + 7u) & ~(size_t)7u;
    for (size_t i = 0; i < span; i += 4)
        tmem_store32(&r->t->s.mem, addr + (uint32_t)i, SNAN_BITS);
    r->next += (uint32_t)span;
    return addr;
}

static inline void rig_write(rig *r, uint32_t addr, const void *src, size_t bytes)
{
    CU_ASSERT_EQUAL(tmem_write_bytes(&r->t->s.mem, addr, src, bytes), TMEM_OK);
}

static inline void rig_read(rig *r, uint32_t addr, void *dst, size_t bytes)
{
    CU_ASSERT_EQUAL(tmem_read_bytes(&r->t->s.mem, addr, dst, bytes), TMEM_OK);
}

/* rows x cols f32 at `step` floats a row: the padding keeps its NaNs. */
static inline void rig_write_rows(rig *r, uint32_t addr, const float *x, size_t rows, size_t cols, size_t step)
{
    for (size_t i = 0; i < rows; i++)
        rig_write(r, addr + (uint32_t)(i * step * 4), x + i * step, cols * 4);
}

static inline void rig_read_rows(rig *r, uint32_t addr, float *x, size_t rows, size_t cols, size_t step)
{
    for (size_t i = 0; i < rows; i++)
        rig_read(r, addr + (uint32_t)(i * step * 4), x + i * step, cols * 4);
}

static inline run_result rig_run(rig *r, const uint32_t *records, unsigned record_words)
{
    run_result res;
    memset(&res, 0, sizeof res);
    rig_write(r, REC_ADDR, records, (size_t)WORKERS * record_words * 4);
    res.stop = tile_run_alone(r->t, 200000000);
    res.ran = res.stop == TILE_STOP_END;
    res.cycles = r->t->s.cycle;
    if (res.stop == TILE_STOP_FAULT)
        tile_describe_fault(r->t, r->e, res.fault, sizeof res.fault);
    for (unsigned k = 1; k <= WORKERS; k++)
        res.fp_sts |= r->t->s.ctx[k].csr[ISA_CSR_FP_STS];
    return res;
}

/* The hand count: W[k] worker cycles before each worker's exitz. */
static inline uint64_t hand_cycles(const uint64_t w[WORKERS])
{
    const uint64_t t = RUNALL_CYCLE;
    uint64_t last = 0;
    for (unsigned k = 0; k < WORKERS; k++) {
        uint64_t first = t + 1 + (k + WORKERS - (t + 1) % WORKERS) % WORKERS;
        uint64_t exit_cycle = first + WORKERS * w[k];
        if (exit_cycle > last)
            last = exit_cycle;
    }
    return last + 3;
}

#endif
