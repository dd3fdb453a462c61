/* conv_emit.c - convolution program emission; see conv_emit.h and docs/conv.md. */
#include "conv_emit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

/* The instruction groups of one unit (conv_emit.h). */
typedef struct unit_prog {
    npu_prog_t L, FO, C, D, S;
} unit_prog_t;

typedef struct cx {
    const npu_cfg_t *cfg;
    const npu_conv_plan_t *p;
    const npu_conv_addrs_t *a;
    unsigned B;
    int S, L;
    unsigned bank;       /* weight bank of the next LDW (LDW/WAVE pairs alternate banks) */
    int err;
    char why[160];
    uint8_t *cov;        /* per OBUF row: written since its region was (re)started -> acc = 1 */
    uint8_t *reg_init;   /* dW: region (cb, tap) already drained into the SPM tile */
    uint8_t *tap_valid;  /* dW: some wave of the whole program reaches tap t */
} cx_t;

static void fail(cx_t *x, const char *why)
{
    if (!x->err)
        snprintf(x->why, sizeof x->why, "%s", why);
    x->err = 1;
}

static void put(cx_t *x, npu_prog_t *l, int rc, const npu_insn_t *in)
{
    if (rc != 0) {
        fail(x, "a field does not fit its encoding");
        return;
    }
    if (npu_prog_push(l, in) != 0)
        fail(x, "out of memory");
}

static uint32_t daddr(cx_t *x, uint64_t a)
{
    if (a > 0xFFFFFFFFull || a % x->B) {
        fail(x, "DRAM address past 32 bits or not beat-aligned");
        return 0;
    }
    return (uint32_t)a;
}

static unsigned mode_of(const cx_t *x, int k) { return k > x->S ? NPU_MODE_FW : NPU_MODE_HSW; }

/* FILL `rows` rows of `words` words at spm + r*stride (row_bytes is 16 bits: long rows are
 * cut into column chunks; contiguous rows become one long row). */
static void fill(cx_t *x, npu_prog_t *l, unsigned rows, unsigned spm, unsigned stride, unsigned words)
{
    unsigned wmax = 65535u / x->B;
    npu_insn_t in;
    if (!rows || !words)
        return;
    if (stride == words && rows > 1) { /* one contiguous block */
        words *= rows;
        rows = 1;
        stride = 0;
    }
    if (rows == 1 && words > wmax) { /* a long block: rows of wmax words */
        unsigned full = words / wmax, rest = words % wmax;
        put(x, l, npu_enc_fill(&in, full, spm, wmax, wmax * x->B), &in);
        if (rest)
            put(x, l, npu_enc_fill(&in, 1, spm + full * wmax, 0, rest * x->B), &in);
        return;
    }
    for (unsigned c0 = 0; c0 < words; c0 += wmax) {
        unsigned w = words - c0 < wmax ? words - c0 : wmax;
        put(x, l, npu_enc_fill(&in, rows, spm + c0, stride, w * x->B), &in);
    }
}

/* LOAD of `nrows` tensor rows of `pix` pixels x `pw` words each: image row r from DRAM
 * dram + r*dpitch beats to SPM spm + r*spitch words. One descriptor row per tensor row when it
 * fits the 16-bit fields, else one per pixel. */
static void load_rows(cx_t *x, npu_prog_t *l, unsigned tag, unsigned nrows, uint64_t dram,
                      unsigned dpitch, unsigned spm, unsigned spitch, unsigned pix, unsigned pw)
{
    npu_insn_t in;
    uint64_t bytes = (uint64_t)pix * pw * x->B;
    if (!nrows || !pix)
        return;
    if (bytes <= 65535 && (nrows == 1 || (dpitch <= 65535 && spitch <= 65535))) {
        put(x, l, npu_enc_load(&in, tag, 0, nrows, daddr(x, dram), spm, nrows > 1 ? spitch : 0,
                               (unsigned)bytes, nrows > 1 ? dpitch : 0), &in);
        return;
    }
    for (unsigned r = 0; r < nrows; r++)
        put(x, l, npu_enc_load(&in, tag, 0, pix, daddr(x, dram + (uint64_t)r * dpitch * x->B),
                               spm + r * spitch, pw, pw * x->B, pw), &in);
}

/* LDW into the next weight bank; returns the bank. */
static unsigned ldw(cx_t *x, npu_prog_t *l, unsigned spm, unsigned stride, int k, int klo, int n)
{
    npu_insn_t in;
    unsigned bank = x->bank;
    int rc = npu_enc_ldw(&in, bank, mode_of(x, k), spm, stride, (unsigned)k, (unsigned)n);
    if (rc == 0 && klo)
        rc = npu_insn_k_lo(&in, (unsigned)klo);
    put(x, l, rc, &in);
    x->bank ^= 1u;
    return bank;
}

