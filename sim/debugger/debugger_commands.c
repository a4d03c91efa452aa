/*
 * debugger_commands.c — the debugger's one command table (name, aliases,
 * function, the kinds of its arguments, usage, help) and what reads it:
 * dispatch of a command line (comments, blanks, unique prefixes, /FMT),
 * help (generated from the table and the kinds of argument), source
 * (commands from a file) and quit.  Completion (debugger_complete.c) reads
 * the same table.
 */
#include "debugger_internal.h"

#include <stdlib.h>
#include <string.h>

#include "sim/base/fileio.h"

/* ---- the table ------------------------------------------------------------ */

/* What each kind of argument is, for help (the words a usage line uses). */
const struct dbg_arg_kind_info dbg_arg_kinds[DA_COUNT_KINDS] = {
    [DA_NONE] = { "", "" },
    [DA_COUNT] = { "N", "a repeat count, 1 or more" },
    [DA_LOCATION] = { "LOCATION",
                      "TILE:ADDR, TILE:SYMBOL, SYMBOL (every tile that has it), ADDR (the selected tile),\n"
                      "              superstep N (when superstep N of a chip ends) or cycle N" },
    [DA_EXPR] = { "EXPR",
                  "C-like: numbers, $m0..$m15 $a0..$a15 $pc $lr $mzero $CSR, $cycle $superstep $tile\n"
                  "              $context, *(f32*)ADDR (also f16 u8 u16 u32 i32 u64), SYMBOL, TENSOR[I][J], casts,\n"
                  "              + - * / % << >> & | ^ ~ ! < <= > >= == != && ||" },
    [DA_WATCH] = { "PLACE", "[TILE:]ADDR[:BYTES] or [TILE:]SYMBOL[:BYTES] (a symbol: its size, at most 64)" },
    [DA_TILE] = { "TILE", "a tile number (global: chip * tiles per chip + tile)" },
    [DA_CONTEXT] = { "CONTEXT", "sup (the supervisor) or w1..w6 (a worker)" },
    [DA_GOTO] = { "superstep N", "the moment superstep N of the selected tile's chip ended" },
    [DA_FILE] = { "FILE", "a file of debugger commands" },
    [DA_COMMAND] = { "CMD", "a command's name" },
    [DA_INFO] = { "WHAT", "breakpoints tiles registers supersteps exchange tensors memory amp frame display\n"
                          "              checkpoints (help info)" },
    [DA_BREAKPOINT] = { "BP", "a breakpoint or watchpoint number (info breakpoints)" },
    [DA_DISPLAY] = { "DISPLAY", "a display number (info display)" },
};

/* Every command, in the order help lists them; a unique prefix of its
 * name, or one of its aliases, also names it.  args: the kinds of its
 * arguments in order (the last repeats), which completion follows. */
