/* bwd_golden_bf16.c - the order-matched bf16 golden of the fused backward; see bwd_golden_bf16.h. */
#include "ref/bwd_golden_bf16.h"

static long lmin(long a, long b) { return a < b ? a : b; }

static long dim_of(const npu_bwd_sumplan_t *p, int d)
{
    return d == NPU_SUM_M ? p->M : d == NPU_SUM_N ? p->N : p->K;
}

/* The plan describes parts that tile their split dim in order. */
static int plan_ok(const npu_bwd_sumplan_t *p)
{
    int seen = 0;
    if (p->depth < 1 || p->nparts < 1 || p->nparts > NPU_BWD_SUM_PARTS || p->split < -1 ||
        p->split > NPU_SUM_K || (p->split < 0 && p->nparts != 1))
        return 0;
    for (int q = 0; q < p->nparts; q++) {
        if (p->order[q] < 0 || p->order[q] >= p->nparts || (seen >> p->order[q]) & 1)
            return 0;
        seen |= 1 << p->order[q];
        if (p->split >= 0 && (p->lo[q] < 0 || p->lo[q + 1] <= p->lo[q]))
            return 0;
    }
    return p->split < 0 || p->lo[p->nparts] <= dim_of(p, p->split);
}

/* The waves of the tiles of [lo, hi) (tile T, 0: one) appended at w[*n]; *first: the output
 * has no op yet (its first op writes, later ones DRAIN acc). */
static void range_waves(long lo, long hi, long T, int depth, int *first, npu_kwave_t *w,
                        size_t max, size_t *n)
{
    for (long t0 = lo; t0 < hi; t0 += T > 0 ? T : hi - lo) {
        long t1 = T > 0 ? lmin(hi, t0 + T) : hi;
        for (long k = t0; k < t1; k += depth, (*n)++)
            if (*n < max) {
                w[*n].k0 = (int)k;
                w[*n].k1 = (int)lmin(k + depth, t1);
                w[*n].start = k > t0 ? NPU_CW_ADD : *first ? NPU_CW_WRITE : NPU_CW_ACC;
            }
        *first = 0;
    }
}

/* npu_bwd_sum_waves of a plan already checked (plan_ok): the golden asks once per output. */
static size_t sum_waves(const npu_bwd_sumplan_t *p, int grad, long i, long j, npu_kwave_t *w, size_t max)
{
    int r = grad == NPU_BWD_DX ? NPU_SUM_N : NPU_SUM_M;
    /* the dims of the output's row and column */
    int di = grad == NPU_BWD_DX ? NPU_SUM_M : NPU_SUM_K, dj = grad == NPU_BWD_DX ? NPU_SUM_K : NPU_SUM_N;
    long R = dim_of(p, r), at = p->split == di ? i : j;
    int first = 1, q = 0;
    size_t n = 0;
    if (p->split == r) {
        for (int c = 0; c < p->nparts; c++) {
            q = p->order[c];
            range_waves(p->lo[q], p->lo[q + 1], p->tile[q][r], p->depth, &first, w, max, &n);
        }
        return n;
    }
    if (p->split == di || p->split == dj)
        while (q + 1 < p->nparts && at >= p->lo[q + 1])
            q++;
    range_waves(0, R, p->tile[q][r], p->depth, &first, w, max, &n);
    return n;
}

size_t npu_bwd_sum_waves(const npu_bwd_sumplan_t *p, int grad, long i, long j, npu_kwave_t *w,
                         size_t max)
{
    return plan_ok(p) ? sum_waves(p, grad, i, j, w, max) : 0;
}

typedef struct gctx {
    const npu_bwd_sumplan_t *p;
    int grad;
} gctx_t;

static size_t list(void *ctx, int i, int j, npu_kwave_t *w, size_t max)
{
    const gctx_t *g = ctx;
    return sum_waves(g->p, g->grad, i, j, w, max);
}

int npu_bwd_golden_bf16(const npu_bwd_sumplan_t *p, int grad, const int16_t *X, const int16_t *W,
                        const int16_t *dY, int32_t *out)
{
    gctx_t g = {p, grad};
    size_t M = (size_t)p->M, N = (size_t)p->N, K = (size_t)p->K;
    if (!plan_ok(p))
        return -1;
    if (grad == NPU_BWD_DX) /* dX = dY . W^T: K x N W read transposed */
        return npu_golden_gemm_bf16_waves((int)M, (int)K, (int)N, dY, N, 0, W, N, 1, out, K, list,
                                          &g, N);
    /* dW = X^T . dY: X read transposed */
    return npu_golden_gemm_bf16_waves((int)K, (int)N, (int)M, X, K, 1, dY, N, 0, out, N, list, &g, M);
}
