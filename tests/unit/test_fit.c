/* test_fit.c - `npu fit`'s parts: the digits loader and split, the fp32 reference trainer
 * (gradients against finite differences, learning), the int16 scaling rule, and the NPU engine
 * on the functional model (every GEMM bit-exact, the same losses as the reference). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/digits.h"
#include "fake_sim.h"
#include "ref_grad_check.h"
#include "ref/net_ref.h"
#include "run/fit.h"
#include "run/runtime.h"
#include "test_cfgs.h"

static npu_dataset_t load(void)
{
    npu_dataset_t d;
    char path[4096], why[256];
    cr_assert_eq(npu_digits_find(NULL, path, sizeof path), 0, "no %s", path);
    cr_assert_eq(npu_digits_load(path, &d, why, sizeof why), 0, "%s", why);
    return d;
}

Test(fit, digits_load)
{
    npu_dataset_t d = load();
    static const uint8_t first[8] = {0, 0, 5, 13, 9, 1, 0, 0}; /* the file's first image, row 0 */
    int count[10] = {0};
    cr_assert_eq(d.n, 1797);
    cr_assert_eq(memcmp(d.x, first, 8), 0);
    cr_assert_eq(d.label[0], 0);
    for (int i = 0; i < d.n; i++) {
        count[d.label[i]]++;
        for (int j = 0; j < 64; j++)
            cr_assert_leq(d.x[i * 64 + j], 16);
    }
    for (int c = 0; c < 10; c++) /* 174..183 images per class */
        cr_assert(count[c] >= 174 && count[c] <= 183, "class %d: %d", c, count[c]);
    npu_dataset_free(&d);
}

Test(fit, digits_bad_file)
{
    npu_dataset_t d;
    char why[256];
    FILE *f = fopen("build/bad_digits.csv", "w");
    cr_assert_not_null(f);
    fputs("1,2,3\n", f);
    fclose(f);
    cr_assert_eq(npu_digits_load("build/bad_digits.csv", &d, why, sizeof why), -1);
    cr_assert(strstr(why, ":1:") != NULL, "%s", why);
    cr_assert_eq(npu_digits_load("build/no_such_file.csv.gz", &d, why, sizeof why), -1);
}

Test(fit, split_is_a_seeded_partition)
{
    npu_split_t a, b, c;
    cr_assert_eq(npu_split_make(1797, 0.2, 1, &a), 0);
    cr_assert_eq(npu_split_make(1797, 0.2, 1, &b), 0);
    cr_assert_eq(npu_split_make(1797, 0.2, 2, &c), 0);
    cr_assert_eq(a.n_test, 359);
    cr_assert_eq(a.n_train + a.n_test, 1797);
    char *seen = calloc(1797, 1);
    for (int i = 0; i < a.n_test; i++)
        seen[a.test[i]]++;
    for (int i = 0; i < a.n_train; i++)
        seen[a.train[i]]++;
    for (int i = 0; i < 1797; i++)
        cr_assert_eq(seen[i], 1, "sample %d in %d sets", i, seen[i]);
    cr_assert_eq(memcmp(a.test, b.test, 1797 * sizeof(int)), 0, "same seed, other split");
    cr_assert_neq(memcmp(a.test, c.test, (size_t)a.n_test * sizeof(int)), 0, "seed ignored");
    free(seen);
    npu_split_free(&a);
    npu_split_free(&b);
    npu_split_free(&c);
}

/* The reference trainer's gradients against finite differences (ref_grad_check.h). */
Test(fit, reference_gradients_match_finite_differences)
{
    check_ref_gradients("mlp:50,5,3");
    check_ref_gradients("cnn:c3,c4s2,fc3");       /* padded 3x3, then strided */
    check_ref_gradients("cnn:c2k2s2p0,c3k3p1,fc3"); /* 2x2 stride 2 without padding */
}

Test(fit, model_specs)
{
    npu_net_shape_t s;
    char why[128], d[64];
    cr_assert_eq(npu_net_parse("cnn:c16,c32s2,fc10", 8, 8, 1, &s, why, sizeof why), 0, "%s", why);
    npu_net_describe(&s, d, sizeof d);
    cr_assert_str_eq(d, "c16k3s1-c32k3s2-fc10");
    cr_assert_eq(s.l[1].oh, 4);
    cr_assert_eq(s.l[2].c, 4 * 4 * 32, "the fc layer flattens 4x4x32");
    cr_assert_eq(npu_net_parse("mlp:64,10", 8, 8, 1, &s, why, sizeof why), 0);
    cr_assert_eq(npu_net_parse("mlp:63,10", 8, 8, 1, &s, why, sizeof why), -1);
    cr_assert(strstr(why, "the data has 64") != NULL, "%s", why);
    cr_assert_eq(npu_net_parse("cnn:fc10,c4", 8, 8, 1, &s, why, sizeof why), -1);
    cr_assert_eq(npu_net_parse("cnn:c4k9p0", 8, 8, 1, &s, why, sizeof why), -1, "9x9 on 8x8");
    cr_assert_eq(npu_net_parse("cnn:x4", 8, 8, 1, &s, why, sizeof why), -1);
    cr_assert_eq(npu_net_parse("rnn:4", 8, 8, 1, &s, why, sizeof why), -1);
}

Test(fit, int16_scale_keeps_headroom)
{
    float v[3] = {0.3f, -1.7f, 0.01f};
    int e = npu_fit_i16_scale(v, 3, 128); /* bits = 15 - 7/2 rounded up = 11 */
    cr_assert_lt(fabs(nearbyint(ldexp(-1.7, e))), 2048.0);
    cr_assert_geq(fabs(nearbyint(ldexp(-1.7, e + 1))), 2048.0, "not the largest exponent");
    float z[2] = {0, 0};
    cr_assert_eq(npu_fit_i16_scale(z, 2, 64), 0);
}

