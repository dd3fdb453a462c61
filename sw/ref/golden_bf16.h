/*
 * golden_bf16.h - the order-matched golden model of the bf16 GEMM (issue 15; docs/datapath.md
 * section 6, "Summation order").
 *
 * Elements are bf16 bit patterns (carried in int16_t, the int16 layout); results are fp32 bit
 * patterns (carried in int32_t, compared as 32-bit patterns by npu_compare_i32). fp32 sums
 * round, so the result depends on the order: this model adds in the hardware's order, with the
 * arithmetic of ref/bf16.h (FTZ, one canonical NaN, RNE):
 *   - a wave [k0, k1) of output (i, j) is its column's psum chain ((+0 + p(k0)) + p(k0+1)) + ...
 *     + p(k1-1), p(k) = A(i,k) x B(k,j) exact (npu_bf16_mac), k ascending (top PE first);
 *   - the OBUF: the first wave writes, every later one is added (npu_fp32_add), in the order
 *     the caller's wave list gives (the program's order; compile/gemm's npu_gemm_kwaves for a
 *     GEMM program).
 * The lanes of a column outside the wave's k range add +0 in the hardware (A fed as +0 against
 * LDW's zero rows), which leaves every psum unchanged except a -0 (only reachable by a sum that
 * flushes a negative result below 2^-126 to -0): +0 + -0... = +0 there. The model leaves them
 * out (tests/unit/test_golden_bf16.c checks both claims).
 */
#ifndef NPU_GOLDEN_BF16_H
#define NPU_GOLDEN_BF16_H

#include <stddef.h>
#include <stdint.h>

/* The K partition of output (i, j): writes up to max wave ranges [k0[w], k1[w]) in accumulation
 * order and returns their number. */
typedef size_t (*npu_kwaves_fn)(void *ctx, int i, int j, int *k0, int *k1, size_t max);

/* C = A x B as the array sums it, per output the waves of kwaves(ctx, i, j, ...). Layout and
 * pitches as npu_golden_gemm (golden.h). Returns 0, or -1 when a wave list is longer than
 * K waves or out of memory. */
int npu_golden_gemm_bf16(int M, int N, int K, const int16_t *A, size_t lda, int transA,
                         const int16_t *B, size_t ldb, int transB, int32_t *C, size_t ldc,
                         npu_kwaves_fn kwaves, void *ctx);

/* One wave's psum chain: +0, then + a[t*sa] x b[t*sb] for t = 0 .. n-1 in order. */
uint32_t npu_bf16_chain(const int16_t *a, size_t sa, const int16_t *b, size_t sb, int n);

#endif
