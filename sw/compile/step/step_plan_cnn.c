/* step_plan_cnn.c - a CNN's training step as NPU kernels over one DRAM image (step_plan.h
 * npu_step_plan_cnn): the convolution layers' tensors in the conv kernels' layouts, their kernels,
 * and the fully connected head as in the MLP plan (step_plan.c). */
#include "compile/step/step_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/conv/conv_bwd.h"
#include "compile/conv/conv_split.h"
#include "hw/isa.h"
#include "ref/net_ref.h"

static float f32_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static int norm_on(const npu_step_plan_t *p, int l) { return l >= 1 && l <= p->n_conv && p->nrm[l].on; }

#define Q(i) (p->t[i].q) /* a tensor's fractional bits (int16; 0 at bf16) */

/* The DRAM pitches (beats) of a convolution layer's tensors: X and W16 (px, pw: both kernels
 * read them), Y (py: the forward's output), dY (pdy), dX (pdx) and dW^T (pf: the fused
 * backward's). */
typedef struct cnn_pitch {
    unsigned px, pw, py, pdy, pdx, pf;
} cnn_pitch_t;

/* The pitches from the layer's forward plan and fused-backward plan. 0, or -1 with the reason
 * (a kernel that does not plan, or the two plans reading X or W at different pitches). */
static int conv_pitches(const npu_cfg_t *cfg, const npu_conv_t *c, int l, cnn_pitch_t *q, char *why, size_t n)
{
    npu_conv_split_t *sp = calloc(1, sizeof *sp);
    npu_conv_bwd_plan_t *bp = calloc(1, sizeof *bp);
    char msg[200] = "";
    int rc = -1;
    if (!sp || !bp)
        snprintf(why, n, "out of memory");
    else if (npu_conv_split(cfg, c, NPU_CONV_FWD, NPU_CONV_ECOFLOW, NPU_STEP_CONV_OPTS, sp, msg, sizeof msg))
        snprintf(why, n, "layer %d: the forward convolution: %s", l, msg);
    else if (npu_conv_bwd_plan(cfg, c, 1, bp, msg, sizeof msg))
        snprintf(why, n, "layer %d: the fused convolution backward: %s", l, msg);
    else if (bp->dx.px != sp->whole.px || bp->dx.pw != sp->whole.pw)
        snprintf(why, n, "layer %d: fwd and bwd read X or W at different pitches", l);
    else {
        cnn_pitch_t v = {sp->whole.px, sp->whole.pw, sp->whole.pout, bp->dx.pdy, bp->dx.pout, bp->pf};
        *q = v;
        rc = 0;
    }
    if (sp)
        npu_conv_split_free(sp);
    free(sp);
    free(bp);
    return rc;
}

static int pixels(const npu_conv_t *c) { return c->batch * npu_conv_oh(c) * npu_conv_ow(c); }

/* Convolution layer l's tensors (no dX32 in the first: its backward computes no dX; no bias b32,
 * Vb, db32 in a normalised one: beta takes the bias's place); h_pitch: H16's (the next
 * convolution's X pitch, 0 dense). */
static void conv_tensors(npu_step_plan_t *p, uint64_t B, int l, const cnn_pitch_t *q, unsigned h_pitch)
{
    const npu_conv_t *c = &p->conv[l];
    npu_step_lt_t *L = &p->l[l];
    int T = c->KH * c->KW, P = pixels(c), C = c->C, F = c->F;
    L->w16 = npu_step_tensor_add(p, B, "W16", l, 16, T * F, C, q->pw * (unsigned)B);
    L->w16t = npu_step_tensor_add(p, B, "W16T", l, 16, T * C, F, 0);
    L->w32 = npu_step_tensor_add(p, B, "W32", l, 32, T * C, F, 0);
    L->vw = npu_step_tensor_add(p, B, "VW", l, 32, T * C, F, 0);
    int biased = !norm_on(p, l);
    L->b32 = biased ? npu_step_tensor_add(p, B, "b32", l, 32, 1, F, 0) : -1;
    L->vb = biased ? npu_step_tensor_add(p, B, "Vb", l, 32, 1, F, 0) : -1;
    L->z32 = npu_step_tensor_add(p, B, "Z32", l, 32, P, F, q->py * (unsigned)B);
    L->h16 = npu_step_tensor_add(p, B, "H16", l, 16, P, F, h_pitch);
    L->dz32 = -1;
    L->dz16 = npu_step_tensor_add(p, B, "dZ16", l, 16, P, F, q->pdy * (unsigned)B);
    L->dh32 = l > 1 ? npu_step_tensor_add(p, B, "dX32", l, 32, c->batch * c->H * c->W, C, q->pdx * (unsigned)B) : -1;
    L->dw32 = npu_step_tensor_add(p, B, "dW32", l, 32, T * C, F, q->pf * (unsigned)B);
    L->db32 = biased ? npu_step_tensor_add(p, B, "db32", l, 32, 1, F, 0) : -1;
}

