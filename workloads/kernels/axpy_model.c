/*
 * axpy_model.c — the bit-exact model of the f32 axpy codelet; see
 * axpy_model.h for the arithmetic it reproduces.
 */
#include "axpy_model.h"

#include <math.h>

#include "isa/fparith.h"

float axpy_model_element(float a, float x, float y)
{
    /* Register operands are read with denormals flushed. */
    a = fp32_flush(a);
    x = fp32_flush(x);
    y = fp32_flush(y);
    unsigned flags = 0;     /* $FP_STS: not modelled (nothing is enabled) */
    float r;
    if (!fp32_axpby_special(a, x, 1.0f, y, &flags, &r))
        r = fp32_add(fp32_mul(a, x), y);
    /* Into $AACC (flushed) and out to the destination register. */
    r = fp32_flush(r);
    return isnan(r) ? fp32_qnan() : r;
}

void axpy_model_f32(float a, const float *x, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = axpy_model_element(a, x[i], y[i]);
}
