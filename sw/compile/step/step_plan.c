/* step_plan.c - an MLP's training step as NPU kernels over one DRAM image (step_plan.h). */
#include "compile/step/step_plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/isa.h"

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Records the first reason the plan cannot be made (checked once the kernels are built). */
static void bad(npu_step_plan_t *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (!p->err[0])
        vsnprintf(p->err, sizeof p->err, fmt, ap);
    va_end(ap);
}

/* Places a rows x cols tensor of `width` bits at the next SPM-word-aligned address (the plan's
 * align when larger). */
static int tensor(npu_step_plan_t *p, uint64_t word, const char *name, int layer, unsigned width,
                  int rows, int cols)
{
    return npu_step_tensor_add(p, word, name, layer, width, rows, cols, 0);
}

/* The same with rows `pitch` bytes apart (0: dense). */
int npu_step_tensor_add(npu_step_plan_t *p, uint64_t word, const char *name, int layer, unsigned width,
                        int rows, int cols, unsigned pitch)
{
    npu_step_tensor_t *t = &p->t[p->nt];
    if (layer >= 0)
        snprintf(t->name, sizeof t->name, "%s[%d]", name, layer);
    else
        snprintf(t->name, sizeof t->name, "%s", name);
    if (p->align > word)
        p->end = (p->end + p->align - 1) / p->align * p->align;
    t->dram = (uint32_t)p->end;
    t->bytes = pitch ? (uint64_t)rows * pitch : (uint64_t)rows * cols * width / 8;
    t->width = width;
    t->rows = rows;
    t->cols = cols;
    t->pitch = pitch;
    p->end += (t->bytes + word - 1) / word * word;
    return p->nt++;
}

/* Every tensor of layer l (K inputs, N outputs). */
void npu_step_fc_tensors(npu_step_plan_t *p, uint64_t word, int l)
{
    int K = p->dims[l - 1], N = p->dims[l], B = p->batch;
    npu_step_lt_t *L = &p->l[l];
    L->w16 = tensor(p, word, "W16", l, 16, K, N);
    L->w32 = tensor(p, word, "W32", l, 32, K, N);
    L->vw = tensor(p, word, "VW", l, 32, K, N);
    L->b32 = tensor(p, word, "b32", l, 32, 1, N);
    L->vb = tensor(p, word, "Vb", l, 32, 1, N);
    L->z32 = tensor(p, word, "Z32", l, 32, B, N);
    L->h16 = l < p->layers ? tensor(p, word, "H16", l, 16, B, N) : -1;
    L->dz32 = tensor(p, word, "dZ32", l, 32, B, N);
    L->dz16 = tensor(p, word, "dZ16", l, 16, B, N);
    L->dh32 = l > 1 ? tensor(p, word, "dH32", l, 32, B, K) : -1;
    L->dw32 = tensor(p, word, "dW32", l, 32, K, N);
    L->db32 = tensor(p, word, "db32", l, 32, 1, N);
    L->w16t = -1;
}

static npu_step_kernel_t *kernel(npu_step_plan_t *p, int kind, int phase, int layer, const char *what)
{
    return npu_step_kernel_add(p, kind, phase, layer, what);
}

npu_step_kernel_t *npu_step_kernel_add(npu_step_plan_t *p, int kind, int phase, int layer, const char *what)
{
    npu_step_kernel_t *k = &p->k[p->nk++];
    memset(k, 0, sizeof *k);
    k->kind = kind;
    k->phase = phase;
    k->layer = layer;
    snprintf(k->name, sizeof k->name, "%s L%d %s", phase == NPU_SK_FWD ? "fwd" : phase == NPU_SK_BWD ? "bwd" : "update",
             layer, what);
    if (kind == NPU_SK_VEC)
        snprintf(k->v.name, sizeof k->v.name, "%s", k->name);
    return k;
}

