/* test_estimate.c - the analytical estimator (model/estimate.h): steps and MACs of an MLP
 * iteration, the roofline invariant, traffic with a large and a small SPM, refusals, the vector
 * unit's cycles against the step plan's vector kernels. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/step/step_plan.h"
#include "hw/isa.h"
#include "model/estimate.h"
#include "prog/prog_expect.h"
#include "model/sweep.h"
#include "model/topology.h"
#include "compile/step/step_res.h"
#include "model/est_step.h"
#include "run/fit.h"
#include "test_cfgs.h"

static npu_est_t e; /* large */
static int in_shape[3] = {8, 8, 1}; /* the networks' input: the digits unless a test sets it */

static void estimate(const char *spec, int batch, uint64_t spm, int expect_ok)
{
    npu_cfg_t c = test_cfg(8);
    npu_net_shape_t net;
    npu_est_opts_t o = {batch, spm, 0, -1, 1, 1};
    char why[256];
    cr_assert_eq(npu_net_parse(spec, in_shape[0], in_shape[1], in_shape[2], &net, why, sizeof why), 0, "%s", why);
    int rc = npu_estimate(&c, &net, &o, &e, why, sizeof why);
    cr_assert_eq(rc, expect_ok ? 0 : -1, "%s: %s", spec, why);
}

Test(estimate, mlp_steps_macs_and_roofline)
{
    npu_cfg_t c = test_cfg(8);
    estimate("mlp:64,128,10", 32, 0, 1);
    /* fwd0 fwd1 loss bwd1 bwd0 update0 update1 */
    cr_assert_eq(e.n_steps, 7);
    cr_assert_str_eq(e.step[3].name, "bwd1");
    cr_assert_eq(e.step[0].macs, 32u * 64 * 128);
    cr_assert_eq(e.step[3].macs, 2u * 32 * 128 * 10, "bwd1: dX and dW");
    cr_assert_eq(e.step[4].macs, 32u * 64 * 128, "bwd0: dW only");
    cr_assert_eq(e.macs, 32u * 64 * 128 * 2 + 32u * 128 * 10 * 3, "layer 0 has no dX");
    uint64_t pes = 4u * c.s * c.s;
    uint64_t bytes = e.sched.in_bytes + e.sched.out_bytes;
    cr_assert_geq(e.cycles, e.macs / pes, "below the compute roof");
    cr_assert_geq(e.cycles, bytes / (uint64_t)c.dram_bw, "below the bandwidth roof");
    for (int i = 0; i < e.n_steps; i++)
        cr_assert_geq(e.step[i].compute, e.step[i].macs / pes, "%s", e.step[i].name);
    /* 128 KiB holds it all: every parameter in once and out once, no activation moves */
    for (int t = 0; t < e.n_tensors; t++) {
        const char *n = e.tensor[t].name;
        if (n[0] == 'Y' || n[0] == 'd')
            cr_assert_eq(e.sched.tensor[t].in_bytes + e.sched.tensor[t].out_bytes, 0u, "%s moved", n);
        else if (strcmp(n, "X0"))
            cr_assert_eq(e.sched.tensor[t].in_bytes, e.tensor[t].bytes, "%s", n);
    }
    npu_est_free(&e);
}

static uint64_t tensor_in(const char *name)
{
    for (int t = 0; t < e.n_tensors; t++)
        if (!strcmp(e.tensor[t].name, name))
            return e.sched.tensor[t].in_bytes;
    cr_assert_fail("no tensor %s", name);
    return 0;
}

/* Forward-backward reuse: with 128 KiB every activation survives to its backward step; with
 * 96 KiB the one farthest from the loss (the batch X0, read again by bwd0) goes and comes back,
 * the layers nearest the loss stay. */
Test(estimate, a_smaller_spm_refetches_the_activation_farthest_from_the_loss)
{
    estimate("mlp:64,64,64,10", 128, 128 * 1024, 1);
    uint64_t big_in = e.sched.in_bytes;
    cr_assert_eq(tensor_in("X0"), 128u * 64 * 2, "X0 loaded once");
    npu_est_free(&e);
    estimate("mlp:64,64,64,10", 128, 96 * 1024, 1);
    cr_assert_eq(tensor_in("X0"), 2u * 128 * 64 * 2, "X0 loaded twice");
    cr_assert_eq(tensor_in("Y0") + tensor_in("Y1"), 0u, "an activation nearer the loss came back");
    cr_assert_gt(e.sched.in_bytes, big_in);
    npu_est_free(&e);
}

