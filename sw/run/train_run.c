/* train_run.c - an MLP training step on the NPU; see train_run.h. */
#include "run/train_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/gemm/gemm_emit.h"
#include "compile/gemm/gemm_tiling.h"
#include "prog/prog_expect.h"
#include "ref/bf16.h"
#include "ref/bwd_golden_bf16.h"
#include "ref/golden.h"
#include "run/runtime.h"
#include "compile/train/train_emit.h"
#include "model/knn_part.h"

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

/* A row-major tensor in the NPU's DRAM: rows x cols elements of esize bytes, dense (pitch
 * cols * esize bytes, no row padded to a beat). */
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
    int layer;         /* the layer whose programs run (their label, npu_run_set_label) */
    const int16_t *hX, *hW, *hdY; /* the backward layer's host operands (the fused bf16 golden) */
} ctx_t;

/* The DRAM tensors of layer i: its input X_i, W_i, Y_i, dY_i, dX_i, dW_i and the spill areas of
 * the partials pX_i, pW_i (only X of the extra entry after the last layer). */
typedef struct ltensors {
    dtensor_t X, W, Y, dY, dX, dW, pX, pW;
} ltensors_t;

static int talloc(ctx_t *c, int rows, int cols, int esize, dtensor_t *t)
{
    t->rows = rows;
    t->cols = cols;
    t->pitch = (unsigned)((uint64_t)cols * (uint64_t)esize);
    return npu_alloc(&c->al, (uint64_t)rows * t->pitch, &t->addr);
}

static void write16(ctx_t *c, const dtensor_t *t, const int16_t *v)
{
    npu_write_i16(c->dram, t->addr, t->pitch, t->rows, t->cols, v, (size_t)t->cols);
}

/* Seeded operands: int16, or bf16 (npu_bf16_from_bits: finite, bounded exponents, some zeros). */
static void fill(const ctx_t *c, int16_t *v, size_t n, uint64_t *x)
{
    for (size_t i = 0; i < n; i++) {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        v[i] = npu_cfg_bf16(c->cfg) ? npu_bf16_from_bits((uint16_t)(*x >> 24)) : (int16_t)(*x >> 24);
    }
}

/* The next layer's operands from a result: int32 >> NPU_TRAIN_SHIFT, or fp32 -> bf16 (RNE). */
static void requant(const ctx_t *c, const int32_t *src, int16_t *dst, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = npu_cfg_bf16(c->cfg) ? (int16_t)npu_fp32_to_bf16((uint32_t)src[i])
                                      : (int16_t)(src[i] >> NPU_TRAIN_SHIFT); /* arithmetic shift (gcc, C99 impl.-def.) */
}

/* The tiles every training GEMM program uses (run_gemm); 0, or -1 when none fits. */
static int gemm_plan(const ctx_t *c, int M, int N, int K, npu_gemm_plan_t *plan)
{
    return npu_gemm_tile_ex(c->cfg, M, N, K, c->policy == NPU_EMIT_1G4C, plan);
}

/* The golden result of a training GEMM (operands as npu_golden_gemm takes them): int16, or
 * bf16 in the order of the GEMM program run_gemm runs (its plan and policy). */
static void gold_gemm(const ctx_t *c, int M, int N, int K, const int16_t *A, size_t lda, int ta,
                      const int16_t *B, size_t ldb, int tb, int32_t *C, size_t ldc)
{
    npu_gemm_plan_t plan;
    if (!npu_cfg_bf16(c->cfg) || gemm_plan(c, M, N, K, &plan) != 0)
        npu_golden_gemm(M, N, K, A, lda, ta, B, ldb, tb, C, ldc); /* no plan: run_gemm says so */
    else if (npu_gemm_golden_plan(c->cfg, &plan, c->policy, A, lda, ta, B, ldb, tb, C, ldc) != 0)
        memset(C, 0xA5, sizeof *C * (size_t)M * (size_t)N); /* out of memory: never matches */
}

static const char *const k_pname[NPU_NUM_PASSES] = {"fwd", "dx", "dw"};

/* Runs prog (its tokens complete) at a fresh 16-byte aligned DRAM address, adds its cycles,
 * MACs and DMA bytes to pass `pass` of L, checks the counters against the program. */
