/*
 * npu_funcsim.c - a functional model of the FlexTrain NPU behind the tb/npu_sim.h API.
 *
 * It is the host's second model of docs/isa.md (an ISA reference), not a cycle model:
 *  - DRAM (2^DRAM_ADDR_BITS bytes), SPM (SPM_BANKS*SPM_BANK_WORDS words of 4S bytes), OBUF
 *    (2*OBUF_ROWS rows of 2S int32), two weight banks of 2S x 2S int16.
 *  - The fetcher reads one instruction per cycle from DRAM, checks its opcode and appends it to
 *    the LOAD, EXEC or STORE queue (QUEUE_DEPTH entries; it waits while the queue is full).
 *  - Each queue runs its head when the tokens it pops are available (all at once), then stays
 *    busy for a crude cost in cycles (DMA: latency + bytes/bandwidth + per-burst cost; LDW: 2S;
 *    WAVE: m + 4S; DRAIN: 2*rows), optionally stretched by a seeded random jitter. An
 *    instruction reads its sources when it starts and writes its results when it completes,
 *    then pushes its tokens: a program with a missing token sees stale or future data.
 *  - The EXEC queue is one sequential unit (the RTL's three EXEC units are hazard-checked to
 *    give the same result).
 *  - Errors follow docs/isa.md, checked when an instruction starts, in the order
 *    BAD_DESC, DRAM_ADDR, SPM_ADDR, OBUF_ADDR, with the RTL's conventions where the design
 *    leaves freedom: ERR_INFO = last DRAM byte / last SPM word touched (DRAM_ADDR / SPM_ADDR),
 *    end row obuf_addr + count (OBUF_ADDR; a WAVE or DRAIN may not cross an OBUF half either),
 *    dram_addr of a DMA / 0 of an EXEC instruction (BAD_DESC), the opcode (ILLEGAL_OPCODE), a
 *    bit per overflowing channel (TOKEN_OVERFLOW), QSTATE (DEADLOCK; ERR_PC = the EXEC queue's
 *    instruction if it holds one, else LOAD's, else STORE's), PROG_BASE (BAD_PROGRAM: base not
 *    aligned to max(16, 4S) bytes or program past the end of DRAM; PROG_LEN = 0 just finishes).
 *    A mode that cannot hold the k x n tile (HSW k > S, VSW n > S, ISW either), an LDW core mask
 *    outside ISW, a DRAIN with hi_rows but no split_rows or hi_rows > rows, a transposed LOAD
 *    with odd row_bytes and a STORE with the transpose
 *    bit are BAD_DESC, and so is an LDW or WAVE window start k_lo >= k; a FILL with rows or
 *    row_bytes zero is BAD_DESC with ERR_INFO 0 (it has no DRAM address).
 *    TOKEN_OVERFLOW's ERR_PC is the pushing instruction (the RTL may differ).
 *  - FILL (LOAD queue) zeroes the SPM words of a LOAD without DRAM; LDW k_lo: stationary rows
 *    < k_lo are zero and not read; WAVE k_lo: A lanes < k_lo of the k-block are not MACs.
 *  - Counters: the ones npu_prog_expect (sw/compile/gemm/gemm_emit.c) defines are exact; bursts never cross
 *    4 KiB; NoC/LBUF counts follow the RTL (an LDW sends all 2S rows, zero rows included, each
 *    to two cores; an FW A row enters cores 0 and 2); stalls, SPM conflicts and exec waits are 0.
 * npu_sim_trace is not supported (returns -1); npu_sim_dram_model (tb/) is not provided.
 */
#include <stdlib.h>
#include <string.h>

#include "npu_funcsim.h"
#include "hw/isa.h"
#include "hw/npu_defs.h"
#include "npu_sim.h"

#ifdef NPU_FUNCSIM_USE_PARAMS
#include "npu_params.h"
static npu_cfg_t g_cfg = NPU_CFG_INIT;
#else
static npu_cfg_t g_cfg = {"small", 8, 4, 1024, 256, 8, 16, 8, 15, 24, 16, 4, 20000, 32, 30, 4};
#endif
static unsigned g_jitter;

void npu_funcsim_config(const npu_cfg_t *cfg) { g_cfg = *cfg; }
void npu_funcsim_jitter(unsigned pct) { g_jitter = pct; }
unsigned npu_sim_beat_bytes(void) { return 4u * (unsigned)g_cfg.s; }

enum { QL, QE, QS };                      /* queues */
enum { T_L2E, T_E2L, T_E2S, T_S2E };      /* token channels */
enum { MEM_DRAM, MEM_SPM, MEM_OBUF, MEM_WB };

typedef struct pending_wr {
    int mem;
    size_t off, len, data; /* byte offset in the memory, length, offset in the unit's pool */
} pending_wr_t;

typedef struct unit {
    int busy;
    uint32_t pc;          /* instruction in progress (or last one) */
    uint32_t w0;          /* its first word (token flags) */
    uint64_t done_at;
    pending_wr_t *wr;
    size_t nwr, capwr;
    uint8_t *pool;
    size_t npool, cappool;
} unit_t;

typedef struct qentry {
    uint32_t pc;
    uint32_t w[4];
} qentry_t;

typedef struct queue {
    qentry_t *e;
    unsigned head, n, cap;
} queue_t;

struct npu_sim {
    npu_cfg_t cfg;
    unsigned S, F, B;
    npu_dram_timing_t t;
    unsigned jitter;
    uint64_t rng;
    uint8_t *dram, *spm, *obuf, *wb; /* OBUF: uint32 lanes; WB: int16, [bank][r][c] */
    size_t dram_bytes, spm_words, obuf_rows2;
    uint32_t prog_base, prog_len, watchdog, status, err_pc, err_info;
    uint64_t cnt[NPU_NUM_COUNTERS];
    /* per weight bank: the mode whose tile layout its last LDW loaded (a masked LDW loads
     * the ISW layout), valid once an LDW targeted the bank (as the RTL's bank_mode) */
    unsigned bank_mode[2];
    int bank_loaded[2];
    uint64_t cycle, last_progress;
    uint32_t fetch_pc;
    uint64_t next_fetch_beat; /* first program beat not yet counted */
    uint64_t fetch_burst_end; /* first beat after the current fetch burst */
    uint64_t prog_beats;      /* beats the fetcher reads: ceil(PROG_LEN * 16 / B) */
    queue_t q[3];
    unit_t u[3];
    unsigned tok[4];
    uint64_t rd_beats, wr_beats, rd_bursts, wr_bursts, stalls;
};

