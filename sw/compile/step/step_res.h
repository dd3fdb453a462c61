/*
 * step_res.h - SPM residency across the kernels of a training step (issue 16; docs/training.md
 * "Tensors kept in the SPM"): the tensor-granular scheduler's plan (model/sched.h: Belady
 * eviction, write-back of dirty tensors still wanted, drops of clean ones) over the step's
 * kernels, given SPM addresses and applied to them, so that tensors stay in the SPM from the
 * kernel that makes them to the ones that read them.
 *
 * The SPM is split at a bank boundary: the kernels' own buffers (GEMM tiles, vector-kernel
 * chunks) below `limit`, resident tensors from `limit` to the end. A resident tensor's row r is at
 * word spm + r * stride (npu_gemm_res_words: 16-bit rows ceil(cols / 2S) words, 32-bit rows the
 * two words per 2S columns a DRAIN writes). The scheduler's steps are the kernels in order with
 * the host's step after the forward pass (it reads the logits and writes their gradient in DRAM).
 *
 * Which accesses use the SPM copy: every vector-kernel tensor (loaded, stored or both), every
 * GEMM operand stored as the GEMM reads it, and the output Y of a forward convolution of one part
 * (drained into its rows, not stored: conv_split.h npu_conv_split_res_out; not when no kernel
 * would read it in the SPM before its write-back; NPU_RES_NO_CONV_Y turns it off) and its input X
 * (copied from its rows into the bands by LOAD_SPMs, not loaded: npu_conv_split_res_in;
 * NPU_RES_NO_CONV_X turns it off), a fused backward's dY (read in place), dX (drained into rows)
 * and X (its X^T LOAD_SPMed from X's rows: npu_conv_bwd_res_x), a transposed GEMM operand (its
 * tiles LOAD_SPMed transposed; NPU_RES_NO_XT turns both off); every other convolution or transpose
 * access is DRAM side (the conv emitters load their band layouts), so a dirty resident copy is
 * written back first. When a kernel's own
 * resident tensors do not fit the area, its largest is demoted to a DRAM-side access (the kernel
 * streams it as without residency) and the plan is made again: deterministic, until it fits.
 * Addresses: first fit at each tensor's arrival; a tensor may come back at another address. When
 * first fit fails for lack of a contiguous range, the plan is made again with the area the
 * scheduler may fill reduced by that tensor's words (fragmentation), a few times at most; when a
 * convolution's resident output was in the way, also with that output on the DRAM side instead,
 * and the plan of fewer bytes is kept.
 *
 * Transfers: x[x_at[s] .. x_at[s + 1]) belong to scheduler step s (each one LOAD or one STORE of
 * a whole tensor between its DRAM address and its SPM rows). Those issued at their step (demand
 * loads, write-backs that make room) run as programs of their own before the step's kernel; those
 * the scheduler issues earlier (prefetch k steps ahead, look-ahead offload right after the last
 * write) are appended to the program of the kernel of the step they are issued at, so they
 * overlap it (npu_step_res_append), under a tag of their own tensor. After the last kernel run
 * those of step n_steps.
 */
#ifndef NPU_STEP_RES_H
#define NPU_STEP_RES_H

#include <stddef.h>
#include <stdint.h>

#include "compile/step/step_plan.h"
#include "compile/step/step_tags.h"
#include "hw/isa.h"
#include "hw/npu_defs.h"
#include "hw/npu_cfg.h"
#include "model/sched.h"

/* A resident stay of a tensor: scheduler steps [from, to) at SPM word spm. */
typedef struct npu_res_stay {
    int t, from, to;
    unsigned spm;
} npu_res_stay_t;

/* A whole-tensor transfer of the plan (a scheduler LOAD or STORE event). */
typedef struct npu_res_xfer {
    int store, t, keep; /* keep: a write-back for a DRAM-side read; the tensor stays */
    unsigned spm;
    int step;           /* the scheduler step whose programs hold it */
    int app;            /* 0: a program of its own before the step's kernel (a demand load, a
                           write-back that makes room); 1: appended to the kernel's program, so
                           it overlaps the kernel (a prefetch, a look-ahead write-back) */
    unsigned tag;       /* app: the DMA tag, the kernel's tag of this tensor or a free one */
    int for_step;       /* the scheduler step it is for (a load's reader, a write-back's eviction) */
    int order;          /* the plan's order (ties within a step) */
} npu_res_xfer_t;

