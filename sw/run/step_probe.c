/* step_probe.c - one MLP training step on the simulated NPU, measured (step_probe.h). */
#include "run/step_probe.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/step/step_res.h"
#include "npu_sim.h"
#include "run/runtime.h"

/* Layer l's (0-based) weights, biases and fan-in: a convolution's KH x KW x F x C, F and KH x KW
 * x C; a fully connected layer's d[l] x d[l+1], d[l+1] and d[l]. */
static void layer_sizes(const npu_step_plan_t *p, int l, size_t *nw, size_t *nb, int *fan_in)
{
    const npu_conv_t *c = &p->conv[l + 1];
    if (l < p->n_conv) {
        *nw = (size_t)c->KH * c->KW * c->F * c->C;
        *nb = (size_t)c->F;
        *fan_in = c->KH * c->KW * c->C;
    } else {
        *nw = (size_t)p->dims[l] * p->dims[l + 1];
        *nb = (size_t)p->dims[l + 1];
        *fan_in = p->dims[l];
    }
}

void npu_step_probe_params(npu_step_run_t *s, uint64_t seed)
{
    int L = s->plan.layers;
    float *w[NPU_STEP_MAX_LAYERS] = {0}, *b[NPU_STEP_MAX_LAYERS] = {0};
    uint64_t x = seed ? seed : 1;
    for (int l = 0; l < L; l++) {
        size_t n, nb;
        int fan_in;
        layer_sizes(&s->plan, l, &n, &nb, &fan_in);
        w[l] = malloc(n * sizeof(float));
        b[l] = calloc(nb, sizeof(float));
        for (size_t i = 0; w[l] && i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            w[l][i] = ((float)(x % 2001) - 1000.0f) / 1000.0f / sqrtf((float)fan_in);
        }
    }
    npu_step_run_params(s, w, b);
    for (int l = 0; l < L; l++) {
        free(w[l]);
        free(b[l]);
    }
}

int npu_step_probe_step(npu_step_run_t *s)
{
    const int *d = s->plan.dims;
    int L = s->plan.layers, B = s->plan.batch;
    size_t nx = (size_t)B * d[0], ny = (size_t)B * d[L], C = (size_t)d[L];
    float *x = malloc(nx * sizeof *x), *lg = malloc(ny * sizeof *lg), *dl = malloc(ny * sizeof *dl);
    int rc = -1;
    if (!x || !lg || !dl)
        snprintf(s->why, sizeof s->why, "out of memory");
    else {
        for (size_t i = 0; i < nx; i++)
            x[i] = (float)(i * 7 % 17) / 16.0f;
        if (npu_step_forward(s, x, B, lg) == 0) {
            for (size_t i = 0; i < ny; i++)
                dl[i] = (lg[i] - (float)(i % C == (i / C) % C)) / (float)B;
            rc = npu_step_backward(s, dl);
        }
    }
    free(x);
    free(lg);
    free(dl);
    return rc;
}

/* The step's totals and, with residency, its tensors' bytes into r. */
static void probe_result(const npu_step_run_t *s, npu_step_probe_t *r)
{
    memset(r, 0, sizeof *r);
    r->cycles = s->fwd.cycles + s->bwd.cycles;
    for (int g = 0; g < NPU_NUM_TAGS; g++) {
        r->rd_bytes += s->fwd.rd[g] + s->bwd.rd[g];
        r->wr_bytes += s->fwd.wr[g] + s->bwd.wr[g];
    }
    r->kernels = s->plan.nk;
    r->checked = (int)s->checked;
    r->nt = s->res ? s->plan.nt : 0;
    for (int t = 0; t < r->nt; t++)
        r->t_in[t] = s->t_in[t], r->t_out[t] = s->t_out[t];
}

/* The step engine for o: an MLP's, or a CNN's with its convolutions at o's batch. 0 or -1. */
static int probe_init(npu_step_run_t *s, const npu_cfg_t *cfg, npu_sim_t *sim, const npu_step_probe_opts_t *o)
{
    npu_conv_t conv[NPU_STEP_MAX_LAYERS];
    if (o->n_conv <= 0)
        return npu_step_run_init(s, cfg, sim, o->dims, o->layers, o->batch, NPU_STEP_NOMINAL_LR, NPU_STEP_NOMINAL_MU,
                                 NPU_STEP_NOMINAL_WD, o->modes, 50000000);
    for (int l = 0; l < o->n_conv && l < NPU_STEP_MAX_LAYERS; l++) {
        conv[l] = o->conv[l];
        conv[l].batch = o->batch;
    }
    return npu_step_run_init_cnn(s, cfg, sim, conv, o->n_conv, o->res, o->fc, o->n_fc, o->batch, NPU_STEP_NOMINAL_LR,
                                 NPU_STEP_NOMINAL_MU, NPU_STEP_NOMINAL_WD, o->modes, NULL, 50000000);
}

int npu_step_probe(const npu_cfg_t *cfg, const npu_step_probe_opts_t *o, npu_step_probe_t *r, char *why, size_t n)
{
    npu_dram_timing_t t = npu_dram_timing_of(cfg);
    if (o->bw > 0)
        t.bytes_per_cycle = o->bw;
    npu_sim_t *sim = npu_sim_open(&t);
    npu_step_run_t s;
    int rc = -1;
    if (!sim) {
        snprintf(why, n, "cannot open the simulator");
        return -1;
    }
    if (probe_init(&s, cfg, sim, o) == 0 &&
        (o->res_banks == 0 || npu_step_run_resident_ex(&s, o->res_banks, o->cap, o->overlap) == 0)) {
        npu_step_probe_params(&s, 0x9E3779B97F4A7C15ull);
        if (npu_step_probe_step(&s) == 0 && s.checked == (uint64_t)s.plan.nk) {
            probe_result(&s, r);
            rc = 0;
        } else if (s.checked != (uint64_t)s.plan.nk && !s.why[0]) {
            snprintf(s.why, sizeof s.why, "%llu of %d kernels compared", (unsigned long long)s.checked, s.plan.nk);
        }
    }
    if (rc)
        snprintf(why, n, "%s", s.why);
    npu_step_run_free(&s);
    npu_sim_close(sim);
    return rc;
}
