/*
 * test_codelets_embedding.c — vtx_gather_range (workloads/codelets/
 * embedding.S) assembled with a small supervisor (runall on six records,
 * sync 0, exitz) and run on one simulated GC200 tile:
 *   (a) out rows equal the model (embedding_model.c) byte for byte: rows
 *       held here copied, rows held elsewhere zeroed, negative indices
 *       counted from TOTAL_ROWS, both copy paths (64-bit pairs; words when
 *       ROW_BYTES, OUT_STEP or out is not a multiple of 8), out rows with
 *       gaps between them (the gap bytes keep their sentinel), a slack of
 *       sentinel words after every tensor (never written);
 *   (b) the model on values worked by hand;
 *   (c) cycle counts equal the hand count (gather_w, from the table in
 *       embedding.h; the worked example below by hand);
 *   (d) an index outside [-TOTAL_ROWS, TOTAL_ROWS) traps with
 *       EMBEDDING_TRAP_BAD_INDEX, the rows before it written;
 * and the cycles of BERT-Base-sized rows.
 *
 * Cycle counts (conventions of tests/test_codelets_rowwise.c): runall at
 * T = 3, worker k (1..6) first issues at cycles 4..9 for workers 5, 6, 1,
 * 2, 3, 4; a worker whose issues before its exitz cost W worker cycles
 * exits at first + 6 W; the run takes E + 3 cycles, E the last exit.
 *
 * Worked example (test_hand_cycles): ROW_BYTES 16 (P = 2 pairs), worker 1
 * gets the indices {held, not held, held}, the others none (W = 2 each).
 * Worker 1: entry 17, held rows 14 + 4 = 18 each, the other 12 + 2 = 14:
 * W = 17 + 18 + 14 + 18 = 67; first issue at 6: exits at 6 + 402 = 408;
 * worker 6 (first at 5) exits at 17: 411 cycles.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/asm/asm.h"
#include "sim/program/machine.h"
#include "sim/engine/tile.h"
#include "test_util.h"
#include "workloads/codelets/embedding.h"

#define WORKERS 6u
#define RUNALL_CYCLE 3u
#define REC_ADDR 0xE7000u        /* the six records, at the top of tile memory */
#define DATA_ADDR 0x50000u       /* tensors from here (past the code) */
#define SLACK_BYTES 64u
#define SENTINEL 0x7fa00001u

static uint32_t lcg_state;
static uint32_t lcg(void)
{
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return lcg_state >> 8;
}

/* ---- the tile ------------------------------------------------------------------ */

typedef struct rig {
    ipu_exe *e;
    ipu_tile *t;
    uint32_t next;
} rig;

static bool rig_open_entry(rig *r, const char *entry, uint32_t words);

static bool rig_open(rig *r)
{
    return rig_open_entry(r, "vtx_gather_range", GATHER_RANGE_V_WORDS);
}

