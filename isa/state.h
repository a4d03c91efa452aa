/*
 * state.h — the architectural state of one tile, as the instruction
 * semantics see it: contexts and their registers, CSRs, AMP state, tile
 * memory, and the record of a simulated exception.
 *
 * This is the functional side only.  When a context may issue, how slots
 * are shared and how long things take is sim/engine/tile.h's business.  A tile's
 * state is self-contained (no globals), so tiles can be executed on
 * different host threads between syncs.
 */
#ifndef IPUSIM_ISA_STATE_H
#define IPUSIM_ISA_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "isa.h"
#include "amp.h"
#include "memmodel/tile_memory.h"

/* Run mode of a context (ISA2 §2.6.2, simplified). */
enum isa_run_mode {
    ISA_RUN_INACTIVE = 0,   /* worker: not started or exited */
    ISA_RUN_RUNNING  = 1,   /* issuing instructions */
    ISA_RUN_SYNC     = 2,   /* supervisor: waiting at a sync */
    ISA_RUN_DONE     = 3,   /* supervisor: program ended (exit) */
    ISA_RUN_FAULTED  = 4,   /* stopped by an exception */
};

/* Simulated exceptions.  A raised exception stops the tile like the
 * hardware's exception event would; the record names where it happened. */
enum isa_exception {
    ISA_EXC_NONE = 0,
    ISA_EXC_INVALID_INSTR,     /* no such encoding, or wrong context (TEXCPT_INVALID_INSTR) */
    ISA_EXC_INVALID_OPERAND,   /* e.g. bad sync zone, CSR not writable */
    ISA_EXC_FETCH,             /* pc outside the loaded code / region 0, or misaligned */
    ISA_EXC_MEM_RANGE,         /* data address outside tile memory */
    ISA_EXC_MEM_ALIGN,         /* data address not naturally aligned */
    ISA_EXC_MEM_CONFLICT,      /* two accesses of one instruction hit the same element */
    ISA_EXC_MEM_REGION,        /* e.g. 128-bit load from region 0 */
    ISA_EXC_RPT,               /* control instruction in, or misaligned, rpt body */
    ISA_EXC_FP,                /* floating-point exception enabled in $FP_CTL */
    ISA_EXC_BREAK,             /* trap instruction */
    ISA_EXC_EXCHANGE,          /* bad exchange (no fabric, bad descriptor, ...) */
    ISA_EXC_RUN,               /* run/runall misuse, exit with workers running */
    ISA_EXC_UNIMPLEMENTED,     /* instruction semantics missing: a bug in ipusim */
};

typedef struct isa_fault {
    uint8_t exception;         /* enum isa_exception */
    uint8_t context;           /* 0 = supervisor, 1..6 = workers */
    uint32_t pc;
    uint32_t word;             /* the instruction's encoding */
    uint32_t address;          /* data address involved, if any */
    char message[160];         /* human-readable reason */
} isa_fault;

typedef struct isa_context {
    uint32_t m[16];            /* MRF; m[15] is kept at zero */
    uint32_t a[16];            /* ARF, raw bits; a[14], a[15] kept at zero */
    uint32_t pc;
    uint32_t csr[ISA_CSR_SPACE];   /* indexed by enum isa_csr */
    uint8_t id;                /* 0 = supervisor, 1..6 = workers */
    uint8_t run_mode;          /* enum isa_run_mode */

    /* rpt: while rpt_remaining > 0, reaching rpt_end jumps back to
     * rpt_first and decrements rpt_remaining (sim/engine/tile.c does this). */
    uint32_t rpt_first, rpt_end, rpt_remaining;

    /* Main-pipeline ARF results wait here until the bundle's aux sibling has
     * read its operands (see ISA_F_ARFW): pending_a[r] is the value for $ar
     * when bit r of pending_a_mask is set. */
    uint32_t pending_a[16];
    uint16_t pending_a_mask;
    uint8_t exit_status;       /* condition result of the exit* that ended the context */

    uint64_t prng[2];          /* xoroshiro128aox state ($PRNG_*) */
    isa_amp_context amp;       /* $AACC and AMP pipeline state */
} isa_context;

typedef struct isa_tile_state {
    isa_context ctx[ISA_CONTEXTS];
    tile_memory mem;
    isa_amp_shared amp;        /* $CWEI: shared by all contexts */
    uint32_t tile_id;          /* global tile number, for messages */
    uint64_t cycle;            /* tile cycles since reset ($COUNT_L/U) */

    /* Set by the scheduler before each issue: the bytes of the instruction
     * or bundle being executed (4 or 8), so c->pc + issue_bytes is the
     * address after it (the return address of call, the start of a rpt
     * body). */
    uint8_t issue_bytes;

    /* Requests from the semantics to the scheduler. */
    uint8_t started_workers;   /* bit w set: worker w was started by run/runall */
    uint8_t sync_zone;         /* zone of the last sync (enum isa_sync_zone) */
    uint32_t trap_code;        /* operand of the last trap */

    /* The exchange this tile takes part in (exchange/exchange.h); NULL when
     * the tile runs alone, where xsend/xrecv raise ISA_EXC_EXCHANGE. */
    struct xch_log *xlog;

    isa_fault fault;           /* valid when fault.exception != ISA_EXC_NONE */
} isa_tile_state;

/* Reset: supervisor running (pc 0 until the loader sets it), workers
 * inactive, registers zero, memory of memory_bytes from memory_base empty. */
void isa_state_init(isa_tile_state *t, uint32_t tile_id, uint32_t memory_base, uint32_t memory_bytes);
void isa_state_free(isa_tile_state *t);
/* Every context's PRNG seeded from `seed`, as a host seeds a program's
 * tiles before it runs (Poplar's setSeed): context k of tile t gets the
 * state $PRNG_SEED would give it (fp_prng_seed) from a hash of seed, t and
 * k, so no two contexts of a run share a sequence and a run is the same
 * whatever runs it.  Reset leaves the state zero. */
void isa_seed_prngs(isa_tile_state *t, uint32_t seed);

#endif
