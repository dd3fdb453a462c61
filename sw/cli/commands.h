/* commands.h - the `npu` commands, one file each (cmd_<name>.c); npu_main.c dispatches. Every
 * command takes the configuration this binary is built for and the parsed arguments, and
 * returns the exit status (enum below). */
#ifndef NPU_CLI_COMMANDS_H
#define NPU_CLI_COMMANDS_H

#include <stdint.h>

#include "cli/args.h"
#include "compile/step/step_plan.h"
#include "hw/npu_cfg.h"
#include "npu_sim.h"
#include "ref/net_ref.h"
#include "run/out.h"

enum { NPU_EXIT_PASS = 0, NPU_EXIT_FAIL = 1, NPU_EXIT_USAGE = 2, NPU_EXIT_TIMEOUT = 3 };

/* `npu gemm` (cmd_gemm.c): one GEMM on the RTL, bit-exact, with the end-of-run report. */
int npu_cmd_gemm(const npu_cfg_t *cfg, const npu_args_t *a);

/* `npu gemm --topology` (cmd_gemm_topo.c): every GEMM of a topology file (a conv file: each
 * layer's im2col forward GEMM), one table row per layer, a failing layer does not stop the
 * others. 0 all passed (skipped depthwise layers aside), 1 a layer failed, 2 bad usage or file,
 * 3 a layer timed out. */
int npu_cmd_gemm_topology(const npu_cfg_t *cfg, const npu_args_t *a);
/* `npu train --topology` of a GEMM topology (cmd_gemm_topo.c): every row trained as a fully
 * connected layer, its forward C = A B, dX = dY B^T and dW = A^T dY each one GEMM on the RTL (B,
 * resp. A, read transposed by the DMA), rows "<layer>/fwd", "/dx", "/dw". Same exit codes. */
int npu_cmd_train_gemm_topology(const npu_cfg_t *cfg, const npu_args_t *a);

/* `npu overlap` (cmd_overlap.c): compute-only, transfer-only and full cycles of one GEMM. */
int npu_cmd_overlap(const npu_cfg_t *cfg, const npu_args_t *a);

/* `npu disasm` (cmd_disasm.c): the compiled program of a GEMM. */
int npu_cmd_disasm(const npu_cfg_t *cfg, const npu_args_t *a);
int npu_cmd_slice(const npu_cfg_t *cfg, const npu_args_t *a);
/* npu conv --kernel bwd (cmd_conv_bwd.c): the fused conv backward of the layers of t, beside dx and
 * dw run separately. */
struct npu_topology;
int npu_cmd_conv_bwd(const npu_cfg_t *cfg, const npu_args_t *a, const npu_dram_timing_t *tm,
                     const struct npu_topology *t);

/* `npu calibrate` (cmd_calibrate.c): the slicing stage's cost constants fitted on RTL
 * microbenchmarks (run/calib.h), written to --out. 0 fitted (DMA R^2 >= 0.98), 1 a run, a
 * burst cross-check or the fit failed, 2 bad usage or an unwritable file. */
int npu_cmd_calibrate(const npu_cfg_t *cfg, const npu_args_t *a);

/* `npu fit` (cmd_fit.c): trains an MLP on the digits (run/fit.h). 0 every epoch ran and every
 * NPU GEMM was bit-exact, 1 a GEMM failed (or the CSV), 2 bad usage or data file. */
int npu_cmd_fit(const npu_cfg_t *cfg, const npu_args_t *a);

/* `npu estimate` (cmd_estimate.c): the analytical estimator (model/estimate.h). 0, or 2 bad
 * usage or a model the tensor-granular scheduler cannot place. */
int npu_cmd_estimate(const npu_cfg_t *cfg, const npu_args_t *a);

/* `npu sweep` (cmd_sweep.c): the estimator over a design space (model/sweep.h), with --plan step
 * --validate K sampled points run on the RTL. 0; 1 a validated point off its estimate (or a
 * failed run); 2 bad usage. */
