/*
 * exchange_port.h — a tile's side of the exchange: the endpoints its xsend
 * and xrecv instructions name, and the log of what it sent and expects to
 * receive in the current exchange phase.
 *
 * The executors of xsend / xrecv (isa/exec_control.c) check their operands
 * and append to this log; the fabric (exchange/exchange.h) matches the logs
 * of a phase's tiles, times the transfers and writes the received bytes.
 *
 * Endpoints (32-bit values in $dest / $src):
 *   0 .. chips * tiles_per_chip - 1   a tile, by global number
 *                                     (chip * tiles_per_chip + tile)
 *   XCH_BROADCAST                     (xsend only) every tile that has an
 *                                     xrecv from this sender in this phase
 *   XCH_MULTICAST | g << 17           (xsend) multicast group g (0 .. 127)
 *                                     of this sender in this phase: every
 *                                     tile that takes it with an xrecv from
 *   XCH_MULTICAST | g << 17 | S       (xrecv) tile S's group g.  As on the
 *                                     hardware, where any tiles may listen
 *                                     to a sender's exchange bus while it
 *                                     sends, one send reaches several
 *                                     tiles; the groups let a sender's
 *                                     sends reach different sets of tiles
 *                                     in one phase (a broadcast reaches
 *                                     every tile that receives from it)
 *   XCH_HOST | n                      host stream n (xsend: output stream n
 *                                     to the host, xrecv: the next bytes of
 *                                     input stream n)
 *   XCH_STREAM_MEMORY | n             streaming-memory buffer n (DDR behind
 *                                     the gateway): xrecv reads it in order
 *                                     from its start (and from the start
 *                                     again after the last byte, so data
 *                                     written once can be streamed in every
 *                                     step); xsend lets go of the bytes read
 *                                     so far and appends (a buffer read to
 *                                     its end is written anew, as a step
 *                                     loads its optimizer state and stores
 *                                     it back, piece by piece, in order)
 *   n is at most XCH_ENDPOINT_INDEX; other bit patterns are errors.
 */
#ifndef IPUSIM_ISA_EXCHANGE_PORT_H
#define IPUSIM_ISA_EXCHANGE_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XCH_BROADCAST      0xffffffffu
#define XCH_HOST           0x80000000u
#define XCH_STREAM_MEMORY  0x40000000u
#define XCH_ENDPOINT_INDEX 0x00ffffffu
#define XCH_MULTICAST      0x20000000u
#define XCH_MULTICAST_GROUP_SHIFT 17
#define XCH_MULTICAST_GROUPS 128u
#define XCH_MULTICAST_TILE 0x0001ffffu

/* The endpoints of multicast group g of tile `sender`: what the sender's
 * xsend names, and what a receiver's xrecv names. */
static inline uint32_t xch_multicast_send(uint32_t group) { return XCH_MULTICAST | group << XCH_MULTICAST_GROUP_SHIFT; }
static inline uint32_t xch_multicast_recv(uint32_t group, uint32_t sender)
{
    return XCH_MULTICAST | group << XCH_MULTICAST_GROUP_SHIFT | sender;
}
static inline uint32_t xch_multicast_group(uint32_t endpoint)
{
    return (endpoint & XCH_ENDPOINT_INDEX) >> XCH_MULTICAST_GROUP_SHIFT;
}

enum xch_endpoint_kind {
    XCH_EP_TILE,
    XCH_EP_BROADCAST,
    XCH_EP_MULTICAST,       /* a group: the sender's form, or a receiver's naming the tile */
    XCH_EP_HOST,
    XCH_EP_STREAM,
    XCH_EP_INVALID,
};

/* What an endpoint value names, for a system of system_tiles tiles. */
enum xch_endpoint_kind xch_endpoint_kind(uint32_t endpoint, uint32_t system_tiles);

/* ---- the log a tile writes while it runs ----------------------------------- */

/* One xsend or xrecv as the tile executed it. */
typedef struct xch_transfer {
    uint32_t pc;            /* address of the instruction */
    uint32_t addr;          /* tile address of the data */
    uint32_t bytes;
    uint32_t endpoint;      /* dest for a send, src for a receive */
    uint64_t issue_cycle;   /* the tile's cycle when it issued */
    uint64_t start_cycle;   /* set by sim/engine/tile.c: issue + 1 + the set-up this
                               instruction paid: the data start to leave (send),
                               the receive is posted (recv) */
    size_t data_offset;     /* send: where its bytes are in xch_log.data */
} xch_transfer;

/* What one tile did in the current exchange phase.  Filled by the xsend /
 * xrecv executors (isa/exec_control.c) through xch_log_send/recv; read and
 * cleared by the resolution. */
typedef struct xch_log {
    xch_transfer *sends;
    size_t n_sends, cap_sends;
    xch_transfer *recvs;
    size_t n_recvs, cap_recvs;
    uint8_t *data;          /* the bytes of every send, as read at issue */
    size_t data_bytes, data_cap;
    uint32_t system_tiles;  /* tile endpoints are 0 .. system_tiles - 1 */
    bool phase_started;     /* an exchange instruction issued since the last
                               resolution: the set-up cost is paid */
} xch_log;

/* Append a transfer; false only when the host is out of memory.  The send
 * copies `bytes` bytes from data. */
bool xch_log_send(xch_log *log, uint32_t pc, uint64_t cycle, uint32_t addr, uint32_t bytes,
                  uint32_t dest, const uint8_t *data);
bool xch_log_recv(xch_log *log, uint32_t pc, uint64_t cycle, uint32_t addr, uint32_t bytes, uint32_t src);
/* Forget the transfers (keeping the storage) and end the phase. */
void xch_log_clear(xch_log *log);
void xch_log_free(xch_log *log);

#endif
