/*
 * test_debugger_expr.c — the debugger's expressions (sim/debugger/debugger_expr.h)
 * and the commands that show values with them, driven through
 * debugger_execute with exact output: every operator and C's precedence,
 * literals and casts, registers of a worker stopped after a call ($lr),
 * memory read through typed pointers, symbols on each tile, tensor
 * elements of a hand-made tensor map (two tiles, a permuted layout) and of
 * a compiled program, exact error messages, print/FMT, x/Ni and addresses
 * as expressions, display and undisplay, and tensors printed a few values
 * a line with repeats.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontends/lower.h"
#include "graph_fixture.h"
#include "isa/asm/asm.h"
#include "sim/debugger/debugger_internal.h"
#include "sim/program/machine.h"
#include "sim/program/tensor_map.h"
#include "debugger_fixture.h"
#include "test_util.h"

/* Tile 0: the supervisor runs a worker with $VERTEX_BASE = vals; the
 * worker sets $m1, loads $a0 (1.5) and $a1 (f16 1.0 low, -1.0 high) and
 * calls func ($lr = after).  Tile 1 has vals elsewhere and only1. */
static const char prog_src[] =
    " .tile 0\n"
    " .text\n"
    "__supervisor:\n"
    " setzi $m1, worker\n"
    " setzi $m2, vals\n"
    " run $m1, $m2, $m3\n"
    " sync 0\n"
    " exitz $mzero\n"
    "worker:\n"                        /* 0x4c014 */
    " setzi $m1, 5\n"
    " setzi $m2, vals\n"
    " ld32 $a0, $m2, $mzero, 0\n"
    " ld32 $a1, $m2, $mzero, 1\n"
    " call $lr, func\n"
    "after:\n"                         /* 0x4c028 */
    " exitz $mzero\n"
    "func:\n"                          /* 0x4c02c */
    " br $lr\n"
    " .data\n"
    "vals: .float 1.5\n"               /* 0x80000 */
    " .word 0xbc003c00\n"
    " .word -10\n"
    " .word 0x12345678\n"
    "bytes: .byte 200, 65, 10, 0\n"    /* 0x80010 */
    "wide: .quad 0x123456789abcdef0\n" /* 0x80014 */
    "mat: .word 0, 1, 2, 3, 4, 5\n"    /* 0x8001c */
    " .tile 1\n"
    " .text\n"
    "__supervisor:\n"
    " exitz $mzero\n"
    " .data\n"
    "pad: .word 7, 8\n"
    "vals: .float 2.5\n"               /* 0x80008 */
    "only1: .word 42\n"
    "mat: .word 6, 7, 8, 9, 10, 11\n"; /* 0x80010 */

/* A debugger on e (owned by the session from now on). */
static session open_exe(ipu_exe *e)
{
    session s;
    memset(&s, 0, sizeof s);
    char err[4096];
    s.e = e;
    CU_ASSERT_TRUE_FATAL(machine_preset("gc200", &s.m, err, sizeof err));
    debugger_options o = { .threads = 1 };
    s.d = debugger_new(&s.m, s.e, "test.elf", &o, err, sizeof err);
    if (!s.d)
        fprintf(stderr, "\n%s\n", err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s.d);
    return s;
}

static ipu_exe *assemble(const char *src)
{
    char err[4096];
    ipu_exe *e = asm_assemble_string(src, "test.S", NULL, err, sizeof err);
    if (!e)
        fprintf(stderr, "\n%s\n", err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    return e;
}

/* What fn writes, in a string the caller frees. */
static char *capture(debugger *d, void (*fn)(debugger *, FILE *))
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    fn(d, f);
    fclose(f);
    return text;
}

typedef struct expect {
    const char *cmd, *out;
} expect;

/* Each command gives exactly its output; an "error: " one is refused. */
static void expect_all(session *s, const expect *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        EXPECT_OUT(*s, cases[i].cmd, cases[i].out);
        CU_ASSERT_EQUAL(s->r, strncmp(cases[i].out, "error: ", 7) ? DEBUGGER_OK : DEBUGGER_ERROR);
    }
}
#define EXPECT_ALL(s, ...)                                                                          \
    do {                                                                                            \
        static const expect cases_[] = { __VA_ARGS__ };                                             \
        expect_all(&(s), cases_, sizeof cases_ / sizeof cases_[0]);                                 \
    } while (0)

/* The program, stopped at func in worker 1 of tile 0. */
static session open_stopped(void)
{
    session s = open_exe(assemble(prog_src));
    EXPECT_OUT(s, "break 0:func", "Breakpoint 1: tile 0, pc 0x4c02c <func> (test.S:18)\n");
    EXPECT_OUT(s, "run", "Starting test.elf on gc200 (2 tiles with code).\n"
                         "Breakpoint 1, tile 0, worker 1, pc 0x4c02c <func> (test.S:18), cycle 42\n"
                         "   0x4c02c:  br $m10\n");
    return s;
}

/* ---- operators, precedence, literals, casts ------------------------------------------ */

