/*
 * npu_funcsim_exec.c - the instruction semantics of the functional NPU model (docs/isa.md; the
 * model as a whole: npu_funcsim.c). An instruction reads its sources when it starts and stages
 * its writes, which npu_funcsim.c applies when it completes (fsim_commit).
 */
#include <stdlib.h>
#include <string.h>

#include "npu_funcsim_int.h"
#include "prog/prog_expect.h"
#include "ref/bf16.h"

/* ---- staged writes -------------------------------------------------------------------- */

static uint8_t *mem_base(npu_sim_t *s, int mem)
{
    switch (mem) {
    case MEM_DRAM: return s->dram;
    case MEM_SPM: return s->spm;
    case MEM_OBUF: return s->obuf;
    default: return s->wb;
    }
}

/* Reserves a pending write of len bytes and returns its data buffer (zeroed). */
static uint8_t *stage(unit_t *u, int mem, size_t off, size_t len)
{
    if (u->nwr == u->capwr) {
        u->capwr = u->capwr ? 2 * u->capwr : 64;
        u->wr = realloc(u->wr, u->capwr * sizeof *u->wr);
    }
    if (u->npool + len > u->cappool) {
        while (u->npool + len > u->cappool)
            u->cappool = u->cappool ? 2 * u->cappool : 4096;
        u->pool = realloc(u->pool, u->cappool);
    }
    if (!u->wr || !u->pool)
        abort();
    u->wr[u->nwr].mem = mem;
    u->wr[u->nwr].off = off;
    u->wr[u->nwr].len = len;
    u->wr[u->nwr].data = u->npool;
    u->nwr++;
    memset(u->pool + u->npool, 0, len);
    u->npool += len;
    return u->pool + u->npool - len;
}

void fsim_commit(npu_sim_t *s, unit_t *u)
{
    for (size_t i = 0; i < u->nwr; i++)
        memcpy(mem_base(s, u->wr[i].mem) + u->wr[i].off, u->pool + u->wr[i].data, u->wr[i].len);
    u->nwr = 0;
    u->npool = 0;
}

/* ---- DRAM timing ---------------------------------------------------------------------- */

/* One DMA run (docs/memory.md "DMA runs and bursts"): the bytes [addr, addr + bytes) cover the
 * DRAM beats floor(addr/DB) .. floor((addr+bytes-1)/DB), read or written in bursts of at most
 * MAX_BURST_BEATS that never cross 4 KiB. Adds its beats and bursts. */
static void run_of(const npu_sim_t *s, uint64_t addr, uint64_t bytes, uint64_t *beats, uint64_t *bursts)
{
    uint64_t mb = s->cfg.max_burst_beats > 0 ? (uint64_t)s->cfg.max_burst_beats : 1;
    uint64_t a = addr / s->DB * s->DB, n = (addr + bytes - 1) / s->DB - addr / s->DB + 1;
    *beats += n;
    while (n) {
        uint64_t to4k = (4096 - a % 4096) / s->DB, len = n < mb ? n : mb;
        if (len > to4k)
            len = to4k;
        a += len * s->DB;
        n -= len;
        (*bursts)++;
    }
}

/* A normal LOAD's or a STORE's runs: the whole transfer when the rows are contiguous
 * (dram_stride == row_bytes), else one per row. */
static void rows_runs(const npu_sim_t *s, const npu_fields_t *f, uint64_t *beats, uint64_t *bursts)
{
    if (f->dram_stride == f->row_bytes)
        run_of(s, f->dram_addr, (uint64_t)f->rows * f->row_bytes, beats, bursts);
    else
        for (uint64_t r = 0; r < f->rows; r++)
            run_of(s, f->dram_addr + r * f->dram_stride, f->row_bytes, beats, bursts);
}

static uint64_t dma_cost(npu_sim_t *s, uint64_t beats, uint64_t bursts)
{
    double bw = s->t.bytes_per_cycle > 0 ? s->t.bytes_per_cycle : 1.0;
    uint64_t c = s->t.latency + (uint64_t)((double)(beats * s->DB) / bw + 0.999999) +
                 bursts * s->t.burst_cost;
    if (s->t.stall_pct) {
        uint64_t extra = fsim_rnd(s) % (c * s->t.stall_pct / 100 + 1);
        s->stalls += extra;
        c += extra;
    }
    return c;
}

/* ---- instruction semantics (docs/isa.md) ---------------------------------------------- */

/* Checks that rows r < n of `len` units at base + r*stride stay below `limit` (the last row is
 * the highest: strides are unsigned). Returns 0, or -1 with *info = the last unit touched. */
static int range_rows(uint64_t base, uint64_t stride, uint64_t n, uint64_t len, uint64_t limit,
                      uint32_t *info)
{
    uint64_t last = base + (n - 1) * stride + len - 1;
    if (last >= limit) {
        *info = (uint32_t)last;
        return -1;
    }
    return 0;
}

/* OBUF rows [addr, addr+n) must lie inside one half; *info = addr + n (the end row). */
static int obuf_bad(const npu_sim_t *s, uint64_t addr, uint64_t n, uint32_t *info)
{
    uint64_t half = s->obuf_rows2 / 2;
    if (addr + n > s->obuf_rows2 || addr % half + n > half) {
        *info = (uint32_t)(addr + n);
        return 1;
    }
    return 0;
}

/* Each exec_* validates, stages its writes in u, counts, and returns 0 (with *cost) or an error
 * code (with *info). */

/* LOAD/STORE descriptor checks shared by both: BAD_DESC (zero rows or row_bytes, an odd DRAM
 * address, row length or pitch, a transposed STORE's row_bytes not whole int32 elements) then
 * the DRAM range. */
static unsigned dma_check(const npu_sim_t *s, const npu_fields_t *f, int store, uint32_t *info)
{
    if (!f->rows || !f->row_bytes || f->dram_addr % 2 || f->row_bytes % 2 || f->dram_stride % 2 ||
        (store && f->transpose && f->row_bytes % 4)) {
        *info = f->dram_addr;
        return NPU_ERR_BAD_DESC;
    }
    if (range_rows(f->dram_addr, f->dram_stride, f->rows, f->row_bytes, s->dram_bytes, info))
        return NPU_ERR_DRAM_ADDR;
    return 0;
}

/* The transposed LOAD's runs: per 2S-row block and group of <= 2 column blocks (cb, cb + 1: gb
 * bytes of each row from +cb*B), one run when the block's sub-rows are contiguous (dram_stride ==
 * gb) or beat-padded and adjacent (dram_stride == g*B, beat-aligned), else one per sub-row. */
