/* test_cli_args.c - `npu` argument parsing: commands, options, defaults and every usage error. */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "compile/step/step_res.h"

#define ARGC(a) ((int)(sizeof(a) / sizeof((a)[0])))

static int parse(int argc, const char **argv, npu_args_t *a, char *err)
{
    /* getopt permutes argv: hand it a writable copy */
    char *copy[32];
    for (int i = 0; i < argc; i++)
        copy[i] = (char *)argv[i];
    copy[argc] = NULL;
    return npu_args_parse(argc, copy, "small", a, err, 256);
}

static void bad(int argc, const char **argv, const char *msg_part)
{
    npu_args_t a;
    char err[256];
    cr_assert_eq(parse(argc, argv, &a, err), 2, "expected a usage error for '%s ...'", argv[1] ? argv[1] : "");
    cr_assert(strstr(err, msg_part) != NULL, "message '%s' lacks '%s'", err, msg_part);
}

Test(cli_args, gemm_defaults)
{
    const char *v[] = {"npu", "gemm", "-m", "64", "-n", "32", "-k", "0x10"};
    npu_args_t a;
    char err[256];
    cr_assert_eq(parse(ARGC(v), v, &a, err), 0, "%s", err);
    cr_assert_eq(a.cmd, NPU_CMD_GEMM);
    cr_assert_eq(a.m, 64);
    cr_assert_eq(a.n, 32);
    cr_assert_eq(a.k, 16);
    cr_assert_eq(a.seed, (uint64_t)NPU_ARGS_DEFAULT_SEED);
    cr_assert_eq(a.max_cycles, NPU_ARGS_DEFAULT_MAX_CYCLES);
    cr_assert_eq(a.max_cycles_given, 0);
    /* the timeout follows the work when not given: 64 cycles per full-array cycle, at least the
     * default (AlexNet's conv1 zeropad dW: 1.64G MACs on 256 PEs -> 410M) */
    cr_assert_eq(npu_args_max_cycles(&a, 1000000, 256), NPU_ARGS_DEFAULT_MAX_CYCLES);
    cr_assert_eq(npu_args_max_cycles(&a, 1640957472ull, 256), 1640957472ull / 256 * 64);
    cr_assert_eq(a.dram_bw_set, 0);
    cr_assert_eq(a.dram_latency_set, 0);
    cr_assert_eq(a.stall_pct, 0u);
    cr_assert_null(a.trace);
    cr_assert_eq(a.trace_end, UINT64_MAX);
    cr_assert_eq(a.json | a.quiet | a.trans_a | a.trans_b, 0);
}

Test(cli_args, gemm_all_options)
{
    const char *v[] = {"npu", "gemm", "-m", "7", "-n", "5", "-k", "3", "--seed", "123456789012",
                       "--dram-bw", "12.5", "--dram-latency", "0", "--stall-pct", "25", "--trans-a",
                       "--trans-b", "--trace", "w.fst", "--trace-start", "100", "--trace-end", "200",
                       "--max-cycles", "5000", "--json", "--quiet"};
    npu_args_t a;
    char err[256];
    cr_assert_eq(parse(ARGC(v), v, &a, err), 0, "%s", err);
    cr_assert_eq(a.seed, 123456789012ull);
    cr_assert_float_eq(a.dram_bw, 12.5, 1e-12);
    cr_assert_eq(a.dram_bw_set, 1);
    cr_assert_eq(a.dram_latency, 0u);
    cr_assert_eq(a.dram_latency_set, 1);
    cr_assert_eq(a.stall_pct, 25u);
    cr_assert_eq(a.trans_a, 1);
    cr_assert_eq(a.trans_b, 1);
    cr_assert_str_eq(a.trace, "w.fst");
    cr_assert_eq(a.trace_start, 100u);
    cr_assert_eq(a.trace_end, 200u);
    cr_assert_eq(a.max_cycles, 5000u);
    cr_assert_eq(npu_args_max_cycles(&a, 1640957472ull, 256), 5000u); /* given: as given */
    cr_assert_eq(a.json, 1);
    cr_assert_eq(a.quiet, 1);
}

Test(cli_args, options_in_any_order_and_equals_form)
{
    const char *v[] = {"npu", "gemm", "--json", "-k5", "--seed=9", "-n", "1", "-m", "2"};
    npu_args_t a;
    char err[256];
    cr_assert_eq(parse(ARGC(v), v, &a, err), 0, "%s", err);
    cr_assert_eq(a.m, 2);
    cr_assert_eq(a.n, 1);
    cr_assert_eq(a.k, 5);
    cr_assert_eq(a.seed, 9u);
    /* parsing twice in one process works (getopt state is reset) */
    cr_assert_eq(parse(ARGC(v), v, &a, err), 0, "%s", err);
    cr_assert_eq(a.k, 5);
}

