/*
 * tile.c — barrel-threaded issue, the tile's timing model (see tile.h).
 */
#include "tile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "isa/amp.h"
#include "isa/asm/disasm.h"
#include "isa/exec.h"
#include "exchange/exchange.h"

static inline enum isa_flow dispatch(isa_tile_state *s, isa_context *c, const isa_insn *in)
{
    switch ((enum isa_op)in->op) {
#define ISA_INSN(id, mn, ops, major, funct, pipe, cost, flags) \
    case ISA_OP_##id: return isa_exec_##id(s, c, in);
#include "isa/isa.def"
#undef ISA_INSN
    default:
        return isa_raise(s, c, in, ISA_EXC_INVALID_INSTR, 0, "illegal instruction 0x%08x", in->word);
    }
}

bool tile_init(ipu_tile *t, const machine *m, uint32_t tile_id)
{
    memset(t, 0, sizeof *t);
    t->tile_id = tile_id;
    isa_state_init(&t->s, tile_id, machine_memory_base(m), machine_u32(m, MP_tile_memory_bytes));
    /* A worker cycle is one turn of the barrel: ISA_WORKERS tile cycles. */
    static const enum machine_param cost_param[ISA_COST_COUNT] = {
        [ISA_COST_1] = MP_COUNT,
        [ISA_COST_F32DIV] = MP_f32div_latency_worker_cycles,
        [ISA_COST_F32SQRT] = MP_f32sqrt_latency_worker_cycles,
        [ISA_COST_F32EXP] = MP_f32exp_latency_worker_cycles,
        [ISA_COST_F32LOG] = MP_f32log_latency_worker_cycles,
        [ISA_COST_F32SIGM] = MP_f32sigm_latency_worker_cycles,
        [ISA_COST_F32OOX] = MP_f32oox_latency_worker_cycles,
        [ISA_COST_F32OORX] = MP_f32oorx_latency_worker_cycles,
        [ISA_COST_F16TRANS] = MP_f16trans_latency_worker_cycles,
    };
    for (int k = 0; k < ISA_COST_COUNT; k++) {
        uint32_t worker_cycles = cost_param[k] == MP_COUNT ? 1u : machine_u32(m, cost_param[k]);
        t->cost_cycles[k] = (uint16_t)(worker_cycles * ISA_WORKERS);
    }
    t->amp_peak_macs[0] = (uint16_t)machine_u32(m, MP_amp_f16_peak_macs_per_cycle);
    t->amp_peak_macs[1] = (uint16_t)machine_u32(m, MP_amp_f32_peak_macs_per_cycle);
    t->branch_penalty_cycles = (uint16_t)machine_u32(m, MP_branch_misaligned_penalty_cycles);
    t->exchange_setup_cycles = machine_u32(m, MP_exchange_setup_cycles);
    t->exchange_send_bytes_per_cycle = machine_u32(m, MP_exchange_send_bytes_per_cycle);
    if (t->exchange_send_bytes_per_cycle == 0)
        t->exchange_send_bytes_per_cycle = 1;
    /* Until a program is loaded the supervisor has nothing to run. */
    t->s.ctx[ISA_SUPERVISOR].run_mode = ISA_RUN_DONE;
    return true;
}

/* The issue counts of n code words, zero.  A tile runs only a few of the
 * kernel library's codelets, so the counts are mapped from the system's
 * zero pages: only the pages of code the tile issues take host memory (a
 * POD64's 94,208 tiles count 7 GB of words).  A header before them holds
 * the mapping's length (0: from calloc, where mapping failed). */
#define COUNTS_HEADER_BYTES 64u

static uint64_t *counts_new(uint32_t n_words)
{
    size_t len = COUNTS_HEADER_BYTES + (size_t)n_words * sizeof(uint64_t);
    uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        if (!(p = calloc(1, len)))
            return NULL;
        len = 0;
    }
    memcpy(p, &len, sizeof len);
    return (uint64_t *)(void *)(p + COUNTS_HEADER_BYTES);
}

