/*
 * bwd_golden_bf16.h - the order-matched bf16 golden model of a layer's fused backward pass (dX
 * and dW in one program: the fused orders, the partitionings; issue 15, docs/training.md §4
 * "bf16 summation order"). Kept apart from the compiler: the summation order is derived here
 * from a plain description of the lowering's plan and tiles (npu_bwd_sumplan_t, filled by the
 * caller from the documented plan parameters), never from the emitted program.
 *
 * Layer: dX (M x K) = dY (M x N) . W^T, reduced over N; dW (K x N) = X^T . dY, reduced over M.
 * Tensors dense and row-major: X (M x K), W (K x N), dY (M x N) bf16 bit patterns; results fp32
 * bit patterns (as npu_read_i32 reads them). Arithmetic: ref/bf16.h, waves and OBUF / DRAIN acc
 * sums as ref/golden_bf16.h.
 *
 * The wave list of an output (npu_bwd_sum_waves), R the reduction dim (N for dX, M for dW):
 *   - the parts: when the split dim is R every part contributes, its range [lo, hi) along R, the
 *     parts in the combine order `order`; otherwise the one part whose range along the split
 *     holds the output (part 0 when there is no split), over the whole [0, R);
 *   - a part's range is cut into its tiles along R (tile[p][R], from the range's start; 0: one
 *     tile), each tile one op: its waves `depth` elements deep from the tile's start, the first
 *     begins an OBUF sum, the others add to it; the op's OBUF sum drains: the output's first op
 *     writes (NPU_CW_WRITE), every later one adds to the value so far by DRAIN acc (NPU_CW_ACC).
 * The forms of docs/training.md §4: SCHEDULE (one fused program, any order: every order visits
 * an output tile's reduction tiles in ascending order, the parts' tile ranges ascending too),
 * SUBGEMMS (each part its own tiles, later parts adding to the running sum), depth 2S; CORES
 * (one part per core, ISW waves of depth S, a whole part one OBUF sum: tile 0; the M and N
 * splits combine their four partials in the emitter's order, the K split has none).
 */
#ifndef NPU_BWD_GOLDEN_BF16_H
#define NPU_BWD_GOLDEN_BF16_H

#include <stddef.h>
#include <stdint.h>

#include "ref/golden_bf16.h"

#define NPU_BWD_SUM_PARTS 8

enum { NPU_SUM_M = 0, NPU_SUM_N = 1, NPU_SUM_K = 2 }; /* dims (the compiler's npu_dim_t values) */
enum { NPU_BWD_DX = 0, NPU_BWD_DW = 1 };              /* the gradient */

typedef struct npu_bwd_sumplan {
    long M, N, K;
    int depth;   /* wave depth: 2S (the fused array's column) or S (one core's, ISW waves) */
    int split;   /* NPU_SUM_M / N / K, or -1: one part */
    int nparts;  /* 1 .. NPU_BWD_SUM_PARTS */
    long lo[NPU_BWD_SUM_PARTS + 1];   /* part p: [lo[p], lo[p+1]) along split */
    int tile[NPU_BWD_SUM_PARTS][3];   /* part p's tiles along M, N, K (0: one tile) */
    int order[NPU_BWD_SUM_PARTS];     /* the combine order of parts summed into one output */
} npu_bwd_sumplan_t;

/* The wave list of output (i, j) of gradient grad (dX: row m, column k; dW: row k, column n):
 * up to max waves written in order, the count returned (0 on a bad plan). */
size_t npu_bwd_sum_waves(const npu_bwd_sumplan_t *p, int grad, long i, long j, npu_kwave_t *w,
                         size_t max);

/* Gradient grad of the layer summed in p's order into out (dX M x K, dW K x N, dense).
 * Returns 0, or -1 on a bad plan or out of memory. */
int npu_bwd_golden_bf16(const npu_bwd_sumplan_t *p, int grad, const int16_t *X, const int16_t *W,
                        const int16_t *dY, int32_t *out);

#endif
