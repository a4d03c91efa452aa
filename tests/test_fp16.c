/*
 * test_fp16.c — binary16 conversions, the tile's f16 result conversion,
 * stochastic rounding (ISA2 §2.13.6) and the xoroshiro128aox PRNG
 * (ISA2 §2.13.2), checked against values derived by hand.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <string.h>

#include "isa/fp16.h"
#include "test_util.h"

static uint32_t fbits(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }
static float bitsf(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }

/* ---- f16 <-> f32 ---------------------------------------------------------- */

/* The value of an f16 pattern computed independently with ldexp. */
static double f16_value(f16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
    return (h & 0x8000) ? -v : v;
}

static void test_roundtrip_all_patterns(void)
{
    unsigned bad_value = 0, bad_roundtrip = 0;
    for (uint32_t i = 0; i < 65536; i++) {
        f16_t h = (f16_t)i;
        float f = fp16_to_f32(h);
        if (fp16_is_nan(h)) {
            if (!isnan(f))
                bad_value++;
        } else if (fp16_is_inf(h)) {
            if (!isinf(f) || (signbit(f) != 0) != ((h & 0x8000) != 0))
                bad_value++;
        } else if ((double)f != f16_value(h) || (signbit(f) != 0) != ((h & 0x8000) != 0)) {
            bad_value++;
        }
        /* Every pattern comes back bit for bit: NaNs too (payload kept),
         * which is stricter than "NaNs compare as NaN". */
        if (fp16_from_f32(f) != h)
            bad_roundtrip++;
    }
    CU_ASSERT_EQUAL(bad_value, 0);
    CU_ASSERT_EQUAL(bad_roundtrip, 0);
}

static void test_round_to_nearest_even(void)
{
    /* f16 has 10 fraction bits: 1 + 2^-11 is half an ulp above 1. */
    CU_ASSERT_EQUAL(fp16_from_f32(1.0f + 0x1p-11f), 0x3C00);           /* tie, to even (down) */
    CU_ASSERT_EQUAL(fp16_from_f32(1.0f + 3 * 0x1p-11f), 0x3C02);       /* tie, to even (up) */
    CU_ASSERT_EQUAL(fp16_from_f32(1.0f + 0x1p-11f + 0x1p-20f), 0x3C01); /* above the tie */
    CU_ASSERT_EQUAL(fp16_from_f32(1.0f + 0x1p-11f - 0x1p-20f), 0x3C00); /* below the tie */
    CU_ASSERT_EQUAL(fp16_from_f32(-(1.0f + 3 * 0x1p-11f)), 0xBC02);
    CU_ASSERT_EQUAL(fp16_from_f32(2049.0f), 0x6800);                   /* 2048 */
    CU_ASSERT_EQUAL(fp16_from_f32(2051.0f), 0x6802);                   /* 2052 */
    CU_ASSERT_EQUAL(fp16_from_f32(1.0f / 3.0f), 0x3555);
}

static void test_max_finite_boundary(void)
{
    CU_ASSERT_EQUAL(fp16_from_f32(65504.0f), 0x7BFF);
    CU_ASSERT_EQUAL(fp16_from_f32(65519.99f), 0x7BFF);   /* below the tie with 65536 */
    CU_ASSERT_EQUAL(fp16_from_f32(65520.0f), 0x7C00);    /* the tie goes to "65536": inf */
    CU_ASSERT_EQUAL(fp16_from_f32(-65520.0f), 0xFC00);
    CU_ASSERT_EQUAL(fp16_from_f32(1e10f), 0x7C00);
    CU_ASSERT_EQUAL(fp16_from_f32(INFINITY), 0x7C00);
    CU_ASSERT_EQUAL(fp16_from_f32(-INFINITY), 0xFC00);
}

