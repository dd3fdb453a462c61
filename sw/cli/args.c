/* args.c - `npu` argument parsing; see args.h. */
#define _GNU_SOURCE
#include "cli/args.h"

#include "run/runtime.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum {
    OPT_SEED = 256, OPT_DRAM_BW, OPT_DRAM_LAT, OPT_STALL, OPT_TRANS_A, OPT_TRANS_B, OPT_TRACE,
    OPT_TRACE_START, OPT_TRACE_END, OPT_MAX_CYCLES, OPT_JSON, OPT_QUIET, OPT_CSV, OPT_FLEXSA, OPT_POLICY, OPT_LIMIT, OPT_BATCH, OPT_LAYERS, OPT_ORDER, OPT_PARTITION, OPT_TILE, OPT_CONFIG, OPT_HELP,
    OPT_CONV, OPT_TOPOLOGY, OPT_KERNEL, OPT_DATAFLOW, OPT_SCALE_C, OPT_SCALE_S, OPT_SET, OPT_ACC_BYTES, OPT_SLICING,
    OPT_QUICK, OPT_OUT, OPT_A, OPT_B, OPT_SAVE, OPT_SAVE_PROGRAM, OPT_X, OPT_W, OPT_DY,
    OPT_MODEL, OPT_DATA, OPT_EPOCHS, OPT_LR, OPT_MOMENTUM, OPT_WD, OPT_ENGINE, OPT_DTYPE,
    OPT_INPUT, OPT_SPM_KIB, OPT_NO_PREFETCH, OPT_NO_LOOKAHEAD, OPT_SPACE, OPT_PLAN,
    OPT_TIMELINE, OPT_TRACE_WINDOW, OPT_REPORTS, OPT_PLOT, OPT_RESIDENT, OPT_VALIDATE,
    OPT_NO_CONV_REUSE, OPT_BYPASS, OPT_OBJECTIVE,
    OPT_LAST_ /* not an option: one past the last */
};

/* Which options each command accepts (bit = option: -m -n -k bits 0..2, the long ones from 3). A
 * 128-bit mask (GCC and Clang's __int128: the sets below are constant expressions, which a
 * two-word struct could not be; 64 bits held 61 long options). */
__extension__ typedef unsigned __int128 npu_optmask_t;
#define B(o) ((npu_optmask_t)1 << ((o) >= 256 ? (o) - 256 + 3 : (o) == 'm' ? 0 : (o) == 'n' ? 1 : 2))
/* every long option must have its bit */
typedef char npu_args_opt_bits_fit[OPT_LAST_ - 256 + 3 <= 128 ? 1 : -1];
#define OPTS_CONV_LAYERS (B(OPT_CONV) | B(OPT_TOPOLOGY) | B(OPT_SCALE_C) | B(OPT_SCALE_S))
/* an FST of the run: the file, its window */
#define OPTS_TRACE (B(OPT_TRACE) | B(OPT_TRACE_START) | B(OPT_TRACE_END) | B(OPT_TRACE_WINDOW))
#define OPTS_CONV                                                                              \
    (OPTS_CONV_LAYERS | B(OPT_KERNEL) | B(OPT_DATAFLOW) | B(OPT_BATCH) | B(OPT_SEED) |          \
     B(OPT_DRAM_BW) | B(OPT_DRAM_LAT) | B(OPT_STALL) | B(OPT_MAX_CYCLES) | B(OPT_QUIET) |      \
     B(OPT_CSV) | B(OPT_JSON) | B(OPT_TIMELINE) | OPTS_CONV_TENSORS | OPTS_TRACE |             \
     B(OPT_SAVE_PROGRAM) | B(OPT_SLICING))
/* one conv kernel's tensors in .npy files: X, W, dY in; the result out; every tensor saved */
#define OPTS_CONV_TENSORS (B(OPT_X) | B(OPT_W) | B(OPT_DY) | B(OPT_OUT) | B(OPT_SAVE))
#define OPTS_DIMS (B('m') | B('n') | B('k'))
#define OPTS_GEMM                                                                              \
    (OPTS_DIMS | B(OPT_SEED) | B(OPT_DRAM_BW) | B(OPT_DRAM_LAT) | B(OPT_STALL) | B(OPT_TRANS_A) | \
     B(OPT_TRANS_B) | OPTS_TRACE | B(OPT_MAX_CYCLES) |                                         \
     B(OPT_JSON) | B(OPT_QUIET) | B(OPT_CSV) | B(OPT_FLEXSA) | B(OPT_POLICY) | B(OPT_TOPOLOGY) | \
     B(OPT_BATCH) | B(OPT_SLICING) | B(OPT_TIMELINE) | B(OPT_REPORTS) | OPTS_TENSORS)
/* one GEMM's tensors in .npy files: A, B in; C out; every input, output and golden result */
#define OPTS_TENSORS (B(OPT_A) | B(OPT_B) | B(OPT_OUT) | B(OPT_SAVE) | B(OPT_SAVE_PROGRAM))
/* npu run FILE: the saved program's DRAM timing and sizes; these change only the outputs */
#define OPTS_RUN (B(OPT_MAX_CYCLES) | B(OPT_JSON) | B(OPT_QUIET) | B(OPT_CSV) | B(OPT_OUT) |       \
                  OPTS_TRACE | B(OPT_TIMELINE))
/* what one GEMM (-m -n -k) takes and a topology's GEMMs do not (--save-program: both) */
#define OPTS_GEMM_ONE (OPTS_TRACE | (OPTS_TENSORS & ~B(OPT_SAVE_PROGRAM)))
#define OPTS_SLICE (OPTS_DIMS | B(OPT_CONV) | B(OPT_KERNEL) | B(OPT_JSON) | B(OPT_DRAM_BW) | B(OPT_DRAM_LAT))
#define OPTS_DISASM (OPTS_DIMS | B(OPT_TRANS_A) | B(OPT_TRANS_B) | B(OPT_FLEXSA) | B(OPT_POLICY) | B(OPT_SLICING) | \
                     B(OPT_JSON) | B(OPT_DRAM_BW) | B(OPT_DRAM_LAT))
#define OPTS_TRAIN                                                                             \
    (B(OPT_LAYERS) | B(OPT_BATCH) | B(OPT_ORDER) | B(OPT_PARTITION) | B(OPT_POLICY) |          \
     B(OPT_TILE) |                                                                             \
     B(OPT_FLEXSA) | B(OPT_SEED) | B(OPT_DRAM_BW) | B(OPT_DRAM_LAT) | B(OPT_STALL) |           \
     B(OPT_MAX_CYCLES) | B(OPT_QUIET) | B(OPT_CSV) | OPTS_CONV_LAYERS | B(OPT_DATAFLOW) |       \
     B(OPT_JSON) | B(OPT_TIMELINE) | OPTS_TRAIN_TENSORS | OPTS_TRACE | B(OPT_SAVE_PROGRAM))
/* an MLP step's tensors in .npy files: X_0, one W_i per layer, the loss gradient dY; --save */
#define OPTS_TRAIN_TENSORS (B(OPT_X) | B(OPT_W) | B(OPT_DY) | B(OPT_SAVE))
#define OPTS_REPORT (B(OPT_SEED) | B(OPT_CSV) | B(OPT_QUIET) | B(OPT_LIMIT) | B(OPT_BATCH) | \
                     B(OPT_MAX_CYCLES) | B(OPT_SLICING) | B(OPT_DRAM_BW) | B(OPT_DRAM_LAT) | \
                     B(OPT_JSON))
#define OPTS_TRAIN_BENCH (B(OPT_SET) | B(OPT_ACC_BYTES) | B(OPT_CSV) | B(OPT_QUIET) | B(OPT_JSON))
#define OPTS_CALIBRATE (B(OPT_QUICK) | B(OPT_OUT) | B(OPT_JSON) | B(OPT_QUIET))
#define OPTS_FIT                                                                               \
    (B(OPT_MODEL) | B(OPT_DATA) | B(OPT_EPOCHS) | B(OPT_BATCH) | B(OPT_LR) | B(OPT_MOMENTUM) |  \
     B(OPT_WD) | B(OPT_ENGINE) | B(OPT_DTYPE) | B(OPT_SEED) | B(OPT_POLICY) | B(OPT_SLICING) |  \
     B(OPT_DRAM_BW) | B(OPT_DRAM_LAT) | B(OPT_STALL) | B(OPT_MAX_CYCLES) | B(OPT_CSV) |         \
     B(OPT_JSON) | B(OPT_QUIET) | B(OPT_PLOT) | B(OPT_RESIDENT) | B(OPT_NO_PREFETCH) |          \
     B(OPT_NO_LOOKAHEAD) | B(OPT_NO_CONV_REUSE) | B(OPT_BYPASS) | B(OPT_OBJECTIVE))
#define OPTS_ESTIMATE                                                                          \
    (B(OPT_MODEL) | B(OPT_BATCH) | B(OPT_INPUT) | B(OPT_SPM_KIB) | B(OPT_DRAM_BW) |             \
     B(OPT_DRAM_LAT) | B(OPT_NO_PREFETCH) | B(OPT_NO_LOOKAHEAD) | B(OPT_CSV) | B(OPT_JSON) |     \
     B(OPT_QUIET) | B(OPT_PLAN) | B(OPT_POLICY) | B(OPT_RESIDENT) | B(OPT_TOPOLOGY) |     \
     B(OPT_NO_CONV_REUSE) | B(OPT_BYPASS) | B(OPT_OBJECTIVE))
