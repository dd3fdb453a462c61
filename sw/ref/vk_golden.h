/*
 * vk_golden.h - golden model of a vector kernel (compile/step/vkern.h) on a DRAM image: the
 * kernel's tensors as element arrays (rows at each tensor's pitch, little-endian, 16 or 32
 * bits), its ops in order through the element rules of ref/vec_golden.h, the stored tensors
 * written back. It knows nothing of SPM words or tokens: those are the emitter's, and the RTL run
 * of the emitted program must give the same DRAM bytes. Chunks only where they set the order of
 * the fp32 additions: a SUM with a scratch sums blocks of the kernel's sum_chunk rows (vkern.h).
 */
#ifndef NPU_VK_GOLDEN_H
#define NPU_VK_GOLDEN_H

#include <stddef.h>
#include <stdint.h>

#include "compile/step/vkern.h"

/* Applies k to the image (bytes [0, size)); dtype NPU_DTYPE_*. 0, or -1 (a tensor outside the
 * image, an op the golden model rejects, out of memory). */
int npu_vk_golden(unsigned dtype, const npu_vkern_t *k, uint8_t *image, size_t size);

/* The transpose kernel x on the image: each tap's matrix transposed (vkern.h). 0, or -1 (outside
 * the image). */
int npu_vk_xpose_golden(const npu_vk_xpose_t *x, uint8_t *image, size_t size);

#endif
