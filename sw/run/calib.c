/* calib.c - `npu calibrate`: RTL microbenchmarks and the fit of the slicing stage's cost
 * constants; see calib.h. */
#include "run/calib.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compile/slice/slice_burst.h"
#include "compile/slice/slice_cost.h"
#include "hw/isa.h"
#include "prog/prog_builder.h"
#include "prog/prog_expect.h"
#include "run/runtime.h"

#define DATA_BASE 0x100000u /* the LOADs' tensors; the program sits at 0 */
#define MAX_CYCLES 10000000u

static int failf(char *msg, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, n, fmt, ap);
    va_end(ap);
    return -1;
}

/* Runs p alone on the idle NPU: 0 with its counters in r, or -1 (msg). */
static int run(const npu_cfg_t *cfg, npu_sim_t *sim, const npu_prog_t *p, const char *what,
               npu_run_result_t *r, char *msg, size_t n)
{
    int rc = npu_run_program(cfg, sim, 0, p->insn, p->n, MAX_CYCLES, r);
    if (rc != NPU_RUN_DONE || r->state != NPU_STATE_DONE)
        return failf(msg, n, "%s: run %d, status %s, error %s at pc %u", what, rc,
                     npu_state_name(r->state), npu_error_name(r->err) ? npu_error_name(r->err) : "-",
                     (unsigned)r->err_pc);
    return 0;
}

/* ---- DMA: the sawtooth ------------------------------------------------------------------ */

/* The sweep's widest row: two longest bursts, at least 512 B (the brief's sawtooth) and at most
 * 2 KiB: past that a row only adds whole bursts (4 KiB ones at small-w2 would quadruple the
 * sweep, and `calibrate/committed` reruns it), and the dense transfers still make the longest. */
static unsigned dma_wmax(const npu_cfg_t *cfg)
{
    unsigned burst = (unsigned)(npu_cfg_beat(cfg) * cfg->max_burst_beats);
    return 2 * burst < 512 ? 512 : 2 * burst > 2048 ? 2048 : 2 * burst;
}

/* The LOADs of point t into p; bursts, beats and transfers by the slicing stage's counter. */
static int dma_build(const npu_cfg_t *cfg, const npu_calib_dma_pt_t *t, npu_prog_t *p,
                     npu_bursts_t *acc, char *msg, size_t n)
{
    npu_burst_geom_t g = npu_slice_geom(cfg);
    unsigned B = (unsigned)npu_cfg_word(cfg), words = (t->w + B - 1) / B;
    unsigned pitch = t->dense ? t->w : dma_wmax(cfg);
    npu_pb_t pb;
    npu_insn_t in;
    npu_pb_init(&pb, cfg);
    npu_pb_context(&pb, "LOAD w=%u rows=%u", t->w, t->rows);
    memset(acc, 0, sizeof *acc);
    for (unsigned j = 0; j < t->xfers; j++) { /* transfer j: the j-th block of rows */
        uint64_t a = DATA_BASE + t->off + (uint64_t)j * t->rows * pitch;
        if (j > 0 && t->waits) /* the LOAD before done: this one starts on an idle engine */
            npu_pb_put(&pb, p, npu_enc_sync(&in, NPU_OP_SYNC_L), &in, 0);
        int rc = npu_enc_load(&in, NPU_TAG_X, 0, t->rows, npu_pb_dram(&pb, a), 0, words, t->w, pitch);
        npu_pb_put(&pb, p, rc, &in, 0);
        npu_slice_xfer(&g, a, t->rows, t->w, pitch, acc);
    }
    return npu_pb_finish(&pb, msg, n);
}

/* The three burst counts must agree: the slicer's, npu_dma_bursts' and the RTL's (its read
 * bursts less the fetch's: the program is one run at 0). Same for the bytes on the bus. */
