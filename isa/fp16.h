/*
 * fp16.h — the floating-point arithmetic of the tile, bit-exact: IEEE
 * binary16 storage, conversions with round-to-nearest-even or stochastic
 * rounding, and the per-context PRNG (xoroshiro128aox) that stochastic
 * rounding draws from.
 *
 * ISA2 §2.9 (number formats, rounding, accuracy), §2.13 (PRNG).
 *
 * Two families of f32 -> f16 conversion live here:
 *   - fp16_from_f32 / fp16_from_f32_stochastic are plain IEEE 754
 *     conversions (overflow gives infinity, NaN stays NaN).  The assembler,
 *     the loader and the validator use them for host-side data.
 *   - fp16_from_f32_tile is what the tile does when it writes an f16 result
 *     (ISA2 §2.9.4.2, §2.9.13): it never produces infinity from an
 *     arithmetic result (it saturates to ±65504, or gives the fixed quiet NaN
 *     in NaN-on-overflow mode) and every NaN becomes the tile's fixed quiet
 *     NaN FP16_TILE_QNAN.
 */
#ifndef IPUSIM_ISA_FP16_H
#define IPUSIM_ISA_FP16_H

#include <stdbool.h>
#include <stdint.h>

typedef uint16_t f16_t;    /* binary16 bits */

/* Rounding of f32 -> f16 conversions. */
enum fp_round { FP_ROUND_NEAREST_EVEN = 0, FP_ROUND_STOCHASTIC = 1 };

/* The tile's fixed quiet NaN in f16 (HALF_GCNAN, ISA2 listing 2.8). */
#define FP16_TILE_QNAN   ((f16_t)0x7ECE)
#define FP16_MAX_BITS    ((f16_t)0x7BFF)    /* 65504, the largest finite f16 */
#define FP16_INF_BITS    ((f16_t)0x7C00)

/* f16 -> f32 is exact (subnormals, infinities, NaN payload kept). */
float fp16_to_f32(f16_t h);

/* f32 -> f16, round to nearest even; overflow to infinity; NaN stays NaN
 * (sign and the top 10 payload bits kept, so every f16 NaN round-trips
 * through f32 unchanged; a NaN whose payload lies only in the low 13 bits
 * becomes the quiet NaN 0x7E00 with its sign).  f32 subnormals are
 * converted, not flushed. */
f16_t fp16_from_f32(float f);

/* f32 -> f16 with stochastic rounding: rounds up with probability equal to
 * the fraction of an f16 ulp cut off; `random` supplies the random bits
 * (from the context's PRNG).  This is fp16_stochastic_round (the published
 * algorithm) followed by an exact conversion; overflow gives infinity. */
f16_t fp16_from_f32_stochastic(float f, uint32_t random);

bool fp16_is_nan(f16_t h);
bool fp16_is_inf(f16_t h);
bool fp16_is_snan(f16_t h);        /* NaN with the quiet bit (bit 9) clear */

/* What an f16 result does when it is out of range (ISA2 listing 2.8,
 * HalfSaturationMode). */
enum fp16_sat {
    FP16_SAT_MAX,       /* $FP_CTL.NANOO = 0: overflow saturates to ±65504 */
    FP16_SAT_NAN,       /* $FP_CTL.NANOO = 1: overflow gives FP16_TILE_QNAN */
    FP16_SAT_PROP_INF,  /* min/max/clamp: infinities pass through */
};

/* The tile's f32 -> f16 result conversion (the Half(value).bit16(smode) of
 * the ISA2 pseudo-code): round to nearest even, subnormals kept; any NaN
 * becomes FP16_TILE_QNAN; a value that rounds above 65504 (or an infinity)
 * becomes what `mode` says.  The caller raises the flags (fp_overflow_check
 * in fparith.h). */
f16_t fp16_from_f32_tile(float f, enum fp16_sat mode);

/* Stochastic rounding of an f32 value to f16 precision and range, exactly
 * as ISA2 §2.13.6 (TFPU_StochasticRound) publishes it: below the kept f16
 * mantissa, 13 random bits (f16 normal range; 14 to 24 bits for the f16
 * subnormal range, where fewer mantissa bits are kept) are added to the
 * 24-bit significand, which is then truncated.  Results:
 *   NaN and infinities are returned unchanged;
 *   |result| below 2^-24 -> ±0 (inputs below 2^-25 always give ±0);
 *   result above 65504 -> ±65536 (a finite value the caller's overflow
 *   check and conversion then handle);
 *   otherwise an f32 that is exactly representable in f16.
 * f32 subnormal inputs are treated as ±0 (the tile flushes them). */
float fp16_stochastic_round(float single, uint32_t bitpattern);

/* The random bit pattern for vector element `element` (0..3) of an
 * instruction that performs stochastic rounding, taken from the two 64-bit
 * words of one fp_prng_advance (ISA2 listing 2.12): 16 bits from the first
 * word and 8 from the second. */
uint32_t fp16_sr_bits(const uint64_t random[2], unsigned element);

/* xoroshiro128aox (ISA2 §2.13.2): return aox(s0, s1) of the current state,
 * then advance the state by one xoroshiro128 step.  state[0] is $PRNG_0
 * ($PRNG_0_1:$PRNG_0_0), state[1] is $PRNG_1. */
uint64_t fp_prng_next(uint64_t state[2]);

/* TPRNG_Advance: the two steps of xoroshiro128aox that every PRNG-using
 * instruction (and every instruction that rounds stochastically) performs,
 * giving 128 random bits. */
void fp_prng_advance(uint64_t state[2], uint64_t random[2]);

/* Seed as $PRNG_SEED does (ISA2 §2.7.5.2.19):
 *   $PRNG_0_0 = seed, $PRNG_0_1 = ~seed,
 *   $PRNG_1_0 = (seed << 13) | (~seed >> 19),
 *   $PRNG_1_1 = (~seed << 13) | (seed >> 19)   (32-bit arithmetic). */
void fp_prng_seed(uint64_t state[2], uint32_t seed);

#endif
