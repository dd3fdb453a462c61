/*
 * conv_order.h - the summation order of a convolution program (bf16, issue 15; docs/conv.md
 * "bf16"): for one output element, the waves that add into it, in the order the program's
 * EXEC queue issues them, as the emitter walks its units (conv_fwd_dx.c, conv_dw.c) and the
 * split runs its parts (conv_split.c). A pure function of the split plan: no program, no
 * simulator. The bf16 golden model (ref/conv_golden_bf16.h) sums each output in this order.
 *
 *   fwd (b, oh, ow, f):  per part holding f and ow (column ranges outermost, channel ranges
 *        innermost), per tap t = kh*KW + kw ascending, per c-block of the part: a wave over its
 *        channels (depthwise: f's own block only). Padding pixels are waves too (the zero plane).
 *   dX  (b, ih, iw, c):  per part holding c (filter ranges innermost), per tap ascending, per
 *        f-block: a wave over its filters; zeropad every tap (Z's zeros included), ecoflow only
 *        the taps that reach a real dY element (ih + p - kh*d and iw + p - kw*d multiples of s,
 *        inside dY).
 *   dW  (kh, kw, f, c):  the one part holding (f, c), its one pass: per image, per X plane row
 *        pr ascending (the units' bands), the dY (zeropad: Z) row oh with oh*vs + kh*d - vp =
 *        pr, per dY^T word j ascending: a wave over the word's valid columns [k_lo, k).
 * The first wave of each part starts a new OBUF sum: WRITE for a part that writes the output,
 * ACC for a later reduction part (its DRAIN acc adds to the partial sums).
 */
#ifndef NPU_CONV_ORDER_H
#define NPU_CONV_ORDER_H

#include <stddef.h>

#include "compile/conv/conv_bwd.h"
#include "compile/conv/conv_split.h"

enum { NPU_CONV_WAVE_ADD = 0, NPU_CONV_WAVE_WRITE = 1, NPU_CONV_WAVE_ACC = 2 };

/* One wave of an output: tap (kh, kw), lanes [r0, r1) of the reduction (fwd channels, dX filters,
 * dW columns of dY row `row` of image n; zeropad dW: of the zero-inserted dY), how it starts. */
typedef struct npu_conv_wave {
    int kh, kw, r0, r1, n, row, start;
} npu_conv_wave_t;

/* Output o's waves in program order (o: fwd {b, oh, ow, f}, dX {b, ih, iw, c}, dW {kh, kw, f, c},
 * whole-layer indices): writes up to max, returns how many there are. */
size_t npu_conv_waves(const npu_conv_split_t *s, const int o[4], npu_conv_wave_t *w, size_t max);

/* The same for the fused backward (conv_bwd.h), kernel NPU_CONV_DX or NPU_CONV_DW of its one
 * program:
 *   dX (b, ih, iw, c): the ecoflow dX plan bp->dx, one part (its waves as npu_conv_waves'), WRITE.
 *   dW (kh, kw, f, c): per image b (its band's unit), per dY row oh whose X row oh*s + kh*d - p
 *        exists, per X^T word j ascending (dw_row_waves): a wave over the dY columns
 *        L*j - e + [klo, k) of tap column kw's window (tile_rows). Resident regions: one OBUF
 *        sum over the batch (WRITE, drained once); else one per image, each drained with acc
 *        into the dW^T tile that unit 0 FILLs with +0 (ACC). */
size_t npu_conv_bwd_waves(const npu_conv_bwd_plan_t *bp, int kernel, const int o[4], npu_conv_wave_t *w,
                          size_t max);

#endif