static void counts_free(uint64_t *counts)
{
    if (!counts)
        return;
    uint8_t *p = (uint8_t *)counts - COUNTS_HEADER_BYTES;
    size_t len;
    memcpy(&len, p, sizeof len);
    if (len)
        munmap(p, len);
    else
        free(p);
}

void tile_free(ipu_tile *t)
{
    if (!t->code_shared)
        free(t->code);
    t->code = NULL;
    counts_free(t->counts);
    t->counts = NULL;
    isa_state_free(&t->s);
}

/* ---- decoded code shared between tiles ----------------------------------- */

typedef struct code_entry {
    uint32_t lo, hi;
    uint8_t *image;              /* the code bytes of [lo, hi), non-code words zero */
    uint8_t *is_code;            /* per word */
    tile_decoded *decoded;
} code_entry;

struct tile_code_cache {
    code_entry *entries;
    size_t n, cap;
};

tile_code_cache *tile_code_cache_new(void)
{
    return calloc(1, sizeof(tile_code_cache));
}

void tile_code_cache_free(tile_code_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        free(c->entries[i].image);
        free(c->entries[i].is_code);
        free(c->entries[i].decoded);
    }
    free(c->entries);
    free(c);
}

/* Decode the issue starting at word index i of the tile's code. */
static void decode_at(ipu_tile *t, const uint8_t *is_code, uint32_t i, uint32_t n_words)
{
    tile_decoded *d = &t->code[i];
    uint32_t pc = t->code_base + 4 * i;
    memset(d, 0, sizeof *d);
    d->bytes = 4;
    if (!is_code[i]) {
        d->invalid = TILE_DECODE_NOT_CODE;
        return;
    }
    uint32_t w0 = 0, w1 = 0;
    tmem_read_bytes(&t->s.mem, pc, &w0, 4);
    if (!isa_decode(w0, &d->main)) {
        d->invalid = TILE_DECODE_ILLEGAL;
        return;
    }
    const isa_desc *dm = isa_get(d->main.op);
    d->flags = dm->flags;
    uint8_t cost = dm->cost;
    if (w0 & ISA_COISSUE_BIT) {
        if (pc & 7) {
            d->invalid = TILE_DECODE_BUNDLE_ALIGN;
            return;
        }
        if (i + 1 >= n_words || !is_code[i + 1]) {
            d->invalid = TILE_DECODE_BUNDLE_TRUNC;
            return;
        }
        tmem_read_bytes(&t->s.mem, pc + 4, &w1, 4);
        if (!isa_decode(w1, &d->aux)) {
            d->invalid = TILE_DECODE_ILLEGAL;
            return;
        }
        const isa_desc *da = isa_get(d->aux.op);
        if (dm->pipe != ISA_PIPE_MAIN || da->pipe != ISA_PIPE_AUX) {
            d->invalid = TILE_DECODE_BUNDLE_PIPES;
            return;
        }
        const uint32_t perms = ISA_F_SUP | ISA_F_WRK;
        d->flags = ((dm->flags & da->flags) & perms) | ((dm->flags | da->flags) & ~perms);
        /* The supervisor has no aux pipeline, so it cannot issue bundles. */
        d->flags &= ~ISA_F_SUP;
        if (t->cost_cycles[da->cost] > t->cost_cycles[cost])
            cost = da->cost;
        d->bytes = 8;
    }
    d->issue_cycles = t->cost_cycles[cost];
    const isa_insn *amp = (d->flags & ISA_F_AMP) ? (isa_get(d->main.op)->flags & ISA_F_AMP ? &d->main : &d->aux) : NULL;
    if (amp) {
        d->amp_macs = (uint16_t)isa_amp_insn_macs(amp);
        d->amp_f32 = amp->op == ISA_OP_AMP_F32SISO || amp->op == ISA_OP_AMP_F32SISOV2;
        /* A form doing more MACs than the machine's AMP does in a tile
         * cycle (f16v4hihov4amp and f32sisov2amp use both engine sets; GC2
         * has one) takes as many worker cycles as the AMP needs for it. */
        uint32_t full = isa_amp_macs((enum isa_op)amp->op), peak = t->amp_peak_macs[d->amp_f32];
        uint32_t need = (full + peak - 1) / peak * ISA_WORKERS;
        if (need > d->issue_cycles)
            d->issue_cycles = (uint16_t)need;
    }
    if (d->main.op == ISA_OP_XSEND)
        d->exchange = TILE_XCH_SEND;
    else if (d->main.op == ISA_OP_XRECV)
        d->exchange = TILE_XCH_RECV;
}

