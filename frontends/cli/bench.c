/*
 * bench.c — `ipusim bench`: how fast the simulator runs, measured on
 * programs, not in tests.  Figures are simulated instructions and tile
 * cycles per host second for the interpreter on one tile, then for the
 * system engine (sim/engine/engine.h) on a whole chip: a BSP program (six workers
 * compute, a ring exchange, sync 1) on 92, 368 and 1472 tiles with one and
 * two host threads, to show how the host time scales with tiles and
 * threads.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_record.h"
#include "commands.h"
#include "sim/base/diag.h"
#include "sim/engine/engine.h"
#include "isa/elf/executable.h"
#include "sim/base/fileio.h"
#include "frontends/lower.h"
#include "isa/asm/asm.h"
#include "sim/engine/program_io.h"
#include "workloads/models/models.h"
#include <cblas.h>
#include "sim/engine/tile.h"

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

/* ---- the full-chip program ---------------------------------------------------- */

#define CHIP_SUPERSTEPS 20

/* Every tile: six workers count to 5, the supervisor sends 16 bytes to the
 * next tile and receives 16 from the previous one (a ring over all tiles,
 * so it crosses columns), sync 1; CHIP_SUPERSTEPS times. */
static char *chip_program(uint32_t tiles)
{
    size_t cap = 4096 + (size_t)tiles * 64, len = 0;
    char *s = malloc(cap);
    if (!s)
        fatal("out of memory");
    len += (size_t)snprintf(s + len, cap - len,
                            ".macro TILE t, next, prev\n .tile \\t\n .text\n__supervisor:\n setzi $m8, %d\n"
                            " setzi $m1, worker\n setzi $m3, sbuf\n setzi $m4, 16\n setzi $m5, \\next\n"
                            " setzi $m6, rbuf\n setzi $m7, \\prev\n"
                            "loop:\n runall $m1, $mzero, $mzero\n sync 0\n xsend $m3, $m4, $m5\n"
                            " xrecv $m6, $m4, $m7\n sync 1\n add $m8, $m8, -1\n brnz $m8, loop\n exitz $mzero\n"
                            "worker:\n setzi $m0, 4\n1: add $m2, $m2, 1\n brnzdec $m0, 1b\n exitz $mzero\n"
                            " .data\nsbuf: .word \\t, \\t, \\t, \\t\nrbuf: .space 16\n.endm\n",
                            CHIP_SUPERSTEPS);
    for (uint32_t t = 0; t < tiles; t++)
        len += (size_t)snprintf(s + len, cap - len, "TILE %u, %u, %u\n", t, (t + 1) % tiles, (t + tiles - 1) % tiles);
    return s;
}

typedef struct chip_result {
    double host_seconds;
    uint64_t tile_cycles, instructions, runs, batches, parallel_batches;
} chip_result;

static bool run_chip(const ipu_exe *e, const machine *m, int threads, double min_seconds, chip_result *r,
                     char *err, size_t err_size)
{
    memset(r, 0, sizeof *r);
    while (r->runs == 0 || r->host_seconds < min_seconds) {
        engine *g = engine_new(m, e, err, err_size);
        if (!g)
            return false;
        engine_options o = { .threads = threads, .trace_tile_first = 1 };
        enum engine_status st = engine_run(g, &o);
        if (st != ENGINE_DONE) {
            snprintf(err, err_size, "full-chip program did not complete: %s", engine_message(g));
            engine_free(g);
            return false;
        }
        const engine_stats *s = engine_get_stats(g);
        r->host_seconds += s->host_seconds;
        r->tile_cycles += s->tile_cycles;
        r->instructions += s->instructions;
        r->batches += s->batches;
        r->parallel_batches += s->parallel_batches;
        r->runs++;
        engine_free(g);
    }
    return true;
}