/* WAVE of m rows into OBUF rows obuf.., cut into maximal runs of equal coverage: an uncovered
 * run starts its accumulators (acc = 0), a covered one adds (acc = 1). */
static void wave(cx_t *x, npu_prog_t *l, unsigned bank, int m, unsigned spm, unsigned stride,
                 int k, int klo, int n, unsigned obuf)
{
    int i = 0;
    while (i < m) {
        int j = i + 1, acc = x->cov[obuf + (unsigned)i];
        npu_insn_t in;
        while (j < m && x->cov[obuf + (unsigned)j] == acc)
            j++;
        int rc = npu_enc_wave(&in, bank, mode_of(x, k), acc, (unsigned)(j - i),
                              spm + (unsigned)i * stride, stride, (unsigned)k, (unsigned)n,
                              obuf + (unsigned)i);
        if (rc == 0 && klo)
            rc = npu_insn_k_lo(&in, (unsigned)klo);
        put(x, l, rc, &in);
        memset(x->cov + obuf + i, 1, (size_t)(j - i));
        i = j;
    }
}

/* Rows [un->i0, un->i1) of the X plane padded by P (fwd: p; dW zeropad: p; dW ecoflow: 0) into
 * SPM base: the rows some output row reads, interior rows by LOAD (and their border columns by
 * FILL), padding rows by FILL. */
static void load_plane(cx_t *x, npu_prog_t *l, const npu_conv_unit_t *un, unsigned base)
{
    const npu_conv_plan_t *p = x->p;
    const npu_conv_t *c = &p->c;
    unsigned cw = (unsigned)p->cw, rw = (unsigned)p->PW * cw, P = (unsigned)p->P;
    int pr = un->i0;
    while (pr < un->i1) {
        if (!npu_conv_plane_row_used(p, un, pr)) {
            pr++;
            continue;
        }
        int in = pr - p->P >= 0 && pr - p->P < c->H, q = pr + 1;
        while (q < un->i1 && npu_conv_plane_row_used(p, un, q) &&
               (q - p->P >= 0 && q - p->P < c->H) == in)
            q++;
        unsigned nr = (unsigned)(q - pr), spm = base + (unsigned)(pr - un->i0) * rw;
        if (!in) {
            fill(x, l, nr, spm, rw, rw);
        } else {
            if (P) {
                fill(x, l, nr, spm, rw, P * cw);
                fill(x, l, nr, spm + (P + (unsigned)c->W) * cw, rw, P * cw);
            }
            uint64_t row = (uint64_t)un->b * (uint64_t)c->H + (uint64_t)(pr - p->P);
            load_rows(x, l, NPU_TAG_X, nr, x->a->x + row * (uint64_t)c->W * cw * x->B,
                      (unsigned)c->W * cw, spm + P * cw, rw, (unsigned)c->W, cw);
        }
        pr = q;
    }
}

/* The weights, resident for the whole program (unit 0). fwd: per tap a transposed LOAD, SPM row
 * c of tap t holds the F filters (B tile rows c, lanes f); dX: Wt as stored, SPM row (t, f)
 * holds the C channels (B tile rows f, lanes c). */
static void load_weights(cx_t *x, npu_prog_t *l)
{
    const npu_conv_plan_t *p = x->p;
    const npu_conv_t *c = &p->c;
    npu_insn_t in;
    uint64_t tap_bytes = (uint64_t)c->F * p->pw * x->B;
    if (p->kernel == NPU_CONV_FWD) {
        for (int t = 0; t < p->T; t++)
            put(x, l, npu_enc_load(&in, NPU_TAG_W, 1, (unsigned)c->F, daddr(x, x->a->w + (uint64_t)t * tap_bytes),
                                   p->w_base + (unsigned)(t * c->C * p->fw), (unsigned)p->fw,
                                   2u * (unsigned)c->C, p->pw), &in);
    } else {
        for (int t0 = 0; t0 < p->T;) { /* rows field is 16 bits */
            int nt = imin(p->T - t0, 65535 / c->F);
            put(x, l, npu_enc_load(&in, NPU_TAG_W, 0, (unsigned)(nt * c->F),
                                   daddr(x, x->a->w + (uint64_t)t0 * tap_bytes),
                                   p->w_base + (unsigned)(t0 * c->F * p->cw), (unsigned)p->cw,
                                   2u * (unsigned)c->C, p->pw), &in);
            t0 += nt;
        }
    }
}

