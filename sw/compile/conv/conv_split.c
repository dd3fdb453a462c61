/* conv_split.c - a layer cut into parts over filter, channel and output-column ranges; see conv_split.h. */
#include "compile/conv/conv_split.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/slice/slice.h"
#include "prog/prog_builder.h"

#define MAX_OPTS 256

static int imin(int a, int b) { return a < b ? a : b; }
static int cdiv(int a, int b) { return (a + b - 1) / b; }
static unsigned out_tag(int kernel)
{
    return kernel == NPU_CONV_FWD ? NPU_TAG_Y : kernel == NPU_CONV_DX ? NPU_TAG_DX : NPU_TAG_DW;
}

/* Part i's range indices (reduction innermost: fwd channels, dX filters) and whether it adds to
 * partial sums (dW: every column range after the first). */
static void part_ranges(const npu_conv_split_t *s, int i, int *fi, int *ci, int *acc)
{
    int col = i / (s->nf * s->nc);
    i %= s->nf * s->nc; /* the column range is i / (nf * nc) */
    if (s->whole.kernel == NPU_CONV_DX) {
        *ci = i / s->nf;
        *fi = i % s->nf;
    } else {
        *fi = i / s->nc;
        *ci = i % s->nc;
    }
    /* depthwise: a channel range is its own filters, no reduction across ranges */
    *acc = s->whole.kernel == NPU_CONV_DW ? col > 0
           : s->whole.c.depthwise         ? 0
           : s->whole.kernel == NPU_CONV_FWD ? *ci > 0
                                             : *fi > 0;
}

void npu_conv_split_origin(const npu_conv_split_t *s, int i, int *f0, int *c0)
{
    int fi, ci, acc, L = s->whole.L;
    part_ranges(s, i, &fi, &ci, &acc);
    *c0 = ci * s->cblk * L;
    *f0 = s->whole.c.depthwise ? *c0 : fi * s->fblk * L;
}

int npu_conv_split_col(const npu_conv_split_t *s, int i)
{
    return i / (s->nf * s->nc) * s->wseg;
}

/* Part i's column range [a, a + wseg) of the split columns (fwd, dW: output columns; dX: dX
 * columns): its sub-layer's W, its plan's left padding and output (dX: dY) columns, the first X
 * (dX: dY) column it reads. fwd, dW: the X columns its output columns read, the padding they meet on
 * the left (only the first range's is the layer's; the last range's right padding is what the
 * plane holds past its X columns). dX: every dY column that reaches one of its dX columns, its
 * padding p + a - s*oa such that dX column a + iw reads dY column (iw + PL - kw*d) / s of it. */
typedef struct col_view { int W, pad, ow, in0, tail; } col_view_t;
static col_view_t part_cols(const npu_conv_split_t *s, int i)
{
    const npu_conv_plan_t *w = &s->whole;
    const npu_conv_t *c = &w->c;
    int st = c->stride, ext = (c->KW - 1) * c->dil, a = npu_conv_split_col(s, i);
    col_view_t v;
    if (w->kernel != NPU_CONV_DX) {
        int b = imin(w->OW, a + s->wseg), x0 = a * st - c->pad, xa = x0 > 0 ? x0 : 0;
        int xb = imin(c->W, (b - 1) * st + ext - c->pad + 1);
        /* dW zeropad: the zero-inserted columns up to the next range's first */
        v = (col_view_t){xb - xa, xa - x0, b - a, xa, w->kernel == NPU_CONV_DW && b < w->OW ? st - 1 : 0};
    } else {
        int b = imin(c->W, a + s->wseg), oa = npu_floordiv(a + c->pad - ext, st);
        int ob = imin(w->OW, npu_floordiv(b - 1 + c->pad, st) + 1);
        oa = oa > 0 ? oa : 0;
        v = (col_view_t){b - a, c->pad + a - oa * st, ob - oa, oa, 0};
    }
    return v;
}

/* The columns ranges are cut over: fwd and dW the output's (dW: dY's), dX the dX's. */
static int split_ncols(const npu_conv_plan_t *w) { return w->kernel == NPU_CONV_DX ? w->c.W : w->OW; }

