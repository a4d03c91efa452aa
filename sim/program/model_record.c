/*
 * model_record.c — the ".ipusim.model" record of an executable.
 */
#include "model_record.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool model_record_encode(const model_record *r, uint8_t **bytes, size_t *size)
{
    char name[MODEL_RECORD_NAME_BYTES];
    snprintf(name, sizeof name, "%s", r->model);
    for (char *c = name; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    char text[MODEL_RECORD_NAME_BYTES + 64];
    int n = snprintf(text, sizeof text, "model=%s\nmodel_macs=%llu\n", name, (unsigned long long)r->model_macs);
    *bytes = malloc((size_t)n);
    if (!*bytes)
        return false;
    memcpy(*bytes, text, (size_t)n);
    *size = (size_t)n;
    return true;
}

/* A decimal count without sign, spaces or overflow. */
static bool parse_count(const char *s, uint64_t *out)
{
    if (!*s)
        return false;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
            return false;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return true;
}

bool model_record_decode(const void *bytes, size_t size, model_record *r, char *err, size_t err_size)
{
    memset(r, 0, sizeof *r);
    const char *p = bytes, *end = p + size;
    bool have_model = false, have_macs = false;
    char line[MODEL_RECORD_NAME_BYTES + 16];
    unsigned n = 1;
    for (; p < end; n++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = (size_t)((nl ? nl : end) - p);
        if (len >= sizeof line || memchr(p, 0, len)) {
            snprintf(err, err_size, "line %u: longer than %zu bytes or not text", n, sizeof line - 1);
            return false;
        }
        memcpy(line, p, len);
        line[len] = 0;
        p += len + (nl != NULL);
        char *eq = strchr(line, '=');
        if (!eq) {
            snprintf(err, err_size, "line %u: expected key=value, got '%.60s'", n, line);
            return false;
        }
        *eq = 0;
        const char *value = eq + 1;
        if (!strcmp(line, "model")) {
            if (have_model) {
                snprintf(err, err_size, "line %u: model given twice", n);
                return false;
            }
            if (strlen(value) >= sizeof r->model) {
                snprintf(err, err_size, "line %u: model: a name of %zu bytes (at most %zu)", n, strlen(value),
                         sizeof r->model - 1);
                return false;
            }
            strcpy(r->model, value);
            have_model = true;
        } else if (!strcmp(line, "model_macs")) {
            if (have_macs) {
                snprintf(err, err_size, "line %u: model_macs given twice", n);
                return false;
            }
            if (!parse_count(value, &r->model_macs)) {
                snprintf(err, err_size, "line %u: model_macs: '%.40s' is not a decimal count", n, value);
                return false;
            }
            have_macs = true;
        } else {
            snprintf(err, err_size, "line %u: unknown key '%.60s' (model and model_macs are known)", n, line);
            return false;
        }
    }
    if (!have_model || !have_macs) {
        snprintf(err, err_size, "%s missing", !have_model ? "model=NAME" : "model_macs=N");
        return false;
    }
    return true;
}