Test(cli_args, disasm_info_help)
{
    const char *d[] = {"npu", "disasm", "-m", "3", "-n", "4", "-k", "5", "--trans-b"};
    const char *i[] = {"npu", "info"};
    const char *h1[] = {"npu", "--help"};
    const char *h2[] = {"npu", "gemm", "-h"};
    const char *h3[] = {"npu", "help"};
    npu_args_t a;
    char err[256];
    cr_assert_eq(parse(ARGC(d), d, &a, err), 0, "%s", err);
    cr_assert_eq(a.cmd, NPU_CMD_DISASM);
    cr_assert_eq(a.trans_b, 1);
    cr_assert_eq(parse(ARGC(i), i, &a, err), 0, "%s", err);
    cr_assert_eq(a.cmd, NPU_CMD_INFO);
    cr_assert_eq(parse(ARGC(h1), h1, &a, err), 0);
    cr_assert_eq(a.cmd, NPU_CMD_HELP);
    cr_assert_eq(parse(ARGC(h2), h2, &a, err), 0);
    cr_assert_eq(a.cmd, NPU_CMD_HELP);
    cr_assert_eq(parse(ARGC(h3), h3, &a, err), 0);
    cr_assert_eq(a.cmd, NPU_CMD_HELP);
}

Test(cli_args, usage_errors)
{
    const char *none[] = {"npu"};
    const char *unk_cmd[] = {"npu", "fly"};
    const char *unk_opt[] = {"npu", "gemm", "-m", "1", "-n", "1", "-k", "1", "--fast"};
    const char *unk_short[] = {"npu", "gemm", "-m", "1", "-n", "1", "-k", "1", "-x"};
    const char *missing_k[] = {"npu", "gemm", "-m", "1", "-n", "1"};
    const char *zero[] = {"npu", "gemm", "-m", "0", "-n", "1", "-k", "1"};
    const char *neg[] = {"npu", "gemm", "-m", "-4", "-n", "1", "-k", "1"};
    const char *nonnum[] = {"npu", "gemm", "-m", "12abc", "-n", "1", "-k", "1"};
    const char *huge[] = {"npu", "gemm", "-m", "99999999999999999999999", "-n", "1", "-k", "1"};
    const char *noval[] = {"npu", "gemm", "-n", "1", "-k", "1", "-m"};
    const char *stall[] = {"npu", "gemm", "-m", "1", "-n", "1", "-k", "1", "--stall-pct", "101"};
    const char *bw[] = {"npu", "gemm", "-m", "1", "-n", "1", "-k", "1", "--dram-bw", "0"};
    const char *bw2[] = {"npu", "gemm", "-m", "1", "-n", "1", "-k", "1", "--dram-bw", "fast"};
    const char *mc[] = {"npu", "gemm", "-m", "1", "-n", "1", "-k", "1", "--max-cycles", "0"};
    const char *seed[] = {"npu", "gemm", "-m", "1", "-n", "1", "-k", "1", "--seed", "-1"};
    const char *tr[] = {"npu", "gemm", "-m", "1", "-n", "1", "-k", "1", "--trace-start", "5"};
    const char *tr2[] = {"npu", "gemm", "-m", "1", "-n", "1", "-k", "1", "--trace", "x.fst", "--trace-start", "9", "--trace-end", "5"};
    const char *extra[] = {"npu", "gemm", "-m", "1", "-n", "1", "-k", "1", "stray"};
    const char *notapply[] = {"npu", "disasm", "-m", "1", "-n", "1", "-k", "1", "--csv", "x"};
    const char *info_m[] = {"npu", "info", "-m", "3"};
    const char *jsonarg[] = {"npu", "gemm", "-m", "1", "-n", "1", "-k", "1", "--json=yes"};
    bad(ARGC(none), none, "missing command");
    bad(ARGC(unk_cmd), unk_cmd, "unknown command 'fly'");
    bad(ARGC(unk_opt), unk_opt, "unknown option '--fast'");
    bad(ARGC(unk_short), unk_short, "unknown option '-x'");
    bad(ARGC(missing_k), missing_k, "needs -m M -n N -k K");
    bad(ARGC(zero), zero, "-m needs a size");
    bad(ARGC(neg), neg, "-m needs a size");
    bad(ARGC(nonnum), nonnum, "'12abc'");
    bad(ARGC(huge), huge, "-m needs a size");
    bad(ARGC(noval), noval, "is missing its value");
    bad(ARGC(stall), stall, "--stall-pct");
    bad(ARGC(bw), bw, "--dram-bw");
    bad(ARGC(bw2), bw2, "--dram-bw");
    bad(ARGC(mc), mc, "--max-cycles");
    bad(ARGC(seed), seed, "--seed");
    bad(ARGC(tr), tr, "need --trace");
    bad(ARGC(tr2), tr2, "before --trace-start");
    bad(ARGC(extra), extra, "unexpected argument 'stray'");
    bad(ARGC(notapply), notapply, "does not apply to 'disasm'");
    bad(ARGC(info_m), info_m, "does not apply to 'info'");
    bad(ARGC(jsonarg), jsonarg, "--json");
}

Test(cli_args, config_option_points_to_the_right_binary)
{
    const char *c1[] = {"npu", "gemm", "-m", "1", "-n", "1", "-k", "1", "--config", "medium"};
    const char *c2[] = {"npu", "--config=tiny", "gemm"};
    bad(ARGC(c1), c1, "build/<config>/npu");
    bad(ARGC(c2), c2, "this binary is 'small'");
}

