/*
 * scalesim.h - one run's figures shaped like SCALE-Sim's per-layer reports (COMPUTE_REPORT.csv,
 * BANDWIDTH_REPORT.csv: `npu gemm --topology F --reports DIR`), computed from the run's counters
 * alone (a pure stage). The array has 4 S x S cores (4S^2 PEs).
 *
 * COMPUTE_REPORT (SCALE-Sim's columns):
 *   Total Cycles           the cycles counter
 *   Stall Cycles           cycles in which no A row entered the array (cycles - sum busy_<mode>):
 *                          waiting for DRAM, tokens, weights or drains
 *   Overall Util %         useful MACs / (4S^2 x total cycles)
 *   Mapping Efficiency %   useful MACs / (useful MACs + idle_pe_shape): how much of the
 *                          sub-arrays a wave occupies its k x n tile fills
 *   Compute Util %         useful MACs / (4S^2 x busy cycles): the utilization while computing
 * BANDWIDTH_REPORT, words (elements) per cycle over the whole run, as SCALE-Sim counts them:
 *   SRAM  IFMAP = A words into LBUF_H (lbuf_h_words x S), FILTER = B words into LBUF_V
 *         (lbuf_v_words x S), OFMAP = results drained from the OBUF into the SPM
 *         (obuf_drain_rows x 2S)
 *   DRAM  IFMAP = bytes read of A's tag / 2, FILTER = of B's / 2, OFMAP = bytes written of C's
 *         tag / 4 (int32)
 */
#ifndef NPU_RUN_SCALESIM_H
#define NPU_RUN_SCALESIM_H

#include <stdint.h>

#include "hw/npu_cfg.h"

typedef struct npu_scalesim {
    uint64_t total_cycles, stall_cycles;
    double overall_util, mapping_eff, compute_util; /* percent */
    double sram_bw[3], dram_bw[3];                  /* IFMAP, FILTER, OFMAP words per cycle */
} npu_scalesim_t;

/* cnt: the run's NPU_NUM_COUNTERS counters; tag_a, tag_b, tag_c: the DMA tags of A, B, C. */
void npu_scalesim_of(const npu_cfg_t *cfg, const uint64_t *cnt, unsigned tag_a, unsigned tag_b,
                     unsigned tag_c, npu_scalesim_t *o);

#endif
