/* test_train_order.c - ORDER stage (train_order.h) and the explicit SPM residency planner
 * (train_residency.h): brief 000 checks T2-T8. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "compile/train/train_order.h"
#include "compile/train/train_residency.h"

static npu_order_op_t *gen(npu_order_t o, int Mt, int Nt, int Kt, long *n)
{
    size_t cap = 2u * (size_t)Mt * Nt * Kt;
    npu_order_op_t *ops = malloc(cap * sizeof *ops);
    cr_assert(ops);
    *n = npu_order_build(o, Mt, Nt, Kt, ops, cap);
    return ops;
}

/* T2: every order issues exactly 2*Mt*Nt*Kt tile-ops, each (grad, m, n, k) exactly once, and
 * every output tile has exactly one first and one last contribution, first before last. */
Test(train_order, t2_every_op_once)
{
    static const int sh[][3] = {{1, 1, 1}, {32, 4, 2}, {2, 4, 32}, {4, 4, 4}, {3, 5, 7}, {1, 6, 2}};
    for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++)
        for (int o = NPU_ORDER_SEQ; o <= NPU_ORDER_DWMAJOR; o++) {
            int Mt = sh[i][0], Nt = sh[i][1], Kt = sh[i][2];
            long n;
            npu_order_op_t *ops = gen((npu_order_t)o, Mt, Nt, Kt, &n);
            cr_assert_eq(n, 2L * Mt * Nt * Kt, "%s (%d,%d,%d): %ld ops",
                         npu_order_name((npu_order_t)o), Mt, Nt, Kt, n);
            long pts = (long)Mt * Nt * Kt;
            char *seen = calloc((size_t)(2 * pts), 1);
            int *firsts = calloc((size_t)(Mt * Kt + Kt * Nt), sizeof(int));
            int *lasts = calloc((size_t)(Mt * Kt + Kt * Nt), sizeof(int));
            int *done = calloc((size_t)(Mt * Kt + Kt * Nt), sizeof(int));
            for (long j = 0; j < n; j++) {
                const npu_order_op_t *p = &ops[j];
                cr_assert(p->grad == NPU_PHASE_DX || p->grad == NPU_PHASE_DW);
                long id = (((long)(p->grad - 1) * Mt + p->m) * Nt + p->n) * Kt + p->k;
                cr_assert_eq(seen[id], 0, "duplicate op");
                seen[id] = 1;
                long t = p->grad == NPU_PHASE_DX ? (long)p->m * Kt + p->k
                                              : (long)Mt * Kt + (long)p->k * Nt + p->n;
                cr_assert_eq(done[t], 0, "contribution after last");
                if (p->first) {
                    cr_assert_eq(firsts[t], 0);
                    firsts[t]++;
                } else
                    cr_assert_eq(firsts[t], 1, "non-first before first");
                if (p->last) {
                    lasts[t]++;
                    done[t] = 1;
                }
            }
            for (long t = 0; t < (long)Mt * Kt + Kt * Nt; t++)
                cr_assert(firsts[t] == 1 && lasts[t] == 1);
            free(seen);
            free(firsts);
            free(lasts);
            free(done);
            free(ops);
        }
}

/* The orders are the brief's loop nests (2.3-2.6). */
Test(train_order, nests_as_brief)
{
    long n;
    npu_order_op_t *o = gen(NPU_ORDER_SEQ, 2, 3, 2, &n);
    /* seq: dx (m,k,n) first, n innermost; then dw (k,n,m), m innermost */
    cr_assert(o[0].grad == NPU_PHASE_DX && o[1].n == 1 && o[3].k == 1 && o[3].n == 0);
    cr_assert(o[12].grad == NPU_PHASE_DW && o[12].m == 0 && o[13].m == 1 && o[14].n == 1);
    free(o);
    o = gen(NPU_ORDER_INTERLEAVE, 2, 3, 2, &n);
    cr_assert(o[0].grad == NPU_PHASE_DX && o[1].grad == NPU_PHASE_DW);
    cr_assert(o[2].grad == NPU_PHASE_DX && o[2].n == 1 && o[3].grad == NPU_PHASE_DW && o[3].m == 1);
    free(o);
    o = gen(NPU_ORDER_DXMAJOR, 2, 3, 2, &n);
    for (long i = 0; i < n; i += 2) { /* dx then dw on the same dY tile */
        cr_assert(o[i].grad == NPU_PHASE_DX && o[i + 1].grad == NPU_PHASE_DW);
        cr_assert(o[i].m == o[i + 1].m && o[i].n == o[i + 1].n && o[i].k == o[i + 1].k);
    }
    cr_assert(o[2].n == 1 && o[6].k == 1 && o[12].m == 1);
    cr_assert(o[0].first && o[1].first && !o[12 + 1].first && o[12 + 1].last);
    free(o);
    o = gen(NPU_ORDER_DWMAJOR, 2, 3, 2, &n);
    cr_assert(o[0].grad == NPU_PHASE_DW && o[2].m == 1 && o[4].n == 1 && o[12].k == 1);
    free(o);
    cr_assert_eq(npu_order_parse("dwmajor"), NPU_ORDER_DWMAJOR);
    cr_assert_eq(npu_order_parse("nope"), -1);
    cr_assert_eq(npu_order_build(NPU_ORDER_AUTO, 1, 1, 1, NULL, 0), -1);
}

