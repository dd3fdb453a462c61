/* step_plan.c - an MLP's training step as NPU kernels over one DRAM image (step_plan.h). */
#include "compile/step/step_plan.h"

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

/* Places a rows x cols tensor of `width` bits at the next beat-aligned address. */
static int tensor(npu_step_plan_t *p, uint64_t beat, const char *name, int layer, unsigned width,
                  int rows, int cols)
{
    npu_step_tensor_t *t = &p->t[p->nt];
    if (layer >= 0)
        snprintf(t->name, sizeof t->name, "%s[%d]", name, layer);
    else
        snprintf(t->name, sizeof t->name, "%s", name);
    t->dram = (uint32_t)p->end;
    t->bytes = (uint64_t)rows * cols * width / 8;
    t->width = width;
    t->rows = rows;
    t->cols = cols;
    p->end += (t->bytes + beat - 1) / beat * beat;
    return p->nt++;
}

/* Every tensor of layer l (K inputs, N outputs). */
static void layer_tensors(npu_step_plan_t *p, uint64_t beat, int l)
{
    int K = p->dims[l - 1], N = p->dims[l], B = p->batch;
    npu_step_lt_t *L = &p->l[l];
    L->w16 = tensor(p, beat, "W16", l, 16, K, N);
    L->w32 = tensor(p, beat, "W32", l, 32, K, N);
    L->vw = tensor(p, beat, "VW", l, 32, K, N);
    L->b32 = tensor(p, beat, "b32", l, 32, 1, N);
    L->vb = tensor(p, beat, "Vb", l, 32, 1, N);
    L->z32 = tensor(p, beat, "Z32", l, 32, B, N);
    L->h16 = l < p->layers ? tensor(p, beat, "H16", l, 16, B, N) : -1;
    L->dz32 = tensor(p, beat, "dZ32", l, 32, B, N);
    L->dz16 = tensor(p, beat, "dZ16", l, 16, B, N);
    L->dh32 = l > 1 ? tensor(p, beat, "dH32", l, 32, B, K) : -1;
    L->dw32 = tensor(p, beat, "dW32", l, 32, K, N);
    L->db32 = tensor(p, beat, "db32", l, 32, 1, N);
}

static npu_step_kernel_t *kernel(npu_step_plan_t *p, int kind, int phase, int layer, const char *what)
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

/* A plan tensor as a vector kernel's operand. */
static int vt(npu_vkern_t *v, const npu_step_plan_t *p, int t, unsigned tag, int load, int store)
{
    return npu_vk_tensor(v, p->t[t].name, p->t[t].dram, p->t[t].width, tag, p->t[t].rows == 1, load,
                         store);
}

static void fwd_layer(npu_step_plan_t *p, int l, int modes)
{
    const npu_step_lt_t *L = &p->l[l];
    int in = l == 1 ? p->x16 : p->l[l - 1].h16, B = p->batch;
    gemm(p, NPU_SK_FWD, l, "gemm", B, p->dims[l], p->dims[l - 1], in, 0, NPU_TAG_X, L->w16, 0,
         NPU_TAG_W, L->z32, NPU_TAG_Y, modes);
    npu_vkern_t *v = &kernel(p, NPU_SK_VEC, NPU_SK_FWD, l, l < p->layers ? "bias_relu" : "bias")->v;
    v->rows = B;
    v->len = p->dims[l];
    int z = vt(v, p, L->z32, NPU_TAG_Y, 1, 1), b = vt(v, p, L->b32, NPU_TAG_W, 1, 0);
    npu_vk_op(v, NPU_VOP_ADD, 1, z, b, z, 0, 0, 0);
    if (l < p->layers) { /* ReLU after the narrowing: on half the words, the same values */
        int h = vt(v, p, L->h16, NPU_TAG_X, 0, 1);
        npu_vk_op(v, NPU_VOP_NARROW, 0, z, -1, h, 0, 0, 0);
        npu_vk_op(v, NPU_VOP_RELU, 0, h, -1, h, 0, 0, 0);
    }
}

/* dZ16 = bf16(dZ32), db = row sum of dZ32, and the bias update. */
static void grad_bias(npu_step_plan_t *p, int l)
{
    const npu_step_lt_t *L = &p->l[l];
    uint32_t one = f32_bits(1.0f);
    npu_vkern_t *v = &kernel(p, NPU_SK_VEC, NPU_SK_BWD, l, "grad_bias")->v;
    v->rows = p->batch;
    v->len = p->dims[l];
    int dz = vt(v, p, L->dz32, NPU_TAG_DY, 1, 0), dz16 = vt(v, p, L->dz16, NPU_TAG_DY, 0, 1);
    int db = vt(v, p, L->db32, NPU_TAG_DW, 0, 1), vb = vt(v, p, L->vb, NPU_TAG_W, 1, 1);
    int b = vt(v, p, L->b32, NPU_TAG_W, 1, 1);
    npu_vk_op(v, NPU_VOP_NARROW, 0, dz, -1, dz16, 0, 0, 0);
    npu_vk_op(v, NPU_VOP_SUM, 1, dz, -1, db, 0, 0, 0);
    npu_vk_op(v, NPU_VOP_AXPBY, 1, vb, db, vb, p->mu, one, 0);
    npu_vk_op(v, NPU_VOP_AXPBY, 1, b, vb, b, one, p->lr ^ 0x80000000u, 0);
}

