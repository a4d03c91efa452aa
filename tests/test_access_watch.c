/*
 * test_access_watch.c — access watches (a debugger's read and access
 * watchpoints): tile memory's watches (memmodel/tile_memory.h), which move
 * watched pages out of the fast paths and note the loads and stores that
 * touch them, and the engine's ACCESS pause on top of them
 * (sim/engine/engine.h, engine_set_access_watch): loads of the supervisor
 * and of a worker of every width, the pace forms, ld64putcs/ld128putcs,
 * stores, xsend's read and exchange data received; the accesses just
 * outside a watch that do not pause; the pauses next to STEP and CHECK;
 * removing a watch; and that every run with watches, continued after
 * each pause, ends with the cycles, statistics and memory of the run
 * without.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/asm/asm.h"
#include "memmodel/tile_memory.h"
#include "sim/engine/engine.h"
#include "sim/program/machine.h"
#include "engine_fixture.h"
#include "test_util.h"

#define GC200_BYTES (624u * 1024u)

/* ---- tile memory ---------------------------------------------------------- */

static void test_memory_watch_notes_accesses(void)
{
    tile_memory m;
    tmem_init(&m, ISA_MEMORY_BASE, GC200_BYTES);
    CU_ASSERT_EQUAL(tmem_store32(&m, 0x80004u, 0x11223344u), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_store64(&m, 0x80010u, 0x5566778899aabbccull), TMEM_OK);
    uint8_t *page = m.page[(0x80000u - m.base) / TMEM_PAGE_BYTES];
    CU_ASSERT_PTR_NOT_NULL_FATAL(page);
    CU_ASSERT_TRUE(tmem_watch_add(&m, 0x80004u, 4, TMEM_WATCH_READ));
    CU_ASSERT_PTR_NULL(m.page[(0x80000u - m.base) / TMEM_PAGE_BYTES]);
    CU_ASSERT_EQUAL(tmem_watch_count(&m), 1);
    tmem_access hit = { 0, 0, false };
    uint32_t v = 0;
    uint64_t d = 0;
    /* The bulk reads of the loader, the debugger and the exchange see the
     * bytes and are not noted. */
    CU_ASSERT_EQUAL(tmem_read_bytes(&m, 0x80004u, &v, 4), TMEM_OK);
    CU_ASSERT_EQUAL(v, 0x11223344u);
    CU_ASSERT_FALSE(tmem_watch_take(&m, &hit));
    /* Loads of the watched bytes are noted; one next to them is noted but
     * hits nothing. */
    CU_ASSERT_EQUAL(tmem_load32(&m, 0x80000u, &v), TMEM_OK);
    CU_ASSERT_EQUAL(v, 0);
    CU_ASSERT_FALSE(tmem_watch_take(&m, &hit));
    CU_ASSERT_EQUAL(tmem_load64(&m, 0x80000u, &d), TMEM_OK);
    CU_ASSERT_EQUAL(d, 0x1122334400000000ull);
    CU_ASSERT_TRUE(tmem_watch_take(&m, &hit));
    CU_ASSERT_EQUAL(hit.addr, 0x80000u);
    CU_ASSERT_EQUAL(hit.bytes, 8);
    CU_ASSERT_FALSE(hit.write);
    CU_ASSERT_FALSE(tmem_watch_take(&m, &hit));       /* forgotten */
    /* A store is not a read; the stored value is where loads find it. */
    CU_ASSERT_EQUAL(tmem_store32(&m, 0x80004u, 0xcafef00du), TMEM_OK);
    CU_ASSERT_FALSE(tmem_watch_take(&m, &hit));
    uint8_t b = 0;
    CU_ASSERT_EQUAL(tmem_load(&m, 0x80007u, 1, &b), TMEM_OK);
    CU_ASSERT_EQUAL(b, 0xca);
    CU_ASSERT_TRUE(tmem_watch_take(&m, &hit));
    CU_ASSERT_EQUAL(hit.addr, 0x80007u);
    CU_ASSERT_EQUAL(hit.bytes, 1);
    /* Two 64-bit halves of one 128-bit load are one access. */
    CU_ASSERT_EQUAL(tmem_load64(&m, 0x80000u, &d), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_load64(&m, 0x80008u, &d), TMEM_OK);
    CU_ASSERT_TRUE(tmem_watch_take(&m, &hit));
    CU_ASSERT_EQUAL(hit.addr, 0x80000u);
    CU_ASSERT_EQUAL(hit.bytes, 16);
    /* xsend's read. */
    uint8_t buf[64];
    CU_ASSERT_EQUAL(tmem_load_bytes(&m, 0x7fff0u, buf, sizeof buf), TMEM_OK);
    CU_ASSERT_EQUAL(buf[0x14], 0x0d);
    CU_ASSERT_TRUE(tmem_watch_take(&m, &hit));
    CU_ASSERT_EQUAL(hit.addr, 0x7fff0u);
    CU_ASSERT_EQUAL(hit.bytes, 64);
    /* Removing the last watch puts the very page back. */
    CU_ASSERT_FALSE(tmem_watch_remove(&m, 0x80004u, 4, TMEM_WATCH_WRITE));
    CU_ASSERT_TRUE(tmem_watch_remove(&m, 0x80004u, 4, TMEM_WATCH_READ));
    CU_ASSERT_PTR_EQUAL(m.page[(0x80000u - m.base) / TMEM_PAGE_BYTES], page);
    CU_ASSERT_PTR_NULL(m.watch);
    CU_ASSERT_EQUAL(m.watching, 0);
    CU_ASSERT_EQUAL(tmem_watch_count(&m), 0);
    tmem_free(&m);
}

