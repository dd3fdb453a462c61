/*
 * slice_cost.h - the slicing stage's cost constants and its primitive costs (a DMA transfer, the
 * compute of one tile step: a GEMM's as its emitter runs it under a mapping policy, a
 * convolution's on the four cores under a split). All costs are integers in Q16 cycles
 * (cycles x 65536), so the search and any reference reproduce them exactly.
 *
 * npu_slice_cost_default takes the constants `npu calibrate` fitted on the RTL's microbenchmarks
 * when the config carries them (configs/<cfg>.calib -> cfg->calib, docs/compiler.md "Slicing"),
 * else these formulas of the config (npu_slice_cost_formula):
 *   byte        65536 / min(DRAM_BW, B)   the DRAM's bandwidth, or the LOAD's one SPM word per cycle
 *   burst       DRAM_BURST_COST: a burst's data-bus cost beyond its beats
 *   xfer_fixed  DRAM_LATENCY + 4: the first burst's latency and the descriptor's two registered
 *               stages, once per DMA transfer (the engine takes one descriptor at a time);
 *               LOAD_PIPELINE = 1: 1, the data side's cycle between two descriptors (the next
 *               one's latency and checks overlap the last one's data)
 *   xfer_idle   LOAD_PIPELINE = 1: DRAM_LATENCY + 3, what a LOAD on an idle engine (at the start,
 *               after a token wait or a SYNC_L) pays beyond xfer_fixed; 0 with LOAD_PIPELINE = 0.
 *               A STORE (not pipelined) and the fetch pay xfer_fixed + xfer_idle each
 *   window      R / MAX_OUTSTANDING, R = DRAM_LATENCY + DRAM_BURST_COST + 1 (a one-beat read's
 *               round trip): a stream of short read bursts is bound by the reads in flight
 *   lat_fixed   R (MAX_OUTSTANDING - 1) / MAX_OUTSTANDING: the last round trip of such a stream
 *   wave        3S + 8: a weight bank's turnaround (its last rows pass the array, the next LDW
 *               writes its rows); a wave of r rows takes max(r, (r + wave) / 2) with two banks.
 *               The RTL turns a bank around in a cycle now (npu_slice_wave_time below), but
 *               this formula, which the uncalibrated configs (the
 *               sweeps' paper-scaled ones) use, stays: with 2S + 8 (tried) the conv search's early stop
 *               prunes less and a search takes twice the CPU (slice_search resnet50_layer_fast)
 *   drain_fixed S, drain_row 1/2: a DRAIN writes two OBUF rows per cycle
 *   store_fixed xfer_fixed + xfer_idle - DRAM_LATENCY (formula or calibrated): a STORE's descriptor stages,
 *               its first AW and its last B response; it waits for no read latency (the
 *               estimator's STORE cost, model/prog_time.c; the search below charges xfer_fixed +
 *               xfer_idle)
 * Transfer of bytes in beats and bursts over x descriptors, bus = beats * B * byte + bursts * burst:
 *   burst mode    store: x * (xfer_fixed + xfer_idle) + bus;
 *                 load: max(x * xfer_fixed + bus, x * lat_fixed + bursts * window,
 *                           (x * xfer_idle + x * xfer_fixed + bus) / 2): the pipelined engine
 *                 holds two descriptors, so a queued LOAD's latency hides behind the data of the
 *                 one before it alone (16 LOADs of 4 rows back to back at tiny: 400 cycles on
 *                 the RTL, about 21 a LOAD where their data takes 8)
 *   noburst mode  bytes * byte   (TSO-noburst: payload bytes over the bandwidth)
 */
#ifndef NPU_SLICE_COST_H
#define NPU_SLICE_COST_H

#include <stdint.h>

#include "compile/slice/slice_burst.h"
#include "hw/isa.h"
#include "hw/npu_cfg.h"