static void test_subnormals(void)
{
    CU_ASSERT_EQUAL(fp16_from_f32(0x1p-24f), 0x0001);    /* smallest subnormal */
    CU_ASSERT_EQUAL(fp16_from_f32(0x1p-25f), 0x0000);    /* halfway below it: to even, 0 */
    CU_ASSERT_EQUAL(fp16_from_f32(nextafterf(0x1p-25f, 1.0f)), 0x0001);
    CU_ASSERT_EQUAL(fp16_from_f32(3 * 0x1p-25f), 0x0002); /* 1.5 ulp: tie, to even */
    CU_ASSERT_EQUAL(fp16_from_f32(5 * 0x1p-25f), 0x0002); /* 2.5 ulp: tie, to even */
    CU_ASSERT_EQUAL(fp16_from_f32(0x1p-26f), 0x0000);
    CU_ASSERT_EQUAL(fp16_from_f32(-0x1p-24f), 0x8001);
    CU_ASSERT_EQUAL(fp16_from_f32(0x1p-14f), 0x0400);    /* smallest normal */
    CU_ASSERT_EQUAL(fp16_from_f32(0x1p-14f - 0x1p-25f), 0x0400); /* 1023.5 ulp: to even */
    CU_ASSERT_EQUAL(fp16_from_f32(0x1p-14f - 0x1p-24f), 0x03FF); /* largest subnormal */
    CU_ASSERT_EQUAL(fp16_from_f32(bitsf(0x00000001)), 0x0000);  /* f32 subnormal */
    CU_ASSERT_EQUAL(fbits(fp16_to_f32(0x0001)), 0x33800000u);   /* 2^-24 */
    CU_ASSERT_EQUAL(fbits(fp16_to_f32(0x03FF)), 0x387FC000u);
    CU_ASSERT_EQUAL(fbits(fp16_to_f32(0x8200)), 0xB8000000u);   /* -2^-15 */
}

static void test_zero_and_nan(void)
{
    CU_ASSERT_EQUAL(fp16_from_f32(-0.0f), 0x8000);
    CU_ASSERT_EQUAL(fp16_from_f32(0.0f), 0x0000);
    CU_ASSERT_EQUAL(fbits(fp16_to_f32(0x8000)), 0x80000000u);
    CU_ASSERT_EQUAL(fbits(fp16_to_f32(0x7C00)), 0x7F800000u);
    CU_ASSERT_EQUAL(fbits(fp16_to_f32(0x7E01)), 0x7FC02000u);   /* payload kept */
    CU_ASSERT_EQUAL(fp16_from_f32(bitsf(0x7FC02000u)), 0x7E01);
    CU_ASSERT_EQUAL(fp16_from_f32(bitsf(0xFF800001u)), 0xFE00); /* payload below f16 bits */
    CU_ASSERT_TRUE(fp16_is_nan(fp16_from_f32(NAN)));
    CU_ASSERT_TRUE(fp16_is_snan(0x7D00));
    CU_ASSERT_FALSE(fp16_is_snan(0x7E00));
    CU_ASSERT_FALSE(fp16_is_snan(0x7C00));
    CU_ASSERT_TRUE(fp16_is_inf(0xFC00));
    CU_ASSERT_FALSE(fp16_is_inf(0x7C01));
}

/* The tile's result conversion (ISA2 §2.9.4.2, §2.9.13). */
static void test_tile_conversion(void)
{
    CU_ASSERT_EQUAL(fp16_from_f32_tile(1.0f, FP16_SAT_MAX), 0x3C00);
    CU_ASSERT_EQUAL(fp16_from_f32_tile(65519.99f, FP16_SAT_MAX), 0x7BFF);
    CU_ASSERT_EQUAL(fp16_from_f32_tile(65520.0f, FP16_SAT_MAX), 0x7BFF);
    CU_ASSERT_EQUAL(fp16_from_f32_tile(-70000.0f, FP16_SAT_MAX), 0xFBFF);
    CU_ASSERT_EQUAL(fp16_from_f32_tile(65520.0f, FP16_SAT_NAN), FP16_TILE_QNAN);
    CU_ASSERT_EQUAL(fp16_from_f32_tile(65504.0f, FP16_SAT_NAN), 0x7BFF);
    CU_ASSERT_EQUAL(fp16_from_f32_tile(-INFINITY, FP16_SAT_PROP_INF), 0xFC00);
    CU_ASSERT_EQUAL(fp16_from_f32_tile(INFINITY, FP16_SAT_MAX), 0x7BFF);
    CU_ASSERT_EQUAL(fp16_from_f32_tile(-NAN, FP16_SAT_PROP_INF), 0x7ECE);
    CU_ASSERT_EQUAL(fp16_from_f32_tile(bitsf(0x7F800001u), FP16_SAT_MAX), 0x7ECE);
    CU_ASSERT_EQUAL(fp16_from_f32_tile(0x1p-25f, FP16_SAT_MAX), 0x0000);
    CU_ASSERT_EQUAL(fp16_from_f32_tile(-0.0f, FP16_SAT_MAX), 0x8000);
}

