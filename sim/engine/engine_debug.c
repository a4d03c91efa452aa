/*
 * engine_debug.c — what the debugger asks of a running system (engine.h):
 * its hooks (breakpoints, checked tiles, watched accesses, the pause the
 * run stopped at) and where each tile is, in cycles and in words.
 */
#include "engine_internal.h"

#include <stdio.h>
#include <string.h>

#include "sim/base/simtime.h"

void engine_set_debug(engine *g, const engine_debug *d)
{
    g->dbg = *d;
    g->debugging = true;
}

const engine_pause *engine_get_pause(const engine *g) { return &g->pause; }
bool engine_finished(const engine *g) { return g->finished; }
uint32_t engine_supersteps_done(const engine *g, uint32_t chip)
{
    return chip < g->chips ? g->chip[chip].n_supersteps : 0;
}

ipu_tile *engine_tile_mut(engine *g, uint32_t global_tile)
{
    if (global_tile >= g->system_tiles || g->index_of[global_tile] < 0)
        return NULL;
    return &g->tile_state[g->index_of[global_tile]].t;
}

bool engine_set_breakpoint(engine *g, uint32_t global_tile, uint32_t pc, bool on)
{
    ipu_tile *t = engine_tile_mut(g, global_tile);
    if (!t || !tile_set_breakpoint(t, pc, on))
        return false;
    g->debugging = true;
    return true;
}

bool engine_set_tile_checked(engine *g, uint32_t global_tile, bool on)
{
    if (global_tile >= g->system_tiles || g->index_of[global_tile] < 0)
        return false;
    etile *et = &g->tiles[g->index_of[global_tile]];
    if (et->checked != on)
        g->n_checked += on ? 1 : (size_t)-1;
    et->checked = on;
    g->debugging = true;
    return true;
}

_Static_assert((int)ENGINE_WATCH_READ == (int)TMEM_WATCH_READ && (int)ENGINE_WATCH_WRITE == (int)TMEM_WATCH_WRITE,
               "engine watch kinds are tile memory's");

bool engine_set_access_watch(engine *g, uint32_t global_tile, uint32_t addr, uint32_t bytes, unsigned kinds,
                             bool on)
{
    if (global_tile >= g->system_tiles || g->index_of[global_tile] < 0)
        return false;
    etile *et = &g->tiles[g->index_of[global_tile]];
    tile_memory *m = &et->x->t.s.mem;
    if (!(on ? tmem_watch_add(m, addr, bytes, kinds) : tmem_watch_remove(m, addr, bytes, kinds)))
        return false;
    et->watched = tmem_watch_count(m) > 0;
    g->debugging = true;
    return true;
}

void engine_refresh_tile_stats(engine *g)
{
    for (size_t i = 0; i < g->n_tiles; i++)
        tile_collect_stats(&g->tile_state[i].t);
}

static const char *sync_text(uint8_t zone, const char *s1, const char *s2, const char *s3)
{
    return zone == 1 ? s1 : zone == 2 ? s2 : s3;
}

uint64_t engine_tile_cycle(const engine *g, uint32_t global_tile)
{
    if (global_tile >= g->system_tiles || g->index_of[global_tile] < 0)
        return 0;
    const etile *et = &g->tiles[g->index_of[global_tile]];
    uint64_t c = et->x->t.s.cycle;
    if (!g->started)
        return c;
    if (et->state == ET_RUNNABLE && !(g->batch_open && (et->pause || et->ran)))
        return simtime_max(c, et->resume_cycle);
    if (et->state == ET_ENDED)
        return simtime_max(c, et->eff_cycle);
    return c;
}

const char *engine_tile_status(const engine *g, uint32_t global_tile)
{
    if (global_tile >= g->system_tiles || g->index_of[global_tile] < 0)
        return NULL;
    const etile *et = &g->tiles[g->index_of[global_tile]];
    if (!g->started)
        return "not started";
    switch ((enum etile_status)et->state) {
    case ET_RUNNABLE:
        if (g->batch_open && et->pause) {
            switch ((enum engine_pause_reason)et->pause) {
            case ENGINE_PAUSE_BREAKPOINT: return "paused (breakpoint)";
            case ENGINE_PAUSE_CYCLE: return "paused (cycle)";
            case ENGINE_PAUSE_STEP: return "paused (step)";
            case ENGINE_PAUSE_CHECK: return "paused (check)";
            case ENGINE_PAUSE_ACCESS: return "paused (access watch)";
            default: return "paused (interrupted)";
            }
        }
        if (g->batch_open && et->ran) {
            if (et->stop == TILE_STOP_SYNC)
                return sync_text(et->zone, "arriving at sync 1", "arriving at sync 2", "arriving at sync 3");
            return et->stop == TILE_STOP_END     ? "ending"
                   : et->stop == TILE_STOP_FAULT ? "faulted"
                                                 : "at the cycle limit";
        }
        return "runnable";
    case ET_STOPPED:
        if (et->stop == TILE_STOP_END)
            return "ending";
        return sync_text(et->zone, "arriving at sync 1", "arriving at sync 2", "arriving at sync 3");
    case ET_WAITING:
        return sync_text(et->zone, "waiting at sync 1", "waiting at sync 2", "waiting at sync 3");
    case ET_RELEASING:
        return sync_text(et->zone, "released from sync 1", "released from sync 2", "released from sync 3");
    case ET_ENDED:
        return "ended";
    case ET_FAULTED:
        return "faulted";
    }
    return "unknown";
}
