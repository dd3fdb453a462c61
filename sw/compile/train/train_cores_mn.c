/* train_cores_mn.c - the M and N splits of the fused backward GEMM run one part per core
 * (npu_bwd_emit_mcores / _ncores, train_emit.h; docs/training.md §4 "One part per core"): the
 * shared operand multicast, the four parts' partials of the split gradient summed on chip. */
#include "compile/train/train_cores.h"

#include <string.h>

static int cdiv(int a, int b) { return (a + b - 1) / b; }

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
            if (npu_bwd_cores_spm_fits(cfg, l->words))
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

const int npu_bwd_cores_sum_order[4] = {2, 3, 0, 1}; /* D1 P2, D2 P3, D3 P0, D4 P1 (sum4) */

/* The four partials P_p at OBUF rows ob + (p&1)*rows, lanes (p>>1)*S (an ISW wave of 4*rows rows
 * whose sets are the parts) summed into the accumulator A (rows words, stride apart) with the
 * scratch scr (rows words, split so that scr + rows*stride = A) taking the unwanted halves:
 * D1..D4 of npu_bwd_emit_mcores. */
static void sum4(npu_bwd_cores_t *e, unsigned rows, unsigned ob, unsigned scr, unsigned A, unsigned stride)
{
    npu_insn_t in;
    if (scr + rows * stride != A)
        npu_pb_fail(&e->b, "sum4: the scratch must end where the accumulator starts");
    npu_pb_put(&e->b, e->ex, npu_enc_drain_split(&in, rows, ob, scr, stride, rows, rows), &in, 0); /* P0 -> scr, P2 -> A */
    for (unsigned d = 0; d < 3; d++) { /* P1 -> scr, P3 -> A; P0 -> A; P1 -> A */
        int rc = npu_enc_drain_split(&in, rows, ob + (d == 1 ? 0 : rows), d ? A : scr, stride, rows, d ? 0 : rows);
        if (rc == 0)
            rc = npu_insn_drain_acc(&in);
        npu_pb_put(&e->b, e->ex, rc, &in, 0);
    }
}

/* One output block of the four parts' partials: nch S-deep chunks; chunk s of part p is the tile
 * at ldw[4*s + p] (S rows of stride ldw_stride, n lanes, lane_hi for odd blocks), against
 * 4*rows A rows from a_addr + s/2 (stride a_stride) whose row sets are the parts. */
typedef struct psum {
    int nch;
    const unsigned *ldw;
    unsigned ldw_stride;
    int odd_block;
    unsigned n, rows, a_addr, a_stride;
} psum_t;

/* The partials of one block accumulated in the OBUF at ob over the chunks (per chunk, four masked
 * LDWs and one ISW WAVE), then sum4 into A (scratch scr). */
static void parts_sum(npu_bwd_cores_t *e, const psum_t *ps, unsigned ob, unsigned scr, unsigned A, unsigned stride)
{
    static const unsigned core_of_part[4] = {0, 2, 1, 3}; /* ISW row sets: [0,qa) -> 0, then 2, 1, 3 */
    unsigned S = e->S;
    npu_insn_t in;
    for (int s = 0; s < ps->nch; s++) {
        unsigned bank = npu_pb_bank(&e->b);
        for (unsigned p = 0; p < 4; p++) {
            int rc = npu_enc_ldw_cores(&in, bank, NPU_MODE_ISW, ps->ldw[4 * s + (int)p], ps->ldw_stride, S,
                                       ps->n, 1u << core_of_part[p]);
            if (rc == 0 && ps->odd_block)
                rc = npu_insn_lane_hi(&in);
            npu_pb_put(&e->b, e->ex, rc, &in, 0);
        }
        int rc = npu_enc_wave(&in, bank, NPU_MODE_ISW, s > 0, 4u * ps->rows, ps->a_addr + (unsigned)(s / 2),
                              ps->a_stride, S, ps->n, ob);
        if (rc == 0 && s % 2)
            rc = npu_insn_lane_hi(&in);
        npu_pb_put(&e->b, e->ex, rc, &in, 0);
    }
    sum4(e, ps->rows, ob, scr, A, stride);
}

/* The M split's emission state. */
typedef struct mcx {
    npu_bwd_cores_t e;
    mc_layout_t l;
    const npu_bwd_args_t *a;
    npu_bwd_stats_t *stats;
    int nxg, nsx, nsteps;
} mcx_t;

/* dY (chunk c = r / 4 of part p = r % 4) and W^T with step 0, X^T of every part (K rows of Mp
 * lanes each) with the first dW step; all resident for the whole program (each read from DRAM
 * once) and loaded ahead of any step. */
