/* test_slice_search.c - the slicing stage's candidates, cost and choice: tile options, the
 * candidate count, the overlap formula on hand cases, GEMM plans legal for gemm_tiling's checker,
 * and the bounded search against costing every candidate (npu_slice_eval). */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <time.h>
#include <string.h>

#include "compile/gemm/flexsa_mode.h"
#include "compile/gemm/gemm_tiling.h"
#include "compile/slice/slice.h"
#include "compile/slice/slice_cost.h"
#include "test_cfgs.h"

Test(slice_search, tile_opts)
{
    int64_t t[16];
    /* ceil(10/n), n = 1..10: 10 5 4 3 2 2 2 2 2 1 */
    cr_assert_eq(npu_slice_tile_opts(10, 1, t, 16), 6);
    cr_assert(t[0] == 10 && t[1] == 5 && t[2] == 4 && t[3] == 3 && t[4] == 2 && t[5] == 1);
    /* 40 channels in 16-lane blocks: 3, 2, 1 blocks, the whole tile clipped to 40 */
    cr_assert_eq(npu_slice_tile_opts(40, 16, t, 16), 3);
    cr_assert(t[0] == 40 && t[1] == 32 && t[2] == 16);
    cr_assert_eq(npu_slice_tile_opts(5, 16, t, 16), 1);
    cr_assert_eq(t[0], 5);
    cr_assert_eq(npu_slice_tile_opts(56, 1, NULL, 0), 14);
}

Test(slice_search, count_is_visited)
{
    npu_cfg_t cfg = test_cfg(8);
    npu_slice_cost_t k = npu_slice_cost_default(&cfg, NPU_SLICE_BURST);
    npu_conv_t c = {2, 20, 9, 7, 24, 3, 3, 1, 1, 1, 0};
    npu_slice_result_t r;
    char msg[160];
    for (int kind = NPU_SLICE_FWD; kind <= NPU_SLICE_DW; kind++) {
        cr_assert_eq(npu_slice_conv(&cfg, &k, &c, kind, &r, msg, sizeof msg), 0, "%s", msg);
        /* 3 splits x 2 orders x b {2 1} x rows {9 5 3 2 1} x cols {7 4 3 2 1} x f {24 16} x ch {20 16}
         * (OH = H, OW = W here: dX's rows and columns are the same counts) */
        cr_assert_eq(r.visited, npu_slice_count(&cfg, kind, &c, 0, 0, 0));
        cr_assert_eq(r.visited, 6u * 2 * 5 * 5 * 2 * 2, "kind %d: %llu", kind, (unsigned long long)r.visited);
        cr_assert(r.fitting >= r.evaluated && r.evaluated >= 1);
    }
    cr_assert_eq(npu_slice_gemm(&cfg, &k, 100, 40, 33, &r, msg, sizeof msg), 0);
    /* no band, the input's band, or A's and C's; m: 7 blocks {7 4 3 2 1}, n {3 2 1}, k {3 2 1} */
    cr_assert_eq(r.visited, 6u * 3 * 5 * 3 * 3);
    cr_assert_eq(r.visited, npu_slice_count(&cfg, NPU_SLICE_GEMM, NULL, 100, 40, 33));
}

/* One step: T = L_0 + E_0 + S_0 (nothing to overlap). */
Test(slice_search, single_step_adds_up)
{
    npu_cfg_t cfg = test_cfg(8);
    npu_slice_cost_t k = npu_slice_cost_default(&cfg, NPU_SLICE_BURST);
    npu_slice_plan_t p;
    int64_t tile[3] = {32, 16, 48};
    cr_assert_eq(npu_slice_eval(&cfg, &k, NPU_SLICE_GEMM, NULL, 32, 16, 48, tile, NPU_SLICE_SPLIT_M, 0, &p), 0);
    cr_assert_eq(p.steps, 1);
    /* the drain (GEMM: on the drain engine, after the waves here: no next step) */
    cr_assert_eq(p.cycles, p.t[0].cost + p.t[1].cost + p.t[2].cost + p.compute + k.drain_fixed + 32ull * k.drain_row);
    /* A 32 x 48 int16 is one contiguous 3072-byte run: 96 beats, 6 bursts of 16, 1 transfer */
    cr_assert(p.t[0].b.bytes == 3072 && p.t[0].b.beats == 96 && p.t[0].b.bursts == 6 && p.t[0].b.xfers == 1);
    uint64_t bus = k.xfer_fixed + 3072ull * k.byte + 6ull * k.burst, lat = k.lat_fixed + 6ull * k.window;
    cr_assert_eq(p.t[0].cost, bus > lat ? bus : lat);
    /* FlexSA (the split plays no part in a GEMM): 3 k-blocks of one 2S x 2S block, each an FW wave
     * of the 32 rows, max(rows, (rows + turnaround)/2, S + 2), the WAVE trains' turnaround
     * 2S + 1 = 17: the rows */
    uint64_t w = (32ull << 16) > ((32ull + 17) << 16) / 2 ? 32ull << 16 : ((32ull + 17) << 16) / 2;
    cr_assert_eq(p.compute, 3ull * w);
    /* noburst: bytes only */
    k = npu_slice_cost_default(&cfg, NPU_SLICE_NOBURST);
    cr_assert_eq(npu_slice_eval(&cfg, &k, NPU_SLICE_GEMM, NULL, 32, 16, 48, tile, NPU_SLICE_SPLIT_M, 0, &p), 0);
    cr_assert_eq(p.t[0].cost, 3072ull * k.byte);
}

