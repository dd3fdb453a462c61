/*
 * test_bwd_golden_bf16.c - the order-matched bf16 golden of the fused backward
 * (ref/bwd_golden_bf16.h):
 *   - the wave lists: every element of the reduction once, in the plan's tiles and depth, WRITE
 *     first, ACC at each later op (tile or part), the parts in the combine order, the owning
 *     part's tiles when the split is not the reduction dim; a bad plan gives none;
 *   - chosen data where the order decides the result (1 + 2^-24 + 2^-24 against
 *     2^-24 + 2^-24 + 1), so a golden summing in another order fails;
 *   - training steps of every order x partitioning (parts per core, parts in sequence) at bf16
 *     (S = 2, 8) on the functional model with timing jitter, bit-exact, and the plain order
 *     (one OBUF sum of 2S-deep waves, the GEMM program's) differs from the result on some
 *     outputs of the partitioned and fused forms: the check can fail.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "npu_funcsim.h"
#include "ref/bf16.h"
#include "ref/bwd_golden_bf16.h"
#include "ref/golden.h"
#include "run/runtime.h"
#include "run/train_run.h"
#include "test_cfgs.h"

/* A plan of one part over (M, N, K) with tiles T along every dim and depth d. */
static npu_bwd_sumplan_t one_part(long M, long N, long K, int T, int d)
{
    npu_bwd_sumplan_t p;
    memset(&p, 0, sizeof p);
    p.M = M;
    p.N = N;
    p.K = K;
    p.depth = d;
    p.split = -1;
    p.nparts = 1;
    p.tile[0][0] = p.tile[0][1] = p.tile[0][2] = T;
    return p;
}

/* The list covers [0, R) once in the given ranges order; returns the number of ACC waves. */
static int check_list(const npu_kwave_t *w, size_t n, int R)
{
    char seen[512] = {0};
    int accs = 0;
    cr_assert_gt(n, 0u);
    cr_assert_eq(w[0].start, NPU_CW_WRITE);
    for (size_t i = 0; i < n; i++) {
        cr_assert(w[i].k0 >= 0 && w[i].k1 > w[i].k0 && w[i].k1 <= R, "wave %zu [%d, %d)", i, w[i].k0, w[i].k1);
        for (int k = w[i].k0; k < w[i].k1; k++) {
            cr_assert_eq(seen[k], 0, "element %d twice", k);
            seen[k] = 1;
        }
        cr_assert(i == 0 || w[i].start != NPU_CW_WRITE);
        accs += w[i].start == NPU_CW_ACC;
    }
    for (int k = 0; k < R; k++)
        cr_assert_eq(seen[k], 1, "element %d missing", k);
    return accs;
}

Test(bwd_golden_bf16, schedule_waves_follow_the_tiles)
{
    npu_bwd_sumplan_t p = one_part(24, 40, 12, 16, 4);
    npu_kwave_t w[64];
    /* dX reduces N = 40: tiles [0,16) [16,32) [32,40), 4-deep waves; each later tile DRAIN acc */
    size_t n = npu_bwd_sum_waves(&p, NPU_BWD_DX, 3, 5, w, 64);
    cr_assert_eq(n, 10u);
    cr_assert_eq(check_list(w, n, 40), 2);
    cr_assert(w[4].k0 == 16 && w[4].start == NPU_CW_ACC && w[8].k0 == 32 && w[8].start == NPU_CW_ACC);
    cr_assert(w[5].start == NPU_CW_ADD && w[9].k1 == 40);
    /* dW reduces M = 24: tiles [0,16) [16,24) */
    n = npu_bwd_sum_waves(&p, NPU_BWD_DW, 0, 0, w, 64);
    cr_assert_eq(n, 6u);
    cr_assert_eq(check_list(w, n, 24), 1);
    /* tile 0: one OBUF sum over the whole range (a per-core part) */
    p.tile[0][1] = 0;
    n = npu_bwd_sum_waves(&p, NPU_BWD_DX, 0, 0, w, 64);
    cr_assert_eq(check_list(w, n, 40), 0);
    /* more waves than room: the count, nothing written past max */
    cr_assert_eq(npu_bwd_sum_waves(&p, NPU_BWD_DX, 0, 0, w, 3), 10u);
}