static void tr_runs(const npu_sim_t *s, const npu_fields_t *f, uint64_t *beats, uint64_t *bursts)
{
    uint64_t B = s->B, F = s->F, words = cdiv(f->row_bytes, B);
    for (uint64_t r0 = 0; r0 < f->rows; r0 += F) {
        uint64_t nr = f->rows - r0 < F ? f->rows - r0 : F;
        for (uint64_t cb = 0; cb < words; cb += 2) {
            uint64_t g = words - cb < 2 ? words - cb : 2;
            uint64_t gb = f->row_bytes - cb * B < 2 * B ? f->row_bytes - cb * B : 2 * B;
            uint64_t a = f->dram_addr + r0 * f->dram_stride + cb * B;
            if (f->dram_stride == gb)
                run_of(s, a, nr * gb, beats, bursts);
            else if (f->dram_stride == g * B && f->dram_addr % B == 0)
                run_of(s, a, nr * g * B, beats, bursts);
            else
                for (uint64_t r = 0; r < nr; r++)
                    run_of(s, a + r * f->dram_stride, gb, beats, bursts);
        }
    }
}

/* The SPM words of a LOAD (normal or transposed) whose rows are row_bytes bytes at src + r * pitch
 * (the DRAM, or the SPM for LOAD_SPM): staged; returns the words written. */
static uint64_t load_rows(npu_sim_t *s, unit_t *u, const npu_fields_t *f, const uint8_t *src, uint64_t pitch)
{
    uint64_t B = s->B, F = s->F, words = cdiv(f->row_bytes, B);
    uint64_t cols = f->row_bytes / 2, wpr = cdiv(f->rows, F);
    if (!f->transpose) {
        for (uint64_t r = 0; r < f->rows; r++) { /* lanes past row_bytes: zero (staged zeroed) */
            uint8_t *d = stage(u, MEM_SPM, (f->spm_addr + r * f->spm_stride) * B, words * B);
            memcpy(d, src + r * pitch, f->row_bytes);
        }
        return f->rows * words;
    }
    /* in the RTL's order (2S-row blocks, then columns), so that destinations that overlap
     * (spm_stride < the words per column) end the same */
    for (uint64_t wb = 0; wb < wpr; wb++)
        for (uint64_t c = 0; c < cols; c++) {
            uint8_t *d = stage(u, MEM_SPM, (f->spm_addr + c * f->spm_stride + wb) * B, B);
            for (uint64_t r = wb * F; r < f->rows && r < (wb + 1) * F; r++) {
                const uint8_t *e = src + r * pitch + 2 * c;
                d[(r % F) * 2] = e[0];
                d[(r % F) * 2 + 1] = e[1];
            }
        }
    return cols * wpr;
}

/* A LOAD's destination range (ceil(row_bytes/B) words per row, or a transposed LOAD's C rows of
 * ceil(rows/2S) words); -1 with *info = the last word when it leaves the SPM. */
static int load_spm_range(const npu_sim_t *s, const npu_fields_t *f, uint32_t *info)
{
    return !f->transpose ? range_rows(f->spm_addr, f->spm_stride, f->rows, cdiv(f->row_bytes, s->B),
                                      s->spm_words, info)
                         : range_rows(f->spm_addr, f->spm_stride, f->row_bytes / 2,
                                      cdiv(f->rows, s->F), s->spm_words, info);
}

/* A DMA instruction takes at least a cycle per chunk its engine moves (npu_dma_chunks; transposed:
 * per SPM word), the RTL's rate: the lower bound the runtime checks busy_load / busy_store by. */
static uint64_t engine_floor(const npu_sim_t *s, uint64_t cost, const npu_fields_t *f, uint64_t transposed_words)
{
    uint64_t chunks = f->transpose ? transposed_words : npu_dma_chunks(s->B, (unsigned)(s->DB / s->B), f);
    return cost > chunks ? cost : chunks;
}

static unsigned exec_load(npu_sim_t *s, unit_t *u, const npu_fields_t *f, uint64_t *cost, uint32_t *info)
{
    uint64_t rd = 0, bursts = 0, wr;
    unsigned err = dma_check(s, f, 0, info);
    if (err)
        return err;
    if (load_spm_range(s, f, info))
        return NPU_ERR_SPM_ADDR;
    wr = load_rows(s, u, f, s->dram + f->dram_addr, f->dram_stride);
    if (!f->transpose)
        rows_runs(s, f, &rd, &bursts);
    else
        tr_runs(s, f, &rd, &bursts);
    s->cnt[NPU_CNT_spm_wr_words] += wr;
    s->cnt[NPU_CNT_dram_rd_prog + f->tag] += rd * s->DB;
    s->cnt[NPU_CNT_dram_rd_bursts] += bursts;
    s->rd_beats += rd;
    s->rd_bursts += bursts;
    *cost = engine_floor(s, dma_cost(s, rd, bursts), f, wr);
    return 0;
}

/* LOAD_SPM (docs/isa.md): a LOAD whose rows come from the SPM, row r at byte
 * src_addr * B + r * src_stride * B. Checks in the RTL's order: BAD_DESC (rows or row_bytes zero,
 * row_bytes odd, a DRAM pitch field (dram_stride, stride_shift: decode() reads their raw bits) not
 * zero, src_stride * B past the engine's 19-bit pitch; ERR_INFO src_addr), SPM_ADDR of the source
 * (ERR_INFO its last word), SPM_ADDR of the destination, BAD_DESC when the source's and the
 * destination's word ranges [first, last] overlap (ERR_INFO src_addr). The engine reads the
 * source's runs as a LOAD reads its DRAM runs, a DRAM beat (BEAT_WORDS words) per run beat, with
 * no DRAM traffic: spm_rd_words counts those beats' words. */
static unsigned exec_load_spm(npu_sim_t *s, unit_t *u, const npu_fields_t *f, uint64_t *cost, uint32_t *info)
{
    uint64_t B = s->B, pitch = (uint64_t)f->src_stride * B, rd = 0, bursts = 0, wr, src_last, dst_last;
    npu_fields_t g = *f;
    if (!f->rows || !f->row_bytes || f->row_bytes % 2 || f->dram_stride || f->stride_shift ||
        pitch >= (1u << 19)) {
        *info = f->src_addr;
        return NPU_ERR_BAD_DESC;
    }
    src_last = (f->src_addr * B + (f->rows - 1) * pitch + f->row_bytes - 1) / B;
    if (src_last >= s->spm_words) {
        *info = (uint32_t)src_last;
        return NPU_ERR_SPM_ADDR;
    }
    if (load_spm_range(s, f, info))
        return NPU_ERR_SPM_ADDR;
    dst_last = !f->transpose ? f->spm_addr + (f->rows - 1) * f->spm_stride + cdiv(f->row_bytes, B) - 1
                             : f->spm_addr + (f->row_bytes / 2 - 1) * f->spm_stride + cdiv(f->rows, s->F) - 1;
    if (f->src_addr <= dst_last && f->spm_addr <= src_last) {
        *info = f->src_addr;
        return NPU_ERR_BAD_DESC;
    }
    wr = load_rows(s, u, f, s->spm + f->src_addr * B, pitch);
    g.dram_addr = (uint32_t)(f->src_addr * B); /* the engine's runs over the source's bytes */
    g.dram_stride = (unsigned)pitch;
    if (!f->transpose)
        rows_runs(s, &g, &rd, &bursts);
    else
        tr_runs(s, &g, &rd, &bursts);
    s->cnt[NPU_CNT_spm_wr_words] += wr;
    s->cnt[NPU_CNT_spm_copy_words] += wr;
    s->cnt[NPU_CNT_spm_rd_words] += rd * (s->DB / B);
    *cost = rd * (s->DB / B) + wr + 8;
    return 0;
}