static void test_memory_watch_pages_and_limits(void)
{
    tile_memory m;
    tmem_init(&m, ISA_MEMORY_BASE, GC200_BYTES);
    CU_ASSERT_EQUAL(tmem_store32(&m, 0x4c000u, 7), TMEM_OK);
    tile_memory before = m;
    /* Bad watches. */
    CU_ASSERT_FALSE(tmem_watch_add(&m, 0x90000u, 0, TMEM_WATCH_READ));
    CU_ASSERT_FALSE(tmem_watch_add(&m, 0x4bffcu, 8, TMEM_WATCH_READ));
    CU_ASSERT_FALSE(tmem_watch_add(&m, 0xe7ffcu, 8, TMEM_WATCH_READ));
    CU_ASSERT_FALSE(tmem_watch_add(&m, 0x90000u, 4, 0));
    CU_ASSERT_FALSE(tmem_watch_add(&m, 0x90000u, 4, 4));
    CU_ASSERT_FALSE(tmem_watch_remove(&m, 0x90000u, 4, TMEM_WATCH_READ));
    CU_ASSERT_EQUAL(memcmp(&m, &before, sizeof m), 0);
    /* A watch across two pages never written, set twice. */
    CU_ASSERT_TRUE(tmem_watch_add(&m, 0x93ffcu, 8, TMEM_WATCH_WRITE));
    CU_ASSERT_TRUE(tmem_watch_add(&m, 0x93ffcu, 8, TMEM_WATCH_WRITE));
    tmem_access hit;
    /* A store allocates the moved page; the bulk write of the loader is not noted. */
    CU_ASSERT_EQUAL(tmem_store32(&m, 0x94000u, 0xabcdu), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_host_bytes(&m), 2 * TMEM_PAGE_BYTES);
    CU_ASSERT_PTR_NULL(m.page[(0x94000u - m.base) / TMEM_PAGE_BYTES]);
    CU_ASSERT_TRUE(tmem_watch_take(&m, &hit));
    CU_ASSERT_EQUAL(hit.addr, 0x94000u);
    CU_ASSERT_TRUE(hit.write);
    const uint8_t word[4] = { 1, 2, 3, 4 };
    CU_ASSERT_EQUAL(tmem_write_bytes(&m, 0x93ffcu, word, 4), TMEM_OK);
    CU_ASSERT_FALSE(tmem_watch_take(&m, &hit));
    /* Writing zeros over bytes of a moved page still writes them. */
    const uint8_t zeros[4] = { 0, 0, 0, 0 };
    CU_ASSERT_EQUAL(tmem_write_bytes(&m, 0x94000u, zeros, 4), TMEM_OK);
    uint32_t v = 1;
    CU_ASSERT_EQUAL(tmem_load32(&m, 0x94000u, &v), TMEM_OK);
    CU_ASSERT_EQUAL(v, 0);
    CU_ASSERT_EQUAL(tmem_load32(&m, 0x93ffcu, &v), TMEM_OK);
    CU_ASSERT_EQUAL(v, 0x04030201u);
    CU_ASSERT_FALSE(tmem_watch_take(&m, &hit));       /* loads are not written */
    CU_ASSERT_TRUE(tmem_watch_hits(&m, 0x93ff0u, 13, true));
    CU_ASSERT_FALSE(tmem_watch_hits(&m, 0x93ff0u, 12, true));
    CU_ASSERT_FALSE(tmem_watch_hits(&m, 0x94004u, 4, true));
    CU_ASSERT_FALSE(tmem_watch_hits(&m, 0x94000u, 4, false));
    /* One removal leaves the other watch. */
    CU_ASSERT_TRUE(tmem_watch_remove(&m, 0x93ffcu, 8, TMEM_WATCH_WRITE));
    CU_ASSERT_EQUAL(tmem_watch_count(&m), 1);
    CU_ASSERT_PTR_NULL(m.page[(0x94000u - m.base) / TMEM_PAGE_BYTES]);
    CU_ASSERT_TRUE(tmem_watch_remove(&m, 0x93ffcu, 8, TMEM_WATCH_WRITE));
    CU_ASSERT_PTR_NOT_NULL(m.page[(0x94000u - m.base) / TMEM_PAGE_BYTES]);
    CU_ASSERT_PTR_NOT_NULL(m.page[(0x90000u - m.base) / TMEM_PAGE_BYTES]);
    CU_ASSERT_EQUAL(tmem_read_bytes(&m, 0x93ffcu, &v, 4), TMEM_OK);
    CU_ASSERT_EQUAL(v, 0x04030201u);
    /* At most TMEM_MAX_WATCHES. */
    for (unsigned i = 0; i < TMEM_MAX_WATCHES; i++)
        CU_ASSERT_TRUE(tmem_watch_add(&m, 0x80000u + 4 * i, 4, TMEM_WATCH_READ | TMEM_WATCH_WRITE));
    CU_ASSERT_FALSE(tmem_watch_add(&m, 0x90000u, 4, TMEM_WATCH_READ));
    tmem_free(&m);
    CU_ASSERT_PTR_NULL(m.watch);
    CU_ASSERT_EQUAL(tmem_host_bytes(&m), 0);
}