/* STORE of the unit's output tile: rows pixels from tile pixel 0 (pitch 2G words) to DRAM
 * pixel `pix0` of the output tensor, lanes of blocks [k0, k1). */
static void store_tile(cx_t *x, npu_prog_t *l, unsigned tag, const npu_conv_unit_t *un,
                       unsigned rows, uint64_t pix0, int chans)
{
    const npu_conv_plan_t *p = x->p;
    npu_insn_t in;
    unsigned G = (unsigned)(un->k1 - un->k0);
    unsigned lanes = (unsigned)(imin(chans, un->k1 * p->L) - un->k0 * p->L);
    uint64_t dram = x->a->out + pix0 * p->pout * x->B + 4ull * (unsigned)p->L * (unsigned)un->k0;
    for (unsigned r0 = 0; r0 < rows; r0 += 65535u) {
        unsigned nr = rows - r0 < 65535u ? rows - r0 : 65535u;
        put(x, l, npu_enc_store(&in, tag, nr, daddr(x, dram + (uint64_t)r0 * p->pout * x->B),
                                p->out_base[un->u % 2] + r0 * 2u * G, 2u * G, 4u * lanes, p->pout), &in);
    }
}

/* ---- fwd ------------------------------------------------------------------------------ */

static void unit_fwd(cx_t *x, const npu_conv_unit_t *un, unit_prog_t *up)
{
    const npu_conv_plan_t *p = x->p;
    const npu_conv_t *c = &p->c;
    unsigned in = p->in_base[un->u % 2], hb = (unsigned)(un->u % 2) * (unsigned)x->cfg->obuf_rows;
    unsigned cw = (unsigned)p->cw, OW = (unsigned)p->OW, Ru = (unsigned)(un->r1 - un->r0);
    unsigned G = (unsigned)(un->k1 - un->k0);
    npu_insn_t ins;
    if (un->u == 0)
        load_weights(x, &up->L);
    load_plane(x, &up->L, un, in);
    memset(x->cov + hb, 0, (size_t)G * Ru * OW);
    for (int t = 0; t < p->T; t++) {
        int kh = t / c->KW, kw = t % c->KW;
        for (int cb = 0; cb < p->cw; cb++) {
            int ck = imin(p->L, c->C - cb * p->L);
            for (int fb = un->k0; fb < un->k1; fb++) {
                int nf = imin(p->L, c->F - fb * p->L);
                unsigned bank = ldw(x, &up->C, p->w_base + (unsigned)((t * c->C + cb * p->L) * p->fw + fb),
                                    (unsigned)p->fw, ck, 0, nf);
                for (int oh = un->r0; oh < un->r1; oh++) {
                    unsigned row = (unsigned)(oh * c->stride + kh * c->dil - un->i0);
                    wave(x, &up->C, bank, p->OW,
                         in + (row * (unsigned)p->PW + (unsigned)(kw * c->dil)) * cw + (unsigned)cb,
                         (unsigned)c->stride * cw, ck, 0, nf,
                         hb + ((unsigned)(fb - un->k0) * Ru + (unsigned)(oh - un->r0)) * OW);
                }
            }
        }
    }
    for (unsigned j = 0; j < G; j++)
        put(x, &up->D, npu_enc_drain(&ins, Ru * OW, hb + j * Ru * OW, p->out_base[un->u % 2] + 2u * j, 2u * G), &ins);
    store_tile(x, &up->S, NPU_TAG_Y, un, Ru * OW,
               ((uint64_t)un->b * (uint64_t)p->OH + (uint64_t)un->r0) * OW, c->F);
}

/* ---- dX --------------------------------------------------------------------------------- */

/* B tile of (tap, f-block, c-block) for dX: rows f, lanes c. */
static unsigned ldw_dx(cx_t *x, npu_prog_t *l, int t, int fb, int cb)
{
    const npu_conv_plan_t *p = x->p;
    const npu_conv_t *c = &p->c;
    return ldw(x, l, p->w_base + (unsigned)((t * c->F + fb * p->L) * p->cw + cb), (unsigned)p->cw,
               imin(p->L, c->F - fb * p->L), 0, imin(p->L, c->C - cb * p->L));
}

