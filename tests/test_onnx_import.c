/*
 * test_onnx_import.c — ONNX import: tiny models built here with the
 * protobuf-c API and written to temporary files, imported, inspected (graph
 * listing, folded constants) and evaluated; and bad files, each with its
 * exact message: truncated and corrupted protobuf, a cycle, an unknown op,
 * mismatched shapes, a missing initializer, unsupported opsets, external
 * data, symbolic dimensions.
 */
#include <CUnit/CUnit.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "frontends/fusion.h"
#include "frontends/graph_eval.h"
#include "frontends/onnx_import.h"
#include "test_util.h"

#ifdef IPUSIM_HAVE_ONNX

#include "onnx.pb-c.h"

/* ---- building models -------------------------------------------------------------- */

/* Everything a test builds lives in this arena, freed after the test. */
static void *arena[8192];
static int n_arena;

static void *A(size_t n)
{
    void *p = calloc(1, n ? n : 1);
    CU_ASSERT_FATAL(p != NULL && n_arena < 8192);
    arena[n_arena++] = p;
    return p;
}

static char *S(const char *s)
{
    return strcpy(A(strlen(s) + 1), s);
}

static void arena_free(void)
{
    while (n_arena)
        free(arena[--n_arena]);
}

typedef struct model {
    Onnx__ModelProto m;
    Onnx__GraphProto g;
    Onnx__OperatorSetIdProto os;
    Onnx__OperatorSetIdProto *osp[1];
} model;

static model *new_model(int opset)
{
    model *md = A(sizeof *md);
    onnx__model_proto__init(&md->m);
    onnx__graph_proto__init(&md->g);
    onnx__operator_set_id_proto__init(&md->os);
    md->m.has_ir_version = 1;
    md->m.ir_version = 8;
    md->os.domain = S("");
    md->os.has_version = 1;
    md->os.version = opset;
    md->osp[0] = &md->os;
    md->m.n_opset_import = 1;
    md->m.opset_import = md->osp;
    md->m.graph = &md->g;
    md->g.name = S("test");
    md->g.node = A(32 * sizeof *md->g.node);
    md->g.initializer = A(32 * sizeof *md->g.initializer);
    md->g.input = A(32 * sizeof *md->g.input);
    md->g.output = A(32 * sizeof *md->g.output);
    return md;
}

/* "a,b,,c" -> names (empty ones kept: omitted optional operands). */
static char **split(const char *list, size_t *n)
{
    char **v = A(16 * sizeof *v);
    *n = 0;
    if (!list[0])
        return v;
    const char *p = list;
    for (;;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        char *s = A(len + 1);
        memcpy(s, p, len);
        v[(*n)++] = s;
        if (!c)
            break;
        p = c + 1;
    }
    return v;
}

static Onnx__NodeProto *add_node(model *md, const char *op, const char *name, const char *ins, const char *outs)
{
    Onnx__NodeProto *n = A(sizeof *n);
    onnx__node_proto__init(n);
    n->op_type = S(op);
    n->name = S(name);
    n->input = split(ins, &n->n_input);
    n->output = split(outs, &n->n_output);
    n->attribute = A(8 * sizeof *n->attribute);
    md->g.node[md->g.n_node++] = n;
    return n;
}

