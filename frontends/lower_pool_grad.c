/*
 * lower_pool_grad.c — MaxPoolGrad (ops_grad_pool.c) on 2-D f32 images: X
 * kept channels-last (as the forward pool reads it), dY in either order,
 * dX written channels-last.
 *
 * The work is split by dX, as PopLibs' pooling gradient is computed in
 * the input's space: every tile owns a block of dX (rows [r0, r1) of an
 * image, columns [x0, x1); whole rows when there are rows enough for the
 * tiles, else parts of rows) and computes every window that reaches its
 * block: it receives those windows' X (rows and columns, a contiguous
 * NHWC range a row) and their dY, and vtx_maxpool_grad_nhwc_f32 (pool.h)
 * zeroes its block and adds each window's dY at the window's first
 * maximum when that lies in the block.  Windows that straddle two blocks
 * are computed by both tiles, each keeping its own part: no partial sums
 * cross tiles, so every dX element is summed on one tile, in row-major
 * order of the windows.  The block's storage is as wide as the X columns
 * received; dX's pieces are its owned columns.  The six workers share the
 * block's rows (each visiting the output rows that reach its rows), or
 * its channels when it has fewer rows than workers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower_internal.h"
#include "ops_impl.h"

/* One tile's block of dX and what it receives. */
typedef struct grad_block {
    uint32_t tile;
    uint64_t img, r0, r1, x0, x1;        /* dX rows and columns owned */
    uint64_t oh0, oh1, ow0, ow1;         /* the output pixels whose windows reach them */
    uint64_t xr0, xr1, xc0, xc1;         /* X rows and columns received (dX's storage columns) */
    uint32_t x_at, dy_at, dx_at;         /* X row xr0, dY (oh0, ow0), dX row r0 (all at column xc0 / ow0) */
} grad_block;

/* A pool's geometry for the gradient. */
typedef struct grad_geom {
    uint64_t nb, c, h, w, oh, ow;
    ops_window win;
    bool dy_nhwc;
} grad_geom;

/* The output positions [*o0, *o1) along one axis whose windows reach input
 * [i0, i1), and the input [*x0, *x1) those windows read. */
static void reach(const ops_window *win, int d, uint64_t i0, uint64_t i1, uint64_t *o0, uint64_t *o1, uint64_t *x0,
                  uint64_t *x1)
{
    *o0 = *o1 = 0;
    *x0 = i0, *x1 = i1;
    bool any = false;
    for (int64_t o = 0; o < win->out[d]; o++) {
        int64_t a = o * win->stride[d] - win->pad_begin[d], b = a + win->kernel[d];
        if (a >= (int64_t)i1 || b <= (int64_t)i0)
            continue;
        a = a < 0 ? 0 : a;
        b = b > win->in[d] ? win->in[d] : b;
        if (!any)
            *o0 = (uint64_t)o;
        *o1 = (uint64_t)o + 1;
        if ((uint64_t)a < *x0)
            *x0 = (uint64_t)a;
        if ((uint64_t)b > *x1)
            *x1 = (uint64_t)b;
        any = true;
    }
}

/* The blocks of dX (*n of them, malloc'd; NULL when out of host memory). */
static grad_block *grad_blocks(lowering *lw, const grad_geom *G, size_t *n)
{
    grad_block *bl = NULL;
    size_t nbl = 0;
    uint64_t rows = G->nb * G->h;
    bool split_cols = rows * 2 < lw->tiles && G->w > 1 && G->win.stride[1] <= G->win.kernel[1];
    if (!split_cols) {
        uint32_t tiles = (uint32_t)(rows < lw->tiles ? rows : lw->tiles);
        uint64_t *l = malloc(tiles * sizeof *l), *hh = malloc(tiles * sizeof *hh);
        bl = calloc((size_t)tiles * G->nb + 1, sizeof *bl);
        if (l && hh && bl) {
            lw_linear_split(rows, 1, tiles, l, hh);
            for (uint32_t ti = 0; ti < tiles; ti++)
                for (uint64_t img = 0; img < G->nb; img++) {
                    uint64_t u0 = l[ti] > img * G->h ? l[ti] : img * G->h;
                    uint64_t u1 = hh[ti] < (img + 1) * G->h ? hh[ti] : (img + 1) * G->h;
                    if (u0 < u1)
                        bl[nbl++] = (grad_block){ .tile = lw_tile_of(lw, ti), .img = img, .r0 = u0 - img * G->h,
                                                  .r1 = u1 - img * G->h, .x0 = 0, .x1 = G->w };
                }
        }
        free(l);
        free(hh);
    } else {
        uint64_t groups = lw->tiles / rows;
        groups = groups > G->w ? G->w : groups;
        uint64_t cw = (G->w + groups - 1) / groups;
        groups = (G->w + cw - 1) / cw;
        bl = calloc(rows * groups + 1, sizeof *bl);
        if (bl)
            for (uint64_t img = 0; img < G->nb; img++)
                for (uint64_t r = 0; r < G->h; r++)
                    for (uint64_t q = 0; q < groups; q++, nbl++)
                        bl[nbl] = (grad_block){ .tile = lw_tile_of(lw, (uint32_t)nbl), .img = img, .r0 = r,
                                                .r1 = r + 1, .x0 = q * cw,
                                                .x1 = (q + 1) * cw < G->w ? (q + 1) * cw : G->w };
    }
    if (!bl) {
        lw_fail(lw, "out of host memory");
        return NULL;
    }
    for (size_t q = 0; q < nbl; q++) {
        grad_block *B = &bl[q];
        reach(&G->win, 0, B->r0, B->r1, &B->oh0, &B->oh1, &B->xr0, &B->xr1);
        reach(&G->win, 1, B->x0, B->x1, &B->ow0, &B->ow1, &B->xc0, &B->xc1);
    }
    *n = nbl;
    return bl;
}

