/*
 * net_ref.h - the fp32 reference trainer of `npu fit`: a network of convolution and fully
 * connected layers (ReLU after each but the last, softmax cross-entropy on the last; a layer may
 * add an earlier activation before its ReLU, a residual connection, npu_net_shape_t.res; a
 * convolution may be followed by a normalisation-like per-channel scale and shift), plain fp32
 * C, trained with SGD with momentum and weight decay. It is fed the initial weights and batches
 * the NPU trainer gets, so its loss per epoch is the yardstick for the NPU's (issue 15,
 * acceptance 3 and 4). Its GEMMs and convolutions go through hooks: fp32 host loops by default,
 * the NPU in `npu fit --engine npu` (run/fit.c).
 *
 * Layouts (those of the NPU's kernels): activations NHWC, one sample after the other (a fully
 * connected layer reads a sample's h*w*c values in that order); a fully connected layer's W is
 * n_in x f row-major (Y = X W + b); a convolution's W is [ky][kx][f][c] (KH x KW x F x C) and
 * Y[b][oy][ox][f] = sum over ky, kx, c of X[b][oy*s - p + ky][ox*s - p + kx][c] W[ky][kx][f][c]
 * (+ b[f]), zero outside the image. The update, per parameter tensor P with gradient G and
 * velocity V (weight decay on W only, not on b):
 *     V <- mu V + G + wd P ;  P <- P - lr V
 */
#ifndef NPU_REF_NET_REF_H
#define NPU_REF_NET_REF_H

#include <stddef.h>
#include <stdint.h>

#define NPU_NET_MAX_LAYERS 64 /* weight layers */

enum { NPU_NET_FC = 0, NPU_NET_CONV = 1 };
enum { NPU_NET_FWD = 0, NPU_NET_DX = 1, NPU_NET_DW = 2 }; /* the conv hook's kernels */

typedef struct npu_net_layer {
    int kind;       /* NPU_NET_FC or NPU_NET_CONV */
    int h, w, c;    /* input (fully connected: 1 x 1 x inputs) */
    int f;          /* outputs per position: filters, or the layer's outputs */
    int k, s, p;    /* kernel side, stride, padding (fully connected: 1, 1, 0) */
    int oh, ow;     /* output height and width (fully connected: 1, 1) */
    int depthwise;  /* a depthwise convolution (f = c, one k x k filter per channel): from SCALE-Sim
                       topologies, for the estimator only (the reference trainer has none) */
} npu_net_layer_t;

typedef struct npu_net_shape {
    int layers;
    npu_net_layer_t l[NPU_NET_MAX_LAYERS];
    int res[NPU_NET_MAX_LAYERS]; /* layer l's residual connection (npu_net_skip): 0 none; r > 0:
                                    activation r - 1 (0 the network's input, j the output of layer
                                    j counted from 1, of layer l's output shape) is added to layer
                                    l's output before its ReLU; in backward its gradient is added
                                    to activation r - 1's before that one's ReLU mask. Bit
                                    NPU_NET_NORM: the layer is normalised (npu_net_normed) */
} npu_net_shape_t;

/* A normalisation-like layer after convolution layer l (spec token cFn, res[l] | NPU_NET_NORM):
 * per output channel f a scale gamma[f] and a shift beta[f] (initially 1 and 0), the conv's own
 * bias unused (the shift takes its place; it stays 0):
 *     Z = conv(X);  N = gamma . Z + beta (+ the residual connection);  Y = relu(N)
 * backward, with dN = dY masked by N > 0 and sums over the samples and pixels:
 *     dbeta = sum dN;  dgamma = sum dN . Z;  dZ = gamma . dN (the conv's dY)
 * gamma and beta are updated like a bias (momentum, no weight decay). The bit rides in res so
 * that every interface that carries a CNN's connections (the step plan, its runner, the
 * estimator, the sweeps) carries it too. */
#define NPU_NET_NORM 0x10000
static inline int npu_net_skip(int r) { return r & 0xFFFF; }
static inline int npu_net_normed(int r) { return (r & NPU_NET_NORM) != 0; }

static inline size_t npu_net_in(const npu_net_layer_t *l) { return (size_t)l->h * l->w * l->c; }
static inline size_t npu_net_out(const npu_net_layer_t *l) { return (size_t)l->oh * l->ow * l->f; }
static inline size_t npu_net_params(const npu_net_layer_t *l)
{
    return (size_t)l->k * l->k * l->f * (l->depthwise ? 1 : l->c);
}

/* A model spec for inputs of h x w x c. "mlp:D0,D1,..,DL": fully connected layers (D0 must be
 * h*w*c); "cnn:L1,L2,..": layers cF[kK][sS][pP] (a K x K convolution with F filters, stride S,
 * padding P; defaults k3, s1, p = K/2) and fcN (fully connected, N outputs; every layer after
 * the first fc is fc). A cnn layer may end in +J, a residual connection: the output of layer J
 * (counted from 1; +0 the network's input) is added to this layer's output before its ReLU, e.g.
 * "cnn:c16,c16,c16+1,fc10" (layer 3 adds layer 1's output: a block of two convolutions); J must
 * come before the layer and its output have the layer's output shape (h x w x channels).
 * A convolution token may carry n before +J (cF[kK][sS][pP][n][+J]): the normalisation-like
 * layer after it (NPU_NET_NORM), e.g. "cnn:c8n,c16s2,fc10" (conv -> norm -> ReLU).
 * 0, or -1 with the reason in why. */
