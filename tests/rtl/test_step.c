/*
 * test_step.c - whole training steps on the RTL (run/step_run.h): a 3-layer MLP with widths and
 * a batch that are not multiples of 2S, five steps with random DRAM stalls, every kernel (GEMMs
 * and vector kernels) bit-exact against the golden image and its counters as the program says
 * (the runtime checks both after each kernel), the loss falling, the host writing only the
 * batch and the loss gradient, every kernel at or above its roofline. At int16 configurations
 * the same step in fixed point with the nominal static scales (compile/step/step_scale.h). The
 * digits CNN's steps too (conv, fused conv backward, pitched vector kernels, transposes).
 * mlp_steps_resident: the same steps with tensors kept in the SPM between kernels (the residency
 * plan of compile/step/step_res.h, one bank resident): still bit-exact, and the step's DRAM
 * bytes well below those of the plain step. resident_bytes_exact (issue 16 acceptance 1): for three
 * MLPs, every tensor's DRAM In and Out bytes on the RTL (whole-tensor transfers and the kernels'
 * counters, split by tag) equal the estimator's (npu_estimate_step_res) byte for byte.
 * cnn_residual_tensor_bytes_exact (issue 16 acceptance 1 for CNNs): a residual block's steps
 * bit-exact, each kernel's bytes per tag and every tensor's In and Out bytes the estimator's.
 * cnn_norm_bytes_as_estimated: conv -> norm -> ReLU chains (VMUL) bit-exact, each kernel's bytes
 * per tag and every tensor's In and Out bytes the estimator's. cnn_resident_block_reuse,
 * cnn_resident_conv_adjacent_reuse, cnn_resident_conv_input_reuse, cnn_resident_conv_dy_reuse
 * (issue 16 acceptance 3): the traffic steps of block reuse and of adjacent-layer reuse across a
 * convolution (its output drained into the SPM, its input copied from it, the fused backward's dY
 * read in place) on the RTL at the capacity formulas.
 */
#include <math.h>

#include "rtl_common.h"
#include "ref/net_ref.h"
#include "compile/conv/conv_bwd.h"
#include "compile/gemm/gemm_emit.h"
#include "compile/step/step_res.h"
#include "model/est_step.h"
#include "run/step_run.h"

/* The roofline invariant of every kernel of the last step (issue 16): cycles >= MACs / PEs and
 * >= DRAM bytes / bandwidth less the DRAM model's initial credit (npu_step_below_roof). */
static void roofline(const npu_cfg_t *c, const npu_step_run_t *s)
{
    for (int k = 0; k < s->plan.nk; k++) {
        const npu_step_tally_t *t = &s->last[k];
        double need = 0;
        int below = npu_step_below_roof(c, t, &need);
        cr_assert_eq(below, 0, "%s: %llu cycles, below its %s bound %.0f", s->plan.k[k].name,
                     (unsigned long long)t->cycles, below == 1 ? "MACs / PEs" : "DRAM bytes / bandwidth", need);
        cr_assert_gt(t->cycles, 0u, "%s", s->plan.k[k].name);
    }
}

/* Weights uniform in +-1/sqrt(fan-in), zero biases, for an MLP of widths dims (L layers). */
static void random_params(const int *dims, int L, uint64_t *x, float **w, float **b)
{
    for (int l = 0; l < L; l++) {
        size_t n = (size_t)dims[l] * dims[l + 1];
        w[l] = malloc(n * sizeof(float));
        b[l] = calloc((size_t)dims[l + 1], sizeof(float));
        cr_assert(w[l] && b[l]);
        for (size_t i = 0; i < n; i++)
            w[l][i] = ((float)(rtl_rand(x) % 2001) - 1000.0f) / 1000.0f / sqrtf((float)dims[l]);
    }
}

static void free_params(int L, float **w, float **b)
{
    for (int l = 0; l < L; l++) {
        free(w[l]);
        free(b[l]);
    }
}

/* The DRAM bytes of the last step (operands and results; not the programs). */
static uint64_t step_bytes(const npu_step_run_t *s)
{
    uint64_t b = 0;
    for (int g = 0; g < NPU_NUM_TAGS; g++)
        b += g == NPU_TAG_PROG ? 0 : s->fwd.rd[g] + s->fwd.wr[g] + s->bwd.rd[g] + s->bwd.wr[g];
    return b;
}

static uint64_t mlp_steps(int res_banks)
{
    npu_cfg_t c = rtl_cfg();
    int dims[4] = {24, 37, 20, 10}, B = 19, C = 10;
    npu_step_run_t s;
    uint64_t seed = rtl_seed(91), x = seed | 1;
    npu_sim_t *sim = rtl_open(&c, 20, 0, seed);
    cr_assert_eq(npu_step_run_init(&s, &c, sim, dims, 3, B, 0.3f, 0.9f, 1e-3f, NPU_EMIT_FLEXSA, 20000000), 0,
                 "%s", s.why);
    if (res_banks)
        cr_assert_eq(npu_step_run_resident(&s, res_banks), 0, "%s", s.why);
    float *w[3], *b[3], in[19 * 24], lg[19 * 10], dl[19 * 10];
    uint8_t y[19];
    random_params(dims, 3, &x, w, b);
    for (int i = 0; i < B * dims[0]; i++)
        in[i] = (float)(rtl_rand(&x) % 17) / 16.0f;
    for (int r = 0; r < B; r++)
        y[r] = (uint8_t)(rtl_rand(&x) % (uint64_t)C);
    npu_step_run_params(&s, w, b);
    double first = 0, loss = 0;
    for (int it = 0; it < 5; it++) {
        cr_assert_eq(npu_step_forward(&s, in, B, lg), 0, "seed %llu step %d: %s", (unsigned long long)seed, it, s.why);
        loss = npu_softmax_xent(lg, y, B, C, dl);
        first = it ? first : loss;
        cr_assert_eq(npu_step_backward(&s, dl), 0, "seed %llu step %d: %s", (unsigned long long)seed, it, s.why);
        cr_assert_eq(s.fwd.host_wr + s.bwd.host_wr, (uint64_t)B * (dims[0] * 2 + C * 4),
                     "the host writes the batch (16-bit) and the loss gradient (32-bit), nothing else");
        cr_assert_eq(s.fwd.host_rd + s.bwd.host_rd, (uint64_t)B * C * 4, "and reads the logits");
    }
    cr_assert_eq(s.checked, 5u * (uint64_t)s.plan.nk);
    roofline(&c, &s);
    cr_assert_lt(loss, 0.95 * first, "loss %g after 5 steps, %g at first", loss, first);
    uint64_t bytes = step_bytes(&s);
    npu_step_run_free(&s);
    npu_sim_close(sim);
    free_params(3, w, b);
    return bytes;
}

Test(step, mlp_steps_bit_exact)
{
    mlp_steps(0);
}

Test(step, mlp_steps_resident)
{
    uint64_t plain = mlp_steps(0), res = mlp_steps(1);
    cr_log_info("step DRAM bytes: %llu resident, %llu plain", (unsigned long long)res, (unsigned long long)plain);
    cr_assert_lt(res, plain * 3 / 4, "%llu bytes resident, %llu plain", (unsigned long long)res,
                 (unsigned long long)plain);
}

/* Two steps of the MLP dims (layers L, batch B) with one bank resident on the RTL, the scheduler
 * given cap bytes of it (0: all); every tensor's bytes of the second against the estimator's,
 * which stays in *e. */
static void bytes_exact_cap(const int *dims, int L, int B, uint64_t cap, npu_est_kplan_t *e)
{
    npu_cfg_t c = rtl_cfg();
    npu_step_run_t s;
    uint64_t seed = rtl_seed(93), x = seed | 1;
    npu_sim_t *sim = rtl_open(&c, 20, 0, seed);
    char why[256];
    cr_assert_eq(npu_step_run_init(&s, &c, sim, dims, L, B, 0.1f, 0.9f, 0, NPU_EMIT_FLEXSA, 20000000), 0, "%s", s.why);
    cr_assert_eq(npu_step_run_resident_cap(&s, 1, cap), 0, "%s", s.why);
    float *w[NPU_STEP_MAX_LAYERS], *b[NPU_STEP_MAX_LAYERS];
    random_params(dims, L, &x, w, b);
    npu_step_run_params(&s, w, b);
    int C = dims[L];
    float *in = malloc((size_t)B * dims[0] * sizeof(float)), *lg = malloc((size_t)B * C * sizeof(float));
    float *dl = calloc((size_t)B * C, sizeof(float));
    cr_assert(in && lg && dl);
    for (int i = 0; i < B * dims[0]; i++)
        in[i] = (float)(rtl_rand(&x) % 17) / 16.0f;
    for (int it = 0; it < 2; it++) {
        cr_assert_eq(npu_step_forward(&s, in, B, lg), 0, "seed %llu: %s", (unsigned long long)seed, s.why);
        for (int i = 0; i < B * C; i++)
            dl[i] = (lg[i] - 0.1f) / (float)B;
        cr_assert_eq(npu_step_backward(&s, dl), 0, "seed %llu: %s", (unsigned long long)seed, s.why);
    }
    cr_assert_eq(npu_estimate_step_res_cap(&c, dims, L, B, NPU_EMIT_FLEXSA, 1, cap, e, why, sizeof why), 0, "%s", why);
    cr_assert_eq(e->nt, s.plan.nt);
    cr_assert_eq(s.res->ambiguous, 0);
    uint64_t all = 0;
    for (int t = 0; t < s.plan.nt; t++) {
        cr_assert_eq(s.t_in[t], e->t[t].in, "%s In: RTL %llu, estimator %llu", e->t[t].name,
                     (unsigned long long)s.t_in[t], (unsigned long long)e->t[t].in);
        cr_assert_eq(s.t_out[t], e->t[t].out, "%s Out: RTL %llu, estimator %llu", e->t[t].name,
                     (unsigned long long)s.t_out[t], (unsigned long long)e->t[t].out);
        all += s.t_in[t] + s.t_out[t];
    }
    cr_assert_gt(all, 0u);
    uint64_t rtl = s.fwd.cycles + s.bwd.cycles;
    cr_log_info("cycles: RTL %llu, estimator %llu (%+.1f%%)", (unsigned long long)rtl, (unsigned long long)e->cycles,
                100.0 * ((double)e->cycles - (double)rtl) / (double)rtl);
    cr_log_info("%d-layer MLP, batch %d, %llu of %llu bytes: %llu tensor bytes per step, %d transfers, %d accesses "
                "demoted", L, B, (unsigned long long)s.res->cap_bytes,
                (unsigned long long)(s.res->words - s.res->limit) * npu_cfg_word(&c), (unsigned long long)all,
                s.res->nx, s.res->demoted);
    npu_step_run_free(&s);
    npu_sim_close(sim);
    free_params(L, w, b);
    free(in);
    free(lg);
    free(dl);
}

static void bytes_exact(const int *dims, int L, int B)
{
    npu_est_kplan_t *e = calloc(1, sizeof *e);
    cr_assert_not_null(e);
    bytes_exact_cap(dims, L, B, 0, e);
    free(e);
}

Test(step, resident_bytes_exact)
{
    int a[4] = {24, 37, 20, 10}, b[3] = {64, 48, 10}, c[6] = {30, 40, 40, 40, 40, 10};
    bytes_exact(a, 3, 19);
    bytes_exact(b, 2, 16);
    bytes_exact(c, 5, 8);
}

