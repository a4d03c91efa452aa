/*
 * exec_control.c — control-flow and system instructions of the main
 * pipeline: branches, call, exit, rpt (ISA2 §3.7.2), get/put, run/runall,
 * trap (§3.7.6), and ipusim's own sync and exchange instructions (ISA2
 * does not publish those; their meaning is the one isa/exec.h states).
 *
 * What is modelled:
 *   - Branch targets are byte addresses already (the decoder scales the
 *     word offset).  A misaligned or non-executable target is not checked
 *     here: the scheduler raises ISA_EXC_FETCH when it fetches there, which
 *     keeps br (register target) and the immediate forms alike.
 *   - brnzdec tests the counter before decrementing and always writes the
 *     decremented value back (ISA2 §3.7.2.5): at 0 it falls through and
 *     leaves 0xffffffff, at 1 it branches and leaves 0.
 *   - brneg branches on the sign bit, brpos when the sign bit is clear (so
 *     zero counts as positive, ISA2 §3.7.2.3, §3.7.2.6).
 *   - call writes the address after the instruction or bundle issuing it
 *     (c->pc + t->issue_bytes: pc+4 solo, pc+8 in a bundle, ISA2 §3.7.2.8).
 *   - rpt: the body is the size+1 bundles after the rpt's own instruction
 *     or bundle; the count (immediate, or the register masked to the 12-bit
 *     $REPEAT_COUNT field, ISA2 §3.7.2.13) is the number of times the body
 *     runs, zero meaning "branch over it".  The body must start 8-byte
 *     aligned and lie in executable memory, else ISA_EXC_RPT.
 *   - exit*, run, runall and sync follow isa/exec.h.  A started worker gets
 *     $PC, $VERTEX_BASE, $FP_CTL = the supervisor's $FP_ICTL, a cleared
 *     $FP_STS (ISA2 §3.7.6.3) and its index in $WSR bits 2..0.
 *
 * What is not: the rpt-body and supervisor/worker restrictions (the
 * scheduler checks them from the row flags), how the supervisor reads
 * the exit status (ISA2's $SSR.LC; ipusim keeps it in c->exit_status).
 *
 * xsend / xrecv check their operands and append to the tile's exchange log
 * (isa/exchange_port.h); without an attached log (a tile run alone) they
 * raise "bad exchange".  Timing and matching are not theirs: the scheduler
 * stamps the set-up and busy cycles, the resolution does the rest.
 */
#include "exec.h"

#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "exchange_port.h"

/* Mask of the $REPEAT_COUNT.VALUE field on IPU2 (12 bits; poplibs'
 * CSR_W_REPEAT_COUNT__VALUE__MASK). */
#define RPT_COUNT_MASK ISA_RPT_MAX_COUNT

/* Address of the instruction after the one (or the bundle) issuing now. */
static uint32_t pc_after(const isa_tile_state *t, const isa_context *c)
{
    return c->pc + (t->issue_bytes ? t->issue_bytes : ISA_INSN_BYTES);
}

static enum isa_flow jump(isa_context *c, uint32_t target)
{
    c->pc = target;
    return ISA_FLOW_JUMP;
}

static enum isa_flow branch_if(isa_context *c, const isa_insn *in, int taken)
{
    return taken ? jump(c, (uint32_t)in->operand[1]) : ISA_FLOW_NEXT;
}

enum isa_flow isa_exec_BR(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    (void)t;
    return jump(c, isa_m(c, in->operand[0]));
}

enum isa_flow isa_exec_BRI(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    (void)t;
    return jump(c, (uint32_t)in->operand[0]);
}

enum isa_flow isa_exec_BRZ(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    (void)t;
    return branch_if(c, in, isa_m(c, in->operand[0]) == 0);
}

enum isa_flow isa_exec_BRNZ(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    (void)t;
    return branch_if(c, in, isa_m(c, in->operand[0]) != 0);
}

enum isa_flow isa_exec_BRNEG(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    (void)t;
    return branch_if(c, in, (isa_m(c, in->operand[0]) >> 31) != 0);
}

enum isa_flow isa_exec_BRPOS(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    (void)t;
    return branch_if(c, in, (isa_m(c, in->operand[0]) >> 31) == 0);
}

enum isa_flow isa_exec_BRNZDEC(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    (void)t;
    uint32_t counter = isa_m(c, in->operand[0]);
    isa_set_m(c, in->operand[0], counter - 1u);
    return branch_if(c, in, counter != 0);
}

enum isa_flow isa_exec_CALL(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    isa_set_m(c, in->operand[0], pc_after(t, c));
    return jump(c, (uint32_t)in->operand[1]);
}

/* ---- exit ---------------------------------------------------------------- */

static bool any_worker_running(const isa_tile_state *t)
{
    for (unsigned k = 1; k <= ISA_WORKERS; k++)
        if (t->ctx[k].run_mode == ISA_RUN_RUNNING)
            return true;
    return false;
}

