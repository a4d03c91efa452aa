/*
 * node_tests.c — what `ipusim validate --onnx-tests [DIR]` does with each
 * ONNX backend node test: import it, compile it for a simulated gc200 and
 * run it when the compiler lowers the graph (the host reference evaluator
 * otherwise), and compare its outputs with the expected ones (tolerance in
 * validate.h).  Also the listing of a directory's tests.
 */
#include "validate.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "frontends/decompose.h"
#include "frontends/fusion.h"
#include "frontends/graph_eval.h"
#include "frontends/onnx_import.h"
#include "frontends/simulate.h"
#include "sim/base/diag.h"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names in dir starting with prefix (all when prefix is ""). */
static char **list_dir(const char *dir, const char *prefix, size_t *count)
{
    DIR *d = opendir(dir);
    *count = 0;
    if (!d)
        return NULL;
    char **names = NULL;
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || strncmp(e->d_name, prefix, strlen(prefix)))
            continue;
        if (*count == cap) {
            cap = cap ? 2 * cap : 64;
            names = realloc(names, cap * sizeof *names);
            if (!names)
                fatal("out of memory");
        }
        names[(*count)++] = strdup(e->d_name);
    }
    closedir(d);
    if (*count)
        qsort(names, *count, sizeof *names, cmp_str);
    return names;
}

void validate_free_names(char **names, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(names[i]);
    free(names);
}

/* Numeric order of input_N.pb / output_N.pb. */
static int cmp_pb(const void *a, const void *b)
{
    const char *x = strchr(*(char *const *)a, '_'), *y = strchr(*(char *const *)b, '_');
    return atoi(x ? x + 1 : "0") - atoi(y ? y + 1 : "0");
}

typedef struct tensor_set {
    size_t n;
    char **names;
    graph_value *values;
} tensor_set;

static void free_set(tensor_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->names[i]);
        graph_value_free(&s->values[i]);
    }
    free(s->names);
    free(s->values);
}

static bool read_set(const char *dir, const char *prefix, tensor_set *s, enum onnx_status *status, char *msg,
                     size_t msg_size)
{
    size_t count;
    char **files = list_dir(dir, prefix, &count);
    if (count)
        qsort(files, count, sizeof *files, cmp_pb);
    s->n = 0;
    s->names = calloc(count + 1, sizeof *s->names);
    s->values = calloc(count + 1, sizeof *s->values);
    if (!s->names || !s->values)
        fatal("out of memory");
    bool ok = true;
    for (size_t i = 0; i < count && ok; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        ok = onnx_read_tensor_file(path, &s->names[i], &s->values[i], status, msg, msg_size);
        if (ok)
            s->n++;
    }
    validate_free_names(files, count);
    return ok;
}

/* Tests whose expected data do not follow from the model by the op's
 * definition, checked with a wider absolute tolerance as ONNX's own
 * reference runner checks them (onnx/test/reference_evaluator_backend_test.py:
 * to 2 decimals, |got - want| < 1.5e-2). */
static const struct {
    const char *test;
    double atol;
    const char *why;
} loose_tests[] = {
    { "test_adam_multiple", 1.5e-2, "its expected data take epsilon 1e-2, which the model leaves at Adam's "
                                    "default 1e-6" },
};

/* The absolute tolerance of the test in test_dir; *why says why it is not
 * VALIDATE_ATOL (NULL when it is). */
static double test_atol(const char *test_dir, const char **why)
{
    const char *base = strrchr(test_dir, '/');
    base = base ? base + 1 : test_dir;
    *why = NULL;
    for (size_t i = 0; i < sizeof loose_tests / sizeof loose_tests[0]; i++)
        if (!strcmp(base, loose_tests[i].test)) {
            *why = loose_tests[i].why;
            return loose_tests[i].atol;
        }
    return VALIDATE_ATOL;
}

/* Compare one output; false with a message on a mismatch.  *worst gets the
 * largest error relative to the tolerance (atol + the dtype's rtol). */
