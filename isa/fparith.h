/*
 * fparith.h — the tile's single-precision arithmetic with its exception
 * flags: the building blocks the ISA2 pseudo-code of every floating-point
 * instruction is written in (ISA2 §4.1.3, TFPU_*), shared by the aux
 * pipeline executors and the AMP.
 *
 * What is modelled (ISA2 §2.9):
 *   - f32 denormals are zero: every f32 operand read from a register or an
 *     accumulator is flushed to ±0 (sign kept), and every f32 result that
 *     would be a denormal after rounding is written as ±0 (§2.9.4.1);
 *   - results are computed in double and rounded once to f32 (or to f16
 *     precision) with round-to-nearest-even, as TFPU_Add/TFPU_Mul do; for
 *     +, -, ×, ÷ and √ of f32 operands this equals a correctly rounded f32
 *     operation (53 >= 2·24 + 2 bits);
 *   - NaNs are regenerated, not propagated: a NaN result is the fixed quiet
 *     NaN FP32_TILE_QNAN_BITS (§2.9.13);
 *   - exception flags: invalid operation, divide-by-zero, overflow, with the
 *     bit layout of $FP_STS; no underflow or inexact (§2.9.7).
 *   - IPU2 implements only round-to-nearest-even and stochastic rounding
 *     (§2.9.5), so $FP_CTL.RND is always round-to-nearest-even here.
 *
 * What is approximated:
 *   - the bit pattern of the f32 fixed quiet NaN (TFPU_F32_GEN_QNAN) is not
 *     published; ISA2 says the f16 one (0x7ECE) is it rounded to nearest, so
 *     ipusim uses 0x7FD9C000, the f32 pattern with that f16 mantissa and
 *     zero low bits;
 *   - transcendental functions (exp, exp2, ln, log2, tanh, logistic,
 *     reciprocal square root) are computed with the C library in double and
 *     rounded once: within half an ulp of the true value at the result
 *     precision, where the hardware promises 1.5 to 16.5 ulps (ISA2 Table
 *     4.1), so a program sees values at least as accurate as the IPU's but
 *     not always the same bits.
 *   - the host's rounding mode must be the C default (to nearest): ipusim
 *     never changes it.
 */
#ifndef IPUSIM_ISA_FPARITH_H
#define IPUSIM_ISA_FPARITH_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* $FP_STS flags; the same bits of $FP_CTL make them malign and of $FP_CLR
 * clear them (ISA2 §2.7.5.2.12–14). */
#define FP_EXC_INV      0x1u
#define FP_EXC_DIV0     0x2u
#define FP_EXC_OFLO     0x4u
#define FP_EXC_ALL      0x7u

/* $FP_CTL fields (ISA2 §2.7.5.2.14). */
#define FP_CTL_RND_SHIFT 16
#define FP_CTL_RND_MASK  (0x7u << FP_CTL_RND_SHIFT)   /* TileRoundMode; IPU2: 0 only */
#define FP_CTL_ESR       (1u << 19)                   /* stochastic rounding enable */
#define FP_CTL_NANOO     (1u << 20)                   /* NaN on f16 overflow */

/* $FP_CLR: force every $AACC to zero (ISA2 §2.7.5.2.13). */
#define FP_CLR_ZAACC     (1u << 3)

/* The tile's fixed f32 quiet NaN (ipusim's choice, see above). */
#define FP32_TILE_QNAN_BITS 0x7FD9C000u

/* Rounding modes of ISA2 Table 4.3 (TileRoundMode), for f32int. */
enum fp_round_mode {
    FP_RND_EVEN = 0, FP_RND_POSINF = 1, FP_RND_NEGINF = 2, FP_RND_ZERO = 3, FP_RND_AWAY = 4,
};

/* Result of comparing two values (TFPU_Relation). */
enum fp_relation { FP_REL_EQ, FP_REL_LT, FP_REL_GT, FP_REL_UN };

/* Register bits <-> f32, flushing denormals to ±0 (TFPU_F32FromBits,
 * TFPU_BitsFromF32). */
float fp32_from_bits(uint32_t bits);
uint32_t fp32_to_bits(float f);
float fp32_flush(float f);

bool fp32_is_snan(float f);
bool fp32_is_qnan(float f);
float fp32_qnan(void);                     /* the fixed quiet NaN */

/* Special-case checks made before an operation (ISA2 §4.1.3.19–33,
 * TFPU_Do*PreExecute): when the operands are a special case (NaN,
 * infinity, zero divisor, ...) they set *result, OR the flags raised into
 * *exc and return true; otherwise they return false and leave *result. */
