/* slice_cost.c - cost constants and primitive costs of the slicing stage; see slice_cost.h. */
#include "compile/slice/slice_cost.h"

#include <string.h>

#include "compile/gemm/flexsa_mode.h"
#include "compile/slice/slice.h"
#include "compile/slice/slice_memo.h"

static uint32_t q16(uint64_t num, uint64_t den) /* round(num / den) in Q16 */
{
    return (uint32_t)(((num << NPU_SLICE_Q) + den / 2) / den);
}

/* The constants `npu calibrate` fitted on the RTL (configs/<cfg>.calib, carried by the config). */
static npu_slice_cost_t calibrated(const npu_cfg_calib_t *c, int mode)
{
    npu_slice_cost_t k;
    memset(&k, 0, sizeof k);
    k.mode = mode;
    k.xfer_fixed = c->xfer_fixed;
    k.burst = c->burst;
    k.byte = c->byte;
    k.wave = c->wave;
    k.drain_fixed = c->drain_fixed;
    k.drain_row = c->drain_row;
    k.lat_fixed = c->lat_fixed;
    k.window = c->window;
    k.xfer_idle = c->xfer_idle;
    return k;
}

/* A STORE's fixed cost: a LOAD's less the read latency it never waits for (the write's B
 * response follows its last W beat within a cycle or two, which the LOAD's fit also holds).
 * The estimator (model/prog_time.c) charges it; the slicing search still charges xfer_fixed +
 * xfer_idle (npu_slice_xfer_alone). */
static uint32_t store_fixed(uint64_t xfer_fixed, const npu_cfg_t *cfg)
{
    uint32_t lat = cfg->dram_latency > 0 ? (uint32_t)cfg->dram_latency << NPU_SLICE_Q : 0;
    return xfer_fixed > lat ? (uint32_t)(xfer_fixed - lat) : 0;
}

/* The shared credit's cost of a byte: byte x min(DRAM_BW, B) / DRAM_BW (slice_cost.h). The
 * bytes-only cost keeps one port (share = byte): the paper's model knows bytes, not ports, and
 * --slicing noburst is the baseline it is compared against (issue 14 acceptance 6). */
static uint32_t share_of(uint32_t byte, const npu_cfg_t *cfg, int mode)
{
    uint64_t B = (uint64_t)npu_cfg_beat(cfg), bw = cfg->dram_bw > 0 ? (uint64_t)cfg->dram_bw : B;
    if (mode == NPU_SLICE_NOBURST || bw <= B)
        return byte;
    return (uint32_t)(((uint64_t)byte * B + bw / 2) / bw);
}

npu_slice_cost_t npu_slice_cost_default(const npu_cfg_t *cfg, int mode)
{
    npu_slice_cost_t k = cfg->calib.valid ? calibrated(&cfg->calib, mode) : npu_slice_cost_formula(cfg, mode);
    k.policy = NPU_POLICY_FLEXSA;
    k.share = share_of(k.byte, cfg, mode);
    k.store_fixed = store_fixed(npu_slice_xfer_alone(&k), cfg);
    return k;
}

/* v + d (Q16), not below 0. */
static uint32_t q16_add(uint32_t v, double d)
{
    double r = (double)v + d * (1 << NPU_SLICE_Q);
    return r <= 0 ? 0 : (uint32_t)(r + 0.5);
}

void npu_slice_cfg_retime(npu_cfg_t *cfg, double bw, int latency)
{
    double B = npu_cfg_beat(cfg), out = cfg->max_outstanding > 0 ? cfg->max_outstanding : 1;
    npu_cfg_calib_t *c = &cfg->calib;
    if (bw > 0) {
        double old = cfg->dram_bw < B ? cfg->dram_bw : B, now = bw < B ? bw : B;
        if (c->valid)
            c->byte = (uint32_t)((double)c->byte * old / now + 0.5);
        cfg->dram_bw = (int)bw < bw ? (int)bw + 1 : (int)bw;
    }
    if (latency >= 0) {
        double d = latency - cfg->dram_latency;
        if (c->valid) { /* the latency: in the idle engine's term when LOADs pipeline */
            if (cfg->load_pipeline)
                c->xfer_idle = q16_add(c->xfer_idle, d);
            else
                c->xfer_fixed = q16_add(c->xfer_fixed, d);
            c->window = q16_add(c->window, d / out);
            c->lat_fixed = q16_add(c->lat_fixed, d * (out - 1) / out);
        }
        cfg->dram_latency = latency;
    }
}