/* ---- small helpers -------------------------------------------------------------------- */

static uint64_t rnd(npu_sim_t *s)
{
    s->rng ^= s->rng << 13;
    s->rng ^= s->rng >> 7;
    s->rng ^= s->rng << 17;
    return s->rng;
}

static unsigned state_of(const npu_sim_t *s) { return s->status & 3u; }
static int running(const npu_sim_t *s) { return state_of(s) == NPU_STATE_RUNNING; }
static int halted(const npu_sim_t *s)
{
    return state_of(s) == NPU_STATE_DONE || state_of(s) == NPU_STATE_ERROR;
}

static void fail(npu_sim_t *s, unsigned err, uint32_t pc, uint32_t info)
{
    s->status = NPU_STATE_ERROR | (err << 8);
    s->err_pc = pc;
    s->err_info = info;
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static int16_t lane16(const uint8_t *word, unsigned lane)
{
    uint16_t v = (uint16_t)(word[2 * lane] | word[2 * lane + 1] << 8);
    return (int16_t)(v >= 0x8000u ? (int)v - 0x10000 : (int)v);
}

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

static void commit(npu_sim_t *s, unit_t *u)
{
    for (size_t i = 0; i < u->nwr; i++)
        memcpy(mem_base(s, u->wr[i].mem) + u->wr[i].off, u->pool + u->wr[i].data, u->wr[i].len);
    u->nwr = 0;
    u->npool = 0;
}

static uint64_t cdiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* Bursts for `beats` consecutive beats from addr: at most MAX_BURST_BEATS, never crossing 4 KiB. */
static uint64_t bursts_of(const npu_sim_t *s, uint64_t addr, uint64_t beats)
{
    uint64_t n = 0, mb = s->cfg.max_burst_beats > 0 ? (uint64_t)s->cfg.max_burst_beats : 1;
    while (beats) {
        uint64_t to4k = (4096 - addr % 4096) / s->B, len = beats < mb ? beats : mb;
        if (to4k && len > to4k)
            len = to4k;
        addr += len * s->B;
        beats -= len;
        n++;
    }
    return n;
}

static uint64_t dma_cost(npu_sim_t *s, uint64_t beats, uint64_t bursts)
{
    double bw = s->t.bytes_per_cycle > 0 ? s->t.bytes_per_cycle : 1.0;
    uint64_t c = s->t.latency + (uint64_t)((double)(beats * s->B) / bw + 0.999999) +
                 bursts * s->t.burst_cost;
    if (s->t.stall_pct) {
        uint64_t extra = rnd(s) % (c * s->t.stall_pct / 100 + 1);
        s->stalls += extra;
        c += extra;
    }
    return c;
}

/* ---- instruction semantics (docs/isa.md) --------------------------------- */

typedef struct insn_f {
    unsigned op, tag, trans, rows, spm, sstride, rb, dstride, wbank, mode, acc, m, k, n, obuf;
    unsigned cmask, split, hi, lane_hi; /* lane_hi: LDW b_hi w2[20], WAVE a_hi w3[0] */
    unsigned k_lo;                      /* window start: LDW w2[29:24], WAVE w3[13:8] */
    unsigned bcast;                     /* WAVE w3[1]: every row to all four cores */
    uint32_t dram;
} insn_f_t;

static void decode(const uint32_t *w, insn_f_t *f)
{
    memset(f, 0, sizeof *f);
    f->op = w[0] & 0xFFu;
    switch (f->op) {
    case NPU_OP_FILL: /* the LOAD format; tag, transpose and the DRAM fields are ignored */
        f->rows = w[0] >> 16;
        f->spm = w[2] & 0xFFFFu;
        f->sstride = w[2] >> 16;
        f->rb = w[3] & 0xFFFFu;
        break;
    case NPU_OP_LOAD:
    case NPU_OP_STORE:
        f->tag = (w[0] >> 12) & 7u;
        f->trans = (w[0] >> 15) & 1u; /* a STORE with it set is BAD_DESC */
        f->rows = w[0] >> 16;
        f->dram = w[1];
        f->spm = w[2] & 0xFFFFu;
        f->sstride = w[2] >> 16;
        f->rb = w[3] & 0xFFFFu;
        f->dstride = w[3] >> 16;
        break;
    case NPU_OP_LDW:
    case NPU_OP_WAVE:
        f->wbank = (w[0] >> 12) & 1u;
        f->mode = (w[0] >> 13) & 3u;
        f->acc = (w[0] >> 15) & 1u;
        f->m = w[0] >> 16;
        f->spm = w[1] & 0xFFFFu;
        f->sstride = w[1] >> 16;
        f->k = w[2] & 0xFFu;
        f->n = (w[2] >> 8) & 0xFFu;
        f->obuf = w[2] >> 16;
        if (f->op == NPU_OP_LDW) {
            f->cmask = (w[2] >> 16) & 0xFu;
            f->lane_hi = (w[2] >> 20) & 1u;
            f->k_lo = (w[2] >> 24) & 0x3Fu;
            f->obuf = 0;
        } else {
            f->lane_hi = w[3] & 1u;
            f->bcast = (w[3] >> 1) & 1u;
            f->k_lo = (w[3] >> 8) & 0x3Fu;
        }
        break;
    case NPU_OP_DRAIN:
        f->acc = (w[0] >> 15) & 1u;
        f->rows = w[0] >> 16;
        f->obuf = w[1] & 0xFFFFu;
        f->spm = w[2] & 0xFFFFu;
        f->sstride = w[2] >> 16;
        f->split = w[3] & 0xFFFFu;
        f->hi = w[3] >> 16;
        break;
    default:
        break;
    }
}

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

static unsigned exec_load(npu_sim_t *s, unit_t *u, const insn_f_t *f, uint64_t *cost, uint32_t *info)
{
    uint64_t B = s->B, F = s->F, beats = cdiv(f->rb, B);
    uint64_t cols = f->rb / 2, wpr = cdiv(f->rows, F), bursts = 0;
    if (!f->rows || !f->rb || f->dram % B || (f->trans && f->rb % 2)) {
        *info = f->dram;
        return NPU_ERR_BAD_DESC;
    }
    if (range_rows(f->dram, f->dstride * B, f->rows, f->rb, s->dram_bytes, info))
        return NPU_ERR_DRAM_ADDR;
    if (!f->trans ? range_rows(f->spm, f->sstride, f->rows, beats, s->spm_words, info)
                  : range_rows(f->spm, f->sstride, cols, wpr, s->spm_words, info))
        return NPU_ERR_SPM_ADDR;
    if (!f->trans) {
        for (uint64_t r = 0; r < f->rows; r++) {
            uint8_t *d = stage(u, MEM_SPM, (f->spm + r * f->sstride) * B, beats * B);
            memcpy(d, s->dram + f->dram + r * f->dstride * B, f->rb);
            bursts += bursts_of(s, f->dram + r * f->dstride * B, beats);
        }
        s->cnt[NPU_CNT_spm_wr_words] += f->rows * beats;
    } else {
        /* in the RTL's order (2S-row blocks, then columns), so that destinations that overlap
         * (spm_stride < the words per column) end the same */
        for (uint64_t wb = 0; wb < wpr; wb++)
            for (uint64_t c = 0; c < cols; c++) {
                uint8_t *d = stage(u, MEM_SPM, (f->spm + c * f->sstride + wb) * B, B);
                for (uint64_t r = wb * F; r < f->rows && r < (wb + 1) * F; r++) {
                    const uint8_t *src = s->dram + f->dram + r * f->dstride * B + 2 * c;
                    d[(r % F) * 2] = src[0];
                    d[(r % F) * 2 + 1] = src[1];
                }
            }
        /* the RTL's bursts: per 2S-row block, groups of <= 2 beats (column blocks) per row; one
         * burst run per row, or per block when the group's rows are adjacent (dstride = g) */
        for (uint64_t wb = 0; wb < wpr; wb++) {
            uint64_t r0 = wb * F, nr = f->rows - r0 < F ? f->rows - r0 : F;
            for (uint64_t cb = 0; cb < beats; cb += 2) {
                uint64_t g = beats - cb < 2 ? beats - cb : 2;
                if (f->dstride == g)
                    bursts += bursts_of(s, f->dram + (r0 * f->dstride + cb) * B, nr * g);
                else
                    for (uint64_t r = r0; r < r0 + nr; r++)
                        bursts += bursts_of(s, f->dram + (r * f->dstride + cb) * B, g);
            }
        }
        s->cnt[NPU_CNT_spm_wr_words] += cols * wpr;
    }
    s->cnt[NPU_CNT_dram_rd_prog + f->tag] += f->rows * beats * B;
    s->cnt[NPU_CNT_dram_rd_bursts] += bursts;
    s->rd_beats += f->rows * beats;
    s->rd_bursts += bursts;
    *cost = dma_cost(s, f->rows * beats, bursts);
    return 0;
}

/* FILL: zeroes the words a normal LOAD of the same rows / spm / sstride / row_bytes would write,
 * without a DRAM access (RTL: the LOAD engine, one word per cycle). BAD_DESC's ERR_INFO is 0
 * (no DRAM address). */
static unsigned exec_fill(npu_sim_t *s, unit_t *u, const insn_f_t *f, uint64_t *cost, uint32_t *info)
{
    uint64_t beats = cdiv(f->rb, s->B);
    if (!f->rows || !f->rb) {
        *info = 0;
        return NPU_ERR_BAD_DESC;
    }
    if (range_rows(f->spm, f->sstride, f->rows, beats, s->spm_words, info))
        return NPU_ERR_SPM_ADDR;
    for (uint64_t r = 0; r < f->rows; r++)
        stage(u, MEM_SPM, (f->spm + r * f->sstride) * s->B, beats * s->B); /* staged zeroed */
    s->cnt[NPU_CNT_spm_wr_words] += f->rows * beats;
    s->cnt[NPU_CNT_fill_words] += f->rows * beats;
    *cost = f->rows * beats + 4;
    return 0;
}

static unsigned exec_store(npu_sim_t *s, unit_t *u, const insn_f_t *f, uint64_t *cost, uint32_t *info)
{
    uint64_t B = s->B, beats = cdiv(f->rb, B), bursts = 0;
    if (!f->rows || !f->rb || f->dram % B || f->trans) {
        *info = f->dram;
        return NPU_ERR_BAD_DESC;
    }
    if (range_rows(f->dram, f->dstride * B, f->rows, f->rb, s->dram_bytes, info))
        return NPU_ERR_DRAM_ADDR;
    if (range_rows(f->spm, f->sstride, f->rows, beats, s->spm_words, info))
        return NPU_ERR_SPM_ADDR;
    for (uint64_t r = 0; r < f->rows; r++) { /* write strobes cover only row_bytes */
        memcpy(stage(u, MEM_DRAM, f->dram + r * f->dstride * B, f->rb),
               s->spm + (f->spm + r * f->sstride) * B, f->rb);
        bursts += bursts_of(s, f->dram + r * f->dstride * B, beats);
    }
    s->cnt[NPU_CNT_dram_wr_prog + f->tag] += f->rows * beats * B;
    s->cnt[NPU_CNT_dram_wr_bursts] += bursts;
    s->cnt[NPU_CNT_spm_rd_words] += f->rows * beats;
    s->wr_beats += f->rows * beats;
    s->wr_bursts += bursts;
    *cost = dma_cost(s, f->rows * beats, bursts);
    return 0;
}

/* Per-core stationary tiles: wb[bank][core][r][c], S x S int16 each. */
static uint8_t *wtile(npu_sim_t *s, unsigned bank, unsigned core)
{
    return s->wb + ((size_t)bank * 4 + core) * s->S * s->S * 2;
}

static unsigned exec_ldw(npu_sim_t *s, unit_t *u, const insn_f_t *f, uint64_t *cost, uint32_t *info)
{
    unsigned F = s->F, S = s->S, mask = f->cmask ? f->cmask : 0xFu, nrows, ndel = 0;
    int vsplit = !f->cmask && (f->mode == NPU_MODE_FW || f->mode == NPU_MODE_VSW);
    int hsplit = !f->cmask && (f->mode == NPU_MODE_FW || f->mode == NPU_MODE_HSW);
    if (!f->k || !f->n || f->k > F || f->n > F || !npu_mode_fits(f->mode, f->k, f->n, S) ||
        (f->cmask && f->mode != NPU_MODE_ISW) || f->k_lo >= f->k) {
        *info = 0;
        return NPU_ERR_BAD_DESC;
    }
    /* rows k_lo..k-1 are read, row r from spm + (r - k_lo)*sstride */
    if (range_rows(f->spm, f->sstride, f->k - f->k_lo, 1, s->spm_words, info))
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
                       s->spm + ((uint64_t)f->spm + (uint64_t)(ro + r - f->k_lo) * f->sstride) * s->B +
                           2u * co,
                       (size_t)S * 2);
    }
    s->bank_mode[f->wbank] = f->cmask ? (unsigned)NPU_MODE_ISW : f->mode;
    s->bank_loaded[f->wbank] = 1;
    nrows = vsplit ? F : S; /* rows sent (bottom first), each one flit */
    s->cnt[NPU_CNT_spm_rd_words] += f->k - f->k_lo; /* rows >= k or < k_lo: zero flits, no read */
    s->cnt[NPU_CNT_noc_v_flits] += nrows;
    s->cnt[NPU_CNT_noc_deliveries] += (uint64_t)ndel * S;
    s->cnt[NPU_CNT_lbuf_v_words] += (uint64_t)ndel * S;
    *cost = nrows;
    return 0;
}

