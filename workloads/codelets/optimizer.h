/*
 * optimizer.h — the optimizer codelets of the kernel library
 * (workloads/codelets/optimizer.S): vertex record layouts and the bit-exact
 * C model (optimizer_model.c).
 *
 * Codelets (worker vertices, calling convention in abi.h):
 *   vtx_adam_updater_f32   one element at a time, in place: Adam's and
 *                          LAMB's moments and the update direction of a
 *                          weight (PopLibs' Adam updater, as PopART's
 *                          AdamUpdater and the accumulators before it
 *                          compute them, in one pass):
 *       gw   = g                       (+ wd w, ADAM_FLAG_L2: Adam's decay)
 *       m'   = beta1 m + (1 - beta1) gw
 *       v'   = beta2 v + (1 - beta2) gw gw
 *       r    = (m' c1) / (sqrt(v' c2) + epsilon)
 *                                      (+ wd w, ADAM_FLAG_DECOUPLED: LAMB's)
 *     each product, sum, quotient and root rounded to f32 in that order
 *     (f32mul, f32add, f32sqrt, f32div: the same bits as the element-wise
 *     ops that spell it out, so the fused step changes no value); m' and
 *     v' are written over m and v, r to R (which may be G); c1 and c2,
 *     this step's bias corrections 1 / (1 - beta^t), are f32 scalars in
 *     tile memory (they change every step); w is f32, or f16
 *     (ADAM_FLAG_W_F16: widened exactly), read only with a decay flag.
 *
 * Alignment: G, M, V, R and W 4-byte aligned (W 2-byte when f16); C1 and
 * C2 4-byte aligned.  No read past the end of an operand.
 *
 * Worker cycles (exact; held by tests/test_codelets_optimizer.c): n = 0:
 * 3.  n >= 1: 25 to start (27 with LAMB's decay), then 18 issues an
 * element (19 with Adam's decay, 20 with it and an f16 w; 20 with LAMB's,
 * 21 with it and an f16 w), one of them f32sqrt and one f32div, which take
 * 5 and 3 worker cycles (machine.def: f32sqrt_latency_worker_cycles,
 * f32div_latency_worker_cycles): 24 worker cycles an element without a
 * decay; then 1 (exitz).  With the six workers each on a share, 4 tile
 * cycles an element.  The loop is scalar: one element a turn, no f32v2
 * pairing and no overlap of one element's root and quotient with the
 * next's loads.
 */
#ifndef IPUSIM_CODELETS_OPTIMIZER_H
#define IPUSIM_CODELETS_OPTIMIZER_H

#include <stdint.h>

#include "isa/fp16.h"

/* vtx_adam_updater_f32 record (32-bit words). */
enum adam_updater_vertex {
    ADAM_V_G = 0,                 /* the gradient, f32 */
    ADAM_V_M,                     /* the first moment, f32, written over */
    ADAM_V_V,                     /* the second moment, f32, written over */
    ADAM_V_W,                     /* the weight, f32 or f16 (read with a decay flag only) */
    ADAM_V_R,                     /* the update direction, f32 (may be G) */
    ADAM_V_N,                     /* elements (0: nothing to do) */
    ADAM_V_C1,                    /* address of c1, f32 */
    ADAM_V_C2,                    /* address of c2, f32 */
    ADAM_V_BETA1,                 /* f32 bits */
    ADAM_V_ONE_MINUS_BETA1,       /* f32 bits of 1 - beta1 (rounded once) */
    ADAM_V_BETA2,
    ADAM_V_ONE_MINUS_BETA2,
    ADAM_V_EPSILON,
    ADAM_V_WEIGHT_DECAY,
    ADAM_V_FLAGS,                 /* ADAM_FLAG_* */
    ADAM_V_WORDS
};

enum adam_flags {
    ADAM_FLAG_L2 = 1,             /* gw = g + wd w (Adam's weight decay) */
    ADAM_FLAG_DECOUPLED = 2,      /* r += wd w (LAMB's) */
    ADAM_FLAG_W_F16 = 4           /* w is f16 */
};

/* The constants of a record, as f32. */
typedef struct adam_constants {
    float beta1, one_minus_beta1, beta2, one_minus_beta2, epsilon, weight_decay;
    uint32_t flags;
} adam_constants;

/* vtx_adam_updater_f32 on one element: *m and *v updated, r returned
 * (w read only with a decay flag). */
float optimizer_model_adam(const adam_constants *k, float c1, float c2, float g, float *m, float *v, float w);

#endif
