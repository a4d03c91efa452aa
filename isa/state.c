/*
 * state.c — reset state of a tile.
 */
#include "state.h"

#include <string.h>

void isa_state_init(isa_tile_state *t, uint32_t tile_id, uint32_t memory_bytes)
{
    memset(t, 0, sizeof *t);
    t->tile_id = tile_id;
    tmem_init(&t->mem, memory_bytes);
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
