/*
 * fuzz_program_targets.h — the fuzz targets of what a run reads besides the
 * executable's code: the machine description (--config FILE.json, --set
 * NAME=VALUE), the tensor map blob, --input tensor files, whole-chip
 * programs on the engine, and ONNX models through the compiler.  Included
 * by fuzz_targets.h, whose table names them:
 *
 *   config  bytes as a --config file (machine_load_config, read from a
 *           scratch file); failure must come with a message naming the
 *           file; an accepted machine runs a small two-tile program with
 *           exchange and syncs on the engine for a bounded number of cycles.
 *   set     lines as --set assignments (machine_set) on a gc200, one after
 *           another; a refused one must say why; the machine then runs the
 *           same program.
 *   tmap    bytes as a tensor map blob (tmap_decode); failure must come with
 *           a message "fuzz.tmap: ..."; a map that reads is looked up,
 *           permuted both ways, encoded again and read back.
 *   input   byte 0 picks an input tensor of a small compiled matmul program,
 *           the rest is its --input file (program_set_input), the other
 *           inputs get their synthetic values, the program runs to its end
 *           and every output is read.
 *   chip    bytes as an executable run on a gc200 as `ipusim run` does
 *           (engine_new, its tensor map, engine_run) with a low cycle
 *           limit: control programs, exchange, syncs and host streams.
 *   lower   bytes as an ONNX model through import, fusion, decomposition and
 *           the lowering for the first FUZZ_LOWER_TILES tiles of a gc200, as
 *           `ipusim compile` does.
 */
#ifndef IPUSIM_FUZZ_PROGRAM_TARGETS_H
#define IPUSIM_FUZZ_PROGRAM_TARGETS_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frontends/decompose.h"
#include "frontends/fusion.h"
#include "frontends/lower.h"
#include "frontends/onnx_import.h"
#include "isa/asm/asm.h"
#include "sim/engine/engine.h"
#include "sim/engine/program_io.h"
#include "sim/program/machine.h"
#include "sim/program/tensor_map.h"
#include "workloads/models/models.h"

#define FUZZ_CHIP_CYCLES 50000u       /* cycles a whole-chip program may run */
#define FUZZ_LOWER_TILES 8u           /* tiles the lowering may use */
#define FUZZ_SET_LINES 16u            /* --set assignments one input may make */
#define FUZZ_PERMUTE_MAX_BYTES (1u << 20)

/* A scratch file holding the input, for the readers that take a path: one
 * per process, removed at exit. */
static char fuzz_scratch_path[64];

static void fuzz_scratch_remove(void)
{
    if (fuzz_scratch_path[0])
        unlink(fuzz_scratch_path);
}

static const char *fuzz_scratch_file(const uint8_t *data, size_t size)
{
    if (!fuzz_scratch_path[0]) {
        const char *dir = getenv("TMPDIR");
        snprintf(fuzz_scratch_path, sizeof fuzz_scratch_path, "%.40s/ipusim-fuzz-XXXXXX", dir ? dir : "/tmp");
        int fd = mkstemp(fuzz_scratch_path);
        if (fd < 0) {
            fuzz_scratch_path[0] = 0;
            return NULL;
        }
        close(fd);
        atexit(fuzz_scratch_remove);
    }
    FILE *f = fopen(fuzz_scratch_path, "wb");
    if (!f)
        return NULL;
    bool ok = fwrite(data, 1, size, f) == size;
    ok &= fclose(f) == 0;
    return ok ? fuzz_scratch_path : NULL;
}

/* Two tiles, each with workers, a send to the other, syncs of both zones
 * and a host stream: what a machine description changes the timing of. */
