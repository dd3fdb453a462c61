/* step_scale.c - static fixed-point scales of an int16 training step (step_scale.h). */
#include "compile/step/step_scale.h"

#include <math.h>

static int q_for(double max, double limit)
{
    int q = (int)floor(log2(limit / max));
    while (q > 0 && max * ldexp(1.0, q) > limit) /* floor(log2) rounding at exact powers */
        q--;
    return q < 0 ? 0 : q > 30 ? 30 : q;
}

/* A tensor the calibration saw all zero (or not at all) tells nothing: it gets the nominal
 * magnitude 1, not the finest scale, which would saturate the first values it holds. */
static double known(double max) { return max > 0 ? max : 1.0; }

int npu_step_q16(double max) { return q_for(known(max) * 8, 32767.0); }
int npu_step_q32(double max) { return q_for(known(max) * 64, 2147483647.0); }

static int min_i(int a, int b) { return a < b ? a : b; }

/* An AXPBY's two sources may be at most this many bits apart: its int16 scalars and their one
 * shift (npu_step_axpby_q) hold 1 and 2^14 at once. */
#define AXPBY_GAP 14

/* Normalised layer l's forward scales from its convolution output's q (qz); v: the velocities'
 * gain. Z16 at most Z32's q; T16 at most the VMUL's exact product's (z16 + g: a shift >= 0);
 * N in 32 bits (the widened T16 plus beta in one AXPBY). */
static void norm_fwd_q(const npu_step_range_t *r, int l, int qz, double v, npu_step_q_t *q)
{
    q->z16[l] = min_i(npu_step_q16(r->zc[l]), qz);
    q->g[l] = npu_step_q16(r->gam[l]);
    q->t[l] = min_i(npu_step_q16(r->n[l]), q->z16[l] + q->g[l]);
    q->n[l] = min_i(npu_step_q32(r->n[l]), q->t[l] + AXPBY_GAP);
    q->vg[l] = min_i(npu_step_q32(r->dg[l] * v), q->g[l] + NPU_STEP_W32_EXTRA);
    q->vbn[l] = min_i(npu_step_q32(r->dbn[l] * v), q->n[l]);
}

/* Layer l's backward 16-bit scales below its incoming gradient's q (dz32): dZ16[l], and for a
 * normalised layer dN16 (the masked gradient narrowed), the conv's dZ16 = VMUL(dN16, G16) at
 * most their sum's q, dgamma's products VMUL(dN16, Z16) at most theirs and within the int32
 * headroom of the calibrated |dgamma| (their SUM is dG32). */
static void bwd_q(const npu_step_range_t *r, int l, int dz32, npu_step_q_t *q)
{
    if (!r->normed[l]) {
        q->dz16[l] = min_i(q->dz16[l], dz32);
        return;
    }
    q->dn16[l] = min_i(q->dn16[l], dz32);
    q->dz16[l] = min_i(q->dz16[l], q->dn16[l] + q->g[l]);
    q->pg[l] = min_i(min_i(q->pg[l], q->dn16[l] + q->z16[l]), npu_step_q32(r->dg[l]));
    /* the velocities' AXPBYs add dG32 (at pg) and dBn32 (at dz32) */
    q->vg[l] = min_i(q->vg[l], q->pg[l] + AXPBY_GAP);
    q->vbn[l] = min_i(q->vbn[l], dz32 + AXPBY_GAP);
}

