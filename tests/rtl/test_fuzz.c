/*
 * test_fuzz.c - the NPU never hangs and never gives a silent wrong answer on fuzzed programs.
 *
 * fuzz/words        random 128-bit instruction words (70% with a valid opcode, all other bits
 *                   random, tokens included), in programs of FUZZ_PROG_WORDS words, each on a
 *                   fresh model with seeded random DRAM stalls. Every program must halt (DONE or
 *                   ERROR with a known error code and an ERR_PC inside the program) within a
 *                   cycle bound computed from its instructions (fuzz_bound); not halting is a hang
 *                   and fails, naming the seed, program and the instruction each queue is on.
 * fuzz/descriptors  random descriptors: valid opcodes LOAD/FILL/LOAD_SPM/STORE/LDW/WAVE/DRAIN/VSET/VEC (a
 *                   quarter of the DRAINs narrow, half of those with a shift) with random
 *                   fields (biased to edge values; LDW and WAVE with a window start k_lo in a
 *                   quarter of them, a quarter of the ISW WAVEs bcast), serialised by dependency tokens (SYNC_E glue
 *                   between LOAD and STORE) so the result does not depend on timing. Each program
 *                   also runs on the C functional ISA model (tb/npu_funcsim.c, linked
 *                   here under fnpu_sim_* names). Both must halt in the same state; when both
 *                   complete, the whole DRAM must be equal, and so must the counters the
 *                   program and its data decide (MACs per core, macs_zero, fill_words, the vector unit's,
 *                   idle_pe_shape, busy per mode); when both fail, the error code and
 *                   ERR_PC must be equal (NPU_FUZZ_STRICT=1).
 *
 * Knobs (environment): NPU_FUZZ_WORDS (default 2048), NPU_FUZZ_DESCS (default 256): how many
 * words / descriptors this run feeds; NPU_SEED: base seed (default 1); NPU_FUZZ_ONLY=k: run
 * program k only (replay); NPU_FUZZ_PART=i/N: only programs k with k % N == i (parallel runs).
 * A failure prints the program's disassembly and the one command that replays it.
 *
 * Fields that would make one instruction move more than ~200k cycles of data (16-bit row counts
 * times 16-bit row lengths) are halved until it fits: the test is about bounded termination,
 * and a legitimately huge transfer is not a hang. The number of halvings is reported.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "rtl_common.h"

typedef struct sim_ops {
    const char *name;
    npu_sim_t *(*open)(const npu_dram_timing_t *t);
    void (*close)(npu_sim_t *s);
    uint8_t *(*dram)(npu_sim_t *s, size_t *bytes);
    void (*wr)(npu_sim_t *s, uint32_t addr, uint32_t v);
    uint32_t (*rd)(npu_sim_t *s, uint32_t addr);
    int (*run)(npu_sim_t *s, uint64_t max_cycles);
    uint64_t (*cycle)(npu_sim_t *s);
} sim_ops_t;

static const sim_ops_t RTL = { "RTL", npu_sim_open, npu_sim_close, npu_sim_dram,
                               npu_sim_csr_write, npu_sim_csr_read, npu_sim_run, npu_sim_cycle };
static const sim_ops_t MODEL = { "model", fnpu_sim_open, fnpu_sim_close, fnpu_sim_dram,
                                 fnpu_sim_csr_write, fnpu_sim_csr_read, fnpu_sim_run,
                                 fnpu_sim_cycle };

#define FUZZ_PROG_WORDS 32u
#define DESC_PER_PROG 8u
#define DATA_BASE 0x10000u  /* DMA addresses: programs live below, data in [DATA_BASE, +WIN) */
#define DATA_WIN 0x40000u
#define FUZZ_WATCHDOG 4000u /* WATCHDOG CSR for fuzz runs (a deadlock ends sooner) */
#define INSN_CAP 200000u    /* cycles one instruction may plausibly take (see the header) */

static uint64_t env_u64(const char *name, uint64_t dflt)
{
    const char *s = getenv(name);
    return s && *s ? strtoull(s, NULL, 0) : dflt;
}

static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return (x ^ (x >> 31)) | 1u;
}

/* Which programs this run executes: [0, nprog), NPU_FUZZ_ONLY, NPU_FUZZ_PART=i/N. */
typedef struct fuzz_sel {
    uint64_t only;
    int has_only;
    unsigned part, parts;
} fuzz_sel_t;

static fuzz_sel_t fuzz_sel(void)
{
    fuzz_sel_t f = { 0, 0, 0, 1 };
    const char *o = getenv("NPU_FUZZ_ONLY"), *p = getenv("NPU_FUZZ_PART");
    if (o && *o) {
        f.only = strtoull(o, NULL, 0);
        f.has_only = 1;
    }
    if (p && *p) {
        unsigned i, n;
        cr_assert(sscanf(p, "%u/%u", &i, &n) == 2 && n > 0 && i < n,
                  "NPU_FUZZ_PART='%s': expected i/N with 0 <= i < N", p);
        f.part = i;
        f.parts = n;
    }
    return f;
}

static int selected(const fuzz_sel_t *f, uint64_t k)
{
    return f->has_only ? k == f->only : k % f->parts == f->part;
}

/* ---- cycle bound ----------------------------------------------------------------------- */

