/*
 * test_exec_control.c — branches, call, exit, rpt, run/runall, sync, trap
 * and the exchange placeholders (ISA2 §3.7.2, §3.7.6; isa/exec.h).
 */
#include <CUnit/CUnit.h>
#include <string.h>

#include "exchange/exchange.h"
#include "workloads/codelets/elementwise.h"
#include "workloads/codelets/embedding.h"
#include "workloads/codelets/logic.h"
#include "workloads/codelets/matmul.h"
#include "workloads/codelets/matmul_f32.h"
#include "workloads/codelets/rowwise.h"
#include "exec_fixture.h"
#include "test_util.h"

static isa_tile_state *t;
static isa_context *w;

static void setup(void)
{
    t = fx_tile_new();
    w = fx_worker(t, 1);
}

static void teardown(void)
{
    fx_tile_free(t);
    t = NULL;
}

#define WITH_TILE(...) do { setup(); __VA_ARGS__; teardown(); } while (0)

#define TARGET 0x4c800

/* Conditional branch on $m4 holding v: returns whether it jumped, and
 * checks the pc either way. */
static int branch_taken(enum isa_op op, uint32_t v)
{
    w->pc = FX_CODE_BASE;
    w->m[4] = v;
    enum isa_flow f = fx_run(t, w, op, 4, TARGET);
    if (f == ISA_FLOW_JUMP) {
        CU_ASSERT_EQUAL(w->pc, TARGET);
        return 1;
    }
    CU_ASSERT_EQUAL(f, ISA_FLOW_NEXT);
    CU_ASSERT_EQUAL(w->pc, FX_CODE_BASE);
    return 0;
}

static void test_unconditional(void)
{
    WITH_TILE({
        w->m[2] = 0x4d004;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_BR, 2), ISA_FLOW_JUMP);
        CU_ASSERT_EQUAL(w->pc, 0x4d004);
        /* A misaligned register target is taken as is: the fetch faults. */
        w->m[2] = 0x4d006;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_BR, 2), ISA_FLOW_JUMP);
        CU_ASSERT_EQUAL(w->pc, 0x4d006);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_BRI, 0x7fffc), ISA_FLOW_JUMP);
        CU_ASSERT_EQUAL(w->pc, 0x7fffc);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_BRI, 0x4c000), ISA_FLOW_JUMP);
        CU_ASSERT_EQUAL(w->pc, 0x4c000);
    });
}

static void test_conditional(void)
{
    WITH_TILE({
        CU_ASSERT_TRUE(branch_taken(ISA_OP_BRZ, 0));
        CU_ASSERT_FALSE(branch_taken(ISA_OP_BRZ, 1));
        CU_ASSERT_FALSE(branch_taken(ISA_OP_BRZ, 0x80000000u));   /* -0.0f is not zero */
        CU_ASSERT_FALSE(branch_taken(ISA_OP_BRNZ, 0));
        CU_ASSERT_TRUE(branch_taken(ISA_OP_BRNZ, 0x80000000u));
        CU_ASSERT_TRUE(branch_taken(ISA_OP_BRNEG, 0x80000000u));
        CU_ASSERT_TRUE(branch_taken(ISA_OP_BRNEG, 0xffffffffu));
        CU_ASSERT_FALSE(branch_taken(ISA_OP_BRNEG, 0));
        CU_ASSERT_FALSE(branch_taken(ISA_OP_BRNEG, 0x7fffffffu));
        CU_ASSERT_TRUE(branch_taken(ISA_OP_BRPOS, 0));             /* zero counts as positive */
        CU_ASSERT_TRUE(branch_taken(ISA_OP_BRPOS, 0x7fffffffu));
        CU_ASSERT_FALSE(branch_taken(ISA_OP_BRPOS, 0x80000000u));
        /* $m15 reads zero. */
        w->pc = FX_CODE_BASE;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_BRZ, 15, TARGET), ISA_FLOW_JUMP);
    });
}

