/*
 * debugger_commands.c — the debugger's one command table (name, alias,
 * function, usage, help) and what reads it: dispatch of a command line
 * (comments, blanks, unique prefixes, x/FMT), help, source (commands from a
 * file), quit, and completion of command names, keywords, registers,
 * tensors and symbols.
 */
#include "debugger_internal.h"

#include <stdlib.h>
#include <string.h>

#include "sim/base/fileio.h"

/* ---- the table ------------------------------------------------------------ */

/* Every command, in the order help lists them; a unique prefix of its
 * name or its alias also names it. */
static const struct dcmd {
    const char *name, *alias;
    dbg_cmd_fn *fn;
    const char *usage, *help;
} dcmds[] = {
    { "run", "r", dbg_cmd_run, "run",
      "Start the program from the beginning (again, if it ran) and go to the first stop." },
    { "continue", "c", dbg_cmd_continue, "continue [N]", "Go on to the next stop (N times)." },
    { "stepi", "si", dbg_cmd_stepi, "stepi [N]",
      "Run until the selected tile has issued N instructions or bundles (of whichever context issues next);\n"
      "  other tiles run to their next sync meanwhile." },
    { "next-superstep", "ns", dbg_cmd_next_superstep, "next-superstep",
      "Go on until the next superstep ends (a barrier is released or a chip's program ends)." },
    { "break", "b", dbg_cmd_break, "break TILE:ADDR | TILE:SYMBOL | SYMBOL | ADDR | superstep N | cycle N",
      "Stop before a tile issues at an address (SYMBOL: on every tile that has it; ADDR: the selected tile),\n"
      "  when superstep N of a chip ends, or when a tile first reaches cycle N." },
    { "watch", "w", dbg_cmd_watch, "watch TILE:ADDR[:BYTES]",
      "Stop when BYTES (default 4, at most 64) of tile memory at ADDR change: checked after each issue of\n"
      "  that tile (which then runs one cycle at a time) and after each exchange." },
    { "delete", "d", dbg_cmd_delete, "delete N | all", "Delete breakpoint or watchpoint N, or all of them." },
    { "info", "i", dbg_cmd_info, "info breakpoints | tiles | registers [CONTEXT] | supersteps | exchange | tensors",
      "Breakpoints and their hits; tiles with their cycle, supervisor pc and state; a context's registers\n"
      "  and non-zero CSRs; the supersteps ended so far; the selected tile's exchange in this phase; a\n"
      "  compiled program's tensors." },
    { "tile", "t", dbg_cmd_tile, "tile T", "Select tile T (and its supervisor)." },
    { "context", "ctx", dbg_cmd_context, "context sup | w1..w6",
      "Select the supervisor or a worker of the selected tile." },
    { "print", "p", dbg_cmd_print, "print[/FMT] EXPR | $REG | TENSOR [SLICE] | SYMBOL",
      "An expression on the selected tile and context, C-like: $m0-$m15, $a0-$a15 (raw bits: (f32)$a0\n"
      "  reads them as f32), $pc, $lr, $sp, $mzero, $CSR, $cycle, $superstep, $tile, $context, memory\n"
      "  (*(f32*)ADDR, *(u8*)ADDR, ..., *ADDR a u32), symbols (their address), tensor elements\n"
      "  (NAME[i][j]), casts ((i32) (f32) ...) and C's operators.  FMT: x hex, d signed, u unsigned,\n"
      "  o octal, t binary, c character, f float, a address.  A register alone also shows its\n"
      "  decimal ($a: f32 and f16 pair) values; a compiled program's tensor by name from its pieces on\n"
      "  every tile (SLICE: [I, LO:HI, ...]), 8 values a line; a symbol alone, its words on the\n"
      "  selected tile.  An activation's memory holds it from the superstep that writes it to its\n"
      "  last reader; the compiler places later tensors there after that." },
    { "display", NULL, dbg_cmd_display, "display[/FMT] [EXPR]",
      "Show EXPR (as print does) now and at every stop, numbered; without EXPR, every display now." },
    { "undisplay", NULL, dbg_cmd_undisplay, "undisplay N | all", "Stop showing display N, or all of them." },
    { "x", NULL, dbg_cmd_x, "x/NFMT ADDR",
      "N units of tile memory of the selected tile at ADDR (an expression: 0x80000, SYMBOL+8, $m3+4,\n"
      "  $pc); FMT is x (hex words, the default), d (signed), u (unsigned), f (f32), h (f16), b (bytes)\n"
      "  or i (instructions, with symbols and source lines)." },
    { "disassemble", "disas", dbg_cmd_disassemble, "disassemble [ADDR [N]]",
      "N instructions (default 8) from ADDR, or around the selected context's pc (marked =>; b marks\n"
      "  breakpoints), with symbols and source lines." },
    { "where", "bt", dbg_cmd_where, "where",
      "The selected tile and context: pc, symbol, source line, cycle, superstep, state." },
    { "stats", NULL, dbg_cmd_stats, "stats", "The engine's statistics so far (final ones once the program ended)." },
    { "source", NULL, dbg_cmd_source, "source FILE", "Run the commands of FILE; stops at the first error." },
    { "help", "h", dbg_cmd_help, "help [CMD]", "The commands, or one command's usage." },
    { "quit", "q", dbg_cmd_quit, "quit", "Leave the debugger." },
};
#define N_DCMDS (sizeof dcmds / sizeof dcmds[0])

