/*
 * step_fidelity.c - the estimator's step plan mode against the RTL (issue 16, acceptance 1, 2, 5;
 * docs/estimator.md section 7): for each point (an MLP and a batch) one whole training step runs
 * on the Verilated NPU through the step engine (run/step_run.h: every kernel bit-exact against
 * the golden image, its counters as its program says) and `npu_estimate_step` estimates the same
 * kernels from the models alone. Per kernel: DRAM bytes per tag (must be equal), predicted and
 * RTL cycles; grouped per layer and phase (fwd, bwd, update) and classed compute- or
 * memory-bound; the whole step. Prints a table (or CSV rows, --csv FILE), median and max |error|
 * per phase and class, and exits 1 unless every byte count is exact, every group within 5%
 * (compute-bound) or 10% (memory-bound), every step within 10%, and no prediction below its
 * roofline and no RTL kernel below its own (cycles >= MACs / PEs, >= DRAM bytes / bandwidth less
 * the DRAM model's initial credit); 2 when a run fails or an argument is bad.
 *   build/<config>/step_fidelity [--csv FILE] [--bounds C,M,S] [--policy fw|flexsa|1g4c] D0,..,DL@B ...
 * (--bounds: the compute-bound, memory-bound and whole-step bounds in percent, default 5,10,10;
 * a point may be cnn:SPEC@B, 8x8x1 inputs, its convolutions with residual connections +J)
 *   build/<config>/step_fidelity --micro   the timing model's constants on small programs (10% or 4 + 2 cycles per instruction)
 * Without points: the sweep of make step-fidelity (docs/estimator.md). make test runs a few.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/isa.h"
#include "compile/slice/slice_cost.h"
#include "model/est_step.h"
#include "model/prog_time.h"
#include "npu_params.h"
#include "npu_sim.h"
#include "run/runtime.h"
#include "ref/net_ref.h"
#include "run/fit.h"
#include "run/step_probe.h"
#include "run/step_run.h"

#define MAXE 20000 /* errors kept per class */
enum { CLS_COMPUTE, CLS_MEMORY, CLS_STEP, NCLS };
static const char *const cls_name[NCLS] = {"compute", "memory", "step"};
static double bound[NCLS] = {0.05, 0.10, 0.10}; /* --bounds C,M,S in percent */

typedef struct errs {
    int n[3][NCLS]; /* [phase][class]; phase 0 fwd, 1 bwd, 2 update; class step: phase 0 */
    double *e[3][NCLS];
    int bytes_bad, roof_bad, bound_bad;
    int rtl_roof_bad, rtl_kernels; /* RTL kernels below their roofline, of those run */
} errs_t;

static FILE *csv;

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void add_err(errs_t *E, int phase, int cls, double e)
{
    if (E->n[phase][cls] < MAXE)
        E->e[phase][cls][E->n[phase][cls]++] = e;
}

/* Median and max of |e| over n values (sorted in place). */
static void stats(double *e, int n, double *med, double *max)
{
    *med = *max = 0;
    if (n < 1)
        return;
    for (int i = 0; i < n; i++)
        e[i] = fabs(e[i]);
    qsort(e, (size_t)n, sizeof *e, by_double);
    *med = n % 2 ? e[n / 2] : (e[n / 2 - 1] + e[n / 2]) / 2;
    *max = e[n - 1];
}

/* Kernel i: bytes per tag equal? The first difference into msg. */
static int bytes_equal(const npu_est_kernel_t *k, const npu_step_tally_t *t, char *msg, size_t n)
{
    for (int g = 0; g < NPU_NUM_TAGS; g++)
        if (k->rd[g] != t->rd[g] || k->wr[g] != t->wr[g]) {
            snprintf(msg, n, "tag %s: estimated %llu read / %llu written, RTL %llu / %llu", npu_tag_name((unsigned)g),
                     (unsigned long long)k->rd[g], (unsigned long long)k->wr[g], (unsigned long long)t->rd[g],
                     (unsigned long long)t->wr[g]);
            return 0;
        }
    return 1;
}

