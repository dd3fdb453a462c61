/* test_conv_split.c - layers cut into parts over filter and channel ranges (sw/compile/conv/
 * conv_split.h) on the C ISA model: bit-exact against the golden model with every counter, the
 * program's DRAM bytes equal to the split's, the tokens at every queue depth (the barriers between
 * parts), the choice of parts, and every layer of the shipped conv topologies planned at small. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/conv/conv_split.h"
#include "conv_test_layer.h"
#include "fake_sim.h"
#include "model/topology.h"
#include "npu_funcsim.h"
#include "prog/prog_expect.h"
#include "queue_machine.h"
#include "run/conv_run.h"
#include "run/runtime.h"
#include "test_cfgs.h"

/* A config whose SPM is cut to bank_words x 4 words, so that small layers need parts. */
static npu_cfg_t small_spm(int S, int bank_words)
{
    npu_cfg_t c = test_cfg(S);
    c.spm_bank_words = bank_words;
    return c;
}

/* The split's program on the abstract queue machine at depths 1..8 (no deadlock, l2e and e2s
 * balanced, no counter past 5) and its DRAM bytes and MACs against the split's. */
static void check_split_program(const npu_cfg_t *cfg, const npu_conv_split_t *s, const char *what)
{
    npu_conv_addrs_t a = {1u << 20, 2u << 20, 3u << 20, 4u << 20};
    npu_prog_t prog;
    npu_prog_expect_t e;
    char msg[256];
    npu_prog_init(&prog);
    cr_assert_eq(npu_conv_split_emit(cfg, s, &a, &prog, msg, sizeof msg), 0, "%s: %s", what, msg);
    npu_prog_expect(cfg, prog.insn, prog.n, &e);
    for (int t = 1; t < NPU_NUM_TAGS; t++) {
        cr_assert_eq(e.rd_bytes[t], s->plan_rd[t], "%s: tag %d read %llu, split %llu", what, t,
                     (unsigned long long)e.rd_bytes[t], (unsigned long long)s->plan_rd[t]);
        cr_assert_eq(e.wr_bytes[t], s->plan_wr[t], "%s: tag %d written", what, t);
    }
    {
        char why[200];
        cr_assert_eq(queue_machine_check_depths(prog.insn, prog.n, 5, why, sizeof why), 0, "%s: %s", what, why);
    }
    npu_prog_free(&prog);
}

/* One kernel x dataflow of c split, on the fake model with random timing: PASS, measured DRAM
 * bytes = the split's. Returns the number of parts. */
static int split_check(const npu_cfg_t *cfg, const npu_conv_t *c, int k, int df, uint64_t seed)
{
    npu_conv_split_t s;
    npu_conv_report_t r;
    char msg[256], ls[96], what[200];
    npu_conv_str(c, ls, sizeof ls);
    snprintf(what, sizeof what, "S=%d spm %d %s %s %s", cfg->s, npu_cfg_spm_words(cfg), ls,
             npu_conv_kernel_name(k), npu_conv_dataflow_name(df));
    cr_assert_eq(npu_conv_split(cfg, c, k, df, NULL, &s, msg, sizeof msg), 0, "%s: %s", what, msg);
    int parts = s.parts;
    check_split_program(cfg, &s, what);
    npu_conv_split_free(&s);
    npu_sim_t *sim = open_fake(cfg, 200, seed);
    int rc = npu_conv_run(cfg, sim, c, k, df, seed, 100000000, &r);
    npu_sim_close(sim);
    cr_assert_eq(rc, NPU_GEMM_PASS, "%s (%d parts): %s", what, parts, r.msg);
    cr_assert_eq(r.parts, parts);
    cr_assert_eq(r.dram_rd_bytes, r.plan_rd_bytes, "%s: read %llu, split %llu", what,
                 (unsigned long long)r.dram_rd_bytes, (unsigned long long)r.plan_rd_bytes);
    cr_assert_eq(r.dram_wr_bytes, r.plan_wr_bytes, "%s: written", what);
    return parts;
}

