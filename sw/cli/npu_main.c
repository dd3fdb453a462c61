/*
 * npu_main.c - the `npu` command line: parses the arguments (args.h) and dispatches to the
 * command (commands.h, one file per command). Built once per configuration
 * (build/<config>/npu); npu_params.h is generated from configs/<config>.cfg and gives
 * NPU_CFG_INIT, the only configuration-dependent part of the CLI.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu_params.h" /* generated: NPU_CFG_INIT */

#include "cli/args.h"
#include "cli/commands.h"
#include "hw/npu_cfg.h"
#include "compile/slice/slice_cost.h"
#include "run/progress.h"
#include "run/recorder.h"
#include "run/timeline.h"

static npu_cfg_t g_cfg = NPU_CFG_INIT;

static int cmd_help(const npu_cfg_t *cfg, const npu_args_t *a)
{
    if (a->help_cmd)
        npu_args_cmd_usage(stdout, a->help_cmd);
    else
        npu_args_usage(stdout, cfg->name);
    return NPU_EXIT_PASS;
}

static const struct {
    int cmd;
    int (*run)(const npu_cfg_t *cfg, const npu_args_t *a);
} k_dispatch[] = {
    {NPU_CMD_HELP, cmd_help},
    {NPU_CMD_INFO, npu_cmd_info},
    {NPU_CMD_VERSION, npu_cmd_version},
    {NPU_CMD_DISASM, npu_cmd_disasm},
    {NPU_CMD_RUN, npu_cmd_run},
    {NPU_CMD_SLICE, npu_cmd_slice},
    {NPU_CMD_CALIBRATE, npu_cmd_calibrate},
    {NPU_CMD_OVERLAP, npu_cmd_overlap},
    {NPU_CMD_FLEXSA_REPORT, npu_cmd_flexsa_report},
    {NPU_CMD_TRAIN_BENCH, npu_cmd_train_bench},
    {NPU_CMD_TRAIN, npu_cmd_train},
    {NPU_CMD_FIT, npu_cmd_fit},
    {NPU_CMD_ESTIMATE, npu_cmd_estimate},
    {NPU_CMD_SWEEP, npu_cmd_sweep},
    {NPU_CMD_CONV, npu_cmd_conv},
    {NPU_CMD_GEMM, npu_cmd_gemm},
};

/* After SIGINT the command has stopped its run, closed the trace and printed what it had: the
 * shell's convention for a run ended by SIGINT, 128 + 2. */
static int interrupted(int rc)
{
    if (!npu_progress_interrupted())
        return rc;
    fprintf(stderr, "npu: interrupted (SIGINT): the run stopped early, the report above is "
                    "partial\n");
    return 130;
}

static int dispatch(const npu_args_t *a)
{
    for (size_t i = 0; i < sizeof k_dispatch / sizeof k_dispatch[0]; i++)
        if (k_dispatch[i].cmd == a->cmd)
            return k_dispatch[i].run(&g_cfg, a);
    return npu_cmd_gemm(&g_cfg, a);
}

/* The command with --timeline F.json: every program it runs is sampled into F (run/timeline.h),
 * which carries the command's metadata. A file that cannot be written fails the command. */
static int dispatch_timeline(const npu_args_t *a)
{
    cJSON *meta = npu_cli_json_new(&g_cfg, a);
    char *meta_s = meta ? cJSON_PrintUnformatted(meta) : NULL;
    npu_timeline_t *tl = npu_timeline_open(a->timeline, meta_s);
    int rc;
    cJSON_Delete(meta);
    free(meta_s);
    if (!tl) {
        fprintf(stderr, "npu: --timeline %s: cannot write: %s\n", a->timeline, strerror(errno));
        return NPU_EXIT_FAIL;
    }
    npu_timeline_install(tl);
    rc = dispatch(a);
    if (npu_timeline_close(tl) != 0) {
        fprintf(stderr, "npu: --timeline %s: writing failed (disk full or out of memory)\n",
                a->timeline);
        return rc ? rc : NPU_EXIT_FAIL;
    }
    return rc;
}

/* The command with --save-program F, when it may run several programs (all but one GEMM, which
 * saves its own file: cli_tensors.c): every program it runs is recorded (run/recorder.h) and F
 * written when the command passed. */
static int dispatch_recording(const npu_args_t *a)
{
    npu_recorder_t rec;
    char err[600];
    int rc;
    npu_recorder_init(&rec);
    npu_recorder_install(&rec);
    rc = a->timeline ? dispatch_timeline(a) : dispatch(a);
    npu_recorder_install(NULL);
    if (rc != 0)
        fprintf(stderr, "npu: --save-program %s not written: the run did not pass\n",
                a->save_program);
    else if (npu_recorder_save(&rec, a->save_program, &g_cfg, err, sizeof err) != 0) {
        fprintf(stderr, "npu: --save-program %s\n", err);
        rc = NPU_EXIT_FAIL;
    }
    npu_recorder_free(&rec);
    return rc;
}

int main(int argc, char **argv)
{
    npu_args_t a;
    char err[256];
    if (npu_args_parse(argc, argv, g_cfg.name, &a, err, sizeof err) != 0) {
        /* one line for the problem and a hint, not the whole usage */
        fprintf(stderr, "npu: %s\n", err);
        npu_args_hint(stderr, argc, argv);
        return NPU_EXIT_USAGE;
    }
    if (npu_cli_check_outputs(&a) != 0)
        return NPU_EXIT_USAGE;
    if (a.json && npu_cli_json_mode() != 0)
        return NPU_EXIT_FAIL;
    if (a.dram_bw_set || a.dram_latency_set) /* the compiler costs the timing the run will have */
        npu_slice_cfg_retime(&g_cfg, a.dram_bw_set ? a.dram_bw : 0,
                             a.dram_latency_set ? (int)a.dram_latency : -1);
    npu_progress_install();
    if (a.save_program && (a.cmd != NPU_CMD_GEMM || a.topology))
        return interrupted(dispatch_recording(&a));
    return interrupted(a.timeline ? dispatch_timeline(&a) : dispatch(&a));
}
