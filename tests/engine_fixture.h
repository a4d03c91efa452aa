/*
 * engine_fixture.h — running small system programs in tests: assemble a
 * string, load it on a machine preset (with overrides), run the engine,
 * keep what the tests look at.
 *
 *   sys_result r = sys_run("gc200", NULL, src, 1);
 *   CU_ASSERT_EQUAL(r.status, ENGINE_DONE);
 *   CU_ASSERT_EQUAL(sys_cycles(&r, 1), 168);   // tile 1's final cycle
 *   sys_free(&r);
 *
 * Header-only (static functions) for tests/test_engine*.c and
 * tests/test_exchange*.c.
 */
#ifndef IPUSIM_TESTS_ENGINE_FIXTURE_H
#define IPUSIM_TESTS_ENGINE_FIXTURE_H

#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/asm/asm.h"
#include "sim/engine/engine.h"
#include "sim/program/machine.h"

typedef struct sys_result {
    engine *g;
    ipu_exe *e;
    machine m;
    enum engine_status status;
    const engine_stats *st;
    const char *message;
} sys_result;

/* Assemble src; apply `sets` ("p=v;p=v", may be NULL) to preset; run with
 * `threads` host threads; `setup` (may be NULL) is called before the run. */
static inline sys_result sys_run_with(const char *preset, const char *sets, const char *src, int threads,
                                      void (*setup)(engine *g), bool trace)
{
    sys_result r;
    memset(&r, 0, sizeof r);
    char err[4096];
    CU_ASSERT_TRUE_FATAL(machine_preset(preset, &r.m, err, sizeof err));
    if (sets) {
        char *copy = strdup(sets), *save = NULL;
        for (char *a = strtok_r(copy, ";", &save); a; a = strtok_r(NULL, ";", &save))
            if (!machine_set(&r.m, a, err, sizeof err)) {
                fprintf(stderr, "\n%s\n", err);
                CU_FAIL_FATAL("bad machine setting");
            }
        free(copy);
    }
    asm_options opt = { .memory_base = machine_memory_base(&r.m) };
    r.e = asm_assemble_string(src, "test.S", &opt, err, sizeof err);
    if (!r.e) {
        fprintf(stderr, "\nassembly failed:\n%s\n", err);
        CU_FAIL_FATAL("assembly failed");
    }
    r.g = engine_new(&r.m, r.e, err, sizeof err);
    if (!r.g) {
        fprintf(stderr, "\nload failed: %s\n", err);
        CU_FAIL_FATAL("load failed");
    }
    if (setup)
        setup(r.g);
    /* Several threads: use them for every batch, so the tests exercise
     * the parallel runs however the host is loaded. */
    engine_options o = { .threads = threads, .force_threads = threads > 1, .record_trace = trace,
                         .trace_tile_first = 0, .trace_tile_last = trace ? 3 : 0 };
    if (!trace)
        o.trace_tile_first = 1;
    r.status = engine_run(r.g, &o);
    r.st = engine_get_stats(r.g);
    r.message = engine_message(r.g);
    return r;
}

static inline sys_result sys_run(const char *preset, const char *sets, const char *src, int threads)
{
    return sys_run_with(preset, sets, src, threads, NULL, false);
}

static inline void sys_free(sys_result *r)
{
    engine_free(r->g);
    exe_free(r->e);
    memset(r, 0, sizeof *r);
}

/* A tile's final cycle (its clock when it ended); -1 without code. */
static inline long long sys_cycles(const sys_result *r, uint32_t tile)
{
    const ipu_tile *t = engine_tile(r->g, tile);
    return t ? (long long)t->s.cycle : -1;
}

static inline uint32_t sys_word(const sys_result *r, uint32_t tile, uint32_t addr)
{
    uint32_t v = 0xdeadbeef;
    const ipu_tile *t = engine_tile(r->g, tile);
    if (t)
        tmem_read_bytes(&t->s.mem, addr, &v, 4);
    return v;
}

/* The n-th superstep of a chip, or NULL. */
static inline const engine_superstep *sys_step(const sys_result *r, uint32_t chip, uint32_t index)
{
    for (size_t i = 0; i < r->st->n_supersteps; i++)
        if (r->st->supersteps[i].chip == chip && r->st->supersteps[i].index == index)
            return &r->st->supersteps[i];
    return NULL;
}

/* Print the message when the run did not end as expected. */
#define SYS_ASSERT_STATUS(r, want) do { \
        if ((r).status != (want)) \
            fprintf(stderr, "\nengine status %d: %s\n", (int)(r).status, (r).message); \
        CU_ASSERT_EQUAL((r).status, (want)); \
    } while (0)

/* Runs a and b ended the same: every tile's cycle, statistics, registers,
 * AMP state, pages and first 256 bytes of region 1; the supersteps (end,
 * busiest tile, counters) and the chip and run totals. */
static inline void sys_same_run(engine *a, engine *b)
{
    CU_ASSERT_EQUAL_FATAL(engine_tile_count(a), engine_tile_count(b));
    for (size_t i = 0; i < engine_tile_count(a); i++) {
        const ipu_tile *x = engine_tile_at(a, i), *y = engine_tile_at(b, i);
        CU_ASSERT_EQUAL(x->s.cycle, y->s.cycle);
        CU_ASSERT_EQUAL(memcmp(&x->stats, &y->stats, sizeof x->stats), 0);
        uint8_t dx[256], dy[256];
        tmem_read_bytes(&x->s.mem, 0x80000, dx, sizeof dx);
        tmem_read_bytes(&y->s.mem, 0x80000, dy, sizeof dy);
        CU_ASSERT_EQUAL(memcmp(dx, dy, sizeof dx), 0);
        CU_ASSERT_EQUAL(memcmp(x->s.ctx, y->s.ctx, sizeof x->s.ctx), 0);
        CU_ASSERT_EQUAL(memcmp(&x->s.amp, &y->s.amp, sizeof x->s.amp), 0);
        CU_ASSERT_EQUAL(x->s.mem.pages_allocated, y->s.mem.pages_allocated);
    }
    const engine_stats *sa = engine_get_stats(a), *sb = engine_get_stats(b);
    CU_ASSERT_EQUAL_FATAL(sa->n_supersteps, sb->n_supersteps);
    for (size_t k = 0; k < sa->n_supersteps; k++) {
        const engine_superstep *p = &sa->supersteps[k], *q = &sb->supersteps[k];
        CU_ASSERT_EQUAL(p->end_cycle, q->end_cycle);
        CU_ASSERT_EQUAL(p->busiest_tile, q->busiest_tile);
        CU_ASSERT_EQUAL(memcmp(&p->c, &q->c, sizeof p->c), 0);
    }
    CU_ASSERT_EQUAL(memcmp(&sa->chips[0].c, &sb->chips[0].c, sizeof sa->chips[0].c), 0);
    CU_ASSERT_EQUAL(sa->instructions, sb->instructions);
    CU_ASSERT_EQUAL(sa->tile_cycles, sb->tile_cycles);
    CU_ASSERT_EQUAL(sa->end_ps, sb->end_ps);
}

#endif
