/*
 * test_exec_mem.c — loads, stores and pace instructions (ISA2 §3.4,
 * §3.7.5, §4.1.1): every width and sign extension, the offset and
 * post-increment address forms, the triple-packed address sequences, each
 * memory exception with its message, and the deferral of ARF writes.
 */
#include <CUnit/CUnit.h>
#include <string.h>

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

/* The fault of the last instruction, checked for kind, address and text. */
static void expect_fault(enum isa_exception exc, uint32_t address, const char *message)
{
    isa_fault f = fx_take_fault(t);
    CU_ASSERT_EQUAL(f.exception, exc);
    CU_ASSERT_EQUAL(f.address, address);
    CU_ASSERT_EQUAL(f.context, w->id);
    CU_ASSERT_STRING_EQUAL(f.message, message);
    if (strcmp(f.message, message) != 0)
        fprintf(stderr, "\n    got:      %s\n    expected: %s\n", f.message, message);
}

/* ---- widths -------------------------------------------------------------------- */

static void test_load_widths(void)
{
    WITH_TILE({
        static const uint8_t bytes[16] = {
            0x80, 0x7f, 0xfe, 0xff, 0x34, 0x12, 0x00, 0x80,
            0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
        };
        fx_poke(t, FX_DATA0, bytes, sizeof bytes);
        fx_poke(t, FX_DATA1, bytes, sizeof bytes);
        w->m[1] = FX_DATA0;     /* base */
        w->m[2] = 0;            /* delta */
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LDZ8, 3, 1, 2, 0), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[3], 0x80);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LDS8, 3, 1, 2, 0), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[3], 0xffffff80u);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LDS8, 3, 1, 2, 1), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[3], 0x7f);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LDZ8, 3, 1, 2, 3), ISA_FLOW_NEXT);  /* byte 3 */
        CU_ASSERT_EQUAL(w->m[3], 0xff);
        /* 16-bit: the immediate counts half-words. */
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LDZ16, 3, 1, 2, 1), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[3], 0xfffe);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LDS16, 3, 1, 2, 1), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[3], 0xfffffffeu);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LDS16, 3, 1, 2, 2), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[3], 0x1234);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LDS16, 3, 1, 2, 3), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[3], 0xffff8000u);
        /* 32-bit into the MRF and the ARF; the immediate counts words. */
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD32, 3, 1, 2, 1), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[3], 0x80001234u);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD32_A, 5, 1, 2, 0), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->a[5], 0xfffe7f80u);
        /* ldb16 broadcasts one half into both halves. */
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LDB16, 6, 1, 2, 2), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->a[6], 0x12341234u);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LDB16, 6, 1, 2, 1), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->a[6], 0xfffefffeu);
        /* 64-bit into a pair: low word in the even register. */
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD64, 2, 1, 2, 1), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->a[2], 0x04030201u);
        CU_ASSERT_EQUAL(w->a[3], 0x08070605u);
        /* 128-bit from region 1 into a quad. */
        w->m[1] = FX_DATA1;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD128, 4, 1, 2, 0), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->a[4], 0xfffe7f80u);
        CU_ASSERT_EQUAL(w->a[5], 0x80001234u);
        CU_ASSERT_EQUAL(w->a[6], 0x04030201u);
        CU_ASSERT_EQUAL(w->a[7], 0x08070605u);
        /* Into $a14:15 ($azeros): nothing is written. */
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD64, 14, 1, 2, 0), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->a[14], 0);
        CU_ASSERT_EQUAL(w->a[15], 0);
        /* $m15 as destination. */
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD32, 15, 1, 2, 0), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[15], 0);
    });
}

static void test_address_forms(void)
{
    WITH_TILE({
        fx_poke32(t, FX_DATA0 + 0x40, 0xa5a5a5a5u);
        /* base + delta + imm * 4, with wrap-around 32-bit arithmetic. */
        w->m[1] = 0xffffff00u;
        w->m[2] = FX_DATA0 + 0x40 + 0x100 - 8 * 4;   /* 0xffffff00 + this + 8 words */
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD32, 3, 1, 2, 8), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[3], 0xa5a5a5a5u);
        /* $m15 as base or delta reads zero. */
        w->m[2] = FX_DATA0;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD32, 3, 15, 2, 16), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[3], 0xa5a5a5a5u);
        /* The largest immediate: 4095 words. */
        fx_poke32(t, FX_DATA1 + 4095 * 4, 0x600df00du);
        w->m[1] = FX_DATA1;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD32, 3, 1, 15, 4095), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[3], 0x600df00du);
        /* ld64's immediate counts 8 bytes, ld128's 16. */
        fx_poke64(t, FX_DATA1 + 24, 0x1122334455667788ull);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD64, 0, 1, 15, 3), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->a[0], 0x55667788u);
        CU_ASSERT_EQUAL(w->a[1], 0x11223344u);
        fx_poke64(t, FX_DATA1 + 32, 0x0102030405060708ull);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD128, 0, 1, 15, 2), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->a[0], 0x05060708u);
        CU_ASSERT_EQUAL(w->a[3], 0);
    });
}

