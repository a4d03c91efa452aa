/*
 * test_tile_memory.c — tile SRAM: bounds, alignment, region rules, lazy
 * allocation, byte order, element mapping and conflicts.
 */
#include <CUnit/CUnit.h>
#include <stdint.h>
#include <string.h>

#include "isa/isa.h"
#include "memmodel/tile_memory.h"
#include "sim/engine/engine_internal.h"
#include "test_util.h"

#define GC200_BYTES 638976u
#define GC2_BYTES   262144u

static void test_init_layout(void)
{
    tile_memory m;
    tmem_init(&m, ISA_MEMORY_BASE, GC200_BYTES);
    CU_ASSERT_EQUAL(m.base, 0x4C000u);
    CU_ASSERT_EQUAL(m.size_bytes, GC200_BYTES);
    CU_ASSERT_EQUAL(m.region1_base, 0x80000u);
    CU_ASSERT_EQUAL(m.base + m.size_bytes, ISA_MEMORY_END);
    CU_ASSERT_EQUAL(tmem_host_bytes(&m), 0);
    tmem_free(&m);

    /* Smaller than region 0: no interleaved region at all. */
    tmem_init(&m, ISA_MEMORY_BASE, 4 * TMEM_PAGE_BYTES);
    CU_ASSERT_EQUAL(m.region1_base, 0x4C000u + 0x10000u);
    uint8_t b[16] = {0};
    CU_ASSERT_EQUAL(tmem_load(&m, 0x4C000u + 0x10u, 16, b), TMEM_REGION);
    tmem_free(&m);
}

static void test_bounds(void)
{
    tile_memory m;
    tmem_init(&m, ISA_MEMORY_BASE, GC200_BYTES);
    uint32_t v32 = 0x5A5A5A5Au;
    uint64_t v64 = 0;
    /* First and last valid words. */
    CU_ASSERT_EQUAL(tmem_store32(&m, 0x4C000u, 0x11223344u), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_store32(&m, 0xE7FFCu, 0x55667788u), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_store64(&m, 0xE7FF8u, 0x0102030405060708ull), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_load32(&m, 0x4C000u, &v32), TMEM_OK);
    CU_ASSERT_EQUAL(v32, 0x11223344u);
    CU_ASSERT_EQUAL(tmem_load64(&m, 0xE7FF8u, &v64), TMEM_OK);
    CU_ASSERT_EQUAL(v64, 0x0102030405060708ull);
    /* One past either end. */
    v32 = 0xDEADBEEFu;
    CU_ASSERT_EQUAL(tmem_load32(&m, 0x4BFFCu, &v32), TMEM_RANGE);
    CU_ASSERT_EQUAL(v32, 0xDEADBEEFu);            /* untouched on failure */
    CU_ASSERT_EQUAL(tmem_load32(&m, 0xE8000u, &v32), TMEM_RANGE);
    CU_ASSERT_EQUAL(tmem_load64(&m, 0xE8000u, &v64), TMEM_RANGE);
    CU_ASSERT_EQUAL(tmem_store32(&m, 0xE8000u, 1), TMEM_RANGE);
    CU_ASSERT_EQUAL(tmem_store64(&m, 0x4BFF8u, 1), TMEM_RANGE);
    CU_ASSERT_EQUAL(tmem_store32(&m, 0, 1), TMEM_RANGE);
    CU_ASSERT_EQUAL(tmem_store32(&m, 0xFFFFFFFCu, 1), TMEM_RANGE);
    uint8_t b[16];
    CU_ASSERT_EQUAL(tmem_load(&m, 0xE7FFFu, 1, b), TMEM_OK);
    CU_ASSERT_EQUAL(b[0], 0x01);
    CU_ASSERT_EQUAL(tmem_load(&m, 0xE8000u, 1, b), TMEM_RANGE);
    CU_ASSERT_EQUAL(tmem_load(&m, 0x4BFFFu, 1, b), TMEM_RANGE);
    CU_ASSERT_EQUAL(tmem_load(&m, 0xE7FF0u, 16, b), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_load(&m, 0xE8000u, 16, b), TMEM_RANGE);
    /* Bulk access: whole range must fit, nothing copied otherwise. */
    uint8_t big[32];
    memset(big, 0xAB, sizeof big);
    CU_ASSERT_EQUAL(tmem_write_bytes(&m, 0xE7FF0u, big, 16), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_write_bytes(&m, 0xE7FF0u, big, 17), TMEM_RANGE);
    CU_ASSERT_EQUAL(tmem_read_bytes(&m, 0xE7FF1u, big, 16), TMEM_RANGE);
    CU_ASSERT_EQUAL(tmem_read_bytes(&m, 0x4BFFFu, big, 2), TMEM_RANGE);
    CU_ASSERT_EQUAL(tmem_read_bytes(&m, 0x4C000u, big, (size_t)-1), TMEM_RANGE);
    CU_ASSERT_EQUAL(tmem_read_bytes(&m, 0xFFFFFFF0u, big, 32), TMEM_RANGE);
    CU_ASSERT_EQUAL(tmem_read_bytes(&m, 0, big, 0), TMEM_OK);
    tmem_free(&m);
}