/* Phase 1 on one block: X's rows and columns, dY's pixels, dX's storage
 * and pieces. */
static bool grad_receive(lowering *lw, const graph_node *n, const grad_geom *G, grad_block *B, const char *what)
{
    int x = n->inputs[0], dy = n->inputs[1], out = n->outputs[0];
    uint64_t c = G->c, wr = B->xc1 - B->xc0, owl = B->ow1 - B->ow0, ohl = B->oh1 - B->oh0;
    uint64_t S = c * 4;
    if (B->xr1 > B->xr0) {
        uint32_t a;
        if (wr == G->w) {
            a = lw_fetch(lw, x, (B->img * G->h + B->xr0) * G->w * c, (B->xr1 - B->xr0) * G->w * c, B->tile,
                         PREFER_REGION1);
        } else {
            a = lw_scratch_alloc(lw, B->tile, (B->xr1 - B->xr0) * wr * S, PREFER_REGION1, 8, what);
            for (uint64_t ih = B->xr0; a && ih < B->xr1 && !lw->failed; ih++)
                lw_fetch_into(lw, x, ((B->img * G->h + ih) * G->w + B->xc0) * c, wr * c, B->tile,
                              a + (uint32_t)((ih - B->xr0) * wr * S));
        }
        if (!a)
            return false;
        B->x_at = a;
    }
    if (ohl && owl) {
        uint32_t a = lw_scratch_alloc(lw, B->tile, ohl * owl * S, PREFER_REGION1, 8, what);
        if (!a)
            return false;
        if (G->dy_nhwc) {
            for (uint64_t oh = B->oh0; oh < B->oh1 && !lw->failed; oh++)
                lw_fetch_into(lw, dy, ((B->img * G->oh + oh) * G->ow + B->ow0) * c, owl * c, B->tile,
                              a + (uint32_t)((oh - B->oh0) * owl * S));
        } else {
            /* Planes: channel ch's rows at a + ch ohl owl * 4. */
            for (uint64_t ch = 0; ch < c && !lw->failed; ch++)
                for (uint64_t oh = B->oh0; oh < B->oh1 && !lw->failed; oh++) {
                    uint32_t to = a + (uint32_t)((ch * ohl + oh - B->oh0) * owl * 4);
                    uint64_t from = ((B->img * c + ch) * G->oh + oh) * G->ow + B->ow0;
                    if (owl == G->ow) {
                        lw_fetch_into(lw, dy, from, ohl * owl, B->tile, to);
                        break;
                    }
                    lw_fetch_into(lw, dy, from, owl, B->tile, to);
                }
        }
        B->dy_at = a;
    }
    uint64_t rows = B->r1 - B->r0;
    uint32_t d = lw_tensor_alloc(lw, out, B->tile, rows * wr * S, PREFER_REGION1, 8, false, what);
    if (!d)
        return false;
    B->dx_at = d;
    if (wr == G->w)
        return lw_add_piece(lw, out, B->tile, d, (B->img * G->h + B->r0) * G->w * c, rows * G->w * c);
    for (uint64_t r = B->r0; r < B->r1 && !lw->failed; r++)
        lw_add_piece(lw, out, B->tile, d + (uint32_t)(((r - B->r0) * wr + B->x0 - B->xc0) * S),
                     ((B->img * G->h + r) * G->w + B->x0) * c, (B->x1 - B->x0) * c);
    return !lw->failed;
}

/* Phase 2 on one block: the compute set, its workers sharing the block's
 * rows or, with fewer rows than workers, its channels. */
