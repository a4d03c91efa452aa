/*
 * debugger.c — the debugger's command interpreter (see debugger.h).
 *
 * The debugger owns one engine at a time: `run` makes a fresh one (a run
 * cannot be rewound), applies the inputs, breakpoints and watchpoints, and
 * steps it with engine_continue.  Stops the engine reports (engine.h:
 * engine_pause) are matched to the user's breakpoints here: a superstep
 * break pauses the engine at every superstep end and goes on unless the
 * superstep is the one asked for; a watchpoint makes its tile run in slow
 * mode with a check after each issue and after each event (exchange data
 * landing).  Cycle breakpoints fire once per run.
 *
 * Approximations: registers and CSRs are shown as stored in the context
 * ($COUNT_L/U and $PC are derived from the tile's cycle and pc); memory
 * reads see tile memory as it is, so data an exchange phase has not
 * delivered yet is not there.
 */
#include "debugger.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "exchange/exchange.h"
#include "sim/base/fileio.h"
#include "isa/asm/disasm.h"
#include "isa/fp16.h"
#include "sim/engine/program_io.h"
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
};

/* ---- small helpers ------------------------------------------------------- */

static enum debugger_result fail(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static enum debugger_result fail(FILE *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("error: ", out);
    vfprintf(out, fmt, ap);
    fputc('\n', out);
    va_end(ap);
    return DEBUGGER_ERROR;
}

static const char *skip_blanks(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* Copy the next blank-separated word of *s into buf (truncated); false at
 * the end of the line. */
static bool next_word(const char **s, char *buf, size_t n)
{
    const char *p = skip_blanks(*s);
    if (!*p)
        return false;
    size_t k = 0;
    while (*p && *p != ' ' && *p != '\t') {
        if (k + 1 < n)
            buf[k++] = *p;
        p++;
    }
    buf[k] = 0;
    *s = p;
    return true;
}

static bool at_end(const char *s)
{
    return !*skip_blanks(s);
}

/* An unsigned number, decimal or 0x hex, the whole text. */
static bool parse_u64(const char *s, uint64_t *v)
{
    if (!*s || *s == '-' || *s == '+' || *s == ' ')
        return false;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 0);
    if (*end || errno)
        return false;
    *v = x;
    return true;
}

static bool parse_u32(const char *s, uint32_t *v)
{
    uint64_t x;
    if (!parse_u64(s, &x) || x > UINT32_MAX)
        return false;
    *v = (uint32_t)x;
    return true;
}

static const char *context_name(unsigned k, char *buf, size_t n)
{
    if (k == ISA_SUPERVISOR)
        snprintf(buf, n, "supervisor");
    else
        snprintf(buf, n, "worker %u", k);
    return buf;
}

static bool parse_context(const char *s, unsigned *k)
{
    if (!strcmp(s, "sup") || !strcmp(s, "supervisor") || !strcmp(s, "0")) {
        *k = ISA_SUPERVISOR;
        return true;
    }
    if ((s[0] == 'w' && s[1] >= '1' && s[1] <= '6' && !s[2]) || (s[0] >= '1' && s[0] <= '6' && !s[1])) {
        *k = (unsigned)(s[s[0] == 'w'] - '0');
        return true;
    }
    return false;
}

static const ipu_tile *cur_tile(const debugger *d)
{
    return engine_tile(d->g, d->tile);
}

static const exe_symbol *symbol_on_tile(const debugger *d, uint32_t tile, const char *name)
{
    for (size_t i = 0; i < d->e->n_symbols; i++)
        if (d->e->symbols[i].tile == tile && !strcmp(d->e->symbols[i].name, name))
            return &d->e->symbols[i];
    return NULL;
}

/* " <sym+0x4> (file.S:12)" or what of it is known. */
static void symbolize(const debugger *d, uint32_t tile, uint32_t pc, char *buf, size_t n)
{
    size_t w = 0;
    buf[0] = 0;
    const exe_symbol *sym = exe_symbol_at(d->e, tile, pc);
    if (sym) {
        if (pc == sym->addr)
            w += (size_t)snprintf(buf, n, " <%s>", sym->name);
        else
            w += (size_t)snprintf(buf, n, " <%s+0x%x>", sym->name, pc - sym->addr);
    }
    const char *file;
    uint32_t line;
    if (w < n && exe_line_at(d->e, tile, pc, &file, &line))
        snprintf(buf + w, n - w, " (%s:%u)", file, line);
}

/* An address on a tile: a number, SYMBOL or SYMBOL+OFFSET. */
static bool parse_addr(const debugger *d, uint32_t tile, const char *s, uint32_t *addr, FILE *out)
{
    if (parse_u32(s, addr))
        return true;
    char name[128];
    const char *plus = strchr(s, '+');
    size_t len = plus ? (size_t)(plus - s) : strlen(s);
    if (len == 0 || len >= sizeof name) {
        fail(out, "bad address '%.64s' (a number, SYMBOL or SYMBOL+OFFSET)", s);
        return false;
    }
    memcpy(name, s, len);
    name[len] = 0;
    uint32_t off = 0;
    if (plus && !parse_u32(plus + 1, &off)) {
        fail(out, "bad offset in '%.64s'", s);
        return false;
    }
    const exe_symbol *sym = symbol_on_tile(d, tile, name);
    if (!sym) {
        fail(out, "no symbol '%s' on tile %u", name, tile);
        return false;
    }
    *addr = sym->addr + off;
    return true;
}

/* ---- the engine's life --------------------------------------------------- */

static bool watch_check(void *ctx, const engine *g, uint32_t tile)
{
    debugger *d = ctx;
    for (size_t i = 0; i < d->n_bps; i++) {
        breakpoint *b = &d->bps[i];
        if (b->kind != BP_WATCH || (tile != UINT32_MAX && tile != b->tile))
            continue;
        const ipu_tile *t = engine_tile(g, b->tile);
        uint8_t now[MAX_WATCH_BYTES];
        if (!t || tmem_read_bytes(&t->s.mem, b->addr, now, b->bytes) != TMEM_OK)
            continue;
        if (memcmp(now, b->value, b->bytes)) {
            memcpy(b->old, b->value, b->bytes);
            memcpy(b->value, now, b->bytes);
            d->watch_hit = b->id;
            return true;
        }
    }
    return false;
}

static void snapshot_watch(debugger *d, breakpoint *b)
{
    const ipu_tile *t = engine_tile(d->g, b->tile);
    memset(b->value, 0, sizeof b->value);
    if (t)
        tmem_read_bytes(&t->s.mem, b->addr, b->value, b->bytes);
}

/* The engine's pause conditions from the breakpoints. */
static void configure(debugger *d, bool step, bool next_superstep)
{
    engine_debug dbg = { .check = watch_check, .check_ctx = d, .interrupt = d->interrupt };
    dbg.step = step;
    dbg.step_tile = d->tile;
    dbg.superstep_end = next_superstep;
    for (size_t i = 0; i < d->n_bps; i++) {
        const breakpoint *b = &d->bps[i];
        if (b->kind == BP_SUPERSTEP)
            dbg.superstep_end = true;
        else if (b->kind == BP_CYCLE && !b->passed && (!dbg.break_cycle || b->n < dbg.break_cycle))
            dbg.break_cycle = b->n;
    }
    size_t n = engine_tile_count(d->g);
    for (size_t i = 0; i < n; i++) {
        uint32_t tile = engine_tile_at(d->g, i)->tile_id;
        bool watched = false;
        for (size_t k = 0; k < d->n_bps && !watched; k++)
            watched = d->bps[k].kind == BP_WATCH && d->bps[k].tile == tile;
        engine_set_tile_checked(d->g, tile, watched);
    }
    engine_set_debug(d->g, &dbg);
}

/* A fresh engine with the breakpoints set (not started). */
static bool new_engine(debugger *d, char *err, size_t err_size)
{
    engine *g = engine_new(&d->m, d->e, err, err_size);
    if (!g)
        return false;
    engine_free(d->g);
    d->g = g;
    d->started = false;
    d->ss_seen = 0;
    for (size_t i = 0; i < d->n_bps; i++) {
        breakpoint *b = &d->bps[i];
        b->passed = false;
        for (size_t k = 0; k < b->n_locs; k++)
            engine_set_breakpoint(g, b->locs[k].tile, b->locs[k].pc, true);
        if (b->kind == BP_WATCH)
            snapshot_watch(d, b);
    }
    return true;
}

/* Feed the inputs and start the engine. */
static bool start(debugger *d, FILE *out)
{
    char err[512];
    for (size_t i = 0; i < d->n_inputs; i++) {
        const dbg_input *in = &d->inputs[i];
        const tmap_tensor *t = d->tmap ? tmap_find(d->tmap, in->what) : NULL;
        if (t) {
            if (!program_set_input(d->g, t, in->data, in->size, err, sizeof err)) {
                fail(out, "input '%s': %s", in->what, err);
                return false;
            }
        } else if (!engine_set_host_input(d->g, (uint32_t)strtoul(in->what, NULL, 0), in->data, in->size)) {
            fail(out, "out of host memory for input %s", in->what);
            return false;
        }
    }
    if (d->tmap) {
        /* The inputs not given: the same pseudo-random values `run` uses. */
        const char **given = calloc(d->n_inputs + 1, sizeof *given);
        if (!given) {
            fail(out, "out of host memory");
            return false;
        }
        for (size_t i = 0; i < d->n_inputs; i++)
            given[i] = d->inputs[i].what;
        bool ok = program_fill_inputs(d->g, d->tmap, given, d->n_inputs, out, "note: ", err, sizeof err);
        free(given);
        if (!ok) {
            fail(out, "%s", err);
            return false;
        }
    }
    engine_options o = { .max_cycles = d->opt.max_cycles, .threads = d->opt.threads, .trace_tile_first = 1 };
    if (engine_start(d->g, &o) != ENGINE_DONE) {
        fail(out, "%s", engine_message(d->g));
        return false;
    }
    d->started = true;
    return true;
}

debugger *debugger_new(const machine *m, const ipu_exe *e, const char *name, const debugger_options *o, char *err,
                       size_t err_size)
{
    debugger *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, err_size, "out of host memory");
        return NULL;
    }
    d->m = *m;
    d->e = e;
    d->name = strdup(name ? name : "program");
    if (o)
        d->opt = *o;
    d->next_id = 1;
    err[0] = 0;
    d->tmap = program_tensor_map(e, d->name, err, err_size);
    if ((!d->tmap && err[0]) || !d->name || !new_engine(d, err, err_size)) {
        if (!d->name)
            snprintf(err, err_size, "out of host memory");
        debugger_free(d);
        return NULL;
    }
    d->tile = engine_tile_at(d->g, 0)->tile_id;
    return d;
}