/* FILL: zeroes the words a normal LOAD of the same rows / spm / sstride / row_bytes would write,
 * without a DRAM access (RTL: the LOAD engine, one word per cycle). BAD_DESC's ERR_INFO is 0
 * (no DRAM address). */
static unsigned exec_fill(npu_sim_t *s, unit_t *u, const npu_fields_t *f, uint64_t *cost, uint32_t *info)
{
    uint64_t words = cdiv(f->row_bytes, s->B);
    if (!f->rows || !f->row_bytes) {
        *info = 0;
        return NPU_ERR_BAD_DESC;
    }
    if (range_rows(f->spm_addr, f->spm_stride, f->rows, words, s->spm_words, info))
        return NPU_ERR_SPM_ADDR;
    for (uint64_t r = 0; r < f->rows; r++)
        stage(u, MEM_SPM, (f->spm_addr + r * f->spm_stride) * s->B, words * s->B); /* staged zeroed */
    s->cnt[NPU_CNT_spm_wr_words] += f->rows * words;
    s->cnt[NPU_CNT_fill_words] += f->rows * words;
    *cost = f->rows * words + 4;
    return 0;
}

/* The transposed STORE (int32): DRAM element (r, c) from lane r % S of word r / S of SPM row c,
 * in the RTL's order (blocks of S rows, column blocks of S, rows) so that overlapping
 * destinations end the same; its runs: the whole transfer when one column block's rows are
 * contiguous, else one per sub-row (r, cb). */
static void store_tr(npu_sim_t *s, unit_t *u, const npu_fields_t *f, uint64_t *beats, uint64_t *bursts)
{
    uint64_t B = s->B, S = s->S, cols = f->row_bytes / 4;
    for (uint64_t r0 = 0; r0 < f->rows; r0 += S)
        for (uint64_t c0 = 0; c0 < cols; c0 += S)
            for (uint64_t r = r0; r < f->rows && r < r0 + S; r++) {
                uint64_t n = cols - c0 < S ? cols - c0 : S, a = f->dram_addr + r * f->dram_stride + 4 * c0;
                uint8_t *d = stage(u, MEM_DRAM, a, 4 * n);
                for (uint64_t c = 0; c < n; c++)
                    memcpy(d + 4 * c,
                           s->spm + (f->spm_addr + (c0 + c) * f->spm_stride + r / S) * B + 4 * (r % S), 4);
                if (f->row_bytes > B || f->dram_stride != f->row_bytes)
                    run_of(s, a, 4 * n, beats, bursts);
            }
    if (f->row_bytes <= B && f->dram_stride == f->row_bytes)
        run_of(s, f->dram_addr, (uint64_t)f->rows * f->row_bytes, beats, bursts);
}

static unsigned exec_store(npu_sim_t *s, unit_t *u, const npu_fields_t *f, uint64_t *cost, uint32_t *info)
{
    uint64_t B = s->B, words = cdiv(f->row_bytes, B), wr = 0, bursts = 0;
    uint64_t cols = f->row_bytes / 4, wpr = cdiv(f->rows, s->S);
    unsigned err = dma_check(s, f, 1, info);
    if (err)
        return err;
    if (!f->transpose ? range_rows(f->spm_addr, f->spm_stride, f->rows, words, s->spm_words, info)
                      : range_rows(f->spm_addr, f->spm_stride, cols, wpr, s->spm_words, info))
        return NPU_ERR_SPM_ADDR;
    if (f->transpose) {
        store_tr(s, u, f, &wr, &bursts);
        s->cnt[NPU_CNT_spm_rd_words] += cols * wpr;
    } else {
        for (uint64_t r = 0; r < f->rows; r++) /* write strobes cover only the rows' bytes */
            memcpy(stage(u, MEM_DRAM, f->dram_addr + r * f->dram_stride, f->row_bytes),
                   s->spm + (f->spm_addr + r * f->spm_stride) * B, f->row_bytes);
        rows_runs(s, f, &wr, &bursts);
        s->cnt[NPU_CNT_spm_rd_words] += f->rows * words;
    }
    s->cnt[NPU_CNT_dram_wr_prog + f->tag] += wr * s->DB;
    s->cnt[NPU_CNT_dram_wr_bursts] += bursts;
    s->wr_beats += wr;
    s->wr_bursts += bursts;
    *cost = engine_floor(s, dma_cost(s, wr, bursts), f, cols * wpr);
    return 0;
}

/* Per-core stationary tiles: wb[bank][core][r][c], S x S int16 each. */
static uint8_t *wtile(npu_sim_t *s, unsigned bank, unsigned core)
{
    return s->wb + ((size_t)bank * 4 + core) * s->S * s->S * 2;
}

static unsigned exec_ldw(npu_sim_t *s, unit_t *u, const npu_fields_t *f, uint64_t *cost, uint32_t *info)
{
    unsigned F = s->F, S = s->S, mask = f->core_mask ? f->core_mask : 0xFu, nrows, ndel = 0;
    int vsplit = !f->core_mask && (f->mode == NPU_MODE_FW || f->mode == NPU_MODE_VSW);
    int hsplit = !f->core_mask && (f->mode == NPU_MODE_FW || f->mode == NPU_MODE_HSW);
    if (!f->k || !f->n || f->k > F || f->n > F || !npu_mode_fits(f->mode, f->k, f->n, S) ||
        (f->core_mask && f->mode != NPU_MODE_ISW) || f->k_lo >= f->k) {
        *info = 0;
        return NPU_ERR_BAD_DESC;
    }
    /* rows k_lo..k-1 are read, row r from spm + (r - k_lo)*sstride */
    if (range_rows(f->spm_addr, f->spm_stride, f->k - f->k_lo, 1, s->spm_words, info))
        return NPU_ERR_SPM_ADDR;
    /* core q holds W[ro + r][co + c]: ro = S for the bottom cores when k is split over two
     * cores (FW, VSW), co = S for the right cores when n is (FW, HSW); rows >= k and rows
     * < k_lo are zero */
    for (unsigned q = 0; q < 4; q++) {
        unsigned ro = vsplit && q >= 2 ? S : 0, co = f->lane_hi || (hsplit && (q & 1)) ? S : 0;
        uint8_t *d;
        if (!(mask >> q & 1u))
            continue;
        d = stage(u, MEM_WB, (size_t)(wtile(s, f->wbank, q) - s->wb), (size_t)S * S * 2);
        ndel++;
        s->cnt[NPU_CNT_noc_v_link0 + q] += S; /* the core's S rows cross its V link */
        for (unsigned r = 0; r < S; r++)
            if (ro + r < f->k && ro + r >= f->k_lo)
                memcpy(d + (size_t)r * S * 2,
                       s->spm + ((uint64_t)f->spm_addr + (uint64_t)(ro + r - f->k_lo) * f->spm_stride) * s->B +
                           2u * co,
                       (size_t)S * 2);
    }
    s->bank_mode[f->wbank] = f->core_mask ? (unsigned)NPU_MODE_ISW : f->mode;
    s->bank_loaded[f->wbank] = 1;
    /* flits sent: a full tile's rows r and S + r share one (the core pairs load in parallel), one
     * row a flit when mono (the 1G1C baseline) and for S-row tiles */
    nrows = vsplit && f->mono ? F : S;
    s->cnt[NPU_CNT_spm_rd_words] += f->k - f->k_lo; /* rows >= k or < k_lo: zero flits, no read */
    s->cnt[NPU_CNT_noc_v_flits] += nrows;
    s->cnt[NPU_CNT_noc_deliveries] += (uint64_t)ndel * S;
    s->cnt[NPU_CNT_lbuf_v_words] += (uint64_t)ndel * S;
    *cost = nrows;
    return 0;
}

