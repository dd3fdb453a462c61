/*
 * golden.h - the C golden model: int16 x int16 -> int32 GEMM with two's-complement wrap-around.
 *
 * C[i][j] = sum_k A(i,k) * B(k,j), accumulated modulo 2^32 (computed in uint32_t, no UB).
 * A(i,k) = transA ? A[k*lda + i] (A stored K x M) : A[i*lda + k] (A stored M x K).
 * B(k,j) = transB ? B[j*ldb + k] (B stored N x K) : B[k*ldb + j] (B stored K x N).
 * Pitches (lda, ldb, ldc) are in elements. The result does not depend on summation order.
 */
#ifndef NPU_GOLDEN_H
#define NPU_GOLDEN_H

#include <stddef.h>
#include <stdint.h>

void npu_golden_gemm(int M, int N, int K, const int16_t *A, size_t lda, int transA,
                     const int16_t *B, size_t ldb, int transB, int32_t *C, size_t ldc);

/* Element-wise compare of M x N int32 matrices (pitches in elements). Returns the number of
 * mismatching elements; the first one in row-major order goes to *row, *col, *got, *exp
 * (each pointer may be NULL). */
size_t npu_compare_i32(int M, int N, const int32_t *got, size_t ldg, const int32_t *exp,
                       size_t lde, int *row, int *col, int32_t *got_v, int32_t *exp_v);

/* Seeded operands: A (M x K values) then B (K x N values) from one xorshift64* stream (seed 0 is
 * replaced by a fixed constant). The CLI and the RTL tests share it, so a failing test's seed
 * replays with `npu gemm ... --seed N`. A and B are filled in storage order whatever the layout. */
void npu_random_operands(int M, int N, int K, uint64_t seed, int16_t *A, int16_t *B);

/* Seeded bf16 operands (as npu_random_operands: A then B from one xorshift64*
 * stream): finite normal values of both signs with exponents in [-8, 7] (|x| in [2^-8, 2^8)),
 * one in 16 an exact zero (+0 or -0), so that every sum of products stays far above 2^-126
 * and far below overflow: the sums never flush and never overflow, and the bit patterns
 * exercise rounding (both signs, cancellations, ties). */
void npu_random_operands_bf16(int M, int N, int K, uint64_t seed, int16_t *A, int16_t *B);

/* The bf16 operand npu_random_operands_bf16 makes of 16 random bits u: sign u[15], 7 fraction
 * bits u[6:0], biased exponent 127 - 8 + u[10:7] (2^-8 .. 2^7); u[14:11] == 0 (one in 16) makes
 * it a zero of that sign. */
int16_t npu_bf16_from_bits(uint16_t u);

/* The seeded operands of the element type: bf16 (npu_random_operands_bf16) or int16. */
static inline void npu_random_operands_dt(int bf16, int M, int N, int K, uint64_t seed, int16_t *A,
                                          int16_t *B)
{
    if (bf16)
        npu_random_operands_bf16(M, N, K, seed, A, B);
    else
        npu_random_operands(M, N, K, seed, A, B);
}

#endif
