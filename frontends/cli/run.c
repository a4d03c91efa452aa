/*
 * run.c — `ipusim run`: load an executable onto a machine, run it on the
 * system engine (sim/engine/engine.h), report cycles, the compute / exchange /
 * sync / link / host / streaming-memory breakdown per chip and superstep,
 * and the simulation speed; optionally as JSON and as a Chrome trace.
 *
 * Exit status: 0 completed, 1 the user's error (bad file, option, program
 * that does not load), 3 the program stopped on a simulated exception, a
 * deadlock or the cycle limit (the report is still printed).
 */
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "sim/base/diag.h"
#include "sim/engine/engine.h"
#include "isa/elf/executable.h"
#include "sim/base/fileio.h"
#include "isa/fp16.h"
#include "sim/engine/op_stats.h"
#include "sim/engine/phase_stats.h"
#include "sim/engine/program_io.h"
#include "sim/program/tensor_map.h"
#include "sim/base/simtime.h"

typedef struct dump_request {
    const char *symbol;
    long tile;        /* -1: the first symbol of that name */
    long count;       /* -1: from the symbol's size */
    const char *type; /* f16 f32 i32 u32 x32 u8 */
    const exe_symbol *sym; /* found in the program before the run */
    uint32_t on_tile;      /* the tile whose memory is printed */
    long n;                /* elements to print */
} dump_request;

typedef struct stream_file {
    uint32_t stream;
    char *tensor;     /* a tensor name of a compiled program, or NULL */
    const char *path;
} stream_file;

#define MAX_STREAM_FILES 64

static unsigned type_bytes(const char *type)
{
    if (!strcmp(type, "f16")) return 2;
    if (!strcmp(type, "u8")) return 1;
    if (!strcmp(type, "f32") || !strcmp(type, "i32") || !strcmp(type, "u32") || !strcmp(type, "x32")) return 4;
    return 0;
}

static dump_request parse_dump(const command *self, const char *spec)
{
    dump_request d = { .tile = -1, .count = -1, .type = "x32" };
    char *copy = strdup(spec);
    if (!copy)
        fatal("out of memory");
    char *count = strchr(copy, ':');
    if (count) {
        *count++ = 0;
        char *type = strchr(count, ':');
        if (type) {
            *type++ = 0;
            d.type = type;
        }
        if (*count) {
            uint64_t n;
            if (!cli_parse_u64(count, LONG_MAX, &n, NULL) || n == 0)
                cli_usage_error(self, "--dump: bad count in '%s'", spec);
            d.count = (long)n;
        }
    }
    char *at = strchr(copy, '@');
    if (at) {
        *at++ = 0;
        uint64_t tile;
        if (!cli_parse_u64(at, UINT32_MAX, &tile, NULL))
            cli_usage_error(self, "--dump: bad tile in '%s'", spec);
        d.tile = (long)tile;
    }
    if (!type_bytes(d.type))
        cli_usage_error(self, "--dump: unknown type in '%s' (f16, f32, i32, u32, x32, u8)", spec);
    d.symbol = copy;
    return d;
}

/* "N=FILE" (a host stream) or "NAME=FILE" (a tensor of a compiled
 * program) for --input / --output. */
static stream_file parse_stream(const command *self, const char *opt, const char *spec)
{
    stream_file s = { 0 };
    const char *end;
    const char *eq = strrchr(spec, '=');
    if (!eq || eq == spec || !eq[1]) {
        static char msg[4200];
        snprintf(msg, sizeof msg, "%s: expected STREAM=FILE or TENSOR=FILE, got '%.4000s'", opt, spec);
        cli_usage_error(self, "%s", msg);
    }
    uint64_t n;
    if (cli_parse_u64(spec, UINT64_MAX, &n, &end) && end == eq) {
        if (n > 0xffffff)
            cli_usage_error(self, "%s: the stream is out of range (0..16777215)", opt);
        s.stream = (uint32_t)n;
    } else {
        s.tensor = strndup(spec, (size_t)(eq - spec));
        if (!s.tensor)
            fatal("out of memory");
    }
    s.path = eq + 1;
    return s;
}

static void format_value(char *buf, size_t n, const char *type, const uint8_t *p)
{
    uint32_t u32 = 0;
    memcpy(&u32, p, 4 <= type_bytes(type) ? 4 : type_bytes(type));
    if (!strcmp(type, "f16")) {
        uint16_t h;
        memcpy(&h, p, 2);
        snprintf(buf, n, "%.6g", fp16_to_f32(h));
    } else if (!strcmp(type, "f32")) {
        float f;
        memcpy(&f, p, 4);
        snprintf(buf, n, "%.9g", f);
    } else if (!strcmp(type, "i32"))
        snprintf(buf, n, "%d", (int32_t)u32);
    else if (!strcmp(type, "u32"))
        snprintf(buf, n, "%u", u32);
    else if (!strcmp(type, "u8"))
        snprintf(buf, n, "%u", p[0]);
    else
        snprintf(buf, n, "0x%08x", u32);
}

static const exe_symbol *find_dump_symbol(const ipu_exe *e, const dump_request *d)
{
    if (d->tile < 0)
        return exe_find_symbol(e, d->symbol);
    for (size_t i = 0; i < e->n_symbols; i++)
        if (exe_symbol_on_tile(e, &e->symbols[i], (uint32_t)d->tile) && !strcmp(e->symbols[i].name, d->symbol))
            return &e->symbols[i];
    return NULL;
}

static double pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static const char *zone_name(uint8_t zone)
{
    return zone == 1 ? "sync 1" : zone == 2 ? "sync 2" : "end";
}

static void print_chips(const engine_stats *st)
{
    printf("%4s %6s %5s %12s %11s %9s %10s %7s %7s %7s %13s %13s %15s %10s %9s %10s %9s %10s %9s %8s\n", "chip",
           "tiles", "steps", "cycles", "time_us", "compute_%", "exchange_%", "wait_%", "sync_%", "idle_%",
           "instructions", "amp_issued_%", "exch_sent_bytes", "link_bytes", "link_us", "host_bytes", "host_us", "strm_bytes", "strm_us", "busiest");
    for (uint32_t c = 0; c < st->n_chips; c++) {
        const engine_chip_stats *cs = &st->chips[c];
        if (!cs->tiles)
            continue;
        const engine_counts *k = &cs->c;
        printf("%4u %6u %5u %12llu %11.3f %9.1f %10.1f %7.1f %7.1f %7.1f %13llu %13.2f %15llu %10llu %9.3f %10llu %9.3f "
               "%10llu %9.3f %8u\n",
               c, cs->tiles, cs->supersteps, (unsigned long long)k->cycles, cs->seconds * 1e6,
               pct(k->compute_cycles, k->cycles), pct(k->exchange_cycles, k->cycles), pct(k->wait_cycles, k->cycles),
               pct(k->sync_cycles, k->cycles), pct(k->tile_idle_cycles, k->cycles * cs->tiles),
               (unsigned long long)k->instructions, 100.0 * cs->amp_utilisation, (unsigned long long)k->exchange_bytes,
               (unsigned long long)k->link_bytes, (double)k->link_ps / 1e6, (unsigned long long)k->host_bytes,
               (double)k->host_ps / 1e6, (unsigned long long)k->stream_bytes, (double)k->stream_ps / 1e6,
               cs->busiest_tile);
    }
}