/* Normalised layer l's own tensors (npu_step_norm_t). */
static void norm_tensors(npu_step_plan_t *p, uint64_t B, int l)
{
    npu_step_norm_t *N = &p->nrm[l];
    int P = pixels(&p->conv[l]), F = p->conv[l].F;
    N->z16 = npu_step_tensor_add(p, B, "Z16", l, 16, P, F, 0);
    N->dn16 = npu_step_tensor_add(p, B, "dN16", l, 16, P, F, 0);
    N->g32 = npu_step_tensor_add(p, B, "G32", l, 32, 1, F, 0);
    N->g16 = npu_step_tensor_add(p, B, "G16", l, 16, 1, F, 0);
    N->vg = npu_step_tensor_add(p, B, "VG", l, 32, 1, F, 0);
    N->bn32 = npu_step_tensor_add(p, B, "Bn32", l, 32, 1, F, 0);
    N->vbn = npu_step_tensor_add(p, B, "VBn", l, 32, 1, F, 0);
    N->dg32 = npu_step_tensor_add(p, B, "dG32", l, 32, 1, F, 0);
    N->dbn32 = npu_step_tensor_add(p, B, "dBn32", l, 32, 1, F, 0);
}

static int conv_in(const npu_step_plan_t *p, int l) { return l == 1 ? p->x16 : p->l[l - 1].h16; }

/* Names kernel v (the plan's last) "<phase> L<l> <what>": its ops grew (a residual connection). */
static void rename_last(npu_step_plan_t *p, npu_vkern_t *v, const char *phase, int l, const char *what)
{
    snprintf(v->name, sizeof v->name, "%s L%d %s", phase, l, what);
    snprintf(p->k[p->nk - 1].name, sizeof p->k[p->nk - 1].name, "%s", v->name);
}

/* The residual add before the ReLU, in layer l's forward kernel v: Z32 += widen(S) at Z32's
 * current scale qz (a normalised layer's: N's). */
static void residual_add(npu_step_plan_t *p, npu_vkern_t *v, int l, int z, int qz, const char *what)
{
    int src = p->res[l] == 1 ? p->x16 : p->l[p->res[l] - 1].h16;
    int sk = npu_step_vt(v, p, src, 1, 0), s32 = npu_vk_tensor(v, "S32", 0, 32, NPU_TAG_X, 0, 0, 0);
    rename_last(p, v, "fwd", l, what);
    npu_vk_op(v, NPU_VOP_WIDEN, 0, sk, -1, s32, 0, 0, 0);
    npu_step_axpby(p, v, z, s32, z, qz, p->t[src].q, qz, 1.0f, 1.0f);
}

/* d = a (.) b (16-bit): bf16, or int16 by a rounding shift from the exact product's scale qa + qb
 * to d's qd. */
static void vmul(npu_step_plan_t *p, npu_vkern_t *v, int a, int b, int d, int qa, int qb, int qd)
{
    int sh = p->int16 ? qa + qb - qd : 0;
    if (sh < 0 || sh > 31)
        snprintf(p->err, sizeof p->err, "%s: VMUL from q %d + %d to q %d: the shift must be 0..31", v->name,
                 qa, qb, qd);
    npu_vk_op(v, NPU_VOP_VMUL, 0, a, b, d, 0, 0, sh < 0 || sh > 31 ? 0 : (unsigned)sh);
}