void npu_step_q_pick(const npu_step_range_t *r, int layers, float mu, npu_step_q_t *q)
{
    double v = 1.0 / (1.0 - (mu < 0.99f ? mu : 0.99f)); /* the velocity's gain over one gradient */
    q->x = npu_step_q16(r->x);
    int in = q->x;
    for (int l = 1; l <= layers; l++) {
        q->w[l] = npu_step_q16(r->w[l]);
        int qz = in + q->w[l], top = qz;
        if (r->normed[l]) {
            norm_fwd_q(r, l, qz, v, q);
            top = q->n[l]; /* H16 = relu(N) narrowed */
        }
        q->h[l] = l < layers ? min_i(npu_step_q16(r->h[l]), top) : 0;
        /* the velocities stay at or above their parameter's precision: the update's -lr then
         * keeps its bits (npu_step_axpby_q) */
        q->vw[l] = min_i(npu_step_q32(r->dw[l] * v), q->w[l] + NPU_STEP_W32_EXTRA);
        q->vb[l] = min_i(npu_step_q32(r->db[l] * v), qz);
        in = q->h[l];
    }
    q->dz_top = npu_step_q32(r->dz[layers]);
    int dz32 = q->dz_top;
    for (int l = layers; l >= 1; l--) {
        q->dz16[l] = npu_step_q16(r->dz[l]);
        q->dn16[l] = npu_step_q16(r->dn[l]);
        q->pg[l] = npu_step_q16(r->dn[l] * r->zc[l]);
        bwd_q(r, l, dz32, q);
        dz32 = q->dz16[l] + q->w[l]; /* dH32 = dZ16 . W16^T, and dZ32[l-1] = its ReLU mask */
    }
}

void npu_step_range_nominal(int layers, int batch, npu_step_range_t *r)
{
    r->x = 1;
    r->z_top = 0; /* the logits: unknown (npu_step_q_cap_sums reads it) */
    for (int l = 0; l <= layers && l <= NPU_STEP_MAX_LAYERS; l++) {
        r->w[l] = 1;
        r->h[l] = 4;
        r->dz[l] = 1.0 / batch;
        r->dw[l] = 1;
        r->db[l] = 1;
        r->zc[l] = r->n[l] = 4;
        r->gam[l] = 1;
        r->dn[l] = 1.0 / batch;
        r->dg[l] = r->dbn[l] = 1;
        r->normed[l] = 0;
    }
}

/* round(x * 2^e) as an int16, or 0x10000 (out of range). */
static int32_t scalar(double x, int e)
{
    double v = nearbyint(ldexp(x, e));
    return fabs(v) > 32767 ? 0x10000 : (int32_t)v;
}

int npu_step_axpby_q(double alpha, double beta, int qd, int qa, int qb, int16_t *A, int16_t *B,
                     unsigned *s, double *err)
{
    int best = -1;
    for (int t = 0; t <= 31; t++)
        if (scalar(alpha, t + qd - qa) != 0x10000 && scalar(beta, t + qd - qb) != 0x10000)
            best = t;
    if (best < 0)
        return -1;
    int32_t a = scalar(alpha, best + qd - qa), b = scalar(beta, best + qd - qb);
    if ((alpha != 0 && a == 0) || (beta != 0 && b == 0))
        return -1;
    *A = (int16_t)a;
    *B = (int16_t)b;
    *s = (unsigned)best;
    double ea = alpha != 0 ? fabs(ldexp(a, -(best + qd - qa)) / alpha - 1) : 0;
    double eb = beta != 0 ? fabs(ldexp(b, -(best + qd - qb)) / beta - 1) : 0;
    *err = ea > eb ? ea : eb;
    return 0;
}

void npu_step_q_cap_sums(const npu_step_range_t *r, int layers, npu_step_q_t *q)
{
    int top = npu_step_q32(r->z_top) - (layers > 1 ? q->h[layers - 1] : q->x); /* the logits */
    q->w[layers] = min_i(q->w[layers], top > 0 ? top : 0);
    q->vw[layers] = min_i(q->vw[layers], q->w[layers] + NPU_STEP_W32_EXTRA);
    for (int l = layers; l >= 1; l--) {
        int in = l == 1 ? q->x : q->h[l - 1];
        int cap = npu_step_q32(r->dw[l]) - in; /* dW32 at in + dZ16 */
        /* dZ32[l-1] and db32[l-1] at dZ16 + W16 (a normalised layer l-1: its dN and dBn32) */
        int nm = l > 1 && r->normed[l - 1];
        if (l > 1)
            cap = min_i(cap, min_i(npu_step_q32(nm ? r->dn[l - 1] : r->dz[l - 1]),
                                   npu_step_q32(nm ? r->dbn[l - 1] : r->db[l - 1])) - q->w[l]);
        /* the layer's own chain again first: its incoming gradient's q may have come down */
        bwd_q(r, l, l == layers ? q->dz_top : q->dz16[l + 1] + q->w[l + 1], q);
        q->dz16[l] = min_i(q->dz16[l], cap > 0 ? cap : 0);
    }
}
