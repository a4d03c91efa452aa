/*
 * bench.c — `ipusim bench`: how fast the simulator runs, measured on
 * programs, not in tests.  Figures are simulated instructions and tile
 * cycles per host second for the interpreter on one tile.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "diag.h"
#include "executable.h"
#include "fileio.h"
#include "isa/asm.h"
#include "tile.h"

typedef struct bench_program {
    const char *name;
    const char *source;      /* under the source tree */
    const char *description;
} bench_program;

static const bench_program programs[] = {
    { "int_loop", "workloads/kernels/bench_int_loop.S", "integer loop, 6 workers" },
    { "amp_matmul", "workloads/kernels/bench_amp_matmul.S", "AMP f16 matmul inner loop, 6 workers" },
};

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct bench_result {
    double host_seconds;
    uint64_t instructions, cycles, runs;
} bench_result;

static bool run_program(const bench_program *p, const machine *m, double min_seconds, bench_result *r,
                        char *err, size_t err_size)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", IPUSIM_SOURCE_DIR, p->source);
    asm_options opt = { 0 };
    ipu_exe *e = asm_assemble_file(path, &opt, err, err_size);
    if (!e)
        return false;
    memset(r, 0, sizeof *r);
    bool ok = true;
    while (ok && r->host_seconds < min_seconds) {
        ipu_tile t;
        tile_init(&t, m, 0);
        if (!tile_load(&t, e, err, err_size)) {
            ok = false;
        } else {
            double t0 = seconds_now();
            enum tile_stop stop = tile_run_alone(&t, UINT64_MAX);
            r->host_seconds += seconds_now() - t0;
            if (stop != TILE_STOP_END) {
                char msg[512];
                tile_describe_fault(&t, e, msg, sizeof msg);
                snprintf(err, err_size, "%s: did not run to its end: %s", p->source, msg);
                ok = false;
            }
            r->instructions += t.stats.instructions;
            r->cycles += t.s.cycle;
            r->runs++;
        }
        tile_free(&t);
    }
    exe_free(e);
    return ok;
}

int cmd_bench(int argc, char **argv, const command *self)
{
    double seconds = 2.0;
    const char *json = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seconds")) {
            const char *v = cli_value(self, argc, argv, &i);
            char *end;
            seconds = strtod(v, &end);
            if (*end || !(seconds > 0 && seconds <= 3600))
                cli_usage_error(self, "--seconds: '%s' is not a duration in seconds (0..3600]", v);
        } else if (!strcmp(argv[i], "--json"))
            json = cli_value(self, argc, argv, &i);
        else
            cli_usage_error(self, "unknown argument '%s'", argv[i]);
    }
    machine m;
    char err[1024];
    if (!machine_preset("gc200", &m, err, sizeof err))
        panic("%s", err);
    printf("ipusim bench: one %s tile, one host thread, about %.3g host s per program\n\n", m.name, seconds);
    printf("%-12s %-40s %14s %14s %18s %18s\n", "program", "description", "instructions", "tile_cycles",
           "instructions/s", "tile_cycles/s");
    cJSON *root = json ? cJSON_CreateObject() : NULL;
    cJSON *arr = root ? cJSON_AddArrayToObject(root, "programs") : NULL;
    int rc = 0;
    for (size_t k = 0; k < sizeof programs / sizeof programs[0]; k++) {
        bench_result r;
        if (!run_program(&programs[k], &m, seconds, &r, err, sizeof err)) {
            fprintf(stderr, "ipusim bench: %s\n", err);
            rc = 1;
            continue;
        }
        double ips = (double)r.instructions / r.host_seconds, cps = (double)r.cycles / r.host_seconds;
        printf("%-12s %-40s %14llu %14llu %18.4g %18.4g\n", programs[k].name, programs[k].description,
               (unsigned long long)(r.instructions / r.runs), (unsigned long long)(r.cycles / r.runs), ips, cps);
        if (arr) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "program", programs[k].name);
            cJSON_AddNumberToObject(o, "instructions_per_run", (double)(r.instructions / r.runs));
            cJSON_AddNumberToObject(o, "tile_cycles_per_run", (double)(r.cycles / r.runs));
            cJSON_AddNumberToObject(o, "instructions_per_host_second", ips);
            cJSON_AddNumberToObject(o, "tile_cycles_per_host_second", cps);
            cJSON_AddItemToArray(arr, o);
        }
    }
    if (root) {
        char *text = cJSON_Print(root);
        cJSON_Delete(root);
        if (!text || !afile_write_all(json, text, strlen(text), err, sizeof err))
            fatal("%s", text ? err : "out of memory");
        free(text);
    }
    return rc;
}
