/* slice_nest.c - loop dims, tensor views, capacity and step GEMM of the slicing stage; see
 * slice_nest.h. */
#include "compile/slice/slice_nest.h"

#include <stdio.h>
#include <string.h>

#include "compile/slice/slice_memo.h"

enum { DB = 0, DR, DC, DF, DCH }; /* convolution dims: images, rows, columns, filters, channels */
enum { GM = 0, GN, GK };          /* GEMM dims */

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t fdiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
static int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }

static npu_slice_axis_t ax(int dim, int win, int kk, int64_t lim)
{
    npu_slice_axis_t a = {dim, win, kk, lim};
    return a;
}

/* A tensor from its layout and axes; dep from the axes. */
static void tensor(npu_slice_tensor_t *t, int layout, unsigned ebytes, int naxes, const npu_slice_axis_t *a)
{
    memset(t, 0, sizeof *t);
    t->layout = layout;
    t->ebytes = ebytes;
    t->naxes = naxes;
    for (int i = 0; i < naxes; i++) {
        t->ax[i] = a[i];
        t->dep |= 1u << a[i].dim;
    }
}

static void set_order(npu_slice_nest_t *x, int o, const int *dims)
{
    memcpy(x->order[o], dims, sizeof(int) * (size_t)x->nd);
}

static void init_gemm(npu_slice_nest_t *x, int M, int N, int K)
{
    static const char *names[3] = {"m", "n", "k"};
    static const int o0[3] = {GM, GN, GK}, o1[3] = {GN, GM, GK};
    x->nd = 3;
    x->T = 1;
    x->ext[GM] = M;
    x->ext[GN] = N;
    x->ext[GK] = K;
    for (int d = 0; d < 3; d++) {
        x->unit[d] = x->L;
        x->name[d] = names[d];
    }
    x->red = 1u << GK;
    set_order(x, 0, o0);
    set_order(x, 1, o1);
    tensor(&x->t[NPU_SLICE_IN0], NPU_SLICE_T_MATRIX, 2, 2, (npu_slice_axis_t[]){ax(GM, 0, 0, M), ax(GK, 0, 0, K)});
    tensor(&x->t[NPU_SLICE_IN1], NPU_SLICE_T_MATRIX, 2, 2, (npu_slice_axis_t[]){ax(GK, 0, 0, K), ax(GN, 0, 0, N)});
    tensor(&x->t[NPU_SLICE_OUT], NPU_SLICE_T_MATRIX, 4, 2, (npu_slice_axis_t[]){ax(GM, 0, 0, M), ax(GN, 0, 0, N)});
}

/* An NHWC tensor over (b, rows, cols, channel dim) with windows win on rows and columns. */
static void nhwc(npu_slice_nest_t *x, int t, unsigned e, int win, int64_t H, int64_t W, int chdim, int64_t C)
{
    const npu_conv_t *c = &x->c;
    npu_slice_axis_t a[4];
    a[0] = ax(DB, NPU_SLICE_W_PLAIN, 0, c->batch);
    a[1] = ax(DR, win, c->KH, H);
    a[2] = ax(DC, win, c->KW, W);
    a[3] = ax(chdim, NPU_SLICE_W_PLAIN, 0, C);
    tensor(&x->t[t], NPU_SLICE_T_NHWC, e, 4, a);
}