const dbg_command dbg_commands[] = {
    { "run", { "r" }, dbg_cmd_run, false, { DA_NONE }, "run",
      "Start the program from the beginning (again, if it ran) and go to the first stop." },
    { "continue", { "c" }, dbg_cmd_continue, false, { DA_COUNT }, "continue [N]",
      "Go on to the next stop (N times)." },
    { "next", { "n" }, dbg_cmd_next, false, { DA_COUNT }, "next [N]",
      "Run the selected context to its next source line, over calls (N times)." },
    { "step", { "s" }, dbg_cmd_step, false, { DA_COUNT }, "step [N]",
      "Run the selected context to its next source line, into calls (N times)." },
    { "stepi", { "si" }, dbg_cmd_stepi, false, { DA_COUNT }, "stepi [N]",
      "Run until the selected tile has issued N instructions or bundles (of whichever context issues next);\n"
      "  other tiles run to their next sync meanwhile." },
    { "until", { "u" }, dbg_cmd_until, false, { DA_LOCATION, DA_EXPR }, "until LOCATION | EXPR",
      "Run to LOCATION (once, like a temporary breakpoint), or until EXPR holds on the selected tile\n"
      "  (checked after each of its issues and each exchange: the tile runs one cycle at a time)." },
    { "finish", { "fin" }, dbg_cmd_finish, false, { DA_NONE }, "finish",
      "Run until the selected worker's vertex returns (the worker exits), or on the supervisor until the\n"
      "  current superstep ends." },
    { "next-superstep", { "ns" }, dbg_cmd_next_superstep, false, { DA_NONE }, "next-superstep",
      "Go on until the next superstep ends (a barrier is released or a chip's program ends)." },
    { "goto", { NULL }, dbg_cmd_goto, false, { DA_GOTO }, "goto superstep N",
      "Go back (or forward) to the end of superstep N of the selected tile's chip: the nearest checkpoint\n"
      "  at or before it is restored and the run re-executed from there, deterministically." },
    { "reverse-stepi", { "rsi" }, dbg_cmd_reverse_stepi, false, { DA_COUNT }, "reverse-stepi [N]",
      "Go back N issues of the selected tile." },
    { "reverse-continue", { "rc" }, dbg_cmd_reverse_continue, false, { DA_NONE }, "reverse-continue",
      "Go back to the last breakpoint or watchpoint hit before now (or the start of the run)." },
    { "reverse-next-superstep", { "rns" }, dbg_cmd_reverse_next_superstep, false, { DA_NONE },
      "reverse-next-superstep", "Go back to the end of the superstep before the last one ended on the selected tile's chip." },
    { "break", { "b" }, dbg_cmd_break, false, { DA_LOCATION, DA_EXPR }, "break LOCATION [if EXPR]",
      "Stop before a tile issues at an address, when superstep N of a chip ends, or when a tile first\n"
      "  reaches cycle N; with `if EXPR`, only where EXPR holds on the tile that stopped." },
    { "tbreak", { "tb" }, dbg_cmd_tbreak, false, { DA_LOCATION, DA_EXPR }, "tbreak LOCATION [if EXPR]",
      "A breakpoint deleted when it first stops the program." },
    { "condition", { NULL }, dbg_cmd_condition, false, { DA_BREAKPOINT, DA_EXPR }, "condition BP [EXPR]",
      "Stop at breakpoint BP only where EXPR holds (no EXPR: always)." },
    { "watch", { "w" }, dbg_cmd_watch, false, { DA_WATCH }, "watch PLACE",
      "Stop when BYTES (default 4, at most 64) of tile memory change: checked after each issue of that\n"
      "  tile (which then runs one cycle at a time) and after each exchange." },
    { "rwatch", { NULL }, dbg_cmd_rwatch, false, { DA_WATCH }, "rwatch PLACE",
      "Stop after an issue of the tile that reads any byte of PLACE (the tile runs one cycle at a time)." },
    { "awatch", { NULL }, dbg_cmd_awatch, false, { DA_WATCH }, "awatch PLACE",
      "Stop after an issue of the tile that reads or writes any byte of PLACE." },
    { "delete", { "d" }, dbg_cmd_delete, false, { DA_BREAKPOINT }, "delete BP... | all",
      "Delete breakpoints or watchpoints, or all of them." },
    { "display", { NULL }, dbg_cmd_display, true, { DA_EXPR }, "display[/FMT] [EXPR]",
      "Show EXPR (as print does) now and at every stop, numbered; without EXPR, every display now." },
    { "undisplay", { NULL }, dbg_cmd_undisplay, false, { DA_DISPLAY }, "undisplay DISPLAY | all",
      "Stop showing a display, or all of them." },
    { "info", { "i" }, dbg_cmd_info, false, { DA_INFO }, "info WHAT",
      "Breakpoints, tiles, registers, supersteps, exchange, tensors, memory, frame, displays or checkpoints\n"
      "  (help info lists them)." },
    { "tile", { "t" }, dbg_cmd_tile, false, { DA_TILE }, "tile [TILE]", "Select a tile (and its supervisor)." },
    { "context", { "ctx" }, dbg_cmd_context, false, { DA_CONTEXT }, "context [CONTEXT]",
      "Select the supervisor or a worker of the selected tile." },
    { "print", { "p" }, dbg_cmd_print, true, { DA_EXPR }, "print[/FMT] EXPR | TENSOR [SLICE]",
      "An expression on the selected tile and context (EXPR below).  FMT: x hex, d signed, u unsigned,\n"
      "  o octal, t binary, c character, f float, a address.  A register alone also shows its\n"
      "  decimal ($a: f32 and f16 pair) values; a compiled program's tensor by name from its pieces on\n"
      "  every tile (SLICE: [I, LO:HI, ...]), 8 values a line; a symbol alone, its words on the\n"
      "  selected tile.  An activation's memory holds it from the superstep that writes it to its\n"
      "  last reader; the compiler places later tensors there after that." },
    { "x", { NULL }, dbg_cmd_x, true, { DA_EXPR }, "x/NFMT ADDR",
      "N units of tile memory of the selected tile at ADDR (an expression: 0x80000, SYMBOL+8, $m3+4,\n"
      "  $pc); FMT is x (hex words, the default), d (signed), u (unsigned), f (f32), h (f16), b (bytes)\n"
      "  or i (instructions, with symbols and source lines)." },
    { "disassemble", { "disas" }, dbg_cmd_disassemble, false, { DA_EXPR }, "disassemble [[TILE:]ADDR [N]]",
      "N instructions (default 8) from ADDR (a number, SYMBOL or SYMBOL+OFF; of the selected tile, or of\n"
      "  TILE), or around the selected context's pc (marked =>; b marks breakpoints), with symbols and\n"
      "  source lines." },
    { "backtrace", { "bt", "where" }, dbg_cmd_where, false, { DA_NONE }, "backtrace",
      "The selected tile and context: pc, symbol, source line, the caller (the supervisor's return address\n"
      "  or the vertex a worker runs), cycle, superstep, state." },
    { "stats", { NULL }, dbg_cmd_stats, false, { DA_NONE }, "stats",
      "The engine's statistics so far (final ones once the program ended)." },
    { "source", { NULL }, dbg_cmd_source, false, { DA_FILE }, "source FILE",
      "Run the commands of FILE; stops at the first error." },
    { "help", { "h" }, dbg_cmd_help, false, { DA_COMMAND, DA_INFO }, "help [CMD | arguments]",
      "The commands, one command's usage, or what the kinds of argument may be." },
    { "quit", { "q" }, dbg_cmd_quit, false, { DA_NONE }, "quit", "Leave the debugger." },
};
const size_t dbg_n_commands = sizeof dbg_commands / sizeof dbg_commands[0];

