/*
 * compare.c — `ipusim compare`: the same executable on two machines, side
 * by side.
 *
 * What is compared.  For each machine the run's end (the last chip's end)
 * gives the time; the breakdown is that of each machine's critical path:
 * for every superstep, the busiest tile's split of the superstep into
 * compute, exchange, waiting for other chips and sync (sim/engine/engine.h), summed
 * over the supersteps of the chip that ended last, in seconds at that
 * chip's clock.  IPU-Link, host and streaming-memory figures are the busy
 * time of those channels (bytes / bandwidth) summed over all chips, in
 * seconds: they overlap with the rest, so they are shown beside the
 * breakdown, not inside it.  Ratios are B / A.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "sim/base/diag.h"
#include "sim/engine/engine.h"
#include "isa/elf/executable.h"
#include "sim/base/fileio.h"
#include "sim/engine/phase_stats.h"
#include "sim/engine/program_io.h"
#include "frontends/lower.h"
#include "workloads/models/convergence.h"

typedef struct compare_side {
    machine m;
    const engine_stats *stats;
    engine *g;
    uint32_t critical_chip;       /* the chip that ended last */
    double seconds;               /* end of the run */
    double compute_s, exchange_s, wait_s, sync_s;   /* critical chip's busiest-tile path */
    double link_s, host_s, stream_s;                 /* channel busy time, all chips */
    uint64_t link_bytes, host_bytes, stream_bytes, exchange_bytes;
    uint64_t cycles, instructions, amp_macs;
    double amp_utilisation;
    engine_amp_summary amp;       /* over the chips with code, with the model's MACs */
    phase_totals phases[PHASES_MAX];  /* a training step's, on the critical chip */
    double clock_hz;              /* the critical chip's */
    double host_seconds;          /* of the simulation */
    int host_threads;
    uint32_t chips_used;          /* chips with code */
    /* A system of several IPU-Link domains (machine.def ipu_link_domains:
     * POD128, POD256): one domain simulated, the gradients' all-reduce
     * across the domains over the GW-Links estimated and added to the
     * time (gateway_estimate). */
    uint32_t domains;
    double gateway_s;             /* that estimate */
    double gateway_bytes;         /* the bytes each chip sends over the GW-Links for it */
} compare_side;

typedef struct input_spec {
    uint32_t stream;
    const char *path;
} input_spec;

static void summarise(compare_side *s, const program_phases *ph)
{
    const engine_stats *st = s->stats;
    uint64_t end = 0;
    for (uint32_t c = 0; c < st->n_chips; c++) {
        const engine_chip_stats *cs = &st->chips[c];
        if (cs->tiles && cs->end_ps >= end) {
            end = cs->end_ps;
            s->critical_chip = c;
        }
        s->link_s += (double)cs->c.link_ps * 1e-12;
        s->host_s += (double)cs->c.host_ps * 1e-12;
        s->stream_s += (double)cs->c.stream_ps * 1e-12;
        s->link_bytes += cs->c.link_bytes;
        s->host_bytes += cs->c.host_bytes;
        s->stream_bytes += cs->c.stream_bytes;
        s->exchange_bytes += cs->c.exchange_bytes;
        s->instructions += cs->c.instructions;
        s->amp_macs += cs->c.amp_f16_macs + cs->c.amp_f32_macs;
    }
    const engine_chip_stats *cc = &st->chips[s->critical_chip];
    double hz = (double)cc->clock_hz;
    s->clock_hz = hz;
    s->seconds = (double)st->end_ps * 1e-12;
    s->cycles = cc->c.cycles;
    s->compute_s = (double)cc->c.compute_cycles / hz;
    s->exchange_s = (double)cc->c.exchange_cycles / hz;
    s->wait_s = (double)cc->c.wait_cycles / hz;
    s->sync_s = (double)cc->c.sync_cycles / hz;
    s->amp_utilisation = cc->amp_utilisation;
    s->host_seconds = st->host_seconds;
    s->host_threads = st->host_threads;
    s->chips_used = engine_chips_used(st);
    if (ph->n)
        phase_stats_sum(st, ph, s->critical_chip, s->phases);
}

/* The step of a system of D IPU-Link domains, one simulated: as GCL
 * all-reduces across POD64s, each domain's reduce-scatter (simulated, in
 * the all-reduce) leaves each chip 1/R of its B gradient bytes (R the
 * replicas of a domain, a ring of the chips of one stage); the chips of
 * the D domains holding the same slice then all-reduce it in a ring over
 * the GW-Links, each sending 2 (D - 1) / D of it through its board's
 * gateway (shared by the board's chips), with 2 (D - 1) transfers'
 * latency; the domain's all-gather (simulated) follows.  That ring's time
 * is added to the step. */
static void gateway_estimate(compare_side *s, const program_phases *ph)
{
    s->domains = machine_u32(&s->m, MP_ipu_link_domains);
    if (s->domains < 2 || !ph->all_reduce_bytes)
        return;
    double d = s->domains, stages = ph->pipeline_stages ? ph->pipeline_stages : 1;
    double replicas = s->chips_used / stages, per_board = machine_get(&s->m, MP_chips_per_board);
    double chip_bw = machine_get(&s->m, MP_gw_link_bandwidth_bytes_per_s) / (per_board > 0 ? per_board : 1);
    s->gateway_bytes = 2 * (d - 1) / d * (double)ph->all_reduce_bytes / (replicas > 1 ? replicas : 1);
    s->gateway_s = s->gateway_bytes / chip_bw + 2 * (d - 1) * machine_get(&s->m, MP_gw_link_latency_ps) * 1e-12;
    s->seconds += s->gateway_s;
}