static int dma_check(const npu_cfg_t *cfg, const npu_calib_dma_pt_t *t, const npu_prog_t *p,
                     const npu_bursts_t *acc, const npu_run_result_t *r, char *msg, size_t n)
{
    uint64_t B = (uint64_t)npu_cfg_beat(cfg), mb = (uint64_t)cfg->max_burst_beats;
    npu_prog_expect_t e;
    npu_dma_count_t fetch = npu_dma_run(0, p->n * NPU_INSN_BYTES, B, mb);
    uint64_t rtl = r->cnt[NPU_CNT_dram_rd_bursts] - fetch.bursts;
    npu_prog_expect(cfg, p->insn, p->n, &e);
    if (acc->bursts != e.rd_bursts || acc->bursts != rtl || acc->beats * B != r->cnt[NPU_CNT_dram_rd_x])
        return failf(msg, n, "LOAD w=%u rows=%u x%u%s off=%u%s: bursts slicer %llu, npu_dma_bursts %llu, "
                     "RTL %llu; bytes slicer %llu, RTL %llu", t->w, t->rows, t->xfers,
                     t->waits ? " after SYNC_L" : "", t->off,
                     t->dense ? " dense" : "", (unsigned long long)acc->bursts,
                     (unsigned long long)e.rd_bursts, (unsigned long long)rtl,
                     (unsigned long long)(acc->beats * B),
                     (unsigned long long)r->cnt[NPU_CNT_dram_rd_x]);
    return 0;
}

static int dma_point(const npu_cfg_t *cfg, npu_sim_t *sim, npu_calib_dma_pt_t *t, char *msg, size_t n)
{
    npu_prog_t p;
    npu_bursts_t acc;
    npu_run_result_t r;
    int rc;
    npu_prog_init(&p);
    rc = dma_build(cfg, t, &p, &acc, msg, n);
    if (rc == 0)
        rc = run(cfg, sim, &p, "LOAD sweep", &r, msg, n);
    if (rc == 0)
        rc = dma_check(cfg, t, &p, &acc, &r, msg, n);
    t->bursts = acc.bursts;
    t->beats = acc.beats;
    t->cycles = rc == 0 ? r.cnt[NPU_CNT_cycles] : 0;
    npu_prog_free(&p);
    return rc;
}

/* Every point of the sweep: widths innermost, so a setting's points form its sawtooth. Settings
 * 0..15: 1 or 4 LOADs back to back; with LOAD_PIPELINE = 1 also 16..23: 4 LOADs each after a
 * SYNC_L (the last one done), which pay the latency the queued ones overlap (XFER_IDLE). */
static int dma_sweep(const npu_cfg_t *cfg, npu_sim_t *sim, npu_calib_t *c, char *msg, size_t n)
{
    static const unsigned rows[2] = {4, 16}, xfers[2] = {1, 4};
    unsigned wmax = dma_wmax(cfg), step = c->quick ? 32 : 16, B = (unsigned)npu_cfg_beat(cfg);
    unsigned offs[2] = {0, B / 2 + 2}; /* beat-aligned, and not: one more beat per run */
    int settings = cfg->load_pipeline ? 24 : 16;
    size_t cap = (size_t)settings * (wmax / step);
    c->dma = calloc(cap, sizeof *c->dma);
    c->dma_lat = calloc(cap, 1);
    if (!c->dma || !c->dma_lat)
        return failf(msg, n, "out of memory");
    for (int s = 0; s < settings; s++)
        for (unsigned w = step; w <= wmax; w += step) {
            npu_calib_dma_pt_t *t = &c->dma[c->ndma];
            t->w = w;
            t->waits = s >= 16 ? 3 : 0;
            t->rows = rows[s >> (s >= 16 ? 2 : 3) & 1];
            t->xfers = s >= 16 ? 4 : xfers[s >> 2 & 1];
            t->dense = (unsigned)(s >> 1 & 1);
            t->off = offs[s & 1];
            if (dma_point(cfg, sim, t, msg, n) != 0)
                return -1;
            c->ndma++;
        }
    return 0;
}

/* ---- EXEC: waves and drains ------------------------------------------------------------- */

/* count LDW + WAVE pairs of m rows (mode FW, k = n = 2S: one S x S tile per core, banks
 * alternating) or count DRAINs of m rows. */
static int exec_build(const npu_cfg_t *cfg, int drain, unsigned m, unsigned count, npu_prog_t *p,
                      char *msg, size_t n)
{
    unsigned S = (unsigned)cfg->s;
    npu_pb_t pb;
    npu_insn_t in;
    npu_pb_init(&pb, cfg);
    npu_pb_context(&pb, "%s m=%u x%u", drain ? "DRAIN" : "WAVE", m, count);
    for (unsigned i = 0; i < count; i++) {
        if (drain) {
            npu_pb_put(&pb, p, npu_enc_drain(&in, m, 0, 0, 2), &in, 0);
            continue;
        }
        unsigned bank = npu_pb_bank(&pb);
        npu_pb_put(&pb, p, npu_enc_ldw(&in, bank, NPU_MODE_FW, 0, 1, 2 * S, 2 * S), &in, 0);
        npu_pb_put(&pb, p, npu_enc_wave(&in, bank, NPU_MODE_FW, i > 0, m, 0, 1, 2 * S, 2 * S, 0), &in, 0);
    }
    return npu_pb_finish(&pb, msg, n);
}

