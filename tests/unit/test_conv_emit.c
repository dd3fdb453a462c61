/* test_conv_emit.c - convolution programs (sw/compile/conv/conv_plan.h, sw/compile/conv/conv_emit.h, sw/run/conv_run.h) on the
 * C ISA model: fwd / dX / dW under zeropad and ecoflow bit-exact against the golden model, every
 * counter against the program and the MAC formulas, the planner's invariants (SPM / OBUF fit,
 * bands cover the output, DRAM bytes), the token discipline on an abstract machine. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/conv/conv_emit.h"
#include "compile/conv/conv_plan.h"
#include "run/conv_run.h"
#include "conv_test_layer.h"
#include "fake_sim.h"
#include "npu_funcsim.h"
#include "queue_machine.h"
#include "run/runtime.h"
#include "test_cfgs.h"


/* One kernel x dataflow of c on the fake model with random timing; asserts PASS (bit-exact,
 * counters, MAC formulas) and the plan's DRAM bytes. */
static void conv_check(const npu_cfg_t *cfg, const npu_conv_t *c, int kernel, int df,
                       const npu_conv_plan_opts_t *o, uint64_t seed)
{
    npu_conv_report_t r;
    char ls[96];
    npu_sim_t *s = open_fake(cfg, 200, seed);
    int rc = npu_conv_run_opts(cfg, s, c, kernel, df, o, seed, 50000000, &r);
    npu_sim_close(s);
    npu_conv_str(c, ls, sizeof ls);
    cr_assert_eq(rc, NPU_GEMM_PASS, "S=%d layer %s batch %d %s %s (bands %d, band rows %d): %s", cfg->s,
                 ls, c->batch, npu_conv_kernel_name(kernel), npu_conv_dataflow_name(df),
                 o ? o->max_band_rows : 0, o ? o->max_blocks : 0, r.msg);
    cr_assert_eq(r.dram_rd_bytes, r.plan_rd_bytes, "%s %s %s: read %llu, plan %llu", ls,
                 npu_conv_kernel_name(kernel), npu_conv_dataflow_name(df),
                 (unsigned long long)r.dram_rd_bytes, (unsigned long long)r.plan_rd_bytes);
    cr_assert_eq(r.dram_wr_bytes, r.plan_wr_bytes, "%s: written %llu, plan %llu", ls,
                 (unsigned long long)r.dram_wr_bytes, (unsigned long long)r.plan_wr_bytes);
    if (df == NPU_CONV_ECOFLOW)
        cr_assert_eq(r.macs_zero, 0u);
}

/* Every kernel x dataflow the planner accepts (a layer too big for the SPM is skipped); returns
 * the number run. */
static int all_kernels(const npu_cfg_t *cfg, const npu_conv_t *c, const npu_conv_plan_opts_t *o,
                       uint64_t seed)
{
    int ran = 0;
    for (int k = NPU_CONV_FWD; k <= NPU_CONV_DW; k++)
        for (int df = NPU_CONV_ZEROPAD; df <= NPU_CONV_ECOFLOW; df++) {
            npu_conv_plan_t p;
            char msg[160];
            if (k == NPU_CONV_FWD && df == NPU_CONV_ECOFLOW)
                continue;
            if (npu_conv_plan(cfg, c, k, df, o, &p, msg, sizeof msg) != 0) {
                cr_assert(strstr(msg, "does not fit") != NULL, "%s", msg);
                continue;
            }
            conv_check(cfg, c, k, df, o, seed + (uint64_t)(3 * k + df));
            ran++;
        }
    return ran;
}

