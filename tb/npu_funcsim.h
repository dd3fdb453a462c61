/*
 * npu_funcsim.h - controls of the functional NPU model in npu_funcsim.c, which implements the
 * tb/npu_sim.h API without the RTL (an ISA reference model for the host tests).
 */
#ifndef FAKE_NPU_SIM_H
#define FAKE_NPU_SIM_H

#include "hw/npu_cfg.h"

/* Configuration used by the next npu_sim_open (and by npu_sim_beat_bytes). Default: "small"
 * (or NPU_CFG_INIT when built with -DNPU_FUNCSIM_USE_PARAMS and build/<cfg>/ on the include path). */
void npu_funcsim_config(const npu_cfg_t *cfg);

/* Timing jitter for the next npu_sim_open: every instruction takes up to pct % longer, drawn
 * from the timing seed. With a large pct the three queues interleave in many different ways,
 * so a program whose dependency tokens are wrong computes a wrong result. Default 0. */
void npu_funcsim_jitter(unsigned pct);

#endif