static int exec_point(const npu_cfg_t *cfg, npu_sim_t *sim, int drain, npu_calib_exec_pt_t *t,
                      char *msg, size_t n)
{
    npu_prog_t p;
    npu_run_result_t r;
    int rc;
    npu_prog_init(&p);
    rc = exec_build(cfg, drain, t->size, t->count, &p, msg, n);
    if (rc == 0)
        rc = run(cfg, sim, &p, drain ? "DRAIN set" : "WAVE set", &r, msg, n);
    t->cycles = rc == 0 ? r.cnt[NPU_CNT_cycles] : 0;
    t->rows = (uint64_t)t->count * t->size;
    npu_prog_free(&p);
    return rc;
}

/* WAVE: m = S..32S within the OBUF rows (short waves show the bank turnaround), 1..4 pairs (the
 * whole program fits the EXEC queue, so the fetch never starves it). DRAIN: r = S, 4S, 16S, 32S
 * within the OBUF half, 1, 2 or 4 drains. */
static int exec_sweep(const npu_cfg_t *cfg, npu_sim_t *sim, npu_calib_t *c, char *msg, size_t n)
{
    static const unsigned wmul[6] = {1, 2, 4, 8, 16, 32}, mul[4] = {1, 4, 16, 32}, ndr[3] = {1, 2, 4};
    unsigned S = (unsigned)cfg->s, pairs = cfg->queue_depth / 2 < 4 ? (unsigned)cfg->queue_depth / 2 : 4;
    for (unsigned i = 0; i < 6; i++)
        for (unsigned k = 1; k <= pairs; k++) {
            npu_calib_exec_pt_t *t = &c->wave[c->nwave];
            t->size = wmul[i] * S;
            t->count = k;
            if (t->size > (unsigned)cfg->obuf_rows)
                continue;
            if (exec_point(cfg, sim, 0, t, msg, n) != 0)
                return -1;
            c->nwave++;
        }
    for (unsigned i = 0; i < 4; i++)
        for (unsigned k = 0; k < 3 && ndr[k] <= (unsigned)cfg->queue_depth; k++) {
            npu_calib_exec_pt_t *t = &c->drain[c->ndrain];
            t->size = S * mul[i];
            t->count = ndr[k];
            if (t->size > (unsigned)cfg->obuf_rows)
                continue;
            if (exec_point(cfg, sim, 1, t, msg, n) != 0)
                return -1;
            c->ndrain++;
        }
    return 0;
}

/* ---- the fits ----------------------------------------------------------------------------- */

/* R^2 of predictions f against measurements y. */
static double r2_of(const double *f, const double *y, size_t n)
{
    double mean = 0, sse = 0, sst = 0;
    for (size_t i = 0; i < n; i++)
        mean += y[i];
    mean /= (double)n;
    for (size_t i = 0; i < n; i++) {
        sse += (y[i] - f[i]) * (y[i] - f[i]);
        sst += (y[i] - mean) * (y[i] - mean);
    }
    return sst > 0 ? 1.0 - sse / sst : 1.0;
}

/* y[i] - off[i] ~ X beta (p columns); m->r2 of off + X beta against y. */
static int fit(const double *X, const double *y, const double *off, size_t n, int p,
               npu_calib_model_t *m)
{
    double *yy, *f;
    int rc = -1;
    if (n < (size_t)p)
        return -1;
    yy = calloc(n, sizeof *yy);
    f = calloc(n, sizeof *f);
    if (yy && f) {
        for (size_t i = 0; i < n; i++)
            yy[i] = y[i] - off[i];
        rc = npu_lsq_fit(X, yy, n, p, m->coef, NULL);
        for (size_t i = 0; rc == 0 && i < n; i++) {
            f[i] = off[i];
            for (int j = 0; j < p; j++)
                f[i] += X[i * (size_t)p + j] * m->coef[j];
        }
        if (rc == 0)
            m->r2 = r2_of(f, y, n);
        m->n = n;
    }
    free(yy);
    free(f);
    return rc;
}

