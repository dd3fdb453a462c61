/*
 * mlp_ref.h - the fp32 reference trainer of `npu fit`: an MLP (fully connected layers, ReLU
 * between them, softmax cross-entropy on the last), plain fp32 C, trained with SGD with momentum
 * and weight decay. It is fed the initial weights and batches the NPU trainer gets, so its loss
 * per epoch is the yardstick for the NPU's (issue 15, acceptance 3).
 *
 * Layout: layer l maps n[l] inputs to n[l+1] outputs, Y = X W + b with W row-major n[l] x n[l+1]
 * (the GEMM's B operand as the NPU stores it), b of n[l+1]. The update, per parameter tensor P
 * with gradient G and velocity V (weight decay on W only, not on b):
 *     V <- mu V + G + wd P ;  P <- P - lr V
 */
#ifndef NPU_REF_MLP_REF_H
#define NPU_REF_MLP_REF_H

#include <stdint.h>

#define NPU_MLP_MAX_LAYERS 8 /* weight layers */

typedef struct npu_mlp_shape {
    int layers;                    /* weight layers L */
    int n[NPU_MLP_MAX_LAYERS + 1]; /* widths n[0] (inputs) .. n[L] (classes) */
} npu_mlp_shape_t;

typedef struct npu_sgd {
    float lr, momentum, wd;
} npu_sgd_t;

/* C (M x N) = op(A) op(B), dense row-major; op(A) is A (M x K) or, with transA, A^T of a K x M
 * A; op(B) is B (K x N) or B^T of an N x K B. Returns 0, or -1 when the GEMM failed (the step
 * then fails). The reference computes them in fp32 on the host (npu_mlp_gemm_f32); `npu fit
 * --engine npu` runs them on the NPU. */
typedef int (*npu_mlp_gemm_fn)(void *ctx, int M, int N, int K, const float *A, int transA,
                               const float *B, int transB, float *C);
int npu_mlp_gemm_f32(void *ctx, int M, int N, int K, const float *A, int transA, const float *B,
                     int transB, float *C);

typedef struct npu_mlp_ref {
    npu_mlp_shape_t shape;
    npu_mlp_gemm_fn gemm; /* npu_mlp_gemm_f32 unless set after npu_mlp_ref_new */
    void *gemm_ctx;
    int failed;           /* a GEMM failed: the results are not to be trusted */
    float *w[NPU_MLP_MAX_LAYERS], *b[NPU_MLP_MAX_LAYERS];   /* parameters */
    float *vw[NPU_MLP_MAX_LAYERS], *vb[NPU_MLP_MAX_LAYERS]; /* velocities */
    int batch;
    float *act[NPU_MLP_MAX_LAYERS + 1]; /* act[0] the batch, act[l+1] layer l's output (post-ReLU) */
    float *grad[NPU_MLP_MAX_LAYERS + 1]; /* dL/d(pre-activation) of each layer's output */
    float *gw[NPU_MLP_MAX_LAYERS], *gb[NPU_MLP_MAX_LAYERS];
} npu_mlp_ref_t;

/* "64,128,10" -> shape; 0, or -1 (fewer than two widths, a width outside 1..65535, too many). */
int npu_mlp_shape_parse(const char *spec, npu_mlp_shape_t *s);
/* Allocates the model for batches of `batch` rows; parameters from w0/b0 (as npu_mlp_init
 * makes them), velocities 0. 0 or -1 (out of memory). */
int npu_mlp_ref_new(npu_mlp_ref_t *m, const npu_mlp_shape_t *s, int batch, float *const *w0,
                    float *const *b0);
void npu_mlp_ref_free(npu_mlp_ref_t *m);

/* The shared initial parameters: W Glorot-uniform from seed, each value rounded to the nearest
 * bf16 (so the bf16 NPU starts from the same numbers), b = 0. w[l], b[l] are allocated here;
 * free them with npu_mlp_params_free. 0 or -1. */
int npu_mlp_init(const npu_mlp_shape_t *s, uint64_t seed, float **w, float **b);
void npu_mlp_params_free(const npu_mlp_shape_t *s, float **w, float **b);

/* Mean softmax cross-entropy of logits (rows x classes) against labels; dlogits (may be NULL)
 * gets its gradient (softmax - onehot) / rows. Shared with the NPU trainer, whose host computes
 * exactly this from the NPU's logits. Returns the loss. */
double npu_softmax_xent(const float *logits, const uint8_t *labels, int rows, int classes,
                        float *dlogits);

/* Forward of `rows` <= batch rows of x (rows x n[0]); the logits are act[L]. */
void npu_mlp_ref_forward(npu_mlp_ref_t *m, const float *x, int rows);
/* One SGD step on a batch (batch rows): forward, loss, backward, update. Returns the loss. */
double npu_mlp_ref_step(npu_mlp_ref_t *m, const float *x, const uint8_t *labels, const npu_sgd_t *o);
/* Correct predictions (argmax of the logits, first maximum on ties) among `rows` samples. */
int npu_mlp_ref_correct(npu_mlp_ref_t *m, const float *x, const uint8_t *labels, int rows);

#endif
