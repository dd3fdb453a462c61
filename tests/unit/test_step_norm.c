/*
 * test_step_norm.c - the normalisation-like layer (per-channel scale and shift after a
 * convolution, `cnn:cFn,...`, ref/net_ref.h NPU_NET_NORM) in the step engine: the spec token,
 * the plan's kernels and their VMULs, the refusal at int16; whole conv -> norm -> ReLU steps on
 * the functional model (bf16 at S = 2 and 8, with a residual connection through a normalised
 * layer), every kernel bit-exact, each kernel's DRAM bytes per tag the estimator's, the loss
 * falling; and against the fp32 reference trainer (which gains the same layer): the logits, the
 * gradients dgamma and dbeta within bf16 rounding, a dgamma that were dbeta's caught.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/step/step_plan.h"
#include "hw/isa.h"
#include "model/est_step.h"
#include "npu_funcsim.h"
#include "ref/net_ref.h"
#include "run/fit.h"
#include "run/step_run.h"
#include "cnn_step_test.h"
#include "ref_grad_check.h"
#include "test_cfgs.h"

static npu_est_kplan_t est; /* large */

Test(step_norm, spec_token)
{
    npu_net_shape_t s;
    char why[200], d[200];
    cr_assert_eq(npu_net_parse("cnn:c4n,c8s2,fc10", 6, 6, 1, &s, why, sizeof why), 0, "%s", why);
    cr_assert_eq(s.res[0], NPU_NET_NORM);
    cr_assert(npu_net_normed(s.res[0]) && !npu_net_skip(s.res[0]) && !s.res[1]);
    cr_assert_eq(npu_net_residual(&s), -1, "a norm is no residual connection");
    npu_net_describe(&s, d, sizeof d);
    cr_assert_str_eq(d, "c4k3s1n-c8k3s2-fc10");
    cr_assert_eq(npu_net_parse("cnn:c4,c4k3p1n+1,fc10", 6, 6, 1, &s, why, sizeof why), 0, "%s", why);
    cr_assert_eq(s.res[1], NPU_NET_NORM | 2, "the norm and the skip from layer 1");
    npu_net_describe(&s, d, sizeof d);
    cr_assert_str_eq(d, "c4k3s1-c4k3s1n+1-fc10");
    cr_assert_eq(npu_net_parse("cnn:c4,fc10n", 6, 6, 1, &s, why, sizeof why), -1, "no norm on fc");
    cr_assert_eq(npu_net_parse("cnn:c4nn,fc10", 6, 6, 1, &s, why, sizeof why), -1);
    cr_assert(strstr(why, "[n]"), "%s", why);
}

/* cnn:c4n,c8s2,fc10: layer 1's forward is norm_relu (NARROW to Z16, VMUL by G16 broadcast,
 * WIDEN, ADD Bn32, NARROW, RELU, no conv bias), its backward norm_relu_grad, norm_scale_grad
 * (VMUL(dN16, Z16) summed for dgamma, VMUL(dN16, G16) the conv's dZ16) and norm_update; layer 2
 * unchanged. */
Test(step_norm, plan_kernels)
{
    npu_cfg_t c = bf16_cfg(8);
    cnn_net_t r;
    npu_step_plan_t p, q;
    char why[256];
    cnn_plan_of(&c, "cnn:c4n,c8s2,fc10", 8, &r, &p);
    int plain[2] = {0, 0};
    cr_assert_eq(npu_step_plan_cnn_res(&c, r.conv, r.n_conv, plain, r.fc, r.n_fc, 8, 0.1f, 0.9f, 0, 0, NULL, 0,
                                       &q, why, sizeof why), 0, "%s", why);
    cr_assert_eq(p.nk, q.nk + 2, "norm_relu for bias_relu; three backward kernels for relu_grad_bias");
    cr_assert_eq(p.nt, q.nt + 9 - 3, "Z16, dN16, G32, G16, VG, Bn32, VBn, dG32, dBn32; no b32, Vb, db32");
    cr_assert(p.l[1].b32 < 0 && p.l[1].vb < 0 && p.l[1].db32 < 0 && p.l[2].b32 >= 0, "no bias in layer 1");
    npu_step_plan_free(&q);
    cr_assert(p.nrm[1].on && !p.nrm[2].on && p.res[1] == 0);
    const npu_vkern_t *f = &kernel_named(&p, "fwd L1 norm_relu")->v;
    static const unsigned fwd[] = {NPU_VOP_NARROW, NPU_VOP_VMUL, NPU_VOP_WIDEN, NPU_VOP_ADD, NPU_VOP_NARROW, NPU_VOP_RELU};
    cr_assert_eq(f->nop, 6);
    for (int i = 0; i < 6; i++)
        cr_assert_eq(f->op[i].vop, fwd[i], "op %d: %s", i, npu_vop_name(f->op[i].vop));
    cr_assert(f->t[f->op[1].b].one_row && f->t[f->op[1].b].dram == p.t[p.nrm[1].g16].dram, "VMUL by G16 broadcast");
    const npu_vkern_t *s = &kernel_named(&p, "bwd L1 norm_scale_grad")->v;
    cr_assert_eq(s->op[0].vop, NPU_VOP_VMUL);
    cr_assert_eq(s->t[s->op[0].b].dram, p.t[p.nrm[1].z16].dram, "dN16 . Z16");
    cr_assert_eq(s->op[2].vop, NPU_VOP_SUM);
    cr_assert_eq(s->t[s->op[2].d].dram, p.t[p.nrm[1].dg32].dram);
    cr_assert_eq(s->op[3].vop, NPU_VOP_VMUL);
    cr_assert_eq(s->t[s->op[3].d].dram, p.t[p.l[1].dz16].dram, "the conv's dY = gamma . dN");
    kernel_named(&p, "bwd L1 norm_relu_grad");
    kernel_named(&p, "update L1 norm_update");
    kernel_named(&p, "fwd L2 bias_relu");
    npu_step_plan_free(&p);
}

