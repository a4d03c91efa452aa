/*
 * debugger.c — the debugger's life (see debugger.h): making and freeing it,
 * the inputs of its runs, and the engine it owns.
 *
 * The debugger owns one engine at a time: `run` makes a fresh one (a run
 * cannot be rewound), applies the inputs, breakpoints and watchpoints, and
 * steps it with engine_continue.  Stops the engine reports (engine.h:
 * engine_pause) are matched to the user's breakpoints in debugger_run.c: a
 * superstep break pauses the engine at every superstep end and goes on
 * unless the superstep is the one asked for; a watchpoint makes its tile
 * run in slow mode with a check after each issue and after each event
 * (exchange data landing).  Cycle breakpoints fire once per run.
 *
 * Approximations: registers and CSRs are shown as stored in the context
 * ($COUNT_L/U and $PC are derived from the tile's cycle and pc); memory
 * reads see tile memory as it is, so data an exchange phase has not
 * delivered yet is not there.
 *
 * debugger_internal.h lists the other files and what each holds.
 */
#include "debugger_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/fileio.h"

#include "sim/engine/program_io.h"

/* A fresh engine with the breakpoints set (not started). */
bool dbg_new_engine(debugger *d, char *err, size_t err_size)
{
    engine *g = engine_new(&d->m, d->e, err, err_size);
    if (!g)
        return false;
    dbg_drop_checkpoints(d);
    engine_free(d->g);
    d->g = g;
    d->started = false;
    d->ss_seen = 0;
    for (size_t i = 0; i < d->n_bps; i++) {
        breakpoint *b = &d->bps[i];
        b->passed = false;
        for (size_t k = 0; k < b->n_locs; k++)
            engine_set_breakpoint(g, b->locs[k].tile, b->locs[k].pc, true);
        if (b->kind == BP_WATCH)
            dbg_snapshot_watch(d, b);
    }
    dbg_set_access_watches(d, true);
    return true;
}

/* Feed the inputs and start the engine. */
bool dbg_start(debugger *d, FILE *out)
{
    char err[512];
    for (size_t i = 0; i < d->n_inputs; i++) {
        const dbg_input *in = &d->inputs[i];
        const tmap_tensor *t = d->tmap ? tmap_find(d->tmap, in->what) : NULL;
        if (t) {
            if (!program_set_input(d->g, t, in->data, in->size, err, sizeof err)) {
                dbg_fail(out, "input '%s': %s", in->what, err);
                return false;
            }
        } else if (!engine_set_host_input(d->g, (uint32_t)strtoul(in->what, NULL, 0), in->data, in->size)) {
            dbg_fail(out, "out of host memory for input %s", in->what);
            return false;
        }
    }
    if (d->tmap) {
        /* The inputs not given: the same pseudo-random values `run` uses. */
        const char **given = calloc(d->n_inputs + 1, sizeof *given);
        if (!given) {
            dbg_fail(out, "out of host memory");
            return false;
        }
        for (size_t i = 0; i < d->n_inputs; i++)
            given[i] = d->inputs[i].what;
        bool ok = program_fill_inputs(d->g, d->tmap, given, d->n_inputs, out, "note: ", err, sizeof err);
        free(given);
        if (!ok) {
            dbg_fail(out, "%s", err);
            return false;
        }
    }
    engine_options o = { .max_cycles = d->opt.max_cycles, .threads = d->opt.threads, .trace_tile_first = 1 };
    if (engine_start(d->g, &o) != ENGINE_DONE) {
        dbg_fail(out, "%s", engine_message(d->g));
        return false;
    }
    d->started = true;
    dbg_checkpoint_at_start(d);
    return true;
}

