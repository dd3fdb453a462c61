/* test_conv_slice.c - burst-aware slicing of convolutions over the emitter's plans
 * (compile/conv/conv_slice.h): the pick against a brute force over every plan option, each
 * candidate's bytes against conv_plan's planned bytes, the overlap formula on hand cases, the DRAM
 * layout a run uses, and the refusals. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "compile/conv/conv_plan.h"
#include "compile/conv/conv_slice.h"
#include "compile/conv/conv_split.h"
#include "compile/slice/slice.h"
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

static int same_cand(const npu_conv_cand_t *a, const npu_conv_cand_t *b)
{
    return a->R == b->R && a->nbands == b->nbands && a->G == b->G && a->ngroups == b->ngroups && a->nf == b->nf &&
           a->nc == b->nc && a->nw == b->nw && a->units == b->units;
}

/* The reference's cost of options o at a: the split npu_conv_split makes of them (NULL when it
 * does not plan: 0); under the program-time model its program (npu_conv_split_emit) timed whole
 * under each mode's constants, else its parts' unit walks (npu_conv_slice_cost) end to end; its
 * bytes the split's planned bytes (not the search's walk). */
static int ref_cost(const npu_cfg_t *cfg, const npu_conv_t *c, int k, int df, const npu_conv_plan_opts_t *o,
                    const npu_conv_addrs_t *a, npu_conv_time_fn time, npu_conv_cand_t *x)
{
    npu_conv_split_t sp;
    npu_prog_t g;
    char msg[200];
    memset(x, 0, sizeof *x);
    if (npu_conv_split(cfg, c, k, df, o, &sp, msg, sizeof msg) != 0)
        return 0;
    npu_prog_init(&g);
    cr_assert_eq(npu_conv_split_emit(cfg, &sp, a, &g, msg, sizeof msg), 0, "%s", msg);
    for (int m = 0; m < 2 && time; m++) {
        npu_slice_cost_t kc = npu_slice_cost_default(cfg, m);
        uint64_t cyc;
        cr_assert_eq(npu_prog_time(cfg, &kc, g.insn, g.n, &cyc, msg, sizeof msg), 0, "%s", msg);
        x->cycles[m] = cyc << NPU_SLICE_Q;
    }
    for (int i = 0; i < sp.parts; i++) {
        npu_conv_cand_t y;
        npu_conv_addrs_t ai = npu_conv_split_addrs(&sp, i, a);
        cr_assert_eq(npu_conv_slice_cost(cfg, &sp.part[i], &ai, NULL, &y, msg, sizeof msg), 0, "%s", msg);
        for (int m = 0; m < 2 && !time; m++)
            x->cycles[m] += y.cycles[m];
        x->units += sp.part[i].units;
    }
    npu_prog_free(&g);
    x->opts = *o;
    x->R = sp.part[0].R, x->nbands = sp.part[0].nbands, x->G = sp.part[0].G, x->ngroups = sp.part[0].ngroups;
    x->nf = sp.nf, x->nc = sp.nc, x->nw = sp.nw, x->parts = sp.parts;
    x->rows = sp.part[0].rows, x->gmax = sp.part[0].nblk;
    for (int t = 0; t < NPU_NUM_TAGS; t++)
        x->rd_bytes += sp.plan_rd[t], x->wr_bytes += sp.plan_wr[t];
    npu_conv_split_free(&sp);
    return 1;
}

static int known(const npu_conv_slicing_t *r, const npu_conv_cand_t *x)
{
    for (int i = 0; i < r->n; i++)
        if (same_cand(&r->cand[i], x))
            return 1;
    return 0;
}

/* Every split (filters and channels per range: their balanced 2S-block sizes; 1 .. 4 column
 * ranges for fwd and dX) with every (max_blocks, max_band_rows) option on it, each planned and
 * costed independently (ref_cost): the search's pick must cost what the least of them costs, every
 * split at conv_plan's own bands and, for a layer that plans whole, every plan of it must be a
 * candidate, and no two candidates the same plan. */
