/*
 * test_step.c - whole training steps on the RTL (run/step_run.h): a 3-layer MLP with widths and
 * a batch that are not multiples of 2S, five steps with random DRAM stalls, every kernel (GEMMs
 * and vector kernels) bit-exact against the golden image and its counters as the program says
 * (the runtime checks both after each kernel), the loss falling, the host writing only the
 * batch and the loss gradient, every kernel at or above its roofline. At int16 configurations
 * the same step in fixed point with the nominal static scales (compile/step/step_scale.h). The
 * digits CNN's steps too (conv, fused conv backward, pitched vector kernels, transposes).
 */
#include <math.h>

#include "rtl_common.h"
#include "ref/net_ref.h"
#include "run/step_run.h"

/* The roofline invariant of every kernel of the last step (issue 16): cycles >= MACs / PEs and
 * >= DRAM bytes / bandwidth less the DRAM model's initial credit (npu_step_below_roof). */
static void roofline(const npu_cfg_t *c, const npu_step_run_t *s)
{
    for (int k = 0; k < s->plan.nk; k++) {
        const npu_step_tally_t *t = &s->last[k];
        double need = 0;
        int below = npu_step_below_roof(c, t, &need);
        cr_assert_eq(below, 0, "%s: %llu cycles, below its %s bound %.0f", s->plan.k[k].name,
                     (unsigned long long)t->cycles, below == 1 ? "MACs / PEs" : "DRAM bytes / bandwidth", need);
        cr_assert_gt(t->cycles, 0u, "%s", s->plan.k[k].name);
    }
}

Test(step, mlp_steps_bit_exact)
{
    npu_cfg_t c = rtl_cfg();
    int dims[4] = {24, 37, 20, 10}, B = 19, C = 10;
    npu_step_run_t s;
    uint64_t seed = rtl_seed(91), x = seed | 1;
    npu_sim_t *sim = rtl_open(&c, 20, 0, seed);
    cr_assert_eq(npu_step_run_init(&s, &c, sim, dims, 3, B, 0.3f, 0.9f, 1e-3f, NPU_EMIT_FLEXSA, 20000000), 0,
                 "%s", s.why);
    float *w[3], *b[3], in[19 * 24], lg[19 * 10], dl[19 * 10];
    uint8_t y[19];
    for (int l = 0; l < 3; l++) {
        size_t n = (size_t)dims[l] * dims[l + 1];
        w[l] = malloc(n * sizeof(float));
        b[l] = calloc((size_t)dims[l + 1], sizeof(float));
        cr_assert(w[l] && b[l]);
        for (size_t i = 0; i < n; i++)
            w[l][i] = ((float)(rtl_rand(&x) % 2001) - 1000.0f) / 1000.0f / sqrtf((float)dims[l]);
    }
    for (int i = 0; i < B * dims[0]; i++)
        in[i] = (float)(rtl_rand(&x) % 17) / 16.0f;
    for (int r = 0; r < B; r++)
        y[r] = (uint8_t)(rtl_rand(&x) % (uint64_t)C);
    npu_step_run_params(&s, w, b);
    double first = 0, loss = 0;
    for (int it = 0; it < 5; it++) {
        cr_assert_eq(npu_step_forward(&s, in, B, lg), 0, "seed %llu step %d: %s", (unsigned long long)seed, it, s.why);
        loss = npu_softmax_xent(lg, y, B, C, dl);
        first = it ? first : loss;
        cr_assert_eq(npu_step_backward(&s, dl), 0, "seed %llu step %d: %s", (unsigned long long)seed, it, s.why);
        cr_assert_eq(s.fwd.host_wr + s.bwd.host_wr, (uint64_t)B * (dims[0] * 2 + C * 4),
                     "the host writes the batch (16-bit) and the loss gradient (32-bit), nothing else");
        cr_assert_eq(s.fwd.host_rd + s.bwd.host_rd, (uint64_t)B * C * 4, "and reads the logits");
    }
    cr_assert_eq(s.checked, 5u * (uint64_t)s.plan.nk);
    roofline(&c, &s);
    cr_assert_lt(loss, 0.95 * first, "loss %g after 5 steps, %g at first", loss, first);
    npu_step_run_free(&s);
    npu_sim_close(sim);
    for (int l = 0; l < 3; l++) {
        free(w[l]);
        free(b[l]);
    }
}