static enum isa_flow exit_if(isa_tile_state *t, isa_context *c, const isa_insn *in, bool condition)
{
    if (c->id == ISA_SUPERVISOR) {
        if (any_worker_running(t)) {
            char running[3 * ISA_WORKERS + 1] = "";
            size_t n = 0;
            for (unsigned k = 1; k <= ISA_WORKERS; k++)
                if (t->ctx[k].run_mode == ISA_RUN_RUNNING)
                    n += (size_t)snprintf(running + n, sizeof running - n, "%s%u", n ? ", " : "", k);
            bool several = strchr(running, ',') != NULL;
            return isa_raise(t, c, in, ISA_EXC_RUN, 0,
                             "%s: the supervisor ends the program while worker%s %s still run%s (sync 0 first)",
                             isa_get(in->op)->mnemonic, several ? "s" : "", running, several ? "" : "s");
        }
        c->run_mode = ISA_RUN_DONE;
    } else {
        c->run_mode = ISA_RUN_INACTIVE;
    }
    c->exit_status = condition;
    return ISA_FLOW_EXIT;
}

enum isa_flow isa_exec_EXITZ(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    return exit_if(t, c, in, isa_m(c, in->operand[0]) == 0);
}

enum isa_flow isa_exec_EXITNZ(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    return exit_if(t, c, in, isa_m(c, in->operand[0]) != 0);
}

enum isa_flow isa_exec_EXITNEG(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    return exit_if(t, c, in, (isa_m(c, in->operand[0]) >> 31) != 0);
}

enum isa_flow isa_exec_EXITPOS(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    return exit_if(t, c, in, (isa_m(c, in->operand[0]) >> 31) == 0);
}

/* ---- rpt ----------------------------------------------------------------- */

static enum isa_flow start_repeat(isa_tile_state *t, isa_context *c, const isa_insn *in,
                                  uint32_t count, uint32_t size)
{
    uint32_t first = pc_after(t, c);
    uint32_t end = first + (size + 1u) * ISA_BUNDLE_BYTES;
    if (first & (ISA_BUNDLE_BYTES - 1u))
        return isa_raise(t, c, in, ISA_EXC_RPT, first,
                         "rpt: the repeat body at 0x%x is not 8-byte aligned (put the rpt in a bundle, or align the body)",
                         first);
    /* ISA2 §3.7.2.13: the body and the address after it must be valid,
     * executable addresses. */
    if (!tmem_is_executable(&t->mem, first) || !tmem_is_executable(&t->mem, end))
        return isa_raise(t, c, in, ISA_EXC_RPT, first,
                         "rpt: the repeat body 0x%x-0x%x is not in executable memory (region 0)",
                         first, end - 1u);
    c->rpt_first = first;
    c->rpt_end = end;
    c->rpt_remaining = count;
    if (count == 0)
        return jump(c, end);
    return ISA_FLOW_NEXT;
}

enum isa_flow isa_exec_RPT(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    return start_repeat(t, c, in, (uint32_t)in->operand[0] & RPT_COUNT_MASK, (uint32_t)in->operand[1]);
}

enum isa_flow isa_exec_RPT_M(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    return start_repeat(t, c, in, isa_m(c, in->operand[0]) & RPT_COUNT_MASK, (uint32_t)in->operand[1]);
}

/* ---- workers: run, runall, sync ------------------------------------------ */

/* ISA2 §3.7.6.3: the entry must be a 4-byte aligned executable address and
 * the vertex base 4-byte aligned. */
static enum isa_flow check_launch(isa_tile_state *t, isa_context *c, const isa_insn *in,
                                  uint32_t entry, uint32_t vertex_base)
{
    const char *mn = isa_get(in->op)->mnemonic;
    if (entry & 3u)
        return isa_raise(t, c, in, ISA_EXC_RUN, entry,
                         "%s: worker entry 0x%x is not 4-byte aligned", mn, entry);
    if (!tmem_is_executable(&t->mem, entry))
        return isa_raise(t, c, in, ISA_EXC_RUN, entry,
                         "%s: worker entry 0x%x is not in executable memory (region 0)", mn, entry);
    if (vertex_base & 3u)
        return isa_raise(t, c, in, ISA_EXC_RUN, vertex_base,
                         "%s: vertex base 0x%x is not 4-byte aligned", mn, vertex_base);
    return ISA_FLOW_NEXT;
}

