/* train_run.c - an MLP training step on the NPU; see train_run.h. */
#include "run/train_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/gemm/gemm_emit.h"
#include "compile/gemm/gemm_tiling.h"
#include "ref/golden.h"
#include "run/runtime.h"
#include "compile/train/train_emit.h"
#include "model/train_layers.h"

int npu_mlp_parse(const char *s, int batch, npu_mlp_t *mlp)
{
    int n = 0;
    const char *p = s;
    memset(mlp, 0, sizeof *mlp);
    if (!s || !*s || batch < 1 || batch > 65535)
        return -1;
    while (*p) {
        long v = 0;
        int digits = 0;
        while (*p >= '0' && *p <= '9' && digits < 7) {
            v = v * 10 + (*p++ - '0');
            digits++;
        }
        if (!digits || v < 1 || v > 65535 || n > NPU_TRAIN_MAX_LAYERS)
            return -1;
        mlp->dims[n++] = (int)v;
        if (*p == ',')
            p++;
        else if (*p)
            return -1;
        if (*p == '\0' && p[-1] == ',')
            return -1;
    }
    if (n < 2)
        return -1;
    mlp->batch = batch;
    mlp->layers = n - 1;
    return 0;
}

/* A row-major tensor in the NPU's DRAM: rows x cols elements of esize bytes, pitch in beats. */
typedef struct dtensor {
    uint64_t addr;
    unsigned pitch;
    int rows, cols;
} dtensor_t;

typedef struct ctx {
    const npu_cfg_t *cfg;
    npu_sim_t *sim;
    uint8_t *dram;
    npu_alloc_t al;
    unsigned beat;
    int policy;
    uint64_t max_cycles;
    npu_train_result_t *r;
    int dead;          /* an earlier program ended in an NPU error: later ones are not run */
    int tile;          /* fused tiles (0: default) */
    npu_tpart_t part;  /* partitioning of the layer being run (NONE, M, N, K) */
    int core_parts;    /* K, M: one part per core when it applies (npu_bwd_emit_kcores/mcores) */
} ctx_t;

static int talloc(ctx_t *c, int rows, int cols, int esize, dtensor_t *t)
{
    t->rows = rows;
    t->cols = cols;
    t->pitch = (unsigned)(((uint64_t)cols * (uint64_t)esize + c->beat - 1) / c->beat);
    return npu_alloc(&c->al, (uint64_t)rows * t->pitch * c->beat, &t->addr);
}

static void write16(ctx_t *c, const dtensor_t *t, const int16_t *v)
{
    npu_write_i16(c->dram, t->addr, t->pitch, c->beat, t->rows, t->cols, v, (size_t)t->cols);
}

static void fill(int16_t *v, size_t n, uint64_t *x)
{
    for (size_t i = 0; i < n; i++) {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        v[i] = (int16_t)(*x >> 24);
    }
}

static void requant(const int32_t *src, int16_t *dst, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = (int16_t)(src[i] >> NPU_TRAIN_SHIFT); /* arithmetic shift (gcc, C99 impl.-def.) */
}

static const char *const k_pname[NPU_NUM_PASSES] = {"fwd", "dx", "dw"};

/* Runs prog (its tokens complete) at a fresh 16-byte aligned DRAM address, adds its cycles,
 * MACs and DMA bytes to pass `pass` of L, checks the counters against the program. */
