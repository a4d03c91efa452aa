/*
 * debugger_fixture.h — what the debugger's CUnit tests share: a session (a
 * debugger over an executable and the output of its last command), running
 * one command into a string, and the checks on that output.
 */
#ifndef IPUSIM_TESTS_DEBUGGER_FIXTURE_H
#define IPUSIM_TESTS_DEBUGGER_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "isa/elf/executable.h"
#include "sim/debugger/debugger.h"
#include "sim/program/machine.h"

typedef struct session {
    ipu_exe *e;
    machine m;
    debugger *d;
    char *out;                    /* output of the last command */
    enum debugger_result r;
} session;

/* Run a command; its output is s->out until the next one. */
static inline const char *run_cmd(session *s, const char *cmd)
{
    free(s->out);
    s->out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s->out, &len);
    s->r = debugger_execute(s->d, cmd, f);
    fclose(f);
    return s->out;
}

static inline void close_session(session *s)
{
    free(s->out);
    debugger_free(s->d);
    exe_free(s->e);
}

/* The command's whole output is want. */
#define EXPECT_OUT(s, cmd, want)                                                                    \
    do {                                                                                            \
        const char *got_ = run_cmd(&(s), cmd);                                                      \
        if (strcmp(got_, want))                                                                     \
            fprintf(stderr, "\n'%s' gave:\n%s--- expected:\n%s---\n", cmd, got_, want);             \
        CU_ASSERT_STRING_EQUAL(got_, want);                                                         \
    } while (0)

/* The command's output contains want. */
#define EXPECT_HAS(s, cmd, want)                                                                    \
    do {                                                                                            \
        const char *got_ = run_cmd(&(s), cmd);                                                      \
        if (!strstr(got_, want))                                                                    \
            fprintf(stderr, "\n'%s' gave:\n%s--- expected it to contain:\n%s---\n", cmd, got_, want); \
        CU_ASSERT_PTR_NOT_NULL(strstr(got_, want));                                                 \
    } while (0)

#endif