bool tile_load(ipu_tile *t, const ipu_exe *e, char *err, size_t err_size)
{
    size_t n = 0;
    size_t *idx = malloc((e->n_sections + 1) * sizeof *idx);
    if (!idx) {
        snprintf(err, err_size, "tile %u: out of host memory", t->tile_id);
        return false;
    }
    for (size_t i = 0; i < e->n_sections; i++)
        if (e->sections[i].tile == t->tile_id)
            idx[n++] = i;
    bool ok = tile_load_sections(t, e, idx, n, NULL, err, err_size);
    free(idx);
    return ok;
}

bool tile_load_sections(ipu_tile *t, const ipu_exe *e, const size_t *idx, size_t n_idx, tile_code_cache *cache,
                        char *err, size_t err_size)
{
    const tile_memory *mem = &t->s.mem;
    uint32_t mem_end = mem->base + mem->size_bytes;
    uint32_t code_lo = UINT32_MAX, code_hi = 0;
    bool any = n_idx > 0;
    for (size_t q = 0; q < n_idx; q++) {
        const exe_section *sec = &e->sections[idx[q]];
        uint64_t end = (uint64_t)sec->addr + sec->size;
        if (sec->addr < mem->base || end > mem_end) {
            snprintf(err, err_size,
                     "tile %u: section %s (%u bytes at 0x%x) does not fit in tile memory (0x%x-0x%x): "
                     "needs up to 0x%llx",
                     t->tile_id, sec->name, sec->size, sec->addr, mem->base, mem_end - 1,
                     (unsigned long long)end - 1);
            return false;
        }
        if (sec->flags & EXE_SEC_EXEC) {
            if (end > ISA_REGION1_BASE) {
                snprintf(err, err_size,
                         "tile %u: code section %s (0x%x-0x%llx) is outside region 0 (0x%x-0x%x), "
                         "the only executable region", t->tile_id, sec->name, sec->addr,
                         (unsigned long long)end - 1, mem->base, ISA_REGION1_BASE - 1);
                return false;
            }
            if ((sec->addr & 3) || (sec->size & 3)) {
                snprintf(err, err_size, "tile %u: code section %s at 0x%x (%u bytes) is not whole 4-byte words",
                         t->tile_id, sec->name, sec->addr, sec->size);
                return false;
            }
            if (sec->addr < code_lo) code_lo = sec->addr;
            if (end > code_hi) code_hi = (uint32_t)end;
        }
        if (!(sec->flags & EXE_SEC_NOBITS) && sec->size) {
            enum tmem_status st = tmem_write_bytes(&t->s.mem, sec->addr, sec->bytes, sec->size);
            if (st != TMEM_OK) {
                snprintf(err, err_size, "tile %u: cannot load section %s: %s", t->tile_id, sec->name,
                         tmem_status_name(st));
                return false;
            }
        }
    }
    if (!any)
        return true;
    const exe_tile_record *rec = exe_tile(e, t->tile_id);
    if (code_hi == 0) {
        snprintf(err, err_size, "tile %u has data but no code section", t->tile_id);
        return false;
    }
    if (!rec) {
        snprintf(err, err_size, "tile %u has code but no supervisor entry (.entry)", t->tile_id);
        return false;
    }
    uint32_t n_words = (code_hi - code_lo) / 4;
    uint8_t *is_code = calloc(n_words, 1), *image = calloc(n_words, 4);
    if (!t->code_shared)
        free(t->code);
    t->code = NULL;
    t->code_shared = false;
    counts_free(t->counts);
    t->counts = counts_new(n_words);
    t->issued_instructions = t->issued_amp_macs[0] = t->issued_amp_macs[1] = 0;
    if (!is_code || !image || !t->counts) {
        free(is_code);
        free(image);
        snprintf(err, err_size, "tile %u: out of host memory decoding %u words of code", t->tile_id, n_words);
        return false;
    }
    for (size_t q = 0; q < n_idx; q++) {
        const exe_section *sec = &e->sections[idx[q]];
        if (sec->flags & EXE_SEC_EXEC) {
            memset(is_code + (sec->addr - code_lo) / 4, 1, sec->size / 4);
            if (sec->bytes)
                memcpy(image + (sec->addr - code_lo), sec->bytes, sec->size);
        }
    }
    t->code_base = code_lo;
    t->code_end = code_hi;
    /* The same code bytes at the same addresses decode the same: share. */
    code_entry *hit = NULL;
    for (size_t i = 0; cache && i < cache->n && !hit; i++) {
        code_entry *c = &cache->entries[i];
        if (c->lo == code_lo && c->hi == code_hi && !memcmp(c->image, image, (size_t)n_words * 4) &&
            !memcmp(c->is_code, is_code, n_words))
            hit = c;
    }
    if (hit) {
        t->code = hit->decoded;
        t->code_shared = true;
        free(is_code);
        free(image);
    } else {
        t->code = calloc(n_words, sizeof *t->code);
        if (!t->code) {
            free(is_code);
            free(image);
            snprintf(err, err_size, "tile %u: out of host memory decoding %u words of code", t->tile_id, n_words);
            return false;
        }
        for (uint32_t i = 0; i < n_words; i++)
            decode_at(t, is_code, i, n_words);
        code_entry *c = NULL;
        if (cache && cache->n == cache->cap) {
            size_t cap = cache->cap ? cache->cap * 2 : 8;
            code_entry *p = realloc(cache->entries, cap * sizeof *p);
            if (p) {
                cache->entries = p;
                cache->cap = cap;
            }
        }
        if (cache && cache->n < cache->cap) {
            c = &cache->entries[cache->n++];
            *c = (code_entry){ code_lo, code_hi, image, is_code, t->code };
            t->code_shared = true;
        } else {
            free(is_code);
            free(image);
        }
    }

    isa_context *sup = &t->s.ctx[ISA_SUPERVISOR];
    sup->pc = rec->supervisor_entry;
    sup->run_mode = ISA_RUN_RUNNING;
    for (unsigned k = 0; k < ISA_WORKERS; k++)
        t->slot_owner[k] = ISA_SUPERVISOR;
    t->loaded = true;
    return true;
}

