/* prog_time.c - the dataflow timing model of one program (prog_time.h). */
#include "model/prog_time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prog/prog_expect.h"

static uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

enum { L2E, E2L, E2S, S2E, CHANNELS };
/* The EXEC queue's own cycles, measured on the RTL by microbenchmarks (docs/estimator.md section
 * 7): a VSET or SYNC_E occupies the queue 4 cycles, a VEC one cycle beyond its busy cycles. */
enum { PT_EXEC_ISSUE = 4, PT_VEC_TAIL = 1 };
/* Back-to-back LDW / WAVE pairs on alternating weight banks (measured by step_fidelity --micro's
 * WAVE trains at S = 2 and 8, any k and n): a wave of r rows takes max(r, P), P = steps + 1 a
 * pair's least (an LDW reads its rows while the one before writes: S steps, the two core pairs in
 * parallel, or 2S for a mono LDW, the 1G1C baseline). A bank turns around in a cycle: the next
 * LDW decides its rows from the cycle after the bank's last injection and each core writes them
 * as the last rows leave it (rtl/npu_exec_ldw.v). The slicing stage's GEMM compute takes the same
 * rule (slice_cost.h npu_slice_wave_time). */
/* The EXEC queue's head issues in its fourth cycle (its checks, rtl/npu_exec.v) and leaves a cycle
 * later. The wave queue holds two WAVEs: a WAVE enters it once the one two before has all its
 * rows in, and streams its rows PT_WAVE_ENTRY cycles after it enters at the earliest (the
 * streamer reads its first A rows), right behind the rows of the WAVE before on the same tile.
 * Measured on the RTL timelines of the conv forwards below (tiles of four 4-row WAVEs): the
 * third WAVE leaves EXEC a cycle after the first one's rows end and streams 5 cycles later, one
 * cycle after the second's rows; the fourth streams right behind the third. */
enum { PT_HEAD_ISSUE = 3, PT_WAVE_ENTRY = 5 };
/* WAVEs in flight: npu_exec_obuf_hazard keeps a completion record per WAVE until its last result
 * is in the OBUF, in a FIFO of 8 (rtl/npu_exec_obuf_hazard.v u_cf); a WAVE issues only into a
 * free record. Short WAVEs on one tile (a conv's 4-slot row blocks) outrun the array's 6S - 2
 * latency and wait here (measured: the forward of conv 1,8,8,16,3,3 at small, 5.45 cycles per
 * WAVE in EXEC, not 4). */
enum { PT_WAVES_IN_FLIGHT = 8 };
/* An accumulating DRAIN reads the two old words of each row on its own two SPM read ports, one
 * row at a time: a row per 2 cycles (read | add and write, rtl/npu_exec_drain.v, docs/datapath.md),
 * not the plain drain's two rows a cycle. */
enum { PT_DRAIN_ACC_ROW = 2 };
/* An LDW's weights are in its bank rows + PT_LDW_C cycles after it issues at the earliest: it
 * reads one row a cycle from the SPM (2S rows in FW / VSW, S in HSW / ISW or with a core mask,
 * rtl/npu_exec_ldw.v), sends them over the V channel into the LBUF_Vs and shifts them in, so a
 * tile's first WAVE streams no earlier. It issues once its token is in, or 3 cycles after it
 * reached the EXEC head, which it reaches a cycle after the WAVE before it entered the wave queue:
 * a tile of several short WAVEs (a conv's row blocks) keeps the next LDW in the queue until its
 * second-to-last WAVE streams, so its load is not hidden behind the tile. Measured on RTL
 * timelines (npu conv / gemm --timeline), LDW issue to its first WAVE's rows: 22 cycles at small
 * after its token (gemm -m 4, 16, 40 -k 16 -n 16, small-bf16), 25 after it reached the head in
 * the forward of conv 16,8,8,32,3,3,2,1,1 (batch 16; 13 at tiny); tiles of four 4-row FW WAVEs
 * there 34.5 cycles apart at small, not the 28.5 of the alternating-bank form. */
enum { PT_LDW_C = 6 };
/* A FILL takes its SPM words plus 2 cycles on the LOAD engine (its descriptor's check stage and
 * hand-over; RTL timelines at small: 18 words in 20 cycles, 12 in 14, 2 in 4), and one of the
 * engine's two descriptor slots (load_wait). */
enum { PT_FILL_C = 2 };
/* A WAVE's results reach the OBUF 4S + 2 cycles after its own last row (measured at small-bf16:
 * a DRAIN behind the lone WAVE of gemm -m 4 | 16 | 40 -k 16 -n 16 ends 34, 34 and 38 cycles after
 * its last row; its drain_busy, rows + 6S - 2, counts from before the WAVE streams, and the bank's
 * turnaround does not delay the results). A completion record (above) is
 * kept 4S - 2 + n cycles after the rows, n the columns its last result crosses (wave_cols),
 * at most 6S - 2 (pipe_latency; fitted on the digits CNNs' forwards, session 17). */
static uint64_t min64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static uint64_t pipe_latency(const npu_cfg_t *cfg) { return (uint64_t)(6 * cfg->s - 2) << NPU_SLICE_Q; }
static uint64_t res_latency(const npu_cfg_t *cfg) { return (uint64_t)(4 * cfg->s + 2) << NPU_SLICE_Q; }
enum { QL, QE, QS, QUEUES };

typedef struct pt_state {
    size_t n;
    npu_fields_t *f;
    int *q;                       /* the instruction's queue */
    uint64_t *dur, *disp, *start; /* Q16; start / disp UINT64_MAX until known */
    uint64_t *push[CHANNELS];     /* the channel's pushes, in order */
    uint64_t bus;                 /* Q16: the DRAM bus time of every transfer and of the fetch */
    uint64_t *lead, *busw, *burstw; /* a transfer's cycles before its data moves, its bus time,
                                   * one of its bursts' */
    uint64_t *bend;               /* a transfer's bus time's end (shared with the other engine's) */
    uint64_t *wrows;              /* a WAVE's cycles on the array (wave_cycles) */
    uint64_t (*dw)[3];            /* the DRAINs' SPM writes so far: [from, to) and their cycles */
    size_t *dwi, ndw, dw_lo;      /* ... the DRAIN each one is; the first that may end after a LOAD starts */
    uint64_t (*held)[3];          /* the bus's reserved intervals [from, to), sorted, disjoint, and
                                   * the longest a fetch burst waits behind their transfers (bus_fetch) */
    size_t nheld;
    uint64_t *fb_end, fb_req;     /* the fetch's bursts: when each one's last beat arrives */
    size_t nfb;                   /* bursts timed so far */
    size_t last_load, last_store; /* the LOAD / STORE started last, + 1 (0: none yet) */
    uint64_t idle;                /* Q16: xfer_idle, what a LOAD on an idle engine pays (load_wait) */
    uint64_t burst_q;             /* Q16: the cost of a burst (k->burst) */
    uint64_t *lx;                 /* a LOAD's share of it, set with its start time (start_time) */
    int l_synced;                 /* a SYNC_L started since the last LOAD: the engine is empty */
    uint64_t ld_end[2];           /* the ends of the last two LOADs or FILLs (when they started), latest
                                     first: the engine's two descriptor slots */
    uint64_t *ob_ready, *ob_free; /* per OBUF row: its last WAVE's results in, its last DRAIN done */
    uint64_t drain_free;          /* the drain unit: its last DRAIN done */
    uint64_t array_free, streamed; /* the array: its last WAVE's rows in, and when they began */
    int tile_open, tile_bank;     /* a WAVE since the last LDW, on weight bank tile_bank: the next
                                   * WAVE on that bank continues its tile */
    uint64_t tile_start, tile_rows, rows_end; /* the open tile: its first WAVE's start, its
                                   * waves' slots so far, when the last one's rows are in */
    uint64_t exec_left;           /* the EXEC instruction before: when it left the queue (a WAVE a
                                   * cycle after it entered the wave queue, its issue cycles overlapped) */
    uint64_t entry, wend[2];      /* a WAVE's entry into the wave queue; the last two WAVEs' rows in */
    uint64_t rd_end;              /* the wave streamer: its last read row (wave_fed) */
    uint64_t ldw_ready;           /* the last LDW's weights in its bank at the earliest */
    uint64_t ldw_steps;           /* the last LDW's read cycles (ldw_steps) */
    uint64_t *tq;                 /* a WAVE head's start but for the wave queue (start_time) */
    uint64_t retire[PT_WAVES_IN_FLIGHT]; /* the last WAVEs' results all in, by issue order mod 8 */
    size_t nwaves;                /* WAVEs issued so far */
    size_t nob;
    size_t npush[CHANNELS], npop[CHANNELS];
} pt_state_t;

