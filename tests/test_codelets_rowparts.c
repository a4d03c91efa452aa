/*
 * test_codelets_rowparts.c — vtx_layernorm_part{1,2,3}_f32 and
 * vtx_softmax_part{1,2,3}_f32 (workloads/codelets/rowwise.S): a row's
 * columns shared by the six workers of one simulated GC200 tile, the same
 * six records run as three compute sets.
 * Each part runs on a fresh tile holding what the previous parts left (the
 * inputs and the STATS rows), so that each part's cycles are counted
 * alone:
 *   (a) the result, mean and rstd equal rowwise_model_layernorm_parts bit
 *       for bit (rows padded with signalling NaNs: $FP_STS stays clear);
 *   (b) they are within the derived bound of a double-precision layer norm
 *       (the bound of vtx_layernorm_rows_f32's test: the sums are the same
 *       terms in another order);
 *   (c) each part's cycles equal the hand count: worker issues (rowwise.h)
 *       P = the worker's pairs, R rows:
 *         part 1: 10 + R (7 + P)
 *         part 2: 10 + R (15 + 2 P)           (f32div: 3 issue slots)
 *         part 3: 14 + R (36 + 4 P + S)       (f32div 3, f32oorx 4; S = 8
 *                 where the record names MEAN_OUT and INV_STD_OUT, 7 where
 *                 it names one of them: worker 1's here)
 *       and the run's end from them as tests/rowwise_rig.h counts it;
 *       softmax: 11 + R (8 + P), 11 + R (14 + 8 P) (f32exp: 3),
 *       11 + R (15 + 2 P) (f32oox: 3).
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rowwise_rig.h"
#include "workloads/codelets/rowwise.h"

static const char *const part_entry[3] = {"vtx_layernorm_part1_f32", "vtx_layernorm_part2_f32",
                                          "vtx_layernorm_part3_f32"};

static uint64_t part_w(int part, unsigned rows, unsigned pairs, unsigned stats)
{
    switch (part) {
    case 0: return 10 + (uint64_t)rows * (7 + pairs);
    case 1: return 10 + (uint64_t)rows * (15 + 2 * (uint64_t)pairs);
    default: return 14 + (uint64_t)rows * (36 + 4 * (uint64_t)pairs + (stats == 3 ? 8 : stats ? 7 : 0));
    }
}

/* The double-precision layer norm of one row and a bound on each output's
 * error: the mean's and the variance's sums each of cols rounded additions
 * (terms up to sum |x| and sum (x - mean)^2), the division, eps, the
 * reciprocal square root, then four rounded operations an element; doubled
 * for second-order terms. */
static void reference(const float *x, const float *g, const float *b, unsigned cols, float eps, double *ref,
                      double *bound)
{
    double s = 0, a = 0;
    for (unsigned c = 0; c < cols; c++)
        s += x[c], a += fabs(x[c]);
    double mean = s / cols, v = 0;
    for (unsigned c = 0; c < cols; c++)
        v += (x[c] - mean) * (x[c] - mean);
    double var = v / cols, rstd = 1.0 / sqrt(var + eps);
    double mean_err = 2.0 * (cols + 1) * U * a / cols;
    double var_rel = 2.0 * (cols + 2) * U + 4.0 * mean_err * sqrt(cols / (var + eps + 1e-300)) / sqrt(cols);
    double rstd_rel = 0.5 * var_rel + 3.0 * U;
    for (unsigned c = 0; c < cols; c++) {
        double d = x[c] - mean, y = d * rstd;
        ref[c] = y * g[c] + b[c];
        double y_err = (fabs(d) * rstd_rel + mean_err) * rstd + 2.0 * U * fabs(y);
        bound[c] = 2.0 * (y_err * fabs(g[c]) + 2.0 * U * (fabs(y * g[c]) + fabs(ref[c]))) + 1e-30;
    }
}

typedef struct parts_result {
    bool ran;
    uint64_t cycles[3], hand[3];
    size_t bit_mismatches, over;
    uint32_t fp_sts;
} parts_result;