static void bwd_layer(npu_step_plan_t *p, int l, int modes)
{
    const npu_step_lt_t *L = &p->l[l];
    int in = l == 1 ? p->x16 : p->l[l - 1].h16, B = p->batch, K = p->dims[l - 1], N = p->dims[l];
    uint32_t one = f32_bits(1.0f);
    grad_bias(p, l);
    gemm(p, NPU_SK_BWD, l, "dw", K, N, B, in, 1, NPU_TAG_X, L->dz16, 0, NPU_TAG_DY, L->dw32,
         NPU_TAG_DW, modes);
    if (l > 1) {
        const npu_step_lt_t *P = &p->l[l - 1];
        gemm(p, NPU_SK_BWD, l, "dx", B, K, N, L->dz16, 0, NPU_TAG_DY, L->w16, 1, NPU_TAG_W,
             L->dh32, NPU_TAG_DX, modes);
        npu_vkern_t *v = &kernel(p, NPU_SK_VEC, NPU_SK_BWD, l, "relu_bwd")->v;
        v->rows = B;
        v->len = K;
        int dh = vt(v, p, L->dh32, NPU_TAG_DX, 1, 0), z = vt(v, p, P->z32, NPU_TAG_Y, 1, 0);
        int dz = vt(v, p, P->dz32, NPU_TAG_DY, 0, 1);
        npu_vk_op(v, NPU_VOP_RELU_BWD, 1, dh, z, dz, 0, 0, 0);
    }
    npu_vkern_t *u = &kernel(p, NPU_SK_VEC, NPU_SK_UPDATE, l, "sgd")->v;
    u->rows = K;
    u->len = N;
    int w = vt(u, p, L->w32, NPU_TAG_W, 1, 1), g = vt(u, p, L->dw32, NPU_TAG_DW, 1, 0);
    int vw = vt(u, p, L->vw, NPU_TAG_W, 1, 1), w16 = vt(u, p, L->w16, NPU_TAG_W, 0, 1);
    int t = npu_vk_tensor(u, "t32", 0, 32, NPU_TAG_W, 0, 0, 0);
    npu_vk_op(u, NPU_VOP_AXPBY, 1, w, g, t, p->wd, one, 0);
    npu_vk_op(u, NPU_VOP_AXPBY, 1, vw, t, vw, p->mu, one, 0);
    npu_vk_op(u, NPU_VOP_AXPBY, 1, w, vw, w, one, p->lr ^ 0x80000000u, 0);
    npu_vk_op(u, NPU_VOP_NARROW, 0, w, -1, w16, 0, 0, 0);
}

static int check_args(const npu_cfg_t *cfg, const int *dims, int layers, int batch, char *why, size_t n)
{
    if (!npu_cfg_bf16(cfg)) {
        snprintf(why, n, "whole steps on the NPU need a bf16 configuration (config %s is int16: "
                 "its per-tensor scales are picked on the host, engine 'kernels')", cfg->name);
        return -1;
    }
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

int npu_step_plan_mlp(const npu_cfg_t *cfg, const int *dims, int layers, int batch, float lr,
                      float mu, float wd, int modes, uint64_t base, npu_step_plan_t *p, char *why,
                      size_t n)
{
    uint64_t beat = (uint64_t)npu_cfg_beat(cfg);
    memset(p, 0, sizeof *p);
    if (check_args(cfg, dims, layers, batch, why, n))
        return -1;
    p->layers = layers;
    p->batch = batch;
    memcpy(p->dims, dims, (size_t)(layers + 1) * sizeof *dims);
    p->lr = f32_bits(lr);
    p->mu = f32_bits(mu);
    p->wd = f32_bits(wd);
    p->base = p->end = (base + beat - 1) / beat * beat;
    p->x16 = tensor(p, beat, "X16", -1, 16, batch, dims[0]);
    for (int l = 1; l <= layers; l++)
        layer_tensors(p, beat, l);
    if (!(p->k = calloc((size_t)7 * layers, sizeof *p->k))) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    for (int l = 1; l <= layers; l++)
        fwd_layer(p, l, modes);
    p->n_fwd = p->nk;
    for (int l = layers; l >= 1; l--)
        bwd_layer(p, l, modes);
    return 0;
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
