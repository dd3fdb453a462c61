/* conv_unit.c - the primitives the convolution units are built with; see conv_unit.h. */
#include "compile/conv/conv_unit.h"

#include <stdint.h>
#include <string.h>

static int imin(int a, int b) { return a < b ? a : b; }

static unsigned mode_of(const npu_cx_t *x, int k) { return k > x->S ? NPU_MODE_FW : NPU_MODE_HSW; }

unsigned npu_cx_mode(const npu_cx_t *x, int k) { return mode_of(x, k); }

/* FILL `rows` rows of `words` words at spm + r*stride (row_bytes is 16 bits: long rows are
 * cut into column chunks; contiguous rows become one long row). */
void npu_cx_fill(npu_cx_t *x, npu_prog_t *l, unsigned rows, unsigned spm, unsigned stride, unsigned words)
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
 * dram + r*dpitch bytes to SPM spm + r*spitch words, pixels ppitch bytes apart in DRAM, each
 * pixel's rowb bytes of channels (the rest of its words zero). A pixel pitch of whole words (a
 * padded layout) loads each image row as one descriptor row of whole words; pixels contiguous
 * across the rows (dense, rows of the whole width) are one descriptor of nrows * pix rows; else
 * one descriptor per image row. */
void npu_cx_load_rows(npu_cx_t *x, npu_prog_t *l, unsigned tag, unsigned nrows, uint64_t dram,
                      unsigned dpitch, unsigned ppitch, unsigned rowb, unsigned spm, unsigned spitch, unsigned pix,
                      unsigned pw)
{
    npu_insn_t in;
    uint64_t bytes = (uint64_t)pix * pw * x->B;
    npu_conv_rows_t rs = {nrows, pix, pw, rowb, spitch, dpitch, ppitch};
    int kind = npu_conv_rows_kind(&rs, x->B);
    if (!nrows || !pix)
        return;
    if (kind == NPU_CONV_ROWS_WHOLE) {
        npu_pb_put(&x->b, l, npu_enc_load(&in, tag, 0, nrows, npu_pb_dram(&x->b, dram), spm, nrows > 1 ? spitch : 0,
                               (unsigned)bytes, nrows > 1 ? dpitch : 0), &in, 0);
        return;
    }
    if (kind == NPU_CONV_ROWS_PIXELS) {
        npu_pb_put(&x->b, l, npu_enc_load(&in, tag, 0, nrows * pix, npu_pb_dram(&x->b, dram), spm, pw, rowb, ppitch),
                   &in, 0);
        return;
    }
    for (unsigned r = 0; r < nrows; r++)
        npu_pb_put(&x->b, l, npu_enc_load(&in, tag, 0, pix, npu_pb_dram(&x->b, dram + (uint64_t)r * dpitch),
                               spm + r * spitch, pw, rowb, ppitch), &in, 0);
}

/* LDW into the next weight bank; returns the bank. */
unsigned npu_cx_ldw(npu_cx_t *x, npu_prog_t *l, unsigned spm, unsigned stride, int k, int klo, int n)
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
void npu_cx_wave(npu_cx_t *x, npu_prog_t *l, unsigned bank, int m, unsigned spm, unsigned stride,
                 int k, int klo, int n, unsigned obuf)
{
    npu_cx_wave_mode(x, l, bank, mode_of(x, k), m, spm, stride, k, klo, n, obuf);
}

void npu_cx_wave_mode(npu_cx_t *x, npu_prog_t *l, unsigned bank, unsigned mode, int m, unsigned spm,
                      unsigned stride, int k, int klo, int n, unsigned obuf)
{
    int i = 0;
    while (i < m) {
        int j = i + 1, acc = x->cov[obuf + (unsigned)i];
        npu_insn_t in;
        while (j < m && x->cov[obuf + (unsigned)j] == acc)
            j++;
        int rc = npu_enc_wave(&in, bank, mode, acc, (unsigned)(j - i),
                              spm + (unsigned)i * stride, stride, (unsigned)k, (unsigned)n,
                              obuf + (unsigned)i);
        if (rc == 0 && klo)
            rc = npu_insn_k_lo(&in, (unsigned)klo);
        npu_pb_put(&x->b, l, rc, &in, 0);
        memset(x->cov + obuf + i, 1, (size_t)(j - i));
        i = j;
    }
}

