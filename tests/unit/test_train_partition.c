/* test_train_partition.c - M / N / K partitioning (train_partition.h), brief T9, and a
 * tile-level functional check of the ORDER and PARTITION stages (brief T1 at compiler level):
 * executing the tile-ops of any order on any partitioning, with the first/last flags driving
 * the accumulators, gives dX and dW bit-identical to a direct integer reference. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "test_cfgs.h"
#include "compile/train/train_order.h"
#include "compile/train/train_partition.h"

/* T9: P = 2 semantics. */
Test(train_partition, t9_semantics)
{
    const long M = 256, N = 64, K = 96;
    npu_part_plan_t p;
    cr_assert_eq(npu_part_split(NPU_PART_M, 2, M, N, K, 16, 4, &p), 0);
    cr_assert_eq(p.nparts, 2);
    cr_assert(p.part[0].M == 128 && p.part[1].M == 128 && p.part[1].m0 == 128);
    cr_assert(p.part[0].N == N && p.part[0].K == K);
    cr_assert_eq(p.shared, NPU_TENSOR_W);
    cr_assert_eq(p.accum_grad, NPU_PHASE_DW);
    cr_assert_eq(p.accum_elems, K * N);
    cr_assert_eq(p.accum_dram_bytes, 2u * K * N * 4);

    cr_assert_eq(npu_part_split(NPU_PART_N, 2, M, N, K, 16, 4, &p), 0);
    cr_assert(p.part[0].N == 32 && p.part[1].n0 == 32);
    cr_assert_eq(p.shared, NPU_TENSOR_X);
    cr_assert_eq(p.accum_grad, NPU_PHASE_DX);
    cr_assert_eq(p.accum_elems, M * K);

    cr_assert_eq(npu_part_split(NPU_PART_K, 2, M, N, K, 16, 4, &p), 0);
    cr_assert(p.part[0].K == 48 && p.part[1].k0 == 48);
    cr_assert_eq(p.shared, NPU_TENSOR_DY);
    cr_assert_eq(p.accum_grad, -1);
    cr_assert_eq(p.accum_elems, 0);
    cr_assert_eq(p.accum_dram_bytes, 0);
    cr_assert_eq(p.shared_bytes, (uint64_t)M * N * 2);

    /* alignment and fewer units than parts */
    cr_assert_eq(npu_part_split(NPU_PART_M, 4, 45, N, K, 16, 4, &p), 0);
    cr_assert_eq(p.nparts, 3);
    cr_assert(p.part[0].M == 16 && p.part[1].M == 16 && p.part[2].M == 13);
    cr_assert_eq(npu_part_split(NPU_PART_N, 4, M, 135, K, 32, 4, &p), 0);
    cr_assert(p.nparts == 4 && p.part[0].N == 64 && p.part[1].N == 32 && p.part[3].N == 7);
    cr_assert_eq(npu_part_split(NPU_PART_NONE, 4, M, N, K, 16, 4, &p), 0);
    cr_assert_eq(p.nparts, 1);
    cr_assert_eq(npu_part_split(NPU_PART_KNN, 2, M, N, K, 16, 4, &p), -1);
    cr_assert_eq(npu_part_parse("k"), NPU_PART_K);
}

/* ------------------------------------------------------------------ functional check */

/* uint32 arithmetic = int32 two's-complement wrap without UB */
static void ref(long M, long N, long K, const int16_t *X, const int16_t *W, const int16_t *dY,
                uint32_t *dX, uint32_t *dW)
{
    for (long m = 0; m < M; m++)
        for (long k = 0; k < K; k++) {
            uint32_t a = 0;
            for (long n = 0; n < N; n++)
                a += (uint32_t)((int32_t)dY[m * N + n] * W[k * N + n]);
            dX[m * K + k] = a;
        }
    for (long k = 0; k < K; k++)
        for (long n = 0; n < N; n++) {
            uint32_t a = 0;
            for (long m = 0; m < M; m++)
                a += (uint32_t)((int32_t)X[m * K + k] * dY[m * N + n]);
            dW[k * N + n] = a;
        }
}

/* Runs one part's tile-ops with tile T: accumulators start at `first`, are added to the global
 * result (the partition accumulation) at `last`. */
