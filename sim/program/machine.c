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
#define MACHINE_BASE_PRESET(id, name, description) name,
#define MACHINE_PRESET(id, name, description, ...) name,
#include "machine.def"
};

const char *const machine_preset_descriptions[PRESET_COUNT] = {
#define MACHINE_BASE_PRESET(id, name, description) description,
#define MACHINE_PRESET(id, name, description, ...) description,
#include "machine.def"
};

/* Every preset's name, for messages: ", gc2, gc200, ..." (skip the first two characters). */
static const char preset_name_list[] =
#define MACHINE_BASE_PRESET(id, name, description) ", " name
#define MACHINE_PRESET(id, name, description, ...) ", " name
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
#define MACHINE_BASE_PRESET(id, name, description) [PRESET_##id] = { .base = PRESET_##id },
#define MACHINE_PRESET(id, name, description, base_, ...) \
    [PRESET_##id] = { .base = PRESET_##base_, .set = { __VA_ARGS__ } },
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
        snprintf(m->name, sizeof m->name, "%s", machine_preset_names[p]);
        m->preset = (enum machine_preset)p;
        for (int i = 0; i < MP_COUNT; i++)
            m->value[i] = machine_preset_value(m->preset, (enum machine_param)i);
        return true;
    }
    snprintf(err, err_size, "unknown machine '%.100s' (known: %s)", name, preset_name_list + 2);
    return false;
}

bool machine_modified(const machine *m)
{
    for (int i = 0; i < MP_COUNT; i++)
        if (m->value[i] != machine_preset_value(m->preset, (enum machine_param)i))
            return true;
    return false;
}

