/*
 * exchange.h — the compiled, time-deterministic exchange: what tiles send
 * and receive, how it is matched, when it arrives.
 *
 * Model.  A tile's supervisor takes part in an exchange with two
 * instructions of ipusim's own (ISA2 does not publish the real ones):
 *
 *   xsend $addr, $bytes, $dest   send `bytes` from tile memory at `addr` to
 *                                endpoint `dest` (below).  The bytes are read
 *                                when xsend issues; the supervisor is busy
 *                                for ceil(bytes / exchange_send_bytes_per_cycle)
 *                                cycles while they leave the tile.
 *   xrecv $addr, $bytes, $src    expect `bytes` from endpoint `src` at `addr`.
 *
 * Endpoints (32-bit values in $dest / $src):
 *   0 .. chips * tiles_per_chip - 1   a tile, by global number
 *                                     (chip * tiles_per_chip + tile)
 *   XCH_BROADCAST                     (xsend only) every tile that has an
 *                                     xrecv from this sender in this phase
 *   XCH_HOST | n                      host stream n (xsend: to the host,
 *                                     xrecv: from the host)
 *   XCH_STREAM_MEMORY | n             streaming-memory buffer n (DDR behind
 *                                     the gateway)
 *
 * An exchange phase ends at the tile's next `sync` of any zone other than
 * 0; zone ISA_SYNC_EXCHANGE (3) ends it without a barrier.  When every tile
 * of the sync group has ended the phase, the phase is resolved:
 *
 *   - matching: the i-th xsend from tile S to tile R is matched with the
 *     i-th xrecv on R from S (broadcasts are matched by every receiver
 *     with an xrecv from S); byte counts must agree; an xsend with no
 *     matching xrecv, an xrecv that nothing fills, or a size mismatch is a
 *     simulated "bad exchange" exception naming both tiles and pcs;
 *   - timing: data leaves the sender at its issue time plus the set-up
 *     cost, needs the tile-to-tile latency for the distance between the
 *     tiles (base latency + per island of distance + across columns), and
 *     arrives at exchange_send_bytes_per_cycle.  A receiver takes one
 *     stream at a time: overlapping arrivals are serialised (counted as
 *     receive conflicts).  The two tiles of a supertile (2k, 2k+1) share one
 *     outgoing bus: their sends are serialised too.  Between chips the data
 *     crosses IPU-Links: bytes / (links x link bandwidth), serialised per
 *     directed chip pair, plus hop latency.  Host and streaming-memory
 *     transfers are timed in bytes per second plus latency, serialised per
 *     chip and direction.  Off-chip timing is in picoseconds: a faster tile
 *     clock does not make it faster.
 *   - data: received bytes are written into the receivers' memory when the
 *     phase is resolved; a tile that ended its phase with sync 3 resumes
 *     at max(its own stop, the arrival of the last byte it receives).
 *
 * Not modelled: flow control (there is none on the IPU), the exchange
 * clashes with the tile's own memory accesses (ISA2 §2.8.11.2), data loss on
 * receive overlap (ipusim serialises instead and counts it).
 */
#ifndef IPUSIM_EXCHANGE_H
#define IPUSIM_EXCHANGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XCH_BROADCAST      0xffffffffu
#define XCH_HOST           0x80000000u
#define XCH_STREAM_MEMORY  0x40000000u
#define XCH_ENDPOINT_INDEX 0x00ffffffu

/* One xsend or xrecv as the tile executed it. */
typedef struct xch_transfer {
    uint32_t pc;            /* address of the instruction */
    uint64_t issue_cycle;   /* the tile's cycle when it issued */
    uint32_t addr;          /* tile address of the data */
    uint32_t bytes;
    uint32_t endpoint;      /* dest for a send, src for a receive */
    uint8_t *data;          /* send: the bytes as read at issue (malloc'd) */
} xch_transfer;

/* What one tile did in the current exchange phase.  Filled by the xsend /
 * xrecv executors (isa/exec_control.c) through xch_log_send/recv; read and
 * cleared by the resolution. */
typedef struct xch_log {
    xch_transfer *sends;
    size_t n_sends, cap_sends;
    xch_transfer *recvs;
    size_t n_recvs, cap_recvs;
    bool phase_started;     /* an exchange instruction issued since the last sync */
} xch_log;

bool xch_log_send(xch_log *log, uint32_t pc, uint64_t cycle, uint32_t addr, uint32_t bytes,
                  uint32_t dest, const uint8_t *data);
bool xch_log_recv(xch_log *log, uint32_t pc, uint64_t cycle, uint32_t addr, uint32_t bytes, uint32_t src);
void xch_log_clear(xch_log *log);
void xch_log_free(xch_log *log);

#endif
