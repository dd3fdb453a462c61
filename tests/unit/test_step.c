/*
 * test_step.c - whole training steps (compile/step, ref/vk_golden, run/step_run) on the host:
 * the vector kernel's checks and refusals, its chunking, the golden model on a hand case, the
 * step plan's kernels and layout, and whole steps of a small MLP on the functional model
 * (tb/npu_funcsim.c) at S = 2 and 8 in bf16 and int16, every kernel bit-exact against the golden
 * image and its counters as the program says, the loss falling on a repeated batch; the int16
 * step's static scales (compile/step/step_scale): the rules, the derived scales, the shifts and
 * the int16 scalars of every kernel, and the refusals. Vector kernels at DRAM pitches with a SUM
 * over several chunks on the functional model; the CNN plan's kernels and layout, and whole CNN
 * steps on the functional model (bf16 at S = 2 and 8, int16), a planted fault caught.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/conv/conv_bwd.h"
#include "compile/step/step_plan.h"
#include "compile/step/step_res.h"
#include "compile/step/vkern.h"
#include "model/est_step.h"
#include "hw/isa.h"
#include "npu_funcsim.h"
#include "ref/net_ref.h"
#include "ref/vk_golden.h"
#include "run/runtime.h"
#include "run/step_probe.h"
#include "run/step_run.h"
#include "model/sweep.h"
#include "test_cfgs.h"

Test(vkern, checks_and_refusals)
{
    npu_cfg_t c = bf16_cfg(2);
    npu_vkern_t k;
    char why[256];
    memset(&k, 0, sizeof k);
    k.rows = 4;
    k.len = 5;
    int a = npu_vk_tensor(&k, "a", 0, 32, NPU_TAG_Y, 0, 1, 1);
    int h = npu_vk_tensor(&k, "h", 64, 16, NPU_TAG_X, 0, 0, 1);
    int s = npu_vk_tensor(&k, "s", 128, 32, NPU_TAG_DW, 1, 0, 1);
    npu_vk_op(&k, NPU_VOP_ADD, 0, a, a, a, 0, 0, 0); /* 16-bit op on 32-bit tensors */
    cr_assert_eq(npu_vk_check(&k, why, sizeof why), -1);
    cr_assert(strstr(why, "widths"), "%s", why);
    k.op[0].wide = 1;
    cr_assert_eq(npu_vk_check(&k, why, sizeof why), 0, "%s", why);
    k.op[0].d = s; /* a one-row result from full rows: only SUM may */
    cr_assert_eq(npu_vk_check(&k, why, sizeof why), -1);
    cr_assert(strstr(why, "one-row"), "%s", why);
    k.nop = 0;
    npu_vk_op(&k, NPU_VOP_NARROW, 0, a, -1, h, 0, 0, 0);
    npu_vk_op(&k, NPU_VOP_SUM, 1, a, -1, s, 0, 0, 0);
    cr_assert_eq(npu_vk_check(&k, why, sizeof why), 0, "%s", why);
    npu_prog_t p;
    npu_prog_init(&p);
    cr_assert_eq(npu_vk_emit(&c, &k, &p, why, sizeof why), 0, "%s", why);
    npu_prog_free(&p);
    k.rows = 4000; /* a SUM over more rows than fit the SPM at once is refused */
    k.len = 64;
    npu_prog_init(&p);
    cr_assert_eq(npu_vk_emit(&c, &k, &p, why, sizeof why), -1);
    cr_assert(strstr(why, "SUM") && strstr(why, "4000 rows"), "%s", why);
    npu_prog_free(&p);
}

Test(vkern, chunk_rows)
{
    npu_cfg_t c = bf16_cfg(2); /* B = 8 bytes, 8192 SPM words */
    npu_vkern_t k;
    memset(&k, 0, sizeof k);
    k.rows = 1000;
    k.len = 40; /* 32-bit: 160 bytes = 20 words a row; 16-bit: 10 */
    npu_vk_tensor(&k, "w", 0, 32, NPU_TAG_W, 0, 1, 1);
    npu_vk_tensor(&k, "h", 0, 16, NPU_TAG_W, 0, 0, 1);
    npu_vk_tensor(&k, "b", 0, 32, NPU_TAG_W, 1, 1, 0);
    cr_assert_eq(npu_vk_row_words(&c, &k, 0), 20);
    cr_assert_eq(npu_vk_row_words(&c, &k, 1), 10);
    /* (8192 - 20 shared) / (2 * 30) = 136 */
    cr_assert_eq(npu_vk_chunk_rows(&c, &k), 136);
    k.rows = 100;
    cr_assert_eq(npu_vk_chunk_rows(&c, &k), 100);
}

Test(vkern, golden_bias_narrow_relu)
{
    /* Z (2 x 3 fp32) + b, narrowed to bf16, ReLU: by hand */
    float z[6] = {1.5f, -2.0f, 0.25f, 3.0f, 0.0f, -0.5f}, b[3] = {0.5f, 1.0f, -0.25f};
    uint8_t img[256];
    memset(img, 0, sizeof img);
    memcpy(img, z, sizeof z);
    memcpy(img + 32, b, sizeof b);
    npu_vkern_t k;
    memset(&k, 0, sizeof k);
    k.rows = 2;
    k.len = 3;
    int tz = npu_vk_tensor(&k, "Z", 0, 32, NPU_TAG_Y, 0, 1, 1);
    int tb = npu_vk_tensor(&k, "b", 32, 32, NPU_TAG_W, 1, 1, 0);
    int th = npu_vk_tensor(&k, "H", 64, 16, NPU_TAG_X, 0, 0, 1);
    npu_vk_op(&k, NPU_VOP_ADD, 1, tz, tb, tz, 0, 0, 0);
    npu_vk_op(&k, NPU_VOP_NARROW, 0, tz, -1, th, 0, 0, 0);
    npu_vk_op(&k, NPU_VOP_RELU, 0, th, -1, th, 0, 0, 0);
    cr_assert_eq(npu_vk_golden(NPU_DTYPE_BF16, &k, img, sizeof img), 0);
    float want_z[6] = {2.0f, -1.0f, 0.0f, 3.5f, 1.0f, -0.75f};
    uint16_t want_h[6] = {0x4000, 0x0000, 0x0000, 0x4060, 0x3F80, 0x0000};
    cr_assert_eq(memcmp(img, want_z, sizeof want_z), 0, "Z += b");
    cr_assert_eq(memcmp(img + 64, want_h, sizeof want_h), 0, "H = relu(bf16(Z))");
    cr_assert_eq(memcmp(img + 32, b, sizeof b), 0, "b is not stored");
}

/* The relu_bwd + narrow + bias gradient + bias update of a convolution layer: rows of pixels at
 * DRAM pitches wider than their bytes (dH dense; Z with a spare beat a row: a run per row; dY16
 * padded within its last word: whole pitches, one run), the SUM over more rows than one chunk
 * (blocks of sum_chunk through the scratch), the bias update once after it. On the functional
 * model against the golden image, byte for byte (Z's padding untouched, dY16's zero), vec_busy as
 * npu_vk_vec_busy predicts; a pitch the emitter ignored is caught. */
