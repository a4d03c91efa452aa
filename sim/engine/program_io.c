/*
 * program_io.c — named inputs and outputs of compiled programs.
 */
#include "program_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/fp16.h"
#include "tile.h"

tensor_map *program_tensor_map(const ipu_exe *e, const char *source, char *err, size_t err_size)
{
    if (!e->tensors.size) {
        if (err_size)
            err[0] = 0;
        return NULL;
    }
    return tmap_decode(e->tensors.bytes, e->tensors.size, source, err, err_size);
}

bool program_model_record(const ipu_exe *e, const char *source, model_record *r, char *err, size_t err_size)
{
    memset(r, 0, sizeof *r);
    if (!e->model.size)
        return true;
    char why[512];
    if (model_record_decode(e->model.bytes, e->model.size, r, why, sizeof why))
        return true;
    memset(r, 0, sizeof *r);
    snprintf(err, err_size, "%s: section .ipusim.model: %s", source, why);
    return false;
}

uint64_t program_tensor_bytes(const tmap_tensor *t)
{
    return tmap_elements(t) * t->element_bytes;
}

static void dims_text(const tmap_tensor *t, char *buf, size_t size)
{
    size_t at = (size_t)snprintf(buf, size, "[");
    for (uint32_t d = 0; d < t->rank && at < size; d++)
        at += (size_t)snprintf(buf + at, size - at, "%s%llu", d ? "," : "", (unsigned long long)t->dims[d]);
    if (at < size)
        snprintf(buf + at, size - at, "]");
}

bool program_set_input(engine *g, const tmap_tensor *t, const void *given, size_t size, char *err, size_t err_size)
{
    uint64_t want = program_tensor_bytes(t);
    const void *data = given;
    void *stored = NULL;
    if (size != want) {
        char dims[128];
        dims_text(t, dims, sizeof dims);
        snprintf(err, err_size, "input '%s': %zu bytes given, the tensor %s %s has %llu", t->name, size, dims,
                 tmap_dtype_name(t->dtype), (unsigned long long)want);
        return false;
    }
    if (!tmap_is_identity(t)) {
        /* The host rearranges the data into the order the tiles keep. */
        stored = malloc(want ? want : 1);
        if (!stored) {
            snprintf(err, err_size, "out of host memory");
            return false;
        }
        tmap_permute(t, given, stored, true);
        data = stored;
    }
    for (size_t k = 0; k < t->n_pieces; k++) {
        const tmap_piece *p = &t->pieces[k];
        if (p->stream == TMAP_NO_STREAM) {
            snprintf(err, err_size, "input '%s': piece %zu has no host stream", t->name, k);
            free(stored);
            return false;
        }
        size_t bytes = (size_t)(p->count * t->element_bytes);
        size_t padded = (bytes + 3) & ~(size_t)3;
        uint8_t *buf = calloc(1, padded ? padded : 1);
        if (!buf) {
            snprintf(err, err_size, "out of host memory");
            free(stored);
            return false;
        }
        memcpy(buf, (const uint8_t *)data + p->first * t->element_bytes, bytes);
        bool ok = engine_set_host_input(g, p->stream, buf, padded);
        free(buf);
        if (!ok) {
            snprintf(err, err_size, "out of host memory");
            free(stored);
            return false;
        }
    }
    free(stored);
    return true;
}

void program_random_input(const tmap_tensor *t, uint64_t seed, void *data)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
    uint64_t n = tmap_elements(t);
    uint64_t limit = t->value_limit && t->value_limit <= INT32_MAX ? t->value_limit : 10;
    for (uint64_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        double u = (double)(s >> 11) / 9007199254740992.0 * 2.0 - 1.0;
        switch (t->dtype) {
        case 1: ((float *)data)[i] = (float)u; break;
        case 10: ((f16_t *)data)[i] = fp16_from_f32((float)u); break;
        case 6: ((int32_t *)data)[i] = (int32_t)(s % limit); break;
        case 7: ((int64_t *)data)[i] = (int64_t)(s % limit); break;
        default: memset((uint8_t *)data + i * t->element_bytes, (int)(s & 1), t->element_bytes); break;
        }
    }
}

/* What program_random_input gives a tensor of t's type, for the note
 * (buf: room for the integers' range). */
static const char *random_input_kind(const tmap_tensor *t, char *buf, size_t size)
{
    switch (t->dtype) {
    case 1: return "f32, uniform random values in [-1, 1)";
    case 10: return "f16, uniform random values in [-1, 1)";
    case 6:
    case 7:
        if (t->value_limit && t->value_limit <= INT32_MAX)
            snprintf(buf, size, "%s, random integers 0..%llu (the values it takes)", t->dtype == 6 ? "i32" : "i64",
                     (unsigned long long)t->value_limit - 1);
        else
            snprintf(buf, size, "%s, random integers 0..9", t->dtype == 6 ? "i32" : "i64");
        return buf;
    case 9: return "bool, random 0 or 1";
    default: return "each element's bytes all 0 or all 1 at random";
    }
}

