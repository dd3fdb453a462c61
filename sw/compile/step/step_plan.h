/*
 * step_plan.h - a whole training step of an MLP (or a CNN: npu_step_plan_cnn, step_plan_cnn.c)
 * as NPU kernels over one DRAM image (issue 15,
 * docs/training.md "Whole iterations on the NPU"): the DRAM layout of every tensor and the
 * ordered kernels, GEMMs and vector kernels (vkern.h), that run forward, backward and the SGD
 * update with every tensor staying in DRAM between them. The host writes the batch (X16),
 * reads the logits (Z32 of the last layer) and writes their gradient (dZ32 of the last layer);
 * nothing else crosses. A pure function of the configuration, the widths, the batch, the
 * optimizer's scalars and, at int16 configurations, the tensors' static fixed-point scales
 * (step_scale.h): there every tensor holds round(v * 2^q), the same kernels run in integer
 * arithmetic, the narrowings shift by the difference of q and the scalars are int16 with a shift.
 *
 * Per layer l (1..L; K = d[l-1] inputs, N = d[l] outputs, B the batch; fp32 = 32-bit, bf16 =
 * 16-bit elements; H16[0] is X16):
 *   fwd  GEMM  Z32[l] = H16[l-1] . W16[l]                      (B x N, fp32)
 *        VEC   Z32[l] += b[l];  l < L: H16[l] = relu(bf16(Z32[l]))  (= bf16(relu(Z32[l])))
 *   -- host: loss and dZ32[L] from the logits Z32[L] --
 *   bwd  VEC   dZ16[l] = bf16(dZ32[l]); db = sum over rows of dZ32[l];
 *              vb = mu vb + db; b -= lr vb                     (the bias update, no decay)
 *        GEMM  dW32[l] = H16[l-1]^T . dZ16[l]                   (K x N)
 *        GEMM  dH32 = dZ16[l] . W16[l]^T            (l > 1)    (B x K)
 *        VEC   dZ32[l-1] = relu_bwd(dH32, Z32[l-1]) (l > 1)
 *        VEC   t = wd W32 + dW32; V = mu V + t; W32 = W32 - lr V; W16[l] = bf16(W32)
 * The update of layer l comes after its dX GEMM, which reads the old W16[l].
 */
#ifndef NPU_STEP_PLAN_H
#define NPU_STEP_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "compile/conv/conv_layer.h"
#include "compile/conv/conv_plan.h"
#include "compile/gemm/gemm_emit.h"
#include "compile/step/step_scale.h"
#include "compile/step/vkern.h"
#include "hw/npu_cfg.h"
#define NPU_STEP_MAX_TENSORS (1 + 21 * NPU_STEP_MAX_LAYERS) /* 12 a layer, 9 more normalised */

/* Kernel kinds: GEMM, vector kernel, and for CNNs (step_plan_cnn.c) a convolution's forward, its
 * fused backward (dX and dW^T reading dY once, compile/conv/conv_bwd.h) and a transpose of 16-bit
 * matrices by DMA (the updated W16^T into the layout the conv kernels read, vkern.h). */
enum { NPU_SK_GEMM = 0, NPU_SK_VEC = 1, NPU_SK_CONV_FWD = 2, NPU_SK_CONV_BWD = 3, NPU_SK_XPOSE = 4 };
enum { NPU_SK_FWD = 0, NPU_SK_BWD = 1, NPU_SK_UPDATE = 2 };

/* The step engine's convolutions keep their DRAM pixel rows padded to whole beats: its vector
 * kernels walk the NHWC tensors a pixel row per beat (conv_plan.h "DRAM layouts"). */
#define NPU_STEP_CONV_OPTS (&(const npu_conv_plan_opts_t){.padded = 1})

typedef struct npu_step_gemm {
    int M, N, K;
    npu_gemm_args_t args; /* addresses, dense pitches, transposes, tags, policy */
} npu_step_gemm_t;

/* A convolution kernel: the layer and its tensors' DRAM addresses (fwd: x, w -> y; bwd: x, w,
 * dy -> dx, dwt), in the layouts of compile/conv (pixel rows padded to beats). no_dx: a bwd
 * without dX (the first layer: nobody reads the gradient of the network's input; dx unused),
 * the fused backward's program from npu_conv_bwd_drop_dx. */
