/* test_conv_golden.c - convolution layer description, golden models (adjoint identity, im2col +
 * GEMM reference, explicit zero-padded forms) and the MAC / padding counts (brief 002 sections 2
 * and 7, checks 1, 2, 4, 6, 7). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/conv_golden.h"
#include "compile/conv/conv_layer.h"
#include "ref/golden.h"
#include "test_cfgs.h"

static npu_conv_t mk(int batch, int C, int H, int W, int F, int KH, int KW, int s, int p, int d, int dw)
{
    npu_conv_t c;
    c.batch = batch;
    c.C = C;
    c.H = H;
    c.W = W;
    c.F = F;
    c.KH = KH;
    c.KW = KW;
    c.stride = s;
    c.pad = p;
    c.dil = d;
    c.depthwise = dw;
    return c;
}

static const char *desc(const npu_conv_t *c)
{
    static char buf[96];
    npu_conv_str(c, buf, sizeof buf);
    return buf;
}

/* small values in [-8, 8] (no int32 wrap-around in any result) or full int16 */
static void fill(int16_t *v, size_t n, uint64_t *s, int small)
{
    for (size_t i = 0; i < n; i++)
        v[i] = small ? (int16_t)((int)(test_rand(s) % 17) - 8)
                     : (int16_t)((int)(test_rand(s) % 65536) - 32768);
}

typedef struct bufs {
    int16_t *X, *Wt, *dY;
    int32_t *Y, *dX, *dW, *Y2, *dX2, *dW2;
} bufs_t;

static bufs_t alloc_bufs(const npu_conv_t *c)
{
    bufs_t b;
    size_t nx = npu_conv_x_elems(c), ny = npu_conv_y_elems(c), nw = npu_conv_w_elems(c);
    b.X = malloc(nx * sizeof *b.X);
    b.Wt = malloc(nw * sizeof *b.Wt);
    b.dY = malloc(ny * sizeof *b.dY);
    b.Y = malloc(ny * sizeof *b.Y);
    b.Y2 = malloc(ny * sizeof *b.Y2);
    b.dX = malloc(nx * sizeof *b.dX);
    b.dX2 = malloc(nx * sizeof *b.dX2);
    b.dW = malloc(nw * sizeof *b.dW);
    b.dW2 = malloc(nw * sizeof *b.dW2);
    cr_assert(b.X && b.Wt && b.dY && b.Y && b.Y2 && b.dX && b.dX2 && b.dW && b.dW2);
    /* poison: every golden must write every element */
    memset(b.Y, 0xA5, ny * sizeof *b.Y);
    memset(b.dX, 0xA5, nx * sizeof *b.dX);
    memset(b.dW, 0xA5, nw * sizeof *b.dW);
    memset(b.Y2, 0x5A, ny * sizeof *b.Y2);
    memset(b.dX2, 0x5A, nx * sizeof *b.dX2);
    memset(b.dW2, 0x5A, nw * sizeof *b.dW2);
    return b;
}

static void free_bufs(bufs_t *b)
{
    free(b->X);
    free(b->Wt);
    free(b->dY);
    free(b->Y);
    free(b->Y2);
    free(b->dX);
    free(b->dX2);
    free(b->dW);
    free(b->dW2);
}

/* ------------------------------------------------------------------ 1. adjoint identity */

static void check_adjoint(const npu_conv_t *c, uint64_t *seed)
{
    size_t nx = npu_conv_x_elems(c), ny = npu_conv_y_elems(c), nw = npu_conv_w_elems(c);
    bufs_t b = alloc_bufs(c);
    int64_t ye = 0, xdx = 0, wdw = 0;
    fill(b.X, nx, seed, 1);
    fill(b.Wt, nw, seed, 1);
    fill(b.dY, ny, seed, 1);
    npu_conv_fwd_golden(c, b.X, b.Wt, b.Y);
    npu_conv_dx_golden(c, b.dY, b.Wt, b.dX);
    npu_conv_dw_golden(c, b.X, b.dY, b.dW);
    for (size_t i = 0; i < ny; i++)
        ye += (int64_t)b.Y[i] * b.dY[i];
    for (size_t i = 0; i < nx; i++)
        xdx += (int64_t)b.X[i] * b.dX[i];
    for (size_t i = 0; i < nw; i++)
        wdw += (int64_t)b.Wt[i] * b.dW[i];
    cr_assert_eq(ye, xdx, "%s: <Y,dY> = %lld, <X,dX> = %lld", desc(c), (long long)ye, (long long)xdx);
    cr_assert_eq(ye, wdw, "%s: <Y,dY> = %lld, <W,dW> = %lld", desc(c), (long long)ye, (long long)wdw);
    free_bufs(&b);
}