static void print_supersteps(const engine_stats *st)
{
    printf("%4s %5s %8s %12s %10s %10s %10s %8s %8s %7s %8s %12s %15s %10s %10s %10s\n", "chip", "step", "ended_by",
           "start_cycle", "cycles", "compute", "exchange", "wait", "sync", "idle_%", "busiest", "instructions",
           "exch_sent_bytes", "link_bytes", "host_bytes", "strm_bytes");
    for (size_t i = 0; i < st->n_supersteps; i++) {
        const engine_superstep *s = &st->supersteps[i];
        const engine_counts *k = &s->c;
        uint32_t tiles = st->chips[s->chip].tiles;
        printf("%4u %5u %8s %12llu %10llu %10llu %10llu %8llu %8llu %7.1f %8u %12llu %15llu %10llu %10llu %10llu\n",
               s->chip, s->index, zone_name(s->zone), (unsigned long long)s->start_cycle,
               (unsigned long long)k->cycles, (unsigned long long)k->compute_cycles,
               (unsigned long long)k->exchange_cycles, (unsigned long long)k->wait_cycles,
               (unsigned long long)k->sync_cycles, pct(k->tile_idle_cycles, k->cycles * tiles), s->busiest_tile,
               (unsigned long long)k->instructions, (unsigned long long)k->exchange_bytes,
               (unsigned long long)k->link_bytes, (unsigned long long)k->host_bytes,
               (unsigned long long)k->stream_bytes);
    }
}

static void add_counts_json(cJSON *o, const engine_counts *k, uint64_t hz)
{
    cJSON_AddNumberToObject(o, "cycles", (double)k->cycles);
    cJSON_AddNumberToObject(o, "seconds", (double)k->cycles / (double)hz);
    cJSON_AddNumberToObject(o, "compute_cycles", (double)k->compute_cycles);
    cJSON_AddNumberToObject(o, "exchange_cycles", (double)k->exchange_cycles);
    cJSON_AddNumberToObject(o, "wait_other_chips_cycles", (double)k->wait_cycles);
    cJSON_AddNumberToObject(o, "sync_cycles", (double)k->sync_cycles);
    cJSON_AddNumberToObject(o, "tile_compute_cycles", (double)k->tile_compute_cycles);
    cJSON_AddNumberToObject(o, "tile_exchange_cycles", (double)k->tile_exchange_cycles);
    cJSON_AddNumberToObject(o, "tile_idle_cycles", (double)k->tile_idle_cycles);
    cJSON_AddNumberToObject(o, "tile_sync_cycles", (double)k->tile_sync_cycles);
    cJSON_AddNumberToObject(o, "instructions", (double)k->instructions);
    cJSON_AddNumberToObject(o, "amp_f16_macs", (double)k->amp_f16_macs);
    cJSON_AddNumberToObject(o, "amp_f32_macs", (double)k->amp_f32_macs);
    cJSON_AddNumberToObject(o, "exchange_bytes", (double)k->exchange_bytes);
    cJSON_AddNumberToObject(o, "exchange_transfers", (double)k->exchange_transfers);
    cJSON_AddNumberToObject(o, "receive_conflict_cycles", (double)k->receive_conflict_cycles);
    cJSON_AddNumberToObject(o, "late_receives", (double)k->late_receives);
    cJSON_AddNumberToObject(o, "link_bytes", (double)k->link_bytes);
    cJSON_AddNumberToObject(o, "link_busy_ps", (double)k->link_ps);
    cJSON_AddNumberToObject(o, "host_bytes", (double)k->host_bytes);
    cJSON_AddNumberToObject(o, "host_busy_ps", (double)k->host_ps);
    cJSON_AddNumberToObject(o, "stream_memory_bytes", (double)k->stream_bytes);
    cJSON_AddNumberToObject(o, "stream_memory_busy_ps", (double)k->stream_ps);
}

static cJSON *stats_json(const engine *g, const engine_stats *st)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *units = cJSON_AddObjectToObject(root, "units");
    cJSON_AddStringToObject(units, "*_cycles", "tile clock cycles of the chip concerned");
    cJSON_AddStringToObject(units, "tile_*_cycles", "tile-cycles: cycles summed over the chip's tiles with code");
    cJSON_AddStringToObject(units, "*_ps", "picoseconds");
    cJSON_AddStringToObject(units, "*_seconds", "seconds of simulated time (host_seconds: of the host)");
    cJSON_AddStringToObject(units, "*_bytes", "bytes");
    cJSON_AddStringToObject(units, "*_hz", "hertz");
    cJSON_AddStringToObject(units, "amp_utilisation", "fraction of the chip's AMP peak issued (all tiles of the chip; "
                            "the MACs the AMP issued, padding and pipeline fill included)");
    cJSON_AddStringToObject(units, "amp_f16_macs", "MACs issued on the AMP (padding and pipeline fill included)");
    cJSON_AddStringToObject(units, "amp.issued_utilisation", "amp_utilisation over the chips with code, weighted by "
                            "their cycles");
    cJSON_AddStringToObject(units, "amp.model_macs", "the multiply-adds the model's matmuls and convolutions ask for, "
                            "all replicas (the executable's .ipusim.model record)");
    cJSON_AddStringToObject(units, "amp.useful_utilisation", "amp.issued_utilisation x model_macs / issued_macs: the "
                            "model's MACs as a share of the peak");
    cJSON_AddStringToObject(units, "exchange_bytes", "bytes the tiles sent onto the exchange (a broadcast counted once, "
                            "not at each receiver)");
    cJSON *chips = cJSON_AddArrayToObject(root, "chips");
    for (uint32_t c = 0; c < st->n_chips; c++) {
        const engine_chip_stats *cs = &st->chips[c];
        if (!cs->tiles)
            continue;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "chip", c);
        cJSON_AddNumberToObject(o, "tile_clock_hz", (double)cs->clock_hz);
        cJSON_AddNumberToObject(o, "tiles_with_code", cs->tiles);
        cJSON_AddNumberToObject(o, "supersteps", cs->supersteps);
        cJSON_AddNumberToObject(o, "busiest_tile", cs->busiest_tile);
        cJSON_AddNumberToObject(o, "end_ps", (double)cs->end_ps);
        add_counts_json(o, &cs->c, cs->clock_hz);
        cJSON_AddNumberToObject(o, "amp_utilisation", cs->amp_utilisation);
        cJSON_AddItemToArray(chips, o);
    }
    cJSON *steps = cJSON_AddArrayToObject(root, "supersteps");
    for (size_t i = 0; i < st->n_supersteps; i++) {
        const engine_superstep *s = &st->supersteps[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "chip", s->chip);
        cJSON_AddNumberToObject(o, "index", s->index);
        cJSON_AddStringToObject(o, "ended_by", zone_name(s->zone));
        cJSON_AddNumberToObject(o, "busiest_tile", s->busiest_tile);
        cJSON_AddNumberToObject(o, "start_cycle", (double)s->start_cycle);
        cJSON_AddNumberToObject(o, "end_cycle", (double)s->end_cycle);
        cJSON_AddNumberToObject(o, "start_ps", (double)s->start_ps);
        cJSON_AddNumberToObject(o, "end_ps", (double)s->end_ps);
        add_counts_json(o, &s->c, engine_chip_clock_hz(g, s->chip));
        cJSON_AddNumberToObject(o, "amp_utilisation", s->amp_utilisation);
        cJSON_AddItemToArray(steps, o);
    }
    return root;
}

