/*
 * train_model.h - tile-level timing and DRAM-traffic model of one layer's forward + backward
 * pass under a tile order (train_order.h), the explicit residency plan (train_residency.h) and a
 * partitioning (train_partition.h), on a configuration (npu_cfg_t or explicit parameters).
 *
 * Hardware (brief 000 section 2.11, [INTERP] where marked):
 *  - cores = 1: one 2S x 2S array (the fused FlexSA, FW); cores = 4: four S x S cores (1G4C)
 *    running the partitions concurrently, sharing the SPM and the DRAM bandwidth.
 *  - SPM of spm_bytes, split in halves: the stream half (double-buffered tiles of the current
 *    and next step) and the pin window (train_residency.h). With P concurrent parts each gets
 *    1/P of both halves. A tiling whose double-buffered step working set does not fit the
 *    stream half is rejected.
 *  - DRAM: dram_bw bytes per cycle, reads and writes share it; no latency [INTERP].
 *  - Tile-op on an A x A array (A = 2S or S), weight-stationary: an op with R streamed rows,
 *    reduction D and C output columns takes ceil(D/A)*ceil(C/A)*max(R, A) cycles (one fold =
 *    max(R, A): the next stationary A x A block preloads behind the current rows); plus a
 *    2A-cycle fill per pass. fwd: R = Tm, D = Tk, C = Tn; dx: R = Tm, D = Tn, C = Tk;
 *    dw: R = Tk, D = Tm, C = Tn (dY is the stationary operand).
 *  - Step time = max(compute of op i, DMA of op i+1's loads + op i-1's write-backs); the pass
 *    starts with op 0's loads and ends with the last write-back (double buffering).
 *  - Partitions: on one core they run one after another (times add), the accumulation goes
 *    through DRAM (train_partition.h accum_dram_bytes, serial). On 4 cores they run in
 *    lockstep: a step costs the slowest core's compute and the SUM of the cores' DMA, the
 *    shared operand counted once (multicast); partial sums are added on chip at 2S elements
 *    per cycle (serial).
 *  - The forward pass is the same for every backward variant: the best of (m,n,k)/(n,m,k)
 *    output-stationary orders and tile sizes; on 4 cores split along M.
 *  - Tile sizes: every order picks its best (Tm, Tn, Tk) in {A, 2A, 4A}^3 (clipped to the dims)
 *    by cycles, then DRAM bytes (candidates above NPU_TMODEL_MAX_OPS points skipped when a coarser
 *    one fits). The baseline (seq) also picks, per layer, its best
 *    output-stationary permutation of each GEMM (the brief's "best tiling" baseline).
 *  - ORACLE = the fastest of interleave, dxmajor, dwmajor; AUTO = Algorithm 1 on the (sub-)GEMM's
 *    element dims (re-applied per partition, brief 2.9).
 */
#ifndef NPU_TRAIN_MODEL_H
#define NPU_TRAIN_MODEL_H

#include <stdint.h>

#include "hw/npu_cfg.h"
#include "compile/train/train_order.h"
#include "compile/train/train_lower.h" /* npu_train_shape_t: the layer evaluated */
#include "compile/train/train_partition.h"
#include "compile/train/train_residency.h"

/* Tile-size candidates with more iteration points than this (per part) are skipped when a
 * coarser candidate fits (search time; larger tiles are rarely worse on such layers). */
#define NPU_TMODEL_MAX_OPS 4096

typedef struct npu_tmodel_hw {
    int S;            /* core side; the fused array is 2S x 2S */
    int cores;        /* 1 (one 2S x 2S array) or 4 (four S x S cores) */
    long spm_bytes;   /* total SPM */
    double dram_bw;   /* bytes per cycle */
    int in_bytes;     /* operand bytes (0: 2) */
    int acc_bytes;    /* partial/gradient bytes (0: 4) */
} npu_tmodel_hw_t;

/* S, SPM bytes (banks * words * 4S) and DRAM_BW of a configuration; cores = 1. */
void npu_tmodel_hw_from_cfg(const npu_cfg_t *cfg, npu_tmodel_hw_t *hw);

typedef struct npu_tmodel_opts {
    npu_order_t order; /* SEQ, INTERLEAVE, DXMAJOR, DWMAJOR, AUTO, ORACLE */
    npu_part_t part;   /* NONE, M, N, K */
    int P;              /* parts (1, 2, 4); with cores = 4, P = 4 runs concurrently */
    int fixed_tile;     /* > 0: Tm = Tn = Tk = fixed_tile instead of the search */
    double fwd_cycles;  /* > 0: the forward time already known (skips its evaluation) */
    int canonical;      /* 1: seq/interleave keep the brief's loop orders (no permutation search) */
} npu_tmodel_opts_t;

typedef struct npu_tmodel_result {
    double cycles;         /* forward + backward */
    double fwd_cycles, bwd_cycles;
    double compute_cycles; /* sum of op compute (bwd, slowest core per step) */
    uint64_t rd[NPU_TENSOR_COUNT], wr[NPU_TENSOR_COUNT]; /* bwd DRAM bytes per tensor */
    uint64_t accum_bytes;  /* bwd partition accumulation DRAM bytes */
    uint64_t dram_bytes;   /* bwd total (reads + writes + accumulation) */
    long dy_loads;         /* bwd dY tile loads (all parts) */
    long dy_compulsory;    /* Mt*Nt of the parts */
    uint64_t macs;         /* bwd MACs (2*M*N*K, or M*N*K without dX) */
    double util;           /* fwd+bwd MACs / (cycles * PEs) */
    npu_order_t order;    /* order used (first part) */
    int Tm, Tn, Tk;        /* tiles used (first part) */
    unsigned variant;      /* seq permutation variant */
} npu_tmodel_result_t;

/* Evaluates one layer; returns 0 or -1 (bad arguments, no tiling fits, allocation). */
int npu_tmodel_layer_eval(const npu_tmodel_hw_t *hw, const npu_train_shape_t *L, const npu_tmodel_opts_t *o,
                      npu_tmodel_result_t *r);

/* The best partition of a layer by the model (the KNN labels and the oracle): evaluates NONE
 * (P = 1) and M, N, K with P in {2, 4} (cores = 1) or P = cores (cores = 4), order AUTO;
 * returns the scheme and fills *r (may be NULL) and *P (may be NULL). -1 on error. */
int npu_tmodel_best_partition(const npu_tmodel_hw_t *hw, const npu_train_shape_t *L, npu_order_t order,
                          int *P, npu_tmodel_result_t *r);

#endif
