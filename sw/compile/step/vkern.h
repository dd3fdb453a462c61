/*
 * vkern.h - a vector kernel: the element-wise work between two GEMMs of a training step (bias
 * and activation, the loss-side conversions, ReLU's backward mask, the bias gradient, the SGD
 * update) as one NPU program: DRAM -> SPM -> vector unit -> SPM -> DRAM (docs/training.md
 * "Whole iterations on the NPU").
 *
 * A kernel names up to NPU_VK_MAX_T tensors, each `rows` x `len` elements of 16 or 32 bits,
 * row-major in DRAM at its own pitch (bytes from one row to the next: the row bytes when dense,
 * more for a convolution's pixel rows padded to beats, npu_vk_pitch; rows whose padding lies
 * within the words the row fills move as whole pitches, one DRAM run, and a stored one gets its
 * padding written: zeros, the lanes a VEC writes past len), or ONE ROW (a bias, its velocity, a
 * bias gradient): read by every row as a broadcast operand (VEC stride 0), written once (SUM, or an
 * op whose operands are all one-row). A tensor is loaded, stored, both, or neither (scratch in
 * the SPM only). Ops run in order, each a VEC (docs/isa.md section 4) over the kernel's rows.
 *
 * The emitter cuts the rows into chunks that fit the SPM twice (double buffering: the loads of
 * chunk i+1 run while chunk i computes and stores), one program-builder step per chunk, and
 * into at least four chunks of at least four rows where the rows allow, so that the transfers
 * overlap the ops (a one-chunk relu_bwd of 32 x 64 fp32 takes 4,351 cycles, four chunks 3,430).
 * Ops with a one-row result other than SUM (the bias update after its gradient) run once, in the
 * last chunk, after every row has been summed. A SUM over more rows than fit one chunk names a
 * one-row scratch tensor as its b and the kernel's sum_chunk (npu_vk_sum_chunk): chunk 0 sums
 * into d, every later chunk of sum_chunk rows into the scratch, then d += scratch. The order of
 * the fp32 additions is then: per block of sum_chunk rows, the rows in order from +0, the block
 * sums added in order; the golden model (ref/vk_golden.h) follows sum_chunk. Without a scratch a
 * SUM must fit one chunk (plain row order) and a larger kernel is refused with the rows that fit.
 */
#ifndef NPU_VKERN_H
#define NPU_VKERN_H

#include <stddef.h>
#include <stdint.h>

#include "hw/npu_cfg.h"
#include "prog/prog.h"

#define NPU_VK_MAX_T 9 /* a residual block's skip target's relu_grad_bias: 8 and the skip's gradient */
#define NPU_VK_MAX_OPS 8

typedef struct npu_vk_tensor {
    const char *name;  /* for messages and reports: "Z32", "W16" */
    uint32_t dram;     /* byte address of row 0 (even) */
    unsigned width;    /* bits per element: 16 (int16 / bf16) or 32 (int32 / fp32) */
    unsigned tag;      /* DMA tag of its LOADs and STOREs (NPU_TAG_*) */
    unsigned pitch;    /* DRAM bytes from row to row (even); 0: dense (the row bytes) */
    int one_row;       /* one row of len, not rows */
    int load, store;   /* read from DRAM before the ops / written back after them */
    int resident;      /* in the SPM for the whole kernel (npu_vk_resident): never moved */
    unsigned spm, spm_stride; /* resident: row r at word spm + r * spm_stride */
} npu_vk_tensor_t;

typedef struct npu_vk_op {
    unsigned vop, wide;  /* NPU_VOP_*, 32-bit operands for the same-width ops */
    int a, b, d;         /* tensor indices; b = -1 when the op reads no b (SUM: its one-row scratch
                            for the partial sums of chunks past the first, or -1) */
    uint32_t alpha, beta;
    unsigned shift;
} npu_vk_op_t;

typedef struct npu_vkern {
    char name[48];
    int rows, len;
    int sum_chunk;       /* a SUM with a scratch: rows per partial sum (npu_vk_sum_chunk); 0: one chunk */
    int nt, nop;
    unsigned spm_limit;  /* the kernel's own buffers below this word (0: the whole SPM); the
                            resident tensors at or above it */
    npu_vk_tensor_t t[NPU_VK_MAX_T];
    npu_vk_op_t op[NPU_VK_MAX_OPS];
} npu_vkern_t;

