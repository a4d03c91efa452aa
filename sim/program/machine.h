/*
 * machine.h — the machine description: every constant of the timing and
 * capacity model, named, with its unit and source, grouped into presets
 * (gc2, gc200, bow, m2000, bow2000, pod16) and overridable one by one.
 *
 * A program is compiled once and runs unchanged on every preset; only the
 * machine description changes.  Nothing in the simulator uses a hardware
 * constant that is not here (the ISA's own architectural constants, such
 * as six worker contexts, live in isa/isa.h).
 */
#ifndef IPUSIM_MACHINE_H
#define IPUSIM_MACHINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum machine_param {
#define MACHINE_PARAM(name, unit, lo, hi, gc2, gc200, bow, m2000, bow2000, pod16, src, desc) MP_##name,
#include "machine.def"
#undef MACHINE_PARAM
    MP_COUNT
};

enum machine_preset { PRESET_GC2, PRESET_GC200, PRESET_BOW, PRESET_M2000, PRESET_BOW2000, PRESET_POD16,
                      PRESET_COUNT };

typedef struct machine {
    char name[64];                 /* preset name, plus " (modified)" after overrides */
    enum machine_preset preset;
    double value[MP_COUNT];
} machine;

typedef struct machine_param_info {
    const char *name, *unit, *source, *description;
    double min, max;
    double preset_value[PRESET_COUNT];
} machine_param_info;

extern const machine_param_info machine_params[MP_COUNT];
extern const char *const machine_preset_names[PRESET_COUNT];
extern const char *const machine_preset_descriptions[PRESET_COUNT];

/* Look up a preset by name; false (and err) if unknown, listing the names. */
bool machine_preset(const char *name, machine *m, char *err, size_t err_size);
/* Apply "name=value"; false with a message naming the parameter and its
 * allowed range if the name is unknown or the value out of range. */
bool machine_set(machine *m, const char *assignment, char *err, size_t err_size);
/* Apply a JSON config file: {"preset": "gc200", "params": {"tile_clock_hz": 1.5e9}}
 * ("preset" optional: overrides only).  Errors name the file and key. */
bool machine_load_config(machine *m, const char *path, char *err, size_t err_size);
int machine_param_index(const char *name);

static inline double machine_get(const machine *m, enum machine_param p) { return m->value[p]; }
static inline uint32_t machine_u32(const machine *m, enum machine_param p) { return (uint32_t)m->value[p]; }

/* Tile cycles -> seconds at this machine's tile clock. */
double machine_cycles_to_seconds(const machine *m, uint64_t cycles);

#endif
