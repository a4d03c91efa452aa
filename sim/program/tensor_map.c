/*
 * tensor_map.c — encoding and checking the tensor map blob (tensor_map.h).
 */
#include "tensor_map.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/elf/executable.h"

tensor_map *tmap_new(void)
{
    return calloc(1, sizeof(tensor_map));
}

void tmap_free(tensor_map *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_tensors; i++) {
        free(m->tensors[i].name);
        free(m->tensors[i].pieces);
    }
    free(m->tensors);
    free(m);
}

tmap_tensor *tmap_add_tensor(tensor_map *m, const char *name, uint32_t dtype, uint32_t element_bytes,
                             uint32_t rank, const uint64_t *dims, uint32_t role)
{
    if (rank > TMAP_MAX_RANK)
        return NULL;
    if (m->n_tensors == m->cap_tensors) {
        size_t cap = m->cap_tensors ? m->cap_tensors * 2 : 16;
        tmap_tensor *p = realloc(m->tensors, cap * sizeof *p);
        if (!p)
            return NULL;
        m->tensors = p;
        m->cap_tensors = cap;
    }
    tmap_tensor *t = &m->tensors[m->n_tensors];
    memset(t, 0, sizeof *t);
    t->name = strdup(name);
    if (!t->name)
        return NULL;
    t->dtype = dtype;
    t->element_bytes = element_bytes;
    t->rank = rank;
    for (uint32_t i = 0; i < rank; i++) {
        t->dims[i] = dims[i];
        t->perm[i] = i;
    }
    t->role = role;
    m->n_tensors++;
    return t;
}

bool tmap_add_piece(tmap_tensor *t, uint32_t tile, uint32_t addr, uint64_t first, uint64_t count, uint32_t stream)
{
    if (t->n_pieces == t->cap_pieces) {
        size_t cap = t->cap_pieces ? t->cap_pieces * 2 : 8;
        tmap_piece *p = realloc(t->pieces, cap * sizeof *p);
        if (!p)
            return false;
        t->pieces = p;
        t->cap_pieces = cap;
    }
    t->pieces[t->n_pieces++] = (tmap_piece){ tile, addr, first, count, stream };
    return true;
}

uint64_t tmap_elements(const tmap_tensor *t)
{
    uint64_t n = 1;
    for (uint32_t i = 0; i < t->rank; i++)
        n *= t->dims[i];
    return n;
}

bool tmap_is_identity(const tmap_tensor *t)
{
    for (uint32_t d = 0; d < t->rank; d++)
        if (t->perm[d] != d)
            return false;
    return true;
}

void tmap_permute(const tmap_tensor *t, const void *src, void *dst, bool to_stored)
{
    uint64_t n = tmap_elements(t);
    uint32_t eb = t->element_bytes, r = t->rank;
    uint64_t stride[TMAP_MAX_RANK], sdims[TMAP_MAX_RANK], idx[TMAP_MAX_RANK] = { 0 };
    /* stride of the tensor's axes in its row-major order */
    uint64_t acc = 1;
    for (uint32_t d = r; d-- > 0;) {
        stride[d] = acc;
        acc *= t->dims[d];
    }
    for (uint32_t d = 0; d < r; d++)
        sdims[d] = t->dims[t->perm[d]];
    for (uint64_t e = 0; e < n; e++) {
        uint64_t logical = 0;
        for (uint32_t d = 0; d < r; d++)
            logical += idx[d] * stride[t->perm[d]];
        if (to_stored)
            memcpy((uint8_t *)dst + e * eb, (const uint8_t *)src + logical * eb, eb);
        else
            memcpy((uint8_t *)dst + logical * eb, (const uint8_t *)src + e * eb, eb);
        for (uint32_t d = r; d-- > 0;) {
            if (++idx[d] < sdims[d])
                break;
            idx[d] = 0;
        }
    }
}

