/* test_conv_slice.c - burst-aware slicing of convolutions over the emitter's plans
 * (compile/conv/conv_slice.h): the pick against a brute force over every plan option, each
 * candidate's bytes against conv_plan's planned bytes, the overlap formula on hand cases, the DRAM
 * layout a run uses, and the refusals. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "compile/conv/conv_plan.h"
#include "compile/conv/conv_slice.h"
#include "compile/conv/conv_unit.h"
#include "compile/slice/slice_cost.h"
#include "model/prog_time.h"
#include "test_cfgs.h"

/* batch, C, H, W, F, KH, KW, stride, pad, dil, depthwise */
static const npu_conv_t k_layers[] = {
    {1, 4, 10, 10, 8, 3, 3, 1, 1, 1, 0},   {1, 8, 9, 9, 16, 1, 1, 2, 0, 1, 0},
    {1, 16, 14, 14, 64, 1, 1, 1, 0, 1, 0}, {2, 20, 7, 9, 40, 3, 3, 2, 1, 1, 0},
    {1, 8, 10, 10, 8, 3, 3, 1, 1, 1, 1},
};

static int same_plan(const npu_conv_cand_t *c, const npu_conv_plan_t *p)
{
    return c->R == p->R && c->nbands == p->nbands && c->G == p->G && c->ngroups == p->ngroups;
}

/* The reference's cost of plan p at a under the program-time model: its program emitted alone and
 * timed whole under each mode's constants, its bytes conv_plan's planned bytes (not the search's
 * walk). */
static void time_plan(const npu_cfg_t *cfg, const npu_conv_plan_t *p, const npu_conv_addrs_t *a, npu_conv_cand_t *x)
{
    npu_prog_t g;
    char msg[200];
    npu_prog_init(&g);
    cr_assert_eq(npu_cx_emit(cfg, p, a, NULL, NULL, &g, msg, sizeof msg), 0, "%s", msg);
    for (int m = 0; m < 2; m++) {
        npu_slice_cost_t k = npu_slice_cost_default(cfg, m);
        uint64_t cyc;
        cr_assert_eq(npu_prog_time(cfg, &k, g.insn, g.n, &cyc, msg, sizeof msg), 0, "%s", msg);
        x->cycles[m] = cyc << NPU_SLICE_Q;
    }
    npu_prog_free(&g);
    x->R = p->R, x->nbands = p->nbands, x->G = p->G, x->ngroups = p->ngroups;
    for (int t = 0; t < NPU_NUM_TAGS; t++)
        x->rd_bytes += p->plan_rd[t], x->wr_bytes += p->plan_wr[t];
}

/* Every (max_blocks, max_band_rows) option planned and costed independently (time: the whole
 * program by time_plan; NULL: the unit walk, npu_conv_slice_cost); the least cycles, then fewest
 * bytes, first in the order G, R descending: the pick must be that plan, and every distinct plan a
 * candidate. */
static void brute_force(const npu_cfg_t *cfg, const npu_conv_t *c, int k, int df, npu_conv_time_fn time,
                        const npu_conv_slicing_t *r)
{
    npu_conv_plan_t p, p0;
    npu_conv_addrs_t a;
    npu_conv_cand_t best[2], x;
    int have = 0, same = 0;
    char msg[200];
    cr_assert_eq(npu_conv_plan(cfg, c, k, df, NULL, &p0, msg, sizeof msg), 0, "%s", msg);
    npu_conv_dram_layout(&p0, (unsigned)npu_cfg_word(cfg) > 16 ? (unsigned)npu_cfg_word(cfg) : 16, &a, NULL);
    for (int G = k == NPU_CONV_DW ? 1 : p0.nblk; G >= 1; G--)
        for (int R = p0.rows; R >= 1; R--) {
            npu_conv_plan_opts_t o = {R, k == NPU_CONV_DW ? 0 : G, 0, 0};
            int known = 0;
            if (npu_conv_plan(cfg, c, k, df, &o, &p, NULL, 0) != 0)
                continue;
            for (int i = 0; i < r->n; i++)
                known |= same_plan(&r->cand[i], &p);
            cr_assert(known, "kernel %d: the plan R %d G %d is no candidate", k, p.R, p.G);
            memset(&x, 0, sizeof x);
            x.opts = o;
            if (time)
                time_plan(cfg, &p, &a, &x);
            else
                cr_assert_eq(npu_conv_slice_cost(cfg, &p, &a, NULL, &x, msg, sizeof msg), 0, "%s", msg);
            for (int m = 0; m < 2; m++)
                if (!have || npu_conv_cand_better(&x, &best[m], m))
                    best[m] = x;
            have = 1;
        }
    for (int i = 0; i < r->n; i++)
        for (int j = 0; j < i; j++)
            same += r->cand[i].R == r->cand[j].R && r->cand[i].nbands == r->cand[j].nbands &&
                    r->cand[i].G == r->cand[j].G && r->cand[i].ngroups == r->cand[j].ngroups;
    cr_assert_eq(same, 0, "two candidates of the same plan");
    cr_assert(have);
    for (int m = 0; m < 2; m++) {
        const npu_conv_cand_t *pk = &r->cand[r->pick[m]];
        cr_assert_eq(pk->cycles[m], best[m].cycles[m], "kernel %d mode %d: pick %llu, brute force %llu", k, m,
                     (unsigned long long)pk->cycles[m], (unsigned long long)best[m].cycles[m]);
        cr_assert(pk->R == best[m].R && pk->G == best[m].G && pk->nbands == best[m].nbands,
                  "kernel %d mode %d: pick R %d G %d, brute force R %d G %d", k, m, pk->R, pk->G, best[m].R,
                  best[m].G);
    }
    cr_assert(same_plan(&r->cand[r->heuristic], &p0), "the heuristic candidate is conv_plan's own plan");
}