static void unit_dx_zeropad(cx_t *x, const npu_conv_unit_t *un, unit_prog_t *up)
{
    const npu_conv_plan_t *p = x->p;
    const npu_conv_t *c = &p->c;
    unsigned in = p->in_base[un->u % 2], hb = (unsigned)(un->u % 2) * (unsigned)x->cfg->obuf_rows;
    unsigned fw = (unsigned)p->fw, W = (unsigned)c->W, ZW = (unsigned)p->ZW;
    unsigned Ru = (unsigned)(un->r1 - un->r0), G = (unsigned)(un->k1 - un->k0);
    int s = c->stride, v0 = c->pad - (c->KW - 1) * c->dil;
    int ow0 = imax(0, npu_ceildiv(v0, s)), ow1 = imin(p->OW, npu_floordiv(c->W + c->pad - 1, s) + 1);
    npu_insn_t ins;
    if (un->u == 0)
        load_weights(x, &up->L);
    /* Z plane: zero everything, then each dY row to its dilated positions */
    fill(x, &up->L, 1, in, 0, (unsigned)(un->i1 - un->i0) * ZW * fw);
    for (int oh = imax(0, npu_ceildiv(un->i0, s)); ow1 > ow0 && oh < p->OH && oh * s < un->i1; oh++) {
        unsigned spm = in + ((unsigned)(oh * s - un->i0) * ZW + (unsigned)(ow0 * s - v0)) * fw;
        uint64_t dram = x->a->dy + (((uint64_t)un->b * (uint64_t)p->OH + (uint64_t)oh) * (uint64_t)p->OW +
                                    (uint64_t)ow0) * fw * x->B;
        if (s == 1) { /* contiguous: the run of rows in one LOAD */
            int oe = oh + 1;
            while (oe < p->OH && oe < un->i1)
                oe++;
            load_rows(x, &up->L, NPU_TAG_DY, (unsigned)(oe - oh), dram, (unsigned)p->OW * fw, spm,
                      ZW * fw, (unsigned)(ow1 - ow0), fw);
            oh = oe - 1;
        } else {
            put(x, &up->L, npu_enc_load(&ins, NPU_TAG_DY, 0, (unsigned)(ow1 - ow0), daddr(x, dram), spm,
                                        (unsigned)s * fw, fw * x->B, fw), &ins);
        }
    }
    memset(x->cov + hb, 0, (size_t)G * Ru * W);
    for (int t = 0; t < p->T; t++) {
        int kh = t / c->KW, kw = t % c->KW;
        for (int fb = 0; fb < p->fw; fb++)
            for (int cb = un->k0; cb < un->k1; cb++) {
                unsigned bank = ldw_dx(x, &up->C, t, fb, cb);
                for (int ih = un->r0; ih < un->r1; ih++) {
                    unsigned zr = (unsigned)(ih + c->pad - kh * c->dil - un->i0);
                    wave(x, &up->C, bank, c->W,
                         in + (zr * ZW + (unsigned)((c->KW - 1 - kw) * c->dil)) * fw + (unsigned)fb, fw,
                         imin(p->L, c->F - fb * p->L), 0, imin(p->L, c->C - cb * p->L),
                         hb + ((unsigned)(cb - un->k0) * Ru + (unsigned)(ih - un->r0)) * W);
                }
            }
    }
    for (unsigned j = 0; j < G; j++)
        put(x, &up->D, npu_enc_drain(&ins, Ru * W, hb + j * Ru * W, p->out_base[un->u % 2] + 2u * j, 2u * G), &ins);
    store_tile(x, &up->S, NPU_TAG_DX, un, Ru * W,
               ((uint64_t)un->b * (uint64_t)c->H + (uint64_t)un->r0) * W, c->C);
}

/* dX ecoflow (phase decomposition, docs/conv.md): dX row ih gets tap kh when
 * (ih + p - kh*d) % s == 0 (dY row oh = (ih + p - kh*d) / s); tap kw feeds the one column phase
 * b = (kw*d - p) mod s, dX columns iw = x*s + b, from dY columns ow = x + off, a contiguous run.
 * OBUF per dX row: phase 0's pixels, then phase 1's, ...; each wave writes consecutive rows. */