static void grad_compute(lowering *lw, const grad_geom *G, const grad_block *B)
{
    const ops_window *win = &G->win;
    uint64_t c = G->c, S = c * 4, wr = B->xc1 - B->xc0, owl = B->ow1 - B->ow0, ohl = B->oh1 - B->oh0;
    uint64_t rows = B->r1 - B->r0;
    bool by_channel = rows < CODELET_WORKERS;
    /* The block's view: W its received columns, the windows' left edge
     * moved with them; rows keep the image's numbering (X and dY pointers
     * moved back to row 0). */
    kernel_pool_shape sh = { (uint32_t)G->h, (uint32_t)wr, (uint32_t)c, (uint32_t)win->kernel[0],
                             (uint32_t)win->kernel[1], (uint32_t)win->stride[0], (uint32_t)win->stride[1],
                             (uint32_t)win->pad_begin[0],
                             (uint32_t)(win->pad_begin[1] + (int64_t)B->xc0 - (int64_t)(B->ow0 * win->stride[1])),
                             (uint32_t)G->oh, (uint32_t)owl };
    uint32_t in = B->x_at - (uint32_t)(B->xr0 * wr * S);
    uint32_t pix = G->dy_nhwc ? (uint32_t)S : 4u, chs = G->dy_nhwc ? 4u : (uint32_t)(ohl * owl * 4);
    uint32_t dy = B->dy_at - (uint32_t)(B->oh0 * owl * pix);
    worker_set ws;
    if (!lw_workers_begin(lw, B->tile, KERNEL_MAXPOOL_GRAD_WORDS, by_channel ? c : rows, &ws))
        return;
    for (int k = 0; k < CODELET_WORKERS; k++) {
        if (by_channel) {
            kernel_maxpool_grad_record(ws.rec[k], in + (uint32_t)(ws.lo[k] * 4), dy + (uint32_t)(ws.lo[k] * chs),
                                       B->dx_at + (uint32_t)(ws.lo[k] * 4), &sh, (uint32_t)B->oh0,
                                       (uint32_t)B->oh1, (uint32_t)B->r0, (uint32_t)B->r1,
                                       (uint32_t)(ws.hi[k] - ws.lo[k]), pix, chs);
            continue;
        }
        uint64_t i0 = B->r0 + ws.lo[k], i1 = B->r0 + ws.hi[k], o0, o1, a, b;
        reach(win, 0, i0, i1, &o0, &o1, &a, &b);
        kernel_maxpool_grad_record(ws.rec[k], in, dy, B->dx_at + (uint32_t)(ws.lo[k] * wr * S), &sh, (uint32_t)o0,
                                   (uint32_t)o1, (uint32_t)i0, (uint32_t)i1, (uint32_t)c, pix, chs);
    }
    lw_workers_run(lw, B->tile, lw->kernels.vtx_maxpool_grad_nhwc_f32, &ws);
}

bool lw_lower_maxpool_grad(lowering *lw, const graph_node *n, int index)
{
    const graph *g = lw->g;
    int x = n->inputs[0], dy = n->inputs[1], out = n->outputs[0];
    const graph_shape *xs = &g->tensors[x].shape;
    if (g->tensors[x].dtype != GDT_F32 || xs->rank != 4)
        return lw_unsupported(lw, n, index, "only 2-D f32 max-pool gradients are lowered");
    const graph_attr *ka = graph_attr_find(n, "kernel_shape");
    grad_geom G = { .nb = (uint64_t)xs->dims[0], .c = (uint64_t)xs->dims[1], .h = (uint64_t)xs->dims[2],
                    .w = (uint64_t)xs->dims[3] };
    char err[256];
    bool ceil_mode = graph_attr_find(n, "ceil_mode") && graph_attr_int(n, "ceil_mode");
    if (!ka || ka->n != 2 || !ops_window_init(g, n, xs, ka->ints, ceil_mode, &G.win, err, sizeof err))
        return lw_unsupported(lw, n, index, ka && ka->n == 2 ? err : "only 2-D windows are lowered");
    if (G.win.dilation[0] != 1 || G.win.dilation[1] != 1)
        return lw_unsupported(lw, n, index, "dilated pooling is not yet supported");
    if ((uint64_t)G.win.kernel[1] > 4095 || G.c > 4095)
        return lw_unsupported(lw, n, index, "a window wider than 4095 columns or more than 4095 channels");
    G.oh = (uint64_t)G.win.out[0];
    G.ow = (uint64_t)G.win.out[1];
    bool one_pixel = G.h * G.w == 1;
    if (!lw->tensor[x].permuted && !one_pixel)
        return lw_unsupported(lw, n, index, "X must be kept channels-last");
    G.dy_nhwc = lw->tensor[dy].permuted || G.oh * G.ow == 1;
    lw_keep_channels_last(&lw->tensor[out], !one_pixel);
    char what[96];
    snprintf(what, sizeof what, "tensor '%s'", g->tensors[out].name);
    size_t nbl = 0;
    grad_block *bl = grad_blocks(lw, &G, &nbl);
    if (!bl)
        return false;
    for (size_t q = 0; q < nbl && !lw->failed; q++)
        if (!grad_receive(lw, n, &G, &bl[q], what))
            break;
    if (!lw->failed)
        lw_end_phase(lw);
    for (size_t q = 0; q < nbl && !lw->failed; q++)
        grad_compute(lw, &G, &bl[q]);
    free(bl);
    return !lw->failed;
}