npu_slice_cost_t npu_slice_cost_formula(const npu_cfg_t *cfg, int mode)
{
    npu_slice_cost_t k;
    unsigned B = (unsigned)npu_cfg_beat(cfg);
    unsigned bw = cfg->dram_bw > 0 && (unsigned)cfg->dram_bw < B ? (unsigned)cfg->dram_bw : B;
    unsigned lat = cfg->dram_latency > 0 ? (unsigned)cfg->dram_latency : 0;
    unsigned bc = cfg->dram_burst_cost > 0 ? (unsigned)cfg->dram_burst_cost : 0;
    unsigned out = cfg->max_outstanding > 0 ? (unsigned)cfg->max_outstanding : 1;
    memset(&k, 0, sizeof k);
    k.mode = mode;
    k.byte = q16(1, bw);
    k.burst = q16(bc, 1);
    /* pipelined LOADs: a queued descriptor costs the data side's cycle between descriptors, the
     * latency and the other stages only the first after an idle engine */
    k.xfer_fixed = q16(cfg->load_pipeline ? 1 : lat + 4, 1);
    k.xfer_idle = cfg->load_pipeline ? q16(lat + 3, 1) : 0;
    k.store_fixed = store_fixed(npu_slice_xfer_alone(&k), cfg);
    k.window = q16(lat + bc + 1, out);
    k.lat_fixed = q16((uint64_t)(lat + bc + 1) * (out - 1), out);
    k.wave = q16(3 * (uint64_t)cfg->s + 8, 1);
    k.drain_fixed = q16((uint64_t)cfg->s, 1);
    k.drain_row = q16(1, 2);
    k.policy = NPU_POLICY_FLEXSA;
    k.share = share_of(k.byte, cfg, mode);
    return k;
}

const char *npu_slice_mode_name(int mode) { return mode == NPU_SLICE_NOBURST ? "noburst" : "burst"; }

int npu_slice_mode_parse(const char *s)
{
    if (!strcmp(s, "burst"))
        return NPU_SLICE_BURST;
    if (!strcmp(s, "noburst"))
        return NPU_SLICE_NOBURST;
    return -1;
}

uint64_t npu_slice_xfer_bus(const npu_slice_cost_t *k, const npu_bursts_t *b, unsigned beat)
{
    if (k->mode == NPU_SLICE_NOBURST)
        return b->bytes * k->byte;
    return b->beats * beat * k->byte + b->bursts * k->burst;
}

uint64_t npu_slice_share(const npu_slice_cost_t *k)
{
    return k->share ? k->share : k->byte; /* a cost set by hand without it: one port */
}

uint64_t npu_slice_xfer_share(const npu_slice_cost_t *k, const npu_bursts_t *b, unsigned beat)
{
    uint64_t share = npu_slice_share(k);
    if (k->mode == NPU_SLICE_NOBURST)
        return b->bytes * share;
    return b->beats * beat * share + b->bursts * k->burst;
}

uint64_t npu_slice_xfer_cost(const npu_slice_cost_t *k, const npu_bursts_t *b, unsigned beat, int store)
{
    uint64_t bus = npu_slice_xfer_bus(k, b, beat), lat;
    if (k->mode == NPU_SLICE_NOBURST)
        return bus;
    if (store) /* the STORE engine takes one descriptor at a time: each pays what a LOAD alone does */
        return bus + b->xfers * npu_slice_xfer_alone(k);
    bus += b->xfers * k->xfer_fixed;
    /* pipelined: two descriptors in the engine, so a queued LOAD's latency hides behind the data
     * of the one before it alone; a train of x costs at least (x * xfer_idle + bus) / 2 */
    if ((b->xfers * k->xfer_idle + bus) / 2 > bus)
        bus = (b->xfers * k->xfer_idle + bus) / 2;
    lat = b->xfers * k->lat_fixed + b->bursts * k->window;
    return bus > lat ? bus : lat;
}

