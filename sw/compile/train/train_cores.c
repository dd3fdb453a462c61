/* train_cores.c - the partitionings of the fused backward GEMM run one part per core (K, M,
 * N: npu_bwd_emit_kcores / _mcores / _ncores, train_emit.h; docs/training.md §4 "One part per core").
 * The whole-array lowering of the same partitionings (parts in sequence) is train_emit.c. */
#include "compile/train/train_emit.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cdiv(int a, int b) { return (a + b - 1) / b; }

/* ---- the K split one part per core (train_emit.h, docs/training.md §4 "One part per core") ---------- */

/* A per-core layout of `words` SPM words fits the SPM and the 16-bit address fields. */
static int spm_fits(const npu_cfg_t *cfg, long words)
{
    return words <= npu_cfg_spm_words(cfg) && words <= 0x10000;
}

/* The stats of a per-core program: dY and X^T loaded once, W^T w_loads times, 2*M*N*K MACs. */
static void cores_stats(npu_bwd_stats_t *st, int M, int K, int N, long w_loads)
{
    if (!st)
        return;
    memset(st, 0, sizeof *st);
    st->loads[NPU_TT_DY] = 1;
    st->loads[NPU_TT_X] = 1;
    st->loads[NPU_TT_W] = w_loads;
    st->dy_compulsory = 1;
    st->macs = 2ull * (uint64_t)M * (uint64_t)N * (uint64_t)K;
}

/* SPM layout (words): dY resident, X^T resident, two W^T buffers, two staging slots. A step
 * covers gx S-wide K-blocks of every part (dX) or gw S-wide column blocks (dW), as many as fit,
 * so that each STORE row is gx (gw) beats instead of one (a one-beat row is a burst of its own:
 * the first version, one block per step, spent most of its cycles in those bursts). */
typedef struct kc_layout {
    int S, F, Kp, nkb, nnb, nmb, mc, nmc, gx, gw;
    unsigned wdy, wx, wg, dy, xt, wb[2], st[2], slot;
    long words;
} kc_layout_t;

static void kc_plan_g(const npu_cfg_t *cfg, int M, int K, int N, int gx, int gw, int mc, kc_layout_t *l)
{
    memset(l, 0, sizeof *l);
    l->S = cfg->s;
    l->F = 2 * cfg->s;
    l->Kp = K / 4;
    l->nkb = l->Kp / l->S;
    l->nnb = cdiv(N, l->S);
    l->nmb = cdiv(M, l->S);
    l->gx = gx;
    l->gw = gw;
    l->mc = mc;
    l->nmc = cdiv(M, mc);
    l->wdy = (unsigned)cdiv(N, l->F);
    l->wx = (unsigned)cdiv(M, l->F);
    l->wg = (unsigned)cdiv(gx, 2);   /* W^T row of a step: gx blocks of S lanes */
    /* dX: [part][row][block] gx words per row and part; dW: K rows of gw words */
    l->slot = (unsigned)(4L * mc * gx > (long)K * gw ? 4L * mc * gx : (long)K * gw);
    l->dy = 0;
    l->xt = l->dy + (unsigned)M * l->wdy;
    l->wb[0] = l->xt + (unsigned)K * l->wx;
    l->wb[1] = l->wb[0] + 4u * (unsigned)N * l->wg;
    l->st[0] = l->wb[1] + 4u * (unsigned)N * l->wg;
    l->st[1] = l->st[0] + l->slot;
    l->words = (long)l->st[1] + (long)l->slot;
}

/* The most rows per dX step (m-chunks of mc rows, at most half an OBUF half: a bcast wave
 * writes 2m rows), then the widest steps that fit the SPM; 0 when nothing fits. Each W^T block
 * group is loaded again per m-chunk, and a STORE row of g beats is a burst of its own, so both
 * matter (measured at small without stalls: (64,64,64) 6214 cycles with the widest steps, 8354
 * with one block per step; (256,64,32) 18770 with all 256 rows one block wide, 13669 with 128
 * rows two blocks wide; (128,128,64) 17435 with 128 rows two blocks wide, 24496 with 32 rows
 * four blocks wide). */
static int kc_plan(const npu_cfg_t *cfg, int M, int K, int N, kc_layout_t *l)
{
    int nkb = K / 4 / cfg->s, nnb = cdiv(N, cfg->s), mcap = M < cfg->obuf_rows / 2 ? M : cfg->obuf_rows / 2;
    for (int mc = mcap; mc >= 1; mc = mc > 1 ? (mc + 1) / 2 : 0) {
        for (int g = nkb > nnb ? nkb : nnb; g >= 1; g--) {
            kc_plan_g(cfg, M, K, N, g < nkb ? g : nkb, g < nnb ? g : nnb, mc, l);
            if (spm_fits(cfg, l->words))
                return 1;
        }
        if (mc == 1)
            break;
    }
    return 0;
}

int npu_bwd_kcores_fits(const npu_cfg_t *cfg, int M, int K, int N)
{
    kc_layout_t l;
    if (M < 1 || N < 1 || K < 4 * cfg->s || K % (4 * cfg->s) != 0 || K / 2 > cfg->obuf_rows ||
        M > 0xFFFF || 2L * K > 0xFFFF || 2L * N > 0xFFFF)
        return 0;
    return kc_plan(cfg, M, K, N, &l);
}

typedef struct kc {
    char *msg;         /* the first failure (kc_fail) */
    size_t msgn;
    int err;
    npu_prog_t *p;
    unsigned bank, ob_next, obuf_rows, S;
} kc_t;

static void kc_fail(kc_t *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    npu_bwd_emit_vfail(e->msg, e->msgn, &e->err, fmt, ap);
    va_end(ap);
}

