/*
 * engine.c — the discrete-event loop over a system of chips: running tiles
 * between syncs on host threads, sync arrivals, exchange resolution,
 * barrier releases, and the statistics (the model is in engine.h).
 */
#include "engine_internal.h"
#include "program_io.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/base/diag.h"
#include "sim/base/simtime.h"

#define DEFAULT_MAX_CYCLES 10000000000ull

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *grow(void *v, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return v;
    size_t c = *cap ? *cap * 2 : 64;
    while (c < need)
        c *= 2;
    void *p = realloc(v, c * elem);
    if (!p)
        panic("out of host memory (%zu bytes)", c * elem);
    *cap = c;
    return p;
}

static uint64_t chip_ps(const engine *g, uint32_t chip, uint64_t cycles)
{
    return simtime_cycles_to_ps(cycles, g->chip[chip].hz);
}

/* ---- set-up ------------------------------------------------------------------ */

/* The exchange of the system: which tiles have code, and the buffers of
 * the variables the executable keeps in streaming memory (its tensor map
 * says which), zero before the first step. */
static bool start_exchange(engine *g, const xch_params *p, uint64_t hz, const ipu_exe *e, char *err,
                           size_t err_size)
{
    if (!xch_system_init(&g->xch, p, hz)) {
        snprintf(err, err_size, "out of host memory for the exchange of %u tiles", g->system_tiles);
        return false;
    }
    for (size_t i = 0; i < g->n_tiles; i++)
        xch_set_has_code(&g->xch, g->tiles[i].tile_id);
    if (!e->tensors.size)
        return true;
    char why[512];
    tensor_map *m = tmap_decode(e->tensors.bytes, e->tensors.size, "the executable", why, sizeof why);
    if (!m) {
        snprintf(err, err_size, "%s", why);
        return false;
    }
    bool ok = program_set_up_streaming(g, m, err, err_size);
    tmap_free(m);
    return ok;
}

engine *engine_new(const machine *m, const ipu_exe *e, char *err, size_t err_size)
{
    engine *g = calloc(1, sizeof *g);
    if (!g) {
        snprintf(err, err_size, "out of host memory");
        return NULL;
    }
    g->m = *m;
    g->exe = e;
    g->chips = machine_u32(m, MP_chips);
    g->tiles_per_chip = machine_u32(m, MP_tiles_per_chip);
    g->system_tiles = g->chips * g->tiles_per_chip;
    uint8_t *has = calloc(g->system_tiles, 1);
    g->index_of = malloc(g->system_tiles * sizeof *g->index_of);
    g->chip = calloc(g->chips, sizeof *g->chip);
    g->group_members = calloc(g->chips + 1, sizeof *g->group_members);
    g->group_active = calloc(g->chips + 1, sizeof *g->group_active);
    g->group_open = calloc(g->chips + 1, sizeof *g->group_open);
    if (!has || !g->index_of || !g->chip || !g->group_members || !g->group_active || !g->group_open) {
        free(has);
        engine_free(g);
        snprintf(err, err_size, "out of host memory");
        return NULL;
    }
    for (size_t s = 0; s < e->n_sections; s++) {
        uint32_t id = e->sections[s].tile;
        if (id >= g->system_tiles) {
            snprintf(err, err_size, "tile %u is beyond the %u tiles of machine %s (%u chip%s x %u tiles)", id,
                     g->system_tiles, m->name, g->chips, g->chips == 1 ? "" : "s", g->tiles_per_chip);
            free(has);
            engine_free(g);
            return NULL;
        }
        if (!has[id]) {
            has[id] = 1;
            g->n_tiles++;
        }
    }
    if (g->n_tiles == 0) {
        snprintf(err, err_size, "the executable has no tile sections");
        free(has);
        engine_free(g);
        return NULL;
    }
    g->tiles = calloc(g->n_tiles, sizeof *g->tiles);
    g->tile_state = calloc(g->n_tiles, sizeof *g->tile_state);
    g->code_cache = tile_code_cache_new();
    /* Each tile's sections, in file order, found by one counting pass (a
     * whole-board program has hundreds of thousands of sections). */
    size_t *sec_first = calloc((size_t)g->system_tiles + 2, sizeof *sec_first);
    size_t *sec_idx = malloc((e->n_sections + 1) * sizeof *sec_idx);
    if (!g->tiles || !g->tile_state || !g->code_cache || !sec_first || !sec_idx) {
        snprintf(err, err_size, "out of host memory for %zu tiles", g->n_tiles);
        free(has);
        free(sec_first);
        free(sec_idx);
        engine_free(g);
        return NULL;
    }
    for (size_t q = 0; q < e->n_sections; q++)
        sec_first[e->sections[q].tile + 1]++;
    for (uint32_t id = 0; id < g->system_tiles; id++)
        sec_first[id + 1] += sec_first[id];
    {
        size_t *fill = calloc((size_t)g->system_tiles + 1, sizeof *fill);
        if (!fill) {
            snprintf(err, err_size, "out of host memory for %zu tiles", g->n_tiles);
            free(has);
            free(sec_first);
            free(sec_idx);
            engine_free(g);
            return NULL;
        }
        for (size_t q = 0; q < e->n_sections; q++) {
            uint32_t id = e->sections[q].tile;
            sec_idx[sec_first[id] + fill[id]++] = q;
        }
        free(fill);
    }
    uint64_t hz = simtime_hz(machine_get(m, MP_tile_clock_hz));
    for (uint32_t c = 0; c < g->chips; c++)
        g->chip[c].hz = hz;
    size_t k = 0;
    page_table pages = { 0 };
    for (uint32_t id = 0; id < g->system_tiles; id++) {
        g->index_of[id] = -1;
        if (!has[id])
            continue;
        etile *et = &g->tiles[k];
        et->x = &g->tile_state[k];
        g->index_of[id] = (int32_t)k++;
        et->tile_id = id;
        et->chip = id / g->tiles_per_chip;
        tile_init(&et->x->t, m, id);
        isa_seed_prngs(&et->x->t.s, ENGINE_PRNG_SEED);
        et->log.system_tiles = g->system_tiles;
        et->x->t.s.xlog = &et->log;
        if (tile_load_sections(&et->x->t, e, sec_idx + sec_first[id], sec_first[id + 1] - sec_first[id],
                               g->code_cache, err, err_size)) {
            page_table_share(&pages, &et->x->t.s.mem);
        } else {
            page_table_free(&pages);
            free(has);
            free(sec_first);
            free(sec_idx);
            engine_free(g);
            return NULL;
        }
    }
    free(has);
    free(sec_first);
    free(sec_idx);
    page_table_free(&pages);
    for (size_t i = 0, c = 0; c < g->chips; c++) {
        g->chip[c].first = i;
        while (i < g->n_tiles && g->tiles[i].chip == c)
            i++;
        g->chip[c].end = i;
    }
    uint32_t columns = machine_u32(m, MP_exchange_columns);
    xch_params p = {
        .chips = g->chips,
        .tiles_per_chip = g->tiles_per_chip,
        .chips_per_board = machine_u32(m, MP_chips_per_board),
        .board_hops = machine_u32(m, MP_board_hops),
        .board_ring = machine_u32(m, MP_board_ring),
        .tiles_per_column = (g->tiles_per_chip + columns - 1) / (columns ? columns : 1),
        .island_tiles = machine_u32(m, MP_exchange_island_tiles),
        .base_latency_cycles = machine_u32(m, MP_exchange_base_latency_cycles),
        .cycles_per_island = machine_u32(m, MP_exchange_cycles_per_island),
        .cross_column_cycles = machine_u32(m, MP_exchange_cross_column_cycles),
        .send_bytes_per_cycle = machine_u32(m, MP_exchange_send_bytes_per_cycle),
        .supertile_receive = machine_u32(m, MP_exchange_supertile_receive) != 0,
        .link_bytes_per_s = (uint64_t)(machine_get(m, MP_ipu_link_bandwidth_bytes_per_s) *
                                       machine_get(m, MP_ipu_links_per_chip_pair)),
        .link_hop_ps = (uint64_t)machine_get(m, MP_ipu_link_hop_latency_ps),
        .host_bytes_per_s = (uint64_t)machine_get(m, MP_host_bandwidth_bytes_per_s),
        .host_latency_ps = (uint64_t)machine_get(m, MP_host_latency_ps),
        .stream_bytes_per_s = (uint64_t)machine_get(m, MP_streaming_memory_bandwidth_bytes_per_s),
        .stream_latency_ps = (uint64_t)machine_get(m, MP_streaming_memory_latency_ps),
        .stream_capacity_bytes = (uint64_t)machine_get(m, MP_streaming_memory_bytes),
    };
    if (!start_exchange(g, &p, hz, e, err, err_size)) {
        engine_free(g);
        return NULL;
    }
    return g;
}