/* The activations (Z32[1..L-1], made by the forward GEMM, read by bias + ReLU and relu_bwd) that
 * e's plan reads again from DRAM; *prefix 0 when one is kept while one nearer the loss is not. */
static int reread(const npu_est_kplan_t *e, int L, int *prefix, char *line, size_t len)
{
    int n = 0, again_seen = 0, count = 0;
    *prefix = 1;
    line[0] = 0;
    for (int l = L - 1; l >= 1; l--) { /* nearest the loss first */
        char name[16];
        snprintf(name, sizeof name, "Z32[%d]", l);
        for (int t = 0; t < e->nt; t++)
            if (!strcmp(e->t[t].name, name)) {
                int again = e->t[t].in > 0;
                *prefix &= again || !again_seen;
                again_seen |= again;
                count += again;
                n += snprintf(line + n, len - (size_t)n, " %s %s", name, again ? "read again" : "kept");
            }
    }
    return count;
}

/* Issue 16 acceptance 3 on the RTL (forward-backward reuse, brief 003 check 9): the scheduler's SPM
 * swept over the resident bank, bytes exact at every size; the activations read again are those
 * farthest from the loss (Belady keeps the nearest) and none at the whole bank. The step: the
 * estimator's smallest size at which none is read again (bisection over SPM words, the allocation
 * granule), then the RTL one word below it (one read again) and at it (none), bytes exact at both. */
Test(step, resident_capacity_sweep)
{
    int dims[5] = {16, 24, 20, 16, 10}, L = 4, B = 8, prefix;
    npu_cfg_t c = rtl_cfg();
    uint64_t word = (uint64_t)npu_cfg_word(&c), area = (uint64_t)c.spm_bank_words * word, lo = 0, hi = area;
    npu_est_kplan_t *e = calloc(1, sizeof *e);
    char line[256], why[256];
    cr_assert_not_null(e);
    for (int i = 1; i <= 4; i++) {
        int again = (bytes_exact_cap(dims, L, B, area * (uint64_t)i / 4, e), reread(e, L, &prefix, line, sizeof line));
        cr_log_info("cap %d/4 of the bank:%s", i, line);
        cr_assert(prefix, "cap %d/4: an activation kept while one nearer the loss is read again:%s", i, line);
        cr_assert(i < 4 || again == 0, "at the whole bank no activation is read again:%s", line);
    }
    while (hi - lo > word) { /* none read again at hi; lo: some (or 0) */
        uint64_t mid = (lo + hi) / 2 / word * word;
        cr_assert_eq(npu_estimate_step_res_cap(&c, dims, L, B, NPU_EMIT_FLEXSA, 1, mid, e, why, sizeof why), 0, "%s", why);
        *(reread(e, L, &prefix, line, sizeof line) ? &lo : &hi) = mid;
    }
    bytes_exact_cap(dims, L, B, hi - word, e);
    cr_assert_gt(reread(e, L, &prefix, line, sizeof line), 0, "one word below the step:%s", line);
    bytes_exact_cap(dims, L, B, hi, e);
    cr_assert_eq(reread(e, L, &prefix, line, sizeof line), 0, "at the step:%s", line);
    cr_log_info("the step: no activation read again from %llu bytes of SPM on (RTL and estimator)", (unsigned long long)hi);
    free(e);
}

/* Two steps of the MLP with the scheduler given cap bytes and its prefetch / look-ahead as
 * `overlap` says; the RTL's cycles of each scheduler step's own transfer programs (its stall) in
 * pre (the second step), the estimator's in e->pre; the plan in *res (host side, the same). */
static uint64_t g_kcyc[7 * NPU_STEP_MAX_LAYERS + 2]; /* overlap_run: each kernel's RTL cycles */

static void overlap_run(const npu_cfg_t *cfg, const int *dims, int L, int B, uint64_t cap, int overlap, uint64_t *pre,
                        npu_est_kplan_t *e, npu_step_res_t *res)
{
    npu_cfg_t c = *cfg;
    npu_step_run_t s;
    uint64_t seed = rtl_seed(95), x = seed | 1;
    npu_sim_t *sim = rtl_open(&c, 0, 0, seed); /* no stalls: cycles against the estimate */
    char why[256];
    cr_assert_eq(npu_step_run_init(&s, &c, sim, dims, L, B, 0.1f, 0.9f, 0, NPU_EMIT_FLEXSA, 20000000), 0, "%s", s.why);
    cr_assert_eq(npu_step_run_resident_ex(&s, 1, cap, overlap), 0, "%s", s.why);
    float *w[NPU_STEP_MAX_LAYERS], *b[NPU_STEP_MAX_LAYERS], in[64 * 16], lg[64 * 10], dl[64 * 10] = {0};
    for (int l = 0; l < L; l++) {
        w[l] = calloc((size_t)dims[l] * dims[l + 1], sizeof(float));
        b[l] = calloc((size_t)dims[l + 1], sizeof(float));
        for (int i = 0; i < dims[l] * dims[l + 1]; i++)
            w[l][i] = ((float)(rtl_rand(&x) % 2001) - 1000.0f) / 4000.0f;
    }
    npu_step_run_params(&s, w, b);
    for (int i = 0; i < B * dims[0]; i++)
        in[i] = (float)(rtl_rand(&x) % 17) / 16.0f;
    for (int it = 0; it < 2; it++) {
        cr_assert_eq(npu_step_forward(&s, in, B, lg), 0, "%s", s.why);
        cr_assert_eq(npu_step_backward(&s, dl), 0, "%s", s.why);
    }
    memcpy(pre, s.pre_cycles, (size_t)(s.res->n_steps + 1) * sizeof *pre);
    for (int k = 0; k < s.plan.nk; k++)
        g_kcyc[k] = s.last[k].cycles;
    cr_assert_eq(npu_estimate_step_res_ex(&c, dims, L, B, NPU_EMIT_FLEXSA, 1, cap, overlap, e, why, sizeof why), 0,
                 "%s", why);
    uint64_t rtl = s.fwd.cycles + s.bwd.cycles; /* the whole step, within 10 % (issue 16 acceptance 2) */
    double err = ((double)e->cycles - (double)rtl) / (double)rtl;
    cr_log_info("overlap %d: step cycles RTL %llu, estimator %llu (%+.1f%%)", overlap, (unsigned long long)rtl,
                (unsigned long long)e->cycles, 100 * err);
    cr_assert(err <= 0.10 && err >= -0.10, "overlap %d: the step's cycles %llu on the RTL, %llu estimated", overlap,
              (unsigned long long)rtl, (unsigned long long)e->cycles);
    npu_step_plan_t p;
    cr_assert_eq(npu_step_plan_mlp(&c, dims, L, B, 0.1f, 0.9f, 0, NPU_EMIT_FLEXSA, 0, &p, why, sizeof why), 0, "%s", why);
    cr_assert_eq(npu_est_res_plan(&c, &p, 1, cap, overlap, res), 0, "%s", res->why);
    npu_step_plan_free(&p);
    npu_step_run_free(&s);
    npu_sim_close(sim);
    free_params(L, w, b);
}

/* The own-program transfers of scheduler step j in plan r: stores (1) or loads (0). */
static int own_at(const npu_step_res_t *r, int j, int store)
{
    int n = 0;
    for (int x = r->x_at[j]; x < r->x_at[j + 1]; x++)
        n += !r->x[x].app && r->x[x].store == store;
    return n;
}

/* Issue 16 acceptance 4 on the RTL (brief 003 checks 10 and 11): with look-ahead offload a
 * write-back runs right after the tensor's last write, appended to the next kernel, and the step
 * that evicts it no longer waits for it (its stall 0 where it was the step's only transfer,
 * against the write-back's time without look-ahead, within 10 % of the estimate); with prefetch a
 * load issued k steps early (the scheduler's latency rule) overlaps a kernel and the step that
 * reads it does not wait (0, against the load's time without prefetch). Every step's stall on the
 * RTL within 10 % of the estimator's (a few cycles on short transfers). */
Test(step, resident_prefetch_and_lookahead)
{
    int dims[5] = {16, 24, 20, 16, 10}, L = 4, B = 8;
    npu_cfg_t c = rtl_cfg();
    uint64_t cap = (uint64_t)c.spm_bank_words * npu_cfg_word(&c) / 4;
    /* the transposed reads on the DRAM side (NPU_RES_NO_XT): with the dW GEMMs' X^T LOAD_SPMed
     * from resident rows this network's plan at this size has no step whose only transfer is a
     * write-back (the scenario the check needs) */
    int modes[3] = {NPU_RES_PREFETCH | NPU_RES_LOOKAHEAD | NPU_RES_NO_XT, NPU_RES_PREFETCH | NPU_RES_NO_XT,
                    NPU_RES_LOOKAHEAD | NPU_RES_NO_XT};
    uint64_t pre[3][7 * NPU_STEP_MAX_LAYERS + 2];
    npu_est_kplan_t *e = calloc(3, sizeof *e);
    npu_step_res_t r[3];
    cr_assert_not_null(e);
    for (int m = 0; m < 3; m++) {
        overlap_run(&c, dims, L, B, cap, modes[m], pre[m], &e[m], &r[m]);
        for (int j = 0; j <= r[m].n_steps; j++) {
            double d = (double)pre[m][j] - (double)e[m].pre[j];
            cr_assert(d <= 0.10 * (double)e[m].pre[j] + 8 && -d <= 0.10 * (double)e[m].pre[j] + 8,
                      "overlap %d, step %d: stall %llu on the RTL, %llu estimated", modes[m], j,
                      (unsigned long long)pre[m][j], (unsigned long long)e[m].pre[j]);
        }
    }
    int moved[2] = {0, 0};
    for (int m = 1; m < 3; m++) /* m 1: look-ahead off (stores), m 2: prefetch off (loads) */
        for (int j = 0; j < r[m].n_steps; j++) {
            int store = m == 1, own = own_at(&r[m], j, 1) + own_at(&r[m], j, 0);
            if (own != 1 || own_at(&r[m], j, store) != 1 || own_at(&r[0], j, 0) + own_at(&r[0], j, 1))
                continue; /* step j's only own transfer is a store (load), gone with overlap */
            moved[m - 1]++;
            cr_assert_eq(pre[0][j], 0u, "step %d: no stall when it overlaps", j);
            cr_assert_gt(pre[m][j], 0u, "step %d: a stall without", j);
            cr_log_info("step %d: %s stall %llu cycles without %s (estimated %llu), 0 with", j,
                        store ? "write-back" : "load", (unsigned long long)pre[m][j],
                        store ? "look-ahead" : "prefetch", (unsigned long long)e[m].pre[j]);
        }
    cr_assert_gt(moved[0], 0, "a write-back the look-ahead moves off a step's critical path");
    cr_assert_gt(moved[1], 0, "a load the prefetch moves off a step's critical path");
    for (int x = 0; x < r[0].nx; x++) /* prefetched loads: issued at the scheduler's step */
        if (r[0].x[x].app && !r[0].x[x].store)
            cr_assert_lt(r[0].x[x].step, r[0].x[x].for_step);
    for (int m = 0; m < 3; m++)
        npu_step_res_free(&r[m]);
    free(e);
}

/* Scheduler step j's write-back of tensor t: 1 if there is one with app as given. */
static int stores_at(const npu_step_res_t *r, int j, int t, int app)
{
    for (int x = r->x_at[j]; x < r->x_at[j + 1]; x++)
        if (r->x[x].t == t && r->x[x].store && r->x[x].app == app)
            return 1;
    return 0;
}