/* T8: Algorithm 1 truth table (M,K,N) -> order; the rule (b) disagreement is logged. */
Test(train_order, t8_alg1_truth_table)
{
    static const struct { long M, K, N; npu_order_t o; } c[] = {
        {256, 256, 256, NPU_ORDER_INTERLEAVE}, {500, 128, 256, NPU_ORDER_INTERLEAVE},
        {512, 128, 256, NPU_ORDER_DXMAJOR},    {4, 4096, 1024, NPU_ORDER_DWMAJOR},
        {12544, 576, 64, NPU_ORDER_DXMAJOR},   {1024, 4096, 1024, NPU_ORDER_DWMAJOR},
        {64, 1024, 1024, NPU_ORDER_DXMAJOR},   {4, 1024, 4096, NPU_ORDER_DXMAJOR},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        npu_order_t a = npu_order_alg1(c[i].M, c[i].K, c[i].N);
        npu_order_t b = npu_order_alg1_rule_b(c[i].M, c[i].K, c[i].N);
        cr_assert_eq(a, c[i].o, "(%ld,%ld,%ld): %s", c[i].M, c[i].K, c[i].N,
                     npu_order_name(a));
        if (a != b)
            cr_log_info("T8 (M,K,N)=(%ld,%ld,%ld): rule (a) %s, rule (b) %s", c[i].M, c[i].K,
                        c[i].N, npu_order_name(a), npu_order_name(b));
        cr_assert_eq(npu_order_resolve(NPU_ORDER_AUTO, c[i].M, c[i].K, c[i].N), (int)a);
    }
    cr_assert_eq(npu_order_alg1_rule_b(4, 1024, 4096), NPU_ORDER_DWMAJOR); /* the disagreement */
}

/* ------------------------------------------------------------------ residency */

static npu_resid_counts_t res(npu_order_t o, int Mt, int Nt, int Kt, long budget)
{
    npu_resid_cfg_t c;
    memset(&c, 0, sizeof c);
    c.Mt = Mt;
    c.Nt = Nt;
    c.Kt = Kt;
    c.budget = budget;
    npu_resid_counts_t k;
    cr_assert_eq(npu_resid_eval(o, &c, &k), 0);
    return k;
}

/* T3: dxmajor (32,4,2), 32-tile window: dY loaded once each, total = compulsory 272; the
 * sequential baseline loads dY 384 times (about 2x more than needed for the dW pass). */
Test(train_residency, t3_dxmajor_reuse)
{
    npu_resid_counts_t k = res(NPU_ORDER_DXMAJOR, 32, 4, 2, 32);
    cr_assert_eq(k.loads[NPU_TENSOR_DY], 128);
    cr_assert_eq(k.loads[NPU_TENSOR_X], 64);
    cr_assert_eq(k.loads[NPU_TENSOR_W], 8);
    cr_assert_eq(k.stores[NPU_TENSOR_DX], 64);
    cr_assert_eq(k.stores[NPU_TENSOR_DW], 8);
    cr_assert_eq(k.transfers, 272);
    cr_assert_eq(k.transfers, npu_resid_compulsory(32, 4, 2));
    npu_resid_counts_t b = res(NPU_ORDER_SEQ, 32, 4, 2, 32);
    cr_assert_eq(b.loads[NPU_TENSOR_DY], 384);
    cr_assert_eq(b.transfers, 528);
    cr_log_info("T3 dxmajor (32,4,2) B=32: total %ld dY %ld; seq total %ld dY %ld", k.transfers,
                k.loads[NPU_TENSOR_DY], b.transfers, b.loads[NPU_TENSOR_DY]);
}

