/*
 * lower_gather.c — Gather whose indices are computed at run time (the
 * embedding lookup of BERT's token ids).
 */
#include "frontends/lower_internal.h"

bool lw_lower_gather(lowering *lw, const graph_node *n, int index)
{
    return lw_unsupported(lw, n, index,
                          "indices that are not constants (an embedding lookup at run time) are not yet supported");
}
