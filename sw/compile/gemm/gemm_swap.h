/*
 * gemm_swap.h - the swapped form of a GEMM: C = A B computed as C^T = B^T A^T (issue 14).
 *
 * A GEMM with a tiny M (the dW GEMMs of a pruned network: M = the pruned channel count, 3..16)
 * streams only M rows per wave, shorter than the 2S + 1 rows a weight bank needs to turn around,
 * so the array idles. Swapped, N streams (M' = N) and the tiny M is the stationary side (N' = M:
 * skinny n-blocks, FlexSA's VSW / ISW). The operands swap roles and transposes: A' = B^T (B
 * stored K x N is A' stored transposed), B' = A^T; the result C^T is written into C's own
 * layout by transposed STOREs (int32, docs/isa.md), so the caller's tensors do not change.
 *
 * The lowering is a pure function of the args; whether to swap is the caller's cost decision
 * (run/runtime.c: both programs timed by the program-time model, the cheaper taken). Off at bf16:
 * the golden model's summation order follows the unswapped plan's K partition.
 */
#ifndef NPU_GEMM_SWAP_H
#define NPU_GEMM_SWAP_H

#include "compile/gemm/gemm_emit.h"
#include "hw/npu_cfg.h"

/* The largest program (output tiles x K chunks) either form may have for the swap to be costed:
 * the decision emits both programs. */
#define NPU_GEMM_SWAP_MAX_CHUNKS 65536

/* True when the swapped form is worth costing: an int16 config and M below one array side
 * (2S) with N larger (the waves of the plain form stream fewer than 2S rows). */
int npu_gemm_swap_candidate(const npu_cfg_t *cfg, int M, int N, int K);

/* The args of the swapped GEMM (an N x M x K plan) from the plain GEMM's args: A' = B (transA' =
 * !transB), B' = A (transB' = !transA), pitches and tags with them (a tag left 0 takes its
 * default: W for A', X for B'), C the same with trans_c = 1, swap = 0. */
npu_gemm_args_t npu_gemm_swap_args(const npu_gemm_args_t *a);

#endif
