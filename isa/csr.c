/*
 * csr.c — control and status register access with its side effects, for
 * get/put (main pipeline) and uget/uput (aux pipeline).
 *
 * The registers and their numbers are csr.def's; their behaviour follows
 * ISA2 §2.7.5:
 *   $PC            the context's pc (read-only)
 *   $REPEAT_COUNT  the rpt state: bodies still to run, the body's first
 *   $REPEAT_FIRST  address and the address after it (read-only views of
 *   $REPEAT_END    rpt_remaining / rpt_first / rpt_end)
 *   $COUNT_L/U     the low and high words of the tile cycle counter
 *   $DBG_DATA      one register shared by every context (§2.7.5.2.10);
 *                  kept in the supervisor's CSR array
 *   $FP_CLR        write-1-to-clear: bits 0..2 (INV, DIV0, OFLO) clear the
 *                  same bits of $FP_STS, bit 3 (ZAACC) zeroes all of the
 *                  context's $AACC accumulators (§2.7.5.2.13); reads 0
 *   $FP_CTL        INV/DIV0/OFLO enables [2:0], ESR [19], NANOO [20] are
 *   $FP_ICTL       writable; RND [18:16] reads as round-to-nearest-even (the
 *                  only mode implemented, writes to it are ignored)
 *   $PRNG_x_y      the 32-bit halves of the xoroshiro128aox state: x picks
 *                  the 64-bit word (prng[x]), y = 0 its low and 1 its high
 *                  half (§2.7.5.2.15-18)
 *   $PRNG_SEED     write seeds the state (fp_prng_seed, §2.7.5.2.19); reads 0
 *   $CTXT_STS      2 bits per context, supervisor in [1:0], worker k in
 *                  [2k+1:2k]: 0 inactive, 1 active, 3 excepted
 *                  (TileCtxtStatus); the exchange/memory error bits are 0
 * Every other register is storage in the context's csr[] array.
 *
 * Errors (ISA_EXC_INVALID_OPERAND, ISA2 TReg_IsValidCSR /
 * TReg_WriteException): an unknown number, a supervisor-only register from a
 * worker, a write to a read-only register.
 */
#include "exec.h"
#include "fp16.h"

#define FP_STS_FLAGS   0x7u          /* INV, DIV0, OFLO */
#define FP_CLR_ZAACC   (1u << 3)
#define FP_CTL_WRITABLE 0x00180007u  /* INV, DIV0, OFLO, ESR, NANOO */

/* TileCtxtStatus (ISA2 §2.7.5.1.3). */
enum { CTXT_INACTIVE = 0, CTXT_ACTIVE = 1, CTXT_EXCEPTED = 3 };

static const char *mnemonic_of(const isa_insn *in, const char *fallback)
{
    const isa_desc *d = in ? isa_get((enum isa_op)in->op) : NULL;
    return d ? d->mnemonic : fallback;
}

/* Validity shared by reads and writes; returns NEXT or a raised fault. */
static enum isa_flow check_csr(isa_tile_state *t, const isa_context *c, const isa_insn *in,
                               unsigned csr, const char *verb)
{
    const char *name = isa_csr_name(csr);
    if (!name)
        return isa_raise(t, c, in, ISA_EXC_INVALID_OPERAND, 0,
                         "%s: there is no control register number 0x%02x", mnemonic_of(in, verb), csr);
    if (isa_csr_supervisor_only(csr) && c->id != ISA_SUPERVISOR)
        return isa_raise(t, c, in, ISA_EXC_INVALID_OPERAND, 0,
                         "%s: $%s is a supervisor register; worker %u cannot reach it",
                         mnemonic_of(in, verb), name, c->id);
    return ISA_FLOW_NEXT;
}

static uint32_t context_status(const isa_context *c)
{
    switch (c->run_mode) {
    case ISA_RUN_RUNNING:
    case ISA_RUN_SYNC:
        return CTXT_ACTIVE;
    case ISA_RUN_FAULTED:
        return CTXT_EXCEPTED;
    default:
        return CTXT_INACTIVE;
    }
}

