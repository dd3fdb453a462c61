/* conv_fwd_dx.c - the fwd and dX units (zeropad, ecoflow) of a convolution program; see
 * conv_unit.h and docs/conv.md §3. */
#include "compile/conv/conv_unit.h"

#include <stdint.h>
#include <string.h>

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

/* The end of a unit whose OBUF holds its blocks one after another, `rows` rows each (the pixels of
 * its band): a DRAIN per block into the dense tile, the tile's STORE (tag, from pixel pix0; the
 * band's last group) and, for unit 0, the resident weights. */
static void dense_tail(npu_cx_t *x, const npu_conv_unit_t *un, npu_cx_unit_t *up, unsigned rows, int chans,
                       unsigned tag, uint64_t pix0)
{
    const npu_conv_plan_t *p = x->p;
    unsigned hb = npu_pb_obuf_half(&x->b, un->u);
    /* a resident output (p->res_out): the band's pixels drained straight into their resident rows */
    unsigned tile = p->res_out ? p->spm_out + (unsigned)pix0 * p->res_stride : npu_cx_tile(x, un);
    unsigned pitch = p->res_out ? p->res_stride : p->pout;
    npu_cx_load_partial(x, up, tag, un, rows, pix0);
    for (unsigned j = 0; j < (unsigned)(un->k1 - un->k0); j++)
        npu_cx_drain_blk(x, &up->D, rows, hb + j * rows, tile + 2u * ((unsigned)un->k0 + j), pitch, un->k0 + (int)j,
                         chans);
    npu_cx_store_tile(x, &up->S, tag, un, rows, pix0);
    if (un->u == 0)
        npu_cx_resident_weights(x, up);
}

/* ---- fwd ------------------------------------------------------------------------------ */

void npu_cx_unit_fwd(npu_cx_t *x, const npu_conv_unit_t *un, npu_cx_unit_t *up)
{
    const npu_conv_plan_t *p = x->p;
    const npu_conv_t *c = &p->c;
    unsigned in = npu_cx_in(x, un), hb = (unsigned)(un->u % 2) * (unsigned)x->cfg->obuf_rows;
    unsigned cw = (unsigned)p->cw, OW = (unsigned)p->OW, Ru = (unsigned)(un->r1 - un->r0);
    unsigned G = (unsigned)(un->k1 - un->k0);
    if (un->grp == 0) /* from DRAM, or from X's resident rows (LOAD_SPM) */
        npu_cx_load_plane(x, &up->L, un, in);
    memset(x->cov + hb, 0, (size_t)G * Ru * OW);
    for (int t = 0; t < p->T; t++) {
        int kh = t / c->KW, kw = t % c->KW;
        npu_cx_mark_tap(x, un, up, t);
        for (int cb = 0; cb < p->cw; cb++) {
            int ck = imin(p->L, c->C - cb * p->L);
            for (int fb = un->k0; fb < un->k1; fb++) {
                int nf = imin(p->L, c->F - fb * p->L);
                unsigned bank;
                if (c->depthwise && fb != cb)
                    continue; /* only the diagonal block is nonzero */
                if (c->depthwise)
                    bank = npu_cx_ldw(x, &up->C, p->w_base + (unsigned)((t * p->cw + cb) * p->L), 1, ck, 0, nf);
                else
                    bank = npu_cx_ldw(x, &up->C, p->w_base + (unsigned)((t * c->C + cb * p->L) * p->fw + fb),
                               (unsigned)p->fw, ck, 0, nf);
                for (int oh = un->r0; oh < un->r1; oh++) {
                    unsigned row = (unsigned)(oh * c->stride + kh * c->dil - un->i0);
                    npu_cx_wave(x, &up->C, bank, p->OW,
                         in + (row * (unsigned)p->PW + (unsigned)(kw * c->dil)) * cw + (unsigned)cb,
                         (unsigned)c->stride * cw, ck, 0, nf,
                         hb + ((unsigned)(fb - un->k0) * Ru + (unsigned)(oh - un->r0)) * OW);
                }
            }
        }
    }
    dense_tail(x, un, up, Ru * OW, c->F, NPU_TAG_Y, ((uint64_t)un->b * (uint64_t)p->OH + (uint64_t)un->r0) * OW);
}

