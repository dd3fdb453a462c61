/* test_train_lower.c - the lowering choice of a layer's backward (train_lower.h): which form
 * (GEMMS, CORES, SCHEDULE, SUBGEMMS), order, split and tiles a shape gets under the step's
 * options, and the fallback chain the run driver follows when an emission fails. */
#include <criterion/criterion.h>
#include <string.h>

#include "compile/train/train_emit.h"
#include "compile/train/train_lower.h"
#include "test_cfgs.h"

static npu_lower_plan_t lower_ok(const npu_cfg_t *c, long M, long K, long N, int has_dx,
                                     npu_order_t order, npu_part_t part, int in_seq, int tile)
{
    npu_train_shape_t L = {M, K, N, has_dx};
    npu_lower_opts_t o = {order, part, in_seq, tile};
    npu_lower_plan_t lw;
    char msg[200];
    cr_assert_eq(npu_lower_choose(c, &L, &o, &lw, msg, sizeof msg), 0, "(%ld,%ld,%ld): %s", M, K, N,
                 msg);
    return lw;
}

/* The first layer (no dX) is its dW GEMM alone whatever the options; seq unpartitioned is the
 * two-GEMM baseline. */
Test(train_lower, gemms)
{
    npu_cfg_t c = test_cfg(8);
    static const npu_order_t orders[] = {NPU_ORDER_SEQ, NPU_ORDER_DXMAJOR, NPU_ORDER_AUTO,
                                          NPU_ORDER_ORACLE};
    for (size_t i = 0; i < sizeof orders / sizeof orders[0]; i++)
        for (int p = NPU_PART_NONE; p <= NPU_PART_K; p++) {
            npu_lower_plan_t lw = lower_ok(&c, 64, 64, 64, 0, orders[i], (npu_part_t)p, 0, 0);
            cr_assert_eq(lw.form, NPU_LOWER_GEMMS);
            cr_assert(lw.order == NPU_ORDER_SEQ && lw.part == NPU_PART_NONE && lw.nparts == 1);
        }
    npu_lower_plan_t lw = lower_ok(&c, 64, 64, 64, 1, NPU_ORDER_SEQ, NPU_PART_NONE, 0, 0);
    cr_assert_eq(lw.form, NPU_LOWER_GEMMS);
}

/* A fused order without a split: one schedule of one part; AUTO is Algorithm 1. */
Test(train_lower, fused_orders)
{
    npu_cfg_t c = test_cfg(8);
    npu_lower_plan_t lw = lower_ok(&c, 64, 64, 64, 1, NPU_ORDER_AUTO, NPU_PART_NONE, 0, 0);
    cr_assert_eq(lw.form, NPU_LOWER_SCHEDULE);
    cr_assert_eq(lw.order, npu_order_alg1(64, 64, 64));
    cr_assert(lw.nparts == 1 && lw.accum_expect == 0 && lw.part_t0[0] == 0);
    lw = lower_ok(&c, 8, 512, 64, 1, NPU_ORDER_AUTO, NPU_PART_NONE, 0, 0);
    cr_assert_eq(lw.order, NPU_ORDER_DWMAJOR, "K dominant: dwmajor");
    lw = lower_ok(&c, 64, 64, 64, 1, NPU_ORDER_SEQ, NPU_PART_M, 0, 0);
    cr_assert(lw.form != NPU_LOWER_GEMMS && lw.order == NPU_ORDER_SEQ, "seq partitioned is fused");
}

/* K, M, N one part per core where the per-core emitters fit; the parts in sequence otherwise
 * or when asked; the combining adds of each split. */
Test(train_lower, per_core)
{
    npu_cfg_t c = test_cfg(8);
    static const struct { long M, K, N; npu_part_t p; } cases[] = {
        {10, 64, 12, NPU_PART_K}, {64, 20, 12, NPU_PART_M}, {12, 20, 64, NPU_PART_N}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        long M = cases[i].M, K = cases[i].K, N = cases[i].N;
        npu_part_t p = cases[i].p;
        int fits = p == NPU_PART_K   ? npu_bwd_kcores_fits(&c, (int)M, (int)K, (int)N)
                   : p == NPU_PART_M ? npu_bwd_mcores_fits(&c, (int)M, (int)K, (int)N)
                                      : npu_bwd_ncores_fits(&c, (int)M, (int)K, (int)N);
        npu_lower_plan_t lw = lower_ok(&c, M, K, N, 1, NPU_ORDER_DXMAJOR, p, 0, 0);
        cr_assert(fits, "the case is meant to fit");
        cr_assert_eq(lw.form, NPU_LOWER_CORES, "%s", npu_part_name(p));
        cr_assert_eq(lw.nparts, NPU_TRAIN_PARTS);
        cr_assert_eq(lw.accum_expect, p == NPU_PART_K ? 0 : p == NPU_PART_M ? 3 * K * N : 3 * M * K);
        lw = lower_ok(&c, M, K, N, 1, NPU_ORDER_DXMAJOR, p, 1, 0);
        cr_assert_eq(lw.form, NPU_LOWER_SCHEDULE, "in sequence: %s", npu_part_name(p));
        cr_assert_eq(lw.nparts, lw.plan.nparts);
        cr_assert_eq(lw.accum_expect, lw.plan.accum_elems);
    }
    /* K not a multiple of 4S: no per-core form */
    npu_lower_plan_t lw = lower_ok(&c, 10, 40, 12, 1, NPU_ORDER_DXMAJOR, NPU_PART_K, 0, 0);
    cr_assert_eq(lw.form, NPU_LOWER_SCHEDULE);
}