/* fwd of normalised layer l after its convolution (no bias): Z16 = bf16(Z32) kept for dgamma;
 * Z32 = widen(VMUL(Z16, G16)) + Bn32 (+ the skip), the pre-ReLU value relu_bwd masks by;
 * H16 = relu(bf16(Z32)). */
static void norm_fwd(npu_step_plan_t *p, int l)
{
    const npu_step_lt_t *L = &p->l[l];
    const npu_step_norm_t *N = &p->nrm[l];
    npu_vkern_t *v = &npu_step_kernel_add(p, NPU_SK_VEC, NPU_SK_FWD, l, "norm_relu")->v;
    v->rows = pixels(&p->conv[l]);
    v->len = p->conv[l].F;
    int z = npu_step_vt(v, p, L->z32, 1, 1), z16 = npu_step_vt(v, p, N->z16, 0, 1);
    int g = npu_step_vt(v, p, N->g16, 1, 0), bn = npu_step_vt(v, p, N->bn32, 1, 0);
    int t = npu_vk_tensor(v, "T16", 0, 16, NPU_TAG_Y, 0, 0, 0), h = npu_step_vt(v, p, L->h16, 0, 1);
    int qt = p->q.t[l], qn = p->q.n[l]; /* T16's, and N's in Z32 (Bn32's): int16; 0 at bf16 */
    npu_step_narrow(p, v, z, z16, p->t[L->z32].q, p->t[N->z16].q);
    vmul(p, v, z16, g, t, p->t[N->z16].q, p->t[N->g16].q, qt);
    npu_vk_op(v, NPU_VOP_WIDEN, 0, t, -1, z, 0, 0, 0);
    if (p->int16) /* N at a 32-bit scale finer than T16's (step_scale.h): no ADD of unlike scales */
        npu_step_axpby(p, v, z, bn, z, qt, qn, qn, 1.0f, 1.0f);
    else
        npu_vk_op(v, NPU_VOP_ADD, 1, z, bn, z, 0, 0, 0);
    if (p->res[l])
        residual_add(p, v, l, z, qn, "norm_add_relu");
    npu_step_narrow(p, v, z, h, qn, p->t[L->h16].q);
    npu_vk_op(v, NPU_VOP_RELU, 0, h, -1, h, 0, 0, 0);
}

/* fwd: the convolution, then Z32 += b; H16 = relu(bf16(Z32)) (normalised: norm_fwd). */
static void conv_fwd(npu_step_plan_t *p, int l)
{
    const npu_step_lt_t *L = &p->l[l];
    npu_step_kernel_t *k = npu_step_kernel_add(p, NPU_SK_CONV_FWD, NPU_SK_FWD, l, "conv");
    k->cv.c = p->conv[l];
    k->cv.x = p->t[conv_in(p, l)].dram;
    k->cv.w = p->t[L->w16].dram;
    k->cv.y = p->t[L->z32].dram;
    if (norm_on(p, l)) {
        norm_fwd(p, l);
        return;
    }
    npu_vkern_t *v = &npu_step_kernel_add(p, NPU_SK_VEC, NPU_SK_FWD, l, "bias_relu")->v;
    v->rows = pixels(&p->conv[l]);
    v->len = p->conv[l].F;
    int z = npu_step_vt(v, p, L->z32, 1, 1), b = npu_step_vt(v, p, L->b32, 1, 0);
    int h = npu_step_vt(v, p, L->h16, 0, 1);
    npu_vk_op(v, NPU_VOP_ADD, 1, z, b, z, 0, 0, 0);
    if (p->res[l])
        residual_add(p, v, l, z, p->t[L->z32].q, "bias_add_relu");
    npu_step_narrow(p, v, z, h, p->t[L->z32].q, p->t[L->h16].q);
    npu_vk_op(v, NPU_VOP_RELU, 0, h, -1, h, 0, 0, 0);
}

/* The layer m whose residual connection adds layer l's output (H16[l]), 0 when none. */
static int skip_from(const npu_step_plan_t *p, int l)
{
    for (int m = l + 1; m <= p->n_conv; m++)
        if (p->res[m] == l + 1)
            return m;
    return 0;
}