Test(conv_fake, fwd_no_padding)
{
    npu_cfg_t cfg = test_cfg(2);
    npu_conv_t c = conv_layer_of(2, 3, 7, 9, 5, 3, 3, 1, 0, 1);
    conv_check(&cfg, &c, NPU_CONV_FWD, NPU_CONV_ZEROPAD, NULL, 1);
    c = conv_layer_of(1, 6, 11, 10, 9, 3, 2, 2, 0, 2);
    conv_check(&cfg, &c, NPU_CONV_FWD, NPU_CONV_ZEROPAD, NULL, 2);
    cfg = test_cfg(8);
    c = conv_layer_of(1, 20, 9, 13, 17, 5, 5, 2, 0, 1);
    conv_check(&cfg, &c, NPU_CONV_FWD, NPU_CONV_ZEROPAD, NULL, 3);
}

Test(conv_fake, dx_ecoflow_covered)
{
    npu_cfg_t cfg = test_cfg(2);
    npu_conv_t c = conv_layer_of(2, 3, 7, 9, 5, 3, 3, 1, 0, 1);
    conv_check(&cfg, &c, NPU_CONV_DX, NPU_CONV_ECOFLOW, NULL, 11);
    c = conv_layer_of(1, 6, 11, 11, 5, 3, 3, 2, 0, 1);
    conv_check(&cfg, &c, NPU_CONV_DX, NPU_CONV_ECOFLOW, NULL, 12);
}

Test(conv_fake, dw_s1_p0)
{
    npu_cfg_t cfg = test_cfg(2);
    npu_conv_t c = conv_layer_of(2, 3, 7, 9, 5, 3, 3, 1, 0, 1);
    conv_check(&cfg, &c, NPU_CONV_DW, NPU_CONV_ZEROPAD, NULL, 21);
    conv_check(&cfg, &c, NPU_CONV_DW, NPU_CONV_ECOFLOW, NULL, 22);
}

/* Random layers: kernel 1..7, stride 1..4, padding 0..3, dilation 1..2, odd sizes, channels
 * not multiples of 2S, batch 1..2, forced band / block-group sizes; every kernel x dataflow. */
static void random_layers(int S, int beat_words, uint64_t seed, int count)
{
    uint64_t x = seed;
    npu_cfg_t cfg = test_cfg(S), c1 = test_cfg(S);
    cfg.beat_words = beat_words;
    for (int i = 0; i < count; i++) {
        int KH = 1 + (int)(test_rand(&x) % 7), KW = 1 + (int)(test_rand(&x) % 7);
        int s = 1 + (int)(test_rand(&x) % 4), p = (int)(test_rand(&x) % 4), d = 1 + (int)(test_rand(&x) % 2);
        if (p >= (KH > KW ? KH : KW) * d)
            p = 0;
        int H = (KH - 1) * d + 1 - 2 * p + (int)(test_rand(&x) % 10), W = (KW - 1) * d + 1 - 2 * p + (int)(test_rand(&x) % 10);
        H = H < 1 ? 1 : H;
        W = W < 1 ? 1 : W;
        if (H + 2 * p < (KH - 1) * d + 1 || W + 2 * p < (KW - 1) * d + 1)
            continue;
        int C = 1 + (int)(test_rand(&x) % (uint64_t)(3 * S)), F = 1 + (int)(test_rand(&x) % (uint64_t)(3 * S));
        npu_conv_t c = conv_layer_of(1 + (int)(test_rand(&x) % 2), C, H, W, F, KH, KW, s, p, d);
        npu_conv_plan_opts_t o = {.max_band_rows = (int)(test_rand(&x) % 4),
            .max_blocks = (int)(test_rand(&x) % 3),
            .padded = (int)(test_rand(&x) % 2)};
        if (i % 4 == 3) { /* depthwise */
            c.depthwise = 1;
            c.F = c.C;
        }
        all_kernels(&cfg, &c, &o, seed * 100 + (uint64_t)i);
    }
    npu_funcsim_config(&c1); /* the functional model's beat back to one word */
}

Test(conv_fake, random_s2) { random_layers(2, 1, 5, 80); }
Test(conv_fake, random_s8) { random_layers(8, 1, 6, 40); }
/* 64-byte beats (small-w2): descriptors that meet inside a beat each move it, so the plan's
 * bytes must follow every cut the emitter makes */
