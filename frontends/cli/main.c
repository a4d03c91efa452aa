/*
 * main.c — the command line front door: one binary, subcommands from a
 * table (name, handler, one-line summary, usage), `--help` on each.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/isa.h"
#include "commands.h"

static const command commands[] = {
#define COMMAND(name, fn, summary, usage) { name, fn, summary, usage },
#include "commands.def"
#undef COMMAND
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void print_overview(FILE *out)
{
    fprintf(out, "ipusim %s: cycle-approximate simulator of Graphcore IPU systems\n\n"
                 "usage: ipusim COMMAND [ARGS...]   (ipusim COMMAND --help for details)\n\ncommands:\n",
            IPUSIM_VERSION);
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
}

/* The report written through: stdout flushed and closed, a failed write
 * (a full disk, a closed pipe) reported and the exit status 1. */
static int close_stdout(int rc)
{
    errno = 0;
    bool failed = fflush(stdout) != 0 || ferror(stdout);
    int e = errno;
    if (fclose(stdout) != 0 && !failed) {
        failed = true;
        e = errno;
    }
    if (!failed)
        return rc;
    fprintf(stderr, "ipusim: cannot write standard output: %s\n", e ? strerror(e) : "write error");
    return 1;
}

static int dispatch(int argc, char **argv);

int main(int argc, char **argv)
{
    isa_init();
    return close_stdout(dispatch(argc, argv));
}

/* The command argv[1] names, or the overview / help / version. */
static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        print_overview(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
        if (argc > 2) {
            for (size_t i = 0; i < N_COMMANDS; i++)
                if (!strcmp(commands[i].name, argv[2])) {
                    printf("usage: %s\n", commands[i].usage);
                    return 0;
                }
        }
        print_overview(stdout);
        return 0;
    }
    if (!strcmp(name, "--version")) {
        printf("ipusim %s\n", IPUSIM_VERSION);
        return 0;
    }
    for (size_t i = 0; i < N_COMMANDS; i++) {
        if (strcmp(commands[i].name, name))
            continue;
        for (int a = 2; a < argc; a++)
            if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h")) {
                printf("usage: %s\n", commands[i].usage);
                return 0;
            }
        return commands[i].fn(argc - 1, argv + 1, &commands[i]);
    }
    fprintf(stderr, "ipusim: unknown command '%s'\n\n", name);
    print_overview(stderr);
    return 2;
}