/* ---- stochastic rounding --------------------------------------------------- */

/* Exact cases of the published algorithm: in the f16 normal range the 13
 * bits below the f16 lsb are added to the random pattern's low 13 bits. */
static void test_stochastic_exact(void)
{
    float half_ulp_above_1 = 1.0f + 0x1p-11f;          /* 13-bit remainder 0x1000 */
    CU_ASSERT_EQUAL(fbits(fp16_stochastic_round(half_ulp_above_1, 0x0FFF)), fbits(1.0f));
    CU_ASSERT_EQUAL(fbits(fp16_stochastic_round(half_ulp_above_1, 0x1000)), fbits(1.0f + 0x1p-10f));
    /* Bits above the 13 are masked off. */
    CU_ASSERT_EQUAL(fbits(fp16_stochastic_round(half_ulp_above_1, 0xFFE0FFFu)), fbits(1.0f));
    CU_ASSERT_EQUAL(fbits(fp16_stochastic_round(-half_ulp_above_1, 0x1FFF)), fbits(-(1.0f + 0x1p-10f)));
    /* An f16 value is never changed. */
    CU_ASSERT_EQUAL(fbits(fp16_stochastic_round(1.5f, 0xFFFFFF)), fbits(1.5f));
    /* 2^-25 (exponent -25): 24 random bits against the 24-bit significand
     * 0x800000: a carry (to 2^-24) iff the bits are >= 0x800000. */
    CU_ASSERT_EQUAL(fbits(fp16_stochastic_round(0x1p-25f, 0x7FFFFF)), 0u);
    CU_ASSERT_EQUAL(fbits(fp16_stochastic_round(0x1p-25f, 0x800000)), fbits(0x1p-24f));
    /* 1.5 * 2^-25: significand 0xC00000, up iff bits >= 0x400000 (p = 3/4). */
    CU_ASSERT_EQUAL(fbits(fp16_stochastic_round(3 * 0x1p-26f, 0x3FFFFF)), 0u);
    CU_ASSERT_EQUAL(fbits(fp16_stochastic_round(3 * 0x1p-26f, 0x400000)), fbits(0x1p-24f));
    /* 2^-15 (exponent -15): 14 bits below the lsb 2^-24; 2^-15 + 2^-25 has
     * remainder 0x2000: up iff the low 14 bits >= 0x2000. */
    CU_ASSERT_EQUAL(fbits(fp16_stochastic_round(0x1p-15f + 0x1p-25f, 0x1FFF)), fbits(0x1p-15f));
    CU_ASSERT_EQUAL(fbits(fp16_stochastic_round(0x1p-15f + 0x1p-25f, 0x2000)), fbits(0x1p-15f + 0x1p-24f));
    /* Below 2^-25 always zero, sign kept. */
    CU_ASSERT_EQUAL(fbits(fp16_stochastic_round(0x1p-26f, 0xFFFFFF)), 0u);
    CU_ASSERT_EQUAL(fbits(fp16_stochastic_round(-0x1p-26f, 0xFFFFFF)), 0x80000000u);
    /* Above the f16 range: 65536, which a plain conversion makes infinity. */
    CU_ASSERT_EQUAL(fbits(fp16_stochastic_round(65520.0f, 0x1000)), fbits(65536.0f));
    CU_ASSERT_EQUAL(fbits(fp16_stochastic_round(65520.0f, 0x0FFF)), fbits(65504.0f));
    CU_ASSERT_EQUAL(fp16_from_f32_stochastic(65520.0f, 0x1000), 0x7C00);
    CU_ASSERT_EQUAL(fp16_from_f32_stochastic(65520.0f, 0x0FFF), 0x7BFF);
    CU_ASSERT_EQUAL(fp16_from_f32_stochastic(1.0f + 0x1p-11f, 0x1000), 0x3C01);
    /* NaN and infinity unchanged. */
    CU_ASSERT_TRUE(isnan(fp16_stochastic_round(NAN, 0)));
    CU_ASSERT_EQUAL(fbits(fp16_stochastic_round(-INFINITY, 0xFFFFFF)), 0xFF800000u);
}