/* What `ipusim run` was asked to do, as the command line gave it. */
typedef struct run_options {
    machine m;
    const char *input, *json, *trace;
    engine_options engine;
    bool supersteps;
    bool ops;                       /* --ops given: the ops that took longest ... */
    uint32_t ops_shown;             /* ... this many (0: all) */
    dump_request dumps[64];
    unsigned n_dumps;
    stream_file inputs[MAX_STREAM_FILES], outputs[MAX_STREAM_FILES];
    unsigned n_inputs, n_outputs;
} run_options;

/* The program loaded on the machine, and how its run ended. */
typedef struct run_program {
    ipu_exe *e;
    engine *g;
    tensor_map *tmap;               /* NULL: not a compiled program */
    model_record model;             /* zeroed: the executable has none */
    enum engine_status status;
    uint64_t max_tile_cycles;       /* of the tile that ran longest */
} run_program;

/* "--trace-tiles TILE" or "FIRST-LAST" into the engine's options. */
static void parse_trace_tiles(const command *self, const char *v, engine_options *opt)
{
    const char *end = v;
    uint64_t a = 0, b = 0;
    bool ok = cli_parse_u64(v, UINT32_MAX, &a, &end);
    b = a;
    if (ok && *end == '-')
        ok = cli_parse_u64(end + 1, UINT32_MAX, &b, &end);
    if (!ok || *end || b < a)
        cli_usage_error(self, "--trace-tiles: expected TILE or FIRST-LAST, got '%s'", v);
    opt->trace_tile_first = (uint32_t)a;
    opt->trace_tile_last = (uint32_t)b;
}

static void check_duplicates(const command *self, const run_options *o);

/* The command line into o; usage errors are fatal. */
static void parse_run_options(int argc, char **argv, const command *self, run_options *o)
{
    char err[512];
    *o = (run_options){ .engine = { .max_cycles = 10000000000ull, .trace_tile_first = 1, .trace_tile_last = 0 } };
    if (!machine_preset("gc200", &o->m, err, sizeof err))
        panic("%s", err);
    for (int i = 1; i < argc; i++) {
        if (cli_machine_option(self, &o->m, argc, argv, &i))
            continue;
        if (!strcmp(argv[i], "--json"))
            o->json = cli_value(self, argc, argv, &i);
        else if (!strcmp(argv[i], "--trace"))
            o->trace = cli_value(self, argc, argv, &i);
        else if (!strcmp(argv[i], "--trace-tiles"))
            parse_trace_tiles(self, cli_value(self, argc, argv, &i), &o->engine);
        else if (!strcmp(argv[i], "--supersteps"))
            o->supersteps = true;
        else if (!strcmp(argv[i], "--ops")) {
            const char *v = cli_value(self, argc, argv, &i), *end = v;
            uint64_t n = 0;
            if (!cli_parse_u64(v, UINT32_MAX, &n, &end) || *end)
                cli_usage_error(self, "--ops: expected a count of ops (0: all), got '%s'", v);
            o->ops = true;
            o->ops_shown = (uint32_t)n;
        }
        else if (!strcmp(argv[i], "--max-cycles"))
            o->engine.max_cycles = cli_cycles_value(self, argc, argv, &i);
        else if (!strcmp(argv[i], "--threads"))
            o->engine.threads = cli_threads_value(self, argc, argv, &i);
        else if (!strcmp(argv[i], "--dump")) {
            if (o->n_dumps == 64)
                fatal("run: at most 64 --dump options");
            o->dumps[o->n_dumps++] = parse_dump(self, cli_value(self, argc, argv, &i));
        } else if (!strcmp(argv[i], "--input") || !strcmp(argv[i], "--output")) {
            const char *opt_name = argv[i];
            bool in = opt_name[2] == 'i';
            if ((in ? o->n_inputs : o->n_outputs) == MAX_STREAM_FILES)
                fatal("run: at most %d %s options", MAX_STREAM_FILES, opt_name);
            const char *spec = cli_value(self, argc, argv, &i);
            stream_file s = parse_stream(self, opt_name, spec);
            if (in)
                o->inputs[o->n_inputs++] = s;
            else
                o->outputs[o->n_outputs++] = s;
        } else
            cli_positional(self, argv[i], &o->input);
    }
    cli_require_positional(self, o->input, "no executable given");
    o->engine.record_trace = o->trace != NULL;
    check_duplicates(self, o);
}

/* What --input k names, for messages: "a" or "3". */
static const char *stream_label(const stream_file *s, char *buf, size_t size)
{
    if (s->tensor)
        return s->tensor;
    snprintf(buf, size, "%u", s->stream);
    return buf;
}

/* Two --input options for one tensor or stream, or two outputs into one
 * file (--json, --trace, --output): usage errors. */