/* A DRAM address of the 32-bit field; a wider one fails the emission (like gemm_emit's daddr). */
static uint32_t kc_daddr(kc_t *e, uint64_t d)
{
    if (d > 0xFFFFFFFFull)
        kc_fail(e, "DRAM address beyond 32 bits");
    return (uint32_t)d;
}

static void kc_init(kc_t *e, const npu_cfg_t *cfg, npu_prog_t *out, char *msg, size_t msgn)
{
    memset(e, 0, sizeof *e);
    e->p = out;
    e->msg = msg;
    e->msgn = msgn;
    e->obuf_rows = (unsigned)cfg->obuf_rows;
    e->S = (unsigned)cfg->s;
}

/* Tokens of step g of the M and N emitters (dX steps, then dW steps from nsx, two staging slots):
 * its first LDW waits for the loads (the first step of each gradient); its first DRAIN waits
 * for the STORE of step g - 2 (the same slot); its STORE releases step g + 2. */
static void step_tokens(int g, int nsx, int nsteps, unsigned *pop_l, unsigned *pop_s, unsigned *push_s)
{
    *pop_l = g == 0 || g == nsx ? NPU_TOK_POP_PREV : 0;
    *pop_s = g >= 2 ? NPU_TOK_POP_NEXT : 0;
    *push_s = g + 2 < nsteps ? NPU_TOK_PUSH_PREV : 0;
}

/* Appends an encoded instruction with extra token flags; returns its index. */
static size_t put(kc_t *e, int rc, npu_insn_t *in, unsigned tok)
{
    if (rc != 0) {
        kc_fail(e, "a field does not fit its encoding");
        return 0;
    }
    npu_insn_tok(in, tok);
    if (npu_prog_push(e->p, in) != 0)
        kc_fail(e, "out of memory");
    return e->p->n - 1;
}

/* An OBUF region of `rows` (<= one half) after the previous one, wrapping; the hardware
 * interlocks a region's reuse with the DRAINs still reading it. */
static unsigned ob_alloc(kc_t *e, unsigned rows)
{
    unsigned h = e->obuf_rows;
    if (e->ob_next % h + rows > h)
        e->ob_next = (e->ob_next / h + 1) * h;
    if (e->ob_next >= 2 * h)
        e->ob_next = 0;
    unsigned ob = e->ob_next;
    e->ob_next += rows;
    return ob;
}

/*
 * Steps g = 0 .. nsx-1: dX of K-blocks [b0, b0 + gx) of every part (core q: columns q*Kp + b*S
 * ..); steps nsx .. nsx+nsw-1: dW of the S-wide column blocks [nb0, nb0 + gw) (core q: the rows
 * of part q). Step g drains into staging slot g % 2 and a dX step loads W^T into buffer g % 2.
 * Program order: loads of steps 0 and 1, then per step g: its EXEC, its STOREs, the loads of
 * g + 2. Tokens: the last LOAD of a step pushes l2e, its first EXEC pops it; the last DRAIN
 * pushes e2s (its STOREs pop it) and e2l when step g + 2 loads into the same buffer (its first
 * LOAD pops it); the last STORE pushes s2e when step g + 2 drains into the same slot (its first
 * DRAIN pops it).
 */