uint64_t npu_slice_xfer_alone(const npu_slice_cost_t *k) { return k->xfer_fixed + k->xfer_idle; }

uint64_t npu_slice_idle(const npu_slice_cost_t *k) { return k->mode == NPU_SLICE_NOBURST ? 0 : k->xfer_idle; }

void npu_slice_pipe_init(npu_slice_pipe_t *p, const npu_slice_cost_t *k)
{
    memset(p, 0, sizeof *p);
    p->idle = npu_slice_idle(k);
}

/* The latency the loads of the step now walked pay (see slice_cost.h): all of it at the first
 * step, none at the second (queued behind the first's), else what of it the wait for the buffer
 * compute freed (E two steps back) leaves uncovered by the DMA's last step. */
static uint64_t pipe_idle(const npu_slice_pipe_t *p, uint64_t L)
{
    uint64_t over;
    if (!p->idle || !L || p->steps == 1)
        return 0;
    if (p->steps == 0)
        return p->idle;
    over = p->E_prev2 + p->idle > p->dma_prev ? p->E_prev2 + p->idle - p->dma_prev : 0;
    return over < p->idle ? over : p->idle;
}

void npu_slice_pipe_step_x(npu_slice_pipe_t *p, uint64_t L, uint64_t Lb, uint64_t Lc, uint64_t E, uint64_t D,
                           uint64_t S, uint64_t Sb, uint64_t Sc)
{
    uint64_t x = pipe_idle(p, L), rd = L + x + p->Sc_prev2, wr = p->S_prev2 + Lc;
    uint64_t dma = rd > Lb + p->Sb_prev2 ? rd : Lb + p->Sb_prev2; /* the loads in turn, the credit shared */
    dma = dma > wr ? dma : wr; /* the store on its own port */
    uint64_t ex = p->E_prev > p->D_prev2 ? p->E_prev : p->D_prev2; /* beside: a drain */
    p->T += p->steps == 0 ? L + x : (ex > dma ? ex : dma);
    p->dma_prev = p->steps == 0 ? L + x : dma;
    p->E_prev2 = p->E_prev;
    p->E_prev = E;
    p->S_prev2 = p->S_prev;
    p->S_prev = S;
    p->Sb_prev2 = p->Sb_prev;
    p->Sb_prev = Sb;
    p->Sc_prev2 = p->Sc_prev;
    p->Sc_prev = Sc;
    p->D_prev2 = p->D_prev;
    p->D_prev = D;
    p->steps++;
}

void npu_slice_pipe_step_w(npu_slice_pipe_t *p, uint64_t L, uint64_t Lb, uint64_t E, uint64_t D, uint64_t S,
                           uint64_t Sb)
{
    npu_slice_pipe_step_x(p, L, Lb, 0, E, D, S, Sb, 0);
}

void npu_slice_pipe_step_d(npu_slice_pipe_t *p, uint64_t L, uint64_t Lb, uint64_t E, uint64_t D, uint64_t S)
{
    npu_slice_pipe_step_w(p, L, Lb, E, D, S, S);
}

void npu_slice_pipe_step(npu_slice_pipe_t *p, uint64_t L, uint64_t Lb, uint64_t E, uint64_t S)
{
    npu_slice_pipe_step_d(p, L, Lb, E, 0, S);
}

uint64_t npu_slice_pipe_end(const npu_slice_pipe_t *p)
{
    uint64_t tail = p->D_prev2 > p->S_prev2 ? p->D_prev2 : p->S_prev2;
    return p->T + (p->E_prev > tail ? p->E_prev : tail) + p->D_prev + p->S_prev;
}

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

uint64_t npu_slice_compute_cost(const npu_slice_cost_t *k, int S, int split, int64_t m, int64_t n,
                                int64_t taps, int64_t kd)
{
    int64_t nblk = cdiv(n, S), rows = m, blk = nblk;
    switch (split) {
    case NPU_SLICE_SPLIT_N: blk = cdiv(nblk, 4); break;
    case NPU_SLICE_SPLIT_M: rows = cdiv(m, 4); break;
    default:
        blk = cdiv(nblk, 2);
        rows = cdiv(m, 2);
        break;
    }
    uint64_t r = (uint64_t)rows << NPU_SLICE_Q, turn = (r + k->wave) / 2; /* the bank turnaround */
    return (uint64_t)(taps * cdiv(kd, S) * blk) * (r > turn ? r : turn);
}