static const char *phase_name(int ph) { return ph == NPU_SK_FWD ? "fwd" : ph == NPU_SK_BWD ? "bwd" : "update"; }

/* Per kernel rows, then per (layer, phase) group: its predicted and RTL cycles, its class. */
static void compare(const char *pt, const npu_cfg_t *cfg, const npu_est_kplan_t *e, const npu_step_run_t *s,
                    errs_t *E)
{
    uint64_t gp[NPU_STEP_MAX_LAYERS + 1][3] = {{0}}, gr[NPU_STEP_MAX_LAYERS + 1][3] = {{0}};
    uint64_t gb[NPU_STEP_MAX_LAYERS + 1][3] = {{0}}, gc[NPU_STEP_MAX_LAYERS + 1][3] = {{0}}, rt = 0;
    for (int i = 0; i < e->nk; i++) {
        const npu_est_kernel_t *k = &e->k[i];
        const npu_step_tally_t *t = &s->last[i];
        char msg[200] = "";
        int ok = bytes_equal(k, t, msg, sizeof msg);
        double err = ((double)k->cycles - (double)t->cycles) / (double)t->cycles;
        E->bytes_bad += !ok;
        E->roof_bad += k->timed < k->roof || k->cycles < k->roof;
        double need;
        E->rtl_roof_bad += npu_step_below_roof(cfg, t, &need) != 0; /* as tests/rtl/test_step.c */
        E->rtl_kernels++;
        printf("  %-25s %-7s %8llu %8llu %+7.1f%%  %s%s\n", k->name, k->memory_bound ? "memory" : "compute",
               (unsigned long long)k->cycles, (unsigned long long)t->cycles, 100 * err, ok ? "bytes exact" : "BYTES DIFFER: ",
               msg);
        if (csv)
            fprintf(csv, "%s,\"%s\",kernel,%s,%d,%s,%s,%llu,%llu,%llu,%.5f,%d\n", cfg->name, pt, k->name, k->layer,
                    phase_name(k->phase), k->memory_bound ? "memory" : "compute", (unsigned long long)k->bytes,
                    (unsigned long long)k->cycles, (unsigned long long)t->cycles, err, ok);
        gp[k->layer][k->phase] += k->cycles;
        gr[k->layer][k->phase] += t->cycles;
        gb[k->layer][k->phase] += k->bytes;
        gc[k->layer][k->phase] += k->compute;
        rt += t->cycles;
    }
    for (int l = 1; l <= e->layers; l++)
        for (int ph = 0; ph < 3; ph++) {
            int mem = (double)gb[l][ph] / cfg->dram_bw > (double)gc[l][ph];
            double err = ((double)gp[l][ph] - (double)gr[l][ph]) / (double)gr[l][ph];
            add_err(E, ph, mem, err);
            E->bound_bad += fabs(err) > bound[mem];
            printf("  L%d %-6s %-7s %8llu %8llu %+7.1f%%%s\n", l, phase_name(ph), cls_name[mem],
                   (unsigned long long)gp[l][ph], (unsigned long long)gr[l][ph], 100 * err,
                   fabs(err) > bound[mem] ? "  OUT OF BOUND" : "");
            if (csv)
                fprintf(csv, "%s,\"%s\",group,L%d %s,%d,%s,%s,%llu,%llu,%llu,%.5f,\n", cfg->name, pt, l, phase_name(ph), l,
                        phase_name(ph), cls_name[mem], (unsigned long long)gb[l][ph], (unsigned long long)gp[l][ph],
                        (unsigned long long)gr[l][ph], err);
        }
    double err = ((double)e->cycles - (double)rt) / (double)rt;
    add_err(E, 0, CLS_STEP, err);
    E->bound_bad += fabs(err) > bound[CLS_STEP];
    printf("  step %llu predicted, %llu RTL: %+.1f%%%s\n", (unsigned long long)e->cycles, (unsigned long long)rt,
           100 * err, fabs(err) > bound[CLS_STEP] ? "  OUT OF BOUND" : "");
    if (csv)
        fprintf(csv, "%s,\"%s\",step,step,0,all,step,%llu,%llu,%llu,%.5f,\n", cfg->name, pt,
                (unsigned long long)(e->rd_bytes + e->wr_bytes), (unsigned long long)e->cycles,
                (unsigned long long)rt, err);
}

