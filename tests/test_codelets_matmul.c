/*
 * test_codelets_matmul.c — the kernel library's sv_matmul_f16
 * (workloads/codelets/matmul.S) called from a small control program on one
 * simulated GC200 tile:
 *   - results bit for bit those of matmul_model_f16, and within the
 *     tolerance of validation/reference.c against cblas_sgemm;
 *   - exact cycle counts (matmul_f16_cycles, derived in matmul.S's header);
 *   - shapes: M a multiple of 6 or not, M = 0, 1, 4, 5, K = 16, N = 16 / 8,
 *     padded row steps, two calls on one tile;
 *   - placements: the fast condition, the slow loop (A and C in one
 *     element pair, C in region 0), C ending at the top of memory (the
 *     pipeline must not read past it), nothing written outside C's rows;
 *   - relaunches: workers of every kind (forwards, backwards, slow, idle)
 *     over several output groups and weight blocks, calls of different
 *     kinds one after another; the exact cost of one more weight block and
 *     of one more output group;
 *   - refusals: the trap codes of matmul.h;
 *   - MACs per tile cycle at M = 768 / 576 / 192, K = 128, N = 128, and on
 *     the compiler's block M = 48 (and 96), K = 1024, N = 24.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/asm/asm.h"
#include "isa/fp16.h"
#include "sim/program/machine.h"
#include "sim/engine/tile.h"
#include "test_util.h"
#include "validation/reference.h"
#include "workloads/codelets/codelet_library.h"
#include "workloads/codelets/matmul.h"
#include "workloads/kernels/matmul_model.h"

#define MEM_END 0xe8000u

/* One call of sv_matmul_f16: sizes and where its operands go. */
typedef struct mc_call {
    unsigned m, k, n;
    bool f16_partials;
    bool initial_partials;
    uint32_t a, c;              /* addresses of A and C */
    uint32_t b;                 /* 0: after C, 16-byte aligned */
    uint32_t rec;               /* 0: after B; the scratch follows the record */
    uint32_t a_pad, c_pad;      /* bytes between rows */
    uint32_t m_word, k_word, partials_word; /* nonzero: written instead of m, k, the kind (refusals) */
} mc_call;

typedef struct mc_host {
    f16_t *a, *b, *bp;
    float *c0;                  /* initial partials as f32 values */
    f16_t *c16;                 /* f16 partials: initial, then model result */
    float *c32;
    uint32_t b_addr, rec_addr;
} mc_host;

static uint32_t lcg_state;
static float rnd_unit(void)
{
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return (float)((int32_t)(lcg_state >> 8) - (1 << 23)) / (float)(1 << 23);
}

/* The machine the calls run on (test_gc2 switches to GC2 and back) and
 * its f16 AMP rate for the cycle formula. */
static const char *g_preset = "gc200";
static uint32_t g_amp_peak_macs = 64;
/* true: the calls are sv_matmul_f16_wl's, on the records
 * matmul_f16_wl_record makes (test_worklists). */
static bool g_worklists = false;

static unsigned elem_bytes(const mc_call *c) { return c->f16_partials ? 2u : 4u; }
static uint32_t a_step(const mc_call *c) { return c->k * 2 + c->a_pad; }
static uint32_t c_step(const mc_call *c) { return c->n * elem_bytes(c) + c->c_pad; }
static uint32_t align_up(uint32_t v, uint32_t a) { return (v + a - 1) & ~(a - 1); }

static matmul_f16_args args_of(const mc_call *c, const mc_host *h)
{
    matmul_f16_args a = {
        .a = c->a, .b = h->b_addr, .c = c->c, .m = c->m, .k = c->k, .n = c->n,
        .a_row_step = a_step(c), .c_row_step = c_step(c),
        .partials = c->f16_partials ? MATMUL_PARTIALS_F16 : MATMUL_PARTIALS_F32,
        .amp_peak_macs = g_amp_peak_macs, .worklists = g_worklists,
    };
    return a;
}

/* Where B and the record (then the scratch) go. */
static void layout_call(const mc_call *c, mc_host *h)
{
    uint32_t c_end = c->c + c->m * c_step(c);
    h->b_addr = c->b ? c->b : align_up(c_end + 64, 16);
    h->rec_addr = c->rec ? c->rec : align_up(h->b_addr + c->k * c->n * 2, 8);
}