Test(cli_args, overlap_defaults_and_options)
{
    const char *d[] = {"npu", "overlap", "-m", "256", "-n", "128", "-k", "64"};
    const char *all[] = {"npu", "overlap", "--json", "-m", "8", "-n", "9", "-k", "10", "--seed", "7",
                         "--dram-bw", "3.5", "--dram-latency", "12", "--stall-pct", "5",
                         "--max-cycles", "1000", "--quiet"};
    npu_args_t a;
    char err[256];
    cr_assert_eq(parse(ARGC(d), d, &a, err), 0, "%s", err);
    cr_assert_eq(a.cmd, NPU_CMD_OVERLAP);
    cr_assert_eq(a.m, 256);
    cr_assert_eq(a.n, 128);
    cr_assert_eq(a.k, 64);
    cr_assert_eq(a.seed, (uint64_t)NPU_ARGS_DEFAULT_SEED);
    cr_assert_eq(a.max_cycles, NPU_ARGS_DEFAULT_MAX_CYCLES);
    cr_assert_eq(a.dram_bw_set, 0, "no --dram-bw: the bandwidth is calibrated");
    cr_assert_eq(a.dram_latency_set, 0);
    cr_assert_eq(a.stall_pct, 0u);
    cr_assert_eq(a.json | a.quiet | a.trans_a | a.trans_b, 0);
    cr_assert_null(a.trace);

    cr_assert_eq(parse(ARGC(all), all, &a, err), 0, "%s", err);
    cr_assert_eq(a.cmd, NPU_CMD_OVERLAP);
    cr_assert_eq(a.m, 8);
    cr_assert_eq(a.n, 9);
    cr_assert_eq(a.k, 10);
    cr_assert_eq(a.seed, 7u);
    cr_assert_eq(a.dram_bw_set, 1);
    cr_assert_float_eq(a.dram_bw, 3.5, 1e-12);
    cr_assert_eq(a.dram_latency_set, 1);
    cr_assert_eq(a.dram_latency, 12u);
    cr_assert_eq(a.stall_pct, 5u);
    cr_assert_eq(a.max_cycles, 1000u);
    cr_assert_eq(a.json, 1);
    cr_assert_eq(a.quiet, 1);
}

Test(cli_args, overlap_usage_errors)
{
    const char *missing[] = {"npu", "overlap", "-m", "8", "-k", "8"};
    const char *trans[] = {"npu", "overlap", "-m", "8", "-n", "8", "-k", "8", "--trans-a"};
    const char *transb[] = {"npu", "overlap", "-m", "8", "-n", "8", "-k", "8", "--trans-b"};
    const char *trace[] = {"npu", "overlap", "-m", "8", "-n", "8", "-k", "8", "--trace", "x.fst"};
    const char *bw[] = {"npu", "overlap", "-m", "8", "-n", "8", "-k", "8", "--dram-bw", "-2"};
    const char *stall[] = {"npu", "overlap", "-m", "8", "-n", "8", "-k", "8", "--stall-pct", "200"};
    const char *zero[] = {"npu", "overlap", "-m", "8", "-n", "0", "-k", "8"};
    const char *extra[] = {"npu", "overlap", "-m", "8", "-n", "8", "-k", "8", "now"};
    const char *cfg[] = {"npu", "overlap", "-m", "8", "-n", "8", "-k", "8", "--config=tiny"};
    const char *unk[] = {"npu", "overlaps"};
    bad(ARGC(missing), missing, "'overlap' needs -m M -n N -k K");
    bad(ARGC(trans), trans, "does not apply to 'overlap'");
    bad(ARGC(transb), transb, "does not apply to 'overlap'");
    bad(ARGC(trace), trace, "does not apply to 'overlap'");
    bad(ARGC(bw), bw, "--dram-bw");
    bad(ARGC(stall), stall, "--stall-pct");
    bad(ARGC(zero), zero, "-n needs a size");
    bad(ARGC(extra), extra, "unexpected argument 'now'");
    bad(ARGC(cfg), cfg, "build/<config>/npu");
    bad(ARGC(unk), unk, "expected gemm, overlap, disasm, run, slice, train, train-bench, conv, flexsa-report, calibrate or info");
}

Test(cli_args, gemm_csv_and_flexsa)
{
    const char *v[] = {"npu", "gemm", "-m", "8", "-n", "5", "-k", "5", "--csv", "c.csv", "--flexsa"};
    const char *d[] = {"npu", "gemm", "-m", "8", "-n", "5", "-k", "5"};
    npu_args_t a;
    char err[256];
    cr_assert_eq(parse(ARGC(v), v, &a, err), 0, "%s", err);
    cr_assert_str_eq(a.csv, "c.csv");
    cr_assert_eq(a.policy, NPU_POLICY_ARG_FLEXSA);
    cr_assert_eq(parse(ARGC(d), d, &a, err), 0, "%s", err);
    cr_assert_null(a.csv);
    cr_assert_eq(a.policy, NPU_POLICY_ARG_1G1C, "FW only unless asked");
    const char *e[] = {"npu", "gemm", "-m", "8", "-n", "5", "-k", "5", "--csv", ""};
    bad(ARGC(e), e, "--csv");
    const char *o[] = {"npu", "overlap", "-m", "8", "-n", "5", "-k", "5", "--flexsa"};
    cr_assert_eq(parse(ARGC(o), o, &a, err), 2, "--flexsa is a gemm option");
}