/* Brief 003 check 11 (issue 16 acceptance 4), the thesis's Fig. 4.2 scenario as a 3-layer MLP
 * (16-64-64-10, batch 16): layer 1's output Z32[1] is written in 1f and read again in 1b (by
 * relu_bwd) but cannot survive there. The scheduler's SPM (from 2 KiB up, in 512 B steps, the
 * estimator alone) is the first size where look-ahead writes Z32[1] out right after 1f (appended
 * to L2's first kernel) and, without look-ahead, the write-back is the only transfer 3f (L3's
 * first kernel) waits for. On the RTL at DRAM timing c, 3f's stall is 0 with look-ahead and the
 * write-back's time without it, within 10% of the estimate and at least cap(Z32[1]) / bandwidth.
 * Returns that stall over cap(Z32[1]) / bandwidth. */
static double lookahead_three_layers(const npu_cfg_t *cfg)
{
    /* the transposed reads on the DRAM side (NPU_RES_NO_XT): with X^T LOAD_SPMed from resident rows
     * no SPM size from 2 to 64 KiB gives the brief's scenario for this network */
    int dims[4] = {16, 64, 64, 10}, L = 3, B = 16;
    int modes[2] = {NPU_RES_PREFETCH | NPU_RES_LOOKAHEAD | NPU_RES_NO_XT, NPU_RES_PREFETCH | NPU_RES_NO_XT};
    npu_cfg_t c = *cfg;
    npu_step_plan_t p;
    npu_step_res_t r[2];
    char why[256];
    int t = -1, j2 = -1, j3 = -1, found = 0;
    uint64_t cap = 2048, pre[2][7 * NPU_STEP_MAX_LAYERS + 2];
    cr_assert_eq(npu_step_plan_mlp(&c, dims, L, B, 0.1f, 0.9f, 0, NPU_EMIT_FLEXSA, 0, &p, why, sizeof why), 0, "%s", why);
    for (int i = 0; i < p.nt; i++)
        t = strcmp(p.t[i].name, "Z32[1]") ? t : i;
    for (int k = p.nk - 1; k >= 0; k--) {
        j2 = p.k[k].layer == 2 ? k : j2;
        j3 = p.k[k].layer == 3 ? k : j3;
    }
    cr_assert(t >= 0 && j2 == 2 && j3 == 4, "Z32[1] and the forward kernels L1 gemm, bias_relu, L2 ...");
    uint64_t bytes = p.t[t].bytes;
    for (; cap <= 65536 && !found; cap += found ? 0 : 512) {
        for (int m = 0; m < 2; m++)
            cr_assert_eq(npu_est_res_plan(&c, &p, 1, cap, modes[m], &r[m]), 0, "%s", r[m].why);
        found = stores_at(&r[0], j2, t, 1) && own_at(&r[0], j3, 0) + own_at(&r[0], j3, 1) == 0 &&
                stores_at(&r[1], j3, t, 0) && own_at(&r[1], j3, 0) + own_at(&r[1], j3, 1) == 1;
        for (int m = 0; m < 2; m++)
            npu_step_res_free(&r[m]);
    }
    npu_step_plan_free(&p);
    cr_assert(found, "no SPM size from 2 to 64 KiB gives the scenario");
    npu_est_kplan_t *e = calloc(2, sizeof *e);
    cr_assert_not_null(e);
    for (int m = 0; m < 2; m++)
        overlap_run(&c, dims, L, B, cap, modes[m], pre[m], &e[m], &r[m]);
    double floor = (double)bytes / c.dram_bw, d = (double)pre[1][j3] - (double)e[1].pre[j3];
    cr_log_info("check 11 at %llu B of SPM, DRAM latency %d, burst cost %d: 3f stall %llu with look-ahead, %llu "
                "without (estimated %llu; cap(Z32[1]) / bandwidth = %.0f, %.2fx)", (unsigned long long)cap,
                c.dram_latency, c.dram_burst_cost, (unsigned long long)pre[0][j3], (unsigned long long)pre[1][j3],
                (unsigned long long)e[1].pre[j3], floor, (double)pre[1][j3] / floor);
    cr_assert_eq(pre[0][j3], 0u, "3f waits for nothing with look-ahead");
    cr_assert(d <= 0.10 * (double)e[1].pre[j3] && -d <= 0.10 * (double)e[1].pre[j3],
              "3f's stall without look-ahead %llu on the RTL, %llu estimated", (unsigned long long)pre[1][j3],
              (unsigned long long)e[1].pre[j3]);
    cr_assert_geq((double)pre[1][j3], floor, "the write-back moves cap(Z32[1]) at the bandwidth at best");
    for (int m = 0; m < 2; m++)
        npu_step_res_free(&r[m]);
    free(e);
    return (double)pre[1][j3] / floor;
}

/* Check 11 at the build's DRAM, whose per-burst cost and latency put the stall above the brief's
 * bare cap / bandwidth (the estimate follows them), and at a bandwidth-only DRAM (latency 1, no
 * burst cost, the estimator's calibration dropped), the brief's own memory: there the stall
 * without look-ahead is cap(Z32[1]) / bandwidth within 10%. */
Test(step, brief_lookahead_three_layers)
{
    npu_cfg_t c = rtl_cfg();
    lookahead_three_layers(&c);
    c.dram_latency = 1;
    c.dram_burst_cost = 0;
    c.calib.valid = 0;
    double bare = lookahead_three_layers(&c);
    cr_assert(bare <= 1.10, "at a bandwidth-only DRAM 3f stalls %.2fx cap(Z32[1]) / bandwidth", bare);
}

/* Brief 003 check 10 (issue 16 acceptance 4): compute-heavy and light layers, 64-128-16-128-16-10
 * at batch 16, the scheduler given a quarter of the resident bank. Every load the plan prefetches
 * is issued no earlier than the Listing 1 rule says (k: the fewest steps before its reader whose
 * compute covers latency + bytes / bandwidth, recomputed here from the plan's step cycles), and at
 * the rule's distance where nothing defers it. On the RTL, against the same plan without
 * prefetch (the load a program of its own before its reader): each load prefetched at the rule's
 * distance costs the kernels it overlaps (the reader's wait) at most 10% of its own time (hidden),
 * or, where those kernels' own transfers hold the DRAM bus (the rule counts their cycles as
 * compute), no more than the estimator's prediction of that wait + 10% (and 8 cycles). */
Test(step, brief_prefetch_heavy_light)
{
    int dims[6] = {64, 128, 16, 128, 16, 10}, L = 5, B = 16;
    int modes[2] = {NPU_RES_PREFETCH | NPU_RES_LOOKAHEAD, NPU_RES_LOOKAHEAD};
    npu_cfg_t c = rtl_cfg();
    uint64_t cap = (uint64_t)c.spm_bank_words * npu_cfg_word(&c) / 4, pre[2][7 * NPU_STEP_MAX_LAYERS + 2];
    uint64_t kc[2][7 * NPU_STEP_MAX_LAYERS + 2];
    npu_est_kplan_t *e = calloc(2, sizeof *e);
    npu_step_res_t r[2];
    npu_step_plan_t p; /* the names (the plan's tensors and kernels) */
    char why[256];
    int at_rule = 0, hidden = 0;
    cr_assert_not_null(e);
    cr_assert_eq(npu_step_plan_mlp(&c, dims, L, B, 0.1f, 0.9f, 0, NPU_EMIT_FLEXSA, 0, &p, why, sizeof why), 0, "%s", why);
    for (int m = 0; m < 2; m++) {
        overlap_run(&c, dims, L, B, cap, modes[m], pre[m], &e[m], &r[m]);
        memcpy(kc[m], g_kcyc, sizeof kc[m]);
    }
    for (int x = 0; x < r[0].nx; x++) {
        const npu_res_xfer_t *t = &r[0].x[x];
        if (!t->app || t->store)
            continue;
        uint64_t room = r[0].st[t->t].spm_bytes ? r[0].st[t->t].spm_bytes : r[0].st[t->t].bytes;
        uint64_t need = (uint64_t)c.dram_latency + (room + (uint64_t)c.dram_bw - 1) / (uint64_t)c.dram_bw, have = 0;
        int k = 0;
        while (k < t->for_step && have < need)
            have += r[0].ss[t->for_step - ++k].cycles;
        cr_assert_geq(t->step, t->for_step - k, "%s for step %d issued at %d, before the rule's %d",
                      p.t[t->t].name, t->for_step, t->step, t->for_step - k);
        if (t->step != t->for_step - k || have < need)
            continue;
        /* its time as a program of its own without prefetch, and what it adds to the kernels */
        uint64_t own = 0, add = 0, eadd = 0;
        for (int y = r[1].x_at[t->for_step]; y < r[1].x_at[t->for_step + 1]; y++)
            own += r[1].x[y].t == t->t && !r[1].x[y].store && !r[1].x[y].app;
        if (own != 1)
            continue;
        for (int j = t->step; j < t->for_step; j++)
            add += kc[0][j] > kc[1][j] ? kc[0][j] - kc[1][j] : 0,
            eadd += e[0].k[j].cycles > e[1].k[j].cycles ? e[0].k[j].cycles - e[1].k[j].cycles : 0;
        at_rule++;
        cr_log_info("check 10: %s for %s prefetched %d step(s) early (compute %llu >= %llu): adds %llu cycles "
                    "to the kernels it overlaps (estimated %llu); %llu as a demand load before its reader", p.t[t->t].name,
                    p.k[t->for_step].name, k, (unsigned long long)have, (unsigned long long)need,
                    (unsigned long long)add, (unsigned long long)eadd, (unsigned long long)pre[1][t->for_step]);
        hidden += add <= 0.10 * (double)pre[1][t->for_step];
        cr_assert(add <= 0.10 * (double)pre[1][t->for_step] || add <= 1.10 * (double)eadd + 8,
                  "%s: its reader waits %llu cycles (estimated %llu; %llu as a demand load)", p.t[t->t].name,
                  (unsigned long long)add, (unsigned long long)eadd, (unsigned long long)pre[1][t->for_step]);
    }
    cr_log_info("check 10: %d loads prefetched at the rule's distance, %d of them hidden", at_rule, hidden);
    cr_assert_gt(hidden, 0, "a load prefetched at the rule's distance and hidden");
    npu_step_plan_free(&p);
    for (int m = 0; m < 2; m++)
        npu_step_res_free(&r[m]);
    free(e);
}

/* A CNN (c4 3x3 s1 p1, c8 3x3 s2 p1, fc10) on batches of B H x H images as whole steps: conv fwd,
 * the fused conv backward, the pitched vector kernels (bias + ReLU, relu_bwd + bias gradient + bias
 * update, SGD), the transposes and the head's GEMMs, three steps with random DRAM stalls, every
 * kernel bit-exact and its counters as the program says, at or above its roofline, the host
 * writing only the batch and the loss gradient, the loss falling at learning rate lr (int16: the
 * nominal static scales). */