static bool read_streams(const engine *g, const tmap_tensor *t, void *data, char *err, size_t err_size);
static bool read_tiles(const engine *g, const tmap_tensor *t, void *data, char *err, size_t err_size);

static bool read_stored(const engine *g, const tmap_tensor *t, void *data, bool from_streams, char *err,
                        size_t err_size)
{
    return from_streams ? read_streams(g, t, data, err, err_size) : read_tiles(g, t, data, err, err_size);
}

/* Read in the stored order, then put it in the tensor's own order. */
static bool read_permuted(const engine *g, const tmap_tensor *t, void *data, bool from_streams, char *err,
                          size_t err_size)
{
    if (tmap_is_identity(t))
        return read_stored(g, t, data, from_streams, err, err_size);
    uint64_t bytes = program_tensor_bytes(t);
    void *stored = malloc(bytes ? bytes : 1);
    if (!stored) {
        snprintf(err, err_size, "out of host memory");
        return false;
    }
    bool ok = read_stored(g, t, stored, from_streams, err, err_size);
    if (ok)
        tmap_permute(t, stored, data, false);
    free(stored);
    return ok;
}

bool program_read_output(const engine *g, const tmap_tensor *t, void *data, char *err, size_t err_size)
{
    return read_permuted(g, t, data, true, err, err_size);
}

bool program_read_tensor(const engine *g, const tmap_tensor *t, void *data, char *err, size_t err_size)
{
    return read_permuted(g, t, data, false, err, err_size);
}

/* Whether buffer `buf` (size bytes, NULL: none) holds piece k of a
 * variable in streaming memory (false with err when it does not). */
static bool in_buffer(const tmap_tensor *t, size_t k, const uint8_t *buf, size_t size, char *err, size_t err_size)
{
    const tmap_piece *p = &t->pieces[k];
    size_t want = (size_t)(p->count * t->element_bytes);
    if (buf && p->addr <= size && size - p->addr >= want)
        return true;
    snprintf(err, err_size, "tensor '%s': piece %zu (streaming-memory buffer %u, offset %u, %zu bytes) is not in "
             "streaming memory (the buffer holds %zu bytes)", t->name, k, p->stream, p->addr, want, buf ? size : 0);
    return false;
}

/* The pieces, in the stored order, into tile memory. */
static bool write_tiles(engine *g, const tmap_tensor *t, const void *data, char *err, size_t err_size)
{
    for (size_t k = 0; k < t->n_pieces; k++) {
        const tmap_piece *p = &t->pieces[k];
        if (t->role & TMAP_STREAMING) {
            size_t size;
            uint8_t *buf = engine_stream_buffer_mut(g, p->stream, &size);
            if (!in_buffer(t, k, buf, size, err, err_size))
                return false;
            memcpy(buf + p->addr, (const uint8_t *)data + p->first * t->element_bytes,
                   (size_t)(p->count * t->element_bytes));
            continue;
        }
        ipu_tile *tile = engine_tile_mut(g, p->tile);
        size_t want = (size_t)(p->count * t->element_bytes);
        if (!tile || tmem_write_bytes(&tile->s.mem, p->addr, (const uint8_t *)data + p->first * t->element_bytes,
                                      want) != TMEM_OK) {
            snprintf(err, err_size, "tensor '%s': piece %zu (tile %u, 0x%x, %zu bytes) is not in tile memory",
                     t->name, k, p->tile, p->addr, want);
            return false;
        }
    }
    return true;
}

bool program_write_tensor(engine *g, const tmap_tensor *t, const void *data, size_t size, char *err,
                          size_t err_size)
{
    uint64_t bytes = program_tensor_bytes(t);
    if (size != bytes) {
        snprintf(err, err_size, "tensor '%s': %zu bytes given, it has %llu", t->name, size,
                 (unsigned long long)bytes);
        return false;
    }
    if (tmap_is_identity(t))
        return write_tiles(g, t, data, err, err_size);
    /* Put it in the order the tiles keep (the inverse of read_permuted). */
    void *stored = malloc(bytes ? bytes : 1);
    if (!stored) {
        snprintf(err, err_size, "out of host memory");
        return false;
    }
    tmap_permute(t, data, stored, true);
    bool ok = write_tiles(g, t, stored, err, err_size);
    free(stored);
    return ok;
}

/* The pieces, in the stored order, from the host output streams. */
static bool read_streams(const engine *g, const tmap_tensor *t, void *data, char *err, size_t err_size)
{
    for (size_t k = 0; k < t->n_pieces; k++) {
        const tmap_piece *p = &t->pieces[k];
        size_t size = 0;
        const uint8_t *bytes = p->stream == TMAP_NO_STREAM ? NULL : engine_host_output(g, p->stream, &size);
        size_t want = (size_t)(p->count * t->element_bytes);
        if (!bytes || size < want) {
            snprintf(err, err_size, "output '%s': host stream %u brought %zu bytes, piece %zu has %zu", t->name,
                     p->stream, bytes ? size : 0, k, want);
            return false;
        }
        memcpy((uint8_t *)data + p->first * t->element_bytes, bytes, want);
    }
    return true;
}