static void unit_dx_ecoflow(cx_t *x, const npu_conv_unit_t *un, unit_prog_t *up)
{
    const npu_conv_plan_t *p = x->p;
    const npu_conv_t *c = &p->c;
    unsigned in = p->in_base[un->u % 2], hb = (unsigned)(un->u % 2) * (unsigned)x->cfg->obuf_rows;
    unsigned fw = (unsigned)p->fw, W = (unsigned)c->W, OW = (unsigned)p->OW;
    unsigned Ru = (unsigned)(un->r1 - un->r0), G = (unsigned)(un->k1 - un->k0);
    unsigned tile = p->out_base[un->u % 2];
    int s = c->stride, uncovered = 0;
    npu_insn_t ins;
    if (un->u == 0)
        load_weights(x, &up->L);
    if (un->i1 > un->i0)
        load_rows(x, &up->L, NPU_TAG_DY, (unsigned)(un->i1 - un->i0),
                  x->a->dy + ((uint64_t)un->b * (uint64_t)p->OH + (uint64_t)un->i0) * OW * fw * x->B,
                  OW * fw, in, OW * fw, OW, fw);
    memset(x->cov + hb, 0, (size_t)G * Ru * W);
    for (int t = 0; t < p->T; t++) {
        int kh = t / c->KW, kw = t % c->KW;
        int b = ((kw * c->dil - c->pad) % s + s) % s;
        int off = (b + c->pad - kw * c->dil) / s; /* exact: b = kw*d - p (mod s) */
        int nx = npu_conv_phase_nx(p, b), po = npu_conv_phase_off(p, b);
        int x_lo = imax(0, -off), x_hi = imin(nx, p->OW - off);
        int any = 0;
        if (x_lo >= x_hi)
            continue;
        for (int ih = un->r0; ih < un->r1 && !any; ih++) {
            int num = ih + c->pad - kh * c->dil;
            any = num >= 0 && num % s == 0 && num / s < p->OH;
        }
        if (!any)
            continue;
        for (int fb = 0; fb < p->fw; fb++)
            for (int cb = un->k0; cb < un->k1; cb++) {
                unsigned bank = ldw_dx(x, &up->C, t, fb, cb);
                for (int ih = un->r0; ih < un->r1; ih++) {
                    int num = ih + c->pad - kh * c->dil, oh = num / s;
                    if (num < 0 || num % s || oh >= p->OH)
                        continue;
                    wave(x, &up->C, bank, x_hi - x_lo,
                         in + ((unsigned)(oh - un->i0) * OW + (unsigned)(x_lo + off)) * fw + (unsigned)fb, fw,
                         imin(p->L, c->F - fb * p->L), 0, imin(p->L, c->C - cb * p->L),
                         hb + ((unsigned)(cb - un->k0) * Ru + (unsigned)(ih - un->r0)) * W +
                             (unsigned)(po + x_lo));
                }
            }
    }
    /* DRAIN the covered runs of each (dX row, phase) to pixels x*s + b (stride s pixels) */
    for (unsigned j = 0; j < G; j++)
        for (unsigned r = 0; r < Ru; r++)
            for (int b = 0; b < s && b < c->W; b++) {
                int nx = npu_conv_phase_nx(p, b);
                unsigned ob = hb + (j * Ru + r) * W + (unsigned)npu_conv_phase_off(p, b);
                for (int x0 = 0; x0 < nx;) {
                    int x1 = x0;
                    while (x1 < nx && x->cov[ob + (unsigned)x1])
                        x1++;
                    if (x1 > x0)
                        put(x, &up->D, npu_enc_drain(&ins, (unsigned)(x1 - x0), ob + (unsigned)x0,
                                                     tile + ((r * W + (unsigned)(x0 * s + b)) * G + j) * 2u,
                                                     (unsigned)s * 2u * G), &ins);
                    else
                        uncovered = 1;
                    x0 = x1 > x0 ? x1 : x0 + 1;
                }
            }
    if (uncovered) /* pixels no tap reaches are zero */
        fill(x, &up->FO, 1, tile, 0, Ru * W * 2u * G);
    store_tile(x, &up->S, NPU_TAG_DX, un, Ru * W,
               ((uint64_t)un->b * (uint64_t)c->H + (uint64_t)un->r0) * W, c->C);
}

/* ---- dW --------------------------------------------------------------------------------- */

/* Valid dY columns of tap kw: X plane column ow*vs + kw*d - vp inside [0, PW). */
static void dw_cols(const npu_conv_plan_t *p, int kw, int *ow_a, int *ow_b)
{
    *ow_a = imax(0, npu_ceildiv(p->vp - kw * p->c.dil, p->vs));
    *ow_b = imin(p->vOW, npu_floordiv(p->PW - 1 + p->vp - kw * p->c.dil, p->vs) + 1);
}

static int dw_tap_valid(const npu_conv_plan_t *p, int t)
{
    int kh = t / p->c.KW, kw = t % p->c.KW, a, b;
    dw_cols(p, kw, &a, &b);
    if (a >= b)
        return 0;
    for (int oh = 0; oh < p->vOH; oh++) {
        int pr = oh * p->vs + kh * p->c.dil - p->vp;
        if (pr >= 0 && pr < p->PH)
            return 1;
    }
    return 0;
}