static void test_brnzdec(void)
{
    WITH_TILE({
        /* ISA2 §3.7.2.5: tests the old value, always writes value - 1. */
        CU_ASSERT_FALSE(branch_taken(ISA_OP_BRNZDEC, 0));
        CU_ASSERT_EQUAL(w->m[4], 0xffffffffu);
        CU_ASSERT_TRUE(branch_taken(ISA_OP_BRNZDEC, 1));
        CU_ASSERT_EQUAL(w->m[4], 0);
        CU_ASSERT_TRUE(branch_taken(ISA_OP_BRNZDEC, 0x80000000u));
        CU_ASSERT_EQUAL(w->m[4], 0x7fffffffu);
        /* A counted loop: n = 3 runs the body n + 1 = 4 times. */
        w->m[5] = 3;
        unsigned iterations = 0;
        enum isa_flow f;
        do {
            iterations++;
            w->pc = FX_CODE_BASE;
            f = fx_run(t, w, ISA_OP_BRNZDEC, 5, TARGET);
        } while (f == ISA_FLOW_JUMP && iterations < 10);
        CU_ASSERT_EQUAL(iterations, 4);
        CU_ASSERT_EQUAL(w->m[5], 0xffffffffu);
        /* On $m15 the decrement is dropped. */
        w->pc = FX_CODE_BASE;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_BRNZDEC, 15, TARGET), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[15], 0);
    });
}

static void test_call_return(void)
{
    WITH_TILE({
        w->pc = 0x4c204;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_CALL, ISA_MRF_LR, 0x4d000), ISA_FLOW_JUMP);
        CU_ASSERT_EQUAL(w->pc, 0x4d000);
        CU_ASSERT_EQUAL(w->m[ISA_MRF_LR], 0x4c208);
        /* Return with br $lr. */
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_BR, ISA_MRF_LR), ISA_FLOW_JUMP);
        CU_ASSERT_EQUAL(w->pc, 0x4c208);
        /* In a bundle the return address is after the bundle (ISA2 §3.7.2.8). */
        w->pc = 0x4c300;
        isa_insn call = fx_insn(ISA_OP_CALL, 7, 0x4d100);
        t->issue_bytes = ISA_BUNDLE_BYTES;
        CU_ASSERT_EQUAL(fx_dispatch(t, w, &call), ISA_FLOW_JUMP);
        CU_ASSERT_EQUAL(w->m[7], 0x4c308);
        CU_ASSERT_EQUAL(w->pc, 0x4d100);
        /* Linking into $m15 drops the address but still jumps. */
        w->pc = 0x4c400;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_CALL, 15, 0x4d200), ISA_FLOW_JUMP);
        CU_ASSERT_EQUAL(w->m[15], 0);
        CU_ASSERT_EQUAL(w->pc, 0x4d200);
    });
}

static void test_worker_exit(void)
{
    /* exit* always ends the worker; the condition is its exit status
     * (true for `exits`, false for `stays`). */
    static const struct { enum isa_op op; uint32_t exits, stays; } cases[] = {
        {ISA_OP_EXITZ, 0, 1},
        {ISA_OP_EXITNZ, 0x80000000u, 0},
        {ISA_OP_EXITNEG, 0xffffffffu, 0},
        {ISA_OP_EXITPOS, 0, 0x80000000u},
    };
    WITH_TILE({
        for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            isa_context *c = fx_worker(t, 2);
            c->m[3] = cases[i].stays;
            CU_ASSERT_EQUAL(fx_run(t, c, cases[i].op, 3), ISA_FLOW_EXIT);
            CU_ASSERT_EQUAL(c->run_mode, ISA_RUN_INACTIVE);
            CU_ASSERT_EQUAL(c->exit_status, 0);
            c = fx_worker(t, 2);
            c->m[3] = cases[i].exits;
            CU_ASSERT_EQUAL(fx_run(t, c, cases[i].op, 3), ISA_FLOW_EXIT);
            CU_ASSERT_EQUAL(c->run_mode, ISA_RUN_INACTIVE);
            CU_ASSERT_EQUAL(c->exit_status, 1);
        }
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_EXITPOS, 15), ISA_FLOW_EXIT);
        CU_ASSERT_EQUAL(w->run_mode, ISA_RUN_INACTIVE);
    });
}

