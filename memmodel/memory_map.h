/*
 * memory_map.h — the tile memory map of IPU2 (ISA2 §2.8.4–2.8.5): where a
 * tile's SRAM starts, where its two regions begin and end, and the size of
 * the memory elements it is built of.  The memory model (tile_memory.h),
 * the instruction set (isa/isa.h), the executable format and the compiler
 * all place and check addresses against these.
 */
#ifndef IPUSIM_MEMMODEL_MEMORY_MAP_H
#define IPUSIM_MEMMODEL_MEMORY_MAP_H

#define ISA_MEMORY_BASE        0x4C000u  /* first byte of tile memory */
#define ISA_REGION0_BASE       0x4C000u  /* region 0: executable, not interleaved */
#define ISA_REGION1_BASE       0x80000u  /* region 1: 2-way interleaved on 64-bit words */
#define ISA_MEMORY_END         0xE8000u  /* one past the last byte on GC200/Bow */
#define ISA_ELEMENT_BYTES      16384u    /* a memory element: 16 KiB, 64 bits wide */

#endif
