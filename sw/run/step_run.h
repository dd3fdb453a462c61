/*
 * step_run.h - whole training steps on the NPU (issue 15; docs/training.md "Whole iterations
 * on the NPU"): the kernels of compile/step/step_plan.h compiled once, their programs placed
 * after the tensors, and run in order over one DRAM image that persists from step to step.
 * The host writes the batch and the loss gradient and reads the logits; everything else stays
 * in the NPU's DRAM.
 *
 * Checking: beside the NPU's image the runtime keeps the golden model's (the same layout in host
 * memory) and applies every kernel to it with the golden models (GEMMs: ref/golden_bf16 in the
 * program's summation order; vector kernels: ref/vk_golden), then compares the kernel's output
 * tensors byte for byte and its counters with the program's expectation (npu_check_counters,
 * npu_check_array_counters). The golden image never feeds the NPU's: each side computes from
 * its own state, so a divergence shows at the first kernel that causes it.
 */
#ifndef NPU_STEP_RUN_H
#define NPU_STEP_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "compile/step/step_plan.h"
#include "hw/npu_cfg.h"
#include "hw/npu_defs.h"
#include "npu_sim.h"
#include "prog/prog.h"
#include "prog/prog_expect.h"

/* One kernel's compiled form. */
typedef struct npu_step_prog {
    npu_prog_t prog;
    uint64_t base;               /* DRAM byte address of the program */
    npu_prog_expect_t expect;
    void *gemm;                  /* GEMM kernels: the compiled report (runtime.h), owned */
    void *conv;                  /* conv kernels: the split plan (fwd) or the fused backward's, owned */
} npu_step_prog_t;

/* DRAM traffic and cycles, per tag, summed over kernels (the DMA counters). */
typedef struct npu_step_tally {
    uint64_t cycles, kernels;
    uint64_t rd[NPU_NUM_TAGS], wr[NPU_NUM_TAGS];   /* NPU DMA bytes (program fetch: PROG) */
    uint64_t vec_busy, macs;
    uint64_t host_wr, host_rd;                      /* bytes the host wrote / read */
} npu_step_tally_t;

/* Issue 16's roofline on the RTL side, for one kernel's tally: its cycles at least its MACs over
 * the PEs (*need = that bound, return 1 when below) and its DRAM bytes (the counters) over the
 * bandwidth, less the DRAM model's initial credit (its bucket starts full: max(4 beats, 2 beats +
 * one cycle's bytes), tb/dram_model.c) (*need, return 2 when below); 0 when at or above both. */
int npu_step_below_roof(const npu_cfg_t *cfg, const npu_step_tally_t *t, double *need);

typedef struct npu_step_run {
    const npu_cfg_t *cfg;
    npu_sim_t *sim;
    npu_step_plan_t plan;
    npu_step_prog_t *kp;          /* per kernel of plan */
    uint8_t *gold;                /* the golden image: bytes [0, plan.end) */
    uint64_t max_cycles;          /* per kernel */
    int check;                    /* compare every kernel with the golden model (default 1) */
    npu_step_tally_t fwd, bwd;    /* the last step's forward / backward+update; reset per call */
    npu_step_tally_t *last;       /* per kernel: its last run */
    struct npu_step_res *res;     /* SPM residency (npu_step_run_resident), owned; NULL: none */
    npu_step_prog_t *xp;          /* per transfer of res: its one LOAD or STORE */
    int cur_step;                 /* the scheduler step running (residency) */
    uint64_t *pre_cycles;         /* residency: per scheduler step (n_steps + 1), the cycles of
                                     the last step's transfers in programs of their own before
                                     its kernel (demand loads, write-backs that make room) */
    uint64_t scratch;             /* DRAM: the check program's slot, then a resident output's copy */
    uint64_t res_rd[NPU_STEP_MAX_TENSORS], res_wr[NPU_STEP_MAX_TENSORS]; /* the last step's
                                     whole-tensor transfers per tensor (DMA counters, bytes) */
    uint64_t t_in[NPU_STEP_MAX_TENSORS], t_out[NPU_STEP_MAX_TENSORS]; /* the last whole step's
                                     (forward and backward) DRAM bytes per tensor: the kernels'
                                     counters split by tag (compile/step/step_tags.h; residency:
                                     npu_step_res_split) and the residency's transfers */
    uint64_t t_lost, t_shared;    /* without residency: the last step's DMA bytes under a tag no
                                     tensor takes, and its kernels with a tag two tensors share
                                     (both 0 in every step plan: a test) */
    uint64_t cur_in[NPU_STEP_MAX_TENSORS], cur_out[NPU_STEP_MAX_TENSORS]; /* the step running */
    uint64_t cur_lost, cur_shared;
    uint64_t checked, failed;     /* kernels compared, and those that differed or failed */
    char why[512];                /* the first failure */
} npu_step_run_t;

