/*
 * test_bench_record.c — `ipusim bench --record / --compare` (sim/
 * bench_record.c): a record written and read back is the same, the
 * comparison prints each figure's ratio with its verdict, and bad records
 * are refused with a message naming the file.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frontends/cli/bench_record.h"
#include "sim/base/fileio.h"
#include "test_util.h"

static char path[64];

static void make_path(void)
{
    snprintf(path, sizeof path, "/tmp/ipusim_bench_record_XXXXXX");
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
}

static void test_write_read(void)
{
    make_path();
    bench_record r;
    bench_record_init(&r);
    CU_ASSERT(r.host_threads > 0);
    CU_ASSERT_EQUAL(strlen(r.recorded_utc), 20);
    bench_record_add(&r, "int_loop instructions/s", "instructions/s", 5.25e7);
    bench_record_add(&r, "amp_matmul tile_cycles/s", "tile_cycles/s", 1234.5);
    char err[512];
    CU_ASSERT_TRUE_FATAL(bench_record_write(&r, path, err, sizeof err));
    bench_record back;
    CU_ASSERT_TRUE_FATAL(bench_record_read(&back, path, err, sizeof err));
    CU_ASSERT_EQUAL(back.n_figures, 2);
    CU_ASSERT_STRING_EQUAL(back.figures[0].name, "int_loop instructions/s");
    CU_ASSERT_STRING_EQUAL(back.figures[0].unit, "instructions/s");
    CU_ASSERT_EQUAL(back.figures[0].value, 5.25e7);
    CU_ASSERT_EQUAL(back.figures[1].value, 1234.5);
    CU_ASSERT_STRING_EQUAL(back.host_cpu, r.host_cpu);
    CU_ASSERT_STRING_EQUAL(back.compiler, r.compiler);
    CU_ASSERT_STRING_EQUAL(back.recorded_utc, r.recorded_utc);
    CU_ASSERT_EQUAL(back.optimized, r.optimized);
    CU_ASSERT_EQUAL(back.host_threads, r.host_threads);
    bench_record_free(&back);
    bench_record_free(&r);
    unlink(path);
}

static void test_compare(void)
{
    bench_record before, now;
    bench_record_init(&before);
    bench_record_init(&now);
    before.load_average = now.load_average = 0;   /* no busy-host warning */
    bench_record_add(&before, "a instructions/s", "instructions/s", 100);
    bench_record_add(&before, "b instructions/s", "instructions/s", 100);
    bench_record_add(&before, "gone tile_cycles/s", "tile_cycles/s", 7);
    bench_record_add(&now, "a instructions/s", "instructions/s", 150);
    bench_record_add(&now, "b instructions/s", "instructions/s", 95);
    bench_record_add(&now, "new tile_cycles/s", "tile_cycles/s", 3);
    /* Times: less is faster. */
    bench_record_add(&before, "m simulate_s", "s", 30);
    bench_record_add(&now, "m simulate_s", "s", 10);
    bench_record_add(&before, "m simulate/openblas", "ratio", 100);
    bench_record_add(&now, "m simulate/openblas", "ratio", 200);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    bench_record_compare(&now, &before, out);
    fclose(out);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "a instructions/s                                100            150    1.500  faster\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "b instructions/s                                100             95    0.950  same\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "m simulate_s                                     30             10    3.000  faster\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "m simulate/openblas                             100            200    0.500  slower\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "new tile_cycles/s                                 -              3        -  new\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "gone tile_cycles/s                                7              -        -  not measured now\n"));
    CU_ASSERT_PTR_NULL(strstr(text, "warning"));
    free(text);
    /* Another build is said to be one. */
    now.optimized = !before.optimized;
    out = open_memstream(&text, &len);
    bench_record_compare(&now, &before, out);
    fclose(out);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "warning: recorded with another build"));
    free(text);
    bench_record_free(&before);
    bench_record_free(&now);
}

static void test_bad_records(void)
{
    make_path();
    static const struct { const char *text, *want; } cases[] = {
        { "{}", "not an ipusim bench record (written by `ipusim bench --record`)" },
        { "not json", "not an ipusim bench record (written by `ipusim bench --record`)" },
        { "{\"format\": 2, \"figures\": []}", "bench record format 2, this ipusim reads format 1" },
        { "{\"format\": 1, \"figures\": [{\"name\": \"x\"}]}", "figure 0 needs a name, a unit and a value" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[512] = "";
        CU_ASSERT_TRUE_FATAL(afile_write_all(path, cases[i].text, strlen(cases[i].text), err, sizeof err));
        bench_record r;
        CU_ASSERT_FALSE(bench_record_read(&r, path, err, sizeof err));
        char want[600];
        snprintf(want, sizeof want, "%s: %s", path, cases[i].want);
        CU_ASSERT_STRING_EQUAL(err, want);
    }
    unlink(path);
    char err[512], want[600];
    bench_record r;
    CU_ASSERT_FALSE(bench_record_read(&r, path, err, sizeof err));
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory", path);
    CU_ASSERT_STRING_EQUAL(err, want);
}

/* The committed record reads. */
static void test_committed_record(void)
{
    bench_record r;
    char err[512];
    CU_ASSERT_TRUE_FATAL(bench_record_read(&r, IPUSIM_SOURCE_DIR "/validation/bench_results.json", err, sizeof err));
    CU_ASSERT(r.n_figures >= 4);
    for (size_t i = 0; i < r.n_figures; i++)
        CU_ASSERT(r.figures[i].value > 0);
    CU_ASSERT_TRUE(r.optimized);
    CU_ASSERT_FALSE(r.sanitized);
    bench_record_free(&r);
}

void test_register(void)
{
    ADD_SUITE("bench_record",
              { "write and read back", test_write_read },
              { "compare: ratio and verdict per figure", test_compare },
              { "bad records", test_bad_records },
              { "validation/bench_results.json reads", test_committed_record });
}