static Onnx__AttributeProto *add_attr(Onnx__NodeProto *n, const char *name, Onnx__AttributeProto__AttributeType t)
{
    Onnx__AttributeProto *a = A(sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = S(name);
    a->has_type = 1;
    a->type = t;
    n->attribute[n->n_attribute++] = a;
    return a;
}

static void attr_i(Onnx__NodeProto *n, const char *name, int64_t v)
{
    Onnx__AttributeProto *a = add_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    a->has_i = 1;
    a->i = v;
}

static void attr_ints(Onnx__NodeProto *n, const char *name, size_t count, const int64_t *v)
{
    Onnx__AttributeProto *a = add_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    a->ints = A(count * sizeof *v);
    memcpy(a->ints, v, count * sizeof *v);
    a->n_ints = count;
}

static Onnx__TensorProto *tensor(const char *name, int dtype, int rank, const int64_t *dims)
{
    Onnx__TensorProto *t = A(sizeof *t);
    onnx__tensor_proto__init(t);
    t->name = S(name);
    t->has_data_type = 1;
    t->data_type = dtype;
    t->n_dims = (size_t)rank;
    t->dims = A((size_t)rank * sizeof *dims + 1);
    if (rank)
        memcpy(t->dims, dims, (size_t)rank * sizeof *dims);
    return t;
}

static size_t count_of(int rank, const int64_t *dims)
{
    size_t c = 1;
    for (int i = 0; i < rank; i++)
        c *= (size_t)dims[i];
    return c;
}

/* f32 values in raw_data (raw) or in float_data. */
static Onnx__TensorProto *tensor_f32(const char *name, int rank, const int64_t *dims, const float *v, bool raw)
{
    Onnx__TensorProto *t = tensor(name, GDT_F32, rank, dims);
    size_t c = count_of(rank, dims);
    if (raw) {
        t->has_raw_data = 1;
        t->raw_data.len = c * sizeof(float);
        t->raw_data.data = A(c * sizeof(float));
        memcpy(t->raw_data.data, v, c * sizeof(float));
    } else {
        t->n_float_data = c;
        t->float_data = A(c * sizeof(float));
        memcpy(t->float_data, v, c * sizeof(float));
    }
    return t;
}

static Onnx__TensorProto *tensor_i64(const char *name, int rank, const int64_t *dims, const int64_t *v)
{
    Onnx__TensorProto *t = tensor(name, GDT_I64, rank, dims);
    size_t c = count_of(rank, dims);
    t->n_int64_data = c;
    t->int64_data = A(c * sizeof(int64_t));
    memcpy(t->int64_data, v, c * sizeof(int64_t));
    return t;
}

static void attr_t(Onnx__NodeProto *n, const char *name, Onnx__TensorProto *t)
{
    add_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR)->t = t;
}

static void add_init(model *md, Onnx__TensorProto *t)
{
    md->g.initializer[md->g.n_initializer++] = t;
}

/* A tensor value info; a dim of -1 is the symbolic "N". */
static Onnx__ValueInfoProto *vinfo(const char *name, int dtype, int rank, const int64_t *dims)
{
    Onnx__ValueInfoProto *vi = A(sizeof *vi);
    onnx__value_info_proto__init(vi);
    vi->name = S(name);
    Onnx__TypeProto *tp = A(sizeof *tp);
    onnx__type_proto__init(tp);
    Onnx__TypeProto__Tensor *tt = A(sizeof *tt);
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1;
    tt->elem_type = dtype;
    Onnx__TensorShapeProto *sp = A(sizeof *sp);
    onnx__tensor_shape_proto__init(sp);
    sp->n_dim = (size_t)rank;
    sp->dim = A((size_t)rank * sizeof *sp->dim + 1);
    for (int i = 0; i < rank; i++) {
        Onnx__TensorShapeProto__Dimension *d = A(sizeof *d);
        onnx__tensor_shape_proto__dimension__init(d);
        if (dims[i] < 0) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            d->dim_param = S("N");
        } else {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d->dim_value = dims[i];
        }
        sp->dim[i] = d;
    }
    tt->shape = sp;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    vi->type = tp;
    return vi;
}

static void add_input(model *md, const char *name, int dtype, int rank, const int64_t *dims)
{
    md->g.input[md->g.n_input++] = vinfo(name, dtype, rank, dims);
}

static void add_output(model *md, const char *name, int dtype, int rank, const int64_t *dims)
{
    md->g.output[md->g.n_output++] = vinfo(name, dtype, rank, dims);
}

/* ---- files ------------------------------------------------------------------------------ */

static char tmpdir[64];

static const char *tmp_path(const char *leaf)
{
    static char buf[4][sizeof tmpdir + 256];
    static unsigned k;
    if (!tmpdir[0]) {
        snprintf(tmpdir, sizeof tmpdir, "/tmp/ipusim_test_onnx_XXXXXX");
        CU_ASSERT_FATAL(mkdtemp(tmpdir) != NULL);
    }
    char *p = buf[k++ % 4];
    snprintf(p, sizeof buf[0], "%s/%.200s", tmpdir, leaf);
    return p;
}

