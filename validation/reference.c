/*
 * reference.c — FP32 reference matmul (OpenBLAS), the rounding-error bound
 * of f16 dot products as the AMP computes them, and the error report.
 *
 * Derivation of ref_dot_bound()
 * -----------------------------
 * Notation: s = sum_i a_i b_i over k terms (exact), S = sum_i |a_i b_i|,
 * u32 = 2^-24 and u16 = 2^-11 (unit roundoffs of f32 and f16, round to
 * nearest), gamma_n(u) = n u / (1 - n u), eta16 = 2^-25 (half the spacing of
 * f16 subnormals: the absolute error of rounding a tiny value to f16).
 *
 * 1. The inputs are f16 and are given to the reference as their exact f32
 *    values, so the only errors are roundings inside the two computations.
 * 2. Products of two f16 values are exact in f32 (11 x 11 significant bits,
 *    exponents well inside the f32 range), and the AMP sums each group of
 *    t = terms_per_rounding (4) products exactly before rounding once to
 *    f32 (amp.h: isa_amp_f16_dot4).  The m = ceil(k / t) group results are
 *    then added one at a time to an f32 running sum that starts from the
 *    incoming partial sum.  A term therefore passes through at most m + 1
 *    f32 roundings: its group's, and the additions after it (a partial sum
 *    carried between blocks of 16 terms enters the next block's chain as
 *    its first operand, so it too sees one rounding per later addition).
 *    With every rounding written as a factor (1 + d), |d| <= u, the
 *    standard result for recursive summation (Higham, Accuracy and
 *    Stability of Numerical Algorithms, 2nd ed., Lemma 3.1 and eq. (4.4))
 *    gives |computed - s| <= gamma_{m+1}(u32) * S.
 * 3. With f16 partial sums (REF_ACCUM_F16) the running sum is rounded to
 *    f16 after every block of `block` terms: nb = ceil(k / block) roundings,
 *    of which the last is the output rounding (item 4).  The nb - 1 others
 *    each add a factor (1 + d16), |d16| <= u16, to every term already summed,
 *    plus eta16 where the value is an f16 subnormal.  Together with item 2:
 *        E_acc = ((1 + gamma_{m+1}(u32)) (1 + gamma_{nb-1}(u16)) - 1) S
 *                + (nb - 1) eta16.
 *    With f32 partial sums (REF_ACCUM_F32) the second factor is 1.
 *    With K split into parts summed on other tiles (k_split), a part's
 *    last block is rounded to f16 too (one more f16 rounding a term, nb in
 *    all) and the parts are added in f32 (at most nb more f32 roundings:
 *    m + 1 + nb).
 * 4. An f16 result is one more rounding of the f32 value c~ the AMP holds:
 *        E_out = u16 |c~| + eta16,  |c~| <= |ref| + E_acc + E_ref.
 *    This is taken relative to the result, not to S, so it stays tight when
 *    the sum cancels.
 * 5. Stochastic rounding leaves an error below one ulp instead of half an
 *    ulp: u16 and eta16 double for every f16 rounding.
 * 6. The reference itself (cblas_sgemm in f32, in whatever order and with
 *    or without FMA) is within E_ref = gamma_k(u32) * S of s.
 * 7. The AMP flushes f32 denormal results to zero: at most 2^-126 per f32
 *    operation, (m + 1) 2^-126 in all (negligible, stated for completeness).
 * The bound is E_acc + E_out + E_ref + (m + 1) 2^-126.  It is a worst case:
 * typical errors grow like sqrt(k) rather than k, so the measured max
 * err/tol ratio is usually well below 1.
 */
#include "reference.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>

void ref_matmul_f32(const float *a, const float *b, float *c, size_t m, size_t k, size_t n)
{
    if (m == 0 || n == 0)
        return;
    if (k == 0) {
        for (size_t i = 0; i < m * n; i++)
            c[i] = 0.0f;
        return;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0f, a, (int)k, b, (int)n,
                0.0f, c, (int)n);
}

