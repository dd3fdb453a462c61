/*
 * test_overlap.c - double buffering works: with the DRAM bandwidth chosen so that the GEMM's
 * transfers (LOAD/STORE without compute, with the same instruction fetch; see sw/run/overlap.h) take
 * about as long as its compute (EXEC alone), the full program takes hardly longer than the
 * slower of the two: DMA overlaps compute. The measuring code is sw/run/overlap.c, shared with
 * `npu overlap`.
 */
#include "run/overlap.h"
#include "rtl_common.h"

/* 32S x 32S x 32S: several output tiles (and K chunks from S=8): a steady-state pipeline.
 * Compute takes about (32S)^3 / (4 S^2) = 8192 S cycles (16k at S=2, 66k at S=8); the runs
 * simulate at well over 100k cycles/s, so only configs beyond S=16 scale the GEMM down. */
static int overlap_dim(const npu_cfg_t *cfg)
{
    return cfg->s <= 16 ? 32 * cfg->s : 16 * cfg->s;
}

Test(overlap, dma_hidden_behind_compute, .timeout = 1200)
{
    npu_cfg_t cfg = rtl_cfg();
    int D = overlap_dim(&cfg);
    uint64_t seed = rtl_seed(7), x = seed | 1;
    npu_dram_timing_t t = { (double)cfg.dram_bw, (unsigned)cfg.dram_latency,
                            (unsigned)cfg.dram_burst_cost, 0, seed };
    npu_overlap_result_t r;
    int16_t *A = malloc(sizeof(int16_t) * (size_t)D * D);
    int16_t *B = malloc(sizeof(int16_t) * (size_t)D * D);
    cr_assert(A && B);
    rtl_fill(A, (size_t)D * D, &x);
    rtl_fill(B, (size_t)D * D, &x);

    int rc = npu_overlap_measure(&cfg, D, D, D, A, B, 0, 0, &t, 1, rtl_budget(&cfg, D, D, D), &r);
    for (int i = 0; i < r.n_steps; i++)
        cr_log_info("overlap %s %dx%dx%d: calibration %d: DRAM %.4g B/cycle -> compute-only %llu, "
                    "transfer-only %llu (DMA-only %llu) cycles",
                    cfg.name, D, D, D, i + 1, r.steps[i].dram_bw,
                    (unsigned long long)r.steps[i].compute_cycles,
                    (unsigned long long)r.steps[i].transfer_cycles,
                    (unsigned long long)r.steps[i].dma_cycles);
    cr_assert_eq(rc, NPU_OVERLAP_OK, "seed %llu: %s", (unsigned long long)seed, r.msg);
    cr_log_info("overlap %s %dx%dx%d: compute-only %llu, transfer-only %llu (DMA-only %llu), "
                "full %llu cycles; full / max = %.3f at %.4g B/cycle",
                cfg.name, D, D, D, (unsigned long long)r.compute_cycles,
                (unsigned long long)r.transfer_cycles, (unsigned long long)r.dma_cycles,
                (unsigned long long)r.full_cycles, r.ratio, r.dram_bw);

    cr_assert_gt(r.n_compute, 0u);
    cr_assert_gt(r.n_transfer, 0u);
    cr_assert_eq(r.n_compute + r.n_transfer, r.full.prog.n, "the two halves are the program");
    /* the bandwidth really balanced them: neither half is negligible */
    cr_assert_geq(2 * r.compute_cycles, r.transfer_cycles,
                  "compute-only %llu < 0.5 x transfer-only %llu at %.4g B/cycle",
                  (unsigned long long)r.compute_cycles, (unsigned long long)r.transfer_cycles,
                  r.dram_bw);
    cr_assert_geq(2 * r.transfer_cycles, r.compute_cycles,
                  "transfer-only %llu < 0.5 x compute-only %llu at %.4g B/cycle",
                  (unsigned long long)r.transfer_cycles, (unsigned long long)r.compute_cycles,
                  r.dram_bw);
    /* the overlap: full <= 1.15 * max(compute, transfer) */
    cr_assert_leq((double)r.full_cycles, NPU_OVERLAP_MAX_RATIO * (double)r.bound_cycles,
                  "full %llu cycles > %.2f x max(compute %llu, transfer %llu): ratio %.3f",
                  (unsigned long long)r.full_cycles, NPU_OVERLAP_MAX_RATIO,
                  (unsigned long long)r.compute_cycles, (unsigned long long)r.transfer_cycles,
                  r.ratio);
    cr_assert(r.overlap_ok);

    npu_overlap_result_free(&r);
    free(A);
    free(B);
}
