/*
 * gemm_tiling.h - the compiler's tiling stage for C[MxN] = A[MxK] * B[KxN] (FW mode only).
 *
 * F = 2S is the fused array side. An output tile is Mt rows x Nt = nb*F columns; K is streamed
 * in chunks of Kc (a multiple of F) through double-buffered SPM buffers:
 *   bank 0: A0, A1   each Mt rows x Kc/F words       (2*Mt*(Kc/F) <= SPM_BANK_WORDS; split A below)
 *   bank 1: B0, B1   each Kc rows x nb words         (2*Kc*nb     <= SPM_BANK_WORDS)
 *   bank 2: C0, C1   each Mt rows x 2*nb words (int32 staging, 2*Mt*nb*2 <= SPM_BANK_WORDS)
 * and the OBUF half holds the tile as nb blocks of Mt rows (Mt*nb <= OBUF_ROWS).
 *
 * Choice (pure, deterministic), lexicographic:
 *  1. minimise the estimated DRAM operand traffic 2*K*(M*ceil(N/Nt) + N*ceil(M/Mt)) bytes,
 *     i.e. 2/Nt_eff + 2/Mt_eff per MAC with Nt_eff = N/ceil(N/Nt), Mt_eff = M/ceil(M/Mt);
 *  2. prefer Mt >= 4F when M >= 4F (the next stationary tile loads behind the current wave);
 *  3. prefer fewer K chunks (larger Kc);
 *  4. prefer the smaller tile (fewer padded OBUF/SPM rows), then the smaller Mt.
 * Mt is a multiple of F up to roundup(M, F), or Mt = M when M < F; nb <= ceil(N/F). Once the
 * number of chunks is fixed, Kc is the smallest multiple of F giving that many chunks
 * (balanced chunks, smallest buffers).
 *
 * Resident band (npu_gemm_tile_res: applied to the tiles chosen above; the slicing stage costs
 * it per candidate and npu_gemm_tile_sliced emits the one it picked, fitted by
 * npu_gemm_band_fits, the placement below): when a tile has at
 * most NPU_GEMM_RES_MAX chunks and they all fit, one operand's band over the whole K stays in the
 * SPM while the inner tile loop runs over the other operand: RES_B (n-major tiles) keeps the
 * n-tile's B chunks, so B is read once; RES_A (m-major) keeps the m-tile's A chunks. A chunk
 * whose band is resident is not loaded.
 *  - k_chunks >= 2: chunk c of the band has its own buffer (spm_res[c]): in the operand's own
 *    bank (the first two coincide with its double buffer), then in the banks the plain plan
 *    leaves free (3 and up), a chunk never straddling a bank. The next band overwrites it
 *    k_chunks >= 2 chunks after its last use.
 *  - k_chunks = 1: band j sits in the operand's double buffer j % 2; band j + 1 overwrites band
 *    j - 1, whose last use was at least two chunks earlier.
 * Either way that load waits for EXEC(g-2) like every load: the tokens are the plain plan's. The
 * variant that cuts the traffic most is taken (the band counted once); at equal traffic the one
 * with fewer DMA rows (RES_B when A's rows are the longer).
 *
 * Double-buffer reuse (every plan): chunk g's A (B) is not loaded when chunk g - 2 used the same
 * chunk of it, since buffer g % 2 still holds it (npu_gemm_loads_a/b). So the inner operand of a
 * loop whose tiles x chunks repeat with period 1 or 2 (B of an m-major plan with n_tiles x
 * k_chunks <= 2) is loaded by the first two chunks only, and an outer operand in one or two
 * chunks at most twice per outer tile.
 *
 * Split A (the slicing stage's candidates; the search above never needs it): when one A buffer
 * fits a bank but two do not, A0 stays at word 0 and A1 goes to the start of bank 3. Bank 3 is then
 * taken, so such a plan has no C band and a band only with one K chunk (in the double buffer).
 * The GEMM runtime keeps such a pick only when the program-time model times it faster than the
 * stage's best pick without it (npu_gemm_tile_sliced_ex, run/runtime.c).
 *
 * Split last (split_last, the GEMM runtime's choice by the program-time model, run/runtime.c):
 * with one n-tile the last m-tile's rows go as two m-tiles of about half each, so the work left
 * after the last LOAD (its waves, DRAIN and STORE) is half a tile's and the first half's STORE
 * overlaps the second half's waves: 4096 x 5 x 5 at small-w2, 64 B/cycle, ends 9 cycles sooner
 * (the DRAM bus runs all along). Only the last tile: smaller tiles before it would have their
 * LOADs wait for the waves two tiles back (the double buffer), and a smaller first tile paid in
 * bursts what it gained at the head (both measured, not kept).
 *
 * C band (cband, only with RES_A and m-major tiles over >= 2 n-tiles; the slicing stage's
 * NPU_SLICE_BAND_OUT): the C buffers are two bands, each Mt rows x 2 ceil(N / 2S) words (all of N,
 * npu_gemm_c_words) from bank 2 on, possibly over several banks (the A band's extra chunks then
 * start in the first bank above them). Tile (mi, ni) drains into band mi % 2 at its columns, and
 * only the m-tile's last tile STOREs: the band's Mt whole rows, contiguous in DRAM, so the STORE
 * runs in the longest bursts the 4 KiB rule allows instead of one burst per tile row (1024 x 256 x
 * 16 at small-w2: 2,048 bursts of 512 B became 256 of 4 KiB). The first DRAINs of m-tile mi wait
 * for the STORE of m-tile mi - 2 (the same band).
 */