/* Random layers with many channels on a cut SPM: every kernel x dataflow; most need parts, and
 * some split a reduction (partial sums) and some are depthwise. */
static void random_split_layers(int S, int bank_words, uint64_t seed, int count)
{
    uint64_t x = seed;
    npu_cfg_t cfg = small_spm(S, bank_words);
    int split = 0, runs = 0;
    for (int i = 0; i < count; i++) {
        int KH = 1 + (int)(test_rand(&x) % 4), KW = 1 + (int)(test_rand(&x) % 4);
        int s = 1 + (int)(test_rand(&x) % 3), p = (int)(test_rand(&x) % 2);
        int H = KH + (int)(test_rand(&x) % 6), W = KW + (int)(test_rand(&x) % 6);
        int C = 1 + (int)(test_rand(&x) % (uint64_t)(16 * S)), F = 1 + (int)(test_rand(&x) % (uint64_t)(16 * S));
        npu_conv_t c = conv_layer_of(1 + (int)(test_rand(&x) % 2), C, H, W, F, KH, KW, s, p, 1);
        if (i % 5 == 4) {
            c.depthwise = 1;
            c.F = c.C;
        }
        for (int k = NPU_CONV_FWD; k <= NPU_CONV_DW; k++)
            for (int df = NPU_CONV_ZEROPAD; df <= NPU_CONV_ECOFLOW; df++) {
                if (k == NPU_CONV_FWD && df == NPU_CONV_ECOFLOW)
                    continue;
                split += split_check(&cfg, &c, k, df, seed * 1000 + (uint64_t)(10 * i + 3 * k + df)) > 1;
                runs++;
            }
    }
    cr_assert_geq(split, runs / 2, "only %d of %d runs needed parts: the test lost its purpose", split, runs);
}

Test(conv_split, random_s2) { random_split_layers(2, 128, 41, 12); }
Test(conv_split, random_s8) { random_split_layers(8, 128, 42, 6); }

/* A layer that plans whole is one part, and its program is the plan's. */
Test(conv_split, whole_layer_is_its_plan)
{
    npu_cfg_t cfg = test_cfg(8);
    npu_conv_t c = conv_layer_of(1, 32, 29, 29, 32, 3, 3, 2, 1, 1);
    npu_conv_addrs_t a = {1u << 20, 2u << 20, 3u << 20, 4u << 20};
    for (int k = NPU_CONV_FWD; k <= NPU_CONV_DW; k++) {
        npu_conv_split_t s;
        npu_conv_plan_t p;
        npu_prog_t p1, p2;
        char msg[256];
        cr_assert_eq(npu_conv_split(&cfg, &c, k, NPU_CONV_ECOFLOW, NULL, &s, msg, sizeof msg), 0, "%s", msg);
        cr_assert_eq(npu_conv_plan(&cfg, &c, k, NPU_CONV_ECOFLOW, NULL, &p, msg, sizeof msg), 0, "%s", msg);
        cr_assert_eq(s.parts, 1);
        npu_prog_init(&p1);
        npu_prog_init(&p2);
        cr_assert_eq(npu_conv_split_emit(&cfg, &s, &a, &p1, msg, sizeof msg), 0, "%s", msg);
        cr_assert_eq(npu_conv_emit(&cfg, &p, &a, &p2, msg, sizeof msg), 0, "%s", msg);
        cr_assert_eq(p1.n, p2.n);
        cr_assert(!memcmp(p1.insn, p2.insn, p1.n * sizeof *p1.insn));
        npu_prog_free(&p1);
        npu_prog_free(&p2);
        npu_conv_split_free(&s);
    }
}

/* The part ranges: balanced 2S-channel blocks, reduction innermost, partial sums after the first
 * part of each output range, origins and sub-layers covering the channels exactly once. */
