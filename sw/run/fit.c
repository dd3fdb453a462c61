/* fit.c - `npu fit`: the training loop over epochs and batches, the NPU GEMM engine (fit.h). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "run/fit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compile/step/step_res.h"
#include "ref/bf16.h"
#include "run/conv_bwd_run.h"
#include "run/conv_run.h"
#include "run/runtime.h"
#include "run/step_run.h"

/* The NPU engine's state: the simulator and the epoch's tallies. */
typedef struct fit_npu {
    const npu_cfg_t *cfg;
    npu_sim_t *sim;
    const npu_fit_opts_t *o;
    uint64_t cycles;
    long kernels, fails;
    char why[512]; /* the first failure */
} fit_npu_t;

/* The largest |v[i]|. */
static double max_abs(const float *v, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m = fabs((double)v[i]) > m ? fabs((double)v[i]) : m;
    return m;
}

int npu_fit_i16_scale(const float *x, size_t n, int K)
{
    float mx = (float)max_abs(x, n);
    int lg = 0, bits, e;
    if (mx == 0)
        return 0;
    while ((1 << lg) < K)
        lg++;
    bits = 15 - (lg + 1) / 2;
    /* largest e with round(mx * 2^e) < 2^bits */
    e = bits - 1 - (int)floor(log2(mx));
    while (e > -126 && nearbyint(ldexp(mx, e)) >= ldexp(1, bits))
        e--;
    return e;
}

static float bits_to_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* fp32 -> the NPU's 16-bit operand: bf16 (RNE) or round(x * 2^e) for int16. */
static void to_npu(const npu_cfg_t *cfg, const float *x, size_t n, int e, int16_t *out)
{
    for (size_t i = 0; i < n; i++) {
        if (npu_cfg_bf16(cfg)) {
            uint32_t u;
            memcpy(&u, &x[i], 4);
            out[i] = (int16_t)npu_fp32_to_bf16(u);
        } else {
            out[i] = (int16_t)nearbyint(ldexp(x[i], e));
        }
    }
}

/* An fp32 operand as the NPU's int16 or bf16 (exponent: the int16 scale, 0 for bf16). */
static int16_t *operand(const fit_npu_t *f, const float *x, size_t n, int K, int *e)
{
    int16_t *v = x ? malloc(n * 2) : NULL;
    *e = x && !npu_cfg_bf16(f->cfg) ? npu_fit_i16_scale(x, n, K) : 0;
    if (v)
        to_npu(f->cfg, x, n, *e, v);
    return v;
}

/* The NPU's int32 / fp32 result as fp32 (int16: scaled back by 2^-e). */
static void result(const fit_npu_t *f, const int32_t *c32, size_t n, int e, float *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = npu_cfg_bf16(f->cfg) ? bits_to_f32((uint32_t)c32[i]) : (float)ldexp((double)c32[i], -e);
}

/* Counts a kernel's run; the first failure's text in f->why. 0 or -1. */
static int tally(fit_npu_t *f, int rc, uint64_t cycles, const char *what, const char *msg)
{
    f->kernels++;
    f->cycles += cycles;
    if (rc != NPU_GEMM_PASS && !f->fails++)
        snprintf(f->why, sizeof f->why, "%.160s: %s%s%.256s", what, npu_gemm_rc_name(rc), *msg ? ": " : "",
                 msg);
    return rc == NPU_GEMM_PASS ? 0 : -1;
}

static int fit_npu_gemm(void *ctx, int M, int N, int K, const float *A, int transA,
                        const float *B, int transB, float *C)
{
    fit_npu_t *f = ctx;
    size_t nc = (size_t)M * N;
    int ea, eb, rc = NPU_GEMM_HOST_ERROR;
    int16_t *a16 = operand(f, A, (size_t)M * K, K, &ea), *b16 = operand(f, B, (size_t)K * N, K, &eb);
    int32_t *c32 = malloc(nc * 4);
    char what[96];
    npu_gemm_report_t rep;
    memset(&rep, 0, sizeof rep);
    if (a16 && b16 && c32)
        rc = npu_gemm_run_modes(f->cfg, f->sim, M, N, K, a16, b16, transA, transB, f->o->modes,
                                c32, f->o->max_cycles, &rep);
    if (rc == NPU_GEMM_PASS)
        result(f, c32, nc, ea + eb, C);
    snprintf(what, sizeof what, "GEMM %dx%dx%d%s%s", M, N, K, transA ? " transA" : "",
             transB ? " transB" : "");
    rc = tally(f, rc, rep.run.cnt[NPU_CNT_cycles], what, rep.host_msg);
    npu_gemm_report_free(&rep);
    free(a16);
    free(b16);
    free(c32);
    return rc;
}

