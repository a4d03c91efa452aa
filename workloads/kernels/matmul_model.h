/*
 * matmul_model.h — a bit-exact C model of the AMP matrix-multiply codelet
 * (workloads/kernels/amp_matmul.S), and the weight layout the codelet
 * reads.
 *
 * The codelet computes C[M x N] += A[M x K] * B[K x N] with f16 A and B.
 * It works through 16-input-channel blocks of K; in each block every
 * output element starts from its partial sum in C, adds four 4-element
 * f16 dot products (each exact, rounded once to f32) one after the other
 * in f32 with denormals flushed, and writes the sum back to C:
 *   - MATMUL_PARTIALS_F32 (f16v4sisoamp, 8 output channels per weight
 *     load): C is f32, so the f32 sum simply continues across blocks;
 *   - MATMUL_PARTIALS_F16 (f16v4hihov4amp, 16 output channels per weight
 *     load): C is f16, so the running sum is rounded to f16 (nearest even,
 *     saturating at ±65504) after every block of 16 inputs.
 * The model performs exactly these operations in exactly this order with
 * the AMP's own primitives (isa_amp_f16_dot4, fp32_add, fp16_from_f32_tile),
 * so its result must equal the simulated codelet's bit for bit.
 */
#ifndef IPUSIM_WORKLOADS_MATMUL_MODEL_H
#define IPUSIM_WORKLOADS_MATMUL_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "isa/fp16.h"

enum matmul_partials {
    MATMUL_PARTIALS_F32,   /* f16v4sisoamp: f32 C */
    MATMUL_PARTIALS_F16,   /* f16v4hihov4amp: f16 C */
};

#define MATMUL_K_BLOCK 16u  /* input channels per weight load */

/* Output channels per weight load: 8 (f32 partials) or 16 (f16 partials). */
unsigned matmul_group(enum matmul_partials p);

/* C += A * B as the codelet computes it.  a: m x k f16, b: k x n f16, both
 * row-major; k must be a multiple of MATMUL_K_BLOCK.  c_f32 (f32
 * partials) or c_f16 (f16 partials) holds the initial partial sums (zeros
 * for a plain product) and receives the result; the other pointer is
 * unused and may be NULL. */
void matmul_model_f16(const f16_t *a, const f16_t *b, size_t m, size_t k, size_t n,
                      enum matmul_partials partials, float *c_f32, f16_t *c_f16);

/* The output channel (within its group) that AMP unit `unit` computes, as
 * the codelet stores the results: the identity with f32 partials
 * (f16v4sisoamp writes units 2p, 2p+1 as result word p); with f16 partials
 * f16v4hihov4amp's result word p holds units 2p, 2p+1, 8+2p, 9+2p, so
 * units 0, 1, 8, 9 are channels 0..3, units 2, 3, 10, 11 channels 4..7, ...
 * (the order poplibs' weight loads follow too). */
unsigned matmul_unit_channel(enum matmul_partials partials, unsigned unit);

/* The codelet's weight layout: for every output-channel group g (n / group
 * of them) and input-channel block j (k / 16), g-major, a block of `group`
 * rows of 16 f16 values; row u is unit u's weights, B[16 j .. 16 j + 15]
 * [g * group + matmul_unit_channel(u)].  Read 8 bytes at a time, a block is
 * the $CWEI entries 0, 1, 2, ... in order (entry 4u + p: unit u, phase p,
 * inputs 4p .. 4p+3).  packed has k * n values. */
void matmul_pack_weights(const f16_t *b, size_t k, size_t n, enum matmul_partials partials, f16_t *packed);

#endif