void engine_free(engine *g)
{
    if (!g)
        return;
    for (size_t i = 0; g->tile_state && i < g->n_tiles; i++)
        tile_free(&g->tile_state[i].t);
    for (size_t i = 0; g->tiles && i < g->n_tiles; i++)
        xch_log_free(&g->tiles[i].log);
    free(g->tiles);
    free(g->tile_state);
    free(g->index_of);
    free(g->chip);
    free(g->group_members);
    free(g->group_active);
    free(g->group_open);
    xch_system_free(&g->xch);
    free(g->heap);
    free(g->releases);
    free(g->runnable);
    free(g->stats.chips);
    free(g->stats.supersteps);
    free(g->segs);
    tile_code_cache_free(g->code_cache);
    free(g);
}

bool engine_set_chip_clock(engine *g, uint32_t chip, double hz, char *err, size_t err_size)
{
    if (chip >= g->chips || !(hz >= 1e6 && hz <= 1e12)) {
        snprintf(err, err_size, "chip %u clock %.6g Hz: need a chip below %u and a clock of 1 MHz to 1 THz", chip,
                 hz, g->chips);
        return false;
    }
    g->chip[chip].hz = simtime_hz(hz);
    g->xch.chip_hz[chip] = g->chip[chip].hz;
    return true;
}

bool engine_set_host_input(engine *g, uint32_t stream, const void *data, size_t size)
{
    return xch_set_host_input(&g->xch, stream, data, size);
}

bool engine_set_stream_buffer(engine *g, uint32_t n, const void *data, size_t size, char *err, size_t err_size)
{
    return xch_set_stream_buffer(&g->xch, n, data, size, err, err_size);
}

const uint8_t *engine_host_output(const engine *g, uint32_t stream, size_t *size)
{
    return xch_host_output(&g->xch, stream, size);
}

const uint8_t *engine_stream_buffer(const engine *g, uint32_t n, size_t *size)
{
    return xch_stream_buffer(&g->xch, n, size);
}

uint8_t *engine_stream_buffer_mut(engine *g, uint32_t n, size_t *size)
{
    return xch_stream_buffer_mut(&g->xch, n, size);
}

const char *engine_message(const engine *g) { return g->message; }
const engine_stats *engine_get_stats(const engine *g) { return &g->stats; }

uint32_t engine_chips_used(const engine_stats *st)
{
    uint32_t used = 0;
    for (uint32_t c = 0; c < st->n_chips; c++)
        used += st->chips[c].tiles > 0;
    return used;
}
size_t engine_tile_count(const engine *g) { return g->n_tiles; }
const ipu_tile *engine_tile_at(const engine *g, size_t i) { return i < g->n_tiles ? &g->tile_state[i].t : NULL; }
uint64_t engine_chip_clock_hz(const engine *g, uint32_t chip) { return chip < g->chips ? g->chip[chip].hz : 0; }

const ipu_tile *engine_tile(const engine *g, uint32_t global_tile)
{
    if (global_tile >= g->system_tiles || g->index_of[global_tile] < 0)
        return NULL;
    return &g->tile_state[g->index_of[global_tile]].t;
}

/* ---- the event queue ----------------------------------------------------------- */

static bool event_before(const event *a, const event *b)
{
    return a->time_ps != b->time_ps ? a->time_ps < b->time_ps : a->seq < b->seq;
}

static void push_event(engine *g, uint64_t time_ps, uint32_t kind, uint32_t arg)
{
    g->heap = grow(g->heap, &g->cap_heap, g->n_heap + 1, sizeof *g->heap);
    size_t i = g->n_heap++;
    event ev = { .time_ps = time_ps, .seq = g->next_seq++, .kind = kind, .arg = arg };
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!event_before(&ev, &g->heap[parent]))
            break;
        g->heap[i] = g->heap[parent];
        i = parent;
    }
    g->heap[i] = ev;
}

static event pop_event(engine *g)
{
    event top = g->heap[0];
    event last = g->heap[--g->n_heap];
    size_t i = 0, n = g->n_heap;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && event_before(&g->heap[c + 1], &g->heap[c]))
            c++;
        if (!event_before(&g->heap[c], &last))
            break;
        g->heap[i] = g->heap[c];
        i = c;
    }
    if (n)
        g->heap[i] = last;
    return top;
}

/* ---- helpers ------------------------------------------------------------------- */

static bool traced(const engine *g, const etile *et)
{
    return g->opt.record_trace && et->tile_id >= g->opt.trace_tile_first && et->tile_id <= g->opt.trace_tile_last;
}

static void add_segment(engine *g, size_t idx, enum seg_kind kind, uint64_t start, uint64_t end)
{
    if (end <= start)
        return;
    g->segs = grow(g->segs, &g->cap_segs, g->n_segs + 1, sizeof *g->segs);
    g->segs[g->n_segs++] = (segment){ .tile = (uint32_t)idx, .kind = (uint8_t)kind, .start_cycle = start,
                                      .end_cycle = end };
}

static void make_runnable(engine *g, size_t idx, uint64_t resume_cycle)
{
    etile *et = &g->tiles[idx];
    et->state = ET_RUNNABLE;
    et->resume_cycle = resume_cycle;
    g->group_active[et->group]++;
    g->runnable[g->n_runnable++] = (uint32_t)idx;
    uint64_t ps = chip_ps(g, et->chip, resume_cycle);
    if (ps < g->min_resume_ps)
        g->min_resume_ps = ps;
}

