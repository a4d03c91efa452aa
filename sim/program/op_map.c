/*
 * op_map.c — the ".ipusim.ops" section of an executable (op_map.h).
 */
#include "op_map.h"

#include "sim/base/grow.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* s with every character but letters, digits and those in `keep` made '_';
 * at most max - 1 bytes; malloc'd. */
static char *cleaned(const char *s, size_t max, const char *keep)
{
    size_t n = strlen(s);
    n = n < max ? n : max - 1;
    char *c = malloc(n + 1);
    if (!c)
        return NULL;
    for (size_t i = 0; i < n; i++)
        c[i] = isalnum((unsigned char)s[i]) || (s[i] && strchr(keep, s[i])) ? s[i] : '_';
    c[n] = 0;
    return c;
}

int32_t op_map_add_op(op_map *m, const char *type, const char *name)
{
    if (m->n_ops >= INT32_MAX || !base_grow((void **)&m->ops, &m->cap_ops, m->n_ops + 1, sizeof *m->ops))
        return -1;
    op_map_op *o = &m->ops[m->n_ops];
    char *t = cleaned(type, sizeof o->type, "_");
    o->name = cleaned(name && name[0] ? name : "?", OP_MAP_NAME_MAX_BYTES, "_-.:/[]()? ");
    if (!t || !o->name) {
        free(t);
        free(o->name);
        return -1;
    }
    snprintf(o->type, sizeof o->type, "%s", t[0] ? t : "_");
    free(t);
    return (int32_t)m->n_ops++;
}

/* One list of owners (stage 0's, or a stage's): op for superstep's
 * `which`, the supersteps up to it none's until noted. */
static bool note_owner(int32_t (**owner)[2], uint32_t *n, size_t *cap, uint32_t superstep, int which, int32_t op)
{
    if (superstep == UINT32_MAX || !base_grow((void **)owner, cap, superstep + 1, sizeof **owner))
        return false;
    for (; *n <= superstep; (*n)++)
        (*owner)[*n][0] = (*owner)[*n][1] = -1;
    (*owner)[superstep][which] = op;
    return true;
}

bool op_map_note(op_map *m, uint32_t superstep, int which, int32_t op)
{
    return note_owner(&m->owner, &m->n_supersteps, &m->cap_supersteps, superstep, which, op);
}

int32_t op_map_owner(const op_map *m, uint32_t superstep, int which)
{
    return superstep < m->n_supersteps ? m->owner[superstep][which] : -1;
}

bool op_map_note_stage(op_map *m, uint32_t stage, uint32_t superstep, int which, int32_t op)
{
    if (!stage)
        return op_map_note(m, superstep, which, op);
    if (stage >= m->n_stages) {
        uint32_t n = m->n_stages ? m->n_stages : 1;
        struct op_map_stage *more = realloc(m->stages, (size_t)stage * sizeof *more);
        if (!more)
            return false;
        memset(more + (n - 1), 0, (size_t)(stage + 1 - n) * sizeof *more);
        m->stages = more;
        m->n_stages = stage + 1;
    }
    struct op_map_stage *st = &m->stages[stage - 1];
    return note_owner(&st->owner, &st->n_supersteps, &st->cap_supersteps, superstep, which, op);
}

int32_t op_map_owner_stage(const op_map *m, uint32_t stage, uint32_t superstep, int which)
{
    if (!stage || stage >= m->n_stages)
        return op_map_owner(m, superstep, which);
    const struct op_map_stage *st = &m->stages[stage - 1];
    return superstep < st->n_supersteps ? st->owner[superstep][which] : -1;
}

void op_map_free(op_map *m)
{
    for (uint32_t i = 0; i < m->n_ops; i++)
        free(m->ops[i].name);
    free(m->ops);
    free(m->owner);
    for (uint32_t s = 1; s < m->n_stages; s++)
        free(m->stages[s - 1].owner);
    free(m->stages);
    memset(m, 0, sizeof *m);
}

bool op_map_encode(const op_map *m, uint8_t **bytes, size_t *size)
{
    size_t cap = 64, n = 0;
    for (uint32_t i = 0; i < m->n_ops; i++)
        cap += strlen(m->ops[i].type) + strlen(m->ops[i].name) + 8;
    cap += (size_t)m->n_supersteps * 36;
    for (uint32_t s = 1; s < m->n_stages; s++)
        cap += (size_t)m->stages[s - 1].n_supersteps * 36 + 24;
    char *t = malloc(cap);
    if (!t)
        return false;
    for (uint32_t i = 0; i < m->n_ops; i++)
        n += (size_t)snprintf(t + n, cap - n, "op %s %s\n", m->ops[i].type, m->ops[i].name);
    for (uint32_t s = 0; s < m->n_supersteps; s++)
        n += (size_t)snprintf(t + n, cap - n, "superstep %d %d\n", (int)m->owner[s][0], (int)m->owner[s][1]);
    for (uint32_t g = 1; g < m->n_stages; g++) {
        const struct op_map_stage *st = &m->stages[g - 1];
        n += (size_t)snprintf(t + n, cap - n, "stage %u\n", g);
        for (uint32_t s = 0; s < st->n_supersteps; s++)
            n += (size_t)snprintf(t + n, cap - n, "superstep %d %d\n", (int)st->owner[s][0], (int)st->owner[s][1]);
    }
    *bytes = (uint8_t *)t;
    *size = n;
    return true;
}