static void init_conv(npu_slice_nest_t *x)
{
    static const char *names[5] = {"b", "r", "c", "f", "ch"};
    static const int ord[3][2][5] = {
        {{DB, DR, DC, DF, DCH}, {DF, DB, DR, DC, DCH}},  /* fwd: reduce ch */
        {{DB, DR, DC, DCH, DF}, {DCH, DB, DR, DC, DF}},  /* dX: reduce f */
        {{DF, DCH, DB, DR, DC}, {DCH, DF, DB, DR, DC}}}; /* dW: reduce b, r, c */
    const npu_conv_t *c = &x->c;
    int OH = npu_conv_oh(c), OW = npu_conv_ow(c), k = x->kind - NPU_SLICE_FWD;
    npu_slice_axis_t kfc[2] = {ax(DF, 0, 0, c->F), ax(DCH, 0, 0, c->C)};
    x->nd = 5;
    x->T = c->KH * c->KW;
    x->ext[DB] = c->batch;
    x->ext[DR] = x->kind == NPU_SLICE_DX ? c->H : OH;
    x->ext[DC] = x->kind == NPU_SLICE_DX ? c->W : OW;
    x->ext[DF] = c->F;
    x->ext[DCH] = c->C;
    for (int d = 0; d < 5; d++) {
        x->unit[d] = d >= DF ? x->L : 1;
        x->name[d] = names[d];
    }
    x->red = x->kind == NPU_SLICE_FWD ? 1u << DCH : x->kind == NPU_SLICE_DX ? 1u << DF : 7u;
    set_order(x, 0, ord[k][0]);
    set_order(x, 1, ord[k][1]);
    switch (x->kind) {
    case NPU_SLICE_FWD:
        nhwc(x, NPU_SLICE_IN0, 2, NPU_SLICE_W_FWD, c->H, c->W, DCH, c->C);
        tensor(&x->t[NPU_SLICE_IN1], NPU_SLICE_T_KFC, 2, 2, kfc);
        nhwc(x, NPU_SLICE_OUT, 4, NPU_SLICE_W_PLAIN, OH, OW, DF, c->F);
        break;
    case NPU_SLICE_DX:
        nhwc(x, NPU_SLICE_IN0, 2, NPU_SLICE_W_DX, OH, OW, DF, c->F);
        tensor(&x->t[NPU_SLICE_IN1], NPU_SLICE_T_KFC, 2, 2, kfc);
        nhwc(x, NPU_SLICE_OUT, 4, NPU_SLICE_W_PLAIN, c->H, c->W, DCH, c->C);
        break;
    default:
        nhwc(x, NPU_SLICE_IN0, 2, NPU_SLICE_W_PLAIN, OH, OW, DF, c->F);
        nhwc(x, NPU_SLICE_IN1, 2, NPU_SLICE_W_FWD, c->H, c->W, DCH, c->C);
        tensor(&x->t[NPU_SLICE_OUT], NPU_SLICE_T_KFC, 4, 2, kfc);
        break;
    }
}

int npu_slice_nest_init(npu_slice_nest_t *x, const npu_cfg_t *cfg, int kind, const npu_conv_t *c,
                        int M, int N, int K, char *msg, size_t n)
{
    char why[160];
    memset(x, 0, sizeof *x);
    x->cfg = cfg;
    x->kind = kind;
    x->S = cfg->s;
    x->L = npu_cfg_f(cfg);
    x->B = (unsigned)npu_cfg_word(cfg);
    x->DB = (unsigned)npu_cfg_beat(cfg);
    x->g = npu_slice_geom(cfg);
    if (cfg->s < 1 || NPU_SLICE_PAGE % x->B || (x->B & (x->B - 1)))
        snprintf(why, sizeof why, "the beat (%u bytes) must be a power of two dividing 4096", x->B);
    else if (kind == NPU_SLICE_GEMM && (M < 1 || N < 1 || K < 1))
        snprintf(why, sizeof why, "GEMM sizes must be >= 1");
    else if (kind != NPU_SLICE_GEMM && (kind < NPU_SLICE_FWD || kind > NPU_SLICE_DW || !c))
        snprintf(why, sizeof why, "unknown kernel");
    else if (kind != NPU_SLICE_GEMM && npu_conv_check(c, why, sizeof why) != 0)
        ;
    else if (kind != NPU_SLICE_GEMM && c->depthwise)
        snprintf(why, sizeof why, "depthwise layers are not sliced");
    else
        why[0] = '\0';
    if (why[0]) {
        if (n)
            snprintf(msg, n, "%s", why);
        return -1;
    }
    if (kind == NPU_SLICE_GEMM) {
        init_gemm(x, M, N, K);
    } else {
        x->c = *c;
        init_conv(x);
    }
    return 0;
}