/* Records [a, b) as held: before interval i, merged with its neighbours when they touch.
 * Returns the index of the interval that now holds it. */
static size_t held_add(pt_state_t *s, size_t i, uint64_t a, uint64_t b, uint64_t burst)
{
    if (i > 0 && s->held[i - 1][1] == a) {
        s->held[--i][1] = b;
        s->held[i][2] = max64(s->held[i][2], burst);
    } else {
        memmove(&s->held[i + 1], &s->held[i], (s->nheld - i) * sizeof *s->held);
        s->held[i][0] = a, s->held[i][1] = b, s->held[i][2] = burst;
        s->nheld++;
    }
    if (i + 1 < s->nheld && s->held[i + 1][0] == b) {
        s->held[i][1] = s->held[i + 1][1];
        s->held[i][2] = max64(s->held[i][2], s->held[i + 1][2]);
        memmove(&s->held[i + 1], &s->held[i + 2], (s->nheld - i - 2) * sizeof *s->held);
        s->nheld--;
    }
    return i;
}

/* The DRAM bus shared by the two DMA engines (the DRAM model's one credit bucket for reads and
 * writes): a transfer's bus time w (bursts of `burst` each), from t on, fills the gaps the
 * transfers placed before it left, so a LOAD and a STORE that overlap take turns and each ends
 * later than alone. Returns the end of its last piece. */
static uint64_t bus_take(pt_state_t *s, uint64_t t, uint64_t w, uint64_t burst)
{
    size_t i = 0;
    while (w > 0) {
        while (i < s->nheld && s->held[i][1] <= t)
            i++;
        if (i < s->nheld && s->held[i][0] <= t) { /* inside a held interval: after it */
            t = s->held[i][1];
            continue;
        }
        uint64_t gap = (i < s->nheld ? s->held[i][0] : UINT64_MAX) - t, take = gap < w ? gap : w;
        i = held_add(s, i, t, t + take, burst);
        w -= take, t += take;
    }
    return t;
}

/* A fetch burst's data from t on: the DRAM returns reads in order and the read port alternates
 * between the fetch and the LOAD engine (rtl/npu_axi_rd_arb.v), so it waits for the bus time
 * held from t on, but at most for the MAX_OUTSTANDING bursts the read engines have in flight, and
 * for one burst of a STORE's (the DRAM model gives contested credit to the read and write ports
 * in turn, tb/dram_model.c: a read does not wait for a write); held[i][2] is that bound (the
 * caller then holds its bus time where it is free, for the transfers that ask after it, and
 * delays the LOAD or STORE it overtakes: delay_load). */
static uint64_t bus_fetch(const pt_state_t *s, uint64_t t, uint64_t w)
{
    uint64_t wait = 0, cap = 0;
    for (size_t i = 0; i < s->nheld && s->held[i][0] <= t + wait; i++)
        if (s->held[i][1] > t + wait) {
            cap = max64(cap, s->held[i][2]);
            wait = s->held[i][1] - t;
        }
    return t + (wait < cap ? wait : cap) + w;
}

static int queue_of(unsigned op)
{
    char q = npu_op_queue(op);
    return q == 'L' ? QL : q == 'E' ? QE : q == 'S' ? QS : -1;
}

/* A transfer's cycles from its start until its data moves on the bus: a LOAD's read latency and
 * descriptor cycles (xfer_fixed; pipelined LOADs: the descriptor's alone, the latency in
 * load_wait), a STORE's descriptor cycles alone (store_fixed). */
static uint64_t dma_lead(const npu_slice_cost_t *k, int store)
{
    if (k->mode == NPU_SLICE_NOBURST) /* the bytes-only cost: payload over bandwidth, nothing fixed */
        return 0;
    return store ? k->store_fixed : k->xfer_fixed;
}

/* A LOAD's or STORE's bursts and beats by the ISA's rule (once per transfer: its cost and its bus
 * time both read them). */
static npu_dma_count_t dma_count(const npu_cfg_t *cfg, const npu_fields_t *f)
{
    return npu_dma_bursts_cfg(cfg, f);
}

/* A transposed LOAD's Q16 cycles from q, its transfer cost as a plain stream of its beats (lead
 * its fixed part, both Q16): the engine fills one group's buffer pair while it writes the last
 * group's columns (rtl/npu_dma_load.v), one SPM word a cycle, so the fill (the beats) and the
 * writes (a column per word) overlap but for the first group's fill and the last group's
 * columns: max(fill + last columns, lead + first fill + all columns). Measured on the RTL
 * timeline at small: 256 rows of 64 B (512 beats, 512 words), 713 cycles (this gives 706); the
 * tiles of 5 rows of 96 B (15 beats, 48 words) of a swapped 5 x 147 x 768 GEMM at --dram-bw
 * 256, 132 (135 at the config's bandwidth). */
static uint64_t tr_load_time(const npu_fields_t *f, uint64_t B, uint64_t F, uint64_t q, uint64_t lead)
{
    uint64_t words = (f->row_bytes + B - 1) / B, cols = f->row_bytes / 2, nr = f->rows < F ? f->rows : F;
    uint64_t out = cols * ((f->rows + F - 1) / F); /* SPM words written, one a cycle */
    uint64_t last = cols - (words - 1) / 2 * 2 * F; /* the columns of a row block's last group */
    uint64_t var = q > lead ? q - lead : 0, beats = (uint64_t)f->rows * words;
    uint64_t fill1 = beats ? var * (nr * (words < 2 ? words : 2)) / beats : 0; /* the first group's fill */
    uint64_t a = q + (last << NPU_SLICE_Q), b = lead + fill1 + (out << NPU_SLICE_Q);
    return a > b ? a : b;
}

/* A LOAD's or STORE's Q16 cycles: its bursts and beats c, the slicing stage's
 * transfer cost with a STORE's own fixed cost (store_fixed: no read latency). Its beats are at
 * least its SPM words: trains of 13-row LOADs take 70 cycles each on the RTL (small) for rows of
 * 40, 48 or 64 B alike (26 words; 17 to 26 beats) and STOREs 41, so the words set the stream
 * and the bursts' cost adds to it (a floor of fixed + words under the beats' cost gave 63 / 33). */
