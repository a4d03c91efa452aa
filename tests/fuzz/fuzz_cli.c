/*
 * fuzz_cli.c — the libFuzzer harness of the `cli` target (fuzz_cli.h):
 * linked with -Wl,--wrap=exit, so that exit() while a command runs goes
 * back to the harness instead of ending the fuzzer.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdnoreturn.h>

#define FUZZ_CLI_IN_PROCESS 1
#include "fuzz_targets.h"

noreturn void __real_exit(int status);
noreturn void __wrap_exit(int status);

noreturn void __wrap_exit(int status)
{
    if (fuzz_cli_running) {
        fuzz_cli_exit_status = status;
        longjmp(fuzz_cli_jump, 1);
    }
    __real_exit(status);
}

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
    return fuzz_cli_one(data, size);
}