const tmap_tensor *tmap_find(const tensor_map *m, const char *name)
{
    for (size_t i = 0; i < m->n_tensors; i++)
        if (strcmp(m->tensors[i].name, name) == 0)
            return &m->tensors[i];
    return NULL;
}

const char *tmap_dtype_name(uint32_t dtype)
{
    switch (dtype) {
    case 1: return "f32";
    case 10: return "f16";
    case 6: return "i32";
    case 7: return "i64";
    case 9: return "bool";
    case 2: return "u8";
    case 3: return "i8";
    default: return "other";
    }
}

/* ---- encoding ---------------------------------------------------------- */

typedef struct wbuf { uint8_t *p; size_t n, cap; bool oom; } wbuf;

static void put(wbuf *b, const void *v, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 1024;
        while (cap < b->n + n)
            cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, v, n);
    b->n += n;
}

static void put32(wbuf *b, uint32_t v) { put(b, &v, 4); }
static void put64(wbuf *b, uint64_t v) { put(b, &v, 8); }

bool tmap_encode(const tensor_map *m, uint8_t **bytes, size_t *size)
{
    wbuf b = { 0 };
    put(&b, "IPTM", 4);
    put32(&b, m->replicas > 1 ? 4 : 3);
    put32(&b, (uint32_t)m->n_tensors);
    for (size_t i = 0; i < m->n_tensors; i++) {
        const tmap_tensor *t = &m->tensors[i];
        uint32_t len = (uint32_t)strlen(t->name);
        put32(&b, len);
        put(&b, t->name, len);
        static const uint8_t zeros[4];
        put(&b, zeros, (4 - len % 4) % 4);
        put32(&b, t->dtype);
        put32(&b, t->element_bytes);
        put32(&b, t->rank);
        for (uint32_t d = 0; d < t->rank; d++)
            put64(&b, t->dims[d]);
        for (uint32_t d = 0; d < t->rank; d++)
            put32(&b, t->perm[d]);
        put32(&b, t->role);
        put64(&b, t->value_limit);
        put32(&b, (uint32_t)t->n_pieces);
        for (size_t k = 0; k < t->n_pieces; k++) {
            const tmap_piece *pc = &t->pieces[k];
            put32(&b, pc->tile);
            put32(&b, pc->addr);
            put64(&b, pc->first);
            put64(&b, pc->count);
            put32(&b, pc->stream);
        }
    }
    if (m->replicas > 1) {
        put32(&b, m->replicas);
        put32(&b, m->tile_stride);
        put32(&b, m->input_streams);
        put32(&b, m->output_streams);
    }
    if (b.oom) {
        free(b.p);
        return false;
    }
    *bytes = b.p;
    *size = b.n;
    return true;
}

/* ---- decoding ---------------------------------------------------------- */

typedef struct rbuf { const uint8_t *p; size_t n, at; bool short_read; } rbuf;

static bool get(rbuf *r, void *v, size_t n)
{
    if (r->short_read || n > r->n - r->at) {
        r->short_read = true;
        return false;
    }
    memcpy(v, r->p + r->at, n);
    r->at += n;
    return true;
}

static uint32_t get32(rbuf *r) { uint32_t v = 0; get(r, &v, 4); return v; }
static uint64_t get64(rbuf *r) { uint64_t v = 0; get(r, &v, 8); return v; }

#define FAIL(...) do { snprintf(err, err_size, __VA_ARGS__); goto fail; } while (0)

/* Replicas 1 .. of the tensors decoded (replica 0's), after them in
 * replica order, as the compiler numbers their host streams. */