/* " (prog.S:12, in loop+0x4)" or "" */
static void where(const engine *g, const etile *et, uint32_t pc, char *buf, size_t n)
{
    buf[0] = 0;
    const char *file;
    uint32_t line;
    if (g->exe && exe_line_at(g->exe, et->tile_id, pc, &file, &line))
        snprintf(buf, n, " (%s:%u)", file, line);
}

static void fail_with_tile_fault(engine *g, etile *et)
{
    et->state = ET_FAULTED;
    g->status = ENGINE_FAULT;
    tile_describe_fault(&et->x->t, g->exe, g->message, sizeof g->message);
}

/* ---- statistics ------------------------------------------------------------------ */

void engine_counts_add(engine_counts *a, const engine_counts *b)
{
    const uint64_t *src = (const uint64_t *)b;
    uint64_t *dst = (uint64_t *)a;
    for (size_t i = 0; i < sizeof *a / sizeof(uint64_t); i++)
        dst[i] += src[i];
}

static double amp_utilisation(const engine *g, const engine_counts *c)
{
    double peak16 = machine_get(&g->m, MP_amp_f16_peak_macs_per_cycle);
    double peak32 = machine_get(&g->m, MP_amp_f32_peak_macs_per_cycle);
    double denom = (double)g->tiles_per_chip * (double)c->cycles;
    return denom > 0 ? ((double)c->amp_f16_macs / peak16 + (double)c->amp_f32_macs / peak32) / denom : 0.0;
}

engine_amp_summary engine_amp_totals(const engine *g, const engine_stats *st, uint64_t model_macs)
{
    engine_amp_summary a = { .model_macs = model_macs };
    engine_counts all = { 0 };
    for (uint32_t c = 0; c < st->n_chips; c++)
        if (st->chips[c].tiles)
            engine_counts_add(&all, &st->chips[c].c);
    a.issued_macs = all.amp_f16_macs + all.amp_f32_macs;
    a.issued_utilisation = amp_utilisation(g, &all);
    if (model_macs && a.issued_macs) {
        a.issued_per_model_mac = (double)a.issued_macs / (double)model_macs;
        a.useful_utilisation = a.issued_utilisation / a.issued_per_model_mac;
    }
    return a;
}

/* Bring a tile's instruction and MAC counts up to date from the issue
 * loop's running totals (what tile_collect_stats derives from its code's
 * counts, without a pass over the code).  Done when it stops at a barrier
 * or its end, so a superstep's counts are complete when it closes. */
static void take_counts(etile *et)
{
    const ipu_tile *t = &et->x->t;
    et->instructions = t->issued_instructions;
    et->amp_f16_macs = t->issued_amp_macs[0];
    et->amp_f32_macs = t->issued_amp_macs[1];
}

/* The same for tiles [lo, hi), on the host threads. */
static void refresh_counts(engine *g, size_t lo, size_t hi)
{
    int threads = hi - lo < 64 ? 1 : g->threads;
    etile *tiles = g->tiles;
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads) if (threads > 1)
    for (size_t i = lo; i < hi; i++)
        take_counts(&tiles[i]);
}

/* End chip c's current superstep at end_cycle.  group_max_ps: the last
 * effective arrival in the barrier's group (other chips' included). */
static void close_superstep(engine *g, uint32_t c, uint8_t zone, uint64_t end_cycle, uint64_t group_max_ps)
{
    chip_state *cs = &g->chip[c];
    engine_superstep s;
    memset(&s, 0, sizeof s);
    s.chip = c;
    s.index = cs->n_supersteps++;
    s.zone = zone;
    s.start_cycle = cs->ss_start_cycle;
    s.start_ps = cs->ss_start_ps;
    uint64_t chip_max = 0;
    size_t busiest = cs->first;
    for (size_t i = cs->first; i < cs->end; i++)
        if (g->tiles[i].eff_cycle > chip_max || i == cs->first) {
            chip_max = g->tiles[i].eff_cycle;
            busiest = i;
        }
    uint64_t group_max = simtime_max(chip_max, simtime_ps_to_cycle_ceil(group_max_ps, cs->hz));
    if (end_cycle < group_max)
        end_cycle = group_max;
    s.end_cycle = end_cycle;
    s.end_ps = chip_ps(g, c, end_cycle);
    s.c.cycles = end_cycle - s.start_cycle;
    for (size_t i = cs->first; i < cs->end; i++) {
        etile *et = &g->tiles[i];
        uint64_t exch = et->ss_exchange + (et->eff_cycle - et->stop_cycle);
        s.c.tile_compute_cycles += et->ss_compute;
        s.c.tile_exchange_cycles += exch;
        s.c.tile_idle_cycles += group_max - et->eff_cycle;
        s.c.tile_sync_cycles += end_cycle - group_max;
        s.c.instructions += et->instructions - et->instr_mark;
        s.c.amp_f16_macs += et->amp_f16_macs - et->f16_mark;
        s.c.amp_f32_macs += et->amp_f32_macs - et->f32_mark;
        if (i == busiest) {
            s.busiest_tile = et->tile_id;
            s.c.compute_cycles = et->ss_compute;
            s.c.exchange_cycles = exch;
            s.c.wait_cycles = group_max - chip_max;
            s.c.sync_cycles = end_cycle - group_max;
        }
        if (traced(g, et)) {
            add_segment(g, i, SEG_EXCHANGE, et->stop_cycle, et->eff_cycle);
            add_segment(g, i, SEG_IDLE, et->eff_cycle, group_max);
            add_segment(g, i, SEG_SYNC, group_max, end_cycle);
        }
        et->ss_compute = et->ss_exchange = 0;
        et->instr_mark = et->instructions;
        et->f16_mark = et->amp_f16_macs;
        et->f32_mark = et->amp_f32_macs;
    }
    const xch_chip_stats *now = &g->xch.chip_stats[c], *mark = &cs->xch_mark;
    s.c.exchange_bytes = now->exchange_bytes - mark->exchange_bytes;
    s.c.exchange_transfers = now->exchange_transfers - mark->exchange_transfers;
    s.c.receive_conflict_cycles = now->receive_conflict_cycles - mark->receive_conflict_cycles;
    s.c.late_receives = now->late_receives - mark->late_receives;
    s.c.link_bytes = now->link_bytes - mark->link_bytes;
    s.c.link_ps = now->link_ps - mark->link_ps;
    s.c.host_bytes = now->host_bytes - mark->host_bytes;
    s.c.host_ps = now->host_ps - mark->host_ps;
    s.c.stream_bytes = now->stream_bytes - mark->stream_bytes;
    s.c.stream_ps = now->stream_ps - mark->stream_ps;
    cs->xch_mark = *now;
    s.amp_utilisation = amp_utilisation(g, &s.c);
    cs->ss_start_cycle = end_cycle;
    cs->ss_start_ps = s.end_ps;
    g->stats.supersteps = grow(g->stats.supersteps, &g->cap_supersteps, g->stats.n_supersteps + 1,
                               sizeof *g->stats.supersteps);
    g->stats.supersteps[g->stats.n_supersteps++] = s;
}

/* ---- barriers and the exchange ------------------------------------------------- */

