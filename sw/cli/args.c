/* args.c - `npu` argument parsing; see args.h. */
#define _GNU_SOURCE
#include "cli/args.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum {
    OPT_SEED = 256, OPT_DRAM_BW, OPT_DRAM_LAT, OPT_STALL, OPT_TRANS_A, OPT_TRANS_B, OPT_TRACE,
    OPT_TRACE_START, OPT_TRACE_END, OPT_MAX_CYCLES, OPT_JSON, OPT_QUIET, OPT_CSV, OPT_FLEXSA, OPT_POLICY, OPT_LIMIT, OPT_BATCH, OPT_LAYERS, OPT_ORDER, OPT_PARTITION, OPT_TILE, OPT_CONFIG, OPT_HELP,
    OPT_CONV, OPT_TOPOLOGY, OPT_KERNEL, OPT_DATAFLOW, OPT_SCALE_C, OPT_SCALE_S, OPT_SET, OPT_ACC_BYTES
};

/* Which options each command accepts (bit = option). */
#define B(o) (1ull << ((o) >= 256 ? (o) - 256 + 8 : (o) == 'm' ? 0 : (o) == 'n' ? 1 : 2))
#define OPTS_CONV_LAYERS (B(OPT_CONV) | B(OPT_TOPOLOGY) | B(OPT_SCALE_C) | B(OPT_SCALE_S))
#define OPTS_CONV                                                                              \
    (OPTS_CONV_LAYERS | B(OPT_KERNEL) | B(OPT_DATAFLOW) | B(OPT_BATCH) | B(OPT_SEED) |          \
     B(OPT_DRAM_BW) | B(OPT_DRAM_LAT) | B(OPT_STALL) | B(OPT_MAX_CYCLES) | B(OPT_QUIET) |      \
     B(OPT_CSV))
#define OPTS_DIMS (B('m') | B('n') | B('k'))
#define OPTS_GEMM                                                                              \
    (OPTS_DIMS | B(OPT_SEED) | B(OPT_DRAM_BW) | B(OPT_DRAM_LAT) | B(OPT_STALL) | B(OPT_TRANS_A) | \
     B(OPT_TRANS_B) | B(OPT_TRACE) | B(OPT_TRACE_START) | B(OPT_TRACE_END) | B(OPT_MAX_CYCLES) | \
     B(OPT_JSON) | B(OPT_QUIET) | B(OPT_CSV) | B(OPT_FLEXSA) | B(OPT_POLICY))
#define OPTS_DISASM (OPTS_DIMS | B(OPT_TRANS_A) | B(OPT_TRANS_B) | B(OPT_FLEXSA) | B(OPT_POLICY))
#define OPTS_TRAIN                                                                             \
    (B(OPT_LAYERS) | B(OPT_BATCH) | B(OPT_ORDER) | B(OPT_PARTITION) | B(OPT_POLICY) |          \
     B(OPT_TILE) |                                                                             \
     B(OPT_FLEXSA) | B(OPT_SEED) | B(OPT_DRAM_BW) | B(OPT_DRAM_LAT) | B(OPT_STALL) |           \
     B(OPT_MAX_CYCLES) | B(OPT_QUIET) | B(OPT_CSV) | OPTS_CONV_LAYERS | B(OPT_DATAFLOW))
#define OPTS_REPORT (B(OPT_SEED) | B(OPT_CSV) | B(OPT_QUIET) | B(OPT_LIMIT) | B(OPT_BATCH) | \
                     B(OPT_MAX_CYCLES))
#define OPTS_TRAIN_BENCH (B(OPT_SET) | B(OPT_ACC_BYTES) | B(OPT_CSV) | B(OPT_QUIET))
#define OPTS_OVERLAP                                                                           \
    (OPTS_DIMS | B(OPT_SEED) | B(OPT_DRAM_BW) | B(OPT_DRAM_LAT) | B(OPT_STALL) |               \
     B(OPT_MAX_CYCLES) | B(OPT_JSON) | B(OPT_QUIET))

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
    {"max-cycles", required_argument, NULL, OPT_MAX_CYCLES},
    {"json", no_argument, NULL, OPT_JSON},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"csv", required_argument, NULL, OPT_CSV},
    {"flexsa", no_argument, NULL, OPT_FLEXSA},
    {"policy", required_argument, NULL, OPT_POLICY},
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
    {NULL, 0, NULL, 0},
};

