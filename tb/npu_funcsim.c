/*
 * npu_funcsim.c - a functional model of the FlexTrain NPU behind the tb/npu_sim.h API.
 *
 * It is the host's second model of docs/isa.md (an ISA reference), not a cycle model:
 *  - DRAM (2^DRAM_ADDR_BITS bytes), SPM (SPM_BANKS*SPM_BANK_WORDS words of 4S bytes), OBUF
 *    (2*OBUF_ROWS rows of 2S int32), two weight banks of 2S x 2S int16.
 *  - The fetcher reads one instruction per cycle from DRAM, checks its opcode and appends it to
 *    the LOAD, EXEC or STORE queue (QUEUE_DEPTH entries; it waits while the queue is full).
 *  - Each queue runs its head when the tokens it pops are available (all at once), then stays
 *    busy for a crude cost in cycles (DMA: latency + bytes/bandwidth + per-burst cost; LDW: its flits;
 *    WAVE: m + 4S; DRAIN: 2*rows), optionally stretched by a seeded random jitter. An
 *    instruction reads its sources when it starts and writes its results when it completes,
 *    then pushes its tokens: a program with a missing token sees stale or future data.
 *  - The EXEC queue is one sequential unit (the RTL's three EXEC units are hazard-checked to
 *    give the same result).
 *  - Errors follow docs/isa.md, checked when an instruction starts, in the order
 *    BAD_DESC, DRAM_ADDR, SPM_ADDR, OBUF_ADDR, with the RTL's conventions where the design
 *    leaves freedom: ERR_INFO = last DRAM byte / last SPM word touched (DRAM_ADDR / SPM_ADDR),
 *    end row obuf_addr + count (OBUF_ADDR; a WAVE or DRAIN may not cross an OBUF half either),
 *    dram_addr of a DMA / 0 of an EXEC instruction (BAD_DESC), the opcode (ILLEGAL_OPCODE), a
 *    bit per overflowing channel (TOKEN_OVERFLOW), QSTATE (DEADLOCK; ERR_PC = the EXEC queue's
 *    instruction if it holds one, else LOAD's, else STORE's), PROG_BASE (BAD_PROGRAM: base not
 *    aligned to max(16, 4S) bytes or program past the end of DRAM; PROG_LEN = 0 just finishes).
 *    A mode that cannot hold the k x n tile (HSW k > S, VSW n > S, ISW either), an LDW core mask
 *    outside ISW, a DRAIN with hi_rows but no split_rows or hi_rows > rows, a transposed LOAD
 *    with odd row_bytes and a transposed STORE whose row_bytes
 *    is not a multiple of 4 (int32 elements) are BAD_DESC, and so is an LDW or WAVE window start k_lo >= k; a FILL with rows or
 *    row_bytes zero is BAD_DESC with ERR_INFO 0 (it has no DRAM address).
 *    TOKEN_OVERFLOW's ERR_PC is the pushing instruction (the RTL may differ).
 *  - LOAD_SPM (LOAD queue) is a LOAD whose rows come from the SPM (npu_funcsim_exec.c
 *    exec_load_spm: its checks and ERR_INFO, in SPM words); no DRAM counters, spm_copy_words.
 *  - FILL (LOAD queue) zeroes the SPM words of a LOAD without DRAM; LDW k_lo: stationary rows
 *    < k_lo are zero and not read; WAVE k_lo: A lanes < k_lo of the k-block are not MACs.
 *  - Counters: the ones npu_prog_expect (sw/compile/gemm/gemm_emit.c) defines are exact; bursts never cross
 *    4 KiB; NoC/LBUF counts follow the RTL (an LDW sends all its rows, zero rows included, a
 *    full tile's rows r and S + r in one flit unless mono; an FW A row enters cores 0 and 2); stalls, SPM conflicts and exec waits are 0.
 * npu_sim_trace and npu_sim_burst_hook are not supported (return -1); npu_sim_dram_model (tb/) is
 * not provided.
 * This file holds the queues, tokens, fetch, time and the API; the instruction semantics are in
 * npu_funcsim_exec.c (decoded with sw/hw/isa.c), the shared state in npu_funcsim_int.h.
 */