static void test_operators_and_precedence(void)
{
    session s = open_stopped();
    EXPECT_ALL(s,
        { "print 1 + 2 * 3", "1 + 2 * 3 = 7\n" },
        { "print (1 + 2) * 3", "(1 + 2) * 3 = 9\n" },
        { "print 1 - 2 - 3", "1 - 2 - 3 = -4\n" },
        { "print 2 * 3 % 4", "2 * 3 % 4 = 2\n" },
        { "print 7 / 2", "7 / 2 = 3\n" },
        { "print -7 / 2", "-7 / 2 = -3\n" },
        { "print -7 % 3", "-7 % 3 = -1\n" },
        { "print 7.0 / 2", "7.0 / 2 = 3.5\n" },
        { "print 1 << 4 + 1", "1 << 4 + 1 = 32\n" },
        { "print 256 >> 2 >> 1", "256 >> 2 >> 1 = 32\n" },
        { "print -256 >> 4", "-256 >> 4 = -16\n" },
        { "print 1 << 40", "1 << 40 = 1099511627776\n" },
        { "print 1 < 2 == 2 > 1", "1 < 2 == 2 > 1 = 1\n" },
        { "print 3 <= 3", "3 <= 3 = 1\n" },
        { "print 3 >= 4", "3 >= 4 = 0\n" },
        { "print 3 != 4", "3 != 4 = 1\n" },
        { "print 3 == 4", "3 == 4 = 0\n" },
        { "print 6 & 3 ^ 1 | 8", "6 & 3 ^ 1 | 8 = 11\n" },
        { "print 1 | 2 ^ 3 & 6", "1 | 2 ^ 3 & 6 = 1\n" },
        { "print 1 == 1 & 2", "1 == 1 & 2 = 0\n" },
        { "print 0 || 1 && 0", "0 || 1 && 0 = 0\n" },
        { "print 1 || 0 && 0", "1 || 0 && 0 = 1\n" },
        { "print 0 && 1 / 0", "0 && 1 / 0 = 0\n" },
        { "print 1 || 1 / 0", "1 || 1 / 0 = 1\n" },
        { "print 2 && 3", "2 && 3 = 1\n" },
        { "print !0 + !5", "!0 + !5 = 1\n" },
        { "print !1 == 0", "!1 == 0 = 1\n" },
        { "print ~5", "~5 = -6\n" },
        { "print -(-3)", "-(-3) = 3\n" },
        { "print - -3 * +2", "- -3 * +2 = 6\n" },
        { "print -2 * 3", "-2 * 3 = -6\n" },
        { "print 0.1 + 0.2", "0.1 + 0.2 = 0.30000000000000004\n" },
        { "print 1.0 / 0", "1.0 / 0 = inf\n" },
        { "print -1.0 / 0", "-1.0 / 0 = -inf\n" },
        { "print 2.5 > 2", "2.5 > 2 = 1\n" },
        { "print 0x10 + 0X1f", "0x10 + 0X1f = 47\n" },
        { "print 0b101", "0b101 = 5\n" },
        { "print 010", "010 = 8\n" },
        { "print 1e-3", "1e-3 = 0.001\n" },
        { "print .5 + 1.5e1", ".5 + 1.5e1 = 15.5\n" },
        { "print .5", ".5 = 0.5\n" },
        { "print 12", "12 = 12\n" },
        { "print 2147483648", "2147483648 = 2147483648\n" },
        { "print 18446744073709551615", "18446744073709551615 = 18446744073709551615\n" },
        { "print 0xffffffffffffffff + 1", "0xffffffffffffffff + 1 = 0\n" },
        { "print (u8)300", "(u8)300 = 44\n" },
        { "print (i8)200", "(i8)200 = -56\n" },
        { "print (i16)40000", "(i16)40000 = -25536\n" },
        { "print (u16)-1", "(u16)-1 = 65535\n" },
        { "print (u32)-1", "(u32)-1 = 4294967295\n" },
        { "print (i64)(u32)-1", "(i64)(u32)-1 = 4294967295\n" },
        { "print (u64)-1", "(u64)-1 = 18446744073709551615\n" },
        { "print (i32)-3.9", "(i32)-3.9 = -3\n" },
        { "print (u32)-1.0", "(u32)-1.0 = 4294967295\n" },
        { "print (i32)1e30", "(i32)1e30 = 2147483647\n" },
        { "print (i8)-1e9", "(i8)-1e9 = -128\n" },
        { "print (u8)1e9", "(u8)1e9 = 255\n" },
        { "print (u64)1e30", "(u64)1e30 = 18446744073709551615\n" },
        { "print (i64)-1e30", "(i64)-1e30 = -9223372036854775808\n" },
        { "print (i32)(0.0 / 0)", "(i32)(0.0 / 0) = 0\n" },
        { "print (f32)0.1", "(f32)0.1 = 0.100000001\n" },
        { "print (f16)0.1", "(f16)0.1 = 0.0999756\n" },
        { "print (f64)(f32)0.1", "(f64)(f32)0.1 = 0.10000000149011612\n" },
        { "print (float)1 / 3", "(float)1 / 3 = 0.333333343\n" },
        { "print (double)1 / 3", "(double)1 / 3 = 0.33333333333333331\n" },
        { "print (int)2.5 + (unsigned)1", "(int)2.5 + (unsigned)1 = 3\n" },
        { "print (bool)5", "(bool)5 = 1\n" },
        { "print (f16)1 + (f16)2", "(f16)1 + (f16)2 = 3\n" },
        { "print ( u32 ) 7", "( u32 ) 7 = 7\n" });
    close_session(&s);
}

/* ---- registers, values of the place -------------------------------------------------- */