Test(estimate, cnn_and_refusals)
{
    estimate("cnn:c16,c32s2,fc10", 8, 0, 1);
    cr_assert_eq(e.n_steps, 3 + 1 + 3 + 3);
    cr_assert_eq(e.step[0].macs, 8u * 8 * 8 * 16 * 9 * 1);
    cr_assert(e.step[0].modelled, "the slicing stage had no plan for conv fwd");
    npu_est_free(&e);
}

/* Steps whose tensors exceed a 4 KiB SPM run tile by tile: exactly those are flagged; each moves at
 * least its tensors' bytes (a tiled step's own traffic counted: the scheduler sees none of it);
 * more traffic in all than with room for everything; never below the roofline. */
Test(estimate, tiled_steps_past_the_spm)
{
    npu_cfg_t c = test_cfg(8);
    uint64_t big;
    estimate("cnn:c16,c32s2,fc10", 32, 1u << 24, 1);
    for (int i = 0; i < e.n_steps; i++)
        cr_assert(!e.step[i].tiled, "%s tiled in 16 MiB", e.step[i].name);
    big = e.sched.in_bytes + e.sched.out_bytes;
    npu_est_free(&e);
    estimate("cnn:c16,c32s2,fc10", 32, 4096, 1);
    int tiled = 0;
    for (int i = 0; i < e.n_steps; i++) {
        const npu_sched_step_t *ss = &e.problem.s[i];
        tiled += e.step[i].tiled;
        cr_assert_eq(e.step[i].tiled, e.step[i].bytes > 4096, "%s: %llu bytes of tensors, tiled %d", e.step[i].name,
                     (unsigned long long)e.step[i].bytes, e.step[i].tiled);
        for (int j = 0; e.step[i].tiled && j < ss->n_dram_in; j++)
            cr_assert_geq(e.sched.tensor[ss->dram_in[j]].in_bytes, e.tensor[ss->dram_in[j]].bytes, "%s reads %s",
                          e.step[i].name, e.tensor[ss->dram_in[j]].name);
        cr_assert_geq(e.sched.step[i].end - e.sched.step[i].start, e.step[i].macs / (4u * 8 * 8), "%s", e.step[i].name);
    }
    cr_assert_gt(tiled, 0);
    cr_assert_gt(e.sched.in_bytes + e.sched.out_bytes, big);
    cr_assert_geq((double)e.cycles, (double)(e.sched.in_bytes + e.sched.out_bytes) / c.dram_bw);
    npu_est_free(&e);
}

/* A SCALE-Sim topology as a network: conv rows with their own shapes, a GEMM row a 1 x 1
 * convolution over M pixels; a layer that does not read the previous one's output gets an input
 * X<l> of its own and writes dX<l>, and the previous Y stays in DRAM. */
Test(estimate, topology_networks)
{
    static npu_topology_t t;
    npu_net_shape_t net;
    npu_cfg_t c = test_cfg(8);
    npu_est_opts_t o = {2, 0, 0, -1, 1, 1};
    char why[256];
    const char *csv = "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,\n"
                      "a, 10, 10, 3, 3, 4, 8, 1,\nb, 8, 8, 1, 1, 8, 8, 1,\nc, 9, 9, 3, 3, 8, 8, 2,\n";
    cr_assert_eq(npu_topo_parse(csv, 1, &t, why, sizeof why), 0, "%s", why);
    cr_assert_eq(npu_topo_net(&t, &net, why, sizeof why), 0, "%s", why);
    cr_assert_eq(net.layers, 3);
    cr_assert_eq(net.l[2].oh, 4);
    cr_assert_eq(npu_estimate(&c, &net, &o, &e, why, sizeof why), 0, "%s", why);
    int x2 = -1, dx2 = -1, y1 = -1, dy1 = -1;
    for (int i = 0; i < e.n_tensors; i++) {
        x2 = strcmp(e.tensor[i].name, "X2") ? x2 : i;
        dx2 = strcmp(e.tensor[i].name, "dX2") ? dx2 : i;
        y1 = strcmp(e.tensor[i].name, "Y1") ? y1 : i;
        dy1 = strcmp(e.tensor[i].name, "dY1") ? dy1 : i;
    }
    cr_assert(x2 >= 0 && dx2 >= 0 && y1 >= 0 && dy1 >= 0, "layer c does not read b's 8x8x8 output");
    cr_assert(e.tensor[x2].in_dram && e.tensor[dx2].keep_out && e.tensor[y1].keep_out && e.tensor[dy1].in_dram);
    cr_assert_eq(e.tensor[x2].bytes, 2u * 2 * 9 * 9 * 8);
    for (int i = 0; i < e.n_tensors; i++)
        cr_assert(strcmp(e.tensor[i].name, "X1"), "b reads a's output: no X1 of its own");
    npu_est_free(&e);
    cr_assert_eq(npu_topo_parse("Layer, M, N, K,\ng, 100, 7, 33,\n", 1, &t, why, sizeof why), 0, "%s", why);
    cr_assert_eq(npu_topo_net(&t, &net, why, sizeof why), 0, "%s", why);
    cr_assert(net.l[0].h == 100 && net.l[0].w == 1 && net.l[0].c == 33 && net.l[0].f == 7 && net.l[0].k == 1);
    cr_assert_eq(npu_topo_parse("Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, "
                                "Num Filter, Strides,\nr, 10, 10, 1, 7, 4, 8, 1,\n", 1, &t, why, sizeof why), 0, "%s", why);
    cr_assert_eq(npu_topo_net(&t, &net, why, sizeof why), -1);
    cr_assert(strstr(why, "1x7"), "%s", why);
}