#define OPTS_SWEEP (B(OPT_MODEL) | B(OPT_BATCH) | B(OPT_INPUT) | B(OPT_SPACE) | B(OPT_CSV) |      \
                    B(OPT_JSON) | B(OPT_QUIET) | B(OPT_PLAN) | B(OPT_RESIDENT) | B(OPT_POLICY) |    \
                    B(OPT_NO_PREFETCH) | B(OPT_NO_LOOKAHEAD) | B(OPT_VALIDATE) | B(OPT_TOPOLOGY) |      \
                    B(OPT_NO_CONV_REUSE) | B(OPT_BYPASS) | B(OPT_OBJECTIVE))
#define OPTS_OVERLAP                                                                           \
    (OPTS_DIMS | B(OPT_SEED) | B(OPT_DRAM_BW) | B(OPT_DRAM_LAT) | B(OPT_STALL) |               \
     B(OPT_MAX_CYCLES) | B(OPT_JSON) | B(OPT_QUIET))

const char *npu_args_slicing_name(int slicing)
{
    return slicing == NPU_GEMM_SLICING_BURST       ? "burst"
           : slicing == NPU_GEMM_SLICING_NOBURST   ? "noburst"
           : slicing == NPU_GEMM_SLICING_HEURISTIC ? "heuristic"
                                                   : "auto";
}

static const struct option long_opts[] = {
    {"seed", required_argument, NULL, OPT_SEED},
    {"dram-bw", required_argument, NULL, OPT_DRAM_BW},
    {"dram-latency", required_argument, NULL, OPT_DRAM_LAT},
    {"stall-pct", required_argument, NULL, OPT_STALL},
    {"trans-a", no_argument, NULL, OPT_TRANS_A},
    {"trans-b", no_argument, NULL, OPT_TRANS_B},
    {"trace", required_argument, NULL, OPT_TRACE},
    {"trace-start", required_argument, NULL, OPT_TRACE_START},
    {"trace-end", required_argument, NULL, OPT_TRACE_END},
    {"trace-window", required_argument, NULL, OPT_TRACE_WINDOW},
    {"reports", required_argument, NULL, OPT_REPORTS},
    {"max-cycles", required_argument, NULL, OPT_MAX_CYCLES},
    {"json", no_argument, NULL, OPT_JSON},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"csv", required_argument, NULL, OPT_CSV},
    {"flexsa", no_argument, NULL, OPT_FLEXSA},
    {"policy", required_argument, NULL, OPT_POLICY},
    {"slicing", required_argument, NULL, OPT_SLICING},
    {"limit", required_argument, NULL, OPT_LIMIT},
    {"batch", required_argument, NULL, OPT_BATCH},
    {"layers", required_argument, NULL, OPT_LAYERS},
    {"order", required_argument, NULL, OPT_ORDER},
    {"partition", required_argument, NULL, OPT_PARTITION},
    {"tile", required_argument, NULL, OPT_TILE},
    {"config", optional_argument, NULL, OPT_CONFIG},
    {"help", no_argument, NULL, OPT_HELP},
    {"conv", required_argument, NULL, OPT_CONV},
    {"topology", required_argument, NULL, OPT_TOPOLOGY},
    {"kernel", required_argument, NULL, OPT_KERNEL},
    {"dataflow", required_argument, NULL, OPT_DATAFLOW},
    {"scale-c", required_argument, NULL, OPT_SCALE_C},
    {"scale-s", required_argument, NULL, OPT_SCALE_S},
    {"set", required_argument, NULL, OPT_SET},
    {"acc-bytes", required_argument, NULL, OPT_ACC_BYTES},
    {"quick", no_argument, NULL, OPT_QUICK},
    {"out", required_argument, NULL, OPT_OUT},
    {"a", required_argument, NULL, OPT_A},
    {"b", required_argument, NULL, OPT_B},
    {"save", required_argument, NULL, OPT_SAVE},
    {"save-program", required_argument, NULL, OPT_SAVE_PROGRAM},
    {"x", required_argument, NULL, OPT_X},
    {"w", required_argument, NULL, OPT_W},
    {"dy", required_argument, NULL, OPT_DY},
    {"model", required_argument, NULL, OPT_MODEL},
    {"data", required_argument, NULL, OPT_DATA},
    {"epochs", required_argument, NULL, OPT_EPOCHS},
    {"lr", required_argument, NULL, OPT_LR},
    {"momentum", required_argument, NULL, OPT_MOMENTUM},
    {"wd", required_argument, NULL, OPT_WD},
    {"engine", required_argument, NULL, OPT_ENGINE},
    {"dtype", required_argument, NULL, OPT_DTYPE},
    {"input", required_argument, NULL, OPT_INPUT},
    {"spm-kib", required_argument, NULL, OPT_SPM_KIB},
    {"no-prefetch", no_argument, NULL, OPT_NO_PREFETCH},
    {"no-lookahead", no_argument, NULL, OPT_NO_LOOKAHEAD},
    {"space", required_argument, NULL, OPT_SPACE},
    {"plan", required_argument, NULL, OPT_PLAN},
    {"resident-banks", required_argument, NULL, OPT_RESIDENT},
    {"no-conv-reuse", required_argument, NULL, OPT_NO_CONV_REUSE},
    {"bypass", required_argument, NULL, OPT_BYPASS},
    {"objective", required_argument, NULL, OPT_OBJECTIVE},
    {"validate", required_argument, NULL, OPT_VALIDATE},
    {"plot", required_argument, NULL, OPT_PLOT},
    {"timeline", required_argument, NULL, OPT_TIMELINE},
    {NULL, 0, NULL, 0},
};

/* The usage lines of the commands that run layers (train, conv). */
static void usage_layers(FILE *f)
{
    fputs(
            "       npu train --layers D0,D1,..,DL [--batch B] [--order O]\n"
            "                [--partition none|m|n|k|mseq|nseq|kseq|knn] [--tile T]\n"
            "                (m, k: one part per core when M, K is a multiple of 4S, n: N of 8S;\n"
            "                mseq, nseq, kseq: the parts in sequence)\n"
            "                [--policy P] [--seed N] [--stall-pct P] [--csv FILE] [--quiet]\n"
            "                (one MLP training step: forward, dX, dW of every layer, bit-exact)\n"
            "       npu train (--conv SPEC[;SPEC..] | --topology FILE.csv) [--dataflow D]\n"
            "                [--batch B] [--scale-c N] [--scale-s N] [--seed N] [--csv FILE]\n"
            "                (conv layers: forward, dX (not the first layer), dW, bit-exact)\n"
            "       npu conv (--conv SPEC[;SPEC..] | --topology FILE.csv) [--kernel fwd|dx|dw|bwd|all]\n"
            "                [--dataflow zeropad|ecoflow|both] [--batch B] [--scale-c N]\n"
            "                [--scale-s N] [--seed N] [--max-cycles N] [--csv FILE] [--quiet]\n"
            "                (convolution kernels on the RTL, bit-exact; SPEC = C,H,W,F,KH,KW,\n"
            "                stride,pad,dil[,dw]; FILE = SCALE-Sim conv topology CSV; --scale-c/-s\n"
            "                divide channels / height and width for quicker runs; a layer too\n"
            "                large for one plan runs in parts over filter, channel or column\n"
            "                ranges, the parts column; --kernel bwd: dX and dW fused in one program\n"
            "                reading dY once, beside dx and dw run separately)\n"
            "                [--slicing heuristic|auto|burst|noburst]   (the bands and block\n"
            "                groups: heuristic, the default, conv_plan's; auto, burst the slicing\n"
            "                stage's burst-aware pick over the emitter's plans (auto: conv_plan's\n"
            "                for a layer in parts), noburst its bytes-only pick)\n"
            "       npu conv --conv SPEC --kernel fwd|dx|dw [--dataflow D] [--x X.npy] [--w W.npy]\n"
            "                [--dy DY.npy] [--out OUT.npy] [--save DIR]   (one kernel on your own\n"
            "                int16 tensors: X B x H x W x C, W KH x KW x F x C (depthwise\n"
            "                KH x KW x 1 x C), dY B x OH x OW x F; a tensor not given is seeded;\n"
            "                --out the NPU's int32 Y / dX / dW, --save DIR every tensor and\n"
            "                the golden result)\n",
        f);
}

