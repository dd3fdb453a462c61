/*
 * flexsa_mode.h - the compiler stage that chooses the FlexSA mode of every systolic wave
 * (brief 001 section 3, the paper's Algorithm 1 cleaned), and its analytical model: PE
 * utilization, SPM->LBUF traffic and mode mix of a GEMM under a mapping policy.
 *
 * Pure functions of S (the core side; the FlexSA is 2S x 2S) and the GEMM sizes, so they are
 * testable for any configuration and independent of the RTL and of the emission stage.
 *
 * GEMM C[MxN] = A[MxK] * B[KxN]; B tiles are stationary (LBUF_V), A rows are streamed (LBUF_H).
 * Wave loop order (Algorithm 1): n blocks outer, m blocks middle, k blocks inner; a tile is
 * n = min(blk_N, N - n0) by k = min(blk_K, K - k0) (the listing's "N mod blk" is wrong), with
 * m = min(blk_M, M - m0) A rows.
 *
 * Policies:
 *   1G1C    one 2S x 2S array, FW only; blk_N = blk_K = 2S.
 *   1G4C    four independent S x S cores, no sharing; blk_N = blk_K = S, blk_M = 2S by default
 *           (its own LBUF_H); each core loads its own stationary tile and A rows (an A element
 *           goes to every core whose tile needs it); wave w (in loop order) runs on core
 *           w % 4; a wave
 *           occupies one core (S^2 PEs) for m cycles. Its waves carry mode ISW (an independent
 *           sub-wave, the RTL's four-distinct-tiles variant), so its inter-core share is 0.
 *   FLEXSA  blk_N = blk_K = 2S, mode per wave from npu_flexsa_mode(); the wave's sub-waves
 *           run concurrently (npu_flexsa_split), so it occupies the 4S^2 PEs for
 *           ceil(m / P) cycles, P = 1 (FW), 2 (HSW, VSW), 4 (ISW).
 *
 * Metrics (brief 7.2, 7.3):
 *   ideal utilization = sum MACs / sum over waves (PEs occupied x m_sub cycles); fill, drain
 *                       and preload (ShiftV) are excluded. For 1G4C this assumes the four cores
 *                       are perfectly balanced; the round-robin makespan is reported too.
 *   traffic           = SPM->LBUF elements (int16 values; the brief's and issue's "words"):
 *                       stationary LBUF_V = k*n per wave (a tile multicast to 2 or 4 cores over
 *                       path (4) / NoC groups costs one SPM read per element), streamed LBUF_H
 *                       = m*k per wave (every A element of the wave is read once, whatever the
 *                       row split). Only valid elements count (no padding). The RTL counters
 *                       lbuf_v_words / lbuf_h_words count S-element words instead.
 *                       FW wave m = 2*2S, n = k = 2S: 4S^2 + 8S^2 = 12 S^2 (768 at S = 8);
 *                       the same rows on 1G4C with blk_M = 4S: 4 S^2 + 16 S^2 = 20 S^2 (1280),
 *                       with its default blk_M = 2S: 8 S^2 + 16 S^2 = 24 S^2 (1536).
 *   mode mix          = share of waves (and of wave cycles) in FW + HSW + VSW.
 */
#ifndef NPU_FLEXSA_MODE_H
#define NPU_FLEXSA_MODE_H

#include <stdint.h>

#include "hw/npu_defs.h"

#ifndef NPU_MODE_T_DEFINED
#define NPU_MODE_T_DEFINED
typedef enum npu_mode npu_mode_t;
#endif

/* ------------------------------------------------------------------ mode selection */

/* Algorithm 1: IsWide = n > S, IsTall = k > S; FW if wide && tall, HSW if wide && !tall,
 * VSW if !wide && tall, ISW otherwise (<= on both boundaries, brief section 8 item 9).
 * n, k are the tile's valid sizes (1..2S; larger sizes are simply "wide"/"tall"). The paper's
 * IsWideWave(n, m) never uses m, so m plays no part here. */
npu_mode_t npu_flexsa_mode(int S, int n, int k);

/* Sub-arrays a mode splits the array into: 1 (FW), 2 (HSW, VSW), 4 (ISW); 0 if bad mode. */
int npu_flexsa_parts(npu_mode_t mode);

/* The mode-change gap, in units of S, between the last row of mode `from` and the first of mode
 * `to` (docs/datapath.md section 2, the injector's rule, rtl/npu_exec_inject.v mode_gap): a row
 * enters cores (0,1,2,3) S x (0,1,1,2) cycles after injection in FW, (0,1,0,1) in HSW, (0,0,1,1)
 * in VSW, (0,0,0,0) in ISW, and must enter every core after the old mode's last row: 2 for
 * FW -> ISW, 1 for FW -> HSW/VSW and HSW/VSW -> another non-FW mode, else 0. A change of mode
 * also takes one switch cycle beyond the gap. */
int npu_flexsa_mode_gap(npu_mode_t from, npu_mode_t to);

/* ------------------------------------------------------------------ sub-wave row split */

/* Core masks (bit c = core c; cores 0 top-left, 1 top-right, 2 bottom-left, 3 bottom-right). */
#define NPU_CORES_ALL 0xFu

typedef struct npu_flexsa_split {
    int count;          /* sub-waves: npu_flexsa_parts(mode) */
    int row0[4];        /* sub-wave i takes A rows [row0[i], row0[i] + rows[i]) of the wave */
    int rows[4];        /* may be 0 when m < count (that sub-array idles) */
    unsigned cores[4];  /* cores running sub-wave i */
    int cycles;         /* max rows[i] = ceil(m / count): the wave's m_sub cycles */
} npu_flexsa_split_t;