Test(conv_fake, random_s8_w2) { random_layers(8, 2, 7, 40); }

/* A dW unit whose X rows meet no dY row but hold an early group (the drains and stores of the
 * regions that finish before the pass's last row): the group is emitted although the unit has no
 * waves (it was dropped once, leaving 48 dW elements unwritten). */
Test(conv_fake, dw_unit_without_waves)
{
    npu_cfg_t cfg = test_cfg(2);
    npu_conv_t c = conv_layer_of(1, 6, 7, 1, 6, 7, 6, 1, 3, 1);
    npu_conv_plan_opts_t o = {.max_band_rows = 2, .max_blocks = 1};
    c.depthwise = 1;
    conv_check(&cfg, &c, NPU_CONV_DW, NPU_CONV_ECOFLOW, &o, 27);
}

/* The geometry at a small scale: ResNet-50 CONV3-like 3x3 s2 (57 -> 28 scaled to 15 -> 7)
 * and an 11x11 s4 AlexNet CONV1-like layer, all kernels and dataflows. */
Test(conv_fake, paper_geometries)
{
    npu_cfg_t cfg = test_cfg(2);
    npu_conv_t c = conv_layer_of(2, 4, 15, 15, 4, 3, 3, 2, 0, 1);
    cr_assert_eq(all_kernels(&cfg, &c, NULL, 300), 5);
    c = conv_layer_of(1, 3, 27, 27, 4, 11, 11, 4, 2, 1);
    cr_assert_eq(all_kernels(&cfg, &c, NULL, 310), 5);
    cfg = test_cfg(8);
    c = conv_layer_of(1, 32, 29, 29, 32, 3, 3, 2, 1, 1);
    cr_assert_eq(all_kernels(&cfg, &c, NULL, 320), 5);
    c = conv_layer_of(2, 40, 15, 15, 40, 3, 3, 2, 0, 1); /* MobileNet CONV5-like depthwise */
    c.depthwise = 1;
    cr_assert_eq(all_kernels(&cfg, &c, NULL, 330), 5);
}

/* ---- planner and program invariants (no simulation) ------------------------------------- */

typedef struct region { unsigned lo, hi; } region_t; /* SPM words [lo, hi) */

static int inside(const region_t *r, int n, unsigned lo, unsigned hi)
{
    for (int i = 0; i < n; i++)
        if (r[i].hi > r[i].lo && lo >= r[i].lo && hi <= r[i].hi)
            return 1;
    return 0;
}

/* Every SPM access of the program inside the buffer its instruction may touch, every OBUF access
 * inside one half; LOAD/STORE tags those of the kernel. */
