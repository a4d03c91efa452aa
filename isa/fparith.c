/*
 * fparith.c — single-precision arithmetic of the tile with its special
 * cases and exception flags, following the ISA2 §4.1.3 pseudo-code
 * (TFPU_*).  See fparith.h for what is modelled and approximated.
 */
#include "fparith.h"

#include <float.h>
#include <math.h>
#include <string.h>

static uint32_t raw_bits(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }
static float raw_float(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }

float fp32_flush(float f)
{
    uint32_t b = raw_bits(f);
    if ((b & 0x7f800000u) == 0 && (b & 0x7fffffu) != 0)
        return raw_float(b & 0x80000000u);
    return f;
}

float fp32_from_bits(uint32_t bits) { return fp32_flush(raw_float(bits)); }
uint32_t fp32_to_bits(float f) { return raw_bits(fp32_flush(f)); }

bool fp32_is_snan(float f)
{
    uint32_t b = raw_bits(f);
    return (b & 0x7fffffffu) > 0x7f800000u && !(b & 0x400000u);
}

bool fp32_is_qnan(float f)
{
    uint32_t b = raw_bits(f);
    return (b & 0x7fffffffu) > 0x7f800000u && (b & 0x400000u);
}

float fp32_qnan(void) { return raw_float(FP32_TILE_QNAN_BITS); }

/* IEEE 754-2008 §7.2: the sum of opposite infinities is invalid. */
static bool inv_add(float a, float b) { return isinf(a) && isinf(b) && signbit(a) != signbit(b); }
/* IEEE 754-2008 §7.2: infinity times zero is invalid. */
static bool inv_mul(float a, float b)
{
    return (isinf(a) && b == 0.0f) || (isinf(b) && a == 0.0f);
}

bool fp32_add_special(float a, float b, unsigned *exc, float *result)
{
    if (fp32_is_snan(a) || fp32_is_snan(b)) {
        *exc |= FP_EXC_INV;
        *result = fp32_qnan();
    } else if (isnan(a) || isnan(b)) {
        *result = fp32_qnan();
    } else if (inv_add(a, b)) {
        *exc |= FP_EXC_INV;
        *result = fp32_qnan();
    } else if (isinf(a)) {
        *result = a;
    } else if (isinf(b)) {
        *result = b;
    } else {
        return false;
    }
    return true;
}

bool fp32_mul_special(float a, float b, unsigned *exc, float *result)
{
    if (fp32_is_snan(a) || fp32_is_snan(b)) {
        *exc |= FP_EXC_INV;
        *result = fp32_qnan();
    } else if (isnan(a) || isnan(b)) {
        *result = fp32_qnan();
    } else if (inv_mul(a, b)) {
        *exc |= FP_EXC_INV;
        *result = fp32_qnan();
    } else if (isinf(a)) {
        *result = signbit(b) ? -a : a;
    } else if (isinf(b)) {
        *result = signbit(a) ? -b : b;
    } else {
        return false;
    }
    return true;
}

bool fp32_div_special(float a, float b, unsigned *exc, float *result)
{
    bool neg = signbit(a) != signbit(b);
    if (fp32_is_snan(a) || fp32_is_snan(b)) {
        *exc |= FP_EXC_INV;
        *result = fp32_qnan();
    } else if (isnan(a) || isnan(b)) {
        *result = fp32_qnan();
    } else if (isinf(a)) {
        if (isinf(b)) {
            *exc |= FP_EXC_INV;
            *result = fp32_qnan();
        } else {
            *result = neg ? -INFINITY : INFINITY;
        }
    } else if (isinf(b)) {
        *result = neg ? -0.0f : 0.0f;
    } else if (b == 0.0f) {
        if (a == 0.0f) {
            *exc |= FP_EXC_INV;
            *result = fp32_qnan();
        } else {
            *exc |= FP_EXC_DIV0;
            *result = neg ? -INFINITY : INFINITY;
        }
    } else {
        return false;
    }
    return true;
}

bool fp32_mac_special(float x, float y, float z, unsigned *exc, float *result)
{
    bool prod_neg = signbit(x) != signbit(y);
    if (fp32_is_snan(x) || fp32_is_snan(y)) {
        *exc |= FP_EXC_INV;
        *result = fp32_qnan();
    } else if (isnan(x) || isnan(y)) {
        *result = fp32_qnan();
    } else if (inv_mul(x, y)) {
        /* Invalid even when the accumulator holds a NaN. */
        *exc |= FP_EXC_INV;
        *result = fp32_qnan();
    } else if (isnan(z)) {
        *result = fp32_qnan();
    } else if ((isinf(x) || isinf(y)) && isinf(z) && prod_neg != (bool)signbit(z)) {
        /* ISA2 TFPU_DoMacPreExecute: no flag for inf - inf here. */
        *result = fp32_qnan();
    } else {
        return false;
    }
    return true;
}