/* At int16 configurations the same kernels in fixed point (step_scale.h): each VMUL shifts from
 * its exact product's q to its result's, T16 at most Z16's + G16's q, N (Z32 after the conv,
 * Bn32) a 32-bit scale that one AXPBY reaches from T16's, H16 at most N's, G32 twelve bits finer
 * than G16 and narrowed by that, dBn32 at its dH's q. The plan's errors would name a shift out
 * of 0..31; a planted fault (T16's q above the exact product's) is refused. */
Test(step_norm, plan_int16_scales)
{
    npu_cfg_t c = test_cfg(8);
    cnn_net_t r;
    npu_step_plan_t p;
    char why[256];
    cnn_plan_of(&c, "cnn:c4n,c8s2,fc10", 8, &r, &p);
    const npu_step_norm_t *N = &p.nrm[1];
    const npu_step_q_t *q = &p.q;
    cr_assert(p.int16 && q->t[1] <= q->z16[1] + q->g[1] && q->h[1] <= q->n[1] && q->n[1] >= q->t[1],
              "t %d n %d z16 %d g %d h %d", q->t[1], q->n[1], q->z16[1], q->g[1], q->h[1]);
    cr_assert_eq(p.t[N->g32].q, p.t[N->g16].q + NPU_STEP_W32_EXTRA);
    cr_assert_eq(p.t[N->bn32].q, q->n[1]);
    cr_assert_eq(p.t[N->dbn32].q, p.t[p.l[2].dh32].q);
    const npu_vkern_t *f = &kernel_named(&p, "fwd L1 norm_relu")->v, *s = &kernel_named(&p, "bwd L1 norm_scale_grad")->v;
    cr_assert_eq(f->op[1].vop, NPU_VOP_VMUL);
    cr_assert_eq((int)f->op[1].shift, q->z16[1] + q->g[1] - q->t[1], "T16 = Z16 G16 at its q");
    cr_assert_eq(f->op[3].vop, NPU_VOP_AXPBY, "N = widen(T16) + Bn32 across their scales");
    cr_assert_eq((int)f->op[4].shift, q->n[1] - q->h[1], "H16 narrowed from N's q");
    cr_assert_eq((int)s->op[0].shift, q->dn16[1] + q->z16[1] - p.t[N->dg32].q, "dN16 Z16 at dG32's q");
    cr_assert_eq((int)s->op[3].shift, q->dn16[1] + q->g[1] - p.t[p.l[1].dz16].q, "dZ16 = G16 dN16");
    const npu_vkern_t *u = &kernel_named(&p, "update L1 norm_update")->v;
    cr_assert_eq((int)u->op[u->nop - 1].shift, NPU_STEP_W32_EXTRA, "G16 from G32");
    npu_step_q_t bad = p.q;
    npu_step_plan_free(&p);
    bad.t[1] = bad.z16[1] + bad.g[1] + 1;
    cr_assert_eq(npu_step_plan_cnn_res(&c, r.conv, r.n_conv, r.net.res, r.fc, r.n_fc, 8, 0.1f, 0.9f, 0, 0, &bad, 0, &p,
                                       why, sizeof why), -1, "a VMUL shift below 0 is refused");
    cr_assert(strstr(why, "VMUL"), "%s", why);
}


/* Whole steps of spec on the functional model (cnn_step_test.h): every kernel bit-exact, each
 * kernel's DRAM bytes per tag and every tensor's In / Out bytes the estimator's, the loss falling. */
static void norm_on_model_cfg(npu_cfg_t c, const char *spec, int batch, int H, int steps)
{
    cnn_steps_on_model(&c, spec, batch, H, steps, &est);
}