/* Random operands, written to the tile; the record written at h->rec_addr. */
static void setup_call(ipu_tile *t, const mc_call *c, mc_host *h, uint32_t seed)
{
    size_t m = c->m, k = c->k, n = c->n;
    enum matmul_partials part = c->f16_partials ? MATMUL_PARTIALS_F16 : MATMUL_PARTIALS_F32;
    h->a = calloc(m * k + 1, sizeof *h->a);
    h->b = calloc(k * n + 1, sizeof *h->b);
    h->bp = calloc(k * n + 1, sizeof *h->bp);
    h->c0 = calloc(m * n + 1, sizeof *h->c0);
    h->c16 = calloc(m * n + 1, sizeof *h->c16);
    h->c32 = calloc(m * n + 1, sizeof *h->c32);
    CU_ASSERT_FATAL(h->a && h->b && h->bp && h->c0 && h->c16 && h->c32);
    lcg_state = seed;
    for (size_t i = 0; i < m * k; i++)
        h->a[i] = fp16_from_f32(rnd_unit());
    for (size_t i = 0; i < k * n; i++)
        h->b[i] = fp16_from_f32(rnd_unit());
    if (c->initial_partials)
        for (size_t i = 0; i < m * n; i++) {
            h->c16[i] = fp16_from_f32(4 * rnd_unit());
            h->c0[i] = c->f16_partials ? fp16_to_f32(h->c16[i]) : 4 * rnd_unit();
            h->c32[i] = h->c0[i];
        }
    if (k && n && k % 16 == 0 && n % matmul_group(part) == 0)
        matmul_pack_weights(h->b, k, n, part, h->bp);

    layout_call(c, h);
    /* Fill all the region C's rows span (pads included) with 0xab first, so
     * that a write outside the rows shows. */
    size_t span = (size_t)m * c_step(c) + 64;
    if (c->c + span > MEM_END)
        span = MEM_END - c->c;
    uint8_t *fill = malloc(span + 1);
    memset(fill, 0xab, span);
    CU_ASSERT_EQUAL(tmem_write_bytes(&t->s.mem, c->c, fill, span), TMEM_OK);
    free(fill);
    for (size_t r = 0; r < m; r++) {
        CU_ASSERT_EQUAL(tmem_write_bytes(&t->s.mem, c->a + (uint32_t)r * a_step(c), h->a + r * k, k * 2), TMEM_OK);
        if (c->f16_partials)
            CU_ASSERT_EQUAL(tmem_write_bytes(&t->s.mem, c->c + (uint32_t)r * c_step(c), h->c16 + r * n, n * 2), TMEM_OK)
        else
            CU_ASSERT_EQUAL(tmem_write_bytes(&t->s.mem, c->c + (uint32_t)r * c_step(c), h->c32 + r * n, n * 4), TMEM_OK)
    }
    if (k && n)
        CU_ASSERT_EQUAL(tmem_write_bytes(&t->s.mem, h->b_addr, h->bp, k * n * 2), TMEM_OK);
    uint32_t rec[MATMUL_F16_V_WORDS];
    rec[MATMUL_F16_V_A] = c->a;
    rec[MATMUL_F16_V_B] = h->b_addr;
    rec[MATMUL_F16_V_C] = c->c;
    rec[MATMUL_F16_V_M] = c->m_word ? c->m_word : c->m;
    rec[MATMUL_F16_V_K] = c->k_word ? c->k_word : c->k;
    rec[MATMUL_F16_V_N] = c->n;
    rec[MATMUL_F16_V_A_ROW_STEP] = a_step(c);
    rec[MATMUL_F16_V_C_ROW_STEP] = c_step(c);
    rec[MATMUL_F16_V_PARTIALS] = c->partials_word ? c->partials_word : (uint32_t)part;
    rec[MATMUL_F16_V_SCRATCH] = h->rec_addr + MATMUL_F16_V_WORDS * 4 + 8;
    if (g_worklists) {
        uint32_t wl[MATMUL_F16_WL_WORDS];
        matmul_f16_args a = args_of(c, h);
        const char *why = NULL;
        CU_ASSERT_TRUE_FATAL(matmul_f16_wl_record(&a, wl, &why));
        CU_ASSERT_EQUAL(tmem_write_bytes(&t->s.mem, h->rec_addr, wl, sizeof wl), TMEM_OK);
        return;
    }
    CU_ASSERT_EQUAL(tmem_write_bytes(&t->s.mem, h->rec_addr, rec, sizeof rec), TMEM_OK);
}

typedef struct mc_check {
    size_t bit_mismatches;
    size_t outside_writes;      /* bytes of C's span outside its rows that changed */
    ref_error_stats vs_ref;
} mc_check;