bool fp32_add_special(float a, float b, unsigned *exc, float *result);
bool fp32_mul_special(float a, float b, unsigned *exc, float *result);
bool fp32_div_special(float a, float b, unsigned *exc, float *result);
bool fp32_mac_special(float x, float y, float z, unsigned *exc, float *result);
bool fp32_axpby_special(float a, float x, float b, float y, unsigned *exc, float *result);
bool fp32_sqrt_special(float a, unsigned *exc, float *result);
bool fp32_recip_special(float a, unsigned *exc, float *result);
bool fp32_rsqrt_special(float a, unsigned *exc, float *result);
bool fp32_exp_special(float a, unsigned *exc, float *result);
bool fp32_log_special(float a, unsigned *exc, float *result);
bool fp32_tanh_special(float a, unsigned *exc, float *result);
bool fp32_sigmoid_special(float a, unsigned *exc, float *result);

/* Arithmetic without flags, as the accumulating and AMP instructions use
 * it: NaN operands give the fixed quiet NaN, inputs and result are flushed. */
float fp32_add(float a, float b);          /* TFPU_Add to f32 */
float fp32_mul(float a, float b);          /* TFPU_Mul to f32 (result not flushed) */
float fp32_mac(float x, float y, float z); /* TFPU_Mac: x·y rounded to f32, then + z */

/* fp32_add's common case, inline for the accumulating loops: returns true
 * and sets *sum to fp32_add(a, b) when neither a nor b is a NaN or an
 * infinity; returns false (and leaves *sum) otherwise.
 *
 * fp32_add rounds the double sum of the flushed operands to f32.  That sum
 * of two f32 values is exact in double unless their exponents are far
 * apart, and then rounding twice (to double, then to f32) is still the
 * one correct f32 rounding, because double has at least 2 * 24 + 2 bits
 * (Figueroa, "When is double rounding innocuous?", 1995): the same value,
 * overflow to infinity included, as one f32 addition in the host's
 * round-to-nearest-even mode (which ipusim never changes, and which needs
 * f32 arithmetic evaluated in f32 or wider, with no flush-to-zero mode set
 * on the host).  A denormal sum is exact in both and flushed to ±0 with
 * its sign, as fp32_add does. */
static inline bool fp32_add_finite(float a, float b, float *sum)
{
    uint32_t ab, bb;
    memcpy(&ab, &a, 4);
    memcpy(&bb, &b, 4);
    if ((ab & 0x7f800000u) == 0x7f800000u || (bb & 0x7f800000u) == 0x7f800000u)
        return false;
    if (!(ab & 0x7f800000u))
        ab &= 0x80000000u;                  /* denormal operand -> ±0 */
    if (!(bb & 0x7f800000u))
        bb &= 0x80000000u;
    float fa, fb;
    memcpy(&fa, &ab, 4);
    memcpy(&fb, &bb, 4);
    float s = fa + fb;
    uint32_t sb;
    memcpy(&sb, &s, 4);
    if (!(sb & 0x7f800000u)) {
        sb &= 0x80000000u;                  /* denormal result -> ±0 */
        memcpy(&s, &sb, 4);
    }
    *sum = s;
    return true;
}

/* minNum/maxNum (TFPU_Min/TFPU_Max): a quiet NaN operand yields the other
 * operand; a signalling NaN, or two NaNs, yield the fixed quiet NaN
 * (ISA2 §2.9.13); -0 < +0. */
float fp32_min(float a, float b);
float fp32_max(float a, float b);

enum fp_relation fp32_relation(float a, float b);

/* TFPU_RoundFP32ToIntegral: NaN -> quiet NaN, infinities and values above
 * 2^24 unchanged, otherwise rounded to an integral value by `mode`. */
float fp32_round_integral(float a, enum fp_round_mode mode);

/* TFPU_RoundFP64ToFmt for f16: round to the f16 significand (11 bits, or
 * fewer in the f16 subnormal range) with ties to even, returned as an f32;
 * no upper bound (values above 65504 stay above it for the overflow check). */
float fp_round_f16_precision(double v);

/* TFPU_GenOFLOCheck: FP_EXC_OFLO when v, rounded to the significand of the
 * result format, exceeds its largest finite value (65504 for f16,
 * FLT_MAX for f32) or is infinite; with nanoo (f16 only) FP_EXC_INV too. */
unsigned fp_overflow_check(double v, bool f16, bool nanoo);

/* TFPU_AACCReadFlags for one value read out of an accumulator: an infinity
 * is taken to be an overflow (plus invalid when read as f16). */
unsigned fp_aacc_read_flags(float v, bool f16, bool nanoo);

/* Name of the first flag set in exc, for messages ("divide by zero"). */
const char *fp_exc_name(unsigned exc);

#endif