/* Whether the layer's kernel may be cut into column ranges: dW only in zeropad (conv_plan.c
 * check_cols). */
static int cols_ok(const npu_conv_plan_t *w)
{
    return w->kernel != NPU_CONV_DW || w->dataflow == NPU_CONV_ZEROPAD;
}

/* The sub-layer of part i (a column range: part_cols). */
static npu_conv_t part_layer(const npu_conv_split_t *s, int i)
{
    npu_conv_t c = s->whole.c;
    int f0, c0, L = s->whole.L;
    npu_conv_split_origin(s, i, &f0, &c0);
    c.C = imin(c.C - c0, s->cblk * L);
    c.F = c.depthwise ? c.C : imin(c.F - f0, s->fblk * L);
    if (s->nw > 1)
        c.W = part_cols(s, i).W;
    return c;
}

/* Plans part i into *p with its view (the whole layer's pitches) and partial sums. */
static int plan_part(const npu_cfg_t *cfg, const npu_conv_plan_opts_t *opts, const npu_conv_split_t *s, int i,
                     npu_conv_plan_t *p, char *msg, size_t n)
{
    const npu_conv_plan_t *w = &s->whole;
    npu_conv_t c = part_layer(s, i);
    col_view_t v = part_cols(s, i);
    npu_conv_cols_t cols = {v.pad, v.ow, v.tail}; /* a column range: its own padding per side */
    int fi, ci, acc;
    if (npu_conv_plan_layout(cfg, &c, w->kernel, w->dataflow, opts, s->nw > 1 ? &cols : NULL, p, msg, n) != 0)
        return -1;
    part_ranges(s, i, &fi, &ci, &acc);
    p->pitch_x = w->pitch_x;
    p->pitch_dy = w->pitch_dy;
    p->pitch_out = w->pitch_out;
    p->pitch_w = w->pitch_w;
    p->dtap_rows = w->dtap_rows;
    p->dwx = w->dwx;
    p->dwo = w->dwo;
    p->dwy = w->dwy;
    npu_conv_addrs_t zero = {0}, org = npu_conv_split_addrs(s, i, &zero);
    p->org_x = org.x;
    p->org_dy = org.dy;
    p->org_w = org.w;
    p->org_out = org.out;
    npu_conv_plan_bytes(p); /* in the view: the whole tensors' pitches, from the part's origin */
    p->acc = acc;
    if (acc) /* each tile's partial sums are loaded once, where they are stored (dW: in one run) */
        p->plan_rd[out_tag(w->kernel)] = w->kernel == NPU_CONV_DW ? npu_conv_dw_partial_bytes(p)
                                                                   : p->plan_wr[out_tag(w->kernel)];
    return 0;
}

static uint64_t plan_total(const npu_conv_plan_t *p)
{
    uint64_t b = 0;
    for (int t = 0; t < NPU_NUM_TAGS; t++)
        b += p->plan_rd[t] + p->plan_wr[t];
    return b;
}

/* The classes of n ranges that plan alike: the full ones (index 0, n - 1 of them) and the last. */
static int range_classes(int n, int idx[2], int cnt[2])
{
    idx[0] = 0;
    cnt[0] = n > 1 ? n - 1 : 1;
    idx[1] = n - 1;
    cnt[1] = 1;
    return n > 1 ? 2 : 1;
}

static int part_index(const npu_conv_split_t *s, int fi, int ci, int wi)
{
    return wi * s->nf * s->nc + (s->whole.kernel == NPU_CONV_DX ? ci * s->nf + fi : fi * s->nc + ci);
}

/* DRAM bytes of the split (s->nf, nc, fblk, cblk set), from one part of each class of filter and
 * channel ranges, partial sums included; 0 when some part does not plan (reason in msg). */