static bool compare_output(const char *name, const graph_value *got, const graph_value *want, double atol,
                           double *worst, char *msg, size_t msg_size)
{
    char s1[200], s2[200];
    if (got->dtype != want->dtype || !graph_shape_equal(&got->shape, &want->shape)) {
        snprintf(msg, msg_size, "output '%s' is %s%s, expected %s%s", name, graph_dtype_name(got->dtype),
                 graph_shape_str(&got->shape, s1, sizeof s1), graph_dtype_name(want->dtype),
                 graph_shape_str(&want->shape, s2, sizeof s2));
        return false;
    }
    size_t n = (size_t)graph_shape_numel(&got->shape);
    bool is_float = graph_dtype_is_float(got->dtype);
    double rtol = got->dtype == GDT_BF16 ? VALIDATE_RTOL_BF16 : VALIDATE_RTOL;
    size_t bad = 0, first_bad = 0;
    for (size_t i = 0; i < n; i++) {
        bool ok;
        if (!is_float)
            ok = graph_load_i64(got->dtype, got->data, i) == graph_load_i64(want->dtype, want->data, i);
        else {
            double g = graph_load_f64(got->dtype, got->data, i), w = graph_load_f64(want->dtype, want->data, i);
            if (isnan(w) || isnan(g))
                ok = isnan(w) && isnan(g);
            else if (isinf(w) || isinf(g))
                ok = g == w;
            else {
                double tol = atol + rtol * fabs(w);
                ok = fabs(g - w) <= tol;
                if (fabs(g - w) / tol > *worst)
                    *worst = fabs(g - w) / tol;
            }
        }
        if (!ok && !bad++)
            first_bad = i;
    }
    if (bad) {
        if (is_float)
            snprintf(msg, msg_size, "output '%s': %zu of %zu elements outside tolerance; first at %zu: got %.9g, "
                     "expected %.9g", name, bad, n, first_bad, graph_load_f64(got->dtype, got->data, first_bad),
                     graph_load_f64(want->dtype, want->data, first_bad));
        else
            snprintf(msg, msg_size, "output '%s': %zu of %zu elements differ; first at %zu: got %lld, expected %lld",
                     name, bad, n, first_bad, (long long)graph_load_i64(got->dtype, got->data, first_bad),
                     (long long)graph_load_i64(want->dtype, want->data, first_bad));
        return false;
    }
    return true;
}

/* The machine node tests are simulated on. */
static const machine *node_test_machine(void)
{
    static machine m;
    static bool ready;
    if (!ready) {
        char err[512];
        if (!machine_preset("gc200", &m, err, sizeof err))
            panic("%s", err);
        ready = true;
    }
    return &m;
}

/* What the data sets of one test came to, beyond pass or fail. */
typedef struct set_report {
    bool simulated;                 /* this data set ran on the simulator */
    uint64_t cycles;                /* simulated cycles of all data sets */
    double worst;                   /* largest error relative to the tolerance */
    char why[512];                  /* why a data set was not simulated */
    char consts[256];               /* inputs the import made constants: "'shape', 'axes'" */
    char loose[200];                /* "; absolute tolerance ...: why" for a test of loose_tests */
} set_report;

/* Note the data set's inputs that are not inputs of the imported graph:
 * values a shape depends on, compiled in as constants. */
static void note_constant_inputs(const graph *g, const tensor_set *ins, set_report *rep)
{
    for (size_t k = 0; k < ins->n; k++) {
        bool input = false;
        for (int i = 0; i < g->n_inputs && !input; i++)
            input = !strcmp(g->tensors[g->inputs[i]].name, ins->names[k]);
        size_t len = strlen(rep->consts);
        if (!input && !strstr(rep->consts, ins->names[k]))
            snprintf(rep->consts + len, sizeof rep->consts - len, "%s'%s'", len ? ", " : "", ins->names[k]);
    }
}

/* The update count T of each optimizer step (input 1 of Momentum, Adam,
 * Adagrad) that is a graph input becomes a constant of the data set's
 * value: the tile has no conversion of a run-time i64 to f32, so the step
 * is compiled for one T (noted like the inputs the import made constants). */
static void bind_update_counts(graph *g, const graph_value *feed, set_report *rep)
{
    for (int k = 0; k < g->n_nodes; k++) {
        const graph_node *n = &g->nodes[k];
        if (n->op != GRAPH_OP_MOMENTUM && n->op != GRAPH_OP_ADAM && n->op != GRAPH_OP_ADAGRAD)
            continue;
        for (int i = 0; i < g->n_inputs; i++) {
            graph_tensor *t = &g->tensors[g->inputs[i]];
            if (g->inputs[i] != n->inputs[1] || t->data || feed[i].dtype != t->dtype)
                continue;
            graph_set_constant(g, g->inputs[i], feed[i].dtype, &feed[i].shape, feed[i].data);
            size_t len = strlen(rep->consts);
            if (!strstr(rep->consts, t->name))
                snprintf(rep->consts + len, sizeof rep->consts - len, "%s'%s'", len ? ", " : "", t->name);
        }
    }
}

