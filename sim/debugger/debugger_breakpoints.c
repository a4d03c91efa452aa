/*
 * debugger_breakpoints.c — breakpoints (a tile's pc or a symbol, the end of
 * a superstep, a cycle; temporary ones; conditions) and watchpoints (bytes
 * of tile memory changed, read or accessed): the break, tbreak, condition,
 * watch, rwatch, awatch and delete commands, `info breakpoints`, and the
 * engine's pause conditions made from them before each resume (with what
 * until EXPR and finish look for).
 */
#include "debugger_internal.h"

#include <stdlib.h>
#include <string.h>

#include "debugger_expr.h"

/* Whether a change watchpoint's bytes changed (then they are taken as the
 * new value and the old kept for the message). */
static bool watch_changed(debugger *d, const engine *g, breakpoint *b)
{
    const ipu_tile *t = engine_tile(g, b->tile);
    uint8_t now[MAX_WATCH_BYTES];
    if (!t || tmem_read_bytes(&t->s.mem, b->addr, now, b->bytes) != TMEM_OK || !memcmp(now, b->value, b->bytes))
        return false;
    memcpy(b->old, b->value, b->bytes);
    memcpy(b->value, now, b->bytes);
    d->watch_hit = b->id;
    return true;
}

/* The engine's check after an issue of a checked tile (or after an
 * exchange event: tile UINT32_MAX): a change watchpoint's bytes changed,
 * until's expression holds, or the worker finish waits for has exited. */
static bool dbg_check(void *ctx, const engine *g, uint32_t tile)
{
    debugger *d = ctx;
    for (size_t i = 0; i < d->n_bps; i++) {
        breakpoint *b = &d->bps[i];
        if (b->kind == BP_WATCH && b->watch == WATCH_CHANGE && (tile == UINT32_MAX || tile == b->tile) &&
            watch_changed(d, g, b)) {
            d->check_hit = CHECK_WATCH;
            return true;
        }
    }
    if (tile != d->tile && tile != UINT32_MAX)
        return false;
    if (d->until_expr) {
        dbg_value v;
        char err[256];
        /* An expression that cannot be evaluated here (a bad address) does
         * not hold. */
        if (dbg_expr_eval(d, d->until_expr, d->tile, d->context, &v, err, sizeof err) && dbg_value_true(&v)) {
            d->check_hit = CHECK_UNTIL;
            return true;
        }
    }
    if (d->finishing && tile == d->tile) {
        const ipu_tile *t = engine_tile(g, d->tile);
        if (t->s.ctx[d->finish_context].run_mode != ISA_RUN_RUNNING) {
            d->check_hit = CHECK_FINISH;
            return true;
        }
    }
    return false;
}

/* Read a watchpoint's bytes as they are now. */
void dbg_snapshot_watch(debugger *d, breakpoint *b)
{
    const ipu_tile *t = engine_tile(d->g, b->tile);
    memset(b->value, 0, sizeof b->value);
    if (t)
        tmem_read_bytes(&t->s.mem, b->addr, b->value, b->bytes);
}

/* The engine's pause conditions from the breakpoints (and until/finish). */
void dbg_configure(debugger *d, bool step, bool next_superstep)
{
    engine_debug dbg = { .check = dbg_check, .check_ctx = d, .interrupt = d->interrupt };
    dbg.step = step;
    dbg.step_tile = d->tile;
    dbg.superstep_end = next_superstep || dbg_checkpointing(d);
    for (size_t i = 0; i < d->n_bps; i++) {
        const breakpoint *b = &d->bps[i];
        if (b->kind == BP_SUPERSTEP)
            dbg.superstep_end = true;
        else if (b->kind == BP_CYCLE && !b->passed && (!dbg.break_cycle || b->n < dbg.break_cycle)) {
            dbg.break_cycle = b->n;
            dbg.superstep_end = true;    /* a cycle passed at a barrier (debugger_run.c) */
        }
    }
    size_t n = engine_tile_count(d->g);
    for (size_t i = 0; i < n; i++) {
        uint32_t tile = engine_tile_at(d->g, i)->tile_id;
        bool checked = (d->until_expr || d->finishing) && tile == d->tile;
        for (size_t k = 0; k < d->n_bps && !checked; k++)
            checked = d->bps[k].kind == BP_WATCH && d->bps[k].watch == WATCH_CHANGE && d->bps[k].tile == tile;
        engine_set_tile_checked(d->g, tile, checked);
    }
    engine_set_debug(d->g, &dbg);
}

