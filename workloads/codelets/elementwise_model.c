/*
 * elementwise_model.c — bit-exact models of the element-wise codelets; see
 * elementwise.h for what they reproduce.  Every helper below is one aux
 * instruction (one lane of it) as isa/exec_aux.c executes it with $FP_CTL
 * = 0: operands read with denormals flushed, the special cases of ISA2's
 * pseudo-code, otherwise the result in double rounded once to f32, and the
 * result written with denormals flushed (fp32_to_bits).
 */
#include "elementwise.h"

#include <math.h>
#include <string.h>

#include "isa/fparith.h"

/* The f32 constants of elementwise.S, by their bits (the same table). */
#define ERF_P      0x3ea7ba05u   /* 0.3275911 */
#define ERF_A5     0x3f87dc22u   /* 1.061405429 */
#define ERF_A4     0xbfba00e3u   /* -1.453152027 */
#define ERF_A3     0x3fb5f0e3u   /* 1.421413741 */
#define ERF_A2     0xbe91a98eu   /* -0.284496736 */
#define ERF_A1     0x3e827906u   /* 0.254829592 */
#define TINY       0x00800000u   /* 2^-126 */
#define NEG_TINY   0x80800000u   /* -2^-126 */
#define BIG        0x7e800000u   /* 2^126 */
#define ONE        0x3f800000u
#define HALF       0x3f000000u
#define INV_SQRT2  0x3f3504f3u   /* 1 / sqrt 2 */
#define GELU_K     0x3d372713u   /* 0.044715 */
#define GELU_S     0x3f4c422au   /* sqrt(2 / pi) */

