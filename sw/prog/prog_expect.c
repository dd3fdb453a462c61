/* prog_expect.c - the expected-counter model of a program; see prog_expect.h. */
#include "prog/prog_expect.h"

#include <string.h>

/* The beat geometry of the config, shared by the per-instruction rules below. */
typedef struct geom {
    uint64_t B, F, S; /* SPM word bytes (4S), 2S, S */
    uint64_t DB;      /* DRAM beat bytes (B * BEAT_WORDS) */
    uint64_t mb;      /* the longest burst in beats */
} geom_t;

static uint64_t umin(uint64_t a, uint64_t b) { return a < b ? a : b; }
static uint64_t words_of(const npu_fields_t *f, const geom_t *g) { return (f->row_bytes + g->B - 1) / g->B; }

npu_dma_count_t npu_dma_run(uint64_t addr, uint64_t bytes, uint64_t B, uint64_t max_burst)
{
    npu_dma_count_t c = {0, 0};
    uint64_t mb = max_burst ? max_burst : 1;
    if (!bytes)
        return c;
    uint64_t beat = addr / B, left = (addr + bytes - 1) / B - beat + 1;
    c.beats = left;
    while (left) { /* greedy from the run's first beat */
        uint64_t to4k = (4096 - beat * B % 4096) / B, len = umin(umin(left, mb), to4k);
        beat += len;
        left -= len;
        c.bursts++;
    }
    return c;
}

static void add(npu_dma_count_t *t, npu_dma_count_t c)
{
    t->beats += c.beats;
    t->bursts += c.bursts;
}

npu_dma_count_t npu_dma_bursts(uint64_t B, uint64_t max_burst, uint64_t dram_addr, uint64_t rows,
                               uint64_t row_bytes, uint64_t dram_stride)
{
    npu_dma_count_t t = {0, 0};
    if (dram_stride == row_bytes) /* rows contiguous: one run */
        return npu_dma_run(dram_addr, rows * row_bytes, B, max_burst);
    for (uint64_t r = 0; r < rows; r++)
        add(&t, npu_dma_run(dram_addr + r * dram_stride, row_bytes, B, max_burst));
    return t;
}

/* The transposed rules' structure is the SPM word (W bytes: a group is two words of each row, a
 * STORE's column block one word of S int32); their runs are counted in DRAM beats (DB bytes). */
static npu_dma_count_t bursts_tr(uint64_t W, uint64_t DB, uint64_t max_burst, uint64_t dram_addr,
                                 uint64_t rows, uint64_t row_bytes, uint64_t dram_stride)
{
    npu_dma_count_t t = {0, 0};
    uint64_t E = W / 2, words = (row_bytes + W - 1) / W;
    for (uint64_t r0 = 0; r0 < rows; r0 += E) {
        uint64_t nr = umin(rows - r0, E);
        for (uint64_t cb = 0; cb < words; cb += 2) {
            uint64_t w = umin(words - cb, 2), gb = umin(row_bytes - cb * W, 2 * W);
            uint64_t a = dram_addr + r0 * dram_stride + cb * W;
            if (dram_stride == gb) /* the sub-rows are contiguous bytes */
                add(&t, npu_dma_run(a, nr * gb, DB, max_burst));
            else if (dram_stride == w * W && dram_addr % W == 0) /* adjacent word-padded sub-rows */
                add(&t, npu_dma_run(a, nr * w * W, DB, max_burst));
            else
                for (uint64_t r = 0; r < nr; r++)
                    add(&t, npu_dma_run(a + r * dram_stride, gb, DB, max_burst));
        }
    }
    return t;
}

static npu_dma_count_t bursts_str(uint64_t W, uint64_t DB, uint64_t max_burst, uint64_t dram_addr,
                                  uint64_t rows, uint64_t row_bytes, uint64_t dram_stride)
{
    npu_dma_count_t t = {0, 0};
    if (row_bytes <= W && dram_stride == row_bytes) /* one column block, rows contiguous */
        return npu_dma_run(dram_addr, rows * row_bytes, DB, max_burst);
    for (uint64_t r = 0; r < rows; r++) /* every sub-row its own run (the order does not count) */
        for (uint64_t cb = 0; cb * W < row_bytes; cb++)
            add(&t, npu_dma_run(dram_addr + r * dram_stride + cb * W, umin(W, row_bytes - cb * W), DB,
                                max_burst));
    return t;
}

