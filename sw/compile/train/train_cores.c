/* train_cores.c - the partitionings of the fused backward GEMM run one part per core
 * (docs/training.md §4 "One part per core"): what the three share (train_cores.h) and the K split
 * (npu_bwd_emit_kcores, train_emit.h); the M and N splits are train_cores_mn.c. The whole-array
 * lowering of the same partitionings (parts in sequence) is train_emit.c. */
#include "compile/train/train_cores.h"

#include <string.h>

static int cdiv(int a, int b) { return (a + b - 1) / b; }

/* ---- shared by the three splits (train_cores.h) ----------------------------------------- */

/* A per-core layout of `words` SPM words fits the SPM and the 16-bit address fields. */
int npu_bwd_cores_spm_fits(const npu_cfg_t *cfg, long words)
{
    return words <= npu_cfg_spm_words(cfg) && words <= 0x10000;
}

/* The stats of a per-core program: dY and X^T loaded once, W^T w_loads times, 2*M*N*K MACs. */
void npu_bwd_cores_stats(npu_bwd_stats_t *st, int M, int K, int N, long w_loads)
{
    if (!st)
        return;
    memset(st, 0, sizeof *st);
    st->loads[NPU_TENSOR_DY] = 1;
    st->loads[NPU_TENSOR_X] = 1;
    st->loads[NPU_TENSOR_W] = w_loads;
    st->dy_compulsory = 1;
    st->macs = 2ull * (uint64_t)M * (uint64_t)N * (uint64_t)K;
}

/* Starts the emission of nsteps steps (0, or -1 when memory runs out). */
static int npu_bwd_cores_init(npu_bwd_cores_t *e, const npu_cfg_t *cfg, long nsteps)
{
    memset(e, 0, sizeof *e);
    npu_pb_init(&e->b, cfg);
    e->obuf_rows = (unsigned)cfg->obuf_rows;
    e->S = (unsigned)cfg->s;
    e->nsteps = nsteps;
    e->s = npu_pb_steps(&e->b, nsteps);
    return e->s ? 0 : -1;
}

/* The program of the steps in order, loads `ahead` steps early (after the EXEC and STOREs of the
 * step they are emitted with); frees the steps; the result (npu_pb_finish). */
static int npu_bwd_cores_finish(npu_bwd_cores_t *e, long ahead, npu_prog_t *out, char *msg, size_t msgn)
{
    if (!e->b.err) {
        npu_pb_stitch(&e->b, e->s, e->nsteps);
        npu_pb_order(&e->b, e->s, e->nsteps, ahead, 1, out);
    }
    npu_pb_steps_free(e->s, e->nsteps);
    return npu_pb_finish(&e->b, msg, msgn);
}

/* Starts step g: its EXEC instructions go to its list from now on. */
npu_pb_step_t *npu_bwd_cores_step(npu_bwd_cores_t *e, long g, const char *grad)
{
    npu_pb_context(&e->b, "%s step %ld", grad, g);
    e->ex = &e->s[g].ex;
    return &e->s[g];
}

/* The tokens of step g, once built: its first EXEC instruction waits for its loads (when it has
 * any: the first step of each gradient, or every dX step of the K split); its first DRAIN for the
 * STOREs of step g - 2 (the same staging slot); its STOREs for its DRAINs. Its last DRAIN
 * signals both (e2s, and e2l to loads that wait for it). */
static void npu_bwd_cores_waits(npu_bwd_cores_t *e, long g)
{
    npu_pb_step_t *s = &e->s[g];
    s->push_e2l = s->push_e2s = s->ex.n - 1;
    if (s->ld[0].n)
        npu_pb_wait(&e->b, s, NPU_PB_L2E, 0, 0, 0);
    if (g >= 2)
        npu_pb_wait(&e->b, s, NPU_PB_S2E, g - 2, 0, npu_pb_first_op(&s->ex, NPU_PB_OP(NPU_OP_DRAIN)));
    npu_pb_wait(&e->b, s, NPU_PB_E2S, 0, 0, 0);
}

