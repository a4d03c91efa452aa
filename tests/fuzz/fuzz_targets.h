/*
 * fuzz_targets.h — what the fuzzers feed, one entry point per target,
 * shared by the libFuzzer harness (tests/fuzz/fuzz_main.c, built once per
 * target as fuzz_asm, fuzz_elf, ...) and by the ctest
 * program that replays the corpora and the saved crashes without libFuzzer
 * (tests/test_fuzz_regressions.c).
 *
 *   asm    bytes as assembly source (.include refused).  Failure must come
 *          with a message "fuzz.S:LINE:COL: error: ..."; success is
 *          disassembled again (the disassembler must take whatever the
 *          assembler makes).
 *   elf    bytes as an executable image (exe_read_memory).  Failure must
 *          come with a message "fuzz.elf: ..."; success is looked up
 *          (symbols, lines) and disassembled.
 *   tile   bytes as an executable image; each tile of it that reads is
 *          loaded on a GC200 tile and run for a bounded number of cycles.
 *          A load error must say what is wrong; a fault must be described.
 *   code   bytes as raw instruction words placed at the start of region 0
 *          of tile 0 (the supervisor starts at the first word), with a
 *          region 1 data section, run for a bounded number of cycles: the
 *          cheapest way to reach every executor with hostile operands.
 *   onnx   bytes as an ONNX model (onnx_import_buffer: parse, shape
 *          inference, constant folding).  Failure must come with a status
 *          other than ONNX_OK and a message "fuzz.onnx: ...".  Nothing to
 *          do in a build without ONNX support.
 *   config, set, tmap, input, chip, lower
 *          the machine description, the tensor map, input tensor files,
 *          whole-chip programs and ONNX models through the compiler
 *          (fuzz_program_targets.h);
 *   script a debugger command file, as `source` and `ipusim debug -x` read
 *          it (fuzz_script.h);
 *   cli    the command line, through the subcommands (fuzz_cli.h).
 *
 * A broken promise (no message, a message of the wrong form) calls
 * fuzz_fail(), which aborts so that libFuzzer keeps the input.  Every entry
 * point frees all it allocates, so LeakSanitizer finds leaks.
 *
 * IPUSIM_FUZZ_SKIP_KNOWN=1 in the environment skips inputs that reach a
 * bug already found and saved in tests/fuzz/regressions/ but not yet fixed,
 * so that a campaign can go on looking for new ones (fuzz_known_bug()
 * says which).  ctest replays the regressions without it.
 *
 * The functions are static so that each including program gets its own
 * copy with no link-time coupling to the fuzz build.
 */
#ifndef IPUSIM_FUZZ_TARGETS_H
#define IPUSIM_FUZZ_TARGETS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontends/onnx_import.h"
#include "isa/asm/asm.h"
#include "isa/asm/disasm.h"
#include "isa/isa.h"
#include "isa/elf/executable.h"
#include "sim/program/machine.h"
#include "sim/engine/tile.h"

/* Bounds that keep one input to milliseconds. */
#define FUZZ_MAX_INPUT_BYTES (256u * 1024u)
#define FUZZ_TILE_CYCLES 20000u       /* cycles each tile may run */
#define FUZZ_MAX_TILES 4u             /* tiles of one executable that are run */
#define FUZZ_CODE_MAX_BYTES 4096u     /* code bytes the `code` target takes */
#define FUZZ_CODE_DATA_ADDR 0x80000u  /* the `code` target's data section */
#define FUZZ_CODE_DATA_BYTES 4096u

typedef int (*fuzz_entry)(const uint8_t *data, size_t size);

static void fuzz_fail(const char *target, const char *what, const char *detail)
{
    fprintf(stderr, "fuzz %s: %s\n%s\n", target, what, detail ? detail : "");
    abort();
}

/* A message reports the problem it was built for: non-empty, starts with
 * the given prefix, and is text. */
static void fuzz_check_message(const char *target, const char *err, const char *prefix)
{
    if (!err[0])
        fuzz_fail(target, "failure without a message", NULL);
    if (strncmp(err, prefix, strlen(prefix)))
        fuzz_fail(target, "message does not start with the input's name", err);
}