/* MACs of one row of set j passing through core c (the core's part of the k x n tile; the valid
 * lanes of the k-block are [k_lo, k), k0 of them below S). */
static uint64_t row_macs(const npu_sim_t *s, const npu_fields_t *f, unsigned c)
{
    uint64_t S = s->S, kk = f->k - f->k_lo;
    uint64_t k0 = (f->k < S ? f->k : S) - (f->k_lo < S ? f->k_lo : S), k1 = kk - k0;
    uint64_t n0 = f->n < S ? f->n : S, n1 = f->n > S ? f->n - S : 0;
    int vsplit = f->mode == NPU_MODE_FW || f->mode == NPU_MODE_VSW;
    int hsplit = f->mode == NPU_MODE_FW || f->mode == NPU_MODE_HSW;
    return (vsplit ? (c >= 2 ? k1 : k0) : kk) * (hsplit ? (c & 1 ? n1 : n0) : f->n);
}

/* ---- the element type (docs/datapath.md sections 1 and 6) ---------------------------- */

/* One PE step, psum + a * w: int16 x int16 + int32 with wrap-around, or bf16 x bf16 + fp32
 * (exact product, one RNE rounding: npu_bf16_mac). */
static uint32_t pe_mac(const npu_sim_t *s, uint32_t psum, uint16_t a, uint16_t w)
{
    if (npu_cfg_bf16(&s->cfg))
        return npu_bf16_mac(psum, a, w);
    return psum + (uint32_t)((int32_t)(int16_t)a * (int32_t)(int16_t)w);
}

/* The OBUF's and DRAIN acc's add: int32 with wrap-around, or fp32 RNE (npu_fp32_add). */
static uint32_t acc_add(const npu_sim_t *s, uint32_t old, uint32_t d)
{
    return npu_cfg_bf16(&s->cfg) ? npu_fp32_add(old, d) : old + d;
}

/* The A element lane rr of a k-block feeds into the array: lanes below k_lo are fed as zero;
 * in bf16 lanes from k on too (int16 feeds them as they are; they meet LDW's zero rows). */
static uint16_t fed_a(const npu_sim_t *s, const npu_fields_t *f, const uint8_t *a, unsigned rr)
{
    unsigned S = s->S;
    if (rr < f->k_lo || (npu_cfg_bf16(&s->cfg) && rr >= f->k))
        return 0;
    return (uint16_t)lane16(a, f->lane_hi ? S + rr % S : rr);
}

/* bcast WAVE (ISW, docs/isa.md): row i < m, read once, multiplied in every core q
 * by its own tile; core q -> OBUF row obuf + (q >> 1) * m + i, lanes (q & 1) * S ... The array
 * runs it as HSW rows: one L flit per row to cores 0/2 (1/3 over the row links), per-mode
 * counters HSW with 2m rows. */
static unsigned exec_wave_bcast(npu_sim_t *s, unit_t *u, const npu_fields_t *f, uint64_t *cost,
                                uint32_t *info)
{
    unsigned F = s->F, S = s->S;
    uint64_t kk = f->k - f->k_lo, m = f->m;
    if (f->mode != NPU_MODE_ISW || f->m >= 0x8000u) {
        *info = 0;
        return NPU_ERR_BAD_DESC;
    }
    if (range_rows(f->spm_addr, f->spm_stride, f->m, 1, s->spm_words, info))
        return NPU_ERR_SPM_ADDR;
    if (obuf_bad(s, f->obuf_addr, 2 * f->m, info))
        return NPU_ERR_OBUF_ADDR;
    if (s->bank_loaded[f->wbank] && s->bank_mode[f->wbank] != f->mode) {
        *info = s->bank_mode[f->wbank] << 2 | f->mode;
        return NPU_ERR_BAD_DESC;
    }
    for (unsigned i = 0; i < f->m; i++) {
        const uint8_t *a = s->spm + ((uint64_t)f->spm_addr + (uint64_t)i * f->spm_stride) * s->B;
        for (unsigned rr = f->k_lo; rr < f->k; rr++)
            if (lane16(a, f->lane_hi ? S + rr : rr) == 0)
                s->cnt[NPU_CNT_macs_zero] += 4u * f->n;
        for (unsigned q = 0; q < 4; q++) {
            unsigned orow = f->obuf_addr + (q >> 1) * f->m + i, lane0 = (q & 1u) * S;
            const uint8_t *o = s->obuf + (size_t)orow * F * 4 + 4u * lane0;
            uint8_t *d = stage(u, MEM_OBUF, (size_t)orow * F * 4 + 4u * lane0, (size_t)S * 4);
            for (unsigned cc = 0; cc < S; cc++) {
                uint32_t psum = 0; /* down the column from the top PE, as the array sums */
                for (unsigned rr = 0; rr < S; rr++)
                    psum = pe_mac(s, psum, fed_a(s, f, a, rr),
                                  (uint16_t)lane16(wtile(s, f->wbank, q) + (size_t)rr * S * 2, cc));
                wr32(d + 4 * cc, f->acc ? acc_add(s, rd32(o + 4 * cc), psum) : psum);
            }
        }
    }
    for (unsigned q = 0; q < 4; q++) {
        s->cnt[NPU_CNT_macs_core0 + q] += m * kk * f->n;
        s->cnt[NPU_CNT_busy_core0 + q] += m;
    }
    s->cnt[NPU_CNT_waves_hsw] += 1;
    s->cnt[NPU_CNT_rows_hsw] += 2 * m;
    s->cnt[NPU_CNT_busy_hsw] += m;
    s->cnt[NPU_CNT_idle_pe_shape] += m * (4u * S * S - 4 * kk * f->n);
    s->cnt[NPU_CNT_spm_rd_words] += m;
    s->cnt[NPU_CNT_noc_h_flits] += m;
    s->cnt[NPU_CNT_noc_deliveries] += 2 * m;
    s->cnt[NPU_CNT_lbuf_h_words] += 2 * m;
    s->cnt[NPU_CNT_noc_h_link0] += m;
    s->cnt[NPU_CNT_noc_h_link2] += m;
    s->cnt[NPU_CNT_obuf_writes] += 4 * m * S;
    *cost = f->m + 2u * F;
    return 0;
}

