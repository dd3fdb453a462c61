/* test_tiling.c - tiling constraints, optimality against brute force, preferences, rejects. */
#include <criterion/criterion.h>
#include <string.h>

#include "compile/gemm/gemm_tiling.h"
#include "test_cfgs.h"

static int cdiv(int a, int b) { return (a + b - 1) / b; }

/* Independent constraint check (does not call npu_gemm_plan_check). */
static void check_constraints(const npu_cfg_t *c, const npu_gemm_plan_t *p, int M, int N, int K)
{
    int F = 2 * c->s, bw = c->spm_bank_words;
    cr_assert_eq(p->M, M);
    cr_assert_eq(p->N, N);
    cr_assert_eq(p->K, K);
    cr_assert_eq(p->F, F);
    if (M < F)
        cr_assert_eq(p->Mt, M, "M < F: Mt = M");
    else
        cr_assert(p->Mt > 0 && p->Mt % F == 0, "Mt %d multiple of F %d", p->Mt, F);
    cr_assert(p->Mt <= cdiv(M, F) * F, "Mt %d no larger than needed", p->Mt);
    cr_assert(p->nb >= 1 && p->nb <= cdiv(N, F));
    cr_assert_eq(p->Nt, p->nb * F);
    cr_assert(p->Kc >= F && p->Kc % F == 0);
    cr_assert(p->Kc <= cdiv(K, F) * F);
    cr_assert(p->Mt * p->nb <= c->obuf_rows, "OBUF: %d*%d > %d", p->Mt, p->nb, c->obuf_rows);
    cr_assert(2 * p->Mt * (p->Kc / F) <= bw, "A double buffer");
    cr_assert(2 * p->Kc * p->nb <= bw, "B double buffer");
    cr_assert(2 * p->Mt * p->nb * 2 <= bw, "C double buffer");
    cr_assert_eq(p->m_tiles, cdiv(M, p->Mt));
    cr_assert_eq(p->n_tiles, cdiv(N, p->Nt));
    cr_assert_eq(p->k_chunks, cdiv(K, p->Kc));
    /* buffers: A in bank 0, B in bank 1, C in bank 2, disjoint */
    cr_assert_eq(p->spm_a[0], 0u);
    cr_assert_eq(p->spm_a[1], (unsigned)(p->Mt * (p->Kc / F)));
    cr_assert(p->spm_a[1] + (unsigned)(p->Mt * (p->Kc / F)) <= (unsigned)bw);
    cr_assert_eq(p->spm_b[0], (unsigned)bw);
    cr_assert_eq(p->spm_b[1], (unsigned)(bw + p->Kc * p->nb));
    cr_assert(p->spm_b[1] + (unsigned)(p->Kc * p->nb) <= 2u * (unsigned)bw);
    cr_assert_eq(p->spm_c[0], 2u * (unsigned)bw);
    cr_assert_eq(p->spm_c[1], (unsigned)(2 * bw + 2 * p->Mt * p->nb));
    cr_assert(p->spm_c[1] + (unsigned)(2 * p->Mt * p->nb) <= 3u * (unsigned)bw);
    cr_assert_eq(npu_gemm_plan_check(c, p), 0);
}

static uint64_t bytes_of(int M, int N, int K, int Mt, int Nt)
{
    return 2ull * (uint64_t)K * ((uint64_t)M * (uint64_t)cdiv(N, Nt) + (uint64_t)N * (uint64_t)cdiv(M, Mt));
}

/* Brute force over every feasible (Mt, nb, Kc): the plan has the least traffic; among those, it
 * honours Mt >= 4F when any optimum does, then has the fewest K chunks in its class. */
