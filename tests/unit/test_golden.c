/* test_golden.c - golden GEMM against an independent int64 triple loop, wrap-around cases. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "ref/golden.h"
#include "test_cfgs.h"

/* Independent reference: exact int64 sum, then reduced modulo 2^32 by arithmetic. */
static int32_t ref_elem(int64_t sum)
{
    int64_t r = sum % 4294967296LL;
    if (r < 0)
        r += 4294967296LL;
    if (r >= 2147483648LL)
        r -= 4294967296LL;
    return (int32_t)r;
}

static void check_random(int M, int N, int K, int ta, int tb, size_t pad, uint64_t seed)
{
    size_t lda = (size_t)(ta ? M : K) + pad, ldb = (size_t)(tb ? K : N) + pad, ldc = (size_t)N + pad;
    size_t ra = (size_t)(ta ? K : M), rb = (size_t)(tb ? N : K);
    int16_t *A = malloc(ra * lda * sizeof *A), *B = malloc(rb * ldb * sizeof *B);
    int32_t *C = malloc((size_t)M * ldc * sizeof *C);
    for (size_t i = 0; i < ra * lda; i++)
        A[i] = (int16_t)((int)(test_rand(&seed) % 65536) - 32768);
    for (size_t i = 0; i < rb * ldb; i++)
        B[i] = (int16_t)((int)(test_rand(&seed) % 65536) - 32768);
    for (size_t i = 0; i < (size_t)M * ldc; i++)
        C[i] = 0x5A5A5A5A;
    npu_golden_gemm(M, N, K, A, lda, ta, B, ldb, tb, C, ldc);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            int64_t sum = 0;
            for (int k = 0; k < K; k++) {
                int64_t a = ta ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k];
                int64_t b = tb ? B[(size_t)j * ldb + k] : B[(size_t)k * ldb + j];
                sum += a * b;
            }
            cr_assert_eq(C[(size_t)i * ldc + j], ref_elem(sum), "C[%d][%d] M=%d N=%d K=%d ta=%d tb=%d",
                         i, j, M, N, K, ta, tb);
        }
    /* padding columns of C untouched */
    for (int i = 0; i < M; i++)
        for (size_t j = (size_t)N; j < ldc; j++)
            cr_assert_eq(C[(size_t)i * ldc + j], 0x5A5A5A5A);
    free(A);
    free(B);
    free(C);
}

Test(golden, random_shapes_all_layouts)
{
    uint64_t s = 99;
    for (int it = 0; it < 60; it++) {
        int M = 1 + (int)(test_rand(&s) % 23), N = 1 + (int)(test_rand(&s) % 23);
        int K = 1 + (int)(test_rand(&s) % 70);
        check_random(M, N, K, it & 1, (it >> 1) & 1, (size_t)(it % 3), s);
    }
}

Test(golden, large_k_wraps_like_int64_mod_2_32)
{
    check_random(3, 4, 5000, 0, 0, 0, 7);
    check_random(2, 3, 4097, 1, 1, 2, 8);
}

Test(golden, wrap_around_exact)
{
    int16_t A[4] = {-32768, -32768, -32768, -32768}, B[4] = {-32768, -32768, -32768, -32768};
    int32_t C[1];
    npu_golden_gemm(1, 1, 1, A, 4, 0, B, 1, 0, C, 1);
    cr_assert_eq(C[0], 1073741824); /* 2^30 */
    npu_golden_gemm(1, 1, 2, A, 4, 0, B, 1, 0, C, 1);
    cr_assert_eq(C[0], INT32_MIN); /* 2^31 wraps */
    npu_golden_gemm(1, 1, 3, A, 4, 0, B, 1, 0, C, 1);
    cr_assert_eq(C[0], -1073741824); /* 3*2^30 - 2^32 */
    npu_golden_gemm(1, 1, 4, A, 4, 0, B, 1, 0, C, 1);
    cr_assert_eq(C[0], 0); /* 2^32 */
    {
        int16_t a2[2] = {-32768, 32767}, b2[2] = {32767, 32767};
        npu_golden_gemm(1, 1, 2, a2, 2, 0, b2, 1, 0, C, 1);
        cr_assert_eq(C[0], -32768 * 32767 + 32767 * 32767);
    }
}

Test(golden, transposed_storage_small)
{
    /* A = [[1,2],[3,4],[5,6]] (3x2) stored transposed as 2x3; B = [[1,0,2],[0,1,3]] (2x3) stored
     * transposed as 3x2. C = A*B = [[1,2,8],[3,4,18],[5,6,28]]. */
    int16_t At[6] = {1, 3, 5, 2, 4, 6}, Bt[6] = {1, 0, 0, 1, 2, 3};
    int32_t C[9], want[9] = {1, 2, 8, 3, 4, 18, 5, 6, 28};
    npu_golden_gemm(3, 3, 2, At, 3, 1, Bt, 2, 1, C, 3);
    for (int i = 0; i < 9; i++)
        cr_assert_eq(C[i], want[i], "element %d", i);
}

Test(golden, compare_finds_first_mismatch)
{
    int32_t a[6] = {1, 2, 3, 4, 5, 6}, b[8] = {1, 2, 3, 0, 4, 9, 7, 0};
    int r = -1, c = -1;
    int32_t g = 0, e = 0;
    /* got: 2x3 dense; exp: 2x3 with pitch 4 */
    cr_assert_eq(npu_compare_i32(2, 3, a, 3, b, 4, &r, &c, &g, &e), 2u);
    cr_assert_eq(r, 1);
    cr_assert_eq(c, 1);
    cr_assert_eq(g, 5);
    cr_assert_eq(e, 9);
    b[5] = 5;
    b[6] = 6;
    cr_assert_eq(npu_compare_i32(2, 3, a, 3, b, 4, NULL, NULL, NULL, NULL), 0u);
}
