/*
 * test_codelets_matmul_f32.c — the kernel library's sv_matmul_f32 and
 * vtx_pack_b_f32 (workloads/codelets/matmul_f32.S) on one simulated GC200
 * tile:
 *   - results bit for bit those of matmul_model_f32, and within
 *     matmul_f32_error_bound of cblas_sgemm;
 *   - exact cycle counts (matmul_f32_cycles);
 *   - shapes: M a multiple of 6 or not, M = 0, 1, 5, the smallest K (8)
 *     and N (16), padded rows, two calls of different sizes on one tile;
 *   - placements: fast, slow (A and C in one element pair, C in region 0,
 *     rows too long for the pace strides), C ending at the top of memory;
 *     nothing written outside C's rows;
 *   - the placement and chunk rules, the unit order of the packed layout;
 *   - vtx_pack_b_f32 on the tile gives matmul_pack_weights_f32's bytes,
 *     and those weights give the model's product;
 *   - refusals: the trap codes of matmul_f32.h;
 *   - MACs per tile cycle at M = 384 (and 768), K = 128, N = 64.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/asm/asm.h"
#include "sim/program/machine.h"
#include "sim/engine/tile.h"
#include "test_util.h"
#include "validation/reference.h"
#include "workloads/codelets/codelet_library.h"
#include "workloads/codelets/matmul_f32.h"

#define MEM_END 0xe8000u

/* One call of sv_matmul_f32: sizes and where its operands go. */
typedef struct mf_call {
    unsigned m, k, n;
    bool initial_partials;
    uint32_t a, c;              /* addresses of A and C */
    uint32_t b;                 /* 0: after C, 16-byte aligned */
    uint32_t rec;               /* 0: after B; the scratch follows the record */
    uint32_t a_pad, c_pad;      /* bytes between rows */
    uint32_t m_word, k_word, n_word; /* nonzero: written instead of m, k, n (refusals) */
    bool specials;              /* denormals and a NaN among the operands: model only */
} mf_call;

typedef struct mf_host {
    float *a, *b, *bp, *c0, *c;
    uint32_t b_addr, rec_addr;
} mf_host;

static uint32_t lcg_state;
static float rnd_unit(void)
{
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return (float)((int32_t)(lcg_state >> 8) - (1 << 23)) / (float)(1 << 23);
}

/* The machine the calls run on (test_gc2 switches to GC2 and back) and
 * its f32 AMP rate for the cycle formula. */
static const char *g_preset = "gc200";
static uint32_t g_amp_peak_macs = 16;

static uint32_t a_step(const mf_call *c) { return c->k * 4 + c->a_pad; }
static uint32_t c_step(const mf_call *c) { return c->n * 4 + c->c_pad; }
static uint32_t align_up(uint32_t v, uint32_t a) { return (v + a - 1) & ~(a - 1); }

static matmul_f32_args args_of(const mf_call *c, uint32_t b_addr)
{
    matmul_f32_args a = {
        .a = c->a, .b = b_addr, .c = c->c, .m = c->m, .k = c->k, .n = c->n,
        .a_row_step = a_step(c), .c_row_step = c_step(c), .amp_peak_macs = g_amp_peak_macs,
    };
    return a;
}

static void layout_call(const mf_call *c, mf_host *h)
{
    uint32_t c_end = c->c + c->m * c_step(c);
    h->b_addr = c->b ? c->b : align_up(c_end + 64, 16);
    h->rec_addr = c->rec ? c->rec : align_up(h->b_addr + c->k * c->n * 4, 8);
}

