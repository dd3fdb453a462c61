/*
 * step_emit.h - the program of one kernel of a step plan that is not a GEMM (vector, convolution,
 * transpose): the one emission the runtime (run/step_run.c) and the estimator (model/est_step.c)
 * share, so the estimate times the program the RTL runs. GEMMs go through npu_gemm_compile_args
 * (run/runtime.h), which both call directly.
 */
#ifndef NPU_STEP_EMIT_H
#define NPU_STEP_EMIT_H

#include <stddef.h>

#include "compile/step/step_plan.h"
#include "hw/npu_cfg.h"
#include "prog/prog.h"

/* Kernel k's program appended to prog. A convolution's plan (the forward's npu_conv_split_t, the
 * fused backward's npu_conv_bwd_plan_t) is returned in *conv for its golden model (NULL for other
 * kinds); free it with npu_step_conv_free(k, *conv), also after a failure. 0, or -1 with the
 * reason (the emitter's, or out of memory). */
int npu_step_emit_other(const npu_cfg_t *cfg, const npu_step_kernel_t *k, npu_prog_t *prog, void **conv, char *why,
                        size_t n);
void npu_step_conv_free(const npu_step_kernel_t *k, void *conv);

#endif
