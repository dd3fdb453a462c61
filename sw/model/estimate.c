/* estimate.c - one training iteration as scheduler steps, costed by the slicing stage
 * (estimate.h). */
#include "model/estimate.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/conv/conv_layer.h"
#include "compile/slice/slice.h"
#include "compile/slice/slice_cost.h"
#include "compile/step/step_plan.h"

/* a layer's tensors (ids); a normalised layer's b, Vb, db are its beta's, and it has five more
 * (Z, its conv's output before the normalisation; dZ; gamma G, VG, dG), -1 elsewhere */
enum { T_W, T_V, T_B, T_VB, T_Y, T_DY, T_DW, T_DB, T_X, T_DX, T_Z, T_DZ, T_G, T_VG, T_DG, T_IDS };

const char *npu_est_phase_name(int phase)
{
    static const char *const n[] = {"fwd", "loss", "bwd", "update"};
    return phase >= 0 && phase < 4 ? n[phase] : "?";
}

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
static uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

static uint64_t kernel_macs(const npu_net_layer_t *L, int batch)
{
    return (uint64_t)batch * L->oh * L->ow * L->f * L->k * L->k * (L->depthwise ? 1 : L->c);
}

/* One kernel as the slicing stage's pick runs it: its array cycles alone; its cycles with its tile
 * transfers overlapped, and the DRAM bytes (beats) of its streamed operand IN0, its stationary
 * IN1 and its result OUT (compile/slice/slice.h), for a step that runs tile by tile. */
typedef struct kres {
    uint64_t compute, cycles, in0, in1, out;
    int modelled; /* 0: no plan (compute = MACs / PEs; no tiling, no bytes) */
} kres_t;

/* Kernel NPU_NET_FWD / _DX / _DW of layer L by the slicing stage's pick. */
static kres_t kernel_search(const npu_cfg_t *cfg, const npu_net_layer_t *L, int batch, int kernel)
{
    npu_slice_cost_t k = npu_slice_cost_default(cfg, NPU_SLICE_BURST);
    npu_slice_result_t r;
    kres_t v = {0, 0, 0, 0, 0, 1};
    char msg[160];
    int rc;
    uint64_t B = (uint64_t)npu_cfg_beat(cfg);
    if (L->kind == NPU_NET_FC) {
        int M = kernel == NPU_NET_DW ? L->c : batch, K = kernel == NPU_NET_FWD ? L->c
                                                       : kernel == NPU_NET_DX ? L->f : batch;
        rc = npu_slice_gemm(cfg, &k, M, kernel == NPU_NET_DX ? L->c : L->f, K, &r, msg, sizeof msg);
    } else {
        npu_conv_t c = {batch, L->c, L->h, L->w, L->f, L->k, L->k, L->s, L->p, 1, L->depthwise};
        rc = npu_slice_conv(cfg, &k, &c, kernel == NPU_NET_FWD  ? NPU_SLICE_FWD
                                         : kernel == NPU_NET_DX ? NPU_SLICE_DX
                                                                : NPU_SLICE_DW, &r, msg, sizeof msg);
    }
    if (rc == 0) {
        v.compute = ceil_div(r.best.compute, 1u << NPU_SLICE_Q);
        v.cycles = ceil_div(r.best.cycles, 1u << NPU_SLICE_Q);
        v.in0 = r.best.t[NPU_SLICE_IN0].b.beats * B;
        v.in1 = r.best.t[NPU_SLICE_IN1].b.beats * B;
        v.out = r.best.t[NPU_SLICE_OUT].b.beats * B;
        return v;
    }
    v.modelled = 0;
    v.compute = ceil_div(kernel_macs(L, batch), 4u * (uint64_t)cfg->s * (uint64_t)cfg->s);
    return v;
}

/* The kernels one estimate has costed: identical layers (a deep MLP's) are searched once. */
typedef struct kmemo {
    int n;
    struct {
        npu_net_layer_t l;
        int kernel;
        kres_t r;
    } k[3 * NPU_NET_MAX_LAYERS];
} kmemo_t;

