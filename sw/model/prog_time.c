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
/* A DRAIN right after WAVEs waits for their last rows to leave the array: 6S - 2 cycles (measured:
 * a lone DRAIN's drain_busy is its rows + 6S - 2 at S = 2 and 8); in the bf16 configurations an
 * fp32 row (2S lanes, two SPM words) drains in one cycle, not the calibrated int16 half. */
static uint64_t pipe_latency(const npu_cfg_t *cfg) { return (uint64_t)(6 * cfg->s - 2) << NPU_SLICE_Q; }
enum { QL, QE, QS, QUEUES };

typedef struct pt_state {
    size_t n;
    npu_fields_t *f;
    int *q;                       /* the instruction's queue */
    uint64_t *dur, *disp, *start; /* Q16; start / disp UINT64_MAX until known */
    uint64_t *push[CHANNELS];     /* the channel's pushes, in order */
    uint64_t bus;                 /* Q16: the DRAM bus time of every transfer and of the fetch */
    size_t npush[CHANNELS], npop[CHANNELS];
} pt_state_t;


static int queue_of(unsigned op)
{
    char q = npu_op_queue(op);
    return q == 'L' ? QL : q == 'E' ? QE : q == 'S' ? QS : -1;
}

/* A LOAD's or STORE's Q16 cycles: its bursts and beats by the ISA's rule, the slicing stage's
 * transfer cost with a STORE's own fixed cost (store_fixed: no read latency). */
static uint64_t dma_cost(const npu_cfg_t *cfg, const npu_slice_cost_t *k, const npu_fields_t *f, int store)
{
    uint64_t B = (uint64_t)npu_cfg_beat(cfg);
    npu_dma_count_t c = (f->transpose && !store ? npu_dma_bursts_tr : npu_dma_bursts)(
        B, (uint64_t)cfg->max_burst_beats, f->dram_addr, f->rows, f->row_bytes, f->dram_stride);
    npu_bursts_t b = {c.bursts, c.beats, (uint64_t)f->rows * f->row_bytes, 1, 1, 0};
    uint64_t q = npu_slice_xfer_cost(k, &b, (unsigned)B, store), F = 2u * (uint64_t)cfg->s;
    uint64_t fixed = store ? k->store_fixed : k->xfer_fixed;
    if (store)
        q -= k->xfer_fixed - fixed;
    if (f->transpose && !store) /* a group's columns are written after its beats arrive, not meanwhile */
        return q + (((uint64_t)(f->row_bytes / 2) * ((f->rows + F - 1) / F)) << NPU_SLICE_Q);
    /* one SPM word per cycle: rows of a few beats' bytes (not beat-aligned) take more words than beats */
    uint64_t words = (uint64_t)f->rows * ((f->row_bytes + B - 1) / B);
    return max64(q, fixed + (words << NPU_SLICE_Q));
}

/* A LOAD's or STORE's DRAM bus time alone (its beats and bursts), which both engines and the
 * fetch share. */
static uint64_t dma_bus(const npu_cfg_t *cfg, const npu_slice_cost_t *k, const npu_fields_t *f, int store)
{
    uint64_t B = (uint64_t)npu_cfg_beat(cfg);
    npu_dma_count_t c = (f->transpose && !store ? npu_dma_bursts_tr : npu_dma_bursts)(
        B, (uint64_t)cfg->max_burst_beats, f->dram_addr, f->rows, f->row_bytes, f->dram_stride);
    npu_bursts_t b = {c.bursts, c.beats, (uint64_t)f->rows * f->row_bytes, 1, 1, 0};
    return npu_slice_xfer_bus(k, &b, (unsigned)B);
}

/* The fetch's bus time: the program's bytes in bursts of MAX_BURST_BEATS. */
static uint64_t fetch_bus(const npu_cfg_t *cfg, const npu_slice_cost_t *k, size_t n)
{
    uint64_t B = (uint64_t)npu_cfg_beat(cfg);
    npu_dma_count_t c = npu_dma_run(0, (uint64_t)n * NPU_INSN_BYTES, B, (uint64_t)cfg->max_burst_beats);
    npu_bursts_t b = {c.bursts, c.beats, (uint64_t)n * NPU_INSN_BYTES, 1, 1, 0};
    return npu_slice_xfer_bus(k, &b, (unsigned)B);
}

