/* vec_golden.c - golden model of the vector operations (vec_golden.h, docs/isa.md "VEC"). */
#include "ref/vec_golden.h"

#include "hw/npu_defs.h"
#include "ref/bf16.h"

int npu_vec_widths(unsigned vop, int wide, unsigned *wa, unsigned *wd)
{
    if (vop >= NPU_NUM_VOPS || (wide && !NPU_VOP_HAS_WIDE(vop)))
        return -1;
    *wa = *wd = wide ? 32u : 16u;
    if (vop == NPU_VOP_NARROW) {
        *wa = 32;
        *wd = 16;
    } else if (vop == NPU_VOP_WIDEN) {
        *wa = 16;
        *wd = 32;
    }
    return 0;
}

/* ---- bf16 configs: fp32 arithmetic (bf16.h), a 16-bit element is a bf16 ------------------ */

static int fp_is_nan(uint32_t x) { return (x & 0x7F800000u) == 0x7F800000u && (x & 0x7FFFFFu); }
/* greater than zero: positive, normal or Inf (a denormal reads as zero), not NaN */
static int fp_pos(uint32_t x) { return !(x >> 31) && (x & 0x7F800000u) && !fp_is_nan(x); }
/* a value as every unit passes it on: NaN canonical, denormal to zero of its sign */
static uint32_t fp_canon(uint32_t x)
{
    if (fp_is_nan(x))
        return NPU_FP32_NAN;
    return (x & 0x7F800000u) ? x : (x & 0x80000000u);
}

static uint32_t fp_elem(unsigned vop, const npu_vec_regs_t *g, uint32_t a, uint32_t b)
{
    switch (vop) {
    case NPU_VOP_ADD: return npu_fp32_add(a, b);
    case NPU_VOP_MUL: return npu_fp32_mul(g->alpha, a);
    case NPU_VOP_VMUL: return npu_fp32_mul(a, b);
    case NPU_VOP_AXPBY: return npu_fp32_add(npu_fp32_mul(g->alpha, a), npu_fp32_mul(g->beta, b));
    case NPU_VOP_RELU: return fp_is_nan(a) ? NPU_FP32_NAN : fp_pos(a) ? a : 0;
    case NPU_VOP_RELU_BWD: return fp_pos(b) ? fp_canon(a) : 0;
    default: return fp_canon(a); /* NARROW, WIDEN: the conversion is the destination's */
    }
}

static uint32_t fp_in(uint32_t x, unsigned w) { return w == 16 ? (x & 0xFFFFu) << 16 : x; }
static uint32_t fp_out(uint32_t y, unsigned w) { return w == 16 ? npu_fp32_to_bf16(y) : y; }

/* ---- int16 configs: exact integers, 32-bit results wrap, 16-bit results saturate ---------- */

static int64_t int_in(uint32_t x, unsigned w) { return w == 16 ? (int16_t)(x & 0xFFFFu) : (int32_t)x; }

static uint32_t int_out(int64_t y, unsigned w)
{
    if (w == 32)
        return (uint32_t)y;
    return (uint32_t)(y > 32767 ? 32767 : y < -32768 ? -32768 : y) & 0xFFFFu;
}

/* x / 2^sh rounded half up: floor((x + 2^(sh-1)) / 2^sh), exact (no intermediate wraps) */
static int64_t round_shift(int64_t x, unsigned sh)
{
    if (!sh)
        return x;
    int64_t t = x + ((int64_t)1 << (sh - 1)), q = (int64_t)1 << sh;
    return t >= 0 ? t / q : -((-t + q - 1) / q);
}

static int64_t int_elem(unsigned vop, const npu_vec_regs_t *g, int64_t a, int64_t b)
{
    int64_t al = (int16_t)(g->alpha & 0xFFFFu), be = (int16_t)(g->beta & 0xFFFFu);
    switch (vop) {
    case NPU_VOP_ADD: return a + b;
    case NPU_VOP_MUL: return round_shift(al * a, g->shift);
    case NPU_VOP_VMUL: return round_shift(a * b, g->shift);
    case NPU_VOP_AXPBY: return round_shift(al * a + be * b, g->shift);
    case NPU_VOP_RELU: return a > 0 ? a : 0;
    case NPU_VOP_RELU_BWD: return b > 0 ? a : 0;
    case NPU_VOP_NARROW: return round_shift(a, g->shift);
    default: return a; /* WIDEN */
    }
}

/* ---- the operation over the rows ---------------------------------------------------------- */

static void golden_sum(unsigned dtype, unsigned rows, unsigned len, unsigned w, const uint32_t *a,
                       uint32_t *d)
{
    for (unsigned c = 0; c < len; c++) {
        uint32_t facc = 0; /* +0 */
        int64_t iacc = 0;
        for (unsigned r = 0; r < rows; r++) {
            uint32_t x = a[(uint64_t)r * len + c];
            if (dtype == NPU_DTYPE_BF16)
                facc = npu_fp32_add(facc, fp_in(x, w));
            else
                iacc += int_in(x, w);
        }
        d[c] = dtype == NPU_DTYPE_BF16 ? fp_out(facc, w) : int_out(iacc, w);
    }
}

int npu_vec_golden(unsigned dtype, unsigned vop, int wide, const npu_vec_regs_t *regs,
                   unsigned rows, unsigned len, const uint32_t *a, const uint32_t *b, uint32_t *d)
{
    unsigned wa, wd;
    if (npu_vec_widths(vop, wide, &wa, &wd) != 0 ||
        (dtype != NPU_DTYPE_BF16 && dtype != NPU_DTYPE_INT16))
        return -1;
    if (vop == NPU_VOP_SUM) {
        golden_sum(dtype, rows, len, wa, a, d);
        return 0;
    }
    for (uint64_t i = 0; i < (uint64_t)rows * len; i++) {
        uint32_t x = a[i], y = b ? b[i] : 0;
        if (dtype == NPU_DTYPE_BF16)
            d[i] = fp_out(fp_elem(vop, regs, fp_in(x, wa), fp_in(y, wa)), wd);
        else
            d[i] = int_out(int_elem(vop, regs, int_in(x, wa), int_in(y, wa)), wd);
    }
    return 0;
}
