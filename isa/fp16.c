/*
 * fp16.c — binary16 conversions, stochastic rounding and the
 * xoroshiro128aox PRNG of the tile.
 *
 * Everything here works on bit patterns with integer arithmetic, so the
 * results do not depend on the host's floating-point environment.  The
 * stochastic rounding and the PRNG follow the algorithms ISA2 publishes
 * (§2.13.2 listing 2.10, §2.13.6 listings 2.11 and 2.12) step by step.
 */
#include "fp16.h"

#include <string.h>

static uint32_t bits_of(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }
static float float_of(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }

float fp16_to_f32(f16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;

    if (exp == 0x1f)                        /* infinity or NaN: payload kept */
        return float_of(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) {
        if (mant == 0)
            return float_of(sign);
        /* Subnormal: normalise.  mant * 2^-24 = 1.f * 2^(exp - 15) once the
         * leading one reaches bit 10, with exp = 1 - shifts. */
        int e = 1;
        while (!(mant & 0x400u)) {
            mant <<= 1;
            e--;
        }
        mant &= 0x3ffu;
        return float_of(sign | ((uint32_t)(e + 112) << 23) | (mant << 13));
    }
    return float_of(sign | ((exp + 112) << 23) | (mant << 13));
}

f16_t fp16_from_f32(float f)
{
    uint32_t x = bits_of(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t ax = x & 0x7fffffffu;

    if (ax > 0x7f800000u) {                 /* NaN */
        uint32_t m = (ax >> 13) & 0x3ffu;
        return (f16_t)(sign | 0x7c00u | (m ? m : 0x200u));
    }
    if (ax == 0x7f800000u)
        return (f16_t)(sign | 0x7c00u);

    uint32_t e = ax >> 23;                  /* biased f32 exponent */
    uint32_t m = ax & 0x7fffffu;

    if (e > 142)                            /* >= 2^16: beyond every rounding */
        return (f16_t)(sign | 0x7c00u);
    if (e >= 113) {                         /* f16 normal range (2^-14 and up) */
        uint32_t h = ((e - 112) << 10) | (m >> 13);
        uint32_t rem = m & 0x1fffu;
        if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
            h++;                            /* a carry may reach infinity: right */
        return (f16_t)(sign | h);
    }
    if (e < 102)                            /* below 2^-25: rounds to zero */
        return (f16_t)sign;
    /* f16 subnormal range: the value in units of 2^-24 is m24 >> (126 - e). */
    uint32_t m24 = m | 0x800000u;
    unsigned shift = 126 - e;               /* 14..24 */
    uint32_t q = m24 >> shift;
    uint32_t rem = m24 & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1)))
        q++;                                /* may become 0x400, the smallest normal */
    return (f16_t)(sign | q);
}

bool fp16_is_nan(f16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }
bool fp16_is_inf(f16_t h) { return (h & 0x7fffu) == 0x7c00u; }
bool fp16_is_snan(f16_t h) { return fp16_is_nan(h) && !(h & 0x200u); }

f16_t fp16_from_f32_tile(float f, enum fp16_sat mode)
{
    uint32_t x = bits_of(f);
    f16_t sign = (f16_t)((x >> 16) & 0x8000u);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return FP16_TILE_QNAN;
    f16_t h = (x & 0x7fffffffu) == 0x7f800000u ? (f16_t)(sign | FP16_INF_BITS) : fp16_from_f32(f);
    if ((h & 0x7fffu) != FP16_INF_BITS)
        return h;
    switch (mode) {
    case FP16_SAT_MAX: return (f16_t)(sign | FP16_MAX_BITS);
    case FP16_SAT_NAN: return FP16_TILE_QNAN;
    case FP16_SAT_PROP_INF: break;
    }
    return h;
}

float fp16_stochastic_round(float single, uint32_t bitpattern)
{
    uint32_t x = bits_of(single);
    uint32_t sign = x & 0x80000000u;
    uint32_t uexp = (x >> 23) & 0xffu;
    uint32_t mant = x & 0x7fffffu;

    if (uexp == 0xff)                       /* NaN, infinity: unchanged */
        return single;
    if (uexp == 0)                          /* zero, or an f32 subnormal flushed */
        mant = 0;

    int sexp = (int)uexp - 127;
    unsigned masklen;
    if (sexp >= -14)                        /* f16 normal: 13 bits below the lsb */
        masklen = 23 - 10;
    else if (sexp >= -25)                   /* f16 subnormal: 14..24 bits */
        masklen = (unsigned)(23 + (-24 - sexp));
    else
        masklen = 23 + 1;

    mant |= 1u << 23;                       /* the implicit one */
    mant += bitpattern & ((1u << masklen) - 1);
    if ((mant >> 24) & 1) {                 /* the addition carried out */
        uexp++;
        sexp++;
        mant >>= 1;
    }
    /* Truncate below the rounding point and drop the implicit one. */
    mant = ((mant >> masklen) << masklen) & 0x7fffffu;

    float result;
    if (sexp < -24)
        result = 0.0f;
    else if (sexp > 15)
        result = 65536.0f;                  /* above the f16 range: the caller decides */
    else
        result = float_of((uexp << 23) | mant);
    return float_of(bits_of(result) | sign);
}

f16_t fp16_from_f32_stochastic(float f, uint32_t random)
{
    return fp16_from_f32(fp16_stochastic_round(f, random));
}

uint32_t fp16_sr_bits(const uint64_t random[2], unsigned element)
{
    return (uint32_t)((random[0] >> (16 * element)) & 0xffffu)
         | (uint32_t)(((random[1] >> (8 * element)) & 0xffu) << 16);
}

static uint64_t rotl64(uint64_t x, unsigned k) { return (x << k) | (x >> (64 - k)); }

/* The non-linear output function that replaces xoroshiro128+'s addition. */
static uint64_t aox(uint64_t s0, uint64_t s1)
{
    uint64_t sum = s1 ^ s0;
    uint64_t carry = s1 & s0;
    return sum ^ (rotl64(carry, 1) | rotl64(carry, 2));
}

uint64_t fp_prng_next(uint64_t state[2])
{
    uint64_t s0 = state[0], s1 = state[1];
    uint64_t out = aox(s0, s1);
    uint64_t t1 = s1 ^ s0;
    state[0] = rotl64(s0, 55) ^ t1 ^ (t1 << 14);
    state[1] = rotl64(t1, 36);
    return out;
}

void fp_prng_advance(uint64_t state[2], uint64_t random[2])
{
    random[0] = fp_prng_next(state);
    random[1] = fp_prng_next(state);
}

void fp_prng_seed(uint64_t state[2], uint32_t seed)
{
    uint32_t p00 = seed;
    uint32_t p01 = ~seed;
    uint32_t p10 = (seed << 13) | (~seed >> 19);
    uint32_t p11 = (~seed << 13) | (seed >> 19);
    state[0] = ((uint64_t)p01 << 32) | p00;
    state[1] = ((uint64_t)p11 << 32) | p10;
}