static void pitched_on_model(int S, int rows, int len, int plant)
{
    npu_cfg_t c = bf16_cfg(S);
    unsigned B = (unsigned)npu_cfg_word(&c), zp = (4 * len + B - 1) / B * B + B, yp = (2 * len + B - 1) / B * B;
    uint32_t dh = 0, z = dh + 4u * len * rows, dy = z + zp * rows, db = dy + yp * rows, vb = db + 64, b = vb + 64;
    size_t size = b + 64 + 4096;
    npu_vkern_t k;
    memset(&k, 0, sizeof k);
    k.rows = rows;
    k.len = len;
    snprintf(k.name, sizeof k.name, "pitched");
    int tdh = npu_vk_tensor(&k, "dH32", dh, 32, NPU_TAG_DX, 0, 1, 0);
    int tz = npu_vk_tensor(&k, "Z32", z, 32, NPU_TAG_Y, 0, 1, 0);
    int tdz = npu_vk_tensor(&k, "dZ32", 0, 32, NPU_TAG_DY, 0, 0, 0);
    int ty = npu_vk_tensor(&k, "dY16", dy, 16, NPU_TAG_DY, 0, 0, 1);
    int tdb = npu_vk_tensor(&k, "db32", db, 32, NPU_TAG_DW, 1, 0, 1);
    int tp = npu_vk_tensor(&k, "part", 0, 32, NPU_TAG_DW, 1, 0, 0);
    int tvb = npu_vk_tensor(&k, "Vb", vb, 32, NPU_TAG_W, 1, 1, 1);
    int tb = npu_vk_tensor(&k, "b32", b, 32, NPU_TAG_W, 1, 1, 1);
    npu_vk_pitch(&k, tz, zp);
    npu_vk_pitch(&k, ty, yp);
    npu_vk_op(&k, NPU_VOP_RELU_BWD, 1, tdh, tz, tdz, 0, 0, 0);
    npu_vk_op(&k, NPU_VOP_NARROW, 0, tdz, -1, ty, 0, 0, 0);
    npu_vk_op(&k, NPU_VOP_SUM, 1, tdz, tp, tdb, 0, 0, 0);
    npu_vk_op(&k, NPU_VOP_AXPBY, 1, tvb, tdb, tvb, 0x3F666666u /* 0.9 */, 0x3F800000u, 0);
    npu_vk_op(&k, NPU_VOP_AXPBY, 1, tb, tvb, tb, 0x3F800000u, 0xBDCCCCCDu /* -0.1 */, 0);
    npu_vk_sum_chunk(&c, &k);
    cr_assert_gt(k.sum_chunk, 0, "the SUM needs several chunks");
    cr_assert_lt(k.sum_chunk, rows);
    npu_funcsim_config(&c);
    npu_sim_t *sim = npu_sim_open(NULL);
    uint8_t *img = npu_sim_dram(sim, NULL), *gold = calloc(1, size);
    uint64_t x = 0xC0FFEE;
    for (uint32_t i = 0; i < b + 64; i += 2) { /* bf16-ish fp32 halves: finite values */
        uint16_t h = (uint16_t)(0x3C00 + test_rand(&x) % 0x0600) ^ (uint16_t)(test_rand(&x) % 2 ? 0x8000 : 0);
        memcpy(img + i, &h, 2);
    }
    memcpy(gold, img, size);
    npu_prog_t prog;
    char why[256];
    npu_prog_init(&prog);
    cr_assert_eq(npu_vk_emit(&c, &k, &prog, why, sizeof why), 0, "%s", why);
    if (plant) { /* the emitter's pitch of Z32 taken as dense: a different tensor */
        npu_vk_pitch(&k, tz, 0);
        npu_prog_free(&prog);
        npu_prog_init(&prog);
        cr_assert_eq(npu_vk_emit(&c, &k, &prog, why, sizeof why), 0, "%s", why);
        npu_vk_pitch(&k, tz, zp);
    }
    npu_run_result_t r;
    cr_assert_eq(npu_run_program(&c, sim, size - 4096, prog.insn, prog.n, 10000000, &r), NPU_RUN_DONE);
    cr_assert_eq(npu_vk_golden(NPU_DTYPE_BF16, &k, gold, size), 0);
    for (int r = 0; r < rows; r++) /* dY16's rows fill their words: stored whole, zero past len */
        memset(gold + dy + (size_t)r * yp + 2 * len, 0, yp - 2 * len);
    int same = memcmp(img, gold, b + 64) == 0;
    cr_assert_eq(same, !plant, "%s", plant ? "the planted pitch fault is caught" : "NPU == golden image");
    uint64_t busy = 0;
    cr_assert_eq(npu_vk_vec_busy(&c, &k, &busy, why, sizeof why), 0, "%s", why);
    cr_assert_eq(r.cnt[NPU_CNT_vec_busy], busy, "vec_busy %llu, predicted %llu",
                 (unsigned long long)r.cnt[NPU_CNT_vec_busy], (unsigned long long)busy);
    npu_prog_free(&prog);
    free(gold);
    npu_sim_close(sim);
}

Test(vkern, pitched_chunked_sum_s2) { pitched_on_model(2, 1500, 5, 0); }
Test(vkern, pitched_chunked_sum_s8) { pitched_on_model(8, 1100, 12, 0); }
Test(vkern, pitched_fault_caught) { pitched_on_model(2, 1500, 5, 1); }

Test(step_plan, kernels_and_layout)
{
    npu_cfg_t c = bf16_cfg(8);
    int dims[4] = {20, 37, 24, 10};
    npu_step_plan_t p;
    char why[256];
    cr_assert_eq(npu_step_plan_mlp(&c, dims, 3, 13, 0.1f, 0.9f, 1e-4f, 0, 100, &p, why, sizeof why), 0, "%s", why);
    cr_assert_eq(p.nk, 7 * 3 - 2, "fwd 2 per layer; bwd grad, dW, sgd per layer, dX and relu_bwd below the top");
    cr_assert_eq(p.n_fwd, 6);
    cr_assert_str_eq(p.k[0].name, "fwd L1 gemm");
    cr_assert_str_eq(p.k[6].name, "bwd L3 grad_bias");
    cr_assert_str_eq(p.k[p.nk - 1].name, "update L1 sgd");
    uint64_t B = (uint64_t)npu_cfg_word(&c);
    cr_assert_eq(p.base % B, 0);
    for (int i = 0; i < p.nt; i++) {
        cr_assert_eq(p.t[i].dram % B, 0, "%s beat-aligned", p.t[i].name);
        if (i)
            cr_assert_geq(p.t[i].dram, p.t[i - 1].dram + p.t[i - 1].bytes, "%s after %s", p.t[i].name, p.t[i - 1].name);
    }
    cr_assert_eq(p.t[npu_step_tensor_find(&p, "W16[2]")].bytes, 37 * 24 * 2);
    cr_assert_eq(npu_step_tensor_find(&p, "H16[3]"), -1, "the last layer keeps fp32 logits");
    for (int i = 0; i < p.nk; i++) /* the dX GEMM of a layer comes before its update */
        if (p.k[i].kind == NPU_SK_VEC && p.k[i].phase == NPU_SK_UPDATE)
            cr_assert(i > 0 && (p.k[i - 1].layer != p.k[i].layer || p.k[i].layer == 1 ||
                                strstr(p.k[i - 1].name, "relu_bwd")), "%s", p.k[i].name);
    npu_step_plan_free(&p);
}

Test(step_scale, rules)
{
    cr_assert_eq(npu_step_q16(1.0), 11, "1 * 8 * 2^11 = 16384 <= 32767 < 32768");
    cr_assert_eq(npu_step_q16(0.5), 12);
    cr_assert_eq(npu_step_q16(1.0 / 32), 16);
    cr_assert_eq(npu_step_q16(4096), 0, "at least 0");
    cr_assert_eq(npu_step_q16(0), 11, "an all-zero tensor: the nominal magnitude 1, not the finest scale");
    cr_assert_eq(npu_step_q32(1.0), 24, "1 * 64 * 2^24 = 2^30 <= 2^31 - 1");
    int16_t A, B;
    unsigned s;
    double err;
    /* vb = 0.9 vb + db, vb at q 20, db at q 28: A = 0.9 * 2^s, B = 2^(s - 8); s = 15 keeps A in int16 */
    cr_assert_eq(npu_step_axpby_q(0.9, 1.0, 20, 20, 28, &A, &B, &s, &err), 0);
    cr_assert_eq(s, 15u);
    cr_assert_eq(A, 29491);
    cr_assert_eq(B, 128);
    cr_assert_lt(err, 1e-4);
    /* w = w - 0.05 v, w and v at q 24: A = 2^14, B = round(-0.05 * 2^14) = -819 */
    cr_assert_eq(npu_step_axpby_q(1.0, -0.05, 24, 24, 24, &A, &B, &s, &err), 0);
    cr_assert_eq(s, 14u);
    cr_assert_eq(A, 16384);
    cr_assert_eq(B, -819);
    cr_assert_float_eq(err, fabs(-819.0 / 16384 / -0.05 - 1), 1e-12);
    /* b's q 16 more than a's and d's: B = 2^(s - 16) with A = 0.9 * 2^s <= 32767 rounds to 0 */
    cr_assert_eq(npu_step_axpby_q(0.9, 1.0, 10, 10, 26, &A, &B, &s, &err), -1);
}

