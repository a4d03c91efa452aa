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
 * Both check at issue (simulated exceptions, isa/exec_control.c):
 *   - addr must be 4-byte aligned (the exchange moves 32-bit words:
 *     ISA_EXC_MEM_ALIGN "xsend at 0x80002: address not 4-byte aligned") and
 *     bytes a multiple of 4 (ISA_EXC_INVALID_OPERAND);
 *   - [addr, addr + bytes) must lie in tile memory (ISA_EXC_MEM_RANGE,
 *     "xsend at 0xf0000: 16 bytes outside tile memory (0x4c000-0xe7fff)");
 *   - the endpoint must be one of those below (ISA_EXC_EXCHANGE).
 * The first exchange instruction of a tile after a sync (any zone but 0)
 * costs exchange_setup_cycles more: the supervisor waits that long before
 * its next issue, and the data of that instruction start moving only then.
 *
 * Endpoints (32-bit values in $dest / $src) are described in
 * isa/exchange_port.h, with the log a tile writes as it executes them.
 *
 * Phases.  An exchange phase of a tile ends at its next `sync` of zone 1,
 * 2 or 3 (or at the end of its program); zone ISA_SYNC_EXCHANGE (3) ends it
 * without a barrier.  The tiles of a phase's sync group — the tiles with
 * code that took part in the barrier that began it: the chip's tiles after
 * `sync 1`, every chip's tiles after `sync 2` and at the start of the
 * program — exchange with each other; sync 3 keeps the group.  The phase is
 * resolved when every tile of the group has stopped at the end of a phase
 * (at a sync of zone 1, 2 or 3, or at the end of its program); everything
 * the group's tiles logged since the previous resolution is resolved
 * together:
 *
 *   - matching: the i-th xsend from tile S to tile R is matched with the
 *     i-th xrecv on R from S, where S's broadcasts count as sends to every
 *     tile; the i-th xsend from S to its multicast group g with the i-th
 *     xrecv on R from (S, g) (a multicast is not a send to any tile for
 *     the plain matching); a broadcast or multicast no tile receives, an
 *     xsend to a tile with no
 *     matching xrecv, an xrecv that nothing fills, a size mismatch, a send
 *     to a tile outside the group (cross-chip exchange after `sync 1`) or
 *     to a tile without code are simulated "bad exchange" exceptions naming
 *     both tiles and pcs;
 *   - timing on a chip, in the chip's cycles, with n = ceil(bytes /
 *     exchange_send_bytes_per_cycle):
 *       start   = issue cycle + 1 + the set-up cost if this instruction
 *                 paid it (xch_transfer.start_cycle, stamped by sim/engine/tile.c)
 *       depart  = max(start, when the sender's bus is free); each tile
 *                 has its own outgoing bus, busy from depart for n cycles
 *                 (once for a broadcast, whatever the number of receivers)
 *       arrive  = depart + latency(S, R), where latency = base +
 *                 per-island * |island(S) - island(R)| (islands of
 *                 exchange_island_tiles tiles counted within a column) +
 *                 cross-column cost if the columns differ (tile t is in
 *                 column t / ceil(tiles_per_chip / exchange_columns))
 *       begin   = max(arrive, the receiver's xrecv start, when the
 *                 receiver's port is free; for a stream common to a
 *                 supertile, both tiles' xrecv starts and the earlier free
 *                 of their ports): a receiver takes one stream at
 *                 a time (overlaps are serialised and their cycles counted
 *                 as receive conflicts; the hardware would lose the data),
 *                 and a stream that arrives before its xrecv was issued
 *                 waits for it (a late receive, counted too)
 *       done    = begin + n: the last byte is in the receiver's memory.
 *     Sends are served in order of (start, sender tile, send index);
 *     receivers take streams in order of (arrive, sender tile, index).
 *   - the supertile.  The two tiles of a supertile (2k, 2k+1 of a chip)
 *     share an exchange bus (POPLIBS: Target::getTilesPerSharedExchangeBus
 *     = 2), but PopLibs' cost models give every tile the full
 *     exchangeBytesPerCycle for what it sends and receives and use the
 *     sharing only to speed up receiving: when both tiles of a supertile
 *     take the same data, lib/popops/ExchangeEstimator.cpp and
 *     lib/poplin/ExchangeEstimator.hpp multiply the receive rate by 2.
 *     Graphcore's all-to-all exchange figure for GC200 (8 TB/s, HC33 and
 *     the GC200 product brief) is 1472 tiles x 4 B x 1.325 GHz = 7.8 TB/s:
 *     every tile sending at once at the full rate, which a bus shared by
 *     two senders would halve.
 *     So each tile has its own outgoing bus here; a broadcast is carried
 *     once and each receiver takes it at the port's rate.  With
 *     exchange_supertile_receive (GC200, Bow) a stream that both tiles of
 *     a supertile receive (one broadcast or multicast send matched by
 *     both) enters through whichever of the pair's two ports is free
 *     first and lands in both tiles: the pair takes such streams two at a
 *     time, twice a tile's rate, as the estimators count it.  A stream
 *     still moves at the sender's rate, so the doubling shows where the
 *     receivers were the bottleneck: several senders at once to the same
 *     pairs.  Streams for one tile of the pair only use its own port.
 *   - timing off the chip, in picoseconds (a faster tile clock does not
 *     make it faster): a transfer between chips takes
 *     bytes / (ipu_links_per_chip_pair x ipu_link_bandwidth), serialised
 *     per directed chip pair (data for several receivers on one chip
 *     crosses once), paced also by the sender's bus (n cycles), plus
 *     ipu_link_hop_latency_ps per hop (1 hop on a board; between boards
 *     board_hops for each step across the pod's torus of boards, rows of
 *     board_ring boards, rows and columns wrapping around).  The data still enter the receiving tile through
 *     its exchange port at exchange_send_bytes_per_cycle: the stream
 *     occupies the port for the n receiver cycles before its last byte
 *     lands (arrive = that landing - n, then begin and done as on the
 *     chip), so streams from several chips to one tile are serialised
 *     like on-chip ones.  Host and
 *     streaming-memory transfers take bytes / bandwidth serialised per chip
 *     and direction, plus their latency; a read (xrecv) starts at its
 *     start cycle, a write (xsend) at its departure.
 *   - data: received bytes are written into the receivers' memory when the
 *     phase is resolved; a tile that ended its phase with sync 3 resumes at
 *     max(its own stop, the arrival of the last byte it receives); a tile
 *     at a barrier counts as arrived there when also every transfer it
 *     sent has been delivered (sim/engine/engine.h).
 *
 * Resources (buses, ports, links, host and streaming-memory channels) keep
 * their busy times from one resolution to the next.
 *
 * Not modelled: flow control (there is none on the IPU), the exchange
 * clashes with the tile's own memory accesses (ISA2 §2.8.11.2), data loss on
 * receive overlap (ipusim serialises instead and counts it), the on-chip
 * path from a tile to the IPU-Links or the gateway (part of the hop and
 * host latencies), contention between several chips for the streaming
 * memory (bandwidth is per chip).
 */
