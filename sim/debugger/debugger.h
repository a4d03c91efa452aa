/*
 * debugger.h — the ipusim debugger's command interpreter: breakpoints on a
 * tile's pc, a symbol, a superstep or a cycle, watchpoints on tile memory,
 * stepping one issue, registers, memory, tensors by name, disassembly with
 * symbols and source lines, and the engine's statistics so far.
 *
 * It drives the system engine through its stepping interface (engine.h:
 * engine_start / engine_continue), so a run with stops gives the same
 * cycles and results as `ipusim run`.  It knows nothing of terminals: a
 * command line goes in, text comes out on a FILE; `ipusim debug`
 * (frontends/cli/debug_cmd.c) adds readline, history and completion, and the tests
 * and the fuzzer call debugger_execute directly.
 *
 * Commands (aliases in brackets; `help` lists them, `help CMD` explains):
 *   run [r]                 start the program (again, from the beginning)
 *   continue [c] [N]        go on to the next stop (N times)
 *   stepi [si] [N]          N issues of the selected tile (any context)
 *   next-superstep [ns]     go on to the end of the next superstep
 *   break [b] TILE:ADDR | TILE:SYMBOL | SYMBOL | superstep N | cycle N
 *   watch [w] TILE:ADDR[:BYTES]
 *   delete [d] N | all
 *   info [i] breakpoints | tiles | registers [CONTEXT] | supersteps | exchange | display
 *   tile [t] T, context [ctx] sup | w1..w6
 *   print [p][/FMT] EXPR | $mN | $aN | $CSR | $pc | TENSOR [SLICE] | SYMBOL
 *                           EXPR: C-like (debugger_expr.h): registers, $lr,
 *                           $cycle, $superstep, *(f32*)ADDR, symbols,
 *                           TENSOR[i][j], casts, C's operators; FMT: x d u
 *                           o t c f a as gdb's
 *   display[/FMT] [EXPR]    shown now and at every stop; undisplay N | all
 *   x/NFMT ADDR             N units of x (hex word), d (decimal word),
 *                           f (f32), h (f16), b (byte), i (instruction)
 *                           from the selected tile; ADDR an expression
 *   disassemble [disas] [ADDR [N]]
 *   where [bt], stats, source FILE, help [h] [CMD], quit [q]
 * Every mistake is one line starting "error: " and changes nothing.
 *
 * A simulated exception stops the run at the faulting tile and context,
 * which become the selection; the run cannot go on (run starts it again).
 */
#ifndef IPUSIM_SIM_DEBUGGER_H
#define IPUSIM_SIM_DEBUGGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/engine/engine.h"
#include "isa/elf/executable.h"
#include "sim/program/machine.h"

typedef struct debugger debugger;

typedef struct debugger_options {
    uint64_t max_cycles;          /* engine_options.max_cycles (0: the engine's default) */
    int threads;                  /* host threads (0: OpenMP's default) */
    bool no_files;                /* refuse `source` (the fuzzer) */
    bool no_checkpoints;          /* take none: no going back (--checkpoint-every 0) */
    uint32_t checkpoint_every;    /* supersteps between checkpoints (0: as their cost allows, see
                                     DEBUGGER_CHECKPOINT_RUN_PER_TAKE) */
    uint64_t checkpoint_budget_bytes; /* their host memory (0: DEBUGGER_CHECKPOINT_BUDGET_BYTES) */
} debugger_options;

/* With no checkpoint_every, a checkpoint is taken at a superstep end once
 * the host time spent running since the last one is this many times what
 * taking the last one took: taking them and the pages copied after costs a few per cent of the run. */
#define DEBUGGER_CHECKPOINT_RUN_PER_TAKE 40
#define DEBUGGER_CHECKPOINT_BUDGET_BYTES (1024ull << 20)

enum debugger_result {
    DEBUGGER_OK,
    DEBUGGER_ERROR,               /* the command was refused: one "error: ..." line */
    DEBUGGER_QUIT,                /* quit */
};

/* A debugger for executable e (borrowed: it must outlive the debugger)
 * loaded onto machine m; `name` is the file name for messages.  NULL with
 * err when it does not load. */
debugger *debugger_new(const machine *m, const ipu_exe *e, const char *name, const debugger_options *o,
                       char *err, size_t err_size);
void debugger_free(debugger *d);

/* An input for the runs (--input): `what` is a host stream number or an
 * input tensor's name.  Checked now (tensor exists, size), used at every
 * run; inputs of a compiled program not given get random values. */
bool debugger_add_input(debugger *d, const char *what, const void *data, size_t size, char *err,
                        size_t err_size);
/* The same from a file, read within the tensor's size (a host stream's:
 * READ_LIMIT_HOST_STREAM); the errors name the file. */
bool debugger_add_input_file(debugger *d, const char *what, const char *path, char *err, size_t err_size);

/* Run one command line (leading/trailing blanks and "#" comments ignored;
 * an empty line does nothing). */
enum debugger_result debugger_execute(debugger *d, const char *line, FILE *out);

/* A run stops early when *flag becomes non-zero (SIGINT handler). */
void debugger_set_interrupt(debugger *d, volatile int *flag);

/* Completion of a command line being typed: the n-th (0, 1, ...) candidate
 * for the word that starts at line[start] and runs to the end of line,
 * following what the words before it are (a command name first, then the
 * kinds of argument the command takes: a location, an expression, a
 * context, info's topics, ...); NULL after the last.  *files is set when
 * the word is a file name (the caller completes those).  Fast at 100,000
 * symbols (the distinct names are sorted on the first call).  Owned by the
 * debugger, valid until it is freed. */
const char *debugger_complete(debugger *d, const char *line, size_t start, size_t n, bool *files);

/* What the tests look at. */
engine *debugger_engine(const debugger *d);
uint32_t debugger_tile(const debugger *d);
unsigned debugger_context(const debugger *d);

#endif