void debugger_free(debugger *d)
{
    if (!d)
        return;
    engine_free(d->g);
    tmap_free(d->tmap);
    for (size_t i = 0; i < d->n_bps; i++)
        free(d->bps[i].locs);
    for (size_t i = 0; i < d->n_inputs; i++) {
        free(d->inputs[i].what);
        free(d->inputs[i].data);
    }
    free(d->inputs);
    free(d->name);
    free(d);
}

bool debugger_add_input(debugger *d, const char *what, const void *data, size_t size, char *err, size_t err_size)
{
    uint32_t stream;
    if (!parse_u32(what, &stream)) {
        const tmap_tensor *t = d->tmap ? tmap_find(d->tmap, what) : NULL;
        if (!t || !(t->role & TMAP_INPUT)) {
            snprintf(err, err_size, "%s has no input tensor '%s'%s", d->name, what,
                     d->tmap ? "" : " (it has no tensor map: use a stream number)");
            return false;
        }
        if (program_tensor_bytes(t) != size) {
            snprintf(err, err_size, "input '%s' has %zu bytes, the tensor has %llu", what, size,
                     (unsigned long long)program_tensor_bytes(t));
            return false;
        }
    }
    dbg_input *grown = realloc(d->inputs, (d->n_inputs + 1) * sizeof *d->inputs);
    if (!grown) {
        snprintf(err, err_size, "out of host memory");
        return false;
    }
    d->inputs = grown;
    dbg_input *in = &d->inputs[d->n_inputs];
    in->what = strdup(what);
    in->data = malloc(size ? size : 1);
    in->size = size;
    if (!in->what || !in->data) {
        free(in->what);
        free(in->data);
        snprintf(err, err_size, "out of host memory");
        return false;
    }
    if (size)
        memcpy(in->data, data, size);
    d->n_inputs++;
    return true;
}

void debugger_set_interrupt(debugger *d, volatile int *flag) { d->interrupt = flag; }
engine *debugger_engine(const debugger *d) { return d->g; }
uint32_t debugger_tile(const debugger *d) { return d->tile; }
unsigned debugger_context(const debugger *d) { return d->context; }

/* ---- showing where things are -------------------------------------------- */

typedef struct sym_ctx {
    const debugger *d;
    uint32_t tile;
} sym_ctx;

static const char *symbol_exactly_at(void *ctx, uint32_t addr)
{
    const sym_ctx *c = ctx;
    const exe_symbol *sym = exe_symbol_at(c->d->e, c->tile, addr);
    return sym && sym->addr == addr ? sym->name : NULL;
}

/* The instruction or bundle at pc; returns its bytes (4 or 8). */
static size_t disasm_at(const debugger *d, const ipu_tile *t, uint32_t pc, char *buf, size_t n)
{
    uint32_t w0 = 0, w1 = 0;
    if (tmem_read_bytes(&t->s.mem, pc, &w0, 4) != TMEM_OK) {
        snprintf(buf, n, "(not in tile memory)");
        return 4;
    }
    bool have_w1 = pc + 4 < t->code_end && tmem_read_bytes(&t->s.mem, pc + 4, &w1, 4) == TMEM_OK;
    sym_ctx c = { d, t->tile_id };
    return disasm_bundle_sym(w0, w1, have_w1, pc, symbol_exactly_at, &c, buf, n);
}

static void print_location(const debugger *d, FILE *out, uint32_t tile, unsigned k, uint32_t pc)
{
    char ctx[24], where[320], insn[200];
    symbolize(d, tile, pc, where, sizeof where);
    const ipu_tile *t = engine_tile(d->g, tile);
    fprintf(out, "tile %u, %s, pc 0x%x%s, cycle %llu\n", tile, context_name(k, ctx, sizeof ctx), pc, where,
            t ? (unsigned long long)t->s.cycle : 0ull);
    if (t && tile_decoded_at(t, pc)) {
        disasm_at(d, t, pc, insn, sizeof insn);
        fprintf(out, "   0x%x:  %s\n", pc, insn);
    }
}

static uint64_t max_tile_cycle(const debugger *d)
{
    uint64_t c = 0;
    for (size_t i = 0; i < engine_tile_count(d->g); i++)
        if (engine_tile_at(d->g, i)->s.cycle > c)
            c = engine_tile_at(d->g, i)->s.cycle;
    return c;
}

/* ---- running ------------------------------------------------------------- */

enum stop { STOP_STEP, STOP_SHOWN, STOP_END, STOP_ERROR };

static void report_end(debugger *d, enum engine_status st, FILE *out)
{
    if (st == ENGINE_DONE) {
        const engine_stats *s = engine_get_stats(d->g);
        uint64_t cycles = 0;
        for (uint32_t c = 0; c < s->n_chips; c++)
            if (s->chips[c].c.cycles > cycles)
                cycles = s->chips[c].c.cycles;
        fprintf(out, "The program ended: %llu cycles, %llu instructions, %zu supersteps.\n",
                (unsigned long long)cycles, (unsigned long long)s->instructions, s->n_supersteps);
        return;
    }
    if (st == ENGINE_FAULT) {
        for (size_t i = 0; i < engine_tile_count(d->g); i++) {
            const ipu_tile *t = engine_tile_at(d->g, i);
            if (t->s.fault.exception != ISA_EXC_NONE) {
                d->tile = t->tile_id;
                d->context = t->s.fault.context;
                break;
            }
        }
        fprintf(out, "Simulated exception: %s\n", engine_message(d->g));
        return;
    }
    fprintf(out, "The program stopped: %s\n", engine_message(d->g));
}

