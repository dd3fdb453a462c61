/* conv_bwd.c - the fused convolution backward kernel (dX ecoflow + dW^T, dY read once); see
 * conv_bwd.h and docs/conv.md §5. */
#include "compile/conv/conv_bwd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/conv/conv_unit.h"
#include "prog/prog_expect.h"

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

static int fail(char *msg, size_t n, const char *why)
{
    if (n)
        snprintf(msg, n, "bwd: %s", why);
    return -1;
}

/* Columns of phase ph: ceil((W - ph) / s), 0 if ph >= W. */
static int phase_cols(const npu_conv_t *c, int ph)
{
    return ph < c->W ? (c->W - ph + c->stride - 1) / c->stride : 0;
}

void npu_conv_bwd_phase(const npu_conv_t *c, int kw, int *ph, int *e, int *nph)
{
    int s = c->stride, off = kw * c->dil - c->pad;
    *ph = (off % s + s) % s;
    *e = npu_floordiv(off, s);
    *nph = phase_cols(c, *ph);
}

int npu_conv_bwd_row_used(const npu_conv_t *c, int ih)
{
    int OH = npu_conv_oh(c);
    for (int kh = 0; kh < c->KH; kh++) {
        int num = ih + c->pad - kh * c->dil;
        if (num >= 0 && num % c->stride == 0 && num / c->stride < OH)
            return 1;
    }
    return 0;
}

int npu_conv_bwd_phase_used(const npu_conv_t *c, int ph)
{
    for (int kw = 0; kw < c->KW; kw++) {
        int p2, e, nph;
        npu_conv_bwd_phase(c, kw, &p2, &e, &nph);
        if (p2 == ph && nph > 0)
            return 1;
    }
    return 0;
}

/* The transposed LOAD of X^T row (ih, ph) of image b (xt_loads): rows, row bytes, stride and
 * the first pixel; 0 rows when the row or phase is not read. */
typedef struct xt_load { unsigned rows, rb, stride; uint64_t pix; } xt_load_t;
static xt_load_t xt_load_of(const npu_conv_bwd_plan_t *bp, int b, int ih, int ph)
{
    const npu_conv_t *c = &bp->dx.c;
    unsigned s = (unsigned)c->stride, pitch = bp->dx.pitch_x;
    xt_load_t t = {0, bp->xt_flat ? s * pitch : 2u * (unsigned)c->C, s * pitch,
                   ((uint64_t)b * (uint64_t)c->H + (uint64_t)ih) * (uint64_t)c->W + (uint64_t)ph};
    if (npu_conv_bwd_row_used(c, ih) && (bp->xt_flat ? ph == 0 : npu_conv_bwd_phase_used(c, ph)))
        t.rows = (unsigned)(bp->xt_flat ? c->W / c->stride : phase_cols(c, ph));
    return t;
}

/* X bytes the X^T loads move: each used (image, X row, phase) once, as the DMA counts them (whole
 * beats of its runs: npu_dma_bursts_tr). */
static uint64_t xt_bytes(const npu_conv_bwd_plan_t *bp)
{
    const npu_conv_t *c = &bp->dx.c;
    uint64_t t = 0, B = bp->dx.B, DB = bp->dx.DB; /* groups in SPM words, runs in DRAM beats */
    for (int b = 0; b < c->batch; b++)
        for (int ih = 0; ih < c->H; ih++)
            for (int ph = 0; ph < c->stride; ph++) {
                xt_load_t l = xt_load_of(bp, b, ih, ph);
                if (l.rows)
                    t += npu_dma_bursts_tr_wb(B, DB, 4096, l.pix * bp->dx.pitch_x, l.rows, l.rb, l.stride).beats * DB;
            }
    return t;
}

/* Flat X^T loads: W a multiple of s, every phase read by some tap column, and at s > 1 in the
 * padded layout pixels of one beat (cw = 1: per phase, a burst per beat; with longer pixels the
 * per-phase loads' bursts are long enough, and their layout keeps a tile's kh in one WAVE: tiny,
 * digits conv2 395k cycles against 401k flat; small, cw = 1: flat 42.6k against 54.4k). Dense
 * pixels read per phase are a run each (2C bytes s pixels apart), so dense takes flat loads
 * wherever they apply. */
static int xt_flat(const npu_conv_t *c, int cw, int padded)
{
    int all = c->W % c->stride == 0 && (c->stride == 1 || cw == 1 || !padded);
    for (int ph = 0; ph < c->stride; ph++)
        all &= npu_conv_bwd_phase_used(c, ph);
    return all;
}