/* kernel_search's result, remembered in m; *modelled cleared when it found no plan. */
static kres_t kernel_res(const npu_cfg_t *cfg, const npu_net_layer_t *L, int batch, int kernel, int *modelled,
                         kmemo_t *m)
{
    int i;
    for (i = 0; i < m->n; i++)
        if (m->k[i].kernel == kernel && !memcmp(&m->k[i].l, L, sizeof *L))
            break;
    if (i == m->n) {
        m->k[i].l = *L;
        m->k[i].kernel = kernel;
        m->k[i].r = kernel_search(cfg, L, batch, kernel);
        m->n++;
    }
    *modelled &= m->k[i].r.modelled;
    return m->k[i].r;
}

/* The vector unit's busy cycles of one layer's vector kernels in a whole training step on the NPU
 * (compile/step/step_plan.h): forward bias (and ReLU, narrowing), the bias gradient with the
 * bias update, ReLU's backward mask of the layer's input, the SGD update of W. */
typedef struct vbusy {
    uint64_t fwd, grad_bias, relu_bwd, sgd;
    uint64_t norm_fwd, norm_bwd, norm_update; /* a normalised layer's kernels (norm_vbusy) */
    int ok; /* 0: not the step plan's (layer_vec, norm_vbusy) */
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

/* A normalised layer's kernels over `rows` pixels of f channels (npu_step_plan_norm: the step
 * plan's, bf16 whatever the configuration's type) into v; v->ok = 0 when one was split or the
 * plan refused them. */
static void norm_vbusy(const npu_cfg_t *cfg, int rows, int f, vbusy_t *v)
{
    int whole = 1;
    npu_cfg_t c = *cfg;
    npu_step_plan_t *p = malloc(sizeof *p);
    char why[200];
    c.dtype = NPU_DTYPE_BF16;
    if (!p || npu_step_plan_norm(&c, rows, f, 0.1f, 0.9f, p, why, sizeof why) != 0) {
        v->ok = 0;
        free(p);
        return;
    }
    for (int i = 0; i < p->nk; i++) {
        uint64_t b = vkern_busy(&c, &p->k[i].v, &whole);
        *(p->k[i].phase == NPU_SK_FWD ? &v->norm_fwd : p->k[i].phase == NPU_SK_BWD ? &v->norm_bwd
                                                                                   : &v->norm_update) += b;
    }
    v->ok &= whole;
    npu_step_plan_free(p);
    free(p);
}

/* The layers' vector busy cycles an estimate has computed (identical layers computed once). */
typedef struct vmemo {
    int n;
    struct {
        int rows, K, N, last, normed;
        vbusy_t v;
    } k[NPU_NET_MAX_LAYERS];
} vmemo_t;

/* Layer l's vector kernels: an FC layer's over the batch's rows; a convolution's as the FC kernels
 * of its output pixels (rows batch x OH x OW, K = k x k x c, N = f), and a normalised one's
 * norm_vbusy. .ok = 0 when they are not the step plan's (more than 8192 rows or columns: no
 * vector cycles then; or a kernel split). */
static vbusy_t layer_vec(const npu_cfg_t *cfg, const npu_net_shape_t *net, int l, int batch, vmemo_t *m)
{
    const npu_net_layer_t *L = &net->l[l];
    int rows = batch * L->oh * L->ow, K = L->k * L->k * L->c, last = l + 1 == net->layers, i;
    int normed = npu_net_normed(net->res[l]);
    for (i = 0; i < m->n; i++)
        if (m->k[i].rows == rows && m->k[i].K == K && m->k[i].N == L->f && m->k[i].last == last &&
            m->k[i].normed == normed)
            break;
    if (i == m->n) {
        m->k[i].rows = rows;
        m->k[i].K = K;
        m->k[i].N = L->f;
        m->k[i].last = last;
        m->k[i].normed = normed;
        int rc = layer_vbusy(cfg, rows, K, L->f, last, &m->k[i].v);
        m->k[i].v.ok = rc == 0; /* split, refused: 0 */
        if (normed)
            norm_vbusy(cfg, rows, L->f, &m->k[i].v);
        m->n++;
    }
    return m->k[i].v;
}

/* The vector unit's busy cycles of a residual add over `rows` rows of `len` elements, as the step
 * engine adds (compile/step/step_plan.h npu_step_plan_cnn_res, in the kernels it already runs):
 * the 16-bit addend (the skip; in backward the skip's gradient dZ16) widened to 32 bits, then one
 * AXPBY(1, 1) into the 32-bit sum (Z32; dH), as npu_vk_emit would run those two VECs on their own
 * (vkern_busy). The layer's ReLU after it is the forward kernel's ReLU (layer_vec), and the mask
 * of the accumulated gradient is its relu_bwd: the same VECs over the same rows, not counted twice. */
static uint64_t add_busy(const npu_cfg_t *cfg, int rows, int len, int *whole)
{
    npu_vkern_t k;
    memset(&k, 0, sizeof k);
    snprintf(k.name, sizeof k.name, "res_add");
    k.rows = rows;
    k.len = len;
    int y = npu_vk_tensor(&k, "Z32", 0, 32, NPU_TAG_Y, 0, 1, 1);
    int sk = npu_vk_tensor(&k, "S", (uint32_t)(4u * rows * len + 64u) & ~1u, 16, NPU_TAG_X, 0, 1, 0);
    int s32 = npu_vk_tensor(&k, "S32", 0, 32, NPU_TAG_X, 0, 0, 0);
    npu_vk_op(&k, NPU_VOP_WIDEN, 0, sk, -1, s32, 0, 0, 0);
    npu_vk_op(&k, NPU_VOP_AXPBY, 1, y, s32, y, 0x3F800000u, 0x3F800000u, 0);
    return vkern_busy(cfg, &k, whole);
}

/* The activation layer l's residual connection adds (id of X0 or of layer j's Y), or -1. */
static int skip_of(const npu_net_shape_t *net, int l, int (*id)[T_IDS])
{
    int r = npu_net_skip(net->res[l]);
    return !r ? -1 : r == 1 ? id[0][T_X] : id[r - 2][T_Y];
}

static int tensor(npu_est_t *e, const char *fmt, int layer, uint64_t bytes, int in_dram, int keep)
{
    int i = e->n_tensors++;
    snprintf(e->tensor_name[i], sizeof e->tensor_name[i], fmt, layer);
    e->tensor[i] = (npu_sched_tensor_t){e->tensor_name[i], bytes, in_dram, keep, 0};
    return i;
}

/* Does layer l read what layer l - 1 writes? (A SCALE-Sim topology's layers need not chain.) */
static int chained(const npu_net_shape_t *net, int l)
{
    return l > 0 && npu_net_in(&net->l[l]) == npu_net_out(&net->l[l - 1]);
}

/* A normalised layer's own tensors (ids[T_Z..T_DG]; -1 for any other layer) and its beta's names
 * for b, Vb, db: Z (its convolution's output, kept for dgamma) and dZ in the activations' 2 bytes,
 * gamma G in the weights', VG and dG in 4 (docs/training.md "Normalisation-like layers"). */
static void norm_tensors(npu_est_t *e, const npu_net_shape_t *net, int l, int batch, int *ids)
{
    const npu_net_layer_t *L = &net->l[l];
    uint64_t out = 2u * batch * npu_net_out(L);
    ids[T_Z] = ids[T_DZ] = ids[T_G] = ids[T_VG] = ids[T_DG] = -1;
    if (!npu_net_normed(net->res[l]))
        return;
    snprintf(e->tensor_name[ids[T_B]], sizeof e->tensor_name[0], "Bn%d", l);
    snprintf(e->tensor_name[ids[T_VB]], sizeof e->tensor_name[0], "VBn%d", l);
    snprintf(e->tensor_name[ids[T_DB]], sizeof e->tensor_name[0], "dBn%d", l);
    ids[T_Z] = tensor(e, "Z%d", l, out, 0, 0);
    ids[T_DZ] = tensor(e, "dZ%d", l, out, 0, 0);
    ids[T_G] = tensor(e, "G%d", l, 2u * L->f, 1, 1);
    ids[T_VG] = tensor(e, "VG%d", l, 4u * L->f, 1, 1);
    ids[T_DG] = tensor(e, "dG%d", l, 4u * L->f, 0, 0);
}

/* The tensors, their ids into id[l][T_*]: X0; per layer W, V, b, Vb, Y, dY, dW, db; its input X
 * (X0, the previous layer's Y, or, when it does not chain, an input X<l> of its own in DRAM) and
 * that input's gradient (none for layer 0; the previous layer's dY; or dX<l>, kept in DRAM for
 * the layer that made X<l>). A Y the next layer does not read is kept in DRAM and its dY comes
 * from DRAM (both belong to a layer the topology does not list). */
static void add_tensors(npu_est_t *e, const npu_net_shape_t *net, int batch, int (*id)[T_IDS])
{
    int x0 = tensor(e, "X%d", 0, 2u * batch * npu_net_in(&net->l[0]), 1, 0);
    for (int l = 0; l < net->layers; l++) {
        const npu_net_layer_t *L = &net->l[l];
        uint64_t np = npu_net_params(L), out = (uint64_t)batch * npu_net_out(L), in = 2u * batch * npu_net_in(L);
        id[l][T_W] = tensor(e, "W%d", l, 2 * np, 1, 1);
        id[l][T_V] = tensor(e, "V%d", l, 4 * np, 1, 1);
        id[l][T_B] = tensor(e, "b%d", l, 4u * L->f, 1, 1);
        id[l][T_VB] = tensor(e, "Vb%d", l, 4u * L->f, 1, 1);
        int open = l + 1 < net->layers && !chained(net, l + 1); /* Y goes to, dY comes from, a layer
                                                                  the topology does not list */
        id[l][T_Y] = tensor(e, "Y%d", l, 2 * out, 0, open);
        id[l][T_DY] = tensor(e, "dY%d", l, 2 * out, open, 0);
        id[l][T_DW] = tensor(e, "dW%d", l, 4 * np, 0, 0);
        id[l][T_DB] = tensor(e, "db%d", l, 4u * L->f, 0, 0);
        id[l][T_X] = !l ? x0 : chained(net, l) ? id[l - 1][T_Y] : tensor(e, "X%d", l, in, 1, 0);
        id[l][T_DX] = !l ? -1 : chained(net, l) ? id[l - 1][T_DY] : tensor(e, "dX%d", l, in, 0, 1);
        norm_tensors(e, net, l, batch, id[l]);
    }
}

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

/* A step run tile by tile, for when its tensors do not fit the SPM together: its cycles and the
 * DRAM bytes it moves itself, per tensor. */
typedef struct tiled {
    uint64_t cycles;
    int n;
    int t[2 * NPU_SCHED_MAX_IO];
    uint64_t in[2 * NPU_SCHED_MAX_IO], out[2 * NPU_SCHED_MAX_IO];
} tiled_t;

static void tile_add(tiled_t *z, int t, uint64_t in, uint64_t out)
{
    int i = 0;
    if (t < 0)
        return;
    while (i < z->n && z->t[i] != t)
        i++;
    if (i == z->n) {
        z->t[i] = t;
        z->in[i] = z->out[i] = 0;
        z->n++;
    }
    z->in[i] += in;
    z->out[i] += out;
}

static uint64_t over_bw(uint64_t bytes, double bw) { return (uint64_t)ceil((double)bytes / bw); }

/* Kernel r's tiles reading t0 (IN0) and t1 (IN1), writing to (OUT): their bytes into z (without a
 * plan, each tensor once); its cycles (without a plan, the larger of MACs / PEs and bytes / bw). */
static uint64_t tile_kernel(tiled_t *z, const npu_est_t *e, const kres_t *r, int t0, int t1, int to, double bw)
{
    uint64_t b0 = r->modelled ? r->in0 : e->tensor[t0].bytes, b1 = r->modelled ? r->in1 : e->tensor[t1].bytes;
    uint64_t bo = to < 0 ? 0 : r->modelled ? r->out : e->tensor[to].bytes;
    tile_add(z, t0, b0, 0);
    tile_add(z, t1, b1, 0);
    tile_add(z, to, 0, bo);
    return r->modelled ? r->cycles : max64(r->compute, over_bw(b0 + b1 + bo, bw));
}

/* Vector work of `vec` busy cycles reading tensors rd[] and writing wr[] once each (-1 ends a
 * list), streamed: bytes into z; the larger of its busy cycles and its bytes over bw. */
static uint64_t tile_vec(tiled_t *z, const npu_est_t *e, uint64_t vec, const int *rd, const int *wr, double bw)
{
    uint64_t bytes = 0;
    for (; *rd >= 0; rd++) {
        tile_add(z, *rd, e->tensor[*rd].bytes, 0);
        bytes += e->tensor[*rd].bytes;
    }
    for (; *wr >= 0; wr++) {
        tile_add(z, *wr, 0, e->tensor[*wr].bytes);
        bytes += e->tensor[*wr].bytes;
    }
    return max64(vec, over_bw(bytes, bw));
}

/* Layer l's residual add, a step of its own after fwd l (estimate.h): Y<l> += S; z: tile by
 * tile, reading Y<l> and S once and writing Y<l> once. */
static void add_step_res(const npu_cfg_t *cfg, npu_est_t *e, const npu_net_shape_t *net, int l, int batch,
                         int (*id)[T_IDS], tiled_t *z, double bw)
{
    const npu_net_layer_t *L = &net->l[l];
    int in[] = {id[l][T_Y], skip_of(net, l, id), -1}, out[] = {id[l][T_Y], -1};
    npu_est_step_t *st = add_step(e, NPU_EST_FWD, l, in, out);
    snprintf(st->name, sizeof st->name, "add%d", l);
    st->vec = add_busy(cfg, batch * L->oh * L->ow, L->f, &st->modelled);
    z->cycles = tile_vec(z, e, st->vec, in, out, bw);
}

/* Normalised layer l's forward activation, a step of its own after fwd l: Z, G, Bn -> Y (the
 * step plan's norm_relu: gamma, beta, ReLU, narrowing); z: each read and written once. */
static void norm_step(npu_est_t *e, int l, const int *id, const vbusy_t *vb, tiled_t *z, double bw)
{
    int in[] = {id[T_Z], id[T_G], id[T_B], -1}, out[] = {id[T_Y], -1};
    npu_est_step_t *st = add_step(e, NPU_EST_FWD, l, in, out);
    snprintf(st->name, sizeof st->name, "norm%d", l);
    st->vec = vb->norm_fwd;
    st->modelled &= vb->ok;
    z->cycles = tile_vec(z, e, st->vec, in, out, bw);
}

/* The forward steps: the array's cycles (the slicing stage's pick) and the vector unit's (layer_vec:
 * bias, ReLU and narrowing; a normalised layer's in its norm step); z: each one tile by tile (its
 * vector work reads and writes Y once). */
static void fwd_steps(const npu_cfg_t *cfg, npu_est_t *e, const npu_net_shape_t *net, int batch, int (*id)[T_IDS],
                      kmemo_t *m, vmemo_t *vm, vbusy_t *vb, tiled_t *z, double bw)
{
    for (int l = 0; l < net->layers; l++) {
        const npu_net_layer_t *Y = &net->l[l];
        int nm = id[l][T_Z] >= 0, y = nm ? id[l][T_Z] : id[l][T_Y];
        int in[] = {id[l][T_X], id[l][T_W], nm ? -1 : id[l][T_B], -1}, out[] = {y, -1};
        npu_est_step_t *st = add_step(e, NPU_EST_FWD, l, in, out);
        tiled_t *zt = &z[e->n_steps - 1];
        vb[l] = layer_vec(cfg, net, l, batch, vm);
        kres_t r = kernel_res(cfg, Y, batch, NPU_NET_FWD, &st->modelled, m);
        st->macs = kernel_macs(Y, batch);
        st->compute = r.compute;
        st->vec = nm ? 0 : vb[l].fwd;
        st->modelled &= vb[l].ok;
        int vr[] = {id[l][T_Y], id[l][T_B], -1}, vw[] = {id[l][T_Y], -1};
        zt->cycles = tile_kernel(zt, e, &r, id[l][T_X], id[l][T_W], y, bw) +
                     (nm ? 0 : tile_vec(zt, e, st->vec, vr, vw, bw));
        if (nm)
            norm_step(e, l, id[l], &vb[l], &z[e->n_steps], bw);
        if (npu_net_skip(net->res[l]))
            add_step_res(cfg, e, net, l, batch, id, &z[e->n_steps], bw);
    }
}

/* The residual gradients that land in bwd l's dX (= dY of layer l - 1): for each layer m whose
 * residual adds layer l - 1's output, dY<m> is added to dX before ReLU's mask. The step reads
 * dY<m> (so it stays live until here) and the vector unit adds it (add_busy); z: each addend read
 * once, dX read and written once more. */
static void skip_grads(const npu_cfg_t *cfg, npu_est_t *e, const npu_net_shape_t *net, int l, int batch,
                       int (*id)[T_IDS], npu_est_step_t *st, tiled_t *zt, double bw)
{
    const npu_net_layer_t *P = &net->l[l - 1];
    npu_sched_step_t *ss = &e->sstep[e->n_steps - 1];
    for (int m = l; m < net->layers; m++) {
        if (npu_net_skip(net->res[m]) != l + 1) /* activation l: layer l - 1's output */
            continue;
        uint64_t v = add_busy(cfg, batch * P->oh * P->ow, P->f, &st->modelled);
        int rd[] = {id[m][T_DY], id[l][T_DX], -1}, wr[] = {id[l][T_DX], -1};
        if (ss->n_in < NPU_SCHED_MAX_IO && id[m][T_DY] != id[l][T_DY])
            ss->in[ss->n_in++] = id[m][T_DY];
        st->vec += v;
        zt->cycles += tile_vec(zt, e, v, rd, wr, bw);
    }
}

/* Normalised layer l's backward activation, a step of its own before bwd l: dY, Z, G and Y (the
 * mask) -> dZ, dG, dBn (the step plan's norm_relu_grad and norm_scale_grad); z: each once. */
static void dnorm_step(npu_est_t *e, int l, const int *id, const vbusy_t *vb, tiled_t *z, double bw)
{
    int in[] = {id[T_DY], id[T_Z], id[T_G], id[T_Y], -1}, out[] = {id[T_DZ], id[T_DG], id[T_DB], -1};
    npu_est_step_t *st = add_step(e, NPU_EST_BWD, l, in, out);
    snprintf(st->name, sizeof st->name, "dnorm%d", l);
    st->vec = vb->norm_bwd;
    st->modelled &= vb->ok;
    z->cycles = tile_vec(z, e, st->vec, in, out, bw);
}

/* The backward steps: dW (and dX but for layer 0), the bias gradient and ReLU's mask of the
 * input (none when the input is a normalised layer's: its dnorm step masks); a normalised layer's
 * dnorm step first, whose dZ the kernels read instead of dY and which makes beta's gradient; z:
 * tile by tile (the vector work reads dY, and dX when there is one, and writes db and dX). */
static void bwd_steps(const npu_cfg_t *cfg, npu_est_t *e, const npu_net_shape_t *net, int batch, int (*id)[T_IDS],
                      kmemo_t *m, const vbusy_t *vb, tiled_t *z, double bw)
{
    for (int l = net->layers - 1; l >= 0; l--) {
        const npu_net_layer_t *Y = &net->l[l];
        int dx = id[l][T_DX] >= 0, fc = Y->kind == NPU_NET_FC, nm = id[l][T_Z] >= 0;
        int dy = nm ? id[l][T_DZ] : id[l][T_DY], mask = dx && id[l - 1][T_Z] < 0;
        if (nm)
            dnorm_step(e, l, id[l], &vb[l], &z[e->n_steps], bw);
        int in[] = {dy, id[l][T_X], id[l][T_W], -1};
        int out[] = {id[l][T_DW], nm ? id[l][T_DX] : id[l][T_DB], nm ? -1 : id[l][T_DX], -1};
        npu_est_step_t *st = add_step(e, NPU_EST_BWD, l, in, out); /* T_DX -1 ends it for layer 0 */
        tiled_t *zt = &z[e->n_steps - 1];
        kres_t rw = kernel_res(cfg, Y, batch, NPU_NET_DW, &st->modelled, m), rx = {0, 0, 0, 0, 0, 1};
        if (dx)
            rx = kernel_res(cfg, Y, batch, NPU_NET_DX, &st->modelled, m);
        st->macs = kernel_macs(Y, batch) * (dx ? 2 : 1);
        st->compute = rw.compute + rx.compute;
        st->vec = (nm ? 0 : vb[l].grad_bias) + (mask ? vb[l].relu_bwd : 0);
        st->modelled &= vb[l].ok;
        /* dW's streamed operand: X^T of an FC layer (GEMM A), dY of a convolution */
        zt->cycles = tile_kernel(zt, e, &rw, fc ? id[l][T_X] : dy, fc ? dy : id[l][T_X], id[l][T_DW], bw);
        if (dx)
            zt->cycles += tile_kernel(zt, e, &rx, dy, id[l][T_W], id[l][T_DX], bw);
        int vr[] = {dy, dx ? id[l][T_DX] : -1, -1}, vw[] = {nm ? -1 : id[l][T_DB], dx ? id[l][T_DX] : -1, -1};
        if (nm) /* the lists without beta's gradient: the dnorm step made it */
            vw[0] = vw[1], vw[1] = -1;
        zt->cycles += tile_vec(zt, e, st->vec, vr, vw, bw);
        if (dx)
            skip_grads(cfg, e, net, l, batch, id, st, zt, bw);
    }
}

/* Layer l's update: SGD with momentum of W and b (a normalised layer: and of gamma, its b beta). */
static void update_step(npu_est_t *e, int l, const int *id, const vbusy_t *vb, tiled_t *z, double bw)
{
    int nm = id[T_Z] >= 0;
    int in[] = {id[T_W], id[T_V], id[T_DW], id[T_B], id[T_VB], id[T_DB],
                nm ? id[T_G] : -1, id[T_VG], id[T_DG], -1};
    int out[] = {id[T_W], id[T_V], id[T_B], id[T_VB], nm ? id[T_G] : -1, id[T_VG], -1};
    npu_est_step_t *st = add_step(e, NPU_EST_UPDATE, l, in, out);
    st->vec = vb->sgd + (nm ? vb->norm_update : 0);
    st->modelled &= vb->ok;
    z->cycles = tile_vec(z, e, st->vec, in, out, bw);
}

/* Forward, loss, backward and update steps with their cycles (the array's, kernel_res, and the
 * vector unit's) and, in z, each step's tile-by-tile form. */
static void add_steps(const npu_cfg_t *cfg, npu_est_t *e, const npu_net_shape_t *net, int batch,
                      int (*id)[T_IDS], tiled_t *z, double bw)
{
    kmemo_t m;
    vmemo_t vm;
    vbusy_t vb[NPU_NET_MAX_LAYERS];
    int L = net->layers;
    m.n = vm.n = 0;
    fwd_steps(cfg, e, net, batch, id, &m, &vm, vb, z, bw);
    {
        int in[] = {id[L - 1][T_Y], -1}, out[] = {id[L - 1][T_DY], -1};
        add_step(e, NPU_EST_LOSS, L - 1, in, out);
        z[e->n_steps - 1].cycles = tile_vec(&z[e->n_steps - 1], e, 0, in, out, bw);
    }
    bwd_steps(cfg, e, net, batch, id, &m, vb, z, bw);
    for (int l = 0; l < L; l++)
        update_step(e, l, id[l], &vb[l], &z[e->n_steps], bw);
}

/* The bytes of step i's tensors, each once: those it keeps in the SPM and those it reads or writes
 * in DRAM itself (a tiled step's). */
static uint64_t step_room(const npu_est_t *e, int i)
{
    const npu_sched_step_t *ss = &e->sstep[i];
    const int *list[4] = {ss->in, ss->out, ss->dram_in, ss->dram_out};
    int len[4] = {ss->n_in, ss->n_out, ss->n_dram_in, ss->n_dram_out}, seen[4 * NPU_SCHED_MAX_IO], n = 0;
    uint64_t room = 0;
    for (int k = 0; k < 4; k++)
        for (int j = 0; j < len[k]; j++) {
            int t = list[k][j], dup = 0;
            for (int q = 0; q < n; q++)
                dup |= seen[q] == t;
            if (!dup) {
                seen[n++] = t;
                room += e->tensor[t].bytes;
            }
        }
    return room;
}

/* A step whose tensors exceed the SPM runs tile by tile: its accesses become the scheduler's
 * DRAM-side ones (a dirty resident copy is written back first; an output's resident copy goes
 * stale) and its cycles z's, which include its tiles' transfers. */
static void tile_steps(npu_est_t *e, const tiled_t *z, uint64_t spm)
{
    for (int i = 0; i < e->n_steps; i++) {
        npu_sched_step_t *ss = &e->sstep[i];
        if (step_room(e, i) <= spm)
            continue;
        e->step[i].tiled = 1;
        ss->n_dram_in = ss->n_in;
        ss->n_dram_out = ss->n_out;
        memcpy(ss->dram_in, ss->in, sizeof ss->in);
        memcpy(ss->dram_out, ss->out, sizeof ss->out);
        ss->n_in = ss->n_out = 0;
        ss->cycles = z[i].cycles;
    }
}

/* The tiled steps' own traffic added to the scheduler's per tensor, per step and in all. */
static void tile_bytes(npu_est_t *e, const tiled_t *z)
{
    for (int i = 0; i < e->n_steps; i++)
        for (int j = 0; e->step[i].tiled && j < z[i].n; j++) {
            e->sched.tensor[z[i].t[j]].in_bytes += z[i].in[j];
            e->sched.tensor[z[i].t[j]].out_bytes += z[i].out[j];
            e->sched.step[i].in_bytes += z[i].in[j];
            e->sched.step[i].out_bytes += z[i].out[j];
            e->sched.in_bytes += z[i].in[j];
            e->sched.out_bytes += z[i].out[j];
        }
}

/* Bytes, reuse frequency and class of each step; the iteration's metrics. */
static void metrics(const npu_cfg_t *cfg, npu_est_t *e, double bw, int batch)
{
    double peak = 2.0 * 4 * cfg->s * cfg->s; /* ops per cycle: a MAC is two */
    e->ridge = peak / bw;
    for (int i = 0; i < e->n_steps; i++) {
        npu_est_step_t *st = &e->step[i];
        st->bytes = step_room(e, i); /* an updated input counts once */
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
    int(*id)[T_IDS] = malloc((size_t)net->layers * sizeof *id);
    tiled_t *z = calloc((size_t)(6 * net->layers + 1), sizeof *z);
    uint64_t spm = o->spm_bytes ? o->spm_bytes : (uint64_t)npu_cfg_spm_words(cfg) * (uint64_t)npu_cfg_word(cfg);
    if (!id || !z) {
        free(id);
        free(z);
        snprintf(why, n, "out of memory");
        return -1;
    }
    add_tensors(e, net, o->batch, id);
    add_steps(cfg, e, net, o->batch, id, z, bw);
    for (int i = 0; i < e->n_steps; i++)
        e->sstep[i].cycles = e->step[i].compute + e->step[i].vec;
    tile_steps(e, z, spm);
    e->problem = (npu_sched_problem_t){
        e->n_tensors, e->n_steps, e->tensor, e->sstep, spm, bw,
        (uint64_t)(o->dram_latency >= 0 ? o->dram_latency : cfg->dram_latency), o->prefetch, o->lookahead};
    if (npu_sched_run(&e->problem, &e->sched) || !e->sched.ok) {
        snprintf(why, n, "%s", e->sched.why);
        npu_sched_free(&e->sched);
        free(id);
        free(z);
        return -1;
    }
    tile_bytes(e, z);
    free(id);
    free(z);
    metrics(cfg, e, bw, o->batch);
    return 0;
}

void npu_est_free(npu_est_t *e)
{
    npu_sched_free(&e->sched);
}