/* ISW row set j -> its core */
static const unsigned isw_core[4] = {0, 2, 1, 3};

/* The per-mode, SPM, NoC and OBUF counters of a (non-bcast) WAVE with row sets ws. */
static void wave_counters(npu_sim_t *s, const npu_fields_t *f, const npu_wave_sets_t *ws,
                          unsigned width)
{
    unsigned S = s->S;
    int vsplit = f->mode == NPU_MODE_FW || f->mode == NPU_MODE_VSW;
    s->cnt[NPU_CNT_waves_fw + f->mode] += 1;
    s->cnt[NPU_CNT_rows_fw + f->mode] += f->m;
    s->cnt[NPU_CNT_busy_fw + f->mode] += ws->len[0]; /* lockstep slots */
    s->cnt[NPU_CNT_idle_pe_shape] +=
        (uint64_t)f->m * (4u * S * S / (f->mode == NPU_MODE_FW ? 1u : f->mode == NPU_MODE_ISW ? 4u : 2u)
                          - (uint64_t)(f->k - f->k_lo) * f->n);
    s->cnt[NPU_CNT_spm_rd_words] += f->m;
    /* one flit per slot and H channel: FW one row on L; VSW set 0 on L, set 1 on R; HSW sets
     * 0/1 packed on L; ISW sets 0/1 packed on L, sets 2/3 on R (the RTL's two H channels) */
    s->cnt[NPU_CNT_noc_h_flits] += f->mode == NPU_MODE_HSW ? ws->len[0]
                                 : f->mode == NPU_MODE_ISW ? ws->len[0] + ws->len[2] : f->m;
    s->cnt[NPU_CNT_noc_deliveries] += (uint64_t)(vsplit ? 2u : 1u) * f->m;
    s->cnt[NPU_CNT_lbuf_h_words] += (uint64_t)(vsplit ? 2u : 1u) * f->m;
    /* H links: rows enter at cores 0/2 (cores 1/3 get them over the bypass) except VSW's right
     * set and ISW's sets of cores 1/3, which enter there */
    switch (f->mode) {
    case NPU_MODE_FW:
        s->cnt[NPU_CNT_noc_h_link0] += f->m;
        s->cnt[NPU_CNT_noc_h_link2] += f->m;
        break;
    case NPU_MODE_HSW:
        s->cnt[NPU_CNT_noc_h_link0] += ws->len[0];
        s->cnt[NPU_CNT_noc_h_link2] += ws->len[1];
        break;
    case NPU_MODE_VSW:
        s->cnt[NPU_CNT_noc_h_link0] += ws->len[0];
        s->cnt[NPU_CNT_noc_h_link2] += ws->len[0];
        s->cnt[NPU_CNT_noc_h_link1] += ws->len[1];
        s->cnt[NPU_CNT_noc_h_link3] += ws->len[1];
        break;
    default:
        for (unsigned j = 0; j < 4; j++)
            s->cnt[NPU_CNT_noc_h_link0 + isw_core[j]] += ws->len[j];
        break;
    }
    s->cnt[NPU_CNT_obuf_writes] += (uint64_t)f->m * width;
}

static unsigned exec_wave(npu_sim_t *s, unit_t *u, const npu_fields_t *f, uint64_t *cost, uint32_t *info)
{
    unsigned F = s->F, S = s->S;
    int vsplit = f->mode == NPU_MODE_FW || f->mode == NPU_MODE_VSW; /* sub-array 2S tall */
    int hsplit = f->mode == NPU_MODE_FW || f->mode == NPU_MODE_HSW; /* sub-array 2S wide */
    unsigned depth = vsplit ? F : S, width = hsplit ? F : S;
    npu_wave_sets_t ws;
    if (!f->m || !f->k || !f->n || f->k > F || f->n > F || !npu_mode_fits(f->mode, f->k, f->n, S) ||
        f->k_lo >= f->k) {
        *info = 0;
        return NPU_ERR_BAD_DESC;
    }
    if (f->bcast)
        return exec_wave_bcast(s, u, f, cost, info);
    npu_wave_sets(f->mode, f->m, &ws);
    if (range_rows(f->spm_addr, f->spm_stride, f->m, 1, s->spm_words, info))
        return NPU_ERR_SPM_ADDR;
    if (obuf_bad(s, f->obuf_addr, ws.obuf_rows, info))
        return NPU_ERR_OBUF_ADDR;
    /* each mode lays the stationary tile out differently over the cores: a WAVE must run in
     * the mode its bank was loaded for (RTL: BAD_DESC, ERR_INFO = bank mode << 2 | wave mode) */
    if (s->bank_loaded[f->wbank] && s->bank_mode[f->wbank] != f->mode) {
        *info = s->bank_mode[f->wbank] << 2 | f->mode;
        return NPU_ERR_BAD_DESC;
    }
    for (unsigned j = 0; j < 4; j++) {
        unsigned lane0 = hsplit ? 0 : ws.lane_hi[j] * S;
        for (unsigned t = 0; t < ws.len[j]; t++) {
            unsigned i = ws.start[j] + t, orow = f->obuf_addr + ws.orow[j] + t;
            const uint8_t *a = s->spm + ((uint64_t)f->spm_addr + (uint64_t)i * f->spm_stride) * s->B;
            const uint8_t *o = s->obuf + (size_t)orow * F * 4 + 4u * lane0;
            uint8_t *d = stage(u, MEM_OBUF, (size_t)orow * F * 4 + 4u * lane0, (size_t)width * 4);
            /* macs_zero: the row's lanes [k_lo, k) whose A element is zero, times n */
            for (unsigned rr = f->k_lo; rr < f->k && rr < depth; rr++)
                if (lane16(a, f->lane_hi ? S + rr % S : rr) == 0)
                    s->cnt[NPU_CNT_macs_zero] += f->n;
            for (unsigned cc = 0; cc < width; cc++) {
                uint32_t psum = 0; /* down the sub-array's column from the top PE */
                for (unsigned rr = 0; rr < depth; rr++) {
                    unsigned rh = rr >= S, ch = cc >= S, q;
                    switch (f->mode) {
                    case NPU_MODE_FW: q = rh * 2 + ch; break;
                    case NPU_MODE_HSW: q = j * 2 + ch; break;
                    case NPU_MODE_VSW: q = rh * 2 + j; break;
                    default: q = isw_core[j]; break;
                    }
                    psum = pe_mac(s, psum, fed_a(s, f, a, rr),
                                  (uint16_t)lane16(wtile(s, f->wbank, q) + (size_t)(rr % S) * S * 2, cc % S));
                }
                wr32(d + 4 * cc, f->acc ? acc_add(s, rd32(o + 4 * cc), psum) : psum);
            }
        }
        for (unsigned c = 0; c < 4; c++)
            if (ws.cores[j] >> c & 1u) {
                s->cnt[NPU_CNT_macs_core0 + c] += ws.len[j] * row_macs(s, f, c);
                s->cnt[NPU_CNT_busy_core0 + c] += ws.len[j];
            }
    }
    wave_counters(s, f, &ws, width);
    *cost = ws.len[0] + 2u * F;
    return 0;
}