static void test_alignment(void)
{
    tile_memory m;
    tmem_init(&m, ISA_MEMORY_BASE, GC200_BYTES);
    uint32_t v32;
    uint64_t v64;
    uint8_t b[16];
    CU_ASSERT_EQUAL(tmem_load32(&m, 0x4C002u, &v32), TMEM_ALIGN);
    CU_ASSERT_EQUAL(tmem_load64(&m, 0x4C004u, &v64), TMEM_ALIGN);
    CU_ASSERT_EQUAL(tmem_store32(&m, 0x4C001u, 0), TMEM_ALIGN);
    CU_ASSERT_EQUAL(tmem_store64(&m, 0x80004u, 0), TMEM_ALIGN);
    CU_ASSERT_EQUAL(tmem_load(&m, 0x4C001u, 2, b), TMEM_ALIGN);
    CU_ASSERT_EQUAL(tmem_load(&m, 0x80008u, 16, b), TMEM_ALIGN);
    CU_ASSERT_EQUAL(tmem_load(&m, 0x4C001u, 1, b), TMEM_OK);
    /* Alignment is checked before range (ISA2 Listing 2.6). */
    CU_ASSERT_EQUAL(tmem_load32(&m, 0xE8002u, &v32), TMEM_ALIGN);
    CU_ASSERT_EQUAL(tmem_store64(&m, 0x4, 0), TMEM_ALIGN);
    /* Failed stores write nothing. */
    CU_ASSERT_EQUAL(tmem_host_bytes(&m), 0);
    tmem_free(&m);
}