uint64_t npu_slice_wave_time(uint64_t r, uint64_t steps)
{
    uint64_t pair = (steps + NPU_SLICE_LDW_C) << NPU_SLICE_Q;
    return r > pair ? r : pair;
}

/* The mode a block of nn x kk (n, k) runs in under the policy (1G4C: its sub-tiles' ISW). */
static npu_mode_t block_mode(const npu_slice_cost_t *k, int S, int64_t nn, int64_t kk)
{
    if (k->policy == NPU_POLICY_FLEXSA)
        return npu_flexsa_mode(S, (int)nn, (int)kk);
    return k->policy == NPU_POLICY_1G4C ? NPU_MODE_ISW : NPU_MODE_FW;
}

/* Q16 cycles of the waves of one nn x kk block of m rows (npu_slice_gemm_compute). */
static uint64_t block_time(const npu_slice_cost_t *k, int S, int64_t m, int64_t nn, int64_t kk)
{
    npu_mode_t md = block_mode(k, S, nn, kk);
    int64_t rows = npu_flexsa_split(md, (int)m, NULL);
    uint64_t depth = (uint64_t)(md == NPU_MODE_HSW || md == NPU_MODE_ISW ? S : 2 * S), ldw;
    uint64_t steps = k->policy == NPU_POLICY_1G1C ? depth : (uint64_t)S; /* 1G1C: mono LDWs */
    uint64_t t = npu_slice_wave_time((uint64_t)rows << NPU_SLICE_Q, steps);
    if (k->policy != NPU_POLICY_1G4C)
        return t;
    ldw = (uint64_t)(4 * (S + NPU_SLICE_LDW_ONE_C)) << NPU_SLICE_Q; /* four LDWs, one at a time */
    return (uint64_t)(cdiv(nn, S) * cdiv(kk, S)) * (t > ldw ? t : ldw);
}

/* Q16 cycles of a change from mode a to b, the mean of both directions (npu_slice_gemm_compute). */
static uint64_t change(int S, npu_mode_t a, npu_mode_t b)
{
    uint64_t gaps = (uint64_t)(npu_flexsa_mode_gap(a, b) + npu_flexsa_mode_gap(b, a)) * (uint64_t)S;
    return a == b ? 0 : (gaps << NPU_SLICE_Q) / 2 + (1u << NPU_SLICE_Q);
}

/* The mode changes of a FlexSA step's serpentine wave order (gemm_emit.c npu_gemm_block_at): k-block
 * rows of nb n-blocks, the even ones forwards, the odd ones backwards, each row's last n-block
 * alone possibly partial (mode ml, the others mf) and so the last k-block row (kl: its size):
 * a change inside every row of two modes, and one between the last two rows (at the n-block
 * they share: the last one after an even row, the first after an odd one). */
static uint64_t mode_changes(const npu_slice_cost_t *k, int S, int64_t n, int64_t kd)
{
    int64_t F = 2 * S, kb = cdiv(kd, F), nb = cdiv(n, F), nl = n - (nb - 1) * F, kl = kd - (kb - 1) * F;
    npu_mode_t mf = block_mode(k, S, F, F), ml = block_mode(k, S, nl, F);
    npu_mode_t lf = block_mode(k, S, F, kl), ll = block_mode(k, S, nl, kl);
    uint64_t c = 0;
    if (k->policy != NPU_POLICY_FLEXSA)
        return 0;
    if (nb > 1)
        c = (uint64_t)(kb - 1) * change(S, mf, ml) + change(S, lf, ll);
    else
        mf = ml, lf = ll; /* one n-block: its mode alone */
    if (kb > 1)
        c += (kb - 2) % 2 == 0 ? change(S, ml, ll) : change(S, mf, lf);
    return c;
}

