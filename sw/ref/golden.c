/* golden.c - golden GEMM; see golden.h. */
#include "ref/golden.h"

/* uint32 -> int32 two's complement without implementation-defined conversion. */
static int32_t to_i32(uint32_t u)
{
    return u <= 0x7FFFFFFFu ? (int32_t)u : (int32_t)(u - 0x80000000u) - 0x7FFFFFFF - 1;
}

void npu_golden_gemm(int M, int N, int K, const int16_t *A, size_t lda, int transA,
                     const int16_t *B, size_t ldb, int transB, int32_t *C, size_t ldc)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            uint32_t acc = 0;
            for (int k = 0; k < K; k++) {
                int32_t a = transA ? A[(size_t)k * lda + (size_t)i] : A[(size_t)i * lda + (size_t)k];
                int32_t b = transB ? B[(size_t)j * ldb + (size_t)k] : B[(size_t)k * ldb + (size_t)j];
                /* |a*b| <= 2^30: the product fits in int32; the sum wraps in uint32. */
                acc += (uint32_t)(a * b);
            }
            C[(size_t)i * ldc + (size_t)j] = to_i32(acc);
        }
}

size_t npu_compare_i32(int M, int N, const int32_t *got, size_t ldg, const int32_t *exp,
                       size_t lde, int *row, int *col, int32_t *got_v, int32_t *exp_v)
{
    size_t bad = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            int32_t g = got[(size_t)i * ldg + (size_t)j], e = exp[(size_t)i * lde + (size_t)j];
            if (g != e) {
                if (!bad) {
                    if (row) *row = i;
                    if (col) *col = j;
                    if (got_v) *got_v = g;
                    if (exp_v) *exp_v = e;
                }
                bad++;
            }
        }
    return bad;
}

/* xorshift64*: the operands are a function of the seed only */
static uint64_t xs_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

static void random_i16(int16_t *v, size_t n, uint64_t *st)
{
    for (size_t i = 0; i < n; i++) {
        uint16_t u = (uint16_t)(xs_next(st) >> 48);
        v[i] = (int16_t)(u >= 0x8000u ? (int)u - 0x10000 : (int)u);
    }
}

void npu_random_operands(int M, int N, int K, uint64_t seed, int16_t *A, int16_t *B)
{
    uint64_t st = seed ? seed : 0x9E3779B97F4A7C15ull;
    random_i16(A, (size_t)M * (size_t)K, &st);
    random_i16(B, (size_t)K * (size_t)N, &st);
}

int16_t npu_bf16_from_bits(uint16_t u)
{
    uint16_t sign = u & 0x8000u, v;
    if (((u >> 11) & 0xFu) == 0)
        v = sign;
    else
        v = (uint16_t)(sign | (uint16_t)((127u - 8u + ((u >> 7) & 0xFu)) << 7) | (u & 0x7Fu));
    return (int16_t)(v >= 0x8000u ? (int)v - 0x10000 : (int)v);
}

void npu_random_operands_bf16(int M, int N, int K, uint64_t seed, int16_t *A, int16_t *B)
{
    uint64_t st = seed ? seed : 0x9E3779B97F4A7C15ull;
    size_t na = (size_t)M * (size_t)K, nb = (size_t)K * (size_t)N;
    for (size_t i = 0; i < na; i++)
        A[i] = npu_bf16_from_bits((uint16_t)(xs_next(&st) >> 48));
    for (size_t i = 0; i < nb; i++)
        B[i] = npu_bf16_from_bits((uint16_t)(xs_next(&st) >> 48));
}