/* A point's network: an MLP's widths d[0..L], or a CNN ("cnn:SPEC", 8x8x1 inputs) as the step
 * engine takes it (npu_fit_cnn_layers); B the batch. */
typedef struct net_pt {
    int cnn, L, B, n_conv, n_fc;
    int d[NPU_STEP_MAX_LAYERS + 1], fc[NPU_STEP_MAX_LAYERS + 1], res[NPU_STEP_MAX_LAYERS];
    npu_conv_t conv[NPU_STEP_MAX_LAYERS];
} net_pt_t;

/* "D0,..,DL@B" or "cnn:SPEC@B" into q. 0, or 2 after the message. */
static int parse_point(const char *pt, net_pt_t *q)
{
    const char *at = strchr(pt, '@');
    int pos = 0, used;
    memset(q, 0, sizeof *q);
    q->L = -1;
    if (!strncmp(pt, "cnn:", 4) && at) {
        npu_net_shape_t net;
        char spec[256], why[200];
        snprintf(spec, sizeof spec, "%.*s", (int)(at - pt), pt);
        q->cnn = 1;
        if (sscanf(at + 1, "%d", &q->B) != 1 || q->B < 1 || npu_net_parse(spec, 8, 8, 1, &net, why, sizeof why) ||
            net.layers > NPU_STEP_MAX_LAYERS ||
            (q->n_conv = npu_fit_cnn_layers(&net, q->B, q->conv, q->fc, &q->n_fc)) < 1) {
            fprintf(stderr, "step_fidelity: point '%s': cnn:SPEC@BATCH with convolutions first, 8x8x1 inputs\n", pt);
            return 2;
        }
        q->L = net.layers;
        memcpy(q->res, net.res, sizeof q->res); /* the convolutions' residual connections (+J) */
        return 0;
    }
    while (q->L < NPU_STEP_MAX_LAYERS && sscanf(pt + pos, "%d%n", &q->d[q->L + 1], &used) == 1) {
        q->L++;
        pos += used;
        if (pt[pos] != ',')
            break;
        pos++;
    }
    if (!at || q->L < 1 || pt + pos != at || sscanf(at + 1, "%d", &q->B) != 1 || q->B < 1) {
        fprintf(stderr, "step_fidelity: point '%s': D0,D1,..,DL@BATCH with at least one layer\n", pt);
        return 2;
    }
    return 0;
}

/* The estimate of q; 0 or -1 (why). */
static int estimate_pt(const npu_cfg_t *cfg, const net_pt_t *q, int modes, npu_est_kplan_t *e, char *why, size_t n)
{
    if (q->cnn)
        return npu_estimate_step_cnn(cfg, q->conv, q->n_conv, q->res, q->fc, q->n_fc, q->B, modes, e, why, n);
    return npu_estimate_step(cfg, q->d, q->L, q->B, modes, e, why, n);
}

/* The step engine for q (nominal scales); 0 or -1 (s->why). */
static int init_pt(npu_step_run_t *s, const npu_cfg_t *cfg, npu_sim_t *sim, const net_pt_t *q, int modes)
{
    if (q->cnn)
        return npu_step_run_init_cnn(s, cfg, sim, q->conv, q->n_conv, q->res, q->fc, q->n_fc, q->B, 0.1f, 0.9f, 1e-4f,
                                     modes, NULL, 50000000);
    return npu_step_run_init(s, cfg, sim, q->d, q->L, q->B, 0.1f, 0.9f, 1e-4f, modes, 50000000);
}