/* ---- the engine ------------------------------------------------------------ */

/* Loads and stores of every kind on tile 0: the supervisor's, then a
 * worker's.  Data words at 0x80000 + 4 i hold i + 1. */
static const char prog_src[] =
    " .tile 0\n"
    " .text\n"
    "__supervisor:\n"
    " setzi $m1, data\n"
    "s_ld32: ld32 $m2, $m1, $mzero, 1\n"          /* 0x80004, 4 */
    "s_ld32b: ld32 $m2, $m1, $mzero, 3\n"         /* 0x8000c, 4 */
    "s_st32: st32 $m2, $m1, $mzero, 2\n"          /* 0x80008, 4, write */
    "s_ldz8: ldz8 $m3, $m1, $mzero, 7\n"          /* 0x80007, 1 */
    " setzi $m4, 0x80040\n"
    " put $CCCSLOAD, $m4\n"
    "s_ld128cs: ld128putcs 0\n"                   /* 0x80040, 16 */
    "s_ld64cs: ld64putcs 2\n"                     /* 0x80050, 8 */
    " setzi $m5, worker\n"
    " run $m5, $m1, $mzero\n"
    " sync 0\n"
    " exitz $mzero\n"
    " .align 8\n"
    "worker:\n"
    "w_ld64: ld64 $a0:1, $m13, $mzero, 2\n"       /* 0x80010, 8 */
    "w_ld128: ld128 $a0:3, $m13, $mzero, 2\n"     /* 0x80020, 16 */
    " setzi $m2, 0x80030\n"
    " setzi $m3, 0x80078\n"
    " setzi $m4, 0x80060\n"
    " tapack $m0:1, $m2, $m3, $m4\n"
    "w_pace: ld2x64pace $a0:1, $a2:3, $m0:1+=, $mzero, 0\n"   /* 0x80030, 0x80078 */
    "w_ldst: ldst64pace $a4:5, $a0:1, $m0:1+=, $mzero, 0\n"   /* 0x80038; store 0x80060 */
    "w_st64: st64 $a0:1, $m13, $mzero, 13\n"      /* 0x80068, 8, write */
    " exitz $mzero\n"
    " .data\n"
    "data: .word 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16\n"
    " .word 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32\n";