/* Adds a tensor / an op to k; returns the tensor's index (no check: npu_vk_check does that). */
int npu_vk_tensor(npu_vkern_t *k, const char *name, uint32_t dram, unsigned width, unsigned tag,
                  int one_row, int load, int store);
/* Tensor t is resident (a step's tensor kept in the SPM between kernels, docs/training.md): its
 * row r at word spm + r * stride, at or above k->spm_limit; it is neither loaded nor stored. */
void npu_vk_resident(npu_vkern_t *k, int t, unsigned spm, unsigned stride);
void npu_vk_op(npu_vkern_t *k, unsigned vop, unsigned wide, int a, int b, int d, uint32_t alpha,
               uint32_t beta, unsigned shift);

/* Sets tensor t's DRAM pitch (bytes between rows, at least its row bytes). */
void npu_vk_pitch(npu_vkern_t *k, int t, unsigned pitch);
/* The DRAM pitch of tensor t: its pitch, or the row bytes when dense. */
unsigned npu_vk_row_pitch(const npu_vkern_t *k, int t);
/* A SUM with a scratch over more rows than one chunk holds: sets k->sum_chunk to the rows per
 * chunk the SPM holds (npu_vk_chunk_rows); 0 when all rows fit one chunk. Call after the last
 * tensor and op are added. */
void npu_vk_sum_chunk(const npu_cfg_t *cfg, npu_vkern_t *k);

/* Bytes of a tensor row in DRAM, and SPM words of a row (element e of a row in lane e % 2S of
 * word e / 2S for 16 bits, e % S of e / S for 32). */
unsigned npu_vk_row_bytes(const npu_vkern_t *k, int t);
unsigned npu_vk_row_words(const npu_cfg_t *cfg, const npu_vkern_t *k, int t);

/* The kernel's consistency: indices, widths against each op (hw: npu_vec_widths), one-row rules
 * (a one-row d only from SUM or from one-row operands). 0, or -1 with the reason. */
int npu_vk_check(const npu_vkern_t *k, char *why, size_t n);

/* Rows per chunk (the SPM's words for two copies of a chunk's rows, after the one-row tensors),
 * at most k->rows; 0 when not even one row fits. */
int npu_vk_chunk_rows(const npu_cfg_t *cfg, const npu_vkern_t *k);

/* The program (appended to out). 0, or -1 with the reason (npu_vk_check, the SPM, a SUM that
 * needs more than one chunk, a field that does not fit). */
int npu_vk_emit(const npu_cfg_t *cfg, const npu_vkern_t *k, npu_prog_t *out, char *why, size_t n);

/* The vector unit's busy cycles of the program npu_vk_emit emits (its chunks and SPM layout, each
 * VEC by npu_vec_busy, prog_expect.h) without building it: the analytical estimator's vector
 * timing (model/estimate.c). 0, or -1 with npu_vk_emit's reason before emitting. */
int npu_vk_vec_busy(const npu_cfg_t *cfg, const npu_vkern_t *k, uint64_t *busy, char *why, size_t n);

/* A transpose kernel (no vector op): per tap t < taps the rows x cols 16-bit matrix at
 * src + t * rows * src_pitch (rows src_pitch bytes apart) into its cols x rows transpose at
 * dst + t * cols * dst_pitch (rows dst_pitch apart): transposed LOADs (docs/isa.md) into the SPM,
 * a STORE out, groups of taps double-buffered. It puts a convolution's updated W16^T ([tap][C]
 * rows of F, the fused backward's dW^T layout) into the [tap][F] rows of C the conv kernels read. */
typedef struct npu_vk_xpose {
    int taps, rows, cols;
    uint32_t src, dst;
    unsigned src_pitch, dst_pitch, tag;
    unsigned spm_limit; /* its buffers below this SPM word (residency, step_res.h); 0: the whole SPM */
} npu_vk_xpose_t;

/* The program (appended to out). 0, or -1 with the reason (one tap does not fit the SPM, a field). */
int npu_vk_xpose_emit(const npu_cfg_t *cfg, const npu_vk_xpose_t *x, npu_prog_t *out, char *why, size_t n);

#endif
