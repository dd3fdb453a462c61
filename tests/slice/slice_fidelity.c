/*
 * slice_fidelity.c - the slicing stage's cost model against the RTL (issue 14, acceptance 5):
 * for three GEMM layers, 50 fitting candidates each (--pick N: N; tile sizes, loop order and
 * resident band (none or the one the order allows, slice.h); of the three core splits the
 * cheapest, as the search keeps it), spread evenly over the predicted cycles,
 * each run on the Verilated NPU with the FlexSA policy (`npu_gemm_run_plan`, bit-exact). Prints
 * predicted and measured cycles, and per layer and overall the median and max |error| and the
 * Spearman rank correlation. Exits 1 when the acceptance (median <= 10%, max <= 25%,
 * Spearman >= 0.9 on every layer) is not met, 2 when a run fails. With --all (small layers) every
 * fitting candidate runs, and the pick (least predicted cycles, the search's choice) must also be
 * within 5% of the best measured (acceptance 6).
 *   build/<config>/slice_fidelity [--burst|--noburst] [--all] [--pick N] [--tiles m,n,k] [--dram-bw B]
 *                                 [--policy 1g1c|1g4c|flexsa] [M,N,K ...]
 * --policy costs (slice_cost.h npu_slice_gemm_compute) and runs the candidates under that mapping
 * policy (default FlexSA).
 * --tiles keeps only the candidates with those tiles (both loop orders, with and without a
 * band); --dram-bw costs and runs them at that DRAM bandwidth (the slicing costs retimed as
 * `npu --dram-bw` does).
 * `make test` runs a quick representative (make slice-fidelity-quick: smaller layers, --pick 12).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/gemm/flexsa_mode.h"
#include "compile/gemm/gemm_emit.h"
#include "compile/gemm/gemm_tiling.h"
#include "compile/slice/slice.h"
#include "npu_params.h"
#include "npu_sim.h"
#include "ref/golden.h"
#include "run/flexsa_report.h"
#include "run/runtime.h"

static int pick = 50; /* candidates run per layer */
static int64_t only[3];  /* --tiles m,n,k: only the candidates with these tiles (0: all) */
static int emit = NPU_EMIT_FLEXSA; /* --policy: the emitter's modes (NPU_EMIT_*) */
#define MAXC 200000
#define MAXALL 4000 /* runs over all layers */

typedef struct cand { npu_slice_plan_t p; double pred, meas; } cand_t;

static int by_pred(const void *a, const void *b)
{
    double x = ((const cand_t *)a)->pred, y = ((const cand_t *)b)->pred;
    return x < y ? -1 : x > y;
}

/* Every (tiles, order, band) candidate that fits the SPM and the GEMM emitter, its cheapest split. */
static int enumerate(const npu_cfg_t *cfg, const npu_slice_cost_t *k, int M, int N, int K, cand_t *out)
{
    int64_t opt[3][256];
    int nopt[3], n = 0, ext[3] = {M, N, K};
    for (int d = 0; d < 3; d++)
        nopt[d] = npu_slice_tile_opts(ext[d], 2 * cfg->s, opt[d], 256);
    for (int a = 0; a < nopt[0]; a++)
        for (int b = 0; b < nopt[1]; b++)
            for (int c = 0; c < nopt[2]; c++)
                for (int ob = 0; ob < NPU_SLICE_ORDERS * NPU_SLICE_BANDS && n < MAXC; ob++) {
                    int order = ob / NPU_SLICE_BANDS, band = ob % NPU_SLICE_BANDS;
                    int64_t tile[3] = {opt[0][a], opt[1][b], opt[2][c]};
                    npu_slice_plan_t best, p;
                    npu_gemm_plan_t g;
                    int found = 0;
                    for (int split = 0; split < NPU_SLICE_SPLITS; split++)
                        if (npu_slice_eval_band(cfg, k, NPU_SLICE_GEMM, NULL, M, N, K, tile, split, order, band,
                                                &p) == 0 &&
                            (!found || p.cycles < best.cycles)) {
                            best = p;
                            found = 1;
                        }
                    if (only[0] && (tile[0] != only[0] || tile[1] != only[1] || tile[2] != only[2]))
                        found = 0;
                    if (found && npu_gemm_plan_from_slice(cfg, &best, M, N, K, emit == NPU_EMIT_1G4C, &g) == 0) {
                        out[n].p = best;
                        out[n++].pred = (double)best.cycles / 65536.0;
                    }
                }
    return n;
}