static uint64_t dma_cost(const npu_cfg_t *cfg, const npu_slice_cost_t *k, const npu_fields_t *f, int store,
                         npu_dma_count_t c)
{
    uint64_t B = (uint64_t)npu_cfg_word(cfg), DB = (uint64_t)npu_cfg_beat(cfg), bw = DB / B;
    /* one chunk per cycle (up to a beat's worth of a row, or a row pair): rows not beat-aligned
     * take more chunks than beats, and the engine (realigner / packer) streams its bursts at the
     * chunks' rate, their burst cost on top. In beats: a chunk per beat at one word a beat; at
     * two, the chunks' cycles over a beat's bus cycles (DB * byte, two at 32 B/cycle). */
    uint64_t wcyc = npu_dma_chunks(B, (unsigned)bw, f), beat_q = DB * k->byte;
    if (bw > 1 && beat_q > 0)
        wcyc = ((wcyc << NPU_SLICE_Q) + beat_q - 1) / beat_q;
    int tr = f->transpose && !store;
    npu_bursts_t b = {c.bursts, tr ? c.beats : max64(c.beats, wcyc), (uint64_t)f->rows * f->row_bytes, 1, 1, 0};
    npu_slice_cost_t kq = *k; /* a LOAD's latency on an idle engine and behind two: load_wait */
    kq.xfer_idle = store ? k->xfer_idle : 0;
    uint64_t q = npu_slice_xfer_cost(&kq, &b, (unsigned)DB, store), F = 2u * (uint64_t)cfg->s;
    uint64_t fixed = dma_lead(k, store); /* a write pays no read latency */
    if (store && k->mode != NPU_SLICE_NOBURST) /* (a bytes-only q has no fixed part to take off) */
        q -= npu_slice_xfer_alone(k) - fixed;
    if (f->transpose && !store)
        return tr_load_time(f, B, F, q, fixed);
    if (f->transpose) /* a block's SPM words are read before its sub-rows go, not meanwhile */
        return q + (((uint64_t)(f->row_bytes / 4) * ((f->rows + F / 2 - 1) / (F / 2))) << NPU_SLICE_Q);
    return q;
}

/* A LOAD's or STORE's DRAM bus time alone (its beats and bursts), which both engines and the
 * fetch share; *burst: one burst's on average. */
static uint64_t dma_bus(const npu_cfg_t *cfg, const npu_slice_cost_t *k, const npu_fields_t *f,
                        npu_dma_count_t c, uint64_t *burst)
{
    uint64_t B = (uint64_t)npu_cfg_beat(cfg);
    npu_bursts_t b = {c.bursts, c.beats, (uint64_t)f->rows * f->row_bytes, 1, 1, 0};
    uint64_t bus = npu_slice_xfer_bus(k, &b, (unsigned)B);
    *burst = c.bursts ? (bus + c.bursts - 1) / c.bursts : bus;
    return bus;
}

/* Fetch burst m's cycles from its request to its data. The first, at the program's start: the
 * DRAM latency and the fetcher's request and accept cycles (PT_FETCH_C), not the LOAD engine's
 * descriptor stages that its idle-engine cost xfer_fixed + xfer_idle also holds (a lone SYNC at
 * small: 39 cycles on the RTL, 44 with the LOAD's); never more than that cost. A later one (the
 * fetcher held up by a full queue) that cost: with the DRAM latency alone the forward GEMMs of
 * 64-256-256-10 at tiny-bf16 came out 6-8 % short. */
enum { PT_FETCH_C = 4 };
static uint64_t fetch_lead(const npu_cfg_t *cfg, const npu_slice_cost_t *k, size_t m)
{
    uint64_t lat = (uint64_t)(cfg->dram_latency > 0 ? cfg->dram_latency : 0) + PT_FETCH_C;
    return m ? npu_slice_xfer_alone(k) : min64(npu_slice_xfer_alone(k), lat << NPU_SLICE_Q);
}

/* The fetch's bus time: the program's bytes in bursts of MAX_BURST_BEATS. */
static uint64_t fetch_bus(const npu_cfg_t *cfg, const npu_slice_cost_t *k, size_t n)
{
    uint64_t B = (uint64_t)npu_cfg_beat(cfg);
    npu_dma_count_t c = npu_dma_run(0, (uint64_t)n * NPU_INSN_BYTES, B, (uint64_t)cfg->max_burst_beats);
    npu_bursts_t b = {c.bursts, c.beats, (uint64_t)n * NPU_INSN_BYTES, 1, 1, 0};
    return npu_slice_xfer_bus(k, &b, (unsigned)B);
}

/* Q16 cycles WAVE f streams its A rows: slot t reads row t of every set in one cycle, one SPM
 * read port per set (rtl/npu_exec_wave.v; a bcast wave's one port), and a slot ends when every
 * port was granted: two rows in one sub-bank of one bank take a cycle each (the lowest port
 * wins, the other retries; the wave's ports come before the LDW's, the STORE's and the LOAD's,
 * rtl/npu_spm.v, so only its own rows collide). Measured: the forward of conv 3,28,28,32,3,3,2,1,1
 * at small (R 5 G 2), HSW waves of 14 rows at an SPM stride of 2 (set 1 starts 14 words after
 * set 0): 1,764 slots, 880 cycles of collisions by this count, 847 core-0 stall cycles on the
 * RTL, its tiles of five WAVEs 51 cycles apart where 35 slots gave 39. */
static uint64_t wave_cycles(const npu_cfg_t *cfg, const npu_fields_t *f)
{
    npu_wave_sets_t ws;
    int nsets = npu_wave_sets_f(f, &ws);
    uint64_t cyc = ws.len[0];
    if (!f->bcast && nsets >= 2)
        cyc += npu_slice_wave_collisions(cfg, &ws, nsets, f->spm_addr, f->spm_stride);
    return cyc << NPU_SLICE_Q;
}

/* Q16 cycles of WAVE i's rows on the array (wave_cycles, kept by prepare). */
static uint64_t wave_rows(const pt_state_t *s, size_t i) { return s->wrows[i]; }

/* The rows of an LDW's tile (or a WAVE's): 2S for the full FW / VSW tile, S otherwise. */
static uint64_t ldw_rows(const npu_cfg_t *cfg, const npu_fields_t *f)
{
    int full = !f->core_mask && (f->mode == NPU_MODE_FW || f->mode == NPU_MODE_VSW);
    return (uint64_t)(full ? 2 : 1) * (uint64_t)cfg->s;
}

/* The cycles an LDW reads its rows in, one step a cycle: its 2S rows when mono (the 1G1C
 * baseline), else S (a full tile's core pairs in parallel, rtl/npu_exec_ldw.v). */
static uint64_t ldw_steps(const npu_cfg_t *cfg, const npu_fields_t *f)
{
    return f->mono ? ldw_rows(cfg, f) : (uint64_t)cfg->s;
}

/* The columns a WAVE's last result crosses in its core: its tile's n; in HSW / ISW the cores of a
 * pair hold the two column halves side by side (rtl/npu_exec_ldw.v: cores 1/3 keep the high
 * half), so at most S (the forward of conv 1,8,8,16,3,3,1,1,1 at small, HSW n = 16: 7,523 cycles
 * predicted against 7,715 on the RTL with S, 8,620 with n). */