static bool replicate(tensor_map *m, rbuf *r, const char *source, char *err, size_t err_size)
{
    uint32_t n = get32(r), stride = get32(r), in = get32(r), out = get32(r);
    if (r->short_read) {
        snprintf(err, err_size, "%s: tensor map: the replicas are cut short", source);
        return false;
    }
    for (size_t i = 0; i < m->n_tensors; i++)
        for (size_t k = 0; k < m->tensors[i].n_pieces; k++)
            if (m->tensors[i].pieces[k].tile >= stride) {
                snprintf(err, err_size, "%s: tensor map: tensor '%s' has a piece on tile %u, past replica 0's %u "
                         "tiles", source, m->tensors[i].name, m->tensors[i].pieces[k].tile, stride);
                return false;
            }
    if (n < 2 || n > EXE_REPLICAS_MAX || (uint64_t)n * stride >= UINT32_MAX) {
        snprintf(err, err_size, "%s: tensor map: %u replicas of %u tiles", source, n, stride);
        return false;
    }
    size_t n0 = m->n_tensors;
    for (uint32_t rep = 1; rep < n; rep++)
        for (size_t i = 0; i < n0; i++) {
            const tmap_tensor t0 = m->tensors[i];     /* a copy: adding may move the array */
            char *name = malloc(strlen(t0.name) + 24);
            if (!name) {
                snprintf(err, err_size, "%s: tensor map: out of host memory", source);
                return false;
            }
            sprintf(name, "replica%u/%s", rep, t0.name);
            tmap_tensor *t = tmap_add_tensor(m, name, t0.dtype, t0.element_bytes, t0.rank, t0.dims, t0.role);
            free(name);
            if (!t) {
                snprintf(err, err_size, "%s: tensor map: out of host memory", source);
                return false;
            }
            memcpy(t->perm, t0.perm, sizeof t->perm);
            t->value_limit = t0.value_limit;
            /* a variable in streaming memory: its buffers are its tiles' */
            uint64_t streams = (uint64_t)rep * ((t0.role & TMAP_STREAMING) ? stride
                                                : (t0.role & TMAP_INPUT)   ? in
                                                                           : out);
            for (size_t k = 0; k < t0.n_pieces; k++) {
                const tmap_piece *p = &t0.pieces[k];
                uint64_t stream = p->stream == TMAP_NO_STREAM ? TMAP_NO_STREAM : p->stream + streams;
                if (stream > TMAP_NO_STREAM ||
                    !tmap_add_piece(t, p->tile + rep * stride, p->addr, p->first, p->count, (uint32_t)stream)) {
                    snprintf(err, err_size, "%s: tensor map: tensor '%s' of replica %u: %s", source, t0.name, rep,
                             stream > TMAP_NO_STREAM ? "its host streams overflow" : "out of host memory");
                    return false;
                }
            }
        }
    return true;
}