/* MACs of one row of set j passing through core c (the core's part of the k x n tile; the valid
 * lanes of the k-block are [k_lo, k), k0 of them below S). */
static uint64_t row_macs(const npu_sim_t *s, const insn_f_t *f, unsigned c)
{
    uint64_t S = s->S, kk = f->k - f->k_lo;
    uint64_t k0 = (f->k < S ? f->k : S) - (f->k_lo < S ? f->k_lo : S), k1 = kk - k0;
    uint64_t n0 = f->n < S ? f->n : S, n1 = f->n > S ? f->n - S : 0;
    int vsplit = f->mode == NPU_MODE_FW || f->mode == NPU_MODE_VSW;
    int hsplit = f->mode == NPU_MODE_FW || f->mode == NPU_MODE_HSW;
    return (vsplit ? (c >= 2 ? k1 : k0) : kk) * (hsplit ? (c & 1 ? n1 : n0) : f->n);
}

/* bcast WAVE (ISW, docs/isa.md): row i < m, read once, multiplied in every core q
 * by its own tile; core q -> OBUF row obuf + (q >> 1) * m + i, lanes (q & 1) * S ... The array
 * runs it as HSW rows: one L flit per row to cores 0/2 (1/3 over the row links), per-mode
 * counters HSW with 2m rows. */
