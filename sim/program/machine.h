/*
 * machine.h — the machine description: every constant of the timing and
 * capacity model, named, with its unit and source, grouped into presets
 * (gc2, gc200, bow, m2000, bow2000, ipu-pod16, bow-pod16, ipu-pod64, bow-pod64) and
 * overridable one by one.
 *
 * A program is compiled once and runs unchanged on every preset; only the
 * machine description changes.  Nothing in the simulator uses a hardware
 * constant that is not here (the ISA's own architectural constants, such
 * as six worker contexts, live in isa/isa.h).
 *
 * machine.def holds both tables: the parameters (one row each, with the
 * value on the base preset, the GC200) and the presets.  To add a preset,
 * add one row to it,
 *
 *   MACHINE_PRESET(id, "name", "description", base, .param = { value, "source" }, ...)
 *
 * naming the preset it derives from and only the parameters whose value
 * differs from that preset's, each with its source.  The enum below, the
 * names, the descriptions, `ipusim machines` and `--machine name` all follow
 * from that row.  To add a parameter, add one row (with the base preset's
 * value) and an override on every preset whose value differs.
 */
#ifndef IPUSIM_MACHINE_H
#define IPUSIM_MACHINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memmodel/memory_map.h"

enum machine_param {
#define MACHINE_PARAM(name, ...) MP_##name,
#include "machine.def"
    MP_COUNT
};

/* PRESET_gc2, PRESET_gc200, ... in the order of the preset rows. */
enum machine_preset {
#define MACHINE_BASE_PRESET(id, ...) PRESET_##id,
#define MACHINE_PRESET(id, ...) PRESET_##id,
#include "machine.def"
    PRESET_COUNT
};

typedef struct machine {
    char name[64];                 /* preset name, plus " (modified)" after overrides */
    enum machine_preset preset;
    double value[MP_COUNT];
    /* What chose the preset, for messages about a conflicting choice:
     * "--machine gc2", "\"preset\": \"gc200\" in F"; empty for a default. */
    char chosen_by[192];
} machine;

typedef struct machine_param_info {
    const char *name, *unit, *source, *description;
    double min, max;
    double base_value;             /* the value on the base preset */
} machine_param_info;

extern const machine_param_info machine_params[MP_COUNT];
extern const char *const machine_preset_names[PRESET_COUNT];
extern const char *const machine_preset_descriptions[PRESET_COUNT];

/* One parameter's value on one preset, before any override. */
double machine_preset_value(enum machine_preset preset, enum machine_param p);

/* Look up a preset by name; false (and err) if unknown, listing the names. */
bool machine_preset(const char *name, machine *m, char *err, size_t err_size);
/* Choose the preset NAME for m, as `by` says (see chosen_by): options apply
 * in command-line order, and none silently undoes another, so a preset
 * already chosen must be the same one, and a default whose parameters have
 * been changed is not replaced by another preset; choosing the preset m
 * already is keeps its parameters.  False with a message naming both. */
bool machine_choose(machine *m, const char *name, const char *by, char *err, size_t err_size);
/* Whether some parameter of m differs from its preset's value. */
bool machine_modified(const machine *m);
/* Apply "name=value"; false with a message naming the parameter and its
 * allowed range if the name is unknown or the value out of range. */
bool machine_set(machine *m, const char *assignment, char *err, size_t err_size);
/* Apply a JSON config file: {"preset": "gc200", "params": {"tile_clock_hz": 1.5e9}}
 * ("preset" optional: overrides only; chosen as machine_choose does).  The
 * file is one JSON object with each key once.  Errors name the file and key,
 * or the line and column of text that is not JSON. */
bool machine_load_config(machine *m, const char *path, char *err, size_t err_size);
int machine_param_index(const char *name);

/* The machine as an executable records it (section .ipusim.machine): a
 * "preset=NAME" line, then a "param=value" line for each parameter whose
 * value differs from the preset's.  The bytes are malloc'd; false when the
 * host runs out of memory. */
bool machine_encode(const machine *m, uint8_t **bytes, size_t *size);
/* The machine such a record describes; false with a message naming the
 * line and what is wrong. */
bool machine_decode(const void *bytes, size_t size, machine *m, char *err, size_t err_size);
/* Whether m can hold a program whose highest global tile is last_tile and
 * that was compiled for `built` (NULL: not known, and the tile numbers alone
 * must fit): enough chips, tiles numbered chip by chip as m numbers them,
 * and tile memory as large as the program was laid out for.  False with a message saying what the program needs and m has,
 * e.g. "compiled for m2000 (4 chips x 1472 tiles); gc200 has 1 chip". */
bool machine_holds_program(const machine *m, const machine *built, uint32_t last_tile,
                           char *err, size_t err_size);

static inline double machine_get(const machine *m, enum machine_param p) { return m->value[p]; }
static inline uint32_t machine_u32(const machine *m, enum machine_param p) { return (uint32_t)m->value[p]; }

/* The first byte of each tile's memory: region 0 ends at 0x80000
 * (memmodel/memory_map.h, isa_memory_base). */
static inline uint32_t machine_memory_base(const machine *m)
{
    return isa_memory_base(machine_u32(m, MP_tile_region0_bytes));
}

/* Tile cycles -> seconds at this machine's tile clock. */
double machine_cycles_to_seconds(const machine *m, uint64_t cycles);

#endif
