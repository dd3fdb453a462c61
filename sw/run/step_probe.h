/*
 * step_probe.h - one training step of an MLP or a CNN on the simulated NPU, to measure it against the
 * estimator (issue 16: `npu sweep --validate`, tests/est/step_fidelity.c).
 *
 * A probe opens its own simulator with the point's DRAM bandwidth (the build's latency and burst
 * cost, no stalls), compiles the step engine's kernels (run/step_run.h), keeps tensors in the SPM
 * as the scheduler plans when res_banks > 0, writes seeded parameters, and runs one step (a
 * deterministic batch, a loss gradient from the logits): every kernel bit-exact against the
 * golden image and its counters as its program says. The result: the step's cycles and DMA bytes
 * (kernels and whole-tensor transfers) and, with residency, every tensor's DRAM In / Out bytes.
 */
#ifndef NPU_RUN_STEP_PROBE_H
#define NPU_RUN_STEP_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "hw/npu_cfg.h"
#include "run/step_run.h"

typedef struct npu_step_probe_opts {
    const int *dims;      /* d[0] .. d[layers] */
    int layers, batch, modes; /* modes: the GEMMs' policy (NPU_EMIT_*) */
    double bw;            /* DRAM bytes per cycle (<= 0: the build's) */
    int res_banks;        /* 0: every kernel through DRAM; else the residency plan's banks */
    uint64_t cap;         /* the scheduler's share of them in bytes (0: all) */
    int overlap;          /* NPU_RES_PREFETCH | NPU_RES_LOOKAHEAD (compile/step/step_res.h) */
    const npu_conv_t *conv; /* a CNN (n_conv > 0; dims unused): its convolutions (batch replaced) */
    int n_conv;
    const int *fc;        /* and its fully connected widths fc[0..n_fc] */
    int n_fc;
    const int *res;       /* its convolutions' residual connections (npu_step_plan_cnn_res), NULL none */
} npu_step_probe_opts_t;

typedef struct npu_step_probe {
    uint64_t cycles;               /* the whole step: forward, backward, update, transfers */
    uint64_t rd_bytes, wr_bytes;   /* its DMA bytes (program fetch included) */
    int kernels, checked;          /* kernels run and compared bit-exact */
    int nt;                        /* residency: tensors, and their DRAM In / Out bytes */
    uint64_t t_in[NPU_STEP_MAX_TENSORS], t_out[NPU_STEP_MAX_TENSORS];
} npu_step_probe_t;

/* Seeded random weights (uniform in +-1/sqrt(fan-in)) and zero biases into both images (an MLP's
 * or a CNN's plan). */
void npu_step_probe_params(npu_step_run_t *s, uint64_t seed);
/* One step after npu_step_probe_params: a deterministic batch (x_i = (7i mod 17) / 16), forward,
 * the loss gradient (logits minus the one-hot of label r mod classes for row r, over the batch),
 * backward and update. 0 or -1 (s->why). */
int npu_step_probe_step(npu_step_run_t *s);
/* Runs the probe o on cfg's RTL. 0, or -1 with the reason in why (the step engine's refusal, a
 * kernel that failed or differed from the golden model). */
int npu_step_probe(const npu_cfg_t *cfg, const npu_step_probe_opts_t *o, npu_step_probe_t *r, char *why, size_t n);

#endif