static void check_chip_barrier(engine *g, uint32_t c)
{
    chip_state *cs = &g->chip[c];
    size_t n = cs->end - cs->first;
    if (n == 0 || cs->barrier_ready[1] != n)
        return;
    uint64_t max_eff = 0;
    for (size_t i = cs->first; i < cs->end; i++) {
        g->tiles[i].state = ET_RELEASING;
        max_eff = simtime_max(max_eff, g->tiles[i].eff_cycle);
    }
    cs->barrier_ready[1] = 0;
    uint64_t release_cycle = max_eff + machine_u32(&g->m, MP_sync_internal_cycles);
    g->releases = grow(g->releases, &g->cap_releases, g->n_releases + 1, sizeof *g->releases);
    g->releases[g->n_releases] = (release){ .group = c, .zone = 1, .release_ps = chip_ps(g, c, release_cycle),
                                            .group_max_ps = chip_ps(g, c, max_eff) };
    push_event(g, g->releases[g->n_releases].release_ps, EV_RELEASE, (uint32_t)g->n_releases);
    g->n_releases++;
}

/* The largest IPU-Link hop count between chips that have code (at least
 * one: an external sync leaves the chip even on a one-chip system). */
static uint32_t sync_hops(const engine *g)
{
    uint32_t hops = 1;
    for (uint32_t a = 0; a < g->chips; a++)
        for (uint32_t b = a + 1; b < g->chips; b++)
            if (g->chip[a].end > g->chip[a].first && g->chip[b].end > g->chip[b].first) {
                uint32_t h = xch_chip_hops(&g->xch.p, a, b);
                if (h > hops)
                    hops = h;
            }
    return hops;
}

static void check_system_barrier(engine *g)
{
    if (g->barrier2_ready != g->n_tiles)
        return;
    uint64_t max_ps = 0;
    for (size_t i = 0; i < g->n_tiles; i++) {
        g->tiles[i].state = ET_RELEASING;
        max_ps = simtime_max(max_ps, chip_ps(g, g->tiles[i].chip, g->tiles[i].eff_cycle));
    }
    for (uint32_t c = 0; c < g->chips; c++)
        g->chip[c].barrier_ready[2] = 0;
    g->barrier2_ready = 0;
    uint64_t latency = (uint64_t)machine_get(&g->m, MP_sync_external_ps_per_hop) * sync_hops(g);
    g->releases = grow(g->releases, &g->cap_releases, g->n_releases + 1, sizeof *g->releases);
    g->releases[g->n_releases] = (release){ .group = g->chips, .zone = 2, .release_ps = simtime_add(max_ps, latency),
                                            .group_max_ps = max_ps };
    push_event(g, g->releases[g->n_releases].release_ps, EV_RELEASE, (uint32_t)g->n_releases);
    g->n_releases++;
}

static void finish_chip(engine *g, uint32_t c)
{
    chip_state *cs = &g->chip[c];
    uint64_t end = 0;
    for (size_t i = cs->first; i < cs->end; i++)
        end = simtime_max(end, g->tiles[i].eff_cycle);
    cs->finished = true;
    close_superstep(g, c, 0, end, 0);
}

/* Before a resolution: the first receive of a tile with access watches
 * whose data will land in a write watch, to report after the event
 * (engine.h, ACCESS). */
static void note_received(engine *g, etile *et)
{
    etile_body *b = et->x;
    for (size_t i = 0; i < et->log.n_recvs; i++) {
        const xch_transfer *rv = &et->log.recvs[i];
        if (!tmem_watch_hits(&b->t.s.mem, rv->addr, rv->bytes, true))
            continue;
        if (!b->access_pending)
            g->n_received_pending++;
        b->access = (tmem_access){ rv->addr, rv->bytes, true };
        b->access_pc = rv->pc;
        b->access_context = ISA_SUPERVISOR;
        b->access_received = true;
        b->access_pending = true;
        return;
    }
}

/* Resolve group grp's phase when none of its tiles still runs. */
static void try_resolve(engine *g, uint32_t grp)
{
    if (g->group_active[grp] || !g->group_open[grp])
        return;
    size_t lo = 0, hi = g->n_tiles;
    if (grp < g->chips) {
        lo = g->chip[grp].first;
        hi = g->chip[grp].end;
    }
    xch_party *parties = malloc((hi - lo + 1) * sizeof *parties);
    uint32_t *idx = malloc((hi - lo + 1) * sizeof *idx);
    if (!parties || !idx)
        panic("out of host memory resolving an exchange of %zu tiles", hi - lo);
    size_t n = 0;
    for (size_t i = lo; i < hi; i++) {
        etile *et = &g->tiles[i];
        if (et->group != grp)
            continue;
        memset(&parties[n], 0, sizeof parties[n]);
        parties[n].tile = et->tile_id;
        parties[n].log = &et->log;
        parties[n].mem = &et->x->t.s.mem;
        parties[n].stop_cycle = et->stop_cycle;
        idx[n++] = (uint32_t)i;
        if (et->watched)
            note_received(g, et);
    }
    if (!xch_resolve(&g->xch, parties, n, grp < g->chips ? (int32_t)grp : -1)) {
        for (size_t k = 0; k < n; k++) {
            if (!parties[k].faulted)
                continue;
            etile *et = &g->tiles[idx[k]];
            isa_tile_state *ts = &et->x->t.s;
            isa_fault *f = &ts->fault;
            memset(f, 0, sizeof *f);
            f->exception = parties[k].exception;
            f->context = ISA_SUPERVISOR;
            f->pc = parties[k].fault_pc;
            tmem_read_bytes(&ts->mem, f->pc, &f->word, 4);
            snprintf(f->message, sizeof f->message, "%s", parties[k].message);
            ts->ctx[ISA_SUPERVISOR].run_mode = ISA_RUN_FAULTED;
            fail_with_tile_fault(g, et);
            break;
        }
        free(parties);
        free(idx);
        return;
    }
    bool barrier1 = false;
    for (size_t k = 0; k < n; k++) {
        size_t i = idx[k];
        etile *et = &g->tiles[i];
        if (!et->phase_open)
            continue;
        et->phase_open = false;
        g->group_open[grp]--;
        et->sent_cycle = simtime_max(et->sent_cycle, parties[k].send_done_cycle);
        uint64_t eff = simtime_max(et->stop_cycle, simtime_max(parties[k].recv_done_cycle, et->sent_cycle));
        et->eff_cycle = eff;
        chip_state *cs = &g->chip[et->chip];
        if (et->state == ET_ENDED) {
            if (++cs->done == cs->end - cs->first)
                finish_chip(g, et->chip);
        } else if (et->zone == ISA_SYNC_EXCHANGE) {
            uint64_t resume = simtime_max(et->stop_cycle, parties[k].recv_done_cycle);
            et->ss_exchange += resume - et->stop_cycle;
            if (traced(g, et))
                add_segment(g, i, SEG_EXCHANGE, et->stop_cycle, resume);
            make_runnable(g, i, resume);
        } else if (et->zone == ISA_SYNC_INTERNAL) {
            cs->barrier_ready[1]++;
            barrier1 = true;
        } else {
            cs->barrier_ready[2]++;
            g->barrier2_ready++;
        }
    }
    free(parties);
    free(idx);
    if (barrier1)
        for (uint32_t c = 0; c < g->chips; c++)
            if (grp == g->chips || grp == c)
                check_chip_barrier(g, c);
    check_system_barrier(g);
}