/* LOAD_SPMs of n pixels of X from resident row r0 (p->res_in) to SPM word d, cw words a pixel:
 * what a LOAD of them from DRAM writes (2C bytes a pixel, the rest of its words zero); the rows
 * field is 14 bits. */
static void load_spm_px(npu_cx_t *x, npu_prog_t *l, uint64_t r0, unsigned n, unsigned d)
{
    const npu_conv_plan_t *p = x->p;
    unsigned cw = (unsigned)p->cw, rowb = 2u * (unsigned)p->c.C;
    npu_insn_t in;
    for (unsigned i = 0; i < n;) {
        unsigned m = n - i < 16383u ? n - i : 16383u;
        npu_pb_put(&x->b, l, npu_enc_load_spm(&in, NPU_TAG_X, 0, m, p->spm_in + (unsigned)(r0 + i) * p->res_in_stride,
                                              p->res_in_stride, d + i * cw, cw, rowb), &in, 0);
        i += m;
    }
}

/* Image rows [row, row + nr) of X into the plane at spm (rows rw words apart, their pixels P
 * words in): from DRAM (LOAD), or from its resident rows (p->res_in: LOAD_SPM, one run when the
 * plane has no border columns). */
static void load_x_rows(npu_cx_t *x, npu_prog_t *l, uint64_t row, unsigned nr, unsigned spm, unsigned rw, unsigned P)
{
    const npu_conv_plan_t *p = x->p;
    const npu_conv_t *c = &p->c;
    unsigned cw = (unsigned)p->cw, W = (unsigned)c->W;
    if (!p->res_in) {
        npu_cx_load_rows(x, l, NPU_TAG_X, nr, x->a->x + row * (uint64_t)p->dwx * p->pitch_x,
                         (unsigned)p->dwx * p->pitch_x, p->pitch_x, 2u * (unsigned)c->C, spm + P * cw, rw, W, cw);
    } else if (rw == W * cw) {
        load_spm_px(x, l, row * W, nr * W, spm);
    } else {
        for (unsigned r = 0; r < nr; r++)
            load_spm_px(x, l, (row + r) * W, W, spm + r * rw + P * cw);
    }
}

/* Rows [un->i0, un->i1) of the X plane padded by P rows (fwd: p; dW zeropad: p; dW ecoflow: 0)
 * and PL / PW - PL - W columns (P, a fwd column range its own) into SPM base: the rows some output
 * row reads, interior rows by LOAD (from its resident rows: LOAD_SPM) and their border columns by
 * FILL, padding rows by FILL. */
void npu_cx_load_plane_rows(npu_cx_t *x, npu_prog_t *l, const npu_conv_unit_t *un, unsigned base, int lo, int hi)
{
    const npu_conv_plan_t *p = x->p;
    const npu_conv_t *c = &p->c;
    unsigned cw = (unsigned)p->cw, rw = (unsigned)p->PW * cw, P = (unsigned)p->PL;
    unsigned PR = (unsigned)(p->PW - p->PL - c->W);
    int pr = lo, q, in;
    while (npu_conv_plane_run(p, un, &pr, hi, &q, &in)) {
        unsigned nr = (unsigned)(q - pr), spm = base + (unsigned)(pr - un->i0) * rw;
        if (!in) {
            npu_cx_fill(x, l, nr, spm, rw, rw);
        } else {
            if (P)
                npu_cx_fill(x, l, nr, spm, rw, P * cw);
            if (PR)
                npu_cx_fill(x, l, nr, spm + (P + (unsigned)c->W) * cw, rw, PR * cw);
            load_x_rows(x, l, (uint64_t)un->b * (uint64_t)c->H + (uint64_t)(pr - p->P), nr, spm, rw, P);
        }
        pr = q;
    }
}

void npu_cx_load_plane(npu_cx_t *x, npu_prog_t *l, const npu_conv_unit_t *un, unsigned base)
{
    npu_cx_load_plane_rows(x, l, un, base, un->i0, un->i1);
}

/* The words of one row of a flat run: the largest whole number of DRAM beats a row_bytes field
 * holds, so the rows' descriptors meet at beat boundaries (a cut inside a beat moves it twice
 * at BEAT_WORDS > 1; conv_bytes.c counts a flat run as one). */
static unsigned flat_words(const npu_cx_t *x)
{
    return 65535u / x->p->DB * x->p->DB / x->B;
}