/* The most tap columns sharing one dY column offset e (they share a stationary tile). */
static int same_e_max(const npu_conv_t *c)
{
    int best = 1, run = 0, prev = 0;
    for (int kw = 0; kw < c->KW; kw++) {
        int ph, e, nph;
        npu_conv_bwd_phase(c, kw, &ph, &e, &nph);
        run = kw && e == prev ? run + 1 : 1;
        prev = e;
        best = imax(best, run);
    }
    return best;
}

/* The dX ecoflow plan on the SPM below `base` words: one band per image if some block group gives
 * it (the largest: fewer blocks per unit make a band's OBUF rows fewer), the program of a single
 * band as before; else bands of dX rows over a ring of dY rows (npu_conv_ring_rows: a band loads
 * only the dY rows no earlier band of its image holds, its halo rows stay in the ring), the
 * planner's bands and block groups. */
static int plan_dx(const npu_cfg_t *cfg, const npu_conv_t *c, int padded, unsigned base, npu_conv_plan_t *p,
                   char *msg, size_t n)
{
    npu_cfg_t lo = *cfg;
    npu_conv_plan_opts_t ring = {.dy_ring = 1, .padded = padded};
    char why[200] = "";
    lo.spm_bank_words = (int)(base / (unsigned)cfg->spm_banks);
    for (int G = npu_ceildiv(c->C, npu_cfg_f(cfg)); G >= 1; G--) {
        npu_conv_plan_opts_t o = {.max_blocks = G, .padded = padded};
        if (npu_conv_plan(&lo, c, NPU_CONV_DX, NPU_CONV_ECOFLOW, &o, p, why, sizeof why) == 0 && p->nbands == 1)
            return 0;
    }
    if (npu_conv_plan(&lo, c, NPU_CONV_DX, NPU_CONV_ECOFLOW, &ring, p, why, sizeof why) == 0)
        return 0;
    snprintf(msg, n, "bwd: no dX plan with its dY rows in a ring fits the %u SPM words the dW regions leave (%s)",
             base, why);
    return -1;
}

static unsigned grp_rows(const npu_conv_t *c, const npu_conv_bwd_grp_t *g)
{
    return (unsigned)(g->nkw * (g->kh1 - g->kh0) * c->C);
}

/* Resident bases: first fit past the dX rows of half 0, then of half 1; 0 when some group does
 * not fit. */
static int resident_base(unsigned rows, unsigned free0, unsigned R, unsigned *half, unsigned *at, unsigned *base)
{
    if (*at + rows > R && *half == 0) {
        *half = 1;
        *at = free0;
    }
    *base = *half * R + *at;
    *at += rows;
    return *at <= R;
}

int npu_conv_bwd_groups(const npu_conv_bwd_plan_t *bp, int obuf_rows, npu_conv_bwd_grp_t *g, int max, int *resident)
{
    const npu_conv_t *c = &bp->dx.c;
    npu_conv_bwd_grp_t cur;
    unsigned half = 0, at = bp->dx.obuf_unit_rows, R = (unsigned)obuf_rows, ra = 0;
    int n = 0, ok = 1;
    for (cur.fb = 0; cur.fb < bp->dx.fw; cur.fb++)
        for (int kw = 0; kw < c->KW;) {
            int ph, e, nph, e2, n2;
            npu_conv_bwd_phase(c, kw, &ph, &e, &nph);
            for (cur.nkw = 0; kw < c->KW && cur.nkw < bp->kwg; kw++) {
                npu_conv_bwd_phase(c, kw, &ph, &e2, &n2);
                if (e2 != e)
                    break;
                if (n2 > 0)
                    cur.kw[cur.nkw++] = kw;
            }
            for (cur.kh0 = 0; cur.kh0 < c->KH && cur.nkw; cur.kh0 += bp->khg, n++) {
                cur.kh1 = imin(c->KH, cur.kh0 + bp->khg);
                ok &= resident_base(grp_rows(c, &cur), bp->dx.obuf_unit_rows, R, &half, &at, &cur.base);
                if (g && n < max)
                    g[n] = cur;
            }
        }
    /* per image: the free half's rows in turn, so that a group's waves need not wait for the
     * previous group's DRAINs */
    for (int i = 0; !ok && g && i < n && i < max; i++) {
        ra = ra + grp_rows(c, &g[i]) > R ? 0 : ra;
        g[i].base = ra;
        ra += grp_rows(c, &g[i]);
    }
    *resident = ok;
    return n;
}

/* The X^T layout for `rows` X row slots (an image's H, or the ring's): row c of (slot, ph) at
 * slot*xt_row + ph*xt_ph + c. Per phase C and rows*C (phase-major); flat at s = 1 C and - (a
 * row's LOAD writes its padding channels where the next row's, later in the LOAD queue, writes
 * real ones); flat at s > 1 s*xt_p and xt_p. */