/* One SPM word of a DRAIN: the OBUF lanes, or (acc) their sum (int32; fp32 in bf16) with the word's old value
 * (read from the SPM as it was before this instruction: destinations never overlap). */
static void drain_word(npu_sim_t *s, unit_t *u, uint64_t w, const uint8_t *o, unsigned acc)
{
    uint8_t *d = stage(u, MEM_SPM, w * s->B, s->B);
    if (!acc) {
        memcpy(d, o, s->B);
        return;
    }
    for (unsigned l = 0; l < s->B / 4; l++)
        wr32(d + 4 * l, acc_add(s, rd32(s->spm + w * s->B + 4 * l), rd32(o + 4 * l)));
    s->cnt[NPU_CNT_spm_rd_words] += 1;
}

/* A 32-bit OBUF lane as a narrow DRAIN's 16-bit lane (docs/isa.md "DRAIN"): bf16 RNE, or int32
 * >> shift with rounding (2^(shift-1) added first) and saturation to int16. */
static uint16_t narrow_lane(const npu_sim_t *s, uint32_t x, unsigned shift)
{
    int64_t v = (int64_t)(int32_t)x;
    if (npu_cfg_bf16(&s->cfg))
        return npu_fp32_to_bf16(x);
    if (shift) { /* floor((v + 2^(shift-1)) / 2^shift), an arithmetic shift without UB */
        int64_t d = (int64_t)1 << shift;
        v += d / 2;
        v = v >= 0 ? v / d : -((-v + d - 1) / d);
    }
    v = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
    return (uint16_t)(v & 0xFFFF);
}

/* Narrow DRAIN row: the OBUF row o's 2S lanes into the one SPM word w. */
static void drain_narrow_row(npu_sim_t *s, unit_t *u, uint64_t w, const uint8_t *o, unsigned shift)
{
    uint8_t *d = stage(u, MEM_SPM, w * s->B, s->B);
    for (unsigned l = 0; l < s->F; l++) {
        uint16_t v = narrow_lane(s, rd32(o + 4 * l), shift);
        d[2 * l] = (uint8_t)(v & 0xFF);
        d[2 * l + 1] = (uint8_t)(v >> 8);
    }
}

/* Packed DRAIN (pack = n lanes a row): even rows, h = rows/2 rows a segment of h*n lanes that ends
 * on a word and fits in spm_stride words; skinny: split_rows = hi_rows = rows, n <= S. */
static int drain_pack_bad(const npu_sim_t *s, const npu_fields_t *f)
{
    unsigned S = s->F / 2, n = f->pack;
    uint64_t hn = (uint64_t)(f->rows / 2) * n;
    if (f->narrow || f->acc || f->rows % 2 || hn % S || hn > (uint64_t)f->spm_stride * S)
        return 1;
    if (!f->split_rows)
        return n >= 2 * S;
    return n > S || f->split_rows != f->rows || f->hi_rows != f->rows;
}

/* DRAIN's BAD_DESC rules: rows, the skinny fields, non-overlapping acc destinations; narrow not
 * with acc or split_rows; shift only with narrow at int16. */
static int drain_bad(const npu_sim_t *s, const npu_fields_t *f)
{
    if (f->pack && drain_pack_bad(s, f))
        return 1;
    return !f->rows || (!f->split_rows && f->hi_rows) || f->hi_rows > f->rows ||
           (f->acc && (f->split_rows ? (!f->spm_stride || f->split_rows < f->rows) : f->spm_stride < 2)) ||
           (f->narrow && (f->acc || f->split_rows)) || (f->shift && (!f->narrow || npu_cfg_bf16(&s->cfg)));
}

/* Packed DRAIN (drain_bad passed): segment j (rows [0, h) then [h, rows), low lanes, then skinny
 * their high lanes) at word spm_addr + j * spm_stride, h*n lanes back to back, whole words. */
static unsigned drain_packed(npu_sim_t *s, unit_t *u, const npu_fields_t *f, uint32_t *info)
{
    unsigned S = s->F / 2, n = f->pack, h = f->rows / 2, segs = f->split_rows ? 4 : 2;
    uint64_t hw = (uint64_t)h * n / S; /* words a segment */
    uint64_t last = f->spm_addr + (uint64_t)(segs - 1) * f->spm_stride + hw - 1;
    if (last >= s->spm_words) {
        *info = (uint32_t)last;
        return NPU_ERR_SPM_ADDR;
    }
    if (obuf_bad(s, f->obuf_addr, f->rows, info))
        return NPU_ERR_OBUF_ADDR;
    for (unsigned j = 0; j < segs; j++) {
        uint8_t *d = stage(u, MEM_SPM, ((uint64_t)f->spm_addr + (uint64_t)j * f->spm_stride) * s->B, hw * s->B);
        for (unsigned i = 0; i < h; i++) {
            const uint8_t *o = s->obuf + ((size_t)f->obuf_addr + (j & 1u) * h + i) * s->F * 4;
            memcpy(d + (uint64_t)i * n * 4, o + (j >> 1) * s->B, n * 4u);
        }
    }
    s->cnt[NPU_CNT_obuf_drain_rows] += f->rows;
    s->cnt[NPU_CNT_spm_wr_words] += segs * hw;
    return 0;
}