/* OBUF row of dW region q = cb*T + tap (F rows; group q / per_half in half group % 2). */
static unsigned dw_region(const cx_t *x, int q)
{
    int ph = x->p->dw_per_half;
    return (unsigned)((q / ph) % 2) * (unsigned)x->cfg->obuf_rows + (unsigned)((q % ph) * x->p->c.F);
}

/* DRAINs of the covered regions of [q0, q1) into the dW tile (merged where OBUF and SPM rows
 * are contiguous: same c-block, consecutive taps); acc where the region was drained before. */
static void dw_drains(cx_t *x, npu_prog_t *l, int q0, int q1)
{
    const npu_conv_plan_t *p = x->p;
    unsigned F = (unsigned)p->c.F, dwp = 2u * (unsigned)p->cw;
    npu_insn_t in;
    for (int q = q0; q < q1;) {
        unsigned o = dw_region(x, q);
        if (!x->cov[o]) {
            q++;
            continue;
        }
        int e = q + 1, acc = x->reg_init[q];
        while (e < q1 && e % p->T != 0 && e % p->dw_per_half != 0 && x->cov[dw_region(x, e)] &&
               x->reg_init[e] == acc &&
               dw_region(x, e) == o + (unsigned)(e - q) * F)
            e++;
        int rc = npu_enc_drain(&in, (unsigned)(e - q) * F, o,
                               p->out_base[0] + (unsigned)(q % p->T) * F * dwp + 2u * (unsigned)(q / p->T), dwp);
        if (rc == 0 && acc)
            rc = npu_insn_drain_acc(&in);
        put(x, l, rc, &in);
        for (int i = q; i < e; i++)
            x->reg_init[i] = 1;
        q = e;
    }
}

/* dW: the GEMM per tap dW[t] (F x C) = sum over dY pixels of dY^T (rows f) x X pixels (rows =
 * the pixels, lanes c). A = dY^T word j of a row (transposed LOAD per dY row: word j holds
 * columns ow in [2S*j, 2S*j + 2S)), B = the X pixels those columns read (stride vs*cw); lanes
 * outside the valid columns are cut by k (top) and k_lo (bottom) on both LDW and WAVE. */
static void unit_dw(cx_t *x, const npu_conv_unit_t *un, unit_prog_t *up)
{
    const npu_conv_plan_t *p = x->p;
    const npu_conv_t *c = &p->c;
    unsigned in = p->in_base[un->u % 2], xb = in + p->xoff;
    unsigned fw = (unsigned)p->fw, cw = (unsigned)p->cw, owj = (unsigned)p->owj;
    unsigned F = (unsigned)c->F, dwp = 2u * (unsigned)p->cw;
    int nreg = p->T * p->cw, ngr = p->dw_resident ? 1 : p->dw_groups;
    npu_insn_t ins;
    if (un->u == 0) /* dW of taps no wave reaches is zero */
        for (int t = 0; t < p->T; t++)
            if (!x->tap_valid[t])
                fill(x, &up->L, F, p->out_base[0] + (unsigned)t * F * dwp, dwp, dwp);
    for (int oh = un->r0; oh < un->r1; oh++)
        put(x, &up->L, npu_enc_load(&ins, NPU_TAG_DY, 1, (unsigned)p->vOW,
                                    daddr(x, x->a->dy + (((uint64_t)un->b * (uint64_t)p->vOH + (uint64_t)oh) *
                                                         (uint64_t)p->vOW) * fw * x->B),
                                    in + (unsigned)(oh - un->r0) * F * owj, owj, 2u * F, fw), &ins);
    load_plane(x, &up->L, un, xb);
    for (int g = 0; g < ngr; g++) {
        int q0 = p->dw_resident ? 0 : g * p->dw_per_half, q1 = p->dw_resident ? nreg : imin(nreg, q0 + p->dw_per_half);
        if (!p->dw_resident)
            for (int q = q0; q < q1; q++)
                memset(x->cov + dw_region(x, q), 0, F);
        for (int oh = un->r0; oh < un->r1; oh++)
            for (int t = 0; t < p->T; t++) {
                int kh = t / c->KW, kw = t % c->KW, ow_a, ow_b;
                int pr = oh * p->vs + kh * c->dil - p->vp;
                if (pr < 0 || pr >= p->PH)
                    continue;
                dw_cols(p, kw, &ow_a, &ow_b);
                for (int j = 0; j * p->L < ow_b; j++) {
                    int klo = imax(ow_a - j * p->L, 0), khi = imin(ow_b - j * p->L, p->L);
                    if (klo >= khi)
                        continue;
                    for (int cb = 0; cb < p->cw; cb++) {
                        int q = cb * p->T + t;
                        if (q < q0 || q >= q1)
                            continue;
                        int nc = imin(p->L, c->C - cb * p->L);
                        int pc = (j * p->L + klo) * p->vs + kw * c->dil - p->vp;
                        unsigned bank = ldw(x, &up->C, xb + ((unsigned)(pr - un->i0) * (unsigned)p->PW + (unsigned)pc) * cw + (unsigned)cb,
                                            (unsigned)p->vs * cw, khi, klo, nc);
                        for (int fb = 0; fb < p->fw; fb++)
                            wave(x, &up->C, bank, imin(p->L, c->F - fb * p->L),
                                 in + (unsigned)(oh - un->r0) * F * owj + (unsigned)(fb * p->L) * owj + (unsigned)j,
                                 owj, khi, klo, nc, dw_region(x, q) + (unsigned)(fb * p->L));
                    }
                }
            }
        if (!p->dw_resident)
            dw_drains(x, &up->C, q0, q1);
    }
    if (un->u == p->units - 1) {
        if (p->dw_resident)
            dw_drains(x, &up->D, 0, nreg);
        put(x, &up->S, npu_enc_store(&ins, NPU_TAG_DW, (unsigned)p->T * F, daddr(x, x->a->out), p->out_base[0],
                                     dwp, 4u * (unsigned)c->C, p->pout), &ins);
    }
}