static void cnn_steps(int B, int H, float lr, uint64_t seed0)
{
    npu_cfg_t c = rtl_cfg();
    enum { C = 10, STEPS = 3 };
    npu_conv_t cv[2] = {{B, 1, H, H, 4, 3, 3, 1, 1, 1, 0}, {B, 4, H, H, 8, 3, 3, 2, 1, 1, 0}};
    int oh = npu_conv_oh(&cv[1]), fc[2] = {oh * oh * 8, 10}, n_in = H * H;
    size_t nw[3] = {36, 288, (size_t)fc[0] * 10}, nb[3] = {4, 8, 10};
    npu_step_run_t s;
    uint64_t seed = rtl_seed(seed0), x = seed | 1;
    npu_sim_t *sim = rtl_open(&c, 20, 0, seed);
    cr_assert_eq(npu_step_run_init_cnn(&s, &c, sim, cv, 2, NULL, fc, 1, B, lr, 0.9f, 1e-3f, 0, NULL, 50000000), 0,
                 "%s", s.why);
    float *w[3], *b[3], *in = malloc(sizeof(float) * (size_t)(B * n_in)), lg[16 * C], dl[16 * C];
    uint8_t y[16];
    cr_assert(in && B <= 16);
    for (int l = 0; l < 3; l++) {
        w[l] = malloc(nw[l] * sizeof(float));
        b[l] = calloc(nb[l], sizeof(float));
        cr_assert(w[l] && b[l]);
        for (size_t i = 0; i < nw[l]; i++)
            w[l][i] = ((float)(rtl_rand(&x) % 2001) - 1000.0f) / 1000.0f / sqrtf((float)(nw[l] / nb[l]));
    }
    for (int i = 0; i < B * n_in; i++)
        in[i] = (float)(rtl_rand(&x) % 17) / 16.0f;
    for (int r = 0; r < B; r++)
        y[r] = (uint8_t)(rtl_rand(&x) % (uint64_t)C);
    npu_step_run_params(&s, w, b);
    double first = 0, loss = 0;
    for (int it = 0; it < STEPS; it++) {
        cr_assert_eq(npu_step_forward(&s, in, B, lg), 0, "seed %llu step %d: %s", (unsigned long long)seed, it, s.why);
        loss = npu_softmax_xent(lg, y, B, C, dl);
        first = it ? first : loss;
        cr_assert_eq(npu_step_backward(&s, dl), 0, "seed %llu step %d: %s", (unsigned long long)seed, it, s.why);
        cr_assert_eq(s.fwd.host_wr + s.bwd.host_wr, (uint64_t)B * (uint64_t)(n_in * 2 + C * 4),
                     "the host writes the batch (16-bit) and the loss gradient (32-bit), nothing else");
        cr_assert_eq(s.fwd.host_rd + s.bwd.host_rd, (uint64_t)B * C * 4, "and reads the logits");
    }
    cr_assert_eq(s.checked, (uint64_t)STEPS * (uint64_t)s.plan.nk);
    roofline(&c, &s);
    cr_assert_lt(loss, first, "loss %g after %d steps, %g at first", loss, STEPS, first);
    npu_step_run_free(&s);
    npu_sim_close(sim);
    free_params(3, w, b);
    free(in);
}

/* The digits CNN (cnn:c4,c8s2,fc10 on 8 x 8 images). */
Test(step, cnn_digits_steps_bit_exact) { cnn_steps(8, 8, 0.2f, 92); }

/* Images an OBUF half cannot hold as one band (tiny 16 x 16, small 24 x 24): both fused
 * backwards take several bands per image over the dY ring (the first without dX); their DRAM
 * bytes per tag are the plan's (dY read once), checked by the step runner. */
Test(step, cnn_bands_steps_bit_exact)
{
    npu_cfg_t c = rtl_cfg();
    int H = c.s == 2 ? 16 : 24;
    char why[256];
    for (int l = 0; l < 2; l++) {
        npu_conv_t cv = {2, l ? 4 : 1, H, H, l ? 8 : 4, 3, 3, l + 1, 1, 1, 0};
        npu_conv_bwd_plan_t bp;
        cr_assert_eq(npu_conv_bwd_plan(&c, &cv, 1, &bp, why, sizeof why), 0, "%s", why);
        cr_assert_gt(bp.dx.nbands, 1, "L%d: %d band(s)", l + 1, bp.dx.nbands);
    }
    cnn_steps(2, H, 0.02f, 93);
}

/* The last step's DMA bytes of every kernel (not the program fetch). */
static uint64_t kernel_bytes(const npu_step_run_t *s)
{
    uint64_t b = 0;
    for (int k = 0; k < s->plan.nk; k++)
        for (int g = 1; g < NPU_NUM_TAGS; g++)
            b += s->last[k].rd[g] + s->last[k].wr[g];
    return b;
}

/* `steps` training steps of s on one fixed batch of B 8 x 8 images (inputs (i * 7 % 17) / 16,
 * labels r * 3 % C), every kernel checked by the runtime; `what` names the run in messages. */
static void cnn_train_steps(npu_step_run_t *s, int B, int C, int steps, const char *what)
{
    float *in = malloc((size_t)B * 64 * sizeof(float)), *lg = malloc((size_t)B * C * sizeof(float));
    float *dl = malloc((size_t)B * C * sizeof(float));
    uint8_t *y = malloc((size_t)B);
    cr_assert(in && lg && dl && y);
    for (int i = 0; i < B * 64; i++)
        in[i] = (float)(i * 7 % 17) / 16.0f;
    for (int r = 0; r < B; r++)
        y[r] = (uint8_t)(r * 3 % C);
    for (int it = 0; it < steps; it++) {
        cr_assert_eq(npu_step_forward(s, in, B, lg), 0, "%s step %d: %s", what, it, s->why);
        npu_softmax_xent(lg, y, B, C, dl);
        cr_assert_eq(npu_step_backward(s, dl), 0, "%s step %d: %s", what, it, s->why);
    }
    cr_assert_eq(s->checked, (uint64_t)steps * (uint64_t)s->plan.nk);
    free(in);
    free(lg);
    free(dl);
    free(y);
}

/* Each kernel's DRAM bytes per tag and every tensor's In / Out bytes of the last step on the RTL
 * against estimate e byte for byte, every kernel's tags naming one tensor each; returns the
 * tensors' bytes, which are all of the kernels' DMA bytes. */
static uint64_t bytes_as_estimated(const npu_step_run_t *s, const npu_est_kplan_t *e)
{
    uint64_t all = 0;
    for (int k = 0; k < s->plan.nk; k++)
        for (int t = 0; t < NPU_NUM_TAGS; t++)
            cr_assert(s->last[k].rd[t] == e->k[k].rd[t] && s->last[k].wr[t] == e->k[k].wr[t],
                      "%s tag %d: RTL %llu / %llu, estimated %llu / %llu", e->k[k].name, t,
                      (unsigned long long)s->last[k].rd[t], (unsigned long long)s->last[k].wr[t],
                      (unsigned long long)e->k[k].rd[t], (unsigned long long)e->k[k].wr[t]);
    cr_assert_eq(e->nt, s->plan.nt);
    cr_assert(s->t_lost == 0 && s->t_shared == 0 && e->lost == 0 && e->shared == 0,
              "every kernel's tags name one tensor each: %llu bytes unattributed", (unsigned long long)s->t_lost);
    for (int t = 0; t < s->plan.nt; t++) {
        cr_assert(s->t_in[t] == e->t[t].in && s->t_out[t] == e->t[t].out,
                  "%s In / Out: RTL %llu / %llu, estimator %llu / %llu", e->t[t].name, (unsigned long long)s->t_in[t],
                  (unsigned long long)s->t_out[t], (unsigned long long)e->t[t].in, (unsigned long long)e->t[t].out);
        all += s->t_in[t] + s->t_out[t];
    }
    cr_assert_eq(all, kernel_bytes(s), "the tensors' bytes are all the kernels' DMA bytes");
    return all;
}

/* A residual block on the RTL (issue 16 acceptance 1, compile/step/step_plan.h
 * npu_step_plan_cnn_res): cnn:c4,c4,c4+1,fc10 on 8 x 8 images, two steps with random DRAM stalls:
 * every kernel bit-exact (the forward's bias_add_relu reading H16[1], the backward's
 * add_relu_grad_bias adding dZ16[3] into layer 1's gradient), at or above its roofline, each
 * kernel's DRAM bytes per tag the estimator's (npu_estimate_step_cnn) byte for byte, and every
 * tensor's DRAM In and Out bytes (conv fwd, the fused dX / dW^T backward, ReLU, the block's adds,
 * the bias and SGD updates, the transposes, the head: the counters split by each kernel's tags,
 * compile/step/step_tags.h) the estimator's byte for byte, every counted byte some tensor's. */
Test(step, cnn_residual_tensor_bytes_exact)
{
    npu_cfg_t c = rtl_cfg();
    enum { B = 4, C = 10, STEPS = 2 };
    static npu_est_kplan_t e;
    npu_net_shape_t net;
    npu_conv_t cv[3] = {{B, 1, 8, 8, 4, 3, 3, 1, 1, 1, 0}, {B, 4, 8, 8, 4, 3, 3, 1, 1, 1, 0},
                        {B, 4, 8, 8, 4, 3, 3, 1, 1, 1, 0}};
    int fc[2] = {256, C}, res[3] = {0, 0, 2};
    float *w[4], *b[4];
    char why[256];
    npu_step_run_t s;
    uint64_t seed = rtl_seed(93);
    npu_sim_t *sim = rtl_open(&c, 20, 0, seed);
    cr_assert_eq(npu_net_parse("cnn:c4,c4,c4+1,fc10", 8, 8, 1, &net, why, sizeof why), 0, "%s", why);
    cr_assert_eq(npu_net_init(&net, seed, w, b), 0);
    cr_assert_eq(npu_step_run_init_cnn(&s, &c, sim, cv, 3, res, fc, 1, B, 0.1f, 0.9f, 1e-4f, 0, NULL, 50000000), 0,
                 "%s", s.why);
    cr_assert_eq(npu_estimate_step_cnn(&c, cv, 3, res, fc, 1, B, 0, &e, why, sizeof why), 0, "%s", why);
    char what[40];
    snprintf(what, sizeof what, "seed %llu", (unsigned long long)seed);
    npu_step_run_params(&s, w, b);
    cnn_train_steps(&s, B, C, STEPS, what);
    roofline(&c, &s);
    uint64_t all = bytes_as_estimated(&s, &e);
    int h1 = npu_step_tensor_find(&s.plan, "H16[1]"), dz3 = npu_step_tensor_find(&s.plan, "dZ16[3]");
    cr_assert(h1 >= 0 && dz3 >= 0);
    cr_log_info("%d tensors, %llu bytes per step; the skip H16[1] In %llu (L2's convolutions and L3's "
                "add), its gradient dZ16[3] In %llu (L3's fused backward and L1's add)", s.plan.nt, (unsigned long long)all,
                (unsigned long long)s.t_in[h1], (unsigned long long)s.t_in[dz3]);
    npu_step_run_free(&s);
    npu_sim_close(sim);
    npu_net_params_free(&net, w, b);
}

/* cnn:c4,c4,c4+1,c4s2,fc10 on 8 x 8 images at batch 2: a residual block (layer 3 adds H16[1]) and
 * a head small enough that the whole resident bank holds the block's tensors. */
enum { RB = 2, RC = 10 };
static const npu_conv_t k_rcv[4] = {{RB, 1, 8, 8, 4, 3, 3, 1, 1, 1, 0}, {RB, 4, 8, 8, 4, 3, 3, 1, 1, 1, 0},
                                    {RB, 4, 8, 8, 4, 3, 3, 1, 1, 1, 0}, {RB, 4, 8, 8, 4, 3, 3, 2, 1, 1, 0}};