static void xt_layout(npu_conv_bwd_plan_t *bp, const npu_conv_t *c, int rows)
{
    bp->xt_row = bp->xt_flat && c->stride > 1 ? (unsigned)c->stride * bp->xt_p : (unsigned)c->C;
    bp->xt_ph = bp->xt_flat ? bp->xt_p : (unsigned)(rows * c->C);
    bp->xt_words = ((unsigned)(rows - 1) * bp->xt_row + (unsigned)(c->stride - 1) * bp->xt_ph + bp->xt_p) *
                   (unsigned)bp->wj;
}

/* X row range [lo, hi) of dY rows [oh0, oh1) (empty: lo = hi). */
static void xrange(const npu_conv_t *c, int oh0, int oh1, int *lo, int *hi)
{
    *lo = imax(0, oh0 * c->stride - c->pad);
    *hi = oh1 > oh0 ? imin(c->H, (oh1 - 1) * c->stride + (c->KH - 1) * c->dil - c->pad + 1) : *lo;
    *hi = imax(*hi, *lo);
}

/* The X^T ring's slots for the plan's bands: the most X rows two consecutive bands with X rows
 * span (the load of band k runs while band k-1 reads, as the dY ring), and the slots a flat row's
 * LOAD writes its padding channels into at s = 1 (xt_p - C rows past its C: their old rows must be
 * free). */
static int xt_ring_rows(const npu_conv_bwd_plan_t *bp)
{
    const npu_conv_plan_t *p = &bp->dx;
    int rows = 0, prev = -1, first = -1, last = 0;
    for (int band = 0; band < p->nbands; band++) {
        npu_conv_unit_t un;
        int oh0, oh1, lo, hi;
        npu_conv_unit_at(p, band * p->ngroups, &un);
        npu_conv_bwd_band_rows(bp, &un, &oh0, &oh1);
        xrange(&p->c, oh0, oh1, &lo, &hi);
        if (lo >= hi)
            continue;
        rows = imax(rows, hi - (prev >= 0 ? prev : lo));
        first = first < 0 ? hi : first;
        prev = lo;
        last = lo;
    }
    if (p->c.batch > 1 && first >= 0)
        rows = imax(rows, p->c.H - last + first);
    return rows + npu_ceildiv((int)bp->xt_p - (int)bp->xt_row, (int)bp->xt_row);
}

/* X^T in a ring (several bands, or two whole images' X^T leave no dX plan): for the tallest band
 * limit M that works, the dX plan on the SPM the dW^T tile leaves, its ring's X^T, the dX plan
 * again below that X^T (no taller bands: its ring fits). 0, or -1 with the last reason. */
static int xt_ring_plan(const npu_cfg_t *cfg, npu_conv_bwd_plan_t *bp, const npu_conv_t *c, char *msg, size_t n)
{
    unsigned total = (unsigned)npu_cfg_spm_words(cfg);
    char why[200] = "the dW^T tile leaves no room";
    for (int M = c->H - 1; M >= 1 && bp->dwt_words + 64u <= total; M--) {
        npu_conv_plan_opts_t o = {.max_band_rows = M, .dy_ring = 1, .padded = bp->padded};
        npu_cfg_t lo = *cfg;
        int need;
        lo.spm_bank_words = (int)((total - bp->dwt_words) / (unsigned)cfg->spm_banks);
        if (npu_conv_plan(&lo, c, NPU_CONV_DX, NPU_CONV_ECOFLOW, &o, &bp->dx, why, sizeof why) != 0)
            continue;
        need = xt_ring_rows(bp);
        xt_layout(bp, c, need);
        snprintf(why, sizeof why, "bands of %d dX rows: an X^T ring of %d rows, %u words", bp->dx.R, need,
                 bp->xt_words);
        if ((uint64_t)bp->xt_words + bp->dwt_words + 64u > total)
            continue;
        lo.spm_bank_words = (int)((total - bp->dwt_words - bp->xt_words) / (unsigned)cfg->spm_banks);
        if (npu_conv_plan(&lo, c, NPU_CONV_DX, NPU_CONV_ECOFLOW, &o, &bp->dx, why, sizeof why) == 0) {
            bp->xt_ring = need;
            return 0;
        }
    }
    snprintf(msg, n, "bwd: no dX plan with its dY and X^T rows in rings fits the %u SPM words the dW^T tile "
                     "leaves (last tried: %s)", total - bp->dwt_words, why);
    return -1;
}

