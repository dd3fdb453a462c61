/*
 * test_step_residual.c - residual blocks in the step engine's CNN steps (compile/step/step_plan.h
 * npu_step_plan_cnn_res, `cnn:...+J`): the plan's kernels, tensors, ops and refusals; the forward
 * add reading the skip (a kernel that does not read it is caught by its DRAM bytes); whole steps
 * on the functional model (bf16 at S = 2 and 8, int16) every kernel bit-exact, each kernel's DRAM
 * bytes per tag and every tensor's In / Out bytes the estimator's, the loss falling; the tag map
 * (compile/step/step_tags.h): one tensor per tag and direction in every kernel; steps under the
 * scheduler's plan with one bank resident (conv kernels below it, bit-exact, every tensor's bytes
 * the estimator's, the block's add reading the skip from the SPM); and against the fp32 reference trainer
 * (ref/net_ref, which gains the same residual add): the logits and the skip source's bias gradient
 * within bf16 rounding, the engine without the add caught; the analytical estimator's add<l> timed
 * as the step engine's fused add; npu sweep --validate's probe of a residual point.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/step/step_plan.h"
#include "compile/step/step_res.h"
#include "compile/step/step_tags.h"
#include "compile/step/vkern.h"
#include "hw/isa.h"
#include "model/est_step.h"
#include "model/estimate.h"
#include "model/sweep.h"
#include "npu_funcsim.h"
#include "prog/prog_expect.h"
#include "ref/net_ref.h"
#include "run/fit.h"
#include "run/step_probe.h"
#include "run/step_run.h"
#include "cnn_step_test.h"
#include "test_cfgs.h"

static npu_est_kplan_t est; /* large */

/* The vector kernel's tensor at DRAM address dram that it loads, -1 if none. */
static int loads(const npu_vkern_t *v, uint32_t dram)
{
    for (int t = 0; t < v->nt; t++)
        if (v->t[t].load && v->t[t].dram == dram)
            return t;
    return -1;
}

/* The bytes kernel v's program reads under tag. */
static uint64_t read_bytes(const npu_cfg_t *c, const npu_vkern_t *v, unsigned tag)
{
    npu_prog_t pr;
    npu_prog_expect_t x;
    char why[200];
    npu_prog_init(&pr);
    cr_assert_eq(npu_vk_emit(c, v, &pr, why, sizeof why), 0, "%s", why);
    npu_prog_expect(c, pr.insn, pr.n, &x);
    npu_prog_free(&pr);
    return x.rd_bytes[tag];
}

/* cnn:c4,c4,c4+1,fc10: layer 3 adds H16[1] before its ReLU (bias_add_relu: WIDEN then AXPBY(1, 1)
 * into Z32); layer 1's relu_grad_bias adds the skip's gradient widen(dZ16[3]) to its dH. The
 * forward add reads every byte of H16[1] under a DMA tag of its own (the plan's, one per tensor):
 * the same kernel with the skip not loaded (the planted fault) reads exactly those bytes fewer. */