static int run_prog(ctx_t *c, npu_train_layer_result_t *L, int pass, const npu_prog_t *prog)
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
    npu_run_set_label("L%d %s", c->layer, k_pname[pass]);
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
static int check_result(ctx_t *c, npu_train_layer_result_t *L, int pass, const dtensor_t *o, int M,
                        int N, const int32_t *gold)
{
    int32_t *got = malloc(sizeof *got * (size_t)M * (size_t)N);
    int br = 0, bc = 0;
    int32_t gv = 0, ev = 0;
    size_t bad;
    if (!got)
        return L->rc[pass] = NPU_GEMM_HOST_ERROR;
    npu_read_i32(c->dram, o->addr, o->pitch, M, N, got, (size_t)N);
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
static int run_gemm(ctx_t *c, npu_train_layer_result_t *L, int pass, int M, int N, int K, int transA,
                    int transB, const dtensor_t *a, const dtensor_t *b, const dtensor_t *o,
                    unsigned tag_a, unsigned tag_b, unsigned tag_c, const int32_t *gold)
{
    npu_gemm_plan_t plan;
    npu_gemm_args_t args;
    npu_prog_t prog;
    int rc;

    L->ran[pass] = 1;
    if (gemm_plan(c, M, N, K, &plan) != 0) {
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

/* DRAM bytes of one read of a whole dense tensor: the beats its bytes touch (the DMA moves
 * whole beats), the least any schedule reads. */
static uint64_t whole_read(const ctx_t *c, const dtensor_t *t)
{
    uint64_t B = c->beat;
    return B * npu_dma_run(t->addr, (uint64_t)t->rows * t->pitch, B,
                           (uint64_t)c->cfg->max_burst_beats).beats;
}

/* DRAM bytes of one transposed read of a whole dense tensor (dX = dY x W^T reads W so): the
 * beats the DMA's transposed LOAD rule touches (npu_dma_bursts_tr; a pitch that is not a whole
 * number of beats makes its sub-rows straddle beats, so this exceeds whole_read). */
static uint64_t whole_read_tr(const ctx_t *c, const dtensor_t *t)
{
    uint64_t B = c->beat; /* the DRAM beat; the rule's groups are SPM words */
    if (!t->rows || !t->pitch)
        return 0;
    return B * npu_dma_bursts_tr_wb((uint64_t)npu_cfg_word(c->cfg), B, (uint64_t)c->cfg->max_burst_beats, t->addr,
                                    (uint64_t)t->rows, (uint64_t)t->cols * 2u, t->pitch).beats;
}

/* The DRAM side of a (sub-)GEMM at element offsets (m0, n0, k0) of the layer's dense tensors. */
static void bwd_io(npu_bwd_io_t *io, long m0, long n0, long k0, const ltensors_t *t)
{
    uint64_t m = (uint64_t)m0, n = (uint64_t)n0, k = (uint64_t)k0;
    io->x = (uint32_t)(t->X.addr + m * t->X.pitch + 2u * k);
    io->w = (uint32_t)(t->W.addr + k * t->W.pitch + 2u * n);
    io->dy = (uint32_t)(t->dY.addr + m * t->dY.pitch + 2u * n);
    io->dx = (uint32_t)(t->dX.addr + m * t->dX.pitch + 4u * k);
    io->dw = (uint32_t)(t->dW.addr + k * t->dW.pitch + 4u * n);
    io->px = (uint32_t)(t->pX.addr + m * t->pX.pitch + 4u * k);
    io->pw = (uint32_t)(t->pW.addr + k * t->pW.pitch + 4u * n);
    io->pitch_x = t->X.pitch;
    io->pitch_w = t->W.pitch;
    io->pitch_dy = t->dY.pitch;
    io->pitch_dx = t->dX.pitch;
    io->pitch_dw = t->dW.pitch;
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


/* The whole layer's emitter arguments under its lowering (io at the tensors' origin). */
static void bwd_args(const ctx_t *c, const npu_train_layer_result_t *L, const ltensors_t *t,
                     npu_bwd_args_t *a)
{
    memset(a, 0, sizeof *a);
    a->M = (int)L->shape.M;
    a->K = (int)L->shape.K;
    a->N = (int)L->shape.N;
    a->Tm = L->lower.Tm;
    a->Tn = L->lower.Tn;
    a->Tk = L->lower.Tk;
    a->order = L->lower.order;
    a->policy = c->policy;
    bwd_io(&a->io, 0, 0, 0, t);
}

/* SCHEDULE (and the base of SUBGEMMS): the parts in one schedule over their tile ranges. */
static void schedule_args(const npu_lower_plan_t *lw, npu_bwd_args_t *a)
{
    a->nparts = lw->plan.nparts;
    a->part_dim = lw->part_dim;
    memcpy(a->part_t0, lw->part_t0, sizeof a->part_t0);
}

/* The emitter's figures of a fused program, added to the layer's. */
static void add_stats(npu_train_layer_result_t *L, const npu_bwd_stats_t *st)
{
    L->dy_tile_loads += st->loads[NPU_TENSOR_DY];
    L->dy_tiles += st->dy_compulsory;
    L->spills += st->spills[NPU_TENSOR_DX] + st->spills[NPU_TENSOR_DW];
    L->reloads += st->reloads[NPU_TENSOR_DX] + st->reloads[NPU_TENSOR_DW];
    L->accum_adds += st->accum_adds;
}

/* SUBGEMMS: each part emitted with its operands offset to its corner and its own tiles, a SYNC
 * barrier between parts, part p > 0 adding to the running sum. 0, or -1 with L->msg set. */
static int emit_subgemms(const ctx_t *c, npu_train_layer_result_t *L, const ltensors_t *t,
                         const npu_bwd_args_t *a, npu_prog_t *prog, char *msg, size_t msgn)
{
    const npu_part_plan_t *pl = &L->lower.plan;
    npu_prog_t part;
    int rc = 0;
    npu_prog_init(&part);
    for (int p = 0; p < pl->nparts && rc == 0; p++) {
        const npu_part_sub_t *sp = &pl->part[p];
        npu_bwd_args_t pa = *a; /* the part: its dims, tiles and corner */
        npu_bwd_stats_t st;
        pa.M = (int)sp->M;
        pa.K = (int)sp->K;
        pa.N = (int)sp->N;
        pa.nparts = 0;
        pa.Tm = L->lower.part_tiles[p][0];
        pa.Tn = L->lower.part_tiles[p][1];
        pa.Tk = L->lower.part_tiles[p][2];
        pa.acc_in = p > 0 && pl->accum_grad >= 0 ? 1u << pl->accum_grad : 0;
        bwd_io(&pa.io, sp->m0, sp->n0, sp->k0, t);
        part.n = 0;
        if (npu_bwd_emit(c->cfg, &pa, &part, &st, msg, msgn) != 0 ||
            (p > 0 && part_barrier(prog) != 0)) {
            snprintf(L->msg, sizeof L->msg, "%s part %d/%d: %s", npu_order_name(L->lower.order), p,
                     pl->nparts, msg);
            rc = -1;
        }
        for (size_t j = 0; j < part.n && rc == 0; j++)
            if (npu_prog_push(prog, &part.insn[j]) != 0) {
                snprintf(L->msg, sizeof L->msg, "out of memory");
                rc = -1;
            }
        if (rc == 0)
            add_stats(L, &st);
    }
    npu_prog_free(&part);
    return rc;
}

/* The program of the lowering's current form into prog (empty). 0, or -1: msg says why (a
 * failed CORES or SCHEDULE emission falls back; a failed SUBGEMMS one has set L->msg). */
static int emit_form(const ctx_t *c, npu_train_layer_result_t *L, const ltensors_t *t,
                     npu_prog_t *prog, char *msg, size_t msgn)
{
    const npu_lower_plan_t *lw = &L->lower;
    npu_bwd_args_t a;
    npu_bwd_stats_t st;
    bwd_args(c, L, t, &a);
    if (lw->form == NPU_LOWER_CORES) {
        /* four parts of K/4 columns, M/4 rows or N/4 columns, one per core (train_emit.h) */
        if ((lw->part == NPU_PART_K ? npu_bwd_emit_kcores
             : lw->part == NPU_PART_M ? npu_bwd_emit_mcores
                                       : npu_bwd_emit_ncores)(c->cfg, &a, prog, &st, msg, msgn) != 0)
            return -1;
        L->dy_tile_loads = st.loads[NPU_TENSOR_DY];
        L->dy_tiles = st.dy_compulsory;
        L->spills = L->reloads = 0;
        L->accum_adds = st.accum_adds; /* the on-chip sum of dW (M) or dX (N); K: none */
        return 0;
    }
    schedule_args(lw, &a);
    if (lw->form == NPU_LOWER_SUBGEMMS)
        return emit_subgemms(c, L, t, &a, prog, msg, msgn);
    /* one schedule: the order's nest part after part (train_emit.h), the partials of the summed
     * gradient kept on chip by the residency plan */
    if (npu_bwd_emit(c->cfg, &a, prog, &st, msg, msgn) != 0)
        return -1;
    L->dy_tile_loads = L->dy_tiles = L->spills = L->reloads = L->accum_adds = 0;
    add_stats(L, &st);
    return 0;
}

/* The summation order of the lowering's fused program (ref/bwd_golden_bf16.h) from its plan:
 * CORES one part per core (ISW waves S deep, a part one OBUF sum, the M and N splits' partials
 * combined in sum4's order, four equal parts of the split dim); SCHEDULE the layer's tiles over
 * the split's parts; SUBGEMMS each part's own tiles (docs/training.md §4, "bf16 summation
 * order"). */
static void sum_plan(const ctx_t *c, const npu_train_layer_result_t *L, npu_bwd_sumplan_t *p)
{
    const npu_lower_plan_t *lw = &L->lower;
    int cores = lw->form == NPU_LOWER_CORES;
    memset(p, 0, sizeof *p);
    p->M = L->shape.M;
    p->N = L->shape.N;
    p->K = L->shape.K;
    p->depth = cores ? c->cfg->s : 2 * c->cfg->s;
    p->split = lw->part == NPU_PART_M ? NPU_SUM_M : lw->part == NPU_PART_N ? NPU_SUM_N
               : lw->part == NPU_PART_K ? NPU_SUM_K : -1;
    p->nparts = cores ? NPU_TRAIN_PARTS : p->split < 0 ? 1 : lw->plan.nparts;
    long D = p->split == NPU_SUM_M ? p->M : p->split == NPU_SUM_N ? p->N : p->K;
    for (int q = 0; q < p->nparts; q++) {
        const npu_part_sub_t *sp = &lw->plan.part[q];
        /* part q's range along the split dim (unsplit: K, as the one part's sub-GEMM has it) */
        long lo = p->split == NPU_SUM_M ? sp->m0 : p->split == NPU_SUM_N ? sp->n0 : sp->k0;
        long len = p->split == NPU_SUM_M ? sp->M : p->split == NPU_SUM_N ? sp->N : sp->K;
        p->order[q] = cores ? npu_bwd_cores_sum_order[q] : q;
        p->lo[q] = cores ? q * D / NPU_TRAIN_PARTS : lo;
        p->lo[q + 1] = cores ? (q + 1) * D / NPU_TRAIN_PARTS : lo + len;
        for (int d = 0; d < 3 && !cores; d++)
            p->tile[q][d] = lw->form == NPU_LOWER_SUBGEMMS ? lw->part_tiles[q][d]
                            : d == NPU_SUM_M ? lw->Tm : d == NPU_SUM_N ? lw->Tn : lw->Tk;
    }
}

/* bf16: the golden dX and dW of the lowering's fused program, summed in its order. 0 or -1. */
static int gold_fused(const ctx_t *c, const npu_train_layer_result_t *L, int32_t *gold_dx,
                      int32_t *gold_dw)
{
    npu_bwd_sumplan_t p;
    if (!npu_cfg_bf16(c->cfg))
        return 0; /* int32 sums in any order: gold_gemm's stand */
    sum_plan(c, L, &p);
    return npu_bwd_golden_bf16(&p, NPU_BWD_DX, c->hX, c->hW, c->hdY, gold_dx) == 0 &&
                   npu_bwd_golden_bf16(&p, NPU_BWD_DW, c->hX, c->hW, c->hdY, gold_dw) == 0
               ? 0
               : -1;
}

/* The fused backward of a layer (train_emit.h): dX and dW in one program of the lowering's form
 * (falling back on a failed emission); both gradients checked against golden (bf16: rewritten
 * in the summation order of the form that runs, gold_fused). Cycles go to the dx pass (the dw
 * pass is marked run). */
static int run_fused(ctx_t *c, npu_train_layer_result_t *L, const ltensors_t *t,
                     int32_t *gold_dx, int32_t *gold_dw)
{
    npu_prog_t prog;
    char msg[200];
    int rc;
    npu_prog_init(&prog);
    while (emit_form(c, L, t, &prog, msg, sizeof msg) != 0) {
        prog.n = 0;
        if (L->lower.form == NPU_LOWER_SUBGEMMS || npu_lower_fallback(&L->lower) != 0) {
            npu_prog_free(&prog);
            return L->rc[NPU_PASS_DX] = L->rc[NPU_PASS_DW] = NPU_GEMM_HOST_ERROR;
        }
    }
    if (gold_fused(c, L, gold_dx, gold_dw) != 0) {
        npu_prog_free(&prog);
        snprintf(L->msg, sizeof L->msg, "the bf16 golden of the %s form failed",
                 npu_lower_form_name(L->lower.form));
        return L->rc[NPU_PASS_DX] = L->rc[NPU_PASS_DW] = NPU_GEMM_HOST_ERROR;
    }
    rc = run_prog(c, L, NPU_PASS_DX, &prog);
    npu_prog_free(&prog);
    L->rc[NPU_PASS_DW] = rc;
    if (rc == NPU_GEMM_PASS || rc == NPU_GEMM_COUNTERS) {
        check_result(c, L, NPU_PASS_DX, &t->dX, (int)L->shape.M, (int)L->shape.K, gold_dx);
        L->rc[NPU_PASS_DW] = L->rc[NPU_PASS_DX] == NPU_GEMM_PASS ? NPU_GEMM_PASS : L->rc[NPU_PASS_DX];
        if (check_result(c, L, NPU_PASS_DW, &t->dW, (int)L->shape.K, (int)L->shape.N, gold_dw) !=
                NPU_GEMM_PASS &&
            L->rc[NPU_PASS_DX] == NPU_GEMM_PASS)
            L->rc[NPU_PASS_DX] = L->rc[NPU_PASS_DW];
    }
    return L->rc[NPU_PASS_DX];
}

/* GEMMS: the dX GEMM (not for the first layer, which has no dX) then the dW GEMM. */
static int run_gemms(ctx_t *c, npu_train_layer_result_t *L, const ltensors_t *t,
                     const int32_t *gold_dx, const int32_t *gold_dw)
{
    int B = (int)L->shape.M, K = (int)L->shape.K, N = (int)L->shape.N, rc = NPU_GEMM_PASS;
    if (L->shape.has_dx && run_gemm(c, L, NPU_PASS_DX, B, K, N, 0, 1, &t->dY, &t->W, &t->dX,
                                    NPU_TAG_DY, NPU_TAG_W, NPU_TAG_DX, gold_dx) != NPU_GEMM_PASS)
        rc = L->rc[NPU_PASS_DX];
    if (run_gemm(c, L, NPU_PASS_DW, K, N, B, 1, 0, &t->X, &t->dY, &t->dW, NPU_TAG_X, NPU_TAG_DY,
                 NPU_TAG_DW, gold_dw) != NPU_GEMM_PASS && rc == NPU_GEMM_PASS)
        rc = L->rc[NPU_PASS_DW];
    return rc;
}

/* The backward of one layer as the lowering of o says (o->order concrete or AUTO). */
static int bwd_layer(ctx_t *c, npu_train_layer_result_t *L, const npu_lower_opts_t *o,
                     const ltensors_t *t, int32_t *gold_dx, int32_t *gold_dw)
{
    uint64_t before = L->rd_bytes[NPU_TAG_DY], before_w = L->rd_bytes[NPU_TAG_W];
    char msg[200];
    int rc;
    if (npu_lower_choose(c->cfg, &L->shape, o, &L->lower, msg, sizeof msg) != 0) {
        L->ran[NPU_PASS_DX] = L->ran[NPU_PASS_DW] = 1;
        snprintf(L->msg, sizeof L->msg, "%s", msg);
        rc = L->rc[NPU_PASS_DX] = L->rc[NPU_PASS_DW] = NPU_GEMM_HOST_ERROR;
    } else if (L->lower.form == NPU_LOWER_GEMMS) {
        rc = run_gemms(c, L, t, gold_dx, gold_dw);
    } else {
        L->ran[NPU_PASS_DX] = L->ran[NPU_PASS_DW] = 1;
        rc = run_fused(c, L, t, gold_dx, gold_dw);
    }
    L->dy_rd_bytes = L->rd_bytes[NPU_TAG_DY] - before;
    L->dy_compulsory = whole_read(c, &t->dY);
    L->w_rd_bytes = L->rd_bytes[NPU_TAG_W] - before_w;
    /* the first layer reads no W */
    L->w_compulsory = L->shape.has_dx ? whole_read_tr(c, &t->W) : 0;
    return rc;
}

/* --order oracle: every concrete order run on the RTL (all must be exact), the fastest kept;
 * only its cycles count in the step. bf16: each order's gradients differ in rounding; each is
 * checked against its own golden (gold_fused rewrites gold_dx, gold_dw), and the layer below
 * takes the last run's dX, which is also the one in DRAM. 0 or -1 (a run failed: *L is that run). */
static int bwd_oracle(ctx_t *c, npu_train_layer_result_t *L, npu_lower_opts_t o,
                      const ltensors_t *t, int32_t *gold_dx, int32_t *gold_dw, int step_ok)
{
    npu_train_layer_result_t start = *L, best;
    uint64_t cyc0 = c->r->cycles, bestc = 0;
    int have = 0;
    for (int q = NPU_ORDER_SEQ; q <= NPU_ORDER_DWMAJOR; q++) {
        npu_train_layer_result_t run = start;
        uint64_t tc;
        o.order = (npu_order_t)q;
        if (bwd_layer(c, &run, &o, t, gold_dx, gold_dw) != NPU_GEMM_PASS) {
            *L = run;
            return -1;
        }
        tc = run.cycles[NPU_PASS_DX] + run.cycles[NPU_PASS_DW];
        start.order_cycles[q] = tc;
        if (!have || tc < bestc) {
            best = run;
            bestc = tc;
            have = 1;
        }
    }
    if (have && step_ok) {
        for (int q = 0; q < NPU_ORDER_AUTO; q++)
            best.order_cycles[q] = start.order_cycles[q];
        *L = best;
        c->r->cycles = cyc0 + bestc;
    }
    return 0;
}

/* Everything one step holds: the DRAM tensors and their host copies, the golden buffer. */
typedef struct step {
    int layers, batch;
    ltensors_t t[NPU_TRAIN_MAX_LAYERS + 1];
    int16_t *hX[NPU_TRAIN_MAX_LAYERS + 1], *hW[NPU_TRAIN_MAX_LAYERS], *hdY[NPU_TRAIN_MAX_LAYERS];
    int32_t *gold;
} step_t;

/* Every tensor of the step gets its own DRAM region, in a fixed order (the programs' addresses,
 * allocated as they run, follow); the host copies and the golden buffer. 0 or -1. */
static int alloc_step(ctx_t *c, const npu_mlp_t *mlp, step_t *s)
{
    int Lc = mlp->layers, B = mlp->batch, ok = 1;
    size_t mx = 0;
    for (int i = 0; i <= Lc && ok; i++) {
        ok = talloc(c, B, mlp->dims[i], 2, &s->t[i].X) == 0;
        s->hX[i] = malloc(sizeof(int16_t) * (size_t)B * (size_t)mlp->dims[i]);
        ok = ok && s->hX[i];
    }
    for (int i = 0; i < Lc && ok; i++) {
        int K = mlp->dims[i], N = mlp->dims[i + 1];
        ltensors_t *t = &s->t[i];
        ok = talloc(c, K, N, 2, &t->W) == 0 && talloc(c, B, N, 4, &t->Y) == 0 &&
             talloc(c, B, N, 2, &t->dY) == 0 && talloc(c, B, K, 4, &t->dX) == 0 &&
             talloc(c, K, N, 4, &t->dW) == 0 && talloc(c, B, K, 4, &t->pX) == 0 &&
             talloc(c, K, N, 4, &t->pW) == 0;
        s->hW[i] = malloc(sizeof(int16_t) * (size_t)K * (size_t)N);
        s->hdY[i] = malloc(sizeof(int16_t) * (size_t)B * (size_t)N);
        ok = ok && s->hW[i] && s->hdY[i];
    }
    for (int i = 0; i < Lc; i++) {
        size_t a = (size_t)B * (size_t)mlp->dims[i + 1], b = (size_t)B * (size_t)mlp->dims[i],
               d = (size_t)mlp->dims[i] * (size_t)mlp->dims[i + 1];
        mx = a > mx ? a : mx;
        mx = b > mx ? b : mx;
        mx = d > mx ? d : mx;
    }
    s->gold = ok ? malloc(sizeof *s->gold * mx) : NULL;
    return ok && s->gold ? 0 : -1;
}

static void free_step(step_t *s)
{
    for (int i = 0; i <= s->layers && i <= NPU_TRAIN_MAX_LAYERS; i++)
        free(s->hX[i]);
    for (int i = 0; i < s->layers && i < NPU_TRAIN_MAX_LAYERS; i++) {
        free(s->hW[i]);
        free(s->hdY[i]);
    }
    free(s->gold);
}

/* Seeded X_0, every W_i and the loss gradient dY_{L-1}, on the host and in DRAM. */
static void seed_inputs(ctx_t *c, const npu_mlp_t *mlp, step_t *s, uint64_t seed)
{
    int Lc = mlp->layers, B = mlp->batch;
    uint64_t x = seed ? seed : 0x9E3779B97F4A7C15ull;
    fill(c, s->hX[0], (size_t)B * (size_t)mlp->dims[0], &x);
    write16(c, &s->t[0].X, s->hX[0]);
    for (int i = 0; i < Lc; i++) {
        fill(c, s->hW[i], (size_t)mlp->dims[i] * (size_t)mlp->dims[i + 1], &x);
        write16(c, &s->t[i].W, s->hW[i]);
    }
    fill(c, s->hdY[Lc - 1], (size_t)B * (size_t)mlp->dims[Lc], &x);
    write16(c, &s->t[Lc - 1].dY, s->hdY[Lc - 1]);
}

/* The caller's inputs (npu_train_io_t) over the seeded ones, on the host and in DRAM. */
static void take_inputs(ctx_t *c, const npu_mlp_t *mlp, step_t *s, const npu_train_io_t *io)
{
    int Lc = mlp->layers;
    size_t B = (size_t)mlp->batch;
    if (io->x) {
        memcpy(s->hX[0], io->x, sizeof(int16_t) * B * (size_t)mlp->dims[0]);
        write16(c, &s->t[0].X, s->hX[0]);
    }
    for (int i = 0; i < Lc; i++)
        if (io->w[i]) {
            memcpy(s->hW[i], io->w[i], sizeof(int16_t) * (size_t)mlp->dims[i] * (size_t)mlp->dims[i + 1]);
            write16(c, &s->t[i].W, s->hW[i]);
        }
    if (io->dy) {
        memcpy(s->hdY[Lc - 1], io->dy, sizeof(int16_t) * B * (size_t)mlp->dims[Lc]);
        write16(c, &s->t[Lc - 1].dY, s->hdY[Lc - 1]);
    }
}

/* After the step: the inputs it used and the NPU's results in DRAM, where io asks for them. */
static void give_outputs(const ctx_t *c, const npu_mlp_t *mlp, const step_t *s,
                         const npu_train_io_t *io)
{
    int Lc = mlp->layers, B = mlp->batch;
    if (io->x_used)
        memcpy(io->x_used, s->hX[0], sizeof(int16_t) * (size_t)B * (size_t)mlp->dims[0]);
    if (io->dy_used)
        memcpy(io->dy_used, s->hdY[Lc - 1], sizeof(int16_t) * (size_t)B * (size_t)mlp->dims[Lc]);
    for (int i = 0; i < Lc; i++) {
        int K = mlp->dims[i], N = mlp->dims[i + 1];
        const ltensors_t *t = &s->t[i];
        if (io->w_used[i])
            memcpy(io->w_used[i], s->hW[i], sizeof(int16_t) * (size_t)K * (size_t)N);
        if (io->y[i])
            npu_read_i32(c->dram, t->Y.addr, t->Y.pitch, B, N, io->y[i], (size_t)N);
        if (io->dx[i] && i > 0)
            npu_read_i32(c->dram, t->dX.addr, t->dX.pitch, B, K, io->dx[i], (size_t)K);
        if (io->dw[i])
            npu_read_i32(c->dram, t->dW.addr, t->dW.pitch, K, N, io->dw[i], (size_t)N);
    }
}

/* The forward GEMM of every layer; the host's activation between them. 1 all PASS, else 0. */
static int forward(ctx_t *c, const npu_mlp_t *mlp, step_t *s)
{
    int B = mlp->batch, ok = 1;
    for (int i = 0; i < mlp->layers; i++) {
        npu_train_layer_result_t *L = &c->r->layer[i];
        int K = mlp->dims[i], N = mlp->dims[i + 1];
        c->layer = i;
        L->shape.M = B;
        L->shape.K = K;
        L->shape.N = N;
        gold_gemm(c, B, N, K, s->hX[i], (size_t)K, 0, s->hW[i], (size_t)N, 0, s->gold, (size_t)N);
        if (run_gemm(c, L, NPU_PASS_FWD, B, N, K, 0, 0, &s->t[i].X, &s->t[i].W, &s->t[i].Y,
                     NPU_TAG_X, NPU_TAG_W, NPU_TAG_Y, s->gold) != NPU_GEMM_PASS)
            ok = 0;
        requant(c, s->gold, s->hX[i + 1], (size_t)B * (size_t)N); /* activation: identity, requantised */
        if (i + 1 < mlp->layers)
            write16(c, &s->t[i + 1].X, s->hX[i + 1]);
    }
    return ok;
}

/* The backward of layer i under the step's order and options; then dY_{i-1} for the layer
 * below (the activation derivative). 1 PASS, 0 not; step_ok: no failure so far. */
static int backward(ctx_t *c, const npu_mlp_t *mlp, npu_order_t order, step_t *s, int i,
                    int step_ok)
{
    npu_train_layer_result_t *L = &c->r->layer[i];
    int B = mlp->batch, K = mlp->dims[i], N = mlp->dims[i + 1], ok = 1;
    npu_lower_opts_t o;
    int32_t *gdw = malloc(sizeof *gdw * (size_t)K * (size_t)N);
    c->layer = i;
    c->hX = s->hX[i];
    c->hW = s->hW[i];
    c->hdY = s->hdY[i];
    L->shape.has_dx = i > 0;
    if (!gdw) {
        snprintf(L->msg, sizeof L->msg, "out of memory");
        return 0;
    }
    if (i > 0)
        gold_gemm(c, B, K, N, s->hdY[i], (size_t)N, 0, s->hW[i], (size_t)N, 1, s->gold, (size_t)K);
    gold_gemm(c, K, N, B, s->hX[i], (size_t)K, 1, s->hdY[i], (size_t)N, 0, gdw, (size_t)N);
    memset(&o, 0, sizeof o);
    o.order = order;
    o.part = mlp->partition == NPU_PART_KNN ? npu_knn_partition(&L->shape) : mlp->partition;
    o.parts_in_sequence = mlp->parts_in_sequence;
    o.tile = mlp->tile;
    if (order == NPU_ORDER_ORACLE && L->shape.has_dx)
        ok = bwd_oracle(c, L, o, &s->t[i], s->gold, gdw, step_ok) == 0;
    else
        ok = bwd_layer(c, L, &o, &s->t[i], s->gold, gdw) == NPU_GEMM_PASS;
    free(gdw);
    if (i > 0) {
        requant(c, s->gold, s->hdY[i - 1], (size_t)B * (size_t)K); /* activation derivative */
        write16(c, &s->t[i - 1].dY, s->hdY[i - 1]);
    }
    return ok;
}

/* The step's arguments; 0, or -1 with the reason in r->msg. */
static int check_request(const npu_mlp_t *mlp, npu_order_t order, int policy,
                         npu_train_result_t *r)
{
    if (mlp->layers < 1 || mlp->layers > NPU_TRAIN_MAX_LAYERS || mlp->batch < 1)
        snprintf(r->msg, sizeof r->msg, "bad MLP");
    else if ((unsigned)order >= NPU_ORDER_COUNT)
        snprintf(r->msg, sizeof r->msg, "unknown order %d", (int)order);
    else if ((order != NPU_ORDER_SEQ || mlp->partition != NPU_PART_NONE) && policy == NPU_EMIT_1G4C)
        snprintf(r->msg, sizeof r->msg, "the fused orders and the partitionings run the 1G1C and "
                 "FlexSA policies");
    else if ((unsigned)mlp->partition >= NPU_PART_COUNT)
        snprintf(r->msg, sizeof r->msg, "unknown partitioning %d", (int)mlp->partition);
    else
        return 0;
    return -1;
}

int npu_train_step(const npu_cfg_t *cfg, npu_sim_t *sim, const npu_mlp_t *mlp,
                   npu_order_t order, int policy, uint64_t seed, uint64_t max_cycles,
                   npu_train_result_t *r)
{
    return npu_train_step_io(cfg, sim, mlp, order, policy, seed, max_cycles, NULL, r);
}

int npu_train_step_io(const npu_cfg_t *cfg, npu_sim_t *sim, const npu_mlp_t *mlp,
                      npu_order_t order, int policy, uint64_t seed, uint64_t max_cycles,
                      const npu_train_io_t *io, npu_train_result_t *r)
{
    size_t dram_bytes = 0;
    ctx_t c;
    step_t *s;
    int ok;

    memset(r, 0, sizeof *r);
    r->order = order;
    r->policy = policy;
    if (check_request(mlp, order, policy, r) != 0)
        return r->rc = -1;
    s = calloc(1, sizeof *s);
    memset(&c, 0, sizeof c);
    c.cfg = cfg;
    c.sim = sim;
    c.dram = npu_sim_dram(sim, &dram_bytes);
    c.beat = (unsigned)npu_cfg_beat(cfg);
    c.policy = policy;
    c.max_cycles = max_cycles;
    c.r = r;
    npu_alloc_init(&c.al, dram_bytes, c.beat);
    if (s)
        s->layers = mlp->layers;
    if (!s || alloc_step(&c, mlp, s) != 0) {
        snprintf(r->msg, sizeof r->msg, "the step's tensors do not fit the DRAM or memory ran out");
        r->rc = -1;
    } else {
        seed_inputs(&c, mlp, s, seed);
        if (io)
            take_inputs(&c, mlp, s, io);
        ok = forward(&c, mlp, s);
        for (int i = mlp->layers - 1; i >= 0; i--) /* backward, layers in reverse */
            ok = backward(&c, mlp, order, s, i, ok) && ok;
        r->rc = ok ? 0 : 1;
        if (io)
            give_outputs(&c, mlp, s, io);
        for (int i = mlp->layers - 1; i >= 0 && !ok; i--) /* the backward runs the last layer first */
            if (r->layer[i].msg[0]) {
                snprintf(r->msg, sizeof r->msg, "layer %d %.200s", i, r->layer[i].msg);
                break;
            }
    }
    if (s)
        free_step(s);
    free(s);
    return r->rc;
}
