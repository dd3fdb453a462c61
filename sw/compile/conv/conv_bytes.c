/* conv_bytes.c - the convolution plan's DRAM bytes (conv_plan.h): what each unit's LOADs and
 * STOREs move by the DMA's rule (whole beats of every run, npu_dma_bursts), from the view's
 * pitches and origin. It follows the emitter's cuts into descriptors (conv_unit.c,
 * conv_fwd_dx.c, conv_dw.c) through the rules both share (npu_conv_rows_kind,
 * npu_conv_plane_run); the unit tests hold it equal to the emitted program's counts and to the
 * counters of runs. Dense pixel rows make the cuts matter: two descriptors that meet inside a
 * beat both read (or write) it. */
#include "compile/conv/conv_plan.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "compile/conv/conv_unit.h"
#include "prog/prog_expect.h"

/* The largest burst does not change the beats; a large one keeps the walk short. */
#define BYTES_MAX_BURST 4096u

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

/* Bytes a normal LOAD / STORE of rows x rowb at stride moves from offset off: whole DRAM beats
 * of DB bytes. */
static uint64_t xfer(unsigned DB, uint64_t off, uint64_t rows, uint64_t rowb, uint64_t stride)
{
    return rows && rowb ? npu_dma_bursts(DB, BYTES_MAX_BURST, off, rows, rowb, stride).beats * DB : 0;
}

/* The same for a transposed LOAD: its groups are SPM words of B bytes, its runs DRAM beats. */
static uint64_t xfer_tr(unsigned B, unsigned DB, uint64_t off, uint64_t rows, uint64_t rowb, uint64_t stride)
{
    return rows && rowb ? npu_dma_bursts_tr_wb(B, DB, BYTES_MAX_BURST, off, rows, rowb, stride).beats * DB : 0;
}

int npu_conv_rows_kind(const npu_conv_rows_t *r, unsigned B)
{
    uint64_t word_px = (uint64_t)r->pw * B, bytes = (uint64_t)r->pix * word_px;
    if (r->ppitch == word_px && bytes <= 65535 && (r->nrows == 1 || (r->dpitch <= 65535 && r->spitch <= 65535)))
        return NPU_CONV_ROWS_WHOLE;
    if (r->ppitch != word_px && r->dpitch == r->pix * r->ppitch && r->spitch == r->pix * r->pw &&
        (uint64_t)r->nrows * r->pix <= 65535)
        return NPU_CONV_ROWS_PIXELS;
    return NPU_CONV_ROWS_EACH;
}

uint64_t npu_conv_rows_bytes(const npu_conv_rows_t *r, uint64_t off, unsigned B, unsigned DB)
{
    uint64_t t = 0;
    if (!r->nrows || !r->pix)
        return 0;
    switch (npu_conv_rows_kind(r, B)) {
    case NPU_CONV_ROWS_WHOLE:
        return xfer(DB, off, r->nrows, (uint64_t)r->pix * r->pw * B, r->nrows > 1 ? r->dpitch : 0);
    case NPU_CONV_ROWS_PIXELS: return xfer(DB, off, (uint64_t)r->nrows * r->pix, r->rowb, r->ppitch);
    default:
        for (unsigned i = 0; i < r->nrows; i++)
            t += xfer(DB, off + i * r->dpitch, r->pix, r->rowb, r->ppitch);
        return t;
    }
}

uint64_t npu_conv_px_bytes(unsigned B, unsigned DB, uint64_t off, uint64_t n, unsigned pw, unsigned rowb,
                           uint64_t dpitch)
{
    uint64_t t = 0;
    if (dpitch == (uint64_t)pw * B) /* flat runs of whole words (a padded layout) */
        return xfer(DB, off, 1, n * pw * B, 0);
    while (n) {
        uint64_t nr = n > 65535u ? 65535u : n;
        t += xfer(DB, off, nr, rowb, dpitch);
        off += nr * dpitch;
        n -= nr;
    }
    return t;
}