/* Worker w's columns [bounds[w], bounds[w + 1]): the cols / 2 pairs split
 * as evenly as may be, as the lowering splits them. */
static void split_pairs(unsigned cols, size_t bounds[7])
{
    for (unsigned q = 0; q <= WORKERS; q++)
        bounds[q] = 2 * ((size_t)(cols / 2) * q / WORKERS);
}

/* One part run on the rig: whether it ended, its cycles, the hand count of w
 * and $FP_STS into pr (a part that did not end says so). */
static void run_part(rig *r, const uint32_t *rec, unsigned words, const uint64_t w[WORKERS], int part,
                           const char *what, parts_result *pr)
{
    run_result run = rig_run(r, rec, words);
    pr->ran = run.ran;
    pr->cycles[part] = run.cycles;
    pr->hand[part] = hand_cycles(w);
    pr->fp_sts |= run.fp_sts;
    if (!run.ran)
        fprintf(stderr, "\n%s part %d did not end: %s\n", what, part + 1, run.fault);
}

/* rows x cols (step floats apart; cols even) with worker w taking pairs
 * [lo_w, hi_w) of the cols / 2 split as evenly as may be, offset added to
 * every x; stats: 1 mean, 2 rstd stored (by worker 1's record). */
static parts_result parts_case(unsigned rows, unsigned cols, unsigned step, double offset, float eps,
                               unsigned stats, bool in_place, uint32_t seed)
{
    parts_result pr;
    memset(&pr, 0, sizeof pr);
    lcg_state = seed;
    size_t nf = (size_t)rows * step + 2;
    float *x = malloc(nf * 4), *got = malloc(nf * 4), *model = malloc(nf * 4);
    float *g = malloc((size_t)cols * 4), *b = malloc((size_t)cols * 4);
    float *mean_model = malloc((size_t)rows * 4), *rstd_model = malloc((size_t)rows * 4);
    float *mean_got = malloc((size_t)rows * 4), *rstd_got = malloc((size_t)rows * 4);
    uint8_t *stats_bytes = malloc((size_t)rows * ROWWISE_PART_STATS_BYTES);
    double *ref = malloc((size_t)cols * 8), *bound = malloc((size_t)cols * 8);
    CU_ASSERT_FATAL(x && got && model && g && b && mean_model && rstd_model && mean_got && rstd_got && stats_bytes &&
                    ref && bound);
    for (size_t i = 0; i < nf; i++)
        x[i] = model[i] = float_of(SNAN_BITS);
    for (unsigned r = 0; r < rows; r++)
        for (unsigned c = 0; c < cols; c++)
            x[(size_t)r * step + c] = (float)(offset + rnd_unit() * pow(2.0, (double)((r + c) % 9) - 4));
    for (unsigned c = 0; c < cols; c++) {
        g[c] = (float)(1.0 + 0.5 * rnd_unit());
        b[c] = (float)(0.25 * rnd_unit());
    }
    size_t bounds[7];
    split_pairs(cols, bounds);
    pr.ran = true;
    for (int part = 0; part < 3 && pr.ran; part++) {
        rig r;
        CU_ASSERT_TRUE_FATAL(rig_open(&r, part_entry[part], LAYERNORM_PART_V_WORDS));
        uint32_t in = rig_alloc(&r, nf * 4), out = in_place ? in : rig_alloc(&r, nf * 4);
        uint32_t ga = rig_alloc(&r, (size_t)cols * 4), be = rig_alloc(&r, (size_t)cols * 4);
        uint32_t st = rig_alloc(&r, (size_t)rows * ROWWISE_PART_STATS_BYTES);
        uint32_t mo = rig_alloc(&r, (size_t)rows * 4), ro = rig_alloc(&r, (size_t)rows * 4);
        rig_write(&r, in, x, nf * 4);
        rig_write(&r, ga, g, (size_t)cols * 4);
        rig_write(&r, be, b, (size_t)cols * 4);
        if (part)
            rig_write(&r, st, stats_bytes, (size_t)rows * ROWWISE_PART_STATS_BYTES);
        uint32_t rec[WORKERS * LAYERNORM_PART_V_WORDS];
        uint64_t w[WORKERS];
        for (unsigned k = 0; k < WORKERS; k++) {
            uint32_t *v = rec + k * LAYERNORM_PART_V_WORDS, c0 = (uint32_t)bounds[k] * 4;
            unsigned pairs = (unsigned)(bounds[k + 1] - bounds[k]) / 2;
            v[LAYERNORM_PART_V_IN] = in + c0;
            v[LAYERNORM_PART_V_OUT] = out + c0;
            v[LAYERNORM_PART_V_GAMMA] = ga + c0;
            v[LAYERNORM_PART_V_BETA] = be + c0;
            v[LAYERNORM_PART_V_ROWS] = rows;
            v[LAYERNORM_PART_V_PAIRS] = pairs;
            v[LAYERNORM_PART_V_STEP] = step * 4;
            v[LAYERNORM_PART_V_EPS] = bits_of(eps);
            v[LAYERNORM_PART_V_STATS] = st;
            v[LAYERNORM_PART_V_SLOT] = k;
            v[LAYERNORM_PART_V_COLS] = cols;
            v[LAYERNORM_PART_V_MEAN_OUT] = !k && stats & 1 ? mo : 0;
            v[LAYERNORM_PART_V_INV_STD_OUT] = !k && stats & 2 ? ro : 0;
            w[k] = part_w(part, rows, pairs, k ? 0 : stats);
        }
        run_part(&r, rec, LAYERNORM_PART_V_WORDS, w, part, "layer norm", &pr);
        rig_read(&r, st, stats_bytes, (size_t)rows * ROWWISE_PART_STATS_BYTES);
        if (part == 2 && pr.ran) {
            rig_read(&r, out, got, nf * 4);
            rig_read(&r, mo, mean_got, (size_t)rows * 4);
            rig_read(&r, ro, rstd_got, (size_t)rows * 4);
        }
        rig_close(&r);
    }
    if (pr.ran) {
        rowwise_model_layernorm_parts(x, model, g, b, rows, cols, step, bounds, eps, mean_model, rstd_model);
        for (unsigned r = 0; r < rows; r++) {
            for (unsigned c = 0; c < step; c++) {
                size_t i = (size_t)r * step + c;
                uint32_t want = c < cols ? bits_of(model[i]) : in_place ? SNAN_BITS : bits_of(got[i]);
                if (bits_of(got[i]) != want && pr.bit_mismatches++ < 4)
                    fprintf(stderr, "\n  row %u col %u: codelet %08x, model %08x", r, c, bits_of(got[i]), want);
            }
            pr.bit_mismatches += (stats & 1 ? bits_of(mean_got[r]) != bits_of(mean_model[r])
                                            : bits_of(mean_got[r]) != SNAN_BITS) +
                                 (stats & 2 ? bits_of(rstd_got[r]) != bits_of(rstd_model[r])
                                            : bits_of(rstd_got[r]) != SNAN_BITS);
            reference(x + (size_t)r * step, g, b, cols, eps, ref, bound);
            for (unsigned c = 0; c < cols; c++)
                if (!(fabs(got[(size_t)r * step + c] - ref[c]) <= bound[c]) && pr.over++ < 4)
                    fprintf(stderr, "\n  row %u col %u: %.9g, reference %.9g, bound %.3g", r, c,
                            got[(size_t)r * step + c], ref[c], bound[c]);
        }
    }
    free(x); free(got); free(model); free(g); free(b); free(mean_model); free(rstd_model);
    free(mean_got); free(rstd_got); free(stats_bytes); free(ref); free(bound);
    return pr;
}

