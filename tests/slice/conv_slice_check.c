/*
 * conv_slice_check.c - burst-aware slicing of convolution layers against the RTL (issue 14,
 * acceptance 6 on conv layers; compile/conv/conv_slice.h). Per layer (--conv spec, batch 1) and
 * kernel x dataflow (fwd; dX, dW zeropad and ecoflow): the emitter's candidates, costed
 * burst-aware and bytes-only, and on the Verilated NPU (npu_conv_run_opts, bit-exact, counters
 * checked) the burst-aware pick and the bytes-only pick (and conv_plan's own plan, for the record):
 *   - the burst-aware pick <= 1.01x the bytes-only pick's cycles on every row, and strictly
 *     faster on at least half of the rows;
 *   - with --all every candidate runs: the pick within 5% of the best measured.
 * Prints a row per kernel and the summary: rows, strictly faster, mean gain (1 - burst/bytes-only,
 * beside the paper's 7.4-21.7%). Exits 1 when a bound is not met, 2 when a run fails.
 *   build/<config>/conv_slice_check [--all] [--dram-bw B] [--kernels fwd,dx,dw] [--no-half]
 *                                   [--topology FILE.csv] SPEC...
 * --no-half: do not require the half strictly faster (a quick subset of layers in make test).
 * --topology: the distinct layers of a SCALE-Sim conv topology, at full size (make conv-slice-nets).
 * A failed run is reported on stderr and counted; the other rows still run (exit 2 at the end).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/conv/conv_slice.h"
#include "model/prog_time.h"
#include "compile/slice/slice_cost.h"
#include "npu_params.h"
#include "npu_sim.h"
#include "run/conv_run.h"
#include "run/runtime.h"
#include "model/topology.h"

typedef struct totals { int rows, faster, worse, far, failed; double gain; } totals_t;

/* Cycles a run may take: AlexNet's first layer's zeropad dW (11x11 s4, its 221 x 221 Z against
 * three channels: 3 of 16 columns in every tile) takes ~104M at small. */
#define RUN_MAX_CYCLES 1000000000ull

/* Candidate opts on a fresh model (NULL: conv_plan's own plan); RTL cycles, or -1. */
static double run(const npu_cfg_t *cfg, const npu_conv_t *c, int k, int df, const npu_conv_plan_opts_t *o,
                  int *parts)
{
    npu_dram_timing_t t;
    npu_conv_report_t rep;
    double cyc = -1;
    t = npu_dram_timing_of(cfg);
    npu_sim_t *s = npu_sim_open(&t);
    memset(&rep, 0, sizeof rep);
    if (s && npu_conv_run_opts(cfg, s, c, k, df, o, 1, RUN_MAX_CYCLES, &rep) == NPU_GEMM_PASS)
        cyc = (double)rep.cycles;
    else
        fprintf(stderr, "conv_slice_check: run R %d G %d: %s %s\n", o ? o->max_band_rows : 0,
                o ? o->max_blocks : 0, npu_gemm_rc_name(rep.rc), rep.msg);
    *parts = rep.parts;
    if (s)
        npu_sim_close(s);
    return cyc;
}

static double q16(uint64_t v) { return (double)v / 65536.0; }

/* The candidate's split as "f<ranges>c<ranges>w<ranges>" (one static buffer per call site's use:
 * printf takes the pointers before the next call; two buffers in turn). */
static const char *split_name(const npu_conv_cand_t *c)
{
    static char buf[2][24];
    static int k;
    k ^= 1;
    snprintf(buf[k], sizeof buf[k], "f%dc%dw%d", c->nf, c->nc, c->nw);
    return buf[k];
}

