/*
 * machine.c — presets and overrides of the machine description.
 */
#include "machine.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/diag.h"
#include "sim/base/fileio.h"

const machine_param_info machine_params[MP_COUNT] = {
#define MACHINE_PARAM(name_, unit_, lo, hi, value, src, desc) \
    { .name = #name_, .unit = unit_, .source = src, .description = desc, .min = lo, .max = hi, .base_value = value },
#include "machine.def"
};

const char *const machine_preset_names[PRESET_COUNT] = {
#define MACHINE_BASE_PRESET(name, description) #name,
#define MACHINE_PRESET(name, description, ...) #name,
#include "machine.def"
};

const char *const machine_preset_descriptions[PRESET_COUNT] = {
#define MACHINE_BASE_PRESET(name, description) description,
#define MACHINE_PRESET(name, description, ...) description,
#include "machine.def"
};

/* Every preset's name, for messages: ", gc2, gc200, ..." (skip the first two characters). */
static const char preset_name_list[] =
#define MACHINE_BASE_PRESET(name, description) ", " #name
#define MACHINE_PRESET(name, description, ...) ", " #name
#include "machine.def"
    ;

/* One value a preset overrides, with its source; a parameter the preset
 * does not override is all zero (no source). */
typedef struct preset_override {
    double value;
    const char *source;
} preset_override;

/* One member per parameter, so that a preset row lists its overrides as
 * designated initialisers: .tile_clock_hz = { 1.85e9, "BOW" }. */
typedef struct preset_overrides {
#define MACHINE_PARAM(name, ...) preset_override name;
#include "machine.def"
} preset_overrides;

/* A preset row: the preset it derives from (itself for the base preset)
 * and the values it overrides. */
typedef struct preset_row {
    enum machine_preset base;
    preset_overrides set;
} preset_row;

static const preset_row preset_rows[PRESET_COUNT] = {
#define MACHINE_BASE_PRESET(name, description) [PRESET_##name] = { .base = PRESET_##name },
#define MACHINE_PRESET(name, description, base_, ...) \
    [PRESET_##name] = { .base = PRESET_##base_, .set = { __VA_ARGS__ } },
#include "machine.def"
};

/* The member of a preset's overrides that belongs to parameter p. */
static const preset_override *override_of(const preset_overrides *set, enum machine_param p)
{
    switch (p) {
#define MACHINE_PARAM(name, ...) case MP_##name: return &set->name;
#include "machine.def"
    case MP_COUNT:
        break;
    }
    panic("no machine parameter %d", (int)p);
}

double machine_preset_value(enum machine_preset preset, enum machine_param p)
{
    /* Follow the bases to the first preset that overrides p, or to the base preset. */
    enum machine_preset at = preset;
    for (int step = 0; step < PRESET_COUNT; step++) {
        const preset_row *row = &preset_rows[at];
        const preset_override *o = override_of(&row->set, p);
        if (o->source)
            return o->value;
        if (o->value != 0)
            panic("machine.def: preset %s overrides %s without a source", machine_preset_names[at],
                  machine_params[p].name);
        if (row->base == at)
            return machine_params[p].base_value;
        at = row->base;
    }
    panic("machine.def: the bases of preset %s form a cycle", machine_preset_names[preset]);
}

bool machine_preset(const char *name, machine *m, char *err, size_t err_size)
{
    for (int p = 0; p < PRESET_COUNT; p++) {
        if (strcmp(name, machine_preset_names[p]) != 0)
            continue;
        memset(m, 0, sizeof *m);
        snprintf(m->name, sizeof m->name, "%s", name);
        m->preset = (enum machine_preset)p;
        for (int i = 0; i < MP_COUNT; i++)
            m->value[i] = machine_preset_value(m->preset, (enum machine_param)i);
        return true;
    }
    snprintf(err, err_size, "unknown machine '%s' (known: %s)", name, preset_name_list + 2);
    return false;
}

int machine_param_index(const char *name)
{
    for (int i = 0; i < MP_COUNT; i++)
        if (!strcmp(machine_params[i].name, name))
            return i;
    return -1;
}

static void mark_modified(machine *m)
{
    if (!strstr(m->name, " (modified)")) {
        size_t n = strlen(m->name);
        snprintf(m->name + n, sizeof m->name - n, " (modified)");
    }
}

static bool set_value(machine *m, const char *name, double v, const char *where, char *err, size_t err_size)
{
    int i = machine_param_index(name);
    if (i < 0) {
        snprintf(err, err_size, "%sunknown machine parameter '%s' (`ipusim machines` lists them)", where, name);
        return false;
    }
    const machine_param_info *p = &machine_params[i];
    if (!(v >= p->min && v <= p->max)) {
        snprintf(err, err_size, "%smachine parameter %s = %g is out of range (%g..%g %s)", where, name, v,
                 p->min, p->max, p->unit);
        return false;
    }
    /* Counts, cycles and bytes are whole numbers; rates and times need not be. */
    bool fractional = !strcmp(p->unit, "Hz") || !strcmp(p->unit, "B/s") || !strcmp(p->unit, "ps");
    if (!fractional && v != floor(v)) {
        snprintf(err, err_size, "%smachine parameter %s = %g must be a whole number (%s)", where, name, v,
                 p->unit[0] ? p->unit : "a count");
        return false;
    }
    if (i == MP_tile_memory_bytes && fmod(v, 16384.0) != 0) {
        snprintf(err, err_size, "%smachine parameter tile_memory_bytes = %g must be a multiple of 16384 "
                 "(whole 16 KiB memory elements)", where, v);
        return false;
    }
    m->value[i] = v;
    mark_modified(m);
    return true;
}

bool machine_set(machine *m, const char *assignment, char *err, size_t err_size)
{
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment) {
        snprintf(err, err_size, "--set expects name=value, got '%s'", assignment);
        return false;
    }
    char name[128];
    size_t n = (size_t)(eq - assignment);
    if (n >= sizeof name) {
        snprintf(err, err_size, "--set: parameter name too long");
        return false;
    }
    memcpy(name, assignment, n);
    name[n] = 0;
    errno = 0;
    char *end;
    double v = strtod(eq + 1, &end);
    if (eq[1] == 0 || *end != 0 || errno != 0 || !isfinite(v)) {
        snprintf(err, err_size, "--set %s: '%s' is not a number", name, eq + 1);
        return false;
    }
    return set_value(m, name, v, "", err, err_size);
}

bool machine_load_config(machine *m, const char *path, char *err, size_t err_size)
{
    char *text;
    size_t size;
    if (!read_file_limited(path, READ_LIMIT_CONFIG, "a machine configuration may have", READ_STREAMS, &text, &size,
                           err, err_size))
        return false;
    cJSON *root = cJSON_ParseWithLength(text, size);
    bool ok = false;
    char where[300];
    snprintf(where, sizeof where, "%s: ", path);
    if (!root || !cJSON_IsObject(root)) {
        snprintf(err, err_size, "%s: not a JSON object (expected {\"preset\": ..., \"params\": {...}})", path);
        goto out;
    }
    for (cJSON *item = root->child; item; item = item->next) {
        if (strcmp(item->string, "preset") && strcmp(item->string, "params")) {
            snprintf(err, err_size, "%s: unknown key '%s' (expected \"preset\" and \"params\")", path, item->string);
            goto out;
        }
    }
    cJSON *preset = cJSON_GetObjectItemCaseSensitive(root, "preset");
    if (preset) {
        if (!cJSON_IsString(preset)) {
            snprintf(err, err_size, "%s: \"preset\" must be a string", path);
            goto out;
        }
        char perr[200];
        if (!machine_preset(preset->valuestring, m, perr, sizeof perr)) {
            snprintf(err, err_size, "%s: %s", path, perr);
            goto out;
        }
    }
    cJSON *params = cJSON_GetObjectItemCaseSensitive(root, "params");
    if (params) {
        if (!cJSON_IsObject(params)) {
            snprintf(err, err_size, "%s: \"params\" must be an object", path);
            goto out;
        }
        for (cJSON *item = params->child; item; item = item->next) {
            if (!cJSON_IsNumber(item)) {
                snprintf(err, err_size, "%s: parameter '%s' must be a number", path, item->string);
                goto out;
            }
            if (!set_value(m, item->string, item->valuedouble, where, err, err_size))
                goto out;
        }
    }
    ok = true;
out:
    cJSON_Delete(root);
    free(text);
    return ok;
}

double machine_cycles_to_seconds(const machine *m, uint64_t cycles)
{
    return (double)cycles / m->value[MP_tile_clock_hz];
}
