/*
 * pruned_layers.h - a synthetic pruned CNN layer set (brief 001 section 7.2) and its evaluation
 * under the FlexSA mapping policies (flexsa_mode.h).
 *
 * The paper's pruned shapes are not published. This builds ResNet-50 (v1.5: the stride sits in
 * the 3x3 conv of the first block of stages 3-5 and in its 1x1 shortcut) with
 *   - channel counts scaled by S/64 (so the ratios channels / S are those of ResNet-50 on the
 *     paper's 64 x 64 cores: at S = 8 the widths are 8, 16, 32, 64 and the residual streams 32,
 *     64, 128, 256; the image keeps 3 channels; the FC has round(1000 S / 64) outputs, unpruned);
 *   - a small image (in_hw, default 32: feature maps 16, 8, 4, 2, 1 instead of 112, 56, 28, 14,
 *     7), so M stays modest while keeping the 4x step in M between stages;
 *   - channel pruning in the PruneTrain way: one keep ratio per channel group (the stem output,
 *     each stage's residual stream shared by its blocks and shortcut, and the two inner widths
 *     of every bottleneck block), keep_g = min(1, alpha * u_g) with u_g uniform in [0.5, 1.5)
 *     from a xorshift64 seeded by seed, channels = max(1, round(C * keep_g)); alpha is found by
 *     bisection so that forward MACs reach flops_target of the unpruned (scaled) network
 *     (brief R5: 0.48 low strength, 0.25 high strength). Deterministic for a given config.
 *
 * Conv -> GEMM (brief section 3, im2col):
 *   forward        M = B Ho Wo, N = Cout, K = Cin R S
 *   data-gradient  M = B Hi Wi, N = Cin,  K = Cout R S   (not for the first layer)
 *   weight-grad.   M = Cout,    N = Cin R S, K = B Ho Wo
 */
#ifndef NPU_PRUNED_LAYERS_H
#define NPU_PRUNED_LAYERS_H

#include <stdint.h>

#include "compile/gemm/flexsa_mode.h"
#include "compile/train/train_order.h" /* npu_phase_t: fwd, dx, dw */

#define NPU_RESNET50_LAYERS 54 /* stem + 16 blocks x 3 + 4 shortcuts + FC */

typedef struct npu_conv_layer {
    char name[32];
    int cin, cout, kh, kw, stride, pad;
    int hi, wi, ho, wo;
    int need_dgrad; /* 0 for the first layer (no gradient with respect to the image) */
} npu_conv_layer_t;

typedef struct npu_gemm_shape {
    int M, N, K;
    int layer;              /* index in the layer set */
    npu_phase_t phase;
} npu_gemm_shape_t;

typedef struct npu_prune_cfg {
    int S;               /* core side: channels scale by S / 64 */
    uint64_t seed;       /* keep-ratio draw (0 is replaced by a fixed non-zero seed) */
    double flops_target; /* forward-MAC ratio to reach; >= 1 or <= 0: unpruned */
    int in_hw;           /* image side (<= 0: 32) */
    int batch;           /* mini-batch (<= 0: 32) */
} npu_prune_cfg_t;

/* Fills out[0..NPU_RESNET50_LAYERS-1]; returns the layer count, or -1 (bad cfg, max too small).
 * *flops_ratio (may be NULL) gets the achieved forward-MAC ratio pruned / unpruned. */
int npu_pruned_resnet50(const npu_prune_cfg_t *cfg, npu_conv_layer_t *out, int max,
                        double *flops_ratio);

/* The GEMMs of one conv layer (forward, data-gradient if need_dgrad, weight-gradient) for a
 * mini-batch; returns how many (2 or 3). */
int npu_conv_gemms(const npu_conv_layer_t *L, int layer, int batch, npu_gemm_shape_t out[3]);

/* Forward MACs of a layer for a mini-batch. */
uint64_t npu_conv_layer_macs(const npu_conv_layer_t *L, int batch);

typedef struct npu_flexsa_eval {
    npu_flexsa_stats_t st[NPU_NUM_POLICIES]; /* aggregates over the set */
    double util[NPU_NUM_POLICIES];           /* ideal utilization */
    double util_rr[NPU_NUM_POLICIES];        /* with the 1G4C round-robin makespan per GEMM */
    double traffic_norm[NPU_NUM_POLICIES];   /* SPM -> LBUF elements / those of 1G1C */
    double intercore_waves[NPU_NUM_POLICIES];  /* FW + HSW + VSW share of waves */
    double intercore_cycles[NPU_NUM_POLICIES]; /* same, weighted by wave cycles */
} npu_flexsa_eval_t;

/* Plans every GEMM of g[0..n-1] under the three policies and aggregates. Returns 0 or -1. */
int npu_flexsa_eval(int S, int blk_m, const npu_gemm_shape_t *g, int n, npu_flexsa_eval_t *out);

#endif
