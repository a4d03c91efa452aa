/*
 * test_bad_input.c — the catalogue of bad inputs (tests/BAD_INPUTS.md), at
 * the library level: each bad input ends in one message of the promised
 * form (file:line:col for source, the file's name for executables and
 * configs, tile/context/pc for simulated faults), never in a crash, a hang
 * or a file left behind.  tests/cli/test_bad_input.sh drives the same
 * inputs through the command line and checks exit statuses and output
 * files.
 *
 * Exhaustive lists of one module's messages live with the module
 * (test_asm.c: assembler errors; test_executable.c: every damaged ELF
 * header and section); here each kind of bad input is represented, and
 * damaged executables are taken all the way through load and run.
 */
#include <CUnit/CUnit.h>
#include <dirent.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/fuzz/fuzz_targets.h"
#include "isa/asm/asm.h"
#include "isa/elf/executable.h"
#include "sim/base/fileio.h"
#include "sim/program/machine.h"
#include "sim/engine/tile.h"
#include "test_util.h"

/* ------------------------------------------------------------ scaffolding */

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
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ipusim_bad_input_XXXXXX");
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

/* Names in tmpdir, sorted and joined with spaces: temporaries left behind
 * show up here. */
static const char *dir_listing(void)
{
    static char out[1024];
    char *names[64];
    unsigned n = 0;
    DIR *d = opendir(tmpdir);
    struct dirent *de;
    while (d && (de = readdir(d)) && n < 64)
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            names[n++] = strdup(de->d_name);
    if (d)
        closedir(d);
    for (unsigned a = 1; a < n; a++)
        for (unsigned b = a; b > 0 && strcmp(names[b - 1], names[b]) > 0; b--) {
            char *x = names[b]; names[b] = names[b - 1]; names[b - 1] = x;
        }
    out[0] = 0;
    for (unsigned i = 0; i < n; i++) {
        size_t used = strlen(out);
        snprintf(out + used, sizeof out - used, "%s%s", i ? " " : "", names[i]);
        free(names[i]);
    }
    return out;
}

static ipu_exe *assemble(const char *src, char *err, size_t err_size)
{
    asm_options opt = { .no_include = true };
    return asm_assemble_string(src, "bad.S", &opt, err, err_size);
}

/* Assemble a program that must assemble; NULL (and a test failure) if not. */
static ipu_exe *assemble_ok(const char *src)
{
    char err[2048];
    ipu_exe *e = assemble(src, err, sizeof err);
    if (!e)
        fprintf(stderr, "\nunexpected assembly error:\n%s\n", err);
    CU_ASSERT_PTR_NOT_NULL(e);
    return e;
}

static machine gc200(void)
{
    machine m;
    char err[256];
    CU_ASSERT_TRUE(machine_preset("gc200", &m, err, sizeof err));
    return m;
}

/* The image of a program written to disk by exe_write. */
static uint8_t *image_of(const ipu_exe *e, size_t *size)
{
    char err[512];
    const char *p = tmp_path("image.elf");
    CU_ASSERT_TRUE_FATAL(exe_write(e, p, err, sizeof err));
    char *data = NULL;
    CU_ASSERT_TRUE_FATAL(read_whole_file(p, &data, size, err, sizeof err));
    unlink(p);
    return (uint8_t *)data;
}

/* A worker-using program with code, data, bss, symbols and lines on two
 * tiles: the base image that the ELF tests damage. */
static const char sample_src[] =
    "    .tile 0\n"
    "__supervisor:\n"
    "    setzi   $m1, worker\n"
    "    setzi   $m2, table\n"
    "    runall  $m1, $m2, $mzero\n"
    "    sync    0\n"
    "    exitz   $mzero\n"
    "    .align 8\n"
    "worker:\n"
    "    ld32    $m0, $m13, $mzero, 0\n"
    "    add     $m0, $m0, 1\n"
    "    st32    $m0, $m13, $mzero, 0\n"
    "    exitz   $mzero\n"
    "    .data\n"
    "table: .word 1, 2, 3, 4, 5, 6\n"
    "    .bss\n"
    "scratch: .space 64\n"
    "    .tile 5\n"
    "    .text\n"
    "__supervisor:\n"
    "    setzi   $m0, 3\n"
    "1:  brnzdec $m0, 1b\n"
    "    exitz   $mzero\n";

/* ------------------------------------------------------------ executables */