Test(conv_split, parts_cover_the_layer)
{
    npu_cfg_t cfg = small_spm(2, 256);
    npu_conv_t c = conv_layer_of(1, 30, 6, 6, 26, 3, 3, 1, 1, 1);
    for (int k = NPU_CONV_FWD; k <= NPU_CONV_DW; k++) {
        npu_conv_split_t s;
        char msg[256];
        static unsigned char seen[64][64];
        memset(seen, 0, sizeof seen);
        cr_assert_eq(npu_conv_split(&cfg, &c, k, NPU_CONV_ECOFLOW, NULL, &s, msg, sizeof msg), 0, "%s", msg);
        cr_assert_gt(s.parts, 1, "kernel %d plans whole: the test lost its purpose", k);
        for (int i = 0; i < s.parts; i++) {
            int f0, c0;
            npu_conv_split_origin(&s, i, &f0, &c0);
            cr_assert_eq(f0 % 4, 0);
            cr_assert_eq(c0 % 4, 0);
            for (int f = f0; f < f0 + s.part[i].c.F; f++)
                for (int ch = c0; ch < c0 + s.part[i].c.C; ch++)
                    seen[f][ch]++;
            /* fwd: channel ranges reduce; dX: filter ranges; dW: none */
            int red_first = k == NPU_CONV_FWD ? c0 == 0 : k == NPU_CONV_DX ? f0 == 0 : 1;
            cr_assert_eq(s.part[i].acc, !red_first, "kernel %d part %d", k, i);
        }
        for (int f = 0; f < 64; f++)
            for (int ch = 0; ch < 64; ch++)
                cr_assert_eq(seen[f][ch], f < c.F && ch < c.C, "kernel %d (f %d, c %d)", k, f, ch);
        npu_conv_split_free(&s);
    }
}

/* Every layer of the shipped conv topologies plans at config small in fwd, dX and dW (fwd and dX
 * rows too long for the OBUF or the SPM in column ranges: YOLO-tiny's first dX, 416-pixel rows). */
Test(conv_split, every_workload_layer_plans)
{
    static const char *nets[] = {"Resnet50", "alexnet", "mobilenet", "yolo_tiny"};
    static npu_topology_t t;
    npu_cfg_t cfg = test_cfg(8);
    int ok = 0, refused = 0;
    cfg.dram_addr_bits = 32;
    for (size_t n = 0; n < sizeof nets / sizeof *nets; n++) {
        char path[160], msg[512];
        snprintf(path, sizeof path, "tests/topologies/scalesim/%s.csv", nets[n]);
        cr_assert_eq(npu_topo_load(path, 1, &t, msg, sizeof msg), 0, "%s: %s", path, msg);
        for (int i = 0; i < t.n; i++)
            for (int k = NPU_CONV_FWD; k <= NPU_CONV_DW; k++) {
                npu_conv_split_t s;
                if (npu_conv_split(&cfg, &t.layer[i].conv, k, NPU_CONV_ECOFLOW, NULL, &s, msg, sizeof msg) == 0) {
                    ok++;
                    npu_conv_split_free(&s);
                } else {
                    cr_assert(strstr(msg, "does not fit") != NULL, "%s %s: %s", nets[n], t.layer[i].name, msg);
                    refused++;
                }
            }
    }
    cr_assert_eq(ok, 285, "%d layer kernels plan, %d refused", ok, refused);
    cr_assert_eq(refused, 0);
}

/* fwd of layers without padding whose output rows exceed an OBUF half (64 rows at S = 2): parts
 * over output column ranges, each reading its X columns; strided, with channel ranges too. */
Test(conv_split, column_ranges)
{
    npu_cfg_t cfg = test_cfg(2);
    npu_conv_t layers[3] = {conv_layer_of(1, 5, 4, 102, 6, 3, 3, 1, 0, 1),
                            conv_layer_of(2, 3, 5, 203, 9, 3, 2, 2, 0, 1),
                            conv_layer_of(1, 5, 6, 102, 6, 3, 3, 1, 0, 2)};
    for (int i = 0; i < 3; i++) {
        npu_conv_split_t s;
        char msg[256];
        cr_assert_eq(npu_conv_split(&cfg, &layers[i], NPU_CONV_FWD, NPU_CONV_ZEROPAD, NULL, &s, msg, sizeof msg), 0,
                     "%s", msg);
        cr_assert_gt(s.nw, 1, "layer %d: no column ranges", i);
        npu_conv_split_free(&s);
        split_check(&cfg, &layers[i], NPU_CONV_FWD, NPU_CONV_ZEROPAD, 700 + (uint64_t)i);
    }
    cfg = small_spm(2, 128);
    layers[0].C = 40;
    layers[0].F = 20;
    cr_assert_gt(split_check(&cfg, &layers[0], NPU_CONV_FWD, NPU_CONV_ZEROPAD, 710), 2);
}