/* T4: dwmajor (2,4,32), 32-tile window: total = compulsory 392; dxmajor worse; baseline ~500. */
Test(train_residency, t4_dwmajor_reuse)
{
    npu_resid_counts_t k = res(NPU_ORDER_DWMAJOR, 2, 4, 32, 32);
    cr_assert_eq(k.loads[NPU_TENSOR_DY], 8);
    cr_assert_eq(k.transfers, 392);
    npu_resid_counts_t x = res(NPU_ORDER_DXMAJOR, 2, 4, 32, 32);
    npu_resid_counts_t b = res(NPU_ORDER_SEQ, 2, 4, 32, 32);
    cr_assert_gt(x.transfers, k.transfers);
    cr_assert_gt(b.transfers, k.transfers);
    cr_log_info("T4 dwmajor (2,4,32) B=32: total %ld; dxmajor %ld; seq %ld", k.transfers,
                x.transfers, b.transfers);
}

/* T5: spill accounting. p = dW (dX) partial tiles pinned: spills = reloads = (R-1)*(F-p)*O. */
Test(train_residency, t5_spills)
{
    const int Mt = 8, Nt = 4, Kt = 3;
    /* dxmajor, everything fits: no dW partial traffic, Kt*Nt dW writes */
    npu_resid_counts_t k = res(NPU_ORDER_DXMAJOR, Mt, Nt, Kt, 1000);
    cr_assert_eq(k.reloads[NPU_TENSOR_DW], 0);
    cr_assert_eq(k.spills[NPU_TENSOR_DW] + k.stores[NPU_TENSOR_DW], Kt * Nt);
    /* no room at all: Mt*Kt*Nt dW writes, (Mt-1)*Kt*Nt dW reads */
    k = res(NPU_ORDER_DXMAJOR, Mt, Nt, Kt, 0);
    cr_assert_eq(k.spills[NPU_TENSOR_DW] + k.stores[NPU_TENSOR_DW], Mt * Kt * Nt);
    cr_assert_eq(k.reloads[NPU_TENSOR_DW], (Mt - 1) * Kt * Nt);
    /* dwmajor: the dX[:,k] strip (Mt tiles per k): Kt*Nt*Mt writes, Kt*(Nt-1)*Mt reads */
    k = res(NPU_ORDER_DWMAJOR, Mt, Nt, Kt, 0);
    cr_assert_eq(k.spills[NPU_TENSOR_DX] + k.stores[NPU_TENSOR_DX], Kt * Nt * Mt);
    cr_assert_eq(k.reloads[NPU_TENSOR_DX], Kt * (Nt - 1) * Mt);
    k = res(NPU_ORDER_DWMAJOR, Mt, Nt, Kt, 1000);
    cr_assert_eq(k.reloads[NPU_TENSOR_DX], 0);
    cr_assert_eq(k.spills[NPU_TENSOR_DX], 0);
    /* partial pinning: the planner keeps what it can; every partial spilled is reloaded once */
    for (long B = 0; B <= 40; B++) {
        npu_resid_counts_t x = res(NPU_ORDER_DXMAJOR, Mt, Nt, Kt, B);
        cr_assert_eq(x.spills[NPU_TENSOR_DW], x.reloads[NPU_TENSOR_DW]);
        cr_assert_eq(x.reloads[NPU_TENSOR_DW] % (Mt - 1), 0, "B=%ld", B);
        cr_assert_eq(x.stores[NPU_TENSOR_DW], Kt * Nt);
        cr_assert_eq(x.stores[NPU_TENSOR_DX], Mt * Kt);
    }
}

/* T6: Mt=Nt=Kt=1 with no window: interleaving loads dY once, seq twice; in general
 * Mt*Nt <= dY loads(interleave), and the fused orders reach Mt*Nt when the strip fits. */