/* Two tiles send each other 16 bytes (sbufN) into rbufN, sync 1, end. */
static const char xch_src[] =
    " .tile 0\n"
    " .text\n"
    "__supervisor:\n"
    " setzi $m1, sbuf0\n"
    " setzi $m2, 16\n"
    " setzi $m3, 1\n"
    " setzi $m4, rbuf0\n"
    "x0_send: xsend $m1, $m2, $m3\n"
    "x0_recv: xrecv $m4, $m2, $m3\n"
    " sync 1\n"
    " exitz $mzero\n"
    " .data\n"
    "sbuf0: .word 0x10, 0x11, 0x12, 0x13\n"
    "rbuf0: .space 16\n"
    " .tile 1\n"
    " .text\n"
    "__supervisor:\n"
    " setzi $m1, sbuf1\n"
    " setzi $m2, 16\n"
    " setzi $m3, 0\n"
    " setzi $m4, rbuf1\n"
    "x1_send: xsend $m1, $m2, $m3\n"
    "x1_recv: xrecv $m4, $m2, $m3\n"
    " sync 1\n"
    " exitz $mzero\n"
    " .data\n"
    "sbuf1: .word 0x20, 0x21, 0x22, 0x23\n"
    "rbuf1: .space 16\n";

typedef struct prog {
    ipu_exe *e;
    machine m;
    engine *ref;                  /* the same program run without watches */
} prog;

static engine *new_engine(prog *p)
{
    char err[4096];
    engine *g = engine_new(&p->m, p->e, err, sizeof err);
    if (!g)
        fprintf(stderr, "\n%s\n", err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    return g;
}

static const engine_options run_options = { .threads = 1, .trace_tile_first = 1 };

static prog prog_new(const char *src)
{
    prog p;
    char err[4096];
    p.e = asm_assemble_string(src, "test.S", NULL, err, sizeof err);
    if (!p.e)
        fprintf(stderr, "\n%s\n", err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p.e);
    CU_ASSERT_TRUE_FATAL(machine_preset("gc200", &p.m, err, sizeof err));
    p.ref = new_engine(&p);
    CU_ASSERT_EQUAL_FATAL(engine_run(p.ref, &run_options), ENGINE_DONE);
    return p;
}

static void prog_free(prog *p)
{
    engine_free(p->ref);
    exe_free(p->e);
}

static uint32_t sym(const prog *p, const char *name)
{
    const exe_symbol *s = exe_find_symbol(p->e, name);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    return s->addr;
}

typedef struct watch_spec {
    uint32_t tile, addr, bytes;
    unsigned kinds;
} watch_spec;

/* One ACCESS pause as the engine reported it. */
typedef struct seen {
    uint32_t tile;
    unsigned context;
    uint32_t pc, addr, bytes;
    bool write, received;
} seen;

#define MAX_SEEN 16

/* Run p with the watches, continuing after every pause (each must be
 * ACCESS); the pauses in out; the run must end as the reference did. */
static size_t run_watched(prog *p, const watch_spec *w, size_t n_w, seen *out)
{
    engine *g = new_engine(p);
    for (size_t i = 0; i < n_w; i++)
        CU_ASSERT_TRUE(engine_set_access_watch(g, w[i].tile, w[i].addr, w[i].bytes, w[i].kinds, true));
    CU_ASSERT_EQUAL_FATAL(engine_start(g, &run_options), ENGINE_DONE);
    size_t n = 0;
    enum engine_status st;
    while ((st = engine_continue(g)) == ENGINE_PAUSED) {
        const engine_pause *q = engine_get_pause(g);
        CU_ASSERT_EQUAL(q->reason, ENGINE_PAUSE_ACCESS);
        if (!q->access_received)
            CU_ASSERT_STRING_EQUAL(engine_tile_status(g, q->tile), "paused (access watch)");
        CU_ASSERT_FATAL(n < MAX_SEEN);
        out[n++] = (seen){ q->tile, q->context, q->pc, q->access_addr, q->access_bytes, q->access_write,
                           q->access_received };
    }
    CU_ASSERT_EQUAL(st, ENGINE_DONE);
    sys_same_run(p->ref, g);
    engine_free(g);
    return n;
}

#define ASSERT_SEEN(s, tile_, ctx_, pc_, addr_, bytes_, write_) do { \
        CU_ASSERT_EQUAL((s).tile, tile_); \
        CU_ASSERT_EQUAL((s).context, ctx_); \
        CU_ASSERT_EQUAL((s).pc, pc_); \
        CU_ASSERT_EQUAL((s).addr, addr_); \
        CU_ASSERT_EQUAL((s).bytes, bytes_); \
        CU_ASSERT_EQUAL((s).write, write_); \
    } while (0)