int npu_conv_plane_run(const npu_conv_plan_t *p, const npu_conv_unit_t *un, int *pr, int hi, int *q, int *in)
{
    int H = p->c.H;
    while (*pr < hi && !npu_conv_plane_row_used(p, un, *pr))
        (*pr)++;
    if (*pr >= hi)
        return 0;
    *in = *pr - p->P >= 0 && *pr - p->P < H;
    *q = *pr + 1;
    while (*q < hi && npu_conv_plane_row_used(p, un, *q) && (*q - p->P >= 0 && *q - p->P < H) == *in)
        (*q)++;
    return 1;
}

/* X plane rows [lo, hi) of the unit as npu_cx_load_plane_rows loads them. */
static uint64_t plane_bytes(const npu_conv_plan_t *p, const npu_conv_unit_t *un, int lo, int hi)
{
    const npu_conv_t *c = &p->c;
    uint64_t t = 0, dpitch = (uint64_t)p->dwx * p->pitch_x;
    int pr = lo, q, in;
    while (npu_conv_plane_run(p, un, &pr, hi, &q, &in)) {
        npu_conv_rows_t r = {(unsigned)(q - pr), (unsigned)c->W, (unsigned)p->cw, 2u * (unsigned)c->C,
                             (unsigned)(p->PW * p->cw), dpitch, p->pitch_x};
        uint64_t row = (uint64_t)un->b * (uint64_t)c->H + (uint64_t)(pr - p->P);
        if (in)
            t += npu_conv_rows_bytes(&r, p->org_x + row * dpitch, p->B, p->DB);
        pr = q;
    }
    return t;
}

/* dY rows of a dX unit: ecoflow its band's rows (a ring: the new ones, cut at the ring's end),
 * zeropad each row's columns [ow0, ow1) (conv_fwd_dx.c). */
static uint64_t dx_dy_bytes(const npu_conv_plan_t *p, const npu_conv_unit_t *un)
{
    const npu_conv_t *c = &p->c;
    uint64_t t = 0, dpitch = (uint64_t)p->dwy * p->pitch_dy;
    int n0 = un->i0, n1 = un->i1, s = c->stride, ow0, ow1;
    if (p->dataflow == NPU_CONV_ECOFLOW) {
        if (p->ring)
            npu_conv_ring_new(p, un->band, &n0, &n1);
        while (n0 < n1) {
            int slot = p->ring ? (un->b * p->OH + n0) % p->ring : 0, n = p->ring ? imin(n1 - n0, p->ring - slot) : n1 - n0;
            npu_conv_rows_t r = {(unsigned)n, (unsigned)p->OW, (unsigned)p->fw, 2u * (unsigned)c->F,
                                 (unsigned)(p->OW * p->fw), dpitch, p->pitch_dy};
            t += npu_conv_rows_bytes(&r, p->org_dy + ((uint64_t)un->b * (uint64_t)p->OH + (uint64_t)n0) * dpitch, p->B, p->DB);
            n0 += n;
        }
        return t;
    }
    npu_conv_zp_cols(p, &ow0, &ow1);
    for (int oh = imax(0, npu_ceildiv(un->i0, s)); ow1 > ow0 && oh < p->OH && oh * s < un->i1; oh++) {
        uint64_t off = p->org_dy + (((uint64_t)un->b * (uint64_t)p->OH + (uint64_t)oh) * (uint64_t)p->dwy + (uint64_t)ow0) *
                                       p->pitch_dy;
        if (s == 1) { /* the rest of the band's rows in one LOAD */
            int oe = oh + 1;
            while (oe < p->OH && oe < un->i1)
                oe++;
            npu_conv_rows_t r = {(unsigned)(oe - oh), (unsigned)(ow1 - ow0), (unsigned)p->fw, 2u * (unsigned)c->F,
                                 (unsigned)(p->ZW * p->fw), dpitch, p->pitch_dy};
            t += npu_conv_rows_bytes(&r, off, p->B, p->DB);
            oh = oe - 1;
        } else {
            t += xfer(p->DB, off, (uint64_t)(ow1 - ow0), 2u * (uint64_t)c->F, p->pitch_dy);
        }
    }
    return t;
}