Test(conv_golden, adjoint_identity_sweep)
{
    uint64_t s = 2022;
    int ran = 0, strided = 0, padded = 0, dilated = 0, dw = 0;
    /* every square N <= 16, K <= 11, S <= 8, pad 0..3, dil 1..2; channels 1..5, batch 1..2 and
     * depthwise drawn */
    for (int N = 1; N <= 16; N++)
        for (int K = 1; K <= 11; K++)
            for (int S = 1; S <= 8; S++)
                for (int p = 0; p <= 3; p++)
                    for (int d = 1; d <= 2; d++) {
                        int C = 1 + (int)(test_rand(&s) % 5), F = 1 + (int)(test_rand(&s) % 5);
                        int B = 1 + (int)(test_rand(&s) % 2), isdw = test_rand(&s) % 4 == 0;
                        npu_conv_t c = mk(B, C, N, N, isdw ? C : F, K, K, S, p, d, isdw);
                        if (npu_conv_check(&c, NULL, 0))
                            continue; /* d(K-1) >= N + 2p */
                        check_adjoint(&c, &s);
                        ran++;
                        strided += c.stride > 1;
                        padded += c.pad > 0;
                        dilated += c.dil > 1;
                        dw += c.depthwise;
                    }
    /* non-square images and kernels */
    for (int it = 0; it < 150; it++) {
        int isdw = it % 3 == 0, C = 1 + (int)(test_rand(&s) % 5);
        npu_conv_t c = mk(1 + (int)(test_rand(&s) % 2), C, 1 + (int)(test_rand(&s) % 16),
                          1 + (int)(test_rand(&s) % 16), isdw ? C : 1 + (int)(test_rand(&s) % 5),
                          1 + (int)(test_rand(&s) % 7), 1 + (int)(test_rand(&s) % 7),
                          1 + (int)(test_rand(&s) % 8), (int)(test_rand(&s) % 4),
                          1 + (int)(test_rand(&s) % 3), isdw);
        if (npu_conv_check(&c, NULL, 0))
            continue;
        check_adjoint(&c, &s);
        ran++;
    }
    cr_assert_gt(ran, 7500, "only %d legal shapes", ran);
    cr_assert(strided > 6000 && padded > 6000 && dilated > 3000 && dw > 1500, "%d %d %d %d", strided,
              padded, dilated, dw);
}

/* ------------------------------------------------------------------ 2. im2col + GEMM reference */

static void check_im2col(const npu_conv_t *c, uint64_t seed)
{
    int OH = npu_conv_oh(c), OW = npu_conv_ow(c);
    int M = c->batch * OH * OW, taps = c->KH * c->KW;
    int Kd = c->depthwise ? taps : taps * c->C;
    size_t nx = npu_conv_x_elems(c), ny = npu_conv_y_elems(c), nw = npu_conv_w_elems(c);
    bufs_t b = alloc_bufs(c);
    int16_t *A = calloc((size_t)M * (size_t)Kd, sizeof *A);
    int16_t *Bm = calloc((size_t)Kd * (size_t)c->F, sizeof *Bm);
    int row = -1, col = -1;
    int32_t gv = 0, ev = 0;
    cr_assert(A && Bm);
    fill(b.X, nx, &seed, 0);
    fill(b.Wt, nw, &seed, 0);
    npu_conv_fwd_golden(c, b.X, b.Wt, b.Y);
    for (int ch = 0; ch < (c->depthwise ? c->C : 1); ch++) {
        /* A: one row per output pixel, one column per (kh, kw[, c]) */
        for (int bb = 0; bb < c->batch; bb++)
            for (int oh = 0; oh < OH; oh++)
                for (int ow = 0; ow < OW; ow++) {
                    int m = (bb * OH + oh) * OW + ow;
                    for (int kh = 0; kh < c->KH; kh++)
                        for (int kw = 0; kw < c->KW; kw++) {
                            int ih = oh * c->stride + kh * c->dil - c->pad;
                            int iw = ow * c->stride + kw * c->dil - c->pad;
                            int inr = ih >= 0 && ih < c->H && iw >= 0 && iw < c->W;
                            int nc = c->depthwise ? 1 : c->C;
                            for (int k = 0; k < nc; k++) {
                                int cc = c->depthwise ? ch : k;
                                size_t xo = (((size_t)bb * c->H + (size_t)(inr ? ih : 0)) * c->W +
                                             (size_t)(inr ? iw : 0)) * c->C + (size_t)cc;
                                A[(size_t)m * Kd + (size_t)((kh * c->KW + kw) * nc + k)] =
                                    inr ? b.X[xo] : 0;
                            }
                        }
                }
        if (c->depthwise) {
            /* B: KH*KW x 1 column of channel ch; result column ch of Y (pitch F) */
            for (int t = 0; t < taps; t++)
                Bm[t] = b.Wt[(size_t)t * c->C + (size_t)ch];
            npu_golden_gemm(M, 1, Kd, A, (size_t)Kd, 0, Bm, 1, 0, b.Y2 + ch, (size_t)c->F);
        } else {
            /* B stored transposed: F rows of (kh, kw, c) */
            for (int f = 0; f < c->F; f++)
                for (int t = 0; t < taps; t++)
                    for (int k = 0; k < c->C; k++)
                        Bm[(size_t)f * Kd + (size_t)(t * c->C + k)] =
                            b.Wt[((size_t)t * c->F + (size_t)f) * c->C + (size_t)k];
            npu_golden_gemm(M, c->F, Kd, A, (size_t)Kd, 0, Bm, (size_t)Kd, 1, b.Y2, (size_t)c->F);
        }
    }
    cr_assert_eq(npu_compare_i32(M, c->F, b.Y, (size_t)c->F, b.Y2, (size_t)c->F, &row, &col, &gv, &ev), 0u,
                 "%s: Y row %d f %d = %d, im2col says %d", desc(c), row, col, gv, ev);
    (void)ny;
    free(A);
    free(Bm);
    free_bufs(&b);
}