/* bwd of layer l's activation from dh, the gradient of H16[l] (fp32 at its own pitch): dZ =
 * relu_bwd(dh, Z32) in the SPM only, dZ16 = bf16(dZ) for the fused backward, db = the sum over
 * every pixel (in blocks through a scratch when they do not fit one chunk), the bias update. */
/* The skip's gradient into layer l's activation kernel v (the layer m it feeds, if any): dZ =
 * widen(G) + dH at dH's scale, G the gradient at m's pre-ReLU sum (dZ16[m], normalised m:
 * dN16[m]); returns the tensor the mask then reads (dz, or h without a skip). */
static int skip_grad(npu_step_plan_t *p, npu_vkern_t *v, int l, int dh, int h, int dz, const char *what)
{
    int m = skip_from(p, l);
    if (m <= 0)
        return h;
    int src = norm_on(p, m) ? p->nrm[m].dn16 : p->l[m].dz16, g = npu_step_vt(v, p, src, 1, 0);
    rename_last(p, v, "bwd", l, what);
    npu_vk_op(v, NPU_VOP_WIDEN, 0, g, -1, dz, 0, 0, 0);
    npu_step_axpby(p, v, dz, h, dz, p->t[src].q, p->t[dh].q, p->t[dh].q, 1.0f, 1.0f);
    return dz;
}

static void relu_grad_bias(npu_step_plan_t *p, const npu_cfg_t *cfg, int l, int dh)
{
    const npu_step_lt_t *L = &p->l[l];
    npu_vkern_t *v = &npu_step_kernel_add(p, NPU_SK_VEC, NPU_SK_BWD, l, "relu_grad_bias")->v;
    v->rows = pixels(&p->conv[l]);
    v->len = p->conv[l].F;
    int h = npu_step_vt(v, p, dh, 1, 0), z = npu_step_vt(v, p, L->z32, 1, 0);
    int dz = npu_vk_tensor(v, "dZ32", 0, 32, NPU_TAG_DY, 0, 0, 0);
    int dz16 = npu_step_vt(v, p, L->dz16, 0, 1);
    int db = npu_step_vt(v, p, L->db32, 0, 1);
    int part = npu_vk_tensor(v, "db_part", 0, 32, NPU_TAG_DW, 1, 0, 0);
    int vb = npu_step_vt(v, p, L->vb, 1, 1), b = npu_step_vt(v, p, L->b32, 1, 1);
    h = skip_grad(p, v, l, dh, h, dz, "add_relu_grad_bias");
    npu_vk_op(v, NPU_VOP_RELU_BWD, 1, h, z, dz, 0, 0, 0); /* dZ at dH's q */
    npu_step_narrow(p, v, dz, dz16, p->t[dh].q, p->t[L->dz16].q);
    npu_vk_op(v, NPU_VOP_SUM, 1, dz, part, db, 0, 0, 0);
    npu_step_bias_update(p, v, l, db, vb, b);
    npu_vk_sum_chunk(cfg, v);
}

/* bwd of normalised layer l's activation from dh: dN = relu_bwd(dH (+ the skip's), N in Z32),
 * dN16 = bf16(dN), dbeta = the sum over every pixel of dN, beta's update; then dgamma = the sum
 * of widen(VMUL(dN16, Z16)) and the conv's dZ16 = VMUL(dN16, G16) (the old gamma); then gamma's
 * update and G16 = bf16(G32). Three kernels: one holds at most NPU_VK_MAX_T tensors. */
