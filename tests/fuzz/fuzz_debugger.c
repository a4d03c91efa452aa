/*
 * fuzz_debugger.c — libFuzzer harness for the debugger's command
 * interpreter (sim/debugger/debugger.h): the input is lines of commands, run one
 * after another (at most FUZZ_DEBUGGER_LINES of them) on a fresh debugger
 * over a small two-tile program with workers, exchange and syncs, with a
 * low cycle limit and `source` disabled.  Every line must give DEBUGGER_OK,
 * DEBUGGER_QUIT, or DEBUGGER_ERROR with exactly one line "error: ...".
 *
 * Built by tests/fuzz/CMakeLists.txt as fuzz_debugger; tests/test_debugger.c
 * includes this file with FUZZ_DEBUGGER_NO_MAIN to replay the corpus
 * (tests/fuzz/corpus/debugger) and the saved crashers
 * (tests/fuzz/regressions/debugger) under ctest.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/asm/asm.h"
#include "isa/isa.h"
#include "sim/debugger/debugger.h"
#include "sim/program/machine.h"

#define FUZZ_DEBUGGER_LINES 48
#define FUZZ_DEBUGGER_MAX_BYTES 8192
#define FUZZ_DEBUGGER_CYCLES 200000u

static const char fuzz_debugger_src[] =
    ".macro TILE t, next, prev\n"
    " .tile \\t\n"
    " .text\n"
    "__supervisor:\n"
    " setzi $m8, 2\n"
    " setzi $m1, worker\n"
    " setzi $m2, counts\n"
    " setzi $m3, sbuf\n"
    " setzi $m4, 16\n"
    " setzi $m5, \\next\n"
    " setzi $m6, rbuf\n"
    " setzi $m7, \\prev\n"
    "loop:\n"
    " runall $m1, $m2, $m4\n"
    " sync 0\n"
    " xsend $m3, $m4, $m5\n"
    " xrecv $m6, $m4, $m7\n"
    " sync 1\n"
    " add $m8, $m8, -1\n"
    " brnz $m8, loop\n"
    " exitz $mzero\n"
    "worker:\n"
    " setzi $m0, 3\n"
    "1: add $m2, $m2, 1\n"
    " brnzdec $m0, 1b\n"
    " st32 $m2, $m13, $mzero, 0\n"
    " exitz $mzero\n"
    " .data\n"
    "sbuf: .word \\t, \\t, \\t, \\t\n"
    "rbuf: .space 16\n"
    "counts: .space 96\n"
    ".endm\n"
    "TILE 0, 1, 1\n"
    "TILE 1, 0, 0\n";

static void fuzz_debugger_fail(const char *what, const char *line, const char *text)
{
    fprintf(stderr, "fuzz debugger: %s\nline: %s\noutput:\n%s\n", what, line, text ? text : "");
    abort();
}

static int fuzz_debugger_one(const uint8_t *data, size_t size)
{
    static ipu_exe *exe;
    static machine m;
    if (!exe) {
        char err[1024];
        isa_init();
        exe = asm_assemble_string(fuzz_debugger_src, "fuzz.S", NULL, err, sizeof err);
        if (!exe || !machine_preset("gc200", &m, err, sizeof err))
            fuzz_debugger_fail("cannot set up", "", err);
    }
    if (size > FUZZ_DEBUGGER_MAX_BYTES)
        return 0;
    char err[1024];
    debugger_options o = { .max_cycles = FUZZ_DEBUGGER_CYCLES, .threads = 1, .no_files = true };
    debugger *d = debugger_new(&m, exe, "fuzz.elf", &o, err, sizeof err);
    if (!d)
        fuzz_debugger_fail("debugger_new failed", "", err);
    char *text = malloc(size + 1);
    if (!text) {
        debugger_free(d);
        return 0;
    }
    memcpy(text, data, size);
    text[size] = 0;
    char *p = text;
    for (unsigned n = 0; n < FUZZ_DEBUGGER_LINES && p <= text + size; n++) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = 0;
        char *out_text = NULL;
        size_t out_len = 0;
        FILE *out = open_memstream(&out_text, &out_len);
        if (!out)
            break;
        enum debugger_result r = debugger_execute(d, p, out);
        fclose(out);
        if (r == DEBUGGER_ERROR) {
            const char *last = out_len ? out_text + out_len - 1 : out_text;
            const char *line_start = out_text;
            for (const char *q = out_text; q < last; q++)
                if (*q == '\n')
                    line_start = q + 1;
            if (strncmp(line_start, "error: ", 7) || out_len == 0 || *last != '\n')
                fuzz_debugger_fail("a refused command did not end with one 'error: ' line", p, out_text);
        } else if (r != DEBUGGER_OK && r != DEBUGGER_QUIT) {
            fuzz_debugger_fail("unknown result", p, out_text);
        }
        free(out_text);
        if (r == DEBUGGER_QUIT || !nl)
            break;
        p = nl + 1;
    }
    free(text);
    debugger_free(d);
    return 0;
}

#ifndef FUZZ_DEBUGGER_NO_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_debugger_one(data, size);
}
#endif