bool machine_choose(machine *m, const char *name, const char *by, char *err, size_t err_size)
{
    machine chosen;
    if (!machine_preset(name, &chosen, err, err_size))
        return false;
    if (chosen.preset == m->preset && (m->chosen_by[0] || machine_modified(m))) {
        /* The same preset again: what was set on it stays. */
        if (!m->chosen_by[0])
            snprintf(m->chosen_by, sizeof m->chosen_by, "%s", by);
        return true;
    }
    if (m->chosen_by[0]) {
        snprintf(err, err_size, "%s conflicts with %s (name one machine)", by, m->chosen_by);
        return false;
    }
    if (machine_modified(m)) {
        snprintf(err, err_size, "%s comes after parameters set on %s and would undo them "
                 "(choose the machine before --set)", by, machine_preset_names[m->preset]);
        return false;
    }
    *m = chosen;
    snprintf(m->chosen_by, sizeof m->chosen_by, "%s", by);
    return true;
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
    if ((i == MP_tile_memory_bytes || i == MP_tile_region0_bytes) && fmod(v, 16384.0) != 0) {
        snprintf(err, err_size, "%smachine parameter %s = %g must be a multiple of 16384 "
                 "(whole 16 KiB memory elements)", where, name, v);
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

/* "line:column" (1-based) of byte offset `at` in text. */
static void text_position(const char *text, size_t at, char *out, size_t out_size)
{
    unsigned line = 1, col = 1;
    for (size_t i = 0; i < at; i++) {
        if (text[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    snprintf(out, out_size, "%u:%u", line, col);
}

/* The first key that appears twice among an object's members; NULL if none. */
static const char *duplicate_key(const cJSON *object)
{
    for (const cJSON *a = object->child; a; a = a->next)
        for (const cJSON *b = a->next; b; b = b->next)
            if (a->string && b->string && !strcmp(a->string, b->string))
                return a->string;
    return NULL;
}

/* The config file's text as one JSON object and nothing after it: errors
 * name the file and, for text that is not JSON, the line and column. */
static cJSON *parse_config(const char *path, const char *text, size_t size, char *err, size_t err_size)
{
    char pos[32];
    if (strlen(text) != size) {
        text_position(text, strlen(text), pos, sizeof pos);
        snprintf(err, err_size, "%s:%s: NUL byte in a JSON config file", path, pos);
        return NULL;
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, false);
    if (!root) {
        size_t at = end && end >= text && end <= text + size ? (size_t)(end - text) : size;
        text_position(text, at, pos, sizeof pos);
        snprintf(err, err_size, "%s:%s: not valid JSON%s", path, pos, at >= size ? " (truncated?)" : "");
        return NULL;
    }
    while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')
        end++;
    if (*end) {
        text_position(text, (size_t)(end - text), pos, sizeof pos);
        snprintf(err, err_size, "%s:%s: text after the end of the JSON object", path, pos);
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

bool machine_load_config(machine *m, const char *path, char *err, size_t err_size)
{
    char *text;
    size_t size;
    if (!read_file_limited(path, READ_LIMIT_CONFIG, "a machine configuration may have", READ_STREAMS, &text, &size,
                           err, err_size))
        return false;
    cJSON *root = parse_config(path, text, size, err, err_size);
    bool ok = false;
    char where[300];
    snprintf(where, sizeof where, "%s: ", path);
    if (!root)
        goto out;
    if (!cJSON_IsObject(root)) {
        snprintf(err, err_size, "%s: not a JSON object (expected {\"preset\": ..., \"params\": {...}})", path);
        goto out;
    }
    const char *dup = duplicate_key(root);
    if (dup) {
        snprintf(err, err_size, "%s: key \"%s\" appears twice", path, dup);
        goto out;
    }
    for (cJSON *item = root->child; item; item = item->next) {
        if (strcmp(item->string, "preset") && strcmp(item->string, "params")) {
            snprintf(err, err_size, "%s: unknown key '%s' (expected \"preset\" and \"params\")", path, item->string);
            goto out;
        }
    }
    cJSON *preset = cJSON_GetObjectItemCaseSensitive(root, "preset");
    cJSON *params = cJSON_GetObjectItemCaseSensitive(root, "params");
    if (params && !cJSON_IsObject(params)) {
        snprintf(err, err_size, "%s: \"params\" must be an object", path);
        goto out;
    }
    if (params && (dup = duplicate_key(params))) {
        snprintf(err, err_size, "%s: parameter \"%s\" appears twice in \"params\"", path, dup);
        goto out;
    }
    if (preset) {
        if (!cJSON_IsString(preset)) {
            snprintf(err, err_size, "%s: \"preset\" must be a string", path);
            goto out;
        }
        char by[192], perr[512];
        machine named;
        if (!machine_preset(preset->valuestring, &named, perr, sizeof perr)) {
            snprintf(err, err_size, "%s: %s", path, perr);
            goto out;
        }
        /* The message starts with the file; later ones name it after the key. */
        snprintf(by, sizeof by, "\"preset\": \"%.40s\"", preset->valuestring);
        if (!machine_choose(m, preset->valuestring, by, perr, sizeof perr)) {
            snprintf(err, err_size, "%s: %s", path, perr);
            goto out;
        }
        if (!strcmp(m->chosen_by, by))
            snprintf(m->chosen_by, sizeof m->chosen_by, "\"preset\": \"%.40s\" in %.120s", preset->valuestring, path);
    }
    for (cJSON *item = params ? params->child : NULL; item; item = item->next) {
        if (!cJSON_IsNumber(item)) {
            snprintf(err, err_size, "%s: parameter '%s' must be a number", path, item->string);
            goto out;
        }
        if (!set_value(m, item->string, item->valuedouble, where, err, err_size))
            goto out;
    }
    ok = true;
out:
    cJSON_Delete(root);
    free(text);
    return ok;
}

bool machine_encode(const machine *m, uint8_t **bytes, size_t *size)
{
    size_t cap = 64 + (size_t)MP_COUNT * 96, n = 0;
    char *text = malloc(cap);
    if (!text)
        return false;
    n += (size_t)snprintf(text + n, cap - n, "preset=%s\n", machine_preset_names[m->preset]);
    for (int i = 0; i < MP_COUNT; i++)
        if (m->value[i] != machine_preset_value(m->preset, (enum machine_param)i))
            n += (size_t)snprintf(text + n, cap - n, "%s=%.17g\n", machine_params[i].name, m->value[i]);
    *bytes = (uint8_t *)text;
    *size = n;
    return true;
}

bool machine_decode(const void *bytes, size_t size, machine *m, char *err, size_t err_size)
{
    const char *p = bytes, *end = p + size;
    char line[256], where[64];
    for (unsigned n = 1; p < end; n++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = (size_t)((nl ? nl : end) - p);
        snprintf(where, sizeof where, "line %u: ", n);
        if (len >= sizeof line || memchr(p, 0, len)) {
            snprintf(err, err_size, "%snot a parameter assignment", where);
            return false;
        }
        memcpy(line, p, len);
        line[len] = 0;
        p += len + (nl != NULL);
        char perr[256];
        if (n == 1) {
            if (strncmp(line, "preset=", 7) != 0) {
                snprintf(err, err_size, "%sexpected preset=NAME, got '%s'", where, line);
                return false;
            }
            if (!machine_preset(line + 7, m, perr, sizeof perr)) {
                snprintf(err, err_size, "%s%s", where, perr);
                return false;
            }
        } else if (!machine_set(m, line, perr, sizeof perr)) {
            snprintf(err, err_size, "%s%s", where, perr);
            return false;
        }
    }
    if (size == 0) {
        snprintf(err, err_size, "empty");
        return false;
    }
    return true;
}

/* "1 chip", "4 chips". */
static const char *plural_s(uint32_t n)
{
    return n == 1 ? "" : "s";
}

bool machine_holds_program(const machine *m, const machine *built, uint32_t last_tile,
                           char *err, size_t err_size)
{
    uint32_t chips = machine_u32(m, MP_chips), tpc = machine_u32(m, MP_tiles_per_chip);
    if (!built) {
        if ((uint64_t)last_tile < (uint64_t)chips * tpc)
            return true;
        snprintf(err, err_size, "tile %u is beyond the %u tiles of machine %s (%u chip%s x %u tiles)", last_tile,
                 chips * tpc, m->name, chips, plural_s(chips), tpc);
        return false;
    }
    uint32_t built_chips = machine_u32(built, MP_chips), built_tpc = machine_u32(built, MP_tiles_per_chip);
    uint32_t used = last_tile / built_tpc + 1;
    char uses[64] = "";
    if (used != built_chips)
        snprintf(uses, sizeof uses, " and uses %u chip%s", used, plural_s(used));
    int n = snprintf(err, err_size, "compiled for %s (%u chip%s x %u tiles)%s; %s has ", built->name, built_chips,
                     plural_s(built_chips), built_tpc, uses, m->name);
    size_t at = n < 0 ? 0 : (size_t)n < err_size ? (size_t)n : err_size;
    if (used > chips) {
        snprintf(err + at, err_size - at, "%u chip%s", chips, plural_s(chips));
        return false;
    }
    if (used == 1 && last_tile >= tpc) {
        snprintf(err + at, err_size - at, "%u tiles a chip (the program uses tile %u)", tpc, last_tile);
        return false;
    }
    if (used > 1 && built_tpc != tpc) {
        snprintf(err + at, err_size - at, "%u tiles a chip (tiles are numbered chip by chip)", tpc);
        return false;
    }
    /* The compiler lays out each tile's memory from the start of the
     * machine's region 0 up to the end of its memory. */
    uint32_t mem = machine_u32(m, MP_tile_memory_bytes), built_mem = machine_u32(built, MP_tile_memory_bytes);
    if (mem < built_mem) {
        snprintf(err + at, err_size - at, "%u bytes of tile memory, the program's layout needs %u", mem, built_mem);
        return false;
    }
    uint32_t base = machine_memory_base(m), built_base = machine_memory_base(built);
    if (base > built_base || (uint64_t)base + mem < (uint64_t)built_base + built_mem) {
        snprintf(err + at, err_size - at, "tile memory at 0x%x-0x%llx, the program's layout uses 0x%x-0x%llx "
                 "(tile_region0_bytes %u and tile_memory_bytes %u; the program's %u and %u)", base,
                 (unsigned long long)base + mem - 1, built_base, (unsigned long long)built_base + built_mem - 1,
                 machine_u32(m, MP_tile_region0_bytes), mem, machine_u32(built, MP_tile_region0_bytes), built_mem);
        return false;
    }
    err[0] = 0;
    return true;
}

double machine_cycles_to_seconds(const machine *m, uint64_t cycles)
{
    return (double)cycles / m->value[MP_tile_clock_hz];
}