static void process_stop(engine *g, uint32_t idx)
{
    etile *et = &g->tiles[idx];
    g->group_active[et->group]--;
    et->phase_open = true;
    g->group_open[et->group]++;
    et->state = et->stop == TILE_STOP_END ? ET_ENDED : ET_WAITING;
    try_resolve(g, et->group);
}

static void process_release(engine *g, uint32_t r)
{
    release rel = g->releases[r];
    for (uint32_t c = 0; c < g->chips; c++) {
        chip_state *cs = &g->chip[c];
        if (cs->end == cs->first || (rel.zone == 1 && c != rel.group))
            continue;
        uint64_t end_cycle = simtime_ps_to_cycle_ceil(rel.release_ps, cs->hz);
        close_superstep(g, c, rel.zone, end_cycle, rel.group_max_ps);
        uint32_t new_group = rel.zone == 1 ? c : g->chips;
        for (size_t i = cs->first; i < cs->end; i++) {
            etile *et = &g->tiles[i];
            g->group_members[et->group]--;
            et->group = new_group;
            et->sent_cycle = 0;
            g->group_members[new_group]++;
            make_runnable(g, i, cs->ss_start_cycle);
        }
    }
}

/* ---- running tiles ------------------------------------------------------------- */

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* A tile's run in a batch: where it starts, and what it ran once it stopped. */
static inline void start_run(etile *et)
{
    ipu_tile *t = &et->x->t;
    tile_release_sync(t);
    tile_advance_to(t, et->resume_cycle);
    et->run_start = t->s.cycle;
    et->stall_mark = t->stats.exchange_stall_cycles;
}

static inline void end_run(etile *et)
{
    ipu_tile *t = &et->x->t;
    et->stop_cycle = t->s.cycle;
    et->run_stall = t->stats.exchange_stall_cycles - et->stall_mark;
    et->zone = t->s.sync_zone;
    /* A superstep of this tile ends here (not at a sync 3): count its
     * instructions now, while its code is in the cache. */
    if (et->stop != TILE_STOP_SYNC || et->zone != ISA_SYNC_EXCHANGE)
        take_counts(et);
    et->ran = true;
}

/* Every tile of the batch has stopped: account its runs and queue the
 * stops.  False when a tile faulted or reached the limit. */
static bool close_batch(engine *g, int threads, bool timed, int mode, double batch_s)
{
    size_t n = g->n_runnable;
    uint32_t *list = g->runnable;
    etile *tiles = g->tiles;
    uint64_t batch_cycles = 0;
    etile *bad = NULL;
    for (size_t k = 0; k < n; k++) {
        etile *et = &tiles[list[k]];
        uint64_t run = et->stop_cycle - et->run_start;
        uint64_t stall = et->run_stall;
        if (stall > run)
            stall = run;
        et->ss_compute += run - stall;
        et->ss_exchange += stall;
        et->compute_total += run - stall;
        et->run_cycles += run;
        g->stats.tile_cycles += run;
        batch_cycles += run;
        if (g->opt.record_trace)
            add_segment(g, list[k], SEG_RUN, et->run_start, et->stop_cycle);
        if (et->stop == TILE_STOP_FAULT || et->stop == TILE_STOP_LIMIT) {
            if (!bad)
                bad = et;
            continue;
        }
        et->state = ET_STOPPED;
        if (et->stop != TILE_STOP_SYNC)
            et->zone = 0;
        push_event(g, chip_ps(g, et->chip, et->stop_cycle), EV_STOP, list[k]);
    }
    g->n_runnable = 0;
    if (timed && batch_s > 0) {
        double rate = (double)batch_cycles / batch_s, *r = &g->batch_rate[mode];
        *r = *r == 0 ? rate : 0.7 * *r + 0.3 * rate;
    }
    g->stats.batches++;
    g->stats.parallel_batches += threads > 1;
    if (!bad)
        return true;
    if (bad->stop == TILE_STOP_FAULT) {
        fail_with_tile_fault(g, bad);
    } else {
        g->status = ENGINE_LIMIT;
        snprintf(g->message, sizeof g->message, "tile %u did not finish within %llu cycles (--max-cycles)",
                 bad->tile_id, (unsigned long long)g->opt.max_cycles);
    }
    return false;
}

/* Run every runnable tile to its next stop, in parallel; queue the stops.
 * False when a tile faulted or reached the limit. */
static bool run_batch(engine *g, int threads)
{
    size_t n = g->n_runnable;
    uint32_t *list = g->runnable;
    if (n)
        qsort(list, n, sizeof *list, cmp_u32);
    uint64_t limit = g->opt.max_cycles;
    etile *tiles = g->tiles;
    /* Host threads pay off for big batches on a host that is not busy with
     * other work.  Small batches run on one thread; for the others the
     * engine keeps the recent speed (tile-cycles per host second) of
     * batches run on one thread and on all, runs the faster way and tries
     * the other every 16th batch.  Only the speed depends on this, never
     * the results. */
    int mode = g->opt.force_threads;
    bool timed = threads > 1 && n >= 16 * (size_t)threads && !g->opt.force_threads;
    if (timed) {
        if (g->batch_rate[1] == 0)
            mode = 1;
        else if (g->batch_rate[0] == 0)
            mode = 0;
        else
            mode = g->batch_rate[1] >= g->batch_rate[0];
        if (++g->batches % 16 == 0)
            mode = !mode;
    }
    if (mode == 0)
        threads = 1;
    double t0 = timed ? seconds_now() : 0;
#pragma omp parallel for schedule(dynamic, 8) num_threads(threads) if (threads > 1)
    for (size_t k = 0; k < n; k++) {
        etile *et = &tiles[list[k]];
        start_run(et);
        et->stop = (uint8_t)tile_run(&et->x->t, limit);
        end_run(et);
    }
    double batch_s = timed ? seconds_now() - t0 : 0;
    return close_batch(g, threads, timed, mode, batch_s);
}

/* ---- stepping (engine.h) ------------------------------------------------------- */

enum batch_result { BATCH_STOPPED, BATCH_FAILED, BATCH_PAUSED, BATCH_PAUSED_CLOSED };

/* A tile runs in chunks of this many cycles while a debugger may
 * interrupt it. */
#define DEBUG_CHUNK_CYCLES (1u << 20)

static bool interrupted(const engine *g)
{
    return g->dbg.interrupt && *g->dbg.interrupt;
}

/* Where tile t's run must stop: the cycle limit, or break_cycle when the
 * tile has not reached it yet. */
static uint64_t debug_limit(const engine *g, const ipu_tile *t)
{
    uint64_t limit = g->opt.max_cycles, b = g->dbg.break_cycle;
    if (b && b > t->s.cycle && b < limit)
        limit = b;
    return limit;
}

static void pause_tile(etile *et, enum engine_pause_reason why, unsigned context, uint32_t pc)
{
    et->pause = (uint8_t)why;
    et->pause_context = (uint8_t)context;
    et->pause_pc = pc;
}