static int run_prog(ctx_t *c, npu_train_layer_t *L, int pass, const npu_prog_t *prog)
{
    npu_prog_expect_t ex;
    npu_run_result_t rr;
    uint64_t pbase;
    char msg[200];
    int rc;
    L->ran[pass] = 1;
    if (c->dead) {
        snprintf(L->msg, sizeof L->msg, "%s: not run (an earlier program failed)", k_pname[pass]);
        return L->rc[pass] = NPU_GEMM_HOST_ERROR;
    }
    c->al.next = (c->al.next + NPU_INSN_BYTES - 1) / NPU_INSN_BYTES * NPU_INSN_BYTES; /* fetch alignment */
    if (npu_alloc(&c->al, (uint64_t)prog->n * NPU_INSN_BYTES, &pbase) != 0) {
        snprintf(L->msg, sizeof L->msg, "%s: the program does not fit the DRAM", k_pname[pass]);
        return L->rc[pass] = NPU_GEMM_HOST_ERROR;
    }
    npu_prog_expect(c->cfg, prog->insn, prog->n, &ex);
    rc = npu_run_program(c->cfg, c->sim, pbase, prog->insn, prog->n, c->max_cycles, &rr);
    L->cycles[pass] += rr.cnt[NPU_CNT_cycles];
    L->macs[pass] += rr.cnt[NPU_CNT_macs_core0] + rr.cnt[NPU_CNT_macs_core1] +
                     rr.cnt[NPU_CNT_macs_core2] + rr.cnt[NPU_CNT_macs_core3];
    L->noc_h_flits[pass] += rr.cnt[NPU_CNT_noc_h_flits];
    L->noc_v_flits[pass] += rr.cnt[NPU_CNT_noc_v_flits];
    L->noc_deliveries[pass] += rr.cnt[NPU_CNT_noc_deliveries];
    L->noc_mcast_saved[pass] += rr.cnt[NPU_CNT_noc_mcast_saved];
    for (int t = 0; t < NPU_NUM_TAGS; t++) {
        L->rd_bytes[t] += rr.cnt[NPU_CNT_dram_rd_prog + t];
        L->wr_bytes[t] += rr.cnt[NPU_CNT_dram_wr_prog + t];
    }
    c->r->cycles += rr.cnt[NPU_CNT_cycles];
    if (rc != NPU_RUN_DONE) {
        c->dead = 1;
        snprintf(L->msg, sizeof L->msg, "%s: %s (err %s at pc %u)", k_pname[pass],
                 rc == NPU_RUN_TIMEOUT ? "timeout" : "NPU error",
                 npu_error_name(rr.err) ? npu_error_name(rr.err) : "-", (unsigned)rr.err_pc);
        return L->rc[pass] = rc == NPU_RUN_TIMEOUT ? NPU_GEMM_TIMEOUT : NPU_GEMM_NPU_ERROR;
    }
    if (npu_check_counters(rr.cnt, &ex, msg, sizeof msg) != 0) {
        snprintf(L->msg, sizeof L->msg, "%s: counters: %s", k_pname[pass], msg);
        return L->rc[pass] = NPU_GEMM_COUNTERS;
    }
    return L->rc[pass] = NPU_GEMM_PASS;
}

/* Compares the int32 tensor o (M x N) in DRAM with gold. */
static int check_result(ctx_t *c, npu_train_layer_t *L, int pass, const dtensor_t *o, int M,
                        int N, const int32_t *gold)
{
    int32_t *got = malloc(sizeof *got * (size_t)M * (size_t)N);
    int br = 0, bc = 0;
    int32_t gv = 0, ev = 0;
    size_t bad;
    if (!got)
        return L->rc[pass] = NPU_GEMM_HOST_ERROR;
    npu_read_i32(c->dram, o->addr, o->pitch, c->beat, M, N, got, (size_t)N);
    bad = npu_compare_i32(M, N, got, (size_t)N, gold, (size_t)N, &br, &bc, &gv, &ev);
    free(got);
    if (bad) {
        snprintf(L->msg, sizeof L->msg, "%s: %zu mismatches, first [%d][%d] = %d expected %d",
                 k_pname[pass], bad, br, bc, (int)gv, (int)ev);
        return L->rc[pass] = NPU_GEMM_MISMATCH;
    }
    return L->rc[pass];
}

/* One GEMM C = A . B on the NPU with operands already in DRAM (A stored transposed if transA,
 * B if transB); checks counters and the result against gold (M x N, dense). */
static int run_gemm(ctx_t *c, npu_train_layer_t *L, int pass, int M, int N, int K, int transA,
                    int transB, const dtensor_t *a, const dtensor_t *b, const dtensor_t *o,
                    unsigned tag_a, unsigned tag_b, unsigned tag_c, const int32_t *gold)
{
    npu_gemm_plan_t plan;
    npu_gemm_args_t args;
    npu_prog_t prog;
    int rc;

    L->ran[pass] = 1;
    if (npu_gemm_tile_ex(c->cfg, M, N, K, c->policy == NPU_EMIT_1G4C, &plan) != 0) {
        snprintf(L->msg, sizeof L->msg, "%s: no tiling fits", k_pname[pass]);
        return L->rc[pass] = NPU_GEMM_HOST_ERROR;
    }
    memset(&args, 0, sizeof args);
    args.transA = transA;
    args.transB = transB;
    args.a = (uint32_t)a->addr;
    args.b = (uint32_t)b->addr;
    args.c = (uint32_t)o->addr;
    args.pitch_a = a->pitch;
    args.pitch_b = b->pitch;
    args.pitch_c = o->pitch;
    args.modes = c->policy;
    args.tag_a = tag_a;
    args.tag_b = tag_b;
    args.tag_c = tag_c;
    npu_prog_init(&prog);
    if (npu_gemm_emit(c->cfg, &plan, &args, &prog) != 0) {
        npu_prog_free(&prog);
        snprintf(L->msg, sizeof L->msg, "%s: emission failed", k_pname[pass]);
        return L->rc[pass] = NPU_GEMM_HOST_ERROR;
    }
    rc = run_prog(c, L, pass, &prog);
    npu_prog_free(&prog);
    if (rc != NPU_GEMM_NPU_ERROR && rc != NPU_GEMM_TIMEOUT && rc != NPU_GEMM_HOST_ERROR)
        check_result(c, L, pass, o, M, N, gold);
    return L->rc[pass];
}