/* Random layers whose rows exceed an OBUF half (64 rows at S = 2): fwd with padding and dX under
 * both dataflows take column ranges whose edge ranges pad on their own side only (fwd: the plane's
 * columns; dX: the dY columns of each range, ecoflow's phases from its own padding). Kernels 1-4,
 * strides 1-3, padding 0-3, dilation 1-2, batch 1-2, sometimes channel ranges too (a cut SPM). */
Test(conv_split, column_ranges_padded)
{
    uint64_t x = 7301;
    int cols = 0, runs = 0;
    for (int i = 0; i < 14; i++) {
        npu_cfg_t cfg = i % 3 == 2 ? small_spm(2, 256) : test_cfg(2);
        int KW = 1 + (int)(test_rand(&x) % 4), KH = 1 + (int)(test_rand(&x) % 3), d = 1 + (int)(test_rand(&x) % 2);
        int s = 1 + (int)(test_rand(&x) % 3), p = (int)(test_rand(&x) % 4);
        int W = cfg.obuf_rows + 1 + (int)(test_rand(&x) % (uint64_t)(2 * cfg.obuf_rows)), H = KH * d + (int)(test_rand(&x) % 3);
        int C = 1 + (int)(test_rand(&x) % 9), F = 1 + (int)(test_rand(&x) % 9);
        npu_conv_t c = conv_layer_of(1 + (int)(test_rand(&x) % 2), C, H, W, F, KH, KW, s, p, d);
        if (i % 3 == 2) { /* channel and filter ranges as well */
            c.C = 3 * cfg.s * 2 + 3;
            c.F = 2 * cfg.s * 2 + 1;
        }
        for (int k = NPU_CONV_FWD; k <= NPU_CONV_DX; k++)
            for (int df = NPU_CONV_ZEROPAD; df <= NPU_CONV_ECOFLOW; df++) {
                npu_conv_split_t sp;
                char msg[256];
                if (k == NPU_CONV_FWD && df == NPU_CONV_ECOFLOW)
                    continue;
                cr_assert_eq(npu_conv_split(&cfg, &c, k, df, NULL, &sp, msg, sizeof msg), 0, "layer %d: %s", i, msg);
                cols += sp.nw > 1;
                npu_conv_split_free(&sp);
                split_check(&cfg, &c, k, df, 7400 + 10 * (uint64_t)i + 3 * (uint64_t)k + (uint64_t)df);
                runs++;
            }
    }
    cr_assert_geq(cols, runs * 3 / 4, "only %d of %d runs took column ranges: the test lost its purpose", cols, runs);
}

/* A forward's output drained into resident SPM rows (npu_conv_split_res_out, the step scheduler's
 * adjacent-layer reuse): planned on the banks below the rows, the program stores nothing, its DRAM
 * bytes per tag the split's (Y's now 0, X and W unchanged), its tokens balanced at every queue
 * depth (a SYNC_S in place of each band's STORE), and every DRAIN inside the rows, pixel r of the
 * output at word spm + r x stride; refused for rows inside the plan's SPM, narrower than a pixel or
 * for a layer in parts. */
