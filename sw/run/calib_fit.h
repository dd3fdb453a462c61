/*
 * calib_fit.h - ordinary least squares for `npu calibrate` (run/calib.h): the cost constants of
 * the slicing stage are the coefficients of a linear model of measured cycles.
 */
#ifndef NPU_CALIB_FIT_H
#define NPU_CALIB_FIT_H

#include <stddef.h>

#define NPU_LSQ_MAX 7 /* regressors */

/* Fits y[i] ~ sum_j X[i*p + j] * beta[j] (p <= NPU_LSQ_MAX, an intercept is a column of ones)
 * by the normal equations, solved with partial pivoting. *r2 (may be NULL) = 1 - SSE/SST over
 * y (1 when y is constant and fitted exactly). Returns 0, or -1 when n < p or the columns are
 * linearly dependent (a sweep that cannot separate the constants). */
int npu_lsq_fit(const double *X, const double *y, size_t n, int p, double *beta, double *r2);

#endif
