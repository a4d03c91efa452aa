/*
 * simulate.c — compile and run a graph in-process (simulate.h).
 */
#include "simulate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine/engine.h"
#include "sim/engine/program_io.h"

/* The PRNG state of every context of every loaded tile, in the engine's
 * tile order: carried from one run to the next, as the hardware's
 * generators run on between poplar::Engine::run calls (a new engine seeds
 * them afresh, which would give every step the same random bits). */
typedef struct prng_carry {
    uint64_t *state;              /* tiles x ISA_CONTEXTS x 2; NULL before the first run */
    size_t n_tiles;
} prng_carry;

static void prng_restore(engine *eng, const prng_carry *pc)
{
    if (!pc || !pc->state || pc->n_tiles != engine_tile_count(eng))
        return;
    for (size_t i = 0; i < pc->n_tiles; i++) {
        ipu_tile *t = engine_tile_mut(eng, engine_tile_at(eng, i)->tile_id);
        for (int k = 0; k < ISA_CONTEXTS; k++)
            memcpy(t->s.ctx[k].prng, pc->state + (i * ISA_CONTEXTS + (size_t)k) * 2, sizeof t->s.ctx[k].prng);
    }
}

static bool prng_save(const engine *eng, prng_carry *pc, char *err, size_t err_size)
{
    size_t n = engine_tile_count(eng);
    if (!pc->state) {
        pc->state = malloc(n * ISA_CONTEXTS * 2 * sizeof *pc->state + 1);
        if (!pc->state) {
            snprintf(err, err_size, "out of host memory");
            return false;
        }
        pc->n_tiles = n;
    }
    for (size_t i = 0; i < n; i++) {
        const ipu_tile *t = engine_tile_at(eng, i);
        for (int k = 0; k < ISA_CONTEXTS; k++)
            memcpy(pc->state + (i * ISA_CONTEXTS + (size_t)k) * 2, t->s.ctx[k].prng, sizeof t->s.ctx[k].prng);
    }
    return true;
}

/* One run of the compiled program e on a new engine: inputs fed, the
 * variables' current values (graph.h; their init) written first when
 * carry, outputs read, and each variable's value after the run copied
 * back into its init when carry; the tiles' PRNG states taken from prng
 * (when it holds some) and left there after the run. */
static bool run_once(graph *g, const lower_options *o, const ipu_exe *e, const tensor_map *map,
                     const graph_value *inputs, graph_value *outputs, simulate_result *r, bool carry,
                     prng_carry *prng, char *err, size_t err_size)
{
    bool ok = false;
    engine *eng = engine_new(o->machine, e, err, err_size);
    if (!eng)
        return false;
    prng_restore(eng, prng);
    for (int i = 0; i < g->n_inputs; i++) {
        const graph_tensor *t = &g->tensors[g->inputs[i]];
        if (t->data)
            continue;
        const tmap_tensor *mt = tmap_find(map, t->name);
        if (!mt) {
            snprintf(err, err_size, "%s: input '%s' is not in the tensor map", g->source, t->name);
            goto done;
        }
        size_t bytes = (size_t)graph_shape_numel(&inputs[i].shape) * graph_dtype_size(inputs[i].dtype);
        if (!program_set_input(eng, mt, inputs[i].data, bytes, err, err_size))
            goto done;
    }
    for (int t = 0; carry && t < g->n_tensors; t++) {
        const graph_tensor *x = &g->tensors[t];
        const tmap_tensor *mt = x->is_variable ? tmap_find(map, x->name) : NULL;
        if (x->is_variable && (!mt || !program_write_tensor(eng, mt, x->init, program_tensor_bytes(mt), err,
                                                            err_size))) {
            if (!mt)
                snprintf(err, err_size, "%s: variable '%s' is not in the tensor map", g->source, x->name);
            goto done;
        }
    }
    engine_options eo = { .max_cycles = 2000000000ull, .threads = 0, .trace_tile_first = 1, .trace_tile_last = 0 };
    enum engine_status st = engine_run(eng, &eo);
    if (st != ENGINE_DONE) {
        snprintf(err, err_size, "%s: %s", g->source, engine_message(eng));
        goto done;
    }
    const engine_stats *es = engine_get_stats(eng);
    /* the chip that ends last (the last pipeline stage, which sends the
     * outputs); the inputs come in on chip 0 */
    uint32_t last = 0;
    for (uint32_t c = 0; c < es->n_chips; c++)
        if (es->chips[c].c.cycles > r->cycles) {
            r->cycles = es->chips[c].c.cycles;
            last = c;
        }
    r->seconds = (double)es->end_ps / 1e12;
    r->host_seconds = es->host_seconds;
    for (size_t k = 0; k < es->n_supersteps; k++) {
        const engine_superstep *ss = &es->supersteps[k];
        if (ss->chip == 0 && ss->index == 0)
            r->input_cycles = ss->end_cycle - ss->start_cycle;
        if (ss->chip == last && ss->index + 1 == es->chips[last].supersteps && ss->index > 0)
            r->output_cycles = ss->end_cycle - ss->start_cycle;
    }
    program_phases ph;
    if (phase_stats_read(e, &ph, err, err_size) && ph.n) {
        r->n_phases = ph.n;
        phase_stats_sum(es, &ph, 0, r->phases);
    }
    for (size_t k = 0; k < engine_tile_count(eng); k++) {
        const ipu_tile *t = engine_tile_at(eng, k);
        r->amp_f16_macs += t->stats.amp_f16_macs;
        r->amp_f32_macs += t->stats.amp_f32_macs;
    }
    for (int i = 0; i < g->n_outputs; i++) {
        const graph_tensor *t = &g->tensors[g->outputs[i]];
        const tmap_tensor *mt = tmap_find(map, t->name);
        graph_value *v = &outputs[i];
        v->dtype = t->dtype;
        v->shape = t->shape;
        size_t bytes = (size_t)graph_shape_numel(&t->shape) * graph_dtype_size(t->dtype);
        v->data = calloc(1, bytes ? bytes : 1);
        if (!v->data) {
            snprintf(err, err_size, "out of host memory");
            goto done;
        }
        if (!mt) {
            snprintf(err, err_size, "%s: output '%s' is not in the tensor map", g->source, t->name);
            goto done;
        }
        if (!program_read_output(eng, mt, v->data, err, err_size))
            goto done;
    }
    for (int t = 0; carry && t < g->n_tensors; t++) {
        graph_tensor *x = &g->tensors[t];
        const tmap_tensor *mt = x->is_variable ? tmap_find(map, x->name) : NULL;
        if (mt && !program_read_tensor(eng, mt, x->init, err, err_size))
            goto done;
    }
    if (prng && !prng_save(eng, prng, err, err_size))
        goto done;
    ok = true;
done:
    engine_free(eng);
    return ok;
}