Test(estimate, sweep_space_and_points)
{
    npu_cfg_t c = test_cfg(8);
    npu_sweep_space_t sp;
    npu_sweep_point_t p, q;
    npu_net_shape_t net;
    char why[256];
    cr_assert_eq(npu_net_parse("mlp:64,128,10", 8, 8, 1, &net, why, sizeof why), 0);
    cr_assert_eq(npu_sweep_parse("s=4,8;spm=128;bw=16,32;batch=32", &c, 8, &sp, why, sizeof why), 0,
                 "%s", why);
    cr_assert_eq(npu_sweep_count(&sp), 4);
    cr_assert_eq(npu_sweep_point(&c, &net, &sp, 0, &p), 0); /* s=4, bw=16 */
    cr_assert_eq(npu_sweep_point(&c, &net, &sp, 3, &q), 0); /* s=8, bw=32 */
    cr_assert(p.ok && q.ok);
    cr_assert_eq(p.s, 4);
    cr_assert_eq(q.s, 8);
    cr_assert_eq(p.macs, q.macs);
    cr_assert_gt(p.cycles, q.cycles, "a quarter of the PEs and half the bandwidth is not slower");
    cr_assert_eq(npu_sweep_parse(NULL, &c, 8, &sp, why, sizeof why), 0);
    cr_assert_eq(npu_sweep_count(&sp), 1, "no space: the build's point");
    cr_assert_eq(npu_sweep_parse("s=3", &c, 8, &sp, why, sizeof why), -1);
    cr_assert_eq(npu_sweep_parse("q=3", &c, 8, &sp, why, sizeof why), -1);
    cr_assert_eq(npu_sweep_parse("bw=16,-1", &c, 8, &sp, why, sizeof why), -1);
}

/* The validation sample: k of the candidates, distinct, in sweep order, deterministic; shards
 * partition it; k >= n takes all; a stride-free draw reaches both values of the innermost key. */
Test(estimate, sweep_sample_and_shards)
{
    int cand[40], all[40], part[40], seen[40] = {0}, n = 0, inner[2] = {0, 0};
    for (int i = 0; i < 40; i++)
        cand[i] = 3 * i + 1;
    int k = npu_sweep_sample(cand, 40, 10, 0, 1, all);
    cr_assert_eq(k, 10);
    for (int j = 0; j < k; j++) {
        cr_assert_eq((all[j] - 1) % 3, 0, "%d is not a candidate", all[j]);
        cr_assert(j == 0 || all[j] > all[j - 1], "not in sweep order or repeated");
        inner[(all[j] - 1) / 3 % 2]++;
    }
    cr_assert(inner[0] && inner[1], "every candidate drawn has the same innermost value");
    for (int sh = 0; sh < 3; sh++) {
        int m = npu_sweep_sample(cand, 40, 10, sh, 3, part);
        for (int j = 0; j < m; j++) {
            int at = -1;
            for (int i = 0; i < k; i++)
                at = all[i] == part[j] ? i : at;
            cr_assert_geq(at, 0, "shard %d drew %d, which the whole sample does not hold", sh, part[j]);
            cr_assert_eq(seen[at]++, 0, "%d in two shards", part[j]);
            n++;
        }
    }
    cr_assert_eq(n, k, "the shards' union is not the sample");
    cr_assert_eq(npu_sweep_sample(cand, 5, 10, 0, 1, part), 5);
    cr_assert_eq(part[4], cand[4]);
    int again[40];
    cr_assert_eq(npu_sweep_sample(cand, 40, 10, 0, 1, again), 10);
    cr_assert_arr_eq(again, all, 10 * sizeof(int), "not deterministic");
}