static void launch_worker(isa_tile_state *t, unsigned k, uint32_t entry, uint32_t vertex_base)
{
    isa_context *w = &t->ctx[k];
    w->pc = entry;
    w->run_mode = ISA_RUN_RUNNING;
    w->csr[ISA_CSR_VERTEX_BASE] = vertex_base;
    w->csr[ISA_CSR_WSR] = (w->csr[ISA_CSR_WSR] & ~7u) | (k - 1u);
    w->csr[ISA_CSR_FP_CTL] = t->ctx[ISA_SUPERVISOR].csr[ISA_CSR_FP_ICTL];
    w->csr[ISA_CSR_FP_STS] = 0;
    isa_sync_base_registers(w);
    t->started_workers |= (uint8_t)(1u << k);
}

enum isa_flow isa_exec_RUN(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    uint32_t entry = isa_m(c, in->operand[0]);
    uint32_t vertex_base = isa_m(c, in->operand[1]);
    enum isa_flow f = check_launch(t, c, in, entry, vertex_base);
    if (f != ISA_FLOW_NEXT)
        return f;
    unsigned k = 1;
    while (k <= ISA_WORKERS && t->ctx[k].run_mode != ISA_RUN_INACTIVE)
        k++;
    if (k > ISA_WORKERS)
        return ISA_FLOW_STALL;
    launch_worker(t, k, entry, vertex_base);
    isa_set_m(c, in->operand[2], k);
    return ISA_FLOW_NEXT;
}

enum isa_flow isa_exec_RUNALL(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    uint32_t entry = isa_m(c, in->operand[0]);
    uint32_t vertex_base = isa_m(c, in->operand[1]);
    uint32_t step = isa_m(c, in->operand[2]);
    enum isa_flow f = check_launch(t, c, in, entry, vertex_base);
    if (f != ISA_FLOW_NEXT)
        return f;
    if (any_worker_running(t))
        return ISA_FLOW_STALL;
    for (unsigned k = 1; k <= ISA_WORKERS; k++)
        launch_worker(t, k, entry, vertex_base + (k - 1u) * step);
    return ISA_FLOW_NEXT;
}

enum isa_flow isa_exec_SYNC(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    uint32_t zone = (uint32_t)in->operand[0];
    if (zone > ISA_SYNC_EXCHANGE)
        return isa_raise(t, c, in, ISA_EXC_INVALID_OPERAND, 0,
                         "sync: %u is not a sync zone (0 workers, 1 internal, 2 external, 3 end of exchange)",
                         zone);
    if (any_worker_running(t))
        return ISA_FLOW_STALL;
    if (zone == ISA_SYNC_WORKERS)
        return ISA_FLOW_NEXT;
    t->sync_zone = (uint8_t)zone;
    return ISA_FLOW_SYNC;
}

/* ---- trap, get, put, exchange --------------------------------------------- */

/* What the kernel library's codelets mean by the trap codes they raise
 * (defined in workloads/codelets/<file>.h, next to each codelet's record):
 * the simulated exception says which check a codelet made. */
static const struct { uint32_t code; const char *meaning, *file; } codelet_traps[] = {
    { 0x45, "element-wise op or function out of range", "elementwise.S" },
    { 0x47, "gather index out of range of the table", "rowwise.S" },
    { 0x49, "gather index out of range of the table", "embedding.S" },
    { 0x4c, "logic op out of range", "logic.S" },
    { 0x52, "reduction op out of range", "rowwise.S" },
    { 0x60, "matmul sizes: K not a multiple of 16, or N not of the group", "matmul.S" },
    { 0x61, "matmul PARTIALS neither 0 nor 1", "matmul.S" },
    { 0x62, "matmul operand or row step misaligned", "matmul.S" },
    { 0x63, "matmul B below region 1 (ld128putcs needs region 1)", "matmul.S" },
    { 0x64, "matmul M above 6 x 4095 rows", "matmul.S" },
    { 0x68, "f32 matmul sizes: K not a multiple of 8, or N not of 16", "matmul_f32.S" },
    { 0x69, "f32 matmul operand or row step misaligned", "matmul_f32.S" },
    { 0x6a, "f32 matmul B below region 1 (ld128putcs needs region 1)", "matmul_f32.S" },
    { 0x6b, "f32 matmul M above 6 x 4095 rows", "matmul_f32.S" },
};

const char *isa_codelet_trap_meaning(uint32_t code, const char **file)
{
    for (size_t i = 0; i < sizeof codelet_traps / sizeof codelet_traps[0]; i++)
        if (codelet_traps[i].code == code) {
            if (file)
                *file = codelet_traps[i].file;
            return codelet_traps[i].meaning;
        }
    return NULL;
}

enum isa_flow isa_exec_TRAP(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    t->trap_code = (uint32_t)in->operand[0];
    const char *file, *meaning = isa_codelet_trap_meaning(t->trap_code, &file);
    if (meaning)
        return isa_raise(t, c, in, ISA_EXC_BREAK, 0, "trap %u: %s (workloads/codelets/%s)", t->trap_code, meaning,
                         file);
    return isa_raise(t, c, in, ISA_EXC_BREAK, 0, "trap %u", t->trap_code);
}