static uint64_t wave_cols(const npu_cfg_t *cfg, const npu_fields_t *f)
{
    int split = f->mode == NPU_MODE_HSW || f->mode == NPU_MODE_ISW;
    return split && f->n > (unsigned)cfg->s ? (uint64_t)cfg->s : (uint64_t)f->n;
}

/* The cycles a plain DRAIN loses to SPM sub-bank conflicts at its real addresses
 * (npu_slice_drain_stalls: the drain engine's pair choice, exact against the RTL); for the skinny
 * form when it is the emitters' (split_rows = rows = ceil((rows + hi_rows) / 2)). A narrow DRAIN
 * (one word a row) or another split: 0, not modelled. */
static uint64_t drain_stalls(const npu_cfg_t *cfg, const npu_fields_t *f)
{
    if (f->narrow || f->rows == 0)
        return 0;
    if (!f->split_rows)
        return npu_slice_drain_stalls(cfg, f->spm_addr, f->rows, 0, f->spm_stride);
    if (f->split_rows == f->rows && (f->hi_rows + 1 == f->rows || f->hi_rows == f->rows))
        return npu_slice_drain_stalls(cfg, f->spm_addr, (int64_t)f->rows + f->hi_rows, 1, f->spm_stride);
    return 0;
}

/* The fixed cycles of a LOAD_SPM (prog_time.h npu_load_spm_cycles), measured at tiny over a
 * SYNC_L: 64 rows of 32 B 266 cycles for 256 words (plain), 16 rows of 16 B 49 for 4 groups of 8
 * words and 8 columns (transposed). */
enum { PT_SPM_LEAD = 10, PT_SPM_TR_LEAD = 9 };

/* A transposed LOAD_SPM: per 2S-row block, groups of up to two source words per row (cb, cb + 1);
 * a group's fill (its rows' source reads, rd over all in proportion to its words) overlaps the
 * last group's columns (one SPM word each): the first fill, then per group the more of the last
 * group's columns and its fill, then the last group's columns. */
static uint64_t load_spm_tr_cycles(const npu_fields_t *f, uint64_t B, uint64_t F, uint64_t rd)
{
    uint64_t words = (f->row_bytes + B - 1) / B, cols = f->row_bytes / 2, tot = (uint64_t)f->rows * words;
    uint64_t t = 0, last = 0;
    int first = 1;
    for (uint64_t r0 = 0; r0 < f->rows; r0 += F) {
        uint64_t nr = f->rows - r0 < F ? f->rows - r0 : F;
        for (uint64_t cb = 0; cb < words; cb += 2) {
            uint64_t g = words - cb < 2 ? words - cb : 2, gc = cols - cb * F < 2 * F ? cols - cb * F : 2 * F;
            uint64_t fill = (nr * g * rd + tot - 1) / tot;
            t += first ? fill : max64(last, fill);
            first = 0;
            last = gc;
        }
    }
    return PT_SPM_TR_LEAD + t + last;
}

uint64_t npu_load_spm_cycles(const npu_cfg_t *cfg, const npu_fields_t *f)
{
    uint64_t B = (uint64_t)npu_cfg_word(cfg), bw = (uint64_t)npu_cfg_beat(cfg) / B, F = 2u * (uint64_t)cfg->s;
    npu_fields_t d = *f;
    if (!f->rows || !f->row_bytes)
        return PT_SPM_LEAD;
    d.dram_addr = (uint32_t)(f->src_addr * B); /* the source runs, as npu_prog_expect counts them */
    d.dram_stride = (unsigned)(f->src_stride * B);
    uint64_t rd = npu_dma_bursts_cfg(cfg, &d).beats * bw;
    if (f->transpose)
        return load_spm_tr_cycles(f, B, F, rd);
    return PT_SPM_LEAD + max64(rd, npu_dma_chunks(B, (unsigned)bw, &d)); /* row pairs: by the pitch */
}

/* Q16 cycles of instruction f on its unit (len: the vector unit's row length, from VSET). */
static uint64_t duration(const npu_cfg_t *cfg, const npu_slice_cost_t *k, const npu_fields_t *f, unsigned len)
{
    uint64_t B = (uint64_t)npu_cfg_word(cfg);
    switch (f->op) {
    case NPU_OP_FILL: return (npu_dma_chunks(B, (unsigned)(npu_cfg_beat(cfg) / npu_cfg_word(cfg)), f) + PT_FILL_C)
                             << NPU_SLICE_Q;
    case NPU_OP_LOAD_SPM: return npu_load_spm_cycles(cfg, f) << NPU_SLICE_Q;
    case NPU_OP_DRAIN:
        if (f->acc)
            return k->drain_fixed + ((uint64_t)f->rows * PT_DRAIN_ACC_ROW << NPU_SLICE_Q);
        return k->drain_fixed + (uint64_t)f->rows * k->drain_row + (drain_stalls(cfg, f) << NPU_SLICE_Q);
    case NPU_OP_VEC: return (npu_vec_busy(f, len, (unsigned)cfg->s) + PT_VEC_TAIL) << NPU_SLICE_Q;
    case NPU_OP_VSET:
    case NPU_OP_SYNC_E: return (uint64_t)PT_EXEC_ISSUE << NPU_SLICE_Q;
    default: return 0; /* LDW (behind the other bank's wave), SYNC_L, SYNC_S; LOAD / STORE: prepare */
    }
}

/* The fetch (rtl/npu_fetch.v) reads the program in bursts of MAX_BURST_BEATS into a buffer of
 * two bursts: burst m is requested after burst m - 1, once burst m - 2's instructions have left
 * for their queues; its beats pay the read latency and take their turn on the shared bus. So a
 * fetcher held up by a full queue pays the latency again, behind the DMA's transfers. */
static uint64_t fetch_beats(const npu_cfg_t *cfg, size_t insns)
{
    uint64_t B = (uint64_t)npu_cfg_beat(cfg);
    return ((uint64_t)insns * NPU_INSN_BYTES + B - 1) / B;
}

/* The burst holding instruction i's last beat. */
static size_t fetch_burst_of(const npu_cfg_t *cfg, size_t i)
{
    return (size_t)((fetch_beats(cfg, i + 1) - 1) / (uint64_t)cfg->max_burst_beats);
}

/* Burst m's request time (m == s->nfb; burst m - 2's instructions dispatched). */
static uint64_t fetch_request(const npu_cfg_t *cfg, const pt_state_t *s, size_t m)
{
    uint64_t B = (uint64_t)npu_cfg_beat(cfg), mb = (uint64_t)cfg->max_burst_beats;
    return m < 2 ? s->fb_req : max64(s->fb_req, s->disp[((m - 1) * mb * B - 1) / NPU_INSN_BYTES]);
}

static void channels(const npu_fields_t *f, int q, int *pops, int *np, int *pushes, int *nq);

/* Delays LOAD or STORE i by w if its data is still moving at t: its end, its queue and its pushes
 * (its consumers start after its end, so none has started yet). */