/* --plan step points: the step engine's estimate at each point (the residency's share as the
 * space says), a share larger than the resident banks refused with its reason. */
Test(estimate, sweep_step_points)
{
    npu_cfg_t c = test_cfg(8);
    npu_sweep_space_t sp;
    npu_sweep_point_t p;
    static npu_est_kplan_t e;
    const int d[3] = {64, 128, 10};
    npu_sweep_step_t o = {d, 2, 0, 1, NPU_RES_PREFETCH | NPU_RES_LOOKAHEAD, NULL, 0, NULL, 0, NULL};
    char why[256];
    cr_assert_eq(npu_sweep_parse("spm=4,40;bw=16;batch=16", &c, 8, &sp, why, sizeof why), 0, "%s", why);
    cr_assert(sp.given[1] && sp.given[2] && !sp.given[0]);
    cr_assert_eq(npu_sweep_step_point(&c, &o, &sp, 0, &p, why, sizeof why), 0);
    cr_assert(p.ok, "%s", why);
    npu_cfg_t pc = npu_sweep_point_cfg(&c, &sp, 0);
    cr_assert_eq(pc.dram_bw, 16);
    cr_assert_eq(npu_estimate_step_res_ex(&pc, d, 2, 16, 0, 1, 4096, o.overlap, &e, why, sizeof why), 0, "%s", why);
    cr_assert_eq(p.cycles, e.cycles);
    cr_assert_eq(p.in_bytes + p.out_bytes, e.rd_bytes + e.wr_bytes + e.xfer_bytes);
    cr_assert_eq(npu_sweep_step_point(&c, &o, &sp, 1, &p, why, sizeof why), 0);
    cr_assert(!p.ok, "40 KiB of one 32 KiB bank");
    cr_assert(strstr(why, "resident bank"), "%s", why);
}

/* The VECs of a vector kernel as npu_vk_emit emits it, each timed by npu_vec_busy (the model the
 * RTL's vec_busy counter is checked against), summed. */
static uint64_t vecs_busy(const npu_cfg_t *cfg, const npu_vkern_t *k)
{
    npu_prog_t p;
    char why[200];
    uint64_t busy = 0;
    unsigned len = 0;
    npu_prog_init(&p);
    cr_assert_eq(npu_vk_emit(cfg, k, &p, why, sizeof why), 0, "%s", why);
    for (size_t i = 0; i < p.n; i++) {
        npu_fields_t f;
        if (npu_decode(&p.insn[i], &f) != 0)
            continue;
        if (f.op == NPU_OP_VSET)
            len = f.len;
        else if (f.op == NPU_OP_VEC)
            busy += npu_vec_busy(&f, len, (unsigned)cfg->s);
    }
    npu_prog_free(&p);
    return busy;
}

/* Each step's vector cycles are those of the vector kernels `npu fit --engine step` runs for the
 * whole MLP (compile/step/step_plan.h): the plan's layer l + 1 kernels go to the estimator's
 * layer l, fwd its bias(_relu), bwd its grad_bias (with the bias update) and relu_bwd, update its
 * sgd. Batches 32 and 48 (chunks of 8 and 12 rows), two and three layers. */