static void test_widths_and_regions(void)
{
    tile_memory m;
    tmem_init(&m, ISA_MEMORY_BASE, GC200_BYTES);
    uint8_t b[16];
    for (unsigned i = 0; i < 16; i++)
        b[i] = (uint8_t)(0xC0 + i);
    CU_ASSERT_EQUAL(tmem_write_bytes(&m, 0x80010u, b, 16), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_write_bytes(&m, 0x7FFF0u, b, 16), TMEM_OK);
    uint8_t r[16] = {0};
    /* 128-bit loads: region 1 only. */
    CU_ASSERT_EQUAL(tmem_load(&m, 0x80010u, 16, r), TMEM_OK);
    CU_ASSERT_EQUAL(memcmp(r, b, 16), 0);
    memset(r, 0, sizeof r);
    CU_ASSERT_EQUAL(tmem_load(&m, 0x7FFF0u, 16, r), TMEM_REGION);
    CU_ASSERT_EQUAL(r[0], 0);
    CU_ASSERT_EQUAL(tmem_load(&m, 0x4C000u, 16, r), TMEM_REGION);
    /* Load widths. */
    CU_ASSERT_EQUAL(tmem_load(&m, 0x80010u, 3, r), TMEM_WIDTH);
    CU_ASSERT_EQUAL(tmem_load(&m, 0x80010u, 32, r), TMEM_WIDTH);
    CU_ASSERT_EQUAL(tmem_load(&m, 0x80010u, 0, r), TMEM_WIDTH);
    CU_ASSERT_EQUAL(tmem_load(&m, 0x80012u, 2, r), TMEM_OK);
    CU_ASSERT_EQUAL(r[0], 0xC2);
    CU_ASSERT_EQUAL(r[1], 0xC3);
    /* Stores: 4 and 8 bytes only. */
    CU_ASSERT_EQUAL(tmem_store(&m, 0x80000u, 1, b), TMEM_WIDTH);
    CU_ASSERT_EQUAL(tmem_store(&m, 0x80000u, 2, b), TMEM_WIDTH);
    CU_ASSERT_EQUAL(tmem_store(&m, 0x80000u, 16, b), TMEM_WIDTH);
    CU_ASSERT_EQUAL(tmem_store(&m, 0x80000u, 4, b), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_store(&m, 0x80008u, 8, b + 8), TMEM_OK);
    uint64_t v64;
    CU_ASSERT_EQUAL(tmem_load64(&m, 0x80008u, &v64), TMEM_OK);
    CU_ASSERT_EQUAL(v64, 0xCFCECDCCCBCAC9C8ull);
    /* Executability. */
    CU_ASSERT_TRUE(tmem_is_executable(&m, 0x4C000u));
    CU_ASSERT_TRUE(tmem_is_executable(&m, 0x7FFFCu));
    CU_ASSERT_FALSE(tmem_is_executable(&m, 0x80000u));
    CU_ASSERT_FALSE(tmem_is_executable(&m, 0x4BFFCu));
    CU_ASSERT_FALSE(tmem_is_executable(&m, 0xE7FFCu));
    CU_ASSERT_STRING_EQUAL(tmem_status_name(TMEM_REGION), "access not allowed in this memory region");
    CU_ASSERT_STRING_EQUAL(tmem_status_name(TMEM_WIDTH), "unsupported access width");
    CU_ASSERT_STRING_EQUAL(tmem_status_name(TMEM_CONFLICT), "memory element conflict");
    tmem_free(&m);
}

static void test_lazy_allocation(void)
{
    tile_memory m;
    tmem_init(&m, ISA_MEMORY_BASE, GC200_BYTES);
    uint32_t v32 = 1;
    uint64_t v64 = 1;
    uint8_t b[16];
    memset(b, 0xFF, sizeof b);
    /* Reads of unwritten memory are zero and allocate nothing. */
    CU_ASSERT_EQUAL(tmem_load32(&m, 0x90000u, &v32), TMEM_OK);
    CU_ASSERT_EQUAL(v32, 0);
    CU_ASSERT_EQUAL(tmem_load64(&m, 0x90008u, &v64), TMEM_OK);
    CU_ASSERT_EQUAL(v64, 0);
    CU_ASSERT_EQUAL(tmem_load(&m, 0x90010u, 16, b), TMEM_OK);
    CU_ASSERT_EQUAL(b[15], 0);
    uint8_t big[40000];
    memset(big, 0x77, sizeof big);
    CU_ASSERT_EQUAL(tmem_read_bytes(&m, 0x4C000u, big, sizeof big), TMEM_OK);
    CU_ASSERT_EQUAL(big[0], 0);
    CU_ASSERT_EQUAL(big[sizeof big - 1], 0);
    CU_ASSERT_EQUAL(tmem_host_bytes(&m), 0);
    CU_ASSERT_EQUAL(m.pages_allocated, 0);
    /* Writing zeros to fresh pages allocates nothing either. */
    memset(big, 0, sizeof big);
    CU_ASSERT_EQUAL(tmem_write_bytes(&m, 0x4C000u, big, sizeof big), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_host_bytes(&m), 0);
    /* First write allocates one 16 KiB page; a second write to it none. */
    CU_ASSERT_EQUAL(tmem_store32(&m, 0x90004u, 0xCAFEF00Du), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_host_bytes(&m), TMEM_PAGE_BYTES);
    CU_ASSERT_EQUAL(tmem_store64(&m, 0x93FF8u, 7), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_host_bytes(&m), TMEM_PAGE_BYTES);
    CU_ASSERT_EQUAL(tmem_store64(&m, 0x94000u, 7), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_host_bytes(&m), 2 * TMEM_PAGE_BYTES);
    /* A bulk write spanning three pages, partly into an allocated one. */
    memset(big, 0x5C, sizeof big);
    CU_ASSERT_EQUAL(tmem_write_bytes(&m, 0x93000u, big, sizeof big), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_host_bytes(&m), 4 * TMEM_PAGE_BYTES);
    CU_ASSERT_EQUAL(tmem_load32(&m, 0x90004u, &v32), TMEM_OK);
    CU_ASSERT_EQUAL(v32, 0xCAFEF00Du);
    CU_ASSERT_EQUAL(tmem_load32(&m, 0x93000u + sizeof big - 4, &v32), TMEM_OK);
    CU_ASSERT_EQUAL(v32, 0x5C5C5C5Cu);
    CU_ASSERT_EQUAL(tmem_load32(&m, 0x93000u + sizeof big, &v32), TMEM_OK);
    CU_ASSERT_EQUAL(v32, 0);
    uint8_t back[40000];
    CU_ASSERT_EQUAL(tmem_read_bytes(&m, 0x93000u, back, sizeof back), TMEM_OK);
    CU_ASSERT_EQUAL(memcmp(back, big, sizeof big), 0);
    tmem_free(&m);
    CU_ASSERT_EQUAL(tmem_host_bytes(&m), 0);
    CU_ASSERT_PTR_NULL(m.page[4]);
}