/* Continue the engine to the next stop the user asked for. */
static enum stop resume(debugger *d, bool step, bool next_superstep, FILE *out)
{
    if (!d->started && !start(d, out))
        return STOP_ERROR;
    if (engine_finished(d->g)) {
        fail(out, "the program is not running (it has ended; 'run' starts it again)");
        return STOP_ERROR;
    }
    /* Superstep breakpoints look at the supersteps that end from now on. */
    d->ss_seen = engine_get_stats(d->g)->n_supersteps;
    for (;;) {
        configure(d, step, next_superstep);
        d->watch_hit = 0;
        enum engine_status st = engine_continue(d->g);
        if (st != ENGINE_PAUSED) {
            report_end(d, st, out);
            return STOP_END;
        }
        const engine_pause *p = engine_get_pause(d->g);
        switch (p->reason) {
        case ENGINE_PAUSE_BREAKPOINT: {
            int id = 0;
            for (size_t i = 0; i < d->n_bps; i++)
                for (size_t k = 0; k < d->bps[i].n_locs; k++)
                    if (d->bps[i].locs[k].tile == p->tile && d->bps[i].locs[k].pc == p->pc) {
                        if (!id)
                            id = d->bps[i].id;
                        d->bps[i].hits++;
                        break;
                    }
            if (!id)
                continue;
            d->tile = p->tile;
            d->context = p->context;
            fprintf(out, "Breakpoint %d, ", id);
            print_location(d, out, p->tile, p->context, p->pc);
            return STOP_SHOWN;
        }
        case ENGINE_PAUSE_CYCLE: {
            int id = 0;
            for (size_t i = 0; i < d->n_bps; i++) {
                breakpoint *b = &d->bps[i];
                if (b->kind == BP_CYCLE && !b->passed && b->n <= p->cycle) {
                    b->passed = true;
                    b->hits++;
                    if (!id)
                        id = b->id;
                }
            }
            d->tile = p->tile;
            d->context = ISA_SUPERVISOR;
            fprintf(out, "Breakpoint %d, tile %u reached cycle %llu\n", id, p->tile, (unsigned long long)p->cycle);
            const ipu_tile *t = cur_tile(d);
            print_location(d, out, d->tile, d->context, t->s.ctx[ISA_SUPERVISOR].pc);
            return STOP_SHOWN;
        }
        case ENGINE_PAUSE_STEP:
            if (!step)
                continue;
            d->context = p->context;
            return STOP_STEP;
        case ENGINE_PAUSE_CHECK: {
            breakpoint *b = NULL;
            for (size_t i = 0; i < d->n_bps; i++)
                if (d->bps[i].id == d->watch_hit)
                    b = &d->bps[i];
            if (!b)
                continue;
            b->hits++;
            fprintf(out, "Watchpoint %d, tile %u 0x%x (%u bytes) changed", b->id, b->tile, b->addr, b->bytes);
            if (p->tile == UINT32_MAX)
                fprintf(out, " by the exchange\n");
            else
                fprintf(out, "\n");
            fprintf(out, "  old:");
            for (uint32_t i = 0; i < b->bytes; i++)
                fprintf(out, " %02x", b->old[i]);
            fprintf(out, "\n  new:");
            for (uint32_t i = 0; i < b->bytes; i++)
                fprintf(out, " %02x", b->value[i]);
            fprintf(out, "\n");
            if (p->tile != UINT32_MAX) {
                d->tile = p->tile;
                d->context = p->context;
                fprintf(out, "after the issue at ");
                print_location(d, out, p->tile, p->context, p->pc);
            }
            return STOP_SHOWN;
        }
        case ENGINE_PAUSE_SUPERSTEP: {
            const engine_stats *s = engine_get_stats(d->g);
            const engine_superstep *hit = NULL;
            int id = 0;
            for (size_t i = d->ss_seen; i < s->n_supersteps; i++) {
                const engine_superstep *ss = &s->supersteps[i];
                for (size_t k = 0; k < d->n_bps; k++)
                    if (d->bps[k].kind == BP_SUPERSTEP && d->bps[k].n == ss->index) {
                        d->bps[k].hits++;
                        if (!id)
                            id = d->bps[k].id;
                        if (!hit)
                            hit = ss;
                    }
                if (next_superstep && !hit)
                    hit = ss;
            }
            d->ss_seen = s->n_supersteps;
            if (!hit)
                continue;
            if (id)
                fprintf(out, "Breakpoint %d, ", id);
            fprintf(out, "superstep %u of chip %u ended (%s) at cycle %llu\n", hit->index, hit->chip,
                    hit->zone == 1 ? "sync 1" : hit->zone == 2 ? "sync 2" : "end of program",
                    (unsigned long long)hit->end_cycle);
            return STOP_SHOWN;
        }
        case ENGINE_PAUSE_INTERRUPT:
            if (d->interrupt)
                *d->interrupt = 0;
            fprintf(out, "Interrupted at cycle %llu.\n", (unsigned long long)max_tile_cycle(d));
            return STOP_SHOWN;
        case ENGINE_PAUSE_NONE:
            break;
        }
        return STOP_SHOWN;
    }
}

/* An optional repeat count. */
static bool parse_count(const char *args, uint64_t *n, FILE *out)
{
    char w[64];
    *n = 1;
    if (!next_word(&args, w, sizeof w))
        return true;
    if (!parse_u64(w, n) || *n == 0 || *n > MAX_REPEAT || !at_end(args)) {
        fail(out, "expected a count from 1 to %llu, got '%.64s'", MAX_REPEAT, w);
        return false;
    }
    return true;
}

static enum debugger_result cmd_run(debugger *d, const char *args, FILE *out)
{
    if (!at_end(args))
        return fail(out, "run takes no arguments (inputs are given to 'ipusim debug')");
    if (d->started) {
        char err[512];
        if (!new_engine(d, err, sizeof err))
            return fail(out, "%s", err);
    }
    fprintf(out, "Starting %s on %s (%zu tile%s with code).\n", d->name, d->m.name, engine_tile_count(d->g),
            engine_tile_count(d->g) == 1 ? "" : "s");
    return resume(d, false, false, out) == STOP_ERROR ? DEBUGGER_ERROR : DEBUGGER_OK;
}

static enum debugger_result cmd_continue(debugger *d, const char *args, FILE *out)
{
    uint64_t n;
    if (!parse_count(args, &n, out))
        return DEBUGGER_ERROR;
    for (uint64_t i = 0; i < n; i++) {
        enum stop s = resume(d, false, false, out);
        if (s == STOP_ERROR)
            return DEBUGGER_ERROR;
        if (s == STOP_END)
            break;
    }
    return DEBUGGER_OK;
}

static enum debugger_result cmd_stepi(debugger *d, const char *args, FILE *out)
{
    uint64_t n;
    if (!parse_count(args, &n, out))
        return DEBUGGER_ERROR;
    const char *status = engine_tile_status(d->g, d->tile);
    if (d->started && status && (!strcmp(status, "ended") || !strcmp(status, "faulted")))
        return fail(out, "tile %u has %s", d->tile, !strcmp(status, "ended") ? "ended its program" : "faulted");
    for (uint64_t i = 0; i < n; i++) {
        enum stop s = resume(d, true, false, out);
        if (s == STOP_ERROR)
            return DEBUGGER_ERROR;
        if (s != STOP_STEP)
            return DEBUGGER_OK;
    }
    const engine_pause *p = engine_get_pause(d->g);
    print_location(d, out, d->tile, p->context, p->pc);
    const ipu_tile *t = cur_tile(d);
    const isa_context *c = &t->s.ctx[p->context];
    if (c->run_mode == ISA_RUN_RUNNING || c->run_mode == ISA_RUN_SYNC) {
        char where[320];
        symbolize(d, d->tile, c->pc, where, sizeof where);
        fprintf(out, "next: pc 0x%x%s\n", c->pc, where);
    }
    return DEBUGGER_OK;
}

static enum debugger_result cmd_next_superstep(debugger *d, const char *args, FILE *out)
{
    if (!at_end(args))
        return fail(out, "next-superstep takes no arguments");
    return resume(d, false, true, out) == STOP_ERROR ? DEBUGGER_ERROR : DEBUGGER_OK;
}

/* ---- breakpoints ---------------------------------------------------------- */

static breakpoint *new_bp(debugger *d, enum bp_kind kind, const char *spec, FILE *out)
{
    if (d->n_bps == MAX_BREAKPOINTS) {
        fail(out, "at most %d breakpoints and watchpoints", MAX_BREAKPOINTS);
        return NULL;
    }
    breakpoint *b = &d->bps[d->n_bps];
    memset(b, 0, sizeof *b);
    b->kind = kind;
    snprintf(b->spec, sizeof b->spec, "%s", spec);
    return b;
}

static bool add_loc(breakpoint *b, uint32_t tile, uint32_t pc)
{
    bp_loc *l = realloc(b->locs, (b->n_locs + 1) * sizeof *l);
    if (!l)
        return false;
    b->locs = l;
    b->locs[b->n_locs++] = (bp_loc){ tile, pc };
    return true;
}