static void delay_load(pt_state_t *s, size_t i, uint64_t t, uint64_t w, uint64_t *qfree)
{
    int pops[2], pushes[2], np, nq;
    uint64_t end = s->start[i] + s->dur[i];
    if (t < s->start[i] + s->lead[i] || t >= end)
        return;
    channels(&s->f[i], s->q[i], pops, &np, pushes, &nq);
    for (int j = 0; j < nq; j++)
        s->push[pushes[j]][s->npush[pushes[j]] - 1] += w;
    s->dur[i] += w;
    s->bend[i] += w;
    qfree[s->q[i]] = max64(qfree[s->q[i]], end + w);
}

/* Times the next burst on the bus. */
static void fetch_burst(const npu_cfg_t *cfg, const npu_slice_cost_t *k, pt_state_t *s, uint64_t *qfree)
{
    uint64_t B = (uint64_t)npu_cfg_beat(cfg), mb = (uint64_t)cfg->max_burst_beats, m = s->nfb;
    uint64_t beats = fetch_beats(cfg, s->n), nb = beats - m * mb < mb ? beats - m * mb : mb;
    s->fb_req = fetch_request(cfg, s, s->nfb);
    uint64_t w = nb * B * k->byte + (m ? k->burst : 0); /* the first: the bus idle since the start */
    s->fb_end[s->nfb] = bus_fetch(s, s->fb_req + fetch_lead(cfg, k, m), w); /* one at a time */
    uint64_t at = s->fb_end[s->nfb++] - w;
    bus_take(s, at, w, 0); /* the transfers that ask after it wait for its beats */
    if (s->last_load) /* the LOAD it overtakes on the read port ends its bus time later */
        delay_load(s, s->last_load - 1, at, w, qfree);
    if (s->last_store) /* the STORE it takes turns with on the bus too */
        delay_load(s, s->last_store - 1, at, w, qfree);
}

/* When instruction i's bytes have arrived (its burst timed): its burst's end less the beats after it. */
static uint64_t fetched_at(const npu_cfg_t *cfg, const npu_slice_cost_t *k, const pt_state_t *s, size_t i)
{
    uint64_t B = (uint64_t)npu_cfg_beat(cfg), mb = (uint64_t)cfg->max_burst_beats;
    uint64_t beats = fetch_beats(cfg, s->n), need = fetch_beats(cfg, i + 1);
    size_t j = fetch_burst_of(cfg, i);
    uint64_t last = (j + 1) * mb < beats ? (j + 1) * mb : beats;
    return s->fb_end[j] - (last - need) * B * k->byte;
}

/* Dispatch time of instruction i (the fetcher in order; its queue's entry QUEUE_DEPTH earlier
 * started), once known; fetched: when its bytes have arrived. 0 when it cannot be known yet. */
static int dispatch(const npu_cfg_t *cfg, pt_state_t *s, size_t i, const size_t *qpos, size_t **qidx,
                    uint64_t fetched)
{
    uint64_t t = max64(fetched, i ? s->disp[i - 1] : 0);
    size_t pos = qpos[s->q[i]], d = (size_t)cfg->queue_depth;
    if (pos >= d) {
        uint64_t st = s->start[qidx[s->q[i]][pos - d]];
        if (st == UINT64_MAX)
            return 0;
        t = max64(t, st);
    }
    s->disp[i] = t;
    return 1;
}

/* The channels instruction f pops (into pops) and pushes (into pushes) in queue q. */
static void channels(const npu_fields_t *f, int q, int *pops, int *np, int *pushes, int *nq)
{
    *np = *nq = 0;
    if (q == QL) {
        if (f->pop_next) pops[(*np)++] = E2L;
        if (f->push_next) pushes[(*nq)++] = L2E;
    } else if (q == QE) {
        if (f->pop_prev) pops[(*np)++] = L2E;
        if (f->pop_next) pops[(*np)++] = S2E;
        if (f->push_prev) pushes[(*nq)++] = E2L;
        if (f->push_next) pushes[(*nq)++] = E2S;
    } else {
        if (f->pop_prev) pops[(*np)++] = E2S;
        if (f->push_prev) pushes[(*nq)++] = S2E;
    }
}

/* The OBUF rows instruction f writes (WAVE) or reads (DRAIN): [*lo, *hi), clipped to the OBUF. */
static void obuf_rows(const pt_state_t *s, const npu_fields_t *f, size_t *lo, size_t *hi)
{
    size_t n = f->rows;
    if (f->op == NPU_OP_WAVE) {
        npu_wave_sets_t ws;
        npu_wave_sets_f(f, &ws);
        n = ws.obuf_rows;
    }
    *lo = f->obuf_addr < s->nob ? f->obuf_addr : s->nob;
    *hi = *lo + n < s->nob ? *lo + n : s->nob;
}

/* The latest of v[lo..hi). */
static uint64_t latest(const uint64_t *v, size_t lo, size_t hi)
{
    uint64_t t = 0;
    for (size_t r = lo; r < hi; r++)
        t = max64(t, v[r]);
    return t;
}

/* When WAVE i's last row is in the array, given it streams from st: its slots at one a cycle,
 * but no sooner than PT_WAVE_ENTRY cycles after the wave streamer has read them. The streamer
 * reads the waves' rows in issue order (wave_rows: the slots and their sub-bank collisions) from
 * a wave's entry into the wave queue on; before the array takes the wave (st) it reads at most
 * LBUF_H_DEPTH slots ahead (the LBUF_H holds them), the rest after. So collisions cost only when
 * the reads, not the array, are late: a tile of one short wave reads it while the array waits for
 * the LDW or the bank's turnaround (measured: the forward of conv 3,28,28,32,3,3,2,1,1 at small,
 * R 1, one 7-slot HSW wave per tile: 5,890 cycles on the RTL, 5,903 predicted, 6,380 with every
 * collision charged to the array), a tile of five back-to-back waves pays most of them (the
 * depthwise 8,10,10,8,3,3 forward, R 5: 81 stall cycles on the RTL for 95 collisions). */
static uint64_t wave_fed(const npu_cfg_t *cfg, pt_state_t *s, size_t i, uint64_t st)
{
    npu_wave_sets_t ws;
    npu_wave_sets_f(&s->f[i], &ws);
    uint64_t r0 = (uint64_t)ws.len[0] << NPU_SLICE_Q, c = wave_rows(s, i);
    uint64_t depth = (uint64_t)(cfg->lbuf_h_depth > 0 ? cfg->lbuf_h_depth : 1) << NPU_SLICE_Q;
    uint64_t rd = max64(s->entry, s->rd_end);
    uint64_t ahead = min64(st > rd ? st - rd : 0, depth * c / (r0 ? r0 : 1)); /* read before st */
    s->rd_end = max64(rd, st) + c - min64(c, ahead);
    return max64(st + r0, min64(s->rd_end + ((uint64_t)PT_WAVE_ENTRY << NPU_SLICE_Q), st + c));
}

/* The EXEC queue only issues WAVEs and DRAINs (PT_EXEC_ISSUE cycles); their units run them
 * (rtl/npu_exec.v). A WAVE streams its rows once the array is free (the wave queue holds two:
 * it issues once the one before has begun, start_time) and its results reach the OBUF the
 * array's latency later; a DRAIN runs on the drain unit once the drain before it is done,
 * streaming behind the WAVEs into its rows (it ends a cycle after their last results at the
 * earliest), and frees the rows for the next WAVE at its end. Returns the
 * instruction's end; *occ: how long it holds its queue. */