#include <stdlib.h>
#include <string.h>

#include "npu_funcsim.h"
#include "npu_funcsim_int.h"

#ifdef NPU_FUNCSIM_USE_PARAMS
#include "npu_params.h"
static npu_cfg_t g_cfg = NPU_CFG_INIT;
#else
static npu_cfg_t g_cfg = {"small", 8, 4, 1024, 256, 8, 16, 8, 15, 24, 16, 4, 20000, 32, 30, 4, 0, 1, 0, 0, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0}};
#endif
static unsigned g_jitter;

void npu_funcsim_config(const npu_cfg_t *cfg) { g_cfg = *cfg; }
void npu_funcsim_jitter(unsigned pct) { g_jitter = pct; }
unsigned npu_sim_beat_bytes(void) { return (unsigned)npu_cfg_beat(&g_cfg); }

/* ---- small helpers -------------------------------------------------------------------- */

uint64_t fsim_rnd(npu_sim_t *s)
{
    s->rng ^= s->rng << 13;
    s->rng ^= s->rng >> 7;
    s->rng ^= s->rng << 17;
    return s->rng;
}

static unsigned state_of(const npu_sim_t *s) { return s->status & 3u; }
static int running(const npu_sim_t *s) { return state_of(s) == NPU_STATE_RUNNING; }
static int halted(const npu_sim_t *s)
{
    return state_of(s) == NPU_STATE_DONE || state_of(s) == NPU_STATE_ERROR;
}

static void fail(npu_sim_t *s, unsigned err, uint32_t pc, uint32_t info)
{
    s->status = NPU_STATE_ERROR | (err << 8);
    s->err_pc = pc;
    s->err_info = info;
}

/* ---- queues, tokens, fetch ------------------------------------------------------------ */

static unsigned queue_of(unsigned op)
{
    switch (op) {
#define X(n, v, q, t) case v: return (#q)[0] == 'L' ? QL : (#q)[0] == 'E' ? QE : QS;
        NPU_OPCODES(X)
#undef X
    default: return 3;
    }
}

/* Token channels an instruction of queue q pops / pushes (-1: none or ignored). */
static void tok_map(unsigned q, unsigned tok, int pop[2], int push[2])
{
    int pp = !!(tok & NPU_TOK_POP_PREV), pn = !!(tok & NPU_TOK_POP_NEXT);
    int up = !!(tok & NPU_TOK_PUSH_PREV), un = !!(tok & NPU_TOK_PUSH_NEXT);
    pop[0] = pop[1] = push[0] = push[1] = -1;
    switch (q) {
    case QL: /* prev does not exist */
        if (pn) pop[1] = T_E2L;
        if (un) push[1] = T_L2E;
        break;
    case QE:
        if (pp) pop[0] = T_L2E;
        if (pn) pop[1] = T_S2E;
        if (up) push[0] = T_E2L;
        if (un) push[1] = T_E2S;
        break;
    default: /* STORE: next does not exist */
        if (pp) pop[0] = T_E2S;
        if (up) push[0] = T_S2E;
        break;
    }
}

static uint32_t qstate(const npu_sim_t *s)
{
    uint32_t v = 0;
    for (int q = 0; q < 3; q++)
        v |= (uint32_t)(s->q[q].n > 15 ? 15 : s->q[q].n) << (4 * q);
    for (int t = 0; t < 4; t++)
        v |= (uint32_t)(s->tok[t] > 15 ? 15 : s->tok[t]) << (12 + 4 * t);
    v |= (uint32_t)(s->fetch_pc >= s->prog_len) << 28;
    for (int q = 0; q < 3; q++)
        v |= (uint32_t)(s->u[q].busy != 0) << (29 + q);
    return v;
}

