/*
 * micro.c — the microbenchmark table, its runs and their results as JSON,
 * for `ipusim validate --micro` (micro.h).  Every row names a program of
 * validation/micro/, the machine it runs on, the parameters put in front
 * of it, how its figure comes out of the run, and the published figure it
 * is held against.
 */
#include "micro.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/asm/asm.h"
#include "sim/engine/engine.h"
#include "sim/program/machine.h"

typedef struct micro_bench micro_bench;

/* What a figure is computed from. */
typedef struct micro_run {
    const micro_bench *b;
    const machine *m;
    engine *g;
    const engine_stats *st;
    const ipu_exe *e;
    uint32_t tiles;                 /* TILES given to the program */
    uint32_t repeats;               /* REPEATS given (quick mode may shorten it) */
    char *err;                      /* a figure that cannot be computed says why */
    size_t err_size;
} micro_run;

typedef double (*micro_figure_fn)(const micro_run *r);

struct micro_bench {
    const char *name;
    const char *preset;
    const char *program;            /* file in the programs' directory */
    micro_figure_fn figure;
    const char *derivation;         /* how the figure comes out of the run */
    double published;
    const char *unit;
    const char *source;
    double band_pct;
    /* Program parameters, each given as .equ when non-zero. */
    bool tiles;                     /* TILES = tiles per chip */
    bool quick;                     /* quick mode: TILES = one column (tiles per chip / 16) */
    uint32_t access, repeats, quick_repeats, bytes, senders, direction;
    int32_t peer;                   /* latency rows: receiving tile (-1: the chip's last) */
};

/* ---- reading the run ------------------------------------------------------------ */

static const engine_superstep *superstep(const micro_run *r, uint32_t chip, uint32_t index)
{
    for (size_t i = 0; i < r->st->n_supersteps; i++)
        if (r->st->supersteps[i].chip == chip && r->st->supersteps[i].index == index)
            return &r->st->supersteps[i];
    snprintf(r->err, r->err_size, "the run has no superstep %u on chip %u", index, chip);
    return NULL;
}

static double clock_hz(const micro_run *r) { return machine_get(r->m, MP_tile_clock_hz); }

/* A 32-bit word the program stored at a symbol of a tile; -1 on failure. */
static double word_at(const micro_run *r, uint32_t tile, const char *name)
{
    const ipu_tile *t = engine_tile(r->g, tile);
    for (size_t i = 0; t && i < r->e->n_symbols; i++) {
        const exe_symbol *s = &r->e->symbols[i];
        uint32_t v = 0;
        if (s->tile == tile && !strcmp(s->name, name) && tmem_load32(&t->s.mem, s->addr, &v) == TMEM_OK)
            return v;
    }
    snprintf(r->err, r->err_size, "no word '%s' on tile %u", name, tile);
    return -1;
}

/* Superstep 1 of a chip less its sync: cycles, or ps. */
static double step1_cycles(const micro_run *r, uint32_t chip)
{
    const engine_superstep *s = superstep(r, chip, 1);
    return s ? (double)(s->c.cycles - s->c.sync_cycles) : -1;
}

static double step1_seconds(const micro_run *r, uint32_t chip)
{
    const engine_superstep *s = superstep(r, chip, 1);
    if (!s)
        return -1;
    return (double)(s->end_ps - s->start_ps) * 1e-12 - (double)s->c.sync_cycles / clock_hz(r);
}

/* ---- figures -------------------------------------------------------------------- */

static const uint32_t access_bytes[] = { 8, 16, 16, 24 };   /* tile_memory_bandwidth.S ACCESS */

static double fig_memory_bytes_per_cycle(const micro_run *r)
{
    double cycles = step1_cycles(r, 0);
    return cycles > 0 ? 6.0 * r->repeats * access_bytes[r->b->access] / cycles : -1;
}

static double fig_memory_tb_per_s(const micro_run *r)
{
    double per_tile = fig_memory_bytes_per_cycle(r);
    return per_tile < 0 ? -1 : per_tile * machine_get(r->m, MP_tiles_per_chip) * clock_hz(r) * 1e-12;
}

static double fig_exchange_tile_bytes_per_cycle(const micro_run *r)
{
    double cycles = step1_cycles(r, 0);
    return cycles > 0 ? 65536.0 / cycles : -1;   /* exchange_one_tile.S: 64 KiB */
}

