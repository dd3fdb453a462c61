/* test_scalesim.c - the SCALE-Sim-shaped per-layer figures (sw/run/scalesim.h) from hand-made
 * counters: every column's definition, and no division by zero on an empty run. */
#include <criterion/criterion.h>
#include <string.h>

#include "hw/npu_defs.h"
#include "run/scalesim.h"
#include "test_cfgs.h"

Test(scalesim, columns_from_counters)
{
    npu_cfg_t c = test_cfg(2); /* 4 S^2 = 16 PEs */
    uint64_t cnt[NPU_NUM_COUNTERS];
    npu_scalesim_t s;
    memset(cnt, 0, sizeof cnt);
    cnt[NPU_CNT_cycles] = 1000;
    cnt[NPU_CNT_busy_fw] = 300;
    cnt[NPU_CNT_busy_hsw] = 100;       /* busy 400: 600 stall cycles */
    cnt[NPU_CNT_macs_core0] = 3000;
    cnt[NPU_CNT_macs_core2] = 1000;    /* 4000 useful MACs */
    cnt[NPU_CNT_idle_pe_shape] = 1000;
    cnt[NPU_CNT_lbuf_h_words] = 500;   /* x S = 1000 words */
    cnt[NPU_CNT_lbuf_v_words] = 100;
    cnt[NPU_CNT_obuf_drain_rows] = 50; /* x 2S = 200 results */
    cnt[NPU_CNT_dram_rd_x] = 4000;     /* 2000 int16 */
    cnt[NPU_CNT_dram_rd_w] = 1000;
    cnt[NPU_CNT_dram_wr_y] = 2000;     /* 500 int32 */
    cnt[NPU_CNT_dram_rd_dy] = 999999;  /* another tag: not A's */
    npu_scalesim_of(&c, cnt, NPU_TAG_X, NPU_TAG_W, NPU_TAG_Y, &s);
    cr_assert(s.total_cycles == 1000 && s.stall_cycles == 600);
    cr_assert_float_eq(s.overall_util, 100.0 * 4000 / (16.0 * 1000), 1e-9);
    cr_assert_float_eq(s.compute_util, 100.0 * 4000 / (16.0 * 400), 1e-9);
    cr_assert_float_eq(s.mapping_eff, 80.0, 1e-9);
    cr_assert_float_eq(s.sram_bw[0], 1.0, 1e-9);
    cr_assert_float_eq(s.sram_bw[1], 0.2, 1e-9);
    cr_assert_float_eq(s.sram_bw[2], 0.2, 1e-9);
    cr_assert_float_eq(s.dram_bw[0], 2.0, 1e-9);
    cr_assert_float_eq(s.dram_bw[1], 0.5, 1e-9);
    cr_assert_float_eq(s.dram_bw[2], 0.5, 1e-9);
    npu_scalesim_of(&c, cnt, NPU_TAG_DY, NPU_TAG_W, NPU_TAG_Y, &s); /* A tagged dY */
    cr_assert_float_eq(s.dram_bw[0], 999999.0 / 2 / 1000, 1e-9);
}

Test(scalesim, empty_run)
{
    npu_cfg_t c = test_cfg(8);
    uint64_t cnt[NPU_NUM_COUNTERS];
    npu_scalesim_t s;
    memset(cnt, 0, sizeof cnt);
    npu_scalesim_of(&c, cnt, NPU_TAG_X, NPU_TAG_W, NPU_TAG_Y, &s);
    cr_assert(s.total_cycles == 0 && s.overall_util == 0 && s.compute_util == 0 &&
              s.mapping_eff == 0 && s.dram_bw[2] == 0);
}
