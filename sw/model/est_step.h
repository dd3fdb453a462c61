/*
 * est_step.h - `npu estimate --plan step`: the estimator on the plan the RTL runs today (issue 16,
 * docs/estimator.md section 7): the kernels of the step engine's whole training step
 * (compile/step/step_plan.h, `npu fit --engine step`), in its order, each one estimator step that
 * reads its inputs from DRAM and writes its outputs to DRAM (no SPM residency across kernels).
 *
 * Per kernel, from the program its emitter builds (GEMMs: npu_gemm_compile_args, the tiles and
 * policy the runtime takes; vector kernels: npu_vk_emit), without running it:
 *  - DRAM bytes per tag: the program's expected counters (prog/prog_expect.h), the program fetch
 *    included: the accounting every RTL run is checked against, so one source of truth;
 *  - cycles: npu_prog_time (prog_time.h), the program's queues and tokens replayed with the
 *    slicing stage's cost primitives and the vector unit's busy model;
 *  - its roofline, max(MACs / PEs, DRAM bytes / bandwidth), which the prediction never undercuts,
 *    and its class: memory-bound when its bytes take longer than its compute (MACs / PEs, or the
 *    vector unit's busy cycles).
 */
#ifndef NPU_MODEL_EST_STEP_H
#define NPU_MODEL_EST_STEP_H

#include <stddef.h>
#include <stdint.h>

#include "compile/step/step_plan.h"
#include "compile/step/step_res.h"
#include "hw/npu_cfg.h"
#include "hw/npu_defs.h"

typedef struct npu_est_kernel {
    char name[48];                /* the step plan's: "bwd L2 dx" */
    int kind, phase, layer;       /* NPU_SK_* of the plan; layer 1..L */
    uint64_t macs, vec_busy;      /* expected counters */
    uint64_t rd[NPU_NUM_TAGS], wr[NPU_NUM_TAGS]; /* DRAM bytes per tag (PROG: the fetch) */
    uint64_t bytes;               /* all of them */
    uint64_t compute;             /* MACs / PEs (GEMM) or vec_busy: compute alone */
    uint64_t roof;                /* max(ceil(MACs / PEs), ceil(bytes / bandwidth)) */
    uint64_t timed;               /* npu_prog_time's cycles */
    uint64_t cycles;              /* predicted: max(timed, roof) (timed is never below roof: a test) */
    int memory_bound;             /* bytes / bandwidth > compute */
} npu_est_kernel_t;

/* A step tensor's DRAM traffic: its bytes in every kernel (each kernel's DMA tags name its own
 * tensors, compile/step/step_tags.h) and, under the residency plan (npu_estimate_step_res), in the
 * scheduler's whole-tensor transfers. */
typedef struct npu_est_tensor {
    char name[16];
    uint64_t in, out;          /* DRAM -> SPM and SPM -> DRAM bytes: transfers and kernels */
    uint64_t xfer_in, xfer_out; /* of which whole-tensor transfers (the scheduler's) */
    int loads, stores, drops;  /* the scheduler's events */
} npu_est_tensor_t;

typedef struct npu_est_kplan {
    int nk, layers, batch, dims[NPU_STEP_MAX_LAYERS + 1];
    npu_est_kernel_t k[7 * NPU_STEP_MAX_LAYERS];
    uint64_t cycles, macs, rd_bytes, wr_bytes; /* the whole step (kernels one after another) */
    /* residency (res_banks > 0): the kernels above are the plan's; the whole-tensor transfers run
     * as programs of their own between them (their cycles, bytes and count are in these) */
    int res_banks, nt, nx, nx_app, demoted; /* nx transfers, nx_app of them in kernels' programs */
    int res_overlap;               /* the chosen plan's options (step_res.h NPU_RES_*) */
    uint64_t xfer_cycles, xfer_bytes;
    uint64_t xfer_rd, xfer_wr;     /* xfer_bytes split: read (the programs' fetch included), written */
    uint64_t pre[7 * NPU_STEP_MAX_LAYERS + 2]; /* per scheduler step: its own transfer programs'
                                                  cycles before its kernel (the RTL's stall) */
    npu_est_tensor_t t[NPU_STEP_MAX_TENSORS]; /* nt: every tensor's DRAM bytes (with or without
                                                 residency), the kernels' split by tag */
    uint64_t lost;                 /* without residency: DMA bytes under a tag no tensor takes */
    int shared;                    /* without residency: kernels with a tag two tensors share */
} npu_est_kplan_t;