static void test_supervisor_exit(void)
{
    WITH_TILE({
        isa_context *s = fx_supervisor(t);
        fx_worker(t, 4);
        /* Workers 1 and 4 still run. */
        CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_EXITZ, 15), ISA_FLOW_FAULT);
        isa_fault f = fx_take_fault(t);
        CU_ASSERT_EQUAL(f.exception, ISA_EXC_RUN);
        CU_ASSERT_EQUAL(f.context, 0);
        CU_ASSERT_EQUAL(f.pc, FX_CODE_BASE);
        CU_ASSERT_STRING_EQUAL(f.message,
                               "exitz: the supervisor ends the program while workers 1, 4 still run (sync 0 first)");
        CU_ASSERT_EQUAL(s->run_mode, ISA_RUN_RUNNING);
        /* With the workers gone the program ends, whatever the status. */
        t->ctx[1].run_mode = ISA_RUN_INACTIVE;
        t->ctx[4].run_mode = ISA_RUN_INACTIVE;
        s->m[1] = 5;
        CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_EXITZ, 1), ISA_FLOW_EXIT);
        CU_ASSERT_EQUAL(s->run_mode, ISA_RUN_DONE);
        CU_ASSERT_EQUAL(s->exit_status, 0);
    });
}

static void test_trap(void)
{
    WITH_TILE({
        w->m[2] = 99;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_TRAP, 13), ISA_FLOW_FAULT);
        isa_fault f = fx_take_fault(t);
        CU_ASSERT_EQUAL(f.exception, ISA_EXC_BREAK);
        CU_ASSERT_EQUAL(f.context, 1);
        CU_ASSERT_EQUAL(t->trap_code, 13);
        CU_ASSERT_STRING_EQUAL(f.message, "trap 13");
        CU_ASSERT_EQUAL(w->m[2], 99);
        CU_ASSERT_EQUAL(w->pc, FX_CODE_BASE);
    });
}

/* ---- rpt --------------------------------------------------------------------- */

static void test_rpt_immediate(void)
{
    WITH_TILE({
        /* Solo rpt at 0x4c104: the body starts at 0x4c108 (aligned), two
         * bundles long (size 1). */
        w->pc = 0x4c104;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_RPT, 3, 1), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->rpt_first, 0x4c108);
        CU_ASSERT_EQUAL(w->rpt_end, 0x4c118);
        CU_ASSERT_EQUAL(w->rpt_remaining, 3);          /* the body runs 3 times */
        CU_ASSERT_EQUAL(w->pc, 0x4c104);
        /* The CSRs show the rpt state. */
        w->pc = 0x4c108;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_GET, 6, ISA_CSR_REPEAT_COUNT), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[6], 3);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_GET, 6, ISA_CSR_REPEAT_FIRST), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[6], 0x4c108);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_GET, 6, ISA_CSR_REPEAT_END), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[6], 0x4c118);
        /* In a bundle at 0x4c200 the body starts after the bundle. */
        w->pc = 0x4c200;
        isa_insn rpt = fx_insn(ISA_OP_RPT, 4095, 255);
        t->issue_bytes = ISA_BUNDLE_BYTES;
        CU_ASSERT_EQUAL(fx_dispatch(t, w, &rpt), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->rpt_first, 0x4c208);
        CU_ASSERT_EQUAL(w->rpt_end, 0x4c208 + 256 * 8);
        CU_ASSERT_EQUAL(w->rpt_remaining, 4095);
    });
}

