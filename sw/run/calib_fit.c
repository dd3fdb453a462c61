/* calib_fit.c - least squares by the normal equations; see calib_fit.h. */
#include "run/calib_fit.h"

#include <string.h>

static double dabs(double v) { return v < 0 ? -v : v; } /* no libm: the unit tests link without it */

/* Solves A x = b (p x p, row-major, overwritten) by Gaussian elimination with partial pivoting.
 * A pivot below tol x the largest diagonal entry means dependent columns: -1. */
static int solve(double *A, double *b, int p, double *x)
{
    double big = 0;
    for (int i = 0; i < p; i++)
        big = dabs(A[i * p + i]) > big ? dabs(A[i * p + i]) : big;
    for (int c = 0; c < p; c++) {
        int piv = c;
        for (int r = c + 1; r < p; r++)
            if (dabs(A[r * p + c]) > dabs(A[piv * p + c]))
                piv = r;
        if (!(dabs(A[piv * p + c]) > 1e-12 * big))
            return -1;
        for (int j = 0; j < p; j++) {
            double t = A[c * p + j];
            A[c * p + j] = A[piv * p + j];
            A[piv * p + j] = t;
        }
        double t = b[c];
        b[c] = b[piv];
        b[piv] = t;
        for (int r = c + 1; r < p; r++) {
            double f = A[r * p + c] / A[c * p + c];
            for (int j = c; j < p; j++)
                A[r * p + j] -= f * A[c * p + j];
            b[r] -= f * b[c];
        }
    }
    for (int c = p - 1; c >= 0; c--) {
        double s = b[c];
        for (int j = c + 1; j < p; j++)
            s -= A[c * p + j] * x[j];
        x[c] = s / A[c * p + c];
    }
    return 0;
}

int npu_lsq_fit(const double *X, const double *y, size_t n, int p, double *beta, double *r2)
{
    double A[NPU_LSQ_MAX * NPU_LSQ_MAX], b[NPU_LSQ_MAX], mean = 0, sse = 0, sst = 0;
    if (p < 1 || p > NPU_LSQ_MAX || n < (size_t)p)
        return -1;
    memset(A, 0, sizeof A);
    memset(b, 0, sizeof b);
    for (size_t i = 0; i < n; i++) {
        const double *xi = X + i * (size_t)p;
        for (int j = 0; j < p; j++) {
            b[j] += xi[j] * y[i];
            for (int k = 0; k < p; k++)
                A[j * p + k] += xi[j] * xi[k];
        }
        mean += y[i];
    }
    if (solve(A, b, p, beta) != 0)
        return -1;
    mean /= (double)n;
    for (size_t i = 0; i < n; i++) {
        double f = 0;
        for (int j = 0; j < p; j++)
            f += X[i * (size_t)p + j] * beta[j];
        sse += (y[i] - f) * (y[i] - f);
        sst += (y[i] - mean) * (y[i] - mean);
    }
    if (r2)
        *r2 = sst > 0 ? 1.0 - sse / sst : (sse > 0 ? 0.0 : 1.0);
    return 0;
}