tensor_map *tmap_decode(const uint8_t *bytes, size_t size, const char *source, char *err, size_t err_size)
{
    rbuf r = { bytes, size, 0, false };
    tensor_map *m = tmap_new();
    char *name = NULL;
    if (!m) {
        snprintf(err, err_size, "%s: tensor map: out of host memory", source);
        return NULL;
    }
    char magic[4] = { 0 };
    get(&r, magic, 4);
    uint32_t version = get32(&r);
    uint32_t n = get32(&r);
    if (r.short_read || memcmp(magic, "IPTM", 4) != 0)
        FAIL("%s: tensor map: not a tensor map (bad magic)", source);
    if (version < 2 || version > 4)
        FAIL("%s: tensor map: version %u, this ipusim reads versions 2 to 4", source, version);
    if (n > size / 16)
        FAIL("%s: tensor map: %u tensors cannot fit in %zu bytes", source, n, size);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t len = get32(&r);
        if (r.short_read || len == 0 || len > 4096 || len > r.n - r.at)
            FAIL("%s: tensor map: tensor %u: bad name length %u", source, i, len);
        name = malloc(len + 1);
        if (!name)
            FAIL("%s: tensor map: out of host memory", source);
        get(&r, name, len);
        name[len] = 0;
        if (strlen(name) != len)
            FAIL("%s: tensor map: tensor %u: name holds a NUL byte", source, i);
        r.at += (4 - len % 4) % 4;
        if (r.at > r.n)
            r.short_read = true;
        uint32_t dtype = get32(&r), eb = get32(&r), rank = get32(&r);
        if (r.short_read)
            FAIL("%s: tensor map: tensor '%s' is cut short", source, name);
        if (rank > TMAP_MAX_RANK)
            FAIL("%s: tensor map: tensor '%s' has rank %u (at most %d)", source, name, rank, TMAP_MAX_RANK);
        if (eb == 0 || eb > 8)
            FAIL("%s: tensor map: tensor '%s' has %u-byte elements", source, name, eb);
        uint64_t dims[TMAP_MAX_RANK] = { 0 };
        uint64_t elements = 1;
        for (uint32_t d = 0; d < rank; d++) {
            dims[d] = get64(&r);
            if (dims[d] > ((uint64_t)1 << 32) || (dims[d] && elements > ((uint64_t)1 << 32) / dims[d]))
                FAIL("%s: tensor map: tensor '%s' is too large", source, name);
            elements *= dims[d];
        }
        uint32_t perm[TMAP_MAX_RANK], seen = 0;
        for (uint32_t d = 0; d < rank; d++) {
            perm[d] = get32(&r);
            if (r.short_read)
                FAIL("%s: tensor map: tensor '%s' is cut short", source, name);
            if (perm[d] >= rank || (seen >> perm[d]) & 1)
                FAIL("%s: tensor map: tensor '%s': its axis order is not a permutation", source, name);
            seen |= 1u << perm[d];
        }
        uint32_t role = get32(&r);
        uint64_t value_limit = version >= 3 ? get64(&r) : 0;
        uint32_t np = get32(&r);
        if (r.short_read)
            FAIL("%s: tensor map: tensor '%s' is cut short", source, name);
        if (np > (r.n - r.at) / 28)
            FAIL("%s: tensor map: tensor '%s': %u pieces do not fit in the blob", source, name, np);
        tmap_tensor *t = tmap_add_tensor(m, name, dtype, eb, rank, dims, role);
        if (!t)
            FAIL("%s: tensor map: out of host memory", source);
        for (uint32_t d = 0; d < rank; d++)
            t->perm[d] = perm[d];
        t->value_limit = value_limit;
        uint64_t next = 0, held = 0;
        for (uint32_t k = 0; k < np; k++) {
            uint32_t tile = get32(&r), addr = get32(&r);
            uint64_t first = get64(&r), count = get64(&r);
            uint32_t stream = get32(&r);
            if (r.short_read)
                FAIL("%s: tensor map: tensor '%s' is cut short", source, name);
            if (first < next || count == 0 || first > elements || count > elements - first)
                FAIL("%s: tensor map: tensor '%s': piece %u (elements %llu..%llu) is out of order or "
                     "outside its %llu elements", source, name, k, (unsigned long long)first,
                     (unsigned long long)(first + count), (unsigned long long)elements);
            if (!tmap_add_piece(t, tile, addr, first, count, stream))
                FAIL("%s: tensor map: out of host memory", source);
            next = first + count;
            held += count;
        }
        /* The host feeds and reads inputs and outputs whole: their pieces must
         * hold every element, or a program would be fed for elements that live
         * nowhere (and a map could claim 2^32 of them). */
        if ((role & (TMAP_INPUT | TMAP_OUTPUT)) && held != elements)
            FAIL("%s: tensor map: tensor '%s': its pieces hold %llu of its %llu elements (an input or "
                 "output is held whole)", source, name, (unsigned long long)held, (unsigned long long)elements);
        free(name);
        name = NULL;
    }
    if (version >= 4 && !replicate(m, &r, source, err, err_size))
        goto fail;
    if (r.at != r.n)
        FAIL("%s: tensor map: %zu bytes after the last tensor", source, r.n - r.at);
    return m;
fail:
    free(name);
    tmap_free(m);
    return NULL;
}