/* The NPU's description of layer L over `batch` images. */
static npu_conv_t conv_of(const npu_net_layer_t *L, int batch)
{
    npu_conv_t c = {batch, L->c, L->h, L->w, L->f, L->k, L->k, L->s, L->p, 1, 0};
    return c;
}

static int fit_npu_conv(void *ctx, const npu_net_layer_t *L, int batch, int kernel, const float *x,
                        const float *w, const float *dy, float *out)
{
    fit_npu_t *f = ctx;
    npu_conv_t c = conv_of(L, batch);
    int kk = L->k * L->k, rows, cols, ex, ew, ed, rc = NPU_GEMM_HOST_ERROR;
    int k_red = kernel == NPU_NET_FWD ? kk * L->c : kernel == NPU_NET_DX ? kk * L->f
                                                                        : batch * L->oh * L->ow;
    int16_t *x16 = operand(f, x, npu_conv_x_elems(&c), k_red, &ex);
    int16_t *w16 = operand(f, w, npu_conv_w_elems(&c), k_red, &ew);
    int16_t *d16 = operand(f, dy, npu_conv_y_elems(&c), k_red, &ed);
    npu_conv_report_t rep;
    char what[160], desc[96];
    npu_conv_out_shape(&c, kernel, &rows, &cols);
    int32_t *c32 = malloc((size_t)rows * cols * 4);
    npu_conv_io_t io = {x16, w16, d16, c32, NULL, 0};
    memset(&rep, 0, sizeof rep);
    if (c32 && (x16 || !x) && (w16 || !w) && (d16 || !dy))
        rc = npu_conv_run_io(f->cfg, f->sim, &c, kernel, NPU_CONV_ECOFLOW, f->o->seed,
                             f->o->max_cycles, &io, &rep);
    if (rc == NPU_GEMM_PASS)
        result(f, c32, (size_t)rows * cols, kernel == NPU_NET_FWD ? ex + ew
                                            : kernel == NPU_NET_DX ? ed + ew : ex + ed, out);
    npu_conv_str(&c, desc, sizeof desc);
    snprintf(what, sizeof what, "conv %s %s", npu_conv_kernel_name(kernel), desc);
    rc = tally(f, rc, rep.cycles, what, rep.msg);
    free(x16);
    free(w16);
    free(d16);
    free(c32);
    return rc;
}

/* A convolution layer's dX and dW in one program that reads dY once (run/conv_bwd_run.h): one
 * int16 scale for dY with the headroom of the longer of its two reductions. A layer the fused
 * kernel does not take (past its limits: npu_conv_bwd_plan) runs as the two kernels. */
static int fit_npu_conv_bwd(void *ctx, const npu_net_layer_t *L, int batch, const float *x,
                            const float *w, const float *dy, float *dx, float *dw)
{
    fit_npu_t *f = ctx;
    npu_conv_t c = conv_of(L, batch);
    char what[160], desc[96];
    if (!npu_conv_bwd_supported(f->cfg, &c, what, sizeof what))
        return fit_npu_conv(ctx, L, batch, NPU_NET_DW, x, NULL, dy, dw) ||
               fit_npu_conv(ctx, L, batch, NPU_NET_DX, NULL, w, dy, dx) ? -1 : 0;
    int k_dx = L->k * L->k * L->f, k_dw = batch * L->oh * L->ow, ex, ew, ed, rc = NPU_GEMM_HOST_ERROR;
    size_t nx = npu_conv_x_elems(&c), nw = npu_conv_w_elems(&c);
    int16_t *x16 = operand(f, x, nx, k_dw, &ex), *w16 = operand(f, w, nw, k_dx, &ew);
    int16_t *d16 = operand(f, dy, npu_conv_y_elems(&c), k_dx > k_dw ? k_dx : k_dw, &ed);
    int32_t *dx32 = malloc(nx * 4), *dw32 = malloc(nw * 4);
    npu_conv_bwd_report_t rep;
    memset(&rep, 0, sizeof rep);
    if (x16 && w16 && d16 && dx32 && dw32) {
        npu_conv_bwd_io_t io = {x16, w16, d16, dx32, dw32, 0};
        rc = npu_conv_bwd_run(f->cfg, f->sim, &c, f->o->seed, f->o->max_cycles, &io, &rep);
    }
    if (rc == NPU_GEMM_PASS) {
        result(f, dx32, nx, ed + ew, dx);
        result(f, dw32, nw, ex + ed, dw);
    }
    npu_conv_str(&c, desc, sizeof desc);
    snprintf(what, sizeof what, "conv bwd (fused) %s", desc);
    rc = tally(f, rc, rep.cycles, what, rep.msg);
    free(x16);
    free(w16);
    free(d16);
    free(dx32);
    free(dw32);
    return rc;
}

