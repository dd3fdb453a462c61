/* train_kcores.c - the K split of the fused backward, one part per core (train_emit.h,
 * docs/training.md section 10.4). */
#include "train_emit.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int cdiv(int a, int b) { return (a + b - 1) / b; }

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
            if (l->words <= npu_cfg_spm_words(cfg) && l->words <= 0x10000)
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
    npu_prog_t *p;
    char *msg;
    size_t msgn;
    int err;
    unsigned bank, ob_next, obuf_rows;
} kc_t;

static void kfail(kc_t *e, const char *fmt, ...)
{
    va_list ap;
    if (e->err)
        return;
    e->err = 1;
    va_start(ap, fmt);
    vsnprintf(e->msg, e->msgn, fmt, ap);
    va_end(ap);
}

/* Appends an encoded instruction with extra token flags; returns its index. */
static size_t put(kc_t *e, int rc, npu_insn_t *in, unsigned tok)
{
    if (rc != 0) {
        kfail(e, "a field does not fit its encoding");
        return 0;
    }
    npu_insn_tok(in, tok);
    if (npu_prog_push(e->p, in) != 0)
        kfail(e, "out of memory");
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
    memset(&e, 0, sizeof e);
    e.p = out;
    e.msg = msg;
    e.msgn = msgn;
    e.obuf_rows = (unsigned)cfg->obuf_rows;
    int S = l.S, nsx = cdiv(l.nkb, l.gx) * l.nmc, nsw = cdiv(l.nnb, l.gw), nsteps = nsx + nsw;
    if (st) {
        memset(st, 0, sizeof *st);
        st->loads[NPU_TT_DY] = 1;
        st->loads[NPU_TT_X] = 1;
        st->loads[NPU_TT_W] = 4L * nsx; /* W^T of a block group again for each m-chunk */
        st->dy_compulsory = 1;
        st->macs = 2ull * (uint64_t)M * (uint64_t)N * (uint64_t)K;
    }
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
                    put(&e, npu_enc_store(&in, NPU_TAG_DX, m, (uint32_t)d,
                                          sb + q * m * (unsigned)l.gx, (unsigned)l.gx,
                                          4u * (unsigned)(G * S), io->pitch_dx),
                        &in, pop_e | (q == 3 ? push_s : 0));
                    pop_e = 0;
                    if (d > 0xFFFFFFFFull)
                        kfail(&e, "DRAM address beyond 32 bits");
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
                put(&e, npu_enc_store(&in, NPU_TAG_DW, (unsigned)K, (uint32_t)d, sb, (unsigned)l.gw, 4u * cols,
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
            put(&e, npu_enc_load(&in, NPU_TAG_W, 1, (unsigned)(G * S), (uint32_t)d,
                                 l.wb[slot] + q * (unsigned)N * l.wg, l.wg, 2u * (unsigned)N, io->pitch_w),
                &in, tok | (q == 3 ? NPU_TOK_PUSH_NEXT : 0));
            tok = 0;
            if (d > 0xFFFFFFFFull)
                kfail(&e, "DRAM address beyond 32 bits");
        }
    }
    return e.err ? -1 : 0;
}