static void check_program(const npu_cfg_t *cfg, const npu_conv_plan_t *p, const npu_prog_t *prog,
                          const char *what)
{
    region_t in[2] = {{p->in_base[0], p->in_base[0] + p->in_words}, {p->in_base[1], p->in_base[1] + p->in_words}};
    region_t w = {p->w_base, p->w_base + p->w_words};
    region_t out[2] = {{p->out_base[0], p->out_base[0] + p->out_words}, {p->out_base[1], p->out_base[1] + p->out_words}};
    region_t ld[3] = {in[0], in[1], w}, any[5] = {in[0], in[1], w, out[0], out[1]};
    region_t scr = {p->scratch, p->scratch + 2}; /* token-only LDW / DRAIN */
    unsigned B = 4u * (unsigned)cfg->s, L = 2u * (unsigned)cfg->s, half = (unsigned)cfg->obuf_rows;
    for (size_t i = 0; i < prog->n; i++) {
        npu_fields_t f;
        unsigned lo, hi, wpr;
        cr_assert_eq(npu_decode(&prog->insn[i], &f), 0);
        switch (f.op) {
        case NPU_OP_LOAD:
        case NPU_OP_FILL:
            if (f.op == NPU_OP_LOAD && f.transpose) {
                wpr = (f.rows + L - 1) / L;
                hi = f.spm_addr + (f.row_bytes / 2 - 1) * f.spm_stride + wpr;
            } else {
                wpr = (f.row_bytes + B - 1) / B;
                hi = f.spm_addr + (f.rows - 1) * f.spm_stride + wpr;
            }
            lo = f.spm_addr;
            cr_assert(f.op == NPU_OP_FILL ? inside(any, 5, lo, hi) : inside(ld, 3, lo, hi),
                      "%s: insn %zu writes SPM [%u, %u) outside its buffers", what, i, lo, hi);
            if (f.op == NPU_OP_LOAD)
                cr_assert(f.tag == (f.transpose && p->kernel == NPU_CONV_DW ? NPU_TAG_DY : f.tag),
                          "%s: insn %zu tag", what, i);
            break;
        case NPU_OP_LDW:
            lo = f.spm_addr;
            hi = f.spm_addr + (f.k - f.k_lo - 1) * f.spm_stride + 1;
            cr_assert(inside(&scr, 1, lo, hi) || (p->kernel == NPU_CONV_DW ? inside(in, 2, lo, hi) : inside(&w, 1, lo, hi)),
                      "%s: LDW %zu reads [%u, %u) outside its buffer", what, i, lo, hi);
            cr_assert(f.k_lo < f.k);
            break;
        case NPU_OP_WAVE: {
            npu_wave_sets_t ws;
            npu_wave_sets(f.mode, f.m, &ws);
            lo = f.spm_addr;
            hi = f.spm_addr + (f.m - 1) * f.spm_stride + 1;
            cr_assert(inside(in, 2, lo, hi), "%s: WAVE %zu reads [%u, %u) outside the input", what, i, lo, hi);
            cr_assert(f.mode == NPU_MODE_FW || f.mode == NPU_MODE_HSW, "%s: WAVE %zu not wide", what, i);
            cr_assert(f.obuf_addr / half == (f.obuf_addr + ws.obuf_rows - 1) / half, "%s: WAVE %zu crosses a half", what, i);
            break;
        }
        case NPU_OP_DRAIN:
            lo = f.spm_addr;
            hi = f.spm_addr + (f.rows - 1) * f.spm_stride + (f.split_rows ? 1 : 2);
            if (f.split_rows && f.hi_rows)
                hi = f.spm_addr + (f.split_rows + f.hi_rows - 1) * f.spm_stride + 1;
            cr_assert(inside(out, 2, lo, hi) || inside(&scr, 1, lo, hi), "%s: DRAIN %zu writes [%u, %u) outside the output", what, i, lo, hi);
            cr_assert(f.obuf_addr / half == (f.obuf_addr + f.rows - 1) / half, "%s: DRAIN %zu crosses a half", what, i);
            break;
        case NPU_OP_STORE:
            lo = f.spm_addr;
            hi = f.spm_addr + (f.rows - 1) * f.spm_stride + (f.row_bytes + B - 1) / B;
            cr_assert(inside(out, 2, lo, hi), "%s: STORE %zu reads [%u, %u) outside the output", what, i, lo, hi);
            break;
        default:
            break;
        }
    }
}

/* Plan invariants, program ranges, DRAM bytes (program == plan; == compulsory for one unit where
 * every input row and column is read), tokens at every queue depth. */
