/*
 * test_asm.c — the assembler: directives, labels and expressions, row
 * selection by operand kinds, bundles, .include, macros, placement, and
 * the exact message for each kind of mistake.
 *
 * Expected instruction words come from isa_encode() (the table), so the
 * tests check what the assembler chose and where it put it, not this
 * week's bit layout; a few tests pin the bundle layout itself.
 */
#include <CUnit/CUnit.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "isa/asm/asm.h"
#include "isa/isa.h"
#include "isa/fp16.h"
#include "test_util.h"

#define ASM_DIR IPUSIM_SOURCE_DIR "/tests/asm/"

static char last_err[8192];

static ipu_exe *as_opt(const char *src, const asm_options *opt)
{
    ipu_exe *e = asm_assemble_string(src, "k.S", opt, last_err, sizeof last_err);
    if (!e)
        fprintf(stderr, "\nunexpected assembly error:\n%s\n", last_err);
    return e;
}

static ipu_exe *as(const char *src) { return as_opt(src, NULL); }

/* The first error message for src, or "" if it assembled. */
static const char *as_err(const char *src)
{
    ipu_exe *e = asm_assemble_string(src, "k.S", NULL, last_err, sizeof last_err);
    if (e) {
        exe_free(e);
        return "";
    }
    char *nl = strchr(last_err, '\n');
    if (nl)
        *nl = 0;
    return last_err;
}

static const exe_section *section(const ipu_exe *e, uint32_t tile, const char *name)
{
    for (size_t i = 0; i < e->n_sections; i++)
        if (e->sections[i].tile == tile && !strcmp(e->sections[i].name, name))
            return &e->sections[i];
    return NULL;
}

static uint32_t word_at(const ipu_exe *e, uint32_t tile, uint32_t addr)
{
    for (size_t i = 0; i < e->n_sections; i++) {
        const exe_section *s = &e->sections[i];
        if (s->tile == tile && s->bytes && addr >= s->addr && addr + 4 <= s->addr + s->size) {
            const uint8_t *b = s->bytes + (addr - s->addr);
            return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
        }
    }
    return 0xdeadbeefu;
}

static uint32_t enc(enum isa_op op, ...)
{
    int32_t v[ISA_MAX_OPERANDS] = {0};
    va_list ap;
    va_start(ap, op);
    for (unsigned i = 0; i < isa_get(op)->n_operands; i++)
        v[i] = va_arg(ap, int32_t);
    va_end(ap);
    uint32_t w = 0;
    char err[200];
    if (!isa_encode(op, v, &w, err, sizeof err))
        fprintf(stderr, "test encode failed: %s\n", err);
    return w;
}

static const exe_symbol *sym(const ipu_exe *e, uint32_t tile, const char *name)
{
    for (size_t i = 0; i < e->n_symbols; i++)
        if (e->symbols[i].tile == tile && !strcmp(e->symbols[i].name, name))
            return &e->symbols[i];
    return NULL;
}

static int64_t entry_of(const ipu_exe *e, uint32_t tile)
{
    for (size_t i = 0; i < e->n_tiles; i++)
        if (e->tiles[i].tile == tile)
            return e->tiles[i].supervisor_entry;
    return -1;
}

/* ---- directives ----------------------------------------------------------- */

static void test_data_directives(void)
{
    ipu_exe *e = as(".data\n"
                    ".word 1, -1, 0xfffffffe\n"
                    ".half 0x1234, -2\n"
                    ".byte 'A', 255, -128\n"
                    ".byte 7\n"
                    ".quad 0x0102030405060708\n"
                    ".float 1.5, -0.0, 1e39, -3.4028235e38\n"
                    ".f16 1.0, 65504, 1e-8\n"
                    ".ascii \"ab\\n\"\n"
                    ".asciz \"q\"\n"
                    ".space 3, 0xaa\n"
                    ".zero 2\n"
                    ".long 5\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    const exe_section *d = section(e, 0, ".data");
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_EQUAL(d->addr, 0x80000);
    CU_ASSERT_EQUAL(d->flags, EXE_SEC_WRITE);
    static const uint8_t want[] = {
        1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xfe, 0xff, 0xff, 0xff,
        0x34, 0x12, 0xfe, 0xff,
        'A', 0xff, 0x80, 7,
        8, 7, 6, 5, 4, 3, 2, 1,
        0x00, 0x00, 0xc0, 0x3f, 0x00, 0x00, 0x00, 0x80,
        0x00, 0x00, 0x80, 0x7f, 0xff, 0xff, 0x7f, 0xff,   /* +inf, -FLT_MAX */
        0x00, 0x3c, 0xff, 0x7b, 0x00, 0x00,   /* 1e-8 underflows to +0 in f16 */
        'a', 'b', '\n', 'q', 0,
        0xaa, 0xaa, 0xaa, 0, 0,
        5, 0, 0, 0,
    };
    CU_ASSERT_EQUAL_FATAL(d->size, sizeof want);
    CU_ASSERT_EQUAL(memcmp(d->bytes, want, sizeof want), 0);
    CU_ASSERT_EQUAL(fp16_from_f32(65504.0f), 0x7bff);
    exe_free(e);
}

/* Empty strings: `.ascii ""` adds nothing, `.asciz ""` its terminator. */
static void test_empty_strings(void)
{
    ipu_exe *e = as(".data\n"
                    "a: .ascii \"\"\n"
                    "b: .ascii \"\", \"x\", \"\"\n"
                    "c: .asciz \"\"\n"
                    "d: .string \"\", \"\"\n"
                    "e: .byte 9\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    const exe_section *d = section(e, 0, ".data");
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    static const uint8_t want[] = { 'x', 0, 0, 0, 9 };
    CU_ASSERT_EQUAL_FATAL(d->size, sizeof want);
    CU_ASSERT_EQUAL(memcmp(d->bytes, want, sizeof want), 0);
    CU_ASSERT_EQUAL(sym(e, 0, "a")->addr, sym(e, 0, "b")->addr);
    CU_ASSERT_EQUAL(sym(e, 0, "c")->addr, sym(e, 0, "a")->addr + 1);
    CU_ASSERT_EQUAL(sym(e, 0, "e")->addr, sym(e, 0, "a")->addr + 4);
    exe_free(e);
    /* a section holding only an empty string has no bytes */
    e = as(".data\n.ascii \"\"\n.text\nexitz $mzero\n");
    CU_ASSERT_PTR_NOT_NULL(e);
    exe_free(e);
}

static void test_align_and_space(void)
{
    /* In code .align pads with nops (after zero bytes up to a word); in
     * data with zeros or the fill byte. */
    ipu_exe *e = as(".text\n"
                    "setzi $m0, 1\n"
                    ".align 16\n"
                    "x: exitz $mzero\n"
                    ".data\n"
                    ".byte 1\n"
                    ".balign 4, 0xee\n"
                    ".byte 2\n"
                    ".p2align 3\n"
                    "y: .byte 3\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    uint32_t nop = enc(ISA_OP_NOP);
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c000), enc(ISA_OP_SETZI, 0, 1));
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c004), nop);
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c008), nop);
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c00c), nop);
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c010), enc(ISA_OP_EXITZ, 15));
    CU_ASSERT_EQUAL(sym(e, 0, "x")->addr, 0x4c010);
    const exe_section *d = section(e, 0, ".data");
    static const uint8_t want[] = {1, 0xee, 0xee, 0xee, 2, 0, 0, 0, 3};
    CU_ASSERT_EQUAL_FATAL(d->size, sizeof want);
    CU_ASSERT_EQUAL(memcmp(d->bytes, want, sizeof want), 0);
    CU_ASSERT_EQUAL(sym(e, 0, "y")->addr, 0x80008);
    exe_free(e);
}