static enum debugger_result cmd_break(debugger *d, const char *args, FILE *out)
{
    char w[128], spec[96];
    const char *rest = args;
    if (!next_word(&rest, w, sizeof w))
        return fail(out, "break needs a location: TILE:ADDR, TILE:SYMBOL, SYMBOL, superstep N or cycle N");
    snprintf(spec, sizeof spec, "%.90s", skip_blanks(args));
    size_t len = strlen(spec);
    while (len && (spec[len - 1] == ' ' || spec[len - 1] == '\t'))
        spec[--len] = 0;
    if (!strcmp(w, "superstep") || !strcmp(w, "cycle")) {
        bool ss = w[0] == 's';
        char num[64];
        uint64_t n;
        if (!next_word(&rest, num, sizeof num) || !parse_u64(num, &n) || !at_end(rest) || (!ss && n == 0) ||
            (ss && n > UINT32_MAX))
            return fail(out, "break %s needs a number%s", w, ss ? " (0, 1, ...)" : " (1, 2, ...)");
        breakpoint *b = new_bp(d, ss ? BP_SUPERSTEP : BP_CYCLE, spec, out);
        if (!b)
            return DEBUGGER_ERROR;
        b->n = n;
        b->id = d->next_id++;
        d->n_bps++;
        fprintf(out, "Breakpoint %d: %s %llu\n", b->id, ss ? "end of superstep" : "cycle", (unsigned long long)n);
        return DEBUGGER_OK;
    }
    if (!at_end(rest))
        return fail(out, "break takes one location, got '%s'", spec);
    breakpoint *b = new_bp(d, BP_PC, spec, out);
    if (!b)
        return DEBUGGER_ERROR;
    char *colon = strchr(w, ':');
    if (colon) {
        *colon = 0;
        uint32_t tile, pc;
        if (!parse_u32(w, &tile))
            return fail(out, "bad tile '%s' in '%s'", w, spec);
        if (!engine_tile(d->g, tile))
            return fail(out, "tile %u has no code in %s", tile, d->name);
        if (!parse_addr(d, tile, colon + 1, &pc, out))
            return DEBUGGER_ERROR;
        if (!add_loc(b, tile, pc))
            return fail(out, "out of host memory");
    } else {
        uint32_t pc;
        if (parse_u32(w, &pc)) {
            if (!add_loc(b, d->tile, pc))
                return fail(out, "out of host memory");
        } else {
            for (size_t i = 0; i < d->e->n_symbols; i++) {
                const exe_symbol *s = &d->e->symbols[i];
                if (strcmp(s->name, w) || !engine_tile(d->g, s->tile))
                    continue;
                if (!add_loc(b, s->tile, s->addr)) {
                    free(b->locs);
                    return fail(out, "out of host memory");
                }
            }
            if (!b->n_locs)
                return fail(out, "no symbol '%s' in %s", w, d->name);
        }
    }
    for (size_t k = 0; k < b->n_locs; k++) {
        const ipu_tile *t = engine_tile(d->g, b->locs[k].tile);
        uint32_t tile = b->locs[k].tile, pc = b->locs[k].pc;
        if (pc & 3) {
            free(b->locs);
            return fail(out, "tile %u: 0x%x is not 4-byte aligned", tile, pc);
        }
        if (!tile_decoded_at(t, pc)) {
            free(b->locs);
            return fail(out, "tile %u: 0x%x is not in the tile's code (0x%x-0x%x)", tile, pc, t->code_base,
                        t->code_end - 1);
        }
    }
    /* Set them; undo the ones set here if one cannot be. */
    bool *set_here = calloc(b->n_locs, sizeof *set_here);
    if (!set_here) {
        free(b->locs);
        return fail(out, "out of host memory");
    }
    for (size_t k = 0; k < b->n_locs; k++) {
        uint32_t tile = b->locs[k].tile, pc = b->locs[k].pc;
        if (tile_breakpoint_at(engine_tile(d->g, tile), pc))
            continue;
        if (!engine_set_breakpoint(d->g, tile, pc, true)) {
            for (size_t j = 0; j < k; j++)
                if (set_here[j])
                    engine_set_breakpoint(d->g, b->locs[j].tile, b->locs[j].pc, false);
            free(set_here);
            free(b->locs);
            return fail(out, "tile %u: 0x%x is not the start of an instruction (it is inside a bundle)", tile, pc);
        }
        set_here[k] = true;
    }
    free(set_here);
    b->id = d->next_id++;
    d->n_bps++;
    char where[320];
    symbolize(d, b->locs[0].tile, b->locs[0].pc, where, sizeof where);
    if (b->n_locs == 1)
        fprintf(out, "Breakpoint %d: tile %u, pc 0x%x%s\n", b->id, b->locs[0].tile, b->locs[0].pc, where);
    else
        fprintf(out, "Breakpoint %d: %s on %zu tiles\n", b->id, w, b->n_locs);
    return DEBUGGER_OK;
}

static enum debugger_result cmd_watch(debugger *d, const char *args, FILE *out)
{
    char w[128];
    const char *rest = args;
    if (!next_word(&rest, w, sizeof w) || !at_end(rest))
        return fail(out, "watch needs one TILE:ADDR[:BYTES]");
    char *c1 = strchr(w, ':');
    if (!c1)
        return fail(out, "watch needs TILE:ADDR[:BYTES], got '%s'", w);
    *c1++ = 0;
    char *c2 = strchr(c1, ':');
    uint32_t tile, addr, bytes = 4;
    if (c2)
        *c2++ = 0;
    if (!parse_u32(w, &tile))
        return fail(out, "bad tile '%s'", w);
    const ipu_tile *t = engine_tile(d->g, tile);
    if (!t)
        return fail(out, "tile %u has no code in %s", tile, d->name);
    if (!parse_addr(d, tile, c1, &addr, out))
        return DEBUGGER_ERROR;
    if (c2 && (!parse_u32(c2, &bytes) || bytes == 0 || bytes > MAX_WATCH_BYTES))
        return fail(out, "watch: bytes must be 1 to %d", MAX_WATCH_BYTES);
    uint8_t probe[MAX_WATCH_BYTES];
    if (tmem_read_bytes(&t->s.mem, addr, probe, bytes) != TMEM_OK)
        return fail(out, "tile %u: 0x%x (%u bytes) is not in tile memory (0x%x-0x%x)", tile, addr, bytes,
                    t->s.mem.base, t->s.mem.base + t->s.mem.size_bytes - 1);
    char spec[96];
    snprintf(spec, sizeof spec, "%u:0x%x:%u", tile, addr, bytes);
    breakpoint *b = new_bp(d, BP_WATCH, spec, out);
    if (!b)
        return DEBUGGER_ERROR;
    b->tile = tile;
    b->addr = addr;
    b->bytes = bytes;
    snapshot_watch(d, b);
    b->id = d->next_id++;
    d->n_bps++;
    fprintf(out, "Watchpoint %d: tile %u 0x%x (%u bytes)\n", b->id, tile, addr, bytes);
    return DEBUGGER_OK;
}

static void remove_bp(debugger *d, size_t i)
{
    breakpoint b = d->bps[i];
    memmove(&d->bps[i], &d->bps[i + 1], (d->n_bps - i - 1) * sizeof b);
    d->n_bps--;
    for (size_t k = 0; k < b.n_locs; k++) {
        bool kept = false;
        for (size_t j = 0; j < d->n_bps && !kept; j++)
            for (size_t l = 0; l < d->bps[j].n_locs && !kept; l++)
                kept = d->bps[j].locs[l].tile == b.locs[k].tile && d->bps[j].locs[l].pc == b.locs[k].pc;
        if (!kept)
            engine_set_breakpoint(d->g, b.locs[k].tile, b.locs[k].pc, false);
    }
    free(b.locs);
}

static enum debugger_result cmd_delete(debugger *d, const char *args, FILE *out)
{
    char w[64];
    const char *rest = args;
    if (!next_word(&rest, w, sizeof w) || !at_end(rest))
        return fail(out, "delete needs a breakpoint number or 'all'");
    if (!strcmp(w, "all")) {
        while (d->n_bps)
            remove_bp(d, d->n_bps - 1);
        fprintf(out, "Deleted all breakpoints.\n");
        return DEBUGGER_OK;
    }
    uint64_t id;
    if (!parse_u64(w, &id))
        return fail(out, "delete needs a breakpoint number or 'all', got '%s'", w);
    for (size_t i = 0; i < d->n_bps; i++)
        if ((uint64_t)d->bps[i].id == id) {
            remove_bp(d, i);
            fprintf(out, "Deleted breakpoint %llu.\n", (unsigned long long)id);
            return DEBUGGER_OK;
        }
    return fail(out, "no breakpoint number %s", w);
}

/* ---- selection ------------------------------------------------------------- */

static enum debugger_result cmd_tile(debugger *d, const char *args, FILE *out)
{
    char w[64];
    const char *rest = args;
    if (!next_word(&rest, w, sizeof w)) {
        fprintf(out, "Tile %u is selected.\n", d->tile);
        return DEBUGGER_OK;
    }
    uint32_t tile;
    if (!parse_u32(w, &tile) || !at_end(rest))
        return fail(out, "tile needs a tile number, got '%s'", w);
    if (!engine_tile(d->g, tile))
        return fail(out, "tile %u has no code in %s", tile, d->name);
    d->tile = tile;
    d->context = ISA_SUPERVISOR;
    const ipu_tile *t = cur_tile(d);
    print_location(d, out, tile, ISA_SUPERVISOR, t->s.ctx[ISA_SUPERVISOR].pc);
    return DEBUGGER_OK;
}

static enum debugger_result cmd_context(debugger *d, const char *args, FILE *out)
{
    char w[64], name[24];
    const char *rest = args;
    if (!next_word(&rest, w, sizeof w)) {
        fprintf(out, "Context: %s of tile %u.\n", context_name(d->context, name, sizeof name), d->tile);
        return DEBUGGER_OK;
    }
    unsigned k;
    if (!parse_context(w, &k) || !at_end(rest))
        return fail(out, "context needs sup or w1..w6, got '%s'", w);
    d->context = k;
    const ipu_tile *t = cur_tile(d);
    print_location(d, out, d->tile, k, t->s.ctx[k].pc);
    return DEBUGGER_OK;
}

/* ---- registers, memory, tensors -------------------------------------------- */

static const char *run_mode_name(uint8_t mode)
{
    switch (mode) {
    case ISA_RUN_INACTIVE: return "inactive";
    case ISA_RUN_RUNNING: return "running";
    case ISA_RUN_SYNC: return "at a sync";
    case ISA_RUN_DONE: return "ended";
    case ISA_RUN_FAULTED: return "faulted";
    default: return "?";
    }
}

static void format_f16_pair(uint32_t v, char *buf, size_t n)
{
    snprintf(buf, n, "[%.6g, %.6g]", fp16_to_f32((f16_t)(v & 0xffff)), fp16_to_f32((f16_t)(v >> 16)));
}

static float bits_f32(uint32_t v)
{
    float f;
    memcpy(&f, &v, 4);
    return f;
}