static void check_duplicates(const command *self, const run_options *o)
{
    char msg[8400], a[16];
    for (unsigned k = 0; k < o->n_inputs; k++)
        for (unsigned j = 0; j < k; j++) {
            const stream_file *x = &o->inputs[j], *y = &o->inputs[k];
            if (x->tensor ? y->tensor && !strcmp(x->tensor, y->tensor) : !y->tensor && x->stream == y->stream) {
                snprintf(msg, sizeof msg, "--input %.4000s: given twice (%.1000s and %.1000s)",
                         stream_label(y, a, sizeof a), x->path, y->path);
                cli_usage_error(self, "%s", msg);
            }
        }
    /* The outputs in order: --json, --trace, then each --output. */
    const char *paths[MAX_STREAM_FILES + 2];
    int which[MAX_STREAM_FILES + 2];     /* -2 --json, -1 --trace, k --output k */
    unsigned n = 0;
    if (o->json)
        which[n] = -2, paths[n++] = o->json;
    if (o->trace)
        which[n] = -1, paths[n++] = o->trace;
    for (unsigned k = 0; k < o->n_outputs; k++)
        which[n] = (int)k, paths[n++] = o->outputs[k].path;
    for (unsigned k = 0; k < n; k++)
        for (unsigned j = 0; j < k; j++) {
            if (!cli_same_output(paths[j], paths[k]))
                continue;
            char first[4100], b[16];
            if (which[j] < 0)
                snprintf(first, sizeof first, "%s", which[j] == -2 ? "--json" : "--trace");
            else
                snprintf(first, sizeof first, "--output %.4000s", stream_label(&o->outputs[which[j]], a, sizeof a));
            if (which[k] < 0)
                snprintf(msg, sizeof msg, "%.4100s and --trace write the same file '%.4000s'", first, paths[k]);
            else
                snprintf(msg, sizeof msg, "%.4100s and --output %.4000s write the same file '%.200s'", first,
                         stream_label(&o->outputs[which[k]], b, sizeof b), paths[k]);
            cli_usage_error(self, "%s", msg);
        }
}

/* A --dump request against the loaded program: its symbol, the tile, and
 * the elements to print inside the tile's memory; the symbol and count
 * into d. */
static void check_dump(const run_options *o, const run_program *p, dump_request *d)
{
    const exe_symbol *sym = find_dump_symbol(p->e, d);
    if (!sym) {
        if (d->tile >= 0)
            fatal("--dump: no symbol '%s' on tile %ld in %s", d->symbol, d->tile, o->input);
        fatal("--dump: no symbol '%s' in %s", d->symbol, o->input);
    }
    /* a symbol of every tile: the one named, else the first with code (records are by tile) */
    uint32_t on = d->tile >= 0 ? (uint32_t)d->tile : sym->tile;
    if (on == EXE_EVERY_TILE && p->e->n_tiles)
        on = p->e->tiles[0].tile;
    const ipu_tile *t = engine_tile(p->g, on);
    if (!t)
        fatal("--dump: symbol '%s' is on tile %u, which has no code", sym->name, on);
    unsigned eb = type_bytes(d->type);
    long count = d->count > 0 ? d->count : (long)(sym->size / eb);
    if (count <= 0)
        count = 1;
    const tile_memory *mem = &t->s.mem;
    uint64_t end = (uint64_t)mem->base + mem->size_bytes;
    uint64_t room = sym->addr >= mem->base && sym->addr < end ? (end - sym->addr) / eb : 0;
    if ((uint64_t)count > room)
        fatal("--dump %s: %ld elements of %s from 0x%x run past the end of tile %u's memory (0x%x-0x%llx): at "
              "most %llu", sym->name, count, d->type, sym->addr, on, mem->base, (unsigned long long)end - 1,
              (unsigned long long)room);
    d->sym = sym;
    d->on_tile = on;
    d->n = count;
}

/* Output files before any work: each can be created where it goes. */
static void check_output_paths(const run_options *o)
{
    char err[4096], label[16];
    if (o->json && !cli_check_output(o->json, err, sizeof err))
        fatal("%s", err);
    if (o->trace && !cli_check_output(o->trace, err, sizeof err))
        fatal("--trace: %s", err);
    for (unsigned k = 0; k < o->n_outputs; k++)
        if (!cli_check_output(o->outputs[k].path, err, sizeof err))
            fatal("--output %s: %s", stream_label(&o->outputs[k], label, sizeof label), err);
}

/* The names the options give, against the loaded program before it runs:
 * --input and --output tensors in its tensor map (an --output tensor still
 * in tile memory at the end), --dump symbols and the tile memory they
 * print. */
static void check_names(run_options *o, const run_program *p)
{
    for (unsigned k = 0; k < o->n_inputs; k++) {
        const char *name = o->inputs[k].tensor;
        const tmap_tensor *t = name && p->tmap ? tmap_find(p->tmap, name) : NULL;
        if (name && (!t || !(t->role & TMAP_INPUT)))
            fatal("--input %s: %s has no input tensor '%s'%s", name, o->input, name,
                  p->tmap ? "" : " (it has no tensor map: use a stream number)");
    }
    for (unsigned k = 0; k < o->n_outputs; k++) {
        const char *name = o->outputs[k].tensor;
        if (!name)
            continue;
        const tmap_tensor *t = p->tmap ? tmap_find(p->tmap, name) : NULL;
        if (!t)
            fatal("--output %s: %s has no tensor '%s'%s", name, o->input, name,
                  p->tmap ? "" : " (it has no tensor map: use a stream number)");
        if (t->role & TMAP_TRANSIENT)
            fatal("--output %s: the program gives its tile memory to later tensors after its last reader, so the "
                  "end of the run no longer holds it (stop before then in `ipusim debug` and print it)", name);
    }
    for (unsigned d = 0; d < o->n_dumps; d++)
        check_dump(o, p, &o->dumps[d]);
}

/* The executable onto the machine's tiles, with its tensor map if it has one. */
static void load_program(run_options *o, run_program *p)
{
    char err[4096];
    *p = (run_program){ 0 };
    machine *ms[] = { &o->m };
    p->e = cli_read_program(o->input, ms, 1, true);
    p->g = engine_new(&o->m, p->e, err, sizeof err);
    if (!p->g)
        fatal("%s: %s", o->input, err);
    p->tmap = program_tensor_map(p->e, o->input, err, sizeof err);
    if (!p->tmap && err[0])
        fatal("%s", err);
    if (!program_model_record(p->e, o->input, &p->model, err, sizeof err))
        fatal("%s", err);
}

/* The host streams and input tensors from the --input files; a compiled
 * program's inputs not given get synthetic values, said so. */