/* ---- dX --------------------------------------------------------------------------------- */

/* B tile of (tap, f-block, c-block) for dX: rows f, lanes c (depthwise: the diagonal block). */
static unsigned ldw_dx(npu_cx_t *x, npu_prog_t *l, int t, int fb, int cb)
{
    const npu_conv_plan_t *p = x->p;
    const npu_conv_t *c = &p->c;
    if (c->depthwise)
        return npu_cx_ldw(x, l, p->w_base + (unsigned)((t * p->cw + cb) * p->L), 1, imin(p->L, c->C - cb * p->L), 0,
                   imin(p->L, c->C - cb * p->L));
    return npu_cx_ldw(x, l, p->w_base + (unsigned)((t * c->F + fb * p->L) * p->cw + cb), (unsigned)p->cw,
               imin(p->L, c->F - fb * p->L), 0, imin(p->L, c->C - cb * p->L));
}

/* dX: the stationary tiles of a unit, in program order: tap, f-block, c-block (depthwise: the
 * diagonal blocks). Both dX kernels walk them with dx_next, which emits the next tile's LDW, and
 * add the waves of their own (dX row, tap) pairs; taps for which skip(x, un, t) holds have none. */
typedef struct dx_tile { int t, fb, cb; unsigned bank; } dx_tile_t;
#define DX_TILES {-1, 0, 0, 0}

static int dx_next(npu_cx_t *x, const npu_conv_unit_t *un, npu_cx_unit_t *up, dx_tile_t *it,
                   int (*skip)(npu_cx_t *, const npu_conv_unit_t *, int))
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
        npu_cx_mark_tap(x, un, up, it->t);
    } while (p->c.depthwise && it->fb != it->cb);
    it->bank = ldw_dx(x, &up->C, it->t, it->fb, it->cb);
    return 1;
}

void npu_cx_unit_dx_zeropad(npu_cx_t *x, const npu_conv_unit_t *un, npu_cx_unit_t *up)
{
    const npu_conv_plan_t *p = x->p;
    const npu_conv_t *c = &p->c;
    unsigned in = npu_cx_in(x, un), hb = (unsigned)(un->u % 2) * (unsigned)x->cfg->obuf_rows;
    unsigned fw = (unsigned)p->fw, W = (unsigned)c->W, ZW = (unsigned)p->ZW;
    unsigned Ru = (unsigned)(un->r1 - un->r0), G = (unsigned)(un->k1 - un->k0);
    int s = c->stride, v0 = p->PL - (c->KW - 1) * c->dil, ow0, ow1;
    npu_insn_t ins;
    npu_conv_zp_cols(p, &ow0, &ow1);
    /* Z plane: zero everything, then each dY row to its dilated positions */
    if (un->grp == 0)
        npu_cx_fill(x, &up->L, 1, in, 0, (unsigned)(un->i1 - un->i0) * ZW * fw);
    for (int oh = imax(0, npu_ceildiv(un->i0, s)); un->grp == 0 && ow1 > ow0 && oh < p->OH && oh * s < un->i1; oh++) {
        unsigned spm = in + ((unsigned)(oh * s - un->i0) * ZW + (unsigned)(ow0 * s - v0)) * fw;
        uint64_t dram = x->a->dy + (((uint64_t)un->b * (uint64_t)p->OH + (uint64_t)oh) * (uint64_t)p->dwy +
                                    (uint64_t)ow0) * p->pitch_dy;
        if (s == 1) { /* contiguous: the run of rows in one LOAD */
            int oe = oh + 1;
            while (oe < p->OH && oe < un->i1)
                oe++;
            npu_cx_load_rows(x, &up->L, NPU_TAG_DY, (unsigned)(oe - oh), dram, (unsigned)p->dwy * p->pitch_dy, p->pitch_dy,
                             2u * (unsigned)c->F, spm, ZW * fw, (unsigned)(ow1 - ow0), fw);
            oh = oe - 1;
        } else {
            npu_pb_put(&x->b, &up->L, npu_enc_load(&ins, NPU_TAG_DY, 0, (unsigned)(ow1 - ow0), npu_pb_dram(&x->b, dram), spm,
                                        (unsigned)s * fw, 2u * (unsigned)c->F, p->pitch_dy), &ins, 0);
        }
    }
    memset(x->cov + hb, 0, (size_t)G * Ru * W);
    for (dx_tile_t it = DX_TILES; dx_next(x, un, up, &it, NULL);) {
        int kh = it.t / c->KW, kw = it.t % c->KW;
        for (int ih = un->r0; ih < un->r1; ih++) {
            unsigned zr = (unsigned)(ih + c->pad - kh * c->dil - un->i0);
            npu_cx_wave(x, &up->C, it.bank, c->W,
                 in + (zr * ZW + (unsigned)((c->KW - 1 - kw) * c->dil)) * fw + (unsigned)it.fb, fw,
                 imin(p->L, c->F - it.fb * p->L), 0, imin(p->L, c->C - it.cb * p->L),
                 hb + ((unsigned)(it.cb - un->k0) * Ru + (unsigned)(ih - un->r0)) * W);
        }
    }
    dense_tail(x, un, up, Ru * W, c->C, NPU_TAG_DX, ((uint64_t)un->b * (uint64_t)c->H + (uint64_t)un->r0) * W);
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
    *b = ((kw * c->dil - p->PL) % s + s) % s;
    *off = (*b + p->PL - kw * c->dil) / s; /* exact: b = kw*d - PL (mod s) */
    *x_lo = imax(0, -*off);
    *x_hi = imin(npu_conv_phase_nx(p, *b), p->OW - *off);
}