Test(conv_split, resident_output)
{
    npu_cfg_t cfg = small_spm(4, 512), lo = cfg;
    npu_conv_t c = conv_layer_of(2, 8, 12, 12, 20, 3, 3, 1, 1, 1);
    npu_conv_split_t s;
    npu_conv_addrs_t a = {1u << 20, 2u << 20, 3u << 20, 4u << 20};
    npu_prog_t prog;
    char msg[256];
    lo.spm_banks = cfg.spm_banks - 1;
    unsigned spm = (unsigned)npu_cfg_spm_words(&lo);
    cr_assert_eq(npu_conv_split(&lo, &c, NPU_CONV_FWD, NPU_CONV_ECOFLOW, NULL, &s, msg, sizeof msg), 0, "%s", msg);
    cr_assert_eq(s.parts, 1);
    unsigned stride = s.part[0].pout + 1, rows = (unsigned)(npu_conv_y_elems(&c) / (size_t)c.F), drains = 0, syncs = 0;
    uint64_t rd[NPU_NUM_TAGS];
    memcpy(rd, s.plan_rd, sizeof rd);
    cr_assert_gt(s.plan_wr[NPU_TAG_Y], 0);
    cr_assert_gt(s.part[0].nbands * c.batch, 1, "the test wants several bands");
    cr_assert_neq(npu_conv_split_res_out(&lo, &s, spm - 1, stride, msg, sizeof msg), 0, "rows inside the plan's SPM");
    cr_assert_neq(npu_conv_split_res_out(&lo, &s, spm, s.part[0].pout - 1, msg, sizeof msg), 0, "rows too narrow");
    cr_assert_eq(npu_conv_split_res_out(&lo, &s, spm, stride, msg, sizeof msg), 0, "%s", msg);
    cr_assert_eq(s.plan_wr[NPU_TAG_Y], 0);
    cr_assert(!memcmp(rd, s.plan_rd, sizeof rd), "the reads are unchanged");
    check_split_program(&lo, &s, "resident Y");
    npu_prog_init(&prog);
    cr_assert_eq(npu_conv_split_emit(&lo, &s, &a, &prog, msg, sizeof msg), 0, "%s", msg);
    for (size_t i = 0; i < prog.n; i++) {
        npu_fields_t f;
        cr_assert_eq(npu_decode(&prog.insn[i], &f), 0);
        cr_assert_neq(f.op, NPU_OP_STORE, "instruction %zu stores", i);
        syncs += f.op == NPU_OP_SYNC_S;
        if (f.op != NPU_OP_DRAIN || f.spm_addr < spm) /* the token-only DRAINs write the plan's scratch */
            continue;
        drains++;
        cr_assert_eq(f.spm_stride, stride);
        cr_assert_lt((f.spm_addr - spm) % stride, s.part[0].pout, "a DRAIN starts inside a pixel's words");
        cr_assert_leq(f.spm_addr + (f.rows - 1) * stride, spm + (rows - 1) * stride + s.part[0].pout - 1);
    }
    cr_assert_geq(drains, (unsigned)(s.part[0].nbands * c.batch), "every band drains into the rows");
    cr_assert_eq(syncs, (unsigned)(s.part[0].nbands * c.batch), "a SYNC_S per band in place of its STORE");
    npu_prog_free(&prog);
    npu_conv_split_free(&s);
    npu_cfg_t cut = small_spm(2, 128); /* a layer in parts */
    npu_conv_t big = conv_layer_of(1, 64, 8, 8, 64, 3, 3, 1, 1, 1);
    cr_assert_eq(npu_conv_split(&cut, &big, NPU_CONV_FWD, NPU_CONV_ECOFLOW, NULL, &s, msg, sizeof msg), 0, "%s", msg);
    cr_assert_gt(s.parts, 1);
    cr_assert_neq(npu_conv_split_res_out(&cut, &s, (unsigned)npu_cfg_spm_words(&cut), 64, msg, sizeof msg), 0);
    npu_conv_split_free(&s);
}

/* The SPM words a program's X LOADs (plain: tag X) or its LOAD_SPMs (resident input) write, in
 * program order: one entry per word, ceil(row bytes / B) words a row. */
