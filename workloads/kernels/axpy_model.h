/*
 * axpy_model.h — a bit-exact C model of the f32 axpy codelet
 * (workloads/kernels/axpy.S).
 *
 * The codelet computes y[i] = a * x[i] + y[i] for f32 a, x, y with
 * f32v2axpy, element by element; the model performs the same operations in
 * the same order with the tile's own primitives (isa/fparith.h), so its
 * result must equal the simulated codelet's bit for bit:
 *   - a, x[i] and y[i] are read with f32 denormals flushed to ±0 (ISA2
 *     §2.9.4.1: every f32 operand);
 *   - the special cases of the ISA2 pseudo-code (NaN operands, 0 × ∞,
 *     opposite infinities added) give the tile's fixed quiet NaN;
 *   - otherwise the product a · x is rounded to f32 first, then added to y
 *     with one more rounding (no fused multiply-add), to nearest even, a
 *     denormal result written as ±0;
 *   - the result passes through an accumulator ($AACC) on its way out: a
 *     NaN comes out as the fixed quiet NaN.
 * $FP_CTL is taken to be 0 (round to nearest even, no exceptions enabled),
 * as the codelet's workers get it from the supervisor's $FP_ICTL.
 */
#ifndef IPUSIM_WORKLOADS_AXPY_MODEL_H
#define IPUSIM_WORKLOADS_AXPY_MODEL_H

#include <stddef.h>

/* a * x + y as one lane of f32v2axpy computes it. */
float axpy_model_element(float a, float x, float y);

/* y[i] = axpy_model_element(a, x[i], y[i]) for i < n. */
void axpy_model_f32(float a, const float *x, float *y, size_t n);

#endif
