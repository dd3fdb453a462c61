/* net_ref.c - the fp32 reference trainer (net_ref.h). Plain loops: it is the yardstick. */
#include "ref/net_ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/digits.h"
#include "ref/bf16.h"

/* ---- shapes ---- */

static int add_layer(npu_net_shape_t *s, int kind, int *h, int *w, int *c, int f, int k, int st,
                     int p, char *why, size_t n)
{
    npu_net_layer_t *l = &s->l[s->layers];
    if (s->layers == NPU_NET_MAX_LAYERS) {
        snprintf(why, n, "more than %d layers", NPU_NET_MAX_LAYERS);
        return -1;
    }
    if (kind == NPU_NET_FC) { /* flattens its input */
        *c = *h * *w * *c;
        *h = *w = 1;
    }
    *l = (npu_net_layer_t){kind, *h, *w, *c, f, k, st, p, 0, 0, 0};
    l->oh = (*h + 2 * p - k) / st + 1;
    l->ow = (*w + 2 * p - k) / st + 1;
    if (f < 1 || f > 65535 || k < 1 || st < 1 || p < 0 || p >= k || *h + 2 * p < k || *w + 2 * p < k) {
        snprintf(why, n, "layer %d: %d outputs, kernel %d, stride %d, padding %d do not fit a "
                 "%dx%dx%d input", s->layers + 1, f, k, st, p, *h, *w, *c);
        return -1;
    }
    *h = l->oh;
    *w = l->ow;
    *c = f;
    s->layers++;
    return 0;
}

/* Layer l's residual connection +J (already parsed into j): J names an earlier activation of
 * l's output shape (h x w x c of the activation, oh x ow x f of the layer). 0 or -1. */
static int set_residual(npu_net_shape_t *s, int l, long j, int h0, int w0, int c0, char *why, size_t n)
{
    npu_net_layer_t *L = &s->l[l];
    if (j < 0 || j > l) {
        snprintf(why, n, "layer %d: +%ld is not an earlier layer (0..%d; 0 the input)", l + 1, j, l);
        return -1;
    }
    const npu_net_layer_t *S = j ? &s->l[j - 1] : NULL;
    int h = S ? S->oh : h0, w = S ? S->ow : w0, c = S ? S->f : c0;
    if (h != L->oh || w != L->ow || c != L->f) {
        snprintf(why, n, "layer %d: +%ld adds a %dx%dx%d output to a %dx%dx%d one (shapes must match)",
                 l + 1, j, h, w, c, L->oh, L->ow, L->f);
        return -1;
    }
    s->res[l] |= (int)j + 1;
    return 0;
}

/* cF[kK][sS][pP][n][+J] or fcN[+J] at t; 0 or -1. h0, w0, c0: the network's input (for +0). */
static int parse_cnn_layer(const char *t, npu_net_shape_t *s, int *h, int *w, int *c, const int *in0,
                           char *why, size_t n)
{
    char *e;
    long f, k = 3, st = 1, p = -1, j = -1;
    int fc = !strncmp(t, "fc", 2), norm = 0;
    if (!fc && *t != 'c')
        goto bad;
    if (!fc && s->layers && s->l[s->layers - 1].kind == NPU_NET_FC) {
        snprintf(why, n, "'%s': a convolution after a fully connected layer", t);
        return -1;
    }
    f = strtol(t + (fc ? 2 : 1), &e, 10);
    while (!fc && (*e == 'k' || *e == 's' || *e == 'p')) {
        char key = *e;
        long v = strtol(e + 1, &e, 10);
        *(key == 'k' ? &k : key == 's' ? &st : &p) = v;
    }
    if (!fc && *e == 'n') { /* the normalisation-like layer after the convolution */
        norm = 1;
        e++;
    }
    if (*e == '+') {
        char *d = e + 1;
        j = strtol(d, &e, 10);
        if (e == d)
            goto bad;
    }
    if (*e && *e != ',')
        goto bad;
    int rc = fc ? add_layer(s, NPU_NET_FC, h, w, c, (int)f, 1, 1, 0, why, n)
                : add_layer(s, NPU_NET_CONV, h, w, c, (int)f, (int)k, (int)st, p < 0 ? (int)k / 2 : (int)p,
                            why, n);
    if (!rc && norm)
        s->res[s->layers - 1] |= NPU_NET_NORM;
    return rc || j < 0 ? rc : set_residual(s, s->layers - 1, j, in0[0], in0[1], in0[2], why, n);
bad:
    snprintf(why, n, "'%.*s' is not a layer (cF[kK][sS][pP][n][+J] or fcN[+J])", (int)strcspn(t, ","), t);
    return -1;
}