/* The usage lines of the commands that train and estimate (fit, estimate, sweep). */
static void usage_training(FILE *f)
{
    fputs(
            "       npu fit --model mlp:64,128,10|cnn:c16,c32s2,fc10 [--data digits|FILE.csv.gz]\n"
            "                [--epochs E]\n"
            "                [--batch B] [--lr L] [--momentum M] [--wd W] [--engine npu|step|kernels|ref]\n"
            "                [--dtype int16|bf16] [--seed N] [--resident-banks N]\n"
            "                [--no-conv-reuse y|x|x16|both|dy|dx|xt|head|all] [--bypass auto|on|off]\n"
            "                [--objective cycles|traffic] [--csv FILE] [--plot F.png] [--json] [--quiet]\n"
            "                (trains on the 8x8 digits beside the fp32 reference trainer: step =\n"
            "                whole steps on the NPU (MLPs, CNNs), kernels = each GEMM / conv on the\n"
            "                NPU, npu = step where it can, else kernels; all checked bit-exact; per epoch\n"
            "                the loss of both, train and test accuracy, cycles per sample)\n"
            "       npu estimate --model mlp:..|cnn:.. [--batch B] [--input HxWxC] [--spm-kib N]\n"
            "                [--dram-bw B] [--dram-latency C] [--no-prefetch] [--no-lookahead]\n"
            "                [--plan sched|step] [--policy P] [--resident-banks N]\n"
            "                [--no-conv-reuse y|x|x16|both|dy|dx|xt|head|all] [--bypass auto|on|off]\n"
            "                [--objective cycles|traffic] [--csv FILE] [--json]\n"
            "                (the analytical\n"
            "                estimator: one training iteration planned by the SPM scheduler, or with\n"
            "                --plan step the step engine's kernels as the RTL runs them)\n"
            "       npu sweep --model SPEC [--space 's=4,8;spm=32,64;bw=16,32;batch=8,32']\n"
            "                [--batch B] [--input HxWxC] [--csv FILE] [--json]   (the estimator\n"
            "                over every combination: one row per design point)\n"
            "                [--plan step [--resident-banks N] [--no-conv-reuse W] [--bypass B]\n"
            "                [--objective O] [--validate K]]\n"
            "                (MLPs and CNNs: the step engine's plan; K points run on the RTL against\n"
            "                it, SHARD=i/N: a share)\n",
        f);
}

void npu_args_usage(FILE *f, const char *cfg)
{
    fprintf(f,
            "usage: npu gemm -m M -n N -k K [--seed N] [--dram-bw BYTES_PER_CYCLE]\n"
            "                [--dram-latency C] [--stall-pct P] [--trans-a] [--trans-b]\n"
            "                [--trace FILE.fst] [--trace-start C] [--trace-end C]\n"
            "                [--max-cycles N] [--json] [--quiet] [--csv FILE]\n"
            "                [--policy 1g1c|1g4c|flexsa] [--flexsa (= --policy flexsa)]\n"
            "                [--slicing auto|heuristic|burst|noburst]   (the tiles: auto, the\n"
            "                default, the slicing stage's burst-aware pick with a resident band;\n"
            "                heuristic, gemm_tiling's with a band; burst, noburst: the slicing\n"
            "                stage's pick under its burst-aware or bytes-only cost, as planned)\n"
            "       npu gemm --a A.npy --b B.npy [--out C.npy] [--save DIR] [options of one GEMM]\n"
            "                (your own int16 operands, A M x K and B K x N (K x M, N x K with\n"
            "                --trans-a/-b), their shapes give M, N, K; --out the NPU's int32 C;\n"
            "                --save DIR writes A, B, C, the golden C and run.json; -m/-n/-k\n"
            "                optional, an error if they differ)\n"
            "       npu gemm ... --save-program FILE   (the compiled program, its DRAM image, the\n"
            "                DRAM timing and the expected C, for npu run / npu disasm FILE;\n"
            "                npu conv, npu train and npu gemm --topology save every program\n"
            "                they run, in order, each with its DRAM window before and after)\n"
            "       npu gemm --topology FILE.csv [--batch B] [--seed N] [--policy P] [--csv FILE]\n"
            "                [--quiet] [DRAM options] [--max-cycles N]   (every GEMM of a SCALE-Sim\n"
            "                GEMM topology, or the im2col forward GEMM of every layer of a conv\n"
            "                topology: per-layer table and totals; a failing layer does not stop\n"
            "                the others)\n"
            "       npu overlap -m M -n N -k K [--seed N] [--dram-bw BYTES_PER_CYCLE]\n"
            "                [--dram-latency C] [--stall-pct P] [--max-cycles N] [--json]\n"
            "                [--quiet]   (double buffering: compute-only vs transfer-only vs\n"
            "                full cycles; without --dram-bw, the bandwidth that balances them)\n"
            "       npu slice (-m M -n N -k K | --conv SPEC [--kernel fwd|dx|dw|all]) [--dram-bw B]\n"
            "                [--dram-latency C]   (the slicing stage's pick under the burst-aware and\n"
            "                the bytes-only cost, for that timing; a model)\n"
            "       npu disasm -m M -n N -k K [--trans-a] [--trans-b] [--policy P] [--dram-bw B]\n"
            "                [--dram-latency C]   (the tiles the compiler picks for that timing)\n"
            "       npu disasm FILE   (the programs saved by --save-program FILE)\n"
            "       npu run FILE [--max-cycles N] [--json] [--quiet] [--csv F] [--out C.npy]\n"
            "                [--trace F.fst ...]   (replays the saved programs and their DRAM\n"
            "                state on the RTL without the compiler, in order, with the saved\n"
            "                DRAM timing; checks each one's expected results and every counter,\n"
            "                a report per program and the total; a file saved for another\n"
            "                configuration is refused, exit 2)\n"
            );
    usage_layers(f);
    fprintf(f,
            "       npu flexsa-report [--seed N] [--batch B] [--limit G] [--csv FILE] [--quiet]\n"
            "                [--slicing auto|heuristic|burst|noburst] [--dram-bw B] [--dram-latency C]\n"
            "                [--max-cycles N]   (1G1C, 1G4C and FlexSA on the RTL: the mode\n"
            "                utilization shapes and a pruned ResNet-50 GEMM set)\n"
            "       npu train-bench [--set edge|server|server4|all] [--acc-bytes 2|4] [--csv FILE]\n"
            "                [--quiet]   (analytical model, paper-scaled configurations: fwd+bwd\n"
            "                cycle reduction of interleaving, rearrangement, partitioning vs the\n"
            "                sequential baseline, per layer and per model, beside the paper)\n"
            "       npu calibrate [--quick] [--out FILE] [--json] [--quiet]   (RTL microbenchmarks:\n"
            "                LOAD sawtooth, WAVE trains, DRAINs; least-squares fit of the slicing\n"
            "                stage's cost constants, R^2 >= 0.98 required; --out writes the\n"
            "                calibration file, e.g. configs/<config>.calib; --quick: half the\n"
            "                LOAD widths)\n");
    usage_training(f);
    fprintf(f,
            "       npu info\n"
            "       npu CMD --help | npu help CMD   (CMD's options, their values and defaults)\n"
            "       npu --version   (the git revision and the configuration)\n"
            "Every command takes --json: one JSON object on one line on stdout (keys schema,\n"
            "command, rev, seed, config first); every CSV starts with a '# npu ...' line holding\n"
            "the same metadata. Output files are checked for writability before the run.\n"
            "This binary simulates configuration '%s'; each build/<config>/npu is one config.\n"
            "Exit status: 0 pass, 1 fail or NPU error (overlap: or ratio > 1.15), 2 bad usage,\n"
            "3 simulation timeout.\n",
            cfg ? cfg : "?");
}

/* Strict unsigned parse: digits only (decimal, or 0x hex), no sign, no overflow. */
static int parse_u64(const char *s, uint64_t *v)
{
    char *end;
    unsigned long long x;
    if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
        return -1;
    errno = 0;
    x = strtoull(s, &end, 0);
    if (errno || *end)
        return -1;
    *v = x;
    return 0;
}

static int parse_double(const char *s, double *v)
{
    char *end;
    double x;
    if (!s || !*s)
        return -1;
    errno = 0;
    x = strtod(s, &end);
    if (errno || *end || !(x > 0) || !isfinite(x))
        return -1;
    *v = x;
    return 0;
}

static int bad(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *err, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return 2;
}