static uint64_t obuf_run(const npu_cfg_t *cfg, pt_state_t *s, size_t i, uint64_t t, uint64_t *occ)
{
    size_t lo, hi;
    obuf_rows(s, &s->f[i], &lo, &hi);
    *occ = s->dur[i];
    if (s->f[i].op == NPU_OP_WAVE) {
        if (s->tile_open && s->f[i].wbank == (unsigned)s->tile_bank) {
            /* a WAVE on the weights of the one before (no LDW between): its rows stream right
             * after that one's, the tile's turnaround counted once over its waves' rows (a
             * conv's row blocks on one weight tile; measured: conv_slice_check --all) */
            s->streamed = max64(s->entry + ((uint64_t)PT_WAVE_ENTRY << NPU_SLICE_Q), s->rows_end);
            uint64_t end = wave_fed(cfg, s, i, s->streamed);
            s->tile_rows += end - s->streamed;
            s->rows_end = end;
            s->array_free = max64(s->rows_end, s->tile_start + npu_slice_wave_time(s->tile_rows, s->ldw_steps));
        } else {
            s->streamed = max64(max64(t, s->array_free), s->ldw_ready);
            uint64_t end = wave_fed(cfg, s, i, s->streamed);
            s->tile_open = 1;
            s->tile_bank = (int)s->f[i].wbank;
            s->tile_start = s->streamed;
            s->tile_rows = end - s->streamed;
            s->rows_end = end;
            s->array_free = s->streamed + npu_slice_wave_time(s->tile_rows, s->ldw_steps);
        }
        for (size_t r = lo; r < hi; r++)
            s->ob_ready[r] = s->rows_end + res_latency(cfg);
        /* its record frees when its own last row's results are in (not the tile's turnaround):
         * the last result crosses the columns of its core (wave_cols), at most 6S - 2 */
        uint64_t lat = min64(pipe_latency(cfg), (uint64_t)(4 * cfg->s - 2 + wave_cols(cfg, &s->f[i])) << NPU_SLICE_Q);
        s->retire[s->nwaves++ % PT_WAVES_IN_FLIGHT] = s->rows_end + lat;
        *occ = (uint64_t)PT_EXEC_ISSUE << NPU_SLICE_Q;
        /* it ends (pushes its tokens) when it retires (rtl/npu_exec_obuf_hazard.v wave_push: its
         * last row's results in), not when the array is free for the next tile: a LOAD waiting
         * on its e2l came ~35 cycles after the tile's turnaround (conv dW zeropad at small) */
        return max64(s->array_free, s->rows_end + lat);
    } else if (s->f[i].op == NPU_OP_DRAIN) {
        /* it streams behind the WAVEs into its rows, which become final a row a cycle: a drain
         * slower than that (accumulating) starts with the first and runs at its own pace */
        uint64_t ready = latest(s->ob_ready, lo, hi), n = (uint64_t)(hi - lo) << NPU_SLICE_Q;
        uint64_t d = max64(max64(t, s->drain_free), ready > n ? ready - n : 0);
        s->drain_free = max64(d + s->dur[i], ready + (1u << NPU_SLICE_Q));
        s->dw[s->ndw][0] = d, s->dw[s->ndw][1] = s->drain_free;
        s->dw[s->ndw][2] = (uint64_t)(s->f[i].acc ? s->f[i].rows : (s->f[i].rows + 1) / 2) << NPU_SLICE_Q;
        s->dwi[s->ndw++] = i;
        for (size_t r = lo; r < hi; r++)
            s->ob_free[r] = s->drain_free;
        *occ = (uint64_t)PT_EXEC_ISSUE << NPU_SLICE_Q;
        return s->drain_free;
    }
    return t + s->dur[i];
}

/* When instruction i, at the head of its queue, can start: its queue free, dispatched, the
 * tokens it pops pushed; UINT64_MAX while one is not pushed yet. s->tq[i]: when what it waits
 * for beside its queue, its dispatch and the wave queue is ready (tokens, OBUF rows, a record). */
/* The read latency a LOAD that could issue at ready pays beyond xfer_fixed, the LOAD engine
 * busy until busy (slice_cost.h, xfer_idle): the pipelined engine takes it once the last LOAD's
 * bursts are out and the one before that is done (two descriptors in the engine, a FILL one of
 * them: a LOAD behind a FILL issues once the descriptor before the FILL is done; measured, the dY
 * LOADs between FILLs of conv 8,9,9,16 1x1 s2 dX zeropad at small, 25 cycles each, not 11), and its data
 * follows a latency later, so all of it when it waits for a token or dispatch past the last
 * LOAD's end (or a SYNC_L emptied the engine), what its wait leaves uncovered when it comes
 * within the last latency, none when queued earlier. 0 with LOAD_PIPELINE = 0. */
static uint64_t load_wait(const pt_state_t *s, uint64_t ready, uint64_t busy)
{
    ready = max64(ready, s->ld_end[1]);
    if (!s->idle || s->l_synced || ready >= busy)
        return s->idle;
    return ready + s->idle > busy ? ready + s->idle - busy : 0;
}

static uint64_t start_time(pt_state_t *s, size_t i, const uint64_t *qfree)
{
    int pops[2], pushes[2], np, nq;
    uint64_t t = 0;
    if (s->f[i].op == NPU_OP_WAVE) { /* its OBUF rows drained */
        size_t lo, hi;
        obuf_rows(s, &s->f[i], &lo, &hi);
        t = max64(t, latest(s->ob_free, lo, hi));
        if (s->nwaves >= PT_WAVES_IN_FLIGHT) /* a free completion record: the wave 8 before retired */
            t = max64(t, s->retire[s->nwaves % PT_WAVES_IN_FLIGHT]);
    }
    channels(&s->f[i], s->q[i], pops, &np, pushes, &nq);
    for (int j = 0; j < np; j++) {
        if (s->npop[pops[j]] >= s->npush[pops[j]])
            return UINT64_MAX;
        t = max64(t, s->push[pops[j]][s->npop[pops[j]]]);
    }
    s->tq[i] = t;
    if (s->f[i].op == NPU_OP_LOAD)
        s->lx[i] = load_wait(s, max64(t, s->disp[i]), qfree[QL]);
    t = max64(max64(t, s->disp[i]), qfree[s->q[i]]);
    return s->f[i].op == NPU_OP_WAVE ? max64(t, s->streamed) : t; /* the wave before it streaming */
}

/* The SPM banks [*lo, *hi] instruction f's rows touch (a LOAD's or a DRAIN's destination). */
static void spm_banks_of(const npu_cfg_t *cfg, const npu_fields_t *f, uint64_t *lo, uint64_t *hi)
{
    uint64_t bw = cfg->spm_bank_words > 0 ? (uint64_t)cfg->spm_bank_words : 1, W = (uint64_t)npu_cfg_word(cfg);
    uint64_t words = f->op == NPU_OP_DRAIN ? 2 : (f->row_bytes + W - 1) / W;
    uint64_t rows = f->rows ? f->rows : 1;
    *lo = f->spm_addr / bw;
    *hi = (f->spm_addr + (rows - 1) * f->spm_stride + words - 1) / bw;
}

