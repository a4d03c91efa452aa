/*
 * test_codelets_pack.c — vtx_pack_b_f16 and vtx_pack_b_f16_h16
 * (workloads/codelets/pack.S) on one GC200 tile: the packed block equals
 * the C model bit for bit, for a row-major B and a row-major B^T, with six
 * workers sharing the groups unevenly (one with none); and the packed
 * weights are the same as matmul_pack_weights of the f16 values with f32
 * partials (groups of 8) and f16 partials (groups of 16).
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/asm/asm.h"
#include "sim/program/machine.h"
#include "sim/engine/tile.h"
#include "test_util.h"
#include "workloads/codelets/pack.h"
#include "workloads/kernels/matmul_model.h"

#define REC_ADDR 0x80000u
#define SRC_ADDR 0x90000u
#define DST_ADDR 0xc0000u

static uint32_t lcg = 12345;
static float rnd(void)
{
    lcg = lcg * 1664525u + 1013904223u;
    return (float)((int32_t)(lcg >> 8) - (1 << 23)) / (float)(1 << 20);
}

/* Pack a k x n block (in B or B^T layout) with 6 workers; returns cycles. */
static uint64_t run_pack(const float *src, size_t k, size_t n, bool transposed, bool h16, f16_t *out)
{
    char text[512], err[4096];
    snprintf(text, sizeof text,
             ".include \"workloads/codelets/pack.S\"\n"
             "    .align 8\n    .globl __supervisor\n    .supervisor\n__supervisor:\n"
             "    setzi $m5, %u\n    setzi $m6, %u\n    setzi $m7, %s\n"
             "    runall $m7, $m5, $m6\n    sync 0\n    exitz $mzero\n",
             REC_ADDR, PACK_V_WORDS * 4u, h16 ? "vtx_pack_b_f16_h16" : "vtx_pack_b_f16");
    const size_t group = h16 ? 16 : 8;
    const char *dirs[] = { IPUSIM_SOURCE_DIR };
    asm_options opt = { .include_dirs = dirs, .n_include_dirs = 1 };
    ipu_exe *e = asm_assemble_string(text, "pack_test.S", &opt, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    machine m;
    ipu_tile *t = calloc(1, sizeof *t);
    CU_ASSERT_TRUE_FATAL(machine_preset("gc200", &m, err, sizeof err) && tile_init(t, &m, 0) &&
                         tile_load(t, e, err, sizeof err));
    CU_ASSERT_EQUAL(tmem_write_bytes(&t->s.mem, SRC_ADDR, src, k * n * 4), TMEM_OK);
    uint32_t ks = transposed ? 4 : (uint32_t)n * 4, ns = transposed ? (uint32_t)k * 4 : 4;
    size_t groups = n / group, g = 0;
    for (unsigned w = 0; w < 6; w++) {
        /* uneven: the last worker gets nothing */
        size_t mine = w == 5 ? 0 : groups / 5 + (w < groups % 5);
        uint32_t rec[PACK_V_WORDS] = { SRC_ADDR + (uint32_t)(g * group * ns),
                                       DST_ADDR + (uint32_t)(g * (k / 16) * group * 32),
                                       (uint32_t)(k / 16), (uint32_t)mine, ks, ns };
        CU_ASSERT_EQUAL(tmem_write_bytes(&t->s.mem, REC_ADDR + w * PACK_V_WORDS * 4, rec, sizeof rec), TMEM_OK);
        g += mine;
    }
    enum tile_stop stop = tile_run_alone(t, 10000000);
    if (stop == TILE_STOP_FAULT) {
        char what[1024];
        tile_describe_fault(t, e, what, sizeof what);
        fprintf(stderr, "\nfault: %s\n", what);
    }
    CU_ASSERT_EQUAL(stop, TILE_STOP_END);
    CU_ASSERT_EQUAL(tmem_read_bytes(&t->s.mem, DST_ADDR, out, k * n * 2), TMEM_OK);
    uint64_t cycles = t->s.cycle;
    tile_free(t);
    free(t);
    exe_free(e);
    return cycles;
}

static void check(size_t k, size_t n, bool transposed, bool h16)
{
    float *src = malloc(k * n * sizeof *src);
    f16_t *got = malloc(k * n * 2), *want = malloc(k * n * 2), *b16 = malloc(k * n * 2), *ref = malloc(k * n * 2);
    for (size_t i = 0; i < k * n; i++)
        src[i] = rnd();
    src[3] = 1e-9f;                          /* f16 subnormal range and below */
    src[5] = 70000.0f;                       /* beyond f16: saturates or inf as the tile does */
    uint64_t cycles = run_pack(src, k, n, transposed, h16, got);
    (h16 ? pack_model_b_f16_h16 : pack_model_b_f16)(src, k, n, transposed ? 1 : n, transposed ? k : 1, want);
    CU_ASSERT_EQUAL(memcmp(got, want, k * n * 2), 0);
    /* The same as packing the f16 values of B with the matmul's own packer. */
    for (size_t kk = 0; kk < k; kk++)
        for (size_t j = 0; j < n; j++) {
            float v = transposed ? src[j * k + kk] : src[kk * n + j];
            size_t q = 0;
            /* the model's conversion of this one value */
            float one[1] = { v };
            f16_t h[128];
            pack_model_b_f16(one, 16, 8, 0, 0, h);
            (void)q;
            b16[kk * n + j] = h[0];
        }
    matmul_pack_weights(b16, k, n, h16 ? MATMUL_PARTIALS_F16 : MATMUL_PARTIALS_F32, ref);
    CU_ASSERT_EQUAL(memcmp(got, ref, k * n * 2), 0);
    /* Cost: about 2 worker issues a value on the busiest worker, 6 tile
     * cycles an issue: the busiest has ceil(groups / 5) groups. */
    const size_t group = h16 ? 16 : 8;
    size_t busiest = (n / group + 4) / 5;
    double per = (double)cycles / (double)(busiest * group * k);
    CU_ASSERT(per > 12.0 && per < 16.0);
    free(src); free(got); free(want); free(b16); free(ref);
}

static void test_row_major(void) { check(64, 40, false, false); }
static void test_transposed(void) { check(128, 64, true, false); }
static void test_one_group(void) { check(16, 8, true, false); }
static void test_h16_row_major(void) { check(64, 112, false, true); }
static void test_h16_transposed(void) { check(128, 64, true, true); }
static void test_h16_one_group(void) { check(16, 16, false, true); }

void test_register(void)
{
    ADD_SUITE("codelets_pack", { "row-major B", test_row_major }, { "B given transposed", test_transposed },
              { "one group, one block", test_one_group },
              { "f16 partials' layout: row-major B", test_h16_row_major },
              { "f16 partials' layout: B given transposed", test_h16_transposed },
              { "f16 partials' layout: one group, one block", test_h16_one_group });
}