static const int k_rfc[2] = {64, RC}, k_rres[4] = {0, 0, 2, 0};
/* cnn:c4,c8s2,fc10, the same images and batch: two convolutions whose tensors the whole bank
 * holds from the forward to the backward (the forward-backward reuse test) */
static const npu_conv_t k_scv[2] = {{RB, 1, 8, 8, 4, 3, 3, 1, 1, 1, 0}, {RB, 4, 8, 8, 8, 3, 3, 2, 1, 1, 0}};
static const int k_sfc[2] = {128, RC}, k_sres[2] = {0, 0};
/* cnn:c4,c16s2,fc10 on 6x6 images: 16 channels out of the second, so at S = 8 the head's input
 * fills whole SPM words (16 lanes) and may stay resident (step_res.c same_rows), as c8 does at
 * S = 2; the smaller image keeps sum(cap(Y) + cap(W)) within the bank */
static const npu_conv_t k_scv16[2] = {{RB, 1, 6, 6, 4, 3, 3, 1, 1, 1, 0}, {RB, 4, 6, 6, 16, 3, 3, 2, 1, 1, 0}};
static const int k_sfc16[2] = {144, RC};
/* The network of the next cnn_res_run / cnn_res_est / k_plan: its spec, convolutions, residual
 * connections and head */
typedef struct knet {
    const char *spec;
    const npu_conv_t *cv;
    int ncv;
    const int *res, *fc;
} knet_t;
static const knet_t k_nets[3] = {{"cnn:c4,c4,c4+1,c4s2,fc10", k_rcv, 4, k_rres, k_rfc},
                                 {"cnn:c4,c8s2,fc10", k_scv, 2, k_sres, k_sfc},
                                 {"cnn:c4,c16s2,fc10", k_scv16, 2, k_sres, k_sfc16}};
static const knet_t *k_net = &k_nets[0];

/* The residency options of the next runs (step_res.h; the block-reuse test keeps the convolutions'
 * outputs and inputs on the DRAM side, NPU_RES_NO_CONV_Y | NPU_RES_NO_CONV_X | NPU_RES_NO_CONV_DY,
 * the steps it measures being the vector kernels'; the output-side test the inputs,
 * NPU_RES_NO_CONV_X | NPU_RES_NO_CONV_DY; the input-side test the backward's dY; every test but the
 * dX one the backward's dX, NPU_RES_NO_CONV_DX; every test but the X^T one the backward's X,
 * NPU_RES_NO_XT; every test of a capacity formula the single-use tensors resident, NPU_RES_NO_BYPASS
 * (the formulas count every operand in the SPM), and the head's tensors on the DRAM side,
 * NPU_RES_NO_RESHAPE (the formulas do not count them): each measures its own reuse as docs/estimator.md
 * section 7.3 reports it. All choose between plans by DRAM traffic, NPU_RES_BY_TRAFFIC: acceptance
 * 3 is the scheduler's traffic, not the step's cycles the default choice minimises). */
static int k_overlap = NPU_RES_PREFETCH | NPU_RES_LOOKAHEAD | NPU_RES_BY_TRAFFIC;
/* The options every capacity-formula test starts from (above) */
enum { K_FORMULA = NPU_RES_PREFETCH | NPU_RES_LOOKAHEAD | NPU_RES_BY_TRAFFIC | NPU_RES_NO_BYPASS | NPU_RES_NO_RESHAPE };

/* The estimator's step of that CNN with one bank resident, the scheduler given cap bytes (0: all). */
static void cnn_res_est(uint64_t cap, npu_est_kplan_t *e)
{
    npu_cfg_t c = rtl_cfg();
    char why[256];
    cr_assert_eq(npu_estimate_step_cnn_res(&c, k_net->cv, k_net->ncv, k_net->res, k_net->fc, 1, RB, 0, 1, cap, k_overlap, e,
                                           why, sizeof why),
                 0, "%s", why);
}

/* Tensor `name`'s In bytes in estimate e. */
static uint64_t est_in(const npu_est_kplan_t *e, const char *name)
{
    for (int t = 0; t < e->nt; t++)
        if (!strcmp(e->t[t].name, name))
            return e->t[t].in;
    cr_assert_fail("no tensor %s", name);
    return 0;
}

/* The step plan of that CNN (cnn_res_run's: the estimator's optimizer) in p. */
static void k_plan(const npu_cfg_t *c, npu_step_plan_t *p)
{
    char why[256];
    cr_assert_eq(npu_step_plan_cnn_res(c, k_net->cv, k_net->ncv, k_net->res, k_net->fc, 1, RB, NPU_STEP_NOMINAL_LR, NPU_STEP_NOMINAL_MU,
                                       NPU_STEP_NOMINAL_WD, 0, NULL, 0, p, why, sizeof why), 0, "%s", why);
}

static uint64_t g_res_cycles; /* cnn_res_run: the RTL cycles of its last step (kernels and transfers) */

/* The RTL In bytes of tensor `name` in run s (0 when the plan has no such tensor). */
static uint64_t t_in_of(const npu_step_run_t *s, const char *name)
{
    int t = npu_step_tensor_find(&s->plan, name);
    return t < 0 ? 0 : s->t_in[t];
}

/* Two steps of that CNN with one bank resident on the RTL, the scheduler given cap bytes of it
 * (0: all), random DRAM stalls: every kernel bit-exact (the runtime checks resident outputs through
 * a copy), each kernel's bytes per tag and every tensor's In / Out bytes the estimator's byte for
 * byte; the estimate stays in *e, the RTL's In bytes of the skip H16[1], of its gradient dZ16[3],
 * of Z32[2], of H16[2], of dZ16[2] and of dX32[2] in in[0..5]. */
static void cnn_res_run(uint64_t cap, npu_est_kplan_t *e, uint64_t *in)
{
    npu_cfg_t c = rtl_cfg();
    npu_net_shape_t net;
    float *w[5], *b[5];
    char why[256];
    npu_step_run_t s;
    uint64_t seed = rtl_seed(97);
    npu_sim_t *sim = rtl_open(&c, 20, 0, seed);
    cr_assert_eq(npu_net_parse(k_net->spec, k_net->cv[0].H, k_net->cv[0].W, k_net->cv[0].C, &net, why, sizeof why), 0,
                 "%s", why);
    cr_assert_eq(npu_net_init(&net, seed, w, b), 0);
    /* the estimator's optimizer: its plan's kernels are the run's (a decay one int16 AXPBY cannot
     * hold is a MUL and an ADD, npu_step_sgd) */
    cr_assert_eq(npu_step_run_init_cnn(&s, &c, sim, k_net->cv, k_net->ncv, k_net->res, k_net->fc, 1, RB, NPU_STEP_NOMINAL_LR,
                                       NPU_STEP_NOMINAL_MU, NPU_STEP_NOMINAL_WD, 0, NULL, 50000000),
                 0, "%s", s.why);
    cr_assert_eq(npu_step_run_resident_ex(&s, 1, cap, k_overlap), 0, "%s", s.why);
    cnn_res_est(cap, e);
    char what[40];
    snprintf(what, sizeof what, "cap %llu", (unsigned long long)cap);
    npu_step_run_params(&s, w, b);
    cnn_train_steps(&s, RB, RC, 2, what);
    cr_assert_eq(s.res->ambiguous, 0);
    cr_assert_eq(e->nt, s.plan.nt);
    for (int k = 0; k < s.plan.nk; k++)
        for (int g = 0; g < NPU_NUM_TAGS; g++)
            cr_assert(s.last[k].rd[g] == e->k[k].rd[g] && s.last[k].wr[g] == e->k[k].wr[g],
                      "cap %llu: %s tag %d: RTL %llu / %llu, estimated %llu / %llu", (unsigned long long)cap,
                      e->k[k].name, g, (unsigned long long)s.last[k].rd[g], (unsigned long long)s.last[k].wr[g],
                      (unsigned long long)e->k[k].rd[g], (unsigned long long)e->k[k].wr[g]);
    for (int t = 0; t < s.plan.nt; t++) {
        cr_assert_eq(s.t_in[t], e->t[t].in, "cap %llu: %s In: RTL %llu, estimator %llu", (unsigned long long)cap,
                     e->t[t].name, (unsigned long long)s.t_in[t], (unsigned long long)e->t[t].in);
        cr_assert_eq(s.t_out[t], e->t[t].out, "cap %llu: %s Out: RTL %llu, estimator %llu", (unsigned long long)cap,
                     e->t[t].name, (unsigned long long)s.t_out[t], (unsigned long long)e->t[t].out);
    }
    in[0] = t_in_of(&s, "H16[1]");
    in[1] = t_in_of(&s, "dZ16[3]");
    in[2] = t_in_of(&s, "Z32[2]");
    in[3] = t_in_of(&s, "H16[2]");
    in[4] = t_in_of(&s, "dZ16[2]");
    in[5] = t_in_of(&s, "dX32[2]");
    g_res_cycles = s.fwd.cycles + s.bwd.cycles;
    for (int j = 0; j <= s.res->n_steps; j++)
        g_res_cycles += s.pre_cycles[j];
    cr_log_info("cap %llu: %d transfers, %d accesses demoted; H16[1] In %llu, dZ16[3] In %llu, Z32[2] In %llu, "
                "H16[2] In %llu, dZ16[2] In %llu", (unsigned long long)cap, s.res->nx, s.res->demoted,
                (unsigned long long)in[0], (unsigned long long)in[1], (unsigned long long)in[2],
                (unsigned long long)in[3], (unsigned long long)in[4]);
    npu_step_run_free(&s);
    npu_sim_close(sim);
    npu_net_params_free(&net, w, b);
}

/* The estimator's smallest SPM (bisected over words, the allocation granule, within the resident
 * bank) at which tensor `name`'s In bytes are at most `kept`. */
static uint64_t est_step(const char *name, uint64_t kept)
{
    static npu_est_kplan_t e;
    npu_cfg_t c = rtl_cfg();
    uint64_t word = (uint64_t)npu_cfg_word(&c), lo = word, hi = (uint64_t)c.spm_bank_words * word;
    cnn_res_est(lo, &e);
    cr_assert_gt(est_in(&e, name), kept, "one word of SPM keeps nothing of %s", name);
    while (hi - lo > word) { /* kept at hi, not at lo */
        uint64_t mid = (lo + hi) / 2 / word * word;
        cnn_res_est(mid, &e);
        *(est_in(&e, name) > kept ? &lo : &hi) = mid;
    }
    return hi;
}

/* cap(t) of plan p's tensor t: rows x resident row words (npu_gemm_res_words) x the word's bytes. */
static uint64_t tensor_cap(const npu_cfg_t *c, const npu_step_plan_t *p, int t)
{
    return (uint64_t)p->t[t].rows * npu_gemm_res_words(c, p->t[t].cols, p->t[t].width == 32) *
           (uint64_t)npu_cfg_word(c);
}

/* The capacity formula of kernel `kname` of plan p: its tensors resident at once (tensor_cap). */
static uint64_t kernel_caps(const npu_cfg_t *c, const npu_step_plan_t *p, const char *kname)
{
    uint64_t need = 0;
    for (int k = 0; k < p->nk; k++)
        for (int i = 0; p->k[k].kind == NPU_SK_VEC && !strcmp(p->k[k].name, kname) && i < p->k[k].v.nt; i++) {
            const npu_vk_tensor_t *v = &p->k[k].v.t[i];
            int t = v->load || v->store ? npu_step_tensor_find(p, v->name) : -1;
            need += t < 0 ? 0 : tensor_cap(c, p, t);
        }
    return need;
}

