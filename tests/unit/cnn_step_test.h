/* cnn_step_test.h - the step engine's CNN steps on the functional model, shared by the unit tests
 * of residual blocks and of normalised layers: a spec's network, and whole steps with every kernel
 * bit-exact, each kernel's DRAM bytes per tag and every tensor's In / Out bytes the estimator's
 * (model/est_step.h), the loss falling on a repeated batch. */
#ifndef CNN_STEP_TEST_H
#define CNN_STEP_TEST_H

#include <criterion/criterion.h>
#include <stdlib.h>

#include "compile/step/step_plan.h"
#include "model/est_step.h"
#include "npu_funcsim.h"
#include "ref/net_ref.h"
#include "run/fit.h"
#include "run/step_run.h"
#include "test_cfgs.h"

static inline npu_cfg_t bf16_cfg(int s)
{
    npu_cfg_t c = test_cfg(s);
    c.dtype = NPU_DTYPE_BF16;
    return c;
}

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
    cnn_net(spec, H, batch, &r);
    int C = r.fc[r.n_fc], n_in = H * H;
    npu_funcsim_config(&c);
    npu_sim_t *sim = npu_sim_open(NULL);
    cr_assert_eq(npu_step_run_init_cnn(&s, &c, sim, r.conv, r.n_conv, r.net.res, r.fc, r.n_fc, batch, 0.1f, 0.9f, 1e-3f,
                                       0, NULL, 50000000), 0, "%s", s.why);
    cr_assert_eq(npu_estimate_step_cnn(&c, r.conv, r.n_conv, r.net.res, r.fc, r.n_fc, batch, 0, e, why, sizeof why),
                 0, "%s", why);
    cr_assert_eq(e->nk, s.plan.nk);
    cr_assert_eq(npu_net_init(&r.net, 7, w, b), 0);
    npu_step_run_params(&s, w, b);
    float *in = malloc((size_t)batch * n_in * sizeof(float)), *lg = malloc((size_t)batch * C * sizeof(float));
    float *dl = malloc((size_t)batch * C * sizeof(float));
    uint8_t *y = malloc((size_t)batch);
    for (int i = 0; i < batch * n_in; i++)
        in[i] = (float)(i * 7 % 17) / 16.0f;
    for (int i = 0; i < batch; i++)
        y[i] = (uint8_t)(i * 3 % C);
    double first = 0, loss = 0;
    for (int it = 0; it < steps; it++) {
        cr_assert_eq(npu_step_forward(&s, in, batch, lg), 0, "step %d: %s", it, s.why);
        loss = npu_softmax_xent(lg, y, batch, C, dl);
        first = it ? first : loss;
        cr_assert_eq(npu_step_backward(&s, dl), 0, "step %d: %s", it, s.why);
    }
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
    cr_assert_eq(s.checked, (uint64_t)steps * (uint64_t)s.plan.nk);
    cr_assert_lt(loss, 0.9 * first, "%s: loss %g after %d steps, %g at first", spec, loss, steps, first);
    npu_step_run_free(&s);
    npu_sim_close(sim);
    npu_net_params_free(&r.net, w, b);
    free(in);
    free(lg);
    free(dl);
    free(y);
}

#endif