/* The rig running `entry` on six records of `words` words. */
static bool rig_open_entry(rig *r, const char *entry, uint32_t words)
{
    char text[512], err[4096];
    snprintf(text, sizeof text,
             ".include \"workloads/codelets/embedding.S\"\n"
             "    .align 8\n    .globl __supervisor\n    .supervisor\n__supervisor:\n"
             "    setzi $m5, %u\n    setzi $m6, %u\n    setzi $m7, %s\n"
             "    runall $m7, $m5, $m6\n    sync 0\n    exitz $mzero\n",
             REC_ADDR, words * 4u, entry);
    const char *dirs[] = {IPUSIM_SOURCE_DIR};
    asm_options opt = {.include_dirs = dirs, .n_include_dirs = 1};
    memset(r, 0, sizeof *r);
    r->e = asm_assemble_string(text, "embedding_test.S", &opt, err, sizeof err);
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

static void rig_close(rig *r)
{
    if (r->t) {
        tile_free(r->t);
        free(r->t);
    }
    exe_free(r->e);
}

/* bytes (a multiple of 4) at an address `phase` mod 8, sentinel-filled
 * with the slack after it. */
static uint32_t rig_alloc(rig *r, size_t bytes, uint32_t phase)
{
    uint32_t addr = r->next + phase;
    size_t span = (phase + bytes + SLACK_BYTES + 7u) & ~(size_t)7u;
    for (size_t i = 0; i < span; i += 4)
        tmem_store32(&r->t->s.mem, r->next + (uint32_t)i, SENTINEL);
    r->next += (uint32_t)span;
    CU_ASSERT(r->next <= REC_ADDR);
    return addr;
}

static uint64_t hand_cycles(const uint64_t w[WORKERS])
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

/* ---- the hand count (embedding.h) --------------------------------------------- */

static uint64_t gather_w(const gather_range_shape *s, uint32_t out, const int32_t *idx, uint32_t n)
{
    if (n == 0)
        return 2;
    bool pairs = ((s->row_bytes | s->out_step_bytes | out) & 7) == 0;
    uint64_t p = pairs ? s->row_bytes / 8 : s->row_bytes / 4;
    uint64_t w = pairs ? 17 : 18;
    for (uint32_t i = 0; i < n; i++) {
        int64_t k = idx[i] < 0 ? (int64_t)idx[i] + s->total_rows : idx[i];
        bool held = k >= s->base && k < (int64_t)s->base + s->table_rows;
        w += held ? 14 + 2 * p : 12 + p;
    }
    return w;
}

/* ---- one case -------------------------------------------------------------------- */

typedef struct gather_case {
    gather_range_shape s;
    uint32_t n[WORKERS];        /* indices of each worker, one after another */
    uint32_t out_phase;         /* out at 0 or 4 mod 8 */
    unsigned held_in_4;         /* about this many of 4 indices held here */
    unsigned negative_in_4;     /* about this many of 4 written as negative */
    uint32_t seed;
    bool bad_at_end;            /* the last index of worker 2 out of range */
    const int32_t *fixed_idx;   /* the indices, instead of random ones */
} gather_case;

typedef struct gather_result {
    bool ran;
    enum tile_stop stop;
    uint32_t trap_code;
    uint64_t cycles, hand;
    size_t mismatches;
} gather_result;

static gather_result gather_run(const gather_case *gc)
{
    gather_result res;
    memset(&res, 0, sizeof res);
    const gather_range_shape *s = &gc->s;
    rig r;
    if (!rig_open(&r)) {
        CU_FAIL("rig");
        rig_close(&r);
        return res;
    }
    lcg_state = gc->seed;
    uint32_t total = 0;
    for (unsigned k = 0; k < WORKERS; k++)
        total += gc->n[k];
    size_t table_bytes = (size_t)s->table_rows * s->row_bytes;
    size_t out_bytes = total ? (size_t)(total - 1) * s->out_step_bytes + s->row_bytes : 0;
    uint32_t *table = malloc(table_bytes + 4);
    int32_t *idx = malloc((size_t)total * 4 + 4);
    uint8_t *got = malloc(out_bytes + SLACK_BYTES), *model = malloc(out_bytes + SLACK_BYTES);
    for (size_t i = 0; i < table_bytes / 4; i++)
        table[i] = lcg() * 2654435761u + 1u;        /* never zero: a copied row is told from a zeroed one */
    for (uint32_t i = 0; i < total; i++) {
        int64_t k;
        if (lcg() % 4 < gc->held_in_4)
            k = s->base + (int64_t)(lcg() % s->table_rows);
        else
            k = (int64_t)(lcg() % s->total_rows);
        if (lcg() % 4 < gc->negative_in_4)
            k -= s->total_rows;
        idx[i] = gc->fixed_idx ? gc->fixed_idx[i] : (int32_t)k;
    }
    if (gc->bad_at_end)
        idx[gc->n[0] + gc->n[1] - 1] = (int32_t)s->total_rows;
    for (size_t i = 0; i < out_bytes + SLACK_BYTES; i += 4) {
        uint32_t v = SENTINEL;
        memcpy(got + i, &v, 4);
        memcpy(model + i, &v, 4);
    }
    uint32_t t_addr = rig_alloc(&r, table_bytes, 0), i_addr = rig_alloc(&r, (size_t)total * 4, 4);
    uint32_t o_addr = rig_alloc(&r, out_bytes, gc->out_phase);
    CU_ASSERT_EQUAL(tmem_write_bytes(&r.t->s.mem, t_addr, table, table_bytes), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_write_bytes(&r.t->s.mem, i_addr, idx, (size_t)total * 4), TMEM_OK);
    uint32_t rec[WORKERS * GATHER_RANGE_V_WORDS];
    uint64_t w[WORKERS];
    uint32_t first = 0;
    for (unsigned k = 0; k < WORKERS; k++) {
        uint32_t *v = rec + k * GATHER_RANGE_V_WORDS;
        uint32_t out = o_addr + first * s->out_step_bytes;
        v[GATHER_RANGE_V_TABLE] = t_addr;
        v[GATHER_RANGE_V_IDX] = i_addr + first * 4;
        v[GATHER_RANGE_V_OUT] = out;
        v[GATHER_RANGE_V_N] = gc->n[k];
        v[GATHER_RANGE_V_ROW_BYTES] = s->row_bytes;
        v[GATHER_RANGE_V_OUT_STEP] = s->out_step_bytes;
        v[GATHER_RANGE_V_BASE] = s->base;
        v[GATHER_RANGE_V_TABLE_ROWS] = s->table_rows;
        v[GATHER_RANGE_V_TOTAL_ROWS] = s->total_rows;
        w[k] = gather_w(s, out, idx + first, gc->n[k]);
        size_t done = embedding_model_gather_range(table, idx + first, model + (size_t)first * s->out_step_bytes,
                                                   gc->n[k], s);
        CU_ASSERT_EQUAL(done, gc->bad_at_end && k == 1 ? gc->n[k] - 1 : gc->n[k]);
        first += gc->n[k];
    }
    CU_ASSERT_EQUAL(tmem_write_bytes(&r.t->s.mem, REC_ADDR, rec, sizeof rec), TMEM_OK);
    res.stop = tile_run_alone(r.t, 100000000);
    res.ran = res.stop == TILE_STOP_END;
    res.trap_code = r.t->s.trap_code;
    res.cycles = r.t->s.cycle;
    res.hand = hand_cycles(w);
    CU_ASSERT_EQUAL(tmem_read_bytes(&r.t->s.mem, o_addr, got, out_bytes + SLACK_BYTES), TMEM_OK);
    for (size_t i = 0; i < out_bytes + SLACK_BYTES; i++)
        if (got[i] != model[i] && res.mismatches++ < 4)
            fprintf(stderr, "\n  out byte %zu: codelet 0x%02x, model 0x%02x", i, got[i], model[i]);
    free(table); free(idx); free(got); free(model);
    rig_close(&r);
    return res;
}

static void check_ran(const gather_result *res)
{
    CU_ASSERT_TRUE(res->ran);
    CU_ASSERT_EQUAL(res->mismatches, 0);
    CU_ASSERT_EQUAL(res->cycles, res->hand);
    if (res->cycles != res->hand)
        fprintf(stderr, "\n  cycles %llu, hand count %llu", (unsigned long long)res->cycles,
                (unsigned long long)res->hand);
}

/* ---- tests ---------------------------------------------------------------------- */

static uint32_t f32_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

/* The model on values worked by hand: rows 10..12 of a 20-row table of two
 * floats, row r = {r, -r}. */
static void test_model(void)
{
    float table[6] = {10, -10, 11, -11, 12, -12}, out[2 * 9];
    int32_t idx[9] = {10, 12, 9, 13, -10, -8, -11, 0, 19};
    gather_range_shape s = {.row_bytes = 8, .out_step_bytes = 8, .base = 10, .table_rows = 3, .total_rows = 20};
    memset(out, 0x55, sizeof out);
    CU_ASSERT_EQUAL(embedding_model_gather_range(table, idx, out, 9, &s), 9);
    /* held: 10 -> row 0, 12 -> row 2, -10 = 10, -8 = 12; the rest zeros */
    static const float want[18] = {10, -10, 12, -12, 0, 0, 0, 0, 10, -10, 12, -12, 0, 0, 0, 0, 0, 0};
    for (unsigned i = 0; i < 18; i++)
        CU_ASSERT_EQUAL(f32_bits(out[i]), f32_bits(want[i]));
    /* -11 = 9 is not held: +0 bits, not -0 */
    CU_ASSERT_EQUAL(f32_bits(out[13]), 0u);
    /* 20 and -21 are outside [-20, 20): the model stops there */
    int32_t bad[3] = {11, 20, 10};
    memset(out, 0x55, sizeof out);
    CU_ASSERT_EQUAL(embedding_model_gather_range(table, bad, out, 3, &s), 1);
    CU_ASSERT_EQUAL(f32_bits(out[0]), f32_bits(11.0f));
    CU_ASSERT_EQUAL(f32_bits(out[2]), 0x55555555u);   /* row 1 not written */
    bad[0] = -21;
    CU_ASSERT_EQUAL(embedding_model_gather_range(table, bad, out, 3, &s), 0);
    bad[0] = -20;                                        /* = 0: valid, not held */
    CU_ASSERT_EQUAL(embedding_model_gather_range(table, bad, out, 1, &s), 1);
    /* out rows 12 bytes apart for rows of 8: the gap is left alone */
    gather_range_shape g = s;
    g.out_step_bytes = 12;
    memset(out, 0x55, sizeof out);
    CU_ASSERT_EQUAL(embedding_model_gather_range(table, idx, out, 2, &g), 2);
    CU_ASSERT_EQUAL(f32_bits(out[2]), 0x55555555u);
    CU_ASSERT_EQUAL(f32_bits(out[3]), f32_bits(12.0f));
}

static const struct {
    uint32_t row_bytes, out_step, base, table_rows, total_rows, out_phase;
} shapes[] = {
    {16, 16, 100, 20, 300, 0},       /* pairs */
    {24, 32, 0, 7, 7, 0},            /* pairs, gaps; every row held (a whole table) */
    {8, 8, 5, 1, 9, 0},              /* one row held, one pair a row */
    {12, 12, 40, 9, 64, 0},          /* words: 12-byte rows */
    {16, 20, 3, 11, 50, 0},          /* words: the out step */
    {16, 16, 30, 30, 60, 4},         /* words: out 4 mod 8 */
    {4, 4, 1000, 50, 1050, 4},       /* one word a row, the last rows of the table */
};

static void test_rows(void)
{
    static const uint32_t shares[][WORKERS] = {{5, 1, 0, 9, 2, 3}, {0, 0, 13, 0, 0, 1}};
    for (unsigned i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (unsigned j = 0; j < 2; j++) {
            gather_case gc;
            memset(&gc, 0, sizeof gc);
            gc.s = (gather_range_shape){shapes[i].row_bytes, shapes[i].out_step, shapes[i].base,
                                        shapes[i].table_rows, shapes[i].total_rows};
            memcpy(gc.n, shares[j], sizeof gc.n);
            gc.out_phase = shapes[i].out_phase;
            gc.held_in_4 = 2;
            gc.negative_in_4 = 1 + j;
            gc.seed = 50u + 2 * i + j;
            gather_result res = gather_run(&gc);
            check_ran(&res);
        }
}

/* Worked example at the top: indices {held, not held, held}. */
static void test_hand_cycles(void)
{
    gather_range_shape s = {16, 16, 4, 2, 10};
    int32_t idx[3] = {4, 9, -5};
    CU_ASSERT_EQUAL(gather_w(&s, 0, idx, 3), 67);
    CU_ASSERT_EQUAL(gather_w(&s, 0, idx, 0), 2);
    uint64_t w[WORKERS] = {67, 2, 2, 2, 2, 2};
    CU_ASSERT_EQUAL(hand_cycles(w), 411);
    gather_case gc;
    memset(&gc, 0, sizeof gc);
    gc.s = s;
    gc.n[0] = 3;
    gc.fixed_idx = idx;
    gc.seed = 7;
    gather_result res = gather_run(&gc);
    check_ran(&res);
    CU_ASSERT_EQUAL(res.cycles, 411);
}

/* Index TOTAL_ROWS (worker 2's last; the only worker with indices, as a
 * trap stops the whole tile): the trap, with the rows before it written. */
static void test_bad_index(void)
{
    gather_case gc;
    memset(&gc, 0, sizeof gc);
    gc.s = (gather_range_shape){16, 16, 10, 10, 40};
    uint32_t n[WORKERS] = {0, 5, 0, 0, 0, 0};
    memcpy(gc.n, n, sizeof n);
    gc.held_in_4 = 2;
    gc.negative_in_4 = 2;
    gc.seed = 99;
    gc.bad_at_end = true;
    gather_result res = gather_run(&gc);
    CU_ASSERT_EQUAL(res.stop, TILE_STOP_FAULT);
    CU_ASSERT_EQUAL(res.trap_code, EMBEDDING_TRAP_BAD_INDEX);
    CU_ASSERT_EQUAL(res.mismatches, 0);
}

/* BERT-Base's word embedding: rows of 768 f32 (3072 B, P = 384); the tile
 * holds 48 rows of the 30522; 6 x 16 indices, about half held here. */
static void test_bert_rows(void)
{
    gather_case gc;
    memset(&gc, 0, sizeof gc);
    gc.s = (gather_range_shape){3072, 3072, 1000, 48, 30522};
    for (unsigned k = 0; k < WORKERS; k++)
        gc.n[k] = 16;
    gc.held_in_4 = 2;
    gc.negative_in_4 = 1;
    gc.seed = 2024;
    gather_result res = gather_run(&gc);
    check_ran(&res);
    printf("\n    96 indices, rows of 3072 B: %llu tile cycles, %.1f per index, %.3f per byte\n",
           (unsigned long long)res.cycles, res.cycles / 96.0, res.cycles / (96.0 * 3072));
}


/* ---- vtx_scatter_add_range_f32 ---------------------------------------------------- */

/* A scatter-add case: the tile holds table rows [base, base + rows), split
 * among the workers in `share` rows each (disjoint), every worker scanning
 * all n indices; dY rows dy_step apart. */
typedef struct scatter_case {
    uint32_t row_bytes, dy_step, base, rows, total_rows, n;
    uint32_t share[WORKERS];
    uint32_t dy_phase;          /* dY at 0 or 4 mod 8 */
    bool zero;
    unsigned held_in_4;
    uint32_t seed;
    const int32_t *fixed_idx;
} scatter_case;

static gather_result scatter_run(const scatter_case *sc)
{
    gather_result res;
    memset(&res, 0, sizeof res);
    rig r;
    if (!rig_open_entry(&r, "vtx_scatter_add_range_f32", SCATTER_ADD_V_WORDS)) {
        CU_FAIL("rig");
        rig_close(&r);
        return res;
    }
    lcg_state = sc->seed;
    size_t tb = (size_t)sc->rows * sc->row_bytes, db = sc->n ? (size_t)(sc->n - 1) * sc->dy_step + sc->row_bytes : 0;
    float *table = malloc(tb + SLACK_BYTES), *model = malloc(tb + SLACK_BYTES), *dy = malloc(db + 4);
    int32_t *idx = malloc((size_t)sc->n * 4 + 4);
    for (size_t i = 0; i < (tb + SLACK_BYTES) / 4; i++) {
        uint32_t v = i < tb / 4 ? 0x3f800000u + (lcg() & 0xffff) : SENTINEL;   /* [1, 1.008): zeroing shows */
        memcpy(&table[i], &v, 4);
    }
    memcpy(model, table, tb + SLACK_BYTES);
    for (size_t i = 0; i < db / 4; i++)
        dy[i] = (float)((int32_t)(lcg() & 0xfffff) - 0x80000) * 0x1p-12f;
    for (uint32_t i = 0; i < sc->n; i++) {
        int64_t k = lcg() % 4 < sc->held_in_4 ? sc->base + (int64_t)(lcg() % sc->rows) : (int64_t)(lcg() % sc->total_rows);
        if (lcg() % 4 == 0)
            k -= sc->total_rows;
        idx[i] = sc->fixed_idx ? sc->fixed_idx[i] : (int32_t)k;
    }
    uint32_t t_addr = rig_alloc(&r, tb, 0), i_addr = rig_alloc(&r, (size_t)sc->n * 4, 4);
    uint32_t d_addr = rig_alloc(&r, db, sc->dy_phase);
    CU_ASSERT_EQUAL(tmem_write_bytes(&r.t->s.mem, t_addr, table, tb + SLACK_BYTES), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_write_bytes(&r.t->s.mem, i_addr, idx, (size_t)sc->n * 4), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_write_bytes(&r.t->s.mem, d_addr, dy, db), TMEM_OK);
    uint32_t rec[WORKERS * SCATTER_ADD_V_WORDS];
    uint64_t w[WORKERS];
    uint32_t first = 0;
    for (unsigned k = 0; k < WORKERS; k++) {
        uint32_t *v = rec + k * SCATTER_ADD_V_WORDS;
        scatter_add_shape sh = {sc->row_bytes, sc->dy_step, sc->base + first, sc->share[k], sc->total_rows, sc->zero};
        uint32_t ta = t_addr + first * sc->row_bytes;
        v[SCATTER_ADD_V_TABLE] = ta;
        v[SCATTER_ADD_V_IDX] = i_addr;
        v[SCATTER_ADD_V_DY] = d_addr;
        v[SCATTER_ADD_V_N] = sc->n;
        v[SCATTER_ADD_V_ROW_BYTES] = sc->row_bytes;
        v[SCATTER_ADD_V_DY_STEP] = sc->dy_step;
        v[SCATTER_ADD_V_BASE] = sh.base;
        v[SCATTER_ADD_V_TABLE_ROWS] = sh.table_rows;
        v[SCATTER_ADD_V_TOTAL_ROWS] = sc->total_rows;
        v[SCATTER_ADD_V_ZERO] = sc->zero;
        bool pairs = ((sc->row_bytes | sc->dy_step | d_addr | ta) & 7) == 0;
        w[k] = embedding_model_scatter_add_cycles(idx, sc->n, &sh, pairs);
        CU_ASSERT_EQUAL(embedding_model_scatter_add(model + first * sc->row_bytes / 4, idx, dy, sc->n, &sh), sc->n);
        first += sc->share[k];
    }
    CU_ASSERT_EQUAL(first, sc->rows);
    CU_ASSERT_EQUAL(tmem_write_bytes(&r.t->s.mem, REC_ADDR, rec, sizeof rec), TMEM_OK);
    res.stop = tile_run_alone(r.t, 100000000);
    res.ran = res.stop == TILE_STOP_END;
    res.cycles = r.t->s.cycle;
    res.hand = hand_cycles(w);
    CU_ASSERT_EQUAL(tmem_read_bytes(&r.t->s.mem, t_addr, table, tb + SLACK_BYTES), TMEM_OK);
    for (size_t i = 0; i < (tb + SLACK_BYTES) / 4; i++)
        if (memcmp(&table[i], &model[i], 4) && res.mismatches++ < 4)
            fprintf(stderr, "\n  table word %zu: codelet %g, model %g", i, table[i], model[i]);
    free(table); free(model); free(dy); free(idx);
    rig_close(&r);
    return res;
}

/* The model on values worked by hand: rows 10..12 of a 20-row table of
 * two floats; indices 10 twice (they accumulate), -8 (= 12), 9 (not held). */
static void test_scatter_model(void)
{
    float table[6] = {7, 7, 7, 7, 7, 7};
    const float dy[8] = {1, 2, 0.5f, 0.25f, 100, 200, 8, 16};
    const int32_t idx[4] = {10, 9, 10, -8};
    scatter_add_shape s = {.row_bytes = 8, .dy_step_bytes = 8, .base = 10, .table_rows = 3, .total_rows = 20,
                           .zero = true};
    CU_ASSERT_EQUAL(embedding_model_scatter_add(table, idx, dy, 4, &s), 4);
    const float want[6] = {1 + 100, 2 + 200, 0, 0, 8, 16};
    for (unsigned i = 0; i < 6; i++)
        CU_ASSERT_EQUAL(f32_bits(table[i]), f32_bits(want[i]));
    /* Without zeroing the rows keep what they held; 20 is out of range. */
    s.zero = false;
    const int32_t bad[2] = {11, 20};
    CU_ASSERT_EQUAL(embedding_model_scatter_add(table, bad, dy, 2, &s), 1);
    CU_ASSERT_EQUAL(f32_bits(table[2]), f32_bits(1.0f));
    CU_ASSERT_EQUAL(f32_bits(table[3]), f32_bits(2.0f));
    /* Cycles: pairs, P = 1: 16 + (4 + 3 x 3) + 2 + (19 + 11 + 19 + 19). */
    s.zero = true;
    CU_ASSERT_EQUAL(embedding_model_scatter_add_cycles(idx, 4, &s, true), 16 + 13 + 2 + 68);
    CU_ASSERT_EQUAL(embedding_model_scatter_add_cycles(idx, 0, &s, true), 16 + 13 + 1);
    s.table_rows = 0;
    CU_ASSERT_EQUAL(embedding_model_scatter_add_cycles(idx, 4, &s, true), 3);
}

/* Pairs and words, repeated indices, workers with no rows, against the
 * model bit for bit and its cycles. */
static void test_scatter_rows(void)
{
    static const struct { uint32_t row_bytes, dy_step, base, total, dy_phase; bool zero; } shapes_sa[] = {
        {16, 16, 100, 300, 0, true},     /* pairs */
        {24, 32, 0, 30, 0, true},        /* pairs, gaps between dY rows */
        {12, 12, 40, 64, 0, true},       /* words: 12-byte rows */
        {16, 16, 30, 60, 4, true},       /* words: dY 4 mod 8 */
        {8, 8, 5, 40, 0, false},         /* adds to what the rows held */
    };
    static const uint32_t shares[][WORKERS] = {{3, 1, 0, 4, 2, 2}, {0, 0, 12, 0, 0, 0}};
    for (unsigned i = 0; i < sizeof shapes_sa / sizeof shapes_sa[0]; i++)
        for (unsigned j = 0; j < 2; j++) {
            scatter_case sc;
            memset(&sc, 0, sizeof sc);
            sc.row_bytes = shapes_sa[i].row_bytes;
            sc.dy_step = shapes_sa[i].dy_step;
            sc.base = shapes_sa[i].base;
            sc.rows = 12;
            sc.total_rows = shapes_sa[i].total;
            sc.n = 40;
            memcpy(sc.share, shares[j], sizeof sc.share);
            sc.dy_phase = shapes_sa[i].dy_phase;
            sc.zero = shapes_sa[i].zero;
            sc.held_in_4 = 3;
            sc.seed = 400u + 2 * i + j;
            gather_result res = scatter_run(&sc);
            check_ran(&res);
        }
}

/* BERT-Base's word embedding gradient: rows of 768 f32, 21 of the 30522
 * rows on the tile (3 or 4 a worker), 128 indices of which 2 are held. */
static void test_scatter_bert(void)
{
    scatter_case sc;
    memset(&sc, 0, sizeof sc);
    sc.row_bytes = sc.dy_step = 3072;
    sc.base = 2000;
    sc.rows = 21;
    sc.total_rows = 30522;
    sc.n = 128;
    const uint32_t share[WORKERS] = {4, 4, 4, 3, 3, 3};
    memcpy(sc.share, share, sizeof share);
    sc.zero = true;
    sc.seed = 2025;
    int32_t idx[128];
    for (unsigned i = 0; i < 128; i++)
        idx[i] = (int32_t)((i * 7919u) % 30522u);
    idx[5] = 2003;
    idx[77] = 2003 - 30522;
    sc.fixed_idx = idx;
    gather_result res = scatter_run(&sc);
    check_ran(&res);
    printf("\n    128 indices into 21 rows of 3072 B: %llu tile cycles\n", (unsigned long long)res.cycles);
}

void test_register(void)
{
    ADD_SUITE("codelets_embedding",
              {"model on hand-worked values", test_model},
              {"rows held and not held, pairs and words, vs model", test_rows},
              {"hand-counted cycles", test_hand_cycles},
              {"index out of range traps", test_bad_index},
              {"BERT-Base rows", test_bert_rows},
              {"scatter-add: model on hand-worked values", test_scatter_model},
              {"scatter-add: pairs and words vs model, hand cycles", test_scatter_rows},
              {"scatter-add: BERT-Base rows", test_scatter_bert});
}