/* A GEMM step's compute is its emitter's waves under the policy (npu_slice_gemm_compute), by hand
 * at S = 8 (2S = 16) with the WAVE trains' turnaround T = 2S + 1 = 17: m = 40, n = 24, kd = 24
 * is 2 x 2 blocks (16 and 8 wide, 16 and 8 deep).
 *   FlexSA: FW (16x16), HSW (n 16, k 8), VSW (n 8, k 16), ISW (8x8): rows 40, 20, 20, 10;
 *     max(r, (r + T')/2, P), T' = 17 (2S-deep tile: FW, VSW) or 9 (HSW, ISW) and P = S + 2 =
 *     10 (an LDW reads in S steps, a full tile's core pairs in parallel, while the one before
 *     writes): 40 + 20 + 20 + 10;
 *     the serpentine order FW, VSW | ISW, HSW: changes FW-VSW (gaps 1 + 0), VSW-ISW (1 + 0),
 *     ISW-HSW (0 + 1), each the mean of both directions x S plus the switch cycle: 3 x 5;
 *     SPM sub-bank collisions of the sets' rows (A's 40 rows 2 words apart from word 0 or 80,
 *     the mean): VSW in word 0 (sets at rows 0, 20) 4 and 4, HSW in word 1 (0, 20) 4 and 4, ISW
 *     in word 1 (rows 0, 10, 20, 30) 8 and 12: 36 / 2 = 18 (tests/slice/ref_slice.py counts
 *     them by its own sub-bank code).
 *   1G1C: four FW waves of 40 rows, 40 each (P = 2S + 2 = 18 after its mono LDWs).
 *   1G4C: (2 + 1) x (2 + 1) = 9 S x S sub-tiles, each an ISW wave of 10 rows (15) or its four
 *     LDWs, one at a time (one bank), 4 x (S + 6) = 56: 9 x 56. */
Test(slice_search, gemm_compute_is_the_policys_waves)
{
    npu_cfg_t cfg = test_cfg(8);
    npu_slice_cost_t k = npu_slice_cost_formula(&cfg, NPU_SLICE_BURST);
    cr_assert_eq(k.policy, NPU_POLICY_FLEXSA);
    cr_assert_eq(npu_slice_gemm_compute(&cfg, &k, 40, 24, 24), (90u + 15 + 18) << 16);
    k.policy = NPU_POLICY_1G1C;
    cr_assert_eq(npu_slice_gemm_compute(&cfg, &k, 40, 24, 24), (4u * 40) << 16);
    k.policy = NPU_POLICY_1G4C;
    cr_assert_eq(npu_slice_gemm_compute(&cfg, &k, 40, 24, 24), (9u * 56) << 16);
    /* the rows a wave streams bound it: 1G4C at m = 400 (ISW: 100 rows a core) */
    cr_assert_eq(npu_slice_gemm_compute(&cfg, &k, 400, 16, 16), (4u * 100) << 16);
}

/* Two steps along k: T = L_0 + max(E_0, L_1) + max(E_1, S_{-1} = 0) + D_1 + S_1 (the drain
 * after the last waves); A and B reloaded, C stored once. */
Test(slice_search, overlap_two_steps)
{
    npu_cfg_t cfg = test_cfg(8);
    npu_slice_cost_t k = npu_slice_cost_default(&cfg, NPU_SLICE_BURST);
    npu_slice_plan_t p;
    int64_t tile[3] = {16, 16, 16};
    cr_assert_eq(npu_slice_eval(&cfg, &k, NPU_SLICE_GEMM, NULL, 16, 16, 32, tile, NPU_SLICE_SPLIT_N, 1, &p), 0);
    cr_assert_eq(p.steps, 2);
    cr_assert(p.t[0].loads == 2 && p.t[1].loads == 2 && p.t[2].loads == 1);
    {
        uint64_t L = (p.t[0].cost + p.t[1].cost) / 2, S = p.t[2].cost;
        /* both k chunks of A and B start 32-byte aligned: L_0 = L_1; a drain of 16 rows */
        uint64_t E0 = npu_slice_gemm_compute(&cfg, &k, 16, 16, 16);
        uint64_t E1 = p.compute - E0, D1 = k.drain_fixed + 16ull * k.drain_row;
        cr_assert_eq(E1, E0);
        cr_assert_eq(p.cycles, L + (E0 > L ? E0 : L) + E1 + D1 + S);
    }
}

/* A GEMM's drain runs beside the next step's waves (npu_slice_pipe_step_d), by hand with no idle
 * latency: steps (L, Lb, E, D, S) = (10, 10, 50, 60, 40), (10, 10, 20, 30, 40), (0, 0, 20, 50, 0):
 * T = 10 + max(50, 0, 10, 10) + max(20, 60, 0, 0 + 40) + max(20, 30, 40) + 50 + 0 = 210; with
 * every D = 0 it is npu_slice_pipe_step's. */