int npu_conv_bwd_plan(const npu_cfg_t *cfg, const npu_conv_t *c, int padded, npu_conv_bwd_plan_t *bp, char *msg,
                      size_t n)
{
    int L = npu_cfg_f(cfg), T = c->KH * c->KW;
    unsigned B = (unsigned)npu_cfg_word(cfg), total = (unsigned)npu_cfg_spm_words(cfg), extra;
    char why[200];
    memset(bp, 0, sizeof *bp);
    if (npu_conv_check(c, why, sizeof why) != 0)
        return fail(msg, n, why);
    if (c->depthwise)
        return fail(msg, n, "depthwise layers are not fused (run --kernel dx and dw)");
    if (total > 65536)
        return fail(msg, n, "SPM addresses past 16 bits");
    bp->wj = npu_ceildiv(npu_ceildiv(c->W, c->stride), L);
    bp->kwg = imin(imin(NPU_CONV_BWD_KWG, same_e_max(c)), imax(1, cfg->obuf_rows / c->C));
    bp->khg = imin(c->KH, cfg->obuf_rows / (c->C * bp->kwg));
    if (bp->khg < 1) {
        snprintf(why, sizeof why, "a dW^T region's C = %d rows exceed an OBUF half (%d rows)", c->C, cfg->obuf_rows);
        return fail(msg, n, why);
    }
    bp->pf = (4u * (unsigned)c->F + B - 1) / B;
    bp->padded = padded;
    bp->xt_flat = xt_flat(c, npu_ceildiv(c->C, L), padded);
    bp->xt_p = bp->xt_flat && padded ? (unsigned)(npu_ceildiv(c->C, L) * L) : (unsigned)c->C;
    bp->dwt_words = (unsigned)(T * c->C) * bp->pf;
    xt_layout(bp, c, c->H);
    extra = 2u * bp->xt_words + bp->dwt_words;
    if ((uint64_t)extra + 64u > total || plan_dx(cfg, c, padded, total - extra, &bp->dx, msg, n) != 0) {
        if (xt_ring_plan(cfg, bp, c, msg, n) != 0)
            return -1;
    } else if (bp->dx.nbands > 1) {
        /* several bands: the X^T ring where it plans, its loads spread over the bands beside their
         * dY rows instead of a whole image's with the first band (small, batch 4: C16 32x32 s1
         * 157.8k -> 149.6k cycles, C8 32x32 s2 31.1k -> 22.0k, C4 24x24 s1 34.7k -> 29.8k; tiny
         * C4 16x16 s1 39.5k -> 40.3k, C8 16x16 s2 57.5k -> 53.7k) */
        npu_conv_bwd_plan_t *alt = malloc(sizeof *alt);
        if (alt) {
            *alt = *bp;
            if (xt_ring_plan(cfg, alt, c, NULL, 0) == 0)
                *bp = *alt;
            free(alt);
        }
    }
    extra = (bp->xt_ring ? 1u : 2u) * bp->xt_words + bp->dwt_words;
    bp->ngrp = npu_conv_bwd_groups(bp, cfg->obuf_rows, NULL, 0, &bp->resident);
    bp->xt_base[0] = total - extra;
    bp->xt_base[1] = bp->xt_base[0] + (bp->xt_ring ? 0u : bp->xt_words);
    bp->dwt_base = bp->xt_base[1] + bp->xt_words;
    memcpy(bp->plan_rd, bp->dx.plan_rd, sizeof bp->plan_rd);
    memcpy(bp->plan_wr, bp->dx.plan_wr, sizeof bp->plan_wr);
    memcpy(bp->comp_rd, bp->dx.comp_rd, sizeof bp->comp_rd);
    memcpy(bp->comp_wr, bp->dx.comp_wr, sizeof bp->comp_wr);
    bp->plan_rd[NPU_TAG_X] = xt_bytes(bp);
    bp->comp_rd[NPU_TAG_X] = npu_conv_tensor_bytes(&bp->dx, NPU_TAG_X);
    /* dW^T: one flat STORE of whole words from a DRAM beat, in whole beats */
    bp->plan_wr[NPU_TAG_DW] = bp->comp_wr[NPU_TAG_DW] =
        ((uint64_t)bp->dwt_words * B + bp->dx.DB - 1) / bp->dx.DB * bp->dx.DB;
    if (n)
        msg[0] = '\0';
    return 0;
}

int npu_conv_bwd_res_dy_ok(const npu_conv_bwd_plan_t *bp, unsigned stride)
{
    return stride >= (unsigned)bp->dx.fw && bp->dx.dwy == bp->dx.OW;
}

