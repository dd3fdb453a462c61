/* estimate.c - one training iteration as scheduler steps, costed by the slicing stage
 * (estimate.h). */
#include "model/estimate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/conv/conv_layer.h"
#include "compile/slice/slice.h"
#include "compile/slice/slice_cost.h"

enum { T_W, T_V, T_B, T_VB, T_Y, T_DY, T_DW, T_DB, T_PER_LAYER }; /* tensors of a layer */

const char *npu_est_phase_name(int phase)
{
    static const char *const n[] = {"fwd", "loss", "bwd", "update"};
    return phase >= 0 && phase < 4 ? n[phase] : "?";
}

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

static uint64_t kernel_macs(const npu_net_layer_t *L, int batch)
{
    return (uint64_t)batch * L->oh * L->ow * L->f * L->k * L->k * L->c;
}

/* Array cycles of one kernel (NPU_NET_FWD / _DX / _DW) of layer L: the compute steps of the
 * slicing stage's pick; when it finds no plan, MACs over the PEs (and *modelled = 0). */
static uint64_t kernel_cycles(const npu_cfg_t *cfg, const npu_net_layer_t *L, int batch,
                              int kernel, int *modelled)
{
    npu_slice_cost_t k = npu_slice_cost_default(cfg, NPU_SLICE_BURST);
    npu_slice_result_t r;
    char msg[160];
    int rc;
    if (L->kind == NPU_NET_FC) {
        int M = kernel == NPU_NET_DW ? L->c : batch, K = kernel == NPU_NET_FWD ? L->c
                                                       : kernel == NPU_NET_DX ? L->f : batch;
        rc = npu_slice_gemm(cfg, &k, M, kernel == NPU_NET_DX ? L->c : L->f, K, &r, msg, sizeof msg);
    } else {
        npu_conv_t c = {batch, L->c, L->h, L->w, L->f, L->k, L->k, L->s, L->p, 1, 0};
        rc = npu_slice_conv(cfg, &k, &c, kernel == NPU_NET_FWD  ? NPU_SLICE_FWD
                                         : kernel == NPU_NET_DX ? NPU_SLICE_DX
                                                                : NPU_SLICE_DW, &r, msg, sizeof msg);
    }
    if (rc == 0)
        return ceil_div(r.best.compute, 1u << NPU_SLICE_Q);
    *modelled = 0;
    return ceil_div(kernel_macs(L, batch), 4u * (uint64_t)cfg->s * (uint64_t)cfg->s);
}

/* Vector-unit cycles of `passes` passes over n 32-bit elements: one S-lane word per cycle (a
 * placeholder until the vector unit's own timing is calibrated). */
static uint64_t vec_cycles(const npu_cfg_t *cfg, uint64_t n, int passes)
{
    return (uint64_t)passes * ceil_div(n, (uint64_t)cfg->s);
}

static int tensor(npu_est_t *e, const char *fmt, int layer, uint64_t bytes, int in_dram, int keep)
{
    int i = e->n_tensors++;
    snprintf(e->tensor_name[i], sizeof e->tensor_name[i], fmt, layer);
    e->tensor[i] = (npu_sched_tensor_t){e->tensor_name[i], bytes, in_dram, keep};
    return i;
}

/* The tensors: X0, then T_PER_LAYER per layer (ids 1 + l * T_PER_LAYER + T_*). */
static void add_tensors(npu_est_t *e, const npu_net_shape_t *net, int batch)
{
    tensor(e, "X%d", 0, 2u * batch * npu_net_in(&net->l[0]), 1, 0);
    for (int l = 0; l < net->layers; l++) {
        const npu_net_layer_t *L = &net->l[l];
        uint64_t np = npu_net_params(L), out = (uint64_t)batch * npu_net_out(L);
        tensor(e, "W%d", l, 2 * np, 1, 1);
        tensor(e, "V%d", l, 4 * np, 1, 1);
        tensor(e, "b%d", l, 4u * L->f, 1, 1);
        tensor(e, "Vb%d", l, 4u * L->f, 1, 1);
        tensor(e, "Y%d", l, 2 * out, 0, 0);
        tensor(e, "dY%d", l, 2 * out, 0, 0);
        tensor(e, "dW%d", l, 4 * np, 0, 0);
        tensor(e, "db%d", l, 4u * L->f, 0, 0);
    }
}

static int tid(int l, int kind) { return 1 + l * T_PER_LAYER + kind; }

/* A step of phase/layer with its inputs and outputs (-1 ends each list). */
static npu_est_step_t *add_step(npu_est_t *e, int phase, int layer, const int *in, const int *out)
{
    int i = e->n_steps++;
    npu_est_step_t *st = &e->step[i];
    npu_sched_step_t *ss = &e->sstep[i];
    memset(st, 0, sizeof *st);
    st->phase = phase;
    st->layer = layer;
    st->modelled = 1;
    if (phase == NPU_EST_LOSS)
        snprintf(st->name, sizeof st->name, "loss");
    else
        snprintf(st->name, sizeof st->name, "%s%d", npu_est_phase_name(phase), layer);
    ss->name = st->name;
    for (; *in >= 0; in++)
        ss->in[ss->n_in++] = *in;
    for (; *out >= 0; out++)
        ss->out[ss->n_out++] = *out;
    return st;
}