/* 0: ran to the end; 1: a user error (err); 3: the simulated program
 * stopped with an exception, a deadlock or at the limit (err). */
static int run_side(compare_side *s, const ipu_exe *e, const program_phases *ph, const input_spec *inputs,
                    unsigned n_inputs, int threads, char *err, size_t err_size)
{
    s->g = engine_new(&s->m, e, err, err_size);
    if (!s->g)
        return 1;
    for (unsigned i = 0; i < n_inputs; i++) {
        char *data;
        size_t size;
        if (!read_file_limited(inputs[i].path, READ_LIMIT_HOST_STREAM, "a host stream's input may have", READ_STREAMS,
                               &data, &size, err, err_size))
            return 1;
        bool ok = engine_set_host_input(s->g, inputs[i].stream, data, size);
        free(data);
        if (!ok) {
            snprintf(err, err_size, "out of host memory for host input stream %u", inputs[i].stream);
            return 1;
        }
    }
    /* A compiled program's inputs: pseudo-random values, the same on both
     * machines (the comparison is of time, and the program is the same). */
    tensor_map *map = program_tensor_map(e, "executable", err, err_size);
    if (!map && err[0])
        return 1;
    if (map) {
        static bool noted;
        bool ok = program_fill_inputs(s->g, map, NULL, 0, noted ? NULL : stderr, "ipusim: ", err, err_size);
        noted = true;
        tmap_free(map);
        if (!ok)
            return 1;
    }
    engine_options o = { .threads = threads, .trace_tile_first = 1, .trace_tile_last = 0 };
    enum engine_status st = engine_run(s->g, &o);
    if (st != ENGINE_DONE) {
        snprintf(err, err_size, "on %.64s: %.1900s", s->m.name, engine_message(s->g));
        return st == ENGINE_HOST_ERROR ? 1 : 3;
    }
    s->stats = engine_get_stats(s->g);
    model_record mr;
    if (!program_model_record(e, "executable", &mr, err, err_size))
        return 1;
    s->amp = engine_amp_totals(s->g, s->stats, mr.model_macs);
    summarise(s, ph);
    gateway_estimate(s, ph);
    /* What the comparison prints is in s now: the machine's simulated state
     * goes before the other machine's is made (a pod's is gigabytes). */
    engine_free(s->g);
    s->g = NULL;
    s->stats = NULL;
    return 0;
}

static void fmt_seconds(char *buf, size_t n, double s)
{
    if (s == 0)
        snprintf(buf, n, "0");
    else if (s < 1e-6)
        snprintf(buf, n, "%.3f ns", s * 1e9);
    else if (s < 1e-3)
        snprintf(buf, n, "%.3f us", s * 1e6);
    else if (s < 1)
        snprintf(buf, n, "%.3f ms", s * 1e3);
    else
        snprintf(buf, n, "%.3f s", s);
}

static void fmt_ratio(char *buf, size_t n, double b, double a)
{
    if (a == 0 && b == 0)
        snprintf(buf, n, "-");
    else if (a == 0)
        snprintf(buf, n, "inf");
    else
        snprintf(buf, n, "%.3f", b / a);
}

static void row_seconds(const char *label, double a, double b)
{
    char sa[32], sb[32], r[32];
    fmt_seconds(sa, sizeof sa, a);
    fmt_seconds(sb, sizeof sb, b);
    fmt_ratio(r, sizeof r, b, a);
    printf("  %-30s %16s %16s %10s\n", label, sa, sb, r);
}

static void row_number(const char *label, const char *fmt, double a, double b)
{
    char sa[32], sb[32], r[32];
    snprintf(sa, sizeof sa, fmt, a);
    snprintf(sb, sizeof sb, fmt, b);
    fmt_ratio(r, sizeof r, b, a);
    printf("  %-30s %16s %16s %10s\n", label, sa, sb, r);
}

/* A horizontal stacked bar per machine for the critical path, and bars for
 * the off-chip channels, on one time axis. */
/* The phases of a training step side by side: each one's time on the
 * chip that ends last, and its compute share. */
static void print_phases(const program_phases *ph, compare_side *a, compare_side *b)
{
    double ha = a->clock_hz, hb = b->clock_hz;
    printf("\n  training step, by phase (chip that ends last):\n");
    for (uint32_t i = 0; i < ph->n; i++) {
        char label[64];
        snprintf(label, sizeof label, "  %s", ph->name[i]);
        row_seconds(label, (double)a->phases[i].c.cycles / ha, (double)b->phases[i].c.cycles / hb);
        snprintf(label, sizeof label, "    of which compute");
        row_seconds(label, (double)a->phases[i].c.compute_cycles / ha, (double)b->phases[i].c.compute_cycles / hb);
    }
}

static const char *const phase_colours[PHASES_MAX] = { "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
                                                        "#9c755f", "#76b7b2", "#4e79a7", "#e15759" };

/* A training step's phases on side s's chip that ends last, as one bar
 * at y (ph: NULL for none). */