/* C = op(A) op(B), dense, with A, B, C tensors of the plan and their tags. */
static void gemm(npu_step_plan_t *p, int phase, int layer, const char *what, int M, int N, int K,
                 int a, int transA, unsigned tag_a, int b, int transB, unsigned tag_b, int c,
                 unsigned tag_c, int modes)
{
    npu_step_kernel_t *k = kernel(p, NPU_SK_GEMM, phase, layer, what);
    npu_gemm_args_t *g = &k->g.args;
    k->g.M = M;
    k->g.N = N;
    k->g.K = K;
    g->transA = transA;
    g->transB = transB;
    g->a = p->t[a].dram;
    g->b = p->t[b].dram;
    g->c = p->t[c].dram;
    npu_gemm_pitches(M, N, K, transA, transB, &g->pitch_a, &g->pitch_b, &g->pitch_c);
    g->modes = modes;
    g->tag_a = tag_a;
    g->tag_b = tag_b;
    g->tag_c = tag_c;
}

/* A plan tensor as a vector kernel's operand, under a DMA tag of its own in this kernel (1, 2, ..
 * in order; its scratch tensors move nothing): the DMA counters then split the kernel's bytes by
 * tensor (step_tags.h). Past the 7 DMA tags the plan is refused. */
static int vt(npu_vkern_t *v, npu_step_plan_t *p, int t, int load, int store)
{
    unsigned tag = 1;
    for (int j = 0; j < v->nt; j++)
        tag += v->t[j].load || v->t[j].store;
    if (tag >= NPU_NUM_TAGS)
        bad(p, "%s: more than %d DRAM tensors, one DMA tag each", v->name, NPU_NUM_TAGS - 1);
    int i = npu_vk_tensor(v, p->t[t].name, p->t[t].dram, p->t[t].width, tag, p->t[t].rows == 1, load,
                          store);
    npu_vk_pitch(v, i, p->t[t].pitch);
    return i;
}

int npu_step_vt(npu_vkern_t *v, npu_step_plan_t *p, int t, int load, int store)
{
    return vt(v, p, t, load, store);
}

#define Q(i) (p->t[i].q)

/* d = a narrowed to 16 bits: bf16 (RNE), or int16 by a rounding shift of their scales' difference. */
static void narrow(npu_step_plan_t *p, npu_vkern_t *v, int a, int d, int qa, int qd)
{
    int sh = p->int16 ? qa - qd : 0;
    if (sh < 0 || sh > 31)
        bad(p, "%s: NARROW from q %d to q %d: the shift must be 0..31", v->name, qa, qd);
    npu_vk_op(v, NPU_VOP_NARROW, 0, a, -1, d, 0, 0, sh < 0 || sh > 31 ? 0 : (unsigned)sh);
}

/* d = alpha a + beta b (32-bit): fp32 scalars, or int16 ones with the shift of npu_step_axpby_q
 * for the tensors' scales qa, qb, qd. */
static void axpby(npu_step_plan_t *p, npu_vkern_t *v, int a, int b, int d, int qa, int qb, int qd,
                  float alpha, float beta)
{
    if (!p->int16) {
        npu_vk_op(v, NPU_VOP_AXPBY, 1, a, b, d, f32_bits(alpha), f32_bits(beta), 0);
        return;
    }
    int16_t A = 0, B = 0;
    unsigned s = 0;
    double err = 0;
    if (npu_step_axpby_q(alpha, beta, qd, qa, qb, &A, &B, &s, &err))
        bad(p, "%s: the scalars %g, %g do not fit int16 at scales q %d, %d -> %d", v->name, alpha,
            beta, qa, qb, qd);
    p->scalar_err = err > p->scalar_err ? err : p->scalar_err;
    npu_vk_op(v, NPU_VOP_AXPBY, 1, a, b, d, (uint16_t)A, (uint16_t)B, s);
}

