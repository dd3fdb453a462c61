/* conv_emit.c - convolution program emission; see conv_emit.h and docs/conv.md. */
#include "compile/conv/conv_emit.h"

#include "prog/prog_builder.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

/* The instruction groups of one unit (conv_emit.h). */
typedef struct unit_prog {
    npu_prog_t L, FO, C, D, S;
    int first_grp, last_grp; /* first / last unit of its band (the band's input and output) */
    int band;                /* band index over the program (dW: the unit index) */
    int tile_wait; /* fwd/dX: first unit of a band >= 2: its output tile must be stored first */
    npu_prog_t L2;   /* dW, first unit: the rest of its input, loaded while C starts */
    size_t c_split;  /* dW, first unit: 1 + the first C instruction that needs L2 (pops its l2e) */
    size_t dstart;   /* assembly: where D starts in the unit's EXEC list */
    int nx, n2;      /* assembly: the first units of the next two bands (units: none) */
} unit_prog_t;

typedef struct cx {
    const npu_cfg_t *cfg;
    const npu_conv_plan_t *p;
    const npu_conv_addrs_t *a;
    npu_pb_t b;          /* the program builder: failures, weight banks, tokens */
    unsigned B;
    int S, L;
    uint8_t *cov;        /* per OBUF row: written since its region was (re)started -> acc = 1 */
    uint8_t *tap_valid;  /* dW: some wave of the whole program reaches tap t */
    size_t *tap_c;       /* fwd, dX: unit 0's C index of the first LDW of tap t (SIZE_MAX: none) */
    int *pass_of;        /* dW: region q's pass and OBUF row (npu_conv_dw_layout) */
    unsigned *row_of;
} cx_t;

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
        npu_pb_put(&x->b, l, npu_enc_fill(&in, full, spm, wmax, wmax * x->B), &in, 0);
        if (rest)
            npu_pb_put(&x->b, l, npu_enc_fill(&in, 1, spm + full * wmax, 0, rest * x->B), &in, 0);
        return;
    }
    for (unsigned c0 = 0; c0 < words; c0 += wmax) {
        unsigned w = words - c0 < wmax ? words - c0 : wmax;
        npu_pb_put(&x->b, l, npu_enc_fill(&in, rows, spm + c0, stride, w * x->B), &in, 0);
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
        npu_pb_put(&x->b, l, npu_enc_load(&in, tag, 0, nrows, npu_pb_dram(&x->b, dram), spm, nrows > 1 ? spitch : 0,
                               (unsigned)bytes, nrows > 1 ? dpitch : 0), &in, 0);
        return;
    }
    for (unsigned r = 0; r < nrows; r++)
        npu_pb_put(&x->b, l, npu_enc_load(&in, tag, 0, pix, npu_pb_dram(&x->b, dram + (uint64_t)r * dpitch * x->B),
                               spm + r * spitch, pw, pw * x->B, pw), &in, 0);
}

/* LDW into the next weight bank; returns the bank. */
static unsigned ldw(cx_t *x, npu_prog_t *l, unsigned spm, unsigned stride, int k, int klo, int n)
{
    npu_insn_t in;
    unsigned bank = npu_pb_bank(&x->b);
    int rc = npu_enc_ldw(&in, bank, mode_of(x, k), spm, stride, (unsigned)k, (unsigned)n);
    if (rc == 0 && klo)
        rc = npu_insn_k_lo(&in, (unsigned)klo);
    npu_pb_put(&x->b, l, rc, &in, 0);
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
        npu_pb_put(&x->b, l, rc, &in, 0);
        memset(x->cov + obuf + i, 1, (size_t)(j - i));
        i = j;
    }
}

/* Rows [un->i0, un->i1) of the X plane padded by P (fwd: p; dW zeropad: p; dW ecoflow: 0) into
 * SPM base: the rows some output row reads, interior rows by LOAD (and their border columns by
 * FILL), padding rows by FILL. */