static void test_stores(void)
{
    WITH_TILE({
        w->m[1] = FX_DATA0;
        w->m[2] = 0x10;
        w->m[3] = 0xcafebabeu;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_ST32, 3, 1, 2, 2), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(fx_peek32(t, FX_DATA0 + 0x18), 0xcafebabeu);
        CU_ASSERT_EQUAL(fx_peek32(t, FX_DATA0 + 0x14), 0);
        CU_ASSERT_EQUAL(fx_peek32(t, FX_DATA0 + 0x1c), 0);
        w->a[5] = 0x3f800000u;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_ST32_A, 5, 1, 2, 0), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(fx_peek32(t, FX_DATA0 + 0x10), 0x3f800000u);
        w->a[6] = 0x89abcdefu;
        w->a[7] = 0x01234567u;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_ST64, 6, 1, 2, 1), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(fx_peek64(t, FX_DATA0 + 0x18), 0x0123456789abcdefull);
        /* Storing $m15 / $a14:15 writes zeros. */
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_ST64, 14, 1, 2, 1), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(fx_peek64(t, FX_DATA0 + 0x18), 0);
        fx_poke32(t, FX_DATA1, 0xffffffffu);
        w->m[1] = FX_DATA1;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_ST32, 15, 1, 15, 0), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(fx_peek32(t, FX_DATA1), 0);
        /* The registers are unchanged by a store. */
        CU_ASSERT_EQUAL(w->m[2], 0x10);
        CU_ASSERT_EQUAL(w->a[6], 0x89abcdefu);
    });
}

/* ---- post-increment ------------------------------------------------------------ */

static void test_step_loads(void)
{
    WITH_TILE({
        for (uint32_t i = 0; i < 32; i++)
            fx_poke32(t, FX_DATA1 + 4 * i, 0x1000u + i);
        w->m[1] = FX_DATA1;
        /* ld32step with a negative stride walks down: 5, 3, 1 words. */
        w->m[2] = 5 * 4;
        uint32_t expect[] = {0x1005, 0x1003, 0x1001};
        for (unsigned i = 0; i < 3; i++) {
            CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD32STEP, 3, 1, 2, -2), ISA_FLOW_NEXT);
            CU_ASSERT_EQUAL(w->m[3], expect[i]);
        }
        CU_ASSERT_EQUAL(w->m[2], (uint32_t)-4);
        /* ... and may go below the base: the delta is a plain 32-bit word. */
        fx_poke32(t, FX_DATA1 - 4, 0x0fff);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD32STEP, 3, 1, 2, 127), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[3], 0x0fff);
        CU_ASSERT_EQUAL(w->m[2], (uint32_t)(-4 + 127 * 4));
        w->m[2] = 0;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD32STEP_A, 4, 1, 2, 3), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->a[4], 0x1000);
        CU_ASSERT_EQUAL(w->m[2], 12);
        /* ld64step: the stride counts 8 bytes; -128 is the smallest. */
        w->m[2] = 0x400;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD64STEP, 2, 1, 2, -128), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[2], 0);
        w->m[2] = 8;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD64STEP, 2, 1, 2, -1), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->a[2], 0x1002);
        CU_ASSERT_EQUAL(w->a[3], 0x1003);
        CU_ASSERT_EQUAL(w->m[2], 0);
        /* ld128step: 16 bytes. */
        w->m[2] = 16;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD128STEP, 4, 1, 2, 2), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->a[4], 0x1004);
        CU_ASSERT_EQUAL(w->a[7], 0x1007);
        CU_ASSERT_EQUAL(w->m[2], 48);
        /* 16-bit and 8-bit steps. */
        fx_poke32(t, FX_DATA0, 0x8001fffeu);
        w->m[1] = FX_DATA0;
        w->m[2] = 2;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LDS16STEP, 3, 1, 2, -1), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[3], 0xffff8001u);
        CU_ASSERT_EQUAL(w->m[2], 0);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LDZ16STEP, 3, 1, 2, 1), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[3], 0xfffe);
        CU_ASSERT_EQUAL(w->m[2], 2);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LDB16STEP, 5, 1, 2, -1), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->a[5], 0x80018001u);
        CU_ASSERT_EQUAL(w->m[2], 0);
        w->m[2] = 3;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LDZ8STEP, 3, 1, 2, -3), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[3], 0x80);
        CU_ASSERT_EQUAL(w->m[2], 0);
        /* Delta in $m15: reads zero, the increment is dropped. */
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LDZ8STEP, 3, 1, 15, 5), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[3], 0xfe);
        CU_ASSERT_EQUAL(w->m[15], 0);
    });
}

