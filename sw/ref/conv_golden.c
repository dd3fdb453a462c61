/* conv_golden.c - convolution golden models and MAC counts; see conv_golden.h. */
#include "ref/conv_golden.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* uint32 -> int32 two's complement without implementation-defined conversion (as golden.c). */
static int32_t to_i32(uint32_t u)
{
    return u <= 0x7FFFFFFFu ? (int32_t)u : (int32_t)(u - 0x80000000u) - 0x7FFFFFFF - 1;
}

/* |a*b| <= 2^30 fits in int32; the sum wraps in uint32. */
static uint32_t mul(int16_t a, int16_t b)
{
    return (uint32_t)((int32_t)a * (int32_t)b);
}

static void *xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz);
    if (!p) {
        fprintf(stderr, "conv_golden: out of memory (%zu x %zu bytes)\n", n, sz);
        abort();
    }
    return p;
}

/* Geometry shorthands of one layer. */
typedef struct geo {
    int B, C, H, W, F, KH, KW, s, p, d, dw, OH, OW;
    size_t fw; /* filters per weight-tap row: F, or 1 for depthwise (weights [KH][KW][C]) */
} geo_t;

static geo_t geo(const npu_conv_t *c)
{
    geo_t g;
    g.B = c->batch;
    g.C = c->C;
    g.H = c->H;
    g.W = c->W;
    g.F = c->F;
    g.KH = c->KH;
    g.KW = c->KW;
    g.s = c->stride;
    g.p = c->pad;
    g.d = c->dil;
    g.dw = c->depthwise;
    g.OH = npu_conv_oh(c);
    g.OW = npu_conv_ow(c);
    g.fw = g.dw ? 1u : (size_t)g.F;
    return g;
}

static size_t xi(const geo_t *g, int b, int h, int w, int ch)
{
    return (((size_t)b * (size_t)g->H + (size_t)h) * (size_t)g->W + (size_t)w) * (size_t)g->C + (size_t)ch;
}

static size_t yi(const geo_t *g, int b, int oh, int ow, int f)
{
    return (((size_t)b * (size_t)g->OH + (size_t)oh) * (size_t)g->OW + (size_t)ow) * (size_t)g->F + (size_t)f;
}

static size_t wi(const geo_t *g, int kh, int kw, int f, int ch)
{
    return (((size_t)kh * (size_t)g->KW + (size_t)kw) * g->fw + (size_t)(g->dw ? 0 : f)) * (size_t)g->C +
           (size_t)ch;
}

/* Channels paired with filter f: [*c0, *c1). */
static void chans(const geo_t *g, int f, int *c0, int *c1)
{
    *c0 = g->dw ? f : 0;
    *c1 = g->dw ? f + 1 : g->C;
}

void npu_conv_fwd_golden(const npu_conv_t *c, const int16_t *X, const int16_t *Wt, int32_t *Y)
{
    geo_t g = geo(c);
    for (int b = 0; b < g.B; b++)
        for (int oh = 0; oh < g.OH; oh++)
            for (int ow = 0; ow < g.OW; ow++)
                for (int f = 0; f < g.F; f++) {
                    uint32_t acc = 0;
                    int c0, c1;
                    chans(&g, f, &c0, &c1);
                    for (int kh = 0; kh < g.KH; kh++) {
                        int ih = oh * g.s + kh * g.d - g.p;
                        if (ih < 0 || ih >= g.H)
                            continue;
                        for (int kw = 0; kw < g.KW; kw++) {
                            int iw = ow * g.s + kw * g.d - g.p;
                            if (iw < 0 || iw >= g.W)
                                continue;
                            for (int ch = c0; ch < c1; ch++)
                                acc += mul(X[xi(&g, b, ih, iw, ch)], Wt[wi(&g, kh, kw, f, ch)]);
                        }
                    }
                    Y[yi(&g, b, oh, ow, f)] = to_i32(acc);
                }
}