static void complete(npu_sim_t *s, unsigned q)
{
    unit_t *u = &s->u[q];
    int pop[2], push[2];
    fsim_commit(s, u);
    u->busy = 0;
    s->cnt[NPU_CNT_insn_load + q]++;
    tok_map(q, u->tok, pop, push);
    for (int i = 0; i < 2; i++)
        if (push[i] >= 0 && ++s->tok[push[i]] > (unsigned)s->cfg.token_max) {
            fail(s, NPU_ERR_TOKEN_OVERFLOW, u->pc, 1u << push[i]);
            return;
        }
}

enum { TRY_IDLE, TRY_WAIT, TRY_STARTED, TRY_ERROR };

static int try_start(npu_sim_t *s, unsigned q, uint64_t now)
{
    queue_t *qu = &s->q[q];
    unit_t *u = &s->u[q];
    qentry_t *e;
    int pop[2], push[2];
    uint64_t cost = 1;
    uint32_t info = 0;
    unsigned err = 0;
    if (u->busy || !qu->n)
        return TRY_IDLE;
    e = &qu->e[qu->head];
    tok_map(q, npu_insn_tokens(&e->in), pop, push);
    for (int i = 0; i < 2; i++)
        if (pop[i] >= 0 && s->tok[pop[i]] == 0) {
            s->cnt[NPU_CNT_wait_tok_load + q]++;
            return TRY_WAIT;
        }
    for (int i = 0; i < 2; i++)
        if (pop[i] >= 0)
            s->tok[pop[i]]--;
    u->pc = e->pc;
    u->tok = npu_insn_tokens(&e->in);
    qu->head = (qu->head + 1) % qu->cap;
    qu->n--;
    err = fsim_exec(s, u, &e->in, &cost, &info);
    if (err) {
        u->nwr = u->npool = 0;
        fail(s, err, u->pc, info);
        return TRY_ERROR;
    }
    if (s->jitter)
        cost += fsim_rnd(s) % (cost * s->jitter / 100 + 1);
    u->busy = 1;
    u->done_at = now + (cost ? cost : 1);
    return TRY_STARTED;
}

static int fetch(npu_sim_t *s)
{
    uint64_t a, first, last;
    npu_insn_t in;
    unsigned q;
    queue_t *qu;
    if (s->fetch_pc >= s->prog_len)
        return TRY_IDLE;
    a = (uint64_t)s->prog_base + NPU_INSN_BYTES * (uint64_t)s->fetch_pc;
    for (int i = 0; i < 4; i++) /* four little-endian words */
        in.w[i] = rd32(s->dram + a + 4 * i);
    q = queue_of(npu_insn_op(&in));
    if (q > QS) {
        fail(s, NPU_ERR_ILLEGAL_OPCODE, s->fetch_pc, npu_insn_op(&in));
        return TRY_ERROR;
    }
    qu = &s->q[q];
    if (qu->n == qu->cap)
        return TRY_WAIT;
    /* count the program beats this instruction brings in (tag PROG) */
    first = a / s->DB;
    last = (a + NPU_INSN_BYTES - 1) / s->DB;
    if (first < s->next_fetch_beat)
        first = s->next_fetch_beat;
    for (uint64_t b = first; b <= last; b++) {
        if (b == s->fetch_burst_end) { /* a new fetch burst: <= MAX_BURST_BEATS, not across 4 KiB */
            uint64_t mb = s->cfg.max_burst_beats > 0 ? (uint64_t)s->cfg.max_burst_beats : 1;
            uint64_t left = s->prog_beats - (b - s->prog_base / s->DB);
            uint64_t len = left < mb ? left : mb, to4k = (4096 - (b * s->DB) % 4096) / s->DB;
            if (to4k && len > to4k)
                len = to4k;
            s->fetch_burst_end = b + len;
            s->cnt[NPU_CNT_dram_rd_bursts]++;
            s->rd_bursts++;
        }
        s->cnt[NPU_CNT_dram_rd_prog] += s->DB;
        s->rd_beats++;
    }
    if (last + 1 > s->next_fetch_beat)
        s->next_fetch_beat = last + 1;
    qu->e[(qu->head + qu->n) % qu->cap].pc = s->fetch_pc;
    qu->e[(qu->head + qu->n) % qu->cap].in = in;
    qu->n++;
    s->fetch_pc++;
    return TRY_STARTED;
}