/* Rows idx[0..rows) of the data set as fp32 inputs in [0, 1] (pixel / 16) and their labels. */
static void gather(const npu_dataset_t *d, const int *idx, int rows, float *x, uint8_t *y)
{
    for (int r = 0; r < rows; r++) {
        for (int j = 0; j < d->features; j++)
            x[(size_t)r * d->features + j] = d->x[(size_t)idx[r] * d->features + j] / 16.0f;
        y[r] = d->label[idx[r]];
    }
}

/* Accuracy of m over the samples idx[0..n), in chunks of the model's batch. */
static double accuracy(npu_net_ref_t *m, const npu_dataset_t *d, const int *idx, int n,
                       float *x, uint8_t *y)
{
    long ok = 0;
    for (int i = 0; i < n; i += m->batch) {
        int rows = n - i < m->batch ? n - i : m->batch;
        gather(d, idx + i, rows, x, y);
        ok += npu_net_ref_correct(m, x, y, rows);
    }
    return n ? (double)ok / n : 0;
}

int npu_fit_check(const npu_dataset_t *d, const npu_fit_opts_t *o, char *why, size_t n)
{
    int L = o->shape.layers, n_train = d->n - (int)(d->n * o->test_frac + 0.5);
    if (!(o->test_frac > 0 && o->test_frac < 1)) {
        snprintf(why, n, "the held-out share %g must be in (0, 1)", o->test_frac);
        return -1;
    }
    const npu_net_layer_t *in = &o->shape.l[0], *out = &o->shape.l[L - 1];
    if (L < 1 || npu_net_in(in) != (size_t)d->features || npu_net_out(out) != (size_t)d->classes) {
        snprintf(why, n, "--model must take %d inputs and end with %d classes, got %zu and %zu",
                 d->features, d->classes, L ? npu_net_in(in) : 0, L ? npu_net_out(out) : 0);
        return -1;
    }
    if (o->batch < 1 || o->batch > n_train) {
        snprintf(why, n, "--batch %d must be in 1..%d (the training samples)", o->batch, n_train);
        return -1;
    }
    if (o->epochs < 1) {
        snprintf(why, n, "--epochs must be at least 1");
        return -1;
    }
    return 0;
}

/* The training state: the engine's model (its GEMMs on the NPU or the host), the fp32
 * reference beside it (NPU engine only), their buffers. */
typedef struct fit_state {
    npu_split_t split;
    npu_net_ref_t model, ref;
    fit_npu_t npu;
    int have_ref;
    npu_step_run_t step; /* NPU_FIT_STEP: the NPU's model; `model` is then the fp32 reference */
    int have_step;
    float *logits, *dlogits;
    float *x;
    uint8_t *y;
    int *order;
} fit_state_t;

static void state_free(fit_state_t *s)
{
    npu_split_free(&s->split);
    npu_net_ref_free(&s->model);
    if (s->have_ref)
        npu_net_ref_free(&s->ref);
    if (s->have_step)
        npu_step_run_free(&s->step);
    free(s->logits);
    free(s->dlogits);
    free(s->x);
    free(s->y);
    free(s->order);
}

/* The model's leading convolution layers (at `batch`) and its head's widths fc[0..n_fc]; the
 * number of convolution layers, or -1 when a convolution follows a fully connected layer. */