int npu_cmd_sweep(const npu_cfg_t *cfg, const npu_args_t *a);
/* --model (with --input, default the digits' 8x8x1), or --topology FILE.csv (model/topology.h
 * npu_topo_net), into net. 0, or NPU_EXIT_USAGE after the message. */
struct npu_net_shape;
int npu_cli_parse_net(const npu_args_t *a, struct npu_net_shape *net);
/* What the network is called in reports: the --model spec or the --topology file. */
static inline const char *npu_cli_net_name(const npu_args_t *a) { return a->model ? a->model : a->topology; }
/* The network as the step engine takes it (--plan step of estimate and sweep): an MLP's widths
 * d[0..layers], or a CNN's leading convolutions (over `batch` images) and the widths of its fully
 * connected layers (n_conv > 0). */
typedef struct npu_cli_step_net {
    int dims[NPU_NET_MAX_LAYERS + 1], fc[NPU_STEP_MAX_LAYERS + 1];
    npu_conv_t conv[NPU_STEP_MAX_LAYERS];
    int n_conv, n_fc;
    int res[NPU_STEP_MAX_LAYERS]; /* the convolutions' residual connections (npu_net_shape_t.res) */
} npu_cli_step_net_t;
/* net into *s (a CNN's convolutions at batch). 0, or -1 after a message naming cmd. */
int npu_cli_step_net(const struct npu_net_shape *net, int batch, const char *cmd,
                     npu_cli_step_net_t *s);

/* `npu info` (cmd_info.c): the configuration of this build. */
int npu_cmd_info(const npu_cfg_t *cfg, const npu_args_t *a);
int npu_cmd_version(const npu_cfg_t *cfg, const npu_args_t *a); /* npu --version */

/* `npu flexsa-report` (cmd_flexsa_report.c): 0 when every run passed, 1 otherwise. */
int npu_cmd_flexsa_report(const npu_cfg_t *cfg, const npu_args_t *a);

/* `npu train` (cmd_train.c): --layers runs an MLP step (0 pass, 1 fail or NPU error, 2 bad
 * usage); --conv / --topology the conv layers' training kernels (npu_cmd_train_conv). */
int npu_cmd_train(const npu_cfg_t *cfg, const npu_args_t *a);

/* `npu conv` (cmd_conv.c): convolution kernels x dataflows per layer on the RTL. 0 pass, 1 fail
 * or NPU error, 2 bad usage, 3 timeout. */
int npu_cmd_conv(const npu_cfg_t *cfg, const npu_args_t *a);

/* `npu train --conv/--topology` (cmd_conv.c): forward, dX (not layer 0) and dW of every conv
 * layer with one dataflow (default ecoflow) or both. Same exit codes. */
int npu_cmd_train_conv(const npu_cfg_t *cfg, const npu_args_t *a);

/* `npu train-bench` (cmd_train_bench.c): the analytical brief-000 bench on the paper-scaled
 * configurations. 0 ok, 1 model failure, 2 bad usage / file error. */
int npu_cmd_train_bench(const npu_cfg_t *cfg, const npu_args_t *a);

/* Shared by the commands (cli_common.c). */

/* DRAM timing of a run: the options, else the configuration's defaults. */
npu_dram_timing_t npu_cli_dram_timing(const npu_cfg_t *cfg, const npu_args_t *a);

/* Seeded random operands A (M x K) and B (K x N), the same for every command. 0 or -1 (after
 * printing the reason). */
/* 0 when the GEMM of -m -n -k fits the config's DRAM, else -1 with the bytes it needs and the
 * DRAM's size on stderr (the caller exits NPU_EXIT_USAGE before building any operand). */
int npu_cli_gemm_fits(const npu_cfg_t *cfg, const npu_args_t *a);
/* The step residency's options (compile/step/step_res.h NPU_RES_*) of --no-prefetch,
 * --no-lookahead, --no-conv-reuse, --bypass and --objective. */