static void load_plane_rows(cx_t *x, npu_prog_t *l, const npu_conv_unit_t *un, unsigned base, int lo, int hi)
{
    const npu_conv_plan_t *p = x->p;
    const npu_conv_t *c = &p->c;
    unsigned cw = (unsigned)p->cw, rw = (unsigned)p->PW * cw, P = (unsigned)p->P;
    int pr = lo;
    while (pr < hi) {
        if (!npu_conv_plane_row_used(p, un, pr)) {
            pr++;
            continue;
        }
        int in = pr - p->P >= 0 && pr - p->P < c->H, q = pr + 1;
        while (q < hi && npu_conv_plane_row_used(p, un, q) &&
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

static void load_plane(cx_t *x, npu_prog_t *l, const npu_conv_unit_t *un, unsigned base)
{
    load_plane_rows(x, l, un, base, un->i0, un->i1);
}

/* LOAD of `words` contiguous words from DRAM dram to SPM spm: rows of the largest whole number
 * of words a row_bytes field holds, each a run of long bursts (one descriptor row of a few beats
 * each is one short burst per row: at medium the dX weights' 576 two-beat rows took 3.9k cycles,
 * a flat run 1.2k). */
static void load_flat(cx_t *x, npu_prog_t *l, unsigned tag, uint64_t dram, unsigned spm, uint64_t words)
{
    unsigned cw = 65535u / x->B;
    uint64_t rows = words / cw, rest = words % cw;
    npu_insn_t in;
    while (rows) {
        unsigned nr = rows > 65535u ? 65535u : (unsigned)rows;
        npu_pb_put(&x->b, l, npu_enc_load(&in, tag, 0, nr, npu_pb_dram(&x->b, dram), spm, cw, cw * x->B, cw), &in, 0);
        spm += nr * cw;
        dram += (uint64_t)nr * cw * x->B;
        rows -= nr;
    }
    if (rest)
        npu_pb_put(&x->b, l, npu_enc_load(&in, tag, 0, 1, npu_pb_dram(&x->b, dram), spm, 0, (unsigned)(rest * x->B), 0), &in, 0);
}

/* SPM words of one tap of the resident weights (they are tap-major). */
static unsigned tap_words(const npu_conv_plan_t *p)
{
    const npu_conv_t *c = &p->c;
    if (c->depthwise)
        return (unsigned)(p->cw * p->L);
    return p->kernel == NPU_CONV_FWD ? (unsigned)(c->C * p->fw) : (unsigned)(c->F * p->cw);
}

/* Taps [t0, t1) of the weights, resident for the whole program (unit 0). fwd: per tap a
 * transposed LOAD, SPM row c of tap t holds the F filters (B tile rows c, lanes f); dX: Wt as
 * stored, SPM row (t, f) holds the C channels (B tile rows f, lanes c), one flat run when the
 * rows are whole words; depthwise: the diagonal blocks, one flat run. */
static void load_weights(cx_t *x, npu_prog_t *l, int t0, int t1)
{
    const npu_conv_plan_t *p = x->p;
    const npu_conv_t *c = &p->c;
    npu_insn_t in;
    uint64_t tap_bytes = (uint64_t)c->F * p->pw * x->B, tw = tap_words(p);
    if (t0 >= t1)
        return;
    if (c->depthwise || (p->kernel == NPU_CONV_DX && 2u * (unsigned)c->C == p->pw * x->B)) {
        /* DRAM and SPM are both dense at pitch tw words per tap */
        load_flat(x, l, NPU_TAG_W, x->a->w + (uint64_t)t0 * tw * x->B, p->w_base + (unsigned)(t0 * (int)tw),
                  (uint64_t)(t1 - t0) * tw);
        return;
    }
    if (p->kernel == NPU_CONV_FWD) {
        for (int t = t0; t < t1; t++)
            npu_pb_put(&x->b, l, npu_enc_load(&in, NPU_TAG_W, 1, (unsigned)c->F, npu_pb_dram(&x->b, x->a->w + (uint64_t)t * tap_bytes),
                                   p->w_base + (unsigned)(t * c->C * p->fw), (unsigned)p->fw,
                                   2u * (unsigned)c->C, p->pw), &in, 0);
        return;
    }
    for (int t = t0; t < t1;) { /* rows field is 16 bits */
        int nt = imin(t1 - t, 65535 / c->F);
        npu_pb_put(&x->b, l, npu_enc_load(&in, NPU_TAG_W, 0, (unsigned)(nt * c->F), npu_pb_dram(&x->b, x->a->w + (uint64_t)t * tap_bytes),
                               p->w_base + (unsigned)(t * c->F * p->cw), (unsigned)p->cw, 2u * (unsigned)c->C,
                               p->pw), &in, 0);
        t += nt;
    }
}

/* fwd, dX: notes where unit 0's first LDW of tap t is (resident_weights splits its load there). */
static void mark_tap(cx_t *x, const npu_conv_unit_t *un, const unit_prog_t *up, int t)
{
    if (un->u == 0 && x->tap_c[t] == SIZE_MAX)
        x->tap_c[t] = up->C.n;
}

/* Unit 0's weights, in two parts: taps [0, ts) ahead of the band's input in L, taps [ts, T) in L2,
 * which C pops at the first LDW of tap ts (assemble). The whole set ahead of the first wave was
 * exposed (medium, CONV3 dX: 1.2k cycles of a 32k program even as one flat run); ts is the first
 * tap whose earlier taps' waves cover the rest of the load at the DRAM's rate (16-beat bursts
 * plus their cost: about 5/4 cycles per beat). */
static void resident_weights(cx_t *x, unit_prog_t *up)
{
    const npu_conv_plan_t *p = x->p;
    uint64_t tap_bytes = npu_conv_tensor_bytes(p, NPU_TAG_W) / (uint64_t)p->T, slots = 0;
    int ts = p->T;
    size_t i = 0;
    npu_prog_t l;
    for (int t = 1; t < p->T && ts == p->T; t++) {
        npu_fields_t f;
        if (x->tap_c[t] == SIZE_MAX)
            continue;
        for (; i < x->tap_c[t]; i++)
            if (npu_insn_op(&up->C.insn[i]) == NPU_OP_WAVE && npu_decode(&up->C.insn[i], &f) == 0)
                slots += f.mode == NPU_MODE_HSW ? (f.m + 1) / 2 : f.m;
        if (4 * slots * (uint64_t)x->cfg->dram_bw >= 5 * (uint64_t)(p->T - t) * tap_bytes)
            ts = t;
    }
    npu_prog_init(&l);
    load_weights(x, &l, 0, ts);
    for (size_t j = 0; j < up->L.n; j++)
        npu_pb_put(&x->b, &l, 0, &up->L.insn[j], 0);
    npu_prog_free(&up->L);
    up->L = l;
    load_weights(x, &up->L2, ts, p->T);
    up->c_split = ts < p->T ? x->tap_c[ts] + 1 : 0;
}

/* Output tiles are dense: a pixel (dW: a (tap, f) row) takes pout words, exactly its DRAM pitch
 * ceil(4*channels / B), block j at word 2j; a last block of <= S lanes has only its low word. So
 * a band's tile is one flat byte range of the output tensor (a few long STORE rows of 16-beat
 * bursts instead of a burst per pixel). */
static void drain_blk(cx_t *x, npu_prog_t *l, unsigned rows, unsigned obuf, unsigned spm,
                      unsigned stride, int blk, int chans)
{
    npu_insn_t in;
    if (chans - blk * x->L <= x->S) /* lanes 0..S-1 only */
        npu_pb_put(&x->b, l, npu_enc_drain_split(&in, rows, obuf, spm, stride, rows, 0), &in, 0);
    else
        npu_pb_put(&x->b, l, npu_enc_drain(&in, rows, obuf, spm, stride), &in, 0);
}

/* STORE of `bytes` contiguous bytes from SPM word spm to DRAM dram (rows of the largest whole
 * number of words a row_bytes field holds). */
static void store_flat(cx_t *x, npu_prog_t *l, unsigned tag, unsigned spm, uint64_t dram, uint64_t bytes)
{
    unsigned cw = 65535u / x->B, chunk = cw * x->B;
    uint64_t rows = bytes / chunk, rest = bytes % chunk;
    npu_insn_t in;
    while (rows) {
        unsigned nr = rows > 65535u ? 65535u : (unsigned)rows;
        npu_pb_put(&x->b, l, npu_enc_store(&in, tag, nr, npu_pb_dram(&x->b, dram), spm, cw, chunk, cw), &in, 0);
        spm += nr * cw;
        dram += (uint64_t)nr * chunk;
        rows -= nr;
    }
    if (rest)
        npu_pb_put(&x->b, l, npu_enc_store(&in, tag, 1, npu_pb_dram(&x->b, dram), spm, 0, (unsigned)rest, 0), &in, 0);
}

/* The band's input buffer and output tile (all block groups of a band share them: the input is
 * loaded once, the tile stored in one run): buffer and tile band % 2; dW: unit % 2. The band's
 * first group loads, its last stores. */
static int band_of(const cx_t *x, const npu_conv_unit_t *un)
{
    return x->p->kernel == NPU_CONV_DW ? un->u : un->b * x->p->nbands + un->band;
}

static unsigned in_of(const cx_t *x, const npu_conv_unit_t *un)
{
    return x->p->in_base[band_of(x, un) % 2];
}

static unsigned tile_of(const cx_t *x, const npu_conv_unit_t *un)
{
    return x->p->out_base[band_of(x, un) % 2];
}

static void store_tile(cx_t *x, npu_prog_t *l, unsigned tag, const npu_conv_unit_t *un,
                       unsigned rows, uint64_t pix0)
{
    const npu_conv_plan_t *p = x->p;
    if (un->grp == p->ngroups - 1)
        store_flat(x, l, tag, tile_of(x, un), x->a->out + pix0 * p->pout * x->B,
                   (uint64_t)rows * p->pout * x->B);
}

/* ---- fwd ------------------------------------------------------------------------------ */

static void unit_fwd(cx_t *x, const npu_conv_unit_t *un, unit_prog_t *up)
{
    const npu_conv_plan_t *p = x->p;
    const npu_conv_t *c = &p->c;
    unsigned in = in_of(x, un), hb = (unsigned)(un->u % 2) * (unsigned)x->cfg->obuf_rows;
    unsigned cw = (unsigned)p->cw, OW = (unsigned)p->OW, Ru = (unsigned)(un->r1 - un->r0);
    unsigned G = (unsigned)(un->k1 - un->k0);
    if (un->grp == 0)
        load_plane(x, &up->L, un, in);
    memset(x->cov + hb, 0, (size_t)G * Ru * OW);
    for (int t = 0; t < p->T; t++) {
        int kh = t / c->KW, kw = t % c->KW;
        mark_tap(x, un, up, t);
        for (int cb = 0; cb < p->cw; cb++) {
            int ck = imin(p->L, c->C - cb * p->L);
            for (int fb = un->k0; fb < un->k1; fb++) {
                int nf = imin(p->L, c->F - fb * p->L);
                unsigned bank;
                if (c->depthwise && fb != cb)
                    continue; /* only the diagonal block is nonzero */
                if (c->depthwise)
                    bank = ldw(x, &up->C, p->w_base + (unsigned)((t * p->cw + cb) * p->L), 1, ck, 0, nf);
                else
                    bank = ldw(x, &up->C, p->w_base + (unsigned)((t * c->C + cb * p->L) * p->fw + fb),
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
        drain_blk(x, &up->D, Ru * OW, hb + j * Ru * OW, tile_of(x, un) + 2u * ((unsigned)un->k0 + j), p->pout,
                  un->k0 + (int)j, c->F);
    store_tile(x, &up->S, NPU_TAG_Y, un, Ru * OW, ((uint64_t)un->b * (uint64_t)p->OH + (uint64_t)un->r0) * OW);
    if (un->u == 0)
        resident_weights(x, up);
}

/* ---- dX --------------------------------------------------------------------------------- */

/* B tile of (tap, f-block, c-block) for dX: rows f, lanes c (depthwise: the diagonal block). */
static unsigned ldw_dx(cx_t *x, npu_prog_t *l, int t, int fb, int cb)
{
    const npu_conv_plan_t *p = x->p;
    const npu_conv_t *c = &p->c;
    if (c->depthwise)
        return ldw(x, l, p->w_base + (unsigned)((t * p->cw + cb) * p->L), 1, imin(p->L, c->C - cb * p->L), 0,
                   imin(p->L, c->C - cb * p->L));
    return ldw(x, l, p->w_base + (unsigned)((t * c->F + fb * p->L) * p->cw + cb), (unsigned)p->cw,
               imin(p->L, c->F - fb * p->L), 0, imin(p->L, c->C - cb * p->L));
}

/* dX: the stationary tiles of a unit, in program order: tap, f-block, c-block (depthwise: the
 * diagonal blocks). Both dX kernels walk them with dx_next, which emits the next tile's LDW, and
 * add the waves of their own (dX row, tap) pairs; taps for which skip(x, un, t) holds have none. */
typedef struct dx_tile { int t, fb, cb; unsigned bank; } dx_tile_t;
#define DX_TILES {-1, 0, 0, 0}

static int dx_next(cx_t *x, const npu_conv_unit_t *un, unit_prog_t *up, dx_tile_t *it,
                   int (*skip)(cx_t *, const npu_conv_unit_t *, int))
{
    const npu_conv_plan_t *p = x->p;
    do {
        if (it->t >= 0 && ++it->cb < un->k1)
            continue;
        it->cb = un->k0;
        if (it->t >= 0 && ++it->fb < p->fw)
            continue;
        it->fb = 0;
        do
            it->t++;
        while (it->t < p->T && skip && skip(x, un, it->t));
        if (it->t >= p->T)
            return 0;
        mark_tap(x, un, up, it->t);
    } while (p->c.depthwise && it->fb != it->cb);
    it->bank = ldw_dx(x, &up->C, it->t, it->fb, it->cb);
    return 1;
}

static void unit_dx_zeropad(cx_t *x, const npu_conv_unit_t *un, unit_prog_t *up)
{
    const npu_conv_plan_t *p = x->p;
    const npu_conv_t *c = &p->c;
    unsigned in = in_of(x, un), hb = (unsigned)(un->u % 2) * (unsigned)x->cfg->obuf_rows;
    unsigned fw = (unsigned)p->fw, W = (unsigned)c->W, ZW = (unsigned)p->ZW;
    unsigned Ru = (unsigned)(un->r1 - un->r0), G = (unsigned)(un->k1 - un->k0);
    int s = c->stride, v0 = c->pad - (c->KW - 1) * c->dil;
    int ow0 = imax(0, npu_ceildiv(v0, s)), ow1 = imin(p->OW, npu_floordiv(c->W + c->pad - 1, s) + 1);
    npu_insn_t ins;
    /* Z plane: zero everything, then each dY row to its dilated positions */
    if (un->grp == 0)
        fill(x, &up->L, 1, in, 0, (unsigned)(un->i1 - un->i0) * ZW * fw);
    for (int oh = imax(0, npu_ceildiv(un->i0, s)); un->grp == 0 && ow1 > ow0 && oh < p->OH && oh * s < un->i1; oh++) {
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
            npu_pb_put(&x->b, &up->L, npu_enc_load(&ins, NPU_TAG_DY, 0, (unsigned)(ow1 - ow0), npu_pb_dram(&x->b, dram), spm,
                                        (unsigned)s * fw, fw * x->B, fw), &ins, 0);
        }
    }
    memset(x->cov + hb, 0, (size_t)G * Ru * W);
    for (dx_tile_t it = DX_TILES; dx_next(x, un, up, &it, NULL);) {
        int kh = it.t / c->KW, kw = it.t % c->KW;
        for (int ih = un->r0; ih < un->r1; ih++) {
            unsigned zr = (unsigned)(ih + c->pad - kh * c->dil - un->i0);
            wave(x, &up->C, it.bank, c->W,
                 in + (zr * ZW + (unsigned)((c->KW - 1 - kw) * c->dil)) * fw + (unsigned)it.fb, fw,
                 imin(p->L, c->F - it.fb * p->L), 0, imin(p->L, c->C - it.cb * p->L),
                 hb + ((unsigned)(it.cb - un->k0) * Ru + (unsigned)(ih - un->r0)) * W);
        }
    }
    for (unsigned j = 0; j < G; j++)
        drain_blk(x, &up->D, Ru * W, hb + j * Ru * W, tile_of(x, un) + 2u * ((unsigned)un->k0 + j), p->pout,
                  un->k0 + (int)j, c->C);
    store_tile(x, &up->S, NPU_TAG_DX, un, Ru * W, ((uint64_t)un->b * (uint64_t)c->H + (uint64_t)un->r0) * W);
    if (un->u == 0)
        resident_weights(x, up);
}

/* dX ecoflow (phase decomposition, docs/conv.md): dX row ih gets tap kh when
 * (ih + p - kh*d) % s == 0 (dY row oh = (ih + p - kh*d) / s); tap kw feeds the one column phase
 * b = (kw*d - p) mod s, dX columns iw = x*s + b, from dY columns ow = x + off, a contiguous run.
 * The output tile's rows are Wp = nx*s pixels wide (nx = ceil(W/s); columns >= W are junk, never
 * stored), so pixel (r, x*s + b) sits at (r*nx + x)*s + b: a phase of the whole band is one run
 * at stride s. The OBUF is phase-major over the band (phase b, then row r, then x), so every
 * wave writes consecutive rows and one DRAIN per (c-block, phase) moves the band, except where
 * it has to step around real pixels no wave covered (those stay the FILL's zeros). */
/* dX ecoflow, tap kw: its column phase b, the dY column offset off (dX column x*s + b reads dY
 * column x + off) and the phase columns [x_lo, x_hi) with a real dY column. */
static void dx_phase(const npu_conv_plan_t *p, int kw, int *b, int *off, int *x_lo, int *x_hi)
{
    const npu_conv_t *c = &p->c;
    int s = c->stride;
    *b = ((kw * c->dil - c->pad) % s + s) % s;
    *off = (*b + c->pad - kw * c->dil) / s; /* exact: b = kw*d - p (mod s) */
    *x_lo = imax(0, -*off);
    *x_hi = imin(npu_conv_phase_nx(p, *b), p->OW - *off);
}

/* dX ecoflow: tap t has no wave in the unit (no real dY column, or no dX row of the band it
 * reaches). */
static int dx_eco_skip(cx_t *x, const npu_conv_unit_t *un, int t)
{
    const npu_conv_t *c = &x->p->c;
    int b, off, x_lo, x_hi;
    dx_phase(x->p, t % c->KW, &b, &off, &x_lo, &x_hi);
    for (int ih = un->r0; ih < un->r1 && x_lo < x_hi; ih++) {
        int num = ih + c->pad - (t / c->KW) * c->dil;
        if (num >= 0 && num % c->stride == 0 && num / c->stride < x->p->OH)
            return 0;
    }
    return 1;
}

static void unit_dx_ecoflow(cx_t *x, const npu_conv_unit_t *un, unit_prog_t *up)
{
    const npu_conv_plan_t *p = x->p;
    const npu_conv_t *c = &p->c;
    unsigned in = in_of(x, un), hb = (unsigned)(un->u % 2) * (unsigned)x->cfg->obuf_rows;
    unsigned fw = (unsigned)p->fw, OW = (unsigned)p->OW;
    unsigned Ru = (unsigned)(un->r1 - un->r0), G = (unsigned)(un->k1 - un->k0);
    unsigned tile = tile_of(x, un), pw = p->pout;
    int s = c->stride, uncovered = 0, nx = (c->W + s - 1) / s;
    unsigned Wp = (unsigned)(nx * s), blk = Ru * Wp; /* OBUF rows per c-block */
    if (un->grp == 0 && un->i1 > un->i0)
        load_rows(x, &up->L, NPU_TAG_DY, (unsigned)(un->i1 - un->i0),
                  x->a->dy + ((uint64_t)un->b * (uint64_t)p->OH + (uint64_t)un->i0) * OW * fw * x->B,
                  OW * fw, in, OW * fw, OW, fw);
    memset(x->cov + hb, 0, (size_t)G * blk);
    for (dx_tile_t it = DX_TILES; dx_next(x, un, up, &it, dx_eco_skip);) {
        int kh = it.t / c->KW, b, off, x_lo, x_hi;
        dx_phase(p, it.t % c->KW, &b, &off, &x_lo, &x_hi);
        for (int ih = un->r0; ih < un->r1; ih++) {
            int num = ih + c->pad - kh * c->dil, oh = num / s;
            if (num < 0 || num % s || oh >= p->OH)
                continue;
            wave(x, &up->C, it.bank, x_hi - x_lo,
                 in + ((unsigned)(oh - un->i0) * OW + (unsigned)(x_lo + off)) * fw + (unsigned)it.fb, fw,
                 imin(p->L, c->F - it.fb * p->L), 0, imin(p->L, c->C - it.cb * p->L),
                 hb + (unsigned)(it.cb - un->k0) * blk + ((unsigned)b * Ru + (unsigned)(ih - un->r0)) * (unsigned)nx +
                     (unsigned)x_lo);
        }
    }
    /* per (c-block, phase): runs over i = r*nx + x of covered or junk positions holding a covered
     * one; a real uncovered pixel ends a run */
    for (unsigned j = 0; j < G; j++)
        for (int b = 0; b < s; b++) {
            unsigned ob = hb + j * blk + (unsigned)b * Ru * (unsigned)nx, n = Ru * (unsigned)nx;
            for (unsigned i0 = 0; i0 < n;) {
                unsigned i1 = i0, covered = 0;
                for (; i1 < n; i1++) {
                    int junk = (int)(i1 % (unsigned)nx) * s + b >= c->W;
                    if (!junk && !x->cov[ob + i1])
                        break;
                    covered |= x->cov[ob + i1];
                }
                if (covered)
                    drain_blk(x, &up->D, i1 - i0, ob + i0,
                              tile + (i0 * (unsigned)s + (unsigned)b) * pw + 2u * ((unsigned)un->k0 + j),
                              (unsigned)s * pw, un->k0 + (int)j, c->C);
                if (i1 < n)
                    uncovered = 1;
                i0 = i1 + (i1 < n);
            }
        }
    if (uncovered && un->grp == 0) /* pixels no tap reaches are zero (the same in every group) */
        fill(x, &up->FO, 1, tile, 0, Ru * Wp * pw);
    if (un->grp == p->ngroups - 1) { /* one STORE per dX row (tile rows are Wp pixels apart) */
        if (Wp == (unsigned)c->W)
            store_tile(x, &up->S, NPU_TAG_DX, un, Ru * Wp, ((uint64_t)un->b * (uint64_t)c->H + (uint64_t)un->r0) * Wp);
        else
            for (unsigned r = 0; r < Ru; r++)
                store_flat(x, &up->S, NPU_TAG_DX, tile + r * Wp * pw,
                           x->a->out + ((uint64_t)un->b * (uint64_t)c->H + (uint64_t)(un->r0 + (int)r)) * (uint64_t)c->W * pw * x->B,
                           (uint64_t)c->W * pw * x->B);
    }
    if (un->u == 0)
        resident_weights(x, up);
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

/* dW: the last X plane row an (oh, kh) pair reads: the last waves into row kh's regions. */
static int dw_fin_row(const npu_conv_plan_t *p, int kh)
{
    int oh = imin(p->vOH - 1, npu_floordiv(p->PH - 1 + p->vp - kh * p->c.dil, p->vs));
    return oh * p->vs + kh * p->c.dil - p->vp;
}

/* DRAINs of the pass's covered regions whose last X row is in (lo, hi] into the dW tile, one per
 * region; returns how many. */
static int dw_drains(cx_t *x, npu_prog_t *l, int pass, int lo, int hi)
{
    const npu_conv_plan_t *p = x->p;
    unsigned F = (unsigned)p->c.F, dwp = p->pout;
    int n = 0;
    for (int q = 0; q < p->T * p->cw; q++) {
        int fin = dw_fin_row(p, q % p->T / p->c.KW);
        if (x->pass_of[q] == pass && x->cov[x->row_of[q]] && fin > lo && fin <= hi) {
            drain_blk(x, l, F, x->row_of[q], p->out_base[0] + (unsigned)(q % p->T) * F * dwp + 2u * (unsigned)(q / p->T),
                      dwp, q / p->T, p->c.C);
            n++;
        }
    }
    return n;
}

/* STOREs of the dW taps the pass completes (its last region over the c-blocks is in the pass)
 * whose last X row is in (lo, hi], runs of consecutive taps in one flat STORE each. Storing per
 * pass overlaps the tile's store with the next passes' waves (the whole tile after the last pass
 * cost 3.9k cycles at medium, s = 4 layer, in both dataflows); the last pass's taps go in up to
 * three groups (unit_dw). */
static void dw_stores(cx_t *x, npu_prog_t *l, int pass, int lo, int hi)
{
    const npu_conv_plan_t *p = x->p;
    uint64_t tap = (uint64_t)p->c.F * p->pout; /* words */
    for (int t = 0; t < p->T;) {
        int e = t;
        for (;; e++) {
            int done = e < p->T, g = -1, fin = done ? dw_fin_row(p, e / p->c.KW) : 0;
            for (int cb = 0; done && cb < p->cw; cb++)
                g = x->pass_of[cb * p->T + e] > g ? x->pass_of[cb * p->T + e] : g;
            if (!done || g != pass || fin <= lo || fin > hi)
                break;
        }
        if (e > t)
            store_flat(x, l, NPU_TAG_DW, p->out_base[0] + (unsigned)((uint64_t)t * tap),
                       x->a->out + (uint64_t)t * tap * x->B, (uint64_t)(e - t) * tap * x->B);
        t = e + (e == t);
    }
}

/* dW: does the pass hold a region of row kh? */
static int dw_pass_has_kh(const cx_t *x, int pass, int kh)
{
    const npu_conv_plan_t *p = x->p;
    for (int cb = 0; cb < p->cw; cb++)
        for (int kw = 0; kw < p->c.KW; kw++)
            if (x->pass_of[cb * p->T + kh * p->c.KW + kw] == pass)
                return 1;
    return 0;
}

/* The last unit of a pass: drains and stores of the regions whose last X row is in (*lo, hi],
 * in C right after the waves of X row hi (the last DRAIN pushes e2s, the first STORE pops it),
 * so they overlap the waves of the rows after it; *lo = hi when emitted. Nothing when the group
 * has no DRAIN or no STORE (its regions then go with the next group). */
static void dw_early_group(cx_t *x, unit_prog_t *up, int pass, int *lo, int hi)
{
    npu_prog_t d, st;
    npu_prog_init(&d);
    npu_prog_init(&st);
    dw_stores(x, &st, pass, *lo, hi);
    if (st.n && dw_drains(x, &d, pass, *lo, hi)) {
        npu_pb_link(&x->b, NPU_PB_E2S, &d, d.n - 1, &st, 0);
        for (size_t i = 0; i < d.n; i++)
            npu_pb_put(&x->b, &up->C, 0, &d.insn[i], 0);
        for (size_t i = 0; i < st.n; i++)
            npu_pb_put(&x->b, &up->C, 0, &st.insn[i], 0);
        *lo = hi;
    }
    npu_prog_free(&d);
    npu_prog_free(&st);
}

/* dW: the GEMM per tap dW[t] (F x C) = sum over dY pixels of dY^T (rows f) x X pixels (rows =
 * the pixels, lanes c). A = dY^T word j of the F rows of dY row oh (transposed LOAD per dY row:
 * word j holds columns ow in [2S*j, 2S*j + 2S)), one WAVE of m = F rows; B = the X pixels those
 * columns read (stride vs*cw); lanes outside the valid columns are cut by k (top) and k_lo
 * (bottom) on both LDW and WAVE. One LDW of X row pr serves every (oh, kh) with
 * oh*vs + kh*d - vp = pr: the waves per stationary tile hide the LDW turnaround (a bank is
 * reloaded only after its waves left the array). */
static void unit_dw(cx_t *x, const npu_conv_unit_t *un, unit_prog_t *up)
{
    const npu_conv_plan_t *p = x->p;
    const npu_conv_t *c = &p->c;
    unsigned in = in_of(x, un), xb = in + p->xoff;
    unsigned fw = (unsigned)p->fw, cw = (unsigned)p->cw, owj = (unsigned)p->owj;
    unsigned F = (unsigned)c->F, dwp = p->pout;
    int first = un->b == 0 && un->band == 0, last = un->b == p->c.batch - 1 && un->band == p->nbands - 1;
    int step = npu_conv_dw_step(p), chained = npu_conv_dw_chained(p);
    unsigned half = (unsigned)x->cfg->obuf_rows;
    npu_insn_t ins;
    if (un->u == 0) /* dW of taps no wave reaches is zero */
        for (int t = 0; t < p->T; t++)
            if (!x->tap_valid[t])
                fill(x, &up->L, F, p->out_base[0] + (unsigned)t * F * dwp, dwp, dwp);
    /* The first unit's load is exposed: its input comes in two parts, the X rows below im
     * (about a third) with the dY rows they read, then the rest, which C pops for at its first
     * LDW of an X row >= im (the waves of the first rows hide it). */
    int im = un->u == 0 && un->i1 - un->i0 >= 3 ? un->i0 + (un->i1 - un->i0 + 2) / 3 : un->i1;
    int ohm = imin(un->o1, imax(un->o0, npu_floordiv(im - 1 + p->vp, p->vs) + 1));
    for (int part = 0; part < 2; part++) {
        npu_prog_t *l = part ? &up->L2 : &up->L;
        for (int oh = part ? ohm : un->o0; oh < (part ? un->o1 : ohm); oh++)
            npu_pb_put(&x->b, l, npu_enc_load(&ins, NPU_TAG_DY, 1, (unsigned)p->vOW,
                                   npu_pb_dram(&x->b, x->a->dy + (((uint64_t)un->b * (uint64_t)p->vOH + (uint64_t)oh) *
                                                        (uint64_t)p->vOW) * fw * x->B),
                                   in + (unsigned)(oh - un->o0) * F * owj, owj, 2u * F, fw), &ins, 0);
        load_plane_rows(x, l, un, xb, part ? im : un->i0, part ? un->i1 : im);
    }
    if (first) /* a pass starts its regions */
        memset(x->cov, 0, 2u * (size_t)x->cfg->obuf_rows);
    /* The pass's last unit: the regions whose last X row comes before the unit's end are drained
     * and stored while the waves of the later rows run, in up to two early groups (after the
     * X rows cp[0], cp[1]: the two latest last rows but the final one); else the store of the
     * last pass's taps was all exposed (medium, s = 4: 1.3k cycles). */
    int cp[2] = {-1, -1}, lo = INT_MIN;
    for (int kh = 0; last && kh < c->KH; kh++) {
        int fin = dw_fin_row(p, kh), later = 0;
        for (int k2 = 0; k2 < c->KH; k2++)
            later |= dw_fin_row(p, k2) > fin && dw_pass_has_kh(x, un->grp, k2);
        if (!dw_pass_has_kh(x, un->grp, kh) || !later || fin < un->i0 || fin == cp[0] || fin == cp[1])
            continue;
        if (fin > cp[1]) {
            cp[0] = cp[1];
            cp[1] = fin;
        } else if (fin > cp[0]) {
            cp[0] = fin;
        }
    }
    for (int pr = un->i0; pr < un->i1; pr++) {
        for (int kw = 0; kw < c->KW; kw++) {
            int ow_a, ow_b;
            dw_cols(p, kw, &ow_a, &ow_b);
            for (int j = 0; j * p->L < ow_b; j++) {
                int klo = imax(ow_a - j * p->L, 0), khi = imin(ow_b - j * p->L, p->L);
                if (klo >= khi)
                    continue;
                for (int cb = 0; cb < p->cw; cb++) {
                    int nc = imin(p->L, c->C - cb * p->L), any = 0;
                    unsigned bank = 0;
                    for (int rho = 0; rho < step && rho < c->KH; rho++) {
                        /* the kh of class rho reading X row pr, kh decreasing = dY rows increasing;
                         * a run of them in consecutive OBUF regions is one WAVE */
                        int run_q = -1, run_oh = 0, run_n = 0;
                        for (int kh = rho + (c->KH - 1 - rho) / step * step; kh >= -step; kh -= step) {
                            int num = pr + p->vp - kh * c->dil, oh = num / p->vs, q = cb * p->T + kh * c->KW + kw;
                            int ok = kh >= 0 && num >= 0 && num % p->vs == 0 && oh < p->vOH &&
                                     x->pass_of[q] == un->grp;
                            if (run_n && (!ok || !chained || oh != run_oh + run_n ||
                                          x->row_of[q] != x->row_of[run_q] + (unsigned)run_n * F ||
                                          x->row_of[q] / half != x->row_of[run_q] / half)) {
                                wave(x, &up->C, bank, run_n * c->F,
                                     in + (unsigned)(run_oh - un->o0) * F * owj + (unsigned)j, owj, khi, klo, nc,
                                     x->row_of[run_q]);
                                run_n = 0;
                            }
                            if (!ok)
                                continue;
                            if (!any) {
                                int pc = (j * p->L + klo) * p->vs + kw * c->dil - p->vp;
                                if (pr >= im && up->L2.n && !up->c_split)
                                    up->c_split = up->C.n + 1;
                                bank = ldw(x, &up->C,
                                           xb + ((unsigned)(pr - un->i0) * (unsigned)p->PW + (unsigned)pc) * cw + (unsigned)cb,
                                           (unsigned)p->vs * cw, khi, klo, nc);
                                any = 1;
                            }
                            if (!run_n) {
                                run_q = q;
                                run_oh = oh;
                            }
                            run_n++;
                        }
                    }
                }
            }
        }
        for (int k = 0; k < 2; k++)
            if (pr == cp[k])
                dw_early_group(x, up, un->grp, &lo, pr);
    }
    if (last) {
        dw_drains(x, &up->D, un->grp, lo, INT_MAX);
        dw_stores(x, &up->S, un->grp, lo, INT_MAX);
    }
}

/* ---- assembly: one step per unit, tokens, program order ---------------------------------- */

/* The EXEC units (weight loader, wave engine, drain engine) complete out of order, and an
 * instruction pushes its tokens when it completes, so the pushes on one channel must come from
 * one in-order unit or the consumer could take a later push for an earlier event: e2l is pushed
 * only by WAVEs (or, for a band without waves, by the second of two token-only LDWs, which
 * completes after every earlier wave left the array), e2s only by DRAINs (or a token-only DRAIN
 * into the scratch words). LOAD and STORE queues complete in order. */

/* Step u's EXEC list: C(u) up to its last reader (LDW or WAVE; two token-only LDWs, banks 0 then
 * 1, when it has none but carries tokens: c_tok), then D(u) = the rest of C and the DRAINs, with
 * a token-only DRAIN of one OBUF row into the scratch words when D must push e2s (d_push) and
 * does not end in a DRAIN, or a SYNC_E when it is empty and must pop (d_pop). */
static void unit_ex(cx_t *x, unit_prog_t *up, int u, npu_pb_step_t *s, int c_tok, int d_pop, int d_push)
{
    size_t reader = npu_pb_last_op(&up->C, NPU_PB_OP(NPU_OP_LDW) | NPU_PB_OP(NPU_OP_WAVE)), c_end;
    npu_insn_t in;
    c_end = reader == NPU_PB_NONE ? up->C.n : reader + 1;
    if (reader != NPU_PB_NONE)
        npu_pb_copy(&x->b, &s->ex, up->C.insn, c_end);
    else if (c_tok)
        for (unsigned b = 0; b < 2; b++)
            npu_pb_put(&x->b, &s->ex, npu_enc_ldw(&in, b, NPU_MODE_HSW, x->p->scratch, 0, 1, 1), &in, 0);
    s->push_e2l = s->ex.n - 1;
    up->dstart = s->ex.n;
    npu_pb_copy(&x->b, &s->ex, up->C.insn + c_end, up->C.n - c_end);
    npu_pb_copy(&x->b, &s->ex, up->D.insn, up->D.n);
    if (d_push && (s->ex.n == up->dstart || npu_insn_op(&s->ex.insn[s->ex.n - 1]) != NPU_OP_DRAIN))
        npu_pb_put(&x->b, &s->ex, npu_enc_drain(&in, 1, npu_pb_obuf_half(&x->b, u), x->p->scratch, 2), &in, 0);
    if (d_pop && s->ex.n == up->dstart)
        npu_pb_put(&x->b, &s->ex, npu_enc_sync(&in, NPU_OP_SYNC_E), &in, 0);
    s->push_e2s = s->ex.n - 1;
}

/* The unit of the last group of band b (bands are consecutive units). */
static int band_last(const unit_prog_t *up, int U, int band)
{
    for (int u = 0; u < U; u++)
        if (up[u].band == band && up[u].last_grp)
            return u;
    return -1;
}

/* Unit u's step and its waits (conv_emit.h). Every band's L pushes l2e (a SYNC_L when it is
 * empty) and its first group's C pops it; the second part L2 of unit 0's load, when separate, is
 * popped at C's c_split. Without FO: L(b) waits (e2l) for C(b-2), D(b) for the STORE of band
 * b-2 (s2e, the same tile). With FO: D(b) pops FO(b)'s l2e; the last group's C(b) pops the
 * STORE of band b-1 (s2e), and its e2l releases FO(b+1), or else L(b+2). Every band's last C
 * pushes e2l, every STORE s2e (dW: only the last: a pass's taps are stored once, the tile is
 * never reused). */
static void unit_step(cx_t *x, unit_prog_t *up, npu_pb_step_t *st, int U, int u, int fo)
{
    unit_prog_t *cu = &up[u];
    npu_pb_step_t *s = &st[u];
    int c_pop_s = fo && cu->last_grp && cu->band >= 1;
    int d_pop = fo ? cu->first_grp && cu->FO.n : cu->tile_wait;
    unit_ex(x, cu, u, s, cu->first_grp || cu->last_grp, d_pop, cu->S.n > 0);
    if (cu->first_grp)
        npu_pb_or_sync(&x->b, &cu->L, NPU_OP_SYNC_L);
    s->ld[0] = cu->L;
    s->ld[1] = cu->L2;
    s->ld[2] = cu->FO;
    s->st = cu->S;
    npu_prog_init(&cu->L);
    npu_prog_init(&cu->L2);
    npu_prog_init(&cu->FO);
    npu_prog_init(&cu->S);
    if (cu->first_grp)
        npu_pb_wait(&x->b, s, NPU_PB_L2E, 0, 0, 0);
    if (s->ld[1].n)
        npu_pb_wait(&x->b, s, NPU_PB_L2E, 0, 1, cu->c_split - 1);
    if (fo && d_pop)
        npu_pb_wait(&x->b, s, NPU_PB_L2E, 0, 2, cu->dstart);
    if (!fo && cu->first_grp && cu->band >= 2)
        npu_pb_wait(&x->b, s, NPU_PB_E2L, band_last(up, U, cu->band - 2), 0, 0);
    if (!fo && cu->tile_wait)
        npu_pb_wait(&x->b, s, NPU_PB_S2E, band_last(up, U, cu->band - 2), 0, cu->dstart);
    if (c_pop_s)
        npu_pb_wait(&x->b, s, NPU_PB_S2E, band_last(up, U, cu->band - 1), 0, 0);
    if (fo && cu->last_grp && cu->nx < U) { /* the next loads wait for this band's waves */
        if (up[cu->nx].FO.n)
            npu_pb_wait(&x->b, &st[cu->nx], NPU_PB_E2L, u, 2, 0);
        else if (cu->n2 < U)
            npu_pb_wait(&x->b, &st[cu->n2], NPU_PB_E2L, u, 0, 0);
    }
    if (s->st.n)
        npu_pb_wait(&x->b, s, NPU_PB_E2S, 0, 0, 0);
    s->free = (cu->last_grp ? 1u << NPU_PB_E2L : 0) |
              (s->st.n && (x->p->kernel != NPU_CONV_DW || u == U - 1) ? 1u << NPU_PB_S2E : 0);
}

/* Program order of unit u (conv_emit.h). Without FO: L(b+1) spread over C(b) (it pops C(b-1)'s
 * e2l), after L2 one for one with C's first instructions, all of it ahead of the pop at c_split:
 * as a block ahead of C, the in-order fetcher held C until the LOAD queue took the block's tail
 * (at medium, CONV3 dW: 1k cycles more before the first wave). With FO: [L(0), FO(0), L(1)]
 * first, then per band C, H(b+1) = FO(b+1), L(b+2), D, S. */
static void unit_order(cx_t *x, const unit_prog_t *up, const npu_pb_step_t *st, int U, int u, int fo,
                       npu_prog_t *out)
{
    const unit_prog_t *cu = &up[u];
    const npu_pb_step_t *s = &st[u];
    const npu_prog_t *l2 = &s->ld[1];
    size_t c0 = 0;
    if (u == 0) {
        npu_pb_copy(&x->b, out, s->ld[0].insn, s->ld[0].n);
        if (fo)
            npu_pb_copy(&x->b, out, s->ld[2].insn, s->ld[2].n);
        if (fo && cu->nx < U)
            npu_pb_copy(&x->b, out, st[cu->nx].ld[0].insn, st[cu->nx].ld[0].n);
    }
    if (fo) {
        npu_pb_copy(&x->b, out, s->ex.insn, cu->dstart);
        if (cu->last_grp && cu->nx < U) {
            npu_pb_copy(&x->b, out, st[cu->nx].ld[2].insn, st[cu->nx].ld[2].n);
            if (cu->n2 < U)
                npu_pb_copy(&x->b, out, st[cu->n2].ld[0].insn, st[cu->n2].ld[0].n);
        }
    } else {
        const npu_prog_t *lt = cu->first_grp && cu->nx < U ? &st[cu->nx].ld[0] : NULL;
        for (size_t i = 0; i < l2->n; i++) {
            npu_pb_put(&x->b, out, 0, &l2->insn[i], 0);
            if (c0 + 1 < cu->c_split && c0 < cu->dstart)
                npu_pb_put(&x->b, out, 0, &s->ex.insn[c0++], 0);
        }
        npu_pb_spread(&x->b, out, lt ? lt->insn : NULL, lt ? lt->n : 0, s->ex.insn + c0, cu->dstart - c0);
    }
    npu_pb_copy(&x->b, out, s->ex.insn + cu->dstart, s->ex.n - cu->dstart);
    npu_pb_copy(&x->b, out, s->st.insn, s->st.n);
}

/* The units' steps, tokens and program order. Unit 0's second load part L2 stays a group of its
 * own (popped at c_split) without FO; else it joins L. */
static void assemble(cx_t *x, unit_prog_t *up, npu_prog_t *out)
{
    int U = x->p->units, fo = 0;
    npu_pb_step_t *st = npu_pb_steps(&x->b, U);
    for (int u = 0; u < U; u++)
        fo |= up[u].FO.n > 0;
    for (int u = U - 1; u >= 0; u--) { /* the first units of the next two bands */
        up[u].nx = u + 1 < U && !up[u + 1].first_grp ? up[u + 1].nx : u + 1;
        up[u].n2 = up[u].nx < U ? up[up[u].nx].nx : U;
    }
    for (int u = 0; u < U && st; u++) {
        unit_prog_t *cu = &up[u];
        if (!(cu->L2.n && !fo && cu->c_split > 1)) {
            npu_pb_copy(&x->b, &cu->L, cu->L2.insn, cu->L2.n);
            cu->L2.n = 0;
        }
        npu_pb_context(&x->b, "unit %d", u);
        unit_step(x, up, st, U, u, fo);
    }
    if (st && !x->b.err)
        npu_pb_stitch(&x->b, st, U);
    npu_pb_context(&x->b, "program order");
    for (int u = 0; u < U && st && !x->b.err; u++)
        unit_order(x, up, st, U, u, fo, out);
    npu_pb_steps_free(st, U);
}

static void unit_free(unit_prog_t *u)
{
    npu_prog_free(&u->L);
    npu_prog_free(&u->L2);
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
    memset(&x, 0, sizeof x);
    npu_pb_init(&x.b, cfg);
    x.cfg = cfg;
    x.p = p;
    x.a = a;
    x.B = (unsigned)npu_cfg_beat(cfg);
    x.S = cfg->s;
    x.L = npu_cfg_f(cfg);
    up = calloc((size_t)p->units, sizeof *up);
    x.cov = calloc(2u * (size_t)cfg->obuf_rows, 1);
    x.tap_valid = calloc((size_t)p->T, 1);
    x.tap_c = malloc(sizeof *x.tap_c * (size_t)p->T);
    x.pass_of = calloc((size_t)(p->T * p->cw), sizeof *x.pass_of);
    x.row_of = calloc((size_t)(p->T * p->cw), sizeof *x.row_of);
    if (!up || !x.cov || !x.tap_valid || !x.tap_c || !x.pass_of || !x.row_of) {
        npu_pb_fail(&x.b, "out of memory");
    } else {
        for (int t = 0; t < p->T; t++) {
            x.tap_valid[t] = (uint8_t)(p->kernel == NPU_CONV_DW ? dw_tap_valid(p, t) : 1);
            x.tap_c[t] = SIZE_MAX;
        }
        if (p->kernel == NPU_CONV_DW)
            npu_conv_dw_layout(p, cfg->obuf_rows, x.pass_of, x.row_of);
        for (int u = 0; u < p->units && !x.b.err; u++) {
            npu_conv_unit_t un;
            npu_conv_unit_at(p, u, &un);
            npu_pb_context(&x.b, "unit %d", u);
            npu_prog_init(&up[u].L);
            npu_prog_init(&up[u].L2);
            npu_prog_init(&up[u].FO);
            npu_prog_init(&up[u].C);
            npu_prog_init(&up[u].D);
            npu_prog_init(&up[u].S);
            up[u].first_grp = p->kernel == NPU_CONV_DW || un.grp == 0;
            up[u].last_grp = p->kernel == NPU_CONV_DW || un.grp == p->ngroups - 1;
            up[u].band = band_of(&x, &un);
            up[u].tile_wait = p->kernel != NPU_CONV_DW && un.grp == 0 && up[u].band >= 2;
            if (p->kernel == NPU_CONV_FWD)
                unit_fwd(&x, &un, &up[u]);
            else if (p->kernel == NPU_CONV_DW)
                unit_dw(&x, &un, &up[u]);
            else if (p->dataflow == NPU_CONV_ZEROPAD)
                unit_dx_zeropad(&x, &un, &up[u]);
            else
                unit_dx_ecoflow(&x, &un, &up[u]);
        }
        if (!x.b.err)
            assemble(&x, up, out);
    }
    if (up)
        for (int u = 0; u < p->units; u++)
            unit_free(&up[u]);
    free(up);
    free(x.cov);
    free(x.tap_valid);
    free(x.tap_c);
    free(x.pass_of);
    free(x.row_of);
    return npu_pb_finish(&x.b, msg, n);
}