/* ELF of another machine: this test program itself. */
static void test_elf_other_machine(void)
{
    char err[512];
    char *self;
    size_t size;
    CU_ASSERT_TRUE_FATAL(read_whole_file("/proc/self/exe", &self, &size, err, sizeof err));
    CU_ASSERT_FATAL(size >= sizeof(Elf64_Ehdr));
    unsigned host_machine = ((Elf64_Ehdr *)self)->e_machine;
    char want[256];
    snprintf(want, sizeof want, "host.elf: not an ipusim executable (e_machine %u, expected 0x4950)", host_machine);
    CU_ASSERT_PTR_NULL(exe_read_memory(self, size, "host.elf", err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, want);
    free(self);
}

/* ELF32, big-endian, a newer format, text and nothing: one message each. */
static void test_elf_wrong_kind(void)
{
    ipu_exe *e = assemble_ok(sample_src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    size_t size;
    uint8_t *img = image_of(e, &size);
    uint8_t *bad = malloc(size);
    char err[512];
    static const struct { size_t offset; uint8_t value; const char *want; } cases[] = {
        { EI_CLASS, ELFCLASS32, "p.elf: ELF32 file; ipusim executables are ELF64" },
        { EI_DATA, ELFDATA2MSB, "p.elf: big-endian ELF file; ipusim executables are little-endian" },
        { offsetof(Elf64_Ehdr, e_flags), 7, "p.elf: executable format version 7, this ipusim reads version 1" },
        { offsetof(Elf64_Ehdr, e_machine), EM_X86_64, "p.elf: not an ipusim executable (e_machine 62, expected 0x4950)" },
        { 0, 'x', "p.elf: not an ELF file (no ELF magic number)" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(bad, img, size);
        bad[cases[i].offset] = cases[i].value;
        if (cases[i].offset == offsetof(Elf64_Ehdr, e_machine))
            bad[cases[i].offset + 1] = 0;
        err[0] = 0;
        CU_ASSERT_PTR_NULL(exe_read_memory(bad, size, "p.elf", err, sizeof err));
        CU_ASSERT_STRING_EQUAL(err, cases[i].want);
    }
    CU_ASSERT_PTR_NULL(exe_read_memory(img, 0, "p.elf", err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "p.elf: empty file");
    const char *text = "__supervisor:\n    exitz $mzero\n";
    CU_ASSERT_PTR_NULL(exe_read_memory(text, strlen(text), "p.elf", err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "p.elf: not an ELF file (no ELF magic number)");
    /* Through a file: the path names it. */
    const char *p = tmp_path("cut.elf");
    CU_ASSERT_TRUE(afile_write_all(p, img, 40, err, sizeof err));
    CU_ASSERT_PTR_NULL(exe_read(p, err, sizeof err));
    char want[400];
    snprintf(want, sizeof want, "%s: truncated: the ELF header needs 64 bytes but the file has 40 bytes", p);
    CU_ASSERT_STRING_EQUAL(err, want);
    unlink(p);
    p = tmp_path("");
    CU_ASSERT_PTR_NULL(exe_read(p, err, sizeof err));
    CU_ASSERT_EQUAL(strncmp(err, p, strlen(p)), 0);
    free(bad);
    free(img);
    exe_free(e);
}

/* Truncated at every length: a message with the name, never a program. */
static void test_elf_truncated_everywhere(void)
{
    ipu_exe *e = assemble_ok(sample_src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    size_t size;
    uint8_t *img = image_of(e, &size);
    unsigned n_truncated = 0;
    for (size_t n = 0; n < size; n++) {
        char err[512] = "";
        ipu_exe *r = exe_read_memory(img, n, "t.elf", err, sizeof err);
        CU_ASSERT_PTR_NULL(r);
        exe_free(r);
        CU_ASSERT_EQUAL(strncmp(err, "t.elf: ", 7), 0);
        CU_ASSERT_PTR_NULL(strchr(err, '\n'));
        n_truncated += strstr(err, ": truncated: ") != NULL;
    }
    /* Every length from the identification on says "truncated". */
    CU_ASSERT_EQUAL(n_truncated, size - 4);
    free(img);
    exe_free(e);
}

/* Damage at every byte, taken through read, load on every tile, a bounded
 * run and disassembly (fuzz_targets.h): whatever still reads as an
 * executable must load with a message or run without crashing. */
static void test_elf_damage_through_load_and_run(void)
{
    ipu_exe *e = assemble_ok(sample_src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    size_t size;
    uint8_t *img = image_of(e, &size);
    uint8_t *bad = malloc(size);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bad);
    static const uint8_t patterns[] = { 0xff, 0x01, 0x80, 0x7f };
    unsigned still_read = 0, refused = 0;
    for (size_t pos = 0; pos < size; pos++)
        for (size_t k = 0; k < sizeof patterns; k++) {
            memcpy(bad, img, size);
            bad[pos] ^= patterns[k];
            char err[512] = "";
            ipu_exe *r = exe_read_memory(bad, size, "d.elf", err, sizeof err);
            if (r) {
                still_read++;
                exe_free(r);
                fuzz_tile_one(bad, size);
                fuzz_elf_one(bad, size);
            } else {
                refused++;
                CU_ASSERT_EQUAL(strncmp(err, "d.elf: ", 7), 0);
            }
        }
    /* Damage to padding, names and data keeps the file readable; damage to
     * the headers does not.  Both must happen for the sweep to mean much. */
    printf("\n    %zu bytes x %zu patterns: %u still read, %u refused", size, sizeof patterns, still_read, refused);
    CU_ASSERT(still_read > 100);
    CU_ASSERT(refused > 100);
    free(bad);
    free(img);
    exe_free(e);
}

/* ------------------------------------------------------------ assembly */

typedef struct asm_case {
    const char *what;
    const char *src;
    const char *want;   /* the whole error text */
} asm_case;

static const asm_case asm_cases[] = {
    { "syntax: missing operand", "    add $m0, $m1,\n",
      "bad.S:1:18: error: expected an operand after ',', found end of line" },
    { "syntax: missing comma", "    add $m0 $m1 $m2\n",
      "bad.S:1:13: error: expected ',' or end of statement after operand 1 of 'add', found '$m1'" },
    { "syntax: unterminated string", "    .ascii \"abc\n", "bad.S:1:12: error: unterminated string" },
    { "syntax: unclosed parenthesis", "    .word (1+\n", "bad.S:1:14: error: expected an expression, found end of line" },
    { "unknown mnemonic", "    f32addd $a0, $a1, $a2\n",
      "bad.S:1:5: error: unknown mnemonic 'f32addd' (did you mean 'f32add'?)" },
    { "unknown register", "    add $m0, $m16, 1\n", "bad.S:1:14: error: no register '$m16': MRF registers are $m0..$m15" },
    { "wrong operand kind", "    add $m0, $a1, 1\n", "bad.S:1:14: error: expected MRF register ($m0..$m15), found '$a1'" },
    { "immediate out of range (u20)", "    setzi $m0, 0x100000\n",
      "bad.S:1:16: error: immediate 1048576 out of range for setzi: unsigned 20-bit (0..1048575)" },
    { "immediate out of range (s16)", "    add $m0, $m1, -40000\n",
      "bad.S:1:19: error: immediate -40000 out of range for add: signed 16-bit (-32768..32767)" },
    { "immediate out of range (u8)", "    sync 256\n",
      "bad.S:1:10: error: immediate 256 out of range for sync: unsigned 8-bit (0..255)" },
    { "misaligned bundle", "    nop\n    { ld32 $a0, $mzero, $mzero, 0 ; f32add $a1, $a2, $a3 }\n",
      "bad.S:2:5: error: bundle at 0x4c004 is not 8-byte aligned" },
    { "misaligned rpt body", "    nop\n    nop\n    rpt $m0, 0\n    nop\n",
      "bad.S:3:5: error: 'rpt' body at 0x4c00c is not 8-byte aligned (the rpt must be at an address 4 past a "
      "multiple of 8)" },
    { "control instruction in rpt body", "    nop\n    rpt $m0, 0\n    { br $m1 ; fnop }\n",
      "bad.S:3:7: error: 'rpt' body may not contain control instruction 'br' (the rpt is at line 2)" },
    { "worker instruction under .supervisor", "    .supervisor\n    f32add $a0, $a1, $a2\n",
      "bad.S:2:5: error: 'f32add' cannot be executed by the supervisor (.supervisor is in effect)" },
    { "undefined symbol", "    setzi $m0, nowhere\n", "bad.S:1:16: error: undefined symbol 'nowhere'" },
    { "symbol defined twice", "a:\n nop\na:\n nop\n", "bad.S:3:1: error: symbol 'a' is already defined at bad.S:1:1" },
    { ".include refused", ".include \"x.inc\"\n", "bad.S:1:1: error: '.include' is disabled here" },
    { "macro without .endm", ".macro foo\n nop\n", "bad.S:1:1: error: '.macro' without '.endm'" },
    { "data too large for any tile", "__supervisor:\n exitz $mzero\n .data\nbig:\n .space 700000\n",
      "bad.S:5:9: error: '.space' size 700000 out of range (0..638976)" },
    { "code too large for region 0", ".rept 60000\n nop\n.endr\n",
      "bad.S:2:2: error: section .text (240000 bytes) does not fit in the free region 0 of tile 0" },
    { "code outside region 0", ".section .x, \"ax\", 0x90000\n nop\n",
      "bad.S:1:20: error: code section .x at 0x90000 is outside region 0 (0x4c000..0x7ffff), the only executable "
      "region" },
};

static void test_asm_catalogue(void)
{
    for (size_t i = 0; i < sizeof asm_cases / sizeof asm_cases[0]; i++) {
        char err[4096] = "";
        ipu_exe *e = assemble(asm_cases[i].src, err, sizeof err);
        CU_ASSERT_PTR_NULL(e);
        exe_free(e);
        if (strcmp(err, asm_cases[i].want))
            fprintf(stderr, "\n  %s:\n    got  %s\n    want %s", asm_cases[i].what, err, asm_cases[i].want);
        CU_ASSERT_STRING_EQUAL(err, asm_cases[i].want);
    }
}

/* An include cycle, through files. */
static void test_asm_include_cycle(void)
{
    char err[4096], a[300], b[300];
    snprintf(a, sizeof a, "%s", tmp_path("cycle_a.S"));
    snprintf(b, sizeof b, "%s", tmp_path("cycle_b.S"));
    CU_ASSERT_TRUE_FATAL(afile_write_all(a, "    nop\n    .include \"cycle_b.S\"\n", 33, err, sizeof err));
    CU_ASSERT_TRUE_FATAL(afile_write_all(b, "    .include \"cycle_a.S\"\n", 25, err, sizeof err));
    ipu_exe *e = asm_assemble_file(a, NULL, err, sizeof err);
    CU_ASSERT_PTR_NULL(e);
    exe_free(e);
    char want[1400];
    snprintf(want, sizeof want, "%s:1:5: error: include cycle: '%s' -> '%s' -> '%s'", b, a, b, a);
    if (strcmp(err, want))
        fprintf(stderr, "\n    got  %s\n    want %s", err, want);
    CU_ASSERT_STRING_EQUAL(err, want);
    unlink(a);
    unlink(b);
}

/* ------------------------------------------------------------ loading */

/* A program that fits GC200's 624 KiB does not fit GC2's 256 KiB. */
static void test_load_too_large_for_machine(void)
{
    static const char src[] = "__supervisor:\n exitz $mzero\n .data\nbig:\n .space 420000\n";
    ipu_exe *e = assemble_ok(src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    char err[512];
    machine m;
    CU_ASSERT_TRUE_FATAL(machine_preset("gc2", &m, err, sizeof err));
    ipu_tile t;
    /* Placed for GC200 (code from 0x4c000): below GC2's memory. */
    CU_ASSERT_TRUE_FATAL(tile_init(&t, &m, 0));
    CU_ASSERT_FALSE(tile_load(&t, e, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "tile 0: section .text (4 bytes at 0x4c000) does not fit in tile memory "
                                "(0x60000-0x9ffff): needs up to 0x4c003");
    tile_free(&t);
    /* Placed for GC2: its data runs past GC2's region 1. */
    asm_options opt = { .memory_base = machine_memory_base(&m) };
    ipu_exe *e2 = asm_assemble_string(src, "big.S", &opt, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e2);
    CU_ASSERT_EQUAL(e2->sections[0].addr, 0x60000u);
    CU_ASSERT_TRUE_FATAL(tile_init(&t, &m, 0));
    CU_ASSERT_FALSE(tile_load(&t, e2, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "tile 0: section .data (420000 bytes at 0x80000) does not fit in tile memory "
                                "(0x60000-0x9ffff): needs up to 0xe689f");
    tile_free(&t);
    exe_free(e2);
    m = gc200();
    CU_ASSERT_TRUE_FATAL(tile_init(&t, &m, 0));
    CU_ASSERT_TRUE(tile_load(&t, e, err, sizeof err));
    tile_free(&t);
    exe_free(e);
}

/* Executables the assembler would not make, built by hand. */
static void test_load_refuses_bad_layout(void)
{
    static const uint32_t words[4] = { 0 };
    static const struct {
        const char *what;
        uint32_t tile, addr, size, flags;
        bool entry;
        const char *want;
    } cases[] = {
        { "code without entry", 0, 0x4C000, 8, EXE_SEC_EXEC, false,
          "tile 0 has code but no supervisor entry (.entry)" },
        { "data without code", 2, 0x80000, 16, EXE_SEC_WRITE, false, "tile 2 has data but no code section" },
        { "code not whole words", 3, 0x4C000, 6, EXE_SEC_EXEC, true,
          "tile 3: code section .s at 0x4c000 (6 bytes) is not whole 4-byte words" },
    };
    machine m = gc200();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ipu_exe *e = exe_new();
        char err[512] = "";
        CU_ASSERT_TRUE_FATAL(exe_add_section(e, cases[i].tile, ".s", cases[i].addr, words, cases[i].size,
                                             cases[i].flags, err, sizeof err));
        if (cases[i].entry)
            CU_ASSERT_TRUE(exe_set_entry(e, cases[i].tile, cases[i].addr));
        ipu_tile t;
        CU_ASSERT_TRUE_FATAL(tile_init(&t, &m, cases[i].tile));
        CU_ASSERT_FALSE(tile_load(&t, e, err, sizeof err));
        CU_ASSERT_STRING_EQUAL(err, cases[i].want);
        tile_free(&t);
        exe_free(e);
    }
}

/* ------------------------------------------------------------ machine options */

static void test_machine_options(void)
{
    static const struct { const char *set, *want; } cases[] = {
        { "tile_clock_hz=0", "machine parameter tile_clock_hz = 0 is out of range (1e+08..4e+09 Hz)" },
        { "tile_clock_hz=5e9", "machine parameter tile_clock_hz = 5e+09 is out of range (1e+08..4e+09 Hz)" },
        { "tile_clock_hz=fast", "--set tile_clock_hz: 'fast' is not a number" },
        { "tile_clock_hz=nan", "--set tile_clock_hz: 'nan' is not a number" },
        { "tile_clock_hz=", "--set tile_clock_hz: '' is not a number" },
        { "tile_clock_hz", "--set expects name=value, got 'tile_clock_hz'" },
        { "=5", "--set expects name=value, got '=5'" },
        { "no_such_param=1", "unknown machine parameter 'no_such_param' (`ipusim machines` lists them)" },
        { "tile_memory_bytes=1000",
          "machine parameter tile_memory_bytes = 1000 is out of range (65536..1.04858e+06 B)" },
        { "f32div_latency_worker_cycles=0",
          "machine parameter f32div_latency_worker_cycles = 0 is out of range (1..64 worker cycles)" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        machine m = gc200();
        char err[512] = "";
        CU_ASSERT_FALSE(machine_set(&m, cases[i].set, err, sizeof err));
        CU_ASSERT_STRING_EQUAL(err, cases[i].want);
        CU_ASSERT_STRING_EQUAL(m.name, "gc200");   /* a refused value changes nothing */
    }
    machine m;
    char err[512];
    CU_ASSERT_FALSE(machine_preset("gc300", &m, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "unknown machine 'gc300' (known: gc2, gc200, bow, m2000, bow2000, ipu-pod16, bow-pod16, ipu-pod64, bow-pod64, ipu-pod128, bow-pod128, ipu-pod256, bow-pod256)");
}

/* Tile memory is built of 16 KiB pages (memmodel/tile_memory.h): a size
 * that is not a whole number of them must be refused as a user error, not
 * reach the memory model's invariant. */
static void test_machine_memory_size_granularity(void)
{
    machine m = gc200();
    char err[512] = "";
    CU_ASSERT_FALSE(machine_set(&m, "tile_memory_bytes=65537", err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "tile_memory_bytes"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "16384"));
    m = gc200();
    CU_ASSERT_TRUE(machine_set(&m, "tile_memory_bytes=655360", err, sizeof err));
}

static void test_machine_config_files(void)
{
    static const struct { const char *json, *want; } cases[] = {
        { "{\"preset\": \"bow\", \"params\": {\"tile_clock_hz\": -1}}",
          "machine parameter tile_clock_hz = -1 is out of range (1e+08..4e+09 Hz)" },
        { "{\"params\": {\"nope\": 1}}", "unknown machine parameter 'nope' (`ipusim machines` lists them)" },
        { "{\"preset\": \"bow3\"}", "unknown machine 'bow3' (known: gc2, gc200, bow, m2000, bow2000, ipu-pod16, bow-pod16, ipu-pod64, bow-pod64, ipu-pod128, bow-pod128, ipu-pod256, bow-pod256)" },
        { "[1, 2]", "not a JSON object (expected {\"preset\": ..., \"params\": {...}})" },
        { "{\"params\": {\"tile_clock_hz\": \"fast\"}}", "parameter 'tile_clock_hz' must be a number" },
        { "{\"extra\": 1}", "unknown key 'extra' (expected \"preset\" and \"params\")" },
    };
    const char *p = tmp_path("machine.json");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[512] = "";
        CU_ASSERT_TRUE_FATAL(afile_write_all(p, cases[i].json, strlen(cases[i].json), err, sizeof err));
        machine m = gc200();
        CU_ASSERT_FALSE(machine_load_config(&m, p, err, sizeof err));
        char want[768];
        snprintf(want, sizeof want, "%s: %s", p, cases[i].want);
        CU_ASSERT_STRING_EQUAL(err, want);
    }
    unlink(p);
    machine m = gc200();
    char err[512], want[512];
    CU_ASSERT_FALSE(machine_load_config(&m, p, err, sizeof err));
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory", p);
    CU_ASSERT_STRING_EQUAL(err, want);
}

/* A config file is one JSON object and nothing else, each key once; text
 * that is not JSON is reported at its line and column. */
static void test_machine_config_syntax(void)
{
    static const struct { const char *json, *want; } cases[] = {
        { "{\"preset\": ", ":1:12: not valid JSON (truncated?)" },
        { "{\"preset\": \"gc2\"", ":1:17: not valid JSON (truncated?)" },
        { "{\"preset\": \"gc2\",\n  \"params\": {\"x\": }}", ":2:19: not valid JSON" },
        { "{\"preset\":\"gc200\"} xyz", ":1:20: text after the end of the JSON object" },
        { "{\"preset\":\"gc200\"}\n\n{}", ":3:1: text after the end of the JSON object" },
        { "{\"params\":{\"tile_clock_hz\":1e9,\"tile_clock_hz\":2e9}}",
          ": parameter \"tile_clock_hz\" appears twice in \"params\"" },
        { "{\"preset\":\"gc2\",\"preset\":\"gc200\"}", ": key \"preset\" appears twice" },
        { "{\"params\":{},\"params\":{\"tile_clock_hz\":2e9}}", ": key \"params\" appears twice" },
    };
    const char *p = tmp_path("syntax.json");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[512] = "";
        CU_ASSERT_TRUE_FATAL(afile_write_all(p, cases[i].json, strlen(cases[i].json), err, sizeof err));
        machine m = gc200();
        CU_ASSERT_FALSE(machine_load_config(&m, p, err, sizeof err));
        char want[768];
        snprintf(want, sizeof want, "%s%s", p, cases[i].want);
        CU_ASSERT_STRING_EQUAL(err, want);
    }
    /* Whitespace after the object is fine. */
    char err[512] = "";
    const char ok[] = "{\"preset\": \"gc2\", \"params\": {\"tile_clock_hz\": 1e9}}\n\n";
    CU_ASSERT_TRUE_FATAL(afile_write_all(p, ok, strlen(ok), err, sizeof err));
    machine m = gc200();
    CU_ASSERT_TRUE(machine_load_config(&m, p, err, sizeof err));
    CU_ASSERT_EQUAL(m.preset, PRESET_gc2);
    CU_ASSERT_EQUAL(machine_get(&m, MP_tile_clock_hz), 1e9);
    unlink(p);
}

/* One preset a machine: a second, different one, or one after parameters
 * were set on the default, would silently undo an option. */
static void test_machine_choice_conflicts(void)
{
    char err[512] = "";
    machine m = gc200();
    CU_ASSERT_TRUE(machine_choose(&m, "gc2", "--machine gc2", err, sizeof err));
    CU_ASSERT_EQUAL(m.preset, PRESET_gc2);
    CU_ASSERT_TRUE(machine_set(&m, "tile_clock_hz=2e9", err, sizeof err));
    CU_ASSERT_TRUE(machine_choose(&m, "gc2", "--machine gc2", err, sizeof err));
    CU_ASSERT_EQUAL(machine_get(&m, MP_tile_clock_hz), 2e9);       /* the same preset keeps it */
    CU_ASSERT_FALSE(machine_choose(&m, "gc200", "--machine gc200", err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "--machine gc200 conflicts with --machine gc2 (name one machine)");

    m = gc200();
    CU_ASSERT_TRUE(machine_set(&m, "tile_clock_hz=2e9", err, sizeof err));
    CU_ASSERT_FALSE(machine_choose(&m, "bow", "--machine bow", err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "--machine bow comes after parameters set on gc200 and would undo them "
                                "(choose the machine before --set)");
    CU_ASSERT_TRUE(machine_choose(&m, "gc200", "--machine gc200", err, sizeof err));
    CU_ASSERT_EQUAL(machine_get(&m, MP_tile_clock_hz), 2e9);

    /* A config's preset against --machine, and a config's params after --set: the later wins. */
    const char *p = tmp_path("choice.json");
    const char cfg[] = "{\"preset\": \"gc200\", \"params\": {\"tile_clock_hz\": 1e9}}";
    CU_ASSERT_TRUE_FATAL(afile_write_all(p, cfg, strlen(cfg), err, sizeof err));
    m = gc200();
    CU_ASSERT_TRUE(machine_choose(&m, "gc2", "--machine gc2", err, sizeof err));
    CU_ASSERT_FALSE(machine_load_config(&m, p, err, sizeof err));
    char want[768];
    snprintf(want, sizeof want, "%s: \"preset\": \"gc200\" conflicts with --machine gc2 (name one machine)", p);
    CU_ASSERT_STRING_EQUAL(err, want);
    m = gc200();
    CU_ASSERT_TRUE(machine_set(&m, "tile_clock_hz=2e9", err, sizeof err));
    CU_ASSERT_TRUE(machine_load_config(&m, p, err, sizeof err));
    CU_ASSERT_EQUAL(machine_get(&m, MP_tile_clock_hz), 1e9);
    CU_ASSERT_FALSE(machine_choose(&m, "gc2", "--machine gc2", err, sizeof err));
    snprintf(want, sizeof want, "--machine gc2 conflicts with \"preset\": \"gc200\" in %s (name one machine)", p);
    CU_ASSERT_STRING_EQUAL(err, want);
    unlink(p);
}

/* ------------------------------------------------------------ simulated faults */

#define WORKER_PROLOGUE                                                          \
    "__supervisor:\n"                                                            \
    "    setzi   $m1, worker\n"                                                  \
    "    setzi   $m2, 0x80000\n"                                                 \
    "    run     $m1, $m2, $mzero\n"                                             \
    "    sync    0\n"                                                            \
    "    exitz   $mzero\n"                                                       \
    "    .align 8\n"                                                             \
    "worker:\n"

typedef struct fault_case {
    const char *what;
    const char *src;
    enum isa_exception exception;
    const char *want;   /* tile_describe_fault, instruction line included */
} fault_case;

static const fault_case fault_cases[] = {
    { "bad address", WORKER_PROLOGUE "    ld32    $m0, $mzero, $mzero, 0\n    exitz   $mzero\n", ISA_EXC_MEM_RANGE,
      "tile 0, worker 1, pc 0x4c018 (bad.S:9, in worker+0x0): bad address: ld32 at 0x0: address outside tile "
      "memory (0x4c000-0xe7fff)\n    ld32 $m0, $mzero, $mzero, 0" },
    { "misaligned access", WORKER_PROLOGUE "    setzi   $m1, 0x80002\n    ld32    $m0, $m1, $mzero, 0\n"
      "    exitz   $mzero\n", ISA_EXC_MEM_ALIGN,
      "tile 0, worker 1, pc 0x4c01c (bad.S:10, in worker+0x4): misaligned access: ld32 at 0x80002: address not "
      "4-byte aligned\n    ld32 $m0, $m1, $mzero, 0" },
    { "memory conflict", WORKER_PROLOGUE "    add     $m0, $m13, 0\n    add     $m1, $m13, 16\n"
      "    ld2x64pace $a0:1, $a2:3, $m0:1+=, $mzero, 0\n    exitz   $mzero\n", ISA_EXC_MEM_CONFLICT,
      "tile 0, worker 1, pc 0x4c020 (bad.S:11, in worker+0x8): memory conflict: ld2x64pace at 0x80000 and "
      "0x80010: both accesses hit memory element 13\n    ld2x64pace $a0:1, $a2:3, $m0:1+=, $mzero, 0b0000" },
    { "128-bit load from region 0", WORKER_PROLOGUE "    setzi   $m0, 0x50000\n    ld128   $a0:3, $m0, $mzero, 0\n"
      "    exitz   $mzero\n", ISA_EXC_MEM_REGION,
      "tile 0, worker 1, pc 0x4c01c (bad.S:10, in worker+0x4): access not allowed in region: ld128 at 0x50000: a "
      "128-bit load must be in the interleaved region 1 (from 0x80000)\n    ld128 $a0:3, $m0, $mzero, 0" },
    { "illegal instruction word", "__supervisor:\n    .word 0x7f7f7f7f\n    exitz $mzero\n", ISA_EXC_INVALID_INSTR,
      "tile 0, supervisor, pc 0x4c000 (in __supervisor+0x0): invalid instruction: no instruction has this "
      "encoding\n    .word 0x7f7f7f7f // invalid instruction" },
    { "supervisor runs a worker-only instruction", "__supervisor:\n    f32add $a0, $a1, $a2\n    exitz $mzero\n",
      ISA_EXC_INVALID_INSTR,
      "tile 0, supervisor, pc 0x4c000 (bad.S:2, in __supervisor+0x0): invalid instruction: f32add cannot run on "
      "the supervisor\n    f32add $a0, $a1, $a2" },
    { "worker runs a supervisor-only instruction", WORKER_PROLOGUE "    setzi $m0, 1\n    put $FP_ICTL, $m0\n"
      "    exitz   $mzero\n", ISA_EXC_INVALID_OPERAND,
      "tile 0, worker 1, pc 0x4c01c (bad.S:10, in worker+0x4): invalid operand: put: $FP_ICTL is a supervisor "
      "register; worker 1 cannot reach it\n    put $FP_ICTL, $m0" },
    { "trap", "__supervisor:\n    trap 5\n    exitz $mzero\n", ISA_EXC_BREAK,
      "tile 0, supervisor, pc 0x4c000 (bad.S:2, in __supervisor+0x0): breakpoint: trap 5\n    trap 5" },
    { "exchange without a chip program", "__supervisor:\n    xsend $m0, $m1, $m2\n    exitz $mzero\n",
      ISA_EXC_EXCHANGE,
      "tile 0, supervisor, pc 0x4c000 (bad.S:2, in __supervisor+0x0): bad exchange: xsend: no exchange is "
      "attached to this tile (exchange instructions run in a chip program)\n    xsend $m0, $m1, $m2" },
    { "branch outside the code", "__supervisor:\n    setzi $m0, 0x60000\n    br $m0\n", ISA_EXC_FETCH,
      "tile 0, supervisor, pc 0x60000: instruction fetch: pc 0x60000 is outside the tile's code (0x4c000-0x4c007)" },
    { "end of program with workers running",
      "__supervisor:\n    setzi $m1, worker\n    run $m1, $mzero, $mzero\n    exitz $mzero\n"
      "    .align 8\nworker:\n1:  bri 1b\n", ISA_EXC_RUN,
      "tile 0, supervisor, pc 0x4c008 (bad.S:4, in __supervisor+0x8): bad worker control: exitz: the supervisor "
      "ends the program while worker 1 still runs (sync 0 first)\n    exitz $mzero" },
    { "bad sync zone", "__supervisor:\n    sync 7\n    exitz $mzero\n", ISA_EXC_INVALID_OPERAND,
      "tile 0, supervisor, pc 0x4c000 (bad.S:2, in __supervisor+0x0): invalid operand: sync: 7 is not a sync zone "
      "(0 workers, 1 internal, 2 external, 3 end of exchange)\n    sync 7" },
    { "write to a read-only CSR", "__supervisor:\n    setzi $m0, 1\n    put $WSR, $m0\n    exitz $mzero\n",
      ISA_EXC_INVALID_OPERAND,
      "tile 0, supervisor, pc 0x4c004 (bad.S:3, in __supervisor+0x4): invalid operand: put: $WSR is read-only\n"
      "    put $WSR, $m0" },
};

typedef struct run_outcome {
    enum tile_stop stop;
    enum isa_exception exception;
    char fault[1024];
} run_outcome;

static run_outcome run_program(const ipu_exe *e, uint64_t cycle_limit)
{
    run_outcome r = { .stop = TILE_STOP_END };
    machine m = gc200();
    ipu_tile *t = calloc(1, sizeof *t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_TRUE_FATAL(tile_init(t, &m, 0));
    char err[512];
    CU_ASSERT_TRUE_FATAL(tile_load(t, e, err, sizeof err));
    r.stop = tile_run_alone(t, cycle_limit);
    r.exception = (enum isa_exception)t->s.fault.exception;
    if (r.stop == TILE_STOP_FAULT)
        tile_describe_fault(t, e, r.fault, sizeof r.fault);
    tile_free(t);
    free(t);
    return r;
}

static void test_fault_catalogue(void)
{
    for (size_t i = 0; i < sizeof fault_cases / sizeof fault_cases[0]; i++) {
        ipu_exe *e = assemble_ok(fault_cases[i].src);
        if (!e)
            continue;
        run_outcome r = run_program(e, 1000000);
        CU_ASSERT_EQUAL(r.stop, TILE_STOP_FAULT);
        CU_ASSERT_EQUAL(r.exception, fault_cases[i].exception);
        if (strcmp(r.fault, fault_cases[i].want))
            fprintf(stderr, "\n  %s:\n    got  %s\n    want %s", fault_cases[i].what, r.fault, fault_cases[i].want);
        CU_ASSERT_STRING_EQUAL(r.fault, fault_cases[i].want);
        exe_free(e);
    }
}

/* The encoding of one instruction or bundle, from the assembler: the last
 * n_words words of src. */
static void encode(const char *src, uint32_t *w, unsigned n_words)
{
    ipu_exe *e = assemble_ok(src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_FATAL(e->n_sections == 1 && e->sections[0].size >= 4 * n_words);
    memcpy(w, e->sections[0].bytes + e->sections[0].size - 4 * n_words, 4 * n_words);
    exe_free(e);
}

/* What the assembler refuses can still reach the simulator as words
 * (another assembler, a damaged file): the scheduler refuses it too. */
static void test_faults_the_assembler_prevents(void)
{
    uint32_t bri[1], bundle[2], rpt[3];
    encode("    bri 0x4c000\n", bri, 1);
    encode("    { nop ; fnop }\n", bundle, 2);
    encode("    nop\n    rpt $m0, 0\n    { nop ; fnop }\n", rpt, 3);
    char src[1024];

    /* A control instruction inside a rpt body. */
    snprintf(src, sizeof src,
             WORKER_PROLOGUE "    setzi $m0, 2\n    .word 0x%08x, 0x%08x, 0x%08x\n    exitz $mzero\n",
             rpt[0], bri[0], bundle[1]);
    ipu_exe *e = assemble_ok(src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    run_outcome r = run_program(e, 100000);
    CU_ASSERT_EQUAL(r.stop, TILE_STOP_FAULT);
    CU_ASSERT_EQUAL(r.exception, ISA_EXC_RPT);
    /* (The words come from .word, which has no line records of its own.) */
    CU_ASSERT_EQUAL(strncmp(r.fault, "tile 0, worker 1, pc 0x4c020 (", 30), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.fault, "in worker+0x8): bad repeat block: control instruction bri inside a "
                                           "rpt body (0x4c020-0x4c027)\n    bri 0x4c000"));
    exe_free(e);

    /* A bundle at an address 4 mod 8. */
    snprintf(src, sizeof src, "__supervisor:\n    nop\n    .word 0x%08x, 0x%08x\n    exitz $mzero\n", bundle[0],
             bundle[1]);
    e = assemble_ok(src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    r = run_program(e, 100000);
    CU_ASSERT_EQUAL(r.stop, TILE_STOP_FAULT);
    CU_ASSERT_EQUAL(r.exception, ISA_EXC_FETCH);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.fault, "tile 0, supervisor, pc 0x4c004"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.fault, "instruction fetch: bundle is not 8-byte aligned"));
    exe_free(e);

    /* A rpt whose body starts at an address 4 mod 8. */
    snprintf(src, sizeof src, WORKER_PROLOGUE "    setzi $m0, 2\n    nop\n    .word 0x%08x\n    nop\n    exitz $mzero\n",
             rpt[0]);
    e = assemble_ok(src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    r = run_program(e, 100000);
    CU_ASSERT_EQUAL(r.stop, TILE_STOP_FAULT);
    CU_ASSERT_EQUAL(r.exception, ISA_EXC_RPT);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.fault, "tile 0, worker 1, pc 0x4c020"));
    exe_free(e);
}

/* A program that never ends stops at the cycle limit, exactly there. */
static void test_runaway_program_stops_at_limit(void)
{
    ipu_exe *e = assemble_ok("__supervisor:\n1:  bri 1b\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    run_outcome r = run_program(e, 5000);
    CU_ASSERT_EQUAL(r.stop, TILE_STOP_LIMIT);
    CU_ASSERT_EQUAL(r.exception, ISA_EXC_NONE);
    exe_free(e);
    /* A supervisor waiting in sync 0 for a worker that never exits. */
    e = assemble_ok(WORKER_PROLOGUE "1:  bri 1b\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    r = run_program(e, 5000);
    CU_ASSERT_EQUAL(r.stop, TILE_STOP_LIMIT);
    exe_free(e);
}

/* ------------------------------------------------------------ output files */

static void test_no_output_left_behind(void)
{
    char err[512], want[600];
    CU_ASSERT_STRING_EQUAL(dir_listing(), "");
    ipu_exe *e = assemble_ok(sample_src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    /* Into a folder that does not exist. */
    char p[300];
    snprintf(p, sizeof p, "%s/missing/out.elf", tmpdir);
    CU_ASSERT_FALSE(exe_write(e, p, err, sizeof err));
    snprintf(want, sizeof want, "%s: cannot create: No such file or directory", p);
    CU_ASSERT_STRING_EQUAL(err, want);
    CU_ASSERT_STRING_EQUAL(dir_listing(), "");
    /* Over a folder: refused before anything is created. */
    snprintf(p, sizeof p, "%s/dir.elf", tmpdir);
    CU_ASSERT_EQUAL_FATAL(mkdir(p, 0755), 0);
    CU_ASSERT_FALSE(exe_write(e, p, err, sizeof err));
    snprintf(want, sizeof want, "%s: is a directory", p);
    CU_ASSERT_STRING_EQUAL(err, want);
    CU_ASSERT_STRING_EQUAL(dir_listing(), "dir.elf");
    rmdir(p);
    /* An abandoned report leaves neither the file nor its temporary, and an
     * old file stays as it was until the new one is complete. */
    const char *q = tmp_path("report.json");
    CU_ASSERT_TRUE(afile_write_all(q, "old", 3, err, sizeof err));
    atomic_file f;
    CU_ASSERT_TRUE_FATAL(afile_open(&f, q, err, sizeof err));
    fputs("{\"half\": ", f.fp);
    fflush(f.fp);
    char *old;
    size_t old_size;
    CU_ASSERT_TRUE_FATAL(read_whole_file(q, &old, &old_size, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(old, "old");
    free(old);
    afile_abort(&f);
    CU_ASSERT_STRING_EQUAL(dir_listing(), "report.json");
    unlink(q);
    CU_ASSERT_STRING_EQUAL(dir_listing(), "");
    exe_free(e);
}

void test_register(void)
{
    CU_pSuite s = CU_add_suite("bad_input", suite_init, suite_clean);
    static const test_case cases[] = {
        { "ELF of another machine", test_elf_other_machine },
        { "ELF32, big-endian, newer format, not ELF", test_elf_wrong_kind },
        { "ELF truncated at every length", test_elf_truncated_everywhere },
        { "damaged ELF through load and run", test_elf_damage_through_load_and_run },
        { "assembly errors", test_asm_catalogue },
        { "include cycle", test_asm_include_cycle },
        { "program too large for the machine", test_load_too_large_for_machine },
        { "executables with a bad layout", test_load_refuses_bad_layout },
        { "machine options out of range and unknown", test_machine_options },
        { "tile memory size in whole pages", test_machine_memory_size_granularity },
        { "machine config files", test_machine_config_files },
        { "machine config file syntax", test_machine_config_syntax },
        { "one machine, chosen before its parameters", test_machine_choice_conflicts },
        { "simulated faults", test_fault_catalogue },
        { "faults the assembler prevents", test_faults_the_assembler_prevents },
        { "runaway program stops at the cycle limit", test_runaway_program_stops_at_limit },
        { "no output file left behind", test_no_output_left_behind },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        CU_add_test(s, cases[i].name, cases[i].fn);
}
