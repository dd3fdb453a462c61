/* golden_bf16.c - the order-matched bf16 GEMM golden model; see golden_bf16.h. */
#include "ref/golden_bf16.h"

#include <stdlib.h>

#include "ref/bf16.h"

uint32_t npu_bf16_chain(const int16_t *a, size_t sa, const int16_t *b, size_t sb, int n)
{
    uint32_t psum = 0; /* the array's psum chain starts at +0 */
    for (int t = 0; t < n; t++)
        psum = npu_bf16_mac(psum, (uint16_t)a[(size_t)t * sa], (uint16_t)b[(size_t)t * sb]);
    return psum;
}

/* Output (i, j) over the waves [k0[w], k1[w]): the first written, the others added in order. */
static uint32_t output(const int16_t *A, size_t lda, int transA, const int16_t *B, size_t ldb,
                       int transB, int i, int j, const int *k0, const int *k1, size_t nw)
{
    /* element k of row i of A(i, .) and of column j of B(., j): base + k * step */
    const int16_t *a = transA ? A + i : A + (size_t)i * lda;
    const int16_t *b = transB ? B + (size_t)j * ldb : B + j;
    size_t sa = transA ? lda : 1, sb = transB ? 1 : ldb;
    uint32_t c = 0;
    for (size_t w = 0; w < nw; w++) {
        uint32_t v = npu_bf16_chain(a + (size_t)k0[w] * sa, sa, b + (size_t)k0[w] * sb, sb,
                                    k1[w] - k0[w]);
        c = w ? npu_fp32_add(c, v) : v;
    }
    return c;
}

int npu_golden_gemm_bf16(int M, int N, int K, const int16_t *A, size_t lda, int transA,
                         const int16_t *B, size_t ldb, int transB, int32_t *C, size_t ldc,
                         npu_kwaves_fn kwaves, void *ctx)
{
    size_t max = (size_t)(K > 0 ? K : 1);
    int *k0 = malloc(max * sizeof *k0), *k1 = malloc(max * sizeof *k1);
    int rc = k0 && k1 ? 0 : -1;
    for (int i = 0; i < M && rc == 0; i++)
        for (int j = 0; j < N && rc == 0; j++) {
            size_t nw = kwaves(ctx, i, j, k0, k1, max);
            uint32_t c;
            if (nw > max) {
                rc = -1;
                break;
            }
            c = output(A, lda, transA, B, ldb, transB, i, j, k0, k1, nw);
            /* the 32-bit pattern, as npu_read_i32 reads it from the DRAM */
            C[(size_t)i * ldc + (size_t)j] = (int32_t)(c <= 0x7FFFFFFFu ? (int32_t)c
                                                        : (int32_t)(c - 0x80000000u) - 0x7FFFFFFF - 1);
        }
    free(k0);
    free(k1);
    return rc;
}