Test(step_residual, plan_kernels_and_skip_reads)
{
    npu_cfg_t c = bf16_cfg(8);
    cnn_net_t r;
    npu_step_plan_t p;
    char why[256];
    cnn_plan_of(&c, "cnn:c4,c4,c4+1,fc10", 8, &r, &p);
    cr_assert_eq(p.nk, 24, "7 per convolution, 3 for the head");
    const npu_vkern_t *f = &kernel_named(&p, "fwd L3 bias_add_relu")->v;
    const npu_step_tensor_t *h1 = &p.t[p.l[1].h16], *dz3 = &p.t[p.l[3].dz16];
    int sk = loads(f, h1->dram);
    cr_assert_geq(sk, 0, "the forward add loads H16[1]");
    cr_assert_eq(f->op[1].vop, NPU_VOP_WIDEN);
    cr_assert_eq(f->op[1].a, sk);
    cr_assert_eq(f->op[2].vop, NPU_VOP_AXPBY);
    cr_assert_eq(f->op[2].b, f->op[1].d, "Z32 += the widened skip");
    cr_assert_eq(f->op[2].alpha, 0x3F800000u);
    cr_assert_eq(f->op[2].beta, 0x3F800000u);
    const npu_vkern_t *g = &kernel_named(&p, "bwd L1 add_relu_grad_bias")->v;
    cr_assert_geq(loads(g, dz3->dram), 0, "the skip's gradient: dZ16[3]");
    cr_assert_eq(loads(&kernel_named(&p, "bwd L2 relu_grad_bias")->v, dz3->dram), -1, "only into layer 1");
    cr_assert_eq(npu_step_tensor_find(&p, "dZ32[3]"), -1, "no new DRAM tensor");
    uint64_t rd = read_bytes(&c, f, f->t[sk].tag);
    npu_vkern_t bad = *f;
    bad.t[sk].load = 0; /* planted: the add does not read the skip */
    cr_assert_eq(rd, h1->bytes, "the skip read once, whole, under a tag of its own");
    cr_assert_eq(rd - read_bytes(&c, &bad, f->t[sk].tag), h1->bytes, "the planted fault reads none of it");
    npu_step_plan_free(&p);
    c = test_cfg(8); /* int16: the adds' scalars bring the skip to Z32's scale */
    cr_assert_eq(cnn_plan(&c, &r, 8, &p, why, sizeof why), 0, "%s", why);
    f = &kernel_named(&p, "fwd L3 bias_add_relu")->v;
    const npu_vk_op_t *o = &f->op[2];
    int qz = p.t[p.l[3].z32].q, qh = p.t[p.l[1].h16].q;
    cr_assert_eq(ldexp((int16_t)o->alpha, -(int)o->shift), 1.0, "alpha %d shift %u", (int16_t)o->alpha, o->shift);
    cr_assert_eq(ldexp((int16_t)o->beta, qh - qz - (int)o->shift), 1.0, "beta %d", (int16_t)o->beta);
    npu_step_plan_free(&p);
}

/* Every kernel's tensors in the plan's tag map (compile/step/step_tags.h) for cnn:c4,c4,c4+1,fc10
 * at int16 and bf16: no (tag, direction) shared, each DRAM tensor a kernel moves named under its
 * direction (the conv kernels' by role: the fused backward's X, W, DY, DX, DW; the transpose's
 * W16T read and W16 written under its one tag). Planted: two of a vector kernel's tensors under one
 * tag, and the first layer's backward named with a dX, are caught. */
Test(step_residual, tag_map_one_tensor_per_tag)
{
    cnn_net_t r;
    npu_step_plan_t p;
    npu_step_tagmap_t m;
    char why[256];
    cnn_net("cnn:c4,c4,c4+1,fc10", 8, 4, &r);
    for (int bf = 0; bf < 2; bf++) {
        npu_cfg_t c = bf ? bf16_cfg(2) : test_cfg(8);
        cr_assert_eq(cnn_plan(&c, &r, 4, &p, why, sizeof why), 0, "%s", why);
        for (int i = 0; i < p.nk; i++) {
            const npu_step_kernel_t *k = &p.k[i];
            cr_assert_eq(npu_step_tagmap(&p, k, &m), 0, "%s: a tag two tensors share", k->name);
            for (int j = 0; k->kind == NPU_SK_VEC && j < k->v.nt; j++)
                if (k->v.t[j].load || k->v.t[j].store) {
                    int t = npu_step_tensor_find(&p, k->v.t[j].name);
                    cr_assert(t >= 0 && (!k->v.t[j].load || m.rd[k->v.t[j].tag] == t) &&
                              (!k->v.t[j].store || m.wr[k->v.t[j].tag] == t), "%s: %s", k->name, k->v.t[j].name);
                }
        }
        const npu_step_kernel_t *b2 = kernel_named(&p, "bwd L2 conv_bwd"), *x3 = kernel_named(&p, "update L3 transpose");
        cr_assert_eq(npu_step_tagmap(&p, b2, &m), 0);
        cr_assert(m.rd[NPU_TAG_X] == p.l[1].h16 && m.rd[NPU_TAG_W] == p.l[2].w16 && m.rd[NPU_TAG_DY] == p.l[2].dz16 &&
                  m.wr[NPU_TAG_DX] == p.l[2].dh32 && m.wr[NPU_TAG_DW] == p.l[2].dw32, "the fused backward's roles");
        cr_assert_eq(npu_step_tagmap(&p, x3, &m), 0);
        cr_assert(m.rd[x3->xp.tag] == p.l[3].w16t && m.wr[x3->xp.tag] == p.l[3].w16, "the transpose's two sides");
        npu_step_kernel_t bad = *kernel_named(&p, "bwd L1 add_relu_grad_bias");
        int a = -1, z = -1;
        for (int j = 0; j < bad.v.nt; j++) {
            a = !strcmp(bad.v.t[j].name, "Vb[1]") ? j : a;
            z = !strcmp(bad.v.t[j].name, "b32[1]") ? j : z;
        }
        cr_assert(a >= 0 && z >= 0);
        bad.v.t[z].tag = bad.v.t[a].tag; /* planted: the bias and its velocity under one tag */
        cr_assert_eq(npu_step_tagmap(&p, &bad, &m), -1, "two tensors under one tag are caught");
        bad = *kernel_named(&p, "bwd L1 conv_bwd");
        cr_assert_eq(npu_step_tagmap(&p, &bad, &m), 0);
        cr_assert_eq(m.wr[NPU_TAG_DX], -1, "the first layer writes no dX");
        bad.cv.no_dx = 0;
        bad.cv.dx = p.t[p.l[1].w32].dram; /* planted: a dX that is another tensor's */
        cr_assert_eq(npu_step_tagmap(&p, &bad, &m), 0);
        cr_assert_eq(m.wr[NPU_TAG_DX], p.l[1].w32);
        uint64_t rd[NPU_NUM_TAGS] = {0}, wr[NPU_NUM_TAGS] = {0}, in[NPU_STEP_MAX_TENSORS] = {0};
        uint64_t out[NPU_STEP_MAX_TENSORS] = {0};
        wr[NPU_TAG_PARTIAL] = 64; /* bytes on a tag no tensor takes are returned, not dropped */
        wr[NPU_TAG_DW] = 32;
        cr_assert_eq(npu_step_tag_split(&m, rd, wr, in, out), 64u);
        cr_assert_eq(out[p.l[1].dw32], 32u);
        npu_step_plan_free(&p);
    }
}