static void test_rpt_zero_trip(void)
{
    WITH_TILE({
        w->pc = 0x4c104;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_RPT, 0, 2), ISA_FLOW_JUMP);
        CU_ASSERT_EQUAL(w->pc, 0x4c108 + 3 * 8);       /* branched over the body */
        CU_ASSERT_EQUAL(w->rpt_remaining, 0);
        /* Register count 0, and a register count masked to 12 bits. */
        w->pc = 0x4c104;
        w->m[2] = 0x1000;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_RPT_M, 2, 0), ISA_FLOW_JUMP);
        CU_ASSERT_EQUAL(w->pc, 0x4c110);
        w->pc = 0x4c104;
        w->m[2] = 0x1005;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_RPT_M, 2, 0), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->rpt_remaining, 5);
        CU_ASSERT_EQUAL(w->rpt_end, 0x4c110);
        w->pc = 0x4c104;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_RPT_M, 15, 0), ISA_FLOW_JUMP);
        CU_ASSERT_EQUAL(w->pc, 0x4c110);
    });
}

static void test_rpt_errors(void)
{
    WITH_TILE({
        /* Solo rpt at an 8-aligned address: the body would start at +4. */
        w->pc = 0x4c100;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_RPT, 2, 0), ISA_FLOW_FAULT);
        isa_fault f = fx_take_fault(t);
        CU_ASSERT_EQUAL(f.exception, ISA_EXC_RPT);
        CU_ASSERT_EQUAL(f.address, 0x4c104);
        CU_ASSERT_STRING_EQUAL(f.message,
                               "rpt: the repeat body at 0x4c104 is not 8-byte aligned (put the rpt in a bundle, or align the body)");
        CU_ASSERT_EQUAL(w->rpt_remaining, 0);
        /* A body running past region 0. */
        w->pc = 0x7fff4;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_RPT, 1, 1), ISA_FLOW_FAULT);
        f = fx_take_fault(t);
        CU_ASSERT_EQUAL(f.exception, ISA_EXC_RPT);
        CU_ASSERT_STRING_EQUAL(f.message, "rpt: the repeat body 0x7fff8-0x80007 is not in executable memory (region 0)");
        CU_ASSERT_EQUAL(w->rpt_remaining, 0);
        CU_ASSERT_EQUAL(w->pc, 0x7fff4);
        /* Ending exactly where region 0 ends is still refused (the address
         * after the body must be executable, ISA2 §3.7.2.13). */
        w->pc = 0x7ffec;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_RPT, 1, 1), ISA_FLOW_FAULT);
        fx_take_fault(t);
        w->pc = 0x7ffe4;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_RPT, 1, 1), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->rpt_end, 0x7fff8);
    });
}

/* ---- run, runall, sync ------------------------------------------------------ */