/* Disassemble a whole executable into memory and throw the text away. */
static void fuzz_disassemble(const char *target, const ipu_exe *e)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out)
        return;                                  /* host out of memory: not a finding */
    char err[512] = "";
    bool ok = disasm_exe(e, out, err, sizeof err);
    fclose(out);
    free(text);
    if (!ok)
        fuzz_fail(target, "disasm_exe failed on an executable that was read or assembled", err);
}

static int fuzz_asm_one(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_INPUT_BYTES)
        return 0;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    asm_options opt = { .no_include = true };
    char err[4096] = "";
    ipu_exe *e = asm_assemble_string(text, "fuzz.S", &opt, err, sizeof err);
    free(text);
    if (!e) {
        fuzz_check_message("asm", err, "fuzz.S:");
        return 0;
    }
    fuzz_disassemble("asm", e);
    exe_free(e);
    return 0;
}

static void fuzz_lookups(const ipu_exe *e)
{
    for (size_t i = 0; i < e->n_sections && i < 64; i++) {
        const exe_section *s = &e->sections[i];
        const char *file;
        uint32_t line;
        (void)exe_symbol_at(e, s->tile, s->addr);
        (void)exe_line_at(e, s->tile, s->addr, &file, &line);
        (void)exe_line_at(e, s->tile, s->addr + s->size / 2, &file, &line);
        (void)exe_tile(e, s->tile);
    }
    for (size_t i = 0; i < e->n_symbols && i < 64; i++)
        if (exe_find_symbol(e, e->symbols[i].name) == NULL)
            fuzz_fail("elf", "a symbol of the table is not found by name", e->symbols[i].name);
}

static int fuzz_elf_one(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_INPUT_BYTES)
        return 0;
    char err[1024] = "";
    ipu_exe *e = exe_read_memory(data, size, "fuzz.elf", err, sizeof err);
    if (!e) {
        fuzz_check_message("elf", err, "fuzz.elf: ");
        return 0;
    }
    fuzz_lookups(e);
    fuzz_disassemble("elf", e);
    exe_free(e);
    return 0;
}

/* Open bugs that IPUSIM_FUZZ_SKIP_KNOWN=1 steps around, each with its
 * regression input.  None open now (regressions/{tile,code}/odd_register_pair.*
 * was fixed in isa_decode, which refuses odd pair and unaligned quad
 * fields). */
static bool fuzz_known_bug(const ipu_tile *t)
{
    (void)t;
    return false;
}

/* Load tile_id's part of e on a fresh tile of machine m and run it. */
static void fuzz_run_tile(const char *target, const ipu_exe *e, const machine *m, uint32_t tile_id)
{
    ipu_tile *t = calloc(1, sizeof *t);
    if (!t)
        return;
    if (!tile_init(t, m, tile_id)) {
        free(t);
        return;
    }
    char err[1024] = "";
    if (!tile_load(t, e, err, sizeof err)) {
        if (!err[0])
            fuzz_fail(target, "tile_load failed without a message", NULL);
    } else if (!fuzz_known_bug(t)) {
        enum tile_stop stop = tile_run_alone(t, FUZZ_TILE_CYCLES);
        if (stop == TILE_STOP_FAULT) {
            char msg[1024] = "";
            tile_describe_fault(t, e, msg, sizeof msg);
            if (strncmp(msg, "tile ", 5))
                fuzz_fail(target, "fault description does not name the tile", msg);
            if (t->s.fault.exception == ISA_EXC_UNIMPLEMENTED)
                fuzz_fail(target, "an instruction the table lists has no semantics", msg);
        } else if (stop != TILE_STOP_END && stop != TILE_STOP_LIMIT) {
            fuzz_fail(target, "tile_run_alone returned a sync stop", NULL);
        }
        if (t->s.cycle > FUZZ_TILE_CYCLES + 1)
            fuzz_fail(target, "the tile ran past its cycle limit", NULL);
    }
    tile_free(t);
    free(t);
}

