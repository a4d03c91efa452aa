/*
 * lower_logic.c — comparisons, Where, the logical ops and integer
 * element-wise arithmetic.
 */
#include "frontends/lower_internal.h"

bool lw_logic_handles(const graph *g, const graph_node *n)
{
    (void)g;
    (void)n;
    return false;
}

bool lw_logic_supported(const graph *g, const graph_node *n, const char **why)
{
    (void)g;
    (void)n;
    *why = "no lowering for this op yet";
    return false;
}

bool lw_lower_logic(lowering *lw, const graph_node *n, int index)
{
    return lw_unsupported(lw, n, index, "no lowering for this op yet");
}