#define NPU_SLICE_Q 16 /* fixed point: Q16 cycles */
/* An LDW's least cycles beyond its read steps (one a cycle: 2S rows of a mono FW / VSW tile, the
 * 1G1C baseline; S otherwise, a full tile's core pairs in parallel, rtl/npu_exec_ldw.v), reading
 * while the LDW before writes (on the other bank): an LDW / WAVE pair takes at least steps +
 * NPU_SLICE_LDW_C (measured by step_fidelity --micro's WAVE trains, 24 pairs of 1 to 64 rows at
 * small: 8.7 cycles a pair up to 8 rows, mono 16.7; the program-time model's P,
 * model/prog_time.c). */
#define NPU_SLICE_LDW_C 1
/* The same for an LDW that cannot overlap the one before (on the same bank: the 1G4C policy's four
 * core-masked LDWs of a sub-tile): S + NPU_SLICE_LDW_ONE_C each (200x150x130 at small, 1G4C: 56
 * to 59 cycles a sub-tile of 4 to 16 rows a core on the RTL). */
#define NPU_SLICE_LDW_ONE_C 6
/* Q16 cycles of a stationary tile's waves of r (Q16) slots after an LDW read in `steps` cycles (2S
 * mono, else S): max(r, steps + NPU_SLICE_LDW_C). A weight bank turns around in a cycle: an LDW
 * decides its rows from the cycle after the bank's last injection and each core writes them as
 * the last rows leave it (docs/datapath.md "Weight banks"), so on two banks the waves follow each
 * other with no gap (24 pairs of 12 to 64 rows at small: r a pair, after a launch of 87 cycles).
 * One rule for the slicing stage's GEMM compute and the program-time model (model/prog_time.c). */
uint64_t npu_slice_wave_time(uint64_t r, uint64_t steps);
enum { NPU_SLICE_BURST = 0, NPU_SLICE_NOBURST = 1 };

typedef struct npu_slice_cost {
    int mode;             /* NPU_SLICE_BURST or NPU_SLICE_NOBURST */
    uint32_t xfer_fixed;  /* per DMA transfer (descriptor) */
    uint32_t burst;       /* per DRAM burst */
    uint32_t byte;        /* per byte on the DRAM bus */
    uint32_t wave;        /* per wave, beyond its rows */
    uint32_t drain_fixed; /* per drain of an output tile */
    uint32_t drain_row;   /* per drained OBUF row */
    uint32_t lat_fixed;   /* per DMA transfer whose bursts are latency-bound */
    uint32_t window;      /* per latency-bound burst: its round trip over MAX_OUTSTANDING */
    uint32_t store_fixed; /* per STORE transfer: xfer_fixed + xfer_idle less DRAM_LATENCY (derived,
                             not fitted; the estimator's, see above) */
    uint32_t xfer_idle;   /* per LOAD that starts on an idle engine, beyond xfer_fixed (pipelined
                             LOADs; 0 with LOAD_PIPELINE = 0) */
    uint32_t share;       /* per byte of the DRAM credit reads and writes share: byte x min(DRAM_BW, B)
                             / DRAM_BW (tb/dram_model.c: one port moves at most a beat a cycle, the
                             credit grows DRAM_BW a cycle, so above B bytes a cycle a read and a
                             write beat move in the same cycle; = byte at DRAM_BW <= B and under the
                             bytes-only cost, which keeps one port) */
    int policy;           /* the GEMM emitter's mapping policy (npu_flexsa_policy_t), whose waves a
                             GEMM step's compute costs (npu_slice_gemm_compute); not a constant of
                             the hardware: npu_slice_cost_default sets FlexSA, the GEMM runtime
                             its run's policy */
    int no_split_a;       /* 1: GEMM candidates keep both A buffers in bank 0 (no split A,
                             gemm_tiling.h): the runtime's best pick without it, which the
                             program-time model times against a split pick (run/runtime.c) */
    int runner;           /* 1: the search finds the runner-up too (npu slice reports it), costing
                             every candidate whose bound is below the runner-up's cycles; 0 (the
                             compiler and the estimator): the best alone, below the best's */
} npu_slice_cost_t;

