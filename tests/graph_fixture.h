/*
 * graph_fixture.h — graphs built in code for the tests of graph passes:
 * f32 inputs and constants, nodes reading tensors by name, the graph
 * sorted and inferred, and its listing checked.
 *
 *   graph *g = graph_new("t", 13);
 *   input(g, "x", 2, dims);
 *   scalar(g, "two", 2);
 *   node(g, GRAPH_OP_POW, "x,two", "y");
 *   finish(g, "y");                        // output y, sorted, inferred
 *
 * gc200() is the machine they are compiled for.  Header-only (static
 * functions) so any tests/test_*.c can include it.
 */
#ifndef IPUSIM_TESTS_GRAPH_FIXTURE_H
#define IPUSIM_TESTS_GRAPH_FIXTURE_H

#include <CUnit/CUnit.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontends/graph.h"
#include "sim/program/machine.h"

/* Preset `name` into m, once (*ready). */
static inline const machine *fixture_preset(const char *name, machine *m, bool *ready)
{
    char err[256];
    if (!*ready)
        CU_ASSERT_TRUE_FATAL(machine_preset(name, m, err, sizeof err));
    *ready = true;
    return m;
}

/* The GC200 preset the graphs are compiled for, and an IPU-M2000 (four
 * chips, streaming memory). */
static inline const machine *gc200(void)
{
    static machine m;
    static bool ready;
    return fixture_preset("gc200", &m, &ready);
}

static inline const machine *m2000(void)
{
    static machine m;
    static bool ready;
    return fixture_preset("m2000", &m, &ready);
}

/* The values of random constants and inputs: a fixed sequence. */
static uint32_t rng = 1;

static inline float rnd(void)
{
    rng = rng * 1664525u + 1013904223u;
    return (float)((rng >> 8) & 0xffff) / 16384.0f - 2.0f;     /* [-2, 2) */
}

static inline int input(graph *g, const char *name, int rank, const int64_t *dims)
{
    int t = graph_add_tensor(g, name);
    g->tensors[t].dtype = GDT_F32;
    g->tensors[t].shape.rank = rank;
    if (rank)
        memcpy(g->tensors[t].shape.dims, dims, (size_t)rank * sizeof *dims);
    g->tensors[t].shape_known = true;
    graph_add_input(g, t);
    return t;
}

/* A constant of random values, or of v when given. */
static inline int cnst(graph *g, const char *name, int rank, const int64_t *dims, const float *v)
{
    graph_shape s = { .rank = rank };
    if (rank)
        memcpy(s.dims, dims, (size_t)rank * sizeof *dims);
    size_t n = (size_t)graph_shape_numel(&s);
    float *data = malloc(n * sizeof *data + 1);
    for (size_t i = 0; i < n; i++)
        data[i] = v ? v[i] : rnd();
    int t = graph_add_tensor(g, name);
    graph_set_constant(g, t, GDT_F32, &s, data);
    free(data);
    return t;
}

static inline int scalar(graph *g, const char *name, float v)
{
    return cnst(g, name, 0, NULL, &v);
}

/* A node reading the named tensors ("a,b"), writing a new tensor out. */
static inline graph_node *node(graph *g, graph_op op, const char *ins, const char *out)
{
    int in[8], n = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", ins);
    for (char *p = strtok(buf, ","); p; p = strtok(NULL, ","))
        in[n++] = graph_find_tensor(g, p);
    for (int i = 0; i < n; i++)
        CU_ASSERT_FATAL(in[i] >= 0);
    int o = graph_add_tensor(g, out);
    CU_ASSERT_FATAL(o >= 0);
    int k = graph_add_node(g, op, out, in, n, &o, 1);    /* may move g->nodes */
    return &g->nodes[k];
}

static inline void finish(graph *g, const char *output)
{
    char err[512];
    graph_add_output(g, graph_find_tensor(g, output));
    CU_ASSERT_TRUE_FATAL(graph_sort(g, err, sizeof err));
    bool ok = graph_infer_all(g, false, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
}

static inline void expect_listing(const graph *g, const char *want)
{
    char *got = graph_dump_string(g);
    if (strcmp(got, want))
        fprintf(stderr, "\n--- got:\n%s--- want:\n%s", got, want);
    CU_ASSERT_STRING_EQUAL(got, want);
    free(got);
}

#endif