static void mc_loads(void *ctx)
{
    mcx_t *x = ctx;
    const mc_layout_t *l = &x->l;
    const npu_bwd_io_t *io = &x->a->io;
    npu_bwd_cores_t *e = &x->e;
    npu_prog_t *l0 = &e->s[0].ld[0], *lx = &e->s[x->nsx].ld[0];
    unsigned Ku = (unsigned)x->a->K, N = (unsigned)x->a->N, mc = (unsigned)l->mc;
    npu_insn_t in;
    for (unsigned r = 0; r < 4u * (unsigned)l->nch; r++) {
        uint64_t d = io->dy + ((uint64_t)(r % 4) * (uint64_t)l->Mp + (uint64_t)(r / 4) * mc) * io->pitch_dy;
        npu_pb_put(&e->b, l0, npu_enc_load(&in, NPU_TAG_DY, 0, mc, npu_pb_dram(&e->b, d), l->dy + r * mc * l->wdy, l->wdy,
                                2u * N, io->pitch_dy), &in, 0);
    }
    npu_pb_put(&e->b, l0, npu_enc_load(&in, NPU_TAG_W, 1, Ku, npu_pb_dram(&e->b, io->w), l->wt, l->wk, 2u * N, io->pitch_w),
        &in, 0);
    for (unsigned p = 0; p < 4; p++) {
        uint64_t d = io->x + (uint64_t)p * (uint64_t)l->Mp * io->pitch_x;
        npu_pb_put(&e->b, lx, npu_enc_load(&in, NPU_TAG_X, 1, (unsigned)l->Mp, npu_pb_dram(&e->b, d), l->xt + p * Ku * l->wxp,
                                l->wxp, 2u * Ku, io->pitch_x), &in, 0);
    }
}

/* dX step g, chunk c: ISW row sets = the parts' dY rows, W^T multicast. */
static void mc_dx_step(void *ctx, int g)
{
    mcx_t *x = ctx;
    const mc_layout_t *l = &x->l;
    const npu_bwd_io_t *io = &x->a->io;
    npu_bwd_cores_t *e = &x->e;
    npu_pb_step_t *sp = npu_bwd_cores_step(e, g, "dX");
    int S = l->S, K = x->a->K, N = x->a->N, c = g / x->nxg, b0 = g % x->nxg * l->gx;
    int G = l->nkb - b0 < l->gx ? l->nkb - b0 : l->gx;
    unsigned mc = (unsigned)l->mc, mc2 = 2u * mc, cols = 0, dyc = l->dy + 4u * (unsigned)c * mc * l->wdy;
    unsigned sb = l->st[g % 2];
    npu_insn_t in;
    for (int j = 0; j < G; j++) {
        int kb = b0 + j;
        unsigned n = (unsigned)(K - kb * S < S ? K - kb * S : S), ob = npu_bwd_cores_obuf(e, mc2);
        cols += n;
        npu_bwd_block_t blk = {N, kb, l->wt, l->wk, n, dyc, l->wdy, 2u * mc2, ob};
        npu_bwd_cores_mcast(e, &blk);
        /* skinny: rows [0, 2mc) low lanes, [2mc, 4mc) high lanes -> 4mc rows of gx words, part
         * p's chunk at rows p·mc.. */
        npu_pb_put(&e->b, e->ex, npu_enc_drain_split(&in, mc2, ob, sb + (unsigned)j, (unsigned)l->gx, mc2, mc2), &in, 0);
    }
    for (unsigned p = 0; p < 4; p++) {
        uint64_t d = io->dx + ((uint64_t)p * (uint64_t)l->Mp + (uint64_t)c * mc) * io->pitch_dx +
                     4ull * (uint64_t)b0 * (uint64_t)S;
        npu_pb_put(&e->b, &sp->st, npu_enc_store(&in, NPU_TAG_DX, mc, npu_pb_dram(&e->b, d), sb + p * mc * (unsigned)l->gx,
                                      (unsigned)l->gx, 4u * cols, io->pitch_dx), &in, 0);
    }
}