int npu_net_parse(const char *spec, int h, int w, int c, npu_net_shape_t *s, char *why, size_t n)
{
    int mlp = !strncmp(spec, "mlp:", 4);
    const char *t = spec + 4;
    const int in0[3] = {h, w, c};
    memset(s, 0, sizeof *s);
    if (!mlp && strncmp(spec, "cnn:", 4)) {
        snprintf(why, n, "'%s' is neither mlp:D0,D1,..,DL nor cnn:LAYER,..", spec);
        return -1;
    }
    for (int first = 1;; first = 0) {
        if (mlp) {
            char *e;
            long v = strtol(t, &e, 10);
            if (e == t || (*e && *e != ',') || v < 1 || v > 65535) {
                snprintf(why, n, "'%s': widths must be numbers in 1..65535", spec);
                return -1;
            }
            if (first && v != (long)h * w * c) {
                snprintf(why, n, "'%s' starts with %ld inputs; the data has %d", spec, v, h * w * c);
                return -1;
            }
            if (!first && add_layer(s, NPU_NET_FC, &h, &w, &c, (int)v, 1, 1, 0, why, n))
                return -1;
        } else if (parse_cnn_layer(t, s, &h, &w, &c, in0, why, n)) {
            return -1;
        }
        t = strchr(t, ',');
        if (!t)
            break;
        t++;
    }
    if (!s->layers)
        snprintf(why, n, "'%s' has no layer", spec);
    return s->layers ? 0 : -1;
}

void npu_net_describe(const npu_net_shape_t *s, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < s->layers && len < n; i++) {
        const npu_net_layer_t *l = &s->l[i];
        if (l->kind == NPU_NET_FC)
            len += (size_t)snprintf(buf + len, n - len, "%sfc%d", i ? "-" : "", l->f);
        else
            len += (size_t)snprintf(buf + len, n - len, "%sc%dk%ds%d%s", i ? "-" : "", l->f, l->k, l->s,
                                    npu_net_normed(s->res[i]) ? "n" : "");
        if (npu_net_skip(s->res[i]) && len < n)
            len += (size_t)snprintf(buf + len, n - len, "+%d", npu_net_skip(s->res[i]) - 1);
    }
}

int npu_net_residual(const npu_net_shape_t *s)
{
    for (int l = 0; l < s->layers; l++)
        if (npu_net_skip(s->res[l]))
            return l;
    return -1;
}

/* ---- parameters ---- */

static float to_bf16_value(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    u = (uint32_t)npu_fp32_to_bf16(u) << 16;
    memcpy(&f, &u, 4);
    return f;
}

int npu_net_init(const npu_net_shape_t *s, uint64_t seed, float **w, float **b)
{
    uint64_t st = seed ^ 0x1A17ull;
    for (int l = 0; l < s->layers; l++)
        w[l] = b[l] = NULL;
    for (int l = 0; l < s->layers; l++) {
        const npu_net_layer_t *L = &s->l[l];
        size_t nw = npu_net_params(L);
        double lim = sqrt(6.0 / ((double)L->k * L->k * (L->c + L->f)));
        w[l] = malloc(nw * sizeof(float));
        b[l] = calloc((size_t)L->f, sizeof(float));
        if (!w[l] || !b[l]) {
            npu_net_params_free(s, w, b);
            return -1;
        }
        for (size_t i = 0; i < nw; i++) {
            double u = (double)(npu_splitmix64(&st) >> 11) * (1.0 / 9007199254740992.0);
            w[l][i] = to_bf16_value((float)((2 * u - 1) * lim));
        }
    }
    return 0;
}