Test(bwd_golden_bf16, parts_in_combine_order_or_the_owning_part)
{
    npu_bwd_sumplan_t p = one_part(32, 16, 8, 0, 2);
    npu_kwave_t w[64];
    const int order[4] = {2, 3, 0, 1};
    p.split = NPU_SUM_M;
    p.nparts = 4;
    for (int q = 0; q <= 4; q++)
        p.lo[q] = 8 * q;
    memcpy(p.order, order, sizeof order);
    for (int q = 0; q < 4; q++)
        p.tile[q][NPU_SUM_N] = 4 + 4 * q; /* dX's reduction tile of the part owning the row */
    /* dW reduces M, the split: parts 2, 3, 0, 1, each one OBUF sum (tile 0) begun by ACC */
    size_t n = npu_bwd_sum_waves(&p, NPU_BWD_DW, 1, 1, w, 64);
    cr_assert_eq(check_list(w, n, 32), 3);
    cr_assert(w[0].k0 == 16 && w[4].k0 == 24 && w[4].start == NPU_CW_ACC && w[8].k0 == 0 && w[12].k0 == 8);
    /* dX row 20 belongs to part 2: its N tile 12 -> tiles [0,12) [12,16) */
    n = npu_bwd_sum_waves(&p, NPU_BWD_DX, 20, 3, w, 64);
    cr_assert_eq(check_list(w, n, 16), 1);
    cr_assert(w[6].k0 == 12 && w[6].start == NPU_CW_ACC);
    /* a bad plan: no waves, and the golden refuses it */
    p.order[1] = 2;
    cr_assert_eq(npu_bwd_sum_waves(&p, NPU_BWD_DW, 0, 0, w, 64), 0u);
    cr_assert_eq(npu_bwd_golden_bf16(&p, NPU_BWD_DW, NULL, NULL, NULL, NULL), -1);
}

/* bf16 bit patterns */
#define BF_ONE 0x3F80    /* 1.0 */
#define BF_TINY 0x3380   /* 2^-24 */
#define FP_ONE 0x3F800000
#define FP_ONE_ULP 0x3F800001 /* 1 + 2^-23 */

/* dX = dY . W^T with dY row (2^-24, 2^-24, 1, 0) and W all ones: summed in k order the two
 * tiny terms make 2^-23, which survives the add to 1; the per-core N split combines the parts
 * 2, 3, 0, 1 (1 first), and each 2^-24 alone is a tie that rounds to even: 1. */
Test(bwd_golden_bf16, the_order_decides_on_chosen_data)
{
    int16_t dY[4] = {BF_TINY, BF_TINY, BF_ONE, 0}, W[4] = {BF_ONE, BF_ONE, BF_ONE, BF_ONE}, X[1] = {0};
    int32_t plain = 0, cores = 0;
    npu_bwd_sumplan_t p = one_part(1, 4, 1, 0, 4);
    const int order[4] = {2, 3, 0, 1};
    cr_assert_eq(npu_bwd_golden_bf16(&p, NPU_BWD_DX, X, W, dY, &plain), 0);
    cr_assert_eq((uint32_t)plain, FP_ONE_ULP);
    p.split = NPU_SUM_N;
    p.nparts = 4;
    p.depth = 1;
    for (int q = 0; q <= 4; q++)
        p.lo[q] = q;
    memcpy(p.order, order, sizeof order);
    cr_assert_eq(npu_bwd_golden_bf16(&p, NPU_BWD_DX, X, W, dY, &cores), 0);
    cr_assert_eq((uint32_t)cores, FP_ONE);
    /* the same parts combined in part order: the k-order sum again */
    for (int q = 0; q < 4; q++)
        p.order[q] = q;
    cr_assert_eq(npu_bwd_golden_bf16(&p, NPU_BWD_DX, X, W, dY, &cores), 0);
    cr_assert_eq((uint32_t)cores, FP_ONE_ULP);
}

/* Outputs of dX (M x K) and dW (K x N) of layer 1 the plain order gets wrong: one OBUF sum of
 * 2S-deep waves over the whole reduction, in k order (a 1G1C GEMM program's order). */