static size_t x_words(const npu_cfg_t *cfg, const npu_prog_t *prog, int spm, unsigned *w, size_t cap)
{
    unsigned B = (unsigned)npu_cfg_word(cfg);
    size_t n = 0;
    for (size_t i = 0; i < prog->n; i++) {
        npu_fields_t f;
        cr_assert_eq(npu_decode(&prog->insn[i], &f), 0);
        if (f.op != (spm ? NPU_OP_LOAD_SPM : NPU_OP_LOAD) || f.tag != NPU_TAG_X)
            continue;
        for (unsigned r = 0; r < f.rows; r++)
            for (unsigned j = 0; j < (f.row_bytes + B - 1) / B && n < cap; j++)
                w[n++] = f.spm_addr + r * f.spm_stride + j;
    }
    return n;
}

static int cmp_u(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return x < y ? -1 : x > y;
}

/* A forward reading X from resident rows: no X byte from DRAM (plan and program), the other tags
 * unchanged, tokens balanced at every depth; LOAD_SPMs in place of the X LOADs writing exactly
 * the band words those LOADs wrote (the same multiset, the same row bytes) and reading only the
 * resident rows, from a pixel's first word; the FILLs unchanged; refusals (rows in the plan's SPM, narrower than a pixel, a layer in parts). */
static void resident_input_case(const npu_cfg_t *cfg, const npu_conv_t *c)
{
    npu_cfg_t lo = *cfg;
    npu_conv_split_t s;
    npu_conv_addrs_t a = {1u << 20, 2u << 20, 3u << 20, 4u << 20};
    npu_prog_t plain, prog;
    char msg[256];
    lo.spm_banks = cfg->spm_banks - 1;
    unsigned spm = (unsigned)npu_cfg_spm_words(&lo), rows = (unsigned)(c->batch * c->H * c->W), fills[2] = {0, 0};
    cr_assert_eq(npu_conv_split(&lo, c, NPU_CONV_FWD, NPU_CONV_ECOFLOW, NULL, &s, msg, sizeof msg), 0, "%s", msg);
    cr_assert_eq(s.parts, 1);
    cr_assert_gt(s.part[0].nbands * c->batch, 1, "the test wants several bands");
    unsigned stride = (unsigned)s.part[0].cw + 1;
    uint64_t rd[NPU_NUM_TAGS], wr[NPU_NUM_TAGS];
    memcpy(rd, s.plan_rd, sizeof rd);
    memcpy(wr, s.plan_wr, sizeof wr);
    cr_assert_gt(rd[NPU_TAG_X], 0);
    npu_prog_init(&plain);
    npu_prog_init(&prog);
    cr_assert_eq(npu_conv_split_emit(&lo, &s, &a, &plain, msg, sizeof msg), 0, "%s", msg);
    cr_assert_neq(npu_conv_split_res_in(&lo, &s, spm - 1, stride, msg, sizeof msg), 0, "rows inside the plan's SPM");
    cr_assert_neq(npu_conv_split_res_in(&lo, &s, spm, (unsigned)s.part[0].cw - 1, msg, sizeof msg), 0, "too narrow");
    cr_assert_eq(npu_conv_split_res_in(&lo, &s, spm, stride, msg, sizeof msg), 0, "%s", msg);
    cr_assert_eq(s.plan_rd[NPU_TAG_X], 0);
    rd[NPU_TAG_X] = 0;
    cr_assert(!memcmp(rd, s.plan_rd, sizeof rd) && !memcmp(wr, s.plan_wr, sizeof wr), "only X's reads change");
    check_split_program(&lo, &s, "resident X");
    cr_assert_eq(npu_conv_split_emit(&lo, &s, &a, &prog, msg, sizeof msg), 0, "%s", msg);
    for (size_t i = 0; i < prog.n; i++) {
        npu_fields_t f;
        cr_assert_eq(npu_decode(&prog.insn[i], &f), 0);
        cr_assert(!(f.op == NPU_OP_LOAD && f.tag == NPU_TAG_X), "instruction %zu loads X", i);
        cr_assert_neq(f.op, NPU_OP_VEC, "instruction %zu: a VEC", i);
        if (f.op != NPU_OP_LOAD_SPM)
            continue;
        cr_assert_eq(f.src_stride, stride);
        cr_assert_eq(f.row_bytes, 2u * (unsigned)c->C);
        cr_assert_geq(f.src_addr, spm);
        cr_assert_eq((f.src_addr - spm) % stride, 0, "a copy starts inside a pixel's words");
        cr_assert_leq(f.src_addr + (f.rows - 1) * stride, spm + (rows - 1) * stride, "a copy past the rows");
        cr_assert_lt(f.spm_addr + (f.rows - 1) * f.spm_stride, spm, "a copy writes outside the plan's SPM");
    }
    for (int v = 0; v < 2; v++) /* the FILLs are the same */
        for (size_t i = 0; i < (v ? prog.n : plain.n); i++)
            fills[v] += npu_insn_op(&(v ? prog : plain).insn[i]) == NPU_OP_FILL;
    cr_assert_eq(fills[0], fills[1]);
    size_t cap = 1u << 20;
    unsigned *w0 = malloc(cap * sizeof *w0), *w1 = malloc(cap * sizeof *w1);
    size_t n0 = x_words(&lo, &plain, 0, w0, cap), n1 = x_words(&lo, &prog, 1, w1, cap);
    qsort(w0, n0, sizeof *w0, cmp_u);
    qsort(w1, n1, sizeof *w1, cmp_u);
    cr_assert_gt(n0, 0);
    cr_assert_eq(n1, n0, "the copies write %zu words, the LOADs %zu", n1, n0);
    cr_assert(!memcmp(w0, w1, n0 * sizeof *w0), "the copies write other words than the LOADs");
    free(w0);
    free(w1);
    npu_prog_free(&plain);
    npu_prog_free(&prog);
    npu_conv_split_free(&s);
}

