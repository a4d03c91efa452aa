/*
 * phases.h — the phases of a compiled program (the ".ipusim.bsp" blob of
 * the executable, isa/elf/executable.h): which part of a training step —
 * forward pass, backward pass, weight update — each superstep belongs to,
 * as stretches of supersteps, each named by the index of its first
 * superstep on every chip (the program is the same on each).  A phase may
 * come back: each weight's update runs as soon as its gradient is
 * complete, between stretches of the backward pass, as PopART schedules
 * its optimizer ops.  The compiler ends a superstep at each change of
 * phase, so a superstep belongs to one phase and the run's statistics
 * split exactly.  An inference program has one phase, or none recorded.
 *
 * Encoding: text, one line per stretch in order, "superstep N NAME\n"
 * (NAME: letters, digits, '_' and '-', at most 15 bytes), after an
 * optional first line "samples N\n": the samples one run of the program
 * (one training step) takes, all replicas together, for samples per
 * second; then an optional line "pipeline S M C\n": a pipelined step on S
 * chips of M micro-batches, whose C cycles (M + 2 P - 2 for P pipeline
 * stages, where micro-batches are in the forward and backward passes at
 * once) are the phase "pipeline"; then an optional line "all-reduce B\n":
 * the gradient bytes the busiest chip of a replica all-reduces a step.
 *
 * Models what PopVision's execution trace shows of a PopART training step
 * (the forward, backward and optimizer programs).
 */
#ifndef IPUSIM_SIM_PROGRAM_PHASES_H
#define IPUSIM_SIM_PROGRAM_PHASES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PHASES_MAX 8              /* distinct phases */
#define PHASES_MAX_STRETCHES 4096

typedef struct program_phases {
    uint32_t n;                   /* distinct phases, in the order they first come */
    char name[PHASES_MAX][16];
    uint32_t n_stretches;
    struct phase_stretch {
        uint32_t first_superstep;
        uint8_t phase;            /* index into name[] */
    } s[PHASES_MAX_STRETCHES];
    uint64_t samples;             /* samples a step, all replicas and micro-batches (0: not
                                     recorded) */
    uint32_t pipeline_stages;     /* a pipelined step's stages (0: not pipelined) ... */
    uint32_t micro_batches;       /* ... its micro-batches ... */
    uint32_t pipeline_cycles;     /* ... and cycles */
    uint64_t all_reduce_bytes;    /* the gradient bytes the busiest chip of a replica all-reduces
                                     a step (0: none; what compare's estimate of a system of
                                     several IPU-Link domains sends over the GW-Links) */
} program_phases;

/* From superstep `first` on, phase `name`: a new stretch, or the last one
 * going on when it is of the same phase, or the last one renamed when it
 * starts at `first` (its phase dropped when nothing else had it).  False
 * when there is no room for the phase or the stretch. */
bool phases_add(program_phases *ph, uint32_t first, const char *name);
/* The encoding into a malloc'd string (*size bytes, no terminator counted). */
char *phases_encode(const program_phases *ph, size_t *size);
/* Decode; false with err ("phases: line 2: ...") on a malformed blob.  An
 * empty blob is no phases. */
bool phases_decode(const void *bytes, size_t size, program_phases *ph, char *err, size_t err_size);
/* The phase (index into name[]) superstep s belongs to (-1 when there
 * are none). */
int phases_of_superstep(const program_phases *ph, uint32_t s);

#endif