bool fp32_axpby_special(float a, float x, float b, float y, unsigned *exc, float *result)
{
    if (fp32_is_snan(a) || fp32_is_snan(x) || fp32_is_snan(b) || fp32_is_snan(y)) {
        *exc |= FP_EXC_INV;
        *result = fp32_qnan();
    } else if (inv_mul(a, x) || inv_mul(b, y)) {
        *exc |= FP_EXC_INV;
        *result = fp32_qnan();
    } else if (isnan(a) || isnan(x) || isnan(b) || isnan(y)) {
        *result = fp32_qnan();
    } else if ((isinf(a) || isinf(x)) && (isinf(b) || isinf(y))
               && (signbit(a) != signbit(x)) != (signbit(b) != signbit(y))) {
        /* Opposite infinities added: ISA2 raises no flag here. */
        *result = fp32_qnan();
    } else {
        return false;
    }
    return true;
}

bool fp32_sqrt_special(float a, unsigned *exc, float *result)
{
    if (fp32_is_snan(a)) {
        *exc |= FP_EXC_INV;
        *result = fp32_qnan();
    } else if (isnan(a)) {
        *result = fp32_qnan();
    } else if (a == 0.0f) {
        *result = a;                        /* sqrt(-0) = -0 */
    } else if (signbit(a)) {
        *exc |= FP_EXC_INV;
        *result = fp32_qnan();
    } else if (isinf(a)) {
        *result = a;
    } else {
        return false;
    }
    return true;
}

bool fp32_recip_special(float a, unsigned *exc, float *result)
{
    if (fp32_is_snan(a)) {
        *exc |= FP_EXC_INV;
        *result = fp32_qnan();
    } else if (isnan(a)) {
        *result = fp32_qnan();
    } else if (a == 0.0f) {
        *exc |= FP_EXC_DIV0;
        *result = copysignf(INFINITY, a);
    } else if (isinf(a)) {
        *result = copysignf(0.0f, a);
    } else {
        return false;
    }
    return true;
}

bool fp32_rsqrt_special(float a, unsigned *exc, float *result)
{
    if (fp32_is_snan(a)) {
        *exc |= FP_EXC_INV;
        *result = fp32_qnan();
    } else if (isnan(a)) {
        *result = fp32_qnan();
    } else if (a == 0.0f) {
        *exc |= FP_EXC_DIV0;
        *result = copysignf(INFINITY, a);
    } else if (a < 0.0f) {
        *exc |= FP_EXC_INV;
        *result = fp32_qnan();
    } else if (isinf(a)) {
        *result = 0.0f;
    } else {
        return false;
    }
    return true;
}

bool fp32_exp_special(float a, unsigned *exc, float *result)
{
    if (fp32_is_snan(a)) {
        *exc |= FP_EXC_INV;
        *result = fp32_qnan();
    } else if (isnan(a)) {
        *result = fp32_qnan();
    } else if (isinf(a)) {
        *result = signbit(a) ? 0.0f : a;
    } else {
        return false;
    }
    return true;
}

bool fp32_log_special(float a, unsigned *exc, float *result)
{
    if (fp32_is_snan(a)) {
        *exc |= FP_EXC_INV;
        *result = fp32_qnan();
    } else if (isnan(a)) {
        *result = fp32_qnan();
    } else if (a == 0.0f) {
        *exc |= FP_EXC_DIV0;
        *result = -INFINITY;
    } else if (a < 0.0f) {
        *exc |= FP_EXC_INV;
        *result = fp32_qnan();
    } else if (isinf(a)) {
        *result = INFINITY;
    } else {
        return false;
    }
    return true;
}

bool fp32_tanh_special(float a, unsigned *exc, float *result)
{
    if (fp32_is_snan(a)) {
        *exc |= FP_EXC_INV;
        *result = fp32_qnan();
    } else if (isnan(a)) {
        *result = fp32_qnan();
    } else if (a == 0.0f) {
        *result = a;
    } else {
        return false;
    }
    return true;
}

bool fp32_sigmoid_special(float a, unsigned *exc, float *result)
{
    if (fp32_is_snan(a)) {
        *exc |= FP_EXC_INV;
        *result = fp32_qnan();
    } else if (isnan(a)) {
        *result = fp32_qnan();
    } else if (isinf(a)) {
        *result = signbit(a) ? 0.0f : 1.0f;
    } else if (fabsf(a) < 0x1p-24f) {       /* includes ±0: an (inexact) 0.5 */
        *result = 0.5f;
    } else if (a < -104.0f) {               /* ISA2: an inexact zero below -104 */
        *result = 0.0f;
    } else if (a >= 18.0f) {                /* ... and an inexact one from 18 */
        *result = 1.0f;
    } else {
        return false;
    }
    return true;
}

