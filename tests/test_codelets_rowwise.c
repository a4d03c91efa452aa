/*
 * test_codelets_rowwise.c — the row-wise codelets (workloads/codelets/
 * rowwise.S) assembled with a small supervisor (runall on six records,
 * sync 0, exitz) and run on one simulated GC200 tile:
 *   (a) outputs equal the bit-exact models (rowwise_model.c) bit for bit,
 *       random inputs with large magnitudes, odd and even widths, one
 *       column, rows padded with signalling NaNs (read past, never used:
 *       $FP_STS stays clear);
 *   (b) outputs are within a derived tolerance of a double-precision
 *       reference (derivations at reference_*);
 *   (c) cycle counts equal the hand counts below;
 *   (d) softmax and layer norm in place;
 *   (e) records with zero rows do nothing;
 * and gather's index checks (negative indices, the trap), transpose.
 *
 * Cycle counts (conventions of tests/test_axpy_kernel.c): the supervisor
 * issues setzi x3 at cycles 0..2 and runall at T = 3; worker k (1..6)
 * first issues at T + 1 + ((k - 1 - (T + 1)) mod 6) = cycles 4..9 for
 * workers 5, 6, 1, 2, 3, 4; each issue of a worker costs 6 tile cycles
 * times its latency (f32exp, f32oox, f32div: 3; f32oorx: 4), so a worker
 * whose issues before its exitz cost W worker cycles exits at
 * first + 6 W; the run ends 3 cycles after the last exit E (sync at E + 1,
 * exitz at E + 2): cycles = E + 3.  W for each codelet, with P = cols / 2,
 * o = cols % 2, R rows (read from the code in rowwise.S):
 *   reduce:    R = 0: 3 (two bundles, brz).  Else 12 (prologue) + the
 *              dispatch (sum 1, max 3, sumsq 5, mean 7, min 9, prod 11 + 3
 *              for its 1.0, abs sum 13) + R (7 + P + o), (8 + P + o) for
 *              mean, max and min, (7 + 2 P + 2 o) for abs sum.
 *   softmax:   R = 0: 3.  Else 10 + R (20 + 11 P + 9 o).
 *   layernorm: R = 0: 3.  Else 19 + R (26 + 7 P + 8 o + (P > 0) + S), S the
 *              statistics' stores: 0, 9 (mean only), 10 (rstd only, both).
 *   reduce cols: cols_w below.
 *   gather:    n = 0: 2.  Else 12 + n (10 + 2 units), units = row bytes
 *              / 8 (or / 4 when not a multiple of 8).
 *   transpose: R = 0: 2.  Else 12 + R (6 + 3 cols).
 *
 * Worked example 1 (test_hand_cycles): reduce sum, cols = 5 (P = 2, o = 1),
 * rows 2, 1, 1, 1, 1, 0 for workers 1..6.  Per row 7 + 2 + 1 = 10.
 * Worker 1: W = 13 + 20 = 33, first issue at 6: exits at 6 + 198 = 204.
 * Workers 2..5: W = 23: exit at 7 + 138 = 145, 146, 147, and worker 5 at
 * 4 + 138 = 142.  Worker 6: W = 3, exits at 5 + 18 = 23.  E = 204: 207
 * cycles.
 * Worked example 2: softmax, cols = 3 (P = 1, o = 1), one row each for
 * workers 1..6.  Per row 20 + 11 + 9 = 40; W = 12 + 40 = 52.  The last
 * worker to start is worker 4 (first issue at 9): exits at 9 + 312 = 321:
 * 324 cycles.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/asm/asm.h"
#include "isa/fp16.h"
#include "isa/fparith.h"
#include "sim/program/machine.h"
#include "sim/engine/tile.h"
#include "test_util.h"
#include "workloads/codelets/rowwise.h"

#include "rowwise_rig.h"

/* Issues a row of the layer norm's statistics stores (rw_layernorm_stats_row). */
#define LN_STATS_ROW_MEAN 9u     /* the second brz taken: no store */
#define LN_STATS_ROW_RSTD 10u    /* the first brz taken, to a 4-mod-8 address: +1 */
#define LN_STATS_ROW_BOTH 10u

static uint64_t reduce_w(unsigned rows, unsigned cols, enum reduce_op op)
{
    if (!rows)
        return 3;
    uint64_t p = cols / 2, o = cols % 2;
    static const uint64_t dispatch[] = {1, 3, 5, 7, 9, 11 + 3, 13};   /* prod: + its 1.0 set-up */
    uint64_t row = (op == REDUCE_OP_MEAN || op == REDUCE_OP_MAX || op == REDUCE_OP_MIN ? 8 : 7) + p + o;
    if (op == REDUCE_OP_ABS_SUM)
        row = 7 + 2 * p + 2 * o;
    return 12 + dispatch[op] + rows * row;
}

static uint64_t softmax_w(unsigned rows, unsigned cols)
{
    uint64_t p = cols / 2, o = cols % 2;
    return rows ? 12 + rows * (20 + 11 * p + 9 * o) : 3;   /* set-up incl. $m7 = 0 and its alignment nop */
}

/* stats: the words MEAN_OUT / INV_STD_OUT set (bit 0 / bit 1). */
static uint64_t layernorm_w(unsigned rows, unsigned cols, unsigned stats)
{
    uint64_t p = cols / 2, o = cols % 2;
    static const uint64_t stats_row[4] = {0, LN_STATS_ROW_MEAN, LN_STATS_ROW_RSTD, LN_STATS_ROW_BOTH};
    return rows ? 19 + rows * (26 + 7 * p + 8 * o + (p > 0) + stats_row[stats]) : 3;
}

static uint64_t gather_w(unsigned n, unsigned row_bytes)
{
    uint64_t units = row_bytes % 8 ? row_bytes / 4 : row_bytes / 8;
    return n ? 12 + n * (10 + 2 * units) : 2;
}

static uint64_t transpose_w(unsigned rows, unsigned cols)
{
    return rows ? 12 + rows * (6 + 3 * (uint64_t)cols) : 2;
}

/* Elements whose bits differ (the first few printed). */
static size_t mismatches(const char *what, const float *got, const float *want, size_t rows, size_t cols,
                         size_t step)
{
    size_t bad = 0;
    for (size_t i = 0; i < rows; i++)
        for (size_t c = 0; c < cols; c++)
            if (bits_of(got[i * step + c]) != bits_of(want[i * step + c]) && bad++ < 4)
                fprintf(stderr, "\n  %s[%zu][%zu]: codelet 0x%08x, model 0x%08x", what, i, c,
                        bits_of(got[i * step + c]), bits_of(want[i * step + c]));
    return bad;
}

/* Elements further from ref than bound; the worst ratio to *ratio. */
static size_t over_bound(const float *got, const double *ref, const double *bound, size_t n, double *ratio)
{
    size_t bad = 0;
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)got[i] - ref[i]);
        double q = bound[i] > 0 ? e / bound[i] : (e > 0 ? INFINITY : 0);
        if (q > worst)
            worst = q;
        if (!(e <= bound[i]) && bad++ < 4)
            fprintf(stderr, "\n  [%zu]: got %.9g, reference %.9g, bound %.3g", i, (double)got[i], ref[i], bound[i]);
    }
    *ratio = worst;
    return bad;
}

/* Inputs: each row gets its own magnitude, 10^(0..30) for `wide`
 * (10^(0..15) for sums of squares, which would overflow beyond). */
static unsigned wide_exponents = 31;
static void fill_rows(float *x, size_t rows, size_t cols, size_t step, bool wide, double offset)
{
    for (size_t i = 0; i < rows; i++) {
        double mag = wide ? pow(10.0, (double)(i * 7 % wide_exponents)) : 1.0;
        for (size_t c = 0; c < cols; c++)
            x[i * step + c] = (float)(offset + mag * rnd_unit());
    }
}

/* ---- reduce -------------------------------------------------------------------- */

/* Tolerance against the exact sum in double.  Each lane adds its
 * m = ceil(n / 2) terms to +0 one at a time (the first addition exact), so
 * its error is at most (m - 1) u sum|x| (first order); lane 0 + lane 1
 * adds one rounding of u sum|x|: (m u + u^2 terms) sum|x|.  Sum of
 * squares: every product is rounded once more, (m + 1) u sum x^2.  Mean:
 * the sum's bound times scale, the scale's own rounding (scale = fl(1/n):
 * u) and the product's: (m + 2) u sum|x| / n.  The bound is doubled for
 * the second-order terms; max is exact (bound 0). */
static double reduce_reference(const float *x, size_t cols, enum reduce_op op, double *bound)
{
    double s = 0, a = 0, m = x[0];
    double lane_terms = (double)((cols + 1) / 2);
    for (size_t c = 0; c < cols; c++) {
        double v = x[c];
        switch (op) {
        case REDUCE_OP_MAX: m = v > m ? v : m; break;
        case REDUCE_OP_MIN: m = v < m ? v : m; break;
        case REDUCE_OP_PROD: s = c ? s * v : v; break;
        case REDUCE_OP_SUMSQ: s += v * v; a += v * v; break;
        case REDUCE_OP_ABS_SUM: s += fabs(v); a += fabs(v); break;
        default: s += v; a += fabs(v); break;
        }
    }
    switch (op) {
    case REDUCE_OP_MAX: case REDUCE_OP_MIN: *bound = 0; return m;
    /* every factor enters one rounded product (1.0 * x is exact): cols
     * roundings, 2 cols u |p| doubled */
    case REDUCE_OP_PROD: *bound = 2 * (double)cols * U * fabs(s); return s;
    case REDUCE_OP_SUMSQ: *bound = 2 * (lane_terms + 1) * U * a; return s;
    case REDUCE_OP_MEAN: *bound = 2 * (lane_terms + 2) * U * a / (double)cols; return s / (double)cols;
    default: *bound = 2 * lane_terms * U * a; return s;
    }
}

