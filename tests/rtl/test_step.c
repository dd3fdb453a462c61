/*
 * test_step.c - whole training steps on the RTL (run/step_run.h): a 3-layer MLP with widths and
 * a batch that are not multiples of 2S, five steps with random DRAM stalls, every kernel (GEMMs
 * and vector kernels) bit-exact against the golden image and its counters as the program says
 * (the runtime checks both after each kernel), the loss falling, the host writing only the
 * batch and the loss gradient, every kernel at or above its roofline. At int16 configurations
 * the same step in fixed point with the nominal static scales (compile/step/step_scale.h).
 * mlp_steps_resident: the same steps with tensors kept in the SPM between kernels (the residency
 * plan of compile/step/step_res.h, one bank resident): still bit-exact, every whole-tensor
 * transfer's DRAM bytes on the RTL equal to the scheduler's for that tensor, and the step's DRAM
 * bytes well below those of the plain step. resident_bytes_exact (issue 16 acceptance 1): for three
 * MLPs, every tensor's DRAM In and Out bytes on the RTL (whole-tensor transfers and the kernels'
 * counters, split by tag) equal the estimator's (npu_estimate_step_res) byte for byte.
 */
#include <math.h>

#include "rtl_common.h"
#include "ref/net_ref.h"
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
    for (int l = 0; l < 3; l++) {
        size_t n = (size_t)dims[l] * dims[l + 1];
        w[l] = malloc(n * sizeof(float));
        b[l] = calloc((size_t)dims[l + 1], sizeof(float));
        cr_assert(w[l] && b[l]);
        for (size_t i = 0; i < n; i++)
            w[l][i] = ((float)(rtl_rand(&x) % 2001) - 1000.0f) / 1000.0f / sqrtf((float)dims[l]);
    }
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
        for (int t = 0; res_banks && t < s.plan.nt; t++) {
            cr_assert_eq(s.res_rd[t], s.res->r.tensor[t].in_bytes, "%s in", s.plan.t[t].name);
            cr_assert_eq(s.res_wr[t], s.res->r.tensor[t].out_bytes, "%s out", s.plan.t[t].name);
        }
    }
    cr_assert_eq(s.checked, 5u * (uint64_t)s.plan.nk);
    roofline(&c, &s);
    cr_assert_lt(loss, 0.95 * first, "loss %g after 5 steps, %g at first", loss, first);
    uint64_t bytes = step_bytes(&s);
    npu_step_run_free(&s);
    npu_sim_close(sim);
    for (int l = 0; l < 3; l++) {
        free(w[l]);
        free(b[l]);
    }
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
    for (int l = 0; l < L; l++) {
        size_t n = (size_t)dims[l] * dims[l + 1];
        w[l] = malloc(n * sizeof(float));
        b[l] = calloc((size_t)dims[l + 1], sizeof(float));
        cr_assert(w[l] && b[l]);
        for (size_t i = 0; i < n; i++)
            w[l][i] = ((float)(rtl_rand(&x) % 2001) - 1000.0f) / 1000.0f / sqrtf((float)dims[l]);
    }
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
    cr_log_info("%d-layer MLP, batch %d, %llu of %llu bytes: %llu tensor bytes per step, %d transfers, %d accesses "
                "demoted", L, B, (unsigned long long)s.res->cap_bytes,
                (unsigned long long)(s.res->words - s.res->limit) * npu_cfg_beat(&c), (unsigned long long)all,
                s.res->nx, s.res->demoted);
    npu_step_run_free(&s);
    npu_sim_close(sim);
    for (int l = 0; l < L; l++) {
        free(w[l]);
        free(b[l]);
    }
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
    uint64_t word = (uint64_t)npu_cfg_beat(&c), area = (uint64_t)c.spm_bank_words * word, lo = 0, hi = area;
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