Test(cli_args, policy_and_flexsa_report)
{
    npu_args_t a;
    char err[256];
    const char *p4[] = {"npu", "gemm", "-m", "8", "-n", "5", "-k", "5", "--policy", "1g4c"};
    cr_assert_eq(parse(ARGC(p4), p4, &a, err), 0, "%s", err);
    cr_assert_eq(a.policy, NPU_POLICY_ARG_1G4C);
    const char *p1[] = {"npu", "disasm", "-m", "8", "-n", "5", "-k", "5", "--policy", "1g1c"};
    cr_assert_eq(parse(ARGC(p1), p1, &a, err), 0, "%s", err);
    cr_assert_eq(a.policy, NPU_POLICY_ARG_1G1C);
    const char *px[] = {"npu", "gemm", "-m", "8", "-n", "5", "-k", "5", "--policy", "2g2c"};
    bad(ARGC(px), px, "--policy needs 1g1c, 1g4c or flexsa");
    const char *r[] = {"npu", "flexsa-report", "--seed", "3", "--limit", "7", "--batch", "4",
                       "--csv", "r.csv"};
    cr_assert_eq(parse(ARGC(r), r, &a, err), 0, "%s", err);
    cr_assert_eq(a.cmd, NPU_CMD_FLEXSA_REPORT);
    cr_assert_eq(a.limit, 7u);
    cr_assert_eq(a.batch, 4u);
    cr_assert_eq(a.seed, 3u);
    const char *rb[] = {"npu", "flexsa-report", "--batch", "0"};
    bad(ARGC(rb), rb, "--batch needs a mini-batch");
    const char *rd[] = {"npu", "flexsa-report", "-m", "4"};
    bad(ARGC(rd), rd, "does not apply to 'flexsa-report'");
}

Test(cli_args, train_options)
{
    npu_args_t a;
    char err[256];
    const char *v[] = {"npu", "train", "--layers", "64,32,10", "--batch", "8", "--order", "seq",
                       "--partition", "none", "--policy", "flexsa", "--stall-pct", "5"};
    cr_assert_eq(parse(ARGC(v), v, &a, err), 0, "%s", err);
    cr_assert_eq(a.cmd, NPU_CMD_TRAIN);
    cr_assert_str_eq(a.layers, "64,32,10");
    cr_assert_str_eq(a.order, "seq");
    cr_assert_str_eq(a.partition, "none");
    cr_assert_eq(a.batch, 8u);
    cr_assert_eq(a.policy, NPU_POLICY_ARG_FLEXSA);
    const char *nol[] = {"npu", "train", "--batch", "8"};
    bad(ARGC(nol), nol, "needs --layers");
    const char *bo[] = {"npu", "train", "--layers", "4,4", "--order", "fast"};
    bad(ARGC(bo), bo, "--order needs seq, interleave");
    const char *bp[] = {"npu", "train", "--layers", "4,4", "--partition", "x"};
    bad(ARGC(bp), bp, "--partition needs none, m, n, k, mseq, nseq, kseq or knn");
    const char *dm[] = {"npu", "train", "--layers", "4,4", "-m", "4"};
    bad(ARGC(dm), dm, "does not apply to 'train'");
}