static void ranks(const double *v, int n, double *r)
{
    for (int i = 0; i < n; i++) {
        int less = 0, eq = 0;
        for (int j = 0; j < n; j++) {
            less += v[j] < v[i];
            eq += v[j] == v[i];
        }
        r[i] = less + (eq + 1) / 2.0; /* ties: the mean rank */
    }
}

static double spearman(const cand_t *c, int n)
{
    double *a = calloc((size_t)n * 4, sizeof *a), *ra = a + n, *b = a + 2 * n, *rb = a + 3 * n;
    double ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;
    if (!a)
        return 0;
    for (int i = 0; i < n; i++) {
        a[i] = c[i].pred;
        b[i] = c[i].meas;
    }
    ranks(a, n, ra);
    ranks(b, n, rb);
    for (int i = 0; i < n; i++) {
        ma += ra[i] / n;
        mb += rb[i] / n;
    }
    for (int i = 0; i < n; i++) {
        sab += (ra[i] - ma) * (rb[i] - mb);
        saa += (ra[i] - ma) * (ra[i] - ma);
        sbb += (rb[i] - mb) * (rb[i] - mb);
    }
    free(a);
    return saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : 1.0;
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* |error| statistics of c[0..n): median and max into *med, *max. */
static void errors(const cand_t *c, int n, double *med, double *max)
{
    double *e = malloc(sizeof *e * (size_t)n);
    *max = *med = 0;
    if (!e || n < 1) {
        free(e);
        return;
    }
    for (int i = 0; i < n; i++) {
        e[i] = fabs(c[i].pred - c[i].meas) / c[i].meas;
        *max = e[i] > *max ? e[i] : *max;
    }
    qsort(e, (size_t)n, sizeof *e, by_double);
    *med = n % 2 ? e[n / 2] : (e[n / 2 - 1] + e[n / 2]) / 2;
    free(e);
}

/* Runs candidate c on a fresh model; the measured cycles, or -1. */
static double run(const npu_cfg_t *cfg, int M, int N, int K, cand_t *c)
{
    npu_dram_timing_t t;
    npu_gemm_plan_t g;
    npu_gemm_report_t rep;
    int16_t *A = malloc(sizeof *A * (size_t)M * K), *B = malloc(sizeof *B * (size_t)K * N);
    double cyc = -1;
    t = npu_dram_timing_of(cfg);
    npu_sim_t *s = npu_sim_open(&t);
    npu_random_operands(M, N, K, 7, A, B);
    npu_gemm_plan_from_slice(cfg, &c->p, M, N, K, emit == NPU_EMIT_1G4C, &g);
    if (s && npu_gemm_run_plan(cfg, s, &g, A, B, emit, NULL, 100000000, &rep) == NPU_GEMM_PASS)
        cyc = (double)rep.run.cnt[NPU_CNT_cycles];
    else
        fprintf(stderr, "slice_fidelity: %dx%dx%d tiles %lld,%lld,%lld: %s %s\n", M, N, K,
                (long long)c->p.tile[0], (long long)c->p.tile[1], (long long)c->p.tile[2],
                npu_gemm_rc_name(rep.rc), rep.host_msg);
    npu_gemm_report_free(&rep);
    if (s)
        npu_sim_close(s);
    free(A);
    free(B);
    return cyc;
}

/* One layer: `pick` candidates spread over the predicted cycles, run; 1 if it meets the bounds,
 * 0 if not, -1 if a run failed. Appends its candidates to all[*na]. */
static int layer(const npu_cfg_t *cfg, const npu_slice_cost_t *k, int M, int N, int K, int every, cand_t *all,
                 int *na)
{
    static cand_t c[MAXC];
    int n = enumerate(cfg, k, M, N, K, c), m = n < pick || every ? n : pick;
    double med, max, rho;
    qsort(c, (size_t)n, sizeof *c, by_pred);
    if (*na + m > MAXALL) {
        fprintf(stderr, "slice_fidelity: %dx%dx%d: more than %d runs in all\n", M, N, K, MAXALL);
        return -1;
    }
    printf("layer %dx%dx%d: %d fitting candidates, %d run\n", M, N, K, n, m);
    for (int i = 0; i < m; i++) {
        cand_t *x = &all[*na + i];
        *x = c[m > 1 ? (long)i * (n - 1) / (m - 1) : 0];
        x->meas = run(cfg, M, N, K, x);
        if (x->meas < 0)
            return -1;
        printf("  tiles %5lld %5lld %5lld order %d band %d split %d  predicted %10.0f  RTL %10.0f  %+6.1f%%\n",
               (long long)x->p.tile[0], (long long)x->p.tile[1], (long long)x->p.tile[2], x->p.order,
               x->p.band, x->p.split, x->pred, x->meas, 100.0 * (x->pred - x->meas) / x->meas);
    }
    errors(&all[*na], m, &med, &max);
    rho = spearman(&all[*na], m);
    printf("  median |error| %.1f%%, max %.1f%%, Spearman %.3f\n", 100 * med, 100 * max, rho);
    if (m == n) { /* every candidate ran: the pick (least predicted) against the best measured */
        double best = all[*na].meas;
        for (int i = 1; i < m; i++)
            best = all[*na + i].meas < best ? all[*na + i].meas : best;
        printf("  selection: the pick takes %.0f cycles, the best candidate %.0f (%.3fx; acceptance <= 1.05x)\n",
               all[*na].meas, best, all[*na].meas / best);
        if (all[*na].meas > 1.05 * best)
            rho = -1; /* fails the layer */
    }
    *na += m;
    return med <= 0.10 && max <= 0.25 && rho >= 0.9;
}

int main(int argc, char **argv)
{
    npu_cfg_t cfg = NPU_CFG_INIT;
    int mode = NPU_SLICE_BURST, shapes[16][3], ns = 0, ok = 1, na = 0, every = 0;
    static cand_t all[MAXALL];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--all"))
            every = 1;
        else if (!strcmp(argv[i], "--pick") && i + 1 < argc && atoi(argv[i + 1]) >= 2)
            pick = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--tiles") && i + 1 < argc &&
                 sscanf(argv[i + 1], "%" SCNd64 ",%" SCNd64 ",%" SCNd64, &only[0], &only[1], &only[2]) == 3)
            i++;
        else if (!strcmp(argv[i], "--dram-bw") && i + 1 < argc && atof(argv[i + 1]) > 0)
            npu_slice_cfg_retime(&cfg, atof(argv[++i]), -1);
        else if (!strcmp(argv[i], "--policy") && i + 1 < argc && strstr("1g1c 1g4c flexsa", argv[i + 1])) {
            i++;
            emit = !strcmp(argv[i], "1g4c") ? NPU_EMIT_1G4C : !strcmp(argv[i], "1g1c") ? NPU_EMIT_FW : NPU_EMIT_FLEXSA;
        } else if (!strcmp(argv[i], "--noburst") || !strcmp(argv[i], "--burst"))
            mode = argv[i][2] == 'n' ? NPU_SLICE_NOBURST : NPU_SLICE_BURST;
        else if (ns < 16 && sscanf(argv[i], "%d,%d,%d", &shapes[ns][0], &shapes[ns][1], &shapes[ns][2]) == 3)
            ns++;
        else {
            fprintf(stderr, "usage: slice_fidelity [--burst|--noburst] [--all] [--pick N] [--tiles m,n,k] "
                            "[--dram-bw B] [--policy 1g1c|1g4c|flexsa] [M,N,K ...]\n");
            return 2;
        }
    }
    if (!ns) { /* a conv-like, a square and a skinny layer */
        int d[3][3] = {{784, 64, 576}, {256, 256, 256}, {4096, 24, 24}};
        memcpy(shapes, d, sizeof d);
        ns = 3;
    }
    npu_slice_cost_t k = npu_slice_cost_default(&cfg, mode);
    k.policy = (int)npu_emit_policy_model(emit);
    printf("slicing cost model (%s) against the RTL, config %s, %s policy, %d B/cycle\n",
           npu_slice_mode_name(mode), cfg.name, npu_flexsa_policy_name((npu_flexsa_policy_t)k.policy), cfg.dram_bw);
    for (int i = 0; i < ns; i++) {
        int r = layer(&cfg, &k, shapes[i][0], shapes[i][1], shapes[i][2], every, all, &na);
        if (r < 0)
            return 2;
        ok &= r;
    }
    double med, max;
    errors(all, na, &med, &max);
    printf("all %d: median |error| %.1f%%, max %.1f%%, Spearman %.3f; acceptance (median <= 10%%, max <= 25%%, "
           "Spearman >= 0.9 per layer): %s\n", na, 100 * med, 100 * max, spearman(all, na), ok ? "met" : "NOT met");
    return ok ? 0 : 1;
}