static void test_supervisor_loads(void)
{
    prog p = prog_new(prog_src);
    seen s[MAX_SEEN];
    /* ld32 of the word, then ldz8 of its last byte. */
    watch_spec w = { 0, 0x80004, 4, ENGINE_WATCH_READ };
    CU_ASSERT_EQUAL_FATAL(run_watched(&p, &w, 1, s), 2);
    ASSERT_SEEN(s[0], 0, 0, sym(&p, "s_ld32"), 0x80004, 4, false);
    CU_ASSERT_FALSE(s[0].received);
    ASSERT_SEEN(s[1], 0, 0, sym(&p, "s_ldz8"), 0x80007, 1, false);
    /* Both loads are just outside 0x80008..0x8000b; the store is no read. */
    w = (watch_spec){ 0, 0x80008, 4, ENGINE_WATCH_READ };
    CU_ASSERT_EQUAL(run_watched(&p, &w, 1, s), 0);
    /* ld64putcs and ld128putcs, each watched by one byte. */
    watch_spec cs[] = { { 0, 0x8004f, 1, ENGINE_WATCH_READ }, { 0, 0x80050, 1, ENGINE_WATCH_READ } };
    CU_ASSERT_EQUAL_FATAL(run_watched(&p, cs, 2, s), 2);
    ASSERT_SEEN(s[0], 0, 0, sym(&p, "s_ld128cs"), 0x80040, 16, false);
    ASSERT_SEEN(s[1], 0, 0, sym(&p, "s_ld64cs"), 0x80050, 8, false);
    prog_free(&p);
}

static void test_worker_loads(void)
{
    prog p = prog_new(prog_src);
    seen s[MAX_SEEN];
    /* ld64 overlapping by its last byte, ld128 by its last and by its first. */
    watch_spec w[] = { { 0, 0x80017, 1, ENGINE_WATCH_READ } };
    CU_ASSERT_EQUAL_FATAL(run_watched(&p, w, 1, s), 1);
    ASSERT_SEEN(s[0], 0, 1, sym(&p, "w_ld64"), 0x80010, 8, false);
    w[0] = (watch_spec){ 0, 0x8002f, 1, ENGINE_WATCH_READ };
    CU_ASSERT_EQUAL_FATAL(run_watched(&p, w, 1, s), 1);
    ASSERT_SEEN(s[0], 0, 1, sym(&p, "w_ld128"), 0x80020, 16, false);
    w[0] = (watch_spec){ 0, 0x8001c, 5, ENGINE_WATCH_READ };
    CU_ASSERT_EQUAL_FATAL(run_watched(&p, w, 1, s), 1);
    ASSERT_SEEN(s[0], 0, 1, sym(&p, "w_ld128"), 0x80020, 16, false);
    /* Nothing reads 0x80018..0x8001f, between the two. */
    w[0] = (watch_spec){ 0, 0x80018, 8, ENGINE_WATCH_READ | ENGINE_WATCH_WRITE };
    CU_ASSERT_EQUAL(run_watched(&p, w, 1, s), 0);
    /* The pace forms: ld2x64pace's second load, ldst64pace's load and
     * store (one pause for the issue: its first access that hit). */
    watch_spec pace[] = { { 0, 0x80078, 8, ENGINE_WATCH_READ }, { 0, 0x80038, 4, ENGINE_WATCH_READ },
                          { 0, 0x80064, 4, ENGINE_WATCH_WRITE } };
    CU_ASSERT_EQUAL_FATAL(run_watched(&p, pace, 3, s), 2);
    ASSERT_SEEN(s[0], 0, 1, sym(&p, "w_pace"), 0x80078, 8, false);
    ASSERT_SEEN(s[1], 0, 1, sym(&p, "w_ldst"), 0x80038, 8, false);
    CU_ASSERT_EQUAL_FATAL(run_watched(&p, pace + 2, 1, s), 1);
    ASSERT_SEEN(s[0], 0, 1, sym(&p, "w_ldst"), 0x80060, 8, true);
    prog_free(&p);
}

