/*
 * compile_cmd.c — `ipusim compile MODEL -o PROG.elf`: a model (an ONNX
 * file or a built-in, workloads/models/models.h) through import, inference,
 * fusion and the planner/lowering (lower.h) into an executable, with a
 * report of the plan; the compile options and the loading of a model,
 * shared with `validate --model`.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "frontends/decompose.h"
#include "frontends/fusion.h"
#include "frontends/lower.h"
#include "frontends/onnx_import.h"
#include "commands.h"
#include "sim/base/diag.h"
#include "sim/program/machine.h"
#include "workloads/models/models.h"

/* What may make a model that does not fit fit: f16 weights and
 * operands, or the layers spread over the machine's chips. */
static const char *fit_hint(const lower_options *o)
{
    bool chips = machine_u32(o->machine, MP_chips) > 1 && !o->pipeline;
    if (!o->f16_matmul)
        return chips ? " (--f16-matmul halves the matmuls' weights and operands; --pipeline N spreads the layers "
                       "over N chips)" : " (--f16-matmul halves the matmuls' weights and operands)";
    return chips ? " (--pipeline N spreads the layers over N chips)"
                 : " (on a machine of several chips, --pipeline N spreads the layers over them)";
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char *default_output(const char *model)
{
    const char *base = strrchr(model, '/');
    base = base ? base + 1 : model;
    size_t n = strcspn(base, ".:");
    char *out = malloc(n + 5);
    if (!out)
        fatal("out of memory");
    memcpy(out, base, n);
    strcpy(out + n, ".elf");
    return out;
}

bool cli_compile_option(const command *self, lower_options *o, bool *fuse, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    if (!strcmp(a, "--tiles") || !strcmp(a, "--replicas") || !strcmp(a, "--pipeline")) {
        const char *v = cli_value(self, argc, argv, i);
        uint64_t n;
        bool tiles = a[2] == 't';
        if (!cli_parse_u64(v, tiles ? 1u << 20 : 64u, &n, NULL) || n == 0) {
            if (tiles)
                cli_usage_error(self, "--tiles: '%s' is not a tile count", v);
            cli_usage_error(self, "%s: not a count of chips (1..64)", a);
        }
        *(tiles ? &o->tiles : a[2] == 'r' ? &o->replicas : &o->pipeline) = (uint32_t)n;
    } else if (!strcmp(a, "--serial-pipeline")) {
        o->serial_pipeline = true;
    } else if (!strcmp(a, "--share-programs")) {
        o->share_programs = true;
    } else if (!strcmp(a, "--no-share-programs")) {
        o->no_share_programs = true;
    } else if (!strcmp(a, "--f16-matmul")) {
        o->f16_matmul = true;
    } else if (!strcmp(a, "--partials")) {
        const char *v = cli_value(self, argc, argv, i);
        if (strcmp(v, "half") && strcmp(v, "float"))
            cli_usage_error(self, "--partials: expected half or float, got '%s'", v);
        o->half_partials = !strcmp(v, "half");
    } else if (!strcmp(a, "--no-fuse")) {
        *fuse = false;
    } else if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) {
        o->verbose = true;
    } else {
        return false;
    }
    return true;
}

bool cli_is_model(const char *input)
{
    if (models_is_builtin(input))
        return true;
    size_t len = strlen(input);
    bool onnx = len > 5 && !strcmp(input + len - 5, ".onnx");
    /* a pipe is read once, by whoever takes it: only its name tells */
    struct stat st;
    if (stat(input, &st) != 0 || !S_ISREG(st.st_mode))
        return onnx;
    FILE *f = fopen(input, "rb");
    if (!f)
        return onnx;
    unsigned char magic[4] = { 0 };
    size_t n = fread(magic, 1, 4, f);
    fclose(f);
    return !(n == 4 && !memcmp(magic, "\177ELF", 4)) && onnx;
}

