/*
 * exec_fixture.h — a small harness for instruction-semantics tests: one
 * GC200-sized tile, instructions built from an op and operand values
 * (through isa_encode and isa_decode, so every test also exercises the
 * encoding), and a dispatch that runs one executor the way the scheduler
 * would: issue_bytes set, then the executor, then the deferred ARF writes
 * committed.
 *
 *   isa_tile_state *t = fx_tile_new();
 *   isa_context *w = fx_worker(t, 1);              // worker 1, running
 *   w->m[1] = 40; w->m[2] = 2;
 *   isa_insn in = fx_insn(ISA_OP_ADD, 0, 1, 2);    // add $m0, $m1, $m2
 *   CU_ASSERT_EQUAL(fx_exec(t, w, &in), ISA_FLOW_NEXT);
 *   CU_ASSERT_EQUAL(w->m[0], 42);
 *   fx_tile_free(t);
 *
 * Operands are given in assembly order, as isa_insn.operand holds them:
 * register numbers (first register of a pair or quad), CSR numbers,
 * immediates (negative values for signed ones) and targets as byte
 * addresses.  fx_insn aborts the test program when the operands do not
 * encode: that is a bug in the test, not in the code under test.
 *
 * Header-only (static functions) so any tests/test_*.c can include it.
 */
#ifndef IPUSIM_TESTS_EXEC_FIXTURE_H
#define IPUSIM_TESTS_EXEC_FIXTURE_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/exec.h"
#include "isa/isa.h"
#include "isa/state.h"
#include "memmodel/tile_memory.h"

#define FX_MEMORY_BYTES 638976u     /* GC200/Bow: 624 KiB per tile */
#define FX_CODE_BASE    0x4c100u    /* a region 0 address to put a pc at */
#define FX_DATA0        0x50000u    /* a region 0 data address */
#define FX_DATA1        0x90000u    /* a region 1 (interleaved) data address */

static inline isa_tile_state *fx_tile_new(void)
{
    isa_init();
    isa_tile_state *t = calloc(1, sizeof *t);
    if (!t) {
        fprintf(stderr, "exec_fixture: out of memory\n");
        abort();
    }
    isa_state_init(t, 0, ISA_MEMORY_BASE, FX_MEMORY_BYTES);
    return t;
}

static inline void fx_tile_free(isa_tile_state *t)
{
    if (t) {
        isa_state_free(t);
        free(t);
    }
}

/* Worker k (1..6), marked running as if the supervisor had started it. */
static inline isa_context *fx_worker(isa_tile_state *t, unsigned k)
{
    isa_context *c = &t->ctx[k];
    c->run_mode = ISA_RUN_RUNNING;
    c->pc = FX_CODE_BASE;
    return c;
}

static inline isa_context *fx_supervisor(isa_tile_state *t)
{
    isa_context *c = &t->ctx[ISA_SUPERVISOR];
    c->pc = FX_CODE_BASE;
    return c;
}

/* Build an instruction from its operands (as many int arguments as the row
 * has operands), encoding and decoding it. */
static inline isa_insn fx_insn_v(enum isa_op op, const int32_t *operand)
{
    uint32_t word;
    char err[200];
    isa_insn in;
    if (!isa_encode(op, operand, &word, err, sizeof err)) {
        fprintf(stderr, "exec_fixture: cannot encode %s: %s\n", isa_get(op)->id, err);
        abort();
    }
    if (!isa_decode(word, &in) || in.op != op) {
        fprintf(stderr, "exec_fixture: %s encodes to 0x%08x, which does not decode back\n",
                isa_get(op)->id, word);
        abort();
    }
    return in;
}

static inline isa_insn fx_insn_va(enum isa_op op, va_list ap)
{
    isa_init();
    int32_t operand[ISA_MAX_OPERANDS] = {0};
    const isa_desc *d = isa_get(op);
    for (unsigned i = 0; i < d->n_operands; i++)
        operand[i] = va_arg(ap, int32_t);
    return fx_insn_v(op, operand);
}

static inline isa_insn fx_insn(enum isa_op op, ...)
{
    va_list ap;
    va_start(ap, op);
    isa_insn in = fx_insn_va(op, ap);
    va_end(ap);
    return in;
}

