/*
 * test_tensor_map.c — the tensor map blob (sim/program/tensor_map.h): what is
 * encoded decodes to the same tensors and pieces, and every malformed
 * blob is refused with a message naming the source and the problem.
 */
#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

#include "sim/program/tensor_map.h"
#include "test_util.h"

static tensor_map *sample(void)
{
    tensor_map *m = tmap_new();
    uint64_t d1[2] = { 4, 6 }, d2[1] = { 5 };
    tmap_tensor *a = tmap_add_tensor(m, "input.a", 1, 4, 2, d1, TMAP_INPUT);
    tmap_add_piece(a, 0, 0x80000, 0, 12, 0);
    tmap_add_piece(a, 1, 0x80040, 12, 12, 1);
    a->value_limit = 30522;
    a->perm[0] = 1;                 /* stored transposed: [6, 4] */
    a->perm[1] = 0;
    tmap_tensor *b = tmap_add_tensor(m, "w", 10, 2, 1, d2, TMAP_WEIGHT);
    tmap_add_piece(b, 3, 0x90000, 0, 5, TMAP_NO_STREAM);
    return m;
}

static void test_round_trip(void)
{
    tensor_map *m = sample();
    uint8_t *blob;
    size_t size;
    CU_ASSERT_TRUE_FATAL(tmap_encode(m, &blob, &size));
    /* magic, version, count; "input.a" = 7 bytes padded to 8. */
    CU_ASSERT_EQUAL(memcmp(blob, "IPTM", 4), 0);
    char err[256];
    tensor_map *back = tmap_decode(blob, size, "p.elf", err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(back);
    CU_ASSERT_EQUAL(back->n_tensors, 2);
    const tmap_tensor *a = tmap_find(back, "input.a");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(a->dtype, 1);
    CU_ASSERT_EQUAL(a->rank, 2);
    CU_ASSERT_EQUAL(a->dims[1], 6);
    CU_ASSERT_EQUAL(tmap_elements(a), 24);
    CU_ASSERT_EQUAL(a->perm[0], 1);
    CU_ASSERT_EQUAL(a->value_limit, 30522);
    CU_ASSERT_EQUAL(tmap_find(back, "w")->value_limit, 0);
    CU_ASSERT_FALSE(tmap_is_identity(a));
    CU_ASSERT_TRUE(tmap_is_identity(tmap_find(back, "w")));
    /* Logical [4, 6] row-major -> stored [6, 4] and back. */
    float logical[24], stored[24], again[24];
    for (int i = 0; i < 24; i++)
        logical[i] = (float)i;
    tmap_permute(a, logical, stored, true);
    CU_ASSERT_EQUAL(stored[1], 6.0f);      /* stored (0, 1) = logical (1, 0) */
    CU_ASSERT_EQUAL(stored[4], 1.0f);      /* stored (1, 0) = logical (0, 1) */
    CU_ASSERT_EQUAL(stored[23], 23.0f);
    tmap_permute(a, stored, again, false);
    CU_ASSERT_EQUAL(memcmp(logical, again, sizeof again), 0);
    CU_ASSERT_EQUAL(a->n_pieces, 2);
    CU_ASSERT_EQUAL(a->pieces[1].tile, 1);
    CU_ASSERT_EQUAL(a->pieces[1].addr, 0x80040);
    CU_ASSERT_EQUAL(a->pieces[1].first, 12);
    CU_ASSERT_EQUAL(a->pieces[1].stream, 1);
    const tmap_tensor *w = tmap_find(back, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    CU_ASSERT_EQUAL(w->role, TMAP_WEIGHT);
    CU_ASSERT_EQUAL(w->pieces[0].stream, TMAP_NO_STREAM);
    CU_ASSERT_PTR_NULL(tmap_find(back, "nope"));
    CU_ASSERT_STRING_EQUAL(tmap_dtype_name(10), "f16");
    tmap_free(back);
    free(blob);
    tmap_free(m);
}

/* A version 2 map (no value limits), as older executables hold, still reads. */
static void test_version_2(void)
{
    tensor_map *m = sample();
    uint8_t *blob;
    size_t size;
    CU_ASSERT_TRUE_FATAL(tmap_encode(m, &blob, &size));
    /* drop each tensor's 8 bytes of value limit, after its role */
    uint8_t *old = malloc(size);
    size_t a_role = 12 + 4 + 8 + 12 + 16 + 8, w_start = a_role + 16 + 2 * 28;
    size_t w_role = w_start + 4 + 4 + 12 + 8 + 4;
    size_t n = 0;
    memcpy(old + n, blob, a_role + 4), n += a_role + 4;
    memcpy(old + n, blob + a_role + 12, w_role + 4 - (a_role + 12)), n += w_role + 4 - (a_role + 12);
    memcpy(old + n, blob + w_role + 12, size - (w_role + 12)), n += size - (w_role + 12);
    old[4] = 2;
    char err[256] = "";
    tensor_map *back = tmap_decode(old, n, "old.elf", err, sizeof err);
    if (!back)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(back);
    CU_ASSERT_EQUAL(tmap_find(back, "input.a")->value_limit, 0);
    CU_ASSERT_EQUAL(tmap_find(back, "w")->pieces[0].tile, 3);
    tmap_free(back);
    free(old);
    free(blob);
    tmap_free(m);
}

static void expect_error(const uint8_t *blob, size_t size, const char *want)
{
    char err[256] = "";
    tensor_map *m = tmap_decode(blob, size, "p.elf", err, sizeof err);
    CU_ASSERT_PTR_NULL(m);
    tmap_free(m);
    if (!strstr(err, want)) {
        fprintf(stderr, "\n  got '%s', want '%s'\n", err, want);
        CU_FAIL("message");
    }
}

static void test_malformed(void)
{
    tensor_map *m = sample();
    uint8_t *blob;
    size_t size;
    CU_ASSERT_TRUE_FATAL(tmap_encode(m, &blob, &size));
    /* Every truncation is refused, never read past. */
    for (size_t cut = 0; cut < size; cut++) {
        char err[256];
        tensor_map *t = tmap_decode(blob, cut, "p.elf", err, sizeof err);
        CU_ASSERT_PTR_NULL(t);
        CU_ASSERT(strncmp(err, "p.elf: tensor map: ", 19) == 0);
        tmap_free(t);
    }
    uint8_t *bad = malloc(size + 4);
    memcpy(bad, blob, size);
    bad[0] = 'X';
    expect_error(bad, size, "p.elf: tensor map: not a tensor map (bad magic)");
    memcpy(bad, blob, size);
    bad[4] = 1;
    expect_error(bad, size, "version 1, this ipusim reads versions 2 to 4");
    memcpy(bad, blob, size);
    memset(bad + size, 0, 4);
    expect_error(bad, size + 4, "4 bytes after the last tensor");
    /* Piece 1 of input.a made to overlap piece 0: first element 12 -> 4.
     * Offsets: 12 header, 4 len, 8 name, 12 dtype/eb/rank, 16 dims, 8 perm,
     * 4 role, 8 value limit, 4 n, piece 0 (28 bytes), then piece 1: tile,
     * addr, first. */
    size_t p1_first = 12 + 4 + 8 + 12 + 16 + 8 + 16 + 28 + 8;
    memcpy(bad, blob, size);
    bad[p1_first] = 4;
    expect_error(bad, size, "tensor 'input.a': piece 1 (elements 4..16) is out of order or outside its 24 elements");
    memcpy(bad, blob, size);
    bad[p1_first + 8] = 13;   /* count 13: runs past 24 */
    expect_error(bad, size, "piece 1 (elements 12..25)");
    memcpy(bad, blob, size);
    bad[p1_first + 8] = 11;   /* count 11: element 23 of the input lives nowhere */
    expect_error(bad, size, "tensor 'input.a': its pieces hold 23 of its 24 elements (an input or output is held whole)");
    memcpy(bad, blob, size);
    bad[12 + 4 + 8 + 12 + 16] = 0;           /* perm [0, 0] */
    expect_error(bad, size, "tensor 'input.a': its axis order is not a permutation");
    free(bad);
    free(blob);
    tmap_free(m);
}

/* A replicated program's map holds replica 0's tensors and the replicas'
 * description; decoded, it is the map with every replica's tensors
 * written out (names, tiles, host streams), byte for byte. */
static void test_replicas(void)
{
    tensor_map *m = sample();
    uint64_t d[1] = { 3 };
    tmap_tensor *y = tmap_add_tensor(m, "y", 1, 4, 1, d, TMAP_OUTPUT);
    tmap_add_piece(y, 2, 0x80100, 0, 3, 0);
    m->replicas = 3;
    m->tile_stride = 100;
    m->input_streams = 2;
    m->output_streams = 1;
    /* the same map written out: replica r's tensors after replica r - 1's */
    tensor_map *full = tmap_new();
    for (uint32_t r = 0; r < 3; r++)
        for (size_t i = 0; i < 3; i++) {
            const tmap_tensor *t = &m->tensors[i];
            char name[64];
            snprintf(name, sizeof name, r ? "replica%u/%s" : "%.0u%s", r, t->name);
            tmap_tensor *c = tmap_add_tensor(full, name, t->dtype, t->element_bytes, t->rank, t->dims, t->role);
            memcpy(c->perm, t->perm, sizeof c->perm);
            c->value_limit = t->value_limit;
            for (size_t k = 0; k < t->n_pieces; k++) {
                const tmap_piece *p = &t->pieces[k];
                uint32_t stream = p->stream == TMAP_NO_STREAM ? TMAP_NO_STREAM
                                                              : p->stream + r * (t->role & TMAP_INPUT ? 2 : 1);
                tmap_add_piece(c, p->tile + 100 * r, p->addr, p->first, p->count, stream);
            }
        }
    uint8_t *blob, *want, *again;
    size_t size, want_size, again_size;
    CU_ASSERT_TRUE_FATAL(tmap_encode(m, &blob, &size));
    CU_ASSERT_TRUE_FATAL(tmap_encode(full, &want, &want_size));
    CU_ASSERT_EQUAL(blob[4], 4);                     /* version 4: the replicas */
    CU_ASSERT_EQUAL(want[4], 3);
    CU_ASSERT_TRUE(size < want_size / 2);
    char err[256];
    tensor_map *back = tmap_decode(blob, size, "p.elf", err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(back);
    CU_ASSERT_EQUAL(back->n_tensors, 9);
    CU_ASSERT_EQUAL(back->replicas, 0);
    const tmap_tensor *a2 = tmap_find(back, "replica2/input.a");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a2);
    CU_ASSERT_EQUAL(a2->pieces[1].tile, 201);
    CU_ASSERT_EQUAL(a2->pieces[1].stream, 5);
    CU_ASSERT_EQUAL(a2->perm[0], 1);
    CU_ASSERT_EQUAL(a2->value_limit, 30522);
    CU_ASSERT_EQUAL(tmap_find(back, "replica1/y")->pieces[0].stream, 1);
    CU_ASSERT_EQUAL(tmap_find(back, "replica2/w")->pieces[0].stream, TMAP_NO_STREAM);
    CU_ASSERT_TRUE_FATAL(tmap_encode(back, &again, &again_size));
    CU_ASSERT_EQUAL_FATAL(again_size, want_size);
    CU_ASSERT_EQUAL(memcmp(again, want, want_size), 0);
    /* a piece past replica 0's tiles, and one replica, are refused */
    m->tile_stride = 3;
    free(blob);
    CU_ASSERT_TRUE_FATAL(tmap_encode(m, &blob, &size));
    expect_error(blob, size, "tensor 'w' has a piece on tile 3, past replica 0's 3 tiles");
    m->tile_stride = 100;
    m->replicas = 2;
    free(blob);
    CU_ASSERT_TRUE_FATAL(tmap_encode(m, &blob, &size));
    blob[size - 16] = 1;
    expect_error(blob, size, "tensor map: 1 replicas of 100 tiles");
    free(blob);
    free(want);
    free(again);
    tmap_free(back);
    tmap_free(full);
    tmap_free(m);
}

void test_register(void)
{
    ADD_SUITE("tensor_map", { "round trip", test_round_trip }, { "a version 2 map still reads", test_version_2 },
              { "malformed blobs", test_malformed }, { "replicas", test_replicas });
}