void ref_matmul_abs_f64(const float *a, const float *b, double *s, size_t m, size_t k, size_t n)
{
    if (m == 0 || n == 0)
        return;
    if (k == 0) {
        for (size_t i = 0; i < m * n; i++)
            s[i] = 0.0;
        return;
    }
    double *aa = malloc(m * k * sizeof *aa), *bb = malloc(k * n * sizeof *bb);
    if (!aa || !bb) {
        free(aa);
        free(bb);
        /* No memory for the bound: say so with an infinite bound rather
         * than a wrong small one. */
        for (size_t i = 0; i < m * n; i++)
            s[i] = INFINITY;
        return;
    }
    for (size_t i = 0; i < m * k; i++)
        aa[i] = fabs((double)a[i]);
    for (size_t i = 0; i < k * n; i++)
        bb[i] = fabs((double)b[i]);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0, aa, (int)k, bb, (int)n,
                0.0, s, (int)n);
    free(aa);
    free(bb);
}

static double gamma_n(double n, double u)
{
    double nu = n * u;
    return nu < 1.0 ? nu / (1.0 - nu) : INFINITY;
}

double ref_dot_bound(const ref_dot_policy *p, double sum_abs, double ref_value)
{
    const double u32 = ldexp(1.0, -24), u16base = ldexp(1.0, -11), eta16base = ldexp(1.0, -25);
    double u16 = p->stochastic ? 2 * u16base : u16base;
    double eta16 = p->stochastic ? 2 * eta16base : eta16base;
    double t = p->terms_per_rounding ? p->terms_per_rounding : 1;
    double k = (double)p->k;
    double m = ceil(k / t);
    double f16_roundings = 0;
    if (p->accum == REF_ACCUM_F16) {
        double block = p->block ? p->block : 1;
        double nb = ceil(k / block);
        f16_roundings = nb > 1 ? nb - 1 : 0;
        if (p->k_split) {
            f16_roundings += 1;
            m += nb;
        }
        /* With f16 partials the last block's rounding is the output
         * rounding, whatever the caller says about the output. */
    }
    double e_acc = ((1 + gamma_n(m + 1, u32)) * (1 + gamma_n(f16_roundings, u16)) - 1) * sum_abs +
                   f16_roundings * eta16;
    double e_ref = gamma_n(k, u32) * sum_abs;
    double e_out = 0;
    if (p->f16_output || p->accum == REF_ACCUM_F16)
        e_out = u16 * (fabs(ref_value) + e_acc + e_ref) + eta16;
    double e_ftz = (m + 1) * ldexp(1.0, -126);
    return e_acc + e_out + e_ref + e_ftz;
}

ref_error_stats ref_compare(const float *got, const float *want, const double *bound, size_t n)
{
    ref_error_stats s = {0};
    s.n = n;
    s.bounded = bound != NULL;
    double diff2 = 0, want2 = 0;
    for (size_t i = 0; i < n; i++) {
        double g = got[i], w = want[i];
        if (!isfinite(g)) {
            s.nonfinite++;
            s.over_bound += bound != NULL;
            continue;
        }
        double e = fabs(g - w);
        if (e > s.max_abs) {
            s.max_abs = e;
            s.worst_abs_index = i;
        }
        if (w != 0 && e / fabs(w) > s.max_rel)
            s.max_rel = e / fabs(w);
        diff2 += e * e;
        want2 += w * w;
        if (bound) {
            double r = bound[i] > 0 ? e / bound[i] : (e > 0 ? INFINITY : 0);
            if (r > s.max_ratio)
                s.max_ratio = r;
            if (e > bound[i])
                s.over_bound++;
        }
    }
    s.rel_l2 = want2 > 0 ? sqrt(diff2 / want2) : (diff2 > 0 ? INFINITY : 0);
    return s;
}

void ref_print_report(FILE *f, const char *tensor, const ref_error_stats *s)
{
    fprintf(f, "%s: max abs %.3e  max rel %.3e  rel L2 %.3e", tensor, s->max_abs, s->max_rel, s->rel_l2);
    if (s->bounded)
        fprintf(f, "  max err/tol %.3f, %zu of %zu over tol", s->max_ratio, s->over_bound, s->n);
    if (s->nonfinite)
        fprintf(f, "  (%zu not finite)", s->nonfinite);
    fputc('\n', f);
}
