/* cmd_calibrate.c - `npu calibrate`: the slicing stage's cost constants fitted on RTL
 * microbenchmarks (run/calib.h, docs/compiler.md "Slicing"): the LOAD sawtooth, the fits beside
 * the config's formulas, and the calibration file (--out) that gencfg builds into the config. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "compile/slice/slice_cost.h"
#include "run/calib.h"

static double q16(unsigned x) { return (double)x / 65536.0; }

/* One setting's points in width order: the sawtooth (16 rows per slice, one transfer, slices of
 * the wide tensor, aligned base). */
static void print_sawtooth(const npu_cfg_t *cfg, const npu_calib_t *c)
{
    const double *k = c->fdma.coef, B = (double)npu_cfg_beat(cfg);
    printf("LOAD sawtooth: one transfer of 16 rows x w bytes, a slice of a dense tensor "
           "(beat %d B, bursts up to %d beats)\n", npu_cfg_beat(cfg), cfg->max_burst_beats);
    printf("  %6s %7s %7s %8s %10s %11s\n", "w (B)", "bursts", "beats", "cycles", "predicted",
           "cycles/KiB");
    for (size_t i = 0; i < c->ndma; i++) {
        const npu_calib_dma_pt_t *t = &c->dma[i];
        if (t->rows != 16 || t->xfers != 1 || t->dense || t->off)
            continue;
        double bus = k[1] * t->xfers + k[2] * (double)t->bursts + k[3] * (double)t->beats * B;
        double lat = k[4] * t->xfers + k[5] * (double)t->bursts, pred = k[0] + (bus > lat ? bus : lat);
        printf("  %6u %7llu %7llu %8llu %10.1f %11.1f\n", t->w, (unsigned long long)t->bursts,
               (unsigned long long)t->beats, (unsigned long long)t->cycles, pred,
               (double)t->cycles * 1024.0 / (16.0 * t->w));
    }
}

static void print_text(const npu_cfg_t *cfg, const npu_calib_t *c)
{
    npu_slice_cost_t f = npu_slice_cost_formula(cfg, NPU_SLICE_BURST);
    const npu_cfg_calib_t *k = &c->k;
    const char *name[9] = {"xfer_fixed", "burst", "byte", "wave", "drain_fixed", "drain_row", "lat_fixed", "window",
                           "xfer_idle"};
    unsigned was[9] = {f.xfer_fixed, f.burst, f.byte, f.wave, f.drain_fixed, f.drain_row, f.lat_fixed, f.window,
                       f.xfer_idle};
    unsigned now[9] = {k->xfer_fixed, k->burst, k->byte, k->wave, k->drain_fixed, k->drain_row, k->lat_fixed,
                       k->window, k->xfer_idle};
    printf("DMA fit (cycles = launch + xfer_idle*LOADs after a SYNC_L + max(xfer_fixed*transfers + "
           "burst*bursts + byte*bytes, lat_fixed*transfers + window*bursts)) over %zu LOAD programs: R^2 = %.5f (>= %.2f required), "
           "launch %.1f cycles\n", c->fdma.n, c->fdma.r2, NPU_CALIB_R2_MIN, c->fdma.coef[0]);
    printf("WAVE fit (cycles = launch + sum of max(rows, (rows + wave)/2) per LDW + WAVE pair) over %zu "
           "programs: R^2 = %.5f, launch %.1f\n", c->fwave.n, c->fwave.r2, c->fwave.coef[0]);
    printf("DRAIN fit (cycles = launch + drain_fixed*drains + drain_row*rows) over %zu programs: "
           "R^2 = %.5f, launch %.1f\n", c->fdrain.n, c->fdrain.r2, c->fdrain.coef[0]);
    printf("  %-12s %14s %14s %10s\n", "constant", "config formula", "fitted", "Q16");
    for (int i = 0; i < 9; i++)
        printf("  %-12s %14.4f %14.4f %10u\n", name[i], q16(was[i]), q16(now[i]), now[i]);
}

/* {"name": value, ...} of the NPU_CALIB_CONSTS constants. */
#define NPU_CALIB_CONSTS 9
static void json_consts(cJSON *root, const char *key, const char *const *name, const double *v)
{
    cJSON *o = cJSON_AddObjectToObject(root, key);
    for (int i = 0; i < NPU_CALIB_CONSTS; i++)
        cJSON_AddNumberToObject(o, name[i], v[i]);
}