/* The step cycles of plan p under residency res: its kernels and transfers as
 * npu_estimate_step_res_ex estimates them (UINT64_MAX when one cannot be costed). cfg is the
 * npu_cfg_t; the signature is step_res.h's npu_step_res_cost_fn, the scheduler's choice between
 * candidate plans. */
uint64_t npu_est_res_cycles(void *cfg, const npu_step_plan_t *p, const npu_step_res_t *res);
/* The residency plan (npu_step_res_plan_by) chosen by those cycles (with NPU_RES_BY_TRAFFIC in
 * overlap: by its DRAM traffic): the plan the step engine runs (run/step_run.h) and the estimator
 * costs, one function for both. 0, or -1 with res->why. */
int npu_est_res_plan(const npu_cfg_t *cfg, const npu_step_plan_t *p, int res_banks, uint64_t cap, int overlap,
                     npu_step_res_t *res);

/* Estimates the step of the MLP d[0] -> .. -> d[layers] at batch `batch`, GEMMs under policy
 * modes (NPU_EMIT_*). 0, or -1 with the reason (the step plan's: an int16 configuration, a width
 * out of range; an emitter's). */
int npu_estimate_step(const npu_cfg_t *cfg, const int *dims, int layers, int batch, int modes,
                      npu_est_kplan_t *e, char *why, size_t n);
/* The same step with the last res_banks SPM banks resident (compile/step/step_res.h): the
 * scheduler's plan, its kernels and transfers, and every tensor's DRAM bytes (the kernels'
 * counters split by tag as the runtime splits the RTL's). res_banks 0: npu_estimate_step. */
int npu_estimate_step_res(const npu_cfg_t *cfg, const int *dims, int layers, int batch, int modes,
                          int res_banks, npu_est_kplan_t *e, char *why, size_t n);
/* The same with the scheduler given cap bytes of the resident banks (0: all; step_res.h). */
int npu_estimate_step_res_cap(const npu_cfg_t *cfg, const int *dims, int layers, int batch, int modes,
                              int res_banks, uint64_t cap, npu_est_kplan_t *e, char *why, size_t n);
/* The same with the prefetch and look-ahead offload as the mask overlap says (step_res.h). */
int npu_estimate_step_res_ex(const npu_cfg_t *cfg, const int *dims, int layers, int batch, int modes,
                             int res_banks, uint64_t cap, int overlap, npu_est_kplan_t *e, char *why,
                             size_t n);

/* The step of a CNN (compile/step/step_plan.h npu_step_plan_cnn_res: n_conv convolutions conv[] over
 * the batch with their residual connections res[] (NULL: none), then fully connected widths fc[0..n_fc]), every kernel from and to DRAM: its
 * convolution kernels (the forward's split, the fused backward) and transposes as the step
 * engine emits them (compile/step/step_emit.h). 0, or -1 with the reason. */
int npu_estimate_step_cnn(const npu_cfg_t *cfg, const npu_conv_t *conv, int n_conv, const int *res, const int *fc,
                          int n_fc, int batch, int modes, npu_est_kplan_t *e, char *why, size_t n);
/* The same with the last res_banks SPM banks resident (0: none), the scheduler given cap bytes of
 * them (0: all) and its prefetch / look-ahead as overlap says (step_res.h): the convolution kernels
 * and transposes read and write DRAM, planned on the banks below the resident ones; the vector
 * kernels and GEMMs use the resident copies. */
int npu_estimate_step_cnn_res(const npu_cfg_t *cfg, const npu_conv_t *conv, int n_conv, const int *res,
                              const int *fc, int n_fc, int batch, int modes, int res_banks, uint64_t cap,
                              int overlap, npu_est_kplan_t *e, char *why, size_t n);

#endif