static void remove_tmpdir(void)
{
    if (!tmpdir[0])
        return;
    DIR *d = opendir(tmpdir);
    struct dirent *de;
    while (d && (de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            unlink(tmp_path(de->d_name));
    if (d)
        closedir(d);
    rmdir(tmpdir);
}

static uint8_t *pack(const model *md, size_t *len)
{
    *len = onnx__model_proto__get_packed_size(&md->m);
    uint8_t *buf = A(*len);
    CU_ASSERT_FATAL(onnx__model_proto__pack(&md->m, buf) == *len);
    return buf;
}

static const char *write_bytes(const char *leaf, const void *data, size_t len)
{
    const char *path = tmp_path(leaf);
    FILE *f = fopen(path, "wb");
    CU_ASSERT_FATAL(f != NULL);
    CU_ASSERT_FATAL(fwrite(data, 1, len, f) == len);
    fclose(f);
    return path;
}

static const char *save(const model *md, const char *leaf)
{
    size_t len;
    uint8_t *buf = pack(md, &len);
    return write_bytes(leaf, buf, len);
}

/* Import and expect failure with exactly want (after "<path>: "). */
static void expect_error(const char *path, const onnx_import_options *opt, enum onnx_status want_status,
                         const char *want)
{
    char err[1024], full[1400];
    enum onnx_status st = ONNX_OK;
    graph *g = onnx_import_file(path, opt, &st, err, sizeof err);
    CU_ASSERT_PTR_NULL(g);
    graph_free(g);
    CU_ASSERT_EQUAL(st, want_status);
    snprintf(full, sizeof full, "%s: %s", path, want);
    if (strcmp(err, full))
        fprintf(stderr, "\n  got:  %s\n  want: %s\n", err, full);
    CU_ASSERT_STRING_EQUAL(err, full);
}

static graph *import_ok(const char *path, const onnx_import_options *opt)
{
    char err[1024];
    enum onnx_status st;
    graph *g = onnx_import_file(path, opt, &st, err, sizeof err);
    if (!g)
        fprintf(stderr, "\n  import failed: %s\n", err);
    CU_ASSERT_FATAL(g != NULL);
    CU_ASSERT_EQUAL(st, ONNX_OK);
    return g;
}

/* The listing without its first line (which names the temporary file). */
static char *listing(const graph *g)
{
    char *s = graph_dump_string(g);
    char *nl = strchr(s, '\n');
    memmove(s, nl + 1, strlen(nl + 1) + 1);
    return s;
}

static void expect_listing(const graph *g, const char *want)
{
    char *got = listing(g);
    if (strcmp(got, want))
        fprintf(stderr, "\n--- got:\n%s--- want:\n%s", got, want);
    CU_ASSERT_STRING_EQUAL(got, want);
    free(got);
}

static const int64_t d23[] = { 2, 3 }, d34[] = { 3, 4 }, d4[] = { 4 }, d24[] = { 2, 4 };

/* x[2,3] -> MatMul(W[3,4] raw_data) -> Add(B[4] float_data) -> Relu -> y */
static model *mlp_model(void)
{
    static const float w[] = { 1, 0, 0, 1, 0, 1, 0, 1, 0, 0, 1, -1 };
    static const float b[] = { 0.5f, -10, 0, 0 };
    model *md = new_model(13);
    add_input(md, "x", GDT_F32, 2, d23);
    add_init(md, tensor_f32("W", 2, d34, w, true));
    add_init(md, tensor_f32("B", 1, d4, b, false));
    add_node(md, "MatMul", "mm", "x,W", "h");
    add_node(md, "Add", "bias", "h,B", "hb");
    add_node(md, "Relu", "act", "hb", "y");
    add_output(md, "y", GDT_F32, 2, d24);
    return md;
}

static void eval_f32(const graph *g, const float *x, const graph_shape *xs, float *y, size_t ny)
{
    char err[512];
    graph_value in = { .dtype = GDT_F32, .shape = *xs, .data = (void *)x }, out;
    bool ok = graph_eval(g, &in, &out, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n  eval failed: %s\n", err);
    CU_ASSERT_FATAL(ok);
    CU_ASSERT_EQUAL_FATAL((size_t)graph_shape_numel(&out.shape), ny);
    memcpy(y, out.data, ny * sizeof *y);
    graph_value_free(&out);
}

/* ---- models that import ------------------------------------------------------------------ */

static void test_mlp_import_eval_fuse(void)
{
    graph *g = import_ok(save(mlp_model(), "mlp.onnx"), NULL);
    expect_listing(g, "  input x f32[2,3]\n"
                      "  const W f32[3,4]\n"
                      "  const B f32[4]\n"
                      "  MatMul(x, W) -> h f32[2,4]\n"
                      "  Add(h, B) -> hb f32[2,4]\n"
                      "  Relu(hb) -> y f32[2,4]\n"
                      "  output y f32[2,4]\n");
    static const float x[] = { 1, 2, 3, 4, 5, 6 };
    static const float want[] = { 1.5f, 0, 3, 0, 4.5f, 0, 6, 3 };
    graph_shape xs = { .rank = 2, .dims = { 2, 3 } };
    float y[8];
    eval_f32(g, x, &xs, y, 8);
    CU_ASSERT_EQUAL(memcmp(y, want, sizeof y), 0);
    /* bias and Relu move into the matmul's epilogue; same values */
    char err[512];
    fusion_stats st;
    CU_ASSERT_TRUE(fusion_run_all(g, &st, err, sizeof err));
    CU_ASSERT_EQUAL(st.matmul_epilogues, 1);
    expect_listing(g, "  input x f32[2,3]\n"
                      "  const W f32[3,4]\n"
                      "  const B f32[4]\n"
                      "  FusedMatMul(x, W, B) {activation=relu} -> y f32[2,4]\n"
                      "  output y f32[2,4]\n");
    eval_f32(g, x, &xs, y, 8);
    CU_ASSERT_EQUAL(memcmp(y, want, sizeof y), 0);
    graph_free(g);
    arena_free();
}

/* The chain PyTorch emits for x.view(x.size(0), -1) folds to one Reshape
 * with a constant target. */
static void test_shape_chain_folds(void)
{
    static const int64_t d234[] = { 2, 3, 4 }, d212[] = { 2, 12 }, d1[] = { 1 }, zero = 0, minus1 = -1;
    model *md = new_model(13);
    add_input(md, "x", GDT_F32, 3, d234);
    add_node(md, "Shape", "Shape_0", "x", "s");
    attr_t(add_node(md, "Constant", "Constant_1", "", "zero"), "value", tensor_i64("", 0, NULL, &zero));
    attr_i(add_node(md, "Gather", "Gather_2", "s,zero", "b"), "axis", 0);
    Onnx__NodeProto *c = add_node(md, "Constant", "Constant_3", "", "ax");
    attr_ints(c, "value_ints", 1, &zero);
    add_node(md, "Unsqueeze", "Unsqueeze_4", "b,ax", "b1");
    attr_t(add_node(md, "Constant", "Constant_5", "", "m1"), "value", tensor_i64("", 1, d1, &minus1));
    attr_i(add_node(md, "Concat", "Concat_6", "b1,m1", "shp"), "axis", 0);
    add_node(md, "Reshape", "Reshape_7", "x,shp", "y");
    add_output(md, "y", GDT_F32, 2, d212);
    graph *g = import_ok(save(md, "chain.onnx"), NULL);
    expect_listing(g, "  input x f32[2,3,4]\n"
                      "  const shp i64[2]\n"
                      "  Reshape(x, shp) -> y f32[2,12]\n"
                      "  output y f32[2,12]\n");
    const int64_t *shp = g->tensors[g->nodes[0].inputs[1]].data;
    CU_ASSERT_EQUAL(shp[0], 2);
    CU_ASSERT_EQUAL(shp[1], -1);
    static const float x[24] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24 };
    graph_shape xs = { .rank = 3, .dims = { 2, 3, 4 } };
    float y[24];
    eval_f32(g, x, &xs, y, 24);
    CU_ASSERT_EQUAL(memcmp(x, y, sizeof y), 0);
    graph_free(g);
    /* With x's value known (as the ONNX test runner gives it), the chain
     * still folds only x's shape: x stays an input, the Reshape a node. */
    graph_value xv = { .dtype = GDT_F32, .shape = xs, .data = (void *)x };
    onnx_known_input k = { "x", &xv };
    onnx_import_options opt = { .known = &k, .n_known = 1, .values_override_shapes = true };
    g = import_ok(save(md, "chain_known.onnx"), &opt);
    expect_listing(g, "  input x f32[2,3,4]\n"
                      "  const shp i64[2]\n"
                      "  Reshape(x, shp) -> y f32[2,12]\n"
                      "  output y f32[2,12]\n");
    graph_free(g);
    /* the same through Size: y = Reshape(x, Unsqueeze(Size(x))) */
    md = new_model(13);
    add_input(md, "x", GDT_F32, 3, d234);
    add_node(md, "Size", "Size_0", "x", "n");
    c = add_node(md, "Constant", "Constant_1", "", "ax");
    attr_ints(c, "value_ints", 1, &zero);
    add_node(md, "Unsqueeze", "Unsqueeze_2", "n,ax", "n1");
    add_node(md, "Reshape", "Reshape_3", "x,n1", "y");
    static const int64_t flat[] = { 24 };
    add_output(md, "y", GDT_F32, 1, flat);
    g = import_ok(save(md, "size_known.onnx"), &opt);
    expect_listing(g, "  input x f32[2,3,4]\n"
                      "  const n1 i64[1]\n"
                      "  Reshape(x, n1) -> y f32[24]\n"
                      "  output y f32[24]\n");
    graph_free(g);
    arena_free();
}

/* Softmax before opset 13 normalises everything from the axis (default 1)
 * on; from 13 one axis (default -1). */
static void test_softmax_opset_semantics(void)
{
    static const int64_t d122[] = { 1, 2, 2 };
    static const float x[4] = { 0, 0, 0, 0 };
    graph_shape xs = { .rank = 3, .dims = { 1, 2, 2 } };
    float y[4];
    for (int opset = 11; opset <= 13; opset += 2) {
        model *md = new_model(opset);
        add_input(md, "x", GDT_F32, 3, d122);
        add_node(md, "Softmax", "sm", "x", "y");
        add_output(md, "y", GDT_F32, 3, d122);
        graph *g = import_ok(save(md, "softmax.onnx"), NULL);
        eval_f32(g, x, &xs, y, 4);
        for (int i = 0; i < 4; i++)
            CU_ASSERT_EQUAL(y[i], opset == 11 ? 0.25f : 0.5f);
        graph_free(g);
    }
    arena_free();
}

/* Symbolic dims need a size; inputs that decide a shape need a value. */
static void test_symbolic_dims_and_known_inputs(void)
{
    static const int64_t dn3[] = { -1, 3 }, d2[] = { 2 }, d32[] = { 3, 2 };
    model *md = new_model(13);
    add_input(md, "x", GDT_F32, 2, dn3);
    add_input(md, "shape", GDT_I64, 1, d2);
    add_node(md, "Reshape", "r", "x,shape", "y");
    add_output(md, "y", GDT_F32, 2, d32);
    const char *path = save(md, "sym.onnx");
    expect_error(path, NULL, ONNX_UNSUPPORTED, "input 'x' dimension 0 is symbolic ('N'); give its size");
    onnx_dim_binding n2 = { "N", 2 };
    onnx_import_options opt = { .dims = &n2, .n_dims = 1 };
    expect_error(path, &opt, ONNX_INVALID,
                 "node 'r' (Reshape): input 'shape' decides an output shape and must be a constant "
                 "(ipusim compiles static shapes)");
    int64_t target[2] = { 3, 2 };
    graph_value tv = { .dtype = GDT_I64, .shape = { .rank = 1, .dims = { 2 } }, .data = target };
    onnx_known_input k = { "shape", &tv };
    opt.known = &k;
    opt.n_known = 1;
    graph *g = import_ok(path, &opt);
    CU_ASSERT_EQUAL(g->n_inputs, 1);
    CU_ASSERT_STRING_EQUAL(g->tensors[g->inputs[0]].name, "x");
    CU_ASSERT_EQUAL(g->tensors[g->outputs[0]].shape.dims[0], 3);
    graph_free(g);
    /* a value of another shape than declared */
    target[0] = 6;
    target[1] = 1;
    expect_error(path, &opt, ONNX_INVALID, "output 'y' is declared f32[3,2] but is computed as f32[6,1]");
    arena_free();
}

static void test_tensor_file_round_trip(void)
{
    static const float v[] = { 1.5f, -2, 3.25f, 0 };
    static const int64_t d22[] = { 2, 2 };
    Onnx__TensorProto *t = tensor_f32("x", 2, d22, v, false);
    size_t len = onnx__tensor_proto__get_packed_size(t);
    uint8_t *buf = A(len);
    onnx__tensor_proto__pack(t, buf);
    const char *path = write_bytes("x.pb", buf, len);
    char *name, err[512];
    graph_value gv;
    enum onnx_status st;
    CU_ASSERT_TRUE_FATAL(onnx_read_tensor_file(path, &name, &gv, &st, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(name, "x");
    CU_ASSERT_EQUAL(gv.dtype, GDT_F32);
    CU_ASSERT_EQUAL(gv.shape.rank, 2);
    CU_ASSERT_EQUAL(memcmp(gv.data, v, sizeof v), 0);
    free(name);
    graph_value_free(&gv);
    arena_free();
}

/* ---- bad files ------------------------------------------------------------------------------ */

static void test_truncated_and_corrupt(void)
{
    size_t len;
    uint8_t *buf = pack(mlp_model(), &len);
    expect_error(write_bytes("trunc.onnx", buf, len - 3), NULL, ONNX_INVALID,
                 "not a valid ONNX model (protobuf parse failed)");
    expect_error(write_bytes("empty.onnx", buf, 0), NULL, ONNX_INVALID, "not a valid ONNX model (no graph)");
    /* every prefix fails cleanly */
    char err[1024];
    enum onnx_status st;
    for (size_t n = 0; n < len; n++) {
        graph *g = onnx_import_buffer("m.onnx", buf, n, NULL, &st, err, sizeof err);
        CU_ASSERT_PTR_NULL(g);
        graph_free(g);
        CU_ASSERT_EQUAL(st, ONNX_INVALID);
        CU_ASSERT_EQUAL(strncmp(err, "m.onnx: ", 8), 0);
    }
    /* flipped bytes: an error or a graph, never a crash */
    uint8_t *bad = A(len);
    uint32_t seed = 12345;
    for (int trial = 0; trial < 400; trial++) {
        memcpy(bad, buf, len);
        for (int f = 0; f < 1 + trial % 3; f++) {
            seed = seed * 1664525u + 1013904223u;
            bad[(seed >> 8) % len] ^= (uint8_t)(1u << ((seed >> 4) % 8));
        }
        graph *g = onnx_import_buffer("m.onnx", bad, len, NULL, &st, err, sizeof err);
        CU_ASSERT(g != NULL || strncmp(err, "m.onnx: ", 8) == 0);
        graph_free(g);
    }
    expect_error(tmp_path("nosuch.onnx"), NULL, ONNX_IO_ERROR, "cannot open: No such file or directory");
    arena_free();
}

static void test_cycle(void)
{
    model *md = new_model(13);
    add_input(md, "x", GDT_F32, 2, d23);
    add_node(md, "Add", "a", "x,t3", "t1");
    add_node(md, "Relu", "b", "t1", "t2");
    add_node(md, "Neg", "c", "t2", "t3");
    add_node(md, "Relu", "d", "t3", "y");
    add_output(md, "y", GDT_F32, 2, d23);
    expect_error(save(md, "cycle.onnx"), NULL, ONNX_INVALID,
                 "graph has a cycle: node 'a' (Add) -> node 'b' (Relu) -> node 'c' (Neg) -> node 'a' (Add)");
    arena_free();
}

static void test_unknown_op(void)
{
    model *md = new_model(13);
    add_input(md, "x", GDT_F32, 2, d23);
    add_node(md, "Relu", "r", "x", "t");
    add_node(md, "NonMaxSuppression", "nms_1", "t,t", "y");
    add_output(md, "y", GDT_I64, 2, d23);
    expect_error(save(md, "unknown.onnx"), NULL, ONNX_UNSUPPORTED, "unsupported op 'NonMaxSuppression' in node 'nms_1'");
    md->g.node[1]->op_type = S("FusedGelu");
    md->g.node[1]->domain = S("com.microsoft");
    md->g.node[1]->name = S("");
    expect_error(save(md, "unknown2.onnx"), NULL, ONNX_UNSUPPORTED,
                 "unsupported op 'com.microsoft.FusedGelu' in node #1");
    arena_free();
}

static void test_mismatched_shapes(void)
{
    static const int64_t d45[] = { 4, 5 }, d43[] = { 4, 3 };
    model *md = new_model(13);
    add_input(md, "a", GDT_F32, 2, d23);
    add_input(md, "b", GDT_F32, 2, d45);
    add_node(md, "MatMul", "mm", "a,b", "y");
    add_output(md, "y", GDT_F32, 2, d23);
    expect_error(save(md, "mm.onnx"), NULL, ONNX_INVALID, "node 'mm' (MatMul): inner dimensions differ: [2,3] x [4,5]");
    md = new_model(13);
    add_input(md, "a", GDT_F32, 2, d23);
    add_input(md, "b", GDT_F32, 2, d43);
    add_node(md, "Add", "add", "a,b", "y");
    add_output(md, "y", GDT_F32, 2, d23);
    expect_error(save(md, "add.onnx"), NULL, ONNX_INVALID,
                 "node 'add' (Add): cannot broadcast input shapes [2,3] and [4,3]");
    /* the declared output disagrees with what the node computes */
    md = mlp_model();
    md->g.output[0] = vinfo("y", GDT_F32, 2, d34);
    expect_error(save(md, "decl.onnx"), NULL, ONNX_INVALID, "output 'y' is declared f32[3,4] but is computed as f32[2,4]");
    arena_free();
}

static void test_missing_initializer(void)
{
    static const int64_t d1133[] = { 1, 1, 3, 3 };
    model *md = new_model(13);
    add_input(md, "X", GDT_F32, 4, d1133);
    add_node(md, "Conv", "Conv_12", "X,W", "Y");
    add_output(md, "Y", GDT_F32, 4, d1133);
    expect_error(save(md, "noinit.onnx"), NULL, ONNX_INVALID, "node 'Conv_12' (Conv): input 'W' is missing");
    arena_free();
}

static void test_bad_initializers_and_opsets(void)
{
    model *md = mlp_model();
    md->os.version = 9;
    expect_error(save(md, "opset9.onnx"), NULL, ONNX_UNSUPPORTED,
                 "opset 9 is not supported (ipusim imports opsets 11 to 17)");
    md->os.version = 18;
    expect_error(save(md, "opset18.onnx"), NULL, ONNX_UNSUPPORTED,
                 "opset 18 is not supported (ipusim imports opsets 11 to 17)");
    md->os.version = 13;
    /* raw_data of the wrong size */
    md->g.initializer[0]->raw_data.len -= 4;
    expect_error(save(md, "short.onnx"), NULL, ONNX_INVALID,
                 "initializer 'W' has 44 raw_data bytes for f32[3,4] (48 expected)");
    md->g.initializer[0]->raw_data.len += 4;
    /* external data */
    Onnx__TensorProto *w = md->g.initializer[0];
    w->has_raw_data = 0;
    w->has_data_location = 1;
    w->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    Onnx__StringStringEntryProto *loc = A(sizeof *loc);
    onnx__string_string_entry_proto__init(loc);
    loc->key = S("location");
    loc->value = S("weights.bin");
    w->external_data = A(sizeof *w->external_data);
    w->external_data[0] = loc;
    w->n_external_data = 1;
    expect_error(save(md, "external.onnx"), NULL, ONNX_UNSUPPORTED,
                 "initializer 'W' keeps its data in an external file ('weights.bin'); ipusim reads "
                 "self-contained .onnx files only");
    /* an op newer than the model's opset, an attribute ipusim does not know */
    md = mlp_model();
    add_node(md, "LayerNormalization", "ln", "y,B", "z");
    expect_error(save(md, "ln13.onnx"), NULL, ONNX_INVALID,
                 "node 'ln' (LayerNormalization): LayerNormalization is not in opset 13 (it appears in opset 17)");
    md = mlp_model();
    attr_i(md->g.node[2], "alpha", 1);
    expect_error(save(md, "attr.onnx"), NULL, ONNX_UNSUPPORTED, "node 'act' (Relu): unsupported attribute 'alpha'");
    arena_free();
}

/* Shapes that would overflow or exhaust the host are refused, not allocated. */
static void test_hostile_sizes(void)
{
    static const int64_t d1[] = { 1 }, d3[] = { 3 }, huge[] = { 1 << 20, 1 << 20, 1 << 20 },
                         big_dims[] = { 1 << 30, 1 << 30 };
    model *md = new_model(13);
    add_input(md, "x", GDT_F32, 1, d1);
    add_init(md, tensor_i64("shape", 1, d3, huge));
    add_node(md, "Expand", "e", "x,shape", "y");
    add_output(md, "y", GDT_F32, 3, huge);
    expect_error(save(md, "huge.onnx"), NULL, ONNX_UNSUPPORTED,
                 "node 'e' (Expand): output 'y' of shape [1048576,1048576,1048576] has more than 2^32 elements");
    md = new_model(13);
    add_input(md, "x", GDT_F32, 1, d3);
    Onnx__TensorProto *t = tensor("W", GDT_F32, 2, big_dims);
    add_init(md, t);
    add_node(md, "Relu", "r", "x", "y");
    add_output(md, "y", GDT_F32, 1, d3);
    expect_error(save(md, "bigw.onnx"), NULL, ONNX_UNSUPPORTED, "initializer 'W' has more than 2^32 elements");
    arena_free();
}

/* An initializer whose shape claims far more data than the file holds is
 * refused on the data present, before anything is allocated for it: the
 * import runs in a child whose address space cannot hold the claim. */
static void test_claimed_size_checked_first(void)
{
    static const int64_t d3[] = { 3 }, claim[] = { 65536, 65536 };
    static const char want[] = "initializer 'W' has 9 raw_data bytes for f32[65536,65536] (17179869184 expected)";
    model *md = new_model(13);
    add_input(md, "x", GDT_F32, 1, d3);
    Onnx__TensorProto *t = tensor("W", GDT_F32, 2, claim);
    t->has_raw_data = 1;
    t->raw_data.len = 9;
    t->raw_data.data = A(9);
    add_init(md, t);
    add_node(md, "Relu", "r", "x", "y");
    add_output(md, "y", GDT_F32, 1, d3);
    const char *path = save(md, "claim.onnx");
    expect_error(path, NULL, ONNX_INVALID, want);
    /* the same typed: 2 float_data values for 2^32 */
    t->has_raw_data = 0;
    t->n_float_data = 2;
    t->float_data = A(2 * sizeof(float));
    expect_error(save(md, "claim_typed.onnx"), NULL, ONNX_INVALID,
                 "initializer 'W' has 2 float_data values for f32[65536,65536] (4294967296 expected)");

    long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    CU_ASSERT_FATAL(f != NULL && fscanf(f, "%ld", &pages) == 1);
    fclose(f);
    fflush(NULL);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        rlim_t limit = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + ((rlim_t)2 << 30);
        struct rlimit rl = { limit, limit };
        char err[1024], full[1400];
        enum onnx_status st = ONNX_OK;
        if (setrlimit(RLIMIT_AS, &rl))
            _exit(2);
        graph *g = onnx_import_file(path, NULL, &st, err, sizeof err);
        snprintf(full, sizeof full, "%s: %s", path, want);
        if (g || strcmp(err, full))
            fprintf(stderr, "\n  in 2 GiB more address space: %s\n", g ? "imported" : err);
        _exit(!g && !strcmp(err, full) ? 0 : 1);
    }
    int status = 0;
    CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
    CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    arena_free();
}

static void test_register_onnx(void)
{
    ADD_SUITE("onnx_import",
              { "MLP: import, listing, evaluation, fusion", test_mlp_import_eval_fuse },
              { "Shape/Gather/Unsqueeze/Concat chain folds into Reshape, known input or not", test_shape_chain_folds },
              { "Softmax semantics of opsets 11 and 13", test_softmax_opset_semantics },
              { "symbolic dims and known input values", test_symbolic_dims_and_known_inputs },
              { "TensorProto file round trip", test_tensor_file_round_trip });
    ADD_SUITE("onnx_import_errors",
              { "truncated, empty and corrupted files", test_truncated_and_corrupt },
              { "cycle names its nodes", test_cycle },
              { "unknown op", test_unknown_op },
              { "mismatched shapes", test_mismatched_shapes },
              { "missing initializer", test_missing_initializer },
              { "initializer data checked before allocation", test_claimed_size_checked_first },
              { "hostile sizes", test_hostile_sizes },
              { "bad initializers, opsets and attributes", test_bad_initializers_and_opsets });
}

void test_register(void)
{
    atexit(remove_tmpdir);
    test_register_onnx();
}

#else /* !IPUSIM_HAVE_ONNX */

static void test_not_built(void)
{
    CU_FAIL("ONNX support not built: add include(frontends/onnx.cmake) to CMakeLists.txt");
}

void test_register(void)
{
    ADD_SUITE("onnx_import", { "ONNX support is built", test_not_built });
}

#endif
