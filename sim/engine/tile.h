/*
 * tile.h — the timing model of one tile: barrel-threaded issue of the
 * supervisor and six workers, latencies, zero-overhead repeat, and the
 * loader that puts a tile's part of an executable into its memory.
 *
 * What is modelled (ISA2 §2.3–2.6, IPU_FACTS.md):
 *   - six execution slots served round-robin, one slot per tile cycle; a
 *     worker owns one slot from `run` until it exits, the supervisor owns
 *     every other slot and may issue in each of them (so it issues every
 *     cycle when no worker runs);
 *   - a context issues at most one instruction or bundle per turn; after an
 *     instruction of latency L worker cycles it waits L turns (6 L tile
 *     cycles) before its next issue (the latency classes are machine
 *     parameters);
 *   - a bundle (main + aux) is one issue; the aux half reads its operands
 *     before the main half's ARF results are written;
 *   - rpt bodies loop with no issue overhead; control instructions inside
 *     a body raise an exception;
 *   - a branch to an address that is 4 but not 8 byte aligned costs
 *     branch_misaligned_penalty_cycles more;
 *   - exchange instructions (exchange/exchange.h): the first after a sync
 *     holds the supervisor exchange_setup_cycles more, an xsend of b bytes
 *     ceil(b / exchange_send_bytes_per_cycle) more while its data leave;
 *     the scheduler stamps when the transfer starts
 *     (xch_transfer.start_cycle).
 *
 * What is approximated or not modelled:
 *   - results are visible to the next instruction of the same context at
 *     once; the supervisor's register hazards (which real code covers with
 *     nops) are not checked;
 *   - instruction fetch never stalls; code is decoded once when loaded, so
 *     a program that overwrites its own code keeps running the old code;
 *   - a supervisor that stalls (run with no free worker, sync waiting for
 *     workers) retries once a worker exits.
 *
 * A tile touches nothing outside its ipu_tile, so tiles run on different
 * host threads between syncs give the same results as one thread.
 */
#ifndef IPUSIM_TILE_H
#define IPUSIM_TILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "isa/state.h"
#include "sim/program/machine.h"
#include "isa/elf/executable.h"

/* Why an address cannot be issued from (tile_decoded.invalid). */
enum tile_decode_error {
    TILE_DECODE_OK = 0,
    TILE_DECODE_NOT_CODE,        /* not inside an executable section */
    TILE_DECODE_ILLEGAL,         /* no instruction has this encoding */
    TILE_DECODE_BUNDLE_ALIGN,    /* co-issue bit on a word at 4 mod 8 */
    TILE_DECODE_BUNDLE_TRUNC,    /* co-issue bit on the last word of code */
    TILE_DECODE_BUNDLE_PIPES,    /* bundle halves are not main + aux */
};

/* A debugger breakpoint, set on top of the decode error in
 * tile_decoded.invalid: the issue path tests `invalid != 0` once for
 * both, so breakpoints cost nothing while none is set (tile_set_breakpoint). */
#define TILE_DECODE_BREAKPOINT 0x80u

/* Exchange instructions, which the scheduler times (exchange/exchange.h). */
enum tile_exchange_op { TILE_XCH_NONE = 0, TILE_XCH_SEND, TILE_XCH_RECV };

/* One decoded issue: a solo instruction or a bundle. */
typedef struct tile_decoded {
    isa_insn main;               /* the instruction (or the bundle's main half) */
    isa_insn aux;                /* the bundle's aux half */
    uint32_t flags;              /* the rows' flags: permissions ANDed, others ORed */
    uint16_t issue_cycles;       /* tile cycles before the context may issue again */
    uint8_t bytes;               /* 4 or 8 */
    uint8_t invalid;             /* enum tile_decode_error | TILE_DECODE_BREAKPOINT */
    uint16_t amp_macs;           /* MACs this issue performs in the AMP */
    uint8_t amp_f32;             /* those MACs are f32 */
    uint8_t exchange;            /* enum tile_exchange_op: xsend / xrecv */
} tile_decoded;

/* Decoded code shared by the tiles whose code is the same bytes at the
 * same addresses (every tile of a compiled program carries the same kernel
 * library): decoded once, read by all; a tile that sets a breakpoint gets a
 * private copy first.  Owned by whoever loads the tiles (the engine),
 * freed after them. */
typedef struct tile_code_cache tile_code_cache;
tile_code_cache *tile_code_cache_new(void);
void tile_code_cache_free(tile_code_cache *c);

/* Statistics of a tile.  The issue loop counts only issues per address
 * (tile_decoded.count), supervisor issues, idle slots and exchange stalls;
 * the rest is derived from those counts by tile_collect_stats, which
 * tile_run_alone calls before it returns (a pass over the tile's code: the
 * engine calls it once, at the end of a run, and takes each superstep's
 * instructions and MACs from the running totals ipu_tile.issued_*). */
typedef struct tile_stats {
    uint64_t instructions;       /* instructions executed (a bundle counts 2) */
    uint64_t issues;             /* solo instructions + bundles */
    uint64_t supervisor_issues;
    uint64_t worker_issues;
    uint64_t idle_slot_cycles;   /* cycles whose slot owner could not issue */
    uint64_t amp_f16_macs;
    uint64_t amp_f32_macs;
    uint64_t syncs;              /* syncs of zone 1, 2 or 3 passed */
    uint64_t exchange_stall_cycles; /* cycles the supervisor waited after exchange
                                       instructions (set-up, data leaving the tile) */
    uint64_t op_count[ISA_OP_COUNT];
} tile_stats;