void npu_conv_dx_golden(const npu_conv_t *c, const int16_t *dY, const int16_t *Wt, int32_t *dX)
{
    geo_t g = geo(c);
    size_t nx = npu_conv_x_elems(c);
    uint32_t *acc = xcalloc(nx, sizeof *acc);
    for (int b = 0; b < g.B; b++)
        for (int oh = 0; oh < g.OH; oh++)
            for (int ow = 0; ow < g.OW; ow++)
                for (int f = 0; f < g.F; f++) {
                    int16_t e = dY[yi(&g, b, oh, ow, f)];
                    int c0, c1;
                    chans(&g, f, &c0, &c1);
                    for (int kh = 0; kh < g.KH; kh++) {
                        int ih = oh * g.s + kh * g.d - g.p;
                        if (ih < 0 || ih >= g.H)
                            continue;
                        for (int kw = 0; kw < g.KW; kw++) {
                            int iw = ow * g.s + kw * g.d - g.p;
                            if (iw < 0 || iw >= g.W)
                                continue;
                            for (int ch = c0; ch < c1; ch++)
                                acc[xi(&g, b, ih, iw, ch)] += mul(Wt[wi(&g, kh, kw, f, ch)], e);
                        }
                    }
                }
    for (size_t i = 0; i < nx; i++)
        dX[i] = to_i32(acc[i]);
    free(acc);
}

void npu_conv_dw_golden(const npu_conv_t *c, const int16_t *X, const int16_t *dY, int32_t *dW)
{
    geo_t g = geo(c);
    for (int kh = 0; kh < g.KH; kh++)
        for (int kw = 0; kw < g.KW; kw++)
            for (int f = 0; f < g.F; f++) {
                int c0, c1;
                chans(&g, f, &c0, &c1);
                for (int ch = c0; ch < c1; ch++) {
                    uint32_t acc = 0;
                    for (int b = 0; b < g.B; b++)
                        for (int oh = 0; oh < g.OH; oh++) {
                            int ih = oh * g.s + kh * g.d - g.p;
                            if (ih < 0 || ih >= g.H)
                                continue;
                            for (int ow = 0; ow < g.OW; ow++) {
                                int iw = ow * g.s + kw * g.d - g.p;
                                if (iw < 0 || iw >= g.W)
                                    continue;
                                acc += mul(dY[yi(&g, b, oh, ow, f)], X[xi(&g, b, ih, iw, ch)]);
                            }
                        }
                    dW[wi(&g, kh, kw, f, ch)] = to_i32(acc);
                }
            }
}

/*
 * dX zeropad: per image, the explicit plane Zp (ZH x ZW x F) of the zero-inserted, zero-padded dY,
 * with a mask of its real elements; dY[oh][ow] sits at (oh*s + tp, ow*s + tl), tp = d(KH-1) - p,
 * tl = d(KW-1) - p (negative: the plane is cropped at the top / left, and elements that land
 * outside it feed no dX pixel). Then a stride-1 convolution with taps d apart and the rotated filter.
 */
void npu_conv_dx_zeropad_golden(const npu_conv_t *c, const int16_t *dY, const int16_t *Wt, int32_t *dX,
                                uint64_t *total_macs, uint64_t *zero_macs)
{
    geo_t g = geo(c);
    int ZH = g.H + g.d * (g.KH - 1), ZW = g.W + g.d * (g.KW - 1);
    int tp = g.d * (g.KH - 1) - g.p, tl = g.d * (g.KW - 1) - g.p;
    size_t np = (size_t)ZH * (size_t)ZW * (size_t)g.F;
    int16_t *Zp = xcalloc(np, sizeof *Zp);
    unsigned char *real = xcalloc(np, 1);
    uint32_t *acc = xcalloc((size_t)g.C, sizeof *acc);
    uint64_t total = 0, zero = 0;
    for (int b = 0; b < g.B; b++) {
        memset(Zp, 0, np * sizeof *Zp);
        memset(real, 0, np);
        for (int oh = 0; oh < g.OH; oh++) {
            int u = oh * g.s + tp;
            if (u < 0 || u >= ZH)
                continue;
            for (int ow = 0; ow < g.OW; ow++) {
                int v = ow * g.s + tl;
                if (v < 0 || v >= ZW)
                    continue;
                for (int f = 0; f < g.F; f++) {
                    size_t z = ((size_t)u * (size_t)ZW + (size_t)v) * (size_t)g.F + (size_t)f;
                    Zp[z] = dY[yi(&g, b, oh, ow, f)];
                    real[z] = 1;
                }
            }
        }
        for (int ih = 0; ih < g.H; ih++)
            for (int iw = 0; iw < g.W; iw++) {
                memset(acc, 0, (size_t)g.C * sizeof *acc);
                for (int rh = 0; rh < g.KH; rh++)       /* rotated tap: kh = KH-1-rh */
                    for (int rw = 0; rw < g.KW; rw++) {
                        size_t zrow = ((size_t)(ih + rh * g.d) * (size_t)ZW + (size_t)(iw + rw * g.d)) *
                                      (size_t)g.F;
                        for (int f = 0; f < g.F; f++) {
                            int16_t e = Zp[zrow + (size_t)f];
                            int c0, c1;
                            chans(&g, f, &c0, &c1);
                            total += (uint64_t)(c1 - c0);
                            if (!real[zrow + (size_t)f])
                                zero += (uint64_t)(c1 - c0);
                            for (int ch = c0; ch < c1; ch++)
                                acc[ch] += mul(e, Wt[wi(&g, g.KH - 1 - rh, g.KW - 1 - rw, f, ch)]);
                        }
                    }
                for (int ch = 0; ch < g.C; ch++)
                    dX[xi(&g, b, ih, iw, ch)] = to_i32(acc[ch]);
            }
    }
    free(Zp);
    free(real);
    free(acc);
    if (total_macs)
        *total_macs = total;
    if (zero_macs)
        *zero_macs = zero;
}