static void test_little_endian(void)
{
    tile_memory m;
    tmem_init(&m, ISA_MEMORY_BASE, GC200_BYTES);
    CU_ASSERT_EQUAL(tmem_store32(&m, 0x4C100u, 0x11223344u), TMEM_OK);
    uint8_t b[8];
    CU_ASSERT_EQUAL(tmem_read_bytes(&m, 0x4C100u, b, 4), TMEM_OK);
    CU_ASSERT_EQUAL(b[0], 0x44);
    CU_ASSERT_EQUAL(b[1], 0x33);
    CU_ASSERT_EQUAL(b[2], 0x22);
    CU_ASSERT_EQUAL(b[3], 0x11);
    CU_ASSERT_EQUAL(tmem_store64(&m, 0x4C108u, 0x8877665544332211ull), TMEM_OK);
    uint16_t h;
    CU_ASSERT_EQUAL(tmem_load(&m, 0x4C10Eu, 2, &h), TMEM_OK);
    CU_ASSERT_EQUAL(h, 0x8877);
    uint32_t w;
    CU_ASSERT_EQUAL(tmem_load32(&m, 0x4C10Cu, &w), TMEM_OK);
    CU_ASSERT_EQUAL(w, 0x88776655u);
    uint64_t d;
    CU_ASSERT_EQUAL(tmem_load64(&m, 0x4C100u, &d), TMEM_OK);
    CU_ASSERT_EQUAL(d, 0x0000000011223344ull);
    const uint8_t img[8] = {0xEF, 0xBE, 0xAD, 0xDE, 0x0D, 0xF0, 0xFE, 0xCA};
    CU_ASSERT_EQUAL(tmem_write_bytes(&m, 0x80000u, img, 8), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_load64(&m, 0x80000u, &d), TMEM_OK);
    CU_ASSERT_EQUAL(d, 0xCAFEF00DDEADBEEFull);
    uint8_t one;
    CU_ASSERT_EQUAL(tmem_load(&m, 0x80005u, 1, &one), TMEM_OK);
    CU_ASSERT_EQUAL(one, 0xF0);
    tmem_free(&m);
}

/* Every one of the memory's n elements is hit by exactly 2048 of its
 * 64-bit words (16 KiB each), and no word falls outside them. */