float fp32_add(float a, float b)
{
    float sum;
    if (fp32_add_finite(a, b, &sum))
        return sum;
    if (isnan(a) || isnan(b))
        return fp32_qnan();
    a = fp32_flush(a);
    b = fp32_flush(b);
    if (inv_add(a, b))
        return fp32_qnan();
    if (isinf(a))
        return a;
    if (isinf(b))
        return b;
    return fp32_flush((float)((double)a + (double)b));
}

float fp32_mul(float a, float b)
{
    if (isnan(a) || isnan(b))
        return fp32_qnan();
    a = fp32_flush(a);
    b = fp32_flush(b);
    if (inv_mul(a, b))
        return fp32_qnan();
    if (isinf(a))
        return signbit(b) ? -a : a;
    if (isinf(b))
        return signbit(a) ? -b : b;
    return (float)((double)a * (double)b);  /* exact in double, one rounding */
}

float fp32_mac(float x, float y, float z)
{
    float special;
    unsigned ignored = 0;
    if (fp32_mac_special(x, y, z, &ignored, &special))
        return special;
    /* Not fused: the product is rounded to the accumulator format first
     * (ISA2 §2.9.9.1). */
    return fp32_add(fp32_mul(x, y), z);
}

float fp32_min(float a, float b)
{
    if (fp32_is_snan(a) || fp32_is_snan(b) || (isnan(a) && isnan(b)))
        return fp32_qnan();
    if (isnan(b))
        return a;
    if (isnan(a))
        return b;
    if (a == b)                             /* also -0 against +0 */
        return signbit(b) ? b : a;
    return a < b ? a : b;
}

float fp32_max(float a, float b)
{
    if (fp32_is_snan(a) || fp32_is_snan(b) || (isnan(a) && isnan(b)))
        return fp32_qnan();
    if (isnan(b))
        return a;
    if (isnan(a))
        return b;
    if (a == b)
        return signbit(b) ? a : b;
    return a > b ? a : b;
}

enum fp_relation fp32_relation(float a, float b)
{
    if (isnan(a) || isnan(b))
        return FP_REL_UN;
    if (a == b)                             /* ±0 equal, equal infinities equal */
        return FP_REL_EQ;
    return a < b ? FP_REL_LT : FP_REL_GT;
}

float fp32_round_integral(float a, enum fp_round_mode mode)
{
    if (isnan(a))
        return fp32_qnan();
    if (isinf(a) || a > 0x1p24f)
        return a;
    switch (mode) {
    case FP_RND_POSINF: return ceilf(a);
    case FP_RND_NEGINF: return floorf(a);
    case FP_RND_ZERO:   return truncf(a);
    case FP_RND_AWAY:   return roundf(a);
    case FP_RND_EVEN:   break;
    }
    return nearbyintf(a);
}

float fp_round_f16_precision(double v)
{
    if (v == 0.0 || !isfinite(v))
        return (float)v;
    int e;
    frexp(fabs(v), &e);                     /* |v| = f * 2^e, f in [0.5, 1) */
    int lsb = e - 1 - 10;                   /* weight of the last kept bit */
    if (lsb < -24)
        lsb = -24;                          /* f16 subnormals: fixed 2^-24 step */
    double r = nearbyint(ldexp(v, -lsb));   /* exact scaling, ties to even */
    return (float)ldexp(r, lsb);
}

unsigned fp_overflow_check(double v, bool f16, bool nanoo)
{
    /* Most values: rounding is monotonic and the largest finite value is
     * representable, so nothing up to it can round above it. */
    if (fabs(v) <= (f16 ? 65504.0 : (double)FLT_MAX))
        return 0;
    if (isnan(v))
        return 0;
    bool over;
    if (isinf(v)) {
        over = true;
    } else {
        int bits = f16 ? 11 : 24;
        int e;
        double m = frexp(fabs(v), &e);
        double rounded = ldexp(nearbyint(ldexp(m, bits)), e - bits);
        over = rounded > (f16 ? 65504.0 : (double)FLT_MAX);
    }
    if (!over)
        return 0;
    return (f16 && nanoo) ? (FP_EXC_OFLO | FP_EXC_INV) : FP_EXC_OFLO;
}

unsigned fp_aacc_read_flags(float v, bool f16, bool nanoo)
{
    if (isinf(v))
        return f16 ? (FP_EXC_OFLO | FP_EXC_INV) : FP_EXC_OFLO;
    return fp_overflow_check(v, f16, nanoo);
}

const char *fp_exc_name(unsigned exc)
{
    if (exc & FP_EXC_INV)
        return "invalid operation";
    if (exc & FP_EXC_DIV0)
        return "divide by zero";
    if (exc & FP_EXC_OFLO)
        return "overflow";
    return "none";
}