static void feed_inputs(const run_options *o, run_program *p)
{
    char err[4096];
    for (unsigned k = 0; k < o->n_inputs; k++) {
        const stream_file *in = &o->inputs[k];
        char *data;
        size_t size;
        const tmap_tensor *t = NULL;
        if (in->tensor) {
            t = p->tmap ? tmap_find(p->tmap, in->tensor) : NULL;
            if (!t || !(t->role & TMAP_INPUT))
                fatal("--input %s: %s has no input tensor '%s'%s", in->tensor, o->input, in->tensor,
                      p->tmap ? "" : " (it has no tensor map: use a stream number)");
        }
        /* A tensor's file holds exactly the tensor: a larger one is refused
         * from its size, a stream after one byte too many. */
        char what[300];
        if (t)
            snprintf(what, sizeof what, "tensor '%s' takes", in->tensor);
        else
            snprintf(what, sizeof what, "a host stream's input may have");
        if (!read_file_limited(in->path, t ? program_tensor_bytes(t) : READ_LIMIT_HOST_STREAM, what, READ_STREAMS,
                               &data, &size, err, sizeof err)) {
            if (in->tensor)
                fatal("--input %s: %s", in->tensor, err);
            fatal("--input %u: %s", in->stream, err);
        }
        if (t) {
            if (!program_set_input(p->g, t, data, size, err, sizeof err))
                fatal("--input %s: %s: %s", in->tensor, in->path, err);
        } else if (!engine_set_host_input(p->g, in->stream, data, size)) {
            fatal("out of host memory for host input stream %u", in->stream);
        }
        free(data);
    }
    if (p->tmap) {
        const char *given[MAX_STREAM_FILES];
        for (unsigned k = 0; k < o->n_inputs; k++)
            given[k] = o->inputs[k].tensor;
        if (!program_fill_inputs(p->g, p->tmap, given, o->n_inputs, stderr, "ipusim: ", err, sizeof err))
            fatal("%s", err);
    }
}

/* The progress of a run on a terminal: chip 0's supersteps (of the
 * program's, from its op map), its cycles and simulated time, host time
 * and, knowing the supersteps, an estimate of the host time left. */
typedef struct run_progress {
    uint32_t supersteps;            /* the program's on a chip (0: not known) */
    double hz;                      /* chip 0's clock */
    bool shown;
} run_progress;

static void show_progress(void *ctx, const engine_progress *p)
{
    run_progress *r = ctx;
    char of[32] = "", left[48] = "";
    if (r->supersteps > p->supersteps) {
        snprintf(of, sizeof of, " of %u", r->supersteps);
        if (p->supersteps)
            snprintf(left, sizeof left, ", about %.0f s left",
                     p->host_s * (double)(r->supersteps - p->supersteps) / p->supersteps);
    }
    fprintf(stderr, "\r\033[Kipusim: superstep %u%s, %.4g M cycles (%.4g ms simulated), %.1f host s%s", p->supersteps,
            of, (double)p->simulated_ps * r->hz / 1e18, (double)p->simulated_ps / 1e9, p->host_s, left);
    fflush(stderr);
    r->shown = true;
}

/* Run the system to its end; the exit status: 0 completed, 3 a simulated
 * exception, deadlock or the cycle limit, 1 a host error.  On a terminal,
 * stderr shows the run's progress every second (nothing otherwise). */
static int run_system(const run_options *o, run_program *p)
{
    engine_options eo = o->engine;
    run_progress rp = { .hz = machine_get(&o->m, MP_tile_clock_hz) };
    if (isatty(STDERR_FILENO)) {
        op_map m;
        char err[256];
        if (op_stats_read(p->e, &m, err, sizeof err))
            rp.supersteps = m.n_supersteps;
        op_map_free(&m);
        eo.progress = show_progress;
        eo.progress_ctx = &rp;
    }
    p->status = engine_run(p->g, &eo);
    if (rp.shown)
        fprintf(stderr, "\r\033[K");
    if (p->status == ENGINE_FAULT) {
        fprintf(stderr, "ipusim: simulated exception: %s\n", engine_message(p->g));
        return 3;
    }
    if (p->status != ENGINE_DONE) {
        fprintf(stderr, "ipusim: %s\n", engine_message(p->g));
        return p->status == ENGINE_HOST_ERROR ? 1 : 3;
    }
    return 0;
}

/* The report on stdout: the machine, per tile (up to 32 tiles), per chip,
 * per superstep (up to 16, or all with --supersteps), and the simulation
 * speed.  Notes the longest tile's cycles in p. */
/* A training step's phases (sim/program/phases.h) on chip 0: cycles and
 * their compute / exchange / sync / wait split. */
static void print_phases(const run_program *p, const engine_stats *st, uint32_t domains)
{
    program_phases ph;
    char err[256];
    if (!phase_stats_read(p->e, &ph, err, sizeof err) || !ph.n)
        return;
    phase_totals tot[PHASES_MAX];
    phase_stats_sum(st, &ph, 0, tot);
    uint64_t all = st->chips[0].c.cycles;
    printf("\n%-9s %12s %7s %12s %12s %10s %10s %10s %9s\n", "phase", "cycles", "%", "compute", "exchange", "sync",
           "wait", "supersteps", "stretches");
    for (uint32_t i = 0; i < ph.n; i++) {
        const engine_counts *k = &tot[i].c;
        printf("%-9s %12llu %7.1f %12llu %12llu %10llu %10llu %10u %9u\n", tot[i].name, (unsigned long long)k->cycles,
               pct(k->cycles, all), (unsigned long long)k->compute_cycles, (unsigned long long)k->exchange_cycles,
               (unsigned long long)k->sync_cycles, (unsigned long long)k->wait_cycles, tot[i].supersteps,
               tot[i].stretches);
    }
    if (ph.samples) {
        /* the step ends when the chip that ends last does */
        double step_s = (double)st->end_ps * 1e-12;
        printf("samples: %llu a step (all replicas), %.4g samples/s%s\n", (unsigned long long)ph.samples,
               step_s > 0 ? (double)ph.samples / step_s : 0.0,
               engine_chips_used(st) < 2                ? ""
               : phase_stats_find(&ph, "all-reduce") >= 0 ? " (the replicas' gradients summed across their chips: "
                                                            "the all-reduce phase)"
                                                          : " (each chip's replica steps alone: this program has no "
                                                            "gradient all-reduce)");
        if (domains > 1)
            printf("  (one of the machine's %u IPU-Link domains, which run it alike: compare estimates the whole "
                   "system, the all-reduce across the domains over the GW-Links modelled)\n", domains);
    }
}

/* Each op's totals on chip 0, or with a pipeline on the chips of replica
 * 0's stages (each its own ops) together, into t; returns those chips'
 * cycles together. */