int npu_bwd_emit_kcores(const npu_cfg_t *cfg, const npu_bwd_args_t *a, npu_prog_t *out,
                        npu_bwd_stats_t *st, char *msg, size_t msgn)
{
    const npu_bwd_io_t *io = &a->io;
    int M = a->M, K = a->K, N = a->N;
    uint64_t B = (uint64_t)npu_cfg_beat(cfg);
    kc_layout_t l;
    kc_t e;
    npu_insn_t in;
    if (!npu_bwd_kcores_fits(cfg, M, K, N) || !kc_plan(cfg, M, K, N, &l)) {
        snprintf(msg, msgn, "per-core K split needs K a multiple of 4S, K/2 <= OBUF rows and "
                            "dY, X^T resident in the SPM");
        return -1;
    }
    kc_init(&e, cfg, out, msg, msgn);
    int S = l.S, nsx = cdiv(l.nkb, l.gx) * l.nmc, nsw = cdiv(l.nnb, l.gw), nsteps = nsx + nsw;
    cores_stats(st, M, K, N, 4L * nsx); /* W^T of a block group again for each m-chunk */
    for (int g = -2; g < nsteps && !e.err; g++) {
        if (g >= 0) {
            int slot = g % 2;
            unsigned sb = l.st[slot];
            unsigned pop_l = g <= nsx ? NPU_TOK_POP_PREV : 0; /* steps with loads */
            unsigned pop_s = g >= 2 ? NPU_TOK_POP_NEXT : 0;
            unsigned push_l = g + 2 < nsx ? NPU_TOK_PUSH_PREV : 0;
            unsigned pop_e = NPU_TOK_POP_PREV, push_s = g + 2 < nsteps ? NPU_TOK_PUSH_PREV : 0;
            size_t last = 0;
            if (g < nsx) { /* dX, K-blocks b0.. of every part, rows m0..: bcast waves, core q's own W^T */
                int b0 = g / l.nmc * l.gx, G = l.nkb - b0 < l.gx ? l.nkb - b0 : l.gx, m0 = g % l.nmc * l.mc;
                unsigned m = (unsigned)(M - m0 < l.mc ? M - m0 : l.mc);
                {
                    for (int j = 0; j < G; j++) {
                        unsigned ob = ob_alloc(&e, 2 * m);
                        for (int ns = 0; ns < l.nnb; ns++) {
                            unsigned k = (unsigned)(N - ns * S < S ? N - ns * S : S);
                            for (unsigned q = 0; q < 4; q++) {
                                int rc = npu_enc_ldw_cores(&in, e.bank, NPU_MODE_ISW,
                                                           l.wb[slot] + (q * (unsigned)N + (unsigned)(ns * S)) * l.wg +
                                                               (unsigned)(j / 2),
                                                           l.wg, k, (unsigned)S, 1u << q);
                                if (rc == 0 && j % 2)
                                    rc = npu_insn_lane_hi(&in);
                                put(&e, rc, &in, pop_l);
                                pop_l = 0;
                            }
                            int rc = npu_enc_wave(&in, e.bank, NPU_MODE_ISW, ns > 0, m,
                                                  l.dy + (unsigned)m0 * l.wdy + (unsigned)(ns / 2), l.wdy,
                                                  k, (unsigned)S, ob);
                            if (rc == 0)
                                rc = npu_insn_bcast(&in);
                            if (rc == 0 && ns % 2)
                                rc = npu_insn_lane_hi(&in);
                            put(&e, rc, &in, 0);
                            e.bank ^= 1u;
                        }
                        /* cores 0/1 (rows ob..): low lanes to part 0's region, high lanes to
                         * part 1's (split m rows further); cores 2/3 (rows ob + m..): parts 2/3 */
                        for (unsigned h = 0; h < 2; h++) {
                            last = put(&e, npu_enc_drain_split(&in, m, ob + h * m,
                                                               sb + 2u * h * m * (unsigned)l.gx + (unsigned)j,
                                                               (unsigned)l.gx, m, m),
                                       &in, pop_s);
                            pop_s = 0;
                        }
                    }
                }
                npu_insn_tok(&out->insn[last], NPU_TOK_PUSH_NEXT | push_l);
                for (unsigned q = 0; q < 4; q++) {
                    uint64_t d = io->dx + (uint64_t)m0 * io->pitch_dx * B +
                                 4ull * ((uint64_t)q * (uint64_t)l.Kp + (uint64_t)b0 * (uint64_t)S);
                    put(&e, npu_enc_store(&in, NPU_TAG_DX, m, kc_daddr(&e, d),
                                          sb + q * m * (unsigned)l.gx, (unsigned)l.gx,
                                          4u * (unsigned)(G * S), io->pitch_dx),
                        &in, pop_e | (q == 3 ? push_s : 0));
                    pop_e = 0;
                }
            } else { /* dW, column blocks nb0..: ISW row sets = the parts' X^T rows, dY multicast */
                int nb0 = (g - nsx) * l.gw, G = l.nnb - nb0 < l.gw ? l.nnb - nb0 : l.gw;
                unsigned ha = (unsigned)K / 2, cols = 0;
                for (int j = 0; j < G; j++) {
                    int nb = nb0 + j;
                    unsigned n = (unsigned)(N - nb * S < S ? N - nb * S : S), ob = ob_alloc(&e, ha);
                    cols += n;
                    for (int s = 0; s < l.nmb; s++) {
                        unsigned k = (unsigned)(M - s * S < S ? M - s * S : S);
                        int rc = npu_enc_ldw(&in, e.bank, NPU_MODE_ISW,
                                             l.dy + (unsigned)(s * S) * l.wdy + (unsigned)(nb / 2), l.wdy, k, n);
                        if (rc == 0 && nb % 2)
                            rc = npu_insn_lane_hi(&in);
                        put(&e, rc, &in, pop_l);
                        pop_l = 0;
                        rc = npu_enc_wave(&in, e.bank, NPU_MODE_ISW, s > 0, (unsigned)K,
                                          l.xt + (unsigned)(s / 2), l.wx, k, n, ob);
                        if (rc == 0 && s % 2)
                            rc = npu_insn_lane_hi(&in);
                        put(&e, rc, &in, 0);
                        e.bank ^= 1u;
                    }
                    /* skinny: rows [0, K/2) low lanes, [K/2, K) high lanes -> K rows of gw words */
                    last = put(&e, npu_enc_drain_split(&in, ha, ob, sb + (unsigned)j, (unsigned)l.gw, ha, ha),
                               &in, pop_s);
                    pop_s = 0;
                }
                npu_insn_tok(&out->insn[last], NPU_TOK_PUSH_NEXT | push_l);
                uint64_t d = io->dw + 4ull * (uint64_t)nb0 * (uint64_t)S;
                put(&e, npu_enc_store(&in, NPU_TAG_DW, (unsigned)K, kc_daddr(&e, d), sb, (unsigned)l.gw, 4u * cols,
                                      io->pitch_dw),
                    &in, pop_e | push_s);
            }
        }
        /* the loads of step g + 2 (steps 0 and 1 first) */
        int h = g + 2;
        if (h == nsx) { /* X^T, resident from the first dW step on */
            put(&e, npu_enc_load(&in, NPU_TAG_X, 1, (unsigned)M, io->x, l.xt, l.wx, 2u * (unsigned)K,
                                 io->pitch_x), &in, NPU_TOK_PUSH_NEXT);
            continue;
        }
        if (h > nsx)
            continue;
        int slot = h % 2, b0 = h / l.nmc * l.gx, G = l.nkb - b0 < l.gx ? l.nkb - b0 : l.gx;
        unsigned tok = h >= 2 ? NPU_TOK_POP_NEXT : 0;
        if (h == 0) /* dY, resident for the whole program: read from DRAM once */
            put(&e, npu_enc_load(&in, NPU_TAG_DY, 0, (unsigned)M, io->dy, l.dy, l.wdy, 2u * (unsigned)N,
                                 io->pitch_dy), &in, 0);
        for (unsigned q = 0; q < 4; q++) { /* W^T of core q's blocks: rows n, G*S lanes of k */
            uint64_t d = io->w + ((uint64_t)q * (uint64_t)l.Kp + (uint64_t)b0 * (uint64_t)S) * io->pitch_w * B;
            put(&e, npu_enc_load(&in, NPU_TAG_W, 1, (unsigned)(G * S), kc_daddr(&e, d),
                                 l.wb[slot] + q * (unsigned)N * l.wg, l.wg, 2u * (unsigned)N, io->pitch_w),
                &in, tok | (q == 3 ? NPU_TOK_PUSH_NEXT : 0));
            tok = 0;
        }
    }
    return e.err ? -1 : 0;
}