int npu_fit_cnn_layers(const npu_net_shape_t *s, int batch, npu_conv_t *conv, int *fc, int *n_fc)
{
    int n_conv = 0;
    while (n_conv < s->layers && s->l[n_conv].kind == NPU_NET_CONV) {
        if (n_conv < NPU_STEP_MAX_LAYERS)
            conv[n_conv] = conv_of(&s->l[n_conv], batch);
        n_conv++;
    }
    *n_fc = s->layers - n_conv;
    for (int l = n_conv; l < s->layers; l++) {
        if (s->l[l].kind != NPU_NET_FC || s->res[l]) /* skips and norms: convolutions only */
            return -1;
        if (l - n_conv <= NPU_STEP_MAX_LAYERS)
            fc[l - n_conv] = (int)npu_net_in(&s->l[l]);
    }
    if (*n_fc >= 1 && *n_fc <= NPU_STEP_MAX_LAYERS)
        fc[*n_fc] = (int)npu_net_out(&s->l[s->layers - 1]);
    return n_conv;
}

int npu_fit_step_ok(const npu_cfg_t *cfg, const npu_net_shape_t *s, char *why, size_t n)
{
    npu_conv_t conv[NPU_STEP_MAX_LAYERS];
    int fc[NPU_STEP_MAX_LAYERS + 1], n_fc, n_conv = npu_fit_cnn_layers(s, 1, conv, fc, &n_fc);
    if (n_conv < 0) {
        snprintf(why, n, "whole steps take convolutions followed by fully connected layers, residual "
                 "connections between convolutions");
        return -1;
    }
    if (s->layers > NPU_STEP_MAX_LAYERS) {
        snprintf(why, n, "%d layers: at most %d in a whole step", s->layers, NPU_STEP_MAX_LAYERS);
        return -1;
    }
    if (n_conv == 0) /* both dtypes: int16 with static scales (step_calibrate) */
        return 0;
    npu_step_plan_t *p = malloc(sizeof *p); /* the plan's own checks: layers that plan */
    int rc = !p ? -1 : npu_step_plan_cnn_res(cfg, conv, n_conv, s->res, fc, n_fc, 1, 0.1f, 0.9f, 0, 0, NULL, 0, p, why, n);
    if (!p)
        snprintf(why, n, "out of memory");
    else if (rc == 0)
        npu_step_plan_free(p);
    free(p);
    return rc;
}

/* Normalised layer l's magnitudes (1-based, net_ref's layer l - 1) after m's step: Z, gamma, the
 * pre-ReLU sum N = gamma Z + beta (+ the skip), dN, the conv's dZ = gamma dN, dgamma, dbeta. */
static void norm_range(const npu_net_ref_t *m, int l, int B, npu_step_range_t *r)
{
    const npu_net_shape_t *s = &m->shape;
    int f = s->l[l - 1].f, j = npu_net_skip(s->res[l - 1]);
    size_t n = (size_t)B * npu_net_out(&s->l[l - 1]);
    const float *skip = j ? m->act[j - 1] : NULL;
    double nmax = 0;
    for (size_t i = 0; i < n; i++) {
        double v = fabs((double)m->gam[l - 1][i % f] * m->zc[l - 1][i] + m->bet[l - 1][i % f] + (skip ? skip[i] : 0));
        nmax = v > nmax ? v : nmax;
    }
    r->normed[l] = 1;
    r->zc[l] = max_abs(m->zc[l - 1], n);
    r->gam[l] = max_abs(m->gam[l - 1], (size_t)f);
    r->n[l] = nmax;
    r->dn[l] = r->dz[l];
    r->dz[l] = max_abs(m->dzc[l - 1], n);
    r->dg[l] = max_abs(m->ggam[l - 1], (size_t)f);
    r->dbn[l] = max_abs(m->gbet[l - 1], (size_t)f);
}