/* Compare C on the tile with the model and the f32 reference. */
static mc_check check_call(ipu_tile *t, const mc_call *c, mc_host *h)
{
    mc_check res;
    memset(&res, 0, sizeof res);
    size_t m = c->m, k = c->k, n = c->n;
    enum matmul_partials part = c->f16_partials ? MATMUL_PARTIALS_F16 : MATMUL_PARTIALS_F32;
    float *got = calloc(m * n + 1, sizeof *got), *ref = calloc(m * n + 1, sizeof *ref);
    float *af = calloc(m * k + 1, sizeof *af), *bf = calloc(k * n + 1, sizeof *bf);
    double *sabs = calloc(m * n + 1, sizeof *sabs), *bound = calloc(m * n + 1, sizeof *bound);
    CU_ASSERT_FATAL(got && ref && af && bf && sabs && bound);

    matmul_model_f16(h->a, h->b, m, k, n, part, h->c32, h->c16);
    for (size_t r = 0; r < m; r++) {
        uint32_t row = c->c + (uint32_t)r * c_step(c);
        for (size_t j = 0; j < n; j++) {
            size_t i = r * n + j;
            uint32_t gb = 0, mb;
            tmem_read_bytes(&t->s.mem, row + (uint32_t)j * elem_bytes(c), &gb, elem_bytes(c));
            if (c->f16_partials) {
                mb = h->c16[i];
                got[i] = fp16_to_f32((f16_t)gb);
            } else {
                memcpy(&mb, &h->c32[i], 4);
                memcpy(&got[i], &gb, 4);
            }
            if (gb != mb && res.bit_mismatches++ < 4)
                fprintf(stderr, "\n  C[%zu][%zu]: codelet 0x%08x, model 0x%08x", r, j, gb, mb);
        }
        for (uint32_t p = 0; p < c->c_pad; p++) {
            uint8_t v = 0;
            tmem_read_bytes(&t->s.mem, row + n * elem_bytes(c) + p, &v, 1);
            res.outside_writes += v != 0xab;
        }
    }
    uint32_t c_end = c->c + (uint32_t)m * c_step(c);
    for (uint32_t p = 0; p < 64 && c_end + p < MEM_END; p++) {
        uint8_t v = 0;
        tmem_read_bytes(&t->s.mem, c_end + p, &v, 1);
        res.outside_writes += v != 0xab;
    }

    for (size_t i = 0; i < m * k; i++)
        af[i] = fp16_to_f32(h->a[i]);
    for (size_t i = 0; i < k * n; i++)
        bf[i] = fp16_to_f32(h->b[i]);
    if (m && n) {
        ref_matmul_f32(af, bf, ref, m, k, n);
        ref_matmul_abs_f64(af, bf, sabs, m, k, n);
    }
    ref_dot_policy pol = {
        .k = k, .accum = c->f16_partials ? REF_ACCUM_F16 : REF_ACCUM_F32, .block = 16,
        .terms_per_rounding = 4, .f16_output = c->f16_partials, .stochastic = false,
    };
    for (size_t i = 0; i < m * n; i++) {
        ref[i] += h->c0[i];
        bound[i] = ref_dot_bound(&pol, sabs[i] + fabs(h->c0[i]), ref[i]);
    }
    res.vs_ref = ref_compare(got, ref, bound, m * n);
    char name[160];
    snprintf(name, sizeof name, "  C = A[%ux%u] x B[%ux%u] (%s partials, A 0x%x, C 0x%x) vs cblas_sgemm", c->m,
             c->k, c->k, c->n, c->f16_partials ? "f16" : "f32", c->a, c->c);
    if (m && n) {
        fputc('\n', stdout);
        ref_print_report(stdout, name, &res.vs_ref);
    }
    free(got); free(ref); free(af); free(bf); free(sabs); free(bound);
    return res;
}

static void free_host(mc_host *h)
{
    free(h->a); free(h->b); free(h->bp); free(h->c0); free(h->c16); free(h->c32);
}

typedef struct mc_run {
    enum tile_stop stop;
    uint64_t cycles;
    uint32_t trap_code;
    uint8_t exception;
    uint32_t m9, m11;
    uint64_t amp_f16_macs;
} mc_run;

/* Assemble the control program for n calls, load, write every call's
 * operands, run, and check each call when it ran to the end. */
