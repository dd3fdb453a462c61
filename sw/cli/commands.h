/* commands.h - `npu` commands that live outside npu_main.c. */
#ifndef NPU_CLI_COMMANDS_H
#define NPU_CLI_COMMANDS_H

#include "args.h"
#include "npu_cfg.h"

/* `npu flexsa-report` (cmd_flexsa_report.c): 0 when every run passed, 1 otherwise. */
int npu_cmd_flexsa_report(const npu_cfg_t *cfg, const npu_args_t *a);

#endif
