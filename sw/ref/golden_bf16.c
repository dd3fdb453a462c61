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

int32_t npu_fp32_as_i32(uint32_t v)
{
    return v <= 0x7FFFFFFFu ? (int32_t)v : (int32_t)(v - 0x80000000u) - 0x7FFFFFFF - 1;
}

uint32_t npu_bf16_sum_end(const npu_bf16_sum_t *s)
{
    if (!s->open)
        return s->v;
    /* the OBUF sum drains: written, or added to the value so far (DRAIN acc) */
    return s->open - 1 == NPU_CW_WRITE ? s->sum : npu_fp32_add(s->v, s->sum);
}

int npu_bf16_sum_wave(npu_bf16_sum_t *s, uint32_t chain, int start)
{
    if (start == NPU_CW_ADD) {
        if (!s->open)
            return -1;
        s->sum = npu_fp32_add(s->sum, chain);
        return 0;
    }
    if (start != NPU_CW_WRITE && start != NPU_CW_ACC)
        return -1;
    s->v = npu_bf16_sum_end(s);
    s->sum = chain;
    s->open = start + 1;
    return 0;
}

/* The operand views of output (i, j): element k of row i of A and of column j of B is at
 * base + k * step. */
typedef struct view {
    const int16_t *a, *b;
    size_t sa, sb;
} view_t;

static view_t view_of(const int16_t *A, size_t lda, int transA, const int16_t *B, size_t ldb,
                      int transB, int i, int j)
{
    view_t v;
    v.a = transA ? A + i : A + (size_t)i * lda;
    v.b = transB ? B + (size_t)j * ldb : B + j;
    v.sa = transA ? lda : 1;
    v.sb = transB ? 1 : ldb;
    return v;
}

/* Output (i, j) from its waves; -1 when a wave leaves [0, K) or the list is malformed. */
static int output(const view_t *v, int K, const npu_kwave_t *w, size_t nw, uint32_t *out)
{
    npu_bf16_sum_t s = {0, 0, 0};
    for (size_t n = 0; n < nw; n++) {
        if (w[n].k0 < 0 || w[n].k1 < w[n].k0 || w[n].k1 > K ||
            npu_bf16_sum_wave(&s, npu_bf16_chain(v->a + (size_t)w[n].k0 * v->sa, v->sa,
                                                 v->b + (size_t)w[n].k0 * v->sb, v->sb,
                                                 w[n].k1 - w[n].k0),
                              w[n].start) != 0)
            return -1;
    }
    *out = npu_bf16_sum_end(&s);
    return 0;
}

int npu_golden_gemm_bf16_waves(int M, int N, int K, const int16_t *A, size_t lda, int transA,
                               const int16_t *B, size_t ldb, int transB, int32_t *C, size_t ldc,
                               npu_wavelist_fn fn, void *ctx, size_t max_waves)
{
    npu_kwave_t *w = malloc((max_waves ? max_waves : 1) * sizeof *w);
    int rc = w ? 0 : -1;
    for (int i = 0; i < M && rc == 0; i++)
        for (int j = 0; j < N && rc == 0; j++) {
            view_t v = view_of(A, lda, transA, B, ldb, transB, i, j);
            size_t nw = fn(ctx, i, j, w, max_waves);
            uint32_t c = 0;
            rc = nw <= max_waves ? output(&v, K, w, nw, &c) : -1;
            C[(size_t)i * ldc + (size_t)j] = npu_fp32_as_i32(c);
        }
    free(w);
    return rc;
}

/* A K partition (npu_kwaves_fn) as a general wave list: the first wave writes, the others add. */
typedef struct kparts {
    npu_kwaves_fn kwaves;
    void *ctx;
    int *k0, *k1;
} kparts_t;

static size_t kparts_list(void *ctx, int i, int j, npu_kwave_t *w, size_t max)
{
    const kparts_t *p = ctx;
    size_t nw = p->kwaves(p->ctx, i, j, p->k0, p->k1, max);
    for (size_t n = 0; n < nw && n < max; n++) {
        w[n].k0 = p->k0[n];
        w[n].k1 = p->k1[n];
        w[n].start = n ? NPU_CW_ADD : NPU_CW_WRITE;
    }
    return nw;
}

int npu_golden_gemm_bf16(int M, int N, int K, const int16_t *A, size_t lda, int transA,
                         const int16_t *B, size_t ldb, int transB, int32_t *C, size_t ldc,
                         npu_kwaves_fn kwaves, void *ctx)
{
    size_t max = (size_t)(K > 0 ? K : 1);
    kparts_t p = {kwaves, ctx, malloc(max * sizeof(int)), malloc(max * sizeof(int))};
    int rc = p.k0 && p.k1 ? npu_golden_gemm_bf16_waves(M, N, K, A, lda, transA, B, ldb, transB, C,
                                                       ldc, kparts_list, &p, max)
                          : -1;
    free(p.k0);
    free(p.k1);
    return rc;
}