static void check(const parts_result *pr)
{
    CU_ASSERT_TRUE(pr->ran);
    CU_ASSERT_EQUAL(pr->bit_mismatches, 0);
    CU_ASSERT_EQUAL(pr->over, 0);
    CU_ASSERT_EQUAL(pr->fp_sts, 0);
    for (int p = 0; p < 3; p++) {
        CU_ASSERT_EQUAL(pr->cycles[p], pr->hand[p]);
        if (pr->cycles[p] != pr->hand[p])
            fprintf(stderr, "\n  part %d: %llu cycles, hand count %llu", p + 1, (unsigned long long)pr->cycles[p],
                    (unsigned long long)pr->hand[p]);
    }
}

/* BERT's rows (768, one or two a tile), uneven shares (26 columns: pairs
 * 2, 2, 2, 2, 2, 3), an offset a one-pass E[x^2] - mean^2 would cancel,
 * padded rows, in place, the statistics' outputs. */
static void test_layernorm_parts(void)
{
    parts_result pr = parts_case(1, 768, 768, 0.0, 1e-12f, 0, false, 1u);
    check(&pr);
    pr = parts_case(2, 768, 772, 1000.0, 1e-12f, 3, false, 2u);
    check(&pr);
    pr = parts_case(3, 26, 28, 0.0, 1e-5f, 1, true, 3u);
    check(&pr);
    pr = parts_case(5, 96, 96, 0.5, 1e-5f, 2, false, 4u);
    check(&pr);
}