static int chip_benchmarks(const machine *m, double seconds, cJSON *arr, bench_record *rec)
{
    static const uint32_t tile_counts[] = { 92, 368, 1472 };
    static const int thread_counts[] = { 1, 2 };
    printf("\nfull chip: %s, %d supersteps of (6 workers compute, 16-byte ring exchange, sync 1)\n\n", m->name,
           CHIP_SUPERSTEPS);
    printf("%6s %8s %10s %14s %16s %16s %18s %9s %11s\n", "tiles", "threads", "host_s", "tile_cycles",
           "tile_cycles/s", "instructions/s", "host_us/superstep", "speedup", "parallel_%");
    double t1[3] = { 0 }, per_tile_1[3] = { 0 };
    char err[1024];
    for (size_t a = 0; a < sizeof tile_counts / sizeof *tile_counts; a++) {
        char *src = chip_program(tile_counts[a]);
        ipu_exe *e = asm_assemble_string(src, "chip.S", NULL, err, sizeof err);
        free(src);
        if (!e) {
            fprintf(stderr, "ipusim bench: full-chip program: %s\n", err);
            return 1;
        }
        for (size_t b = 0; b < sizeof thread_counts / sizeof *thread_counts; b++) {
            chip_result r;
            if (!run_chip(e, m, thread_counts[b], seconds / 8, &r, err, sizeof err)) {
                fprintf(stderr, "ipusim bench: %s\n", err);
                exe_free(e);
                return 1;
            }
            double per_run = r.host_seconds / (double)r.runs;
            double cps = (double)r.tile_cycles / r.host_seconds, ips = (double)r.instructions / r.host_seconds;
            if (b == 0) {
                t1[a] = per_run;
                per_tile_1[a] = per_run / tile_counts[a];
            }
            printf("%6u %8d %10.4f %14llu %16.4g %16.4g %18.1f %8.2fx %11.0f\n", tile_counts[a], thread_counts[b],
                   per_run, (unsigned long long)(r.tile_cycles / r.runs), cps, ips, 1e6 * per_run / CHIP_SUPERSTEPS,
                   t1[a] / per_run, r.batches ? 100.0 * (double)r.parallel_batches / (double)r.batches : 0.0);
            char figure[64];
            snprintf(figure, sizeof figure, "chip%u threads%d tile_cycles/s", tile_counts[a], thread_counts[b]);
            bench_record_add(rec, figure, "tile_cycles/s", cps);
            if (arr) {
                cJSON *o = cJSON_CreateObject();
                cJSON_AddStringToObject(o, "program", "full_chip_ring");
                cJSON_AddNumberToObject(o, "tiles", tile_counts[a]);
                cJSON_AddNumberToObject(o, "host_threads", thread_counts[b]);
                cJSON_AddNumberToObject(o, "supersteps", CHIP_SUPERSTEPS);
                cJSON_AddNumberToObject(o, "host_seconds_per_run", per_run);
                cJSON_AddNumberToObject(o, "tile_cycles_per_run", (double)(r.tile_cycles / r.runs));
                cJSON_AddNumberToObject(o, "tile_cycles_per_host_second", cps);
                cJSON_AddNumberToObject(o, "instructions_per_host_second", ips);
                cJSON_AddNumberToObject(o, "speedup_over_one_thread", t1[a] / per_run);
                cJSON_AddItemToArray(arr, o);
            }
        }
        exe_free(e);
    }
    printf("\nparallel_%%: tile batches the engine ran on more than one thread (it falls back to one while\n"
           "that is faster, e.g. on a busy host).  Scaling with one thread: host time per tile %.2f us (92 tiles),\n"
           "%.2f us (368), %.2f us (1472); 1472 tiles take %.1fx the time of 92 (16x the tiles)\n",
           1e6 * per_tile_1[0], 1e6 * per_tile_1[1], 1e6 * per_tile_1[2], t1[2] / t1[0]);
    return 0;
}

/* One BERT-Base encoder layer: compiled for one GC200, simulated, and the
 * same matmuls (every FLOP but the softmax, layer norms and GELU, under 2%)
 * done by OpenBLAS in f32 on this host.  The ratio of the two host times
 * is the figure to drive down: how much slower than running the model it
 * is to simulate the machine running it. */