Test(estimate, vector_cycles_are_the_step_plans_kernels)
{
    static const char *const specs[] = {"mlp:64,128,10", "mlp:64,32,48,10"};
    static const int dims[2][4] = {{64, 128, 10}, {64, 32, 48, 10}}, layers[2] = {2, 3};
    npu_cfg_t c = test_cfg(8);
    npu_step_plan_t *p = malloc(sizeof *p);
    char why[256];
    c.dtype = NPU_DTYPE_BF16;
    cr_assert(p);
    for (int n = 0; n < 2; n++)
        for (int batch = 32; batch <= 48; batch += 16) {
            npu_net_shape_t net;
            npu_est_opts_t o = {batch, 0, 0, -1, 1, 1};
            uint64_t want[4 * NPU_NET_MAX_LAYERS + 1] = {0};
            cr_assert_eq(npu_net_parse(specs[n], 8, 8, 1, &net, why, sizeof why), 0);
            cr_assert_eq(npu_estimate(&c, &net, &o, &e, why, sizeof why), 0, "%s", why);
            cr_assert_eq(npu_step_plan_mlp(&c, dims[n], layers[n], batch, 0.05f, 0.9f, 1e-4f, 0, 0, p,
                                           why, sizeof why), 0, "%s", why);
            for (int i = 0; i < p->nk; i++) {
                const npu_step_kernel_t *k = &p->k[i];
                char name[24];
                if (k->kind != NPU_SK_VEC)
                    continue;
                snprintf(name, sizeof name, "%s%d", k->phase == NPU_SK_FWD ? "fwd" : k->phase == NPU_SK_BWD ? "bwd" : "update",
                         k->layer - 1);
                int s = 0;
                while (s < e.n_steps && strcmp(e.step[s].name, name))
                    s++;
                cr_assert_lt(s, e.n_steps, "no step %s", name);
                want[s] += vecs_busy(&c, &k->v);
            }
            for (int s = 0; s < e.n_steps; s++) {
                cr_assert_eq(e.step[s].vec, want[s], "%s batch %d %s: %llu vector cycles, the plan's kernels %llu",
                             specs[n], batch, e.step[s].name, (unsigned long long)e.step[s].vec,
                             (unsigned long long)want[s]);
                cr_assert(e.step[s].phase == NPU_EST_LOSS || want[s] > 0, "%s", e.step[s].name);
            }
            npu_step_plan_free(p);
            npu_est_free(&e);
        }
    free(p);
}

/* ---- residual blocks (brief 003 section 6 check 8) ---- */

static int find(const char *name, int steps)
{
    int n = steps ? e.n_steps : e.n_tensors;
    for (int i = 0; i < n; i++)
        if (!strcmp(steps ? e.step[i].name : e.tensor[i].name, name))
            return i;
    cr_assert_fail("no %s %s", steps ? "step" : "tensor", name);
    return -1;
}

/* Did the skip tensor `skip` leave the SPM before step `add` read it: the scheduler loads it
 * for the add, or the add runs tile by tile (reading it from DRAM)? With `fault`, the planted
 * bug: the add step does not read the skip (the scheduler is run again without it). */
static int skip_refetched(const char *spec, int batch, uint64_t spm, const char *skip, const char *add, int fault)
{
    estimate(spec, batch, spm, 1);
    int a = find(add, 1), s = find(skip, 0), hit = e.step[a].tiled;
    if (fault) {
        npu_sched_step_t *ss = &e.sstep[a];
        for (int j = 0; j < ss->n_in; j++)
            if (ss->in[j] == s)
                ss->in[j--] = ss->in[--ss->n_in];
        npu_sched_free(&e.sched);
        cr_assert_eq(npu_sched_run(&e.problem, &e.sched), 0);
        hit = 0; /* the add no longer reads it */
    }
    for (int i = 0; i < e.sched.n_ev; i++)
        hit |= e.sched.ev[i].kind == NPU_SCHED_LOAD && e.sched.ev[i].tensor == s && e.sched.ev[i].step == a;
    npu_est_free(&e);
    return hit;
}

/* The smallest SPM (bytes) in (lo, hi] (0: none) at which the skip stays resident until the add, lo the
 * room of the step before the add (`layer`): from there up the block's steps run resident, the
 * thesis's regime. (Below it that step runs tile by tile and, as a tiled step takes none of the
 * scheduler's room, section 4.1 of docs/estimator.md, the skip survives it again.) */
static uint64_t block_step(const char *spec, int batch, const char *skip, const char *layer, const char *add,
                           int fault)
{
    estimate(spec, batch, 1u << 20, 1);
    uint64_t lo = e.step[find(layer, 1)].bytes, hi = 1u << 20;
    npu_est_free(&e);
    if (!skip_refetched(spec, batch, lo, skip, add, fault) || skip_refetched(spec, batch, hi, skip, add, fault))
        return 0; /* no step between lo and 1 MiB */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        *(skip_refetched(spec, batch, mid, skip, add, fault) ? &lo : &hi) = mid;
    }
    return hi;
}

#define BLOCK "cnn:c8,c8,c8+1" /* X1 = Y0 -> layer 1 (W1) -> X2 = Y1 -> layer 2 (W2) -> X3 = Y2; X3 += X1 */