static float k(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* A result as the register write leaves it. */
static float out(float r) { return fp32_flush(r); }

enum arith { ADD, SUB, MUL, DIV };

/* f32add/sub/mul/div (exec_aux.c f32_binop). */
static float arith(enum arith op, float a, float b)
{
    a = fp32_flush(a);
    b = fp32_flush(b);
    unsigned exc = 0;
    float r;
    if (op == SUB)
        b = -b;
    bool special = op == MUL ? fp32_mul_special(a, b, &exc, &r)
                 : op == DIV ? fp32_div_special(a, b, &exc, &r)
                 : fp32_add_special(a, b, &exc, &r);
    if (!special) {
        double e = op == MUL ? (double)a * b : op == DIV ? (double)a / b : (double)a + b;
        r = (float)e;
    }
    return out(r);
}

static float add(float a, float b) { return arith(ADD, a, b); }
static float sub(float a, float b) { return arith(SUB, a, b); }
static float mul(float a, float b) { return arith(MUL, a, b); }
static float maxf(float a, float b) { return out(fp32_max(fp32_flush(a), fp32_flush(b))); }
static float minf(float a, float b) { return out(fp32_min(fp32_flush(a), fp32_flush(b))); }

/* The sign-bit rows keep every bit but the sign (no flush). */
static float sign_op(float x, uint32_t and_mask, uint32_t xor_mask)
{
    uint32_t b;
    memcpy(&b, &x, 4);
    b = (b & and_mask) ^ xor_mask;
    memcpy(&x, &b, 4);
    return x;
}

typedef bool (*special_fn)(float, unsigned *, float *);

/* The one-operand f32 rows (exec_aux.c f32_unary). */
static float unary(special_fn special, double (*fn)(double), float x)
{
    x = fp32_flush(x);
    unsigned exc = 0;
    float r;
    if (!special(x, &exc, &r))
        r = (float)fn(x);
    return out(r);
}

static double d_sqrt(double x) { return sqrt(x); }
static double d_recip(double x) { return 1.0 / x; }
static double d_rsqrt(double x) { return 1.0 / sqrt(x); }
static double d_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

/* A&S 7.1.26 on |z| up to r = 1 - poly(t) e^(-z^2), in the codelet's order
 * (elementwise.S, EW_ERF_CORE). */
static float erf_magnitude(float az)
{
    float w = mul(az, az);
    float u = add(mul(az, k(ERF_P)), k(ONE));
    float t = unary(fp32_recip_special, d_recip, u);
    float q = mul(t, k(ERF_A5));
    q = add(q, k(ERF_A4));
    q = mul(q, t);
    q = add(q, k(ERF_A3));
    q = mul(q, t);
    q = add(q, k(ERF_A2));
    q = mul(q, t);
    q = add(q, k(ERF_A1));
    q = mul(q, t);
    float e = unary(fp32_exp_special, exp, sub(0.0f, w));
    return sub(k(ONE), mul(q, e));
}

/* f32int, f32cmpgt and f32fromi32 (exec_aux.c): floor as elementwise.h
 * builds it, one lane. */
static float floor_lane(float x)
{
    x = fp32_flush(x);
    float r = out(fp32_round_integral(x, FP_RND_EVEN));
    bool above = fp32_relation(r, x) == FP_REL_GT;
    float d = above ? -1.0f : 0.0f;
    return minf(add(r, d), x);
}

/* sign(x) as ±1, ±0 (elementwise.h). */
static float erf_sign(float x)
{
    return mul(maxf(minf(x, k(TINY)), k(NEG_TINY)), k(BIG));
}

float elementwise_model_unary(enum elementwise_unary_fn fn, float x, float a, float b)
{
    switch (fn) {
    case ELEMENTWISE_RELU:       return maxf(x, 0.0f);
    case ELEMENTWISE_NEG:        return sign_op(x, 0xffffffffu, 0x80000000u);
    case ELEMENTWISE_ABS:        return sign_op(x, 0x7fffffffu, 0);
    case ELEMENTWISE_EXP:        return unary(fp32_exp_special, exp, x);
    case ELEMENTWISE_LOG:        return unary(fp32_log_special, log, x);
    case ELEMENTWISE_SQRT:       return unary(fp32_sqrt_special, d_sqrt, x);
    case ELEMENTWISE_RSQRT:      return unary(fp32_rsqrt_special, d_rsqrt, x);
    case ELEMENTWISE_RECIPROCAL: return unary(fp32_recip_special, d_recip, x);
    case ELEMENTWISE_TANH:       return unary(fp32_tanh_special, tanh, x);
    case ELEMENTWISE_SIGMOID:    return unary(fp32_sigmoid_special, d_sigmoid, x);
    case ELEMENTWISE_ERF: {
        float ax = sign_op(x, 0x7fffffffu, 0);
        return mul(erf_magnitude(ax), erf_sign(x));
    }
    case ELEMENTWISE_GELU_ERF: {
        float z = mul(x, k(INV_SQRT2));
        float r = erf_magnitude(sign_op(z, 0x7fffffffu, 0));
        float e = add(mul(r, erf_sign(x)), k(ONE));
        return mul(mul(x, k(HALF)), e);
    }
    case ELEMENTWISE_GELU_TANH: {
        float v = mul(x, x);
        v = mul(v, k(GELU_K));
        v = add(v, k(ONE));
        v = mul(v, x);
        v = mul(v, k(GELU_S));
        v = unary(fp32_tanh_special, tanh, v);
        v = add(v, k(ONE));
        return mul(mul(x, k(HALF)), v);
    }
    case ELEMENTWISE_SCALE_SHIFT:
        return add(mul(x, a), b);
    case ELEMENTWISE_FLOOR:
        return floor_lane(x);
    case ELEMENTWISE_CEIL:
        return mul(floor_lane(mul(x, -1.0f)), -1.0f);
    default:
        return fp32_qnan();
    }
}

float elementwise_model_binary(enum elementwise_binary_op op, float a, float b)
{
    switch (op) {
    case ELEMENTWISE_ADD: return add(a, b);
    case ELEMENTWISE_SUB: return sub(a, b);
    case ELEMENTWISE_MUL: return mul(a, b);
    case ELEMENTWISE_MAX: return maxf(a, b);
    case ELEMENTWISE_MIN: return minf(a, b);
    case ELEMENTWISE_DIV: return arith(DIV, a, b);
    default:              return fp32_qnan();
    }
}

/* f32v2tof16 / f32tof16 with $FP_CTL = 0 (exec_aux.c f32_to_f16): NaN and
 * infinity are invalid and give the f16 quiet NaN; overflow saturates to
 * ±65504; f16 subnormals are kept. */
f16_t elementwise_model_f32_to_f16(float x)
{
    x = fp32_flush(x);
    return fp16_from_f32_tile(isnan(x) || isinf(x) ? fp32_qnan() : x, FP16_SAT_MAX);
}

f16_t elementwise_model_f32_to_f16_sr(float x, uint32_t random)
{
    x = fp32_flush(x);
    if (isnan(x) || isinf(x))
        return fp16_from_f32_tile(fp32_qnan(), FP16_SAT_MAX);
    return fp16_from_f32_tile(fp16_stochastic_round(x, random), FP16_SAT_MAX);
}

/* f16v2tof32: exact, NaNs become the tile's f32 quiet NaN. */
float elementwise_model_f16_to_f32(f16_t h)
{
    return out(fp16_is_nan(h) ? fp32_qnan() : fp16_to_f32(h));
}

float elementwise_model_scaled_add_f32(float x, float y, float scale)
{
    /* register operands are read with denormals flushed */
    x = fp32_flush(x);
    y = fp32_flush(y);
    scale = fp32_flush(scale);
    unsigned exc = 0;
    float r;
    if (!fp32_axpby_special(scale, y, 1.0f, x, &exc, &r))
        r = fp32_add(fp32_mul(scale, y), x);
    return out(isnan(r) ? fp32_qnan() : r);
}

f16_t elementwise_model_scaled_add_f16(f16_t x, float y, float scale, bool sr, uint32_t random)
{
    float r = elementwise_model_scaled_add_f32(elementwise_model_f16_to_f32(x), y, scale);
    return sr ? elementwise_model_f32_to_f16_sr(r, random) : elementwise_model_f32_to_f16(r);
}

void elementwise_model_binary_f32(enum elementwise_binary_op op, const float *in0, const float *in1, float *out_,
                                  uint32_t rows, uint32_t cols, uint32_t row_step_bytes,
                                  uint32_t in1_row_step_bytes, uint32_t in1_col_step_bytes)
{
    for (uint32_t r = 0; r < rows; r++)
        for (uint32_t c = 0; c < cols; c++) {
            size_t i = (size_t)r * (row_step_bytes / 4) + c;
            size_t j = ((size_t)r * in1_row_step_bytes + (size_t)c * in1_col_step_bytes) / 4;
            out_[i] = elementwise_model_binary(op, in0[i], in1[j]);
        }
}

void elementwise_model_unary_f32(enum elementwise_unary_fn fn, float a, float b, const float *in, float *out_,
                                 size_t n)
{
    for (size_t i = 0; i < n; i++)
        out_[i] = elementwise_model_unary(fn, in[i], a, b);
}
