/* commands.h - `npu` commands that live outside npu_main.c. */
#ifndef NPU_CLI_COMMANDS_H
#define NPU_CLI_COMMANDS_H

#include "cli/args.h"
#include "hw/npu_cfg.h"
#include "npu_sim.h"

/* `npu flexsa-report` (cmd_flexsa_report.c): 0 when every run passed, 1 otherwise. */
int npu_cmd_flexsa_report(const npu_cfg_t *cfg, const npu_args_t *a);

/* `npu train` (cmd_train.c): 0 pass, 1 fail or NPU error, 2 bad usage. */
int npu_cmd_train(const npu_cfg_t *cfg, const npu_args_t *a, const npu_dram_timing_t *t);

/* `npu conv` (cmd_conv.c): convolution kernels x dataflows per layer on the RTL. 0 pass, 1 fail
 * or NPU error, 2 bad usage, 3 timeout. */
int npu_cmd_conv(const npu_cfg_t *cfg, const npu_args_t *a, const npu_dram_timing_t *t);

/* `npu train --conv/--topology` (cmd_conv.c): forward, dX (not layer 0) and dW of every conv
 * layer with one dataflow (default ecoflow) or both. Same exit codes. */
int npu_cmd_train_conv(const npu_cfg_t *cfg, const npu_args_t *a, const npu_dram_timing_t *t);

/* `npu train-bench` (cmd_train_bench.c): the analytical brief-000 bench on the paper-scaled
 * configurations. 0 ok, 1 model failure, 2 bad usage / file error. */
int npu_cmd_train_bench(const npu_args_t *a);

#endif