int npu_cli_res_overlap(const npu_args_t *a);
/* --no-conv-reuse's words that name one residency option (step_res.h NPU_RES_*), NULL-ended; the
 * words "both" (y and x) and "all" (every one) combine them. The estimate's report names a plan's
 * options by them. */
typedef struct npu_cli_res_word {
    const char *name;
    int bit;
} npu_cli_res_word_t;
extern const npu_cli_res_word_t npu_cli_res_words[];
/* The DRAM check of npu_cli_gemm_fits for an M x N x K GEMM with a's transposes and policy:
 * NPU_GEMM_PASS, or NPU_GEMM_NO_FIT / NPU_GEMM_HOST_ERROR with the reason in why. */
int npu_cli_gemm_dram_check(const npu_cfg_t *cfg, const npu_args_t *a, int M, int N, int K,
                            char *why, size_t n);
/* The seeded operands of a's GEMM in the config's element type (ref/golden.h). */
int npu_cli_random_inputs(const npu_cfg_t *cfg, const npu_args_t *a, int16_t **A, int16_t **B);

/* A simulator of this configuration (beat and hardware parameters checked), tracing if asked
 * (--trace); NULL after printing the reason. */
npu_sim_t *npu_cli_open_sim(const npu_cfg_t *cfg, const npu_args_t *a, const npu_dram_timing_t *t);

/* The --topology file with `batch`: its warnings printed to stderr (one line each, prefixed by
 * the file name), then 0, or -1 after printing the error. */
struct npu_topology;
int npu_cli_load_topology(const npu_args_t *a, int batch, struct npu_topology *t);

/* A GEMM's operands (cli_tensors.c): seeded (npu_cli_random_inputs) or, with --a/--b, read from
 * .npy files (int16 2-D) whose shapes give M, N, K into the copy g of a (-m/-n/-k when given must
 * agree); the GEMM checked against the DRAM (npu_cli_gemm_fits). 0, NPU_EXIT_USAGE (a bad file or
 * shape, a GEMM too large, after the message) or NPU_EXIT_FAIL. */
int npu_cli_gemm_inputs(const npu_cfg_t *cfg, const npu_args_t *a, npu_args_t *g, int16_t **A,
                        int16_t **B);
/* --save DIR, --reports DIR (opt): the directory, created if missing. 0, or -1 after the
 * message. */
int npu_cli_out_dir(const char *opt, const char *dir);
/* --out C.npy (the NPU's int32 C, when C is not NULL) and --save DIR: A.npy, B.npy (as stored,
 * transposed with --trans-a/-b), C.npy, C_golden.npy (npu_gemm_golden: rep's plan) and run.json (report: the
 * JSON report, not consumed). 0, or -1 after naming what failed. */
struct npu_gemm_report;
int npu_cli_gemm_save(const npu_cfg_t *cfg, const npu_args_t *g, const struct npu_gemm_report *rep,
                      const int16_t *A, const int16_t *B, const int32_t *C, cJSON *report);

/* --save-program FILE (cli_tensors.c): the compiled program of rep, its DRAM image (A, B), the
 * run's DRAM timing t and the golden C (progfile.h). 0, or -1 after the message. */
int npu_cli_gemm_save_program(const npu_cfg_t *cfg, const npu_args_t *g,
                              const npu_dram_timing_t *t, const struct npu_gemm_report *rep,
                              const int16_t *A, const int16_t *B);
/* The outputs of a finished GEMM run (cmd_gemm.c; npu run too): --csv, the JSON or text report,
 * --out / --save. 0, or -1 when an output file failed while being written (its path was checked
 * before the run). */
struct npu_report_opts;
/* --csv FILE (cmd_gemm.c): every performance counter as `name,value` lines (the Ibex
 * simple-system convention), for spreadsheets and regression dashboards, after the metadata
 * line. 0, or -1 after the message. */
int npu_cli_counters_csv(const npu_cfg_t *cfg, const npu_args_t *a, const uint64_t *cnt);

