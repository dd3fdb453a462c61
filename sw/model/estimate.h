/*
 * estimate.h - `npu estimate`: the analytical estimator of one training iteration (issue 16,
 * docs/estimator.md): forward, loss, backward and update of every layer of a network as steps
 * of the SPM scheduler (sched.h), each step's compute cycles from the slicing stage's cost model
 * (the kernel's compute steps alone: transfers are the scheduler's), per-step and whole-iteration
 * cycles, stalls, DRAM bytes and the thesis's metrics.
 *
 * Tensors and their bytes: the batch X0 and every activation Y and gradient dY in the element
 * type (2 bytes); weights W (2 bytes) with an fp32 velocity V; biases b, weight and bias
 * gradients dW, db in 4 bytes (the OBUF's fp32 / int32). The batch and the parameters start in
 * DRAM; updated parameters and velocities must end there. The loss step (softmax cross-entropy
 * on the host) reads the logits and writes dY of the last layer, with no NPU cycles.
 *
 * A residual connection (npu_net_layer_t.res: layer l adds activation S, the network's input or
 * layer j's output, to its output before its ReLU) is a step of its own after fwd l, "add<l>"
 * (phase fwd): it reads Y<l> and S and writes Y<l>, so S stays live, or comes back, until then.
 * Its gradient fans out: dY<l> is also S's gradient, added to dY<j> where dY<j> is made, in the
 * backward step of layer j + 1, before ReLU's mask; that step reads dY<l>, which stays live, or
 * comes back, until then (none for the network's input).
 */
#ifndef NPU_MODEL_ESTIMATE_H
#define NPU_MODEL_ESTIMATE_H

#include <stdint.h>

#include "hw/npu_cfg.h"
#include "model/sched.h"
#include "ref/net_ref.h"

enum { NPU_EST_FWD = 0, NPU_EST_LOSS, NPU_EST_BWD, NPU_EST_UPDATE };

typedef struct npu_est_opts {
    int batch;
    uint64_t spm_bytes;   /* 0: the configuration's SPM */
    double dram_bw;       /* bytes per cycle; 0: the configuration's */
    int dram_latency;     /* cycles per transfer; < 0: the configuration's */
    int prefetch, lookahead;
} npu_est_opts_t;

typedef struct npu_est_step {
    char name[24];        /* "fwd1", "norm1", "add3", "loss", "dnorm1", "bwd0", "update2" */
    int phase, layer;
    uint64_t macs, compute, vec; /* MACs; array cycles (slicing model); vector-unit busy cycles
                                    (the step plan's vector kernels, npu_vk_vec_busy) */
    uint64_t bytes;       /* the step's tensors (the thesis's capacity) */
    double rf;            /* reuse frequency: 2 x MACs (+ vector cycles x S) per byte of its tensors */
    int memory_bound;     /* rf below the ridge point (peak ops per cycle / DRAM bytes per cycle) */
    int modelled;         /* 1: the slicing stage costed every kernel (0: a bound, MACs / PEs)
                             and the vector kernels are the step plan's (0: split or refused) */
    int tiled;            /* 1: its tensors exceed the SPM: it runs tile by tile (estimate.c) */
} npu_est_step_t;

#define NPU_EST_MAX_STEPS (6 * NPU_NET_MAX_LAYERS + 1)

typedef struct npu_est {
    int n_steps, n_tensors;  /* the arrays first: npu_estimate zeroes from problem on */
    /* fwd, norm (normalised), add (residual), loss, dnorm (normalised), bwd, update */
    npu_est_step_t step[NPU_EST_MAX_STEPS];
    /* a layer's 8, its own input and dX, a normalised layer's 5 */
    npu_sched_tensor_t tensor[15 * NPU_NET_MAX_LAYERS + 1];
    char tensor_name[15 * NPU_NET_MAX_LAYERS + 1][16];
    npu_sched_step_t sstep[NPU_EST_MAX_STEPS];
    npu_sched_problem_t problem;
    npu_sched_result_t sched;
    uint64_t macs, cycles;
    double utilization;   /* MACs / (PEs x cycles) */
    double bandwidth;     /* DRAM bytes per cycle over the iteration */
    double active;        /* bandwidth / the DRAM's */
    double ridge;         /* ops per byte where compute and transfer balance */
    double samples_per_mcycle;
} npu_est_t;

/* Estimates one iteration of net at cfg. 0, or -1 with the reason in why (a step larger than the
 * SPM, out of memory). Free e with npu_est_free. */
int npu_estimate(const npu_cfg_t *cfg, const npu_net_shape_t *net, const npu_est_opts_t *o,
                 npu_est_t *e, char *why, size_t n);
void npu_est_free(npu_est_t *e);
const char *npu_est_phase_name(int phase); /* "fwd" "loss" "bwd" "update" */

#endif