#ifndef NPU_GEMM_TILING_H
#define NPU_GEMM_TILING_H

#include <stdint.h>

#include "hw/npu_cfg.h"

#define NPU_GEMM_RES_MAX 16
enum { NPU_GEMM_RES_NONE = 0, NPU_GEMM_RES_A = 1, NPU_GEMM_RES_B = 2 };

typedef struct npu_gemm_plan {
    int M, N, K;
    int F;           /* 2S */
    int Mt;          /* rows per output tile */
    int nb;          /* F-column blocks per output tile */
    int Nt;          /* nb * F */
    int Kc;          /* K chunk, multiple of F */
    int m_tiles, n_tiles, k_chunks; /* ceil(M/Mt), ceil(N/Nt), ceil(K/Kc) */
    int order;       /* output tiles m-major (0: tile t = mi*n_tiles + ni) or n-major (1) */
    unsigned spm_a[2], spm_b[2], spm_c[2]; /* SPM word addresses of the double buffers */
    int res;         /* resident band: NPU_GEMM_RES_NONE, _A (order 0) or _B (order 1) */
    unsigned spm_res[NPU_GEMM_RES_MAX]; /* the band's chunk c buffer (res != NONE) */
    int cband;       /* C's output band (order 0, n_tiles >= 2): spm_c[0], spm_c[1] hold m-tile
                        mi % 2's Mt rows of all of N, one STORE of whole rows per m-tile */
    int split_last;  /* the last m-tile's rows as two m-tiles, both counted in m_tiles ("Split
                        last" above; one n-tile only) */
    uint64_t est_dram_bytes; /* criterion 1 (operand bytes, without padding or C) */
} npu_gemm_plan_t;

/* Rows of the first of the two halves of the last m-tile's R rows: half of them, rounded down to
 * whole 2S blocks (the other half takes the rest). */
static inline int npu_gemm_half_rows(const npu_gemm_plan_t *p, int R)
{
    return R / 2 / p->F * p->F;
}
/* First row and rows of m-tile mi: mi * Mt and min(Mt, M - m0), except the halves of a split
 * last m-tile (the rows run to the next tile's first, or to M). */
static inline int npu_gemm_m0(const npu_gemm_plan_t *p, int mi)
{
    int last = p->m_tiles - 2; /* the first half of a split last m-tile */
    if (!p->split_last || mi <= last)
        return mi * p->Mt;
    return last * p->Mt + npu_gemm_half_rows(p, p->M - last * p->Mt);
}
static inline int npu_gemm_mrows(const npu_gemm_plan_t *p, int mi)
{
    return (mi + 1 < p->m_tiles ? npu_gemm_m0(p, mi + 1) : p->M) - npu_gemm_m0(p, mi);
}
/* The m-tile holding row `row` (0 <= row < M). */
static inline int npu_gemm_mtile_of(const npu_gemm_plan_t *p, int row)
{
    int mi = row / p->Mt;
    if (p->split_last && mi >= p->m_tiles - 2)
        return row >= npu_gemm_m0(p, p->m_tiles - 1) ? p->m_tiles - 1 : p->m_tiles - 2;
    return mi;
}
/* Can plan p (not split) split its last m-tile? One n-tile, no C band, both halves >= 2S rows. */
static inline int npu_gemm_split_last_ok(const npu_gemm_plan_t *p)
{
    int R = p->M - (p->m_tiles - 1) * p->Mt, h = npu_gemm_half_rows(p, R);
    return !p->split_last && p->n_tiles == 1 && !p->cband && h >= p->F && R - h >= p->F;
}

