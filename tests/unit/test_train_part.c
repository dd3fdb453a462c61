/*
 * test_train_part.c - the partitioned backward (train_run.h "Partitioning") on the functional
 * NPU model (npu_funcsim.c) with timing jitter: every order x every partitioning gives dX and
 * dW bit-exact, the MAC counter is exactly 2*M*N*K and the accumulation adds are the plan's
 * (nparts - 1) * (K*N or M*K). The RTL runs the same checks (tests/rtl/test_train_part.c).
 * The K split one part per core (K a multiple of 4S: "kx4c", npu_bwd_emit_kcores) on shapes
 * where it applies, and the same shapes with the parts in sequence (parts_in_sequence); the
 * same for the M split one part per core (M a multiple of 4S: "mx4c", npu_bwd_emit_mcores) and
 * the N split (N a multiple of 8S: "nx4c", npu_bwd_emit_ncores).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "npu_funcsim.h"
#include "run/runtime.h"
#include "test_cfgs.h"
#include "run/train_run.h"
#include "model/knn_part.h"

static void part_check_ex(int S, int M, int K, int N, npu_order_t order, npu_part_t part, int policy,
                          unsigned jitter, uint64_t seed, int in_seq, int cores)
{
    npu_cfg_t c = test_cfg(S);
    npu_dram_timing_t t;
    npu_mlp_t mlp;
    memset(&t, 0, sizeof t);
    t.bytes_per_cycle = c.dram_bw;
    t.latency = (unsigned)c.dram_latency;
    t.burst_cost = (unsigned)c.dram_burst_cost;
    t.seed = seed;
    npu_funcsim_config(&c);
    npu_funcsim_jitter(jitter);
    npu_sim_t *s = npu_sim_open(&t);
    cr_assert_not_null(s);
    npu_mlp_two_layers(&mlp, M, 5, K, N);
    mlp.partition = part;
    mlp.parts_in_sequence = in_seq;
    npu_train_result_t *r = malloc(sizeof *r);
    cr_assert_not_null(r);
    int rc = npu_train_step(&c, s, &mlp, order, policy, seed, 50000000, r);
    npu_sim_close(s);
    npu_funcsim_jitter(0);
    cr_assert_eq(rc, 0, "S=%d (%d,%d,%d) order %s partition %s: %s", S, M, K, N,
                 npu_order_name(order), npu_part_name(part), r->msg);
    const npu_train_layer_result_t *L = &r->layer[1];
    uint64_t mnk = (uint64_t)M * (uint64_t)N * (uint64_t)K;
    cr_assert_eq(L->macs[NPU_PASS_DX] + L->macs[NPU_PASS_DW], 2 * mnk);
    cr_assert_eq(L->accum_adds, L->lower.accum_expect, "S=%d (%d,%d,%d) %s %s: adds %ld expected %ld",
                 S,
                 M, K, N, npu_order_name(order), npu_part_name(part), L->accum_adds,
                 L->lower.accum_expect);
    if (part != NPU_PART_KNN)
        cr_assert_eq(L->lower.part, part);
    if (L->lower.part == NPU_PART_M)
        cr_assert_eq(L->lower.accum_expect, (long)(L->lower.nparts - 1) * K * N);
    else if (L->lower.part == NPU_PART_N)
        cr_assert_eq(L->lower.accum_expect, (long)(L->lower.nparts - 1) * M * K);
    else
        cr_assert_eq(L->lower.accum_expect, 0);
    if (cores >= 0) { /* one part per core: four parts, dY read from DRAM once */
        cr_assert_eq(L->lower.form == NPU_LOWER_CORES, cores, "S=%d (%d,%d,%d): form %s", S, M, K, N,
                     npu_lower_form_name(L->lower.form));
        if (cores) {
            cr_assert_eq(L->lower.nparts, 4);
            /* once: the four parts cut the dense dY at element boundaries, so a beat shared by
             * two parts is read by both (at most one per internal cut) */
            uint64_t B = 4u * (unsigned)S;
            cr_assert(L->dy_rd_bytes >= L->dy_compulsory &&
                      L->dy_rd_bytes <= L->dy_compulsory + 3 * B,
                      "S=%d (%d,%d,%d): dY read %llu bytes, once = %llu (+ at most 3 shared beats)",
                      S, M, K, N, (unsigned long long)L->dy_rd_bytes,
                      (unsigned long long)L->dy_compulsory);
        }
    }
    free(r);
}

static void part_check(int S, int M, int K, int N, npu_order_t order, npu_part_t part, int policy,
                       unsigned jitter, uint64_t seed)
{
    part_check_ex(S, M, K, N, order, part, policy, jitter, seed, 0, -1);
}

/* K per core where K is a multiple of 4S (the issue's first three shapes and edge shapes: M
 * and N not multiples of S), against the same split with the parts in sequence */