/* An access of the issue that paused at CHECK also hit an access watch:
 * pause for it now, before the tile issues again (engine.h). */
static bool pending_issue_access(etile *et)
{
    etile_body *b = et->x;
    if (!b->access_pending || b->access_received)
        return false;
    b->access_pending = false;
    if (!tmem_watch_hits(&b->t.s.mem, b->access.addr, b->access.bytes, b->access.write))
        return false;
    pause_tile(et, ENGINE_PAUSE_ACCESS, b->access_context, b->access_pc);
    return true;
}

/* Run a tile of an open batch on until it stops for good or pauses.  Runs
 * split at cycle limits are exactly one run (tile_run). */
static void debug_run(engine *g, etile *et)
{
    ipu_tile *t = &et->x->t;
    if (pending_issue_access(et))
        return;
    for (;;) {
        uint64_t limit = debug_limit(g, t);
        uint64_t chunk = t->s.cycle < limit && limit - t->s.cycle > DEBUG_CHUNK_CYCLES
                             ? t->s.cycle + DEBUG_CHUNK_CYCLES : limit;
        enum tile_stop stop = tile_run(t, chunk);
        if (stop == TILE_STOP_LIMIT && t->s.cycle < limit) {
            if (interrupted(g)) {
                pause_tile(et, ENGINE_PAUSE_INTERRUPT, ISA_SUPERVISOR, t->s.ctx[ISA_SUPERVISOR].pc);
                return;
            }
            continue;
        }
        et->stop = (uint8_t)stop;
        if (stop == TILE_STOP_BREAK)
            pause_tile(et, ENGINE_PAUSE_BREAKPOINT, t->break_context, t->break_pc);
        else if (stop == TILE_STOP_LIMIT && t->s.cycle < g->opt.max_cycles)
            pause_tile(et, ENGINE_PAUSE_CYCLE, ISA_SUPERVISOR, t->s.ctx[ISA_SUPERVISOR].pc);
        else
            end_run(et);
        return;
    }
}

/* Slow mode: one cycle at a time, pausing after an issue of step_tile,
 * when check() says so after an issue of a checked tile, or when an issue
 * of a tile with access watches hit one.  An issue happened when the
 * context owning the cycle's slot was ready and its issue count went up
 * (a stalled `run` retires nothing). */
static void debug_run_slow(engine *g, etile *et)
{
    ipu_tile *t = &et->x->t;
    bool stepping = g->dbg.step && et->tile_id == g->dbg.step_tile;
    if (pending_issue_access(et))
        return;
    for (uint64_t i = 0;; i++) {
        if (t->s.cycle >= debug_limit(g, t)) {
            debug_run(g, et);
            return;
        }
        if ((i & 0xffff) == 0xffff && interrupted(g)) {
            pause_tile(et, ENGINE_PAUSE_INTERRUPT, ISA_SUPERVISOR, t->s.ctx[ISA_SUPERVISOR].pc);
            return;
        }
        unsigned k = t->slot_owner[t->slot];
        const isa_context *c = &t->s.ctx[k];
        const tile_decoded *d = c->run_mode == ISA_RUN_RUNNING && t->s.cycle >= t->ready_cycle[k]
                                    ? tile_decoded_at(t, c->pc) : NULL;
        uint64_t count = d ? t->counts[(c->pc - t->code_base) >> 2] : 0;
        uint32_t pc = c->pc;
        enum tile_stop stop = tile_run(t, t->s.cycle + 1);
        tmem_access hit;
        bool accessed = et->watched && tmem_watch_take(&t->s.mem, &hit);
        if (stop != TILE_STOP_LIMIT) {
            et->stop = (uint8_t)stop;
            if (stop == TILE_STOP_BREAK) {
                pause_tile(et, ENGINE_PAUSE_BREAKPOINT, t->break_context, t->break_pc);
                return;
            }
            end_run(et);
            if (stepping && stop != TILE_STOP_FAULT) {
                /* The sync or end was the step: pause once the batch is closed. */
                g->step_done = true;
                et->pause_context = (uint8_t)k;
                et->pause_pc = pc;
            }
            return;
        }
        if (accessed) {
            etile_body *b = et->x;
            b->access = hit;
            b->access_pc = pc;
            b->access_context = (uint8_t)k;
            b->access_received = false;
        }
        if (accessed || (d && t->counts[(pc - t->code_base) >> 2] != count)) {
            if (stepping) {
                pause_tile(et, accessed ? ENGINE_PAUSE_ACCESS : ENGINE_PAUSE_STEP, k, pc);
                return;
            }
            if (et->checked && g->dbg.check && g->dbg.check(g->dbg.check_ctx, g, et->tile_id)) {
                et->x->access_pending = accessed;
                pause_tile(et, ENGINE_PAUSE_CHECK, k, pc);
                return;
            }
            if (accessed) {
                pause_tile(et, ENGINE_PAUSE_ACCESS, k, pc);
                return;
            }
        }
    }
}

static void set_pause(engine *g, enum engine_pause_reason why, const etile *et)
{
    memset(&g->pause, 0, sizeof g->pause);
    g->pause.reason = why;
    g->pause.tile = et ? et->tile_id : UINT32_MAX;
    if (et) {
        g->pause.context = et->pause_context;
        g->pause.pc = et->pause_pc;
        g->pause.cycle = et->x->t.s.cycle;
        g->pause.chip = et->chip;
    }
    if (why == ENGINE_PAUSE_ACCESS) {
        const etile_body *b = et->x;
        g->pause.context = b->access_context;
        g->pause.pc = b->access_pc;
        g->pause.access_addr = b->access.addr;
        g->pause.access_bytes = b->access.bytes;
        g->pause.access_write = b->access.write;
        g->pause.access_received = b->access_received;
    }
}

/* A tile the debugger follows issue by issue (slow mode). */
static inline bool slow_tile(const etile *et, bool step, uint32_t step_tile)
{
    return et->checked || et->watched || (step && et->tile_id == step_tile);
}

/* The batch with pause conditions: tiles run as usual on the host threads,
 * except checked tiles, tiles with access watches and step_tile, which run
 * in slow mode on this thread, in tile order.  The batch stays open while any tile is paused;
 * the lowest-numbered paused tile is reported. */
static enum batch_result run_batch_debug(engine *g, int threads)
{
    size_t n = g->n_runnable;
    uint32_t *list = g->runnable;
    etile *tiles = g->tiles;
    if (!g->batch_open) {
        qsort(list, n, sizeof *list, cmp_u32);
        for (size_t k = 0; k < n; k++) {
            etile *et = &tiles[list[k]];
            start_run(et);
            et->ran = false;
            et->pause = ENGINE_PAUSE_NONE;
        }
        g->batch_open = true;
        g->step_done = false;
    }
    if (n < 16 * (size_t)threads)
        threads = 1;
    bool step = g->dbg.step;
    uint32_t step_tile = g->dbg.step_tile;
#pragma omp parallel for schedule(dynamic, 8) num_threads(threads) if (threads > 1)
    for (size_t k = 0; k < n; k++) {
        etile *et = &tiles[list[k]];
        if (!et->ran && !et->pause && !slow_tile(et, step, step_tile))
            debug_run(g, et);
    }
    for (size_t k = 0; k < n; k++) {
        etile *et = &tiles[list[k]];
        if (!et->ran && !et->pause && slow_tile(et, step, step_tile)) {
            debug_run_slow(g, et);
            if (et->pause)
                break;
        }
    }
    for (size_t k = 0; k < n; k++) {
        etile *et = &tiles[list[k]];
        if (et->pause) {
            set_pause(g, (enum engine_pause_reason)et->pause, et);
            return BATCH_PAUSED;
        }
    }
    g->batch_open = false;
    if (!close_batch(g, threads, false, 0, 0))
        return BATCH_FAILED;
    if (g->step_done) {
        g->step_done = false;
        int32_t i = g->index_of[step_tile];
        set_pause(g, ENGINE_PAUSE_STEP, &tiles[i]);
        return BATCH_PAUSED_CLOSED;
    }
    return BATCH_STOPPED;
}

