/* conv_order.c - the per-output wave order of a convolution program; see conv_order.h. Each
 * walk below follows the loops of the emitter it names. */
#include "compile/conv/conv_order.h"

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

/* Appends one wave (counts it past max without writing). */
static void put(npu_conv_wave_t *w, size_t *n, size_t max, int kh, int kw, int r0, int r1, int img, int row)
{
    if (*n < max) {
        npu_conv_wave_t v = {kh, kw, r0, r1, img, row, NPU_CONV_WAVE_ADD};
        w[*n] = v;
    }
    (*n)++;
}

/* npu_cx_unit_fwd: taps, then the part's c-blocks (depthwise: the diagonal block fb == cb). */
static void fwd_waves(const npu_conv_plan_t *p, int c0, int fl, npu_conv_wave_t *w, size_t *n, size_t max)
{
    const npu_conv_t *c = &p->c;
    for (int t = 0; t < p->T; t++)
        for (int cb = 0; cb < p->cw; cb++)
            if (!c->depthwise || cb == fl / p->L)
                put(w, n, max, t / c->KW, t % c->KW, c0 + cb * p->L, c0 + cb * p->L + imin(p->L, c->C - cb * p->L),
                    0, 0);
}

/* ecoflow dX: does tap (kh, kw) reach dX pixel (ih, iw) (iw: the part's column) from a real dY
 * element? The phase decomposition's condition (dx_phase, dx_eco_skip): iw in the tap's column
 * phase with its dY column in [0, OW), ih's dY row a multiple of s inside [0, OH). */
static int dx_reaches(const npu_conv_plan_t *p, int ih, int iw, int kh, int kw)
{
    const npu_conv_t *c = &p->c;
    int s = c->stride, nh = ih + c->pad - kh * c->dil, nw = iw + p->PL - kw * c->dil;
    return nh >= 0 && nh % s == 0 && nh / s < p->OH && nw >= 0 && nw % s == 0 && nw / s < p->OW;
}

/* npu_cx_unit_dx_*: dx_next's tiles (tap, f-block, c-block), the output's c-block only. */
static void dx_waves(const npu_conv_plan_t *p, int f0, int col, const int o[4], int cl, npu_conv_wave_t *w,
                     size_t *n, size_t max)
{
    const npu_conv_t *c = &p->c;
    for (int t = 0; t < p->T; t++) {
        int kh = t / c->KW, kw = t % c->KW;
        if (p->dataflow == NPU_CONV_ECOFLOW && !dx_reaches(p, o[1], o[2] - col, kh, kw))
            continue;
        for (int fb = 0; fb < p->fw; fb++)
            if (!c->depthwise || fb == cl / p->L)
                put(w, n, max, kh, kw, f0 + fb * p->L, f0 + fb * p->L + imin(p->L, c->F - fb * p->L), 0, 0);
    }
}

/* npu_cx_unit_dw: units (image, band of X plane rows), per X row pr its dY row for kh
 * (dw_tile_waves' condition), per dY^T word j its valid columns (dw_cols, dw_row), the part's
 * first dY (zeropad: Z) column z0 on. */
static void dw_waves(const npu_conv_plan_t *p, int kh, int kw, int z0, npu_conv_wave_t *w, size_t *n,
                     size_t max)
{
    const npu_conv_t *c = &p->c;
    int ow_a = imax(0, npu_ceildiv(p->vp - kw * c->dil, p->vs));
    int ow_b = imin(p->vOW, npu_floordiv(p->PW - 1 + p->vp - kw * c->dil, p->vs) + 1);
    for (int b = 0; b < c->batch; b++)
        for (int pr = 0; pr < p->rows; pr++) {
            int num = pr + p->vp - kh * c->dil;
            if (num < 0 || num % p->vs || num / p->vs >= p->vOH)
                continue;
            for (int j = 0; j * p->L < ow_b; j++) {
                int klo = imax(ow_a - j * p->L, 0), khi = imin(ow_b - j * p->L, p->L);
                if (klo < khi)
                    put(w, n, max, kh, kw, z0 + j * p->L + klo, z0 + j * p->L + khi, b, num / p->vs);
            }
        }
}