/* Returns 0 and fills *plan, or -1 (bad sizes, or no plan fits the config). No resident band. */
int npu_gemm_tile(const npu_cfg_t *cfg, int M, int N, int K, npu_gemm_plan_t *plan);

/* npu_gemm_tile with even_regions = 1: the OBUF must also hold nb regions of Mt rounded up to
 * even rows (the 1G4C emission's two n-halves of ceil(m/2) rows each, gemm_emit.h). */
int npu_gemm_tile_ex(const npu_cfg_t *cfg, int M, int N, int K, int even_regions,
                     npu_gemm_plan_t *plan);
/* npu_gemm_tile_ex whose candidates may also keep a resident band (above): the GEMM emitter's
 * tiling. */
int npu_gemm_tile_res(const npu_cfg_t *cfg, int M, int N, int K, int even_regions,
                      npu_gemm_plan_t *plan);
/* The output tile of index t in the plan's order (the order the emitter runs them in). */
static inline void npu_gemm_tile_at(const npu_gemm_plan_t *p, long t, int *mi, int *ni)
{
    *mi = (int)(p->order ? t % p->m_tiles : t / p->n_tiles);
    *ni = (int)(p->order ? t / p->m_tiles : t % p->n_tiles);
}
static inline long npu_gemm_tile_index(const npu_gemm_plan_t *p, int mi, int ni)
{
    return p->order ? (long)ni * p->m_tiles + mi : (long)mi * p->n_tiles + ni;
}

/* "" or ", A band resident" / ", B band resident", then ", C band": the reports' spelling of
 * plan->res and plan->cband. */
static inline const char *npu_gemm_res_text(const npu_gemm_plan_t *p)
{
    if (p->cband)
        return p->res == NPU_GEMM_RES_A ? ", A band resident, C band" : ", C band";
    return p->res == NPU_GEMM_RES_A ? ", A band resident" : p->res == NPU_GEMM_RES_B ? ", B band resident" : "";
}

/* SPM words of one C staging buffer: an output tile's Mt rows x 2 nb words, or with the C band
 * Mt rows of all of N (2 ceil(N / 2S) words each). */
static inline unsigned npu_gemm_c_words(const npu_gemm_plan_t *p)
{
    return (unsigned)p->Mt * 2u * (unsigned)(p->cband ? (p->N + p->F - 1) / p->F : p->nb);
}

/* Chunk g's tile of A (B): m-tile (n-tile) x K chunks + its chunk. */
static inline long npu_gemm_key_a(const npu_gemm_plan_t *p, long g)
{
    int mi, ni;
    npu_gemm_tile_at(p, g / p->k_chunks, &mi, &ni);
    return (long)mi * p->k_chunks + g % p->k_chunks;
}
static inline long npu_gemm_key_b(const npu_gemm_plan_t *p, long g)
{
    int mi, ni;
    npu_gemm_tile_at(p, g / p->k_chunks, &mi, &ni);
    return (long)ni * p->k_chunks + g % p->k_chunks;
}

/* SPM word address of chunk g's A and B buffers. */
static inline unsigned npu_gemm_spm_a(const npu_gemm_plan_t *p, long g)
{
    if (p->res != NPU_GEMM_RES_A)
        return p->spm_a[g % 2];
    return p->k_chunks > 1 ? p->spm_res[g % p->k_chunks] : p->spm_a[(g / p->n_tiles) % 2];
}
static inline unsigned npu_gemm_spm_b(const npu_gemm_plan_t *p, long g)
{
    if (p->res != NPU_GEMM_RES_B)
        return p->spm_b[g % 2];
    return p->k_chunks > 1 ? p->spm_res[g % p->k_chunks] : p->spm_b[(g / p->m_tiles) % 2];
}
/* Does chunk g load its A (B) chunk? Not when its resident band is there already: the tile
 * before it in the order shares its m-tile (n-tile). Nor when its double buffer g % 2 holds it
 * already: chunk g - 2 used the same chunk of the operand (the inner operand of a loop whose
 * tiles x chunks cycle with period 2 or 1 is loaded in the first two chunks only). */