static void norm_grad(npu_step_plan_t *p, const npu_cfg_t *cfg, int l, int dh)
{
    const npu_step_lt_t *L = &p->l[l];
    const npu_step_norm_t *N = &p->nrm[l];
    float mu = f32_of(p->mu), lr = f32_of(p->lr);
    npu_vkern_t *v = &npu_step_kernel_add(p, NPU_SK_VEC, NPU_SK_BWD, l, "norm_relu_grad")->v;
    v->rows = pixels(&p->conv[l]);
    v->len = p->conv[l].F;
    int h = npu_step_vt(v, p, dh, 1, 0), z = npu_step_vt(v, p, L->z32, 1, 0);
    int dn = npu_vk_tensor(v, "dN32", 0, 32, NPU_TAG_DY, 0, 0, 0), dn16 = npu_step_vt(v, p, N->dn16, 0, 1);
    int dbn = npu_step_vt(v, p, N->dbn32, 0, 1), part = npu_vk_tensor(v, "sum_part", 0, 32, NPU_TAG_DW, 1, 0, 0);
    int vbn = npu_step_vt(v, p, N->vbn, 1, 1), bn = npu_step_vt(v, p, N->bn32, 1, 1);
    h = skip_grad(p, v, l, dh, h, dn, "add_norm_relu_grad");
    npu_vk_op(v, NPU_VOP_RELU_BWD, 1, h, z, dn, 0, 0, 0);
    npu_step_narrow(p, v, dn, dn16, p->t[dh].q, p->t[N->dn16].q);
    npu_vk_op(v, NPU_VOP_SUM, 1, dn, part, dbn, 0, 0, 0);
    npu_step_axpby(p, v, vbn, dbn, vbn, Q(N->vbn), Q(N->dbn32), Q(N->vbn), mu, 1.0f);
    npu_step_axpby(p, v, bn, vbn, bn, Q(N->bn32), Q(N->vbn), Q(N->bn32), 1.0f, -lr);
    npu_vk_sum_chunk(cfg, v);
    v = &npu_step_kernel_add(p, NPU_SK_VEC, NPU_SK_BWD, l, "norm_scale_grad")->v;
    v->rows = pixels(&p->conv[l]);
    v->len = p->conv[l].F;
    int a = npu_step_vt(v, p, N->dn16, 1, 0), zc = npu_step_vt(v, p, N->z16, 1, 0);
    int g = npu_step_vt(v, p, N->g16, 1, 0), dz = npu_step_vt(v, p, L->dz16, 0, 1);
    int t16 = npu_vk_tensor(v, "P16", 0, 16, NPU_TAG_DW, 0, 0, 0), t32 = npu_vk_tensor(v, "P32", 0, 32, NPU_TAG_DW, 0, 0, 0);
    int dg = npu_step_vt(v, p, N->dg32, 0, 1);
    part = npu_vk_tensor(v, "sum_part", 0, 32, NPU_TAG_DW, 1, 0, 0);
    vmul(p, v, a, zc, t16, Q(N->dn16), Q(N->z16), Q(N->dg32)); /* dG32 sums them at their q */
    npu_vk_op(v, NPU_VOP_WIDEN, 0, t16, -1, t32, 0, 0, 0);
    npu_vk_op(v, NPU_VOP_SUM, 1, t32, part, dg, 0, 0, 0);
    vmul(p, v, a, g, dz, Q(N->dn16), Q(N->g16), Q(L->dz16));
    npu_vk_sum_chunk(cfg, v);
    v = &npu_step_kernel_add(p, NPU_SK_VEC, NPU_SK_UPDATE, l, "norm_update")->v;
    v->rows = 1;
    v->len = p->conv[l].F;
    int gd = npu_step_vt(v, p, N->dg32, 1, 0), vg = npu_step_vt(v, p, N->vg, 1, 1);
    int g32 = npu_step_vt(v, p, N->g32, 1, 1), g16 = npu_step_vt(v, p, N->g16, 0, 1);
    npu_step_axpby(p, v, vg, gd, vg, Q(N->vg), Q(N->dg32), Q(N->vg), mu, 1.0f);
    npu_step_axpby(p, v, g32, vg, g32, Q(N->g32), Q(N->vg), Q(N->g32), 1.0f, -lr);
    npu_step_narrow(p, v, g32, g16, Q(N->g32), Q(N->g16));
}

/* The activation gradient kernels of convolution layer l from dh. */
static void act_grad(npu_step_plan_t *p, const npu_cfg_t *cfg, int l, int dh)
{
    if (norm_on(p, l))
        norm_grad(p, cfg, l, dh);
    else
        relu_grad_bias(p, cfg, l, dh);
}

/* bwd and update of convolution layer l: the fused backward (dX into dX32, dW^T into dW32; the
 * first layer's without dX: nobody reads the network input's gradient), the activation gradient
 * of layer l - 1 from that dX, the SGD update of W32 (dW^T layout) with W16T = bf16(W32), and
 * W16T transposed per tap into W16. The update follows the backward, which reads the old W16. */
