/*
 * exchange_port.c — the per-tile record of an exchange phase (exchange_port.h): what the
 * xsend / xrecv executors append while the tile runs.  Storage is kept
 * between phases, so a tile that exchanges every superstep allocates once.
 */
#include "exchange_port.h"

#include <stdlib.h>
#include <string.h>

enum xch_endpoint_kind xch_endpoint_kind(uint32_t endpoint, uint32_t system_tiles)
{
    if (endpoint == XCH_BROADCAST)
        return XCH_EP_BROADCAST;
    if (endpoint < system_tiles)
        return XCH_EP_TILE;
    uint32_t kind = endpoint & ~XCH_ENDPOINT_INDEX;
    if (kind == XCH_HOST)
        return XCH_EP_HOST;
    if (kind == XCH_STREAM_MEMORY)
        return XCH_EP_STREAM;
    if (kind == XCH_MULTICAST && (endpoint & XCH_MULTICAST_TILE) < system_tiles)
        return XCH_EP_MULTICAST;
    return XCH_EP_INVALID;
}

static xch_transfer *append(xch_transfer **v, size_t *n, size_t *cap)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 8;
        xch_transfer *p = realloc(*v, c * sizeof *p);
        if (!p)
            return NULL;
        *v = p;
        *cap = c;
    }
    xch_transfer *x = &(*v)[(*n)++];
    memset(x, 0, sizeof *x);
    return x;
}

bool xch_log_send(xch_log *log, uint32_t pc, uint64_t cycle, uint32_t addr, uint32_t bytes,
                  uint32_t dest, const uint8_t *data)
{
    if (log->data_bytes + bytes > log->data_cap) {
        size_t c = log->data_cap ? log->data_cap : 256;
        while (c < log->data_bytes + bytes)
            c *= 2;
        uint8_t *p = realloc(log->data, c);
        if (!p)
            return false;
        log->data = p;
        log->data_cap = c;
    }
    xch_transfer *x = append(&log->sends, &log->n_sends, &log->cap_sends);
    if (!x)
        return false;
    x->pc = pc;
    x->issue_cycle = cycle;
    x->start_cycle = cycle + 1;
    x->addr = addr;
    x->bytes = bytes;
    x->endpoint = dest;
    x->data_offset = log->data_bytes;
    if (bytes)
        memcpy(log->data + log->data_bytes, data, bytes);
    log->data_bytes += bytes;
    return true;
}

bool xch_log_recv(xch_log *log, uint32_t pc, uint64_t cycle, uint32_t addr, uint32_t bytes, uint32_t src)
{
    xch_transfer *x = append(&log->recvs, &log->n_recvs, &log->cap_recvs);
    if (!x)
        return false;
    x->pc = pc;
    x->issue_cycle = cycle;
    x->start_cycle = cycle + 1;
    x->addr = addr;
    x->bytes = bytes;
    x->endpoint = src;
    return true;
}

void xch_log_clear(xch_log *log)
{
    log->n_sends = log->n_recvs = 0;
    log->data_bytes = 0;
    log->phase_started = false;
}

void xch_log_free(xch_log *log)
{
    free(log->sends);
    free(log->recvs);
    free(log->data);
    uint32_t tiles = log->system_tiles;
    memset(log, 0, sizeof *log);
    log->system_tiles = tiles;
}
