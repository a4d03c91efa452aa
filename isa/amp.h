/*
 * amp.h — state of the Accumulating Matrix Product (AMP) unit.
 *
 * ISA2 §2.9.11, §2.7.7: weights live in the Common Compute Configuration
 * State ($CWEI_n_m), shared by all contexts and written by the supervisor
 * through $CCCSLOAD with ld64putcs/ld128putcs; each worker context has its
 * own accumulators ($AACC) and AMP pipeline state.
 */
#ifndef IPUSIM_ISA_AMP_H
#define IPUSIM_ISA_AMP_H

#include <stdint.h>

#define ISA_CWEI_WORDS 64      /* 32-bit words of $CWEI state */
#define ISA_AACC_WORDS 32      /* f32 accumulators per context */

typedef struct isa_amp_shared {
    uint32_t cwei[ISA_CWEI_WORDS];
} isa_amp_shared;

typedef struct isa_amp_context {
    uint32_t aacc[ISA_AACC_WORDS];   /* f32 bits */
} isa_amp_context;

#endif