static void test_default_placement(void)
{
    /* .text at 0x4C000, .data at 0x80000, .bss after the data aligned to
     * 8 (or to its largest .align), other sections after those of their
     * kind. */
    ipu_exe *e = as(".bss\nb: .space 4\n"
                    ".data\nd: .word 1, 2, 3\n"
                    ".section .rodata, \"a\"\nr: .word 9\n"
                    ".text\nt: nop\n"
                    ".section .text.more, \"ax\"\nm: nop\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_EQUAL(sym(e, 0, "t")->addr, 0x4c000);
    CU_ASSERT_EQUAL(sym(e, 0, "m")->addr, 0x4c008);
    CU_ASSERT_EQUAL(sym(e, 0, "d")->addr, 0x80000);
    CU_ASSERT_EQUAL(sym(e, 0, "r")->addr, 0x80010);
    CU_ASSERT_EQUAL(sym(e, 0, "b")->addr, 0x80018);
    const exe_section *b = section(e, 0, ".bss");
    CU_ASSERT_EQUAL(b->flags, EXE_SEC_WRITE | EXE_SEC_NOBITS);
    CU_ASSERT_PTR_NULL(b->bytes);
    CU_ASSERT_EQUAL(section(e, 0, ".rodata")->flags, 0);
    CU_ASSERT_EQUAL(section(e, 0, ".text.more")->flags, EXE_SEC_EXEC);
    CU_ASSERT_EQUAL(entry_of(e, 0), 0x4c000);
    exe_free(e);
}

static void test_explicit_placement(void)
{
    ipu_exe *e = as_opt(".section .a, \"ax\", 0x4c100\n"
                        "a: nop\n"
                        ".section .b, \"aw\", @nobits, 0x90000\n"
                        "b: .space 16\n"
                        ".text\n"
                        ".org 0x4c200\n"
                        "t: nop\n"
                        ".org 0x4c20c\n"
                        "u: exitz $mzero\n"
                        ".data\n"
                        ".org 0x80010\n"
                        "d: .word 5\n", &(asm_options){ .default_tile = 3 });
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_EQUAL(sym(e, 3, "a")->addr, 0x4c100);
    CU_ASSERT_EQUAL(sym(e, 3, "b")->addr, 0x90000);
    CU_ASSERT_EQUAL(section(e, 3, ".b")->flags, EXE_SEC_WRITE | EXE_SEC_NOBITS);
    CU_ASSERT_EQUAL(sym(e, 3, "t")->addr, 0x4c200);
    CU_ASSERT_EQUAL(sym(e, 3, "u")->addr, 0x4c20c);
    CU_ASSERT_EQUAL(word_at(e, 3, 0x4c204), enc(ISA_OP_NOP));   /* .org pads code with nops */
    CU_ASSERT_EQUAL(word_at(e, 3, 0x4c20c), enc(ISA_OP_EXITZ, 15));
    CU_ASSERT_EQUAL(sym(e, 3, "d")->addr, 0x80010);
    /* .text is not the first code section but it is the default entry. */
    CU_ASSERT_EQUAL(entry_of(e, 3), 0x4c200);
    CU_ASSERT_EQUAL(entry_of(e, 0), -1);
    exe_free(e);
}

static void test_tiles_and_entries(void)
{
    ipu_exe *e = asm_assemble_file(ASM_DIR "multitile.S", NULL, last_err, sizeof last_err);
    if (!e)
        fprintf(stderr, "%s\n", last_err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_EQUAL(entry_of(e, 0), 0x4c000);        /* __supervisor */
    CU_ASSERT_EQUAL(entry_of(e, 1), 0x4c000);        /* start of .text */
    CU_ASSERT_EQUAL(entry_of(e, 2), 0x50004);        /* .entry main2 */
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c000), enc(ISA_OP_SETZI, 0, 0x4c100));
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c004), enc(ISA_OP_BRI, 0x4c000));
    CU_ASSERT_EQUAL(sym(e, 0, "consts")->addr, 0x80000);
    CU_ASSERT_EQUAL(section(e, 1, ".data")->addr, 0x90000);
    CU_ASSERT_EQUAL(section(e, 2, ".code2")->addr, 0x50000);
    CU_ASSERT_EQUAL(section(e, 2, ".code2")->size, 0x14);
    CU_ASSERT_EQUAL(section(e, 2, ".bss")->addr, 0xa0000);
    CU_ASSERT_PTR_NULL(sym(e, 1, "worker"));         /* labels are per tile */
    exe_free(e);
}

/* The bytes of e as an ELF file (caller frees). */
static uint8_t *elf_bytes(const ipu_exe *e, size_t *n)
{
    char path[] = "/tmp/ipusim_test_asm_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return NULL;
    close(fd);
    char err[300];
    uint8_t *buf = NULL;
    *n = 0;
    if (!exe_write(e, path, err, sizeof err))
        fprintf(stderr, "\n%s\n", err);
    else {
        FILE *f = fopen(path, "rb");
        if (f) {
            fseek(f, 0, SEEK_END);
            long len = ftell(f);
            fseek(f, 0, SEEK_SET);
            buf = malloc(len > 0 ? (size_t)len : 1);
            *n = buf ? fread(buf, 1, (size_t)len, f) : 0;
            fclose(f);
        }
    }
    unlink(path);
    return buf;
}

/* A body with every kind of thing a tile list puts on each tile: code with
 * labels, local labels and a branch, data naming labels, a NOBITS section,
 * a section at an address, attributes, .symbol and .entry. */
#define TILE_BODY \
    ".macro body\n" \
    ".text\n" \
    ".globl __supervisor\n" \
    ".type __supervisor, @function\n" \
    "__supervisor:\n" \
    "    setzi $m0, table\n" \
    "1:  brnzdec $m0, 1b\n" \
    "    bri done\n" \
    "done: exitz $mzero\n" \
    ".size __supervisor, . - __supervisor\n" \
    ".section .rodata, \"a\"\n" \
    "table: .word table, 2f, 0x1234\n" \
    "2: .byte 1\n" \
    ".bss\n" \
    "buf: .space 8\n" \
    ".symbol buf, @object, 8, global\n" \
    "    .space 8\n" \
    ".section .fixed, \"aw\", 0x90000\n" \
    "f: .word f\n" \
    ".entry done\n" \
    ".endm\n"

