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

/* How a wave starts (the wave lists of golden_bf16, conv_golden_bf16 and bwd_golden_bf16):
 * NPU_CW_ADD: its chain is added (fp32) to the OBUF sum of the waves before it; NPU_CW_WRITE: it
 * begins a new OBUF sum whose DRAIN writes the output; NPU_CW_ACC: it begins a new OBUF sum whose
 * DRAIN acc adds it to the output's value so far (npu_fp32_add: old value + OBUF sum). */
enum { NPU_CW_ADD = 0, NPU_CW_WRITE = 1, NPU_CW_ACC = 2 };

/* An output's value as its waves arrive in order (npu_bf16_sum_wave), read at the end
 * (npu_bf16_sum_end); zero-initialised it is +0 (an output without waves). */
typedef struct npu_bf16_sum {
    uint32_t v, sum; /* the value so far; the open OBUF sum */
    int open;        /* the start (NPU_CW_WRITE / ACC) of the open OBUF sum + 1, 0 when none */
} npu_bf16_sum_t;

/* Adds one wave's chain value, started as `start` (NPU_CW_*). 0, or -1 for an ADD with no open
 * OBUF sum or an unknown start. */
int npu_bf16_sum_wave(npu_bf16_sum_t *s, uint32_t chain, int start);
/* The output's value: the open OBUF sum drained (written or DRAIN acc added). */
uint32_t npu_bf16_sum_end(const npu_bf16_sum_t *s);

/* One wave of a general wave list: the reduction range [k0, k1) (its psum chain, k ascending)
 * and how it starts (NPU_CW_*). */
typedef struct npu_kwave {
    int k0, k1, start;
} npu_kwave_t;

/* The wave list of output (i, j): writes up to max waves in order and returns their number. */
typedef size_t (*npu_wavelist_fn)(void *ctx, int i, int j, npu_kwave_t *w, size_t max);

/* C = A x B with per output the general wave list of fn (layout as npu_golden_gemm_bf16).
 * Returns 0, or -1 when a list is longer than max_waves, malformed (npu_bf16_sum_wave), leaves
 * [0, K), or memory runs out. */
int npu_golden_gemm_bf16_waves(int M, int N, int K, const int16_t *A, size_t lda, int transA,
                               const int16_t *B, size_t ldb, int transB, int32_t *C, size_t ldc,
                               npu_wavelist_fn fn, void *ctx, size_t max_waves);

/* An fp32 bit pattern as the int32_t npu_read_i32 reads from the DRAM. */
int32_t npu_fp32_as_i32(uint32_t v);

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