/* The DMA fit: a LOAD is bus-bound, xfer_fixed + burst per burst + byte per byte, or
 * latency-bound, lat_fixed + window per burst (MAX_OUTSTANDING round trips in flight), whichever
 * is longer (slice_cost.h), and a LOAD after a SYNC_L pays xfer_idle on top (either way: its
 * latency follows the wait). Each point is classed by its bursts (window > burst + their mean
 * bytes' time) under the constants of the previous round (the config's formulas first) and the
 * design refitted until the classes settle. Columns without a point (no latency-bound LOAD, no
 * waits: LOAD_PIPELINE = 0) are left out and their constants 0. */
enum { DMA_COLS = 7 }; /* launch, xfer_fixed, burst, byte, lat_fixed, window, xfer_idle */

/* The DMA design's columns col[0..p) (rows of DMA_COLS in X) fitted into k (the others 0). A
 * constant that fits below 0 (pipelined LOADs at small: the queued transfers' latency-bound tail
 * overlaps, and lat_fixed fits -2.7) has no cost meaning: it is held at 0 and the rest refitted,
 * the most negative first. */
static int fit_dma_cols(npu_calib_t *c, const double *X, const double *y, const double *off, int *col, int p,
                        double *k)
{
    double *Xp = calloc(c->ndma * DMA_COLS, sizeof *Xp);
    int rc = Xp ? 0 : -1, neg = 1;
    while (rc == 0 && neg) {
        for (size_t i = 0; i < c->ndma; i++)
            for (int j = 0; j < p; j++)
                Xp[(size_t)p * i + (size_t)j] = X[DMA_COLS * i + (size_t)col[j]];
        if ((rc = fit(Xp, y, off, c->ndma, p, &c->fdma)) != 0)
            break;
        neg = 0;
        for (int j = 1; j < p; j++)
            if (c->fdma.coef[j] < -1e-9 && (!neg || c->fdma.coef[j] < c->fdma.coef[neg]))
                neg = j;
        if (neg) {
            memmove(&col[neg], &col[neg + 1], (size_t)(p - neg - 1) * sizeof *col);
            p--;
        }
    }
    memset(k, 0, DMA_COLS * sizeof *k);
    for (int j = 0; rc == 0 && j < p; j++)
        k[col[j]] = c->fdma.coef[j];
    free(Xp);
    return rc;
}
static int fit_dma(const npu_cfg_t *cfg, npu_calib_t *c, double *X, double *y, double *off)
{
    npu_slice_cost_t f = npu_slice_cost_formula(cfg, NPU_SLICE_BURST);
    double B = (double)npu_cfg_beat(cfg), k[DMA_COLS] = {0, f.xfer_fixed / 65536.0, f.burst / 65536.0,
                                                         f.byte / 65536.0, f.lat_fixed / 65536.0,
                                                         f.window / 65536.0, f.xfer_idle / 65536.0};
    int moved = 1;
    for (int round = 0; round < 16 && moved; round++) {
        size_t nlat = 0, nwait = 0;
        int col[DMA_COLS], p = 0;
        moved = 0;
        for (size_t i = 0; i < c->ndma; i++) {
            const npu_calib_dma_pt_t *t = &c->dma[i];
            double x = t->xfers, b = (double)t->bursts, by = (double)t->beats * B;
            int lat = k[5] > k[2] + k[3] * by / b; /* by its bursts: the same class at any length */
            double row[DMA_COLS] = {1, lat ? 0 : x, lat ? 0 : b, lat ? 0 : by, lat ? x : 0, lat ? b : 0, t->waits};
            moved |= round == 0 || (int)c->dma_lat[i] != lat;
            c->dma_lat[i] = (unsigned char)lat;
            nlat += (size_t)lat;
            nwait += t->waits > 0;
            memcpy(X + DMA_COLS * i, row, sizeof row);
            y[i] = (double)t->cycles;
            off[i] = 0;
        }
        for (int j = 0; j < DMA_COLS; j++) /* the columns some point has */
            if (j == 6 ? nwait > 0 : j == 4 || j == 5 ? nlat > 0 : 1)
                col[p++] = j;
        if (fit_dma_cols(c, X, y, off, col, p, k) != 0)
            return -1;
    }
    memcpy(c->fdma.coef, k, sizeof k);
    return 0;
}

/* The WAVE fit: a pair of m rows costs max(m, (m + wave) / 2), wave the turnaround of a weight
 * bank (the next LDW writes its rows behind the last rows on it), classed and refitted as above
 * from wave = 3S + 8. cycles - off = launch + wave * x, off = pairs * m or pairs * m / 2. */