static void test_run(void)
{
    WITH_TILE({
        isa_context *s = fx_supervisor(t);
        t->ctx[1].run_mode = ISA_RUN_INACTIVE;
        s->csr[ISA_CSR_FP_ICTL] = 0x00080002u;
        t->ctx[1].csr[ISA_CSR_FP_STS] = 0x7;
        s->m[0] = 0x4c400;
        s->m[1] = 0x90000;
        CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_RUN, 0, 1, 2), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(s->m[2], 1);
        isa_context *w1 = &t->ctx[1];
        CU_ASSERT_EQUAL(w1->run_mode, ISA_RUN_RUNNING);
        CU_ASSERT_EQUAL(w1->pc, 0x4c400);
        CU_ASSERT_EQUAL(w1->csr[ISA_CSR_VERTEX_BASE], 0x90000);
        CU_ASSERT_EQUAL(w1->csr[ISA_CSR_FP_CTL], 0x00080002u);
        CU_ASSERT_EQUAL(w1->csr[ISA_CSR_FP_STS], 0);
        CU_ASSERT_EQUAL(w1->csr[ISA_CSR_WSR] & 7u, 0);
        CU_ASSERT_EQUAL(t->started_workers, 1u << 1);
        /* The next one is worker 2 ... */
        s->m[1] = 0x90040;
        CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_RUN, 0, 1, 2), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(s->m[2], 2);
        CU_ASSERT_EQUAL(t->ctx[2].csr[ISA_CSR_WSR] & 7u, 1);
        CU_ASSERT_EQUAL(t->ctx[2].csr[ISA_CSR_VERTEX_BASE], 0x90040);
        /* ... and after worker 1 exits, worker 1 again (lowest free). */
        w1->run_mode = ISA_RUN_INACTIVE;
        CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_RUN, 0, 1, 2), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(s->m[2], 1);
        CU_ASSERT_EQUAL(t->started_workers, (1u << 1) | (1u << 2));
        /* All busy: stall, nothing changed. */
        for (unsigned k = 1; k <= ISA_WORKERS; k++)
            t->ctx[k].run_mode = ISA_RUN_RUNNING;
        s->m[2] = 77;
        CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_RUN, 0, 1, 2), ISA_FLOW_STALL);
        CU_ASSERT_EQUAL(s->m[2], 77);
    });
}

static void test_run_errors(void)
{
    WITH_TILE({
        isa_context *s = fx_supervisor(t);
        t->ctx[1].run_mode = ISA_RUN_INACTIVE;
        s->m[1] = 0x90000;
        s->m[0] = 0x4c402;
        CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_RUN, 0, 1, 2), ISA_FLOW_FAULT);
        isa_fault f = fx_take_fault(t);
        CU_ASSERT_EQUAL(f.exception, ISA_EXC_RUN);
        CU_ASSERT_STRING_EQUAL(f.message, "run: worker entry 0x4c402 is not 4-byte aligned");
        s->m[0] = 0x90000;
        CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_RUN, 0, 1, 2), ISA_FLOW_FAULT);
        f = fx_take_fault(t);
        CU_ASSERT_STRING_EQUAL(f.message, "run: worker entry 0x90000 is not in executable memory (region 0)");
        s->m[0] = 0x4c400;
        s->m[1] = 0x90002;
        CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_RUNALL, 0, 1, 3), ISA_FLOW_FAULT);
        f = fx_take_fault(t);
        CU_ASSERT_STRING_EQUAL(f.message, "runall: vertex base 0x90002 is not 4-byte aligned");
        CU_ASSERT_EQUAL(t->started_workers, 0);
        CU_ASSERT_EQUAL(t->ctx[1].run_mode, ISA_RUN_INACTIVE);
    });
}

static void test_runall(void)
{
    WITH_TILE({
        isa_context *s = fx_supervisor(t);
        s->csr[ISA_CSR_FP_ICTL] = 0x1;
        s->m[0] = 0x4c600;
        s->m[1] = 0xa0000;
        s->m[3] = 0x30;
        /* Worker 1 still runs: stall. */
        CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_RUNALL, 0, 1, 3), ISA_FLOW_STALL);
        CU_ASSERT_EQUAL(t->started_workers, 0);
        t->ctx[1].run_mode = ISA_RUN_INACTIVE;
        CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_RUNALL, 0, 1, 3), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(t->started_workers, 0x7e);
        for (unsigned k = 1; k <= ISA_WORKERS; k++) {
            CU_ASSERT_EQUAL(t->ctx[k].run_mode, ISA_RUN_RUNNING);
            CU_ASSERT_EQUAL(t->ctx[k].pc, 0x4c600);
            CU_ASSERT_EQUAL(t->ctx[k].csr[ISA_CSR_VERTEX_BASE], 0xa0000 + (k - 1) * 0x30);
            CU_ASSERT_EQUAL(t->ctx[k].csr[ISA_CSR_WSR] & 7u, k - 1);
            CU_ASSERT_EQUAL(t->ctx[k].csr[ISA_CSR_FP_CTL], 1);
        }
    });
}