/* The commands and the options each accepts. */
static const struct cmd_def {
    const char *name;
    int cmd;
    npu_optmask_t opts;
    const char *what; /* one line for `npu CMD --help` */
} k_cmds[] = {
    {"gemm", NPU_CMD_GEMM, OPTS_GEMM,
     "one GEMM on the RTL (-m -n -k, or --a/--b .npy operands), checked against the golden C;\n"
     "or every GEMM of a SCALE-Sim --topology file"},
    {"overlap", NPU_CMD_OVERLAP, OPTS_OVERLAP,
     "double-buffering check: compute-only, transfer-only and full cycles of one GEMM"},
    {"disasm", NPU_CMD_DISASM, OPTS_DISASM,
     "the compiled program of one GEMM (or 'npu disasm FILE': a saved program)"},
    {"slice", NPU_CMD_SLICE, OPTS_SLICE,
     "the slicing stage's pick for a GEMM or a conv layer under both costs (a model)"},
    {"train", NPU_CMD_TRAIN, OPTS_TRAIN,
     "one training step of an MLP (--layers) or of conv layers (--conv, --topology), bit-exact;\n"
     "a GEMM --topology: every row's fwd, dX and dW"},
    {"train-bench", NPU_CMD_TRAIN_BENCH, OPTS_TRAIN_BENCH,
     "analytical model: the cycle reduction of the training orders beside the paper"},
    {"conv", NPU_CMD_CONV, OPTS_CONV, "convolution kernels on the RTL, bit-exact"},
    {"flexsa-report", NPU_CMD_FLEXSA_REPORT, OPTS_REPORT,
     "1G1C, 1G4C and FlexSA on the RTL over a pruned ResNet-50 GEMM set"},
    {"calibrate", NPU_CMD_CALIBRATE, OPTS_CALIBRATE,
     "RTL microbenchmarks and the fit of the slicing stage's cost constants"},
    {"info", NPU_CMD_INFO, B(OPT_JSON), "the configuration of this build"},
    {"estimate", NPU_CMD_ESTIMATE, OPTS_ESTIMATE,
     "the analytical estimator: a training iteration through the SPM scheduler, per step"},
    {"sweep", NPU_CMD_SWEEP, OPTS_SWEEP,
     "the estimator over a design space (S, SPM KiB, DRAM bytes/cycle, batch), one row per point"},
    {"fit", NPU_CMD_FIT, OPTS_FIT,
     "trains an MLP on the digits: its GEMMs on the RTL (bit-exact) beside the fp32 reference"},
    {"run", NPU_CMD_RUN, OPTS_RUN,
     "'npu run FILE': replays the programs saved by --save-program without the compiler"},
};

/* Options whose value is one of a few words, kept as given (the commands parse the name). */
static const struct word_opt {
    int opt;
    const char *words[10]; /* NULL-terminated */
    const char *msg;      /* "... needs <this>, not '%s'" */
    size_t field;         /* offsetof the const char * in npu_args_t */
} k_word_opts[] = {
    {OPT_ORDER, {"seq", "interleave", "dxmajor", "dwmajor", "auto", "oracle", NULL},
     "--order needs seq, interleave, dxmajor, dwmajor, auto or oracle", offsetof(npu_args_t, order)},
    {OPT_PARTITION, {"none", "m", "n", "k", "kseq", "mseq", "nseq", "knn", NULL},
     "--partition needs none, m, n, k, mseq, nseq, kseq or knn", offsetof(npu_args_t, partition)},
    {OPT_KERNEL, {"fwd", "dx", "dw", "bwd", "all", NULL}, "--kernel needs fwd, dx, dw, bwd or all",
     offsetof(npu_args_t, kernel)},
    {OPT_DATAFLOW, {"zeropad", "ecoflow", "both", NULL},
     "--dataflow needs zeropad, ecoflow or both", offsetof(npu_args_t, dataflow)},
    {OPT_SET, {"edge", "server", "server4", "all", NULL}, "--set needs edge, server, server4 or all",
     offsetof(npu_args_t, bench_set)},
    {OPT_ENGINE, {"npu", "step", "kernels", "ref", NULL}, "--engine needs npu, step, kernels or ref", offsetof(npu_args_t, engine)},
    {OPT_DTYPE, {"int16", "bf16", NULL}, "--dtype needs int16 or bf16", offsetof(npu_args_t, dtype)},
    {OPT_PLAN, {"sched", "step", NULL}, "--plan needs sched or step", offsetof(npu_args_t, plan)},
    {OPT_NO_CONV_REUSE, {"y", "x", "x16", "both", "dy", "dx", "xt", "head", "all", NULL},
     "--no-conv-reuse needs y, x, x16, both, dy, dx, xt, head or all",
     offsetof(npu_args_t, no_conv_reuse)},
    {OPT_BYPASS, {"auto", "on", "off", NULL}, "--bypass needs auto, on or off", offsetof(npu_args_t, bypass)},
    {OPT_OBJECTIVE, {"cycles", "traffic", NULL}, "--objective needs cycles or traffic", offsetof(npu_args_t, objective)},
};

/* Options whose value is an unsigned count in [lo, hi]. */
static const struct count_opt {
    int opt;
    unsigned lo, hi;
    const char *msg; /* "... needs <this>, not '%s'" */
    size_t field;    /* offsetof the unsigned in npu_args_t */
} k_count_opts[] = {
    {OPT_DRAM_LAT, 0, 1000000, "--dram-latency needs cycles in 0..1000000",
     offsetof(npu_args_t, dram_latency)},
    {OPT_STALL, 0, 100, "--stall-pct needs a percentage in 0..100", offsetof(npu_args_t, stall_pct)},
    {OPT_LIMIT, 0, 100000, "--limit needs a GEMM count in 0..100000", offsetof(npu_args_t, limit)},
    {OPT_TILE, 1, 4096, "--tile needs a tile size in 1..4096 (a multiple of 2S)",
     offsetof(npu_args_t, tile)},
    {OPT_BATCH, 1, 1024, "--batch needs a mini-batch in 1..1024", offsetof(npu_args_t, batch)},
    {OPT_SCALE_C, 1, 4096, "--scale-c needs a divisor in 1..4096", offsetof(npu_args_t, scale_c)},
    {OPT_SCALE_S, 1, 4096, "--scale-s needs a divisor in 1..4096", offsetof(npu_args_t, scale_s)},
    {OPT_EPOCHS, 1, 10000, "--epochs needs a count in 1..10000", offsetof(npu_args_t, epochs)},
    {OPT_SPM_KIB, 1, 1u << 20, "--spm-kib needs a size in KiB, 1..1048576", offsetof(npu_args_t, spm_kib)},
    {OPT_RESIDENT, 1, 64, "--resident-banks needs a bank count in 1..64", offsetof(npu_args_t, resident_banks)},
    {OPT_VALIDATE, 1, 10000, "--validate needs a point count in 1..10000", offsetof(npu_args_t, validate)},
};

/* Options whose value is a non-empty string (a file name, a layer list). */
static const struct text_opt {
    int opt;
    const char *msg; /* the message for an empty value */
    size_t field;    /* offsetof the const char * in npu_args_t */
} k_text_opts[] = {
    {OPT_TRACE, "--trace needs a file name", offsetof(npu_args_t, trace)},
    {OPT_LAYERS, "--layers needs sizes like 64,128,32", offsetof(npu_args_t, layers)},
    {OPT_CONV, "--conv needs layers like 16,57,57,16,3,3,2,0,1 (C,H,W,F,KH,KW,stride,pad,dil[,dw]; "
               "several separated by ';')", offsetof(npu_args_t, conv)},
    {OPT_TOPOLOGY, "--topology needs a SCALE-Sim topology CSV file", offsetof(npu_args_t, topology)},
    {OPT_CSV, "--csv needs a file name", offsetof(npu_args_t, csv)},
    {OPT_OUT, "--out needs a file name", offsetof(npu_args_t, out)},
    {OPT_A, "--a needs a .npy file (A, M x K int16)", offsetof(npu_args_t, a_file)},
    {OPT_B, "--b needs a .npy file (B, K x N int16)", offsetof(npu_args_t, b_file)},
    {OPT_SAVE, "--save needs a directory", offsetof(npu_args_t, save)},
    {OPT_SAVE_PROGRAM, "--save-program needs a file name", offsetof(npu_args_t, save_program)},
    {OPT_X, "--x needs a .npy file (X: conv B x H x W x C, train batch x D0; int16)",
     offsetof(npu_args_t, x_file)},
    {OPT_W, "--w needs a .npy file (W: conv KH x KW x F x C; train W0.npy,W1.npy,..; int16)",
     offsetof(npu_args_t, w_file)},
    {OPT_DY, "--dy needs a .npy file (dY: conv B x OH x OW x F, train batch x DL; int16)",
     offsetof(npu_args_t, dy_file)},
    {OPT_TIMELINE, "--timeline needs a file name", offsetof(npu_args_t, timeline)},
    {OPT_REPORTS, "--reports needs a directory", offsetof(npu_args_t, reports)},
    {OPT_MODEL, "--model needs a model like mlp:64,128,10 or cnn:c16,c32s2,fc10",
     offsetof(npu_args_t, model)},
    {OPT_DATA, "--data needs digits or a digits CSV (.csv.gz) file", offsetof(npu_args_t, data)},
    {OPT_INPUT, "--input needs a sample shape HxWxC, e.g. 8x8x1", offsetof(npu_args_t, input)},
    {OPT_SPACE, "--space needs keys like s=4,8;spm=32,64;bw=16,32;batch=8", offsetof(npu_args_t, space)},
    {OPT_PLOT, "--plot needs a file name (.png)", offsetof(npu_args_t, plot)},
};

#define NELEM(t) (sizeof(t) / sizeof((t)[0]))
#define FIELD(a, off, type) ((type *)(void *)((char *)(a) + (off)))