/* One row of 768 on one tile: the six workers take a sixth of the row
 * each, where the whole-row codelet leaves five of them idle. */
static void test_layernorm_parts_speed(void)
{
    parts_result pr = parts_case(1, 768, 768, 0.0, 1e-12f, 0, false, 5u);
    check(&pr);
    uint64_t total = pr.cycles[0] + pr.cycles[1] + pr.cycles[2];
    uint64_t whole = 6 * (19 + 26 + 7 * 384 + 1) + 10;   /* vtx_layernorm_rows_f32's hand count, one worker */
    printf("\n    one row of 768: %llu cycles in three parts, %llu on one worker", (unsigned long long)total,
           (unsigned long long)whole);
    CU_ASSERT(total * 4 < whole);
}

/* ---- softmax ------------------------------------------------------------------ */

static const char *const sm_entry[3] = {"vtx_softmax_part1_f32", "vtx_softmax_part2_f32", "vtx_softmax_part3_f32"};

static uint64_t sm_w(int part, unsigned rows, unsigned pairs)
{
    static const uint64_t fixed[3] = {8, 14, 15}, per_pair[3] = {1, 8, 2};
    return 11 + (uint64_t)rows * (fixed[part] + per_pair[part] * pairs);
}

/* Softmax of rows x cols (step floats apart) by the three parts: bits
 * against rowwise_model_softmax_parts, the result against a double softmax
 * (each output's error: the exponential's and the subtraction's roundings
 * (|x - m| + 2) u, the sum's R u relative, the reciprocal's and the
 * product's 2 u; doubled), hand cycles. */
