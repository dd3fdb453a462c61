/* gemm_swap.c - the swapped form of a GEMM; see gemm_swap.h. */
#include "compile/gemm/gemm_swap.h"

#include "hw/isa.h"

int npu_gemm_swap_candidate(const npu_cfg_t *cfg, int M, int N, int K)
{
    return !npu_cfg_bf16(cfg) && K > 0 && M > 0 && M < 2 * cfg->s && N > M;
}

npu_gemm_args_t npu_gemm_swap_args(const npu_gemm_args_t *a)
{
    npu_gemm_args_t s = *a;
    s.transA = !a->transB;
    s.transB = !a->transA;
    s.a = a->b;
    s.b = a->a;
    s.pitch_a = a->pitch_b;
    s.pitch_b = a->pitch_a;
    s.tag_a = a->tag_b ? a->tag_b : NPU_TAG_W;
    s.tag_b = a->tag_a ? a->tag_a : NPU_TAG_X;
    s.trans_c = 1;
    s.swap = 0;
    return s;
}