static void conv_bwd(npu_step_plan_t *p, const npu_cfg_t *cfg, int l, unsigned w_pitch)
{
    const npu_step_lt_t *L = &p->l[l];
    const npu_conv_t *c = &p->conv[l];
    int T = c->KH * c->KW;
    npu_step_kernel_t *k = npu_step_kernel_add(p, NPU_SK_CONV_BWD, NPU_SK_BWD, l, "conv_bwd");
    k->cv.c = *c;
    k->cv.x = p->t[conv_in(p, l)].dram;
    k->cv.w = p->t[L->w16].dram;
    k->cv.dy = p->t[L->dz16].dram;
    k->cv.no_dx = l == 1;
    k->cv.dx = l > 1 ? p->t[L->dh32].dram : 0;
    k->cv.dwt = p->t[L->dw32].dram;
    if (l > 1)
        act_grad(p, cfg, l - 1, L->dh32);
    npu_step_sgd(p, l, T * c->C, c->F, L->w16t);
    k = npu_step_kernel_add(p, NPU_SK_XPOSE, NPU_SK_UPDATE, l, "transpose");
    npu_vk_xpose_t x = {T, c->C, c->F, p->t[L->w16t].dram, p->t[L->w16].dram,
                        npu_step_tensor_pitch(&p->t[L->w16t]), w_pitch, NPU_TAG_W, 0};
    k->xp = x;
}

/* The layers chain: each convolution's C, H, W the previous one's F, OH, OW, the batch the
 * step's, the head's inputs the last one's outputs. 0 or -1 with the reason. */
static int check_cnn(const npu_conv_t *conv, int n_conv, const int *fc, int n_fc,
                     int batch, char *why, size_t n)
{
    if (n_conv < 1 || n_fc < 1 || n_conv + n_fc > NPU_STEP_MAX_LAYERS) {
        snprintf(why, n, "%d convolution and %d fully connected layers: at least one each, %d in all",
                 n_conv, n_fc, NPU_STEP_MAX_LAYERS);
        return -1;
    }
    for (int i = 0; i < n_conv; i++) {
        const npu_conv_t *c = &conv[i], *prev = i ? &conv[i - 1] : NULL;
        if (c->batch != batch || c->depthwise || c->dil != 1 || npu_conv_check(c, NULL, 0) != 0 ||
            (prev && (c->C != prev->F || c->H != npu_conv_oh(prev) || c->W != npu_conv_ow(prev)))) {
            snprintf(why, n, "convolution layer %d does not chain (batch, input, dilation 1, not depthwise)", i + 1);
            return -1;
        }
    }
    const npu_conv_t *last = &conv[n_conv - 1];
    if (fc[0] != npu_conv_oh(last) * npu_conv_ow(last) * last->F) {
        snprintf(why, n, "the head takes %d inputs, the last convolution gives %d", fc[0],
                 npu_conv_oh(last) * npu_conv_ow(last) * last->F);
        return -1;
    }
    return 0;
}

/* Each convolution's residual connection: from an earlier activation of its output's shape (the
 * batch for +0), the last of its kind into that activation (NPU_STEP_MAX_SKIPS). 0 or -1. */
static int check_res(const npu_conv_t *conv, int n_conv, const int *res, char *why, size_t n)
{
    for (int i = 0; res && i < n_conv; i++) {
        const npu_conv_t *c = &conv[i];
        int j = res[i] - 1, oh = npu_conv_oh(c), ow = npu_conv_ow(c), used = 0;
        const npu_conv_t *s = j > 0 && j <= n_conv ? &conv[j - 1] : NULL;
        int sh = j == 0 ? conv[0].H : s ? npu_conv_oh(s) : 0, sw = j == 0 ? conv[0].W : s ? npu_conv_ow(s) : 0;
        int sc = j == 0 ? conv[0].C : s ? s->F : 0;
        for (int k = 0; k < i && j > 0; k++)
            used += res[k] == j + 1;
        if (res[i] && (j < 0 || j > i || sh != oh || sw != ow || sc != c->F || used >= NPU_STEP_MAX_SKIPS)) {
            snprintf(why, n, "convolution layer %d: residual +%d: an earlier activation of %dx%dx%d, "
                     "%d skip(s) from one layer", i + 1, j, oh, ow, c->F, NPU_STEP_MAX_SKIPS);
            return -1;
        }
    }
    return 0;
}