/* Tiles of a (sub-)GEMM: the defaults, or c->tile clipped to the dims rounded up to 2S. */
static void bwd_tiles(const ctx_t *c, npu_bwd_args_t *a)
{
    int F = 2 * c->cfg->s;
    npu_bwd_default_tiles(c->cfg, a->M, a->K, a->N, &a->Tm, &a->Tn, &a->Tk);
    if (c->tile > 0) {
        a->Tm = c->tile < (a->M + F - 1) / F * F ? c->tile : (a->M + F - 1) / F * F;
        a->Tn = c->tile < (a->N + F - 1) / F * F ? c->tile : (a->N + F - 1) / F * F;
        a->Tk = c->tile < (a->K + F - 1) / F * F ? c->tile : (a->K + F - 1) / F * F;
    }
}

/* The DRAM side of a (sub-)GEMM at element offsets (m0, n0, k0) of the layer's tensors
 * (2S-aligned offsets: whole beats). */
static void bwd_io(const ctx_t *c, npu_bwd_io_t *io, long m0, long n0, long k0, const dtensor_t *X,
                   const dtensor_t *W, const dtensor_t *dY, const dtensor_t *dX, const dtensor_t *dW,
                   const dtensor_t *pX, const dtensor_t *pW)
{
    uint64_t B = c->beat, m = (uint64_t)m0, n = (uint64_t)n0, k = (uint64_t)k0;
    io->x = (uint32_t)(X->addr + m * X->pitch * B + 2u * k);
    io->w = (uint32_t)(W->addr + k * W->pitch * B + 2u * n);
    io->dy = (uint32_t)(dY->addr + m * dY->pitch * B + 2u * n);
    io->dx = (uint32_t)(dX->addr + m * dX->pitch * B + 4u * k);
    io->dw = (uint32_t)(dW->addr + k * dW->pitch * B + 4u * n);
    io->px = (uint32_t)(pX->addr + m * pX->pitch * B + 4u * k);
    io->pw = (uint32_t)(pW->addr + k * pW->pitch * B + 4u * n);
    io->pitch_x = X->pitch;
    io->pitch_w = W->pitch;
    io->pitch_dy = dY->pitch;
    io->pitch_dx = dX->pitch;
    io->pitch_dw = dW->pitch;
}

/* Appends the SYNC barrier between two parts to prog (train_run.h): the last STORE so far
 * pushes s2e, SYNC_E pops it and pushes e2l, SYNC_L pops it. 0 or -1. */
static int part_barrier(npu_prog_t *prog)
{
    npu_insn_t in;
    size_t i = prog->n;
    while (i > 0 && npu_insn_op(&prog->insn[i - 1]) != NPU_OP_STORE)
        i--;
    if (i == 0 || (npu_insn_tokens(&prog->insn[i - 1]) & NPU_TOK_PUSH_PREV))
        return -1; /* a part ends with the final store of its last op, which nothing waits for */
    npu_insn_tok(&prog->insn[i - 1], NPU_TOK_PUSH_PREV);
    if (npu_enc_sync(&in, NPU_OP_SYNC_E) != 0)
        return -1;
    npu_insn_tok(&in, NPU_TOK_POP_NEXT | NPU_TOK_PUSH_PREV);
    if (npu_prog_push(prog, &in) != 0 || npu_enc_sync(&in, NPU_OP_SYNC_L) != 0)
        return -1;
    npu_insn_tok(&in, NPU_TOK_POP_NEXT);
    return npu_prog_push(prog, &in);
}