/* Forward, loss, backward and update steps with their cycles. */
static void add_steps(const npu_cfg_t *cfg, npu_est_t *e, const npu_net_shape_t *net, int batch)
{
    int L = net->layers;
    for (int l = 0; l < L; l++) {
        const npu_net_layer_t *Y = &net->l[l];
        int in[] = {l ? tid(l - 1, T_Y) : 0, tid(l, T_W), tid(l, T_B), -1}, out[] = {tid(l, T_Y), -1};
        npu_est_step_t *st = add_step(e, NPU_EST_FWD, l, in, out);
        st->macs = kernel_macs(Y, batch);
        st->compute = kernel_cycles(cfg, Y, batch, NPU_NET_FWD, &st->modelled);
        st->vec = vec_cycles(cfg, (uint64_t)batch * npu_net_out(Y), l + 1 < L ? 3 : 2); /* bias, ReLU, narrow */
    }
    {
        int in[] = {tid(L - 1, T_Y), -1}, out[] = {tid(L - 1, T_DY), -1};
        add_step(e, NPU_EST_LOSS, L - 1, in, out);
    }
    for (int l = L - 1; l >= 0; l--) {
        const npu_net_layer_t *Y = &net->l[l];
        int in[] = {tid(l, T_DY), l ? tid(l - 1, T_Y) : 0, tid(l, T_W), -1};
        int out[] = {tid(l, T_DW), tid(l, T_DB), l ? tid(l - 1, T_DY) : -1, -1};
        npu_est_step_t *st = add_step(e, NPU_EST_BWD, l, in, out);
        st->macs = kernel_macs(Y, batch) * (l ? 2 : 1);
        st->compute = kernel_cycles(cfg, Y, batch, NPU_NET_DW, &st->modelled) +
                      (l ? kernel_cycles(cfg, Y, batch, NPU_NET_DX, &st->modelled) : 0);
        st->vec = vec_cycles(cfg, (uint64_t)batch * npu_net_out(Y), 1) + /* bias gradient */
                  (l ? vec_cycles(cfg, (uint64_t)batch * npu_net_in(Y), 2) : 0); /* ReLU mask, narrow */
    }
    for (int l = 0; l < L; l++) {
        int in[] = {tid(l, T_W), tid(l, T_V), tid(l, T_DW), tid(l, T_B), tid(l, T_VB), tid(l, T_DB), -1};
        int out[] = {tid(l, T_W), tid(l, T_V), tid(l, T_B), tid(l, T_VB), -1};
        npu_est_step_t *st = add_step(e, NPU_EST_UPDATE, l, in, out);
        st->vec = vec_cycles(cfg, npu_net_params(&net->l[l]), 4) + vec_cycles(cfg, (uint64_t)net->l[l].f, 3);
    }
}

/* Bytes, reuse frequency and class of each step; the iteration's metrics. */
static void metrics(const npu_cfg_t *cfg, npu_est_t *e, double bw, int batch)
{
    double peak = 2.0 * 4 * cfg->s * cfg->s; /* ops per cycle: a MAC is two */
    e->ridge = peak / bw;
    for (int i = 0; i < e->n_steps; i++) {
        npu_est_step_t *st = &e->step[i];
        const npu_sched_step_t *ss = &e->sstep[i];
        st->bytes = 0;
        for (int j = 0; j < ss->n_in + ss->n_out; j++) {
            int t = j < ss->n_in ? ss->in[j] : ss->out[j - ss->n_in], dup = 0;
            for (int q = 0; q < j && j >= ss->n_in; q++) /* an updated input counts once */
                dup |= ss->in[q] == t;
            st->bytes += dup ? 0 : e->tensor[t].bytes;
        }
        st->rf = st->bytes ? (2.0 * (double)st->macs + (double)st->vec * cfg->s) / (double)st->bytes : 0;
        st->memory_bound = st->rf < e->ridge;
        e->macs += st->macs;
    }
    e->cycles = e->sched.cycles;
    e->utilization = e->cycles ? (double)e->macs / (4.0 * cfg->s * cfg->s * (double)e->cycles) : 0;
    e->bandwidth = e->cycles ? (double)(e->sched.in_bytes + e->sched.out_bytes) / (double)e->cycles : 0;
    e->active = e->bandwidth / bw;
    e->samples_per_mcycle = e->cycles ? 1e6 * batch / (double)e->cycles : 0;
}

int npu_estimate(const npu_cfg_t *cfg, const npu_net_shape_t *net, const npu_est_opts_t *o,
                 npu_est_t *e, char *why, size_t n)
{
    double bw = o->dram_bw > 0 ? o->dram_bw : cfg->dram_bw;
    memset(e, 0, sizeof *e);
    if (net->layers < 1 || o->batch < 1) {
        snprintf(why, n, "no layer or no batch");
        return -1;
    }
    add_tensors(e, net, o->batch);
    add_steps(cfg, e, net, o->batch);
    for (int i = 0; i < e->n_steps; i++)
        e->sstep[i].cycles = e->step[i].compute + e->step[i].vec;
    e->problem = (npu_sched_problem_t){
        e->n_tensors, e->n_steps, e->tensor, e->sstep,
        o->spm_bytes ? o->spm_bytes : (uint64_t)npu_cfg_spm_words(cfg) * (uint64_t)npu_cfg_beat(cfg),
        bw, (uint64_t)(o->dram_latency >= 0 ? o->dram_latency : cfg->dram_latency), o->prefetch,
        o->lookahead};
    if (npu_sched_run(&e->problem, &e->sched) || !e->sched.ok) {
        snprintf(why, n, "%s (tensor granularity: the tiles of a tensor larger than the SPM are "
                 "not modelled yet)", e->sched.why);
        npu_sched_free(&e->sched);
        return -1;
    }
    metrics(cfg, e, bw, o->batch);
    return 0;
}

void npu_est_free(npu_est_t *e)
{
    npu_sched_free(&e->sched);
}