enum tile_stop {
    TILE_STOP_END,               /* the supervisor ended the program */
    TILE_STOP_SYNC,              /* the supervisor reached a chip/system sync */
    TILE_STOP_FAULT,             /* simulated exception: see s.fault */
    TILE_STOP_LIMIT,             /* reached the cycle limit */
    TILE_STOP_BREAK,             /* a context was about to issue at a breakpoint: nothing
                                    of that issue happened (break_pc, break_context) */
};

typedef struct ipu_tile {
    isa_tile_state s;            /* architectural state */
    uint32_t tile_id;            /* global tile number */
    tile_decoded *code;          /* one entry per 4 bytes of [code_base, code_end) */
    bool code_shared;            /* code belongs to a tile_code_cache */
    uint64_t *counts;            /* times issued, per 4 bytes of code: the statistics derive from these */
    uint64_t issued_instructions;       /* running totals of what counts add up to, for the */
    uint64_t issued_amp_macs[2];        /* engine's per-superstep figures ([1]: f32 MACs) */
    uint32_t code_base, code_end;
    uint8_t slot_owner[ISA_WORKERS];    /* context issuing in each slot */
    uint8_t slot;                /* slot of s.cycle */
    uint64_t ready_cycle[ISA_CONTEXTS]; /* earliest cycle each context may issue */
    uint16_t cost_cycles[ISA_COST_COUNT];
    uint16_t amp_peak_macs[2];   /* machine: AMP MACs a tile cycle, [0] f16, [1] f32 */
    uint16_t branch_penalty_cycles;
    uint32_t exchange_setup_cycles;       /* machine: exchange_setup_cycles */
    uint32_t exchange_send_bytes_per_cycle;
    bool loaded;                 /* has code (false: an idle tile) */
    /* Breakpoints: where the last TILE_STOP_BREAK stopped, and whether the
     * next issue there goes ahead (tile_step_over_break). */
    uint32_t break_pc;
    uint8_t break_context;
    bool break_skip;
    tile_stats stats;
} ipu_tile;

/* Reset a tile for machine m.  Returns false if the host is out of memory. */
bool tile_init(ipu_tile *t, const machine *m, uint32_t tile_id);
void tile_free(ipu_tile *t);

/* Put tile_id's sections of e into memory, decode its code and point the
 * supervisor at its entry.  A tile with no sections in e stays idle.
 * Errors (section outside tile memory, code outside region 0, code without
 * an entry) name the tile, section and addresses. */
bool tile_load(ipu_tile *t, const ipu_exe *e, char *err, size_t err_size);
/* The same from the sections e->sections[idx[0..n)] (the tile's own, in
 * file order), sharing decoded code through cache (may be NULL). */
bool tile_load_sections(ipu_tile *t, const ipu_exe *e, const size_t *idx, size_t n, tile_code_cache *cache,
                        char *err, size_t err_size);

/* Issue until the program ends, the supervisor syncs (zone 1, 2 or 3), an
 * exception, a breakpoint, or s.cycle reaches cycle_limit.  A run split at
 * any cycle limits, or stopped at breakpoints and resumed with
 * tile_step_over_break, gives exactly the state and counts of one run. */
enum tile_stop tile_run(ipu_tile *t, uint64_t cycle_limit);

/* Derive the counts of tile_stats from the per-address issue counts. */
void tile_collect_stats(ipu_tile *t);

/* Let the supervisor continue past the sync it stopped at. */
void tile_release_sync(ipu_tile *t);

/* Move a stopped tile's clock forward to `cycle` (no-op if it is not
 * later): the cycles in between issue nothing and are not counted as idle
 * slots (the engine counts them as sync or exchange waiting).  The barrel
 * slot follows the cycle (slot = cycle mod 6). */
void tile_advance_to(ipu_tile *t, uint64_t cycle);

/* Run a lone tile to the end of its program: syncs are released at once
 * (there is no other tile to wait for). */
enum tile_stop tile_run_alone(ipu_tile *t, uint64_t cycle_limit);

/* "tile 0, worker 3, pc 0x4c01c (kernel.S:42, in loop+0x1c): memory conflict:
 * ...\n    ld2x64pace $a0:1, ..." — e may be NULL (no symbols or lines). */
void tile_describe_fault(const ipu_tile *t, const ipu_exe *e, char *buf, size_t n);

/* The decoded issue at pc, or NULL when pc is outside the tile's code. */
const tile_decoded *tile_decoded_at(const ipu_tile *t, uint32_t pc);

/* Set or clear a breakpoint at pc: tile_run stops with TILE_STOP_BREAK
 * before any context issues there.  False when pc is not the first word
 * of an issue inside the tile's code (outside it, misaligned, or the aux
 * half of a bundle). */
bool tile_set_breakpoint(ipu_tile *t, uint32_t pc, bool on);
bool tile_breakpoint_at(const ipu_tile *t, uint32_t pc);
/* After TILE_STOP_BREAK: let the issue that stopped go ahead when the tile
 * runs again (the breakpoint stays set for later visits). */
void tile_step_over_break(ipu_tile *t);

#endif