/* An OBUF region of `rows` (<= one half) after the previous one, wrapping; the hardware
 * interlocks a region's reuse with the DRAINs still reading it. */
unsigned npu_bwd_cores_obuf(npu_bwd_cores_t *e, unsigned rows)
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

int npu_bwd_cores_run(npu_bwd_cores_t *e, const npu_cfg_t *cfg, const npu_bwd_cores_prog_t *pg,
                      npu_prog_t *out, char *msg, size_t msgn)
{
    if (npu_bwd_cores_init(e, cfg, pg->nsteps) == 0) {
        pg->loads(pg->ctx);
        for (int g = 0; g < pg->nsteps && !e->b.err; g++) {
            (g < pg->nsx ? pg->dx : pg->dw)(pg->ctx, g);
            npu_bwd_cores_waits(e, g);
        }
    }
    return npu_bwd_cores_finish(e, pg->ahead, out, msg, msgn);
}

int npu_bwd_cores_refuse(const npu_cfg_t *cfg, const char *why, char *msg, size_t msgn)
{
    npu_pb_t b;
    npu_pb_init(&b, cfg);
    npu_pb_fail(&b, "%s", why);
    return npu_pb_finish(&b, msg, msgn);
}

void npu_bwd_cores_mcast(npu_bwd_cores_t *e, const npu_bwd_block_t *k)
{
    unsigned S = e->S;
    npu_insn_t in;
    for (int c = 0; c * (int)S < k->D; c++) {
        unsigned kk = (unsigned)(k->D - c * (int)S < (int)S ? k->D - c * (int)S : (int)S), bank = npu_pb_bank(&e->b);
        int rc = npu_enc_ldw(&in, bank, NPU_MODE_ISW, k->ldw + (unsigned)c * S * k->ldw_stride + (unsigned)(k->blk / 2),
                             k->ldw_stride, kk, k->n);
        if (rc == 0 && k->blk % 2)
            rc = npu_insn_lane_hi(&in);
        npu_pb_put(&e->b, e->ex, rc, &in, 0);
        rc = npu_enc_wave(&in, bank, NPU_MODE_ISW, c > 0, k->m, k->a + (unsigned)(c / 2), k->a_stride, kk, k->n, k->ob);
        if (rc == 0 && c % 2)
            rc = npu_insn_lane_hi(&in);
        npu_pb_put(&e->b, e->ex, rc, &in, 0);
    }
}

void npu_bwd_cores_bcast(npu_bwd_cores_t *e, const npu_bwd_block_t *k, unsigned qoff, unsigned dst,
                         unsigned stride)
{
    unsigned S = e->S;
    npu_insn_t in;
    for (int c = 0; c * (int)S < k->D; c++) {
        unsigned kk = (unsigned)(k->D - c * (int)S < (int)S ? k->D - c * (int)S : (int)S), bank = npu_pb_bank(&e->b);
        for (unsigned q = 0; q < 4; q++) {
            int rc = npu_enc_ldw_cores(&in, bank, NPU_MODE_ISW,
                                       k->ldw + q * qoff + (unsigned)c * S * k->ldw_stride + (unsigned)(k->blk / 2),
                                       k->ldw_stride, kk, S, 1u << q);
            if (rc == 0 && k->blk % 2)
                rc = npu_insn_lane_hi(&in);
            npu_pb_put(&e->b, e->ex, rc, &in, 0);
        }
        int rc = npu_enc_wave(&in, bank, NPU_MODE_ISW, c > 0, k->m, k->a + (unsigned)(c / 2), k->a_stride, kk, S, k->ob);
        if (rc == 0)
            rc = npu_insn_bcast(&in);
        if (rc == 0 && c % 2)
            rc = npu_insn_lane_hi(&in);
        npu_pb_put(&e->b, e->ex, rc, &in, 0);
    }
    for (unsigned h = 0; h < 2; h++)
        npu_pb_put(&e->b, e->ex,
                   npu_enc_drain_split(&in, k->m, k->ob + h * k->m, dst + 2u * h * k->m * stride, stride, k->m, k->m),
                   &in, 0);
}