#define NPU_PARTS_MAXCH 256 /* S-deep chunks of one part, M and N split (the fits checks) */

/* ---- the M split one part per core (train_emit.h, docs/training.md §4 "One part per core") ---------- */

/* SPM layout (words): dY (M rows) and W^T (N rows) resident, X^T as four row ranges of K rows,
 * range p = X[Mp-rows of part p]^T (so that one ISW wave's four row sets are the four parts),
 * two staging slots. dY is chunk-major: chunk c of mc rows of every part, part after part (row
 * (4c + p)·mc + u), so that a dX wave of 4mc rows has the parts' chunk c as its row sets and a
 * dX step stores whole rows of mc rows per part. A dX step covers chunk c and gx S-wide K-blocks,
 * a dW step gw S-wide N-blocks (the widest that fit: a STORE row of one beat is a burst of its
 * own). A dW staging slot is 2K rows: [0, K) scratch, [K, 2K) the accumulator (see
 * npu_bwd_emit_mcores). */
typedef struct mc_layout {
    int S, F, Mp, mc, nch, nkb, nnb, nmc, gx, gw;
    unsigned wdy, wk, wxp, dy, wt, xt, st[2], slot;
    long words;
} mc_layout_t;

static void mc_plan_g(const npu_cfg_t *cfg, int M, int K, int N, int gx, int gw, int mc, mc_layout_t *l)
{
    memset(l, 0, sizeof *l);
    l->S = cfg->s;
    l->F = 2 * cfg->s;
    l->Mp = M / 4;
    l->mc = mc;
    l->nch = l->Mp / mc;
    l->nkb = cdiv(K, l->S);
    l->nnb = cdiv(N, l->S);
    l->nmc = l->Mp / l->S;
    l->gx = gx;
    l->gw = gw;
    l->wdy = (unsigned)cdiv(N, l->F);
    l->wk = (unsigned)cdiv(K, l->F);
    l->wxp = (unsigned)cdiv(l->Mp, l->F);
    l->slot = (unsigned)(4L * mc * gx > 2L * K * gw ? 4L * mc * gx : 2L * K * gw);
    l->dy = 0;
    l->wt = l->dy + (unsigned)M * l->wdy;
    l->xt = l->wt + (unsigned)N * l->wk;
    l->st[0] = l->xt + 4u * (unsigned)K * l->wxp;
    l->st[1] = l->st[0] + l->slot;
    l->words = (long)l->st[1] + (long)l->slot;
}

/* The widest steps first (STORE rows of gx beats), then the most rows per chunk (a dX wave of
 * 4mc rows writes 2mc OBUF rows, within one OBUF half); mc a multiple of S dividing M/4. */
static int mc_plan(const npu_cfg_t *cfg, int M, int K, int N, mc_layout_t *l)
{
    int S = cfg->s, Mp = M / 4, nkb = cdiv(K, S), nnb = cdiv(N, S);
    for (int g = nkb > nnb ? nkb : nnb; g >= 1; g--)
        for (int mc = Mp; mc >= S; mc -= S) {
            if (Mp % mc || 2 * mc > cfg->obuf_rows)
                continue;
            mc_plan_g(cfg, M, K, N, g < nkb ? g : nkb, g < nnb ? g : nnb, mc, l);
            if (spm_fits(cfg, l->words))
                return 1;
        }
    return 0;
}

int npu_bwd_mcores_fits(const npu_cfg_t *cfg, int M, int K, int N)
{
    mc_layout_t l;
    /* dW waves (4K rows) write 2K OBUF rows, within one OBUF half */
    if (K < 1 || N < 1 || M < 4 * cfg->s || M % (4 * cfg->s) != 0 || 2 * K > cfg->obuf_rows ||
        M / 4 / cfg->s > NPU_PARTS_MAXCH || M > 0xFFFF || 4L * K > 0xFFFF || 2L * N > 0xFFFF || 2L * K > 0xFFFF)
        return 0;
    return mc_plan(cfg, M, K, N, &l);
}