const tile_decoded *tile_decoded_at(const ipu_tile *t, uint32_t pc)
{
    if (!t->code || pc < t->code_base || pc >= t->code_end || (pc & 3))
        return NULL;
    return &t->code[(pc - t->code_base) >> 2];
}

static const char *decode_error_text(enum tile_decode_error e)
{
    switch (e) {
    case TILE_DECODE_NOT_CODE: return "address is not inside a code section";
    case TILE_DECODE_ILLEGAL: return "no instruction has this encoding";
    case TILE_DECODE_BUNDLE_ALIGN: return "bundle is not 8-byte aligned";
    case TILE_DECODE_BUNDLE_TRUNC: return "bundle's aux half is missing at the end of the code";
    case TILE_DECODE_BUNDLE_PIPES: return "bundle is not one main-pipeline and one aux-pipeline instruction";
    default: return "cannot issue";
    }
}

/* Fetch-side faults: the pc does not hold something that can issue. */
static enum isa_flow fetch_fault(ipu_tile *t, isa_context *c, const tile_decoded *d)
{
    isa_tile_state *s = &t->s;
    if (!d) {
        if (c->pc & 3)
            return isa_raise(s, c, NULL, ISA_EXC_FETCH, c->pc, "pc 0x%x is not 4-byte aligned", c->pc);
        return isa_raise(s, c, NULL, ISA_EXC_FETCH, c->pc, "pc 0x%x is outside the tile's code (0x%x-0x%x)",
                         c->pc, t->code_base, t->code_end ? t->code_end - 1 : 0);
    }
    enum tile_decode_error why = (enum tile_decode_error)(d->invalid & ~TILE_DECODE_BREAKPOINT);
    return isa_raise(s, c, &d->main, why == TILE_DECODE_ILLEGAL ? ISA_EXC_INVALID_INSTR : ISA_EXC_FETCH,
                     c->pc, "%s", decode_error_text(why));
}

