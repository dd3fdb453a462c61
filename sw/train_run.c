/* train_run.c - an MLP training step on the NPU; see train_run.h. */
#include "train_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_emit.h"
#include "gemm_tiling.h"
#include "golden.h"
#include "runtime.h"

static const char *const k_order_names[NPU_TRAIN_NUM_ORDERS] = {
    "seq", "interleave", "dxmajor", "dwmajor", "auto", "oracle"};

const char *npu_train_order_name(npu_train_order_t o)
{
    return (unsigned)o < NPU_TRAIN_NUM_ORDERS ? k_order_names[o] : NULL;
}

int npu_train_order_parse(const char *s, npu_train_order_t *o)
{
    for (int i = 0; s && i < NPU_TRAIN_NUM_ORDERS; i++)
        if (!strcmp(s, k_order_names[i])) {
            *o = (npu_train_order_t)i;
            return 0;
        }
    return -1;
}

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

/* One GEMM C = A . B on the NPU with operands already in DRAM (A stored transposed if transA,
 * B if transB); checks counters and the result against gold (M x N, dense). */
static int run_gemm(ctx_t *c, npu_train_layer_t *L, int pass, int M, int N, int K, int transA,
                    int transB, const dtensor_t *a, const dtensor_t *b, const dtensor_t *o,
                    unsigned tag_a, unsigned tag_b, unsigned tag_c, const int32_t *gold)
{
    static const char *const pname[NPU_NUM_PASSES] = {"fwd", "dx", "dw"};
    npu_gemm_plan_t plan;
    npu_gemm_args_t args;
    npu_prog_t prog;
    npu_prog_expect_t ex;
    npu_run_result_t rr;
    uint64_t pbase;
    char msg[200];
    int rc;
    int32_t *got;

    L->ran[pass] = 1;
    if (npu_gemm_tile_ex(c->cfg, M, N, K, c->policy == NPU_EMIT_1G4C, &plan) != 0) {
        snprintf(L->msg, sizeof L->msg, "%s: no tiling fits", pname[pass]);
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
    if (npu_gemm_emit(c->cfg, &plan, &args, &prog) != 0 ||
        npu_alloc(&c->al, (uint64_t)prog.n * NPU_INSN_BYTES, &pbase) != 0) {
        npu_prog_free(&prog);
        snprintf(L->msg, sizeof L->msg, "%s: emission failed or the program does not fit",
                 pname[pass]);
        return L->rc[pass] = NPU_GEMM_HOST_ERROR;
    }
    npu_prog_expect(c->cfg, prog.insn, prog.n, &ex);
    rc = npu_run_program(c->cfg, c->sim, pbase, prog.insn, prog.n, c->max_cycles, &rr);
    npu_prog_free(&prog);
    L->cycles[pass] = rr.cnt[NPU_CNT_cycles];
    L->macs[pass] = rr.cnt[NPU_CNT_macs_core0] + rr.cnt[NPU_CNT_macs_core1] +
                    rr.cnt[NPU_CNT_macs_core2] + rr.cnt[NPU_CNT_macs_core3];
    for (int t = 0; t < NPU_NUM_TAGS; t++) {
        L->rd_bytes[t] += rr.cnt[NPU_CNT_dram_rd_prog + t];
        L->wr_bytes[t] += rr.cnt[NPU_CNT_dram_wr_prog + t];
    }
    c->r->cycles += L->cycles[pass];
    if (rc != NPU_RUN_DONE) {
        snprintf(L->msg, sizeof L->msg, "%s: %s (err %s at pc %u)", pname[pass],
                 rc == NPU_RUN_TIMEOUT ? "timeout" : "NPU error",
                 npu_error_name(rr.err) ? npu_error_name(rr.err) : "-", (unsigned)rr.err_pc);
        return L->rc[pass] = rc == NPU_RUN_TIMEOUT ? NPU_GEMM_TIMEOUT : NPU_GEMM_NPU_ERROR;
    }
    got = malloc(sizeof *got * (size_t)M * (size_t)N);
    if (!got)
        return L->rc[pass] = NPU_GEMM_HOST_ERROR;
    npu_read_i32(c->dram, o->addr, o->pitch, c->beat, M, N, got, (size_t)N);
    {
        int br = 0, bc = 0;
        int32_t gv = 0, ev = 0;
        size_t bad = npu_compare_i32(M, N, got, (size_t)N, gold, (size_t)N, &br, &bc, &gv, &ev);
        free(got);
        if (bad) {
            snprintf(L->msg, sizeof L->msg, "%s: %zu mismatches, first [%d][%d] = %d expected %d",
                     pname[pass], bad, br, bc, (int)gv, (int)ev);
            return L->rc[pass] = NPU_GEMM_MISMATCH;
        }
    }
    if (npu_check_counters(rr.cnt, &ex, msg, sizeof msg) != 0) {
        snprintf(L->msg, sizeof L->msg, "%s: counters: %s", pname[pass], msg);
        return L->rc[pass] = NPU_GEMM_COUNTERS;
    }
    return L->rc[pass] = NPU_GEMM_PASS;
}

int npu_train_step(const npu_cfg_t *cfg, npu_sim_t *sim, const npu_mlp_t *mlp,
                   npu_train_order_t order, int policy, uint64_t seed, uint64_t max_cycles,
                   npu_train_result_t *r)
{
    int Lc = mlp->layers, B = mlp->batch, ok = 1;
    size_t dram_bytes = 0;
    ctx_t c;
    dtensor_t X[NPU_TRAIN_MAX_LAYERS + 1], W[NPU_TRAIN_MAX_LAYERS], Y[NPU_TRAIN_MAX_LAYERS],
        dY[NPU_TRAIN_MAX_LAYERS], dX[NPU_TRAIN_MAX_LAYERS], dW[NPU_TRAIN_MAX_LAYERS];
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
    if (order != NPU_TRAIN_SEQ) {
        snprintf(r->msg, sizeof r->msg,
                 "order '%s' is not lowered to the RTL yet (only 'seq'; see docs/training.md)",
                 npu_train_order_name(order) ? npu_train_order_name(order) : "?");
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
             talloc(&c, K, N, 4, &dW[i]) == 0;
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
    /* backward, layers in reverse; sequential order: dX_i then dW_i */
    for (int i = Lc - 1; i >= 0; i--) {
        npu_train_layer_t *L = &r->layer[i];
        int K = mlp->dims[i], N = mlp->dims[i + 1];
        uint64_t before = L->rd_bytes[NPU_TAG_DY];
        if (i > 0) {
            npu_golden_gemm(B, K, N, hdY[i], (size_t)N, 0, hW[i], (size_t)N, 1, gold, (size_t)K);
            if (run_gemm(&c, L, NPU_PASS_DX, B, K, N, 0, 1, &dY[i], &W[i], &dX[i], NPU_TAG_DY,
                         NPU_TAG_W, NPU_TAG_DX, gold) != NPU_GEMM_PASS)
                ok = 0;
            requant(gold, hdY[i - 1], (size_t)B * (size_t)K); /* activation derivative */
            write16(&c, &dY[i - 1], hdY[i - 1]);
        }
        npu_golden_gemm(K, N, B, hX[i], (size_t)K, 1, hdY[i], (size_t)N, 0, gold, (size_t)N);
        if (run_gemm(&c, L, NPU_PASS_DW, K, N, B, 1, 0, &X[i], &dY[i], &dW[i], NPU_TAG_X,
                     NPU_TAG_DY, NPU_TAG_DW, gold) != NPU_GEMM_PASS)
            ok = 0;
        L->dy_rd_bytes = L->rd_bytes[NPU_TAG_DY] - before;
        L->dy_compulsory = (uint64_t)B * dY[i].pitch * c.beat;
    }
    r->rc = ok ? 0 : 1;
    for (int i = 0; i < Lc && !ok; i++)
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