/* The option in one of the tables: 1 parsed, 2 bad value (message in err), 0 not a table option. */
static int parse_table_opt(int c, const char *v, npu_args_t *a, char *err, size_t errn)
{
    uint64_t x;
    for (size_t i = 0; i < NELEM(k_word_opts); i++) {
        const struct word_opt *o = &k_word_opts[i];
        if (o->opt != c)
            continue;
        for (const char *const *w = o->words; *w; w++)
            if (!strcmp(v, *w)) {
                *FIELD(a, o->field, const char *) = v;
                return 1;
            }
        return bad(err, errn, "%s, not '%s'", o->msg, v);
    }
    for (size_t i = 0; i < NELEM(k_count_opts); i++) {
        const struct count_opt *o = &k_count_opts[i];
        if (o->opt != c)
            continue;
        if (parse_u64(v, &x) || x < o->lo || x > o->hi)
            return bad(err, errn, "%s, not '%s'", o->msg, v);
        *FIELD(a, o->field, unsigned) = (unsigned)x;
        return 1;
    }
    for (size_t i = 0; i < NELEM(k_text_opts); i++) {
        const struct text_opt *o = &k_text_opts[i];
        if (o->opt != c)
            continue;
        if (!*v)
            return bad(err, errn, "%s", o->msg);
        *FIELD(a, o->field, const char *) = v;
        return 1;
    }
    return 0;
}

/* --policy's names (fw = 1g1c). 0 or 2. */
static int parse_policy(const char *v, npu_args_t *a, char *err, size_t errn)
{
    if (!strcmp(v, "1g1c") || !strcmp(v, "fw"))
        a->policy = NPU_POLICY_ARG_1G1C;
    else if (!strcmp(v, "1g4c"))
        a->policy = NPU_POLICY_ARG_1G4C;
    else if (!strcmp(v, "flexsa"))
        a->policy = NPU_POLICY_ARG_FLEXSA;
    else
        return bad(err, errn, "--policy needs 1g1c, 1g4c or flexsa, not '%s'", v);
    return 0;
}

static const char *opt_name(int c, char *buf, size_t n);

/* A finite number >= 0. 0 or -1. */
static int parse_nonneg(const char *s, double *v)
{
    char *end;
    if (!s || !*s)
        return -1;
    errno = 0;
    *v = strtod(s, &end);
    return errno || *end || !(*v >= 0) || !isfinite(*v) ? -1 : 0;
}

/* One accepted option and its value (optarg). 0 or 2 (message in err). */
static int parse_opt(int c, const char *v, const char *opt, npu_args_t *a, char *err, size_t errn)
{
    uint64_t x;
    char name[32];
    int t = v ? parse_table_opt(c, v, a, err, errn) : 0;
    if (t)
        return t == 1 ? 0 : t;
    switch (c) {
    case 'm':
    case 'n':
    case 'k':
        if (parse_u64(v, &x) || x < 1 || x > NPU_ARGS_MAX_DIM)
            return bad(err, errn, "-%c needs a size in 1..%d, not '%s'", c, NPU_ARGS_MAX_DIM, v);
        *(c == 'm' ? &a->m : c == 'n' ? &a->n : &a->k) = (int)x;
        return 0;
    case OPT_SEED:
        if (parse_u64(v, &a->seed))
            return bad(err, errn, "--seed needs an unsigned integer, not '%s'", v);
        return 0;
    case OPT_DRAM_BW:
        if (parse_double(v, &a->dram_bw))
            return bad(err, errn, "--dram-bw needs a positive number, not '%s'", v);
        a->dram_bw_set = 1;
        return 0;
    case OPT_TRACE_START:
    case OPT_TRACE_END:
        if (parse_u64(v, c == OPT_TRACE_START ? &a->trace_start : &a->trace_end))
            return bad(err, errn, "%s needs a cycle number, not '%s'",
                       c == OPT_TRACE_START ? "--trace-start" : "--trace-end", v);
        return 0;
    case OPT_TRACE_WINDOW:
        if (parse_u64(v, &a->trace_window) || a->trace_window == 0)
            return bad(err, errn, "--trace-window needs a positive number of cycles, not '%s'", v);
        return 0;
    case OPT_MAX_CYCLES:
        if (parse_u64(v, &a->max_cycles) || a->max_cycles == 0)
            return bad(err, errn, "--max-cycles needs a positive integer, not '%s'", v);
        a->max_cycles_given = 1;
        return 0;
    case OPT_POLICY: return parse_policy(v, a, err, errn);
    case OPT_SLICING:
        a->slicing_set = 1;
        if (!strcmp(v, "heuristic"))
            a->slicing = NPU_GEMM_SLICING_HEURISTIC;
        else if (!strcmp(v, "auto"))
            a->slicing = 0;
        else if (!strcmp(v, "burst"))
            a->slicing = NPU_GEMM_SLICING_BURST;
        else if (!strcmp(v, "noburst"))
            a->slicing = NPU_GEMM_SLICING_NOBURST;
        else
            return bad(err, errn, "--slicing needs auto, heuristic, burst or noburst, not '%s'", v);
        return 0;
    case OPT_LR:
    case OPT_MOMENTUM:
    case OPT_WD: {
        double *d = c == OPT_LR ? &a->lr : c == OPT_MOMENTUM ? &a->momentum : &a->wd;
        if (parse_nonneg(v, d) || (c == OPT_LR && *d == 0) || (c == OPT_MOMENTUM && *d >= 1))
            return bad(err, errn, "%s needs a number %s, not '%s'", opt_name(c, name, sizeof name),
                       c == OPT_LR ? "> 0" : c == OPT_MOMENTUM ? "in [0, 1)" : ">= 0", v);
        a->fit_set |= c == OPT_LR ? 1 : c == OPT_MOMENTUM ? 2 : 4;
        return 0;
    }
    case OPT_ACC_BYTES:
        if (strcmp(v, "2") && strcmp(v, "4"))
            return bad(err, errn, "--acc-bytes needs 2 (bf16, the paper) or 4 (int32, the RTL), "
                                  "not '%s'", v);
        a->acc_bytes = (unsigned)(v[0] - '0');
        return 0;
    case OPT_TRANS_A: a->trans_a = 1; return 0;
    case OPT_TRANS_B: a->trans_b = 1; return 0;
    case OPT_JSON: a->json = 1; return 0;
    case OPT_QUIET: a->quiet = 1; return 0;
    case OPT_QUICK: a->quick = 1; return 0;
    case OPT_NO_PREFETCH: a->no_prefetch = 1; return 0;
    case OPT_NO_LOOKAHEAD: a->no_lookahead = 1; return 0;
    case OPT_FLEXSA: a->policy = NPU_POLICY_ARG_FLEXSA; return 0;
    default: return bad(err, errn, "unexpected option '%s'", opt);
    }
}

/* What `npu CMD --help` says of each option: its value (NULL: a flag; "": the words of
 * k_word_opts), a valid example value (for the tests) and what it does with its default. */