#ifndef IPUSIM_EXCHANGE_H
#define IPUSIM_EXCHANGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "isa/exchange_port.h"
#include "isa/state.h"
#include "memmodel/tile_memory.h"

/* ---- the fabric: timing and matching --------------------------------------- */

/* The exchange's parameters, from the machine description (sim/program/machine.def). */
typedef struct xch_params {
    uint32_t chips, tiles_per_chip, chips_per_board, board_hops;
    uint32_t board_ring;              /* boards in a row of the pod's torus (xch_chip_hops) */
    uint32_t tiles_per_column, island_tiles;
    uint32_t base_latency_cycles, cycles_per_island, cross_column_cycles;
    uint32_t send_bytes_per_cycle;
    bool supertile_receive;           /* the pair's ports take common streams (above) */
    uint64_t link_bytes_per_s;        /* one directed chip pair: links x link bandwidth */
    uint64_t link_hop_ps;
    uint64_t host_bytes_per_s, host_latency_ps;
    uint64_t stream_bytes_per_s, stream_latency_ps;
    uint64_t stream_capacity_bytes;
} xch_params;

/* Counters per chip, cumulative over the run.  Sends are counted on the
 * sender's chip, host and streaming-memory reads on the reader's. */
typedef struct xch_chip_stats {
    uint64_t exchange_bytes;          /* bytes sent to tiles (a broadcast once) */
    uint64_t exchange_transfers;      /* matched xsend/xrecv pairs delivered */
    uint64_t receive_conflict_cycles; /* cycles streams waited for a busy port */
    uint64_t late_receives;           /* streams that arrived before their xrecv */
    uint64_t link_bytes, link_ps;     /* sent over IPU-Links; busy time of the links */
    uint64_t host_bytes, host_ps;     /* to and from the host; channel busy time */
    uint64_t stream_bytes, stream_ps; /* to and from streaming memory; busy time */
} xch_chip_stats;

/* An off-chip transfer, for the trace. */
enum xch_span_kind { XCH_SPAN_LINK, XCH_SPAN_HOST_OUT, XCH_SPAN_HOST_IN, XCH_SPAN_STREAM_WRITE,
                     XCH_SPAN_STREAM_READ };
typedef struct xch_span {
    uint32_t chip;          /* the chip whose channel carries it (sender's for links) */
    uint32_t tile;          /* the tile that issued it */
    uint32_t peer;          /* receiving chip (links), stream or buffer number */
    uint8_t kind;           /* enum xch_span_kind */
    uint64_t bytes;
    uint64_t start_ps;      /* the channel starts carrying it */
    uint64_t busy_ps;       /* the channel is busy this long (bytes / bandwidth) */
    uint64_t end_ps;        /* delivered (busy time, pacing and latency) */
} xch_span;