static void chart_phases(FILE *o, const compare_side *s, const program_phases *ph, int left, int y, double tmax,
                         int bar_w)
{
    fprintf(o, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" fill=\"#555\">by phase</text>\n", left - 8, y + 11);
    double x = left;
    for (uint32_t k = 0; k < ph->n; k++) {
        double sec = (double)s->phases[k].c.cycles / s->clock_hz, w = sec / tmax * bar_w;
        if (w > 0)
            fprintf(o, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"14\" fill=\"%s\"><title>%s: %.6g s"
                       "</title></rect>\n", x, y, w, phase_colours[k], ph->name[k], sec);
        x += w;
    }
}

static bool write_chart(const char *path, const compare_side *a, const compare_side *b, const char *title,
                        const program_phases *ph, char *err, size_t err_size)
{
    atomic_file f;
    if (!afile_open(&f, path, err, err_size))
        return false;
    const compare_side *side[2] = { a, b };
    double tmax = 0;
    for (int i = 0; i < 2; i++) {
        double parts = side[i]->compute_s + side[i]->exchange_s + side[i]->wait_s + side[i]->sync_s;
        double vals[] = { side[i]->seconds, parts, side[i]->link_s, side[i]->host_s, side[i]->stream_s };
        for (size_t k = 0; k < sizeof vals / sizeof vals[0]; k++)
            if (vals[k] > tmax)
                tmax = vals[k];
    }
    if (tmax <= 0)
        tmax = 1e-9;
    const int W = 900, left = 170, right = 110, bar_w = W - left - right;
    const int phase_rows = ph ? 22 : 0;
    const int rows_end = 50 + 2 * (30 + phase_rows + 3 * 18 + 22);   /* the layout below */
    const int H = rows_end + 48 + (ph ? 20 : 0);
    FILE *o = f.fp;
    fprintf(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
               "font-size=\"12\">\n", W, H);
    fprintf(o, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    fprintf(o, "<text x=\"%d\" y=\"22\" font-size=\"15\" font-weight=\"bold\">", left);
    for (const char *p = title; *p; p++) {
        if (*p == '<') fputs("&lt;", o);
        else if (*p == '&') fputs("&amp;", o);
        else fputc(*p, o);
    }
    fprintf(o, "</text>\n");
    static const char *const names[] = { "compute", "exchange", "wait (other chips)", "sync" };
    static const char *const colours[] = { "#4e79a7", "#f28e2b", "#bab0ac", "#e15759" };
    int y = 50;
    for (int i = 0; i < 2; i++) {
        const compare_side *s = side[i];
        double parts[] = { s->compute_s, s->exchange_s, s->wait_s, s->sync_s };
        char t[32];
        fmt_seconds(t, sizeof t, s->seconds);
        fprintf(o, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-weight=\"bold\">%s</text>\n", left - 8, y + 15,
                s->m.name);
        double x = left;
        for (int k = 0; k < 4; k++) {
            double w = parts[k] / tmax * bar_w;
            if (w > 0)
                fprintf(o, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"22\" fill=\"%s\"><title>%s: %.6g s"
                           "</title></rect>\n", x, y, w, colours[k], names[k], parts[k]);
            x += w;
        }
        fprintf(o, "<text x=\"%.2f\" y=\"%d\" fill=\"#333\">%s</text>\n", x + 4, y + 15, t);
        y += 30;
        if (ph)
            chart_phases(o, s, ph, left, y, tmax, bar_w);
        y += phase_rows;
        static const char *const off[] = { "IPU-Link busy", "host busy", "streaming memory busy" };
        double offv[] = { s->link_s, s->host_s, s->stream_s };
        for (int k = 0; k < 3; k++) {
            fprintf(o, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" fill=\"#555\">%s</text>\n", left - 8, y + 10,
                    off[k]);
            double w = offv[k] / tmax * bar_w;
            fprintf(o, "<rect x=\"%d\" y=\"%d\" width=\"%.2f\" height=\"12\" fill=\"#76b7b2\"/>\n", left, y, w);
            fmt_seconds(t, sizeof t, offv[k]);
            fprintf(o, "<text x=\"%.2f\" y=\"%d\" fill=\"#555\">%s</text>\n", left + w + 4, y + 10, t);
            y += 18;
        }
        y += 22;
    }
    int ly = rows_end + 4, lx = left;
    for (int k = 0; k < 4; k++) {
        fprintf(o, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>", lx, ly, colours[k]);
        fprintf(o, "<text x=\"%d\" y=\"%d\">%s</text>\n", lx + 16, ly + 10, names[k]);
        lx += 150;
    }
    for (uint32_t k = 0; ph && k < ph->n; k++) {
        int px = left + 120 * (int)k;
        fprintf(o, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>", px, ly + 20,
                phase_colours[k]);
        fprintf(o, "<text x=\"%d\" y=\"%d\">%s</text>\n", px + 16, ly + 30, ph->name[k]);
    }
    fprintf(o, "<text x=\"%d\" y=\"%d\" fill=\"#555\" font-size=\"11\">bars: the busiest tile of each superstep "
               "on the chip that ends last; off-chip: channel busy time over all chips</text>\n", left, H - 10);
    fprintf(o, "</svg>\n");
    return afile_commit(&f, err, err_size);
}

static cJSON *side_json(const compare_side *s, double items, const char *item_name)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "machine", s->m.name);
    cJSON_AddNumberToObject(o, "chips", machine_get(&s->m, MP_chips));
    cJSON_AddNumberToObject(o, "tiles_per_chip", machine_get(&s->m, MP_tiles_per_chip));
    cJSON_AddNumberToObject(o, "tile_clock_hz", machine_get(&s->m, MP_tile_clock_hz));
    cJSON_AddNumberToObject(o, "critical_chip", s->critical_chip);
    if (s->domains > 1) {
        cJSON *d = cJSON_AddObjectToObject(o, "estimate");
        cJSON_AddNumberToObject(d, "ipu_link_domains", s->domains);
        cJSON_AddNumberToObject(d, "chips_in_all", (double)s->chips_used * s->domains);
        cJSON_AddNumberToObject(d, "gateway_all_reduce_seconds", s->gateway_s);
        cJSON_AddNumberToObject(d, "gateway_bytes_per_chip", s->gateway_bytes);
    }
    cJSON_AddNumberToObject(o, "cycles", (double)s->cycles);
    cJSON_AddNumberToObject(o, "seconds", s->seconds);
    if (items > 0) {
        char key[96];
        snprintf(key, sizeof key, "%s_per_second", item_name);
        cJSON_AddNumberToObject(o, key, items / s->seconds);
    }
    cJSON *b = cJSON_AddObjectToObject(o, "critical_path_seconds");
    cJSON_AddNumberToObject(b, "compute", s->compute_s);
    cJSON_AddNumberToObject(b, "exchange", s->exchange_s);
    cJSON_AddNumberToObject(b, "wait_other_chips", s->wait_s);
    cJSON_AddNumberToObject(b, "sync", s->sync_s);
    cJSON *c = cJSON_AddObjectToObject(o, "channel_busy_seconds");
    cJSON_AddNumberToObject(c, "ipu_link", s->link_s);
    cJSON_AddNumberToObject(c, "host", s->host_s);
    cJSON_AddNumberToObject(c, "streaming_memory", s->stream_s);
    cJSON *by = cJSON_AddObjectToObject(o, "bytes");
    cJSON_AddNumberToObject(by, "exchange", (double)s->exchange_bytes);
    cJSON_AddNumberToObject(by, "ipu_link", (double)s->link_bytes);
    cJSON_AddNumberToObject(by, "host", (double)s->host_bytes);
    cJSON_AddNumberToObject(by, "streaming_memory", (double)s->stream_bytes);
    cJSON_AddNumberToObject(o, "instructions", (double)s->instructions);
    cJSON_AddNumberToObject(o, "amp_macs", (double)s->amp_macs);
    cJSON_AddNumberToObject(o, "amp_utilisation", s->amp_utilisation);
    if (s->amp.model_macs) {
        cJSON_AddNumberToObject(o, "model_macs", (double)s->amp.model_macs);
        cJSON_AddNumberToObject(o, "amp_useful_utilisation", s->amp.useful_utilisation);
    }
    cJSON_AddNumberToObject(o, "host_seconds", s->host_seconds);
    return o;
}