/* The fused backward of a layer (train_emit.h): dX and dW in one program under a concrete
 * order (seq too when partitioned), split into the parts of c->part (one part for NONE); both
 * gradients checked against golden. Cycles go to the dx pass (the dw pass is marked run). */
static int run_fused(ctx_t *c, npu_train_layer_t *L, npu_torder_t order, const dtensor_t *X,
                     const dtensor_t *W, const dtensor_t *dY, const dtensor_t *dX,
                     const dtensor_t *dW, const dtensor_t *pX, const dtensor_t *pW,
                     const int32_t *gold_dx, const int32_t *gold_dw)
{
    npu_tpart_plan_t pl;
    npu_prog_t prog, part;
    npu_bwd_args_t a; /* the whole layer */
    char msg[200];
    int rc, T;
    L->ran[NPU_PASS_DX] = L->ran[NPU_PASS_DW] = 1;
    L->fused = 1;
    L->order = order;
    L->part = c->part;
    memset(&a, 0, sizeof a);
    a.M = L->M;
    a.K = L->K;
    a.N = L->N;
    bwd_tiles(c, &a);
    a.order = order;
    a.policy = c->policy;
    bwd_io(c, &a.io, 0, 0, 0, X, W, dY, dX, dW, pX, pW);
    /* the split is aligned to the layer's tile along the split dim (as in the model) */
    T = c->part == NPU_TPART_M ? a.Tm : c->part == NPU_TPART_N ? a.Tn : a.Tk;
    if (npu_tpart_split(c->part, c->part == NPU_TPART_NONE ? 1 : NPU_TRAIN_PARTS, L->M, L->N, L->K,
                        T, 4, &pl) != 0) {
        snprintf(L->msg, sizeof L->msg, "%s: partition %s failed", npu_torder_name(order),
                 npu_tpart_name(c->part));
        return L->rc[NPU_PASS_DX] = L->rc[NPU_PASS_DW] = NPU_GEMM_HOST_ERROR;
    }
    L->nparts = pl.nparts;
    L->accum_expect = pl.accum_elems;
    npu_prog_init(&prog);
    npu_prog_init(&part);
    L->part_seq = 0;
    L->part_cores = 0;
    if (c->core_parts && ((c->part == NPU_TPART_K && npu_bwd_kcores_fits(c->cfg, L->M, L->K, L->N)) ||
                          (c->part == NPU_TPART_M && npu_bwd_mcores_fits(c->cfg, L->M, L->K, L->N)) ||
                          (c->part == NPU_TPART_N && npu_bwd_ncores_fits(c->cfg, L->M, L->K, L->N)))) {
        /* four parts of K/4 columns, M/4 rows or N/4 columns, one per core (train_emit.h) */
        npu_bwd_stats_t st;
        if ((c->part == NPU_TPART_K ? npu_bwd_emit_kcores
             : c->part == NPU_TPART_M ? npu_bwd_emit_mcores
                                      : npu_bwd_emit_ncores)(c->cfg, &a, &prog, &st, msg, sizeof msg) == 0) {
            L->nparts = NPU_TRAIN_PARTS;
            L->part_cores = 1;
            L->dy_tile_loads = st.loads[NPU_TT_DY];
            L->dy_tiles = st.dy_compulsory;
            L->spills = L->reloads = 0;
            L->accum_adds = st.accum_adds; /* the on-chip sum of dW (M) or dX (N); K: none */
            if (c->part != NPU_TPART_K) /* the plan's, P = 4 */
                L->accum_expect = (long)(NPU_TRAIN_PARTS - 1) * (c->part == NPU_TPART_M ? L->K * L->N : L->M * L->K);
            goto run;
        }
        prog.n = 0;
    }
    {   /* one schedule: the order's nest part after part (train_emit.h), the partials of the
         * summed gradient kept on chip by the residency plan */
        npu_bwd_stats_t st;
        a.nparts = pl.nparts;
        a.part_dim = c->part == NPU_TPART_M ? NPU_TD_M : c->part == NPU_TPART_N ? NPU_TD_N : NPU_TD_K;
        for (int p = 0; p < pl.nparts; p++) {
            const npu_tsub_t *sp = &pl.part[p];
            long off = c->part == NPU_TPART_M ? sp->m0 : c->part == NPU_TPART_N ? sp->n0 : sp->k0;
            long len = c->part == NPU_TPART_M ? sp->M : c->part == NPU_TPART_N ? sp->N : sp->K;
            a.part_t0[p] = (int)(off / T);
            a.part_t0[p + 1] = (int)((off + len + T - 1) / T);
        }
        if (npu_bwd_emit(c->cfg, &a, &prog, &st, msg, sizeof msg) == 0) {
            L->dy_tile_loads = st.loads[NPU_TT_DY];
            L->dy_tiles = st.dy_compulsory;
            L->spills = st.spills[NPU_TT_DX] + st.spills[NPU_TT_DW];
            L->reloads = st.reloads[NPU_TT_DX] + st.reloads[NPU_TT_DW];
            L->accum_adds = st.accum_adds;
            goto run;
        }
        prog.n = 0; /* the plan does not hold across the parts: the parts in sequence */
        L->part_seq = 1;
    }
    for (int p = 0; p < pl.nparts; p++) {
        const npu_tsub_t *sp = &pl.part[p];
        npu_bwd_args_t pa = a; /* the part: its dims, tiles and corner */
        npu_bwd_stats_t st;
        pa.M = (int)sp->M;
        pa.K = (int)sp->K;
        pa.N = (int)sp->N;
        pa.nparts = 0;
        bwd_tiles(c, &pa);
        pa.acc_in = p > 0 && pl.accum_grad >= 0 ? 1u << pl.accum_grad : 0;
        bwd_io(c, &pa.io, sp->m0, sp->n0, sp->k0, X, W, dY, dX, dW, pX, pW);
        part.n = 0;
        if (npu_bwd_emit(c->cfg, &pa, &part, &st, msg, sizeof msg) != 0 ||
            (p > 0 && part_barrier(&prog) != 0)) {
            npu_prog_free(&prog);
            npu_prog_free(&part);
            snprintf(L->msg, sizeof L->msg, "%s part %d/%d: %s", npu_torder_name(order), p,
                     pl.nparts, msg);
            return L->rc[NPU_PASS_DX] = L->rc[NPU_PASS_DW] = NPU_GEMM_HOST_ERROR;
        }
        for (size_t j = 0; j < part.n; j++)
            if (npu_prog_push(&prog, &part.insn[j]) != 0) {
                npu_prog_free(&prog);
                npu_prog_free(&part);
                snprintf(L->msg, sizeof L->msg, "out of memory");
                return L->rc[NPU_PASS_DX] = L->rc[NPU_PASS_DW] = NPU_GEMM_HOST_ERROR;
            }
        L->dy_tile_loads += st.loads[NPU_TT_DY];
        L->dy_tiles += st.dy_compulsory;
        L->spills += st.spills[NPU_TT_DX] + st.spills[NPU_TT_DW];
        L->reloads += st.reloads[NPU_TT_DX] + st.reloads[NPU_TT_DW];
        L->accum_adds += st.accum_adds;
    }
run:
    npu_prog_free(&part);
    rc = run_prog(c, L, NPU_PASS_DX, &prog);
    npu_prog_free(&prog);
    L->rc[NPU_PASS_DW] = rc;
    if (rc == NPU_GEMM_PASS || rc == NPU_GEMM_COUNTERS) {
        check_result(c, L, NPU_PASS_DX, dX, L->M, L->K, gold_dx);
        L->rc[NPU_PASS_DW] = L->rc[NPU_PASS_DX] == NPU_GEMM_PASS ? NPU_GEMM_PASS : L->rc[NPU_PASS_DX];
        if (check_result(c, L, NPU_PASS_DW, dW, L->K, L->N, gold_dw) != NPU_GEMM_PASS &&
            L->rc[NPU_PASS_DX] == NPU_GEMM_PASS)
            L->rc[NPU_PASS_DX] = L->rc[NPU_PASS_DW];
    }
    return L->rc[NPU_PASS_DX];
}