void npu_fit_step_q(const npu_net_ref_t *m, float *const *w, float momentum, npu_step_q_t *q)
{
    const npu_net_shape_t *s = &m->shape;
    npu_step_range_t r;
    int L = s->layers, B = m->batch;
    memset(&r, 0, sizeof r);
    r.x = max_abs(m->act[0], (size_t)B * npu_net_in(&s->l[0]));
    r.z_top = max_abs(m->act[L], (size_t)B * npu_net_out(&s->l[L - 1]));
    for (int l = 1; l <= L; l++) {
        size_t out = (size_t)B * npu_net_out(&s->l[l - 1]);
        r.w[l] = max_abs(w[l - 1], npu_net_params(&s->l[l - 1]));
        r.h[l] = l < L ? max_abs(m->act[l], out) : 0;
        r.dz[l] = max_abs(m->grad[l], out);
        r.dw[l] = max_abs(m->gw[l - 1], npu_net_params(&s->l[l - 1]));
        r.db[l] = max_abs(m->gb[l - 1], (size_t)s->l[l - 1].f); /* a bias per filter */
        if (m->gam[l - 1])
            norm_range(m, l, B, &r);
    }
    npu_step_q_pick(&r, L, momentum, q);
    if (s->l[0].kind == NPU_NET_CONV)
        npu_step_q_cap_sums(&r, L, q);
}

/* The int16 step's static scales (compile/step/step_scale.h) from one step of the fp32
 * reference on the first training batch, before training (npu_fit_step_q). 0 or -1 (out of
 * memory). */
static int step_calibrate(fit_state_t *s, const npu_dataset_t *d, const npu_fit_opts_t *o, float *const *w,
                          float *const *b, npu_step_q_t *q)
{
    npu_net_ref_t m;
    if (npu_net_ref_new(&m, &o->shape, o->batch, w, b))
        return -1;
    gather(d, s->split.train, o->batch, s->x, s->y);
    npu_net_ref_step(&m, s->x, s->y, &o->sgd);
    npu_fit_step_q(&m, w, o->sgd.momentum, q);
    npu_net_ref_free(&m);
    return 0;
}

/* The logits and their gradient of the step engine's batch. 0 or -1. */
static int step_buffers(fit_state_t *s, int batch, int classes, char *why, size_t n)
{
    s->logits = malloc((size_t)batch * classes * sizeof(float));
    s->dlogits = malloc((size_t)batch * classes * sizeof(float));
    if (!s->logits || !s->dlogits) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    return 0;
}

/* The whole-step engine of a CNN: its plan (int16: with calibrated scales), programs and initial
 * parameters. */
static int step_init_cnn(fit_state_t *s, const npu_cfg_t *cfg, npu_sim_t *sim, const npu_dataset_t *d,
                         const npu_fit_opts_t *o, float *const *w, float *const *b, char *why, size_t n)
{
    npu_conv_t conv[NPU_STEP_MAX_LAYERS];
    int fc[NPU_STEP_MAX_LAYERS + 1], n_fc, n_conv = npu_fit_cnn_layers(&o->shape, o->batch, conv, fc, &n_fc);
    npu_step_q_t q;
    if (!npu_cfg_bf16(cfg) && step_calibrate(s, d, o, w, b, &q)) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    s->have_step = 1;
    if (npu_step_run_init_cnn(&s->step, cfg, sim, conv, n_conv, o->shape.res, fc, n_fc, o->batch, o->sgd.lr, o->sgd.momentum,
                              o->sgd.wd, o->modes, npu_cfg_bf16(cfg) ? NULL : &q, o->max_cycles) ||
        (o->res_banks && npu_step_run_resident_ex(&s->step, o->res_banks, 0, o->res_overlap))) {
        snprintf(why, n, "%s", s->step.why);
        return -1;
    }
    npu_step_run_params(&s->step, w, b);
    return step_buffers(s, o->batch, fc[n_fc], why, n);
}

/* The whole-step engine: its plan (int16: with calibrated scales), programs and initial
 * parameters in the NPU's DRAM. */
static int step_init(fit_state_t *s, const npu_cfg_t *cfg, npu_sim_t *sim, const npu_dataset_t *d,
                     const npu_fit_opts_t *o, float *const *w, float *const *b, char *why, size_t n)
{
    int dims[NPU_NET_MAX_LAYERS + 1], L = o->shape.layers;
    npu_step_q_t q;
    if (npu_fit_step_ok(cfg, &o->shape, why, n))
        return -1;
    if (o->shape.l[0].kind == NPU_NET_CONV)
        return step_init_cnn(s, cfg, sim, d, o, w, b, why, n);
    for (int l = 0; l < L; l++)
        dims[l] = (int)npu_net_in(&o->shape.l[l]);
    dims[L] = (int)npu_net_out(&o->shape.l[L - 1]);
    if (!npu_cfg_bf16(cfg) && step_calibrate(s, d, o, w, b, &q)) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    s->have_step = 1;
    if (npu_step_run_init_q(&s->step, cfg, sim, dims, L, o->batch, o->sgd.lr, o->sgd.momentum, o->sgd.wd,
                            o->modes, npu_cfg_bf16(cfg) ? NULL : &q, o->max_cycles)) {
        snprintf(why, n, "%s", s->step.why);
        return -1;
    }
    if (o->res_banks && npu_step_run_resident_ex(&s->step, o->res_banks, 0, o->res_overlap)) {
        snprintf(why, n, "%s", s->step.why);
        return -1;
    }
    npu_step_run_params(&s->step, w, b);
    return step_buffers(s, o->batch, dims[L], why, n);
}

