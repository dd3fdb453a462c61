/*
 * args.h - command-line parsing of the `npu` CLI (getopt_long), kept apart from main so the
 * tests can check it.
 *
 *   npu gemm   -m M -n N -k K [--seed N] [--dram-bw BYTES_PER_CYCLE] [--dram-latency C]
 *              [--stall-pct P] [--trans-a] [--trans-b] [--trace FILE.fst] [--trace-start C]
 *              [--trace-end C | --trace-window N] [--max-cycles N] [--json] [--quiet] [--csv FILE] [--flexsa]
 *              [--policy 1g1c|1g4c|flexsa]
 *   npu gemm   --topology FILE.csv [--batch B] [--seed N] [--policy P] [--csv F] [--quiet]
 *              [DRAM options] [--max-cycles N] [--trans-a] [--trans-b]   (every GEMM of a
 *              topology; -m/-n/-k, --json and --trace are for one GEMM)
 *   npu gemm   --a A.npy --b B.npy [--out C.npy] [--save DIR] [options of one GEMM]
 *   npu gemm / conv / train ... --save-program FILE;  npu run FILE [--json] ...;  npu disasm FILE
 *   npu overlap -m M -n N -k K [--seed N] [--dram-bw BYTES_PER_CYCLE] [--dram-latency C]
 *              [--stall-pct P] [--max-cycles N] [--json] [--quiet]
 *              (double-buffering check: compute-only, transfer-only and full cycles; without
 *              --dram-bw the bandwidth is chosen so that transfer time ~ compute time)
 *   npu disasm -m M -n N -k K [--trans-a] [--trans-b] [--policy P] [--dram-bw B] [--dram-latency C]
 *   npu train --layers D0,..,DL [--batch B] [--order O] [--partition P] [--policy P] [--seed N]
 *              [--dram-bw B] [--dram-latency C] [--stall-pct P] [--max-cycles N] [--csv F] [--quiet]
 *   npu conv (--conv SPEC[;SPEC] | --topology FILE.csv) [--kernel K] [--dataflow D] [--batch B]
 *              [--scale-c N] [--scale-s N] [--seed N] [--max-cycles N] [--csv F] [--quiet]
 *   npu train (--conv SPEC[;SPEC] | --topology FILE.csv) [--dataflow D] [--batch B] ...
 *   npu flexsa-report [--seed N] [--batch B] [--limit G] [--csv FILE] [--quiet] [--max-cycles N]
 *   npu train-bench [--set edge|server|server4|all] [--acc-bytes 2|4] [--csv FILE] [--quiet]
 *   npu calibrate [--quick] [--out FILE] [--json] [--quiet]
 *   npu fit --model mlp:D0,..,DL [--data digits|FILE] [--epochs E] [--batch B] [--lr L]
 *              [--momentum M] [--wd W] [--engine npu|step|kernels|ref] [--dtype int16|bf16] [--seed N]
 *              [--csv F] [--json] [--quiet]
 *   npu estimate --model SPEC [--batch B] [--input HxWxC] [--spm-kib N] [--dram-bw B]
 *              [--dram-latency C] [--no-prefetch] [--no-lookahead] [--plan sched|step]
 *              [--policy P] [--csv F] [--json]
 *   npu sweep --model SPEC [--space KEY=V,..;..] [--batch B] [--input HxWxC] [--csv F] [--json]
 *   npu info
 *   npu help [CMD] | --help | -h;  npu CMD --help;  npu --version
 */
#ifndef NPU_CLI_ARGS_H
#define NPU_CLI_ARGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum npu_cmd {
    NPU_CMD_GEMM = 1, NPU_CMD_DISASM, NPU_CMD_INFO, NPU_CMD_HELP, NPU_CMD_OVERLAP,
    NPU_CMD_FLEXSA_REPORT, NPU_CMD_TRAIN, NPU_CMD_CONV, NPU_CMD_TRAIN_BENCH, NPU_CMD_SLICE,
    NPU_CMD_CALIBRATE, NPU_CMD_RUN, NPU_CMD_VERSION, NPU_CMD_FIT, NPU_CMD_ESTIMATE,
    NPU_CMD_SWEEP
};