/* Why a graph was not lowered: the training op the decompositions left,
 * or the lowering's message after the file name. */
static void note_not_lowered(const decompose_stats *ds, const char *msg, char *why, size_t why_size)
{
    const char *w = strstr(msg, ".onnx: ");
    if (ds->left[0])
        snprintf(why, why_size, "not decomposed: %s", ds->left);
    else
        snprintf(why, why_size, "not lowered: %s", w ? w + 7 : msg);
}

static enum validate_result run_data_set(const char *test_dir, const char *set, bool fuse, bool simulate,
                                         set_report *rep, char *msg, size_t msg_size)
{
    bool *simulated = &rep->simulated;
    uint64_t *cycles = &rep->cycles;
    double *worst = &rep->worst;
    char *why = rep->why;
    size_t why_size = sizeof rep->why;
    char dir[4096], model[4096];
    snprintf(dir, sizeof dir, "%s/%s", test_dir, set);
    snprintf(model, sizeof model, "%s/model.onnx", test_dir);
    tensor_set ins = { 0 }, outs = { 0 };
    enum onnx_status st = ONNX_OK;
    enum validate_result result = VALIDATE_FAIL;
    graph *g = NULL;
    graph_value *got = NULL;
    onnx_known_input *known = NULL;
    if (!read_set(dir, "input_", &ins, &st, msg, msg_size) || !read_set(dir, "output_", &outs, &st, msg, msg_size)) {
        /* Sequences and optionals are not TensorProtos: if the model is one
         * ipusim does not take, that is the reason to give. */
        char reason[2048];
        enum onnx_status mst;
        graph *m = onnx_import_file(model, NULL, &mst, reason, sizeof reason);
        graph_free(m);
        if (!m && mst == ONNX_UNSUPPORTED)
            snprintf(msg, msg_size, "%s", reason);
        result = st == ONNX_UNSUPPORTED || (!m && mst == ONNX_UNSUPPORTED) ? VALIDATE_UNSUPPORTED : VALIDATE_FAIL;
        goto done;
    }
    known = calloc(ins.n + 1, sizeof *known);
    if (!known)
        fatal("out of memory");
    for (size_t i = 0; i < ins.n; i++) {
        if (!ins.names[i][0]) {
            /* unnamed (older test data): input_N.pb feeds the model's Nth input */
            char **names;
            size_t n_names;
            if (!onnx_model_input_names(model, &names, &n_names, &st, msg, msg_size)) {
                result = st == ONNX_UNSUPPORTED ? VALIDATE_UNSUPPORTED : VALIDATE_FAIL;
                goto done;
            }
            if (i < n_names) {
                free(ins.names[i]);
                ins.names[i] = names[i];
                names[i] = NULL;
            }
            for (size_t k = 0; k < n_names; k++)
                free(names[k]);
            free(names);
            if (!ins.names[i][0]) {
                snprintf(msg, msg_size, "%s/input_%zu.pb has no name and the model has %zu inputs", dir, i, n_names);
                goto done;
            }
        }
        known[i] = (onnx_known_input){ ins.names[i], &ins.values[i] };
    }
    /* ONNX's runner feeds the data whatever shapes the model declares, and
     * two 1.12 tests (castlike_*_BFLOAT16_expanded) declare shapes their
     * data do not have: the data decide, as there. */
    onnx_import_options opt = { .known = known, .n_known = ins.n, .values_override_shapes = true };
    g = onnx_import_file(model, &opt, &st, msg, msg_size);
    if (!g) {
        result = st == ONNX_UNSUPPORTED ? VALIDATE_UNSUPPORTED : VALIDATE_FAIL;
        goto done;
    }
    if (fuse && !fusion_run_all(g, NULL, msg, msg_size))
        goto done;
    note_constant_inputs(g, &ins, rep);
    graph_value *feed = calloc((size_t)g->n_inputs + 1, sizeof *feed);
    if (!feed)
        fatal("out of memory");
    for (int i = 0; i < g->n_inputs; i++) {
        const char *name = g->tensors[g->inputs[i]].name;
        size_t k = 0;
        while (k < ins.n && strcmp(ins.names[k], name))
            k++;
        if (k == ins.n) {
            snprintf(msg, msg_size, "%s: no value for input '%s'", dir, name);
            free(feed);
            goto done;
        }
        feed[i] = ins.values[k];
        if (feed[i].dtype == GDT_U16 && g->tensors[g->inputs[i]].dtype == GDT_BF16)
            feed[i].dtype = GDT_BF16;       /* bf16 stored as u16 (see onnx_import.c) */
    }
    if ((size_t)g->n_outputs != outs.n) {
        snprintf(msg, msg_size, "the model has %d outputs, the data set %zu", g->n_outputs, outs.n);
        free(feed);
        goto done;
    }
    got = calloc((size_t)g->n_outputs + 1, sizeof *got);
    if (!got)
        fatal("out of memory");
    bool ok = false;
    *simulated = false;
    int n_const = 0;
    for (int i = 0; i < g->n_outputs; i++)
        n_const += g->tensors[g->outputs[i]].data != NULL;
    if (simulate && n_const == g->n_outputs)
        snprintf(why, why_size, "every output folds to a constant at import: nothing to simulate");
    else if (simulate) {
        lower_options lo = { .machine = node_test_machine() };
        simulate_result sr;
        decompose_stats ds;
        bind_update_counts(g, feed, rep);
        if (!decompose_graph(g, &ds, msg, msg_size)) {
            free(feed);
            goto done;
        }
        ok = simulate_graph(g, &lo, feed, got, &sr, msg, msg_size);
        if (ok) {
            *simulated = true;
            *cycles += sr.cycles;
        } else if (!sr.plan.unsupported) {
            free(feed);
            goto done;                      /* a compile error or a simulated fault */
        } else {
            note_not_lowered(&ds, msg, why, why_size);
            for (int i = 0; i < g->n_outputs; i++)
                graph_value_free(&got[i]);
        }
    }
    if (!*simulated)
        ok = graph_eval(g, feed, got, msg, msg_size);
    free(feed);
    if (!ok)
        goto done;
    for (int i = 0; i < g->n_outputs; i++)
        if (outs.values[i].dtype == GDT_U16 && got[i].dtype == GDT_BF16)
            outs.values[i].dtype = GDT_BF16;
    const char *loose;
    double atol = test_atol(test_dir, &loose);
    for (int i = 0; i < g->n_outputs && ok; i++)
        ok = compare_output(g->tensors[g->outputs[i]].name, &got[i], &outs.values[i], atol, worst, msg, msg_size);
    if (loose)
        snprintf(rep->loose, sizeof rep->loose, "; absolute tolerance %g: %s", atol, loose);
    if (ok)
        result = VALIDATE_PASS;
done:
    if (got)
        for (int i = 0; i < g->n_outputs; i++)
            graph_value_free(&got[i]);
    free(got);
    free(known);
    graph_free(g);
    free_set(&ins);
    free_set(&outs);
    return result;
}