static void test_registers_and_values(void)
{
    session s = open_stopped();
    EXPECT_ALL(s,
        { "print $m1", "$m1 = 0x00000005 (5, 5)\n" },
        { "print $lr", "$lr = 0x0004c028 (311336, 311336)\n" },
        { "print/a $lr", "$lr = 0x4c028 <after>\n" },
        { "print $m10 == $lr", "$m10 == $lr = 1\n" },
        { "print $mzero", "$mzero = 0x00000000 (0, 0)\n" },
        { "print $azero", "$azero = 0x00000000 (f32 0, f16 [0, 0])\n" },
        { "print $sp == $m11", "$sp == $m11 = 1\n" },
        { "print $a0", "$a0 = 0x3fc00000 (f32 1.5, f16 [0, 1.9375])\n" },
        { "print (f32)$a0", "(f32)$a0 = 1.5\n" },
        { "print (f32)$a0 * 2", "(f32)$a0 * 2 = 3\n" },
        { "print (f16)$a1", "(f16)$a1 = 1\n" },
        { "print (f16)($a1 >> 16)", "(f16)($a1 >> 16) = 48128\n" },
        { "print (u32)$a0", "(u32)$a0 = 1069547520\n" },
        { "print $m1 - 6", "$m1 - 6 = -1\n" },
        { "print -$m1", "-$m1 = -5\n" },
        { "print $m1 > -1", "$m1 > -1 = 1\n" },
        { "print $pc", "$pc = 0x0004c02c (311340, 311340)\n" },
        { "print $pc - $lr", "$pc - $lr = 4\n" },
        { "print/a $pc", "$pc = 0x4c02c <func>\n" },
        { "print $VERTEX_BASE", "$VERTEX_BASE = 0x00080000 (524288, 524288)\n" },
        { "print $VERTEX_BASE == vals", "$VERTEX_BASE == vals = 1\n" },
        { "print $COUNT_L == $cycle", "$COUNT_L == $cycle = 1\n" },
        { "print $cycle", "$cycle = 42\n" },
        { "print $tile", "$tile = 0\n" },
        { "print $context", "$context = 1\n" },
        { "print $superstep", "$superstep = 0\n" },
        { "print $m1 == 5 && *(f32*)0x80010 > 1.5", "$m1 == 5 && *(f32*)0x80010 > 1.5 = 0\n" },
        { "print $m1 == 5 && *(f32*)0x80000 > 1", "$m1 == 5 && *(f32*)0x80000 > 1 = 1\n" },
        { "context sup", "tile 0, supervisor, pc 0x4c00c <__supervisor+0xc> (test.S:7), cycle 42\n"
                         "   0x4c00c:  sync 0\n" },
        { "print $context + $m1", "$context + $m1 = 311316\n" },
        { "print $m2 == worker", "$m2 == worker = 0\n" },
        { "print $m1 == worker", "$m1 == worker = 1\n" },
        { "tile 1", "tile 1, supervisor, pc 0x4c000 <__supervisor> (test.S:30), cycle 1\n"
                    "   0x4c000:  exitz $mzero\n" },
        { "print $tile * 10 + $cycle", "$tile * 10 + $cycle = 11\n" });
    EXPECT_OUT(s, "continue", "The program ended: 51 cycles, 13 instructions, 1 supersteps.\n");
    EXPECT_OUT(s, "print $superstep", "$superstep = 1\n");
    close_session(&s);
}

/* ---- memory, symbols ------------------------------------------------------------------- */

static void test_memory_and_symbols(void)
{
    session s = open_stopped();
    EXPECT_ALL(s,
        { "print *(f32*)vals", "*(f32*)vals = 1.5\n" },
        { "print *(f16*)(vals + 4)", "*(f16*)(vals + 4) = 1\n" },
        { "print *(f16*)(vals + 6)", "*(f16*)(vals + 6) = -1\n" },
        { "print *(i32*)(vals + 8)", "*(i32*)(vals + 8) = -10\n" },
        { "print *(u32*)(vals + 8)", "*(u32*)(vals + 8) = 4294967286\n" },
        { "print *(u16*)(vals + 12)", "*(u16*)(vals + 12) = 22136\n" },
        { "print *(u8*)bytes", "*(u8*)bytes = 200\n" },
        { "print *(i8*)bytes", "*(i8*)bytes = -56\n" },
        { "print *(u64*)wide == 0x123456789abcdef0", "*(u64*)wide == 0x123456789abcdef0 = 1\n" },
        { "print/x *(u64*)wide", "*(u64*)wide = 0x123456789abcdef0\n" },
        { "print *(f64*)wide < 0", "*(f64*)wide < 0 = 0\n" },
        { "print *vals", "*vals = 1069547520\n" },
        { "print *0x80008", "*0x80008 = 4294967286\n" },
        { "print *(u32*)(vals + 1)", "*(u32*)(vals + 1) = 4177920\n" },
        { "print *$m2 == *(u32*)$VERTEX_BASE", "*$m2 == *(u32*)$VERTEX_BASE = 1\n" },
        { "print *((u32*)vals + 3)", "*((u32*)vals + 3) = 305419896\n" },
        { "print (f32*)vals + 1", "(f32*)vals + 1 = 0x80004 <vals+0x4>\n" },
        { "print 2 + (u16*)vals", "2 + (u16*)vals = 0x80004 <vals+0x4>\n" },
        { "print (u64*)wide - 1", "(u64*)wide - 1 = 0x8000c <vals+0xc>\n" },
        { "print wide - vals", "wide - vals = 20\n" },
        { "print (u32*)wide - (u32*)vals", "(u32*)wide - (u32*)vals = 5\n" },
        { "print vals", "0x80000 <vals>: 0x3fc00000\n" },
        { "print vals + 0", "vals + 0 = 0x80000 <vals>\n" },
        { "print &vals", "&vals = 0x80000 <vals>\n" },
        { "print &*(f32*)(vals + 4)", "&*(f32*)(vals + 4) = 0x80004 <vals+0x4>\n" },
        { "print *&*(f32*)vals", "*&*(f32*)vals = 1.5\n" },
        { "print after - worker", "after - worker = 20\n" },
        { "print only1 + 0", "error: no symbol 'only1' on tile 0\n" },
        { "print only1", "error: no symbol 'only1' on tile 0 (test.elf has no tensor map)\n" },
        { "print *(u32*)0x1", "error: tile 0: 0x1 (4 bytes) is not in tile memory (0x4c000-0xe7fff)\n" },
        { "print *(u8*)0xe8000", "error: tile 0: 0xe8000 (1 byte) is not in tile memory (0x4c000-0xe7fff)\n" },
        { "print *(u64*)0xe7ffc", "error: tile 0: 0xe7ffc (8 bytes) is not in tile memory (0x4c000-0xe7fff)\n" },
        { "print *0x100000000", "error: tile 0: 0x100000000 (4 bytes) is not in tile memory (0x4c000-0xe7fff)\n" },
        { "print *(u32*)0x100080000 == *vals", "*(u32*)0x100080000 == *vals = 1\n" },
        { "print *-4", "error: -4 is not an address\n" },
        { "print *(u32*)-4", "error: tile 0: 0xfffffffc (4 bytes) is not in tile memory (0x4c000-0xe7fff)\n" },
        { "print *(f32*)(vals - 0x80000)", "error: tile 0: 0x0 (4 bytes) is not in tile memory (0x4c000-0xe7fff)\n" },
        { "tile 1", "tile 1, supervisor, pc 0x4c000 <__supervisor> (test.S:30), cycle 1\n"
                    "   0x4c000:  exitz $mzero\n" },
        { "print *(f32*)vals", "*(f32*)vals = 2.5\n" },
        { "print vals", "0x80008 <vals>: 0x40200000\n" },
        { "print only1", "0x8000c <only1>: 0x0000002a\n" },
        { "print *only1 - *pad", "*only1 - *pad = 35\n" },
        { "print worker", "error: no symbol 'worker' on tile 1 (test.elf has no tensor map)\n" },
        { "print worker + 4", "error: no symbol 'worker' on tile 1\n" });
    close_session(&s);
}

