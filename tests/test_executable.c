/*
 * test_executable.c — the ELF executable: builders, write/read round trip,
 * lookups, every kind of bad input with its own message, atomic writes.
 */
#include <CUnit/CUnit.h>
#include <dirent.h>
#include <elf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "isa/elf/executable.h"
#include "isa/exchange_port.h"

#define XCH_HOST_IN_WORD(n) (XCH_HOST | (uint32_t)(n))
#include "sim/base/fileio.h"
#include "sim/program/machine.h"
#include "sim/program/model_record.h"
#include "sim/engine/program_io.h"
#include "test_util.h"

static char tmpdir[64];

static const char *tmp_path(const char *leaf)
{
    static char buf[4][sizeof tmpdir + 256];
    static unsigned k;
    char *p = buf[k++ % 4];
    snprintf(p, sizeof buf[0], "%s/%.200s", tmpdir, leaf);
    return p;
}

static int suite_init(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ipusim_test_exe_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : 1;
}

static int suite_clean(void)
{
    DIR *d = opendir(tmpdir);
    if (d) {
        struct dirent *de;
        while ((de = readdir(d)))
            if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
                unlink(tmp_path(de->d_name));
        closedir(d);
    }
    rmdir(tmpdir);
    return 0;
}

/* Files in tmpdir (temporaries left behind would show up here). */
static unsigned count_files(void)
{
    unsigned n = 0;
    DIR *d = opendir(tmpdir);
    struct dirent *de;
    while (d && (de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            n++;
    if (d)
        closedir(d);
    return n;
}

static const uint8_t code0[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
static const uint8_t data0[8] = {0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF, 0x11, 0x22};
static const uint8_t bsp_bytes[5] = {'B', 'S', 'P', 0, 7};

/* A small program on tiles 0, 1 and 1471. */
static ipu_exe *sample(void)
{
    char err[256];
    ipu_exe *e = exe_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_TRUE_FATAL(exe_add_section(e, 0, ".text", 0x4C000, code0, 16, EXE_SEC_EXEC, err, sizeof err));
    CU_ASSERT_TRUE_FATAL(exe_add_section(e, 0, ".data", 0x80000, data0, 8, EXE_SEC_WRITE, err, sizeof err));
    CU_ASSERT_TRUE_FATAL(exe_add_section(e, 1, ".bss", 0x90000, NULL, 4096, EXE_SEC_WRITE | EXE_SEC_NOBITS, err, sizeof err));
    CU_ASSERT_TRUE_FATAL(exe_add_section(e, 1471, ".text", 0x4C100, code0, 8, EXE_SEC_EXEC, err, sizeof err));
    CU_ASSERT_TRUE_FATAL(exe_add_symbol(e, 0, "main", 0x4C000, 16, EXE_SYM_CODE, true));
    CU_ASSERT_TRUE_FATAL(exe_add_symbol(e, 0, "loop", 0x4C008, 0, EXE_SYM_CODE, false));
    CU_ASSERT_TRUE_FATAL(exe_add_symbol(e, 0, "text_end", 0x4C010, 0, EXE_SYM_OTHER, false));
    CU_ASSERT_TRUE_FATAL(exe_add_symbol(e, 0, "weights", 0x80000, 8, EXE_SYM_DATA, true));
    CU_ASSERT_TRUE_FATAL(exe_add_symbol(e, 1, "scratch", 0x90010, 64, EXE_SYM_DATA, false));
    CU_ASSERT_TRUE_FATAL(exe_add_symbol(e, 1471, "main", 0x4C100, 8, EXE_SYM_CODE, false));
    uint32_t f0 = exe_add_file(e, "kernels/amp.S");
    uint32_t f1 = exe_add_file(e, "kernels/relu.S");
    CU_ASSERT_EQUAL(f0, 0);
    CU_ASSERT_EQUAL(f1, 1);
    CU_ASSERT_TRUE(exe_add_line(e, 0, 0x4C000, f0, 10));
    CU_ASSERT_TRUE(exe_add_line(e, 0, 0x4C008, f0, 12));
    CU_ASSERT_TRUE(exe_add_line(e, 1471, 0x4C100, f1, 3));
    CU_ASSERT_TRUE(exe_set_entry(e, 0, 0x4C000));
    CU_ASSERT_TRUE(exe_set_entry(e, 1471, 0x4C100));
    CU_ASSERT_TRUE(exe_set_blob(&e->bsp, bsp_bytes, sizeof bsp_bytes));
    CU_ASSERT_TRUE(exe_set_blob(&e->tensors, "tensormap", 9));
    return e;
}

/* A written sample as bytes. */
static uint8_t *sample_image(size_t *size)
{
    char err[256];
    ipu_exe *e = sample();
    const char *p = tmp_path("img.elf");
    CU_ASSERT_TRUE_FATAL(exe_write(e, p, err, sizeof err));
    exe_free(e);
    char *data;
    CU_ASSERT_TRUE_FATAL(read_whole_file(p, &data, size, err, sizeof err));
    unlink(p);
    return (uint8_t *)data;
}

/* Raw access to a written image, to damage it in precise ways. */
static Elf64_Shdr *shdr(uint8_t *img, size_t i)
{
    Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
    return (Elf64_Shdr *)(img + eh->e_shoff) + i;
}

static size_t find_scn(uint8_t *img, const char *name)
{
    Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
    const char *names = (const char *)img + shdr(img, eh->e_shstrndx)->sh_offset;
    for (size_t i = 1; i < eh->e_shnum; i++)
        if (strcmp(names + shdr(img, i)->sh_name, name) == 0)
            return i;
    CU_FAIL_FATAL("section not found");
    return 0;
}

/* Reading img must fail with exactly msg. */
static void expect_error(const uint8_t *img, size_t size, const char *msg)
{
    char err[512] = "";
    ipu_exe *e = exe_read_memory(img, size, "t.elf", err, sizeof err);
    CU_ASSERT_PTR_NULL(e);
    exe_free(e);
    CU_ASSERT_STRING_EQUAL(err, msg);
    if (strcmp(err, msg) != 0)
        fprintf(stderr, "\n  got:      %s\n  expected: %s\n", err, msg);
}

/* ------------------------------------------------------------ builders */

static void test_builders(void)
{
    char err[256];
    ipu_exe *e = exe_new();
    CU_ASSERT_TRUE(exe_add_section(e, 2, ".b", 0x50000, NULL, 16, 0, err, sizeof err));
    CU_ASSERT_TRUE(exe_add_section(e, 2, ".a", 0x4C000, NULL, 16, 0, err, sizeof err));
    CU_ASSERT_TRUE(exe_add_section(e, 1, ".c", 0x60000, NULL, 16, 0, err, sizeof err));
    /* Kept sorted by (tile, address). */
    CU_ASSERT_STRING_EQUAL(e->sections[0].name, ".c");
    CU_ASSERT_STRING_EQUAL(e->sections[1].name, ".a");
    CU_ASSERT_STRING_EQUAL(e->sections[2].name, ".b");
    /* Copied, zero-filled when no bytes are given. */
    CU_ASSERT_EQUAL(e->sections[1].bytes[15], 0);
    /* Overlap on one tile, but not across tiles. */
    CU_ASSERT_FALSE(exe_add_section(e, 2, ".x", 0x4C008, NULL, 16, 0, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "section .x@2 [0x4c008, 0x4c018) overlaps section .a@2 [0x4c000, 0x4c010)");
    CU_ASSERT_FALSE(exe_add_section(e, 2, ".y", 0x4FFF0, NULL, 0x20, 0, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "section .y@2 [0x4fff0, 0x50010) overlaps section .b@2 [0x50000, 0x50010)");
    CU_ASSERT_TRUE(exe_add_section(e, 3, ".x", 0x4C008, NULL, 16, 0, err, sizeof err));
    CU_ASSERT_TRUE(exe_add_section(e, 2, ".gap", 0x4C010, NULL, 0x3FF0, 0, err, sizeof err));
    CU_ASSERT_EQUAL(e->n_sections, 5);
    /* Placement. */
    CU_ASSERT_FALSE(exe_add_section(e, 0, ".hi", 0xE7FF0, NULL, 0x20, 0, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "section .hi@0 [0xe7ff0, 0xe8010) is outside tile memory [0x4c000, 0xe8000)");
    CU_ASSERT_FALSE(exe_add_section(e, 0, ".lo", 0x40000, NULL, 4, 0, err, sizeof err));
    CU_ASSERT_FALSE(exe_add_section(e, 0, ".text", 0x80000, NULL, 4, EXE_SEC_EXEC, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "section .text@0 [0x80000, 0x80004) is code outside the executable region [0x4c000, 0x80000)");
    CU_ASSERT_EQUAL(e->n_sections, 5);
    /* Files once each; lines need a known file. */
    CU_ASSERT_EQUAL(exe_add_file(e, "a.S"), 0);
    CU_ASSERT_EQUAL(exe_add_file(e, "b.S"), 1);
    CU_ASSERT_EQUAL(exe_add_file(e, "a.S"), 0);
    CU_ASSERT_EQUAL(e->n_files, 2);
    CU_ASSERT_FALSE(exe_add_line(e, 0, 0x4C000, 2, 1));
    CU_ASSERT_TRUE(exe_add_line(e, 0, 0x4C000, 1, 1));
    /* Entries replace. */
    CU_ASSERT_TRUE(exe_set_entry(e, 5, 0x4C000));
    CU_ASSERT_TRUE(exe_set_entry(e, 5, 0x4C040));
    CU_ASSERT_EQUAL(e->n_tiles, 1);
    CU_ASSERT_EQUAL(exe_tile(e, 5)->supervisor_entry, 0x4C040);
    CU_ASSERT_PTR_NULL(exe_tile(e, 6));
    /* Blobs copy, and an empty one frees. */
    char blob[4] = "xyz";
    CU_ASSERT_TRUE(exe_set_blob(&e->bsp, blob, 4));
    blob[0] = 'Q';
    CU_ASSERT_EQUAL(e->bsp.bytes[0], 'x');
    CU_ASSERT_TRUE(exe_set_blob(&e->bsp, NULL, 0));
    CU_ASSERT_PTR_NULL(e->bsp.bytes);
    CU_ASSERT_EQUAL(e->bsp.size, 0);
    /* Many symbols: growth keeps earlier ones. */
    for (unsigned i = 0; i < 1000; i++) {
        char name[16];
        snprintf(name, sizeof name, "s%u", i);
        CU_ASSERT_TRUE_FATAL(exe_add_symbol(e, 2, name, 0x4C000 + i, 0, EXE_SYM_OTHER, false));
    }
    CU_ASSERT_STRING_EQUAL(e->symbols[0].name, "s0");
    CU_ASSERT_STRING_EQUAL(e->symbols[999].name, "s999");
    exe_free(e);
    exe_free(NULL);
}

/* ------------------------------------------------------------ round trip */

static const exe_symbol *sym_on(const ipu_exe *e, const char *name, uint32_t tile)
{
    for (size_t i = 0; i < e->n_symbols; i++)
        if (!strcmp(e->symbols[i].name, name) && e->symbols[i].tile == tile)
            return &e->symbols[i];
    return NULL;
}

static void test_roundtrip(void)
{
    char err[256];
    ipu_exe *e = sample();
    const char *p = tmp_path("prog.elf");
    CU_ASSERT_TRUE_FATAL(exe_write(e, p, err, sizeof err));
    exe_free(e);
    ipu_exe *r = exe_read(p, err, sizeof err);
    if (!r)
        fprintf(stderr, "\n%s\n", err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_FALSE(r->relocatable);

    CU_ASSERT_EQUAL_FATAL(r->n_sections, 4);
    const exe_section *s = r->sections;
    CU_ASSERT_STRING_EQUAL(s[0].name, ".text");
    CU_ASSERT_EQUAL(s[0].tile, 0);
    CU_ASSERT_EQUAL(s[0].addr, 0x4C000);
    CU_ASSERT_EQUAL(s[0].size, 16);
    CU_ASSERT_EQUAL(s[0].flags, EXE_SEC_EXEC);
    CU_ASSERT_EQUAL(memcmp(s[0].bytes, code0, 16), 0);
    CU_ASSERT_STRING_EQUAL(s[1].name, ".data");
    CU_ASSERT_EQUAL(s[1].addr, 0x80000);
    CU_ASSERT_EQUAL(s[1].flags, EXE_SEC_WRITE);
    CU_ASSERT_EQUAL(memcmp(s[1].bytes, data0, 8), 0);
    CU_ASSERT_STRING_EQUAL(s[2].name, ".bss");
    CU_ASSERT_EQUAL(s[2].tile, 1);
    CU_ASSERT_EQUAL(s[2].size, 4096);
    CU_ASSERT_EQUAL(s[2].flags, EXE_SEC_WRITE | EXE_SEC_NOBITS);
    CU_ASSERT_PTR_NULL(s[2].bytes);
    CU_ASSERT_EQUAL(s[3].tile, 1471);
    CU_ASSERT_EQUAL(s[3].addr, 0x4C100);

    CU_ASSERT_EQUAL(r->n_symbols, 6);
    const exe_symbol *y = sym_on(r, "main", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    CU_ASSERT_EQUAL(y->addr, 0x4C000);
    CU_ASSERT_EQUAL(y->size, 16);
    CU_ASSERT_EQUAL(y->kind, EXE_SYM_CODE);
    CU_ASSERT_TRUE(y->global);
    y = sym_on(r, "loop", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    CU_ASSERT_EQUAL(y->addr, 0x4C008);
    CU_ASSERT_FALSE(y->global);
    y = sym_on(r, "text_end", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    CU_ASSERT_EQUAL(y->addr, 0x4C010);
    CU_ASSERT_EQUAL(y->kind, EXE_SYM_OTHER);
    y = sym_on(r, "weights", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    CU_ASSERT_EQUAL(y->kind, EXE_SYM_DATA);
    y = sym_on(r, "scratch", 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    CU_ASSERT_EQUAL(y->size, 64);
    CU_ASSERT_PTR_NOT_NULL(sym_on(r, "main", 1471));

    CU_ASSERT_EQUAL_FATAL(r->n_files, 2);
    CU_ASSERT_STRING_EQUAL(r->files[0], "kernels/amp.S");
    CU_ASSERT_STRING_EQUAL(r->files[1], "kernels/relu.S");
    CU_ASSERT_EQUAL_FATAL(r->n_lines, 3);
    CU_ASSERT_EQUAL(r->lines[1].tile, 0);
    CU_ASSERT_EQUAL(r->lines[1].addr, 0x4C008);
    CU_ASSERT_EQUAL(r->lines[1].line, 12);
    CU_ASSERT_EQUAL(r->lines[2].file, 1);
    CU_ASSERT_EQUAL(r->lines[2].tile, 1471);

    CU_ASSERT_EQUAL_FATAL(r->n_tiles, 2);
    CU_ASSERT_EQUAL(exe_tile(r, 0)->supervisor_entry, 0x4C000);
    CU_ASSERT_EQUAL(exe_tile(r, 1471)->supervisor_entry, 0x4C100);
    CU_ASSERT_EQUAL(r->bsp.size, 5);
    CU_ASSERT_EQUAL(memcmp(r->bsp.bytes, bsp_bytes, 5), 0);
    CU_ASSERT_EQUAL(r->tensors.size, 9);
    CU_ASSERT_EQUAL(memcmp(r->tensors.bytes, "tensormap", 9), 0);

    /* What was read can be extended and written again. */
    CU_ASSERT_TRUE(exe_add_section(r, 0, ".more", 0x4C010, code0, 8, EXE_SEC_EXEC, err, sizeof err));
    CU_ASSERT_TRUE(exe_add_symbol(r, 0, "more", 0x4C010, 8, EXE_SYM_CODE, true));
    CU_ASSERT_TRUE(exe_write(r, p, err, sizeof err));
    exe_free(r);
    r = exe_read(p, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(r->n_sections, 5);
    CU_ASSERT_EQUAL(r->n_symbols, 7);
    exe_free(r);
}

static void test_roundtrip_object_and_empty(void)
{
    char err[256];
    ipu_exe *e = exe_new();
    e->relocatable = true;
    CU_ASSERT_TRUE(exe_add_section(e, 7, ".text", 0x4C000, code0, 4, EXE_SEC_EXEC, err, sizeof err));
    const char *p = tmp_path("obj.o");
    CU_ASSERT_TRUE_FATAL(exe_write(e, p, err, sizeof err));
    exe_free(e);
    ipu_exe *r = exe_read(p, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_TRUE(r->relocatable);
    CU_ASSERT_EQUAL(r->n_sections, 1);
    CU_ASSERT_EQUAL(r->n_symbols, 0);
    CU_ASSERT_EQUAL(r->n_lines, 0);
    CU_ASSERT_EQUAL(r->n_tiles, 0);
    CU_ASSERT_EQUAL(r->bsp.size, 0);
    CU_ASSERT_PTR_NULL(r->bsp.bytes);
    exe_free(r);

    /* A completely empty executable is still a valid file. */
    e = exe_new();
    CU_ASSERT_TRUE_FATAL(exe_write(e, p, err, sizeof err));
    exe_free(e);
    r = exe_read(p, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(r->n_sections, 0);
    exe_free(r);
    unlink(p);
}

/* Past SHN_LORESERVE sections the symbols use .symtab_shndx. */
static void test_many_sections(void)
{
    char err[256];
    const unsigned n = 0xFF00 + 300;
    ipu_exe *e = exe_new();
    for (unsigned t = 0; t < n; t++)
        CU_ASSERT_TRUE_FATAL(exe_add_section(e, t, ".d", 0x80000, &t, 4, EXE_SEC_WRITE, err, sizeof err));
    CU_ASSERT_TRUE(exe_add_symbol(e, n - 1, "last", 0x80000, 4, EXE_SYM_DATA, true));
    CU_ASSERT_TRUE(exe_add_symbol(e, 3, "early", 0x80000, 4, EXE_SYM_DATA, true));
    /* tile 65519's section is ELF section 0xfff1, SHN_ABS's number, given in
     * the extended index table: a symbol there is on that tile, not on every one */
    CU_ASSERT_TRUE(exe_add_symbol(e, SHN_ABS - 2, "at_abs_index", 0x80000, 4, EXE_SYM_DATA, true));
    const char *p = tmp_path("many.elf");
    CU_ASSERT_TRUE_FATAL(exe_write(e, p, err, sizeof err));
    exe_free(e);
    ipu_exe *r = exe_read(p, err, sizeof err);
    if (!r)
        fprintf(stderr, "\n%s\n", err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(r->n_sections, n);
    uint32_t v;
    memcpy(&v, r->sections[n - 1].bytes, 4);
    CU_ASSERT_EQUAL(v, n - 1);
    const exe_symbol *y = exe_find_symbol(r, "last");
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    CU_ASSERT_EQUAL(y->tile, n - 1);
    y = exe_find_symbol(r, "early");
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    CU_ASSERT_EQUAL(y->tile, 3);
    y = exe_find_symbol(r, "at_abs_index");
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    CU_ASSERT_EQUAL(y->tile, SHN_ABS - 2);
    exe_free(r);
    unlink(p);
}

/* Sections with the same bytes are stored once, in memory and in the file,
 * and read back sharing them; a symbol of every tile is written once
 * (SHN_ABS) and found on every tile with code, not on one without. */
static void test_shared_bytes(void)
{
    char err[256];
    enum { TILES = 64, LIB = 4096 };
    static uint8_t lib[LIB], own[TILES][64];
    for (unsigned i = 0; i < LIB; i++)
        lib[i] = (uint8_t)(i * 7 + 1);
    ipu_exe *e = exe_new();
    for (uint32_t t = 0; t < TILES; t++) {
        memset(own[t], (int)t, sizeof own[t]);
        CU_ASSERT_TRUE_FATAL(exe_add_section(e, t, ".text", 0x4C000, lib, LIB, EXE_SEC_EXEC, err, sizeof err));
        CU_ASSERT_TRUE_FATAL(exe_add_section(e, t, ".data", 0x80000, own[t], 64, EXE_SEC_WRITE, err, sizeof err));
        if (t != 5)
            CU_ASSERT_TRUE_FATAL(exe_set_entry(e, t, 0x4C000));
    }
    CU_ASSERT_TRUE(exe_add_symbol(e, EXE_EVERY_TILE, "lib_entry", 0x4C010, 16, EXE_SYM_CODE, true));
    CU_ASSERT_TRUE(exe_add_symbol(e, 3, "mine", 0x80000, 64, EXE_SYM_DATA, true));
    CU_ASSERT_EQUAL(exe_section_bytes(e), (uint64_t)TILES * (LIB + 64));
    CU_ASSERT_EQUAL(exe_distinct_bytes(e), (uint64_t)LIB + TILES * 64 + sizeof "lib_entry" + sizeof "mine");
    CU_ASSERT_PTR_EQUAL(e->sections[0].bytes, e->sections[2].bytes);   /* tile 0's and tile 1's .text */
    const char *p = tmp_path("shared.elf");
    CU_ASSERT_TRUE_FATAL(exe_write(e, p, err, sizeof err));
    exe_free(e);
    struct stat st;
    CU_ASSERT_EQUAL_FATAL(stat(p, &st), 0);
    /* the library once: well under one copy a tile */
    CU_ASSERT_TRUE(st.st_size < 2 * LIB + TILES * (64 + 2 * 64 + 40));
    ipu_exe *r = exe_read(p, err, sizeof err);
    if (!r)
        fprintf(stderr, "\n%s\n", err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(r->n_sections, 2 * TILES);
    for (uint32_t t = 0; t < TILES; t++) {
        const exe_section *x = &r->sections[2 * t], *d = &r->sections[2 * t + 1];
        CU_ASSERT_EQUAL(x->tile, t);
        CU_ASSERT_PTR_EQUAL(x->bytes, r->sections[0].bytes);
        CU_ASSERT_EQUAL(memcmp(x->bytes, lib, LIB), 0);
        CU_ASSERT_EQUAL(memcmp(d->bytes, own[t], 64), 0);
    }
    CU_ASSERT_EQUAL(exe_distinct_bytes(r), (uint64_t)LIB + TILES * 64 + sizeof "lib_entry" + sizeof "mine");
    const exe_symbol *y = exe_find_symbol(r, "lib_entry");
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    CU_ASSERT_EQUAL(y->tile, EXE_EVERY_TILE);
    CU_ASSERT_TRUE(exe_symbol_on_tile(r, y, 9));
    CU_ASSERT_FALSE(exe_symbol_on_tile(r, y, 5));        /* no code there */
    CU_ASSERT_FALSE(exe_symbol_on_tile(r, y, TILES));    /* no such tile */
    y = exe_symbol_at(r, 40, 0x4C014);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    CU_ASSERT_STRING_EQUAL(y->name, "lib_entry");
    CU_ASSERT_PTR_NULL(exe_symbol_at(r, TILES + 1, 0x4C014));
    y = exe_symbol_at(r, 3, 0x80004);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    CU_ASSERT_STRING_EQUAL(y->name, "mine");
    exe_free(r);
    unlink(p);
}

/* A replicated program: replica 0's tiles and the words each replica
 * changes are written; reading makes the replicas, their relocated words
 * (a tile endpoint in each half of a word, host streams) and the rest
 * shared with replica 0; a relocation outside replica 0's sections is
 * refused when writing, a damaged record when reading. */
static void test_replicas(void)
{
    char err[256];
    enum { STRIDE = 8 };
    /* words: a tile, two tiles in halves, two host streams, the next
     * replica's tile 3, slice 2 of 3 of 0x100 bytes from 0x90000 */
    uint32_t control[6] = { 5, 3u | 6u << 16, XCH_HOST_IN_WORD(2), XCH_HOST_IN_WORD(1), 3 + STRIDE, 0x90200 };
    static const uint8_t lib[64] = { 1, 2, 3 };
    ipu_exe *e = exe_new();
    for (uint32_t t = 0; t < 2; t++) {
        CU_ASSERT_TRUE_FATAL(exe_add_section(e, t, ".text", 0x4C000, lib, sizeof lib, EXE_SEC_EXEC, err, sizeof err));
        CU_ASSERT_TRUE_FATAL(exe_add_section(e, t, ".control", 0x80000, control, sizeof control, EXE_SEC_WRITE, err,
                                             sizeof err));
        CU_ASSERT_TRUE_FATAL(exe_set_entry(e, t, 0x4C000));
    }
    CU_ASSERT_TRUE(exe_add_symbol(e, 1, "x", 0x80000, 4, EXE_SYM_DATA, true));
    CU_ASSERT_TRUE(exe_add_symbol(e, EXE_EVERY_TILE, "lib", 0x4C000, 8, EXE_SYM_CODE, true));
    CU_ASSERT_TRUE(exe_add_reloc(e, 1, 0x80004, EXE_RELOC_TILE_HIGH));   /* out of order: sorted when used */
    CU_ASSERT_TRUE(exe_add_reloc(e, 1, 0x80000, EXE_RELOC_TILE));
    CU_ASSERT_TRUE(exe_add_reloc(e, 1, 0x80004, EXE_RELOC_TILE));
    CU_ASSERT_TRUE(exe_add_reloc(e, 1, 0x80008, EXE_RELOC_HOST_IN));
    CU_ASSERT_TRUE(exe_add_reloc(e, 1, 0x8000c, EXE_RELOC_HOST_OUT));
    CU_ASSERT_TRUE(exe_add_reloc_rotated(e, 1, 0x80010, EXE_RELOC_RING, 1, 0));
    CU_ASSERT_TRUE(exe_add_reloc_rotated(e, 1, 0x80014, EXE_RELOC_SLICE, 2, 0x100));
    e->replicas = (exe_replicas){ .count = 3, .tile_stride = STRIDE, .input_streams = 4, .output_streams = 10,
                                  .relocs = e->replicas.relocs, .n_relocs = e->replicas.n_relocs };
    exe_summary sum;
    CU_ASSERT_TRUE_FATAL(exe_summary_of(e, &sum));
    CU_ASSERT_EQUAL(sum.last_tile, 2 * STRIDE + 1);
    exe_summary_free(&sum);
    const char *p = tmp_path("replicas.elf");
    CU_ASSERT_TRUE_FATAL(exe_write(e, p, err, sizeof err));
    CU_ASSERT_TRUE_FATAL(exe_read_summary(p, &sum, err, sizeof err));
    CU_ASSERT_EQUAL(sum.last_tile, 2 * STRIDE + 1);
    exe_summary_free(&sum);
    ipu_exe *r = exe_read(p, err, sizeof err);
    if (!r)
        fprintf(stderr, "\n%s\n", err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(r->n_sections, 3 * 4);
    CU_ASSERT_EQUAL(r->n_tiles, 3 * 2);
    for (uint32_t rep = 0; rep < 3; rep++)
        for (uint32_t t = 0; t < 2; t++) {
            uint32_t tile = rep * STRIDE + t;
            CU_ASSERT_PTR_NOT_NULL(exe_tile(r, tile));
            long k = -1;
            for (size_t i = 0; i < r->n_sections; i++)
                if (r->sections[i].tile == tile && r->sections[i].addr == 0x80000)
                    k = (long)i;
            CU_ASSERT_FATAL(k >= 0);
            uint32_t w[6];
            memcpy(w, r->sections[k].bytes, sizeof w);
            uint32_t s = t == 1 ? rep * STRIDE : 0;         /* tile 0 has no relocations */
            CU_ASSERT_EQUAL(w[0], 5 + s);
            CU_ASSERT_EQUAL(w[1], (3 + s) | (6 + s) << 16);
            CU_ASSERT_EQUAL(w[2], XCH_HOST_IN_WORD(2 + (t == 1 ? rep * 4 : 0)));
            CU_ASSERT_EQUAL(w[3], XCH_HOST_IN_WORD(1 + (t == 1 ? rep * 10 : 0)));
            /* the next replica round the ring; the slice two on from its own */
            CU_ASSERT_EQUAL(w[4], t == 1 ? 3 + (rep + 1) % 3 * STRIDE : 3 + STRIDE);
            CU_ASSERT_EQUAL(w[5], t == 1 ? 0x90000 + (rep + 2) % 3 * 0x100 : 0x90200);
            if (t == 0)
                CU_ASSERT_PTR_EQUAL(r->sections[k].bytes, r->sections[1].bytes);   /* shared, unchanged */
            CU_ASSERT_TRUE(exe_symbol_on_tile(r, exe_find_symbol(r, "lib"), tile));
        }
    size_t xs = 0;
    for (size_t i = 0; i < r->n_symbols; i++)
        xs += !strcmp(r->symbols[i].name, "x");
    CU_ASSERT_EQUAL(xs, 3);                               /* tile 1's symbol on each replica */
    CU_ASSERT_PTR_NOT_NULL(exe_symbol_at(r, 2 * STRIDE + 1, 0x80000));
    /* written again from the replicas made: the same file */
    const char *p2 = tmp_path("replicas2.elf");
    CU_ASSERT_TRUE_FATAL(exe_write(r, p2, err, sizeof err));
    char *a, *b;
    size_t na, nb;
    CU_ASSERT_TRUE_FATAL(read_whole_file(p, &a, &na, err, sizeof err));
    CU_ASSERT_TRUE_FATAL(read_whole_file(p2, &b, &nb, err, sizeof err));
    CU_ASSERT_TRUE(na == nb && !memcmp(a, b, na));
    /* the record damaged: a replica count of 1 */
    size_t at = find_scn((uint8_t *)a, ".ipusim.replicas");
    uint8_t *img = (uint8_t *)a;
    img[shdr(img, at)->sh_offset + 4] = 1;
    expect_error(img, na, "t.elf: .ipusim.replicas: 1 replicas (a replicated program has 2 or more)");
    /* of an older layout (no format word) */
    img[shdr(img, at)->sh_offset + 4] = 3;
    img[shdr(img, at)->sh_offset] ^= 0xff;
    expect_error(img, na, "t.elf: .ipusim.replicas: not of this version's layout (compile the program again)");
    free(a);
    free(b);
    exe_free(r);
    /* a shift past the replicas */
    CU_ASSERT_TRUE(exe_add_reloc_rotated(e, 0, 0x80010, EXE_RELOC_RING, 3, 0));
    CU_ASSERT_FALSE(exe_write(e, p, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "address 0x80010, shifts by more replicas than there are"));
    e->replicas.n_relocs--;
    /* a relocation in no section */
    CU_ASSERT_TRUE(exe_add_reloc(e, 1, 0x90000, EXE_RELOC_TILE));
    CU_ASSERT_FALSE(exe_write(e, p, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "replica relocation of tile 1, address 0x90000, is not in a section with bytes"));
    exe_free(e);
    unlink(p);
    unlink(p2);
}

/* ------------------------------------------------------------ lookups */

static void test_lookups(void)
{
    ipu_exe *e = sample();
    CU_ASSERT_TRUE(exe_add_symbol(e, 0, "main_data", 0x4C008, 0, EXE_SYM_DATA, false));
    const exe_symbol *y = exe_find_symbol(e, "main");
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    CU_ASSERT_EQUAL(y->tile, 0);              /* the global one */
    CU_ASSERT_PTR_NULL(exe_find_symbol(e, "nope"));

    y = exe_symbol_at(e, 0, 0x4C004);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    CU_ASSERT_STRING_EQUAL(y->name, "main");
    /* The nearest code label wins over an enclosing one and over data. */
    y = exe_symbol_at(e, 0, 0x4C00C);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    CU_ASSERT_STRING_EQUAL(y->name, "loop");
    y = exe_symbol_at(e, 0, 0x80004);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    CU_ASSERT_STRING_EQUAL(y->name, "weights");
    /* A sized symbol does not cover past its end. */
    CU_ASSERT_PTR_NULL(exe_symbol_at(e, 0, 0x80008));
    y = exe_symbol_at(e, 1, 0x9004C);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    CU_ASSERT_STRING_EQUAL(y->name, "scratch");
    CU_ASSERT_PTR_NULL(exe_symbol_at(e, 1, 0x90050));
    CU_ASSERT_PTR_NULL(exe_symbol_at(e, 1, 0x9000C));
    y = exe_symbol_at(e, 1471, 0x4C104);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    CU_ASSERT_EQUAL(y->tile, 1471);
    CU_ASSERT_PTR_NULL(exe_symbol_at(e, 2, 0x4C000));

    const char *file = NULL;
    uint32_t line = 0;
    CU_ASSERT_TRUE(exe_line_at(e, 0, 0x4C004, &file, &line));
    CU_ASSERT_STRING_EQUAL(file, "kernels/amp.S");
    CU_ASSERT_EQUAL(line, 10);
    CU_ASSERT_TRUE(exe_line_at(e, 0, 0x4C00C, &file, &line));
    CU_ASSERT_EQUAL(line, 12);
    CU_ASSERT_TRUE(exe_line_at(e, 1471, 0x4C104, &file, &line));
    CU_ASSERT_STRING_EQUAL(file, "kernels/relu.S");
    CU_ASSERT_EQUAL(line, 3);
    /* Not past the section, not in another section, not on another tile. */
    CU_ASSERT_FALSE(exe_line_at(e, 0, 0x4C010, &file, &line));
    CU_ASSERT_FALSE(exe_line_at(e, 0, 0x80000, &file, &line));
    CU_ASSERT_FALSE(exe_line_at(e, 1, 0x4C004, &file, &line));
    CU_ASSERT_FALSE(exe_line_at(e, 1471, 0x4C0FC, &file, &line));
    exe_free(e);
}

/* ------------------------------------------------------------ bad input */

static void test_bad_headers(void)
{
    size_t size;
    uint8_t *img = sample_image(&size);
    uint8_t *bad = malloc(size);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bad);

    expect_error(img, 0, "t.elf: empty file");
    expect_error((const uint8_t *)"hello, world", 12, "t.elf: not an ELF file (no ELF magic number)");
    expect_error(img, 3, "t.elf: not an ELF file (no ELF magic number)");
    expect_error(img, 10, "t.elf: truncated: the ELF identification needs 16 bytes but the file has 10 bytes");

    memcpy(bad, img, size);
    bad[EI_CLASS] = ELFCLASS32;
    expect_error(bad, size, "t.elf: ELF32 file; ipusim executables are ELF64");
    memcpy(bad, img, size);
    bad[EI_DATA] = ELFDATA2MSB;
    expect_error(bad, size, "t.elf: big-endian ELF file; ipusim executables are little-endian");
    memcpy(bad, img, size);
    bad[EI_VERSION] = 9;
    expect_error(bad, size, "t.elf: unsupported ELF version 9");
    memcpy(bad, img, size);
    ((Elf64_Ehdr *)bad)->e_flags = 2;
    expect_error(bad, size, "t.elf: executable format version 2, this ipusim reads version 1");
    memcpy(bad, img, size);
    ((Elf64_Ehdr *)bad)->e_type = ET_DYN;
    expect_error(bad, size, "t.elf: ELF type 3 is neither an executable nor an object");
    memcpy(bad, img, size);
    ((Elf64_Ehdr *)bad)->e_shstrndx = 200;
    expect_error(bad, size, "t.elf: section name table index 200 is out of range (14 sections)");

    /* A real x86-64 program: only its header is needed. */
    char err[256];
    char *host;
    size_t host_size;
    CU_ASSERT_TRUE_FATAL(read_whole_file("/bin/true", &host, &host_size, err, sizeof err));
    CU_ASSERT_FATAL(host_size >= 64);
    expect_error((uint8_t *)host, 64, "t.elf: not an ipusim executable (e_machine 62, expected 0x4950)");
    free(host);

    /* exe_read names the path. */
    const char *p = tmp_path("garbage.elf");
    CU_ASSERT_TRUE(afile_write_all(p, "garbage", 7, err, sizeof err));
    CU_ASSERT_PTR_NULL(exe_read(p, err, sizeof err));
    char want[300];
    snprintf(want, sizeof want, "%s: not an ELF file (no ELF magic number)", p);
    CU_ASSERT_STRING_EQUAL(err, want);
    unlink(p);
    p = tmp_path("missing.elf");
    CU_ASSERT_PTR_NULL(exe_read(p, err, sizeof err));
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory", p);
    CU_ASSERT_STRING_EQUAL(err, want);
    free(bad);
    free(img);
}

static void test_truncated(void)
{
    size_t size;
    uint8_t *img = sample_image(&size);
    Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
    /* The table of sections is last; its start and its end. */
    size_t shoff = eh->e_shoff;
    CU_ASSERT_EQUAL_FATAL(shoff + eh->e_shnum * sizeof(Elf64_Shdr), size);
    char want[200];
    expect_error(img, 1, "t.elf: not an ELF file (no ELF magic number)");
    expect_error(img, 16, "t.elf: truncated: the ELF header needs 64 bytes but the file has 16 bytes");
    expect_error(img, 63, "t.elf: truncated: the ELF header needs 64 bytes but the file has 63 bytes");
    snprintf(want, sizeof want, "t.elf: truncated: the section header table at byte %zu is past the end of the file (64 bytes)", shoff);
    expect_error(img, 64, want);
    snprintf(want, sizeof want, "t.elf: truncated: the section header table at byte %zu is past the end of the file (100 bytes)", shoff);
    expect_error(img, 100, want);
    snprintf(want, sizeof want, "t.elf: truncated: the section header table at byte %zu is past the end of the file (%zu bytes)", shoff, shoff);
    expect_error(img, shoff, want);
    snprintf(want, sizeof want, "t.elf: truncated: the section header table at byte %zu is past the end of the file (%zu bytes)", shoff, shoff + 63);
    expect_error(img, shoff + 63, want);
    snprintf(want, sizeof want, "t.elf: truncated: the section header table ends at byte %zu but the file has %zu bytes", size, shoff + 64);
    expect_error(img, shoff + 64, want);
    snprintf(want, sizeof want, "t.elf: truncated: the section header table ends at byte %zu but the file has %zu bytes", size, size - 1);
    expect_error(img, size - 1, want);
    snprintf(want, sizeof want, "t.elf: truncated: the section header table ends at byte %zu but the file has %zu bytes", size, size / 2 + shoff / 2);
    expect_error(img, size / 2 + shoff / 2, want);
    /* And every other length: a clean failure with the file's name. */
    for (size_t n = 0; n < size; n++) {
        char err[512] = "";
        ipu_exe *e = exe_read_memory(img, n, "t.elf", err, sizeof err);
        CU_ASSERT_PTR_NULL(e);
        exe_free(e);
        CU_ASSERT_EQUAL(strncmp(err, "t.elf: ", 7), 0);
    }
    char err[256];
    ipu_exe *e = exe_read_memory(img, size, "t.elf", err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL(e);
    exe_free(e);
    free(img);
}

static void test_corrupt_sections(void)
{
    size_t size;
    uint8_t *img = sample_image(&size);
    uint8_t *bad = malloc(size);
    char want[300];
    CU_ASSERT_PTR_NOT_NULL_FATAL(bad);

    /* A section offset past the end of the file. */
    memcpy(bad, img, size);
    size_t text0 = find_scn(bad, ".text@0");
    shdr(bad, text0)->sh_offset = size - 4;
    snprintf(want, sizeof want, "t.elf: truncated: section .text@0 ends at byte %zu but the file has %zu bytes", size + 12, size);
    expect_error(bad, size, want);
    memcpy(bad, img, size);
    shdr(bad, text0)->sh_offset = UINT64_MAX - 2;
    snprintf(want, sizeof want, "t.elf: truncated: section .text@0 ends at byte %llu but the file has %zu bytes", ULLONG_MAX, size);
    expect_error(bad, size, want);
    /* Sections that overlap on one tile. */
    memcpy(bad, img, size);
    shdr(bad, find_scn(bad, ".data@0"))->sh_addr = 0x4C008;
    expect_error(bad, size, "t.elf: sections .text@0 [0x4c000, 0x4c010) and .data@0 [0x4c008, 0x4c010) overlap");
    /* Outside tile memory; code outside region 0. */
    memcpy(bad, img, size);
    shdr(bad, find_scn(bad, ".bss@1"))->sh_addr = 0xE7800;
    expect_error(bad, size, "t.elf: section .bss@1 [0xe7800, 0xe8800) is outside tile memory [0x4c000, 0xe8000)");
    memcpy(bad, img, size);
    shdr(bad, text0)->sh_addr = 0x80000;
    expect_error(bad, size, "t.elf: section .text@0 [0x80000, 0x80010) is code outside the executable region [0x4c000, 0x80000)");
    /* Names that do not parse as name@tile. */
    memcpy(bad, img, size);
    Elf64_Ehdr *eh = (Elf64_Ehdr *)bad;
    char *names = (char *)bad + shdr(bad, eh->e_shstrndx)->sh_offset;
    char *at = strchr(names + shdr(bad, text0)->sh_name, '@');
    *at = '#';
    expect_error(bad, size, "t.elf: section .text#0 (number 2) is loadable but its name has no @tile suffix");
    memcpy(bad, img, size);
    names = (char *)bad + shdr(bad, eh->e_shstrndx)->sh_offset;
    at = strchr(names + shdr(bad, text0)->sh_name, '@');
    at[1] = 'x';
    expect_error(bad, size, "t.elf: section .text@x: bad tile number \"x\"");
    /* A name offset past the name table. */
    memcpy(bad, img, size);
    shdr(bad, text0)->sh_name = 100000;
    snprintf(want, sizeof want, "t.elf: section 2: name offset 100000 is beyond the section name table (%llu bytes)",
             (unsigned long long)shdr(bad, eh->e_shstrndx)->sh_size);
    expect_error(bad, size, want);
    /* Record sections of the wrong size. */
    memcpy(bad, img, size);
    shdr(bad, find_scn(bad, ".ipusim.lines"))->sh_size = 47;
    expect_error(bad, size, "t.elf: .ipusim.lines: size 47 is not a multiple of the 16-byte record");
    memcpy(bad, img, size);
    shdr(bad, find_scn(bad, ".ipusim.tiles"))->sh_size = 12;
    expect_error(bad, size, "t.elf: .ipusim.tiles: size 12 is not a multiple of the 8-byte record");
    /* Record contents. */
    memcpy(bad, img, size);
    uint8_t *lines = bad + shdr(bad, find_scn(bad, ".ipusim.lines"))->sh_offset;
    lines[16 + 12] = 9;
    expect_error(bad, size, "t.elf: .ipusim.lines: record 1 names file 9 but there are 2 files");
    memcpy(bad, img, size);
    uint8_t *files = bad + shdr(bad, find_scn(bad, ".ipusim.files"))->sh_offset;
    files[4] = 0xFF;
    snprintf(want, sizeof want, "t.elf: .ipusim.files: record 1: name offset %u is beyond .ipusim.filestr (%llu bytes)",
             files[4] | files[5] << 8 | files[6] << 16 | (unsigned)files[7] << 24,
             (unsigned long long)shdr(bad, find_scn(bad, ".ipusim.filestr"))->sh_size);
    expect_error(bad, size, want);
    memcpy(bad, img, size);
    uint8_t *tiles = bad + shdr(bad, find_scn(bad, ".ipusim.tiles"))->sh_offset;
    memcpy(tiles + 8, tiles, 4);   /* tile 1471's record now says tile 0 */
    expect_error(bad, size, "t.elf: .ipusim.tiles: tile 0 is listed twice");
    memcpy(bad, img, size);
    tiles = bad + shdr(bad, find_scn(bad, ".ipusim.tiles"))->sh_offset;
    tiles[6] = 0x08;               /* entry 0x4c000 -> 0x8c000 */
    expect_error(bad, size, "t.elf: .ipusim.tiles: tile 0: supervisor entry 0x8c000 is not a word in the executable region [0x4c000, 0x80000)");
    /* Symbols. */
    size_t symtab = find_scn(img, ".symtab");
    memcpy(bad, img, size);
    Elf64_Sym *syms = (Elf64_Sym *)(bad + shdr(bad, symtab)->sh_offset);
    syms[1].st_shndx = (Elf64_Section)symtab;
    snprintf(want, sizeof want, "t.elf: symbol %s refers to section %zu, which is not a tile section",
             (char *)bad + shdr(bad, find_scn(bad, ".strtab"))->sh_offset + syms[1].st_name, symtab);
    expect_error(bad, size, want);
    memcpy(bad, img, size);
    syms = (Elf64_Sym *)(bad + shdr(bad, symtab)->sh_offset);
    syms[2].st_name = 5000;
    snprintf(want, sizeof want, "t.elf: symbol 2: name offset 5000 is beyond the string table (%llu bytes)",
             (unsigned long long)shdr(bad, find_scn(bad, ".strtab"))->sh_size);
    expect_error(bad, size, want);
    memcpy(bad, img, size);
    syms = (Elf64_Sym *)(bad + shdr(bad, symtab)->sh_offset);
    syms[1].st_value += 0x100;
    syms[1].st_shndx = (Elf64_Section)text0;
    snprintf(want, sizeof want, "t.elf: symbol %s [0x%llx, 0x%llx) lies outside its section .text@0",
             (char *)bad + shdr(bad, find_scn(bad, ".strtab"))->sh_offset + syms[1].st_name,
             (unsigned long long)syms[1].st_value, (unsigned long long)(syms[1].st_value + syms[1].st_size));
    expect_error(bad, size, want);
    memcpy(bad, img, size);
    shdr(bad, symtab)->sh_size -= 5;
    snprintf(want, sizeof want, "t.elf: symbol table size %llu is not a multiple of 24",
             (unsigned long long)shdr(bad, symtab)->sh_size);
    expect_error(bad, size, want);
    memcpy(bad, img, size);
    shdr(bad, symtab)->sh_link = 2;
    expect_error(bad, size, "t.elf: symbol table links to section 2, which is not a string table");
    free(bad);
    free(img);
}

/* Random damage never crashes the reader: each result is a valid program
 * or a message naming the file. */
static void test_random_damage(void)
{
    size_t size;
    uint8_t *img = sample_image(&size);
    uint8_t *bad = malloc(size);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bad);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    unsigned ok = 0, failed = 0;
    for (unsigned round = 0; round < 3000; round++) {
        memcpy(bad, img, size);
        unsigned flips = 1 + round % 8;
        for (unsigned k = 0; k < flips; k++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            /* Mostly hit the headers, where damage matters most. */
            size_t pos = (x >> 8) % 4 == 0 ? (size_t)((x >> 16) % size)
                       : (x >> 8) % 4 == 1 ? (size_t)((x >> 16) % 64)
                       : ((Elf64_Ehdr *)img)->e_shoff + (size_t)((x >> 16) % (size - ((Elf64_Ehdr *)img)->e_shoff));
            bad[pos] = (uint8_t)(x >> 40);
        }
        char err[512] = "";
        ipu_exe *e = exe_read_memory(bad, size, "t.elf", err, sizeof err);
        if (e) {
            ok++;
            exe_free(e);
        } else {
            failed++;
            CU_ASSERT_EQUAL(strncmp(err, "t.elf: ", 7), 0);
        }
    }
    CU_ASSERT(failed > 1000);
    free(bad);
    free(img);
}

/* ------------------------------------------------------------ atomic write */

/* .ipusim.machine: the machine a program was compiled for, preset and
 * overridden parameters, through a write and both readers; an executable
 * without the section still reads, with no machine. */
static void test_machine_section(void)
{
    char err[512];
    machine m;
    CU_ASSERT_TRUE_FATAL(machine_preset("m2000", &m, err, sizeof err));
    CU_ASSERT_TRUE_FATAL(machine_set(&m, "tile_clock_hz=1.5e9", err, sizeof err));
    CU_ASSERT_TRUE_FATAL(machine_set(&m, "host_bandwidth_bytes_per_s=1.25e10", err, sizeof err));
    uint8_t *blob;
    size_t size;
    CU_ASSERT_TRUE_FATAL(machine_encode(&m, &blob, &size));
    CU_ASSERT_EQUAL(size, strlen("preset=m2000\ntile_clock_hz=1500000000\nhost_bandwidth_bytes_per_s=12500000000\n"));
    CU_ASSERT_EQUAL(memcmp(blob, "preset=m2000\n", 13), 0);

    ipu_exe *e = sample();
    CU_ASSERT_TRUE(exe_set_blob(&e->machine, blob, size));
    const char *p = tmp_path("machine.elf");
    CU_ASSERT_TRUE_FATAL(exe_write(e, p, err, sizeof err));
    exe_free(e);
    e = exe_read(p, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_EQUAL(e->machine.size, size);
    CU_ASSERT_EQUAL(memcmp(e->machine.bytes, blob, size), 0);
    /* The summary of a program read whole (a pipe) is the file's. */
    exe_summary sum;
    CU_ASSERT_TRUE_FATAL(exe_summary_of(e, &sum));
    CU_ASSERT_TRUE(sum.any_tile);
    CU_ASSERT_EQUAL(sum.last_tile, 1471);
    CU_ASSERT_EQUAL_FATAL(sum.machine.size, size);
    CU_ASSERT_EQUAL(memcmp(sum.machine.bytes, blob, size), 0);
    exe_summary_free(&sum);
    exe_free(e);

    CU_ASSERT_TRUE_FATAL(exe_read_summary(p, &sum, err, sizeof err));
    CU_ASSERT_TRUE(sum.any_tile);
    CU_ASSERT_EQUAL(sum.last_tile, 1471);
    CU_ASSERT_EQUAL_FATAL(sum.machine.size, size);
    machine back;
    CU_ASSERT_TRUE_FATAL(machine_decode(sum.machine.bytes, sum.machine.size, &back, err, sizeof err));
    CU_ASSERT_EQUAL(back.preset, PRESET_m2000);
    CU_ASSERT_STRING_EQUAL(back.name, "m2000 (modified)");
    CU_ASSERT_EQUAL(memcmp(back.value, m.value, sizeof m.value), 0);
    exe_summary_free(&sum);
    free(blob);

    /* Holding a program: chips, tiles a chip, tile memory. */
    machine gc200, gc2;
    CU_ASSERT_TRUE_FATAL(machine_preset("gc200", &gc200, err, sizeof err));
    CU_ASSERT_TRUE_FATAL(machine_preset("gc2", &gc2, err, sizeof err));
    CU_ASSERT_TRUE(machine_holds_program(&m, &back, 5887, err, sizeof err));
    CU_ASSERT_FALSE(machine_holds_program(&gc200, &back, 1472, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "compiled for m2000 (modified) (4 chips x 1472 tiles) and uses 2 chips; gc200 has 1 chip");
    CU_ASSERT_TRUE(machine_holds_program(&gc200, &back, 1471, err, sizeof err));
    CU_ASSERT_FALSE(machine_holds_program(&gc2, &gc200, 1300, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "compiled for gc200 (1 chip x 1472 tiles); gc2 has 1216 tiles a chip (the program uses tile 1300)");
    CU_ASSERT_FALSE(machine_holds_program(&gc2, &gc200, 10, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "compiled for gc200 (1 chip x 1472 tiles); gc2 has 262144 bytes of tile memory, the program's layout needs 638976");
    /* Laid out from GC2's base (0x60000): a GC200 holds it, a machine whose
     * memory starts higher or ends lower does not. */
    CU_ASSERT_TRUE(machine_holds_program(&gc200, &gc2, 10, err, sizeof err));
    machine high = gc200;
    CU_ASSERT_TRUE_FATAL(machine_set(&high, "tile_region0_bytes=65536", err, sizeof err));
    CU_ASSERT_FALSE(machine_holds_program(&high, &gc2, 10, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "compiled for gc2 (1 chip x 1216 tiles); gc200 (modified) has tile memory at "
                                "0x70000-0x10bfff, the program's layout uses 0x60000-0x9ffff (tile_region0_bytes "
                                "65536 and tile_memory_bytes 638976; the program's 131072 and 262144)");
    machine low = gc2;
    CU_ASSERT_TRUE_FATAL(machine_set(&low, "tile_region0_bytes=212992", err, sizeof err));
    CU_ASSERT_FALSE(machine_holds_program(&low, &gc2, 10, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "has tile memory at 0x4c000-0x8bfff, the program's layout uses 0x60000-0x9ffff"));
    CU_ASSERT_FALSE(machine_holds_program(&gc2, NULL, 1216, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "tile 1216 is beyond the 1216 tiles of machine gc2 (1 chip x 1216 tiles)");

    /* Bad records name the line. */
    CU_ASSERT_FALSE(machine_decode("tile_clock_hz=1e9\n", 18, &back, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "line 1: expected preset=NAME, got 'tile_clock_hz=1e9'");
    CU_ASSERT_FALSE(machine_decode("preset=gc200\nchips=0\n", 21, &back, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "line 2: machine parameter chips = 0 is out of range (1..64 )");

    /* Without the section: both readers succeed, with no machine. */
    e = sample();
    CU_ASSERT_TRUE_FATAL(exe_write(e, p, err, sizeof err));
    exe_free(e);
    e = exe_read(p, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_EQUAL(e->machine.size, 0);
    CU_ASSERT_TRUE_FATAL(exe_summary_of(e, &sum));
    CU_ASSERT_EQUAL(sum.machine.size, 0);
    CU_ASSERT_EQUAL(sum.last_tile, 1471);
    exe_summary_free(&sum);
    exe_free(e);
    CU_ASSERT_TRUE_FATAL(exe_read_summary(p, &sum, err, sizeof err));
    CU_ASSERT_EQUAL(sum.machine.size, 0);
    CU_ASSERT_EQUAL(sum.last_tile, 1471);
    exe_summary_free(&sum);
    unlink(p);

    /* The summary reports what exe_read reports for a file that is no executable. */
    CU_ASSERT_TRUE_FATAL(afile_write_all(p, "hello", 5, err, sizeof err));
    CU_ASSERT_FALSE(exe_read_summary(p, &sum, err, sizeof err));
    char want[512];
    snprintf(want, sizeof want, "%s: not an ELF file (no ELF magic number)", p);
    CU_ASSERT_STRING_EQUAL(err, want);
    unlink(p);
}

/* .ipusim.model: the model's name and MACs, through a write and a read;
 * malformed records name the line; without the section there is none. */
static void test_model_section(void)
{
    char err[512];
    model_record r = { .model_macs = 12345678901234ull };
    snprintf(r.model, sizeof r.model, "bert-base:s128:b4\nx");
    uint8_t *blob;
    size_t size;
    CU_ASSERT_TRUE_FATAL(model_record_encode(&r, &blob, &size));
    CU_ASSERT_EQUAL(size, strlen("model=bert-base:s128:b4 x\nmodel_macs=12345678901234\n"));
    CU_ASSERT_EQUAL(memcmp(blob, "model=bert-base:s128:b4 x\nmodel_macs=12345678901234\n", size), 0);

    ipu_exe *e = sample();
    CU_ASSERT_TRUE(exe_set_blob(&e->model, blob, size));
    free(blob);
    const char *p = tmp_path("model.elf");
    CU_ASSERT_TRUE_FATAL(exe_write(e, p, err, sizeof err));
    exe_free(e);
    e = exe_read(p, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    model_record back;
    CU_ASSERT_TRUE_FATAL(program_model_record(e, p, &back, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(back.model, "bert-base:s128:b4 x");
    CU_ASSERT_EQUAL(back.model_macs, 12345678901234ull);

    /* A malformed record: the file and section named, then the line. */
    CU_ASSERT_TRUE(exe_set_blob(&e->model, "model=m\nmodel_macs=12x\n", 22));
    CU_ASSERT_FALSE(program_model_record(e, "P.elf", &back, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "P.elf: section .ipusim.model: line 2: model_macs: '12x' is not a decimal count");
    CU_ASSERT_EQUAL(back.model_macs, 0);
    exe_free(e);

    const struct { const char *text, *err; } bad[] = {
        { "model=m\n", "model_macs=N missing" },
        { "model_macs=5\n", "model=NAME missing" },
        { "model=m\nmodel=n\nmodel_macs=1\n", "line 2: model given twice" },
        { "model=m\nmodel_macs=1\nmodel_macs=1\n", "line 3: model_macs given twice" },
        { "model=m\nmodel_macs=18446744073709551616\n",
          "line 2: model_macs: '18446744073709551616' is not a decimal count" },
        { "model=m\nmodel_macs=-1\n", "line 2: model_macs: '-1' is not a decimal count" },
        { "model=m\nmodel_macs=\n", "line 2: model_macs: '' is not a decimal count" },
        { "model=m\nsamples=4\n", "line 2: unknown key 'samples' (model and model_macs are known)" },
        { "model m\n", "line 1: expected key=value, got 'model m'" },
        { "", "model=NAME missing" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CU_ASSERT_FALSE(model_record_decode(bad[i].text, strlen(bad[i].text), &back, err, sizeof err));
        CU_ASSERT_STRING_EQUAL(err, bad[i].err);
    }
    CU_ASSERT_FALSE(model_record_decode("model=a\0b\nmodel_macs=1\n", 22, &back, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "line 1: longer than 271 bytes or not text");
    CU_ASSERT_TRUE(model_record_decode("model_macs=0\nmodel=x", 20, &back, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(back.model, "x");

    /* Without the section: no record, no error. */
    e = sample();
    CU_ASSERT_TRUE_FATAL(exe_write(e, p, err, sizeof err));
    exe_free(e);
    e = exe_read(p, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_TRUE(program_model_record(e, p, &back, err, sizeof err));
    CU_ASSERT_EQUAL(back.model[0], 0);
    CU_ASSERT_EQUAL(back.model_macs, 0);
    exe_free(e);
    unlink(p);
}

static void test_atomic_write(void)
{
    char err[512];
    ipu_exe *e = sample();
    char p[300];
    snprintf(p, sizeof p, "%s/no/such/dir/x.elf", tmpdir);
    unsigned before = count_files();
    CU_ASSERT_FALSE(exe_write(e, p, err, sizeof err));
    char want[400];
    snprintf(want, sizeof want, "%s: cannot create: No such file or directory", p);
    CU_ASSERT_STRING_EQUAL(err, want);
    CU_ASSERT_EQUAL(count_files(), before);

    /* Writing over an existing file replaces it whole. */
    const char *q = tmp_path("over.elf");
    CU_ASSERT_TRUE(afile_write_all(q, "old contents that are not ELF", 29, err, sizeof err));
    CU_ASSERT_TRUE_FATAL(exe_write(e, q, err, sizeof err));
    ipu_exe *r = exe_read(q, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL(r);
    exe_free(r);
    struct stat st_big;
    CU_ASSERT_EQUAL(stat(q, &st_big), 0);
    ipu_exe *small = exe_new();
    CU_ASSERT_TRUE_FATAL(exe_write(small, q, err, sizeof err));
    struct stat st_small;
    CU_ASSERT_EQUAL(stat(q, &st_small), 0);
    CU_ASSERT(st_small.st_size < st_big.st_size);
    r = exe_read(q, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(r->n_sections, 0);
    CU_ASSERT_EQUAL(r->n_symbols, 0);
    exe_free(r);
    /* A failed write (a symbol in no section) leaves the old file and no
     * temporary. */
    unsigned n_files = count_files();
    CU_ASSERT_TRUE(exe_add_symbol(small, 9, "lost", 0x4C000, 0, EXE_SYM_CODE, true));
    CU_ASSERT_FALSE(exe_write(small, q, err, sizeof err));
    snprintf(want, sizeof want, "%s: symbol lost (tile 9, address 0x4c000) is in no section", q);
    CU_ASSERT_STRING_EQUAL(err, want);
    CU_ASSERT_EQUAL(count_files(), n_files);
    struct stat st_after;
    CU_ASSERT_EQUAL(stat(q, &st_after), 0);
    CU_ASSERT_EQUAL(st_after.st_size, st_small.st_size);
    /* A sized symbol running past its section is refused too. */
    exe_free(small);
    small = exe_new();
    CU_ASSERT_TRUE(exe_add_section(small, 0, ".text", 0x4C000, code0, 8, EXE_SEC_EXEC, err, sizeof err));
    CU_ASSERT_TRUE(exe_add_symbol(small, 0, "long", 0x4C004, 8, EXE_SYM_CODE, true));
    CU_ASSERT_FALSE(exe_write(small, q, err, sizeof err));
    snprintf(want, sizeof want, "%s: symbol long [0x4c004, 0x4c00c) extends past the end of section .text@0", q);
    CU_ASSERT_STRING_EQUAL(err, want);
    CU_ASSERT_EQUAL(count_files(), n_files);
    exe_free(small);
    exe_free(e);
    unlink(q);
}

void test_register(void)
{
    CU_pSuite s = CU_add_suite("executable", suite_init, suite_clean);
    CU_add_test(s, "builders", test_builders);
    CU_add_test(s, "round trip", test_roundtrip);
    CU_add_test(s, "object and empty round trip", test_roundtrip_object_and_empty);
    CU_add_test(s, "more than 65280 sections", test_many_sections);
    CU_add_test(s, "lookups", test_lookups);
    CU_add_test(s, "shared bytes, symbols of every tile", test_shared_bytes);
    CU_add_test(s, "replicas", test_replicas);
    CU_add_test(s, "bad headers", test_bad_headers);
    CU_add_test(s, "truncated files", test_truncated);
    CU_add_test(s, "corrupt sections", test_corrupt_sections);
    CU_add_test(s, "random damage", test_random_damage);
    CU_add_test(s, "atomic write", test_atomic_write);
    CU_add_test(s, "machine section", test_machine_section);
    CU_add_test(s, "model section", test_model_section);
}