/*
 * Steps g = 0 .. nsx-1: dX of K-blocks [b0, b0 + gx); steps nsx .. nsx+nsw-1: dW of N-blocks
 * [nb0, nb0 + gw). Step g drains into staging slot g % 2. Loads: dY and W^T first (their last
 * LOAD pushes l2e, popped by the first dX EXEC), then X^T (pushes l2e, popped by the first dW
 * EXEC). Per step the last DRAIN pushes e2s (its STORE pops it) and the STORE pushes s2e when
 * step g + 2 drains into the same slot (its first DRAIN pops it).
 *
 * dX[Mp-rows of part p, K-block] = dY[Mp rows, :]·W^T[:, K-block]: per S-deep N-chunk one
 * unmasked ISW LDW of the W^T tile (multicast to the four cores) and one ISW WAVE of all M dY
 * rows, whose four row sets are the four parts; a skinny DRAIN gives row-major dX. No partials.
 *
 * dW[:, N-block] = sum_p X[part p]^T·dY[part p, N-block]: per S-deep M-chunk s of the parts,
 * four masked LDWs (the core of part p gets dY[part p's chunk s, N-block]) and one ISW WAVE of
 * 4K rows (range p = X^T rows of part p, chunk s), accumulated over s in the OBUF. Part p runs
 * on core {0,2,1,3}[p] (the ISW row sets) and its partial P_p lands at OBUF rows ob + (p&1)*K
 * lanes (p>>1)*S (skinny). The four partials are summed by four DRAINs into accumulator A (the
 * slot's rows [K, 2K)); a skinny DRAIN writes each row's low lanes to row r and its high lanes
 * to row r + split, so one DRAIN adds one partial to A:
 *   D1 plain, rows ob..     : P0 -> scratch, P2 -> A (no adds)
 *   D2 acc,   rows ob+K..   : P1 -> scratch, P3 -> A (K*n adds into A)
 *   D3 acc,   rows ob.., hi_rows 0    : P0 -> A (K*n)
 *   D4 acc,   rows ob+K.., hi_rows 0  : P1 -> A (K*n)
 * = 3*K*n combining adds per N-block, (P-1)*K*N for the layer (plus K*n adds into the scratch,
 * whose result is not used). The drain engine runs DRAINs in program order and an accumulating
 * DRAIN reads a row's old words only after the previous row's writes (npu_exec), so D1..D4 onto
 * the same words need no tokens.
 */
/* The four partials P_p at OBUF rows ob + (p&1)*rows, lanes (p>>1)*S (an ISW wave of 4*rows rows
 * whose sets are the parts) summed into the accumulator A (rows words, stride apart) with the
 * scratch scr (rows words, split so that scr + rows*stride = A) taking the unwanted halves:
 * D1..D4 of npu_bwd_emit_mcores. The first DRAIN pops `pop`; returns the last one's index. */
static size_t sum4(kc_t *e, unsigned rows, unsigned ob, unsigned scr, unsigned A, unsigned stride, unsigned pop)
{
    npu_insn_t in;
    size_t last = 0;
    if (scr + rows * stride != A)
        kc_fail(e, "sum4: the scratch must end where the accumulator starts");
    put(e, npu_enc_drain_split(&in, rows, ob, scr, stride, rows, rows), &in, pop); /* P0 -> scr, P2 -> A */
    for (unsigned d = 0; d < 3; d++) { /* P1 -> scr, P3 -> A; P0 -> A; P1 -> A */
        int rc = npu_enc_drain_split(&in, rows, ob + (d == 1 ? 0 : rows), d ? A : scr, stride, rows, d ? 0 : rows);
        if (rc == 0)
            rc = npu_insn_drain_acc(&in);
        last = put(e, rc, &in, 0);
    }
    return last;
}

/* The four parts' partials of one output block, accumulated in the OBUF at ob over nch S-deep
 * chunks: per chunk, four masked LDWs (part p's tile at ldw[4*s + p], k = S rows of stride
 * ldw_stride, n lanes, lane_hi for odd blocks) and one ISW WAVE of 4*rows A rows from
 * a_addr + s/2 (stride a_stride) whose row sets are the parts; then sum4 into A. The first LDW
 * pops *pop_l, the first DRAIN pop_s; returns the last DRAIN's index. */
static size_t parts_sum(kc_t *e, int nch, const unsigned *ldw, unsigned ldw_stride, int odd_block, unsigned n,
                        unsigned rows, unsigned a_addr, unsigned a_stride, unsigned ob, unsigned scr, unsigned A,
                        unsigned stride, unsigned *pop_l, unsigned pop_s)
{
    static const unsigned core_of_part[4] = {0, 2, 1, 3}; /* ISW row sets: [0,qa) -> 0, then 2, 1, 3 */
    unsigned S = e->S;
    npu_insn_t in;
    for (int s = 0; s < nch; s++) {
        for (unsigned p = 0; p < 4; p++) {
            int rc = npu_enc_ldw_cores(&in, e->bank, NPU_MODE_ISW, ldw[4 * s + (int)p], ldw_stride, S, n,
                                       1u << core_of_part[p]);
            if (rc == 0 && odd_block)
                rc = npu_insn_lane_hi(&in);
            put(e, rc, &in, *pop_l);
            *pop_l = 0;
        }
        int rc = npu_enc_wave(&in, e->bank, NPU_MODE_ISW, s > 0, 4u * rows, a_addr + (unsigned)(s / 2), a_stride, S,
                              n, ob);
        if (rc == 0 && s % 2)
            rc = npu_insn_lane_hi(&in);
        put(e, rc, &in, 0);
        e->bank ^= 1u;
    }
    return sum4(e, rows, ob, scr, A, stride, pop_s);
}