npu_dma_count_t npu_dma_bursts_tr(uint64_t B, uint64_t max_burst, uint64_t dram_addr, uint64_t rows,
                                  uint64_t row_bytes, uint64_t dram_stride)
{
    return bursts_tr(B, B, max_burst, dram_addr, rows, row_bytes, dram_stride);
}

npu_dma_count_t npu_dma_bursts_tr_wb(uint64_t W, uint64_t DB, uint64_t max_burst, uint64_t dram_addr,
                                     uint64_t rows, uint64_t row_bytes, uint64_t dram_stride)
{
    return bursts_tr(W, DB, max_burst, dram_addr, rows, row_bytes, dram_stride);
}

npu_dma_count_t npu_dma_bursts_str(uint64_t B, uint64_t max_burst, uint64_t dram_addr, uint64_t rows,
                                   uint64_t row_bytes, uint64_t dram_stride)
{
    return bursts_str(B, B, max_burst, dram_addr, rows, row_bytes, dram_stride);
}

npu_dma_count_t npu_dma_bursts_wb(uint64_t W, uint64_t DB, uint64_t max_burst, const npu_fields_t *f)
{
    if (!f->transpose)
        return npu_dma_bursts(DB, max_burst, f->dram_addr, f->rows, f->row_bytes, f->dram_stride);
    return (f->op == NPU_OP_STORE ? bursts_str : bursts_tr)(W, DB, max_burst, f->dram_addr, f->rows,
                                                             f->row_bytes, f->dram_stride);
}

uint64_t npu_dma_chunks(uint64_t W, unsigned bw, const npu_fields_t *f)
{
    uint64_t wpr = (f->row_bytes + W - 1) / W, rows = f->rows;
    int pairs = bw > 1 && wpr == 1 && (f->op == NPU_OP_FILL || f->dram_stride == f->row_bytes);
    return pairs ? (rows + 1) / 2 : rows * ((wpr + bw - 1) / bw);
}

npu_dma_count_t npu_dma_bursts_of(uint64_t B, uint64_t max_burst, const npu_fields_t *f)
{
    return npu_dma_bursts_wb(B, B, max_burst, f);
}

npu_dma_count_t npu_dma_bursts_cfg(const npu_cfg_t *cfg, const npu_fields_t *f)
{
    return npu_dma_bursts_wb((uint64_t)npu_cfg_word(cfg), (uint64_t)npu_cfg_beat(cfg),
                             cfg->max_burst_beats > 0 ? (uint64_t)cfg->max_burst_beats : 1, f);
}

/* The DMA engine's chunks of instruction f (npu_dma_chunks at the config's words a beat). */
static uint64_t chunks_of(const npu_fields_t *f, const geom_t *g) { return npu_dma_chunks(g->B, (unsigned)(g->DB / g->B), f); }

static uint64_t max2(uint64_t a, uint64_t b) { return a > b ? a : b; }
static uint64_t max3(uint64_t a, uint64_t b, uint64_t c) { return max2(max2(a, b), c); }

static void expect_load(const npu_fields_t *f, const geom_t *g, npu_prog_expect_t *e)
{
    uint64_t words = words_of(f, g);
    npu_dma_count_t c = npu_dma_bursts_wb(g->B, g->DB, g->mb, f);
    uint64_t wr = f->transpose ? (uint64_t)(f->row_bytes / 2) * ((f->rows + g->F - 1) / g->F)
                               : (uint64_t)f->rows * words;
    e->insn_load++;
    e->rd_bytes[f->tag] += c.beats * g->DB;
    e->rd_bursts += c.bursts;
    e->spm_wr_words += wr;
    e->load_busy_min += max3(c.beats, f->transpose ? wr : chunks_of(f, g), 1);
}

/* LOAD_SPM: the LOAD engine reads the source's runs from the SPM, a DRAM beat's BEAT_WORDS words
 * per beat of the runs a LOAD at byte src_addr * B with pitch src_stride * B would read. */
static void expect_load_spm(const npu_fields_t *f, const geom_t *g, npu_prog_expect_t *e)
{
    npu_fields_t d = *f;
    npu_dma_count_t c;
    uint64_t wr = f->transpose ? (uint64_t)(f->row_bytes / 2) * ((f->rows + g->F - 1) / g->F)
                               : (uint64_t)f->rows * words_of(f, g);
    d.dram_addr = (uint32_t)(f->src_addr * g->B);
    d.dram_stride = (unsigned)(f->src_stride * g->B);
    c = npu_dma_bursts_wb(g->B, g->DB, g->mb, &d);
    e->insn_load++;
    e->spm_rd_words += c.beats * (g->DB / g->B);
    e->spm_wr_words += wr;
    e->spm_copy_words += wr;
    e->load_busy_min += max2(c.beats * (g->DB / g->B), 1);
}