typedef struct case_result {
    run_result run;
    uint64_t hand;
    size_t bit_mismatches, over;
    double ratio;
} case_result;

static case_result reduce_case(unsigned total_rows, unsigned cols, unsigned step, enum reduce_op op,
                               bool wide, uint32_t seed, const unsigned *rows_override)
{
    case_result cr;
    memset(&cr, 0, sizeof cr);
    rig r;
    if (!rig_open(&r, "vtx_reduce_rows_f32", REDUCE_ROWS_V_WORDS)) {
        CU_FAIL("rig");
        rig_close(&r);
        return cr;
    }
    lcg_state = seed;
    float *x = malloc((size_t)total_rows * step * 4 + 4), *got = malloc((size_t)total_rows * 4 + 4);
    float *model = malloc((size_t)total_rows * 4 + 4);
    double *ref = calloc((size_t)total_rows + 1, 8), *bound = calloc((size_t)total_rows + 1, 8);
    for (size_t i = 0; i < (size_t)total_rows * step; i++)
        x[i] = float_of(SNAN_BITS);
    wide_exponents = op == REDUCE_OP_SUMSQ ? 16 : 31;
    fill_rows(x, total_rows, cols, step, wide && op != REDUCE_OP_PROD, 0);
    wide_exponents = 31;
    if (op == REDUCE_OP_PROD)   /* factors in [0.5, 1.5): no overflow or underflow */
        for (size_t i = 0; i < total_rows; i++)
            for (size_t c = 0; c < cols; c++)
                x[i * step + c] = (float)(1.0 + 0.5 * rnd_unit());
    uint32_t in = rig_alloc(&r, (size_t)total_rows * step * 4), out = rig_alloc(&r, (size_t)total_rows * 4);
    rig_write_rows(&r, in, x, total_rows, cols, step);
    float scale = 1.0f / (float)cols;
    uint32_t rec[WORKERS * REDUCE_ROWS_V_WORDS];
    uint64_t w[WORKERS];
    unsigned row0 = 0;
    for (unsigned k = 0; k < WORKERS; k++) {
        unsigned n = rows_override ? rows_override[k] : rows_of(total_rows, k);
        uint32_t *v = rec + k * REDUCE_ROWS_V_WORDS;
        v[REDUCE_ROWS_V_IN] = in + row0 * step * 4;
        v[REDUCE_ROWS_V_OUT] = out + row0 * 4;
        v[REDUCE_ROWS_V_ROWS] = n;
        v[REDUCE_ROWS_V_COLS] = cols;
        v[REDUCE_ROWS_V_IN_STEP] = step * 4;
        v[REDUCE_ROWS_V_OP] = op;
        v[REDUCE_ROWS_V_SCALE] = bits_of(scale);
        w[k] = reduce_w(n, cols, op);
        row0 += n;
    }
    cr.run = rig_run(&r, rec, REDUCE_ROWS_V_WORDS);
    cr.hand = hand_cycles(w);
    if (cr.run.ran) {
        rig_read(&r, out, got, (size_t)total_rows * 4);
        rowwise_model_reduce(x, model, total_rows, cols, step, op, scale);
        cr.bit_mismatches = mismatches("out", got, model, 1, total_rows, 0);
        for (unsigned i = 0; i < total_rows; i++)
            ref[i] = reduce_reference(x + (size_t)i * step, cols, op, &bound[i]);
        cr.over = over_bound(got, ref, bound, total_rows, &cr.ratio);
    } else {
        fprintf(stderr, "\nreduce did not end: %s\n", cr.run.fault);
    }
    free(x); free(got); free(model); free(ref); free(bound);
    rig_close(&r);
    return cr;
}

static void check_case(const case_result *cr)
{
    CU_ASSERT_TRUE(cr->run.ran);
    CU_ASSERT_EQUAL(cr->bit_mismatches, 0);
    CU_ASSERT_EQUAL(cr->over, 0);
    CU_ASSERT_EQUAL(cr->run.cycles, cr->hand);
    CU_ASSERT_EQUAL(cr->run.fp_sts, 0);
    if (cr->run.cycles != cr->hand)
        fprintf(stderr, "\n  cycles %llu, hand count %llu", (unsigned long long)cr->run.cycles,
                (unsigned long long)cr->hand);
}

static void test_reduce(void)
{
    static const unsigned widths[] = {1, 2, 3, 8, 77, 768};
    for (unsigned op = REDUCE_OP_SUM; op <= REDUCE_OP_ABS_SUM; op++)
        for (unsigned i = 0; i < sizeof widths / sizeof widths[0]; i++) {
            unsigned cols = widths[i], step = (cols + 1) & ~1u;
            if (i % 2)
                step += 4;   /* padded rows */
            case_result cr = reduce_case(13, cols, step, (enum reduce_op)op, true, 100u + op * 10 + i, NULL);
            check_case(&cr);
        }
}

/* Worked example 1 at the top. */
static void test_hand_cycles(void)
{
    static const unsigned rows[WORKERS] = {2, 1, 1, 1, 1, 0};
    uint64_t w[WORKERS];
    for (unsigned k = 0; k < WORKERS; k++)
        w[k] = reduce_w(rows[k], 5, REDUCE_OP_SUM);
    CU_ASSERT_EQUAL(w[0], 33);
    CU_ASSERT_EQUAL(w[1], 23);
    CU_ASSERT_EQUAL(w[5], 3);
    CU_ASSERT_EQUAL(hand_cycles(w), 207);
    case_result cr = reduce_case(6, 5, 6, REDUCE_OP_SUM, false, 7u, rows);
    check_case(&cr);
    CU_ASSERT_EQUAL(cr.run.cycles, 207);
}

/* ---- softmax ------------------------------------------------------------------- */

/* Tolerance against softmax in double.  m = max is exact.  d = fl(x - m):
 * |d - (x - m)| <= u |x - m|; f32exp rounds exp(d) once (u), and exp turns
 * d's error into a relative one of u |x - m|: e_c has relative error
 * eps_c = (2 + |x_c - m|) u.  Each lane sums at most m = ceil(n / 2) terms;
 * with lane 0 + lane 1, the sum s has relative error at most
 * rel_s = sum e eps / sum e + m u.  f32oox and the product add u each:
 * |y_c - ref_c| <= ref_c (eps_c + rel_s + 2 u), doubled for second-order
 * terms, plus 2^-125 for results and exponentials flushed from the
 * denormal range (exp(d) < 2^-126 is written as 0). */
static void softmax_reference(const float *x, size_t cols, double *ref, double *bound)
{
    double m = x[0], s = 0, weighted = 0;
    for (size_t c = 0; c < cols; c++)
        m = x[c] > m ? x[c] : m;
    for (size_t c = 0; c < cols; c++) {
        ref[c] = exp((double)x[c] - m);
        s += ref[c];
        weighted += ref[c] * (2 + fabs((double)x[c] - m)) * U;
    }
    double rel_s = weighted / s + (double)((cols + 1) / 2) * U;
    for (size_t c = 0; c < cols; c++) {
        ref[c] /= s;
        bound[c] = 2 * ref[c] * ((2 + fabs((double)x[c] - m)) * U + rel_s + 2 * U) + 0x1p-125;
    }
}

static case_result softmax_case(unsigned total_rows, unsigned cols, unsigned step, bool in_place, bool wide,
                                uint32_t seed, uint32_t placement)
{
    case_result cr;
    memset(&cr, 0, sizeof cr);
    rig r;
    if (!rig_open(&r, "vtx_softmax_rows_f32", SOFTMAX_ROWS_V_WORDS)) {
        CU_FAIL("rig");
        rig_close(&r);
        return cr;
    }
    if (placement)
        r.next = placement;
    lcg_state = seed;
    size_t nf = (size_t)total_rows * step + 1;
    float *x = malloc(nf * 4), *got = malloc(nf * 4), *model = malloc(nf * 4);
    double *ref = malloc(nf * 8), *bound = malloc(nf * 8);
    for (size_t i = 0; i < nf; i++)
        x[i] = got[i] = model[i] = float_of(SNAN_BITS);
    fill_rows(x, total_rows, cols, step, wide, 0);
    uint32_t in = rig_alloc(&r, (size_t)total_rows * step * 4);
    uint32_t out = in_place ? in : rig_alloc(&r, (size_t)total_rows * step * 4);
    rig_write_rows(&r, in, x, total_rows, cols, step);
    uint32_t rec[WORKERS * SOFTMAX_ROWS_V_WORDS];
    uint64_t w[WORKERS];
    unsigned row0 = 0;
    for (unsigned k = 0; k < WORKERS; k++) {
        unsigned n = rows_of(total_rows, k);
        uint32_t *v = rec + k * SOFTMAX_ROWS_V_WORDS;
        v[SOFTMAX_ROWS_V_IN] = in + row0 * step * 4;
        v[SOFTMAX_ROWS_V_OUT] = out + row0 * step * 4;
        v[SOFTMAX_ROWS_V_ROWS] = n;
        v[SOFTMAX_ROWS_V_COLS] = cols;
        v[SOFTMAX_ROWS_V_STEP] = step * 4;
        w[k] = softmax_w(n, cols);
        row0 += n;
    }
    cr.run = rig_run(&r, rec, SOFTMAX_ROWS_V_WORDS);
    cr.hand = hand_cycles(w);
    if (cr.run.ran) {
        rig_read_rows(&r, out, got, total_rows, cols, step);
        rowwise_model_softmax(x, model, total_rows, cols, step);
        cr.bit_mismatches = mismatches("softmax", got, model, total_rows, cols, step);
        size_t over = 0;
        double worst = 0;
        for (unsigned i = 0; i < total_rows; i++) {
            double q;
            softmax_reference(x + (size_t)i * step, cols, ref, bound);
            over += over_bound(got + (size_t)i * step, ref, bound, cols, &q);
            worst = q > worst ? q : worst;
        }
        cr.over = over;
        cr.ratio = worst;
    } else {
        fprintf(stderr, "\nsoftmax did not end: %s\n", cr.run.fault);
    }
    free(x); free(got); free(model); free(ref); free(bound);
    rig_close(&r);
    return cr;
}