/* Mean of many stochastically rounded samples: within 5 standard
 * deviations of the value, and every sample one of the two neighbours. */
static void check_stochastic_mean(float x, float lo, float hi)
{
    uint64_t st[2];
    fp_prng_seed(st, 0xC0FFEEu);
    const unsigned n = 40000;
    unsigned ups = 0, others = 0;
    for (unsigned i = 0; i < n; i++) {
        uint64_t r[2];
        fp_prng_advance(st, r);
        float y = fp16_to_f32(fp16_from_f32_stochastic(x, fp16_sr_bits(r, i % 4)));
        if (y == hi)
            ups++;
        else if (y != lo)
            others++;
    }
    CU_ASSERT_EQUAL(others, 0);
    double p = ((double)x - lo) / ((double)hi - lo);
    double sd = sqrt(n * p * (1 - p));
    CU_ASSERT_TRUE(fabs(ups - n * p) <= 5 * sd + 1);
    double mean = lo + (hi - lo) * (double)ups / n;
    CU_ASSERT_TRUE(fabs(mean - x) <= 5 * fabs(hi - lo) * sqrt(p * (1 - p) / n) + 1e-12);
}

static void test_stochastic_statistics(void)
{
    check_stochastic_mean(1.0f + 0x1p-12f, 1.0f, 1.0f + 0x1p-10f);     /* p = 1/4 */
    check_stochastic_mean(1.3f, 1.2998046875f, 1.30078125f);          /* neighbours of 1.3 */
    check_stochastic_mean(-3.14159f, -3.140625f, -3.142578125f);
    check_stochastic_mean(5.3f * 0x1p-24f, 5 * 0x1p-24f, 6 * 0x1p-24f); /* subnormal range */
    check_stochastic_mean(0.7f * 0x1p-24f, 0.0f, 0x1p-24f);           /* below the smallest */
}

/* ---- PRNG ---------------------------------------------------------------- */

/*
 * Hand derivation from ISA2 listing 2.10:
 *   aox(s0, s1) = (s1 ^ s0) ^ (rotl(s1 & s0, 1) | rotl(s1 & s0, 2))
 *   step: t1 = s1 ^ s0; s0 = rotl(s0, 55) ^ t1 ^ (t1 << 14); s1 = rotl(t1, 36)
 *
 * State {s0 = 1, s1 = 2}: s1 & s0 = 0, so output 1 ^ 2 = 0x3.
 *   Step: t1 = 3; s0 = (1 << 55) ^ 3 ^ (3 << 14) = 0x008000000000C003;
 *   s1 = 3 << 36 = 0x0000003000000000.  These share no bits, so the next
 *   output is their xor, 0x008000300000C003.
 * State {1, 1}: xor 0, carry 1 -> rotl 1 | rotl 2 = 2 | 4 = 0x6.
 *   Step: t1 = 0; s0 = 1 << 55; s1 = 0; next output 1 << 55.
 * State {2^63, 2^63}: carry 2^63 rotates to 1 and 2: output 0x3 (the
 *   rotation wraps around).
 */
