/*
 * codelet_fixture.h — one GC200 tile for a codelet's tests: a library of
 * workloads/codelets (`source`, an .S file there) assembled with a
 * supervisor that starts `entry` on six worker records at rec_addr,
 * rec_step bytes apart (0: one record the six share), then syncs and ends.
 * The library's code must lie below 0x50000 and its data below rec_addr,
 * where the tests put their records and tensors.
 *
 *   ipu_exe *e; ipu_tile *t;
 *   codelet_tile_load(&e, &t, "elementwise.S", "vtx_add_f32", 0x81000, 64);
 *   ... tmem_write_bytes(&t->s.mem, ...); tile_run_alone(t, ...); ...
 *   codelet_tile_free(&e, &t);
 *
 * Header-only (static inline), for the test_codelets_* files.
 */
#ifndef IPUSIM_TESTS_CODELET_FIXTURE_H
#define IPUSIM_TESTS_CODELET_FIXTURE_H

#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>

#include "isa/asm/asm.h"
#include "sim/engine/tile.h"
#include "sim/program/machine.h"

static inline void codelet_tile_load(ipu_exe **e, ipu_tile **t, const char *source, const char *entry,
                                     unsigned rec_addr, unsigned rec_step)
{
    char text[1024], err[4096];
    snprintf(text, sizeof text,
             "    .include \"workloads/codelets/%s\"\n"
             "    .section .text.test_supervisor, \"ax\"\n"
             "    .align 8\n"
             "    .globl __supervisor\n"
             "    .supervisor\n"
             "__supervisor:\n"
             "    setzi  $m5, 0x%x\n"
             "    setzi  $m6, %u\n"
             "    setzi  $m7, %s\n"
             "    runall $m7, $m5, $m6\n"
             "    sync   0\n"
             "    exitz  $mzero\n",
             source, rec_addr, rec_step, entry);
    const char *dirs[] = { IPUSIM_SOURCE_DIR };
    asm_options opt = { .include_dirs = dirs, .n_include_dirs = 1 };
    *e = asm_assemble_string(text, "codelet_test.S", &opt, err, sizeof err);
    if (!*e) {
        fprintf(stderr, "\nassembly failed:\n%s\n", err);
        CU_FAIL_FATAL("the codelet library does not assemble");
    }
    machine mach;
    CU_ASSERT_TRUE_FATAL(machine_preset("gc200", &mach, err, sizeof err));
    *t = calloc(1, sizeof **t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(*t);
    CU_ASSERT_TRUE_FATAL(tile_init(*t, &mach, 0));
    if (!tile_load(*t, *e, err, sizeof err)) {
        fprintf(stderr, "\nload failed: %s\n", err);
        CU_FAIL_FATAL("load failed");
    }
    /* The test's records and tensors must not overlap the library. */
    for (size_t i = 0; i < (*e)->n_sections; i++) {
        const exe_section *s = &(*e)->sections[i];
        uint32_t limit = (s->flags & EXE_SEC_EXEC) ? 0x50000u : rec_addr;
        CU_ASSERT_TRUE_FATAL(s->addr + s->size <= limit);
    }
}

static inline void codelet_tile_free(ipu_exe **e, ipu_tile **t)
{
    if (*t) {
        tile_free(*t);
        free(*t);
    }
    exe_free(*e);
    *t = NULL;
    *e = NULL;
}

#endif