static void test_tile_lists(void)
{
    /* A list is the same program as the body written once per tile: the
     * same ELF file, byte for byte (sections, symbols and line records in
     * the same order), with a tile's own section after it. */
    const char *own = ".tile 1\n.section .own, \"aw\", 0xa0000\nw: .word 1\n";
    char listed[2000], per_tile[2000];
    snprintf(listed, sizeof listed, "%s.tile 0-2, 5\nbody\n%s", TILE_BODY, own);
    snprintf(per_tile, sizeof per_tile, "%s.tile 0\nbody\n.tile 1\nbody\n.tile 2\nbody\n.tile 5\nbody\n%s", TILE_BODY,
             own);
    ipu_exe *a = as(listed), *b = as(per_tile);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    size_t na, nb;
    uint8_t *ea = elf_bytes(a, &na), *eb = elf_bytes(b, &nb);
    CU_ASSERT_PTR_NOT_NULL(ea);
    CU_ASSERT_TRUE(na > 0 && na == nb && !memcmp(ea, eb, na));
    free(ea);
    free(eb);
    /* What it holds. */
    static const uint32_t tiles[] = {0, 1, 2, 5};
    for (size_t i = 0; i < 4; i++) {
        uint32_t t = tiles[i];
        CU_ASSERT_EQUAL(entry_of(a, t), 0x4c00c);
        CU_ASSERT_EQUAL(word_at(a, t, 0x4c000), enc(ISA_OP_SETZI, 0, 0x80000));
        CU_ASSERT_EQUAL(word_at(a, t, 0x80000), 0x80000);   /* table */
        CU_ASSERT_EQUAL(word_at(a, t, 0x80004), 0x8000c);   /* 2f */
        CU_ASSERT_EQUAL(word_at(a, t, 0x90000), 0x90000);
        CU_ASSERT_PTR_NOT_NULL_FATAL(sym(a, t, "__supervisor"));
        CU_ASSERT_EQUAL(sym(a, t, "__supervisor")->size, 16);
        CU_ASSERT_TRUE(sym(a, t, "__supervisor")->global);
        CU_ASSERT_EQUAL(section(a, t, ".bss")->addr, 0x80010);
    }
    CU_ASSERT_PTR_NULL(section(a, 3, ".text"));
    CU_ASSERT_EQUAL(entry_of(a, 3), -1);
    CU_ASSERT_EQUAL(word_at(a, 1, 0xa0000), 1);
    CU_ASSERT_PTR_NULL(section(a, 0, ".own"));
    CU_ASSERT_EQUAL(a->n_sections, 4 * 4 + 1);
    /* .symbol adds a second 'buf' on each tile, after the label. */
    size_t bufs = 0;
    for (size_t i = 0; i < a->n_symbols; i++)
        if (!strcmp(a->symbols[i].name, "buf") && a->symbols[i].tile == 2) {
            CU_ASSERT_EQUAL(a->symbols[i].addr, bufs ? 0x80018 : 0x80010);
            CU_ASSERT_EQUAL(a->symbols[i].size, bufs ? 8 : 0);
            CU_ASSERT_EQUAL(a->symbols[i].global, bufs == 1);
            bufs++;
        }
    CU_ASSERT_EQUAL(bufs, 2);
    exe_free(a);
    exe_free(b);

    /* Lists in any order, single tiles, expressions for a tile. */
    a = as(".tile 9, 3-4, (2 * 3)\nnop\n.tile 2 * 4 + 1\n.data\n.word 1\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL(section(a, 3, ".text"));
    CU_ASSERT_PTR_NOT_NULL(section(a, 4, ".text"));
    CU_ASSERT_PTR_NOT_NULL(section(a, 6, ".text"));
    CU_ASSERT_PTR_NOT_NULL(section(a, 9, ".text"));
    CU_ASSERT_PTR_NULL(section(a, 5, ".text"));
    CU_ASSERT_EQUAL(a->n_sections, 5);
    exe_free(a);
    a = as(".tile 2-(4 - 1)\nnop\n");   /* a range 2..3: the difference in parentheses */
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(a->n_sections, 2);
    exe_free(a);
    /* .entry opens no section when it does not use `.`: the tiles' .text
     * may then come under other lists. */
    a = as(".tile 0-2\n.entry 0x4c000\n.tile 0-1\n.text\nx: nop\n.size x, 4\n"
           ".tile 2\n.text\nexitz $mzero\n.tile 5\n.set here, .\n.word here\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(entry_of(a, 2), 0x4c000);
    CU_ASSERT_EQUAL(word_at(a, 2, 0x4c000), enc(ISA_OP_EXITZ, 15));
    CU_ASSERT_EQUAL(word_at(a, 5, 0x4c000), 0x4c000);   /* `.` before any section: in .text */
    exe_free(a);
    /* A statement naming a label of the tile's own section assembles alike
     * when the label is at one address on every tile. */
    a = as(".tile 0\n.section .w, \"aw\"\nw: .word 9\n.tile 1\n.section .w, \"aw\"\nw: .word 8\n"
           ".tile 0-1\n.text\nsetzi $m0, w\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(word_at(a, 1, 0x4c000), enc(ISA_OP_SETZI, 0, 0x80000));
    exe_free(a);
}

static void test_tile_list_errors(void)
{
    static const struct { const char *src, *msg; } cases[] = {
        {".tile\nnop\n", "k.S:1:6: error: expected a tile or a range of tiles after '.tile', found end of line"},
        {".tile 0,\nnop\n", "k.S:1:9: error: expected a tile or a range of tiles after ',', found end of line"},
        {".tile 0, , 3\n", "k.S:1:10: error: expected a tile or a range of tiles after ',', found ','"},
        {".tile 4-\n", "k.S:1:9: error: expected the last tile of the range after '-', found end of line"},
        {".tile 1-2-3\n", "k.S:1:10: error: a range of tiles is FIRST-LAST with one '-'; write (A - B) for a "
                          "difference"},
        {".tile 3 4\n", "k.S:1:9: error: expected ',' or end of statement after a tile in '.tile', found '4'"},
        {".tile 7-4\n", "k.S:1:7: error: tile range 7-4 is reversed: the first tile must not be above the last"},
        {".tile 0-0xFFFFFFFF\n", "k.S:1:9: error: tile number 4294967295 out of range (0..4294901759)"},
        {".tile -1\n", "k.S:1:7: error: tile number -1 out of range (0..4294901759)"},
        {".tile 0-3, 2\n", "k.S:1:12: error: tile 2 is named twice in the '.tile' list"},
        {".tile 0-2000000\n", "k.S:1:7: error: the '.tile' list names 2000001 tiles, more than the 1048576 a "
                              "list may name"},
        {".tile x\nx = 1\n", "k.S:1:7: error: '.tile' needs a value known at this point, but 'x' is not defined yet"},
        /* A section of a list is that list's. */
        {".tile 0-3\n.data\n.word 1\n.tile 2\n.data\n", "k.S:5:1: error: section .data on tile 2 was opened for "
         "tiles 0-3 (at k.S:2), not for tile 2: reopen it under the same '.tile' list"},
        {".tile 2\n.data\n.tile 0-3, 7\n.data\n", "k.S:4:1: error: section .data on tile 2 was opened for tile 2 "
         "(at k.S:2), not for tiles 0-3, 7: reopen it under the same '.tile' list"},
        {".tile 0-1\nnop\n.tile 0\nnop\n", "k.S:4:1: error: section .text on tile 0 was opened for tiles 0-1 "
         "(at k.S:2), not for tile 0: reopen it under the same '.tile' list"},
        /* One address, one content. */
        {".tile 1\n.section .x, \"aw\"\n.word 9\n.tile 0-1\n.section .y, \"aw\"\n.word 1\n",
         "k.S:5:1: error: section .y is placed at 0x80000 on tile 0 but would be at 0x80008 on tile 1 of its "
         "'.tile' list: give it an address (.section NAME, \"flags\", ADDR), the same on every tile of the list"},
        {".tile 0\n.section .w, \"aw\"\nw: .word 9\n.tile 1\n.section .w, \"aw\"\n.word 1\nw: .word 2\n"
         ".tile 0-1\n.text\nsetzi $m0, w\n",
         "k.S:10:1: error: this assembles to other bytes on tile 1 than on tile 0 (a symbol it names is elsewhere "
         "there), but section .text has one content on all of tiles 0-1"},
        {".tile 0-1\n.entry 0x4c000\n.tile 1\n.entry 0x4c000\n",
         "k.S:4:1: error: second '.entry' for tile 1 (the first is at k.S:2)"},
        {".tile 0-1\n.globl nothere\nnop\n", "k.S:2:8: error: '.globl' names 'nothere', which is not a label on "
                                            "tile 0"},
        {".tile 0-1\nx: nop\n.tile 1\n.data\nx: .word 1\n", "k.S:5:1: error: symbol 'x' is already defined at "
                                                           "k.S:2:1"},
        /* .symbol */
        {".data\n.symbol s, @object, 4, weak\n", "k.S:2:24: error: expected global or local, found 'weak'"},
        {".data\n.symbol s, @thing, 4\n", "k.S:2:12: error: expected @function, @object or @notype, found '@thing'"},
        {".data\n.symbol s, @object, 4\n.word s\n", "k.S:3:7: error: undefined symbol 's'"},
        /* Statements as put on tiles are bounded. */
        {".tile 0-1000000\n.rept 40\nnop\n.endr\n", "k.S:3:1: error: more than 32000000 statements and labels on "
         "tiles, counting what a '.tile' list puts on several tiles once per tile"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = as_err(cases[i].src);
        if (strcmp(got, cases[i].msg))
            fprintf(stderr, "\ncase %zu:\n  source: %s  got:  %s\n  want: %s\n", i, cases[i].src, got, cases[i].msg);
        CU_ASSERT_STRING_EQUAL(got, cases[i].msg);
    }
}

static void test_symbols_and_lines(void)
{
    ipu_exe *e = as(".text\n"
                    ".globl f\n"
                    ".type d, @function\n"
                    "f:  nop\n"
                    "    exitz $mzero\n"
                    ".size f, . - f\n"
                    ".data\n"
                    "o:  .word 1\n"
                    ".type o2, @notype\n"
                    "o2: .word 2\n"
                    ".text\n"
                    "d:  nop\n"
                    "1:  nop\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    const exe_symbol *f = sym(e, 0, "f");
    CU_ASSERT_TRUE(f->global);
    CU_ASSERT_EQUAL(f->size, 8);
    CU_ASSERT_EQUAL(f->kind, EXE_SYM_CODE);
    CU_ASSERT_FALSE(sym(e, 0, "o")->global);
    CU_ASSERT_EQUAL(sym(e, 0, "o")->kind, EXE_SYM_DATA);
    CU_ASSERT_EQUAL(sym(e, 0, "o2")->kind, EXE_SYM_OTHER);
    CU_ASSERT_EQUAL(sym(e, 0, "d")->kind, EXE_SYM_CODE);
    CU_ASSERT_EQUAL(e->n_symbols, 4);                /* numeric local labels are not exported */
    CU_ASSERT_EQUAL_FATAL(e->n_lines, 4);
    const char *file;
    uint32_t line;
    CU_ASSERT_TRUE(exe_line_at(e, 0, 0x4c004, &file, &line));
    CU_ASSERT_STRING_EQUAL(file, "k.S");
    CU_ASSERT_EQUAL(line, 5);
    CU_ASSERT_TRUE(exe_line_at(e, 0, 0x4c00c, &file, &line));
    CU_ASSERT_EQUAL(line, 13);
    CU_ASSERT_FALSE(e->relocatable);
    exe_free(e);
}

/* ---- labels and expressions ------------------------------------------------ */

static void test_expressions(void)
{
    ipu_exe *e = as(".data\n"
                    "start:\n"
                    ".word 1 + 2 * 3, (1 + 2) * 3, 7 / 2, -7 / 2, -7 % 3, 1 << 4, -16 >> 2\n"
                    ".word 0x0f & 0x3c, 0x0f | 0x30, 0x0f ^ 0xff, ~0, -(-5), !0, !7\n"
                    ".word 3 < 4, 4 <= 3, 5 > 4, 5 >= 6, 2 == 2, 2 != 2, 1 && 0, 1 || 0\n"
                    ".word 1 | 2 ^ 3 & 4, 0b1011, 'z', '\\n', fwd - start, . - start\n"
                    ".equ late, fwd + 4\n"
                    ".word late\n"
                    "fwd: .word 0\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    static const int32_t want[] = {
        7, 9, 3, -3, -1, 16, -4,
        0x0c, 0x3f, 0xf0, -1, 5, 1, 0,
        1, 0, 1, 0, 1, 0, 0, 1,
        1 | (2 ^ (3 & 4)), 11, 'z', '\n', 0x74, 0x58,
        0x80078,
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        uint32_t got = word_at(e, 0, 0x80000 + 4 * (uint32_t)i);
        if (got != (uint32_t)want[i])
            fprintf(stderr, "\nword %zu: got 0x%x, want 0x%x\n", i, got, (uint32_t)want[i]);
        CU_ASSERT_EQUAL(got, (uint32_t)want[i]);
    }
    exe_free(e);
}

static void test_local_labels_and_forward_refs(void)
{
    ipu_exe *e = as(".text\n"
                    "1:  brz $m0, 1f\n"      /* 0x4c000 -> 0x4c008 */
                    "    brz $m0, 1b\n"      /* 0x4c004 -> 0x4c000 */
                    "1:  brz $m0, 1b\n"      /* 0x4c008 -> 0x4c008 */
                    "    brz $m0, 1f\n"      /* 0x4c00c -> 0x4c010 */
                    "1:  bri later\n"        /* 0x4c010 -> 0x4c018 */
                    "    bri .\n"            /* 0x4c014 -> 0x4c014 */
                    "later: bri 2f + 4\n"    /* 0x4c018 -> 0x4c020 */
                    "2:  nop\n"
                    "    nop\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c000), enc(ISA_OP_BRZ, 0, 0x4c008));
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c004), enc(ISA_OP_BRZ, 0, 0x4c000));
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c008), enc(ISA_OP_BRZ, 0, 0x4c008));
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c00c), enc(ISA_OP_BRZ, 0, 0x4c010));
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c010), enc(ISA_OP_BRI, 0x4c018));
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c014), enc(ISA_OP_BRI, 0x4c014));
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c018), enc(ISA_OP_BRI, 0x4c020));
    exe_free(e);
}

