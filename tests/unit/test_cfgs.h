/* test_cfgs.h - hand-built configurations for the host unit tests (S = 2, 8, 16). */
#ifndef TEST_CFGS_H
#define TEST_CFGS_H

#include <stdint.h>
#include <string.h>

#include "hw/npu_cfg.h"

static inline npu_cfg_t test_cfg(int s)
{
    npu_cfg_t c;
    c.name = s == 2 ? "tiny" : s == 8 ? "small" : s == 16 ? "medium" : "test";
    c.s = s;
    c.spm_banks = 4;
    c.spm_bank_words = s == 2 ? 2048 : 1024;
    c.obuf_rows = s == 2 ? 64 : 256;
    c.lbuf_h_depth = 8;
    c.lbuf_v_depth = 2 * s;
    c.queue_depth = 8;
    c.token_max = 15;
    c.dram_addr_bits = 24;
    c.max_burst_beats = 16;
    c.max_outstanding = 4;
    c.watchdog_cycles = 20000;
    c.dram_bw = 4 * s;
    c.dram_latency = 30;
    c.dram_burst_cost = 4;
    c.dtype = NPU_DTYPE_INT16;
    c.beat_words = 1;
    c.load_pipeline = 0;
    c.store_pipeline = 0;
    memset(&c.calib, 0, sizeof c.calib); /* uncalibrated: the slicing stage's config formulas */
    return c;
}

/* test_cfg(s) with the bf16 datapath */
static inline npu_cfg_t bf16_cfg(int s)
{
    npu_cfg_t c = test_cfg(s);
    c.dtype = NPU_DTYPE_BF16;
    return c;
}

/* xorshift64 for reproducible test data */
static inline uint64_t test_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

#endif