static const char fuzz_chip_src[] =
    ".macro TILE t, next\n"
    " .tile \\t\n"
    " .text\n"
    "__supervisor:\n"
    " setzi $m1, worker\n"
    " setzi $m2, counts\n"
    " setzi $m4, 16\n"
    " runall $m1, $m2, $m4\n"
    " sync 0\n"
    " setzi $m3, sbuf\n"
    " setzi $m5, \\next\n"
    " setzi $m6, rbuf\n"
    " xsend $m3, $m4, $m5\n"
    " xrecv $m6, $m4, $m5\n"
    " sync 1\n"
    " sync 2\n"
    " exitz $mzero\n"
    "worker:\n"
    " setzi $m0, 3\n"
    "1: add $m2, $m2, 1\n"
    " brnzdec $m0, 1b\n"
    " exitz $mzero\n"
    " .data\n"
    "sbuf: .word \\t, 2, 3, 4\n"
    "rbuf: .space 16\n"
    "counts: .space 96\n"
    ".endm\n"
    "TILE 0, 1\n"
    "TILE 1, 0\n";

/* Run e on m for at most max_cycles; every stop but the end must say why. */
static void fuzz_run_engine(const char *target, const machine *m, const ipu_exe *e, uint64_t max_cycles)
{
    char err[1024] = "";
    engine *g = engine_new(m, e, err, sizeof err);
    if (!g) {
        if (!err[0])
            fuzz_fail(target, "engine_new failed without a message", NULL);
        return;
    }
    engine_options o = { .max_cycles = max_cycles, .threads = 1 };
    enum engine_status st = engine_run(g, &o);
    if (st != ENGINE_DONE && !engine_message(g)[0])
        fuzz_fail(target, "the run stopped without a message", NULL);
    if (st == ENGINE_PAUSED)
        fuzz_fail(target, "engine_run paused with no pause conditions", NULL);
    engine_free(g);
}

static const ipu_exe *fuzz_chip_program(void)
{
    static ipu_exe *e;
    if (!e) {
        char err[1024];
        e = asm_assemble_string(fuzz_chip_src, "fuzz_chip.S", NULL, err, sizeof err);
        if (!e)
            fuzz_fail("machine", "the two-tile program does not assemble", err);
    }
    return e;
}

/* An accepted machine: every parameter a finite number within its range. */
static void fuzz_check_machine(const char *target, const machine *m)
{
    for (int p = 0; p < MP_COUNT; p++)
        if (!isfinite(m->value[p]) || m->value[p] < machine_params[p].min || m->value[p] > machine_params[p].max)
            fuzz_fail(target, "an accepted machine has a parameter out of its range", machine_params[p].name);
}

static int fuzz_config_one(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_INPUT_BYTES)
        return 0;
    const char *path = fuzz_scratch_file(data, size);
    if (!path)
        return 0;
    machine m;
    char err[1024] = "";
    if (!machine_preset("gc200", &m, err, sizeof err))
        fuzz_fail("config", "no gc200 preset", err);
    if (!machine_load_config(&m, path, err, sizeof err)) {
        char prefix[80];           /* "F: ..." or "F:LINE:COL: ..." */
        snprintf(prefix, sizeof prefix, "%s:", path);
        fuzz_check_message("config", err, prefix);
        return 0;
    }
    fuzz_check_machine("config", &m);
    fuzz_run_engine("config", &m, fuzz_chip_program(), FUZZ_CHIP_CYCLES);
    return 0;
}

static int fuzz_set_one(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    machine m;
    char err[1024] = "";
    if (!machine_preset("gc200", &m, err, sizeof err))
        fuzz_fail("set", "no gc200 preset", err);
    char *p = text;
    for (unsigned n = 0; n < FUZZ_SET_LINES && p; n++) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = 0;
        err[0] = 0;
        if (!machine_set(&m, p, err, sizeof err) && !err[0])
            fuzz_fail("set", "a refused assignment without a message", p);
        p = nl ? nl + 1 : NULL;
    }
    free(text);
    fuzz_check_machine("set", &m);
    fuzz_run_engine("set", &m, fuzz_chip_program(), FUZZ_CHIP_CYCLES);
    return 0;
}