typedef struct npu_step_conv {
    npu_conv_t c;
    uint32_t x, w, y, dy, dx, dwt;
    int no_dx;
    unsigned spm_limit;  /* residency (step_res.h): its buffers below this SPM word, planned on
                            the banks below it; 0: the whole SPM */
    int res_y;           /* residency, fwd: Y drained into its resident rows at word spm_y,
                            stride_y words a pixel, not stored (conv_split.h npu_conv_split_res_out) */
    unsigned spm_y, stride_y;
    int res_x;           /* residency: X read from its resident rows at word spm_x, stride_x words
                            a pixel, not loaded; fwd: copied into the bands (conv_split.h
                            npu_conv_split_res_in); bwd: X^T made by LOAD_SPMs of the rows
                            (conv_bwd.h npu_conv_bwd_res_x) */
    unsigned spm_x, stride_x;
    int res_dy;          /* residency, bwd: dY read in place from its resident rows at word spm_dy,
                            stride_dy words a pixel, not loaded (conv_bwd.h npu_conv_bwd_res_dy) */
    unsigned spm_dy, stride_dy;
    int res_dx;          /* residency, bwd: dX drained into its resident rows at word spm_dx,
                            stride_dx words a pixel, not stored (conv_bwd.h npu_conv_bwd_res_dx) */
    unsigned spm_dx, stride_dx;
} npu_step_conv_t;

typedef struct npu_step_kernel {
    int kind, phase, layer; /* NPU_SK_*, layer 1..L */
    char name[48];          /* "fwd L1 gemm", "bwd L2 relu_bwd" */
    npu_step_gemm_t g;      /* NPU_SK_GEMM */
    npu_vkern_t v;          /* NPU_SK_VEC */
    npu_step_conv_t cv;     /* NPU_SK_CONV_FWD, NPU_SK_CONV_BWD */
    npu_vk_xpose_t xp;      /* NPU_SK_XPOSE */
} npu_step_kernel_t;

typedef struct npu_step_tensor {
    char name[16];   /* "W16[1]" */
    uint32_t dram;
    uint64_t bytes;
    unsigned width;  /* 16 or 32 */
    int rows, cols;
    unsigned pitch;  /* DRAM bytes from row to row; 0: dense (cols * width / 8) */
    int q;           /* int16 configurations: fractional bits (v = element / 2^q); bf16: 0 */
} npu_step_tensor_t;

/* Indices into npu_step_plan_t.t of each layer's tensors (x16: the batch). */
/* A convolution layer (step_plan_cnn.c): W32, VW and dW32 are [KH][KW][C] rows of F (dW^T, the
 * fused backward's layout), W16T the same in 16 bits, W16 [KH][KW][F] rows of C (the conv
 * kernels'); Z32, H16, dZ16 rows of pixels; dh32 the fused backward's dX (pixels of C; none in
 * the first layer, whose backward computes no dX); dz32 none (the gradient lives in the SPM only);
 * a normalised one has no bias: b32, vb, db32 -1 (beta, npu_step_norm_t, takes its place). */
typedef struct npu_step_lt {
    int w16, w32, vw, b32, vb, z32, h16, dz32, dz16, dh32, dw32, db32;
    int w16t;                    /* a convolution layer: W16^T; else -1 */
} npu_step_lt_t;

/* A normalised convolution layer's own tensors (step_plan_cnn.c; ref/net_ref.h NPU_NET_NORM):
 * Z16 the conv's output in 16 bits (dgamma's operand), dN16 the gradient at the normalised
 * output (the conv's dZ16 is gamma dN16), gamma G32 / G16 / VG, beta Bn32 / VBn, the gradients
 * dG32, dBn32 (one row of F each). on = 0: the layer has none. */
typedef struct npu_step_norm {
    int on;
    int z16, dn16, g32, g16, vg, bn32, vbn, dg32, dbn32;
} npu_step_norm_t;

typedef struct npu_step_plan {
    int layers, batch, dims[NPU_STEP_MAX_LAYERS + 1]; /* dims: each layer's outputs per sample */
    int n_conv;                  /* CNNs: layers 1..n_conv are convolutions (conv[l]), then FC */
    int res[NPU_STEP_MAX_LAYERS + 1]; /* CNNs: convolution layer l's residual connection, 0 none;
                                    r > 0: activation r - 1 (0 X16, j H16[j]) added before its ReLU */
    npu_conv_t conv[NPU_STEP_MAX_LAYERS + 1];
    uint32_t lr, mu, wd;         /* fp32 bit patterns */
    int int16;                   /* an int16 configuration: fixed point, scales q */
    npu_step_q_t q;              /* int16: the free scales the plan was made with */
    double scalar_err;           /* int16: the largest relative rounding of lr, mu, wd, 1 */
    char err[160];               /* while planning: the first shift or scalar that does not fit */
    int nt;
    npu_step_tensor_t t[NPU_STEP_MAX_TENSORS];
    int x16;                     /* the batch: B x d[0] bf16 */
    npu_step_lt_t l[NPU_STEP_MAX_LAYERS + 1]; /* [1..L] */
    npu_step_norm_t nrm[NPU_STEP_MAX_LAYERS + 1]; /* [1..n_conv]: normalised convolutions */
    int nk, n_fwd;               /* kernels; the first n_fwd are the forward pass */
    npu_step_kernel_t *k;        /* owned: npu_step_plan_free */
    uint64_t base, end;          /* DRAM bytes [base, end) hold the tensors */
    uint64_t align;              /* each tensor starts at a multiple of it (0: of the word; a CNN's:
                                    of the DRAM beat, where the conv byte model counts beats from) */
} npu_step_plan_t;