static uint64_t ops_of_replica0(const engine_stats *st, const op_map *m, op_totals *t)
{
    uint32_t chips = m->n_stages > 1 ? m->n_stages : 1;
    uint64_t all = 0;
    op_stats_sum(st, m, 0, chips, t);
    for (uint32_t c = 0; c < chips && c < st->n_chips; c++)
        all += st->chips[c].c.cycles;
    return all;
}

/* The ops that took longest on chip 0, or a pipeline's chips
 * (sim/engine/op_stats.h), `shown` of them (0: all), then the time by op
 * type. */
static void print_ops(const run_program *p, const engine_stats *st, uint32_t shown)
{
    op_map m;
    char err[256];
    if (!op_stats_read(p->e, &m, err, sizeof err))
        return;                       /* (refused before the run) */
    if (!m.n_ops) {
        printf("\nops: the executable names none (an assembled program, or compiled before ops were recorded)\n");
        return;
    }
    op_totals *t = calloc((size_t)m.n_ops + 1, sizeof *t);
    if (!t) {
        op_map_free(&m);
        return;
    }
    uint64_t all = ops_of_replica0(st, &m, t);
    op_stats_sort(t, (size_t)m.n_ops + 1);
    uint32_t n = shown && shown < m.n_ops + 1 ? shown : m.n_ops + 1;
    if (m.n_stages > 1)
        printf("\nops on chips 0-%u (a pipeline's stages, each chip's cycles given to its own ops), the %u that took "
               "longest of %u (a superstep's compute is the op whose compute set ran first in it, its exchange, sync "
               "and wait the op whose operands it brought; %% of the chips' cycles together):\n", m.n_stages - 1, n,
               m.n_ops);
    else
        printf("\nops on chip 0, the %u that took longest of %u (a superstep's compute is the op whose compute set "
               "ran first in it, its exchange, sync and wait the op whose operands it brought):\n", n, m.n_ops);
    printf("%-44s %-20s %12s %7s %12s %12s %10s %10s\n", "op", "type", "cycles", "%", "compute", "exchange",
           "sync+wait", "supersteps");
    for (uint32_t i = 0; i < n; i++) {
        const op_totals *o = &t[i];
        const char *name = o->op >= 0      ? m.ops[o->op].name
                           : m.n_stages > 1 ? "(no op: inputs, outputs, a stage's waits in its cycles)"
                                            : "(no op: inputs, outputs, the step's end)";
        printf("%-44.44s %-20.20s %12llu %7.1f %12llu %12llu %10llu %10u\n", name, o->op < 0 ? "-" : m.ops[o->op].type,
               (unsigned long long)o->cycles, pct(o->cycles, all), (unsigned long long)o->compute_cycles,
               (unsigned long long)o->exchange_cycles, (unsigned long long)o->sync_cycles, o->supersteps);
    }
    /* by type: each type's ops summed, the most first */
    op_totals *ty = calloc((size_t)m.n_ops + 1, sizeof *ty);
    uint32_t n_types = 0, *count = calloc((size_t)m.n_ops + 1, sizeof *count);
    for (uint32_t i = 0; ty && count && i <= m.n_ops; i++) {
        if (t[i].op < 0)
            continue;
        uint32_t k = 0;
        while (k < n_types && strcmp(m.ops[ty[k].op].type, m.ops[t[i].op].type))
            k++;
        if (k == n_types)
            ty[n_types++] = (op_totals){ .op = t[i].op };
        ty[k].cycles += t[i].cycles;
        count[ty[k].op]++;
    }
    if (ty && count) {
        op_stats_sort(ty, n_types);
        printf("by type:");
        for (uint32_t k = 0; k < n_types && ty[k].cycles; k++)
            printf("%s %s %.1f%% (%u)", k ? "," : "", m.ops[ty[k].op].type, pct(ty[k].cycles, all), count[ty[k].op]);
    }
    free(ty);
    free(count);
    printf("\n");
    free(t);
    op_map_free(&m);
}

/* The per-op totals of chip 0 as a JSON array, the longest first (NULL
 * when the executable names no ops). */
static cJSON *ops_json(const run_program *p, const engine_stats *st)
{
    op_map m;
    char err[256];
    if (!op_stats_read(p->e, &m, err, sizeof err) || !m.n_ops)
        return NULL;
    op_totals *t = calloc((size_t)m.n_ops + 1, sizeof *t);
    cJSON *a = t ? cJSON_CreateArray() : NULL;
    if (a) {
        ops_of_replica0(st, &m, t);
        op_stats_sort(t, (size_t)m.n_ops + 1);
        for (uint32_t i = 0; i <= m.n_ops; i++) {
            if (!t[i].cycles)
                continue;
            cJSON *o = cJSON_CreateObject();
            if (t[i].op >= 0) {
                cJSON_AddStringToObject(o, "op", m.ops[t[i].op].name);
                cJSON_AddStringToObject(o, "type", m.ops[t[i].op].type);
            } else {
                cJSON_AddNullToObject(o, "op");
            }
            cJSON_AddNumberToObject(o, "cycles", (double)t[i].cycles);
            cJSON_AddNumberToObject(o, "compute_cycles", (double)t[i].compute_cycles);
            cJSON_AddNumberToObject(o, "exchange_cycles", (double)t[i].exchange_cycles);
            cJSON_AddNumberToObject(o, "sync_cycles", (double)t[i].sync_cycles);
            cJSON_AddNumberToObject(o, "supersteps", t[i].supersteps);
            cJSON_AddItemToArray(a, o);
        }
    }
    free(t);
    op_map_free(&m);
    return a;
}

/* The AMP over the run: what it issued, and against the model's own MACs
 * when the executable records them. */
static void print_amp(const run_program *p, const engine_stats *st)
{
    engine_amp_summary a = engine_amp_totals(p->g, st, p->model.model_macs);
    if (!a.issued_macs && !a.model_macs)
        return;
    printf("\nAMP: %.4g MACs issued, %.2f%% of the peak", (double)a.issued_macs, 100 * a.issued_utilisation);
    if (a.model_macs && a.issued_macs)
        printf("; %s asks for %.4g (its matmuls and convolutions): useful %.2f%% of the peak, %.2f MACs issued "
               "for each (K and N padded to the AMP's weight blocks and output groups, pipeline fill)",
               p->model.model, (double)a.model_macs, 100 * a.useful_utilisation, a.issued_per_model_mac);
    else if (a.model_macs)
        printf("; %s asks for %.4g MACs, none issued on the AMP", p->model.model, (double)a.model_macs);
    printf("\n");
}

