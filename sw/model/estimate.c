/* estimate.c - one training iteration as scheduler steps, costed by the slicing stage
 * (estimate.h). */
#include "model/estimate.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/conv/conv_layer.h"
#include "compile/slice/slice.h"
#include "compile/slice/slice_cost.h"
#include "compile/step/step_plan.h"

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
static uint64_t kernel_search(const npu_cfg_t *cfg, const npu_net_layer_t *L, int batch, int kernel,
                              int *modelled)
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

/* The kernels one estimate has costed: identical layers (a deep MLP's) are searched once. */
typedef struct kmemo {
    int n;
    struct {
        npu_net_layer_t l;
        int kernel, modelled;
        uint64_t cycles;
    } k[3 * NPU_NET_MAX_LAYERS];
} kmemo_t;

/* kernel_search's cycles, remembered in m. */
static uint64_t kernel_cycles(const npu_cfg_t *cfg, const npu_net_layer_t *L, int batch, int kernel,
                              int *modelled, kmemo_t *m)
{
    int i, ok = 1;
    for (i = 0; i < m->n; i++)
        if (m->k[i].kernel == kernel && !memcmp(&m->k[i].l, L, sizeof *L))
            break;
    if (i == m->n) {
        m->k[i].l = *L;
        m->k[i].kernel = kernel;
        m->k[i].cycles = kernel_search(cfg, L, batch, kernel, &ok);
        m->k[i].modelled = ok;
        m->n++;
    }
    *modelled &= m->k[i].modelled;
    return m->k[i].cycles;
}

/* The vector unit's busy cycles of one layer's vector kernels in a whole training step on the NPU
 * (compile/step/step_plan.h): forward bias (and ReLU, narrowing), the bias gradient with the
 * bias update, ReLU's backward mask of the layer's input, the SGD update of W. */
typedef struct vbusy {
    uint64_t fwd, grad_bias, relu_bwd, sgd;
} vbusy_t;

/* Busy cycles of a vector kernel as npu_vk_emit emits it (npu_vk_vec_busy: its chunks, its SPM
 * layout, npu_vec_busy per VEC, the model the RTL's vec_busy counter is checked against). A
 * kernel the emitter refuses (a SUM over more rows than the SPM holds) is timed as two kernels of
 * half the rows each, and *whole = 0. */
static uint64_t vkern_busy(const npu_cfg_t *cfg, const npu_vkern_t *k, int *whole)
{
    char why[200];
    uint64_t busy;
    if (npu_vk_vec_busy(cfg, k, &busy, why, sizeof why) == 0 || k->rows < 2)
        return busy;
    npu_vkern_t h = *k;
    *whole = 0;
    h.rows = k->rows / 2;
    busy = vkern_busy(cfg, &h, whole);
    h.rows = k->rows - k->rows / 2;
    return busy + vkern_busy(cfg, &h, whole);
}

/* Layer (K inputs, N outputs, `rows` rows per pass, not the last: with ReLU) as layer 2 of the step
 * plan of the MLP {1, K, N(, 1)}: its kernels are those of any step plan's layer of that shape
 * (relu_bwd: layer 1's mask, K wide). The bf16 plan whatever the configuration's type (the
 * vector unit's timing does not depend on it). 0; 1 when a kernel was split (vkern_busy); -1
 * when the plan refuses the shape. */
static int layer_vbusy(const npu_cfg_t *cfg, int rows, int K, int N, int last, vbusy_t *v)
{
    int whole = 1;
    npu_cfg_t c = *cfg;
    npu_step_plan_t *p = malloc(sizeof *p);
    int dims[4] = {1, K, N, 1}, rc = -1;
    char why[200];
    memset(v, 0, sizeof *v);
    c.dtype = NPU_DTYPE_BF16;
    if (p && npu_step_plan_mlp(&c, dims, last ? 2 : 3, rows, 0.1f, 0.9f, 0, NPU_EMIT_FW, 0, p, why,
                               sizeof why) == 0) {
        for (int i = 0; i < p->nk; i++) {
            const npu_step_kernel_t *k = &p->k[i];
            if (k->kind != NPU_SK_VEC || k->layer != 2)
                continue;
            uint64_t b = vkern_busy(&c, &k->v, &whole);
            *(k->phase == NPU_SK_FWD      ? &v->fwd
              : k->phase == NPU_SK_UPDATE ? &v->sgd
              : strstr(k->name, "relu_bwd") ? &v->relu_bwd
                                            : &v->grad_bias) = b;
        }
        rc = !whole;
        npu_step_plan_free(p);
    }
    free(p);
    return rc;
}

