/*
 * exec.h — the contract between instruction semantics (isa/exec_*.c) and
 * the tile scheduler (sim/engine/tile.c).
 *
 * Every row of isa.def has an executor
 *
 *     enum isa_flow isa_exec_<ID>(isa_tile_state *t, isa_context *c, const isa_insn *in);
 *
 * that applies the instruction's effect on architectural state and says how
 * the context's control flow continues.  t->issue_bytes is the size (4 or 8)
 * of the instruction or bundle being issued: c->pc + t->issue_bytes is the
 * address after it.  Executors decide values, never
 * time: latencies come from the row's cost class and the machine
 * description.  On entry c->pc is the address of the instruction (of its
 * bundle, for an aux instruction).  An executor that raises an exception
 * fills t->fault with isa_raise() and returns ISA_FLOW_FAULT, leaving
 * architectural state as it was before the instruction where it can.
 */
#ifndef IPUSIM_ISA_EXEC_H
#define IPUSIM_ISA_EXEC_H

#include <stdarg.h>
#include <string.h>

#include "state.h"

enum isa_flow {
    ISA_FLOW_NEXT = 0,  /* continue after this instruction (rpt looping applies) */
    ISA_FLOW_JUMP,      /* continue at c->pc, which the executor has set */
    ISA_FLOW_STALL,     /* cannot proceed now (run with no free worker): re-issue later */
    ISA_FLOW_EXIT,      /* the context has ended (worker exit, supervisor end of program) */
    ISA_FLOW_SYNC,      /* supervisor reached a sync; t->sync_zone says which */
    ISA_FLOW_FAULT,     /* exception recorded in t->fault */
};

#define ISA_INSN(id, mn, ops, major, funct, pipe, cost, flags) \
    enum isa_flow isa_exec_##id(isa_tile_state *t, isa_context *c, const isa_insn *in);
#include "isa.def"
#undef ISA_INSN