static void test_set_and_assignment(void)
{
    /* A constant known where it is used is taken there: .set in a .rept
     * counts. */
    ipu_exe *e = as(".data\n"
                    "x = 10\n"
                    ".word x\n"
                    ".set x, x + 1\n"
                    ".word x\n"
                    ".set i, 0\n"
                    ".rept 3\n"
                    ".word i * 2\n"
                    ".set i, i + 1\n"
                    ".endr\n"
                    ".equiv y, 5\n"
                    ".word y\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    static const uint32_t want[] = {10, 11, 0, 2, 4, 5};
    for (size_t i = 0; i < 6; i++)
        CU_ASSERT_EQUAL(word_at(e, 0, 0x80000 + 4 * (uint32_t)i), want[i]);
    exe_free(e);
}

/* ---- instructions ------------------------------------------------------------ */

/* The assembler tells rows of one mnemonic apart by the kinds of the
 * operands written, where immediates and targets look alike: no two rows
 * may look alike that way. */
static char opnd_class(uint8_t kind)
{
    switch (kind) {
    case ISA_OPND_UIMM: case ISA_OPND_SIMM: case ISA_OPND_TARGET: return 'i';
    default: return (char)('A' + kind);
    }
}

static void test_rows_distinguishable(void)
{
    for (unsigned i = 0; i < ISA_OP_COUNT; i++)
        for (unsigned j = i + 1; j < ISA_OP_COUNT; j++) {
            const isa_desc *a = isa_get(i), *b = isa_get(j);
            if (strcmp(a->mnemonic, b->mnemonic) || a->n_operands != b->n_operands)
                continue;
            bool same = true;
            for (unsigned k = 0; k < a->n_operands; k++)
                same &= opnd_class(a->operands[k].kind) == opnd_class(b->operands[k].kind);
            if (same)
                fprintf(stderr, "\nrows %s and %s cannot be told apart in assembly\n", a->id, b->id);
            CU_ASSERT_FALSE(same);
        }
}

static void test_row_selection(void)
{
    ipu_exe *e = as(".text\n"
                    "add $m1, $m2, $m3\n"
                    "add $m1, $m2, -3\n"
                    "ld32 $m1, $m2, $m3, 4\n"
                    "ld32 $a1, $m2, $m3, 4\n"
                    "ld32 $a5, $m2, 8\n"            /* delta register left out */
                    "rpt $m4, 0\n"
                    "{ nop ; fnop }\n"
                    "nop\n"
                    "rpt 100, 0\n"
                    "{ nop ; fnop }\n"
                    "setzi $m0, 0xfffff\n"
                    "setzi $a0, 0x12345\n"
                    "mov $m1, $m2\n"
                    "mov $a1, $a2\n"
                    "mov $a2:3, $a4:5\n"
                    "ld32step $a1, $mzero, $m2+=, -1\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    uint32_t a = 0x4c000;
    CU_ASSERT_EQUAL(word_at(e, 0, a), enc(ISA_OP_ADD, 1, 2, 3));
    CU_ASSERT_EQUAL(word_at(e, 0, a + 4), enc(ISA_OP_ADD_I, 1, 2, -3));
    CU_ASSERT_EQUAL(word_at(e, 0, a + 8), enc(ISA_OP_LD32, 1, 2, 3, 4));
    CU_ASSERT_EQUAL(word_at(e, 0, a + 12), enc(ISA_OP_LD32_A, 1, 2, 3, 4));
    CU_ASSERT_EQUAL(word_at(e, 0, a + 16), enc(ISA_OP_LD32_A, 5, 2, 15, 8));
    CU_ASSERT_EQUAL(word_at(e, 0, a + 20), enc(ISA_OP_RPT_M, 4, 0));
    CU_ASSERT_EQUAL(word_at(e, 0, a + 36), enc(ISA_OP_RPT, 100, 0));
    CU_ASSERT_EQUAL(word_at(e, 0, a + 48), enc(ISA_OP_SETZI, 0, 0xfffff));
    CU_ASSERT_EQUAL(word_at(e, 0, a + 52), enc(ISA_OP_SETZI_A, 0, 0x12345));
    CU_ASSERT_EQUAL(word_at(e, 0, a + 56), enc(ISA_OP_MOV, 1, 2));
    CU_ASSERT_EQUAL(word_at(e, 0, a + 60), enc(ISA_OP_MOV_A, 1, 2));
    CU_ASSERT_EQUAL(word_at(e, 0, a + 64), enc(ISA_OP_MOV_AP, 2, 4));
    CU_ASSERT_EQUAL(word_at(e, 0, a + 68), enc(ISA_OP_LD32STEP_A, 1, 15, 2, -1));
    exe_free(e);
}

static void test_registers(void)
{
    ipu_exe *e = as(".text\n"
                    "add $mzero, $lr, $sp\n"
                    "add $bp, $fp, $m15\n"
                    "f32add $azero, $a15, $a0\n"
                    "f32v2add $azeros, $a14:15, $a0:1\n"
                    "get $m1, $FP_CTL\n"
                    "put $REPEAT_COUNT, $m1\n"
                    "ld64step $a0:1, $m0, $m12+=, 3\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c000), enc(ISA_OP_ADD, 15, 10, 11));
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c004), enc(ISA_OP_ADD, 8, 9, 15));
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c008), enc(ISA_OP_F32ADD, 15, 15, 0));
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c00c), enc(ISA_OP_F32V2ADD, 14, 14, 0));
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c010), enc(ISA_OP_GET, 1, ISA_CSR_FP_CTL));
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c014), enc(ISA_OP_PUT, ISA_CSR_REPEAT_COUNT, 1));
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c018), enc(ISA_OP_LD64STEP, 0, 0, 12, 3));
    exe_free(e);
}