/* Check 8: the skip X1 stays resident until the Add exactly when the SPM holds X1 beside the second
 * layer's step, cap(X1) + cap(X2) + cap(W2) + cap(X3), found by bisection; ours also holds that
 * step's bias b2 (the thesis has none), so the step is the formula + cap(b2), within one SPM word
 * (the allocation granule) of the thesis's. Below it X1 is loaded again for the add: In grows by
 * cap(X1). The planted fault (the add does not read the skip) moves the step. */
Test(estimate, block_reuse_step_at_the_capacity_formula)
{
    npu_cfg_t c = test_cfg(8);
    estimate(BLOCK, 4, 0, 1);
    uint64_t x1 = e.tensor[find("Y0", 0)].bytes, x2 = e.tensor[find("Y1", 0)].bytes;
    uint64_t w2 = e.tensor[find("W2", 0)].bytes, x3 = e.tensor[find("Y2", 0)].bytes, b2 = e.tensor[find("b2", 0)].bytes;
    int a = find("add2", 1);
    cr_assert_eq(a, find("fwd2", 1) + 1, "the add follows the layer's forward step");
    cr_assert_eq(e.sstep[a].n_in, 2);
    cr_assert_eq(e.sstep[a].in[1], find("Y0", 0), "the add reads the skip");
    cr_assert_gt(e.step[a].vec, 0u, "the vector unit's add");
    npu_est_free(&e);
    uint64_t formula = x1 + x2 + w2 + x3, step = block_step(BLOCK, 4, "Y0", "fwd2", "add2", 0);
    cr_assert_eq(step, formula + b2, "block reuse from %llu bytes; the formula %llu + b2 %llu",
                 (unsigned long long)step, (unsigned long long)formula, (unsigned long long)b2);
    cr_assert_leq(step - formula, (uint64_t)npu_cfg_word(&c), "more than one granule from the formula");
    estimate(BLOCK, 4, step, 1);
    uint64_t in_at = e.sched.in_bytes;
    npu_est_free(&e);
    estimate(BLOCK, 4, step - 1, 1);
    cr_assert_eq(e.sched.in_bytes - in_at, x1, "one byte less: In grows by cap(X1) (%llu)",
                 (unsigned long long)(e.sched.in_bytes - in_at));
    npu_est_free(&e);
    uint64_t planted = block_step(BLOCK, 4, "Y0", "fwd2", "add2", 1);
    cr_assert_neq(planted, formula + b2, "the planted fault (no skip read) keeps the step");
    /* make plots' residual CNN (docs/estimator.md section 8): 16x16x16 activations at batch 16 */
    in_shape[0] = in_shape[1] = 16;
    in_shape[2] = 3;
    step = block_step("cnn:c16,c16,c16+1,fc10", 16, "Y0", "fwd2", "add2", 0);
    in_shape[0] = in_shape[1] = 8;
    in_shape[2] = 1;
    cr_assert_eq(step, 3u * 2 * 16 * 16 * 16 * 16 + 2u * 9 * 16 * 16 + 4u * 16, "the plot's step: %llu",
                 (unsigned long long)step);
}

/* The gradient fans out: dY2 is also X1's gradient, added to dY0 in bwd1 (which makes dY0) before
 * ReLU's mask. bwd1 reads dY2 and its vector work grows by the add; with room for everything no
 * gradient moves; when bwd1 runs tile by tile it reads dY2 once more and reads and writes dY0 once
 * more than without the connection. */
