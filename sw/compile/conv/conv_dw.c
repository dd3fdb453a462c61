/* conv_dw.c - the dW units of a convolution program (both dataflows); see conv_unit.h and
 * docs/conv.md §2-3. */
#include "compile/conv/conv_unit.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

/* ---- dW --------------------------------------------------------------------------------- */

/* Valid dY columns of tap kw: X plane column ow*vs + kw*d - vp inside [0, PW). */
static void dw_cols(const npu_conv_plan_t *p, int kw, int *ow_a, int *ow_b)
{
    *ow_a = imax(0, npu_ceildiv(p->vp - kw * p->c.dil, p->vs));
    *ow_b = imin(p->vOW, npu_floordiv(p->PW - 1 + p->vp - kw * p->c.dil, p->vs) + 1);
}

int npu_cx_dw_tap_valid(const npu_conv_plan_t *p, int t)
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

/* DRAINs of the pass's covered regions whose last X row is in (lo, hi] into the dW tile, one per
 * region; returns how many. */
static int dw_drains(npu_cx_t *x, npu_prog_t *l, int pass, int lo, int hi)
{
    const npu_conv_plan_t *p = x->p;
    unsigned F = (unsigned)p->c.F, dwp = p->pout;
    int n = 0;
    for (int q = 0; q < p->T * p->cw; q++) {
        int fin = npu_conv_dw_fin_row(p, q % p->T / p->c.KW);
        if (x->pass_of[q] == pass && x->cov[x->row_of[q]] && fin > lo && fin <= hi) {
            npu_cx_drain_blk(x, l, F, x->row_of[q], p->out_base[0] + (unsigned)(q % p->T) * F * dwp + 2u * (unsigned)(q / p->T),
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
 * three groups (npu_cx_unit_dw). */
static void dw_stores(npu_cx_t *x, npu_prog_t *l, int pass, int lo, int hi)
{
    const npu_conv_plan_t *p = x->p;
    uint64_t tap = (uint64_t)p->c.F * p->pout; /* words */
    int flat = npu_conv_dw_flat(p);
    for (int t = 0; t < p->T;) {
        int e = npu_conv_dw_store_run(p, x->pass_of, pass, lo, hi, t);
        if (e > t && flat)
            npu_cx_store_flat(x, l, NPU_TAG_DW, p->out_base[0] + (unsigned)((uint64_t)t * tap),
                       x->a->out + (uint64_t)t * tap * x->B, (uint64_t)(e - t) * tap * x->B);
        for (int u = t; e > t && !flat && u < e; u++) /* a part: its rows of each tap of the whole dW */
            npu_cx_move_px(x, l, 1, NPU_TAG_DW, p->out_base[0] + (unsigned)((uint64_t)u * tap),
                            x->a->out + (uint64_t)u * p->dtap_rows * p->pitch_out, (uint64_t)p->c.F, p->pout,
                            4u * (unsigned)p->c.C, p->pitch_out);
        t = e + (e == t);
    }
}

/* The last unit of a pass: drains and stores of the regions whose last X row is in (*lo, hi],
 * in C right after the waves of X row hi (the last DRAIN pushes e2s, the first STORE pops it),
 * so they overlap the waves of the rows after it; *lo = hi when emitted. Nothing when the group
 * has no DRAIN or no STORE (its regions then go with the next group). */
static void dw_early_group(npu_cx_t *x, npu_cx_unit_t *up, int pass, int *lo, int hi)
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

/* A column range after the first (p->acc, conv_split.h): the partial dW of the ranges before it,
 * every tap, into the dW tiles (the part's DRAINs add to it): one run when the dW is flat
 * (npu_cx_move_px of dense rows is one flat LOAD), else per tap its F rows. */
static void dw_load_partial(npu_cx_t *x, npu_prog_t *l)
{
    const npu_conv_plan_t *p = x->p;
    int runs = npu_conv_dw_flat(p) ? 1 : p->T;
    uint64_t rows = (uint64_t)p->c.F * (uint64_t)(p->T / runs);
    for (int t = 0; t < runs; t++)
        npu_cx_move_px(x, l, 0, NPU_TAG_DW, p->out_base[0] + (unsigned)((uint64_t)t * p->c.F * p->pout),
                       x->a->out + (uint64_t)t * p->dtap_rows * p->pitch_out, rows, p->pout,
                       4u * (unsigned)p->c.C, p->pitch_out);
}

/* The unit's input: dY^T rows (a transposed LOAD per dY row) and the X plane rows; unit 0 first
 * zeroes the dW taps no wave reaches (a later column range instead loads the partial dW:
 * dw_load_partial). The first unit's load is exposed: its input comes in two parts, the X rows
 * below im (about a third) with the dY rows they read, then the rest (L2), which C pops for at
 * its first LDW of an X row >= im (the waves of the first rows hide it). Returns im. */
static int dw_loads(npu_cx_t *x, const npu_conv_unit_t *un, npu_cx_unit_t *up)
{
    const npu_conv_plan_t *p = x->p;
    unsigned in = npu_cx_in(x, un), F = (unsigned)p->c.F, dwp = p->pout, owj = (unsigned)p->owj;
    npu_insn_t ins;
    if (un->u == 0 && p->acc)
        dw_load_partial(x, &up->L);
    else if (un->u == 0)
        for (int t = 0; t < p->T; t++)
            if (!x->tap_valid[t])
                npu_cx_fill(x, &up->L, F, p->out_base[0] + (unsigned)t * F * dwp, dwp, dwp);
    int im = un->u == 0 && un->i1 - un->i0 >= 3 ? un->i0 + (un->i1 - un->i0 + 2) / 3 : un->i1;
    int ohm = imin(un->o1, imax(un->o0, npu_floordiv(im - 1 + p->vp, p->vs) + 1));
    for (int part = 0; part < 2; part++) {
        npu_prog_t *l = part ? &up->L2 : &up->L;
        for (int oh = part ? ohm : un->o0; oh < (part ? un->o1 : ohm); oh++) {
            uint64_t pix = ((uint64_t)un->b * (uint64_t)p->vOH + (uint64_t)oh) * (uint64_t)p->dwy;
            npu_pb_put(&x->b, l,
                       npu_enc_load(&ins, NPU_TAG_DY, 1, (unsigned)p->vOW, npu_pb_dram(&x->b, x->a->dy + pix * p->pitch_dy),
                                    in + (unsigned)(oh - un->o0) * F * owj, owj, 2u * F, p->pitch_dy),
                       &ins, 0);
        }
        npu_cx_load_plane_rows(x, l, un, in + p->xoff, part ? im : un->i0, part ? un->i1 : im);
    }
    return im;
}

/* One stationary tile: X row pr's pixels of tap column kw under dY^T word j (valid lanes
 * [klo, khi)), c-block cb (nc channels); im: the first X row of the unit's second load part. */
typedef struct dw_tile { int pr, kw, j, klo, khi, cb, nc, im; } dw_tile_t;

/* The tile's LDW (once, before its first wave) and its waves: per class rho, the kh reading X row
 * pr, kh decreasing = dY rows increasing; a run of them in consecutive OBUF regions of one half
 * is one WAVE. */
static void dw_tile_waves(npu_cx_t *x, const npu_conv_unit_t *un, npu_cx_unit_t *up, const dw_tile_t *t)
{
    const npu_conv_plan_t *p = x->p;
    const npu_conv_t *c = &p->c;
    unsigned in = npu_cx_in(x, un), owj = (unsigned)p->owj, F = (unsigned)c->F, cw = (unsigned)p->cw;
    unsigned half = (unsigned)x->cfg->obuf_rows, bank = 0;
    int step = npu_conv_dw_step(p), chained = npu_conv_dw_chained(p), any = 0;
    for (int rho = 0; rho < step && rho < c->KH; rho++) {
        int run_q = -1, run_oh = 0, run_n = 0;
        for (int kh = rho + (c->KH - 1 - rho) / step * step; kh >= -step; kh -= step) {
            int num = t->pr + p->vp - kh * c->dil, oh = num / p->vs, q = t->cb * p->T + kh * c->KW + t->kw;
            int ok = kh >= 0 && num >= 0 && num % p->vs == 0 && oh < p->vOH && x->pass_of[q] == un->grp;
            if (run_n && (!ok || !chained || oh != run_oh + run_n ||
                          x->row_of[q] != x->row_of[run_q] + (unsigned)run_n * F ||
                          x->row_of[q] / half != x->row_of[run_q] / half)) {
                npu_cx_wave(x, &up->C, bank, run_n * c->F, in + (unsigned)(run_oh - un->o0) * F * owj + (unsigned)t->j,
                            owj, t->khi, t->klo, t->nc, x->row_of[run_q]);
                run_n = 0;
            }
            if (!ok)
                continue;
            if (!any) {
                int pc = (t->j * p->L + t->klo) * p->vs + t->kw * c->dil - p->vp;
                if (t->pr >= t->im && up->L2.n && !up->c_split)
                    up->c_split = up->C.n + 1;
                bank = npu_cx_ldw(x, &up->C,
                                  in + p->xoff + ((unsigned)(t->pr - un->i0) * (unsigned)p->PW + (unsigned)pc) * cw +
                                      (unsigned)t->cb,
                                  (unsigned)p->vs * cw, t->khi, t->klo, t->nc);
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

/* The stationary tiles of X row pr: per tap column kw, dY^T word j with valid lanes, c-block. */
static void dw_row(npu_cx_t *x, const npu_conv_unit_t *un, npu_cx_unit_t *up, int pr, int im)
{
    const npu_conv_plan_t *p = x->p;
    dw_tile_t t;
    t.pr = pr;
    t.im = im;
    for (t.kw = 0; t.kw < p->c.KW; t.kw++) {
        int ow_a, ow_b;
        dw_cols(p, t.kw, &ow_a, &ow_b);
        for (t.j = 0; t.j * p->L < ow_b; t.j++) {
            t.klo = imax(ow_a - t.j * p->L, 0);
            t.khi = imin(ow_b - t.j * p->L, p->L);
            if (t.klo >= t.khi)
                continue;
            for (t.cb = 0; t.cb < p->cw; t.cb++) {
                t.nc = imin(p->L, p->c.C - t.cb * p->L);
                dw_tile_waves(x, un, up, &t);
            }
        }
    }
}

/* dW: the GEMM per tap dW[t] (F x C) = sum over dY pixels of dY^T (rows f) x X pixels (rows =
 * the pixels, lanes c). A = dY^T word j of the F rows of dY row oh (transposed LOAD per dY row:
 * word j holds columns ow in [2S*j, 2S*j + 2S)), one WAVE of m = F rows; B = the X pixels those
 * columns read (stride vs*cw); lanes outside the valid columns are cut by k (top) and k_lo
 * (bottom) on both LDW and WAVE. One LDW of X row pr serves every (oh, kh) with
 * oh*vs + kh*d - vp = pr: the waves per stationary tile hide the LDW turnaround (a bank is
 * reloaded only after its waves left the array). */
void npu_cx_unit_dw(npu_cx_t *x, const npu_conv_unit_t *un, npu_cx_unit_t *up)
{
    const npu_conv_plan_t *p = x->p;
    int first = un->b == 0 && un->band == 0, last = un->b == p->c.batch - 1 && un->band == p->nbands - 1;
    int cp[2] = {-1, -1}, lo = INT_MIN, im = dw_loads(x, un, up);
    if (first) /* a pass starts its regions */
        memset(x->cov, 0, 2u * (size_t)x->cfg->obuf_rows);
    if (last)
        npu_conv_dw_early_rows(p, x->pass_of, un->grp, un->i0, cp);
    for (int pr = un->i0; pr < un->i1; pr++) {
        dw_row(x, un, up, pr, im);
        for (int k = 0; k < 2; k++)
            if (pr == cp[k])
                dw_early_group(x, up, un->grp, &lo, pr);
    }
    if (last) {
        dw_drains(x, &up->D, un->grp, lo, INT_MAX);
        dw_stores(x, &up->S, un->grp, lo, INT_MAX);
    }
}
