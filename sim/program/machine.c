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

#include "sim/base/fileio.h"

const machine_param_info machine_params[MP_COUNT] = {
#define MACHINE_PARAM(name_, unit_, lo, hi, gc2, gc200, bow, m2000, bow2000, pod16, src, desc) \
    { .name = #name_, .unit = unit_, .source = src, .description = desc, .min = lo, .max = hi, \
      .preset_value = { gc2, gc200, bow, m2000, bow2000, pod16 } },
#include "machine.def"
#undef MACHINE_PARAM
};

const char *const machine_preset_names[PRESET_COUNT] = { "gc2", "gc200", "bow", "m2000", "bow2000", "pod16" };
const char *const machine_preset_descriptions[PRESET_COUNT] = {
    "Colossus Mk1 GC2: 1216 tiles at 1.6 GHz, 256 KiB per tile",
    "Colossus Mk2 GC200: 1472 tiles at 1.325 GHz, 624 KiB per tile",
    "Bow IPU: GC200 logic wafer-on-wafer, 1472 tiles at 1.85 GHz",
    "IPU-M2000: 4 x GC200 at 1.325 GHz",
    "Bow-2000: 4 x Bow at 1.85 GHz",
    "Bow Pod16: 4 Bow-2000 boards, 16 x Bow at 1.85 GHz",
};

bool machine_preset(const char *name, machine *m, char *err, size_t err_size)
{
    for (int p = 0; p < PRESET_COUNT; p++) {
        if (strcmp(name, machine_preset_names[p]) != 0)
            continue;
        memset(m, 0, sizeof *m);
        snprintf(m->name, sizeof m->name, "%s", name);
        m->preset = (enum machine_preset)p;
        for (int i = 0; i < MP_COUNT; i++)
            m->value[i] = machine_params[i].preset_value[p];
        return true;
    }
    snprintf(err, err_size, "unknown machine '%s' (known: gc2, gc200, bow, m2000, bow2000, pod16)", name);
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
    if (!read_whole_file(path, &text, &size, err, err_size))
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
