/*
 * test_calib_fit.c - the least squares of `npu calibrate` (run/calib_fit.h) on synthetic data:
 *
 * calib_fit/exact      cycles = 40 + 36 x + 4.5 b + 0.03 bytes of a LOAD-like sweep: the fit
 *                      recovers the four constants (1e-9) with R^2 = 1.
 * calib_fit/noisy      the same with deterministic +-1 cycle noise: constants within a few % and
 *                      0.98 <= R^2 < 1 (the noise is seen).
 * calib_fit/degenerate a sweep whose bursts always equal its transfers cannot separate them:
 *                      -1; fewer points than constants: -1.
 * calib_fit/constant   y constant and fitted exactly by the intercept: R^2 = 1; a model without
 *                      intercept off a constant y: R^2 below 1.
 */
#include <criterion/criterion.h>

#include "run/calib_fit.h"
#include "test_cfgs.h"

#define NPTS 200
static const double K[4] = {40.0, 36.0, 4.5, 0.03}; /* launch, xfer_fixed, burst, byte */

/* A LOAD-like design: transfers 1..4, bursts and bytes varying independently; noise in cycles
 * (0: none, else a deterministic +-noise). */
static void design(double *X, double *y, double noise)
{
    uint64_t s = 12345;
    for (int i = 0; i < NPTS; i++) {
        double x = (double)(1 + test_rand(&s) % 4), b = (double)(x * (1 + test_rand(&s) % 32));
        double bytes = b * (double)(32 + test_rand(&s) % 480);
        double row[4] = {1, x, b, bytes};
        memcpy(X + 4 * i, row, sizeof row);
        y[i] = K[0] + K[1] * x + K[2] * b + K[3] * bytes;
        if (noise > 0)
            y[i] += (test_rand(&s) & 1) ? noise : -noise;
    }
}

Test(calib_fit, exact)
{
    double X[4 * NPTS], y[NPTS], beta[4], r2 = 0;
    design(X, y, 0);
    cr_assert_eq(npu_lsq_fit(X, y, NPTS, 4, beta, &r2), 0);
    for (int j = 0; j < 4; j++)
        cr_assert(beta[j] > K[j] - 1e-9 && beta[j] < K[j] + 1e-9, "beta[%d] = %.12f, want %g", j,
                  beta[j], K[j]);
    cr_assert(r2 > 1 - 1e-12, "R^2 = %.15f", r2);
}

Test(calib_fit, noisy)
{
    double X[4 * NPTS], y[NPTS], beta[4], r2 = 0;
    design(X, y, 1.0);
    cr_assert_eq(npu_lsq_fit(X, y, NPTS, 4, beta, &r2), 0);
    for (int j = 1; j < 4; j++)
        cr_assert(beta[j] > K[j] * 0.97 && beta[j] < K[j] * 1.03, "beta[%d] = %.6f, want %g", j,
                  beta[j], K[j]);
    cr_assert(r2 >= 0.98 && r2 < 1.0, "R^2 = %.9f", r2);
}

Test(calib_fit, degenerate)
{
    double X[4 * NPTS], y[NPTS], beta[4];
    design(X, y, 0);
    for (int i = 0; i < NPTS; i++)
        X[4 * i + 2] = X[4 * i + 1]; /* bursts == transfers everywhere */
    cr_assert_eq(npu_lsq_fit(X, y, NPTS, 4, beta, NULL), -1);
    design(X, y, 0);
    cr_assert_eq(npu_lsq_fit(X, y, 3, 4, beta, NULL), -1);
}

Test(calib_fit, constant)
{
    double X[2 * 8], y[8], beta[2], r2 = 0;
    for (int i = 0; i < 8; i++) {
        X[2 * i] = 1;
        X[2 * i + 1] = i;
        y[i] = 7;
    }
    cr_assert_eq(npu_lsq_fit(X, y, 8, 2, beta, &r2), 0);
    cr_assert(r2 == 1.0 && beta[0] > 7 - 1e-9 && beta[0] < 7 + 1e-9 && beta[1] * beta[1] < 1e-18);
    double Z[8];
    for (int i = 0; i < 8; i++)
        Z[i] = i + 1; /* y = 7 without an intercept: no exact fit */
    cr_assert_eq(npu_lsq_fit(Z, y, 8, 1, beta, &r2), 0);
    cr_assert(r2 < 1.0, "R^2 = %g", r2);
}

/* calib_fit/slice_cost: npu_slice_cost_default takes a config's calibration when it has one
 * (every constant, both modes), else the config formulas (npu_slice_cost_formula). */
#include "compile/slice/slice_cost.h"
Test(calib_fit, slice_cost)
{
    npu_cfg_t c = test_cfg(8);
    npu_slice_cost_t f = npu_slice_cost_formula(&c, NPU_SLICE_BURST);
    npu_slice_cost_t d = npu_slice_cost_default(&c, NPU_SLICE_BURST);
    cr_assert(!memcmp(&f, &d, sizeof f), "uncalibrated: the formulas");
    npu_cfg_calib_t k = {1, 101, 102, 103, 104, 105, 106, 107, 108, 109};
    c.calib = k;
    for (int mode = NPU_SLICE_BURST; mode <= NPU_SLICE_NOBURST; mode++) {
        d = npu_slice_cost_default(&c, mode);
        cr_assert(d.mode == mode && d.xfer_fixed == 101 && d.burst == 102 && d.byte == 103 &&
                  d.wave == 104 && d.drain_fixed == 105 && d.drain_row == 106 && d.lat_fixed == 107 &&
                  d.window == 108 && d.xfer_idle == 109, "mode %d", mode);
    }
    f = npu_slice_cost_formula(&c, NPU_SLICE_BURST);
    cr_assert_neq(f.burst, 102u, "the formula ignores the calibration");
}