/* The q of vector kernel i's tensor t: its plan tensor's, or dW32's for the update's scratch t32. */
static int tq(const npu_step_plan_t *p, int i, int t)
{
    const npu_step_kernel_t *k = &p->k[i];
    if (!strcmp(k->v.t[t].name, "t32"))
        return p->t[p->l[k->layer].dw32].q;
    return p->t[npu_step_tensor_find(p, k->v.t[t].name)].q;
}

/* An int16 plan's scales follow from the free ones, and each kernel's shifts and scalars from them. */
/* CNNs: after npu_step_q_cap_sums no derived 32-bit scale of a sum over pixels (dW32, dZ32 and
 * db32 of the layer below) nor the logits' exceeds the one npu_step_q32 gives its magnitude; with
 * these ranges the uncapped scales do. */
Test(step_scale, cnn_sum_caps)
{
    npu_step_range_t r;
    npu_step_q_t q;
    memset(&r, 0, sizeof r);
    r.x = 1;
    double w[4] = {0, 0.5, 0.3, 0.2}, h[4] = {0, 2, 3, 0}, dz[4] = {0, 1e-4, 1e-4, 3e-3},
           dw[4] = {0, 0.5, 0.3, 0.05}, db[4] = {0, 0.3, 0.05, 0.01};
    for (int l = 1; l <= 3; l++)
        r.w[l] = w[l], r.h[l] = h[l], r.dz[l] = dz[l], r.dw[l] = dw[l], r.db[l] = db[l];
    npu_step_q_pick(&r, 3, 0.9f, &q);
    int over = 0;
    for (int l = 2; l <= 3; l++)
        over += q.dz16[l] + q.w[l] > npu_step_q32(r.db[l - 1]);
    cr_assert_gt(over, 0, "uncapped, a bias gradient's scale exceeds its magnitude's");
    r.z_top = 4;
    cr_assert_gt(q.h[2] + q.w[3], npu_step_q32(r.z_top), "uncapped, the logits' scale exceeds theirs");
    npu_step_q_cap_sums(&r, 3, &q);
    cr_assert_leq(q.h[2] + q.w[3], npu_step_q32(r.z_top), "Z32[3], the logits");
    cr_assert_leq(q.vw[3], q.w[3] + NPU_STEP_W32_EXTRA);
    for (int l = 1; l <= 3; l++) {
        int in = l == 1 ? q.x : q.h[l - 1];
        cr_assert_leq(q.dz16[l] + in, npu_step_q32(r.dw[l]), "dW32[%d]", l);
        if (l > 1) {
            cr_assert_leq(q.dz16[l] + q.w[l], npu_step_q32(r.db[l - 1]), "db32[%d]", l - 1);
            cr_assert_leq(q.dz16[l] + q.w[l], npu_step_q32(r.dz[l - 1]), "dZ32[%d]", l - 1);
        }
    }
}

/* The nominal ranges are all defined: the logits' magnitude unknown (0), which
 * npu_step_q_cap_sums reads; it was left unset, so a CNN plan's nominal int16 scales followed
 * the stack's contents (a multi-band step at lr 0.02 refused at random: "the scalars 1, -0.02 do
 * not fit int16"). */
Test(step_scale, nominal_ranges_defined)
{
    npu_step_range_t r;
    memset(&r, 0xA5, sizeof r);
    npu_step_range_nominal(3, 8, &r);
    cr_assert_eq(r.z_top, 0.0, "the logits' range: unknown");
    cr_assert_eq(r.x, 1.0);
    for (int l = 0; l <= 3; l++)
        cr_assert(r.w[l] == 1 && r.h[l] == 4 && r.dz[l] == 1.0 / 8 && r.dw[l] == 1 && r.db[l] == 1, "layer %d", l);
}

/* The nominal ranges of a 3-layer MLP at batch 13 and their free scales (momentum 0.9). */
static void nominal_q13(npu_step_range_t *r, npu_step_q_t *q)
{
    npu_step_range_nominal(3, 13, r);
    npu_step_q_pick(r, 3, 0.9f, q);
}

Test(step_scale, int16_plan)
{
    npu_cfg_t c = test_cfg(8);
    int dims[4] = {20, 37, 24, 10};
    npu_step_plan_t p;
    npu_step_range_t r;
    npu_step_q_t q;
    char why[256];
    nominal_q13(&r, &q);
    cr_assert_eq(npu_step_plan_mlp_q(&c, dims, 3, 13, 0.1f, 0.9f, 1e-4f, 0, &q, 0, &p, why, sizeof why), 0, "%s", why);
    cr_assert(p.int16);
    /* wd rounds coarsest: wd * 2^(q(dW32) - q(W32)) * 2^14 = 1e-4 * 2^15 = 3.3 -> 3 in layer 3 */
    cr_assert_float_eq(p.scalar_err, 1 - 3 / ldexp(1e-4, 15), 1e-6, "%g", p.scalar_err);
#define QT(name) p.t[npu_step_tensor_find(&p, name)].q
    cr_assert_eq(QT("X16"), q.x);
    cr_assert_eq(QT("Z32[1]"), q.x + q.w[1], "a GEMM's output: the sum of its operands' q");
    cr_assert_eq(QT("Z32[2]"), q.h[1] + q.w[2]);
    cr_assert_eq(QT("b32[2]"), QT("Z32[2]"), "the bias at Z32's q");
    cr_assert_eq(QT("W32[2]"), q.w[2] + NPU_STEP_W32_EXTRA);
    cr_assert_eq(QT("dZ32[3]"), q.dz_top);
    cr_assert_eq(QT("dZ32[2]"), QT("dH32[3]"), "dZ32 = relu_bwd(dH32)");
    cr_assert_eq(QT("dH32[3]"), q.dz16[3] + q.w[3]);
    cr_assert_eq(QT("dW32[2]"), q.h[1] + q.dz16[2]);
    cr_assert_eq(QT("db32[2]"), QT("dZ32[2]"));
    for (int i = 0; i < p.nk; i++) /* every NARROW shifts by the difference of its tensors' q */
        for (int o = 0; p.k[i].kind == NPU_SK_VEC && o < p.k[i].v.nop; o++) {
            const npu_vk_op_t *op = &p.k[i].v.op[o];
            const npu_vkern_t *v = &p.k[i].v;
            if (op->vop == NPU_VOP_NARROW)
                cr_assert_eq((int)op->shift, p.t[npu_step_tensor_find(&p, v->t[op->a].name)].q -
                                                 p.t[npu_step_tensor_find(&p, v->t[op->d].name)].q,
                             "%s", p.k[i].name);
        }
    for (int i = 0; i < p.nk; i++) /* every AXPBY's int16 scalars against lr, mu, wd and 1 */
        for (int o = 0; p.k[i].kind == NPU_SK_VEC && o < p.k[i].v.nop; o++) {
            const npu_vkern_t *v = &p.k[i].v;
            const npu_vk_op_t *op = &v->op[o];
            if (op->vop != NPU_VOP_AXPBY)
                continue;
            int qa = tq(&p, i, op->a), qb = tq(&p, i, op->b), qd = tq(&p, i, op->d);
            double a = (int16_t)op->alpha / ldexp(1, (int)op->shift + qd - qa);
            double b = (int16_t)op->beta / ldexp(1, (int)op->shift + qd - qb);
            double want_a = strstr(v->t[op->d].name, "t32") ? 1e-4 : v->t[op->a].name[0] == 'V' ? 0.9 : 1;
            double want_b = v->t[op->d].name[0] == 'V' || strstr(v->t[op->d].name, "t32") ? 1 : -0.1;
            cr_assert_float_eq(a, want_a, want_a * (want_a < 1e-3 ? 0.1 : 1e-3), "%s op %d alpha %g", p.k[i].name, o, a);
            cr_assert_float_eq(b, want_b, fabs(want_b) * 1e-3, "%s op %d beta %g", p.k[i].name, o, b);
        }
    /* the last update's W32 -= lr VW: -lr in int16 at the shift */
    const npu_vk_op_t *u = &p.k[p.nk - 1].v.op[2];
    double lr = -(double)(int16_t)u->beta / ldexp(1, (int)u->shift + QT("W32[1]") - QT("VW[1]"));
    cr_assert_float_eq(lr, 0.1, 0.1 * 0.002);
    cr_assert_eq((int16_t)u->alpha, 1 << u->shift, "1 at shift s");
    npu_step_plan_free(&p);
    q.vw[1] = q.w[1] + NPU_STEP_W32_EXTRA - 30; /* VW far coarser than W32: -lr does not fit */
    cr_assert_eq(npu_step_plan_mlp_q(&c, dims, 3, 13, 0.1f, 0.9f, 1e-4f, 0, &q, 0, &p, why, sizeof why), -1);
    cr_assert(strstr(why, "update L1 sgd") && strstr(why, "do not fit int16"), "%s", why);
    npu_step_q_pick(&r, 3, 0.9f, &q);
    q.h[1] = q.x + q.w[1] + 1; /* H16 finer than Z32: NARROW cannot shift left */
    cr_assert_eq(npu_step_plan_mlp_q(&c, dims, 3, 13, 0.1f, 0.9f, 1e-4f, 0, &q, 0, &p, why, sizeof why), -1);
    cr_assert(strstr(why, "fwd L1 bias_relu") && strstr(why, "NARROW"), "%s", why);
#undef QT
}