/* An op's number or -1, below n_ops; false otherwise. */
static bool parse_owner(const char *s, uint32_t n_ops, int32_t *out)
{
    if (!strcmp(s, "-1")) {
        *out = -1;
        return true;
    }
    if (!*s || strlen(s) > 10)
        return false;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return false;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    if (v >= n_ops)
        return false;
    *out = (int32_t)v;
    return true;
}

static bool fail(op_map *m, char *err, size_t err_size, unsigned line, const char *what, const char *text)
{
    snprintf(err, err_size, "line %u: %s '%.60s'", line, what, text);
    op_map_free(m);
    return false;
}

bool op_map_decode(const void *bytes, size_t size, op_map *m, char *err, size_t err_size)
{
    memset(m, 0, sizeof *m);
    const char *p = bytes, *end = p + size;
    char line[OP_MAP_NAME_MAX_BYTES + OP_MAP_TYPE_BYTES + 16];
    uint32_t stage = 0, next = 0;          /* the stage of the superstep lines, its next superstep */
    for (unsigned n = 1; p < end; n++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = (size_t)((nl ? nl : end) - p);
        if (len >= sizeof line || memchr(p, 0, len)) {
            snprintf(err, err_size, "line %u: longer than %zu bytes or not text", n, sizeof line - 1);
            op_map_free(m);
            return false;
        }
        memcpy(line, p, len);
        line[len] = 0;
        p += len + (nl != NULL);
        if (!strncmp(line, "stage ", 6)) {
            char want[24];
            snprintf(want, sizeof want, "stage %u", stage + 1);
            if (strcmp(line, want))
                return fail(m, err, err_size, n, stage + 1 < 2 ? "expected 'stage 1', got" : "stages out of order:",
                            line);
            stage++;
            next = 0;
            if (!op_map_note_stage(m, stage, 0, OP_MAP_COMPUTE, -1))
                return fail(m, err, err_size, n, "out of host memory at", line);
            m->stages[stage - 1].n_supersteps = 0;
            continue;
        }
        if (!strncmp(line, "op ", 3)) {
            if (m->n_supersteps || stage)
                return fail(m, err, err_size, n, "an op after the supersteps:", line);
            char *type = line + 3, *sp = strchr(type, ' ');
            if (!sp || sp == type || !sp[1])
                return fail(m, err, err_size, n, "expected 'op TYPE NAME', got", line);
            *sp = 0;
            if (strlen(type) >= OP_MAP_TYPE_BYTES)
                return fail(m, err, err_size, n, "an op type longer than 31 bytes:", type);
            for (const char *c = type; *c; c++)
                if (!isalnum((unsigned char)*c) && *c != '_')
                    return fail(m, err, err_size, n, "an op type of letters, digits and '_' expected, got", type);
            if (op_map_add_op(m, type, sp + 1) < 0)
                return fail(m, err, err_size, n, "out of host memory at", line);
        } else if (!strncmp(line, "superstep ", 10)) {
            char *c = line + 10, *x = strchr(c, ' ');
            int32_t co, xo;
            if (!x)
                return fail(m, err, err_size, n, "expected 'superstep C X', got", line);
            *x++ = 0;
            if (!parse_owner(c, m->n_ops, &co) || !parse_owner(x, m->n_ops, &xo)) {
                char what[96];
                snprintf(what, sizeof what, "superstep: not -1 or one of the %u ops:", m->n_ops);
                return fail(m, err, err_size, n, what, parse_owner(c, m->n_ops, &co) ? x : c);
            }
            uint32_t s = stage ? next++ : m->n_supersteps;
            if (!op_map_note_stage(m, stage, s, OP_MAP_COMPUTE, co) || !op_map_note_stage(m, stage, s, OP_MAP_EXCHANGE, xo))
                return fail(m, err, err_size, n, "out of host memory at", line);
        } else {
            return fail(m, err, err_size, n, "expected 'op', 'superstep' or 'stage', got", line);
        }
    }
    return true;
}