static void brute_force(const npu_cfg_t *cfg, const npu_conv_t *c, int k, int df, npu_conv_time_fn time,
                        const npu_conv_slicing_t *r)
{
    npu_conv_plan_t p0;
    npu_conv_addrs_t a;
    npu_conv_cand_t best[2], x;
    int64_t fo[64], co[64];
    int have = 0, whole, L = 2 * cfg->s, ncols;
    int nfo = c->depthwise ? 1 : npu_slice_tile_opts(c->F, L, fo, 64), nco = npu_slice_tile_opts(c->C, L, co, 64);
    char msg[200];
    cr_assert_eq(npu_conv_geometry(cfg, c, k, df, NULL, &p0, msg, sizeof msg), 0, "%s", msg);
    ncols = k == NPU_CONV_DX ? c->W : p0.OW;
    npu_conv_dram_layout(&p0, (unsigned)npu_cfg_word(cfg) > 16 ? (unsigned)npu_cfg_word(cfg) : 16, &a, NULL);
    whole = npu_conv_plan(cfg, c, k, df, NULL, &p0, msg, sizeof msg) == 0;
    /* dW: column ranges only where the heuristic split needs them (conv_slice.c splits) */
    for (int nw = 1; nw <= (k == NPU_CONV_DW && r->cand[r->heuristic].nw == 1 ? 1 : 4) && nw <= ncols; nw++)
        for (int i = 0; i < nfo; i++)
            for (int j = 0; j < nco; j++) {
                npu_conv_plan_opts_t o = {.split_f = c->depthwise ? 0 : (int)fo[i], .split_c = (int)co[j],
                                          .split_w = (ncols + nw - 1) / nw};
                if (!ref_cost(cfg, c, k, df, &o, &a, time, &x))
                    continue;
                cr_assert(known(r, &x), "kernel %d: the split f%d c%d w%d is no candidate", k, x.nf, x.nc, x.nw);
                for (int G = k == NPU_CONV_DW ? 1 : x.gmax, rows = x.rows; G >= 1; G--)
                    for (int R = rows; R >= 1; R--) {
                        o.max_band_rows = R;
                        o.max_blocks = k == NPU_CONV_DW ? 0 : G;
                        if (!ref_cost(cfg, c, k, df, &o, &a, time, &x))
                            continue;
                        cr_assert(!whole || x.parts > 1 || known(r, &x), "kernel %d: the plan R %d G %d is no "
                                  "candidate", k, x.R, x.G);
                        for (int m = 0; m < 2; m++)
                            if (!have || npu_conv_cand_better(&x, &best[m], m))
                                best[m] = x;
                        have = 1;
                    }
            }
    for (int i = 0; i < r->n; i++)
        for (int j = 0; j < i; j++)
            cr_assert(!same_cand(&r->cand[i], &r->cand[j]), "two candidates of the same plan");
    cr_assert(have);
    for (int m = 0; m < 2; m++) {
        const npu_conv_cand_t *pk = &r->cand[r->pick[m]];
        cr_assert_eq(pk->cycles[m], best[m].cycles[m], "kernel %d mode %d: pick %llu (f%dc%dw%d R %d G %d), brute "
                     "force %llu (f%dc%dw%d R %d G %d)", k, m, (unsigned long long)pk->cycles[m], pk->nf, pk->nc,
                     pk->nw, pk->R, pk->G, (unsigned long long)best[m].cycles[m], best[m].nf, best[m].nc, best[m].nw,
                     best[m].R, best[m].G);
    }
    if (whole)
        cr_assert(r->cand[r->heuristic].parts == 1 && r->cand[r->heuristic].R == p0.R &&
                  r->cand[r->heuristic].G == p0.G, "the heuristic candidate is conv_plan's own plan");
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
 * tag, are the bytes conv_split says the split's plans move (partial sums included). */
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
                npu_conv_split_t sp;
                cr_assert_eq(npu_conv_split(&cfg, &k_layers[l], k, df, &r.cand[i].opts, &sp, msg, sizeof msg), 0);
                for (int t = 1; t < NPU_NUM_TAGS; t++) {
                    cr_assert_eq(r.cand[i].rd_tag[t], sp.plan_rd[t], "layer %zu kernel %d cand %d tag %d: read %llu, "
                                 "plan %llu", l, k, i, t, (unsigned long long)r.cand[i].rd_tag[t],
                                 (unsigned long long)sp.plan_rd[t]);
                    cr_assert_eq(r.cand[i].wr_tag[t], sp.plan_wr[t], "layer %zu kernel %d cand %d tag %d", l, k, i, t);
                }
                npu_conv_split_free(&sp);
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
    npu_conv_t bad = {1, 4, 10, 10, 8, 3, 3, 0, 1, 1, 0};
    char msg[300];
    cr_assert_eq(npu_conv_slice(&cfg, &bad, NPU_CONV_FWD, NPU_CONV_ZEROPAD, npu_prog_time, &r, msg, sizeof msg), -1);
    cr_assert(strstr(msg, "stride"), "%s", msg);
    cr_assert(r.cand == NULL && r.n == 0);
}