static void test_bundles(void)
{
    /* The same bundle four ways: one line, one line aux first, poplibs'
     * two lines, and braces on lines of their own. */
    ipu_exe *e = as(".text\n"
                    "{ ld32 $a0, $m0, $m1, 2 ; f32add $a1, $a2, $a3 }\n"
                    "{ f32add $a1, $a2, $a3 ; ld32 $a0, $m0, $m1, 2 }\n"
                    "{ld32 $a0, $m0, $m1, 2\n"
                    " f32add $a1, $a2, $a3}\n"
                    "{\n"
                    "  ld32 $a0, $m0, $m1, 2\n"
                    "  f32add $a1, $a2, $a3\n"
                    "}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    uint32_t m = enc(ISA_OP_LD32_A, 0, 0, 1, 2), x = enc(ISA_OP_F32ADD, 1, 2, 3);
    for (uint32_t k = 0; k < 4; k++) {
        CU_ASSERT_EQUAL(word_at(e, 0, 0x4c000 + 8 * k), m | ISA_COISSUE_BIT);
        CU_ASSERT_EQUAL(word_at(e, 0, 0x4c004 + 8 * k), x);
    }
    CU_ASSERT_EQUAL(section(e, 0, ".text")->size, 32);
    exe_free(e);
}

static void test_rpt_body(void)
{
    /* poplibs computes the body size from labels. */
    ipu_exe *e = as(".text\n"
                    "nop\n"
                    "rpt $m1, (2f - 1f) / 8 - 1\n"
                    "1: { nop ; fnop }\n"
                    "   { nop ; fnop }\n"
                    "   { nop ; fnop }\n"
                    "2: exitz $mzero\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c004), enc(ISA_OP_RPT_M, 1, 2));
    exe_free(e);
    CU_ASSERT_STRING_EQUAL(as_err("nop\nrpt $m1, 0\n{ brz $m0, 0x4c000 ; fnop }\n"),
                           "k.S:3:3: error: 'rpt' body may not contain control instruction 'brz' (the rpt is at line 2)");
    CU_ASSERT_STRING_EQUAL(as_err("nop\nrpt $m1, 1\n{ nop ; fnop }\n"),
                           "k.S:2:1: error: 'rpt' body (2 bundles from 0x4c008) runs past the end of section .text at 0x4c010");
}

static void test_poplibs_style(void)
{
    ipu_exe *e = asm_assemble_file(ASM_DIR "poplibs_style.S", NULL, last_err, sizeof last_err);
    if (!e)
        fprintf(stderr, "%s\n", last_err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c004), enc(ISA_OP_LD32, 1, 7, 15, 1));
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c014), enc(ISA_OP_RPT_M, 1, 1));
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c018), enc(ISA_OP_ST64PACE, 14, 4, 15, 0) | ISA_COISSUE_BIT);
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c01c), enc(ISA_OP_FNOP));
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c020), enc(ISA_OP_ST64PACE, 14, 4, 2, 2) | ISA_COISSUE_BIT);
    CU_ASSERT_EQUAL(sym(e, 0, "zeroAndAccumulate")->size, 52);
    CU_ASSERT_TRUE(sym(e, 0, "zeroAndAccumulate")->global);
    CU_ASSERT_EQUAL(section(e, 0, ".text.supervisor")->addr, 0x4c038);
    CU_ASSERT_EQUAL(entry_of(e, 0), 0x4c038);
    CU_ASSERT_EQUAL(word_at(e, 0, 0x80000), sym(e, 0, "outBuf")->addr);
    exe_free(e);
}