static parts_result sm_case(unsigned rows, unsigned cols, unsigned step, double spread, bool in_place, uint32_t seed)
{
    parts_result pr;
    memset(&pr, 0, sizeof pr);
    lcg_state = seed;
    size_t nf = (size_t)rows * step + 2;
    float *x = malloc(nf * 4), *got = malloc(nf * 4), *model = malloc(nf * 4);
    uint8_t *stats_bytes = malloc((size_t)rows * ROWWISE_PART_STATS_BYTES);
    CU_ASSERT_FATAL(x && got && model && stats_bytes);
    for (size_t i = 0; i < nf; i++)
        x[i] = model[i] = float_of(SNAN_BITS);
    for (unsigned r = 0; r < rows; r++)
        for (unsigned c = 0; c < cols; c++)
            x[(size_t)r * step + c] = (float)(spread * rnd_unit());
    size_t bounds[7];
    split_pairs(cols, bounds);
    pr.ran = true;
    for (int part = 0; part < 3 && pr.ran; part++) {
        rig r;
        CU_ASSERT_TRUE_FATAL(rig_open(&r, sm_entry[part], SOFTMAX_PART_V_WORDS));
        uint32_t in = rig_alloc(&r, nf * 4), out = in_place ? in : rig_alloc(&r, nf * 4);
        uint32_t st = rig_alloc(&r, (size_t)rows * ROWWISE_PART_STATS_BYTES);
        /* part 1 reads x; parts 2 and 3 find what the previous part left */
        rig_write(&r, in, part && in_place ? got : x, nf * 4);
        if (part) {
            if (!in_place)
                rig_write(&r, out, got, nf * 4);
            rig_write(&r, st, stats_bytes, (size_t)rows * ROWWISE_PART_STATS_BYTES);
        }
        uint32_t rec[WORKERS * SOFTMAX_PART_V_WORDS];
        uint64_t w[WORKERS];
        for (unsigned k = 0; k < WORKERS; k++) {
            uint32_t *v = rec + k * SOFTMAX_PART_V_WORDS, c0 = (uint32_t)bounds[k] * 4;
            unsigned pairs = (unsigned)(bounds[k + 1] - bounds[k]) / 2;
            v[SOFTMAX_PART_V_IN] = in + c0;
            v[SOFTMAX_PART_V_OUT] = out + c0;
            v[SOFTMAX_PART_V_ROWS] = rows;
            v[SOFTMAX_PART_V_PAIRS] = pairs;
            v[SOFTMAX_PART_V_STEP] = step * 4;
            v[SOFTMAX_PART_V_STATS] = st;
            v[SOFTMAX_PART_V_SLOT] = k;
            w[k] = sm_w(part, rows, pairs);
        }
        run_part(&r, rec, SOFTMAX_PART_V_WORDS, w, part, "softmax", &pr);
        rig_read(&r, st, stats_bytes, (size_t)rows * ROWWISE_PART_STATS_BYTES);
        rig_read(&r, out, got, nf * 4);
        rig_close(&r);
    }
    if (pr.ran) {
        rowwise_model_softmax_parts(x, model, rows, cols, step, bounds);
        for (unsigned r = 0; r < rows; r++) {
            const float *xr = x + (size_t)r * step;
            double m = xr[0], s = 0;
            for (unsigned c = 0; c < cols; c++)
                m = xr[c] > m ? xr[c] : m;
            for (unsigned c = 0; c < cols; c++)
                s += exp(xr[c] - m);
            for (unsigned c = 0; c < cols; c++) {
                size_t i = (size_t)r * step + c;
                if (bits_of(got[i]) != bits_of(model[i]) && pr.bit_mismatches++ < 4)
                    fprintf(stderr, "\n  row %u col %u: codelet %08x, model %08x", r, c, bits_of(got[i]),
                            bits_of(model[i]));
                double ref = exp(xr[c] - m) / s;
                double bound = 2 * ref * ((fabs(xr[c] - m) + 2) * U + (cols + 2) * U + 2 * U) + 0x1p-125;
                if (!(fabs(got[i] - ref) <= bound) && pr.over++ < 4)
                    fprintf(stderr, "\n  row %u col %u: %.9g, reference %.9g", r, c, got[i], ref);
            }
        }
    }
    free(x); free(got); free(model); free(stats_bytes);
    return pr;
}

/* Attention's rows (128, one or two a tile), uneven shares, in place,
 * large spreads (exp underflows to zero far below the max). */
static void test_softmax_parts(void)
{
    parts_result pr = sm_case(1, 128, 128, 4.0, false, 11u);
    check(&pr);
    pr = sm_case(2, 128, 130, 40.0, true, 12u);
    check(&pr);
    pr = sm_case(3, 26, 28, 1.0, false, 13u);
    check(&pr);
    parts_result one = sm_case(1, 128, 128, 4.0, false, 14u);
    uint64_t total = one.cycles[0] + one.cycles[1] + one.cycles[2];
    uint64_t whole = 6 * (10 + 20 + 11 * 64) + 10;   /* vtx_softmax_rows_f32's hand count, one worker */
    printf("\n    one row of 128: %llu cycles in three parts, %llu on one worker", (unsigned long long)total,
           (unsigned long long)whole);
    CU_ASSERT(total * 3 < whole);
}

void test_register(void)
{
    ADD_SUITE("codelets_rowparts",
              {"layer norm parts vs model, reference and hand cycles", test_layernorm_parts},
              {"layer norm parts: one row on six workers", test_layernorm_parts_speed},
              {"softmax parts vs model, reference and hand cycles", test_softmax_parts});
}