static void test_sync(void)
{
    WITH_TILE({
        isa_context *s = fx_supervisor(t);
        /* Worker 1 runs: every zone waits for it. */
        CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_SYNC, ISA_SYNC_WORKERS), ISA_FLOW_STALL);
        CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_SYNC, ISA_SYNC_INTERNAL), ISA_FLOW_STALL);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_EXITZ, 15), ISA_FLOW_EXIT);
        CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_SYNC, ISA_SYNC_WORKERS), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_SYNC, ISA_SYNC_INTERNAL), ISA_FLOW_SYNC);
        CU_ASSERT_EQUAL(t->sync_zone, ISA_SYNC_INTERNAL);
        CU_ASSERT_EQUAL(s->pc, FX_CODE_BASE);          /* left on the sync */
        CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_SYNC, ISA_SYNC_EXTERNAL), ISA_FLOW_SYNC);
        CU_ASSERT_EQUAL(t->sync_zone, ISA_SYNC_EXTERNAL);
        CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_SYNC, ISA_SYNC_EXCHANGE), ISA_FLOW_SYNC);
        CU_ASSERT_EQUAL(t->sync_zone, ISA_SYNC_EXCHANGE);
        CU_ASSERT_EQUAL(s->pc, FX_CODE_BASE);
        CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_SYNC, 4), ISA_FLOW_FAULT);
        isa_fault f = fx_take_fault(t);
        CU_ASSERT_EQUAL(f.exception, ISA_EXC_INVALID_OPERAND);
        CU_ASSERT_STRING_EQUAL(f.message,
                               "sync: 4 is not a sync zone (0 workers, 1 internal, 2 external, 3 end of exchange)");
        CU_ASSERT_EQUAL(t->sync_zone, ISA_SYNC_EXCHANGE);
    });
}

static void test_exchange_unattached(void)
{
    WITH_TILE({
        isa_context *s = fx_supervisor(t);
        CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_XSEND, 0, 1, 2), ISA_FLOW_FAULT);
        isa_fault f = fx_take_fault(t);
        CU_ASSERT_EQUAL(f.exception, ISA_EXC_EXCHANGE);
        CU_ASSERT_STRING_EQUAL(f.message,
                               "xsend: no exchange is attached to this tile (exchange instructions run in a chip program)");
        CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_XRECV, 0, 1, 2), ISA_FLOW_FAULT);
        f = fx_take_fault(t);
        CU_ASSERT_STRING_EQUAL(f.message,
                               "xrecv: no exchange is attached to this tile (exchange instructions run in a chip program)");
    });
}

/* With an exchange log attached, xsend/xrecv check their operands and log
 * what they did; the send's bytes are the memory as it was at issue. */