/* Set (or clear) the engine's access watches of the read and access
 * watchpoints. */
void dbg_set_access_watches(debugger *d, bool on)
{
    for (size_t i = 0; i < d->n_bps; i++) {
        const breakpoint *b = &d->bps[i];
        if (b->kind == BP_WATCH && b->watch != WATCH_CHANGE)
            engine_set_access_watch(d->g, b->tile, b->addr, b->bytes,
                                    ENGINE_WATCH_READ | (b->watch == WATCH_ACCESS ? ENGINE_WATCH_WRITE : 0), on);
    }
}

/* Whether breakpoint b's condition holds on (tile, context). */
bool dbg_condition_holds(debugger *d, breakpoint *b, uint32_t tile, unsigned context, FILE *out)
{
    if (!b->cond)
        return true;
    dbg_value v;
    char err[256];
    if (!dbg_expr_eval(d, b->cond, tile, context, &v, err, sizeof err)) {
        fprintf(out, "Error in the condition of breakpoint %d (%s): %s\n", b->id, b->cond_text, err);
        return true;
    }
    return dbg_value_true(&v);
}

/* The next free breakpoint, cleared (not counted until it is complete). */
static breakpoint *new_bp(debugger *d, enum bp_kind kind, const char *spec, FILE *out)
{
    if (d->n_bps == MAX_BREAKPOINTS) {
        dbg_fail(out, "at most %d breakpoints and watchpoints", MAX_BREAKPOINTS);
        return NULL;
    }
    breakpoint *b = &d->bps[d->n_bps];
    memset(b, 0, sizeof *b);
    b->kind = kind;
    snprintf(b->spec, sizeof b->spec, "%s", spec);
    return b;
}

/* One more place of a pc breakpoint. */
static bool add_loc(breakpoint *b, uint32_t tile, uint32_t pc)
{
    bp_loc *l = realloc(b->locs, (b->n_locs + 1) * sizeof *l);
    if (!l)
        return false;
    b->locs = l;
    b->locs[b->n_locs++] = (bp_loc){ tile, pc };
    return true;
}

/* break superstep N | break cycle N: w is the keyword, rest what follows it. */
static breakpoint *break_at_count(debugger *d, const char *w, const char *rest, const char *spec, FILE *out)
{
    bool ss = w[0] == 's';
    char num[64];
    uint64_t n;
    if (!dbg_next_word(&rest, num, sizeof num) || !dbg_parse_u64(num, &n) || !dbg_at_end(rest) || (!ss && n == 0) ||
        (ss && n > UINT32_MAX)) {
        dbg_fail(out, "break %s needs a number%s", w, ss ? " (0, 1, ...)" : " (1, 2, ...)");
        return NULL;
    }
    breakpoint *b = new_bp(d, ss ? BP_SUPERSTEP : BP_CYCLE, spec, out);
    if (b)
        b->n = n;
    return b;
}

/* The places of a pc breakpoint: TILE:ADDR or TILE:SYMBOL (w is cut at the
 * colon), ADDR on the selected tile, or SYMBOL on every tile that has it. */
static bool break_locations(debugger *d, breakpoint *b, char *w, const char *spec, FILE *out)
{
    char *colon = strchr(w, ':');
    if (colon) {
        *colon = 0;
        uint32_t tile, pc;
        if (!dbg_parse_u32(w, &tile)) {
            dbg_fail(out, "bad tile '%s' in '%s'", w, spec);
            return false;
        }
        if (!engine_tile(d->g, tile)) {
            dbg_fail(out, "tile %u has no code in %s", tile, d->name);
            return false;
        }
        if (!dbg_parse_addr(d, tile, colon + 1, &pc, out))
            return false;
        if (!add_loc(b, tile, pc)) {
            dbg_fail(out, "out of host memory");
            return false;
        }
        return true;
    }
    uint32_t pc;
    if (dbg_parse_u32(w, &pc)) {
        if (!add_loc(b, d->tile, pc)) {
            dbg_fail(out, "out of host memory");
            return false;
        }
        return true;
    }
    for (size_t i = 0; i < d->e->n_symbols; i++) {
        const exe_symbol *s = &d->e->symbols[i];
        if (strcmp(s->name, w))
            continue;
        /* a symbol of every tile: a place on each tile with code */
        size_t n = s->tile == EXE_EVERY_TILE ? d->e->n_tiles : 1;
        for (size_t k = 0; k < n; k++) {
            uint32_t tile = s->tile == EXE_EVERY_TILE ? d->e->tiles[k].tile : s->tile;
            if (!engine_tile(d->g, tile))
                continue;
            if (!add_loc(b, tile, s->addr)) {
                free(b->locs);
                dbg_fail(out, "out of host memory");
                return false;
            }
        }
    }
    if (!b->n_locs) {
        dbg_fail(out, "no symbol '%s' in %s", w, d->name);
        return false;
    }
    return true;
}