/* Point "D0,..,DL@B" or "cnn:SPEC@B": runs it. 0; 1 when the step engine refuses it (and the
 * estimator too); 2 on a bad point, a failed run or a refusal of one side only. */
static int point(const npu_cfg_t *cfg, const char *pt, int modes, errs_t *E)
{
    static npu_est_kplan_t e;
    static net_pt_t q;
    char why[256];
    if (parse_point(pt, &q))
        return 2;
    int refused = estimate_pt(cfg, &q, modes, &e, why, sizeof why) != 0;
    npu_dram_timing_t t = {(double)cfg->dram_bw, (unsigned)cfg->dram_latency, (unsigned)cfg->dram_burst_cost, 0, 1};
    npu_sim_t *sim = npu_sim_open(&t);
    npu_step_run_t s;
    int rc = 2, init = sim ? init_pt(&s, cfg, sim, &q, modes) : -1;
    if (sim && refused && init) { /* both refuse (the estimator's emitters are the engine's) */
        printf("%s: refused by the step engine and the estimator alike: %s\n", pt, why);
        npu_step_run_free(&s);
        npu_sim_close(sim);
        return 1;
    }
    if (refused)
        fprintf(stderr, "step_fidelity: %s: the estimator refuses what the step engine runs: %s\n", pt, why);
    if (sim && !refused && init == 0) {
        npu_step_probe_params(&s, 0x9E3779B97F4A7C15ull);
        if (npu_step_probe_step(&s) == 0 && s.checked == (uint64_t)s.plan.nk) {
            printf("%s, batch %d: %d kernels bit-exact\n", pt, q.B, s.plan.nk);
            compare(pt, cfg, &e, &s, E);
            rc = 0;
        }
    }
    if (rc)
        fprintf(stderr, "step_fidelity: %s: the RTL step failed: %s\n", pt, sim ? s.why : "npu_sim_open failed");
    if (sim)
        npu_step_run_free(&s);
    npu_sim_close(sim);
    return rc;
}

/* ---- --micro: the program timing model's constants against the RTL on small programs ---- */

static npu_insn_t mprog[64]; /* 48 for the wave trains, 40 for the conv tiles */
static size_t mn;

static void mput(const npu_fields_t *f) { npu_encode(f, &mprog[mn++]); }

/* Runs mprog on a fresh model and times it with npu_prog_time; within 10% or 4 cycles for the start and 2 per instruction, else *bad. */
static void micro_run(const npu_cfg_t *cfg, const char *what, int *bad)
{
    npu_dram_timing_t t = {(double)cfg->dram_bw, (unsigned)cfg->dram_latency, (unsigned)cfg->dram_burst_cost, 0, 1};
    npu_sim_t *sim = npu_sim_open(&t);
    npu_slice_cost_t k = npu_slice_cost_default(cfg, NPU_SLICE_BURST);
    npu_run_result_t r;
    uint64_t c = 0;
    char why[200] = "";
    int rc = sim ? npu_run_program(cfg, sim, 1u << 20, mprog, mn, 1000000, &r) : -1;
    if (rc != NPU_RUN_DONE || npu_prog_time(cfg, &k, mprog, mn, &c, why, sizeof why)) {
        printf("  %-34s failed (%s)\n", what, why);
        *bad += 1;
    } else {
        double e = ((double)c - (double)r.cnt[NPU_CNT_cycles]) / (double)r.cnt[NPU_CNT_cycles];
        *bad += fabs(e) > 0.10 && llabs((long long)c - (long long)r.cnt[NPU_CNT_cycles]) > 4 + 2 * (long long)mn;
        printf("  %-34s RTL %6llu model %6llu %+6.1f%%\n", what, (unsigned long long)r.cnt[NPU_CNT_cycles],
               (unsigned long long)c, 100 * e);
    }
    npu_sim_close(sim);
}