/* --policy values: the emitter's NPU_EMIT_* codes (gemm_emit.h) */
enum { NPU_POLICY_ARG_1G1C = 0, NPU_POLICY_ARG_FLEXSA = 1, NPU_POLICY_ARG_1G4C = 2 };

#define NPU_ARGS_MAX_DIM (1 << 30) /* largest M, N or K the CLI parses; what fits is the DRAM's call
                                      (npu_cli_gemm_fits) */
#define NPU_ARGS_DEFAULT_SEED 1u
#define NPU_ARGS_DEFAULT_MAX_CYCLES 100000000ull
/* --trace without --trace-end traces this many cycles: an FST takes roughly 80 + 104 * S bytes
 * per cycle (measured on GEMMs: 287 at tiny, 908 at small), so an unbounded trace of a long run
 * fills a disk (512^3 at small: ~500 MB) */
#define NPU_ARGS_DEFAULT_TRACE_WINDOW 100000ull

typedef struct npu_args {
    int cmd;
    int help_cmd;                       /* help: the command whose options to list (0: overview) */
    int m, n, k;
    int trans_a, trans_b;
    uint64_t seed;
    int dram_bw_set, dram_latency_set; /* else the config's defaults */
    double dram_bw;
    unsigned dram_latency, stall_pct;
    const char *trace;                  /* NULL: no trace */
    uint64_t trace_start, trace_end;    /* trace_end = UINT64_MAX: not given (the window) */
    uint64_t trace_window;              /* cycles traced without --trace-end (0: the default) */
    uint64_t max_cycles;
    int max_cycles_given;               /* --max-cycles given (else it follows the work) */
    int json, quiet;
    const char *csv;                    /* NULL: no counters CSV */
    int slicing;                        /* gemm, disasm, flexsa-report, conv: 0 (auto) or
                                           NPU_GEMM_SLICING_HEURISTIC / _BURST / _NOBURST
                                           (runtime.h) */
    int slicing_set;                    /* --slicing given (conv: without it, conv_plan's plan) */
    int policy;                         /* NPU_POLICY_ARG_*: 1G1C (FW only, default), FlexSA
                                           (Algorithm 1 per wave) or 1G4C (independent cores) */
    unsigned limit, batch;              /* flexsa-report: GEMMs of the set (0 = all), batch;
                                           train: batch (0 = 16); conv, gemm --topology: images
                                           or M multiplier (0 = 1) */
    const char *layers;                 /* train: "D0,D1,..,DL" */
    const char *order, *partition;      /* train: NULL = seq / none */
    unsigned tile;                      /* train: fused tile size (0 = default 2 x 2S) */
    const char *conv, *topology;        /* conv, train: "C,H,W,F,KH,KW,s,p,d[,dw];..." or a
                                           SCALE-Sim topology CSV file (gemm: --topology too) */
    const char *kernel, *dataflow;      /* conv: fwd|dx|dw|all (NULL = all);
                                           zeropad|ecoflow|both (NULL: conv both, train ecoflow) */
    unsigned scale_c, scale_s;          /* conv, train: channel / spatial divisors (0 = 1) */
    const char *bench_set;              /* train-bench: edge|server|server4|all (NULL = all) */
    unsigned acc_bytes;                 /* train-bench: partial/gradient bytes (0 = the config's 2) */
    int quick;                          /* calibrate: the coarser LOAD sweep */
    const char *out;                    /* calibrate: the calibration file to write; gemm: C.npy
                                           (NULL: none) */
    const char *a_file, *b_file;        /* gemm: A.npy, B.npy (int16) instead of seeded operands */
    const char *save;                   /* gemm: directory for every input, output, golden result */
    const char *save_program;           /* the program file to write (progfile.h) */
    const char *prog_file;              /* run, disasm: the saved program (positional) */
    const char *x_file, *w_file, *dy_file; /* conv: X, W, dY .npy (int16) instead of seeded */
    const char *model, *data;           /* fit: "mlp:64,128,10"; "digits" or a CSV file (NULL =
                                           digits) */
    unsigned epochs;                    /* fit: 0 = 10 */
    double lr, momentum, wd;            /* fit: set when fit_set has bit 1, 2, 4 */
    int fit_set;
    const char *engine, *dtype;         /* fit: npu|step|kernels|ref (NULL = npu); int16|bf16 (NULL = the
                                           build's) */
    const char *input;                  /* estimate: "HxWxC" (NULL = 8x8x1) */
    unsigned spm_kib;                   /* estimate: 0 = the config's SPM */
    unsigned resident_banks;            /* fit, estimate --plan step: SPM banks for tensors kept
                                           between kernels (0: none) */
    int no_prefetch, no_lookahead;      /* estimate: scheduler options off */
    const char *no_conv_reuse;          /* y|x|x16|both|dy|dx|xt|head|all: forward convs' outputs / inputs /
                                           both, fused backwards' dY / dX / X (X^T from DRAM),
                                           all of them on the DRAM side (NULL: the plan's) */
    const char *bypass;                 /* auto|on|off: single-use tensors streamed from DRAM (NPU_RES_BYPASS) */
    const char *objective;              /* cycles|traffic: the residency plans' choice (NPU_RES_BY_TRAFFIC) */
    const char *space;                  /* sweep: "s=..;spm=..;bw=..;batch=.." (NULL: one point) */
    const char *plan;                   /* estimate, sweep: sched|step (NULL = sched) */
    unsigned validate;                  /* sweep --plan step: points run on the RTL (0: none) */
    const char *plot;                   /* fit: the loss chart (.png; NULL: none) */
    const char *timeline;               /* gemm, run, conv, train: trace-event JSON (NULL: none) */
    const char *reports;                /* gemm --topology: directory of the SCALE-Sim-shaped
                                           COMPUTE_REPORT.csv and BANDWIDTH_REPORT.csv */
} npu_args_t;