Test(train_residency, t6_interleave_t0)
{
    cr_assert_eq(res(NPU_ORDER_SEQ, 1, 1, 1, 0).loads[NPU_TENSOR_DY], 2);
    cr_assert_eq(res(NPU_ORDER_INTERLEAVE, 1, 1, 1, 0).loads[NPU_TENSOR_DY], 1);
    static const int sh[][3] = {{4, 4, 4}, {8, 2, 3}, {2, 8, 5}, {6, 6, 1}};
    for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++)
        for (long B = 0; B <= 64; B += 8) {
            int Mt = sh[i][0], Nt = sh[i][1], Kt = sh[i][2];
            long il = res(NPU_ORDER_INTERLEAVE, Mt, Nt, Kt, B).loads[NPU_TENSOR_DY];
            long sq = res(NPU_ORDER_SEQ, Mt, Nt, Kt, B).loads[NPU_TENSOR_DY];
            cr_assert_geq(il, (long)Mt * Nt);
            cr_assert_leq(il, 2L * Mt * Nt * Kt);
            cr_assert_geq(sq, (long)Mt * Nt);
        }
}

/* T7: everything fits (4,4,4) with an 80-tile window: every order is compulsory (80). */
Test(train_residency, t7_everything_fits)
{
    for (int o = NPU_ORDER_SEQ; o <= NPU_ORDER_DWMAJOR; o++) {
        npu_resid_counts_t k = res((npu_order_t)o, 4, 4, 4, 80);
        cr_assert_eq(k.transfers, 80, "%s: %ld", npu_order_name((npu_order_t)o),
                     k.transfers);
    }
}

/* Actions: loads/stores per op add up to the counters; pinned slots lie in the window;
 * accumulators of a fused step share the dY slot of the step. */
Test(train_residency, actions_consistent)
{
    npu_order_sched_t s;
    cr_assert_eq(npu_order_schedule(NPU_ORDER_DXMAJOR, 0, &s), 0);
    npu_resid_cfg_t c;
    memset(&c, 0, sizeof c);
    c.Mt = 6;
    c.Nt = 3;
    c.Kt = 4;
    c.budget = 10;
    npu_resid_plan_t p;
    cr_assert_eq(npu_resid_plan(&s, &c, &p), 0);
    cr_assert_leq(p.used[0], 10);
    size_t n = npu_order_schedule_count(&s, 6, 3, 4);
    npu_order_op_t *ops = malloc(n * sizeof *ops);
    npu_resid_action_t *a = malloc(n * sizeof *a);
    cr_assert_eq(npu_order_build_ex(&s, 6, 3, 4, ops, n), (long)n);
    npu_resid_counts_t k;
    cr_assert_eq(npu_resid_run(&p, ops, n, a, &k), 0);
    long rd = 0, wr = 0;
    for (size_t i = 0; i < n; i++) {
        rd += a[i].rd_bytes;
        wr += a[i].wr_bytes;
        cr_assert(!(a[i].store && a[i].spill));
        cr_assert_eq(a[i].store, ops[i].last);
        if (ops[i].first)
            cr_assert_eq(a[i].reload, 0);
        if (a[i].pinned_acc)
            cr_assert(a[i].slot_acc >= 0 && a[i].slot_acc < 10);
        if (i % 2 == 1) /* dw op after the dx op of the same step: same dY tile, no load */
            cr_assert(a[i].load_b == 0 && a[i].slot_b == a[i - 1].slot_a);
    }
    cr_assert_eq(rd, (long)k.rd_total);
    cr_assert_eq(wr, (long)k.wr_total);
    free(ops);
    free(a);
}

/* Bytes mode: int16 operands, int32 partials/gradients, real edge-tile extents. */
Test(train_residency, bytes_mode)
{
    npu_resid_cfg_t c;
    memset(&c, 0, sizeof c);
    c.bytes = 1;
    c.M = 45;
    c.N = 135;
    c.K = 90;
    c.Tm = c.Tn = c.Tk = 32;
    c.Mt = 2;
    c.Nt = 5;
    c.Kt = 3;
    c.budget = 1 << 30; /* everything fits: compulsory bytes */
    for (int o = NPU_ORDER_SEQ; o <= NPU_ORDER_DWMAJOR; o++) {
        npu_resid_counts_t k;
        cr_assert_eq(npu_resid_eval((npu_order_t)o, &c, &k), 0);
        cr_assert_eq(k.rd[NPU_TENSOR_DY], 45u * 135 * 2);
        cr_assert_eq(k.rd[NPU_TENSOR_X], 45u * 90 * 2);
        cr_assert_eq(k.rd[NPU_TENSOR_W], 90u * 135 * 2);
        cr_assert_eq(k.wr[NPU_TENSOR_DX], 45u * 90 * 4);
        cr_assert_eq(k.wr[NPU_TENSOR_DW], 90u * 135 * 4);
    }
}
