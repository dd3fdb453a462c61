/*
 * train_run.h - one training step of an MLP on the NPU (issue 4), every GEMM checked bit-exact.
 *
 * Layer i (0-based, L layers): X_i (B x d_i) . W_i (d_i x d_{i+1}) = Y_i (B x d_{i+1}), so
 * M = B, K = d_i, N = d_{i+1}. The step runs, each as its own NPU program on one simulator
 * whose DRAM keeps every tensor (nothing is re-laid out by the host):
 *   forward   Y_i  = X_i . W_i            A = X_i (tag X), B = W_i (tag W), C = Y_i (tag Y)
 *   backward  for i = L-1 .. 0:
 *     dX_i = dY_i . W_i^T  (not for i = 0)  A = dY_i (tag DY), B = W_i read TRANSPOSED by the
 *                                            DMA (transB), C = dX_i (tag DX)
 *     dW_i = X_i^T . dY_i                   A = X_i read TRANSPOSED by the DMA (transA),
 *                                            B = dY_i (tag DY), C = dW_i (tag DW)
 * Between layers the host stands in for the activation (forward) and its derivative
 * (backward), which are not GEMMs: identity, requantised to int16 by an arithmetic shift
 * (X_{i+1} = Y_i >> shift, dY_{i-1} = dX_i >> shift, shift = NPU_TRAIN_SHIFT), the same in
 * the golden model. dY_{L-1} (the loss gradient) and X_0, W_i are seeded random int16.
 *
 * Lowering (compile/train/train_lower.h): the driver asks npu_lower_choose, per layer, how the
 * backward runs and executes that: GEMMS (order seq without partitioning, and the first layer:
 * dX then dW as two GEMM programs, gemm_emit; the sequential baseline reads dY twice), CORES
 * (one part per core: npu_bwd_emit_kcores / mcores / ncores, "kx4c", "mx4c", "nx4c"), SCHEDULE
 * (one fused train_emit program, the order's nest part after part, the gradient the split sums
 * (dW for M, dX for N) combined on chip by DRAIN acc) or SUBGEMMS (the parts as separate
 * sub-GEMMs behind a SYNC barrier: the last STORE of part p pushes s2e, SYNC_E pops it and
 * pushes e2l, SYNC_L pops it; part p > 0 loads the running sum and adds with DRAIN acc, "nx2s").
 * A form whose emission fails falls back to the next (npu_lower_fallback). AUTO is
 * Algorithm 1 per layer; ORACLE lowers and runs the four concrete orders of each layer on the
 * RTL (all must be exact) and keeps the fastest. The combining adds are counted (accum_adds)
 * and equal the lowering's (accum_expect); the MAC counter stays exactly 2*M*N*K.
 * Partitioning KNN: the split of each layer is predicted by the model's selector
 * (model/knn_part.h, k = 1 on the paper's quad-core layer set).
 */
#ifndef NPU_TRAIN_RUN_H
#define NPU_TRAIN_RUN_H

#include <stdint.h>
#include <string.h>

#include "hw/npu_cfg.h"
#include "hw/npu_defs.h"
#include "npu_sim.h"
#include "compile/train/train_lower.h"
#include "compile/train/train_order.h"
#include "compile/train/train_partition.h"

#define NPU_TRAIN_MAX_LAYERS 16
#define NPU_TRAIN_SHIFT 16

typedef struct npu_mlp {
    int batch;                           /* B = M of every layer GEMM */
    int layers;                          /* L */
    int dims[NPU_TRAIN_MAX_LAYERS + 1];  /* d_0 .. d_L */
    int tile;                            /* fused orders: Tm = Tn = Tk (multiple of 2S, clipped
                                            to the dims); 0 = npu_bwd_default_tiles */
    npu_part_t partition;               /* backward partitioning of every layer with dX
                                            (NONE, M, N, K; KNN: npu_knn_partition per
                                            layer); see "Lowering" above */
    int parts_in_sequence;               /* 1: the parts run in sequence on the whole array (no
                                            part per core: kseq, mseq, nseq) */
} npu_mlp_t;

/* The two-layer MLP d0 -> k -> n at a batch (one backward GEMM layer with dX: M = batch, K = k,
 * N = n); every other field zero (default tiles, no partitioning). */
static inline void npu_mlp_two_layers(npu_mlp_t *m, int batch, int d0, int k, int n)
{
    memset(m, 0, sizeof *m);
    m->batch = batch;
    m->layers = 2;
    m->dims[0] = d0;
    m->dims[1] = k;
    m->dims[2] = n;
}

enum { NPU_PASS_FWD = 0, NPU_PASS_DX = 1, NPU_PASS_DW = 2, NPU_NUM_PASSES = 3 };

