/*
 * graph.h — the compiler's graph IR: tensors with static shapes and dtypes,
 * nodes whose op kinds come from the table ops.def, graph inputs and
 * outputs, and the passes every later stage relies on (topological order,
 * shape inference with constant folding, dead-node pruning).
 *
 * What the IR assumes:
 *   - Every shape is static: a dimension is a number known when the graph
 *     is compiled.  Symbolic dimensions of a model's inputs are bound by the
 *     importer (onnx_import.h); a value that decides a shape (Reshape's
 *     target, Slice's bounds, ...) must fold to a constant.
 *   - A constant tensor carries its data, row-major, in its own dtype as
 *     the host stores it (little-endian; f16 and bf16 as their bit
 *     patterns; bool as one byte 0 or 1).
 *   - Tensors and nodes are addressed by index into graph.tensors and
 *     graph.nodes.  Passes that remove nodes mark them and call
 *     graph_compact(), which renumbers; indices held across it are stale.
 *   - After graph_sort() the nodes array is in topological order, and every
 *     pass keeps it so.
 *
 * Errors are returned as false with a message in a caller's buffer,
 * always "<source>: <what>", and about a node "<source>: node 'NAME'
 * (OpType): <what>" (nodes without a name are "node #INDEX").
 *
 * Models PopART's IR (popart::Ir: tensors and ops of one graph, built from
 * the ONNX model, shapes inferred per op).  Does not model PopART's
 * subgraphs, virtual graphs, pipeline stages on ops, or its grad ops and
 * optimizer state: one inference graph, one op table (ops.def).
 */
#ifndef IPUSIM_FRONTENDS_GRAPH_H
#define IPUSIM_FRONTENDS_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define GRAPH_MAX_RANK 8
#define GRAPH_MAX_ELEMENTS ((uint64_t)1 << 32)     /* per tensor */
#define GRAPH_FOLD_MAX_ELEMENTS ((int64_t)1 << 24)  /* larger results of constant
                                                       inputs are computed at run time */

/* Element types; the values are ONNX's TensorProto.DataType numbers. */
typedef enum graph_dtype {
    GDT_UNDEFINED = 0,
    GDT_F32 = 1, GDT_U8 = 2, GDT_I8 = 3, GDT_U16 = 4, GDT_I16 = 5, GDT_I32 = 6, GDT_I64 = 7,
    GDT_STRING = 8, GDT_BOOL = 9, GDT_F16 = 10, GDT_F64 = 11, GDT_U32 = 12, GDT_U64 = 13,
    GDT_C64 = 14, GDT_C128 = 15, GDT_BF16 = 16,
} graph_dtype;

/* "f32", "i64", "bool", ... ("dtype 14" style for those ipusim lacks). */
const char *graph_dtype_name(graph_dtype t);
/* Bytes per element; 0 for a dtype the IR cannot hold (string, complex). */
size_t graph_dtype_size(graph_dtype t);
bool graph_dtype_is_float(graph_dtype t);   /* f16, bf16, f32, f64 */
/* A float type's unit roundoff (2^-24 for f32: half an ulp at 1); 0 for
 * other types. */
double graph_dtype_unit_roundoff(graph_dtype t);
bool graph_dtype_is_int(graph_dtype t);     /* signed and unsigned integers, not bool */

typedef struct graph_shape {
    int rank;                           /* 0 for a scalar */
    int64_t dims[GRAPH_MAX_RANK];
} graph_shape;

int64_t graph_shape_numel(const graph_shape *s);
bool graph_shape_equal(const graph_shape *a, const graph_shape *b);
/* "[2,3,4]" ("[]" for a scalar) into buf; returns buf. */
char *graph_shape_str(const graph_shape *s, char *buf, size_t size);

typedef struct graph_tensor {
    char *name;
    graph_dtype dtype;                  /* GDT_UNDEFINED until inferred */
    graph_shape shape;
    bool shape_known;                   /* set by inference (or the importer) */
    void *data;                         /* a constant's values, else NULL */
    int producer;                       /* index of the node writing it; -1 for
                                           graph inputs and constants */
    bool is_input;                      /* listed in graph.inputs */
    bool is_output;                     /* listed in graph.outputs */
    int64_t value_limit;                /* an integer input's values lie in [0, value_limit)
                                           (a vocabulary, a sequence, a mask's 0 and 1): what
                                           made-up inputs keep to; 0 when not known */
    /* A variable (training): a weight or optimizer state kept in tile
     * memory across steps, loaded with the executable from init (its
     * value before the first step; data stays NULL, so no pass folds it)
     * and, at the end of each step, overwritten with tensor update (-1:
     * never written, e.g. a frozen weight). */
    bool is_variable;
    void *init;
    int update;
    /* A variable kept in streaming memory (optimizer state, as PopART's
     * OffChip location keeps it): zero before the first step, loaded into
     * tile memory before its first reader in a step and stored back once
     * its update is made (lower.c). */
    bool in_streaming_memory;
    /* Optimizer state: the weight variable it belongs to, whose layout on
     * the tiles it takes (as PopLibs creates an optimizer's state as a
     * clone of the weight's tile mapping), else -1. */
    int state_of;
} graph_tensor;