static void test_step_stores(void)
{
    WITH_TILE({
        w->m[1] = FX_DATA1;
        w->m[2] = 0x20;
        for (uint32_t i = 0; i < 3; i++) {
            w->m[3] = 0x100 + i;
            CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_ST32STEP, 3, 1, 2, -3), ISA_FLOW_NEXT);
        }
        CU_ASSERT_EQUAL(fx_peek32(t, FX_DATA1 + 0x20), 0x100);
        CU_ASSERT_EQUAL(fx_peek32(t, FX_DATA1 + 0x14), 0x101);
        CU_ASSERT_EQUAL(fx_peek32(t, FX_DATA1 + 0x08), 0x102);
        CU_ASSERT_EQUAL(w->m[2], (uint32_t)-4);
        w->m[2] = 0;
        w->a[1] = 0xabcdu;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_ST32STEP_A, 1, 1, 2, 127), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(fx_peek32(t, FX_DATA1), 0xabcdu);
        CU_ASSERT_EQUAL(w->m[2], 508);
        w->m[2] = 0x40;
        for (uint32_t i = 0; i < 3; i++) {
            w->a[2] = i;
            w->a[3] = 0xf0000000u | i;
            CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_ST64STEP, 2, 1, 2, -2), ISA_FLOW_NEXT);
        }
        CU_ASSERT_EQUAL(fx_peek64(t, FX_DATA1 + 0x40), 0xf000000000000000ull);
        CU_ASSERT_EQUAL(fx_peek64(t, FX_DATA1 + 0x30), 0xf000000100000001ull);
        CU_ASSERT_EQUAL(fx_peek64(t, FX_DATA1 + 0x20), 0xf000000200000002ull);
        CU_ASSERT_EQUAL(w->m[2], 0x10);
    });
}

/* ---- faults -------------------------------------------------------------------- */

static void test_range_faults(void)
{
    WITH_TILE({
        /* Last word of memory loads, the next one faults; so does the word
         * below the base. */
        fx_poke32(t, 0xe7ffc, 0x5eed);
        w->m[1] = 0xe7ffc;
        w->m[3] = 0x77;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD32, 3, 1, 15, 0), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[3], 0x5eed);
        w->m[3] = 0x77;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD32, 3, 1, 15, 1), ISA_FLOW_FAULT);
        CU_ASSERT_EQUAL(w->m[3], 0x77);
        expect_fault(ISA_EXC_MEM_RANGE, 0xe8000, "ld32 at 0xe8000: address outside tile memory (0x4c000-0xe7fff)");
        w->m[1] = 0x4c000;
        w->m[2] = (uint32_t)-4;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD32, 3, 1, 2, 0), ISA_FLOW_FAULT);
        expect_fault(ISA_EXC_MEM_RANGE, 0x4bffc, "ld32 at 0x4bffc: address outside tile memory (0x4c000-0xe7fff)");
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LDZ8, 3, 1, 2, 3), ISA_FLOW_FAULT);
        expect_fault(ISA_EXC_MEM_RANGE, 0x4bfff, "ldz8 at 0x4bfff: address outside tile memory (0x4c000-0xe7fff)");
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LDZ8, 3, 1, 2, 4), ISA_FLOW_NEXT);      /* 0x4c000 */
        /* A faulting step load changes neither destination nor delta; a
         * faulting ARF load queues nothing. */
        w->m[2] = 0x9c000;
        isa_insn ld = fx_insn(ISA_OP_LD64STEP, 2, 1, 2, 1);
        CU_ASSERT_EQUAL(fx_dispatch(t, w, &ld), ISA_FLOW_FAULT);   /* no retire: see the queue */
        CU_ASSERT_EQUAL(w->m[2], 0x9c000);
        CU_ASSERT_EQUAL(w->pending_a_mask, 0);
        expect_fault(ISA_EXC_MEM_RANGE, 0xe8000, "ld64step at 0xe8000: address outside tile memory (0x4c000-0xe7fff)");
        /* Stores: nothing is written. */
        w->m[1] = 0;
        w->m[2] = 0;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_ST32STEP, 3, 1, 2, 1), ISA_FLOW_FAULT);
        CU_ASSERT_EQUAL(w->m[2], 0);
        expect_fault(ISA_EXC_MEM_RANGE, 0, "st32step at 0x0: address outside tile memory (0x4c000-0xe7fff)");
        w->m[1] = 0xfffffff8u;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_ST64, 0, 1, 15, 0), ISA_FLOW_FAULT);
        expect_fault(ISA_EXC_MEM_RANGE, 0xfffffff8u,
                     "st64 at 0xfffffff8: address outside tile memory (0x4c000-0xe7fff)");
    });
}

