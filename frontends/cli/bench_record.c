/*
 * bench_record.c — `ipusim bench --record FILE / --compare FILE` (see
 * bench_record.h).  The file format, one JSON object:
 *
 *   { "format": 1, "how_to_compare": "...", "recorded_utc": "...", "host_cpu": "...", "host_threads": 2,
 *     "compiler": "gcc 12.2.0", "optimized": true, "sanitized": false,
 *     "load_average": 0.4,
 *     "figures": [ { "name": "int_loop instructions/s", "unit": "instructions/s",
 *                    "value": 5.1e7 }, ... ] }
 */
#include "bench_record.h"
#include "commands.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim/base/diag.h"
#include "sim/base/fileio.h"

static char *dup_text(const char *s)
{
    char *d = strdup(s);
    if (!d)
        fatal("out of memory");
    return d;
}

static void host_cpu_name(char *buf, size_t n)
{
    snprintf(buf, n, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10))
            continue;
        const char *colon = strchr(line, ':');
        if (!colon)
            continue;
        colon++;
        while (*colon == ' ' || *colon == '\t')
            colon++;
        snprintf(buf, n, "%s", colon);
        buf[strcspn(buf, "\n")] = 0;
        break;
    }
    fclose(f);
}

void bench_record_init(bench_record *r)
{
    memset(r, 0, sizeof *r);
    host_cpu_name(r->host_cpu, sizeof r->host_cpu);
    long threads = sysconf(_SC_NPROCESSORS_ONLN);
    r->host_threads = threads > 0 ? (int)threads : 0;
#if defined(__clang__)
    snprintf(r->compiler, sizeof r->compiler, "clang %d.%d.%d", __clang_major__, __clang_minor__,
             __clang_patchlevel__);
#elif defined(__GNUC__)
    snprintf(r->compiler, sizeof r->compiler, "gcc %d.%d.%d", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#else
    snprintf(r->compiler, sizeof r->compiler, "unknown");
#endif
#ifdef __OPTIMIZE__
    r->optimized = true;
#endif
#if defined(__SANITIZE_ADDRESS__)
    r->sanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    r->sanitized = true;
#endif
#endif
    double load[1];
    r->load_average = getloadavg(load, 1) == 1 ? load[0] : -1.0;
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(r->recorded_utc, sizeof r->recorded_utc, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void bench_record_free(bench_record *r)
{
    for (size_t i = 0; i < r->n_figures; i++) {
        free(r->figures[i].name);
        free(r->figures[i].unit);
    }
    free(r->figures);
    r->figures = NULL;
    r->n_figures = 0;
    if (r->baseline) {
        bench_record_free(r->baseline);
        free(r->baseline);
        r->baseline = NULL;
    }
}

void bench_record_add(bench_record *r, const char *name, const char *unit, double value)
{
    bench_figure *f = realloc(r->figures, (r->n_figures + 1) * sizeof *f);
    if (!f)
        fatal("out of memory");
    r->figures = f;
    f[r->n_figures].name = dup_text(name);
    f[r->n_figures].unit = dup_text(unit);
    f[r->n_figures].value = value;
    r->n_figures++;
}

bool bench_record_option(bench_record *r, const command *self, int argc, char **argv, int *i)
{
    if (!strcmp(argv[*i], "--record")) {
        r->record_path = cli_value(self, argc, argv, i);
        return true;
    }
    if (!strcmp(argv[*i], "--compare")) {
        r->compare_path = cli_value(self, argc, argv, i);
        if (r->baseline)
            bench_record_free(r->baseline);
        else if (!(r->baseline = malloc(sizeof *r->baseline)))
            fatal("out of memory");
        char err[1024];
        if (!bench_record_read(r->baseline, r->compare_path, err, sizeof err))
            fatal("%s", err);
        return true;
    }
    return false;
}

bool bench_record_write(const bench_record *r, const char *path, char *err, size_t err_size)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "format", BENCH_RECORD_FORMAT);
    cJSON_AddStringToObject(root, "how_to_compare",
                            "ipusim bench --compare THIS_FILE prints each figure now, as recorded, and the speed-up "
                            "(above 1: faster now, for rates and times alike); ipusim bench --record THIS_FILE replaces it (use a Release build "
                            "on an idle host)");
    cJSON_AddStringToObject(root, "recorded_utc", r->recorded_utc);
    cJSON_AddStringToObject(root, "host_cpu", r->host_cpu);
    cJSON_AddNumberToObject(root, "host_threads", r->host_threads);
    cJSON_AddStringToObject(root, "compiler", r->compiler);
    cJSON_AddBoolToObject(root, "optimized", r->optimized);
    cJSON_AddBoolToObject(root, "sanitized", r->sanitized);
    cJSON_AddNumberToObject(root, "load_average", r->load_average);
    cJSON *figs = cJSON_AddArrayToObject(root, "figures");
    for (size_t i = 0; i < r->n_figures; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", r->figures[i].name);
        cJSON_AddStringToObject(o, "unit", r->figures[i].unit);
        cJSON_AddNumberToObject(o, "value", r->figures[i].value);
        cJSON_AddItemToArray(figs, o);
    }
    return cli_write_json(path, root, err, err_size);
}

static const char *json_string(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool json_number(const cJSON *o, const char *key, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v))
        return false;
    *out = v->valuedouble;
    return true;
}