static void test_exchange_attached(void)
{
    WITH_TILE({
        xch_log log;
        memset(&log, 0, sizeof log);
        log.system_tiles = 8;
        t->xlog = &log;
        isa_context *s = fx_supervisor(t);
        uint32_t words[3] = { 0x11111111, 0x22222222, 0x33333333 };
        CU_ASSERT_EQUAL(tmem_write_bytes(&t->mem, FX_DATA1, words, sizeof words), TMEM_OK);
        s->m[0] = FX_DATA1;
        s->m[1] = 12;
        s->m[2] = 5;
        t->cycle = 40;
        CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_XSEND, 0, 1, 2), ISA_FLOW_NEXT);
        words[0] = 0;
        tmem_write_bytes(&t->mem, FX_DATA1, words, 4); /* too late to change what was sent */
        CU_ASSERT_EQUAL_FATAL(log.n_sends, 1);
        CU_ASSERT_EQUAL(log.sends[0].pc, FX_CODE_BASE);
        CU_ASSERT_EQUAL(log.sends[0].issue_cycle, 40);
        CU_ASSERT_EQUAL(log.sends[0].start_cycle, 41);
        CU_ASSERT_EQUAL(log.sends[0].addr, FX_DATA1);
        CU_ASSERT_EQUAL(log.sends[0].bytes, 12);
        CU_ASSERT_EQUAL(log.sends[0].endpoint, 5);
        uint32_t sent[3];
        memcpy(sent, log.data + log.sends[0].data_offset, 12);
        CU_ASSERT_EQUAL(sent[0], 0x11111111);
        CU_ASSERT_EQUAL(sent[2], 0x33333333);
        /* Broadcast, host and streaming-memory endpoints. */
        s->m[2] = XCH_BROADCAST;
        CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_XSEND, 0, 1, 2), ISA_FLOW_NEXT);
        s->m[2] = XCH_HOST | 3;
        CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_XSEND, 0, 1, 2), ISA_FLOW_NEXT);
        s->m[2] = XCH_STREAM_MEMORY | 7;
        CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_XRECV, 0, 1, 2), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(log.n_sends, 3);
        CU_ASSERT_EQUAL_FATAL(log.n_recvs, 1);
        CU_ASSERT_EQUAL(log.recvs[0].endpoint, XCH_STREAM_MEMORY | 7);
        CU_ASSERT_EQUAL(log.recvs[0].bytes, 12);

        /* The faults, each with its message. */
        s->m[2] = 1;
        s->m[0] = FX_DATA1 + 2;
        CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_XSEND, 0, 1, 2), ISA_FLOW_FAULT);
        isa_fault f = fx_take_fault(t);
        CU_ASSERT_EQUAL(f.exception, ISA_EXC_MEM_ALIGN);
        CU_ASSERT_STRING_EQUAL(f.message, "xsend at 0x90002: address not 4-byte aligned");
        s->m[0] = 0xe7ff8;
        s->m[1] = 16;
        CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_XRECV, 0, 1, 2), ISA_FLOW_FAULT);
        f = fx_take_fault(t);
        CU_ASSERT_EQUAL(f.exception, ISA_EXC_MEM_RANGE);
        CU_ASSERT_EQUAL(f.address, 0xe7ff8);
        CU_ASSERT_STRING_EQUAL(f.message, "xrecv at 0xe7ff8: 16 bytes outside tile memory (0x4c000-0xe7fff)");
        s->m[0] = FX_DATA1;
        s->m[1] = 6;
        CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_XSEND, 0, 1, 2), ISA_FLOW_FAULT);
        f = fx_take_fault(t);
        CU_ASSERT_EQUAL(f.exception, ISA_EXC_INVALID_OPERAND);
        CU_ASSERT_STRING_EQUAL(f.message, "xsend: 6 bytes is not a whole number of 32-bit words");
        s->m[1] = 8;
        s->m[2] = 8; /* the system has tiles 0..7 */
        CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_XSEND, 0, 1, 2), ISA_FLOW_FAULT);
        f = fx_take_fault(t);
        CU_ASSERT_EQUAL(f.exception, ISA_EXC_EXCHANGE);
        CU_ASSERT_STRING_EQUAL(f.message, "xsend: endpoint 0x8 is not a tile (0-7), the broadcast, a multicast group, "
                                          "a host stream or a streaming-memory buffer");
        /* A multicast: the sender names its group only; a receiver names the
         * sending tile, which must exist. */
        s->m[2] = xch_multicast_recv(3, 5);
        CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_XSEND, 0, 1, 2), ISA_FLOW_FAULT);
        f = fx_take_fault(t);
        CU_ASSERT_EQUAL(f.exception, ISA_EXC_EXCHANGE);
        CU_ASSERT_STRING_EQUAL(f.message, "xsend: multicast endpoint 0x20060005 names a tile (a sender names only its "
                                          "group)");
        s->m[2] = xch_multicast_recv(3, 8);
        CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_XRECV, 0, 1, 2), ISA_FLOW_FAULT);
        f = fx_take_fault(t);
        CU_ASSERT_EQUAL(f.exception, ISA_EXC_EXCHANGE);
        s->m[2] = XCH_HOST | XCH_STREAM_MEMORY;
        CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_XRECV, 0, 1, 2), ISA_FLOW_FAULT);
        f = fx_take_fault(t);
        CU_ASSERT_EQUAL(f.exception, ISA_EXC_EXCHANGE);
        s->m[2] = XCH_BROADCAST;
        CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_XRECV, 0, 1, 2), ISA_FLOW_FAULT);
        f = fx_take_fault(t);
        CU_ASSERT_STRING_EQUAL(f.message,
                               "xrecv: the broadcast endpoint 0xffffffff cannot be a source (name the sending tile)");
        /* Nothing was logged by the faulting instructions. */
        CU_ASSERT_EQUAL(log.n_sends, 3);
        CU_ASSERT_EQUAL(log.n_recvs, 1);
        t->xlog = NULL;
        xch_log_free(&log);
    });
}

