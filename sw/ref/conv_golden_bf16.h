/*
 * conv_golden_bf16.h - the order-matched bf16 golden model of a convolution kernel (fwd, dX, dW;
 * issue 15; docs/conv.md "bf16", docs/datapath.md section 6). Kept apart from the compiler: the
 * order comes in through a callback, the wave list of each output, which the caller takes from
 * the program's plan (compile/conv/conv_order.h for conv programs).
 *
 * Tensors are bf16 bit patterns in the layouts of conv_golden.h (X [b][H][W][C], Wt
 * [kh][kw][f][c] or depthwise [kh][kw][c], dY [b][OH][OW][F]); results are fp32 bit patterns in
 * its output layouts (Y [b][OH][OW][F], dX [b][H][W][C], dW [kh][kw][f][c], depthwise dW
 * [kh][kw][c]). Arithmetic: ref/bf16.h (exact products, fp32 RNE adds, FTZ, one NaN).
 *
 * An output's value, from its wave list in order:
 *   - a wave is one psum chain, +0 then + a(t) x b(t) for t = r0 .. r1-1 ascending
 *     (npu_bf16_mac), the lanes of one stationary tile from the top PE down;
 *   - start = NPU_CW_ADD: the chain is added (fp32) to the OBUF sum of the waves before it;
 *     NPU_CW_WRITE: it begins a new OBUF sum whose DRAIN writes the output;
 *     NPU_CW_ACC: it begins a new OBUF sum whose DRAIN acc adds it to the output's value so far
 *     (the partial sums of an earlier part, npu_fp32_add);
 *   - an output without waves is +0 (the FILL of its tile, or of an unreached dW tap).
 * The chain's terms (out-of-range or structurally zero elements read +0, as the hardware's
 * zero-padded planes, zero-inserted Z planes and FILLs hold them):
 *   fwd (b,oh,ow,f)  t = channel c:  X[b][oh*s+kh*d-p][ow*s+kw*d-p][c] x Wt[kh][kw][f][c]
 *   dX  (b,ih,iw,c)  t = filter f:   Z(ih+p-kh*d, iw+p-kw*d)[f] x Wt[kh][kw][f][c]
 *                    (Z: dY[u/s][v/s] when s divides both and they are in range, else +0)
 *   dW  (kh,kw,f,c)  t = a column of dY row `row` of image n:
 *        ecoflow:  dY[n][row][t][f] x X[n][row*s+kh*d-p][t*s+kw*d-p][c]
 *        zeropad:  Z(row, t)[f] x X[n][row+kh*d-p][t+kw*d-p][c]  (rows and columns of Z)
 * Depthwise: fwd and dX multiply the diagonal blocks, so a lane t != c pairs its element with a
 * +0 weight (its product is +-0 and adds like the hardware's); dW takes f = c of the dense form.
 * Lanes outside [r0, r1) are left out: they add +0, as in golden_bf16.h (its -0 note applies).
 */
#ifndef NPU_CONV_GOLDEN_BF16_H
#define NPU_CONV_GOLDEN_BF16_H

#include <stddef.h>
#include <stdint.h>

#include "compile/conv/conv_layer.h"
#include "ref/golden_bf16.h" /* NPU_CW_*: how a wave starts */

/* One wave of an output's sum: the weight tap, the chain's lanes [r0, r1), dW's image n and dY
 * (zeropad: Z) row, and how it starts (NPU_CW_*). */
typedef struct npu_cwave {
    int kh, kw, r0, r1, n, row, start;
} npu_cwave_t;

/* The wave list of output o (fwd {b, oh, ow, f}, dX {b, ih, iw, c}, dW {kh, kw, f, c}; depthwise
 * dW f = c): writes up to max waves in order and returns their number (more than max: call again
 * with room for them). */
typedef size_t (*npu_cwaves_fn)(void *ctx, const int o[4], npu_cwave_t *w, size_t max);

/* kernel NPU_CONV_FWD / DX / DW; zeropad: dW's waves are over Z rows and columns (the zeropad
 * dataflow). Returns 0, or -1 when a wave list starts without WRITE / ACC, a range leaves the
 * tensor, or memory runs out. */
int npu_conv_golden_bf16(const npu_conv_t *c, int kernel, int zeropad, const int16_t *X,
                         const int16_t *Wt, const int16_t *dY, int32_t *out, npu_cwaves_fn fn,
                         void *ctx);

#endif
