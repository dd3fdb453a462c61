/*
 * vec_golden.h - golden model of the vector unit's operations (VEC, docs/isa.md section 4), on
 * element arrays: no SPM layout, no words or lanes, written from the ISA's element rules and
 * kept apart from the functional model's VEC path (tb/npu_funcsim_exec.c), so the two check
 * each other. Elements are raw bit patterns in uint32_t: a 16-bit element (int16 or bf16) in
 * bits [15:0], the upper bits ignored on input and zero on output.
 */
#ifndef NPU_VEC_GOLDEN_H
#define NPU_VEC_GOLDEN_H

#include <stdint.h>

/* The VSET registers a VEC reads: alpha, beta (fp32 patterns in bf16 configs; the int16 in bits
 * [15:0] in int16 configs) and shift (int16 configs: MUL, AXPBY, NARROW). */
typedef struct npu_vec_regs {
    uint32_t alpha, beta;
    unsigned shift;
} npu_vec_regs_t;

/* Element widths (16 or 32) of a, b, d of an operation: the same-width ops take
 * wide ? 32 : 16; NARROW is 32 -> 16, WIDEN 16 -> 32. Returns 0, or -1 for an unknown vop or
 * wide on an op without a 32-bit form (NPU_VOP_HAS_WIDE: NARROW, WIDEN, VMUL). */
int npu_vec_widths(unsigned vop, int wide, unsigned *wa, unsigned *wd);

/* d = vop(a, b) for rows x len elements (row-major, a row's len elements contiguous; b only for
 * the ops that read it, NPU_VOP_READS_B; a broadcast operand is the caller's to repeat). SUM writes one row of
 * len: d[c] = sum over r of a[r][c], in row order from zero. dtype: NPU_DTYPE_INT16 or
 * NPU_DTYPE_BF16. Returns 0, or -1 for an unknown vop or dtype. */
int npu_vec_golden(unsigned dtype, unsigned vop, int wide, const npu_vec_regs_t *regs,
                   unsigned rows, unsigned len, const uint32_t *a, const uint32_t *b, uint32_t *d);

#endif
