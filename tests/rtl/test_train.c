/*
 * test_train.c - training steps on the Verilated NPU (sw/train_run.h): forward, dX = dY W^T and
 * dW = X^T dY of every layer, bit-exact against golden, transposes done by the DMA, with random
 * DRAM stalls, under the mapping policies. The issue's layer shapes (M, K, N) are the second
 * layer of a two-layer MLP (the first layer has no dX).
 */
#include <string.h>

#include "rtl_common.h"
#include "train_run.h"

static void train_check(const npu_cfg_t *cfg, const int *dims, int layers, int batch, int policy,
                        uint64_t seed, unsigned stall)
{
    npu_mlp_t mlp;
    memset(&mlp, 0, sizeof mlp);
    mlp.batch = batch;
    mlp.layers = layers;
    for (int i = 0; i <= layers; i++)
        mlp.dims[i] = dims[i];
    npu_sim_t *s = rtl_open(cfg, stall, 0, seed);
    npu_train_result_t *r = malloc(sizeof *r);
    cr_assert_not_null(r);
    int rc = npu_train_step(cfg, s, &mlp, NPU_TRAIN_SEQ, policy, seed, 50000000, r);
    char dl[128] = "";
    for (int i = 0, o = 0; i <= layers && o < (int)sizeof dl - 8; i++)
        o += snprintf(dl + o, sizeof dl - (size_t)o, i ? ",%d" : "%d", dims[i]);
    cr_assert_eq(rc, 0, "train step MLP %s batch %d policy %d: %s\n  replay: build/%s/npu train "
                 "--layers %s --batch %d --seed %llu --stall-pct %u --policy %s",
                 dl, batch, policy, r->msg, cfg->name, dl, batch, (unsigned long long)seed, stall,
                 policy == NPU_EMIT_FLEXSA ? "flexsa" : policy == NPU_EMIT_1G4C ? "1g4c" : "1g1c");
    /* every pass ran its 2*M*N*K... MACs: fwd M*N*K, dX M*N*K (not layer 0), dW M*N*K */
    for (int i = 0; i < layers; i++) {
        const npu_train_layer_t *L = &r->layer[i];
        uint64_t mnk = (uint64_t)L->M * (uint64_t)L->N * (uint64_t)L->K;
        cr_assert_eq(L->macs[NPU_PASS_FWD], mnk);
        cr_assert_eq(L->macs[NPU_PASS_DW], mnk);
        cr_assert_eq(L->macs[NPU_PASS_DX], i ? mnk : 0u);
        /* sequential order: dY read by dX and again by dW (at least twice; more when a GEMM's
         * tiling re-reads its operand), at least once for the first layer */
        cr_assert_geq(L->dy_rd_bytes, (i ? 2u : 1u) * L->dy_compulsory, "layer %d", i);
        cr_assert_gt(L->wr_bytes[NPU_TAG_DW], 0u);
        cr_assert_eq(L->wr_bytes[NPU_TAG_DX] > 0, i > 0);
    }
    free(r);
    npu_sim_close(s);
}

Test(train, issue_shapes_seq, .timeout = 900)
{
    npu_cfg_t cfg = rtl_cfg();
    /* (M, K, N) of the issue: (64,64,64), (256,64,32), (8,512,64), (45,90,135) */
    const int shapes[4][3] = {{64, 64, 64}, {256, 64, 32}, {8, 512, 64}, {45, 90, 135}};
    for (int i = 0; i < 4; i++) {
        if (cfg.s <= 2 && shapes[i][1] * shapes[i][2] > 10000)
            continue; /* tiny: keep the CI tier fast (the shape runs at small) */
        int dims[3] = {7, shapes[i][1], shapes[i][2]};
        train_check(&cfg, dims, 2, shapes[i][0], i & 1 ? NPU_EMIT_FLEXSA : NPU_EMIT_FW,
                    rtl_seed(500 + (uint64_t)i), 10);
    }
}

Test(train, random_mlps_all_policies, .timeout = 900)
{
    npu_cfg_t cfg = rtl_cfg();
    uint64_t x = rtl_seed(77) | 1;
    for (int t = 0; t < 6; t++) {
        int layers = 2 + (int)(rtl_rand(&x) % 2), dims[4];
        for (int i = 0; i <= layers; i++)
            dims[i] = 1 + (int)(rtl_rand(&x) % (uint64_t)(6 * cfg.s));
        int batch = 1 + (int)(rtl_rand(&x) % (uint64_t)(8 * cfg.s));
        train_check(&cfg, dims, layers, batch, t % 3 == 0 ? NPU_EMIT_FW : t % 3 == 1 ? NPU_EMIT_FLEXSA : NPU_EMIT_1G4C,
                    rtl_seed(600 + (uint64_t)t), 10);
    }
}

Test(train, host_errors)
{
    npu_mlp_t mlp;
    cr_assert_eq(npu_mlp_parse("64,32", 8, &mlp), 0);
    cr_assert_eq(mlp.layers, 1);
    cr_assert_eq(mlp.dims[1], 32);
    cr_assert_eq(npu_mlp_parse("64", 8, &mlp), -1, "one size is not a layer");
    cr_assert_eq(npu_mlp_parse("64,,32", 8, &mlp), -1);
    cr_assert_eq(npu_mlp_parse("64,32,", 8, &mlp), -1);
    cr_assert_eq(npu_mlp_parse("64,0", 8, &mlp), -1);
    cr_assert_eq(npu_mlp_parse("64,70000", 8, &mlp), -1);
    cr_assert_eq(npu_mlp_parse("64,x", 8, &mlp), -1);
    cr_assert_eq(npu_mlp_parse("64,32", 0, &mlp), -1);
    npu_train_order_t o;
    cr_assert_eq(npu_train_order_parse("dxmajor", &o), 0);
    cr_assert_eq(o, NPU_TRAIN_DXMAJOR);
    cr_assert_eq(npu_train_order_parse("dx", &o), -1);
}