static void print_report(const run_options *o, run_program *p)
{
    const machine *m = &o->m;
    const engine_stats *st = engine_get_stats(p->g);
    size_t n = engine_tile_count(p->g);
    uint32_t chips_used = engine_chips_used(st);
    printf("%s on %s (%u chip%s x %u tiles, tile clock %.4g GHz; %zu tile%s with code on %u chip%s)\n\n", o->input,
           m->name, st->n_chips, st->n_chips == 1 ? "" : "s", machine_u32(m, MP_tiles_per_chip),
           machine_get(m, MP_tile_clock_hz) / 1e9, n, n == 1 ? "" : "s", chips_used, chips_used == 1 ? "" : "s");

    if (n <= 32) {
        printf("%6s %12s %12s %13s %12s %9s %16s %13s\n", "tile", "cycles", "time_us", "instructions", "issues",
               "idle_%", "amp_issued_macs", "amp_issued_%");
    }
    double peak_f16 = machine_get(m, MP_amp_f16_peak_macs_per_cycle);
    double peak_f32 = machine_get(m, MP_amp_f32_peak_macs_per_cycle);
    for (size_t k = 0; k < n; k++) {
        const ipu_tile *t = engine_tile_at(p->g, k);
        uint64_t cyc = t->s.cycle;
        uint64_t hz = engine_chip_clock_hz(p->g, t->tile_id / machine_u32(m, MP_tiles_per_chip));
        if (cyc > p->max_tile_cycles)
            p->max_tile_cycles = cyc;
        if (n > 32)
            continue;
        double amp_pct = cyc ? 100.0 * ((double)t->stats.amp_f16_macs / peak_f16 +
                                        (double)t->stats.amp_f32_macs / peak_f32) / (double)cyc : 0.0;
        printf("%6u %12llu %12.3f %13llu %12llu %9.1f %16llu %13.1f\n", t->tile_id, (unsigned long long)cyc,
               1e6 * (double)cyc / (double)hz, (unsigned long long)t->stats.instructions,
               (unsigned long long)t->stats.issues, cyc ? 100.0 * (double)t->stats.idle_slot_cycles / (double)cyc : 0.0,
               (unsigned long long)(t->stats.amp_f16_macs + t->stats.amp_f32_macs), amp_pct);
    }
    if (n <= 32)
        printf("\n");
    print_chips(st);
    print_amp(p, st);
    if (o->supersteps || st->n_supersteps <= 16) {
        printf("\n");
        print_supersteps(st);
    }
    print_phases(p, st, machine_u32(&o->m, MP_ipu_link_domains));
    if (o->ops)
        print_ops(p, st, o->ops_shown);
    double host_s = st->host_seconds;
    printf("\nsimulation: %.3f host s, %.3g tile-cycles/s, %.3g instructions/s (%d host thread%s, %llu of %llu "
           "tile batches in parallel); simulated %.6g s\n",
           host_s, host_s > 0 ? (double)st->tile_cycles / host_s : 0.0,
           host_s > 0 ? (double)st->instructions / host_s : 0.0, st->host_threads, st->host_threads == 1 ? "" : "s",
           (unsigned long long)st->parallel_batches, (unsigned long long)st->batches, (double)st->end_ps / 1e12);
}

/* The --dump requests: tile memory at each symbol, printed; with json, also
 * returned as a JSON array (else NULL). */
static cJSON *print_dumps(const run_options *o, const run_program *p, bool json)
{
    cJSON *jdumps = json ? cJSON_CreateArray() : NULL;
    for (unsigned d = 0; d < o->n_dumps; d++) {
        const dump_request *dr = &o->dumps[d];
        const exe_symbol *sym = dr->sym;
        const ipu_tile *t = engine_tile(p->g, dr->on_tile);
        unsigned eb = type_bytes(dr->type);
        long count = dr->n;
        printf("\n%s (tile %u, 0x%x, %ld x %s):", sym->name, dr->on_tile, sym->addr, count, dr->type);
        cJSON *vals = jdumps ? cJSON_CreateArray() : NULL;
        for (long i = 0; i < count; i++) {
            uint8_t buf[4] = {0};
            if (tmem_read_bytes(&t->s.mem, sym->addr + (uint32_t)(i * eb), buf, eb) != TMEM_OK)
                fatal("--dump %s: %ld elements of %s run past the end of tile memory", sym->name, count, dr->type);
            char text[64];
            format_value(text, sizeof text, dr->type, buf);
            printf("%s%s", i % 8 ? " " : "\n  ", text);
            if (vals)
                cJSON_AddItemToArray(vals, cJSON_CreateString(text));
        }
        printf("\n");
        if (jdumps) {
            cJSON *j = cJSON_CreateObject();
            cJSON_AddStringToObject(j, "symbol", sym->name);
            cJSON_AddNumberToObject(j, "tile", dr->on_tile);
            cJSON_AddStringToObject(j, "type", dr->type);
            cJSON_AddItemToObject(j, "values", vals);
            cJSON_AddItemToArray(jdumps, j);
        }
    }
    return jdumps;
}

/* The --output files: a tensor of a compiled program (its output stream
 * when the run completed, else tile memory), or what the program sent to a
 * host stream. */
static void write_outputs(const run_options *o, const run_program *p)
{
    char err[4096];
    for (unsigned k = 0; k < o->n_outputs; k++) {
        const stream_file *out = &o->outputs[k];
        if (out->tensor) {
            const tmap_tensor *t = p->tmap ? tmap_find(p->tmap, out->tensor) : NULL;
            if (!t)
                fatal("--output %s: %s has no tensor '%s'", out->tensor, o->input, out->tensor);
            uint64_t bytes = program_tensor_bytes(t);
            void *data = malloc(bytes ? bytes : 1);
            if (!data)
                fatal("out of host memory for '%s'", t->name);
            bool ok = (t->role & TMAP_OUTPUT) && p->status == ENGINE_DONE
                          ? program_read_output(p->g, t, data, err, sizeof err)
                          : program_read_tensor(p->g, t, data, err, sizeof err);
            if (!ok)
                fatal("--output %s: %s", out->tensor, err);
            if (!afile_write_all(out->path, data, bytes, err, sizeof err))
                fatal("--output %s: %s", out->tensor, err);
            free(data);
            continue;
        }
        size_t size = 0;
        const uint8_t *data = engine_host_output(p->g, out->stream, &size);
        if (!data && p->status == ENGINE_DONE)
            warning("--output %u: the program sent nothing to host stream %u; writing an empty file",
                    out->stream, out->stream);
        if (!afile_write_all(out->path, data ? data : (const uint8_t *)"", size, err, sizeof err))
            fatal("--output %u: %s", out->stream, err);
    }
}