/* ---- assembly with tokens ---------------------------------------------------------------- */

static int is_reader(const npu_insn_t *in)
{
    unsigned op = npu_insn_op(in);
    return op == NPU_OP_LDW || op == NPU_OP_WAVE;
}

/* Appends l[0..n) to out with tok_first on the first and tok_last on the last; an empty group
 * with tokens becomes a SYNC of its queue. */
static void append(cx_t *x, npu_prog_t *out, const npu_insn_t *l, size_t n, unsigned sync_op,
                   unsigned tok_first, unsigned tok_last)
{
    npu_insn_t in;
    if (!n) {
        if (tok_first | tok_last) {
            npu_enc_sync(&in, sync_op);
            npu_insn_tok(&in, tok_first | tok_last);
            put(x, out, 0, &in);
        }
        return;
    }
    for (size_t i = 0; i < n; i++) {
        in = l[i];
        if (i == 0)
            npu_insn_tok(&in, tok_first);
        if (i == n - 1)
            npu_insn_tok(&in, tok_last);
        put(x, out, 0, &in);
    }
}

static void emit_load_side(cx_t *x, unit_prog_t *u, int ui, int relay, npu_prog_t *out)
{
    append(x, out, u->L.insn, u->L.n, NPU_OP_SYNC_L, ui >= 2 ? NPU_TOK_POP_NEXT : 0, NPU_TOK_PUSH_NEXT);
    if (u->FO.n)
        append(x, out, u->FO.insn, u->FO.n, NPU_OP_SYNC_L, relay && ui >= 2 ? NPU_TOK_POP_NEXT : 0,
               NPU_TOK_PUSH_NEXT);
}

static void emit_exec_side(cx_t *x, unit_prog_t *u, int ui, int relay, const unit_prog_t *next,
                           npu_prog_t *out)
{
    const npu_conv_plan_t *p = x->p;
    long reader = -1;
    size_t dstart;
    npu_insn_t in;
    int has_out = p->kernel != NPU_CONV_DW;
    for (size_t i = 0; i < u->C.n; i++)
        if (is_reader(&u->C.insn[i]))
            reader = (long)i;
    /* C up to its last reader; what follows (dW group drains) joins D */
    dstart = reader >= 0 ? (size_t)reader + 1 : u->C.n;
    if (reader < 0) { /* no LDW/WAVE: a SYNC_E takes the input band's tokens */
        append(x, out, u->C.insn, u->C.n, NPU_OP_SYNC_E, 0, 0);
        if (relay && next && ui + 1 >= 2) {
            npu_enc_sync(&in, NPU_OP_SYNC_E);
            npu_insn_tok(&in, NPU_TOK_POP_NEXT | (next->FO.n ? NPU_TOK_PUSH_PREV : 0));
            put(x, out, 0, &in);
        }
        npu_enc_sync(&in, NPU_OP_SYNC_E);
        npu_insn_tok(&in, NPU_TOK_POP_PREV | NPU_TOK_PUSH_PREV);
        put(x, out, 0, &in);
    } else {
        for (long i = 0; i <= reader; i++) {
            in = u->C.insn[i];
            if (i == 0)
                npu_insn_tok(&in, NPU_TOK_POP_PREV);
            if (i == reader) {
                if (relay && next && ui + 1 >= 2) { /* the relay for FO(u+1) (conv_emit.h) */
                    npu_insn_t sy;
                    npu_enc_sync(&sy, NPU_OP_SYNC_E);
                    npu_insn_tok(&sy, NPU_TOK_POP_NEXT | (next->FO.n ? NPU_TOK_PUSH_PREV : 0));
                    put(x, out, 0, &sy);
                }
                npu_insn_tok(&in, NPU_TOK_PUSH_PREV);
            }
            put(x, out, 0, &in);
        }
    }
    {
        /* D: the C tail, then the DRAINs */
        npu_prog_t d;
        unsigned first = 0, last = u->S.n ? NPU_TOK_PUSH_NEXT : 0;
        npu_prog_init(&d);
        for (size_t i = dstart; i < u->C.n; i++)
            put(x, &d, 0, &u->C.insn[i]);
        for (size_t i = 0; i < u->D.n; i++)
            put(x, &d, 0, &u->D.insn[i]);
        if (u->FO.n)
            first |= NPU_TOK_POP_PREV;
        if (has_out && !relay && ui >= 2)
            first |= NPU_TOK_POP_NEXT;
        append(x, out, d.insn, d.n, NPU_OP_SYNC_E, first, last);
        npu_prog_free(&d);
    }
}