/* "$m3", "$a0", "$pc", "$FP_CTL" of context k. */
static bool register_value(const ipu_tile *t, unsigned k, const char *name, uint32_t *v, char *kind)
{
    const isa_context *c = &t->s.ctx[k];
    if ((name[0] == 'm' || name[0] == 'a') && name[1] >= '0' && name[1] <= '9') {
        uint32_t r;
        if (!parse_u32(name + 1, &r) || r > 15 || (name[1] == '0' && name[2]))
            return false;
        *kind = name[0];
        *v = name[0] == 'm' ? c->m[r] : c->a[r];
        return true;
    }
    *kind = 'c';
    if (!strcmp(name, "pc") || !strcmp(name, "PC")) {
        *v = c->pc;
        return true;
    }
    int csr = isa_csr_number(name);
    if (csr < 0)
        return false;
    if (csr == ISA_CSR_COUNT_L)
        *v = (uint32_t)t->s.cycle;
    else if (csr == ISA_CSR_COUNT_U)
        *v = (uint32_t)(t->s.cycle >> 32);
    else if (csr == ISA_CSR_PC)
        *v = c->pc;
    else
        *v = c->csr[csr];
    return true;
}

static void print_register(FILE *out, const char *name, char kind, uint32_t v)
{
    if (kind == 'a') {
        char pair[64];
        format_f16_pair(v, pair, sizeof pair);
        fprintf(out, "$%s = 0x%08x (f32 %.9g, f16 %s)\n", name, v, bits_f32(v), pair);
    } else {
        fprintf(out, "$%s = 0x%08x (%u, %d)\n", name, v, v, (int32_t)v);
    }
}

static void format_element(char *buf, size_t n, uint32_t dtype, const uint8_t *p, uint32_t bytes)
{
    uint32_t u32 = 0;
    uint64_t u64 = 0;
    memcpy(&u64, p, bytes < 8 ? bytes : 8);
    memcpy(&u32, p, bytes < 4 ? bytes : 4);
    switch (dtype) {
    case 1: snprintf(buf, n, "%.9g", bits_f32(u32)); break;
    case 10: snprintf(buf, n, "%.6g", fp16_to_f32((f16_t)u32)); break;
    case 6: snprintf(buf, n, "%d", (int32_t)u32); break;
    case 7: snprintf(buf, n, "%lld", (long long)u64); break;
    case 2: case 9: snprintf(buf, n, "%u", p[0]); break;
    case 3: snprintf(buf, n, "%d", (int8_t)p[0]); break;
    default: snprintf(buf, n, "0x%llx", (unsigned long long)u64); break;
    }
}

/* "[1, 0:2]" against t's shape: per dimension a range [lo, hi). */
static bool parse_slice(const char *s, const tmap_tensor *t, uint64_t *lo, uint64_t *hi, FILE *out)
{
    for (uint32_t i = 0; i < t->rank; i++) {
        lo[i] = 0;
        hi[i] = t->dims[i];
    }
    s = skip_blanks(s);
    if (!*s)
        return true;
    if (*s != '[') {
        fail(out, "a slice is [I, LO:HI, ...], got '%.64s'", s);
        return false;
    }
    s++;
    for (uint32_t dim = 0;; dim++) {
        s = skip_blanks(s);
        if (*s == ']' && dim == 0)
            break;
        if (dim >= t->rank) {
            fail(out, "tensor '%s' has %u dimension%s", t->name, t->rank, t->rank == 1 ? "" : "s");
            return false;
        }
        char *end;
        uint64_t a = 0, b = t->dims[dim];
        bool range = false;
        if (*s != ':') {
            if (*s < '0' || *s > '9') {
                fail(out, "bad slice at '%.32s'", s);
                return false;
            }
            a = strtoull(s, &end, 10);
            s = end;
        }
        s = skip_blanks(s);
        if (*s == ':') {
            range = true;
            s = skip_blanks(s + 1);
            if (*s >= '0' && *s <= '9') {
                b = strtoull(s, &end, 10);
                s = end;
            }
        } else {
            b = a + 1;
        }
        if (!range && a >= t->dims[dim]) {
            fail(out, "index %llu is out of range for dimension %u (size %llu)", (unsigned long long)a, dim,
                 (unsigned long long)t->dims[dim]);
            return false;
        }
        if (a >= b || b > t->dims[dim]) {
            fail(out, "slice %llu:%llu is out of range for dimension %u (size %llu)", (unsigned long long)a,
                 (unsigned long long)b, dim, (unsigned long long)t->dims[dim]);
            return false;
        }
        lo[dim] = a;
        hi[dim] = b;
        s = skip_blanks(s);
        if (*s == ',') {
            s++;
            continue;
        }
        if (*s == ']')
            break;
        fail(out, "bad slice at '%.32s'", s);
        return false;
    }
    if (!at_end(s + 1)) {
        fail(out, "unexpected '%.32s' after the slice", s + 1);
        return false;
    }
    return true;
}

static enum debugger_result print_tensor(debugger *d, const tmap_tensor *t, const char *slice, FILE *out)
{
    uint64_t lo[TMAP_MAX_RANK], hi[TMAP_MAX_RANK];
    if (!parse_slice(slice, t, lo, hi, out))
        return DEBUGGER_ERROR;
    uint64_t bytes = program_tensor_bytes(t);
    uint8_t *data = malloc(bytes ? bytes : 1);
    if (!data)
        return fail(out, "out of host memory for tensor '%s' (%llu bytes)", t->name, (unsigned long long)bytes);
    char err[512];
    if (!program_read_tensor(d->g, t, data, err, sizeof err)) {
        free(data);
        return fail(out, "%s", err);
    }
    uint64_t count = 1;
    for (uint32_t i = 0; i < t->rank; i++)
        count *= hi[i] - lo[i];
    fprintf(out, "%s: %s [", t->name, tmap_dtype_name(t->dtype));
    for (uint32_t i = 0; i < t->rank; i++)
        fprintf(out, "%s%llu", i ? "," : "", (unsigned long long)t->dims[i]);
    fprintf(out, "]%s%s%s%s%s, %llu element%s shown\n", t->role & TMAP_INPUT ? " input" : "",
            t->role & TMAP_OUTPUT ? " output" : "", t->role & TMAP_WEIGHT ? " weight" : "",
            t->role & TMAP_ACTIVATION ? " activation" : "",
            t->role & TMAP_TRANSIENT ? " (transient: its memory holds it until its last reader)" : "",
            (unsigned long long)count, count == 1 ? "" : "s");
    uint64_t idx[TMAP_MAX_RANK];
    memcpy(idx, lo, sizeof idx);
    uint64_t row = t->rank ? hi[t->rank - 1] - lo[t->rank - 1] : 1;
    for (uint64_t k = 0; k < count && k < MAX_PRINT_ELEMENTS; k++) {
        uint64_t flat = 0;
        for (uint32_t i = 0; i < t->rank; i++)
            flat = flat * t->dims[i] + idx[i];
        if (k % row == 0) {
            fprintf(out, "%s  [", k ? "\n" : "");
            for (uint32_t i = 0; i < t->rank; i++)
                fprintf(out, "%s%llu", i ? "," : "", (unsigned long long)idx[i]);
            fprintf(out, "]");
        }
        char v[64];
        format_element(v, sizeof v, t->dtype, data + flat * t->element_bytes, t->element_bytes);
        fprintf(out, " %s", v);
        for (uint32_t i = t->rank; i-- > 0;) {
            if (++idx[i] < hi[i])
                break;
            idx[i] = lo[i];
        }
    }
    fprintf(out, "\n");
    if (count > MAX_PRINT_ELEMENTS)
        fprintf(out, "  ... %llu more (print a slice)\n", (unsigned long long)(count - MAX_PRINT_ELEMENTS));
    free(data);
    return DEBUGGER_OK;
}

static enum debugger_result examine(debugger *d, uint32_t addr, uint64_t count, char fmt, FILE *out);

static enum debugger_result cmd_print(debugger *d, const char *args, FILE *out)
{
    const char *s = skip_blanks(args);
    if (!*s)
        return fail(out, "print needs $REGISTER, a tensor or a symbol");
    if (*s == '$') {
        char w[64];
        const char *rest = s + 1;
        if (!next_word(&rest, w, sizeof w) || !at_end(rest))
            return fail(out, "print takes one register");
        uint32_t v;
        char kind;
        if (!register_value(cur_tile(d), d->context, w, &v, &kind))
            return fail(out, "unknown register '$%s' ($m0-$m15, $a0-$a15, $pc or a CSR such as $FP_CTL)", w);
        print_register(out, w, kind, v);
        return DEBUGGER_OK;
    }
    char name[256];
    size_t n = 0;
    while (s[n] && s[n] != ' ' && s[n] != '\t' && s[n] != '[' && n + 1 < sizeof name) {
        name[n] = s[n];
        n++;
    }
    name[n] = 0;
    const tmap_tensor *t = d->tmap ? tmap_find(d->tmap, name) : NULL;
    if (t)
        return print_tensor(d, t, s + n, out);
    const exe_symbol *sym = symbol_on_tile(d, d->tile, name);
    if (sym && at_end(s + n)) {
        uint64_t words = sym->size / 4 ? sym->size / 4 : 1;
        return examine(d, sym->addr, words < 64 ? words : 64, 'x', out);
    }
    if (!d->tmap)
        return fail(out, "no symbol '%s' on tile %u (%s has no tensor map)", name, d->tile, d->name);
    return fail(out, "no tensor '%s' in %s and no symbol of that name on tile %u", name, d->name, d->tile);
}