bool bench_record_read(bench_record *r, const char *path, char *err, size_t err_size)
{
    memset(r, 0, sizeof *r);
    char *text;
    size_t size;
    if (!read_file_limited(path, READ_LIMIT_RECORD, "a bench record may have", READ_STREAMS, &text, &size, err,
                           err_size))
        return false;
    cJSON *root = cJSON_ParseWithLength(text, size);
    free(text);
    double format = 0, number;
    const cJSON *figs = root ? cJSON_GetObjectItemCaseSensitive(root, "figures") : NULL;
    if (!cJSON_IsObject(root) || !json_number(root, "format", &format) || !cJSON_IsArray(figs)) {
        snprintf(err, err_size, "%s: not an ipusim bench record (written by `ipusim bench --record`)", path);
        cJSON_Delete(root);
        return false;
    }
    if (format != BENCH_RECORD_FORMAT) {
        snprintf(err, err_size, "%s: bench record format %g, this ipusim reads format %d", path, format,
                 BENCH_RECORD_FORMAT);
        cJSON_Delete(root);
        return false;
    }
    const char *s;
    if ((s = json_string(root, "recorded_utc")))
        snprintf(r->recorded_utc, sizeof r->recorded_utc, "%s", s);
    if ((s = json_string(root, "host_cpu")))
        snprintf(r->host_cpu, sizeof r->host_cpu, "%s", s);
    if ((s = json_string(root, "compiler")))
        snprintf(r->compiler, sizeof r->compiler, "%s", s);
    if (json_number(root, "host_threads", &number))
        r->host_threads = (int)number;
    r->load_average = json_number(root, "load_average", &number) ? number : -1.0;
    r->optimized = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "optimized"));
    r->sanitized = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "sanitized"));
    size_t k = 0;
    const cJSON *f;
    cJSON_ArrayForEach(f, figs) {
        const char *name = json_string(f, "name"), *unit = json_string(f, "unit");
        double value;
        if (!name || !unit || !json_number(f, "value", &value)) {
            snprintf(err, err_size, "%s: figure %zu needs a name, a unit and a value", path, k);
            cJSON_Delete(root);
            bench_record_free(r);
            return false;
        }
        bench_record_add(r, name, unit, value);
        k++;
    }
    cJSON_Delete(root);
    return true;
}

static const bench_figure *find_figure(const bench_record *r, const char *name)
{
    for (size_t i = 0; i < r->n_figures; i++)
        if (!strcmp(r->figures[i].name, name))
            return &r->figures[i];
    return NULL;
}

static bool busy(const bench_record *r)
{
    return r->load_average >= 0 && r->host_threads > 0 && r->load_average > 0.5 * r->host_threads;
}

/* Figures that are times ("s"), a cost relative to the host ("ratio") or
 * host memory and file sizes ("bytes"):
 * less is better. */
static bool lower_is_better(const bench_figure *f)
{
    return !strcmp(f->unit, "s") || !strcmp(f->unit, "ratio") || !strcmp(f->unit, "bytes");
}

void bench_record_compare(const bench_record *now, const bench_record *before, FILE *out)
{
    fprintf(out, "compared with the record of %s (%s, %s%s, load %.2f)\n", before->recorded_utc, before->host_cpu,
            before->compiler, before->optimized ? "" : ", not optimised", before->load_average);
    if (strcmp(now->host_cpu, before->host_cpu))
        fprintf(out, "warning: recorded on another CPU (%s): the ratios compare hosts as well as code\n",
                before->host_cpu);
    if (strcmp(now->compiler, before->compiler) || now->optimized != before->optimized ||
        now->sanitized != before->sanitized)
        fprintf(out, "warning: recorded with another build (%s%s%s; now %s%s%s)\n", before->compiler,
                before->optimized ? ", optimised" : ", not optimised", before->sanitized ? ", sanitised" : "",
                now->compiler, now->optimized ? ", optimised" : ", not optimised", now->sanitized ? ", sanitised" : "");
    if (busy(now) || busy(before))
        fprintf(out, "warning: the host was busy (load %.2f now, %.2f then, on %d threads): expect noise\n",
                now->load_average, before->load_average, now->host_threads);
    fprintf(out, "\n%-36s %14s %14s %8s\n", "figure", "recorded", "now", "speed-up");
    for (size_t i = 0; i < now->n_figures; i++) {
        const bench_figure *f = &now->figures[i], *b = find_figure(before, f->name);
        if (!b || !(b->value > 0)) {
            fprintf(out, "%-36s %14s %14.4g %8s  new\n", f->name, "-", f->value, "-");
            continue;
        }
        /* A speed-up: above 1 is faster now, for rates and for times alike. */
        double ratio = lower_is_better(f) ? b->value / f->value : f->value / b->value;
        const char *verdict = ratio > 1 + BENCH_NOISE_FRACTION   ? "faster"
                              : ratio < 1 - BENCH_NOISE_FRACTION ? "slower"
                                                                 : "same";
        fprintf(out, "%-36s %14.4g %14.4g %8.3f  %s\n", f->name, b->value, f->value, ratio, verdict);
    }
    for (size_t i = 0; i < before->n_figures; i++)
        if (!find_figure(now, before->figures[i].name))
            fprintf(out, "%-36s %14.4g %14s %8s  not measured now\n", before->figures[i].name,
                    before->figures[i].value, "-", "-");
}

bool bench_record_finish(bench_record *r, FILE *out, char *err, size_t err_size)
{
    if (r->baseline) {
        fprintf(out, "\n%s: ", r->compare_path);
        bench_record_compare(r, r->baseline, out);
    }
    if (r->record_path) {
        if (!bench_record_write(r, r->record_path, err, err_size))
            return false;
        fprintf(out, "\nrecorded in %s\n", r->record_path);
    }
    return true;
}