/* ---- the K split one part per core (train_emit.h, docs/training.md §4 "One part per core") ---------- */

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
            if (npu_bwd_cores_spm_fits(cfg, l->words))
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

/* The K split's emission state: its layout and the step counts. */
typedef struct kc {
    npu_bwd_cores_t e;
    kc_layout_t l;
    const npu_bwd_args_t *a;
    int nsx, nsteps;
} kc_t;

/* dX step g: K-blocks b0.. of every part, rows m0..: bcast waves, core q its own W^T. */
static void kc_dx_step(void *ctx, int g)
{
    kc_t *k = ctx;
    const kc_layout_t *l = &k->l;
    const npu_bwd_io_t *io = &k->a->io;
    npu_bwd_cores_t *e = &k->e;
    npu_pb_step_t *s = npu_bwd_cores_step(e, g, "dX");
    int S = l->S, N = k->a->N, b0 = g / l->nmc * l->gx, G = l->nkb - b0 < l->gx ? l->nkb - b0 : l->gx;
    int m0 = g % l->nmc * l->mc;
    unsigned m = (unsigned)(k->a->M - m0 < l->mc ? k->a->M - m0 : l->mc), sb = l->st[g % 2];
    npu_insn_t in;
    npu_bwd_block_t blk = {N, 0, l->wb[g % 2], l->wg, (unsigned)S, l->dy + (unsigned)m0 * l->wdy, l->wdy, m, 0};
    for (int j = 0; j < G; j++) { /* core q: its part's K-block b0 + j of W^T */
        blk.blk = j;
        blk.ob = npu_bwd_cores_obuf(e, 2 * m);
        npu_bwd_cores_bcast(e, &blk, (unsigned)N * l->wg, sb + (unsigned)j, (unsigned)l->gx);
    }
    for (unsigned q = 0; q < 4; q++) {
        uint64_t d = io->dx + (uint64_t)m0 * io->pitch_dx +
                     4ull * ((uint64_t)q * (uint64_t)l->Kp + (uint64_t)b0 * (uint64_t)S);
        npu_pb_put(&e->b, &s->st,
            npu_enc_store(&in, NPU_TAG_DX, m, npu_pb_dram(&e->b, d), sb + q * m * (unsigned)l->gx,
                          (unsigned)l->gx, 4u * (unsigned)(G * S), io->pitch_dx),
            &in, 0);
    }
}

/* dW step g: column blocks nb0..: ISW row sets = the parts' X^T rows, dY multicast. */
static void kc_dw_step(void *ctx, int g)
{
    kc_t *k = ctx;
    const kc_layout_t *l = &k->l;
    const npu_bwd_io_t *io = &k->a->io;
    npu_bwd_cores_t *e = &k->e;
    npu_pb_step_t *s = npu_bwd_cores_step(e, g, "dW");
    int S = l->S, M = k->a->M, N = k->a->N, K = k->a->K;
    int nb0 = (g - k->nsx) * l->gw, G = l->nnb - nb0 < l->gw ? l->nnb - nb0 : l->gw;
    unsigned ha = (unsigned)K / 2, cols = 0, sb = l->st[g % 2];
    npu_insn_t in;
    for (int j = 0; j < G; j++) {
        int nb = nb0 + j;
        unsigned n = (unsigned)(N - nb * S < S ? N - nb * S : S), ob = npu_bwd_cores_obuf(e, ha);
        cols += n;
        npu_bwd_block_t blk = {M, nb, l->dy, l->wdy, n, l->xt, l->wx, (unsigned)K, ob};
        npu_bwd_cores_mcast(e, &blk);
        /* skinny: rows [0, K/2) low lanes, [K/2, K) high lanes -> K rows of gw words */
        npu_pb_put(&e->b, e->ex, npu_enc_drain_split(&in, ha, ob, sb + (unsigned)j, (unsigned)l->gw, ha, ha), &in, 0);
    }
    npu_pb_put(&e->b, &s->st,
        npu_enc_store(&in, NPU_TAG_DW, (unsigned)K, npu_pb_dram(&e->b, io->dw + 4ull * (uint64_t)nb0 * (uint64_t)S),
                      sb, (unsigned)l->gw, 4u * cols, io->pitch_dw),
        &in, 0);
}

