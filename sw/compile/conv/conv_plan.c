/* conv_plan.c - convolution planning stage; see conv_plan.h and docs/conv.md. */
#include "compile/conv/conv_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/slice/slice_cost.h"

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }
static uint64_t cdiv64(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

static int dw_pass_reads_kh(const npu_conv_plan_t *p, int pass, int kh);

void npu_conv_unit_at(const npu_conv_plan_t *p, int u, npu_conv_unit_t *un)
{
    const npu_conv_t *c = &p->c;
    int per_img = p->nbands * p->ngroups, rem;
    memset(un, 0, sizeof *un);
    un->u = u;
    if (p->kernel == NPU_CONV_DW) { /* pass, image, band */
        int per_pass = c->batch * p->nbands;
        un->grp = u / per_pass;
        rem = u % per_pass;
        un->b = rem / p->nbands;
        un->band = rem % p->nbands;
    } else { /* image, band, block group */
        un->b = u / per_img;
        rem = u % per_img;
        un->band = rem / p->ngroups;
        un->grp = rem % p->ngroups;
    }
    un->r0 = un->band * p->R;
    un->r1 = imin(un->r0 + p->R, p->rows);
    if (p->kernel == NPU_CONV_DW) { /* bands of ceil or floor rows: no short last band */
        un->r0 = (int)((long)un->band * p->rows / p->nbands);
        un->r1 = (int)((long)(un->band + 1) * p->rows / p->nbands);
    }
    un->k0 = un->grp * p->G;
    un->k1 = imin(un->k0 + p->G, p->nblk);
    switch (p->kernel) {
    case NPU_CONV_FWD: /* padded-plane rows oh*s + kh*d */
        un->i0 = un->r0 * c->stride;
        un->i1 = (un->r1 - 1) * c->stride + (c->KH - 1) * c->dil + 1;
        break;
    case NPU_CONV_DX:
        if (p->dataflow == NPU_CONV_ZEROPAD) { /* Z rows ih + p - kh*d */
            un->i0 = un->r0 + c->pad - (c->KH - 1) * c->dil;
            un->i1 = un->r1 + c->pad;
        } else { /* the dY rows the band's (dX row, kh) pairs hit */
            int lo = p->OH, hi = -1;
            for (int ih = un->r0; ih < un->r1; ih++)
                for (int kh = 0; kh < c->KH; kh++) {
                    int num = ih + c->pad - kh * c->dil;
                    if (num >= 0 && num % c->stride == 0 && num / c->stride < p->OH) {
                        lo = imin(lo, num / c->stride);
                        hi = imax(hi, num / c->stride);
                    }
                }
            un->i0 = hi >= 0 ? lo : 0;
            un->i1 = hi >= 0 ? hi + 1 : 0;
        }
        break;
    default: /* dW: X plane rows; the dY rows oh with oh*vs + kh*d - vp in them */
        un->i0 = un->r0;
        un->i1 = un->r1;
        un->o0 = p->vOH;
        un->o1 = 0;
        for (int kh = 0; kh < c->KH; kh++) { /* the kh of the pass only */
            int a = imax(0, npu_ceildiv(un->r0 + p->vp - kh * c->dil, p->vs));
            int e = imin(p->vOH, npu_floordiv(un->r1 - 1 + p->vp - kh * c->dil, p->vs) + 1);
            if (a < e && dw_pass_reads_kh(p, un->grp, kh)) {
                un->o0 = imin(un->o0, a);
                un->o1 = imax(un->o1, e);
            }
        }
        if (un->o1 <= un->o0)
            un->o0 = un->o1 = 0;
        break;
    }
}

static int dw_pass_reads_kh(const npu_conv_plan_t *p, int pass, int kh);

int npu_conv_plane_row_used(const npu_conv_plan_t *p, const npu_conv_unit_t *un, int pr)
{
    const npu_conv_t *c = &p->c;
    int vs = p->kernel == NPU_CONV_FWD ? c->stride : p->vs;
    int vp = p->kernel == NPU_CONV_FWD ? 0 : p->vp;
    for (int kh = 0; kh < c->KH; kh++) {
        int num = pr + vp - kh * c->dil;
        if (num < 0 || num % vs)
            continue;
        if (p->kernel == NPU_CONV_DW ? num / vs < p->vOH && dw_pass_reads_kh(p, un->grp, kh)
                                     : num / vs >= un->r0 && num / vs < un->r1)
            return 1;
    }
    return 0;
}

int npu_conv_phase_nx(const npu_conv_plan_t *p, int b)
{
    return b < p->c.W ? (p->c.W - b + p->c.stride - 1) / p->c.stride : 0;
}

static int gcd(int a, int b)
{
    while (b) {
        int t = a % b;
        a = b;
        b = t;
    }
    return a;
}

int npu_conv_dw_chained(const npu_conv_plan_t *p)
{
    return p->c.dil / gcd(p->vs, p->c.dil) == 1;
}

int npu_conv_dw_step(const npu_conv_plan_t *p) { return p->vs / gcd(p->vs, p->c.dil); }

/* The dW regions in layout order: class (kh mod step) first, so that a pass holds few classes
 * and reads only their X rows (at s = 2 a class-0 pass reads the even rows only); then c-block,
 * kw and the chain of kh (decreasing). Calls f(q, i, kh, arg) for region q at position i;
 * stops and returns 1 when f does. */
static int dw_regions(const npu_conv_plan_t *p, int (*f)(int, int, int, void *), void *arg)
{
    const npu_conv_t *c = &p->c;
    int step = npu_conv_dw_step(p), i = 0;
    for (int rho = 0; rho < step && rho < c->KH; rho++)
        for (int cb = 0; cb < p->cw; cb++)
            for (int kw = 0; kw < c->KW; kw++)
                for (int kh = rho + (c->KH - 1 - rho) / step * step; kh >= 0; kh -= step, i++)
                    if (f(cb * p->T + kh * c->KW + kw, i, kh, arg))
                        return 1;
    return 0;
}

/* The passes of the dW regions (layout position i -> pass, position j in it). The fewest passes
 * that fit (two OBUF halves each); whole classes per pass when that takes no more passes (each
 * pass then loads only its classes' X rows: at s = 2, 12 + 6 regions read the even, then the
 * odd rows), else the regions shared evenly: every pass streams its input, so a pass with few
 * regions would be load-bound (at small, C = F = 32: 16 + 2 regions took 31.5k + 14k cycles,
 * 9 + 9 hide the loads behind the waves). In between, whole chains per pass when that takes no
 * more passes: one LDW of an X row serves its chain's kh in one pass, so a chain cut by a pass
 * takes that X row's LDW in both (medium, 11x11 s4: 4 of 44 chains cut, 26 LDWs more). */
typedef struct dw_split { int per_half, passes, per_pass, by_class, by_chain; } dw_split_t;

/* Whole chains per pass, in layout order, a pass closed when the next chain would overflow it
 * or it holds per_pass regions. Returns the pass of position i (*j: the position in it), or for
 * i < 0 the number of passes (0 when a chain exceeds a pass). */
static int dw_chain_pass(const npu_conv_plan_t *p, const dw_split_t *d, int i, int *j)
{
    int step = npu_conv_dw_step(p), g = 0, start = 0, used = 0, pos = 0, cap = 2 * d->per_half;
    for (int rho = 0; rho < step && rho < p->c.KH; rho++) {
        int len = (p->c.KH - 1 - rho) / step + 1;
        if (len > cap)
            return 0;
        for (int n = 0; n < p->cw * p->c.KW; n++) {
            if (used + len > cap || used >= d->per_pass) {
                g++;
                start += used;
                used = 0;
            }
            if (i >= 0 && i < pos + len) {
                *j = i - start;
                return g;
            }
            used += len;
            pos += len;
        }
    }
    return g + 1;
}

static int dw_class_regions(const npu_conv_plan_t *p, int rho)
{
    return p->cw * p->c.KW * ((p->c.KH - 1 - rho) / npu_conv_dw_step(p) + 1);
}

static dw_split_t dw_split(const npu_conv_plan_t *p, int obuf_rows)
{
    dw_split_t d;
    int nreg = p->T * p->cw, cap, used = 0, n = 1, step = npu_conv_dw_step(p);
    d.per_half = obuf_rows / p->c.F;
    cap = 2 * d.per_half;
    d.passes = (nreg + cap - 1) / cap;
    d.per_pass = (nreg + d.passes - 1) / d.passes;
    d.by_class = 1;
    for (int rho = 0; rho < step && rho < p->c.KH && d.by_class; rho++) {
        int k = dw_class_regions(p, rho);
        if (used && used + k > cap) {
            n++;
            used = 0;
        }
        used += k;
        d.by_class = k <= cap && n <= d.passes;
    }
    d.by_chain = 0;
    if (!d.by_class) {
        int n2 = dw_chain_pass(p, &d, -1, NULL);
        d.by_chain = n2 >= 1 && n2 <= d.passes;
    }
    return d;
}

static int dw_pass_at(const npu_conv_plan_t *p, const dw_split_t *d, int i, int *j)
{
    int g = 0, start = 0, used = 0;
    if (d->by_chain)
        return dw_chain_pass(p, d, i, j);
    if (!d->by_class) {
        *j = i % d->per_pass;
        return i / d->per_pass;
    }
    for (int rho = 0;; rho++) {
        int k = dw_class_regions(p, rho);
        if (used && used + k > 2 * d->per_half) {
            g++;
            start += used;
            used = 0;
        }
        if (i < start + used + k) {
            *j = i - start;
            return g;
        }
        used += k;
    }
}

typedef struct dw_lay { const npu_conv_plan_t *p; dw_split_t d; int obuf_rows, *pass_of; unsigned *row_of; } dw_lay_t;

static int dw_place(int q, int i, int kh, void *arg)
{
    dw_lay_t *l = arg;
    int j;
    (void)kh;
    l->pass_of[q] = dw_pass_at(l->p, &l->d, i, &j);
    /* a region never crosses a half */
    l->row_of[q] = (unsigned)((j / l->d.per_half) * l->obuf_rows + (j % l->d.per_half) * l->p->c.F);
    return 0;
}

int npu_conv_dw_layout(const npu_conv_plan_t *p, int obuf_rows, int *pass_of, unsigned *row_of)
{
    dw_lay_t l = {p, {0, 0, 0, 0, 0}, obuf_rows, pass_of, row_of};
    if (p->c.F > obuf_rows)
        return 0;
    l.d = dw_split(p, obuf_rows);
    dw_regions(p, dw_place, &l);
    return l.d.passes;
}

typedef struct dw_has { const npu_conv_plan_t *p; dw_split_t d; int pass, kh; } dw_has_t;

static int dw_has_kh(int q, int i, int kh, void *arg)
{
    const dw_has_t *h = arg;
    int j;
    (void)q;
    return kh == h->kh && dw_pass_at(h->p, &h->d, i, &j) == h->pass;
}

/* dW: does pass `pass` hold a region of row kh (any c-block, kw)? */
static int dw_pass_reads_kh(const npu_conv_plan_t *p, int pass, int kh)
{
    dw_has_t h = {p, {0, 0, 0, 0, 0}, pass, kh};
    if (p->dw_obuf_rows <= 0)
        return 1;
    h.d = dw_split(p, p->dw_obuf_rows);
    return dw_regions(p, dw_has_kh, &h);
}

void npu_conv_zp_cols(const npu_conv_plan_t *p, int *ow0, int *ow1)
{
    const npu_conv_t *c = &p->c;
    *ow0 = imax(0, npu_ceildiv(p->PL - (c->KW - 1) * c->dil, c->stride));
    *ow1 = imin(p->OW, npu_floordiv(c->W + p->PL - 1, c->stride) + 1);
}

int npu_conv_ring_rows(const npu_conv_plan_t *p)
{
    npu_conv_unit_t a, z;
    int rows = 0;
    memset(&a, 0, sizeof a);
    for (int band = 0; band < p->nbands; band++) {
        npu_conv_unit_at(p, band * p->ngroups, &z);
        if (z.i1 <= z.i0)
            return 0;
        rows = imax(rows, z.i1 - (band ? imin(a.i0, z.i0) : z.i0));
        a = z;
    }
    npu_conv_unit_at(p, 0, &z); /* the last band of an image, then the next image's first */
    return p->c.batch > 1 ? imax(rows, p->OH + z.i1 - a.i0) : rows;
}

void npu_conv_ring_new(const npu_conv_plan_t *p, int band, int *n0, int *n1)
{
    npu_conv_unit_t un;
    int held = 0;
    for (int k = 0; k < band; k++) {
        npu_conv_unit_at(p, k * p->ngroups, &un);
        held = imax(held, un.i1);
    }
    npu_conv_unit_at(p, band * p->ngroups, &un);
    *n1 = un.i1;
    *n0 = imin(un.i1, imax(un.i0, held));
}

unsigned npu_conv_dy_px(const npu_conv_plan_t *p)
{
    return p->res_dy ? p->res_dy_stride : (unsigned)p->fw;
}

unsigned npu_conv_dy_row(const npu_conv_plan_t *p, const npu_conv_unit_t *un, int oh)
{
    unsigned row = (unsigned)(p->OW * p->fw);
    if (p->res_dy) /* the whole tensor resident: image b's row oh where the rows hold it */
        return p->spm_dy + (unsigned)((un->b * p->OH + oh) * p->OW) * p->res_dy_stride;
    if (p->ring)
        return p->in_base[0] + (unsigned)((un->b * p->OH + oh) % p->ring) * row;
    return p->in_base[(un->b * p->nbands + un->band) % 2] + (unsigned)(oh - un->i0) * row;
}

/* Words of the unit's input buffer. */
static unsigned unit_in_words(const npu_conv_plan_t *p, const npu_conv_unit_t *un)
{
    unsigned rows = (unsigned)(un->i1 - un->i0);
    switch (p->kernel) {
    case NPU_CONV_FWD: return rows * (unsigned)(p->PW * p->cw);
    case NPU_CONV_DX:
        return rows * (unsigned)(p->dataflow == NPU_CONV_ZEROPAD ? p->ZW * p->fw : p->OW * p->fw);
    default: return p->xoff + rows * (unsigned)(p->PW * p->cw);
    }
}

/* SPM words the plan needs (with p->R, p->nbands, p->G, p->ngroups set). */
static uint64_t spm_need(npu_conv_plan_t *p)
{
    const npu_conv_t *c = &p->c;
    unsigned inw = 0;
    npu_conv_unit_t un;
    p->xoff = 0; /* dW: the most dY^T rows a unit holds (any pass) */
    for (int u = 0; u < p->nbands * p->ngroups && p->kernel == NPU_CONV_DW; u++) {
        npu_conv_unit_at(p, u / p->nbands * p->c.batch * p->nbands + u % p->nbands, &un);
        p->xoff = (unsigned)imax((int)p->xoff, (un.o1 - un.o0) * c->F * p->owj);
    }
    for (int band = 0; band < p->nbands; band++) {
        npu_conv_unit_at(p, p->kernel == NPU_CONV_DW ? band : band * p->ngroups, &un);
        unsigned w = unit_in_words(p, &un);
        inw = w > inw ? w : inw;
    }
    p->in_words = inw ? inw : 1;
    if (p->dy_ring) { /* one ring (place: no second buffer); a band without dY rows: none */
        p->ring = npu_conv_ring_rows(p);
        if (!p->ring)
            return UINT64_MAX;
        p->in_words = (unsigned)(p->ring * p->OW * p->fw);
    }
    switch (p->kernel) {
    case NPU_CONV_FWD:
        p->w_words = c->depthwise ? (unsigned)(p->T * p->cw * p->L) : (unsigned)(p->T * c->C * p->fw);
        p->out_words = (unsigned)p->R * (unsigned)p->OW * p->pout; /* dense full pixels: one tile per band */
        break;
    case NPU_CONV_DX:
        p->w_words = c->depthwise ? (unsigned)(p->T * p->cw * p->L) : (unsigned)(p->T * c->F * p->cw);
        p->out_words = (unsigned)(p->R * p->row_pitch) * p->pout;
        break;
    default:
        p->w_words = 0;
        p->out_words = (unsigned)(p->T * c->F) * p->pout;
        break;
    }
    return (p->ring ? 1ull : 2ull) * p->in_words + p->w_words +
           (p->kernel == NPU_CONV_DW ? 1ull : 2ull) * p->out_words + 2u;
}

/* Places in0, in1, weights, out0 (, out1), scratch (2 words): each region starts a new bank when it does not fit
 * the rest of the current one (concurrent streams in different banks), else packed. */
static int place(const npu_cfg_t *cfg, npu_conv_plan_t *p)
{
    unsigned bw = (unsigned)cfg->spm_bank_words, total = (unsigned)npu_cfg_spm_words(cfg);
    unsigned size[6] = {p->in_words, p->ring ? 0u : p->in_words, p->w_words, p->out_words,
                        p->kernel == NPU_CONV_DW ? 0u : p->out_words, 2u};
    unsigned addr[6];
    for (int pass = 0; pass < 2; pass++) {
        uint64_t at = 0;
        for (int i = 0; i < 6; i++) {
            if (pass == 0 && size[i] && at % bw && at % bw + size[i] > bw)
                at = (at / bw + 1) * bw;
            addr[i] = (unsigned)at;
            at += size[i];
        }
        if (at <= total) {
            p->in_base[0] = addr[0];
            p->in_base[1] = p->ring ? addr[0] : addr[1];
            p->w_base = addr[2];
            p->out_base[0] = addr[3];
            p->out_base[1] = p->kernel == NPU_CONV_DW ? addr[3] : addr[4];
            p->scratch = addr[5];
            p->spm_used = (unsigned)at;
            return 0;
        }
    }
    return -1;
}

static int fail(char *msg, size_t n, const char *why)
{
    if (n)
        snprintf(msg, n, "%s", why);
    return -1;
}

/* The geometry of kernel x dataflow of layer c (a column range when cols): sizes, words per
 * pixel, output pitch, the coordinates of the dY the kernel reads (v*), padding, the rows to band.
 * Returns the OBUF rows of one output row (0 for dW). */
static int plan_geometry(const npu_cfg_t *cfg, const npu_conv_t *c, int kernel, int dataflow,
                         const npu_conv_cols_t *cols, int padded, npu_conv_plan_t *p)
{
    int row_len = 0;
    p->c = *c;
    p->kernel = kernel;
    p->dataflow = dataflow;
    p->S = cfg->s;
    p->L = npu_cfg_f(cfg);
    p->B = (unsigned)npu_cfg_word(cfg);
    p->DB = (unsigned)npu_cfg_beat(cfg);
    p->OH = npu_conv_oh(c);
    p->OW = cols ? cols->ow : npu_conv_ow(c);
    p->PL = cols ? cols->pad : c->pad;
    p->T = c->KH * c->KW;
    p->cw = (c->C + p->L - 1) / p->L;
    p->fw = (c->F + p->L - 1) / p->L;
    p->px = (unsigned)p->cw;
    p->pw = c->depthwise ? 1u : (unsigned)p->cw; /* depthwise: diagonal blocks, one word per row */
    p->pdy = (unsigned)p->fw;
    p->pout = (unsigned)cdiv64(4ull * (uint64_t)(kernel == NPU_CONV_FWD ? c->F : c->C), p->B);
    p->vOH = p->OH;
    p->vOW = p->OW;
    p->vs = c->stride;
    p->vp = c->pad;
    p->ngroups = 1;
    p->G = 1;
    p->nblk = 1;
    switch (kernel) {
    case NPU_CONV_FWD:
        p->P = c->pad;
        p->rows = p->OH;
        p->nblk = p->fw;
        row_len = p->OW;
        break;
    case NPU_CONV_DX:
        p->rows = c->H;
        p->nblk = p->cw;
        p->ZW = c->W + (c->KW - 1) * c->dil;
        /* ecoflow: tile rows of ceil(W/s)*s pixels (conv_fwd_dx.c, npu_cx_unit_dx_ecoflow) */
        row_len = dataflow == NPU_CONV_ECOFLOW ? (c->W + c->stride - 1) / c->stride * c->stride : c->W;
        p->row_pitch = row_len;
        break;
    default:
        if (dataflow == NPU_CONV_ZEROPAD) { /* the zero-inserted dY against the padded X plane */
            p->vOH = c->stride * (p->OH - 1) + 1;
            p->vOW = c->stride * (p->OW - 1) + 1 + (cols ? cols->tail : 0);
            p->vs = 1;
            p->vp = 0;
            p->P = c->pad;
        }
        p->owj = (p->vOW + p->L - 1) / p->L;
        break;
    }
    p->PH = c->H + 2 * p->P;
    p->PW = c->W + 2 * p->P;
    if (kernel == NPU_CONV_DW && !cols)
        p->PL = p->P;
    else if (kernel == NPU_CONV_FWD && cols) /* the plane columns the waves read */
        p->PW = (p->OW - 1) * c->stride + (c->KW - 1) * c->dil + 1;
    else if (kernel == NPU_CONV_DW && cols) /* zeropad (vs = 1): the plane columns its Z columns read */
        p->PW = p->vOW + (c->KW - 1) * c->dil;
    p->pitch_x = padded ? p->px * p->B : 2u * (unsigned)c->C;
    p->pitch_dy = padded ? p->pdy * p->B : 2u * (unsigned)c->F;
    /* dW rows stay whole beats: its STOREs go tap group by tap group as the passes drain them,
     * and dense rows would make each group's edge beats depend on that grouping */
    p->pitch_out = padded || kernel == NPU_CONV_DW ? p->pout * p->B
                                                   : 4u * (unsigned)(kernel == NPU_CONV_FWD ? c->F : c->C);
    p->pitch_w = padded || c->depthwise ? p->pw * p->B : 2u * (unsigned)c->C;
    p->dtap_rows = c->depthwise && kernel != NPU_CONV_DW ? (unsigned)(p->cw * p->L) : (unsigned)c->F;
    p->dwx = c->W;
    p->dwo = kernel == NPU_CONV_FWD ? p->OW : c->W;
    p->dwy = p->vOW; /* dW zeropad: the zero-inserted dY's row */
    if (kernel == NPU_CONV_DW) /* the X plane rows some (oh, kh) reads, from row 0 */
        p->rows = imax(1, imin(p->PH, (p->vOH - 1) * p->vs + (c->KH - 1) * c->dil - p->vp + 1));
    return row_len;
}

/* Sets bands of R rows (the rows split evenly). */
static void set_bands(npu_conv_plan_t *p, int R)
{
    p->nbands = (p->rows + R - 1) / R;
    p->R = (p->rows + p->nbands - 1) / p->nbands;
}

/* dW: regions (c-block, tap) of F rows, resident in the OBUF (both halves) for a pass over the
 * whole input; more regions than fit: several passes (the input streamed again). Then the
 * tallest bands that fit the SPM. 1 when some fit, 0 when none, -1 with the reason. */
static int plan_dw_bands(const npu_cfg_t *cfg, const npu_conv_plan_opts_t *opts, npu_conv_plan_t *p, char *msg,
                         size_t n)
{
    int nreg = p->T * p->cw, rmax = p->rows;
    int *pass_of = malloc(sizeof *pass_of * (size_t)nreg);
    unsigned *row_of = malloc(sizeof *row_of * (size_t)nreg);
    if (!pass_of || !row_of) {
        free(pass_of);
        free(row_of);
        return fail(msg, n, "out of memory");
    }
    p->dw_obuf_rows = cfg->obuf_rows;
    p->dw_passes = npu_conv_dw_layout(p, cfg->obuf_rows, pass_of, row_of);
    free(pass_of);
    free(row_of);
    if (p->dw_passes < 1)
        return fail(msg, n, "dW: the F rows of a (c-block, tap) region do not fit an OBUF half");
    p->nblk = p->ngroups = p->dw_passes;
    if (opts->max_band_rows > 0)
        rmax = imin(rmax, opts->max_band_rows);
    for (int R = rmax; R >= 1; R--) {
        set_bands(p, R);
        if (spm_need(p) <= (uint64_t)npu_cfg_spm_words(cfg))
            return 1;
    }
    return 0;
}

/* A candidate of the fwd / dX band search: band rows R, blocks per group G, whether its tiles get
 * enough wave slots, its units and bands. */
typedef struct band_cand { int R, G, ok, units, bands; } band_cand_t;

/* Block groups per unit G and band rows R (the largest fitting the SPM and an OBUF half for that
 * G). The next tile's LDW reads its rows while a tile's waves run (S steps, NPU_SLICE_LDW_C
 * beyond, slice_cost.h npu_slice_wave_time), so a tile needs >= ~S + NPU_SLICE_LDW_C + 4
 * injection slots of waves or the array waits: among the G whose bands give that, the fewest units
 * (per-unit overheads), then the fewest bands (halo rows re-loaded per band); none reaching it:
 * the tallest bands. Returns the choice (R 0: none fits). */
static band_cand_t plan_band_search(const npu_cfg_t *cfg, const npu_conv_plan_opts_t *opts, npu_conv_plan_t *p,
                                    int row_len, int gmax)
{
    band_cand_t best = {0, 0, 0, 0, 0};
    for (int G = gmax; G >= 1; G--) {
        int ng = (p->nblk + G - 1) / G, g = (p->nblk + ng - 1) / ng, fitR = 0;
        int rmax = imin(p->rows, cfg->obuf_rows / (g * row_len));
        if (opts->max_band_rows > 0)
            rmax = imin(rmax, opts->max_band_rows);
        for (int R = rmax; R >= 1 && !fitR; R--) {
            p->ngroups = ng;
            p->G = g;
            set_bands(p, R);
            if (spm_need(p) <= (uint64_t)npu_cfg_spm_words(cfg))
                fitR = p->R;
        }
        if (!fitR)
            continue;
        double slots = p->kernel == NPU_CONV_DX && p->dataflow == NPU_CONV_ECOFLOW
                           ? (double)fitR * (double)row_len / ((double)p->c.stride * (double)p->c.stride)
                           : (double)fitR * (double)row_len;
        band_cand_t c = {fitR, g, slots >= (double)(cfg->s + NPU_SLICE_LDW_C + 4), 0,
                         (p->rows + fitR - 1) / fitR};
        c.units = c.bands * ng;
        int better = !best.R || (c.ok && !best.ok) ||
                     (c.ok == best.ok &&
                      (c.ok ? (c.units < best.units || (c.units == best.units && c.bands < best.bands)) : fitR > best.R));
        if (opts->max_blocks > 0 && best.R)
            better = 0; /* forced: the largest G allowed */
        if (better)
            best = c;
    }
    return best;
}

/* fwd, dX: the block groups and bands (plan_band_search). 1 when some fit, 0 when none, -1 with
 * the reason. */
static int plan_bands(const npu_cfg_t *cfg, const npu_conv_plan_opts_t *opts, npu_conv_plan_t *p, int row_len,
                      char *msg, size_t n)
{
    int gmax = cfg->obuf_rows / row_len;
    band_cand_t best;
    if (gmax < 1) {
        char why[200];
        snprintf(why, sizeof why, "an output row of %d pixels does not fit an OBUF half (%d rows)", row_len,
                 cfg->obuf_rows);
        return fail(msg, n, why);
    }
    gmax = imin(gmax, p->nblk);
    if (opts->max_blocks > 0)
        gmax = imin(gmax, opts->max_blocks);
    best = plan_band_search(cfg, opts, p, row_len, gmax);
    if (best.R) {
        p->ngroups = (p->nblk + best.G - 1) / best.G;
        p->G = (p->nblk + p->ngroups - 1) / p->ngroups;
        set_bands(p, best.R);
    }
    p->obuf_unit_rows = (unsigned)(p->G * p->R * row_len);
    return best.R ? 1 : 0;
}

int npu_conv_geometry(const npu_cfg_t *cfg, const npu_conv_t *c, int kernel, int dataflow,
                      const npu_conv_plan_opts_t *opts, npu_conv_plan_t *p, char *msg, size_t n)
{
    char why[200];
    memset(p, 0, sizeof *p);
    if (npu_conv_check(c, why, sizeof why) != 0)
        return fail(msg, n, why);
    if (kernel < NPU_CONV_FWD || kernel > NPU_CONV_DW || dataflow < NPU_CONV_ZEROPAD ||
        dataflow > NPU_CONV_ECOFLOW)
        return fail(msg, n, "unknown kernel or dataflow");
    plan_geometry(cfg, c, kernel, dataflow, NULL, opts && opts->padded, p);
    npu_conv_comp_bytes(p);
    if (n)
        msg[0] = '\0';
    return 0;
}

/* The layer check; a column range (cols) is checked as a layer wide enough for its kernel (its
 * padding is per side), with at least one output column and a nonnegative padding. dW columns
 * are zeropad's only: ecoflow's dW reads X rows and columns through one padding (vp). */
static int check_cols(const npu_conv_t *c, int kernel, int dataflow, const npu_conv_cols_t *cols, char *msg,
                      size_t n)
{
    npu_conv_t w = *c;
    if (!cols)
        return npu_conv_check(c, msg, n);
    if ((kernel == NPU_CONV_DW && dataflow != NPU_CONV_ZEROPAD) || c->W < 1 || cols->ow < 1 || cols->pad < 0)
        return fail(msg, n, "a column range without columns, with a negative padding or of an ecoflow dW");
    w.W = imax(c->W, (c->KW - 1) * c->dil + 1);
    return npu_conv_check(&w, msg, n);
}

int npu_conv_plan(const npu_cfg_t *cfg, const npu_conv_t *c, int kernel, int dataflow,
                  const npu_conv_plan_opts_t *opts, npu_conv_plan_t *p, char *msg, size_t n)
{
    return npu_conv_plan_cols(cfg, c, kernel, dataflow, opts, NULL, p, msg, n);
}

int npu_conv_plan_layout(const npu_cfg_t *cfg, const npu_conv_t *c, int kernel, int dataflow,
                         const npu_conv_plan_opts_t *opts, const npu_conv_cols_t *cols, npu_conv_plan_t *p, char *msg,
                         size_t n)
{
    npu_conv_plan_opts_t o0;
    int row_len, best;
    char why[200];
    memset(p, 0, sizeof *p);
    if (!opts) {
        memset(&o0, 0, sizeof o0);
        opts = &o0;
    }
    if (check_cols(c, kernel, dataflow, cols, why, sizeof why) != 0)
        return fail(msg, n, why);
    if (kernel < NPU_CONV_FWD || kernel > NPU_CONV_DW || dataflow < NPU_CONV_ZEROPAD ||
        dataflow > NPU_CONV_ECOFLOW)
        return fail(msg, n, "unknown kernel or dataflow");
    row_len = plan_geometry(cfg, c, kernel, dataflow, cols, opts->padded, p);
    p->dy_ring = opts->dy_ring && kernel == NPU_CONV_DX && dataflow == NPU_CONV_ECOFLOW;
    best = kernel == NPU_CONV_DW ? plan_dw_bands(cfg, opts, p, msg, n) : plan_bands(cfg, opts, p, row_len, msg, n);
    if (best < 0)
        return -1;
    if (!best) {
        snprintf(why, sizeof why, "one band of the %s input does not fit the SPM (%d words)",
                 kernel == NPU_CONV_FWD ? "fwd" : kernel == NPU_CONV_DX ? "dx" : "dw",
                 npu_cfg_spm_words(cfg));
        return fail(msg, n, why);
    }
    spm_need(p); /* the chosen R and G */
    if (place(cfg, p) != 0)
        return fail(msg, n, "the SPM layout does not fit");
    if (npu_cfg_spm_words(cfg) > 65536)
        return fail(msg, n, "SPM addresses past 16 bits");
    p->units = c->batch * p->nbands * p->ngroups; /* dW: ngroups = passes */
    if (n)
        msg[0] = '\0';
    return 0;
}

int npu_conv_plan_cols(const npu_cfg_t *cfg, const npu_conv_t *c, int kernel, int dataflow,
                       const npu_conv_plan_opts_t *opts, const npu_conv_cols_t *cols, npu_conv_plan_t *p, char *msg,
                       size_t n)
{
    if (npu_conv_plan_layout(cfg, c, kernel, dataflow, opts, cols, p, msg, n) != 0)
        return -1;
    npu_conv_plan_bytes(p);
    return 0;
}