/* Where W32 is so much finer than dW32 that one AXPBY's int16 scalars cannot hold wd beside 1
 * (the plan was refused: "the scalars 0.0001, 1 do not fit int16", a 2-sample batch's CNN at
 * small), the decay is a MUL by wd at its own shift, then an ADD: wd within 0.1 %. Two steps of
 * that plan on the functional model are bit-exact (the runtime checks every kernel). */
Test(step_scale, decay_as_mul_where_the_axpby_cannot_hold_wd)
{
    npu_cfg_t c = test_cfg(8);
    int dims[4] = {20, 37, 24, 10};
    npu_step_plan_t p;
    npu_step_range_t r;
    npu_step_q_t q;
    char why[256];
    nominal_q13(&r, &q);
    q.dz16[1] = q.w[1] + NPU_STEP_W32_EXTRA - q.x - 3; /* dW32[1] three bits coarser than W32[1] */
    cr_assert_eq(npu_step_plan_mlp_q(&c, dims, 3, 13, 0.1f, 0.9f, 1e-4f, 0, &q, 0, &p, why, sizeof why), 0, "%s", why);
    const npu_vkern_t *u = NULL;
    for (int i = 0; i < p.nk; i++)
        if (!strcmp(p.k[i].name, "update L1 sgd"))
            u = &p.k[i].v;
    cr_assert_not_null(u);
    cr_assert(u->op[0].vop == NPU_VOP_MUL && u->op[0].wide && u->op[1].vop == NPU_VOP_ADD, "MUL then ADD");
    int qw = p.t[p.l[1].w32].q, qt = p.t[p.l[1].dw32].q;
    double wd = (int16_t)u->op[0].alpha / ldexp(1, (int)u->op[0].shift + qt - qw);
    cr_assert_float_eq(wd, 1e-4, 1e-7, "wd %g", wd);
    int16_t A, B;
    unsigned s;
    double err;
    cr_assert_eq(npu_step_axpby_q(1e-4, 1.0, qt, qw, qt, &A, &B, &s, &err), -1, "one AXPBY cannot hold it");
    npu_step_plan_free(&p);
    npu_funcsim_config(&c);
    npu_sim_t *sim = npu_sim_open(NULL);
    npu_step_run_t st;
    cr_assert_eq(npu_step_run_init_q(&st, &c, sim, dims, 3, 13, 0.1f, 0.9f, 1e-4f, 0, &q, 50000000), 0, "%s", st.why);
    static float w[3][37 * 24], b[3][37], x[13 * 20], lg[13 * 10], dl[13 * 10];
    float *wp[3] = {w[0], w[1], w[2]}, *bp[3] = {b[0], b[1], b[2]};
    for (int i = 0; i < 37 * 24; i++)
        w[0][i] = w[1][i] = w[2][i] = (float)((i * 7 % 13) - 6) / 16.0f;
    for (int i = 0; i < 13 * 20; i++)
        x[i] = (float)(i % 5) / 4.0f;
    npu_step_run_params(&st, wp, bp);
    for (int k = 0; k < 2; k++) {
        cr_assert_eq(npu_step_forward(&st, x, 13, lg), 0, "%s", st.why);
        for (int i = 0; i < 13 * 10; i++)
            dl[i] = (float)((i % 10) - 4.5) / 130.0f;
        cr_assert_eq(npu_step_backward(&st, dl), 0, "%s", st.why);
    }
    npu_step_run_free(&st);
    npu_sim_close(sim);
}


/* Twelve steps of a 3-layer MLP on one batch, on the functional model: every kernel bit-exact and
 * its counters right (the runtime checks both), the loss falling. */
#define STEPS 12
/* The end of a run on the model: the engine, the simulator, the layers' parameters and the host
 * buffers. */
static void run_free(npu_step_run_t *s, npu_sim_t *sim, int layers, float **w, float **b, float *in, float *lg,
                     float *dl, uint8_t *y)
{
    npu_step_run_free(s);
    npu_sim_close(sim);
    for (int l = 0; l < layers; l++) {
        free(w[l]);
        free(b[l]);
    }
    free(in);
    free(lg);
    free(dl);
    free(y);
}

/* res_banks > 0: with that many SPM banks resident (compile/step/step_res.h); then every whole-
 * tensor transfer's bytes on the model equal the scheduler's per tensor, and the step moves fewer
 * DRAM bytes than without residency. */
static uint64_t step_bytes(const npu_step_run_t *s)
{
    uint64_t b = 0;
    for (int g = 0; g < NPU_NUM_TAGS; g++)
        b += g == NPU_TAG_PROG ? 0 : s->fwd.rd[g] + s->fwd.wr[g] + s->bwd.rd[g] + s->bwd.wr[g];
    return b;
}

/* Two training steps on the functional model with the residency options `overlap` (step_res.h);
 * returns the last step's DRAM bytes (operands and results, not the programs). */
static uint64_t steps_res_ov(int S, int int16, const int *dims, int layers, int batch, float lr, int res_banks,
                             int overlap)
{
    npu_cfg_t c = int16 ? test_cfg(S) : bf16_cfg(S);
    npu_funcsim_config(&c);
    npu_sim_t *sim = npu_sim_open(NULL);
    cr_assert_not_null(sim);
    npu_step_run_t s;
    int rc = npu_step_run_init(&s, &c, sim, dims, layers, batch, lr, 0.9f, 1e-3f, 0, 50000000);
    cr_assert_eq(rc, 0, "%s", s.why);
    if (res_banks)
        cr_assert_eq(npu_step_run_resident_ex(&s, res_banks, 0, overlap), 0, "%s", s.why);
    float *w[NPU_STEP_MAX_LAYERS], *b[NPU_STEP_MAX_LAYERS];
    uint64_t x = 0x5EED + (uint64_t)S;
    for (int l = 0; l < layers; l++) {
        size_t n = (size_t)dims[l] * dims[l + 1];
        w[l] = malloc(n * sizeof(float));
        b[l] = calloc((size_t)dims[l + 1], sizeof(float));
        for (size_t i = 0; i < n; i++)
            w[l][i] = ((float)(test_rand(&x) % 2001) - 1000.0f) / 1000.0f / sqrtf((float)dims[l]);
    }
    npu_step_run_params(&s, w, b);
    int C = dims[layers];
    float *in = malloc((size_t)batch * dims[0] * sizeof(float)), *lg = malloc((size_t)batch * C * sizeof(float));
    float *dl = malloc((size_t)batch * C * sizeof(float));
    uint8_t *y = malloc((size_t)batch);
    for (int i = 0; i < batch * dims[0]; i++)
        in[i] = (float)(test_rand(&x) % 17) / 16.0f;
    for (int r = 0; r < batch; r++)
        y[r] = (uint8_t)(test_rand(&x) % (uint64_t)C);
    double first = 0, loss = 0;
    for (int it = 0; it < STEPS; it++) {
        cr_assert_eq(npu_step_forward(&s, in, batch, lg), 0, "step %d: %s", it, s.why);
        loss = npu_softmax_xent(lg, y, batch, C, dl);
        if (!it)
            first = loss;
        if (getenv("STEP_DEBUG"))
            fprintf(stderr, "S=%d int16=%d step %d loss %g\n", S, int16, it, loss);
        cr_assert_eq(npu_step_backward(&s, dl), 0, "step %d: %s", it, s.why);
        cr_assert_eq(s.bwd.host_wr, (uint64_t)batch * C * 4, "the host writes only dZ32 of the logits");
    }
    if (res_banks) { /* every tensor's bytes as the estimator's, transfers overlapped or not */
        npu_est_kplan_t *e = calloc(1, sizeof *e);
        char why[256];
        cr_assert_not_null(e);
        cr_assert_eq(npu_estimate_step_res_ex(&c, dims, layers, batch, 0, res_banks, 0, overlap, e, why, sizeof why), 0,
                     "%s", why);
        for (int t = 0; t < s.plan.nt; t++) {
            cr_assert_eq(s.t_in[t], e->t[t].in, "%s in", s.plan.t[t].name);
            cr_assert_eq(s.t_out[t], e->t[t].out, "%s out", s.plan.t[t].name);
        }
        free(e);
    }
    cr_assert_eq(s.checked, (uint64_t)STEPS * (uint64_t)s.plan.nk);
    cr_assert_lt(loss, 0.9 * first, "loss %g after the steps, %g at first", loss, first);
    uint64_t bytes = step_bytes(&s);
    if (getenv("STEP_DEBUG") && res_banks)
        fprintf(stderr, "resident: %d transfers, %d stays, %d demoted, %llu bytes\n", s.res->nx,
                s.res->nstay, s.res->demoted, (unsigned long long)bytes);
    run_free(&s, sim, layers, w, b, in, lg, dl, y);
    return bytes;
}