/* Parses argv. Returns 0 (ok) or 2 (bad usage, with a one-line message in err). cfg_name is the
 * configuration this binary is built for (used in the --config message). */
int npu_args_parse(int argc, char **argv, const char *cfg_name, npu_args_t *a, char *err,
                   size_t errn);

void npu_args_usage(FILE *f, const char *cfg_name);
/* `npu CMD --help`: what CMD does and every option it accepts (from its option mask), with the
 * values and the default. */
void npu_args_cmd_usage(FILE *f, int cmd);
/* The hint after a usage error: 'npu CMD --help' when argv names a command, else 'npu --help'. */
void npu_args_hint(FILE *f, int argc, char **argv);
/* The i-th option of the CLI ("--seed", "-m"; NULL past the last) and a valid value for it (NULL
 * for a flag), so that the tests can try each one on each command. */
const char *npu_args_option(size_t i, const char **example);

/* The command's name ("gemm", "train-bench", ...), as typed. */
const char *npu_args_cmd_name(int cmd);

/* The runtime's GEMM `modes` argument (runtime.h): the policy and the tiling (--slicing). */
static inline int npu_args_gemm_modes(const npu_args_t *a) { return a->policy | a->slicing; }
/* The simulation timeout of a run of `macs` MACs (zero MACs included) on `pes` PEs: --max-cycles
 * when given, else the default or 64 cycles per cycle of the full array, whichever is more
 * (AlexNet's first layer's zeropad dW takes 111.7M cycles at small, 17x its 6.4M; a GEMM of
 * 3000^3, 105M at full use). The hardware watchdog reports a deadlock long before either. */
static inline uint64_t npu_args_max_cycles(const npu_args_t *a, uint64_t macs, unsigned pes)
{
    uint64_t work = pes ? macs / pes * 64u : 0;
    return a->max_cycles_given || work <= a->max_cycles ? a->max_cycles : work;
}
/* The --slicing value's spelling. */
const char *npu_args_slicing_name(int slicing);

#endif