static enum debugger_result examine(debugger *d, uint32_t addr, uint64_t count, char fmt, FILE *out)
{
    const ipu_tile *t = cur_tile(d);
    unsigned unit = fmt == 'b' ? 1 : fmt == 'h' ? 2 : 4;
    unsigned per_line = fmt == 'b' ? 16 : fmt == 'h' ? 8 : 4;
    uint64_t bytes = count * unit;
    if ((uint64_t)addr + bytes > (uint64_t)t->s.mem.base + t->s.mem.size_bytes || addr < t->s.mem.base)
        return fail(out, "tile %u: 0x%x-0x%llx is not in tile memory (0x%x-0x%x)", d->tile, addr,
                    (unsigned long long)(addr + bytes - 1), t->s.mem.base, t->s.mem.base + t->s.mem.size_bytes - 1);
    for (uint64_t i = 0; i < count; i++) {
        uint32_t a = addr + (uint32_t)(i * unit);
        uint8_t b[4] = { 0 };
        enum tmem_status st = tmem_read_bytes(&t->s.mem, a, b, unit);
        if (st != TMEM_OK) {
            fprintf(out, "\n");
            return fail(out, "tile %u: cannot read 0x%x: %s", d->tile, a, tmem_status_name(st));
        }
        if (i % per_line == 0) {
            char where[320] = "";
            const exe_symbol *sym = exe_symbol_at(d->e, d->tile, a);
            if (sym && a == sym->addr)
                snprintf(where, sizeof where, " <%s>", sym->name);
            else if (sym)
                snprintf(where, sizeof where, " <%s+0x%x>", sym->name, a - sym->addr);
            fprintf(out, "%s0x%x%s:", i ? "\n" : "", a, where);
        }
        uint32_t v = 0;
        memcpy(&v, b, unit);
        switch (fmt) {
        case 'x': fprintf(out, " 0x%08x", v); break;
        case 'd': fprintf(out, " %d", (int32_t)v); break;
        case 'u': fprintf(out, " %u", v); break;
        case 'f': fprintf(out, " %.9g", bits_f32(v)); break;
        case 'h': fprintf(out, " %.6g", fp16_to_f32((f16_t)v)); break;
        default: fprintf(out, " %02x", v); break;
        }
    }
    fprintf(out, "\n");
    return DEBUGGER_OK;
}

/* x/NFMT ADDR: args starts at the '/' or after "x". */
static enum debugger_result cmd_x(debugger *d, const char *args, FILE *out)
{
    uint64_t count = 1;
    char fmt = 'x';
    const char *s = args;
    if (*s == '/') {
        s++;
        if (*s >= '0' && *s <= '9') {
            char *end;
            errno = 0;
            count = strtoull(s, &end, 10);
            if (errno || count == 0 || count > MAX_X_UNITS)
                return fail(out, "x: the count must be 1 to %d", MAX_X_UNITS);
            s = end;
        }
        if (*s && *s != ' ' && *s != '\t') {
            if (!strchr("xdufhb", *s) || (s[1] && s[1] != ' ' && s[1] != '\t'))
                return fail(out, "x: unknown format '%.16s' (x hex, d decimal, u unsigned, f f32, h f16, b bytes)", s);
            fmt = *s++;
        }
    }
    char w[128];
    if (!next_word(&s, w, sizeof w) || !at_end(s))
        return fail(out, "x needs one address: x/NFMT ADDR");
    uint32_t addr;
    if (!parse_addr(d, d->tile, w, &addr, out))
        return DEBUGGER_ERROR;
    return examine(d, addr, count, fmt, out);
}

static enum debugger_result cmd_disassemble(debugger *d, const char *args, FILE *out)
{
    const ipu_tile *t = cur_tile(d);
    const isa_context *c = &t->s.ctx[d->context];
    char w[128];
    const char *s = args;
    uint32_t start, pc = c->pc;
    uint64_t count = 8;
    if (next_word(&s, w, sizeof w)) {
        if (!parse_addr(d, d->tile, w, &start, out))
            return DEBUGGER_ERROR;
        if (next_word(&s, w, sizeof w) && (!parse_u64(w, &count) || count == 0 || count > MAX_DISAS))
            return fail(out, "disassemble: the count must be 1 to %d", MAX_DISAS);
        if (!at_end(s))
            return fail(out, "disassemble takes [ADDR [N]]");
        start &= ~3u;
    } else {
        /* Three issues before pc, walking from an 8-aligned point that is
         * an issue boundary (a bundle starts 8-aligned). */
        uint32_t from = pc >= 64 ? (pc - 64) & ~7u : 0;
        if (from < t->code_base)
            from = t->code_base;
        uint32_t ring[3] = { pc, pc, pc };
        unsigned n = 0;
        for (uint32_t a = from; a < pc && tile_decoded_at(t, a);) {
            ring[n++ % 3] = a;
            const tile_decoded *dd = tile_decoded_at(t, a);
            a += dd->bytes == 8 && !(dd->invalid & ~TILE_DECODE_BREAKPOINT) ? 8 : 4;
        }
        start = n >= 3 ? ring[n % 3] : n ? ring[0] : pc;
        if (!tile_decoded_at(t, start))
            return fail(out, "tile %u: pc 0x%x is outside the code (0x%x-0x%x)", d->tile, pc, t->code_base,
                        t->code_end ? t->code_end - 1 : 0);
    }
    uint32_t a = start;
    for (uint64_t i = 0; i < count; i++) {
        if (!tile_decoded_at(t, a)) {
            if (i == 0)
                return fail(out, "tile %u: 0x%x is outside the code (0x%x-0x%x)", d->tile, a, t->code_base,
                            t->code_end ? t->code_end - 1 : 0);
            break;
        }
        char insn[200], where[320];
        size_t bytes = disasm_at(d, t, a, insn, sizeof insn);
        symbolize(d, d->tile, a, where, sizeof where);
        fprintf(out, "%s%s0x%x%s:  %s\n", a == pc ? "=>" : "  ", tile_breakpoint_at(t, a) ? "b " : "  ", a, where,
                insn);
        a += (uint32_t)bytes;
    }
    return DEBUGGER_OK;
}

static enum debugger_result cmd_where(debugger *d, const char *args, FILE *out)
{
    if (!at_end(args))
        return fail(out, "where takes no arguments");
    const ipu_tile *t = cur_tile(d);
    const isa_context *c = &t->s.ctx[d->context];
    char ctx[24], where[320];
    symbolize(d, d->tile, c->pc, where, sizeof where);
    uint32_t chip = d->tile / machine_u32(&d->m, MP_tiles_per_chip);
    fprintf(out, "tile %u, %s (%s), pc 0x%x%s\n", d->tile, context_name(d->context, ctx, sizeof ctx),
            run_mode_name(c->run_mode), c->pc, where);
    fprintf(out, "  cycle %llu, superstep %u of chip %u, %s%s\n", (unsigned long long)t->s.cycle,
            engine_supersteps_done(d->g, chip), chip, d->started ? "" : "not started: ",
            d->started ? engine_tile_status(d->g, d->tile) : "'run' starts it");
    return DEBUGGER_OK;
}

/* ---- info ------------------------------------------------------------------- */

static void info_breakpoints(debugger *d, FILE *out)
{
    if (!d->n_bps) {
        fprintf(out, "No breakpoints or watchpoints.\n");
        return;
    }
    fprintf(out, "%-4s %-11s %-40s %s\n", "Num", "Type", "Where", "Hits");
    for (size_t i = 0; i < d->n_bps; i++) {
        const breakpoint *b = &d->bps[i];
        const char *type = b->kind == BP_WATCH ? "watchpoint" : b->kind == BP_SUPERSTEP ? "superstep"
                           : b->kind == BP_CYCLE ? "cycle" : "breakpoint";
        char where[200];
        if (b->kind == BP_PC && b->n_locs == 1)
            snprintf(where, sizeof where, "tile %u, pc 0x%x (%s)", b->locs[0].tile, b->locs[0].pc, b->spec);
        else if (b->kind == BP_PC)
            snprintf(where, sizeof where, "%s on %zu tiles", b->spec, b->n_locs);
        else if (b->kind == BP_WATCH)
            snprintf(where, sizeof where, "tile %u 0x%x (%u bytes)", b->tile, b->addr, b->bytes);
        else
            snprintf(where, sizeof where, "%s %llu", b->kind == BP_CYCLE ? "cycle" : "end of superstep",
                     (unsigned long long)b->n);
        fprintf(out, "%-4d %-11s %-40s %llu\n", b->id, type, where, (unsigned long long)b->hits);
    }
}

static void info_tiles(debugger *d, FILE *out)
{
    size_t n = engine_tile_count(d->g);
    fprintf(out, "  %6s %12s %9s  %-24s %s\n", "tile", "cycle", "pc", "symbol", "status");
    for (size_t i = 0; i < n && i < 64; i++) {
        const ipu_tile *t = engine_tile_at(d->g, i);
        uint32_t pc = t->s.ctx[ISA_SUPERVISOR].pc;
        const exe_symbol *sym = exe_symbol_at(d->e, t->tile_id, pc);
        char where[160] = "";
        if (sym && pc == sym->addr)
            snprintf(where, sizeof where, "%s", sym->name);
        else if (sym)
            snprintf(where, sizeof where, "%s+0x%x", sym->name, pc - sym->addr);
        fprintf(out, "%s %6u %12llu %#9x  %-24s %s\n", t->tile_id == d->tile ? "*" : " ", t->tile_id,
                (unsigned long long)t->s.cycle, pc, where,
                d->started ? engine_tile_status(d->g, t->tile_id) : "not started");
    }
    if (n > 64)
        fprintf(out, "  ... and %zu more tiles\n", n - 64);
}