/* dW step g: ISW row sets = the parts' X^T rows, each core its part's dY tile; sum on chip. */
static void mc_dw_step(void *ctx, int g)
{
    mcx_t *x = ctx;
    npu_bwd_stats_t *stats = x->stats;
    const mc_layout_t *l = &x->l;
    const npu_bwd_io_t *io = &x->a->io;
    npu_bwd_cores_t *e = &x->e;
    npu_pb_step_t *sp = npu_bwd_cores_step(e, g, "dW");
    int S = l->S, K = x->a->K, N = x->a->N, nb0 = (g - x->nsx) * l->gw;
    int G = l->nnb - nb0 < l->gw ? l->nnb - nb0 : l->gw;
    unsigned Ku = (unsigned)K, mc = (unsigned)l->mc, cols = 0, gw = (unsigned)l->gw, sb = l->st[g % 2];
    unsigned acc = sb + Ku * gw, ldw[4 * NPU_PARTS_MAXCH];
    psum_t ps = {l->nmc, ldw, l->wdy, 0, 0, Ku, l->xt, l->wxp};
    npu_insn_t in;
    for (int j = 0; j < G; j++) {
        int nb = nb0 + j;
        unsigned n = (unsigned)(N - nb * S < S ? N - nb * S : S), ob = npu_bwd_cores_obuf(e, 2 * Ku);
        cols += n;
        for (int s = 0; s < l->nmc && s < NPU_PARTS_MAXCH; s++) /* part p's dY rows of chunk s */
            for (unsigned p = 0; p < 4; p++)
                ldw[4 * s + (int)p] = l->dy + ((4u * ((unsigned)(s * S) / mc) + p) * mc + (unsigned)(s * S) % mc) *
                                                  l->wdy + (unsigned)(nb / 2);
        ps.odd_block = nb % 2;
        ps.n = n;
        parts_sum(e, &ps, ob, sb + (unsigned)j, acc + (unsigned)j, gw);
        if (stats)
            stats->accum_adds += 3L * K * (long)n;
    }
    npu_pb_put(&e->b, &sp->st, npu_enc_store(&in, NPU_TAG_DW, Ku, npu_pb_dram(&e->b, io->dw + 4ull * (uint64_t)(nb0 * S)), acc,
                                  gw, 4u * cols, io->pitch_dw), &in, 0);
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
int npu_bwd_emit_mcores(const npu_cfg_t *cfg, const npu_bwd_args_t *a, npu_prog_t *out,
                        npu_bwd_stats_t *st, char *msg, size_t msgn)
{
    mcx_t x;
    npu_bwd_cores_prog_t pg = {0, 0, 0, mc_loads, mc_dx_step, mc_dw_step, &x};
    memset(&x, 0, sizeof x);
    x.a = a;
    x.stats = st;
    if (!npu_bwd_mcores_fits(cfg, a->M, a->K, a->N) || !mc_plan(cfg, a->M, a->K, a->N, &x.l))
        return npu_bwd_cores_refuse(cfg, "per-core M split needs M a multiple of 4S, 2K <= OBUF rows "
                                         "and dY, W^T, X^T resident in the SPM", msg, msgn);
    x.nxg = cdiv(x.l.nkb, x.l.gx);
    x.nsx = pg.nsx = x.nxg * x.l.nch;
    x.nsteps = pg.nsteps = x.nsx + cdiv(x.l.nnb, x.l.gw);
    pg.ahead = x.nsteps; /* all loads first: every operand stays resident */
    npu_bwd_cores_stats(st, a->M, a->K, a->N, 1);
    return npu_bwd_cores_run(&x.e, cfg, &pg, out, msg, msgn);
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
        if (npu_bwd_cores_spm_fits(cfg, l->words))
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

/* The N split's emission state. */
typedef struct ncx {
    npu_bwd_cores_t e;
    nc_layout_t l;
    const npu_bwd_args_t *a;
    npu_bwd_stats_t *stats;
    int nsx, nsteps;
} ncx_t;

/* dY[:, part p] (M rows of Np columns, beat-aligned) and W^T with step 0, X^T with the first dW
 * step; all resident, loaded ahead of any step. */
static void nc_loads(void *ctx)
{
    ncx_t *x = ctx;
    const nc_layout_t *l = &x->l;
    const npu_bwd_io_t *io = &x->a->io;
    npu_bwd_cores_t *e = &x->e;
    npu_prog_t *l0 = &e->s[0].ld[0], *lx = &e->s[x->nsx].ld[0];
    unsigned Ku = (unsigned)x->a->K, Mu = (unsigned)x->a->M, Np = (unsigned)l->Np;
    npu_insn_t in;
    for (unsigned p = 0; p < 4; p++)
        npu_pb_put(&e->b, l0, npu_enc_load(&in, NPU_TAG_DY, 0, Mu, npu_pb_dram(&e->b, io->dy + 2ull * p * Np),
                                l->dy + p * Mu * l->wdyp, l->wdyp, 2u * Np, io->pitch_dy), &in, 0);
    npu_pb_put(&e->b, l0, npu_enc_load(&in, NPU_TAG_W, 1, Ku, npu_pb_dram(&e->b, io->w), l->wt, l->wk,
                            2u * (unsigned)x->a->N, io->pitch_w), &in, 0);
    npu_pb_put(&e->b, lx, npu_enc_load(&in, NPU_TAG_X, 1, Mu, npu_pb_dram(&e->b, io->x), l->xt, l->wx, 2u * Ku, io->pitch_x),
        &in, 0);
}

/* dX step g: ISW row sets = the parts' dY rows, each core its part's W^T; sum on chip. */
static void nc_dx_step(void *ctx, int g)
{
    ncx_t *x = ctx;
    npu_bwd_stats_t *stats = x->stats;
    const nc_layout_t *l = &x->l;
    const npu_bwd_io_t *io = &x->a->io;
    npu_bwd_cores_t *e = &x->e;
    npu_pb_step_t *sp = npu_bwd_cores_step(e, g, "dX");
    int S = l->S, K = x->a->K, b0 = g * l->gx, G = l->nkb - b0 < l->gx ? l->nkb - b0 : l->gx;
    unsigned Mu = (unsigned)x->a->M, Np = (unsigned)l->Np, cols = 0, gx = (unsigned)l->gx, sb = l->st[g % 2];
    unsigned acc = sb + Mu * gx, ldw[4 * NPU_PARTS_MAXCH];
    psum_t ps = {l->nbp, ldw, l->wk, 0, 0, Mu, l->dy, l->wdyp};
    npu_insn_t in;
    for (int j = 0; j < G; j++) {
        int kb = b0 + j;
        unsigned n = (unsigned)(K - kb * S < S ? K - kb * S : S), ob = npu_bwd_cores_obuf(e, 2 * Mu);
        cols += n;
        for (int s = 0; s < l->nbp && s < NPU_PARTS_MAXCH; s++) /* part p's W^T rows of chunk s */
            for (unsigned p = 0; p < 4; p++)
                ldw[4 * s + (int)p] = l->wt + (p * Np + (unsigned)(s * S)) * l->wk + (unsigned)(kb / 2);
        ps.odd_block = kb % 2;
        ps.n = n;
        parts_sum(e, &ps, ob, sb + (unsigned)j, acc + (unsigned)j, gx);
        if (stats)
            stats->accum_adds += 3L * (long)Mu * (long)n;
    }
    npu_pb_put(&e->b, &sp->st, npu_enc_store(&in, NPU_TAG_DX, Mu, npu_pb_dram(&e->b, io->dx + 4ull * (uint64_t)(b0 * S)), acc,
                                  gx, 4u * cols, io->pitch_dx), &in, 0);
}

/* dW step g, blocks b0.. of every part: bcast waves of X^T rows, core q its own dY tile. */
static void nc_dw_step(void *ctx, int g)
{
    ncx_t *x = ctx;
    const nc_layout_t *l = &x->l;
    const npu_bwd_io_t *io = &x->a->io;
    npu_bwd_cores_t *e = &x->e;
    npu_pb_step_t *sp = npu_bwd_cores_step(e, g, "dW");
    int S = l->S, M = x->a->M, b0 = (g - x->nsx) * l->gw, G = l->nbp - b0 < l->gw ? l->nbp - b0 : l->gw;
    unsigned Ku = (unsigned)x->a->K, Mu = (unsigned)M, Np = (unsigned)l->Np, gw = (unsigned)l->gw;
    unsigned sb = l->st[g % 2];
    npu_insn_t in;
    npu_bwd_block_t blk = {M, 0, l->dy, l->wdyp, (unsigned)S, l->xt, l->wx, Ku, 0};
    for (int j = 0; j < G; j++) { /* core q: dY[M-chunk, part q's block b0 + j] */
        blk.blk = b0 + j;
        blk.ob = npu_bwd_cores_obuf(e, 2 * Ku);
        npu_bwd_cores_bcast(e, &blk, Mu * l->wdyp, sb + (unsigned)j, gw);
    }
    for (unsigned q = 0; q < 4; q++)
        npu_pb_put(&e->b, &sp->st, npu_enc_store(&in, NPU_TAG_DW, Ku, npu_pb_dram(&e->b, io->dw + 4ull * (q * Np + (unsigned)(b0 * S))),
                                      sb + q * Ku * gw, gw, 4u * (unsigned)(G * S), io->pitch_dw), &in, 0);
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
    ncx_t x;
    npu_bwd_cores_prog_t pg = {0, 0, 0, nc_loads, nc_dx_step, nc_dw_step, &x};
    memset(&x, 0, sizeof x);
    x.a = a;
    x.stats = st;
    if (!npu_bwd_ncores_fits(cfg, a->M, a->K, a->N) || !nc_plan(cfg, a->M, a->K, a->N, &x.l))
        return npu_bwd_cores_refuse(cfg, "per-core N split needs N a multiple of 8S, 2M and 2K <= OBUF rows "
                                         "and dY, W^T, X^T resident in the SPM", msg, msgn);
    x.nsx = pg.nsx = cdiv(x.l.nkb, x.l.gx);
    x.nsteps = pg.nsteps = x.nsx + cdiv(x.l.nbp, x.l.gw);
    pg.ahead = x.nsteps; /* all loads first: every operand stays resident */
    npu_bwd_cores_stats(st, a->M, a->K, a->N, 1);
    return npu_bwd_cores_run(&x.e, cfg, &pg, out, msg, msgn);
}