/* ---- the evaluator itself: parsed once, evaluated anywhere ------------------------------- */

static void test_parse_once_evaluate_anywhere(void)
{
    session s = open_stopped();
    char err[256];
    dbg_expr *e = dbg_expr_parse(s.d, "$m1 == 5 && *(f32*)vals >= 1.5", err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_EQUAL(dbg_expr_type(e), DBG_BOOL);
    dbg_value v;
    /* Worker 1 of tile 0; its supervisor ($m1 = worker); tile 1 ($m1 = 0). */
    CU_ASSERT_TRUE(dbg_expr_eval(s.d, e, 0, 1, &v, err, sizeof err));
    CU_ASSERT_EQUAL(v.type, DBG_BOOL);
    CU_ASSERT_TRUE(dbg_value_true(&v));
    CU_ASSERT_TRUE(dbg_expr_eval(s.d, e, 0, 0, &v, err, sizeof err));
    CU_ASSERT_FALSE(dbg_value_true(&v));
    CU_ASSERT_TRUE(dbg_expr_eval(s.d, e, 1, 0, &v, err, sizeof err));
    CU_ASSERT_FALSE(dbg_value_true(&v));
    CU_ASSERT_FALSE(dbg_expr_eval(s.d, e, 7, 0, &v, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "tile 7 has no code in test.elf");
    CU_ASSERT_FALSE(dbg_expr_eval(s.d, e, 0, 7, &v, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "there is no context 7 (0 is the supervisor, 1 to 6 the workers)");
    dbg_expr_free(e);
    /* A symbol's address on each tile that has it. */
    e = dbg_expr_parse(s.d, "vals + 4", err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_EQUAL(dbg_expr_type(e), DBG_ADDR);
    CU_ASSERT_TRUE(dbg_expr_eval(s.d, e, 0, 0, &v, err, sizeof err));
    CU_ASSERT_EQUAL(v.u, 0x80004);
    CU_ASSERT_TRUE(dbg_expr_eval(s.d, e, 1, 0, &v, err, sizeof err));
    CU_ASSERT_EQUAL(v.u, 0x8000c);
    dbg_expr_free(e);
    /* The same tree after the machine moved on. */
    e = dbg_expr_parse(s.d, "$cycle", err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_TRUE(dbg_expr_eval(s.d, e, 0, 1, &v, err, sizeof err));
    CU_ASSERT_EQUAL(v.type, DBG_U64);
    CU_ASSERT_EQUAL(v.u, 42);
    run_cmd(&s, "stepi");
    CU_ASSERT_TRUE(dbg_expr_eval(s.d, e, 0, 1, &v, err, sizeof err));
    CU_ASSERT_EQUAL(v.u, engine_tile(debugger_engine(s.d), 0)->s.cycle);
    CU_ASSERT_TRUE(v.u > 42);
    dbg_expr_free(e);
    /* Values and their natural forms. */
    static const struct { dbg_type t; const char *bytes; const char *text; } forms[] = {
        { DBG_BOOL, "\x01", "1" },       { DBG_I8, "\xfe", "-2" },          { DBG_U8, "\xfe", "254" },
        { DBG_I16, "\x00\x80", "-32768" }, { DBG_U16, "\x00\x80", "32768" }, { DBG_I32, "\xff\xff\xff\xff", "-1" },
        { DBG_U32, "\xff\xff\xff\xff", "4294967295" },
        { DBG_I64, "\xff\xff\xff\xff\xff\xff\xff\xff", "-1" },
        { DBG_U64, "\xff\xff\xff\xff\xff\xff\xff\xff", "18446744073709551615" },
        { DBG_F16, "\x00\x3e", "1.5" },  { DBG_F32, "\x00\x00\xc0\x3f", "1.5" },
        { DBG_F64, "\x9a\x99\x99\x99\x99\x99\xb9\x3f", "0.10000000000000001" },
        { DBG_ADDR, "\x00\x00\x08\x00", "0x80000" },
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        char buf[64];
        dbg_value x = dbg_value_from_bytes(forms[i].t, forms[i].bytes);
        CU_ASSERT_EQUAL(x.type, forms[i].t);
        CU_ASSERT_STRING_EQUAL(dbg_value_format(&x, 0, buf, sizeof buf), forms[i].text);
    }
    CU_ASSERT_STRING_EQUAL(dbg_type_name(DBG_F16), "f16");
    close_session(&s);
}

/* ---- mistakes ---------------------------------------------------------------------------- */

static void test_expression_errors(void)
{
    session s = open_stopped();
    char deep[512];
    snprintf(deep, sizeof deep, "print %0*d", 201, 0);
    memset(deep + 6, '(', 201);
    EXPECT_ALL(s,
        { "print 1 +", "error: the expression is incomplete\n" },
        { "print (1", "error: missing ')' at ''\n" },
        { "print 1 2", "error: bad expression at '2'\n" },
        { "print 1 )", "error: bad expression at ')'\n" },
        { "print @", "error: bad expression at '@'\n" },
        { "print $m0 = 1", "error: '=' would assign, which the debugger does not do (compare with '==')\n" },
        { "print $m16 + 1", "error: unknown register '$m16' ($m0-$m15, $a0-$a15, $pc or a CSR such as $FP_CTL)\n" },
        { "print $nosuch", "error: unknown register '$nosuch' ($m0-$m15, $a0-$a15, $pc or a CSR such as $FP_CTL)\n" },
        { "print nosuch * 2", "error: no symbol 'nosuch' in test.elf\n" },
        { "print 'nosuch'", "error: no symbol 'nosuch' in test.elf\n" },
        { "print 'vals", "error: missing the closing quote of 'vals\n" },
        { "print vals[1]", "error: bad expression at '[1]'\n" },
        { "print 0x", "error: bad number '0x'\n" },
        { "print 0b2", "error: bad number '0b2'\n" },
        { "print 12abc", "error: bad number '12abc'\n" },
        { "print 08", "error: bad number '08'\n" },
        { "print 1.5.5", "error: bad number '1.5.5'\n" },
        { "print 99999999999999999999", "error: the number '99999999999999999999' does not fit in 64 bits\n" },
        { "print ~1.5", "error: '~' needs an integer operand (got f64)\n" },
        { "print 1.5 % 2", "error: '%' needs integer operands (got f64 and i32)\n" },
        { "print 1 << 0.5", "error: '<<' needs integer operands (got i32 and f64)\n" },
        { "print (f32)$a0 & 1", "error: '&' needs integer operands (got f32 and i32)\n" },
        { "print vals + 1.5", "error: '+' needs an integer with an address (got f64)\n" },
        { "print *1.5", "error: '*' needs an address (got f64)\n" },
        { "print &5", "error: '&' needs a symbol or *ADDR\n" },
        { "print (f32*)1.5", "error: a f64 is not an address\n" },
        { "print 1 / 0", "error: division by zero\n" },
        { "print $m1 % ($m1 - 5)", "error: division by zero\n" },
        { "print 1 << 64", "error: shift count 64 is out of range for i64 (0 to 63)\n" },
        { "print 1 >> -1", "error: shift count -1 is out of range for i64 (0 to 63)\n" },
        { "print/q 1", "error: print: unknown format 'q 1' (x hex, d signed, u unsigned, o octal, t binary, "
                       "c character, f float, a address)\n" },
        { "print/xx 1", "error: print: unknown format 'xx 1' (x hex, d signed, u unsigned, o octal, t binary, "
                        "c character, f float, a address)\n" },
        { "print/ 1", "error: print: unknown format ' 1' (x hex, d signed, u unsigned, o octal, t binary, "
                      "c character, f float, a address)\n" },
        { "print/x", "error: print needs $REGISTER, a tensor or a symbol\n" },
        { "c/x", "error: continue takes no /FMT ('c/...')\n" });
    EXPECT_OUT(s, deep, "error: the expression is nested more than 200 deep\n");
    CU_ASSERT_EQUAL(s.r, DEBUGGER_ERROR);
    close_session(&s);
}

/* ---- print/FMT ------------------------------------------------------------------------------ */

static void test_print_formats(void)
{
    session s = open_stopped();
    EXPECT_ALL(s,
        { "print/x 255", "255 = 0xff\n" },
        { "print/x (u8)255", "(u8)255 = 0xff\n" },
        { "print/x -1", "-1 = 0xffffffffffffffff\n" },
        { "print/x (i32)-1", "(i32)-1 = 0xffffffff\n" },
        { "print/x $m2", "$m2 = 0x80000\n" },
        { "print/x (f32)1.5", "(f32)1.5 = 0x3fc00000\n" },
        { "print/x 1.5", "1.5 = 0x3ff8000000000000\n" },
        { "print/x (f16)1.5", "(f16)1.5 = 0x3e00\n" },
        { "print/x 1 < 2", "1 < 2 = 0x1\n" },
        { "print/d (u8)255", "(u8)255 = -1\n" },
        { "print/d $m1 - 6", "$m1 - 6 = -1\n" },
        { "print/d 0xffffffff", "0xffffffff = -1\n" },
        { "print/u (i8)-1", "(i8)-1 = 255\n" },
        { "print/u (i32)-2", "(i32)-2 = 4294967294\n" },
        { "print/o 8", "8 = 010\n" },
        { "print/o 0", "0 = 0\n" },
        { "print/t 10", "10 = 1010\n" },
        { "print/t 0", "0 = 0\n" },
        { "print/t *(u8*)bytes", "*(u8*)bytes = 11001000\n" },
        { "print/c 65", "65 = 65 'A'\n" },
        { "print/c *(u8*)(bytes + 1)", "*(u8*)(bytes + 1) = 65 'A'\n" },
        { "print/c 10", "10 = 10 '\\n'\n" },
        { "print/c 0", "0 = 0 '\\0'\n" },
        { "print/c 39", "39 = 39 '\\''\n" },
        { "print/c 200", "200 = 200 '\\310'\n" },
        { "print/c 66.7", "66.7 = 66 'B'\n" },
        { "print/f 0x3fc00000", "0x3fc00000 = 1.5\n" },
        { "print/f $a0", "$a0 = 1.5\n" },
        { "print/f $a1", "$a1 = -0.00782680511\n" },
        { "print/f (u16)0x3c00", "(u16)0x3c00 = 1\n" },
        { "print/f (i64)0x3ff8000000000000", "(i64)0x3ff8000000000000 = 1.5\n" },
        { "print/f (u8)3", "(u8)3 = 3\n" },
        { "print/f 2.5", "2.5 = 2.5\n" },
        { "print/a vals + 4", "vals + 4 = 0x80004 <vals+0x4>\n" },
        { "print/a 0x4c028", "0x4c028 = 0x4c028 <after>\n" },
        { "print/a 0x4c02c", "0x4c02c = 0x4c02c <func>\n" },
        { "print/a 16", "16 = 0x10\n" },
        { "print/d vals", "0x80000 <vals>: 1069547520\n" },
        { "print/f vals", "0x80000 <vals>: 1.5\n" },
        { "print/t only1", "error: no symbol 'only1' on tile 0 (test.elf has no tensor map)\n" },
        { "tile 1", "tile 1, supervisor, pc 0x4c000 <__supervisor> (test.S:30), cycle 1\n"
                    "   0x4c000:  exitz $mzero\n" },
        { "print/t only1", "0x8000c <only1>: 101010\n" },
        { "print/c only1", "0x8000c <only1>: 42 '*'\n" },
        { "print/o only1", "0x8000c <only1>: 052\n" });
    close_session(&s);
}

/* ---- x/i, x with expressions ------------------------------------------------------------------ */

static void test_examine_instructions(void)
{
    session s = open_stopped();
    EXPECT_ALL(s,
        { "x/4i $pc", "=>b 0x4c02c <func> (test.S:18):  br $m10\n" },
        { "x/3i worker + 8", "    0x4c01c <worker+0x8> (test.S:12):  ld32 $a0, $m2, $mzero, 0\n"
                             "    0x4c020 <worker+0xc> (test.S:13):  ld32 $a1, $m2, $mzero, 1\n"
                             "    0x4c024 <worker+0x10> (test.S:14):  call $m10, func\n" },
        { "x/2i $lr - 4", "    0x4c024 <worker+0x10> (test.S:14):  call $m10, func\n"
                          "    0x4c028 <after> (test.S:16):  exitz $mzero\n" },
        { "x/i worker+1", "    0x4c014 <worker> (test.S:10):  setzi $m1, 5\n" },
        { "x/i vals", "error: tile 0: 0x80000 is outside the code (0x4c000-0x4c02f)\n" },
        { "x/2x $m2 + 4", "0x80004 <vals+0x4>: 0xbc003c00 0xfffffff6\n" },
        { "x/2x (u32*)vals + 1", "0x80004 <vals+0x4>: 0xbc003c00 0xfffffff6\n" },
        { "x/f $VERTEX_BASE", "0x80000 <vals>: 1.5\n" },
        { "x/2h vals + 4", "0x80004 <vals+0x4>: 1 -1\n" },
        { "x/2d *(u32*)$lr - *(u32*)$lr + vals + 8", "0x80008 <vals+0x8>: -10 305419896\n" },
        { "x/x 1.5", "error: x needs an address, not a value of type f64\n" },
        { "x/x -4", "error: x: -4 is not a 32-bit address\n" },
        { "x/x 0x100000000", "error: x: 4294967296 is not a 32-bit address\n" },
        { "x/x nosuch", "error: no symbol 'nosuch' in test.elf\n" },
        { "x/2q vals", "error: x: unknown format 'q vals' (x hex, d decimal, u unsigned, f f32, h f16, b bytes, "
                       "i instructions)\n" },
        { "x/4", "error: x needs one address: x/NFMT ADDR\n" });
    close_session(&s);
}

/* ---- display -------------------------------------------------------------------------------- */

static void expect_captured(debugger *d, void (*fn)(debugger *, FILE *), const char *want)
{
    char *got = capture(d, fn);
    if (strcmp(got, want))
        fprintf(stderr, "\ngave:\n%s--- expected:\n%s---\n", got, want);
    CU_ASSERT_STRING_EQUAL(got, want);
    free(got);
}

static void test_display(void)
{
    session s = open_stopped();
    expect_captured(s.d, dbg_info_display, "There are no auto-display expressions now.\n");
    expect_captured(s.d, dbg_show_displays, "");
    EXPECT_ALL(s,
        { "display", "" },
        { "display $m1", "1: $m1 = 0x00000005 (5, 5)\n" },
        { "display/x $pc", "2: /x $pc = 0x4c02c\n" },
        { "display *(f32*)vals * 2", "3: *(f32*)vals * 2 = 3\n" },
        { "display *(u32*)0x1", "4: *(u32*)0x1 = <error: tile 0: 0x1 (4 bytes) is not in tile memory "
                                "(0x4c000-0xe7fff)>\n" },
        { "display vals", "5: 0x80000 <vals>: 0x3fc00000\n" },
        { "display 1 +", "error: the expression is incomplete\n" },
        { "display/q 1", "error: display: unknown format 'q 1' (x hex, d signed, u unsigned, o octal, t binary, "
                         "c character, f float, a address)\n" },
        { "display/x", "error: display/x needs an expression\n" },
        { "undisplay 4", "Deleted display 4.\n" },
        { "undisplay 4", "error: no display number 4\n" },
        { "undisplay", "error: undisplay needs a display number or 'all'\n" },
        { "undisplay x", "error: undisplay needs a display number or 'all', got 'x'\n" },
        { "undisplay 1 2", "error: undisplay takes one display number or 'all'\n" });
    expect_captured(s.d, dbg_info_display, "Auto-display expressions now in effect:\n"
                                           "Num Expression\n"
                                           "1:  $m1\n"
                                           "2:  /x $pc\n"
                                           "3:  *(f32*)vals * 2\n"
                                           "5:  vals\n");
    /* At the next stop: the selected tile and context then. */
    EXPECT_OUT(s, "stepi", "tile 0, worker 1, pc 0x4c02c <func> (test.S:18), cycle 43\n"
                           "   0x4c02c:  br $m10\n"
                           "next: pc 0x4c028 <after> (test.S:16)\n"
                           "1: $m1 = 0x00000005 (5, 5)\n"
                           "2: /x $pc = 0x4c028\n"
                           "3: *(f32*)vals * 2 = 3\n"
                           "5: 0x80000 <vals>: 0x3fc00000\n");
    expect_captured(s.d, dbg_show_displays, "1: $m1 = 0x00000005 (5, 5)\n"
                                            "2: /x $pc = 0x4c028\n"
                                            "3: *(f32*)vals * 2 = 3\n"
                                            "5: 0x80000 <vals>: 0x3fc00000\n");
    EXPECT_OUT(s, "display", "1: $m1 = 0x00000005 (5, 5)\n"
                             "2: /x $pc = 0x4c028\n"
                             "3: *(f32*)vals * 2 = 3\n"
                             "5: 0x80000 <vals>: 0x3fc00000\n");
    run_cmd(&s, "tile 1");
    expect_captured(s.d, dbg_show_displays, "1: $m1 = 0x00000000 (0, 0)\n"
                                            "2: /x $pc = 0x4c000\n"
                                            "3: *(f32*)vals * 2 = 5\n"
                                            "5: 0x80008 <vals>: 0x40200000\n");
    EXPECT_OUT(s, "undisplay all", "Deleted all displays.\n");
    expect_captured(s.d, dbg_info_display, "There are no auto-display expressions now.\n");
    EXPECT_OUT(s, "display $tile", "6: $tile = 1\n");
    close_session(&s);
}

/* ---- tensors: a hand-made map ------------------------------------------------------------------ */

static uint32_t symbol_addr(const ipu_exe *e, uint32_t tile, const char *name)
{
    for (size_t i = 0; i < e->n_symbols; i++)
        if (e->symbols[i].tile == tile && !strcmp(e->symbols[i].name, name))
            return e->symbols[i].addr;
    CU_FAIL("no such symbol");
    return 0;
}

/* m: i32 [3,4] = 4i + j, rows 0-1.5 on tile 0's mat, the rest on tile 1's;
 * mt: i32 [4,3], the same storage as its transpose (stored with its axes
 * swapped); h: f16 [2] at tile 0's vals + 4; s: f32 [] at vals. */
static ipu_exe *tensor_program(void)
{
    ipu_exe *e = assemble(prog_src);
    tensor_map *tm = tmap_new();
    uint64_t dm[2] = { 3, 4 }, dt[2] = { 4, 3 }, dh[1] = { 2 };
    uint32_t mat0 = symbol_addr(e, 0, "mat"), mat1 = symbol_addr(e, 1, "mat");
    tmap_tensor *m = tmap_add_tensor(tm, "m", 6, 4, 2, dm, TMAP_ACTIVATION);
    tmap_tensor *mt = tmap_add_tensor(tm, "mt", 6, 4, 2, dt, TMAP_ACTIVATION);
    tmap_tensor *h = tmap_add_tensor(tm, "h", 10, 2, 1, dh, TMAP_WEIGHT);
    tmap_tensor *sc = tmap_add_tensor(tm, "s", 1, 4, 0, NULL, TMAP_WEIGHT);
    CU_ASSERT_TRUE_FATAL(m && mt && h && sc);
    mt->perm[0] = 1;
    mt->perm[1] = 0;
    CU_ASSERT_TRUE_FATAL(tmap_add_piece(m, 0, mat0, 0, 6, TMAP_NO_STREAM) &&
                         tmap_add_piece(m, 1, mat1, 6, 6, TMAP_NO_STREAM) &&
                         tmap_add_piece(mt, 0, mat0, 0, 6, TMAP_NO_STREAM) &&
                         tmap_add_piece(mt, 1, mat1, 6, 6, TMAP_NO_STREAM) &&
                         tmap_add_piece(h, 0, 0x80004, 0, 2, TMAP_NO_STREAM) &&
                         tmap_add_piece(sc, 0, 0x80000, 0, 1, TMAP_NO_STREAM));
    uint8_t *blob;
    size_t size;
    CU_ASSERT_TRUE_FATAL(tmap_encode(tm, &blob, &size));
    CU_ASSERT_TRUE_FATAL(exe_set_blob(&e->tensors, blob, size));
    free(blob);
    tmap_free(tm);
    return e;
}

static void test_tensor_elements(void)
{
    session s = open_exe(tensor_program());
    EXPECT_ALL(s,
        { "print m[1][2]", "m[1][2] = 6\n" },
        { "print m[2][3] + m[0][0]", "m[2][3] + m[0][0] = 11\n" },
        { "print m[1+1][3 - 1]", "m[1+1][3 - 1] = 10\n" },
        { "print m[1, 2] * 2", "m[1, 2] * 2 = 12\n" },
        { "print m[1][2][0]", "error: tensor 'm' has 2 dimensions\n" },
        { "print m[1, 2, 0]", "error: tensor 'm' has 2 dimensions\n" },
        { "print m + 1", "error: tensor 'm' has 2 dimensions, got 0 indices\n" },
        { "print m[1] + 1", "error: tensor 'm' has 2 dimensions, got 1 index\n" },
        { "print m[3][0] + 0", "error: index 3 is out of range for dimension 0 of 'm' (size 3)\n" },
        { "print m[0][-1] + 0", "error: index -1 is out of range for dimension 1 of 'm' (size 4)\n" },
        { "print m[1.5][0] + 0", "error: an index of 'm' must be an integer (got f64)\n" },
        { "print m[0][1", "error: missing ']' at ''\n" },
        { "print mt[3][2]", "mt[3][2] = 11\n" },
        { "print mt[0][1] + m[0][1]", "mt[0][1] + m[0][1] = 5\n" },
        { "print mt[2][1] == m[1][2]", "mt[2][1] == m[1][2] = 1\n" },
        { "print h[1]", "h: f16 [2] weight, 1 element shown\n  [1] -1\n" },
        { "print h[1] + 0", "h[1] + 0 = -1\n" },
        { "print h[0] * 2", "h[0] * 2 = 2\n" },
        { "print s + 1", "s + 1 = 2.5\n" },
        { "print 's' * 2", "'s' * 2 = 3\n" },
        { "print s", "s: f32 [] weight, 1 element shown\n  [] 1.5\n" },
        { "print m", "m: i32 [3,4] activation, 12 elements shown\n  [0,0] 0 1 2 3\n  [1,0] 4 5 6 7\n"
                     "  [2,0] 8 9 10 11\n" },
        { "print mt", "mt: i32 [4,3] activation, 12 elements shown\n  [0,0] 0 4 8\n  [1,0] 1 5 9\n"
                      "  [2,0] 2 6 10\n  [3,0] 3 7 11\n" },
        { "print m[1, 2]", "m: i32 [3,4] activation, 1 element shown\n  [1,2] 6\n" },
        { "print/x m[1:, 2:]", "m: i32 [3,4] activation, 4 elements shown\n  [1,2] 0x6 0x7\n  [2,2] 0xa 0xb\n" },
        { "print/t mt[1]", "mt: i32 [4,3] activation, 3 elements shown\n  [1,0] 1 101 1001\n" },
        { "print/x h", "h: f16 [2] weight, 2 elements shown\n  [0] 0x3c00 0xbc00\n" },
        { "print m[4]", "error: index 4 is out of range for dimension 0 (size 3)\n" },
        { "tile 1", "tile 1, supervisor, pc 0x4c000 <__supervisor> (test.S:30), cycle 0\n"
                    "   0x4c000:  exitz $mzero\n" },
        { "print m[0][0] + m[2][3]", "m[0][0] + m[2][3] = 11\n" },
        { "display m[$tile + 1][1]", "1: m[$tile + 1][1] = 9\n" },
        { "display/x mt[3]", "2: /x mt: i32 [4,3] activation, 3 elements shown\n  [3,0] 0x3 0x7 0xb\n" },
        { "print m[$tile + 2][0]", "error: index 3 is out of range for dimension 0 of 'm' (size 3)\n" });
    run_cmd(&s, "tile 0");
    expect_captured(s.d, dbg_show_displays, "1: m[$tile + 1][1] = 5\n"
                                            "2: /x mt: i32 [4,3] activation, 3 elements shown\n"
                                            "  [3,0] 0x3 0x7 0xb\n");
    close_session(&s);
}

/* ---- tensors: a compiled program ------------------------------------------------------------------- */

#define ROWS 48
#define COLS 96

/* y = x + 1 on x: f32 [48, 96] compiled for 4 tiles; x[i][j] = 1000 i + j
 * except row 2, all zeros. */
static void test_compiled_program_tensors(void)
{
    const int64_t dims[2] = { ROWS, COLS };
    graph *g = graph_new("add", 13);
    input(g, "x", 2, dims);
    scalar(g, "one", 1.0f);
    node(g, GRAPH_OP_ADD, "x,one", "y");
    finish(g, "y");
    lower_options lo = { .machine = gc200(), .tiles = 4 };
    lower_report plan;
    char err[1024];
    ipu_exe *e = lower_graph(g, &lo, &plan, err, sizeof err);
    if (!e)
        fprintf(stderr, "\n%s\n", err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    graph_free(g);
    session s = open_exe(e);
    static float x[ROWS * COLS];
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++)
            x[i * COLS + j] = i == 2 ? 0.0f : (float)(1000 * i + j);
    CU_ASSERT_TRUE_FATAL(debugger_add_input(s.d, "x", x, sizeof x, err, sizeof err));
    run_cmd(&s, "run");
    CU_ASSERT_PTR_NOT_NULL(strstr(s.out, "The program ended"));
    EXPECT_ALL(s,
        { "print y[1][5]", "y[1][5] = 1006\n" },
        { "print y[47][95] - x[47][95]", "y[47][95] - x[47][95] = 1\n" },
        { "print y[2][7]", "y[2][7] = 1\n" },
        { "print y[0, 0:20]", "y: f32 [48,96] output, 20 elements shown\n"
                              "  [0,0] 1 2 3 4 5 6 7 8\n"
                              "  [0,8] 9 10 11 12 13 14 15 16\n"
                              "  [0,16] 17 18 19 20\n" },
        { "print y[1:3, 90:]", "y: f32 [48,96] output, 12 elements shown\n"
                               "  [1,90] 1091 1092 1093 1094 1095 1096\n"
                               "  [2,90] 1 1 1 1 1 1\n" },
        { "print y[2]", "y: f32 [48,96] output, 96 elements shown\n  [2,0] 1 <repeats 96 times>\n" },
        { "print/x y[2, 3:15]", "y: f32 [48,96] output, 12 elements shown\n"
                                "  [2,3] 0x3f800000 <repeats 12 times>\n" });
    /* Every element of y by expression, on every tile that holds a piece. */
    for (int i = 0; i < ROWS; i += 5)
        for (int j = 0; j < COLS; j += 7) {
            char cmd[64], want[96];
            snprintf(cmd, sizeof cmd, "print y[%d][%d]", i, j);
            snprintf(want, sizeof want, "y[%d][%d] = %d\n", i, j, i == 2 ? 1 : 1000 * i + j + 1);
            EXPECT_OUT(s, cmd, want);
        }
    /* The whole tensor: its first 4096 elements, 8 a line, each line with
     * the index of its first element. */
    size_t cap = 1 << 20, len = 0;
    char *want = malloc(cap);
    CU_ASSERT_PTR_NOT_NULL_FATAL(want);
    len += (size_t)snprintf(want + len, cap - len, "y: f32 [48,96] output, 4608 elements shown\n");
    for (int i = 0; i * COLS < 4096; i++) {
        int n = 4096 - i * COLS < COLS ? 4096 - i * COLS : COLS;
        if (i == 2) {
            len += (size_t)snprintf(want + len, cap - len, "  [2,0] 1 <repeats 96 times>\n");
            continue;
        }
        for (int j = 0; j < n; j++) {
            if (j % 8 == 0)
                len += (size_t)snprintf(want + len, cap - len, "%s  [%d,%d]", j ? "\n" : "", i, j);
            len += (size_t)snprintf(want + len, cap - len, " %d", 1000 * i + j + 1);
        }
        len += (size_t)snprintf(want + len, cap - len, "\n");
    }
    snprintf(want + len, cap - len, "  ... 512 more (print a slice)\n");
    EXPECT_OUT(s, "print y", want);
    CU_ASSERT_PTR_NOT_NULL(strstr(s.out, "  [1,88] 1089 1090 1091 1092 1093 1094 1095 1096\n"
                                         "  [2,0] 1 <repeats 96 times>\n"
                                         "  [3,0] 3001 3002 3003 3004 3005 3006 3007 3008\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s.out, "  [42,56] 42057 42058 42059 42060 42061 42062 42063 42064\n"
                                         "  ... 512 more (print a slice)\n"));
    free(want);
    close_session(&s);
}

void test_register(void)
{
    ADD_SUITE("debugger expressions",
              {"operators, precedence, literals, casts", test_operators_and_precedence},
              {"registers, $lr and the place's values", test_registers_and_values},
              {"memory through typed pointers, symbols", test_memory_and_symbols},
              {"parsed once, evaluated on any tile", test_parse_once_evaluate_anywhere},
              {"mistakes: exact messages", test_expression_errors},
              {"print/FMT", test_print_formats},
              {"x/Ni and addresses as expressions", test_examine_instructions},
              {"display and undisplay", test_display},
              {"tensor elements of a tensor map", test_tensor_elements},
              {"a compiled program's tensors", test_compiled_program_tensors});
}
