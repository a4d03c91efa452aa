/*
 * test_axpy_kernel.c — the f32 axpy codelet (workloads/kernels/axpy.S)
 * assembled and run on one simulated GC200 tile:
 *   (a) its output equals the bit-exact model (workloads/kernels/axpy_model.c) bit
 *       for bit, special values included;
 *   (b) it is within the derived tolerance below of cblas_saxpy;
 *   (c) its cycle count equals the hand calculation below, and a long
 *       vector runs close to 0.5 tile cycles per element.
 *
 * Cycle count, worked out from the timing model (sim/engine/tile.h, and the
 * conventions at the top of tests/test_tile.c: the supervisor issues one
 * instruction a cycle while it owns every slot; worker k owns slot k-1 from
 * runall until it exits and issues once every 6 cycles; the instruction
 * that ends the program takes its cycle):
 *
 *   Supervisor: setzi x3 at cycles 0, 1, 2, runall at T = 3, then sync and
 *     exitz.
 *   Worker k with P pairs in R = ceil(P / 4095) rpt blocks issues
 *       n_k = 7 (set-up, brz) + 3 (pipeline fill) + R (min, sub, rpt,
 *             brnz) + P (loop bundles) + 3 (odd-element check) + 1 (exitz)
 *           = P + 14 + 4 R,
 *     5 more (ld32 x2, f32v2axpy x2, st32) for worker 6 when N is odd;
 *     with P = 0 the brz skips the fill and the loop: 11 (16).  Every
 *     branch target is 8-byte aligned: no misalignment penalty.
 *   Worker k's first issue is at the first cycle after T served by its
 *     slot k-1: cycle T+1 + ((k-1 - (T+1)) mod 6), i.e. workers 5, 6, 1,
 *     2, 3, 4 at cycles 4 .. 9; it exits at first_k + 6 (n_k - 1).  The
 *     supervisor's sync stalls until the last exit E, issues at E + 1 (by
 *     then it owns every slot), exitz at E + 2: cycles = E + 3.
 *   Example (the small test below): N = 27, 13 pairs: worker 1 has 3
 *     (n = 21), workers 2..5 have 2 (n = 20), worker 6 has 2 and the odd
 *     element (n = 25).  Exits: w1 6 + 6*20 = 126, w2 7 + 6*19 = 121, w3
 *     122, w4 123, w5 4 + 6*19 = 118, w6 5 + 6*24 = 149.  E = 149:
 *     152 cycles.
 *
 * Large vectors: six workers issue one bundle (one pair) per tile cycle
 * between them, 0.5 cycles per element.  On top of that come a worker's
 * 14 + 4 R issues of set-up, fill, rpt blocks and exit (6 cycles each, the
 * workers' in parallel), the imbalance of whole pairs, and the supervisor's
 * cycles before the first worker issue and after the last exit.  For
 * N = 65536, worker 2 (5462 pairs, R = 2, n = 5484, first issue at cycle 7)
 * exits last at 7 + 6 * 5483 = 32905, so the run takes 32908 cycles =
 * 32768 (ideal) + 4 (5462 pairs, not the average 5461.33) + 6 * 21 (its
 * 22 fixed issues, counted from its first) + 7 + 3 (supervisor), 0.50214
 * per element.  The test asserts the exact count and at most 0.503 per
 * element, i.e. 0.5 plus 196 cycles: these overheads with 56 to spare.
 *
 * Tolerance against cblas_saxpy.  u = 2^-24, e = a x + y exact.  The tile
 * rounds the product p = fl(a x), |p - a x| <= u |a x| + 2^-126 (the 2^-126
 * covers a product flushed from the denormal range), then t = fl(p + y),
 * |t - (p + y)| <= u |p + y| + 2^-126 with |p + y| <= |e| + |p - a x|.  So
 *     |t - e| <= (u |a x| + 2^-126)(1 + u) + u |e| + 2^-126.
 * OpenBLAS computes fl(a x + y), with or without a fused multiply-add; with
 * gradual underflow its error is within the same bound.  The test allows
 * twice the bound (the tile's error plus the reference's).  It assumes
 * normal or zero inputs (denormal inputs, flushed by the tile, are checked
 * against the model only).
 */