/* ---- dispatch -------------------------------------------------------------- */

/* The command a word names (its name, alias or a unique prefix); with
 * report, an "error: " line when it names none or several. */
static const struct dcmd *find_cmd(const char *name, FILE *out, bool report)
{
    for (size_t i = 0; i < N_DCMDS; i++)
        if (!strcmp(dcmds[i].name, name) || (dcmds[i].alias && !strcmp(dcmds[i].alias, name)))
            return &dcmds[i];
    const struct dcmd *found = NULL;
    size_t n = strlen(name);
    for (size_t i = 0; n && i < N_DCMDS; i++)
        if (!strncmp(dcmds[i].name, name, n)) {
            if (found) {
                if (report)
                    dbg_fail(out, "ambiguous command '%s' (%s, %s, ...)", name, found->name, dcmds[i].name);
                return NULL;
            }
            found = &dcmds[i];
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
    const struct dcmd *c = find_cmd(name, out, true);
    if (!c)
        return DEBUGGER_ERROR;
    if (*args == '/' && c->fn != dbg_cmd_x && c->fn != dbg_cmd_print && c->fn != dbg_cmd_display)
        return dbg_fail(out, "only x, print and display take /FMT ('%s/...')", name);
    return c->fn(d, args, out);
}

/* ---- help, source, quit ---------------------------------------------------- */

/* help [CMD] */
enum debugger_result dbg_cmd_help(debugger *d, const char *args, FILE *out)
{
    (void)d;
    char w[64];
    const char *rest = args;
    if (dbg_next_word(&rest, w, sizeof w)) {
        const struct dcmd *c = find_cmd(w, out, true);
        if (!c)
            return DEBUGGER_ERROR;
        fprintf(out, "%s%s%s%s\n  %s\n", c->usage, c->alias ? "  (alias: " : "", c->alias ? c->alias : "",
                c->alias ? ")" : "", c->help);
        return DEBUGGER_OK;
    }
    fprintf(out, "Commands (help CMD for more):\n");
    for (size_t i = 0; i < N_DCMDS; i++) {
        char name[40];
        snprintf(name, sizeof name, "%s%s%s%s", dcmds[i].name, dcmds[i].alias ? " (" : "",
                 dcmds[i].alias ? dcmds[i].alias : "", dcmds[i].alias ? ")" : "");
        fprintf(out, "  %-22s %s\n", name, dcmds[i].usage);
    }
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

/* ---- completion ------------------------------------------------------------ */

/* The words completion offers after the command name. */
static const char *const keywords[] = {
    "superstep", "cycle", "all", "breakpoints", "tiles", "registers", "supersteps", "exchange", "tensors",
    "sup", "w1", "w2", "w3", "w4", "w5", "w6", "$pc",
};

const char *debugger_complete(debugger *d, const char *word, bool first_word, size_t n)
{
    size_t len = strlen(word), k = 0;
#define OFFER(text)                                                                                 \
    do {                                                                                            \
        const char *t_ = (text);                                                                    \
        if (!strncmp(t_, word, len) && k++ == n) {                                                  \
            snprintf(d->complete_buf, sizeof d->complete_buf, "%s", t_);                            \
            return d->complete_buf;                                                                 \
        }                                                                                           \
    } while (0)
    if (first_word) {
        for (size_t i = 0; i < N_DCMDS; i++)
            OFFER(dcmds[i].name);
        return NULL;
    }
    for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
        OFFER(keywords[i]);
    if (word[0] == '$') {
        char reg[16];
        for (int r = 0; r < 16; r++) {
            snprintf(reg, sizeof reg, "$m%d", r);
            OFFER(reg);
            snprintf(reg, sizeof reg, "$a%d", r);
            OFFER(reg);
        }
        for (unsigned c = 0; c < ISA_CSR_SPACE; c++) {
            const char *csr = isa_csr_name(c);
            if (csr) {
                char full[64];
                snprintf(full, sizeof full, "$%s", csr);
                OFFER(full);
            }
        }
        return NULL;
    }
    for (size_t i = 0; d->tmap && i < d->tmap->n_tensors; i++)
        OFFER(d->tmap->tensors[i].name);
    for (size_t i = 0; i < d->e->n_symbols; i++) {
        /* Each name once: skip it where an earlier symbol has it. */
        bool seen = false;
        for (size_t j = 0; j < i && !seen && i < 4096; j++)
            seen = !strcmp(d->e->symbols[j].name, d->e->symbols[i].name);
        if (!seen)
            OFFER(d->e->symbols[i].name);
    }
#undef OFFER
    return NULL;
}