/* steps_res_ov with the default options (prefetch, look-ahead, the plan choice's). */
static uint64_t steps_res(int S, int int16, const int *dims, int layers, int batch, float lr, int res_banks)
{
    return steps_res_ov(S, int16, dims, layers, batch, lr, res_banks, NPU_RES_PREFETCH | NPU_RES_LOOKAHEAD);
}

static void steps_on_model(int S, int int16, const int *dims, int layers, int batch, float lr)
{
    steps_res(S, int16, dims, layers, batch, lr, 0);
}

Test(step_run, mlp_resident_s2)
{
    int dims[4] = {20, 37, 24, 10};
    for (int int16 = 0; int16 < 2; int16++) {
        uint64_t plain = steps_res(2, int16, dims, 3, 13, 0.5f, 0), res = steps_res(2, int16, dims, 3, 13, 0.5f, 1);
        cr_assert_lt(res, plain * 3 / 4, "%llu bytes resident, %llu without", (unsigned long long)res,
                     (unsigned long long)plain);
    }
}

/* The scheduler counts bytes, first fit places addresses: at this MLP's whole resident bank
 * (S = 2) fragmentation leaves one tensor no range. The plan keeps the largest capacity that
 * places, to the word: one word more does not place (it is cut again), and it is above the
 * capacity less the whole tensor that found no range (the cut alone, which the bisection
 * refines; planted: without it the plan sits at that cut and one word more places). With every
 * tensor resident (NPU_RES_NO_BYPASS): with the update's W32 and VW streamed the bank places. */
Test(step_run, resident_cap_bisected_to_the_word)
{
    npu_cfg_t c = bf16_cfg(2);
    int dims[4] = {20, 37, 24, 10};
    npu_step_plan_t p;
    npu_step_res_t full, more;
    char why[256];
    uint64_t word = (uint64_t)npu_cfg_word(&c);
    int ov = NPU_RES_PREFETCH | NPU_RES_LOOKAHEAD | NPU_RES_NO_BYPASS; /* bypassed, the update's tensors leave room */
    cr_assert_eq(npu_step_plan_mlp(&c, dims, 3, 13, 0.5f, 0.9f, 1e-3f, 0, 0, &p, why, sizeof why), 0, "%s", why);
    cr_assert_eq(npu_step_res_plan_ex(&c, &p, 1, 0, ov, &full), 0, "%s", full.why);
    uint64_t bank = (uint64_t)c.spm_bank_words * word, got = full.cap_bytes;
    cr_assert_lt(got, bank, "the whole bank placed (%llu bytes): no fragmentation to test", (unsigned long long)bank);
    cr_assert_eq(npu_step_res_plan_ex(&c, &p, 1, got + word, ov, &more), 0, "%s", more.why);
    cr_assert_lt(more.cap_bytes, got + word, "%llu + one word placed", (unsigned long long)got);
    cr_assert_gt(got, bank - 444 * word, "%llu bytes: no more than the cut by the whole tensor",
                 (unsigned long long)got);
    npu_step_res_free(&more);
    npu_step_res_free(&full);
    npu_step_plan_free(&p);
}

/* Kernel named `name`'s scheduler step in plan p under residency r: whether tensor t is on its
 * SPM side (1), its DRAM side (0), or not touched (-1). */
static int side_of(const npu_step_plan_t *p, const npu_step_res_t *r, const char *name, int t)
{
    for (int i = 0; i < p->nk; i++) {
        const npu_sched_step_t *ss = &r->ss[npu_step_res_step(p, i)];
        if (strcmp(p->k[i].name, name))
            continue;
        for (int a = 0; a < ss->n_in; a++)
            if (ss->in[a] == t)
                return 1;
        for (int a = 0; a < ss->n_dram_in; a++)
            if (ss->dram_in[a] == t)
                return 0;
    }
    return -1;
}

/* Belady with bypass (NPU_RES_BYPASS): the tensors one kernel alone touches (each update's W32 and
 * VW, read and written by its SGD) are on that kernel's DRAM side, so they take no resident room;
 * a tensor two kernels touch (dW32, written by the dW GEMM and read by the SGD) stays SPM side;
 * NPU_RES_NO_BYPASS keeps them all resident. Then two training steps with bypass on the functional
 * model: bit-exact (the runtime checks every kernel), every tensor's bytes the estimator's, fewer
 * than without residency. */
Test(step_run, resident_bypass_streams_single_use)
{
    npu_cfg_t c = bf16_cfg(2);
    int dims[4] = {20, 37, 24, 10};
    npu_step_plan_t p;
    npu_step_res_t on, off;
    char why[256], n[32];
    cr_assert_eq(npu_step_plan_mlp(&c, dims, 3, 13, 0.5f, 0.9f, 1e-3f, 0, 0, &p, why, sizeof why), 0, "%s", why);
    int base = NPU_RES_PREFETCH | NPU_RES_LOOKAHEAD;
    cr_assert_eq(npu_step_res_plan_ex(&c, &p, 1, 0, base | NPU_RES_BYPASS, &on), 0, "%s", on.why);
    cr_assert_eq(npu_step_res_plan_ex(&c, &p, 1, 0, base | NPU_RES_NO_BYPASS, &off), 0, "%s", off.why);
    for (int l = 1; l <= 3; l++) {
        snprintf(n, sizeof n, "update L%d sgd", l);
        int w32 = p.l[l].w32, vw = p.l[l].vw, dw = p.l[l].dw32;
        cr_assert_eq(side_of(&p, &on, n, w32), 0, "%s: W32 bypassed", n);
        cr_assert_eq(side_of(&p, &on, n, vw), 0, "%s: VW bypassed", n);
        cr_assert_eq(side_of(&p, &on, n, dw), 1, "%s: dW32 (the dW GEMM's output too) resident", n);
        cr_assert_eq(side_of(&p, &off, n, w32), 1, "%s: W32 resident without bypass", n);
    }
    npu_step_res_free(&on);
    npu_step_res_free(&off);
    npu_step_plan_free(&p);
    for (int int16 = 0; int16 < 2; int16++) {
        uint64_t plain = steps_res(2, int16, dims, 3, 13, 0.5f, 0);
        uint64_t res = steps_res_ov(2, int16, dims, 3, 13, 0.5f, 1, base | NPU_RES_BYPASS);
        cr_assert_lt(res, plain, "%llu bytes resident with bypass, %llu without residency", (unsigned long long)res,
                     (unsigned long long)plain);
    }
}

/* A cost for npu_step_res_plan_by that counts its calls and prefers the plan whose searched
 * options (NPU_RES_NO_XT, NPU_RES_BYPASS) are exactly `want` (1, else 2). */
typedef struct pick_ctx {
    int want, calls;
} pick_ctx_t;

static uint64_t pick_cost(void *ctx, const npu_step_plan_t *p, const npu_step_res_t *r)
{
    pick_ctx_t *k = ctx;
    (void)p;
    k->calls++;
    return (r->overlap & (NPU_RES_NO_XT | NPU_RES_BYPASS)) == k->want ? 1 : 2;
}