int npu_net_parse(const char *spec, int h, int w, int c, npu_net_shape_t *s, char *why, size_t n);
/* "64-128-10", "c16-c32s2-fc10", "c16k3s1-c16k3s1+1": the shape in one short word (reports). */
void npu_net_describe(const npu_net_shape_t *s, char *buf, size_t n);
/* The first layer (from 0) with a residual connection, or -1. */
int npu_net_residual(const npu_net_shape_t *s);

typedef struct npu_sgd {
    float lr, momentum, wd;
} npu_sgd_t;

/* C (M x N) = op(A) op(B), dense row-major; op(A) is A (M x K) or, with transA, A^T of a K x M
 * A; op(B) is B (K x N) or B^T of an N x K B. Returns 0, or -1 when the GEMM failed (the step
 * then fails). */
typedef int (*npu_net_gemm_fn)(void *ctx, int M, int N, int K, const float *A, int transA,
                               const float *B, int transB, float *C);
int npu_net_gemm_f32(void *ctx, int M, int N, int K, const float *A, int transA, const float *B,
                     int transB, float *C);
/* One convolution kernel of layer L over `batch` samples: NPU_NET_FWD out = Y from x and w (no
 * bias); NPU_NET_DX out = dX from dy and w; NPU_NET_DW out = dW ([ky][kx][f][c]) from x and dy.
 * Inputs a kernel does not read are NULL. 0, or -1 when it failed. */
typedef int (*npu_net_conv_fn)(void *ctx, const npu_net_layer_t *L, int batch, int kernel,
                               const float *x, const float *w, const float *dy, float *out);
int npu_net_conv_f32(void *ctx, const npu_net_layer_t *L, int batch, int kernel, const float *x,
                     const float *w, const float *dy, float *out);

/* A convolution layer's backward in one call: dx = dX from dy and w, dw = dW from x and dy (the
 * NPU's fused kernel reads dY once). 0, or -1 when it failed. */
typedef int (*npu_net_conv_bwd_fn)(void *ctx, const npu_net_layer_t *L, int batch, const float *x,
                                   const float *w, const float *dy, float *dx, float *dw);

typedef struct npu_net_ref {
    npu_net_shape_t shape;
    npu_net_gemm_fn gemm; /* npu_net_gemm_f32 unless set after npu_net_ref_new */
    npu_net_conv_fn conv; /* npu_net_conv_f32 likewise */
    npu_net_conv_bwd_fn conv_bwd; /* NULL (default): conv's DW and DX calls; set: one call for
                                     both in every convolution layer but the first */
    void *hook_ctx;
    int failed;           /* a hook failed: the results are not to be trusted */
    float *w[NPU_NET_MAX_LAYERS], *b[NPU_NET_MAX_LAYERS];   /* parameters */
    float *vw[NPU_NET_MAX_LAYERS], *vb[NPU_NET_MAX_LAYERS]; /* velocities */
    int batch;
    float *act[NPU_NET_MAX_LAYERS + 1];  /* act[0] the batch, act[l+1] layer l's output (post-ReLU) */
    float *grad[NPU_NET_MAX_LAYERS + 1]; /* dL/d(pre-activation) of each layer's output */
    float *gw[NPU_NET_MAX_LAYERS], *gb[NPU_NET_MAX_LAYERS];
    /* normalised layers (NPU_NET_NORM; NULL elsewhere): gamma, beta, their velocities and
     * gradients (f each), the conv's output Z and its gradient dZ (batch x outputs) */
    float *gam[NPU_NET_MAX_LAYERS], *bet[NPU_NET_MAX_LAYERS], *vgam[NPU_NET_MAX_LAYERS],
        *vbet[NPU_NET_MAX_LAYERS], *ggam[NPU_NET_MAX_LAYERS], *gbet[NPU_NET_MAX_LAYERS],
        *zc[NPU_NET_MAX_LAYERS], *dzc[NPU_NET_MAX_LAYERS];
} npu_net_ref_t;

/* Allocates the model for batches of `batch` samples; parameters from w0/b0 (as npu_net_init
 * makes them), velocities 0. 0 or -1 (out of memory). */
int npu_net_ref_new(npu_net_ref_t *m, const npu_net_shape_t *s, int batch, float *const *w0,
                    float *const *b0);
void npu_net_ref_free(npu_net_ref_t *m);

/* The shared initial parameters: W Glorot-uniform (fan-in k*k*c, fan-out k*k*f) from seed, each
 * value rounded to the nearest bf16 (so the bf16 NPU starts from the same numbers), b = 0.
 * w[l], b[l] are allocated here; free them with npu_net_params_free. 0 or -1. */
int npu_net_init(const npu_net_shape_t *s, uint64_t seed, float **w, float **b);
void npu_net_params_free(const npu_net_shape_t *s, float **w, float **b);

/* Mean softmax cross-entropy of logits (rows x classes) against labels; dlogits (may be NULL)
 * gets its gradient (softmax - onehot) / rows. Returns the loss. */
double npu_softmax_xent(const float *logits, const uint8_t *labels, int rows, int classes,
                        float *dlogits);

/* Forward of `rows` <= batch samples of x; the logits are act[L]. */
void npu_net_ref_forward(npu_net_ref_t *m, const float *x, int rows);
/* One SGD step on a batch (batch rows): forward, loss, backward, update. Returns the loss. */
double npu_net_ref_step(npu_net_ref_t *m, const float *x, const uint8_t *labels, const npu_sgd_t *o);
/* Correct predictions (argmax of the logits, first maximum on ties) among `rows` samples. */
int npu_net_ref_correct(npu_net_ref_t *m, const float *x, const uint8_t *labels, int rows);

#endif