npu_slice_cost_t npu_slice_cost_default(const npu_cfg_t *cfg, int mode);
/* The configuration under another DRAM timing (npu ... --dram-bw B --dram-latency C): dram_bw
 * (rounded up to a whole byte) and dram_latency set, and a calibration moved with them as the
 * formulas move (byte by min(bw, B) old / new; xfer_fixed, window and lat_fixed by the latency
 * difference), so the slicing stage costs the timing the run will have. bw <= 0 or latency < 0:
 * that one unchanged. */
void npu_slice_cfg_retime(npu_cfg_t *cfg, double bw, int latency);
npu_slice_cost_t npu_slice_cost_formula(const npu_cfg_t *cfg, int mode); /* ignores cfg->calib */
const char *npu_slice_mode_name(int mode); /* "burst", "noburst" */
int npu_slice_mode_parse(const char *s);   /* -1 if unknown */

/* Q16 cycles of transfers counted in b (beat = bytes per beat); store: DRAM writes (no read
 * latency to hide: the bus term alone). */
uint64_t npu_slice_xfer_cost(const npu_slice_cost_t *k, const npu_bursts_t *b, unsigned beat, int store);
/* A transfer's fixed cost on an idle engine: xfer_fixed + xfer_idle (a STORE's always, the
 * fetch's; a LOAD's after a wait). */
uint64_t npu_slice_xfer_alone(const npu_slice_cost_t *k);
/* The latency a LOAD on an idle engine pays beyond xfer_fixed, as the walks charge it: xfer_idle,
 * 0 under the bytes-only cost (no fixed part). */
uint64_t npu_slice_idle(const npu_slice_cost_t *k);
/* Their DRAM bus time alone (xfer_fixed, bursts, bytes) on their port (a beat a cycle at most). */
uint64_t npu_slice_xfer_bus(const npu_slice_cost_t *k, const npu_bursts_t *b, unsigned beat);
/* Their part of the DRAM credit that reads and writes share (the DRAM model's token bucket,
 * tb/dram_model.c): bytes x share + bursts x burst (a burst's cost takes DRAM_BW bytes of credit a
 * cycle: the whole bus). npu_slice_xfer_bus when DRAM_BW <= B; above, a LOAD's and a STORE's
 * beats overlap (3136x576x64 at small, 64 B/cycle). */
uint64_t npu_slice_xfer_share(const npu_slice_cost_t *k, const npu_bursts_t *b, unsigned beat);
/* The shared credit's cost of a byte: k->share, or k->byte for a cost set without it. */
uint64_t npu_slice_share(const npu_slice_cost_t *k);

/* npu_slice_compute_cost: Q16 cycles of a convolution's tile step on the four S x S cores (a
 * GEMM's: npu_slice_gemm_compute, below): a GEMM of m streamed rows, n stationary
 * columns and a contraction of taps x kd (one wave per tap, S-deep chunk of kd and S-wide block
 * of a core's columns), cut by split (slice.h): N gives core q its share of the ceil(n/S)
 * blocks (lowest ids the extra), M its share of the m rows, 2X2 half of each; the step takes
 * the busiest core's waves x max(rows, (rows + wave) / 2). The waves are taps x ceil(kd / S) x
 * the core's blocks, so the cost is ceil(kd / S) times that at kd = S (the slicing search sums
 * its step classes by that). */