static size_t plain_misses(const npu_cfg_t *c, int M, int K, int N, const npu_train_io_t *io)
{
    int16_t *X = malloc(sizeof *X * (size_t)M * K);
    int32_t *P = malloc(sizeof *P * (size_t)(M > N ? M : N) * K);
    npu_bwd_sumplan_t p = one_part(M, N, K, 0, 2 * c->s);
    size_t bad;
    cr_assert(X && P);
    for (size_t e = 0; e < (size_t)M * K; e++) /* layer 1's X: Y_0 rounded to bf16 */
        X[e] = (int16_t)npu_fp32_to_bf16((uint32_t)io->y[0][e]);
    cr_assert_eq(npu_bwd_golden_bf16(&p, NPU_BWD_DX, X, io->w_used[1], io->dy_used, P), 0);
    bad = npu_compare_i32(M, K, P, (size_t)K, io->dx[1], (size_t)K, NULL, NULL, NULL, NULL);
    cr_assert_eq(npu_bwd_golden_bf16(&p, NPU_BWD_DW, X, io->w_used[1], io->dy_used, P), 0);
    bad += npu_compare_i32(K, N, P, (size_t)N, io->dw[1], (size_t)N, NULL, NULL, NULL, NULL);
    free(X);
    free(P);
    return bad;
}

/* One step of the two-layer MLP 5 -> K -> N at batch M on the functional model, bf16: PASS;
 * returns the outputs of layer 1's dX and dW the plain order gets wrong. */
static size_t bf16_step(int S, int M, int K, int N, npu_order_t order, npu_part_t part, int in_seq,
                        int policy, uint64_t seed)
{
    npu_cfg_t c = test_cfg(S);
    npu_dram_timing_t t = {(double)c.dram_bw, (unsigned)c.dram_latency, (unsigned)c.dram_burst_cost,
                           0, seed};
    npu_train_io_t io;
    npu_mlp_t mlp;
    size_t bad;
    c.dtype = NPU_DTYPE_BF16;
    memset(&io, 0, sizeof io);
    io.dy_used = malloc(sizeof(int16_t) * (size_t)M * N);
    io.w_used[1] = malloc(sizeof(int16_t) * (size_t)K * N);
    io.y[0] = malloc(sizeof(int32_t) * (size_t)M * K);
    io.dx[1] = malloc(sizeof(int32_t) * (size_t)M * K);
    io.dw[1] = malloc(sizeof(int32_t) * (size_t)K * N);
    npu_train_result_t *r = malloc(sizeof *r);
    cr_assert(io.dy_used && io.w_used[1] && io.y[0] && io.dx[1] && io.dw[1] && r);
    npu_funcsim_config(&c);
    npu_funcsim_jitter(20);
    npu_sim_t *s = npu_sim_open(&t);
    cr_assert_not_null(s);
    npu_mlp_two_layers(&mlp, M, 5, K, N);
    mlp.partition = part;
    mlp.parts_in_sequence = in_seq;
    int rc = npu_train_step_io(&c, s, &mlp, order, policy, seed, 50000000, &io, r);
    npu_sim_close(s);
    npu_funcsim_jitter(0);
    cr_assert_eq(rc, 0, "S=%d (%d,%d,%d) order %s partition %s%s: %s", S, M, K, N, npu_order_name(order),
                 npu_part_name(part), in_seq ? " in sequence" : "", r->msg);
    bad = plain_misses(&c, M, K, N, &io);
    free(io.dy_used);
    free(io.w_used[1]);
    free(io.y[0]);
    free(io.dx[1]);
    free(io.dw[1]);
    free(r);
    return bad;
}

/* Every order x partitioning, the parts per core (M, N and K per-core forms apply to the
 * shapes: M a multiple of 4S, N of 8S, K of 4S) and in sequence, both policies: bit-exact. */
Test(bwd_golden_bf16, every_order_and_partition_bit_exact, .timeout = 600)
{
    size_t missed = 0;
    for (int S = 2; S <= 8; S += 6) {
        int f = S == 2 ? 16 : 8; /* two or more tiles per dim (tiles 4S) */
        const int sh[2][3] = {{f * S, 12 * S, f * S}, {7 * S + 3, 5 * S + 1, 9 * S - 1}};
        for (int i = 0; i < 2; i++)
            for (int o = NPU_ORDER_SEQ; o <= NPU_ORDER_DWMAJOR; o++)
                for (int p = NPU_PART_NONE; p <= NPU_PART_K; p++)
                    for (int seq = 0; seq < (p == NPU_PART_NONE ? 1 : 2); seq++)
                        missed += bf16_step(S, sh[i][0], sh[i][1], sh[i][2], (npu_order_t)o,
                                            (npu_part_t)p, seq, (o + p + i) & 1 ? NPU_EMIT_FLEXSA : NPU_EMIT_FW,
                                            (uint64_t)(31 + 7 * o + p + 100 * i));
    }
    /* the per-core partials, tiles and parts sum in other orders than one GEMM program */
    cr_assert_gt(missed, 0u);
}
