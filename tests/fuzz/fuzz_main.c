/*
 * fuzz_main.c — the libFuzzer harness of one target of fuzz_targets.h,
 * chosen at compile time: -DFUZZ_ENTRY=fuzz_asm_one builds the assembler
 * fuzzer, and so on (tests/fuzz/CMakeLists.txt builds one per target).
 */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_targets.h"

#ifndef FUZZ_ENTRY
#error "define FUZZ_ENTRY to one of the entry points of fuzz_targets.h"
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    (void)fuzz_targets;
    isa_init();
    (void)fuzz_machine();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return FUZZ_ENTRY(data, size);
}
