/*
 * test_calibrate.c - `npu calibrate` on the RTL of this build (run/calib.h; acceptance 3 of
 * issue 14: the sawtooth fits T0 + bursts*CAS + bytes/BW with R^2 >= 0.98, and the fitted
 * constants are the ones the slicing stage uses).
 *
 * calibrate/committed  the sweep configs/<cfg>.calib was made with (its QUICK key): every burst
 *                      count cross-checked (slicer = npu_dma_bursts = the RTL's counter), DMA
 *                      R^2 >= 0.98, and the nine Q16 constants equal to those the file gave this
 *                      build (NPU_CFG_INIT, what npu_slice_cost_default returns). Cycle counts
 *                      are deterministic, so a timing change of the RTL fails here with
 *                      old -> new and the command that regenerates the file.
 * calibrate/quick      the --quick sweep: R^2 >= 0.98, WAVE and DRAIN constants equal to the
 *                      full sweep's (the same programs), DMA constants within 10% + 0.25 cycles
 *                      of the file's (XFER_FIXED with LOAD_PIPELINE = 1: 10% of XFER_FIXED +
 *                      XFER_IDLE, a transfer's cost alone, + 0.25: the queued residual of ~2
 *                      cycles trades with BURST between the two sweeps' widths).
 * calibrate/idle_latency_separated  LOAD_PIPELINE = 1: XFER_FIXED < 2 cycles (queued LOADs),
 *                      XFER_IDLE within [DRAM_LATENCY, +10] (LOADs after a SYNC_L); 0: the
 *                      latency in XFER_FIXED, XFER_IDLE = 0.
 */
#include <stdio.h>
#include <string.h>

#include "compile/slice/slice_cost.h"
#include "rtl_common.h"
#include "run/calib.h"

enum { NK = 9 };
static const char *const k_name[NK] = {"XFER_FIXED", "BURST", "BYTE", "WAVE", "DRAIN_FIXED",
                                       "DRAIN_ROW", "LAT_FIXED", "WINDOW", "XFER_IDLE"};

static void consts(const npu_cfg_calib_t *k, unsigned *v)
{
    unsigned t[NK] = {k->xfer_fixed, k->burst, k->byte, k->wave, k->drain_fixed, k->drain_row, k->lat_fixed,
                      k->window, k->xfer_idle};
    memcpy(v, t, sizeof t);
}

static void calibrate(const npu_cfg_t *cfg, int quick, npu_calib_t *c)
{
    char msg[512];
    npu_sim_t *s = rtl_open(cfg, 0, 0, 1);
    int rc = npu_calibrate(cfg, s, quick, c, msg, sizeof msg);
    npu_sim_close(s);
    cr_assert_eq(rc, 0, "config %s: npu calibrate%s failed: %s", cfg->name, quick ? " --quick" : "", msg);
    cr_assert(c->fdma.r2 >= NPU_CALIB_R2_MIN, "DMA R^2 %.5f", c->fdma.r2);
}

Test(calibrate, committed, .timeout = 120)
{
    npu_cfg_t cfg = rtl_cfg();
    npu_calib_t c;
    unsigned want[NK], got[NK];
    cr_assert(cfg.calib.valid, "config %s has no configs/%s.calib: run build/%s/npu calibrate --out "
              "configs/%s.calib", cfg.name, cfg.name, cfg.name, cfg.name);
    calibrate(&cfg, NPU_CFG_CALIB_QUICK, &c);
    consts(&cfg.calib, want);
    consts(&c.k, got);
    char diff[512] = "";
    for (int i = 0; i < NK; i++)
        if (got[i] != want[i])
            snprintf(diff + strlen(diff), sizeof diff - strlen(diff), " %s %u -> %u", k_name[i],
                     want[i], got[i]);
    cr_assert_eq(diff[0], 0, "config %s: the RTL's timing moved, configs/%s.calib is stale:%s "
                 "(Q16); regenerate it with build/%s/npu calibrate%s --out configs/%s.calib",
                 cfg.name, cfg.name, diff, cfg.name, NPU_CFG_CALIB_QUICK ? " --quick" : "", cfg.name);
    npu_slice_cost_t k = npu_slice_cost_default(&cfg, NPU_SLICE_BURST);
    cr_assert(k.burst == got[1] && k.xfer_fixed == got[0] && k.byte == got[2] && k.wave == got[3] &&
                  k.lat_fixed == got[6] && k.window == got[7] && k.xfer_idle == got[8],
              "the slicing stage does not use the calibration");
    npu_calib_free(&c);
}

Test(calibrate, quick, .timeout = 120)
{
    npu_cfg_t cfg = rtl_cfg();
    npu_calib_t c;
    unsigned want[NK], got[NK];
    cr_assert(cfg.calib.valid, "config %s has no configs/%s.calib", cfg.name, cfg.name);
    calibrate(&cfg, 1, &c);
    consts(&cfg.calib, want);
    consts(&c.k, got);
    for (int i = 0; i < NK; i++) {
        double w = want[i] / 65536.0, g = got[i] / 65536.0, tol = i < 3 || i > 5 ? 0.1 * w + 0.25 : 0;
        if (i == 0 && cfg.load_pipeline) /* a queued LOAD's ~2-cycle residual: 10% of a transfer's
                                          * cost alone, XFER_FIXED + XFER_IDLE (small: 1.26 / 2.11) */
            tol = 0.1 * (w + want[8] / 65536.0) + 0.25;
        cr_assert(g >= w - tol && g <= w + tol, "config %s: --quick %s = %.4f cycles, the "
                  "calibration file's %.4f", cfg.name, k_name[i], g, w);
    }
    npu_calib_free(&c);
}

/* The sweep separates the two fixed costs: with LOAD_PIPELINE = 1 a LOAD queued behind another
 * pays at most a couple of cycles (XFER_FIXED: its latency overlaps the last one's data) and one
 * after a SYNC_L at least the DRAM latency on top (XFER_IDLE); with 0 every LOAD pays the latency
 * in XFER_FIXED and XFER_IDLE is 0 (the fit has no waits column). */
Test(calibrate, idle_latency_separated, .timeout = 120)
{
    npu_cfg_t cfg = rtl_cfg();
    npu_calib_t c;
    double lat = cfg.dram_latency, fixed, idle;
    calibrate(&cfg, 1, &c);
    fixed = c.k.xfer_fixed / 65536.0, idle = c.k.xfer_idle / 65536.0;
    if (cfg.load_pipeline) {
        cr_assert(fixed < 2.0, "config %s: a queued LOAD's XFER_FIXED %.3f cycles", cfg.name, fixed);
        cr_assert(idle >= lat && idle <= lat + 10, "config %s: XFER_IDLE %.3f, DRAM latency %.0f", cfg.name,
                  idle, lat);
    } else {
        cr_assert(fixed >= lat, "config %s: XFER_FIXED %.3f below the latency %.0f", cfg.name, fixed, lat);
        cr_assert_eq(c.k.xfer_idle, 0u, "config %s: XFER_IDLE without pipelining", cfg.name);
    }
    npu_calib_free(&c);
}