/* Plans (npu_step_plan_mlp_q: q the int16 configurations' free scales, NULL for the nominal
 * ones) and compiles every kernel. 0, or -1 with the reason in s->why. */
int npu_step_run_init_q(npu_step_run_t *s, const npu_cfg_t *cfg, npu_sim_t *sim, const int *dims,
                        int layers, int batch, float lr, float mu, float wd, int modes,
                        const npu_step_q_t *q, uint64_t max_cycles);
/* The same for a CNN (npu_step_plan_cnn_res: res its convolutions' residual connections, NULL
 * none; q: int16 scales, NULL for the nominal ones). */
int npu_step_run_init_cnn(npu_step_run_t *s, const npu_cfg_t *cfg, npu_sim_t *sim, const npu_conv_t *conv,
                          int n_conv, const int *res, const int *fc, int n_fc, int batch, float lr, float mu, float wd,
                          int modes, const npu_step_q_t *q, uint64_t max_cycles);
/* npu_step_run_init_q with the nominal scales. */
int npu_step_run_init(npu_step_run_t *s, const npu_cfg_t *cfg, npu_sim_t *sim, const int *dims,
                      int layers, int batch, float lr, float mu, float wd, int modes,
                      uint64_t max_cycles);
void npu_step_run_free(npu_step_run_t *s);

/* Keeps tensors in the SPM between kernels from now on: the residency plan of compile/step/
 * step_res.h with the last res_banks banks resident, its kernels compiled in place of the plain
 * ones, one program per whole-tensor transfer, run before the kernel they precede. Checking
 * copies each resident output to a scratch DRAM area (a program outside the tallies) and compares
 * it with the golden image. 0, or -1 with the reason in s->why. */
int npu_step_run_resident(npu_step_run_t *s, int res_banks);
/* The same with the scheduler given cap bytes of the resident banks (npu_step_res_plan_cap). */
int npu_step_run_resident_cap(npu_step_run_t *s, int res_banks, uint64_t cap);
/* The same with the prefetch and look-ahead offload (transfers overlapping kernels) as the mask
 * `overlap` says (NPU_RES_PREFETCH | NPU_RES_LOOKAHEAD, step_res.h). */
int npu_step_run_resident_ex(npu_step_run_t *s, int res_banks, uint64_t cap, int overlap);

/* Writes the initial parameters (w[l-1]: d[l-1] x d[l] fp32, a convolution's [KH][KW][F][C];
 * b[l-1]: the layer's outputs per position) into both images: W32 and W16 = bf16(W32) (a
 * convolution's W32 transposed per tap: dW^T's layout), b, and zero velocities. The one time the
 * host writes them. */
void npu_step_run_params(npu_step_run_t *s, float *const *w, float *const *b);

/* Forward of rows <= batch samples x (rows x d[0], fp32 (a CNN's NHWC), rounded to bf16; the
 * rest of the batch zero): writes X16, runs the forward kernels, reads the logits (rows x d[L]). 0, or -1 (a kernel
 * failed or differed from the golden model: s->why). */
int npu_step_forward(npu_step_run_t *s, const float *x, int rows, float *logits);
/* Backward and update after npu_step_forward of a full batch: writes dZ32 of the last layer
 * (batch x d[L], fp32), runs the backward and update kernels. 0 or -1. */
int npu_step_backward(npu_step_run_t *s, const float *dlogits);

#endif