static uint64_t split_bytes(const npu_cfg_t *cfg, const npu_conv_plan_opts_t *opts, npu_conv_split_t *s,
                            char *msg, size_t n)
{
    int fidx[2], fcnt[2], cidx[2], ccnt[2], widx[2], wcnt[2];
    int nfc = range_classes(s->nf, fidx, fcnt), ncc = range_classes(s->nc, cidx, ccnt);
    int nwc = range_classes(s->nw, widx, wcnt);
    int red = s->whole.kernel == NPU_CONV_DW ? s->nw
              : s->whole.c.depthwise         ? 1
              : s->whole.kernel == NPU_CONV_FWD ? s->nc
                                                : s->nf;
    unsigned tag = out_tag(s->whole.kernel);
    uint64_t total = 0;
    for (int a = 0; a < nfc; a++)
        for (int b = 0; b < ncc; b++)
            for (int e = 0; e < nwc; e++) {
                npu_conv_plan_t p;
                if (plan_part(cfg, opts, s, part_index(s, fidx[a], cidx[b], widx[e]), &p, msg, n) != 0)
                    return 0;
                total += (uint64_t)fcnt[a] * (uint64_t)ccnt[b] * (uint64_t)wcnt[e] *
                         (plan_total(&p) - (p.acc ? p.plan_rd[tag] : 0));
            }
    /* every part of a reduction range but the first loads the partial sums of its output */
    return total + (uint64_t)(red - 1) * npu_conv_tensor_bytes(&s->whole, tag);
}

/* Ranges of fsz filters and csz channels (depthwise: one filter range, the channels'). */
static void set_ranges(npu_conv_split_t *s, int64_t fsz, int64_t csz)
{
    const npu_conv_t *c = &s->whole.c;
    int L = s->whole.L;
    s->fblk = cdiv((int)fsz, L);
    s->cblk = cdiv((int)csz, L);
    s->nf = c->depthwise ? 1 : cdiv(c->F, (int)fsz);
    s->nc = cdiv(c->C, (int)csz);
}

/* The split of fewest DRAM bytes, then fewest parts: for each filter range size (largest first),
 * the largest channel range size whose parts all plan. Depthwise: channel ranges only. Returns 0
 * with s->nf, nc, fblk, cblk set, or -1 (msg: the reason of the smallest split tried). */
static int split_search(const npu_cfg_t *cfg, const npu_conv_plan_opts_t *opts, npu_conv_split_t *s, char *msg,
                        size_t n)
{
    const npu_conv_t *c = &s->whole.c;
    int64_t fo[MAX_OPTS], co[MAX_OPTS];
    int L = s->whole.L, nfo = c->depthwise ? 1 : npu_slice_tile_opts(c->F, L, fo, MAX_OPTS);
    int nco = npu_slice_tile_opts(c->C, L, co, MAX_OPTS);
    uint64_t best = 0;
    int bf = 0, bc = 0, bparts = 0;
    if (c->depthwise)
        fo[0] = c->F;
    for (int i = 0; i < nfo; i++)
        for (int j = 0; j < nco; j++) {
            uint64_t bytes;
            set_ranges(s, fo[i], co[j]);
            bytes = split_bytes(cfg, opts, s, msg, n);
            if (!bytes)
                continue;
            if (!best || bytes < best || (bytes == best && s->nf * s->nc < bparts)) {
                best = bytes;
                bf = i;
                bc = j;
                bparts = s->nf * s->nc;
            }
            break; /* smaller channel ranges of this filter range: more parts, more traffic */
        }
    if (!best)
        return -1;
    set_ranges(s, fo[bf], co[bc]);
    return 0;
}

/* The fewest ranges of columns (balanced: fwd, dW output, dX dX columns) with which some filter
 * and channel split fits (not ecoflow's dW: cols_ok). 0, or -1 (s->nw back to 1). */
static int split_columns(const npu_cfg_t *cfg, const npu_conv_plan_opts_t *opts, npu_conv_split_t *s)
{
    char why[256];
    int ncols = split_ncols(&s->whole);
    if (cols_ok(&s->whole))
        for (int nw = 2; nw <= ncols; nw++) {
            s->wseg = cdiv(ncols, nw);
            s->nw = cdiv(ncols, s->wseg);
            if (s->nw == nw && split_search(cfg, opts, s, why, sizeof why) == 0)
                return 0;
        }
    s->nw = 1;
    s->wseg = ncols;
    return -1;
}

static int fail(char *msg, size_t n, const char *why)
{
    if (n && why != msg)
        snprintf(msg, n, "%s", why);
    return -1;
}