static void unit_free(unit_prog_t *u)
{
    npu_prog_free(&u->L);
    npu_prog_free(&u->FO);
    npu_prog_free(&u->C);
    npu_prog_free(&u->D);
    npu_prog_free(&u->S);
}

int npu_conv_emit(const npu_cfg_t *cfg, const npu_conv_plan_t *p, const npu_conv_addrs_t *a,
                  npu_prog_t *out, char *msg, size_t n)
{
    cx_t x;
    unit_prog_t *up;
    int relay = 0;
    memset(&x, 0, sizeof x);
    x.cfg = cfg;
    x.p = p;
    x.a = a;
    x.B = (unsigned)npu_cfg_beat(cfg);
    x.S = cfg->s;
    x.L = npu_cfg_f(cfg);
    up = calloc((size_t)p->units, sizeof *up);
    x.cov = calloc(2u * (size_t)cfg->obuf_rows, 1);
    x.reg_init = calloc((size_t)(p->T * p->cw) + 1, 1);
    x.tap_valid = calloc((size_t)p->T, 1);
    if (!up || !x.cov || !x.reg_init || !x.tap_valid) {
        fail(&x, "out of memory");
    } else {
        for (int t = 0; t < p->T; t++)
            x.tap_valid[t] = (uint8_t)(p->kernel == NPU_CONV_DW ? dw_tap_valid(p, t) : 1);
        for (int u = 0; u < p->units && !x.err; u++) {
            npu_conv_unit_t un;
            npu_conv_unit_at(p, u, &un);
            npu_prog_init(&up[u].L);
            npu_prog_init(&up[u].FO);
            npu_prog_init(&up[u].C);
            npu_prog_init(&up[u].D);
            npu_prog_init(&up[u].S);
            if (p->kernel == NPU_CONV_FWD)
                unit_fwd(&x, &un, &up[u]);
            else if (p->kernel == NPU_CONV_DW)
                unit_dw(&x, &un, &up[u]);
            else if (p->dataflow == NPU_CONV_ZEROPAD)
                unit_dx_zeropad(&x, &un, &up[u]);
            else
                unit_dx_ecoflow(&x, &un, &up[u]);
            relay |= up[u].FO.n > 0;
        }
        /* program order: L(0); per unit u: L(u+1), EXEC(u), STORE(u) */
        if (!x.err)
            emit_load_side(&x, &up[0], 0, relay, out);
        for (int u = 0; u < p->units && !x.err; u++) {
            if (u + 1 < p->units)
                emit_load_side(&x, &up[u + 1], u + 1, relay, out);
            emit_exec_side(&x, &up[u], u, relay, u + 1 < p->units ? &up[u + 1] : NULL, out);
            if (up[u].S.n)
                append(&x, out, up[u].S.insn, up[u].S.n, NPU_OP_SYNC_S, NPU_TOK_POP_PREV, NPU_TOK_PUSH_PREV);
        }
    }
    if (up)
        for (int u = 0; u < p->units; u++)
            unit_free(&up[u]);
    free(up);
    free(x.cov);
    free(x.reg_init);
    free(x.tap_valid);
    if (x.err) {
        if (n)
            snprintf(msg, n, "%s", x.why);
        return -1;
    }
    if (n)
        msg[0] = '\0';
    return 0;
}