Test(estimate, block_gradient_fans_out)
{
    uint64_t vec_plain, dy2_plain, dy0_in_plain, dy0_out_plain;
    estimate("cnn:c8,c8,c8", 4, 4096, 1);
    int b1 = find("bwd1", 1);
    vec_plain = e.step[b1].vec;
    cr_assert(e.step[b1].tiled, "bwd1 fits 4 KiB");
    dy2_plain = e.sched.tensor[find("dY2", 0)].in_bytes;
    dy0_in_plain = e.sched.tensor[find("dY0", 0)].in_bytes;
    dy0_out_plain = e.sched.tensor[find("dY0", 0)].out_bytes;
    uint64_t cap = e.tensor[find("dY2", 0)].bytes;
    npu_est_free(&e);
    estimate(BLOCK, 4, 4096, 1);
    b1 = find("bwd1", 1);
    cr_assert_gt(e.step[b1].vec, vec_plain, "no vector add in bwd1");
    cr_assert_eq(e.sched.tensor[find("dY2", 0)].in_bytes - dy2_plain, cap, "dY2 read once more");
    cr_assert_eq(e.sched.tensor[find("dY0", 0)].in_bytes - dy0_in_plain, cap, "dY0 read once more");
    cr_assert_eq(e.sched.tensor[find("dY0", 0)].out_bytes - dy0_out_plain, cap, "dY0 written once more");
    npu_est_free(&e);
    estimate(BLOCK, 4, 1u << 20, 1);
    b1 = find("bwd1", 1);
    int dy2 = find("dY2", 0), reads = 0;
    for (int j = 0; j < e.sstep[b1].n_in; j++)
        reads += e.sstep[b1].in[j] == dy2;
    cr_assert_eq(reads, 1, "bwd1 does not read dY2");
    for (int t = 0; t < e.n_tensors; t++)
        if (e.tensor[t].name[0] == 'd' && e.tensor[t].name[1] == 'Y')
            cr_assert_eq(e.sched.tensor[t].in_bytes + e.sched.tensor[t].out_bytes, 0u, "%s moved", e.tensor[t].name);
    npu_est_free(&e);
    estimate("cnn:c8,c8,c1+0", 4, 1u << 20, 1); /* from the network's input: no gradient to fan out */
    cr_assert_eq(e.sstep[find("bwd1", 1)].n_in, 3);
    npu_est_free(&e);
}

Test(estimate, residual_specs)
{
    npu_net_shape_t s;
    char why[256], d[96];
    cr_assert_eq(npu_net_parse("cnn:c8,c8,c8+1,fc10", 8, 8, 1, &s, why, sizeof why), 0, "%s", why);
    cr_assert_eq(s.res[2], 2, "layer 3 adds activation 1 (layer 1's output)");
    cr_assert_eq(s.res[0] + s.res[1] + s.res[3], 0);
    cr_assert_eq(npu_net_residual(&s), 2);
    npu_net_describe(&s, d, sizeof d);
    cr_assert_str_eq(d, "c8k3s1-c8k3s1-c8k3s1+1-fc10");
    cr_assert_eq(npu_net_parse("cnn:c8,c16+1", 8, 8, 1, &s, why, sizeof why), -1);
    cr_assert(strstr(why, "shapes must match") != NULL, "%s", why);
    cr_assert_eq(npu_net_parse("cnn:c8,c8s2+1", 8, 8, 1, &s, why, sizeof why), -1, "4x4 against 8x8");
    cr_assert_eq(npu_net_parse("cnn:c8,c8+3", 8, 8, 1, &s, why, sizeof why), -1, "a later layer");
    cr_assert(strstr(why, "not an earlier layer") != NULL, "%s", why);
    cr_assert_eq(npu_net_parse("cnn:c8,c8+", 8, 8, 1, &s, why, sizeof why), -1);
    cr_assert_eq(npu_net_parse("cnn:c1+0", 8, 8, 1, &s, why, sizeof why), 0, "the input, 8x8x1: %s", why);
    cr_assert_eq(npu_net_parse("cnn:c8,c8", 8, 8, 1, &s, why, sizeof why), 0);
    cr_assert_eq(npu_net_residual(&s), -1);
    /* `npu fit` takes a residual network (its reference trainer adds the skip, the step engine
     * plans it: tests/unit/test_step_residual.c) as it takes the plain one */
    static npu_fit_opts_t o;
    npu_dataset_t ds = {100, 64, 10, 8, 8, 1, NULL, NULL};
    o.test_frac = 0.2;
    o.batch = 8;
    o.epochs = 1;
    cr_assert_eq(npu_net_parse("cnn:c8,c8,fc10", 8, 8, 1, &o.shape, why, sizeof why), 0);
    cr_assert_eq(npu_fit_check(&ds, &o, why, sizeof why), 0, "%s", why);
    cr_assert_eq(npu_net_parse("cnn:c8,c8+1,fc10", 8, 8, 1, &o.shape, why, sizeof why), 0);
    cr_assert_eq(npu_fit_check(&ds, &o, why, sizeof why), 0, "%s", why);
}

/* ---- normalised layers (docs/training.md "Normalisation-like layers") ---- */

/* cnn:c4n,c8s2n,fc10 in the default plan: each normalised layer's forward activation is a step
 * of its own (norm<l>: Z, G, Bn -> Y) and so is its backward (dnorm<l>: dY -> dZ, dG, dBn), with
 * the vector cycles of the step plan's kernels for that layer (norm_relu; norm_relu_grad +
 * norm_scale_grad; the update adds norm_update); the convolution writes Z, its backward reads dZ;
 * the plain network has none of it and takes fewer cycles. */