/* tile_run's stop at a breakpoint: a flow value beyond the executors'. */
#define TILE_FLOW_BREAK ((enum isa_flow)(ISA_FLOW_FAULT + 1))

/* d->invalid is not zero: a breakpoint (stop, unless it is being stepped
 * over), a decode error (fault), or both.  ISA_FLOW_NEXT: issue it. */
static __attribute__((noinline)) enum isa_flow decode_stop(ipu_tile *t, isa_context *c, unsigned k,
                                                           const tile_decoded *d)
{
    if (d->invalid & TILE_DECODE_BREAKPOINT) {
        if (!(t->break_skip && t->break_pc == c->pc && t->break_context == k)) {
            t->break_pc = c->pc;
            t->break_context = (uint8_t)k;
            t->break_skip = false;
            return TILE_FLOW_BREAK;
        }
        t->break_skip = false;
        if (d->invalid == TILE_DECODE_BREAKPOINT)
            return ISA_FLOW_NEXT;
    }
    return fetch_fault(t, c, d);
}

bool tile_set_breakpoint(ipu_tile *t, uint32_t pc, bool on)
{
    if (!tile_decoded_at(t, pc))
        return false;
    if (t->code_shared) {
        /* A breakpoint is this tile's: stop sharing its decoded code. */
        size_t n = (t->code_end - t->code_base) / 4;
        tile_decoded *own = malloc(n * sizeof *own);
        if (!own)
            return false;
        memcpy(own, t->code, n * sizeof *own);
        t->code = own;
        t->code_shared = false;
    }
    tile_decoded *d = (tile_decoded *)tile_decoded_at(t, pc);
    /* The second word of a bundle never starts an issue. */
    const tile_decoded *prev = (pc & 4) && pc >= t->code_base + 4 ? tile_decoded_at(t, pc - 4) : NULL;
    if (prev && !(prev->invalid & ~TILE_DECODE_BREAKPOINT) && prev->bytes == 8)
        return false;
    if (on)
        d->invalid |= TILE_DECODE_BREAKPOINT;
    else
        d->invalid &= (uint8_t)~TILE_DECODE_BREAKPOINT;
    return true;
}

bool tile_breakpoint_at(const ipu_tile *t, uint32_t pc)
{
    const tile_decoded *d = tile_decoded_at(t, pc);
    return d && (d->invalid & TILE_DECODE_BREAKPOINT);
}

void tile_step_over_break(ipu_tile *t)
{
    t->break_skip = true;
}

/* Derive the statistics from the per-address issue counts. */
void tile_collect_stats(ipu_tile *t)
{
    tile_stats *st = &t->stats;
    st->issues = st->instructions = st->amp_f16_macs = st->amp_f32_macs = 0;
    memset(st->op_count, 0, sizeof st->op_count);
    uint32_t n = t->code ? (t->code_end - t->code_base) / 4 : 0;
    for (uint32_t i = 0; i < n; i++) {
        const tile_decoded *d = &t->code[i];
        uint64_t count = t->counts[i];
        if (!count)
            continue;
        st->issues += count;
        st->instructions += count * (d->bytes / 4u);
        st->op_count[d->main.op] += count;
        if (d->bytes == 8)
            st->op_count[d->aux.op] += count;
        if (d->amp_f32)
            st->amp_f32_macs += count * d->amp_macs;
        else
            st->amp_f16_macs += count * d->amp_macs;
    }
    st->worker_issues = st->issues - st->supervisor_issues;
}