int npu_conv_bwd_res_dy(const npu_cfg_t *cfg, npu_conv_bwd_plan_t *bp, unsigned spm, unsigned stride, char *msg,
                        size_t n)
{
    npu_conv_plan_t *p = &bp->dx;
    if (!npu_conv_bwd_res_dy_ok(bp, stride) || spm < (unsigned)npu_cfg_spm_words(cfg)) {
        snprintf(msg, n, "bwd: resident dY rows at word %u, %u words apart: rows at or above the plan's %d SPM "
                 "words and at least a pixel's %d words apart", spm, stride, npu_cfg_spm_words(cfg), p->fw);
        return -1;
    }
    p->res_dy = 1;
    p->spm_dy = spm;
    p->res_dy_stride = stride;
    bp->plan_rd[NPU_TAG_DY] = bp->comp_rd[NPU_TAG_DY] = 0; /* nothing of dY comes from DRAM */
    return 0;
}

int npu_conv_bwd_res_x_ok(const npu_conv_bwd_plan_t *bp, unsigned stride)
{
    const npu_conv_plan_t *p = &bp->dx;
    return p->dwx == p->c.W && p->org_x == 0 && stride >= (unsigned)p->cw &&
           (!bp->xt_flat || stride * p->B == p->pitch_x);
}

int npu_conv_bwd_res_x(const npu_cfg_t *cfg, npu_conv_bwd_plan_t *bp, unsigned spm, unsigned stride, char *msg,
                       size_t n)
{
    const npu_conv_plan_t *p = &bp->dx;
    uint64_t end = (uint64_t)spm + (uint64_t)p->c.batch * (uint64_t)p->c.H * (uint64_t)p->c.W * stride;
    /* 65,536: a LOAD_SPM's source word field is 16 bits (npu_defs.h) */
    if (!npu_conv_bwd_res_x_ok(bp, stride) || spm < (unsigned)npu_cfg_spm_words(cfg) || end > 65536) {
        snprintf(msg, n, "bwd: resident X rows at word %u, %u words apart: a whole layer's X, rows at or above the "
                 "plan's %d SPM words and below word 65,536 (a LOAD_SPM's source), at least a pixel's %d words "
                 "apart (flat X^T loads: the DRAM pitch, %u bytes)", spm, stride, npu_cfg_spm_words(cfg), p->cw,
                 p->pitch_x);
        return -1;
    }
    bp->res_x = 1;
    bp->spm_x = spm;
    bp->res_x_stride = stride;
    bp->plan_rd[NPU_TAG_X] = bp->comp_rd[NPU_TAG_X] = 0; /* nothing of X comes from DRAM */
    return 0;
}

int npu_conv_bwd_res_dx_ok(const npu_conv_bwd_plan_t *bp, unsigned stride)
{
    const npu_conv_plan_t *p = &bp->dx;
    int nx = (p->c.W + p->c.stride - 1) / p->c.stride;
    return !p->no_out && !p->acc && p->dwo == p->c.W && nx * p->c.stride == p->c.W && stride >= p->pout;
}

int npu_conv_bwd_res_dx(const npu_cfg_t *cfg, npu_conv_bwd_plan_t *bp, unsigned spm, unsigned stride, char *msg,
                        size_t n)
{
    npu_conv_plan_t *p = &bp->dx;
    if (!npu_conv_bwd_res_dx_ok(bp, stride) || spm < (unsigned)npu_cfg_spm_words(cfg)) {
        snprintf(msg, n, "bwd: resident dX rows at word %u, %u words apart: a whole layer's dX whose rows the "
                 "tiles hold contiguously (W a multiple of the stride), rows at or above the plan's %d SPM words "
                 "and at least a pixel's %u words apart", spm, stride, npu_cfg_spm_words(cfg), p->pout);
        return -1;
    }
    p->res_out = 1;
    p->spm_out = spm;
    p->res_stride = stride;
    bp->plan_wr[NPU_TAG_DX] = bp->comp_wr[NPU_TAG_DX] = 0; /* nothing of dX reaches DRAM */
    return 0;
}

void npu_conv_bwd_drop_dx(npu_conv_bwd_plan_t *bp)
{
    static const unsigned tags[] = {NPU_TAG_W, NPU_TAG_DX}; /* W: the dX waves' B tiles; DX: dX */
    bp->dx.no_out = 1;
    for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++)
        bp->plan_rd[tags[i]] = bp->plan_wr[tags[i]] = bp->comp_rd[tags[i]] = bp->comp_wr[tags[i]] = 0;
}

typedef struct bwd_ctx {
    const npu_conv_bwd_plan_t *bp;
    const npu_conv_bwd_addrs_t *a;
    const npu_conv_bwd_grp_t *grp; /* bp->ngrp groups (npu_conv_bwd_groups) */
} bwd_ctx_t;