static unsigned exec_drain(npu_sim_t *s, unit_t *u, const npu_fields_t *f, uint64_t *cost, uint32_t *info)
{
    unsigned F = s->F, B = s->B;
    if (drain_bad(s, f)) {
        *info = 0;
        return NPU_ERR_BAD_DESC;
    }
    *cost = 2u * f->rows;
    if (f->pack)
        return drain_packed(s, u, f, info);
    if (!f->split_rows) {
        if (range_rows(f->spm_addr, f->spm_stride, f->rows, f->narrow ? 1 : 2, s->spm_words, info))
            return NPU_ERR_SPM_ADDR;
    } else {
        uint64_t lo = (uint64_t)f->spm_addr + (uint64_t)(f->rows - 1) * f->spm_stride;
        uint64_t hi = f->hi_rows ? (uint64_t)f->spm_addr + (uint64_t)(f->split_rows + f->hi_rows - 1) * f->spm_stride : 0;
        uint64_t last = hi > lo ? hi : lo;
        if (last >= s->spm_words) {
            *info = (uint32_t)last;
            return NPU_ERR_SPM_ADDR;
        }
    }
    if (obuf_bad(s, f->obuf_addr, f->rows, info))
        return NPU_ERR_OBUF_ADDR;
    for (unsigned r = 0; r < f->rows; r++) {
        uint64_t w = (uint64_t)f->spm_addr + (uint64_t)r * f->spm_stride;
        const uint8_t *o = s->obuf + ((size_t)f->obuf_addr + r) * F * 4;
        if (f->narrow) {
            drain_narrow_row(s, u, w, o, f->shift);
        } else if (!f->split_rows) {
            /* lanes 0..S-1 then S..2S-1: the OBUF row's 8S bytes land in two consecutive words */
            drain_word(s, u, w, o, f->acc);
            drain_word(s, u, w + 1, o + B, f->acc);
        } else {
            drain_word(s, u, w, o, f->acc);
            if (r < f->hi_rows)
                drain_word(s, u, w + (uint64_t)f->split_rows * f->spm_stride, o + B, f->acc);
        }
    }
    s->cnt[NPU_CNT_obuf_drain_rows] += f->rows;
    s->cnt[NPU_CNT_spm_wr_words] += f->rows + (f->narrow ? 0 : f->split_rows ? f->hi_rows : f->rows);
    *cost = 2u * f->rows;
    return 0;
}

/* ---- VEC / VSET (docs/isa.md "VEC"): the vector unit, on the SPM's words and lanes ---------- */

/* The geometry of one VEC: element widths (bytes) of a and d, whether b is read, SPM words of a
 * row of a and of d, rows of d, chunks of 2S elements per row. */
typedef struct vgeo {
    unsigned ea, ed, use_b, wa, wd, rows_d, nch;
} vgeo_t;

static unsigned vec_geo(const npu_sim_t *s, const npu_fields_t *f, vgeo_t *g)
{
    unsigned v = f->vop;
    if (v >= NPU_NUM_VOPS || !f->rows || !s->v_len || (f->wide && !NPU_VOP_HAS_WIDE(v)))
        return NPU_ERR_BAD_DESC;
    g->ea = v == NPU_VOP_NARROW || (f->wide && v != NPU_VOP_WIDEN) ? 4 : 2;
    g->ed = v == NPU_VOP_WIDEN || (f->wide && v != NPU_VOP_NARROW) ? 4 : 2;
    g->use_b = NPU_VOP_READS_B(v);
    g->wa = (unsigned)cdiv((uint64_t)s->v_len * g->ea, s->B);
    g->wd = (unsigned)cdiv((uint64_t)s->v_len * g->ed, s->B);
    g->rows_d = v == NPU_VOP_SUM ? 1 : f->rows;
    g->nch = (unsigned)cdiv(s->v_len, s->F);
    return 0;
}

static unsigned vec_check(const npu_sim_t *s, const npu_fields_t *f, const vgeo_t *g, uint32_t *info)
{
    if (range_rows(f->a_addr, f->a_stride, f->rows, g->wa, s->spm_words, info) ||
        (g->use_b && range_rows(f->b_addr, f->b_stride, f->rows, g->wa, s->spm_words, info)) ||
        range_rows(f->d_addr, f->d_stride, g->rows_d, g->wd, s->spm_words, info))
        return NPU_ERR_SPM_ADDR;
    return 0;
}

/* Element e of the row at SPM word w (element size es bytes: a row's words hold its elements
 * back to back), as a 32-bit value: bf16 in the high half (an fp32), int16 sign-extended. */
static uint32_t vget(const uint8_t *spm, const npu_sim_t *s, uint64_t w, unsigned e, unsigned es)
{
    const uint8_t *p = spm + w * s->B + (uint64_t)e * es;
    if (es == 4)
        return rd32(p);
    uint32_t h = (uint32_t)(p[0] | p[1] << 8);
    return npu_cfg_bf16(&s->cfg) ? h << 16 : (uint32_t)(int32_t)(int16_t)h;
}

/* A lane's 16-bit result: bf16 by RNE, int16 by saturation of the exact value y. */
static void vput(uint8_t *spm, const npu_sim_t *s, uint64_t w, unsigned e, unsigned es, uint32_t y32,
                 int64_t y)
{
    uint8_t *p = spm + w * s->B + (uint64_t)e * es;
    if (es == 4) {
        wr32(p, y32);
        return;
    }
    uint16_t h = npu_cfg_bf16(&s->cfg) ? npu_fp32_to_bf16(y32)
                 : (uint16_t)(y > INT16_MAX ? INT16_MAX : y < INT16_MIN ? INT16_MIN : y);
    p[0] = (uint8_t)h;
    p[1] = (uint8_t)(h >> 8);
}

/* The rounded shift of the int16 configs: (x + 2^(sh-1)) >> sh, arithmetic, on the exact value. */
static int64_t vshift(int64_t x, unsigned sh)
{
    if (!sh)
        return x;
    x += (int64_t)1 << (sh - 1);
    return x < 0 ? ~(~x >> sh) : x >> sh;
}

/* One lane of the bf16 configs (fp32 values x, y; acc: the SUM's running value). */
static uint32_t vlane_fp(const npu_sim_t *s, unsigned v, uint32_t x, uint32_t y, uint32_t acc)
{
    int xnan = (x & 0x7F800000u) == 0x7F800000u && (x & 0x7FFFFFu);
    int xpos = !(x >> 31) && (x & 0x7F800000u) && !xnan;
    int ypos = !(y >> 31) && (y & 0x7F800000u) && !((y & 0x7F800000u) == 0x7F800000u && (y & 0x7FFFFFu));
    uint32_t xc = xnan ? NPU_FP32_NAN : (x & 0x7F800000u) ? x : (x & 0x80000000u);
    if (v == NPU_VOP_ADD) return npu_fp32_add(x, y);
    if (v == NPU_VOP_MUL) return npu_fp32_mul(s->v_alpha, x);
    if (v == NPU_VOP_VMUL) return npu_fp32_mul(y, x);
    if (v == NPU_VOP_AXPBY) return npu_fp32_add(npu_fp32_mul(s->v_alpha, x), npu_fp32_mul(s->v_beta, y));
    if (v == NPU_VOP_RELU) return xnan ? NPU_FP32_NAN : xpos ? x : 0;
    if (v == NPU_VOP_RELU_BWD) return ypos ? xc : 0;
    if (v == NPU_VOP_SUM) return npu_fp32_add(acc, x);
    return xc; /* NARROW, WIDEN */
}

/* One lane of the int16 configs: the exact result (32-bit destinations keep its low bits). */
static int64_t vlane_int(const npu_sim_t *s, unsigned v, int64_t x, int64_t y, int64_t acc)
{
    int64_t al = (int16_t)(uint16_t)s->v_alpha, be = (int16_t)(uint16_t)s->v_beta;
    switch (v) {
    case NPU_VOP_ADD: return x + y;
    case NPU_VOP_MUL: return vshift(al * x, s->v_shift);
    case NPU_VOP_VMUL: return vshift(y * x, s->v_shift);
    case NPU_VOP_AXPBY: return vshift(al * x + be * y, s->v_shift);
    case NPU_VOP_RELU: return x > 0 ? x : 0;
    case NPU_VOP_RELU_BWD: return y > 0 ? x : 0;
    case NPU_VOP_NARROW: return vshift(x, s->v_shift);
    case NPU_VOP_SUM: return acc + x;
    default: return x;
    }
}

