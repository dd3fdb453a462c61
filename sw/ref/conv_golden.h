/*
 * conv_golden.h - golden models of a convolution layer (forward, input gradient dX, weight
 * gradient dW), the explicitly zero-padded backward baseline with its MAC sets, and the closed-form
 * MAC counts the compiler and the RTL counters are checked against. Kept apart from any compiler.
 *
 * Layouts and geometry: conv_layer.h. s = stride, p = pad, d = dil, OH x OW the output. Every
 * result is a sum of int16 x int16 products modulo 2^32 (int32 wrap-around; the order of summation
 * does not matter). The layer must pass npu_conv_check. Depthwise layers: the (f, c) pairs below
 * are only the pairs f == c, the weight / dW index drops f ([kh][kw][c]).
 *
 *   forward  Y[b][oh][ow][f]  = sum_{kh,kw,c} X[b][oh*s+kh*d-p][ow*s+kw*d-p][c] * Wt[kh][kw][f][c]
 *   input    dX[b][ih][iw][c] = sum over (oh, ow, kh, kw, f) with oh*s+kh*d-p = ih, ow*s+kw*d-p = iw
 *                               of Wt[kh][kw][f][c] * dY[b][oh][ow][f]          (adjoint of fwd in X)
 *   weight   dW[kh][kw][f][c] = sum_{b,oh,ow} dY[b][oh][ow][f] * X[b][oh*s+kh*d-p][ow*s+kw*d-p][c]
 * (out-of-range X is 0), so <Y, dY> = <X, dX> = <Wt, dW> for any X, Wt, dY without wrap-around.
 *
 * The dilated error plane Z (per image b and filter f), positions u, v of any sign:
 *   Z[u][v] = dY[b][u/s][v/s][f]  if u%s == 0, v%s == 0, 0 <= u/s < OH and 0 <= v/s < OW,
 *   Z[u][v] = 0 otherwise: a STRUCTURAL zero (an inner zero between two dY elements or an outer
 *             padding zero). A dY element that happens to be 0 is NOT structural.
 * DH = s(OH-1)+1, DW = s(OW-1)+1 is the extent of Z holding real elements.
 */
#ifndef NPU_CONV_GOLDEN_H
#define NPU_CONV_GOLDEN_H

#include <stdint.h>

#include "compile/conv/conv_layer.h"

/* Direct forms. Outputs are overwritten (no accumulation into the caller's values). */
void npu_conv_fwd_golden(const npu_conv_t *c, const int16_t *X, const int16_t *Wt, int32_t *Y);
/* dX by the scatter form dX[oh*s+kh*d-p][ow*s+kw*d-p][c] += Wt[kh][kw][f][c]*dY[oh][ow][f] */
void npu_conv_dx_golden(const npu_conv_t *c, const int16_t *dY, const int16_t *Wt, int32_t *dX);
/* dW[kh][kw][f][c] = sum_{b,oh,ow} dY[b][oh][ow][f] * X[b][oh*s+kh*d-p][ow*s+kw*d-p][c] */
void npu_conv_dw_golden(const npu_conv_t *c, const int16_t *X, const int16_t *dY, int32_t *dW);