static unsigned exec_wave_bcast(npu_sim_t *s, unit_t *u, const insn_f_t *f, uint64_t *cost,
                                uint32_t *info)
{
    unsigned F = s->F, S = s->S;
    uint64_t kk = f->k - f->k_lo, m = f->m;
    if (f->mode != NPU_MODE_ISW || f->m >= 0x8000u) {
        *info = 0;
        return NPU_ERR_BAD_DESC;
    }
    if (range_rows(f->spm, f->sstride, f->m, 1, s->spm_words, info))
        return NPU_ERR_SPM_ADDR;
    if (obuf_bad(s, f->obuf, 2 * f->m, info))
        return NPU_ERR_OBUF_ADDR;
    if (s->bank_loaded[f->wbank] && s->bank_mode[f->wbank] != f->mode) {
        *info = s->bank_mode[f->wbank] << 2 | f->mode;
        return NPU_ERR_BAD_DESC;
    }
    for (unsigned i = 0; i < f->m; i++) {
        const uint8_t *a = s->spm + ((uint64_t)f->spm + (uint64_t)i * f->sstride) * s->B;
        for (unsigned rr = f->k_lo; rr < f->k; rr++)
            if (lane16(a, f->lane_hi ? S + rr : rr) == 0)
                s->cnt[NPU_CNT_macs_zero] += 4u * f->n;
        for (unsigned q = 0; q < 4; q++) {
            unsigned orow = f->obuf + (q >> 1) * f->m + i, lane0 = (q & 1u) * S;
            const uint8_t *o = s->obuf + (size_t)orow * F * 4 + 4u * lane0;
            uint8_t *d = stage(u, MEM_OBUF, (size_t)orow * F * 4 + 4u * lane0, (size_t)S * 4);
            for (unsigned cc = 0; cc < S; cc++) {
                uint32_t acc = f->acc ? rd32(o + 4 * cc) : 0;
                for (unsigned rr = f->k_lo; rr < S; rr++)
                    acc += (uint32_t)((int32_t)lane16(a, f->lane_hi ? S + rr : rr) *
                                      (int32_t)lane16(wtile(s, f->wbank, q) + (size_t)rr * S * 2, cc));
                wr32(d + 4 * cc, acc);
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

static unsigned exec_wave(npu_sim_t *s, unit_t *u, const insn_f_t *f, uint64_t *cost, uint32_t *info)
{
    unsigned F = s->F, S = s->S;
    static const unsigned isw_core[4] = {0, 2, 1, 3};
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
    if (range_rows(f->spm, f->sstride, f->m, 1, s->spm_words, info))
        return NPU_ERR_SPM_ADDR;
    if (obuf_bad(s, f->obuf, ws.obuf_rows, info))
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
            unsigned i = ws.start[j] + t, orow = f->obuf + ws.orow[j] + t;
            const uint8_t *a = s->spm + ((uint64_t)f->spm + (uint64_t)i * f->sstride) * s->B;
            const uint8_t *o = s->obuf + (size_t)orow * F * 4 + 4u * lane0;
            uint8_t *d = stage(u, MEM_OBUF, (size_t)orow * F * 4 + 4u * lane0, (size_t)width * 4);
            /* macs_zero: the row's lanes [k_lo, k) whose A element is zero, times n */
            for (unsigned rr = f->k_lo; rr < f->k && rr < depth; rr++)
                if (lane16(a, f->lane_hi ? S + rr % S : rr) == 0)
                    s->cnt[NPU_CNT_macs_zero] += f->n;
            for (unsigned cc = 0; cc < width; cc++) {
                uint32_t acc = f->acc ? rd32(o + 4 * cc) : 0;
                for (unsigned rr = f->k_lo; rr < depth; rr++) { /* lanes < k_lo are fed as zero */
                    unsigned rh = rr >= S, ch = cc >= S, q;
                    switch (f->mode) {
                    case NPU_MODE_FW: q = rh * 2 + ch; break;
                    case NPU_MODE_HSW: q = j * 2 + ch; break;
                    case NPU_MODE_VSW: q = rh * 2 + j; break;
                    default: q = isw_core[j]; break;
                    }
                    acc += (uint32_t)((int32_t)lane16(a, f->lane_hi ? S + rr % S : rr) *
                                      (int32_t)lane16(wtile(s, f->wbank, q) + (size_t)(rr % S) * S * 2, cc % S));
                }
                wr32(d + 4 * cc, acc);
            }
        }
        for (unsigned c = 0; c < 4; c++)
            if (ws.cores[j] >> c & 1u) {
                s->cnt[NPU_CNT_macs_core0 + c] += ws.len[j] * row_macs(s, f, c);
                s->cnt[NPU_CNT_busy_core0 + c] += ws.len[j];
            }
    }
    s->cnt[NPU_CNT_waves_fw + f->mode] += 1;
    s->cnt[NPU_CNT_rows_fw + f->mode] += f->m;
    s->cnt[NPU_CNT_busy_fw + f->mode] += ws.len[0]; /* lockstep slots */
    s->cnt[NPU_CNT_idle_pe_shape] +=
        (uint64_t)f->m * (4u * S * S / (f->mode == NPU_MODE_FW ? 1u : f->mode == NPU_MODE_ISW ? 4u : 2u)
                          - (uint64_t)(f->k - f->k_lo) * f->n);
    s->cnt[NPU_CNT_spm_rd_words] += f->m;
    /* one flit per slot and H channel: FW one row on L; VSW set 0 on L, set 1 on R; HSW sets
     * 0/1 packed on L; ISW sets 0/1 packed on L, sets 2/3 on R (the RTL's two H channels) */
    s->cnt[NPU_CNT_noc_h_flits] += f->mode == NPU_MODE_HSW ? ws.len[0]
                                 : f->mode == NPU_MODE_ISW ? ws.len[0] + ws.len[2] : f->m;
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
        s->cnt[NPU_CNT_noc_h_link0] += ws.len[0];
        s->cnt[NPU_CNT_noc_h_link2] += ws.len[1];
        break;
    case NPU_MODE_VSW:
        s->cnt[NPU_CNT_noc_h_link0] += ws.len[0];
        s->cnt[NPU_CNT_noc_h_link2] += ws.len[0];
        s->cnt[NPU_CNT_noc_h_link1] += ws.len[1];
        s->cnt[NPU_CNT_noc_h_link3] += ws.len[1];
        break;
    default:
        for (unsigned j = 0; j < 4; j++)
            s->cnt[NPU_CNT_noc_h_link0 + isw_core[j]] += ws.len[j];
        break;
    }
    s->cnt[NPU_CNT_obuf_writes] += (uint64_t)f->m * width;
    *cost = ws.len[0] + 2u * F;
    return 0;
}

/* One SPM word of a DRAIN: the OBUF lanes, or (acc) their int32 sum with the word's old value
 * (read from the SPM as it was before this instruction: destinations never overlap). */
static void drain_word(npu_sim_t *s, unit_t *u, uint64_t w, const uint8_t *o, unsigned acc)
{
    uint8_t *d = stage(u, MEM_SPM, w * s->B, s->B);
    if (!acc) {
        memcpy(d, o, s->B);
        return;
    }
    for (unsigned l = 0; l < s->B / 4; l++)
        wr32(d + 4 * l, rd32(o + 4 * l) + rd32(s->spm + w * s->B + 4 * l));
    s->cnt[NPU_CNT_spm_rd_words] += 1;
}

static unsigned exec_drain(npu_sim_t *s, unit_t *u, const insn_f_t *f, uint64_t *cost, uint32_t *info)
{
    unsigned F = s->F, B = s->B;
    if (!f->rows || (!f->split && f->hi) || f->hi > f->rows ||
        (f->acc && (f->split ? (!f->sstride || f->split < f->rows) : f->sstride < 2))) {
        *info = 0; /* an accumulating DRAIN's destinations must not overlap */
        return NPU_ERR_BAD_DESC;
    }
    if (!f->split) {
        if (range_rows(f->spm, f->sstride, f->rows, 2, s->spm_words, info))
            return NPU_ERR_SPM_ADDR;
    } else {
        uint64_t lo = (uint64_t)f->spm + (uint64_t)(f->rows - 1) * f->sstride;
        uint64_t hi = f->hi ? (uint64_t)f->spm + (uint64_t)(f->split + f->hi - 1) * f->sstride : 0;
        uint64_t last = hi > lo ? hi : lo;
        if (last >= s->spm_words) {
            *info = (uint32_t)last;
            return NPU_ERR_SPM_ADDR;
        }
    }
    if (obuf_bad(s, f->obuf, f->rows, info))
        return NPU_ERR_OBUF_ADDR;
    for (unsigned r = 0; r < f->rows; r++) {
        uint64_t w = (uint64_t)f->spm + (uint64_t)r * f->sstride;
        const uint8_t *o = s->obuf + ((size_t)f->obuf + r) * F * 4;
        if (!f->split) {
            /* lanes 0..S-1 then S..2S-1: the OBUF row's 8S bytes land in two consecutive words */
            drain_word(s, u, w, o, f->acc);
            drain_word(s, u, w + 1, o + B, f->acc);
        } else {
            drain_word(s, u, w, o, f->acc);
            if (r < f->hi)
                drain_word(s, u, w + (uint64_t)f->split * f->sstride, o + B, f->acc);
        }
    }
    s->cnt[NPU_CNT_obuf_drain_rows] += f->rows;
    s->cnt[NPU_CNT_spm_wr_words] += f->rows + (f->split ? f->hi : f->rows);
    *cost = 2u * f->rows;
    return 0;
}

/* ---- queues, tokens, fetch ------------------------------------------------------------ */

static unsigned queue_of(unsigned op)
{
    switch (op) {
#define X(n, v, q, t) case v: return (#q)[0] == 'L' ? QL : (#q)[0] == 'E' ? QE : QS;
        NPU_OPCODES(X)
#undef X
    default: return 3;
    }
}

/* Token channels an instruction of queue q pops / pushes (-1: none or ignored). */
static void tok_map(unsigned q, uint32_t w0, int pop[2], int push[2])
{
    unsigned pp = (w0 >> 8) & 1u, pn = (w0 >> 9) & 1u, up = (w0 >> 10) & 1u, un = (w0 >> 11) & 1u;
    pop[0] = pop[1] = push[0] = push[1] = -1;
    switch (q) {
    case QL: /* prev does not exist */
        if (pn) pop[1] = T_E2L;
        if (un) push[1] = T_L2E;
        break;
    case QE:
        if (pp) pop[0] = T_L2E;
        if (pn) pop[1] = T_S2E;
        if (up) push[0] = T_E2L;
        if (un) push[1] = T_E2S;
        break;
    default: /* STORE: next does not exist */
        if (pp) pop[0] = T_E2S;
        if (up) push[0] = T_S2E;
        break;
    }
}

static uint32_t qstate(const npu_sim_t *s)
{
    uint32_t v = 0;
    for (int q = 0; q < 3; q++)
        v |= (uint32_t)(s->q[q].n > 15 ? 15 : s->q[q].n) << (4 * q);
    for (int t = 0; t < 4; t++)
        v |= (uint32_t)(s->tok[t] > 15 ? 15 : s->tok[t]) << (12 + 4 * t);
    v |= (uint32_t)(s->fetch_pc >= s->prog_len) << 28;
    for (int q = 0; q < 3; q++)
        v |= (uint32_t)(s->u[q].busy != 0) << (29 + q);
    return v;
}

static void complete(npu_sim_t *s, unsigned q)
{
    unit_t *u = &s->u[q];
    int pop[2], push[2];
    commit(s, u);
    u->busy = 0;
    s->cnt[NPU_CNT_insn_load + q]++;
    tok_map(q, u->w0, pop, push);
    for (int i = 0; i < 2; i++)
        if (push[i] >= 0 && ++s->tok[push[i]] > (unsigned)s->cfg.token_max) {
            fail(s, NPU_ERR_TOKEN_OVERFLOW, u->pc, 1u << push[i]);
            return;
        }
}

enum { TRY_IDLE, TRY_WAIT, TRY_STARTED, TRY_ERROR };

static int try_start(npu_sim_t *s, unsigned q, uint64_t now)
{
    queue_t *qu = &s->q[q];
    unit_t *u = &s->u[q];
    qentry_t *e;
    int pop[2], push[2];
    insn_f_t f;
    uint64_t cost = 1;
    uint32_t info = 0;
    unsigned err = 0;
    if (u->busy || !qu->n)
        return TRY_IDLE;
    e = &qu->e[qu->head];
    tok_map(q, e->w[0], pop, push);
    for (int i = 0; i < 2; i++)
        if (pop[i] >= 0 && s->tok[pop[i]] == 0) {
            s->cnt[NPU_CNT_wait_tok_load + q]++;
            return TRY_WAIT;
        }
    for (int i = 0; i < 2; i++)
        if (pop[i] >= 0)
            s->tok[pop[i]]--;
    u->pc = e->pc;
    u->w0 = e->w[0];
    qu->head = (qu->head + 1) % qu->cap;
    qu->n--;
    decode(e->w, &f);
    switch (f.op) {
    case NPU_OP_LOAD: err = exec_load(s, u, &f, &cost, &info); break;
    case NPU_OP_FILL: err = exec_fill(s, u, &f, &cost, &info); break;
    case NPU_OP_STORE: err = exec_store(s, u, &f, &cost, &info); break;
    case NPU_OP_LDW: err = exec_ldw(s, u, &f, &cost, &info); break;
    case NPU_OP_WAVE: err = exec_wave(s, u, &f, &cost, &info); break;
    case NPU_OP_DRAIN: err = exec_drain(s, u, &f, &cost, &info); break;
    default: cost = 1; break; /* SYNC_* */
    }
    if (err) {
        u->nwr = u->npool = 0;
        fail(s, err, u->pc, info);
        return TRY_ERROR;
    }
    if (s->jitter)
        cost += rnd(s) % (cost * s->jitter / 100 + 1);
    u->busy = 1;
    u->done_at = now + (cost ? cost : 1);
    return TRY_STARTED;
}

static int fetch(npu_sim_t *s)
{
    uint64_t a, first, last;
    uint32_t w[4];
    unsigned q;
    queue_t *qu;
    if (s->fetch_pc >= s->prog_len)
        return TRY_IDLE;
    a = (uint64_t)s->prog_base + 16u * (uint64_t)s->fetch_pc;
    for (int i = 0; i < 4; i++)
        w[i] = rd32(s->dram + a + 4 * i);
    q = queue_of(w[0] & 0xFFu);
    if (q > QS) {
        fail(s, NPU_ERR_ILLEGAL_OPCODE, s->fetch_pc, w[0] & 0xFFu);
        return TRY_ERROR;
    }
    qu = &s->q[q];
    if (qu->n == qu->cap)
        return TRY_WAIT;
    /* count the program beats this instruction brings in (tag PROG) */
    first = a / s->B;
    last = (a + 15) / s->B;
    if (first < s->next_fetch_beat)
        first = s->next_fetch_beat;
    for (uint64_t b = first; b <= last; b++) {
        if (b == s->fetch_burst_end) { /* a new fetch burst: <= MAX_BURST_BEATS, not across 4 KiB */
            uint64_t mb = s->cfg.max_burst_beats > 0 ? (uint64_t)s->cfg.max_burst_beats : 1;
            uint64_t left = s->prog_beats - (b - s->prog_base / s->B);
            uint64_t len = left < mb ? left : mb, to4k = (4096 - (b * s->B) % 4096) / s->B;
            if (to4k && len > to4k)
                len = to4k;
            s->fetch_burst_end = b + len;
            s->cnt[NPU_CNT_dram_rd_bursts]++;
            s->rd_bursts++;
        }
        s->cnt[NPU_CNT_dram_rd_prog] += s->B;
        s->rd_beats++;
    }
    if (last + 1 > s->next_fetch_beat)
        s->next_fetch_beat = last + 1;
    qu->e[(qu->head + qu->n) % qu->cap].pc = s->fetch_pc;
    memcpy(qu->e[(qu->head + qu->n) % qu->cap].w, w, sizeof w);
    qu->n++;
    s->fetch_pc++;
    return TRY_STARTED;
}

/* Processes the cycle s->cycle and returns the number of cycles consumed (1, or a jump over
 * cycles in which nothing can change), at most limit (>= 1). */
static uint64_t tick(npu_sim_t *s, uint64_t limit)
{
    uint64_t now = s->cycle, next = UINT64_MAX, span;
    int progress = 0, waiting[3] = {0, 0, 0}, anybusy = 0, order[3] = {QL, QE, QS};
    for (unsigned q = 0; q < 3; q++)
        if (s->u[q].busy && s->u[q].done_at <= now) {
            complete(s, q);
            progress = 1;
            if (halted(s))
                goto one;
        }
    for (int i = 2; i > 0; i--) { /* random start order: the queues race differently per seed */
        int j = (int)(rnd(s) % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (int i = 0; i < 3; i++) {
        int r = try_start(s, (unsigned)order[i], now);
        if (r == TRY_ERROR)
            goto one;
        if (r == TRY_STARTED)
            progress = 1;
        if (r == TRY_WAIT)
            waiting[order[i]] = 1;
    }
    switch (fetch(s)) {
    case TRY_ERROR: goto one;
    case TRY_STARTED: progress = 1; break;
    default: break;
    }
    if (s->fetch_pc >= s->prog_len && !s->q[0].n && !s->q[1].n && !s->q[2].n && !s->u[0].busy &&
        !s->u[1].busy && !s->u[2].busy) {
        s->status = NPU_STATE_DONE;
        goto one;
    }
    if (progress) {
        s->last_progress = now;
        goto one;
    }
    /* Nothing happened: nothing will until the next completion (or the watchdog fires). */
    for (unsigned q = 0; q < 3; q++)
        if (s->u[q].busy) {
            anybusy = 1;
            if (s->u[q].done_at < next)
                next = s->u[q].done_at;
        }
    if (anybusy)
        s->last_progress = now;
    else if (s->watchdog && s->last_progress + s->watchdog < next)
        next = s->last_progress + s->watchdog;
    span = next == UINT64_MAX ? limit : (next > now ? next - now : 1);
    if (span > limit)
        span = limit;
    if (span < 1)
        span = 1;
    for (unsigned q = 0; q < 3; q++)
        if (waiting[q])
            s->cnt[NPU_CNT_wait_tok_load + q] += span - 1;
    s->cnt[NPU_CNT_cycles] += span;
    s->cycle += span;
    if (!anybusy && s->watchdog && s->cycle >= s->last_progress + s->watchdog) {
        static const unsigned pref[3] = {QE, QL, QS};
        uint32_t pc = s->fetch_pc;
        for (unsigned i = 0; i < 3; i++)
            if (s->q[pref[i]].n) {
                pc = s->q[pref[i]].e[s->q[pref[i]].head].pc;
                break;
            }
        fail(s, NPU_ERR_DEADLOCK, pc, qstate(s));
    }
    return span;
one:
    s->cnt[NPU_CNT_cycles]++;
    s->cycle++;
    return 1;
}

static void advance(npu_sim_t *s, uint64_t n)
{
    while (n > 0) {
        if (!running(s)) {
            s->cycle += n;
            return;
        }
        n -= tick(s, n);
    }
}

static void start(npu_sim_t *s)
{
    if (running(s))
        return;
    for (int q = 0; q < 3; q++) {
        s->q[q].head = s->q[q].n = 0;
        s->u[q].busy = 0;
        s->u[q].nwr = s->u[q].npool = 0;
        s->u[q].pc = 0;
    }
    memset(s->tok, 0, sizeof s->tok);
    memset(s->bank_loaded, 0, sizeof s->bank_loaded); /* start resets the units (RTL loaded4) */
    s->fetch_pc = 0;
    s->next_fetch_beat = s->fetch_burst_end = s->prog_base / s->B;
    s->prog_beats = cdiv(16u * (uint64_t)s->prog_len, s->B);
    s->err_pc = s->err_info = 0;
    s->last_progress = s->cycle;
    s->status = NPU_STATE_RUNNING;
    if (s->prog_base % (s->B > 16 ? s->B : 16) ||
        (uint64_t)s->prog_base + 16u * (uint64_t)s->prog_len > s->dram_bytes)
        fail(s, NPU_ERR_BAD_PROGRAM, 0, s->prog_base);
}

/* ---- the npu_sim.h API ---------------------------------------------------------------- */

npu_sim_t *npu_sim_open(const npu_dram_timing_t *t)
{
    npu_sim_t *s = calloc(1, sizeof *s);
    unsigned F;
    if (!s)
        return NULL;
    s->cfg = g_cfg;
    s->S = (unsigned)g_cfg.s;
    s->F = F = 2u * s->S;
    s->B = 4u * s->S;
    if (t)
        s->t = *t;
    else {
        s->t.bytes_per_cycle = g_cfg.dram_bw;
        s->t.latency = (unsigned)g_cfg.dram_latency;
        s->t.burst_cost = (unsigned)g_cfg.dram_burst_cost;
    }
    s->jitter = g_jitter;
    s->rng = s->t.seed ? s->t.seed * 0x9E3779B97F4A7C15ull : 0x2545F4914F6CDD1Dull;
    if (!s->rng)
        s->rng = 1;
    s->dram_bytes = (size_t)1 << g_cfg.dram_addr_bits;
    s->spm_words = (size_t)g_cfg.spm_banks * (size_t)g_cfg.spm_bank_words;
    s->obuf_rows2 = 2u * (size_t)g_cfg.obuf_rows;
    s->dram = calloc(s->dram_bytes, 1);
    s->spm = calloc(s->spm_words, s->B);
    s->obuf = calloc(s->obuf_rows2 * F, 4);
    s->wb = calloc(2u * F * F, 2); /* 2 banks x 4 cores x S x S */
    for (int q = 0; q < 3; q++) {
        s->q[q].cap = g_cfg.queue_depth > 0 ? (unsigned)g_cfg.queue_depth : 1u;
        s->q[q].e = calloc(s->q[q].cap, sizeof *s->q[q].e);
        if (!s->q[q].e)
            s->dram = NULL;
    }
    if (!s->dram || !s->spm || !s->obuf || !s->wb) {
        npu_sim_close(s);
        return NULL;
    }
    return s;
}

void npu_sim_close(npu_sim_t *s)
{
    if (!s)
        return;
    free(s->dram);
    free(s->spm);
    free(s->obuf);
    free(s->wb);
    for (int q = 0; q < 3; q++) {
        free(s->q[q].e);
        free(s->u[q].wr);
        free(s->u[q].pool);
    }
    free(s);
}

uint8_t *npu_sim_dram(npu_sim_t *s, size_t *bytes)
{
    if (bytes)
        *bytes = s->dram_bytes;
    return s->dram;
}

void npu_sim_csr_write(npu_sim_t *s, uint32_t addr, uint32_t v)
{
    switch (addr) {
    case NPU_CSR_CTRL:
        if (v & 2u)
            memset(s->cnt, 0, sizeof s->cnt);
        if (v & 1u)
            start(s);
        break;
    case NPU_CSR_PROG_BASE: s->prog_base = v; break;
    case NPU_CSR_PROG_LEN: s->prog_len = v; break;
    case NPU_CSR_WATCHDOG: s->watchdog = v; break;
    default: break; /* read-only or unmapped */
    }
    advance(s, 1);
}

uint32_t npu_sim_csr_read(npu_sim_t *s, uint32_t addr)
{
    if (addr >= NPU_CSR_CNT_LO && addr < NPU_CSR_CNT_LO + NPU_NUM_COUNTERS)
        return (uint32_t)s->cnt[addr - NPU_CSR_CNT_LO];
    if (addr >= NPU_CSR_CNT_HI && addr < NPU_CSR_CNT_HI + NPU_NUM_COUNTERS)
        return (uint32_t)(s->cnt[addr - NPU_CSR_CNT_HI] >> 32);
    switch (addr) {
    case NPU_CSR_STATUS: return s->status;
    case NPU_CSR_ERR_PC: return s->err_pc;
    case NPU_CSR_ERR_INFO: return s->err_info;
    case NPU_CSR_PROG_BASE: return s->prog_base;
    case NPU_CSR_PROG_LEN: return s->prog_len;
    case NPU_CSR_WATCHDOG: return s->watchdog;
    case NPU_CSR_HW_S: return s->S;
    case NPU_CSR_HW_SPM: return (uint32_t)s->spm_words;
    case NPU_CSR_HW_OBUF: return (uint32_t)s->cfg.obuf_rows;
    case NPU_CSR_QSTATE: return qstate(s);
    case NPU_CSR_PC_L: return s->q[QL].n && !s->u[QL].busy ? s->q[QL].e[s->q[QL].head].pc : s->u[QL].pc;
    case NPU_CSR_PC_E: return s->q[QE].n && !s->u[QE].busy ? s->q[QE].e[s->q[QE].head].pc : s->u[QE].pc;
    case NPU_CSR_PC_S: return s->q[QS].n && !s->u[QS].busy ? s->q[QS].e[s->q[QS].head].pc : s->u[QS].pc;
    case NPU_CSR_FETCH_PC: return s->fetch_pc;
    default: return 0;
    }
}

/* The functional model has no RTL assertions and never executes $finish. */
int npu_sim_finished(npu_sim_t *s) { (void)s; return 0; }
const char *npu_sim_assert_msg(npu_sim_t *s, uint64_t *cycle)
{
    (void)s;
    (void)cycle;
    return NULL;
}

int npu_sim_run(npu_sim_t *s, uint64_t max_cycles)
{
    if (halted(s))
        return 1;
    advance(s, max_cycles);
    return halted(s) ? 1 : 0;
}

void npu_sim_step(npu_sim_t *s, uint64_t n) { advance(s, n); }

uint64_t npu_sim_cycle(npu_sim_t *s) { return s->cycle; }

int npu_sim_trace(npu_sim_t *s, const char *fst_path, uint64_t start_cycle, uint64_t end_cycle)
{
    (void)s;
    (void)fst_path;
    (void)start_cycle;
    (void)end_cycle;
    return -1;
}

void npu_sim_dram_stats(npu_sim_t *s, uint64_t *rd_beats, uint64_t *wr_beats, uint64_t *rd_bursts,
                        uint64_t *wr_bursts, uint64_t *stall_cycles)
{
    if (rd_beats) *rd_beats = s->rd_beats;
    if (wr_beats) *wr_beats = s->wr_beats;
    if (rd_bursts) *rd_bursts = s->rd_bursts;
    if (wr_bursts) *wr_bursts = s->wr_bursts;
    if (stall_cycles) *stall_cycles = s->stalls;
}