void cli_check_compile_options(const char *model, const lower_options *o)
{
    const machine *m = o->machine;
    uint32_t per_chip = machine_u32(m, MP_tiles_per_chip), chips = machine_u32(m, MP_chips);
    if (o->tiles > per_chip)
        fatal("%s: --tiles %u: a chip of machine %s has %u tiles", model, o->tiles, m->name, per_chip);
    uint32_t stages = o->pipeline ? o->pipeline : 1;
    if (stages > chips)
        fatal("%s: %u pipeline stages on a machine of %u chip%s", model, stages, chips, chips == 1 ? "" : "s");
    uint32_t replicas = o->replicas ? o->replicas : 1;
    if (replicas * stages > chips)
        fatal("%s: %u replicas%s on a machine of %u chip%s", model, replicas, stages > 1 ? " of a pipeline" : "",
              chips, chips == 1 ? "" : "s");
}

void cli_train_init(cli_train *t)
{
    memset(t, 0, sizeof *t);
    train_options_default(&t->o);
}

double cli_number_value(const command *self, const char *opt, int argc, char **argv, int *i, bool positive)
{
    const char *v = cli_value(self, argc, argv, i);
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (*end || end == v || errno || !isfinite(x) || x < 0 || (positive && x == 0)) {
        char what[96];
        snprintf(what, sizeof what, "%s: '%%s' is not a %s number", opt, positive ? "positive" : "non-negative");
        cli_usage_error(self, what, v);
    }
    return x;
}

bool cli_train_option(const command *self, cli_train *t, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    if (!strcmp(a, "--train")) {
        t->train = true;
        return true;
    }
    if (!strcmp(a, "--loss")) {
        t->o.loss = cli_value(self, argc, argv, i);
    } else if (!strcmp(a, "--optimizer")) {
        const char *v = cli_value(self, argc, argv, i);
        if (!train_optimizer_parse(v, &t->o.optimizer))
            cli_usage_error(self, "--optimizer: '%s' is not sgd, adam, lamb or lars", v);
    } else if (!strcmp(a, "--lr")) {
        t->o.lr = cli_number_value(self, a, argc, argv, i, true);
    } else if (!strcmp(a, "--momentum")) {
        t->o.momentum = cli_number_value(self, a, argc, argv, i, false);
        if (t->o.momentum >= 1)
            cli_usage_error(self, "--momentum: '%s' is not below 1", argv[*i]);
    } else if (!strcmp(a, "--weight-decay")) {
        t->o.weight_decay = cli_number_value(self, a, argc, argv, i, false);
    } else if (!strcmp(a, "--loss-scale")) {
        t->o.loss_scale = cli_number_value(self, a, argc, argv, i, true);
    } else if (!strcmp(a, "--delay-updates")) {
        t->o.delay_updates = true;
    } else if (!strcmp(a, "--accumulate")) {
        const char *v = cli_value(self, argc, argv, i);
        uint64_t n;
        if (!cli_parse_u64(v, 4096, &n, NULL) || n == 0)
            cli_usage_error(self, "--accumulate: '%s' is not a count of micro-batches (1..4096)", v);
        t->o.micro_batches = (uint32_t)n;
    } else if (!strcmp(a, "--f16-weights")) {
        t->o.f16_weights = true;
    } else if (!strcmp(a, "--f16-optimizer-state")) {
        t->o.f16_optimizer_state = true;
    } else if (!strcmp(a, "--recompute")) {
        t->o.recompute = true;
    } else if (!strcmp(a, "--optimizer-state-offchip")) {
        t->o.optimizer_state_offchip = true;
    } else if (!strcmp(a, "--no-stochastic-rounding")) {
        t->o.stochastic_rounding = false;
    } else {
        return false;
    }
    t->given = true;
    return true;
}

/* The replicas a program for o will have (lower_graph's rule): --replicas,
 * else one a chip unless the chips are a pipeline's stages. */
static uint32_t replicas_of(const lower_options *o)
{
    if (o->replicas)
        return o->replicas;
    return o->pipeline > 1 ? 1 : machine_u32(o->machine, MP_chips);
}