static uint64_t gemm_compute(const npu_cfg_t *cfg, const npu_slice_cost_t *k, int64_t m, int64_t n, int64_t kd);

/* The slicing searches ask for the same few step shapes over and over (every tile combination's
 * classes): the answers, which depend on the policy, the SPM's banks, S, m, n and kd alone, are
 * remembered. */
#define GC_MEMO 128

uint64_t npu_slice_gemm_compute(const npu_cfg_t *cfg, const npu_slice_cost_t *k, int64_t m, int64_t n, int64_t kd)
{
    static npu_memo_slot_t memo[GC_MEMO];
    const int64_t key[NPU_MEMO_KEY] = {m, n, kd, (int64_t)cfg->spm_bank_words * 64 + cfg->spm_banks,
                                       (int64_t)k->policy * 256 + cfg->s + 1};
    npu_memo_slot_t *e;
    if (!npu_memo_find(memo, GC_MEMO, key, &e))
        e->v = gemm_compute(cfg, k, m, n, kd);
    return e->v;
}

uint64_t npu_slice_wave_collisions(const npu_cfg_t *cfg, const npu_wave_sets_t *ws, int nsets, uint64_t base,
                                   uint64_t stride)
{
    uint64_t words = (uint64_t)npu_cfg_spm_words(cfg), c = 0;
    for (unsigned t = 0; t < ws->len[0]; t++) {
        unsigned u[4], most = 1;
        int n = 0;
        for (int j = 0; j < nsets; j++)
            if (t < ws->len[j]) {
                uint64_t a = base + (uint64_t)(ws->start[j] + t) * stride;
                u[n++] = npu_spm_unit(cfg, words ? a % words : a);
            }
        for (int a = 0; a < n; a++) {
            unsigned same = 0;
            for (int b = 0; b < n; b++)
                same += u[a] == u[b];
            most = same > most ? same : most;
        }
        c += most - 1;
    }
    return c;
}

/* Q16 cycles a FlexSA step's waves lose to SPM sub-bank collisions between their sets (its HSW,
 * VSW and ISW blocks; FW has one set): A's m rows are cdiv(kd, 2S) words apart (the GEMM
 * emitter's tile), from word 0 or from its second buffer's (m rows on), the mean of the two, and
 * the waves of the k-block in word w read word w of each row, every n-block's alike. Measured:
 * 2048 x 6 x 21 at small-w2 lost 704 cycles over its 11 tiles of 192 rows (VSW and ISW waves at
 * stride 2) and none at 256 rows. */
static uint64_t gemm_collisions(const npu_cfg_t *cfg, const npu_slice_cost_t *k, int64_t m, int64_t n,
                                int64_t kd)
{
    int64_t F = 2 * cfg->s, kb = cdiv(kd, F), nb = cdiv(n, F), nl = n - (nb - 1) * F, kl = kd - (kb - 1) * F;
    uint64_t stride = (uint64_t)kb, c = 0;
    if (k->policy != NPU_POLICY_FLEXSA)
        return 0;
    for (int64_t w = 0; w < kb; w++)
        for (int last = 0; last < 2; last++) {
            int64_t cnt = last ? 1 : nb - 1;
            npu_mode_t md = block_mode(k, cfg->s, last ? nl : F, w < kb - 1 ? F : kl);
            npu_wave_sets_t ws;
            if (!cnt || md == NPU_MODE_FW)
                continue;
            int ns = npu_wave_sets((unsigned)md, (unsigned)m, &ws);
            for (uint64_t b = 0; b < 2; b++)
                c += (uint64_t)cnt * npu_slice_wave_collisions(cfg, &ws, ns, b * (uint64_t)m * stride + (uint64_t)w, stride);
        }
    return (c << NPU_SLICE_Q) / 2;
}