/* Chunk c (elements c*2S ..) of one row: a at word wa0, b at wb0, d at wd0, in the SPM image m
 * (reads then writes, as the unit does); for SUM, acc_f / acc_i carry the column sums and
 * `last` says whether this row writes them. Lanes past len are written as zero. */
static void vec_chunk(const npu_sim_t *s, uint8_t *m, const npu_fields_t *f, const vgeo_t *g,
                      uint64_t wa0, uint64_t wb0, uint64_t wd0, unsigned c, uint32_t *acc_f,
                      int64_t *acc_i, int first, int last)
{
    unsigned F = s->F, e0 = c * F, bf = npu_cfg_bf16(&s->cfg), ne = s->v_len - e0 < F ? s->v_len - e0 : F;
    uint32_t y32[128]; /* F = 2S <= 128 */
    int64_t yi[128];
    for (unsigned e = 0; e < ne; e++) {
        uint32_t x = vget(m, s, wa0, e0 + e, g->ea), y = g->use_b ? vget(m, s, wb0, e0 + e, g->ea) : 0;
        if (bf) {
            y32[e] = acc_f[e] = vlane_fp(s, f->vop, x, y, first ? 0 : acc_f[e]);
        } else {
            yi[e] = acc_i[e] = vlane_int(s, f->vop, (int32_t)x, (int32_t)y, first ? 0 : acc_i[e]);
            y32[e] = (uint32_t)yi[e];
        }
    }
    if (!last)
        return;
    /* the words of d this chunk covers: zero first (lanes past len), then the lanes */
    uint64_t wlo = (uint64_t)e0 * g->ed / s->B, whi = cdiv((uint64_t)(e0 + ne) * g->ed, s->B);
    memset(m + (wd0 + wlo) * s->B, 0, (size_t)((whi - wlo) * s->B));
    for (unsigned e = 0; e < ne; e++)
        vput(m, s, wd0, e0 + e, g->ed, y32[e], bf ? 0 : yi[e]);
}

static unsigned exec_vec(npu_sim_t *s, unit_t *u, const npu_fields_t *f, uint64_t *cost, uint32_t *info)
{
    vgeo_t g;
    unsigned err = vec_geo(s, f, &g);
    *info = 0;
    if (err || (err = vec_check(s, f, &g, info)) != 0)
        return err;
    size_t bytes = s->spm_words * s->B;
    uint8_t *m = malloc(bytes); /* the SPM as the unit sees it, chunk after chunk */
    uint32_t acc_f[128];
    int64_t acc_i[128];
    if (!m || s->F > 128)
        abort();
    memcpy(m, s->spm, bytes);
    for (unsigned o = 0; o < (f->vop == NPU_VOP_SUM ? g.nch : f->rows); o++)
        for (unsigned i = 0; i < (f->vop == NPU_VOP_SUM ? f->rows : g.nch); i++) {
            unsigned r = f->vop == NPU_VOP_SUM ? i : o, c = f->vop == NPU_VOP_SUM ? o : i;
            int sum = f->vop == NPU_VOP_SUM;
            vec_chunk(s, m, f, &g, f->a_addr + (uint64_t)r * f->a_stride,
                      f->b_addr + (uint64_t)r * f->b_stride,
                      f->d_addr + (sum ? 0 : (uint64_t)r * f->d_stride), c, acc_f, acc_i,
                      !sum || r == 0, !sum || r + 1 == f->rows);
        }
    for (unsigned r = 0; r < g.rows_d; r++) {
        uint64_t w = f->d_addr + (uint64_t)r * f->d_stride;
        memcpy(stage(u, MEM_SPM, w * s->B, (size_t)g.wd * s->B), m + w * s->B, (size_t)g.wd * s->B);
    }
    free(m);
    uint64_t rd = (uint64_t)f->rows * g.wa * (1 + g.use_b), wr = (uint64_t)g.rows_d * g.wd;
    s->cnt[NPU_CNT_spm_rd_words] += rd;
    s->cnt[NPU_CNT_vec_rd_words] += rd;
    s->cnt[NPU_CNT_spm_wr_words] += wr;
    s->cnt[NPU_CNT_vec_wr_words] += wr;
    *cost = npu_vec_busy(f, s->v_len, (unsigned)s->cfg.s); /* prog_expect.h: in order or pipelined */
    s->cnt[NPU_CNT_vec_busy] += *cost;
    return 0;
}

static unsigned exec_vset(npu_sim_t *s, const npu_fields_t *f, uint64_t *cost)
{
    s->v_alpha = f->alpha;
    s->v_beta = f->beta;
    s->v_len = f->len;
    s->v_shift = f->shift;
    *cost = 1;
    return 0;
}

/* The fields of an instruction as the hardware reads them: its format's fields (npu_decode),
 * plus a STORE's transpose bit, which the STORE format lacks but the RTL's shared LOAD/STORE
 * descriptor reads (set, it is BAD_DESC). */
static void decode(const npu_insn_t *in, npu_fields_t *f)
{
    npu_decode(in, f);
    if (f->op == NPU_OP_STORE)
        f->transpose = npu_insn_get(in, NPU_FLD_LOAD_transpose);
    if (f->op == NPU_OP_LOAD_SPM) { /* LOAD's DRAM pitch bits: must be zero (BAD_DESC) */
        f->dram_stride = npu_insn_get(in, NPU_FLD_LOAD_dram_stride);
        f->stride_shift = npu_insn_get(in, NPU_FLD_LOAD_stride_shift);
    }
}

unsigned fsim_exec(npu_sim_t *s, unit_t *u, const npu_insn_t *in, uint64_t *cost, uint32_t *info)
{
    npu_fields_t f;
    decode(in, &f);
    switch (f.op) {
    case NPU_OP_LOAD: return exec_load(s, u, &f, cost, info);
    case NPU_OP_FILL: return exec_fill(s, u, &f, cost, info);
    case NPU_OP_LOAD_SPM: return exec_load_spm(s, u, &f, cost, info);
    case NPU_OP_STORE: return exec_store(s, u, &f, cost, info);
    case NPU_OP_LDW: return exec_ldw(s, u, &f, cost, info);
    case NPU_OP_WAVE: return exec_wave(s, u, &f, cost, info);
    case NPU_OP_DRAIN: return exec_drain(s, u, &f, cost, info);
    case NPU_OP_VEC: return exec_vec(s, u, &f, cost, info);
    case NPU_OP_VSET: return exec_vset(s, &f, cost);
    default: *cost = 1; return 0; /* SYNC_* */
    }
}