enum graph_attr_type {
    GATTR_INT, GATTR_FLOAT, GATTR_STRING, GATTR_INTS, GATTR_FLOATS, GATTR_TENSOR,
};

typedef struct graph_attr {
    char *name;
    enum graph_attr_type type;
    int64_t i;                          /* GATTR_INT */
    double f;                           /* GATTR_FLOAT (ONNX stores f32) */
    char *s;                            /* GATTR_STRING */
    int64_t *ints;                      /* GATTR_INTS, n of them */
    double *floats;                     /* GATTR_FLOATS, n of them */
    size_t n;
    graph_tensor *tensor;               /* GATTR_TENSOR: a constant, owned */
} graph_attr;

/* The op kinds, from ops.def. */
typedef enum graph_op {
#define OP(id, name, domain, since, min_in, max_in, min_out, max_out, static_in, attrs, infer, eval, \
           layout_class, lowering_rule, grad_rule) \
    GRAPH_OP_##id,
#include "ops.def"
#undef OP
    GRAPH_OP_COUNT
} graph_op;

/* Which part of a training step a node belongs to (autodiff.h). */
enum graph_phase {
    GRAPH_PHASE_FORWARD = 0,            /* and every node of an inference graph */
    GRAPH_PHASE_BACKWARD,
    GRAPH_PHASE_UPDATE,                 /* the optimizer */
    GRAPH_PHASES
};

typedef struct graph_node {
    char *name;                         /* may be "" */
    graph_op op;
    enum graph_phase phase;             /* set from graph.phase when added */
    int n_inputs;
    int *inputs;                        /* tensor indices; -1 for an omitted optional input */
    int n_outputs;
    int *outputs;                       /* tensor indices; -1 for an omitted optional output */
    int n_attrs;
    graph_attr *attrs;
    bool removed;                       /* dropped by a pass; gone after graph_compact() */
    /* A pipelined training step's schedule (train_pipeline.c): the stage
     * (chip of the pipeline) that runs the node, and the pipeline cycle it
     * runs in (-1: outside the cycles, with every stage in step, as the
     * all-reduce and the update run).  -1 and -1 until scheduled. */
    int stage;
    int cycle;
    /* The forward node whose gradient rule made this node (autodiff.c), as
     * a tag every forward node of a training step carries for itself (its
     * place when the backward pass was made); -1: none (a node added
     * later, an inference graph's).  Passes that rewrite a node give the
     * nodes replacing it its tag (graph.origin). */
    int origin;
    /* A forward node made again in the backward pass (pipeline
     * recomputation, train_pipeline.c): it runs in its stage's backward
     * cycle, before the backward nodes that read what it makes. */
    bool recomputed;
    /* A micro-batch's part added into a running sum over the micro-batches
     * (train_pipeline.c): its input 0 (a GatherGrad's input 2) is the sum
     * so far, its output the sum after it, written in place. */
    bool accumulates;
    /* A pipelined step's node made from weights alone (an f16 weight's
     * Cast, a gradient sum's Zeros; train_pipeline.c): once a step, in
     * micro-batch 0's cycle, before the stage's other nodes of that cycle,
     * so that micro-batch 0's passes are the others' node for node. */
    bool weights_only;
} graph_node;

typedef struct graph graph;

/* Shape inference: set dtype and shape of every present output (and, for
 * ops whose outputs follow from input shapes alone, their data). */
typedef bool (*graph_infer_fn)(graph *g, graph_node *n, char *err, size_t err_size);
/* Reference evaluation: in[i] is input i's data (NULL when omitted),
 * out[i] the preallocated buffer of output i (NULL when omitted); shapes
 * and dtypes are the tensors'. */
typedef bool (*graph_eval_fn)(const graph *g, const graph_node *n, const void *const *in,
                              void *const *out, char *err, size_t err_size);