static int bert_benchmark(const machine *m, int seq, cJSON *arr, bench_record *rec)
{
    char spec[64], err[1024];
    snprintf(spec, sizeof spec, "bert-base:s%d", seq);
    double t0 = seconds_now();
    graph *g = models_build(spec, err, sizeof err);
    if (!g) {
        fprintf(stderr, "ipusim bench: %s\n", err);
        return 1;
    }
    lower_options o = { .machine = m, .f16_matmul = true, .replicas = 1 };
    lower_report rep;
    ipu_exe *e = lower_graph(g, &o, &rep, err, sizeof err);
    double t_compile = seconds_now() - t0;
    if (!e) {
        fprintf(stderr, "ipusim bench: %s\n", err);
        graph_free(g);
        return 1;
    }
    engine *eng = engine_new(m, e, err, sizeof err);
    tensor_map *map = eng ? program_tensor_map(e, spec, err, sizeof err) : NULL;
    bool ok = eng && map && program_fill_inputs(eng, map, NULL, 0, NULL, "", err, sizeof err);
    double t1 = seconds_now();
    engine_options eo = { .max_cycles = 10000000000ull, .trace_tile_first = 1, .trace_tile_last = 0 };
    ok = ok && engine_run(eng, &eo) == ENGINE_DONE;
    double t_sim = seconds_now() - t1;
    if (!ok) {
        fprintf(stderr, "ipusim bench: %s: %s\n", spec, eng ? engine_message(eng) : err);
        tmap_free(map);
        engine_free(eng);
        exe_free(e);
        graph_free(g);
        return 1;
    }
    const engine_stats *st = engine_get_stats(eng);
    double simulated_s = (double)st->end_ps / 1e12;
    uint64_t instructions = st->instructions;
    tmap_free(map);
    engine_free(eng);
    exe_free(e);
    /* The matmuls on the host: every MatMul / FusedMatMul of the layer, as
     * (batched) sgemm in f32, repeated until 0.5 s has passed. */
    double flops = 0, t_blas = 0;
    int runs = 0;
    size_t cap = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const graph_node *n = &g->nodes[i];
        if (n->op != GRAPH_OP_MATMUL && n->op != GRAPH_OP_FUSED_MATMUL)
            continue;
        const graph_shape *a = &g->tensors[n->inputs[0]].shape, *b = &g->tensors[n->inputs[1]].shape;
        size_t k = (size_t)a->dims[a->rank - 1], nn = (size_t)b->dims[b->rank - 1];
        size_t mm = (size_t)graph_shape_numel(a) / k;
        size_t need = mm * k + k * nn * (size_t)(graph_shape_numel(b) / (int64_t)(k * nn)) + mm * nn;
        if (need > cap)
            cap = need;
    }
    float *buf = calloc(cap ? cap : 1, sizeof *buf);
    if (!buf)
        fatal("out of memory");
    for (size_t q = 0; q < cap; q++)
        buf[q] = (float)((q * 2654435761u) % 1000) / 1000.0f - 0.5f;
    double start = seconds_now();
    do {
        for (int i = 0; i < g->n_nodes; i++) {
            const graph_node *n = &g->nodes[i];
            if (n->op != GRAPH_OP_MATMUL && n->op != GRAPH_OP_FUSED_MATMUL)
                continue;
            const graph_shape *a = &g->tensors[n->inputs[0]].shape, *b = &g->tensors[n->inputs[1]].shape;
            int k = (int)a->dims[a->rank - 1], nn = (int)b->dims[b->rank - 1];
            int batch = b->rank > 2 ? (int)(graph_shape_numel(b) / ((int64_t)k * nn)) : 1;
            int mm = (int)(graph_shape_numel(a) / k / batch);
            for (int q = 0; q < batch; q++) {
                float *pa = buf, *pb = buf + (size_t)mm * k, *pc = pb + (size_t)k * nn;
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, mm, nn, k, 1.0f, pa, k, pb, nn, 0.0f, pc, nn);
                if (runs == 0)
                    flops += 2.0 * mm * nn * k;
            }
        }
        runs++;
        t_blas = seconds_now() - start;
    } while (t_blas < 0.5);
    t_blas /= runs;
    free(buf);
    graph_free(g);
    printf("\nBERT-Base encoder layer, %d tokens: compiled for one %s, simulated; the same matmuls (%.3g GFLOP) by\n"
           "OpenBLAS cblas_sgemm in f32 on this host (%d host thread%s for OpenBLAS as it is configured)\n\n", seq,
           m->name, flops / 1e9, openblas_get_num_threads(), openblas_get_num_threads() == 1 ? "" : "s");
    printf("%-16s %12s %14s %16s %14s %16s %14s\n", "workload", "compile_s", "simulate_s", "instructions/s",
           "simulated_us", "openblas_f32_s", "sim/openblas");
    printf("%-16s %12.3f %14.3f %16.4g %14.2f %16.6f %14.0f\n", spec, t_compile, t_sim,
           (double)instructions / t_sim, simulated_s * 1e6, t_blas, t_sim / t_blas);
    char figure[96];
    snprintf(figure, sizeof figure, "%s simulate_s", spec);
    bench_record_add(rec, figure, "s", t_sim);
    snprintf(figure, sizeof figure, "%s simulate/openblas", spec);
    bench_record_add(rec, figure, "ratio", t_sim / t_blas);
    if (arr) {
        cJSON *jo = cJSON_CreateObject();
        cJSON_AddStringToObject(jo, "workload", spec);
        cJSON_AddNumberToObject(jo, "compile_seconds", t_compile);
        cJSON_AddNumberToObject(jo, "simulate_host_seconds", t_sim);
        cJSON_AddNumberToObject(jo, "instructions", (double)instructions);
        cJSON_AddNumberToObject(jo, "simulated_seconds", simulated_s);
        cJSON_AddNumberToObject(jo, "openblas_f32_seconds", t_blas);
        cJSON_AddNumberToObject(jo, "matmul_flops", flops);
        cJSON_AddNumberToObject(jo, "simulate_over_openblas", t_sim / t_blas);
        cJSON_AddItemToArray(arr, jo);
    }
    return 0;
}