/* Compile g; its tensor map in *map. */
static ipu_exe *compile(const graph *g, const lower_options *o, simulate_result *r, tensor_map **map, char *err,
                        size_t err_size)
{
    ipu_exe *e = lower_graph(g, o, &r->plan, err, err_size);
    if (!e)
        return NULL;
    *map = program_tensor_map(e, g->source, err, err_size);
    if (!*map) {
        if (!err[0])
            snprintf(err, err_size, "%s: the compiled program has no tensor map", g->source);
        exe_free(e);
        return NULL;
    }
    return e;
}

/* Compile g and run it `steps` times (carry: the variables carried from
 * run to run); outputs and r are the last run's. */
static bool simulate_steps(graph *g, const lower_options *o, const graph_value *inputs, int steps, bool carry,
                           graph_value *outputs, simulate_result *r, simulate_step_fn each, void *ctx, char *err,
                           size_t err_size)
{
    simulate_result dummy;
    if (!r)
        r = &dummy;
    memset(r, 0, sizeof *r);
    tensor_map *map = NULL;
    ipu_exe *e = compile(g, o, r, &map, err, err_size);
    if (!e)
        return false;
    bool ok = true;
    prng_carry prng = { 0 };
    for (int s = 0; s < steps && ok; s++) {
        if (s)
            for (int i = 0; i < g->n_outputs; i++)
                graph_value_free(&outputs[i]);
        lower_report plan = r->plan;
        memset(r, 0, sizeof *r);
        r->plan = plan;
        ok = run_once(g, o, e, map, inputs, outputs, r, carry, carry ? &prng : NULL, err, err_size);
        if (ok && each && !each(s, outputs, r, ctx)) {
            if (!err[0])
                snprintf(err, err_size, "%s: stopped after step %d", g->source, s + 1);
            ok = false;
        }
    }
    free(prng.state);
    tmap_free(map);
    exe_free(e);
    return ok;
}

bool simulate_graph(const graph *g, const lower_options *o, const graph_value *inputs, graph_value *outputs,
                    simulate_result *r, char *err, size_t err_size)
{
    /* one run without carrying: g is only read */
    return simulate_steps((graph *)g, o, inputs, 1, false, outputs, r, NULL, NULL, err, err_size);
}

bool simulate_training(graph *g, const lower_options *o, const graph_value *inputs, int steps,
                       graph_value *outputs, simulate_result *r, simulate_step_fn each, void *ctx, char *err,
                       size_t err_size)
{
    return simulate_steps(g, o, inputs, steps, true, outputs, r, each, ctx, err, err_size);
}
