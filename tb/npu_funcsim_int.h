/*
 * npu_funcsim_int.h - the state of the functional NPU model, shared by its two halves:
 * npu_funcsim.c (queues, tokens, fetch, time, the npu_sim.h API) and npu_funcsim_exec.c (the
 * instruction semantics of docs/isa.md). Not an API: only these two files include it.
 */
#ifndef NPU_FUNCSIM_INT_H
#define NPU_FUNCSIM_INT_H

#include <stddef.h>
#include <stdint.h>

#include "hw/isa.h"
#include "hw/npu_cfg.h"
#include "npu_sim.h"

enum { QL, QE, QS };                      /* queues */
enum { T_L2E, T_E2L, T_E2S, T_S2E };      /* token channels */
enum { MEM_DRAM, MEM_SPM, MEM_OBUF, MEM_WB };

typedef struct pending_wr {
    int mem;
    size_t off, len, data; /* byte offset in the memory, length, offset in the unit's pool */
} pending_wr_t;

typedef struct unit {
    int busy;
    uint32_t pc;          /* instruction in progress (or last one) */
    unsigned tok;         /* its token flags (NPU_TOK_*) */
    uint64_t done_at;
    pending_wr_t *wr;
    size_t nwr, capwr;
    uint8_t *pool;
    size_t npool, cappool;
} unit_t;

typedef struct qentry {
    uint32_t pc;
    npu_insn_t in;
} qentry_t;

typedef struct queue {
    qentry_t *e;
    unsigned head, n, cap;
} queue_t;

struct npu_sim {
    npu_cfg_t cfg;
    unsigned S, F, B; /* B: bytes per SPM word (4S) */
    unsigned DB;      /* bytes per DRAM beat (B * BEAT_WORDS): bursts, beats, the 4 KiB rule */
    npu_dram_timing_t t;
    unsigned jitter;
    uint64_t rng;
    uint8_t *dram, *spm, *obuf, *wb; /* OBUF: uint32 lanes; WB: int16, [bank][r][c] */
    size_t dram_bytes, spm_words, obuf_rows2;
    uint32_t prog_base, prog_len, watchdog, status, err_pc, err_info;
    uint64_t cnt[NPU_NUM_COUNTERS];
    /* per weight bank: the mode whose tile layout its last LDW loaded (a masked LDW loads
     * the ISW layout), valid once an LDW targeted the bank (as the RTL's bank_mode) */
    unsigned bank_mode[2];
    int bank_loaded[2];
    /* the vector unit's VSET registers (zero at start, as the RTL's unit reset) */
    uint32_t v_alpha, v_beta;
    unsigned v_len, v_shift;
    uint64_t cycle, last_progress;
    uint32_t fetch_pc;
    uint64_t next_fetch_beat; /* first program beat not yet counted */
    uint64_t fetch_burst_end; /* first beat after the current fetch burst */
    uint64_t prog_beats;      /* beats the fetcher reads: ceil(PROG_LEN * 16 / DB) */
    queue_t q[3];
    unit_t u[3];
    unsigned tok[4];
    uint64_t rd_beats, wr_beats, rd_bursts, wr_bursts, stalls;
};

static inline uint64_t cdiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

static inline uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline int16_t lane16(const uint8_t *word, unsigned lane)
{
    uint16_t v = (uint16_t)(word[2 * lane] | word[2 * lane + 1] << 8);
    return (int16_t)(v >= 0x8000u ? (int)v - 0x10000 : (int)v);
}

/* npu_funcsim.c: the seeded generator of timing jitter and DRAM stalls (one stream, so the
 * order of its calls is part of the model). */
uint64_t fsim_rnd(npu_sim_t *s);

/* npu_funcsim_exec.c: runs the instruction in (validates, stages its writes in u, counts) and
 * returns 0 with *cost in cycles, or an error code with *info (ERR_INFO). */
unsigned fsim_exec(npu_sim_t *s, unit_t *u, const npu_insn_t *in, uint64_t *cost, uint32_t *info);
/* npu_funcsim_exec.c: applies the writes u staged (at completion) and empties its pool. */
void fsim_commit(npu_sim_t *s, unit_t *u);

#endif