static void test_stores_need_write(void)
{
    prog p = prog_new(prog_src);
    seen s[MAX_SEEN];
    watch_spec w[] = { { 0, 0x80008, 4, ENGINE_WATCH_WRITE }, { 0, 0x8006c, 1, ENGINE_WATCH_WRITE } };
    CU_ASSERT_EQUAL_FATAL(run_watched(&p, w, 2, s), 2);
    ASSERT_SEEN(s[0], 0, 0, sym(&p, "s_st32"), 0x80008, 4, true);
    ASSERT_SEEN(s[1], 0, 1, sym(&p, "w_st64"), 0x80068, 8, true);
    /* Read watches on the stored bytes: nothing (nothing loads them). */
    w[0].kinds = w[1].kinds = ENGINE_WATCH_READ;
    CU_ASSERT_EQUAL(run_watched(&p, w, 2, s), 0);
    /* An access watch over the first 0x80 bytes sees every access, in order. */
    watch_spec all = { 0, 0x80000, 0x80, ENGINE_WATCH_READ | ENGINE_WATCH_WRITE };
    CU_ASSERT_EQUAL_FATAL(run_watched(&p, &all, 1, s), 11);
    static const char *const order[] = { "s_ld32", "s_ld32b", "s_st32", "s_ldz8", "s_ld128cs", "s_ld64cs",
                                         "w_ld64", "w_ld128", "w_pace", "w_ldst", "w_st64" };
    for (size_t i = 0; i < 11; i++)
        CU_ASSERT_EQUAL(s[i].pc, sym(&p, order[i]));
    /* The pace load of two 64-bit words reports the first. */
    CU_ASSERT_EQUAL(s[8].addr, 0x80030);
    CU_ASSERT_EQUAL(s[8].bytes, 8);
    prog_free(&p);
}

/* A watch set and removed leaves the tile's memory bit for bit as it was;
 * one removed at a pause stops pausing. */
