/*
 * phases.c — the phases of a compiled program (phases.h).
 */
#include "phases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Index of phase `name`, added when new (-1: no room). */
static int phase_index(program_phases *ph, const char *name)
{
    for (uint32_t i = 0; i < ph->n; i++)
        if (!strncmp(ph->name[i], name, sizeof ph->name[0] - 1))
            return (int)i;
    if (ph->n == PHASES_MAX)
        return -1;
    snprintf(ph->name[ph->n], sizeof ph->name[0], "%s", name);
    return (int)ph->n++;
}

bool phases_add(program_phases *ph, uint32_t first, const char *name)
{
    struct phase_stretch *last = ph->n_stretches ? &ph->s[ph->n_stretches - 1] : NULL;
    if (last && last->first_superstep == first) {
        /* renamed: drop its phase when it was the newest and had no other stretch */
        uint8_t old = last->phase;
        ph->n_stretches--;
        bool used = false;
        for (uint32_t i = 0; i < ph->n_stretches && !used; i++)
            used = ph->s[i].phase == old;
        if (!used && old + 1u == ph->n)
            ph->n--;
        last = ph->n_stretches ? &ph->s[ph->n_stretches - 1] : NULL;
    }
    int k = phase_index(ph, name);
    if (k < 0)
        return false;
    if (last && last->phase == k)
        return true;
    if (ph->n_stretches == PHASES_MAX_STRETCHES)
        return false;
    ph->s[ph->n_stretches].first_superstep = first;
    ph->s[ph->n_stretches].phase = (uint8_t)k;
    ph->n_stretches++;
    return true;
}

char *phases_encode(const program_phases *ph, size_t *size)
{
    size_t cap = (size_t)ph->n_stretches * 48 + 32, len = 0;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    s[0] = 0;
    if (ph->samples)
        len += (size_t)snprintf(s, cap, "samples %llu\n", (unsigned long long)ph->samples);
    if (ph->pipeline_stages)
        len += (size_t)snprintf(s + len, cap - len, "pipeline %u %u %u\n", ph->pipeline_stages, ph->micro_batches,
                                ph->pipeline_cycles);
    if (ph->all_reduce_bytes)
        len += (size_t)snprintf(s + len, cap - len, "all-reduce %llu\n", (unsigned long long)ph->all_reduce_bytes);
    for (uint32_t i = 0; i < ph->n_stretches; i++)
        len += (size_t)snprintf(s + len, cap - len, "superstep %u %s\n", ph->s[i].first_superstep,
                                ph->name[ph->s[i].phase]);
    *size = len;
    return s;
}

static bool name_ok(const char *s, size_t n)
{
    if (n == 0 || n > 15)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
              s[i] == '_' || s[i] == '-'))
            return false;
    return true;
}

bool phases_decode(const void *bytes, size_t size, program_phases *ph, char *err, size_t err_size)
{
    memset(ph, 0, sizeof *ph);
    const char *s = bytes, *end = s + size;
    for (unsigned line = 1; s < end; line++) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        if (!nl) {
            snprintf(err, err_size, "phases: line %u has no end", line);
            return false;
        }
        char buf[64];
        size_t n = (size_t)(nl - s);
        unsigned long first;
        int used = 0;
        if (n >= sizeof buf) {
            snprintf(err, err_size, "phases: line %u is too long", line);
            return false;
        }
        memcpy(buf, s, n);
        buf[n] = 0;
        unsigned long long samples;
        if (line == 1 && n > 8 && buf[8] >= '0' && buf[8] <= '9' && sscanf(buf, "samples %llu%n", &samples, &used) == 1 &&
            (size_t)used == n) {
            if (!samples) {
                snprintf(err, err_size, "phases: line 1: no samples");
                return false;
            }
            ph->samples = samples;
            s = nl + 1;
            continue;
        }
        unsigned stages, micro, cycles;
        used = 0;
        if (!ph->n_stretches && !ph->pipeline_stages && !strncmp(buf, "pipeline ", 9)) {
            if (sscanf(buf, "pipeline %u %u %u%n", &stages, &micro, &cycles, &used) != 3 || (size_t)used != n ||
                !stages || !micro || cycles < micro || buf[9] < '0' || buf[9] > '9') {
                snprintf(err, err_size, "phases: line %u: expected \"pipeline CHIPS MICRO_BATCHES CYCLES\"", line);
                return false;
            }
            ph->pipeline_stages = stages;
            ph->micro_batches = micro;
            ph->pipeline_cycles = cycles;
            s = nl + 1;
            continue;
        }
        unsigned long long reduced;
        used = 0;
        if (!ph->n_stretches && !ph->all_reduce_bytes && !strncmp(buf, "all-reduce ", 11)) {
            if (sscanf(buf, "all-reduce %llu%n", &reduced, &used) != 1 || (size_t)used != n || !reduced ||
                buf[11] < '0' || buf[11] > '9') {
                snprintf(err, err_size, "phases: line %u: expected \"all-reduce BYTES\"", line);
                return false;
            }
            ph->all_reduce_bytes = reduced;
            s = nl + 1;
            continue;
        }
        used = 0;
        if (sscanf(buf, "superstep %lu %n", &first, &used) != 1 || used == 0 || first > UINT32_MAX ||
            !name_ok(buf + used, n - (size_t)used)) {
            snprintf(err, err_size, "phases: line %u: expected \"superstep N NAME\"", line);
            return false;
        }
        if (ph->n_stretches && first <= ph->s[ph->n_stretches - 1].first_superstep) {
            snprintf(err, err_size, "phases: line %u: superstep %lu does not follow %u", line, first,
                     ph->s[ph->n_stretches - 1].first_superstep);
            return false;
        }
        if (!phases_add(ph, (uint32_t)first, buf + used)) {
            snprintf(err, err_size, "phases: line %u: more than %d phases or %d stretches", line, PHASES_MAX,
                     PHASES_MAX_STRETCHES);
            return false;
        }
        s = nl + 1;
    }
    return true;
}

int phases_of_superstep(const program_phases *ph, uint32_t s)
{
    if (!ph->n_stretches)
        return -1;
    /* the last stretch starting at or before s (the first when none does) */
    uint32_t lo = 0, hi = ph->n_stretches;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ph->s[mid].first_superstep <= s)
            lo = mid;
        else
            hi = mid;
    }
    return ph->s[lo].phase;
}