static void test_context_modes(void)
{
    CU_ASSERT_STRING_EQUAL(as_err(".supervisor\nrunall $m0, $m1, $m2\nf32add $a0, $a1, $a2\n"),
                           "k.S:3:1: error: 'f32add' cannot be executed by the supervisor (.supervisor is in effect)");
    CU_ASSERT_STRING_EQUAL(as_err(".worker\nf32add $a0, $a1, $a2\nrunall $m0, $m1, $m2\n"),
                           "k.S:3:1: error: 'runall' cannot be executed by a worker (.worker is in effect)");
}

/* ---- sources -------------------------------------------------------------------- */

static void test_include(void)
{
    const char *dirs[] = { ASM_DIR "incdir" };
    asm_options opt = { .include_dirs = dirs, .n_include_dirs = 1 };
    ipu_exe *e = asm_assemble_file(ASM_DIR "include_main.S", &opt, last_err, sizeof last_err);
    if (!e)
        fprintf(stderr, "%s\n", last_err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c000), enc(ISA_OP_SETZI, 0, 0x123));
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c004), enc(ISA_OP_SETZI, 1, 0x456));
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c008), enc(ISA_OP_ADD_I, 2, 2, 9));
    /* Every source file is recorded for the line table. */
    CU_ASSERT_EQUAL(e->n_files, 4);
    exe_free(e);

    /* Without the include directory extra.inc is not found. */
    e = asm_assemble_file(ASM_DIR "include_main.S", NULL, last_err, sizeof last_err);
    CU_ASSERT_PTR_NULL(e);
    CU_ASSERT_STRING_EQUAL(last_err, ASM_DIR "include_main.S:3:9: error: cannot find include file 'extra.inc'");

    e = asm_assemble_file(ASM_DIR "cycle_a.S", NULL, last_err, sizeof last_err);
    CU_ASSERT_PTR_NULL(e);
    CU_ASSERT_STRING_EQUAL(last_err, ASM_DIR "cycle_b.S:2:9: error: include cycle: '" ASM_DIR "cycle_a.S' -> '"
                           ASM_DIR "cycle_b.S' -> '" ASM_DIR "cycle_a.S'");

    asm_options no = { .no_include = true };
    CU_ASSERT_PTR_NULL(asm_assemble_string(".include \"x.S\"\n", "k.S", &no, last_err, sizeof last_err));
    CU_ASSERT_STRING_EQUAL(last_err, "k.S:1:1: error: '.include' is disabled here");

    e = asm_assemble_file(ASM_DIR "no_such_file.S", NULL, last_err, sizeof last_err);
    CU_ASSERT_PTR_NULL(e);
    CU_ASSERT_STRING_EQUAL(last_err, ASM_DIR "no_such_file.S: error: cannot read: No such file or directory");
}

static void test_macros(void)
{
    ipu_exe *e = asm_assemble_file(ASM_DIR "macros.S", NULL, last_err, sizeof last_err);
    if (!e)
        fprintf(stderr, "%s\n", last_err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    static const struct { uint32_t addr; enum isa_op op; int32_t a, b, c; } want[] = {
        {0x4c000, ISA_OP_ADD_I, 0, 0, 1},
        {0x4c004, ISA_OP_ADD_I, 1, 0, -7},
        {0x4c008, ISA_OP_SETZI, 2, 3, 0},
        {0x4c00c, ISA_OP_BRNZDEC, 2, 0x4c00c, 0},      /* loop\@ is unique per expansion */
        {0x4c010, ISA_OP_SETZI, 3, 5, 0},
        {0x4c014, ISA_OP_BRNZDEC, 3, 0x4c014, 0},
        {0x4c018, ISA_OP_ADD_I, 4, 4, 2},              /* vararg keeps its commas */
        {0x4c01c, ISA_OP_ADD_I, 4, 4, 2},
        {0x4c020, ISA_OP_F32ADD, 0, 0, 1},             /* .ifc float */
        {0x4c024, ISA_OP_F16V2ADD, 0, 0, 1},           /* .else */
        {0x4c028, ISA_OP_ADD_I, 5, 5, 0},
        {0x4c02c, ISA_OP_ADD_I, 5, 5, 1},
        {0x4c030, ISA_OP_ADD_I, 5, 5, 2},
        {0x4c034, ISA_OP_NOP, 0, 0, 0},
        {0x4c040, ISA_OP_NOP, 0, 0, 0},                /* nested .rept: 4 nops */
        {0x4c044, ISA_OP_EXITZ, 15, 0, 0},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        CU_ASSERT_EQUAL(word_at(e, 0, want[i].addr), enc(want[i].op, want[i].a, want[i].b, want[i].c));
    CU_ASSERT_EQUAL(section(e, 0, ".text")->size, 0x48);
    exe_free(e);

    /* .exitm leaves the macro (and the conditional it is in). */
    e = as(".macro M n\n"
           ".if \\n == 0\n"
           ".exitm\n"
           ".endif\n"
           "setzi $m0, \\n\n"
           ".endm\n"
           "M 0\n"
           "M 5\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_EQUAL(section(e, 0, ".text")->size, 4);
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c000), enc(ISA_OP_SETZI, 0, 5));
    exe_free(e);

    /* A macro inside a bundle, including on the line that closes it. */
    e = as(".macro AUX\nf32add $a0, $a1, $a2\n.endm\n"
           "{ ld32 $a3, $m0, $m1, 0 ; AUX }\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c000), enc(ISA_OP_LD32_A, 3, 0, 1, 0) | ISA_COISSUE_BIT);
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c004), enc(ISA_OP_F32ADD, 0, 1, 2));
    exe_free(e);
}