/* The backward of one layer under a concrete order: seq = the dX GEMM (not for the first layer,
 * which has no dX) then the dW GEMM; a fused order = one train_emit program for both. */
static int bwd_layer(ctx_t *c, npu_train_layer_t *L, npu_torder_t o, const dtensor_t *X,
                     const dtensor_t *W, const dtensor_t *dY, const dtensor_t *dX,
                     const dtensor_t *dW, const dtensor_t *pX, const dtensor_t *pW,
                     const int32_t *gold_dx, const int32_t *gold_dw)
{
    int B = L->M, K = L->K, N = L->N, first = !L->has_dx;
    uint64_t before = L->rd_bytes[NPU_TAG_DY], before_w = L->rd_bytes[NPU_TAG_W];
    int rc = NPU_GEMM_PASS;
    L->part = NPU_TPART_NONE;
    L->nparts = 1;
    if ((o != NPU_TORD_SEQ || c->part != NPU_TPART_NONE) && !first) {
        rc = run_fused(c, L, o, X, W, dY, dX, dW, pX, pW, gold_dx, gold_dw);
    } else {
        L->order = NPU_TORD_SEQ;
        if (!first && run_gemm(c, L, NPU_PASS_DX, B, K, N, 0, 1, dY, W, dX, NPU_TAG_DY, NPU_TAG_W,
                               NPU_TAG_DX, gold_dx) != NPU_GEMM_PASS)
            rc = L->rc[NPU_PASS_DX];
        if (run_gemm(c, L, NPU_PASS_DW, K, N, B, 1, 0, X, dY, dW, NPU_TAG_X, NPU_TAG_DY, NPU_TAG_DW,
                     gold_dw) != NPU_GEMM_PASS && rc == NPU_GEMM_PASS)
            rc = L->rc[NPU_PASS_DW];
    }
    L->dy_rd_bytes = L->rd_bytes[NPU_TAG_DY] - before;
    L->dy_compulsory = (uint64_t)B * dY->pitch * c->beat;
    L->w_rd_bytes = L->rd_bytes[NPU_TAG_W] - before_w;
    L->w_compulsory = first ? 0 : (uint64_t)K * W->pitch * c->beat; /* the first layer reads no W */
    return rc;
}