void npu_step_fc_fwd(npu_step_plan_t *p, int l, int modes)
{
    const npu_step_lt_t *L = &p->l[l];
    int in = l == 1 ? p->x16 : p->l[l - 1].h16, B = p->batch;
    gemm(p, NPU_SK_FWD, l, "gemm", B, p->dims[l], p->dims[l - 1], in, 0, NPU_TAG_X, L->w16, 0,
         NPU_TAG_W, L->z32, NPU_TAG_Y, modes);
    npu_vkern_t *v = &kernel(p, NPU_SK_VEC, NPU_SK_FWD, l, l < p->layers ? "bias_relu" : "bias")->v;
    v->rows = B;
    v->len = p->dims[l];
    int z = vt(v, p, L->z32, 1, 1), b = vt(v, p, L->b32, 1, 0);
    npu_vk_op(v, NPU_VOP_ADD, 1, z, b, z, 0, 0, 0);
    if (l < p->layers) { /* ReLU after the narrowing: on half the words, the same values */
        int h = vt(v, p, L->h16, 0, 1);
        narrow(p, v, z, h, Q(L->z32), Q(L->h16));
        npu_vk_op(v, NPU_VOP_RELU, 0, h, -1, h, 0, 0, 0);
    }
}

/* dZ16 = bf16(dZ32), db = row sum of dZ32, and the bias update. A batch whose rows do not fit
 * one chunk sums in blocks through a one-row scratch (npu_vk_sum_chunk); one that fits keeps the
 * plain row order. */
static void grad_bias(npu_step_plan_t *p, const npu_cfg_t *cfg, int l)
{
    const npu_step_lt_t *L = &p->l[l];
    npu_vkern_t *v = &kernel(p, NPU_SK_VEC, NPU_SK_BWD, l, "grad_bias")->v;
    v->rows = p->batch;
    v->len = p->dims[l];
    int dz = vt(v, p, L->dz32, 1, 0), dz16 = vt(v, p, L->dz16, 0, 1);
    int db = vt(v, p, L->db32, 0, 1), vb = vt(v, p, L->vb, 1, 1);
    int b = vt(v, p, L->b32, 1, 1);
    narrow(p, v, dz, dz16, Q(L->dz32), Q(L->dz16));
    npu_vk_op(v, NPU_VOP_SUM, 1, dz, -1, db, 0, 0, 0);
    npu_step_bias_update(p, v, l, db, vb, b);
    if (npu_vk_chunk_rows(cfg, v) < v->rows) {
        int part = npu_vk_tensor(v, "db_part", 0, 32, NPU_TAG_DW, 1, 0, 0);
        for (int j = 0; j < v->nop; j++)
            if (v->op[j].vop == NPU_VOP_SUM)
                v->op[j].b = part;
        npu_vk_sum_chunk(cfg, v);
    }
}

void npu_step_bias_update(npu_step_plan_t *p, npu_vkern_t *v, int l, int db, int vb, int b)
{
    const npu_step_lt_t *L = &p->l[l];
    axpby(p, v, vb, db, vb, Q(L->vb), Q(L->db32), Q(L->vb), bits_f32(p->mu), 1.0f);
    axpby(p, v, b, vb, b, Q(L->b32), Q(L->vb), Q(L->b32), 1.0f, -bits_f32(p->lr));
}

void npu_step_fc_bwd(npu_step_plan_t *p, const npu_cfg_t *cfg, int l, int modes, int relu_prev)
{
    const npu_step_lt_t *L = &p->l[l];
    int in = l == 1 ? p->x16 : p->l[l - 1].h16, B = p->batch, K = p->dims[l - 1], N = p->dims[l];
    grad_bias(p, cfg, l);
    gemm(p, NPU_SK_BWD, l, "dw", K, N, B, in, 1, NPU_TAG_X, L->dz16, 0, NPU_TAG_DY, L->dw32,
         NPU_TAG_DW, modes);
    if (l > 1)
        gemm(p, NPU_SK_BWD, l, "dx", B, K, N, L->dz16, 0, NPU_TAG_DY, L->w16, 1, NPU_TAG_W,
             L->dh32, NPU_TAG_DX, modes);
    if (l > 1 && relu_prev) {
        const npu_step_lt_t *P = &p->l[l - 1];
        npu_vkern_t *v = &kernel(p, NPU_SK_VEC, NPU_SK_BWD, l, "relu_bwd")->v;
        v->rows = B;
        v->len = K;
        int dh = vt(v, p, L->dh32, 1, 0), z = vt(v, p, P->z32, 1, 0);
        int dz = vt(v, p, P->dz32, 0, 1);
        npu_vk_op(v, NPU_VOP_RELU_BWD, 1, dh, z, dz, 0, 0, 0);
    }
    npu_step_sgd(p, l, K, N, L->w16);
}