static int state_init(fit_state_t *s, const npu_cfg_t *cfg, npu_sim_t *sim, const npu_dataset_t *d,
                      const npu_fit_opts_t *o, char *why, size_t n)
{
    float *w[NPU_NET_MAX_LAYERS] = {0}, *b[NPU_NET_MAX_LAYERS] = {0};
    int rc = -1;
    memset(s, 0, sizeof *s);
    if (npu_fit_check(d, o, why, n))
        return -1;
    if (npu_split_make(d->n, o->test_frac, o->seed, &s->split))
        goto oom;
    if (npu_net_init(&o->shape, o->seed, w, b))
        goto oom;
    s->have_ref = o->engine == NPU_FIT_KERNELS;
    if (npu_net_ref_new(&s->model, &o->shape, o->batch, w, b) ||
        (s->have_ref && npu_net_ref_new(&s->ref, &o->shape, o->batch, w, b)))
        goto oom;
    s->x = malloc((size_t)o->batch * d->features * sizeof(float));
    s->y = malloc((size_t)o->batch);
    s->order = malloc((size_t)s->split.n_train * sizeof(int));
    if (!s->x || !s->y || !s->order)
        goto oom;
    s->npu = (fit_npu_t){cfg, sim, o, 0, 0, 0, ""};
    if (o->engine == NPU_FIT_KERNELS) {
        s->model.gemm = fit_npu_gemm;
        s->model.conv = fit_npu_conv;
        s->model.conv_bwd = fit_npu_conv_bwd;
        s->model.hook_ctx = &s->npu;
    }
    rc = o->engine == NPU_FIT_STEP ? step_init(s, cfg, sim, d, o, w, b, why, n) : 0;
    npu_net_params_free(&o->shape, w, b);
    return rc;
oom:
    snprintf(why, n, "out of memory");
    npu_net_params_free(&o->shape, w, b);
    return rc;
}

/* The step engine's kernels since the last call: tallied into s->npu like the kernel engine's. */
static void step_tally(fit_state_t *s, int rc, const npu_step_tally_t *t)
{
    s->npu.kernels += (long)t->kernels;
    s->npu.cycles += t->cycles;
    if (rc && !s->npu.fails++)
        snprintf(s->npu.why, sizeof s->npu.why, "%s", s->step.why);
    if (rc)
        s->model.failed = 1; /* stops the epoch as a failed kernel does */
}

/* One training step on the NPU: forward, the loss and its gradient on the host, backward and
 * update. Returns the loss. */
static double step_train(fit_state_t *s, const npu_fit_opts_t *o, int classes)
{
    double loss = 0;
    int rc = npu_step_forward(&s->step, s->x, o->batch, s->logits);
    step_tally(s, rc, &s->step.fwd);
    if (rc)
        return 0;
    loss = npu_softmax_xent(s->logits, s->y, o->batch, classes, s->dlogits);
    rc = npu_step_backward(&s->step, s->dlogits);
    step_tally(s, rc, &s->step.bwd);
    return loss;
}