/* A band's output tile of `rows` pixels from pixel pix0 (npu_cx_store_tile, out_rows). */
static uint64_t tile_bytes(const npu_conv_plan_t *p, uint64_t rows, uint64_t pix0)
{
    int fwd = p->kernel == NPU_CONV_FWD;
    uint64_t len = (uint64_t)(fwd ? p->OW : p->c.W), t = 0;
    unsigned rowb = 4u * (unsigned)(fwd ? p->c.F : p->c.C);
    if ((uint64_t)p->dwo == len)
        return npu_conv_px_bytes(p->B, p->DB, p->org_out + pix0 * p->pitch_out, rows, p->pout, rowb, p->pitch_out);
    for (uint64_t r = 0; r < rows / len; r++)
        t += npu_conv_px_bytes(p->B, p->DB, p->org_out + (pix0 / len + r) * (uint64_t)p->dwo * p->pitch_out, len, p->pout,
                               rowb, p->pitch_out);
    return t;
}

/* The unit's output tile (its band's last block group stores it). */
static uint64_t unit_out_bytes(const npu_conv_plan_t *p, const npu_conv_unit_t *un)
{
    const npu_conv_t *c = &p->c;
    uint64_t Ru = (uint64_t)(un->r1 - un->r0), t = 0;
    if (p->kernel == NPU_CONV_FWD)
        return tile_bytes(p, Ru * (uint64_t)p->OW, ((uint64_t)un->b * (uint64_t)p->OH + (uint64_t)un->r0) * p->OW);
    if (p->dataflow == NPU_CONV_ZEROPAD || p->row_pitch == c->W)
        return tile_bytes(p, Ru * (uint64_t)c->W, ((uint64_t)un->b * (uint64_t)c->H + (uint64_t)un->r0) * c->W);
    for (uint64_t r = 0; r < Ru; r++) /* dX ecoflow: a STORE per row (conv_fwd_dx.c dx_row) */
        t += npu_conv_px_bytes(p->B, p->DB,
                               p->org_out + ((uint64_t)un->b * (uint64_t)c->H + (uint64_t)un->r0 + r) * (uint64_t)p->dwo *
                                                p->pitch_out,
                               (uint64_t)c->W, p->pout, 4u * (unsigned)c->C, p->pitch_out);
    return t;
}

/* dW: the unit's dY^T rows (a transposed LOAD per dY row) and X plane rows, the first unit's in
 * two parts cut at X row im (conv_dw.c dw_loads). */
static void dw_unit_bytes(const npu_conv_plan_t *p, const npu_conv_unit_t *un, uint64_t *rd_x, uint64_t *rd_dy)
{
    int im = un->u == 0 && un->i1 - un->i0 >= 3 ? un->i0 + (un->i1 - un->i0 + 2) / 3 : un->i1;
    for (int oh = un->o0; oh < un->o1; oh++)
        *rd_dy += xfer_tr(p->B, p->DB,
                          p->org_dy + ((uint64_t)un->b * (uint64_t)p->vOH + (uint64_t)oh) * (uint64_t)p->dwy * p->pitch_dy,
                          (uint64_t)p->vOW, 2u * (uint64_t)p->c.F, p->pitch_dy);
    *rd_x += plane_bytes(p, un, un->i0, im) + plane_bytes(p, un, im, un->i1);
}