/* CORES -> SCHEDULE -> SUBGEMMS -> none, the parts' figures following the form. */
Test(train_lower, fallback_chain)
{
    npu_cfg_t c = test_cfg(8);
    npu_lower_plan_t lw = lower_ok(&c, 64, 20, 12, 1, NPU_ORDER_INTERLEAVE, NPU_PART_M, 0, 0);
    cr_assert_eq(lw.form, NPU_LOWER_CORES);
    cr_assert_eq(npu_lower_fallback(&lw), 0);
    cr_assert_eq(lw.form, NPU_LOWER_SCHEDULE);
    cr_assert(lw.nparts == lw.plan.nparts && lw.accum_expect == lw.plan.accum_elems);
    cr_assert_eq(npu_lower_fallback(&lw), 0);
    cr_assert_eq(lw.form, NPU_LOWER_SUBGEMMS);
    cr_assert_eq(npu_lower_fallback(&lw), -1);
    lw = lower_ok(&c, 64, 64, 64, 0, NPU_ORDER_AUTO, NPU_PART_NONE, 0, 0);
    cr_assert_eq(npu_lower_fallback(&lw), -1, "GEMMS has no fallback");
}

/* The parts' tile ranges cover the split dim exactly once, in order; the tile option is
 * clipped to each (sub-)GEMM's dims rounded up to 2S. */
Test(train_lower, ranges_and_tiles)
{
    npu_cfg_t c = test_cfg(2);
    for (int p = NPU_PART_M; p <= NPU_PART_K; p++) {
        npu_lower_plan_t lw = lower_ok(&c, 40, 24, 56, 1, NPU_ORDER_DWMAJOR, (npu_part_t)p, 1, 8);
        long D = p == NPU_PART_M ? 40 : p == NPU_PART_N ? 56 : 24;
        int T = p == NPU_PART_M ? lw.Tm : p == NPU_PART_N ? lw.Tn : lw.Tk;
        cr_assert(lw.Tm == 8 && lw.Tn == 8 && lw.Tk == 8);
        cr_assert_eq(lw.part_dim, p == NPU_PART_M ? NPU_DIM_M : p == NPU_PART_N ? NPU_DIM_N : NPU_DIM_K);
        cr_assert_eq(lw.part_t0[0], 0);
        for (int i = 0; i < lw.plan.nparts; i++) {
            cr_assert_lt(lw.part_t0[i], lw.part_t0[i + 1]);
            for (int d = 0; d < 3; d++)
                cr_assert(lw.part_tiles[i][d] >= 4 && lw.part_tiles[i][d] <= 8);
        }
        cr_assert_eq(lw.part_t0[lw.plan.nparts], (D + T - 1) / T);
    }
    npu_lower_plan_t lw = lower_ok(&c, 5, 3, 6, 1, NPU_ORDER_DXMAJOR, NPU_PART_NONE, 0, 64);
    cr_assert(lw.Tm == 8 && lw.Tn == 8 && lw.Tk == 4, "clipped: %d %d %d", lw.Tm, lw.Tn, lw.Tk);
}

/* What the lowering does not choose: the oracle (a measurement) and KNN (a model). */
Test(train_lower, rejects)
{
    npu_cfg_t c = test_cfg(8);
    npu_train_shape_t L = {64, 64, 64, 1};
    npu_lower_opts_t o = {NPU_ORDER_ORACLE, NPU_PART_NONE, 0, 0};
    npu_lower_plan_t lw;
    char msg[200];
    cr_assert_eq(npu_lower_choose(&c, &L, &o, &lw, msg, sizeof msg), -1);
    o.order = NPU_ORDER_DXMAJOR;
    o.part = NPU_PART_KNN;
    cr_assert_eq(npu_lower_choose(&c, &L, &o, &lw, msg, sizeof msg), -1);
    cr_assert(strstr(msg, "knn") != NULL, "%s", msg);
}

/* Pure: the same inputs give the same lowering, byte for byte. */
Test(train_lower, pure)
{
    npu_cfg_t c = test_cfg(8);
    npu_lower_plan_t a = lower_ok(&c, 64, 64, 128, 1, NPU_ORDER_AUTO, NPU_PART_N, 0, 0);
    npu_lower_plan_t b = lower_ok(&c, 64, 64, 128, 1, NPU_ORDER_AUTO, NPU_PART_N, 0, 0);
    cr_assert_eq(memcmp(&a, &b, sizeof a), 0);
}