static void setup_call(ipu_tile *t, const mf_call *c, mf_host *h, uint32_t seed)
{
    size_t m = c->m, k = c->k, n = c->n;
    h->a = calloc(m * k + 1, sizeof *h->a);
    h->b = calloc(k * n + 1, sizeof *h->b);
    h->bp = calloc(k * n + 1, sizeof *h->bp);
    h->c0 = calloc(m * n + 1, sizeof *h->c0);
    h->c = calloc(m * n + 1, sizeof *h->c);
    CU_ASSERT_FATAL(h->a && h->b && h->bp && h->c0 && h->c);
    lcg_state = seed;
    for (size_t i = 0; i < m * k; i++)
        h->a[i] = rnd_unit();
    for (size_t i = 0; i < k * n; i++)
        h->b[i] = rnd_unit();
    if (c->initial_partials)
        for (size_t i = 0; i < m * n; i++)
            h->c0[i] = h->c[i] = 4 * rnd_unit();
    if (c->specials && m * k > 3 && k * n > 3 && m * n > 1) {
        uint32_t den = 0x00400001u, nden = 0x80000003u, tiny = 0x00800000u;
        memcpy(&h->a[1], &den, 4);             /* flushed on the way in */
        memcpy(&h->b[2], &nden, 4);
        h->a[3] = 0x1p-70f;                    /* products below the f32 normals: flushed */
        memcpy(&h->b[3], &tiny, 4);
        h->c0[0] = h->c[0] = NAN;              /* a NaN partial: the tile's quiet NaN out */
        memcpy(&h->c[1], &den, 4);             /* a denormal partial */
        h->c0[1] = h->c[1];
    }
    if (k && n && k % 8 == 0 && n % 16 == 0)
        matmul_pack_weights_f32(h->b, k, n, h->bp);

    layout_call(c, h);
    /* C's whole span (pads included) filled with 0xab first, so that a
     * write outside the rows shows. */
    size_t span = (size_t)m * c_step(c) + 64;
    if (c->c + span > MEM_END)
        span = MEM_END - c->c;
    uint8_t *fill = malloc(span + 1);
    memset(fill, 0xab, span);
    CU_ASSERT_EQUAL(tmem_write_bytes(&t->s.mem, c->c, fill, span), TMEM_OK);
    free(fill);
    for (size_t r = 0; r < m; r++) {
        CU_ASSERT_EQUAL(tmem_write_bytes(&t->s.mem, c->a + (uint32_t)r * a_step(c), h->a + r * k, k * 4), TMEM_OK);
        CU_ASSERT_EQUAL(tmem_write_bytes(&t->s.mem, c->c + (uint32_t)r * c_step(c), h->c + r * n, n * 4), TMEM_OK);
    }
    if (k && n)
        CU_ASSERT_EQUAL(tmem_write_bytes(&t->s.mem, h->b_addr, h->bp, k * n * 4), TMEM_OK);
    uint32_t rec[MATMUL_F32_V_WORDS];
    rec[MATMUL_F32_V_A] = c->a;
    rec[MATMUL_F32_V_B] = h->b_addr;
    rec[MATMUL_F32_V_C] = c->c;
    rec[MATMUL_F32_V_M] = c->m_word ? c->m_word : c->m;
    rec[MATMUL_F32_V_K] = c->k_word ? c->k_word : c->k;
    rec[MATMUL_F32_V_N] = c->n_word ? c->n_word : c->n;
    rec[MATMUL_F32_V_A_ROW_STEP] = a_step(c);
    rec[MATMUL_F32_V_C_ROW_STEP] = c_step(c);
    rec[MATMUL_F32_V_SCRATCH] = h->rec_addr + MATMUL_F32_V_WORDS * 4 + 4;
    CU_ASSERT_EQUAL(tmem_write_bytes(&t->s.mem, h->rec_addr, rec, sizeof rec), TMEM_OK);
}

typedef struct mf_check {
    size_t bit_mismatches;
    size_t outside_writes;
    ref_error_stats vs_ref;
} mf_check;