Test(cli_args, conv_and_train_conv_options)
{
    const char *v[] = {"npu", "conv", "--conv", "16,57,57,16,3,3,2,0,1", "--kernel", "dx",
                       "--dataflow", "both", "--scale-c", "2", "--scale-s", "3", "--batch", "2",
                       "--csv", "c.csv", "--quiet"};
    const char *w[] = {"npu", "train", "--topology", "t.csv", "--dataflow", "zeropad"};
    npu_args_t a;
    char err[256];
    cr_assert_eq(parse(ARGC(v), v, &a, err), 0, "%s", err);
    cr_assert_eq(a.cmd, NPU_CMD_CONV);
    cr_assert_str_eq(a.conv, "16,57,57,16,3,3,2,0,1");
    cr_assert_str_eq(a.kernel, "dx");
    cr_assert_str_eq(a.dataflow, "both");
    cr_assert(a.scale_c == 2 && a.scale_s == 3 && a.batch == 2 && a.quiet);
    cr_assert_eq(parse(ARGC(w), w, &a, err), 0, "%s", err);
    cr_assert_eq(a.cmd, NPU_CMD_TRAIN);
    cr_assert_str_eq(a.topology, "t.csv");
    cr_assert_null(a.layers);

    const char *b1[] = {"npu", "conv"};
    bad(ARGC(b1), b1, "'conv' needs --conv SPEC or --topology");
    const char *b2[] = {"npu", "conv", "--conv", "1,8,8,1,3,3,1,0,1", "--kernel", "back"};
    bad(ARGC(b2), b2, "--kernel needs fwd, dx, dw, bwd or all");
    const char *b3[] = {"npu", "conv", "--conv", "1,8,8,1,3,3,1,0,1", "--dataflow", "tpu"};
    bad(ARGC(b3), b3, "--dataflow needs zeropad, ecoflow or both");
    const char *b4[] = {"npu", "conv", "--conv", "x", "--topology", "t.csv"};
    bad(ARGC(b4), b4, "alternatives");
    const char *b5[] = {"npu", "conv", "--conv", "x", "--scale-c", "0"};
    bad(ARGC(b5), b5, "--scale-c needs a divisor");
    const char *b6[] = {"npu", "train", "--layers", "8,8", "--conv", "x"};
    bad(ARGC(b6), b6, "not both");
    const char *b7[] = {"npu", "train", "--layers", "8,8", "--dataflow", "ecoflow"};
    bad(ARGC(b7), b7, "apply to conv layers");
    const char *b8[] = {"npu", "train", "--conv", "1,8,8,1,3,3,1,0,1", "--order", "interleave"};
    bad(ARGC(b8), b8, "apply to MLPs");
    const char *b9[] = {"npu", "conv", "--conv", "1,8,8,1,3,3,1,0,1", "--order", "seq"};
    bad(ARGC(b9), b9, "");
    const char *b10[] = {"npu", "train"};
    bad(ARGC(b10), b10, "--conv/--topology");
}