/* Between events of the loop: the lowest-numbered tile with exchange data
 * received into an access watch not reported yet (engine.h, ACCESS). */
static bool received_pause(engine *g)
{
    for (size_t i = 0; i < g->n_tiles && g->n_received_pending; i++) {
        etile *et = &g->tiles[i];
        etile_body *b = et->x;
        if (!b->access_pending || !b->access_received)
            continue;
        b->access_pending = false;
        g->n_received_pending--;
        /* A watch removed since the data landed reports nothing. */
        if (tmem_watch_hits(&b->t.s.mem, b->access.addr, b->access.bytes, true)) {
            set_pause(g, ENGINE_PAUSE_ACCESS, et);
            return true;
        }
    }
    return false;
}

/* A progress report when its time has come (engine_options.progress). */
static void report_progress(engine *g, uint64_t now_ps)
{
    double now = seconds_now(), every = g->opt.progress_s > 0 ? g->opt.progress_s : 1.0;
    if (g->progress_next_s == 0)
        g->progress_next_s = now + every;
    if (now < g->progress_next_s)
        return;
    g->progress_next_s = now + every;
    engine_progress p = { .supersteps = g->chips ? g->chip[0].n_supersteps : 0, .simulated_ps = now_ps,
                          .host_s = g->host_s + now - g->run_started_s };
    g->opt.progress(g->opt.progress_ctx, &p);
}

/* After an event of the loop: a superstep that ended, or check(). */
static bool event_pause(engine *g)
{
    if (g->stats.n_supersteps > g->supersteps_seen) {
        const engine_superstep *s = &g->stats.supersteps[g->supersteps_seen];
        g->supersteps_seen = g->stats.n_supersteps;
        if (g->dbg.superstep_end) {
            set_pause(g, ENGINE_PAUSE_SUPERSTEP, NULL);
            g->pause.chip = s->chip;
            g->pause.superstep = s->index;
            g->pause.cycle = s->end_cycle;
            return true;
        }
    }
    if (g->n_checked && g->dbg.check && g->dbg.check(g->dbg.check_ctx, g, UINT32_MAX)) {
        set_pause(g, ENGINE_PAUSE_CHECK, NULL);
        return true;
    }
    if (interrupted(g)) {
        set_pause(g, ENGINE_PAUSE_INTERRUPT, NULL);
        return true;
    }
    return false;
}

/* ---- deadlock report --------------------------------------------------------- */

static size_t describe_tile(const engine *g, const etile *et, char *buf, size_t n)
{
    uint32_t pc = et->x->t.s.ctx[ISA_SUPERVISOR].pc;
    char loc[300];
    where(g, et, pc, loc, sizeof loc);
    if (et->state == ET_ENDED)
        return (size_t)snprintf(buf, n, "\n    tile %u ended its program at pc 0x%x%s", et->tile_id, pc, loc);
    return (size_t)snprintf(buf, n, "\n    tile %u waits at sync %u at pc 0x%x%s", et->tile_id, et->zone, pc, loc);
}

/* One barrier that cannot complete: the tiles of [lo, hi) not waiting at a
 * sync of `zone`. */
static size_t describe_barrier(const engine *g, size_t lo, size_t hi, unsigned zone, const char *what, char *buf,
                               size_t n)
{
    size_t missing = 0, w = 0;
    for (size_t i = lo; i < hi; i++)
        missing += !(g->tiles[i].state == ET_WAITING && g->tiles[i].zone == zone);
    w += (size_t)snprintf(buf + w, n - w, "%sdeadlock: sync %u (%s) waits for %zu of %zu tiles, which cannot arrive:",
                          buf == g->message ? "" : "\n", zone, what, missing, hi - lo);
    size_t shown = 0;
    for (size_t i = lo; i < hi && w < n; i++) {
        const etile *et = &g->tiles[i];
        if (et->state == ET_WAITING && et->zone == zone)
            continue;
        if (shown++ == 8) {
            w += (size_t)snprintf(buf + w, n - w, "\n    ... and %zu more", missing - 8);
            break;
        }
        w += describe_tile(g, et, buf + w, n - w);
    }
    return w < n ? w : n;
}

static void report_deadlock(engine *g)
{
    g->status = ENGINE_DEADLOCK;
    size_t w = 0, n = sizeof g->message;
    g->message[0] = 0;
    for (uint32_t c = 0; c < g->chips && w + 1 < n; c++) {
        const chip_state *cs = &g->chip[c];
        bool waiting = false;
        for (size_t i = cs->first; i < cs->end; i++)
            waiting |= g->tiles[i].state == ET_WAITING && g->tiles[i].zone == ISA_SYNC_INTERNAL;
        if (waiting) {
            char what[32];
            snprintf(what, sizeof what, "chip %u", c);
            w += describe_barrier(g, cs->first, cs->end, ISA_SYNC_INTERNAL, what, g->message + w, n - w);
        }
    }
    bool waiting2 = false;
    for (size_t i = 0; i < g->n_tiles; i++)
        waiting2 |= g->tiles[i].state == ET_WAITING && g->tiles[i].zone == ISA_SYNC_EXTERNAL;
    if (waiting2 && w + 1 < n)
        w += describe_barrier(g, 0, g->n_tiles, ISA_SYNC_EXTERNAL, "all chips", g->message + w, n - w);
    if (w == 0) {
        /* Tiles stopped at sync 3 whose group never resolved. */
        snprintf(g->message, n, "deadlock: tiles wait at the end of an exchange phase that cannot be resolved:");
        w = strlen(g->message);
        for (size_t i = 0; i < g->n_tiles && w + 1 < n; i++)
            if (g->tiles[i].state != ET_ENDED)
                w += describe_tile(g, &g->tiles[i], g->message + w, n - w);
    }
}

/* ---- the loop ---------------------------------------------------------------- */

