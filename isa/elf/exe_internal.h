/*
 * exe_internal.h — what the executable's reader (executable.c) and writer
 * (executable_write.c) share: the names and record sizes of ipusim's own
 * sections and the section lookup.
 */
#ifndef IPUSIM_EXE_INTERNAL_H
#define IPUSIM_EXE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "executable.h"

#define SEC_TILES ".ipusim.tiles"
#define SEC_FILES ".ipusim.files"
#define SEC_FILESTR ".ipusim.filestr"
#define SEC_LINES ".ipusim.lines"
#define SEC_BSP ".ipusim.bsp"
#define SEC_TENSORS ".ipusim.tensors"
#define SEC_MACHINE ".ipusim.machine"
#define SEC_MODEL ".ipusim.model"
#define SEC_OPS ".ipusim.ops"
#define SEC_REPLICAS ".ipusim.replicas"
/* .ipusim.replicas's first word ("REP2"): a record without it is of an
 * older layout (two bits of kind), refused rather than misread. */
#define EXE_REPLICAS_FORMAT 0x32504552u

#define TILES_RECORD_BYTES 8u
#define FILES_RECORD_BYTES 4u
#define LINES_RECORD_BYTES 16u
#define SEC_ALIGN_BYTES    8u      /* bundles are 8-byte aligned */

static inline void exe_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline uint32_t exe_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Room for one more element in an array of n that grows without a capacity
 * field (executable.c); false when the host is out of memory. */
bool exe_reserve_one(void **arr, size_t n, size_t elem_bytes);

/* The section holding (tile, addr), or -1.  With at_end, an address just
 * past a section's last byte counts as in it (an end label). */
long exe_find_section(const ipu_exe *e, uint32_t tile, uint32_t addr, bool at_end);

/* A section of bytes already in e's store (not copied again). */
bool exe_add_section_stored(ipu_exe *e, uint32_t tile, const char *name, uint32_t addr, const uint8_t *bytes,
                            uint32_t size, uint32_t flags);

/* A tile record for a tile that has none yet (exe_set_entry without its
 * search: replicas' tiles, made all at once). */
bool exe_append_entry(ipu_exe *e, uint32_t tile, uint32_t supervisor_entry);

/* The .ipusim.replicas record of e's replicas (exe_replicas.c): NULL and 0
 * when the program is not replicated; false with err when the description
 * is wrong or the host is out of memory.  Decoding fills e->replicas. */
bool exe_replicas_encode(const ipu_exe *e, uint8_t **out, size_t *size, char *err, size_t err_size);
bool exe_replicas_decode(ipu_exe *e, const uint8_t *p, size_t n, char *err, size_t err_size);

#endif