static const machine *fuzz_machine(void)
{
    static machine m;
    static bool ready;
    if (!ready) {
        char err[256];
        if (!machine_preset("gc200", &m, err, sizeof err))
            fuzz_fail("machine", "no gc200 preset", err);
        ready = true;
    }
    return &m;
}

static int fuzz_tile_one(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_INPUT_BYTES)
        return 0;
    char err[1024] = "";
    ipu_exe *e = exe_read_memory(data, size, "fuzz.elf", err, sizeof err);
    if (!e)
        return 0;
    const machine *m = fuzz_machine();
    uint32_t n_tiles = machine_u32(m, MP_chips) * machine_u32(m, MP_tiles_per_chip);
    uint32_t done[FUZZ_MAX_TILES];
    unsigned n_done = 0;
    for (size_t i = 0; i < e->n_sections && n_done < FUZZ_MAX_TILES; i++) {
        uint32_t id = e->sections[i].tile;
        bool seen = id >= n_tiles;               /* `ipusim run` refuses these before loading */
        for (unsigned k = 0; k < n_done; k++)
            seen |= done[k] == id;
        if (seen)
            continue;
        done[n_done++] = id;
        fuzz_run_tile("tile", e, m, id);
    }
    exe_free(e);
    return 0;
}

static int fuzz_code_one(const uint8_t *data, size_t size)
{
    size_t code_bytes = size & ~(size_t)3;
    if (code_bytes == 0)
        return 0;
    if (code_bytes > FUZZ_CODE_MAX_BYTES)
        code_bytes = FUZZ_CODE_MAX_BYTES;
    ipu_exe *e = exe_new();
    if (!e)
        return 0;
    char err[512] = "";
    static uint8_t data_bytes[FUZZ_CODE_DATA_BYTES];
    for (unsigned i = 0; i < FUZZ_CODE_DATA_BYTES; i++)
        data_bytes[i] = (uint8_t)(i * 37u + 11u);
    if (exe_add_section(e, 0, ".text", ISA_REGION0_BASE, data, (uint32_t)code_bytes, EXE_SEC_EXEC, err,
                        sizeof err) &&
        exe_add_section(e, 0, ".data", FUZZ_CODE_DATA_ADDR, data_bytes, FUZZ_CODE_DATA_BYTES,
                        EXE_SEC_WRITE, err, sizeof err) &&
        exe_set_entry(e, 0, ISA_REGION0_BASE))
        fuzz_run_tile("code", e, fuzz_machine(), 0);
    exe_free(e);
    return 0;
}

static int fuzz_onnx_one(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_INPUT_BYTES || !onnx_available())
        return 0;
    enum onnx_status status = ONNX_OK;
    char err[1024] = "";
    graph *g = onnx_import_buffer("fuzz.onnx", data, size, NULL, &status, err, sizeof err);
    if (!g) {
        if (status == ONNX_OK)
            fuzz_fail("onnx", "import failed with status ONNX_OK", err);
        fuzz_check_message("onnx", err, "fuzz.onnx: ");
        return 0;
    }
    graph_free(g);
    return 0;
}

#include "fuzz_program_targets.h"
#include "fuzz_script.h"
#include "fuzz_cli.h"

/* The targets by name, for run.sh and the regression replay. */
static const struct fuzz_target {
    const char *name;
    fuzz_entry entry;
} fuzz_targets[] = {
    { "asm", fuzz_asm_one },
    { "elf", fuzz_elf_one },
    { "tile", fuzz_tile_one },
    { "code", fuzz_code_one },
    { "onnx", fuzz_onnx_one },
    { "config", fuzz_config_one },
    { "set", fuzz_set_one },
    { "tmap", fuzz_tmap_one },
    { "input", fuzz_input_one },
    { "chip", fuzz_chip_one },
    { "lower", fuzz_lower_one },
    { "script", fuzz_script_one },
    { "cli", fuzz_cli_one },
};
#define FUZZ_N_TARGETS (sizeof fuzz_targets / sizeof fuzz_targets[0])

#endif