npu_tpart_t npu_train_knn_partition(long M, long K, long N)
{
    static npu_knn_sample_t samples[NPU_TL_MAX];
    static int ns = -1;
    double f[NPU_KNN_FEATURES];
    int label;
    if (ns < 0) { /* train once: the labels train_layers gives the quad-core paper layer set
                   * (fastest of m, n, k at P = 4 under Algorithm 1's order; the forward, the
                   * same for every scheme, is left out) */
        npu_tpcfg_t pc;
        npu_tm_hw_t hw;
        npu_tlayer_t *Ls = malloc(sizeof *Ls * NPU_TL_MAX);
        int n = Ls && npu_tl_config("server4", &pc) == 0 ? npu_tl_layers(&pc, Ls, NPU_TL_MAX) : -1;
        ns = 0;
        if (n > 0)
            npu_tl_hw(&pc, &hw);
        for (int i = 0; i < n; i++) {
            npu_tm_layer_t ml = {Ls[i].M, Ls[i].K, Ls[i].N, Ls[i].has_dx};
            double best = -1;
            int lab = -1;
            if (!Ls[i].has_dx)
                continue;
            for (int sc = NPU_TPART_M; sc <= NPU_TPART_K; sc++) {
                npu_tm_opts_t o;
                npu_tm_result_t res;
                memset(&o, 0, sizeof o);
                o.order = NPU_TORD_AUTO;
                o.part = (npu_tpart_t)sc;
                o.P = hw.cores;
                o.fwd_cycles = 1;
                if (npu_tm_layer_eval(&hw, &ml, &o, &res) == 0 && (lab < 0 || res.cycles < best)) {
                    best = res.cycles;
                    lab = sc;
                }
            }
            if (lab < 0)
                continue;
            npu_knn_features(Ls[i].M, Ls[i].K, Ls[i].N, samples[ns].f);
            samples[ns++].label = lab;
        }
        free(Ls);
    }
    npu_knn_features(M, K, N, f);
    label = ns > 0 ? npu_knn_predict(samples, ns, f, 1) : -1;
    return label >= NPU_TPART_M && label <= NPU_TPART_K ? (npu_tpart_t)label : NPU_TPART_M;
}

