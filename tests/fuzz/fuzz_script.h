/*
 * fuzz_script.h — the `script` fuzz target: bytes as a debugger command
 * file, run as `ipusim debug -x FILE` runs it (`source FILE` on a fresh
 * debugger over the two-tile program of fuzz_program_targets.h): lines up
 * to the first error, comments, blank lines, NUL bytes, nested `source`.
 * The result must be DEBUGGER_OK, DEBUGGER_QUIT, or DEBUGGER_ERROR with
 * output ending in one "error: ..." line.  Inputs naming a device or /proc
 * file (which `source` would read from) are skipped.  Included by
 * fuzz_targets.h after fuzz_program_targets.h.
 */
#ifndef IPUSIM_FUZZ_SCRIPT_H
#define IPUSIM_FUZZ_SCRIPT_H

#include "sim/debugger/debugger.h"

#define FUZZ_SCRIPT_MAX_BYTES 8192
#define FUZZ_SCRIPT_CYCLES 200000u

/* Whether the bytes hold the text s. */
static bool fuzz_holds(const uint8_t *data, size_t size, const char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; i + n <= size; i++)
        if (!memcmp(data + i, s, n))
            return true;
    return false;
}

static int fuzz_script_one(const uint8_t *data, size_t size)
{
    if (size > FUZZ_SCRIPT_MAX_BYTES || fuzz_holds(data, size, "dev/") || fuzz_holds(data, size, "proc/") ||
        fuzz_holds(data, size, "fd/"))
        return 0;
    const char *path = fuzz_scratch_file(data, size);
    if (!path)
        return 0;
    char err[1024] = "";
    debugger_options o = { .max_cycles = FUZZ_SCRIPT_CYCLES, .threads = 1 };
    debugger *d = debugger_new(fuzz_machine(), fuzz_chip_program(), "fuzz.elf", &o, err, sizeof err);
    if (!d)
        fuzz_fail("script", "debugger_new failed", err);
    char line[128];
    snprintf(line, sizeof line, "source %s", path);
    char *out_text = NULL;
    size_t out_len = 0;
    FILE *out = open_memstream(&out_text, &out_len);
    if (out) {
        enum debugger_result r = debugger_execute(d, line, out);
        fclose(out);
        if (r == DEBUGGER_ERROR) {
            const char *last = out_len ? out_text + out_len - 1 : out_text;
            const char *line_start = out_text;
            for (const char *q = out_text; q < last; q++)
                if (*q == '\n')
                    line_start = q + 1;
            if (out_len == 0 || *last != '\n' || strncmp(line_start, "error: ", 7))
                fuzz_fail("script", "a script that failed did not end with one 'error: ' line", out_text);
        } else if (r != DEBUGGER_OK && r != DEBUGGER_QUIT) {
            fuzz_fail("script", "unknown result", out_text);
        }
        free(out_text);
    }
    debugger_free(d);
    return 0;
}

#endif