static void check_whole_elements(const tile_memory *m, unsigned n)
{
    unsigned count[64] = {0};
    CU_ASSERT_FATAL(n <= 64);
    for (uint32_t a = m->base; a < m->base + m->size_bytes; a += 8) {
        unsigned e = tmem_element(m, a);
        CU_ASSERT_FATAL(e < n);
        count[e]++;
    }
    for (unsigned e = 0; e < n; e++)
        CU_ASSERT_EQUAL(count[e], ISA_ELEMENT_BYTES / 8);
}

static void test_element_mapping(void)
{
    tile_memory m;
    tmem_init(&m, ISA_MEMORY_BASE, GC200_BYTES);
    /* Region 0: linear, 16 KiB each, 13 elements. */
    CU_ASSERT_EQUAL(tmem_element(&m, 0x4C000u), 0);
    CU_ASSERT_EQUAL(tmem_element(&m, 0x4FFF8u), 0);
    CU_ASSERT_EQUAL(tmem_element(&m, 0x4FFFFu), 0);
    CU_ASSERT_EQUAL(tmem_element(&m, 0x50000u), 1);
    CU_ASSERT_EQUAL(tmem_element(&m, 0x4C008u), 0);     /* no interleave */
    CU_ASSERT_EQUAL(tmem_element(&m, 0x7FFFCu), 12);
    /* Region 1: pairs interleaved on address bit 3. */
    CU_ASSERT_EQUAL(tmem_element(&m, 0x80000u), 13);
    CU_ASSERT_EQUAL(tmem_element(&m, 0x80004u), 13);
    CU_ASSERT_EQUAL(tmem_element(&m, 0x80008u), 14);
    CU_ASSERT_EQUAL(tmem_element(&m, 0x8000Fu), 14);
    CU_ASSERT_EQUAL(tmem_element(&m, 0x80010u), 13);
    CU_ASSERT_EQUAL(tmem_element(&m, 0x87FF8u), 14);
    CU_ASSERT_EQUAL(tmem_element(&m, 0x87FF0u), 13);
    CU_ASSERT_EQUAL(tmem_element(&m, 0x88000u), 15);
    CU_ASSERT_EQUAL(tmem_element(&m, 0x88008u), 16);
    CU_ASSERT_EQUAL(tmem_element(&m, 0xE7FF0u), 37);
    CU_ASSERT_EQUAL(tmem_element(&m, 0xE7FF8u), 38);    /* 39 elements */
    CU_ASSERT_EQUAL(tmem_element(&m, 0xE8000u), TMEM_NO_ELEMENT);
    CU_ASSERT_EQUAL(tmem_element(&m, 0x4BFFFu), TMEM_NO_ELEMENT);
    check_whole_elements(&m, 39);
    tmem_free(&m);
}

static void test_conflicts(void)
{
    tile_memory m;
    tmem_init(&m, ISA_MEMORY_BASE, GC200_BYTES);
    /* Region 1: a and a + 8 never clash; a and a + 16 always do. */
    uint32_t pair_ok[2] = {0x80000u, 0x80008u};
    uint32_t pair_bad[2] = {0x80000u, 0x80010u};
    CU_ASSERT_EQUAL(tmem_check_conflict(&m, pair_ok, 2), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_check_conflict(&m, pair_bad, 2), TMEM_CONFLICT);
    /* Region 0: consecutive words clash unless they straddle an element. */
    uint32_t r0_bad[2] = {0x4C000u, 0x4C008u};
    uint32_t r0_ok[2] = {0x4FFF8u, 0x50000u};
    CU_ASSERT_EQUAL(tmem_check_conflict(&m, r0_bad, 2), TMEM_CONFLICT);
    CU_ASSERT_EQUAL(tmem_check_conflict(&m, r0_ok, 2), TMEM_OK);
    /* ld2xst64pace-like triple: two loads and a store. */
    uint32_t three_ok[3] = {0x80000u, 0x80008u, 0x4C000u};
    uint32_t three_spread[3] = {0x80000u, 0x90008u, 0x88000u + 0x20u};
    CU_ASSERT_EQUAL(tmem_check_conflict(&m, three_ok, 3), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_check_conflict(&m, three_spread, 3), TMEM_OK);
    uint32_t three_clash[3] = {0x80000u, 0x90008u, 0x90018u};
    CU_ASSERT_EQUAL(tmem_check_conflict(&m, three_clash, 3), TMEM_CONFLICT);
    /* Out-of-range addresses are not conflicts (the access reports them). */
    uint32_t outside[2] = {0xE8000u, 0xE8010u};
    CU_ASSERT_EQUAL(tmem_check_conflict(&m, outside, 2), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_check_conflict(&m, outside, 0), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_check_conflict(&m, pair_bad, 1), TMEM_OK);
    tmem_free(&m);
}