void npu_slice_axis_range(const npu_slice_nest_t *x, const npu_slice_axis_t *a, const int64_t *o,
                          const int64_t *s, int64_t *lo, int64_t *len)
{
    int64_t o0 = o[a->dim], s0 = s[a->dim], st = x->c.stride, p = x->c.pad, d = x->c.dil;
    int64_t l = o0, h = o0 + s0;
    if (a->win == NPU_SLICE_W_FWD) { /* input rows oh*s + kh*d - p */
        l = o0 * st - p;
        h = (o0 + s0 - 1) * st + (a->kk - 1) * d - p + 1;
    } else if (a->win == NPU_SLICE_W_DX) { /* dY rows oh with oh*s = ih + p - kh*d */
        l = -fdiv(-(o0 + p - (a->kk - 1) * d), st);
        h = fdiv(o0 + s0 - 1 + p, st) + 1;
    }
    l = imax(l, 0);
    h = imin(h, a->lim);
    *lo = l;
    *len = h > l ? h - l : 0;
}

void npu_slice_tile_bursts(const npu_slice_nest_t *x, int t, const int64_t *o, const int64_t *s,
                           npu_bursts_t *acc)
{
    const npu_slice_tensor_t *ts = &x->t[t];
    int64_t lo[4], len[4];
    for (int i = 0; i < ts->naxes; i++)
        npu_slice_axis_range(x, &ts->ax[i], o, s, &lo[i], &len[i]);
    npu_slice_range_bursts(x, t, lo, len, acc);
}

void npu_slice_range_bursts(const npu_slice_nest_t *x, int t, const int64_t *lo, const int64_t *len,
                            npu_bursts_t *acc)
{
    const npu_slice_tensor_t *ts = &x->t[t];
    const npu_burst_geom_t *g = &x->g;
    for (int i = 0; i < ts->naxes; i++)
        if (len[i] <= 0)
            return;
    if (ts->layout == NPU_SLICE_T_MATRIX) {
        npu_slice_matrix_tile(g, 0, ts->ebytes, ts->ax[0].lim, ts->ax[1].lim, lo[0], lo[1], len[0], len[1], acc);
    } else if (ts->layout == NPU_SLICE_T_NHWC) {
        npu_slice_box_t e = {ts->ax[0].lim, ts->ax[1].lim, ts->ax[2].lim, ts->ax[3].lim};
        npu_slice_box_t org = {lo[0], lo[1], lo[2], lo[3]}, tl = {len[0], len[1], len[2], len[3]};
        npu_slice_image_tile(g, 0, ts->ebytes, NPU_SLICE_NHWC, &e, &org, &tl, acc);
    } else { /* [taps][F][C]: every tap's f x ch block */
        npu_slice_view_t v;
        int64_t F = ts->ax[0].lim, C = ts->ax[1].lim;
        v.base = (uint64_t)(lo[0] * C + lo[1]) * ts->ebytes;
        v.ebytes = ts->ebytes;
        v.nd = 3;
        v.dim[0] = (npu_slice_dim_t){x->T, F * C};
        v.dim[1] = (npu_slice_dim_t){len[0], C};
        v.dim[2] = (npu_slice_dim_t){len[1], 1};
        npu_slice_view(g, &v, acc);
    }
}

/* GEMM: gemm_tiling's rules (A, B, C double buffers in banks 0, 1, 2, A's split over banks 0 and 3
 * when two do not fit one bank; Mt and Kc padded to the lanes; the OBUF holds Mt x nb rows; the
 * bands' rules: npu_gemm_band_fits, npu_gemm_cband_fits). */
