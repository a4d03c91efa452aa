/*
 * test_matmul_kernel.c — the AMP matmul codelet (workloads/kernels/
 * amp_matmul.S) assembled and run on one simulated GC200 tile:
 *   (a) its output equals the bit-exact model (workloads/kernels/matmul_model.c)
 *       bit for bit;
 *   (b) it is within the derived tolerance (validation/reference.c) of
 *       cblas_sgemm on the f32 values of the same f16 inputs;
 *   (c) its cycle count equals the hand calculation below, and a large
 *       product keeps the AMP close to its peak.
 *
 * Cycle count, worked out from the timing model (sim/engine/tile.h: the
 * supervisor issues one instruction a cycle while it owns every slot;
 * worker k owns slot k-1 from runall until it exits and issues once every 6
 * cycles; the last instruction of the program takes its cycle):
 *
 *   Supervisor instructions (amp_matmul.S):
 *     8 before the group loop, then per output group 2 (setzi x2) + 2
 *     (add, brnzdec), per block 2 (st32 x2) + L (ld128putcs: 32 for f16
 *     partials, 16 for f32) + 1 (runall) + 1 (sync) + 2 (add, brnzdec),
 *     and 1 exitz at the end.  All branch targets are 8-byte aligned: no
 *     misalignment penalty.
 *   Workers: with R rows each, a worker issues n = 4R + 25 times per block
 *     (12 set-up instructions, 1 + 10 bundles filling the pipeline, the
 *     rpt bundle, R loop iterations of 4 bundles, exitz).  runall at cycle
 *     T: the six workers' first issues fall on cycles T+1 .. T+6 (one per
 *     slot); the last one exits at T + 6 + 6 (n - 1) = T + 6n.  The first
 *     to exit gives its slot back at T + 6n - 5; that slot comes round
 *     again at T + 6n + 1, when every worker has exited, and the sync
 *     issues there.  So each block adds 6n cycles on top of the
 *     supervisor's own instruction cycles.
 *   Total, with G = N / group output groups and B = K / 16 blocks each:
 *     cycles = 9 + G (4 + B (L + 6)) + 6 n G B.
 *   Example (the small test below): M = 12 (R = 2, n = 33), K = 32 (B =
 *   2), N = 32 with f16 partials (G = 2, L = 32):
 *     9 + 2 (4 + 2 * 38) + 6 * 33 * 2 * 2 = 9 + 160 + 792 = 961 cycles.
 *
 * Peak: each AMP issue of f16v4hihov4amp does 64 MACs and six workers give
 * one issue per tile cycle (ISA2 §2.9.11); f16v4sisoamp uses one AMP set,
 * 32 MACs.  Of the 6n cycles of a block, 24R carry useful AMP issues, so
 * the fraction of peak is 24 R G B / cycles; with R = 126 and 64 blocks it
 * is 0.941 (f16 partials), the losses being the 25 issues of set-up,
 * pipeline fill and exit per worker per block (150 cycles) and the 44
 * supervisor cycles that load $CWEI and restart the workers.  The tests
 * assert 0.93 of 64 (f16 partials, 0.941 expected) and 0.92 of 32 (f32
 * partials: 8 output channels a block, R = 96, 0.930 expected).
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
#include "workloads/kernels/matmul_model.h"

typedef struct mm_case {
    unsigned m, k, n;
    bool f16_partials;
    bool initial_partials;   /* C starts with random values instead of zeros */
} mm_case;

typedef struct mm_result {
    uint64_t cycles;
    uint64_t amp_f16_macs;   /* MACs of the AMP issues (warm-up included) */
    size_t bit_mismatches;
    ref_error_stats vs_ref;
    bool ran;
} mm_result;

/* Deterministic pseudo-random f16 values in [-1, 1), 10 significant bits. */
static uint32_t lcg_state;
static float rnd_unit(void)
{
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return (float)((int32_t)(lcg_state >> 8) - (1 << 23)) / (float)(1 << 23);
}