/*
 * The zero-padded baseline, computed the explicit way (an independent code path; the results
 * equal the direct forms). These are exactly the MAC sets the hardware compiler emits for the
 * ZEROPAD dataflow, and the RTL's zero-operand counter must equal *zero_macs:
 *
 * dX zeropad: a stride-1 convolution of the zero-inserted (s-1 zeros between elements), zero-padded
 *   dY with the 180-degree-rotated filter (taps d apart). One MAC per
 *     dX pixel (b, ih < H, iw < W)  x  tap (kh < KH, kw < KW)  x  pair (f, c):
 *     Z[ih + p - kh*d][iw + p - kw*d][f] * Wt[kh][kw][f][c]
 *   total = batch*H*W*KH*KW*F*C (depthwise: batch*H*W*KH*KW*C),
 *   zero  = the MACs whose Z operand is a structural zero.
 *   (The explicit padded plane is Zp[u'][v'] = Z[u' - (d(KH-1) - p)][v' - (d(KW-1) - p)] of
 *   H + d(KH-1) rows and W + d(KW-1) columns, read at Zp[ih + k'h*d][iw + k'w*d] with the rotated
 *   filter Wt[KH-1-k'h][KW-1-k'w]; its top / left padding d(K-1) - p may be negative = cropped.)
 *
 * dW zeropad: a convolution of X with the dilated dY. One MAC per
 *     image b  x  dilated position (u < DH, v < DW)  x  tap (kh, kw)  x  pair (f, c):
 *     Z[u][v][f] * X[b][u + kh*d - p][v + kw*d - p][c]
 *   (X out of range reads 0 but is NOT a structural zero: only Z zeros count)
 *   total = batch*DH*DW*KH*KW*F*C, zero = batch*(DH*DW - OH*OW)*KH*KW*F*C (depthwise: C for F*C).
 *
 * *total_macs and *zero_macs are counted by the loops (either pointer may be NULL).
 */
void npu_conv_dx_zeropad_golden(const npu_conv_t *c, const int16_t *dY, const int16_t *Wt, int32_t *dX,
                                uint64_t *total_macs, uint64_t *zero_macs);
void npu_conv_dw_zeropad_golden(const npu_conv_t *c, const int16_t *X, const int16_t *dY, int32_t *dW,
                                uint64_t *total_macs, uint64_t *zero_macs);

typedef struct npu_conv_macs {
    uint64_t total, zero, useful;      /* useful = total - zero */
} npu_conv_macs_t;

/*
 * MAC counts of a kernel under a dataflow, by formula (1-D counts multiplied; no loop over pixels
 * x channels). With P = batch*F*C (depthwise batch*C) and the 1-D counts
 *   Vh = #(oh < OH, kh < KH) with 0 <= oh*s + kh*d - p < H           (Vw likewise)
 *   Uh = #(ih < H, kh < KH) with (ih + p - kh*d) % s == 0 and 0 <= (ih + p - kh*d)/s < OH
 *        (mathematical modulo and division; Uh == Vh, the same (pixel, tap) pairs seen from X)
 *   fwd, either dataflow: total = batch*OH*OW*KH*KW*F*C (depthwise *C), useful = Vh*Vw*P,
 *                         zero = MACs whose X operand is a padding position = total - useful
 *   dX zeropad:  total = batch*H*W*KH*KW*F*C, useful = Uh*Uw*P, zero = total - useful
 *   dW zeropad:  total = batch*DH*DW*KH*KW*F*C, useful = batch*OH*OW*KH*KW*F*C, zero = total - useful
 *   dX ecoflow:  total = useful = Uh*Uw*P, zero = 0
 *   dW ecoflow:  total = useful = Vh*Vw*P (taps whose X is in range), zero = 0
 * (EcoFlow computes exactly the (output pixel, tap) pairs that pair a real dY element with a real
 * X / dX element.) An illegal layer, kernel or dataflow gives all zeros.
 */
npu_conv_macs_t npu_conv_macs(const npu_conv_t *c, int kernel, int dataflow);

/* The brief's padding-element counts for an N x N error, K x K filter, stride S (brief section 2):
 *   inner = [S(N-1)+1]^2 - N^2, outer = 4(K-1)[S(N-1)+1] + 4(K-1)^2, P = S(N-1)+1+2(K-1)
 * (P x P is the padded error plane; N^2 + inner + outer = P^2). N, K, S < 1: all zeros. */
typedef struct npu_pad_counts { uint64_t inner, outer, P; } npu_pad_counts_t;
npu_pad_counts_t npu_pad_counts(int N, int K, int S);

#endif
