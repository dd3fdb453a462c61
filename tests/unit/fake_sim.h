/* fake_sim.h - the C functional model opened with a config's DRAM timing: exact (no stalls), or
 * with 20 % random stalls and `jitter` (host unit tests of the convolution programs). */
#ifndef FAKE_SIM_H
#define FAKE_SIM_H

#include <criterion/criterion.h>
#include <string.h>

#include "hw/npu_cfg.h"
#include "npu_funcsim.h"
#include "npu_sim.h"

/* The model at c with c's DRAM timing and no stalls. */
static inline npu_sim_t *open_fake_exact(const npu_cfg_t *c)
{
    npu_dram_timing_t t;
    memset(&t, 0, sizeof t);
    t.bytes_per_cycle = c->dram_bw;
    t.latency = (unsigned)c->dram_latency;
    t.burst_cost = (unsigned)c->dram_burst_cost;
    npu_funcsim_config(c);
    npu_sim_t *s = npu_sim_open(&t);
    cr_assert_not_null(s);
    return s;
}

static inline npu_sim_t *open_fake(const npu_cfg_t *c, unsigned jitter, uint64_t seed)
{
    npu_dram_timing_t t;
    memset(&t, 0, sizeof t);
    t.bytes_per_cycle = c->dram_bw;
    t.latency = (unsigned)c->dram_latency;
    t.burst_cost = (unsigned)c->dram_burst_cost;
    t.stall_pct = 20;
    t.seed = seed;
    npu_funcsim_config(c);
    npu_funcsim_jitter(jitter);
    npu_sim_t *s = npu_sim_open(&t);
    cr_assert_not_null(s);
    return s;
}

#endif