static int fuzz_tmap_one(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_INPUT_BYTES)
        return 0;
    char err[1024] = "";
    tensor_map *m = tmap_decode(data, size, "fuzz.tmap", err, sizeof err);
    if (!m) {
        fuzz_check_message("tmap", err, "fuzz.tmap: ");
        return 0;
    }
    for (size_t i = 0; i < m->n_tensors; i++) {
        const tmap_tensor *t = &m->tensors[i];
        if (tmap_find(m, t->name) == NULL)
            fuzz_fail("tmap", "a tensor of the map is not found by name", t->name);
        (void)tmap_dtype_name(t->dtype);
        (void)tmap_is_identity(t);
        uint64_t bytes = tmap_elements(t) * t->element_bytes;
        if (bytes == 0 || bytes > FUZZ_PERMUTE_MAX_BYTES || t->element_bytes > 16)
            continue;
        uint8_t *a = calloc(1, (size_t)bytes), *b = malloc((size_t)bytes);
        if (a && b) {
            tmap_permute(t, a, b, true);
            tmap_permute(t, b, a, false);
        }
        free(a);
        free(b);
    }
    uint8_t *again = NULL;
    size_t again_size = 0;
    if (tmap_encode(m, &again, &again_size)) {
        tensor_map *m2 = tmap_decode(again, again_size, "fuzz.tmap", err, sizeof err);
        if (!m2)
            fuzz_fail("tmap", "an encoded map does not read back", err);
        tmap_free(m2);
        free(again);
    }
    tmap_free(m);
    return 0;
}

/* A small compiled program with its tensor map: matmul:4x4x4 on four tiles. */
static struct fuzz_compiled {
    machine m;
    ipu_exe *e;
    tensor_map *tmap;
    const tmap_tensor *inputs[8], *outputs[8];
    unsigned n_inputs, n_outputs;
} fuzz_compiled;

static const struct fuzz_compiled *fuzz_compiled_program(void)
{
    struct fuzz_compiled *c = &fuzz_compiled;
    if (c->e)
        return c;
    char err[4096];
    if (!machine_preset("gc200", &c->m, err, sizeof err))
        fuzz_fail("input", "no gc200 preset", err);
    graph *g = models_build("matmul:4x4x4", err, sizeof err);
    if (!g || !decompose_graph(g, NULL, err, sizeof err))
        fuzz_fail("input", "matmul:4x4x4 does not build", err);
    lower_options o = { .machine = &c->m, .tiles = 4 };
    lower_report rep;
    c->e = lower_graph(g, &o, &rep, err, sizeof err);
    graph_free(g);
    if (!c->e)
        fuzz_fail("input", "matmul:4x4x4 does not compile", err);
    c->tmap = program_tensor_map(c->e, "fuzz.elf", err, sizeof err);
    if (!c->tmap)
        fuzz_fail("input", "the compiled program has no tensor map", err);
    for (size_t i = 0; i < c->tmap->n_tensors; i++) {
        const tmap_tensor *t = &c->tmap->tensors[i];
        if ((t->role & TMAP_INPUT) && c->n_inputs < 8)
            c->inputs[c->n_inputs++] = t;
        if ((t->role & TMAP_OUTPUT) && c->n_outputs < 8)
            c->outputs[c->n_outputs++] = t;
    }
    if (!c->n_inputs || !c->n_outputs)
        fuzz_fail("input", "the compiled program has no inputs or outputs", NULL);
    return c;
}