static void test_align_and_region_faults(void)
{
    WITH_TILE({
        w->m[1] = 0x4c004;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD64, 0, 1, 15, 0), ISA_FLOW_FAULT);
        expect_fault(ISA_EXC_MEM_ALIGN, 0x4c004, "ld64 at 0x4c004: address not 8-byte aligned");
        w->m[1] = 0x4c001;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LDS16, 3, 1, 15, 0), ISA_FLOW_FAULT);
        expect_fault(ISA_EXC_MEM_ALIGN, 0x4c001, "lds16 at 0x4c001: address not 2-byte aligned");
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LDZ8, 3, 1, 15, 0), ISA_FLOW_NEXT);  /* bytes: any address */
        w->m[1] = 0x4c002;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_ST32, 3, 1, 15, 0), ISA_FLOW_FAULT);
        expect_fault(ISA_EXC_MEM_ALIGN, 0x4c002, "st32 at 0x4c002: address not 4-byte aligned");
        /* ld128: 16-byte alignment, and only the interleaved region. */
        w->m[1] = 0x90008;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD128, 0, 1, 15, 0), ISA_FLOW_FAULT);
        expect_fault(ISA_EXC_MEM_ALIGN, 0x90008, "ld128 at 0x90008: address not 16-byte aligned");
        w->m[1] = 0x7fff0;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD128, 0, 1, 15, 0), ISA_FLOW_FAULT);
        expect_fault(ISA_EXC_MEM_REGION, 0x7fff0,
                     "ld128 at 0x7fff0: a 128-bit load must be in the interleaved region 1 (from 0x80000)");
        w->m[1] = 0x7fff0;
        w->m[2] = 0;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD128STEP, 0, 1, 2, 1), ISA_FLOW_FAULT);
        CU_ASSERT_EQUAL(w->m[2], 0);
        fx_take_fault(t);
        w->m[1] = 0x80000;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD128STEP, 0, 1, 2, 1), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[2], 16);
        /* 64-bit stores go anywhere aligned. */
        w->m[1] = 0x4c008;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_ST64, 0, 1, 15, 0), ISA_FLOW_NEXT);
    });
}

static void test_double_destination(void)
{
    WITH_TILE({
        w->m[1] = FX_DATA0;
        w->m[2] = 0;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD32STEP, 2, 1, 2, 1), ISA_FLOW_FAULT);
        CU_ASSERT_EQUAL(w->m[2], 0);
        expect_fault(ISA_EXC_INVALID_OPERAND, 0,
                     "ld32step: $m2 is both the destination and the post-incremented delta");
        w->m[4] = 0;
        w->m[5] = 0x100;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD2X64PACE, 2, 2, 4, 6, 0), ISA_FLOW_FAULT);
        expect_fault(ISA_EXC_INVALID_OPERAND, 0, "ld2x64pace: both loads name the destination $a2:3");
    });
}

/* ---- pace ------------------------------------------------------------------------ */

/* The triple-packed format, written independently of exec_mem.c from ISA2
 * §4.1.1.4-6. */
static void pack3(uint32_t a0, uint32_t a1, uint32_t a2, uint32_t *lo, uint32_t *hi)
{
    *lo = (a0 & 0x1fffff) | (a2 & 0x7ff) << 21;
    *hi = (a1 & 0x1fffff) | ((a2 >> 11) & 0x3ff) << 21;
}

static void unpack3(uint32_t lo, uint32_t hi, uint32_t a[3])
{
    a[0] = lo & 0x1fffff;
    a[1] = hi & 0x1fffff;
    a[2] = (lo >> 21) | ((hi >> 21) & 0x3ff) << 11;
}

/* Stride register: fields 3, -2, 5 (bits 9:0, 19:10, 29:20). */
#define STRIDES (3u | (0x3feu << 10) | (5u << 20))

static void fill_pattern(uint32_t base, unsigned words, uint32_t tag)
{
    for (unsigned i = 0; i < words; i++)
        fx_poke32(t, base + 4 * i, tag | (base + 4 * i));
}

