/* ref_grad_check.h - the fp32 reference trainer's gradients (ref/net_ref.h) against central finite
 * differences of its loss, shared by the fit and the normalised-layer unit tests. */
#ifndef REF_GRAD_CHECK_H
#define REF_GRAD_CHECK_H

#include <criterion/criterion.h>
#include <math.h>

#include "ref/net_ref.h"

static inline double ref_loss_of(npu_net_ref_t *m, const float *x, const uint8_t *y)
{
    int L = m->shape.layers;
    npu_net_ref_forward(m, x, m->batch);
    return npu_softmax_xent(m->act[L], y, m->batch, m->shape.l[L - 1].f, NULL);
}

/* The derivative of the loss in *v by central differences (v restored). */
static inline double ref_numeric(npu_net_ref_t *m, const float *x, const uint8_t *y, float *v)
{
    float keep = *v, h = 1e-3f;
    *v = keep + h;
    double up = ref_loss_of(m, x, y);
    *v = keep - h;
    double down = ref_loss_of(m, x, y);
    *v = keep;
    return (up - down) / (2 * h);
}

/* The gradient of every weight of network spec on a 5x5x2 input (4 samples, 3 classes) and, of a
 * normalised layer (gamma and beta set away from 1 and 0), its dgamma and dbeta, against central
 * finite differences of the loss. */
static inline void check_ref_gradients(const char *spec)
{
    npu_net_shape_t s;
    float *w[NPU_NET_MAX_LAYERS], *b[NPU_NET_MAX_LAYERS], x[4 * 50];
    uint8_t y[4] = {0, 2, 1, 2};
    npu_net_ref_t m;
    npu_sgd_t zero = {0, 0, 0}; /* lr 0: the step computes the gradients, changes nothing */
    uint64_t st = 5;
    char why[128];
    cr_assert_eq(npu_net_parse(spec, 5, 5, 2, &s, why, sizeof why), 0, "%s: %s", spec, why);
    cr_assert_eq(npu_net_init(&s, 3, w, b), 0);
    cr_assert_eq(npu_net_ref_new(&m, &s, 4, w, b), 0);
    for (int i = 0; i < 4 * 50; i++)
        x[i] = (float)((npu_splitmix64(&st) >> 40) % 1000) / 500.0f - 0.5f;
    for (int l = 0; l < s.layers; l++)
        for (int f = 0; m.gam[l] && f < s.l[l].f; f++) {
            m.gam[l][f] = 0.6f + 0.3f * (float)f;
            m.bet[l][f] = 0.1f * (float)f - 0.05f;
        }
    npu_net_ref_step(&m, x, y, &zero);
    for (int l = 0; l < s.layers; l++) {
        for (size_t i = 0; i < npu_net_params(&s.l[l]); i++) {
            double num = ref_numeric(&m, x, y, &m.w[l][i]);
            cr_assert(fabs(num - m.gw[l][i]) < 2e-3 + 2e-2 * fabs(num), "%s layer %d w[%zu]: analytic %g, numeric %g",
                      spec, l, i, m.gw[l][i], num);
        }
        for (int f = 0; m.gam[l] && f < s.l[l].f; f++) {
            double ng = ref_numeric(&m, x, y, &m.gam[l][f]), nb = ref_numeric(&m, x, y, &m.bet[l][f]);
            cr_assert(fabs(ng - m.ggam[l][f]) < 2e-3 + 2e-2 * fabs(ng), "%s layer %d dgamma[%d]: analytic %g, "
                      "numeric %g", spec, l, f, m.ggam[l][f], ng);
            cr_assert(fabs(nb - m.gbet[l][f]) < 2e-3 + 2e-2 * fabs(nb), "%s layer %d dbeta[%d]: analytic %g, "
                      "numeric %g", spec, l, f, m.gbet[l][f], nb);
        }
    }
    npu_net_ref_free(&m);
    npu_net_params_free(&s, w, b);
}

#endif