/* 24 LDW / WAVE pairs of m rows (FW: k = n = 2S, mono or the two core pairs in parallel; HSW:
 * k = S, n = 2S) on alternating weight banks: the wave turnaround and a pair's least
 * (prog_time.c). 1 if off bound. */
static int micro_waves(const npu_cfg_t *cfg, int m, unsigned mode, int mono)
{
    npu_fields_t f;
    char w[64];
    int bad = 0;
    mn = 0;
    for (int i = 0; i < 24; i++) {
        memset(&f, 0, sizeof f);
        f.op = NPU_OP_LDW, f.mode = mode, f.n = 2u * (unsigned)cfg->s, f.spm_addr = 2048, f.spm_stride = 1;
        f.k = mode == NPU_MODE_HSW ? (unsigned)cfg->s : 2u * (unsigned)cfg->s;
        f.wbank = (unsigned)i & 1;
        f.mono = (unsigned)mono;
        mput(&f);
        f.mono = 0;
        f.op = NPU_OP_WAVE, f.m = (unsigned)m, f.spm_addr = 0, f.obuf_addr = 64u * ((unsigned)i & 1), f.acc = i >= 2;
        mput(&f);
    }
    snprintf(w, sizeof w, "24 %sLDW + WAVE of %d rows", mode == NPU_MODE_HSW ? "HSW " : mono ? "mono " : "", m);
    micro_run(cfg, w, &bad);
    return bad;
}

/* 8 stationary tiles of four 4-row FW WAVEs each (a conv's row blocks), the tiles' LDWs (mono or
 * not) on alternating banks: a tile's weights are in its LDW's read steps + 9 cycles after it
 * issues (prog_time.c; est_step prog_time_a_tile_waits_for_its_weights). 1 if off bound. */
static int micro_tiles(const npu_cfg_t *cfg, int mono)
{
    npu_fields_t f;
    char w[64];
    int bad = 0;
    unsigned F = 2u * (unsigned)cfg->s;
    mn = 0;
    for (unsigned t = 0; t < 8; t++) {
        memset(&f, 0, sizeof f);
        f.op = NPU_OP_LDW, f.mode = NPU_MODE_FW, f.k = f.n = F, f.spm_addr = t, f.spm_stride = 2;
        f.wbank = t & 1u, f.mono = (unsigned)mono;
        mput(&f);
        for (unsigned v = 0; v < 4; v++) {
            memset(&f, 0, sizeof f);
            f.op = NPU_OP_WAVE, f.mode = NPU_MODE_FW, f.k = f.n = F, f.wbank = t & 1u, f.acc = t > 0;
            f.m = 4, f.spm_addr = 64 + 8 * v, f.spm_stride = 2, f.obuf_addr = 4 * v;
            mput(&f);
        }
    }
    snprintf(w, sizeof w, "8 %sconv tiles of 4 4-row WAVEs", mono ? "mono " : "");
    micro_run(cfg, w, &bad);
    return bad;
}

/* 20 tiles of one 14-row HSW wave each on alternating banks, its rows at `stride` from `at`
 * (stride 2 from 0: 4 of 7 slots collide in an SPM sub-bank; 7 from 16: none): whether the
 * wave streamer's reads during the LDW hide the collisions (est_step
 * prog_time_a_lone_wave_reads_its_rows_during_its_ldw). 1 if off bound. */
static int micro_lone(const npu_cfg_t *cfg, unsigned stride, unsigned at)
{
    npu_fields_t f;
    char w[64];
    int bad = 0;
    unsigned k = cfg->s < 3 ? (unsigned)cfg->s : 3, n = 2u * (unsigned)cfg->s; /* HSW: k <= S < n */
    mn = 0;
    for (unsigned t = 0; t < 20; t++) {
        memset(&f, 0, sizeof f);
        f.op = NPU_OP_LDW, f.mode = NPU_MODE_HSW, f.k = k, f.n = n, f.spm_addr = 512, f.spm_stride = 1;
        f.wbank = t % 2;
        mput(&f);
        memset(&f, 0, sizeof f);
        f.op = NPU_OP_WAVE, f.mode = NPU_MODE_HSW, f.k = k, f.n = n, f.m = 14, f.wbank = t % 2;
        f.spm_addr = at, f.spm_stride = stride, f.obuf_addr = 16u * (t % 8);
        mput(&f);
    }
    snprintf(w, sizeof w, "20 lone HSW waves, stride %u", stride);
    micro_run(cfg, w, &bad);
    return bad;
}