static uint64_t plan_busy(const npu_cfg_t *c, const npu_step_plan_t *p, const char *name)
{
    uint64_t b = 0;
    char why[200];
    for (int i = 0; i < p->nk; i++)
        if (!strcmp(p->k[i].name, name)) {
            cr_assert_eq(npu_vk_vec_busy(c, &p->k[i].v, &b, why, sizeof why), 0, "%s", why);
            return b;
        }
    cr_assert_fail("no kernel %s", name);
    return 0;
}

static int step_reads(int s, int t)
{
    for (int j = 0; j < e.sstep[s].n_in; j++)
        if (e.sstep[s].in[j] == t)
            return 1;
    return 0;
}

Test(estimate, normalised_layers_are_steps_of_their_own)
{
    npu_cfg_t c = test_cfg(8);
    npu_net_shape_t net;
    npu_step_plan_t *p = malloc(sizeof *p);
    char why[256], name[48];
    cr_assert(p);
    c.dtype = NPU_DTYPE_BF16;
    estimate("cnn:c4,c8s2,fc10", 8, 0, 1);
    uint64_t plain = e.cycles, plain_upd[2] = {e.step[find("update0", 1)].vec, e.step[find("update1", 1)].vec};
    cr_assert(e.n_tensors > 0);
    for (int i = 0; i < e.n_steps; i++)
        cr_assert(!strstr(e.step[i].name, "norm"), "%s", e.step[i].name);
    npu_est_free(&e);
    cr_assert_eq(npu_net_parse("cnn:c4n,c8s2n,fc10", 8, 8, 1, &net, why, sizeof why), 0, "%s", why);
    npu_conv_t conv[NPU_STEP_MAX_LAYERS];
    int fc[NPU_STEP_MAX_LAYERS + 1], n_fc, n_conv = npu_fit_cnn_layers(&net, 8, conv, fc, &n_fc);
    cr_assert_eq(npu_step_plan_cnn_res(&c, conv, n_conv, net.res, fc, n_fc, 8, 0.1f, 0.9f, 0, 0, NULL, 0, p, why,
                                       sizeof why), 0, "%s", why);
    estimate("cnn:c4n,c8s2n,fc10", 8, 0, 1);
    cr_assert_gt(e.cycles, plain);
    for (int l = 0; l < 2; l++) {
        char t[16];
        snprintf(name, sizeof name, "fwd L%d norm_relu", l + 1);
        snprintf(t, sizeof t, "norm%d", l);
        cr_assert_eq(e.step[find(t, 1)].vec, plan_busy(&c, p, name), "%s", t);
        snprintf(t, sizeof t, "Z%d", l);
        int z = find(t, 0);
        snprintf(t, sizeof t, "fwd%d", l);
        cr_assert_eq(e.sstep[find(t, 1)].out[0], z, "the convolution writes Z%d", l);
        snprintf(t, sizeof t, "norm%d", l);
        cr_assert(step_reads(find(t, 1), z), "norm%d reads Z%d", l, l);
        snprintf(name, sizeof name, "bwd L%d norm_relu_grad", l + 1);
        uint64_t bwd = plan_busy(&c, p, name);
        snprintf(name, sizeof name, "bwd L%d norm_scale_grad", l + 1);
        bwd += plan_busy(&c, p, name);
        snprintf(t, sizeof t, "dnorm%d", l);
        cr_assert_eq(e.step[find(t, 1)].vec, bwd, "%s", t);
        snprintf(t, sizeof t, "dZ%d", l);
        int dz = find(t, 0);
        snprintf(t, sizeof t, "bwd%d", l);
        cr_assert(step_reads(find(t, 1), dz), "bwd%d reads dZ%d", l, l);
        snprintf(name, sizeof name, "update L%d norm_update", l + 1);
        snprintf(t, sizeof t, "update%d", l);
        int u = find(t, 1);
        cr_assert_eq(e.step[u].vec, plain_upd[l] + plan_busy(&c, p, name), "%s", t);
        snprintf(t, sizeof t, "G%d", l);
        cr_assert(step_reads(u, find(t, 0)), "update%d reads gamma", l);
        snprintf(t, sizeof t, "Bn%d", l);
        cr_assert(step_reads(u, find(t, 0)), "update%d reads beta", l);
    }
    npu_est_free(&e);
    npu_step_plan_free(p);
    free(p);
}