static void run_part(const npu_part_sub_t *s, npu_order_t o, int T, long N, long K,
                     const int16_t *X, const int16_t *W, const int16_t *dY, uint32_t *dX,
                     uint32_t *dW)
{
    int Mt = (int)((s->M + T - 1) / T), Nt = (int)((s->N + T - 1) / T),
        Kt = (int)((s->K + T - 1) / T);
    size_t n = 2u * (size_t)Mt * Nt * Kt;
    npu_order_op_t *ops = malloc(n * sizeof *ops);
    cr_assert_eq(npu_order_build(o, Mt, Nt, Kt, ops, n), (long)n);
    uint32_t *acc = malloc((size_t)T * T * sizeof *acc);
    /* the partial tiles live in scratch arrays indexed like the outputs */
    uint32_t *pX = calloc((size_t)s->M * s->K, sizeof *pX);
    uint32_t *pW = calloc((size_t)s->K * s->N, sizeof *pW);
    for (size_t i = 0; i < n; i++) {
        const npu_order_op_t *p = &ops[i];
        long m0 = (long)p->m * T, n0 = (long)p->n * T, k0 = (long)p->k * T;
        long me = s->M - m0 < T ? s->M - m0 : T, ne = s->N - n0 < T ? s->N - n0 : T,
             ke = s->K - k0 < T ? s->K - k0 : T;
        if (p->grad == NPU_PHASE_DX) {
            for (long a = 0; a < me; a++)
                for (long b = 0; b < ke; b++) {
                    uint32_t v = p->first ? 0 : pX[(m0 + a) * s->K + k0 + b];
                    for (long c = 0; c < ne; c++)
                        v += (uint32_t)((int32_t)dY[(s->m0 + m0 + a) * N + s->n0 + n0 + c] *
                                        W[(s->k0 + k0 + b) * N + s->n0 + n0 + c]);
                    pX[(m0 + a) * s->K + k0 + b] = v;
                    if (p->last)
                        dX[(s->m0 + m0 + a) * K + s->k0 + k0 + b] += v;
                }
        } else {
            for (long a = 0; a < ke; a++)
                for (long b = 0; b < ne; b++) {
                    uint32_t v = p->first ? 0 : pW[(k0 + a) * s->N + n0 + b];
                    for (long c = 0; c < me; c++)
                        v += (uint32_t)((int32_t)X[(s->m0 + m0 + c) * K + s->k0 + k0 + a] *
                                        dY[(s->m0 + m0 + c) * N + s->n0 + n0 + b]);
                    pW[(k0 + a) * s->N + n0 + b] = v;
                    if (p->last)
                        dW[(s->k0 + k0 + a) * N + s->n0 + n0 + b] += v;
                }
        }
    }
    free(ops);
    free(acc);
    free(pX);
    free(pW);
}

Test(train_partition, t1_functional_all_orders_partitions)
{
    static const long sh[][3] = {{64, 64, 64}, {256, 64, 32}, {8, 512, 64}, {45, 90, 135}};
    uint64_t seed = 0x7d207863fb0d6765ull;
    for (size_t si = 0; si < sizeof sh / sizeof sh[0]; si++) {
        long M = sh[si][0], K = sh[si][1], N = sh[si][2];
        int16_t *X = malloc((size_t)(M * K) * 2), *W = malloc((size_t)(K * N) * 2),
                *dY = malloc((size_t)(M * N) * 2);
        for (long i = 0; i < M * K; i++) X[i] = (int16_t)test_rand(&seed);
        for (long i = 0; i < K * N; i++) W[i] = (int16_t)test_rand(&seed);
        for (long i = 0; i < M * N; i++) dY[i] = (int16_t)test_rand(&seed);
        uint32_t *rX = malloc((size_t)(M * K) * 4), *rW = malloc((size_t)(K * N) * 4);
        ref(M, N, K, X, W, dY, rX, rW);
        uint32_t *gX = malloc((size_t)(M * K) * 4), *gW = malloc((size_t)(K * N) * 4);
        for (int o = NPU_ORDER_SEQ; o <= NPU_ORDER_DWMAJOR; o++)
            for (int sc = NPU_PART_NONE; sc <= NPU_PART_K; sc++)
                for (int P = 1; P <= 4; P *= 2) {
                    if (sc == NPU_PART_NONE && P > 1)
                        continue;
                    npu_part_plan_t pp;
                    cr_assert_eq(npu_part_split((npu_part_t)sc, P, M, N, K, 16, 4, &pp), 0);
                    memset(gX, 0, (size_t)(M * K) * 4);
                    memset(gW, 0, (size_t)(K * N) * 4);
                    for (int p = 0; p < pp.nparts; p++)
                        run_part(&pp.part[p], (npu_order_t)o, 16, N, K, X, W, dY, gX, gW);
                    cr_assert(memcmp(gX, rX, (size_t)(M * K) * 4) == 0, "dX (%ld,%ld,%ld) %s %s P=%d",
                              M, K, N, npu_order_name((npu_order_t)o),
                              npu_part_name((npu_part_t)sc), P);
                    cr_assert(memcmp(gW, rW, (size_t)(K * N) * 4) == 0, "dW (%ld,%ld,%ld) %s %s P=%d",
                              M, K, N, npu_order_name((npu_order_t)o),
                              npu_part_name((npu_part_t)sc), P);
                }
        free(X); free(W); free(dY); free(rX); free(rW); free(gX); free(gW);
    }
}
