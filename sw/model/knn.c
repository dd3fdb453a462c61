/* knn.c - K-nearest-neighbour selector on log-dimensions; see knn.h. */
#include "model/knn.h"

#include <stdlib.h>
#include <string.h>

double npu_log2(double x)
{
    if (!(x > 0))
        return 0.0;
    int e = 0;
    while (x >= 2.0) {
        x *= 0.5;
        e++;
    }
    while (x < 1.0) {
        x *= 2.0;
        e--;
    }
    /* ln(x) = 2 atanh(y), y = (x-1)/(x+1) in [0, 1/3) */
    double y = (x - 1.0) / (x + 1.0), y2 = y * y, term = y, sum = 0.0;
    for (int i = 1; i < 60; i += 2) {
        sum += term / i;
        term *= y2;
    }
    return e + 2.0 * sum / 0.69314718055994530942;
}

void npu_knn_features(long M, long K, long N, double f[NPU_KNN_FEATURES])
{
    f[0] = npu_log2((double)M);
    f[1] = npu_log2((double)K);
    f[2] = f[1];
    f[3] = npu_log2((double)N);
    f[4] = f[0];
    f[5] = f[3];
}

static double dist2(const double *a, const double *b)
{
    double d = 0;
    for (int i = 0; i < NPU_KNN_FEATURES; i++)
        d += (a[i] - b[i]) * (a[i] - b[i]);
    return d;
}

#define KNN_MAXK 15
#define KNN_MAXL 16

/* prediction over train samples selected by idx[0..n-1] (idx NULL: all) */
static int predict_idx(const npu_knn_sample_t *s, const int *idx, int n,
                       const double f[NPU_KNN_FEATURES], int k)
{
    if (n < 1 || k < 1)
        return -1;
    if (k > KNN_MAXK)
        k = KNN_MAXK;
    if (k > n)
        k = n;
    int best[KNN_MAXK];
    double bd[KNN_MAXK];
    int nb = 0;
    for (int j = 0; j < n; j++) {
        int i = idx ? idx[j] : j;
        double d = dist2(s[i].f, f);
        if (nb < k || d < bd[nb - 1]) {
            int p = nb < k ? nb++ : nb - 1;
            while (p > 0 && bd[p - 1] > d) {
                bd[p] = bd[p - 1];
                best[p] = best[p - 1];
                p--;
            }
            bd[p] = d;
            best[p] = i;
        }
    }
    int votes[KNN_MAXL] = {0}, first[KNN_MAXL];
    for (int l = 0; l < KNN_MAXL; l++)
        first[l] = KNN_MAXK;
    for (int q = 0; q < nb; q++) {
        int l = s[best[q]].label;
        if (l < 0 || l >= KNN_MAXL)
            continue;
        votes[l]++;
        if (first[l] > q)
            first[l] = q;
    }
    int lab = -1;
    for (int l = 0; l < KNN_MAXL; l++)
        if (votes[l] > 0 && (lab < 0 || votes[l] > votes[lab] ||
                             (votes[l] == votes[lab] && first[l] < first[lab])))
            lab = l;
    return lab;
}

int npu_knn_predict(const npu_knn_sample_t *train, int n, const double f[NPU_KNN_FEATURES], int k)
{
    return predict_idx(train, NULL, n, f, k);
}

static uint64_t xs(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

double npu_knn_accuracy(const npu_knn_sample_t *s, int n, int k, int splits, double train_frac,
                        uint64_t seed)
{
    if (!s || n < 2 || k < 1 || splits < 1 || !(train_frac > 0 && train_frac < 1))
        return -1;
    int *perm = malloc((size_t)n * sizeof *perm);
    if (!perm)
        return -1;
    if (!seed)
        seed = 0x9e3779b97f4a7c15ull;
    int ntr = (int)(train_frac * n + 0.5);
    if (ntr < 1)
        ntr = 1;
    if (ntr > n - 1)
        ntr = n - 1;
    double acc = 0;
    for (int sp = 0; sp < splits; sp++) {
        for (int i = 0; i < n; i++)
            perm[i] = i;
        for (int i = n - 1; i > 0; i--) { /* Fisher-Yates */
            int j = (int)(xs(&seed) % (uint64_t)(i + 1));
            int t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        int ok = 0;
        for (int t = ntr; t < n; t++)
            ok += predict_idx(s, perm, ntr, s[perm[t]].f, k) == s[perm[t]].label;
        acc += (double)ok / (n - ntr);
    }
    free(perm);
    return acc / splits;
}

int npu_knn_loo(const npu_knn_sample_t *s, int n, int k, int *pred)
{
    if (!s || !pred || n < 2)
        return -1;
    int *idx = malloc((size_t)n * sizeof *idx);
    if (!idx)
        return -1;
    for (int i = 0; i < n; i++) {
        int w = 0;
        for (int j = 0; j < n; j++)
            if (j != i)
                idx[w++] = j;
        pred[i] = predict_idx(s, idx, n - 1, s[i].f, k);
    }
    free(idx);
    return 0;
}
