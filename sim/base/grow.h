/*
 * grow.h — room for `need` elements of `elem` bytes in a growing array
 * (*p, capacity *cap): the capacity doubles from 16 until it holds them;
 * false when the host is out of memory, *p and *cap unchanged.
 */
#ifndef IPUSIM_SIM_BASE_GROW_H
#define IPUSIM_SIM_BASE_GROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

static inline bool base_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q)
        return false;
    *p = q;
    *cap = c;
    return true;
}

#endif