/* The overlap of double-buffered steps (slice.h): per step i its loads L_i (of which Lb_i on the
 * DRAM bus), compute E_i and stores S_i, added in order; then
 *   T = L_0 + sum_i max(E_i, L_{i+1}, Lb_{i+1} + S_{i-1}) + S_{n-1}     (L_n = S_{-1} = 0).
 * With pipelined LOADs (idle = xfer_idle > 0) a step's loads pay the latency the engine did not
 * hide: L_i + X_i in place of L_i, X_0 = idle, X_1 = 0 (queued behind L_0: the second buffer is
 * free), and for i >= 2, whose loads wait for the buffer compute i-2 frees, E_{i-2} into the
 * last step (whose DMA term, with its X, is D_{i-1}): X_i = min(idle, max(0, E_{i-2} + idle -
 * D_{i-1})) -- the whole latency after a wait, none when the DMA was busy for a latency
 * past the token, O(1) per step; X_i = 0 for a step without loads.
 * Zero the state first (npu_slice_pipe_init); npu_slice_pipe_end gives T. The slicing search and the convolution
 * emitter's candidates (conv_slice.h) walk their steps through it. */
typedef struct npu_slice_pipe {
    uint64_t T, E_prev, S_prev, S_prev2, steps;
    uint64_t idle, E_prev2, dma_prev; /* xfer_idle; E_{i-2}; the DMA term of the last step */
    uint64_t D_prev, D_prev2;         /* the drains beside (npu_slice_pipe_step_d) */
    uint64_t Sb_prev, Sb_prev2;       /* the stores' shared-credit part (npu_slice_pipe_step_w) */
    uint64_t Sc_prev, Sc_prev2;       /* the stores' burst costs (npu_slice_pipe_step_x) */
} npu_slice_pipe_t;
/* Zeroes p for a walk at the constants k (a zeroed state walks with idle = 0). */
void npu_slice_pipe_init(npu_slice_pipe_t *p, const npu_slice_cost_t *k);
void npu_slice_pipe_step(npu_slice_pipe_t *p, uint64_t L, uint64_t Lb, uint64_t E, uint64_t S);
/* The same with the drain D of the output tile the step completes on the drain engine, beside the
 * next step's waves (the GEMM emitter's DRAINs read one OBUF half, row by row right behind the
 * waves that finish its rows, while the next tile's waves fill the other): step i's term takes
 * max(E_i, D_{i-1}, L_{i+1}, Lb_{i+1} + S_{i-1}) and the end max(E_{n-1}, D_{n-2}, S_{n-2}) +
 * D_{n-1} + S_{n-1}. The STORE is not charged after its drain: the drain streams behind the
 * tile's last waves (1024x256x16 at small-w2, 64 B/cycle, 32x128 tiles with B's band: 35,182
 * predicted with the drain and the store in turn, 28,465 without, 27,222 on the RTL). D = 0 is
 * npu_slice_pipe_step (a drain inside E: the convolutions'). */
void npu_slice_pipe_step_d(npu_slice_pipe_t *p, uint64_t L, uint64_t Lb, uint64_t E, uint64_t D, uint64_t S);
/* The same with the stores' part of the shared DRAM credit Sb apart from their cost S: a step's DMA
 * term takes max(L_i + X_i, S_{i-1}, Lb_i + Sb_{i-1}), the loads and the store on their own ports
 * and together on the credit they share (Lb and Sb: npu_slice_xfer_share's, a STORE's fixed cost
 * in Sb as in S). Sb = S is npu_slice_pipe_step_d. */
void npu_slice_pipe_step_w(npu_slice_pipe_t *p, uint64_t L, uint64_t Lb, uint64_t E, uint64_t D, uint64_t S,
                           uint64_t Sb);
/* The same with the burst costs of the loads (Lc) and of the stores (Sc), which take the whole
 * credit while they are paid (tb/dram_model.c: a burst's start debits DRAM_BURST_COST cycles of
 * it), so with a DRAM faster than a beat a cycle (two ports, one beat each) the other port waits
 * them out: the DMA term takes max(L_i + X_i + Sc_{i-1}, S_{i-1} + Lc_i, Lb_i + Sb_{i-1}).
 * 1024x256x16 at small, 64 B/cycle, 32x64 tiles with the C band (B reloaded every step: 2,166 read
 * bursts beside 2,048 write bursts): 49,635 cycles on the RTL, 32,768 write beats + 4 x 4,214
 * bursts exactly; 43,232 predicted without these terms. Lc = Sc = 0 is npu_slice_pipe_step_w
 * (one port: Lb + Sb holds every burst already). */