static void norm_on_model(const char *spec, int S, int batch, int H, int steps)
{
    norm_on_model_cfg(bf16_cfg(S), spec, batch, H, steps);
}

Test(step_norm, on_model_int16_s2) { norm_on_model_cfg(test_cfg(2), "cnn:c4n,c8s2,fc10", 4, 6, 6); }
Test(step_norm, on_model_int16_s8_residual) { norm_on_model_cfg(test_cfg(8), "cnn:c8n,c8n,c8n+1,c8s2,fc10", 4, 8, 4); }
Test(step_norm, on_model_s2) { norm_on_model("cnn:c4n,c8s2,fc10", 2, 4, 6, 6); }
Test(step_norm, on_model_s8_residual) { norm_on_model("cnn:c8n,c8n,c8n+1,c8s2,fc10", 8, 4, 8, 6); }

static double max_diff(const float *a, const float *b, size_t n, double *mag)
{
    double d = 0;
    *mag = 0;
    for (size_t i = 0; i < n; i++) {
        d = fmax(d, fabs((double)a[i] - b[i]));
        *mag = fmax(*mag, fabs((double)b[i]));
    }
    return d;
}

/* The F values of one-row 32-bit tensor t in the simulator's DRAM as fp32: their bits (bf16
 * configurations) or their fixed point / 2^q (int16). */
static void read_row32(npu_sim_t *sim, const npu_step_plan_t *p, int t, float *v, int F)
{
    const uint8_t *img = npu_sim_dram(sim, NULL) + p->t[t].dram;
    for (int i = 0; i < F; i++) {
        int32_t u;
        memcpy(&u, img + 4 * i, 4);
        if (p->int16)
            v[i] = (float)ldexp((double)u, -p->t[t].q);
        else
            memcpy(&v[i], &u, 4);
    }
}

/* One step of cnn:c4n,c4s2,fc10 (S = 2) beside the fp32 reference from the same parameters and
 * batch: the logits, then the engine's dG32[1] and dBn32[1] against the reference's dgamma and
 * dbeta, within `tol` of their largest (bf16 rounding; int16: the rounding at the static scales
 * npu fit calibrates, npu_fit_step_q). dgamma and dbeta differ by far more than the tolerance, so a dgamma computed as
 * dbeta (the VMUL by Z16 left out) is caught. */
static void norm_against_reference(npu_cfg_t c, double tol)
{
    enum { B = 4, H = 6, C = 10, F = 4 };
    cnn_net_t r;
    npu_step_run_t s;
    npu_net_ref_t m;
    npu_step_q_t q;
    npu_sgd_t o = {0.1f, 0.9f, 0};
    float *w[NPU_NET_MAX_LAYERS], *b[NPU_NET_MAX_LAYERS], x[B * H * H], lg[B * C], dl[B * C], dg[F], dbn[F];
    uint8_t y[B];
    cnn_net("cnn:c4n,c4s2,fc10", H, B, &r);
    for (int i = 0; i < B * H * H; i++)
        x[i] = (float)(i * 5 % 17) / 16.0f;
    for (int i = 0; i < B; i++)
        y[i] = (uint8_t)(i * 3 % C);
    cr_assert_eq(npu_net_init(&r.net, 3, w, b), 0);
    if (!npu_cfg_bf16(&c)) { /* int16: the scales npu fit calibrates, from a reference step */
        cr_assert_eq(npu_net_ref_new(&m, &r.net, B, w, b), 0);
        npu_net_ref_step(&m, x, y, &o);
        npu_fit_step_q(&m, w, o.momentum, &q);
        npu_net_ref_free(&m);
    }
    npu_funcsim_config(&c);
    npu_sim_t *sim = npu_sim_open(NULL);
    cr_assert_eq(npu_step_run_init_cnn(&s, &c, sim, r.conv, r.n_conv, r.net.res, r.fc, r.n_fc, B, o.lr, o.momentum,
                                       o.wd, 0, npu_cfg_bf16(&c) ? NULL : &q, 50000000), 0, "%s", s.why);
    cr_assert_eq(npu_net_ref_new(&m, &r.net, B, w, b), 0);
    cr_assert_not_null(m.gam[0]);
    cr_assert_null(m.gam[1]);
    npu_step_run_params(&s, w, b);
    cr_assert_eq(npu_step_forward(&s, x, B, lg), 0, "%s", s.why);
    npu_net_ref_forward(&m, x, B);
    double mag, d = max_diff(lg, m.act[3], B * C, &mag);
    cr_log_info("logits differ by %g of %g", d, mag);
    cr_assert_lt(d, tol * mag, "logits %g from the reference's (largest %g)", d, mag);
    npu_softmax_xent(lg, y, B, C, dl);
    cr_assert_eq(npu_step_backward(&s, dl), 0, "%s", s.why);
    npu_net_ref_step(&m, x, y, &o);
    read_row32(sim, &s.plan, s.plan.nrm[1].dg32, dg, F);
    read_row32(sim, &s.plan, s.plan.nrm[1].dbn32, dbn, F);
    double mg, mb, dd = max_diff(dg, m.ggam[0], F, &mg), db = max_diff(dbn, m.gbet[0], F, &mb), gap;
    double tol_g = tol * mg + 1e-4, tol_b = tol * mb + 1e-4;
    cr_log_info("dgamma differs by %g of %g, dbeta by %g of %g", dd, mg, db, mb);
    cr_assert_lt(dd, tol_g, "dG32[1] %g from the reference's (largest %g)", dd, mg);
    cr_assert_lt(db, tol_b, "dBn32[1] %g from the reference's (largest %g)", db, mb);
    gap = max_diff(m.gbet[0], m.ggam[0], F, &mg);
    cr_assert_gt(gap, 10 * tol_g, "a dgamma that were dbeta (%g apart) would be caught", gap);
    npu_step_run_free(&s);
    npu_sim_close(sim);
    npu_net_ref_free(&m);
    npu_net_params_free(&r.net, w, b);
}

