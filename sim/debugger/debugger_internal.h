/*
 * debugger_internal.h — what the files of the debugger's engine share: the
 * debugger's state (breakpoints, inputs, the selected tile and context),
 * the words of a command line, and the command functions the one command
 * table (debugger_commands.c) names.
 *
 * The files, by responsibility:
 *   debugger.c              the debugger's life: new, free, inputs, a fresh
 *                           engine and its start
 *   debugger_commands.c     the command table, dispatch of a command line,
 *                           help, source, quit and completion
 *   debugger_parse.c        reading a command's words (numbers, contexts,
 *                           addresses) and naming contexts and code places
 *   debugger_breakpoints.c  breakpoints and watchpoints, and the engine's
 *                           pause conditions made from them
 *   debugger_run.c          running: run, continue, stepi, next-superstep,
 *                           and matching the engine's pauses to breakpoints
 *   debugger_print.c        print, x/FMT, display: registers, memory, tensors,
 *                           expressions, disassembly
 *   debugger_expr.c         expressions (debugger_expr.h): parsed once,
 *                           evaluated on any tile and context
 *   debugger_info.c         selection (tile, context), where, info, stats
 *
 * A new command is a dbg_cmd_ function in the file of its responsibility,
 * declared below, and one line in the table of debugger_commands.c.
 */
#ifndef IPUSIM_SIM_DEBUGGER_INTERNAL_H
#define IPUSIM_SIM_DEBUGGER_INTERNAL_H

#include "debugger.h"

#include "debugger_expr.h"
#include "sim/program/tensor_map.h"

#define MAX_BREAKPOINTS 256
#define MAX_WATCH_BYTES 64
#define MAX_X_UNITS 4096
#define MAX_DISAS 1024
#define MAX_PRINT_ELEMENTS 4096
#define MAX_SOURCE_DEPTH 8
#define MAX_REPEAT 1000000000ull

enum bp_kind { BP_PC, BP_SUPERSTEP, BP_CYCLE, BP_WATCH };

typedef struct bp_loc {
    uint32_t tile, pc;
} bp_loc;

typedef struct breakpoint {
    int id;
    enum bp_kind kind;
    char spec[96];                /* as typed, for info breakpoints */
    bp_loc *locs;                 /* BP_PC */
    size_t n_locs;
    uint64_t n;                   /* BP_SUPERSTEP: index; BP_CYCLE: cycle */
    bool passed;                  /* BP_CYCLE: fired in this run */
    uint32_t tile, addr, bytes;   /* BP_WATCH */
    uint8_t value[MAX_WATCH_BYTES], old[MAX_WATCH_BYTES];
    uint64_t hits;
} breakpoint;

typedef struct dbg_input {
    char *what;
    uint8_t *data;
    size_t size;
} dbg_input;

struct debugger {
    machine m;
    const ipu_exe *e;
    char *name;
    debugger_options opt;
    tensor_map *tmap;
    engine *g;
    bool started;                 /* engine_start done on g */
    size_t ss_seen;               /* supersteps already matched against breakpoints */
    breakpoint bps[MAX_BREAKPOINTS];
    size_t n_bps;
    int next_id;
    int watch_hit;                /* id of the watchpoint whose bytes changed */
    dbg_input *inputs;
    size_t n_inputs;
    uint32_t tile;                /* selection */
    unsigned context;
    volatile int *interrupt;
    int depth;                    /* source nesting */
    char complete_buf[256];

    /* display (debugger_print.c): the expressions shown at every stop */
    struct dbg_display *displays;
    size_t n_displays, cap_displays;
    int last_display;             /* the number of the latest one */
};

/* ---- the engine's life (debugger.c) --------------------------------------- */

/* A fresh engine with the breakpoints set (not started). */
bool dbg_new_engine(debugger *d, char *err, size_t err_size);
/* Feed the inputs and start the engine. */
bool dbg_start(debugger *d, FILE *out);

/* ---- a command's words (debugger_parse.c) --------------------------------- */

