/*
 * simulate.h — compile a graph (lower.h) and run it on a simulated machine
 * (sim/engine/engine.h), inputs and outputs as values: what `validate` uses to
 * hold the compiled program's results against reference results.
 *
 * Models poplar::Engine's use from the host (load, write the input
 * streams, run, read the output streams).  Does not model the Engine's
 * profiling or its asynchronous stream callbacks.
 */
#ifndef IPUSIM_FRONTENDS_SIMULATE_H
#define IPUSIM_FRONTENDS_SIMULATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph.h"
#include "graph_eval.h"
#include "lower.h"
#include "sim/engine/phase_stats.h"
#include "sim/program/machine.h"

typedef struct simulate_result {
    lower_report plan;
    uint64_t cycles;              /* cycles of the chip that ends last */
    uint64_t input_cycles;        /* chip 0's first superstep (inputs from the host) */
    uint64_t output_cycles;       /* chip 0's last (outputs to the host; with pipeline
                                     stages the last chip's, counted in the on-chip time) */
    double seconds;               /* simulated */
    uint64_t amp_f16_macs, amp_f32_macs;
    double host_seconds;          /* of the simulation */
    uint32_t n_phases;            /* a training step's phases on chip 0 (sim/program/phases.h) */
    phase_totals phases[PHASES_MAX];
} simulate_result;

/* Called after each training step: its outputs and figures; false stops. */
typedef bool (*simulate_step_fn)(int step, const graph_value *outputs, const simulate_result *r, void *ctx);

/* inputs[i] feeds g->inputs[i] (constants among them are skipped);
 * outputs[i] receives g->outputs[i] (allocated here, graph_value_free).
 * False with err on a compile error, a simulated fault or a deadlock. */
bool simulate_graph(const graph *g, const lower_options *o, const graph_value *inputs, graph_value *outputs,
                    simulate_result *r, char *err, size_t err_size);

/* Training steps (autodiff.h): g compiled once and run `steps` times,
 * each run on the same inputs with the variables' values carried from the
 * previous run, as repeated poplar::Engine::run calls keep the weights in
 * tile memory, and the tiles' PRNGs running on from where the previous run
 * left them (stochastic rounding differs from step to step, as on the
 * hardware).  outputs and r are the last step's; on return every
 * variable's init holds its value after the last step, as
 * graph_eval_step leaves it.  each (may be NULL) sees every step. */
bool simulate_training(graph *g, const lower_options *o, const graph_value *inputs, int steps,
                       graph_value *outputs, simulate_result *r, simulate_step_fn each, void *ctx, char *err,
                       size_t err_size);

#endif
