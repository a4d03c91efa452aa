/*
 * program_io.h — the inputs and outputs of a compiled program by tensor
 * name, through its tensor map (sim/program/tensor_map.h): what `ipusim run`,
 * `validate` and the debugger use to feed a program and read its results.
 *
 * Input pieces travel on host input streams (one per piece, numbered in the
 * map), so feeding an input is splitting its bytes into the pieces'
 * streams; outputs come back on host output streams and are put back
 * together in element order.  Any tensor, input, output or intermediate,
 * can also be read straight from tile memory after (or during) a run.
 */
#ifndef IPUSIM_SIM_PROGRAM_IO_H
#define IPUSIM_SIM_PROGRAM_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "engine.h"
#include "isa/elf/executable.h"
#include "sim/program/model_record.h"
#include "sim/program/tensor_map.h"

/* The executable's tensor map; NULL without an error when it has none
 * (an assembled program), NULL with err when it is malformed. */
tensor_map *program_tensor_map(const ipu_exe *e, const char *source, char *err, size_t err_size);

/* The executable's model record into r: false with err ("P.elf: section
 * .ipusim.model: line 2: ...") when it is malformed; true with r zeroed
 * when it has none (an assembled program, an older executable). */
bool program_model_record(const ipu_exe *e, const char *source, model_record *r, char *err, size_t err_size);

/* Bytes of a tensor (elements x element bytes). */
uint64_t program_tensor_bytes(const tmap_tensor *t);

/* Feed input t: `size` must be its byte count ("input 'x': FILE has 12
 * bytes, the tensor [2,4] f32 has 32"). */
bool program_set_input(engine *g, const tmap_tensor *t, const void *data, size_t size, char *err,
                       size_t err_size);
/* Deterministic pseudo-random values for input t (uniform in [-1, 1) for
 * floats, 0..9 for integers), from seed. */
void program_random_input(const tmap_tensor *t, uint64_t seed, void *data);

/* Every input of the map whose name is not among given[0 .. n_given) gets
 * program_random_input values (seed: its index + 1); a line naming each
 * (the first four), starting with prefix, goes to note (when not NULL).
 * False with err on a host error. */
bool program_fill_inputs(engine *g, const tensor_map *m, const char *const *given, size_t n_given, FILE *note,
                         const char *prefix, char *err, size_t err_size);

/* Output t as the host received it (after a completed run). */
bool program_read_output(const engine *g, const tmap_tensor *t, void *data, char *err, size_t err_size);
/* Write tensor t straight into tile memory (a variable before a run:
 * its value carried over from the previous run); `size` must be its byte
 * count.  data is in the tensor's own order; one kept in a permuted order
 * (a channels-last convolution weight) is rearranged on the host first,
 * the inverse of program_read_tensor. */
bool program_write_tensor(engine *g, const tmap_tensor *t, const void *data, size_t size, char *err,
                          size_t err_size);
/* Any tensor from tile memory (a variable kept in streaming memory: from
 * its buffers), now. */
bool program_read_tensor(const engine *g, const tmap_tensor *t, void *data, char *err, size_t err_size);

/* The streaming-memory buffers of the map's variables kept there
 * (TMAP_STREAMING), zero-filled to hold their pieces: what engine_new
 * does for an executable's own map; false with err when they do not fit
 * the machine's streaming memory. */
bool program_set_up_streaming(engine *g, const tensor_map *m, char *err, size_t err_size);

#endif