static uint64_t pattern64(uint32_t addr, uint32_t tag)
{
    return (uint64_t)(tag | (addr + 4)) << 32 | (tag | addr);
}

static void test_ld2x64pace(void)
{
    WITH_TILE({
        fill_pattern(0x90000, 64, 0xa0000000u);
        fill_pattern(0x98000 - 0x80, 96, 0xb0000000u);
        w->m[6] = STRIDES;
        pack3(0x90000, 0x98000, 0x4c124, &w->m[4], &w->m[5]);
        /* Selects: address 0 +1 (0b00), address 1 by field 0 (+3). */
        uint32_t ea0 = 0x90000, ea1 = 0x98000;
        for (unsigned i = 0; i < 3; i++) {
            CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD2X64PACE, 0, 2, 4, 6, 0x4), ISA_FLOW_NEXT);
            CU_ASSERT_EQUAL((uint64_t)w->a[1] << 32 | w->a[0], pattern64(ea0, 0xa0000000u));
            CU_ASSERT_EQUAL((uint64_t)w->a[3] << 32 | w->a[2], pattern64(ea1, 0xb0000000u));
            ea0 += 8;
            ea1 += 24;
            uint32_t a[3];
            unpack3(w->m[4], w->m[5], a);
            CU_ASSERT_EQUAL(a[0], ea0);
            CU_ASSERT_EQUAL(a[1], ea1);
            CU_ASSERT_EQUAL(a[2], 0x4c124);     /* unused address: kept */
        }
        /* Selects 3 (field 2: +5) and 2 (field 1: -2), into pairs that are
         * not adjacent. */
        for (unsigned i = 0; i < 2; i++) {
            CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD2X64PACE, 0, 4, 4, 6, 0x3 | 0x2 << 2), ISA_FLOW_NEXT);
            CU_ASSERT_EQUAL((uint64_t)w->a[1] << 32 | w->a[0], pattern64(ea0, 0xa0000000u));
            CU_ASSERT_EQUAL((uint64_t)w->a[5] << 32 | w->a[4], pattern64(ea1, 0xb0000000u));
            ea0 += 40;
            ea1 -= 16;
            uint32_t a[3];
            unpack3(w->m[4], w->m[5], a);
            CU_ASSERT_EQUAL(a[0], ea0);
            CU_ASSERT_EQUAL(a[1], ea1);
            CU_ASSERT_EQUAL(a[2], 0x4c124);
        }
        /* Destination pairs in the other order. */
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD2X64PACE, 2, 0, 4, 6, 0xf), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL((uint64_t)w->a[3] << 32 | w->a[2], pattern64(ea0, 0xa0000000u));
        CU_ASSERT_EQUAL((uint64_t)w->a[1] << 32 | w->a[0], pattern64(ea1, 0xb0000000u));
    });
}

static void test_ldst64pace(void)
{
    WITH_TILE({
        fill_pattern(0x90000, 64, 0xc0000000u);
        w->m[6] = STRIDES;
        pack3(0x90000, 0x4c555, 0xa0000, &w->m[8], &w->m[9]);
        /* Load address 0 by field 0 (+3), store address 2 by field 2 (+5). */
        uint32_t ld = 0x90000, st = 0xa0000;
        for (uint32_t i = 0; i < 3; i++) {
            w->a[2] = 0x11110000u + i;
            w->a[3] = 0x22220000u + i;
            CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LDST64PACE, 0, 2, 8, 6, 0x1 | 0x3 << 2), ISA_FLOW_NEXT);
            CU_ASSERT_EQUAL((uint64_t)w->a[1] << 32 | w->a[0], pattern64(ld, 0xc0000000u));
            CU_ASSERT_EQUAL(fx_peek64(t, st), (uint64_t)(0x22220000u + i) << 32 | (0x11110000u + i));
            ld += 24;
            st += 40;
            uint32_t a[3];
            unpack3(w->m[8], w->m[9], a);
            CU_ASSERT_EQUAL(a[0], ld);
            CU_ASSERT_EQUAL(a[1], 0x4c555);     /* unused address: kept, even misaligned */
            CU_ASSERT_EQUAL(a[2], st);
        }
        /* Loading and storing the same register pair: the store takes the
         * old value, the load lands after. */
        w->a[0] = 0xdead0000u;
        w->a[1] = 0xbeef0000u;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LDST64PACE, 0, 0, 8, 6, 0x0), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(fx_peek64(t, st), 0xbeef0000dead0000ull);
        CU_ASSERT_EQUAL((uint64_t)w->a[1] << 32 | w->a[0], pattern64(ld, 0xc0000000u));
    });
}

