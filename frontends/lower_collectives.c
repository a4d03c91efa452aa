/*
 * lower_collectives.c — collectives across the replicas of a data-parallel
 * program: ReplicatedAllReduce (the sum of each input over the replicas, in
 * every replica), lowered as rings of the replicas, tile by tile.
 *
 * Each tile gathers its pieces of every input (all the tensors of the node:
 * the collectives fused, as Graphcore's and PaddlePaddle's MLPerf
 * submissions did) and splits them in two halves, each in a block of R
 * equal slices, zero-padded (local copies).  The first half goes round the
 * ring of replicas clockwise (replica r to r + 1), the second
 * anticlockwise, at the same time, so that both directions of the
 * IPU-Links between neighbouring chips carry data: PopLibs' "bidirectional
 * ring pair", the method its collectives pick for gradients of this size
 * on more than two replicas (popops Collectives.cpp, pickAllReduceMethod;
 * with two replicas a clockwise ring alone, as there).  Tile i of every
 * replica works with tile i of its neighbours.  In each ring (direction d,
 * +1 or -1):
 *   - reduce-scatter, R - 1 exchange phases: the partial sum travels round
 *     the ring, replica r's tile adding in slice r - d s of its own block at
 *     step s; after the last, slice r + d holds the sum over every replica
 *     (Patarasuk and Yuan's bandwidth-optimal ring);
 *   - all-gather, R - 1 phases: each replica passes on the summed slice it
 *     received last, into the same slice of the next;
 * then the blocks are copied back over the pieces of the outputs.
 * Every replica runs the same program: the slice a step reads, adds or
 * sends depends on the replica, so those words (control-program addresses
 * and vertex-record addresses) are SLICE relocations and the neighbours
 * RING ones (isa/elf/executable.h), made right for each replica when the
 * executable is read.  Each phase ends in a sync of the whole system (the
 * replicas' chips exchange).  Each tile sends 2 (R - 1) / R of its pieces'
 * bytes, half each way.
 *
 * Models the ring methods of popops' replicated all-reduce; does not model
 * its meet-in-the-middle ring (picked below a size threshold: the ring
 * pair is used there too), the quad-directional ring of a torus, nor the
 * hierarchical form across gateways.
 */
#include <stdlib.h>
#include <string.h>

#include "lower_ops.h"
#include "frontends/kernels.h"
#include "workloads/codelets/elementwise.h"

/* One ring's part of a tile: its block of R slices of slice_bytes (0: the
 * tile has nothing for this ring), the partial sum travelling (acc) and the
 * slice received (stage); the bytes of the tile's pieces it holds. */
typedef struct ring_part {
    uint32_t block, acc, stage, slice_bytes, bytes;
} ring_part;

typedef struct ring_tile {
    ring_part part[2];            /* clockwise, anticlockwise */
} ring_tile;

/* The elements of a slice: the part's f32 elements over R, even (a slice
 * stays 8-byte aligned and the codelet takes pairs). */
static uint32_t slice_bytes_of(uint64_t bytes, uint32_t replicas)
{
    uint64_t elements = (bytes / 4 + replicas - 1) / replicas;
    return (uint32_t)((elements + 1) & ~(uint64_t)1) * 4;
}

/* Slice k steps round ring d from the replica's own: (d k) mod R. */
static int32_t turn(int d, int64_t k, uint32_t R)
{
    int64_t s = (d > 0 ? k : -k) % (int64_t)R;
    return (int32_t)(s < 0 ? s + R : s);
}

/* On every tile with a part in ring d: out = x + stage over a slice, x (and
 * out, unless out_acc) the block's slice (r + shift) mod R, a compute set
 * of vtx_scaled_add_f32 with scale 1 (its records' slice words relocated). */