/* Check that each place of b starts an instruction in its tile's code and
 * set them in the engine; undo the ones set here if one cannot be. */
static bool set_break_locations(debugger *d, breakpoint *b, FILE *out)
{
    for (size_t k = 0; k < b->n_locs; k++) {
        const ipu_tile *t = engine_tile(d->g, b->locs[k].tile);
        uint32_t tile = b->locs[k].tile, pc = b->locs[k].pc;
        if (pc & 3) {
            free(b->locs);
            dbg_fail(out, "tile %u: 0x%x is not 4-byte aligned", tile, pc);
            return false;
        }
        if (!tile_decoded_at(t, pc)) {
            free(b->locs);
            dbg_fail(out, "tile %u: 0x%x is not in the tile's code (0x%x-0x%x)", tile, pc, t->code_base,
                     t->code_end - 1);
            return false;
        }
    }
    bool *set_here = calloc(b->n_locs, sizeof *set_here);
    if (!set_here) {
        free(b->locs);
        dbg_fail(out, "out of host memory");
        return false;
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
            dbg_fail(out, "tile %u: 0x%x is not the start of an instruction (it is inside a bundle)", tile, pc);
            return false;
        }
        set_here[k] = true;
    }
    free(set_here);
    return true;
}

/* A breakpoint's location from its words (the "if" part cut off): the
 * breakpoint, filled in but not yet counted, or NULL after a message. */
static breakpoint *parse_location(debugger *d, const char *loc, FILE *out)
{
    char w[128], spec[96];
    const char *rest = loc;
    if (!dbg_next_word(&rest, w, sizeof w)) {
        dbg_fail(out, "break needs a location: TILE:ADDR, TILE:SYMBOL, SYMBOL, ADDR, superstep N or cycle N");
        return NULL;
    }
    snprintf(spec, sizeof spec, "%.90s", dbg_skip_blanks(loc));
    size_t len = strlen(spec);
    while (len && (spec[len - 1] == ' ' || spec[len - 1] == '\t'))
        spec[--len] = 0;
    if (!strcmp(w, "superstep") || !strcmp(w, "cycle"))
        return break_at_count(d, w, rest, spec, out);
    if (!dbg_at_end(rest)) {
        dbg_fail(out, "break takes one location (and 'if EXPR'), got '%s'", spec);
        return NULL;
    }
    breakpoint *b = new_bp(d, BP_PC, spec, out);
    if (!b || !break_locations(d, b, w, spec, out) || !set_break_locations(d, b, out))
        return NULL;
    return b;
}

/* Attach the condition text to b (parsed now: an error refuses it). */
static bool set_condition(debugger *d, breakpoint *b, const char *text, FILE *out)
{
    char err[256];
    text = dbg_skip_blanks(text);
    dbg_expr *e = dbg_expr_parse(d, text, err, sizeof err);
    if (!e) {
        dbg_fail(out, "condition '%.60s': %s", text, err);
        return false;
    }
    dbg_expr_free(b->cond);
    b->cond = e;
    snprintf(b->cond_text, sizeof b->cond_text, "%s", text);
    size_t len = strlen(b->cond_text);
    while (len && (b->cond_text[len - 1] == ' ' || b->cond_text[len - 1] == '\t'))
        b->cond_text[--len] = 0;
    return true;
}

/* Where " if " starts the condition in a break command's arguments, or NULL. */
static const char *find_if(const char *args)
{
    for (const char *p = args; (p = strstr(p, "if")) != NULL; p += 2)
        if ((p == args || p[-1] == ' ' || p[-1] == '\t') && (p[2] == ' ' || p[2] == '\t'))
            return p;
    return NULL;
}