/* A connection the plan cannot take is refused with the layer: shapes that differ (a strided
 * layer), two skips from one activation, one from a layer after it, one into the head. */
Test(step_residual, refusals)
{
    npu_cfg_t c = bf16_cfg(2);
    cnn_net_t r;
    npu_step_plan_t p;
    char why[256];
    cnn_net("cnn:c4,c4,c4,fc10", 6, 4, &r);
    int bad[][3] = {{0, 0, 2}, {0, 2, 2}, {0, 3, 0}, {2, 0, 0}};
    r.conv[2].stride = 2; /* 3x3 outputs: no earlier activation of its shape */
    r.fc[0] = npu_conv_oh(&r.conv[2]) * npu_conv_ow(&r.conv[2]) * 4;
    cr_assert_eq(npu_step_plan_cnn_res(&c, r.conv, 3, bad[0], r.fc, 1, 4, 0.1f, 0.9f, 0, 0, NULL, 0, &p, why, sizeof why), -1);
    cr_assert(strstr(why, "layer 3") && strstr(why, "residual +1"), "%s", why);
    r.conv[2].stride = 1;
    r.fc[0] = 6 * 6 * 4;
    for (int i = 1; i < 4; i++) {
        cr_assert_eq(npu_step_plan_cnn_res(&c, r.conv, 3, bad[i], r.fc, 1, 4, 0.1f, 0.9f, 0, 0, NULL, 0, &p, why,
                                           sizeof why), -1, "case %d", i);
        cr_assert(strstr(why, "residual"), "%s", why);
    }
    int ok[3] = {0, 2, 0};
    cr_assert_eq(npu_step_plan_cnn_res(&c, r.conv, 3, ok, r.fc, 1, 4, 0.1f, 0.9f, 0, 0, NULL, 0, &p, why, sizeof why), 0,
                 "%s", why);
    npu_step_plan_free(&p);
    npu_conv_t cv[1];
    int fc[3];
    int n_fc;
    cr_assert_eq(npu_net_parse("cnn:c4,fc16,fc16+2", 6, 6, 1, &r.net, why, sizeof why), 0, "%s", why);
    cr_assert_eq(npu_fit_cnn_layers(&r.net, 4, cv, fc, &n_fc), -1, "a skip into the head");
}

static void residual_on_model(const char *spec, int S, int int16, int batch, int H, int steps)
{
    npu_cfg_t c = int16 ? test_cfg(S) : bf16_cfg(S);
    cnn_steps_on_model(&c, spec, batch, H, steps, &est);
}