void npu_net_params_free(const npu_net_shape_t *s, float **w, float **b)
{
    for (int l = 0; l < s->layers; l++) {
        free(w[l]);
        free(b[l]);
        w[l] = b[l] = NULL;
    }
}

void npu_net_ref_free(npu_net_ref_t *m)
{
    for (int l = 0; l <= m->shape.layers; l++) {
        free(m->act[l]);
        free(m->grad[l]);
        if (l < m->shape.layers) {
            free(m->w[l]); free(m->b[l]); free(m->vw[l]); free(m->vb[l]);
            free(m->gw[l]); free(m->gb[l]);
            free(m->gam[l]); free(m->bet[l]); free(m->vgam[l]); free(m->vbet[l]);
            free(m->ggam[l]); free(m->gbet[l]); free(m->zc[l]); free(m->dzc[l]);
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

/* Normalised layer l's buffers: gamma = 1, beta = 0 (nb channels), Z and dZ (na values). */
static int norm_new(npu_net_ref_t *m, int l, size_t na, size_t nb)
{
    int ok = (m->gam[l] = dup_or_zero(NULL, nb)) != NULL;
    ok &= (m->bet[l] = dup_or_zero(NULL, nb)) != NULL;
    ok &= (m->vgam[l] = dup_or_zero(NULL, nb)) != NULL;
    ok &= (m->vbet[l] = dup_or_zero(NULL, nb)) != NULL;
    ok &= (m->ggam[l] = dup_or_zero(NULL, nb)) != NULL;
    ok &= (m->gbet[l] = dup_or_zero(NULL, nb)) != NULL;
    ok &= (m->zc[l] = dup_or_zero(NULL, na)) != NULL;
    ok &= (m->dzc[l] = dup_or_zero(NULL, na)) != NULL;
    for (size_t i = 0; ok && i < nb; i++)
        m->gam[l][i] = 1.0f;
    return ok;
}

int npu_net_ref_new(npu_net_ref_t *m, const npu_net_shape_t *s, int batch, float *const *w0,
                    float *const *b0)
{
    int ok = 1;
    memset(m, 0, sizeof *m);
    m->shape = *s;
    m->batch = batch;
    m->gemm = npu_net_gemm_f32;
    m->conv = npu_net_conv_f32;
    for (int l = 0; l <= s->layers; l++) {
        size_t na = (size_t)batch * (l < s->layers ? npu_net_in(&s->l[l]) : npu_net_out(&s->l[l - 1]));
        ok &= (m->act[l] = dup_or_zero(NULL, na)) != NULL;
        ok &= (m->grad[l] = dup_or_zero(NULL, na)) != NULL;
        if (l == s->layers)
            break;
        size_t nw = npu_net_params(&s->l[l]), nb = (size_t)s->l[l].f;
        ok &= (m->w[l] = dup_or_zero(w0[l], nw)) != NULL;
        ok &= (m->b[l] = dup_or_zero(b0[l], nb)) != NULL;
        ok &= (m->vw[l] = dup_or_zero(NULL, nw)) != NULL;
        ok &= (m->vb[l] = dup_or_zero(NULL, nb)) != NULL;
        ok &= (m->gw[l] = dup_or_zero(NULL, nw)) != NULL;
        ok &= (m->gb[l] = dup_or_zero(NULL, nb)) != NULL;
        if (npu_net_normed(s->res[l]) && ok)
            ok = norm_new(m, l, (size_t)batch * npu_net_out(&s->l[l]), nb);
    }
    if (!ok)
        npu_net_ref_free(m);
    return ok ? 0 : -1;
}

/* ---- the kernels on the host ---- */

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

int npu_net_gemm_f32(void *ctx, int M, int N, int K, const float *A, int transA, const float *B,
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

/* The input position of output (oy, ox) under kernel tap (ky, kx); -1 outside the image. */
static long tap(const npu_net_layer_t *L, int b, int oy, int ox, int ky, int kx)
{
    int iy = oy * L->s - L->p + ky, ix = ox * L->s - L->p + kx;
    if (iy < 0 || iy >= L->h || ix < 0 || ix >= L->w)
        return -1;
    return ((long)b * L->h + iy) * L->w + ix;
}

int npu_net_conv_f32(void *ctx, const npu_net_layer_t *L, int batch, int kernel, const float *x,
                     const float *w, const float *dy, float *out)
{
    int K = L->k, F = L->f, C = L->c;
    (void)ctx;
    memset(out, 0, (kernel == NPU_NET_FWD   ? (size_t)batch * npu_net_out(L)
                    : kernel == NPU_NET_DX ? (size_t)batch * npu_net_in(L)
                                           : npu_net_params(L)) * sizeof(float));
    for (int b = 0; b < batch; b++)
        for (int oy = 0; oy < L->oh; oy++)
            for (int ox = 0; ox < L->ow; ox++)
                for (int ky = 0; ky < K; ky++)
                    for (int kx = 0; kx < K; kx++) {
                        long px = tap(L, b, oy, ox, ky, kx), o = ((long)b * L->oh + oy) * L->ow + ox;
                        if (px < 0)
                            continue;
                        for (int f = 0; f < F; f++)
                            for (int c = 0; c < C; c++) {
                                size_t wi = (((size_t)ky * K + kx) * F + f) * C + c;
                                if (kernel == NPU_NET_FWD)
                                    out[o * F + f] += x[px * C + c] * w[wi];
                                else if (kernel == NPU_NET_DX)
                                    out[px * C + c] += dy[o * F + f] * w[wi];
                                else
                                    out[wi] += x[px * C + c] * dy[o * F + f];
                            }
                    }
    return 0;
}

/* ---- training ---- */

static void fail_if(npu_net_ref_t *m, int rc)
{
    if (rc)
        m->failed = 1;
}

/* Layer l's pre-activation output for `rows` samples (no bias yet). */
static void layer_forward(npu_net_ref_t *m, int l, int rows)
{
    const npu_net_layer_t *L = &m->shape.l[l];
    if (L->kind == NPU_NET_FC)
        fail_if(m, m->gemm(m->hook_ctx, rows, L->f, L->c, m->act[l], 0, m->w[l], 0, m->act[l + 1]));
    else
        fail_if(m, m->conv(m->hook_ctx, L, rows, NPU_NET_FWD, m->act[l], m->w[l], NULL, m->act[l + 1]));
}

void npu_net_ref_forward(npu_net_ref_t *m, const float *x, int rows)
{
    const npu_net_shape_t *s = &m->shape;
    memcpy(m->act[0], x, (size_t)rows * npu_net_in(&s->l[0]) * sizeof(float));
    for (int l = 0; l < s->layers; l++) {
        int f = s->l[l].f, relu = l + 1 < s->layers;
        size_t n = (size_t)rows * npu_net_out(&s->l[l]);
        float *y = m->act[l + 1];
        int r = npu_net_skip(s->res[l]);
        const float *skip = r ? m->act[r - 1] : NULL; /* +J: before the ReLU */
        layer_forward(m, l, rows);
        if (m->gam[l]) /* normalised: Z kept for dgamma; N = gamma Z + beta, no conv bias */
            memcpy(m->zc[l], y, n * sizeof(float));
        for (size_t i = 0; i < n; i++) {
            size_t c = i % (size_t)f;
            y[i] = m->gam[l] ? m->gam[l][c] * y[i] + m->bet[l][c] : y[i] + m->b[l][c];
            y[i] += skip ? skip[i] : 0;
            y[i] = relu && y[i] < 0 ? 0 : y[i];
        }
    }
}

/* Normalised layer l (no values): ggam, gbet the sums of dN Z and dN over the samples and
 * pixels, dzc = gamma dN. Returns dzc. */
static const float *norm_backward(npu_net_ref_t *m, int l, size_t no)
{
    size_t f = (size_t)m->shape.l[l].f;
    const float *dn = m->grad[l + 1];
    memset(m->ggam[l], 0, f * sizeof(float));
    memset(m->gbet[l], 0, f * sizeof(float));
    for (size_t i = 0; i < no; i++) {
        m->gbet[l][i % f] += dn[i];
        m->ggam[l][i % f] += dn[i] * m->zc[l][i];
        m->dzc[l][i] = m->gam[l][i % f] * dn[i];
    }
    return m->dzc[l];
}

/* Layer l's gradients from grad[l+1] (dL/d its pre-activation): gw, gb = the sums of g over the
 * samples and positions; and grad[l] = dX masked by act[l] > 0 (layer l-1's ReLU) when l > 0. */
static void backward_layer(npu_net_ref_t *m, int l, int rows)
{
    const npu_net_layer_t *L = &m->shape.l[l];
    const float *g = m->grad[l + 1], *a = m->act[l];
    size_t no = (size_t)rows * npu_net_out(L), ni = (size_t)rows * npu_net_in(L);
    if (m->gam[l]) /* normalised: dgamma, dbeta from dN; the conv's dY is dZ = gamma dN */
        g = norm_backward(m, l, no);
    int fused = L->kind == NPU_NET_CONV && l > 0 && m->conv_bwd;
    if (fused) /* dX and dW of the layer in one call (the NPU: dY read once) */
        fail_if(m, m->conv_bwd(m->hook_ctx, L, rows, a, m->w[l], g, m->grad[l], m->gw[l]));
    else if (L->kind == NPU_NET_FC)
        fail_if(m, m->gemm(m->hook_ctx, L->c, L->f, rows, a, 1, g, 0, m->gw[l])); /* X^T dY */
    else
        fail_if(m, m->conv(m->hook_ctx, L, rows, NPU_NET_DW, a, NULL, g, m->gw[l]));
    for (int j = 0; j < L->f; j++) {
        float acc = 0;
        for (size_t r = (size_t)j; r < no && !m->gam[l]; r += (size_t)L->f)
            acc += g[r];
        m->gb[l][j] = acc; /* 0 when normalised: the bias is unused */
    }
    if (l == 0)
        return;
    if (L->kind == NPU_NET_FC)
        fail_if(m, m->gemm(m->hook_ctx, rows, L->c, L->f, g, 0, m->w[l], 1, m->grad[l])); /* dY W^T */
    else if (!fused)
        fail_if(m, m->conv(m->hook_ctx, L, rows, NPU_NET_DX, NULL, m->w[l], g, m->grad[l]));
    for (int k = l; k < m->shape.layers; k++) /* a skip from act[l]: its gradient joins dX */
        for (size_t i = 0; npu_net_skip(m->shape.res[k]) == l + 1 && i < ni; i++)
            m->grad[l][i] += m->grad[k + 1][i];
    for (size_t i = 0; i < ni; i++)
        m->grad[l][i] = a[i] > 0 ? m->grad[l][i] : 0;
}

static void sgd(float *p, float *v, const float *g, size_t n, const npu_sgd_t *o, float wd)
{
    for (size_t i = 0; i < n; i++) {
        v[i] = o->momentum * v[i] + g[i] + wd * p[i];
        p[i] -= o->lr * v[i];
    }
}

double npu_net_ref_step(npu_net_ref_t *m, const float *x, const uint8_t *labels, const npu_sgd_t *o)
{
    const npu_net_shape_t *s = &m->shape;
    int L = s->layers, rows = m->batch;
    double loss;
    npu_net_ref_forward(m, x, rows);
    loss = npu_softmax_xent(m->act[L], labels, rows, s->l[L - 1].f, m->grad[L]);
    for (int l = L - 1; l >= 0; l--)
        backward_layer(m, l, rows); /* uses w[l] before its update below */
    for (int l = 0; l < L; l++) {
        sgd(m->w[l], m->vw[l], m->gw[l], npu_net_params(&s->l[l]), o, o->wd);
        sgd(m->b[l], m->vb[l], m->gb[l], (size_t)s->l[l].f, o, 0);
        if (m->gam[l]) {
            sgd(m->gam[l], m->vgam[l], m->ggam[l], (size_t)s->l[l].f, o, 0);
            sgd(m->bet[l], m->vbet[l], m->gbet[l], (size_t)s->l[l].f, o, 0);
        }
    }
    return loss;
}

int npu_net_ref_correct(npu_net_ref_t *m, const float *x, const uint8_t *labels, int rows)
{
    int L = m->shape.layers, C = m->shape.l[L - 1].f, ok = 0;
    npu_net_ref_forward(m, x, rows);
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