static int fit_gemm(const npu_slice_nest_t *x, const int64_t *t, uint64_t *w, int64_t *orows)
{
    const npu_cfg_t *cfg = x->cfg;
    int64_t L = x->L, bw = cfg->spm_bank_words;
    int64_t tm = x->ext[GM] < L ? t[GM] : cdiv(t[GM], L) * L, kb = cdiv(t[GK], L), nb = cdiv(t[GN], L);
    w[NPU_SLICE_IN0] = (uint64_t)(tm * kb);
    w[NPU_SLICE_IN1] = (uint64_t)(kb * L * nb);
    w[NPU_SLICE_OUT] = (uint64_t)(2 * tm * nb);
    *orows = tm * nb;
    /* A's two buffers in bank 0, or one there and one in bank 3 (gemm_tiling.h "Split A") */
    int a_fits = 2 * (int64_t)w[0] <= bw || (!x->no_split_a && cfg->spm_banks >= 4 && (int64_t)w[0] <= bw);
    return cfg->spm_banks >= 3 && a_fits && 2 * (int64_t)w[1] <= bw &&
           2 * (int64_t)w[2] <= bw && *orows <= cfg->obuf_rows;
}

/* Convolutions: conv_plan's rule, the input tile as its padded window (the emitters FILL the
 * padding), stationary rows = taps x the reduction's channels, int32 output words. */
static int fit_conv(const npu_slice_nest_t *x, const int64_t *t, uint64_t *w, int64_t *orows)
{
    const npu_conv_t *c = &x->c;
    int64_t L = x->L, B = x->B, T = x->T, pix = t[DB] * t[DR] * t[DC];
    int64_t hp = (t[DR] - 1) * c->stride + (c->KH - 1) * c->dil + 1;
    int64_t wp = (t[DC] - 1) * c->stride + (c->KW - 1) * c->dil + 1;
    int64_t obuf = x->cfg->obuf_rows;
    switch (x->kind) {
    case NPU_SLICE_FWD:
        w[0] = (uint64_t)(t[DB] * hp * wp * cdiv(t[DCH], L));
        w[1] = (uint64_t)(T * t[DCH] * cdiv(t[DF], L));
        w[2] = (uint64_t)(pix * cdiv(4 * t[DF], B));
        *orows = pix * cdiv(t[DF], L);
        break;
    case NPU_SLICE_DX: /* the zero-inserted dY band: rows + (KH-1)d by cols + (KW-1)d */
        w[0] = (uint64_t)(t[DB] * (t[DR] + (c->KH - 1) * c->dil) * (t[DC] + (c->KW - 1) * c->dil) * cdiv(t[DF], L));
        w[1] = (uint64_t)(T * t[DF] * cdiv(t[DCH], L));
        w[2] = (uint64_t)(pix * cdiv(4 * t[DCH], B));
        *orows = pix * cdiv(t[DCH], L);
        break;
    default: /* dW: the tile's regions of f rows per (channel block, tap) use both OBUF halves */
        w[0] = (uint64_t)(pix * cdiv(t[DF], L));
        w[1] = (uint64_t)(t[DB] * hp * wp * cdiv(t[DCH], L));
        w[2] = (uint64_t)(T * t[DF] * cdiv(4 * t[DCH], B));
        *orows = T * cdiv(t[DCH], L) * t[DF];
        obuf *= 2;
        break;
    }
    return *orows <= obuf;
}