/* Fills the parts' plans and the split's byte totals. */
static int split_fill(const npu_cfg_t *cfg, const npu_conv_plan_opts_t *opts, npu_conv_split_t *s,
                      const npu_conv_plan_t *whole_plan, char *msg, size_t n)
{
    s->parts = s->nw * s->nf * s->nc;
    s->part = calloc((size_t)s->parts, sizeof *s->part);
    if (!s->part)
        return fail(msg, n, "out of memory");
    for (int i = 0; i < s->parts; i++) {
        npu_conv_plan_t *p = &s->part[i];
        if (whole_plan) /* one part: the layer's own plan, whose view is its own layout */
            *p = *whole_plan;
        else if (plan_part(cfg, opts, s, i, p, msg, n) != 0)
            return -1;
        s->units += p->units;
        for (int t = 0; t < NPU_NUM_TAGS; t++) {
            s->plan_rd[t] += p->plan_rd[t];
            s->plan_wr[t] += p->plan_wr[t];
        }
    }
    memcpy(s->comp_rd, s->whole.comp_rd, sizeof s->comp_rd);
    memcpy(s->comp_wr, s->whole.comp_wr, sizeof s->comp_wr);
    return 0;
}

/* The split opts gives (split_f, split_c, split_w): ranges set, 0; or -1 with the reason when a
 * size is not whole 2S-channel blocks or columns are cut for ecoflow's dW. */
static int split_given(const npu_conv_plan_opts_t *o, npu_conv_split_t *s, char *msg, size_t n)
{
    const npu_conv_t *c = &s->whole.c;
    int L = s->whole.L, ncols = split_ncols(&s->whole);
    int64_t fsz = o->split_f > 0 && o->split_f < c->F ? o->split_f : c->F;
    int64_t csz = o->split_c > 0 && o->split_c < c->C ? o->split_c : c->C;
    if (fsz % L && fsz < c->F)
        return snprintf(msg, n, "a split's filter range (%d) is not whole %d-channel blocks", o->split_f, L), -1;
    if (csz % L && csz < c->C)
        return snprintf(msg, n, "a split's channel range (%d) is not whole %d-channel blocks", o->split_c, L), -1;
    if (o->split_w > 0 && o->split_w < ncols && !cols_ok(&s->whole))
        return snprintf(msg, n, "ecoflow's dW is not split into column ranges"), -1;
    set_ranges(s, fsz, csz); /* depthwise: one filter range, the filters go with the channels */
    s->wseg = o->split_w > 0 && o->split_w < ncols ? o->split_w : ncols;
    s->nw = cdiv(ncols, s->wseg);
    return 0;
}

static int split_is_given(const npu_conv_plan_opts_t *o)
{
    return o && (o->split_f > 0 || o->split_c > 0 || o->split_w > 0);
}

int npu_conv_split(const npu_cfg_t *cfg, const npu_conv_t *c, int kernel, int dataflow,
                   const npu_conv_plan_opts_t *opts, npu_conv_split_t *s, char *msg, size_t n)
{
    char why[256], last[256];
    npu_conv_plan_t whole_plan;
    int whole;
    memset(s, 0, sizeof *s);
    if (npu_conv_geometry(cfg, c, kernel, dataflow, opts, &s->whole, msg, n) != 0)
        return -1;
    s->nf = s->nc = s->nw = 1;
    s->fblk = s->whole.fw;
    s->cblk = s->whole.cw;
    s->wseg = split_ncols(&s->whole);
    if (split_is_given(opts)) {
        if (split_given(opts, s, msg, n) != 0)
            return -1;
        whole = s->nf * s->nc * s->nw == 1 &&
                npu_conv_plan(cfg, c, kernel, dataflow, opts, &whole_plan, msg, n) == 0;
        if (s->nf * s->nc * s->nw == 1 && !whole)
            return -1;
    } else if (!(whole = npu_conv_plan(cfg, c, kernel, dataflow, opts, &whole_plan, why, sizeof why) == 0) &&
               split_search(cfg, opts, s, last, sizeof last) != 0 && split_columns(cfg, opts, s) != 0) {
        snprintf(msg, n, "%s; no split into filter%s and channel ranges fits either (one 2S-channel "
                         "range each: %s)", why, cols_ok(&s->whole) ? ", column" : "", last);
        return -1;
    }
    if (split_fill(cfg, opts, s, whole ? &whole_plan : NULL, msg, n) != 0) {
        npu_conv_split_free(s);
        return -1;
    }
    if (n)
        msg[0] = '\0';
    return 0;
}