void npu_conv_bwd_xrows(const npu_conv_bwd_plan_t *bp, const npu_conv_unit_t *un, int *x0, int *x1, int *n0, int *n1)
{
    const npu_conv_plan_t *p = &bp->dx;
    int oh0, oh1, held = 0;
    npu_conv_bwd_band_rows(bp, un, &oh0, &oh1);
    xrange(&p->c, oh0, oh1, x0, x1);
    for (int band = 0; band < un->band && bp->xt_ring; band++) {
        npu_conv_unit_t v;
        int a0, a1, lo, hi;
        npu_conv_unit_at(p, band * p->ngroups, &v);
        npu_conv_bwd_band_rows(bp, &v, &a0, &a1);
        xrange(&p->c, a0, a1, &lo, &hi);
        held = imax(held, hi);
    }
    *n1 = bp->xt_ring ? *x1 : un->band == 0 ? p->c.H : 0;
    *n0 = bp->xt_ring ? imin(*n1, imax(*x0, held)) : 0;
}

/* The SPM word of X^T row (ih, ph) of image b, channel 0, word 0. */
static unsigned xt_at(const npu_conv_bwd_plan_t *bp, int b, int ih, int ph)
{
    const npu_conv_t *c = &bp->dx.c;
    unsigned slot = bp->xt_ring ? (unsigned)((b * c->H + ih) % bp->xt_ring) : (unsigned)ih;
    return bp->xt_base[bp->xt_ring ? 0 : b % 2] + (slot * bp->xt_row + (unsigned)ph * bp->xt_ph) * (unsigned)bp->wj;
}

/* The transposed load of X^T row (ih, ph) of image b: from DRAM (LOAD), or from X's resident rows
 * (res_x: a LOAD_SPM of the same rows, s pixels of res_x_stride words apart). */
static int xt_insn(npu_cx_t *x, const bwd_ctx_t *k, const xt_load_t *t, unsigned spm, npu_insn_t *in)
{
    const npu_conv_bwd_plan_t *bp = k->bp;
    unsigned wj = (unsigned)bp->wj, s = (unsigned)bp->dx.c.stride;
    if (bp->res_x)
        return npu_enc_load_spm(in, NPU_TAG_X, 1, t->rows, bp->spm_x + (unsigned)t->pix * bp->res_x_stride,
                                s * bp->res_x_stride, spm, wj, t->rb);
    return npu_enc_load(in, NPU_TAG_X, 1, t->rows, npu_pb_dram(&x->b, k->a->x + t->pix * bp->dx.pitch_x), spm, wj,
                        t->rb, t->stride);
}

/* Image b's X^T, SPM row c of (ih, ph) holding X[ih][ph + s*i][c] in lane i (word i / 2S), for
 * every X row some (dY row, kh) reads among those the band loads (npu_conv_bwd_xrows). Flat: one transposed LOAD of the row's W/s groups of s
 * pixels (DRAM rows of s pixels, contiguous: runs of long bursts; source column ph*xt_p + c is
 * channel c of phase ph). Else per phase some kw reads, a transposed LOAD of its nph pixels
 * (DRAM rows s pixels apart: a burst per pixel). With res_x LOAD_SPMs of the resident rows. */
static void xt_loads(npu_cx_t *x, const bwd_ctx_t *k, const npu_conv_unit_t *un, npu_prog_t *l)
{
    const npu_conv_bwd_plan_t *bp = k->bp;
    const npu_conv_t *c = &bp->dx.c;
    npu_insn_t in;
    int b = un->b, x0, x1, n0, n1;
    npu_conv_bwd_xrows(bp, un, &x0, &x1, &n0, &n1);
    for (int ih = n0; ih < n1; ih++)
        for (int ph = 0; ph < c->stride; ph++) {
            xt_load_t t = xt_load_of(bp, b, ih, ph);
            if (t.rows)
                npu_pb_put(&x->b, l, xt_insn(x, k, &t, xt_at(bp, b, ih, ph), &in), &in, 0);
        }
}

/* DRAIN (with acc: adding to it) of the C rows of a dW^T region (tap t, f-block fb) into the tile
 * (a last block of <= S lanes: its low word, skinny). */
static void drain_tile(npu_cx_t *x, const npu_conv_bwd_plan_t *bp, npu_prog_t *l, unsigned obuf, int t, int fb,
                       int acc)
{
    const npu_conv_t *c = &bp->dx.c;
    unsigned C = (unsigned)c->C, spm = bp->dwt_base + (unsigned)t * C * bp->pf + 2u * (unsigned)fb;
    npu_insn_t in;
    int rc = c->F - fb * x->L <= x->S ? npu_enc_drain_split(&in, C, obuf, spm, bp->pf, C, 0)
                                      : npu_enc_drain(&in, C, obuf, spm, bp->pf);
    if (rc == 0 && acc)
        rc = npu_insn_drain_acc(&in);
    npu_pb_put(&x->b, l, rc, &in, 0);
}

