/*
 * validate_cmd.c — `ipusim validate`: its three forms' options, reports
 * and exit status.  --onnx-tests runs the ONNX backend node tests
 * (validation/node_tests.c), --model one model against host references
 * (validation/validate_model.c), --micro the microbenchmarks against
 * published figures (validation/micro.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "frontends/onnx_import.h"
#include "sim/base/diag.h"
#include "validation/micro.h"
#include "validation/validate.h"

/* `ipusim validate --micro [--micro-dir DIR] [--quick] [--filter TEXT]
 * [--threads N] [--json FILE]`: prints the table; 0 when every row ran and
 * is within its band, else 1. */
static int validate_micro(int argc, char **argv, const command *self)
{
    micro_options o = { 0 };
    const char *json = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--micro"))
            continue;
        else if (!strcmp(argv[i], "--micro-dir"))
            o.dir = cli_value(self, argc, argv, &i);
        else if (!strcmp(argv[i], "--quick"))
            o.quick = true;
        else if (!strcmp(argv[i], "--filter"))
            o.filter = cli_value(self, argc, argv, &i);
        else if (!strcmp(argv[i], "--json"))
            json = cli_value(self, argc, argv, &i);
        else if (!strcmp(argv[i], "--threads")) {
            const char *v = cli_value(self, argc, argv, &i);
            uint64_t t;
            if (!cli_parse_u64(v, 1024, &t, NULL) || t < 1)
                cli_usage_error(self, "--threads: expected a number from 1 to 1024, got '%s'", v);
            o.threads = (int)t;
        } else
            cli_usage_error(self, "unknown argument '%s'", argv[i]);
    }
    char err[1024];
    if (json && !cli_check_output(json, err, sizeof err))
        fatal("%s", err);
    size_t n;
    micro_result *r = micro_run_all(&o, &n);
    if (!r) {
        if (o.filter)
            fatal("validate --micro: no benchmark matches '%s'", o.filter);
        fatal("validate --micro: out of memory");
    }
    printf("microbenchmarks held against published figures (programs in %s%s)\n\n", o.dir ? o.dir : MICRO_DEFAULT_DIR,
           o.quick ? "; quick: on-chip ones on one column of tiles, aggregates scaled to the chip" : "");
    printf("%-26s %-7s %11s %11s %-13s %8s %6s  %-6s %s\n", "benchmark", "machine", "simulated", "published", "unit",
           "error %", "band", "result", "source");
    size_t passed = 0;
    for (size_t i = 0; i < n; i++) {
        if (r[i].ran)
            printf("%-26s %-7s %11.4g %11.4g %-13s %+8.2f %5.0f%%  %-6s %s\n", r[i].name, r[i].machine, r[i].simulated,
                   r[i].published, r[i].unit, r[i].error_pct, r[i].band_pct, r[i].pass ? "PASS" : "FAIL", r[i].source);
        else
            printf("%-26s %-7s %11s %11.4g %-13s %8s %5.0f%%  %-6s %s\n", r[i].name, r[i].machine, "-", r[i].published,
                   r[i].unit, "-", r[i].band_pct, "ERROR", r[i].message);
        passed += r[i].pass;
    }
    printf("\n%zu benchmarks: %zu within their band, %zu not\n", n, passed, n - passed);
    if (json) {
        if (!cli_write_json(json, micro_json(&o, r, n), err, sizeof err)) {
            free(r);
            fatal("%s", err);
        }
    }
    free(r);
    return passed == n ? 0 : 1;
}

/* The update is w - lr g, nothing else: a weight's change is -lr times its
 * gradient (up to the rounding of the new weight). */
static bool plain_sgd(const train_options *o)
{
    return o->optimizer == TRAIN_SGD && o->momentum == 0 && o->weight_decay == 0 && o->loss_scale == 1;
}

/* `ipusim validate --model MODEL [--machine NAME] [--set P=V]... [compile
 * options]`: 1 when an output is outside its tolerance. */
static int validate_model_cmd(int argc, char **argv, const command *self)
{
    machine m;
    char err[4096];
    if (!machine_preset("gc200", &m, err, sizeof err))
        panic("%s", err);
    const char *model = NULL;
    lower_options o = { 0 };
    bool fuse = true;
    cli_train t;
    cli_train_init(&t);
    uint64_t steps = 0;
    for (int i = 1; i < argc; i++) {
        if (cli_machine_option(self, &m, argc, argv, &i) || cli_compile_option(self, &o, &fuse, argc, argv, &i) ||
            cli_train_option(self, &t, argc, argv, &i))
            continue;
        if (!strcmp(argv[i], "--model")) {
            model = cli_value(self, argc, argv, &i);
        } else if (!strcmp(argv[i], "--steps")) {
            const char *v = cli_value(self, argc, argv, &i);
            if (!cli_parse_u64(v, 1000, &steps, NULL) || steps == 0)
                cli_usage_error(self, "--steps: '%s' is not a step count (1..1000)", v);
        } else {
            cli_usage_error(self, "unknown argument '%s' (with --model)", argv[i]);
        }
    }
    if (steps && !t.train)
        fatal("%s: --steps needs --train", model);
    o.machine = &m;
    /* a training step is held against the host's step of one replica: the
     * replicas' all-reduce needs them all */
    if (t.train && o.replicas > 1)
        fatal("%s: validate --train holds one replica's step against the host reference; --replicas %u would sum "
              "the gradients of %u (compare or run such a step)", model, o.replicas, o.replicas);
    if (t.train)
        o.replicas = 1;
    cli_check_compile_options(model, &o);
    t.o.anchor_gradients = t.train;
    train_info info;
    graph *g = cli_load_model(model, fuse, &t, &o, &info);
    int failed = t.train ? validate_training(model, g, &o, &info, steps ? (int)steps : 1, stdout, err, sizeof err)
                         : validate_model(model, g, &o, stdout, err, sizeof err);
    /* Every gradient also an output keeps them all to the end of the step
     * and streams them out; where that does not fit and plain SGD makes a
     * weight's change -lr times its gradient, the changes check the
     * gradients and the step compiled as it is trained is validated. */
    if (failed < 0 && t.train && strstr(err, "does not fit") && plain_sgd(&t.o)) {
        printf("(with every gradient also an output the step does not fit; validating the step as it trains, its "
               "gradients through the weight changes)\n\n");
        graph_free(g);
        t.o.anchor_gradients = false;
        g = cli_load_model(model, fuse, &t, &o, &info);
        failed = validate_training(model, g, &o, &info, steps ? (int)steps : 1, stdout, err, sizeof err);
    }
    graph_free(g);
    if (failed < 0)
        fatal("%s", err);
    return failed ? 1 : 0;
}