static void test_softmax(void)
{
    static const unsigned widths[] = {1, 2, 3, 4, 17, 128};
    for (unsigned i = 0; i < sizeof widths / sizeof widths[0]; i++) {
        unsigned cols = widths[i], step = ((cols + 1) & ~1u) + (i % 2 ? 2 : 0);
        case_result cr = softmax_case(11, cols, step, false, true, 300u + i, 0);
        check_case(&cr);
    }
    /* Worked example 2 at the top. */
    CU_ASSERT_EQUAL(softmax_w(1, 3), 52);
    case_result cr = softmax_case(6, 3, 4, false, false, 9u, 0);
    check_case(&cr);
    CU_ASSERT_EQUAL(cr.run.cycles, 324);
}

/* In place, and with the tensor in region 0 (not interleaved). */
static void test_softmax_in_place(void)
{
    case_result cr = softmax_case(8, 33, 34, true, true, 41u, 0);
    check_case(&cr);
    cr = softmax_case(7, 64, 64, true, false, 42u, 0x60000u);
    check_case(&cr);
}

/* Large magnitudes: 1e30-scaled rows give exp of huge negatives (0) and
 * exactly 1 at the max; nothing overflows. */
static void test_softmax_large(void)
{
    case_result cr = softmax_case(31, 9, 10, false, true, 5u, 0);
    check_case(&cr);
    CU_ASSERT(cr.ratio <= 1.0);
}

/* ---- layer norm ---------------------------------------------------------------- */

/* Tolerance against ONNX LayerNormalization in double.  With n columns,
 * m = ceil(n / 2) terms a lane, A = sum |x|:
 *   mean: the sum's error m u A (see reduce) and f32div's rounding:
 *     |dm| <= m u A / n + u |mean|;
 *   d_c = fl(x_c - mean~): |d~_c - d_c| <= |dm| + u |d_c|;
 *   var: the sum of d~^2 (each square rounded, each lane m terms) over n:
 *     since sum d_c = 0, the mean's error enters only as n dm^2, so
 *     |var~ - var| <= (m + 3) u var + dm^2 (first order in u);
 *   var + eps and f32oorx: rstd has relative error
 *     rel_r <= ((m + 3) u var + dm^2) / (2 (var + eps)) + u / 2 + u;
 *   y = ((d~ r~) g) + b, two products and a sum rounded:
 *     |y~ - y| <= |g| r (|dm| + u |d|) + |g d| r (rel_r + 2 u) + u |y|.
 * Doubled for second-order terms. */
/* The statistics the reference derives: mean, its bound dm, rstd, its bound. */
static double ln_mean, ln_mean_bound, ln_rstd, ln_rstd_bound;

static void layernorm_reference(const float *x, const float *g, const float *b, size_t cols, float eps,
                                double *ref, double *bound)
{
    double s = 0, a = 0, v = 0, n = (double)cols, m = (double)((cols + 1) / 2);
    for (size_t c = 0; c < cols; c++) {
        s += x[c];
        a += fabs((double)x[c]);
    }
    double mean = s / n;
    for (size_t c = 0; c < cols; c++)
        v += ((double)x[c] - mean) * ((double)x[c] - mean);
    v /= n;
    double r = 1.0 / sqrt(v + eps);
    double dm = m * U * a / n + U * fabs(mean);
    double rel_r = ((m + 3) * U * v + dm * dm) / (2 * (v + eps)) + 1.5 * U;
    ln_mean = mean, ln_mean_bound = 2 * dm, ln_rstd = r, ln_rstd_bound = 2 * rel_r * r;
    for (size_t c = 0; c < cols; c++) {
        double d = (double)x[c] - mean;
        ref[c] = d * r * g[c] + b[c];
        bound[c] = 2 * (fabs(g[c]) * r * (dm + U * fabs(d)) + fabs(g[c] * d) * r * (rel_r + 2 * U)
                        + U * fabs(ref[c])) + 0x1p-125;
    }
}

/* stats: bit 0 MEAN_OUT set, bit 1 INV_STD_OUT set (checked against the
 * model bit for bit and against the reference's mean and rstd). */
static case_result layernorm_case_stats(unsigned total_rows, unsigned cols, unsigned step, bool in_place,
                                        double offset, float eps, uint32_t seed, unsigned stats)
{
    case_result cr;
    memset(&cr, 0, sizeof cr);
    rig r;
    if (!rig_open(&r, "vtx_layernorm_rows_f32", LAYERNORM_ROWS_V_WORDS)) {
        CU_FAIL("rig");
        rig_close(&r);
        return cr;
    }
    lcg_state = seed;
    size_t nf = (size_t)total_rows * step + 1;
    float *x = malloc(nf * 4), *got = malloc(nf * 4), *model = malloc(nf * 4);
    float *g = malloc((size_t)cols * 4), *b = malloc((size_t)cols * 4);
    double *ref = malloc(nf * 8), *bound = malloc(nf * 8);
    for (size_t i = 0; i < nf; i++)
        x[i] = got[i] = model[i] = float_of(SNAN_BITS);
    fill_rows(x, total_rows, cols, step, false, offset);
    for (unsigned c = 0; c < cols; c++) {
        g[c] = (float)(1.0 + 0.5 * rnd_unit());
        b[c] = (float)(0.25 * rnd_unit());
    }
    uint32_t in = rig_alloc(&r, (size_t)total_rows * step * 4);
    uint32_t out = in_place ? in : rig_alloc(&r, (size_t)total_rows * step * 4);
    uint32_t ga = rig_alloc(&r, (size_t)cols * 4), be = rig_alloc(&r, (size_t)cols * 4);
    uint32_t mo = rig_alloc(&r, (size_t)total_rows * 4 + 4) + 4, ro = rig_alloc(&r, (size_t)total_rows * 4);
    rig_write_rows(&r, in, x, total_rows, cols, step);
    rig_write(&r, ga, g, (size_t)cols * 4);
    rig_write(&r, be, b, (size_t)cols * 4);
    uint32_t rec[WORKERS * LAYERNORM_ROWS_V_WORDS];
    uint64_t w[WORKERS];
    unsigned row0 = 0;
    for (unsigned k = 0; k < WORKERS; k++) {
        unsigned n = rows_of(total_rows, k);
        uint32_t *v = rec + k * LAYERNORM_ROWS_V_WORDS;
        v[LAYERNORM_ROWS_V_IN] = in + row0 * step * 4;
        v[LAYERNORM_ROWS_V_OUT] = out + row0 * step * 4;
        v[LAYERNORM_ROWS_V_GAMMA] = ga;
        v[LAYERNORM_ROWS_V_BETA] = be;
        v[LAYERNORM_ROWS_V_ROWS] = n;
        v[LAYERNORM_ROWS_V_COLS] = cols;
        v[LAYERNORM_ROWS_V_STEP] = step * 4;
        v[LAYERNORM_ROWS_V_EPS] = bits_of(eps);
        /* MEAN_OUT 4 mod 8: 4-byte alignment is enough */
        v[LAYERNORM_ROWS_V_MEAN_OUT] = stats & 1 ? mo + row0 * 4 : 0;
        v[LAYERNORM_ROWS_V_INV_STD_OUT] = stats & 2 ? ro + row0 * 4 : 0;
        w[k] = layernorm_w(n, cols, stats);
        row0 += n;
    }
    cr.run = rig_run(&r, rec, LAYERNORM_ROWS_V_WORDS);
    cr.hand = hand_cycles(w);
    if (cr.run.ran) {
        rig_read_rows(&r, out, got, total_rows, cols, step);
        float *mean_model = malloc((size_t)total_rows * 4 + 4), *rstd_model = malloc((size_t)total_rows * 4 + 4);
        float *mean_got = malloc((size_t)total_rows * 4 + 4), *rstd_got = malloc((size_t)total_rows * 4 + 4);
        rowwise_model_layernorm_stats(x, model, g, b, total_rows, cols, step, eps, mean_model, rstd_model);
        cr.bit_mismatches = mismatches("layernorm", got, model, total_rows, cols, step);
        rig_read(&r, mo, mean_got, (size_t)total_rows * 4);
        rig_read(&r, ro, rstd_got, (size_t)total_rows * 4);
        size_t over = 0;
        double worst = 0;
        for (unsigned i = 0; i < total_rows; i++) {
            double q;
            layernorm_reference(x + (size_t)i * step, g, b, cols, eps, ref, bound);
            over += over_bound(got + (size_t)i * step, ref, bound, cols, &q);
            worst = q > worst ? q : worst;
            /* the statistics: written where asked, untouched (NaN filling) elsewhere */
            if (stats & 1) {
                cr.bit_mismatches += mismatches("mean", mean_got + i, mean_model + i, 1, 1, 0);
                over += !(fabs(mean_got[i] - ln_mean) <= ln_mean_bound);
            } else {
                cr.bit_mismatches += bits_of(mean_got[i]) != SNAN_BITS;
            }
            if (stats & 2) {
                cr.bit_mismatches += mismatches("rstd", rstd_got + i, rstd_model + i, 1, 1, 0);
                over += !(fabs(rstd_got[i] - ln_rstd) <= ln_rstd_bound);
            } else {
                cr.bit_mismatches += bits_of(rstd_got[i]) != SNAN_BITS;
            }
        }
        free(mean_model); free(rstd_model); free(mean_got); free(rstd_got);
        cr.over = over;
        cr.ratio = worst;
    } else {
        fprintf(stderr, "\nlayernorm did not end: %s\n", cr.run.fault);
    }
    free(x); free(got); free(model); free(g); free(b); free(ref); free(bound);
    rig_close(&r);
    return cr;
}