debugger *debugger_new(const machine *m, const ipu_exe *e, const char *name, const debugger_options *o, char *err,
                       size_t err_size)
{
    debugger *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, err_size, "out of host memory");
        return NULL;
    }
    d->m = *m;
    d->e = e;
    d->name = strdup(name ? name : "program");
    if (o)
        d->opt = *o;
    if (d->opt.no_checkpoints)
        d->opt.checkpoint_every = 0;
    if (!d->opt.checkpoint_budget_bytes)
        d->opt.checkpoint_budget_bytes = DEBUGGER_CHECKPOINT_BUDGET_BYTES;
    d->next_id = 1;
    err[0] = 0;
    d->tmap = program_tensor_map(e, d->name, err, err_size);
    if ((!d->tmap && err[0]) || !d->name || !dbg_new_engine(d, err, err_size)) {
        if (!d->name)
            snprintf(err, err_size, "out of host memory");
        debugger_free(d);
        return NULL;
    }
    d->tile = engine_tile_at(d->g, 0)->tile_id;
    return d;
}

void debugger_free(debugger *d)
{
    if (!d)
        return;
    dbg_drop_checkpoints(d);
    engine_free(d->g);
    dbg_complete_free(d);
    tmap_free(d->tmap);
    dbg_free_breakpoints(d);
    for (size_t i = 0; i < d->n_inputs; i++) {
        free(d->inputs[i].what);
        free(d->inputs[i].data);
    }
    free(d->inputs);
    dbg_free_displays(d);
    free(d->name);
    free(d);
}

/* What an input names: a host stream (a number; *t NULL) or an input
 * tensor of the program (*t); false with err when it is neither. */
static bool input_target(const debugger *d, const char *what, const tmap_tensor **t, char *err, size_t err_size)
{
    uint32_t stream;
    *t = NULL;
    if (dbg_parse_u32(what, &stream))
        return true;
    *t = d->tmap ? tmap_find(d->tmap, what) : NULL;
    if (!*t || !((*t)->role & TMAP_INPUT)) {
        snprintf(err, err_size, "%s has no input tensor '%s'%s", d->name, what,
                 d->tmap ? "" : " (it has no tensor map: use a stream number)");
        return false;
    }
    return true;
}

bool debugger_add_input(debugger *d, const char *what, const void *data, size_t size, char *err, size_t err_size)
{
    const tmap_tensor *t;
    if (!input_target(d, what, &t, err, err_size))
        return false;
    if (t && program_tensor_bytes(t) != size) {
        snprintf(err, err_size, "input '%s' has %zu bytes, the tensor has %llu", what, size,
                 (unsigned long long)program_tensor_bytes(t));
        return false;
    }
    dbg_input *grown = realloc(d->inputs, (d->n_inputs + 1) * sizeof *d->inputs);
    if (!grown) {
        snprintf(err, err_size, "out of host memory");
        return false;
    }
    d->inputs = grown;
    dbg_input *in = &d->inputs[d->n_inputs];
    in->what = strdup(what);
    in->data = malloc(size ? size : 1);
    in->size = size;
    if (!in->what || !in->data) {
        free(in->what);
        free(in->data);
        snprintf(err, err_size, "out of host memory");
        return false;
    }
    if (size)
        memcpy(in->data, data, size);
    d->n_inputs++;
    return true;
}

bool debugger_add_input_file(debugger *d, const char *what, const char *path, char *err, size_t err_size)
{
    uint64_t limit = READ_LIMIT_HOST_STREAM;
    char limit_what[300];
    snprintf(limit_what, sizeof limit_what, "a host stream's input may have");
    const tmap_tensor *t;
    if (!input_target(d, what, &t, err, err_size))
        return false;
    if (t) {
        limit = program_tensor_bytes(t);
        snprintf(limit_what, sizeof limit_what, "tensor '%s' takes", what);
    }
    char *data;
    size_t size;
    if (!read_file_limited(path, limit, limit_what, READ_STREAMS, &data, &size, err, err_size))
        return false;
    bool ok = debugger_add_input(d, what, data, size, err, err_size);
    free(data);
    return ok;
}

void debugger_set_interrupt(debugger *d, volatile int *flag) { d->interrupt = flag; }
engine *debugger_engine(const debugger *d) { return d->g; }
uint32_t debugger_tile(const debugger *d) { return d->tile; }
unsigned debugger_context(const debugger *d) { return d->context; }