/* spec's steps under the scheduler's plan with one bank resident (compile/step/step_res.h) on the
 * functional model: every kernel bit-exact, the conv kernels and transposes planned below the
 * resident bank, some forward convolution draining its output into resident rows, some fused
 * backward reading its dY in place and some draining its dX into resident rows, every tensor's In /
 * Out bytes the estimator's (npu_estimate_step_cnn_res), and
 * the block's add reading the skip `skip` at least one whole read less than the plain step. */
static void resident_on_model(const char *spec, int S, int int16, int batch, int H, const char *skip)
{
    npu_cfg_t c = int16 ? test_cfg(S) : bf16_cfg(S);
    cnn_net_t r;
    npu_step_run_t s;
    char why[256];
    float *w[NPU_NET_MAX_LAYERS], *b[NPU_NET_MAX_LAYERS];
    cnn_net(spec, H, batch, &r);
    npu_funcsim_config(&c);
    npu_sim_t *sim = npu_sim_open(NULL);
    cr_assert_eq(npu_estimate_step_cnn(&c, r.conv, r.n_conv, r.net.res, r.fc, r.n_fc, batch, 0, &est, why, sizeof why),
                 0, "%s", why);
    int sk;
    uint64_t plain = 0;
    for (int t = 0; t < est.nt; t++)
        plain = strcmp(est.t[t].name, skip) ? plain : est.t[t].in;
    cr_assert_eq(npu_step_run_init_cnn(&s, &c, sim, r.conv, r.n_conv, r.net.res, r.fc, r.n_fc, batch, 0.1f, 0.9f, 0, 0,
                                       NULL, 50000000), 0, "%s", s.why);
    cr_assert_eq(npu_step_run_resident(&s, 1), 0, "%s", s.why);
    cr_assert_eq(npu_estimate_step_cnn_res(&c, r.conv, r.n_conv, r.net.res, r.fc, r.n_fc, batch, 0, 1, 0,
                                           NPU_RES_PREFETCH | NPU_RES_LOOKAHEAD, &est, why, sizeof why), 0, "%s", why);
    int drained = 0, dy_in = 0, dx_out = 0; /* convolutions whose output / dY the plan keeps in the SPM */
    for (int i = 0; i < s.plan.nk; i++) {
        const npu_step_kernel_t *k = &s.res->k[i];
        if (k->kind == NPU_SK_CONV_FWD || k->kind == NPU_SK_CONV_BWD)
            cr_assert_eq(k->cv.spm_limit, s.res->limit, "%s: planned below the resident bank", k->name);
        if (k->kind == NPU_SK_XPOSE)
            cr_assert_eq(k->xp.spm_limit, s.res->limit, "%s", k->name);
        drained += k->kind == NPU_SK_CONV_FWD && k->cv.res_y;
        cr_assert(!k->cv.res_y || k->cv.spm_y >= s.res->limit, "%s: its output rows in the resident area", k->name);
        dy_in += k->kind == NPU_SK_CONV_BWD && k->cv.res_dy;
        dx_out += k->kind == NPU_SK_CONV_BWD && k->cv.res_dx;
        cr_assert(!k->cv.res_dy || k->cv.spm_dy >= s.res->limit, "%s: its dY rows in the resident area", k->name);
        cr_assert(!k->cv.res_dx || k->cv.spm_dx >= s.res->limit, "%s: its dX rows in the resident area", k->name);
    }
    cr_assert_gt(drained, 0, "%s: no convolution's output drained into the SPM", spec);
    cr_assert_gt(dy_in, 0, "%s: no fused backward reads its dY in place", spec);
    cr_assert_gt(dx_out, 0, "%s: no fused backward drains its dX into the SPM", spec);
    cr_log_info("%s: %d forward outputs drained, %d backwards read dY in place, %d drain dX", spec, drained, dy_in,
                dx_out);
    cr_assert_eq(npu_net_init(&r.net, 7, w, b), 0);
    npu_step_run_params(&s, w, b);
    cnn_train_steps(&s, batch, H * H, r.fc[r.n_fc], 3, NULL, NULL);
    cr_assert_eq(s.res->ambiguous, 0);
    for (int t = 0; t < s.plan.nt; t++) {
        cr_assert_eq(s.t_in[t], est.t[t].in, "%s In", est.t[t].name);
        cr_assert_eq(s.t_out[t], est.t[t].out, "%s Out", est.t[t].name);
    }
    sk = npu_step_tensor_find(&s.plan, skip);
    cr_assert_geq(sk, 0);
    cr_assert_leq(s.t_in[sk] + s.plan.t[sk].bytes, plain, "%s: %llu B In resident, %llu plain", skip,
                  (unsigned long long)s.t_in[sk], (unsigned long long)plain);
    npu_step_run_free(&s);
    npu_sim_close(sim);
    npu_net_params_free(&r.net, w, b);
}