static bool add_slices(lowering *lw, const ring_tile *rt, int part, uint32_t shift, bool out_acc)
{
    lw->pin_records = true;
    for (uint32_t i = 0; i < lw->program_tiles && !lw->failed; i++) {
        const ring_part *t = &rt[i].part[part];
        if (!t->slice_bytes)
            continue;
        uint32_t x = t->block + shift * t->slice_bytes, out = out_acc ? t->acc : x, n = t->slice_bytes / 4;
        worker_set ws;
        if (!lw_workers_begin(lw, i, KERNEL_SCALED_ADD_WORDS, n / 2, &ws))
            break;
        for (int w = 0; w < CODELET_WORKERS; w++) {
            uint64_t e0 = ws.lo[w] * 2, e1 = ws.hi[w] * 2;
            kernel_scaled_add_record(ws.rec[w], x + (uint32_t)e0 * 4, t->stage + (uint32_t)e0 * 4,
                                     out + (uint32_t)e0 * 4, (uint32_t)(e1 - e0), 1.0f);
            int64_t rec = lw_worker_record(&ws, w);
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
 * last reader, else like them; each in its input's order. */
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

/* A copy between the tile's pieces (bytes at tile_addr) and its parts'
 * blocks, the pieces laid end to end from byte `at` (part 0's bytes, then
 * part 1's); a piece across the parts' boundary is copied in two. */
static void copy_span(lowering *lw, uint32_t tile, const ring_tile *t, uint32_t at, uint32_t tile_addr,
                      uint32_t bytes, bool to_block)
{
    while (bytes && !lw->failed) {
        int k = at < t->part[0].bytes ? 0 : 1;
        uint32_t off = k ? at - t->part[0].bytes : at, room = t->part[k].bytes - off;
        uint32_t n = bytes < room ? bytes : room, b = t->part[k].block + off;
        if (to_block)
            lw_add_local_copy(lw, tile, tile_addr, b, n);
        else
            lw_add_local_copy(lw, tile, b, tile_addr, n);
        at += n;
        tile_addr += n;
        bytes -= n;
    }
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
            uint32_t bytes = (uint32_t)p->count * 4;
            copy_span(lw, p->tile, &rt[p->tile], at[p->tile], to_block ? p->addr : lo->p[j].addr, bytes, to_block);
            at[p->tile] += bytes;
        }
    }
    free(at);
    return !lw->failed && lw_end_phase(lw);
}

/* The parts of a tile holding `bytes` of pieces: half each way round (the
 * first half even in elements), or all clockwise with `rings` 1; their
 * blocks (zeroed: the padding stays zero), partial sums and slices received. */
static bool place_parts(lowering *lw, uint32_t tile, uint64_t bytes, uint32_t R, int rings, ring_tile *t)
{
    uint64_t elements = bytes / 4, first = rings == 1 ? elements : ((elements + 1) / 2 + 1) & ~(uint64_t)1;
    if (first > elements)
        first = elements;
    t->part[0].bytes = (uint32_t)first * 4;
    t->part[1].bytes = (uint32_t)(elements - first) * 4;
    uint64_t block_bytes = 0, slice_bytes = 0;
    for (int k = 0; k < 2; k++) {
        ring_part *p = &t->part[k];
        p->slice_bytes = p->bytes ? slice_bytes_of(p->bytes, R) : 0;
        block_bytes += (uint64_t)R * p->slice_bytes;
        slice_bytes += p->slice_bytes;
    }
    uint32_t block = lw_scratch_zeroed(lw, tile, block_bytes, PREFER_REGION0, 8,
                                       "the all-reduce's blocks of the tile's gradients");
    uint32_t acc = block ? lw_scratch_alloc(lw, tile, slice_bytes, PREFER_REGION1, 8, "the all-reduce's partial sums")
                         : 0;
    uint32_t stage = acc ? lw_scratch_alloc(lw, tile, slice_bytes, PREFER_REGION1, 8, "the all-reduce's slices received")
                         : 0;
    if (!stage)
        return false;
    t->part[0].block = block;
    t->part[1].block = block + R * t->part[0].slice_bytes;
    t->part[0].acc = acc;
    t->part[1].acc = acc + t->part[0].slice_bytes;
    t->part[0].stage = stage;
    t->part[1].stage = stage + t->part[0].slice_bytes;
    return true;
}

/* A transfer of `at` (slice `shift` of the part's block, the address replica
 * 0's; shift < 0: at itself) to or from the neighbour `peer` replicas on. */
static lw_ring_xfer ring_xfer(const ring_part *p, uint32_t at, int32_t shift, uint32_t peer, bool send)
{
    return (lw_ring_xfer){ .addr = shift >= 0 ? at + (uint32_t)shift * p->slice_bytes : at,
                           .bytes = p->slice_bytes, .slice_shift = shift, .slice_bytes = p->slice_bytes,
                           .peer_shift = peer, .send = send };
}

/* One exchange phase of both rings: reduce-scatter step s (all-gather step
 * s with gather), every tile's transfers in x[4 i ..]. */
static bool ring_step(lowering *lw, const ring_tile *rt, int rings, uint32_t s, bool gather, lw_ring_xfer *x)
{
    uint32_t R = lw->replicas;
    for (uint32_t i = 0; i < lw->program_tiles; i++)
        for (int k = 0; k < 2; k++) {
            const ring_part *p = &rt[i].part[k];
            int d = k ? -1 : 1;
            uint32_t next = (uint32_t)turn(d, 1, R), prev = (uint32_t)turn(d, -1, R);
            lw_ring_xfer *send = &x[4 * i + 2 * k + 1], *recv = &x[4 * i + 2 * k];
            if (k >= rings || !p->slice_bytes) {
                *send = *recv = (lw_ring_xfer){ 0 };
            } else if (gather) {
                *recv = ring_xfer(p, p->block, turn(d, -(int64_t)s, R), prev, false);
                *send = ring_xfer(p, p->block, turn(d, 1 - (int64_t)s, R), next, true);
            } else {
                *recv = ring_xfer(p, p->stage, -1, prev, false);
                *send = s == 1 ? ring_xfer(p, p->block, 0, next, true) : ring_xfer(p, p->acc, -1, next, true);
            }
        }
    return lw_ring_phase(lw, x, 4);
}

bool lw_lower_all_reduce(lowering *lw, const graph_node *n, int index)
{
    uint32_t R = (uint32_t)graph_attr_int(n, "replicas");
    if (R != lw->replicas)
        return lw_fail(lw, "%s: the step sums its gradients over %u replicas; the program has %u (compile the "
                       "training step for the machine it runs on)", lw->g->source, R, lw->replicas);
    if (!place_outputs(lw, n, index))
        return false;
    int rings = R > 2 ? 2 : 1;
    uint32_t tiles = lw->program_tiles;
    ring_tile *rt = calloc(tiles + 1, sizeof *rt);
    uint64_t *bytes = calloc(tiles + 1, sizeof *bytes);
    lw_ring_xfer *x = calloc(4 * (size_t)tiles + 1, sizeof *x);
    if (!rt || !bytes || !x) {
        free(rt); free(bytes); free(x);
        return lw_fail(lw, "out of host memory");
    }
    for (int k = 0; k < n->n_inputs; k++) {
        const ltensor *li = &lw->tensor[n->inputs[k]];
        for (size_t j = 0; j < li->n; j++)
            bytes[li->p[j].tile] += li->p[j].count * 4;
    }
    /* the busiest chip's bytes (a stage's tiles), for compare's estimate */
    uint64_t most = 0;
    for (uint32_t first = 0; first < tiles; first += lw->tiles) {
        uint64_t chip = 0;
        for (uint32_t i = first; i < first + lw->tiles; i++)
            chip += bytes[i];
        most = chip > most ? chip : most;
    }
    lw->phases.all_reduce_bytes += most;
    for (uint32_t i = 0; i < tiles && !lw->failed; i++)
        if (bytes[i])
            place_parts(lw, i, bytes[i], R, rings, &rt[i]);
    if (!lw->failed && copy_pieces(lw, n, rt, true))
        lw_sync_all(lw, lw->kernels.ctl_sync_system);
    /* reduce-scatter: step s sends the partial sum (at s = 1 the replica's own
     * slice) and adds slice r - d s to what comes from the previous replica;
     * the last step's sum goes to slice r + d */
    for (uint32_t s = 1; s < R && !lw->failed; s++)
        if (ring_step(lw, rt, rings, s, false, x))
            for (int k = 0; k < rings && !lw->failed; k++)
                add_slices(lw, rt, k, (uint32_t)turn(k ? -1 : 1, -(int64_t)s, R), s + 1 < R);
    /* all-gather: step s passes on slice r + d (1 - s) into the same slice of
     * the next replica */
    for (uint32_t s = 0; s + 1 < R && !lw->failed; s++)
        ring_step(lw, rt, rings, s, true, x);
    if (!lw->failed)
        copy_pieces(lw, n, rt, false);
    free(rt);
    free(bytes);
    free(x);
    return !lw->failed;
}

/* ---- IpuCopy --------------------------------------------------------------------------------- */

/* Each piece of the input goes to the same tile of the node's stage (the
 * destination chip), in new storage there: the tiles of a pipeline stage
 * hold a tensor the way the stage that made it holds it, and each sends
 * its own pieces over the IPU-Links at once.  The phase is left open, so
 * that the copies between two pipeline cycles share one exchange. */
bool lw_lower_ipu_copy(lowering *lw, const graph_node *n, int index)
{
    (void)index;
    int in = n->inputs[0], out = n->outputs[0];
    char what[96];
    snprintf(what, sizeof what, "tensor '%s'", lw_gt(lw, out)->name);
    lw_same_layout(lw, out, in);
    const ltensor *src = &lw->tensor[in];
    uint32_t eb = src->element_bytes;
    for (size_t k = 0; k < src->n && !lw->failed; k++) {
        piece p = lw->tensor[in].p[k];
        uint32_t to = lw->stage * lw->tiles + p.tile % lw->tiles;
        uint64_t bytes = p.count * eb;
        uint32_t addr = lw_tensor_alloc(lw, out, to, bytes, PREFER_REGION0, 8, false, what);
        if (!addr || !lw_add_piece(lw, out, to, addr, p.first, p.count))
            return false;
        for (uint64_t at = 0; at < bytes; at += LW_TRANSFER_MAX_BYTES) {
            uint64_t part = bytes - at < LW_TRANSFER_MAX_BYTES ? bytes - at : LW_TRANSFER_MAX_BYTES;
            if (!lw_add_transfer(lw, p.tile, p.addr + (uint32_t)at, to, addr + (uint32_t)at, (uint32_t)part))
                return false;
        }
    }
    return !lw->failed;
}
