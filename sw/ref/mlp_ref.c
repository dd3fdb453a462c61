/* mlp_ref.c - the fp32 reference MLP trainer (mlp_ref.h). Plain loops: it is the yardstick. */
#include "ref/mlp_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/digits.h"
#include "ref/bf16.h"

int npu_mlp_shape_parse(const char *spec, npu_mlp_shape_t *s)
{
    const char *p = spec;
    memset(s, 0, sizeof *s);
    for (int i = 0;; i++) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > 65535 || i > NPU_MLP_MAX_LAYERS)
            return -1;
        s->n[i] = (int)v;
        if (*end == 0) {
            s->layers = i;
            return i >= 1 ? 0 : -1;
        }
        if (*end != ',')
            return -1;
        p = end + 1;
    }
}

static float to_bf16_value(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    u = (uint32_t)npu_fp32_to_bf16(u) << 16;
    memcpy(&f, &u, 4);
    return f;
}

int npu_mlp_init(const npu_mlp_shape_t *s, uint64_t seed, float **w, float **b)
{
    uint64_t st = seed ^ 0x1A17ull;
    for (int l = 0; l < s->layers; l++)
        w[l] = b[l] = NULL;
    for (int l = 0; l < s->layers; l++) {
        size_t nw = (size_t)s->n[l] * (size_t)s->n[l + 1];
        double lim = sqrt(6.0 / (s->n[l] + s->n[l + 1]));
        w[l] = malloc(nw * sizeof(float));
        b[l] = calloc((size_t)s->n[l + 1], sizeof(float));
        if (!w[l] || !b[l]) {
            npu_mlp_params_free(s, w, b);
            return -1;
        }
        for (size_t i = 0; i < nw; i++) {
            double u = (double)(npu_splitmix64(&st) >> 11) * (1.0 / 9007199254740992.0);
            w[l][i] = to_bf16_value((float)((2 * u - 1) * lim));
        }
    }
    return 0;
}

void npu_mlp_params_free(const npu_mlp_shape_t *s, float **w, float **b)
{
    for (int l = 0; l < s->layers; l++) {
        free(w[l]);
        free(b[l]);
        w[l] = b[l] = NULL;
    }
}

void npu_mlp_ref_free(npu_mlp_ref_t *m)
{
    for (int l = 0; l <= m->shape.layers; l++) {
        free(m->act[l]);
        free(m->grad[l]);
        if (l < m->shape.layers) {
            free(m->w[l]); free(m->b[l]); free(m->vw[l]); free(m->vb[l]);
            free(m->gw[l]); free(m->gb[l]);
        }
    }
    memset(m, 0, sizeof *m);
}

static float *dup_or_zero(const float *src, size_t n)
{
    float *p = calloc(n, sizeof(float));
    if (p && src)
        memcpy(p, src, n * sizeof(float));
    return p;
}

int npu_mlp_ref_new(npu_mlp_ref_t *m, const npu_mlp_shape_t *s, int batch, float *const *w0,
                    float *const *b0)
{
    int ok = 1;
    memset(m, 0, sizeof *m);
    m->shape = *s;
    m->batch = batch;
    m->gemm = npu_mlp_gemm_f32;
    for (int l = 0; l <= s->layers; l++) {
        size_t na = (size_t)batch * (size_t)s->n[l];
        ok &= (m->act[l] = dup_or_zero(NULL, na)) != NULL;
        ok &= (m->grad[l] = dup_or_zero(NULL, na)) != NULL;
        if (l == s->layers)
            break;
        size_t nw = (size_t)s->n[l] * (size_t)s->n[l + 1], nb = (size_t)s->n[l + 1];
        ok &= (m->w[l] = dup_or_zero(w0[l], nw)) != NULL;
        ok &= (m->b[l] = dup_or_zero(b0[l], nb)) != NULL;
        ok &= (m->vw[l] = dup_or_zero(NULL, nw)) != NULL;
        ok &= (m->vb[l] = dup_or_zero(NULL, nb)) != NULL;
        ok &= (m->gw[l] = dup_or_zero(NULL, nw)) != NULL;
        ok &= (m->gb[l] = dup_or_zero(NULL, nb)) != NULL;
    }
    if (!ok)
        npu_mlp_ref_free(m);
    return ok ? 0 : -1;
}