/*
 * dW zeropad: per image, the dilated dY plane Zd (DH x DW x F, mask of real elements) and the
 * zero-padded input Xp ((H+2p) x (W+2p) x C); dW[kh][kw][f][c] += sum_{u,v} Zd[u][v][f] *
 * Xp[u + kh*d][v + kw*d][c] (u + kh*d <= s(OH-1) + d(KH-1) <= H + 2p - 1: always inside Xp).
 */
void npu_conv_dw_zeropad_golden(const npu_conv_t *c, const int16_t *X, const int16_t *dY, int32_t *dW,
                                uint64_t *total_macs, uint64_t *zero_macs)
{
    geo_t g = geo(c);
    int DH = g.s * (g.OH - 1) + 1, DW = g.s * (g.OW - 1) + 1;
    int PH = g.H + 2 * g.p, PW = g.W + 2 * g.p;
    size_t nz = (size_t)DH * (size_t)DW * (size_t)g.F, nxp = (size_t)PH * (size_t)PW * (size_t)g.C;
    size_t nw = npu_conv_w_elems(c);
    int16_t *Zd = xcalloc(nz, sizeof *Zd), *Xp = xcalloc(nxp, sizeof *Xp);
    unsigned char *real = xcalloc(nz, 1);
    uint32_t *acc = xcalloc(nw, sizeof *acc);
    uint64_t total = 0, zero = 0;
    for (int b = 0; b < g.B; b++) {
        memset(Zd, 0, nz * sizeof *Zd);
        memset(real, 0, nz);
        for (int oh = 0; oh < g.OH; oh++)
            for (int ow = 0; ow < g.OW; ow++)
                for (int f = 0; f < g.F; f++) {
                    size_t z = ((size_t)(oh * g.s) * (size_t)DW + (size_t)(ow * g.s)) * (size_t)g.F + (size_t)f;
                    Zd[z] = dY[yi(&g, b, oh, ow, f)];
                    real[z] = 1;
                }
        for (int h = 0; h < g.H; h++)
            for (int w = 0; w < g.W; w++)
                memcpy(&Xp[((size_t)(h + g.p) * (size_t)PW + (size_t)(w + g.p)) * (size_t)g.C],
                       &X[xi(&g, b, h, w, 0)], (size_t)g.C * sizeof *Xp);
        for (int kh = 0; kh < g.KH; kh++)
            for (int kw = 0; kw < g.KW; kw++)
                for (int f = 0; f < g.F; f++) {
                    int c0, c1;
                    chans(&g, f, &c0, &c1);
                    for (int ch = c0; ch < c1; ch++) {
                        uint32_t a = 0;
                        for (int u = 0; u < DH; u++)
                            for (int v = 0; v < DW; v++) {
                                size_t z = ((size_t)u * (size_t)DW + (size_t)v) * (size_t)g.F + (size_t)f;
                                size_t x = ((size_t)(u + kh * g.d) * (size_t)PW + (size_t)(v + kw * g.d)) *
                                               (size_t)g.C + (size_t)ch;
                                total++;
                                zero += !real[z];
                                a += mul(Zd[z], Xp[x]);
                            }
                        acc[wi(&g, kh, kw, f, ch)] += a;
                    }
                }
    }
    for (size_t i = 0; i < nw; i++)
        dW[i] = to_i32(acc[i]);
    free(Zd);
    free(Xp);
    free(real);
    free(acc);
    if (total_macs)
        *total_macs = total;
    if (zero_macs)
        *zero_macs = zero;
}