typedef struct xch_stream {
    uint32_t index;
    uint8_t *data;
    size_t size, cap;
    size_t cursor;          /* host input / buffer read position */
    size_t start;           /* a buffer's first byte still held: those before it
                               were read and let go by a later write */
} xch_stream;

/* Host streams or streaming-memory buffers by number: in order of first
 * use, and an open-addressing index from number to place (slot: place +
 * 1, 0 empty; n_slots a power of two above twice n), so that a transfer
 * finds its stream in constant time however many there are. */
typedef struct xch_stream_list {
    xch_stream *s;
    size_t n, cap;
    uint32_t *slot;
    size_t n_slots;
} xch_stream_list;

/* The index of l->s[0 .. n) made anew (after l->s was filled whole). */
bool xch_stream_list_index(xch_stream_list *l);
/* Every stream's data, the streams and the index. */
void xch_stream_list_free(xch_stream_list *l);

typedef struct xch_system {
    xch_params p;
    uint64_t *chip_hz;              /* tile clock of each chip, whole Hz */
    uint64_t *bus_free;             /* per global tile: outgoing bus's first free cycle */
    uint64_t *port_free;            /* per global tile: receive port's first free cycle */
    uint64_t *link_free_ps;         /* [from * chips + to] */
    uint64_t *host_free_ps;         /* [chip * 2 + dir], dir 0 out, 1 in */
    uint64_t *stream_free_ps;       /* [chip * 2 + dir], dir 0 write, 1 read */
    int32_t *party_of;              /* global tile -> index in the current resolution, -1 */
    uint8_t *has_code;              /* global tile -> 1 when it has code (xch_set_has_code) */
    xch_chip_stats *chip_stats;
    xch_stream_list host_in, host_out, buffers;
    uint64_t stream_used_bytes;     /* sum of buffer sizes, against the capacity */
    bool record_spans;
    xch_span *spans;
    size_t n_spans, cap_spans;
} xch_system;

/* One tile taking part in a resolution. */
typedef struct xch_party {
    uint32_t tile;                  /* global tile number */
    xch_log *log;
    tile_memory *mem;
    uint64_t stop_cycle;            /* the cycle after its phase-ending sync (or end) */
    /* results */
    uint64_t recv_done_cycle;       /* when its last received byte landed (0: none) */
    uint64_t send_done_cycle;       /* when everything it sent was delivered (0: none),
                                       in its own chip's cycles, rounded up */
    bool faulted;                   /* the exchange raised an exception on this tile */
    uint8_t exception;              /* enum isa_exception */
    uint32_t fault_pc;              /* the xsend / xrecv concerned */
    char message[160];
} xch_party;

/* Set up for chips x tiles_per_chip tiles; chip clocks start at
 * default_hz.  False when the host is out of memory. */
bool xch_system_init(xch_system *x, const xch_params *p, uint64_t default_hz);
void xch_system_free(xch_system *x);

/* Mark a tile as having code (for messages about sends to other tiles). */
void xch_set_has_code(xch_system *x, uint32_t tile);

/* Host input stream n (copied); false when out of memory. */
bool xch_set_host_input(xch_system *x, uint32_t n, const void *data, size_t size);
/* Host output stream n so far, or NULL when nothing was sent to it. */
const uint8_t *xch_host_output(const xch_system *x, uint32_t n, size_t *size);
/* Preload streaming-memory buffer n (counts against the capacity); false
 * with a message when it does not fit or the host is out of memory. */
bool xch_set_stream_buffer(xch_system *x, uint32_t n, const void *data, size_t size,
                           char *err, size_t err_size);
/* Streaming-memory buffer n's bytes held (from its first not let go),
 * NULL when it has none; the second may be written (a variable kept in
 * streaming memory given its value between runs). */
const uint8_t *xch_stream_buffer(const xch_system *x, uint32_t n, size_t *size);
uint8_t *xch_stream_buffer_mut(xch_system *x, uint32_t n, size_t *size);

/* Latency in cycles between two tiles of one chip (tile numbers within the
 * chip). */
uint32_t xch_latency_cycles(const xch_params *p, uint32_t from, uint32_t to);
/* IPU-Link hops between two chips (0 for the same chip). */
uint32_t xch_chip_hops(const xch_params *p, uint32_t a, uint32_t b);

/* Resolve the phase of these parties (one sync group: group_chip is its
 * chip, or -1 for the whole system), in the given order (increasing global
 * tile).  Matches, times, writes the received data, clears the logs.
 * Returns false when some party faulted (see its fields): matching faults
 * are found before anything moves; a fault met while the fabric serves the
 * transfers (host input exhausted, streaming memory full) leaves the data
 * moved so far.  Either way the run cannot go on. */
bool xch_resolve(xch_system *x, xch_party *parties, size_t n, int32_t group_chip);

#endif