double npu_softmax_xent(const float *logits, const uint8_t *labels, int rows, int classes,
                        float *dlogits)
{
    double loss = 0;
    for (int r = 0; r < rows; r++) {
        const float *z = logits + (size_t)r * classes;
        double mx = z[0], sum = 0;
        for (int c = 1; c < classes; c++)
            mx = z[c] > mx ? z[c] : mx;
        for (int c = 0; c < classes; c++)
            sum += exp(z[c] - mx);
        loss += log(sum) - (z[labels[r]] - mx);
        if (dlogits)
            for (int c = 0; c < classes; c++)
                dlogits[(size_t)r * classes + c] =
                    (float)((exp(z[c] - mx) / sum - (c == labels[r])) / rows);
    }
    return loss / rows;
}

int npu_mlp_gemm_f32(void *ctx, int M, int N, int K, const float *A, int transA, const float *B,
                     int transB, float *C)
{
    (void)ctx;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0;
            for (int k = 0; k < K; k++)
                acc += (transA ? A[(size_t)k * M + i] : A[(size_t)i * K + k]) *
                       (transB ? B[(size_t)j * K + k] : B[(size_t)k * N + j]);
            C[(size_t)i * N + j] = acc;
        }
    return 0;
}

static void gemm(npu_mlp_ref_t *m, int M, int N, int K, const float *A, int transA,
                 const float *B, int transB, float *C)
{
    if (m->gemm(m->gemm_ctx, M, N, K, A, transA, B, transB, C))
        m->failed = 1;
}

void npu_mlp_ref_forward(npu_mlp_ref_t *m, const float *x, int rows)
{
    const npu_mlp_shape_t *s = &m->shape;
    memcpy(m->act[0], x, (size_t)rows * s->n[0] * sizeof(float));
    for (int l = 0; l < s->layers; l++) {
        int n = s->n[l + 1], relu = l + 1 < s->layers;
        float *y = m->act[l + 1];
        gemm(m, rows, n, s->n[l], m->act[l], 0, m->w[l], 0, y);
        for (size_t i = 0; i < (size_t)rows * n; i++) {
            y[i] += m->b[l][i % n];
            y[i] = relu && y[i] < 0 ? 0 : y[i];
        }
    }
}

/* Layer l's gradients from grad[l+1] (dL/d its pre-activation): gw = act[l]^T g, gb = column
 * sums of g; and grad[l] = (g w^T) masked by act[l] > 0 (the ReLU of layer l-1) when l > 0. */
static void backward_layer(npu_mlp_ref_t *m, int l, int rows)
{
    int k = m->shape.n[l], n = m->shape.n[l + 1];
    const float *g = m->grad[l + 1], *a = m->act[l];
    gemm(m, k, n, rows, a, 1, g, 0, m->gw[l]); /* dW = X^T dY */
    for (int j = 0; j < n; j++) {
        float acc = 0;
        for (int r = 0; r < rows; r++)
            acc += g[(size_t)r * n + j];
        m->gb[l][j] = acc;
    }
    if (l == 0)
        return;
    gemm(m, rows, k, n, g, 0, m->w[l], 1, m->grad[l]); /* dX = dY W^T */
    for (size_t i = 0; i < (size_t)rows * k; i++)
        m->grad[l][i] = a[i] > 0 ? m->grad[l][i] : 0;
}

static void sgd(float *p, float *v, const float *g, size_t n, const npu_sgd_t *o, float wd)
{
    for (size_t i = 0; i < n; i++) {
        v[i] = o->momentum * v[i] + g[i] + wd * p[i];
        p[i] -= o->lr * v[i];
    }
}

double npu_mlp_ref_step(npu_mlp_ref_t *m, const float *x, const uint8_t *labels, const npu_sgd_t *o)
{
    const npu_mlp_shape_t *s = &m->shape;
    int L = s->layers, rows = m->batch;
    double loss;
    npu_mlp_ref_forward(m, x, rows);
    loss = npu_softmax_xent(m->act[L], labels, rows, s->n[L], m->grad[L]);
    for (int l = L - 1; l >= 0; l--)
        backward_layer(m, l, rows); /* uses w[l] before its update below */
    for (int l = 0; l < L; l++) {
        sgd(m->w[l], m->vw[l], m->gw[l], (size_t)s->n[l] * s->n[l + 1], o, o->wd);
        sgd(m->b[l], m->vb[l], m->gb[l], (size_t)s->n[l + 1], o, 0);
    }
    return loss;
}

int npu_mlp_ref_correct(npu_mlp_ref_t *m, const float *x, const uint8_t *labels, int rows)
{
    int L = m->shape.layers, C = m->shape.n[L], ok = 0;
    npu_mlp_ref_forward(m, x, rows);
    for (int r = 0; r < rows; r++) {
        const float *z = m->act[L] + (size_t)r * C;
        int best = 0;
        for (int c = 1; c < C; c++)
            if (z[c] > z[best])
                best = c;
        ok += best == labels[r];
    }
    return ok;
}
