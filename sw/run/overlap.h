/*
 * overlap.h - does double buffering work? Measures one GEMM several ways, each on a fresh
 * simulator with the same DRAM timing and the same DRAM contents (A and B written at the
 * compiled layout, C poisoned):
 *   compute-only   the program's EXEC instructions alone (npu_prog_keep_queues "E", no tokens)
 *   transfer-only  its LOAD and STORE instructions without tokens, with every EXEC instruction
 *                  replaced by a token-free SYNC_E: no compute, but the fetcher reads the same
 *                  program bytes as in the full run. The instruction fetch shares the DRAM with
 *                  the DMA and is not negligible on a small array (a third of all DRAM bytes of
 *                  a 64^3 GEMM at S=2), so it belongs to the transfer side of the bound.
 *   DMA-only       the LOAD and STORE instructions alone ("LS", no tokens; the literal
 *                  transfer-only program, reported for reference)
 *   full           the whole program through npu_gemm_run_modes (must PASS bit-exact)
 * The program is the plain double-buffered one (NPU_GEMM_NO_BAND: every K chunk loads both
 * operands), so every step carries the same transfer and the ratio measures the pipeline. With
 * a resident band (the default GEMM tiling) the band's loads come all at once at each band
 * change: at the bandwidth that balances the two halves those steps expose transfer time
 * (256^3 at small: ratio 1.169), though the program moves fewer bytes and runs faster.
 * With perfect overlap, full ~ max(compute-only, transfer-only); the ratio full / max says how
 * much of the transfer time is hidden behind compute (or the reverse). The overlap matters most
 * when both halves take about as long: optionally the DRAM bandwidth is calibrated first (start
 * from the given bandwidth, scale it by transfer/compute, re-measure, at most
 * NPU_OVERLAP_CALIB_STEPS times, until they are within NPU_OVERLAP_BALANCE_TOL).
 * Cycles are the `cycles` counter of each run.
 */
#ifndef NPU_OVERLAP_H
#define NPU_OVERLAP_H

#include <stddef.h>
#include <stdint.h>

#include "hw/npu_cfg.h"
#include "npu_sim.h"
#include "run/runtime.h"

#define NPU_OVERLAP_MAX_RATIO 1.15   /* full <= 1.15 * max(compute, transfer): "overlap OK" */
#define NPU_OVERLAP_BALANCE_TOL 0.10 /* calibration stops when |transfer - compute| <= 10% */
#define NPU_OVERLAP_CALIB_STEPS 3    /* at most this many bandwidth re-scalings */

enum {
    NPU_OVERLAP_OK = 0,         /* every run finished and the full run PASSed (ratio not judged) */
    NPU_OVERLAP_RUN_FAILED = 1, /* a partial run ended in an NPU error */
    NPU_OVERLAP_TIMEOUT = 2,    /* a run reached max_cycles */
    NPU_OVERLAP_GEMM_FAILED = 3, /* the full run is not PASS (full.rc says why) */
    NPU_OVERLAP_HOST_ERROR = -1 /* no simulator, no tiling, out of memory, ... */
};

/* One calibration step: the bandwidth and what it gave. */
typedef struct npu_overlap_step {
    double dram_bw;
    uint64_t compute_cycles, transfer_cycles, dma_cycles;
} npu_overlap_step_t;

typedef struct npu_overlap_result {
    int rc;                 /* NPU_OVERLAP_* */
    char msg[256];          /* what went wrong, "" if rc == NPU_OVERLAP_OK */
    double dram_bw;         /* bandwidth (bytes/cycle) of the reported measurements */
    int calibrated;         /* the bandwidth was chosen by calibration */
    int n_steps;            /* measurements of compute/transfer made (1 + re-scalings) */
    npu_overlap_step_t steps[NPU_OVERLAP_CALIB_STEPS + 1];
    uint64_t compute_cycles, transfer_cycles, full_cycles;
    uint64_t dma_cycles;    /* DMA-only: LOAD/STORE alone, without the fetch of EXEC insns */
    uint64_t bound_cycles;  /* max(compute_cycles, transfer_cycles) */
    double ratio;           /* full_cycles / bound_cycles (0 if not measured) */
    int overlap_ok;         /* rc == OK and ratio <= NPU_OVERLAP_MAX_RATIO */
    size_t n_compute, n_transfer; /* EXEC instructions; LOAD/STORE instructions */
    npu_run_result_t compute_run, transfer_run, dma_run; /* the last partial runs */
    npu_gemm_report_t full; /* report of the full run (owned: npu_overlap_result_free) */
    double wall_s;          /* wall time of all the simulations */
} npu_overlap_result_t;

/* Measures C = A * B (A M x K, or K x M if transA; B K x N, or N x K if transB). t: DRAM
 * timing of every run (t->bytes_per_cycle is the starting point when calibrate is set).
 * max_cycles bounds each run. Returns r->rc; r is always filled (free with
 * npu_overlap_result_free). */
int npu_overlap_measure(const npu_cfg_t *cfg, int M, int N, int K, const int16_t *A,
                        const int16_t *B, int transA, int transB, const npu_dram_timing_t *t,
                        int calibrate, uint64_t max_cycles, npu_overlap_result_t *r);
void npu_overlap_result_free(npu_overlap_result_t *r);

#endif
