/*
 * exchange.c — resolving an exchange phase: matching the tiles' logged
 * sends and receives, timing them on the fabric (buses, receive ports,
 * IPU-Links, host and streaming-memory channels) and moving the data.  The
 * model and its ordering rules are in exchange.h.
 */
#include "exchange.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/hash.h"
#include "sim/base/simtime.h"

/* ---- set-up ------------------------------------------------------------------ */

bool xch_system_init(xch_system *x, const xch_params *p, uint64_t default_hz)
{
    memset(x, 0, sizeof *x);
    x->p = *p;
    if (x->p.send_bytes_per_cycle == 0)
        x->p.send_bytes_per_cycle = 1;
    if (x->p.tiles_per_column == 0)
        x->p.tiles_per_column = 1;
    if (x->p.island_tiles == 0)
        x->p.island_tiles = 1;
    if (x->p.chips_per_board == 0)
        x->p.chips_per_board = 1;
    size_t chips = p->chips, tiles = (size_t)p->chips * p->tiles_per_chip;
    x->chip_hz = calloc(chips, sizeof *x->chip_hz);
    x->bus_free = calloc(tiles, sizeof *x->bus_free);
    x->port_free = calloc(tiles, sizeof *x->port_free);
    x->link_free_ps = calloc(chips * chips, sizeof *x->link_free_ps);
    x->host_free_ps = calloc(chips * 2, sizeof *x->host_free_ps);
    x->stream_free_ps = calloc(chips * 2, sizeof *x->stream_free_ps);
    x->party_of = malloc(tiles * sizeof *x->party_of);
    x->has_code = calloc(tiles, 1);
    x->chip_stats = calloc(chips, sizeof *x->chip_stats);
    if (!x->chip_hz || !x->bus_free || !x->port_free || !x->link_free_ps || !x->host_free_ps ||
        !x->stream_free_ps || !x->party_of || !x->has_code || !x->chip_stats) {
        xch_system_free(x);
        return false;
    }
    for (size_t c = 0; c < chips; c++)
        x->chip_hz[c] = default_hz;
    for (size_t t = 0; t < tiles; t++)
        x->party_of[t] = -1;
    return true;
}

void xch_stream_list_free(xch_stream_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->s[i].data);
    free(l->s);
    free(l->slot);
    memset(l, 0, sizeof *l);
}

void xch_system_free(xch_system *x)
{
    free(x->chip_hz);
    free(x->bus_free);
    free(x->port_free);
    free(x->link_free_ps);
    free(x->host_free_ps);
    free(x->stream_free_ps);
    free(x->party_of);
    free(x->has_code);
    free(x->chip_stats);
    xch_stream_list_free(&x->host_in);
    xch_stream_list_free(&x->host_out);
    xch_stream_list_free(&x->buffers);
    free(x->spans);
    memset(x, 0, sizeof *x);
}

void xch_set_has_code(xch_system *x, uint32_t tile)
{
    if (tile < x->p.chips * x->p.tiles_per_chip)
        x->has_code[tile] = 1;
}

/* ---- streams and buffers ------------------------------------------------------ */

static size_t first_slot(uint32_t index, size_t n_slots)
{
    return (size_t)hash_fnv1a(&index, sizeof index) & (n_slots - 1);
}

static xch_stream *find_stream(const xch_stream_list *l, uint32_t index)
{
    if (!l->n_slots)
        return NULL;
    for (size_t h = first_slot(index, l->n_slots); l->slot[h]; h = (h + 1) & (l->n_slots - 1))
        if (l->s[l->slot[h] - 1].index == index)
            return &l->s[l->slot[h] - 1];
    return NULL;
}

/* Stream l->s[i] entered in the index. */
static void index_stream(xch_stream_list *l, size_t i)
{
    size_t h = first_slot(l->s[i].index, l->n_slots);
    while (l->slot[h])
        h = (h + 1) & (l->n_slots - 1);
    l->slot[h] = (uint32_t)(i + 1);
}

bool xch_stream_list_index(xch_stream_list *l)
{
    size_t n_slots = 64;
    while (n_slots < 2 * l->n + 2)
        n_slots *= 2;
    uint32_t *slot = calloc(n_slots, sizeof *slot);
    if (!slot)
        return false;
    free(l->slot);
    l->slot = slot;
    l->n_slots = n_slots;
    for (size_t i = 0; i < l->n; i++)
        index_stream(l, i);
    return true;
}

static xch_stream *get_stream(xch_stream_list *l, uint32_t index)
{
    xch_stream *f = find_stream(l, index);
    if (f)
        return f;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        xch_stream *p = realloc(l->s, cap * sizeof *p);
        if (!p)
            return NULL;
        l->s = p;
        l->cap = cap;
    }
    f = &l->s[l->n++];
    memset(f, 0, sizeof *f);
    f->index = index;
    if (2 * l->n + 2 > l->n_slots) {
        if (!xch_stream_list_index(l)) {
            l->n--;
            return NULL;
        }
    } else {
        index_stream(l, l->n - 1);
    }
    return f;
}