static mc_run run_calls(const mc_call *calls, unsigned n, mc_check *checks)
{
    mc_run run;
    memset(&run, 0, sizeof run);
    machine mach;
    char err[4096];
    CU_ASSERT_TRUE_FATAL(machine_preset(g_preset, &mach, err, sizeof err));
    ipu_tile *t = calloc(1, sizeof *t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_TRUE_FATAL(tile_init(t, &mach, 0));

    mc_host host[4];
    memset(host, 0, sizeof host);
    CU_ASSERT_FATAL(n <= 4);
    char text[2048];
    size_t len = (size_t)snprintf(text, sizeof text,
                                  "    .text\n    .align 8\n    .globl __supervisor\n    .supervisor\n"
                                  "__supervisor:\n    setzi $m9, 0x1234\n    setzi $m11, 0x5678\n");
    for (unsigned i = 0; i < n; i++) {
        layout_call(&calls[i], &host[i]);
        len += (size_t)snprintf(text + len, sizeof text - len,
                                "    setzi $m1, 0x%x\n    call $m10, sv_matmul_f16%s\n", host[i].rec_addr,
                                g_worklists ? "_wl" : "");
    }
    snprintf(text + len, sizeof text - len, "    exitz $mzero\n    .include \"workloads/codelets/matmul.S\"\n");
    const char *dirs[] = {IPUSIM_SOURCE_DIR};
    asm_options opt = {.include_dirs = dirs, .n_include_dirs = 1, .memory_base = machine_memory_base(&mach)};
    ipu_exe *e = asm_assemble_string(text, "matmul_control.S", &opt, err, sizeof err);
    if (!e) {
        fprintf(stderr, "\nassembly failed:\n%s\n", err);
        CU_FAIL_FATAL("matmul.S does not assemble");
    }
    if (!tile_load(t, e, err, sizeof err)) {
        fprintf(stderr, "\nload failed: %s\n", err);
        CU_FAIL_FATAL("load failed");
    }
    for (unsigned i = 0; i < n; i++)
        setup_call(t, &calls[i], &host[i], 4242u + 77u * i + calls[i].m);
    run.stop = tile_run_alone(t, 200000000);
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
    run.amp_f16_macs = t->stats.amp_f16_macs;
    /* The issue loop's running totals (what the engine reads each superstep)
     * agree with the counts tile_collect_stats derives them from. */
    CU_ASSERT_EQUAL(t->issued_instructions, t->stats.instructions);
    CU_ASSERT_EQUAL(t->issued_amp_macs[0], t->stats.amp_f16_macs);
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
static uint64_t program_cycles(const mc_call *calls, unsigned n)
{
    uint64_t cycle = 2;
    for (unsigned i = 0; i < n; i++) {
        mc_host h = {.b_addr = 0x100000};  /* B's address does not change the count */
        matmul_f16_args a = args_of(&calls[i], &h);
        cycle += 1;
        cycle += matmul_f16_cycles(&a, cycle);
    }
    return cycle + 1;
}

/* Run the calls; every one must be bit-exact, within tolerance, write only
 * C's rows, and (when want_cycles) take exactly program_cycles(). */
static mc_run expect_ok(const mc_call *calls, unsigned n, bool want_cycles)
{
    mc_check chk[4];
    memset(chk, 0, sizeof chk);
    mc_run r = run_calls(calls, n, chk);
    CU_ASSERT_EQUAL(r.stop, TILE_STOP_END);
    CU_ASSERT_EQUAL(r.m9, 0x1234);
    CU_ASSERT_EQUAL(r.m11, 0x5678);
    for (unsigned i = 0; i < n && r.stop == TILE_STOP_END; i++) {
        CU_ASSERT_EQUAL(chk[i].bit_mismatches, 0);
        CU_ASSERT_EQUAL(chk[i].outside_writes, 0);
        CU_ASSERT_EQUAL(chk[i].vs_ref.over_bound, 0);
        CU_ASSERT_EQUAL(chk[i].vs_ref.nonfinite, 0);
        if (calls[i].m && calls[i].k && calls[i].n)
            CU_ASSERT_TRUE(chk[i].vs_ref.max_abs > 0);   /* f16 results do differ from f32 */
    }
    printf("    cycles: %llu", (unsigned long long)r.cycles);
    if (want_cycles) {
        uint64_t want = program_cycles(calls, n);
        printf(" (calculated %llu)", (unsigned long long)want);
        CU_ASSERT_NOT_EQUAL(want, 0);
        CU_ASSERT_EQUAL(r.cycles, want);
    }
    printf("\n");
    return r;
}

#define A0 0x50000u
#define C0 0x80000u

static void test_small_f16_partials(void)
{
    const mc_call c = {.m = 12, .k = 32, .n = 32, .f16_partials = true, .a = A0, .c = C0};
    expect_ok(&c, 1, true);
}

static void test_small_f32_partials(void)
{
    const mc_call c = {.m = 12, .k = 32, .n = 16, .a = A0, .c = C0};
    expect_ok(&c, 1, true);
}

/* On GC2 (tile memory from 0x60000, one AMP engine set: 32 f16 MACs a
 * cycle) f16v4hihov4amp (f16 partials, 64 MACs) holds its worker two
 * turns and f16v4sisoamp (f32 partials, 32) one: the formula with
 * amp_peak_macs = 32 still gives the simulated cycles exactly, fast, slow
 * and mixed chunks. */
static void test_gc2(void)
{
    const mc_call calls[] = {
        {.m = 48, .k = 32, .n = 32, .f16_partials = true, .a = 0x68000, .c = C0},
        {.m = 48, .k = 32, .n = 32, .a = 0x68000, .c = C0},
        {.m = 14, .k = 16, .n = 16, .f16_partials = true, .initial_partials = true, .a = 0x68000, .c = C0},
        {.m = 12, .k = 32, .n = 32, .f16_partials = true, .a = 0x68000, .c = 0x70000, .b = 0x90000},
    };
    uint64_t gc200[2] = { expect_ok(&calls[0], 1, true).cycles, expect_ok(&calls[1], 1, true).cycles };
    g_preset = "gc2";
    g_amp_peak_macs = 32;
    uint64_t gc2[4];
    for (unsigned i = 0; i < 4; i++)
        gc2[i] = expect_ok(&calls[i], 1, true).cycles;
    g_preset = "gc200";
    g_amp_peak_macs = 64;
    printf("    48 x 32 x 32: f16 partials %llu cycles on gc200, %llu on gc2; f32 partials %llu, %llu\n",
           (unsigned long long)gc200[0], (unsigned long long)gc2[0], (unsigned long long)gc200[1],
           (unsigned long long)gc2[1]);
    CU_ASSERT_TRUE(gc2[0] > gc200[0]);
    CU_ASSERT_EQUAL(gc2[1], gc200[1]);
}

static void test_accumulates_into_c(void)
{
    const mc_call h = {.m = 18, .k = 48, .n = 16, .f16_partials = true, .initial_partials = true, .a = A0, .c = C0};
    expect_ok(&h, 1, true);
    const mc_call f = {.m = 18, .k = 16, .n = 24, .initial_partials = true, .a = A0, .c = C0};
    expect_ok(&f, 1, true);
}

/* M not a multiple of 6, small M (chunks walked backwards, or slow), M = 0. */
static void row_counts(void)
{
    const unsigned ms[] = {14, 7, 6, 5, 4, 3, 2, 1};
    for (unsigned i = 0; i < sizeof ms / sizeof ms[0]; i++) {
        mc_call c = {.m = ms[i], .k = 16, .n = 16, .f16_partials = i % 2 == 0, .initial_partials = true,
                     .a = A0, .c = C0};
        expect_ok(&c, 1, true);
    }
}

static void test_row_counts(void)
{
    row_counts();
    /* M = 0: nothing touched, the call is the few instructions up to its
     * return. */
    const mc_call z = {.m = 0, .k = 16, .n = 16, .f16_partials = true, .a = A0, .c = C0};
    mc_run r = expect_ok(&z, 1, true);
    CU_ASSERT_EQUAL(r.cycles, 8);   /* setzi x3, call, ld32, brz, br, exitz */
}

/* Which chunks go forwards, backwards or slow (matmul.h's rule). */
static void test_chunk_rule(void)
{
    matmul_f16_args a = {.a = A0, .b = 0x90000, .c = C0, .m = 5, .k = 16, .n = 16, .a_row_step = 32,
                         .c_row_step = 32, .partials = MATMUL_PARTIALS_F16};
    const enum matmul_chunk want5[6] = {MATMUL_CHUNK_FORWARD, MATMUL_CHUNK_FORWARD, MATMUL_CHUNK_SLOW,
                                        MATMUL_CHUNK_BACKWARD, MATMUL_CHUNK_BACKWARD, MATMUL_CHUNK_EMPTY};
    for (unsigned w = 0; w < 6; w++) {
        uint32_t first, rows;
        CU_ASSERT_EQUAL(matmul_f16_chunk(&a, w, &first, &rows), want5[w]);
    }
    a.m = 20;   /* rows 4 4 3 3 3 3: the last chunk (rows 17..19) backwards from row 19 */
    uint32_t first = 0, rows = 0;
    CU_ASSERT_EQUAL(matmul_f16_chunk(&a, 5, &first, &rows), MATMUL_CHUNK_BACKWARD);
    CU_ASSERT_EQUAL(first, 19);
    CU_ASSERT_EQUAL(rows, 3);
    CU_ASSERT_EQUAL(matmul_f16_chunk(&a, 4, &first, &rows), MATMUL_CHUNK_FORWARD);
    CU_ASSERT_EQUAL(first, 14);
    /* The placement rule. */
    CU_ASSERT_TRUE(matmul_f16_fast_placement(&a));
    a.c = 0x70000;                                  /* C in region 0 */
    CU_ASSERT_FALSE(matmul_f16_fast_placement(&a));
    a.c = C0;
    a.c_row_step = 40;                              /* not a multiple of 16 */
    CU_ASSERT_FALSE(matmul_f16_fast_placement(&a));
    a.c_row_step = 32;
    a.a = 0x87fc0;                                  /* A's last byte 0x8823f: C's block */
    CU_ASSERT_FALSE(matmul_f16_fast_placement(&a));
    a.a = 0x88000;                                  /* the next block: fine */
    CU_ASSERT_TRUE(matmul_f16_fast_placement(&a));
    a.a_row_step = 4080;                            /* too long for a backwards stride */
    CU_ASSERT_FALSE(matmul_f16_fast_placement(&a));
    a.a_row_step = 4072;
    CU_ASSERT_TRUE(matmul_f16_fast_placement(&a));
    CU_ASSERT_EQUAL(matmul_f16_chunk(&a, 0, &first, &rows), MATMUL_CHUNK_FORWARD);
    a.c = 0x70000;
    CU_ASSERT_EQUAL(matmul_f16_chunk(&a, 0, &first, &rows), MATMUL_CHUNK_SLOW);
}

/* Placements that fail the fast condition run the slow loop: correct, no
 * conflict, and slower. */
static void test_slow_placements(void)
{
    /* A and C in one 32 KiB element pair of region 1. */
    const mc_call same_pair = {.m = 12, .k = 32, .n = 16, .f16_partials = true, .initial_partials = true,
                               .a = 0x80000, .c = 0x80000 + 12 * 64};
    mc_run slow = expect_ok(&same_pair, 1, true);
    mc_call fast = same_pair;
    fast.a = A0;
    mc_run quick = expect_ok(&fast, 1, true);
    CU_ASSERT_TRUE(slow.cycles > quick.cycles);
    /* C in region 0, rows with pads that are not a multiple of 16. */
    const mc_call c_r0 = {.m = 13, .k = 32, .n = 8, .initial_partials = true, .a = A0, .c = 0x60000,
                          .b = 0x90000, .a_pad = 8, .c_pad = 8};
    expect_ok(&c_r0, 1, true);
    /* Rows too long for the pace strides: A row step 4096 bytes. */
    const mc_call long_rows = {.m = 8, .k = 16, .n = 16, .f16_partials = true, .a = A0, .c = C0,
                               .a_pad = 4096 - 32};
    expect_ok(&long_rows, 1, true);
}

/* Fast placements with padded rows, and C's last row ending at the top of
 * tile memory: a read past C would fault there. */
static void test_fast_edges(void)
{
    const mc_call padded = {.m = 24, .k = 32, .n = 16, .f16_partials = true, .initial_partials = true,
                            .a = A0, .c = C0, .a_pad = 24, .c_pad = 16};
    expect_ok(&padded, 1, true);
    mc_call top = {.m = 30, .k = 16, .n = 32, .initial_partials = true, .a = A0, .b = 0x90000,
                   .rec = 0x98000};
    top.c = MEM_END - 30 * 32 * 4;
    expect_ok(&top, 1, true);
    /* A ending at the top of region 1 too (A after C is also fast). */
    mc_call both = {.m = 6, .k = 16, .n = 16, .f16_partials = true, .b = 0x90000, .rec = 0x98000};
    both.a = MEM_END - 6 * 32;
    both.c = 0xa0000;
    expect_ok(&both, 1, true);
}

/* Two calls on one tile with different sizes and kinds. */
static void test_two_calls(void)
{
    const mc_call calls[2] = {
        {.m = 12, .k = 32, .n = 32, .f16_partials = true, .a = A0, .c = C0},
        {.m = 30, .k = 48, .n = 24, .initial_partials = true, .a = 0x60000, .c = 0xa0000},
    };
    expect_ok(calls, 2, true);
}

/* The relaunches keep each worker's registers: chunks of every kind
 * (forwards, backwards, slow, idle: the dispatch stubs) across several
 * groups and weight blocks, and a call whose kinds differ from the previous
 * call's (the first launch of a call must read its record afresh). */
static void test_groups_and_blocks(void)
{
    const mc_call mixed = {.m = 5, .k = 48, .n = 32, .f16_partials = true, .initial_partials = true,
                           .a = A0, .c = C0};
    expect_ok(&mixed, 1, true);
    const mc_call slow = {.m = 13, .k = 32, .n = 24, .initial_partials = true, .a = A0, .c = 0x60000,
                          .b = 0x90000, .c_pad = 8};
    expect_ok(&slow, 1, true);
    const mc_call calls[3] = {
        {.m = 12, .k = 32, .n = 32, .f16_partials = true, .a = A0, .c = C0},
        {.m = 5, .k = 32, .n = 16, .initial_partials = true, .a = 0x60000, .c = 0xa0000},
        {.m = 20, .k = 48, .n = 32, .f16_partials = true, .initial_partials = true, .a = 0x68000, .c = 0xb0000},
    };
    expect_ok(calls, 3, true);
}

/* The cost of one more weight block and of one more output group, with
 * every chunk fast and R = 8 rows a worker (matmul.S's header): a block is
 * L ld128putcs + runall, sync, mov, brnzdec + 6 (4 R + 15) worker cycles;
 * a group's first block has 2 more worker issues and 3 more supervisor
 * instructions. */
static void test_block_cost(void)
{
    mc_call c = {.m = 48, .k = 16, .n = 8, .a = A0, .c = C0};
    uint64_t one = expect_ok(&c, 1, true).cycles;
    c.k = 32;
    uint64_t two_blocks = expect_ok(&c, 1, true).cycles;
    CU_ASSERT_EQUAL(two_blocks - one, 16 + 4 + 6 * (4 * 8 + 15));      /* 302 */
    c.k = 16;
    c.n = 16;
    uint64_t two_groups = expect_ok(&c, 1, true).cycles;
    CU_ASSERT_EQUAL(two_groups - one, 16 + 4 + 3 + 6 * (4 * 8 + 17)); /* 317 */
    mc_call h = {.m = 48, .k = 16, .n = 16, .f16_partials = true, .a = A0, .c = C0};
    one = expect_ok(&h, 1, true).cycles;
    h.k = 32;
    CU_ASSERT_EQUAL(expect_ok(&h, 1, true).cycles - one, 32 + 4 + 6 * (4 * 8 + 15)); /* 318 */
}

static void expect_trap(const mc_call *c, uint32_t code)
{
    mc_run r = run_calls(c, 1, NULL);
    CU_ASSERT_EQUAL(r.stop, TILE_STOP_FAULT);
    CU_ASSERT_EQUAL(r.exception, ISA_EXC_BREAK);
    CU_ASSERT_EQUAL(r.trap_code, code);
}

static void test_refusals(void)
{
    const mc_call ok = {.m = 6, .k = 16, .n = 16, .f16_partials = true, .a = A0, .c = C0};
    mc_call c = ok;
    c.k_word = 24;                       /* K not a multiple of 16 */
    expect_trap(&c, MATMUL_TRAP_SIZES);
    c = ok;
    c.n = 8;                             /* N = 8 with f16 partials */
    expect_trap(&c, MATMUL_TRAP_SIZES);
    c = ok;
    c.partials_word = 2;
    expect_trap(&c, MATMUL_TRAP_PARTIALS);
    c = ok;
    c.a = A0 + 4;
    expect_trap(&c, MATMUL_TRAP_ALIGN);
    c = ok;
    c.b = 0x90008;                       /* B 8- but not 16-byte aligned */
    expect_trap(&c, MATMUL_TRAP_ALIGN);
    c = ok;
    c.b = 0x70000;                       /* B in region 0 */
    expect_trap(&c, MATMUL_TRAP_B_REGION);
    c = ok;
    c.m_word = MATMUL_MAX_ROWS + 1;      /* nothing is read before the check */
    expect_trap(&c, MATMUL_TRAP_ROWS);
}

static double check_large(const mc_call *c, double peak, double at_least);

/* sv_matmul_f16_wl on the compiler's records: the same results bit for
 * bit on every kind of chunk, placement, group and block as above, and
 * its own formula exact; the set-up 318 supervisor issues shorter, a
 * worker's first launch 14 issues longer (fast; 11 slow, 2 idle). */
static void test_worklists(void)
{
    const mc_call shapes[] = {
        {.m = 16, .k = 16, .n = 16, .f16_partials = true, .a = A0, .c = C0},
        {.m = 48, .k = 32, .n = 24, .a = A0, .c = C0},
        {.m = 5, .k = 48, .n = 32, .f16_partials = true, .initial_partials = true, .a = A0, .c = C0},
        {.m = 13, .k = 32, .n = 24, .initial_partials = true, .a = A0, .c = 0x60000, .b = 0x90000, .c_pad = 8},
    };
    uint64_t rt[4], wl[4];
    for (unsigned i = 0; i < 4; i++)
        rt[i] = expect_ok(&shapes[i], 1, true).cycles;
    g_worklists = true;
    for (unsigned i = 0; i < 4; i++)
        wl[i] = expect_ok(&shapes[i], 1, true).cycles;
    /* All fast: 318 fewer supervisor issues before the loops and 1 after
     * them (the return address stays in $m10), 6 x 14 more worker cycles. */
    CU_ASSERT_EQUAL(rt[0] - wl[0], 319 - 6 * 14);
    CU_ASSERT_EQUAL(rt[1] - wl[1], 319 - 6 * 14);
    for (unsigned i = 0; i < 4; i++)
        printf("    %u x %u x %u: sv_matmul_f16 %llu cycles, sv_matmul_f16_wl %llu\n", shapes[i].m, shapes[i].k,
               shapes[i].n, (unsigned long long)rt[i], (unsigned long long)wl[i]);
    test_small_f16_partials();
    test_small_f32_partials();
    test_gc2();
    test_accumulates_into_c();
    row_counts();
    test_slow_placements();
    test_fast_edges();
    test_two_calls();
    test_groups_and_blocks();
    const mc_call h = {.m = 768, .k = 128, .n = 128, .f16_partials = true, .a = A0, .c = C0};
    check_large(&h, 64.0, 0.955);
    g_worklists = false;
    /* What the record refuses (the run-time entry's traps, and zero sizes). */
    matmul_f16_args a = {.a = A0, .b = 0x90000, .c = C0, .m = 6, .k = 16, .n = 16, .a_row_step = 32,
                         .c_row_step = 32, .partials = MATMUL_PARTIALS_F16};
    uint32_t rec[MATMUL_F16_WL_WORDS];
    const char *why = NULL;
    CU_ASSERT_TRUE(matmul_f16_wl_record(&a, rec, &why));
    CU_ASSERT_EQUAL(rec[MATMUL_F16_WL_LOOPS], 1u << 31);    /* M = 6: three forwards, three backwards */
    CU_ASSERT_EQUAL(rec[MATMUL_F16_WL_WORKER + 4], 4u | 1u << 16 | 8u << 28);
    matmul_f16_args b = a;
    b.m = 5;                                                /* worker 5 idle: the stubs */
    CU_ASSERT_TRUE(matmul_f16_wl_record(&b, rec, &why));
    CU_ASSERT_EQUAL(rec[MATMUL_F16_WL_LOOPS], 1u << 30 | 1u << 31);
    CU_ASSERT_EQUAL(rec[MATMUL_F16_WL_WORKER + 5], 0u);
    b = a;
    b.k = 64;
    b.n = 48;
    CU_ASSERT_TRUE(matmul_f16_wl_record(&b, rec, &why));
    CU_ASSERT_EQUAL(rec[MATMUL_F16_WL_LOOPS], 2u | 3u << 15 | 1u << 31);
    b = a;
    b.n = 8;
    CU_ASSERT_FALSE(matmul_f16_wl_record(&b, rec, &why));
    b = a;
    b.b = 0x70000;
    CU_ASSERT_FALSE(matmul_f16_wl_record(&b, rec, &why));
    CU_ASSERT_STRING_EQUAL(why, "B below region 1");
    b = a;
    b.m = 0;
    CU_ASSERT_FALSE(matmul_f16_wl_record(&b, rec, &why));
    b = a;
    b.a += 4;
    CU_ASSERT_FALSE(matmul_f16_wl_record(&b, rec, &why));
}

static double check_large(const mc_call *c, double peak, double at_least)
{
    mc_run r = expect_ok(c, 1, true);
    double per_cycle = (double)c->m * c->k * c->n / (double)r.cycles;
    printf("    M %u K %u N %u: %llu cycles, %.2f MACs per tile cycle = %.3f of this variant's %.0f\n", c->m, c->k,
           c->n, (unsigned long long)r.cycles, per_cycle, per_cycle / peak, peak);
    CU_ASSERT_TRUE(per_cycle / peak >= at_least);
    return per_cycle;
}

static void test_large(void)
{
    const mc_call h = {.m = 768, .k = 128, .n = 128, .f16_partials = true, .a = A0, .c = C0};
    check_large(&h, 64.0, 0.955);
    const mc_call f = {.m = 576, .k = 128, .n = 128, .a = A0, .c = C0};
    check_large(&f, 32.0, 0.95);
    const mc_call g = {.m = 192, .k = 128, .n = 128, .a = A0, .c = C0};
    check_large(&g, 32.0, 0.865);
}

/* The block the compiler gives each tile of a 384 x 1024 x 4096 product
 * (frontends/lower_matmul.c): 48 rows, K = 1024, 24 columns, f32 partials;
 * 192 weight blocks of 8 rows a worker. */
static void test_compiler_block(void)
{
    const mc_call c = {.m = 48, .k = 1024, .n = 24, .a = A0, .c = C0};
    check_large(&c, 32.0, 0.63);
    const mc_call d = {.m = 96, .k = 1024, .n = 24, .a = A0, .c = C0};   /* A up to 0x7ffff */
    check_large(&d, 32.0, 0.77);
}

/* matmul.S assembles inside the kernel library image with the other
 * codelets, and exports its entry there, bundle aligned. */
static void test_in_library(void)
{
    char err[2048];
    const codelet_library *lib = codelet_library_get(ISA_MEMORY_BASE, err, sizeof err);
    if (!lib)
        fprintf(stderr, "\n%s\n", err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(lib);
    const exe_symbol *s = exe_find_symbol(lib->image, "sv_matmul_f16");
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(s->addr % 8, 0);
    CU_ASSERT_TRUE(s->addr >= 0x4c000 && s->addr < lib->region0_end);
}

void test_register(void)
{
    ADD_SUITE("codelets_matmul",
              {"small, f16 partials: model, reference, cycles", test_small_f16_partials},
              {"small, f32 partials: model, reference, cycles", test_small_f32_partials},
              {"gc2: one AMP engine set, the formula still exact", test_gc2},
              {"accumulates into C", test_accumulates_into_c},
              {"row counts incl. M = 0, 1, not a multiple of 6", test_row_counts},
              {"chunk and placement rules", test_chunk_rule},
              {"slow placements", test_slow_placements},
              {"fast edges: padded rows, C at the top of memory", test_fast_edges},
              {"two calls on one tile", test_two_calls},
              {"groups and blocks: relaunched workers of every kind", test_groups_and_blocks},
              {"cost of a weight block and of an output group", test_block_cost},
              {"refusals", test_refusals},
              {"sv_matmul_f16_wl: the compiler's worker lists", test_worklists},
              {"large: MACs per cycle", test_large},
              {"the compiler's block: 48 x 1024 x 24", test_compiler_block},
              {"assembles in the kernel library", test_in_library});
}
