/* sweep.c - the estimator over a design space (sweep.h). */
#include "model/sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/step/step_plan.h"
#include "model/est_step.h"
#include "model/estimate.h"

static const char *const k_keys[4] = {"s", "spm", "bw", "batch"};

/* key=v1,v2,..: its values into sp. 0, or -1 with why. */
static int parse_key(const char *t, size_t len, npu_sweep_space_t *sp, char *why, size_t n)
{
    const char *eq = memchr(t, '=', len), *p;
    int k = -1;
    for (int i = 0; i < 4 && eq; i++)
        if ((size_t)(eq - t) == strlen(k_keys[i]) && !strncmp(t, k_keys[i], (size_t)(eq - t)))
            k = i;
    if (k < 0) {
        snprintf(why, n, "'%.*s': keys are s, spm (KiB), bw (bytes/cycle), batch", (int)len, t);
        return -1;
    }
    sp->n[k] = 0;
    sp->given[k] = 1;
    for (p = eq + 1; p < t + len;) {
        char *e;
        double v = strtod(p, &e);
        if (e == p || v <= 0 || sp->n[k] == NPU_SWEEP_MAX_VALUES || (e < t + len && *e != ',')) {
            snprintf(why, n, "'%.*s': up to %d positive numbers separated by ','", (int)len, t,
                     NPU_SWEEP_MAX_VALUES);
            return -1;
        }
        sp->v[k][sp->n[k]++] = v;
        p = e + 1;
    }
    return sp->n[k] ? 0 : -1;
}

int npu_sweep_parse(const char *spec, const npu_cfg_t *cfg, int batch, npu_sweep_space_t *sp,
                    char *why, size_t n)
{
    memset(sp, 0, sizeof *sp);
    sp->v[0][0] = cfg->s;
    sp->v[1][0] = (double)npu_cfg_spm_words(cfg) * npu_cfg_word(cfg) / 1024;
    sp->v[2][0] = cfg->dram_bw;
    sp->v[3][0] = batch;
    for (int k = 0; k < 4; k++)
        sp->n[k] = 1;
    while (spec && *spec) {
        size_t len = strcspn(spec, ";");
        if (parse_key(spec, len, sp, why, n))
            return -1;
        spec += len + (spec[len] == ';');
    }
    for (int i = 0; i < sp->n[0]; i++) {
        int s = (int)sp->v[0][i];
        if (s != sp->v[0][i] || s < 1 || s > 64 || (s & (s - 1))) {
            snprintf(why, n, "s=%g: the core side is a power of two in 1..64", sp->v[0][i]);
            return -1;
        }
    }
    return 0;
}

int npu_sweep_count(const npu_sweep_space_t *sp)
{
    return sp->n[0] * sp->n[1] * sp->n[2] * sp->n[3];
}

/* Point i's indices per key into idx. */
static void point_idx(const npu_sweep_space_t *sp, int i, int *idx)
{
    for (int k = 3; k >= 0; k--) {
        idx[k] = i % sp->n[k];
        i /= sp->n[k];
    }
}

/* Point i's row started (S, bandwidth, batch; the rest zero) and its configuration. */
static npu_cfg_t point_begin(const npu_cfg_t *cfg, const npu_sweep_space_t *sp, int i, npu_sweep_point_t *pt)
{
    npu_cfg_t c = npu_sweep_point_cfg(cfg, sp, i);
    int idx[4];
    point_idx(sp, i, idx);
    memset(pt, 0, sizeof *pt);
    pt->s = c.s;
    pt->bw = sp->v[2][idx[2]];
    pt->batch = (int)sp->v[3][idx[3]];
    return c;
}

int npu_sweep_point(const npu_cfg_t *cfg, const npu_net_shape_t *net, const npu_sweep_space_t *sp,
                    int i, npu_sweep_point_t *pt)
{
    npu_cfg_t c = point_begin(cfg, sp, i, pt);
    int idx[4];
    npu_est_t *e = malloc(sizeof *e);
    char why[256];
    if (!e)
        return -1;
    point_idx(sp, i, idx);
    pt->spm_bytes = (uint64_t)(sp->v[1][idx[1]] * 1024);
    c.spm_bank_words = (int)(pt->spm_bytes / ((uint64_t)c.spm_banks * (uint64_t)npu_cfg_word(&c)));
    npu_est_opts_t o = {pt->batch, pt->spm_bytes, pt->bw, -1, 1, 1};
    pt->ok = c.spm_bank_words > 0 && npu_estimate(&c, net, &o, e, why, sizeof why) == 0;
    if (pt->ok) {
        pt->cycles = e->cycles;
        pt->stall = e->sched.stall;
        pt->in_bytes = e->sched.in_bytes;
        pt->out_bytes = e->sched.out_bytes;
        pt->macs = e->macs;
        pt->utilization = e->utilization;
        pt->samples_per_mcycle = e->samples_per_mcycle;
        npu_est_free(e);
    }
    free(e);
    return 0;
}

