/*
 * debugger_breakpoints.c — breakpoints (a tile's pc or a symbol, the end of
 * a superstep, a cycle) and watchpoints (bytes of tile memory): the break,
 * watch and delete commands, `info breakpoints`, and the engine's pause
 * conditions made from them before each resume.
 */
#include "debugger_internal.h"

#include <stdlib.h>
#include <string.h>

/* The engine's check after an issue of a watched tile (or after an exchange
 * event: tile UINT32_MAX): true when a watchpoint's bytes changed. */
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

/* Read a watchpoint's bytes as they are now. */
void dbg_snapshot_watch(debugger *d, breakpoint *b)
{
    const ipu_tile *t = engine_tile(d->g, b->tile);
    memset(b->value, 0, sizeof b->value);
    if (t)
        tmem_read_bytes(&t->s.mem, b->addr, b->value, b->bytes);
}

/* The engine's pause conditions from the breakpoints. */
void dbg_configure(debugger *d, bool step, bool next_superstep)
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
static enum debugger_result break_at_count(debugger *d, const char *w, const char *rest, const char *spec, FILE *out)
{
    bool ss = w[0] == 's';
    char num[64];
    uint64_t n;
    if (!dbg_next_word(&rest, num, sizeof num) || !dbg_parse_u64(num, &n) || !dbg_at_end(rest) || (!ss && n == 0) ||
        (ss && n > UINT32_MAX))
        return dbg_fail(out, "break %s needs a number%s", w, ss ? " (0, 1, ...)" : " (1, 2, ...)");
    breakpoint *b = new_bp(d, ss ? BP_SUPERSTEP : BP_CYCLE, spec, out);
    if (!b)
        return DEBUGGER_ERROR;
    b->n = n;
    b->id = d->next_id++;
    d->n_bps++;
    fprintf(out, "Breakpoint %d: %s %llu\n", b->id, ss ? "end of superstep" : "cycle", (unsigned long long)n);
    return DEBUGGER_OK;
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
        if (strcmp(s->name, w) || !engine_tile(d->g, s->tile))
            continue;
        if (!add_loc(b, s->tile, s->addr)) {
            free(b->locs);
            dbg_fail(out, "out of host memory");
            return false;
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

/* break TILE:ADDR | TILE:SYMBOL | SYMBOL | ADDR | superstep N | cycle N */
enum debugger_result dbg_cmd_break(debugger *d, const char *args, FILE *out)
{
    char w[128], spec[96];
    const char *rest = args;
    if (!dbg_next_word(&rest, w, sizeof w))
        return dbg_fail(out, "break needs a location: TILE:ADDR, TILE:SYMBOL, SYMBOL, superstep N or cycle N");
    snprintf(spec, sizeof spec, "%.90s", dbg_skip_blanks(args));
    size_t len = strlen(spec);
    while (len && (spec[len - 1] == ' ' || spec[len - 1] == '\t'))
        spec[--len] = 0;
    if (!strcmp(w, "superstep") || !strcmp(w, "cycle"))
        return break_at_count(d, w, rest, spec, out);
    if (!dbg_at_end(rest))
        return dbg_fail(out, "break takes one location, got '%s'", spec);
    breakpoint *b = new_bp(d, BP_PC, spec, out);
    if (!b)
        return DEBUGGER_ERROR;
    if (!break_locations(d, b, w, spec, out) || !set_break_locations(d, b, out))
        return DEBUGGER_ERROR;
    b->id = d->next_id++;
    d->n_bps++;
    char where[320];
    dbg_symbolize(d, b->locs[0].tile, b->locs[0].pc, where, sizeof where);
    if (b->n_locs == 1)
        fprintf(out, "Breakpoint %d: tile %u, pc 0x%x%s\n", b->id, b->locs[0].tile, b->locs[0].pc, where);
    else
        fprintf(out, "Breakpoint %d: %s on %zu tiles\n", b->id, w, b->n_locs);
    return DEBUGGER_OK;
}

/* watch TILE:ADDR[:BYTES] */
enum debugger_result dbg_cmd_watch(debugger *d, const char *args, FILE *out)
{
    char w[128];
    const char *rest = args;
    if (!dbg_next_word(&rest, w, sizeof w) || !dbg_at_end(rest))
        return dbg_fail(out, "watch needs one TILE:ADDR[:BYTES]");
    char *c1 = strchr(w, ':');
    if (!c1)
        return dbg_fail(out, "watch needs TILE:ADDR[:BYTES], got '%s'", w);
    *c1++ = 0;
    char *c2 = strchr(c1, ':');
    uint32_t tile, addr, bytes = 4;
    if (c2)
        *c2++ = 0;
    if (!dbg_parse_u32(w, &tile))
        return dbg_fail(out, "bad tile '%s'", w);
    const ipu_tile *t = engine_tile(d->g, tile);
    if (!t)
        return dbg_fail(out, "tile %u has no code in %s", tile, d->name);
    if (!dbg_parse_addr(d, tile, c1, &addr, out))
        return DEBUGGER_ERROR;
    if (c2 && (!dbg_parse_u32(c2, &bytes) || bytes == 0 || bytes > MAX_WATCH_BYTES))
        return dbg_fail(out, "watch: bytes must be 1 to %d", MAX_WATCH_BYTES);
    uint8_t probe[MAX_WATCH_BYTES];
    if (tmem_read_bytes(&t->s.mem, addr, probe, bytes) != TMEM_OK)
        return dbg_fail(out, "tile %u: 0x%x (%u bytes) is not in tile memory (0x%x-0x%x)", tile, addr, bytes,
                    t->s.mem.base, t->s.mem.base + t->s.mem.size_bytes - 1);
    char spec[96];
    snprintf(spec, sizeof spec, "%u:0x%x:%u", tile, addr, bytes);
    breakpoint *b = new_bp(d, BP_WATCH, spec, out);
    if (!b)
        return DEBUGGER_ERROR;
    b->tile = tile;
    b->addr = addr;
    b->bytes = bytes;
    dbg_snapshot_watch(d, b);
    b->id = d->next_id++;
    d->n_bps++;
    fprintf(out, "Watchpoint %d: tile %u 0x%x (%u bytes)\n", b->id, tile, addr, bytes);
    return DEBUGGER_OK;
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
    free(b.locs);
}

/* delete N | all */
enum debugger_result dbg_cmd_delete(debugger *d, const char *args, FILE *out)
{
    char w[64];
    const char *rest = args;
    if (!dbg_next_word(&rest, w, sizeof w) || !dbg_at_end(rest))
        return dbg_fail(out, "delete needs a breakpoint number or 'all'");
    if (!strcmp(w, "all")) {
        while (d->n_bps)
            remove_bp(d, d->n_bps - 1);
        fprintf(out, "Deleted all breakpoints.\n");
        return DEBUGGER_OK;
    }
    uint64_t id;
    if (!dbg_parse_u64(w, &id))
        return dbg_fail(out, "delete needs a breakpoint number or 'all', got '%s'", w);
    for (size_t i = 0; i < d->n_bps; i++)
        if ((uint64_t)d->bps[i].id == id) {
            remove_bp(d, i);
            fprintf(out, "Deleted breakpoint %llu.\n", (unsigned long long)id);
            return DEBUGGER_OK;
        }
    return dbg_fail(out, "no breakpoint number %s", w);
}

/* The table of `info breakpoints`. */
void dbg_info_breakpoints(debugger *d, FILE *out)
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
