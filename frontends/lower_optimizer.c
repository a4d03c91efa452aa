/*
 * lower_optimizer.c — the optimizer's fused steps: AdamUpdater
 * (vtx_adam_updater_f32, workloads/codelets/optimizer.h), Adam's and
 * LAMB's moments and update direction of a weight in one pass over it, as
 * PopLibs' Adam updater codelets make them.
 *
 * The new moments are written over the moments (the state variables
 * updated in place, as PopART updates its accumulators) and the direction
 * over the gradient where the gradient's storage is free to take it; so
 * the pass needs no storage of its own where the layouts agree, and the
 * weight's update holds at most its gradient, its moments and its weight
 * (the element-wise ops it replaces made a temporary of the weight's size
 * for each product and sum).  The pieces are the first moment's; an
 * operand laid out otherwise is fetched onto them, and an output that
 * cannot take its input's storage gets new storage like them, its input
 * copied in first (the codelet works in place).  One compute set a piece,
 * the six workers each on a share.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower_ops.h"
#include "workloads/codelets/optimizer.h"

/* Output `out` of node `index` over input `in` (in place) when that is
 * allowed and lays it out like `like` (out == like: any); else new
 * storage like `like` (like == out: like in).  *copy tells whether in's
 * values must be fetched into it. */
static bool place_output(lowering *lw, int out, int in, int like, int index, const char *what, bool *copy)
{
    *copy = false;
    if ((like == out || lw_same_pieces(&lw->tensor[in], &lw->tensor[like], false)) &&
        lw_place_in_place(lw, out, in, -1, index))
        return true;
    if (lw->failed)
        return false;
    *copy = true;
    return lw_place_like(lw, out, like == out ? in : like, what);
}

bool lw_lower_adam_updater(lowering *lw, const graph_node *n, int index)
{
    const int g = n->inputs[0], m = n->inputs[1], v = n->inputs[2], c1 = n->inputs[3], c2 = n->inputs[4];
    const int w = n->n_inputs > 5 ? n->inputs[5] : -1;
    const int r = n->outputs[0], mo = n->outputs[1], vo = n->outputs[2];
    const char *decay = graph_attr_string(n, "decay");
    kernel_adam_constants k = { graph_attr_float(n, "beta1"), graph_attr_float(n, "beta2"),
                                graph_attr_float(n, "epsilon"), graph_attr_float(n, "weight_decay"), 0 };
    k.flags = !strcmp(decay, "l2") ? ADAM_FLAG_L2 : !strcmp(decay, "decoupled") ? ADAM_FLAG_DECOUPLED : 0;
    if (k.flags && w >= 0 && lw_gt(lw, w)->dtype == GDT_F16)
        k.flags |= ADAM_FLAG_W_F16;
    if (lw->tensor[m].permuted || lw->tensor[g].permuted)
        return lw_fail(lw, "internal: the Adam update of '%s' reads a channels-last operand", lw_gt(lw, m)->name);
    char what[96];
    snprintf(what, sizeof what, "tensor '%s'", lw_gt(lw, r)->name);
    bool copy_m, copy_v, copy_g;
    if (!place_output(lw, mo, m, mo, index, what, &copy_m) || !place_output(lw, vo, v, mo, index, what, &copy_v) ||
        !place_output(lw, r, g, mo, index, what, &copy_g))
        return false;
    const ltensor *lm = &lw->tensor[mo], *lv = &lw->tensor[vo], *lr = &lw->tensor[r];
    size_t pieces = lm->n;
    uint32_t *aw = calloc(pieces + 1, sizeof *aw), *ac = calloc(2 * (size_t)lw->program_tiles + 2, sizeof *ac);
    if (!aw || !ac) {
        free(aw);
        free(ac);
        return lw_fail(lw, "out of host memory");
    }
    /* the inputs onto the pieces, the scalars once a tile */
    for (size_t q = 0; q < pieces && !lw->failed; q++) {
        const piece *p = &lm->p[q];
        if (copy_m)
            lw_fetch_into(lw, m, p->first, p->count, p->tile, p->addr);
        if (copy_v)
            lw_fetch_into(lw, v, p->first, p->count, p->tile, lv->p[q].addr);
        if (copy_g)
            lw_fetch_into(lw, g, p->first, p->count, p->tile, lr->p[q].addr);
        if (k.flags && w >= 0)
            aw[q] = lw_fetch(lw, w, p->first, p->count, p->tile, PREFER_REGION0);
        for (int s = 0; s < 2; s++)
            if (!ac[2 * p->tile + s])
                ac[2 * p->tile + s] = lw_fetch(lw, s ? c2 : c1, 0, 1, p->tile, PREFER_REGION0);
    }
    if (!lw->failed)
        lw_end_phase(lw);
    uint32_t web = k.flags & ADAM_FLAG_W_F16 ? 2 : 4;
    for (size_t q = 0; q < pieces && !lw->failed; q++) {
        const piece *p = &lm->p[q];
        worker_set ws;
        if (!lw_workers_begin(lw, p->tile, KERNEL_ADAM_UPDATER_WORDS, p->count, &ws))
            break;
        for (int x = 0; x < CODELET_WORKERS; x++) {
            uint32_t e0 = (uint32_t)ws.lo[x], e = (uint32_t)(ws.hi[x] - ws.lo[x]);
            uint32_t at_r = lr->p[q].addr + e0 * 4;
            kernel_adam_updater_record(ws.rec[x], at_r, p->addr + e0 * 4, lv->p[q].addr + e0 * 4,
                                       aw[q] ? aw[q] + e0 * web : 0, at_r, e, ac[2 * p->tile], ac[2 * p->tile + 1],
                                       &k);
        }
        lw_workers_run(lw, p->tile, lw->kernels.vtx_adam_updater_f32, &ws);
    }
    free(aw);
    free(ac);
    return !lw->failed;
}