static case_result layernorm_case(unsigned total_rows, unsigned cols, unsigned step, bool in_place,
                                  double offset, float eps, uint32_t seed)
{
    return layernorm_case_stats(total_rows, cols, step, in_place, offset, eps, seed, 0);
}

/* MEAN_OUT and INV_STD_OUT: both, either, in place; hand cycles. */
static void test_layernorm_stats(void)
{
    static const unsigned widths[] = {1, 2, 5, 64};
    for (unsigned i = 0; i < sizeof widths / sizeof widths[0]; i++)
        for (unsigned stats = 1; stats <= 3; stats++) {
            unsigned cols = widths[i], step = (cols + 1) & ~1u;
            case_result cr = layernorm_case_stats(13, cols, step, stats == 2, 10.0, 1e-5f, 700u + i * 4 + stats, stats);
            check_case(&cr);
        }
    /* rows 1, 1, 1, 1, 1, 0 of 3 columns with both: per worker
     * 19 + 26 + 7 + 8 + 1 + 10 = 71 worker cycles; worker 4 starts last
     * (cycle 9): 9 + 6 * 71 + 3 = 438. */
    CU_ASSERT_EQUAL(layernorm_w(1, 3, 3), 71);
    case_result cr = layernorm_case_stats(5, 3, 4, false, 0.0, 1e-5f, 3u, 3);
    check_case(&cr);
}

static void test_layernorm(void)
{
    static const unsigned widths[] = {1, 2, 3, 4, 5, 31, 128};
    for (unsigned i = 0; i < sizeof widths / sizeof widths[0]; i++) {
        unsigned cols = widths[i], step = ((cols + 1) & ~1u) + (i % 2 ? 4 : 0);
        case_result cr = layernorm_case(13, cols, step, false, i % 3 ? 0.0 : 100.0, 1e-5f, 500u + i);
        check_case(&cr);
    }
    /* BERT's epsilon and an offset that a one-pass E[x^2] - mean^2 would cancel. */
    case_result cr = layernorm_case(7, 96, 96, false, 1000.0, 1e-12f, 77u);
    check_case(&cr);
}

static void test_layernorm_in_place(void)
{
    case_result cr = layernorm_case(9, 21, 22, true, 3.0, 1e-5f, 61u);
    check_case(&cr);
    cr = layernorm_case(6, 64, 64, true, 0.0, 1e-5f, 62u);
    check_case(&cr);
}

/* ---- zero rows ----------------------------------------------------------------- */

/* Every worker gets rows = 0: nothing is written (the output keeps its
 * NaN filling) and the run takes the hand count. */
static void test_zero_rows(void)
{
    static const unsigned zeros[WORKERS] = {0, 0, 0, 0, 0, 0};
    case_result cr = reduce_case(0, 4, 4, REDUCE_OP_SUM, false, 1u, zeros);
    CU_ASSERT_TRUE(cr.run.ran);
    uint64_t w[WORKERS] = {3, 3, 3, 3, 3, 3};
    CU_ASSERT_EQUAL(cr.run.cycles, hand_cycles(w));
    /* Softmax with rows only for workers 1 and 2 (others 0): 2 rows. */
    case_result s = softmax_case(2, 6, 6, false, false, 3u, 0);
    check_case(&s);
    case_result l = layernorm_case(3, 6, 6, false, 0.0, 1e-5f, 4u);
    check_case(&l);
}

/* ---- gather -------------------------------------------------------------------- */

typedef struct gather_result {
    run_result run;
    uint64_t hand;
    size_t mismatched_bytes;
} gather_result;

static gather_result gather_case(unsigned n, unsigned row_bytes, unsigned table_rows, const int32_t *idx,
                                 uint32_t seed)
{
    gather_result gr;
    memset(&gr, 0, sizeof gr);
    rig r;
    if (!rig_open(&r, "vtx_gather_rows", GATHER_ROWS_V_WORDS)) {
        CU_FAIL("rig");
        rig_close(&r);
        return gr;
    }
    lcg_state = seed;
    size_t tb = (size_t)row_bytes * table_rows, ob = (size_t)row_bytes * n;
    uint8_t *table = malloc(tb + 1), *got = malloc(ob + 1), *model = malloc(ob + 1);
    for (size_t i = 0; i < tb; i++)
        table[i] = (uint8_t)(rnd_unit() * 128 + 128);
    uint32_t ta = rig_alloc(&r, tb), ia = rig_alloc(&r, (size_t)n * 4), oa = rig_alloc(&r, ob);
    rig_write(&r, ta, table, tb);
    rig_write(&r, ia, idx, (size_t)n * 4);
    uint32_t rec[WORKERS * GATHER_ROWS_V_WORDS];
    uint64_t w[WORKERS];
    unsigned i0 = 0;
    for (unsigned k = 0; k < WORKERS; k++) {
        unsigned m = rows_of(n, k);
        uint32_t *v = rec + k * GATHER_ROWS_V_WORDS;
        v[GATHER_ROWS_V_TABLE] = ta;
        v[GATHER_ROWS_V_IDX] = ia + i0 * 4;
        v[GATHER_ROWS_V_OUT] = oa + i0 * row_bytes;
        v[GATHER_ROWS_V_N] = m;
        v[GATHER_ROWS_V_ROW_BYTES] = row_bytes;
        v[GATHER_ROWS_V_TABLE_ROWS] = table_rows;
        w[k] = gather_w(m, row_bytes);
        i0 += m;
    }
    gr.run = rig_run(&r, rec, GATHER_ROWS_V_WORDS);
    gr.hand = hand_cycles(w);
    if (gr.run.ran) {
        rig_read(&r, oa, got, ob);
        CU_ASSERT_EQUAL(rowwise_model_gather(table, idx, model, n, row_bytes, table_rows), n);
        for (size_t i = 0; i < ob; i++)
            gr.mismatched_bytes += got[i] != model[i];
    }
    free(table); free(got); free(model);
    rig_close(&r);
    return gr;
}

static void test_gather(void)
{
    enum { N = 20, ROWS = 9 };
    int32_t idx[N];
    for (unsigned i = 0; i < N; i++)
        idx[i] = (int32_t)((i * 5) % ROWS) - (i % 3 ? 0 : ROWS);   /* a third negative */
    idx[1] = ROWS - 1;
    idx[2] = -ROWS;                                                    /* row 0 */
    static const unsigned row_bytes[] = {4, 8, 12, 3072};
    for (unsigned i = 0; i < sizeof row_bytes / sizeof row_bytes[0]; i++) {
        gather_result gr = gather_case(N, row_bytes[i], ROWS, idx, 900u + i);
        CU_ASSERT_TRUE(gr.run.ran);
        CU_ASSERT_EQUAL(gr.mismatched_bytes, 0);
        CU_ASSERT_EQUAL(gr.run.cycles, gr.hand);
        if (gr.run.cycles != gr.hand)
            fprintf(stderr, "\n  gather %u: cycles %llu, hand %llu", row_bytes[i],
                    (unsigned long long)gr.run.cycles, (unsigned long long)gr.hand);
    }
}

/* An index outside [-rows, rows) stops the worker with trap 0x47 before it
 * reads anything outside the table. */
static void test_gather_bad_index(void)
{
    static const int32_t bad[][2] = {{0, 9}, {0, -10}, {3, 0x7fffffff}, {-1, INT32_MIN}};
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int32_t idx[6] = {1, 2, 3, 4, 5, 6};
        idx[5] = bad[i][1];
        idx[4] = bad[i][0];
        gather_result gr = gather_case(6, 16, 9, idx, 1u);
        CU_ASSERT_FALSE(gr.run.ran);
        CU_ASSERT_EQUAL(gr.run.stop, TILE_STOP_FAULT);
        CU_ASSERT_PTR_NOT_NULL(strstr(gr.run.fault, "worker 6"));
        CU_ASSERT_PTR_NOT_NULL(strstr(gr.run.fault, "trap 71"));
        CU_ASSERT_PTR_NOT_NULL(strstr(gr.run.fault, "rw_gather_bad"));
    }
    int32_t idx[3] = {0, 5, 9};
    float table[9] = {0}, out[3] = {0};
    /* the model stops at the first index out of range (9 of 9 rows) */
    CU_ASSERT_EQUAL(rowwise_model_gather(table, idx, out, 3, 4, 9), 2);
}

/* ---- transpose ----------------------------------------------------------------- */