/* A flat run of `bytes` from an address inside a beat, longer than one row: a first row up to the
 * beat boundary (0 when none), so the later rows' cuts fall on beat boundaries too. */
static uint64_t flat_head(const npu_cx_t *x, uint64_t dram, uint64_t bytes)
{
    uint64_t DB = x->p->DB, head = dram % DB ? DB - dram % DB : 0;
    return bytes > (uint64_t)flat_words(x) * x->B && head < bytes ? head : 0;
}

/* LOAD of `words` contiguous words from DRAM dram to SPM spm: rows of the largest whole number
 * of words a row_bytes field holds, each a run of long bursts (one descriptor row of a few beats
 * each is one short burst per row: at medium the dX weights' 576 two-beat rows took 3.9k cycles,
 * a flat run 1.2k). */
void npu_cx_load_flat(npu_cx_t *x, npu_prog_t *l, unsigned tag, uint64_t dram, unsigned spm, uint64_t words)
{
    unsigned cw = flat_words(x);
    uint64_t rows, rest, head = flat_head(x, dram, words * x->B) / x->B;
    npu_insn_t in;
    if (head) {
        npu_pb_put(&x->b, l, npu_enc_load(&in, tag, 0, 1, npu_pb_dram(&x->b, dram), spm, 0, (unsigned)(head * x->B), 0), &in, 0);
        dram += head * x->B;
        spm += (unsigned)head;
        words -= head;
    }
    rows = words / cw;
    rest = words % cw;
    while (rows) {
        unsigned nr = rows > 65535u ? 65535u : (unsigned)rows;
        npu_pb_put(&x->b, l, npu_enc_load(&in, tag, 0, nr, npu_pb_dram(&x->b, dram), spm, cw, cw * x->B, cw * x->B), &in, 0);
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

/* The word where a whole flat weight load is cut before tap t (npu_cx_resident_weights loads it
 * in two parts): the first DRAM beat boundary at or after the tap, so the two parts never meet
 * inside a beat (each would move it: BEAT_WORDS > 1) and the plan's one flat run (conv_bytes.c
 * w_bytes) is exact; the first part then also brings the start of tap t, which is harmless. */
static uint64_t flat_cut(const npu_cx_t *x, int t, uint64_t tw)
{
    const npu_conv_plan_t *p = x->p;
    uint64_t end = (uint64_t)p->T * tw, a = x->a->w + (uint64_t)t * tw * x->B, DB = p->DB;
    uint64_t w = t == 0 ? 0 : ((a + DB - 1) / DB * DB - x->a->w) / x->B;
    return w < end ? w : end;
}

/* Taps [t0, t1) of the weights, resident for the whole program (unit 0). fwd: per tap a
 * transposed LOAD, SPM row c of tap t holds the F filters (B tile rows c, lanes f); dX: Wt as
 * stored, SPM row (t, f) holds the C channels (B tile rows f, lanes c), one flat run when the
 * rows are whole words; depthwise: the diagonal blocks, one flat run. */
static void load_weights(npu_cx_t *x, npu_prog_t *l, int t0, int t1)
{
    const npu_conv_plan_t *p = x->p;
    const npu_conv_t *c = &p->c;
    npu_insn_t in;
    /* DRAM: dtap_rows rows of pitch_w bytes per tap (a part of a split layer reads its own rows of a
     * larger tensor: conv_split.h) */
    uint64_t tap_bytes = (uint64_t)p->dtap_rows * p->pitch_w, tw = tap_words(p);
    int whole = p->pitch_w == p->pw * x->B && p->dtap_rows == (c->depthwise ? (unsigned)(p->cw * p->L) : (unsigned)c->F);
    if (t0 >= t1)
        return;
    if (c->depthwise || (p->kernel == NPU_CONV_DX && 2u * (unsigned)c->C == p->pw * x->B && p->pitch_w == p->pw * x->B)) {
        /* dense rows: one flat run (the whole tensor, cut at beats: flat_cut; or per tap for a part) */
        if (whole) {
            uint64_t w0 = flat_cut(x, t0, tw), w1 = flat_cut(x, t1, tw);
            if (w1 > w0)
                npu_cx_load_flat(x, l, NPU_TAG_W, x->a->w + w0 * x->B, p->w_base + (unsigned)w0, w1 - w0);
            return;
        }
        for (int t = t0; t < t1; t++)
            npu_cx_load_flat(x, l, NPU_TAG_W, x->a->w + (uint64_t)t * tap_bytes, p->w_base + (unsigned)(t * (int)tw), tw);
        return;
    }
    if (p->kernel == NPU_CONV_FWD) {
        for (int t = t0; t < t1; t++)
            npu_pb_put(&x->b, l, npu_enc_load(&in, NPU_TAG_W, 1, (unsigned)c->F, npu_pb_dram(&x->b, x->a->w + (uint64_t)t * tap_bytes),
                                   p->w_base + (unsigned)(t * c->C * p->fw), (unsigned)p->fw,
                                   2u * (unsigned)c->C, p->pitch_w), &in, 0);
        return;
    }
    for (int t = t0; t < t1;) { /* rows field is 16 bits; a part's taps are not contiguous */
        int nt = whole ? imin(t1 - t, 65535 / c->F) : 1;
        npu_pb_put(&x->b, l, npu_enc_load(&in, NPU_TAG_W, 0, (unsigned)(nt * c->F), npu_pb_dram(&x->b, x->a->w + (uint64_t)t * tap_bytes),
                               p->w_base + (unsigned)(t * c->F * p->cw), (unsigned)p->cw, 2u * (unsigned)c->C,
                               p->pitch_w), &in, 0);
        t += nt;
    }
}

/* fwd, dX: notes where unit 0's first LDW of tap t is (npu_cx_resident_weights splits its load there). */
void npu_cx_mark_tap(npu_cx_t *x, const npu_conv_unit_t *un, const npu_cx_unit_t *up, int t)
{
    if (un->u == 0 && x->tap_c[t] == SIZE_MAX)
        x->tap_c[t] = up->C.n;
}

/* Unit 0's weights, in two parts: taps [0, ts) ahead of the band's input in L, taps [ts, T) in L2,
 * which C pops at the first LDW of tap ts (conv_emit.c). The whole set ahead of the first wave was
 * exposed (medium, CONV3 dX: 1.2k cycles of a 32k program even as one flat run); ts is the first
 * tap whose earlier taps' waves cover the rest of the load at the DRAM's rate (16-beat bursts
 * plus their cost: about 5/4 cycles per beat). */
void npu_cx_resident_weights(npu_cx_t *x, npu_cx_unit_t *up)
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
void npu_cx_drain_blk(npu_cx_t *x, npu_prog_t *l, unsigned rows, unsigned obuf, unsigned spm,
                      unsigned stride, int blk, int chans)
{
    npu_insn_t in;
    int rc = chans - blk * x->L <= x->S /* lanes 0..S-1 only */
                 ? npu_enc_drain_split(&in, rows, obuf, spm, stride, rows, 0)
                 : npu_enc_drain(&in, rows, obuf, spm, stride);
    if (rc == 0 && x->p->acc) /* a later part of a split reduction adds to the partial sums */
        rc = npu_insn_drain_acc(&in);
    npu_pb_put(&x->b, l, rc, &in, 0);
}

/* STORE of `bytes` contiguous bytes from SPM word spm to DRAM dram (rows of the largest whole
 * number of words a row_bytes field holds). */
void npu_cx_store_flat(npu_cx_t *x, npu_prog_t *l, unsigned tag, unsigned spm, uint64_t dram, uint64_t bytes)
{
    unsigned cw = flat_words(x), chunk = cw * x->B;
    uint64_t rows, rest, head = flat_head(x, dram, bytes);
    npu_insn_t in;
    if (head) {
        npu_pb_put(&x->b, l, npu_enc_store(&in, tag, 1, npu_pb_dram(&x->b, dram), spm, 0, (unsigned)head, 0), &in, 0);
        dram += head;
        spm += (unsigned)(head / x->B);
        bytes -= head;
    }
    rows = bytes / chunk;
    rest = bytes % chunk;
    while (rows) {
        unsigned nr = rows > 65535u ? 65535u : (unsigned)rows;
        npu_pb_put(&x->b, l, npu_enc_store(&in, tag, nr, npu_pb_dram(&x->b, dram), spm, cw, chunk, cw * x->B), &in, 0);
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
int npu_cx_band(const npu_cx_t *x, const npu_conv_unit_t *un)
{
    return x->p->kernel == NPU_CONV_DW ? un->u : un->b * x->p->nbands + un->band;
}

unsigned npu_cx_in(const npu_cx_t *x, const npu_conv_unit_t *un)
{
    return x->p->in_base[npu_cx_band(x, un) % 2];
}

unsigned npu_cx_tile(const npu_cx_t *x, const npu_conv_unit_t *un)
{
    return x->p->out_base[npu_cx_band(x, un) % 2];
}

/* A band's dense tile of `rows` pixels from output pixel pix0 (image rows of the plan's row
 * length) to DRAM (store) or from it: one run when the DRAM rows are as long (dwo), else a run
 * per row (a part over a range of output columns). */
static void out_rows(npu_cx_t *x, npu_prog_t *l, int store, unsigned tag, unsigned spm, unsigned rows,
                     uint64_t pix0)
{
    const npu_conv_plan_t *p = x->p;
    unsigned len = (unsigned)(p->kernel == NPU_CONV_FWD ? p->OW : p->c.W);
    unsigned rowb = 4u * (unsigned)(p->kernel == NPU_CONV_FWD ? p->c.F : p->c.C);
    if ((unsigned)p->dwo == len) {
        npu_cx_move_px(x, l, store, tag, spm, x->a->out + pix0 * p->pitch_out, rows, p->pout, rowb, p->pitch_out);
        return;
    }
    for (unsigned r = 0; r < rows / len; r++)
        npu_cx_move_px(x, l, store, tag, spm + r * len * p->pout,
                       x->a->out + (pix0 / len + r) * (uint64_t)p->dwo * p->pitch_out, len, p->pout, rowb,
                       p->pitch_out);
}

void npu_cx_store_tile(npu_cx_t *x, npu_prog_t *l, unsigned tag, const npu_conv_unit_t *un,
                       unsigned rows, uint64_t pix0)
{
    const npu_conv_plan_t *p = x->p;
    if (un->grp == p->ngroups - 1 && p->res_out) /* no STORE: its tokens (e2s in, s2e out) on a SYNC_S */
        npu_pb_or_sync(&x->b, l, NPU_OP_SYNC_S);
    else if (un->grp == p->ngroups - 1)
        out_rows(x, l, 1, tag, npu_cx_tile(x, un), rows, pix0);
}

/* STORE (store) or LOAD of n rows of pw words, dense in the SPM from spm, DRAM rows dpitch bytes
 * apart from dram: one flat run when dpitch = pw words (a padded layout), else descriptor rows of
 * rowb bytes each (the row's channels: dense rows, dpitch = rowb, are one contiguous run).
 * LOADs bring a split reduction's partial sums for the part's DRAINs to add to (conv_split.h). */
void npu_cx_move_px(npu_cx_t *x, npu_prog_t *l, int store, unsigned tag, unsigned spm, uint64_t dram, uint64_t n,
                    unsigned pw, unsigned rowb, unsigned dpitch)
{
    npu_insn_t in;
    if (dpitch == pw * x->B) {
        if (store)
            npu_cx_store_flat(x, l, tag, spm, dram, n * pw * x->B);
        else
            npu_cx_load_flat(x, l, tag, dram, spm, n * pw);
        return;
    }
    while (n) {
        unsigned nr = n > 65535u ? 65535u : (unsigned)n;
        uint32_t d = npu_pb_dram(&x->b, dram);
        int rc = store ? npu_enc_store(&in, tag, nr, d, spm, pw, rowb, dpitch)
                       : npu_enc_load(&in, tag, 0, nr, d, spm, pw, rowb, dpitch);
        npu_pb_put(&x->b, l, rc, &in, 0);
        spm += nr * pw;
        dram += (uint64_t)nr * dpitch;
        n -= nr;
    }
}

/* A split reduction's later part (p->acc): the band's tile of partial sums (rows pixels from
 * pixel pix0) loaded by its first block group, in FO (conv_emit.h), for the DRAINs to add to. */
void npu_cx_load_partial(npu_cx_t *x, npu_cx_unit_t *up, unsigned tag, const npu_conv_unit_t *un,
                         unsigned rows, uint64_t pix0)
{
    const npu_conv_plan_t *p = x->p;
    if (p->acc && un->grp == 0)
        out_rows(x, &up->FO, 0, tag, npu_cx_tile(x, un), rows, pix0);
}