static enum debugger_result info_registers(debugger *d, const char *args, FILE *out)
{
    char w[64], name[24];
    unsigned k = d->context;
    const char *rest = args;
    if (next_word(&rest, w, sizeof w) && (!parse_context(w, &k) || !at_end(rest)))
        return fail(out, "info registers takes a context: sup or w1..w6, got '%s'", w);
    const ipu_tile *t = cur_tile(d);
    const isa_context *c = &t->s.ctx[k];
    char where[320];
    symbolize(d, d->tile, c->pc, where, sizeof where);
    fprintf(out, "tile %u, %s (%s), pc 0x%x%s\n", d->tile, context_name(k, name, sizeof name),
            run_mode_name(c->run_mode), c->pc, where);
    for (int r = 0; r < 16; r++)
        fprintf(out, "%s$m%-2d 0x%08x", r % 4 ? "   " : "", r, c->m[r]), r % 4 == 3 ? fputc('\n', out) : 0;
    for (int r = 0; r < 16; r++)
        fprintf(out, "%s$a%-2d 0x%08x %-12.6g", r % 4 ? "  " : "", r, c->a[r], bits_f32(c->a[r])),
            r % 4 == 3 ? fputc('\n', out) : 0;
    unsigned shown = 0;
    for (unsigned n = 0; n < ISA_CSR_SPACE; n++) {
        const char *csr = isa_csr_name(n);
        uint32_t v;
        char kind;
        if (!csr || n == ISA_CSR_PC || !register_value(t, k, csr, &v, &kind) || !v)
            continue;
        fprintf(out, "%s$%s 0x%08x", shown % 4 ? "   " : "", csr, v);
        if (++shown % 4 == 0)
            fputc('\n', out);
    }
    if (shown % 4)
        fputc('\n', out);
    if (c->rpt_remaining)
        fprintf(out, "rpt: %u more, body 0x%x-0x%x\n", c->rpt_remaining, c->rpt_first, c->rpt_end - 1);
    return DEBUGGER_OK;
}

static void info_supersteps(debugger *d, FILE *out)
{
    const engine_stats *s = engine_get_stats(d->g);
    if (!d->started || !s->n_supersteps) {
        fprintf(out, "No superstep has ended yet.\n");
        return;
    }
    fprintf(out, "%4s %5s %-8s %12s %12s %10s %8s %12s\n", "chip", "step", "ended_by", "start_cycle", "end_cycle",
            "cycles", "busiest", "instructions");
    size_t first = s->n_supersteps > 200 ? s->n_supersteps - 200 : 0;
    if (first)
        fprintf(out, "(the last 200 of %zu)\n", s->n_supersteps);
    for (size_t i = first; i < s->n_supersteps; i++) {
        const engine_superstep *ss = &s->supersteps[i];
        fprintf(out, "%4u %5u %-8s %12llu %12llu %10llu %8u %12llu\n", ss->chip, ss->index,
                ss->zone == 1 ? "sync 1" : ss->zone == 2 ? "sync 2" : "end", (unsigned long long)ss->start_cycle,
                (unsigned long long)ss->end_cycle, (unsigned long long)ss->c.cycles, ss->busiest_tile,
                (unsigned long long)ss->c.instructions);
    }
}

static void endpoint_name(uint32_t ep, uint32_t system_tiles, char *buf, size_t n)
{
    switch (xch_endpoint_kind(ep, system_tiles)) {
    case XCH_EP_TILE: snprintf(buf, n, "tile %u", ep); break;
    case XCH_EP_BROADCAST: snprintf(buf, n, "every tile"); break;
    case XCH_EP_MULTICAST:
        if (ep & XCH_MULTICAST_TILE)
            snprintf(buf, n, "tile %u's multicast group %u", ep & XCH_MULTICAST_TILE, xch_multicast_group(ep));
        else
            snprintf(buf, n, "multicast group %u", xch_multicast_group(ep));
        break;
    case XCH_EP_HOST: snprintf(buf, n, "host stream %u", ep & XCH_ENDPOINT_INDEX); break;
    default:
        if (ep & XCH_STREAM_MEMORY)
            snprintf(buf, n, "streaming-memory buffer %u", ep & XCH_ENDPOINT_INDEX);
        else
            snprintf(buf, n, "endpoint 0x%x", ep);
        break;
    }
}

static void info_exchange(debugger *d, FILE *out)
{
    const ipu_tile *t = cur_tile(d);
    const xch_log *log = t->s.xlog;
    if (!log || (!log->n_sends && !log->n_recvs)) {
        fprintf(out, "tile %u: no exchange in the current phase.\n", d->tile);
        return;
    }
    fprintf(out, "tile %u: %zu send%s, %zu receive%s in the current phase\n", d->tile, log->n_sends,
            log->n_sends == 1 ? "" : "s", log->n_recvs, log->n_recvs == 1 ? "" : "s");
    for (size_t i = 0; i < log->n_sends && i < 64; i++) {
        const xch_transfer *x = &log->sends[i];
        char ep[64];
        endpoint_name(x->endpoint, log->system_tiles, ep, sizeof ep);
        fprintf(out, "  send %u bytes from 0x%x to %s (pc 0x%x, cycle %llu)\n", x->bytes, x->addr, ep, x->pc,
                (unsigned long long)x->issue_cycle);
    }
    for (size_t i = 0; i < log->n_recvs && i < 64; i++) {
        const xch_transfer *x = &log->recvs[i];
        char ep[64];
        endpoint_name(x->endpoint, log->system_tiles, ep, sizeof ep);
        fprintf(out, "  receive %u bytes at 0x%x from %s (pc 0x%x, cycle %llu)\n", x->bytes, x->addr, ep, x->pc,
                (unsigned long long)x->issue_cycle);
    }
}

static void info_tensors(debugger *d, FILE *out)
{
    if (!d->tmap || !d->tmap->n_tensors) {
        fprintf(out, "%s has no tensor map.\n", d->name);
        return;
    }
    for (size_t i = 0; i < d->tmap->n_tensors; i++) {
        const tmap_tensor *t = &d->tmap->tensors[i];
        fprintf(out, "%s: %s [", t->name, tmap_dtype_name(t->dtype));
        for (uint32_t k = 0; k < t->rank; k++)
            fprintf(out, "%s%llu", k ? "," : "", (unsigned long long)t->dims[k]);
        fprintf(out, "]%s%s%s%s%s, %zu piece%s", t->role & TMAP_INPUT ? " input" : "",
                t->role & TMAP_OUTPUT ? " output" : "", t->role & TMAP_WEIGHT ? " weight" : "",
                t->role & TMAP_ACTIVATION ? " activation" : "", t->role & TMAP_TRANSIENT ? " (transient)" : "",
                t->n_pieces, t->n_pieces == 1 ? "" : "s");
        if (t->n_pieces)
            fprintf(out, ", first on tile %u at 0x%x", t->pieces[0].tile, t->pieces[0].addr);
        fprintf(out, "\n");
    }
}

static enum debugger_result cmd_info(debugger *d, const char *args, FILE *out)
{
    char w[64];
    const char *rest = args;
    if (!next_word(&rest, w, sizeof w))
        return fail(out, "info needs breakpoints, tiles, registers, supersteps, exchange or tensors");
    size_t n = strlen(w);
    static const char *const what[] = { "breakpoints", "tiles", "registers", "supersteps", "exchange", "tensors" };
    int which = -1;
    for (int i = 0; i < 6; i++)
        if (!strncmp(w, what[i], n) && (which < 0 || n >= 2))
            which = which < 0 ? i : which;
    if (!strcmp(w, "b") || !strcmp(w, "break"))
        which = 0;
    else if (!strcmp(w, "r") || !strcmp(w, "reg"))
        which = 2;
    if (which < 0)
        return fail(out, "info %s: expected breakpoints, tiles, registers, supersteps, exchange or tensors", w);
    if (which != 2 && !at_end(rest))
        return fail(out, "info %s takes no more arguments", what[which]);
    switch (which) {
    case 0: info_breakpoints(d, out); break;
    case 1: info_tiles(d, out); break;
    case 2: return info_registers(d, rest, out);
    case 3: info_supersteps(d, out); break;
    case 4: info_exchange(d, out); break;
    default: info_tensors(d, out); break;
    }
    return DEBUGGER_OK;
}