Test(step_residual, resident_on_model_s2) { resident_on_model("cnn:c4,c4,c4+1,c4s2,fc10", 2, 0, 2, 8, "H16[1]"); }
Test(step_residual, resident_on_model_s2_int16) { resident_on_model("cnn:c4,c4,c4+1,c4s2,fc10", 2, 1, 2, 8, "H16[1]"); }
Test(step_residual, resident_on_model_s8) { resident_on_model("cnn:c8,c8s2,c8,c8+2,c8s2,fc10", 8, 0, 2, 8, "H16[2]"); }

Test(step_residual, on_model_s2) { residual_on_model("cnn:c4,c4,c4+1,fc10", 2, 0, 4, 6, 6); }
Test(step_residual, on_model_s2_input_skip) { residual_on_model("cnn:c1+0,c4s2,fc10", 2, 0, 4, 6, 6); }
Test(step_residual, on_model_s8) { residual_on_model("cnn:c8,c8s2,c8,c8+2,fc10", 8, 0, 4, 8, 6); }
Test(step_residual, on_model_s2_int16) { residual_on_model("cnn:c4,c4,c4+1,fc10", 2, 1, 4, 6, 6); }

/* The engine's step of cnn:c4,c4,c4+1,fc10 (bf16) against the fp32 reference trainer from the
 * same parameters and batch: the logits within bf16 rounding, and after the backward the skip
 * source's bias gradient db32[1] (which sums its ReLU-masked dH plus the skip's gradient). The
 * skip's share of that gradient is larger than the tolerance, so a backward without it is
 * caught; an engine without the forward add (res NULL) is caught at the logits. */
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

static void against_reference(int plant)
{
    enum { B = 4, H = 6, C = 10 };
    npu_cfg_t c = bf16_cfg(2);
    cnn_net_t r;
    npu_step_run_t s;
    npu_net_ref_t m;
    npu_sgd_t o = {0.1f, 0.9f, 0};
    float *w[NPU_NET_MAX_LAYERS], *b[NPU_NET_MAX_LAYERS], x[B * H * H], lg[B * C], dl[B * C], db[4];
    uint8_t y[B];
    cnn_net("cnn:c4,c4,c4+1,fc10", H, B, &r);
    npu_funcsim_config(&c);
    npu_sim_t *sim = npu_sim_open(NULL);
    cr_assert_eq(npu_step_run_init_cnn(&s, &c, sim, r.conv, r.n_conv, plant ? NULL : r.net.res, r.fc, r.n_fc, B, o.lr,
                                       o.momentum, o.wd, 0, NULL, 50000000), 0, "%s", s.why);
    cr_assert_eq(npu_net_init(&r.net, 3, w, b), 0);
    cr_assert_eq(npu_net_ref_new(&m, &r.net, B, w, b), 0);
    npu_step_run_params(&s, w, b);
    for (int i = 0; i < B * H * H; i++)
        x[i] = (float)(i * 5 % 17) / 16.0f;
    for (int i = 0; i < B; i++)
        y[i] = (uint8_t)(i * 3 % C);
    cr_assert_eq(npu_step_forward(&s, x, B, lg), 0, "%s", s.why);
    npu_net_ref_forward(&m, x, B);
    double mag, d = max_diff(lg, m.act[3 + 1], B * C, &mag);
    cr_log_info("plant %d: logits differ by %g of %g", plant, d, mag);
    if (plant) {
        cr_assert_gt(d, 0.05 * mag, "the engine without the skip add is caught at the logits");
    } else {
        cr_assert_lt(d, 0.02 * mag, "logits %g from the reference's (largest %g)", d, mag);
        npu_softmax_xent(lg, y, B, C, dl);
        cr_assert_eq(npu_step_backward(&s, dl), 0, "%s", s.why);
        npu_net_ref_step(&m, x, y, &o);
        memcpy(db, npu_sim_dram(sim, NULL) + s.plan.t[s.plan.l[1].db32].dram, sizeof db);
        float skip[4] = {0}; /* the skip's share: dZ of layer 3 where H16[1] > 0 */
        for (int i = 0; i < B * H * H * 4; i++)
            skip[i % 4] += m.act[1][i] > 0 ? m.grad[3][i] : 0;
        double dd = max_diff(db, m.gb[0], 4, &mag), sk = 0;
        for (int f = 0; f < 4; f++)
            sk = fmax(sk, fabs(skip[f]));
        cr_log_info("db32[1] differs by %g of %g; the skip's share up to %g", dd, mag, sk);
        cr_assert_lt(dd, 0.02 * mag + 1e-4, "db32[1] %g from the reference's (largest %g)", dd, mag);
        cr_assert_gt(sk, 10 * (0.02 * mag + 1e-4), "the skip's share would be caught");
    }
    npu_net_ref_free(&m);
    npu_net_params_free(&r.net, w, b);
    npu_step_run_free(&s);
    npu_sim_close(sim);
}

