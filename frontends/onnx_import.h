/*
 * onnx_import.h — ONNX models (.onnx, a ModelProto) into the graph IR.
 *
 * What is accepted:
 *   - ai.onnx opsets 11 to 17; the ops of ops.def in the default domain.
 *   - Weights as initializers, in raw_data or the typed fields.  Data kept
 *     in external files is refused with a message naming the initializer.
 *   - Graph inputs whose shapes are static, or whose symbolic dimensions
 *     (dim_param) are bound in the options.
 * What the importer does besides translating: shape and dtype inference
 * for every node, constant folding (which removes the Shape -> Gather ->
 * Unsqueeze -> Concat -> Reshape chains exporters emit, since every shape is
 * static), pruning of nodes no output needs, and a check of the inferred
 * output types against the ones the model declares.
 *
 * Every error is one message "<path>: <what>", naming node and op where
 * there is one: "model.onnx: node 'Conv_12' (Conv): input 'W' is missing".
 * The status tells a model ipusim cannot take (ONNX_UNSUPPORTED: an op,
 * dtype, attribute or opset it lacks) from a broken one (ONNX_INVALID).
 *
 * Models PopART's builder and ONNX loading (popart::Builder, the
 * ModelProto read into the IR with its initializers).  Does not model
 * custom ops, ONNX functions or subgraph attributes (If, Loop, Scan).
 */
#ifndef IPUSIM_FRONTENDS_ONNX_IMPORT_H
#define IPUSIM_FRONTENDS_ONNX_IMPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph.h"
#include "graph_eval.h"

#define ONNX_MIN_OPSET 11
#define ONNX_MAX_OPSET 17

enum onnx_status {
    ONNX_OK = 0,
    ONNX_INVALID,           /* not a valid model: parse failure, missing or
                               mismatched tensors, a cycle, bad attributes */
    ONNX_UNSUPPORTED,       /* valid ONNX that ipusim does not handle */
    ONNX_IO_ERROR,          /* the file could not be read */
};

/* The size of a symbolic input dimension (dim_param). */
typedef struct onnx_dim_binding {
    const char *name;
    int64_t value;
} onnx_dim_binding;

/* A graph input whose value is known when the model is compiled. */
typedef struct onnx_known_input {
    const char *name;
    const graph_value *value;
} onnx_known_input;

typedef struct onnx_import_options {
    const onnx_dim_binding *dims;       /* bindings of symbolic dims */
    size_t n_dims;
    /* Inputs with known values.  Those whose values a shape depends on
     * (through any chain of nodes but Shape and Size, which read only
     * their input's shape) become constants and leave the graph's inputs;
     * the others stay inputs (their values are only used for their shapes). */
    const onnx_known_input *known;
    size_t n_known;
    bool values_override_shapes;        /* a known value whose shape differs from
                                           the declared one wins (as in ONNX's test
                                           runner); otherwise that is an error */
} onnx_import_options;

/* Read and import path.  Returns the graph, or NULL with *status and err
 * set.  opt may be NULL. */
graph *onnx_import_file(const char *path, const onnx_import_options *opt, enum onnx_status *status, char *err,
                        size_t err_size);
/* The same from a buffer; source names it in messages. */
graph *onnx_import_buffer(const char *source, const void *data, size_t size, const onnx_import_options *opt,
                          enum onnx_status *status, char *err, size_t err_size);

/* A serialised TensorProto (the input_N.pb / output_N.pb files of the ONNX
 * backend tests).  *name gets a malloc'd copy of its name ("" if none). */
bool onnx_read_tensor_file(const char *path, char **name, graph_value *v, enum onnx_status *status, char *err,
                           size_t err_size);

/* The names of a model's graph inputs that are not initializers, in model
 * order (what a caller feeds): malloc'd array of malloc'd strings. */
bool onnx_model_input_names(const char *path, char ***names, size_t *count, enum onnx_status *status, char *err,
                            size_t err_size);

/* true when this build has ONNX support (protobuf-c bindings). */
bool onnx_available(void);

#endif