/* Tensor `name`'s traffic step (slot i of cnn_res_run's In bytes; in[i] its In with the whole
 * bank), the estimator's (est_step), on the RTL: one word below it the tensor is read from DRAM
 * again, at it not (every tensor's bytes the estimator's at both), and it is the capacity
 * formula `need` within a word. Returns the step. */
static uint64_t step_at_formula(const char *name, int i, const uint64_t *in, uint64_t need, uint64_t word,
                                npu_est_kplan_t *e)
{
    uint64_t below[6], hi = est_step(name, in[i]);
    cnn_res_run(hi - word, e, below);
    cr_assert_gt(below[i], in[i], "%s: one word below the step it is read again", name);
    cnn_res_run(hi, e, below);
    cr_assert_eq(below[i], in[i], "%s: at the step it is read from the SPM", name);
    cr_assert(hi + word >= need && hi <= need + word, "%s: the step at %llu B, the formula %llu B", name,
              (unsigned long long)hi, (unsigned long long)need);
    return hi;
}

/* Issue 16 acceptances 1 and 3 for a residual block on the RTL: the CNN's steps under the
 * scheduler's plan (compile/step/step_res.h: the conv kernels and transposes on the DRAM side,
 * planned below the resident bank; the vector kernels and the head's GEMMs on the resident copies).
 * With the whole bank the block's add reads the skip H16[1] from the SPM (its DRAM In at least one
 * whole read below the plain step's) and layer 1's gradient add the skip's gradient dZ16[3]. The
 * step: the estimator's smallest SPM (bisected over words, the allocation granule) at which H16[1]
 * is kept for the add; on the RTL one word below it H16[1] is read again and at it not, every
 * tensor's bytes the estimator's at both; the step equals the capacity formula (the add's tensors
 * and the skip resident at once, within a word). The same for dZ16[3] and layer 1's gradient add.
 * The convolutions' outputs stay on the DRAM side here (NPU_RES_NO_CONV_Y: with them resident, at
 * small the plan of fewer bytes keeps them rather than dZ16[3]; docs/estimator.md section 7.3). */
Test(step, cnn_resident_block_reuse)
{
    static npu_est_kplan_t e, plain;
    npu_cfg_t c = rtl_cfg();
    uint64_t in[6], word = (uint64_t)npu_cfg_word(&c);
    char why[256];
    k_overlap = K_FORMULA | NPU_RES_NO_CONV_Y | NPU_RES_NO_CONV_X | NPU_RES_NO_CONV_DY | NPU_RES_NO_CONV_DX |
                NPU_RES_NO_XT;
    cr_assert_eq(npu_estimate_step_cnn(&c, k_rcv, 4, k_rres, k_rfc, 1, RB, 0, &plain, why, sizeof why), 0, "%s", why);
    uint64_t h1 = est_in(&plain, "H16[1]"), g3 = est_in(&plain, "dZ16[3]");
    npu_step_plan_t p;
    k_plan(&c, &p);
    uint64_t hb = p.t[npu_step_tensor_find(&p, "H16[1]")].bytes, gb = p.t[npu_step_tensor_find(&p, "dZ16[3]")].bytes;
    /* the capacity formulas: an add's tensors resident at once */
    uint64_t need = kernel_caps(&c, &p, "fwd L3 bias_add_relu"), need_g = kernel_caps(&c, &p, "bwd L1 add_relu_grad_bias");
    npu_step_plan_free(&p);
    cnn_res_run(0, &e, in);
    cr_log_info("plain step: H16[1] In %llu, dZ16[3] In %llu (whole: %llu, %llu B)", (unsigned long long)h1,
                (unsigned long long)g3, (unsigned long long)hb, (unsigned long long)gb);
    cr_assert_leq(in[0] + hb, h1, "the block's add reads the skip from the SPM");
    cr_assert_leq(in[1] + gb, g3, "layer 1's add reads the skip's gradient from the SPM");
    uint64_t hi = step_at_formula("H16[1]", 0, in, need, word, &e); /* kept for the add */
    cr_log_info("the block-reuse step: H16[1] kept for the add from %llu bytes of SPM on (RTL and estimator); "
                "the capacity formula (the add's Z32[3], b32[3], H16[3] and the skip resident at once) %llu",
                (unsigned long long)hi, (unsigned long long)need);
    hi = step_at_formula("dZ16[3]", 1, in, need_g, word, &e); /* kept for layer 1's add_relu_grad_bias */
    cr_log_info("the gradient's block-reuse step: dZ16[3] kept for layer 1's add from %llu bytes of SPM on (RTL and "
                "estimator); the capacity formula (that add's seven tensors resident at once) %llu",
                (unsigned long long)hi, (unsigned long long)need_g);
}

/* Issue 16 acceptance 3, adjacent-layer reuse across a convolution on the RTL: layer 2's forward
 * convolution drains its output Z32[2] into resident SPM rows (no STORE: compile/conv/conv_split.h
 * npu_conv_split_res_out, driven by the scheduler's plan, compile/step/step_res.h) and the next
 * layer, the point-wise bias_relu, reads it there instead of from DRAM. With the whole bank Z32[2]'s
 * DRAM In is at least one whole read below the plain step's and its Out one write below; the
 * step: the estimator's smallest SPM at which Z32[2] is kept from the convolution to bias_relu is
 * the RTL's (one word below it Z32[2] is read again, at it not; every kernel bit-exact, every
 * tensor's bytes the estimator's at both) and equals the capacity formula, bias_relu's tensors
 * (Z32[2], b32[2], H16[2]) resident at once, within a word. The convolution's own buffers are
 * planned below the resident bank: planned on the whole SPM, its resident output rows would lie in
 * its own area, and the conv compiler refuses them. The convolutions' inputs stay on the DRAM side
 * here (NPU_RES_NO_CONV_X: the table of docs/estimator.md section 7.3 was measured so). */
Test(step, cnn_resident_conv_adjacent_reuse)
{
    static npu_est_kplan_t e, plain;
    npu_cfg_t c = rtl_cfg();
    uint64_t in[6], word = (uint64_t)npu_cfg_word(&c);
    char why[256];
    k_overlap = K_FORMULA | NPU_RES_NO_CONV_X | NPU_RES_NO_CONV_DY | NPU_RES_NO_CONV_DX | NPU_RES_NO_XT;
    cr_assert_eq(npu_estimate_step_cnn(&c, k_rcv, 4, k_rres, k_rfc, 1, RB, 0, &plain, why, sizeof why), 0, "%s", why);
    npu_step_plan_t p;
    k_plan(&c, &p);
    int z2 = npu_step_tensor_find(&p, "Z32[2]");
    cr_assert(z2 >= 0);
    uint64_t zb = p.t[z2].bytes, need = kernel_caps(&c, &p, "fwd L2 bias_relu");
    npu_step_plan_free(&p);
    uint64_t z_in = est_in(&plain, "Z32[2]"), z_out = plain.t[z2].out;
    cnn_res_run(0, &e, in);
    cr_log_info("Z32[2] (%llu B): plain In %llu Out %llu; with the whole bank In %llu Out %llu", (unsigned long long)zb,
                (unsigned long long)z_in, (unsigned long long)z_out, (unsigned long long)in[2],
                (unsigned long long)e.t[z2].out);
    cr_assert_leq(in[2] + zb, z_in, "bias_relu reads the convolution's output from the SPM");
    cr_assert_leq(e.t[z2].out + zb, z_out, "the convolution's output is not stored for bias_relu");
    uint64_t hi = step_at_formula("Z32[2]", 2, in, need, word, &e);
    cr_log_info("the adjacent-layer step: Z32[2] kept from the convolution to bias_relu from %llu bytes of SPM on "
                "(RTL and estimator); the capacity formula (bias_relu's Z32[2], b32[2], H16[2] resident at once) %llu",
                (unsigned long long)hi, (unsigned long long)need);
}

/* Issue 16 acceptance 3, adjacent-layer reuse across a convolution, the input side: layer 2's
 * bias_relu writes H16[2] into resident rows and layer 3's forward convolution copies its bands from
 * them (LOAD_SPMs, no LOAD from DRAM: compile/conv/conv_split.h npu_conv_split_res_in, driven by the
 * scheduler's plan). With the whole bank H16[2]'s DRAM In is one whole read below the plan's with
 * the inputs on the DRAM side (NPU_RES_NO_CONV_X; it is still read once by layer 3's fused
 * backward) and fwd L3 conv reads no X byte. The step: the estimator's smallest SPM at which H16[2]
 * is kept from bias_relu to the convolution is the RTL's (one word below it H16[2] is read again,
 * at it not; every kernel bit-exact, each kernel's bytes per tag and every tensor's bytes the
 * estimator's at both) and equals the capacity formula within a word: bias_relu's tensors resident
 * at once less Z32[2], which the scheduler demotes first (the largest access of a step that does
 * not fit), i.e. cap(H16[2]) + cap(b32[2]); the convolution's own (H16[2], its output Z32[3]
 * demoted) is less. */
Test(step, cnn_resident_conv_input_reuse)
{
    static npu_est_kplan_t e, nox;
    npu_cfg_t c = rtl_cfg();
    uint64_t in[6], word = (uint64_t)npu_cfg_word(&c);
    uint64_t nox_in[6], nox_cycles;
    k_overlap = K_FORMULA | NPU_RES_NO_CONV_X | NPU_RES_NO_CONV_DY | NPU_RES_NO_CONV_DX | NPU_RES_NO_XT;
    cnn_res_run(0, &nox, nox_in);
    nox_cycles = g_res_cycles;
    k_overlap = K_FORMULA | NPU_RES_NO_CONV_DY | NPU_RES_NO_CONV_DX | NPU_RES_NO_XT;
    npu_step_plan_t p;
    k_plan(&c, &p);
    int h2 = npu_step_tensor_find(&p, "H16[2]"), z2 = npu_step_tensor_find(&p, "Z32[2]");
    cr_assert(h2 >= 0 && z2 >= 0);
    uint64_t hb = p.t[h2].bytes;
    uint64_t need = kernel_caps(&c, &p, "fwd L2 bias_relu") - tensor_cap(&c, &p, z2);
    npu_step_plan_free(&p);
    cnn_res_run(0, &e, in);
    uint64_t h_nox = est_in(&nox, "H16[2]"), all_nox = 0, all = 0;
    for (int t = 0; t < e.nt; t++) {
        all_nox += nox.t[t].in + nox.t[t].out;
        all += e.t[t].in + e.t[t].out;
    }
    cr_log_info("H16[2] (%llu B): In %llu with the inputs on the DRAM side, %llu with the whole bank; the step "
                "(RTL) %llu -> %llu bytes, %llu -> %llu cycles", (unsigned long long)hb, (unsigned long long)h_nox,
                (unsigned long long)in[3], (unsigned long long)all_nox, (unsigned long long)all,
                (unsigned long long)nox_cycles, (unsigned long long)g_res_cycles);
    cr_assert_leq(in[3] + hb, h_nox, "the convolution copies H16[2] from the SPM");
    for (int k = 0; k < e.nk; k++)
        if (!strcmp(e.k[k].name, "fwd L3 conv"))
            cr_assert_eq(e.k[k].rd[NPU_TAG_X], 0, "fwd L3 conv reads X from DRAM");
    uint64_t hi = step_at_formula("H16[2]", 3, in, need, word, &e);
    cr_log_info("the adjacent-layer step, input side: H16[2] kept from bias_relu to layer 3's convolution from "
                "%llu bytes of SPM on (RTL and estimator); the capacity formula (bias_relu's b32[2], H16[2] "
                "resident at once, Z32[2] demoted) %llu", (unsigned long long)hi, (unsigned long long)need);
}