graph *cli_load_model(const char *model, bool fuse, const cli_train *t, lower_options *lo, train_info *info)
{
    char err[4096];
    graph *g;
    bool train = t && t->train;
    if (t && t->given && !train)
        fatal("%s: --loss, --optimizer, --lr, --momentum, --weight-decay, --loss-scale, --delay-updates, "
              "--accumulate, --f16-weights, --no-stochastic-rounding, --f16-optimizer-state, --optimizer-state-offchip "
              "and --recompute need --train", model);
    if (lo && lo->serial_pipeline && !(train && lo->pipeline > 1))
        fatal("%s: --serial-pipeline is of a pipelined training step: it needs --train and --pipeline N", model);
    if (lo && lo->share_programs && !(train && lo->pipeline > 1 && !lo->serial_pipeline))
        fatal("%s: --share-programs is of a pipelined training step's overlapped micro-batches: it needs --train and "
              "--pipeline N (without --serial-pipeline)", model);
    if (lo && lo->share_programs && lo->no_share_programs)
        fatal("%s: --share-programs and --no-share-programs: give one", model);
    if (lo && lo->no_share_programs && !(train && lo->pipeline > 1 && !lo->serial_pipeline))
        fatal("%s: --no-share-programs is of a pipelined training step's overlapped micro-batches: it needs --train "
              "and --pipeline N (without --serial-pipeline)", model);
    /* an overlapped pipeline shares its stages' programs between micro-batches, as Poplar runs
     * one program of a stage's pass for each */
    if (lo && train && lo->pipeline > 1 && !lo->serial_pipeline && !lo->no_share_programs)
        lo->share_programs = true;
    if (t && t->o.recompute && !(train && lo && lo->pipeline > 1))
        fatal("%s: --recompute is of a pipelined training step: it needs --train and --pipeline N", model);
    if (t && !t->o.stochastic_rounding && !t->o.f16_weights)
        fatal("%s: --no-stochastic-rounding is of the f16 weights' update: it needs --f16-weights", model);
    train_options o = train ? t->o : (train_options){ 0 };
    o.replicas = train ? replicas_of(lo) : 0;
    o.stages = train && lo->pipeline > 1 ? lo->pipeline : 0;
    if (models_is_builtin(model)) {
        /* the models MLPerf trains are built for training, with their labels and loss */
        g = train ? models_build_training(model, err, sizeof err) : NULL;
        if (g && !o.loss)
            o.loss = models_training_loss(g);
        if (!g && train && !strstr(err, "no built-in training model"))
            fatal("%s", err);
        if (!g)
            g = models_build(model, err, sizeof err);
    } else {
        enum onnx_status st;
        g = onnx_import_file(model, NULL, &st, err, sizeof err);
    }
    if (!g)
        fatal("%s", err);
    if (train) {
        if (!o.loss && (g->n_outputs < 1 || graph_shape_numel(&g->tensors[g->outputs[0]].shape) != 1))
            fatal("%s: --train needs --loss KIND:OUTPUT:LABELS (softmax-ce, nll) or mse:OUTPUT:TARGET: the model's "
                  "first output '%s' is not a scalar loss", model, g->n_outputs ? g->tensors[g->outputs[0]].name : "");
        if (!train_prepare(g, &o, fuse, info, err, sizeof err))
            fatal("%s", err);
        return g;
    }
    if (fuse && !fusion_run_all(g, NULL, err, sizeof err))
        fatal("%s", err);
    if (!decompose_graph(g, NULL, err, sizeof err))
        fatal("%s", err);
    return g;
}

void cli_print_training(const graph *g, const cli_train *t, const train_info *info)
{
    const train_options *o = &t->o;
    printf("training step: loss '%s' (%s); %d weights (%lld elements) updated by %s, lr %g", g->tensors[g->outputs[0]].name,
           o->loss ? o->loss : "the model's first output", info->weights, info->weight_elements,
           train_optimizer_name(o->optimizer), o->lr);
    if (o->momentum)
        printf(", momentum %g", o->momentum);
    if (o->weight_decay)
        printf(", weight decay %g", o->weight_decay);
    if (o->loss_scale != 1)
        printf(", loss scale %g", o->loss_scale);
    if (o->f16_weights)
        printf(", f16 weights (updated in f32, rounded %s)", o->stochastic_rounding ? "stochastically" : "to nearest");
    if (o->f16_optimizer_state && info->state)
        printf(", optimizer state in f16");
    if (o->optimizer_state_offchip && info->state)
        printf(", optimizer state in streaming memory");
    if (g->micro_batches > 1)
        printf(", %u micro-batches accumulated", g->micro_batches);
    if (g->pipeline_stages > 1)
        printf(", a pipeline of %u stages in %u cycles%s", g->pipeline_stages, g->pipeline_cycles,
               o->recompute ? " (the stages' forward passes recomputed in their backward passes)" : "");
    printf("; %d optimizer state variables; nodes: %d forward, %d backward, %d update\n", info->state,
           info->forward_nodes, info->backward_nodes, info->update_nodes);
}