static double fig_exchange_tb_per_s(const micro_run *r)
{
    double cycles = step1_cycles(r, 0);
    if (cycles <= 0)
        return -1;
    double chip_bytes_per_cycle = (double)r->tiles * r->b->bytes / cycles * machine_get(r->m, MP_tiles_per_chip) /
                                  r->tiles;
    return chip_bytes_per_cycle * clock_hz(r) * 1e-12;
}

/* amp_peak.S: the chip's MACs in superstep 1, 2 flops each, over its time
 * less its sync; the MACs of the tiles that ran it scaled to the chip. */
static double fig_amp_tflops(const micro_run *r)
{
    const engine_superstep *s = superstep(r, 0, 1);
    double seconds = step1_seconds(r, 0);
    if (!s || seconds <= 0)
        return -1;
    double macs = (double)(s->c.amp_f16_macs + s->c.amp_f32_macs) * machine_get(r->m, MP_tiles_per_chip) / r->tiles;
    return 2.0 * macs / seconds * 1e-12;
}

static uint32_t peer_tile(const micro_run *r)
{
    return r->b->peer < 0 ? r->tiles - 1 : (uint32_t)r->b->peer;
}

static double fig_exchange_latency_cycles(const micro_run *r)
{
    double arrived = word_at(r, peer_tile(r), "arrived"), sent = word_at(r, 0, "sent");
    return arrived < 0 || sent < 0 ? -1 : arrived - sent;
}

static double fig_sync_cycles(const micro_run *r)
{
    /* sync_cost.S: 100 supersteps of one sync instruction each, then exitz. */
    if (r->st->n_chips < 1)
        return -1;
    return (double)(r->st->chips[0].c.cycles - 1) / 100.0 - 1.0;
}

static double fig_sync_external_ns(const micro_run *r)
{
    /* sync_cost_external.S: superstep 0 is one sync 2 instruction. */
    const engine_superstep *s = superstep(r, 0, 0);
    return s ? (double)(s->end_ps - s->start_ps) * 1e-3 - 1e9 / clock_hz(r) : -1;
}

static double fig_link_latency_ns(const micro_run *r)
{
    double arrived = word_at(r, machine_u32(r->m, MP_tiles_per_chip), "arrived"), sent = word_at(r, 0, "sent");
    return arrived < 0 || sent < 0 ? -1 : (arrived - sent) / clock_hz(r) * 1e9;
}

static double fig_link_gb_per_s(const micro_run *r)
{
    double s = step1_seconds(r, 1);  /* the receiving chip's superstep */
    return s > 0 ? (double)r->st->chips[0].c.link_bytes / s * 1e-9 : -1;
}

static double fig_host_gb_per_s(const micro_run *r)
{
    double s = step1_seconds(r, 0);
    return s > 0 ? (double)r->st->chips[0].c.host_bytes / s * 1e-9 : -1;
}

/* ---- the table ------------------------------------------------------------------- */

#define ISA2 "Tile Vertex ISA 1.2.3"
#define DISS "arXiv:1912.03413"

#define MEMORY_ROW(name_, preset_, access_, figure_, derivation_, published_, unit_, source_, band_)        \
    { .name = name_, .preset = preset_, .program = "tile_memory_bandwidth.S", .figure = figure_,           \
      .derivation = derivation_, .published = published_, .unit = unit_, .source = source_, .band_pct = band_, \
      .tiles = true, .quick = true, .access = access_, .repeats = 4000, .quick_repeats = 1000 }

#define AMP_ROW(name_, preset_, access_, published_, source_)                                             \
    { .name = name_, .preset = preset_, .program = "amp_peak.S", .figure = fig_amp_tflops,                     \
      .derivation = "2 x superstep 1's AMP MACs / its time less sync (6 workers x REPEATS issues a tile)",     \
      .published = published_, .unit = "TFLOPS", .source = source_, .band_pct = 2, .tiles = true,             \
      .quick = true, .access = access_, .repeats = 4000, .quick_repeats = 1000 }

#define MEMORY_PER_TILE "6 workers x REPEATS bundles x bytes per bundle / superstep 1 cycles less sync"
#define MEMORY_AGGREGATE MEMORY_PER_TILE " x tiles per chip x tile clock"