void npu_conv_split_free(npu_conv_split_t *s)
{
    free(s->part);
    s->part = NULL;
}

npu_conv_addrs_t npu_conv_split_addrs(const npu_conv_split_t *s, int i, const npu_conv_addrs_t *a)
{
    const npu_conv_plan_t *w = &s->whole;
    npu_conv_addrs_t r = *a;
    int f0, c0, col = npu_conv_split_col(s, i), in0 = s->nw > 1 ? part_cols(s, i).in0 : 0;
    npu_conv_split_origin(s, i, &f0, &c0);
    r.x += (uint32_t)(2 * c0) + (w->kernel != NPU_CONV_DX ? (uint32_t)in0 * w->pitch_x : 0u);
    /* dW (zeropad): its first dY column in the zero-inserted dY */
    r.dy += (uint32_t)(2 * f0) + (w->kernel == NPU_CONV_DX   ? (uint32_t)in0 * w->pitch_dy
                                  : w->kernel == NPU_CONV_DW ? (uint32_t)(col * w->c.stride) * w->pitch_dy
                                                             : 0u);
    r.w += w->c.depthwise ? (uint32_t)c0 * w->pitch_w /* diagonal blocks: rows of one word */
                          : (uint32_t)f0 * w->pitch_w + (uint32_t)(2 * c0);
    switch (w->kernel) {
    case NPU_CONV_FWD: r.out += (uint32_t)(4 * f0) + (uint32_t)col * w->pitch_out; break;
    case NPU_CONV_DX: r.out += (uint32_t)(4 * c0) + (uint32_t)col * w->pitch_out; break;
    default: r.out += (uint32_t)f0 * w->pitch_out + (uint32_t)(4 * c0); break;
    }
    return r;
}

/* Tokens pushed and not popped on each channel (l2e, e2l, e2s, s2e) by instructions [from, n)
 * of a program: the last bands' frees have no consumer in their part. */
static void leftover_tokens(const npu_prog_t *p, size_t from, long left[4])
{
    memset(left, 0, 4 * sizeof *left);
    for (size_t i = from; i < p->n; i++) {
        unsigned op = npu_insn_op(&p->insn[i]), t = npu_insn_tokens(&p->insn[i]);
        int q = op == NPU_OP_LOAD || op == NPU_OP_FILL || op == NPU_OP_SYNC_L ? 0
                : op == NPU_OP_STORE || op == NPU_OP_SYNC_S                   ? 2
                                                                              : 1;
        long *prev = q ? &left[2 * q - 2] : NULL, *next = q < 2 ? &left[2 * q] : NULL;
        /* queue q's previous channel pair is (l2e, e2l) for EXEC, (e2s, s2e) for STORE */
        if (prev && (t & NPU_TOK_POP_PREV))
            prev[0]--;
        if (prev && (t & NPU_TOK_PUSH_PREV))
            prev[1]++;
        if (next && (t & NPU_TOK_PUSH_NEXT))
            next[0]++;
        if (next && (t & NPU_TOK_POP_NEXT))
            next[1]--;
    }
}

static void sync_n(npu_pb_t *b, npu_prog_t *out, unsigned op, long count, unsigned tok)
{
    npu_insn_t in;
    for (long k = 0; k < count; k++)
        npu_pb_put(b, out, npu_enc_sync(&in, op), &in, tok);
}

/* Between parts: the previous part's unconsumed tokens are popped, then every STORE completes
 * (SYNC_S pushes s2e after them) before EXEC (SYNC_E: pops it, pushes e2l) and LOAD (SYNC_L: pops
 * that) go on, so the next part's loads, waves and drains find every buffer free and its partial
 * sums in DRAM. Tokens are counted over the part (from), so each channel is balanced after it. */
