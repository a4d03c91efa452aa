/*
 * pack.h — vtx_pack_b_f16 and vtx_pack_b_f16_h16 (workloads/codelets/pack.S):
 * a matmul operand computed at run time put into sv_matmul_f16's weight
 * layout with f32 partials (groups of 8 columns) or f16 partials (groups
 * of 16, units in matmul_unit_channel's order), and their bit-exact C
 * models.
 */
#ifndef IPUSIM_CODELETS_PACK_H
#define IPUSIM_CODELETS_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "isa/fp16.h"

enum pack_vertex {
    PACK_V_SRC = 0,          /* f32 (k 0, n of the worker's first group) */
    PACK_V_DST = 1,          /* packed f16, the worker's first group */
    PACK_V_BLOCKS = 2,       /* K / 16 */
    PACK_V_GROUPS = 3,       /* groups of 8 columns (16: vtx_pack_b_f16_h16) for this worker */
    PACK_V_K_STEP = 4,       /* bytes from (k, n) to (k + 1, n) */
    PACK_V_N_STEP = 5,       /* bytes from (k, n) to (k, n + 1) */
    PACK_V_WORDS = 6,
};

/* The model: src as above (k_step, n_step in f32 elements), k a multiple
 * of 16, n of 8; packed gets k * n f16 in sv_matmul_f16's layout. */
void pack_model_b_f16(const float *src, size_t k, size_t n, size_t k_step, size_t n_step, f16_t *packed);
/* vtx_pack_b_f16_h16's: n a multiple of 16, the layout with f16 partials. */
void pack_model_b_f16_h16(const float *src, size_t k, size_t n, size_t k_step, size_t n_step, f16_t *packed);

#endif
