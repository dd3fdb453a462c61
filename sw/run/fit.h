/*
 * fit.h - `npu fit`: trains an MLP on a data set (the digits) and reports each epoch.
 *
 * Engines:
 *   NPU_FIT_REF      trains with the fp32 reference (ref/net_ref.h) alone;
 *   NPU_FIT_STEP     whole steps on the NPU (run/step_run.h; MLPs and CNNs, int16 with static
 *                    scales calibrated on one reference step before training): forward,
 *                    backward and the SGD update as GEMM, convolution, vector and transpose
 *                    kernels over one DRAM image;
 *                    the host writes the batch and the loss gradient and reads the logits, and
 *                    every kernel is checked bit-exact against the golden models;
 *   NPU_FIT_KERNELS  each GEMM and convolution kernel on the NPU (checked bit-exact by the
 *                    runtime), the bias, ReLU, loss and update on the host in fp32.
 * Both NPU engines train the fp32 reference beside them on the same initial weights and
 * batches, so each epoch reports both losses.
 *
 * Operand conversion for the NPU's GEMMs: bf16 configs round each fp32 operand to the nearest
 * bf16 (RNE) and read the fp32 result as is; int16 configs scale each operand tensor by a power
 * of two (npu_fit_i16_scale) and the int32 result back.
 */
#ifndef NPU_RUN_FIT_H
#define NPU_RUN_FIT_H

#include <stdint.h>

#include "compile/conv/conv_layer.h"
#include "compile/step/step_scale.h"
#include "data/digits.h"
#include "hw/npu_cfg.h"
#include "hw/npu_defs.h"
#include "npu_sim.h"
#include "ref/net_ref.h"

enum { NPU_FIT_REF = 0, NPU_FIT_KERNELS = 1, NPU_FIT_STEP = 2 };

typedef struct npu_fit_opts {
    npu_net_shape_t shape;
    int epochs, batch, engine;
    npu_sgd_t sgd;
    uint64_t seed;
    double test_frac;     /* share of the data held out for testing */
    int modes;            /* the runtime's GEMM modes (policy | slicing) */
    uint64_t max_cycles;  /* per GEMM */
    int res_banks;        /* NPU_FIT_STEP: SPM banks for tensors kept between kernels (0: none) */
    int res_overlap;      /* and the scheduler's prefetch / look-ahead (NPU_RES_* mask, step_res.h) */
} npu_fit_opts_t;

typedef struct npu_fit_epoch {
    int epoch;                     /* 1-based */
    double loss, ref_loss;         /* mean step loss of the epoch: this engine, the fp32 reference */
    double train_acc, test_acc;    /* after the epoch */
    double ref_test_acc;
    uint64_t cycles;               /* NPU cycles of the epoch's training steps */
    uint64_t eval_cycles;          /* NPU cycles of the accuracy passes */
    double cycles_per_sample;
    int samples;                   /* trained this epoch */
    long kernels, kernel_fail;     /* NPU GEMMs and conv kernels run in the epoch, and those not bit-exact / failed */
    double wall_s;
    int steps;                     /* training steps of the epoch */
    double train_wall_s;           /* the share of wall_s in the training steps (no evaluation) */
    /* NPU_FIT_STEP: the epoch's last training step, DMA bytes per tag (hw/npu_defs.h NPU_TAGS;
     * PROG: the programs' fetch) and the bytes the host wrote (batch, loss gradient) and read
     * (logits) */
    uint64_t step_rd[NPU_NUM_TAGS], step_wr[NPU_NUM_TAGS], step_host_wr, step_host_rd;
    const struct npu_step_run *step; /* NPU_FIT_STEP: the engine (per-kernel counters), else NULL */
} npu_fit_epoch_t;

typedef void (*npu_fit_epoch_cb)(void *ctx, const npu_fit_epoch_t *e);

/* The options against the data set (model widths, batch, epochs). 0, or -1 with the reason. */
int npu_fit_check(const npu_dataset_t *d, const npu_fit_opts_t *o, char *why, size_t n);

/* A network's layers as the step engine takes them (compile/step/step_plan.h npu_step_plan_cnn):
 * its leading convolutions over `batch` images into conv[] (room for NPU_STEP_MAX_LAYERS), the
 * widths of the fully connected layers after them into fc[0..*n_fc]; the count of convolutions,
 * or -1 when a convolution follows a fully connected layer or a fully connected layer has a
 * residual connection (the step plan's join convolutions: s->res of those is npu_step_plan_cnn_res's). */
int npu_fit_cnn_layers(const npu_net_shape_t *s, int batch, npu_conv_t *conv, int *fc, int *n_fc);

/* Whether the whole-step engine takes this model at this configuration (0), else -1 with the
 * reason (more layers than a step plans, a convolution the fused backward does not plan). */
int npu_fit_step_ok(const npu_cfg_t *cfg, const npu_net_shape_t *s, char *why, size_t n);

/* Trains; calls cb after each epoch. sim: the NPU (NULL for NPU_FIT_REF). Returns 0, 1 when an
 * NPU GEMM failed (the run stops at that epoch), or -1 with the reason in why (bad options,
 * out of memory). */
int npu_fit_run(const npu_cfg_t *cfg, npu_sim_t *sim, const npu_dataset_t *d,
                const npu_fit_opts_t *o, npu_fit_epoch_cb cb, void *cb_ctx, char *why, size_t n);

/* int16 configs: the power-of-two exponent e such that round(x * 2^e) keeps every |value| of
 * the tensor below 2^bits (bits = 15 - ceil(log2(K)) / 2: the int32 sum of K products of two
 * such values cannot overflow). Returns e (0 for an all-zero tensor). */
int npu_fit_i16_scale(const float *x, size_t n, int K);

/* The int16 whole-step engine's free scales (compile/step/step_scale.h) from the fp32 reference
 * m after one step on a batch (its activations, gradients, a normalised layer's Z, gamma, beta,
 * dgamma, dbeta) and the weights w it started from: the largest magnitudes with
 * npu_step_q_pick's headroom (CNNs: npu_step_q_cap_sums). What npu fit calibrates with. */
void npu_fit_step_q(const npu_net_ref_t *m, float *const *w, float momentum, npu_step_q_t *q);

#endif