/* Loaded bytes (tag X or DY) and stored bytes of one unit, as the emitter moves them. */
static void unit_bytes(const npu_conv_plan_t *p, const npu_conv_unit_t *un, uint64_t *rd_x, uint64_t *rd_dy,
                       uint64_t *wr)
{
    *rd_x = *rd_dy = *wr = 0;
    if (p->kernel == NPU_CONV_DW) {
        dw_unit_bytes(p, un, rd_x, rd_dy);
        return;
    }
    if (un->grp == p->ngroups - 1) /* the band's tile, once */
        *wr = unit_out_bytes(p, un);
    if (un->grp != 0) /* the band's input: loaded by its first group */
        return;
    if (p->kernel == NPU_CONV_FWD)
        *rd_x = plane_bytes(p, un, un->i0, un->i1);
    else
        *rd_dy = dx_dy_bytes(p, un);
}

/* The stationary weights (conv_unit.c load_weights): flat runs of whole words (depthwise blocks,
 * dX rows of whole words), else per tap its F rows (fwd transposed). */
static uint64_t w_bytes(const npu_conv_plan_t *p)
{
    const npu_conv_t *c = &p->c;
    unsigned B = p->B, DB = p->DB;
    uint64_t tap = (uint64_t)p->dtap_rows * p->pitch_w, t = 0;
    /* one flat run from org_w (the emitter cuts it only at beat boundaries: conv_unit.c
     * flat_words, flat_head, flat_cut) */
    if (c->depthwise)
        return xfer(DB, p->org_w, 1, (uint64_t)p->T * (uint64_t)p->cw * (uint64_t)p->L * B, 0);
    if (p->kernel == NPU_CONV_DX && 2u * (unsigned)c->C == p->pw * B && p->pitch_w == p->pw * B)
        return xfer(DB, p->org_w, 1, (uint64_t)p->T * (uint64_t)c->F * p->cw * B, 0);
    for (int k = 0; k < p->T; k++)
        t += p->kernel == NPU_CONV_FWD
                 ? xfer_tr(B, DB, p->org_w + (uint64_t)k * tap, (uint64_t)c->F, 2u * (uint64_t)c->C, p->pitch_w)
                 : xfer(DB, p->org_w + (uint64_t)k * tap, (uint64_t)c->F, 2u * (uint64_t)c->C, p->pitch_w);
    return t;
}

int npu_conv_dw_fin_row(const npu_conv_plan_t *p, int kh)
{
    int oh = imin(p->vOH - 1, npu_floordiv(p->PH - 1 + p->vp - kh * p->c.dil, p->vs));
    return oh * p->vs + kh * p->c.dil - p->vp;
}

/* dW: does the pass hold a region of row kh? */
static int dw_pass_has_kh(const npu_conv_plan_t *p, const int *pass_of, int pass, int kh)
{
    for (int cb = 0; cb < p->cw; cb++)
        for (int kw = 0; kw < p->c.KW; kw++)
            if (pass_of[cb * p->T + kh * p->c.KW + kw] == pass)
                return 1;
    return 0;
}

/* The regions whose last X row comes before the unit's end are drained and stored while the
 * waves of the later rows run, in up to two early groups, after the X rows cp[0], cp[1]: the two
 * latest last rows but the final one (else the store of the last pass's taps was all exposed:
 * medium, s = 4: 1.3k cycles). */
void npu_conv_dw_early_rows(const npu_conv_plan_t *p, const int *pass_of, int pass, int i0, int cp[2])
{
    for (int kh = 0; kh < p->c.KH; kh++) {
        int fin = npu_conv_dw_fin_row(p, kh), later = 0;
        for (int k2 = 0; k2 < p->c.KH; k2++)
            later |= npu_conv_dw_fin_row(p, k2) > fin && dw_pass_has_kh(p, pass_of, pass, k2);
        if (!dw_pass_has_kh(p, pass_of, pass, kh) || !later || fin < i0 || fin == cp[0] || fin == cp[1])
            continue;
        if (fin > cp[1]) {
            cp[0] = cp[1];
            cp[1] = fin;
        } else if (fin > cp[0]) {
            cp[0] = fin;
        }
    }
}