int npu_cli_gemm_outputs(const npu_cfg_t *cfg, const npu_args_t *g, int rc,
                         const struct npu_gemm_report *rep, const struct npu_report_opts *o,
                         const int16_t *A, const int16_t *B, const int32_t *C);

/* `npu run FILE` (cmd_run.c): a saved program replayed on the RTL without the compiler. 0 pass,
 * 1 mismatch / counters / NPU error, 2 bad usage or a bad, foreign or unreadable file, 3 timeout. */
int npu_cmd_run(const npu_cfg_t *cfg, const npu_args_t *a);

/* npu conv --x/--w/--dy/--out/--save (cli_tensors.c): the kernel's inputs read from .npy files
 * (int16, the shapes the layer c implies: X B x H x W x C, W KH x KW x F x C (depthwise F = 1),
 * dY B x OH x OW x F) and the result buffers. 0, NPU_EXIT_USAGE (after the message) or
 * NPU_EXIT_FAIL. */
struct npu_conv_io;
struct npu_conv;
int npu_cli_conv_inputs(const npu_args_t *a, const struct npu_conv *c, int kernel,
                        struct npu_conv_io *io);
/* --out (the NPU's result when done) and --save DIR (the inputs used, the result and the golden
 * one as X / W / dY / Y|dX|dW / *_golden .npy; bf16: the seeded inputs are the bf16 ones, the
 * results fp32 bit patterns). 0, or -1 after the message. */
int npu_cli_conv_outputs(const npu_args_t *a, const struct npu_conv *c, int kernel, uint64_t seed,
                         int bf16, int done, const struct npu_conv_io *io);
void npu_cli_conv_io_free(struct npu_conv_io *io);

/* npu train --layers --x/--w/--dy/--save (cli_tensors.c): X_0 (batch x D0), one W_i per layer
 * (--w W0.npy,W1.npy,..: D_i x D_{i+1}) and the loss gradient dY (batch x DL) read from .npy
 * files, each of exactly its shape (exit 2 naming the file, the shape found and the one
 * needed); with --save DIR the buffers for the step's inputs and results. 0, or the exit code
 * after the message. npu_cli_train_outputs writes DIR/X.npy, W<i>.npy, dY.npy and the NPU's
 * Y<i>.npy, dX<i>.npy (i >= 1), dW<i>.npy (0, or -1 after the message). */
struct npu_train_io;
struct npu_mlp;
int npu_cli_train_inputs(const npu_args_t *a, const struct npu_mlp *mlp, struct npu_train_io *io);
int npu_cli_train_outputs(const npu_args_t *a, const struct npu_mlp *mlp,
                          const struct npu_train_io *io);
void npu_cli_train_io_free(struct npu_train_io *io);

/* --json: stdout's text goes to /dev/null from here on, so that the one JSON line
 * (npu_cli_json_print, to the real stdout) is all a command prints there, whatever text it also
 * writes. 0, or -1 after the message. */
int npu_cli_json_mode(void);
/* Prints root (run/out.h) on the real stdout and deletes it. 0 or -1. */
int npu_cli_json_print(cJSON *root);
/* The metadata of this run's outputs (command, config, seed, the git revision of the build). */
npu_out_meta_t npu_cli_meta(const npu_cfg_t *cfg, const npu_args_t *a);
/* A JSON object with that metadata (run/out.h). */
cJSON *npu_cli_json_new(const npu_cfg_t *cfg, const npu_args_t *a);
/* The command's table: --csv (metadata line, header) and, with --json, the JSON rows. 0, or -1
 * after naming the file that cannot be written. */
int npu_cli_table_open(const npu_cfg_t *cfg, const npu_args_t *a, npu_table_t *t,
                       const char *const *cols, int ncols);
/* Every output file of the options (--csv, --out, --trace) writable, checked before anything
 * runs: 0, or -1 after naming the option, the path and why (the caller exits NPU_EXIT_USAGE). */
int npu_cli_check_outputs(const npu_args_t *a);

#endif