/* npu_step_res_plan_by costs every combination of the options that change the plan and keeps the
 * cheapest: for an MLP those are NPU_RES_NO_XT (its dW and dX GEMMs read an operand transposed)
 * and NPU_RES_BYPASS, so 4 plans are costed, and whichever combination the cost prefers is the
 * one kept (planted: a greedy descent, or a search skipping a combination, misses one of them). An
 * option the caller sets stays set and is not searched; NPU_RES_NO_BYPASS takes bypass out. */
Test(step_run, resident_plan_choice_every_combination)
{
    npu_cfg_t c = bf16_cfg(2);
    int dims[4] = {20, 37, 24, 10}, base = NPU_RES_PREFETCH | NPU_RES_LOOKAHEAD;
    static const int wants[4] = {0, NPU_RES_NO_XT, NPU_RES_BYPASS, NPU_RES_NO_XT | NPU_RES_BYPASS};
    npu_step_plan_t p;
    npu_step_res_t r;
    char why[256];
    cr_assert_eq(npu_step_plan_mlp(&c, dims, 3, 13, 0.5f, 0.9f, 1e-3f, 0, 0, &p, why, sizeof why), 0, "%s", why);
    for (int w = 0; w < 4; w++) {
        pick_ctx_t k = {wants[w], 0};
        cr_assert_eq(npu_step_res_plan_by(&c, &p, 1, 0, base, pick_cost, &k, &r), 0, "%s", r.why);
        cr_assert_eq(k.calls, 4, "plans costed: %d", k.calls);
        int got = r.overlap & (NPU_RES_NO_XT | NPU_RES_BYPASS);
        cr_assert_eq(got, wants[w], "kept options 0x%x, the cost prefers 0x%x", got, wants[w]);
        npu_step_res_free(&r);
    }
    pick_ctx_t k = {NPU_RES_NO_XT | NPU_RES_BYPASS, 0};
    cr_assert_eq(npu_step_res_plan_by(&c, &p, 1, 0, base | NPU_RES_NO_XT | NPU_RES_NO_BYPASS, pick_cost, &k, &r), 0,
                 "%s", r.why);
    cr_assert_eq(k.calls, 1, "both options fixed by the caller: one plan");
    cr_assert_eq(r.overlap & NPU_RES_BYPASS, 0);
    npu_step_res_free(&r);
    npu_step_plan_free(&p);
}

/* A bias gradient over more batch rows than one chunk holds (here 32 rows of 256): the SUM in
 * blocks through a one-row scratch, bit-exact against the golden model's block order, in both
 * dtypes; a batch that fits keeps the plain row order (no scratch). */
Test(step_run, mlp_bias_sum_in_blocks)
{
    int dims[3] = {20, 256, 10};
    npu_cfg_t c = bf16_cfg(2);
    npu_step_plan_t p;
    char why[256];
    cr_assert_eq(npu_step_plan_mlp(&c, dims, 2, 32, 0.1f, 0.9f, 0, 0, 0, &p, why, sizeof why), 0, "%s", why);
    int blocks = 0, plain = 0;
    for (int i = 0; i < p.nk; i++)
        if (strstr(p.k[i].name, "grad_bias")) {
            blocks += p.k[i].v.sum_chunk > 0 && p.k[i].v.sum_chunk < p.k[i].v.rows;
            plain += p.k[i].v.sum_chunk == 0;
        }
    cr_assert_eq(blocks, 1, "layer 1's 256-wide bias gradient sums in blocks");
    cr_assert_eq(plain, 1, "layer 2's 10-wide one in one chunk");
    npu_step_plan_free(&p);
    steps_res(2, 0, dims, 2, 32, 0.05f, 0);
    steps_res(2, 1, dims, 2, 32, 0.05f, 0);
}

Test(step_run, mlp_on_model_s2)
{
    int dims[4] = {20, 37, 24, 10};
    steps_on_model(2, 0, dims, 3, 13, 0.5f);
}

Test(step_run, mlp_on_model_s2_int16)
{
    int dims[4] = {20, 37, 24, 10};
    steps_on_model(2, 1, dims, 3, 13, 0.5f);
}

Test(step_run, mlp_on_model_s8_chunked_update)
{
    int dims[3] = {300, 40, 10}; /* the first layer's update needs several chunks at S = 8 */
    npu_cfg_t c = bf16_cfg(8);
    npu_step_plan_t p;
    char why[256];
    cr_assert_eq(npu_step_plan_mlp(&c, dims, 2, 8, 0.1f, 0.9f, 0, 0, 0, &p, why, sizeof why), 0, "%s", why);
    const npu_vkern_t *u = &p.k[p.nk - 1].v;
    cr_assert_lt(npu_vk_chunk_rows(&c, u), u->rows, "chunked: %d of %d rows", npu_vk_chunk_rows(&c, u), u->rows);
    npu_step_plan_free(&p);
    steps_on_model(8, 0, dims, 2, 8, 0.05f);
    steps_on_model(8, 1, dims, 2, 8, 0.05f);
}

/* Each fused convolution backward of the last step: dY read once; the first layer's writes no dX
 * and reads no W (its dX waves are dropped), the others do. */
static void conv_bwd_bytes(const npu_step_run_t *s)
{
    for (int i = 0; i < s->plan.nk; i++)
        if (s->plan.k[i].kind == NPU_SK_CONV_BWD) {
            int l = s->plan.k[i].layer;
            const npu_step_tensor_t *dz = &s->plan.t[s->plan.l[l].dz16];
            cr_assert_eq(s->last[i].wr[NPU_TAG_DX] == 0, l == 1, "L%d writes %llu dX bytes", l,
                         (unsigned long long)s->last[i].wr[NPU_TAG_DX]);
            cr_assert_eq(s->last[i].rd[NPU_TAG_W] == 0, l == 1, "L%d reads W only for dX", l);
            cr_assert_eq(s->last[i].rd[NPU_TAG_DY], dz->bytes, "L%d reads dZ16 once", l);
        }
}

/* A CNN's whole steps on the functional model (bf16): conv c4 (3x3 s1 p1) -> conv c8 (3x3 s2 p1)
 * -> fc 10 on H x W images, every kernel (conv fwd, fused conv bwd, pitched vector kernels,
 * transposes, GEMMs) bit-exact against the golden image, the host writing only the batch and the
 * loss gradient, the loss falling on a repeated batch (learning rate lr). plant: W16[2] changed
 * behind the runtime's back after the first step: the next forward's conv differs from the golden
 * model. */