static uint64_t cdiv64(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* Sets one field (raw, by its NPU_ISA_FIELDS id: the fuzz builds malformed words too). */
static void put(npu_insn_t *in, unsigned id, uint32_t v)
{
    cr_assert_eq(npu_insn_put(in, id, v), 0, "fuzz generator: %s too wide", npu_isa_fields[id].name);
}

static const unsigned tok_flag[4] = {NPU_TOK_POP_PREV, NPU_TOK_POP_NEXT, NPU_TOK_PUSH_PREV,
                                     NPU_TOK_PUSH_NEXT};

/* A VSET sets the vector unit's len for the VECs after it (in program order: both are EXEC
 * instructions); returns the len in force after in. */
static unsigned track_vlen(const npu_insn_t *in, unsigned vlen)
{
    return npu_insn_op(in) == NPU_OP_VSET ? npu_insn_get(in, NPU_FLD_VSET_len) : vlen;
}

/* Generous cycles for one instruction as its fields say (valid or not), as if nothing overlapped
 * and every burst paid the full latency; vlen: the len a VEC runs with. */
static uint64_t insn_cost(const npu_cfg_t *c, const npu_insn_t *in, unsigned vlen)
{
    uint64_t B = 4u * (uint64_t)c->s, F = 2u * (uint64_t)c->s;
    unsigned op = npu_insn_op(in);
    /* raw fields (a STORE's transpose bit too): the words may be malformed */
    uint64_t rows = npu_insn_get(in, NPU_FLD_LOAD_rows);
    uint64_t rb = npu_insn_get(in, NPU_FLD_LOAD_row_bytes);
    uint64_t per_beat = cdiv64(B, (uint64_t)(c->dram_bw > 0 ? c->dram_bw : 1)) + 1;
    uint64_t per_burst = (uint64_t)c->dram_latency + (uint64_t)c->dram_burst_cost + 4;
    switch (op) {
    case NPU_OP_LOAD:
    case NPU_OP_STORE: {
        uint64_t bpr = cdiv64(rb ? rb : 1, B), beats = rows * bpr;
        uint64_t bursts = npu_insn_get(in, NPU_FLD_LOAD_transpose)
                              ? beats : rows * (cdiv64(bpr, (uint64_t)c->max_burst_beats) + 1);
        return 64 + beats * per_beat + bursts * per_burst;
    }
    case NPU_OP_FILL: /* one SPM word per cycle, no DRAM */
        return 64 + 2 * rows * cdiv64(rb ? rb : 1, B);
    case NPU_OP_LOAD_SPM: /* one source word per cycle, a word written per cycle (transposed) */
        return 64 + 4 * rows * (cdiv64(rb ? rb : 1, B) + 1) + 2 * (rb / 2) * cdiv64(rows, F);
    case NPU_OP_LDW: return 32 * F + 200;
    case NPU_OP_WAVE: return 4 * (uint64_t)npu_insn_get(in, NPU_FLD_WAVE_m) + 32 * F + 200;
    case NPU_OP_DRAIN: return 4 * (uint64_t)npu_insn_get(in, NPU_FLD_DRAIN_rows) + 8 * F + 200;
    case NPU_OP_VEC: /* per row and chunk: reads, 3, writes (32-bit words at most) */
        return 64 + (uint64_t)npu_insn_get(in, NPU_FLD_VEC_rows) *
                        (4 * cdiv64(vlen, F) + 4 * cdiv64(4 * (uint64_t)vlen, B) + 8);
    default: return 16;
    }
}

/* Halves the size fields of an instruction until insn_cost <= INSN_CAP; returns the halvings. */
static unsigned shrink(const npu_cfg_t *c, npu_insn_t *in, unsigned *vlen)
{
    unsigned n = 0;
    *vlen = track_vlen(in, *vlen);
    while (insn_cost(c, in, *vlen) > INSN_CAP) {
        if (npu_insn_op(in) == NPU_OP_VEC) { /* VEC's rows are at its own bits */
            put(in, NPU_FLD_VEC_rows, npu_insn_get(in, NPU_FLD_VEC_rows) >> 1);
            n++;
            continue;
        }
        /* LOAD/STORE/FILL rows, WAVE m and DRAIN rows share these bits (test_isa checks them) */
        uint32_t rows = npu_insn_get(in, NPU_FLD_LOAD_rows);
        uint32_t rb = npu_insn_get(in, NPU_FLD_LOAD_row_bytes);
        unsigned op = npu_insn_op(in);
        if ((op == NPU_OP_LOAD || op == NPU_OP_STORE || op == NPU_OP_FILL || op == NPU_OP_LOAD_SPM) &&
            rb > rows)
            put(in, NPU_FLD_LOAD_row_bytes, rb >> 1);
        else
            put(in, NPU_FLD_LOAD_rows, rows >> 1);
        n++;
    }
    return n;
}

/* Cycles within which the program must halt: every instruction in sequence, x4, plus the
 * fetch, three watchdog periods and DRAM stalls. */
static uint64_t fuzz_bound(const npu_cfg_t *c, const npu_insn_t *p, size_t n, unsigned stall_pct)
{
    uint64_t sum = 200 + 16 * (uint64_t)n;
    unsigned vlen = 0;
    for (size_t i = 0; i < n; i++) {
        vlen = track_vlen(&p[i], vlen);
        sum += insn_cost(c, &p[i], vlen);
    }
    return 4 * sum * (100 + stall_pct) / 100 + 3ull * FUZZ_WATCHDOG + 20000;
}

/* ---- running one program ---------------------------------------------------------------- */

typedef struct outcome {
    int rc;              /* npu_sim_run: 1 halted, 0 not within the bound, -1 $finish */
    uint32_t status, err, err_pc, err_info, qstate, pc_l, pc_e, pc_s, fetch_pc;
    uint64_t cycles;
    uint64_t cnt[NPU_NUM_COUNTERS];
} outcome_t;

/* Counters both models must agree on when a program completes (exact by program and data). */
static const int exact_cnt[] = { NPU_CNT_macs_core0, NPU_CNT_macs_core1, NPU_CNT_macs_core2,
                                 NPU_CNT_macs_core3, NPU_CNT_macs_zero, NPU_CNT_fill_words,
                                 NPU_CNT_idle_pe_shape, NPU_CNT_busy_fw, NPU_CNT_busy_vsw,
                                 NPU_CNT_busy_hsw, NPU_CNT_busy_isw, NPU_CNT_spm_wr_words,
                                 NPU_CNT_vec_busy, NPU_CNT_vec_rd_words, NPU_CNT_vec_wr_words,
                                 NPU_CNT_spm_copy_words };

static void run_prog(const sim_ops_t *o, npu_sim_t *s, const npu_insn_t *p, size_t n,
                     uint64_t bound, outcome_t *r)
{
    size_t bytes;
    uint8_t *dram = o->dram(s, &bytes);
    npu_write_prog(dram, 0, p, n);
    o->wr(s, NPU_CSR_PROG_BASE, 0);
    o->wr(s, NPU_CSR_PROG_LEN, (uint32_t)n);
    o->wr(s, NPU_CSR_WATCHDOG, FUZZ_WATCHDOG);
    uint64_t c0 = o->cycle(s);
    o->wr(s, NPU_CSR_CTRL, 1u);
    r->rc = o->run(s, bound);
    r->cycles = o->cycle(s) - c0;
    r->status = o->rd(s, NPU_CSR_STATUS);
    r->err = (r->status >> 8) & 0xFFu;
    r->err_pc = o->rd(s, NPU_CSR_ERR_PC);
    r->err_info = o->rd(s, NPU_CSR_ERR_INFO);
    r->qstate = o->rd(s, NPU_CSR_QSTATE);
    r->pc_l = o->rd(s, NPU_CSR_PC_L);
    r->pc_e = o->rd(s, NPU_CSR_PC_E);
    r->pc_s = o->rd(s, NPU_CSR_PC_S);
    r->fetch_pc = o->rd(s, NPU_CSR_FETCH_PC);
    for (int i = 0; i < NPU_NUM_COUNTERS; i++)
        r->cnt[i] = (uint64_t)o->rd(s, NPU_CSR_CNT_LO + (uint32_t)i) |
                    (uint64_t)o->rd(s, NPU_CSR_CNT_HI + (uint32_t)i) << 32;
}

static void print_prog(const npu_insn_t *p, size_t n)
{
    char line[256];
    for (size_t i = 0; i < n; i++) {
        npu_disasm(&p[i], line, sizeof line);
        fprintf(stderr, "  [%2zu] %08x_%08x_%08x_%08x  %s\n", i, (unsigned)p[i].w[3],
                (unsigned)p[i].w[2], (unsigned)p[i].w[1], (unsigned)p[i].w[0], line);
    }
}

static const char *ename(unsigned e)
{
    const char *n = npu_error_name(e);
    return n ? n : "?";
}

/* Outcome histogram printed at the end of a run. */
typedef struct stats {
    uint64_t progs, words, done, err[256], cycles, shrinks, err_agree, both_done, mz, fill, vec, copy;
    double wall;
} stats_t;

static void print_stats(const char *what, const stats_t *st, uint64_t seed)
{
    char buf[1024];
    int k = snprintf(buf, sizeof buf, "%s: seed %llu, %llu programs, %llu %s, %.1f s, %llu RTL "
                     "cycles; DONE %llu", what, (unsigned long long)seed,
                     (unsigned long long)st->progs, (unsigned long long)st->words,
                     strcmp(what, "fuzz/words") ? "descriptors" : "words", st->wall,
                     (unsigned long long)st->cycles, (unsigned long long)st->done);
    for (unsigned e = 0; e < 256 && k > 0 && (size_t)k < sizeof buf; e++)
        if (st->err[e])
            k += snprintf(buf + k, sizeof buf - (size_t)k, ", %s %llu", ename(e),
                          (unsigned long long)st->err[e]);
    if (k > 0 && (size_t)k < sizeof buf)
        snprintf(buf + k, sizeof buf - (size_t)k, "; 0 hangs; %llu size halvings",
                 (unsigned long long)st->shrinks);
    fprintf(stderr, "%s\n", buf);
    cr_log_info("%s", buf);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static npu_sim_t *open_with(const sim_ops_t *o, const npu_cfg_t *cfg, unsigned stall, uint64_t seed)
{
    npu_dram_timing_t t = { (double)cfg->dram_bw, (unsigned)cfg->dram_latency,
                            (unsigned)cfg->dram_burst_cost, stall, seed };
    npu_sim_t *s = o->open(&t);
    cr_assert_not_null(s, "%s: npu_sim_open failed", o->name);
    return s;
}

/* A halted run's checks shared by both fuzzers; returns 0 or fails the test. */
static void check_halt(const npu_cfg_t *cfg, const char *test, uint64_t seed, uint64_t k,
                       const npu_insn_t *p, size_t n, uint64_t bound, const outcome_t *r,
                       npu_sim_t *s)
{
    unsigned state = r->status & 3u;
    const char *why = NULL;
    char msg[600];
    if (r->rc < 0) {
        const char *m = npu_sim_assert_msg(s, NULL);
        snprintf(msg, sizeof msg, "RTL assertion: %s", m ? m : "$finish");
        why = msg;
    } else if (r->rc == 0) {
        char q[200];
        npu_qstate_str(r->qstate, q, sizeof q);
        snprintf(msg, sizeof msg, "HANG: no halt within %llu cycles; STATUS 0x%x, PC_L %u PC_E %u "
                 "PC_S %u FETCH_PC %u, %s", (unsigned long long)bound, (unsigned)r->status,
                 (unsigned)r->pc_l, (unsigned)r->pc_e, (unsigned)r->pc_s, (unsigned)r->fetch_pc, q);
        why = msg;
    } else if (state != NPU_STATE_DONE && state != NPU_STATE_ERROR) {
        snprintf(msg, sizeof msg, "halted in state %u (STATUS 0x%x)", state, (unsigned)r->status);
        why = msg;
    } else if (state == NPU_STATE_ERROR && !npu_error_name(r->err)) {
        snprintf(msg, sizeof msg, "unknown error code %u", (unsigned)r->err);
        why = msg;
    } else if (state == NPU_STATE_ERROR && r->err != NPU_ERR_BAD_PROGRAM && r->err_pc >= n) {
        snprintf(msg, sizeof msg, "error %s with ERR_PC %u outside the %zu-word program",
                 ename(r->err), (unsigned)r->err_pc, n);
        why = msg;
    }
    if (!why)
        return;
    fprintf(stderr, "%s: program %llu (seed %llu), config %s:\n", test, (unsigned long long)k,
            (unsigned long long)seed, cfg->name);
    print_prog(p, n);
    cr_assert_fail("%s: program %llu of seed %llu: %s\n  replay: NPU_SEED=%llu NPU_FUZZ_ONLY=%llu "
                   "build/%s/test_rtl --filter '%s'", test, (unsigned long long)k,
                   (unsigned long long)seed, why, (unsigned long long)seed, (unsigned long long)k,
                   cfg->name, test);
}

/* ---- fuzz/descriptors ------------------------------------------------------------------- */

/* Descriptor generator: first a "clean" descriptor (fields in range for this configuration and
 * the weight banks loaded so far), then each field is replaced by an edge value (0, the field's
 * maximum, one past a limit, anything) with probability `edge` % (per program: 0, 3 or 15). */
typedef struct gen {
    uint64_t x;
    unsigned edge;
    int bank_mode[2];    /* -1: not loaded in this program */
    unsigned loaded[2];  /* cores whose tile of the bank an LDW loaded (0xF: all four) */
    unsigned vlen;       /* the len of the last VSET generated (VEC places its operands for it) */
} gen_t;

static uint32_t rnd_in(gen_t *g, uint32_t lo, uint32_t hi) /* uniform in [lo, hi] */
{
    return hi <= lo ? lo : lo + (uint32_t)(rtl_rand(&g->x) % ((uint64_t)hi - lo + 1));
}

static uint32_t mutate(gen_t *g, uint32_t v, unsigned bits, uint32_t limit)
{
    uint32_t max = bits >= 32 ? 0xFFFFFFFFu : (1u << bits) - 1u;
    if (rtl_rand(&g->x) % 100 >= g->edge)
        return v;
    switch (rtl_rand(&g->x) % 5) {
    case 0: return 0;
    case 1: return max;
    case 2: return (uint32_t)(rtl_rand(&g->x) >> 13) & max;
    case 3: return limit < max ? limit : max; /* one past the limit */
    default: return (v + 1) & max;
    }
}

/* A base address for `span` units inside [0, limit) (0 if it does not fit). */
static uint32_t place(gen_t *g, uint64_t span, uint64_t limit)
{
    return span >= limit ? 0 : (uint32_t)(rtl_rand(&g->x) % (limit - span + 1));
}

/* VSET: len 1..4*2S (0 now and then: the VECs after it are BAD_DESC), any scalars and shift;
 * VEC: an op (unknown ones now and then), 1..12 rows, a width, each operand inside the SPM for
 * the last len with a stride of a row and a few words, or 0 (broadcast). Operands may overlap:
 * the unit works chunk by chunk, which the model follows. */
static void gen_vec(const npu_cfg_t *c, gen_t *g, unsigned op, npu_insn_t *in)
{
    uint32_t F = 2u * (uint32_t)c->s, B = 4u * (uint32_t)c->s, W = (uint32_t)(c->spm_banks * c->spm_bank_words);
    static const unsigned addr_f[3] = {NPU_FLD_VEC_a_addr, NPU_FLD_VEC_b_addr, NPU_FLD_VEC_d_addr};
    static const unsigned stride_f[3] = {NPU_FLD_VEC_a_stride, NPU_FLD_VEC_b_stride, NPU_FLD_VEC_d_stride};
    if (op == NPU_OP_VEC && !g->vlen)
        op = NPU_OP_VSET; /* no len yet: a VEC would only be BAD_DESC */
    put(in, NPU_FLD_INSN_op, op);
    if (op == NPU_OP_VSET) {
        g->vlen = mutate(g, rnd_in(g, 1, 4 * F), 16, 0);
        put(in, NPU_FLD_VSET_alpha, (uint32_t)rtl_rand(&g->x));
        put(in, NPU_FLD_VSET_beta, (uint32_t)(rtl_rand(&g->x) >> 7));
        put(in, NPU_FLD_VSET_len, g->vlen);
        put(in, NPU_FLD_VSET_shift, rnd_in(g, 0, 31));
        return;
    }
    uint32_t vop = mutate(g, rnd_in(g, 0, NPU_NUM_VOPS - 1), 4, NPU_NUM_VOPS);
    uint32_t rows = mutate(g, rnd_in(g, 1, 12), 12, 4095);
    uint64_t words = (4 * (uint64_t)g->vlen + B - 1) / B; /* a 32-bit row: any operand fits */
    put(in, NPU_FLD_VEC_vop, vop);
    put(in, NPU_FLD_VEC_wide, mutate(g, !NPU_VOP_HAS_WIDE(vop) ? 0 : rnd_in(g, 0, 1), 1, 1));
    put(in, NPU_FLD_VEC_rows, rows);
    for (int k = 0; k < 3; k++) {
        uint32_t st = rtl_rand(&g->x) % 4 ? (uint32_t)words + rnd_in(g, 0, 2) : 0;
        uint32_t a = place(g, (uint64_t)(rows ? rows - 1 : 0) * st + words, W);
        put(in, addr_f[k], mutate(g, a, 16, W - 1));
        put(in, stride_f[k], mutate(g, st, 16, st + 1));
    }
}

static void gen_desc(const npu_cfg_t *c, gen_t *g, unsigned op, npu_insn_t *in)
{
    unsigned S = (unsigned)c->s, F = 2 * S, B = 4 * S, half = (unsigned)c->obuf_rows;
    uint32_t spm_words = (uint32_t)(c->spm_banks * c->spm_bank_words);
    memset(in, 0, sizeof *in);
    if (op == NPU_OP_VEC || op == NPU_OP_VSET) {
        gen_vec(c, g, op, in);
        return;
    }
    switch (op) {
    case NPU_OP_LOAD:
    case NPU_OP_STORE: {
        uint32_t tag = rnd_in(g, 0, 7), tr = op == NPU_OP_LOAD && rtl_rand(&g->x) % 4 == 0;
        uint32_t rows = rnd_in(g, 1, 3 * F), rb = 2 * rnd_in(g, 1, 2 * B), ss, ds, spm, dram;
        if (tr || rtl_rand(&g->x) % 2)
            rb = tr ? rnd_in(g, 1, 2 * F) * 2 : (rb + B - 1) / B * B;
        uint32_t beats = (rb + B - 1) / B;
        ss = rnd_in(g, 0, 4) + (tr ? (rows + F - 1) / F : beats) - (rtl_rand(&g->x) % 3 == 0);
        /* DRAM pitch (bytes): dense rows, beat-padded rows, or a few elements more */
        switch (rtl_rand(&g->x) % 3) {
        case 0: ds = rb; break;
        case 1: ds = (beats + rnd_in(g, 0, 3) - (rtl_rand(&g->x) % 3 == 0)) * B; break;
        default: ds = rb + 2 * rnd_in(g, 0, B); break;
        }
        /* a stride shift now and then: the pitch is ds << sh (DRAM rows up to 8x apart) */
        uint32_t sh = rtl_rand(&g->x) % 4 == 0 ? rnd_in(g, 1, 3) : 0;
        uint64_t sspan = tr ? (uint64_t)(rb / 2 - 1) * ss + (rows + F - 1) / F
                            : (uint64_t)(rows - 1) * ss + beats;
        spm = place(g, sspan, spm_words);
        dram = DATA_BASE + place(g, (uint64_t)(rows - 1) * (ds << sh) + rb, DATA_WIN);
        dram &= rtl_rand(&g->x) % 2 ? ~(uint32_t)(B - 1) : ~1u;   /* beat- or element-aligned */
        tag = mutate(g, tag, 3, 8);
        tr = mutate(g, tr, 1, 1);
        rows = mutate(g, rows, 14, rows + 1);
        rb = mutate(g, rb, 16, rb + 1);
        dram = mutate(g, dram, 32, (uint32_t)(((uint64_t)1 << c->dram_addr_bits) - B));
        if (dram < DATA_BASE)
            dram += DATA_BASE; /* never over the program (the fetcher's timing would matter) */
        spm = mutate(g, spm, 16, spm_words - 1);
        ss = mutate(g, ss, 16, ss + 1);
        ds = mutate(g, ds, 16, ds + 1);
        /* the LOAD layout (STORE's too: its transpose bit, int32 elements) */
        put(in, NPU_FLD_INSN_op, op);
        put(in, NPU_FLD_LOAD_tag, tag);
        put(in, NPU_FLD_LOAD_transpose, tr);
        put(in, NPU_FLD_LOAD_rows, rows);
        put(in, NPU_FLD_LOAD_dram_addr, dram);
        put(in, NPU_FLD_LOAD_spm_addr, spm);
        put(in, NPU_FLD_LOAD_spm_stride, ss);
        put(in, NPU_FLD_LOAD_row_bytes, rb);
        put(in, NPU_FLD_LOAD_dram_stride, ds);
        put(in, NPU_FLD_LOAD_stride_shift, sh);
        break;
    }
    case NPU_OP_FILL: { /* the LOAD format without DRAM: tag, transpose, DRAM fields ignored */
        uint32_t rows = rnd_in(g, 1, 3 * F), rb = rnd_in(g, 1, 4 * B);
        uint32_t beats = (rb + B - 1) / B, ss = rnd_in(g, 0, 4) + beats - (rtl_rand(&g->x) % 3 == 0);
        uint32_t spm = place(g, (uint64_t)(rows - 1) * ss + beats, spm_words);
        rows = mutate(g, rows, 14, rows + 1);
        rb = mutate(g, rb, 16, rb + 1);
        spm = mutate(g, spm, 16, spm_words - 1);
        ss = mutate(g, ss, 16, ss + 1);
        put(in, NPU_FLD_INSN_op, op);
        put(in, NPU_FLD_FILL_rows, rows);
        put(in, NPU_FLD_FILL_spm_addr, spm);
        put(in, NPU_FLD_FILL_spm_stride, ss);
        put(in, NPU_FLD_FILL_row_bytes, rb);
        if (rtl_rand(&g->x) % 4 == 0) { /* junk in the ignored LOAD fields */
            uint32_t junk = (uint32_t)(rtl_rand(&g->x) >> 12);
            put(in, NPU_FLD_LOAD_tag, junk & 7u);
            put(in, NPU_FLD_LOAD_transpose, junk >> 3 & 1u);
            put(in, NPU_FLD_LOAD_dram_addr, (uint32_t)(rtl_rand(&g->x) >> 7));
            put(in, NPU_FLD_LOAD_dram_stride, (uint32_t)(rtl_rand(&g->x) >> 21) & 0xFFFFu);
            put(in, NPU_FLD_LOAD_stride_shift, junk >> 4 & 3u);
        }
        break;
    }
    case NPU_OP_LOAD_SPM: { /* the LOAD layout with the source in the SPM (w1) */
        uint32_t tr = rnd_in(g, 0, 1), rows = rnd_in(g, 1, 3 * F), rb = 2 * rnd_in(g, 1, 2 * B);
        if (tr)
            rb = rnd_in(g, 1, 2 * F) * 2;
        uint32_t beats = (rb + B - 1) / B, sp = beats + rnd_in(g, 0, 3) - (rtl_rand(&g->x) % 3 == 0);
        uint32_t ss = rnd_in(g, 0, 4) + (tr ? (rows + F - 1) / F : beats) - (rtl_rand(&g->x) % 3 == 0);
        uint64_t dspan = tr ? (uint64_t)(rb / 2 - 1) * ss + (rows + F - 1) / F
                            : (uint64_t)(rows - 1) * ss + beats;
        uint32_t src = place(g, (uint64_t)(rows - 1) * sp + beats, spm_words);
        uint32_t spm = place(g, dspan, spm_words); /* overlapping the source now and then: BAD_DESC */
        rows = mutate(g, rows, 14, rows + 1);
        rb = mutate(g, rb, 16, rb + 1);
        src = mutate(g, src, 16, spm_words - 1);
        sp = mutate(g, sp, 16, sp + 1);
        spm = mutate(g, spm, 16, spm_words - 1);
        ss = mutate(g, ss, 16, ss + 1);
        put(in, NPU_FLD_INSN_op, op);
        put(in, NPU_FLD_LOAD_SPM_tag, rnd_in(g, 0, 7));
        put(in, NPU_FLD_LOAD_SPM_transpose, tr);
        put(in, NPU_FLD_LOAD_SPM_rows, rows);
        put(in, NPU_FLD_LOAD_SPM_src_addr, src);
        put(in, NPU_FLD_LOAD_SPM_src_stride, sp);
        put(in, NPU_FLD_LOAD_SPM_spm_addr, spm);
        put(in, NPU_FLD_LOAD_SPM_spm_stride, ss);
        put(in, NPU_FLD_LOAD_SPM_row_bytes, rb);
        if (rtl_rand(&g->x) % 16 == 0) /* a DRAM pitch bit: BAD_DESC */
            put(in, NPU_FLD_LOAD_dram_stride, rnd_in(g, 1, 0xFFFF));
        break;
    }
    case NPU_OP_LDW: {
        uint32_t mode = rnd_in(g, 0, 3), bank = rnd_in(g, 0, 1), cmask = 0;
        uint32_t kmax = mode == NPU_MODE_HSW || mode == NPU_MODE_ISW ? S : F;
        uint32_t nmax = mode == NPU_MODE_VSW || mode == NPU_MODE_ISW ? S : F;
        uint32_t k = rnd_in(g, 1, kmax), n = rnd_in(g, 1, nmax), ss = rnd_in(g, 1, 4);
        uint32_t klo = rtl_rand(&g->x) % 4 == 0 ? rnd_in(g, 0, k - 1) : 0;
        if (mode == NPU_MODE_ISW && rtl_rand(&g->x) % 2)
            cmask = rnd_in(g, 1, 15);
        uint32_t spm = place(g, (uint64_t)(k - klo - 1) * ss + 1, spm_words);
        mode = mutate(g, mode, 2, 3);
        k = mutate(g, k, 8, kmax + 1);
        n = mutate(g, n, 8, nmax + 1);
        cmask = mutate(g, cmask, 4, 1);
        spm = mutate(g, spm, 16, spm_words - 1);
        ss = mutate(g, ss, 16, ss + 1);
        klo = mutate(g, klo, 6, k); /* k_lo = k: BAD_DESC */
        g->bank_mode[bank] = cmask ? NPU_MODE_ISW : (int)mode;
        g->loaded[bank] = cmask ? g->loaded[bank] | cmask : 0xFu;
        put(in, NPU_FLD_INSN_op, op);
        put(in, NPU_FLD_LDW_wbank, bank);
        put(in, NPU_FLD_LDW_mode, mode);
        put(in, NPU_FLD_WAVE_acc, rnd_in(g, 0, 1)); /* junk: LDW ignores WAVE's acc bit */
        put(in, NPU_FLD_LDW_spm_addr, spm);
        put(in, NPU_FLD_LDW_spm_stride, ss);
        put(in, NPU_FLD_LDW_k, k);
        put(in, NPU_FLD_LDW_n, n);
        put(in, NPU_FLD_LDW_core_mask, cmask);
        put(in, NPU_FLD_LDW_k_lo, klo);
        put(in, NPU_FLD_LDW_mono, rnd_in(g, 0, 1));
        break;
    }
    case NPU_OP_WAVE: {
        uint32_t bank = rnd_in(g, 0, 1);
        if (g->loaded[bank] != 0xFu)
            bank ^= 1u;
        /* Known divergence, not generated: a WAVE on a bank whose four core tiles were not all
         * loaded since reset (no LDW, or ISW LDWs with core masks covering only some cores)
         * waits for its weights in the RTL (watchdog DEADLOCK) but runs on zeros in the model. */
        if (g->loaded[bank] != 0xFu) {
            gen_desc(c, g, NPU_OP_LDW, in);
            return;
        }
        uint32_t mode = (uint32_t)g->bank_mode[bank];
        uint32_t kmax = mode == NPU_MODE_HSW || mode == NPU_MODE_ISW ? S : F;
        uint32_t nmax = mode == NPU_MODE_VSW || mode == NPU_MODE_ISW ? S : F;
        uint32_t k = rnd_in(g, 1, kmax), n = rnd_in(g, 1, nmax), m = rnd_in(g, 1, 3 * F);
        uint32_t ss = rnd_in(g, 0, 3), acc = rnd_in(g, 0, 1);
        uint32_t klo = rtl_rand(&g->x) % 4 == 0 ? rnd_in(g, 0, k - 1) : 0;
        uint32_t ahi = (mode == NPU_MODE_HSW || mode == NPU_MODE_ISW) && rtl_rand(&g->x) % 8 == 0;
        /* bcast (every row to the four cores): ISW banks, one wave in four; m < 2^15 */
        uint32_t bc = mode == NPU_MODE_ISW && rtl_rand(&g->x) % 4 == 0;
        npu_wave_sets_t ws;
        npu_fields_t wf;
        memset(&wf, 0, sizeof wf);
        wf.mode = mode;
        wf.m = m;
        wf.bcast = bc;
        npu_wave_sets_f(&wf, &ws);
        uint32_t obuf = rnd_in(g, 0, 1) * half + place(g, ws.obuf_rows, half);
        uint32_t spm = place(g, (uint64_t)(m - 1) * ss + 1, spm_words);
        mode = mutate(g, mode, 2, 3);
        m = mutate(g, m, 16, 2 * half + 1);
        k = mutate(g, k, 8, kmax + 1);
        n = mutate(g, n, 8, nmax + 1);
        obuf = mutate(g, obuf, 16, 2 * half - 1);
        spm = mutate(g, spm, 16, spm_words - 1);
        ss = mutate(g, ss, 16, ss + 1);
        klo = mutate(g, klo, 6, k); /* k_lo = k: BAD_DESC */
        put(in, NPU_FLD_INSN_op, op);
        put(in, NPU_FLD_WAVE_wbank, bank);
        put(in, NPU_FLD_WAVE_mode, mode);
        put(in, NPU_FLD_WAVE_acc, acc);
        put(in, NPU_FLD_WAVE_m, m);
        put(in, NPU_FLD_WAVE_spm_addr, spm);
        put(in, NPU_FLD_WAVE_spm_stride, ss);
        put(in, NPU_FLD_WAVE_k, k);
        put(in, NPU_FLD_WAVE_n, n);
        put(in, NPU_FLD_WAVE_obuf_addr, obuf);
        put(in, NPU_FLD_WAVE_lane_hi, ahi);
        put(in, NPU_FLD_WAVE_bcast, bc);
        put(in, NPU_FLD_WAVE_k_lo, klo);
        break;
    }
    default: { /* DRAIN */
        uint32_t rows = rnd_in(g, 1, 3 * F), split = 0, hi = 0, ss = rnd_in(g, 2, 4);
        uint64_t span = (uint64_t)(rows - 1) * ss + 2;
        if (rtl_rand(&g->x) % 4 == 0) {
            split = rnd_in(g, 1, rows);
            hi = rnd_in(g, 0, rows);
            ss = rnd_in(g, 1, 3);
            span = (uint64_t)(split + (hi ? hi : 1) + rows) * ss + 1;
        }
        uint32_t obuf = rnd_in(g, 0, 1) * half + place(g, rows, half);
        uint32_t spm = place(g, span, spm_words);
        rows = mutate(g, rows, 16, half + 1);
        obuf = mutate(g, obuf, 16, 2 * half - 1);
        spm = mutate(g, spm, 16, spm_words - 1);
        ss = mutate(g, ss, 16, ss + 1);
        split = mutate(g, split, 16, rows + 1);
        hi = mutate(g, hi, 16, rows + 1);
        put(in, NPU_FLD_INSN_op, op);
        put(in, NPU_FLD_DRAIN_rows, rows);
        put(in, NPU_FLD_DRAIN_obuf_addr, obuf);
        put(in, NPU_FLD_DRAIN_spm_addr, spm);
        put(in, NPU_FLD_DRAIN_spm_stride, ss);
        put(in, NPU_FLD_DRAIN_split_rows, split);
        put(in, NPU_FLD_DRAIN_hi_rows, hi);
        if (rtl_rand(&g->x) % 4 == 0) { /* narrow (a shift is BAD_DESC at bf16, and with split) */
            put(in, NPU_FLD_DRAIN_narrow, 1);
            put(in, NPU_FLD_DRAIN_shift, rtl_rand(&g->x) % 2 ? rnd_in(g, 0, 31) : 0);
        }
        break;
    }
    }
}

/* Appends `in` to the program so that it starts only after the previous instructions completed:
 * dependency tokens between neighbouring queues, a SYNC_E between LOAD and STORE. The LOAD and
 * STORE queues complete in order, the EXEC queue does not (its three units run concurrently: a
 * DRAIN may still write the SPM after a later LDW completed), so every instruction of an EXEC
 * run pushes a token and the next queue pops them all (SYNC_L / SYNC_S pops, then `in`). */
/* The first byte where the two DRAMs differ among those a program may have written, or -1.
 * Both start equal; only STOREs write, so the bytes to compare are the program and data window
 * [0, DATA_BASE + DATA_WIN) and each STORE's rows with a 4 KiB guard on either side (comparing
 * the whole 4 GiB after every program cost ~2 s each). A STORE that lands at a wrong address
 * leaves its own rows unwritten, which this sees; the write counters are compared exactly. */
static int64_t dram_diff(const uint8_t *d, const uint8_t *md, uint64_t bytes, const npu_insn_t *p,
                         size_t n)
{
    uint64_t lo[1 + 4 * DESC_PER_PROG], hi[1 + 4 * DESC_PER_PROG];
    size_t nr = 0;
    lo[nr] = 0;
    hi[nr++] = DATA_BASE + DATA_WIN;
    for (size_t i = 0; i < n && nr < sizeof lo / sizeof lo[0]; i++) {
        npu_fields_t f;
        if (npu_insn_op(&p[i]) != NPU_OP_STORE || npu_decode(&p[i], &f) != 0 || !f.rows)
            continue;
        uint64_t a = f.dram_addr, e = a + (uint64_t)(f.rows - 1) * f.dram_stride + f.row_bytes;
        lo[nr] = a > 4096 ? a - 4096 : 0;
        hi[nr++] = e + 4096;
    }
    for (size_t r = 0; r < nr; r++) {
        uint64_t e = hi[r] < bytes ? hi[r] : bytes;
        if (lo[r] >= e || memcmp(d + lo[r], md + lo[r], (size_t)(e - lo[r])) == 0)
            continue;
        for (uint64_t a = lo[r]; a < e; a++)
            if (d[a] != md[a])
                return (int64_t)a;
    }
    return -1;
}

static void push_serial(npu_insn_t *p, size_t *n, char *last, const npu_insn_t *in)
{
    char q = npu_op_queue(npu_insn_op(in));
    npu_insn_t ins = *in;
    if (*last && *last != q) {
        if ((*last == 'L' && q == 'S') || (*last == 'S' && q == 'L')) {
            npu_insn_t sy;
            npu_enc_sync(&sy, NPU_OP_SYNC_E);
            npu_insn_t tmp = sy;
            push_serial(p, n, last, &tmp);
        }
        npu_insn_t *prev = &p[*n - 1];
        if (*last == 'L' && q == 'E') {
            prev->w[0] |= NPU_TOK_PUSH_NEXT;
            ins.w[0] |= NPU_TOK_POP_PREV;
        } else if (*last == 'S' && q == 'E') {
            prev->w[0] |= NPU_TOK_PUSH_PREV;
            ins.w[0] |= NPU_TOK_POP_NEXT;
        } else if (*last == 'E') { /* to S (push_next / pop_prev) or to L (push_prev / pop_next) */
            uint32_t push = q == 'S' ? NPU_TOK_PUSH_NEXT : NPU_TOK_PUSH_PREV;
            uint32_t pop = q == 'S' ? NPU_TOK_POP_PREV : NPU_TOK_POP_NEXT;
            size_t k = *n;
            while (k > 0 && npu_op_queue(npu_insn_op(&p[k - 1])) == 'E')
                p[--k].w[0] |= push;
            for (size_t extra = *n - k; extra > 1; extra--) {
                npu_insn_t sy;
                npu_enc_sync(&sy, q == 'S' ? NPU_OP_SYNC_S : NPU_OP_SYNC_L);
                sy.w[0] |= pop;
                p[(*n)++] = sy;
            }
            ins.w[0] |= pop;
        }
    }
    p[(*n)++] = ins;
    *last = q;
}

Test(fuzz, descriptors, .timeout = 3000)
{
    static const unsigned ops[] = { NPU_OP_LOAD, NPU_OP_LOAD, NPU_OP_LOAD, NPU_OP_FILL,
                                    NPU_OP_STORE, NPU_OP_STORE, NPU_OP_LDW, NPU_OP_LDW,
                                    NPU_OP_WAVE, NPU_OP_WAVE, NPU_OP_DRAIN, NPU_OP_DRAIN,
                                    NPU_OP_VSET, NPU_OP_VEC, NPU_OP_VEC, NPU_OP_LOAD_SPM };
    npu_cfg_t cfg = rtl_cfg();
    uint64_t seed = rtl_seed(1), total = env_u64("NPU_FUZZ_DESCS", 256);
    /* Both must fail, but which of several faulty descriptors is reported first may differ: the
     * RTL checks some fields when an instruction enters its queue, the model when it starts.
     * NPU_FUZZ_STRICT=1 also requires the same error code and ERR_PC. */
    int strict = (int)env_u64("NPU_FUZZ_STRICT", 0);
    uint64_t nprog = (total + DESC_PER_PROG - 1) / DESC_PER_PROG;
    fuzz_sel_t sel = fuzz_sel();
    stats_t st;
    memset(&st, 0, sizeof st);
    double t0 = now_s();
    for (uint64_t k = 0; k < nprog; k++) {
        if (!selected(&sel, k))
            continue;
        static const unsigned edges[3] = { 0, 3, 15 };
        gen_t g = { mix(seed ^ mix(~k)), 0, { -1, -1 }, { 0, 0 }, 0 };
        g.edge = edges[rtl_rand(&g.x) % 3];
        uint64_t x = g.x;
        npu_insn_t p[4 * DESC_PER_PROG];
        size_t n = 0;
        char last = 0;
        unsigned vlen = 0;
        for (unsigned i = 0; i < DESC_PER_PROG; i++) {
            npu_insn_t d;
            gen_desc(&cfg, &g, ops[rtl_rand(&g.x) % (sizeof ops / sizeof ops[0])], &d);
            st.shrinks += shrink(&cfg, &d, &vlen);
            push_serial(p, &n, &last, &d);
        }
        x = g.x;
        unsigned stall = (unsigned)(rtl_rand(&x) % 3 == 0 ? rtl_rand(&x) % 30 : 0);
        uint64_t fill = x;
        npu_sim_t *s = open_with(&RTL, &cfg, stall, x);
        npu_sim_t *m = open_with(&MODEL, &cfg, 0, 1);
        size_t bytes, mbytes;
        uint8_t *d = npu_sim_dram(s, &bytes), *md = fnpu_sim_dram(m, &mbytes);
        cr_assert_eq(bytes, mbytes);
        for (uint32_t a = DATA_BASE; a < DATA_BASE + DATA_WIN; a += 8) {
            uint64_t v = rtl_rand(&fill);
            memcpy(d + a, &v, 8);
            memcpy(md + a, &v, 8);
        }
        uint64_t bound = fuzz_bound(&cfg, p, n, stall);
        outcome_t r, e;
        run_prog(&RTL, s, p, n, bound, &r);
        check_halt(&cfg, "fuzz/descriptors", seed, k, p, n, bound, &r, s);
        run_prog(&MODEL, m, p, n, bound, &e);
        cr_assert_eq(e.rc, 1, "the functional model did not halt on program %llu",
                     (unsigned long long)k);
        char why[400] = "";
        int64_t diff;
        unsigned rs = r.status & 3u, es = e.status & 3u;
        if (rs != es)
            snprintf(why, sizeof why, "RTL %s %s at pc %u, model %s %s at pc %u",
                     npu_state_name(rs), rs == NPU_STATE_ERROR ? ename(r.err) : "",
                     (unsigned)r.err_pc, npu_state_name(es),
                     es == NPU_STATE_ERROR ? ename(e.err) : "", (unsigned)e.err_pc);
        else if (rs == NPU_STATE_ERROR && (r.err != e.err || r.err_pc != e.err_pc) && strict)
            snprintf(why, sizeof why, "both ERROR, RTL %s at pc %u (info 0x%x), model %s at pc %u "
                     "(info 0x%x)", ename(r.err), (unsigned)r.err_pc, (unsigned)r.err_info,
                     ename(e.err), (unsigned)e.err_pc, (unsigned)e.err_info);
        else if (rs == NPU_STATE_DONE && (diff = dram_diff(d, md, bytes, p, n)) >= 0) {
            size_t a = (size_t)diff;
            snprintf(why, sizeof why, "both DONE, DRAM differs first at 0x%06zx: RTL 0x%02x, "
                     "model 0x%02x", a, d[a], md[a]);
        } else if (rs == NPU_STATE_DONE) {
            static const char *const cn[] = {
#define X(nm, t) #nm,
                NPU_COUNTERS(X)
#undef X
            };
            for (size_t i = 0; i < sizeof exact_cnt / sizeof exact_cnt[0] && !why[0]; i++)
                if (r.cnt[exact_cnt[i]] != e.cnt[exact_cnt[i]])
                    snprintf(why, sizeof why, "both DONE, counter %s: RTL %llu, model %llu",
                             cn[exact_cnt[i]], (unsigned long long)r.cnt[exact_cnt[i]],
                             (unsigned long long)e.cnt[exact_cnt[i]]);
        }
        if (why[0]) {
            fprintf(stderr, "fuzz/descriptors: program %llu (seed %llu), config %s, stalls %u%%:\n",
                    (unsigned long long)k, (unsigned long long)seed, cfg.name, stall);
            print_prog(p, n);
            cr_assert_fail("fuzz/descriptors: program %llu of seed %llu: %s\n  replay: "
                           "NPU_SEED=%llu NPU_FUZZ_ONLY=%llu build/%s/test_rtl --filter "
                           "'fuzz/descriptors'", (unsigned long long)k, (unsigned long long)seed,
                           why, (unsigned long long)seed, (unsigned long long)k, cfg.name);
        }
        npu_sim_close(s);
        fnpu_sim_close(m);
        st.progs++;
        st.words += DESC_PER_PROG;
        st.cycles += r.cycles;
        if (rs == NPU_STATE_DONE) {
            st.done++;
            st.mz += r.cnt[NPU_CNT_macs_zero] != 0;
            st.fill += r.cnt[NPU_CNT_fill_words] != 0;
            st.vec += r.cnt[NPU_CNT_vec_busy] != 0;
            st.copy += r.cnt[NPU_CNT_spm_copy_words] != 0;
        } else {
            st.err[r.err]++;
            st.err_agree += r.err == e.err && r.err_pc == e.err_pc;
        }
    }
    st.wall = now_s() - t0;
    print_stats("fuzz/descriptors", &st, seed);
    uint64_t nerr = st.progs - st.done;
    fprintf(stderr, "fuzz/descriptors: RTL and model agree on every outcome; DRAM and exact "
            "counters equal in %llu DONE programs (%llu with macs_zero > 0, %llu with a FILL, %llu with a VEC, "
            "%llu with a LOAD_SPM); "
            "same error code and ERR_PC in %llu of %llu ERROR programs%s\n",
            (unsigned long long)st.done, (unsigned long long)st.mz, (unsigned long long)st.fill, (unsigned long long)st.vec,
            (unsigned long long)st.copy, (unsigned long long)st.err_agree, (unsigned long long)nerr,
            strict ? " (NPU_FUZZ_STRICT)" : "");
    cr_assert(st.progs > 0 || sel.has_only || sel.parts > 1, "no program ran");
}

/* ---- fuzz/words ------------------------------------------------------------------------- */

static const unsigned valid_ops[] = { /* the eight descriptors first */ NPU_OP_LOAD, NPU_OP_STORE, NPU_OP_LDW,
                                      NPU_OP_WAVE, NPU_OP_DRAIN, NPU_OP_FILL, NPU_OP_VSET, NPU_OP_VEC,
                                      NPU_OP_SYNC_L, NPU_OP_SYNC_E, NPU_OP_SYNC_S };
#define N_VALID_OPS (sizeof valid_ops / sizeof valid_ops[0])
#define N_DESC_OPS 8u

Test(fuzz, words, .timeout = 3000)
{
    npu_cfg_t cfg = rtl_cfg();
    uint64_t seed = rtl_seed(1), total = env_u64("NPU_FUZZ_WORDS", 2048);
    uint64_t nprog = (total + FUZZ_PROG_WORDS - 1) / FUZZ_PROG_WORDS;
    fuzz_sel_t sel = fuzz_sel();
    stats_t st;
    memset(&st, 0, sizeof st);
    double t0 = now_s();
    for (uint64_t k = 0; k < nprog; k++) {
        if (!selected(&sel, k))
            continue;
        gen_t g = { mix(seed ^ mix(k + 1)), 15, { -1, -1 }, { 0, 0 }, 0 };
        uint64_t x;
        npu_insn_t p[4 * FUZZ_PROG_WORDS];
        size_t n = 0;
        char last = 0;
        unsigned vlen = 0;
        /* half of the programs have random token bits, half are serialised with a few flips */
        int random_tokens = rtl_rand(&g.x) % 2;
        for (unsigned i = 0; i < FUZZ_PROG_WORDS; i++) {
            npu_insn_t in;
            unsigned r = (unsigned)(rtl_rand(&g.x) % 100);
            for (int w = 0; w < 4; w++)
                in.w[w] = (uint32_t)(rtl_rand(&g.x) >> 16);
            if (r < 2) {
                /* any 128 bits */
            } else if (r < 35) {
                put(&in, NPU_FLD_INSN_op, valid_ops[rtl_rand(&g.x) % N_VALID_OPS]);
            } else {
                unsigned op = valid_ops[rtl_rand(&g.x) % N_DESC_OPS];
                uint32_t junk = in.w[0];
                gen_desc(&cfg, &g, op, &in);
                if (random_tokens)
                    in.w[0] = (in.w[0] & ~NPU_TOK_MASK) | (junk & NPU_TOK_MASK);
            }
            st.shrinks += shrink(&cfg, &in, &vlen);
            if (random_tokens || npu_op_queue(npu_insn_op(&in)) == 0) {
                p[n++] = in;
                last = 0;
            } else {
                push_serial(p, &n, &last, &in);
                if (rtl_rand(&g.x) % 20 == 0)
                    p[n - 1].w[0] ^= tok_flag[rtl_rand(&g.x) % 4];
            }
        }
        x = g.x;
        unsigned stall = (unsigned)(rtl_rand(&x) % 4 == 0 ? rtl_rand(&x) % 30 : 0);
        npu_sim_t *s = open_with(&RTL, &cfg, stall, x);
        uint64_t bound = fuzz_bound(&cfg, p, n, stall);
        outcome_t r;
        run_prog(&RTL, s, p, n, bound, &r);
        check_halt(&cfg, "fuzz/words", seed, k, p, n, bound, &r, s);
        npu_sim_close(s);
        st.progs++;
        st.words += FUZZ_PROG_WORDS;
        st.cycles += r.cycles;
        if ((r.status & 3u) == NPU_STATE_DONE)
            st.done++;
        else
            st.err[r.err]++;
    }
    st.wall = now_s() - t0;
    print_stats("fuzz/words", &st, seed);
    cr_assert(st.progs > 0 || sel.has_only || sel.parts > 1, "no program ran");
}

