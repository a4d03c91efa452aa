/* placeholder */
#include "lower_internal.h"
bool lw_lower_maxpool_grad(lowering *lw, const graph_node *n, int index)
{
    return lw_unsupported(lw, n, index, "not yet");
}