static enum debugger_result cmd_stats(debugger *d, const char *args, FILE *out)
{
    if (!at_end(args))
        return fail(out, "stats takes no arguments");
    engine_refresh_tile_stats(d->g);
    uint64_t instructions = 0, issues = 0, cycles = 0, f16 = 0, f32 = 0;
    size_t n = engine_tile_count(d->g);
    for (size_t i = 0; i < n; i++) {
        const ipu_tile *t = engine_tile_at(d->g, i);
        instructions += t->stats.instructions;
        issues += t->stats.issues;
        f16 += t->stats.amp_f16_macs;
        f32 += t->stats.amp_f32_macs;
        if (t->s.cycle > cycles)
            cycles = t->s.cycle;
    }
    const engine_stats *s = engine_get_stats(d->g);
    fprintf(out, "%s: %zu tiles, %s\n", d->name, n,
            !d->started ? "not started" : engine_finished(d->g) ? "finished" : "stopped");
    fprintf(out, "  so far: %llu instructions, %llu issues, latest tile cycle %llu, %zu supersteps ended, "
            "%llu f16 + %llu f32 AMP MACs\n",
            (unsigned long long)instructions, (unsigned long long)issues, (unsigned long long)cycles,
            d->started ? s->n_supersteps : (size_t)0, (unsigned long long)f16, (unsigned long long)f32);
    const ipu_tile *t = cur_tile(d);
    fprintf(out, "  tile %u: cycle %llu, %llu instructions (%llu supervisor, %llu worker issues), %llu idle "
            "slot cycles, %llu exchange stall cycles, %llu syncs\n",
            d->tile, (unsigned long long)t->s.cycle, (unsigned long long)t->stats.instructions,
            (unsigned long long)t->stats.supervisor_issues, (unsigned long long)t->stats.worker_issues,
            (unsigned long long)t->stats.idle_slot_cycles, (unsigned long long)t->stats.exchange_stall_cycles,
            (unsigned long long)t->stats.syncs);
    if (d->started && engine_finished(d->g) && s->chips) {
        for (uint32_t c = 0; c < s->n_chips; c++) {
            const engine_chip_stats *cs = &s->chips[c];
            if (!cs->tiles)
                continue;
            fprintf(out, "  chip %u: %llu cycles (%.3f us), %u supersteps, compute %llu, exchange %llu, sync %llu, "
                    "wait %llu cycles, AMP %.2f%%\n", c, (unsigned long long)cs->c.cycles, cs->seconds * 1e6,
                    cs->supersteps, (unsigned long long)cs->c.compute_cycles,
                    (unsigned long long)cs->c.exchange_cycles, (unsigned long long)cs->c.sync_cycles,
                    (unsigned long long)cs->c.wait_cycles, 100.0 * cs->amp_utilisation);
        }
    }
    return DEBUGGER_OK;
}

/* ---- the table -------------------------------------------------------------- */

static enum debugger_result cmd_help(debugger *d, const char *args, FILE *out);
static enum debugger_result cmd_source(debugger *d, const char *args, FILE *out);
static enum debugger_result cmd_quit(debugger *d, const char *args, FILE *out)
{
    (void)d;
    if (!at_end(args))
        return fail(out, "quit takes no arguments");
    return DEBUGGER_QUIT;
}

typedef enum debugger_result (*dcmd_fn)(debugger *d, const char *args, FILE *out);
static const struct dcmd {
    const char *name, *alias;
    dcmd_fn fn;
    const char *usage, *help;
} dcmds[] = {
    { "run", "r", cmd_run, "run", "Start the program from the beginning (again, if it ran) and go to the first stop." },
    { "continue", "c", cmd_continue, "continue [N]", "Go on to the next stop (N times)." },
    { "stepi", "si", cmd_stepi, "stepi [N]",
      "Run until the selected tile has issued N instructions or bundles (of whichever context issues next);\n"
      "  other tiles run to their next sync meanwhile." },
    { "next-superstep", "ns", cmd_next_superstep, "next-superstep",
      "Go on until the next superstep ends (a barrier is released or a chip's program ends)." },
    { "break", "b", cmd_break, "break TILE:ADDR | TILE:SYMBOL | SYMBOL | ADDR | superstep N | cycle N",
      "Stop before a tile issues at an address (SYMBOL: on every tile that has it; ADDR: the selected tile),\n"
      "  when superstep N of a chip ends, or when a tile first reaches cycle N." },
    { "watch", "w", cmd_watch, "watch TILE:ADDR[:BYTES]",
      "Stop when BYTES (default 4, at most 64) of tile memory at ADDR change: checked after each issue of\n"
      "  that tile (which then runs one cycle at a time) and after each exchange." },
    { "delete", "d", cmd_delete, "delete N | all", "Delete breakpoint or watchpoint N, or all of them." },
    { "info", "i", cmd_info, "info breakpoints | tiles | registers [CONTEXT] | supersteps | exchange | tensors",
      "Breakpoints and their hits; tiles with their cycle, supervisor pc and state; a context's registers\n"
      "  and non-zero CSRs; the supersteps ended so far; the selected tile's exchange in this phase; a\n"
      "  compiled program's tensors." },
    { "tile", "t", cmd_tile, "tile T", "Select tile T (and its supervisor)." },
    { "context", "ctx", cmd_context, "context sup | w1..w6",
      "Select the supervisor or a worker of the selected tile." },
    { "print", "p", cmd_print, "print $mN | $aN | $pc | $CSR | TENSOR [SLICE] | SYMBOL",
      "A register of the selected context (hex, decimal; $a also as f32 and an f16 pair), a compiled\n"
      "  program's tensor by name from its pieces on every tile (SLICE: [I, LO:HI, ...]), or the words\n"
      "  at a symbol of the selected tile.  An activation's memory holds it from the superstep that\n"
      "  writes it to its last reader; the compiler places later tensors there after that." },
    { "x", NULL, cmd_x, "x/NFMT ADDR",
      "N units of tile memory of the selected tile at ADDR (a number, SYMBOL or SYMBOL+OFF); FMT is x (hex\n"
      "  words, the default), d (signed), u (unsigned), f (f32), h (f16) or b (bytes)." },
    { "disassemble", "disas", cmd_disassemble, "disassemble [ADDR [N]]",
      "N instructions (default 8) from ADDR, or around the selected context's pc (marked =>; b marks\n"
      "  breakpoints), with symbols and source lines." },
    { "where", "bt", cmd_where, "where",
      "The selected tile and context: pc, symbol, source line, cycle, superstep, state." },
    { "stats", NULL, cmd_stats, "stats", "The engine's statistics so far (final ones once the program ended)." },
    { "source", NULL, cmd_source, "source FILE", "Run the commands of FILE; stops at the first error." },
    { "help", "h", cmd_help, "help [CMD]", "The commands, or one command's usage." },
    { "quit", "q", cmd_quit, "quit", "Leave the debugger." },
};
#define N_DCMDS (sizeof dcmds / sizeof dcmds[0])

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
                    fail(out, "ambiguous command '%s' (%s, %s, ...)", name, found->name, dcmds[i].name);
                return NULL;
            }
            found = &dcmds[i];
        }
    if (!found && report)
        fail(out, "unknown command '%s' (try 'help')", name);
    return found;
}

static enum debugger_result cmd_help(debugger *d, const char *args, FILE *out)
{
    (void)d;
    char w[64];
    const char *rest = args;
    if (next_word(&rest, w, sizeof w)) {
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

static enum debugger_result cmd_source(debugger *d, const char *args, FILE *out)
{
    if (d->opt.no_files)
        return fail(out, "source is disabled here");
    const char *path = skip_blanks(args);
    if (!*path)
        return fail(out, "source needs a file");
    if (d->depth >= MAX_SOURCE_DEPTH)
        return fail(out, "source: nested more than %d deep", MAX_SOURCE_DEPTH);
    char err[512], *data;
    size_t size;
    char name[1024];
    snprintf(name, sizeof name, "%s", path);
    size_t len = strlen(name);
    while (len && (name[len - 1] == ' ' || name[len - 1] == '\t'))
        name[--len] = 0;
    if (!read_whole_file(name, &data, &size, err, sizeof err))
        return fail(out, "%s", err);
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
            r = fail(out, "%s:%u: a NUL byte in the line", name, line_no);
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

enum debugger_result debugger_execute(debugger *d, const char *line, FILE *out)
{
    char buf[4096];
    size_t len = strlen(line);
    if (len >= sizeof buf)
        return fail(out, "the command is too long (%zu characters; at most %zu)", len, sizeof buf - 1);
    memcpy(buf, line, len + 1);
    /* Comments and line ends. */
    char *hash = strchr(buf, '#');
    if (hash)
        *hash = 0;
    for (char *p = buf; *p; p++)
        if (*p == '\r' || *p == '\n')
            *p = ' ';
    const char *s = skip_blanks(buf);
    if (!*s)
        return DEBUGGER_OK;
    for (const char *p = s; *p; p++)
        if ((unsigned char)*p < 0x20 && *p != '\t')
            return fail(out, "control character 0x%02x in the command", (unsigned char)*p);
    char name[64];
    size_t n = 0;
    while (s[n] && s[n] != ' ' && s[n] != '\t' && s[n] != '/' && n + 1 < sizeof name) {
        name[n] = s[n];
        n++;
    }
    name[n] = 0;
    const char *args = s + n;
    if (s[n] && s[n] != ' ' && s[n] != '\t' && s[n] != '/')
        return fail(out, "unknown command '%.40s...' (try 'help')", name);
    if (*args == '/' && strcmp(name, "x"))
        return fail(out, "only x takes /FMT ('%s/...')", name);
    const struct dcmd *c = find_cmd(name, out, true);
    if (!c)
        return DEBUGGER_ERROR;
    return c->fn(d, args, out);
}

/* ---- completion ---------------------------------------------------------------- */

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