static void test_comments_and_statements(void)
{
    ipu_exe *e = as("nop ; nop # two statements\n"
                    "/* a block\n"
                    "   comment */ exitz $mzero // trailing\n"
                    ".data\n"
                    ".ascii \"a;b#c//d\" ; .byte ';'\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_EQUAL(section(e, 0, ".text")->size, 12);
    CU_ASSERT_EQUAL(word_at(e, 0, 0x4c008), enc(ISA_OP_EXITZ, 15));
    const exe_section *d = section(e, 0, ".data");
    CU_ASSERT_EQUAL_FATAL(d->size, 9);
    CU_ASSERT_EQUAL(memcmp(d->bytes, "a;b#c//d;", 9), 0);
    exe_free(e);
}

/* ---- mistakes ---------------------------------------------------------------------- */

static void test_bad_inputs(void)
{
    static const struct { const char *src, *msg; } cases[] = {
        {"  f32addd $a0, $a1, $a2\n",
         "k.S:1:3: error: unknown mnemonic 'f32addd' (did you mean 'f32add'?)"},
        {"f32v2add $a0:1, $a1:2, $a2:3\n",
         "k.S:1:17: error: expected ARF register pair ($aN:N+1 with N even), found '$a1:2'"},
        {"add $m0, $m1, 70000\n",
         "k.S:1:15: error: immediate 70000 out of range for add: signed 16-bit (-32768..32767)"},
        {"nop\nbri loop\n",
         "k.S:2:5: error: undefined symbol 'loop'"},
        {"nop\n{ nop ; fnop }\n",
         "k.S:2:1: error: bundle at 0x4c004 is not 8-byte aligned"},
        {"{ nop ; add $m0, $m0, $m0 }\n",
         "k.S:1:1: error: bundle pairs two main-pipeline instructions ('nop' and 'add'); it needs one main and one aux instruction"},
        {"{ nop }\n",
         "k.S:1:1: error: a bundle needs two instructions, one main and one aux; found 1"},
        {"add $m0, $m1\n",
         "k.S:1:1: error: 'add' takes 3 operands, found 2"},
        {"add $m0, $m1, $a2\n",
         "k.S:1:15: error: expected MRF register ($m0..$m15) or signed 16-bit immediate, found '$a2'"},
        {"setzi $m0, -1\n",
         "k.S:1:12: error: immediate -1 out of range for setzi: unsigned 20-bit (0..1048575)"},
        {"get $m0, $FP_CTLL\n",
         "k.S:1:10: error: unknown register '$FP_CTLL' (did you mean '$FP_CTL'?)"},
        {"mov $m0, $m16\n",
         "k.S:1:10: error: no register '$m16': MRF registers are $m0..$m15"},
        {"ld2xst64pace $a2:5, $a4:5, $m0:1+=, $m2, 0\n",
         "k.S:1:14: error: expected ARF register quad ($aN:N+3 with N a multiple of 4), found '$a2:5'"},
        {"tapack $m1:2, $m0, $m1, $m2\n",
         "k.S:1:8: error: expected MRF register pair ($mN:N+1 with N even), found '$m1:2'"},
        {"  .wrod 3\n",
         "k.S:1:3: error: unknown directive '.wrod' (did you mean '.word'?)"},
        {".data\n.word 1 2\n",
         "k.S:2:9: error: expected end of statement after a value, found '2'"},
        {".data\n.word 0x100000000\n",
         "k.S:2:7: error: value 4294967296 does not fit in 32 bits (-2147483648..4294967295)"},
        {".data\nnop\n",
         "k.S:2:1: error: instruction 'nop' in section .data, which is not executable (use .text or a section with flag \"x\")"},
        {".bss\n.word 3\n",
         "k.S:2:1: error: '.word' puts bytes in section .bss, which is NOBITS (only labels, .space, .align and .org there)"},
        {"brz $m0, 1f\n",
         "k.S:1:10: error: undefined local label '1f': no '1:' follows"},
        {"brz $m0, 1b\n",
         "k.S:1:10: error: local label '1b' has no earlier definition '1:'"},
        {".space x\nx: nop\n",
         "k.S:1:8: error: '.space' needs a value known at this point, but 'x' is not defined yet"},
        {"x: nop\nx: nop\n",
         "k.S:2:1: error: symbol 'x' is already defined at k.S:1:1"},
        {".data\n.word (1 + 2\n",
         "k.S:2:13: error: expected ')' to close the '(' at column 7, found end of line"},
        {".data\n.word 1 / (2 - 2)\n",
         "k.S:2:9: error: division by zero"},
        {".equ a, b\n.equ b, a\n.data\n.word a\n",
         "k.S:2:9: error: symbol 'a' is defined in terms of itself"},
        {".section .a, \"ax\", 0x4c000\n.space 16\n.section .b, \"ax\", 0x4c008\n.space 16\n",
         "k.S:3:20: error: section .b (0x4c008..0x4c017) overlaps section .a (0x4c000..0x4c00f) on tile 0"},
        {".section .c, \"ax\", 0x80000\n",
         "k.S:1:20: error: code section .c at 0x80000 is outside region 0 (0x4c000..0x7ffff), the only executable region"},
        {".org 0x4c000\nnop\n.org 0x4c000\n",
         "k.S:3:6: error: '.org' 0x4c000 is below the current address 0x4c004"},
        {".section .t, \"axq\"\n",
         "k.S:1:17: error: unknown section flag 'q' (the flags are a, w and x)"},
        {".rept 3\nnop\n",
         "k.S:1:1: error: '.rept' without '.endr'"},
        {".macro m\nnop\n",
         "k.S:1:1: error: '.macro' without '.endm'"},
        {".if 1\nnop\n",
         "k.S:1:1: error: '.if' without '.endif'"},
        {".endif\n",
         "k.S:1:1: error: '.endif' without '.if'"},
        {".endm\n",
         "k.S:1:1: error: '.endm' without '.macro'"},
        {"}\n",
         "k.S:1:1: error: '}' without '{'"},
        {"{\nnop\n",
         "k.S:1:1: error: bundle '{' is not closed with '}'"},
        {"{ y: nop ; fnop }\n",
         "k.S:1:3: error: label 'y' inside a bundle (the bundle opened at line 1)"},
        {"{ nop\nx: fnop }\n",
         "k.S:2:1: error: label 'x' inside a bundle (the bundle opened at line 1)"},
        {"{ nop ; fnop ; nop }\n",
         "k.S:1:16: error: a bundle holds two instructions; this is a third (the bundle opened at line 1)"},
        {".macro m a\nadd $m0, $m0, \\a\n.endm\nm 70000\n",
         "k.S:2:15: error: immediate 70000 out of range for add: signed 16-bit (-32768..32767) (in macro 'm' expanded at k.S:4:1)"},
        {".macro r\nr\n.endm\nr\n",
         "k.S:2:1: error: macro 'r' expanded more than 64 levels deep (does it invoke itself?) (in macro 'r' expanded at k.S:2:1)"},
        {".macro m a, b\n.endm\nm 1, 2, 3\n",
         "k.S:3:1: error: macro 'm' takes 2 arguments, given 3"},
        {".macro m a:req\n.endm\nm\n",
         "k.S:3:1: error: macro 'm' needs a value for its argument 'a'"},
        {".entry 0x80000\n",
         "k.S:1:8: error: entry 0x80000 is not a 4-byte aligned address in region 0 (0x4c000..0x7ffff)"},
        {"st64pace $a0:1, $m0:1+=, $m1, 4\n",
         "k.S:1:31: error: immediate 4 out of range for st64pace: unsigned 2-bit (0..3)"},
        {"bri 0x80000\n",
         "k.S:1:5: error: branch target 0x80000 is outside region 0 (0x4c000..0x7ffff), the only executable region"},
        {"bri 0x4c002\n",
         "k.S:1:5: error: branch target 0x4c002 is not 4-byte aligned"},
        {".data\n.byte 1\n.text\n.byte 1\nnop\n",
         "k.S:5:1: error: instruction at 0x4c001 is not 4-byte aligned"},
        {"ld32 $m0, $m1\n",
         "k.S:1:1: error: 'ld32' takes 3 or 4 operands, found 2"},
        {"f32add $a0+=, $a1, $a2\n",
         "k.S:1:8: error: '$a0+=': only MRF registers and pairs can be post-incremented"},
        {"add $m0, $m1, $m2 $m3\n",
         "k.S:1:19: error: expected ',' or end of statement after operand 3 of 'add', found '$m3'"},
        {".data\n.word 1 << 64\n",
         "k.S:2:9: error: shift count 64 out of range (0..63)"},
        {".error \"stop here\"\n",
         "k.S:1:1: error: stop here"},
        {".tile 1\n.entry 0x4c000\n.entry 0x4c004\n",
         "k.S:3:1: error: second '.entry' for tile 1 (the first is at k.S:2)"},
        {".text\n.section .text, \"aw\"\n",
         "k.S:2:1: error: section .text reopened with flags \"aw\"; it has \"ax\" (opened at k.S:1)"},
        {".data\n.f16 abc\n",
         "k.S:2:6: error: expected a floating-point number, found 'abc'"},
        {".data\n__supervisor: .word 0\n",
         "k.S:2:1: error: '__supervisor', the supervisor entry of tile 0, is in section .data, which is not executable"},
        {".globl nowhere\nnop\n",
         "k.S:1:8: error: '.globl' names 'nowhere', which is not a label on tile 0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = as_err(cases[i].src);
        if (strcmp(got, cases[i].msg))
            fprintf(stderr, "\ncase %zu:\n  source: %s  got:  %s\n  want: %s\n", i, cases[i].src, got, cases[i].msg);
        CU_ASSERT_STRING_EQUAL(got, cases[i].msg);
    }
}

static void test_several_errors(void)
{
    /* Errors are collected (up to 20), first one first. */
    ipu_exe *e = asm_assemble_string("foo\nbar\nnop\nbaz\n", "k.S", NULL, last_err, sizeof last_err);
    CU_ASSERT_PTR_NULL(e);
    CU_ASSERT_STRING_EQUAL(last_err, "k.S:1:1: error: unknown mnemonic 'foo'\n"
                                     "k.S:2:1: error: unknown mnemonic 'bar' (did you mean 'br'?)\n"
                                     "k.S:4:1: error: unknown mnemonic 'baz' (did you mean 'brz'?)");
    char many[2000] = "";
    for (int i = 0; i < 30; i++)
        strcat(many, "xx\n");
    CU_ASSERT_PTR_NULL(asm_assemble_string(many, "k.S", NULL, last_err, sizeof last_err));
    size_t lines = 1;
    for (const char *p = last_err; *p; p++)
        lines += *p == '\n';
    CU_ASSERT_EQUAL(lines, 21);
    CU_ASSERT_PTR_NOT_NULL(strstr(last_err, "too many errors; stopping"));
    /* A small buffer gets a truncated, terminated message. */
    char small[16];
    CU_ASSERT_PTR_NULL(asm_assemble_string("foo\n", "k.S", NULL, small, sizeof small));
    CU_ASSERT_EQUAL(strlen(small), 15);
}

/* ---- hostile input ------------------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)rng_state;
}

static void test_runaway_input(void)
{
    /* Limits end these with a message, quickly. */
    static const struct { const char *src, *msg; } cases[] = {
        {".rept 1000000\n.rept 1000000\n.space 1000\n.endr\n.endr\n", "grows past the end of tile memory"},
        {".rept 1000000\n.rept 1000000\n.set x, 1\n.endr\n.endr\n",
         "k.S:3:1: error: more than 20000 statements after expansion (a runaway .rept or macro?)"},
        {".macro m a\nm \\a\\a\\a\\a\n.endm\nm xxxxxxxxxxxxxxxx\n", "longer than"},
        {".data\n.word ((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((1\n",
         "nested more than 200 deep"},
    };
    asm_options opt = { .max_statements = 20000 };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CU_ASSERT_PTR_NULL(asm_assemble_string(cases[i].src, "k.S", &opt, last_err, sizeof last_err));
        if (!strstr(last_err, cases[i].msg))
            fprintf(stderr, "\nrunaway case %zu: %s\n", i, last_err);
        CU_ASSERT_PTR_NOT_NULL(strstr(last_err, cases[i].msg));
    }
    /* A long chain of additions: evaluation depth is bounded, not the stack. */
    size_t n = 20000;
    char *chain = malloc(n * 2 + 32);
    size_t len = (size_t)sprintf(chain, ".data\n.word 1");
    for (size_t i = 0; i < n; i++)
        len += (size_t)sprintf(chain + len, "+1");
    strcpy(chain + len, "\n");
    CU_ASSERT_PTR_NULL(asm_assemble_string(chain, "k.S", NULL, last_err, sizeof last_err));
    CU_ASSERT_PTR_NOT_NULL(strstr(last_err, "too complex"));
    free(chain);
}