/* An exchange instruction issued at `cycle` and logged its transfer: stamp
 * when the transfer starts and return the cycles the supervisor waits
 * beyond the usual one (exchange/exchange.h). */
static __attribute__((noinline)) uint64_t exchange_issued(ipu_tile *t, const tile_decoded *d, uint64_t cycle)
{
    xch_log *log = t->s.xlog;
    uint64_t setup = 0;
    if (!log->phase_started) {
        setup = t->exchange_setup_cycles;
        log->phase_started = true;
    }
    uint64_t stall = setup;
    xch_transfer *x;
    if (d->exchange == TILE_XCH_SEND) {
        x = &log->sends[log->n_sends - 1];
        stall += (x->bytes + t->exchange_send_bytes_per_cycle - 1) / t->exchange_send_bytes_per_cycle;
    } else {
        x = &log->recvs[log->n_recvs - 1];
    }
    x->start_cycle = cycle + 1 + setup;
    t->stats.exchange_stall_cycles += stall;
    return stall;
}

/* Issue one instruction or bundle of context k at the current cycle. */
static inline enum isa_flow issue(ipu_tile *t, isa_context *c, unsigned k, uint64_t cycle)
{
    isa_tile_state *s = &t->s;
    uint32_t pc = c->pc;
    uint32_t off = pc - t->code_base;
    if (__builtin_expect(off >= t->code_end - t->code_base || (pc & 3), 0))
        return fetch_fault(t, c, NULL);
    const tile_decoded *d = &t->code[off >> 2];
    if (__builtin_expect(d->invalid != 0, 0)) {
        enum isa_flow stop = decode_stop(t, c, k, d);
        if (stop != ISA_FLOW_NEXT)
            return stop;
    }
    uint32_t need = k == ISA_SUPERVISOR ? ISA_F_SUP : ISA_F_WRK;
    if (__builtin_expect(!(d->flags & need), 0)) {
        if (k == ISA_SUPERVISOR && d->bytes == 8)
            return isa_raise(s, c, &d->main, ISA_EXC_INVALID_INSTR, pc,
                             "the supervisor cannot issue bundles (it has no aux pipeline)");
        return isa_raise(s, c, &d->main, ISA_EXC_INVALID_INSTR, pc, "%s cannot run on %s",
                         isa_get(d->main.op)->mnemonic, k == ISA_SUPERVISOR ? "the supervisor" : "a worker");
    }
    if (__builtin_expect(c->rpt_remaining && (d->flags & ISA_F_CTRL), 0))
        return isa_raise(s, c, &d->main, ISA_EXC_RPT, pc,
                         "control instruction %s inside a rpt body (0x%x-0x%x)", isa_get(d->main.op)->mnemonic,
                         c->rpt_first, c->rpt_end - 1);

    s->cycle = cycle;
    s->issue_bytes = d->bytes;
    enum isa_flow flow = dispatch(s, c, &d->main);
    if (d->bytes == 8 && flow != ISA_FLOW_FAULT) {
        enum isa_flow aux_flow = dispatch(s, c, &d->aux);
        if (aux_flow != ISA_FLOW_NEXT)
            flow = aux_flow;
    }
    if (c->pending_a_mask) {
        if (flow == ISA_FLOW_FAULT)
            c->pending_a_mask = 0;
        else
            isa_commit_pending(c);
    }

    switch (flow) {
    case ISA_FLOW_NEXT: {
        uint32_t next = pc + d->bytes;
        if (c->rpt_remaining && next == c->rpt_end && --c->rpt_remaining)
            next = c->rpt_first;
        c->pc = next;
        break;
    }
    case ISA_FLOW_JUMP:
        break;
    case ISA_FLOW_STALL:
        /* Nothing retired: try again once a worker exits. */
        t->ready_cycle[k] = UINT64_MAX;
        return flow;
    case ISA_FLOW_EXIT:
        if (k != ISA_SUPERVISOR) {
            t->slot_owner[k - 1] = ISA_SUPERVISOR;
            if (t->ready_cycle[ISA_SUPERVISOR] == UINT64_MAX)
                t->ready_cycle[ISA_SUPERVISOR] = cycle + 1;
        }
        break;
    case ISA_FLOW_SYNC:
        break;
    case ISA_FLOW_FAULT:
        c->run_mode = ISA_RUN_FAULTED;
        return flow;
    }
    t->counts[off >> 2]++;
    t->issued_instructions += d->bytes >> 2;
    t->issued_amp_macs[d->amp_f32] += d->amp_macs;
    /* A worker waits for its instruction's latency, the supervisor issues
     * again in its next slot; a branch to a 4-but-not-8-aligned address
     * costs both the same penalty. */
    uint64_t ready = cycle + (k == ISA_SUPERVISOR ? 1u : d->issue_cycles);
    if (__builtin_expect(flow == ISA_FLOW_JUMP && (c->pc & 7) == 4, 0))
        ready += t->branch_penalty_cycles;
    t->ready_cycle[k] = ready;
    if (k != ISA_SUPERVISOR)
        return flow;
    if (__builtin_expect(d->exchange != TILE_XCH_NONE, 0))
        t->ready_cycle[k] += exchange_issued(t, d, cycle);
    t->stats.supervisor_issues++;
    /* Workers started by run/runall take their slots now. */
    if (s->started_workers) {
        for (unsigned w = 1; w <= ISA_WORKERS; w++)
            if (s->started_workers & (1u << w)) {
                t->slot_owner[w - 1] = (uint8_t)w;
                t->ready_cycle[w] = cycle + 1;
            }
        s->started_workers = 0;
    }
    return flow;
}