/* Per-tile figures for the JSON report. */
static cJSON *tiles_json(const machine *m, const engine *g)
{
    cJSON *jt = cJSON_CreateArray();
    for (size_t k = 0; k < engine_tile_count(g); k++) {
        const ipu_tile *t = engine_tile_at(g, k);
        uint64_t hz = engine_chip_clock_hz(g, t->tile_id / machine_u32(m, MP_tiles_per_chip));
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "tile", t->tile_id);
        cJSON_AddNumberToObject(o, "cycles", (double)t->s.cycle);
        cJSON_AddNumberToObject(o, "seconds", (double)t->s.cycle / (double)hz);
        cJSON_AddNumberToObject(o, "instructions", (double)t->stats.instructions);
        cJSON_AddNumberToObject(o, "issues", (double)t->stats.issues);
        cJSON_AddNumberToObject(o, "supervisor_issues", (double)t->stats.supervisor_issues);
        cJSON_AddNumberToObject(o, "worker_issues", (double)t->stats.worker_issues);
        cJSON_AddNumberToObject(o, "idle_slot_cycles", (double)t->stats.idle_slot_cycles);
        cJSON_AddNumberToObject(o, "exchange_stall_cycles", (double)t->stats.exchange_stall_cycles);
        cJSON_AddNumberToObject(o, "syncs", (double)t->stats.syncs);
        cJSON_AddNumberToObject(o, "amp_f16_macs", (double)t->stats.amp_f16_macs);
        cJSON_AddNumberToObject(o, "amp_f32_macs", (double)t->stats.amp_f32_macs);
        cJSON_AddItemToArray(jt, o);
    }
    return jt;
}

/* The --json report: the run's statistics, per tile, the simulation speed
 * and the dumps (jdumps, consumed). */
static void write_json_report(const run_options *o, const run_program *p, cJSON *jdumps)
{
    const machine *m = &o->m;
    const engine_stats *st = engine_get_stats(p->g);
    enum engine_status status = p->status;
    char err[4096];
    cJSON *root = stats_json(p->g, st);
    engine_amp_summary amp = engine_amp_totals(p->g, st, p->model.model_macs);
    cJSON *ja = cJSON_AddObjectToObject(root, "amp");
    cJSON_AddNumberToObject(ja, "issued_macs", (double)amp.issued_macs);
    cJSON_AddNumberToObject(ja, "issued_utilisation", amp.issued_utilisation);
    if (p->model.model[0]) {
        cJSON_AddStringToObject(ja, "model", p->model.model);
        cJSON_AddNumberToObject(ja, "model_macs", (double)amp.model_macs);
        cJSON_AddNumberToObject(ja, "useful_utilisation", amp.useful_utilisation);
    }
    cJSON_AddStringToObject(root, "executable", o->input);
    cJSON_AddStringToObject(root, "machine", m->name);
    cJSON_AddNumberToObject(root, "system_chips", st->n_chips);
    cJSON_AddNumberToObject(root, "tiles_per_chip", machine_u32(m, MP_tiles_per_chip));
    cJSON_AddNumberToObject(root, "tile_clock_hz", machine_get(m, MP_tile_clock_hz));
    cJSON_AddStringToObject(root, "status", status == ENGINE_DONE ? "completed"
                                            : status == ENGINE_FAULT ? "fault"
                                            : status == ENGINE_DEADLOCK ? "deadlock"
                                            : status == ENGINE_LIMIT ? "cycle limit" : "host error");
    cJSON_AddStringToObject(root, "message", engine_message(p->g));
    cJSON_AddNumberToObject(root, "end_ps", (double)st->end_ps);
    cJSON_AddNumberToObject(root, "end_seconds", (double)st->end_ps / 1e12);
    cJSON_AddNumberToObject(root, "max_tile_cycles", (double)p->max_tile_cycles);
    cJSON_AddNumberToObject(root, "max_tile_seconds", machine_cycles_to_seconds(m, p->max_tile_cycles));
    cJSON_AddItemToObject(root, "tiles", tiles_json(m, p->g));
    double host_s = st->host_seconds;
    cJSON *sim = cJSON_AddObjectToObject(root, "simulation");
    cJSON_AddNumberToObject(sim, "host_seconds", host_s);
    cJSON_AddNumberToObject(sim, "tile_cycles", (double)st->tile_cycles);
    cJSON_AddNumberToObject(sim, "instructions", (double)st->instructions);
    cJSON_AddNumberToObject(sim, "tile_cycles_per_host_second", host_s > 0 ? (double)st->tile_cycles / host_s : 0);
    cJSON_AddNumberToObject(sim, "instructions_per_host_second", host_s > 0 ? (double)st->instructions / host_s : 0);
    cJSON_AddNumberToObject(sim, "host_threads", st->host_threads);
    cJSON_AddNumberToObject(sim, "tile_batches", (double)st->batches);
    cJSON_AddNumberToObject(sim, "tile_batches_in_parallel", (double)st->parallel_batches);
    cJSON *jops = ops_json(p, st);
    if (jops)
        cJSON_AddItemToObject(root, "ops", jops);
    if (jdumps)
        cJSON_AddItemToObject(root, "dumps", jdumps);
    if (!cli_write_json(o->json, root, err, sizeof err))
        fatal("%s", err);
}

int cmd_run(int argc, char **argv, const command *self)
{
    char err[4096];
    run_options o;
    parse_run_options(argc, argv, self, &o);
    check_output_paths(&o);
    run_program p;
    load_program(&o, &p);
    check_names(&o, &p);
    if (o.ops || o.json) {
        /* its op map read before the run: a damaged one refused now */
        op_map m;
        if (!op_stats_read(p.e, &m, err, sizeof err))
            fatal("%s: section .ipusim.ops: %s", o.input, err);
        op_map_free(&m);
    }
    feed_inputs(&o, &p);
    int rc = run_system(&o, &p);
    print_report(&o, &p);
    cJSON *jdumps = print_dumps(&o, &p, o.json != NULL);
    write_outputs(&o, &p);
    if (o.trace && !engine_write_trace(p.g, o.trace, err, sizeof err))
        fatal("--trace: %s", err);
    if (o.json)
        write_json_report(&o, &p, jdumps);

    engine_free(p.g);
    exe_free(p.e);
    for (unsigned d = 0; d < o.n_dumps; d++)
        free((char *)o.dumps[d].symbol);
    for (unsigned k = 0; k < o.n_inputs; k++)
        free(o.inputs[k].tensor);
    for (unsigned k = 0; k < o.n_outputs; k++)
        free(o.outputs[k].tensor);
    tmap_free(p.tmap);
    return rc;
}