/* dX ecoflow: tap t has no wave in the unit (no real dY column, or no dX row of the band it
 * reaches). */
static int dx_eco_skip(npu_cx_t *x, const npu_conv_unit_t *un, int t)
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

/* dX ecoflow: row r of the unit's tile (Wp pixels apart in the SPM) to (store) or from its DRAM
 * row of W pixels. */
static void dx_row(npu_cx_t *x, npu_prog_t *l, int store, const npu_conv_unit_t *un, unsigned tile, unsigned Wp,
                   unsigned r)
{
    const npu_conv_plan_t *p = x->p;
    uint64_t row = (uint64_t)un->b * (uint64_t)p->c.H + (uint64_t)un->r0 + r;
    npu_cx_move_px(x, l, store, NPU_TAG_DX, tile + r * Wp * p->pout, x->a->out + row * (uint64_t)p->dwo * p->pitch_out,
                   (uint64_t)p->c.W, p->pout, 4u * (unsigned)p->c.C, p->pitch_out);
}

/* dX ecoflow: the band's dY rows, or in a ring (p->ring) the rows no earlier band of the image
 * loaded, cut where they wrap past the ring's last slot. */
static void dy_load(npu_cx_t *x, const npu_conv_unit_t *un, npu_cx_unit_t *up)
{
    const npu_conv_plan_t *p = x->p;
    unsigned row = (unsigned)(p->OW * p->fw);
    int n0 = un->i0, n1 = un->i1;
    if (p->res_dy) /* read in place from its resident rows */
        return;
    if (p->ring)
        npu_conv_ring_new(p, un->band, &n0, &n1);
    while (n0 < n1) {
        int slot = p->ring ? (un->b * p->OH + n0) % p->ring : 0, n = p->ring ? imin(n1 - n0, p->ring - slot) : n1 - n0;
        uint64_t row0 = (uint64_t)un->b * (uint64_t)p->OH + (uint64_t)n0;
        npu_cx_load_rows(x, &up->L, NPU_TAG_DY, (unsigned)n, x->a->dy + row0 * (uint64_t)p->dwy * p->pitch_dy,
                         (unsigned)p->dwy * p->pitch_dy, p->pitch_dy, 2u * (unsigned)p->c.F, npu_conv_dy_row(p, un, n0), row, (unsigned)p->OW,
                         (unsigned)p->fw);
        n0 += n;
    }
}