/* The search against the brute force on every layer, kernel and dataflow, costed by time. */
static void pick_against_brute_force(npu_conv_time_fn time)
{
    npu_cfg_t cfg = test_cfg(8);
    for (size_t l = 0; l < sizeof k_layers / sizeof k_layers[0]; l++)
        for (int k = NPU_CONV_FWD; k <= NPU_CONV_DW; k++)
            for (int df = NPU_CONV_ZEROPAD; df <= NPU_CONV_ECOFLOW; df++) {
                npu_conv_slicing_t r;
                char msg[300];
                if (k == NPU_CONV_FWD && df == NPU_CONV_ECOFLOW)
                    continue;
                cr_assert_eq(npu_conv_slice(&cfg, &k_layers[l], k, df, time, &r, msg, sizeof msg), 0, "layer %zu: %s",
                             l, msg);
                cr_assert(r.n >= 1);
                brute_force(&cfg, &k_layers[l], k, df, time, &r);
                npu_conv_slicing_free(&r);
            }
}

/* The program-time model's pick (what npu conv --slicing and conv_slice_check use). */
Test(conv_slice, pick_is_the_brute_force_least) { pick_against_brute_force(npu_prog_time); }

/* Without a timing model: the unit walk's pick. */
Test(conv_slice, walk_pick_is_the_brute_force_least) { pick_against_brute_force(NULL); }

/* One source of truth for the bytes: the LOADs and STOREs each candidate's program issues, per
 * tag, are the bytes conv_plan says the plan moves. */
Test(conv_slice, program_bytes_are_the_plans)
{
    npu_cfg_t cfg = test_cfg(8);
    for (size_t l = 0; l < sizeof k_layers / sizeof k_layers[0]; l++)
        for (int k = NPU_CONV_FWD; k <= NPU_CONV_DW; k++) {
            int df = k == NPU_CONV_FWD ? NPU_CONV_ZEROPAD : NPU_CONV_ECOFLOW;
            npu_conv_slicing_t r;
            char msg[300];
            cr_assert_eq(npu_conv_slice(&cfg, &k_layers[l], k, df, npu_prog_time, &r, msg, sizeof msg), 0, "%s", msg);
            for (int i = 0; i < r.n; i++) {
                npu_conv_plan_t p;
                cr_assert_eq(npu_conv_plan(&cfg, &k_layers[l], k, df, &r.cand[i].opts, &p, msg, sizeof msg), 0);
                for (int t = 1; t < NPU_NUM_TAGS; t++) {
                    cr_assert_eq(r.cand[i].rd_tag[t], p.plan_rd[t], "layer %zu kernel %d cand %d tag %d: read %llu, "
                                 "plan %llu", l, k, i, t, (unsigned long long)r.cand[i].rd_tag[t],
                                 (unsigned long long)p.plan_rd[t]);
                    cr_assert_eq(r.cand[i].wr_tag[t], p.plan_wr[t], "layer %zu kernel %d cand %d tag %d", l, k, i, t);
                }
            }
            npu_conv_slicing_free(&r);
        }
}

/* The overlap formula on a hand case: T = L0 + max(E0, L1, Lb1) + max(E1, S0) + S1. */
Test(conv_slice, pipe_overlaps_as_the_slicing_stage)
{
    npu_slice_pipe_t p;
    memset(&p, 0, sizeof p);
    npu_slice_pipe_step(&p, 100, 40, 50, 30);
    npu_slice_pipe_step(&p, 70, 60, 80, 20);
    cr_assert_eq(npu_slice_pipe_end(&p), 100 + 70 + 80 + 20);
    memset(&p, 0, sizeof p);
    npu_slice_pipe_step(&p, 10, 10, 5, 90);
    npu_slice_pipe_step(&p, 0, 0, 5, 0);
    npu_slice_pipe_step(&p, 20, 15, 5, 0); /* its loads share the bus with step 0's store */
    cr_assert_eq(npu_slice_pipe_end(&p), 10 + 5 + (15 + 90) + 5);
}