/* Undo a breakpoint made by parse_location that is not kept. */
static void drop_new_bp(debugger *d, breakpoint *b)
{
    for (size_t k = 0; k < b->n_locs; k++) {
        bool kept = false;
        for (size_t j = 0; j < d->n_bps && !kept; j++)
            for (size_t l = 0; l < d->bps[j].n_locs && !kept; l++)
                kept = d->bps[j].locs[l].tile == b->locs[k].tile && d->bps[j].locs[l].pc == b->locs[k].pc;
        if (!kept)
            engine_set_breakpoint(d->g, b->locs[k].tile, b->locs[k].pc, false);
    }
    free(b->locs);
    dbg_expr_free(b->cond);
    memset(b, 0, sizeof *b);
}

/* break / tbreak LOCATION [if EXPR] */
static enum debugger_result add_breakpoint(debugger *d, const char *args, bool temporary, FILE *out)
{
    char loc[4096];
    snprintf(loc, sizeof loc, "%s", args);
    const char *cond = find_if(loc);
    if (cond) {
        loc[cond - loc] = 0;
        cond = args + (cond - loc) + 2;
        if (dbg_at_end(cond))
            return dbg_fail(out, "'if' needs a condition");
    }
    breakpoint *b = parse_location(d, loc, out);
    if (!b)
        return DEBUGGER_ERROR;
    if (cond && !set_condition(d, b, cond, out)) {
        drop_new_bp(d, b);
        return DEBUGGER_ERROR;
    }
    b->temporary = temporary;
    b->id = d->next_id++;
    d->n_bps++;
    const char *what = temporary ? "Temporary breakpoint" : "Breakpoint";
    if (b->kind == BP_SUPERSTEP || b->kind == BP_CYCLE) {
        fprintf(out, "%s %d: %s %llu", what, b->id, b->kind == BP_SUPERSTEP ? "end of superstep" : "cycle",
                (unsigned long long)b->n);
    } else {
        char where[320];
        dbg_symbolize(d, b->locs[0].tile, b->locs[0].pc, where, sizeof where);
        if (b->n_locs == 1)
            fprintf(out, "%s %d: tile %u, pc 0x%x%s", what, b->id, b->locs[0].tile, b->locs[0].pc, where);
        else
            fprintf(out, "%s %d: %s on %zu tiles", what, b->id, b->spec, b->n_locs);
    }
    fprintf(out, b->cond ? " if %s\n" : "\n", b->cond_text);
    return DEBUGGER_OK;
}

enum debugger_result dbg_cmd_break(debugger *d, const char *args, FILE *out)
{
    return add_breakpoint(d, args, false, out);
}

enum debugger_result dbg_cmd_tbreak(debugger *d, const char *args, FILE *out)
{
    return add_breakpoint(d, args, true, out);
}

/* The breakpoint with this number (not an internal one), or NULL after a message. */
static breakpoint *find_bp(debugger *d, const char *w, FILE *out)
{
    uint64_t id;
    if (!dbg_parse_u64(w, &id)) {
        dbg_fail(out, "expected a breakpoint number, got '%s'", w);
        return NULL;
    }
    for (size_t i = 0; i < d->n_bps; i++)
        if ((uint64_t)d->bps[i].id == id && !d->bps[i].internal)
            return &d->bps[i];
    dbg_fail(out, "no breakpoint number %s", w);
    return NULL;
}

/* condition BP [EXPR] */
enum debugger_result dbg_cmd_condition(debugger *d, const char *args, FILE *out)
{
    char w[64];
    const char *rest = args;
    if (!dbg_next_word(&rest, w, sizeof w))
        return dbg_fail(out, "condition needs a breakpoint number (and a condition)");
    breakpoint *b = find_bp(d, w, out);
    if (!b)
        return DEBUGGER_ERROR;
    if (b->kind == BP_WATCH)
        return dbg_fail(out, "watchpoint %d takes no condition", b->id);
    if (dbg_at_end(rest)) {
        dbg_expr_free(b->cond);
        b->cond = NULL;
        b->cond_text[0] = 0;
        fprintf(out, "Breakpoint %d now stops unconditionally.\n", b->id);
        return DEBUGGER_OK;
    }
    if (!set_condition(d, b, rest, out))
        return DEBUGGER_ERROR;
    fprintf(out, "Breakpoint %d stops if %s\n", b->id, b->cond_text);
    return DEBUGGER_OK;
}

/* until LOCATION: a breakpoint of the debugger's own there. */
bool dbg_until_location(debugger *d, const char *args, FILE *out)
{
    breakpoint *b = parse_location(d, args, out);
    if (!b)
        return false;
    b->internal = true;
    d->n_bps++;
    return true;
}