/* The conv -> normalisation-like -> ReLU chain on the RTL (issue 16 acceptance 1; ref/net_ref.h
 * NPU_NET_NORM, compile/step/step_plan.h): cnn:c4n,c4,c4n+1,fc10 on 8 x 8 images (a normalised
 * layer, a plain one, a normalised one with a residual connection from the first), two steps with
 * random DRAM stalls: every kernel bit-exact (norm_relu's VMUL by G16, norm_relu_grad,
 * norm_scale_grad's VMULs and sums, norm_update), at or above its roofline, each kernel's DRAM
 * bytes per tag the estimator's (npu_estimate_step_cnn) byte for byte; at int16 configurations in
 * fixed point at the nominal static scales (step_scale.h). */
Test(step, cnn_norm_bytes_as_estimated)
{
    npu_cfg_t c = rtl_cfg();
    enum { B = 4, C = 10, STEPS = 2 };
    static npu_est_kplan_t e;
    npu_net_shape_t net;
    npu_conv_t cv[3] = {{B, 1, 8, 8, 4, 3, 3, 1, 1, 1, 0}, {B, 4, 8, 8, 4, 3, 3, 1, 1, 1, 0},
                        {B, 4, 8, 8, 4, 3, 3, 1, 1, 1, 0}};
    int fc[2] = {256, C}, res[3] = {NPU_NET_NORM, 0, NPU_NET_NORM | 2};
    float *w[4], *b[4];
    char why[256];
    npu_step_run_t s;
    uint64_t seed = rtl_seed(94);
    npu_sim_t *sim = rtl_open(&c, 20, 0, seed);
    cr_assert_eq(npu_net_parse("cnn:c4n,c4,c4n+1,fc10", 8, 8, 1, &net, why, sizeof why), 0, "%s", why);
    cr_assert(net.res[0] == res[0] && net.res[1] == res[1] && net.res[2] == res[2]);
    int rc = npu_step_run_init_cnn(&s, &c, sim, cv, 3, res, fc, 1, B, 0.1f, 0.9f, 1e-4f, 0, NULL, 50000000);
    cr_assert_eq(rc, 0, "%s", s.why);
    cr_assert_eq(npu_net_init(&net, seed, w, b), 0);
    cr_assert_eq(npu_estimate_step_cnn(&c, cv, 3, res, fc, 1, B, 0, &e, why, sizeof why), 0, "%s", why);
    cr_assert_eq(e.nk, s.plan.nk);
    char what[40];
    snprintf(what, sizeof what, "seed %llu", (unsigned long long)seed);
    npu_step_run_params(&s, w, b);
    cnn_train_steps(&s, B, C, STEPS, what);
    roofline(&c, &s);
    int vmuls = 0;
    for (int k = 0; k < s.plan.nk; k++)
        for (int o = 0; s.plan.k[k].kind == NPU_SK_VEC && o < s.plan.k[k].v.nop; o++)
            vmuls += s.plan.k[k].v.op[o].vop == NPU_VOP_VMUL;
    cr_assert_eq(vmuls, 6, "three VMULs per normalised layer");
    uint64_t all = bytes_as_estimated(&s, &e); /* per tensor: acceptance 1 */
    cr_log_info("conv -> norm -> ReLU: %d tensors, %llu DMA bytes per step, each tensor's the estimator's", s.plan.nt,
                (unsigned long long)all);
    npu_step_run_free(&s);
    npu_sim_close(sim);
    npu_net_params_free(&net, w, b);
}

/* Issue 16 acceptance 3 for the fused convolution backward's dY: layer 2's relu_grad_bias writes
 * dZ16[2] into resident rows and layer 2's fused backward (dX and dW^T) reads it there in place as
 * its dY band buffer (compile/conv/conv_bwd.h npu_conv_bwd_res_dy: no LOAD, no copy), two kernels
 * later (layer 3's SGD update and its transpose run between). With the whole bank dZ16[2]'s DRAM
 * In is one whole read below the plan's with dY on the DRAM side (NPU_RES_NO_CONV_DY) and bwd L2
 * conv_bwd reads no dY byte; every kernel bit-exact, each kernel's bytes per tag and every
 * tensor's In and Out bytes the estimator's. The step: the estimator's smallest SPM at which
 * dZ16[2] is kept to the backward is the RTL's (one word below it dZ16[2] is read again, at it
 * not) and equals the capacity formula within a word: cap(dZ16[2]) + the SGD update's tensors
 * resident at once (W16[3], W32[3], VW[3], dW32[3]), the largest need of the stretch dZ16[2] must
 * survive (relu_grad_bias's other accesses are demoted first, the transpose is DRAM side). */
Test(step, cnn_resident_conv_dy_reuse)
{
    static npu_est_kplan_t e, nody;
    npu_cfg_t c = rtl_cfg();
    uint64_t in[6], nody_in[6], nody_cycles, word = (uint64_t)npu_cfg_word(&c), all_nody = 0, all = 0;
    k_overlap = K_FORMULA | NPU_RES_NO_CONV_DY | NPU_RES_NO_CONV_DX | NPU_RES_NO_XT;
    cnn_res_run(0, &nody, nody_in);
    nody_cycles = g_res_cycles;
    k_overlap = K_FORMULA | NPU_RES_NO_CONV_DX | NPU_RES_NO_XT;
    npu_step_plan_t p;
    k_plan(&c, &p);
    int d2 = npu_step_tensor_find(&p, "dZ16[2]");
    cr_assert(d2 >= 0);
    uint64_t db = p.t[d2].bytes, need = tensor_cap(&c, &p, d2) + kernel_caps(&c, &p, "update L3 sgd");
    npu_step_plan_free(&p);
    cnn_res_run(0, &e, in);
    for (int t = 0; t < e.nt; t++) {
        all_nody += nody.t[t].in + nody.t[t].out;
        all += e.t[t].in + e.t[t].out;
    }
    cr_log_info("dZ16[2] (%llu B): In %llu with dY on the DRAM side, %llu with the whole bank; the step (RTL) %llu -> "
                "%llu bytes, %llu -> %llu cycles", (unsigned long long)db, (unsigned long long)nody_in[4],
                (unsigned long long)in[4], (unsigned long long)all_nody, (unsigned long long)all,
                (unsigned long long)nody_cycles, (unsigned long long)g_res_cycles);
    cr_assert_leq(in[4] + db, nody_in[4], "layer 2's fused backward reads dZ16[2] from the SPM");
    int seen = 0;
    for (int k = 0; k < e.nk; k++)
        if (!strcmp(e.k[k].name, "bwd L2 conv_bwd")) {
            cr_assert_eq(e.k[k].rd[NPU_TAG_DY], 0, "bwd L2 conv_bwd reads dY from DRAM");
            seen = 1;
        }
    cr_assert(seen);
    uint64_t hi = step_at_formula("dZ16[2]", 4, in, need, word, &e);
    cr_log_info("the dY step: dZ16[2] kept from relu_grad_bias to layer 2's fused backward from %llu bytes of SPM on "
                "(RTL and estimator); the capacity formula (cap(dZ16[2]) + update L3 sgd's tensors) %llu",
                (unsigned long long)hi, (unsigned long long)need);
}

/* Issue 16, adjacent-layer reuse inside the backward across a convolution, the output side: layer
 * 3's fused backward drains dX32[2] into resident SPM rows (compile/conv/conv_bwd.h
 * npu_conv_bwd_res_dx: the dX tile's drains at the rows' pitch, no STORE) and layer 2's
 * relu_grad_bias reads it there. With the whole bank dX32[2]'s DRAM In and Out are each at least
 * one whole tensor below the plan's with dX on the DRAM side (NPU_RES_NO_CONV_DX) and bwd L3
 * conv_bwd writes no dX byte; every kernel bit-exact (the runtime checks the resident dX through a
 * copy), each kernel's bytes per tag and every tensor's bytes the estimator's. The step: the
 * estimator's smallest SPM at which dX32[2] is not read from DRAM is the RTL's (one word below
 * read again, at it not) and equals, within a word, relu_grad_bias's tensors resident at once
 * (dX32[2], Z32[2], dZ16[2], b32[2], db32[2]) plus cap(dZ16[3]), the residual block's gradient,
 * which stays resident across that kernel for layer 1's add (it was dY of the backward before).
 * At S > 2 (small) the plan with the whole bank keeps other dX32 but not dX32[2] (the scheduler
 * spends the bank on other tensors), so there the test asserts only that the step moves fewer
 * bytes and some fused backward drains its dX into the SPM; the step is shown at S = 2 (tiny). */
Test(step, cnn_resident_conv_dx_reuse)
{
    static npu_est_kplan_t e, nodx;
    npu_cfg_t c = rtl_cfg();
    uint64_t in[6], nodx_in[6], nodx_cycles, all_nodx = 0, all = 0, word = (uint64_t)npu_cfg_word(&c);
    k_overlap = K_FORMULA | NPU_RES_NO_CONV_DX | NPU_RES_NO_XT;
    cnn_res_run(0, &nodx, nodx_in);
    nodx_cycles = g_res_cycles;
    k_overlap = K_FORMULA | NPU_RES_NO_XT;
    npu_step_plan_t p;
    k_plan(&c, &p);
    int x2 = npu_step_tensor_find(&p, "dX32[2]"), g3 = npu_step_tensor_find(&p, "dZ16[3]");
    cr_assert(x2 >= 0 && g3 >= 0);
    uint64_t xb = p.t[x2].bytes, need = kernel_caps(&c, &p, "bwd L2 relu_grad_bias") + tensor_cap(&c, &p, g3);
    npu_step_plan_free(&p);
    cnn_res_run(0, &e, in);
    for (int t = 0; t < e.nt; t++) {
        all_nodx += nodx.t[t].in + nodx.t[t].out;
        all += e.t[t].in + e.t[t].out;
    }
    cr_log_info("dX32[2] (%llu B): In %llu Out %llu with dX on the DRAM side, In %llu Out %llu with the whole bank; "
                "the step (RTL) %llu -> %llu bytes, %llu -> %llu cycles", (unsigned long long)xb,
                (unsigned long long)nodx_in[5], (unsigned long long)nodx.t[x2].out, (unsigned long long)in[5],
                (unsigned long long)e.t[x2].out, (unsigned long long)all_nodx, (unsigned long long)all,
                (unsigned long long)nodx_cycles, (unsigned long long)g_res_cycles);
    cr_assert_lt(all, all_nodx, "dX drained into the SPM saves bytes");
    if (c.s > 2) { /* small: the plan with the whole bank keeps other dX32, not dX32[2] */
        int kept = 0;
        for (int k = 0; k < e.nk; k++)
            kept += !strncmp(e.k[k].name, "bwd L", 5) && strstr(e.k[k].name, "conv_bwd") && nodx.k[k].wr[NPU_TAG_DX] &&
                    !e.k[k].wr[NPU_TAG_DX];
        cr_assert_gt(kept, 0, "no fused backward drains its dX into the SPM");
        cr_log_info("S = %d: %d backward(s) drain dX into the SPM (dX32[2]'s formula %llu B)", c.s, kept,
                    (unsigned long long)need);
        return;
    }
    cr_assert_leq(in[5] + xb, nodx_in[5], "relu_grad_bias reads dX32[2] from the SPM");
    cr_assert_leq(e.t[x2].out + xb, nodx.t[x2].out, "the backward does not store dX32[2]");
    int seen = 0;
    for (int k = 0; k < e.nk; k++)
        if (!strcmp(e.k[k].name, "bwd L3 conv_bwd")) {
            cr_assert_eq(e.k[k].wr[NPU_TAG_DX], 0, "bwd L3 conv_bwd writes dX to DRAM");
            seen = 1;
        }
    cr_assert(seen);
    uint64_t hi = step_at_formula("dX32[2]", 5, in, need, word, &e);
    cr_log_info("the dX step: dX32[2] kept from layer 3's fused backward to relu_grad_bias from %llu bytes of SPM on "
                "(RTL and estimator); the capacity formula (relu_grad_bias's tensors + cap(dZ16[3])) %llu",
                (unsigned long long)hi, (unsigned long long)need);
}