/* One epoch's training steps; fills loss, ref_loss, samples, cycles and the GEMM tallies. */
static void train_epoch(fit_state_t *s, const npu_dataset_t *d, const npu_fit_opts_t *o,
                        npu_fit_epoch_t *e)
{
    int steps = s->split.n_train / o->batch;
    npu_epoch_order(&s->split, o->seed, e->epoch, s->order);
    s->npu.cycles = 0;
    for (int i = 0; i < steps && !s->model.failed; i++) {
        gather(d, s->order + (size_t)i * o->batch, o->batch, s->x, s->y);
        if (s->have_step) {
            e->loss += step_train(s, o, d->classes) / steps;
            e->ref_loss += npu_net_ref_step(&s->model, s->x, s->y, &o->sgd) / steps;
            continue;
        }
        e->loss += npu_net_ref_step(&s->model, s->x, s->y, &o->sgd) / steps;
        if (s->have_ref)
            e->ref_loss += npu_net_ref_step(&s->ref, s->x, s->y, &o->sgd) / steps;
    }
    if (!s->have_ref && !s->have_step)
        e->ref_loss = e->loss;
    e->samples = steps * o->batch;
    e->steps = steps;
    e->cycles = s->npu.cycles;
    e->cycles_per_sample = e->samples ? (double)e->cycles / e->samples : 0;
    if (s->have_step) {
        const npu_step_tally_t *f = &s->step.fwd, *b = &s->step.bwd;
        for (int g = 0; g < NPU_NUM_TAGS; g++) {
            e->step_rd[g] = f->rd[g] + b->rd[g];
            e->step_wr[g] = f->wr[g] + b->wr[g];
        }
        e->step_host_wr = f->host_wr + b->host_wr;
        e->step_host_rd = f->host_rd + b->host_rd;
        e->step = &s->step;
    }
}

/* The step engine's accuracy over idx[0..n): the NPU's forward kernels batch by batch (a short
 * last batch padded with zero rows), the argmax on the host. */
static double step_accuracy(fit_state_t *s, const npu_dataset_t *d, const int *idx, int n)
{
    long ok = 0;
    int B = s->step.plan.batch, C = d->classes;
    for (int i = 0; i < n && !s->model.failed; i += B) {
        int rows = n - i < B ? n - i : B;
        gather(d, idx + i, rows, s->x, s->y);
        int rc = npu_step_forward(&s->step, s->x, rows, s->logits);
        step_tally(s, rc, &s->step.fwd);
        for (int r = 0; !rc && r < rows; r++) {
            int best = 0;
            for (int c = 1; c < C; c++)
                if (s->logits[(size_t)r * C + c] > s->logits[(size_t)r * C + best])
                    best = c;
            ok += best == s->y[r];
        }
    }
    return n ? (double)ok / n : 0;
}

/* Train and test accuracy after an epoch, and the reference's test accuracy. */
static void epoch_accuracy(fit_state_t *s, const npu_dataset_t *d, npu_fit_epoch_t *e)
{
    s->npu.cycles = 0;
    if (s->have_step) {
        e->train_acc = step_accuracy(s, d, s->split.train, s->split.n_train);
        e->test_acc = step_accuracy(s, d, s->split.test, s->split.n_test);
        e->ref_test_acc = accuracy(&s->model, d, s->split.test, s->split.n_test, s->x, s->y);
    } else {
        e->train_acc = accuracy(&s->model, d, s->split.train, s->split.n_train, s->x, s->y);
        e->test_acc = accuracy(&s->model, d, s->split.test, s->split.n_test, s->x, s->y);
        e->ref_test_acc = s->have_ref ? accuracy(&s->ref, d, s->split.test, s->split.n_test, s->x, s->y)
                                      : e->test_acc;
    }
    e->eval_cycles = s->npu.cycles;
}

int npu_fit_run(const npu_cfg_t *cfg, npu_sim_t *sim, const npu_dataset_t *d,
                const npu_fit_opts_t *o, npu_fit_epoch_cb cb, void *cb_ctx, char *why, size_t n)
{
    fit_state_t s;
    int rc = 0;
    if (state_init(&s, cfg, sim, d, o, why, n)) {
        state_free(&s);
        return -1;
    }
    for (int ep = 1; ep <= o->epochs && !rc; ep++) {
        npu_fit_epoch_t e;
        struct timespec t0, t1;
        memset(&e, 0, sizeof e);
        e.epoch = ep;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        s.npu.kernels = s.npu.fails = 0;
        train_epoch(&s, d, o, &e);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        e.train_wall_s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        epoch_accuracy(&s, d, &e);
        e.kernels = s.npu.kernels;
        e.kernel_fail = s.npu.fails;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        e.wall_s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        if (s.model.failed) {
            snprintf(why, n, "%s", s.npu.why);
            rc = 1;
        }
        cb(cb_ctx, &e);
    }
    state_free(&s);
    return rc;
}
