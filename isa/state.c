/*
 * state.c — reset state of a tile.
 */
#include "state.h"

#include <string.h>

#include "fp16.h"

void isa_state_init(isa_tile_state *t, uint32_t tile_id, uint32_t memory_base, uint32_t memory_bytes)
{
    memset(t, 0, sizeof *t);
    t->tile_id = tile_id;
    tmem_init(&t->mem, memory_base, memory_bytes);
    for (unsigned k = 0; k < ISA_CONTEXTS; k++) {
        isa_context *c = &t->ctx[k];
        c->id = (uint8_t)k;
        c->run_mode = k == ISA_SUPERVISOR ? ISA_RUN_RUNNING : ISA_RUN_INACTIVE;
        c->csr[ISA_CSR_WSR] = k == ISA_SUPERVISOR ? 7u : k - 1u;
    }
}

void isa_state_free(isa_tile_state *t)
{
    tmem_free(&t->mem);
}

/* A 32-bit finaliser (murmur3's): every input bit moves every output bit. */
static uint32_t mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x85ebca6bu;
    x ^= x >> 13;
    x *= 0xc2b2ae35u;
    x ^= x >> 16;
    return x;
}

void isa_seed_prngs(isa_tile_state *t, uint32_t seed)
{
    for (unsigned k = 0; k < ISA_CONTEXTS; k++)
        fp_prng_seed(t->ctx[k].prng, mix32(seed ^ mix32(t->tile_id * ISA_CONTEXTS + k + 0x9e3779b9u)));
}