/* t = wd W32 + dW32 at dW32's scale qt. One AXPBY, but at int16 configurations where its int16
 * scalars cannot hold wd beside 1 (W32 a few bits finer than dW32: a small batch's nominal
 * scales) a MUL by wd with its own shift, then an ADD. */
static void decay(npu_step_plan_t *p, npu_vkern_t *u, int w, int g, int t, int qw, int qt)
{
    int16_t A, B;
    unsigned s;
    double err;
    float wd = bits_f32(p->wd);
    if (!p->int16 || wd == 0 || npu_step_axpby_q(wd, 1.0, qt, qw, qt, &A, &B, &s, &err) == 0) {
        axpby(p, u, w, g, t, qw, qt, qt, wd, 1.0f);
        return;
    }
    if (npu_step_axpby_q(wd, 0.0, qt, qw, qt, &A, &B, &s, &err))
        bad(p, "%s: the weight decay %g does not fit int16 at scales q %d -> %d", u->name, wd, qw, qt);
    p->scalar_err = err > p->scalar_err ? err : p->scalar_err;
    npu_vk_op(u, NPU_VOP_MUL, 1, w, -1, t, (uint16_t)A, 0, s);
    npu_vk_op(u, NPU_VOP_ADD, 1, t, g, t, 0, 0, 0);
}

void npu_step_sgd(npu_step_plan_t *p, int l, int rows, int len, int w16t)
{
    const npu_step_lt_t *L = &p->l[l];
    npu_vkern_t *u = &kernel(p, NPU_SK_VEC, NPU_SK_UPDATE, l, "sgd")->v;
    u->rows = rows;
    u->len = len;
    int w = vt(u, p, L->w32, 1, 1), g = vt(u, p, L->dw32, 1, 0);
    int vw = vt(u, p, L->vw, 1, 1), w16 = vt(u, p, w16t, 0, 1);
    int t = npu_vk_tensor(u, "t32", 0, 32, NPU_TAG_W, 0, 0, 0), qt = Q(L->dw32); /* t at dW's scale */
    decay(p, u, w, g, t, Q(L->w32), qt);
    axpby(p, u, vw, t, vw, Q(L->vw), qt, Q(L->vw), bits_f32(p->mu), 1.0f);
    axpby(p, u, w, vw, w, Q(L->w32), Q(L->vw), Q(L->w32), 1.0f, -bits_f32(p->lr));
    narrow(p, u, w, w16, Q(L->w32), Q(L->w16));
}

/* The scales of every tensor from the free ones (step_scale.h): a GEMM's output at the sum of
 * its operands', the bias at Z32's, a gradient's reduction at its source's. */
static void assign_q(npu_step_plan_t *p, const npu_step_q_t *q)
{
    p->t[p->x16].q = q->x;
    for (int l = 1; l <= p->layers; l++) {
        npu_step_lt_t *L = &p->l[l];
        int in = l == 1 ? q->x : q->h[l - 1], dz32 = l == p->layers ? q->dz_top : q->dz16[l + 1] + q->w[l + 1];
        Q(L->w16) = q->w[l];
        Q(L->w32) = q->w[l] + NPU_STEP_W32_EXTRA;
        Q(L->vw) = q->vw[l];
        Q(L->z32) = in + q->w[l];
        if (L->b32 >= 0) { /* a normalised layer has no bias */
            Q(L->b32) = in + q->w[l];
            Q(L->vb) = q->vb[l];
        }
        if (L->h16 >= 0)
            Q(L->h16) = q->h[l];
        if (L->dz32 >= 0) /* a convolution's lives in the SPM only */
            Q(L->dz32) = dz32;
        if (L->w16t >= 0)
            Q(L->w16t) = q->w[l];
        if (L->db32 >= 0)
            Q(L->db32) = dz32;
        Q(L->dz16) = q->dz16[l];
        if (L->dh32 >= 0)
            Q(L->dh32) = q->dz16[l] + q->w[l];
        Q(L->dw32) = in + q->dz16[l];
    }
}

