/*
 * conv_layer.h - one 2-D convolution layer: shape, legality, one-line text form, CLI parser.
 *
 * Tensor layouts (dense, row-major in the index order written, no pitches):
 *   X   input           int16 [batch][H][W][C]        (NHWC)
 *   Y   output          int32 [batch][OH][OW][F]
 *   dY  output gradient int16 [batch][OH][OW][F]
 *   Wt  weights         int16 [KH][KW][F][C]          depthwise: int16 [KH][KW][C]
 *   dX  input gradient  int32 [batch][H][W][C]
 *   dW  weight gradient int32 [KH][KW][F][C]          depthwise: int32 [KH][KW][C]  (summed over batch)
 * (depthwise layers have F == C: the channel index of Y / dY is the input channel.)
 *
 * Geometry: OH = floor((H + 2p - d(KH-1) - 1) / s) + 1, OW likewise. Output pixel (oh, ow), tap
 * (kh, kw) reads input pixel (ih, iw) = (oh*s + kh*d - p, ow*s + kw*d - p); an input position out
 * of [0,H) x [0,W) is a padding zero.
 *
 * Arithmetic (golden models, conv_golden.h): int16 x int16 products summed modulo 2^32 (int32
 * two's-complement wrap-around), as sw/ref/golden.c.
 */
#ifndef NPU_CONV_LAYER_H
#define NPU_CONV_LAYER_H

#include <stddef.h>

#define NPU_CONV_MAX_DIM 4096 /* every field of a legal layer is <= this */

/* The kernels of a layer and the dataflows of its backward kernels (docs/conv.md): names shared
 * by the planner, the emitter, the golden models and the drivers. */
enum { NPU_CONV_FWD = 0, NPU_CONV_DX = 1, NPU_CONV_DW = 2 };          /* kernels fwd/dx/dw */
enum { NPU_CONV_ZEROPAD = 0, NPU_CONV_ECOFLOW = 1 };                 /* backward dataflows */

typedef struct npu_conv {
    int batch;          /* images N */
    int C, H, W;        /* input channels, height, width */
    int F;              /* output channels (filters); depthwise: F == C */
    int KH, KW;         /* kernel height, width */
    int stride;         /* s >= 1, both dims */
    int pad;            /* zero padding p >= 0 on every side */
    int dil;            /* dilation d >= 1 */
    int depthwise;      /* 1: one filter per channel (groups = C), F must equal C */
} npu_conv_t;

/* Output height / width: (H + 2p - d(KH-1) - 1)/s + 1, or 0 when the dilated kernel does not fit
 * the padded input or s < 1 (no division by zero, no overflow for any int fields). */
int npu_conv_oh(const npu_conv_t *c);
int npu_conv_ow(const npu_conv_t *c);

/* 0 if the layer is legal (all sizes >= 1, pad >= 0, every field <= NPU_CONV_MAX_DIM, output
 * >= 1x1, depthwise is 0 or 1, depthwise => F == C); else -1 and a one-line reason in msg (msg
 * may be NULL or n == 0). */
int npu_conv_check(const npu_conv_t *c, char *msg, size_t n);

/* "C3x57x57 F3 k3x3 s2 p0 d1" (C<channels>x<H>x<W>), then " dw" for depthwise and " b<batch>"
 * when batch != 1. Returns what snprintf returns (the untruncated length). */
int npu_conv_str(const npu_conv_t *c, char *buf, size_t n);

/* Parse "C,H,W,F,KH,KW,stride,pad,dil[,dw]" (the CLI's --conv syntax): decimal integers separated
 * by commas (blanks around a field allowed); the optional 10th field is 0, 1 or the word "dw".
 * batch is set to 1 (the caller sets its own). The result must pass npu_conv_check. Returns 0, or
 * -1 with a one-line reason in msg and *c unchanged. */
int npu_conv_parse(const char *s, npu_conv_t *c, char *msg, size_t n);

/* Element counts of the dense tensors of a legal layer (layouts above). */
size_t npu_conv_x_elems(const npu_conv_t *c);  /* X, dX */
size_t npu_conv_y_elems(const npu_conv_t *c);  /* Y, dY */
size_t npu_conv_w_elems(const npu_conv_t *c);  /* Wt, dW: KH*KW*F*C, depthwise KH*KW*C */

#endif
