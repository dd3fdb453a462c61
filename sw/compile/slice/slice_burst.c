/* slice_burst.c - exact bursts of DMA transfers on dense tensors; see slice_burst.h. */
#include "compile/slice/slice_burst.h"

#include <string.h>

static uint64_t cdiv64(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

npu_burst_geom_t npu_slice_geom(const npu_cfg_t *cfg)
{
    npu_burst_geom_t g;
    g.beat = (unsigned)npu_cfg_beat(cfg);
    g.max_beats = cfg->max_burst_beats > 0 ? (unsigned)cfg->max_burst_beats : 1u;
    return g;
}

/* Beats b0..b1 of a run: the greedy split restarts at every page line, so each page touched
 * contributes ceil(its beats / max) bursts; full middle pages all contribute the same. */
void npu_slice_run(const npu_burst_geom_t *g, uint64_t addr, uint64_t len, npu_bursts_t *acc)
{
    uint64_t B = g->beat, P = NPU_SLICE_PAGE / g->beat, mx = g->max_beats;
    uint64_t b0, b1, p0, p1, n;
    if (len == 0)
        return;
    b0 = addr / B;
    b1 = (addr + len - 1) / B;
    p0 = b0 / P;
    p1 = b1 / P;
    if (p0 == p1)
        n = cdiv64(b1 - b0 + 1, mx);
    else
        n = cdiv64((p0 + 1) * P - b0, mx) + (p1 - p0 - 1) * cdiv64(P, mx) + cdiv64(b1 - p1 * P + 1, mx);
    acc->bursts += n;
    acc->beats += b1 - b0 + 1;
    acc->bytes += len;
    acc->runs++;
}

void npu_slice_xfer(const npu_burst_geom_t *g, uint64_t addr, uint64_t rows, uint64_t row_bytes,
                    uint64_t stride, npu_bursts_t *acc)
{
    if (rows == 0 || row_bytes == 0)
        return;
    acc->xfers++;
    if (stride == row_bytes || rows == 1) {
        npu_slice_run(g, addr, rows * row_bytes, acc);
        return;
    }
    for (uint64_t r = 0; r < rows; r++)
        npu_slice_run(g, addr + r * stride, row_bytes, acc);
}

int npu_slice_view(const npu_burst_geom_t *g, const npu_slice_view_t *v, npu_bursts_t *acc)
{
    int i, nd = v->nd;
    uint64_t run, rows = 1, stride = 0, idx[NPU_SLICE_MAX_DIMS];
    if (nd < 1 || nd > NPU_SLICE_MAX_DIMS || v->ebytes < 1 || v->dim[nd - 1].stride != 1)
        return -1;
    for (i = 0; i < nd; i++)
        if (v->dim[i].count < 1 || v->dim[i].stride < 0)
            return -1;
    /* merge contiguous dims from the inside out */
    run = (uint64_t)v->dim[nd - 1].count * v->ebytes;
    for (i = nd - 2; i >= 0; i--) {
        if (v->dim[i].count == 1)
            continue;
        if ((uint64_t)v->dim[i].stride * v->ebytes != run)
            break;
        run *= (uint64_t)v->dim[i].count;
    }
    if (i >= 0) { /* the transfer's rows, and the outer dims that continue them at the same stride */
        rows = (uint64_t)v->dim[i].count;
        stride = (uint64_t)v->dim[i].stride * v->ebytes;
        for (i--; i >= 0; i--) {
            if (v->dim[i].count == 1)
                continue;
            if ((uint64_t)v->dim[i].stride * v->ebytes != rows * stride)
                break;
            rows *= (uint64_t)v->dim[i].count;
        }
        i++;
    }
    /* the outer dims 0..i-1 enumerate the transfers (odometer, outermost slowest) */
    memset(idx, 0, sizeof idx);
    for (;;) {
        uint64_t a = v->base;
        int d;
        for (d = 0; d < i; d++)
            a += idx[d] * (uint64_t)v->dim[d].stride * v->ebytes;
        npu_slice_xfer(g, a, rows, run, stride, acc);
        for (d = i - 1; d >= 0; d--) {
            if (++idx[d] < (uint64_t)v->dim[d].count)
                break;
            idx[d] = 0;
        }
        if (d < 0)
            return 0;
    }
}

int npu_slice_matrix_tile(const npu_burst_geom_t *g, uint64_t base, unsigned ebytes, int64_t R,
                          int64_t C, int64_t r0, int64_t c0, int64_t tr, int64_t tc, npu_bursts_t *acc)
{
    npu_slice_view_t v;
    if (r0 < 0 || c0 < 0 || tr < 1 || tc < 1 || r0 + tr > R || c0 + tc > C)
        return -1;
    v.base = base + (uint64_t)(r0 * C + c0) * ebytes;
    v.ebytes = ebytes;
    v.nd = 2;
    v.dim[0].count = tr;
    v.dim[0].stride = C;
    v.dim[1].count = tc;
    v.dim[1].stride = 1;
    return npu_slice_view(g, &v, acc);
}

int npu_slice_image_tile(const npu_burst_geom_t *g, uint64_t base, unsigned ebytes, int layout,
                         const npu_slice_box_t *e, const npu_slice_box_t *o,
                         const npu_slice_box_t *t, npu_bursts_t *acc)
{
    npu_slice_view_t v;
    int64_t sn, sh, sw, sc;
    if (o->n < 0 || o->h < 0 || o->w < 0 || o->c < 0 || t->n < 1 || t->h < 1 || t->w < 1 || t->c < 1 ||
        o->n + t->n > e->n || o->h + t->h > e->h || o->w + t->w > e->w || o->c + t->c > e->c)
        return -1;
    if (layout == NPU_SLICE_NHWC) {
        sc = 1;
        sw = e->c;
        sh = e->w * e->c;
        sn = e->h * sh;
    } else if (layout == NPU_SLICE_NCHW) {
        sw = 1;
        sh = e->w;
        sc = e->h * e->w;
        sn = e->c * sc;
    } else {
        return -1;
    }
    v.base = base + (uint64_t)(o->n * sn + o->h * sh + o->w * sw + o->c * sc) * ebytes;
    v.ebytes = ebytes;
    v.nd = 4;
    v.dim[0].count = t->n;
    v.dim[0].stride = sn;
    if (layout == NPU_SLICE_NHWC) {
        v.dim[1] = (npu_slice_dim_t){t->h, sh};
        v.dim[2] = (npu_slice_dim_t){t->w, sw};
        v.dim[3] = (npu_slice_dim_t){t->c, sc};
    } else {
        v.dim[1] = (npu_slice_dim_t){t->c, sc};
        v.dim[2] = (npu_slice_dim_t){t->h, sh};
        v.dim[3] = (npu_slice_dim_t){t->w, sw};
    }
    return npu_slice_view(g, &v, acc);
}