/* Call the executor of in->op (a switch generated from isa.def), nothing
 * else: no issue_bytes, no commit of deferred ARF writes. */
static inline enum isa_flow fx_dispatch(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    switch ((enum isa_op)in->op) {
#define ISA_INSN(id, ...) case ISA_OP_##id: return isa_exec_##id(t, c, in);
#include "isa/isa.def"
#undef ISA_INSN
    default:
        fprintf(stderr, "exec_fixture: no executor for op %u\n", (unsigned)in->op);
        abort();
    }
}

/* What the scheduler does with the deferred ARF writes after an issue:
 * commit them, or drop them when the issue faulted. */
static inline void fx_retire(isa_context *c, enum isa_flow f)
{
    if (f == ISA_FLOW_FAULT)
        c->pending_a_mask = 0;
    else
        isa_commit_pending(c);
}

/* Execute one solo instruction as the scheduler would: issue_bytes 4, the
 * executor, then the deferred ARF writes committed (dropped on a fault). */
static inline enum isa_flow fx_exec(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    t->issue_bytes = ISA_INSN_BYTES;
    enum isa_flow f = fx_dispatch(t, c, in);
    fx_retire(c, f);
    return f;
}

/* Execute a bundle as the scheduler does (sim/engine/tile.c): the main
 * instruction, then, unless it faulted, the aux one at the same pc
 * (issue_bytes 8), whose flow wins when it is not NEXT; only then are the
 * main instruction's deferred ARF writes committed, so the aux instruction
 * reads the ARF as it was. */
static inline enum isa_flow fx_exec_bundle(isa_tile_state *t, isa_context *c,
                                           const isa_insn *main_insn, const isa_insn *aux_insn)
{
    t->issue_bytes = ISA_BUNDLE_BYTES;
    enum isa_flow f = fx_dispatch(t, c, main_insn);
    if (f != ISA_FLOW_FAULT) {
        enum isa_flow g = fx_dispatch(t, c, aux_insn);
        if (g != ISA_FLOW_NEXT)
            f = g;
    }
    fx_retire(c, f);
    return f;
}

/* Build and execute in one go: fx_run(t, c, ISA_OP_ADD, 0, 1, 2). */
static inline enum isa_flow fx_run(isa_tile_state *t, isa_context *c, enum isa_op op, ...)
{
    va_list ap;
    va_start(ap, op);
    isa_insn in = fx_insn_va(op, ap);
    va_end(ap);
    return fx_exec(t, c, &in);
}

/* Tile memory without the access rules (loader-style). */
static inline void fx_poke(isa_tile_state *t, uint32_t addr, const void *src, size_t n)
{
    if (tmem_write_bytes(&t->mem, addr, src, n) != TMEM_OK) {
        fprintf(stderr, "exec_fixture: cannot write %zu bytes at 0x%x\n", n, addr);
        abort();
    }
}

static inline void fx_peek(const isa_tile_state *t, uint32_t addr, void *dst, size_t n)
{
    if (tmem_read_bytes(&t->mem, addr, dst, n) != TMEM_OK) {
        fprintf(stderr, "exec_fixture: cannot read %zu bytes at 0x%x\n", n, addr);
        abort();
    }
}

static inline void fx_poke32(isa_tile_state *t, uint32_t addr, uint32_t v) { fx_poke(t, addr, &v, 4); }
static inline void fx_poke64(isa_tile_state *t, uint32_t addr, uint64_t v) { fx_poke(t, addr, &v, 8); }
static inline uint32_t fx_peek32(const isa_tile_state *t, uint32_t addr) { uint32_t v; fx_peek(t, addr, &v, 4); return v; }
static inline uint64_t fx_peek64(const isa_tile_state *t, uint32_t addr) { uint64_t v; fx_peek(t, addr, &v, 8); return v; }

/* The fault recorded by the last raise, cleared for the next check. */
static inline isa_fault fx_take_fault(isa_tile_state *t)
{
    isa_fault f = t->fault;
    memset(&t->fault, 0, sizeof t->fault);
    return f;
}

#endif