static uint64_t gemm_compute(const npu_cfg_t *cfg, const npu_slice_cost_t *k, int64_t m, int64_t n, int64_t kd)
{
    int S = cfg->s;
    int64_t F = 2 * S, kf = kd / F, nf = n / F, kl = kd % F, nl = n % F;
    uint64_t t = (uint64_t)(kf * nf) * block_time(k, S, m, F, F);
    if (nl)
        t += (uint64_t)kf * block_time(k, S, m, nl, F);
    if (kl)
        t += (uint64_t)nf * block_time(k, S, m, F, kl);
    if (nl && kl)
        t += block_time(k, S, m, nl, kl);
    return t + mode_changes(k, S, n, kd) + gemm_collisions(cfg, k, m, n, kd);
}

/* The sub-bank code of an address offset, carries ignored (the drain engine's pair choice,
 * rtl/npu_exec_decode.v sub_code: 16 bits). */
static unsigned sub_code(uint64_t v) { return npu_spm_sub_code(v & 0xFFFFu); }

/* Cycles one drained pair (rows r0 and r1, r1 < 0: r0 alone) takes: its SPM words (two per row;
 * a skinny row's second only for r < hi) written one per unit and cycle, so the most words in
 * one unit. Of at most four words, e equal pairs mean a most of 1 (e = 0), 2 (one or two
 * disjoint pairs), 3 (a triple: three pairs) or 4 (six). */
static unsigned pair_cycles(const npu_cfg_t *cfg, uint64_t base, uint64_t stride, int64_t split, int64_t hi,
                            int64_t r0, int64_t r1)
{
    static const unsigned most[7] = {1, 2, 2, 3, 0, 0, 4};
    unsigned u[4] = {~0u - 3, ~0u - 2, ~0u - 1, ~0u}, n = 0, e;
    for (int i = 0; i < 2; i++) {
        int64_t r = i ? r1 : r0;
        if (r < 0)
            continue;
        u[n++] = npu_spm_unit(cfg, base + (uint64_t)r * stride);
        if (!split || r < hi)
            u[n++] = npu_spm_unit(cfg, base + (uint64_t)(split ? r + split : r) * stride + (split ? 0 : 1));
    }
    /* the unused slots hold distinct values no unit takes (units are bank * 4 + sub-bank) */
    e = (u[0] == u[1]) + (u[0] == u[2]) + (u[0] == u[3]) + (u[1] == u[2]) + (u[1] == u[3]) + (u[2] == u[3]);
    return most[e];
}

static uint64_t drain_stalls(const npu_cfg_t *cfg, uint64_t base, int64_t m, int skinny, uint64_t stride);

/* npu_slice_drain_stalls walks every pair of rows: the slicing search asks it for the same few
 * tiles over and over (the estimator's searches spent half their time there), so the answers are
 * remembered. */
#define DS_MEMO 256

uint64_t npu_slice_drain_stalls(const npu_cfg_t *cfg, uint64_t base, int64_t m, int skinny, uint64_t stride)
{
    static npu_memo_slot_t memo[DS_MEMO];
    const int64_t key[NPU_MEMO_KEY] = {(int64_t)base, (int64_t)stride, m, skinny,
                                       (int64_t)cfg->spm_bank_words + 1};
    npu_memo_slot_t *e;
    if (!npu_memo_find(memo, DS_MEMO, key, &e))
        e->v = drain_stalls(cfg, base, m, skinny, stride);
    return e->v;
}

static uint64_t drain_stalls(const npu_cfg_t *cfg, uint64_t base, int64_t m, int skinny, uint64_t stride)
{
    int64_t rows = skinny ? (m + 1) / 2 : m, split = skinny ? rows : 0, hi = m - rows, h = (rows + 1) / 2;
    unsigned x = skinny ? sub_code((uint64_t)split * stride) : 1, ya = sub_code(stride);
    unsigned ys = sub_code((uint64_t)h * stride);
    int ok = skinny ? stride != 0 && split >= rows : stride >= 2;
    int two = ok && ((x && ys && ys != x) || !(x && ya && ya != x)); /* the engine's pair order */
    uint64_t lost = 0;
    for (int64_t i = 0; i < h; i++) { /* pair i: rows i, i + h (split) or 2i, 2i + 1 */
        int64_t r0 = two ? i : 2 * i, r1 = two ? i + h : 2 * i + 1;
        lost += pair_cycles(cfg, base, stride, split, hi, r0, r1 < rows ? r1 : -1) - 1u;
    }
    return lost;
}