Test(conv_golden, fwd_matches_im2col_gemm)
{
    check_im2col(&(npu_conv_t){1, 3, 9, 9, 4, 3, 3, 1, 1, 1, 0}, 1);
    check_im2col(&(npu_conv_t){2, 5, 13, 11, 3, 5, 3, 2, 2, 1, 0}, 2);
    check_im2col(&(npu_conv_t){1, 7, 16, 16, 6, 3, 3, 2, 0, 2, 0}, 3);
    check_im2col(&(npu_conv_t){2, 4, 12, 15, 4, 3, 5, 3, 3, 1, 1}, 4); /* depthwise */
    check_im2col(&(npu_conv_t){1, 16, 8, 8, 5, 1, 1, 1, 0, 1, 0}, 5);  /* 1x1 */
    check_im2col(&(npu_conv_t){1, 2, 27, 27, 2, 11, 11, 4, 0, 1, 0}, 6);
    check_im2col(&(npu_conv_t){1, 3, 6, 6, 2, 2, 2, 8, 3, 2, 0}, 7);    /* s > K: skipped pixels */
    check_im2col(&(npu_conv_t){1, 64, 7, 7, 3, 3, 3, 1, 1, 1, 0}, 8);   /* long sums: wrap-around */
}

Test(conv_golden, wrap_around_exact)
{
    /* all operands -32768: each product is 2^30, four of them wrap to 0, three to -2^30 */
    npu_conv_t c = mk(1, 4, 1, 1, 1, 1, 1, 1, 0, 1, 0);
    int16_t X[4] = {-32768, -32768, -32768, -32768}, Wt[4] = {-32768, -32768, -32768, -32768};
    int16_t dY[1] = {-32768};
    int32_t Y[1], dW[4];
    npu_conv_fwd_golden(&c, X, Wt, Y);
    cr_assert_eq(Y[0], 0);
    c.C = 3;
    npu_conv_fwd_golden(&c, X, Wt, Y);
    cr_assert_eq(Y[0], -1073741824);
    /* dW over a batch of 2: 2 * 2^30 = 2^31 wraps to INT32_MIN */
    c = mk(2, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0);
    {
        int16_t dY2[2] = {-32768, -32768};
        npu_conv_dw_golden(&c, X, dY2, dW);
        cr_assert_eq(dW[0], INT32_MIN);
        npu_conv_dw_zeropad_golden(&c, X, dY2, dW, NULL, NULL);
        cr_assert_eq(dW[0], INT32_MIN);
    }
    (void)dY;
}

/* ------------------------------------------------------------------ 3. zeropad forms and counts */

/* independent counts over the scatter form: (b, oh, ow, kh, kw) with the input pixel in range */
static uint64_t scatter_pairs(const npu_conv_t *c)
{
    uint64_t n = 0, fc = (uint64_t)c->C * (uint64_t)(c->depthwise ? 1 : c->F);
    int OH = npu_conv_oh(c), OW = npu_conv_ow(c);
    for (int b = 0; b < c->batch; b++)
        for (int oh = 0; oh < OH; oh++)
            for (int ow = 0; ow < OW; ow++)
                for (int kh = 0; kh < c->KH; kh++)
                    for (int kw = 0; kw < c->KW; kw++) {
                        int ih = oh * c->stride + kh * c->dil - c->pad;
                        int iw = ow * c->stride + kw * c->dil - c->pad;
                        if (ih >= 0 && ih < c->H && iw >= 0 && iw < c->W)
                            n += fc;
                    }
    return n;
}