static void cnn_on_model(int S, int int16, int batch, int H, int steps, int plant, float lr)
{
    npu_cfg_t c = int16 ? test_cfg(S) : bf16_cfg(S);
    npu_conv_t cv[2] = {{batch, 1, H, H, 4, 3, 3, 1, 1, 1, 0}, {batch, 4, H, H, 8, 3, 3, 2, 1, 1, 0}};
    int oh = npu_conv_oh(&cv[1]), fc[2] = {oh * oh * 8, 10}, C = 10, n_in = H * H;
    npu_funcsim_config(&c);
    npu_sim_t *sim = npu_sim_open(NULL);
    npu_step_run_t s;
    int rc = npu_step_run_init_cnn(&s, &c, sim, cv, 2, NULL, fc, 1, batch, lr, 0.9f, 1e-3f, 0, NULL, 50000000);
    cr_assert_eq(rc, 0, "%s", s.why);
    size_t nw[3] = {9 * 4 * 1, 9 * 8 * 4, (size_t)fc[0] * 10}, nb[3] = {4, 8, 10};
    float *w[3], *b[3];
    uint64_t x = 0xC11 + (uint64_t)S;
    for (int l = 0; l < 3; l++) {
        w[l] = malloc(nw[l] * sizeof(float));
        b[l] = calloc(nb[l], sizeof(float));
        for (size_t i = 0; i < nw[l]; i++)
            w[l][i] = ((float)(test_rand(&x) % 2001) - 1000.0f) / 1000.0f / sqrtf((float)(nw[l] / nb[l]));
    }
    npu_step_run_params(&s, w, b);
    float *in = malloc((size_t)batch * n_in * sizeof(float)), *lg = malloc((size_t)batch * C * sizeof(float));
    float *dl = malloc((size_t)batch * C * sizeof(float));
    uint8_t *y = malloc((size_t)batch);
    for (int i = 0; i < batch * n_in; i++)
        in[i] = (float)(test_rand(&x) % 17) / 16.0f;
    for (int r = 0; r < batch; r++)
        y[r] = (uint8_t)(test_rand(&x) % (uint64_t)C);
    double first = 0, loss = 0;
    for (int it = 0; it < steps; it++) {
        rc = npu_step_forward(&s, in, batch, lg);
        if (plant && it == 1) {
            cr_assert_eq(rc, -1, "the planted W16[2] fault is caught");
            cr_assert(strstr(s.why, "fwd L2 conv") && strstr(s.why, "golden"), "%s", s.why);
            break;
        }
        cr_assert_eq(rc, 0, "step %d: %s", it, s.why);
        cr_assert_eq(s.fwd.host_wr, (uint64_t)batch * n_in * 2, "the host writes only the batch");
        loss = npu_softmax_xent(lg, y, batch, C, dl);
        first = it ? first : loss;
        if (getenv("STEP_DEBUG"))
            fprintf(stderr, "CNN S=%d int16=%d step %d loss %g\n", S, int16, it, loss);
        cr_assert_eq(npu_step_backward(&s, dl), 0, "step %d: %s", it, s.why);
        cr_assert_eq(s.bwd.host_wr, (uint64_t)batch * C * 4, "the host writes only dZ32 of the logits");
        conv_bwd_bytes(&s);
        const npu_step_tensor_t *W2 = &s.plan.t[s.plan.l[2].w16];
        for (int ch = 0; plant && ch < 4; ch++) /* the centre tap's filter 1: read at every pixel */
            npu_sim_dram(sim, NULL)[W2->dram + (4 * 8 + 1) * W2->pitch + 2 * ch + 1] ^= 0x40;
    }
    if (!plant) {
        cr_assert_eq(s.checked, (uint64_t)steps * (uint64_t)s.plan.nk);
        cr_assert_lt(loss, 0.9 * first, "loss %g after the steps, %g at first", loss, first);
    }
    run_free(&s, sim, 3, w, b, in, lg, dl, y);
}

Test(step_run, cnn_on_model_s2) { cnn_on_model(2, 0, 8, 8, 8, 0, 0.2f); }
Test(step_run, cnn_on_model_s8) { cnn_on_model(8, 0, 6, 6, 6, 0, 0.2f); }
Test(step_run, cnn_on_model_s2_int16) { cnn_on_model(2, 1, 8, 8, 8, 0, 0.2f); }
Test(step_run, cnn_divergence_is_caught) { cnn_on_model(2, 0, 4, 6, 3, 1, 0.2f); }
/* 16 x 16 images at S = 2: both fused backwards take several bands of dX rows per image (the
 * ring of dY rows), the first without dX; dY read once (conv_bwd_bytes). */
Test(step_run, cnn_on_model_bands)
{
    npu_cfg_t c = bf16_cfg(2);
    char why[256];
    for (int l = 0; l < 2; l++) {
        npu_conv_t cv = {2, l ? 4 : 1, 16, 16, l ? 8 : 4, 3, 3, l + 1, 1, 1, 0};
        npu_conv_bwd_plan_t bp;
        cr_assert_eq(npu_conv_bwd_plan(&c, &cv, 1, &bp, why, sizeof why), 0, "%s", why);
        cr_assert_gt(bp.dx.nbands, 1, "L%d: %d band(s)", l + 1, bp.dx.nbands);
    }
    cnn_on_model(2, 0, 2, 16, 6, 0, 0.02f);
}

Test(step_plan, cnn_kernels_and_layout)
{
    npu_cfg_t c = bf16_cfg(8); /* B = 32 bytes: 4 and 8 channels pad to one beat a pixel */
    npu_conv_t cv[2] = {{32, 1, 8, 8, 4, 3, 3, 1, 1, 1, 0}, {32, 4, 8, 8, 8, 3, 3, 2, 1, 1, 0}};
    int fc[2] = {128, 10};
    npu_step_plan_t p;
    char why[256];
    cr_assert_eq(npu_step_plan_cnn(&c, cv, 2, fc, 1, 32, 0.1f, 0.9f, 1e-4f, 0, NULL, 0, &p, why, sizeof why), 0, "%s", why);
    const char *want[] = {"fwd L1 conv", "fwd L1 bias_relu", "fwd L2 conv", "fwd L2 bias_relu", "fwd L3 gemm",
                          "fwd L3 bias", "bwd L3 grad_bias", "bwd L3 dw", "bwd L3 dx", "update L3 sgd",
                          "bwd L2 relu_grad_bias", "bwd L2 conv_bwd", "bwd L1 relu_grad_bias", "update L2 sgd",
                          "update L2 transpose", "bwd L1 conv_bwd", "update L1 sgd", "update L1 transpose"};
    cr_assert_eq(p.nk, 18);
    cr_assert_eq(p.n_fwd, 6);
    for (int i = 0; i < p.nk; i++)
        cr_assert_str_eq(p.k[i].name, want[i]);
    const npu_step_tensor_t *h1 = &p.t[npu_step_tensor_find(&p, "H16[1]")], *h2 = &p.t[npu_step_tensor_find(&p, "H16[2]")];
    cr_assert_eq(h1->pitch, 32, "H16[1]: the next convolution's X, one beat a pixel");
    cr_assert_eq(h2->pitch, 0, "H16[2]: the head's dense input");
    cr_assert_eq(p.t[npu_step_tensor_find(&p, "Z32[1]")].pitch, 32, "4 fp32 a pixel in one beat");
    cr_assert_eq(p.t[npu_step_tensor_find(&p, "X16")].pitch, 32);
    cr_assert_eq(p.l[1].dz32, -1, "a convolution's dZ32 lives in the SPM only");
    cr_assert_eq(npu_step_tensor_find(&p, "dX32[1]"), -1, "no dX of the network's input");
    cr_assert_eq(p.l[1].dh32, -1);
    cr_assert(p.k[15].cv.no_dx && !p.k[11].cv.no_dx, "bwd L1 conv_bwd without dX, L2's with");
    const npu_vkern_t *g1 = &p.k[12].v; /* 2048 pixels: the bias gradient in blocks */
    cr_assert_eq(g1->rows, 32 * 64);
    for (int t = 0; t < p.nt; t++) /* beat-aligned, no overlap */
        for (int u = t + 1; u < p.nt; u++)
            cr_assert(p.t[t].dram + p.t[t].bytes <= p.t[u].dram, "%s %s", p.t[t].name, p.t[u].name);
    npu_step_plan_free(&p);
    c = test_cfg(8); /* int16: every NARROW shifts by the difference of its tensors' q */
    cr_assert_eq(npu_step_plan_cnn(&c, cv, 2, fc, 1, 32, 0.1f, 0.9f, 1e-4f, 0, NULL, 0, &p, why, sizeof why), 0, "%s", why);
    int narrows = 0;
    for (int i = 0; i < p.nk; i++)
        for (int o = 0; p.k[i].kind == NPU_SK_VEC && o < p.k[i].v.nop; o++) {
            const npu_vkern_t *v = &p.k[i].v;
            const npu_vk_op_t *op = &v->op[o];
            if (op->vop != NPU_VOP_NARROW)
                continue;
            /* the scratch dZ32 of relu_grad_bias is at its source dH's q (op 0's a) */
            int ta = npu_step_tensor_find(&p, v->t[op->a].name[0] == 'd' && !strcmp(v->t[op->a].name, "dZ32")
                                                  ? v->t[v->op[0].a].name : v->t[op->a].name);
            int td = npu_step_tensor_find(&p, v->t[op->d].name);
            cr_assert_eq((int)op->shift, p.t[ta].q - p.t[td].q, "%s", p.k[i].name);
            narrows++;
        }
    cr_assert_eq(narrows, 8, "bias_relu x2, relu_grad_bias x2, grad_bias, sgd x3; the top bias none");
    cr_assert_eq(p.t[npu_step_tensor_find(&p, "dX32[2]")].q, p.q.dz16[2] + p.q.w[2]);
    cr_assert_eq(p.t[npu_step_tensor_find(&p, "dW32[2]")].q, p.q.h[1] + p.q.dz16[2]);
    cr_assert_eq(p.t[npu_step_tensor_find(&p, "db32[1]")].q, p.t[npu_step_tensor_find(&p, "dX32[2]")].q);
    npu_step_plan_free(&p);
}