typedef struct epochs {
    int n;
    npu_fit_epoch_t e[8];
} epochs_t;

static void keep_epoch(void *ctx, const npu_fit_epoch_t *e)
{
    epochs_t *k = ctx;
    k->e[k->n++] = *e;
}

static void fit_opts(npu_fit_opts_t *o, const char *model, int epochs, int batch, int engine)
{
    memset(o, 0, sizeof *o);
    char why[128];
    cr_assert_eq(npu_net_parse(model, 8, 8, 1, &o->shape, why, sizeof why), 0, "%s", why);
    o->epochs = epochs;
    o->batch = batch;
    o->engine = engine;
    o->sgd = (npu_sgd_t){0.05f, 0.9f, 1e-4f};
    o->seed = 1;
    o->test_frac = 0.2;
    o->max_cycles = 100000000ull;
}

Test(fit, reference_learns_the_digits)
{
    npu_dataset_t d = load();
    npu_fit_opts_t o;
    epochs_t k = {0};
    char why[256];
    fit_opts(&o, "mlp:64,32,10", 3, 32, NPU_FIT_REF);
    cr_assert_eq(npu_fit_run(NULL, NULL, &d, &o, keep_epoch, &k, why, sizeof why), 0, "%s", why);
    cr_assert_eq(k.n, 3);
    cr_assert_lt(k.e[2].loss, k.e[0].loss);
    cr_assert_gt(k.e[2].test_acc, 0.9, "test accuracy %.3f", k.e[2].test_acc);
    o.shape.l[o.shape.layers - 1].f = 9; /* the data set has 10 classes */
    cr_assert_eq(npu_fit_run(NULL, NULL, &d, &o, keep_epoch, &k, why, sizeof why), -1);
    cr_assert(strstr(why, "10 classes") != NULL, "%s", why);
    npu_dataset_free(&d);
}

/* One epoch of `model` with the NPU engine on the functional model (tiny, int16, random DRAM
 * stalls): every kernel passed, the loss that of the fp32 reference within 1%. */
static npu_fit_epoch_t npu_epoch_engine(const char *model, int batch, uint64_t sim_seed, int engine)
{
    npu_cfg_t c = test_cfg(2);
    npu_sim_t *sim = open_fake(&c, 0, sim_seed);
    npu_dataset_t d = load();
    npu_fit_opts_t o;
    epochs_t k = {0};
    char why[256];
    fit_opts(&o, model, 1, batch, engine);
    o.modes = NPU_GEMM_SLICING_HEURISTIC;
    cr_assert_eq(npu_fit_run(&c, sim, &d, &o, keep_epoch, &k, why, sizeof why), 0, "%s", why);
    cr_assert_eq(k.e[0].kernel_fail, 0);
    cr_assert_gt(k.e[0].cycles, 0);
    cr_assert_lt(fabs(k.e[0].loss - k.e[0].ref_loss), 0.01 * k.e[0].ref_loss, "loss %g ref %g",
                 k.e[0].loss, k.e[0].ref_loss);
    npu_sim_close(sim);
    npu_dataset_free(&d);
    return k.e[0];
}

static npu_fit_epoch_t npu_epoch(const char *model, int batch, uint64_t sim_seed)
{
    return npu_epoch_engine(model, batch, sim_seed, NPU_FIT_KERNELS);
}

Test(fit, npu_engine_on_the_functional_model, .timeout = 120)
{
    npu_fit_epoch_t e = npu_epoch("mlp:64,16,10", 64, 7);
    /* 22 steps x (2 forward + dW, dX of layer 1 + dW of layer 0) + the accuracy passes: 23
     * batches of the 1,438 training and 6 of the 359 test images x 2 layers */
    cr_assert_eq(e.kernels, 22 * 5 + (23 + 6) * 2);
}

/* A CNN the same way: its convolutions (forward, dW; layer 0 needs no dX) through the conv
 * kernels of the functional model (int16: each tensor scaled by a power of two). */
Test(fit, npu_engine_cnn_on_the_functional_model, .timeout = 300)
{
    npu_fit_epoch_t e = npu_epoch("cnn:c4s2,fc10", 128, 9);
    /* 11 steps x (conv fwd, fc fwd, fc dW, fc dX, conv dW) + 2 x (12 + 3) accuracy batches */
    cr_assert_eq(e.kernels, 11 * 5 + (12 + 3) * 2);
}

/* The CNN as whole steps (int16: the static scales calibrated on one reference step, the bias
 * gradient's magnitude over the F biases of each convolution): every kernel bit-exact, the loss
 * within 1 % of the reference's. */
Test(fit, step_engine_cnn_int16_on_the_functional_model, .timeout = 300)
{
    npu_fit_epoch_t e = npu_epoch_engine("cnn:c4s2,fc10", 128, 11, NPU_FIT_STEP);
    /* 11 steps x 12 kernels (conv: fwd, bias_relu, relu_grad_bias, conv_bwd, sgd, transpose; fc:
     * gemm, bias, grad_bias, dw, dx, sgd) + (12 + 3) accuracy batches x 4 forward kernels */
    cr_assert_eq(e.kernels, 11 * 12 + (12 + 3) * 4);
    cr_assert_eq(e.step_host_wr, 128u * 64 * 2 + 128u * 10 * 4, "the batch and the loss gradient");
}