int npu_bwd_emit_mcores(const npu_cfg_t *cfg, const npu_bwd_args_t *a, npu_prog_t *out,
                        npu_bwd_stats_t *st, char *msg, size_t msgn)
{
    const npu_bwd_io_t *io = &a->io;
    int M = a->M, K = a->K, N = a->N;
    uint64_t B = (uint64_t)npu_cfg_beat(cfg);
    mc_layout_t l;
    kc_t e;
    npu_insn_t in;
    unsigned ldw[4 * NPU_PARTS_MAXCH];
    if (!npu_bwd_mcores_fits(cfg, M, K, N) || !mc_plan(cfg, M, K, N, &l)) {
        snprintf(msg, msgn, "per-core M split needs M a multiple of 4S, 2K <= OBUF rows "
                            "and dY, W^T, X^T resident in the SPM");
        return -1;
    }
    kc_init(&e, cfg, out, msg, msgn);
    int S = l.S, nxg = cdiv(l.nkb, l.gx), nsx = nxg * l.nch, nsw = cdiv(l.nnb, l.gw), nsteps = nsx + nsw;
    unsigned Ku = (unsigned)K, mc = (unsigned)l.mc, mc2 = 2u * mc;
    cores_stats(st, M, K, N, 1);
    /* dY and W^T (resident for the whole program: each read from DRAM once) */
    for (unsigned r = 0; r < 4u * (unsigned)l.nch; r++) { /* chunk c = r / 4 of part p = r % 4 */
        uint64_t d = io->dy + ((uint64_t)(r % 4) * (uint64_t)l.Mp + (uint64_t)(r / 4) * mc) * io->pitch_dy * B;
        put(&e, npu_enc_load(&in, NPU_TAG_DY, 0, mc, kc_daddr(&e, d), l.dy + r * mc * l.wdy, l.wdy, 2u * (unsigned)N,
                             io->pitch_dy),
            &in, 0);
    }
    put(&e, npu_enc_load(&in, NPU_TAG_W, 1, Ku, io->w, l.wt, l.wk, 2u * (unsigned)N, io->pitch_w), &in,
        NPU_TOK_PUSH_NEXT);
    for (unsigned p = 0; p < 4; p++) { /* X^T of part p: K rows of Mp lanes */
        uint64_t d = io->x + (uint64_t)p * (uint64_t)l.Mp * io->pitch_x * B;
        put(&e, npu_enc_load(&in, NPU_TAG_X, 1, (unsigned)l.Mp, kc_daddr(&e, d), l.xt + p * Ku * l.wxp, l.wxp,
                             2u * Ku, io->pitch_x),
            &in, p == 3 ? NPU_TOK_PUSH_NEXT : 0);
    }
    for (int g = 0; g < nsteps && !e.err; g++) {
        unsigned sb = l.st[g % 2];
        unsigned pop_l, pop_s, push_s;
        step_tokens(g, nsx, nsteps, &pop_l, &pop_s, &push_s);
        size_t last = 0;
        if (g < nsx) { /* dX, chunk c: ISW row sets = the parts' dY rows, W^T multicast */
            int c = g / nxg, b0 = g % nxg * l.gx, G = l.nkb - b0 < l.gx ? l.nkb - b0 : l.gx;
            unsigned cols = 0, dyc = l.dy + 4u * (unsigned)c * mc * l.wdy;
            for (int j = 0; j < G; j++) {
                int kb = b0 + j;
                unsigned n = (unsigned)(K - kb * S < S ? K - kb * S : S), ob = ob_alloc(&e, mc2);
                cols += n;
                for (int ns = 0; ns < l.nnb; ns++) {
                    unsigned k = (unsigned)(N - ns * S < S ? N - ns * S : S);
                    int rc = npu_enc_ldw(&in, e.bank, NPU_MODE_ISW, l.wt + (unsigned)(ns * S) * l.wk + (unsigned)(kb / 2),
                                         l.wk, k, n);
                    if (rc == 0 && kb % 2)
                        rc = npu_insn_lane_hi(&in);
                    put(&e, rc, &in, pop_l);
                    pop_l = 0;
                    rc = npu_enc_wave(&in, e.bank, NPU_MODE_ISW, ns > 0, 2u * mc2, dyc + (unsigned)(ns / 2),
                                      l.wdy, k, n, ob);
                    if (rc == 0 && ns % 2)
                        rc = npu_insn_lane_hi(&in);
                    put(&e, rc, &in, 0);
                    e.bank ^= 1u;
                }
                /* skinny: rows [0, 2mc) low lanes, [2mc, 4mc) high lanes -> 4mc rows of gx words,
                 * part p's chunk at rows p·mc.. */
                last = put(&e, npu_enc_drain_split(&in, mc2, ob, sb + (unsigned)j, (unsigned)l.gx, mc2, mc2), &in,
                           pop_s);
                pop_s = 0;
            }
            npu_insn_tok(&out->insn[last], NPU_TOK_PUSH_NEXT);
            for (unsigned p = 0; p < 4; p++) {
                uint64_t d = io->dx + ((uint64_t)p * (uint64_t)l.Mp + (uint64_t)c * mc) * io->pitch_dx * B +
                             4ull * (uint64_t)b0 * (uint64_t)S;
                put(&e, npu_enc_store(&in, NPU_TAG_DX, mc, kc_daddr(&e, d), sb + p * mc * (unsigned)l.gx, (unsigned)l.gx,
                                      4u * cols, io->pitch_dx),
                    &in, (p == 0 ? NPU_TOK_POP_PREV : 0) | (p == 3 ? push_s : 0));
            }
        } else { /* dW: ISW row sets = the parts' X^T rows, each core its part's dY tile; sum on chip */
            int nb0 = (g - nsx) * l.gw, G = l.nnb - nb0 < l.gw ? l.nnb - nb0 : l.gw;
            unsigned cols = 0, gw = (unsigned)l.gw, acc = sb + Ku * gw;
            for (int j = 0; j < G; j++) {
                int nb = nb0 + j;
                unsigned n = (unsigned)(N - nb * S < S ? N - nb * S : S), ob = ob_alloc(&e, 2 * Ku);
                cols += n;
                for (int s = 0; s < l.nmc && s < NPU_PARTS_MAXCH; s++) /* part p's dY rows of chunk s */
                    for (unsigned p = 0; p < 4; p++)
                        ldw[4 * s + (int)p] = l.dy + ((4u * ((unsigned)(s * S) / mc) + p) * mc +
                                                      (unsigned)(s * S) % mc) * l.wdy + (unsigned)(nb / 2);
                last = parts_sum(&e, l.nmc, ldw, l.wdy, nb % 2, n, Ku, l.xt, l.wxp, ob, sb + (unsigned)j,
                                 acc + (unsigned)j, gw, &pop_l, pop_s);
                pop_s = 0;
                if (st)
                    st->accum_adds += 3L * K * (long)n;
            }
            npu_insn_tok(&out->insn[last], NPU_TOK_PUSH_NEXT);
            put(&e, npu_enc_store(&in, NPU_TAG_DW, Ku, io->dw + 4u * (unsigned)(nb0 * S), acc, gw, 4u * cols,
                                  io->pitch_dw),
                &in, NPU_TOK_POP_PREV | push_s);
        }
    }
    return e.err ? -1 : 0;
}