/* A kernel whose result differs from the golden model's stops the step with its name: here the
 * NPU's copy of W16[1] is changed behind the runtime's back, so the first GEMM differs. */
Test(step_run, divergence_is_caught)
{
    int dims[3] = {12, 9, 4};
    npu_cfg_t c = bf16_cfg(2);
    npu_funcsim_config(&c);
    npu_sim_t *sim = npu_sim_open(NULL);
    npu_step_run_t s;
    cr_assert_eq(npu_step_run_init(&s, &c, sim, dims, 2, 5, 0.1f, 0.9f, 0, 0, 10000000), 0, "%s", s.why);
    float w1[12 * 9], w2[9 * 4], b1[9] = {0}, b2[4] = {0}, x[5 * 12], lg[5 * 4];
    for (int i = 0; i < 12 * 9; i++)
        w1[i] = (float)(i % 7 - 3) / 8.0f;
    for (int i = 0; i < 9 * 4; i++)
        w2[i] = (float)(i % 5 - 2) / 8.0f;
    for (int i = 0; i < 5 * 12; i++)
        x[i] = (float)(i % 3) / 2.0f;
    float *w[2] = {w1, w2}, *b[2] = {b1, b2};
    npu_step_run_params(&s, w, b);
    cr_assert_eq(npu_step_forward(&s, x, 5, lg), 0, "%s", s.why);
    npu_sim_dram(sim, NULL)[s.plan.t[s.plan.l[1].w16].dram + 2 * 9 + 1] ^= 0x40; /* W[1][0]: X[:, 1] is not zero */
    cr_assert_eq(npu_step_forward(&s, x, 5, lg), -1);
    cr_assert(strstr(s.why, "fwd L1 gemm") && strstr(s.why, "golden"), "%s", s.why);
    npu_step_run_free(&s);
    npu_sim_close(sim);
}

/* The RTL-side roofline check of the step tests and make step-fidelity: MACs / PEs, then DRAM
 * bytes / bandwidth less the DRAM model's initial credit. */
Test(step_run, below_roof)
{
    npu_cfg_t c = test_cfg(2); /* 16 PEs */
    npu_step_tally_t t;
    double need = 0, beat = npu_cfg_beat(&c), cap = 4 * beat > 2 * beat + c.dram_bw ? 4 * beat : 2 * beat + c.dram_bw;
    memset(&t, 0, sizeof t);
    t.macs = 1600;
    t.cycles = 99;
    cr_assert_eq(npu_step_below_roof(&c, &t, &need), 1);
    cr_assert_float_eq(need, 100, 1e-9);
    t.cycles = 100;
    cr_assert_eq(npu_step_below_roof(&c, &t, &need), 0);
    t.rd[NPU_TAG_X] = (uint64_t)(101 * c.dram_bw + cap); /* 101 cycles of bytes past the credit */
    cr_assert_eq(npu_step_below_roof(&c, &t, &need), 2);
    cr_assert_float_eq(need, 101, 1e-9);
    t.cycles = 101;
    cr_assert_eq(npu_step_below_roof(&c, &t, &need), 0);
}

/* npu sweep --validate's probe on the functional model: one step bit-exact, and its DRAM bytes
 * read and written equal the sweep's step point, plain and with residency at two shares (cycles
 * are the RTL's, tests/cli_checks.sh). A point planned at the build's bandwidth instead of its
 * own moves other bytes: the planted mismatch is caught. */
Test(step_run, sweep_probe_bytes_as_estimated)
{
    npu_cfg_t c = bf16_cfg(2);
    npu_sweep_space_t sp;
    char why[512];
    const int d[3] = {16, 24, 5};
    npu_funcsim_config(&c);
    cr_assert_eq(npu_sweep_parse("spm=1,2;bw=1;batch=12", &c, 8, &sp, why, sizeof why), 0, "%s", why);
    for (int res = 0; res <= 1; res++)
        for (int i = 0; i < (res ? 2 : 1); i++) {
            npu_sweep_step_t o = {d, 2, 0, res, NPU_RES_PREFETCH | NPU_RES_LOOKAHEAD, NULL, 0, NULL, 0, NULL};
            npu_sweep_point_t p;
            npu_step_probe_t m;
            npu_sweep_space_t q = sp;
            q.given[1] = res; /* plain: no share */
            cr_assert_eq(npu_sweep_step_point(&c, &o, &q, i, &p, why, sizeof why), 0);
            cr_assert(p.ok, "%s", why);
            npu_cfg_t pc = npu_sweep_point_cfg(&c, &q, i);
            npu_step_probe_opts_t po = {d, 2, p.batch, 0, p.bw, res, res ? p.spm_bytes : 0, o.overlap, NULL, 0, NULL, 0, NULL};
            cr_assert_eq(npu_step_probe(&pc, &po, &m, why, sizeof why), 0, "%s", why);
            cr_assert_eq(m.checked, m.kernels);
            cr_assert_eq(m.rd_bytes, p.in_bytes, "res %d point %d: read %llu, estimated %llu", res, i,
                         (unsigned long long)m.rd_bytes, (unsigned long long)p.in_bytes);
            cr_assert_eq(m.wr_bytes, p.out_bytes, "res %d point %d", res, i);
            if (res && i == 0) { /* planted: the probe planned at the build's 8 B/cycle */
                cr_assert_eq(npu_step_probe(&c, &po, &m, why, sizeof why), 0, "%s", why);
                cr_assert(m.rd_bytes != p.in_bytes || m.wr_bytes != p.out_bytes,
                          "the plan does not depend on the bandwidth here: pick a point where it does");
            }
        }
}

/* The same for a CNN point (its kernels through DRAM): the probe's bytes are the sweep point's. */
Test(step_run, sweep_probe_cnn_bytes_as_estimated)
{
    npu_cfg_t c = bf16_cfg(2);
    npu_sweep_space_t sp;
    npu_sweep_point_t p;
    npu_step_probe_t m;
    char why[512];
    npu_conv_t conv[1] = {{1, 1, 8, 8, 4, 3, 3, 1, 1, 1, 0}};
    int fc[2] = {8 * 8 * 4, 10};
    npu_funcsim_config(&c);
    cr_assert_eq(npu_sweep_parse("batch=4", &c, 8, &sp, why, sizeof why), 0, "%s", why);
    npu_sweep_step_t o = {NULL, 2, 0, 0, 0, conv, 1, fc, 1, NULL};
    cr_assert_eq(npu_sweep_step_point(&c, &o, &sp, 0, &p, why, sizeof why), 0);
    cr_assert(p.ok, "%s", why);
    npu_step_probe_opts_t po = {NULL, 2, p.batch, 0, p.bw, 0, 0, 0, conv, 1, fc, 1, NULL};
    cr_assert_eq(npu_step_probe(&c, &po, &m, why, sizeof why), 0, "%s", why);
    cr_assert_eq(m.checked, m.kernels);
    cr_assert_eq(m.rd_bytes, p.in_bytes, "read %llu, estimated %llu", (unsigned long long)m.rd_bytes,
                 (unsigned long long)p.in_bytes);
    cr_assert_eq(m.wr_bytes, p.out_bytes);
    uint64_t dram_in = p.in_bytes;
    o.res_banks = 1; /* the scheduler's plan, its resident copies on the RTL's counters too */
    o.overlap = NPU_RES_PREFETCH | NPU_RES_LOOKAHEAD;
    cr_assert_eq(npu_sweep_step_point(&c, &o, &sp, 0, &p, why, sizeof why), 0);
    cr_assert(p.ok, "%s", why);
    cr_assert_lt(p.in_bytes, dram_in, "resident: %llu read, through DRAM %llu", (unsigned long long)p.in_bytes,
                 (unsigned long long)dram_in);
    po.res_banks = 1;
    po.cap = p.spm_bytes;
    po.overlap = o.overlap;
    cr_assert_eq(npu_step_probe(&c, &po, &m, why, sizeof why), 0, "%s", why);
    cr_assert_eq(m.checked, m.kernels);
    cr_assert_eq(m.rd_bytes, p.in_bytes, "read %llu, estimated %llu", (unsigned long long)m.rd_bytes,
                 (unsigned long long)p.in_bytes);
    cr_assert_eq(m.wr_bytes, p.out_bytes);
}