static void test_ld2xst64pace(void)
{
    WITH_TILE({
        fill_pattern(0x50000, 16, 0xd0000000u);
        fill_pattern(0x90000 - 0x40, 32, 0xe0000000u);
        w->m[7] = STRIDES;
        pack3(0x50000, 0x90000, 0xa0000, &w->m[2], &w->m[3]);
        /* Address 0 +1, address 1 by field 1 (-2), address 2 by field 0 (+3). */
        uint32_t e0 = 0x50000, e1 = 0x90000, e2 = 0xa0000;
        for (uint32_t i = 0; i < 3; i++) {
            w->a[4] = i;
            w->a[5] = ~i;
            CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD2XST64PACE, 0, 4, 2, 7, 0x0 | 0x2 << 2 | 0x1 << 4),
                            ISA_FLOW_NEXT);
            CU_ASSERT_EQUAL((uint64_t)w->a[1] << 32 | w->a[0], pattern64(e0, 0xd0000000u));
            CU_ASSERT_EQUAL((uint64_t)w->a[3] << 32 | w->a[2], pattern64(e1, 0xe0000000u));
            CU_ASSERT_EQUAL(fx_peek64(t, e2), (uint64_t)~i << 32 | i);
            e0 += 8;
            e1 -= 16;
            e2 += 24;
            uint32_t a[3];
            unpack3(w->m[2], w->m[3], a);
            CU_ASSERT_EQUAL(a[0], e0);
            CU_ASSERT_EQUAL(a[1], e1);
            CU_ASSERT_EQUAL(a[2], e2);
        }
    });
}

static void test_st64pace(void)
{
    WITH_TILE({
        w->m[6] = STRIDES;
        pack3(0x4c008, 0x4c010, 0xa0000, &w->m[0], &w->m[1]);
        static const struct { unsigned select; int32_t step_atoms; } seq[] = {
            {0, 1}, {1, 3}, {2, -2}, {3, 5}, {2, -2},
        };
        uint32_t st = 0xa0000;
        for (unsigned i = 0; i < sizeof seq / sizeof seq[0]; i++) {
            w->a[2] = 0x100 + i;
            w->a[3] = 0x200 + i;
            CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_ST64PACE, 2, 0, 6, (int)seq[i].select), ISA_FLOW_NEXT);
            CU_ASSERT_EQUAL(fx_peek64(t, st), (uint64_t)(0x200 + i) << 32 | (0x100 + i));
            st += (uint32_t)(seq[i].step_atoms * 8);
            uint32_t a[3];
            unpack3(w->m[0], w->m[1], a);
            CU_ASSERT_EQUAL(a[0], 0x4c008);
            CU_ASSERT_EQUAL(a[1], 0x4c010);
            CU_ASSERT_EQUAL(a[2], st);
        }
        CU_ASSERT_EQUAL(st, 0xa0000 + 8 * (1 + 3 - 2 + 5 - 2));
        /* Strides at the field limits: +511 and -512 atoms. */
        w->m[6] = 0x1ffu | 0x200u << 10;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_ST64PACE, 2, 0, 6, 1), ISA_FLOW_NEXT);
        st += 511 * 8;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_ST64PACE, 2, 0, 6, 2), ISA_FLOW_NEXT);
        st -= 512 * 8;
        uint32_t a[3];
        unpack3(w->m[0], w->m[1], a);
        CU_ASSERT_EQUAL(a[2], st);
        /* A stride past the bottom wraps within 21 bits; the next access
         * then faults on range. */
        pack3(0x4c008, 0x4c010, 0x4c000, &w->m[0], &w->m[1]);
        w->m[6] = 0x200u;                               /* field 0: -512 */
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_ST64PACE, 2, 0, 6, 1), ISA_FLOW_NEXT);
        unpack3(w->m[0], w->m[1], a);
        CU_ASSERT_EQUAL(a[2], 0x4c000 - 512 * 8);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_ST64PACE, 2, 0, 6, 1), ISA_FLOW_FAULT);
        expect_fault(ISA_EXC_MEM_RANGE, 0x4b000, "st64pace at 0x4b000: address outside tile memory (0x4c000-0xe7fff)");
    });
}