static inline int npu_gemm_loads_a(const npu_gemm_plan_t *p, long g)
{
    if (p->res == NPU_GEMM_RES_A)
        return (g / p->k_chunks) % p->n_tiles == 0;
    return g < 2 || npu_gemm_key_a(p, g) != npu_gemm_key_a(p, g - 2);
}
static inline int npu_gemm_loads_b(const npu_gemm_plan_t *p, long g)
{
    if (p->res == NPU_GEMM_RES_B)
        return (g / p->k_chunks) % p->m_tiles == 0;
    return g < 2 || npu_gemm_key_b(p, g) != npu_gemm_key_b(p, g - 2);
}

/* Gives plan (valid, no band) the resident band that cuts its traffic most, if one fits (the
 * same tiles; npu_gemm_tile_res's last step). */
void npu_gemm_plan_band(const npu_cfg_t *cfg, npu_gemm_plan_t *plan);

/* The tiling the slicing stage picks (compile/slice, docs/compiler.md "Slicing") under its
 * burst-aware (NPU_SLICE_BURST) or bytes-only (NPU_SLICE_NOBURST) cost, converted to this plan:
 * Mt, Kc rounded up to whole 2S blocks, Nt = nb * 2S, its loop order (m-major or n-major tiles)
 * and the resident band it costed (RES_A with m-major, RES_B with n-major tiles, or none; no
 * band is added afterwards); its core split is not used (the emitter's policy maps the waves).
 * policy (npu_flexsa_policy_t): the emitter's, whose waves the search costs (slice_cost.h
 * npu_slice_gemm_compute); 1G4C also asks for even_regions (npu_gemm_tile_ex). Returns 0, or -1
 * when the search fails or its pick does not fit this plan. */
int npu_gemm_tile_sliced(const npu_cfg_t *cfg, int M, int N, int K, int cost_mode, int policy,
                         npu_gemm_plan_t *plan);
/* npu_gemm_tile_sliced with no_split_a = 1: the stage's pick among the candidates that keep both A
 * buffers in bank 0 (the runtime times it against a split-A pick, run/runtime.c). */
int npu_gemm_tile_sliced_ex(const npu_cfg_t *cfg, int M, int N, int K, int cost_mode, int policy, int no_split_a,
                            npu_gemm_plan_t *plan);
/* Is plan's A double buffer split over banks 0 and 3 ("Split A" above)? 1 or 0. */
int npu_gemm_split_a(const npu_cfg_t *cfg, const npu_gemm_plan_t *plan);
/* The conversion alone, of any GEMM candidate of the slicing stage (npu_slice_eval). */
struct npu_slice_plan;
int npu_gemm_plan_from_slice(const npu_cfg_t *cfg, const struct npu_slice_plan *sp, int M, int N, int K,
                             int even_regions, npu_gemm_plan_t *plan);
/* Does resident band res (NPU_GEMM_RES_A: m-major, _B: n-major) fit the plan of slicing tiles
 * tile (m, n, k elements; converted as npu_gemm_plan_from_slice), its chunks placed as above?
 * 1 or 0. The slicing stage's fit rule for its banded GEMM candidates. */
int npu_gemm_band_fits(const npu_cfg_t *cfg, int M, int N, int K, const int64_t *tile, int res);
/* Does the C band with A's band (m-major, "C band" above) fit the plan of slicing tiles tile?
 * 1 or 0. The slicing stage's fit rule for its NPU_SLICE_BAND_OUT candidates. */
int npu_gemm_cband_fits(const npu_cfg_t *cfg, int M, int N, int K, const int64_t *tile);

/* The plan's tiles, order and band without its C band (for a result kept resident in the SPM,
 * which the C band does not apply to), its buffers placed again. 0, or -1 (plan unchanged) when
 * those tiles do not fit without it. */
int npu_gemm_plan_no_cband(const npu_cfg_t *cfg, npu_gemm_plan_t *plan);

/* Checks every constraint of a plan against cfg (used by the tests); 0 = valid, else -1. */
int npu_gemm_plan_check(const npu_cfg_t *cfg, const npu_gemm_plan_t *plan);

#endif