int npu_slice_fit(const npu_slice_nest_t *x, const int64_t *tile, const int64_t *ntiles,
                  unsigned *words, int *bufs, unsigned *obuf_rows)
{
    uint64_t w[NPU_SLICE_TENSORS], need = 2; /* + the 2 scratch words of the conv emitter */
    int64_t orows;
    int ok = x->kind == NPU_SLICE_GEMM ? fit_gemm(x, tile, w, &orows) : fit_conv(x, tile, w, &orows);
    for (int t = 0; t < NPU_SLICE_TENSORS; t++) {
        int64_t n = 1;
        for (int d = 0; d < x->nd; d++)
            if (x->t[t].dep >> d & 1)
                n *= ntiles[d];
        bufs[t] = x->kind == NPU_SLICE_GEMM || n > 1 ? 2 : 1;
        need += (uint64_t)bufs[t] * w[t];
        words[t] = w[t] > 0xffffffffu ? 0xffffffffu : (unsigned)w[t];
    }
    *obuf_rows = orows > 0xffffffff ? 0xffffffffu : (unsigned)orows;
    if (x->kind != NPU_SLICE_GEMM && need > (uint64_t)npu_cfg_spm_words(x->cfg))
        ok = 0;
    return ok;
}

void npu_slice_step_gemm(const npu_slice_nest_t *x, const int64_t *s, int64_t *m, int64_t *n,
                         int64_t *taps, int64_t *kd, int64_t *orows)
{
    int64_t pix = s[DB] * s[DR] * s[DC];
    *taps = x->T;
    switch (x->kind) {
    case NPU_SLICE_GEMM:
        *m = s[GM];
        *n = s[GN];
        *kd = s[GK];
        *orows = *m * cdiv(*n, x->L);
        return;
    case NPU_SLICE_FWD:
        *m = pix;
        *n = s[DF];
        *kd = s[DCH];
        break;
    case NPU_SLICE_DX:
        *m = pix;
        *n = s[DCH];
        *kd = s[DF];
        break;
    default: /* dW: dY^T rows (filters) stream against stationary X rows (channels) */
        *m = s[DF];
        *n = s[DCH];
        *kd = pix;
        *orows = x->T * cdiv(*n, x->L) * *m;
        return;
    }
    *orows = *m * cdiv(*n, x->L);
}

/* The searches ask npu_slice_step_drain for the same few tiles over and over: the answers are
 * remembered, keyed by everything they depend on (L, whether M is below it, S, the bank size). */
#define SD_MEMO 64

static uint64_t step_drain(const npu_slice_nest_t *x, const int64_t *tile, const int64_t *s);

uint64_t npu_slice_step_drain(const npu_slice_nest_t *x, const int64_t *tile, const int64_t *s)
{
    static npu_memo_slot_t memo[SD_MEMO];
    const int64_t key[NPU_MEMO_KEY] = {tile[GM], tile[GN], s[GM], s[GN],
                                       (((int64_t)x->cfg->spm_bank_words * 128 + x->S) * 128 + x->L) * 2 +
                                           (x->ext[GM] < x->L) + 1};
    npu_memo_slot_t *e;
    if (x->kind != NPU_SLICE_GEMM)
        return 0;
    if (!npu_memo_find(memo, SD_MEMO, key, &e))
        e->v = step_drain(x, tile, s);
    return e->v;
}

static uint64_t step_drain(const npu_slice_nest_t *x, const int64_t *tile, const int64_t *s)
{
    const npu_cfg_t *cfg = x->cfg;
    int64_t L = x->L, tm = x->ext[GM] < L ? tile[GM] : cdiv(tile[GM], L) * L, nb = cdiv(tile[GN], L);
    uint64_t lost = 0, stride = (uint64_t)(2 * nb), c0 = 2u * (uint64_t)cfg->spm_bank_words;
    if (x->kind != NPU_SLICE_GEMM)
        return 0;
    for (int buf = 0; buf < 2; buf++) /* the staging buffers C(t % 2), tiles alternating */
        for (int64_t j = 0; j < cdiv(s[GN], L); j++) {
            int skinny = s[GN] - j * L <= x->S; /* FlexSA's skinny n-block: VSW / ISW waves */
            lost += npu_slice_drain_stalls(cfg, c0 + (uint64_t)buf * (uint64_t)(2 * tm * nb) + 2u * (uint64_t)j,
                                           s[GM], skinny, stride);
        }
    return lost << (NPU_SLICE_Q - 1); /* the mean of the two buffers, a cycle each */
}