void npu_step_assign_q(npu_step_plan_t *p, const npu_step_q_t *q) { assign_q(p, q); }

void npu_step_axpby(npu_step_plan_t *p, npu_vkern_t *v, int a, int b, int d, int qa, int qb, int qd,
                    float alpha, float beta)
{
    axpby(p, v, a, b, d, qa, qb, qd, alpha, beta);
}

void npu_step_narrow(npu_step_plan_t *p, npu_vkern_t *v, int a, int d, int qa, int qd)
{
    narrow(p, v, a, d, qa, qd);
}

static int check_args(const int *dims, int layers, int batch, char *why, size_t n)
{
    if (layers < 1 || layers > NPU_STEP_MAX_LAYERS) {
        snprintf(why, n, "%d layers: 1..%d", layers, NPU_STEP_MAX_LAYERS);
        return -1;
    }
    for (int l = 0; l <= layers; l++)
        if (dims[l] < 1 || dims[l] > 8192) {
            snprintf(why, n, "width %d of layer %d: 1..8192", dims[l], l);
            return -1;
        }
    if (batch < 1 || batch > 8192) {
        snprintf(why, n, "batch %d: 1..8192", batch);
        return -1;
    }
    return 0;
}

int npu_step_plan_mlp_q(const npu_cfg_t *cfg, const int *dims, int layers, int batch, float lr,
                        float mu, float wd, int modes, const npu_step_q_t *q, uint64_t base,
                        npu_step_plan_t *p, char *why, size_t n)
{
    uint64_t word = (uint64_t)npu_cfg_word(cfg);
    memset(p, 0, sizeof *p);
    if (check_args(dims, layers, batch, why, n))
        return -1;
    p->layers = layers;
    p->batch = batch;
    p->int16 = !npu_cfg_bf16(cfg);
    memcpy(p->dims, dims, (size_t)(layers + 1) * sizeof *dims);
    p->lr = f32_bits(lr);
    p->mu = f32_bits(mu);
    p->wd = f32_bits(wd);
    p->base = p->end = (base + word - 1) / word * word;
    p->x16 = tensor(p, word, "X16", -1, 16, batch, dims[0]);
    for (int l = 1; l <= layers; l++)
        npu_step_fc_tensors(p, word, l);
    if (p->int16) {
        npu_step_range_t r;
        if (!q) {
            npu_step_range_nominal(layers, batch, &r);
            npu_step_q_pick(&r, layers, mu, &p->q);
        }
        p->q = q ? *q : p->q;
        assign_q(p, &p->q);
    }
    if (!(p->k = calloc((size_t)7 * layers, sizeof *p->k))) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    for (int l = 1; l <= layers; l++)
        npu_step_fc_fwd(p, l, modes);
    p->n_fwd = p->nk;
    for (int l = layers; l >= 1; l--)
        npu_step_fc_bwd(p, cfg, l, modes, 1);
    if (p->err[0]) {
        snprintf(why, n, "%s", p->err);
        npu_step_plan_free(p);
        return -1;
    }
    return 0;
}

int npu_step_plan_mlp(const npu_cfg_t *cfg, const int *dims, int layers, int batch, float lr,
                      float mu, float wd, int modes, uint64_t base, npu_step_plan_t *p, char *why,
                      size_t n)
{
    return npu_step_plan_mlp_q(cfg, dims, layers, batch, lr, mu, wd, modes, NULL, base, p, why, n);
}

void npu_step_plan_free(npu_step_plan_t *p)
{
    free(p->k);
    p->k = NULL;
}

int npu_step_tensor_find(const npu_step_plan_t *p, const char *name)
{
    for (int t = 0; t < p->nt; t++)
        if (!strcmp(p->t[t].name, name))
            return t;
    return -1;
}

unsigned npu_step_tensor_pitch(const npu_step_tensor_t *t)
{
    return t->pitch ? t->pitch : (unsigned)t->cols * t->width / 8;
}