/* The X bytes bwd L<l> conv_bwd reads from DRAM in estimate e. */
static uint64_t bwd_x_rd(const npu_est_kplan_t *e, int l)
{
    char name[40];
    snprintf(name, sizeof name, "bwd L%d conv_bwd", l);
    for (int k = 0; k < e->nk; k++)
        if (!strcmp(e->k[k].name, name))
            return e->k[k].rd[NPU_TAG_X];
    cr_assert_fail("no kernel %s", name);
    return 0;
}

/* Whether plan r (of p, estimated in e) reads tensor t from DRAM for the backward: a backward
 * kernel's DRAM-side read (its bytes in e, split by the plan's tags) or a load whose reader is a
 * backward kernel. */
static int bwd_refetch(const npu_step_plan_t *p, const npu_step_res_t *r, const npu_est_kplan_t *e, int t)
{
    for (int i = 0; i < p->nk; i++) {
        uint64_t in[NPU_STEP_MAX_TENSORS] = {0}, out[NPU_STEP_MAX_TENSORS] = {0};
        npu_step_res_split(r, i, e->k[i].rd, e->k[i].wr, in, out);
        if (p->k[i].phase == NPU_SK_BWD && in[t])
            return 1;
    }
    for (int x = 0; x < r->nx; x++) {
        int k = npu_step_res_kernel(p, r->x[x].for_step);
        if (!r->x[x].store && r->x[x].t == t && k >= 0 && p->k[k].phase == NPU_SK_BWD)
            return 1;
    }
    return 0;
}

/* Of k_net's activations X16, H16[1..upto-1] (the conv inputs the fused backwards of layers 1..ncv
 * read as X; upto = ncv + 1 adds the head's input, which its dW GEMM reads), a bit per tensor (bit
 * 0: X16, bit l: H16[l]) re-fetched for the backward under the plan with the scheduler given cap
 * bytes (the estimator's, e; the plan's residency in r). */
static unsigned refetched_upto(const npu_cfg_t *c, uint64_t cap, npu_est_kplan_t *e, int upto)
{
    npu_step_plan_t p;
    npu_step_res_t r;
    unsigned bits = 0;
    char name[16];
    k_plan(c, &p);
    cnn_res_est(cap, e);
    cr_assert_eq(npu_est_res_plan(c, &p, 1, cap, k_overlap, &r), 0, "%s", r.why);
    for (int l = 0; l < upto; l++) {
        snprintf(name, sizeof name, l ? "H16[%d]" : "X16", l);
        bits |= (unsigned)bwd_refetch(&p, &r, e, npu_step_tensor_find(&p, name)) << l;
    }
    npu_step_res_free(&r);
    npu_step_plan_free(&p);
    return bits;
}

/* The conv inputs alone (refetched_upto to ncv). */
static unsigned refetched(const npu_cfg_t *c, uint64_t cap, npu_est_kplan_t *e)
{
    return refetched_upto(c, cap, e, k_net->ncv);
}

/* cnn_resident_conv_xt_reuse: with the whole bank (at least the formula's `need` bytes) the batch
 * X16 and H16[1] are kept for the fused backwards of layers 1 and 2, not without X^T reuse; a
 * traffic step of H16[1] is the RTL's. */
static void xt_formula_clause(const npu_cfg_t *cc, uint64_t need)
{
    static npu_est_kplan_t e, nox;
    npu_cfg_t c = *cc;
    uint64_t in[6], at = 0, word = (uint64_t)npu_cfg_word(&c); /* at 0: the whole bank */
    k_overlap |= NPU_RES_NO_XT;
    unsigned all = (2u << k_net->ncv) - 1; /* X16, H16[1] and the head's input H16[2] */
    cr_assert_eq(refetched_upto(&c, at, &nox, k_net->ncv + 1), all,
                 "X16, H16[1] and the head's input read from DRAM for the backward without X^T reuse");
    cnn_res_run(at, &nox, in);
    uint64_t nox_cycles = g_res_cycles, nox_in = in[0];
    k_overlap &= ~NPU_RES_NO_XT;
    cr_assert_eq(refetched_upto(&c, at, &e, k_net->ncv + 1), 0u,
                 "an activation (X16, H16[1], the head's input) re-fetched for the backward with the whole bank");
    for (int l = 1; l <= 2; l++)
        cr_assert_eq(bwd_x_rd(&e, l), 0, "bwd L%d conv_bwd reads X from DRAM (its X^T not LOAD_SPMed)", l);
    cnn_res_run(at, &e, in);
    cr_assert_lt(in[0], nox_in, "H16[1]'s DRAM In");
    cr_log_info("%s, the whole bank: H16[1] kept for layer 2's fused backward (X^T LOAD_SPMed): its In %llu -> %llu B, "
                "the step (RTL) %llu -> %llu cycles", k_net->spec, (unsigned long long)nox_in,
                (unsigned long long)in[0], (unsigned long long)nox_cycles, (unsigned long long)g_res_cycles);
    /* a traffic step of it (the estimator's, bisected: the scheduler's traffic is not monotone in the
     * SPM size, docs/estimator.md section 7.3) is the RTL's too: one word below re-fetched, at it not */
    uint64_t kept = in[0], hi = est_step("H16[1]", kept), below[6];
    cnn_res_run(hi - word, &e, below);
    cr_assert_gt(below[0], kept, "H16[1]: one word below the step it is re-fetched");
    cnn_res_run(hi, &e, below);
    cr_assert_eq(below[0], kept, "H16[1]: at the step it is kept");
    cr_log_info("a forward-backward step: H16[1] kept to layer 2's fused backward from %llu B of SPM (RTL and "
                "estimator; the formula %llu B)", (unsigned long long)hi, (unsigned long long)need);
    k_net = &k_nets[0];
}

/* Issue 16 acceptance 3, forward-backward reuse of the activations (the plans of least traffic,
 * NPU_RES_BY_TRAFFIC): a fused backward makes its X^T from X's resident rows by LOAD_SPMs
 * (compile/conv/conv_bwd.h npu_conv_bwd_res_x) and the head's dW GEMM its transposed A likewise,
 * instead of transposed LOADs from DRAM (NPU_RES_NO_XT keeps every transposed read there). The
 * network: cnn:c4,c8s2,fc10 at S = 2, cnn:c4,c16s2,fc10 on 6x6 images at S = 8 (the head's input
 * in whole SPM words either way, so it may stay resident). The whole bank holds the capacity
 * formula sum(cap(Y) + cap(W)) (Y: each convolution's outputs Z32[l], H16[l] and the batch X16;
 * W: every layer's W16[l]); there no activation (X16, H16[1], the head's input H16[2]) is read
 * from DRAM for the backward, by a kernel or by a load, and the fused backwards read no X byte,
 * on the RTL (each kernel's bytes per tag and every tensor's the estimator's: cnn_res_run) and in
 * the estimator; with NPU_RES_NO_XT all three are re-fetched. A traffic step of H16[1] (the
 * estimator's bisection) is the RTL's, one word below re-fetched, at it not. The scheduler's
 * traffic is not monotone in the SPM size (docs/estimator.md section 7.3), so the clause is
 * checked with the whole bank. At S = 8 it needs bypass (NPU_RES_BYPASS, an option the choice
 * takes): with the head's update resident Belady wrote the activations back for it.
 * cnn:c4,c4,c4+1,c4s2,fc10, whose tensors the bank does not hold: over the estimator's SPM sizes
 * from one word to the bank the conv inputs kept for the backward are always those nearest the
 * loss (X16 first out, then H16[l] kept implies H16[l + 1] kept), and at a size that keeps some but
 * not all the RTL moves the estimator's bytes. */
Test(step, cnn_resident_conv_xt_reuse)
{
    static npu_est_kplan_t e;
    npu_cfg_t c = rtl_cfg();
    uint64_t in[6], word = (uint64_t)npu_cfg_word(&c), bank = (uint64_t)c.spm_bank_words * word, need = 0;
    npu_step_plan_t p;
    k_net = 2 * c.s > 8 ? &k_nets[2] : &k_nets[1]; /* the head's input in whole SPM words */
    k_overlap = NPU_RES_PREFETCH | NPU_RES_LOOKAHEAD | NPU_RES_BY_TRAFFIC;
    k_plan(&c, &p);
    for (int t = 0; t < p.nt; t++) {
        const char *n = p.t[t].name;
        int y = (!strncmp(n, "Z32[", 4) || !strncmp(n, "H16[", 4)) && atoi(n + 4) <= k_net->ncv;
        need += y || !strcmp(n, "X16") || !strncmp(n, "W16[", 4) ? tensor_cap(&c, &p, t) : 0;
    }
    npu_step_plan_free(&p);
    cr_log_info("%s: sum(cap(Y) + cap(W)) %llu B, the bank %llu B", k_net->spec, (unsigned long long)need,
                (unsigned long long)bank);
    cr_assert_leq(need, bank, "the formula within the resident bank");
    xt_formula_clause(&c, need);

    /* less SPM than the tensors: the conv inputs kept are those nearest the loss */
    k_net = &k_nets[0];
    uint64_t partial = 0;
    for (uint64_t cap = word; cap <= bank; cap += 64 * word) {
        unsigned bits = refetched(&c, cap, &e);
        for (int l = 0; l + 1 < k_net->ncv; l++) /* l = 0: X16, the farthest from the loss */
            cr_assert(!((bits >> (l + 1)) & 1) || ((bits >> l) & 1),
                      "at %llu B conv input %d kept for the backward, %d nearer the loss not", (unsigned long long)cap,
                      l, l + 1);
        partial = !partial && bits && bits != 0xFu ? cap : partial;
    }
    cr_assert_gt(partial, 0, "no SPM size keeps some conv inputs but not all");
    cnn_res_run(partial, &e, in); /* the RTL's bytes: the estimator's */
    cr_log_info("%s at %llu B of SPM: conv inputs re-fetched for the backward (bit 0: X16, bit l: H16[l]) 0x%x", k_net->spec,
                (unsigned long long)partial, refetched(&c, partial, &e));
}