static const micro_bench benches[] = {
    MEMORY_ROW("memory_ld64", "gc2", 0, fig_memory_bytes_per_cycle, MEMORY_PER_TILE, 8, "B/cycle/tile",
               ISA2 " 3.7.5 ld64: one 64-bit load per issue, 2.3: one issue per tile cycle", 2),
    MEMORY_ROW("memory_ld64", "gc200", 0, fig_memory_bytes_per_cycle, MEMORY_PER_TILE, 8, "B/cycle/tile",
               ISA2 " 3.7.5 ld64: one 64-bit load per issue, 2.3: one issue per tile cycle", 2),
    MEMORY_ROW("memory_ld2x64pace", "gc2", 1, fig_memory_bytes_per_cycle, MEMORY_PER_TILE, 16, "B/cycle/tile",
               ISA2 " 3.7.5 ld2x64pace: two 64-bit loads per tile cycle", 2),
    MEMORY_ROW("memory_ld2x64pace", "gc200", 1, fig_memory_bytes_per_cycle, MEMORY_PER_TILE, 16, "B/cycle/tile",
               ISA2 " 3.7.5 ld2x64pace: two 64-bit loads per tile cycle", 2),
    MEMORY_ROW("memory_ld128", "gc2", 2, fig_memory_bytes_per_cycle, MEMORY_PER_TILE, 16, "B/cycle/tile",
               ISA2 " 3.7.5 ld128: one 128-bit load per tile cycle", 2),
    MEMORY_ROW("memory_ld128", "gc200", 2, fig_memory_bytes_per_cycle, MEMORY_PER_TILE, 16, "B/cycle/tile",
               ISA2 " 3.7.5 ld128: one 128-bit load per tile cycle", 2),
    MEMORY_ROW("memory_ld2xst64pace_chip", "gc2", 3, fig_memory_tb_per_s, MEMORY_AGGREGATE, 45, "TB/s",
               DISS ", Graphcore GC2: 45 TB/s nominal aggregate memory bandwidth (2 loads + 1 store of 64 bits "
               "per tile cycle)", 5),
    MEMORY_ROW("memory_ld2xst64pace_chip", "gc200", 3, fig_memory_tb_per_s, MEMORY_AGGREGATE, 47.5, "TB/s",
               "Graphcore GC200 product brief: 47.5 TB/s memory bandwidth (2 loads + 1 store of 64 bits per tile "
               "cycle)", 5),
    AMP_ROW("amp_f16_chip", "gc2", 0, 124.5, DISS ": GC2 124.5 TFLOPS mixed precision (1216 tiles x 32 f16 MACs x 2 x 1.6 GHz)"),
    AMP_ROW("amp_f16_chip", "gc200", 0, 250, "Graphcore GC200 product brief: 250 TFLOPS f16 (1472 x 64 MACs x 2 x 1.325 GHz)"),
    AMP_ROW("amp_f16_chip", "bow", 0, 350, "Bow-2000 datasheet: 350 TFLOPS f16 a Bow IPU (1472 x 64 MACs x 2 x 1.85 GHz)"),
    AMP_ROW("amp_f32_chip", "gc2", 1, 31.1, DISS ": GC2 31.1 TFLOPS single precision (1216 x 8 f32 MACs x 2 x 1.6 GHz)"),
    AMP_ROW("amp_f32_chip", "gc200", 1, 62.5, "Graphcore GC200 product brief: 62.5 TFLOPS f32 (1472 x 16 MACs x 2 x 1.325 GHz)"),
    { .name = "exchange_one_tile", .preset = "gc2", .program = "exchange_one_tile.S",
      .figure = fig_exchange_tile_bytes_per_cycle, .derivation = "65536 B / superstep 1 cycles less sync",
      .published = 6.34e9 / 1.6e9, .unit = "B/cycle", .source = DISS " Table 4.4: 6.34 GB/s per tile at 1.6 GHz (GC2)",
      .band_pct = 5 },
    { .name = "exchange_one_tile", .preset = "gc200", .program = "exchange_one_tile.S",
      .figure = fig_exchange_tile_bytes_per_cycle, .derivation = "65536 B / superstep 1 cycles less sync",
      .published = 6.34e9 / 1.6e9, .unit = "B/cycle", .source = DISS " Table 4.4: 6.34 GB/s per tile at 1.6 GHz (GC2)",
      .band_pct = 5 },
    { .name = "exchange_all_tiles", .preset = "gc2", .program = "exchange_all_tiles.S",
      .figure = fig_exchange_tb_per_s, .derivation = "TILES x BYTES / superstep 1 cycles less sync x tile clock",
      .published = 6.34e9 * 1216 * 1e-12, .unit = "TB/s",
      .source = DISS " Table 4.4: 6.34 GB/s per tile x 1216 tiles [I]", .band_pct = 5, .tiles = true,
      .bytes = 65536 },
    { .name = "exchange_all_tiles", .preset = "gc200", .program = "exchange_all_tiles.S",
      .figure = fig_exchange_tb_per_s, .derivation = "TILES x BYTES / superstep 1 cycles less sync x tile clock",
      .published = 1472 * 4 * 1.325e9 * 1e-12, .unit = "TB/s",
      .source = "HC33, GC200 product brief: 8 TB/s all-to-all exchange (1472 x 4 B x 1.325 GHz)", .band_pct = 5,
      .tiles = true, .bytes = 65536 },
    { .name = "exchange_latency_near", .preset = "gc2", .program = "exchange_latency.S",
      .figure = fig_exchange_latency_cycles, .derivation = "arrived@1 - sent@0 (cycles recorded by the program)",
      .published = 59, .unit = "cycles", .source = DISS " Fig 4.2: 59 cycles to a neighbour (GC2)", .band_pct = 10,
      .tiles = true, .peer = 1 },
    { .name = "exchange_latency_near", .preset = "gc200", .program = "exchange_latency.S",
      .figure = fig_exchange_latency_cycles, .derivation = "arrived@1 - sent@0 (cycles recorded by the program)",
      .published = 59, .unit = "cycles", .source = DISS " Fig 4.2: 59 cycles to a neighbour (GC2)", .band_pct = 10,
      .tiles = true, .peer = 1 },
    { .name = "exchange_latency_far", .preset = "gc2", .program = "exchange_latency.S",
      .figure = fig_exchange_latency_cycles, .derivation = "arrived@last tile - sent@0 (cycles recorded by the program)",
      .published = 157, .unit = "cycles", .source = DISS " Fig 4.2: up to ~157 cycles across columns (GC2)",
      .band_pct = 10, .tiles = true, .peer = -1 },
    { .name = "exchange_latency_far", .preset = "gc200", .program = "exchange_latency.S",
      .figure = fig_exchange_latency_cycles, .derivation = "arrived@last tile - sent@0 (cycles recorded by the program)",
      .published = 157, .unit = "cycles", .source = DISS " Fig 4.2: up to ~157 cycles across columns (GC2)",
      .band_pct = 10, .tiles = true, .peer = -1 },
    { .name = "sync_internal", .preset = "gc2", .program = "sync_cost.S", .figure = fig_sync_cycles,
      .derivation = "(chip cycles - 1) / 100 supersteps - the sync instruction", .published = 90, .unit = "cycles",
      .source = "POPLIBS lib/popnn/CTCLossPlan.cpp: about 90 cycles per on-chip sync", .band_pct = 10, .tiles = true,
      .quick = true },
    { .name = "sync_internal", .preset = "gc200", .program = "sync_cost.S", .figure = fig_sync_cycles,
      .derivation = "(chip cycles - 1) / 100 supersteps - the sync instruction", .published = 90, .unit = "cycles",
      .source = "POPLIBS lib/popnn/CTCLossPlan.cpp: about 90 cycles per on-chip sync", .band_pct = 10, .tiles = true,
      .quick = true },
    { .name = "sync_external", .preset = "m2000", .program = "sync_cost_external.S", .figure = fig_sync_external_ns,
      .derivation = "superstep 0 time - the sync instruction", .published = 30, .unit = "ns",
      .source = "POPLIBS lib/poplibs_test/Util.cpp: 15 ns x hops x 2 (1 hop on a board)", .band_pct = 10 },
    { .name = "ipu_link_latency", .preset = "m2000", .program = "ipu_link.S", .figure = fig_link_latency_ns,
      .derivation = "arrived@chip 1 - sent@chip 0, 4 bytes (cycles recorded by the program) / tile clock",
      .published = 160, .unit = "ns", .source = DISS " Fig 4.4: +0.16 us per IPU-Link hop (GC2)", .band_pct = 10,
      .bytes = 4, .senders = 1 },
    { .name = "ipu_link_bandwidth", .preset = "m2000", .program = "ipu_link.S", .figure = fig_link_gb_per_s,
      .derivation = "link bytes / chip 1's superstep 1 time less sync (8 tiles x 64 KiB)", .published = 27.2,
      .unit = "GB/s",
      .source = "POPLIBS lib/poplibs_test/Util.cpp: 128 Gbit/s x 0.85 per link; 2 links per chip pair (M2K) [I]",
      .band_pct = 10, .bytes = 65536, .senders = 8 },
    { .name = "host_write", .preset = "m2000", .program = "host_bandwidth.S", .figure = fig_host_gb_per_s,
      .derivation = "host bytes / superstep 1 time less sync (16 tiles x 128 KiB to the host)", .published = 16,
      .unit = "GB/s", .source = "M2K: PCIe Gen4 x8 between gateway and IPU, 16 GB/s each way [I]", .band_pct = 10,
      .bytes = 131072, .senders = 16 },
    { .name = "host_read", .preset = "m2000", .program = "host_bandwidth.S", .figure = fig_host_gb_per_s,
      .derivation = "host bytes / superstep 1 time less sync (16 tiles x 128 KiB from the host)", .published = 16,
      .unit = "GB/s", .source = "M2K: PCIe Gen4 x8 between gateway and IPU, 16 GB/s each way [I]", .band_pct = 10,
      .bytes = 131072, .senders = 16, .direction = 1 },
    { .name = "host_write", .preset = "gc2", .program = "host_bandwidth.S", .figure = fig_host_gb_per_s,
      .derivation = "host bytes / superstep 1 time less sync (16 tiles x 128 KiB to the host)", .published = 31.5,
      .unit = "GB/s", .source = "C2 card: a PCIe Gen4 x16 link per GC2, 31.5 GB/s (Graphcore at the Dell EMC analyst summit 2019, silvertonconsulting.com) [I]",
      .band_pct = 10, .bytes = 131072, .senders = 16 },
    { .name = "host_read", .preset = "gc2", .program = "host_bandwidth.S", .figure = fig_host_gb_per_s,
      .derivation = "host bytes / superstep 1 time less sync (16 tiles x 128 KiB from the host)", .published = 31.5,
      .unit = "GB/s", .source = "C2 card: a PCIe Gen4 x16 link per GC2, 31.5 GB/s (Graphcore at the Dell EMC analyst summit 2019, silvertonconsulting.com) [I]",
      .band_pct = 10, .bytes = 131072, .senders = 16, .direction = 1 },
};