/* One "error: ..." line on out; returns DEBUGGER_ERROR. */
enum debugger_result dbg_fail(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s past its leading blanks and tabs. */
const char *dbg_skip_blanks(const char *s);
/* Copy the next blank-separated word of *s into buf (truncated); false at
 * the end of the line. */
bool dbg_next_word(const char **s, char *buf, size_t n);
/* Whether only blanks are left in s. */
bool dbg_at_end(const char *s);
/* An unsigned number, decimal or 0x hex, the whole text. */
bool dbg_parse_u64(const char *s, uint64_t *v);
/* The same, at most UINT32_MAX. */
bool dbg_parse_u32(const char *s, uint32_t *v);
/* An optional repeat count. */
bool dbg_parse_count(const char *args, uint64_t *n, FILE *out);
/* "supervisor" or "worker N" for context k. */
const char *dbg_context_name(unsigned k, char *buf, size_t n);
/* sup, supervisor, 0, w1..w6 or 1..6 as a context number. */
bool dbg_parse_context(const char *s, unsigned *k);
/* The selected tile. */
const ipu_tile *dbg_cur_tile(const debugger *d);
/* The symbol of that name on a tile, or NULL. */
const exe_symbol *dbg_symbol_on_tile(const debugger *d, uint32_t tile, const char *name);
/* " <sym+0x4> (file.S:12)" or what of it is known. */
void dbg_symbolize(const debugger *d, uint32_t tile, uint32_t pc, char *buf, size_t n);
/* An address on a tile: a number, SYMBOL or SYMBOL+OFFSET. */
bool dbg_parse_addr(const debugger *d, uint32_t tile, const char *s, uint32_t *addr, FILE *out);

/* ---- breakpoints and watchpoints (debugger_breakpoints.c) ----------------- */

/* Read a watchpoint's bytes as they are now. */
void dbg_snapshot_watch(debugger *d, breakpoint *b);
/* The engine's pause conditions from the breakpoints. */
void dbg_configure(debugger *d, bool step, bool next_superstep);
/* The table of `info breakpoints`. */
void dbg_info_breakpoints(debugger *d, FILE *out);

/* ---- showing values and places (debugger_print.c) ------------------------- */

/* The instruction or bundle at pc; returns its bytes (4 or 8). */
size_t dbg_disasm_at(const debugger *d, const ipu_tile *t, uint32_t pc, char *buf, size_t n);
/* "tile T, CONTEXT, pc 0x... <sym> (file:line), cycle C" and the instruction there. */
void dbg_print_location(const debugger *d, FILE *out, uint32_t tile, unsigned k, uint32_t pc);
/* A context's run mode in words. */
const char *dbg_run_mode_name(uint8_t mode);
/* The f32 whose bits are v. */
float dbg_bits_f32(uint32_t v);
/* "$m3", "$a0", "$pc", "$FP_CTL" of context k. */
bool dbg_register_value(const ipu_tile *t, unsigned k, const char *name, uint32_t *v, char *kind);

/* ---- expressions, tensor elements, display (debugger_expr.c, debugger_print.c) */

/* A register's name without its '$' ("m3", "a0", "lr", "sp", "mzero",
 * "azero", "pc", a CSR) as its class ('m', 'a' or 'c' for a CSR, $pc
 * included) and number. */
bool dbg_register_ref(const char *name, char *cls, unsigned *num);
/* That register's value in context k of tile t. */
uint32_t dbg_register_read(const ipu_tile *t, unsigned k, char cls, unsigned num);
/* The type of t's elements; false when no expression type fits them. */
bool dbg_element_type(const tmap_tensor *t, dbg_type *type);
/* The tile and address of element idx (one index per dimension of the
 * tensor's own axes) of t; false when no piece holds it. */
bool dbg_tensor_element_place(const tmap_tensor *t, const uint64_t *idx, uint32_t *tile, uint32_t *addr);
/* Every display, "N: EXPR = VALUE", on the selected tile and context (at every stop). */
void dbg_show_displays(debugger *d, FILE *out);
/* The table of `info display`. */
void dbg_info_display(debugger *d, FILE *out);
/* Free the displays (debugger_free). */
void dbg_free_displays(debugger *d);

/* ---- the commands (the table: debugger_commands.c) ------------------------ */

typedef enum debugger_result dbg_cmd_fn(debugger *d, const char *args, FILE *out);

dbg_cmd_fn dbg_cmd_run, dbg_cmd_continue, dbg_cmd_stepi, dbg_cmd_next_superstep;     /* debugger_run.c */
dbg_cmd_fn dbg_cmd_break, dbg_cmd_watch, dbg_cmd_delete;                             /* debugger_breakpoints.c */
dbg_cmd_fn dbg_cmd_print, dbg_cmd_x, dbg_cmd_disassemble;                            /* debugger_print.c */
dbg_cmd_fn dbg_cmd_display, dbg_cmd_undisplay;                                       /* debugger_print.c */
dbg_cmd_fn dbg_cmd_tile, dbg_cmd_context, dbg_cmd_where, dbg_cmd_info, dbg_cmd_stats; /* debugger_info.c */
dbg_cmd_fn dbg_cmd_source, dbg_cmd_help, dbg_cmd_quit;                               /* debugger_commands.c */

#endif