static void test_remove_restores(void)
{
    prog p = prog_new(prog_src);
    engine *g = new_engine(&p);
    const ipu_tile *t = engine_tile(g, 0);
    tile_memory before = t->s.mem;
    CU_ASSERT_FALSE(engine_set_access_watch(g, 0, 0x80004, 4, ENGINE_WATCH_READ, false));
    CU_ASSERT_FALSE(engine_set_access_watch(g, 1, 0x80004, 4, ENGINE_WATCH_READ, true));   /* no code */
    CU_ASSERT_FALSE(engine_set_access_watch(g, 0, 0x40000, 4, ENGINE_WATCH_READ, true));
    CU_ASSERT_FALSE(engine_set_access_watch(g, 0, 0x80004, 4, 0, true));
    CU_ASSERT_TRUE(engine_set_access_watch(g, 0, 0x80004, 4, ENGINE_WATCH_READ, true));
    CU_ASSERT_TRUE(engine_set_access_watch(g, 0, 0x90000, 8, ENGINE_WATCH_WRITE, true));
    CU_ASSERT_NOT_EQUAL(memcmp(&t->s.mem, &before, sizeof before), 0);
    CU_ASSERT_PTR_NULL(t->s.mem.page[(0x80000 - t->s.mem.base) / TMEM_PAGE_BYTES]);
    CU_ASSERT_EQUAL_FATAL(engine_start(g, &run_options), ENGINE_DONE);
    CU_ASSERT_EQUAL_FATAL(engine_continue(g), ENGINE_PAUSED);
    CU_ASSERT_EQUAL(engine_get_pause(g)->reason, ENGINE_PAUSE_ACCESS);
    CU_ASSERT_EQUAL(engine_get_pause(g)->pc, sym(&p, "s_ld32"));
    CU_ASSERT_EQUAL(engine_get_pause(g)->cycle, t->s.cycle);
    /* Nothing stored yet: removing both watches gives back the same pages
     * (wpage[] may hold a page the memory holds alone where the load left it
     * to be copied on write: the same stores go to the same bytes). */
    CU_ASSERT_TRUE(engine_set_access_watch(g, 0, 0x90000, 8, ENGINE_WATCH_WRITE, false));
    CU_ASSERT_TRUE(engine_set_access_watch(g, 0, 0x80004, 4, ENGINE_WATCH_READ, false));
    CU_ASSERT_EQUAL(memcmp(t->s.mem.page, before.page, sizeof before.page), 0);
    CU_ASSERT_EQUAL(t->s.mem.watching, before.watching);
    CU_ASSERT_EQUAL(t->s.mem.pages_allocated, before.pages_allocated);
    for (unsigned pg = 0; pg < TMEM_MAX_PAGES; pg++)
        CU_ASSERT(t->s.mem.wpage[pg] == before.wpage[pg] || t->s.mem.wpage[pg] == t->s.mem.page[pg]);
    /* The ldz8 of 0x80007 no longer pauses. */
    CU_ASSERT_EQUAL(engine_continue(g), ENGINE_DONE);
    sys_same_run(p.ref, g);
    engine_free(g);
    prog_free(&p);
}

/* The engine's check() for test_check_then_access: true when tile 0's
 * word at 0x80008 changed. */
static bool word_changed(void *ctx, const engine *g, uint32_t tile)
{
    uint32_t *last = ctx, now = 0;
    if (tile != 0)
        return false;
    tmem_read_bytes(&engine_tile(g, 0)->s.mem, 0x80008, &now, 4);
    bool changed = now != *last;
    *last = now;
    return changed;
}

/* An issue that a change watch and an access watch both see pauses twice:
 * CHECK, then ACCESS; with stepping, once: ACCESS. */
