/*
 * codelet_library.c — assembles the built-in kernel library, once for each
 * start of tile memory.
 *
 * The sources are concatenated in file-name order into one assembly text
 * for tile 0; every codelet file keeps its labels and constants to its own
 * prefix (abi.h), so they do not collide.
 */
#include "codelet_library.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/asm/asm.h"
#include "isa/isa.h"

/* One library for each start of tile memory a process compiles for (the
 * code is placed from there): GC200/Bow's and GC2's, and any a machine
 * configuration sets. */
#define LIBRARY_BASES 8

static codelet_library the_library[LIBRARY_BASES];
static unsigned n_assembled;

const codelet_library *codelet_library_get(uint32_t memory_base, char *err, size_t err_size)
{
    for (unsigned i = 0; i < n_assembled; i++)
        if (the_library[i].memory_base == memory_base)
            return &the_library[i];
    if (n_assembled == LIBRARY_BASES) {
        snprintf(err, err_size, "kernel library: more than %u tile memory layouts in one run", LIBRARY_BASES);
        return NULL;
    }
    size_t total = 1;
    for (unsigned i = 0; i < codelet_source_count; i++)
        total += strlen(codelet_sources[i].text) + 64 + strlen(codelet_sources[i].name);
    char *text = malloc(total);
    if (!text) {
        snprintf(err, err_size, "kernel library: out of host memory");
        return NULL;
    }
    size_t at = 0;
    for (unsigned i = 0; i < codelet_source_count; i++)
        at += (size_t)snprintf(text + at, total - at, "// ---- %s\n%s\n", codelet_sources[i].name,
                               codelet_sources[i].text);
    char msg[2048];
    asm_options opt = { .memory_base = memory_base };
    ipu_exe *e = asm_assemble_string(text, "kernel-library.S", &opt, msg, sizeof msg);
    free(text);
    if (!e) {
        snprintf(err, err_size, "the kernel library does not assemble: %s", msg);
        return NULL;
    }
    uint32_t r0 = memory_base, r1 = ISA_REGION1_BASE;
    for (size_t i = 0; i < e->n_sections; i++) {
        const exe_section *s = &e->sections[i];
        uint32_t end = s->addr + s->size;
        if (s->addr < ISA_REGION1_BASE) {
            if (end > r0)
                r0 = end;
        } else if (end > r1) {
            r1 = end;
        }
    }
    codelet_library *lib = &the_library[n_assembled++];
    lib->image = e;
    lib->memory_base = memory_base;
    lib->region0_end = r0;
    lib->region1_end = r1;
    return lib;
}

bool codelet_library_symbol(const codelet_library *lib, const char *name, uint32_t *addr)
{
    const exe_symbol *s = exe_find_symbol(lib->image, name);
    if (!s)
        return false;
    *addr = s->addr;
    return true;
}
