/*
 * flexsa_report.h - the three mapping policies of the FlexSA brief (1G1C, 1G4C, FlexSA) run on
 * the RTL and set beside the analytical model (flexsa_mode.h) of the same waves.
 *
 * One measurement = one GEMM under one policy (gemm_emit.h NPU_EMIT_*), on fresh simulators:
 *   full run       the whole program (LOAD/EXEC/STORE), result bit-exact against golden and the
 *                  counters checked against the program (npu_gemm_run_modes);
 *   compute run    the EXEC queue alone (npu_prog_keep_queues "E", no tokens): the array-side
 *                  time with operands already in the SPM, i.e. what the brief's utilization
 *                  measures. measured utilization = MACs / (4 S^2 x compute cycles).
 * Traffic SPM -> LBUF: the RTL's lbuf_v_words + lbuf_h_words (S-element words delivered to
 * the cores, padding included) times S, and the model's valid elements (brief 7.3).
 * The model uses the RTL's wave height: blk_M = Mt (1G1C, FlexSA: one wave of m_act rows per
 * (k, n) block), Mt / 4 for 1G4C (each core takes a quarter of the ISW wave's rows).
 */
#ifndef NPU_FLEXSA_REPORT_H
#define NPU_FLEXSA_REPORT_H

#include <stdint.h>

#include "compile/gemm/flexsa_mode.h"
#include "hw/npu_cfg.h"
#include "hw/npu_defs.h"
#include "npu_sim.h"
#include "run/runtime.h"

/* How a GEMM is measured: the tiling (runtime.h NPU_GEMM_SLICING_*, 0 = gemm_tiling's
 * heuristic), the full run's DRAM timing (NULL: the config's defaults), the cycle bound of each
 * run (0: none) and full = 0 to skip the full run (compute run only). */
typedef struct npu_policy_opts {
    int slicing;
    const npu_dram_timing_t *timing;
    uint64_t max_cycles;
    int full;
    int plain;                   /* 1: never the swapped form (policies compared on one mapping) */
} npu_policy_opts_t;

typedef struct npu_policy_meas {
    int emit;                    /* NPU_EMIT_* */
    int rc;                      /* NPU_GEMM_* of the full run (or of the compute run) */
    char msg[320];               /* why rc != PASS */
    uint64_t cycles;             /* full run (0 when not run) */
    uint64_t compute_cycles;     /* EXEC queue alone */
    uint64_t macs;               /* RTL counter (MACs of the compute run) */
    uint64_t lbuf_elems;         /* RTL: (lbuf_v_words + lbuf_h_words) * S, compute run */
    uint64_t waves[NPU_NUM_MODES]; /* RTL waves per mode, compute run */
    npu_flexsa_stats_t model;    /* the analytical model of the same GEMM and policy */
    double ideal_util;           /* model: macs / pe_cycles */
    double measured_util;        /* macs / (4 S^2 compute_cycles) */
    int swapped;                 /* the compiler ran C^T = B^T A^T (the model is of that GEMM) */
    uint64_t dram_bytes;         /* full run: DMA bytes read and written, the program fetch excluded */
    uint64_t compulsory_bytes;   /* A and B read once, C written once (npu_policy_roofline) */
    double bound_cycles;         /* the roofline at the full run's bandwidth (npu_policy_roofline) */
    uint64_t busy_load, busy_store, busy_array; /* full run: the DMA queues' busy cycles and the
                                                   array's injection slots (counters) */
} npu_policy_meas_t;

/* The roofline of an M x N x K GEMM under a policy of ideal utilization `ideal` (flexsa_mode.h:
 * the model's MACs / PE cycles): the most of
 *   MACs / (4 S^2 ideal)                   the array at the policy's ideal utilization,
 *   (rd + wr) / bytes_per_cycle            the DRAM's bandwidth, shared by reads and writes,
 *   rd / beat, wr / beat                   one beat a cycle on each DMA port (docs/memory.md),
 * with the compulsory bytes rd = 2 (M K + K N) (A, B once, 16-bit) and wr = 4 M N (C once,
 * 32-bit), *compulsory = rd + wr. No run of the policy can be faster (less the DRAM model's
 * initial credit of a few beats); the ratio of two policies' sums bounds their speedup. */
double npu_policy_roofline(const npu_cfg_t *cfg, double bytes_per_cycle, int M, int N, int K, double ideal,
                           uint64_t *compulsory);

/* The flexsa_mode.h policy an emission policy corresponds to. */
npu_flexsa_policy_t npu_emit_policy_model(int emit);

/* The ideal utilization of the GEMM rep's program computes (its plan, swapped or not) under its
 * emission policy emit: the model on the RTL's waves, Mt rows per (k, n) block (a quarter per
 * 1G4C core); model, when not NULL, gets the whole plan (npu_flexsa_plan). */
double npu_gemm_ideal_util(const npu_cfg_t *cfg, const npu_gemm_report_t *rep, int emit, npu_flexsa_stats_t *model);

/* Measures C = A * B (random operands from seed, npu_random_operands) under emission policy
 * emit, as o says (rc reports the compute run when o->full = 0). Returns m->rc (NPU_GEMM_*). */
int npu_policy_measure(const npu_cfg_t *cfg, int M, int N, int K, int emit, uint64_t seed,
                       const npu_policy_opts_t *o, npu_policy_meas_t *m);

#endif