static void check_zeropad(const npu_conv_t *c, uint64_t *seed)
{
    size_t nx = npu_conv_x_elems(c), ny = npu_conv_y_elems(c), nw = npu_conv_w_elems(c);
    bufs_t b = alloc_bufs(c);
    uint64_t tot = 0, zer = 0, fc = (uint64_t)c->C * (uint64_t)(c->depthwise ? 1 : c->F);
    int OH = npu_conv_oh(c), OW = npu_conv_ow(c);
    uint64_t DH = (uint64_t)c->stride * (uint64_t)(OH - 1) + 1, DW = (uint64_t)c->stride * (uint64_t)(OW - 1) + 1;
    uint64_t taps = (uint64_t)c->KH * (uint64_t)c->KW, B = (uint64_t)c->batch;
    uint64_t pairs = scatter_pairs(c);
    npu_conv_macs_t m;
    fill(b.X, nx, seed, 0);
    fill(b.Wt, nw, seed, 0);
    fill(b.dY, ny, seed, 0);
    if (ny > 3)
        b.dY[ny / 2] = 0; /* a real zero is not a structural zero */

    npu_conv_dx_golden(c, b.dY, b.Wt, b.dX);
    npu_conv_dx_zeropad_golden(c, b.dY, b.Wt, b.dX2, &tot, &zer);
    cr_assert_eq(memcmp(b.dX, b.dX2, nx * sizeof *b.dX), 0, "%s: dX zeropad != direct", desc(c));
    m = npu_conv_macs(c, NPU_CONV_DX, NPU_CONV_ZEROPAD);
    cr_assert_eq(tot, B * (uint64_t)c->H * (uint64_t)c->W * taps * fc, "%s", desc(c));
    cr_assert_eq(m.total, tot, "%s: dX zeropad total %llu, loops %llu", desc(c),
                 (unsigned long long)m.total, (unsigned long long)tot);
    cr_assert_eq(m.zero, zer, "%s: dX zeropad zero %llu, loops %llu", desc(c),
                 (unsigned long long)m.zero, (unsigned long long)zer);
    cr_assert_eq(m.useful, m.total - m.zero);
    cr_assert_eq(m.useful, pairs, "%s", desc(c));
    m = npu_conv_macs(c, NPU_CONV_DX, NPU_CONV_ECOFLOW);
    cr_assert(m.total == pairs && m.useful == pairs && m.zero == 0, "%s: dX ecoflow %llu, scatter %llu",
              desc(c), (unsigned long long)m.useful, (unsigned long long)pairs);

    npu_conv_dw_golden(c, b.X, b.dY, b.dW);
    npu_conv_dw_zeropad_golden(c, b.X, b.dY, b.dW2, &tot, &zer);
    cr_assert_eq(memcmp(b.dW, b.dW2, nw * sizeof *b.dW), 0, "%s: dW zeropad != direct", desc(c));
    m = npu_conv_macs(c, NPU_CONV_DW, NPU_CONV_ZEROPAD);
    cr_assert_eq(tot, B * DH * DW * taps * fc, "%s", desc(c));
    cr_assert_eq(zer, B * (DH * DW - (uint64_t)OH * (uint64_t)OW) * taps * fc, "%s", desc(c));
    cr_assert(m.total == tot && m.zero == zer && m.useful == tot - zer, "%s: dW zeropad counts", desc(c));
    m = npu_conv_macs(c, NPU_CONV_DW, NPU_CONV_ECOFLOW);
    cr_assert(m.total == pairs && m.useful == pairs && m.zero == 0, "%s: dW ecoflow", desc(c));

    for (int df = NPU_CONV_ZEROPAD; df <= NPU_CONV_ECOFLOW; df++) {
        m = npu_conv_macs(c, NPU_CONV_FWD, df);
        cr_assert(m.total == B * (uint64_t)OH * (uint64_t)OW * taps * fc && m.useful == pairs &&
                  m.zero == m.total - pairs, "%s: fwd counts", desc(c));
    }
    free_bufs(&b);
}

Test(conv_golden, zeropad_equals_direct_and_counts)
{
    uint64_t s = 77;
    int ran = 0;
    check_zeropad(&(npu_conv_t){1, 1, 5, 5, 1, 3, 3, 2, 0, 1, 0}, &s);
    check_zeropad(&(npu_conv_t){2, 2, 7, 9, 3, 3, 3, 2, 4, 1, 0}, &s); /* p > d(K-1): cropped */
    check_zeropad(&(npu_conv_t){1, 3, 10, 10, 3, 3, 3, 3, 3, 3, 1}, &s);
    /* every square N <= 16, K <= 11, S <= 8 with pad, dil, channels drawn */
    for (int N = 1; N <= 16; N++)
        for (int K = 1; K <= 11; K++)
            for (int S = 1; S <= 8; S++) {
                int isdw = test_rand(&s) % 4 == 0, C = 1 + (int)(test_rand(&s) % 3);
                npu_conv_t c = mk(1 + (int)(test_rand(&s) % 2), C, N, N, isdw ? C : 1 + (int)(test_rand(&s) % 3),
                                  K, K, S, (int)(test_rand(&s) % 4), 1 + (int)(test_rand(&s) % 2), isdw);
                if (npu_conv_check(&c, NULL, 0))
                    c.dil = 1;
                if (npu_conv_check(&c, NULL, 0))
                    continue;
                check_zeropad(&c, &s);
                ran++;
            }
    /* non-square */
    for (int it = 0; it < 1000; it++) {
        int isdw = it % 4 == 3, C = 1 + (int)(test_rand(&s) % 4);
        npu_conv_t c = mk(1 + (int)(test_rand(&s) % 2), C, 1 + (int)(test_rand(&s) % 14),
                          1 + (int)(test_rand(&s) % 14), isdw ? C : 1 + (int)(test_rand(&s) % 4),
                          1 + (int)(test_rand(&s) % 6), 1 + (int)(test_rand(&s) % 6),
                          1 + (int)(test_rand(&s) % 8), (int)(test_rand(&s) % 5),
                          1 + (int)(test_rand(&s) % 3), isdw);
        if (npu_conv_check(&c, NULL, 0))
            continue;
        check_zeropad(&c, &s);
        ran++;
    }
    cr_assert_gt(ran, 1500, "only %d legal shapes", ran);
}