/* The program's phases; a training step counts its samples (the batch of
 * every replica) as the items unless --items gave them. */
static void read_phases(const ipu_exe *e, const char *input, const machine *m, program_phases *ph, double *items,
                        const char **item_name)
{
    char err[256];
    if (!phase_stats_read(e, ph, err, sizeof err))
        fatal("%s: %s", input, err);
    ph->samples *= machine_u32(m, MP_ipu_link_domains);     /* every domain's (gateway_estimate) */
    if (!(*items > 0) && ph->samples) {
        *items = (double)ph->samples;
        *item_name = "samples";
    }
}

/* A model (built-in or ONNX) compiled for machine m, in this process (the
 * replicas made, not left to a reader). */
static ipu_exe *compile_for(const char *model, machine *m, lower_options o, bool fuse, const cli_train *t)
{
    char err[4096];
    o.machine = m;
    cli_check_compile_options(model, &o);
    train_info info;
    graph *g = cli_load_model(model, fuse, t, &o, &info);
    lower_report rep;
    ipu_exe *e = lower_graph(g, &o, &rep, err, sizeof err);
    graph_free(g);
    if (!e)
        fatal("%s", err);
    printf("compiled %s%s for %s: %u ops, %u replica%s%s, %u tiles a chip\n", model, t->train ? " (training step)" : "",
           m->name, rep.ops, rep.replicas, rep.replicas == 1 ? "" : "s",
           rep.stages > 1 ? " of a pipeline" : "", rep.tiles_used);
    return e;
}

/* The same program serves both machines when they have the same chips,
 * tiles and tile memory (the compiler plans by nothing else that differs
 * between presets). */
static bool same_shape(const machine *a, const machine *b)
{
    return machine_u32(a, MP_chips) == machine_u32(b, MP_chips) &&
           machine_u32(a, MP_tiles_per_chip) == machine_u32(b, MP_tiles_per_chip) &&
           machine_u32(a, MP_tile_memory_bytes) == machine_u32(b, MP_tile_memory_bytes);
}

/* A training step as MLPerf runs it, from the step simulated: the global
 * batch made of `accumulate` micro-steps of the simulated step's samples
 * (the forward and backward phases that many times, the rest once), and the
 * time to train from MLPerf's reference convergence points. */
typedef struct mlperf_view {
    double global_batch, accumulate;
    bool have_convergence;
    convergence conv;
    double samples_needed;        /* --samples, --epochs or the reference's */
    const char *needed_from;
} mlperf_view;