enum isa_flow isa_csr_read(isa_tile_state *t, isa_context *c, const isa_insn *in,
                           unsigned csr, uint32_t *value)
{
    enum isa_flow f = check_csr(t, c, in, csr, "get");
    if (f != ISA_FLOW_NEXT)
        return f;
    uint32_t v;
    switch (csr) {
    case ISA_CSR_PC:           v = c->pc; break;
    case ISA_CSR_REPEAT_COUNT: v = c->rpt_remaining; break;
    case ISA_CSR_REPEAT_FIRST: v = c->rpt_first; break;
    case ISA_CSR_REPEAT_END:   v = c->rpt_end; break;
    case ISA_CSR_COUNT_L:      v = (uint32_t)t->cycle; break;
    case ISA_CSR_COUNT_U:      v = (uint32_t)(t->cycle >> 32); break;
    case ISA_CSR_DBG_DATA:     v = t->ctx[ISA_SUPERVISOR].csr[ISA_CSR_DBG_DATA]; break;
    case ISA_CSR_FP_CLR:       v = 0; break;
    case ISA_CSR_PRNG_SEED:    v = 0; break;
    case ISA_CSR_PRNG_0_0:     v = (uint32_t)c->prng[0]; break;
    case ISA_CSR_PRNG_0_1:     v = (uint32_t)(c->prng[0] >> 32); break;
    case ISA_CSR_PRNG_1_0:     v = (uint32_t)c->prng[1]; break;
    case ISA_CSR_PRNG_1_1:     v = (uint32_t)(c->prng[1] >> 32); break;
    case ISA_CSR_CTXT_STS:
        v = 0;
        for (unsigned k = 0; k < ISA_CONTEXTS; k++)
            v |= context_status(&t->ctx[k]) << (2 * k);
        break;
    default:                   v = c->csr[csr]; break;
    }
    *value = v;
    return ISA_FLOW_NEXT;
}

static void set_half(uint64_t *word, int high, uint32_t v)
{
    if (high)
        *word = (*word & 0xffffffffull) | ((uint64_t)v << 32);
    else
        *word = (*word & ~0xffffffffull) | v;
}

enum isa_flow isa_csr_write(isa_tile_state *t, isa_context *c, const isa_insn *in,
                            unsigned csr, uint32_t value)
{
    enum isa_flow f = check_csr(t, c, in, csr, "put");
    if (f != ISA_FLOW_NEXT)
        return f;
    if (!isa_csr_writable(csr))
        return isa_raise(t, c, in, ISA_EXC_INVALID_OPERAND, 0,
                         "%s: $%s is read-only", mnemonic_of(in, "put"), isa_csr_name(csr));
    switch (csr) {
    case ISA_CSR_DBG_DATA:
        t->ctx[ISA_SUPERVISOR].csr[ISA_CSR_DBG_DATA] = value;
        break;
    case ISA_CSR_FP_CLR:
        c->csr[ISA_CSR_FP_STS] &= ~(value & FP_STS_FLAGS);
        if (value & FP_CLR_ZAACC)
            isa_amp_clear(&c->amp);
        break;
    case ISA_CSR_FP_CTL:
    case ISA_CSR_FP_ICTL:
        c->csr[csr] = value & FP_CTL_WRITABLE;
        break;
    case ISA_CSR_PRNG_0_0: set_half(&c->prng[0], 0, value); break;
    case ISA_CSR_PRNG_0_1: set_half(&c->prng[0], 1, value); break;
    case ISA_CSR_PRNG_1_0: set_half(&c->prng[1], 0, value); break;
    case ISA_CSR_PRNG_1_1: set_half(&c->prng[1], 1, value); break;
    case ISA_CSR_PRNG_SEED:
        fp_prng_seed(c->prng, value);
        break;
    case ISA_CSR_VERTEX_BASE:
    case ISA_CSR_WORKER_BASE:
        c->csr[csr] = value;
        isa_sync_base_registers(c);
        break;
    default:
        c->csr[csr] = value;
        break;
    }
    return ISA_FLOW_NEXT;
}