/* The layers' vector busy cycles an estimate has computed (identical layers computed once). */
typedef struct vmemo {
    int n;
    struct {
        int rows, K, N, last, ok;
        vbusy_t v;
    } k[NPU_NET_MAX_LAYERS];
} vmemo_t;

/* Layer l's vector kernels: an FC layer's over the batch's rows; a convolution's as the FC kernels
 * of its output pixels (rows batch x OH x OW, K = k x k x c, N = f). *ok = 0 when they are not
 * the step plan's (more than 8192 rows or columns: no vector cycles then; or a kernel split). */
static vbusy_t layer_vec(const npu_cfg_t *cfg, const npu_net_shape_t *net, int l, int batch, vmemo_t *m,
                         int *ok)
{
    const npu_net_layer_t *L = &net->l[l];
    int rows = batch * L->oh * L->ow, K = L->k * L->k * L->c, last = l + 1 == net->layers, i;
    for (i = 0; i < m->n; i++)
        if (m->k[i].rows == rows && m->k[i].K == K && m->k[i].N == L->f && m->k[i].last == last)
            break;
    if (i == m->n) {
        m->k[i].rows = rows;
        m->k[i].K = K;
        m->k[i].N = L->f;
        m->k[i].last = last;
        m->k[i].ok = layer_vbusy(cfg, rows, K, L->f, last, &m->k[i].v) == 0; /* split, refused: 0 */
        m->n++;
    }
    *ok = m->k[i].ok;
    return m->k[i].v;
}

static int tensor(npu_est_t *e, const char *fmt, int layer, uint64_t bytes, int in_dram, int keep)
{
    int i = e->n_tensors++;
    snprintf(e->tensor_name[i], sizeof e->tensor_name[i], fmt, layer);
    e->tensor[i] = (npu_sched_tensor_t){e->tensor_name[i], bytes, in_dram, keep, 0};
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
    memset(ss, 0, sizeof *ss);
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

/* Forward, loss, backward and update steps with their cycles: the array's (kernel_cycles) and
 * the vector unit's (layer_vec: forward bias, ReLU and narrowing; backward the bias gradient and
 * the bias update, and ReLU's mask of the layer's input; update the SGD of W). */
static void add_steps(const npu_cfg_t *cfg, npu_est_t *e, const npu_net_shape_t *net, int batch)
{
    kmemo_t m;
    vmemo_t vm;
    vbusy_t vb[NPU_NET_MAX_LAYERS];
    int L = net->layers, vok[NPU_NET_MAX_LAYERS];
    m.n = vm.n = 0;
    for (int l = 0; l < L; l++) {
        const npu_net_layer_t *Y = &net->l[l];
        int in[] = {l ? tid(l - 1, T_Y) : 0, tid(l, T_W), tid(l, T_B), -1}, out[] = {tid(l, T_Y), -1};
        npu_est_step_t *st = add_step(e, NPU_EST_FWD, l, in, out);
        vb[l] = layer_vec(cfg, net, l, batch, &vm, &vok[l]);
        st->macs = kernel_macs(Y, batch);
        st->compute = kernel_cycles(cfg, Y, batch, NPU_NET_FWD, &st->modelled, &m);
        st->vec = vb[l].fwd;
        st->modelled &= vok[l];
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
        st->compute = kernel_cycles(cfg, Y, batch, NPU_NET_DW, &st->modelled, &m) +
                      (l ? kernel_cycles(cfg, Y, batch, NPU_NET_DX, &st->modelled, &m) : 0);
        st->vec = vb[l].grad_bias + (l ? vb[l].relu_bwd : 0);
        st->modelled &= vok[l];
    }
    for (int l = 0; l < L; l++) {
        int in[] = {tid(l, T_W), tid(l, T_V), tid(l, T_DW), tid(l, T_B), tid(l, T_VB), tid(l, T_DB), -1};
        int out[] = {tid(l, T_W), tid(l, T_V), tid(l, T_B), tid(l, T_VB), -1};
        npu_est_step_t *st = add_step(e, NPU_EST_UPDATE, l, in, out);
        st->vec = vb[l].sgd;
        st->modelled &= vok[l];
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
    /* all but the arrays (64 KB, filled entry by entry): the estimate is timed, issue 16 */
    e->n_steps = e->n_tensors = 0;
    memset(&e->problem, 0, sizeof *e - offsetof(npu_est_t, problem));
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
