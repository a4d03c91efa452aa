/*
 * lower_collectives.c — collectives across the replicas of a data-parallel
 * program: ReplicatedAllReduce (the sum of each input over the replicas, in
 * every replica), lowered as a ring of the replicas, tile by tile.
 *
 * Each tile gathers its pieces of every input (all the tensors of the node:
 * the collectives fused, as Graphcore's and PaddlePaddle's MLPerf
 * submissions did) into one block of R equal slices, zero-padded (local
 * copies).  Tile i of every replica works with tile i of its neighbours,
 * over the IPU-Links between their chips:
 *   - reduce-scatter, R - 1 exchange phases: the partial sum travels round
 *     the ring, replica r's tile adding in slice (r - s) mod R of its own
 *     block at step s; after the last, slice (r + 1) mod R holds the sum
 *     over every replica (Patarasuk and Yuan's bandwidth-optimal ring, the
 *     one GCL's ring collectives use within a ring of IPUs);
 *   - all-gather, R - 1 phases: each replica passes on the summed slice it
 *     received last, into the same slice of the next;
 *   - the block copied back over the pieces of the outputs.
 * Every replica runs the same program: the slice a step reads, adds or
 * sends depends on the replica, so those words (control-program addresses
 * and vertex-record addresses) are SLICE relocations and the neighbours
 * RING ones (isa/elf/executable.h), made right for each replica when the
 * executable is read.  Each phase ends in a sync of the whole system (the
 * replicas' chips exchange).  Each tile sends 2 (R - 1) / R of its block.
 *
 * Models the ring algorithm of gcl::allReduce for one ring; does not model
 * GCL's bidirectional rings, its splitting of large tensors into several
 * rings over different links, nor the hierarchical form across gateways.
 */
#include <stdlib.h>
#include <string.h>

#include "lower_ops.h"
#include "frontends/kernels.h"
#include "workloads/codelets/elementwise.h"

/* A tile's part in the ring: its block of R slices of slice_bytes, the
 * partial sum travelling (acc) and the slice received (stage). */
typedef struct ring_tile {
    uint32_t block, acc, stage, slice_bytes;
} ring_tile;

/* The elements of a slice: the tile's f32 elements over R, even (a slice
 * stays 8-byte aligned and the codelet takes pairs). */
static uint32_t slice_bytes_of(uint64_t bytes, uint32_t replicas)
{
    uint64_t elements = (bytes / 4 + replicas - 1) / replicas;
    return (uint32_t)((elements + 1) & ~(uint64_t)1) * 4;
}

/* On every tile with a block: out = x + stage over a slice, x (and out,
 * unless out_acc) the block's slice (r + shift) mod R, a compute set of
 * vtx_scaled_add_f32 with scale 1 (its records' slice words relocated). */
static bool add_slices(lowering *lw, const ring_tile *rt, uint32_t shift, bool out_acc)
{
    lw->pin_records = true;
    for (uint32_t i = 0; i < lw->program_tiles && !lw->failed; i++) {
        const ring_tile *t = &rt[i];
        if (!t->slice_bytes)
            continue;
        uint32_t x = t->block + shift * t->slice_bytes, out = out_acc ? t->acc : x, n = t->slice_bytes / 4;
        worker_set ws;
        if (!lw_workers_begin(lw, i, KERNEL_SCALED_ADD_WORDS, n / 2, &ws))
            break;
        uint32_t padded = (KERNEL_SCALED_ADD_WORDS + 1u) & ~1u;
        for (int w = 0; w < CODELET_WORKERS; w++) {
            uint64_t e0 = ws.lo[w] * 2, e1 = ws.hi[w] * 2;
            kernel_scaled_add_record(ws.rec[w], x + (uint32_t)e0 * 4, t->stage + (uint32_t)e0 * 4,
                                     out + (uint32_t)e0 * 4, (uint32_t)(e1 - e0), 1.0f);
            int64_t rec = (int64_t)ws.off + (int64_t)w * padded * 4;
            lw_note_rotated(lw, i, rec + SCALED_ADD_V_X * 4, EXE_RELOC_SLICE, shift, t->slice_bytes);
            if (!out_acc)
                lw_note_rotated(lw, i, rec + SCALED_ADD_V_OUT * 4, EXE_RELOC_SLICE, shift, t->slice_bytes);
        }
        lw_workers_run(lw, i, lw->kernels.vtx_scaled_add_f32, &ws);
    }
    lw->pin_records = false;
    return !lw->failed;
}

/* The outputs placed over their inputs where this node is the inputs'
 * last reader, else like them. */
static bool place_outputs(lowering *lw, const graph_node *n, int index)
{
    for (int k = 0; k < n->n_outputs && !lw->failed; k++) {
        int in = n->inputs[k], out = n->outputs[k];
        lw_same_layout(lw, out, in);
        if (lw_place_in_place(lw, out, in, -1, index) || lw->failed)
            continue;
        char what[96];
        snprintf(what, sizeof what, "tensor '%s'", lw_gt(lw, out)->name);
        lw_place_like(lw, out, in, what);
    }
    return !lw->failed;
}