Test(conv_golden, illegal_counts_are_zero)
{
    npu_conv_t c = mk(1, 1, 5, 5, 1, 3, 3, 2, 0, 1, 0);
    npu_conv_macs_t m = npu_conv_macs(&c, 3, NPU_CONV_ZEROPAD);
    cr_assert(m.total == 0 && m.zero == 0 && m.useful == 0);
    m = npu_conv_macs(&c, NPU_CONV_DX, 2);
    cr_assert(m.total == 0 && m.zero == 0 && m.useful == 0);
    c.KH = 7;
    m = npu_conv_macs(&c, NPU_CONV_FWD, NPU_CONV_ZEROPAD);
    cr_assert(m.total == 0 && m.zero == 0 && m.useful == 0);
}

/* ------------------------------------------------------------------ brief toy cases */

Test(conv_golden, brief_fig5_fig7_toy_cases)
{
    /* Fig. 5: 2x2 error, 3x3 filter, S=2, 5x5 output: zero-padded RS 225 MACs, 189 zero; EcoFlow 36 */
    npu_conv_t c = mk(1, 1, 5, 5, 1, 3, 3, 2, 0, 1, 0);
    npu_conv_macs_t m = npu_conv_macs(&c, NPU_CONV_DX, NPU_CONV_ZEROPAD);
    npu_pad_counts_t pc = npu_pad_counts(2, 3, 2);
    cr_assert_eq(npu_conv_oh(&c), 2);
    cr_assert(m.total == 225 && m.zero == 189 && m.useful == 36, "%llu %llu", (unsigned long long)m.total,
              (unsigned long long)m.zero);
    cr_assert_eq(npu_conv_macs(&c, NPU_CONV_DX, NPU_CONV_ECOFLOW).total, 36u);
    /* the 7x7 padded plane of the brief: 5x5 windows of it are exactly the MAC set */
    cr_assert_eq(pc.P, 7u);
    cr_assert_eq((pc.P - 3 + 1) * (pc.P - 3 + 1) * 9, m.total);
    /* Fig. 7: dilated S=2 case, 5x5 ifmap: 81 dense MACs (45 zero) against 36 */
    m = npu_conv_macs(&c, NPU_CONV_DW, NPU_CONV_ZEROPAD);
    cr_assert(m.total == 81 && m.zero == 45 && m.useful == 36);
    cr_assert_eq(npu_conv_macs(&c, NPU_CONV_DW, NPU_CONV_ECOFLOW).useful, 36u);

    /* the brief's index form: di22 = w00 e11 + w20 e01 + w02 e10 + w22 e00 */
    for (int a = 0; a < 3; a++)
        for (int bb = 0; bb < 3; bb++)
            for (int x = 0; x < 2; x++)
                for (int y = 0; y < 2; y++) {
                    int16_t Wt[9] = {0}, dY[4] = {0};
                    int32_t dX[25], dX2[25];
                    int want = (a == 0 && bb == 0 && x == 1 && y == 1) || (a == 2 && bb == 0 && x == 0 && y == 1) ||
                               (a == 0 && bb == 2 && x == 1 && y == 0) || (a == 2 && bb == 2 && x == 0 && y == 0);
                    Wt[a * 3 + bb] = 3;
                    dY[x * 2 + y] = 5;
                    npu_conv_dx_golden(&c, dY, Wt, dX);
                    npu_conv_dx_zeropad_golden(&c, dY, Wt, dX2, NULL, NULL);
                    cr_assert_eq(dX[2 * 5 + 2], want ? 15 : 0, "w%d%d e%d%d", a, bb, x, y);
                    cr_assert_eq(dX2[2 * 5 + 2], dX[2 * 5 + 2]);
                }
}

/* ------------------------------------------------------------------ 4. padding counts, ResNet-50 */

Test(conv_golden, pad_counts)
{
    npu_pad_counts_t r = npu_pad_counts(2, 3, 2);
    cr_assert(r.P == 7 && r.inner == 5 && r.outer == 40);
    cr_assert_float_eq((double)(r.inner + r.outer) / (double)(r.P * r.P), 45.0 / 49.0, 1e-12);
    cr_assert_eq(floor(1000.0 * (double)(r.inner + r.outer) / (double)(r.P * r.P) + 0.5), 918.0); /* 91.8% */
    r = npu_pad_counts(3, 3, 1);
    cr_assert(r.P == 5 + 2 && r.inner == 0 && r.outer == 40);
    cr_assert_eq(floor(1000.0 * 40.0 / 49.0 + 0.5), 816.0); /* 81.6% */
    /* dilated S=2 case of Fig. 4: 2x2 error -> 3x3, 5/9 = 56% zeros */
    r = npu_pad_counts(2, 1, 2);
    cr_assert(r.P == 3 && r.inner == 5 && r.outer == 0);
    for (int N = 1; N <= 40; N++)
        for (int K = 1; K <= 11; K++)
            for (int S = 1; S <= 8; S++) {
                r = npu_pad_counts(N, K, S);
                cr_assert_eq((uint64_t)N * N + r.inner + r.outer, r.P * r.P, "N=%d K=%d S=%d", N, K, S);
                cr_assert_eq(r.P, (uint64_t)(S * (N - 1) + 1 + 2 * (K - 1)));
                if (S == 1)
                    cr_assert_eq(r.inner, 0u);
                if (K == 1)
                    cr_assert_eq(r.outer, 0u);
                /* a layer whose output is the full transposed output: H = S(N-1)+K, p = 0 has
                 * OH = N, the zero-padded dX MACs are the (P-K+1)^2 windows x K^2 taps, and every
                 * real error element is used K^2 times */
                {
                    int H = S * (N - 1) + K;
                    npu_conv_t c = mk(1, 1, H, H, 1, K, K, S, 0, 1, 0);
                    npu_conv_macs_t m = npu_conv_macs(&c, NPU_CONV_DX, NPU_CONV_ZEROPAD);
                    cr_assert_eq(npu_conv_oh(&c), N);
                    cr_assert_eq(m.total, (r.P - (uint64_t)K + 1) * (r.P - (uint64_t)K + 1) * (uint64_t)(K * K));
                    cr_assert_eq(m.useful, (uint64_t)N * N * (uint64_t)(K * K));
                }
            }
    r = npu_pad_counts(0, 3, 2);
    cr_assert(r.P == 0 && r.inner == 0 && r.outer == 0);
}