static void check_optimal(const npu_cfg_t *c, const npu_gemm_plan_t *p, int M, int N, int K)
{
    int F = 2 * c->s, bw = c->spm_bank_words;
    uint64_t best = UINT64_MAX;
    int best_has_4f = 0, min_chunks_same_class = 1 << 30;
    int plan_4f = !(M >= 4 * F && p->Mt < 4 * F);
    for (int Mt = M < F ? M : F; Mt <= (M < F ? M : cdiv(M, F) * F); Mt += (M < F ? 1 : F))
        for (int nb = 1; nb <= cdiv(N, F); nb++)
            for (int Kc = F; Kc <= cdiv(K, F) * F; Kc += F) {
                uint64_t b;
                if (Mt * nb > c->obuf_rows || 2 * Mt * (Kc / F) > bw || 2 * Kc * nb > bw ||
                    4 * Mt * nb > bw)
                    continue;
                b = bytes_of(M, N, K, Mt, nb * F);
                if (b < best) {
                    best = b;
                    best_has_4f = 0;
                }
                if (b == best && !(M >= 4 * F && Mt < 4 * F))
                    best_has_4f = 1;
            }
    cr_assert_eq(p->est_dram_bytes, bytes_of(M, N, K, p->Mt, p->Nt));
    cr_assert_eq(p->est_dram_bytes, best, "M=%d N=%d K=%d S=%d: plan %llu bytes, best %llu", M, N,
                 K, c->s, (unsigned long long)p->est_dram_bytes, (unsigned long long)best);
    cr_assert(!best_has_4f || plan_4f, "an optimum has Mt >= 4F but the plan has Mt=%d", p->Mt);
    for (int Mt = M < F ? M : F; Mt <= (M < F ? M : cdiv(M, F) * F); Mt += (M < F ? 1 : F))
        for (int nb = 1; nb <= cdiv(N, F); nb++)
            for (int Kc = F; Kc <= cdiv(K, F) * F; Kc += F) {
                if (Mt * nb > c->obuf_rows || 2 * Mt * (Kc / F) > bw || 2 * Kc * nb > bw ||
                    4 * Mt * nb > bw)
                    continue;
                if (bytes_of(M, N, K, Mt, nb * F) == best &&
                    (!(M >= 4 * F && Mt < 4 * F)) == plan_4f && cdiv(K, Kc) < min_chunks_same_class)
                    min_chunks_same_class = cdiv(K, Kc);
            }
    cr_assert_eq(p->k_chunks, min_chunks_same_class, "fewest K chunks");
}

static const int dims[] = {1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 97, 127,
                           128, 129, 255, 256, 257, 300, 511, 1000};

Test(tiling, constraints_and_optimality_many_shapes)
{
    static const int ss[] = {2, 8, 16};
    uint64_t seed = 5;
    for (int si = 0; si < 3; si++) {
        npu_cfg_t c = test_cfg(ss[si]);
        for (int it = 0; it < 250; it++) {
            int nd = (int)(sizeof dims / sizeof dims[0]);
            int M = dims[test_rand(&seed) % (uint64_t)nd], N = dims[test_rand(&seed) % (uint64_t)nd];
            int K = dims[test_rand(&seed) % (uint64_t)nd];
            npu_gemm_plan_t p, q;
            cr_assert_eq(npu_gemm_tile(&c, M, N, K, &p), 0, "no plan for %dx%dx%d S=%d", M, N, K, c.s);
            check_constraints(&c, &p, M, N, K);
            check_optimal(&c, &p, M, N, K);
            cr_assert_eq(npu_gemm_tile(&c, M, N, K, &q), 0);
            cr_assert(memcmp(&p, &q, sizeof p) == 0, "deterministic");
        }
    }
}

Test(tiling, known_plans)
{
    npu_cfg_t c8 = test_cfg(8), c16 = test_cfg(16), c2 = test_cfg(2);
    npu_gemm_plan_t p;
    cr_assert_eq(npu_gemm_tile(&c8, 1024, 1024, 1024, &p), 0);
    cr_assert_eq(p.Mt, 64);
    cr_assert_eq(p.Nt, 64);
    cr_assert_eq(p.Kc, 128);
    cr_assert_eq(p.spm_a[1], 512u);
    cr_assert_eq(p.spm_b[1], 1024u + 512u);
    cr_assert_eq(p.spm_c[1], 2048u + 512u);
    /* S=16: Mt=64/nb=4 and Mt=128/nb=2 move the same bytes; Mt >= 4F wins */
    cr_assert_eq(npu_gemm_tile(&c16, 4096, 4096, 4096, &p), 0);
    cr_assert_eq(p.Mt, 128);
    cr_assert_eq(p.nb, 2);
    cr_assert_eq(npu_gemm_tile(&c2, 1, 1, 1, &p), 0);
    cr_assert_eq(p.Mt, 1);
    cr_assert_eq(p.nb, 1);
    cr_assert_eq(p.Kc, 4);
    cr_assert_eq(p.m_tiles * p.n_tiles * p.k_chunks, 1);
    /* small N: one F-column block, all of M in one tile */
    cr_assert_eq(npu_gemm_tile(&c8, 256, 16, 64, &p), 0);
    cr_assert_eq(p.nb, 1);
    cr_assert_eq(p.Mt, 256);
    cr_assert_eq(p.m_tiles, 1);
    /* K balanced: K=300 at S=8 fits in chunks of <= 112 -> 3 chunks of 112 (not 128+128+44) */
    cr_assert_eq(npu_gemm_tile(&c8, 300, 300, 300, &p), 0);
    cr_assert_eq(p.k_chunks, 3);
    cr_assert_eq(p.Kc, 112);
}