/* The supervisor waits (exchange set-up, data leaving the tile, a branch
 * penalty) in an idle cycle.  When no worker runs, nothing can happen
 * before it is ready: count the cycles up to then as idle at once and
 * return the last of them (the loop steps to the next).  Exactly the same
 * as stepping through them one by one. */
static uint64_t skip_supervisor_wait(ipu_tile *t, uint64_t cycle, uint64_t cycle_limit, unsigned *slot)
{
    for (unsigned i = 0; i < ISA_WORKERS; i++)
        if (t->slot_owner[i] != ISA_SUPERVISOR)
            return cycle;
    uint64_t target = t->ready_cycle[ISA_SUPERVISOR] < cycle_limit ? t->ready_cycle[ISA_SUPERVISOR] : cycle_limit;
    if (target <= cycle + 1)
        return cycle;
    uint64_t skipped = target - 1 - cycle;
    t->stats.idle_slot_cycles += skipped;
    *slot = (unsigned)((*slot + skipped % ISA_WORKERS) % ISA_WORKERS);
    return target - 1;
}

enum tile_stop tile_run(ipu_tile *t, uint64_t cycle_limit)
{
    isa_tile_state *s = &t->s;
    if (!t->loaded || s->ctx[ISA_SUPERVISOR].run_mode == ISA_RUN_DONE)
        return TILE_STOP_END;
    if (s->fault.exception != ISA_EXC_NONE)
        return TILE_STOP_FAULT;
    if (s->ctx[ISA_SUPERVISOR].run_mode == ISA_RUN_SYNC)
        return TILE_STOP_SYNC;
    uint64_t cycle = s->cycle;
    unsigned slot = t->slot;
    enum tile_stop stop = TILE_STOP_LIMIT;
    for (; cycle < cycle_limit; cycle++, slot = slot + 1 == ISA_WORKERS ? 0 : slot + 1) {
        unsigned k = t->slot_owner[slot];
        isa_context *c = &s->ctx[k];
        if (c->run_mode != ISA_RUN_RUNNING || cycle < t->ready_cycle[k]) {
            t->stats.idle_slot_cycles++;
            if (k == ISA_SUPERVISOR && c->run_mode == ISA_RUN_RUNNING)
                cycle = skip_supervisor_wait(t, cycle, cycle_limit, &slot);
            continue;
        }
        enum isa_flow flow = issue(t, c, k, cycle);
        if (__builtin_expect(flow < ISA_FLOW_EXIT, 1))
            continue;
        if (flow == ISA_FLOW_FAULT) {
            stop = TILE_STOP_FAULT;
            break;
        }
        if (k == ISA_SUPERVISOR && flow == ISA_FLOW_EXIT) {
            stop = TILE_STOP_END;
            break;
        }
        if (flow == ISA_FLOW_SYNC) {
            c->run_mode = ISA_RUN_SYNC;
            stop = TILE_STOP_SYNC;
            break;
        }
        if (flow == TILE_FLOW_BREAK) {
            stop = TILE_STOP_BREAK;
            break;
        }
    }
    if (stop != TILE_STOP_LIMIT && stop != TILE_STOP_BREAK) {
        /* The instruction that stopped the tile took this cycle. */
        cycle++;
        slot = slot + 1 == ISA_WORKERS ? 0 : slot + 1;
    }
    s->cycle = cycle;
    t->slot = (uint8_t)slot;
    return stop;
}