Test(step_norm, against_reference) { norm_against_reference(bf16_cfg(2), 0.02); }
Test(step_norm, against_reference_int16) { norm_against_reference(test_cfg(2), 0.01); }

/* The reference's normalised layer (the golden of the engine's): its dgamma, dbeta and the
 * weights' gradients through dZ = gamma dN against central finite differences of the loss, with
 * gamma and beta away from 1 and 0, a residual connection into a normalised layer included. */
Test(step_norm, reference_gradients_finite_differences)
{
    check_ref_gradients("cnn:c3n,c4s2,fc3");
    check_ref_gradients("cnn:c2n,c2n+1,fc3");
}

/* npu_step_plan_norm (the estimator's view of a normalised layer): for each normalised layer of
 * cnn:c4n,c8s2n,fc10 its four kernels are the whole plan's, op by op, and take the same vector
 * busy cycles. The planted fault (the layer's pixels one row short) changes the busy cycles. */
static uint64_t busy_of(const npu_cfg_t *c, const npu_vkern_t *k)
{
    uint64_t b = 0;
    char why[200];
    cr_assert_eq(npu_vk_vec_busy(c, k, &b, why, sizeof why), 0, "%s: %s", k->name, why);
    return b;
}

Test(step_norm, plan_norm_is_the_layers_kernels)
{
    static const char *const what[4] = {"fwd L%d norm_relu", "bwd L%d norm_relu_grad", "bwd L%d norm_scale_grad",
                                        "update L%d norm_update"};
    npu_cfg_t c = bf16_cfg(8);
    cnn_net_t r;
    npu_step_plan_t p, *q = malloc(sizeof *q);
    char why[256], name[48];
    cr_assert(q);
    cnn_net("cnn:c4n,c8s2n,fc10", 8, 8, &r);
    cr_assert_eq(cnn_plan(&c, &r, 8, &p, why, sizeof why), 0, "%s", why);
    for (int l = 1; l <= 2; l++)
        for (int fault = 0; fault <= 1; fault++) {
            const npu_conv_t *cv = &p.conv[l];
            int rows = 8 * npu_conv_oh(cv) * npu_conv_ow(cv) - fault;
            cr_assert_eq(npu_step_plan_norm(&c, rows, cv->F, 0.1f, 0.9f, q, why, sizeof why), 0, "%s", why);
            cr_assert_eq(q->nk, 4);
            for (int i = 0; i < 4; i++) {
                snprintf(name, sizeof name, what[i], l);
                const npu_step_kernel_t *k = kernel_named(&p, name);
                const npu_vkern_t *a = &k->v, *b = &q->k[i].v;
                cr_assert_eq(q->k[i].phase, k->phase, "%s", name);
                cr_assert_eq(b->nop, a->nop, "%s", name);
                cr_assert(b->rows == a->rows - (i < 3 ? fault : 0) && b->len == a->len, "%s", name);
                for (int o = 0; o < a->nop; o++)
                    cr_assert(b->op[o].vop == a->op[o].vop && b->op[o].wide == a->op[o].wide, "%s op %d", name, o);
                if (!fault)
                    cr_assert_eq(busy_of(&c, b), busy_of(&c, a), "%s", name);
                else if (a->rows > 1 && i < 3)
                    cr_assert_neq(busy_of(&c, b), busy_of(&c, a), "%s: the fault is seen", name);
            }
            npu_step_plan_free(q);
        }
    npu_step_plan_free(&p);
    c = test_cfg(8);
    cr_assert_eq(npu_step_plan_norm(&c, 64, 4, 0.1f, 0.9f, q, why, sizeof why), -1, "int16: refused");
    free(q);
}