size_t npu_conv_waves(const npu_conv_split_t *s, const int o[4], npu_conv_wave_t *w, size_t max)
{
    int kernel = s->whole.kernel;
    size_t n = 0;
    for (int i = 0; i < s->parts; i++) {
        const npu_conv_plan_t *p = &s->part[i];
        int f0, c0, col = npu_conv_split_col(s, i);
        size_t first = n;
        npu_conv_split_origin(s, i, &f0, &c0);
        if (kernel == NPU_CONV_FWD && o[3] >= f0 && o[3] < f0 + p->c.F && o[2] >= col && o[2] < col + p->OW)
            fwd_waves(p, c0, o[3] - f0, w, &n, max);
        else if (kernel == NPU_CONV_DX && o[3] >= c0 && o[3] < c0 + p->c.C && o[2] >= col && o[2] < col + p->c.W)
            dx_waves(p, f0, col, o, o[3] - c0, w, &n, max);
        else if (kernel == NPU_CONV_DW && o[2] >= f0 && o[2] < f0 + p->c.F && o[3] >= c0 && o[3] < c0 + p->c.C)
            dw_waves(p, o[0], o[1], col * (p->dataflow == NPU_CONV_ZEROPAD ? p->c.stride : 1), w, &n, max);
        if (n > first && first < max) /* the part's OBUF sum: written, or added to the partial sums */
            w[first].start = p->acc ? NPU_CONV_WAVE_ACC : NPU_CONV_WAVE_WRITE;
    }
    return n;
}

/* The fused kernel's dW^T waves of output (kh, kw, f, c): dw_band's loops (conv_bwd.c), per image
 * and band its dY rows (npu_conv_bwd_band_rows). */
static void bwd_dw_waves(const npu_conv_bwd_plan_t *bp, int kh, int kw, npu_conv_wave_t *w, size_t *n,
                         size_t max)
{
    const npu_conv_plan_t *p = &bp->dx;
    const npu_conv_t *c = &p->c;
    int ph, e, nph, L = p->L;
    npu_conv_bwd_phase(c, kw, &ph, &e, &nph);
    for (int u = p->ngroups - 1; u < p->units; u += p->ngroups) { /* each band's last block group */
        size_t first = *n;
        npu_conv_unit_t un;
        int oh0, oh1;
        npu_conv_unit_at(p, u, &un);
        npu_conv_bwd_band_rows(bp, &un, &oh0, &oh1);
        for (int oh = oh0; oh < oh1; oh++) {
            int ih = oh * c->stride + kh * c->dil - c->pad;
            if (ih < 0 || ih >= c->H)
                continue;
            for (int j = 0; j < bp->wj; j++) {
                int klo = imax(0, e - L * j), k = imin(L, imin(p->OW + e - L * j, nph - L * j));
                if (klo < k)
                    put(w, n, max, kh, kw, L * j - e + klo, L * j - e + k, un.b, oh);
            }
        }
        if (!bp->resident && *n > first && first < max) /* the band's region, drained with acc */
            w[first].start = NPU_CONV_WAVE_ACC;
    }
    if (bp->resident && *n > 0 && max > 0)
        w[0].start = NPU_CONV_WAVE_WRITE;
}

size_t npu_conv_bwd_waves(const npu_conv_bwd_plan_t *bp, int kernel, const int o[4], npu_conv_wave_t *w,
                          size_t max)
{
    size_t n = 0;
    if (kernel == NPU_CONV_DW) {
        bwd_dw_waves(bp, o[0], o[1], w, &n, max);
        return n;
    }
    dx_waves(&bp->dx, 0, 0, o, o[3], w, &n, max);
    if (n > 0 && max > 0)
        w[0].start = NPU_CONV_WAVE_WRITE;
    return n;
}