static const struct opt_doc {
    int opt;
    const char *arg, *example, *doc;
} k_opt_docs[] = {
    {'m', "M", "8", "rows of A and C, 1..2^30"},
    {'n', "N", "8", "columns of B and C, 1..2^30"},
    {'k', "K", "8", "the reduction dimension, 1..2^30"},
    {OPT_SEED, "N", "7", "seed of the operands not given in files (default 1)"},
    {OPT_DRAM_BW, "B", "8", "DRAM bytes per cycle (default: the config's)"},
    {OPT_DRAM_LAT, "C", "10", "DRAM latency in cycles, 0..1000000 (default: the config's)"},
    {OPT_STALL, "P", "5", "percentage of DRAM cycles stalled at random, 0..100 (default 0)"},
    {OPT_TRANS_A, NULL, NULL, "A is stored transposed (K x M)"},
    {OPT_TRANS_B, NULL, NULL, "B is stored transposed (N x K)"},
    {OPT_TRACE, "FILE.fst", "t.fst", "FST waveform of the run (default: none)"},
    {OPT_TRACE_START, "C", "0", "first traced cycle (default 0)"},
    {OPT_TRACE_END, "C", "100",
     "the cycle the trace ends before (default: --trace-start + --trace-window, with a warning)"},
    {OPT_REPORTS, "DIR", "r",
     "gemm --topology: DIR/COMPUTE_REPORT.csv and BANDWIDTH_REPORT.csv, SCALE-Sim's columns"},
    {OPT_TRACE_WINDOW, "N", "5000",
     "cycles traced when --trace-end is not given (default 100000: ~90 MB of FST at small)"},
    {OPT_MAX_CYCLES, "N", "1000", "simulation timeout in cycles, exit 3 (default 100000000, or 64 per cycle of the run's MACs on the full array when more: conv, gemm)"},
    {OPT_JSON, NULL, NULL, "one JSON object on one line on stdout instead of the text"},
    {OPT_QUIET, NULL, NULL, "no text report (errors still go to stderr)"},
    {OPT_CSV, "FILE", "c.csv", "the table as CSV, metadata first (default: none)"},
    {OPT_FLEXSA, NULL, NULL, "the same as --policy flexsa"},
    {OPT_POLICY, "1g1c|1g4c|flexsa", "1g4c", "how the four cores share a GEMM (default 1g1c)"},
    {OPT_SLICING, "auto|heuristic|burst|noburst", "burst",
     "the tiles: auto (default: the slicing stage's pick plus a resident band), heuristic "
     "(gemm_tiling's plus a band), burst or noburst (the stage's pick alone)"},
    {OPT_LIMIT, "G", "2", "the first G GEMMs of the set, 0 = all (default 0)"},
    {OPT_BATCH, "B", "2", "mini-batch 1..1024 (default: train 16; fit 32; conv, gemm --topology 1)"},
    {OPT_LAYERS, "D0,D1,..,DL", "8,8", "MLP layer sizes"},
    {OPT_ORDER, "", "seq", "backward-pass order (default seq)"},
    {OPT_PARTITION, "", "none", "split of each GEMM over the cores (default none)"},
    {OPT_TILE, "T", "8", "fused tile size, 1..4096, a multiple of 2S (default 2 x 2S)"},
    {OPT_CONV, "SPEC[;SPEC]", "4,4,4,4,1,1,1,0,1",
     "conv layers C,H,W,F,KH,KW,stride,pad,dil[,dw]"},
    {OPT_TOPOLOGY, "FILE.csv", "t.csv", "a SCALE-Sim topology file (GEMM or conv format)"},
    {OPT_KERNEL, "", "fwd", "which conv kernels (default all; bwd: dX + dW fused, dY read once)"},
    {OPT_DATAFLOW, "", "ecoflow", "conv dataflow (default: conv both, train ecoflow)"},
    {OPT_SCALE_C, "N", "2", "divide the channels by N, 1..4096 (default 1)"},
    {OPT_SCALE_S, "N", "2", "divide height and width by N, 1..4096 (default 1)"},
    {OPT_SET, "", "edge", "the configurations to model (default all)"},
    {OPT_ACC_BYTES, "2|4", "4", "bytes of partials and gradients (default 2, the paper's bf16)"},
    {OPT_QUICK, NULL, NULL, "half the LOAD widths"},
    {OPT_OUT, "FILE", "o.npy", "the result (.npy; calibrate: the calibration file; default none)"},
    {OPT_A, "A.npy", "a.npy", "A, M x K int16, instead of seeded"},
    {OPT_B, "B.npy", "b.npy", "B, K x N int16, instead of seeded"},
    {OPT_SAVE, "DIR", "d", "write every input and output (gemm, conv: and golden result) to DIR"},
    {OPT_SAVE_PROGRAM, "FILE", "p.bin",
     "write every program run, with its DRAM state, for npu run / npu disasm"},
    {OPT_X, "X.npy", "x.npy", "X int16 instead of seeded (conv: B x H x W x C; train: batch x D0)"},
    {OPT_W, "W.npy", "w.npy",
     "W int16 instead of seeded (conv: KH x KW x F x C; train: W0.npy,W1.npy,.., D_i x D_i+1)"},
    {OPT_DY, "DY.npy", "dy.npy",
     "dY int16 instead of seeded (conv: B x OH x OW x F; train: the loss gradient, batch x DL)"},
    {OPT_TIMELINE, "F.json", "t.json",
     "Chrome trace-event timeline of every program run (Perfetto; slower: sampled each cycle)"},
    {OPT_MODEL, "mlp:D0,..,DL|cnn:L,..", "mlp:64,16,10",
     "an MLP, or a CNN of cF[kK][sS][pP][n][+J] convolutions (n: a per-channel scale and shift, gamma Z + beta, before the ReLU, bf16 steps; +J: layer J's output added before the ReLU) and fcN layers; ReLU between layers"},
    {OPT_DATA, "digits|FILE", "digits", "the data set (default digits: sw/data/digits.csv.gz)"},
    {OPT_EPOCHS, "E", "1", "epochs, 1..10000 (default 10)"},
    {OPT_LR, "L", "0.1", "learning rate > 0 (default 0.05)"},
    {OPT_MOMENTUM, "M", "0.9", "SGD momentum in [0, 1) (default 0.9)"},
    {OPT_WD, "W", "0.0001", "weight decay >= 0, on weights only (default 0.0001)"},
    {OPT_ENGINE, "", "ref", "step: whole steps on the NPU (MLPs, CNNs); kernels: each GEMM and conv on the NPU, the rest on the host; npu: step where it can, else kernels (default); ref: fp32 only"},
    {OPT_DTYPE, "", "bf16", "the element type; must be this build's (default: the build's)"},
    {OPT_INPUT, "HxWxC", "8x8x1", "a sample's shape (default 8x8x1, the digits)"},
    {OPT_SPM_KIB, "N", "64", "SPM capacity in KiB (default: the config's); with --plan step --resident-banks the scheduler's share of the resident banks (a SPM-size sweep on one build)"},
    {OPT_NO_PREFETCH, NULL, NULL, "loads when a step starts, not k steps early"},
    {OPT_PLOT, "F.png", "f.png", "the loss curves and test accuracy per epoch as a chart (matplotlib)"},
    {OPT_SPACE, "KEY=V,..;..", "s=4,8;bw=16",
     "the design space: s (core side), spm (KiB), bw (bytes/cycle), batch (default: the build's)"},
    {OPT_NO_LOOKAHEAD, NULL, NULL, "write-backs when the space is needed, not after the last write"},
    {OPT_NO_CONV_REUSE, "", "both", "with --resident-banks, accesses kept on the DRAM side: the forward convolutions' outputs (y: stored, not drained into resident rows), their inputs (x: loaded, not copied from resident rows; x16: the batch X16 alone) or both; the fused backwards' dY (dy: loaded, not read in place), their dX (dx: stored, not drained into rows); every transposed read (xt: the backwards' X^T and the GEMMs' transposed operands from DRAM, not LOAD_SPMed from resident rows); a CNN head's input and its gradient (head: the tensors a kernel views in another row shape); all of them (all) (default: the scheduler's plan)"},
    {OPT_BYPASS, "", "off", "with --resident-banks, the tensors one kernel alone touches (an update's W32 and VW): on, streamed by that kernel from DRAM, not loaded into the SPM (Belady with bypass); off, resident like the others; auto, as --objective chooses (default)"},
    {OPT_OBJECTIVE, "", "traffic", "with --resident-banks, what the choice between residency plans minimises (the options above left to it): cycles, the estimator's step cycles (default); traffic, the DRAM bytes (the brief's scheduler)"},
    {OPT_PLAN, "", "step", "sched: SPM residency planned across the iteration (default); step: the step engine's kernels, each through DRAM (MLPs, CNNs)"},
    {OPT_RESIDENT, "N", "1", "whole steps: keep tensors in the SPM between kernels, in its last N banks (the scheduler's plan; at least 3 banks stay the kernels'; default: none)"},
    {OPT_VALIDATE, "K", "2", "sweep --plan step: run K of the points this build can run on the RTL (spread evenly), one training step each, against the estimate (bytes exact, step cycles within 10%; exit 1 if one misses); SHARD=i/N in the environment runs share i of N only (make regress's convention)"},
};

/* An option's spelling: "--seed", "-m". */
static const char *opt_name(int c, char *buf, size_t n)
{
    for (const struct option *o = long_opts; o->name; o++)
        if (o->val == c) {
            snprintf(buf, n, "--%s", o->name);
            return buf;
        }
    snprintf(buf, n, "-%c", c);
    return buf;
}

const char *npu_args_option(size_t i, const char **example)
{
    static char buf[32];
    if (i >= NELEM(k_opt_docs))
        return NULL;
    *example = k_opt_docs[i].example;
    return opt_name(k_opt_docs[i].opt, buf, sizeof buf);
}

/* An option's value as shown: its metavariable, or its words joined by '|'. */
static const char *opt_arg(const struct opt_doc *d, char *buf, size_t n)
{
    size_t len = 0;
    if (!d->arg || *d->arg)
        return d->arg;
    buf[0] = '\0';
    for (size_t i = 0; i < NELEM(k_word_opts); i++)
        if (k_word_opts[i].opt == d->opt)
            for (const char *const *w = k_word_opts[i].words; *w && len < n; w++)
                len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? "|" : "", *w);
    return buf;
}

void npu_args_cmd_usage(FILE *f, int cmd)
{
    const struct cmd_def *d = NULL;
    char name[32], arg[96], both[160];
    for (size_t i = 0; i < NELEM(k_cmds); i++)
        if (k_cmds[i].cmd == cmd)
            d = &k_cmds[i];
    if (!d)
        return;
    fprintf(f, "usage: npu %s%s [options]\n%s\noptions:\n", d->name,
            cmd == NPU_CMD_RUN ? " FILE" : cmd == NPU_CMD_DISASM ? " [FILE]" : "", d->what);
    for (size_t i = 0; i < NELEM(k_opt_docs); i++) {
        const struct opt_doc *o = &k_opt_docs[i];
        const char *v;
        if (!(d->opts & B(o->opt)))
            continue;
        v = opt_arg(o, arg, sizeof arg);
        snprintf(both, sizeof both, "%s%s%s", opt_name(o->opt, name, sizeof name), v ? " " : "",
                 v ? v : "");
        /* a long value list gets a line of its own */
        if (strlen(both) > 30)
            fprintf(f, "  %s\n  %-30s %s\n", both, "", o->doc);
        else
            fprintf(f, "  %-30s %s\n", both, o->doc);
    }
    fprintf(f, "  %-30s %s\n", "--help", "this list");
}

void npu_args_hint(FILE *f, int argc, char **argv)
{
    for (size_t i = 0; argc > 1 && i < NELEM(k_cmds); i++)
        if (!strcmp(argv[1], k_cmds[i].name)) {
            fprintf(f, "run 'npu %s --help' for the options\n", k_cmds[i].name);
            return;
        }
    fprintf(f, "run 'npu --help' for the commands\n");
}