static int fuzz_input_one(const uint8_t *data, size_t size)
{
    if (size == 0 || size > FUZZ_MAX_INPUT_BYTES)
        return 0;
    const struct fuzz_compiled *c = fuzz_compiled_program();
    const tmap_tensor *t = c->inputs[data[0] % c->n_inputs];
    char err[1024] = "";
    engine *g = engine_new(&c->m, c->e, err, sizeof err);
    if (!g)
        fuzz_fail("input", "the compiled program does not load", err);
    if (!program_set_input(g, t, data + 1, size - 1, err, sizeof err)) {
        if (!err[0])
            fuzz_fail("input", "program_set_input failed without a message", NULL);
    } else {
        const char *given[1] = { t->name };
        if (!program_fill_inputs(g, c->tmap, given, 1, NULL, "", err, sizeof err))
            fuzz_fail("input", "the other inputs are not filled", err);
        engine_options o = { .threads = 1, .max_cycles = 1000000 };
        if (engine_run(g, &o) != ENGINE_DONE)
            fuzz_fail("input", "the compiled program did not run to its end", engine_message(g));
        for (unsigned k = 0; k < c->n_outputs; k++) {
            void *out = malloc((size_t)program_tensor_bytes(c->outputs[k]));
            if (out && !program_read_output(g, c->outputs[k], out, err, sizeof err))
                fuzz_fail("input", "an output does not read", err);
            free(out);
        }
    }
    engine_free(g);
    return 0;
}

static int fuzz_chip_one(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_INPUT_BYTES)
        return 0;
    char err[1024] = "";
    ipu_exe *e = exe_read_memory(data, size, "fuzz.elf", err, sizeof err);
    if (!e)
        return 0;
    const machine *m = fuzz_machine();
    tensor_map *tmap = program_tensor_map(e, "fuzz.elf", err, sizeof err);
    if (!tmap && err[0])
        fuzz_check_message("chip", err, "fuzz.elf: ");
    model_record mr;
    err[0] = 0;
    if (!program_model_record(e, "fuzz.elf", &mr, err, sizeof err))
        fuzz_check_message("chip", err, "fuzz.elf: section .ipusim.model: ");
    engine *g = engine_new(m, e, err, sizeof err);
    if (!g) {
        if (!err[0])
            fuzz_fail("chip", "engine_new failed without a message", NULL);
    } else {
        if (tmap && !program_fill_inputs(g, tmap, NULL, 0, NULL, "", err, sizeof err) && !err[0])
            fuzz_fail("chip", "program_fill_inputs failed without a message", NULL);
        engine_options o = { .max_cycles = FUZZ_CHIP_CYCLES, .threads = 1 };
        enum engine_status st = engine_run(g, &o);
        if (st != ENGINE_DONE && !engine_message(g)[0])
            fuzz_fail("chip", "the run stopped without a message", NULL);
        if (st == ENGINE_DONE && tmap) {
            for (size_t i = 0; i < tmap->n_tensors; i++) {
                const tmap_tensor *t = &tmap->tensors[i];
                uint64_t bytes = program_tensor_bytes(t);
                if (!(t->role & TMAP_OUTPUT) || bytes > FUZZ_PERMUTE_MAX_BYTES)
                    continue;
                void *out = malloc(bytes ? (size_t)bytes : 1);
                if (out && !program_read_output(g, t, out, err, sizeof err) && !err[0])
                    fuzz_fail("chip", "program_read_output failed without a message", NULL);
                free(out);
            }
        }
        engine_free(g);
    }
    tmap_free(tmap);
    exe_free(e);
    return 0;
}

static int fuzz_lower_one(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_INPUT_BYTES || !onnx_available())
        return 0;
    enum onnx_status status = ONNX_OK;
    char err[4096] = "";
    graph *g = onnx_import_buffer("fuzz.onnx", data, size, NULL, &status, err, sizeof err);
    if (!g) {
        fuzz_check_message("lower", err, "fuzz.onnx: ");
        return 0;
    }
    if (!fusion_run_all(g, NULL, err, sizeof err)) {
        fuzz_check_message("lower", err, "");
    } else if (!decompose_graph(g, NULL, err, sizeof err)) {
        fuzz_check_message("lower", err, "");
    } else {
        lower_options o = { .machine = fuzz_machine(), .tiles = FUZZ_LOWER_TILES };
        lower_report rep;
        err[0] = 0;
        ipu_exe *e = lower_graph(g, &o, &rep, err, sizeof err);
        if (!e)
            fuzz_check_message("lower", err, "");
        exe_free(e);
    }
    graph_free(g);
    return 0;
}

#endif