typedef struct graph_op_desc {
    const char *name;                   /* ONNX op_type */
    const char *domain;                 /* "" (ai.onnx) or "ipusim" (fused) */
    int since_opset;
    int min_inputs, max_inputs;
    int min_outputs, max_outputs;
    unsigned static_inputs;             /* bit i: input i must be a constant */
    const char *attrs;                  /* attribute spec, see ops.def */
    graph_infer_fn infer;
    graph_eval_fn eval;
} graph_op_desc;

extern const graph_op_desc graph_ops[GRAPH_OP_COUNT];

/* The op with this ONNX domain ("" or "ai.onnx" for the default) and
 * op_type; GRAPH_OP_COUNT if none. */
graph_op graph_op_lookup(const char *domain, const char *op_type);

struct graph {
    char *source;                       /* where it came from, prefix of every message */
    int opset;                          /* ai.onnx opset the nodes follow */
    graph_tensor *tensors;
    int n_tensors, cap_tensors;
    graph_node *nodes;
    int n_nodes, cap_nodes;
    int *inputs;                        /* graph inputs (tensor indices), in model order */
    int n_inputs;
    int *outputs;                       /* graph outputs (tensor indices), in model order */
    int n_outputs;
    enum graph_phase phase;             /* the phase of the nodes added next: passes
                                           that rewrite a node set it to that node's */
    int origin;                         /* the same for graph_node.origin (-1: none) */
    bool unsupported;                   /* the last error was a feature ipusim lacks,
                                           not a fault in the model */
    uint32_t pipeline_stages;           /* > 0: a training step scheduled for this many
                                           pipeline stages (graph_node.stage, .cycle) ... */
    uint32_t micro_batches;             /* ... of this many micro-batches (1 or more), in ... */
    uint32_t pipeline_cycles;           /* ... this many pipeline cycles */
    int *name_hash;                     /* open addressing, tensor index + 1 (0: empty) */
    int hash_cap;
};

graph *graph_new(const char *source, int opset);
/* A deep copy (tensors keep their indices, nodes theirs). */
graph *graph_clone(const graph *g);
void graph_free(graph *g);

/* A new tensor (dtype and shape unknown until set); -1 if the name is taken. */
int graph_add_tensor(graph *g, const char *name);
/* A tensor name not used yet, built from base ("base", "base_1", ...). */
char *graph_unique_name(const graph *g, const char *base);
int graph_find_tensor(const graph *g, const char *name);
/* Make tensor t a constant with this dtype, shape and data (copied). */
void graph_set_constant(graph *g, int t, graph_dtype dtype, const graph_shape *shape, const void *data);
/* Make constant t a variable (graph_tensor.is_variable): its data
 * becomes its initial value.  update is set later (graph_set_update). */
void graph_make_variable(graph *g, int t);
/* A new variable named from base, initialised with data (copied; NULL:
 * zeros). */
int graph_add_variable(graph *g, const char *base, graph_dtype dtype, const graph_shape *shape,
                       const void *init);
/* At the end of a step, variable v takes the value of tensor t (same
 * dtype and shape). */
void graph_set_update(graph *g, int v, int t);
/* Whether tensor t is some variable's update. */
bool graph_is_update(const graph *g, int t);
/* A new constant tensor named from base; returns its index. */
int graph_add_constant(graph *g, const char *base, graph_dtype dtype, const graph_shape *shape,
                       const void *data);
void graph_add_input(graph *g, int t);
void graph_add_output(graph *g, int t);

/* A new node; inputs/outputs are copied (-1 for omitted ones).  Returns
 * its index; the producer of each output is set. */
int graph_add_node(graph *g, graph_op op, const char *name, const int *inputs, int n_inputs,
                   const int *outputs, int n_outputs);

/* Turn node k into a new node in the same place in the order (attributes
 * kept, producers of the new outputs set).  Passes use it to put a
 * fused node where the first node of the pattern was. */
void graph_replace_node(graph *g, int k, graph_op op, const char *name, const int *inputs, int n_inputs,
                        const int *outputs, int n_outputs);