#include <CUnit/CUnit.h>
#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/asm/asm.h"
#include "isa/fparith.h"
#include "sim/program/machine.h"
#include "sim/engine/tile.h"
#include "test_util.h"
#include "validation/reference.h"
#include "workloads/kernels/axpy_model.h"

#define AXPY_WORKERS 6u
#define AXPY_RPT_MAX 4095u
#define AXPY_RUNALL_CYCLE 3u   /* T: the supervisor's runall */

typedef struct axpy_result {
    bool ran;
    uint64_t cycles;
    uint64_t worker_issues;
    size_t bit_mismatches;
    ref_error_stats vs_ref;
} axpy_result;

/* Deterministic pseudo-random f32 values in [-1, 1), multiples of 2^-23. */
static uint32_t lcg_state;
static float rnd_unit(void)
{
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return (float)((int32_t)(lcg_state >> 8) - (1 << 23)) / (float)(1 << 23);
}

static float f32_of_bits(uint32_t b)
{
    float f;
    memcpy(&f, &b, 4);
    return f;
}

static uint32_t bits_of_f32(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

static ipu_exe *assemble(unsigned n, char *err, size_t err_size)
{
    char text[256];
    snprintf(text, sizeof text, ".equ AXPY_N, %u\n.include \"workloads/kernels/axpy.S\"\n", n);
    const char *dirs[] = {IPUSIM_SOURCE_DIR};
    asm_options opt = {.include_dirs = dirs, .n_include_dirs = 1};
    return asm_assemble_string(text, "axpy_test.S", &opt, err, err_size);
}

static uint32_t symbol_addr(const ipu_exe *e, const char *name)
{
    const exe_symbol *s = exe_find_symbol(e, name);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    return s->addr;
}

/* ---- the hand calculation ------------------------------------------------- */

static unsigned worker_pairs(unsigned n, unsigned w)   /* w = 0..5 */
{
    unsigned pairs = n / 2;
    return pairs / AXPY_WORKERS + (w < pairs % AXPY_WORKERS);
}

static uint64_t worker_issue_count(unsigned pairs, bool odd_element)
{
    uint64_t blocks = (pairs + AXPY_RPT_MAX - 1) / AXPY_RPT_MAX;
    uint64_t issues = pairs ? pairs + 14 + 4 * blocks : 11;
    return issues + (odd_element ? 5 : 0);
}

static uint64_t hand_cycles(unsigned n)
{
    const uint64_t t = AXPY_RUNALL_CYCLE;
    uint64_t last_exit = 0;
    for (unsigned w = 0; w < AXPY_WORKERS; w++) {
        uint64_t first = t + 1 + (w + AXPY_WORKERS - (t + 1) % AXPY_WORKERS) % AXPY_WORKERS;
        bool odd = (n % 2) && w == AXPY_WORKERS - 1;
        uint64_t exit_cycle = first + AXPY_WORKERS * (worker_issue_count(worker_pairs(n, w), odd) - 1);
        if (exit_cycle > last_exit)
            last_exit = exit_cycle;
    }
    return last_exit + 3;
}

static uint64_t hand_worker_issues(unsigned n)
{
    uint64_t sum = 0;
    for (unsigned w = 0; w < AXPY_WORKERS; w++)
        sum += worker_issue_count(worker_pairs(n, w), (n % 2) && w == AXPY_WORKERS - 1);
    return sum;
}

/* ---- running the codelet --------------------------------------------------- */

/* Run the codelet on x, y (n each) with scalar a; the result goes to out.
 * Returns false (after reporting) when it does not run to its end. */
static bool run_kernel(unsigned n, float a, const float *x, const float *y, float *out, axpy_result *res)
{
    char err[4096];
    ipu_exe *e = assemble(n, err, sizeof err);
    if (!e) {
        fprintf(stderr, "\nassembly failed:\n%s\n", err);
        CU_FAIL_FATAL("axpy.S does not assemble");
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
    uint32_t x_addr = symbol_addr(e, "axpy_x"), y_addr = symbol_addr(e, "axpy_y"), a_addr = symbol_addr(e, "axpy_a");
    CU_ASSERT_EQUAL(tmem_write_bytes(&t->s.mem, x_addr, x, (size_t)n * 4), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_write_bytes(&t->s.mem, y_addr, y, (size_t)n * 4), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_write_bytes(&t->s.mem, a_addr, &a, 4), TMEM_OK);

    enum tile_stop stop = tile_run_alone(t, 100000000);
    res->ran = stop == TILE_STOP_END;
    if (!res->ran) {
        char what[1024] = "";
        if (stop == TILE_STOP_FAULT)
            tile_describe_fault(t, e, what, sizeof what);
        fprintf(stderr, "\nthe codelet did not end: stop %d %s\n", (int)stop, what);
        CU_FAIL("the codelet did not run to its end");
    }
    res->cycles = t->s.cycle;
    res->worker_issues = t->stats.worker_issues;
    CU_ASSERT_EQUAL(tmem_read_bytes(&t->s.mem, y_addr, out, (size_t)n * 4), TMEM_OK);
    tile_free(t);
    free(t);
    exe_free(e);
    return res->ran;
}

/* Elements whose bits differ from the model's (the first few printed). */
static size_t count_mismatches(const float *got, const float *model, size_t n)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        if (bits_of_f32(got[i]) != bits_of_f32(model[i]) && bad++ < 4)
            fprintf(stderr, "\n  y[%zu]: codelet 0x%08x, model 0x%08x", i, bits_of_f32(got[i]), bits_of_f32(model[i]));
    return bad;
}

/* The tolerance of one element (the derivation at the top). */
static double axpy_bound(float a, float x, float y)
{
    const double u = ldexp(1.0, -24), tiny = ldexp(1.0, -126);
    double ax = fabs((double)a * (double)x), e = fabs((double)a * (double)x + (double)y);
    return 2 * ((u * ax + tiny) * (1 + u) + u * e + tiny);
}

/* A random case: model, reference and cycles. */
static axpy_result run_random(unsigned n, float a, uint32_t seed)
{
    axpy_result res;
    memset(&res, 0, sizeof res);
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *got = malloc(n * sizeof *got);
    float *model = malloc(n * sizeof *model), *ref = malloc(n * sizeof *ref);
    double *bound = malloc(n * sizeof *bound);
    CU_ASSERT_FATAL(x && y && got && model && ref && bound);
    lcg_state = seed;
    for (unsigned i = 0; i < n; i++) {
        x[i] = rnd_unit();
        y[i] = rnd_unit();
    }
    if (run_kernel(n, a, x, y, got, &res)) {
        memcpy(model, y, n * sizeof *y);
        axpy_model_f32(a, x, model, n);
        res.bit_mismatches = count_mismatches(got, model, n);

        memcpy(ref, y, n * sizeof *y);
        cblas_saxpy((int)n, a, x, 1, ref, 1);
        for (unsigned i = 0; i < n; i++)
            bound[i] = axpy_bound(a, x[i], y[i]);
        res.vs_ref = ref_compare(got, ref, bound, n);

        char name[96];
        snprintf(name, sizeof name, "  y = %g x + y (N = %u) vs cblas_saxpy", (double)a, n);
        fputc('\n', stdout);
        ref_print_report(stdout, name, &res.vs_ref);
        printf("    vs bit-exact model: %zu of %u elements differ; cycles %llu (hand calculation %llu), "
               "%.4f per element\n",
               res.bit_mismatches, n, (unsigned long long)res.cycles, (unsigned long long)hand_cycles(n),
               (double)res.cycles / n);
    }
    free(x); free(y); free(got); free(model); free(ref); free(bound);
    return res;
}

static void check_random(unsigned n, float a, uint32_t seed)
{
    axpy_result r = run_random(n, a, seed);
    CU_ASSERT_TRUE(r.ran);
    CU_ASSERT_EQUAL(r.bit_mismatches, 0);
    CU_ASSERT_EQUAL(r.vs_ref.over_bound, 0);
    CU_ASSERT_EQUAL(r.vs_ref.nonfinite, 0);
    CU_ASSERT_EQUAL(r.cycles, hand_cycles(n));
    CU_ASSERT_EQUAL(r.worker_issues, hand_worker_issues(n));
}

/* ---- tests ------------------------------------------------------------------- */

static void test_small_hand_cycles(void)
{
    CU_ASSERT_EQUAL(hand_cycles(27), 152);         /* the worked example above */
    axpy_result r = run_random(27, -1.2345678f, 2024u);
    CU_ASSERT_TRUE(r.ran);
    CU_ASSERT_EQUAL(r.bit_mismatches, 0);
    CU_ASSERT_EQUAL(r.vs_ref.over_bound, 0);
    CU_ASSERT_EQUAL(r.cycles, 152);
    /* 21 + 4 * 20 + 25 worker issues. */
    CU_ASSERT_EQUAL(r.worker_issues, 126);
    /* The product is rounded before the addition: the result is not what
     * a fused multiply-add gives everywhere, but it is within tolerance. */
    CU_ASSERT_TRUE(r.vs_ref.max_abs < 1e-6);
}

/* Shares that differ: 7 pairs (workers 1 and 2 take 2), 4 pairs (workers 5
 * and 6 have none and exit at once), a lone odd element (N = 1: only worker
 * 6 works), N = 2 and 13, and a medium vector. */
static void test_uneven_shares(void)
{
    static const unsigned sizes[] = {14, 8, 1, 2, 13, 100, 1000, 10000};
    for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        check_random(sizes[i], i % 2 ? 0.375f : -2.71828f, 77u + i);
}

/* Shares of more than 4095 pairs loop over several rpt blocks: 4096 pairs
 * a worker is one block of 4095 and one of 1. */
static void test_rpt_blocks(void)
{
    CU_ASSERT_EQUAL(worker_pairs(49152, 5), 4096);
    check_random(49152, 0.5f + 1.0f / 1024, 5u);
}

static void test_large(void)
{
    const unsigned n = 65536;
    axpy_result r = run_random(n, 1.7320508f, 31337u);
    CU_ASSERT_TRUE(r.ran);
    CU_ASSERT_EQUAL(r.bit_mismatches, 0);
    CU_ASSERT_EQUAL(r.vs_ref.over_bound, 0);
    CU_ASSERT_EQUAL(r.cycles, hand_cycles(n));
    double per_element = (double)r.cycles / n;
    printf("    large: %.5f tile cycles per element (ideal 0.5, bound 0.503)\n", per_element);
    CU_ASSERT_TRUE(per_element >= 0.5);
    CU_ASSERT_TRUE(per_element <= 0.503);
}

/* Denormals, infinities, NaNs, signed zeros and overflow: the codelet gives
 * the model's bits, and the bits worked out here from ISA2's rules. */
static void test_special_values(void)
{
    const float a = 3.0f;
    const uint32_t qnan = FP32_TILE_QNAN_BITS;
    static const struct {
        uint32_t x, y, want;
        const char *what;
    } cases[] = {
        {0x00000001u, 0x3f800000u, 0x3f800000u, "denormal x flushed: 3 * 0 + 1"},
        {0x3f800000u, 0x00400000u, 0x40400000u, "denormal y flushed: 3 * 1 + 0"},
        {0x7fc00000u, 0x3f800000u, qnan, "quiet NaN x: the tile's NaN"},
        {0x3f800000u, 0x7f800001u, qnan, "signalling NaN y: the tile's NaN"},
        {0x7f800000u, 0x3f800000u, 0x7f800000u, "3 * inf + 1 = inf"},
        {0x7f800000u, 0xff800000u, qnan, "3 * inf - inf: NaN"},
        {0x00000000u, 0x80000000u, 0x00000000u, "3 * 0 + -0 = +0"},
        {0x80000000u, 0x80000000u, 0x80000000u, "3 * -0 + -0 = -0"},
        {0x7f7fffffu, 0x00000000u, 0x7f800000u, "3 * FLT_MAX overflows to inf"},
        /* 3 * 2^-126 - 1.25 * 2^-125 = 2^-127, a denormal: written as +0. */
        {0x00800000u, 0x81200000u, 0x00000000u, "denormal result flushed"},
        /* 3 * 0x3eaaaaab (1/3 rounded up) = 1 + 2^-25 rounds to 1, and
         * 1 + 2^24 is a tie between 2^24 and 2^24 + 2: to even, 2^24 (a
         * fused multiply-add would round up to 2^24 + 2). */
        {0x3eaaaaabu, 0x4b800000u, 0x4b800000u, "product rounded, then a tie to even"},
        /* 3 * (1 + 2^-23) = 3 + 1.5 ulp, a tie: to even, 3 + 2^-21; minus 3
         * gives 2^-21 exactly (a fused multiply-add: 3 * 2^-23). */
        {0x3f800001u, 0xc0400000u, 0x35000000u, "product rounded before the addition"},
        {0x3f800000u, 0x3f800000u, 0x40800000u, "3 * 1 + 1 = 4 (the odd last element)"},
    };
    enum { N = sizeof cases / sizeof cases[0] };
    float x[N], y[N], got[N], model[N];
    for (unsigned i = 0; i < N; i++) {
        x[i] = f32_of_bits(cases[i].x);
        y[i] = f32_of_bits(cases[i].y);
    }
    axpy_result r;
    memset(&r, 0, sizeof r);
    CU_ASSERT_TRUE_FATAL(run_kernel(N, a, x, y, got, &r));
    memcpy(model, y, sizeof y);
    axpy_model_f32(a, x, model, N);
    CU_ASSERT_EQUAL(count_mismatches(got, model, N), 0);
    for (unsigned i = 0; i < N; i++) {
        if (bits_of_f32(got[i]) != cases[i].want)
            fprintf(stderr, "\n  %s: got 0x%08x, want 0x%08x", cases[i].what, bits_of_f32(got[i]), cases[i].want);
        CU_ASSERT_EQUAL(bits_of_f32(got[i]), cases[i].want);
    }
    CU_ASSERT_EQUAL(r.cycles, hand_cycles(N));
}

/* The model on its own, against values worked out by hand. */
static void test_model(void)
{
    CU_ASSERT_EQUAL(bits_of_f32(axpy_model_element(2.0f, 1.5f, 0.25f)), bits_of_f32(3.25f));
    /* A denormal a is flushed: 0 * x + y. */
    CU_ASSERT_EQUAL(bits_of_f32(axpy_model_element(f32_of_bits(0x00000010u), 1e30f, 7.0f)), bits_of_f32(7.0f));
    /* 0 * inf is invalid: the tile's NaN. */
    CU_ASSERT_EQUAL(bits_of_f32(axpy_model_element(0.0f, INFINITY, 1.0f)), FP32_TILE_QNAN_BITS);
    /* -1 * FLT_MAX - FLT_MAX overflows to -inf. */
    CU_ASSERT_EQUAL(bits_of_f32(axpy_model_element(-1.0f, FLT_MAX, -FLT_MAX)), 0xff800000u);
}

/* Sizes the codelet refuses, with the assembler's message. */
static void test_bad_sizes(void)
{
    char err[4096];
    ipu_exe *e = assemble(0, err, sizeof err);
    CU_ASSERT_PTR_NULL(e);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "error: AXPY_N must be at least 1"));
    exe_free(e);
    e = assemble(80000, err, sizeof err);
    CU_ASSERT_PTR_NULL(e);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "error: x and y do not fit in tile memory (AXPY_N too large)"));
    exe_free(e);
    /* The largest vector that fits assembles. */
    e = assemble(77000, err, sizeof err);
    if (!e)
        fprintf(stderr, "\n%s\n", err);
    CU_ASSERT_PTR_NOT_NULL(e);
    exe_free(e);
}

void test_register(void)
{
    ADD_SUITE("axpy_kernel",
              {"small: model, reference, hand-counted cycles", test_small_hand_cycles},
              {"pairs shared unevenly, odd last element", test_uneven_shares},
              {"shares longer than one rpt block", test_rpt_blocks},
              {"large: near 0.5 cycles per element", test_large},
              {"special values bit for bit", test_special_values},
              {"model on hand-worked values", test_model},
              {"sizes refused with a message", test_bad_sizes});
}