/* A WAVE of m rows, then `drains` DRAINs of its rows into the SPM, plain or accumulating (an
 * accumulating DRAIN reads the old words on its own two SPM ports, a row per 2 cycles;
 * prog_time.c). 1 if off bound. */
static int micro_drain(const npu_cfg_t *cfg, int m, int drains, int acc)
{
    npu_fields_t f;
    char w[64];
    int bad = 0;
    mn = 0;
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_LDW, f.k = f.n = 2u * (unsigned)cfg->s, f.spm_addr = 2048, f.spm_stride = 1;
    mput(&f);
    f.op = NPU_OP_WAVE, f.m = (unsigned)m, f.spm_addr = 0;
    mput(&f);
    for (int i = 0; i < drains; i++) {
        memset(&f, 0, sizeof f);
        f.op = NPU_OP_DRAIN, f.rows = (unsigned)m, f.acc = (unsigned)acc;
        f.spm_addr = 1024u + 2u * (unsigned)m * (unsigned)i, f.spm_stride = 2;
        mput(&f);
    }
    snprintf(w, sizeof w, "WAVE of %d rows, %d DRAIN%s", m, drains, acc ? " acc" : "");
    micro_run(cfg, w, &bad);
    return bad;
}

/* SYNC_E and VSET trains, VECs behind one VSET, LOAD and STORE trains. The number off bound. */
static int micro(const npu_cfg_t *cfg)
{
    int bad = 0, B = npu_cfg_beat(cfg);
    char w[64];
    printf("micro-benchmarks: the EXEC queue's issue cycles, VEC, LOAD, STORE (bound 10%% or 4 + 2 cycles per instruction)\n");
    for (int n = 1; n <= 16; n *= 4) {
        npu_fields_t f;
        for (int op = 0; op < 2; op++) {
            mn = 0;
            memset(&f, 0, sizeof f);
            f.op = op ? NPU_OP_VSET : NPU_OP_SYNC_E;
            f.len = op ? 2u * (unsigned)cfg->s : 0;
            for (int i = 0; i < n; i++)
                mput(&f);
            snprintf(w, sizeof w, "%d %s", n, op ? "VSET" : "SYNC_E");
            micro_run(cfg, w, &bad);
        }
        for (int rows = 1; rows <= 16; rows *= 16) {
            mn = 0;
            memset(&f, 0, sizeof f);
            f.op = NPU_OP_VSET, f.len = 2u * (unsigned)cfg->s;
            mput(&f);
            memset(&f, 0, sizeof f);
            f.op = NPU_OP_VEC, f.wide = 1, f.rows = (unsigned)rows, f.a_stride = f.b_stride = f.d_stride = 2;
            f.b_addr = 512, f.d_addr = 1024;
            for (int i = 0; i < n; i++)
                mput(&f);
            snprintf(w, sizeof w, "VSET, %d VEC ADD of %d rows", n, rows);
            micro_run(cfg, w, &bad);
            for (int st = 0; st < 2; st++) {
                mn = 0;
                for (int i = 0; i < n; i++) {
                    memset(&f, 0, sizeof f);
                    f.op = st ? NPU_OP_STORE : NPU_OP_LOAD, f.rows = (unsigned)rows * 4, f.spm_stride = 1;
                    f.row_bytes = f.dram_stride = (unsigned)B, f.dram_addr = 4096u * (unsigned)i, f.spm_addr = 64u * (unsigned)i;
                    mput(&f);
                }
                snprintf(w, sizeof w, "%d %s of %d rows", n, st ? "STORE" : "LOAD", rows * 4);
                micro_run(cfg, w, &bad);
            }
        }
    }
    /* trains of 4 LOADs / STOREs of 13 rows of 40 B (not beat-aligned, the SGD's chunks): the
     * realigner / packer stream one SPM word a cycle, their bursts' cost on top (prog_time.c) */
    for (int st = 0; st < 2; st++)
        for (unsigned off = 0; off < 2u * (unsigned)B; off += (unsigned)B / 4u * 3u) {
            npu_fields_t f;
            mn = 0;
            for (unsigned i = 0; i < 4; i++) {
                memset(&f, 0, sizeof f);
                f.op = st ? NPU_OP_STORE : NPU_OP_LOAD, f.rows = 13, f.spm_stride = 2;
                f.row_bytes = f.dram_stride = 40, f.dram_addr = 4096u * (i + 1) + off, f.spm_addr = 32u * i;
                mput(&f);
            }
            snprintf(w, sizeof w, "4 %s of 13 x 40 B at +%u", st ? "STORE" : "LOAD", off);
            micro_run(cfg, w, &bad);
        }
    /* LDW / WAVE pairs on alternating banks: the least (short waves), the turnaround (between),
     * the rows (long waves) */
    static const int wave_rows[] = {1, 4, 8, 12, 16, 24, 32, 48, 64};
    for (int mono = 0; mono < 2; mono++)
        for (size_t i = 0; i < sizeof wave_rows / sizeof wave_rows[0]; i++)
            bad += micro_waves(cfg, wave_rows[i], NPU_MODE_FW, mono);
    for (int m = 1; m <= 16; m *= 2) /* S-deep tiles: T S less */
        bad += micro_waves(cfg, m, NPU_MODE_HSW, 0);
    for (int mono = 0; mono < 2; mono++)
        bad += micro_tiles(cfg, mono);
    bad += micro_lone(cfg, 2, 0) + micro_lone(cfg, 7, 16);
    for (int acc = 0; acc < 2; acc++)
        for (int m = 8; m <= 32; m *= 4)
            for (int drains = 1; drains <= 4; drains *= 4)
                bad += micro_drain(cfg, m, drains, acc);
    return bad;
}