/* ---- dispatch -------------------------------------------------------------- */

/* Whether c has this alias. */
static bool has_alias(const dbg_command *c, const char *name)
{
    for (size_t k = 0; k < sizeof c->aliases / sizeof c->aliases[0] && c->aliases[k]; k++)
        if (!strcmp(c->aliases[k], name))
            return true;
    return false;
}

const dbg_command *dbg_find_command(const char *name, FILE *out, bool report)
{
    for (size_t i = 0; i < dbg_n_commands; i++)
        if (!strcmp(dbg_commands[i].name, name) || has_alias(&dbg_commands[i], name))
            return &dbg_commands[i];
    const dbg_command *found = NULL;
    size_t n = strlen(name);
    for (size_t i = 0; n && i < dbg_n_commands; i++)
        if (!strncmp(dbg_commands[i].name, name, n)) {
            if (found) {
                if (report)
                    dbg_fail(out, "ambiguous command '%s' (%s, %s, ...)", name, found->name, dbg_commands[i].name);
                return NULL;
            }
            found = &dbg_commands[i];
        }
    if (!found && report)
        dbg_fail(out, "unknown command '%s' (try 'help')", name);
    return found;
}

enum debugger_result debugger_execute(debugger *d, const char *line, FILE *out)
{
    char buf[4096];
    size_t len = strlen(line);
    if (len >= sizeof buf)
        return dbg_fail(out, "the command is too long (%zu characters; at most %zu)", len, sizeof buf - 1);
    memcpy(buf, line, len + 1);
    /* Comments and line ends. */
    char *hash = strchr(buf, '#');
    if (hash)
        *hash = 0;
    for (char *p = buf; *p; p++)
        if (*p == '\r' || *p == '\n')
            *p = ' ';
    const char *s = dbg_skip_blanks(buf);
    if (!*s)
        return DEBUGGER_OK;
    for (const char *p = s; *p; p++)
        if ((unsigned char)*p < 0x20 && *p != '\t')
            return dbg_fail(out, "control character 0x%02x in the command", (unsigned char)*p);
    char name[64];
    size_t n = 0;
    while (s[n] && s[n] != ' ' && s[n] != '\t' && s[n] != '/' && n + 1 < sizeof name) {
        name[n] = s[n];
        n++;
    }
    name[n] = 0;
    const char *args = s + n;
    if (s[n] && s[n] != ' ' && s[n] != '\t' && s[n] != '/')
        return dbg_fail(out, "unknown command '%.40s...' (try 'help')", name);
    const dbg_command *c = dbg_find_command(name, out, true);
    if (!c)
        return DEBUGGER_ERROR;
    if (*args == '/' && !c->takes_format)
        return dbg_fail(out, "%s takes no /FMT ('%s/...')", c->name, name);
    return c->fn(d, args, out);
}

/* ---- help, source, quit ---------------------------------------------------- */

/* help [CMD]: the table, each command's usage, and the kinds of argument
 * the usages name. */
