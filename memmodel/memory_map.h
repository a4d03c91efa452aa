/*
 * memory_map.h — the tile memory map (ISA2 §2.8.4–2.8.5): where a
 * tile's SRAM starts, where its two regions begin and end, and the size of
 * the memory elements it is built of.  The memory model (tile_memory.h),
 * the instruction set (isa/isa.h), the executable format and the compiler
 * all place and check addresses against these.
 */
#ifndef IPUSIM_MEMMODEL_MEMORY_MAP_H
#define IPUSIM_MEMMODEL_MEMORY_MAP_H

#define ISA_MEMORY_BASE        0x4C000u  /* first byte of tile memory on GC200/Bow, the lowest of any machine */
#define ISA_REGION0_BASE       0x4C000u  /* region 0: executable, not interleaved (GC200/Bow) */
#define ISA_REGION1_BASE       0x80000u  /* region 1: 2-way interleaved on 64-bit words */
#define ISA_MEMORY_END         0xE8000u  /* one past the last byte on GC200/Bow */
#define ISA_ELEMENT_BYTES      16384u    /* a memory element: 16 KiB, 64 bits wide */

/* Region 1 begins at ISA_REGION1_BASE on every machine and region 0 ends
 * there; a tile's memory begins where its region 0 does, region0_bytes
 * below (the machine parameter tile_region0_bytes).  GC200/Bow: 208 KiB,
 * from 0x4C000 as ISA2 §2.8.4 has it.  GC2: 128 KiB of its 256 KiB (the
 * IPU1 architecture's TMEM_REGION0_SIZE and TMEM_REGION1_SIZE), from
 * 0x60000 — the same sizes and interleaving as the chip's map, which
 * starts at 0x40000, moved up so that region 1 keeps its address. */
static inline unsigned isa_memory_base(unsigned region0_bytes)
{
    return ISA_REGION1_BASE - region0_bytes;
}

#endif