int npu_conv_dw_store_run(const npu_conv_plan_t *p, const int *pass_of, int pass, int lo, int hi, int t)
{
    int e = t;
    for (;; e++) {
        int done = e < p->T, g = -1, fin = done ? npu_conv_dw_fin_row(p, e / p->c.KW) : 0;
        for (int cb = 0; done && cb < p->cw; cb++)
            g = pass_of[cb * p->T + e] > g ? pass_of[cb * p->T + e] : g;
        if (!done || g != pass || fin <= lo || fin > hi)
            return e;
    }
}

/* dW: the bytes of the pass's STOREs of taps finishing in (lo, hi] (conv_dw.c dw_stores): a
 * flat run per run of taps when the whole dW is one run of whole words, else per tap its F rows.
 * *drains: whether the group drains a region (one of a tap some wave reaches). */
static uint64_t dw_group_bytes(const npu_conv_plan_t *p, const int *pass_of, int pass, int lo, int hi, int *drains)
{
    uint64_t t = 0, F = (uint64_t)p->c.F, tap = F * p->pout * p->B;
    int flat = npu_conv_dw_flat(p);
    *drains = 0;
    for (int q = 0; q < p->T * p->cw; q++) {
        int fin = npu_conv_dw_fin_row(p, q % p->T / p->c.KW);
        *drains |= pass_of[q] == pass && fin > lo && fin <= hi && npu_cx_dw_tap_valid(p, q % p->T);
    }
    for (int k = 0; k < p->T;) {
        int e = npu_conv_dw_store_run(p, pass_of, pass, lo, hi, k);
        if (e > k && flat)
            t += xfer(p->DB, p->org_out + (uint64_t)k * tap, 1, (uint64_t)(e - k) * tap, 0);
        for (int u = k; e > k && !flat && u < e; u++)
            t += npu_conv_px_bytes(p->B, p->DB, p->org_out + (uint64_t)u * p->dtap_rows * p->pitch_out, F, p->pout,
                                   4u * (unsigned)p->c.C, p->pitch_out);
        k = e + (e == k);
    }
    return t;
}

/* dW: the stores of the dW taps, cut as the emitter cuts them (conv_dw.c npu_cx_unit_dw): per
 * pass, its last unit's early groups (each only when it has a store and a drain, else it goes
 * with the next), then the rest. */
static uint64_t dw_out_bytes(const npu_conv_plan_t *p)
{
    size_t n = (size_t)p->T * (size_t)p->cw;
    int *pass_of = calloc(n ? n : 1, sizeof *pass_of), dr;
    unsigned *row_of = calloc(n ? n : 1, sizeof *row_of);
    uint64_t t = 0;
    if (pass_of && row_of && npu_conv_dw_layout(p, p->dw_obuf_rows, pass_of, row_of) > 0)
        for (int u = 0; u < p->units; u++) {
            npu_conv_unit_t un;
            int cp[2] = {-1, -1}, lo = INT_MIN;
            npu_conv_unit_at(p, u, &un);
            if (un.b != p->c.batch - 1 || un.band != p->nbands - 1)
                continue;
            npu_conv_dw_early_rows(p, pass_of, un.grp, un.i0, cp);
            for (int k = 0; k < 2; k++) {
                uint64_t g;
                if (cp[k] < un.i0 || cp[k] >= un.i1)
                    continue;
                g = dw_group_bytes(p, pass_of, un.grp, lo, cp[k], &dr);
                if (g && dr) {
                    t += g;
                    lo = cp[k];
                }
            }
            t += dw_group_bytes(p, pass_of, un.grp, lo, INT_MAX, &dr);
        }
    free(pass_of);
    free(row_of);
    return t;
}

