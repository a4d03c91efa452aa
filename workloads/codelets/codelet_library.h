/*
 * codelet_library.h — the kernel library as compiled programs use it: the
 * sources of workloads/codelets/<group>.S (built into the binary by
 * workloads/codelets/embed.cmake) assembled once into one tile image
 * (workloads/codelets/abi.h), with its symbols.
 */
#ifndef IPUSIM_WORKLOADS_CODELET_LIBRARY_H
#define IPUSIM_WORKLOADS_CODELET_LIBRARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "isa/elf/executable.h"

typedef struct codelet_source {
    const char *name;                 /* file name, e.g. "supervisor.S" */
    const char *text;
} codelet_source;

/* Generated at build time. */
extern const codelet_source codelet_sources[];
extern const unsigned codelet_source_count;

typedef struct codelet_library {
    ipu_exe *image;                   /* sections of tile 0, as assembled */
    uint32_t memory_base;             /* the start of tile memory it was placed for (code from there) */
    uint32_t region0_end;             /* first free address above the code (region 0) */
    uint32_t region1_end;             /* first free address above its data (region 1) */
} codelet_library;

/* The library placed for tile memory from memory_base (machine_memory_base:
 * ISA_MEMORY_BASE on GC200/Bow), assembled on the first call for that base
 * (not thread-safe: call it from one thread); NULL with err set if it does
 * not assemble. */
const codelet_library *codelet_library_get(uint32_t memory_base, char *err, size_t err_size);

/* Address of a global symbol of the library; false if there is none. */
bool codelet_library_symbol(const codelet_library *lib, const char *name, uint32_t *addr);

#endif