/* The header of the --onnx-tests report: where the tests are, how they
 * run, the tolerance. */
static void print_node_tests_header(const char *dir, bool fuse, bool simulate)
{
    printf("ONNX backend node tests in %s\n", dir);
    if (simulate)
        printf("mode: each graph the compiler lowers is compiled for gc200 and simulated, its outputs compared; "
               "the others (not lowered, or folded whole to constants at import) run on the host reference "
               "evaluator (PASS-REF)%s\n", fuse ? "; graphs fused first" : "");
    else
        printf("mode: host reference evaluator only (--reference)%s\n", fuse ? "; graphs fused first" : "");
    printf("tolerance: |got - want| <= %g + %g |want| for floats (the ONNX test runner's), one ulp for bf16, "
           "exact for integers and bool\n\n", VALIDATE_ATOL, VALIDATE_RTOL);
}

/* Every node test in dir whose name contains filter (NULL: all), one line
 * each (quiet: failures only) and a summary; 1 when any failed. */
static int run_node_tests(const char *dir, const char *filter, bool fuse, bool simulate, bool quiet)
{
    size_t n_tests;
    char **tests = validate_node_test_names(dir, &n_tests);
    if (!n_tests)
        fatal("%s: no ONNX node tests (test_* folders) found", dir);
    size_t matching = 0;
    for (size_t i = 0; i < n_tests; i++)
        matching += !filter || strstr(tests[i], filter);
    if (!matching) {
        validate_free_names(tests, n_tests);
        fatal("validate --onnx-tests: no test in %s matches '%s'", dir, filter);
    }
    print_node_tests_header(dir, fuse, simulate);
    size_t counts[4] = { 0 };
    static const char *labels[] = { "PASS", "FAIL", "UNSUPPORTED", "PASS-REF" };
    for (size_t i = 0; i < n_tests; i++) {
        if (filter && !strstr(tests[i], filter))
            continue;
        char path[4096], msg[2048];
        snprintf(path, sizeof path, "%s/%s", dir, tests[i]);
        enum validate_result r = validate_onnx_node_test(path, fuse, simulate, msg, sizeof msg);
        counts[r]++;
        if (!quiet || r == VALIDATE_FAIL)
            printf("%-11s %s: %s\n", labels[r], tests[i], msg);
    }
    validate_free_names(tests, n_tests);
    size_t total = counts[0] + counts[1] + counts[2] + counts[3];
    if (simulate)
        printf("\n%zu tests: %zu passed (%zu simulated on gc200, %zu on the reference evaluator), %zu failed, "
               "%zu unsupported\n", total, counts[VALIDATE_PASS] + counts[VALIDATE_PASS_REFERENCE],
               counts[VALIDATE_PASS], counts[VALIDATE_PASS_REFERENCE], counts[VALIDATE_FAIL],
               counts[VALIDATE_UNSUPPORTED]);
    else
        printf("\n%zu tests: %zu passed, %zu failed, %zu unsupported\n", total, counts[VALIDATE_PASS],
               counts[VALIDATE_FAIL], counts[VALIDATE_UNSUPPORTED]);
    return counts[VALIDATE_FAIL] ? 1 : 0;
}

int cmd_validate(int argc, char **argv, const command *self)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--micro"))
            return validate_micro(argc, argv, self);
        if (!strcmp(argv[i], "--model"))
            return validate_model_cmd(argc, argv, self);
    }
    const char *dir = NULL, *filter = NULL;
    bool onnx_tests = false, quiet = false, fuse = false, simulate = true;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reference"))
            simulate = false;
        else if (!strcmp(argv[i], "--onnx-tests")) {
            onnx_tests = true;
            if (i + 1 < argc && argv[i + 1][0] != '-')
                dir = argv[++i];
        } else if (!strcmp(argv[i], "--filter"))
            filter = cli_value(self, argc, argv, &i);
        else if (!strcmp(argv[i], "--fuse"))
            fuse = true;
        else if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q"))
            quiet = true;
        else
            cli_usage_error(self, "unknown argument '%s'", argv[i]);
    }
    if (!onnx_tests)
        cli_usage_error(self, "%s", "nothing to validate (give --onnx-tests)");
    if (!dir)
        dir = VALIDATE_DEFAULT_NODE_TESTS;
    if (!onnx_available())
        fatal("validate: ipusim was built without ONNX support (protobuf-c and frontends/onnx.cmake)");
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        fatal("%s: cannot open: %s", dir, errno ? strerror(errno) : "not a directory");
    return run_node_tests(dir, filter, fuse, simulate, quiet);
}
