/*
 * run.c — `ipusim run`: load an executable, run every tile that has code
 * to the end of its program, report cycles and simulation speed.
 *
 * Tiles here run independently (a sync of zone 1 or 2 releases at once);
 * the chip-level BSP engine with exchange and barriers replaces this loop
 * when programs carry a BSP schedule.
 */
#include <cjson/cJSON.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "diag.h"
#include "executable.h"
#include "fileio.h"
#include "isa/fp16.h"
#include "tile.h"

typedef struct dump_request {
    const char *symbol;
    long count;       /* -1: from the symbol's size */
    const char *type; /* f16 f32 i32 u32 x32 u8 */
} dump_request;

static unsigned type_bytes(const char *type)
{
    if (!strcmp(type, "f16")) return 2;
    if (!strcmp(type, "u8")) return 1;
    if (!strcmp(type, "f32") || !strcmp(type, "i32") || !strcmp(type, "u32") || !strcmp(type, "x32")) return 4;
    return 0;
}

static dump_request parse_dump(const command *self, const char *spec)
{
    dump_request d = { .count = -1, .type = "x32" };
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
            char *end;
            d.count = strtol(count, &end, 0);
            if (*end || d.count <= 0)
                cli_usage_error(self, "--dump: bad count in '%s'", spec);
        }
    }
    if (!type_bytes(d.type))
        cli_usage_error(self, "--dump: unknown type in '%s' (f16, f32, i32, u32, x32, u8)", spec);
    d.symbol = copy;
    return d;
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void format_value(char *buf, size_t n, const char *type, const uint8_t *p)
{
    uint32_t u32;
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

int cmd_run(int argc, char **argv, const command *self)
{
    machine m;
    char err[1024];
    if (!machine_preset("gc200", &m, err, sizeof err))
        panic("%s", err);
    const char *input = NULL, *json = NULL;
    unsigned long long max_cycles = 10000000000ull;
    int threads = 0;
    dump_request dumps[64];
    unsigned n_dumps = 0;
    for (int i = 1; i < argc; i++) {
        if (cli_machine_option(self, &m, argc, argv, &i))
            continue;
        if (!strcmp(argv[i], "--json"))
            json = cli_value(self, argc, argv, &i);
        else if (!strcmp(argv[i], "--max-cycles")) {
            const char *v = cli_value(self, argc, argv, &i);
            char *end;
            max_cycles = strtoull(v, &end, 0);
            if (*end || max_cycles == 0)
                cli_usage_error(self, "--max-cycles: '%s' is not a positive number", v);
        } else if (!strcmp(argv[i], "--threads")) {
            const char *v = cli_value(self, argc, argv, &i);
            char *end;
            threads = (int)strtol(v, &end, 0);
            if (*end || threads <= 0 || threads > 1024)
                cli_usage_error(self, "--threads: '%s' is not a thread count (1..1024)", v);
        } else if (!strcmp(argv[i], "--dump")) {
            if (n_dumps == 64)
                fatal("run: at most 64 --dump options");
            dumps[n_dumps++] = parse_dump(self, cli_value(self, argc, argv, &i));
        } else if (argv[i][0] == '-')
            cli_usage_error(self, "unknown option '%s'", argv[i]);
        else if (!input)
            input = argv[i];
        else
            cli_usage_error(self, "unexpected argument '%s'", argv[i]);
    }
    if (!input)
        cli_usage_error(self, "%s", "no executable given");
    if (threads)
        omp_set_num_threads(threads);

    ipu_exe *e = exe_read(input, err, sizeof err);
    if (!e)
        fatal("%s", err);
    uint32_t n_tiles_machine = machine_u32(&m, MP_chips) * machine_u32(&m, MP_tiles_per_chip);
    /* Tiles that have sections, in increasing order. */
    uint32_t *ids = calloc(e->n_sections + 1, sizeof *ids);
    size_t n = 0;
    for (size_t s = 0; s < e->n_sections; s++) {
        uint32_t id = e->sections[s].tile;
        bool seen = false;
        for (size_t k = 0; k < n; k++)
            seen |= ids[k] == id;
        if (!seen)
            ids[n++] = id;
    }
    for (size_t a = 1; a < n; a++)
        for (size_t b = a; b > 0 && ids[b - 1] > ids[b]; b--) {
            uint32_t x = ids[b]; ids[b] = ids[b - 1]; ids[b - 1] = x;
        }
    if (n == 0)
        fatal("%s: the executable has no tile sections", input);
    if (ids[n - 1] >= n_tiles_machine)
        fatal("%s: tile %u is beyond the %u tiles of machine %s", input, ids[n - 1], n_tiles_machine, m.name);

    ipu_tile *tiles = calloc(n, sizeof *tiles);
    if (!tiles)
        fatal("out of host memory for %zu tiles", n);
    for (size_t k = 0; k < n; k++) {
        tile_init(&tiles[k], &m, ids[k]);
        if (!tile_load(&tiles[k], e, err, sizeof err))
            fatal("%s: %s", input, err);
    }

    double t0 = seconds_now();
    enum tile_stop *stops = calloc(n, sizeof *stops);
#pragma omp parallel for schedule(dynamic, 1)
    for (size_t k = 0; k < n; k++)
        stops[k] = tile_run_alone(&tiles[k], max_cycles);
    double host_s = seconds_now() - t0;

    int rc = 0;
    for (size_t k = 0; k < n; k++) {
        if (stops[k] == TILE_STOP_FAULT) {
            char msg[1024];
            tile_describe_fault(&tiles[k], e, msg, sizeof msg);
            fprintf(stderr, "ipusim: simulated exception: %s\n", msg);
            rc = 3;
            break;
        }
        if (stops[k] == TILE_STOP_LIMIT) {
            fprintf(stderr, "ipusim: tile %u did not finish within %llu cycles (--max-cycles)\n", tiles[k].tile_id,
                    max_cycles);
            rc = 3;
            break;
        }
    }

    uint64_t total_instr = 0, total_cycles = 0, max_tile_cycles = 0;
    double peak_f16 = machine_get(&m, MP_amp_f16_peak_macs_per_cycle);
    double peak_f32 = machine_get(&m, MP_amp_f32_peak_macs_per_cycle);
    printf("%s on %s (%zu tile%s with code, tile clock %.4g GHz)\n\n", input, m.name, n, n == 1 ? "" : "s",
           machine_get(&m, MP_tile_clock_hz) / 1e9);
    printf("%6s %12s %12s %13s %12s %9s %14s %8s\n", "tile", "cycles", "time_us", "instructions", "issues",
           "idle_%", "amp_macs", "amp_%");
    for (size_t k = 0; k < n; k++) {
        const ipu_tile *t = &tiles[k];
        uint64_t cyc = t->s.cycle;
        double amp_pct = cyc ? 100.0 * ((double)t->stats.amp_f16_macs / peak_f16 +
                                        (double)t->stats.amp_f32_macs / peak_f32) / (double)cyc : 0.0;
        if (k < 32 || k == n - 1)
            printf("%6u %12llu %12.3f %13llu %12llu %9.1f %14llu %8.1f\n", t->tile_id, (unsigned long long)cyc,
                   1e6 * machine_cycles_to_seconds(&m, cyc), (unsigned long long)t->stats.instructions,
                   (unsigned long long)t->stats.issues,
                   cyc ? 100.0 * (double)t->stats.idle_slot_cycles / (double)cyc : 0.0,
                   (unsigned long long)(t->stats.amp_f16_macs + t->stats.amp_f32_macs), amp_pct);
        else if (k == 32)
            printf("%6s\n", "...");
        total_instr += t->stats.instructions;
        total_cycles += cyc;
        if (cyc > max_tile_cycles)
            max_tile_cycles = cyc;
    }
    printf("\nsimulation: %.3f host s, %.3g tile-cycles/s, %.3g instructions/s (%d host thread%s)\n", host_s,
           host_s > 0 ? (double)total_cycles / host_s : 0.0, host_s > 0 ? (double)total_instr / host_s : 0.0,
           omp_get_max_threads(), omp_get_max_threads() == 1 ? "" : "s");

    cJSON *jdumps = json ? cJSON_CreateArray() : NULL;
    for (unsigned d = 0; d < n_dumps; d++) {
        const exe_symbol *sym = exe_find_symbol(e, dumps[d].symbol);
        if (!sym)
            fatal("--dump: no symbol '%s' in %s", dumps[d].symbol, input);
        const ipu_tile *t = NULL;
        for (size_t k = 0; k < n; k++)
            if (tiles[k].tile_id == sym->tile)
                t = &tiles[k];
        unsigned eb = type_bytes(dumps[d].type);
        long count = dumps[d].count > 0 ? dumps[d].count : (long)(sym->size / eb);
        if (count <= 0)
            count = 1;
        printf("\n%s (tile %u, 0x%x, %ld x %s):", sym->name, sym->tile, sym->addr, count, dumps[d].type);
        cJSON *vals = jdumps ? cJSON_CreateArray() : NULL;
        for (long i = 0; i < count; i++) {
            uint8_t buf[4] = {0};
            if (tmem_read_bytes(&t->s.mem, sym->addr + (uint32_t)(i * eb), buf, eb) != TMEM_OK)
                fatal("--dump %s: %ld elements of %s run past the end of tile memory", sym->name, count,
                      dumps[d].type);
            char text[64];
            format_value(text, sizeof text, dumps[d].type, buf);
            printf("%s%s", i % 8 ? " " : "\n  ", text);
            if (vals)
                cJSON_AddItemToArray(vals, cJSON_CreateString(text));
        }
        printf("\n");
        if (jdumps) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "symbol", sym->name);
            cJSON_AddNumberToObject(o, "tile", sym->tile);
            cJSON_AddStringToObject(o, "type", dumps[d].type);
            cJSON_AddItemToObject(o, "values", vals);
            cJSON_AddItemToArray(jdumps, o);
        }
    }

    if (json) {
        cJSON *root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "executable", input);
        cJSON_AddStringToObject(root, "machine", m.name);
        cJSON_AddNumberToObject(root, "tile_clock_hz", machine_get(&m, MP_tile_clock_hz));
        cJSON_AddStringToObject(root, "status", rc ? "fault" : "completed");
        cJSON_AddNumberToObject(root, "max_tile_cycles", (double)max_tile_cycles);
        cJSON_AddNumberToObject(root, "max_tile_seconds", machine_cycles_to_seconds(&m, max_tile_cycles));
        cJSON *jt = cJSON_AddArrayToObject(root, "tiles");
        for (size_t k = 0; k < n; k++) {
            const ipu_tile *t = &tiles[k];
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "tile", t->tile_id);
            cJSON_AddNumberToObject(o, "cycles", (double)t->s.cycle);
            cJSON_AddNumberToObject(o, "seconds", machine_cycles_to_seconds(&m, t->s.cycle));
            cJSON_AddNumberToObject(o, "instructions", (double)t->stats.instructions);
            cJSON_AddNumberToObject(o, "issues", (double)t->stats.issues);
            cJSON_AddNumberToObject(o, "supervisor_issues", (double)t->stats.supervisor_issues);
            cJSON_AddNumberToObject(o, "worker_issues", (double)t->stats.worker_issues);
            cJSON_AddNumberToObject(o, "idle_slot_cycles", (double)t->stats.idle_slot_cycles);
            cJSON_AddNumberToObject(o, "amp_f16_macs", (double)t->stats.amp_f16_macs);
            cJSON_AddNumberToObject(o, "amp_f32_macs", (double)t->stats.amp_f32_macs);
            cJSON_AddItemToArray(jt, o);
        }
        cJSON *sim = cJSON_AddObjectToObject(root, "simulation");
        cJSON_AddNumberToObject(sim, "host_seconds", host_s);
        cJSON_AddNumberToObject(sim, "tile_cycles_per_host_second", host_s > 0 ? (double)total_cycles / host_s : 0);
        cJSON_AddNumberToObject(sim, "instructions_per_host_second", host_s > 0 ? (double)total_instr / host_s : 0);
        cJSON_AddNumberToObject(sim, "host_threads", omp_get_max_threads());
        if (jdumps)
            cJSON_AddItemToObject(root, "dumps", jdumps);
        char *text = cJSON_Print(root);
        cJSON_Delete(root);
        if (!text || !afile_write_all(json, text, strlen(text), err, sizeof err))
            fatal("%s", text ? err : "out of memory");
        free(text);
    }

    for (size_t k = 0; k < n; k++)
        tile_free(&tiles[k]);
    free(tiles);
    free(stops);
    free(ids);
    exe_free(e);
    for (unsigned d = 0; d < n_dumps; d++)
        free((char *)dumps[d].symbol);
    return rc;
}
