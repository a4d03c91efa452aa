/*
 * fp16.h — the floating-point arithmetic of the tile, bit-exact: IEEE
 * binary16 storage, conversions with round-to-nearest-even or stochastic
 * rounding, and the per-context PRNG (xoroshiro128aox) that stochastic
 * rounding draws from.
 *
 * ISA2 §2.9 (number formats, rounding, accuracy), §2.13 (PRNG).
 */
#ifndef IPUSIM_ISA_FP16_H
#define IPUSIM_ISA_FP16_H

#include <stdbool.h>
#include <stdint.h>

typedef uint16_t f16_t;    /* binary16 bits */

/* Rounding of f32 -> f16 conversions. */
enum fp_round { FP_ROUND_NEAREST_EVEN = 0, FP_ROUND_STOCHASTIC = 1 };

/* f16 -> f32 is exact (subnormals, infinities, NaN payload kept). */
float fp16_to_f32(f16_t h);

/* f32 -> f16, round to nearest even; overflow to infinity; NaN stays NaN. */
f16_t fp16_from_f32(float f);

/* f32 -> f16 with stochastic rounding: rounds up with probability equal to
 * the fraction of an f16 ulp cut off; `random` supplies the random bits
 * (from the context's PRNG). */
f16_t fp16_from_f32_stochastic(float f, uint32_t random);

bool fp16_is_nan(f16_t h);
bool fp16_is_inf(f16_t h);

/* xoroshiro128aox (ISA2 §2.13.2): advance the state, return 64 bits. */
uint64_t fp_prng_next(uint64_t state[2]);
/* Seed as $PRNG_SEED does. */
void fp_prng_seed(uint64_t state[2], uint32_t seed);

#endif
