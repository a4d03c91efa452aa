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

/* What a watchpoint looks for: a change of its bytes (watch), or an issue
 * that reads them (rwatch) or reads or writes them (awatch). */
enum watch_kind { WATCH_CHANGE, WATCH_READ, WATCH_ACCESS };

typedef struct dbg_expr dbg_expr;

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
    uint8_t watch;                /* enum watch_kind (BP_WATCH) */
    uint64_t hits;
    bool temporary;               /* tbreak: deleted when it stops the program */
    bool internal;                /* set by next, until, ...: not shown, deleted after the command */
    dbg_expr *cond;               /* stop only where it holds (NULL: always) */
    char cond_text[160];
} breakpoint;

/* A point of the run: supersteps ended in the whole system, then issues
 * of every tile so far (debugger_reverse.c). */
typedef struct dbg_position {
    size_t supersteps;
    uint64_t issues;
} dbg_position;

/* A checkpoint kept for going back (debugger_reverse.c). */
typedef struct dbg_checkpoint {
    engine_checkpoint *c;
    dbg_position at;
    uint64_t cycle;               /* the latest tile cycle then */
    size_t bytes;                 /* host bytes it owns */
} dbg_checkpoint;

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
    /* what the engine's check() looks for besides watchpoints (until EXPR,
     * finish): on the selected tile, after each of its issues */
    dbg_expr *until_expr;
    bool finishing;
    unsigned finish_context;
    int check_hit;                /* enum dbg_check_hit of the last CHECK pause */
    /* checkpoints (debugger_reverse.c) */
    dbg_checkpoint *ckpts;
    size_t n_ckpts, cap_ckpts;
    size_t ckpt_bytes;
    uint32_t ckpt_interval;       /* supersteps between checkpoints now (at least) */
    double ckpt_done_s, ckpt_take_s; /* host time the last take ended at, and took */
    bool replaying;               /* running forward to a point: breakpoints neither stop nor count */
    bool replay_no_checkpoints;
    dbg_input *inputs;
    size_t n_inputs;
    uint32_t tile;                /* selection */
    unsigned context;
    volatile int *interrupt;
    int depth;                    /* source nesting */
    /* display (debugger_print.c): the expressions shown at every stop */
    struct dbg_display *displays;
    size_t n_displays, cap_displays;
    int last_display;             /* the number of the latest one */
    /* completion (debugger_complete.c): distinct names, sorted on first use */
    bool complete_ready;
    const char **complete_symbols, **complete_tensors, **complete_registers;
    size_t n_complete_symbols, n_complete_tensors, n_complete_registers;
    char *register_names;
};

/* ---- the engine's life (debugger.c) --------------------------------------- */

/* A fresh engine with the breakpoints set (not started). */
bool dbg_new_engine(debugger *d, char *err, size_t err_size);
/* Feed the inputs and start the engine. */
bool dbg_start(debugger *d, FILE *out);

/* ---- showing where the program is (debugger_frame.c, debugger_print.c) ---- */

void dbg_info_memory(debugger *d, FILE *out);
enum debugger_result dbg_info_frame(debugger *d, const char *args, FILE *out);
enum debugger_result dbg_info_amp(debugger *d, const char *args, FILE *out);

/* ---- going back (debugger_reverse.c) -------------------------------------- */

/* info checkpoints */
void dbg_info_checkpoints(debugger *d, FILE *out);

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

enum dbg_check_hit { CHECK_NONE, CHECK_WATCH, CHECK_UNTIL, CHECK_FINISH };

/* Whether breakpoint b's condition holds on (tile, context); a condition
 * that cannot be evaluated stops the program with a message on out. */
bool dbg_condition_holds(debugger *d, breakpoint *b, uint32_t tile, unsigned context, FILE *out);
/* Delete the breakpoints that stopped the program for the last time
 * (tbreak) and those a command set for itself. */
void dbg_remove_spent(debugger *d, bool internal_too);
/* Set (or clear) the engine's access watches of rwatch and awatch. */
void dbg_set_access_watches(debugger *d, bool on);
/* Free every breakpoint (the debugger's end). */
void dbg_free_breakpoints(debugger *d);
/* Whether checkpoints are taken (the engine then pauses at every superstep end). */
bool dbg_checkpointing(const debugger *d);
/* until LOCATION: a breakpoint of the debugger's own at LOCATION. */
bool dbg_until_location(debugger *d, const char *args, FILE *out);
/* A pc breakpoint the debugger sets for itself (next over a call, until
 * LOCATION): stops like any other, deleted after the command. */
bool dbg_internal_break(debugger *d, uint32_t tile, uint32_t pc);

/* Read a watchpoint's bytes as they are now. */
void dbg_snapshot_watch(debugger *d, breakpoint *b);
/* The engine's pause conditions from the breakpoints. */
void dbg_configure(debugger *d, bool step, bool next_superstep);
/* The table of `info breakpoints`. */
void dbg_info_breakpoints(debugger *d, FILE *out);

/* ---- running (debugger_run.c) ----------------------------------------------- */

/* How a resume ended: a step of the stepped tile, a stop shown to the
 * user, the end of the run, or a refusal (a message was printed). */