/* Pipelined LOADs (idle = xfer_idle): a step's loads pay the latency the DMA did not hide --
 * all of it at the first step, none at the second (queued), after a wait for compute all of it,
 * part of it when the token came within a latency of the DMA's end, none behind a busy DMA; and
 * nothing changes with idle = 0 (a zeroed state, npu_slice_pipe_init at LOAD_PIPELINE = 0). */
Test(conv_slice, pipe_charges_the_latency_after_a_wait)
{
    npu_slice_cost_t k;
    npu_slice_pipe_t p, z;
    memset(&k, 0, sizeof k);
    k.xfer_idle = 30;
    npu_slice_pipe_init(&p, &k);
    memset(&z, 0, sizeof z);
    cr_assert_eq(p.idle, 30);
    const uint64_t st[4][4] = {{100, 40, 200, 0}, {100, 40, 200, 0}, {100, 40, 200, 0}, {100, 40, 120, 0}};
    for (int i = 0; i < 4; i++) {
        npu_slice_pipe_step(&p, st[i][0], st[i][1], st[i][2], st[i][3]);
        npu_slice_pipe_step(&z, st[i][0], st[i][1], st[i][2], st[i][3]);
    }
    /* step 0: 100 + 30; 1: max(200, 100) queued; 2: E_0 = 200 > D_1 = 100, all 30: max(200, 130);
     * 3: E_1 = 200 + 30 - D_2 (130) = 100, min 30: max(200, 130); end: E_3 = 120 */
    cr_assert_eq(npu_slice_pipe_end(&p), 130 + 200 + 200 + 200 + 120);
    cr_assert_eq(npu_slice_pipe_end(&z), 100 + 200 + 200 + 200 + 120, "idle 0: the plain overlap");
    /* DMA-bound: E_{i-2} = 50 + 30 <= D_{i-1} = 100: the next loads were queued, none */
    npu_slice_pipe_init(&p, &k);
    for (int i = 0; i < 4; i++)
        npu_slice_pipe_step(&p, 100, 100, 50, 0);
    cr_assert_eq(npu_slice_pipe_end(&p), 130 + 100 + 100 + 100 + 50);
    /* the token 10 cycles before the DMA's end (E = 90, D = 100): 30 - 10 = 20 uncovered */
    npu_slice_pipe_init(&p, &k);
    for (int i = 0; i < 3; i++)
        npu_slice_pipe_step(&p, 100, 100, 90, 0);
    cr_assert_eq(npu_slice_pipe_end(&p), 130 + 100 + 120 + 90);
    k.mode = NPU_SLICE_NOBURST; /* the bytes-only cost has no fixed part */
    npu_slice_pipe_init(&p, &k);
    cr_assert_eq(p.idle, 0);
}

/* The run's layout: inputs then output, each rounded up to the alignment. */
Test(conv_slice, dram_layout_in_allocation_order)
{
    npu_cfg_t cfg = test_cfg(8);
    npu_conv_plan_t p;
    npu_conv_addrs_t a;
    uint64_t end;
    char msg[200];
    cr_assert_eq(npu_conv_plan(&cfg, &k_layers[0], NPU_CONV_DX, NPU_CONV_ECOFLOW, NULL, &p, msg, sizeof msg), 0);
    npu_conv_dram_layout(&p, 32, &a, &end);
    uint64_t w = npu_conv_tensor_bytes(&p, NPU_TAG_W), dy = npu_conv_tensor_bytes(&p, NPU_TAG_DY);
    cr_assert_eq(a.w, 0);
    cr_assert_eq(a.dy, (w + 31) / 32 * 32);
    cr_assert_eq(a.out, a.dy + (dy + 31) / 32 * 32);
    cr_assert_eq(a.x, 0);
    cr_assert_eq(end, a.out + (npu_conv_tensor_bytes(&p, NPU_TAG_DX) + 31) / 32 * 32);
}

Test(conv_slice, refusals)
{
    npu_cfg_t cfg = test_cfg(8);
    npu_conv_slicing_t r;
    npu_conv_t big = {1, 512, 16, 16, 512, 3, 3, 1, 1, 1, 0}, bad = {1, 4, 10, 10, 8, 3, 3, 0, 1, 1, 0};
    char msg[300];
    cr_assert_eq(npu_conv_slice(&cfg, &big, NPU_CONV_FWD, NPU_CONV_ZEROPAD, npu_prog_time, &r, msg, sizeof msg), -1);
    cr_assert(strstr(msg, "does not plan whole") && strstr(msg, "one part"), "%s", msg);
    cr_assert(r.cand == NULL && r.n == 0);
    cr_assert_eq(npu_conv_slice(&cfg, &bad, NPU_CONV_FWD, NPU_CONV_ZEROPAD, npu_prog_time, &r, msg, sizeof msg), -1);
    cr_assert(strstr(msg, "stride"), "%s", msg);
}
