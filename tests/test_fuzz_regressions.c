/*
 * test_fuzz_regressions.c — the fuzzers' inputs replayed without libFuzzer:
 * every file of tests/fuzz/corpus/<target>/ and tests/fuzz/regressions/
 * <target>/ goes through the same entry point the fuzzer uses
 * (tests/fuzz/fuzz_targets.h).  An input that once crashed ipusim crashes
 * this test if the bug comes back (under the sanitizer build, also one that
 * once read out of bounds or leaked).
 *
 * The ELF corpus is also fed to the tile and chip targets (as
 * tests/fuzz/run.sh does), and every regression of any target to every
 * other target: a file that broke one reader is worth throwing at the
 * others.  The cli target runs each input in a child process here (the
 * fuzzer runs it in its own, fuzz_cli.h).
 */
#include <CUnit/CUnit.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz_targets.h"
#include "sim/base/fileio.h"
#include "test_util.h"

#define FUZZ_DIR IPUSIM_SOURCE_DIR "/tests/fuzz"

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Feed every regular file of dir to entry, in name order; returns the
 * number of files fed (0 if the folder does not exist). */
static unsigned replay_dir(const char *dir, fuzz_entry entry)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    char *names[4096];
    unsigned n = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < 4096)
        if (de->d_name[0] != '.')
            names[n++] = strdup(de->d_name);
    closedir(d);
    qsort(names, n, sizeof *names, compare_names);
    unsigned fed = 0;
    for (unsigned i = 0; i < n; i++) {
        char path[4096], err[512];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        char *data;
        size_t size;
        if (read_whole_file(path, &data, &size, err, sizeof err)) {
            entry((const uint8_t *)data, size);
            free(data);
            fed++;
        } else {
            CU_FAIL("cannot read a corpus file");
            fprintf(stderr, "\n%s\n", err);
        }
        free(names[i]);
    }
    return fed;
}

static const struct fuzz_target *target(const char *name)
{
    for (size_t i = 0; i < FUZZ_N_TARGETS; i++)
        if (!strcmp(fuzz_targets[i].name, name))
            return &fuzz_targets[i];
    return NULL;
}

/* The seed corpora exist and every seed goes through its target. */
static void test_corpus(void)
{
    static const struct { const char *dir, *target; unsigned min_files; } seeds[] = {
        { "asm", "asm", 5 }, { "elf", "elf", 5 }, { "elf", "tile", 5 }, { "tile", "tile", 3 },
        { "code", "code", 4 }, { "onnx", "onnx", 5 }, { "config", "config", 3 }, { "set", "set", 3 },
        { "tmap", "tmap", 2 }, { "input", "input", 3 }, { "chip", "chip", 2 }, { "elf", "chip", 5 },
        { "lower", "lower", 5 }, { "script", "script", 3 }, { "cli", "cli", 5 },
    };
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        char dir[4096];
        snprintf(dir, sizeof dir, FUZZ_DIR "/corpus/%s", seeds[i].dir);
        const struct fuzz_target *t = target(seeds[i].target);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        unsigned fed = replay_dir(dir, t->entry);
        printf("\n    corpus/%s -> %s: %u inputs%s", seeds[i].dir, seeds[i].target, fed,
               (!strcmp(seeds[i].target, "onnx") || !strcmp(seeds[i].target, "lower")) && !onnx_available()
                   ? " (no ONNX support in this build: not imported)"
                   : "");
        CU_ASSERT(fed >= seeds[i].min_files);
    }
}

/* Every saved regression through its own target and the others. */
static void test_regressions(void)
{
    unsigned total = 0;
    for (size_t i = 0; i < FUZZ_N_TARGETS; i++) {
        char dir[4096];
        snprintf(dir, sizeof dir, FUZZ_DIR "/regressions/%s", fuzz_targets[i].name);
        for (size_t k = 0; k < FUZZ_N_TARGETS; k++) {
            unsigned fed = replay_dir(dir, fuzz_targets[k].entry);
            if (k == i) {
                printf("\n    regressions/%s: %u inputs", fuzz_targets[i].name, fed);
                total += fed;
            }
        }
    }
    CU_ASSERT(total > 0);
}

/* The entry points take the degenerate inputs a fuzzer starts from. */
static void test_degenerate_inputs(void)
{
    static const uint8_t nothing[1] = { 0 };
    static const uint8_t ones[16] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    static const uint8_t elf_magic[4] = { 0x7f, 'E', 'L', 'F' };
    for (size_t i = 0; i < FUZZ_N_TARGETS; i++) {
        fuzz_targets[i].entry(nothing, 0);
        fuzz_targets[i].entry(nothing, 1);
        fuzz_targets[i].entry(ones, sizeof ones);
        fuzz_targets[i].entry(elf_magic, sizeof elf_magic);
    }
    CU_PASS("no crash");
}

void test_register(void)
{
    ADD_SUITE("fuzz_regressions",
              { "seed corpora through their targets", test_corpus },
              { "saved crashes through every target", test_regressions },
              { "empty and degenerate inputs", test_degenerate_inputs });
}
