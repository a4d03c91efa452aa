/*
 * tile_memory.h — one tile's SRAM.
 *
 * Model (ISA2 §2.8, IPU_FACTS.md): addresses [base, base + size) where base
 * is ISA_MEMORY_BASE (0x4C000).  Region 0 runs from base to
 * ISA_REGION1_BASE (0x80000), is the only executable region and is not
 * interleaved; region 1 runs from 0x80000 to the end and is 2-way
 * interleaved on 64-bit words (address bit 3 picks the element of a pair).
 * Memory is built of 16 KiB elements, 64 bits wide; the several accesses of
 * one instruction must hit different elements, else a conflict exception.
 * Accesses are naturally aligned, little-endian; loads are 8..128 bits
 * (128 only from region 1), stores 32 or 64 bits (narrower stores are a
 * read-modify-write in software).
 *
 * Storage is allocated lazily in 16 KiB pages on the first write: a chip of
 * 1472 tiles × 624 KiB costs only what programs touch.  Reads of never
 * written memory return zeros (real SRAM would hold garbage; ipusim is
 * deterministic instead).
 *
 * Not modelled: ECC errors, the exchange-side access clashes of §2.8.11.2.
 */
#ifndef IPUSIM_TILE_MEMORY_H
#define IPUSIM_TILE_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TMEM_PAGE_BYTES 16384u
#define TMEM_MAX_PAGES  64u          /* enough for 1 MiB of tile memory */

enum tmem_status {
    TMEM_OK = 0,
    TMEM_RANGE,       /* outside [base, base + size) */
    TMEM_ALIGN,       /* not naturally aligned */
    TMEM_REGION,      /* access kind not allowed in this region (128-bit load from region 0) */
    TMEM_CONFLICT,    /* two accesses of one instruction on one element */
    TMEM_NOMEM,       /* host out of memory allocating a page */
};

typedef struct tile_memory {
    uint32_t base;                   /* first valid address */
    uint32_t size_bytes;             /* bytes of SRAM */
    uint32_t region1_base;           /* start of the interleaved region */
    uint8_t *page[TMEM_MAX_PAGES];   /* NULL until written */
    uint32_t pages_allocated;
} tile_memory;

/* Set up an empty memory of size_bytes (a multiple of TMEM_PAGE_BYTES, at
 * most TMEM_MAX_PAGES pages) starting at ISA_MEMORY_BASE. */
void tmem_init(tile_memory *m, uint32_t size_bytes);
void tmem_free(tile_memory *m);

/* Loads and stores of 1, 2, 4, 8 or 16 bytes with the access rules above.
 * Values are little-endian byte images in buf. */
enum tmem_status tmem_load(const tile_memory *m, uint32_t addr, unsigned bytes, void *buf);
enum tmem_status tmem_store(tile_memory *m, uint32_t addr, unsigned bytes, const void *buf);

/* Fast paths used by the executor (same rules, fixed sizes). */
enum tmem_status tmem_load32(const tile_memory *m, uint32_t addr, uint32_t *v);
enum tmem_status tmem_load64(const tile_memory *m, uint32_t addr, uint64_t *v);
enum tmem_status tmem_store32(tile_memory *m, uint32_t addr, uint32_t v);
enum tmem_status tmem_store64(tile_memory *m, uint32_t addr, uint64_t v);

/* The memory element an address falls in (0 .. size/16 KiB - 1), taking
 * region 1's interleaving into account. */
unsigned tmem_element(const tile_memory *m, uint32_t addr);

/* TMEM_CONFLICT if any two of the n addresses fall in the same element. */
enum tmem_status tmem_check_conflict(const tile_memory *m, const uint32_t *addr, unsigned n);

/* Unchecked bulk access for the loader, the debugger and the exchange:
 * only range is checked (no alignment/region rules). */
enum tmem_status tmem_write_bytes(tile_memory *m, uint32_t addr, const void *src, size_t n);
enum tmem_status tmem_read_bytes(const tile_memory *m, uint32_t addr, void *dst, size_t n);

bool tmem_is_executable(const tile_memory *m, uint32_t addr);
const char *tmem_status_name(enum tmem_status s);

/* Host bytes actually allocated (for memory accounting). */
size_t tmem_host_bytes(const tile_memory *m);

#endif