void npu_cx_unit_dx_ecoflow(npu_cx_t *x, const npu_conv_unit_t *un, npu_cx_unit_t *up)
{
    const npu_conv_plan_t *p = x->p;
    const npu_conv_t *c = &p->c;
    unsigned hb = (unsigned)(un->u % 2) * (unsigned)x->cfg->obuf_rows;
    unsigned fw = npu_conv_dy_px(p); /* dY's pixel pitch in its buffer or resident rows */
    unsigned Ru = (unsigned)(un->r1 - un->r0), G = (unsigned)(un->k1 - un->k0);
    /* a resident dX (p->res_out, the fused backward's npu_conv_bwd_res_dx; Wp = W): the band's
     * pixels drained straight into their resident rows, the zero FILL of uncovered ones there too */
    uint64_t pix0 = ((uint64_t)un->b * (uint64_t)c->H + (uint64_t)un->r0) * (uint64_t)c->W;
    unsigned tile = p->res_out ? p->spm_out + (unsigned)pix0 * p->res_stride : npu_cx_tile(x, un);
    unsigned pw = p->res_out ? p->res_stride : p->pout;
    int s = c->stride, uncovered = 0, nx = (c->W + s - 1) / s;
    unsigned Wp = (unsigned)(nx * s), blk = Ru * Wp; /* OBUF rows per c-block */
    if (un->grp == 0)
        dy_load(x, un, up);
    if (p->no_out) /* the fused backward's dW only: the hook reads the dY rows */
        return;
    memset(x->cov + hb, 0, (size_t)G * blk);
    for (dx_tile_t it = DX_TILES; dx_next(x, un, up, &it, dx_eco_skip);) {
        int kh = it.t / c->KW, b, off, x_lo, x_hi;
        dx_phase(p, it.t % c->KW, &b, &off, &x_lo, &x_hi);
        for (int ih = un->r0; ih < un->r1; ih++) {
            int num = ih + c->pad - kh * c->dil, oh = num / s;
            if (num < 0 || num % s || oh >= p->OH)
                continue;
            npu_cx_wave(x, &up->C, it.bank, x_hi - x_lo,
                 npu_conv_dy_row(p, un, oh) + (unsigned)(x_lo + off) * fw + (unsigned)it.fb, fw,
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
                    npu_cx_drain_blk(x, &up->D, i1 - i0, ob + i0,
                              tile + (i0 * (unsigned)s + (unsigned)b) * pw + 2u * ((unsigned)un->k0 + j),
                              (unsigned)s * pw, un->k0 + (int)j, c->C);
                if (i1 < n)
                    uncovered = 1;
                i0 = i1 + (i1 < n);
            }
        }
    if (p->acc && un->grp == 0) /* the partial sums, per dX row (tile rows are Wp pixels apart) */
        for (unsigned r = 0; r < Ru; r++)
            dx_row(x, &up->FO, 0, un, tile, Wp, r);
    else if (uncovered && un->grp == 0) /* pixels no tap reaches are zero (the same in every group) */
        npu_cx_fill(x, &up->FO, 1, tile, 0, Ru * Wp * pw);
    if (un->grp == p->ngroups - 1) { /* one STORE per dX row (tile rows are Wp pixels apart) */
        if (Wp == (unsigned)c->W)
            npu_cx_store_tile(x, &up->S, NPU_TAG_DX, un, Ru * Wp, ((uint64_t)un->b * (uint64_t)c->H + (uint64_t)un->r0) * Wp);
        else
            for (unsigned r = 0; r < Ru; r++)
                dx_row(x, &up->S, 1, un, tile, Wp, r);
    }
    if (un->u == 0)
        npu_cx_resident_weights(x, up);
}