typedef struct npu_step_res {
    unsigned limit, words;          /* the resident area: SPM words [limit, words) */
    int n_steps;                    /* the plan's kernels + 1 (the host's step) */
    uint64_t cap_bytes;             /* the bytes the scheduler was given (<= the area's) */
    int demoted;                    /* accesses moved to the DRAM side to make the plan fit */
    npu_sched_tensor_t st[NPU_STEP_MAX_TENSORS];
    unsigned stride[NPU_STEP_MAX_TENSORS]; /* SPM words per row when resident */
    unsigned char dram_only[NPU_STEP_MAX_TENSORS]; /* never resident: its DRAM pitch is wider
                                       than its resident rows (every access DRAM side) */
    npu_sched_step_t *ss;           /* n_steps */
    npu_sched_result_t r;           /* the scheduler's plan and its bytes per tensor */
    npu_step_kernel_t *k;           /* the plan's kernels with their resident operands */
    int nstay, nx;
    npu_res_stay_t *stay;
    npu_res_xfer_t *x;
    int *x_at;                      /* n_steps + 2 */
    npu_step_tagmap_t *tags;        /* per kernel: the step tensor each DMA tag of its program
                                       moves, per direction (step_tags.h); GEMMs' and vector
                                       kernels' tags are reassigned, one per tensor, conv kernels
                                       and transposes keep their role tags, so the DMA counters
                                       split by tensor */
    unsigned char *y_ok;            /* per kernel: a convolution forward whose Y may be drained
                                       into resident rows (one part: conv_split.h
                                       npu_conv_split_res_out), a fused backward whose dX may
                                       (conv_bwd.h npu_conv_bwd_res_dx): an SPM-side output then */
    unsigned char *x_ok;            /* per kernel: a convolution forward whose X may be copied
                                       from resident rows (one part: conv_split.h
                                       npu_conv_split_res_in), a fused backward whose dY may be
                                       read in place from them (conv_bwd.h npu_conv_bwd_res_dy):
                                       an SPM-side input then */
    unsigned char *xt_ok;           /* per kernel: a fused backward whose X^T may be made from X's
                                       resident rows (conv_bwd.h npu_conv_bwd_res_x: LOAD_SPMs)
                                       an SPM-side read of X then */
    int reshaped;                   /* tensors some kernel views in another row shape that their
                                       packed resident rows hold (step_res.c same_rows) */
    int ambiguous;                  /* a kernel with more tensors than tags (then its map is not
                                       one-to-one and per-tensor bytes are not split) */
    int overlap;                    /* NPU_RES_PREFETCH | NPU_RES_LOOKAHEAD (npu_step_res_plan_ex):
                                       the scheduler's prefetch and look-ahead offload, their
                                       transfers appended to earlier kernels' programs */
    char why[200];
} npu_step_res_t;

/* The scheduler step of kernel i, and the kernel of scheduler step j (-1: the host's). */
int npu_step_res_step(const npu_step_plan_t *p, int i);
int npu_step_res_kernel(const npu_step_plan_t *p, int j);

/* The residency of plan p with the last res_banks SPM banks resident. 0, or -1 with the reason
 * in res->why (no bank left for the kernels, a kernel's tensors that cannot fit even demoted, out
 * of memory). Free with npu_step_res_free. */
int npu_step_res_plan(const npu_cfg_t *cfg, const npu_step_plan_t *p, int res_banks, npu_step_res_t *res);
/* The same with the scheduler given cap bytes of the area (0: all of it): the SPM size a design
 * point has, for sweeps (issue 16 acceptance 3) on one build. */
int npu_step_res_plan_cap(const npu_cfg_t *cfg, const npu_step_plan_t *p, int res_banks, uint64_t cap,
                          npu_step_res_t *res);
/* The same with the scheduler's prefetch and look-ahead offload as `overlap` says (a mask of
 * NPU_RES_PREFETCH, NPU_RES_LOOKAHEAD). npu_step_res_plan and npu_step_res_plan_cap take both. */
/* NPU_RES_NO_CONV_Y: every forward convolution's output on the DRAM side (stored, as before
 * convolutions could drain into resident rows; for comparisons). NPU_RES_NO_CONV_X: every forward
 * convolution's input on the DRAM side (LOADed by the emitter, as before it could copy from
 * resident rows). NPU_RES_NO_CONV_DY: every fused backward's dY on the DRAM side (LOADed into
 * its band layout, as before it could read the resident rows in place). NPU_RES_NO_CONV_DX:
 * every fused backward's dX on the DRAM side (stored, as before it could drain into resident
 * rows). NPU_RES_NO_XT: every operand read transposed on the DRAM side: a fused backward's X (its
 * X^T LOADed from DRAM) and a GEMM's transposed A or B (the dW GEMMs' X, the dX GEMMs' W), as
 * before they could be LOAD_SPMed transposed from their resident rows. */