/* A layer that does not plan whole: its candidates are splits (conv_split.h), the heuristic is
 * npu_conv_split's own, and the pick runs as planned (its options give the same split). */
Test(conv_slice, a_layer_too_large_slices_in_parts)
{
    npu_cfg_t cfg = test_cfg(8);
    npu_conv_slicing_t r;
    npu_conv_t big = {1, 512, 16, 16, 512, 3, 3, 1, 1, 1, 0};
    npu_conv_split_t sp;
    char msg[300];
    cr_assert_eq(npu_conv_slice(&cfg, &big, NPU_CONV_FWD, NPU_CONV_ZEROPAD, npu_prog_time, &r, msg, sizeof msg), 0,
                 "%s", msg);
    cr_assert(r.n > 1);
    for (int i = 0; i < r.n; i++)
        cr_assert(r.cand[i].parts > 1 && r.cand[i].parts == r.cand[i].nf * r.cand[i].nc * r.cand[i].nw);
    cr_assert_eq(npu_conv_split(&cfg, &big, NPU_CONV_FWD, NPU_CONV_ZEROPAD, NULL, &sp, msg, sizeof msg), 0);
    cr_assert(sp.nf == r.cand[r.heuristic].nf && sp.nc == r.cand[r.heuristic].nc && sp.nw == r.cand[r.heuristic].nw);
    npu_conv_split_free(&sp);
    for (int m = 0; m < 2; m++) {
        const npu_conv_cand_t *pk = &r.cand[r.pick[m]];
        cr_assert_eq(npu_conv_split(&cfg, &big, NPU_CONV_FWD, NPU_CONV_ZEROPAD, &pk->opts, &sp, msg, sizeof msg), 0);
        cr_assert(sp.nf == pk->nf && sp.nc == pk->nc && sp.nw == pk->nw && sp.part[0].R == pk->R);
        npu_conv_split_free(&sp);
    }
    npu_conv_slicing_free(&r);
}

/* Split options a split cannot take are refused with the reason. */
Test(conv_slice, given_splits_are_checked)
{
    npu_cfg_t cfg = test_cfg(8);
    npu_conv_t c = {1, 32, 10, 10, 32, 3, 3, 1, 1, 1, 0};
    npu_conv_plan_opts_t f = {.split_f = 8}, w = {.split_w = 4}, ok = {.split_f = 16, .split_c = 16, .split_w = 4};
    npu_conv_split_t sp;
    char msg[200];
    cr_assert_eq(npu_conv_split(&cfg, &c, NPU_CONV_FWD, NPU_CONV_ZEROPAD, &f, &sp, msg, sizeof msg), -1);
    cr_assert(strstr(msg, "filter range (8)"), "%s", msg);
    cr_assert_eq(npu_conv_split(&cfg, &c, NPU_CONV_DW, NPU_CONV_ECOFLOW, &w, &sp, msg, sizeof msg), -1);
    cr_assert(strstr(msg, "column ranges"), "%s", msg);
    /* zeropad dW: column ranges of dY, each after the first adding to the partial dW */
    cr_assert_eq(npu_conv_split(&cfg, &c, NPU_CONV_DW, NPU_CONV_ZEROPAD, &w, &sp, msg, sizeof msg), 0, "%s", msg);
    cr_assert(sp.nw == 3 && sp.parts == 3 && !sp.part[0].acc && sp.part[1].acc && sp.part[2].acc);
    npu_conv_split_free(&sp);
    cr_assert_eq(npu_conv_split(&cfg, &c, NPU_CONV_FWD, NPU_CONV_ZEROPAD, &ok, &sp, msg, sizeof msg), 0, "%s", msg);
    cr_assert(sp.nf == 2 && sp.nc == 2 && sp.nw == 3 && sp.parts == 12 && sp.wseg == 4);
    npu_conv_split_free(&sp);
}