static void check_plan(const npu_cfg_t *cfg, const npu_conv_t *c, int k, int df, const npu_conv_plan_opts_t *o)
{
    npu_conv_plan_t p;
    npu_conv_addrs_t a = {1u << 20, 2u << 20, 3u << 20, 4u << 20};
    npu_prog_t prog;
    npu_prog_expect_t e;
    char msg[200], what[200], ls[80];
    npu_conv_str(c, ls, sizeof ls);
    snprintf(what, sizeof what, "S=%d %s %s %s", cfg->s, ls, npu_conv_kernel_name(k), npu_conv_dataflow_name(df));
    if (npu_conv_plan(cfg, c, k, df, o, &p, msg, sizeof msg) != 0) {
        cr_assert(strstr(msg, "does not fit") != NULL, "%s: %s", what, msg);
        return;
    }
    /* fit */
    cr_assert_leq(p.spm_used, (unsigned)npu_cfg_spm_words(cfg), "%s", what);
    cr_assert(p.in_base[0] + p.in_words <= p.in_base[1] && p.in_base[1] + p.in_words <= p.w_base + (p.w_words ? 0 : p.w_words + 1) + p.spm_used,
              "%s: input buffers overlap", what);
    if (k != NPU_CONV_DW)
        cr_assert_leq(p.obuf_unit_rows, (unsigned)cfg->obuf_rows, "%s", what);
    /* the units cover every (image, output row, output block) exactly once */
    {
        int blocks = p.nblk; /* dW: passes */
        unsigned char *seen = calloc((size_t)c->batch * (size_t)p.rows * (size_t)blocks, 1);
        cr_assert_not_null(seen);
        for (int u = 0; u < p.units; u++) {
            npu_conv_unit_t un;
            npu_conv_unit_at(&p, u, &un);
            cr_assert(un.r0 < un.r1 && un.k0 < un.k1 && un.k1 <= blocks && un.b < c->batch, "%s unit %d", what, u);
            cr_assert_leq(un.r1 - un.r0, p.R);
            for (int r = un.r0; r < un.r1; r++)
                for (int j = un.k0; j < un.k1; j++)
                    seen[((size_t)un.b * (size_t)p.rows + (size_t)r) * (size_t)blocks + (size_t)j]++;
        }
        for (size_t i = 0; i < (size_t)c->batch * (size_t)p.rows * (size_t)blocks; i++)
            cr_assert_eq(seen[i], 1, "%s: output row/block %zu covered %d times", what, i, seen[i]);
        free(seen);
    }
    npu_prog_init(&prog);
    cr_assert_eq(npu_conv_emit(cfg, &p, &a, &prog, msg, sizeof msg), 0, "%s: %s", what, msg);
    check_program(cfg, &p, &prog, what);
    npu_prog_expect(cfg, prog.insn, prog.n, &e);
    for (int t = 1; t < NPU_NUM_TAGS; t++) {
        cr_assert_eq(e.rd_bytes[t], p.plan_rd[t], "%s: tag %d read %llu, plan %llu", what, t,
                     (unsigned long long)e.rd_bytes[t], (unsigned long long)p.plan_rd[t]);
        cr_assert_eq(e.wr_bytes[t], p.plan_wr[t], "%s: tag %d written %llu, plan %llu", what, t,
                     (unsigned long long)e.wr_bytes[t], (unsigned long long)p.plan_wr[t]);
    }
    {
        npu_conv_macs_t m = npu_conv_macs(c, k, df);
        if (c->depthwise) { /* the hardware counts the diagonal tiles' (dense dW's) k x n */
            uint64_t sq = 0;
            for (int cb = 0; cb < p.cw; cb++) {
                uint64_t ck = (uint64_t)(c->C - cb * p.L < p.L ? c->C - cb * p.L : p.L);
                sq += ck * ck;
            }
            m.total = k == NPU_CONV_DW ? m.total * (uint64_t)c->F : m.total / (uint64_t)c->C * sq;
        }
        cr_assert_eq(e.macs, m.total, "%s: program MACs %llu, formula %llu", what,
                     (unsigned long long)e.macs, (unsigned long long)m.total);
    }
    {
        char why[200];
        cr_assert_eq(queue_machine_check_depths(prog.insn, prog.n, 5, why, sizeof why), 0, "%s: %s", what, why);
    }
    npu_prog_free(&prog);
}