Test(slice_search, pipe_drain_beside)
{
    npu_cfg_t cfg = test_cfg(8);
    npu_slice_cost_t k = npu_slice_cost_default(&cfg, NPU_SLICE_NOBURST); /* no idle latency */
    npu_slice_pipe_t p, q;
    static const uint64_t st[3][5] = {{10, 10, 50, 60, 40}, {10, 10, 20, 30, 40}, {0, 0, 20, 50, 0}};
    npu_slice_pipe_init(&p, &k);
    npu_slice_pipe_init(&q, &k);
    for (int i = 0; i < 3; i++)
        npu_slice_pipe_step_d(&p, st[i][0], st[i][1], st[i][2], st[i][3], st[i][4]);
    cr_assert_eq(npu_slice_pipe_end(&p), 210);
    npu_slice_pipe_init(&p, &k);
    for (int i = 0; i < 3; i++) {
        npu_slice_pipe_step_d(&p, st[i][0], st[i][1], st[i][2], 0, st[i][4]);
        npu_slice_pipe_step(&q, st[i][0], st[i][1], st[i][2], st[i][4]);
    }
    cr_assert_eq(npu_slice_pipe_end(&p), npu_slice_pipe_end(&q));
}

/* Above a beat a cycle the store has its own port and shares only the DRAM credit with the loads
 * (npu_slice_pipe_step_w): steps (L, Lb, E, D, S, Sb) = (40, 20, 10, 0, 40, 20) three times, then
 * (0, 0, 10, 0, 40, 20): T = 40 + max(10, 40, 20 + 0, 0) + max(10, 40, 20 + 20, 40)
 * + max(10, 0, 0 + 20, 40) + max(10, 40) + 0 + 40 = 240; charged in turn (Sb = S,
 * npu_slice_pipe_step_d) the third step's loads wait for the first's store, 20 + 40: 260. The
 * constants: share = byte x B / DRAM_BW at 64 B/cycle (B = 32) under the burst-aware cost, byte
 * under the bytes-only one (one port, the paper's model) and at DRAM_BW <= B. */
Test(slice_search, pipe_store_own_port)
{
    npu_cfg_t cfg = test_cfg(8);
    npu_slice_cost_t k = npu_slice_cost_default(&cfg, NPU_SLICE_NOBURST), kb;
    npu_slice_pipe_t p;
    npu_slice_pipe_init(&p, &k);
    for (int i = 0; i < 4; i++)
        npu_slice_pipe_step_w(&p, i < 3 ? 40 : 0, i < 3 ? 20 : 0, 10, 0, 40, 20);
    cr_assert_eq(npu_slice_pipe_end(&p), 240);
    npu_slice_pipe_init(&p, &k);
    for (int i = 0; i < 4; i++)
        npu_slice_pipe_step_d(&p, i < 3 ? 40 : 0, i < 3 ? 20 : 0, 10, 0, 40);
    cr_assert_eq(npu_slice_pipe_end(&p), 260);
    /* the burst costs hold the other port: steps 1 and 2 wait 8 more for the other side's bursts
     * (48 = L + Sc_{i-1} = S_{i-1} + Lc at step 2) */
    npu_slice_pipe_init(&p, &k);
    for (int i = 0; i < 4; i++)
        npu_slice_pipe_step_x(&p, i < 3 ? 40 : 0, i < 3 ? 20 : 0, i < 3 ? 8 : 0, 10, 0, 40, 20, 8);
    cr_assert_eq(npu_slice_pipe_end(&p), 248);
    npu_slice_pipe_init(&p, &k);
    for (int i = 0; i < 4; i++)
        npu_slice_pipe_step_x(&p, i < 3 ? 40 : 0, i < 3 ? 20 : 0, 0, 10, 0, 40, 20, 0);
    cr_assert_eq(npu_slice_pipe_end(&p), 240, "no burst costs: npu_slice_pipe_step_w");
    kb = npu_slice_cost_default(&cfg, NPU_SLICE_BURST);
    cr_assert_eq(kb.share, kb.byte);
    cfg.dram_bw = 64;
    kb = npu_slice_cost_default(&cfg, NPU_SLICE_BURST);
    k = npu_slice_cost_default(&cfg, NPU_SLICE_NOBURST);
    cr_assert_eq(kb.share, (kb.byte + 1) / 2);
    cr_assert_eq(k.share, k.byte);
}

/* Dense A[M][K] with one k chunk (2 m-tiles, 3 n-tiles): the GEMM emitter loads an operand at
 * every step unless the step two back loaded the same tile (its double buffers alternate), and
 * the cost counts those loads. m outermost: A's tile at n-tiles 0 and 1 of each m-tile (4), B's
 * 3 n-tiles cycle every step (6); n outermost: A's 2 m-tiles stay in the two buffers (2), B's
 * tile at m-tiles 0 and 1 of each n-tile (6). */
Test(slice_search, gemm_reloads)
{
    npu_cfg_t cfg = test_cfg(8);
    npu_slice_cost_t k = npu_slice_cost_default(&cfg, NPU_SLICE_BURST);
    npu_slice_plan_t p;
    int64_t tile[3] = {32, 16, 64};
    cr_assert_eq(npu_slice_eval(&cfg, &k, NPU_SLICE_GEMM, NULL, 64, 48, 64, tile, NPU_SLICE_SPLIT_2X2, 0, &p), 0);
    cr_assert_eq(p.t[0].loads, 4, "A: twice per m-tile");
    cr_assert_eq(p.t[0].b.bytes, 2u * 64u * 64u * 2u);
    cr_assert_eq(p.t[1].loads, 6, "B: every step");
    cr_assert_eq(p.t[1].b.bytes, 2u * 64u * 48u * 2u);
    cr_assert_eq(npu_slice_eval(&cfg, &k, NPU_SLICE_GEMM, NULL, 64, 48, 64, tile, NPU_SLICE_SPLIT_2X2, 1, &p), 0);
    cr_assert(p.t[0].loads == 2 && p.t[1].loads == 6, "order (n, m, k): A once, B twice per n-tile");
    cr_assert_eq(p.t[0].b.bytes, 64u * 64u * 2u);
}