/* The sweep of make step-fidelity: depths and widths (not multiples of 2S too), batches. */
static const char *const sweep[] = {
    "64,128,10@32", "64,128,10@16", "64,128,10@40", "64,128,10@8", "64,256,256,10@32", "64,256,256,10@16",
    "32,64,64,64,10@32", "32,64,64,64,10@16", "64,32,10@8", "64,32,10@32", "64,32,48,10@48", "24,37,20,10@19",
    "24,37,20,10@7", "128,128,128@32", "128,128,128@16", "16,16,16,16,16,16@16", "64,64,10@128", "64,64,10@24",
    "100,50,10@25", "256,64,10@16", "32,96,10@40", "48,48,48,48@24", "64,512,10@8", "10,20,30,40,50,10@12",
    "96,80,10@36", "40,200,10@20",
    /* CNN steps (8x8x1 inputs, the digits'): convolutions, the fused backward, transposes */
    "cnn:c4,c8s2,fc10@32", "cnn:c16,c32s2,fc10@16", "cnn:c8k5p2,fc10@8", "cnn:c8,c16s2,fc32,fc10@16",
    "cnn:c4,fc10@32", "cnn:c16,fc10@8",
    /* residual blocks (+J: the skip added before the ReLU, its gradient into the source's) */
    "cnn:c8,c8,c8+1,fc10@16", "cnn:c1+0,c8s2,fc10@8", "cnn:c4,c4+1,c8s2,c8,c8+3,fc10@16",
    /* conv -> normalisation-like -> ReLU chains (cFn: VMUL by gamma, the shift; fixed point at int16) */
    "cnn:c8n,c16s2,fc10@16", "cnn:c4n,c8s2n,fc10@32", "cnn:c4n,c4,c4n+1,fc10@16",
};
int main(int argc, char **argv)
{
    npu_cfg_t cfg = NPU_CFG_INIT;
    int modes = NPU_EMIT_FW, rc = 0, np = 0;
    const char *pts[256];
    errs_t E;
    memset(&E, 0, sizeof E);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--csv") && i + 1 < argc) {
            if (!(csv = fopen(argv[++i], "w"))) {
                fprintf(stderr, "step_fidelity: --csv: cannot write %s\n", argv[i]);
                return 2;
            }
            fprintf(csv, "config,point,row,name,layer,phase,class,bytes,predicted,rtl,error,bytes_exact\n");
        } else if (!strcmp(argv[i], "--micro")) {
            int bad = micro(&cfg);
            printf("micro-benchmarks: %d off bound\n", bad);
            return bad ? 1 : 0;
        } else if (!strcmp(argv[i], "--bounds") && i + 1 < argc) {
            double c, m, st;
            if (sscanf(argv[++i], "%lf,%lf,%lf", &c, &m, &st) != 3 || c <= 0 || m <= 0 || st <= 0) {
                fprintf(stderr, "step_fidelity: --bounds needs three positive percentages C,M,S\n");
                return 2;
            }
            bound[CLS_COMPUTE] = c / 100, bound[CLS_MEMORY] = m / 100, bound[CLS_STEP] = st / 100;
        } else if (!strcmp(argv[i], "--policy") && i + 1 < argc) {
            const char *v = argv[++i];
            modes = !strcmp(v, "flexsa") ? NPU_EMIT_FLEXSA : !strcmp(v, "1g4c") ? NPU_EMIT_1G4C : NPU_EMIT_FW;
        } else if (argv[i][0] != '-' && np < 256) {
            pts[np++] = argv[i];
        } else {
            fprintf(stderr, "usage: step_fidelity [--micro] [--csv FILE] [--bounds C,M,S] [--policy fw|flexsa|1g4c] D0,..,DL@B ...\n");
            return 2;
        }
    }
    if (!np)
        for (size_t i = 0; i < sizeof sweep / sizeof *sweep; i++)
            pts[np++] = sweep[i];
    for (int p = 0; p < 3; p++)
        for (int c = 0; c < NCLS; c++)
            if (!(E.e[p][c] = malloc(sizeof(double) * MAXE)))
                return 2;
    printf("estimator (--plan step) against the RTL step engine, config %s, %d B/cycle; per kernel and "
           "per layer and phase: class, predicted, RTL cycles, error\n", cfg.name, cfg.dram_bw);
    int ran = 0;
    for (int i = 0; i < np && rc < 2; i++)
        ran += (rc = point(&cfg, pts[i], modes, &E)) == 0;
    if (rc == 2)
        return rc;
    for (int c = 0; c < NCLS; c++)
        for (int p = 0; p < 3; p++) {
            double med, max;
            if (!E.n[p][c])
                continue;
            stats(E.e[p][c], E.n[p][c], &med, &max);
            printf("%s %s: %d, median |error| %.1f%%, max %.1f%% (bound %.0f%%)\n", c == CLS_STEP ? "whole" : phase_name(p),
                   cls_name[c], E.n[p][c], 100 * med, 100 * max, 100 * bound[c]);
        }
    int ok = !E.bytes_bad && !E.roof_bad && !E.rtl_roof_bad && !E.bound_bad && ran > 0;
    printf("%d of %d RTL kernels below their roofline (MACs / PEs, DRAM bytes / bandwidth)\n", E.rtl_roof_bad,
           E.rtl_kernels);
    printf("%d points run (%d refused): bytes %s, %d predictions below the roofline, %d groups or steps out of bound: "
           "acceptance %s\n", ran, np - ran, E.bytes_bad ? "DIFFER" : "exact", E.roof_bad, E.bound_bad, ok ? "met" : "NOT met");
    if (csv)
        fclose(csv);
    return ok ? 0 : 1;
}