/* ---- the N split one part per core (train_emit.h, docs/training.md §4 "One part per core") ---------- */

/* SPM layout (words): dY as four row ranges of M rows, range p = dY[:, part p's columns] (so
 * that one ISW wave's row sets are the four parts), W^T (N rows) and X^T (K rows) resident, two
 * staging slots: dX 2M rows of gx words (scratch, then the accumulator: sum4), dW four parts'
 * K rows of gw words. */
typedef struct nc_layout {
    int S, F, Np, nkb, nbp, nmb, gx, gw;
    unsigned wdyp, wk, wx, dy, wt, xt, st[2], slot;
    long words;
} nc_layout_t;

static void nc_plan_g(const npu_cfg_t *cfg, int M, int K, int N, int gx, int gw, nc_layout_t *l)
{
    memset(l, 0, sizeof *l);
    l->S = cfg->s;
    l->F = 2 * cfg->s;
    l->Np = N / 4;
    l->nkb = cdiv(K, l->S);
    l->nbp = l->Np / l->S;
    l->nmb = cdiv(M, l->S);
    l->gx = gx;
    l->gw = gw;
    l->wdyp = (unsigned)cdiv(l->Np, l->F);
    l->wk = (unsigned)cdiv(K, l->F);
    l->wx = (unsigned)cdiv(M, l->F);
    l->slot = (unsigned)(2L * M * gx > 4L * K * gw ? 2L * M * gx : 4L * K * gw);
    l->dy = 0;
    l->wt = l->dy + 4u * (unsigned)M * l->wdyp;
    l->xt = l->wt + (unsigned)N * l->wk;
    l->st[0] = l->xt + (unsigned)K * l->wx;
    l->st[1] = l->st[0] + l->slot;
    l->words = (long)l->st[1] + (long)l->slot;
}

static int nc_plan(const npu_cfg_t *cfg, int M, int K, int N, nc_layout_t *l)
{
    int nkb = cdiv(K, cfg->s), nbp = N / 4 / cfg->s;
    for (int g = nkb > nbp ? nkb : nbp; g >= 1; g--) {
        nc_plan_g(cfg, M, K, N, g < nkb ? g : nkb, g < nbp ? g : nbp, l);
        if (spm_fits(cfg, l->words))
            return 1;
    }
    return 0;
}

int npu_bwd_ncores_fits(const npu_cfg_t *cfg, int M, int K, int N)
{
    nc_layout_t l;
    /* parts of whole beats (a LOAD of part p's columns starts on a beat): N a multiple of 8S; dX
     * waves (4M rows) write 2M OBUF rows, dW bcast waves (K rows) 2K: each within one half */
    if (M < 1 || K < 1 || N < 8 * cfg->s || N % (8 * cfg->s) != 0 || 2 * M > cfg->obuf_rows ||
        N / 4 / cfg->s > NPU_PARTS_MAXCH ||
        2 * K > cfg->obuf_rows || 2L * N > 0xFFFF || 2L * K > 0xFFFF)
        return 0;
    return nc_plan(cfg, M, K, N, &l);
}

/*
 * Steps g = 0 .. nsx-1: dX of K-blocks [b0, b0 + gx); steps nsx ..: dW of the parts' S-wide
 * column blocks [b0, b0 + gw) (block b of part q = columns q*Np + b*S ..). Loads and tokens as in
 * npu_bwd_emit_mcores.
 *
 * dX = sum_p dY[:, part p]·W[:, part p]^T: per K-block and S-deep chunk s of the parts' columns,
 * four masked LDWs (the core of part p: W^T[part p's chunk s, K-block]) and one ISW WAVE of 4M
 * rows (range p = dY[:, part p], chunk s), accumulated over s in the OBUF; the four partials are
 * summed by sum4 ((P-1)*M*K combining adds for the layer).
 *
 * dW[:, part q] = X^T·dY[:, part q]: per block b of every part and S-deep M-chunk, four masked
 * LDWs (core q: dY[M-chunk, part q's block b]) and one bcast ISW WAVE of the K rows of X^T (each
 * row read once, every core multiplies it by its own tile); two skinny DRAINs put core q's
 * columns into part q's K rows of the staging slot, one STORE per part. No partials.
 */