int npu_train_step(const npu_cfg_t *cfg, npu_sim_t *sim, const npu_mlp_t *mlp,
                   npu_torder_t order, int policy, uint64_t seed, uint64_t max_cycles,
                   npu_train_result_t *r)
{
    int Lc = mlp->layers, B = mlp->batch, ok = 1;
    size_t dram_bytes = 0;
    ctx_t c;
    dtensor_t X[NPU_TRAIN_MAX_LAYERS + 1], W[NPU_TRAIN_MAX_LAYERS], Y[NPU_TRAIN_MAX_LAYERS],
        dY[NPU_TRAIN_MAX_LAYERS], dX[NPU_TRAIN_MAX_LAYERS], dW[NPU_TRAIN_MAX_LAYERS],
        pX[NPU_TRAIN_MAX_LAYERS], pW[NPU_TRAIN_MAX_LAYERS]; /* spill areas of the partials */
    int16_t *hX[NPU_TRAIN_MAX_LAYERS + 1] = {0}, *hW[NPU_TRAIN_MAX_LAYERS] = {0},
            *hdY[NPU_TRAIN_MAX_LAYERS] = {0};
    int32_t *gold = NULL;
    uint64_t x = seed ? seed : 0x9E3779B97F4A7C15ull;

    memset(r, 0, sizeof *r);
    r->order = order;
    r->policy = policy;
    if (Lc < 1 || Lc > NPU_TRAIN_MAX_LAYERS || B < 1) {
        snprintf(r->msg, sizeof r->msg, "bad MLP");
        return r->rc = -1;
    }
    if ((unsigned)order >= NPU_TORD_COUNT) {
        snprintf(r->msg, sizeof r->msg, "unknown order %d", (int)order);
        return r->rc = -1;
    }
    if ((order != NPU_TORD_SEQ || mlp->partition != NPU_TPART_NONE) && policy == NPU_EMIT_1G4C) {
        snprintf(r->msg, sizeof r->msg, "the fused orders and the partitionings run the 1G1C and "
                 "FlexSA policies");
        return r->rc = -1;
    }
    if ((unsigned)mlp->partition >= NPU_TPART_COUNT) {
        snprintf(r->msg, sizeof r->msg, "unknown partitioning %d", (int)mlp->partition);
        return r->rc = -1;
    }
    memset(&c, 0, sizeof c);
    c.cfg = cfg;
    c.sim = sim;
    c.dram = npu_sim_dram(sim, &dram_bytes);
    c.beat = (unsigned)npu_cfg_beat(cfg);
    c.policy = policy;
    c.max_cycles = max_cycles;
    c.r = r;
    c.tile = mlp->tile;
    c.core_parts = !mlp->parts_in_sequence;
    npu_alloc_init(&c.al, dram_bytes, c.beat);
    /* every tensor of the step gets its own DRAM region (programs are allocated as they run) */
    for (int i = 0; i <= Lc && ok; i++) {
        ok = talloc(&c, B, mlp->dims[i], 2, &X[i]) == 0;
        hX[i] = malloc(sizeof(int16_t) * (size_t)B * (size_t)mlp->dims[i]);
        ok = ok && hX[i];
    }
    for (int i = 0; i < Lc && ok; i++) {
        int K = mlp->dims[i], N = mlp->dims[i + 1];
        ok = talloc(&c, K, N, 2, &W[i]) == 0 && talloc(&c, B, N, 4, &Y[i]) == 0 &&
             talloc(&c, B, N, 2, &dY[i]) == 0 && talloc(&c, B, K, 4, &dX[i]) == 0 &&
             talloc(&c, K, N, 4, &dW[i]) == 0 && talloc(&c, B, K, 4, &pX[i]) == 0 &&
             talloc(&c, K, N, 4, &pW[i]) == 0;
        hW[i] = malloc(sizeof(int16_t) * (size_t)K * (size_t)N);
        hdY[i] = malloc(sizeof(int16_t) * (size_t)B * (size_t)N);
        ok = ok && hW[i] && hdY[i];
    }
    {
        size_t mx = 0;
        for (int i = 0; i < Lc; i++) {
            size_t a = (size_t)B * (size_t)mlp->dims[i + 1], b = (size_t)B * (size_t)mlp->dims[i],
                   d = (size_t)mlp->dims[i] * (size_t)mlp->dims[i + 1];
            mx = a > mx ? a : mx;
            mx = b > mx ? b : mx;
            mx = d > mx ? d : mx;
        }
        gold = ok ? malloc(sizeof *gold * mx) : NULL;
        ok = ok && gold;
    }
    if (!ok) {
        snprintf(r->msg, sizeof r->msg, "the step's tensors do not fit the DRAM or memory ran out");
        r->rc = -1;
        goto out;
    }
    fill(hX[0], (size_t)B * (size_t)mlp->dims[0], &x);
    write16(&c, &X[0], hX[0]);
    for (int i = 0; i < Lc; i++) {
        fill(hW[i], (size_t)mlp->dims[i] * (size_t)mlp->dims[i + 1], &x);
        write16(&c, &W[i], hW[i]);
    }
    fill(hdY[Lc - 1], (size_t)B * (size_t)mlp->dims[Lc], &x);
    write16(&c, &dY[Lc - 1], hdY[Lc - 1]);

    /* forward */
    for (int i = 0; i < Lc; i++) {
        npu_train_layer_t *L = &r->layer[i];
        int K = mlp->dims[i], N = mlp->dims[i + 1];
        L->M = B;
        L->K = K;
        L->N = N;
        npu_golden_gemm(B, N, K, hX[i], (size_t)K, 0, hW[i], (size_t)N, 0, gold, (size_t)N);
        if (run_gemm(&c, L, NPU_PASS_FWD, B, N, K, 0, 0, &X[i], &W[i], &Y[i], NPU_TAG_X,
                     NPU_TAG_W, NPU_TAG_Y, gold) != NPU_GEMM_PASS)
            ok = 0;
        requant(gold, hX[i + 1], (size_t)B * (size_t)N); /* activation: identity, requantised */
        if (i + 1 < Lc)
            write16(&c, &X[i + 1], hX[i + 1]);
    }
    /* backward, layers in reverse: dX_i then dW_i (seq), or both in one fused program */
    for (int i = Lc - 1; i >= 0; i--) {
        npu_train_layer_t *L = &r->layer[i];
        int K = mlp->dims[i], N = mlp->dims[i + 1];
        npu_torder_t o = order;
        L->has_dx = i > 0;
        int32_t *gdw = malloc(sizeof *gdw * (size_t)K * (size_t)N);
        if (!gdw) {
            ok = 0;
            snprintf(L->msg, sizeof L->msg, "out of memory");
            continue;
        }
        if (i > 0)
            npu_golden_gemm(B, K, N, hdY[i], (size_t)N, 0, hW[i], (size_t)N, 1, gold, (size_t)K);
        npu_golden_gemm(K, N, B, hX[i], (size_t)K, 1, hdY[i], (size_t)N, 0, gdw, (size_t)N);
        if (o == NPU_TORD_AUTO)
            o = (npu_torder_t)npu_train_resolve(NPU_TORD_AUTO, B, K, N);
        if (i == 0)
            o = NPU_TORD_SEQ; /* the first layer has no dX: its dW alone */
        c.part = mlp->partition == NPU_TPART_KNN ? npu_train_knn_partition(B, K, N) : mlp->partition;
        if (o == NPU_TORD_ORACLE) {
            /* run every concrete order on the RTL and keep the fastest (all must be exact) */
            npu_train_layer_t start = *L, best;
            uint64_t cyc0 = r->cycles, bestc = 0;
            int have = 0;
            for (int q = NPU_TORD_SEQ; q <= NPU_TORD_DWMAJOR; q++) {
                npu_train_layer_t t = start;
                uint64_t tc;
                if (bwd_layer(&c, &t, (npu_torder_t)q, &X[i], &W[i], &dY[i], &dX[i], &dW[i], &pX[i],
                              &pW[i], gold, gdw) != NPU_GEMM_PASS) {
                    *L = t;
                    ok = 0;
                    break;
                }
                tc = t.cycles[NPU_PASS_DX] + t.cycles[NPU_PASS_DW];
                start.order_cycles[q] = tc;
                if (!have || tc < bestc) {
                    best = t;
                    bestc = tc;
                    have = 1;
                }
            }
            if (have && ok) {
                for (int q = 0; q < NPU_TORD_AUTO; q++)
                    best.order_cycles[q] = start.order_cycles[q];
                *L = best;
                r->cycles = cyc0 + bestc; /* only the kept order counts */
            }
        } else if (bwd_layer(&c, L, o, &X[i], &W[i], &dY[i], &dX[i], &dW[i], &pX[i], &pW[i], gold,
                             gdw) != NPU_GEMM_PASS) {
            ok = 0;
        }
        free(gdw);
        if (i > 0) {
            requant(gold, hdY[i - 1], (size_t)B * (size_t)K); /* activation derivative */
            write16(&c, &dY[i - 1], hdY[i - 1]);
        }
    }
    r->rc = ok ? 0 : 1;
    for (int i = Lc - 1; i >= 0 && !ok; i--) /* the backward runs the last layer first */
        if (r->layer[i].msg[0]) {
            snprintf(r->msg, sizeof r->msg, "layer %d %.200s", i, r->layer[i].msg);
            break;
        }
out:
    for (int i = 0; i <= Lc && i <= NPU_TRAIN_MAX_LAYERS; i++)
        free(hX[i]);
    for (int i = 0; i < Lc && i < NPU_TRAIN_MAX_LAYERS; i++) {
        free(hW[i]);
        free(hdY[i]);
    }
    free(gold);
    return r->rc;
}