/* The loads of step h: dY (resident for the whole program: read from DRAM once) with step 0,
 * W^T of core q's blocks (rows n, G*S lanes of k) into buffer h % 2 with every dX step, X^T
 * (resident from the first dW step on) with step nsx. A dX step's loads wait for the EXEC of
 * step h - 2 (the same buffer). */
static void kc_loads(kc_t *k, int h)
{
    const kc_layout_t *l = &k->l;
    const npu_bwd_io_t *io = &k->a->io;
    npu_bwd_cores_t *e = &k->e;
    npu_prog_t *ld = &e->s[h].ld[0];
    int S = l->S, M = k->a->M, N = k->a->N, K = k->a->K;
    int b0 = h / l->nmc * l->gx, G = l->nkb - b0 < l->gx ? l->nkb - b0 : l->gx;
    npu_insn_t in;
    if (h == k->nsx) {
        npu_pb_put(&e->b, ld, npu_enc_load(&in, NPU_TAG_X, 1, (unsigned)M, npu_pb_dram(&e->b, io->x), l->xt, l->wx,
                                2u * (unsigned)K, io->pitch_x), &in, 0);
        return;
    }
    if (h == 0)
        npu_pb_put(&e->b, ld, npu_enc_load(&in, NPU_TAG_DY, 0, (unsigned)M, npu_pb_dram(&e->b, io->dy), l->dy, l->wdy,
                                2u * (unsigned)N, io->pitch_dy), &in, 0);
    for (unsigned q = 0; q < 4; q++) {
        uint64_t d = io->w + ((uint64_t)q * (uint64_t)l->Kp + (uint64_t)b0 * (uint64_t)S) * io->pitch_w;
        npu_pb_put(&e->b, ld, npu_enc_load(&in, NPU_TAG_W, 1, (unsigned)(G * S), npu_pb_dram(&e->b, d),
                                l->wb[h % 2] + q * (unsigned)N * l->wg, l->wg, 2u * (unsigned)N, io->pitch_w),
            &in, 0);
    }
    if (h >= 2)
        npu_pb_wait(&e->b, &e->s[h], NPU_PB_E2L, h - 2, 0, 0);
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
/* The loads of steps 0 .. nsx (kc_loads). */
static void kc_loads_all(void *ctx)
{
    kc_t *k = ctx;
    for (int h = 0; h <= k->nsx && h < k->nsteps; h++)
        kc_loads(k, h);
}

int npu_bwd_emit_kcores(const npu_cfg_t *cfg, const npu_bwd_args_t *a, npu_prog_t *out,
                        npu_bwd_stats_t *st, char *msg, size_t msgn)
{
    kc_t k;
    npu_bwd_cores_prog_t pg = {0, 0, 2, kc_loads_all, kc_dx_step, kc_dw_step, &k};
    memset(&k, 0, sizeof k);
    k.a = a;
    if (!npu_bwd_kcores_fits(cfg, a->M, a->K, a->N) || !kc_plan(cfg, a->M, a->K, a->N, &k.l))
        return npu_bwd_cores_refuse(cfg, "per-core K split needs K a multiple of 4S, K/2 <= OBUF rows and "
                                         "dY, X^T resident in the SPM", msg, msgn);
    k.nsx = pg.nsx = cdiv(k.l.nkb, k.l.gx) * k.l.nmc;
    k.nsteps = pg.nsteps = k.nsx + cdiv(k.l.nnb, k.l.gw);
    npu_bwd_cores_stats(st, a->M, a->K, a->N, 4L * k.nsx); /* W^T of a block group again for each m-chunk */
    return npu_bwd_cores_run(&k.e, cfg, &pg, out, msg, msgn);
}