/* The digits CNN (cnn:c4,c8s2,fc10 on 8 x 8 images) as whole steps: conv fwd, the fused conv
 * backward, the pitched vector kernels (bias + ReLU, relu_bwd + bias gradient + bias update, SGD),
 * the transposes and the head's GEMMs, three steps with random DRAM stalls, every kernel
 * bit-exact and its counters as the program says, at or above its roofline, the host writing only
 * the batch and the loss gradient, the loss falling (int16: the nominal static scales). */
Test(step, cnn_digits_steps_bit_exact)
{
    npu_cfg_t c = rtl_cfg();
    enum { B = 8, C = 10, STEPS = 3 };
    npu_conv_t cv[2] = {{B, 1, 8, 8, 4, 3, 3, 1, 1, 1, 0}, {B, 4, 8, 8, 8, 3, 3, 2, 1, 1, 0}};
    int fc[2] = {128, 10};
    size_t nw[3] = {36, 288, 1280}, nb[3] = {4, 8, 10};
    npu_step_run_t s;
    uint64_t seed = rtl_seed(92), x = seed | 1;
    npu_sim_t *sim = rtl_open(&c, 20, 0, seed);
    cr_assert_eq(npu_step_run_init_cnn(&s, &c, sim, cv, 2, fc, 1, B, 0.2f, 0.9f, 1e-3f, 0, NULL, 50000000), 0,
                 "%s", s.why);
    float *w[3], *b[3], in[B * 64], lg[B * C], dl[B * C];
    uint8_t y[B];
    for (int l = 0; l < 3; l++) {
        w[l] = malloc(nw[l] * sizeof(float));
        b[l] = calloc(nb[l], sizeof(float));
        cr_assert(w[l] && b[l]);
        for (size_t i = 0; i < nw[l]; i++)
            w[l][i] = ((float)(rtl_rand(&x) % 2001) - 1000.0f) / 1000.0f / sqrtf((float)(nw[l] / nb[l]));
    }
    for (int i = 0; i < B * 64; i++)
        in[i] = (float)(rtl_rand(&x) % 17) / 16.0f;
    for (int r = 0; r < B; r++)
        y[r] = (uint8_t)(rtl_rand(&x) % (uint64_t)C);
    npu_step_run_params(&s, w, b);
    double first = 0, loss = 0;
    for (int it = 0; it < STEPS; it++) {
        cr_assert_eq(npu_step_forward(&s, in, B, lg), 0, "seed %llu step %d: %s", (unsigned long long)seed, it, s.why);
        loss = npu_softmax_xent(lg, y, B, C, dl);
        first = it ? first : loss;
        cr_assert_eq(npu_step_backward(&s, dl), 0, "seed %llu step %d: %s", (unsigned long long)seed, it, s.why);
        cr_assert_eq(s.fwd.host_wr + s.bwd.host_wr, (uint64_t)B * (64 * 2 + C * 4),
                     "the host writes the batch (16-bit) and the loss gradient (32-bit), nothing else");
        cr_assert_eq(s.fwd.host_rd + s.bwd.host_rd, (uint64_t)B * C * 4, "and reads the logits");
    }
    cr_assert_eq(s.checked, (uint64_t)STEPS * (uint64_t)s.plan.nk);
    roofline(&c, &s);
    cr_assert_lt(loss, first, "loss %g after %d steps, %g at first", loss, STEPS, first);
    npu_step_run_free(&s);
    npu_sim_close(sim);
    for (int l = 0; l < 3; l++) {
        free(w[l]);
        free(b[l]);
    }
}