/* The step at `accumulate` times the samples simulated.  A pipelined
 * step of M micro-batches runs M + 2P - 2 cycles for P stages; kM
 * micro-batches run kM + 2P - 2 of them, each as long as the mean of the
 * simulated ones. */
static double step_seconds(const compare_side *s, const program_phases *ph, double accumulate)
{
    double micro = 0;
    if (ph->pipeline_stages) {
        double cycles = ph->pipeline_cycles;
        for (uint32_t i = 0; i < ph->n; i++)
            if (!strcmp(ph->name[i], "pipeline"))
                micro += (double)s->phases[i].c.cycles / s->clock_hz * ph->micro_batches / cycles;
        return s->seconds + (accumulate - 1) * micro;
    }
    for (uint32_t i = 0; i < ph->n; i++)
        if (!strcmp(ph->name[i], "forward") || !strcmp(ph->name[i], "backward"))
            micro += (double)s->phases[i].c.cycles / s->clock_hz;
    return s->seconds + (accumulate - 1) * micro;
}

static void fmt_duration(char *buf, size_t n, double s)
{
    if (s >= 3600)
        snprintf(buf, n, "%.2f h", s / 3600);
    else if (s >= 60)
        snprintf(buf, n, "%.2f min", s / 60);
    else
        snprintf(buf, n, "%.3f s", s);
}

static void print_mlperf(const mlperf_view *v, const program_phases *ph, const compare_side *a,
                         const compare_side *b, const char *model)
{
    double ta = step_seconds(a, ph, v->accumulate), tb = step_seconds(b, ph, v->accumulate);
    printf("\n  training step at global batch %.0f (%.0f sample%s a step simulated", v->global_batch,
           (double)ph->samples, ph->samples == 1 ? "" : "s");
    if (v->accumulate > 1 && ph->pipeline_stages)
        printf(", its pipeline run for %.0f micro-batches, %.0f cycles as long as the simulated ones: gradient "
               "accumulation, estimated from the step)", v->accumulate * ph->micro_batches,
               v->accumulate * ph->micro_batches + ph->pipeline_cycles - ph->micro_batches);
    else if (v->accumulate > 1)
        printf(", its forward and backward phases %.0f times: gradient accumulation, estimated from the step)",
               v->accumulate);
    else
        printf(")");
    printf(":\n");
    row_seconds("  step time", ta, tb);
    row_number("  samples/s", "%.1f", v->global_batch / ta, v->global_batch / tb);
    row_number("  samples/s per IPU", "%.1f", v->global_batch / ta / (a->chips_used * a->domains),
               v->global_batch / tb / (b->chips_used * b->domains));
    if (!(v->samples_needed > 0)) {
        printf("  (time to train: no MLPerf reference for %s; --samples N or --epochs E with --dataset-samples N "
               "give one)\n", model);
        return;
    }
    double steps = ceil(v->samples_needed / v->global_batch);
    char da[32], db[32], r[32];
    fmt_duration(da, sizeof da, steps * ta);
    fmt_duration(db, sizeof db, steps * tb);
    fmt_ratio(r, sizeof r, tb, ta);
    printf("  %-30s %16s %16s %10s\n", "  time to train", da, db, r);
    printf("    (%.0f steps of %.0f samples: %.4g samples, %s", steps, v->global_batch, v->samples_needed,
           v->needed_from);
    if (v->have_convergence) {
        const convergence *c = &v->conv;
        if (c->epochs > 0)
            printf("; %.1f epochs of %s", c->epochs, c->dataset);
        printf(" to %s; MLPerf Training 2.0 reference convergence points, %s", c->target, c->how);
        if (c->batch_lo == c->batch_hi)
            printf(" (global batch %.0f)", c->batch_lo);
        else
            printf(" (global batches %.0f and %.0f)", c->batch_lo, c->batch_hi);
    }
    printf("; of the program as simulated)\n");
}

static cJSON *mlperf_json(const mlperf_view *v, const program_phases *ph, const compare_side *s)
{
    cJSON *o = cJSON_CreateObject();
    double t = step_seconds(s, ph, v->accumulate);
    cJSON_AddNumberToObject(o, "global_batch", v->global_batch);
    cJSON_AddNumberToObject(o, "accumulate", v->accumulate);
    if (ph->pipeline_stages) {
        cJSON_AddNumberToObject(o, "pipeline_stages", ph->pipeline_stages);
        cJSON_AddNumberToObject(o, "micro_batches_simulated", ph->micro_batches);
    }
    cJSON_AddNumberToObject(o, "step_seconds", t);
    cJSON_AddNumberToObject(o, "samples_per_second", v->global_batch / t);
    cJSON_AddNumberToObject(o, "samples_per_second_per_ipu", v->global_batch / t / (s->chips_used * s->domains));
    if (v->samples_needed > 0) {
        double steps = ceil(v->samples_needed / v->global_batch);
        cJSON_AddNumberToObject(o, "samples_to_train", v->samples_needed);
        cJSON_AddNumberToObject(o, "steps_to_train", steps);
        cJSON_AddNumberToObject(o, "time_to_train_seconds", steps * t);
    }
    return o;
}

/* The MLPerf view of a training step of step_samples samples, from the
 * options (fatal on a global batch that is not a multiple of them). */