/* The pieces, in the stored order, from tile memory. */
static bool read_tiles(const engine *g, const tmap_tensor *t, void *data, char *err, size_t err_size)
{
    for (size_t k = 0; k < t->n_pieces; k++) {
        const tmap_piece *p = &t->pieces[k];
        if (t->role & TMAP_STREAMING) {
            size_t size;
            const uint8_t *buf = engine_stream_buffer(g, p->stream, &size);
            if (!in_buffer(t, k, buf, size, err, err_size))
                return false;
            memcpy((uint8_t *)data + p->first * t->element_bytes, buf + p->addr, (size_t)(p->count * t->element_bytes));
            continue;
        }
        const ipu_tile *tile = engine_tile(g, p->tile);
        size_t want = (size_t)(p->count * t->element_bytes);
        if (!tile || tmem_read_bytes(&tile->s.mem, p->addr, (uint8_t *)data + p->first * t->element_bytes, want) !=
                         TMEM_OK) {
            snprintf(err, err_size, "tensor '%s': piece %zu (tile %u, 0x%x, %zu bytes) is not in tile memory",
                     t->name, k, p->tile, p->addr, want);
            return false;
        }
    }
    return true;
}

bool program_fill_inputs(engine *g, const tensor_map *m, const char *const *given, size_t n_given, FILE *note,
                         const char *prefix, char *err, size_t err_size)
{
    size_t filled = 0;
    for (size_t i = 0; i < m->n_tensors; i++) {
        const tmap_tensor *t = &m->tensors[i];
        if (!(t->role & TMAP_INPUT))
            continue;
        bool found = false;
        for (size_t k = 0; k < n_given && !found; k++)
            found = given[k] && !strcmp(given[k], t->name);
        if (found)
            continue;
        uint64_t bytes = program_tensor_bytes(t);
        void *data = malloc(bytes ? bytes : 1);
        if (!data) {
            snprintf(err, err_size, "out of host memory for input '%s'", t->name);
            return false;
        }
        program_random_input(t, 1 + i, data);
        bool ok = program_set_input(g, t, data, bytes, err, err_size);
        free(data);
        if (!ok)
            return false;
        char kind[96];
        if (note && filled++ < 4)
            fprintf(note, "%sinput '%s' not given (--input %s=FILE): %s\n", prefix, t->name, t->name,
                    random_input_kind(t, kind, sizeof kind));
    }
    if (note && filled > 4)
        fprintf(note, "%s... and %zu more inputs not given: random values (floats uniform in [-1, 1), integers "
                "within the values each takes, else 0..9)\n", prefix, filled - 4);
    return true;
}

bool program_set_up_streaming(engine *g, const tensor_map *m, char *err, size_t err_size)
{
    /* a buffer a tile (its number): its size, the end of its last piece */
    uint32_t top = 0;
    for (size_t i = 0; i < m->n_tensors; i++) {
        const tmap_tensor *t = &m->tensors[i];
        for (size_t k = 0; (t->role & TMAP_STREAMING) && k < t->n_pieces; k++) {
            const tmap_piece *p = &t->pieces[k];
            if (p->stream != p->tile || !engine_tile(g, p->tile)) {
                snprintf(err, err_size, "tensor '%s': piece %zu is in streaming-memory buffer %u, not in the buffer "
                         "of tile %u, a tile with code", t->name, k, p->stream, p->tile);
                return false;
            }
            top = p->tile + 1 > top ? p->tile + 1 : top;
        }
    }
    if (!top)
        return true;
    uint64_t *end = calloc(top, sizeof *end);
    if (!end) {
        snprintf(err, err_size, "out of host memory");
        return false;
    }
    uint64_t most = 0;
    for (size_t i = 0; i < m->n_tensors; i++) {
        const tmap_tensor *t = &m->tensors[i];
        for (size_t k = 0; (t->role & TMAP_STREAMING) && k < t->n_pieces; k++) {
            const tmap_piece *p = &t->pieces[k];
            uint64_t e = p->addr + tmap_streaming_bytes(p->count * t->element_bytes);
            end[p->tile] = e > end[p->tile] ? e : end[p->tile];
            most = end[p->tile] > most ? end[p->tile] : most;
        }
    }
    void *zeros = calloc(1, most ? most : 1);
    bool ok = zeros != NULL;
    if (!ok)
        snprintf(err, err_size, "out of host memory");
    for (uint32_t b = 0; b < top && ok; b++)
        if (end[b])
            ok = engine_set_stream_buffer(g, b, zeros, end[b], err, err_size);
    free(zeros);
    free(end);
    return ok;
}