/* The progress of a compile on a terminal: the op being lowered, every
 * half second (a second lowering, with more room held back, starts again). */
typedef struct compile_progress {
    double start_s, next_s, lower_s;  /* the compile's start, the next report, the first op lowered */
    uint32_t last, pass;
    bool shown;
} compile_progress;

static void show_progress(void *ctx, uint32_t done, uint32_t total)
{
    compile_progress *c = ctx;
    if (done < c->last || !c->pass)
        c->pass++;
    c->last = done;
    double now = now_seconds();
    if (!c->lower_s)
        c->lower_s = now;
    if (now < c->next_s || (!c->shown && now - c->start_s < 0.5))
        return;
    c->next_s = now + 0.5;
    double per_op = (now - c->lower_s) / done;
    fprintf(stderr, "\r\033[Kipusim: lowering op %u of %u%s, %.1f host s", done, total,
            c->pass > 1 ? " (again, with room held back)" : "", now - c->start_s);
    if (c->pass == 1 && done < total)
        fprintf(stderr, ", about %.0f s left", per_op * (total - done));
    fflush(stderr);
    c->shown = true;
}

int cmd_compile(int argc, char **argv, const command *self)
{
    machine m;
    char err[4096];
    if (!machine_preset("gc200", &m, err, sizeof err))
        panic("%s", err);
    const char *model = NULL, *out = NULL;
    lower_options o = { 0 };
    bool fuse = true;
    cli_train t;
    cli_train_init(&t);
    for (int i = 1; i < argc; i++) {
        if (cli_machine_option(self, &m, argc, argv, &i) || cli_compile_option(self, &o, &fuse, argc, argv, &i) ||
            cli_train_option(self, &t, argc, argv, &i))
            continue;
        if (!strcmp(argv[i], "-o"))
            out = cli_value(self, argc, argv, &i);
        else
            cli_positional(self, argv[i], &model);
    }
    cli_require_positional(self, model, "no model given");
    o.machine = &m;
    o.compact_replicas = true;    /* written, not run: the reader makes the replicas */
    compile_progress cp = { .start_s = now_seconds() };
    if (isatty(STDERR_FILENO)) {
        o.progress = show_progress;
        o.progress_ctx = &cp;
    }
    cli_check_compile_options(model, &o);
    char *def = out ? NULL : default_output(model);
    if (!cli_check_output(out ? out : def, err, sizeof err))
        fatal("%s", err);
    double t0 = now_seconds();
    train_info info;
    graph *g = cli_load_model(model, fuse, &t, &o, &info);
    lower_report rep;
    ipu_exe *e = lower_graph(g, &o, &rep, err, sizeof err);
    if (cp.shown)
        fprintf(stderr, "\r\033[K");
    if (!e && strstr(err, ": does not fit: "))
        fatal("%s%s", err, fit_hint(&o));
    if (!e)
        fatal("%s", err);
    if (!exe_write(e, out ? out : def, err, sizeof err))
        fatal("%s", err);
    double t1 = now_seconds();
    printf("%s -> %s for %s: %u ops, %u compute sets, %u exchange phases, %.3g MB received by tiles from other tiles "
           "a replica (a broadcast counted at each receiver)\n",
           model, out ? out : def, m.name, rep.ops, rep.compute_sets, rep.exchange_phases,
           (double)rep.exchange_bytes / 1e6);
    if (t.train)
        cli_print_training(g, &t, &info);
    if (rep.stages > 1)
        printf("pipeline: %u stages, one a chip\n", rep.stages);
    char each[48] = "one a chip";
    if (rep.stages > 1)
        snprintf(each, sizeof each, "one a pipeline of %u chips", rep.stages);
    printf("tiles: %u a chip, %u replica%s (%s); fullest tile %u uses %llu of %llu bytes (%.1f%%); host "
           "streams a replica: %u in, %u out\n", rep.tiles_used, rep.replicas, rep.replicas == 1 ? "" : "s", each,
           rep.max_tile, (unsigned long long)rep.max_tile_bytes, (unsigned long long)rep.memory_bytes,
           100.0 * (double)rep.max_tile_bytes / (double)rep.memory_bytes, rep.input_streams, rep.output_streams);
    if (machine_u32(o.machine, MP_ipu_link_domains) > 1)
        printf("%s: %u IPU-Link domains of %u chips: the program is one domain's (the domains run it alike; "
               "compare estimates the whole system, the all-reduce across the domains over the GW-Links "
               "modelled)\n", o.machine->name, machine_u32(o.machine, MP_ipu_link_domains),
               machine_u32(o.machine, MP_chips));
    printf("tensor storage: %.3g MB a chip placed where dead tensors were (a tensor's memory goes back to its "
           "tiles after its last reader), %.3g MB of it where past ops' scratch was; ops' scratch: %.3g MB in dead "
           "tensors' blocks\n", (double)rep.reused_bytes / 1e6, (double)rep.reused_scratch_bytes / 1e6,
           (double)rep.lent_bytes / 1e6);
    if (rep.program_tiles)
        printf("control programs: %.1f KB a tile on average, %.1f KB the most (the exchange's sends and receives, "
               "compute sets, syncs); vertex records: %.1f KB on average, %.1f KB the most (%.3g MB a replica not "
               "stored: %.3g MB as one record six workers share, %.3g MB as records another compute set on the tile "
               "has); kernel library %.1f KB\n",
               (double)rep.control_bytes / rep.program_tiles / 1e3, (double)rep.max_control_bytes / 1e3,
               (double)rep.record_bytes / rep.program_tiles / 1e3, (double)rep.max_record_bytes / 1e3,
               (double)(rep.merged_record_bytes + rep.shared_record_bytes) / 1e6,
               (double)rep.merged_record_bytes / 1e6, (double)rep.shared_record_bytes / 1e6,
               (double)rep.library_bytes / 1e3);
    if (o.share_programs)
        printf("shared programs: %u sections ran an earlier alike section's control program on %llu of their tiles "
               "(%.1f KB a tile saved on average)\n", rep.shared_sections, (unsigned long long)rep.shared_section_tiles,
               rep.program_tiles ? (double)rep.shared_control_bytes / rep.program_tiles / 1e3 : 0.0);
    if (rep.lowerings > 1)
        printf("lowered %u times: the first left a tile too little room for its vertex records and control "
               "program, held back on every tile from the start the next time\n", rep.lowerings);
    if (rep.updates_in_place + rep.updates_copied)
        printf("variables: %u updated in place by the optimizer's last op, %u copied in at the end of the step%s",
               rep.updates_in_place, rep.updates_copied, rep.folded_casts ? "; " : "\n");
    if (rep.folded_casts)
        printf("%u f16 weights read as they are by their matmuls and convolutions (no f32 copy)\n", rep.folded_casts);
    if (rep.streaming_variables)
        printf("streaming memory: %u optimizer state variables, %.3f MB a replica, each loaded for its weight's "
               "update and stored back (%.3f MB moved a step)\n", rep.streaming_variables,
               (double)rep.streaming_bytes / 1e6, 2.0 * (double)rep.streaming_bytes / 1e6);
    if (rep.serialised_matmuls) {
        printf("serialised: %u matmuls no grid fit at once computed in %u parts one after another", rep.serialised_matmuls,
               rep.serial_parts);
        if (rep.accumulated_in_parts)
            printf(", %u of them each part added into its running sum over the micro-batches as it is made",
                   rep.accumulated_in_parts);
        printf(" (--verbose: which)\n");
    }
    if (rep.split_programs)
        printf("control programs in two blocks (no region had room for one): %u tiles\n", rep.split_programs);
    struct stat st;
    if (stat(out ? out : def, &st) == 0 && S_ISREG(st.st_mode))
        printf("executable: %.4g MB (each distinct section content once: %.4g MB of %.4g MB of sections%s)\n",
               (double)st.st_size / 1e6, (double)exe_distinct_bytes(e) / 1e6,
               (double)exe_section_bytes(e) * (e->replicas.count > 1 ? e->replicas.count : 1) / 1e6,
               e->replicas.count > 1 ? ", the replicas' included: replica 0's and the words each changes" : "");
    printf("compile time: %.2f s\n", t1 - t0);
    free(def);
    exe_free(e);
    graph_free(g);
    return 0;
}
