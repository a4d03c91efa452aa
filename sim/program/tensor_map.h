/*
 * tensor_map.h — the tensor map of a compiled executable (the
 * ".ipusim.tensors" blob, isa/elf/executable.h): for every tensor the compiler
 * kept a name for, its element type, shape, role, and where its elements
 * live — a list of pieces, each a run of consecutive elements (in
 * row-major order) stored at consecutive addresses of one tile.  Inputs and
 * outputs also name the host stream each piece travels on.
 *
 * The simulator, the debugger and the validator use it to feed inputs by
 * name, read outputs and intermediate tensors, and name what they show.
 *
 * Layout.  A tensor may live on the tiles in a permuted order of its
 * axes (e.g. an NCHW image kept channels-last, NHWC, for a convolution):
 * perm[d] is the tensor's axis that is axis d of the stored order, and the
 * pieces' element numbers count in the stored order.  Feeding and reading
 * by name (sim/engine/program_io.h) permutes on the host, as Poplar rearranges
 * data on its host streams.
 *
 * Encoding (little-endian 32-bit words unless said):
 *   "IPTM" version(3) n_tensors
 *   per tensor: name_bytes, the name padded to 4 bytes, dtype (ONNX
 *               TensorProto numbering: 1 f32, 10 f16, 6 i32, ...),
 *               element_bytes, rank, dims (u64 each), perm (rank words),
 *               role, value_limit (u64), n_pieces, then per piece: tile,
 *               addr, first element (u64), elements (u64), stream
 *               (TMAP_NO_STREAM if none)
 *   version 4 only, after the tensors (replica 0's): replicas,
 *               tile_stride, input_streams, output_streams
 * Versions 2 (no value_limit) and 3 (no replicas: every tensor written)
 * are read too.
 * Reading checks every count against the blob's size, the pieces against
 * the tensor's element count (in range, not overlapping; an input's or an
 * output's pieces hold all its elements), and reports the
 * first problem.
 */
#ifndef IPUSIM_SIM_TENSOR_MAP_H
#define IPUSIM_SIM_TENSOR_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TMAP_MAX_RANK 8
#define TMAP_NO_STREAM 0xffffffffu

enum tmap_role {
    TMAP_INPUT = 1,          /* fed by the host, piece by piece on host input streams */
    TMAP_OUTPUT = 2,         /* sent to the host on host output streams */
    TMAP_WEIGHT = 4,         /* constant, loaded with the executable */
    TMAP_ACTIVATION = 8,     /* computed on the IPU, kept in tile memory */
    TMAP_TRANSIENT = 16,     /* its tile memory goes to later tensors after its last
                                reader: it is there only until then */
    TMAP_VARIABLE = 32,      /* a variable (a weight being trained, optimizer state):
                                loaded with the executable, kept for the run, and
                                given its new value at the end of each step */
    TMAP_STREAMING = 64,     /* with TMAP_VARIABLE: kept in streaming memory, zero
                                before the first step, loaded into tile memory for
                                its update and stored back: a piece's stream is the
                                buffer (the global number of the tile that loads
                                it), its addr the piece's byte offset there (the
                                buffer as it is between steps; each piece padded to
                                whole words) */
};

typedef struct tmap_piece {
    uint32_t tile;           /* global tile number */
    uint32_t addr;           /* tile address of the first element */
    uint64_t first;          /* first element, in row-major order */
    uint64_t count;          /* elements */
    uint32_t stream;         /* host stream (input or output), or TMAP_NO_STREAM */
} tmap_piece;

typedef struct tmap_tensor {
    char *name;
    uint32_t dtype;
    uint32_t element_bytes;
    uint32_t rank;
    uint64_t dims[TMAP_MAX_RANK];
    uint32_t perm[TMAP_MAX_RANK]; /* stored axis d is the tensor's axis perm[d] (identity by default) */
    uint32_t role;           /* enum tmap_role bits */
    uint64_t value_limit;    /* an integer input's values lie in [0, value_limit) (token
                                ids, a mask's 0 and 1, labels): what made-up inputs keep
                                to; 0 when not known */
    tmap_piece *pieces;      /* sorted by first element */
    size_t n_pieces, cap_pieces;
} tmap_tensor;

typedef struct tensor_map {
    tmap_tensor *tensors;
    size_t n_tensors, cap_tensors;
    /* A replicated program's map as the compiler builds it: replicas > 1
     * when it holds replica 0's tensors only.  Replica r's copy of a tensor
     * is "replicaR/NAME", on tiles + r x tile_stride, its host streams
     * + r x input_streams (an input's) or output_streams (an output's);
     * decoding makes them, so a decoded map holds every replica (and
     * replicas 0). */
    uint32_t replicas, tile_stride, input_streams, output_streams;
} tensor_map;

tensor_map *tmap_new(void);
void tmap_free(tensor_map *m);

/* Builders; NULL / false only when the host is out of memory. */
tmap_tensor *tmap_add_tensor(tensor_map *m, const char *name, uint32_t dtype, uint32_t element_bytes,
                             uint32_t rank, const uint64_t *dims, uint32_t role);
bool tmap_add_piece(tmap_tensor *t, uint32_t tile, uint32_t addr, uint64_t first, uint64_t count,
                    uint32_t stream);

uint64_t tmap_elements(const tmap_tensor *t);
/* The bytes a piece of `bytes` takes in a TMAP_STREAMING tensor's buffer
 * (and on the way there and back): whole words. */
static inline uint64_t tmap_streaming_bytes(uint64_t bytes) { return (bytes + 3) & ~3ull; }
/* Whether the stored order is the tensor's own (perm is the identity). */
bool tmap_is_identity(const tmap_tensor *t);
/* Reorder between the tensor's row-major order and its stored order
 * (to_stored: logical -> stored, else stored -> logical); dst and src do
 * not overlap. */
void tmap_permute(const tmap_tensor *t, const void *src, void *dst, bool to_stored);
const tmap_tensor *tmap_find(const tensor_map *m, const char *name);
/* "f32", "f16", "i32", ... */
const char *tmap_dtype_name(uint32_t dtype);

/* Encode into a new buffer (*bytes, freed by the caller). */
bool tmap_encode(const tensor_map *m, uint8_t **bytes, size_t *size);
/* Decode; NULL with err ("PROG.elf: tensor map: ...") on a malformed blob. */
tensor_map *tmap_decode(const uint8_t *bytes, size_t size, const char *source, char *err, size_t err_size);

#endif