Test(conv_golden, resnet50_conv3_one_pair)
{
    npu_conv_t c = mk(1, 1, 57, 57, 1, 3, 3, 2, 0, 1, 0);
    npu_conv_macs_t dx = npu_conv_macs(&c, NPU_CONV_DX, NPU_CONV_ZEROPAD);
    npu_conv_macs_t dw = npu_conv_macs(&c, NPU_CONV_DW, NPU_CONV_ZEROPAD);
    npu_conv_macs_t edx = npu_conv_macs(&c, NPU_CONV_DX, NPU_CONV_ECOFLOW);
    npu_conv_macs_t edw = npu_conv_macs(&c, NPU_CONV_DW, NPU_CONV_ECOFLOW);
    int N = 28, K = 3, S = 2;
    cr_assert_eq(npu_conv_oh(&c), 28);
    cr_assert_eq(dx.total, 29241u);
    cr_assert_eq(dx.total, 57u * 57u * 9u);
    cr_assert_eq(dx.total, (uint64_t)((S * (N - 1) + K) * (S * (N - 1) + K) * K * K));
    cr_assert_eq(dx.useful, 7056u);
    cr_assert_eq(dw.total, 27225u);
    cr_assert_eq(dw.total, 55u * 55u * 9u);
    cr_assert_eq(dw.useful, 7056u);
    cr_assert(edx.total == 7056 && edx.useful == 7056 && edx.zero == 0);
    cr_assert(edw.total == 7056 && edw.useful == 7056 && edw.zero == 0);
    cr_assert_float_eq((double)dx.total / (double)edx.useful, 4.14, 0.005);
    cr_assert_float_eq((double)dw.total / (double)edw.useful, 3.86, 0.005);
    cr_assert_float_eq(100.0 * (double)dx.zero / (double)dx.total, 75.9, 0.05);
    cr_assert_float_eq(100.0 * (double)dw.zero / (double)dw.total, 74.1, 0.05);
    /* the same on the full layer (C = F = 128, batch 4): the ratios do not move */
    c = mk(4, 128, 57, 57, 128, 3, 3, 2, 0, 1, 0);
    dx = npu_conv_macs(&c, NPU_CONV_DX, NPU_CONV_ZEROPAD);
    cr_assert_eq(dx.total, 29241ull * 128 * 128 * 4);
    cr_assert_eq(npu_conv_macs(&c, NPU_CONV_DX, NPU_CONV_ECOFLOW).useful, 7056ull * 128 * 128 * 4);
}

/* brief section 6, ideal zero-skip ratios (padded MACs / useful MACs), igrad / fgrad */
Test(conv_golden, brief_ideal_ratios)
{
    static const struct { const char *name; int H, K, S, OH; double dx, dw; } L[] = {
        {"AlexNet CONV1", 227, 11, 4, 55, 17.0, 15.57},
        {"AlexNet o-CONV1", 227, 11, 8, 28, 65.7, 60.06},
        {"ResNet-50 CONV3", 57, 3, 2, 28, 4.14, 3.86},
        {"Inception CONV3", 17, 3, 2, 8, 4.52, 3.52},
        {"Xception CONV3", 29, 3, 2, 14, 4.29, 3.72},
        {"MobileNet CONV5", 15, 3, 2, 7, 4.59, 3.45},
        {"CycleGAN Disc-CONV3", 114, 4, 2, 56, 4.14, 3.93},
        {"pix2pix Disc-CONV6", 130, 4, 2, 64, 4.13, 3.94},
    };
    for (size_t i = 0; i < sizeof L / sizeof L[0]; i++) {
        npu_conv_t c = mk(1, 1, L[i].H, L[i].H, 1, L[i].K, L[i].K, L[i].S, 0, 1, 0);
        npu_conv_macs_t dx = npu_conv_macs(&c, NPU_CONV_DX, NPU_CONV_ZEROPAD);
        npu_conv_macs_t dw = npu_conv_macs(&c, NPU_CONV_DW, NPU_CONV_ZEROPAD);
        double tol_dx = L[i].dx >= 10 ? 0.05 : 0.005;
        cr_assert_eq(npu_conv_oh(&c), L[i].OH, "%s", L[i].name);
        cr_assert_float_eq((double)dx.total / (double)dx.useful, L[i].dx, tol_dx, "%s dx %.4f", L[i].name,
                           (double)dx.total / (double)dx.useful);
        cr_assert_float_eq((double)dw.total / (double)dw.useful, L[i].dw, 0.005, "%s dw %.4f", L[i].name,
                           (double)dw.total / (double)dw.useful);
    }
}