/* ipusim ARGS... run as a child process: its peak resident memory in
 * bytes, or 0 when it could not run or exited with neither 0 nor
 * also_ok (why in err). */
static uint64_t child_peak_rss(char *const *args, int also_ok, char *err, size_t err_size)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, err_size, "fork: %s", strerror(errno));
        return 0;
    }
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) {
            dup2(null, STDOUT_FILENO);
            dup2(null, STDERR_FILENO);
        }
        execv("/proc/self/exe", args);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) ||
        (WEXITSTATUS(status) && WEXITSTATUS(status) != also_ok)) {
        snprintf(err, err_size, "'ipusim %s %s' failed", args[1], args[2]);
        return 0;
    }
    return (uint64_t)ru.ru_maxrss * 1024;
}

/* The host memory a pod-sized program takes: BERT-Base, 12 layers, f16
 * matmuls, on an IPU-M2000 (four replicas): the executable's size and the
 * peak resident memory of its compile and of its run's start (20,000
 * cycles), each in a process of its own. */
static int memory_benchmark(cJSON *arr, bench_record *rec)
{
    char dir[] = "/tmp/ipusim_bench_XXXXXX", elf[64], err[1024];
    if (!mkdtemp(dir)) {
        fprintf(stderr, "ipusim bench: cannot make a temporary folder: %s\n", strerror(errno));
        return 1;
    }
    snprintf(elf, sizeof elf, "%s/b.elf", dir);
    const char *spec = "bert-base:s128:l12";
    char *compile[] = { "ipusim", "compile", (char *)spec, "--f16-matmul", "--machine", "m2000", "-o", elf, NULL };
    char *run[] = { "ipusim", "run", elf, "--machine", "m2000", "--max-cycles", "20000", NULL };
    double t0 = seconds_now();
    uint64_t compile_rss = child_peak_rss(compile, 0, err, sizeof err);
    double t1 = seconds_now();
    struct stat st;
    uint64_t size = compile_rss && stat(elf, &st) == 0 ? (uint64_t)st.st_size : 0;
    uint64_t run_rss = size ? child_peak_rss(run, 3, err, sizeof err) : 0;   /* 3: stopped at the cycle limit */
    double t2 = seconds_now();
    unlink(elf);
    rmdir(dir);
    if (!run_rss) {
        fprintf(stderr, "ipusim bench: %s\n", err);
        return 1;
    }
    printf("\n%s --f16-matmul on m2000 (4 replicas): the executable, and the peak host memory of its compile and\n"
           "of its run's first 20,000 cycles, each in a process of its own\n\n", spec);
    printf("%-20s %16s %18s %18s %12s %12s\n", "workload", "executable_MB", "compile_peak_MB", "run_peak_MB",
           "compile_s", "run_s");
    printf("%-20s %16.1f %18.1f %18.1f %12.2f %12.2f\n", spec, size / 1e6, compile_rss / 1e6, run_rss / 1e6, t1 - t0,
           t2 - t1);
    char figure[96];
    snprintf(figure, sizeof figure, "%s m2000 executable_bytes", spec);
    bench_record_add(rec, figure, "bytes", (double)size);
    snprintf(figure, sizeof figure, "%s m2000 compile_peak_rss_bytes", spec);
    bench_record_add(rec, figure, "bytes", (double)compile_rss);
    snprintf(figure, sizeof figure, "%s m2000 run_peak_rss_bytes", spec);
    bench_record_add(rec, figure, "bytes", (double)run_rss);
    if (arr) {
        cJSON *jo = cJSON_CreateObject();
        cJSON_AddStringToObject(jo, "workload", spec);
        cJSON_AddStringToObject(jo, "machine", "m2000");
        cJSON_AddNumberToObject(jo, "executable_bytes", (double)size);
        cJSON_AddNumberToObject(jo, "compile_peak_rss_bytes", (double)compile_rss);
        cJSON_AddNumberToObject(jo, "run_peak_rss_bytes", (double)run_rss);
        cJSON_AddItemToArray(arr, jo);
    }
    return 0;
}