static void test_pace_faults(void)
{
    WITH_TILE({
        w->m[6] = STRIDES;
        uint32_t lo, hi;
        /* Range: the first failing address in order of use. */
        pack3(0x90000, 0xe8000, 0x4c000 - 8, &lo, &hi);
        w->m[4] = lo;
        w->m[5] = hi;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD2X64PACE, 0, 2, 4, 6, 0), ISA_FLOW_FAULT);
        expect_fault(ISA_EXC_MEM_RANGE, 0xe8000,
                     "ld2x64pace at 0xe8000: address outside tile memory (0x4c000-0xe7fff)");
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LDST64PACE, 0, 2, 4, 6, 0), ISA_FLOW_FAULT);
        expect_fault(ISA_EXC_MEM_RANGE, 0x4bff8,
                     "ldst64pace at 0x4bff8: address outside tile memory (0x4c000-0xe7fff)");
        CU_ASSERT_EQUAL(w->m[4], lo);
        CU_ASSERT_EQUAL(w->m[5], hi);
        /* Range of every address before alignment of any. */
        pack3(0x90004, 0x90008, 0x4c000 - 8, &w->m[4], &w->m[5]);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD2XST64PACE, 0, 4, 4, 6, 0), ISA_FLOW_FAULT);
        expect_fault(ISA_EXC_MEM_RANGE, 0x4bff8,
                     "ld2xst64pace at 0x4bff8: address outside tile memory (0x4c000-0xe7fff)");
        /* Alignment. */
        pack3(0x90000, 0x90008, 0xa0004, &w->m[4], &w->m[5]);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD2XST64PACE, 0, 4, 4, 6, 0), ISA_FLOW_FAULT);
        expect_fault(ISA_EXC_MEM_ALIGN, 0xa0004, "ld2xst64pace at 0xa0004: address not 8-byte aligned");
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_ST64PACE, 2, 4, 6, 0), ISA_FLOW_FAULT);
        expect_fault(ISA_EXC_MEM_ALIGN, 0xa0004, "st64pace at 0xa0004: address not 8-byte aligned");
        /* Region: ld2xst64pace's second load must be in region 1, and that
         * is checked before alignment. */
        pack3(0x90000, 0x50000, 0xa0004, &w->m[4], &w->m[5]);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD2XST64PACE, 0, 4, 4, 6, 0), ISA_FLOW_FAULT);
        expect_fault(ISA_EXC_MEM_REGION, 0x50000,
                     "ld2xst64pace at 0x50000: the second load must be in the interleaved region 1 (from 0x80000)");
        /* ld2x64pace has no such rule. */
        fx_poke64(t, 0x50000, 0x42);
        pack3(0x90000, 0x50000, 0, &w->m[4], &w->m[5]);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD2X64PACE, 0, 2, 4, 6, 0), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->a[2], 0x42);
    });
}

static void test_conflicts(void)
{
    WITH_TILE({
        w->m[6] = 0;
        /* Region 0: one element covers 16 KiB of consecutive addresses. */
        pack3(0x50000, 0x53ff8, 0, &w->m[4], &w->m[5]);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD2X64PACE, 0, 2, 4, 6, 0), ISA_FLOW_FAULT);
        expect_fault(ISA_EXC_MEM_CONFLICT, 0x53ff8,
                     "ld2x64pace at 0x50000 and 0x53ff8: both accesses hit memory element 1");
        pack3(0x50000, 0x54000, 0, &w->m[4], &w->m[5]);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD2X64PACE, 0, 2, 4, 6, 0), ISA_FLOW_NEXT);
        /* Region 1: a and a + 8 are in different elements, a and a + 16 in
         * the same one. */
        pack3(0x90000, 0x90008, 0, &w->m[4], &w->m[5]);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD2X64PACE, 0, 2, 4, 6, 0), ISA_FLOW_NEXT);
        pack3(0x90000, 0x90010, 0, &w->m[4], &w->m[5]);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD2X64PACE, 0, 2, 4, 6, 0), ISA_FLOW_FAULT);
        expect_fault(ISA_EXC_MEM_CONFLICT, 0x90010,
                     "ld2x64pace at 0x90000 and 0x90010: both accesses hit memory element 17");
        /* The store counts too; nothing is loaded or stored, the pair stays. */
        fx_poke64(t, 0x90000, 0x1234);
        w->a[0] = 0xaaaa;
        w->a[4] = 0x5555;
        uint32_t lo, hi;
        pack3(0x90000, 0x98000, 0x90018, &lo, &hi);
        w->m[4] = lo;
        w->m[5] = hi;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LDST64PACE, 0, 4, 4, 6, 0), ISA_FLOW_NEXT);
        pack3(0x90000, 0x98000, 0x90010, &lo, &hi);
        w->m[4] = lo;
        w->m[5] = hi;
        w->a[0] = 0xaaaa;
        isa_insn ldst = fx_insn(ISA_OP_LDST64PACE, 0, 4, 4, 6, 0);
        CU_ASSERT_EQUAL(fx_dispatch(t, w, &ldst), ISA_FLOW_FAULT);
        expect_fault(ISA_EXC_MEM_CONFLICT, 0x90010,
                     "ldst64pace at 0x90000 and 0x90010: both accesses hit memory element 17");
        CU_ASSERT_EQUAL(w->a[0], 0xaaaa);
        CU_ASSERT_EQUAL(w->pending_a_mask, 0);
        CU_ASSERT_EQUAL(fx_peek64(t, 0x90010), 0);
        CU_ASSERT_EQUAL(w->m[4], lo);
        CU_ASSERT_EQUAL(w->m[5], hi);
        /* ld2xst64pace: the second load against the store. */
        pack3(0x50000, 0x98000, 0x98010, &w->m[4], &w->m[5]);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_LD2XST64PACE, 0, 4, 4, 6, 0), ISA_FLOW_FAULT);
        expect_fault(ISA_EXC_MEM_CONFLICT, 0x98010,
                     "ld2xst64pace at 0x98000 and 0x98010: both accesses hit memory element 19");
    });
}