Test(conv_split, resident_input)
{
    npu_cfg_t cfg = small_spm(4, 512), cut = small_spm(2, 128);
    npu_conv_t pad = conv_layer_of(2, 8, 12, 12, 20, 3, 3, 1, 1, 1);  /* padding: a copy per row */
    npu_conv_t flat = conv_layer_of(2, 20, 10, 10, 8, 1, 1, 1, 0, 1); /* 1x1, no padding: one run */
    npu_conv_t wide = conv_layer_of(1, 40, 9, 9, 16, 3, 3, 2, 1, 1);  /* stride 2, 5 words a pixel */
    npu_conv_t big = conv_layer_of(1, 64, 8, 8, 64, 3, 3, 1, 1, 1);   /* in parts on the cut SPM */
    npu_conv_split_t s;
    char msg[256];
    resident_input_case(&cfg, &pad);
    resident_input_case(&cfg, &flat);
    resident_input_case(&cfg, &wide);
    cr_assert_eq(npu_conv_split(&cut, &big, NPU_CONV_FWD, NPU_CONV_ECOFLOW, NULL, &s, msg, sizeof msg), 0, "%s", msg);
    cr_assert_gt(s.parts, 1);
    cr_assert_neq(npu_conv_split_res_in(&cut, &s, (unsigned)npu_cfg_spm_words(&cut), 64, msg, sizeof msg), 0);
    npu_conv_split_free(&s);
}

/* Y of layer c's one-part forward (planned on cfg less two banks) on the C model with random W
 * and X of either sign in DRAM: loaded from DRAM (res = 0), or (res = 1) copied from
 * resident rows, pixel r at the first resident word + r * (cw + 1), which a LOAD ahead of the
 * program fills (the LOAD queue runs in order, so before the program's first group pushes its
 * l2e). Returns the Y bytes (malloc'd, *n of them). */