int cmd_bench(int argc, char **argv, const command *self)
{
    double seconds = 2.0;
    const char *json = NULL;
    bool bert = true, memory = true;
    int bert_seq = 128;
    bench_record rec;
    bench_record_init(&rec);
    for (int i = 1; i < argc; i++) {
        if (bench_record_option(&rec, self, argc, argv, &i))
            continue;
        if (!strcmp(argv[i], "--seconds")) {
            const char *v = cli_value(self, argc, argv, &i);
            char *end;
            seconds = strtod(v, &end);
            if (*end || end == v || !(seconds > 0 && seconds <= 3600))
                cli_usage_error(self, "--seconds: '%s' is not a duration in seconds (0..3600]", v);
        } else if (!strcmp(argv[i], "--json"))
            json = cli_value(self, argc, argv, &i);
        else if (!strcmp(argv[i], "--no-model"))
            bert = false;
        else if (!strcmp(argv[i], "--no-memory"))
            memory = false;
        else if (!strcmp(argv[i], "--seq")) {
            const char *v = cli_value(self, argc, argv, &i);
            uint64_t q;
            if (!cli_parse_u64(v, 512, &q, NULL) || q < 2 || q % 2)
                cli_usage_error(self, "--seq: '%s' is not an even sequence length (2..512)", v);
            bert_seq = (int)q;
        } else
            cli_usage_error(self, "unknown argument '%s'", argv[i]);
    }
    machine m;
    char err[1024];
    if (json && rec.record_path && cli_same_output(json, rec.record_path))
        cli_usage_error(self, "--json and --record write the same file '%s'", json);
    if ((json && !cli_check_output(json, err, sizeof err)) ||
        (rec.record_path && !cli_check_output(rec.record_path, err, sizeof err)))
        fatal("%s", err);
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
        char figure[64];
        snprintf(figure, sizeof figure, "%s instructions/s", programs[k].name);
        bench_record_add(&rec, figure, "instructions/s", ips);
        snprintf(figure, sizeof figure, "%s tile_cycles/s", programs[k].name);
        bench_record_add(&rec, figure, "tile_cycles/s", cps);
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
    if (chip_benchmarks(&m, seconds, root ? cJSON_AddArrayToObject(root, "chip_programs") : NULL, &rec))
        rc = 1;
    if (bert && bert_benchmark(&m, bert_seq, root ? cJSON_AddArrayToObject(root, "models") : NULL, &rec))
        rc = 1;
    if (memory && memory_benchmark(root ? cJSON_AddArrayToObject(root, "memory") : NULL, &rec))
        rc = 1;
    if (root) {
        if (!cli_write_json(json, root, err, sizeof err))
            fatal("%s", err);
    }
    /* A failed run is not recorded: the old record stays. */
    if (rc == 0 && !bench_record_finish(&rec, stdout, err, sizeof err))
        fatal("%s", err);
    bench_record_free(&rec);
    return rc;
}