static mlperf_view make_mlperf_view(const char *input, bool is_model, double step_samples, double global_batch,
                                    double epochs, double samples, double dataset_samples)
{
    mlperf_view mv = { 0 };
    const char *family = is_model ? convergence_family(input) : NULL;
    mv.global_batch = global_batch > 0 ? global_batch : step_samples;
    mv.accumulate = mv.global_batch / step_samples;
    if (mv.accumulate != floor(mv.accumulate))
        fatal("%s: --global-batch %.0f is not a multiple of the %.0f samples a step simulated", input,
              mv.global_batch, step_samples);
    if (family && convergence_at(family, mv.global_batch, &mv.conv))
        mv.have_convergence = true;
    if (samples > 0) {
        mv.samples_needed = samples;
        mv.needed_from = "--samples";
    } else if (epochs > 0) {
        double per_epoch = dataset_samples > 0 ? dataset_samples : mv.have_convergence ? mv.conv.dataset_samples : 0;
        if (!(per_epoch > 0))
            fatal("%s: --epochs needs --dataset-samples N (no MLPerf dataset known for it)", input);
        mv.samples_needed = epochs * per_epoch;
        mv.needed_from = "--epochs";
        mv.have_convergence = false;
    } else if (mv.have_convergence) {
        mv.samples_needed = mv.conv.samples;
        mv.needed_from = "as MLPerf's references need";
    }
    return mv;
}

/* Why the ratio is what it is: each run's time as C / f + L, C the tile
 * cycles that scale with the clock f and L the seconds that do not
 * (IPU-Links, gateway, host, streaming memory, and the waits on them),
 * solved from the two runs (when their clocks differ). */
static bool ratio_parts(const compare_side *a, const compare_side *b, double *share, double *fixed)
{
    double fa = a->clock_hz, fb = b->clock_hz;
    if (fa == fb || !(a->seconds > 0))
        return false;
    double cycles = (a->seconds - b->seconds) / (1 / fa - 1 / fb);
    *fixed = a->seconds - cycles / fa;
    if (cycles < 0 || *fixed < -1e-3 * a->seconds)
        return false;                 /* the two runs do not fit the form (a different program) */
    if (*fixed < 0)
        *fixed = 0;
    *share = cycles / fa / a->seconds;
    return true;
}

static void explain_ratio(const compare_side *a, const compare_side *b)
{
    double fa = a->clock_hz, fb = b->clock_hz, share, fixed;
    if (!ratio_parts(a, b, &share, &fixed))
        return;
    char t[32];
    fmt_seconds(t, sizeof t, fixed);
    printf("  Of %s's time, %.1f%% is tile cycles, which scale with the clock, and %.1f%% (%s) is time on\n"
           "  IPU-Links, gateways, host and streaming memory, which does not: the clock ratio applies to\n"
           "  %.1f%% of it, 1 / (%.3f / %.3f + %.3f) = %.3fx.\n",
           a->m.name, 100 * share, 100 * (1 - share), t, 100 * share, share, fb / fa, 1 - share,
           1 / (share / (fb / fa) + (1 - share)));
}

/* The comparison's table: both machines side by side, with the ratio. */
static void print_report(const char *input, compare_side *a, compare_side *b, const program_phases *ph,
                         bool same_program, const mlperf_view *mv, double items, double items_b,
                         const char *item_name)
{
    printf("%s: %s vs %s\n\n", input, a->m.name, b->m.name);
    printf("  %-30s %16s %16s %10s\n", "", a->m.name, b->m.name, "B/A");
    row_number("chips", "%.0f", machine_get(&a->m, MP_chips), machine_get(&b->m, MP_chips));
    row_number("tiles per chip", "%.0f", machine_get(&a->m, MP_tiles_per_chip),
               machine_get(&b->m, MP_tiles_per_chip));
    row_number("tile clock (GHz)", "%.4g", machine_get(&a->m, MP_tile_clock_hz) / 1e9,
               machine_get(&b->m, MP_tile_clock_hz) / 1e9);
    row_number("cycles (chip that ends last)", "%.0f", (double)a->cycles, (double)b->cycles);
    row_seconds("time", a->seconds, b->seconds);
    if (items > 0) {
        char label[96];
        snprintf(label, sizeof label, "throughput (%s/s)", item_name);
        row_number(label, "%.4g", items / a->seconds, items_b / b->seconds);
    }
    if (ph->n && same_program)
        print_phases(ph, a, b);
    if (ph->samples && a->chips_used > 1 && phase_stats_find(ph, "all-reduce") < 0)
        printf("    (each chip's replica steps alone: this program has no gradient all-reduce)\n");
    if (ph->samples && same_program)
        print_mlperf(mv, ph, a, b, input);
    printf("\n  critical path (busiest tile of each superstep):\n");
    row_seconds("  compute", a->compute_s, b->compute_s);
    row_seconds("  exchange", a->exchange_s, b->exchange_s);
    row_seconds("  waiting for other chips", a->wait_s, b->wait_s);
    row_seconds("  sync", a->sync_s, b->sync_s);
    printf("\n  off-chip channels (busy time, all chips):\n");
    row_seconds("  IPU-Links", a->link_s, b->link_s);
    row_seconds("  host link", a->host_s, b->host_s);
    row_seconds("  streaming memory", a->stream_s, b->stream_s);
    if (a->domains > 1 || b->domains > 1) {
        row_seconds("  GW-Links (estimated)", a->gateway_s, b->gateway_s);
        printf("    (estimate: one IPU-Link domain of %u chips simulated, %u and %u domains in the systems; the\n"
               "    gradients' all-reduce across them, a ring over the GW-Links of %.4g KB a chip, added to the\n"
               "    time, and each step's samples counted for every domain)\n", a->chips_used, a->domains, b->domains,
               (a->domains > 1 ? a->gateway_bytes : b->gateway_bytes) / 1e3);
    }
    printf("\n");
    row_number("instructions", "%.4g", (double)a->instructions, (double)b->instructions);
    row_number("AMP MACs issued", "%.4g", (double)a->amp_macs, (double)b->amp_macs);
    row_number("AMP issued (% of peak)", "%.2f", 100 * a->amp_utilisation, 100 * b->amp_utilisation);
    if (a->amp.model_macs) {
        row_number("model MACs (matmul, conv)", "%.4g", (double)a->amp.model_macs,
                   (double)b->amp.model_macs);
        row_number("AMP useful (% of peak)", "%.2f", 100 * a->amp.useful_utilisation,
                   100 * b->amp.useful_utilisation);
    }
    row_number("exchange bytes sent", "%.4g", (double)a->exchange_bytes, (double)b->exchange_bytes);
    row_number("IPU-Link bytes", "%.4g", (double)a->link_bytes, (double)b->link_bytes);
    printf("\n  %s is %.3fx as fast as %s on this program (clock ratio %.3f).\n", b->m.name,
           a->seconds / b->seconds, a->m.name,
           machine_get(&b->m, MP_tile_clock_hz) / machine_get(&a->m, MP_tile_clock_hz));
    explain_ratio(a, b);
    printf("  simulation: %.3f + %.3f host s, %d host thread%s\n", a->host_seconds, b->host_seconds,
           a->host_threads, a->host_threads == 1 ? "" : "s");
}

