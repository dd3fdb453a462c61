/*
 * test_fcov.c - runs that close the functional cover points (sw/run/fcov.h) the other suites leave
 * open: training steps (fwd, dX, dW) under every mapping policy, with and without DRAM stalls,
 * on layers whose GEMMs are full tiles of every mode (dims = S: ISW / all 2S: FW) and edge tiles
 * (odd dims). Every step is bit-exact (npu_train_step checks each gradient) and the MAC counters
 * add up. `make test` / `make regress` print the coverage table (build/fcov_report).
 */
#include <string.h>

#include "rtl_common.h"
#include "run/train_run.h"

static void step(const npu_cfg_t *cfg, const int *dims, int batch, int policy, unsigned stall,
                 uint64_t seed)
{
    npu_mlp_t mlp;
    npu_train_result_t *r = malloc(sizeof *r);
    npu_sim_t *s = rtl_open(cfg, stall, 0, seed);
    cr_assert_not_null(r);
    npu_mlp_two_layers(&mlp, batch, dims[0], dims[1], dims[2]);
    int rc = npu_train_step(cfg, s, &mlp, NPU_ORDER_SEQ, policy, seed, 50000000, r);
    cr_assert_eq(rc, 0, "train --layers %d,%d,%d --batch %d policy %d stall %u seed %llu: %s",
                 dims[0], dims[1], dims[2], batch, policy, stall, (unsigned long long)seed, r->msg);
    for (int i = 0; i < 2; i++) {
        const npu_train_layer_result_t *L = &r->layer[i];
        uint64_t mnk = (uint64_t)L->shape.M * (uint64_t)L->shape.N * (uint64_t)L->shape.K;
        cr_assert_eq(L->macs[NPU_PASS_FWD], mnk);
        cr_assert_eq(L->macs[NPU_PASS_DX] + L->macs[NPU_PASS_DW], (i ? 2u : 1u) * mnk);
    }
    free(r);
    npu_sim_close(s);
}

Test(fcov, train_policies_stalls_full_and_edge_tiles, .timeout = 600)
{
    npu_cfg_t cfg = rtl_cfg();
    int S = cfg.s;
    /* full tiles: every GEMM S x S x S (ISW under FlexSA) or 2S (FW); edge tiles: odd sizes */
    const int dims[3][3] = {{S, S, S}, {2 * S, 2 * S, 2 * S}, {S > 1 ? S - 1 : 1, 2 * S + 1, S + 1}};
    const int batch[3] = {S, 2 * S, 2 * S + 3};
    const int policies[3] = {NPU_EMIT_FW, NPU_EMIT_FLEXSA, NPU_EMIT_1G4C};
    for (int d = 0; d < 3; d++)
        for (int p = 0; p < 3; p++)
            for (unsigned st = 0; st < 2; st++)
                step(&cfg, dims[d], batch[d], policies[p], st ? 10u : 0u,
                     rtl_seed(900 + (uint64_t)(d * 6 + p * 2) + st));
}

/* FlexSA's HSW and VSW in the backward passes (dX: M = batch, N = d_i, K = d_i+1; dW: M = d_i,
 * N = d_i+1, K = batch), full and edge, and edge ISW, with and without stalls. */
Test(fcov, flexsa_backward_modes, .timeout = 600)
{
    npu_cfg_t cfg = rtl_cfg();
    int S = cfg.s, e = S > 1 ? S - 1 : 1;
    const int dims[4][3] = {{S + 1, 2 * S, S},       /* dX layer 1 HSW (n 2S, k S), dW layer 0 HSW */
                            {S + 1, S, 2 * S},       /* dX layer 1 VSW (n S, k 2S), dW layer 0 VSW */
                            {S + 1, 2 * S - 1, e},   /* the same as edge tiles */
                            {e, e, e}};              /* edge ISW everywhere */
    const int batch[4] = {S, 2 * S, e, e};
    for (int d = 0; d < 4; d++)
        for (unsigned st = 0; st < 2; st++)
            step(&cfg, dims[d], batch[d], NPU_EMIT_FLEXSA, st ? 10u : 0u,
                 rtl_seed(950 + (uint64_t)(d * 2) + st));
}