int npu_bwd_emit_ncores(const npu_cfg_t *cfg, const npu_bwd_args_t *a, npu_prog_t *out,
                        npu_bwd_stats_t *st, char *msg, size_t msgn)
{
    const npu_bwd_io_t *io = &a->io;
    int M = a->M, K = a->K, N = a->N;
    nc_layout_t l;
    kc_t e;
    npu_insn_t in;
    unsigned ldw[4 * NPU_PARTS_MAXCH];
    if (!npu_bwd_ncores_fits(cfg, M, K, N) || !nc_plan(cfg, M, K, N, &l)) {
        snprintf(msg, msgn, "per-core N split needs N a multiple of 8S, 2M and 2K <= OBUF rows "
                            "and dY, W^T, X^T resident in the SPM");
        return -1;
    }
    kc_init(&e, cfg, out, msg, msgn);
    int S = l.S, nsx = cdiv(l.nkb, l.gx), nsw = cdiv(l.nbp, l.gw), nsteps = nsx + nsw;
    unsigned Ku = (unsigned)K, Mu = (unsigned)M, Np = (unsigned)l.Np;
    cores_stats(st, M, K, N, 1);
    for (unsigned p = 0; p < 4; p++) /* dY[:, part p]: M rows of Np columns (beat-aligned) */
        put(&e, npu_enc_load(&in, NPU_TAG_DY, 0, Mu, io->dy + 2u * p * Np, l.dy + p * Mu * l.wdyp, l.wdyp, 2u * Np,
                             io->pitch_dy),
            &in, 0);
    put(&e, npu_enc_load(&in, NPU_TAG_W, 1, Ku, io->w, l.wt, l.wk, 2u * (unsigned)N, io->pitch_w), &in,
        NPU_TOK_PUSH_NEXT);
    put(&e, npu_enc_load(&in, NPU_TAG_X, 1, Mu, io->x, l.xt, l.wx, 2u * Ku, io->pitch_x), &in, NPU_TOK_PUSH_NEXT);
    for (int g = 0; g < nsteps && !e.err; g++) {
        unsigned sb = l.st[g % 2];
        unsigned pop_l, pop_s, push_s;
        step_tokens(g, nsx, nsteps, &pop_l, &pop_s, &push_s);
        size_t last = 0;
        if (g < nsx) { /* dX: ISW row sets = the parts' dY rows, each core its part's W^T; sum on chip */
            int b0 = g * l.gx, G = l.nkb - b0 < l.gx ? l.nkb - b0 : l.gx;
            unsigned cols = 0, gx = (unsigned)l.gx, acc = sb + Mu * gx;
            for (int j = 0; j < G; j++) {
                int kb = b0 + j;
                unsigned n = (unsigned)(K - kb * S < S ? K - kb * S : S), ob = ob_alloc(&e, 2 * Mu);
                cols += n;
                for (int s = 0; s < l.nbp && s < NPU_PARTS_MAXCH; s++) /* part p's W^T rows of chunk s */
                    for (unsigned p = 0; p < 4; p++)
                        ldw[4 * s + (int)p] = l.wt + (p * Np + (unsigned)(s * S)) * l.wk + (unsigned)(kb / 2);
                last = parts_sum(&e, l.nbp, ldw, l.wk, kb % 2, n, Mu, l.dy, l.wdyp, ob, sb + (unsigned)j,
                                 acc + (unsigned)j, gx, &pop_l, pop_s);
                pop_s = 0;
                if (st)
                    st->accum_adds += 3L * M * (long)n;
            }
            npu_insn_tok(&out->insn[last], NPU_TOK_PUSH_NEXT);
            put(&e, npu_enc_store(&in, NPU_TAG_DX, Mu, io->dx + 4u * (unsigned)(b0 * S), acc, gx, 4u * cols,
                                  io->pitch_dx),
                &in, NPU_TOK_POP_PREV | push_s);
        } else { /* dW, blocks b0.. of every part: bcast waves of X^T rows, core q's own dY tile */
            int b0 = (g - nsx) * l.gw, G = l.nbp - b0 < l.gw ? l.nbp - b0 : l.gw;
            unsigned gw = (unsigned)l.gw;
            for (int j = 0; j < G; j++) {
                int b = b0 + j;
                unsigned ob = ob_alloc(&e, 2 * Ku);
                for (int s = 0; s < l.nmb; s++) {
                    unsigned k = (unsigned)(M - s * S < S ? M - s * S : S);
                    for (unsigned q = 0; q < 4; q++) {
                        int rc = npu_enc_ldw_cores(&in, e.bank, NPU_MODE_ISW,
                                                   l.dy + (q * Mu + (unsigned)(s * S)) * l.wdyp + (unsigned)(b / 2), l.wdyp,
                                                   k, (unsigned)S, 1u << q);
                        if (rc == 0 && b % 2)
                            rc = npu_insn_lane_hi(&in);
                        put(&e, rc, &in, pop_l);
                        pop_l = 0;
                    }
                    int rc = npu_enc_wave(&in, e.bank, NPU_MODE_ISW, s > 0, Ku, l.xt + (unsigned)(s / 2), l.wx, k,
                                          (unsigned)S, ob);
                    if (rc == 0)
                        rc = npu_insn_bcast(&in);
                    if (rc == 0 && s % 2)
                        rc = npu_insn_lane_hi(&in);
                    put(&e, rc, &in, 0);
                    e.bank ^= 1u;
                }
                /* cores 0/1 (rows ob..): low lanes to part 0's K rows, high lanes to part 1's
                 * (split K rows further); cores 2/3 (rows ob + K..): parts 2/3 */
                for (unsigned h = 0; h < 2; h++) {
                    last = put(&e, npu_enc_drain_split(&in, Ku, ob + h * Ku, sb + 2u * h * Ku * gw + (unsigned)j, gw,
                                                       Ku, Ku),
                               &in, pop_s);
                    pop_s = 0;
                }
            }
            npu_insn_tok(&out->insn[last], NPU_TOK_PUSH_NEXT);
            for (unsigned q = 0; q < 4; q++)
                put(&e, npu_enc_store(&in, NPU_TAG_DW, Ku, io->dw + 4u * (q * Np + (unsigned)(b0 * S)),
                                      sb + q * Ku * gw, gw, 4u * (unsigned)(G * S), io->pitch_dw),
                    &in, (q == 0 ? NPU_TOK_POP_PREV : 0) | (q == 3 ? push_s : 0));
        }
    }
    return e.err ? -1 : 0;
}