/* One kernel x dataflow of layer c: 0 ok, 1 a bound not met, 2 a run failed. */
static int one(const npu_cfg_t *cfg, const char *spec, const npu_conv_t *c, int k, int df, int every, totals_t *t)
{
    npu_conv_slicing_t r;
    char msg[300];
    int parts = 1, bad = 0, pb, pn;
    double *meas, best = -1;
    if (npu_conv_slice(cfg, c, k, df, npu_prog_time, &r, msg, sizeof msg) != 0) {
        fprintf(stderr, "conv_slice_check: %s %s: %s\n", spec, npu_conv_kernel_name(k), msg);
        return 2;
    }
    pb = r.pick[NPU_SLICE_BURST];
    pn = r.pick[NPU_SLICE_NOBURST];
    meas = calloc((size_t)r.n, sizeof *meas);
    for (int i = 0; i < r.n && meas; i++) {
        if (!every && i != pb && i != pn && i != r.heuristic)
            continue;
        meas[i] = run(cfg, c, k, df, &r.cand[i].opts, &parts);
        if (meas[i] < 0 || parts != r.cand[i].parts) {
            fprintf(stderr, "conv_slice_check: %s: candidate %d failed or ran in %d parts (planned %d)\n", spec, i,
                    parts, r.cand[i].parts);
            free(meas);
            npu_conv_slicing_free(&r);
            return 2;
        }
        if (every)
            printf("    cand %s R %3d x%3d G %2d x%2d  burst %10.0f  bytes %10.0f  RTL %10.0f%s%s%s\n",
                   split_name(&r.cand[i]), r.cand[i].R, r.cand[i].nbands, r.cand[i].G, r.cand[i].ngroups,
                   q16(r.cand[i].cycles[0]),
                   q16(r.cand[i].cycles[1]), meas[i], i == pb ? " pick" : "", i == pn ? " bytes-pick" : "",
                   i == r.heuristic ? " heuristic" : "");
        best = best < 0 || meas[i] < best ? meas[i] : best;
    }
    if (!meas)
        return 2;
    double ratio = meas[pb] / meas[pn];
    printf("%-24s %-3s %-7s cands %3d  pick %s R%3d G%2d %9.0f  bytes-only %s R%3d G%2d %9.0f  heuristic %9.0f  "
           "pick/bytes %.3f",
           spec, npu_conv_kernel_name(k), k == NPU_CONV_FWD ? "-" : npu_conv_dataflow_name(df), r.n,
           split_name(&r.cand[pb]), r.cand[pb].R, r.cand[pb].G, meas[pb], split_name(&r.cand[pn]), r.cand[pn].R,
           r.cand[pn].G, meas[pn], meas[r.heuristic], ratio);
    if (every)
        printf("  best %9.0f  pick/best %.3f", best, meas[pb] / best);
    printf("\n");
    t->rows++;
    t->faster += meas[pb] < meas[pn];
    t->gain += 1.0 - ratio;
    if (ratio > 1.01) {
        t->worse++;
        bad = 1;
    }
    if (every && meas[pb] > 1.05 * best) {
        t->far++;
        bad = 1;
    }
    free(meas);
    npu_conv_slicing_free(&r);
    return bad;
}

static int usage(void)
{
    fprintf(stderr, "usage: conv_slice_check [--all] [--dram-bw B] [--kernels fwd,dx,dw] [--no-half] "
                    "[--topology FILE.csv] C,H,W,F,KH,KW,s,p,d ...\n");
    return 2;
}

/* Every chosen kernel x dataflow of layer c (batch 1): the worst of one()'s results; a failed run
 * does not stop the others (it is counted, and the exit status says so). */
static int layer(const npu_cfg_t *cfg, const char *spec, npu_conv_t c, const int *kern, int every, totals_t *t)
{
    int rc = 0;
    c.batch = 1;
    for (int k = NPU_CONV_FWD; k <= NPU_CONV_DW; k++)
        for (int df = 0; df < (k == NPU_CONV_FWD ? 1 : 2) && kern[k]; df++) {
            int r = one(cfg, spec, &c, k, df ? NPU_CONV_ECOFLOW : NPU_CONV_ZEROPAD, every, t);
            t->failed += r == 2;
            rc = r > rc ? r : rc;
        }
    return rc;
}