/* The cycles DRAIN write window k (s->dw) takes from LOAD l's data moving over [a, b): the drain writes
 * two OBUF rows a cycle into four SPM words, one per sub-bank (an accumulating one a row at a
 * time), on ports before the LOAD's (rtl/npu_spm.v: write 5 is the LOAD's and FILL's), so a LOAD
 * into the same bank has its SPM write refused in each of them and its R beats wait (the DRAM
 * model's credit holds 4 beats): the drain's write cycles, spread over its time on the drain
 * unit, the part of them inside [a, b). Measured: the dX ecoflow of conv 16,14,14,64,1,1,1,0,1 at
 * small (R 3), a LOAD of dY's 16-beat bursts 20 cycles apart but for one of 45 while a 42-row
 * DRAIN wrote into its bank. */
static uint64_t drain_block(const npu_cfg_t *cfg, const pt_state_t *s, size_t k, size_t l, uint64_t a, uint64_t b)
{
    uint64_t from = max64(s->dw[k][0], a), to = min64(s->dw[k][1], b), dl, dh, ll, lh;
    if (to <= from || s->dw[k][1] <= s->dw[k][0])
        return 0;
    spm_banks_of(cfg, &s->f[s->dwi[k]], &dl, &dh);
    spm_banks_of(cfg, &s->f[l], &ll, &lh);
    if (dh < ll || lh < dl)
        return 0;
    return (uint64_t)((double)s->dw[k][2] * (double)(to - from) / (double)(s->dw[k][1] - s->dw[k][0]));
}

/* Transfer i's bus time from t on, shared with the other engine's transfer in flight (a LOAD's
 * with a STORE's and back). The DRAM model gives contested credit to the read and write ports in
 * turn (tb/dram_model.c: prio_w flips on every contest), so while both have beats to move each
 * gets half the bus, whichever asked first: of the other's r cycles of bus time left at t and
 * this one's w, the shorter, m, ends at 2m from t, the longer once both are done, and the held
 * intervals (the bus's total) do not change. bus_take places w after the other's time (the
 * serial order); this one ends r - m sooner than that, and the other m later (delay_load).
 * Measured: the STORE of the forward of conv 3,28,28,32,3,3,2,1,1 at small (R 5 G 2), 8,960 B
 * beside the next band's LOADs, ended 342 cycles later on the RTL than the model had it when the
 * STORE kept the bus and the LOADs waited. Returns this transfer's end. */
static uint64_t bus_share(const npu_cfg_t *cfg, pt_state_t *s, size_t i, uint64_t t, uint64_t *qfree)
{
    int store = s->f[i].op == NPU_OP_STORE;
    size_t o = store ? s->last_load : s->last_store; /* the other engine's last, + 1 */
    uint64_t w = s->busw[i];
    uint64_t end = bus_take(s, t, w, store ? s->burstw[i] : (uint64_t)cfg->max_outstanding * s->burstw[i]);
    if (o && s->bend[o - 1] > t && s->start[o - 1] + s->lead[o - 1] <= t) {
        uint64_t r = s->bend[o - 1] - t, m = min64(r, w);
        end = max64(end - (r - m), t + w + m);
        delay_load(s, o - 1, t, m, qfree);
    }
    if (!store) { /* the DRAINs that write its bank meanwhile (their windows end in order: the
                   * drain unit runs them in order; LOADs start in time order) */
        while (s->dw_lo < s->ndw && s->dw[s->dw_lo][1] <= t)
            s->dw_lo++;
        for (size_t k = s->dw_lo; k < s->ndw; k++)
            end += drain_block(cfg, s, k, i, t, end);
    }
    s->bend[i] = end;
    return end;
}

/* Starts instruction i at t: pops its tokens, takes its bus time, pushes at its end. */
static void start(const npu_cfg_t *cfg, pt_state_t *s, size_t i, uint64_t t, uint64_t *qfree)
{
    int pops[2], pushes[2], np, nq;
    channels(&s->f[i], s->q[i], pops, &np, pushes, &nq);
    for (int j = 0; j < np; j++)
        s->npop[pops[j]]++;
    s->lead[i] += s->lx[i], s->dur[i] += s->lx[i]; /* a LOAD's latency on an idle engine */
    if (s->lx[i]) /* its first burst's cost elapses within that latency */
        s->dur[i] -= min64(min64(s->lx[i], s->burst_q), s->dur[i]);
    if (s->f[i].op == NPU_OP_LOAD || s->f[i].op == NPU_OP_SYNC_L)
        s->l_synced = s->f[i].op == NPU_OP_SYNC_L;
    if (s->busw[i]) /* a transfer: its data moves on the shared bus, from its lead on */
        s->dur[i] = max64(s->dur[i], bus_share(cfg, s, i, t + s->lead[i], qfree) - t);
    /* EXEC: at the queue's head once dispatched and the one before left; it can issue 3 cycles
     * later, once what it waits for is ready */
    uint64_t one = 1u << NPU_SLICE_Q;
    uint64_t issue = max64(max64(s->disp[i], s->exec_left) + ((uint64_t)PT_HEAD_ISSUE << NPU_SLICE_Q), s->tq[i]);
    if (s->f[i].op == NPU_OP_WAVE) /* the wave queue takes it once the WAVE two before has its rows in */
        s->entry = max64(issue, s->wend[0]);
    uint64_t occ, end = obuf_run(cfg, s, i, t, &occ);
    if (s->f[i].op == NPU_OP_DRAIN && s->last_load) { /* its writes hold up the LOAD in flight */
        size_t l = s->last_load - 1;
        uint64_t a = s->start[l] + s->lead[l], w = drain_block(cfg, s, s->ndw - 1, l, a, s->bend[l]);
        if (w)
            delay_load(s, l, max64(a, s->dw[s->ndw - 1][0]), w, qfree);
    }
    s->start[i] = t;
    s->dur[i] = end - t;
    if (s->f[i].op == NPU_OP_LOAD || s->f[i].op == NPU_OP_FILL) /* a FILL holds a descriptor slot too */
        s->ld_end[1] = s->ld_end[0], s->ld_end[0] = end;
    if (s->f[i].op == NPU_OP_LOAD)
        s->last_load = i + 1;
    if (s->f[i].op == NPU_OP_STORE)
        s->last_store = i + 1;
    if (s->f[i].op == NPU_OP_LDW) { /* the next WAVE begins a tile, once the weights are in */
        s->tile_open = 0;
        s->ldw_steps = ldw_steps(cfg, &s->f[i]);
        s->ldw_ready = issue + ((s->ldw_steps + PT_LDW_C) << NPU_SLICE_Q);
    }
    if (s->f[i].op == NPU_OP_WAVE) {
        s->exec_left = s->entry + one;
        s->wend[0] = s->wend[1], s->wend[1] = s->rows_end;
    } else if (s->f[i].op == NPU_OP_LDW || s->f[i].op == NPU_OP_DRAIN) {
        s->exec_left = issue + one;
    } else if (s->q[i] == QE) {
        s->exec_left = t + occ;
    }
    qfree[s->q[i]] = t + occ;
    for (int j = 0; j < nq; j++)
        s->push[pushes[j]][s->npush[pushes[j]]++] = end;
}