Test(conv_plan, invariants_random)
{
    static const int ss[] = {2, 8, 16, 8}; /* the last: 64-byte DRAM beats (small-w2) */
    uint64_t x = 4242;
    for (int si = 0; si < 4; si++) {
        npu_cfg_t cfg = test_cfg(ss[si]);
        cfg.beat_words = si == 3 ? 2 : 1;
        for (int i = 0; i < 60; i++) {
            int KH = 1 + (int)(test_rand(&x) % 7), KW = 1 + (int)(test_rand(&x) % 7);
            int s = 1 + (int)(test_rand(&x) % 4), d = 1 + (int)(test_rand(&x) % 2);
            int p = (int)(test_rand(&x) % 4);
            int H = (KH - 1) * d + 1 + (int)(test_rand(&x) % 40), W = (KW - 1) * d + 1 + (int)(test_rand(&x) % 40);
            int C = 1 + (int)(test_rand(&x) % (uint64_t)(5 * ss[si])), F = 1 + (int)(test_rand(&x) % (uint64_t)(5 * ss[si]));
            npu_conv_t c = conv_layer_of(1 + (int)(test_rand(&x) % 3), C, H, W, F, KH, KW, s, p, d);
            npu_conv_plan_opts_t o = {.max_band_rows = (int)(test_rand(&x) % 5),
                .max_blocks = (int)(test_rand(&x) % 3),
                .padded = (int)(test_rand(&x) % 2)};
            if (i % 5 == 4) {
                c.depthwise = 1;
                c.F = c.C;
            }
            for (int k = NPU_CONV_FWD; k <= NPU_CONV_DW; k++)
                for (int df = NPU_CONV_ZEROPAD; df <= NPU_CONV_ECOFLOW; df++)
                    check_plan(&cfg, &c, k, df, i % 2 ? &o : NULL);
        }
    }
}

/* One band, every row and column read (3x3, s <= 3): the DRAM bytes are each tensor once. Padded
 * pixel rows: exactly. Dense ones: the X rows of the padded plane are a LOAD per image row (the
 * SPM rows have padding columns between them) and dW's dY^T a transposed LOAD per dY row; two
 * rows that meet inside a beat both read it: at most one beat more per row, and exactly the
 * tensor for everything else. */
Test(conv_plan, compulsory_one_band)
{
    npu_cfg_t cfg = test_cfg(8);
    npu_conv_t c = conv_layer_of(1, 20, 13, 13, 24, 3, 3, 2, 1, 1);
    for (int padded = 0; padded < 2; padded++)
        for (int k = NPU_CONV_FWD; k <= NPU_CONV_DW; k++)
            for (int df = NPU_CONV_ZEROPAD; df <= NPU_CONV_ECOFLOW; df++) {
                npu_conv_plan_opts_t o = {.padded = padded};
                npu_conv_plan_t p;
                char msg[160];
                cr_assert_eq(npu_conv_plan(&cfg, &c, k, df, &o, &p, msg, sizeof msg), 0, "%s", msg);
                if (p.units != 1)
                    continue; /* fwd / dX: OBUF-limited bands */
                for (int t = 1; t < NPU_NUM_TAGS; t++) {
                    uint64_t slack = padded ? 0 : t == NPU_TAG_X ? (uint64_t)c.H * p.B
                                                : t == NPU_TAG_DY ? (uint64_t)p.vOH * p.B : 0;
                    if (k == NPU_CONV_DW && df == NPU_CONV_ZEROPAD && t == NPU_TAG_DY)
                        continue; /* the zeropad baseline reads the zero-inserted dY: s^2 x */
                    cr_assert_geq(p.plan_rd[t], p.comp_rd[t], "%d %d %d tag %d", padded, k, df, t);
                    cr_assert_leq(p.plan_rd[t], p.comp_rd[t] + slack, "%d %d %d tag %d", padded, k, df, t);
                    cr_assert_eq(p.plan_wr[t], p.comp_wr[t], "%d %d %d tag %d", padded, k, df, t);
                }
            }
}