/* Row split of an m-row wave (brief 2.4, interpretation [I]): contiguous, in row order,
 *   FW : [0, m) on cores {0,1,2,3}
 *   HSW: top {0,1} gets the first ceil(m/2) rows, bottom {2,3} the other floor(m/2)
 *   VSW: left {0,2} gets the first ceil(m/2) rows, right {1,3} the other floor(m/2)
 *   ISW: m is first halved as in VSW (h0 = ceil(m/2), h1 = floor(m/2)), then each half is
 *        halved the same way: core 0 gets ceil(h0/2), core 2 floor(h0/2), core 1 ceil(h1/2),
 *        core 3 floor(h1/2).
 * So the first sub-waves take the ceil; sizes differ by at most one; the L/R boundary of the
 * OBUF (rows < ceil(m/2) on the left) is the same in VSW and ISW, which the VSW -> ISW
 * accumulation of Fig. 9 needs; and cycles = ceil(m / parts) in every mode.
 * Returns cycles, or -1 (m < 1 or bad mode). */
int npu_flexsa_split(npu_mode_t mode, int m, npu_flexsa_split_t *out);

/* ------------------------------------------------------------------ wave plan and model */

typedef enum npu_flexsa_policy {
    NPU_POLICY_1G1C = 0,
    NPU_POLICY_1G4C = 1,
    NPU_POLICY_FLEXSA = 2,
    NPU_NUM_POLICIES = 3
} npu_flexsa_policy_t;

const char *npu_flexsa_policy_name(npu_flexsa_policy_t p); /* "1G1C", "1G4C", "FlexSA" */
const char *npu_flexsa_mode_name(npu_mode_t m);            /* "FW", "VSW", "HSW", "ISW" */

/* blk_M (A rows per wave) used when the caller passes blk_m <= 0: the LBUF_H capacity over the
 * height of the array that consumes it, with LBUF_H = 2 x LBUF_V in every core (brief 2.3) and
 * the same buffers in all policies (FlexSA is the four cores plus muxes and wires):
 *   1G1C, FlexSA: 2 x (2S)^2 / 2S = 4S   (the brief's 256 at S = 64; 32 at S = 8)
 *   1G4C:         2 x S^2 / S    = 2S   (each core streams its own S-deep A rows)
 * Pass an explicit blk_m to compare policies on identical waves (brief 7.3 item 13). */
int npu_flexsa_default_blk_m(int S, npu_flexsa_policy_t pol);

typedef struct npu_flexsa_wave {
    int index;           /* wave number in loop order */
    int m0, n0, k0;      /* tile origin in C / A / B */
    int m, n, k;         /* valid sizes */
    npu_mode_t mode;     /* FW for 1G1C, ISW (independent) for 1G4C */
    int core;            /* 1G4C: index % 4; -1 otherwise (whole array) */
    int pes;             /* PEs occupied: 4S^2, or S^2 for a 1G4C core */
    int cycles;          /* m_sub cycles: ceil(m / parts) (FlexSA), m otherwise */
    int first_k, last_k; /* first / last k block of its output tile (acc off / drain after) */
    uint64_t macs;       /* m * n * k */
    uint64_t lbuf_v;     /* SPM -> LBUF_V elements: k * n */
    uint64_t lbuf_h;     /* SPM -> LBUF_H elements: m * k */
} npu_flexsa_wave_t;

typedef struct npu_flexsa_stats {
    int S;
    uint64_t waves;
    uint64_t waves_mode[NPU_NUM_MODES];
    uint64_t cycles_mode[NPU_NUM_MODES]; /* sum of wave cycles per mode */
    uint64_t macs;
    uint64_t pe_cycles;      /* sum of pes x cycles (the ideal-utilization denominator) */
    uint64_t array_cycles;   /* time on the whole array: sum of wave cycles (1G1C, FlexSA);
                                1G4C: max over cores of core_cycles (round-robin makespan),
                                summed over GEMMs when stats are accumulated */
    uint64_t core_cycles[4]; /* 1G4C: busy cycles of each core */
    uint64_t lbuf_v, lbuf_h; /* SPM -> LBUF elements */
} npu_flexsa_stats_t;

typedef void (*npu_flexsa_wave_fn)(const npu_flexsa_wave_t *w, void *ctx);

/* Enumerates the waves of C[MxN] = A[MxK] B[KxN] under policy pol (fn may be NULL) and fills
 * *st (zeroed first; st may be NULL). blk_m <= 0 selects npu_flexsa_default_blk_m(S, pol).
 * Returns the number of waves, or -1 on bad arguments. */
long npu_flexsa_plan(int S, int blk_m, npu_flexsa_policy_t pol, int M, int N, int K,
                     npu_flexsa_wave_fn fn, void *ctx, npu_flexsa_stats_t *st);

/* dst += src (array_cycles add: GEMMs run one after another). */
void npu_flexsa_stats_add(npu_flexsa_stats_t *dst, const npu_flexsa_stats_t *src);

double npu_flexsa_util(const npu_flexsa_stats_t *st);      /* macs / pe_cycles */
double npu_flexsa_util_rr(const npu_flexsa_stats_t *st);   /* macs / (4S^2 x array_cycles) */
uint64_t npu_flexsa_traffic(const npu_flexsa_stats_t *st); /* lbuf_v + lbuf_h */
double npu_flexsa_intercore_waves(const npu_flexsa_stats_t *st);  /* (FW+HSW+VSW) / waves */
double npu_flexsa_intercore_cycles(const npu_flexsa_stats_t *st); /* same, cycle-weighted */

#endif