static void transpose_case(unsigned total_rows, unsigned cols, unsigned in_step, unsigned out_step, uint32_t seed)
{
    rig r;
    if (!rig_open(&r, "vtx_transpose_f32", TRANSPOSE_V_WORDS)) {
        CU_FAIL("rig");
        rig_close(&r);
        return;
    }
    lcg_state = seed;
    size_t ni = (size_t)total_rows * in_step + 1, no = (size_t)cols * out_step + 1;
    float *x = malloc(ni * 4), *got = malloc(no * 4), *model = malloc(no * 4);
    for (size_t i = 0; i < ni; i++)
        x[i] = (float)rnd_unit();
    for (size_t i = 0; i < no; i++)
        got[i] = model[i] = float_of(SNAN_BITS);
    x[0] = float_of(SNAN_BITS);          /* bits are copied, NaNs included */
    uint32_t in = rig_alloc(&r, (size_t)total_rows * in_step * 4), out = rig_alloc(&r, (size_t)cols * out_step * 4);
    rig_write(&r, in, x, (size_t)total_rows * in_step * 4);
    uint32_t rec[WORKERS * TRANSPOSE_V_WORDS];
    uint64_t w[WORKERS];
    unsigned row0 = 0;
    for (unsigned k = 0; k < WORKERS; k++) {
        unsigned n = rows_of(total_rows, k);
        uint32_t *v = rec + k * TRANSPOSE_V_WORDS;
        v[TRANSPOSE_V_IN] = in + row0 * in_step * 4;
        v[TRANSPOSE_V_OUT] = out + row0 * 4;
        v[TRANSPOSE_V_ROWS] = n;
        v[TRANSPOSE_V_COLS] = cols;
        v[TRANSPOSE_V_IN_STEP] = in_step * 4;
        v[TRANSPOSE_V_OUT_STEP] = out_step * 4;
        w[k] = transpose_w(n, cols);
        row0 += n;
    }
    run_result run = rig_run(&r, rec, TRANSPOSE_V_WORDS);
    CU_ASSERT_TRUE(run.ran);
    CU_ASSERT_EQUAL(run.cycles, hand_cycles(w));
    rig_read_rows(&r, out, got, cols, total_rows, out_step);
    rowwise_model_transpose(x, model, total_rows, cols, in_step, out_step);
    CU_ASSERT_EQUAL(mismatches("transpose", got, model, cols, total_rows, out_step), 0);
    CU_ASSERT_EQUAL(bits_of(got[0]), SNAN_BITS);
    for (unsigned c = 0; c < cols; c++)
        for (unsigned i = 0; i < total_rows; i++)
            if (c + i)
                CU_ASSERT_EQUAL(bits_of(got[c * out_step + i]), bits_of(x[i * in_step + c]));
    free(x); free(got); free(model);
    rig_close(&r);
}

static void test_transpose(void)
{
    transpose_case(7, 5, 6, 8, 1u);
    transpose_case(13, 1, 2, 14, 2u);
    transpose_case(1, 9, 10, 1, 3u);
    transpose_case(24, 16, 16, 24, 4u);
}

/* ---- column reduce ------------------------------------------------------------- */

/* Worker cycles of vtx_reduce_cols_f32 (read from rowwise.S): set-up 18 to
 * the alignment test; the block path (in, in_step, f32 out 8-byte aligned,
 * n >= 12, op of one aux issue) 2 + 1 + its dispatch, then a block of 12
 * columns 19 + 7 (R - 1) (21 with f16 out; + 8 for mean), 1 after the
 * last; the other
 * columns one at a time: 3 + the dispatch, then a column 7 + 3 (R - 1)
 * (+ 1 for mean); f16 replaces a column's 4 closing issues by 6 (an even
 * column), 8 (the odd one that stores the pair, or an even last one). */
static bool cols_block_op(enum reduce_op op) { return op != REDUCE_OP_SUMSQ && op != REDUCE_OP_ABS_SUM; }

static uint64_t cols_generic_w(unsigned rows, unsigned n, enum reduce_op op, bool f16)
{
    static const uint64_t dispatch[] = {1, 3, 5, 7, 9, 11, 12};
    uint64_t w = 3 + dispatch[op];
    for (unsigned c = 0; c < n; c++) {
        w += 3 + 3 * (uint64_t)(rows - 1) + (op == REDUCE_OP_MEAN);
        if (!f16)
            w += 4;
        else if (c % 2)
            w += 8;
        else
            w += c + 1 == n ? 8 : 6;
    }
    return w;
}

static uint64_t cols_w(unsigned rows, unsigned n, enum reduce_op op, bool f16, bool aligned)
{
    if (!rows)
        return 3;
    if (!n)
        return 4;
    uint64_t w = 18;
    if (!aligned)
        return w + cols_generic_w(rows, n, op, f16);
    w += 2;
    if (n < 12)
        return w + cols_generic_w(rows, n, op, f16);
    static const uint64_t dispatch[] = {1, 5, 10, 3, 7, 9, 10};
    w += 1 + dispatch[op];
    if (!cols_block_op(op))
        return w + cols_generic_w(rows, n, op, f16);
    unsigned blocks = n / 12, tail = n % 12;
    w += blocks * ((f16 ? 21 : 19) + 7 * (uint64_t)(rows - 1) + (op == REDUCE_OP_MEAN ? 8 : 0)) + 1;
    return tail ? w + cols_generic_w(rows, tail, op, f16) : w;
}

/* Tolerance against the column's exact result in double: R - 1 rounded
 * additions of terms up to sum|t| (sum, abs sum), R for the sum of squares
 * (each square rounded too), R + 1 for mean (the product and the scale's
 * rounding, over R), R - 1 products (prod), max and min exact; doubled for
 * second-order terms.  f16 adds one rounding: 2^-11 |ref| and 2^-25 for
 * the f16 subnormal range. */
static double cols_reference(const float *x, size_t rows, size_t step, enum reduce_op op, bool f16, double *bound)
{
    double s = 0, a = 0, m = x[0], p = 1;
    for (size_t r = 0; r < rows; r++) {
        double v = x[r * step];
        m = op == REDUCE_OP_MAX ? (v > m ? v : m) : (v < m ? v : m);
        p *= v;
        double t = op == REDUCE_OP_SUMSQ ? v * v : op == REDUCE_OP_ABS_SUM ? fabs(v) : v;
        s += t;
        a += fabs(t);
    }
    double n = (double)rows, ref;
    switch (op) {
    case REDUCE_OP_MAX: case REDUCE_OP_MIN: ref = m; *bound = 0; break;
    case REDUCE_OP_PROD: ref = p; *bound = 2 * (n - 1) * U * fabs(p); break;
    case REDUCE_OP_SUMSQ: ref = s; *bound = 2 * n * U * a; break;
    case REDUCE_OP_MEAN: ref = s / n; *bound = 2 * (n + 1) * U * a / n; break;
    default: ref = s; *bound = 2 * (n - 1) * U * a; break;
    }
    if (f16)
        *bound += 0x1p-11 * fabs(ref) * 1.01 + 0x1p-25;
    return ref;
}

/* Worker k reduces columns [c0_k, c0_k + n[k]) of a rows x (sum n) tensor
 * whose rows are in_step floats apart and whose first element lies
 * `offset` floats (0 or 1: 4 mod 8) past an 8-byte boundary; each worker
 * writes its own output tensor. */