enum dbg_stop { STOP_STEP, STOP_SHOWN, STOP_END, STOP_ERROR };

/* Continue the engine to the next stop the user asked for (step: after the
 * selected tile's next issue; next_superstep: at the next superstep end). */
enum dbg_stop dbg_resume(debugger *d, bool step, bool next_superstep, FILE *out);
/* After a command that ran the program (the resume ended with s): spent
 * temporary breakpoints go, the displays are shown; the command's result. */
enum debugger_result dbg_after_stop(debugger *d, enum dbg_stop s, FILE *out);
/* The latest cycle any tile stands at (engine_tile_cycle). */
uint64_t dbg_latest_cycle(const debugger *d);
/* Where a step stopped: the issue it made and what comes next. */
void dbg_show_step(debugger *d, FILE *out);
/* A step ending where context k is about to issue at a breakpoint reports
 * it ("Breakpoint N, ") and lets that issue go ahead at the next resume. */
bool dbg_arrive_at_breakpoint(debugger *d, unsigned k, FILE *out);

/* ---- checkpoints (debugger_reverse.c) ------------------------------------- */

/* At the run's start: the first checkpoint. */
void dbg_checkpoint_at_start(debugger *d);
/* At a superstep end: take a checkpoint when one is due. */
void dbg_checkpoint_at_superstep(debugger *d);
/* At the end of the run: keep its final state too. */
void dbg_checkpoint_at_end(debugger *d);
/* Drop every checkpoint (a fresh engine). */
void dbg_drop_checkpoints(debugger *d);

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

/* Register numbers past the CSRs (class 'c' of dbg_register_ref): $aaccN,
 * the selected context's AMP accumulators (f32), and $cweiN, the tile's
 * AMP weights (shared by its contexts). */
#define DBG_REG_AACC 0x10000u
#define DBG_REG_CWEI 0x20000u

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

dbg_cmd_fn dbg_cmd_run, dbg_cmd_continue, dbg_cmd_stepi, dbg_cmd_next, dbg_cmd_step,  /* debugger_run.c */
    dbg_cmd_until, dbg_cmd_finish, dbg_cmd_next_superstep;
dbg_cmd_fn dbg_cmd_goto, dbg_cmd_reverse_stepi, dbg_cmd_reverse_continue,            /* debugger_reverse.c */
    dbg_cmd_reverse_next_superstep;
dbg_cmd_fn dbg_cmd_break, dbg_cmd_tbreak, dbg_cmd_condition, dbg_cmd_watch,          /* debugger_breakpoints.c */
    dbg_cmd_rwatch, dbg_cmd_awatch, dbg_cmd_delete;
dbg_cmd_fn dbg_cmd_print, dbg_cmd_x, dbg_cmd_disassemble, dbg_cmd_display,           /* debugger_print.c */
    dbg_cmd_undisplay;
dbg_cmd_fn dbg_cmd_tile, dbg_cmd_context, dbg_cmd_where, dbg_cmd_info, dbg_cmd_stats; /* debugger_info.c */
dbg_cmd_fn dbg_cmd_source, dbg_cmd_help, dbg_cmd_quit;                               /* debugger_commands.c */

/* Free what completion made (debugger_complete.c). */
void dbg_complete_free(debugger *d);

/* ---- the command table (debugger_commands.c) ------------------------------ */

/* The kinds of argument a command takes: help explains them once, and
 * completion offers what each kind may be. */
enum dbg_arg_kind {
    DA_NONE,
    DA_COUNT,                     /* a repeat count */
    DA_LOCATION,                  /* where a breakpoint stops */
    DA_EXPR,                      /* an expression */
    DA_WATCH,                     /* the bytes a watchpoint looks at */
    DA_TILE,
    DA_CONTEXT,
    DA_GOTO,                      /* superstep N */
    DA_FILE,
    DA_COMMAND,
    DA_INFO,                      /* what info shows */
    DA_BREAKPOINT,                /* a breakpoint's number */
    DA_DISPLAY,                   /* a display's number */
    DA_COUNT_KINDS
};

struct dbg_arg_kind_info {
    const char *word;             /* as usages write it: LOCATION */
    const char *help;
};
extern const struct dbg_arg_kind_info dbg_arg_kinds[DA_COUNT_KINDS];

typedef struct dbg_command {
    const char *name;
    const char *aliases[2];
    dbg_cmd_fn *fn;
    bool takes_format;            /* name/FMT */
    enum dbg_arg_kind args[3];    /* in order; the last one repeats */
    const char *usage, *help;
} dbg_command;
extern const dbg_command dbg_commands[];
extern const size_t dbg_n_commands;

/* The command a word names (its name, an alias or a unique prefix); with
 * report, an "error: " line when it names none or several. */
const dbg_command *dbg_find_command(const char *name, FILE *out, bool report);

/* ---- info's topics (debugger_info.c) -------------------------------------- */

typedef struct dbg_info_topic {
    const char *name;
    enum dbg_arg_kind arg;        /* what may follow it */
    const char *usage, *help;
} dbg_info_topic;
extern const dbg_info_topic dbg_info_topics[];
extern const size_t dbg_n_info_topics;
/* help info: the topics and what each shows. */
void dbg_info_help(FILE *out);

#endif