/* Q16 cycles of instruction f on its unit (len: the vector unit's row length, from VSET). */
static uint64_t duration(const npu_cfg_t *cfg, const npu_slice_cost_t *k, const npu_fields_t *f, unsigned len)
{
    uint64_t B = (uint64_t)npu_cfg_beat(cfg);
    switch (f->op) {
    case NPU_OP_LOAD: return dma_cost(cfg, k, f, 0);
    case NPU_OP_STORE: return dma_cost(cfg, k, f, 1);
    case NPU_OP_FILL: return ((uint64_t)f->rows * ((f->row_bytes + B - 1) / B)) << NPU_SLICE_Q;
    case NPU_OP_DRAIN:
        if (npu_cfg_bf16(cfg) && !f->narrow)
            return (uint64_t)f->rows << NPU_SLICE_Q;
        return k->drain_fixed + (uint64_t)f->rows * k->drain_row;
    case NPU_OP_VEC: return (npu_vec_busy(f, len, (unsigned)cfg->s) + PT_VEC_TAIL) << NPU_SLICE_Q;
    case NPU_OP_VSET:
    case NPU_OP_SYNC_E: return (uint64_t)PT_EXEC_ISSUE << NPU_SLICE_Q;
    case NPU_OP_WAVE: {
        npu_wave_sets_t ws;
        npu_wave_sets_f(f, &ws);
        uint64_t r = (uint64_t)ws.len[0] << NPU_SLICE_Q, turn = (r + k->wave) / 2;
        return r > turn ? r : turn;
    }
    default: return 0; /* LDW (behind the other bank's wave), SYNC_L, SYNC_S */
    }
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

/* Starts instruction i at the head of its queue if its tokens are known. 1 if started. */
static int try_start(pt_state_t *s, size_t i, uint64_t *qfree)
{
    int pops[2], pushes[2], np, nq;
    uint64_t t = max64(s->disp[i], qfree[s->q[i]]);
    channels(&s->f[i], s->q[i], pops, &np, pushes, &nq);
    for (int j = 0; j < np; j++) {
        if (s->npop[pops[j]] >= s->npush[pops[j]])
            return 0;
        t = max64(t, s->push[pops[j]][s->npop[pops[j]]]);
    }
    for (int j = 0; j < np; j++)
        s->npop[pops[j]]++;
    s->start[i] = t;
    qfree[s->q[i]] = t + s->dur[i];
    for (int j = 0; j < nq; j++)
        s->push[pushes[j]][s->npush[pushes[j]]++] = t + s->dur[i];
    return 1;
}

/* Decodes the program and sizes every instruction. 0 or -1. */
static int prepare(const npu_cfg_t *cfg, const npu_slice_cost_t *k, const npu_insn_t *prog, pt_state_t *s,
                   char *why, size_t wn)
{
    unsigned len = 0, last_exec = NPU_OP_SYNC_E;
    for (size_t i = 0; i < s->n; i++) {
        if (npu_decode(&prog[i], &s->f[i]) != 0 || (s->q[i] = queue_of(s->f[i].op)) < 0) {
            snprintf(why, wn, "instruction %zu does not decode", i);
            return -1;
        }
        if (s->f[i].op == NPU_OP_VSET)
            len = s->f[i].len;
        s->dur[i] = duration(cfg, k, &s->f[i], len);
        if (s->f[i].op == NPU_OP_DRAIN && last_exec == NPU_OP_WAVE)
            s->dur[i] += pipe_latency(cfg);
        if (s->q[i] == QE)
            last_exec = s->f[i].op;
        if (s->f[i].op == NPU_OP_LOAD || s->f[i].op == NPU_OP_STORE)
            s->bus += dma_bus(cfg, k, &s->f[i], s->f[i].op == NPU_OP_STORE);
        s->disp[i] = s->start[i] = UINT64_MAX;
    }
    return 0;
}

/* The dataflow: dispatch in order, start queue heads whose tokens are known, until done. */
static int replay(const npu_cfg_t *cfg, const npu_slice_cost_t *k, pt_state_t *s, uint64_t *end, char *why,
                  size_t wn)
{
    size_t qpos[QUEUES] = {0}, head[QUEUES] = {0}, nd = 0, *qidx[QUEUES];
    uint64_t qfree[QUEUES] = {0}, B = (uint64_t)npu_cfg_beat(cfg);
    int rc = 0;
    for (int q = 0; q < QUEUES; q++)
        qidx[q] = malloc(sizeof(size_t) * (s->n + 1));
    if (!qidx[0] || !qidx[1] || !qidx[2]) {
        snprintf(why, wn, "out of memory");
        rc = -1;
    }
    for (int progress = 1; rc == 0 && progress;) {
        progress = 0;
        while (nd < s->n) { /* the fetch: instruction i's bytes after one transfer's fixed cost */
            uint64_t bytes = ((nd + 1) * NPU_INSN_BYTES + B - 1) / B * B, fetched = k->xfer_fixed + bytes * k->byte;
            if (!dispatch(cfg, s, nd, qpos, qidx, fetched))
                break;
            qidx[s->q[nd]][qpos[s->q[nd]]++] = nd;
            nd++;
            progress = 1;
        }
        for (int q = 0; q < QUEUES; q++)
            while (head[q] < qpos[q] && try_start(s, qidx[q][head[q]], qfree)) {
                *end = max64(*end, s->start[qidx[q][head[q]]] + s->dur[qidx[q][head[q]]]);
                head[q]++;
                progress = 1;
            }
    }
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
    int ok = s.f && s.q && s.dur && s.disp && s.start;
    for (int c = 0; c < CHANNELS; c++)
        ok &= (s.push[c] = malloc(sizeof *s.push[c] * (n + 1))) != NULL;
    if (!ok)
        snprintf(why, wn, "out of memory");
    else if (prepare(cfg, k, prog, &s, why, wn) == 0)
        rc = replay(cfg, k, &s, &end, why, wn);
    /* the DRAM bus is shared: the program takes at least its transfers' and its fetch's bus time
     * after the first fetch's fixed cost */
    end = max64(end, k->xfer_fixed + s.bus + fetch_bus(cfg, k, n));
    *cycles = (end + (1u << NPU_SLICE_Q) - 1) >> NPU_SLICE_Q;
    free(s.f);
    free(s.q);
    free(s.dur);
    free(s.disp);
    free(s.start);
    for (int c = 0; c < CHANNELS; c++)
        free(s.push[c]);
    return rc;
}