enum isa_flow isa_exec_GET(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    uint32_t v;
    enum isa_flow f = isa_csr_read(t, c, in, (unsigned)in->operand[1], &v);
    if (f != ISA_FLOW_NEXT)
        return f;
    isa_set_m(c, in->operand[0], v);
    return ISA_FLOW_NEXT;
}

enum isa_flow isa_exec_PUT(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    return isa_csr_write(t, c, in, (unsigned)in->operand[0], isa_m(c, in->operand[1]));
}

/* The checks both exchange instructions make at issue (isa/exchange_port.h, exchange/exchange.h):
 * an attached exchange, a 4-byte aligned address, whole 32-bit words, the
 * range inside tile memory, an endpoint that exists. */
static enum isa_flow check_exchange(isa_tile_state *t, isa_context *c, const isa_insn *in, bool send,
                                    uint32_t addr, uint32_t bytes, uint32_t endpoint)
{
    const char *mn = send ? "xsend" : "xrecv";
    if (!t->xlog)
        return isa_raise(t, c, in, ISA_EXC_EXCHANGE, 0,
                         "%s: no exchange is attached to this tile (exchange instructions run in a chip program)",
                         mn);
    const tile_memory *m = &t->mem;
    uint32_t off = addr - m->base;
    if (off >= m->size_bytes || bytes > m->size_bytes - off)
        return isa_raise(t, c, in, ISA_EXC_MEM_RANGE, addr, "%s at 0x%x: %u bytes outside tile memory (0x%x-0x%x)",
                         mn, addr, bytes, m->base, m->base + m->size_bytes - 1u);
    if (addr & 3u)
        return isa_raise(t, c, in, ISA_EXC_MEM_ALIGN, addr, "%s at 0x%x: address not 4-byte aligned", mn, addr);
    if (bytes & 3u)
        return isa_raise(t, c, in, ISA_EXC_INVALID_OPERAND, addr,
                         "%s: %u bytes is not a whole number of 32-bit words", mn, bytes);
    enum xch_endpoint_kind kind = xch_endpoint_kind(endpoint, t->xlog->system_tiles);
    if (kind == XCH_EP_INVALID)
        return isa_raise(t, c, in, ISA_EXC_EXCHANGE, 0,
                         "%s: endpoint 0x%x is not a tile (0-%u), the broadcast, a multicast group, a host "
                         "stream or a streaming-memory buffer", mn, endpoint, t->xlog->system_tiles - 1u);
    if (!send && kind == XCH_EP_BROADCAST)
        return isa_raise(t, c, in, ISA_EXC_EXCHANGE, 0,
                         "xrecv: the broadcast endpoint 0x%x cannot be a source (name the sending tile)", endpoint);
    if (send && kind == XCH_EP_MULTICAST && (endpoint & XCH_MULTICAST_TILE))
        return isa_raise(t, c, in, ISA_EXC_EXCHANGE, 0,
                         "xsend: multicast endpoint 0x%x names a tile (a sender names only its group)", endpoint);
    return ISA_FLOW_NEXT;
}

static enum isa_flow out_of_host_memory(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    return isa_raise(t, c, in, ISA_EXC_EXCHANGE, 0, "%s: the simulator is out of host memory",
                     isa_get(in->op)->mnemonic);
}

enum isa_flow isa_exec_XSEND(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    uint32_t addr = isa_m(c, in->operand[0]), bytes = isa_m(c, in->operand[1]);
    uint32_t dest = isa_m(c, in->operand[2]);
    enum isa_flow f = check_exchange(t, c, in, true, addr, bytes, dest);
    if (f != ISA_FLOW_NEXT)
        return f;
    /* The bytes are read now: later stores to the buffer do not change what
     * was sent. */
    uint8_t small[1024];
    uint8_t *data = bytes <= sizeof small ? small : malloc(bytes);
    if (!data)
        return out_of_host_memory(t, c, in);
    tmem_load_bytes(&t->mem, addr, data, bytes);
    bool ok = xch_log_send(t->xlog, c->pc, t->cycle, addr, bytes, dest, data);
    if (data != small)
        free(data);
    return ok ? ISA_FLOW_NEXT : out_of_host_memory(t, c, in);
}

enum isa_flow isa_exec_XRECV(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    uint32_t addr = isa_m(c, in->operand[0]), bytes = isa_m(c, in->operand[1]);
    uint32_t src = isa_m(c, in->operand[2]);
    enum isa_flow f = check_exchange(t, c, in, false, addr, bytes, src);
    if (f != ISA_FLOW_NEXT)
        return f;
    return xch_log_recv(t->xlog, c->pc, t->cycle, addr, bytes, src) ? ISA_FLOW_NEXT
                                                                      : out_of_host_memory(t, c, in);
}