static mf_check check_call(ipu_tile *t, const mf_call *c, mf_host *h)
{
    mf_check res;
    memset(&res, 0, sizeof res);
    size_t m = c->m, k = c->k, n = c->n;
    float *got = calloc(m * n + 1, sizeof *got), *ref = calloc(m * n + 1, sizeof *ref);
    double *sabs = calloc(m * n + 1, sizeof *sabs), *bound = calloc(m * n + 1, sizeof *bound);
    CU_ASSERT_FATAL(got && ref && sabs && bound);

    matmul_model_f32(h->a, h->b, m, k, n, h->c);
    for (size_t r = 0; r < m; r++) {
        uint32_t row = c->c + (uint32_t)r * c_step(c);
        CU_ASSERT_EQUAL(tmem_read_bytes(&t->s.mem, row, got + r * n, n * 4), TMEM_OK);
        for (size_t j = 0; j < n; j++) {
            uint32_t gb, mb;
            memcpy(&gb, &got[r * n + j], 4);
            memcpy(&mb, &h->c[r * n + j], 4);
            if (gb != mb && res.bit_mismatches++ < 4)
                fprintf(stderr, "\n  C[%zu][%zu]: codelet 0x%08x, model 0x%08x", r, j, gb, mb);
        }
        for (uint32_t p = 0; p < c->c_pad; p++) {
            uint8_t v = 0;
            tmem_read_bytes(&t->s.mem, row + n * 4 + p, &v, 1);
            res.outside_writes += v != 0xab;
        }
    }
    uint32_t c_end = c->c + (uint32_t)m * c_step(c);
    for (uint32_t p = 0; p < 64 && c_end + p < MEM_END; p++) {
        uint8_t v = 0;
        tmem_read_bytes(&t->s.mem, c_end + p, &v, 1);
        res.outside_writes += v != 0xab;
    }
    if (m && n) {
        ref_matmul_f32(h->a, h->b, ref, m, k, n);
        ref_matmul_abs_f64(h->a, h->b, sabs, m, k, n);
    }
    for (size_t i = 0; i < m * n; i++) {
        ref[i] += h->c0[i];
        bound[i] = matmul_f32_error_bound(k, sabs[i] + fabs(h->c0[i]));
    }
    res.vs_ref = ref_compare(got, ref, bound, m * n);
    if (m && n) {
        char name[160];
        snprintf(name, sizeof name, "  C = A[%ux%u] x B[%ux%u] (A 0x%x, C 0x%x) vs cblas_sgemm", c->m, c->k, c->k,
                 c->n, c->a, c->c);
        fputc('\n', stdout);
        ref_print_report(stdout, name, &res.vs_ref);
    }
    free(got); free(ref); free(sabs); free(bound);
    return res;
}

static void free_host(mf_host *h)
{
    free(h->a); free(h->b); free(h->bp); free(h->c0); free(h->c);
}

typedef struct mf_run {
    enum tile_stop stop;
    uint64_t cycles;
    uint32_t trap_code;
    uint8_t exception;
    uint32_t m9, m11;
    uint64_t amp_f32_macs;
} mf_run;

static ipu_exe *assemble(const char *text)
{
    char err[4096];
    const char *dirs[] = {IPUSIM_SOURCE_DIR};
    machine mach;
    CU_ASSERT_TRUE_FATAL(machine_preset(g_preset, &mach, err, sizeof err));
    asm_options opt = {.include_dirs = dirs, .n_include_dirs = 1, .memory_base = machine_memory_base(&mach)};
    ipu_exe *e = asm_assemble_string(text, "matmul_f32_control.S", &opt, err, sizeof err);
    if (!e)
        fprintf(stderr, "\nassembly failed:\n%s\n", err);
    return e;
}