/* Each input's pieces copied into (to_block) or each output's out of the
 * tiles' blocks, in the same order both ways. */
static bool copy_pieces(lowering *lw, const graph_node *n, const ring_tile *rt, bool to_block)
{
    uint32_t *at = calloc(lw->program_tiles + 1, sizeof *at);
    if (!at)
        return lw_fail(lw, "out of host memory");
    for (int k = 0; k < n->n_inputs && !lw->failed; k++) {
        const ltensor *li = &lw->tensor[n->inputs[k]], *lo = &lw->tensor[n->outputs[k]];
        for (size_t j = 0; j < li->n && !lw->failed; j++) {
            const piece *p = &li->p[j];
            uint32_t bytes = (uint32_t)p->count * 4, b = rt[p->tile].block + at[p->tile];
            if (to_block)
                lw_add_local_copy(lw, p->tile, p->addr, b, bytes);
            else
                lw_add_local_copy(lw, p->tile, b, lo->p[j].addr, bytes);
            at[p->tile] += bytes;
        }
    }
    free(at);
    return !lw->failed && lw_end_phase(lw);
}

/* A transfer of the block's slice (r + shift) mod R (the address replica
 * 0's), or of a fixed block (shift < 0). */
static lw_ring_xfer slice_of(const ring_tile *t, uint32_t block, int32_t shift)
{
    uint32_t at = shift >= 0 ? block + (uint32_t)shift * t->slice_bytes : block;
    return (lw_ring_xfer){ at, t->slice_bytes, shift, t->slice_bytes };
}

bool lw_lower_all_reduce(lowering *lw, const graph_node *n, int index)
{
    uint32_t R = (uint32_t)graph_attr_int(n, "replicas");
    if (R != lw->replicas)
        return lw_fail(lw, "%s: the step sums its gradients over %u replicas; the program has %u (compile the "
                       "training step for the machine it runs on)", lw->g->source, R, lw->replicas);
    if (!place_outputs(lw, n, index))
        return false;
    uint32_t tiles = lw->program_tiles;
    ring_tile *rt = calloc(tiles + 1, sizeof *rt);
    uint64_t *bytes = calloc(tiles + 1, sizeof *bytes);
    lw_ring_xfer *send = calloc(tiles + 1, sizeof *send), *recv = calloc(tiles + 1, sizeof *recv);
    if (!rt || !bytes || !send || !recv) {
        free(rt); free(bytes); free(send); free(recv);
        return lw_fail(lw, "out of host memory");
    }
    for (int k = 0; k < n->n_inputs; k++) {
        const ltensor *li = &lw->tensor[n->inputs[k]];
        for (size_t j = 0; j < li->n; j++)
            bytes[li->p[j].tile] += li->p[j].count * 4;
    }
    for (uint32_t i = 0; i < tiles && !lw->failed; i++) {
        if (!bytes[i])
            continue;
        ring_tile *t = &rt[i];
        t->slice_bytes = slice_bytes_of(bytes[i], R);
        t->block = lw_scratch_zeroed(lw, i, (uint64_t)R * t->slice_bytes, PREFER_REGION0, 8,
                                     "the all-reduce's block of the tile's gradients");
        t->acc = t->block ? lw_scratch_alloc(lw, i, t->slice_bytes, PREFER_REGION1, 8, "the all-reduce's partial sum")
                          : 0;
        t->stage = t->acc ? lw_scratch_alloc(lw, i, t->slice_bytes, PREFER_REGION1, 8, "the all-reduce's slice received")
                          : 0;
    }
    if (!lw->failed && copy_pieces(lw, n, rt, true))
        lw_sync_system(lw);
    /* reduce-scatter: step s sends the partial sum (at s = 1 the replica's own
     * slice r) and adds slice r - s to what comes from the previous replica */
    for (uint32_t s = 1; s < R && !lw->failed; s++) {
        for (uint32_t i = 0; i < tiles; i++) {
            const ring_tile *t = &rt[i];
            send[i] = s == 1 ? slice_of(t, t->block, 0) : slice_of(t, t->acc, -1);
            recv[i] = slice_of(t, t->stage, -1);
        }
        if (lw_ring_phase(lw, send, recv))
            add_slices(lw, rt, R - s, s + 1 < R);
    }
    /* all-gather: replica r holds slice r + 1 summed; step s passes on slice
     * r + 1 - s into the same slice of the next replica */
    for (uint32_t s = 0; s + 1 < R && !lw->failed; s++) {
        for (uint32_t i = 0; i < tiles; i++) {
            const ring_tile *t = &rt[i];
            send[i] = slice_of(t, t->block, (int32_t)((1 + R - s) % R));
            recv[i] = slice_of(t, t->block, (int32_t)((R - s) % R));
        }
        lw_ring_phase(lw, send, recv);
    }
    if (!lw->failed)
        copy_pieces(lw, n, rt, false);
    free(rt);
    free(bytes);
    free(send);
    free(recv);
    return !lw->failed;
}