/* Vh: #(o < O, k < K) with 0 <= o*s + k*d - p < n (the (output, tap) pairs reading a real input). */
static uint64_t pairs_from_out(int n, int O, int K, int s, int p, int d)
{
    uint64_t cnt = 0;
    for (int k = 0; k < K; k++) {
        /* o*s >= p - k*d and o*s <= n - 1 + p - k*d, 0 <= o < O: counted per tap in closed form */
        long long lo = (long long)p - (long long)k * d, hi = (long long)n - 1 + p - (long long)k * d;
        long long omin = lo <= 0 ? 0 : (lo + s - 1) / s, omax;
        if (hi < 0)
            continue;
        omax = hi / s;
        if (omax > O - 1)
            omax = O - 1;
        if (omax >= omin)
            cnt += (uint64_t)(omax - omin + 1);
    }
    return cnt;
}

/* Uh: #(i < n, k < K) with t = i + p - k*d, t % s == 0 and 0 <= t/s < O (mathematical division). */
static uint64_t pairs_from_in(int n, int O, int K, int s, int p, int d)
{
    uint64_t cnt = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < K; k++) {
            long long t = (long long)i + p - (long long)k * d;
            if (t >= 0 && t % s == 0 && t / s < O)
                cnt++;
        }
    return cnt;
}

npu_conv_macs_t npu_conv_macs(const npu_conv_t *c, int kernel, int dataflow)
{
    npu_conv_macs_t m = {0, 0, 0};
    uint64_t P, taps;
    int OH, OW;
    if (npu_conv_check(c, NULL, 0) || kernel < NPU_CONV_FWD || kernel > NPU_CONV_DW ||
        (dataflow != NPU_CONV_ZEROPAD && dataflow != NPU_CONV_ECOFLOW))
        return m;
    OH = npu_conv_oh(c);
    OW = npu_conv_ow(c);
    P = (uint64_t)c->batch * (uint64_t)c->C * (uint64_t)(c->depthwise ? 1 : c->F);
    taps = (uint64_t)c->KH * (uint64_t)c->KW;
    if (kernel == NPU_CONV_FWD || (kernel == NPU_CONV_DW && dataflow == NPU_CONV_ECOFLOW)) {
        uint64_t vh = pairs_from_out(c->H, OH, c->KH, c->stride, c->pad, c->dil);
        uint64_t vw = pairs_from_out(c->W, OW, c->KW, c->stride, c->pad, c->dil);
        m.useful = vh * vw * P;
        m.total = kernel == NPU_CONV_FWD ? (uint64_t)OH * (uint64_t)OW * taps * P : m.useful;
    } else if (kernel == NPU_CONV_DX) {
        uint64_t uh = pairs_from_in(c->H, OH, c->KH, c->stride, c->pad, c->dil);
        uint64_t uw = pairs_from_in(c->W, OW, c->KW, c->stride, c->pad, c->dil);
        m.useful = uh * uw * P;
        m.total = dataflow == NPU_CONV_ZEROPAD ? (uint64_t)c->H * (uint64_t)c->W * taps * P : m.useful;
    } else { /* dW zeropad */
        uint64_t DH = (uint64_t)c->stride * (uint64_t)(OH - 1) + 1, DW = (uint64_t)c->stride * (uint64_t)(OW - 1) + 1;
        m.total = DH * DW * taps * P;
        m.useful = (uint64_t)OH * (uint64_t)OW * taps * P;
    }
    m.zero = m.total - m.useful;
    return m;
}

npu_pad_counts_t npu_pad_counts(int N, int K, int S)
{
    npu_pad_counts_t r = {0, 0, 0};
    uint64_t D, k1;
    if (N < 1 || K < 1 || S < 1)
        return r;
    D = (uint64_t)S * (uint64_t)(N - 1) + 1;
    k1 = (uint64_t)(K - 1);
    r.inner = D * D - (uint64_t)N * (uint64_t)N;
    r.outer = 4 * k1 * D + 4 * k1 * k1;
    r.P = D + 2 * k1;
    return r;
}
