/*
 * sweep.h - `npu sweep`: the estimator (estimate.h) over a design space: every combination of
 * core side S, SPM size, DRAM bytes per cycle and batch, one result row each (issue 16).
 *
 * The space is written "s=4,8,16;spm=32,64,128;bw=16,32;batch=8,32" (SPM in KiB; any key may be
 * left out: the build's value). A point whose step does not fit its SPM is a row with ok = 0.
 */
#ifndef NPU_MODEL_SWEEP_H
#define NPU_MODEL_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "compile/conv/conv_layer.h"
#include "hw/npu_cfg.h"
#include "ref/net_ref.h"

#define NPU_SWEEP_MAX_VALUES 16

typedef struct npu_sweep_space {
    int n[4];                                /* values per key: s, spm, bw, batch */
    int given[4];                            /* the key was in the spec (else the build's value) */
    double v[4][NPU_SWEEP_MAX_VALUES];
} npu_sweep_space_t;

typedef struct npu_sweep_point {
    int s, batch, ok;
    uint64_t spm_bytes;
    double bw;
    uint64_t cycles, stall, in_bytes, out_bytes, macs;
    double utilization, samples_per_mcycle;
} npu_sweep_point_t;

/* Parses the space (defaults from cfg and batch). 0, or -1 with the reason in why. */
int npu_sweep_parse(const char *spec, const npu_cfg_t *cfg, int batch, npu_sweep_space_t *sp,
                    char *why, size_t n);
/* The number of points. */
int npu_sweep_count(const npu_sweep_space_t *sp);
/* Point i (0 <= i < count) estimated for net: the configuration is cfg with S, the SPM (banks of
 * cfg's count, words per bank from the size) and DRAM bandwidth replaced. 0, or -1 out of memory. */
int npu_sweep_point(const npu_cfg_t *cfg, const npu_net_shape_t *net, const npu_sweep_space_t *sp,
                    int i, npu_sweep_point_t *pt);

/* --plan step (an MLP d[0..layers], or a CNN): point i estimated as the step engine runs it
 * (model/est_step.h), GEMMs under modes, tensors kept in the SPM's last res_banks banks as the
 * scheduler plans (0: every kernel through DRAM) with prefetch and look-ahead as overlap says.
 * The point's SPM is the scheduler's share of those banks (spm not given: all of them; more than
 * they hold, or spm given without residency: a row with ok = 0 and the reason in why); S and
 * the bandwidth replace the build's (away from the build's the cost formulas, not its
 * calibration). stall: the transfers' own programs (the RTL's stall). 0, or -1 out of memory. */
/* Point i's configuration: cfg with S and the DRAM bandwidth replaced (away from the build's, the
 * calibration is dropped: the cost formulas hold there, the fitted constants do not). */
npu_cfg_t npu_sweep_point_cfg(const npu_cfg_t *cfg, const npu_sweep_space_t *sp, int i);
typedef struct npu_sweep_step {
    const int *dims;
    int layers, modes, res_banks, overlap;
    /* a CNN (n_conv > 0; dims unused): its convolutions (their batch replaced by the point's) and
     * the widths of its fully connected layers, as npu_step_plan_cnn takes them; no residency */
    const npu_conv_t *conv;
    int n_conv;
    const int *fc;
    int n_fc;
    const int *res;       /* the convolutions' residual connections (npu_step_plan_cnn_res), NULL none */
} npu_sweep_step_t;
int npu_sweep_step_point(const npu_cfg_t *cfg, const npu_sweep_step_t *o, const npu_sweep_space_t *sp, int i,
                         npu_sweep_point_t *pt, char *why, size_t n);

/* The points to validate on the RTL: k of the n candidates cand[0..n) (the runnable points, in
 * sweep order), the first k of a shuffle with a fixed seed (so every key's values are drawn, not
 * a stride that may hit one value of the innermost key), in sweep order; then the share of shard
 * i of m (the j-th chosen with j mod m = i). Into out (room for min(k, n)); their count, or -1
 * out of memory. Shards partition the sample: their union is the unsharded one. */
int npu_sweep_sample(const int *cand, int n, int k, int shard, int shards, int *out);

#endif
