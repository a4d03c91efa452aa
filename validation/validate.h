/*
 * validate.h — the ONNX backend node tests (onnx/backend/test/data/node,
 * Debian's libonnx-testdata) run through the importer and the reference
 * evaluator, compared with the expected outputs.
 *
 * Each test is a directory holding model.onnx and test_data_set_N/ with
 * input_K.pb and output_K.pb (serialised TensorProtos).  Inputs are matched
 * to the model's inputs by name.  Inputs that decide a shape (a Reshape's
 * target, ...) are bound as compile-time constants, since ipusim compiles
 * static shapes.
 *
 * Tolerance (VALIDATE_RTOL, VALIDATE_ATOL): a float element passes when
 * |got - want| <= atol + rtol |want| with rtol = 1e-3, atol = 1e-7, the
 * defaults of ONNX's own backend test runner, so a pass here means what a
 * pass there means.  bf16 outputs allow one bf16 ulp (rtol 2^-7): the data
 * (ONNX 1.12) truncates f32 to bf16 where ipusim rounds to nearest.  NaN
 * must meet NaN and an infinity the same infinity.  Integer and bool
 * outputs must be equal, as must every dtype and shape.
 */
#ifndef IPUSIM_FRONTENDS_VALIDATE_H
#define IPUSIM_FRONTENDS_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "frontends/graph.h"
#include "frontends/lower.h"

#define VALIDATE_RTOL 1e-3
#define VALIDATE_ATOL 1e-7
#define VALIDATE_RTOL_BF16 (1.0 / 128)
#define VALIDATE_DEFAULT_NODE_TESTS "/usr/share/libonnx-testdata/data/node"

enum validate_result {
    VALIDATE_PASS,
    VALIDATE_FAIL,
    VALIDATE_UNSUPPORTED,       /* an op, dtype or opset ipusim does not take */
    VALIDATE_PASS_REFERENCE,    /* passes on the host reference evaluator; the compiler
                                   does not lower the graph yet, so it was not simulated */
};

/* Run one node test directory; msg says why it failed or is unsupported
 * (on a pass: the largest error seen).  With fuse, the fusion passes
 * (fusion.h) run on the imported graph before it is evaluated. */
/* With simulate, every graph the compiler lowers is compiled for gc200 and
 * run on the simulator, and its outputs are the ones compared; the others
 * fall back to the reference evaluator (VALIDATE_PASS_REFERENCE when they
 * pass there). */
enum validate_result validate_onnx_node_test(const char *test_dir, bool fuse, bool simulate, char *msg,
                                             size_t msg_size);

/* The node tests in dir (its entries named test_*), sorted by name: *count
 * malloc'd names (NULL when there are none or dir cannot be read). */
char **validate_node_test_names(const char *dir, size_t *count);

/* Free names as validate_node_test_names returns them. */
void validate_free_names(char **names, size_t count);

/* Simulate the graph g of model (its name, for the report) compiled with
 * o (o->machine: the machine) on pseudo-random inputs, and hold every
 * output against a host reference (validate_model.c).  The report goes to
 * out.  Returns the number of outputs outside their tolerance, or -1 with
 * err when the simulation or the reference evaluator fails. */
int validate_model(const char *model, graph *g, const lower_options *o, FILE *out, char *err, size_t err_size);

/* n values of type dt as f32 (malloc'd; fatal when out of memory). */
float *validate_as_f32(graph_dtype dt, const void *data, size_t n);

/* The most matmuls and convolutions on one path through g. */
int validate_matmul_depth(const graph *g);
/* The ops computed on the AMP as products: MatMul, Gemm, Conv, their fused
 * forms and a Conv's two gradients. */
bool validate_is_matmul(graph_op op);

/* `validate --model MODEL --train`: the training step g (autodiff.h,
 * built with anchor_gradients) compiled with o, simulated for `steps`
 * steps on pseudo-random inputs (labels in 0 .. classes - 1), each step
 * held against the host evaluator's step of the same graph: the loss,
 * every weight's gradient and every weight's change (validate_train.c).
 * Returns the number of tensors outside their tolerance, or -1 with err. */
struct train_info;
int validate_training(const char *model, graph *g, const lower_options *o, const struct train_info *info, int steps,
                      FILE *out, char *err, size_t err_size);

#endif
