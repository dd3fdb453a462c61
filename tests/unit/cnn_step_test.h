/* cnn_step_test.h - the step engine's CNN steps on the functional model, shared by the unit tests
 * of residual blocks and of normalised layers: a spec's network, and whole steps with every kernel
 * bit-exact, each kernel's DRAM bytes per tag and every tensor's In / Out bytes the estimator's
 * (model/est_step.h), the loss falling on a repeated batch. */
#ifndef CNN_STEP_TEST_H
#define CNN_STEP_TEST_H

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "compile/step/step_plan.h"
#include "model/est_step.h"
#include "npu_funcsim.h"
#include "ref/net_ref.h"
#include "run/fit.h"
#include "run/step_run.h"
#include "test_cfgs.h"

/* A network spec on H x H x 1 images as the step engine takes it. */
typedef struct cnn_net {
    npu_net_shape_t net;
    npu_conv_t conv[NPU_STEP_MAX_LAYERS];
    int fc[NPU_STEP_MAX_LAYERS + 1], n_conv, n_fc;
} cnn_net_t;

static inline void cnn_net(const char *spec, int H, int batch, cnn_net_t *r)
{
    char why[200];
    cr_assert_eq(npu_net_parse(spec, H, H, 1, &r->net, why, sizeof why), 0, "%s", why);
    r->n_conv = npu_fit_cnn_layers(&r->net, batch, r->conv, r->fc, &r->n_fc);
    cr_assert_gt(r->n_conv, 0, "%s", spec);
}

/* The step plan of network r at batch (lr 0.1, momentum 0.9, no weight decay). */
static inline int cnn_plan(const npu_cfg_t *c, const cnn_net_t *r, int batch, npu_step_plan_t *p, char *why, size_t n)
{
    return npu_step_plan_cnn_res(c, r->conv, r->n_conv, r->net.res, r->fc, r->n_fc, batch, 0.1f, 0.9f, 0, 0,
                                 NULL, 0, p, why, n);
}

/* Network `spec` on 8 x 8 x 1 images and its step plan at batch (which must plan). */
static inline void cnn_plan_of(const npu_cfg_t *c, const char *spec, int batch, cnn_net_t *r, npu_step_plan_t *p)
{
    char why[256];
    cnn_net(spec, 8, batch, r);
    cr_assert_eq(cnn_plan(c, r, batch, p, why, sizeof why), 0, "%s: %s", spec, why);
}

static inline const npu_step_kernel_t *kernel_named(const npu_step_plan_t *p, const char *name)
{
    for (int i = 0; i < p->nk; i++)
        if (!strcmp(p->k[i].name, name))
            return &p->k[i];
    cr_assert_fail("no kernel %s", name);
    return NULL;
}

/* `steps` training steps of s on one fixed batch (inputs (i * 7 % 17) / 16 of n_in values each,
 * labels i * 3 % C), every kernel checked by the runtime; the first and the last loss in *first,
 * *last (either may be NULL). */
static inline void cnn_train_steps(npu_step_run_t *s, int batch, int n_in, int C, int steps, double *first,
                                   double *last)
{
    float *in = malloc((size_t)batch * n_in * sizeof(float)), *lg = malloc((size_t)batch * C * sizeof(float));
    float *dl = malloc((size_t)batch * C * sizeof(float));
    uint8_t *y = malloc((size_t)batch);
    double loss = 0;
    cr_assert(in && lg && dl && y);
    for (int i = 0; i < batch * n_in; i++)
        in[i] = (float)(i * 7 % 17) / 16.0f;
    for (int i = 0; i < batch; i++)
        y[i] = (uint8_t)(i * 3 % C);
    for (int it = 0; it < steps; it++) {
        cr_assert_eq(npu_step_forward(s, in, batch, lg), 0, "step %d: %s", it, s->why);
        loss = npu_softmax_xent(lg, y, batch, C, dl);
        if (it == 0 && first)
            *first = loss;
        cr_assert_eq(npu_step_backward(s, dl), 0, "step %d: %s", it, s->why);
    }
    cr_assert_eq(s->checked, (uint64_t)steps * (uint64_t)s->plan.nk);
    if (last)
        *last = loss;
    free(in);
    free(lg);
    free(dl);
    free(y);
}

/* Whole steps of spec on the functional model: every kernel bit-exact, each kernel's DRAM bytes
 * per tag and every tensor's In / Out bytes the estimator's (e: model/est_step.h, large), the
 * loss falling on a repeated batch. */
static inline void cnn_steps_on_model(const npu_cfg_t *cfg, const char *spec, int batch, int H, int steps,
                                      npu_est_kplan_t *e)
{
    npu_cfg_t c = *cfg;
    cnn_net_t r;
    npu_step_run_t s;
    char why[256];
    float *w[NPU_NET_MAX_LAYERS], *b[NPU_NET_MAX_LAYERS];
    double first = 0, loss = 0;
    cnn_net(spec, H, batch, &r);
    npu_funcsim_config(&c);
    npu_sim_t *sim = npu_sim_open(NULL);
    cr_assert_eq(npu_step_run_init_cnn(&s, &c, sim, r.conv, r.n_conv, r.net.res, r.fc, r.n_fc, batch, 0.1f, 0.9f, 1e-3f,
                                       0, NULL, 50000000), 0, "%s", s.why);
    cr_assert_eq(npu_estimate_step_cnn(&c, r.conv, r.n_conv, r.net.res, r.fc, r.n_fc, batch, 0, e, why, sizeof why),
                 0, "%s", why);
    cr_assert_eq(e->nk, s.plan.nk);
    cr_assert_eq(npu_net_init(&r.net, 7, w, b), 0);
    npu_step_run_params(&s, w, b);
    cnn_train_steps(&s, batch, H * H, r.fc[r.n_fc], steps, &first, &loss);
    for (int i = 0; i < s.plan.nk; i++)
        for (int t = 0; t < NPU_NUM_TAGS; t++) {
            cr_assert_eq(s.last[i].rd[t], e->k[i].rd[t], "%s tag %d read", e->k[i].name, t);
            cr_assert_eq(s.last[i].wr[t], e->k[i].wr[t], "%s tag %d written", e->k[i].name, t);
        }
    cr_assert(s.t_lost == 0 && e->lost == 0 && s.t_shared == 0 && e->shared == 0, "%llu bytes on no tensor",
              (unsigned long long)s.t_lost);
    for (int t = 0; t < s.plan.nt; t++) {
        cr_assert_eq(s.t_in[t], e->t[t].in, "%s In", e->t[t].name);
        cr_assert_eq(s.t_out[t], e->t[t].out, "%s Out", e->t[t].name);
    }
    cr_assert_lt(loss, 0.9 * first, "%s: loss %g after %d steps, %g at first", spec, loss, steps, first);
    npu_step_run_free(&s);
    npu_sim_close(sim);
    npu_net_params_free(&r.net, w, b);
}

#endif