enum debugger_result dbg_cmd_help(debugger *d, const char *args, FILE *out)
{
    (void)d;
    char w[64] = "";
    const char *rest = args;
    if (dbg_next_word(&rest, w, sizeof w) && !strcmp(w, "arguments")) {
        fprintf(out, "The arguments the usages name:\n");
        for (int k = DA_COUNT; k < DA_COUNT_KINDS; k++)
            fprintf(out, "  %-11s %s\n", dbg_arg_kinds[k].word, dbg_arg_kinds[k].help);
        return DEBUGGER_OK;
    }
    if (w[0] && rest != args) {
        const dbg_command *c = dbg_find_command(w, out, true);
        if (!c)
            return DEBUGGER_ERROR;
        fprintf(out, "%s", c->usage);
        for (size_t k = 0; k < sizeof c->aliases / sizeof c->aliases[0] && c->aliases[k]; k++)
            fprintf(out, "%s%s", k ? ", " : "  (alias: ", c->aliases[k]);
        fprintf(out, "%s\n  %s\n", c->aliases[0] ? ")" : "", c->help);
        if (c->fn == dbg_cmd_info)
            dbg_info_help(out);
        for (size_t a = 0; a < sizeof c->args / sizeof c->args[0]; a++)
            if (c->args[a] != DA_NONE && c->args[a] != DA_INFO && (!a || c->args[a] != c->args[a - 1]))
                fprintf(out, "  %-11s %s\n", dbg_arg_kinds[c->args[a]].word, dbg_arg_kinds[c->args[a]].help);
        return DEBUGGER_OK;
    }
    fprintf(out, "Commands (help CMD for more):\n");
    for (size_t i = 0; i < dbg_n_commands; i++) {
        const dbg_command *c = &dbg_commands[i];
        char name[48];
        snprintf(name, sizeof name, "%s%s%s%s%s%s", c->name, c->aliases[0] ? " (" : "",
                 c->aliases[0] ? c->aliases[0] : "", c->aliases[1] ? ", " : "", c->aliases[1] ? c->aliases[1] : "",
                 c->aliases[0] ? ")" : "");
        fprintf(out, "  %-30s %s\n", name, c->usage);
    }
    fprintf(out, "info WHAT:");
    for (size_t i = 0; i < dbg_n_info_topics; i++)
        fprintf(out, " %s", dbg_info_topics[i].name);
    fprintf(out, ".\nWhat LOCATION, EXPR, PLACE, ... may be: help arguments.\n");
    return DEBUGGER_OK;
}

/* source FILE: its lines as commands, up to the first error. */
enum debugger_result dbg_cmd_source(debugger *d, const char *args, FILE *out)
{
    if (d->opt.no_files)
        return dbg_fail(out, "source is disabled here");
    const char *path = dbg_skip_blanks(args);
    if (!*path)
        return dbg_fail(out, "source needs a file");
    if (d->depth >= MAX_SOURCE_DEPTH)
        return dbg_fail(out, "source: nested more than %d deep", MAX_SOURCE_DEPTH);
    char err[512], *data;
    size_t size;
    char name[1024];
    snprintf(name, sizeof name, "%s", path);
    size_t len = strlen(name);
    while (len && (name[len - 1] == ' ' || name[len - 1] == '\t'))
        name[--len] = 0;
    if (!read_file_limited(name, READ_LIMIT_SOURCE, "a debugger script may have", READ_STREAMS, &data, &size, err,
                           sizeof err))
        return dbg_fail(out, "%s", err);
    enum debugger_result r = DEBUGGER_OK;
    d->depth++;
    unsigned line_no = 0;
    char *p = data;
    while (p < data + size && r == DEBUGGER_OK) {
        char *nl = memchr(p, '\n', (size_t)(data + size - p));
        if (nl)
            *nl = 0;
        else
            data[size] = 0;
        line_no++;
        if (strlen(p) != (size_t)((nl ? nl : data + size) - p)) {
            r = dbg_fail(out, "%s:%u: a NUL byte in the line", name, line_no);
            break;
        }
        r = debugger_execute(d, p, out);
        if (!nl)
            break;
        p = nl + 1;
    }
    d->depth--;
    free(data);
    return r;
}

/* quit */
enum debugger_result dbg_cmd_quit(debugger *d, const char *args, FILE *out)
{
    (void)d;
    if (!dbg_at_end(args))
        return dbg_fail(out, "quit takes no arguments");
    return DEBUGGER_QUIT;
}