/* ------------------------------------------------------------------ 5. check / parse / str */

Test(conv_layer, check_good_and_bad)
{
    char msg[160];
    npu_conv_t good = mk(1, 3, 57, 57, 3, 3, 3, 2, 0, 1, 0), c;
    cr_assert_eq(npu_conv_check(&good, msg, sizeof msg), 0, "%s", msg);
    c = good;
    c.depthwise = 1;
    cr_assert_eq(npu_conv_check(&c, msg, sizeof msg), 0);
    cr_assert_eq(npu_conv_check(&(npu_conv_t){1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0}, msg, sizeof msg), 0);
    cr_assert_eq(npu_conv_check(&(npu_conv_t){1, 1, 5, 5, 1, 7, 7, 1, 1, 1, 0}, msg, sizeof msg), 0);
    cr_assert_eq(npu_conv_check(&(npu_conv_t){4096, 4096, 4096, 4096, 4096, 4096, 4096, 4096, 4096, 1, 0},
                                msg, sizeof msg), 0);
    {
        static const struct { int field, value; const char *word; } B[] = {
            {0, 0, "batch"}, {1, 0, "C"}, {2, 0, "H"}, {3, -1, "W"}, {4, 0, "F"}, {5, 0, "KH"},
            {6, 0, "KW"}, {7, 0, "stride"}, {8, -1, "pad"}, {9, 0, "dil"}, {10, 2, "depthwise"},
            {1, 4097, "C"}, {2, 5000, "H"}, {8, 4097, "pad"}, {7, 1 << 30, "stride"},
        };
        for (size_t i = 0; i < sizeof B / sizeof B[0]; i++) {
            int *f[11];
            c = good;
            f[0] = &c.batch, f[1] = &c.C, f[2] = &c.H, f[3] = &c.W, f[4] = &c.F, f[5] = &c.KH;
            f[6] = &c.KW, f[7] = &c.stride, f[8] = &c.pad, f[9] = &c.dil, f[10] = &c.depthwise;
            *f[B[i].field] = B[i].value;
            msg[0] = '\0';
            cr_assert_eq(npu_conv_check(&c, msg, sizeof msg), -1, "case %zu", i);
            cr_assert(strstr(msg, B[i].word), "case %zu: '%s'", i, msg);
            cr_assert_eq(npu_conv_check(&c, NULL, 0), -1);
        }
    }
    c = good;
    c.depthwise = 1;
    c.F = 4;
    cr_assert_eq(npu_conv_check(&c, msg, sizeof msg), -1);
    cr_assert(strstr(msg, "F == C"), "%s", msg);
    c = mk(1, 1, 4, 9, 1, 3, 3, 1, 0, 2, 0); /* d(K-1)+1 = 5 > 4 */
    cr_assert_eq(npu_conv_check(&c, msg, sizeof msg), -1);
    cr_assert(strstr(msg, "height"), "%s", msg);
    c = mk(1, 1, 9, 2, 1, 3, 3, 1, 0, 1, 0);
    cr_assert_eq(npu_conv_check(&c, msg, sizeof msg), -1);
    cr_assert(strstr(msg, "width"), "%s", msg);
    c.pad = 1; /* 2 + 2 >= 3 */
    cr_assert_eq(npu_conv_check(&c, msg, sizeof msg), 0);
    /* tiny message buffers are fine */
    c.KW = 9;
    cr_assert_eq(npu_conv_check(&c, msg, 1), -1);
    cr_assert_eq(msg[0], '\0');
}

Test(conv_layer, oh_ow)
{
    cr_assert_eq(npu_conv_oh(&(npu_conv_t){1, 1, 57, 57, 1, 3, 3, 2, 0, 1, 0}), 28);
    cr_assert_eq(npu_conv_ow(&(npu_conv_t){1, 1, 57, 56, 1, 3, 3, 2, 0, 1, 0}), 27);
    cr_assert_eq(npu_conv_oh(&(npu_conv_t){1, 1, 224, 224, 1, 7, 7, 2, 3, 1, 0}), 112);
    cr_assert_eq(npu_conv_oh(&(npu_conv_t){1, 1, 10, 10, 1, 3, 3, 1, 2, 2, 0}), 10);  /* 10+4-5+1 */
    cr_assert_eq(npu_conv_oh(&(npu_conv_t){1, 1, 3, 3, 1, 5, 5, 2, 0, 1, 0}), 0);    /* -2/2 -> none */
    cr_assert_eq(npu_conv_oh(&(npu_conv_t){1, 1, 4, 4, 1, 5, 5, 2, 0, 1, 0}), 0);    /* -1: not 1 */
    cr_assert_eq(npu_conv_oh(&(npu_conv_t){1, 1, 4, 4, 1, 3, 3, 0, 0, 1, 0}), 0);    /* stride 0 */
    cr_assert_eq(npu_conv_oh(&(npu_conv_t){1, 1, INT32_MAX, 4, 1, 1, 1, 1, INT32_MAX, 1, 0}), INT32_MAX);
}