static ipu_tile *new_tile(const ipu_exe *e)
{
    machine mach;
    char err[4096];
    CU_ASSERT_TRUE_FATAL(machine_preset(g_preset, &mach, err, sizeof err));
    ipu_tile *t = calloc(1, sizeof *t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_TRUE_FATAL(tile_init(t, &mach, 0));
    if (!tile_load(t, e, err, sizeof err)) {
        fprintf(stderr, "\nload failed: %s\n", err);
        CU_FAIL_FATAL("load failed");
    }
    return t;
}

/* Assemble the control program for n calls, load, write every call's
 * operands, run, and check each call when it ran to the end. */
static mf_run run_calls(const mf_call *calls, unsigned n, mf_check *checks)
{
    mf_run run;
    memset(&run, 0, sizeof run);
    mf_host host[4];
    memset(host, 0, sizeof host);
    CU_ASSERT_FATAL(n <= 4);
    char text[2048];
    size_t len = (size_t)snprintf(text, sizeof text,
                                  "    .text\n    .align 8\n    .globl __supervisor\n    .supervisor\n"
                                  "__supervisor:\n    setzi $m9, 0x1234\n    setzi $m11, 0x5678\n");
    for (unsigned i = 0; i < n; i++) {
        layout_call(&calls[i], &host[i]);
        len += (size_t)snprintf(text + len, sizeof text - len,
                                "    setzi $m1, 0x%x\n    call $m10, sv_matmul_f32\n", host[i].rec_addr);
    }
    snprintf(text + len, sizeof text - len, "    exitz $mzero\n    .include \"workloads/codelets/matmul_f32.S\"\n");
    ipu_exe *e = assemble(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    ipu_tile *t = new_tile(e);
    for (unsigned i = 0; i < n; i++)
        setup_call(t, &calls[i], &host[i], 4242u + 77u * i + calls[i].m);
    run.stop = tile_run_alone(t, 400000000);
    if (run.stop == TILE_STOP_FAULT) {
        char what[1024] = "";
        tile_describe_fault(t, e, what, sizeof what);
        run.exception = t->s.fault.exception;
        run.trap_code = t->s.trap_code;
        if (run.exception != ISA_EXC_BREAK)
            fprintf(stderr, "\nfault: %s\n", what);
    }
    run.cycles = t->s.cycle;
    run.m9 = t->s.ctx[ISA_SUPERVISOR].m[9];
    run.m11 = t->s.ctx[ISA_SUPERVISOR].m[11];
    run.amp_f32_macs = t->stats.amp_f32_macs;
    /* The issue loop's running totals agree with the derived counts. */
    CU_ASSERT_EQUAL(t->issued_instructions, t->stats.instructions);
    CU_ASSERT_EQUAL(t->issued_amp_macs[1], t->stats.amp_f32_macs);
    for (unsigned i = 0; i < n; i++) {
        if (run.stop == TILE_STOP_END && checks)
            checks[i] = check_call(t, &calls[i], &host[i]);
        free_host(&host[i]);
    }
    tile_free(t);
    free(t);
    exe_free(e);
    return run;
}

/* Cycles of the whole program: setzi $m9, setzi $m11, then for each call
 * a setzi $m1 and the call, and the final exitz. */
static uint64_t program_cycles(const mf_call *calls, unsigned n)
{
    uint64_t cycle = 2;
    for (unsigned i = 0; i < n; i++) {
        matmul_f32_args a = args_of(&calls[i], 0x100000);  /* B's address does not change the count */
        cycle += 1;
        cycle += matmul_f32_cycles(&a, cycle);
    }
    return cycle + 1;
}

static mf_run expect_ok(const mf_call *calls, unsigned n, bool want_cycles)
{
    mf_check chk[4];
    memset(chk, 0, sizeof chk);
    mf_run r = run_calls(calls, n, chk);
    CU_ASSERT_EQUAL(r.stop, TILE_STOP_END);
    CU_ASSERT_EQUAL(r.m9, 0x1234);
    CU_ASSERT_EQUAL(r.m11, 0x5678);
    for (unsigned i = 0; i < n && r.stop == TILE_STOP_END; i++) {
        CU_ASSERT_EQUAL(chk[i].bit_mismatches, 0);
        CU_ASSERT_EQUAL(chk[i].outside_writes, 0);
        if (calls[i].specials)
            continue;
        CU_ASSERT_EQUAL(chk[i].vs_ref.over_bound, 0);
        CU_ASSERT_EQUAL(chk[i].vs_ref.nonfinite, 0);
    }
    printf("    cycles: %llu", (unsigned long long)r.cycles);
    if (want_cycles) {
        uint64_t want = program_cycles(calls, n);
        printf(" (calculated %llu)", (unsigned long long)want);
        CU_ASSERT_EQUAL(r.cycles, want);
    }
    printf("\n");
    return r;
}

#define A0 0x50000u
#define C0 0x80000u

static void test_small(void)
{
    const mf_call c = {.m = 12, .k = 16, .n = 32, .a = A0, .c = C0};
    mf_run r = expect_ok(&c, 1, true);
    /* Every AMP issue is an f32sisov2amp: 16 MACs each, 8 issues a row and
     * block, plus the fill (18 a worker launch) and the loop's 2 more. */
    CU_ASSERT_EQUAL(r.amp_f32_macs, 16u * 6 * 2 * 2 * (18 + 8 * 2));
}

static void test_accumulates_into_c(void)
{
    const mf_call c = {.m = 18, .k = 24, .n = 48, .initial_partials = true, .a = A0, .c = C0};
    expect_ok(&c, 1, true);
}

/* Denormal inputs and partials, products that underflow, a NaN partial:
 * the codelet and the model agree bit for bit (fast and slow loops). */
static void test_special_values(void)
{
    const mf_call fast = {.m = 12, .k = 16, .n = 16, .initial_partials = true, .specials = true, .a = A0,
                          .c = C0};
    expect_ok(&fast, 1, true);
    const mf_call slow = {.m = 3, .k = 8, .n = 16, .initial_partials = true, .specials = true, .a = A0,
                          .c = 0x60000, .b = 0x90000};
    expect_ok(&slow, 1, true);
    /* The model's NaN is the tile's quiet NaN, and the denormal partial
     * plus nothing is +0. */
    float a[8] = {0}, b[8 * 16] = {0}, c[16] = {0};
    uint32_t den = 0x00400001u, bits;
    c[0] = NAN;
    memcpy(&c[1], &den, 4);
    matmul_model_f32(a, b, 1, 8, 16, c);
    memcpy(&bits, &c[0], 4);
    CU_ASSERT_EQUAL(bits, 0x7FD9C000u);
    memcpy(&bits, &c[1], 4);
    CU_ASSERT_EQUAL(bits, 0u);
}

/* On GC2 (tile memory from 0x60000, one AMP engine set: 8 f32 MACs a
 * cycle) every f32sisov2amp holds its worker two turns; the formula with
 * amp_peak_macs = 8 still gives the simulated cycles exactly, fast, slow
 * and mixed chunks, and the fast loop takes close to twice GC200's time. */
static void test_gc2(void)
{
    const mf_call calls[] = {
        {.m = 48, .k = 32, .n = 64, .a = 0x68000, .c = C0},
        {.m = 14, .k = 8, .n = 16, .initial_partials = true, .a = 0x68000, .c = C0},
        {.m = 3, .k = 8, .n = 16, .initial_partials = true, .a = 0x68000, .c = C0},
        {.m = 12, .k = 16, .n = 32, .a = 0x68000, .c = 0x70000, .b = 0x90000},
    };
    uint64_t gc200_cycles = expect_ok(&calls[0], 1, true).cycles;
    g_preset = "gc2";
    g_amp_peak_macs = 8;
    uint64_t gc2_cycles = 0;
    for (unsigned i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        uint64_t c = expect_ok(&calls[i], 1, true).cycles;
        if (i == 0)
            gc2_cycles = c;
    }
    g_preset = "gc200";
    g_amp_peak_macs = 16;
    printf("    48 x 32 x 64: %llu cycles on gc200, %llu on gc2\n", (unsigned long long)gc200_cycles,
           (unsigned long long)gc2_cycles);
    CU_ASSERT_TRUE(gc2_cycles > gc200_cycles * 3 / 2 && gc2_cycles < gc200_cycles * 2);
}

/* The smallest K and N, M not a multiple of 6, small M (chunks walked
 * backwards, or slow), M = 0. */
static void test_row_counts(void)
{
    const unsigned ms[] = {14, 7, 6, 5, 4, 3, 2, 1};
    for (unsigned i = 0; i < sizeof ms / sizeof ms[0]; i++) {
        mf_call c = {.m = ms[i], .k = 8, .n = 16, .initial_partials = true, .a = A0, .c = C0};
        expect_ok(&c, 1, true);
    }
    const mf_call z = {.m = 0, .k = 8, .n = 16, .a = A0, .c = C0};
    mf_run r = expect_ok(&z, 1, true);
    CU_ASSERT_EQUAL(r.cycles, 8);   /* setzi x3, call, ld32, brz, br, exitz */
}

static void test_rules(void)
{
    /* The unit order: result pair j is columns 2j, 2j+1 (set j % 2). */
    const unsigned want_ch[16] = {0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15};
    for (unsigned u = 0; u < 16; u++)
        CU_ASSERT_EQUAL(matmul_f32_unit_channel(u), want_ch[u]);
    /* The packed layout: group 1, block 1, unit 9 (column 16 + 3), input 5. */
    size_t k = 16, n = 32;
    float *b = malloc(k * n * sizeof *b), *p = malloc(k * n * sizeof *p);
    for (size_t i = 0; i < k * n; i++)
        b[i] = (float)i;
    matmul_pack_weights_f32(b, k, n, p);
    CU_ASSERT_EQUAL(p[(1 * 2 + 1) * 128 + 9 * 8 + 5], b[(8 + 5) * n + 16 + 3]);
    CU_ASSERT_EQUAL(p[1], b[1 * n + 0]);
    CU_ASSERT_EQUAL(p[8], b[0 * n + 1]);
    CU_ASSERT_EQUAL(p[16], b[0 * n + 4]);
    free(b);
    free(p);

    matmul_f32_args a = {.a = A0, .b = 0x90000, .c = C0, .m = 5, .k = 8, .n = 16, .a_row_step = 32,
                         .c_row_step = 64};
    const enum matmul_f32_chunk want5[6] = {MATMUL_F32_CHUNK_FORWARD, MATMUL_F32_CHUNK_FORWARD,
                                            MATMUL_F32_CHUNK_SLOW, MATMUL_F32_CHUNK_BACKWARD,
                                            MATMUL_F32_CHUNK_BACKWARD, MATMUL_F32_CHUNK_EMPTY};
    for (unsigned w = 0; w < 6; w++) {
        uint32_t first, rows;
        CU_ASSERT_EQUAL(matmul_f32_chunk(&a, w, &first, &rows), want5[w]);
    }
    a.m = 20;
    uint32_t first = 0, rows = 0;
    CU_ASSERT_EQUAL(matmul_f32_chunk(&a, 5, &first, &rows), MATMUL_F32_CHUNK_BACKWARD);
    CU_ASSERT_EQUAL(first, 19);
    CU_ASSERT_EQUAL(rows, 3);
    CU_ASSERT_TRUE(matmul_f32_fast_placement(&a));
    a.c = 0x70000;                                  /* C in region 0 */
    CU_ASSERT_FALSE(matmul_f32_fast_placement(&a));
    a.c = C0;
    a.c_row_step = 72;                              /* not a multiple of 16 */
    CU_ASSERT_FALSE(matmul_f32_fast_placement(&a));
    a.c_row_step = 64;
    a.a = 0x87fc0;                                  /* A's last byte in C's block */
    CU_ASSERT_FALSE(matmul_f32_fast_placement(&a));
    a.a = 0x88000;
    CU_ASSERT_TRUE(matmul_f32_fast_placement(&a));
    a.a = A0;
    a.c_row_step = 4048;                            /* too long for a backwards stride */
    CU_ASSERT_FALSE(matmul_f32_fast_placement(&a));
    a.c_row_step = 4032;
    CU_ASSERT_TRUE(matmul_f32_fast_placement(&a));
    /* The bound: 2 gamma(K + 2) sum_abs, and the flush term. */
    CU_ASSERT_DOUBLE_EQUAL(matmul_f32_error_bound(8, 1.0), 20.0 * ldexp(1.0, -24) / (1.0 - 10.0 * ldexp(1.0, -24))
                                                               + 25.0 * ldexp(1.0, -126), 1e-22);
}

/* Placements that fail the fast condition run the slow loop: correct, no
 * conflict, slower. */
static void test_slow_placements(void)
{
    const mf_call same_pair = {.m = 12, .k = 16, .n = 16, .initial_partials = true, .a = 0x80000,
                               .c = 0x80000 + 12 * 64};
    mf_run slow = expect_ok(&same_pair, 1, true);
    mf_call fast = same_pair;
    fast.a = A0;
    mf_run quick = expect_ok(&fast, 1, true);
    CU_ASSERT_TRUE(slow.cycles > quick.cycles);
    const mf_call c_r0 = {.m = 13, .k = 16, .n = 32, .initial_partials = true, .a = A0, .c = 0x60000,
                          .b = 0x90000, .a_pad = 8, .c_pad = 8};
    expect_ok(&c_r0, 1, true);
    const mf_call long_rows = {.m = 8, .k = 8, .n = 16, .a = A0, .c = C0, .c_pad = 4096 - 64};
    expect_ok(&long_rows, 1, true);
}

/* Padded rows, and C's last row ending at the top of tile memory: a read
 * past C would fault there. */
static void test_fast_edges(void)
{
    const mf_call padded = {.m = 24, .k = 16, .n = 16, .initial_partials = true, .a = A0, .c = C0,
                            .a_pad = 24, .c_pad = 16};
    expect_ok(&padded, 1, true);
    mf_call top = {.m = 30, .k = 8, .n = 32, .initial_partials = true, .a = A0, .b = 0x90000, .rec = 0x98000};
    top.c = MEM_END - 30 * 32 * 4;
    expect_ok(&top, 1, true);
    /* The longest row steps the pace strides take, walked both ways. */
    const mf_call longest = {.m = 12, .k = 8, .n = 16, .initial_partials = true, .a = A0, .c = C0,
                             .a_pad = MATMUL_F32_MAX_FAST_ROW_STEP_BYTES - 32, .c_pad = 4032 - 64};
    matmul_f32_args la = args_of(&longest, 0x100000);
    CU_ASSERT_TRUE(matmul_f32_fast_placement(&la));
    expect_ok(&longest, 1, true);
    mf_call both = {.m = 6, .k = 8, .n = 16, .b = 0x90000, .rec = 0x98000};
    both.a = MEM_END - 6 * 32;
    both.c = 0xa0000;
    expect_ok(&both, 1, true);
}

/* Two calls of different sizes and kinds on one tile, and chunks of every
 * kind over several groups and blocks. */
static void test_two_calls(void)
{
    const mf_call calls[3] = {
        {.m = 12, .k = 16, .n = 32, .a = A0, .c = C0},
        {.m = 31, .k = 24, .n = 16, .initial_partials = true, .a = 0x60000, .c = 0xa0000},
        {.m = 5, .k = 16, .n = 48, .initial_partials = true, .a = 0x68000, .c = 0xb0000},
    };
    expect_ok(calls, 3, true);
}

/* The cost of one more weight block (matmul_f32.S's header): 32
 * ld128putcs, runall, sync, add, st32, brnzdec and 6 (8 R + 32) worker
 * cycles; one more group adds 6 supervisor issues. */
static void test_block_cost(void)
{
    mf_call c = {.m = 48, .k = 8, .n = 16, .a = A0, .c = C0};
    uint64_t one = expect_ok(&c, 1, true).cycles;
    c.k = 16;
    CU_ASSERT_EQUAL(expect_ok(&c, 1, true).cycles - one, 32 + 5 + 6 * (8 * 8 + 32));     /* 613 */
    c.k = 8;
    c.n = 32;
    CU_ASSERT_EQUAL(expect_ok(&c, 1, true).cycles - one, 32 + 5 + 6 + 6 * (8 * 8 + 32)); /* 619 */
}

static void expect_trap(const mf_call *c, uint32_t code)
{
    mf_run r = run_calls(c, 1, NULL);
    CU_ASSERT_EQUAL(r.stop, TILE_STOP_FAULT);
    CU_ASSERT_EQUAL(r.exception, ISA_EXC_BREAK);
    CU_ASSERT_EQUAL(r.trap_code, code);
}

static void test_refusals(void)
{
    const mf_call ok = {.m = 6, .k = 8, .n = 16, .a = A0, .c = C0};
    mf_call c = ok;
    c.k_word = 12;                       /* K not a multiple of 8 */
    expect_trap(&c, MATMUL_F32_TRAP_SIZES);
    c = ok;
    c.n_word = 8;                        /* N not a multiple of 16 */
    expect_trap(&c, MATMUL_F32_TRAP_SIZES);
    c = ok;
    c.a = A0 + 4;
    expect_trap(&c, MATMUL_F32_TRAP_ALIGN);
    c = ok;
    c.c_pad = 4;                         /* C row step not a multiple of 8 */
    expect_trap(&c, MATMUL_F32_TRAP_ALIGN);
    c = ok;
    c.b = 0x90008;                       /* B 8- but not 16-byte aligned */
    expect_trap(&c, MATMUL_F32_TRAP_ALIGN);
    c = ok;
    c.b = 0x70000;                       /* B in region 0 */
    expect_trap(&c, MATMUL_F32_TRAP_B_REGION);
    c = ok;
    c.m_word = MATMUL_F32_MAX_ROWS + 1;
    expect_trap(&c, MATMUL_F32_TRAP_ROWS);
}

static double check_large(const mf_call *c, double at_least)
{
    mf_run r = expect_ok(c, 1, true);
    double per_cycle = (double)c->m * c->k * c->n / (double)r.cycles;
    printf("    M %u K %u N %u: %llu cycles, %.2f MACs per tile cycle = %.3f of the f32 AMP's 16\n", c->m, c->k,
           c->n, (unsigned long long)r.cycles, per_cycle, per_cycle / 16.0);
    CU_ASSERT_TRUE(per_cycle / 16.0 >= at_least);
    return per_cycle;
}

static void test_large(void)
{
    const mf_call c = {.m = 384, .k = 128, .n = 64, .a = A0, .c = C0};
    check_large(&c, 0.925);
}

/* vtx_pack_b_f32 with six workers (groups shared unevenly, the last with
 * none) equals matmul_pack_weights_f32; B with a padded row step. */
static void check_pack(size_t k, size_t n, uint32_t row_pad)
{
    const uint32_t rec = 0x80000, src = 0x90000, dst = 0xc0000;
    char text[512];
    snprintf(text, sizeof text,
             ".include \"workloads/codelets/matmul_f32.S\"\n"
             "    .align 8\n    .globl __supervisor\n    .supervisor\n__supervisor:\n"
             "    setzi $m5, %u\n    setzi $m6, %u\n    setzi $m7, vtx_pack_b_f32\n"
             "    runall $m7, $m5, $m6\n    sync 0\n    exitz $mzero\n",
             rec, PACK_F32_V_WORDS * 4u);
    ipu_exe *e = assemble(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    ipu_tile *t = new_tile(e);
    float *b = malloc(k * n * sizeof *b), *got = malloc(k * n * sizeof *got), *want = malloc(k * n * sizeof *want);
    lcg_state = 99;
    for (size_t i = 0; i < k * n; i++)
        b[i] = rnd_unit();
    uint32_t step = (uint32_t)n * 4 + row_pad;
    for (size_t r = 0; r < k; r++)
        CU_ASSERT_EQUAL(tmem_write_bytes(&t->s.mem, src + (uint32_t)r * step, b + r * n, n * 4), TMEM_OK);
    size_t groups = n / 16, g = 0;
    for (unsigned w = 0; w < 6; w++) {
        size_t mine = w == 5 ? 0 : groups / 5 + (w < groups % 5);
        uint32_t r[PACK_F32_V_WORDS] = {src + (uint32_t)(g * 64), dst + (uint32_t)(g * (k / 8) * 512),
                                        (uint32_t)(k / 8), (uint32_t)mine, step};
        CU_ASSERT_EQUAL(tmem_write_bytes(&t->s.mem, rec + w * PACK_F32_V_WORDS * 4, r, sizeof r), TMEM_OK);
        g += mine;
    }
    CU_ASSERT_EQUAL(tile_run_alone(t, 100000000), TILE_STOP_END);
    CU_ASSERT_EQUAL(tmem_read_bytes(&t->s.mem, dst, got, k * n * 4), TMEM_OK);
    matmul_pack_weights_f32(b, k, n, want);
    CU_ASSERT_EQUAL(memcmp(got, want, k * n * 4), 0);
    printf("    pack K %zu N %zu: %llu cycles\n", k, n, (unsigned long long)t->s.cycle);
    tile_free(t);
    free(t);
    exe_free(e);
    free(b); free(got); free(want);
}

static void test_pack(void)
{
    check_pack(8, 16, 0);
    check_pack(24, 112, 8);
    check_pack(64, 64, 32);
}

/* matmul_f32.S assembles inside the kernel library image. */
static void test_in_library(void)
{
    char err[2048];
    const codelet_library *lib = codelet_library_get(ISA_MEMORY_BASE, err, sizeof err);
    if (!lib)
        fprintf(stderr, "\n%s\n", err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(lib);
    const char *names[] = {"sv_matmul_f32", "vtx_pack_b_f32"};
    for (unsigned i = 0; i < 2; i++) {
        const exe_symbol *s = exe_find_symbol(lib->image, names[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        CU_ASSERT_EQUAL(s->addr % 8, 0);
        CU_ASSERT_TRUE(s->addr >= 0x4c000 && s->addr < lib->region0_end);
    }
}

void test_register(void)
{
    ADD_SUITE("codelets_matmul_f32",
              {"small: model, reference, cycles, MACs", test_small},
              {"gc2: one AMP engine set, the formula still exact", test_gc2},
              {"accumulates into C", test_accumulates_into_c},
              {"special values: denormals, underflow, NaN", test_special_values},
              {"row counts incl. M = 0, 1, not a multiple of 6; K = 8, N = 16", test_row_counts},
              {"unit order, packing, chunk, placement and bound rules", test_rules},
              {"slow placements", test_slow_placements},
              {"fast edges: padded rows, C at the top of memory", test_fast_edges},
              {"calls of different sizes on one tile", test_two_calls},
              {"cost of a weight block and of an output group", test_block_cost},
              {"refusals", test_refusals},
              {"vtx_pack_b_f32 equals the host packer", test_pack},
              {"large: MACs per cycle", test_large},
              {"assembles in the kernel library", test_in_library});
}