static uint64_t bytes_of(const npu_slice_plan_t *p)
{
    return p->t[0].b.bytes + p->t[1].b.bytes + p->t[2].b.bytes;
}

/* a before b in the stated order: cycles, then bytes, then the enumeration index */
static int before(const npu_slice_plan_t *a, const npu_slice_plan_t *b)
{
    if (a->cycles != b->cycles)
        return a->cycles < b->cycles;
    return bytes_of(a) != bytes_of(b) ? bytes_of(a) < bytes_of(b) : a->index < b->index;
}

/* The search's pick and runner-up equal the first two over every candidate costed alone, by the
 * stated order (cycles, bytes, index), and a GEMM pick passes gemm_tiling's own checker. */
static void brute(const npu_cfg_t *cfg, int mode, int kind, const npu_conv_t *c, int M, int N, int K)
{
    npu_slice_cost_t k = npu_slice_cost_default(cfg, mode);
    npu_slice_result_t r;
    npu_slice_plan_t p, best, second;
    int64_t opt[NPU_SLICE_DIMS][64], tile[NPU_SLICE_DIMS], ext[NPU_SLICE_DIMS];
    int nopt[NPU_SLICE_DIMS], nd = kind == NPU_SLICE_GEMM ? 3 : 5, L = 2 * cfg->s, found = 0;
    int bands = kind == NPU_SLICE_GEMM ? NPU_SLICE_BANDS : 1;
    uint64_t total = NPU_SLICE_SPLITS * NPU_SLICE_ORDERS * (uint64_t)bands, fit = 0;
    char msg[160];
    memset(&best, 0, sizeof best);
    memset(&second, 0, sizeof second);
    npu_slice_result_t alone; /* the search without the runner-up: the same best, fewer costed */
    int rc = kind == NPU_SLICE_GEMM ? npu_slice_gemm(cfg, &k, M, N, K, &alone, msg, sizeof msg)
                                    : npu_slice_conv(cfg, &k, c, kind, &alone, msg, sizeof msg);
    cr_assert_eq(rc, 0, "%s", msg);
    k.runner = 1;
    rc = kind == NPU_SLICE_GEMM ? npu_slice_gemm(cfg, &k, M, N, K, &r, msg, sizeof msg)
                                : npu_slice_conv(cfg, &k, c, kind, &r, msg, sizeof msg);
    cr_assert_eq(rc, 0, "%s", msg);
    cr_assert(alone.best.index == r.best.index && alone.best.cycles == r.best.cycles &&
                  alone.evaluated <= r.evaluated, "best alone %llu vs with the runner-up %llu",
              (unsigned long long)alone.best.index, (unsigned long long)r.best.index);
    if (kind == NPU_SLICE_GEMM) {
        ext[0] = M, ext[1] = N, ext[2] = K;
    } else {
        ext[0] = c->batch, ext[1] = kind == NPU_SLICE_DX ? c->H : npu_conv_oh(c);
        ext[2] = kind == NPU_SLICE_DX ? c->W : npu_conv_ow(c), ext[3] = c->F, ext[4] = c->C;
    }
    for (int d = 0; d < nd; d++) {
        nopt[d] = npu_slice_tile_opts(ext[d], kind == NPU_SLICE_GEMM || d >= 3 ? L : 1, opt[d], 64);
        total *= (uint64_t)nopt[d];
    }
    cr_assert_eq(r.visited, total);
    for (uint64_t i = 0; i < total; i++) {
        uint64_t rest = i;
        for (int d = nd - 1; d >= 0; d--) {
            tile[d] = opt[d][rest % (uint64_t)nopt[d]];
            rest /= (uint64_t)nopt[d];
        }
        rc = npu_slice_eval_band(cfg, &k, kind, c, M, N, K, tile, (int)(rest / (uint64_t)bands / 2),
                                 (int)(rest / (uint64_t)bands % 2), (int)(rest % (uint64_t)bands), &p);
        cr_assert(rc == 0 || rc == 1);
        if (rc)
            continue;
        fit++;
        p.index = i;
        if (found == 0 || before(&p, &best)) {
            second = best;
            best = p;
        } else if (found == 1 || before(&p, &second)) {
            second = p;
        }
        found++;
    }
    cr_assert_eq(r.fitting, fit);
    cr_assert_eq(r.best.index, best.index, "search %llu vs all %llu", (unsigned long long)r.best.index,
                 (unsigned long long)best.index);
    cr_assert(r.best.cycles == best.cycles && bytes_of(&r.best) == bytes_of(&best));
    cr_assert(found < 2 || (r.second.index == second.index && r.second.cycles == second.cycles),
              "runner-up: search %llu vs all %llu", (unsigned long long)r.second.index,
              (unsigned long long)second.index);
    if (kind == NPU_SLICE_GEMM) { /* gemm_tiling's checker accepts the tiles */
        npu_gemm_plan_t g;
        memset(&g, 0, sizeof g);
        npu_gemm_plan_from_slice(cfg, &r.best, M, N, K, 0, &g); /* the emitters' conversion */
        cr_assert_eq(npu_gemm_plan_check(cfg, &g), 0);
        cr_assert_eq(g.res, r.best.band); /* the band costed is the band emitted (1 A, 2 B) */
    }
}