enum validate_result validate_onnx_node_test(const char *test_dir, bool fuse, bool simulate, char *msg,
                                             size_t msg_size)
{
    size_t n_sets;
    char **sets = list_dir(test_dir, "test_data_set_", &n_sets);
    enum validate_result r = VALIDATE_PASS;
    bool all_simulated = true;
    set_report rep = { 0 };
    msg[0] = 0;
    if (!n_sets) {
        snprintf(msg, msg_size, "%s: no test_data_set_* directories", test_dir);
        r = VALIDATE_FAIL;
    }
    for (size_t i = 0; i < n_sets && r == VALIDATE_PASS; i++) {
        rep.simulated = false;
        r = run_data_set(test_dir, sets[i], fuse, simulate, &rep, msg, msg_size);
        all_simulated &= rep.simulated;
    }
    if (r == VALIDATE_PASS && all_simulated)
        snprintf(msg, msg_size, "max err/tol %.3g, simulated on gc200 in %llu cycles%s%s%s%s", rep.worst,
                 (unsigned long long)rep.cycles, rep.consts[0] ? " (compiled in as constants: " : "", rep.consts,
                 rep.consts[0] ? ")" : "", rep.loose);
    else if (r == VALIDATE_PASS) {
        r = simulate ? VALIDATE_PASS_REFERENCE : VALIDATE_PASS;
        snprintf(msg, msg_size, "max err/tol %.3g%s%s%s%s", rep.worst,
                 simulate ? ", not simulated: run on the host reference evaluator (" : "", simulate ? rep.why : "",
                 simulate ? ")" : "", rep.loose);
    }
    validate_free_names(sets, n_sets);
    return r;
}

char **validate_node_test_names(const char *dir, size_t *count)
{
    return list_dir(dir, "test_", count);
}