static bool stream_append(xch_stream *s, const void *data, size_t size)
{
    if (s->size + size > s->cap) {
        size_t c = s->cap ? s->cap : 256;
        while (c < s->size + size)
            c *= 2;
        uint8_t *p = realloc(s->data, c);
        if (!p)
            return false;
        s->data = p;
        s->cap = c;
    }
    if (size)
        memcpy(s->data + s->size, data, size);
    s->size += size;
    return true;
}

bool xch_set_host_input(xch_system *x, uint32_t n, const void *data, size_t size)
{
    xch_stream *s = get_stream(&x->host_in, n);
    if (!s)
        return false;
    s->size = s->cursor = 0;
    return stream_append(s, data, size);
}

const uint8_t *xch_host_output(const xch_system *x, uint32_t n, size_t *size)
{
    const xch_stream *s = find_stream(&x->host_out, n);
    *size = s ? s->size : 0;
    return s ? (s->data ? s->data : (const uint8_t *)"") : NULL;
}

bool xch_set_stream_buffer(xch_system *x, uint32_t n, const void *data, size_t size, char *err, size_t err_size)
{
    xch_stream *old = find_stream(&x->buffers, n);
    uint64_t used = x->stream_used_bytes - (old ? old->size - old->start : 0);
    if (used + size > x->p.stream_capacity_bytes) {
        snprintf(err, err_size,
                 "streaming-memory buffer %u (%zu bytes) does not fit: %llu of %llu bytes already used "
                 "(streaming_memory_bytes)", n, size, (unsigned long long)used,
                 (unsigned long long)x->p.stream_capacity_bytes);
        return false;
    }
    xch_stream *s = get_stream(&x->buffers, n);
    if (!s) {
        snprintf(err, err_size, "out of host memory for streaming-memory buffer %u", n);
        return false;
    }
    s->size = s->cursor = s->start = 0;
    if (!stream_append(s, data, size)) {
        snprintf(err, err_size, "out of host memory for streaming-memory buffer %u", n);
        return false;
    }
    x->stream_used_bytes = used + size;
    return true;
}

const uint8_t *xch_stream_buffer(const xch_system *x, uint32_t n, size_t *size)
{
    const xch_stream *s = find_stream(&x->buffers, n);
    *size = s ? s->size - s->start : 0;
    return s ? (s->data ? s->data + s->start : (const uint8_t *)"") : NULL;
}

uint8_t *xch_stream_buffer_mut(xch_system *x, uint32_t n, size_t *size)
{
    xch_stream *s = find_stream(&x->buffers, n);
    *size = s ? s->size - s->start : 0;
    return s && s->data ? s->data + s->start : NULL;
}

/* ---- distances ------------------------------------------------------------------ */

uint32_t xch_latency_cycles(const xch_params *p, uint32_t from, uint32_t to)
{
    uint32_t col_a = from / p->tiles_per_column, col_b = to / p->tiles_per_column;
    uint32_t isl_a = (from % p->tiles_per_column) / p->island_tiles;
    uint32_t isl_b = (to % p->tiles_per_column) / p->island_tiles;
    uint32_t islands = isl_a > isl_b ? isl_a - isl_b : isl_b - isl_a;
    return p->base_latency_cycles + p->cycles_per_island * islands + (col_a != col_b ? p->cross_column_cycles : 0);
}

uint32_t xch_chip_hops(const xch_params *p, uint32_t a, uint32_t b)
{
    if (a == b)
        return 0;
    uint32_t ba = a / p->chips_per_board, bb = b / p->chips_per_board;
    if (ba == bb)
        return 1;
    /* boards in a torus of rows of board_ring: steps across it, wrapping */
    uint32_t ring = p->board_ring ? p->board_ring : 1;
    uint32_t boards = (p->chips + p->chips_per_board - 1) / p->chips_per_board;
    if (boards <= (ba > bb ? ba : bb))
        boards = (ba > bb ? ba : bb) + 1;
    uint32_t cols = ring < boards ? ring : boards, rows = (boards + ring - 1) / ring;
    uint32_t dx = ba % ring > bb % ring ? ba % ring - bb % ring : bb % ring - ba % ring;
    uint32_t dy = ba / ring > bb / ring ? ba / ring - bb / ring : bb / ring - ba / ring;
    dx = dx < cols - dx ? dx : cols - dx;
    dy = dy < rows - dy ? dy : rows - dy;
    return p->board_hops * (dx + dy > 0 ? dx + dy : 1);
}

/* ---- resolution ----------------------------------------------------------------- */

typedef struct send_info {
    uint32_t party, index;          /* parties[party].log->sends[index] */
    uint64_t depart, n_cycles;      /* sender's chip cycles */
    uint32_t matched;               /* deliveries made */
} send_info;

typedef struct delivery {
    uint32_t send;                  /* index into send_info */
    uint32_t r_party, r_index;      /* the receive */
    uint32_t r_tile;
    uint64_t arrive;                /* receiver's chip cycles */
    bool off_chip;
} delivery;

/* A send or a host / streaming-memory read, in the order the fabric serves them. */
typedef struct request {
    uint64_t start_ps;
    uint32_t tile;
    uint64_t issue_cycle;
    uint32_t party, index;
    bool recv;
    uint32_t send;                  /* index into send_info for sends */
} request;