/* --json: both machines' figures with their units. */
static void write_json(const char *json, const char *input, bool is_model, const compare_side *a,
                       const compare_side *b, const program_phases *ph, bool same_program, const mlperf_view *mv,
                       double items, double items_b, const char *item_name)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, is_model ? "model" : "executable", input);
    cJSON *ja = side_json(a, items, item_name), *jb = side_json(b, items_b, item_name);
    if (ph->samples && same_program) {
        cJSON_AddItemToObject(ja, "training_step", mlperf_json(mv, ph, a));
        cJSON_AddItemToObject(jb, "training_step", mlperf_json(mv, ph, b));
    }
    cJSON_AddItemToObject(root, "a", ja);
    cJSON_AddItemToObject(root, "b", jb);
    cJSON_AddNumberToObject(root, "speedup_b_over_a", a->seconds / b->seconds);
    double share, fixed;
    if (ratio_parts(a, b, &share, &fixed)) {
        cJSON *why = cJSON_AddObjectToObject(root, "ratio_explained");
        cJSON_AddNumberToObject(why, "a_clock_scaled_share", share);
        cJSON_AddNumberToObject(why, "a_unscaled_seconds", fixed);
    }
    char err[512];
    if (!cli_write_json(json, root, err, sizeof err))
        fatal("%s", err);
}

/* --machines A,B */
static void machines_value(const command *self, const char *v, char names[2][64])
{
    const char *comma = strchr(v, ',');
    if (!comma || comma == v || !comma[1] || strchr(comma + 1, ',') || (size_t)(comma - v) >= 64 ||
        strlen(comma + 1) >= 64)
        cli_usage_error(self, "--machines expects two machine names A,B, got '%s'", v);
    snprintf(names[0], 64, "%.*s", (int)(comma - v), v);
    snprintf(names[1], 64, "%s", comma + 1);
}