/* ---- deferred ARF writes ---------------------------------------------------------- */

static void test_deferred_arf(void)
{
    WITH_TILE({
        fx_poke64(t, FX_DATA1, 0x4000000040400000ull);   /* {3.0f, 2.0f} */
        w->a[0] = 0x3f800000u;                           /* 1.0f */
        w->a[1] = 0x3f800000u;
        w->m[1] = FX_DATA1;
        /* The executor alone only queues the write. */
        isa_insn ld = fx_insn(ISA_OP_LD64, 0, 1, 15, 0);
        t->issue_bytes = ISA_BUNDLE_BYTES;
        CU_ASSERT_EQUAL(fx_dispatch(t, w, &ld), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->a[0], 0x3f800000u);
        CU_ASSERT_EQUAL(w->pending_a_mask, 0x0003);
        isa_commit_pending(w);
        CU_ASSERT_EQUAL(w->a[0], 0x40400000u);
        CU_ASSERT_EQUAL(w->a[1], 0x40000000u);
        CU_ASSERT_EQUAL(w->pending_a_mask, 0);
        /* In a bundle the aux sibling reads the old value. */
        w->a[0] = 0x3f800000u;
        isa_insn mov = fx_insn(ISA_OP_MOV_A, 2, 0);
        CU_ASSERT_EQUAL(fx_exec_bundle(t, w, &ld, &mov), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->a[2], 0x3f800000u);
        CU_ASSERT_EQUAL(w->a[0], 0x40400000u);
        /* MRF loads are not deferred. */
        isa_insn ldm = fx_insn(ISA_OP_LD32, 5, 1, 15, 0);
        CU_ASSERT_EQUAL(fx_dispatch(t, w, &ldm), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[5], 0x40400000u);
        CU_ASSERT_EQUAL(w->pending_a_mask, 0);
        /* Quads and broadcasts are deferred as well. */
        isa_insn ldq = fx_insn(ISA_OP_LD128STEP, 4, 1, 15, 0);
        CU_ASSERT_EQUAL(fx_dispatch(t, w, &ldq), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->pending_a_mask, 0x00f0);
        CU_ASSERT_EQUAL(w->a[4], 0);
        isa_commit_pending(w);
        CU_ASSERT_EQUAL(w->a[5], 0x40000000u);
        isa_insn ldb = fx_insn(ISA_OP_LDB16, 7, 1, 15, 1);
        CU_ASSERT_EQUAL(fx_dispatch(t, w, &ldb), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->pending_a_mask, 0x0080);
        CU_ASSERT_EQUAL(w->pending_a[7], 0x40404040u);
        isa_commit_pending(w);
        CU_ASSERT_EQUAL(w->a[7], 0x40404040u);
    });
}

void test_register(void)
{
    ADD_SUITE("exec_mem_access",
              {"every load width and extension", test_load_widths},
              {"base + delta + scaled immediate", test_address_forms},
              {"st32, st64 from MRF and ARF", test_stores},
              {"step loads with negative strides", test_step_loads},
              {"step stores", test_step_stores});
    ADD_SUITE("exec_mem_faults",
              {"range at both ends", test_range_faults},
              {"alignment and region", test_align_and_region_faults},
              {"one register as two destinations", test_double_destination},
              {"pace range, alignment, region", test_pace_faults},
              {"element conflicts", test_conflicts});
    ADD_SUITE("exec_mem_pace",
              {"ld2x64pace address sequence", test_ld2x64pace},
              {"ldst64pace address sequence", test_ldst64pace},
              {"ld2xst64pace address sequence", test_ld2xst64pace},
              {"st64pace every stride select", test_st64pace},
              {"deferred ARF writes", test_deferred_arf});
}