static void test_prng_hand_derived(void)
{
    uint64_t s[2] = {1, 2};
    CU_ASSERT_EQUAL(fp_prng_next(s), 0x3u);
    CU_ASSERT_EQUAL(s[0], 0x008000000000C003ull);
    CU_ASSERT_EQUAL(s[1], 0x0000003000000000ull);
    CU_ASSERT_EQUAL(fp_prng_next(s), 0x008000300000C003ull);

    uint64_t u[2] = {1, 1};
    CU_ASSERT_EQUAL(fp_prng_next(u), 0x6u);
    CU_ASSERT_EQUAL(u[0], 1ull << 55);
    CU_ASSERT_EQUAL(u[1], 0u);
    CU_ASSERT_EQUAL(fp_prng_next(u), 1ull << 55);

    uint64_t w[2] = {1ull << 63, 1ull << 63};
    CU_ASSERT_EQUAL(fp_prng_next(w), 0x3u);

    /* TPRNG_Advance = two steps, both outputs kept. */
    uint64_t a[2] = {1, 2}, r[2];
    fp_prng_advance(a, r);
    CU_ASSERT_EQUAL(r[0], 0x3u);
    CU_ASSERT_EQUAL(r[1], 0x008000300000C003ull);
}

/*
 * $PRNG_SEED with seed 1: $PRNG_0_0 = 1, $PRNG_0_1 = ~1 = 0xFFFFFFFE,
 * $PRNG_1_0 = (1 << 13) | (0xFFFFFFFE >> 19) = 0x2000 | 0x1FFF = 0x3FFF,
 * $PRNG_1_1 = (0xFFFFFFFE << 13) | (1 >> 19) = 0xFFFFC000.
 * Seed 0x12345678: ~seed = 0xEDCBA987;
 * $PRNG_1_0 = (0x12345678 << 13 = 0x2468ACF0000, low word 0x8ACF0000)
 *            | (0xEDCBA987 >> 19 = 0x1DB9) = 0x8ACF1DB9;
 * $PRNG_1_1 = (0xEDCBA987 << 13, low word 0x7530E000)
 *            | (0x12345678 >> 19 = 0x246) = 0x7530E246.
 */
static void test_prng_seed(void)
{
    uint64_t s[2];
    fp_prng_seed(s, 1);
    CU_ASSERT_EQUAL(s[0], 0xFFFFFFFE00000001ull);
    CU_ASSERT_EQUAL(s[1], 0xFFFFC00000003FFFull);
    fp_prng_seed(s, 0x12345678u);
    CU_ASSERT_EQUAL(s[0], 0xEDCBA98712345678ull);
    CU_ASSERT_EQUAL(s[1], 0x7530E2468ACF1DB9ull);
    /* The same seed gives the same sequence. */
    uint64_t t[2];
    fp_prng_seed(t, 0x12345678u);
    for (int i = 0; i < 100; i++)
        CU_ASSERT_EQUAL(fp_prng_next(s), fp_prng_next(t));
}

/* ISA2 listing 2.12: element i takes bits 16i..16i+15 of the first word
 * and bits 8i..8i+7 of the second as its bits 16..23. */
static void test_sr_bits(void)
{
    const uint64_t r[2] = {0x0123456789ABCDEFull, 0xFEDCBA9876543210ull};
    CU_ASSERT_EQUAL(fp16_sr_bits(r, 0), 0x10CDEFu);
    CU_ASSERT_EQUAL(fp16_sr_bits(r, 1), 0x3289ABu);
    CU_ASSERT_EQUAL(fp16_sr_bits(r, 2), 0x544567u);
    CU_ASSERT_EQUAL(fp16_sr_bits(r, 3), 0x760123u);
}

void test_register(void)
{
    ADD_SUITE("fp16_convert",
              {"every f16 pattern round-trips through f32", test_roundtrip_all_patterns},
              {"round to nearest even, ties", test_round_to_nearest_even},
              {"largest finite, overflow to infinity", test_max_finite_boundary},
              {"subnormals both ways", test_subnormals},
              {"signed zero and NaN", test_zero_and_nan},
              {"tile result conversion saturates", test_tile_conversion});
    ADD_SUITE("fp16_stochastic",
              {"published algorithm, exact cases", test_stochastic_exact},
              {"mean of samples, only neighbours", test_stochastic_statistics},
              {"random bits per element", test_sr_bits});
    ADD_SUITE("fp_prng",
              {"xoroshiro128aox by hand", test_prng_hand_derived},
              {"seeding as $PRNG_SEED", test_prng_seed});
}
