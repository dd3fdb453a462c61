/*
 * conv_bf16.h - what a convolution run needs at a bf16 configuration (issue 15; docs/conv.md
 * "bf16"): seeded bf16 operands, and the order-matched golden model (ref/conv_golden_bf16.h)
 * fed the program's summation order from its split plan (compile/conv/conv_order.h).
 */
#ifndef NPU_CONV_BF16_H
#define NPU_CONV_BF16_H

#include <stddef.h>
#include <stdint.h>

#include "compile/conv/conv_bwd.h"
#include "compile/conv/conv_split.h"
#include "ref/conv_golden_bf16.h"

/* Seeded bf16 operands in the layouts and stream order of npu_conv_operands: finite, nonzero,
 * exponents -8..7 (npu_bf16_from_bits), so macs_zero counts only structural zeros and no sum
 * of the tested sizes overflows or underflows. */
void npu_conv_operands_bf16(const npu_conv_t *c, uint64_t seed, int16_t *X, int16_t *Wt, int16_t *dY);

/* The golden's callback (ref/conv_golden_bf16.h npu_cwaves_fn) over ctx, an npu_conv_order_t
 * {s, NULL, 0}: output o's wave list from npu_conv_waves, in the golden's form. Free buf after. */
typedef struct npu_conv_order {
    const npu_conv_split_t *s;
    const npu_conv_bwd_plan_t *bwd; /* not NULL: the fused backward's orders (npu_conv_bwd_waves) */
    int kernel;                     /* with bwd: NPU_CONV_DX or NPU_CONV_DW */
    void *buf;  /* the compiler's wave list (grown as needed) */
    size_t cap;
} npu_conv_order_t;
size_t npu_conv_plan_waves(void *ctx, const int o[4], npu_cwave_t *w, size_t max);

/* The kernel of split plan s (its whole layer, kernel, dataflow) by the bf16 golden model, each
 * output summed in the program's order (npu_conv_waves); out as npu_conv_{fwd,dx,dw}_golden.
 * Returns 0, or -1 (out of memory, a malformed order). */
int npu_conv_golden_plan_bf16(const npu_conv_split_t *s, const int16_t *X, const int16_t *Wt,
                              const int16_t *dY, int32_t *out);
/* The fused backward bp's dX and dW ([kh][kw][f][c]) by the bf16 golden model in its program's
 * order (npu_conv_bwd_waves); dx NULL: dW only (the program without dX). 0, or -1 (out of memory,
 * a malformed order). */
int npu_conv_bwd_golden_bf16(const npu_conv_bwd_plan_t *bp, const int16_t *X, const int16_t *Wt,
                             const int16_t *dY, int32_t *dx, int32_t *dw);

#endif