/* A CNN point: its convolutions at `batch`, the scheduler given cap bytes of the resident banks
 * (res_banks 0: every kernel through DRAM). 0, or -1 with why. */
static int step_cnn(const npu_cfg_t *c, const npu_sweep_step_t *o, int batch, uint64_t cap, npu_est_kplan_t *e,
                    char *why, size_t n)
{
    npu_conv_t conv[NPU_STEP_MAX_LAYERS];
    if (o->n_conv > NPU_STEP_MAX_LAYERS) {
        snprintf(why, n, "%d convolutions: a step takes at most %d", o->n_conv, NPU_STEP_MAX_LAYERS);
        return -1;
    }
    for (int l = 0; l < o->n_conv; l++) {
        conv[l] = o->conv[l];
        conv[l].batch = batch;
    }
    return npu_estimate_step_cnn_res(c, conv, o->n_conv, o->res, o->fc, o->n_fc, batch, o->modes, o->res_banks,
                                     cap, o->overlap, e, why, n);
}

npu_cfg_t npu_sweep_point_cfg(const npu_cfg_t *cfg, const npu_sweep_space_t *sp, int i)
{
    npu_cfg_t c = *cfg;
    int idx[4];
    point_idx(sp, i, idx);
    c.s = (int)sp->v[0][idx[0]];
    double bw = sp->v[2][idx[2]];
    if (c.s != cfg->s || bw != cfg->dram_bw) { /* the calibration holds at the build's only */
        c.calib.valid = 0;
        c.dram_bw = (int)bw > 0 ? (int)bw : 1;
    }
    return c;
}

int npu_sweep_step_point(const npu_cfg_t *cfg, const npu_sweep_step_t *o, const npu_sweep_space_t *sp, int i,
                         npu_sweep_point_t *pt, char *why, size_t n)
{
    static npu_est_kplan_t e; /* large; one per process */
    npu_cfg_t c = point_begin(cfg, sp, i, pt);
    int idx[4];
    point_idx(sp, i, idx);
    why[0] = 0;
    uint64_t area = (uint64_t)o->res_banks * (uint64_t)c.spm_bank_words * (uint64_t)npu_cfg_word(&c);
    pt->spm_bytes = sp->given[1] ? (uint64_t)(sp->v[1][idx[1]] * 1024) : area;
    if (sp->given[1] && (!o->res_banks || pt->spm_bytes > area)) {
        snprintf(why, n, "spm %g KiB: more than the %d resident bank(s) hold (%llu KiB)", sp->v[1][idx[1]],
                 o->res_banks, (unsigned long long)(area / 1024));
        return 0;
    }
    uint64_t cap = o->res_banks ? pt->spm_bytes : 0;
    if (o->n_conv > 0 ? step_cnn(&c, o, pt->batch, cap, &e, why, n)
                      : npu_estimate_step_res_ex(&c, o->dims, o->layers, pt->batch, o->modes, o->res_banks, cap,
                                                 o->overlap, &e, why, n))
        return 0;
    pt->ok = 1;
    pt->cycles = e.cycles;
    for (int s = 0; o->res_banks && s < (int)(sizeof e.pre / sizeof e.pre[0]); s++)
        pt->stall += e.pre[s];
    pt->in_bytes = e.rd_bytes + e.xfer_rd;
    pt->out_bytes = e.wr_bytes + e.xfer_wr;
    pt->macs = e.macs;
    pt->utilization = (double)e.macs / ((double)e.cycles * 4.0 * c.s * c.s);
    pt->samples_per_mcycle = 1e6 * pt->batch / (double)e.cycles;
    return 0;
}

static int by_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return x < y ? -1 : x > y;
}

int npu_sweep_sample(const int *cand, int n, int k, int shard, int shards, int *out)
{
    int *perm = malloc((size_t)(n > 0 ? n : 1) * sizeof *perm), m = 0, all = k < n ? k : n;
    uint64_t x = 0x2545F4914F6CDD1Dull;
    if (!perm)
        return -1;
    for (int i = 0; i < n; i++)
        perm[i] = cand[i];
    for (int i = 0; i < all; i++) { /* the first k of a seeded Fisher-Yates shuffle */
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int j = i + (int)(x % (uint64_t)(n - i)), t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
    qsort(perm, (size_t)all, sizeof *perm, by_int); /* in sweep order */
    for (int j = 0; j < all; j++)
        if (shards < 1 || j % shards == shard)
            out[m++] = perm[j];
    free(perm);
    return m;
}