/* Record an exception raised by context c at c->pc; returns ISA_FLOW_FAULT. */
enum isa_flow isa_raise(isa_tile_state *t, const isa_context *c, const isa_insn *in,
                        enum isa_exception exc, uint32_t address, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* Register access helpers.  $m15, $a15 (and $a14 as half of $azeros) read
 * as zero and ignore writes.  $m12 and $m13 read a worker's $WORKER_BASE
 * and $VERTEX_BASE (0 on the supervisor) and ignore writes (ISA2 Table
 * 2.4): c->m[12] and c->m[13] mirror those CSRs, kept in step by run,
 * runall and put (isa_sync_base_registers). */
static inline uint32_t isa_m(const isa_context *c, int r) { return c->m[r]; }
static inline void isa_set_m(isa_context *c, int r, uint32_t v) { if (r < 12 || r == 14) c->m[r] = v; }
static inline void isa_sync_base_registers(isa_context *c)
{
    c->m[12] = c->id == ISA_SUPERVISOR ? 0 : c->csr[ISA_CSR_WORKER_BASE];
    c->m[13] = c->id == ISA_SUPERVISOR ? 0 : c->csr[ISA_CSR_VERTEX_BASE];
}
static inline uint32_t isa_a(const isa_context *c, int r) { return c->a[r]; }
static inline void isa_set_a(isa_context *c, int r, uint32_t v) { if (r < 14) c->a[r] = v; }

static inline float isa_bits_f32(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }
static inline uint32_t isa_f32_bits(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }

/* Queue an ARF write from a main-pipeline instruction (ISA_F_ARFW): n
 * consecutive registers from reg; may be called several times for one
 * instruction.  Committed by isa_commit_pending(). */
static inline void isa_defer_a(isa_context *c, int reg, const uint32_t *v, int n)
{
    for (int i = 0; i < n && reg + i < 16; i++) {
        c->pending_a[reg + i] = v[i];
        c->pending_a_mask |= (uint16_t)(1u << (reg + i));
    }
}

static inline void isa_commit_pending(isa_context *c)
{
    uint32_t mask = c->pending_a_mask;
    while (mask) {
        int r = __builtin_ctz(mask);
        isa_set_a(c, r, c->pending_a[r]);
        mask &= mask - 1;
    }
    c->pending_a_mask = 0;
}

/* CSR access with its side effects (isa/csr.c): reading $COUNT_L/U gives
 * t->cycle, writing $FP_CLR clears the accumulators and status bits it
 * names, writing $PRNG_SEED seeds the PRNG, ...  Raise ISA_EXC_INVALID_OPERAND
 * for an unknown CSR, a read-only one written, or a supervisor CSR reached
 * from a worker. */
enum isa_flow isa_csr_read(isa_tile_state *t, isa_context *c, const isa_insn *in,
                           unsigned csr, uint32_t *value);
enum isa_flow isa_csr_write(isa_tile_state *t, isa_context *c, const isa_insn *in,
                            unsigned csr, uint32_t value);

/*
 * Semantics the scheduler relies on (ipusim's definitions where ISA2 is
 * silent or does not publish the instruction):
 *
 * run $entry, $vbase, $dst      start the lowest-numbered inactive worker at
 *                               $entry with $VERTEX_BASE = $vbase, $FP_CTL =
 *                               the supervisor's $FP_ICTL; its number (1..6)
 *                               goes to $dst.  No inactive worker: STALL.
 * runall $entry, $vbase, $step  start all six workers; worker k (1..6) gets
 *                               $VERTEX_BASE = $vbase + (k-1) * $step.  Any
 *                               worker still running: STALL.
 *   Both set bit k of t->started_workers for every worker started.
 *   A worker's $WSR bits 2..0 hold its worker index k-1 (0..5).
 *   Starting a worker sets only its pc, $VERTEX_BASE, $FP_CTL, $FP_STS
 *   and $WSR: its $m and $a registers (and its AMP accumulators) keep what
 *   the context's previous run left, as on the hardware, and codelets may
 *   rely on that between launches of one call (workloads/codelets/
 *   matmul.S keeps its pointers across weight blocks) — and must not
 *   assume any register is zero at entry.
 * sync zone                     zone 0: wait (STALL) until no worker runs;
 *                               zones 1, 2 and 3: the same wait, then
 *                               return SYNC with t->sync_zone set and c->pc
 *                               left on the sync; whoever releases the
 *                               barrier (zone 3: the end of the exchange
 *                               phase, no barrier) moves the pc past it.
 *                               Other zones: INVALID_OPERAND.
 * exit* $m (worker)             ends the worker (run_mode = INACTIVE, EXIT);
 *                               the condition (e.g. $m == 0 for exitz) is
 *                               its exit status, kept in c->exit_status
 *                               (ISA2 3.7.2: the condition is the status a
 *                               vertex returns, not whether it exits).
 * exit* $m (supervisor)         ends the tile's program the same way:
 *                               workers still running is ISA_EXC_RUN; else
 *                               run_mode = DONE, EXIT.
 * trap n                        t->trap_code = n, raise ISA_EXC_BREAK.
 * rpt count, size               the body is the (size+1) bundles that follow
 *                               the rpt; it must start 8-byte aligned
 *                               (ISA_EXC_RPT otherwise).  Sets rpt_first,
 *                               rpt_end and rpt_remaining (the number of
 *                               times the body runs); if that is zero, sets
 *                               c->pc = rpt_end and returns JUMP, else NEXT.
 *                               The scheduler loops the body and rejects
 *                               control instructions inside it.
 */

/* Name of an exception, for messages ("memory conflict"). */
const char *isa_exception_name(enum isa_exception exc);
/* What a kernel-library codelet means by trap `code`, and (into *file) the
 * codelet's source; NULL for a code no codelet raises.  The codes are the
 * codelets' own (the headers in workloads/codelets/): tests/test_exec_control.c holds
 * the two in step. */
const char *isa_codelet_trap_meaning(uint32_t code, const char **file);

#endif