/* Attributes of a node.  The setters replace an attribute of that name. */
void graph_set_attr_int(graph_node *n, const char *name, int64_t v);
void graph_set_attr_float(graph_node *n, const char *name, double v);
void graph_set_attr_string(graph_node *n, const char *name, const char *v);
void graph_set_attr_ints(graph_node *n, const char *name, const int64_t *v, size_t count);
void graph_set_attr_floats(graph_node *n, const char *name, const double *v, size_t count);
/* Takes ownership of t. */
void graph_set_attr_tensor(graph_node *n, const char *name, graph_tensor *t);
void graph_copy_attrs(graph_node *dst, const graph_node *src);
void graph_clear_attrs(graph_node *n);
const graph_attr *graph_attr_find(const graph_node *n, const char *name);
/* The value, or the default from the op's spec (panic if the spec has
 * none: the caller must check graph_attr_find first for optional ones). */
int64_t graph_attr_int(const graph_node *n, const char *name);
double graph_attr_float(const graph_node *n, const char *name);
const char *graph_attr_string(const graph_node *n, const char *name);
/* Number of values (0 when absent); *v points at them. */
size_t graph_attr_ints(const graph_node *n, const char *name, const int64_t **v);

/* Check a node's attributes against its op's spec: every attribute known
 * and of its type, every required one present.  For the importer. */
bool graph_check_attrs(graph *g, const graph_node *n, char *err, size_t err_size);

/* "node 'NAME' (Op)" or "node #3 (Op)" into buf. */
const char *graph_node_label(const graph *g, const graph_node *n, char *buf, size_t size);
/* err = "<source>: node 'NAME' (Op): <message>"; returns false. */
bool graph_node_error(const graph *g, const graph_node *n, char *err, size_t err_size,
                      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* The same for a feature ipusim lacks (an op form, dtype or attribute
 * value): also sets g->unsupported. */
bool graph_node_unsupported(graph *g, const graph_node *n, char *err, size_t err_size,
                            const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Put the nodes in topological order (stable: a sorted graph stays as it
 * is).  A cycle is an error naming one node on it. */
bool graph_sort(graph *g, char *err, size_t err_size);

/* Infer every node's outputs in order; with fold, a node whose inputs are
 * all constants is evaluated and its outputs become constants (the node is
 * removed) unless an output has more than GRAPH_FOLD_MAX_ELEMENTS.  Ends
 * with graph_prune().  Requires a sorted graph. */
bool graph_infer_all(graph *g, bool fold, char *err, size_t err_size);
/* Infer one node (arity, static inputs, attributes, then the op's infer). */
bool graph_infer_node(graph *g, graph_node *n, char *err, size_t err_size);

/* Remove nodes no graph output depends on, then graph_compact(). */
void graph_prune(graph *g);
/* Drop removed nodes and tensors nothing refers to; renumbers. */
void graph_compact(graph *g);

/* Tensor t (>= 0) is a constant. */
bool graph_is_constant(const graph *g, int t);
/* Whether every output of node n was folded to a constant (it runs no code). */
bool graph_node_folded(const graph *g, const graph_node *n);
/* A constant with one element (any rank, any dtype): its value in *v. */
bool graph_constant_scalar(const graph *g, int t, double *v);
/* Only output 0 of the node is present (the others, for training, are
 * omitted). */
bool graph_node_first_output_only(const graph_node *n);

/* Nodes that read tensor t (a node reading it twice counts once); the
 * first max of them are stored in nodes (may be NULL).  Removed nodes are
 * not counted. */
int graph_consumers(const graph *g, int t, int *nodes, int max);
/* The values integer tensor t takes, [0, limit): its value_limit, else the
 * fewest rows of a table it indexes (Gather's indices); 0 when neither
 * says. */
int64_t graph_value_limit(const graph *g, int t);

/* The multiply-adds the graph's matmuls and convolutions ask for (their
 * gradients' too), node by node: an output element of a MatMul takes K of
 * them, of a Conv its group's input channels times the kernel's pixels; a
 * ConvTranspose (a Conv's data gradient) takes those of the Conv it
 * reverses, a ConvWeightGrad a weight element per image pixel of dY.
 * Folded nodes count nothing.  The figure "useful" utilisation is quoted
 * against (the AMP issues more: padding, pipeline fill). */
double graph_model_macs(const graph *g);
/* The work of node n for cutting a graph into pipeline stages of about
 * equal work: its output elements, plus for a matmul or convolution (and
 * their gradients) its multiply-adds over 16 (the AMP's rate against an
 * element-wise op's); 0 for a folded node. */
double graph_node_work(const graph *g, const graph_node *n);

/* A readable listing: inputs, one line per node with its operands' shapes,
 * outputs.  Constants are shown by shape unless small. */
void graph_dump(const graph *g, FILE *f);
/* The same into a malloc'd string. */
char *graph_dump_string(const graph *g);

#endif