static void test_random_input(void)
{
    /* Random bytes and mutations of valid source never crash, and every
     * failure is reported as file:line:col: error: ... */
    static const char *const seeds[] = {
        ".text\n{ ld2xst64pace $a0:3, $a4:5, $m0:1+=, $m2, 0b000000 ; f16v4sisoamp $a4:5, $a0:1, $a2:3, 0 }\n",
        ".macro m a=1\nadd $m0, $m0, \\a\n.endm\nm\nm 2\n.rept 2\nnop\n.endr\n",
        ".data\nx: .word 1, x, (2f - 1f)\n1: .byte 3\n2: .asciz \"s\"\n.if 1\n.float 1.5\n.else\n.f16 2\n.endif\n",
        ".section .a, \"ax\", 0x4c100\n.org 0x4c200\nrpt $m1, (2f-1f)/8-1\n1: {nop;fnop}\n2: brnzdec $m1, 1b\n",
        ".tile 0-3, 5\n.text\nx: nop\n.symbol x, @object, 4\n.tile 7, 2-(4-1)\n.data\n.word x\n.entry x\n",
    };
    static const char alphabet[] = "{}();:,.$+-*/%<>=!&|^~'\"\\#@ \n\tmax0123456789_";
    char buf[512], err[512];
    for (int iter = 0; iter < 3000; iter++) {
        size_t n;
        if (iter % 3 == 0) {
            n = rnd() % (sizeof buf - 1);
            for (size_t i = 0; i < n; i++)
                buf[i] = (char)(iter % 2 ? alphabet[rnd() % (sizeof alphabet - 1)] : (char)(rnd() % 255 + 1));
        } else {
            const char *s = seeds[rnd() % (sizeof seeds / sizeof seeds[0])];
            n = strlen(s);
            memcpy(buf, s, n);
            for (int k = 0; k < 1 + (int)(rnd() % 4); k++) {
                size_t at = rnd() % n;
                switch (rnd() % 3) {
                case 0: buf[at] = alphabet[rnd() % (sizeof alphabet - 1)]; break;
                case 1: if (n < sizeof buf - 2) { memmove(buf + at + 1, buf + at, n - at); buf[at] = alphabet[rnd() % (sizeof alphabet - 1)]; n++; } break;
                default: memmove(buf + at, buf + at + 1, n - at - 1); n--; break;
                }
            }
        }
        buf[n] = 0;
        asm_options opt = { .no_include = true };
        ipu_exe *e = asm_assemble_string(buf, "f.S", &opt, err, sizeof err);
        if (e)
            exe_free(e);
        else if (strncmp(err, "f.S:", 4) || !strstr(err, ": error: ")) {
            fprintf(stderr, "\nbad message for input %d: %s\n", iter, err);
            CU_FAIL("error message not in file:line:col form");
        }
    }
}

void test_register(void)
{
    ADD_SUITE("asm_directives",
              {"data directives", test_data_directives},
              {"empty strings", test_empty_strings},
              {"align and space", test_align_and_space},
              {"default placement", test_default_placement},
              {"explicit placement and .org", test_explicit_placement},
              {"tiles and entries", test_tiles_and_entries},
              {".tile lists: as if written once per tile", test_tile_lists},
              {".tile lists: exact messages", test_tile_list_errors},
              {"symbols and line records", test_symbols_and_lines});
    ADD_SUITE("asm_expressions",
              {"operators and precedence", test_expressions},
              {"local labels and forward references", test_local_labels_and_forward_refs},
              {".set, .equiv and NAME = EXPR", test_set_and_assignment});
    ADD_SUITE("asm_instructions",
              {"rows of one mnemonic can be told apart", test_rows_distinguishable},
              {"row selection by operand kinds", test_row_selection},
              {"registers, aliases, CSRs", test_registers},
              {"bundles, both spellings", test_bundles},
              {"rpt bodies", test_rpt_body},
              {"a source in poplibs' idiom", test_poplibs_style},
              {".worker and .supervisor", test_context_modes});
    ADD_SUITE("asm_sources",
              {".include, -I and cycles", test_include},
              {"macros, .rept, conditionals", test_macros},
              {"comments and statement separators", test_comments_and_statements});
    ADD_SUITE("asm_errors",
              {"bad inputs: exact messages", test_bad_inputs},
              {"several errors", test_several_errors},
              {"runaway input is stopped", test_runaway_input},
              {"random input never crashes", test_random_input});
}