/* A pc breakpoint the debugger sets for itself. */
bool dbg_internal_break(debugger *d, uint32_t tile, uint32_t pc)
{
    if (d->n_bps == MAX_BREAKPOINTS || !engine_tile(d->g, tile) || !tile_decoded_at(engine_tile(d->g, tile), pc))
        return false;
    breakpoint *b = &d->bps[d->n_bps];
    memset(b, 0, sizeof *b);
    b->kind = BP_PC;
    b->internal = true;
    if (!add_loc(b, tile, pc))
        return false;
    if (!tile_breakpoint_at(engine_tile(d->g, tile), pc) && !engine_set_breakpoint(d->g, tile, pc, true)) {
        free(b->locs);
        return false;
    }
    d->n_bps++;
    return true;
}

/* A watchpoint's place: [TILE:]ADDR[:BYTES] or [TILE:]SYMBOL[:BYTES] (a
 * symbol's bytes default to its size).  TILE:N with both numbers is a tile
 * and an address, as before symbols were allowed. */
static bool parse_place(debugger *d, const char *cmd, char *w, uint32_t *tile, uint32_t *addr, uint32_t *bytes,
                        FILE *out)
{
    char *part[3] = { w, NULL, NULL };
    size_t n = 1;
    for (char *p = w; *p && n < 3; p++)
        if (*p == ':') {
            *p = 0;
            part[n++] = p + 1;
        }
    if (n == 3 && strchr(part[2], ':')) {
        dbg_fail(out, "%s needs [TILE:]ADDR[:BYTES] or [TILE:]SYMBOL[:BYTES]", cmd);
        return false;
    }
    uint32_t num;
    bool first_is_tile = n == 3 || (n == 2 && dbg_parse_u32(part[0], &num));
    *tile = d->tile;
    if (first_is_tile && !dbg_parse_u32(part[0], tile)) {
        dbg_fail(out, "bad tile '%s'", part[0]);
        return false;
    }
    if (!engine_tile(d->g, *tile)) {
        dbg_fail(out, "tile %u has no code in %s", *tile, d->name);
        return false;
    }
    const char *where = first_is_tile ? part[1] : part[0], *size = first_is_tile ? part[2] : part[1];
    *bytes = 4;
    const exe_symbol *sym = dbg_parse_u32(where, &num) ? NULL : dbg_symbol_on_tile(d, *tile, where);
    if (sym && sym->size)
        *bytes = sym->size < MAX_WATCH_BYTES ? sym->size : MAX_WATCH_BYTES;
    if (!dbg_parse_addr(d, *tile, where, addr, out))
        return false;
    if (size && (!dbg_parse_u32(size, bytes) || *bytes == 0 || *bytes > MAX_WATCH_BYTES)) {
        dbg_fail(out, "%s: bytes must be 1 to %d", cmd, MAX_WATCH_BYTES);
        return false;
    }
    const ipu_tile *t = engine_tile(d->g, *tile);
    uint8_t probe[MAX_WATCH_BYTES];
    if (tmem_read_bytes(&t->s.mem, *addr, probe, *bytes) != TMEM_OK) {
        dbg_fail(out, "tile %u: 0x%x (%u bytes) is not in tile memory (0x%x-0x%x)", *tile, *addr, *bytes,
                 t->s.mem.base, t->s.mem.base + t->s.mem.size_bytes - 1);
        return false;
    }
    return true;
}

static const char *const watch_cmd[] = { "watch", "rwatch", "awatch" };
static const char *const watch_title[] = { "Watchpoint", "Read watchpoint", "Access watchpoint" };

/* watch, rwatch, awatch PLACE */
static enum debugger_result add_watch(debugger *d, const char *args, enum watch_kind kind, FILE *out)
{
    char w[128];
    const char *rest = args;
    if (!dbg_next_word(&rest, w, sizeof w) || !dbg_at_end(rest))
        return dbg_fail(out, "%s needs one [TILE:]ADDR[:BYTES] or [TILE:]SYMBOL[:BYTES]", watch_cmd[kind]);
    uint32_t tile, addr, bytes;
    if (!parse_place(d, watch_cmd[kind], w, &tile, &addr, &bytes, out))
        return DEBUGGER_ERROR;
    char spec[96];
    snprintf(spec, sizeof spec, "%u:0x%x:%u", tile, addr, bytes);
    breakpoint *b = new_bp(d, BP_WATCH, spec, out);
    if (!b)
        return DEBUGGER_ERROR;
    b->tile = tile;
    b->addr = addr;
    b->bytes = bytes;
    b->watch = (uint8_t)kind;
    if (kind != WATCH_CHANGE &&
        !engine_set_access_watch(d->g, tile, addr, bytes,
                                 ENGINE_WATCH_READ | (kind == WATCH_ACCESS ? ENGINE_WATCH_WRITE : 0), true))
        return dbg_fail(out, "tile %u: cannot watch 0x%x (%u bytes) for accesses", tile, addr, bytes);
    dbg_snapshot_watch(d, b);
    b->id = d->next_id++;
    d->n_bps++;
    fprintf(out, "%s %d: tile %u 0x%x (%u bytes)\n", watch_title[kind], b->id, tile, addr, bytes);
    return DEBUGGER_OK;
}