/* getopt_long's '?' for a long option: ambiguous (a prefix of several, named) or unknown. */
static int bad_long_opt(const char *opt, const char *cmd, char *err, size_t errn)
{
    size_t len = strcspn(opt + 2, "="), n = 0, used;
    char list[256] = "";
    for (const struct option *o = long_opts; o->name; o++)
        if (!strncmp(o->name, opt + 2, len) && len) {
            used = strlen(list);
            snprintf(list + used, sizeof list - used, "%s--%s", n++ ? ", " : "", o->name);
        }
    if (n > 1)
        return bad(err, errn, "option '%.*s' is ambiguous for '%s': %s", (int)len + 2, opt, cmd,
                   list);
    return bad(err, errn, "unknown option '%.*s' for '%s'", (int)len + 2, opt, cmd);
}

static int config_is_no_option(const char *cfg, char *err, size_t errn)
{
    return bad(err, errn,
               "--config is not an option: each build is one configuration (this binary is "
               "'%s'); run build/<config>/npu for another one",
               cfg ? cfg : "?");
}

const char *npu_args_cmd_name(int cmd)
{
    for (size_t i = 0; i < NELEM(k_cmds); i++)
        if (k_cmds[i].cmd == cmd)
            return k_cmds[i].name;
    return cmd == NPU_CMD_HELP ? "help" : "?";
}

/* argv[1]: the command. 0 (a->cmd and *allowed set), 1 (help: nothing more to parse) or 2. */
static int parse_cmd(const char *cmd, const char *cfg, npu_args_t *a, npu_optmask_t *allowed,
                     char *err, size_t errn)
{
    for (size_t i = 0; i < NELEM(k_cmds); i++)
        if (!strcmp(cmd, k_cmds[i].name)) {
            a->cmd = k_cmds[i].cmd;
            *allowed = k_cmds[i].opts;
            return 0;
        }
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        a->cmd = NPU_CMD_HELP;
        return 1;
    }
    if (!strcmp(cmd, "--version")) {
        a->cmd = NPU_CMD_VERSION;
        return 1;
    }
    if (!strncmp(cmd, "--config", 8))
        return config_is_no_option(cfg, err, errn);
    return bad(err, errn,
               "unknown command '%s' (expected gemm, overlap, disasm, run, slice, train, train-bench, "
               "conv, flexsa-report, calibrate or info)",
               cmd);
}

/* What getopt_long returned when it is not an option of the command: 1 help, 2 error, 0 ok. */
static int check_getopt(int c, const char *opt, const char *cmd, const char *cfg,
                        npu_optmask_t allowed, npu_args_t *a, char *err, size_t errn)
{
    if (c == OPT_CONFIG)
        return config_is_no_option(cfg, err, errn);
    if (c == 'h' || c == OPT_HELP) {
        a->help_cmd = a->cmd;
        a->cmd = NPU_CMD_HELP;
        return 1;
    }
    if (c == '?') {
        if (optopt > 0 && optopt < 128)
            return bad(err, errn, "unknown option '-%c' for '%s'", optopt, cmd);
        if (!strncmp(opt, "--", 2))
            return bad_long_opt(opt, cmd, err, errn);
        return bad(err, errn, "unknown option '%s' for '%s'", opt, cmd);
    }
    char name[32];
    if (c == ':') /* optopt: the option (a prefix in opt is spelt out) */
        return bad(err, errn, "option '%s' is missing its value",
                   optopt ? opt_name(optopt, name, sizeof name) : opt);
    if (!(allowed & B(c))) /* name the option, not its value (optind is past both) */
        return bad(err, errn, "option '%s' does not apply to '%s'", opt_name(c, name, sizeof name),
                   cmd);
    return 0;
}

/* sweep: the step plan's options only with --plan step; SHARD=i/N (the environment, as make
 * regress) read by --validate, checked here. */
static int check_sweep(const npu_args_t *a, npu_optmask_t seen, char *err, size_t errn)
{
    const npu_optmask_t step_only = B(OPT_RESIDENT) | B(OPT_POLICY) | B(OPT_NO_PREFETCH) |
                                    B(OPT_NO_LOOKAHEAD) | B(OPT_VALIDATE) | B(OPT_NO_CONV_REUSE) |
                                    B(OPT_BYPASS) | B(OPT_OBJECTIVE);
    const char *shard = getenv("SHARD");
    unsigned i, n;
    char tail;
    if (!a->model == !a->topology)
        return bad(err, errn, "'sweep' needs --model mlp:D0,..,DL or cnn:LAYER,.. or --topology FILE.csv (one)");
    if (a->topology && a->input)
        return bad(err, errn, "--input applies to --model: a topology's layers give their own shapes");
    if ((seen & step_only) && !(a->plan && !strcmp(a->plan, "step")))
        return bad(err, errn, "--resident-banks, --policy, --no-prefetch, --no-lookahead, --no-conv-reuse, "
                              "--bypass, --objective and --validate apply to 'sweep --plan step'");
    if ((seen & (B(OPT_NO_PREFETCH) | B(OPT_NO_LOOKAHEAD) | B(OPT_NO_CONV_REUSE) | B(OPT_BYPASS) |
                 B(OPT_OBJECTIVE))) &&
        !a->resident_banks)
        return bad(err, errn, "--no-prefetch, --no-lookahead, --no-conv-reuse, --bypass and --objective apply with "
                              "--resident-banks");
    if (a->validate && shard && *shard && (sscanf(shard, "%u/%u%c", &i, &n, &tail) != 2 || n < 1 || i >= n))
        return bad(err, errn, "SHARD needs i/N with 0 <= i < N, not '%s'", shard);
    return 0;
}

/* npu conv runs exactly one kernel of one layer with one dataflow. */
static int one_conv_run(const npu_args_t *a)
{
    const char *k = a->kernel, *d = a->dataflow;
    return a->conv && !strchr(a->conv, ';') && k && strcmp(k, "all") &&
           (!strcmp(k, "fwd") || (d && strcmp(d, "both")));
}

static int check_trace(const npu_args_t *a, npu_optmask_t seen, char *err, size_t errn)
{
    if ((seen & (B(OPT_TRACE_START) | B(OPT_TRACE_END) | B(OPT_TRACE_WINDOW))) && !a->trace)
        return bad(err, errn, "--trace-start/--trace-end/--trace-window need --trace FILE.fst");
    if ((seen & B(OPT_TRACE_END)) && (seen & B(OPT_TRACE_WINDOW)))
        return bad(err, errn, "--trace-end and --trace-window are alternatives: give one");
    if (a->trace && a->cmd == NPU_CMD_TRAIN && !a->layers)
        return bad(err, errn, "--trace traces one simulation: train traces an MLP step (--layers)");
    if (a->trace && a->cmd == NPU_CMD_CONV && !one_conv_run(a))
        return bad(err, errn, "--trace traces one simulation: conv needs one layer (--conv SPEC), "
                              "--kernel fwd|dx|dw and one --dataflow");
    if (a->trace_end < a->trace_start)
        return bad(err, errn, "--trace-end is before --trace-start");
    return 0;
}

/* gemm: one GEMM (-m -n -k) or the GEMMs of a topology. 0 or 2. */
static int check_gemm(const npu_args_t *a, npu_optmask_t seen, char *err, size_t errn)
{
    if (a->topology && (seen & OPTS_DIMS))
        return bad(err, errn, "--topology and -m/-n/-k are alternatives: give one");
    if (a->topology && (seen & OPTS_GEMM_ONE))
        return bad(err, errn, "--trace, --a, --b, --out and --save apply to one GEMM (-m -n -k), "
                              "not to --topology");
    if (!a->topology && (seen & B(OPT_REPORTS)))
        return bad(err, errn, "--reports applies to 'gemm --topology' (per-layer reports)");
    if (!a->topology && (seen & B(OPT_BATCH)))
        return bad(err, errn, "--batch applies to 'gemm --topology' (-m counts the rows)");
    if (!a->a_file != !a->b_file)
        return bad(err, errn, "--a and --b go together (A is M x K, B is K x N: their shapes give "
                              "M, N and K)");
    if (!a->topology && !a->a_file && (seen & OPTS_DIMS) != OPTS_DIMS)
        return bad(err, errn, "'gemm' needs -m M -n N -k K, --a A.npy --b B.npy, or --topology "
                              "FILE.csv");
    return 0;
}

/* npu conv with .npy tensors: one layer (--conv), one kernel, one dataflow, the kernel's inputs. */
static int check_conv_tensors(const npu_args_t *a, npu_optmask_t seen, char *err, size_t errn)
{
    const char *k = a->kernel;
    if (!a->conv || strchr(a->conv, ';'))
        return bad(err, errn, "--x/--w/--dy/--out/--save need one layer (--conv SPEC)");
    if (!k || !strcmp(k, "all"))
        return bad(err, errn, "--x/--w/--dy/--out/--save need one kernel: --kernel fwd, dx or dw");
    if (strcmp(k, "fwd") && (!a->dataflow || !strcmp(a->dataflow, "both")))
        return bad(err, errn, "--x/--w/--dy/--out/--save need one dataflow: --dataflow ecoflow "
                              "or zeropad");
    if ((seen & B(OPT_X)) && !strcmp(k, "dx"))
        return bad(err, errn, "--x does not apply to --kernel dx (dX = dY * W)");
    if ((seen & B(OPT_W)) && !strcmp(k, "dw"))
        return bad(err, errn, "--w does not apply to --kernel dw (dW = X * dY)");
    if ((seen & B(OPT_DY)) && !strcmp(k, "fwd"))
        return bad(err, errn, "--dy does not apply to --kernel fwd (Y = X * W)");
    return 0;
}