typedef struct resolver {
    xch_system *x;
    xch_party *parties;
    size_t n;
    int32_t group_chip;
    bool faulted;
} resolver;

static __attribute__((format(printf, 5, 6))) void fault(resolver *r, xch_party *p, enum isa_exception exc,
                                                        uint32_t pc, const char *fmt, ...)
{
    r->faulted = true;
    if (p->faulted)
        return;
    p->faulted = true;
    p->exception = (uint8_t)exc;
    p->fault_pc = pc;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->message, sizeof p->message, fmt, ap);
    va_end(ap);
}

static uint32_t chip_of(const xch_system *x, uint32_t tile) { return tile / x->p.tiles_per_chip; }

static uint64_t cycles_for(const xch_system *x, uint32_t bytes)
{
    return (bytes + (uint64_t)x->p.send_bytes_per_cycle - 1) / x->p.send_bytes_per_cycle;
}

/* Why `peer` cannot take part in the phase of `self`, or NULL if it can. */
static const char *outside_group(const resolver *r, uint32_t peer, char *buf, size_t n)
{
    if (r->x->party_of[peer] >= 0)
        return NULL;
    uint32_t chip = chip_of(r->x, peer);
    if (!r->x->has_code[peer])
        snprintf(buf, n, "tile %u has no code", peer);
    else if (r->group_chip >= 0 && chip != (uint32_t)r->group_chip)
        snprintf(buf, n, "tile %u is on chip %u, outside this phase's sync group (chip %d after sync 1; "
                 "exchange between chips needs sync 2)", peer, chip, r->group_chip);
    else
        snprintf(buf, n, "tile %u is not in this exchange phase: chip %u has passed a sync 1 since the "
                 "last sync 2 (exchange between chips needs sync 2)", peer, chip);
    return buf;
}

static void *grow(void *v, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return v;
    size_t c = *cap ? *cap * 2 : 64;
    while (c < need)
        c *= 2;
    void *p = realloc(v, c * elem);
    if (p)
        *cap = c;
    return p;
}

static void add_span(xch_system *x, uint32_t chip, uint32_t tile, uint32_t peer, enum xch_span_kind kind,
                     uint64_t bytes, uint64_t start, uint64_t busy, uint64_t end)
{
    if (!x->record_spans)
        return;
    xch_span *s = grow(x->spans, &x->cap_spans, x->n_spans + 1, sizeof *s);
    if (!s)
        return;
    x->spans = s;
    s[x->n_spans++] = (xch_span){ .chip = chip, .tile = tile, .peer = peer, .kind = (uint8_t)kind, .bytes = bytes,
                                  .start_ps = start, .busy_ps = busy, .end_ps = end };
}