/* The step of an MLP d[0] -> d[1] -> ... -> d[layers] (ReLU between layers, none after the
 * last) for batches of `batch`, tensors from DRAM byte `base` on (SPM-word-aligned), GEMMs under
 * policy `modes` (NPU_EMIT_*); at int16 configurations with the free scales q (NULL: those of
 * npu_step_range_nominal). 0, or -1 with the reason (too many layers, a width or batch out of
 * range, scales whose shifts or scalars do not fit the instructions, out of memory). */
int npu_step_plan_mlp_q(const npu_cfg_t *cfg, const int *dims, int layers, int batch, float lr,
                        float mu, float wd, int modes, const npu_step_q_t *q, uint64_t base,
                        npu_step_plan_t *p, char *why, size_t n);
/* npu_step_plan_mlp_q with the nominal scales. */
int npu_step_plan_mlp(const npu_cfg_t *cfg, const int *dims, int layers, int batch, float lr,
                      float mu, float wd, int modes, uint64_t base, npu_step_plan_t *p, char *why,
                      size_t n);
void npu_step_plan_free(npu_step_plan_t *p);

/* The tensor a name like "W16[1]" or "X16" denotes, -1 if none. */
int npu_step_tensor_find(const npu_step_plan_t *p, const char *name);
/* A tensor's DRAM pitch: its pitch, or its row bytes when dense. */
unsigned npu_step_tensor_pitch(const npu_step_tensor_t *t);

/* The step of a CNN (step_plan_cnn.c): n_conv convolution layers conv[0..)
 * (batch = the step's, each one's C, H, W the previous one's F, OH, OW), then fully connected
 * layers fc[0] -> fc[1] -> .. -> fc[n_fc] (fc[0] = the last convolution's OH * OW * F, flattened
 * NHWC), ReLU after every layer but the last. Per convolution layer l:
 *   fwd  CONV  Z32 = conv(H16[l-1], W16)           (pixel rows of F, padded to beats)
 *        VEC   Z32 += b; H16 = relu(bf16(Z32))      (the next convolution's X layout, or dense)
 *   bwd  VEC   dZ = relu_bwd(dH, Z32); dZ16 = bf16(dZ); db = sum over pixels of dZ; vb, b
 *              (dH: the next layer's dX: the FC head's dH32 or the next convolution's dX32)
 *        CONV  dX32, dW32 (dW^T) = the fused backward of (H16[l-1], W16, dZ16)
 *        VEC   the SGD update of W32 (dW^T layout), W16T = bf16(W32)
 *        XPOSE W16 = W16T transposed per tap
 * The fully connected layers as in the MLP plan. At int16 configurations every tensor in fixed
 * point with the scales q (NULL: the nominal ones) as in the MLP plan: a convolution's output at
 * the sum of its operands' q, dX32 at dZ16's + W16's, dW32 at H16[l-1]'s + dZ16's, the
 * activation gradient (in the SPM) and db at the dH's. 0, or -1 with the reason. */
int npu_step_plan_cnn(const npu_cfg_t *cfg, const npu_conv_t *conv, int n_conv, const int *fc,
                      int n_fc, int batch, float lr, float mu, float wd, int modes,
                      const npu_step_q_t *q, uint64_t base, npu_step_plan_t *p, char *why, size_t n);