static case_result cols_case(unsigned rows, const unsigned n[WORKERS], unsigned in_step, unsigned offset,
                             enum reduce_op op, bool f16, bool wide, uint32_t seed)
{
    case_result cr;
    memset(&cr, 0, sizeof cr);
    rig r;
    if (!rig_open(&r, "vtx_reduce_cols_f32", REDUCE_COLS_V_WORDS)) {
        CU_FAIL("rig");
        rig_close(&r);
        return cr;
    }
    lcg_state = seed;
    unsigned total = 0;
    for (unsigned k = 0; k < WORKERS; k++)
        total += n[k];
    size_t nf = (size_t)rows * in_step + offset + 2;
    float *x = malloc(nf * 4);
    for (size_t i = 0; i < nf; i++)
        x[i] = float_of(SNAN_BITS);
    float *x0 = x + offset;
    for (unsigned i = 0; i < rows; i++) {
        double mag = wide ? pow(10.0, (double)(i * 7 % (op == REDUCE_OP_SUMSQ ? 16 : 31))) : 1.0;
        for (unsigned c = 0; c < total; c++)
            x0[(size_t)i * in_step + c] = (float)(op == REDUCE_OP_PROD ? 1.0 + 0.5 * rnd_unit() : mag * rnd_unit());
    }
    uint32_t in = rig_alloc(&r, nf * 4);
    rig_write(&r, in, x, nf * 4);
    float scale = rows ? 1.0f / (float)rows : 0.0f;
    uint32_t rec[WORKERS * REDUCE_COLS_V_WORDS], out[WORKERS];
    uint64_t w[WORKERS];
    unsigned c0 = 0;
    for (unsigned k = 0; k < WORKERS; k++) {
        out[k] = rig_alloc(&r, (size_t)n[k] * 4 + 8);
        uint32_t *v = rec + k * REDUCE_COLS_V_WORDS;
        uint32_t in_k = in + (offset + c0) * 4;
        v[REDUCE_COLS_V_IN] = in_k;
        v[REDUCE_COLS_V_OUT] = out[k];
        v[REDUCE_COLS_V_ROWS] = rows;
        v[REDUCE_COLS_V_COLS] = n[k];
        v[REDUCE_COLS_V_IN_STEP] = in_step * 4;
        v[REDUCE_COLS_V_OP] = op;
        v[REDUCE_COLS_V_SCALE] = bits_of(scale);
        v[REDUCE_COLS_V_OUT_F16] = f16;
        w[k] = cols_w(rows, n[k], op, f16, ((in_k | in_step * 4) & 7) == 0);
        c0 += n[k];
    }
    cr.run = rig_run(&r, rec, REDUCE_COLS_V_WORDS);
    cr.hand = hand_cycles(w);
    if (cr.run.cycles != cr.hand)
        fprintf(stderr, "\n  cols rows %u step %u offset %u op %d f16 %d", rows, in_step, offset, op, f16);
    if (!cr.run.ran) {
        fprintf(stderr, "\nreduce cols did not end: %s\n", cr.run.fault);
    } else {
        c0 = 0;
        double worst = 0;
        for (unsigned k = 0; k < WORKERS; k++) {
            unsigned m = n[k];
            size_t words = f16 ? (m + 1) / 2 : m;
            uint32_t *got = malloc(words * 4 + 8), *want = malloc(words * 4 + 8);
            float *model = malloc((size_t)m * 4 + 4);
            uint16_t *model16 = malloc((size_t)m * 2 + 4);
            rig_read(&r, out[k], got, words * 4 + 8);
            rowwise_model_reduce_cols(x0 + c0, model, model16, f16, rows, m, in_step, op, scale);
            if (f16)
                memcpy(want, model16, words * 4);
            else
                memcpy(want, model, words * 4);
            want[words] = want[words + 1] = SNAN_BITS;   /* nothing written past the output */
            if (!rows)
                for (size_t i = 0; i < words; i++)
                    want[i] = SNAN_BITS;
            for (size_t i = 0; i < words + 2; i++)
                if (got[i] != want[i] && cr.bit_mismatches++ < 4)
                    fprintf(stderr, "\n  cols worker %u word %zu: codelet 0x%08x, model 0x%08x", k + 1, i, got[i], want[i]);
            for (unsigned c = 0; c < m && rows; c++) {
                double bound, ref = cols_reference(x0 + c0 + c, rows, in_step, op, f16, &bound);
                double v = f16 ? (double)fp16_to_f32((uint16_t)(got[c / 2] >> (16 * (c % 2)))) : (double)float_of(got[c]);
                double e = fabs(v - ref);
                if (!(e <= bound) && cr.over++ < 4)
                    fprintf(stderr, "\n  cols worker %u col %u: got %.9g, reference %.9g, bound %.3g", k + 1, c, v, ref, bound);
                if (bound > 0 && e / bound > worst)
                    worst = e / bound;
            }
            free(got); free(want); free(model); free(model16);
            c0 += m;
        }
        cr.ratio = worst;
    }
    free(x);
    rig_close(&r);
    return cr;
}

/* Every op, f32 and f16 out; workers' columns start 8-byte aligned and
 * 4 mod 8 (odd column offsets), rows 8-byte and 4-byte apart, odd widths
 * 1, 3, 5, blocks of 12 and their tails, one row. */
static void test_reduce_cols(void)
{
    static const unsigned split[WORKERS] = {13, 12, 25, 1, 3, 5};   /* starts 0, 13, 25, 50, 51, 54 */
    static const unsigned even[WORKERS] = {24, 2, 14, 0, 36, 4};     /* f16 outputs: all starts even */
    for (unsigned op = REDUCE_OP_SUM; op <= REDUCE_OP_ABS_SUM; op++) {
        case_result cr = cols_case(7, split, 60, 0, (enum reduce_op)op, false, true, 1000u + op);
        check_case(&cr);
        cr = cols_case(5, split, 59, 1, (enum reduce_op)op, false, true, 1100u + op);   /* rows 4 mod 8 apart */
        check_case(&cr);
        cr = cols_case(6, even, 82, 1, (enum reduce_op)op, true, false, 1200u + op);    /* 4 mod 8 start, f16 */
        check_case(&cr);
        cr = cols_case(3, even, 80, 0, (enum reduce_op)op, true, false, 1300u + op);
        check_case(&cr);
        cr = cols_case(1, split, 60, 0, (enum reduce_op)op, false, true, 1400u + op);
        check_case(&cr);
    }
}

/* vtx_reduce_cols_f32_split: one record for the six workers (vertex step
 * 0), `total` columns of `rows` rows into one output, each worker's columns
 * [w chunk, (w + 1) chunk) (chunk even): every word the plain codelet's
 * model gives, and the cycles its hand count for each worker's columns
 * plus the split's 17 issues (16 and a slot for the branch into the plain
 * codelet, to a 4-byte boundary; 10 for a worker with no column). */
static void split_cols_case(unsigned rows, unsigned total, unsigned in_step, enum reduce_op op, bool f16)
{
    rig r;
    CU_ASSERT_TRUE_FATAL(rig_open(&r, "vtx_reduce_cols_f32_split", 0));
    lcg_state = 2000u + rows * 97u + total;
    size_t nf = (size_t)rows * in_step + 2;
    float *x = malloc(nf * 4);
    CU_ASSERT_FATAL(x != NULL);
    for (size_t i = 0; i < nf; i++)
        x[i] = op == REDUCE_OP_PROD ? (float)(1.0 + 0.5 * rnd_unit()) : (float)rnd_unit();
    uint32_t in = rig_alloc(&r, nf * 4), out = rig_alloc(&r, (size_t)total * 4 + 8);
    rig_write(&r, in, x, nf * 4);
    float scale = rows ? 1.0f / (float)rows : 0.0f;
    unsigned chunk = ((total + 1) / 2 + WORKERS - 1) / WORKERS * 2;
    uint32_t rec[WORKERS * (REDUCE_COLS_SPLIT_V_WORDS + 1)];
    memset(rec, 0, sizeof rec);
    rec[REDUCE_COLS_V_IN] = in;
    rec[REDUCE_COLS_V_OUT] = out;
    rec[REDUCE_COLS_V_ROWS] = rows;
    rec[REDUCE_COLS_V_COLS] = total;
    rec[REDUCE_COLS_V_IN_STEP] = in_step * 4;
    rec[REDUCE_COLS_V_OP] = op;
    rec[REDUCE_COLS_V_SCALE] = bits_of(scale);
    rec[REDUCE_COLS_V_OUT_F16] = f16;
    rec[REDUCE_COLS_SPLIT_V_CHUNK] = chunk;
    run_result run = rig_run(&r, rec, REDUCE_COLS_SPLIT_V_WORDS + 1);
    CU_ASSERT_TRUE(run.ran);
    uint64_t w[WORKERS];
    for (unsigned k = 0; k < WORKERS; k++) {
        unsigned lo = k * chunk < total ? k * chunk : total, hi = lo + chunk < total ? lo + chunk : total;
        bool aligned = (((in + lo * 4) | in_step * 4) & 7) == 0;
        w[k] = hi > lo && rows ? cols_w(rows, hi - lo, op, f16, aligned) + 17 : 3 + 10;
    }
    CU_ASSERT_EQUAL(run.cycles, hand_cycles(w));
    size_t words = f16 ? (total + 1) / 2 : total;
    uint32_t *got = malloc(words * 4 + 8), *want = malloc(words * 4 + 8);
    float *model = malloc((size_t)total * 4 + 4);
    uint16_t *model16 = malloc((size_t)total * 2 + 4);
    CU_ASSERT_FATAL(got && want && model && model16);
    rig_read(&r, out, got, words * 4);
    rowwise_model_reduce_cols(x, model, model16, f16, rows, total, in_step, op, scale);
    memcpy(want, f16 ? (void *)model16 : (void *)model, words * 4);
    size_t bad = 0;
    for (size_t i = 0; i < words; i++)
        bad += got[i] != want[i];
    CU_ASSERT_EQUAL(bad, 0);
    free(got); free(want); free(model); free(model16); free(x);
    rig_close(&r);
}

static void test_reduce_cols_split(void)
{
    static const unsigned widths[] = { 1, 2, 7, 12, 25, 72, 145 };
    for (size_t k = 0; k < sizeof widths / sizeof *widths; k++)
        for (unsigned op = REDUCE_OP_SUM; op <= REDUCE_OP_ABS_SUM; op++) {
            unsigned step = (widths[k] + 1) / 2 * 2 + 2;   /* rows 8-byte apart */
            split_cols_case(5, widths[k], step, (enum reduce_op)op, false);
            split_cols_case(3, widths[k], step, (enum reduce_op)op, true);
            split_cols_case(4, widths[k], step + 1, (enum reduce_op)op, false);   /* rows 4 mod 8 apart */
        }
}

/* ---- sum of f16 partials ------------------------------------------------------- */

/* Worker cycles of vtx_reduce_partials_f16 before its exitz (rowwise.h):
 * set-up 24 (f16 out) or 23 (f32) paced; unpaced 19 / 18 (rows below
 * region 1) or 21 / 20 (rows 4 KiB apart or more); then per group of 8
 * columns 13 + R / 11 + R paced, 11 + 3 R / 8 + 3 R unpaced. */
static uint64_t partials_w(unsigned rows, unsigned cols, uint32_t rest, unsigned step_bytes, bool f16)
{
    if (!rows)
        return 3;
    if (!cols)
        return 4;
    bool region1 = rest >= 0x80000u, paced = region1 && step_bytes < 4096;
    uint64_t setup = paced ? 23 : region1 ? 20 : 18;
    uint64_t group = paced ? (f16 ? 13 : 11) + rows : (f16 ? 11 : 8) + 3 * (uint64_t)rows;
    return setup + f16 + (uint64_t)cols / 8 * group;
}