/* Every trap code a codelet header defines has its meaning in the ISA's
 * table, tied to the codelet that raises it; other codes have none. */
static void test_codelet_trap_table(void)
{
    static const struct { uint32_t code; const char *file; } codes[] = {
        { ELEMENTWISE_TRAP_BAD_OP, "elementwise.S" },    { EMBEDDING_TRAP_BAD_INDEX, "embedding.S" },
        { LOGIC_TRAP_BAD_OP, "logic.S" },                { ROWWISE_TRAP_BAD_OP, "rowwise.S" },
        { ROWWISE_TRAP_GATHER_INDEX, "rowwise.S" },      { MATMUL_TRAP_SIZES, "matmul.S" },
        { MATMUL_TRAP_PARTIALS, "matmul.S" },            { MATMUL_TRAP_ALIGN, "matmul.S" },
        { MATMUL_TRAP_B_REGION, "matmul.S" },            { MATMUL_TRAP_ROWS, "matmul.S" },
        { MATMUL_F32_TRAP_SIZES, "matmul_f32.S" },       { MATMUL_F32_TRAP_ALIGN, "matmul_f32.S" },
        { MATMUL_F32_TRAP_B_REGION, "matmul_f32.S" },    { MATMUL_F32_TRAP_ROWS, "matmul_f32.S" },
    };
    size_t known = 0;
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        const char *file = NULL;
        CU_ASSERT_PTR_NOT_NULL(isa_codelet_trap_meaning(codes[i].code, &file));
        CU_ASSERT_STRING_EQUAL(file ? file : "", codes[i].file);
    }
    for (uint32_t code = 0; code < 4096; code++)
        known += isa_codelet_trap_meaning(code, NULL) != NULL;
    CU_ASSERT_EQUAL(known, sizeof codes / sizeof codes[0]);
}

void test_register(void)
{
    ADD_SUITE("exec_branch",
              {"br and bri", test_unconditional},
              {"brz, brnz, brneg, brpos", test_conditional},
              {"brnzdec at 0, 1 and in a loop", test_brnzdec},
              {"call and return", test_call_return},
              {"worker exit", test_worker_exit},
              {"supervisor exit", test_supervisor_exit},
              {"trap", test_trap},
              {"codelet trap codes and their meanings", test_codelet_trap_table});
    ADD_SUITE("exec_rpt",
              {"immediate count, CSRs, bundle", test_rpt_immediate},
              {"zero trip and register count", test_rpt_zero_trip},
              {"misaligned or non-executable body", test_rpt_errors});
    ADD_SUITE("exec_workers",
              {"run picks the lowest free worker", test_run},
              {"run/runall argument faults", test_run_errors},
              {"runall vertex bases", test_runall},
              {"sync waits for workers", test_sync},
              {"xsend/xrecv without an exchange", test_exchange_unattached},
              {"xsend/xrecv log and check", test_exchange_attached});
}