static ipu_exe *assemble(const mm_case *c, char *err, size_t err_size)
{
    char text[512];
    snprintf(text, sizeof text,
             ".equ MM_M, %u\n.equ MM_K, %u\n.equ MM_N, %u\n.equ MM_F16_PARTIALS, %d\n"
             ".include \"workloads/kernels/amp_matmul.S\"\n",
             c->m, c->k, c->n, c->f16_partials ? 1 : 0);
    const char *dirs[] = {IPUSIM_SOURCE_DIR};
    asm_options opt = {.include_dirs = dirs, .n_include_dirs = 1};
    return asm_assemble_string(text, "amp_matmul_test.S", &opt, err, err_size);
}

static uint32_t symbol_addr(const ipu_exe *e, const char *name)
{
    const exe_symbol *s = exe_find_symbol(e, name);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    return s->addr;
}

static uint64_t hand_cycles(const mm_case *c)
{
    uint64_t r = c->m / 6, n_issues = 4 * r + 25;
    uint64_t groups = c->n / (c->f16_partials ? 16 : 8), blocks = c->k / 16;
    uint64_t loads = c->f16_partials ? 32 : 16;
    return 9 + groups * (4 + blocks * (loads + 6)) + 6 * n_issues * groups * blocks;
}

static mm_result run_case(const mm_case *c, uint32_t seed)
{
    mm_result res;
    memset(&res, 0, sizeof res);
    size_t m = c->m, k = c->k, n = c->n;
    enum matmul_partials part = c->f16_partials ? MATMUL_PARTIALS_F16 : MATMUL_PARTIALS_F32;

    f16_t *a = malloc(m * k * sizeof *a), *b = malloc(k * n * sizeof *b), *bp = malloc(k * n * sizeof *bp);
    float *af = malloc(m * k * sizeof *af), *bf = malloc(k * n * sizeof *bf);
    float *c0 = calloc(m * n, sizeof *c0), *ref = malloc(m * n * sizeof *ref), *got = malloc(m * n * sizeof *got);
    double *sabs = malloc(m * n * sizeof *sabs), *bound = malloc(m * n * sizeof *bound);
    f16_t *model16 = calloc(m * n, sizeof *model16), *got16 = calloc(m * n, sizeof *got16);
    float *model32 = calloc(m * n, sizeof *model32), *got32 = calloc(m * n, sizeof *got32);
    CU_ASSERT_FATAL(a && b && bp && af && bf && c0 && ref && got && sabs && bound && model16 && got16 && model32 &&
                    got32);

    lcg_state = seed;
    for (size_t i = 0; i < m * k; i++) {
        a[i] = fp16_from_f32(rnd_unit());
        af[i] = fp16_to_f32(a[i]);
    }
    for (size_t i = 0; i < k * n; i++) {
        b[i] = fp16_from_f32(rnd_unit());
        bf[i] = fp16_to_f32(b[i]);
    }
    if (c->initial_partials)
        for (size_t i = 0; i < m * n; i++) {
            model16[i] = fp16_from_f32(4 * rnd_unit());
            c0[i] = c->f16_partials ? fp16_to_f32(model16[i]) : 4 * rnd_unit();
            model32[i] = c0[i];
        }
    matmul_pack_weights(b, k, n, part, bp);

    /* The simulated tile. */
    char err[4096];
    ipu_exe *e = assemble(c, err, sizeof err);
    if (!e) {
        fprintf(stderr, "\nassembly failed:\n%s\n", err);
        CU_FAIL_FATAL("amp_matmul.S does not assemble");
    }
    machine mach;
    CU_ASSERT_TRUE_FATAL(machine_preset("gc200", &mach, err, sizeof err));
    ipu_tile *t = calloc(1, sizeof *t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_TRUE_FATAL(tile_init(t, &mach, 0));
    if (!tile_load(t, e, err, sizeof err)) {
        fprintf(stderr, "\nload failed: %s\n", err);
        CU_FAIL_FATAL("load failed");
    }
    uint32_t a_addr = symbol_addr(e, "mm_a"), b_addr = symbol_addr(e, "mm_b"), c_addr = symbol_addr(e, "mm_c");
    CU_ASSERT_EQUAL(tmem_write_bytes(&t->s.mem, a_addr, a, m * k * 2), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_write_bytes(&t->s.mem, b_addr, bp, k * n * 2), TMEM_OK);
    if (c->f16_partials)
        CU_ASSERT_EQUAL(tmem_write_bytes(&t->s.mem, c_addr, model16, m * n * 2), TMEM_OK)
    else
        CU_ASSERT_EQUAL(tmem_write_bytes(&t->s.mem, c_addr, model32, m * n * 4), TMEM_OK)

    enum tile_stop stop = tile_run_alone(t, 100000000);
    if (stop != TILE_STOP_END) {
        char what[1024] = "";
        if (stop == TILE_STOP_FAULT)
            tile_describe_fault(t, e, what, sizeof what);
        fprintf(stderr, "\nthe codelet did not end: stop %d %s\n", (int)stop, what);
        CU_FAIL("the codelet did not run to its end");
    } else {
        res.ran = true;
    }
    res.cycles = t->s.cycle;
    res.amp_f16_macs = t->stats.amp_f16_macs;
    if (c->f16_partials)
        tmem_read_bytes(&t->s.mem, c_addr, got16, m * n * 2);
    else
        tmem_read_bytes(&t->s.mem, c_addr, got32, m * n * 4);

    /* (a) The bit-exact model. */
    matmul_model_f16(a, b, m, k, n, part, model32, model16);
    for (size_t i = 0; i < m * n; i++) {
        bool same = c->f16_partials ? got16[i] == model16[i]
                                    : memcmp(&got32[i], &model32[i], 4) == 0;
        if (!same && res.bit_mismatches++ < 4) {
            uint32_t gb = got16[i], mb = model16[i];
            if (!c->f16_partials) {
                memcpy(&gb, &got32[i], 4);
                memcpy(&mb, &model32[i], 4);
            }
            fprintf(stderr, "\n  C[%zu][%zu]: codelet 0x%08x, model 0x%08x", i / n, i % n, gb, mb);
        }
        got[i] = c->f16_partials ? fp16_to_f32(got16[i]) : got32[i];
    }

    /* (b) The f32 reference, within the bound of reference.c. */
    ref_matmul_f32(af, bf, ref, m, k, n);
    ref_matmul_abs_f64(af, bf, sabs, m, k, n);
    ref_dot_policy pol = {
        .k = k,
        .accum = c->f16_partials ? REF_ACCUM_F16 : REF_ACCUM_F32,
        .block = 16,
        .terms_per_rounding = 4,
        .f16_output = c->f16_partials,
        .stochastic = false,
    };
    for (size_t i = 0; i < m * n; i++) {
        ref[i] += c0[i];
        bound[i] = ref_dot_bound(&pol, sabs[i] + fabs(c0[i]), ref[i]);
    }
    res.vs_ref = ref_compare(got, ref, bound, m * n);

    char name[128];
    snprintf(name, sizeof name, "  C = A[%ux%u] x B[%ux%u] (%s partials) vs cblas_sgemm", c->m, c->k, c->k, c->n,
             c->f16_partials ? "f16" : "f32");
    fputc('\n', stdout);
    ref_print_report(stdout, name, &res.vs_ref);
    printf("    vs bit-exact model: %zu of %zu elements differ\n", res.bit_mismatches, m * n);

    tile_free(t);
    free(t);
    exe_free(e);
    free(a); free(b); free(bp); free(af); free(bf); free(c0); free(ref); free(got);
    free(sabs); free(bound); free(model16); free(got16); free(model32); free(got32);
    return res;
}

static void check_small(const mm_case *c)
{
    mm_result r = run_case(c, 12345u + c->k);
    CU_ASSERT_TRUE(r.ran);
    CU_ASSERT_EQUAL(r.bit_mismatches, 0);
    CU_ASSERT_EQUAL(r.vs_ref.over_bound, 0);
    CU_ASSERT_EQUAL(r.vs_ref.nonfinite, 0);
    CU_ASSERT_TRUE(r.vs_ref.max_abs > 0);          /* f16 results do differ from f32 */
    uint64_t want = hand_cycles(c);
    printf("    cycles: %llu (hand calculation %llu)\n", (unsigned long long)r.cycles, (unsigned long long)want);
    CU_ASSERT_EQUAL(r.cycles, want);
}

static void test_small_f16_partials(void)
{
    const mm_case c = {.m = 12, .k = 32, .n = 32, .f16_partials = true};
    CU_ASSERT_EQUAL(hand_cycles(&c), 961);          /* the worked example above */
    check_small(&c);
}

static void test_small_f32_partials(void)
{
    const mm_case c = {.m = 12, .k = 32, .n = 16, .f16_partials = false};
    check_small(&c);
}

/* C += A * B with non-zero initial partial sums. */
static void test_accumulates_into_c(void)
{
    const mm_case h = {.m = 18, .k = 48, .n = 16, .f16_partials = true, .initial_partials = true};
    check_small(&h);
    const mm_case f = {.m = 18, .k = 16, .n = 24, .f16_partials = false, .initial_partials = true};
    check_small(&f);
}

/* Rows that do not share out evenly: with 14 rows workers 1..2 take one
 * more; with 4 rows workers 5 and 6 have none and exit at once. */
static void test_uneven_rows(void)
{
    const mm_case cases[] = {
        {.m = 14, .k = 16, .n = 16, .f16_partials = true},
        {.m = 4, .k = 32, .n = 16, .f16_partials = false},
    };
    for (unsigned i = 0; i < 2; i++) {
        mm_result r = run_case(&cases[i], 99u + i);
        CU_ASSERT_TRUE(r.ran);
        CU_ASSERT_EQUAL(r.bit_mismatches, 0);
        CU_ASSERT_EQUAL(r.vs_ref.over_bound, 0);
    }
}

static void check_large(const mm_case *c, double peak_macs_per_cycle, double min_fraction)
{
    mm_result r = run_case(c, 777u);
    CU_ASSERT_TRUE(r.ran);
    CU_ASSERT_EQUAL(r.bit_mismatches, 0);
    CU_ASSERT_EQUAL(r.vs_ref.over_bound, 0);
    CU_ASSERT_EQUAL(r.cycles, hand_cycles(c));
    double useful = (double)c->m * c->k * c->n;
    double per_cycle = useful / (double)r.cycles;
    printf("    cycles %llu (hand calculation %llu); %.2f f16 MACs per tile cycle = %.3f of the 64 peak, "
           "%.3f of this variant's %.0f; AMP issued %.3g MACs (warm-up included)\n",
           (unsigned long long)r.cycles, (unsigned long long)hand_cycles(c), per_cycle, per_cycle / 64.0,
           per_cycle / peak_macs_per_cycle, peak_macs_per_cycle, (double)r.amp_f16_macs);
    CU_ASSERT_TRUE(per_cycle / peak_macs_per_cycle >= min_fraction);
}

static void test_large_f16_partials(void)
{
    /* 756 x 128 x 128: A fills most of region 0, C and the weights region 1. */
    const mm_case c = {.m = 756, .k = 128, .n = 128, .f16_partials = true};
    check_large(&c, 64.0, 0.93);
}

static void test_large_f32_partials(void)
{
    const mm_case c = {.m = 576, .k = 128, .n = 128, .f16_partials = false};
    check_large(&c, 32.0, 0.92);
}

/* The tolerance policy and the report, on numbers worked out by hand. */
static void test_tolerance_and_report(void)
{
    const double u = ldexp(1.0, -24), u16 = ldexp(1.0, -11);
    /* k = 16, f32 throughout: m = 4 roundings of dot4 sums, so
     * gamma_5 S + gamma_16 S (the reference) + 5 * 2^-126. */
    ref_dot_policy p = {.k = 16, .accum = REF_ACCUM_F32, .block = 16, .terms_per_rounding = 4};
    double want = 5 * u / (1 - 5 * u) + 16 * u / (1 - 16 * u) + 5 * ldexp(1.0, -126);
    CU_ASSERT_DOUBLE_EQUAL(ref_dot_bound(&p, 1.0, 0.25), want, want * 1e-9);
    /* f16 output adds u16 |c~| + 2^-25, with |c~| <= |ref| + the errors. */
    p.f16_output = true;
    double acc = 5 * u / (1 - 5 * u), refe = 16 * u / (1 - 16 * u);
    want = acc + refe + u16 * (0.25 + acc + refe) + ldexp(1.0, -25) + 5 * ldexp(1.0, -126);
    CU_ASSERT_DOUBLE_EQUAL(ref_dot_bound(&p, 1.0, 0.25), want, want * 1e-9);
    /* f16 partials over k = 48: 3 blocks, 2 intermediate f16 roundings. */
    ref_dot_policy h = {.k = 48, .accum = REF_ACCUM_F16, .block = 16, .terms_per_rounding = 4};
    double g32 = 13 * u / (1 - 13 * u), g16 = 2 * u16 / (1 - 2 * u16), r48 = 48 * u / (1 - 48 * u);
    double e_acc = (1 + g32) * (1 + g16) - 1 + 2 * ldexp(1.0, -25);
    want = e_acc + u16 * (2.0 + e_acc + r48) + ldexp(1.0, -25) + r48 + 13 * ldexp(1.0, -126);
    CU_ASSERT_DOUBLE_EQUAL(ref_dot_bound(&h, 1.0, 2.0), want, want * 1e-9);
    /* Stochastic rounding doubles the f16 terms. */
    h.stochastic = true;
    CU_ASSERT_TRUE(ref_dot_bound(&h, 1.0, 2.0) > 1.9 * (want - r48));

    const float got[3] = {1.0f, 2.5f, 0.0f}, ref[3] = {1.0f, 2.0f, 0.0f};
    const double bound[3] = {1.0, 0.4, 0.0};
    ref_error_stats st = ref_compare(got, ref, bound, 3);
    CU_ASSERT_DOUBLE_EQUAL(st.max_abs, 0.5, 0);
    CU_ASSERT_DOUBLE_EQUAL(st.max_rel, 0.25, 0);
    CU_ASSERT_DOUBLE_EQUAL(st.rel_l2, 0.5 / sqrt(5.0), 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(st.max_ratio, 1.25, 1e-15);
    CU_ASSERT_EQUAL(st.over_bound, 1);
    CU_ASSERT_EQUAL(st.worst_abs_index, 1);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    ref_print_report(f, "T", &st);
    fclose(f);
    CU_ASSERT_STRING_EQUAL(text, "T: max abs 5.000e-01  max rel 2.500e-01  rel L2 2.236e-01  "
                                 "max err/tol 1.250, 1 of 3 over tol\n");
    free(text);
}

void test_register(void)
{
    ADD_SUITE("matmul_kernel",
              {"small, f16 partials: model, reference, cycles", test_small_f16_partials},
              {"small, f32 partials: model, reference, cycles", test_small_f32_partials},
              {"accumulates into C", test_accumulates_into_c},
              {"rows shared unevenly", test_uneven_rows},
              {"large, f16 partials: near 64 MACs per cycle", test_large_f16_partials},
              {"large, f32 partials: near 32 MACs per cycle", test_large_f32_partials},
              {"tolerance policy and error report", test_tolerance_and_report});
}