Test(slice_search, bounded_search_equals_all)
{
    npu_cfg_t c8 = test_cfg(8), c2 = test_cfg(2);
    npu_conv_t a = {1, 20, 12, 11, 40, 3, 3, 1, 1, 1, 0}, b = {2, 9, 10, 8, 17, 3, 2, 2, 0, 1, 0};
    for (int mode = 0; mode < 2; mode++) {
        brute(&c8, mode, NPU_SLICE_GEMM, NULL, 300, 200, 100);
        brute(&c8, mode, NPU_SLICE_GEMM, NULL, 1000, 5, 5);
        brute(&c2, mode, NPU_SLICE_GEMM, NULL, 70, 33, 20);
        for (int kind = NPU_SLICE_FWD; kind <= NPU_SLICE_DW; kind++) {
            brute(&c8, mode, kind, &a, 0, 0, 0);
            brute(&c2, mode, kind, &b, 0, 0, 0);
        }
    }
}

/* The search bounds candidates, shares each tensor's tile grid between candidates and costs in
 * bound order: on random GEMM and convolution shapes, at three array sides, both modes, its pick
 * and runner-up are those of costing every candidate alone. */
Test(slice_search, pruned_equals_exhaustive_random, .timeout = 120)
{
    static const int sides[] = {2, 4, 8};
    uint64_t seed = 0xB0B;
    for (int it = 0; it < 42; it++) {
        npu_cfg_t cfg = test_cfg(sides[it % 3]);
        int mode = it / 3 % 2, M = 1 + (int)(test_rand(&seed) % 200), N = 1 + (int)(test_rand(&seed) % 200);
        int K = 1 + (int)(test_rand(&seed) % 200), kh = 1 + 2 * (int)(test_rand(&seed) % 2);
        npu_conv_t c = {1 + (int)(test_rand(&seed) % 3), 1 + (int)(test_rand(&seed) % 40),
                        kh + (int)(test_rand(&seed) % 10), kh + (int)(test_rand(&seed) % 10),
                        1 + (int)(test_rand(&seed) % 40), kh, kh, 1 + (int)(test_rand(&seed) % 2),
                        (int)(test_rand(&seed) % 2), 1, 0};
        cfg.dram_bw = 4 << (test_rand(&seed) % 4);
        brute(&cfg, mode, NPU_SLICE_GEMM, NULL, M, N, K);
        brute(&cfg, mode, NPU_SLICE_FWD + it % 3, &c, 0, 0, 0);
    }
}

Test(slice_search, rejects)
{
    npu_cfg_t cfg = test_cfg(8);
    npu_slice_cost_t k = npu_slice_cost_default(&cfg, NPU_SLICE_BURST);
    npu_conv_t dw = {1, 16, 8, 8, 16, 3, 3, 1, 1, 1, 1};
    npu_slice_result_t r;
    char msg[160];
    cr_assert_eq(npu_slice_gemm(&cfg, &k, 0, 4, 4, &r, msg, sizeof msg), -1);
    cr_assert_eq(npu_slice_conv(&cfg, &k, &dw, NPU_SLICE_FWD, &r, msg, sizeof msg), -1);
    cr_assert(strstr(msg, "depthwise"), "%s", msg);
    cr_assert_eq(npu_slice_mode_parse("noburst"), NPU_SLICE_NOBURST);
    cr_assert_eq(npu_slice_mode_parse("bursts"), -1);
}

/* --dram-bw / --dram-latency reach the cost constants: the formulas of the retimed config, and a
 * calibration moved by the same differences (unchanged when retimed to its own timing). */
Test(slice_search, retime_moves_the_costs_with_the_timing)
{
    npu_cfg_t c = test_cfg(8), f = c;
    npu_slice_cfg_retime(&f, 8, 100);
    cr_assert_eq(f.dram_bw, 8);
    cr_assert_eq(f.dram_latency, 100);
    npu_slice_cost_t k = npu_slice_cost_default(&f, NPU_SLICE_BURST);
    cr_assert_eq(k.byte, 65536u / 8, "byte at 8 B/cycle");
    cr_assert_eq(k.xfer_fixed, 104u << 16);
    c.calib = (npu_cfg_calib_t){1, 30u << 16, 4u << 16, 2048, 48u << 16, 8u << 16, 1u << 15,
                                100u << 16, 10u << 16, 0};
    npu_cfg_t same = c;
    npu_slice_cfg_retime(&same, c.dram_bw, c.dram_latency);
    cr_assert_eq(memcmp(&same.calib, &c.calib, sizeof c.calib), 0, "retimed to its own timing");
    npu_cfg_t r = c;
    npu_slice_cfg_retime(&r, 8, c.dram_latency + 40); /* B = 32: 32 -> 8 B/cycle is 4x per byte */
    cr_assert_eq(r.calib.byte, 4 * 2048u);
    cr_assert_eq(r.calib.xfer_fixed, (30u + 40) << 16);
    cr_assert_eq(r.calib.window, (10u << 16) + (40u << 16) / 4, "MAX_OUTSTANDING 4");
    cr_assert_eq(r.calib.lat_fixed, (100u << 16) + 40u * 3 / 4 * 65536);
    cr_assert_eq(r.calib.wave, c.calib.wave, "compute constants stay");
}

