/*
 * phases.h — the phases of a compiled program (the ".ipusim.bsp" blob of
 * the executable, isa/elf/executable.h): where each part of a training
 * step — forward pass, backward pass, weight update — starts, as the index
 * of its first superstep on every chip (the program is the same on each).
 * The compiler ends a superstep at each change of phase, so a superstep
 * belongs to one phase and the run's statistics split exactly.  An
 * inference program has one phase, or none recorded.
 *
 * Encoding: text, one line per phase in order, "superstep N NAME\n"
 * (NAME: letters, digits, '_' and '-', at most 15 bytes), after an
 * optional first line "samples N\n": the samples one run of the program
 * (one training step) takes, all replicas together, for samples per
 * second.
 *
 * Models what PopVision's execution trace shows of a PopART training step
 * (the forward, backward and optimizer programs).  Pipelined steps with
 * interleaved phases are not described.
 */
#ifndef IPUSIM_SIM_PROGRAM_PHASES_H
#define IPUSIM_SIM_PROGRAM_PHASES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PHASES_MAX 8

typedef struct program_phases {
    uint32_t n;
    uint64_t samples;             /* samples a step, all replicas (0: not recorded) */
    struct program_phase {
        uint32_t first_superstep;
        char name[16];
    } p[PHASES_MAX];
} program_phases;

/* Append a phase starting at superstep first (ignored when it starts
 * where the last one does: that one is renamed).  False when full. */
bool phases_add(program_phases *ph, uint32_t first, const char *name);
/* The encoding into a malloc'd string (*size bytes, no terminator counted). */
char *phases_encode(const program_phases *ph, size_t *size);
/* Decode; false with err ("phases: line 2: ...") on a malformed blob.  An
 * empty blob is no phases. */
bool phases_decode(const void *bytes, size_t size, program_phases *ph, char *err, size_t err_size);
/* The phase superstep s belongs to (-1 when there are none). */
int phases_of_superstep(const program_phases *ph, uint32_t s);

#endif