/* 256 KiB from GC200's base (`--set tile_memory_bytes=262144`): region 1
 * is 48 KiB, one pair and an unpaired last element. */
static void test_small_from_gc200_base(void)
{
    tile_memory m;
    tmem_init(&m, ISA_MEMORY_BASE, GC2_BYTES);
    CU_ASSERT_EQUAL(m.region1_base, 0x80000u);
    uint32_t v = 0;
    CU_ASSERT_EQUAL(tmem_store32(&m, 0x8BFFCu, 0xA5A5A5A5u), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_load32(&m, 0x8BFFCu, &v), TMEM_OK);
    CU_ASSERT_EQUAL(v, 0xA5A5A5A5u);
    CU_ASSERT_EQUAL(tmem_store32(&m, 0x8C000u, 1), TMEM_RANGE);
    CU_ASSERT_EQUAL(tmem_load32(&m, 0xE7FFCu, &v), TMEM_RANGE);
    /* 16 elements: 13 in region 0, one pair, one unpaired last element. */
    CU_ASSERT_EQUAL(tmem_element(&m, 0x80000u), 13);
    CU_ASSERT_EQUAL(tmem_element(&m, 0x80008u), 14);
    CU_ASSERT_EQUAL(tmem_element(&m, 0x88000u), 15);
    CU_ASSERT_EQUAL(tmem_element(&m, 0x88008u), 15);
    CU_ASSERT_EQUAL(tmem_element(&m, 0x8BFF8u), 15);
    CU_ASSERT_EQUAL(tmem_element(&m, 0x8C000u), TMEM_NO_ELEMENT);
    check_whole_elements(&m, 16);
    uint32_t clash[2] = {0x88000u, 0x88008u};
    CU_ASSERT_EQUAL(tmem_check_conflict(&m, clash, 2), TMEM_CONFLICT);
    tmem_free(&m);
}

/* GC2's map: 128 KiB of region 0 from 0x60000, 128 KiB of region 1 (four
 * interleaved pairs) from 0x80000. */
static void test_gc2_layout(void)
{
    tile_memory m;
    tmem_init(&m, isa_memory_base(131072u), GC2_BYTES);
    CU_ASSERT_EQUAL(m.base, 0x60000u);
    CU_ASSERT_EQUAL(m.region1_base, 0x80000u);
    uint32_t v = 0;
    CU_ASSERT_EQUAL(tmem_store32(&m, 0x5FFFCu, 1), TMEM_RANGE);
    CU_ASSERT_EQUAL(tmem_store32(&m, 0x60000u, 7), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_store32(&m, 0x9FFFCu, 9), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_load32(&m, 0x9FFFCu, &v), TMEM_OK);
    CU_ASSERT_EQUAL(v, 9u);
    CU_ASSERT_EQUAL(tmem_store32(&m, 0xA0000u, 1), TMEM_RANGE);
    CU_ASSERT_EQUAL(tmem_element(&m, 0x60000u), 0);
    CU_ASSERT_EQUAL(tmem_element(&m, 0x7C000u), 7);
    CU_ASSERT_EQUAL(tmem_element(&m, 0x80000u), 8);
    CU_ASSERT_EQUAL(tmem_element(&m, 0x80008u), 9);
    CU_ASSERT_EQUAL(tmem_element(&m, 0x98000u), 14);
    CU_ASSERT_EQUAL(tmem_element(&m, 0x9FFF8u), 15);
    CU_ASSERT_EQUAL(tmem_element(&m, 0xA0000u), TMEM_NO_ELEMENT);
    check_whole_elements(&m, 16);
    /* 128-bit loads only from region 1. */
    uint8_t q[16];
    CU_ASSERT_EQUAL(tmem_load(&m, 0x80010u, 16, q), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_load(&m, 0x7FFF0u, 16, q), TMEM_REGION);
    tmem_free(&m);
}