Test(conv_layer, str)
{
    char buf[96];
    npu_conv_t c = mk(1, 3, 57, 57, 3, 3, 3, 2, 0, 1, 0);
    cr_assert_eq(npu_conv_str(&c, buf, sizeof buf), (int)strlen("C3x57x57 F3 k3x3 s2 p0 d1"));
    cr_assert_str_eq(buf, "C3x57x57 F3 k3x3 s2 p0 d1");
    c = mk(4, 32, 14, 15, 32, 3, 5, 1, 2, 2, 1);
    npu_conv_str(&c, buf, sizeof buf);
    cr_assert_str_eq(buf, "C32x14x15 F32 k3x5 s1 p2 d2 dw b4");
    cr_assert_eq(npu_conv_str(&c, buf, 6), (int)strlen("C32x14x15 F32 k3x5 s1 p2 d2 dw b4"));
    cr_assert_str_eq(buf, "C32x1");
}

Test(conv_layer, parse_good_and_bad)
{
    char msg[200];
    npu_conv_t c, keep = mk(7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 0);
    cr_assert_eq(npu_conv_parse("3,57,57,3,3,3,2,0,1", &c, msg, sizeof msg), 0, "%s", msg);
    cr_assert(c.batch == 1 && c.C == 3 && c.H == 57 && c.W == 57 && c.F == 3 && c.KH == 3 && c.KW == 3 &&
              c.stride == 2 && c.pad == 0 && c.dil == 1 && c.depthwise == 0);
    cr_assert_eq(npu_conv_parse("8, 14, 15, 8, 3, 5, 1, 2, 2, dw", &c, msg, sizeof msg), 0, "%s", msg);
    cr_assert(c.C == 8 && c.W == 15 && c.KW == 5 && c.pad == 2 && c.dil == 2 && c.depthwise == 1);
    cr_assert_eq(npu_conv_parse("8,14,15,8,3,5,1,2,2,1", &c, msg, sizeof msg), 0, "%s", msg);
    cr_assert_eq(c.depthwise, 1);
    cr_assert_eq(npu_conv_parse("8,14,15,4,3,5,1,2,2,0", &c, msg, sizeof msg), 0, "%s", msg);
    cr_assert_eq(c.depthwise, 0);
    /* round trip through the text form */
    {
        char s[64], b[96], b2[96];
        npu_conv_t d = mk(1, 5, 9, 11, 6, 3, 1, 2, 1, 2, 0);
        snprintf(s, sizeof s, "%d,%d,%d,%d,%d,%d,%d,%d,%d", d.C, d.H, d.W, d.F, d.KH, d.KW, d.stride, d.pad,
                 d.dil);
        cr_assert_eq(npu_conv_parse(s, &c, msg, sizeof msg), 0);
        npu_conv_str(&c, b, sizeof b);
        npu_conv_str(&d, b2, sizeof b2);
        cr_assert_str_eq(b, b2);
    }
    {
        static const char *bad[] = {
            "",
            "3,57,57,3,3,3,2,0",         /* 8 fields */
            "3,57,57,3,3,3,2,0,1,0,1",   /* 11 fields */
            "3,57,57,3,3,3,2,0,1,2",     /* dw 2 */
            "3,57,57,4,3,3,2,0,1,dw",    /* depthwise with F != C */
            "3,57,57,3,3,3,0,0,1",       /* stride 0 */
            "3,57,57,3,3,3,2,-1,1",      /* negative pad */
            "3,5,5,3,7,7,1,0,1",         /* kernel larger than the image */
            "3,57,57,3,3,3,2,0,x",
            "3,57,57,3,3,3,2,0,1x",
            "3,57,,3,3,3,2,0,1",
            "3,57,57,3,3,3,2,0,1,",
            "3,57,57,3,3,3,2,0,99999999999999",
            "3,5000,57,3,3,3,2,0,1",     /* > 4096 */
            "3 57 57 3 3 3 2 0 1",
            "3,57,57,3,3,3,2,0,1,dwx",
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            c = keep;
            msg[0] = '\0';
            cr_assert_eq(npu_conv_parse(bad[i], &c, msg, sizeof msg), -1, "'%s' accepted", bad[i]);
            cr_assert(msg[0] != '\0', "'%s': empty message", bad[i]);
            cr_assert_eq(memcmp(&c, &keep, sizeof c), 0, "'%s' changed the layer", bad[i]);
        }
    }
    cr_assert_eq(npu_conv_parse(NULL, &c, msg, sizeof msg), -1);
    cr_assert_eq(npu_conv_parse("3,57", &c, NULL, 0), -1);
}