/* Decodes the program and sizes every instruction. 0 or -1. */
static int prepare(const npu_cfg_t *cfg, const npu_slice_cost_t *k, const npu_insn_t *prog, pt_state_t *s,
                   char *why, size_t wn)
{
    unsigned len = 0;
    uint64_t steps = (uint64_t)cfg->s;
    for (size_t i = 0; i < s->n; i++) {
        if (npu_decode(&prog[i], &s->f[i]) != 0 || (s->q[i] = queue_of(s->f[i].op)) < 0) {
            snprintf(why, wn, "instruction %zu does not decode", i);
            return -1;
        }
        if (s->f[i].op == NPU_OP_VSET)
            len = s->f[i].len;
        s->dur[i] = duration(cfg, k, &s->f[i], len);
        if (s->f[i].op == NPU_OP_LDW)
            steps = ldw_steps(cfg, &s->f[i]);
        if (s->f[i].op == NPU_OP_WAVE) {
            s->wrows[i] = wave_cycles(cfg, &s->f[i]);
            s->dur[i] = npu_slice_wave_time(s->wrows[i], steps);
        }
        if (s->f[i].op == NPU_OP_LOAD || s->f[i].op == NPU_OP_STORE) {
            int st = s->f[i].op == NPU_OP_STORE;
            npu_dma_count_t c = dma_count(cfg, &s->f[i]);
            s->dur[i] = dma_cost(cfg, k, &s->f[i], st, c);
            s->busw[i] = dma_bus(cfg, k, &s->f[i], c, &s->burstw[i]);
            s->lead[i] = dma_lead(k, st);
            s->bus += s->busw[i];
        }
        s->disp[i] = s->start[i] = UINT64_MAX;
    }
    return 0;
}

/* The dataflow: dispatch in order, start queue heads whose tokens are known, until done. */
static int replay(const npu_cfg_t *cfg, const npu_slice_cost_t *k, pt_state_t *s, uint64_t *end, char *why,
                  size_t wn)
{
    size_t qpos[QUEUES] = {0}, head[QUEUES] = {0}, nd = 0, *qidx[QUEUES];
    uint64_t qfree[QUEUES] = {0};
    int rc = 0;
    for (int q = 0; q < QUEUES; q++)
        qidx[q] = malloc(sizeof(size_t) * (s->n + 1));
    if (!qidx[0] || !qidx[1] || !qidx[2]) {
        snprintf(why, wn, "out of memory");
        rc = -1;
    }
    /* events in time order, so that the bus is taken in the order the transfers ask for it:
     * dispatch while the fetched bursts last, then the earliest of the queue heads' starts (by
     * when their data would move) and the next fetch burst */
    while (rc == 0) {
        while (nd < s->n && fetch_burst_of(cfg, nd) < s->nfb &&
               dispatch(cfg, s, nd, qpos, qidx, fetched_at(cfg, k, s, nd))) {
            qidx[s->q[nd]][qpos[s->q[nd]]++] = nd;
            nd++;
        }
        uint64_t best = UINT64_MAX, bt = 0;
        int bq = -1;
        for (int q = 0; q < QUEUES; q++) {
            uint64_t t = head[q] < qpos[q] ? start_time(s, qidx[q][head[q]], qfree) : UINT64_MAX;
            size_t h = t != UINT64_MAX ? qidx[q][head[q]] : 0;
            if (t != UINT64_MAX && t + s->lead[h] + s->lx[h] < best)
                best = t + s->lead[h] + s->lx[h], bt = t, bq = q;
        }
        if (nd < s->n && fetch_burst_of(cfg, nd) >= s->nfb &&
            fetch_request(cfg, s, s->nfb) + fetch_lead(cfg, k, s->nfb) <= best) {
            fetch_burst(cfg, k, s, qfree);
            continue;
        }
        if (bq < 0)
            break;
        size_t i = qidx[bq][head[bq]++];
        start(cfg, s, i, bt, qfree);
        *end = max64(*end, s->start[i] + s->dur[i]);
    }
    for (size_t i = 0; i < s->n; i++) /* a LOAD a fetch burst overtook ends later than it started out */
        if (s->start[i] != UINT64_MAX)
            *end = max64(*end, s->start[i] + s->dur[i]);
    if (rc == 0 && head[QL] + head[QE] + head[QS] < s->n) {
        snprintf(why, wn, "the program's tokens do not resolve (%zu of %zu instructions start)",
                 head[QL] + head[QE] + head[QS], s->n);
        rc = -1;
    }
    for (int q = 0; q < QUEUES; q++)
        free(qidx[q]);
    return rc;
}

int npu_prog_time(const npu_cfg_t *cfg, const npu_slice_cost_t *k, const npu_insn_t *prog, size_t n,
                  uint64_t *cycles, char *why, size_t wn)
{
    pt_state_t s;
    uint64_t end = 0;
    int rc = -1;
    memset(&s, 0, sizeof s);
    s.n = n;
    s.f = malloc(sizeof *s.f * (n + 1));
    s.q = malloc(sizeof *s.q * (n + 1));
    s.dur = malloc(sizeof *s.dur * (n + 1));
    s.disp = malloc(sizeof *s.disp * (n + 1));
    s.start = malloc(sizeof *s.start * (n + 1));
    s.tq = malloc(sizeof *s.tq * (n + 1));
    s.lead = calloc(n + 1, sizeof *s.lead);
    s.lx = calloc(n + 1, sizeof *s.lx);
    s.idle = npu_slice_idle(k);
    s.burst_q = k->burst;
    s.busw = calloc(n + 1, sizeof *s.busw);
    s.burstw = calloc(n + 1, sizeof *s.burstw);
    s.bend = calloc(n + 1, sizeof *s.bend);
    s.wrows = calloc(n + 1, sizeof *s.wrows);
    s.dw = malloc(sizeof *s.dw * (n + 1));
    s.dwi = malloc(sizeof *s.dwi * (n + 1));
    s.held = malloc(sizeof *s.held * (2 * n + 2));
    s.fb_end = malloc(sizeof *s.fb_end * (n + 1));
    s.nob = 2u * (size_t)cfg->obuf_rows;
    s.ob_ready = calloc(s.nob + 1, sizeof *s.ob_ready);
    s.ob_free = calloc(s.nob + 1, sizeof *s.ob_free);
    int ok = s.tq && s.f && s.q && s.dur && s.disp && s.start && s.lead && s.lx && s.busw && s.burstw && s.bend && s.wrows && s.dw && s.dwi && s.held && s.fb_end && s.ob_ready && s.ob_free;
    for (int c = 0; c < CHANNELS; c++)
        ok &= (s.push[c] = malloc(sizeof *s.push[c] * (n + 1))) != NULL;
    if (!ok)
        snprintf(why, wn, "out of memory");
    else if (prepare(cfg, k, prog, &s, why, wn) == 0)
        rc = replay(cfg, k, &s, &end, why, wn);
    /* the DRAM bus is shared: the program takes at least its transfers' and its fetch's bus time
     * after the first fetch's fixed cost */
    end = max64(end, fetch_lead(cfg, k, 0) + s.bus + fetch_bus(cfg, k, n));
    *cycles = (end + (1u << NPU_SLICE_Q) - 1) >> NPU_SLICE_Q;
    free(s.f);
    free(s.q);
    free(s.dur);
    free(s.disp);
    free(s.start);
    free(s.tq);
    free(s.lead);
    free(s.lx);
    free(s.busw);
    free(s.burstw);
    free(s.bend);
    free(s.wrows);
    free(s.dw);
    free(s.dwi);
    free(s.held);
    free(s.fb_end);
    free(s.ob_ready);
    free(s.ob_free);
    for (int c = 0; c < CHANNELS; c++)
        free(s.push[c]);
    return rc;
}