/* Identical loaded pages of several memories are held once
 * (page_table_share): the same bytes read everywhere, and a store to one
 * memory's copy leaves the others' as they were, whichever stores first. */
static void test_shared_pages(void)
{
    enum { N = 3 };
    tile_memory m[N];
    page_table t = { 0 };
    for (unsigned i = 0; i < N; i++) {
        tmem_init(&m[i], ISA_MEMORY_BASE, 638976u);
        CU_ASSERT_EQUAL(tmem_store32(&m[i], 0x80000u, 0xabcd), TMEM_OK);       /* the same on all */
        CU_ASSERT_EQUAL(tmem_store32(&m[i], 0x90000u, 100 + i), TMEM_OK);      /* each its own */
        page_table_share(&t, &m[i]);
    }
    uint32_t pa = (0x80000u - ISA_MEMORY_BASE) / TMEM_PAGE_BYTES, pb = (0x90000u - ISA_MEMORY_BASE) / TMEM_PAGE_BYTES;
    CU_ASSERT_PTR_EQUAL(tmem_page(&m[1], pa), tmem_page(&m[0], pa));
    CU_ASSERT_PTR_EQUAL(tmem_page(&m[2], pa), tmem_page(&m[0], pa));
    CU_ASSERT_PTR_NOT_EQUAL(tmem_page(&m[1], pb), tmem_page(&m[0], pb));
    /* the first holder stores: the others keep the old value */
    CU_ASSERT_EQUAL(tmem_store32(&m[0], 0x80004u, 7), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_store32(&m[2], 0x80000u, 9), TMEM_OK);
    uint32_t v[N][2];
    for (unsigned i = 0; i < N; i++) {
        CU_ASSERT_EQUAL(tmem_load(&m[i], 0x80000u, 4, &v[i][0]), TMEM_OK);
        CU_ASSERT_EQUAL(tmem_load(&m[i], 0x80004u, 4, &v[i][1]), TMEM_OK);
    }
    CU_ASSERT_EQUAL(v[0][0], 0xabcd);
    CU_ASSERT_EQUAL(v[0][1], 7);
    CU_ASSERT_EQUAL(v[1][0], 0xabcd);
    CU_ASSERT_EQUAL(v[1][1], 0);
    CU_ASSERT_EQUAL(v[2][0], 9);
    CU_ASSERT_EQUAL(v[2][1], 0);
    /* the one left holding the page writes it in place */
    const uint8_t *p1 = tmem_page(&m[1], pa);
    CU_ASSERT_EQUAL(tmem_store32(&m[1], 0x80008u, 5), TMEM_OK);
    CU_ASSERT_PTR_EQUAL(tmem_page(&m[1], pa), p1);
    page_table_free(&t);
    for (unsigned i = 0; i < N; i++)
        tmem_free(&m[i]);
}

void test_register(void)
{
    ADD_SUITE("tile_memory",
              {"init layout", test_init_layout},
              {"bounds at both ends", test_bounds},
              {"alignment", test_alignment},
              {"widths and regions", test_widths_and_regions},
              {"lazy allocation", test_lazy_allocation},
              {"little endian", test_little_endian},
              {"element mapping", test_element_mapping},
              {"conflicts", test_conflicts},
              {"256 KiB from GC200's base", test_small_from_gc200_base},
              {"gc2 layout", test_gc2_layout},
              {"identical pages held once", test_shared_pages});
}