int cmd_compare(int argc, char **argv, const command *self)
{
    char err[2048];
    const char *input = NULL, *json = NULL, *chart = NULL, *item_name = "items";
    char names[2][64] = { "m2000", "bow2000" };
    const char *sets[64];
    unsigned n_sets = 0;
    input_spec inputs[16];
    unsigned n_inputs = 0;
    double items = 0, global_batch = 0, epochs = 0, samples = 0, dataset_samples = 0;
    int threads = 0;
    lower_options lo = { 0 };
    bool fuse = true, compile_given = false;
    cli_train t;
    cli_train_init(&t);
    for (int i = 1; i < argc; i++) {
        if (cli_compile_option(self, &lo, &fuse, argc, argv, &i) || cli_train_option(self, &t, argc, argv, &i)) {
            compile_given = true;
            continue;
        }
        if (!strcmp(argv[i], "--machines")) {
            machines_value(self, cli_value(self, argc, argv, &i), names);
        } else if (!strcmp(argv[i], "--set")) {
            if (n_sets == 64)
                fatal("compare: at most 64 --set options");
            sets[n_sets++] = cli_value(self, argc, argv, &i);
        } else if (!strcmp(argv[i], "--items")) {
            items = cli_number_value(self, argv[i], argc, argv, &i, true);
        } else if (!strcmp(argv[i], "--global-batch")) {
            global_batch = cli_number_value(self, argv[i], argc, argv, &i, true);
        } else if (!strcmp(argv[i], "--epochs")) {
            epochs = cli_number_value(self, argv[i], argc, argv, &i, true);
        } else if (!strcmp(argv[i], "--samples")) {
            samples = cli_number_value(self, argv[i], argc, argv, &i, true);
        } else if (!strcmp(argv[i], "--dataset-samples")) {
            dataset_samples = cli_number_value(self, argv[i], argc, argv, &i, true);
        } else if (!strcmp(argv[i], "--item-name"))
            item_name = cli_value(self, argc, argv, &i);
        else if (!strcmp(argv[i], "--threads")) {
            threads = cli_threads_value(self, argc, argv, &i);
        } else if (!strcmp(argv[i], "--json"))
            json = cli_value(self, argc, argv, &i);
        else if (!strcmp(argv[i], "--chart"))
            chart = cli_value(self, argc, argv, &i);
        else if (!strcmp(argv[i], "--input")) {
            const char *v = cli_value(self, argc, argv, &i);
            const char *eq = strchr(v, '=');
            const char *end = NULL;
            uint64_t n = 0;
            if (!eq || !cli_parse_u64(v, 0xffffff, &n, &end) || end != eq || !eq[1])
                cli_usage_error(self, "--input expects STREAM=FILE, got '%s'", v);
            if (n_inputs == 16)
                fatal("compare: at most 16 --input options");
            inputs[n_inputs++] = (input_spec){ (uint32_t)n, eq + 1 };
        } else
            cli_positional(self, argv[i], &input);
    }
    cli_require_positional(self, input, "no executable or model given");
    bool is_model = cli_is_model(input);
    if (compile_given && !is_model)
        cli_usage_error(self, "compile and --train options are for a MODEL; '%s' is an executable", input);
    if (epochs > 0 && samples > 0)
        cli_usage_error(self, "--epochs and --samples both say how much to train: give one%s", "");
    if (json && chart && cli_same_output(json, chart))
        cli_usage_error(self, "--json and --chart write the same file '%s'", chart);
    if ((json && !cli_check_output(json, err, sizeof err)) || (chart && !cli_check_output(chart, err, sizeof err)))
        fatal("%s", err);

    compare_side side[2];
    memset(side, 0, sizeof side);
    for (int k = 0; k < 2; k++) {
        if (!machine_preset(names[k], &side[k].m, err, sizeof err))
            fatal("%s", err);
        for (unsigned i = 0; i < n_sets; i++)
            if (!machine_set(&side[k].m, sets[i], err, sizeof err))
                fatal("%s", err);
    }
    machine *ms[] = { &side[0].m, &side[1].m };
    ipu_exe *exe[2] = { NULL, NULL };
    if (is_model) {
        exe[0] = compile_for(input, &side[0].m, lo, fuse, &t);
        exe[1] = same_shape(&side[0].m, &side[1].m) ? exe[0] : compile_for(input, &side[1].m, lo, fuse, &t);
        if (exe[1] == exe[0])
            printf("(the same program on both: their chips, tiles and tile memory are alike)\n");
        printf("\n");
    } else {
        exe[0] = exe[1] = cli_read_program(input, ms, 2, false);
    }
    program_phases ph[2];
    double side_items[2];
    const char *side_item_name[2];
    for (int k = 0; k < 2; k++) {
        side_items[k] = items;
        side_item_name[k] = item_name;
        read_phases(exe[k], input, &side[k].m, &ph[k], &side_items[k], &side_item_name[k]);
    }
    uint32_t domains[2] = { machine_u32(&side[0].m, MP_ipu_link_domains),
                            machine_u32(&side[1].m, MP_ipu_link_domains) };
    if (ph[0].samples && domains[0] != domains[1])
        fatal("%s: %s has %u IPU-Link domain%s and %s %u: a training step is compared on systems of as many "
              "domains (POD64s)", input, side[0].m.name, domains[0], domains[0] == 1 ? "" : "s", side[1].m.name,
              domains[1]);
    items = side_items[0];
    item_name = side_item_name[0];

    /* What one step stands for, checked before anything runs. */
    mlperf_view mv = { 0 };
    if (ph[0].samples)
        mv = make_mlperf_view(input, is_model, (double)ph[0].samples, global_batch, epochs, samples, dataset_samples);
    else if (global_batch > 0 || epochs > 0 || samples > 0)
        fatal("%s: --global-batch, --epochs and --samples are of a training step (compile with --train)", input);

    int rc = 0;
    for (int k = 0; k < 2 && rc == 0; k++) {
        if (isatty(2))
            fprintf(stderr, "ipusim compare: running on %s...\n", side[k].m.name);
        rc = run_side(&side[k], exe[k], &ph[k], inputs, n_inputs, threads, err, sizeof err);
        if (rc)
            fprintf(stderr, "ipusim: %s: %s\n", input, err);
    }
    if (rc == 0) {
        compare_side *a = &side[0], *b = &side[1];
        print_report(input, a, b, &ph[0], exe[0] == exe[1], &mv, items, side_items[1], item_name);
        if (chart) {
            char title[256];
            snprintf(title, sizeof title, "%s: %s vs %s", input, a->m.name, b->m.name);
            if (!write_chart(chart, a, b, title, ph[0].n && exe[0] == exe[1] ? &ph[0] : NULL, err, sizeof err))
                fatal("%s", err);
        }
        if (json)
            write_json(json, input, is_model, a, b, &ph[0], exe[0] == exe[1], &mv, items, side_items[1], item_name);
    }
    for (int k = 0; k < 2; k++)
        if (side[k].g)
            engine_free(side[k].g);
    if (exe[1] != exe[0])
        exe_free(exe[1]);
    exe_free(exe[0]);
    return rc;
}
