/*
 * reference.h — FP32 reference results, the tolerance policy they are held
 * to, and the error report.
 *
 * The simulator computes in the IPU's formats (f16 storage, f32 or f16
 * accumulation in the AMP).  A reference result is computed in f32 by
 * OpenBLAS on the f32 values of the same f16 inputs, so the only
 * differences are rounding errors; ref_dot_bound() bounds them for each
 * output element from the arithmetic (see the derivation in reference.c),
 * and ref_compare() reports max abs / max rel / relative L2 error per
 * tensor together with how the errors stand against that bound.
 *
 * What is not covered: inputs that are NaN or infinite, and results that
 * overflow the output format (the bound assumes finite arithmetic).
 */
#ifndef IPUSIM_VALIDATION_REFERENCE_H
#define IPUSIM_VALIDATION_REFERENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* C[m x n] = A[m x k] * B[k x n], all row-major f32 (cblas_sgemm). */
void ref_matmul_f32(const float *a, const float *b, float *c, size_t m, size_t k, size_t n);

/* S[m x n] = |A| * |B| in double (cblas_dgemm on the absolute values): the
 * sum of |a_i b_i| that every rounding-error bound of a dot product scales
 * with. */
void ref_matmul_abs_f64(const float *a, const float *b, double *s, size_t m, size_t k, size_t n);

/* How a dot product of f16 inputs was computed. */
enum ref_accum {
    REF_ACCUM_F32,   /* f32 accumulation throughout (AMP with f32 partials) */
    REF_ACCUM_F16,   /* f32 inside blocks of `block` terms, the running sum
                        rounded to f16 between blocks (AMP with f16 partials) */
};

typedef struct ref_dot_policy {
    size_t k;               /* terms in the dot product */
    enum ref_accum accum;
    unsigned block;         /* REF_ACCUM_F16: terms per f16 rounding (16 for the AMP) */
    unsigned terms_per_rounding; /* products summed exactly before each f32
                                    rounding (4: the AMP's dot4) */
    bool f16_output;        /* the result is stored as f16 */
    bool stochastic;        /* f16 roundings are stochastic: error below 1 ulp, not 1/2 */
    bool k_split;           /* REF_ACCUM_F16 with K split into parts on several tiles: each part's
                               sum rounded to f16, the parts added in f32 (at most one more f16
                               rounding and ceil(k / block) more f32 ones a term) */
} ref_dot_policy;

/* The largest |computed - reference| allowed for one element, given
 * sum_abs = sum |a_i b_i| and the reference value.  Includes the error of
 * the f32 reference itself. */
double ref_dot_bound(const ref_dot_policy *p, double sum_abs, double ref_value);

typedef struct ref_error_stats {
    size_t n;               /* elements compared */
    double max_abs;         /* max |got - want| */
    double max_rel;         /* max |got - want| / |want| over want != 0 */
    double rel_l2;          /* ||got - want||_2 / ||want||_2 (0 when both are 0) */
    size_t worst_abs_index; /* where max_abs is */
    double max_ratio;       /* max |got - want| / bound (0 without bounds) */
    size_t over_bound;      /* elements whose error exceeds their bound */
    size_t nonfinite;       /* elements where got is NaN or infinite */
    bool bounded;           /* a bound was given: max_ratio and over_bound are meaningful */
} ref_error_stats;

/* Compare n values; bound (may be NULL) is the per-element tolerance. */
ref_error_stats ref_compare(const float *got, const float *want, const double *bound, size_t n);

/* One line per tensor:
 *   "C (64x512 f16): max abs 1.2e-03  max rel 4.1e-04  rel L2 2.3e-04  max err/tol 0.31, 0 of 32768 over tol"
 * (the tolerance part only when the stats carry one). */
void ref_print_report(FILE *f, const char *tensor, const ref_error_stats *s);

#endif