/* Layers the planner must refuse with a reason. */
Test(conv_plan, refusals)
{
    npu_cfg_t cfg = test_cfg(2);
    npu_conv_plan_t p;
    char msg[160];
    npu_conv_t c = conv_layer_of(1, 3, 9, 100, 4, 3, 3, 1, 1, 1); /* a 100-pixel row, OBUF half of 64 */
    cr_assert_eq(npu_conv_plan(&cfg, &c, NPU_CONV_FWD, NPU_CONV_ZEROPAD, NULL, &p, msg, sizeof msg), -1);
    cr_assert(strstr(msg, "OBUF") != NULL, "%s", msg);
    c = conv_layer_of(1, 3, 9, 9, 4, 3, 3, 0, 1, 1); /* stride 0 */
    cr_assert_eq(npu_conv_plan(&cfg, &c, NPU_CONV_DX, NPU_CONV_ECOFLOW, NULL, &p, msg, sizeof msg), -1);
    c = conv_layer_of(1, 3, 9, 9, 4, 3, 3, 1, 1, 1);
    cr_assert_eq(npu_conv_plan(&cfg, &c, 3, NPU_CONV_ECOFLOW, NULL, &p, msg, sizeof msg), -1);
}

/* More random layers: NPU_CONV_RANDOM=n runs n more rounds (make regress). */
Test(conv_fake, random_more, .timeout = 3600)
{
    const char *e = getenv("NPU_CONV_RANDOM");
    int n = e ? atoi(e) : 0;
    for (int i = 0; i < n; i++) {
        random_layers(2, 1, 1000 + (uint64_t)i, 20);
        random_layers(8, 1 + i % 2, 5000 + (uint64_t)i, 10);
    }
}

/* The medium configuration (configs/medium.cfg), where the layers were measured. */
static npu_cfg_t medium_cfg(void)
{
    npu_cfg_t c = test_cfg(16);
    c.spm_bank_words = 2048;
    c.obuf_rows = 512;
    c.max_outstanding = 8;
    return c;
}

/* Unit 0's resident weights in two parts (conv_unit.c, npu_cx_resident_weights): dense dX rows go as
 * flat runs of long bursts (not one short burst per (tap, f) row), and only the first taps are
 * in the load group the first LDW waits for (the rest come in a second group with its own l2e,
 * popped later); the program passes check_plan (ranges, bytes, no deadlock at any depth). */
Test(conv_plan, weights_in_two_parts)
{
    npu_cfg_t cfg = medium_cfg();
    npu_conv_t c = conv_layer_of(1, 64, 57, 57, 64, 3, 3, 2, 0, 1);
    npu_conv_addrs_t a = {1u << 20, 2u << 20, 3u << 20, 4u << 20};
    for (int df = NPU_CONV_ZEROPAD; df <= NPU_CONV_ECOFLOW; df++) {
        npu_conv_plan_t p;
        npu_prog_t prog;
        char msg[200];
        uint64_t w_first = 0, w_all = 0;
        int pushed = 0, pops = 0;
        unsigned w_row_bytes = 0;
        cr_assert_eq(npu_conv_plan(&cfg, &c, NPU_CONV_DX, df, NULL, &p, msg, sizeof msg), 0, "%s", msg);
        npu_prog_init(&prog);
        cr_assert_eq(npu_conv_emit(&cfg, &p, &a, &prog, msg, sizeof msg), 0, "%s", msg);
        for (size_t i = 0; i < prog.n; i++) {
            npu_fields_t f;
            cr_assert_eq(npu_decode(&prog.insn[i], &f), 0);
            if (f.op == NPU_OP_LOAD && f.tag == NPU_TAG_W) {
                if (!w_row_bytes)
                    w_row_bytes = f.row_bytes;
                w_all += (uint64_t)f.rows * f.row_bytes;
                if (!pushed)
                    w_first += (uint64_t)f.rows * f.row_bytes;
            }
            if (npu_op_queue(f.op) == 'L' && f.push_next)
                pushed = 1;
            if ((f.op == NPU_OP_LDW || f.op == NPU_OP_WAVE) && f.pop_prev && pops < 2)
                pops++;
        }
        cr_assert_gt(w_row_bytes, 2u * (unsigned)c.C, "%s: the dense weights as a flat run", npu_conv_dataflow_name(df));
        cr_assert(w_first > 0 && w_first < w_all, "%s: first group %llu of %llu weight bytes",
                  npu_conv_dataflow_name(df), (unsigned long long)w_first, (unsigned long long)w_all);
        cr_assert_eq(pops, 2, "%s: C pops both groups", npu_conv_dataflow_name(df));
        npu_prog_free(&prog);
        check_plan(&cfg, &c, NPU_CONV_DX, df, NULL);
    }
}