/* A STORE's fixed cost is xfer_fixed less the read latency, of the formula and of a calibration,
 * and stays when a retime moves both. */
Test(slice_search, store_fixed_derived)
{
    npu_cfg_t c = test_cfg(8);
    const uint64_t lat = (uint64_t)c.dram_latency << 16;
    npu_slice_cost_t k = npu_slice_cost_default(&c, NPU_SLICE_BURST);
    cr_assert_eq(k.store_fixed, k.xfer_fixed - lat);
    c.calib = (npu_cfg_calib_t){1, 37u << 16, 4u << 16, 2048, 48u << 16, 0, 1u << 15, 30u << 16, 9u << 16, 0};
    k = npu_slice_cost_default(&c, NPU_SLICE_BURST);
    cr_assert_eq(k.store_fixed, (37u << 16) - lat, "calibrated: the fitted xfer_fixed less the latency");
    npu_cfg_t r = c;
    npu_slice_cfg_retime(&r, 0, c.dram_latency + 50);
    cr_assert_eq(npu_slice_cost_default(&r, NPU_SLICE_BURST).store_fixed, k.store_fixed, "no read latency");
}

/* LOAD_PIPELINE = 1: a queued LOAD pays xfer_fixed, one on an idle engine xfer_fixed + xfer_idle
 * (the latency, formula DRAM_LATENCY + 3); a STORE and the fetch (one at a time) both; a retime
 * moves the latency in xfer_idle. LOAD_PIPELINE = 0: xfer_idle 0, the costs as they were. */
Test(slice_search, pipelined_loads_pay_the_latency_when_idle)
{
    npu_cfg_t c = test_cfg(8), p = c;
    p.load_pipeline = 1;
    npu_slice_cost_t k0 = npu_slice_cost_default(&c, NPU_SLICE_BURST), k1 = npu_slice_cost_default(&p, NPU_SLICE_BURST);
    cr_assert_eq(k0.xfer_idle, 0);
    cr_assert_eq(k1.xfer_fixed, 1u << 16);
    cr_assert_eq(k1.xfer_idle, (uint32_t)(c.dram_latency + 3) << 16);
    cr_assert_eq(npu_slice_xfer_alone(&k1), npu_slice_xfer_alone(&k0), "the engine alone: the same cost");
    cr_assert_eq(k1.store_fixed, k0.store_fixed);
    npu_bursts_t b = {6, 96, 3072, 2, 2, 0}; /* two transfers */
    cr_assert_eq(npu_slice_xfer_cost(&k1, &b, 32, 1), npu_slice_xfer_cost(&k0, &b, 32, 1), "STOREs not pipelined");
    cr_assert_eq(npu_slice_xfer_cost(&k0, &b, 32, 0) - npu_slice_xfer_cost(&k1, &b, 32, 0),
                 2ull * (k0.xfer_fixed - k1.xfer_fixed), "a LOAD: xfer_fixed per transfer");
    /* 16 one-beat LOADs: two in the engine, a latency per two (the RTL's 16 LOADs of 4 rows) */
    npu_bursts_t t = {16, 16, 512, 16, 16, 0};
    uint64_t bus16 = 16ull * 32 * k1.byte + 16ull * k1.burst + 16ull * k1.xfer_fixed;
    npu_slice_cost_t kb = k1;
    kb.lat_fixed = kb.window = 0; /* the bus and the two-in-flight terms alone */
    cr_assert_gt((16ull * kb.xfer_idle + bus16) / 2, bus16);
    cr_assert_eq(npu_slice_xfer_cost(&kb, &t, 32, 0), (16ull * kb.xfer_idle + bus16) / 2);
    p.calib = (npu_cfg_calib_t){1, 1u << 15, 4u << 16, 2048, 48u << 16, 8u << 16, 1u << 15, 0, 0, 37u << 16};
    npu_cfg_t r = p;
    npu_slice_cfg_retime(&r, 0, p.dram_latency + 40);
    cr_assert_eq(r.calib.xfer_idle, 77u << 16);
    cr_assert_eq(r.calib.xfer_fixed, 1u << 15, "the queued cost stays");
}

/* Speed guard (issue 16: a 100-point sweep of ResNet-50 in under a minute): the three kernels of
 * ResNet-50's heaviest layer for the search (conv3's 1x1 stride-2 shortcut, 56 x 56 x 256 -> 512,
 * batch 1) at S = 4 with 1 MiB of SPM and 16 B/cycle, as `npu sweep` searches them at one of its
 * points, in at most 0.3 s of CPU. On the machine of session 18 they took 0.50 s before the step
 * walk's early stop and the burst counter's shortcuts, 0.09 s with them, 0.42 s without the early
 * stop (planted: fails here), 0.15 s without the alike-runs shortcut (passes: too close to the
 * bound for a shared machine). CPU time, not wall: other jobs do not decide it. */
Test(slice_search, resnet50_layer_fast, .timeout = 60)
{
    npu_cfg_t cfg = test_cfg(8);
    npu_conv_t c = {1, 256, 56, 56, 512, 1, 1, 2, 0, 1, 0};
    npu_slice_result_t r;
    char msg[160];
    cfg.s = 4;
    cfg.dram_bw = 16;
    cfg.spm_bank_words = 1024 * 1024 / (cfg.spm_banks * npu_cfg_word(&cfg));
    npu_slice_cost_t k = npu_slice_cost_default(&cfg, NPU_SLICE_BURST);
    clock_t t0 = clock();
    for (int kind = NPU_SLICE_FWD; kind <= NPU_SLICE_DW; kind++)
        cr_assert_eq(npu_slice_conv(&cfg, &k, &c, kind, &r, msg, sizeof msg), 0, "%s", msg);
    double s = (double)(clock() - t0) / CLOCKS_PER_SEC;
    cr_log_info("resnet50_layer_fast: %.3f s CPU", s);
    cr_assert(s < 0.3, "ResNet-50 conv3 shortcut's three searches took %.2f s of CPU (bound 0.3 s)", s);
}