static int cmp_request(const void *a, const void *b)
{
    const request *x = a, *y = b;
    if (x->start_ps != y->start_ps) return x->start_ps < y->start_ps ? -1 : 1;
    if (x->tile != y->tile) return x->tile < y->tile ? -1 : 1;
    if (x->issue_cycle != y->issue_cycle) return x->issue_cycle < y->issue_cycle ? -1 : 1;
    if (x->recv != y->recv) return x->recv ? 1 : -1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Deliveries by supertile (the pair of tiles 2k, 2k + 1), then arrival,
 * send and tile: a tile's own streams in order of arrival, and a send's
 * two deliveries to one pair next to each other (the two tiles are in one
 * island: the same latency). */
static int cmp_delivery(const void *a, const void *b)
{
    const delivery *x = a, *y = b;
    if (x->r_tile >> 1 != y->r_tile >> 1) return x->r_tile >> 1 < y->r_tile >> 1 ? -1 : 1;
    if (x->arrive != y->arrive) return x->arrive < y->arrive ? -1 : 1;
    if (x->send != y->send) return x->send < y->send ? -1 : 1;
    return x->r_tile < y->r_tile ? -1 : x->r_tile > y->r_tile;
}

/* Step 1: pair every tile receive with its send (exchange.h, matching). */
static bool match(resolver *r, send_info *sends, const size_t *send_base, delivery **out, size_t *n_out)
{
    xch_system *x = r->x;
    uint32_t system_tiles = x->p.chips * x->p.tiles_per_chip;
    delivery *dv = NULL;
    size_t n_dv = 0, cap_dv = 0;
    /* Per receiver: the position reached in each sender's sends. */
    typedef struct cursor { uint32_t sender, group; size_t next; } cursor;   /* group: 0 plain, g + 1 multicast */
    cursor *cur = NULL;
    size_t cap_cur = 0;
    char why[200];
    for (size_t ri = 0; ri < r->n; ri++) {
        xch_party *rp = &r->parties[ri];
        size_t n_cur = 0;
        for (size_t k = 0; k < rp->log->n_recvs; k++) {
            const xch_transfer *rv = &rp->log->recvs[k];
            enum xch_endpoint_kind kind = xch_endpoint_kind(rv->endpoint, system_tiles);
            if (kind != XCH_EP_TILE && kind != XCH_EP_MULTICAST)
                continue;
            bool multicast = kind == XCH_EP_MULTICAST;
            uint32_t s_tile = multicast ? rv->endpoint & XCH_MULTICAST_TILE : rv->endpoint;
            uint32_t group = multicast ? xch_multicast_group(rv->endpoint) + 1 : 0;
            if (outside_group(r, s_tile, why, sizeof why)) {
                fault(r, rp, ISA_EXC_EXCHANGE, rv->pc, "xrecv of %u bytes from tile %u: %s", rv->bytes, s_tile,
                      why);
                continue;
            }
            uint32_t si = (uint32_t)x->party_of[s_tile];
            const xch_log *sl = r->parties[si].log;
            size_t c = 0;
            while (c < n_cur && (cur[c].sender != s_tile || cur[c].group != group))
                c++;
            if (c == n_cur) {
                cursor *p = grow(cur, &cap_cur, n_cur + 1, sizeof *cur);
                if (!p)
                    goto oom;
                cur = p;
                cur[n_cur++] = (cursor){ s_tile, group, 0 };
            }
            size_t j = cur[c].next;
            if (multicast) {
                uint32_t want = xch_multicast_send(group - 1);
                while (j < sl->n_sends && sl->sends[j].endpoint != want)
                    j++;
            } else {
                while (j < sl->n_sends && sl->sends[j].endpoint != rp->tile && sl->sends[j].endpoint != XCH_BROADCAST)
                    j++;
            }
            if (j == sl->n_sends) {
                if (multicast)
                    fault(r, rp, ISA_EXC_EXCHANGE, rv->pc,
                          "xrecv of %u bytes from tile %u (multicast group %u) is not matched: tile %u multicasts "
                          "nothing more to group %u in this phase", rv->bytes, s_tile, group - 1, s_tile, group - 1);
                else
                    fault(r, rp, ISA_EXC_EXCHANGE, rv->pc,
                          "xrecv of %u bytes from tile %u is not matched: tile %u sends nothing more to tile %u "
                          "in this phase", rv->bytes, s_tile, s_tile, rp->tile);
                cur[c].next = j;
                continue;
            }
            cur[c].next = j + 1;
            const xch_transfer *sd = &sl->sends[j];
            uint32_t send = (uint32_t)(send_base[si] + j);
            sends[send].matched++;   /* paired, even if the sizes disagree: one fault, on the receiver */
            if (sd->bytes != rv->bytes) {
                fault(r, rp, ISA_EXC_EXCHANGE, rv->pc,
                      "xrecv of %u bytes from tile %u: the matching xsend (tile %u, pc 0x%x) sends %u bytes",
                      rv->bytes, s_tile, s_tile, sd->pc, sd->bytes);
                continue;
            }
            delivery *p = grow(dv, &cap_dv, n_dv + 1, sizeof *dv);
            if (!p)
                goto oom;
            dv = p;
            dv[n_dv++] = (delivery){ .send = send, .r_party = (uint32_t)ri, .r_index = (uint32_t)k,
                                     .r_tile = rp->tile, .off_chip = chip_of(x, s_tile) != chip_of(x, rp->tile) };
        }
    }
    /* Sends nobody took. */
    for (size_t si = 0; si < r->n; si++) {
        xch_party *sp = &r->parties[si];
        for (size_t j = 0; j < sp->log->n_sends; j++) {
            const xch_transfer *sd = &sp->log->sends[j];
            enum xch_endpoint_kind kind = xch_endpoint_kind(sd->endpoint, system_tiles);
            if (kind == XCH_EP_TILE && outside_group(r, sd->endpoint, why, sizeof why))
                fault(r, sp, ISA_EXC_EXCHANGE, sd->pc, "xsend of %u bytes to tile %u: %s", sd->bytes, sd->endpoint,
                      why);
            else if (kind == XCH_EP_TILE && !sends[send_base[si] + j].matched)
                fault(r, sp, ISA_EXC_EXCHANGE, sd->pc,
                      "xsend of %u bytes to tile %u has no matching xrecv on tile %u in this phase", sd->bytes,
                      sd->endpoint, sd->endpoint);
            else if (kind == XCH_EP_BROADCAST && !sends[send_base[si] + j].matched)
                fault(r, sp, ISA_EXC_EXCHANGE, sd->pc,
                      "broadcast of %u bytes from tile %u: no tile has an xrecv from tile %u for it", sd->bytes,
                      sp->tile, sp->tile);
            else if (kind == XCH_EP_MULTICAST && !sends[send_base[si] + j].matched)
                fault(r, sp, ISA_EXC_EXCHANGE, sd->pc,
                      "multicast of %u bytes from tile %u to its group %u: no tile has an xrecv from it for it",
                      sd->bytes, sp->tile, xch_multicast_group(sd->endpoint));
        }
    }
    free(cur);
    *out = dv;
    *n_out = n_dv;
    return true;
oom:
    free(cur);
    free(dv);
    return false;
}

static void note_send_done(const xch_system *x, xch_party *p, uint64_t done_ps)
{
    uint64_t c = simtime_ps_to_cycle_ceil(done_ps, x->chip_hz[chip_of(x, p->tile)]);
    if (c > p->send_done_cycle)
        p->send_done_cycle = c;
}

static void note_recv_done(xch_party *p, uint64_t cycle)
{
    if (cycle > p->recv_done_cycle)
        p->recv_done_cycle = cycle;
}

/* A host or streaming-memory read: the data come from the host stream or
 * the buffer, timed on the chip's inbound channel. */
static void serve_read(resolver *r, xch_party *p, const xch_transfer *rv, bool host)
{
    xch_system *x = r->x;
    uint32_t chip = chip_of(x, p->tile);
    uint32_t n = rv->endpoint & XCH_ENDPOINT_INDEX;
    xch_stream *s = host ? find_stream(&x->host_in, n) : find_stream(&x->buffers, n);
    if (host && (!s || s->size - s->cursor < rv->bytes)) {
        if (!s)
            fault(r, p, ISA_EXC_EXCHANGE, rv->pc,
                  "xrecv of %u bytes from host stream %u: no data was given for input stream %u", rv->bytes, n, n);
        else
            fault(r, p, ISA_EXC_EXCHANGE, rv->pc, "xrecv of %u bytes from host stream %u: only %zu bytes are left",
                  rv->bytes, n, s->size - s->cursor);
        return;
    }
    if (!host) {
        if (s && s->cursor == s->size)
            s->cursor = s->start;
        if (!s || s->size - s->cursor < rv->bytes) {
            fault(r, p, ISA_EXC_EXCHANGE, rv->pc,
                  "xrecv of %u bytes from streaming-memory buffer %u: the buffer holds %zu bytes from read "
                  "position %zu", rv->bytes, n, s ? s->size - s->cursor : 0, s ? s->cursor - s->start : 0);
            return;
        }
    }
    uint64_t *free_ps = host ? &x->host_free_ps[chip * 2 + 1] : &x->stream_free_ps[chip * 2 + 1];
    uint64_t bps = host ? x->p.host_bytes_per_s : x->p.stream_bytes_per_s;
    uint64_t latency = host ? x->p.host_latency_ps : x->p.stream_latency_ps;
    uint64_t begin = simtime_max(simtime_cycles_to_ps(rv->start_cycle, x->chip_hz[chip]), *free_ps);
    uint64_t dur = simtime_transfer_ps(rv->bytes, bps);
    *free_ps = simtime_add(begin, dur);
    uint64_t done = simtime_add(simtime_add(begin, latency), dur);
    xch_chip_stats *cs = &x->chip_stats[chip];
    if (host) {
        cs->host_bytes += rv->bytes;
        cs->host_ps += dur;
    } else {
        cs->stream_bytes += rv->bytes;
        cs->stream_ps += dur;
    }
    add_span(x, chip, p->tile, n, host ? XCH_SPAN_HOST_IN : XCH_SPAN_STREAM_READ, rv->bytes, begin, dur, done);
    tmem_write_bytes(p->mem, rv->addr, s->data + s->cursor, rv->bytes);
    s->cursor += rv->bytes;
    note_recv_done(p, simtime_ps_to_cycle_ceil(done, x->chip_hz[chip]));
}

/* A send leaves the tile on the tile's own outgoing bus (exchange.h, on
 * the supertile): returns the departure. */
static uint64_t depart_on_bus(xch_system *x, uint32_t tile, const xch_transfer *sd, uint64_t n_cycles)
{
    uint64_t *bus = &x->bus_free[tile];
    uint64_t depart = simtime_max(sd->start_cycle, *bus);
    *bus = depart + n_cycles;
    return depart;
}

/* Before a write to a streaming-memory buffer: the bytes already read go
 * (a buffer read to its end is written anew, as the optimizer state a step
 * loads and stores back; one only read keeps its bytes for every step).
 * The bytes are moved down once those let go outnumber those held, so
 * that a buffer read and written piece by piece costs no more than its
 * bytes. */
static void let_go_of_read_bytes(xch_system *x, xch_stream *s)
{
    x->stream_used_bytes -= s->cursor - s->start;
    s->start = s->cursor;
    if (s->start && s->start >= s->size - s->start) {
        memmove(s->data, s->data + s->start, s->size - s->start);
        s->size -= s->start;
        s->cursor = s->start = 0;
    }
}

/* A write to the host or to streaming memory. */
static void serve_write(resolver *r, xch_party *p, const xch_transfer *sd, bool host)
{
    xch_system *x = r->x;
    uint32_t chip = chip_of(x, p->tile);
    uint32_t n = sd->endpoint & XCH_ENDPOINT_INDEX;
    xch_stream *s = host ? NULL : find_stream(&x->buffers, n);
    if (!host) {
        uint64_t freed = s ? s->cursor - s->start : 0;       /* (let go of before the write) */
        if (x->stream_used_bytes - freed + sd->bytes > x->p.stream_capacity_bytes) {
            if (x->p.stream_capacity_bytes == 0)
                fault(r, p, ISA_EXC_EXCHANGE, sd->pc,
                      "xsend of %u bytes to streaming-memory buffer %u: this machine has no streaming memory "
                      "(streaming_memory_bytes = 0)", sd->bytes, n);
            else
                fault(r, p, ISA_EXC_EXCHANGE, sd->pc,
                      "xsend of %u bytes to streaming-memory buffer %u: streaming memory is full (%llu of %llu "
                      "bytes used, streaming_memory_bytes)", sd->bytes, n, (unsigned long long)x->stream_used_bytes,
                      (unsigned long long)x->p.stream_capacity_bytes);
            return;
        }
    }
    if (!s)
        s = host ? get_stream(&x->host_out, n) : get_stream(&x->buffers, n);
    if (s && !host)
        let_go_of_read_bytes(x, s);
    if (!s || !stream_append(s, p->log->data + sd->data_offset, sd->bytes)) {
        fault(r, p, ISA_EXC_EXCHANGE, sd->pc, "xsend: the simulator is out of host memory");
        return;
    }
    if (!host)
        x->stream_used_bytes += sd->bytes;
    uint64_t n_cycles = cycles_for(x, sd->bytes);
    uint64_t depart = depart_on_bus(x, p->tile, sd, n_cycles);
    uint64_t hz = x->chip_hz[chip];
    uint64_t *free_ps = host ? &x->host_free_ps[chip * 2] : &x->stream_free_ps[chip * 2];
    uint64_t bps = host ? x->p.host_bytes_per_s : x->p.stream_bytes_per_s;
    uint64_t latency = host ? x->p.host_latency_ps : x->p.stream_latency_ps;
    uint64_t begin = simtime_max(simtime_cycles_to_ps(depart, hz), *free_ps);
    uint64_t dur = simtime_transfer_ps(sd->bytes, bps);
    *free_ps = simtime_add(begin, dur);
    uint64_t done = simtime_add(simtime_max(simtime_add(begin, dur), simtime_cycles_to_ps(depart + n_cycles, hz)),
                                latency);
    xch_chip_stats *cs = &x->chip_stats[chip];
    if (host) {
        cs->host_bytes += sd->bytes;
        cs->host_ps += dur;
    } else {
        cs->stream_bytes += sd->bytes;
        cs->stream_ps += dur;
    }
    add_span(x, chip, p->tile, n, host ? XCH_SPAN_HOST_OUT : XCH_SPAN_STREAM_WRITE, sd->bytes, begin, dur, done);
    note_send_done(x, p, done);
}

/* Says on the first party that the simulator ran out of host memory. */
static void out_of_host_memory(resolver *r)
{
    if (r->n)
        fault(r, &r->parties[0], ISA_EXC_EXCHANGE, 0, "exchange: the simulator is out of host memory");
}

/* Clears every party's results, maps its tile to it, and counts the sends
 * and the requests the fabric will serve (every send and every host /
 * streaming-memory read). */
static void prepare_parties(resolver *r, size_t *n_sends, size_t *n_requests)
{
    xch_system *x = r->x;
    uint32_t system_tiles = x->p.chips * x->p.tiles_per_chip;
    *n_sends = *n_requests = 0;
    for (size_t i = 0; i < r->n; i++) {
        xch_party *p = &r->parties[i];
        p->recv_done_cycle = p->send_done_cycle = 0;
        p->faulted = false;
        x->party_of[p->tile] = (int32_t)i;
        *n_sends += p->log->n_sends;
        *n_requests += p->log->n_sends;
        for (size_t k = 0; k < p->log->n_recvs; k++) {
            enum xch_endpoint_kind kind = xch_endpoint_kind(p->log->recvs[k].endpoint, system_tiles);
            *n_requests += kind == XCH_EP_HOST || kind == XCH_EP_STREAM;
        }
    }
}

/* Lists every send and host / streaming-memory read in the order the
 * fabric serves them, (start, tile, issue cycle); returns how many. */
static size_t order_requests(const resolver *r, const size_t *send_base, request *req)
{
    const xch_system *x = r->x;
    uint32_t system_tiles = x->p.chips * x->p.tiles_per_chip;
    size_t nr = 0;
    for (size_t i = 0; i < r->n; i++) {
        const xch_party *p = &r->parties[i];
        const xch_log *l = p->log;
        uint64_t hz = x->chip_hz[chip_of(x, p->tile)];
        for (size_t j = 0; j < l->n_sends; j++)
            req[nr++] = (request){ .start_ps = simtime_cycles_to_ps(l->sends[j].start_cycle, hz),
                                   .tile = p->tile, .issue_cycle = l->sends[j].issue_cycle,
                                   .party = (uint32_t)i, .index = (uint32_t)j, .send = (uint32_t)(send_base[i] + j) };
        for (size_t k = 0; k < l->n_recvs; k++) {
            enum xch_endpoint_kind kind = xch_endpoint_kind(l->recvs[k].endpoint, system_tiles);
            if (kind == XCH_EP_HOST || kind == XCH_EP_STREAM)
                req[nr++] = (request){ .start_ps = simtime_cycles_to_ps(l->recvs[k].start_cycle, hz),
                                       .tile = p->tile, .issue_cycle = l->recvs[k].issue_cycle,
                                       .party = (uint32_t)i, .index = (uint32_t)k, .recv = true };
        }
    }
    if (nr)
        qsort(req, nr, sizeof *req, cmp_request);
    return nr;
}

/* The deliveries grouped by send: those of send s are
 * dv[order[first[s]]] .. dv[order[first[s + 1] - 1]], in receiver order. */
typedef struct deliveries_by_send {
    size_t *first;
    uint32_t *order;
} deliveries_by_send;

/* Groups the deliveries by send, for the link transfers; false (and a
 * fault) when out of host memory. */
static bool group_by_send(resolver *r, const delivery *dv, size_t n_dv, size_t n_sends, deliveries_by_send *by)
{
    by->first = calloc(n_sends + 2, sizeof *by->first);
    by->order = malloc((n_dv + 1) * sizeof *by->order);
    size_t *fill = calloc(n_sends + 1, sizeof *fill);
    if (!by->first || !by->order || !fill) {
        free(by->first);
        free(by->order);
        free(fill);
        out_of_host_memory(r);
        return false;
    }
    for (size_t d = 0; d < n_dv; d++)
        by->first[dv[d].send + 1]++;
    for (size_t s = 0; s < n_sends; s++)
        by->first[s + 1] += by->first[s];
    for (size_t d = 0; d < n_dv; d++)
        by->order[by->first[dv[d].send] + fill[dv[d].send]++] = (uint32_t)d;
    free(fill);
    return true;
}

/* Timing off the chip (exchange.h): a send crosses the IPU-Links from the
 * sending tile's chip to chip `rchip` once, whatever the number of its
 * receivers there, paced by the links and by the sender's bus (departing
 * depart_ps, its last byte leaving at depart_end_ps).  Returns when the
 * last byte lands, in picoseconds. */
static uint64_t cross_links(xch_system *x, uint32_t tile, uint32_t rchip, const xch_transfer *sd, uint64_t depart_ps,
                            uint64_t depart_end_ps)
{
    uint32_t chip = chip_of(x, tile);
    uint64_t *link = &x->link_free_ps[(size_t)chip * x->p.chips + rchip];
    uint64_t begin = simtime_max(depart_ps, *link);
    uint64_t dur = simtime_transfer_ps(sd->bytes, x->p.link_bytes_per_s);
    *link = simtime_add(begin, dur);
    uint64_t landed = simtime_add(simtime_max(simtime_add(begin, dur), depart_end_ps),
                                  (uint64_t)xch_chip_hops(&x->p, chip, rchip) * x->p.link_hop_ps);
    x->chip_stats[chip].link_bytes += sd->bytes;
    x->chip_stats[chip].link_ps += dur;
    add_span(x, chip, tile, rchip, XCH_SPAN_LINK, sd->bytes, begin, dur, landed);
    return landed;
}

/* A send to tiles: it leaves on the sender's bus and arrives at each of its
 * n_order deliveries (dv[order[0]], ...) after the on-chip latency or
 * across the IPU-Links (exchange.h, timing on and off the chip). */
static void serve_tile_send(xch_system *x, xch_party *p, const xch_transfer *sd, send_info *si, delivery *dv,
                            const uint32_t *order, size_t n_order)
{
    uint32_t chip = chip_of(x, p->tile);
    si->n_cycles = cycles_for(x, sd->bytes);
    si->depart = depart_on_bus(x, p->tile, sd, si->n_cycles);
    x->chip_stats[chip].exchange_bytes += sd->bytes;
    uint64_t hz = x->chip_hz[chip];
    uint64_t depart_ps = simtime_cycles_to_ps(si->depart, hz);
    uint64_t depart_end_ps = simtime_cycles_to_ps(si->depart + si->n_cycles, hz);
    /* One link transfer per receiving chip (deliveries are in receiver
     * order, so a chip's receivers are together). */
    uint32_t last_chip = UINT32_MAX;
    uint64_t last_arrive = 0;
    for (size_t k = 0; k < n_order; k++) {
        delivery *d = &dv[order[k]];
        if (!d->off_chip) {
            d->arrive = si->depart + xch_latency_cycles(&x->p, p->tile % x->p.tiles_per_chip,
                                                        d->r_tile % x->p.tiles_per_chip);
            continue;
        }
        uint32_t rchip = chip_of(x, d->r_tile);
        if (rchip != last_chip) {
            last_arrive = cross_links(x, p->tile, rchip, sd, depart_ps, depart_end_ps);
            last_chip = rchip;
        }
        /* The stream enters the receiver's port over its last n
         * cycles before the last byte lands (the sender's bus paces it
         * at the port's rate): arrive is when it can start. */
        uint64_t last = simtime_ps_to_cycle_ceil(last_arrive, x->chip_hz[rchip]);
        d->arrive = last > si->n_cycles ? last - si->n_cycles : 0;
    }
}

/* Step 2: the fabric serves sends and host / streaming-memory reads in
 * order of (start, tile, issue cycle), until the first fault. */
static void serve_requests(resolver *r, const request *req, size_t nr, send_info *sends, delivery *dv,
                           const deliveries_by_send *by)
{
    xch_system *x = r->x;
    uint32_t system_tiles = x->p.chips * x->p.tiles_per_chip;
    for (size_t q = 0; q < nr && !r->faulted; q++) {
        xch_party *p = &r->parties[req[q].party];
        if (req[q].recv) {
            const xch_transfer *rv = &p->log->recvs[req[q].index];
            serve_read(r, p, rv, xch_endpoint_kind(rv->endpoint, system_tiles) == XCH_EP_HOST);
            continue;
        }
        const xch_transfer *sd = &p->log->sends[req[q].index];
        enum xch_endpoint_kind kind = xch_endpoint_kind(sd->endpoint, system_tiles);
        if (kind == XCH_EP_HOST || kind == XCH_EP_STREAM) {
            serve_write(r, p, sd, kind == XCH_EP_HOST);
            continue;
        }
        uint32_t s = req[q].send;
        serve_tile_send(x, p, sd, &sends[s], dv, by->order + by->first[s], by->first[s + 1] - by->first[s]);
    }
}

/* One delivery taken: its stream through the port that is free first of
 * ports[0 .. n_ports) (the receiver's, or a supertile's two for a common
 * stream) into the memory of each of the n receivers dv[0 .. n). */
static void take_stream(resolver *r, const send_info *si, const delivery *const *dv, size_t n, uint64_t **ports,
                        size_t n_ports)
{
    xch_system *x = r->x;
    xch_party *sp = &r->parties[si->party];
    const xch_transfer *sd = &sp->log->sends[si->index];
    uint64_t ready = 0;
    for (size_t i = 0; i < n; i++)
        ready = simtime_max(ready, simtime_max(dv[i]->arrive, r->parties[dv[i]->r_party].log->recvs[dv[i]->r_index].start_cycle));
    uint64_t *port = ports[0];
    for (size_t i = 1; i < n_ports; i++)
        if (*ports[i] < *port)
            port = ports[i];
    uint64_t begin = simtime_max(ready, *port);
    uint64_t done = begin + si->n_cycles;
    *port = done;
    for (size_t i = 0; i < n; i++) {
        xch_party *rp = &r->parties[dv[i]->r_party];
        const xch_transfer *rv = &rp->log->recvs[dv[i]->r_index];
        uint32_t rchip = chip_of(x, rp->tile);
        x->chip_stats[rchip].receive_conflict_cycles += begin - ready;
        if (rv->start_cycle > dv[i]->arrive)
            x->chip_stats[rchip].late_receives++;
        x->chip_stats[chip_of(x, sp->tile)].exchange_transfers++;
        note_recv_done(rp, done);
        note_send_done(x, sp, simtime_cycles_to_ps(done, x->chip_hz[rchip]));
        tmem_write_bytes(rp->mem, rv->addr, sp->log->data + sd->data_offset, sd->bytes);
    }
}

/* Step 3: receivers take their streams in order of arrival, one at a time
 * through their exchange port (a stream common to a supertile through
 * either of its two: exchange.h), and the data land in their memory. */
static void take_streams(resolver *r, const send_info *sends, delivery *dv, size_t n_dv)
{
    xch_system *x = r->x;
    if (n_dv)
        qsort(dv, n_dv, sizeof *dv, cmp_delivery);
    for (size_t k = 0; k < n_dv; k++) {
        const delivery *d[2] = { &dv[k], k + 1 < n_dv ? &dv[k + 1] : NULL };
        const uint32_t tile = d[0]->r_tile;
        /* On-chip and off-chip streams alike enter through the receiver's
         * exchange port (exchange.h). */
        uint64_t *ports[2] = { &x->port_free[tile], NULL };
        bool common = x->p.supertile_receive && d[1] && d[1]->send == d[0]->send && d[1]->r_tile == (tile ^ 1u) &&
                      chip_of(x, tile) == chip_of(x, tile ^ 1u);
        if (common) {
            ports[1] = &x->port_free[tile ^ 1u];
            take_stream(r, &sends[d[0]->send], d, 2, ports, 2);
            k++;
            continue;
        }
        take_stream(r, &sends[d[0]->send], d, 1, ports, 1);
    }
}

bool xch_resolve(xch_system *x, xch_party *parties, size_t n, int32_t group_chip)
{
    resolver r = { .x = x, .parties = parties, .n = n, .group_chip = group_chip };
    size_t n_sends, n_requests;
    prepare_parties(&r, &n_sends, &n_requests);
    size_t *send_base = malloc((n + 1) * sizeof *send_base);
    send_info *sends = calloc(n_sends + 1, sizeof *sends);
    request *req = malloc((n_requests + 1) * sizeof *req);
    delivery *dv = NULL;
    size_t n_dv = 0;
    bool ok = send_base && sends && req;
    if (ok) {
        size_t s = 0;
        for (size_t i = 0; i < n; i++) {
            send_base[i] = s;
            for (size_t j = 0; j < parties[i].log->n_sends; j++, s++)
                sends[s] = (send_info){ .party = (uint32_t)i, .index = (uint32_t)j };
        }
        ok = match(&r, sends, send_base, &dv, &n_dv);
    }
    if (!ok)
        out_of_host_memory(&r);
    deliveries_by_send by;
    if (ok && !r.faulted && group_by_send(&r, dv, n_dv, n_sends, &by)) {
        serve_requests(&r, req, order_requests(&r, send_base, req), sends, dv, &by);
        free(by.first);
        free(by.order);
        if (!r.faulted)
            take_streams(&r, sends, dv, n_dv);
    }
    for (size_t i = 0; i < n; i++) {
        x->party_of[parties[i].tile] = -1;
        xch_log_clear(parties[i].log);
    }
    free(send_base);
    free(sends);
    free(req);
    free(dv);
    return !r.faulted;
}