/* dW bands of X plane rows and whole kh chains per pass (conv_plan.h): on the 11x11 s4 layer
 * (4 passes at S = 16) every chain (c-block, kw, kh mod 4) sits in one pass, every (X row, kh)
 * pair of a unit meets a dY row the unit holds, and the program has exactly one LDW per (pass,
 * X row, kw) that some kh of the pass reads: no chain is cut by a band or a pass. */
Test(conv_plan, dw_x_row_bands_whole_chains)
{
    npu_cfg_t cfg = medium_cfg();
    npu_conv_t c = conv_layer_of(1, 3, 63, 63, 32, 11, 11, 4, 0, 1);
    npu_conv_addrs_t a = {1u << 20, 2u << 20, 3u << 20, 4u << 20};
    npu_conv_plan_t p;
    npu_prog_t prog;
    char msg[200];
    int pass_of[121];
    unsigned row_of[121];
    long ldw = 0, want = 0;
    cr_assert_eq(npu_conv_plan(&cfg, &c, NPU_CONV_DW, NPU_CONV_ECOFLOW, NULL, &p, msg, sizeof msg), 0, "%s", msg);
    cr_assert_eq(npu_conv_dw_layout(&p, cfg.obuf_rows, pass_of, row_of), 4);
    for (int kh = 4; kh < 11; kh++)
        for (int kw = 0; kw < 11; kw++)
            cr_assert_eq(pass_of[kh * 11 + kw], pass_of[(kh - 4) * 11 + kw], "chain (kw %d, kh %d) cut", kw, kh);
    for (int u = 0; u < p.units; u++) {
        npu_conv_unit_t un;
        npu_conv_unit_at(&p, u, &un);
        for (int pr = un.i0; pr < un.i1; pr++)
            for (int kh = 0; kh < 11; kh++) {
                int num = pr - kh;
                if (num < 0 || num % 4 || num / 4 >= p.vOH || pass_of[kh * 11] != un.grp)
                    continue;
                cr_assert(num / 4 >= un.o0 && num / 4 < un.o1, "unit %d: X row %d, kh %d", u, pr, kh);
            }
    }
    for (int g = 0; g < 4; g++)
        for (int pr = 0; pr < 63; pr++)
            for (int kw = 0; kw < 11; kw++) {
                int any = 0;
                for (int kh = pr % 4; kh < 11; kh += 4)
                    any |= (pr - kh) / 4 < p.vOH && pass_of[kh * 11 + kw] == g;
                want += any;
            }
    npu_prog_init(&prog);
    cr_assert_eq(npu_conv_emit(&cfg, &p, &a, &prog, msg, sizeof msg), 0, "%s", msg);
    for (size_t i = 0; i < prog.n; i++)
        ldw += npu_insn_op(&prog.insn[i]) == NPU_OP_LDW;
    cr_assert_eq(ldw, want, "LDWs %ld, one per (pass, X row, kw): %ld", ldw, want);
    npu_prog_free(&prog);
    check_plan(&cfg, &c, NPU_CONV_DW, NPU_CONV_ECOFLOW, NULL);
    check_plan(&cfg, &c, NPU_CONV_DW, NPU_CONV_ZEROPAD, NULL);
}