static void test_check_and_step(void)
{
    prog p = prog_new(prog_src);
    engine *g = new_engine(&p);
    uint32_t last = 3;
    engine_debug dbg = { .check = word_changed, .check_ctx = &last };
    engine_set_debug(g, &dbg);
    CU_ASSERT_TRUE(engine_set_tile_checked(g, 0, true));
    CU_ASSERT_TRUE(engine_set_access_watch(g, 0, 0x80008, 4, ENGINE_WATCH_WRITE, true));
    CU_ASSERT_EQUAL_FATAL(engine_start(g, &run_options), ENGINE_DONE);
    CU_ASSERT_EQUAL_FATAL(engine_continue(g), ENGINE_PAUSED);
    const engine_pause *q = engine_get_pause(g);
    CU_ASSERT_EQUAL(q->reason, ENGINE_PAUSE_CHECK);
    CU_ASSERT_EQUAL(q->pc, sym(&p, "s_st32"));
    uint64_t cycle = q->cycle;
    CU_ASSERT_EQUAL_FATAL(engine_continue(g), ENGINE_PAUSED);
    CU_ASSERT_EQUAL(q->reason, ENGINE_PAUSE_ACCESS);
    CU_ASSERT_EQUAL(q->pc, sym(&p, "s_st32"));
    CU_ASSERT_EQUAL(q->cycle, cycle);
    CU_ASSERT_EQUAL(q->access_addr, 0x80008);
    CU_ASSERT_TRUE(q->access_write);
    CU_ASSERT_EQUAL(engine_continue(g), ENGINE_DONE);
    sys_same_run(p.ref, g);
    engine_free(g);

    /* Stepping tile 0: every issue is a STEP but the two that read 0x80004. */
    g = new_engine(&p);
    dbg = (engine_debug){ .step = true, .step_tile = 0 };
    engine_set_debug(g, &dbg);
    CU_ASSERT_TRUE(engine_set_access_watch(g, 0, 0x80004, 4, ENGINE_WATCH_READ, true));
    CU_ASSERT_EQUAL_FATAL(engine_start(g, &run_options), ENGINE_DONE);
    unsigned steps = 0, accesses = 0;
    enum engine_status st;
    while ((st = engine_continue(g)) == ENGINE_PAUSED) {
        q = engine_get_pause(g);
        if (q->reason == ENGINE_PAUSE_ACCESS) {
            CU_ASSERT_EQUAL(q->pc, accesses ? sym(&p, "s_ldz8") : sym(&p, "s_ld32"));
            accesses++;
        } else {
            CU_ASSERT_EQUAL(q->reason, ENGINE_PAUSE_STEP);
            steps++;
        }
    }
    CU_ASSERT_EQUAL(st, ENGINE_DONE);
    CU_ASSERT_EQUAL(accesses, 2);
    CU_ASSERT_EQUAL(steps + accesses, engine_tile(p.ref, 0)->stats.issues);
    sys_same_run(p.ref, g);
    engine_free(g);
    prog_free(&p);
}

static void test_exchange(void)
{
    prog p = prog_new(xch_src);
    seen s[MAX_SEEN];
    /* xsend reads its data at issue; received data are a write, after the
     * resolution that lands them, receivers in tile order. */
    watch_spec w[] = { { 0, sym(&p, "sbuf0") + 8, 4, ENGINE_WATCH_READ },
                       { 1, sym(&p, "rbuf1") + 12, 4, ENGINE_WATCH_WRITE },
                       { 0, sym(&p, "rbuf0"), 1, ENGINE_WATCH_READ | ENGINE_WATCH_WRITE } };
    CU_ASSERT_EQUAL_FATAL(run_watched(&p, w, 3, s), 3);
    ASSERT_SEEN(s[0], 0, 0, sym(&p, "x0_send"), sym(&p, "sbuf0"), 16, false);
    CU_ASSERT_FALSE(s[0].received);
    ASSERT_SEEN(s[1], 0, 0, sym(&p, "x0_recv"), sym(&p, "rbuf0"), 16, true);
    CU_ASSERT_TRUE(s[1].received);
    ASSERT_SEEN(s[2], 1, 0, sym(&p, "x1_recv"), sym(&p, "rbuf1"), 16, true);
    CU_ASSERT_TRUE(s[2].received);
    /* A read watch on the receive buffer, a write watch on the sent one: nothing. */
    watch_spec none[] = { { 1, sym(&p, "rbuf1"), 16, ENGINE_WATCH_READ },
                          { 1, sym(&p, "sbuf1"), 16, ENGINE_WATCH_WRITE } };
    CU_ASSERT_EQUAL(run_watched(&p, none, 2, s), 0);
    uint32_t got = 0;
    tmem_read_bytes(&engine_tile(p.ref, 1)->s.mem, sym(&p, "rbuf1"), &got, 4);
    CU_ASSERT_EQUAL(got, 0x10);
    prog_free(&p);
}

void test_register(void)
{
    ADD_SUITE("access_watch",
              {"memory: watched accesses are noted", test_memory_watch_notes_accesses},
              {"memory: pages, counted watches, limits", test_memory_watch_pages_and_limits},
              {"supervisor loads, ld64/128putcs", test_supervisor_loads},
              {"worker loads: 64, 128 bits, pace", test_worker_loads},
              {"stores pause only with WRITE", test_stores_need_write},
              {"removing a watch restores the memory", test_remove_restores},
              {"with a change watch and with stepping", test_check_and_step},
              {"xsend and received data", test_exchange});
}
