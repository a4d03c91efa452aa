/*
 * model_record.h — what the compiler knew of the model an executable was
 * compiled from (section ".ipusim.model", isa/elf/executable.h), for the
 * reports of `ipusim run` and `compare`: the model's name, and the
 * multiply-adds its matmuls and convolutions ask for.  Those are the
 * model's MACs, the figure utilisation is quoted against; the AMP issues
 * more (K and N padded to its weight blocks and output groups, pipeline
 * fill), which the engine counts as it executes.
 *
 * Encoding: text, one "key=value" line each, every key once and both
 * present:
 *   model=NAME           the built-in spec or the ONNX file, as compiled
 *   model_macs=N         decimal: the MACs of one step of the whole
 *                        program (every replica, forward, backward and
 *                        update)
 */
#ifndef IPUSIM_SIM_MODEL_RECORD_H
#define IPUSIM_SIM_MODEL_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MODEL_RECORD_NAME_BYTES 256

typedef struct model_record {
    char model[MODEL_RECORD_NAME_BYTES];   /* NUL-terminated, no newline */
    uint64_t model_macs;
} model_record;

/* Into a new buffer (*bytes, freed by the caller); false when the host is
 * out of memory.  A longer name is cut to fit, a newline in it made a space. */
bool model_record_encode(const model_record *r, uint8_t **bytes, size_t *size);
/* False with err naming the line and what is wrong ("line 2: model_macs:
 * '12x' is not a decimal count"). */
bool model_record_decode(const void *bytes, size_t size, model_record *r, char *err, size_t err_size);

#endif