static int fit_wave(const npu_cfg_t *cfg, npu_calib_t *c, double *X, double *y, double *off)
{
    double turn = npu_slice_cost_formula(cfg, NPU_SLICE_BURST).wave / 65536.0;
    int moved = 1;
    for (int round = 0; round < 16 && moved; round++) {
        size_t nturn = 0;
        moved = 0;
        for (size_t i = 0; i < c->nwave; i++) {
            const npu_calib_exec_pt_t *t = &c->wave[i];
            int tb = (double)t->size < turn;
            moved |= round == 0 || (int)c->wave_turn[i] != tb;
            c->wave_turn[i] = (unsigned char)tb;
            nturn += (size_t)tb;
            X[2 * i] = 1;
            X[2 * i + 1] = tb ? t->count / 2.0 : 0;
            y[i] = (double)t->cycles;
            off[i] = tb ? (double)t->rows / 2 : (double)t->rows;
        }
        for (size_t i = 0; !nturn && i < c->nwave; i++)
            X[i] = 1; /* launch alone */
        if (fit(X, y, off, c->nwave, nturn ? 2 : 1, &c->fwave) != 0)
            return -1;
        turn = nturn ? c->fwave.coef[1] : 0;
    }
    c->fwave.coef[1] = turn;
    return 0;
}

/* The three sets, fitted. */
static int fit_all(const npu_cfg_t *cfg, npu_calib_t *c, char *msg, size_t n)
{
    size_t N = c->ndma + c->nwave + c->ndrain;
    double *X = calloc(N * DMA_COLS, sizeof *X), *y = calloc(N, sizeof *y), *off = calloc(N, sizeof *off);
    int rc = -1;
    if (!X || !y || !off) {
        failf(msg, n, "out of memory");
        goto out;
    }
    if (fit_dma(cfg, c, X, y, off) != 0) {
        failf(msg, n, "DMA fit: the sweep does not separate transfers, bursts and bytes");
        goto out;
    }
    if (fit_wave(cfg, c, X, y, off) != 0) {
        failf(msg, n, "WAVE fit: degenerate sweep");
        goto out;
    }
    for (size_t i = 0; i < c->ndrain; i++) {
        double row[3] = {1, (double)c->drain[i].count, (double)c->drain[i].rows};
        memcpy(X + 3 * i, row, sizeof row);
        y[i] = (double)c->drain[i].cycles;
        off[i] = 0;
    }
    if (fit(X, y, off, c->ndrain, 3, &c->fdrain) != 0) {
        failf(msg, n, "DRAIN fit: degenerate sweep");
        goto out;
    }
    rc = 0;
out:
    free(X);
    free(y);
    free(off);
    return rc;
}

/* A fitted cost in Q16 cycles. One that rounds to a negative Q16 value is refused (no cost model
 * can use it); an exact zero (DRAINs back to back cost no fixed time) may come out as -1e-13. */
static int to_q16(double v, const char *name, unsigned *q, char *msg, size_t n)
{
    double x = v * 65536.0 + 0.5;
    if (!(x >= 0) || v > 65535.0)
        return failf(msg, n, "the fit gave %s = %.4f cycles, outside [0, 65535]", name, v);
    *q = (unsigned)x;
    return 0;
}

static int constants(npu_calib_t *c, char *msg, size_t n)
{
    npu_cfg_calib_t *k = &c->k;
    memset(k, 0, sizeof *k);
    if (to_q16(c->fdma.coef[1], "xfer_fixed", &k->xfer_fixed, msg, n) ||
        to_q16(c->fdma.coef[2], "burst", &k->burst, msg, n) ||
        to_q16(c->fdma.coef[3], "byte", &k->byte, msg, n) ||
        to_q16(c->fwave.coef[1], "wave", &k->wave, msg, n) ||
        to_q16(c->fdrain.coef[1], "drain_fixed", &k->drain_fixed, msg, n) ||
        to_q16(c->fdrain.coef[2], "drain_row", &k->drain_row, msg, n) ||
        to_q16(c->fdma.coef[4], "lat_fixed", &k->lat_fixed, msg, n) ||
        to_q16(c->fdma.coef[5], "window", &k->window, msg, n) ||
        to_q16(c->fdma.coef[6], "xfer_idle", &k->xfer_idle, msg, n))
        return -1;
    k->valid = 1;
    return 0;
}