/* Worker k sums columns [c0_k, c0_k + n[k]) of `rows` rows of f16: row 0
 * at one address, the others `step` halves apart at `rest` (0: after row
 * 0 in the rig's region-1 memory; else that address), into its own output.
 * Values spread over 2^-8 .. 2^8 so that sums round; with `inf` column 3
 * holds an f16 infinity (the accumulators take it as NaN). */
static case_result partials_case(unsigned rows, const unsigned n[WORKERS], unsigned step, uint32_t rest,
                                 bool f16, bool inf, uint32_t seed)
{
    case_result cr;
    memset(&cr, 0, sizeof cr);
    rig r;
    CU_ASSERT_TRUE_FATAL(rig_open(&r, "vtx_reduce_partials_f16", RED_PARTIALS_V_WORDS));
    lcg_state = seed;
    unsigned total = 0;
    for (unsigned k = 0; k < WORKERS; k++)
        total += n[k];
    size_t nr = rows > 1 ? (size_t)(rows - 1) * step : 0;
    uint16_t *first = malloc((size_t)total * 2 + 2), *others = malloc(nr * 2 + 2);
    CU_ASSERT_FATAL(first && others);
    for (size_t i = 0; i < total; i++)
        first[i] = fp16_from_f32((float)(rnd_unit() * pow(2.0, (double)(i % 17) - 8)));
    for (size_t i = 0; i < nr; i++)
        others[i] = fp16_from_f32((float)(rnd_unit() * pow(2.0, (double)(i % 13) - 6)));
    if (inf && total > 3)
        first[3] = 0x7c00;                          /* +inf: the column's sum is NaN */
    uint32_t f = rig_alloc(&r, (size_t)total * 2);
    uint32_t o = rest ? rest : rig_alloc(&r, nr * 2);
    rig_write(&r, f, first, (size_t)total * 2);
    if (nr)
        rig_write(&r, o, others, nr * 2);
    uint32_t rec[WORKERS * RED_PARTIALS_V_WORDS], out[WORKERS];
    uint64_t w[WORKERS];
    for (unsigned k = 0, c0 = 0; k < WORKERS; c0 += n[k++]) {
        out[k] = rig_alloc(&r, (size_t)n[k] * (f16 ? 2 : 4));
        uint32_t *v = rec + k * RED_PARTIALS_V_WORDS;
        v[RED_PARTIALS_V_FIRST] = f + c0 * 2;
        v[RED_PARTIALS_V_REST] = o + c0 * 2;
        v[RED_PARTIALS_V_OUT] = out[k];
        v[RED_PARTIALS_V_ROWS] = rows;
        v[RED_PARTIALS_V_COLS] = n[k];
        v[RED_PARTIALS_V_STEP] = step * 2;
        v[RED_PARTIALS_V_OUT_F16] = f16;
        w[k] = partials_w(rows, n[k], o, step * 2, f16);
    }
    cr.run = rig_run(&r, rec, RED_PARTIALS_V_WORDS);
    cr.hand = hand_cycles(w);
    if (!cr.run.ran)
        fprintf(stderr, "\nreduce partials did not end: %s\n", cr.run.fault);
    double worst = 0;
    for (unsigned k = 0, c0 = 0; k < WORKERS && cr.run.ran; c0 += n[k++]) {
        size_t words = (size_t)n[k] * (f16 ? 2 : 4) / 4;
        uint32_t *got = calloc(words + 2, 4), *want = calloc(words + 2, 4);
        CU_ASSERT_FATAL(got && want);
        rig_read(&r, out[k], got, (words + 2) * 4);
        rowwise_model_reduce_partials(first + c0, others + c0, rows, n[k], step, f16 ? NULL : (float *)want,
                                      f16 ? (uint16_t *)want : NULL);
        if (!rows)
            for (size_t i = 0; i < words; i++)
                want[i] = SNAN_BITS;
        want[words] = want[words + 1] = SNAN_BITS;   /* nothing written past the output */
        for (size_t i = 0; i < words + 2; i++)
            if (got[i] != want[i] && cr.bit_mismatches++ < 4)
                fprintf(stderr, "\n  partials worker %u word %zu: codelet 0x%08x, model 0x%08x", k + 1, i, got[i],
                        want[i]);
        /* against the exact sum: R - 1 f32 roundings of terms up to sum|p|,
         * then for f16 out one rounding to f16 (half an ulp, 2^-25 in the
         * subnormal range) */
        for (unsigned c = 0; c < n[k] && rows; c++) {
            double ref = 0, mag = 0;
            for (unsigned q = 0; q < rows; q++) {
                double v = fp16_to_f32(q ? others[(size_t)(q - 1) * step + c0 + c] : first[c0 + c]);
                ref += v, mag += fabs(v);
            }
            double got_v = f16 ? fp16_to_f32((uint16_t)(got[c / 2] >> (16 * (c % 2)))) : float_of(got[c]);
            if (isinf(ref)) {
                if (!isnan(got_v) && cr.over++ < 4)
                    fprintf(stderr, "\n  partials col %u: an infinite partial gave %g, not NaN", c0 + c, got_v);
                continue;
            }
            double bound = (rows - 1) * U * mag + (f16 ? 0x1p-11 * fabs(ref) * 1.01 + 0x1p-25 : 0);
            double e = fabs(got_v - ref);
            if (!(e <= bound) && cr.over++ < 4)
                fprintf(stderr, "\n  partials col %u: got %.9g, reference %.9g, bound %.3g", c0 + c, got_v, ref, bound);
            if (bound > 0 && e / bound > worst)
                worst = e / bound;
        }
        free(got); free(want);
    }
    cr.ratio = worst;
    free(first); free(others);
    rig_close(&r);
    return cr;
}

/* Paced (rows in region 1, step below 4 KiB) and unpaced (rows in region
 * 0, or 4 KiB apart or more), f16 and f32 out, one row to many, workers
 * with no column; cols not a multiple of 8 trap. */
static void test_reduce_partials(void)
{
    static const unsigned n[WORKERS] = {16, 8, 0, 40, 24, 8};
    static const unsigned rows[] = {1, 2, 4, 7};
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
        for (int f16 = 0; f16 <= 1; f16++) {
            case_result cr = partials_case(rows[i], n, 104, 0, f16, false, 300u + (unsigned)i);
            check_case(&cr);
            cr = partials_case(rows[i], n, 100, 0x70000u, f16, false, 310u + (unsigned)i);   /* region 0 */
            check_case(&cr);
            cr = partials_case(rows[i], n, 2048, 0, f16, false, 320u + (unsigned)i);         /* 4 KiB apart */
            check_case(&cr);
        }
    case_result cr = partials_case(0, n, 104, 0, true, false, 330u);
    check_case(&cr);
    /* an f16 infinity: NaN, and the invalid flag raised (not enabled) */
    cr = partials_case(3, n, 104, 0, true, true, 331u);
    CU_ASSERT_TRUE(cr.run.ran);
    CU_ASSERT_EQUAL(cr.bit_mismatches + cr.over, 0);
    CU_ASSERT_EQUAL(cr.run.cycles, cr.hand);
    CU_ASSERT_NOT_EQUAL(cr.run.fp_sts & 1u, 0);
    static const unsigned odd[WORKERS] = {12, 0, 0, 0, 0, 0};
    cr = partials_case(3, odd, 104, 0, true, false, 332u);
    CU_ASSERT_EQUAL(cr.run.stop, TILE_STOP_FAULT);
    CU_ASSERT_PTR_NOT_NULL(strstr(cr.run.fault, "trap"));
}

/* Hand-worked: sum, 3 rows, 12 columns on worker 1 (one block), 5 on
 * worker 2 (start 12: 8-byte aligned, fewer than 12: one at a time), rows
 * 0 for the others.  Worker 1: 18 + 2 + 1 + 1 + (19 + 14) + 1 = 56;
 * worker 2: 20 + 3 + 1 + 5 (7 + 6) = 89; workers 3..6: 3.  Worker 2 first
 * issues at cycle 7: 7 + 6 * 89 + 3 = 544. */
static void test_reduce_cols_hand(void)
{
    static const unsigned n[WORKERS] = {12, 5, 0, 0, 0, 0};
    CU_ASSERT_EQUAL(cols_w(3, 12, REDUCE_OP_SUM, false, true), 56);
    CU_ASSERT_EQUAL(cols_w(3, 5, REDUCE_OP_SUM, false, true), 89);
    case_result cr = cols_case(3, n, 18, 0, REDUCE_OP_SUM, false, false, 5u);
    check_case(&cr);
    CU_ASSERT_EQUAL(cr.run.cycles, 544);
    /* rows = 0 writes nothing (3 issues); cols = 0 (4 issues) */
    static const unsigned some[WORKERS] = {4, 3, 2, 1, 12, 0};
    cr = cols_case(0, some, 22, 0, REDUCE_OP_MEAN, false, false, 6u);
    check_case(&cr);
    CU_ASSERT_EQUAL(cr.run.cycles, hand_cycles((uint64_t[WORKERS]){3, 3, 3, 3, 3, 3}));
    /* the model on hand-worked values: column sums in row order from x[0] */
    const float x[6] = {1.0f, -2.0f, 3.0f, 4.0f, 0.5f, 16777216.0f};   /* 3 rows of 2 */
    float o[2];
    uint16_t h[4];
    rowwise_model_reduce_cols(x, o, NULL, false, 3, 2, 2, REDUCE_OP_SUM, 0);
    CU_ASSERT_EQUAL(bits_of(o[0]), bits_of(4.5f));
    CU_ASSERT_EQUAL(bits_of(o[1]), bits_of(16777218.0f));   /* -2 + 4 = 2, + 2^24: exact */
    rowwise_model_reduce_cols(x, o, NULL, false, 3, 2, 2, REDUCE_OP_ABS_SUM, 0);
    CU_ASSERT_EQUAL(bits_of(o[0]), bits_of(4.5f));
    rowwise_model_reduce_cols(x, o, NULL, false, 3, 2, 2, REDUCE_OP_PROD, 0);
    CU_ASSERT_EQUAL(bits_of(o[0]), bits_of(1.5f));
    CU_ASSERT_EQUAL(bits_of(o[1]), bits_of(-134217728.0f));
    rowwise_model_reduce_cols(x, NULL, h, true, 3, 1, 2, REDUCE_OP_MIN, 0);
    CU_ASSERT_EQUAL(h[0], 0x3800);                           /* 0.5 in f16 */
    CU_ASSERT_EQUAL(h[1], 0x3800);                           /* the padding copy */
}

