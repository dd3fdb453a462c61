/*
 * step_scale.h - the static fixed-point scales of a whole training step at int16
 * configurations (docs/training.md section 11). Every tensor of the step holds round(v * 2^q)
 * for its own q (its fractional bits), chosen once before training: the NPU cannot look at a
 * tensor's values between kernels to pick a scale, so the scales come from the magnitudes of
 * one calibration step of the fp32 reference (npu fit) or from nominal ones, with headroom.
 *
 * The host picks the free scales (npu_step_q_t); the plan derives the rest so that every kernel
 * is exact integer arithmetic: a GEMM's output has the sum of its operands' q, Z32 += b needs
 * b at Z32's q, a NARROW shifts by the difference of q, and each AXPBY's real scalars become
 * int16 ones with one shift (npu_step_axpby_q).
 */
#ifndef NPU_STEP_SCALE_H
#define NPU_STEP_SCALE_H

#include <stdint.h>

#define NPU_STEP_MAX_LAYERS 16

/* The free fractional bits; index l = 1..L (0 unused). */
typedef struct npu_step_q {
    int x;                             /* X16, the batch */
    int w[NPU_STEP_MAX_LAYERS + 1];    /* W16[l]; W32[l] has w + NPU_STEP_W32_EXTRA */
    int h[NPU_STEP_MAX_LAYERS + 1];    /* H16[l], l < L (at most Z32[l]'s q) */
    int dz16[NPU_STEP_MAX_LAYERS + 1]; /* dZ16[l] (at most dZ32[l]'s q) */
    int dz_top;                        /* dZ32[L]: the loss gradient the host writes */
    int vw[NPU_STEP_MAX_LAYERS + 1];   /* VW[l], the weights' velocity */
    int vb[NPU_STEP_MAX_LAYERS + 1];   /* Vb[l], the bias' velocity */
    /* a normalised convolution layer l (npu_step_range_t.normed): Z16 (at most Z32's q), gamma
     * G16 (G32 at g + NPU_STEP_W32_EXTRA), gamma Z16's VMUL T16 (t: at most z16 + g), the
     * normalised sum N in Z32 after the conv and beta Bn32 (n: a 32-bit scale, at most t + 14,
     * so that one AXPBY adds the widened T16; H16 at most n), dN16 (at most its dH's), dgamma's
     * products dN16 Z16 and their sum dG32 (pg: at most dn16 + z16), the velocities VG, VBn;
     * the conv's dZ16[l] = gamma dN16 at most dn16 + g */
    int z16[NPU_STEP_MAX_LAYERS + 1], g[NPU_STEP_MAX_LAYERS + 1], t[NPU_STEP_MAX_LAYERS + 1];
    int n[NPU_STEP_MAX_LAYERS + 1];
    int dn16[NPU_STEP_MAX_LAYERS + 1], pg[NPU_STEP_MAX_LAYERS + 1];
    int vg[NPU_STEP_MAX_LAYERS + 1], vbn[NPU_STEP_MAX_LAYERS + 1];
} npu_step_q_t;

/* W32 = W16 * 2^12: 12 more fractional bits for small updates and 16 times W16's range; the
 * ratio wd * 2^(q(dW32) - q(W32)) of the decay's AXPBY keeps more bits than at 2^16. */
#define NPU_STEP_W32_EXTRA 12

/* Largest magnitudes per tensor (index l = 1..L): the batch, W, the activations H (l < L), the
 * gradients dZ of each layer's pre-activation (a normalised layer's: of its convolution's
 * output, gamma dN), dW and db. */
typedef struct npu_step_range {
    double x, w[NPU_STEP_MAX_LAYERS + 1], h[NPU_STEP_MAX_LAYERS + 1], dz[NPU_STEP_MAX_LAYERS + 1],
        dw[NPU_STEP_MAX_LAYERS + 1], db[NPU_STEP_MAX_LAYERS + 1];
    double z_top;  /* the logits (npu_step_q_cap_sums; 0: unknown) */
    /* normalised convolution layers (normed[l] = 1; docs/training.md "Normalisation-like
     * layers"): the convolution's output Z, gamma, the normalised pre-ReLU sum N, its gradient
     * dN, dgamma, dbeta */
    int normed[NPU_STEP_MAX_LAYERS + 1];
    double zc[NPU_STEP_MAX_LAYERS + 1], gam[NPU_STEP_MAX_LAYERS + 1], n[NPU_STEP_MAX_LAYERS + 1],
        dn[NPU_STEP_MAX_LAYERS + 1], dg[NPU_STEP_MAX_LAYERS + 1], dbn[NPU_STEP_MAX_LAYERS + 1];
} npu_step_range_t;

/* The largest q with max * headroom * 2^q <= 2^(bits-1) - 1 (headroom 8 for 16-bit tensors, 64
 * for 32-bit ones: values may grow during training), in [0, 30]; max 0 (an all-zero or unseen
 * tensor) counts as 1. */
int npu_step_q16(double max);
int npu_step_q32(double max);

/* The free scales for the ranges (momentum mu: the velocities reach dW / (1 - mu)). */
void npu_step_q_pick(const npu_step_range_t *r, int layers, float mu, npu_step_q_t *q);

/* CNNs: the int32 sums over many rows (a convolution's dW and bias gradient add over every pixel
 * of the batch) keep the 32-bit tensors' headroom: dZ16[l] made coarser where q(dZ16[l]) + q(in)
 * (dW32[l]) or q(dZ16[l]) + q(W16[l]) (dZ32[l-1], db32[l-1]) would exceed the q npu_step_q32
 * gives their calibrated magnitudes (derived scales otherwise reach 31, 32: a bias gradient
 * above 0.5 wrapped and a 10-epoch run diverged). And the logits Z32[L] (q(H16[L-1]) + q(W16[L]))
 * keep npu_step_q32's headroom over the calibrated z_top: W16[L] (and W32, VW with it) coarser
 * where needed (the logits of a confident CNN outgrew q 26 and wrapped). */
void npu_step_q_cap_sums(const npu_step_range_t *r, int layers, npu_step_q_t *q);

/* Nominal ranges (tests, the estimator): |x|, |W| <= 1, |H| <= 4, every |dZ| <= 1 / batch, |dW|
 * and |db| <= 1; a normalised layer's |Z|, |N| <= 4, |gamma| <= 1, |dN| <= 1 / batch, |dgamma|,
 * |dbeta| <= 1 (normed[] all 0: the caller marks its normalised layers). */
void npu_step_range_nominal(int layers, int batch, npu_step_range_t *r);

/* d = alpha * a + beta * b in fixed point: d, a, b with fractional bits qd, qa, qb, as one
 * int16 configuration AXPBY `rs(A * a + B * b)` with shift s: A = round(alpha * 2^(s + qd - qa)),
 * B likewise, s the largest in [0, 31] that keeps both in int16. 0, or -1 when a nonzero scalar
 * rounds to 0 (the scales are too far apart). *err: the larger relative rounding error. */
int npu_step_axpby_q(double alpha, double beta, int qd, int qa, int qb, int16_t *A, int16_t *B,
                     unsigned *s, double *err);

#endif
