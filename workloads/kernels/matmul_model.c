/*
 * matmul_model.c — the bit-exact model of the AMP matmul codelet; see
 * matmul_model.h for the arithmetic it reproduces.
 */
#include "matmul_model.h"

#include <math.h>
#include <string.h>

#include "isa/amp.h"
#include "isa/fparith.h"

unsigned matmul_group(enum matmul_partials p)
{
    return p == MATMUL_PARTIALS_F16 ? 16u : 8u;
}

/* An f32 partial read back by the AMP: denormals flushed, NaN -> the
 * tile's quiet NaN. */
static float f32_partial_in(float v)
{
    return isnan(v) ? fp32_qnan() : fp32_flush(v);
}

/* An f32 result written out by f16v4sisoamp. */
static float f32_result_out(float v)
{
    return isnan(v) ? fp32_qnan() : fp32_flush(v);
}

/* An f16 partial read back by f16v4hihov4amp: NaN and infinity -> NaN. */
static float f16_partial_in(f16_t h)
{
    return (h & 0x7c00u) == 0x7c00u ? fp32_qnan() : fp16_to_f32(h);
}

/* An f32 sum written out as f16 by f16v4hihov4amp ($FP_CTL = 0: nearest
 * even, saturating). */
static f16_t f16_result_out(float v)
{
    if (isnan(v) || isinf(v))
        return FP16_TILE_QNAN;
    return fp16_from_f32_tile(v, FP16_SAT_MAX);
}

void matmul_model_f16(const f16_t *a, const f16_t *b, size_t m, size_t k, size_t n,
                      enum matmul_partials partials, float *c_f32, f16_t *c_f16)
{
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            float acc = partials == MATMUL_PARTIALS_F16 ? f16_partial_in(c_f16[i * n + j])
                                                        : f32_partial_in(c_f32[i * n + j]);
            for (size_t blk = 0; blk < k; blk += MATMUL_K_BLOCK) {
                /* Phases 0..3 of one row: one exact 4-element dot product
                 * each, added to the running f32 sum in turn. */
                for (size_t p = 0; p < MATMUL_K_BLOCK; p += 4) {
                    f16_t x[4], w[4];
                    for (size_t e = 0; e < 4; e++) {
                        x[e] = a[i * k + blk + p + e];
                        w[e] = b[(blk + p + e) * n + j];
                    }
                    acc = fp32_add(acc, isa_amp_f16_dot4(w, x));
                }
                /* The block's sum goes out to C and comes back as the next
                 * block's partial. */
                if (partials == MATMUL_PARTIALS_F16)
                    acc = f16_partial_in(f16_result_out(acc));
                else
                    acc = f32_partial_in(f32_result_out(acc));
            }
            if (partials == MATMUL_PARTIALS_F16)
                c_f16[i * n + j] = f16_result_out(acc);
            else
                c_f32[i * n + j] = f32_result_out(acc);
        }
}

unsigned matmul_unit_channel(enum matmul_partials partials, unsigned unit)
{
    if (partials == MATMUL_PARTIALS_F32)
        return unit;
    /* f16v4hihov4amp's result word p holds units 2p, 2p+1 (set 0) and
     * 8+2p, 9+2p (set 1), in that order: channels 4p .. 4p+3. */
    unsigned set = unit / 8, u = unit % 8;
    return 4 * (u / 2) + 2 * set + u % 2;
}

void matmul_pack_weights(const f16_t *b, size_t k, size_t n, enum matmul_partials partials, f16_t *packed)
{
    size_t group = matmul_group(partials);
    size_t out = 0;
    for (size_t g = 0; g < n / group; g++)
        for (size_t blk = 0; blk < k; blk += MATMUL_K_BLOCK)
            for (unsigned u = 0; u < group; u++) {
                size_t ch = g * group + matmul_unit_channel(partials, u);
                for (size_t e = 0; e < MATMUL_K_BLOCK; e++)
                    packed[out++] = b[(blk + e) * n + ch];
            }
}