/* busy_load / busy_store: cycles the LOAD / STORE unit has an instruction (QSTATE's busy bits). */
static void count_busy(npu_sim_t *s, uint64_t span)
{
    if (s->u[QL].busy)
        s->cnt[NPU_CNT_busy_load] += span;
    if (s->u[QS].busy)
        s->cnt[NPU_CNT_busy_store] += span;
}

/* Processes the cycle s->cycle and returns the number of cycles consumed (1, or a jump over
 * cycles in which nothing can change), at most limit (>= 1). */
static uint64_t tick(npu_sim_t *s, uint64_t limit)
{
    uint64_t now = s->cycle, next = UINT64_MAX, span;
    int progress = 0, waiting[3] = {0, 0, 0}, anybusy = 0, order[3] = {QL, QE, QS};
    for (unsigned q = 0; q < 3; q++)
        if (s->u[q].busy && s->u[q].done_at <= now) {
            complete(s, q);
            progress = 1;
            if (halted(s))
                goto one;
        }
    for (int i = 2; i > 0; i--) { /* random start order: the queues race differently per seed */
        int j = (int)(fsim_rnd(s) % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (int i = 0; i < 3; i++) {
        int r = try_start(s, (unsigned)order[i], now);
        if (r == TRY_ERROR)
            goto one;
        if (r == TRY_STARTED)
            progress = 1;
        if (r == TRY_WAIT)
            waiting[order[i]] = 1;
    }
    switch (fetch(s)) {
    case TRY_ERROR: goto one;
    case TRY_STARTED: progress = 1; break;
    default: break;
    }
    if (s->fetch_pc >= s->prog_len && !s->q[0].n && !s->q[1].n && !s->q[2].n && !s->u[0].busy &&
        !s->u[1].busy && !s->u[2].busy) {
        s->status = NPU_STATE_DONE;
        goto one;
    }
    if (progress) {
        s->last_progress = now;
        goto one;
    }
    /* Nothing happened: nothing will until the next completion (or the watchdog fires). */
    for (unsigned q = 0; q < 3; q++)
        if (s->u[q].busy) {
            anybusy = 1;
            if (s->u[q].done_at < next)
                next = s->u[q].done_at;
        }
    if (anybusy)
        s->last_progress = now;
    else if (s->watchdog && s->last_progress + s->watchdog < next)
        next = s->last_progress + s->watchdog;
    span = next == UINT64_MAX ? limit : (next > now ? next - now : 1);
    if (span > limit)
        span = limit;
    if (span < 1)
        span = 1;
    for (unsigned q = 0; q < 3; q++)
        if (waiting[q])
            s->cnt[NPU_CNT_wait_tok_load + q] += span - 1;
    count_busy(s, span);
    s->cnt[NPU_CNT_cycles] += span;
    s->cycle += span;
    if (!anybusy && s->watchdog && s->cycle >= s->last_progress + s->watchdog) {
        static const unsigned pref[3] = {QE, QL, QS};
        uint32_t pc = s->fetch_pc;
        for (unsigned i = 0; i < 3; i++)
            if (s->q[pref[i]].n) {
                pc = s->q[pref[i]].e[s->q[pref[i]].head].pc;
                break;
            }
        fail(s, NPU_ERR_DEADLOCK, pc, qstate(s));
    }
    return span;
one:
    count_busy(s, 1);
    s->cnt[NPU_CNT_cycles]++;
    s->cycle++;
    return 1;
}

static void advance(npu_sim_t *s, uint64_t n)
{
    while (n > 0) {
        if (!running(s)) {
            s->cycle += n;
            return;
        }
        n -= tick(s, n);
    }
}

static void start(npu_sim_t *s)
{
    if (running(s))
        return;
    for (int q = 0; q < 3; q++) {
        s->q[q].head = s->q[q].n = 0;
        s->u[q].busy = 0;
        s->u[q].nwr = s->u[q].npool = 0;
        s->u[q].pc = 0;
    }
    memset(s->tok, 0, sizeof s->tok);
    memset(s->bank_loaded, 0, sizeof s->bank_loaded); /* start resets the units (RTL loaded4) */
    s->v_alpha = s->v_beta = 0;
    s->v_len = s->v_shift = 0;
    s->fetch_pc = 0;
    s->next_fetch_beat = s->fetch_burst_end = s->prog_base / s->DB;
    s->prog_beats = cdiv(NPU_INSN_BYTES * (uint64_t)s->prog_len, s->DB);
    s->err_pc = s->err_info = 0;
    s->last_progress = s->cycle;
    s->status = NPU_STATE_RUNNING;
    if (s->prog_base % (s->DB > NPU_INSN_BYTES ? s->DB : NPU_INSN_BYTES) ||
        (uint64_t)s->prog_base + NPU_INSN_BYTES * (uint64_t)s->prog_len > s->dram_bytes)
        fail(s, NPU_ERR_BAD_PROGRAM, 0, s->prog_base);
}

/* ---- the npu_sim.h API ---------------------------------------------------------------- */

npu_sim_t *npu_sim_open(const npu_dram_timing_t *t)
{
    npu_sim_t *s = calloc(1, sizeof *s);
    unsigned F;
    if (!s)
        return NULL;
    s->cfg = g_cfg;
    s->S = (unsigned)g_cfg.s;
    s->F = F = 2u * s->S;
    s->B = 4u * s->S;
    s->DB = (unsigned)npu_cfg_beat(&g_cfg);
    if (t)
        s->t = *t;
    else {
        s->t.bytes_per_cycle = g_cfg.dram_bw;
        s->t.latency = (unsigned)g_cfg.dram_latency;
        s->t.burst_cost = (unsigned)g_cfg.dram_burst_cost;
    }
    s->jitter = g_jitter;
    s->rng = s->t.seed ? s->t.seed * 0x9E3779B97F4A7C15ull : 0x2545F4914F6CDD1Dull;
    if (!s->rng)
        s->rng = 1;
    s->dram_bytes = (size_t)1 << g_cfg.dram_addr_bits;
    s->spm_words = (size_t)g_cfg.spm_banks * (size_t)g_cfg.spm_bank_words;
    s->obuf_rows2 = 2u * (size_t)g_cfg.obuf_rows;
    s->dram = calloc(s->dram_bytes, 1);
    s->spm = calloc(s->spm_words, s->B);
    s->obuf = calloc(s->obuf_rows2 * F, 4);
    s->wb = calloc(2u * F * F, 2); /* 2 banks x 4 cores x S x S */
    for (int q = 0; q < 3; q++) {
        s->q[q].cap = g_cfg.queue_depth > 0 ? (unsigned)g_cfg.queue_depth : 1u;
        s->q[q].e = calloc(s->q[q].cap, sizeof *s->q[q].e);
        if (!s->q[q].e)
            s->dram = NULL;
    }
    if (!s->dram || !s->spm || !s->obuf || !s->wb) {
        npu_sim_close(s);
        return NULL;
    }
    return s;
}

void npu_sim_close(npu_sim_t *s)
{
    if (!s)
        return;
    free(s->dram);
    free(s->spm);
    free(s->obuf);
    free(s->wb);
    for (int q = 0; q < 3; q++) {
        free(s->q[q].e);
        free(s->u[q].wr);
        free(s->u[q].pool);
    }
    free(s);
}

uint8_t *npu_sim_dram(npu_sim_t *s, size_t *bytes)
{
    if (bytes)
        *bytes = s->dram_bytes;
    return s->dram;
}

void npu_sim_csr_write(npu_sim_t *s, uint32_t addr, uint32_t v)
{
    switch (addr) {
    case NPU_CSR_CTRL:
        if (v & 2u)
            memset(s->cnt, 0, sizeof s->cnt);
        if (v & 1u)
            start(s);
        break;
    case NPU_CSR_PROG_BASE: s->prog_base = v; break;
    case NPU_CSR_PROG_LEN: s->prog_len = v; break;
    case NPU_CSR_WATCHDOG: s->watchdog = v; break;
    default: break; /* read-only or unmapped */
    }
    advance(s, 1);
}

uint32_t npu_sim_csr_read(npu_sim_t *s, uint32_t addr)
{
    if (addr >= NPU_CSR_CNT_LO && addr < NPU_CSR_CNT_LO + NPU_NUM_COUNTERS)
        return (uint32_t)s->cnt[addr - NPU_CSR_CNT_LO];
    if (addr >= NPU_CSR_CNT_HI && addr < NPU_CSR_CNT_HI + NPU_NUM_COUNTERS)
        return (uint32_t)(s->cnt[addr - NPU_CSR_CNT_HI] >> 32);
    switch (addr) {
    case NPU_CSR_STATUS: return s->status;
    case NPU_CSR_ERR_PC: return s->err_pc;
    case NPU_CSR_ERR_INFO: return s->err_info;
    case NPU_CSR_PROG_BASE: return s->prog_base;
    case NPU_CSR_PROG_LEN: return s->prog_len;
    case NPU_CSR_WATCHDOG: return s->watchdog;
    case NPU_CSR_HW_S: return s->S;
    case NPU_CSR_HW_SPM: return (uint32_t)s->spm_words;
    case NPU_CSR_HW_OBUF: return (uint32_t)s->cfg.obuf_rows;
    case NPU_CSR_HW_DTYPE: return (uint32_t)s->cfg.dtype;
    case NPU_CSR_QSTATE: return qstate(s);
    case NPU_CSR_PC_L: return s->q[QL].n && !s->u[QL].busy ? s->q[QL].e[s->q[QL].head].pc : s->u[QL].pc;
    case NPU_CSR_PC_E: return s->q[QE].n && !s->u[QE].busy ? s->q[QE].e[s->q[QE].head].pc : s->u[QE].pc;
    case NPU_CSR_PC_S: return s->q[QS].n && !s->u[QS].busy ? s->q[QS].e[s->q[QS].head].pc : s->u[QS].pc;
    case NPU_CSR_FETCH_PC: return s->fetch_pc;
    default: return 0;
    }
}

/* The functional model has no RTL assertions and never executes $finish. */
int npu_sim_finished(npu_sim_t *s) { (void)s; return 0; }
const char *npu_sim_assert_msg(npu_sim_t *s, uint64_t *cycle)
{
    (void)s;
    (void)cycle;
    return NULL;
}

int npu_sim_run(npu_sim_t *s, uint64_t max_cycles)
{
    if (halted(s))
        return 1;
    advance(s, max_cycles);
    return halted(s) ? 1 : 0;
}

void npu_sim_step(npu_sim_t *s, uint64_t n) { advance(s, n); }

uint64_t npu_sim_cycle(npu_sim_t *s) { return s->cycle; }

int npu_sim_trace(npu_sim_t *s, const char *fst_path, uint64_t start_cycle, uint64_t end_cycle)
{
    (void)s;
    (void)fst_path;
    (void)start_cycle;
    (void)end_cycle;
    return -1;
}

void npu_sim_dram_stats(npu_sim_t *s, uint64_t *rd_beats, uint64_t *wr_beats, uint64_t *rd_bursts,
                        uint64_t *wr_bursts, uint64_t *stall_cycles)
{
    if (rd_beats) *rd_beats = s->rd_beats;
    if (wr_beats) *wr_beats = s->wr_beats;
    if (rd_bursts) *rd_bursts = s->rd_bursts;
    if (wr_bursts) *wr_bursts = s->wr_bursts;
    if (stall_cycles) *stall_cycles = s->stalls;
}

int npu_sim_burst_hook(npu_sim_t *s, dram_burst_fn fn, void *ctx)
{
    (void)s; /* no DRAM timing model here: the costs are per transfer */
    (void)fn;
    (void)ctx;
    return -1;
}