static int cmp_superstep(const void *a, const void *b)
{
    const engine_superstep *x = a, *y = b;
    if (x->end_ps != y->end_ps) return x->end_ps < y->end_ps ? -1 : 1;
    if (x->chip != y->chip) return x->chip < y->chip ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static void finish_stats(engine *g, int threads, double host_s)
{
    engine_stats *st = &g->stats;
    st->n_chips = g->chips;
    st->chips = calloc(g->chips, sizeof *st->chips);
    if (!st->chips)
        panic("out of host memory");
    if (st->n_supersteps)
        qsort(st->supersteps, st->n_supersteps, sizeof *st->supersteps, cmp_superstep);
    /* Every tile's statistics from its code's counts (op counts too), once:
     * the supersteps took theirs from the running totals. */
    /* A team costs more than it saves on a few tiles (and up to 1024 threads may be asked for). */
    int collect_threads = g->n_tiles < 64 ? 1 : threads;
#pragma omp parallel for schedule(dynamic, 16) num_threads(collect_threads) if (collect_threads > 1)
    for (size_t i = 0; i < g->n_tiles; i++)
        tile_collect_stats(&g->tile_state[i].t);
    for (uint32_t c = 0; c < g->chips; c++) {
        engine_chip_stats *cs = &st->chips[c];
        cs->chip = c;
        cs->tiles = (uint32_t)(g->chip[c].end - g->chip[c].first);
        cs->clock_hz = g->chip[c].hz;
        uint64_t best = 0;
        for (size_t i = g->chip[c].first; i < g->chip[c].end; i++)
            if (i == g->chip[c].first || g->tiles[i].compute_total > best) {
                best = g->tiles[i].compute_total;
                cs->busiest_tile = g->tiles[i].tile_id;
            }
    }
    for (size_t k = 0; k < st->n_supersteps; k++) {
        const engine_superstep *s = &st->supersteps[k];
        engine_chip_stats *cs = &st->chips[s->chip];
        engine_counts_add(&cs->c, &s->c);
        cs->supersteps++;
        cs->end_ps = simtime_max(cs->end_ps, s->end_ps);
    }
    for (uint32_t c = 0; c < g->chips; c++) {
        engine_chip_stats *cs = &st->chips[c];
        cs->seconds = (double)cs->c.cycles / (double)cs->clock_hz;
        cs->amp_utilisation = amp_utilisation(g, &cs->c);
        st->end_ps = simtime_max(st->end_ps, cs->end_ps);
    }
    /* A run stopped early may leave tiles stopped at a sync 3. */
    if (g->status != ENGINE_DONE)
        refresh_counts(g, 0, g->n_tiles);
    for (size_t i = 0; i < g->n_tiles; i++)
        st->instructions += g->tiles[i].instructions;
    st->host_seconds = host_s;
    st->host_threads = threads;
}

enum engine_status engine_start(engine *g, const engine_options *o)
{
    if (g->ran)
        panic("engine_run called twice on one engine");
    g->ran = true;
    g->started = true;
    g->opt = *o;
    if (!g->opt.max_cycles)
        g->opt.max_cycles = DEFAULT_MAX_CYCLES;
    /* OpenMP's default comes from OMP_NUM_THREADS, which nothing bounds:
     * a team of 100000 threads overflows libgomp's stack.  The results do
     * not depend on the number of threads. */
    int threads = o->threads > 0 ? o->threads : omp_get_max_threads();
    if (threads < 1)
        threads = 1;
    if (threads > ENGINE_MAX_HOST_THREADS)
        threads = ENGINE_MAX_HOST_THREADS;
    g->threads = threads;
    g->runnable = malloc((g->n_tiles + 1) * sizeof *g->runnable);
    if (!g->runnable) {
        g->status = ENGINE_HOST_ERROR;
        g->finished = true;
        snprintf(g->message, sizeof g->message, "out of host memory");
        return g->status;
    }
    g->xch.record_spans = o->record_trace;
    g->status = ENGINE_DONE;
    g->min_resume_ps = UINT64_MAX;
    for (size_t i = 0; i < g->n_tiles; i++) {
        g->tiles[i].group = g->chips;
        g->group_members[g->chips]++;
        make_runnable(g, i, 0);
    }
    return g->status;
}

/* The event loop (engine.h); true when it paused. */
static bool run_loop(engine *g)
{
    int threads = g->threads;
    while (g->status == ENGINE_DONE) {
        if (!g->in_events) {
            if (g->n_runnable) {
                if (!g->debugging) {
                    if (!run_batch(g, threads))
                        break;
                } else {
                    enum batch_result r = run_batch_debug(g, threads);
                    if (r == BATCH_FAILED)
                        break;
                    if (r == BATCH_PAUSED)
                        return true;
                    if (r == BATCH_PAUSED_CLOSED) {
                        g->min_resume_ps = UINT64_MAX;
                        g->in_events = true;
                        return true;
                    }
                }
            }
            g->min_resume_ps = UINT64_MAX;
            g->in_events = true;
        }
        for (;;) {
            /* Received data that hit access watches, after the event that
             * landed them, before the next. */
            if (g->n_received_pending && g->status == ENGINE_DONE && received_pause(g))
                return true;
            if (!(g->n_heap && g->heap[0].time_ps <= g->min_resume_ps && g->status == ENGINE_DONE))
                break;
            event ev = pop_event(g);
            if (ev.kind == EV_STOP)
                process_stop(g, ev.arg);
            else
                process_release(g, ev.arg);
            if (g->opt.progress)
                report_progress(g, ev.time_ps);
            if (g->debugging && g->status == ENGINE_DONE && event_pause(g))
                return true;
        }
        g->in_events = false;
        if (!g->n_runnable && !g->n_heap)
            break;
    }
    return false;
}

enum engine_status engine_continue(engine *g)
{
    if (!g->started)
        panic("engine_continue before engine_start");
    if (g->finished)
        return g->status;
    /* Go on from the last pause: the reported tile issues what it stopped
     * before; tiles parked at a cycle or by an interrupt go on too, tiles
     * at breakpoints not reported yet are reported next. */
    if (g->batch_open) {
        for (size_t k = 0; k < g->n_runnable; k++) {
            etile *et = &g->tiles[g->runnable[k]];
            /* A breakpoint deleted since it stopped the tile: go on. */
            if (et->pause == ENGINE_PAUSE_BREAKPOINT && !tile_breakpoint_at(&et->x->t, et->pause_pc))
                et->pause = ENGINE_PAUSE_NONE;
            bool reported = et->tile_id == g->pause.tile && et->pause == g->pause.reason;
            if (!et->pause || !(reported || et->pause == ENGINE_PAUSE_CYCLE || et->pause == ENGINE_PAUSE_INTERRUPT))
                continue;
            if (et->pause == ENGINE_PAUSE_BREAKPOINT)
                tile_step_over_break(&et->x->t);
            et->pause = ENGINE_PAUSE_NONE;
        }
    }
    memset(&g->pause, 0, sizeof g->pause);
    double t0 = seconds_now();
    g->run_started_s = t0;
    bool paused = run_loop(g);
    g->host_s += seconds_now() - t0;
    if (paused)
        return ENGINE_PAUSED;
    if (g->status == ENGINE_DONE) {
        for (size_t i = 0; i < g->n_tiles; i++)
            if (g->tiles[i].state != ET_ENDED) {
                report_deadlock(g);
                break;
            }
    }
    finish_stats(g, g->threads, g->host_s);
    g->finished = true;
    return g->status;
}

enum engine_status engine_run(engine *g, const engine_options *o)
{
    if (engine_start(g, o) != ENGINE_DONE)
        return g->status;
    return engine_continue(g);
}