/* The distinct layers of a SCALE-Sim conv topology (as npu conv --topology reads it: the IFMAP
 * already padded, so pad 0 unless its Padding column says), each once. */
static int topology(const npu_cfg_t *cfg, const char *path, const int *kern, int every, totals_t *t)
{
    static npu_topology_t topo;
    char msg[300], spec[96];
    int rc = 0;
    if (npu_topo_load(path, 1, &topo, msg, sizeof msg) != 0 || topo.format != NPU_TOPO_CONV) {
        fprintf(stderr, "conv_slice_check: %s: %s\n", path, topo.format != NPU_TOPO_CONV ? "not a conv topology" : msg);
        return 2;
    }
    for (int i = 0; i < topo.n; i++) {
        const npu_conv_t *c = &topo.layer[i].conv;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) /* the same geometry (npu_conv_t: ints only) */
            seen = !memcmp(c, &topo.layer[j].conv, sizeof *c);
        if (seen)
            continue;
        snprintf(spec, sizeof spec, "%d,%d,%d,%d,%d,%d,%d,%d,%d%s", c->C, c->H, c->W, c->F, c->KH, c->KW, c->stride,
                 c->pad, c->dil, c->depthwise ? ",dw" : "");
        int r = layer(cfg, spec, *c, kern, every, t);
        rc = r > rc ? r : rc;
    }
    return rc;
}

int main(int argc, char **argv)
{
    npu_cfg_t cfg = NPU_CFG_INIT;
    int every = 0, half = 1, rc = 0, kern[3] = {1, 1, 1};
    totals_t t = {0, 0, 0, 0, 0, 0};
    setvbuf(stdout, NULL, _IOLBF, 0); /* a row per line as it comes: the full-size layers take minutes */
    for (int i = 1; i < argc; i++) {
        npu_conv_t c;
        char msg[200];
        int r = 0;
        if (!strcmp(argv[i], "--all")) {
            every = 1;
        } else if (!strcmp(argv[i], "--no-half")) {
            half = 0;
        } else if (!strcmp(argv[i], "--dram-bw") && i + 1 < argc && atof(argv[i + 1]) > 0) {
            npu_slice_cfg_retime(&cfg, atof(argv[++i]), -1);
        } else if (!strcmp(argv[i], "--kernels") && i + 1 < argc) {
            const char *v = argv[++i];
            kern[0] = strstr(v, "fwd") != NULL;
            kern[1] = strstr(v, "dx") != NULL;
            kern[2] = strstr(v, "dw") != NULL;
        } else if (!strcmp(argv[i], "--topology") && i + 1 < argc) {
            r = topology(&cfg, argv[++i], kern, every, &t);
        } else if (argv[i][0] != '-' && npu_conv_parse(argv[i], &c, msg, sizeof msg) == 0) {
            r = layer(&cfg, argv[i], c, kern, every, &t);
        } else {
            if (argv[i][0] != '-')
                fprintf(stderr, "conv_slice_check: '%s': %s\n", argv[i], msg);
            return usage();
        }
        rc = r > rc ? r : rc;
    }
    if (!t.rows && !t.failed)
        return usage();
    printf("conv slicing, config %s, %d B/cycle: %d rows, burst-aware pick strictly faster than the bytes-only "
           "pick on %d, mean gain %.1f%% [paper 7.4-21.7%%]; worse than 1.01x: %d\n",
           cfg.name, cfg.dram_bw, t.rows, t.faster, t.rows ? 100.0 * t.gain / t.rows : 0.0, t.worse);
    if (every)
        printf("  pick more than 1.05x the best candidate: %d\n", t.far);
    if (t.failed)
        printf("  failed runs (kernel x dataflow not planned or not bit-exact): %d\n", t.failed);
    if (half && 2 * t.faster < t.rows) {
        printf("  strictly faster on fewer than half the rows\n");
        rc = rc > 1 ? rc : 1;
    }
    printf("acceptance 6 (conv): %s\n", rc ? "NOT met" : "met");
    return rc;
}