static void expect_store(const npu_fields_t *f, const geom_t *g, npu_prog_expect_t *e)
{
    npu_dma_count_t c = npu_dma_bursts_wb(g->B, g->DB, g->mb, f);
    /* transposed: SPM rows c < row_bytes/4 of ceil(rows/S) words */
    uint64_t rd = f->transpose ? (uint64_t)(f->row_bytes / 4) * ((f->rows + g->S - 1) / g->S)
                               : (uint64_t)f->rows * words_of(f, g);
    e->insn_store++;
    e->wr_bytes[f->tag] += c.beats * g->DB;
    e->wr_bursts += c.bursts;
    e->spm_rd_words += rd;
    e->store_busy_min += max3(c.beats, f->transpose ? rd : chunks_of(f, g), 1);
}

/* Per row set, per core it passes through: the core's part of the k x n tile (bcast: each core
 * its own k x n); lanes [k_lo, k) are MACs, k0 of them in the cores' low half (lanes < S). The
 * per-mode counters go by the array's mode. */
static void expect_wave(const npu_fields_t *f, const geom_t *g, npu_prog_expect_t *e)
{
    uint64_t klo = umin(f->k_lo, f->k), kk = f->k - klo;
    uint64_t k0 = umin(f->k, g->S) - umin(klo, g->S), k1 = kk - k0;
    uint64_t n0 = umin(f->n, g->S), n1 = f->n > g->S ? f->n - g->S : 0;
    int vsplit = f->mode == NPU_MODE_FW || f->mode == NPU_MODE_VSW; /* k over 2 cores */
    int hsplit = f->mode == NPU_MODE_FW || f->mode == NPU_MODE_HSW; /* n over 2 cores */
    npu_wave_sets_t ws;
    e->insn_exec++;
    e->spm_rd_words += f->m; /* bcast too: one read per row */
    npu_wave_sets_f(f, &ws);
    e->waves[ws.amode]++;
    for (int j = 0; j < 4; j++) {
        e->rows[ws.amode] += ws.len[j];
        for (int c = 0; c < 4; c++)
            if (ws.cores[j] >> c & 1u) {
                uint64_t mc = (uint64_t)ws.len[j] * (vsplit ? (c >= 2 ? k1 : k0) : kk) *
                              (hsplit ? (c & 1 ? n1 : n0) : f->n);
                e->macs_core[c] += mc;
                e->macs += mc;
            }
    }
}

static void expect_drain(const npu_fields_t *f, const geom_t *g, npu_prog_expect_t *e)
{
    /* a narrow DRAIN writes one word per row, a packed one n lanes per row (whole words, S lanes) */
    uint64_t words = (uint64_t)f->rows + (f->narrow ? 0 : f->split_rows ? f->hi_rows : f->rows);
    if (f->pack) /* two (skinny: four) segments of rows/2 rows */
        words = (f->split_rows ? 4u : 2u) * ((uint64_t)(f->rows / 2) * f->pack / g->S);
    e->insn_exec++;
    e->spm_wr_words += words;
    if (f->acc) /* an accumulating DRAIN reads every word it writes */
        e->spm_rd_words += words;
    e->obuf_drain_rows += f->rows;
}