void tile_release_sync(ipu_tile *t)
{
    isa_context *sup = &t->s.ctx[ISA_SUPERVISOR];
    if (sup->run_mode != ISA_RUN_SYNC)
        return;
    sup->run_mode = ISA_RUN_RUNNING;
    sup->pc += ISA_INSN_BYTES;
    t->stats.syncs++;
}

void tile_advance_to(ipu_tile *t, uint64_t cycle)
{
    if (cycle <= t->s.cycle)
        return;
    t->slot = (uint8_t)((t->slot + (cycle - t->s.cycle) % ISA_WORKERS) % ISA_WORKERS);
    t->s.cycle = cycle;
}

enum tile_stop tile_run_alone(ipu_tile *t, uint64_t cycle_limit)
{
    for (;;) {
        enum tile_stop stop = tile_run(t, cycle_limit);
        if (stop != TILE_STOP_SYNC) {
            tile_collect_stats(t);
            return stop;
        }
        tile_release_sync(t);
    }
}

void tile_describe_fault(const ipu_tile *t, const ipu_exe *e, char *buf, size_t n)
{
    const isa_fault *f = &t->s.fault;
    char where[256] = "";
    size_t w = 0;
    if (e) {
        const char *file;
        uint32_t line;
        if (exe_line_at(e, t->tile_id, f->pc, &file, &line))
            w += (size_t)snprintf(where + w, sizeof where - w, "%s:%u", file, line);
        const exe_symbol *sym = exe_symbol_at(e, t->tile_id, f->pc);
        if (sym && w < sizeof where)
            w += (size_t)snprintf(where + w, sizeof where - w, "%sin %s+0x%x", w ? ", " : "", sym->name,
                                  f->pc - sym->addr);
    }
    char ctx[16];
    if (f->context == ISA_SUPERVISOR)
        snprintf(ctx, sizeof ctx, "supervisor");
    else
        snprintf(ctx, sizeof ctx, "worker %u", f->context);
    char insn[160] = "";
    const tile_decoded *d = tile_decoded_at(t, f->pc);
    if (d && (d->invalid & ~TILE_DECODE_BREAKPOINT) != TILE_DECODE_NOT_CODE) {
        uint32_t w0 = 0, w1 = 0;
        tmem_read_bytes(&t->s.mem, f->pc, &w0, 4);
        bool have_w1 = tmem_read_bytes(&t->s.mem, f->pc + 4, &w1, 4) == TMEM_OK;
        disasm_bundle(w0, w1, have_w1, f->pc, insn, sizeof insn);
    }
    snprintf(buf, n, "tile %u, %s, pc 0x%x%s%s%s: %s: %s%s%s", t->tile_id, ctx, f->pc, w ? " (" : "", where,
             w ? ")" : "", isa_exception_name((enum isa_exception)f->exception), f->message,
             insn[0] ? "\n    " : "", insn);
}