static void print_json(const npu_cfg_t *cfg, const npu_args_t *a, const npu_calib_t *c)
{
    static const char *const name[NPU_CALIB_CONSTS] = {"xfer_fixed", "burst", "byte", "wave", "drain_fixed",
                                                       "drain_row", "lat_fixed", "window", "xfer_idle"};
    const npu_cfg_calib_t *k = &c->k;
    const unsigned q[NPU_CALIB_CONSTS] = {k->xfer_fixed, k->burst, k->byte, k->wave, k->drain_fixed,
                                          k->drain_row, k->lat_fixed, k->window, k->xfer_idle};
    double vq[NPU_CALIB_CONSTS], vc[NPU_CALIB_CONSTS];
    cJSON *root = npu_cli_json_new(cfg, a), *o;
    if (!root)
        return;
    for (int i = 0; i < NPU_CALIB_CONSTS; i++) {
        vq[i] = q[i];
        vc[i] = q16(q[i]);
    }
    cJSON_AddBoolToObject(root, "quick", c->quick);
    o = cJSON_AddObjectToObject(root, "points");
    cJSON_AddNumberToObject(o, "dma", (double)c->fdma.n);
    cJSON_AddNumberToObject(o, "wave", (double)c->fwave.n);
    cJSON_AddNumberToObject(o, "drain", (double)c->fdrain.n);
    o = cJSON_AddObjectToObject(root, "r2");
    cJSON_AddNumberToObject(o, "dma", c->fdma.r2);
    cJSON_AddNumberToObject(o, "wave", c->fwave.r2);
    cJSON_AddNumberToObject(o, "drain", c->fdrain.r2);
    cJSON_AddNumberToObject(root, "r2_min", NPU_CALIB_R2_MIN);
    o = cJSON_AddObjectToObject(root, "launch");
    cJSON_AddNumberToObject(o, "dma", c->fdma.coef[0]);
    cJSON_AddNumberToObject(o, "wave", c->fwave.coef[0]);
    cJSON_AddNumberToObject(o, "drain", c->fdrain.coef[0]);
    json_consts(root, "q16", name, vq);
    json_consts(root, "cycles", name, vc);
    npu_cli_json_print(root);
}

static int write_file(const npu_cfg_t *cfg, const npu_args_t *a, const npu_calib_t *c)
{
    char cmd[512];
    FILE *f = fopen(a->out, "w");
    if (!f) {
        fprintf(stderr, "npu: calibrate: cannot write %s\n", a->out);
        return NPU_EXIT_USAGE;
    }
    snprintf(cmd, sizeof cmd, "build/%s/npu calibrate%s --out %s", cfg->name, a->quick ? " --quick" : "",
             a->out);
    int rc = npu_calib_write(f, cfg, c, cmd);
    if (fclose(f) != 0 || rc != 0) {
        fprintf(stderr, "npu: calibrate: error writing %s\n", a->out);
        return NPU_EXIT_USAGE;
    }
    if (!a->json)
        printf("wrote %s (make rebuilds the config's npu_params.h from it)\n", a->out);
    return NPU_EXIT_PASS;
}

int npu_cmd_calibrate(const npu_cfg_t *cfg, const npu_args_t *a)
{
    npu_dram_timing_t t = npu_cli_dram_timing(cfg, a); /* calibrate takes no DRAM option: the
                                                          config's timing, no stalls */
    npu_calib_t c;
    char msg[512];
    npu_sim_t *sim = npu_cli_open_sim(cfg, a, &t);
    if (!sim)
        return NPU_EXIT_FAIL;
    int rc = npu_calibrate(cfg, sim, a->quick, &c, msg, sizeof msg);
    npu_sim_close(sim);
    if (rc != 0) {
        fprintf(stderr, "npu: calibrate (config %s): %s\n", cfg->name, msg);
        npu_calib_free(&c);
        return NPU_EXIT_FAIL;
    }
    if (a->json) {
        print_json(cfg, a, &c);
    } else {
        printf("npu calibrate: config %s, DRAM %d B/cycle, latency %d, burst cost %d, %d "
               "outstanding (%.1f s)\n", cfg->name, cfg->dram_bw, cfg->dram_latency,
               cfg->dram_burst_cost, cfg->max_outstanding, c.wall_s);
        if (!a->quiet)
            print_sawtooth(cfg, &c);
        print_text(cfg, &c);
    }
    rc = a->out ? write_file(cfg, a, &c) : NPU_EXIT_PASS;
    npu_calib_free(&c);
    return rc;
}