Test(cli_args, gemm_topology_options)
{
    const char *v[] = {"npu", "gemm", "--topology", "g.csv", "--batch", "4", "--policy", "flexsa",
                       "--csv", "t.csv", "--max-cycles", "1000", "--quiet"};
    npu_args_t a;
    char err[256];
    cr_assert_eq(parse(ARGC(v), v, &a, err), 0, "%s", err);
    cr_assert_eq(a.cmd, NPU_CMD_GEMM);
    cr_assert_str_eq(a.topology, "g.csv");
    cr_assert(a.batch == 4 && a.m == 0 && a.policy == NPU_POLICY_ARG_FLEXSA && a.quiet);

    const char *b1[] = {"npu", "gemm", "--topology", "g.csv", "-m", "4"};
    bad(ARGC(b1), b1, "--topology and -m/-n/-k are alternatives");
    const char *j[] = {"npu", "gemm", "--topology", "g.csv", "--json"};
    cr_assert_eq(parse(ARGC(j), j, &a, err), 0, "--json applies to every command: %s", err);
    cr_assert(a.json);
    const char *b3[] = {"npu", "gemm", "--topology", "g.csv", "--trace", "t.fst"};
    bad(ARGC(b3), b3, "--trace, --a, --b, --out and --save apply to one GEMM");
    const char *sp[] = {"npu", "gemm", "--topology", "g.csv", "--save-program", "p.npuprog"};
    cr_assert_eq(parse(ARGC(sp), sp, &a, err), 0, "--save-program saves every layer: %s", err);
    const char *sc[] = {"npu", "conv", "--conv", "4,4,4,4,3,3,1,1,1", "--kernel", "all",
                        "--save-program", "p.npuprog"};
    cr_assert_eq(parse(ARGC(sc), sc, &a, err), 0, "--save-program saves every kernel: %s", err);
    const char *st[] = {"npu", "train", "--layers", "8,8", "--save-program", "p.npuprog"};
    cr_assert_eq(parse(ARGC(st), st, &a, err), 0, "--save-program saves the step: %s", err);
    const char *t1[] = {"npu", "gemm", "--a", "A.npy", "--b", "B.npy", "--out", "C.npy", "--save", "d"};
    cr_assert_eq(parse(ARGC(t1), t1, &a, err), 0, "--a/--b give M, N, K: %s", err);
    cr_assert(!strcmp(a.a_file, "A.npy") && !strcmp(a.b_file, "B.npy") && !strcmp(a.out, "C.npy") &&
              !strcmp(a.save, "d") && a.m == 0);
    const char *t2[] = {"npu", "gemm", "--a", "A.npy", "-m", "4", "-n", "4", "-k", "4"};
    bad(ARGC(t2), t2, "--a and --b go together");
    const char *t3[] = {"npu", "gemm", "--topology", "g.csv", "--a", "A.npy", "--b", "B.npy"};
    bad(ARGC(t3), t3, "--a, --b, --out and --save apply to one GEMM");
    const char *t4[] = {"npu", "overlap", "-m", "4", "-n", "4", "-k", "4", "--save", "d"};
    bad(ARGC(t4), t4, "option '--save' does not apply to 'overlap'");
    const char *t5[] = {"npu", "gemm", "--a", "", "--b", "B.npy"};
    bad(ARGC(t5), t5, "--a needs a .npy file");
    const char *c1[] = {"npu", "conv", "--conv", "4,4,4,4,3,3,1,1,1", "--kernel", "dx", "--dataflow",
                        "ecoflow", "--dy", "d.npy", "--w", "w.npy", "--out", "o.npy"};
    cr_assert_eq(parse(ARGC(c1), c1, &a, err), 0, "%s", err);
    cr_assert(!strcmp(a.dy_file, "d.npy") && !strcmp(a.w_file, "w.npy") && !a.x_file);
    const char *c2[] = {"npu", "conv", "--conv", "4,4,4,4,3,3,1,1,1", "--x", "x.npy"};
    bad(ARGC(c2), c2, "need one kernel: --kernel fwd, dx or dw");
    const char *c3[] = {"npu", "conv", "--conv", "4,4,4,4,3,3,1,1,1", "--kernel", "dw", "--x", "x.npy"};
    bad(ARGC(c3), c3, "need one dataflow");
    const char *c4[] = {"npu", "conv", "--conv", "4,4,4,4,3,3,1,1,1", "--kernel", "fwd", "--dy", "d"};
    bad(ARGC(c4), c4, "--dy does not apply to --kernel fwd");
    const char *c5[] = {"npu", "conv", "--topology", "t.csv", "--kernel", "fwd", "--x", "x.npy"};
    bad(ARGC(c5), c5, "need one layer (--conv SPEC)");
    const char *c6[] = {"npu", "train", "--conv", "4,4,4,4,3,3,1,1,1", "--x", "x.npy"};
    bad(ARGC(c6), c6, "--x/--w/--dy/--save of 'train' apply to MLPs (--layers)");
    const char *c7[] = {"npu", "train", "--layers", "4,8,4", "--x", "x.npy", "--w", "a.npy,b.npy",
                        "--dy", "d.npy", "--save", "dir"};
    cr_assert_eq(parse(ARGC(c7), c7, &a, err), 0, "%s", err);
    cr_assert(!strcmp(a.x_file, "x.npy") && !strcmp(a.w_file, "a.npy,b.npy") &&
              !strcmp(a.dy_file, "d.npy") && !strcmp(a.save, "dir"));
    const char *r1[] = {"npu", "run", "p.npuprog", "--json", "--max-cycles", "99"};
    cr_assert_eq(parse(ARGC(r1), r1, &a, err), 0, "%s", err);
    cr_assert(a.cmd == NPU_CMD_RUN && !strcmp(a.prog_file, "p.npuprog") && a.json &&
              a.max_cycles == 99);
    const char *r2[] = {"npu", "run"};
    bad(ARGC(r2), r2, "'run' needs a saved program file");
    const char *r3[] = {"npu", "run", "a", "b"};
    bad(ARGC(r3), r3, "unexpected argument 'b'");
    const char *r4[] = {"npu", "run", "a", "--seed", "3"};
    bad(ARGC(r4), r4, "option '--seed' does not apply to 'run'");
    const char *d1[] = {"npu", "disasm", "p.npuprog"};
    cr_assert_eq(parse(ARGC(d1), d1, &a, err), 0, "%s", err);
    cr_assert(a.cmd == NPU_CMD_DISASM && !strcmp(a.prog_file, "p.npuprog"));
    const char *d2[] = {"npu", "disasm", "p.npuprog", "-m", "4"};
    bad(ARGC(d2), d2, "'disasm FILE' takes no other option");
    const char *b4[] = {"npu", "gemm", "-m", "4", "-n", "4", "-k", "4", "--batch", "2"};
    bad(ARGC(b4), b4, "--batch applies to 'gemm --topology'");
    const char *b5[] = {"npu", "gemm", "--topology", ""};
    bad(ARGC(b5), b5, "--topology needs a SCALE-Sim topology CSV file");
    const char *b6[] = {"npu", "gemm", "--topology", "g.csv", "--scale-c", "2"};
    bad(ARGC(b6), b6, "option '--scale-c' does not apply to 'gemm'");
    const char *b7[] = {"npu", "overlap", "--topology", "g.csv"};
    bad(ARGC(b7), b7, "option '--topology' does not apply to 'overlap'");
}

Test(cli_args, train_bench_options)
{
    npu_args_t a;
    char err[256];
    const char *v[] = {"npu", "train-bench", "--set", "server4", "--acc-bytes", "4", "--csv",
                       "b.csv", "--quiet"};
    cr_assert_eq(parse(ARGC(v), v, &a, err), 0, "%s", err);
    cr_assert_eq(a.cmd, NPU_CMD_TRAIN_BENCH);
    cr_assert_str_eq(a.bench_set, "server4");
    cr_assert_eq(a.acc_bytes, 4u);
    cr_assert_str_eq(a.csv, "b.csv");
    cr_assert_eq(a.quiet, 1);
    const char *d[] = {"npu", "train-bench"};
    cr_assert_eq(parse(ARGC(d), d, &a, err), 0, "%s", err);
    cr_assert_null(a.bench_set);
    cr_assert_eq(a.acc_bytes, 0u);
    const char *bs[] = {"npu", "train-bench", "--set", "cloud"};
    bad(ARGC(bs), bs, "--set needs edge, server, server4 or all");
    const char *ba[] = {"npu", "train-bench", "--acc-bytes", "3"};
    bad(ARGC(ba), ba, "--acc-bytes needs 2");
    /* the message names the option, not its value */
    const char *bm[] = {"npu", "train-bench", "-m", "4"};
    bad(ARGC(bm), bm, "option '-m' does not apply to 'train-bench'");
    const char *bl[] = {"npu", "gemm", "-m", "1", "-n", "1", "-k", "1", "--set", "edge"};
    bad(ARGC(bl), bl, "option '--set' does not apply to 'gemm'");
}