static uint8_t *resident_input_y(const npu_cfg_t *cfg, const npu_conv_t *c, int res, uint64_t seed, size_t *n)
{
    npu_cfg_t lo = *cfg;
    npu_conv_split_t s;
    npu_conv_addrs_t a = {1u << 20, 2u << 20, 3u << 20, 4u << 20};
    npu_prog_t prog;
    npu_run_result_t r;
    npu_insn_t in;
    char msg[256];
    uint64_t x = seed;
    size_t dbytes;
    lo.spm_banks = cfg->spm_banks - 2;
    unsigned spm = (unsigned)npu_cfg_spm_words(&lo), rows = (unsigned)(c->batch * c->H * c->W);
    cr_assert_eq(npu_conv_split(&lo, c, NPU_CONV_FWD, NPU_CONV_ECOFLOW, NULL, &s, msg, sizeof msg), 0, "%s", msg);
    unsigned stride = (unsigned)s.part[0].cw + 1, px = s.whole.pitch_x;
    cr_assert_gt(s.part[0].nbands * c->batch, 1, "the test wants several bands");
    cr_assert_leq(spm + rows * stride, (unsigned)npu_cfg_spm_words(cfg), "the rows fit the two banks");
    npu_sim_t *sim = open_fake(cfg, 200, seed);
    uint8_t *d = npu_sim_dram(sim, &dbytes);
    for (unsigned p = 0; p < rows; p++)
        for (int ch = 0; ch < c->C; ch++) {
            int16_t v = (int16_t)((int)(test_rand(&x) % 128) - 64);
            memcpy(d + a.x + (uint64_t)p * px + 2u * (unsigned)ch, &v, 2);
        }
    for (uint64_t i = 0; i < (1u << 20); i += 2) { /* W, whatever its layout: small values */
        int16_t v = (int16_t)((int)(test_rand(&x) % 17) - 8);
        memcpy(d + a.w + i, &v, 2);
    }
    npu_prog_init(&prog);
    if (res) {
        cr_assert_eq(npu_enc_load(&in, NPU_TAG_X, 0, rows, (uint32_t)a.x, spm, stride, 2u * (unsigned)c->C, px), 0);
        cr_assert_eq(npu_prog_push(&prog, &in), 0);
        cr_assert_eq(npu_conv_split_res_in(&lo, &s, spm, stride, msg, sizeof msg), 0, "%s", msg);
    }
    cr_assert_eq(npu_conv_split_emit(&lo, &s, &a, &prog, msg, sizeof msg), 0, "%s", msg);
    cr_assert_eq(npu_run_program(cfg, sim, 8u << 20, prog.insn, prog.n, 100000000, &r), NPU_RUN_DONE,
                 "res %d: the program did not finish (err %u)", res, r.err);
    *n = (size_t)(npu_conv_y_elems(c) / (size_t)c->F) * s.whole.pitch_out;
    uint8_t *y = malloc(*n);
    cr_assert_not_null(y);
    memcpy(y, d + a.out, *n);
    npu_sim_close(sim);
    npu_prog_free(&prog);
    npu_conv_split_free(&s);
    return y;
}

/* The copies compute what the LOADs do: Y bit for bit the plain program's, for layers with
 * padding columns, without (one copy over the band's rows), with 3- and 5-word pixels at stride 2. */
Test(conv_split, resident_input_same_y)
{
    npu_cfg_t cfg = small_spm(4, 768);
    npu_conv_t layers[3] = {conv_layer_of(2, 8, 12, 12, 20, 3, 3, 1, 1, 1), conv_layer_of(2, 20, 10, 10, 8, 1, 1, 1, 0, 1),
                            conv_layer_of(1, 40, 9, 9, 16, 3, 3, 2, 1, 1)};
    for (int i = 0; i < 3; i++) {
        size_t n0, n1;
        uint8_t *y0 = resident_input_y(&cfg, &layers[i], 0, 70 + (uint64_t)i, &n0);
        uint8_t *y1 = resident_input_y(&cfg, &layers[i], 1, 70 + (uint64_t)i, &n1);
        cr_assert_eq(n0, n1);
        size_t j = 0;
        while (j < n0 && y0[j] == y1[j])
            j++;
        cr_assert_eq(j, n0, "layer %d: Y byte %zu differs (%u, plain %u)", i, j, j < n0 ? y1[j] : 0, j < n0 ? y0[j] : 0);
        int nz = 0;
        for (size_t k = 0; k < n0; k++)
            nz |= y0[k] != 0;
        cr_assert(nz, "layer %d: Y is all zero: the test lost its purpose", i);
        free(y0);
        free(y1);
    }
}
