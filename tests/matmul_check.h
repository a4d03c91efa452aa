/*
 * matmul_check.h — a simulated f32 product held to the f32 codelet's
 * error bound (workloads/codelets/matmul_f32.h) against a double product,
 * element by element.  Header-only; the tests that simulate matmuls share
 * it.
 */
#ifndef IPUSIM_TESTS_MATMUL_CHECK_H
#define IPUSIM_TESTS_MATMUL_CHECK_H

#include <math.h>
#include <stddef.h>

#include "workloads/codelets/matmul_f32.h"

/* The elements of c (m x n, row-major) further from a b (a: m x k, b:
 * k x n, row-major) than the codelet's bound for them. */
static inline size_t matmul_f32_out_of_bound(const float *a, const float *b, const float *c, size_t m, size_t k,
                                             size_t n)
{
    size_t bad = 0;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double want = 0, sum_abs = 0;
            for (size_t q = 0; q < k; q++) {
                want += (double)a[i * k + q] * b[q * n + j];
                sum_abs += fabs((double)a[i * k + q] * b[q * n + j]);
            }
            bad += fabs(c[i * n + j] - want) > matmul_f32_error_bound(k, sum_abs);
        }
    return bad;
}

#endif