void npu_slice_pipe_step_x(npu_slice_pipe_t *p, uint64_t L, uint64_t Lb, uint64_t Lc, uint64_t E, uint64_t D,
                           uint64_t S, uint64_t Sb, uint64_t Sc);
uint64_t npu_slice_pipe_end(const npu_slice_pipe_t *p);

/* Cycles the drain engine loses to SPM sub-bank conflicts on one DRAIN of m OBUF rows (a skinny
 * one: m rows of C in ceil(m/2) OBUF rows, split_rows = ceil(m/2)) into words base + r * stride
 * (rtl/npu_exec_drain.v): it writes a pair of rows (four words) a cycle when their words are in
 * four sub-banks, and picks split pairs (r, r + ceil(rows/2)) or adjacent ones (r, r + 1) by
 * the sub-bank codes of the offsets with carries ignored; the real addresses carry, and a pair
 * whose words meet in a sub-bank takes as many cycles as the most words in one. The sum over the
 * pairs of (its cycles - 1). */
uint64_t npu_slice_drain_stalls(const npu_cfg_t *cfg, uint64_t base, int64_t m, int skinny, uint64_t stride);

uint64_t npu_slice_compute_cost(const npu_slice_cost_t *k, int S, int split, int64_t m, int64_t n,
                                int64_t taps, int64_t kd);

/* Q16 cycles of one GEMM tile step (m streamed rows, n stationary columns, contraction kd) as the
 * GEMM emitter runs it under k->policy (compile/gemm/gemm_emit.c; the split plays no part): one
 * LDW / WAVE pair per 2S x 2S (k, n) block, in mode FW (1G1C) or Algorithm 1's
 * (npu_flexsa_mode: FW, HSW, VSW, ISW, the wave's rows npu_flexsa_split's ceil(m / parts));
 * 1G4C cuts each block into S x S sub-tiles, each four core-masked LDWs and one ISW wave. A wave
 * of r rows takes npu_slice_wave_time: max(r, the LDW's steps + NPU_SLICE_LDW_C) (an LDW reads
 * its rows while the one before writes, 2S steps for 1G1C's mono LDWs, S for the others: short
 * waves at small S); a 1G4C sub-tile at least its four LDWs, S + NPU_SLICE_LDW_ONE_C each (one
 * at a time: one bank). FlexSA adds the mode-change gaps of its serpentine wave order
 * (npu_flexsa_mode_gap, S per unit, plus the switch cycle), each change costed as the mean of its
 * two directions (every other chunk runs the order backwards), and the SPM sub-bank collisions of
 * its HSW / VSW / ISW waves' sets (npu_slice_wave_collisions). */
uint64_t npu_slice_gemm_compute(const npu_cfg_t *cfg, const npu_slice_cost_t *k, int64_t m, int64_t n, int64_t kd);

/* Cycles a wave's slots lose to SPM sub-bank collisions: slot t reads row t of each of its nsets
 * sets (ws) in one cycle, one read port a set, and rows in one sub-bank of one bank take a cycle
 * each (the lowest port wins, the others retry: rtl/npu_exec_wave.v, rtl/npu_spm.v), so a slot
 * takes as many cycles as the most of its rows in one SPM unit; row r of the wave is at word base
 * + r * stride (wrapped to the SPM). The sum over the slots of (its cycles - 1); exact on the RTL
 * (model/prog_time.c wave_cycles). */
uint64_t npu_slice_wave_collisions(const npu_cfg_t *cfg, const npu_wave_sets_t *ws, int nsets, uint64_t base,
                                   uint64_t stride);

#endif