/* Every tensor: X16, then per layer (convolutions in their layouts, the head dense). */
static int cnn_tensors(npu_step_plan_t *p, const npu_cfg_t *cfg, cnn_pitch_t *q, char *why, size_t n)
{
    uint64_t B = (uint64_t)npu_cfg_word(cfg);
    const npu_conv_t *c1 = &p->conv[1];
    for (int l = 1; l <= p->n_conv; l++)
        if (conv_pitches(cfg, &p->conv[l], l, &q[l], why, n))
            return -1;
    p->x16 = npu_step_tensor_add(p, B, "X16", -1, 16, c1->batch * c1->H * c1->W, c1->C, q[1].px * (unsigned)B);
    for (int l = 1; l <= p->n_conv; l++) {
        conv_tensors(p, B, l, &q[l], l < p->n_conv ? q[l + 1].px * (unsigned)B : 0);
        if (norm_on(p, l))
            norm_tensors(p, B, l);
    }
    for (int l = p->n_conv + 1; l <= p->layers; l++)
        npu_step_fc_tensors(p, B, l);
    return 0;
}

/* Normalised layer l's tensors' q from the free scales (step_scale.h npu_step_q_t): dBn32 sums
 * dN at its dH's q (dH32 of the layer after). */
static void norm_q(npu_step_plan_t *p, int l)
{
    const npu_step_q_t *q = &p->q;
    const npu_step_norm_t *N = &p->nrm[l];
    Q(N->z16) = q->z16[l];
    Q(N->g16) = q->g[l];
    Q(N->g32) = q->g[l] + NPU_STEP_W32_EXTRA;
    Q(N->vg) = q->vg[l];
    Q(N->bn32) = q->n[l];
    Q(N->vbn) = q->vbn[l];
    Q(N->dn16) = q->dn16[l];
    Q(N->dg32) = q->pg[l];
    Q(N->dbn32) = Q(p->l[l + 1].dh32);
}

/* int16: the free scales (q, or the nominal ones) and every tensor's q from them. */
static void cnn_scales(npu_step_plan_t *p, const npu_step_q_t *q, float mu)
{
    npu_step_range_t r;
    if (!q) {
        npu_step_range_nominal(p->layers, p->batch, &r);
        for (int l = 1; l <= p->n_conv; l++)
            r.normed[l] = norm_on(p, l);
        npu_step_q_pick(&r, p->layers, mu, &p->q);
        npu_step_q_cap_sums(&r, p->layers, &p->q);
    }
    p->q = q ? *q : p->q;
    npu_step_assign_q(p, &p->q);
    for (int l = 1; l <= p->n_conv; l++)
        if (norm_on(p, l))
            norm_q(p, l);
}

int npu_step_plan_cnn(const npu_cfg_t *cfg, const npu_conv_t *conv, int n_conv, const int *fc,
                      int n_fc, int batch, float lr, float mu, float wd, int modes,
                      const npu_step_q_t *q, uint64_t base, npu_step_plan_t *p, char *why, size_t n)
{
    return npu_step_plan_cnn_res(cfg, conv, n_conv, NULL, fc, n_fc, batch, lr, mu, wd, modes, q, base, p, why, n);
}

