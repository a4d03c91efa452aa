/*
 * diag.h — the two kinds of failure, never mixed.
 *
 *   fatal()   the user's mistake: bad file, bad option, a program that does
 *             not fit.  One message "ipusim: <what>", exit status 1.
 *   panic()   ipusim's own bug: an invariant broken.  Message with the
 *             source file and line, then abort().
 *   warning() something worth saying that does not stop the run.
 *
 * Library code (everything but frontends/cli/main.c and the command handlers) reports
 * user errors by returning false with a message buffer, so the debugger can
 * carry on after a bad command; only the command line front door calls
 * fatal().
 */
#ifndef IPUSIM_DIAG_H
#define IPUSIM_DIAG_H

#include <stdnoreturn.h>

noreturn void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
noreturn void panic_at(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define panic(...) panic_at(__FILE__, __LINE__, __VA_ARGS__)

/* Invariant checks that stay in release builds: cheap and worth it. */
#define ALWAYS(cond) ((cond) ? (void)0 : panic("invariant failed: %s", #cond))

#endif
