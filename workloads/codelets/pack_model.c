/*
 * pack_model.c — the bit-exact model of vtx_pack_b_f16 (pack.h).
 */
#include "pack.h"

#include "elementwise.h"
#include "workloads/kernels/matmul_model.h"

void pack_model_b_f16(const float *src, size_t k, size_t n, size_t k_step, size_t n_step, f16_t *packed)
{
    size_t at = 0;
    for (size_t g = 0; g < n / 8; g++)
        for (size_t j = 0; j < k / 16; j++)
            for (size_t u = 0; u < 8; u++)
                for (size_t i = 0; i < 16; i++)
                    packed[at++] = elementwise_model_f32_to_f16(src[(16 * j + i) * k_step + (8 * g + u) * n_step]);
}

void pack_model_b_f16_h16(const float *src, size_t k, size_t n, size_t k_step, size_t n_step, f16_t *packed)
{
    size_t at = 0;
    for (size_t g = 0; g < n / 16; g++)
        for (size_t j = 0; j < k / 16; j++)
            for (unsigned u = 0; u < 16; u++) {
                size_t col = 16 * g + matmul_unit_channel(MATMUL_PARTIALS_F16, u);
                for (size_t i = 0; i < 16; i++)
                    packed[at++] = elementwise_model_f32_to_f16(src[(16 * j + i) * k_step + col * n_step]);
            }
}
