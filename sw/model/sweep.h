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

#include "hw/npu_cfg.h"
#include "ref/net_ref.h"

#define NPU_SWEEP_MAX_VALUES 16

typedef struct npu_sweep_space {
    int n[4];                                /* values per key: s, spm, bw, batch */
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

#endif