/* The OBUF row of the group's first region: resident, its own; else in the half the unit's dX
 * does not use. */
static unsigned region_base(const npu_cx_t *x, const npu_conv_bwd_plan_t *bp, const npu_conv_unit_t *un,
                            const npu_conv_bwd_grp_t *g)
{
    return bp->resident ? g->base : npu_pb_obuf_half(&x->b, un->u + 1) + g->base;
}

/* The valid stationary rows [*klo, *khi) of X^T word j for tap column kw: dY column L*j - e + r in
 * [0, OW) and X column index L*j + r below the phase's nph. */
static void tile_rows(const npu_cx_t *x, const npu_conv_plan_t *p, int kw, int j, int *klo, int *khi)
{
    int ph, e, nph, L = x->L;
    npu_conv_bwd_phase(&p->c, kw, &ph, &e, &nph);
    *klo = imax(0, e - L * j);
    *khi = imin(L, imin(p->OW + e - L * j, nph - L * j));
}

/* The waves of dY row oh, X^T word j for the group: one LDW of the dY pixels (stationary: rows =
 * dY columns L*j - e + r, r in [klo, k) with k the largest of the group's windows, lanes = the
 * f-block), then per tap column the kh whose X rows ih = oh*s + kh*d - p exist: one WAVE of their
 * C channel rows each, or one for all when d = 1 (consecutive X^T rows of the phase, consecutive
 * regions). A tap column whose window is shorter keeps the tile's mode: the lanes past its k are
 * past its phase's columns, zero in X^T (the transposed LOAD fills them). */
static void dw_row_waves(npu_cx_t *x, const npu_conv_bwd_plan_t *bp, const npu_conv_unit_t *un, npu_cx_unit_t *up,
                         const npu_conv_bwd_grp_t *g, int oh, int j)
{
    const npu_conv_plan_t *p = &bp->dx;
    const npu_conv_t *c = &p->c;
    unsigned C = (unsigned)c->C, base = region_base(x, bp, un, g);
    unsigned wj = (unsigned)bp->wj, bank, mode;
    int L = x->L, nf = imin(L, c->F - g->fb * L), klo = 0, kmax = 0, ph, e, nph, ka = g->kh1, kb = g->kh0;
    for (int kh = g->kh0; kh < g->kh1; kh++) { /* the kh with an X row: one run (ih grows with kh) */
        int ih = oh * c->stride + kh * c->dil - c->pad;
        if (ih >= 0 && ih < c->H) {
            ka = imin(ka, kh);
            kb = kh + 1;
        }
    }
    for (int i = 0; i < g->nkw; i++) {
        int khi;
        tile_rows(x, p, g->kw[i], j, &klo, &khi);
        kmax = imax(kmax, khi);
    }
    if (ka >= kb || klo >= kmax)
        return;
    npu_conv_bwd_phase(c, g->kw[0], &ph, &e, &nph);
    mode = npu_cx_mode(x, kmax);
    bank = npu_cx_ldw(x, &up->C,
                      npu_conv_dy_row(p, un, oh) + (unsigned)(L * j - e + klo) * npu_conv_dy_px(p) + (unsigned)g->fb,
                      npu_conv_dy_px(p), kmax, klo, nf);
    for (int i = 0; i < g->nkw; i++) {
        /* the kh in one WAVE when X^T rows (ih, ph) and (ih + d, ph) are C rows apart (in a ring:
         * and their slots do not wrap) */
        int ia = oh * c->stride + ka * c->dil - c->pad, k;
        int step = (unsigned)c->dil * bp->xt_row == C &&
                           (!bp->xt_ring || (un->b * c->H + ia) % bp->xt_ring + (kb - ka - 1) * c->dil < bp->xt_ring)
                       ? kb - ka
                       : 1;
        tile_rows(x, p, g->kw[i], j, &klo, &k);
        npu_conv_bwd_phase(c, g->kw[i], &ph, &e, &nph);
        for (int kh = ka; kh < kb && klo < k; kh += step) {
            int ih = oh * c->stride + kh * c->dil - c->pad;
            npu_cx_wave_mode(x, &up->C, bank, mode, step * c->C,
                             xt_at(bp, un->b, ih, ph) + (unsigned)j, wj, k, klo, nf,
                             base + (unsigned)(i * (g->kh1 - g->kh0) + kh - g->kh0) * C);
        }
    }
}

/* The DRAINs of the group's covered regions into the dW^T tile (acc: the per-image regions add
 * to the tile; resident ones are drained once, after the last image). */