int npu_step_plan_cnn_res(const npu_cfg_t *cfg, const npu_conv_t *conv, int n_conv, const int *res,
                          const int *fc, int n_fc, int batch, float lr, float mu, float wd, int modes,
                          const npu_step_q_t *q, uint64_t base, npu_step_plan_t *p, char *why, size_t n)
{
    uint64_t word = (uint64_t)npu_cfg_word(cfg);
    cnn_pitch_t pq[NPU_STEP_MAX_LAYERS + 1];
    int skip[NPU_STEP_MAX_LAYERS] = {0};
    memset(p, 0, sizeof *p);
    /* tensors on DRAM beats: the conv plans count beats from a tensor's start (conv_plan.h org_x) */
    p->align = (uint64_t)npu_cfg_beat(cfg);
    if (check_cnn(conv, n_conv, fc, n_fc, batch, why, n))
        return -1;
    for (int i = 0; res && i < n_conv; i++) /* the connections without the norm bit */
        skip[i] = npu_net_skip(res[i]);
    if (check_res(conv, n_conv, res ? skip : NULL, why, n))
        return -1;
    for (int i = 0; res && i < n_conv; i++) {
        p->res[i + 1] = skip[i];
        p->nrm[i + 1].on = npu_net_normed(res[i]);
    }
    p->layers = n_conv + n_fc;
    p->n_conv = n_conv;
    p->batch = batch;
    memcpy(&p->lr, &lr, 4);
    memcpy(&p->mu, &mu, 4);
    memcpy(&p->wd, &wd, 4);
    p->dims[0] = conv[0].H * conv[0].W * conv[0].C;
    for (int l = 1; l <= n_conv; l++) {
        p->conv[l] = conv[l - 1];
        p->dims[l] = npu_conv_oh(&conv[l - 1]) * npu_conv_ow(&conv[l - 1]) * conv[l - 1].F;
    }
    for (int i = 1; i <= n_fc; i++)
        p->dims[n_conv + i] = fc[i];
    p->base = p->end = (base + p->align - 1) / p->align * p->align;
    if (cnn_tensors(p, cfg, pq, why, n))
        return -1;
    p->int16 = !npu_cfg_bf16(cfg);
    if (p->int16)
        cnn_scales(p, q, mu);
    if (!(p->k = calloc((size_t)9 * p->layers, sizeof *p->k))) { /* a normalised conv: 8 */
        snprintf(why, n, "out of memory");
        return -1;
    }
    for (int l = 1; l <= p->layers; l++)
        if (l <= n_conv)
            conv_fwd(p, l);
        else
            npu_step_fc_fwd(p, l, modes);
    p->n_fwd = p->nk;
    for (int l = p->layers; l > n_conv; l--)
        npu_step_fc_bwd(p, cfg, l, modes, l - 1 > n_conv);
    act_grad(p, cfg, n_conv, p->l[n_conv + 1].dh32);
    for (int l = n_conv; l >= 1; l--)
        conv_bwd(p, cfg, l, pq[l].pw * (unsigned)word);
    if (p->err[0]) {
        snprintf(why, n, "%s", p->err);
        npu_step_plan_free(p);
        return -1;
    }
    return 0;
}

int npu_step_plan_norm(const npu_cfg_t *cfg, int rows, int f, float lr, float mu, npu_step_plan_t *p, char *why,
                       size_t n)
{
    uint64_t B = (uint64_t)npu_cfg_word(cfg);
    cnn_pitch_t q = {0, 0, 0, 0, 0, 0};
    memset(p, 0, sizeof *p);
    if (!npu_cfg_bf16(cfg) || rows < 1 || f < 1) {
        snprintf(why, n, "the normalisation's kernels: a bf16 configuration, rows and channels >= 1");
        return -1;
    }
    /* one 1x1 convolution whose output is `rows` pixels: its activation kernels are any layer's */
    p->layers = p->n_conv = 1;
    p->batch = rows;
    p->conv[1] = (npu_conv_t){rows, 1, 1, 1, f, 1, 1, 1, 0, 1, 0};
    p->nrm[1].on = 1;
    memcpy(&p->lr, &lr, 4);
    memcpy(&p->mu, &mu, 4);
    p->align = (uint64_t)npu_cfg_beat(cfg);
    p->x16 = npu_step_tensor_add(p, B, "X16", -1, 16, rows, 1, 0);
    conv_tensors(p, B, 1, &q, 0);
    norm_tensors(p, B, 1);
    int dh = npu_step_tensor_add(p, B, "dH32", 2, 32, rows, f, 0);
    if (!(p->k = calloc(4, sizeof *p->k))) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    norm_fwd(p, 1);
    norm_grad(p, cfg, 1, dh);
    if (p->err[0]) {
        snprintf(why, n, "%s", p->err);
        npu_step_plan_free(p);
        return -1;
    }
    return 0;
}