/* npu conv --kernel bwd (the fused dX + dW, cmd_conv_bwd.c): conv only, the ecoflow dataflow,
 * seeded tensors, no trace or saved program. */
static int check_conv_bwd(const npu_args_t *a, npu_optmask_t seen, char *err, size_t errn)
{
    if (a->cmd != NPU_CMD_CONV)
        return bad(err, errn, "--kernel bwd (the fused conv backward) applies to 'npu conv'");
    if (a->dataflow && strcmp(a->dataflow, "ecoflow"))
        return bad(err, errn, "--kernel bwd is the ecoflow dataflow (dX phase decomposition, dW "
                              "transposed): --dataflow %s does not apply", a->dataflow);
    if (seen & (OPTS_CONV_TENSORS | B(OPT_TRACE)))
        return bad(err, errn, "--kernel bwd runs seeded tensors (no --x/--w/--dy/--out/--save "
                              "or --trace): run --kernel dx and dw for those");
    if (seen & B(OPT_SLICING))
        return bad(err, errn, "--slicing chooses the plans of --kernel fwd, dx and dw, not of the fused bwd");
    return 0;
}

/* The options together: alternatives, requirements, the CNN / MLP forms of train. 0 or 2. */
static int check_combination(const npu_args_t *a, const char *cmd, npu_optmask_t allowed,
                             npu_optmask_t seen, char *err, size_t errn)
{
    int train = a->cmd == NPU_CMD_TRAIN, cnn = a->conv || a->topology;
    if (a->conv && a->topology)
        return bad(err, errn, "--conv and --topology are alternatives: give one");
    if (train && !a->layers && !cnn)
        return bad(err, errn, "'train' needs --layers D0,D1,..,DL (MLP) or --conv/--topology (CNN)");
    if (train && a->layers && cnn)
        return bad(err, errn, "'train' takes --layers (MLP) or --conv/--topology (CNN), not both");
    if (train && a->layers && (seen & (B(OPT_DATAFLOW) | B(OPT_SCALE_C) | B(OPT_SCALE_S))))
        return bad(err, errn, "--dataflow/--scale-c/--scale-s apply to conv layers (--conv, --topology)");
    if (train && cnn && (seen & OPTS_TRAIN_TENSORS))
        return bad(err, errn, "--x/--w/--dy/--save of 'train' apply to MLPs (--layers); 'conv "
                              "--conv SPEC --kernel K' takes one conv kernel's tensors");
    if (train && cnn &&
        (seen & (B(OPT_ORDER) | B(OPT_PARTITION) | B(OPT_POLICY) | B(OPT_TILE) | B(OPT_FLEXSA))))
        return bad(err, errn, "--order/--partition/--policy/--tile apply to MLPs (--layers) only");
    if (a->cmd == NPU_CMD_CONV && !cnn)
        return bad(err, errn, "'conv' needs --conv SPEC or --topology FILE.csv");
    if (a->kernel && !strcmp(a->kernel, "bwd"))
        return check_conv_bwd(a, seen, err, errn);
    if (a->cmd == NPU_CMD_CONV && (seen & OPTS_CONV_TENSORS))
        return check_conv_tensors(a, seen, err, errn);
    if (a->cmd == NPU_CMD_GEMM)
        return check_gemm(a, seen, err, errn) ? 2 : check_trace(a, seen, err, errn);
    if (a->cmd == NPU_CMD_SLICE && a->conv && (seen & OPTS_DIMS))
        return bad(err, errn, "'slice' takes -m -n -k (a GEMM) or --conv SPEC, not both");
    if (a->cmd == NPU_CMD_SLICE && !a->conv && (seen & OPTS_DIMS) != OPTS_DIMS)
        return bad(err, errn, "'slice' needs -m M -n N -k K or --conv SPEC");
    if (a->cmd == NPU_CMD_SLICE && !a->conv && (seen & B(OPT_KERNEL)))
        return bad(err, errn, "--kernel applies to 'slice --conv'");
    if (a->cmd == NPU_CMD_SLICE)
        return 0;
    if (a->cmd == NPU_CMD_SWEEP)
        return check_sweep(a, seen, err, errn);
    if (a->cmd == NPU_CMD_ESTIMATE && !a->model == !a->topology)
        return bad(err, errn, "'estimate' needs --model mlp:D0,..,DL or cnn:LAYER,.. or --topology FILE.csv (one)");
    if (a->cmd == NPU_CMD_ESTIMATE && a->topology && a->input)
        return bad(err, errn, "--input applies to --model: a topology's layers give their own shapes");
    if (a->cmd == NPU_CMD_FIT && !a->model)
        return bad(err, errn, "'fit' needs --model mlp:D0,D1,..,DL (e.g. mlp:64,128,10)");
    if (a->cmd == NPU_CMD_RUN && !a->prog_file)
        return bad(err, errn, "'run' needs a saved program file (npu gemm / conv / train ... --save-program FILE)");
    if (a->cmd == NPU_CMD_RUN)
        return check_trace(a, seen, err, errn);
    if (a->cmd == NPU_CMD_DISASM && a->prog_file && (seen & ~B(OPT_JSON)))
        return bad(err, errn, "'disasm FILE' takes no other option than --json (the program is "
                              "saved)");
    if (a->cmd == NPU_CMD_DISASM && a->prog_file)
        return 0;
    if ((allowed & OPTS_DIMS) && (seen & OPTS_DIMS) != OPTS_DIMS)
        return bad(err, errn, "'%s' needs -m M -n N -k K", cmd);
    return check_trace(a, seen, err, errn);
}

/* npu help [CMD]: the overview, or CMD's options. 0 or 2. */
static int parse_help(int argc, char **argv, npu_args_t *a, char *err, size_t errn)
{
    a->cmd = NPU_CMD_HELP;
    if (argc > 3)
        return bad(err, errn, "unexpected argument '%s' after 'help %s'", argv[3], argv[2]);
    if (argc < 3)
        return 0;
    for (size_t i = 0; i < NELEM(k_cmds); i++)
        if (!strcmp(argv[2], k_cmds[i].name)) {
            a->help_cmd = k_cmds[i].cmd;
            return 0;
        }
    return bad(err, errn, "unknown command '%s' for 'help'", argv[2]);
}

int npu_args_parse(int argc, char **argv, const char *cfg, npu_args_t *a, char *err, size_t errn)
{
    npu_optmask_t allowed = 0, seen = 0;
    int c, rc, sub_argc = argc - 1;
    char **sub_argv = argv + 1;

    memset(a, 0, sizeof *a);
    a->seed = NPU_ARGS_DEFAULT_SEED;
    a->max_cycles = NPU_ARGS_DEFAULT_MAX_CYCLES;
    a->trace_end = UINT64_MAX;
    if (errn)
        err[0] = '\0';
    if (argc < 2)
        return bad(err, errn,
                   "missing command (gemm, overlap, disasm, train, train-bench, conv, flexsa-report or info)");
    if (!strcmp(argv[1], "help"))
        return parse_help(argc, argv, a, err, errn);
    if ((rc = parse_cmd(argv[1], cfg, a, &allowed, err, errn)) != 0) {
        if (rc == 1 && argc > 2)
            return bad(err, errn, "unexpected argument '%s' after '%s'", argv[2], argv[1]);
        return rc == 1 ? 0 : rc;
    }
    optind = 0; /* glibc: full re-initialisation, so parse can be called repeatedly */
    opterr = 0;
    while ((c = getopt_long(sub_argc, sub_argv, ":m:n:k:h", long_opts, NULL)) != -1) {
        const char *opt = sub_argv[optind - 1];
        if ((rc = check_getopt(c, opt, argv[1], cfg, allowed, a, err, errn)) != 0)
            return rc == 1 ? 0 : rc;
        seen |= B(c);
        if (parse_opt(c, optarg, opt, a, err, errn) != 0)
            return 2;
        if (c == OPT_DRAM_LAT)
            a->dram_latency_set = 1;
    }
    /* npu run FILE, npu disasm FILE: a saved program file (progfile.h) */
    if (optind < sub_argc && (a->cmd == NPU_CMD_RUN || a->cmd == NPU_CMD_DISASM)) {
        if (!*sub_argv[optind])
            return bad(err, errn, "'%s' needs a saved program file, not ''", argv[1]);
        a->prog_file = sub_argv[optind++];
    }
    if (optind < sub_argc)
        return bad(err, errn, "unexpected argument '%s' for '%s'", sub_argv[optind], argv[1]);
    return check_combination(a, argv[1], allowed, seen, err, errn);
}
