/* prog_expect.c - the expected-counter model of a program; see prog_expect.h. */
#include "prog/prog_expect.h"

#include <string.h>

/* The beat geometry of the config, shared by the per-instruction rules below. */
typedef struct geom {
    uint64_t B, F, S; /* beat bytes, 2S, S */
    uint64_t mb;      /* the longest burst in beats */
} geom_t;

static uint64_t umin(uint64_t a, uint64_t b) { return a < b ? a : b; }
static uint64_t beats_of(const npu_fields_t *f, const geom_t *g) { return (f->row_bytes + g->B - 1) / g->B; }

/* Bursts for `beats` consecutive beats from addr: at most mb beats, never crossing 4 KiB. */
static uint64_t bursts_of(uint64_t addr, uint64_t beats, uint64_t B, uint64_t mb)
{
    uint64_t n = 0;
    while (beats) {
        uint64_t to4k = (4096 - addr % 4096) / B, len = beats < mb ? beats : mb;
        if (to4k && len > to4k)
            len = to4k;
        addr += len * B;
        beats -= len;
        n++;
    }
    return n;
}

static uint64_t row_bursts(const npu_fields_t *f, uint64_t beats, uint64_t B, uint64_t mb)
{
    uint64_t n = 0;
    for (uint64_t r = 0; r < f->rows; r++)
        n += bursts_of(f->dram_addr + r * f->dram_stride * B, beats, B, mb);
    return n;
}

/* npu_dma_load's transposed read: per 2S-row block, groups of <= 2 beats (column blocks); one
 * burst run per block when the group's rows are adjacent (dram_stride = the group's beats), else
 * one per row. */
static uint64_t transposed_bursts(const npu_fields_t *f, uint64_t beats, const geom_t *g)
{
    uint64_t n = 0;
    for (uint64_t r0 = 0; r0 < f->rows; r0 += g->F) {
        uint64_t nr = umin(f->rows - r0, g->F);
        for (uint64_t cb = 0; cb < beats; cb += 2) {
            uint64_t w = umin(beats - cb, 2);
            if (f->dram_stride == w)
                n += bursts_of(f->dram_addr + (r0 * w + cb) * g->B, nr * w, g->B, g->mb);
            else
                for (uint64_t r = r0; r < r0 + nr; r++)
                    n += bursts_of(f->dram_addr + (r * f->dram_stride + cb) * g->B, w, g->B, g->mb);
        }
    }
    return n;
}

static void expect_load(const npu_fields_t *f, const geom_t *g, npu_prog_expect_t *e)
{
    uint64_t beats = beats_of(f, g);
    e->insn_load++;
    e->rd_bytes[f->tag] += (uint64_t)f->rows * beats * g->B;
    if (f->transpose) {
        e->rd_bursts += transposed_bursts(f, beats, g);
        e->spm_wr_words += (uint64_t)(f->row_bytes / 2) * ((f->rows + g->F - 1) / g->F);
    } else {
        e->rd_bursts += row_bursts(f, beats, g->B, g->mb);
        e->spm_wr_words += (uint64_t)f->rows * beats;
    }
}

static void expect_store(const npu_fields_t *f, const geom_t *g, npu_prog_expect_t *e)
{
    uint64_t beats = beats_of(f, g);
    e->insn_store++;
    e->wr_bytes[f->tag] += (uint64_t)f->rows * beats * g->B;
    e->wr_bursts += row_bursts(f, beats, g->B, g->mb);
    e->spm_rd_words += (uint64_t)f->rows * beats;
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

static void expect_drain(const npu_fields_t *f, npu_prog_expect_t *e)
{
    uint64_t words = (uint64_t)f->rows + (f->split_rows ? f->hi_rows : f->rows);
    e->insn_exec++;
    e->spm_wr_words += words;
    if (f->acc) /* an accumulating DRAIN reads every word it writes */
        e->spm_rd_words += words;
    e->obuf_drain_rows += f->rows;
}

static void expect_insn(const npu_fields_t *f, const geom_t *g, npu_prog_expect_t *e)
{
    switch (f->op) {
    case NPU_OP_LOAD: expect_load(f, g, e); break;
    case NPU_OP_STORE: expect_store(f, g, e); break;
    case NPU_OP_FILL:
        e->insn_load++;
        e->fill_words += (uint64_t)f->rows * beats_of(f, g);
        e->spm_wr_words += (uint64_t)f->rows * beats_of(f, g);
        break;
    case NPU_OP_LDW:
        e->insn_exec++;
        e->spm_rd_words += f->k - umin(f->k_lo, f->k); /* rows < k_lo are not read */
        break;
    case NPU_OP_WAVE: expect_wave(f, g, e); break;
    case NPU_OP_DRAIN: expect_drain(f, e); break;
    case NPU_OP_SYNC_L: e->insn_load++; break;
    case NPU_OP_SYNC_E: e->insn_exec++; break;
    case NPU_OP_SYNC_S: e->insn_store++; break;
    default: break;
    }
}

void npu_prog_expect(const npu_cfg_t *cfg, const npu_insn_t *prog, size_t n, npu_prog_expect_t *e)
{
    geom_t g;
    g.B = (uint64_t)npu_cfg_beat(cfg);
    g.F = (uint64_t)npu_cfg_f(cfg);
    g.S = (uint64_t)cfg->s;
    g.mb = cfg->max_burst_beats > 0 ? (uint64_t)cfg->max_burst_beats : 1;
    memset(e, 0, sizeof *e);
    e->rd_bytes[NPU_TAG_PROG] = (n * NPU_INSN_BYTES + g.B - 1) / g.B * g.B;
    for (size_t i = 0; i < n; i++) {
        npu_fields_t f;
        if (npu_decode(&prog[i], &f) == 0)
            expect_insn(&f, &g, e);
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
            x->noc_v_flits += vsplit ? 2 * S : S;
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