/* A VEC of len elements per row (docs/isa.md "VEC"); an illegal one (BAD_DESC) counts nothing. */
static uint64_t umax(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* A VEC's geometry (len from its VSET, S lanes per word): element bytes of a and d, whether b is
 * read, SUM, SPM words of a row of a and of d, chunks of 2S elements per row. */
typedef struct vgeom {
    uint64_t ea, ed, nb, sum, wa, wd, nch;
} vgeom_t;

static vgeom_t vec_geom(const npu_fields_t *f, unsigned len, unsigned S)
{
    unsigned v = f->vop;
    vgeom_t g;
    uint64_t B = 4u * (uint64_t)S, F = 2u * (uint64_t)S;
    g.ea = v == NPU_VOP_NARROW || (f->wide && v != NPU_VOP_WIDEN) ? 4 : 2;
    g.ed = v == NPU_VOP_WIDEN || (f->wide && v != NPU_VOP_NARROW) ? 4 : 2;
    g.nb = NPU_VOP_READS_B(v);
    g.sum = v == NPU_VOP_SUM;
    g.wa = (len * g.ea + B - 1) / B;
    g.wd = (len * g.ed + B - 1) / B;
    g.nch = (len + F - 1) / F;
    return g;
}

int npu_vec_serial(const npu_fields_t *f, unsigned len, unsigned S)
{
    vgeom_t g = vec_geom(f, len, S);
    uint64_t rm1 = f->rows ? f->rows - 1u : 0;
    uint64_t d0 = f->d_addr, d1 = d0 + (g.sum ? 0 : rm1 * f->d_stride) + g.wd - 1;
    for (unsigned x = 0; x < 1 + g.nb; x++) {
        uint64_t a0 = x ? f->b_addr : f->a_addr, st = x ? f->b_stride : f->a_stride;
        uint64_t a1 = a0 + rm1 * st + g.wa - 1;
        int inplace = !g.sum && g.ea == g.ed && a0 == d0 && st == f->d_stride && (f->rows == 1 || st >= g.wa);
        if (!(d1 < a0 || a1 < d0) && !inplace)
            return 1;
    }
    return 0;
}

uint64_t npu_vec_busy(const npu_fields_t *f, unsigned len, unsigned S)
{
    vgeom_t g = vec_geom(f, len, S);
    uint64_t rows = f->rows, nch = g.nch, sum = g.sum;
    if (!rows || !len)
        return 0;
    if (npu_vec_serial(f, len, S)) /* per row and chunk its reads + 3 + its writes */
        return sum ? rows * (g.wa + 3 * nch) + g.wd : rows * (g.wa * (1 + g.nb) + 3 * nch + g.wd);
    /* Pipelined: a chunk's reads R (a's words of the chunk, twice with b), its writes W (SUM:
     * only a column's last row writes); full chunks Rf, Wf, a row's last Rl, Wl (one 32-bit word
     * fewer when the row's words are odd). Its last read comes max(R, W of the one before)
     * after the previous chunk's last; the VEC ends 3 + W after the last chunk's last read. */
    uint64_t nr = 1 + (sum ? 0 : g.nb);
    uint64_t Rf = g.ea / 2 * nr, Wf = g.ed / 2;
    uint64_t Rl = (g.wa - (nch - 1) * (g.ea / 2)) * nr, Wl = g.wd - (nch - 1) * (g.ed / 2);
    uint64_t inner = nch < 2 ? 0 : (nch - 2) * umax(Wf, Rf) + umax(Wf, Rl); /* chunk to chunk */
    uint64_t first = nch < 2 ? Rl : Rf;
    if (sum) /* columns of rows tokens: R each between rows, the column's writes between columns */
        return first + (rows - 1) * ((nch - 1) * Rf + Rl) + inner + 3 + Wl;
    return first + rows * inner + (rows - 1) * umax(Wl, first) + 3 + Wl;
}

static void expect_vec(const npu_fields_t *f, const geom_t *g, unsigned len, npu_prog_expect_t *e)
{
    unsigned v = f->vop;
    if (v >= NPU_NUM_VOPS || !f->rows || !len || (f->wide && !NPU_VOP_HAS_WIDE(v)))
        return;
    vgeom_t vg = vec_geom(f, len, (unsigned)g->S);
    uint64_t rd = f->rows * vg.wa * (1 + vg.nb), wr = (vg.sum ? 1 : f->rows) * vg.wd;
    e->insn_exec++;
    e->spm_rd_words += rd;
    e->spm_wr_words += wr;
    e->vec_rd_words += rd;
    e->vec_wr_words += wr;
    e->vec_busy += npu_vec_busy(f, len, (unsigned)g->S);
}

static void expect_insn(const npu_fields_t *f, const geom_t *g, npu_prog_expect_t *e)
{
    switch (f->op) {
    case NPU_OP_LOAD: expect_load(f, g, e); break;
    case NPU_OP_STORE: expect_store(f, g, e); break;
    case NPU_OP_LOAD_SPM: expect_load_spm(f, g, e); break;
    case NPU_OP_FILL:
        e->insn_load++;
        e->load_busy_min += max2(chunks_of(f, g), 1);
        e->fill_words += (uint64_t)f->rows * words_of(f, g);
        e->spm_wr_words += (uint64_t)f->rows * words_of(f, g);
        break;
    case NPU_OP_LDW:
        e->insn_exec++;
        e->spm_rd_words += f->k - umin(f->k_lo, f->k); /* rows < k_lo are not read */
        break;
    case NPU_OP_WAVE: expect_wave(f, g, e); break;
    case NPU_OP_DRAIN: expect_drain(f, g, e); break;
    case NPU_OP_SYNC_L: e->insn_load++; break;
    case NPU_OP_SYNC_E: e->insn_exec++; break;
    case NPU_OP_SYNC_S: e->insn_store++; break;
    default: break;
    }
}

void npu_prog_expect(const npu_cfg_t *cfg, const npu_insn_t *prog, size_t n, npu_prog_expect_t *e)
{
    geom_t g;
    g.B = (uint64_t)npu_cfg_word(cfg);
    g.DB = (uint64_t)npu_cfg_beat(cfg);
    g.F = (uint64_t)npu_cfg_f(cfg);
    g.S = (uint64_t)cfg->s;
    g.mb = cfg->max_burst_beats > 0 ? (uint64_t)cfg->max_burst_beats : 1;
    memset(e, 0, sizeof *e);
    e->rd_bytes[NPU_TAG_PROG] = (n * NPU_INSN_BYTES + g.DB - 1) / g.DB * g.DB;
    unsigned vlen = 0; /* the vector unit's len register: zero at start, set by VSET */
    for (size_t i = 0; i < n; i++) {
        npu_fields_t f;
        if (npu_decode(&prog[i], &f) != 0)
            continue;
        if (f.op == NPU_OP_VSET) {
            vlen = f.len;
            e->insn_exec++;
        } else if (f.op == NPU_OP_VEC) {
            expect_vec(&f, &g, vlen, e);
        } else {
            expect_insn(&f, &g, e);
        }
    }
}

void npu_prog_expect_array(const npu_cfg_t *cfg, const npu_insn_t *prog, size_t n,
                           npu_array_expect_t *x)
{
    uint64_t S = (uint64_t)cfg->s;
    memset(x, 0, sizeof *x);
    for (size_t i = 0; i < n; i++) {
        npu_fields_t f;
        npu_wave_sets_t ws;
        unsigned op = npu_insn_op(&prog[i]);
        if ((op != NPU_OP_WAVE && op != NPU_OP_LDW) || npu_decode(&prog[i], &f) != 0 ||
            f.mode >= NPU_NUM_MODES)
            continue;
        if (op == NPU_OP_LDW) {
            unsigned mask = f.core_mask ? f.core_mask : 0xFu;
            int vsplit = !f.core_mask && (f.mode == NPU_MODE_FW || f.mode == NPU_MODE_VSW);
            uint64_t ndel = 0;
            for (unsigned q = 0; q < 4; q++)
                if (mask >> q & 1u) {
                    x->noc_v_link[q] += S; /* its own S rows (of 2S when k is split) */
                    ndel++;
                }
            x->noc_v_flits += vsplit && f.mono ? 2 * S : S; /* a pair flit: rows r and S + r */
            x->noc_deliveries += ndel * S;
            x->lbuf_v_words += ndel * S;
            continue;
        }
        if (npu_wave_sets_f(&f, &ws) < 1)
            continue;
        for (int j = 0; j < 4; j++)
            for (unsigned q = 0; q < 4; q++)
                /* entry cores: in the set, not fed by the bypass from its left neighbour */
                if ((ws.cores[j] >> q & 1u) && !((q & 1u) && (ws.cores[j] >> (q - 1) & 1u))) {
                    x->noc_h_link[q] += ws.len[j];
                    x->noc_deliveries += ws.len[j];
                    x->lbuf_h_words += ws.len[j];
                }
        /* one flit per slot and H channel: FW one row on L; VSW set 0 on L, set 1 on R; HSW
         * sets 0/1 packed on L (bcast: one row, both halves); ISW sets 0/1 on L, 2/3 on R */
        unsigned am = ws.amode;
        x->noc_h_flits += am == NPU_MODE_HSW ? ws.len[0]
                        : am == NPU_MODE_ISW ? ws.len[0] + ws.len[2] : f.m;
        /* sub-arrays: 1 (FW), 2 (VSW, HSW), 4 (ISW), each 4S^2 / parts PEs holding ws.tiles
         * k x n tiles */
        uint64_t parts = am == NPU_MODE_FW ? 1 : am == NPU_MODE_ISW ? 4 : 2;
        x->busy[am] += ws.len[0]; /* lockstep slots = the first (longest) set */
        x->idle_pe_shape += (uint64_t)(ws.len[0] + ws.len[1] + ws.len[2] + ws.len[3]) *
                            (4 * S * S / parts -
                             (uint64_t)ws.tiles * (f.k - (f.k_lo < f.k ? f.k_lo : f.k)) * f.n);
    }
}