Test(cli_args, command_help_and_version)
{
    const char *g[] = {"npu", "gemm", "--help"}, *t[] = {"npu", "help", "train"};
    const char *o[] = {"npu", "overlap", "-m", "3", "-h"}, *v[] = {"npu", "--version"};
    const char *hx[] = {"npu", "help", "gemmm"}, *hy[] = {"npu", "help", "gemm", "x"};
    const char *vx[] = {"npu", "--version", "gemm"};
    npu_args_t a;
    char err[256];
    cr_assert_eq(parse(ARGC(g), g, &a, err), 0, "%s", err);
    cr_assert(a.cmd == NPU_CMD_HELP && a.help_cmd == NPU_CMD_GEMM);
    cr_assert_eq(parse(ARGC(t), t, &a, err), 0, "%s", err);
    cr_assert(a.cmd == NPU_CMD_HELP && a.help_cmd == NPU_CMD_TRAIN);
    cr_assert_eq(parse(ARGC(o), o, &a, err), 0, "%s", err);
    cr_assert(a.cmd == NPU_CMD_HELP && a.help_cmd == NPU_CMD_OVERLAP);
    cr_assert_eq(parse(ARGC(v), v, &a, err), 0, "%s", err);
    cr_assert_eq(a.cmd, NPU_CMD_VERSION);
    bad(ARGC(hx), hx, "unknown command 'gemmm' for 'help'");
    bad(ARGC(hy), hy, "unexpected argument 'x' after 'help gemm'");
    bad(ARGC(vx), vx, "unexpected argument 'gemm' after '--version'");
}

/* getopt_long takes unique prefixes: a prefix of several options is ambiguous (and named with
 * the candidates), not unknown; a missing value names the option, spelt out */
Test(cli_args, ambiguous_unknown_missing)
{
    const char *s[] = {"npu", "gemm", "-m", "4", "--s", "3"};
    const char *se[] = {"npu", "train-bench", "--se=edge"};
    const char *u[] = {"npu", "gemm", "--sed", "3"};
    const char *mv[] = {"npu", "gemm", "-m", "4", "--max"};
    const char *ok[] = {"npu", "gemm", "-m", "4", "-n", "4", "-k", "4", "--max", "9"};
    npu_args_t a;
    char err[256];
    bad(ARGC(s), s, "option '--s' is ambiguous for 'gemm': --seed, --stall-pct, --slicing");
    bad(ARGC(s), s, "--scale-s, --set, --save, --save-program");
    bad(ARGC(se), se, "option '--se' is ambiguous for 'train-bench': --seed, --set");
    bad(ARGC(u), u, "unknown option '--sed' for 'gemm'");
    bad(ARGC(mv), mv, "option '--max-cycles' is missing its value");
    cr_assert_eq(parse(ARGC(ok), ok, &a, err), 0, "%s", err);
    cr_assert_eq(a.max_cycles, 9u);
}

/* `npu CMD --help` lists an option exactly when CMD accepts it */
Test(cli_args, help_lists_what_is_accepted)
{
    static const char *cmds[] = {"gemm", "overlap", "disasm", "slice", "train", "train-bench",
                                 "conv", "flexsa-report", "calibrate", "info", "run"};
    for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
        const char *h[] = {"npu", "help", cmds[c]};
        npu_args_t a;
        char err[256], *text = NULL, line[64];
        size_t len = 0, listed = 0;
        FILE *f = open_memstream(&text, &len);
        cr_assert_eq(parse(ARGC(h), h, &a, err), 0, "%s", err);
        npu_args_cmd_usage(f, a.help_cmd);
        fclose(f);
        for (size_t i = 0;; i++) {
            const char *ex, *opt = npu_args_option(i, &ex);
            const char *v[] = {"npu", cmds[c], opt, ex};
            int on_list, accepted;
            if (!opt)
                break;
            snprintf(line, sizeof line, "\n  %s%s", opt, ex ? " " : "");
            on_list = strstr(text, line) != NULL ||
                      (!ex && (snprintf(line, sizeof line, "\n  %s\n", opt), strstr(text, line)));
            parse(ex ? 4 : 3, v, &a, err);
            accepted = strstr(err, "does not apply") == NULL && strstr(err, "unknown") == NULL;
            cr_assert_eq(on_list, accepted, "npu %s --help %s %s, but parsing gives '%s'", cmds[c],
                         on_list ? "lists" : "omits", opt, err);
            listed += (size_t)on_list;
        }
        cr_assert_gt(listed, 0u, "npu %s --help lists no option", cmds[c]);
        free(text);
    }
}

/* --no-conv-reuse: its words, the residency flags they give (the estimator's and the step's), and
 * where it applies */