Test(tiling, rejects)
{
    npu_cfg_t c = test_cfg(8);
    npu_gemm_plan_t p;
    cr_assert_eq(npu_gemm_tile(&c, 0, 1, 1, &p), -1);
    cr_assert_eq(npu_gemm_tile(&c, 1, -1, 1, &p), -1);
    cr_assert_eq(npu_gemm_tile(&c, 1, 1, 0, &p), -1);
    c.obuf_rows = 8; /* M >= F needs Mt >= F = 16 OBUF rows */
    cr_assert_eq(npu_gemm_tile(&c, 64, 64, 64, &p), -1);
    cr_assert_eq(npu_gemm_tile(&c, 8, 64, 64, &p), 0, "M = 8 < F fits");
    c = test_cfg(8);
    c.spm_banks = 2;
    cr_assert_eq(npu_gemm_tile(&c, 64, 64, 64, &p), -1, "needs three banks");
    c = test_cfg(8);
    c.spm_bank_words = 16; /* C staging for Mt = 16 needs 64 words */
    cr_assert_eq(npu_gemm_tile(&c, 64, 64, 64, &p), -1);
}

Test(tiling, plan_check_catches_broken_plans)
{
    npu_cfg_t c = test_cfg(8);
    npu_gemm_plan_t p, q;
    cr_assert_eq(npu_gemm_tile(&c, 300, 300, 300, &p), 0);
    q = p; q.Kc += 1;               cr_assert_eq(npu_gemm_plan_check(&c, &q), -1);
    q = p; q.Mt += 16; q.m_tiles = cdiv(300, q.Mt); cr_assert_eq(npu_gemm_plan_check(&c, &q), -1);
    q = p; q.nb = 8; q.Nt = 128; q.n_tiles = 3; cr_assert_eq(npu_gemm_plan_check(&c, &q), -1);
    q = p; q.spm_b[1] = q.spm_b[0]; cr_assert_eq(npu_gemm_plan_check(&c, &q), -1);
    q = p; q.k_chunks = 1;          cr_assert_eq(npu_gemm_plan_check(&c, &q), -1);
}

/* Split last (gemm_tiling.h): the last m-tile's rows as two m-tiles, halves rounded to 2S blocks;
 * only with one n-tile, counted in m_tiles; the rows tile M exactly. */
Test(tiling, split_last_rows_and_check)
{
    npu_cfg_t c = test_cfg(8);
    npu_gemm_plan_t p, q;
    cr_assert_eq(npu_gemm_tile(&c, 1000, 5, 7, &p), 0);
    cr_assert_eq(p.Mt, 256);
    cr_assert_eq(p.m_tiles, 4);
    cr_assert(npu_gemm_split_last_ok(&p));
    q = p;
    q.split_last = 1;
    cr_assert_neq(npu_gemm_plan_check(&c, &q), 0, "m_tiles must count the extra tile");
    q.m_tiles++;
    cr_assert_eq(npu_gemm_plan_check(&c, &q), 0);
    static const int m0[5] = {0, 256, 512, 768, 880}, rows[5] = {256, 256, 256, 112, 120};
    for (int i = 0; i < 5; i++) {
        cr_assert_eq(npu_gemm_m0(&q, i), m0[i], "tile %d", i);
        cr_assert_eq(npu_gemm_mrows(&q, i), rows[i], "tile %d", i);
        cr_assert_eq(npu_gemm_m0(&p, i < 4 ? i : 3), (i < 4 ? i : 3) * 256, "unsplit");
    }
    cr_assert(!npu_gemm_split_last_ok(&q), "split once");
    /* halves under 2S rows: not offered; several n-tiles: rejected by the check */
    q = p;
    q.M = 768 + 20; /* a last tile of 20 rows: halves of 0 and 20 */
    cr_assert(!npu_gemm_split_last_ok(&q));
    q.M = 768 + 32;
    cr_assert(npu_gemm_split_last_ok(&q));
    q = p; /* the 1000 x 5 plan with N = 20: two n-tiles of 16 columns */
    q.N = 20;
    q.n_tiles = 2;
    cr_assert_eq(npu_gemm_plan_check(&c, &q), 0);
    cr_assert(!npu_gemm_split_last_ok(&q));
    q.split_last = 1;
    q.m_tiles++;
    cr_assert_neq(npu_gemm_plan_check(&c, &q), 0);
}