/* The same with residual blocks: res[i] (NULL: none) is convolution layer i + 1's connection in
 * npu_net_shape_t.res's terms (0 none; r > 0: activation r - 1, 0 the batch, j the output of
 * convolution layer j < i + 1, of the layer's output shape). Layer l = i + 1 with one:
 *   fwd  VEC   Z32 += b; Z32 += widen(S); H16 = relu(bf16(Z32))      (S = X16 or H16[j])
 *   bwd  layer j's relu_grad_bias (j >= 1) adds widen(dZ16[l]), the skip's gradient, to its dH
 *        before the mask (one skip's gradient per layer: NPU_STEP_MAX_SKIPS)
 * The adds are AXPBY(1, 1): fp32 at bf16 configurations, int16 scalars with a shift between the
 * tensors' scales at int16 ones. res[i] | NPU_NET_NORM (ref/net_ref.h): convolution layer l is
 * normalised (it has no bias: beta takes its place), its activation kernels become
 *   fwd  VEC   Z16 = bf16(Z32); Z32 = widen(VMUL(Z16, G16)) + Bn32 (+ widen(S)); H16 = relu(bf16(Z32))
 *   bwd  VEC   dN = relu_bwd(dH, Z32) (+ the skip's gradient first); dN16 = bf16(dN);
 *              dBn = sum dN; VBn, Bn32 updated                              (norm_relu_grad)
 *        VEC   dG = sum widen(VMUL(dN16, Z16)); dZ16 = VMUL(dN16, G16)     (norm_scale_grad)
 *        VEC   VG, G32 updated; G16 = bf16(G32)                            (norm_update)
 * and a skip from it takes dN16 as its gradient; at int16 configurations in fixed point (the
 * VMULs shift to their results' q, the widened T16 and Bn32 meet in an AXPBY(1, 1) at N's 32-bit
 * q: step_scale.h npu_step_q_t). 0, or -1 with the reason (a connection that does not fit, a
 * shift or scalar that does not fit its instruction). */
#define NPU_STEP_MAX_SKIPS 1

/* The optimizer the estimator plans a step with (model/est_step.c) and `npu sweep --validate`'s
 * RTL probes run (run/step_probe.c): they must agree, as a weight decay one int16 AXPBY cannot
 * hold is emitted as a MUL and an ADD (npu_step_sgd). npu fit's defaults. */
#define NPU_STEP_NOMINAL_LR 0.1f
#define NPU_STEP_NOMINAL_MU 0.9f
#define NPU_STEP_NOMINAL_WD 1e-4f
int npu_step_plan_cnn_res(const npu_cfg_t *cfg, const npu_conv_t *conv, int n_conv, const int *res,
                          const int *fc, int n_fc, int batch, float lr, float mu, float wd, int modes,
                          const npu_step_q_t *q, uint64_t base, npu_step_plan_t *p, char *why, size_t n);

/* A normalised layer's four vector kernels alone, over `rows` output pixels of f channels (fwd
 * norm_relu; bwd norm_relu_grad, norm_scale_grad; update norm_update), as npu_step_plan_cnn_res
 * emits them for any layer of that size (the kernels read only its pixels and channels): the
 * estimator times them for its `--plan sched` (model/estimate.c). bf16 configurations; p holds
 * them in p->k[0..3] (npu_step_plan_free). 0, or -1 with the reason. */
int npu_step_plan_norm(const npu_cfg_t *cfg, int rows, int f, float lr, float mu, npu_step_plan_t *p, char *why,
                       size_t n);

/* The MLP plan's pieces the CNN plan reuses (step_plan.c). */
void npu_step_assign_q(npu_step_plan_t *p, const npu_step_q_t *q);
/* d = a narrowed to 16 bits (int16: by the shift qa - qd), in vector kernel v. */
void npu_step_narrow(npu_step_plan_t *p, npu_vkern_t *v, int a, int d, int qa, int qd);
int npu_step_tensor_add(npu_step_plan_t *p, uint64_t word, const char *name, int layer, unsigned width,
                        int rows, int cols, unsigned pitch);
npu_step_kernel_t *npu_step_kernel_add(npu_step_plan_t *p, int kind, int phase, int layer, const char *what);
/* Tensor t as vector kernel v's operand (loaded, stored), under a DMA tag of its own in v. */
int npu_step_vt(npu_vkern_t *v, npu_step_plan_t *p, int t, int load, int store);
void npu_step_fc_tensors(npu_step_plan_t *p, uint64_t word, int l);
void npu_step_fc_fwd(npu_step_plan_t *p, int l, int modes);
/* relu_prev: layer l-1 is fully connected (its relu_bwd follows the dX GEMM). */
void npu_step_fc_bwd(npu_step_plan_t *p, const npu_cfg_t *cfg, int l, int modes, int relu_prev);
/* The SGD update of layer l's W32, VW (rows x len) and its 16-bit copy w16. */
void npu_step_sgd(npu_step_plan_t *p, int l, int rows, int len, int w16);
/* d = alpha a + beta b (32-bit) in vector kernel v, a, b, d at scales qa, qb, qd (int16). */
void npu_step_axpby(npu_step_plan_t *p, npu_vkern_t *v, int a, int b, int d, int qa, int qb, int qd,
                    float alpha, float beta);
/* vb = mu vb + db; b -= lr vb (the bias update after its gradient, in vector kernel v). */
void npu_step_bias_update(npu_step_plan_t *p, npu_vkern_t *v, int l, int db, int vb, int b);

#endif