size_t micro_count(void) { return sizeof benches / sizeof benches[0]; }

/* ---- running one row ----------------------------------------------------------- */

#define QUICK_COLUMNS 16u   /* quick mode: one column of the chip (DISS: 16 columns) */

static void run_one(const micro_bench *b, const micro_options *o, micro_result *res)
{
    *res = (micro_result){ .name = b->name, .machine = b->preset, .unit = b->unit, .source = b->source,
                           .published = b->published, .band_pct = b->band_pct };
    machine m;
    char err[4096];
    if (!machine_preset(b->preset, &m, err, sizeof err)) {
        snprintf(res->message, sizeof res->message, "%.500s", err);
        return;
    }
    uint32_t chip_tiles = machine_u32(&m, MP_tiles_per_chip);
    bool quick = o->quick && b->quick;
    uint32_t tiles = quick ? chip_tiles / QUICK_COLUMNS : chip_tiles;
    uint32_t repeats = quick && b->quick_repeats ? b->quick_repeats : b->repeats;

    /* The parameters, then the program. */
    char text[1024];
    size_t len = 0;
#define EQU(name, value) (len += (size_t)snprintf(text + len, sizeof text - len, ".equ %s, %u\n", name, value))
    if (b->tiles)
        EQU("TILES", tiles);
    EQU("CHIP_TILES", chip_tiles);
    if (b->access)
        EQU("ACCESS", b->access);
    if (repeats)
        EQU("REPEATS", repeats);
    if (b->bytes)
        EQU("BYTES", b->bytes);
    if (b->senders)
        EQU("SENDERS", b->senders);
    if (b->direction)
        EQU("DIRECTION", b->direction);
#undef EQU
    snprintf(text + len, sizeof text - len, ".include \"%s\"\n", b->program);
    const char *dir = o->dir ? o->dir : MICRO_DEFAULT_DIR;
    char name[4096];
    snprintf(name, sizeof name, "%s/micro_%s_%s.S", dir, b->name, b->preset);
    asm_options aopt = { .memory_base = machine_memory_base(&m) };
    ipu_exe *e = asm_assemble_string(text, name, &aopt, err, sizeof err);
    if (!e) {
        char *nl = strchr(err, '\n');
        if (nl)
            *nl = 0;
        snprintf(res->message, sizeof res->message, "%.500s", err);
        return;
    }
    engine *g = engine_new(&m, e, err, sizeof err);
    if (!g) {
        snprintf(res->message, sizeof res->message, "%.500s", err);
        exe_free(e);
        return;
    }
    bool ok = true;
    if (b->direction == 1) {
        /* host_bandwidth.S reading: input stream t feeds tile t. */
        uint8_t *zeros = calloc(b->bytes ? b->bytes : 1, 1);
        for (uint32_t t = 0; zeros && t < b->senders && ok; t++)
            ok = engine_set_host_input(g, t, zeros, b->bytes);
        ok = ok && zeros;
        free(zeros);
        if (!ok)
            snprintf(res->message, sizeof res->message, "out of host memory for the host input streams");
    }
    if (ok) {
        engine_options eo = { .threads = o->threads };
        enum engine_status st = engine_run(g, &eo);
        if (st != ENGINE_DONE) {
            snprintf(res->message, sizeof res->message, "the run stopped: %s", engine_message(g));
            ok = false;
        }
    }
    if (ok) {
        micro_run r = { .b = b, .m = &m, .g = g, .st = engine_get_stats(g), .e = e, .tiles = tiles,
                        .repeats = repeats, .err = res->message, .err_size = sizeof res->message };
        double v = b->figure(&r);
        if (v >= 0) {
            res->ran = true;
            res->simulated = v;
            res->error_pct = 100.0 * (v - b->published) / b->published;
            res->pass = res->error_pct <= b->band_pct && res->error_pct >= -b->band_pct;
            if (quick)
                snprintf(res->message, sizeof res->message, "quick: %u tiles%s", tiles,
                         repeats != b->repeats ? ", shorter loops" : "");
        }
    }
    engine_free(g);
    exe_free(e);
}