void npu_args_usage(FILE *f, const char *cfg)
{
    fprintf(f,
            "usage: npu gemm -m M -n N -k K [--seed N] [--dram-bw BYTES_PER_CYCLE]\n"
            "                [--dram-latency C] [--stall-pct P] [--trans-a] [--trans-b]\n"
            "                [--trace FILE.fst] [--trace-start C] [--trace-end C]\n"
            "                [--max-cycles N] [--json] [--quiet] [--csv FILE]\n"
            "                [--policy 1g1c|1g4c|flexsa] [--flexsa (= --policy flexsa)]\n"
            "       npu overlap -m M -n N -k K [--seed N] [--dram-bw BYTES_PER_CYCLE]\n"
            "                [--dram-latency C] [--stall-pct P] [--max-cycles N] [--json]\n"
            "                [--quiet]   (double buffering: compute-only vs transfer-only vs\n"
            "                full cycles; without --dram-bw, the bandwidth that balances them)\n"
            "       npu disasm -m M -n N -k K [--trans-a] [--trans-b] [--policy P]\n"
            "       npu train --layers D0,D1,..,DL [--batch B] [--order O]\n"
            "                [--partition none|m|n|k|mseq|nseq|kseq|knn] [--tile T]\n"
            "                (m, k: one part per core when M, K is a multiple of 4S, n: N of 8S;\n"
            "                mseq, nseq, kseq: the parts in sequence)\n"
            "                [--policy P] [--seed N] [--stall-pct P] [--csv FILE] [--quiet]\n"
            "                (one MLP training step: forward, dX, dW of every layer, bit-exact)\n"
            "       npu train (--conv SPEC[;SPEC..] | --topology FILE.csv) [--dataflow D]\n"
            "                [--batch B] [--scale-c N] [--scale-s N] [--seed N] [--csv FILE]\n"
            "                (conv layers: forward, dX (not the first layer), dW, bit-exact)\n"
            "       npu conv (--conv SPEC[;SPEC..] | --topology FILE.csv) [--kernel fwd|dx|dw|all]\n"
            "                [--dataflow zeropad|ecoflow|both] [--batch B] [--scale-c N]\n"
            "                [--scale-s N] [--seed N] [--max-cycles N] [--csv FILE] [--quiet]\n"
            "                (convolution kernels on the RTL, bit-exact; SPEC = C,H,W,F,KH,KW,\n"
            "                stride,pad,dil[,dw]; FILE = SCALE-Sim topology CSV; --scale-c/-s\n"
            "                divide channels / height and width for quicker runs)\n"
            "       npu flexsa-report [--seed N] [--batch B] [--limit G] [--csv FILE] [--quiet]\n"
            "                [--max-cycles N]   (1G1C, 1G4C and FlexSA on the RTL: the mode\n"
            "                utilization shapes and a pruned ResNet-50 GEMM set)\n"
            "       npu train-bench [--set edge|server|server4|all] [--acc-bytes 2|4] [--csv FILE]\n"
            "                [--quiet]   (analytical model, paper-scaled configurations: fwd+bwd\n"
            "                cycle reduction of interleaving, rearrangement, partitioning vs the\n"
            "                sequential baseline, per layer and per model, beside the paper)\n"
            "       npu info\n"
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

int npu_args_parse(int argc, char **argv, const char *cfg, npu_args_t *a, char *err, size_t errn)
{
    const char *cmd;
    unsigned long long allowed, seen = 0;
    int c, sub_argc;
    char **sub_argv;
    uint64_t v;

    memset(a, 0, sizeof *a);
    a->seed = NPU_ARGS_DEFAULT_SEED;
    a->max_cycles = NPU_ARGS_DEFAULT_MAX_CYCLES;
    a->trace_end = UINT64_MAX;
    if (errn)
        err[0] = '\0';
    if (argc < 2)
        return bad(err, errn,
                   "missing command (gemm, overlap, disasm, train, train-bench, conv, flexsa-report or info)");
    cmd = argv[1];
    if (!strcmp(cmd, "gemm")) {
        a->cmd = NPU_CMD_GEMM;
        allowed = OPTS_GEMM;
    } else if (!strcmp(cmd, "overlap")) {
        a->cmd = NPU_CMD_OVERLAP;
        allowed = OPTS_OVERLAP;
    } else if (!strcmp(cmd, "disasm")) {
        a->cmd = NPU_CMD_DISASM;
        allowed = OPTS_DISASM;
    } else if (!strcmp(cmd, "train")) {
        a->cmd = NPU_CMD_TRAIN;
        allowed = OPTS_TRAIN;
    } else if (!strcmp(cmd, "train-bench")) {
        a->cmd = NPU_CMD_TRAIN_BENCH;
        allowed = OPTS_TRAIN_BENCH;
    } else if (!strcmp(cmd, "conv")) {
        a->cmd = NPU_CMD_CONV;
        allowed = OPTS_CONV;
    } else if (!strcmp(cmd, "flexsa-report")) {
        a->cmd = NPU_CMD_FLEXSA_REPORT;
        allowed = OPTS_REPORT;
    } else if (!strcmp(cmd, "info")) {
        a->cmd = NPU_CMD_INFO;
        allowed = 0;
    } else if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        a->cmd = NPU_CMD_HELP;
        return 0;
    } else if (!strncmp(cmd, "--config", 8)) {
        snprintf(err, errn,
                 "--config is not an option: each build is one configuration (this binary is "
                 "'%s'); run build/<config>/npu for another one",
                 cfg ? cfg : "?");
        return 2;
    } else {
        return bad(err, errn,
                   "unknown command '%s' (expected gemm, overlap, disasm, train, train-bench, conv, "
                   "flexsa-report or info)",
                   cmd);
    }

    sub_argc = argc - 1;
    sub_argv = argv + 1;
    optind = 0; /* glibc: full re-initialisation, so parse can be called repeatedly */
    opterr = 0;
    while ((c = getopt_long(sub_argc, sub_argv, ":m:n:k:h", long_opts, NULL)) != -1) {
        const char *opt = sub_argv[optind - 1];
        if (c == OPT_CONFIG) {
            snprintf(err, errn,
                     "--config is not an option: each build is one configuration (this binary "
                     "is '%s'); run build/<config>/npu for another one",
                     cfg ? cfg : "?");
            return 2;
        }
        if (c == 'h' || c == OPT_HELP) {
            a->cmd = NPU_CMD_HELP;
            return 0;
        }
        if (c == '?') {
            if (optopt > 0 && optopt < 128)
                snprintf(err, errn, "unknown option '-%c' for '%s'", optopt, cmd);
            else
                snprintf(err, errn, "unknown option '%s' for '%s'", opt, cmd);
            return 2;
        }
        if (c == ':')
            return bad(err, errn, "option '%s' needs a value", opt);
        if (!(allowed & B(c))) {
            /* name the option, not its value (optind is past both) */
            const char *lname = NULL;
            for (const struct option *o = long_opts; o->name; o++)
                if (o->val == c)
                    lname = o->name;
            if (lname)
                return bad(err, errn, "option '--%s' does not apply to '%s'", lname, cmd);
            return bad(err, errn, "option '-%c' does not apply to '%s'", c, cmd);
        }
        seen |= B(c);
        switch (c) {
        case 'm':
        case 'n':
        case 'k':
            if (parse_u64(optarg, &v) || v < 1 || v > NPU_ARGS_MAX_DIM) {
                snprintf(err, errn, "-%c needs a size in 1..%d, not '%s'", c, NPU_ARGS_MAX_DIM,
                         optarg);
                return 2;
            }
            *(c == 'm' ? &a->m : c == 'n' ? &a->n : &a->k) = (int)v;
            break;
        case OPT_SEED:
            if (parse_u64(optarg, &a->seed))
                return bad(err, errn, "--seed needs an unsigned integer, not '%s'", optarg);
            break;
        case OPT_DRAM_BW:
            if (parse_double(optarg, &a->dram_bw))
                return bad(err, errn, "--dram-bw needs a positive number, not '%s'", optarg);
            a->dram_bw_set = 1;
            break;
        case OPT_DRAM_LAT:
            if (parse_u64(optarg, &v) || v > 1000000)
                return bad(err, errn, "--dram-latency needs cycles in 0..1000000, not '%s'",
                           optarg);
            a->dram_latency = (unsigned)v;
            a->dram_latency_set = 1;
            break;
        case OPT_STALL:
            if (parse_u64(optarg, &v) || v > 100)
                return bad(err, errn, "--stall-pct needs a percentage in 0..100, not '%s'",
                           optarg);
            a->stall_pct = (unsigned)v;
            break;
        case OPT_TRANS_A: a->trans_a = 1; break;
        case OPT_TRANS_B: a->trans_b = 1; break;
        case OPT_TRACE:
            if (!*optarg)
                return bad(err, errn, "--trace needs a file name");
            a->trace = optarg;
            break;
        case OPT_TRACE_START:
            if (parse_u64(optarg, &a->trace_start))
                return bad(err, errn, "--trace-start needs a cycle number, not '%s'", optarg);
            break;
        case OPT_TRACE_END:
            if (parse_u64(optarg, &a->trace_end))
                return bad(err, errn, "--trace-end needs a cycle number, not '%s'", optarg);
            break;
        case OPT_MAX_CYCLES:
            if (parse_u64(optarg, &a->max_cycles) || a->max_cycles == 0)
                return bad(err, errn, "--max-cycles needs a positive integer, not '%s'", optarg);
            break;
        case OPT_JSON: a->json = 1; break;
        case OPT_QUIET: a->quiet = 1; break;
        case OPT_FLEXSA: a->policy = NPU_POLICY_ARG_FLEXSA; break;
        case OPT_POLICY:
            if (!strcmp(optarg, "1g1c") || !strcmp(optarg, "fw"))
                a->policy = NPU_POLICY_ARG_1G1C;
            else if (!strcmp(optarg, "1g4c"))
                a->policy = NPU_POLICY_ARG_1G4C;
            else if (!strcmp(optarg, "flexsa"))
                a->policy = NPU_POLICY_ARG_FLEXSA;
            else
                return bad(err, errn, "--policy needs 1g1c, 1g4c or flexsa, not '%s'", optarg);
            break;
        case OPT_LIMIT:
            if (parse_u64(optarg, &v) || v > 100000)
                return bad(err, errn, "--limit needs a GEMM count in 0..100000, not '%s'", optarg);
            a->limit = (unsigned)v;
            break;
        case OPT_LAYERS:
            if (!*optarg)
                return bad(err, errn, "--layers needs sizes like 64,128,32");
            a->layers = optarg;
            break;
        case OPT_ORDER:
            if (strcmp(optarg, "seq") && strcmp(optarg, "interleave") && strcmp(optarg, "dxmajor") &&
                strcmp(optarg, "dwmajor") && strcmp(optarg, "auto") && strcmp(optarg, "oracle"))
                return bad(err, errn,
                           "--order needs seq, interleave, dxmajor, dwmajor, auto or oracle, not '%s'",
                           optarg);
            a->order = optarg;
            break;
        case OPT_PARTITION:
            if (strcmp(optarg, "none") && strcmp(optarg, "m") && strcmp(optarg, "n") &&
                strcmp(optarg, "k") && strcmp(optarg, "kseq") && strcmp(optarg, "mseq") &&
                strcmp(optarg, "nseq") && strcmp(optarg, "knn"))
                return bad(err, errn, "--partition needs none, m, n, k, mseq, nseq, kseq or knn, not '%s'",
                           optarg);
            a->partition = optarg;
            break;
        case OPT_TILE:
            if (parse_u64(optarg, &v) || v < 1 || v > 4096)
                return bad(err, errn, "--tile needs a tile size in 1..4096 (a multiple of 2S), not '%s'",
                           optarg);
            a->tile = (unsigned)v;
            break;
        case OPT_BATCH:
            if (parse_u64(optarg, &v) || v < 1 || v > 1024)
                return bad(err, errn, "--batch needs a mini-batch in 1..1024, not '%s'", optarg);
            a->batch = (unsigned)v;
            break;
        case OPT_CONV:
            if (!*optarg)
                return bad(err, errn, "--conv needs layers like 16,57,57,16,3,3,2,0,1 (C,H,W,F,KH,KW,"
                                      "stride,pad,dil[,dw]; several separated by ';')");
            a->conv = optarg;
            break;
        case OPT_TOPOLOGY:
            if (!*optarg)
                return bad(err, errn, "--topology needs a SCALE-Sim topology CSV file");
            a->topology = optarg;
            break;
        case OPT_KERNEL:
            if (strcmp(optarg, "fwd") && strcmp(optarg, "dx") && strcmp(optarg, "dw") &&
                strcmp(optarg, "all"))
                return bad(err, errn, "--kernel needs fwd, dx, dw or all, not '%s'", optarg);
            a->kernel = optarg;
            break;
        case OPT_DATAFLOW:
            if (strcmp(optarg, "zeropad") && strcmp(optarg, "ecoflow") && strcmp(optarg, "both"))
                return bad(err, errn, "--dataflow needs zeropad, ecoflow or both, not '%s'", optarg);
            a->dataflow = optarg;
            break;
        case OPT_SCALE_C:
        case OPT_SCALE_S:
            if (parse_u64(optarg, &v) || v < 1 || v > 4096)
                return bad(err, errn, "%s needs a divisor in 1..4096, not '%s'",
                           c == OPT_SCALE_C ? "--scale-c" : "--scale-s", optarg);
            *(c == OPT_SCALE_C ? &a->scale_c : &a->scale_s) = (unsigned)v;
            break;
        case OPT_SET:
            if (strcmp(optarg, "edge") && strcmp(optarg, "server") && strcmp(optarg, "server4") &&
                strcmp(optarg, "all"))
                return bad(err, errn, "--set needs edge, server, server4 or all, not '%s'", optarg);
            a->bench_set = optarg;
            break;
        case OPT_ACC_BYTES:
            if (strcmp(optarg, "2") && strcmp(optarg, "4"))
                return bad(err, errn, "--acc-bytes needs 2 (bf16, the paper) or 4 (int32, the RTL), "
                                      "not '%s'", optarg);
            a->acc_bytes = (unsigned)(optarg[0] - '0');
            break;
        case OPT_CSV:
            if (!*optarg)
                return bad(err, errn, "--csv needs a file name");
            a->csv = optarg;
            break;
        default:
            return bad(err, errn, "unexpected option '%s'", opt);
        }
    }
    if (optind < sub_argc)
        return bad(err, errn, "unexpected argument '%s' for '%s'", sub_argv[optind], cmd);
    if (a->conv && a->topology)
        return bad(err, errn, "--conv and --topology are alternatives: give one");
    if (a->cmd == NPU_CMD_TRAIN && !a->layers && !a->conv && !a->topology)
        return bad(err, errn, "'train' needs --layers D0,D1,..,DL (MLP) or --conv/--topology (CNN)");
    if (a->cmd == NPU_CMD_TRAIN && a->layers && (a->conv || a->topology))
        return bad(err, errn, "'train' takes --layers (MLP) or --conv/--topology (CNN), not both");
    if (a->cmd == NPU_CMD_TRAIN && a->layers && (seen & (B(OPT_DATAFLOW) | B(OPT_SCALE_C) | B(OPT_SCALE_S))))
        return bad(err, errn, "--dataflow/--scale-c/--scale-s apply to conv layers (--conv, --topology)");
    if (a->cmd == NPU_CMD_TRAIN && (a->conv || a->topology) &&
        (seen & (B(OPT_ORDER) | B(OPT_PARTITION) | B(OPT_POLICY) | B(OPT_TILE) | B(OPT_FLEXSA))))
        return bad(err, errn, "--order/--partition/--policy/--tile apply to MLPs (--layers) only");
    if (a->cmd == NPU_CMD_CONV && !a->conv && !a->topology)
        return bad(err, errn, "'conv' needs --conv SPEC or --topology FILE.csv");
    if ((allowed & OPTS_DIMS) && (seen & OPTS_DIMS) != OPTS_DIMS)
        return bad(err, errn, "'%s' needs -m M -n N -k K", cmd);
    if ((seen & (B(OPT_TRACE_START) | B(OPT_TRACE_END))) && !a->trace)
        return bad(err, errn, "--trace-start/--trace-end need --trace FILE.fst");
    if (a->trace_end < a->trace_start)
        return bad(err, errn, "--trace-end is before --trace-start");
    return 0;
}