enum { NPU_RES_PREFETCH = 1, NPU_RES_LOOKAHEAD = 2, NPU_RES_NO_CONV_Y = 4, NPU_RES_NO_CONV_X = 8,
       NPU_RES_NO_CONV_DY = 16, NPU_RES_NO_CONV_DX = 32, NPU_RES_NO_XT = 64,
       NPU_RES_BYPASS = 128, NPU_RES_NO_BYPASS = 256, NPU_RES_BY_TRAFFIC = 512, NPU_RES_NO_BATCH_X = 1024,
       NPU_RES_NO_RESHAPE = 2048 };
int npu_step_res_plan_ex(const npu_cfg_t *cfg, const npu_step_plan_t *p, int res_banks, uint64_t cap,
                         int overlap, npu_step_res_t *res);
/* NPU_RES_NO_RESHAPE: a tensor some kernel views in another row shape on the DRAM side even where
 * its resident rows are packed (a CNN head's input, read as one row per sample by the head's GEMMs,
 * and the head's dH32, read as pixel rows: resident when the channels fill whole SPM words).
 * NPU_RES_NO_BATCH_X: the batch X16 on the DRAM side (the first convolution LOADs its bands from
 * DRAM, the backward reads it again), the other forward inputs as NPU_RES_NO_CONV_X says.
 * NPU_RES_BYPASS: the tensors one kernel alone touches (an update's W32 and VW) on the DRAM side,
 * streamed by that kernel, so that they take no room Belady would make by evicting a tensor a
 * later kernel reads (Belady with bypass); NPU_RES_NO_BYPASS: never tried (the default tries it).
 *
 * The plan is chosen between candidates (each option above that keeps something on the DRAM
 * side, turned on in turn: a greedy descent) by a cost, lower is better. `cost` NULL: the plan's
 * DRAM-side bytes counted coarsely (traffic(): a whole tensor per DRAM-side access). The step
 * engine and the estimator pass the estimator's step cycles (model/est_step.h
 * npu_est_res_plan), so that the plan the RTL runs is the one the estimator costs fastest, unless
 * NPU_RES_BY_TRAFFIC asks for the plan of least traffic (the brief's objective: DRAM bytes). */
typedef uint64_t (*npu_step_res_cost_fn)(void *ctx, const npu_step_plan_t *p, const npu_step_res_t *res);
int npu_step_res_plan_by(const npu_cfg_t *cfg, const npu_step_plan_t *p, int res_banks, uint64_t cap,
                         int overlap, npu_step_res_cost_fn cost, void *ctx, npu_step_res_t *res);

/* Appends to prog (kernel i's program) the transfers the plan overlaps with kernel i. 0, or -1
 * when an instruction does not fit or memory runs out. */
int npu_step_res_append(const npu_step_plan_t *p, const npu_step_res_t *res, int i, npu_prog_t *prog);
void npu_step_res_free(npu_step_res_t *res);

/* Adds to in[t] / out[t] (per step tensor) the DRAM bytes of kernel i's program, read (rd) and
 * written (wr) per tag (DMA counters or their expectation; the program fetch is not a tensor's). */
void npu_step_res_split(const npu_step_res_t *res, int i, const uint64_t *rd, const uint64_t *wr,
                        uint64_t *in, uint64_t *out);

/* The one instruction of a whole-tensor transfer: a LOAD of tensor t's rows from DRAM byte dram
 * into its resident rows at word spm, or (store) a STORE back, under DMA tag `tag` (0: X for a
 * LOAD, Y for a STORE). 0, or -1 when a field does not fit. */
int npu_step_res_xfer_insn(const npu_step_plan_t *p, const npu_step_res_t *res, int store, int t,
                           unsigned spm, uint64_t dram, unsigned tag, npu_insn_t *in);

/* The DRAM bytes (the DMA counters' beats * B) of a whole-tensor transfer of tensor t. */
uint64_t npu_step_res_xfer_bytes(const npu_cfg_t *cfg, const npu_step_plan_t *p, int t);

#endif