micro_result *micro_run_all(const micro_options *o, size_t *n)
{
    *n = 0;
    micro_result *res = calloc(micro_count(), sizeof *res);
    if (!res)
        return NULL;
    for (size_t i = 0; i < micro_count(); i++)
        if (!o->filter || strstr(benches[i].name, o->filter))
            run_one(&benches[i], o, &res[(*n)++]);
    if (!*n) {
        free(res);
        return NULL;
    }
    return res;
}

/* ---- reports ---------------------------------------------------------------------- */

static const micro_bench *bench_of(const micro_result *r)
{
    for (size_t i = 0; i < micro_count(); i++)
        if (!strcmp(benches[i].name, r->name) && !strcmp(benches[i].preset, r->machine))
            return &benches[i];
    return NULL;
}

cJSON *micro_json(const micro_options *o, const micro_result *r, size_t n)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "what", "ipusim validate --micro: microbenchmarks held against published figures");
    cJSON_AddBoolToObject(root, "quick", o->quick);
    cJSON *rows = cJSON_AddArrayToObject(root, "benchmarks");
    size_t passed = 0;
    for (size_t i = 0; i < n; i++) {
        const micro_bench *b = bench_of(&r[i]);
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "name", r[i].name);
        cJSON_AddStringToObject(j, "machine", r[i].machine);
        cJSON_AddStringToObject(j, "program", b ? b->program : "");
        if (r[i].ran)
            cJSON_AddNumberToObject(j, "simulated", r[i].simulated);
        else
            cJSON_AddNullToObject(j, "simulated");
        cJSON_AddNumberToObject(j, "published", r[i].published);
        cJSON_AddStringToObject(j, "unit", r[i].unit);
        if (r[i].ran)
            cJSON_AddNumberToObject(j, "error_pct", r[i].error_pct);
        else
            cJSON_AddNullToObject(j, "error_pct");
        cJSON_AddNumberToObject(j, "band_pct", r[i].band_pct);
        cJSON_AddBoolToObject(j, "pass", r[i].pass);
        cJSON_AddStringToObject(j, "source", r[i].source);
        cJSON_AddStringToObject(j, "figure", b ? b->derivation : "");
        if (r[i].message[0])
            cJSON_AddStringToObject(j, "message", r[i].message);
        cJSON_AddItemToArray(rows, j);
        passed += r[i].pass;
    }
    cJSON_AddNumberToObject(root, "passed", (double)passed);
    cJSON_AddNumberToObject(root, "failed", (double)(n - passed));
    return root;
}