Test(cli_args, no_conv_reuse)
{
    static const char *words[] = {"y", "x", "x16", "both", "dy", "dx", "xt", "head", "all"};
    static const int flags[] = {NPU_RES_NO_CONV_Y, NPU_RES_NO_CONV_X, NPU_RES_NO_BATCH_X,
                                NPU_RES_NO_CONV_Y | NPU_RES_NO_CONV_X, NPU_RES_NO_CONV_DY, NPU_RES_NO_CONV_DX,
                                NPU_RES_NO_XT, NPU_RES_NO_RESHAPE,
                                NPU_RES_NO_CONV_Y | NPU_RES_NO_CONV_X | NPU_RES_NO_CONV_DY | NPU_RES_NO_CONV_DX |
                                    NPU_RES_NO_XT | NPU_RES_NO_BATCH_X | NPU_RES_NO_RESHAPE};
    const int keep = NPU_RES_PREFETCH | NPU_RES_LOOKAHEAD;
    npu_args_t a;
    char err[256];
    const char *plain[] = {"npu", "estimate", "--model", "cnn:c4,fc10", "--plan", "step", "--resident-banks", "1"};
    cr_assert_eq(parse(ARGC(plain), plain, &a, err), 0, "%s", err);
    cr_assert_eq(npu_cli_res_overlap(&a), keep);
    for (int i = 0; i < 9; i++) {
        const char *v[] = {"npu", "sweep", "--model", "cnn:c4,fc10", "--plan", "step", "--resident-banks", "1",
                           "--no-prefetch", "--no-conv-reuse", words[i]};
        cr_assert_eq(parse(ARGC(v), v, &a, err), 0, "%s", err);
        cr_assert_eq(npu_cli_res_overlap(&a), NPU_RES_LOOKAHEAD | flags[i], "--no-conv-reuse %s", words[i]);
    }
    const char *b1[] = {"npu", "estimate", "--model", "cnn:c4,fc10", "--plan", "step", "--resident-banks", "1",
                        "--no-conv-reuse", "z"};
    const char *b2[] = {"npu", "sweep", "--model", "cnn:c4,fc10", "--plan", "step", "--no-conv-reuse", "y"};
    const char *b3[] = {"npu", "sweep", "--model", "cnn:c4,fc10", "--resident-banks", "1", "--no-conv-reuse", "y"};
    const char *b4[] = {"npu", "gemm", "-m", "4", "-n", "4", "-k", "4", "--no-conv-reuse", "y"};
    bad(ARGC(b1), b1, "--no-conv-reuse needs y, x, x16, both, dy, dx, xt, head or all, not 'z'");
    bad(ARGC(b2), b2, "--no-conv-reuse, --bypass and --objective apply with --resident-banks");
    bad(ARGC(b3), b3, "apply to 'sweep --plan step'");
    bad(ARGC(b4), b4, "does not apply");
}

/* --bypass: auto (the default: as the objective chooses, neither flag), on and off; --objective
 * traffic; and where they apply */
Test(cli_args, bypass)
{
    static const char *words[] = {"auto", "on", "off"};
    static const int flags[] = {0, NPU_RES_BYPASS, NPU_RES_NO_BYPASS};
    npu_args_t a;
    char err[256];
    for (int i = 0; i < 3; i++) {
        const char *v[] = {"npu", "estimate", "--model", "mlp:8,8,4", "--plan", "step", "--resident-banks", "1",
                           "--bypass", words[i]};
        cr_assert_eq(parse(ARGC(v), v, &a, err), 0, "%s", err);
        cr_assert_eq(npu_cli_res_overlap(&a), NPU_RES_PREFETCH | NPU_RES_LOOKAHEAD | flags[i], "--bypass %s", words[i]);
    }
    const char *o[] = {"npu", "estimate", "--model", "mlp:8,8,4", "--plan", "step", "--resident-banks", "1",
                       "--objective", "traffic"};
    cr_assert_eq(parse(ARGC(o), o, &a, err), 0, "%s", err);
    cr_assert_eq(npu_cli_res_overlap(&a), NPU_RES_PREFETCH | NPU_RES_LOOKAHEAD | NPU_RES_BY_TRAFFIC);
    const char *b4[] = {"npu", "estimate", "--model", "mlp:8,8,4", "--plan", "step", "--resident-banks", "1",
                        "--objective", "bytes"};
    bad(ARGC(b4), b4, "--objective needs cycles or traffic, not 'bytes'");
    const char *b1[] = {"npu", "estimate", "--model", "mlp:8,8,4", "--plan", "step", "--resident-banks", "1",
                        "--bypass", "yes"};
    const char *b2[] = {"npu", "sweep", "--model", "mlp:8,8,4", "--plan", "step", "--bypass", "on"};
    const char *b3[] = {"npu", "gemm", "-m", "4", "-n", "4", "-k", "4", "--bypass", "on"};
    bad(ARGC(b1), b1, "--bypass needs auto, on or off, not 'yes'");
    bad(ARGC(b2), b2, "--bypass and --objective apply with --resident-banks");
    bad(ARGC(b3), b3, "does not apply");
}