uint64_t npu_conv_dw_partial_bytes(const npu_conv_plan_t *p)
{
    int runs = npu_conv_dw_flat(p) ? 1 : p->T; /* conv_dw.c dw_load_partial */
    uint64_t rows = (uint64_t)p->c.F * (uint64_t)(p->T / runs), t = 0;
    for (int k = 0; k < runs; k++)
        t += npu_conv_px_bytes(p->B, p->DB, p->org_out + (uint64_t)k * p->dtap_rows * p->pitch_out, rows, p->pout,
                               4u * (unsigned)p->c.C, p->pitch_out);
    return t;
}

uint64_t npu_conv_tensor_bytes(const npu_conv_plan_t *p, unsigned tag)
{
    const npu_conv_t *c = &p->c;
    uint64_t B = p->B, DB = p->DB, b = (uint64_t)c->batch, T = (uint64_t)p->T, n;
    switch (tag) {
    case NPU_TAG_X: n = b * (uint64_t)c->H * (uint64_t)c->W * p->pitch_x; break;
    case NPU_TAG_W: /* depthwise: the host's diagonal blocks, 2S one-word rows per tap and block */
        n = c->depthwise ? T * (uint64_t)p->cw * (uint64_t)p->L * B : T * (uint64_t)c->F * p->pitch_w;
        break;
    case NPU_TAG_DY: n = b * (uint64_t)p->vOH * (uint64_t)p->vOW * p->pitch_dy; break;
    case NPU_TAG_Y: n = b * (uint64_t)p->OH * (uint64_t)p->OW * p->pitch_out; break;
    case NPU_TAG_DX: n = b * (uint64_t)c->H * (uint64_t)c->W * p->pitch_out; break;
    case NPU_TAG_DW: n = T * (uint64_t)c->F * p->pitch_out; break;
    default: return 0;
    }
    return (n + DB - 1) / DB * DB; /* the tensor from a DRAM beat, in whole beats */
}

void npu_conv_comp_bytes(npu_conv_plan_t *p)
{
    int kernel = p->kernel;
    unsigned out = kernel == NPU_CONV_FWD ? NPU_TAG_Y : kernel == NPU_CONV_DX ? NPU_TAG_DX : NPU_TAG_DW;
    npu_conv_plan_t q = *p; /* dW zeropad: the original dY, not the host's zero-inserted one */
    q.vOH = p->OH;
    q.vOW = p->OW;
    memset(p->comp_rd, 0, sizeof p->comp_rd);
    memset(p->comp_wr, 0, sizeof p->comp_wr);
    if (kernel != NPU_CONV_DX)
        p->comp_rd[NPU_TAG_X] = npu_conv_tensor_bytes(&q, NPU_TAG_X);
    if (kernel != NPU_CONV_DW)
        p->comp_rd[NPU_TAG_W] = npu_conv_tensor_bytes(&q, NPU_TAG_W);
    if (kernel != NPU_CONV_FWD)
        p->comp_rd[NPU_TAG_DY] = npu_conv_tensor_bytes(&q, NPU_TAG_DY);
    p->comp_wr[out] = npu_conv_tensor_bytes(&q, out);
}

void npu_conv_plan_bytes(npu_conv_plan_t *p)
{
    int kernel = p->kernel;
    memset(p->plan_rd, 0, sizeof p->plan_rd);
    memset(p->plan_wr, 0, sizeof p->plan_wr);
    for (int u = 0; u < p->units; u++) {
        npu_conv_unit_t un;
        uint64_t rx, rdy, wr;
        npu_conv_unit_at(p, u, &un);
        unit_bytes(p, &un, &rx, &rdy, &wr);
        p->plan_rd[NPU_TAG_X] += rx;
        p->plan_rd[NPU_TAG_DY] += rdy;
        p->plan_wr[kernel == NPU_CONV_FWD ? NPU_TAG_Y : NPU_TAG_DX] += wr;
    }
    if (kernel != NPU_CONV_DW)
        p->plan_rd[NPU_TAG_W] = w_bytes(p);
    else
        p->plan_wr[NPU_TAG_DW] = dw_out_bytes(p);
    npu_conv_comp_bytes(p);
}