Test(train_part, k_per_core, .timeout = 600)
{
    const int sh[][4] = {{8, 64, 64, 64}, {8, 256, 64, 32}, {8, 8, 512, 64}, {8, 13, 32, 21},
                         {8, 100, 96, 9}, {2, 64, 64, 64}, {2, 5, 8, 3}, {2, 37, 24, 11}};
    for (int i = 0; i < (int)(sizeof sh / sizeof sh[0]); i++)
        for (int seq = 0; seq < 2; seq++)
            part_check_ex(sh[i][0], sh[i][1], sh[i][2], sh[i][3], (npu_order_t)(i % 4),
                          NPU_PART_K, i & 1 ? NPU_EMIT_FLEXSA : NPU_EMIT_FW, 30, 300 + (uint64_t)i,
                          seq, !seq);
}

/* M per core where M is a multiple of 4S (2K <= OBUF rows; edge shapes: K and N not multiples
 * of S, K = 1, M/2 > OBUF rows), against the same split with the parts in sequence */
Test(train_part, m_per_core, .timeout = 600)
{
    const int sh[][4] = {{8, 64, 64, 64}, {8, 256, 64, 32}, {8, 128, 128, 64}, {8, 512, 32, 16}, {8, 32, 19, 7},
                         {8, 64, 1, 29}, {2, 64, 32, 17}, {2, 8, 5, 3}, {2, 128, 9, 4}, {2, 256, 5, 3}};
    for (int i = 0; i < (int)(sizeof sh / sizeof sh[0]); i++)
        for (int seq = 0; seq < 2; seq++)
            part_check_ex(sh[i][0], sh[i][1], sh[i][2], sh[i][3], (npu_order_t)(i % 4),
                          NPU_PART_M, i & 1 ? NPU_EMIT_FLEXSA : NPU_EMIT_FW, 30, 400 + (uint64_t)i,
                          seq, !seq);
}

/* N per core where N is a multiple of 8S (2M, 2K <= OBUF rows; edge shapes: M and K not
 * multiples of S, M = 1, K = 1), against the same split with the parts in sequence */
Test(train_part, n_per_core, .timeout = 600)
{
    const int sh[][4] = {{8, 64, 64, 64}, {8, 128, 128, 64}, {8, 19, 25, 64}, {8, 1, 5, 128}, {8, 10, 1, 64},
                         {2, 32, 32, 32}, {2, 7, 5, 16}, {2, 1, 3, 48}};
    for (int i = 0; i < (int)(sizeof sh / sizeof sh[0]); i++)
        for (int seq = 0; seq < 2; seq++)
            part_check_ex(sh[i][0], sh[i][1], sh[i][2], sh[i][3], (npu_order_t)(i % 4),
                          NPU_PART_N, i & 1 ? NPU_EMIT_FLEXSA : NPU_EMIT_FW, 30, 500 + (uint64_t)i,
                          seq, !seq);
}

Test(train_part, issue_shapes_every_order_and_partition, .timeout = 600)
{
    const int sh[4][3] = {{64, 64, 64}, {256, 64, 32}, {8, 512, 64}, {45, 90, 135}};
    for (int i = 0; i < 4; i++)
        for (int o = NPU_ORDER_SEQ; o <= NPU_ORDER_ORACLE; o++)
            for (int p = NPU_PART_M; p <= NPU_PART_KNN; p++)
                part_check(8, sh[i][0], sh[i][1], sh[i][2], (npu_order_t)o, (npu_part_t)p,
                           (i + o + p) & 1 ? NPU_EMIT_FLEXSA : NPU_EMIT_FW, 30, 11 + (uint64_t)i);
}

Test(train_part, random_shapes, .timeout = 600)
{
    uint64_t x = 0x1234567ull;
    for (int t = 0; t < 40; t++) {
        int S = t % 4 == 3 ? 2 : 8, d[3];
        for (int j = 0; j < 3; j++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            d[j] = 1 + (int)(x % (uint64_t)(20 * S));
        }
        part_check(S, d[0], d[1], d[2], (npu_order_t)(t % (NPU_ORDER_ORACLE + 1)),
                   (npu_part_t)(NPU_PART_M + t % 4), t & 1 ? NPU_EMIT_FLEXSA : NPU_EMIT_FW, 40,
                   100 + (uint64_t)t);
    }
}

Test(train_part, knn_picks_a_scheme)
{
    npu_part_t p = npu_knn_partition(&(npu_train_shape_t){64, 64, 64, 1});
    cr_assert(p == NPU_PART_M || p == NPU_PART_N || p == NPU_PART_K);
    cr_assert_eq(npu_knn_partition(&(npu_train_shape_t){64, 64, 64, 1}), p, "deterministic");
}