/* The DRAINs' SPM conflicts in the GEMM emitter's C staging layout (bank 2, C(t % 2) tiles
 * alternating, FlexSA's skinny DRAIN): summed over a program's tiles they equal the RTL's
 * drain_stall counter of the compute-only runs of modes/compute_only_utilization at small-w2
 * (S = 8, 1024-word banks; measured: 1024x5x32 at Mt = 160, 240 cycles; 1024x5x5 at Mt = 176,
 * 280), and they are 0 at the power-of-two heights the drain's pair choice is built for. */
static uint64_t program_stalls(const npu_cfg_t *cfg, int M, int Mt, int skinny)
{
    uint64_t lost = 0;
    for (int t = 0; t * Mt < M; t++) {
        int m = M - t * Mt < Mt ? M - t * Mt : Mt;
        lost += npu_slice_drain_stalls(cfg, 2048u + (uint64_t)(t % 2) * 2u * (uint64_t)Mt, m, skinny, 2);
    }
    return lost;
}

Test(slice_search, drain_stalls_equal_the_rtl)
{
    npu_cfg_t cfg = test_cfg(8);
    cr_assert_eq(program_stalls(&cfg, 1024, 160, 1), 240);
    cr_assert_eq(program_stalls(&cfg, 1024, 176, 1), 280);
    cr_assert_eq(program_stalls(&cfg, 1024, 256, 1), 0);
    cr_assert_eq(program_stalls(&cfg, 1024, 128, 1), 0);
    cr_assert_eq(program_stalls(&cfg, 4096, 256, 0), 0);
    /* a pair whose four words are in one bank's four sub-banks costs nothing; rows 0..3 at a
     * stride of 2 (plain: words 0, 1, 2, 3 / 4, 5, 6, 7) */
    cr_assert_eq(npu_slice_drain_stalls(&cfg, 2048, 4, 0, 2), 0);
}

/* The step walk charges them after the output tile's last step: a one-step GEMM of 160 x 5 x 16
 * costs its transfers, its compute and the mean of the two staging buffers' stalls (32 and 48
 * cycles: 40). */
Test(slice_search, drain_stalls_in_the_walk)
{
    npu_cfg_t cfg = test_cfg(8);
    npu_slice_cost_t k = npu_slice_cost_default(&cfg, NPU_SLICE_BURST);
    npu_slice_plan_t p;
    int64_t tile[3] = {160, 5, 16};
    cr_assert_eq(npu_slice_drain_stalls(&cfg, 2048, 160, 1, 2), 32);
    cr_assert_eq(npu_slice_drain_stalls(&cfg, 2048 + 320, 160, 1, 2), 48);
    cr_assert_eq(npu_slice_eval(&cfg, &k, NPU_SLICE_GEMM, NULL, 160, 5, 16, tile, NPU_SLICE_SPLIT_M, 0, &p), 0);
    cr_assert_eq(p.steps, 1);
    cr_assert_eq(p.cycles, p.t[0].cost + p.t[1].cost + p.t[2].cost + p.compute + k.drain_fixed +
                               (uint64_t)p.obuf_rows * k.drain_row + (40ull << NPU_SLICE_Q));
}

/* The loads the emitter issues for a GEMM plan (gemm_tiling.h npu_gemm_loads_a/b over its chunks
 * in tile order): A's in *a, B's in *b. */
static void emitted_loads(const npu_gemm_plan_t *g, uint64_t *a, uint64_t *b)
{
    long n = (long)g->m_tiles * g->n_tiles * g->k_chunks;
    *a = *b = 0;
    for (long i = 0; i < n; i++) {
        *a += (uint64_t)npu_gemm_loads_a(g, i);
        *b += (uint64_t)npu_gemm_loads_b(g, i);
    }
}

/* The resident band, costed: the banded input's tiles are each loaded once (A's M x K, B's K x N
 * bytes exactly), the other input as without the band, the cycles no more; the candidate converts
 * to gemm_tiling's plan with that band, whose emitter issues exactly the loads costed. */
