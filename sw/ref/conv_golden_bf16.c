/* conv_golden_bf16.c - the order-matched bf16 convolution golden model; see conv_golden_bf16.h. */
#include "ref/conv_golden_bf16.h"

#include <stdlib.h>

#include "ref/bf16.h"

typedef struct gctx {
    const npu_conv_t *c;
    int kernel, zeropad, OH, OW;
    const int16_t *X, *Wt, *dY;
} gctx_t;

/* Elements as bit patterns; out of range reads +0 (padding, Z's structural zeros). */
static uint16_t x_at(const gctx_t *g, int b, int h, int w, int ch)
{
    const npu_conv_t *c = g->c;
    if (h < 0 || h >= c->H || w < 0 || w >= c->W)
        return 0;
    return (uint16_t)g->X[(((size_t)b * (size_t)c->H + (size_t)h) * (size_t)c->W + (size_t)w) * (size_t)c->C +
                          (size_t)ch];
}

static uint16_t dy_at(const gctx_t *g, int b, int oh, int ow, int f)
{
    if (oh < 0 || oh >= g->OH || ow < 0 || ow >= g->OW)
        return 0;
    return (uint16_t)g->dY[(((size_t)b * (size_t)g->OH + (size_t)oh) * (size_t)g->OW + (size_t)ow) *
                               (size_t)g->c->F + (size_t)f];
}

/* The zero-inserted dY: element (u, v) of image b's Z plane. */
static uint16_t z_at(const gctx_t *g, int b, int u, int v, int f)
{
    int s = g->c->stride;
    if (u < 0 || v < 0 || u % s || v % s)
        return 0;
    return dy_at(g, b, u / s, v / s, f);
}

/* Weight (kh, kw, f, ch); depthwise: the diagonal block's lane, +0 off the diagonal. */
static uint16_t w_at(const gctx_t *g, int kh, int kw, int f, int ch)
{
    const npu_conv_t *c = g->c;
    size_t tap = (size_t)kh * (size_t)c->KW + (size_t)kw;
    if (c->depthwise)
        return f == ch ? (uint16_t)g->Wt[tap * (size_t)c->C + (size_t)ch] : 0;
    return (uint16_t)g->Wt[(tap * (size_t)c->F + (size_t)f) * (size_t)c->C + (size_t)ch];
}

/* The chain's lane count limit: fwd channels, dX filters, dW columns of the dY (Z) view. */
static int lanes(const gctx_t *g)
{
    int s = g->c->stride;
    if (g->kernel == NPU_CONV_FWD)
        return g->c->C;
    if (g->kernel == NPU_CONV_DX)
        return g->c->F;
    return g->zeropad ? s * (g->OW - 1) + 1 : g->OW;
}

/* One wave's psum chain for output o; -1 when its range leaves the tensor. */
static int chain(const gctx_t *g, const int o[4], const npu_cwave_t *w, uint32_t *out)
{
    const npu_conv_t *c = g->c;
    int s = c->stride, d = c->dil, p = c->pad, kh = w->kh, kw = w->kw;
    uint32_t psum = 0; /* the column's chain starts at +0 */
    if (w->r0 < 0 || w->r1 < w->r0 || w->r1 > lanes(g) || kh < 0 || kh >= c->KH || kw < 0 || kw >= c->KW)
        return -1;
    for (int t = w->r0; t < w->r1; t++) {
        uint16_t a, b;
        if (g->kernel == NPU_CONV_FWD) {
            a = x_at(g, o[0], o[1] * s + kh * d - p, o[2] * s + kw * d - p, t);
            b = w_at(g, kh, kw, o[3], t);
        } else if (g->kernel == NPU_CONV_DX) {
            a = z_at(g, o[0], o[1] + p - kh * d, o[2] + p - kw * d, t);
            b = w_at(g, kh, kw, t, o[3]);
        } else if (g->zeropad) {
            a = z_at(g, w->n, w->row, t, o[2]);
            b = x_at(g, w->n, w->row + kh * d - p, t + kw * d - p, o[3]);
        } else {
            a = dy_at(g, w->n, w->row, t, o[2]);
            b = x_at(g, w->n, w->row * s + kh * d - p, t * s + kw * d - p, o[3]);
        }
        psum = npu_bf16_mac(psum, a, b);
    }
    *out = psum;
    return 0;
}

/* Output o from its nw waves: OBUF sums begun by WRITE / ACC, added in order; -1 if malformed. */
static int output(const gctx_t *g, const int o[4], const npu_cwave_t *w, size_t nw, uint32_t *out)
{
    npu_bf16_sum_t s = {0, 0, 0}; /* +0: the output's tile's FILL */
    uint32_t ch;
    for (size_t i = 0; i < nw; i++)
        if (chain(g, o, &w[i], &ch) != 0 || npu_bf16_sum_wave(&s, ch, w[i].start) != 0)
            return -1;
    *out = npu_bf16_sum_end(&s);
    return 0;
}

/* Output o's waves (the list grown as the callback asks) and value into out[idx]. */
static int one(const gctx_t *g, const int o[4], npu_cwaves_fn fn, void *ctx, npu_cwave_t **w, size_t *cap,
               int32_t *out)
{
    size_t nw = fn(ctx, o, *w, *cap);
    uint32_t v;
    if (nw > *cap) {
        npu_cwave_t *nwv = realloc(*w, nw * sizeof **w);
        if (!nwv)
            return -1;
        *w = nwv;
        *cap = nw;
        if (fn(ctx, o, *w, *cap) != nw)
            return -1;
    }
    if (output(g, o, *w, nw, &v) != 0)
        return -1;
    *out = npu_fp32_as_i32(v);
    return 0;
}

int npu_conv_golden_bf16(const npu_conv_t *c, int kernel, int zeropad, const int16_t *X,
                         const int16_t *Wt, const int16_t *dY, int32_t *out, npu_cwaves_fn fn,
                         void *ctx)
{
    gctx_t g = {c, kernel, zeropad, npu_conv_oh(c), npu_conv_ow(c), X, Wt, dY};
    /* output index space: fwd b x OH x OW x F, dX b x H x W x C, dW KH x KW x F x C */
    int n0 = kernel == NPU_CONV_DW ? c->KH : c->batch;
    int n1 = kernel == NPU_CONV_FWD ? g.OH : kernel == NPU_CONV_DX ? c->H : c->KW;
    int n2 = kernel == NPU_CONV_FWD ? g.OW : kernel == NPU_CONV_DX ? c->W : (c->depthwise ? 1 : c->F);
    int n3 = kernel == NPU_CONV_FWD ? c->F : c->C;
    size_t cap = 64, at = 0;
    npu_cwave_t *w = malloc(cap * sizeof *w);
    int rc = w ? 0 : -1;
    for (int a = 0; a < n0 && rc == 0; a++)
        for (int b = 0; b < n1 && rc == 0; b++)
            for (int e = 0; e < n2 && rc == 0; e++)
                for (int f = 0; f < n3 && rc == 0; f++, at++) {
                    /* depthwise dW: f = c of the dense C x C (dY channel c against X channel c) */
                    int o[4] = {a, b, kernel == NPU_CONV_DW && c->depthwise ? f : e, f};
                    rc = one(&g, o, fn, ctx, &w, &cap, &out[at]);
                }
    free(w);
    return rc;
}
