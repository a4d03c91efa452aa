/*
 * exe_store.h — the distinct contents of an executable's sections, each held
 * once (executable.c and executable_write.c only).
 *
 * A compiled program repeats itself: every tile carries the same kernel
 * library, and the replicas of a data-parallel program carry the same
 * records, constants and weights.  Every section's bytes point into a block
 * of the store, shared by all the sections with the same bytes; the writer
 * stores a block once in the file and points every section that has it at
 * the same place (ELF allows section headers to share file bytes), and the
 * reader shares a block between the sections that point at one place.
 *
 * Blocks are immutable once stored: nothing writes to a section's bytes.
 */
#ifndef IPUSIM_EXE_STORE_H
#define IPUSIM_EXE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct exe_store exe_store;

exe_store *exe_store_new(void);
void exe_store_free(exe_store *s);

/* A block with the size bytes at p (zeros when p is NULL): one stored
 * before with the same bytes, else a new copy.  NULL: out of host memory. */
uint8_t *exe_store_intern(exe_store *s, const void *p, size_t size);

/* A block of size bytes copied from p, the same block for the same key
 * (the reader's key: the bytes' place in the file; the caller makes sure a
 * key always names the same bytes).  NULL: out of host memory. */
uint8_t *exe_store_keyed(exe_store *s, uint64_t key, const void *p, size_t size);

/* Bytes the store holds (each block once). */
uint64_t exe_store_bytes(const exe_store *s);

/* A map from 64-bit keys to values (0 is no value), for the writer's
 * "which section first had these bytes". */
typedef struct exe_u64map {
    uint64_t *key, *value;
    size_t n, n_slots;            /* n_slots: 0 or a power of two above 2 n */
} exe_u64map;

uint64_t exe_u64map_get(const exe_u64map *m, uint64_t key);
bool exe_u64map_put(exe_u64map *m, uint64_t key, uint64_t value);
void exe_u64map_free(exe_u64map *m);

#endif