Test(slice_search, band_loads_once)
{
    npu_cfg_t cfg = test_cfg(8);
    npu_slice_cost_t k = npu_slice_cost_default(&cfg, NPU_SLICE_BURST);
    npu_slice_plan_t plain, band;
    npu_gemm_plan_t g;
    int64_t tile[3] = {16, 16, 16}; /* 64 x 48 x 64: 4 m-tiles, 3 n-tiles, 4 K chunks */
    uint64_t la, lb;
    for (int order = 0; order < 2; order++) {
        int in = order; /* order 0: m outermost, A's band; 1: n outermost, B's */
        cr_assert_eq(npu_slice_eval_band(&cfg, &k, NPU_SLICE_GEMM, NULL, 64, 48, 64, tile, 0, order,
                                         NPU_SLICE_BAND_NONE, &plain), 0);
        cr_assert_eq(npu_slice_eval_band(&cfg, &k, NPU_SLICE_GEMM, NULL, 64, 48, 64, tile, 0, order,
                                         NPU_SLICE_BAND_ON, &band), 0);
        cr_assert_eq(plain.band, NPU_SLICE_BAND_NONE);
        cr_assert_eq(band.band, in + 1);
        cr_assert_eq(plain.t[in].loads, 48u); /* every chunk (4 > 2: never the tile two back) */
        cr_assert_eq(band.t[in].loads, in ? 3u * 4 : 4u * 4);
        cr_assert_eq(band.t[in].b.bytes, 64u * (in ? 48 : 64) * 2);
        cr_assert_eq(band.t[1 - in].loads, plain.t[1 - in].loads);
        cr_assert_eq(band.t[1 - in].b.bytes, plain.t[1 - in].b.bytes);
        cr_assert(band.cycles < plain.cycles, "order %d: %llu vs %llu", order,
                  (unsigned long long)band.cycles, (unsigned long long)plain.cycles);
        cr_assert_eq(npu_gemm_plan_from_slice(&cfg, &band, 64, 48, 64, 0, &g), 0);
        cr_assert_eq(g.res, in ? NPU_GEMM_RES_B : NPU_GEMM_RES_A);
        emitted_loads(&g, &la, &lb);
        cr_assert(la == band.t[0].loads && lb == band.t[1].loads, "order %d: emitted %llu %llu", order,
                  (unsigned long long)la, (unsigned long long)lb);
        cr_assert_eq(npu_gemm_plan_from_slice(&cfg, &plain, 64, 48, 64, 0, &g), 0);
        cr_assert_eq(g.res, NPU_GEMM_RES_NONE);
        emitted_loads(&g, &la, &lb);
        cr_assert(la == plain.t[0].loads && lb == plain.t[1].loads);
    }
}

/* A band fits where gemm_tiling places its chunks (npu_gemm_band_fits): at most NPU_GEMM_RES_MAX
 * chunks; K = 300 in 16-deep chunks is 19, refused (the plain candidate fits); in 32-deep ones 10. */
Test(slice_search, band_fit_is_gemm_tilings)
{
    npu_cfg_t cfg = test_cfg(8);
    npu_slice_cost_t k = npu_slice_cost_default(&cfg, NPU_SLICE_BURST);
    npu_slice_plan_t p;
    int64_t t16[3] = {16, 16, 16}, t32[3] = {16, 16, 32};
    cr_assert_eq(npu_slice_eval_band(&cfg, &k, NPU_SLICE_GEMM, NULL, 64, 48, 300, t16, 0, 1, 0, &p), 0);
    cr_assert_eq(npu_slice_eval_band(&cfg, &k, NPU_SLICE_GEMM, NULL, 64, 48, 300, t16, 0, 1, 1, &p), 1);
    cr_assert_eq(npu_gemm_band_fits(&cfg, 64, 48, 300, t16, NPU_GEMM_RES_B), 0);
    cr_assert_eq(npu_gemm_band_fits(&cfg, 64, 48, 300, t32, NPU_GEMM_RES_B), 1);
    cr_assert_eq(npu_slice_eval_band(&cfg, &k, NPU_SLICE_GEMM, NULL, 64, 48, 300, t32, 0, 1, 1, &p), 0);
    cr_assert_eq(p.t[1].loads, 10u * 3); /* B's 3 n-tiles x 10 chunks, once */
    /* a convolution has no band option */
    npu_conv_t c = {1, 16, 6, 6, 16, 3, 3, 1, 1, 1, 0};
    int64_t ct[5] = {1, 6, 6, 16, 16};
    cr_assert_eq(npu_slice_eval_band(&cfg, &k, NPU_SLICE_FWD, &c, 0, 0, 0, ct, 0, 0, 1, &p), -1);
}

/* The search's pick with a band is emitted with it: npu_gemm_tile_sliced's plan (what --slicing
 * auto/burst run) carries the band of the search's best, on shapes whose pick keeps one. */
Test(slice_search, pick_emits_its_band)
{
    npu_cfg_t cfg = test_cfg(8);
    static const int shapes[][3] = {{1024, 256, 16}, {2048, 6, 54}, {4096, 24, 24}, {300, 200, 100}};
    int banded = 0;
    for (int i = 0; i < 4; i++) {
        npu_slice_cost_t k = npu_slice_cost_default(&cfg, NPU_SLICE_BURST);
        npu_slice_result_t r;
        npu_gemm_plan_t g;
        uint64_t la, lb;
        char msg[160];
        int M = shapes[i][0], N = shapes[i][1], K = shapes[i][2];
        cr_assert_eq(npu_slice_gemm(&cfg, &k, M, N, K, &r, msg, sizeof msg), 0, "%s", msg);
        cr_assert_eq(npu_gemm_tile_sliced(&cfg, M, N, K, NPU_SLICE_BURST, NPU_POLICY_FLEXSA, &g), 0);
        cr_assert_eq(g.res, r.best.band, "%dx%dx%d", M, N, K);
        emitted_loads(&g, &la, &lb);
        cr_assert(la == r.best.t[0].loads && lb == r.best.t[1].loads, "%dx%dx%d", M, N, K);
        banded += g.res != NPU_GEMM_RES_NONE;
    }
    cr_assert(banded >= 2, "the shapes lost their purpose: %d banded picks", banded);
}