enum debugger_result dbg_cmd_watch(debugger *d, const char *args, FILE *out)
{
    return add_watch(d, args, WATCH_CHANGE, out);
}

enum debugger_result dbg_cmd_rwatch(debugger *d, const char *args, FILE *out)
{
    return add_watch(d, args, WATCH_READ, out);
}

enum debugger_result dbg_cmd_awatch(debugger *d, const char *args, FILE *out)
{
    return add_watch(d, args, WATCH_ACCESS, out);
}

/* Remove breakpoint i, clearing the engine's breakpoints no other one has. */
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
    if (b.kind == BP_WATCH && b.watch != WATCH_CHANGE)
        engine_set_access_watch(d->g, b.tile, b.addr, b.bytes,
                                ENGINE_WATCH_READ | (b.watch == WATCH_ACCESS ? ENGINE_WATCH_WRITE : 0), false);
    free(b.locs);
    dbg_expr_free(b.cond);
}

/* Delete the breakpoints that stopped the program for the last time. */
void dbg_remove_spent(debugger *d, bool internal_too)
{
    for (size_t i = d->n_bps; i-- > 0;)
        if ((d->bps[i].temporary && d->bps[i].hits) || (internal_too && d->bps[i].internal))
            remove_bp(d, i);
}

/* Free every breakpoint (the debugger's end). */
void dbg_free_breakpoints(debugger *d)
{
    for (size_t i = 0; i < d->n_bps; i++) {
        free(d->bps[i].locs);
        dbg_expr_free(d->bps[i].cond);
    }
    d->n_bps = 0;
}

/* delete [BP... | all] */
enum debugger_result dbg_cmd_delete(debugger *d, const char *args, FILE *out)
{
    char w[64];
    const char *rest = args;
    if (dbg_at_end(args))
        return dbg_fail(out, "delete needs breakpoint numbers or 'all'");
    if (dbg_next_word(&rest, w, sizeof w) && !strcmp(w, "all") && dbg_at_end(rest)) {
        while (d->n_bps)
            remove_bp(d, d->n_bps - 1);
        fprintf(out, "Deleted all breakpoints.\n");
        return DEBUGGER_OK;
    }
    /* Every number must name one before any is deleted. */
    rest = args;
    while (dbg_next_word(&rest, w, sizeof w))
        if (!find_bp(d, w, out))
            return DEBUGGER_ERROR;
    rest = args;
    while (dbg_next_word(&rest, w, sizeof w)) {
        breakpoint *b = find_bp(d, w, out);
        if (b) {
            fprintf(out, "Deleted breakpoint %d.\n", b->id);
            remove_bp(d, (size_t)(b - d->bps));
        }
    }
    return DEBUGGER_OK;
}

/* The table of `info breakpoints`. */
void dbg_info_breakpoints(debugger *d, FILE *out)
{
    size_t shown = 0;
    for (size_t i = 0; i < d->n_bps; i++) {
        const breakpoint *b = &d->bps[i];
        if (b->internal)
            continue;
        if (!shown++)
            fprintf(out, "%-4s %-11s %-4s %-40s %s\n", "Num", "Type", "Disp", "Where", "Hits");
        static const char *const watch_type[] = { "watchpoint", "read watch", "acc watch" };
        const char *type = b->kind == BP_WATCH ? watch_type[b->watch] : b->kind == BP_SUPERSTEP ? "superstep"
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
        fprintf(out, "%-4d %-11s %-4s %-40s %llu\n", b->id, type, b->temporary ? "del" : "keep", where,
                (unsigned long long)b->hits);
        if (b->cond)
            fprintf(out, "        stop only if %s\n", b->cond_text);
    }
    if (!shown)
        fprintf(out, "No breakpoints or watchpoints.\n");
}