int npu_calibrate(const npu_cfg_t *cfg, npu_sim_t *sim, int quick, npu_calib_t *c, char *msg,
                  size_t n)
{
    clock_t t0 = clock();
    memset(c, 0, sizeof *c);
    c->quick = quick;
    if (dma_sweep(cfg, sim, c, msg, n) != 0 || exec_sweep(cfg, sim, c, msg, n) != 0 ||
        fit_all(cfg, c, msg, n) != 0 || constants(c, msg, n) != 0)
        return -1;
    c->wall_s = (double)(clock() - t0) / CLOCKS_PER_SEC;
    if (!(c->fdma.r2 >= NPU_CALIB_R2_MIN))
        return failf(msg, n, "the DMA fit's R^2 = %.4f is below %.2f: cycles are not T0 + "
                     "bursts*CAS + bytes/BW", c->fdma.r2, NPU_CALIB_R2_MIN);
    return 0;
}

void npu_calib_free(npu_calib_t *c)
{
    free(c->dma);
    free(c->dma_lat);
    c->dma = NULL;
    c->ndma = 0;
}

static double cyc(unsigned q) { return (double)q / 65536.0; }

int npu_calib_write(FILE *f, const npu_cfg_t *cfg, const npu_calib_t *c, const char *command)
{
    const npu_cfg_calib_t *k = &c->k;
    fprintf(f, "# Calibration of config \"%s\": the slicing stage's cost constants (compile/slice/"
               "slice_cost.h),\n# fitted on the RTL by `%s` -- regenerate, do not edit.\n"
               "# Read by sw/tools/gencfg into build/%s/npu_params.h (docs/compiler.md \"Slicing\").\n",
            cfg->name, command, cfg->name);
    fprintf(f, "# Measured under (must equal %s.cfg):\n", cfg->name);
    fprintf(f, "S               = %d\nMAX_BURST_BEATS = %d\nMAX_OUTSTANDING = %d\nDRAM_BW         = %d\n"
               "DRAM_LATENCY    = %d\nDRAM_BURST_COST = %d\nBEAT_WORDS      = %d\nLOAD_PIPELINE   = %d\n",
            cfg->s, cfg->max_burst_beats, cfg->max_outstanding, cfg->dram_bw, cfg->dram_latency,
            cfg->dram_burst_cost, cfg->beat_words, cfg->load_pipeline);
    fprintf(f, "QUICK           = %d   # 1: the --quick sweep\n", c->quick);
    fprintf(f, "# Q16 cycles (cycles x 65536). DMA fit over %zu LOAD programs, R^2 = %.5f; launch "
               "%.2f cycles per program (not used)\n", c->fdma.n, c->fdma.r2, c->fdma.coef[0]);
    fprintf(f, "XFER_FIXED      = %u   # %.4f cycles per DMA transfer\n", k->xfer_fixed, cyc(k->xfer_fixed));
    fprintf(f, "BURST           = %u   # %.4f cycles per DRAM burst\n", k->burst, cyc(k->burst));
    fprintf(f, "BYTE            = %u   # %.4f cycles per byte on the bus\n", k->byte, cyc(k->byte));
    fprintf(f, "# WAVE fit over %zu programs, R^2 = %.5f\n", c->fwave.n, c->fwave.r2);
    fprintf(f, "WAVE            = %u   # %.4f cycles: weight-bank turnaround (a wave takes max(m, (m + WAVE)/2))\n",
            k->wave, cyc(k->wave));
    fprintf(f, "# DRAIN fit over %zu programs, R^2 = %.5f\n", c->fdrain.n, c->fdrain.r2);
    fprintf(f, "DRAIN_FIXED     = %u   # %.4f cycles per DRAIN\n", k->drain_fixed, cyc(k->drain_fixed));
    fprintf(f, "DRAIN_ROW       = %u   # %.4f cycles per drained row\n", k->drain_row, cyc(k->drain_row));
    fprintf(f, "# latency-bound LOADs (slice_cost.h): of the DMA fit\n");
    fprintf(f, "LAT_FIXED       = %u   # %.4f cycles per latency-bound DMA transfer\n", k->lat_fixed,
            cyc(k->lat_fixed));
    fprintf(f, "WINDOW          = %u   # %.4f cycles per latency-bound DRAM burst\n", k->window, cyc(k->window));
    fprintf(f, "# the DMA fit's LOADs after a SYNC_L (pipelined LOADs; 0 at LOAD_PIPELINE = 0)\n");
    fprintf(f, "XFER_IDLE       = %u   # %.4f cycles per LOAD on an idle engine, beyond XFER_FIXED\n",
            k->xfer_idle, cyc(k->xfer_idle));
    return ferror(f) ? -1 : 0;
}