static void dw_drains(npu_cx_t *x, const npu_conv_bwd_plan_t *bp, const npu_conv_unit_t *un, npu_cx_unit_t *up,
                      const npu_conv_bwd_grp_t *g)
{
    unsigned C = (unsigned)bp->dx.c.C, nr = (unsigned)(g->kh1 - g->kh0), base = region_base(x, bp, un, g);
    for (int i = 0; i < g->nkw; i++)
        for (int kh = g->kh0; kh < g->kh1; kh++) {
            unsigned r = base + ((unsigned)i * nr + (unsigned)(kh - g->kh0)) * C;
            if (x->cov[r])
                drain_tile(x, bp, &up->C, r, kh * bp->dx.c.KW + g->kw[i], g->fb, !bp->resident);
        }
}

/* The dY rows whose dW^T waves band un takes: its own (one band per image), or in the ring the
 * rows it loads (npu_conv_ring_new): each dY row's waves once, in the band that brings it. */
void npu_conv_bwd_band_rows(const npu_conv_bwd_plan_t *bp, const npu_conv_unit_t *un, int *oh0, int *oh1)
{
    *oh0 = un->i0;
    *oh1 = un->i1;
    if (bp->dx.ring)
        npu_conv_ring_new(&bp->dx, un->band, oh0, oh1);
}

/* The band's dW^T (its dY rows in the unit's buffer or the ring), group by group: its waves over
 * the band's dY rows and X^T words; per-band regions start afresh (coverage cleared) and are
 * drained after their waves, resident ones after the last band's. */
static void dw_band(npu_cx_t *x, const npu_conv_bwd_plan_t *bp, const npu_conv_bwd_grp_t *grp,
                    const npu_conv_unit_t *un, npu_cx_unit_t *up)
{
    unsigned C = (unsigned)bp->dx.c.C;
    int oh0, oh1;
    npu_conv_bwd_band_rows(bp, un, &oh0, &oh1);
    for (int q = 0; q < bp->ngrp; q++) {
        const npu_conv_bwd_grp_t *g = &grp[q];
        if (!bp->resident)
            memset(x->cov + region_base(x, bp, un, g), 0, (size_t)g->nkw * (size_t)(g->kh1 - g->kh0) * C);
        for (int oh = oh0; oh < oh1; oh++)
            for (int j = 0; j < bp->wj; j++)
                dw_row_waves(x, bp, un, up, g, oh, j);
        if (!bp->resident)
            dw_drains(x, bp, un, up, g);
    }
    for (int q = 0; q < bp->ngrp && bp->resident && un->u == bp->dx.units - 1; q++)
        dw_drains(x, bp, un, up, &grp[q]);
}

/* The hook (conv_unit.h) on each dX unit: the band's first group loads the image's X^T with its
 * dY (unit 0 first zeroes the dW^T tile); the last group adds the image's dW^T waves after its dX
 * waves (its last wave, which frees the dY and X^T buffers, is then a dW wave); the last unit
 * stores the tile after its dX tile (its STOREs wait for the unit's last DRAIN, after every dW^T
 * DRAIN in the in-order drain engine). Without dX the units hold the dY loads only and the hook
 * adds the same. */
static void bwd_hook(npu_cx_t *x, const npu_conv_unit_t *un, npu_cx_unit_t *up, void *ctx)
{
    const bwd_ctx_t *k = ctx;
    const npu_conv_bwd_plan_t *bp = k->bp;
    if (un->grp == 0) {
        if (un->u == 0)
            npu_cx_fill(x, &up->L, 1, bp->dwt_base, 0, bp->dwt_words);
        xt_loads(x, k, un, &up->L);
    }
    if (un->grp != bp->dx.ngroups - 1)
        return;
    dw_band(x, bp, k->grp, un, up);
    if (un->u == bp->dx.units - 1)
        npu_cx_store_flat(x, &up->S, NPU_TAG_DW, bp->dwt_base, k->a->dwt, (uint64_t)bp->dwt_words * x->B);
}

int npu_conv_bwd_emit(const npu_cfg_t *cfg, const npu_conv_bwd_plan_t *bp, const npu_conv_bwd_addrs_t *a,
                      npu_prog_t *out, char *msg, size_t n)
{
    npu_conv_addrs_t ca = {a->x, a->w, a->dy, a->dx};
    npu_conv_bwd_grp_t *g = calloc((size_t)bp->ngrp + 1, sizeof *g);
    bwd_ctx_t k = {bp, a, g};
    int res, rc;
    if (!g)
        return fail(msg, n, "out of memory");
    npu_conv_bwd_groups(bp, cfg->obuf_rows, g, bp->ngrp, &res);
    rc = npu_cx_emit(cfg, &bp->dx, &ca, bwd_hook, &k, out, msg, n);
    free(g);
    return rc;
}