/* Cycles an element: the matmul partial-sum shape (8 partials of 6 x 192
 * f32, 8-byte aligned: the block path) and the same 4-byte aligned (one
 * column at a time). */
static void test_reduce_cols_large(void)
{
    static const unsigned n[WORKERS] = {192, 192, 192, 192, 192, 192};
    case_result fast = cols_case(8, n, 1152, 0, REDUCE_OP_SUM, false, false, 21u);
    check_case(&fast);
    case_result slow = cols_case(8, n, 1153, 1, REDUCE_OP_SUM, false, false, 22u);
    check_case(&slow);
    case_result f16 = cols_case(8, n, 1152, 0, REDUCE_OP_MEAN, true, false, 23u);
    check_case(&f16);
    double e = 8 * 1152.0;
    printf("\n    reduce cols sum 8x1152 (block path): %llu cycles, %.4f per element\n",
           (unsigned long long)fast.run.cycles, fast.run.cycles / e);
    printf("    reduce cols sum 8x1152 (4-byte aligned): %llu cycles, %.4f per element\n",
           (unsigned long long)slow.run.cycles, slow.run.cycles / e);
    printf("    reduce cols mean, f16 out, 8x1152: %llu cycles, %.4f per element\n",
           (unsigned long long)f16.run.cycles, f16.run.cycles / e);
    CU_ASSERT(fast.run.cycles / e < 0.75);
}

/* ---- measurements ---------------------------------------------------------------- */

/* BERT-Base width: 6 x 16 rows of 768 (6 x 64 rows, 1.2 MB, would not fit
 * in one tile's 624 KiB; per element the cost is the same). */
#define LARGE_ROWS 96u
static void test_large(void)
{
    case_result s = softmax_case(LARGE_ROWS, 768, 768, true, true, 11u, 0);
    check_case(&s);
    case_result l = layernorm_case(LARGE_ROWS, 768, 768, true, 1.0, 1e-12f, 12u);
    check_case(&l);
    case_result rs = reduce_case(LARGE_ROWS, 768, 768, REDUCE_OP_SUM, false, 13u, NULL);
    check_case(&rs);
    case_result rm = reduce_case(LARGE_ROWS, 768, 768, REDUCE_OP_MAX, false, 14u, NULL);
    check_case(&rm);
    double n = LARGE_ROWS * 768.0;
    printf("\n    softmax %ux768: %llu cycles, %.4f per element (worst error / tolerance %.3f)\n",
           LARGE_ROWS, (unsigned long long)s.run.cycles, s.run.cycles / n, s.ratio);
    printf("    layernorm %ux768: %llu cycles, %.4f per element (worst error / tolerance %.3f)\n",
           LARGE_ROWS, (unsigned long long)l.run.cycles, l.run.cycles / n, l.ratio);
    printf("    reduce sum %ux768: %llu cycles, %.4f per element\n", LARGE_ROWS, (unsigned long long)rs.run.cycles,
           rs.run.cycles / n);
    printf("    reduce max %ux768: %llu cycles, %.4f per element\n", LARGE_ROWS, (unsigned long long)rm.run.cycles,
           rm.run.cycles / n);
    /* Six workers issue one bundle a tile cycle between them, so the row
     * formulas' worker cycles per element are tile cycles per element:
     * softmax 11 P / 2P = 5.5 (f32exp: 3 of every 5.5), layer norm 3.5,
     * reduce 0.5, plus the per-row and per-worker overheads. */
    CU_ASSERT(s.run.cycles / n >= 5.5 && s.run.cycles / n < 5.6);
    CU_ASSERT(l.run.cycles / n >= 3.5 && l.run.cycles / n < 3.6);
    CU_ASSERT(rs.run.cycles / n >= 0.5 && rs.run.cycles / n < 0.52);

    int32_t *idx = malloc(LARGE_ROWS * 4);
    for (unsigned i = 0; i < LARGE_ROWS; i++)
        idx[i] = (int32_t)((i * 37) % 40);
    gather_result g = gather_case(LARGE_ROWS, 3072, 40, idx, 15u);
    CU_ASSERT_TRUE(g.run.ran);
    CU_ASSERT_EQUAL(g.mismatched_bytes, 0);
    CU_ASSERT_EQUAL(g.run.cycles, g.hand);
    printf("    gather %u rows of 3072 B: %llu cycles, %.4f per word\n", LARGE_ROWS, (unsigned long long)g.run.cycles,
           g.run.cycles / (LARGE_ROWS * 768.0));
    free(idx);
}

/* ---- the model on hand-worked values ----------------------------------------------- */

static void test_model(void)
{
    /* Sum of 1, 2, 3: lane 0 = 1 + 3, lane 1 = 2: 6.  Max, sum of squares,
     * mean with scale 0.5: 3, 14, 3. */
    const float x[3] = {1.0f, 2.0f, 3.0f};
    float out;
    rowwise_model_reduce(x, &out, 1, 3, 3, REDUCE_OP_SUM, 0);
    CU_ASSERT_EQUAL(bits_of(out), bits_of(6.0f));
    rowwise_model_reduce(x, &out, 1, 3, 3, REDUCE_OP_MAX, 0);
    CU_ASSERT_EQUAL(bits_of(out), bits_of(3.0f));
    rowwise_model_reduce(x, &out, 1, 3, 3, REDUCE_OP_SUMSQ, 0);
    CU_ASSERT_EQUAL(bits_of(out), bits_of(14.0f));
    rowwise_model_reduce(x, &out, 1, 3, 3, REDUCE_OP_MEAN, 0.5f);
    CU_ASSERT_EQUAL(bits_of(out), bits_of(3.0f));
    /* Lanes, not left to right: 2^24 + 1 + 1 - 2^24 ... lane 0 = 2^24 + 1
     * = 2^24 (tie to even), lane 1 = 1 - 2^24 exactly: sum 1 (left to
     * right in f32 would give 0). */
    const float y[4] = {16777216.0f, 1.0f, 1.0f, -16777216.0f};
    rowwise_model_reduce(y, &out, 1, 4, 4, REDUCE_OP_SUM, 0);
    CU_ASSERT_EQUAL(bits_of(out), bits_of(1.0f));
    /* Softmax of two equal values: exp(0) = 1 each, 1/2 exactly. */
    const float z[2] = {1e30f, 1e30f};
    float s[2];
    rowwise_model_softmax(z, s, 1, 2, 2);
    CU_ASSERT_EQUAL(bits_of(s[0]), bits_of(0.5f));
    CU_ASSERT_EQUAL(bits_of(s[1]), bits_of(0.5f));
    /* Layer norm of (1, 3), gamma 1, beta 0, eps 0: mean 2, var 1: (-1, 1). */
    const float l[2] = {1.0f, 3.0f}, one[2] = {1.0f, 1.0f}, zero[2] = {0.0f, 0.0f};
    float o[2];
    rowwise_model_layernorm(l, o, one, zero, 1, 2, 2, 0.0f);
    CU_ASSERT_EQUAL(bits_of(o[0]), bits_of(-1.0f));
    CU_ASSERT_EQUAL(bits_of(o[1]), bits_of(1.0f));
}

void test_register(void)
{
    ADD_SUITE("codelets_rowwise",
              {"model on hand-worked values", test_model},
              {"reduce: sum, max, sumsq, mean vs model and reference", test_reduce},
              {"reduce: hand-counted cycles", test_hand_cycles},
              {"softmax vs model and reference, hand cycles", test_softmax},
              {"softmax in place, region 0", test_softmax_in_place},
              {"softmax large magnitudes", test_softmax_large},
              {"layer norm vs model and reference", test_layernorm},
              {"layer norm in place", test_layernorm_in_place},
              {"layer norm: mean and rstd outputs", test_layernorm_stats},
              {"zero-row records", test_zero_rows},
              {"reduce cols: every op, f16, alignments", test_reduce_cols},
              {"reduce cols: hand cycles, zero rows, model", test_reduce_cols_hand},
              {"reduce cols: cycles per element", test_reduce_cols_large},
              {"reduce cols: one record for the six workers", test_reduce_cols_split},
              {"reduce partials: paced, unpaced, f16 and f32 out", test_reduce_partials},
              {"gather, negative indices", test_gather},
              {"gather: out-of-range index traps", test_gather_bad_index},
              {"transpose", test_transpose},
              {"large: cycles per element", test_large});
}