static void barrier(npu_pb_t *b, npu_prog_t *out, size_t from)
{
    long left[4]; /* l2e, e2l, e2s, s2e */
    leftover_tokens(out, from, left);
    sync_n(b, out, NPU_OP_SYNC_E, left[0], NPU_TOK_POP_PREV);
    sync_n(b, out, NPU_OP_SYNC_S, left[2], NPU_TOK_POP_PREV);
    sync_n(b, out, NPU_OP_SYNC_S, 1, NPU_TOK_PUSH_PREV);
    sync_n(b, out, NPU_OP_SYNC_E, left[3], NPU_TOK_POP_NEXT);
    sync_n(b, out, NPU_OP_SYNC_E, 1, NPU_TOK_POP_NEXT | NPU_TOK_PUSH_PREV);
    sync_n(b, out, NPU_OP_SYNC_L, left[1] + 1, NPU_TOK_POP_NEXT);
}

int npu_conv_split_res_ok(const npu_conv_split_t *s, int input, unsigned stride)
{
    const npu_conv_plan_t *p = &s->part[0];
    int one = p->kernel == NPU_CONV_FWD && s->parts == 1 && !p->acc &&
              (input ? p->dwx == p->c.W && p->PL == p->P : p->dwo == p->OW);
    return one && stride >= (input ? (unsigned)p->cw : p->pout);
}

/* Resident rows for split s (npu_conv_split_res_ok) at or above the SPM its plan uses. 0, or -1
 * with the reason. */
static int res_rows_ok(const npu_cfg_t *cfg, const npu_conv_split_t *s, int input, unsigned spm, unsigned stride,
                       char *msg, size_t n)
{
    if (!npu_conv_split_res_ok(s, input, stride) || spm < (unsigned)npu_cfg_spm_words(cfg)) {
        snprintf(msg, n, "resident %s rows at word %u, %u words apart: a forward of one part (%d parts), "
                 "rows at or above the plan's %d SPM words and at least a pixel's %u words apart",
                 input ? "input" : "output", spm, stride, s->parts, npu_cfg_spm_words(cfg),
                 input ? (unsigned)s->part[0].cw : s->part[0].pout);
        return -1;
    }
    return 0;
}

int npu_conv_split_res_out(const npu_cfg_t *cfg, npu_conv_split_t *s, unsigned spm, unsigned stride, char *msg,
                           size_t n)
{
    npu_conv_plan_t *p = &s->part[0];
    if (res_rows_ok(cfg, s, 0, spm, stride, msg, n))
        return -1;
    p->res_out = 1;
    p->spm_out = spm;
    p->res_stride = stride;
    s->plan_wr[NPU_TAG_Y] = s->comp_wr[NPU_TAG_Y] = 0; /* nothing of Y reaches DRAM */
    return 0;
}

int npu_conv_split_res_in(const npu_cfg_t *cfg, npu_conv_split_t *s, unsigned spm, unsigned stride, char *msg,
                          size_t n)
{
    npu_conv_plan_t *p = &s->part[0];
    if (res_rows_ok(cfg, s, 1, spm, stride, msg, n))
        return -1;
    p->res_in = 1;
    p->spm_in = spm;
    p->res_in_stride = stride;
    s->plan_rd[NPU_TAG_X] = s->comp_rd[NPU_TAG_X] = 0; /* nothing of X comes from DRAM */
    return 0;
}

int npu_conv_split_emit(const npu_cfg_t *cfg, const npu_conv_split_t *s, const npu_conv_addrs_t *a,
                        npu_prog_t *out, char *msg, size_t n)
{
    npu_pb_t b;
    char why[256];
    npu_pb_init(&b, cfg);
    for (int i = 0; i < s->parts; i++) {
        size_t from = out->n;
        npu_conv_addrs_t ai = npu_conv_split_addrs(s, i, a);
        if (npu_conv_emit(cfg, &s->part[i], &ai, out, why, sizeof why) != 0) {
            if (s->parts > 1)
                snprintf(msg, n, "part %d of %d: %s", i, s->parts, why);
            else
                snprintf(msg, n, "%s", why);
            return -1;
        }
        if (i + 1 < s->parts)
            barrier(&b, out, from);
    }
    return npu_pb_finish(&b, msg, n);
}