Test(step_residual, matches_the_reference) { against_reference(0); }
Test(step_residual, missing_add_is_caught) { against_reference(1); }

/* The analytical estimator (model/estimate.h) times a residual add as the step engine runs it:
 * its add<l> step's vector cycles are what the step plan's bias_add_relu takes over the plain
 * bias_relu of a layer of the same shape (npu_vk_vec_busy of both). */
Test(step_residual, analytic_add_is_the_step_engines)
{
    static npu_est_t e;
    npu_cfg_t c = bf16_cfg(2);
    cnn_net_t r;
    npu_step_plan_t p;
    char why[256];
    uint64_t with = 0, without = 0;
    cnn_net("cnn:c8,c8,c8+1,fc10", 8, 8, &r);
    cr_assert_eq(cnn_plan(&c, &r, 8, &p, why, sizeof why), 0, "%s", why);
    cr_assert_eq(npu_vk_vec_busy(&c, &kernel_named(&p, "fwd L3 bias_add_relu")->v, &with, why, sizeof why), 0);
    cr_assert_eq(npu_vk_vec_busy(&c, &kernel_named(&p, "fwd L2 bias_relu")->v, &without, why, sizeof why), 0);
    npu_step_plan_free(&p);
    npu_est_opts_t o = {8, 0, 0, -1, 1, 1};
    cr_assert_eq(npu_estimate(&c, &r.net, &o, &e, why, sizeof why), 0, "%s", why);
    int found = 0;
    for (int i = 0; i < e.n_steps; i++)
        if (!strcmp(e.step[i].name, "add2")) {
            cr_assert_eq(e.step[i].vec, with - without, "add2 %llu, the step engine's %llu",
                         (unsigned long long)e.step[i].vec, (unsigned long long)(with - without));
            found = 1;
        }
    cr_assert(found);
    npu_est_free(&e);
}

/* npu sweep --validate's probe of a residual CNN point on the functional model: its DRAM bytes are
 * the sweep point's, and not those of the same CNN without the connection (res reaches both). */
Test(step_residual, sweep_probe_bytes_as_estimated)
{
    npu_cfg_t c = bf16_cfg(2);
    npu_sweep_space_t sp;
    npu_sweep_point_t p;
    npu_step_probe_t m;
    char why[512];
    cnn_net_t r;
    cnn_net("cnn:c4,c4+1,fc10", 6, 1, &r);
    npu_funcsim_config(&c);
    cr_assert_eq(npu_sweep_parse("batch=4", &c, 8, &sp, why, sizeof why), 0, "%s", why);
    for (int res = 1; res >= 0; res--) {
        npu_sweep_step_t o = {NULL, 3, 0, 0, 0, r.conv, r.n_conv, r.fc, r.n_fc, res ? r.net.res : NULL};
        cr_assert_eq(npu_sweep_step_point(&c, &o, &sp, 0, &p, why, sizeof why), 0);
        cr_assert(p.ok, "%s", why);
        npu_step_probe_opts_t po = {NULL, 3, p.batch, 0, p.bw, 0, 0, 0, r.conv, r.n_conv, r.fc, r.n_fc, r.net.res};
        cr_assert_eq(npu_step_probe(&c, &po, &m, why, sizeof why), 0, "%s", why);
        cr_assert_eq(m.checked, m.kernels);
        cr_assert_eq(m.rd_bytes == p.in_bytes && m.wr_bytes == p.out_bytes, res,
                     "res %d: probe %llu / %llu, the point %llu / %llu", res, (unsigned long long)m.rd_bytes,
                     (unsigned long long)m.wr_bytes, (unsigned long long)p.in_bytes, (unsigned long long)p.out_bytes);
    }
}