/* What the step measured of one layer (the run result; the layer itself is its shape, its
 * place in the MLP and the step's options, its lowering the compiler's choice). */
typedef struct npu_train_layer_result {
    npu_train_shape_t shape;             /* M = B, K, N; has_dx: not the first layer */
    npu_lower_plan_t lower;          /* the backward as it ran (train_lower.h): form (fused
                                            unless GEMMS: then its cycles are in the dx pass),
                                            concrete order (auto resolved), partition (knn
                                            resolved; NONE for layer 0), parts, the combining
                                            adds of the plan (accum_expect) */
    int ran[NPU_NUM_PASSES];             /* 0 for the dX of layer 0 */
    int rc[NPU_NUM_PASSES];              /* NPU_GEMM_* per pass */
    uint64_t cycles[NPU_NUM_PASSES];
    uint64_t macs[NPU_NUM_PASSES];       /* MAC counter */
    uint64_t rd_bytes[NPU_NUM_TAGS], wr_bytes[NPU_NUM_TAGS]; /* DMA bytes of the layer, all passes */
    uint64_t dy_rd_bytes, dy_compulsory; /* backward dY bytes read / one read of the dense dY (the beats it touches) */
    uint64_t w_rd_bytes, w_compulsory;   /* backward W bytes read / one read of the dense W (the beats it touches) */
    char msg[256];                       /* first failure of the layer, "" if none */
    long dy_tile_loads, dy_tiles;        /* fused: dY tile loads vs the Mt*Nt compulsory */
    long spills, reloads;                /* fused: partial tiles spilled / reloaded */
    uint64_t order_cycles[NPU_ORDER_AUTO]; /* oracle: backward cycles of seq, interleave, dxmajor,
                                            dwmajor (each run on the RTL, the fastest kept) */
    uint64_t noc_h_flits[NPU_NUM_PASSES], noc_v_flits[NPU_NUM_PASSES];
    uint64_t noc_deliveries[NPU_NUM_PASSES], noc_mcast_saved[NPU_NUM_PASSES]; /* NoC counters */
    long accum_adds;                     /* element additions combining the parts' partials
                                            (counted from the DRAIN acc of the loaded sums) */
} npu_train_layer_result_t;

typedef struct npu_train_result {
    int rc;                              /* 0 every GEMM PASS; 1 a mismatch/NPU error; -1 host */
    char msg[256];
    npu_order_t order;
    int policy;                          /* NPU_EMIT_* mapping policy of every GEMM */
    uint64_t cycles;                     /* all programs */
    npu_train_layer_result_t layer[NPU_TRAIN_MAX_LAYERS];
} npu_train_result_t;

/* Parses "64,128,32" into dims (at least two sizes, each 1..65535). 0 or -1. */
int npu_mlp_parse(const char *s, int batch, npu_mlp_t *mlp);

/* Runs one training step on sim (its DRAM is overwritten). Returns r->rc. */
int npu_train_step(const npu_cfg_t *cfg, npu_sim_t *sim, const npu_mlp_t *mlp,
                   npu_order_t order, int policy, uint64_t seed, uint64_t max_cycles,
                   npu_train_result_t *r);

/* A step's tensors in and out (npu train --x/--w/--dy/--save), dense row-major. Inputs: X_0
 * (B x d_0), W_i (d_i x d_{i+1}), the loss gradient dY_{L-1} (B x d_L); NULL = seeded. Outputs
 * (NULL = not wanted): the inputs the step used (x_used, w_used, dy_used: the given or the seeded
 * ones) and the NPU's int32 results read back from DRAM after the step: Y_i (B x d_{i+1}), dX_i
 * (B x d_i, i >= 1; layer 0 has none) and dW_i (d_i x d_{i+1}). Each was checked bit-exact
 * against the golden model (r->layer[i].rc). */
typedef struct npu_train_io {
    const int16_t *x, *w[NPU_TRAIN_MAX_LAYERS], *dy;
    int16_t *x_used, *w_used[NPU_TRAIN_MAX_LAYERS], *dy_used;
    int32_t *y[NPU_TRAIN_MAX_LAYERS], *dx[NPU_TRAIN_MAX_LAYERS], *dw[NPU_TRAIN_MAX_LAYERS];
} npu_train_io_t;

/* npu_train_step with the tensors of io (NULL: all seeded, nothing read back). */
int npu_train_step_io(const npu_cfg_t *cfg, npu_sim_t *sim, const npu_mlp_t *mlp,
                      npu_order_t order, int policy, uint64_t seed, uint64_t max_cycles,
                      const npu_train_io_t *io, npu_train_result_t *r);

#endif
