/* runtime.c - program launch, DRAM layout and the GEMM driver; see runtime.h. */
#define _POSIX_C_SOURCE 200809L
#include "run/runtime.h"

#include "compile/gemm/gemm_swap.h"
#include "compile/slice/slice.h"
#include "compile/slice/slice_burst.h"
#include "compile/slice/slice_cost.h"
#include "model/prog_time.h"

#include "run/fcov.h"
#include "run/flexsa_report.h"
#include "run/perf_log.h"
#include "run/progress.h"
#include "run/recorder.h"
#include "run/timeline.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ref/golden.h"
#include "ref/golden_bf16.h"

/* ---- names ---------------------------------------------------------------------------- */

const char *npu_error_name(unsigned code)
{
    switch (code) {
#define X(n, v, t) case v: return #n;
        NPU_ERRORS(X)
#undef X
    default: return NULL;
    }
}

const char *npu_error_text(unsigned code)
{
    switch (code) {
#define X(n, v, t) case v: return t;
        NPU_ERRORS(X)
#undef X
    default: return NULL;
    }
}

const char *npu_state_name(unsigned state)
{
    switch (state) {
#define X(n, v) case v: return #n;
        NPU_STATES(X)
#undef X
    default: return NULL;
    }
}

const char *npu_csr_name(unsigned addr)
{
    switch (addr) {
#define X(n, v, t) case v: return #n;
        NPU_CSRS(X)
#undef X
    default: return NULL;
    }
}

int npu_qstate_str(uint32_t q, char *buf, size_t n)
{
    return snprintf(buf, n,
                    "queues L=%u E=%u S=%u tokens l2e=%u e2l=%u e2s=%u s2e=%u fetch_done=%u "
                    "busy L=%u E=%u S=%u",
                    (unsigned)(q & 15u), (unsigned)((q >> 4) & 15u), (unsigned)((q >> 8) & 15u),
                    (unsigned)((q >> 12) & 15u), (unsigned)((q >> 16) & 15u),
                    (unsigned)((q >> 20) & 15u), (unsigned)((q >> 24) & 15u),
                    (unsigned)((q >> 28) & 1u), (unsigned)((q >> 29) & 1u),
                    (unsigned)((q >> 30) & 1u), (unsigned)((q >> 31) & 1u));
}

int npu_nocstate_str(uint32_t q, char *buf, size_t n)
{
    /* field layout: rtl/npu_top.v noc_state; V endpoints = cores 0..3, H-L endpoints = cores
     * 0, 2, H-R = cores 1, 3 */
    static const char *const ch[3] = {"V", "H-L", "H-R"};
    static const unsigned core[3][4] = {{0, 1, 2, 3}, {0, 2, 0, 0}, {1, 3, 0, 0}};
    size_t len = 0;
    if (n)
        buf[0] = '\0';
    for (int c = 0; c < 3; c++) {
        uint32_t f = q >> (NPU_NOC_CH_BITS * c) & ((1u << NPU_NOC_CH_BITS) - 1);
        unsigned nep = c ? 2 : 4, blk = f >> NPU_NOC_WAIT & ((1u << nep) - 1);
        unsigned blocked = f >> NPU_NOC_BLK & 1u;
        if (!(f >> NPU_NOC_VLD & 1u))
            continue;
        int k = snprintf(buf + len, len < n ? n - len : 0, "%s%s flit gid %u %s", len ? "; " : "NoC ",
                         ch[c], (unsigned)(f >> NPU_NOC_GID & 15u), blocked ? "blocked on core" : "moving");
        len += k > 0 ? (size_t)k : 0;
        for (unsigned e = 0; e < nep && blocked; e++)
            if (blk >> e & 1u) {
                k = snprintf(buf + len, len < n ? n - len : 0, " %u", core[c][e]);
                len += k > 0 ? (size_t)k : 0;
            }
    }
    if (!len)
        return snprintf(buf, n, "NoC idle");
    return (int)len;
}

/* ---- allocator and layout --------------------------------------------------------------- */

npu_dram_timing_t npu_dram_timing_of(const npu_cfg_t *cfg)
{
    npu_dram_timing_t t;
    memset(&t, 0, sizeof t);
    t.bytes_per_cycle = cfg->dram_bw;
    t.latency = (unsigned)cfg->dram_latency;
    t.burst_cost = (unsigned)cfg->dram_burst_cost;
    return t;
}

void npu_alloc_init(npu_alloc_t *a, uint64_t dram_bytes, unsigned beat_bytes)
{
    a->next = 0;
    a->limit = dram_bytes;
    a->align = beat_bytes ? beat_bytes : 1;
}

int npu_alloc(npu_alloc_t *a, uint64_t bytes, uint64_t *addr)
{
    uint64_t size = (bytes + a->align - 1) / a->align * a->align;
    if (size < bytes || a->next > a->limit || size > a->limit - a->next)
        return -1;
    *addr = a->next;
    a->next += size;
    return 0;
}

void npu_write_i16(uint8_t *dram, uint64_t addr, size_t pitch, int rows, int cols,
                   const int16_t *src, size_t ld)
{
    for (int r = 0; r < rows; r++) {
        uint8_t *row = dram + addr + (size_t)r * pitch;
        if (pitch > 2u * (size_t)cols) /* padding past the row (a padded layout) reads as zero */
            memset(row + 2 * cols, 0, pitch - 2u * (size_t)cols);
        for (int c = 0; c < cols; c++) {
            uint16_t v = (uint16_t)src[(size_t)r * ld + (size_t)c];
            row[2 * c] = (uint8_t)(v & 0xFF);
            row[2 * c + 1] = (uint8_t)(v >> 8);
        }
    }
}

void npu_read_i32(const uint8_t *dram, uint64_t addr, size_t pitch, int rows, int cols,
                  int32_t *dst, size_t ld)
{
    for (int r = 0; r < rows; r++) {
        const uint8_t *row = dram + addr + (size_t)r * pitch;
        for (int c = 0; c < cols; c++) {
            uint32_t u = (uint32_t)row[4 * c] | (uint32_t)row[4 * c + 1] << 8 |
                         (uint32_t)row[4 * c + 2] << 16 | (uint32_t)row[4 * c + 3] << 24;
            dst[(size_t)r * ld + (size_t)c] =
                u <= 0x7FFFFFFFu ? (int32_t)u : (int32_t)(u - 0x80000000u) - 0x7FFFFFFF - 1;
        }
    }
}

void npu_write_prog(uint8_t *dram, uint64_t addr, const npu_insn_t *prog, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (int w = 0; w < 4; w++)
            for (int b = 0; b < 4; b++)
                dram[addr + 16 * i + 4 * (size_t)w + (size_t)b] = (uint8_t)(prog[i].w[w] >> (8 * b));
}

/* ---- running a program ------------------------------------------------------------------ */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Writes the program and its CSRs, clears the counters and starts it; 0, or -1 if it does not
 * fit the DRAM. */
static int start_program(const npu_cfg_t *cfg, npu_sim_t *sim, uint64_t prog_base,
                         const npu_insn_t *prog, size_t n)
{
    size_t dram_bytes = 0;
    uint8_t *dram = npu_sim_dram(sim, &dram_bytes);
    if (!dram || prog_base > dram_bytes || n > (dram_bytes - prog_base) / NPU_INSN_BYTES ||
        prog_base > 0xFFFFFFFFull || n > 0xFFFFFFFFull)
        return -1;
    npu_write_prog(dram, prog_base, prog, n);
    npu_sim_csr_write(sim, NPU_CSR_PROG_BASE, (uint32_t)prog_base);
    npu_sim_csr_write(sim, NPU_CSR_PROG_LEN, (uint32_t)n);
    npu_sim_csr_write(sim, NPU_CSR_WATCHDOG, (uint32_t)cfg->watchdog_cycles);
    npu_sim_csr_write(sim, NPU_CSR_CTRL, 2u); /* clear counters */
    return 0;
}

int npu_run_until(const npu_cfg_t *cfg, npu_sim_t *sim, uint64_t prog_base, const npu_insn_t *prog,
                  size_t n, uint64_t max_cycles, int (*pred)(npu_sim_t *, void *), void *ctx,
                  uint64_t *start, uint64_t *cycle)
{
    uint64_t t0;
    if (start_program(cfg, sim, prog_base, prog, n) != 0)
        return -1;
    t0 = npu_sim_cycle(sim);
    if (start)
        *start = t0;
    npu_sim_csr_write(sim, NPU_CSR_CTRL, 1u); /* start */
    while (npu_sim_cycle(sim) - t0 < max_cycles) {
        uint32_t st = npu_sim_csr_read(sim, NPU_CSR_STATUS) & 3u;
        if (((npu_sim_cycle(sim) - t0) & 8191u) == 0 && npu_progress_interrupted())
            return -1; /* SIGINT: as often as npu_run_program checks */
        if (pred(sim, ctx)) {
            *cycle = npu_sim_cycle(sim);
            return 0;
        }
        if (st == NPU_STATE_DONE || st == NPU_STATE_ERROR || npu_sim_finished(sim))
            return -1;
        npu_sim_step(sim, 1);
    }
    return -1;
}

static int exec_on_pc(npu_sim_t *sim, void *ctx)
{
    uint32_t q = npu_sim_csr_read(sim, NPU_CSR_QSTATE);
    return npu_sim_csr_read(sim, NPU_CSR_PC_E) == *(const uint32_t *)ctx && (q >> 30 & 1u);
}

int npu_run_find_exec_pc(const npu_cfg_t *cfg, npu_sim_t *sim, uint64_t prog_base,
                         const npu_insn_t *prog, size_t n, uint32_t pc, uint64_t max_cycles,
                         uint64_t *cycle)
{
    return npu_run_until(cfg, sim, prog_base, prog, n, max_cycles, exec_on_pc, &pc, NULL, cycle);
}

/* npu_sim_run in slices, so that SIGINT (progress.h) and the progress line are seen between
 * them; the model runs the same cycles. Returns what npu_sim_run does; 0 when interrupted. */
static int run_watched(npu_sim_t *sim, size_t n, uint64_t max_cycles, int *interrupted)
{
    enum { SLICE = 8192 }; /* cycles between checks: well under a second at any model speed */
    npu_progress_t p;
    uint64_t done = 0, k;
    int rc;
    npu_progress_start(&p, sim, n);
    do {
        if ((*interrupted = npu_progress_interrupted()) != 0) {
            rc = 0;
            break;
        }
        k = max_cycles - done < SLICE ? max_cycles - done : SLICE;
        rc = npu_timeline_active() ? npu_timeline_run(npu_timeline_active(), sim, k)
                                   : npu_sim_run(sim, k);
        done += k;
        npu_progress_update(&p, sim);
    } while (rc == 0 && done < max_cycles);
    npu_progress_end(&p);
    return rc;
}

static char g_label[128] = "program";

void npu_run_set_label(const char *fmt, ...)
{
    va_list ap;
    if (!fmt) {
        snprintf(g_label, sizeof g_label, "program");
        return;
    }
    va_start(ap, fmt);
    vsnprintf(g_label, sizeof g_label, fmt, ap);
    va_end(ap);
}

const char *npu_run_label(void) { return g_label; }

int npu_run_program(const npu_cfg_t *cfg, npu_sim_t *sim, uint64_t prog_base,
                    const npu_insn_t *prog, size_t n, uint64_t max_cycles, npu_run_result_t *r)
{
    double t0;
    int rc;
    uint64_t stall0 = 0, stall1 = 0;
    const char *fcov_path, *perf_path;
    memset(r, 0, sizeof *r);
    if ((r->interrupted = npu_progress_interrupted()) != 0)
        return NPU_RUN_TIMEOUT; /* SIGINT came before: a multi-program step runs nothing more */
    if (start_program(cfg, sim, prog_base, prog, n) != 0)
        return NPU_RUN_HOST_ERROR;
    r->start_cycle = npu_sim_cycle(sim);
    npu_sim_dram_stats(sim, NULL, NULL, NULL, NULL, &stall0);
    if (npu_recorder_active())
        npu_recorder_before(npu_recorder_active(), sim, prog_base, prog, n);
    npu_sim_csr_write(sim, NPU_CSR_CTRL, 1u); /* start */
    if (npu_timeline_active())
        npu_timeline_begin(npu_timeline_active(), sim, prog, n);
    t0 = now_s();
    rc = run_watched(sim, n, max_cycles, &r->interrupted);
    r->halted = rc > 0;
    r->wall_s = now_s() - t0;
    r->end_cycle = npu_sim_cycle(sim);
    r->status = npu_sim_csr_read(sim, NPU_CSR_STATUS);
    r->state = r->status & 3u;
    r->err = (r->status >> 8) & 0xFFu;
    r->err_pc = npu_sim_csr_read(sim, NPU_CSR_ERR_PC);
    r->err_info = npu_sim_csr_read(sim, NPU_CSR_ERR_INFO);
    r->qstate = npu_sim_csr_read(sim, NPU_CSR_QSTATE);
    r->pc_l = npu_sim_csr_read(sim, NPU_CSR_PC_L);
    r->pc_e = npu_sim_csr_read(sim, NPU_CSR_PC_E);
    r->pc_s = npu_sim_csr_read(sim, NPU_CSR_PC_S);
    r->fetch_pc = npu_sim_csr_read(sim, NPU_CSR_FETCH_PC);
    r->nocstate = npu_sim_csr_read(sim, NPU_CSR_NOCSTATE);
    for (unsigned i = 0; i < NPU_NUM_COUNTERS; i++) {
        uint64_t lo = npu_sim_csr_read(sim, NPU_CSR_CNT_LO + i);
        uint64_t hi = npu_sim_csr_read(sim, NPU_CSR_CNT_HI + i);
        r->cnt[i] = hi << 32 | lo;
    }
    if (npu_timeline_active())
        npu_timeline_end(npu_timeline_active(), sim, r->cnt);
    if (npu_recorder_active())
        npu_recorder_after(npu_recorder_active(), sim, r);
    if (rc < 0)
        return NPU_RUN_SIM_STOPPED;
    if (!r->halted)
        return NPU_RUN_TIMEOUT;
    if ((perf_path = getenv("NPU_PERF_LOG")) && *perf_path &&
        npu_perf_log_append(perf_path, prog, n, r->state, r->cnt) != 0)
        fprintf(stderr, "npu: cannot append to NPU_PERF_LOG=%s\n", perf_path);
    if (r->state == NPU_STATE_DONE && (fcov_path = getenv("NPU_FCOV")) && *fcov_path) {
        npu_fcov_t c; /* functional coverage of this run (fcov.h) */
        memset(&c, 0, sizeof c);
        npu_sim_dram_stats(sim, NULL, NULL, NULL, NULL, &stall1);
        npu_fcov_program(cfg, prog, n, stall1 > stall0, &c);
        npu_fcov_append(fcov_path, &c);
    }
    return r->state == NPU_STATE_DONE ? NPU_RUN_DONE : NPU_RUN_ERROR;
}

int npu_check_hw(const npu_cfg_t *cfg, npu_sim_t *sim, char *msg, size_t n)
{
    uint32_t s = npu_sim_csr_read(sim, NPU_CSR_HW_S);
    uint32_t spm = npu_sim_csr_read(sim, NPU_CSR_HW_SPM);
    uint32_t ob = npu_sim_csr_read(sim, NPU_CSR_HW_OBUF);
    uint32_t dt = npu_sim_csr_read(sim, NPU_CSR_HW_DTYPE);
    uint32_t want_spm = (uint32_t)cfg->spm_banks * (uint32_t)cfg->spm_bank_words;
    if (s == (uint32_t)cfg->s && spm == want_spm && ob == (uint32_t)cfg->obuf_rows &&
        dt == (uint32_t)cfg->dtype)
        return 0;
    snprintf(msg, n,
             "the simulated NPU (S=%u, %u SPM words, %u OBUF rows, %s) is not config '%s' (S=%d, "
             "%u SPM words, %d OBUF rows, %s)",
             (unsigned)s, (unsigned)spm, (unsigned)ob, npu_dtype_name(dt), cfg->name ? cfg->name : "?",
             cfg->s, (unsigned)want_spm, cfg->obuf_rows, npu_dtype_name((unsigned)cfg->dtype));
    return -1;
}

/* ---- counters vs program ---------------------------------------------------------------- */

int npu_check_counters(const uint64_t *c, const npu_prog_expect_t *e, char *msg, size_t n)
{
    static const char *const names[] = {
#define X(nm, t) #nm,
        NPU_COUNTERS(X)
#undef X
    };
    struct { int idx; uint64_t want; } chk[64];
    int k = 0;
    for (int t = 1; t < NPU_NUM_TAGS; t++) { /* PROG (tag 0) not checked */
        chk[k].idx = NPU_CNT_dram_rd_prog + t; chk[k++].want = e->rd_bytes[t];
        chk[k].idx = NPU_CNT_dram_wr_prog + t; chk[k++].want = e->wr_bytes[t];
    }
    for (int i = 0; i < 4; i++) {
        chk[k].idx = NPU_CNT_macs_core0 + i; chk[k++].want = e->macs_core[i];
    }
    for (int m = 0; m < NPU_NUM_MODES; m++) {
        chk[k].idx = NPU_CNT_waves_fw + m; chk[k++].want = e->waves[m];
        chk[k].idx = NPU_CNT_rows_fw + m; chk[k++].want = e->rows[m];
    }
    chk[k].idx = NPU_CNT_insn_load; chk[k++].want = e->insn_load;
    chk[k].idx = NPU_CNT_insn_exec; chk[k++].want = e->insn_exec;
    chk[k].idx = NPU_CNT_insn_store; chk[k++].want = e->insn_store;
    chk[k].idx = NPU_CNT_obuf_drain_rows; chk[k++].want = e->obuf_drain_rows;
    chk[k].idx = NPU_CNT_fill_words; chk[k++].want = e->fill_words;
    chk[k].idx = NPU_CNT_spm_copy_words; chk[k++].want = e->spm_copy_words;
    chk[k].idx = NPU_CNT_vec_rd_words; chk[k++].want = e->vec_rd_words;
    chk[k].idx = NPU_CNT_vec_wr_words; chk[k++].want = e->vec_wr_words;
    chk[k].idx = NPU_CNT_vec_busy; chk[k++].want = e->vec_busy;
    chk[k].idx = NPU_CNT_dram_wr_bursts; chk[k++].want = e->wr_bursts;
    for (int i = 0; i < k; i++)
        if (c[chk[i].idx] != chk[i].want) {
            snprintf(msg, n, "counter %s = %llu, the program implies %llu", names[chk[i].idx],
                     (unsigned long long)c[chk[i].idx], (unsigned long long)chk[i].want);
            return -1;
        }
    /* the DMA queues' busy cycles: at least what their instructions move at one beat, chunk or
     * word a cycle, at most the run */
    const struct { int id; uint64_t lo; } busy[2] = {{NPU_CNT_busy_load, e->load_busy_min},
                                                     {NPU_CNT_busy_store, e->store_busy_min}};
    for (int i = 0; i < 2; i++)
        if (c[busy[i].id] < busy[i].lo || c[busy[i].id] > c[NPU_CNT_cycles]) {
            snprintf(msg, n, "counter %s = %llu, outside [%llu, %llu]: the program's transfers, the run's cycles",
                     names[busy[i].id], (unsigned long long)c[busy[i].id], (unsigned long long)busy[i].lo,
                     (unsigned long long)c[NPU_CNT_cycles]);
            return -1;
        }
    /* read bursts: the DMA's (exact in the program) plus the fetch's (not: it may over-read) */
    if (c[NPU_CNT_dram_rd_bursts] < e->rd_bursts) {
        snprintf(msg, n, "counter dram_rd_bursts = %llu, below the %llu the program's LOADs imply",
                 (unsigned long long)c[NPU_CNT_dram_rd_bursts], (unsigned long long)e->rd_bursts);
        return -1;
    }
    if (n)
        msg[0] = '\0';
    return 0;
}

int npu_check_array_counters(const uint64_t *c, const npu_array_expect_t *x, char *msg, size_t n)
{
    static const char *const mn[NPU_NUM_MODES] = {"busy_fw", "busy_vsw", "busy_hsw", "busy_isw"};
    for (int m = 0; m < NPU_NUM_MODES; m++)
        if (c[NPU_CNT_busy_fw + m] != x->busy[m]) {
            snprintf(msg, n, "counter %s = %llu, the program implies %llu", mn[m],
                     (unsigned long long)c[NPU_CNT_busy_fw + m], (unsigned long long)x->busy[m]);
            return -1;
        }
    const struct { int id; const char *name; uint64_t want; } noc[] = {
        {NPU_CNT_idle_pe_shape, "idle_pe_shape", x->idle_pe_shape},
        {NPU_CNT_noc_v_flits, "noc_v_flits", x->noc_v_flits},
        {NPU_CNT_noc_h_flits, "noc_h_flits", x->noc_h_flits},
        {NPU_CNT_noc_deliveries, "noc_deliveries", x->noc_deliveries},
        {NPU_CNT_lbuf_v_words, "lbuf_v_words", x->lbuf_v_words},
        {NPU_CNT_lbuf_h_words, "lbuf_h_words", x->lbuf_h_words},
        {NPU_CNT_noc_h_link0, "noc_h_link0", x->noc_h_link[0]},
        {NPU_CNT_noc_h_link1, "noc_h_link1", x->noc_h_link[1]},
        {NPU_CNT_noc_h_link2, "noc_h_link2", x->noc_h_link[2]},
        {NPU_CNT_noc_h_link3, "noc_h_link3", x->noc_h_link[3]},
        {NPU_CNT_noc_v_link0, "noc_v_link0", x->noc_v_link[0]},
        {NPU_CNT_noc_v_link1, "noc_v_link1", x->noc_v_link[1]},
        {NPU_CNT_noc_v_link2, "noc_v_link2", x->noc_v_link[2]},
        {NPU_CNT_noc_v_link3, "noc_v_link3", x->noc_v_link[3]},
    };
    for (size_t i = 0; i < sizeof noc / sizeof noc[0]; i++)
        if (c[noc[i].id] != noc[i].want) {
            snprintf(msg, n, "counter %s = %llu, the program implies %llu", noc[i].name,
                     (unsigned long long)c[noc[i].id], (unsigned long long)noc[i].want);
            return -1;
        }
    if (n)
        msg[0] = '\0';
    return 0;
}

/* ---- GEMM driver ------------------------------------------------------------------------ */

const char *npu_gemm_rc_name(int rc)
{
    switch (rc) {
    case NPU_GEMM_PASS: return "PASS";
    case NPU_GEMM_MISMATCH: return "FAIL";
    case NPU_GEMM_COUNTERS: return "FAIL (counters)";
    case NPU_GEMM_NPU_ERROR: return "ERROR";
    case NPU_GEMM_TIMEOUT: return "TIMEOUT";
    case NPU_GEMM_NO_FIT: return "NO FIT";
    default: return "HOST ERROR";
    }
}

static int host_error(npu_gemm_report_t *rep, const char *msg)
{
    snprintf(rep->host_msg, sizeof rep->host_msg, "%s", msg);
    rep->rc = NPU_GEMM_HOST_ERROR;
    return rep->rc;
}

/* The tiles of a GEMM under a tiling choice (runtime.h NPU_GEMM_SLICING_*, or NPU_GEMM_NO_BAND).
 * auto takes gemm_tiling's tiles for transposed operands (the slicing stage costs row-major
 * dense tensors only, not the DMA's transposing loads) and for a search space larger than
 * NPU_GEMM_AUTO_MAX_CANDS (the search can take seconds: a 30000^3 GEMM minutes; GNMT's
 * 1024 x 36548 x 1632, 513,000 candidates, about a second at small for both costs). 0 or -1. */
static int gemm_tiles(const npu_cfg_t *cfg, int M, int N, int K, int transposed, int modes, int choice,
                      npu_gemm_plan_t *plan)
{
    int even = modes == NPU_EMIT_1G4C, pol = (int)npu_emit_policy_model(modes);
    if (choice == 0 && transposed)
        choice = NPU_GEMM_SLICING_HEURISTIC;
    switch (choice) {
    case NPU_GEMM_NO_BAND: return npu_gemm_tile_ex(cfg, M, N, K, even, plan);
    case NPU_GEMM_SLICING_HEURISTIC: return npu_gemm_tile_res(cfg, M, N, K, even, plan);
    case NPU_GEMM_SLICING_BURST: return npu_gemm_tile_sliced(cfg, M, N, K, NPU_SLICE_BURST, pol, plan);
    case NPU_GEMM_SLICING_NOBURST: return npu_gemm_tile_sliced(cfg, M, N, K, NPU_SLICE_NOBURST, pol, plan);
    default: /* auto */
        if (npu_slice_count(cfg, NPU_SLICE_GEMM, NULL, M, N, K) > NPU_GEMM_AUTO_MAX_CANDS ||
            npu_gemm_tile_sliced(cfg, M, N, K, NPU_SLICE_BURST, pol, plan) != 0)
            return npu_gemm_tile_res(cfg, M, N, K, even, plan);
        return 0; /* with the band the slicing stage costed, if any */
    }
}

/* The alignment of a GEMM's program and tensors in DRAM: a 4 KiB line (at least a beat). The
 * slicing stage counts bursts on tensors at 4 KiB-aligned addresses (compile/slice/slice_burst.h);
 * placed only beat-aligned, a tile's contiguous run also crosses a line at its start's offset and
 * pays a burst more wherever it does (1024 x 256 x 16 at small: 2,304 write bursts instead of
 * 2,048, 1,092 cycles more at 64 B/cycle). */
static uint64_t gemm_tensor_align(const npu_cfg_t *cfg)
{
    uint64_t beat = (uint64_t)npu_cfg_beat(cfg);
    return beat > NPU_SLICE_PAGE ? beat : NPU_SLICE_PAGE;
}

/* Predicted cycles of the program of plan and args (the program-time model, model/prog_time.h,
 * at the config's slicing costs), its tensors at addresses a, b, c aligned as the allocator
 * places them (gemm_tensor_align); UINT64_MAX when it cannot be emitted or timed. */
static uint64_t gemm_predict(const npu_cfg_t *cfg, const npu_gemm_plan_t *plan, const npu_gemm_args_t *args,
                             const uint64_t size[4])
{
    uint64_t line = gemm_tensor_align(cfg), cyc = UINT64_MAX;
    npu_slice_cost_t k = npu_slice_cost_default(cfg, NPU_SLICE_BURST);
    npu_gemm_args_t a = *args;
    npu_prog_t p;
    char why[80];
    a.a = 0;
    a.b = (uint32_t)((size[1] + line - 1) / line * line);
    a.c = a.b + (uint32_t)((size[2] + line - 1) / line * line);
    npu_prog_init(&p);
    if (npu_gemm_emit(cfg, plan, &a, &p) != 0 || npu_prog_time(cfg, &k, p.insn, p.n, &cyc, why, sizeof why) != 0)
        cyc = UINT64_MAX;
    npu_prog_free(&p);
    return cyc;
}

/* Is plan's program too long to emit and time for a choice between two forms
 * (NPU_GEMM_SWAP_MAX_CHUNKS output tiles x K chunks)? */
static int too_long(const npu_gemm_plan_t *p)
{
    return (uint64_t)p->m_tiles * (uint64_t)p->n_tiles * (uint64_t)p->k_chunks > NPU_GEMM_SWAP_MAX_CHUNKS;
}

/* The program-time model's cycles of rep's current plan and args, predicted once across the picks
 * below (*cur: 0 until known; a pick that changes the plan sets it to the new plan's). */
static uint64_t current_cycles(const npu_cfg_t *cfg, const uint64_t size[4], const npu_gemm_report_t *rep,
                               uint64_t *cur)
{
    if (!*cur)
        *cur = gemm_predict(cfg, &rep->plan, &rep->args, size);
    return *cur;
}

/* The swapped form C^T = B^T A^T (compile/gemm/gemm_swap.h): taken for a tiny-M GEMM when the
 * program-time model predicts it faster than the plain plan (swap = 0), always (NPU_GEMM_SWAP_ON,
 * any shape at int16), never (NPU_GEMM_SWAP_OFF, and at bf16). rep->plan becomes the N x M x K
 * plan and rep->args.swap is set (the args stay the plain GEMM's). choice: the tiling choice, as
 * for the plain plan (the swapped operands are transposed unless both were: gemm_tiling's tiles).
 * Bounded (NPU_GEMM_SWAP_MAX_CHUNKS): both programs are emitted and timed. */
static void gemm_swap_pick(const npu_cfg_t *cfg, int M, int N, int K, int modes, int choice, int swap,
                           const uint64_t size[4], npu_gemm_report_t *rep, uint64_t *cur)
{
    uint64_t qc = 0;
    npu_gemm_plan_t sp;
    npu_gemm_args_t sa = rep->args;
    const npu_gemm_plan_t *p = &rep->plan;
    int force = swap == NPU_GEMM_SWAP_ON;
    if (swap == NPU_GEMM_SWAP_OFF || npu_cfg_bf16(cfg) || (!force && !npu_gemm_swap_candidate(cfg, M, N, K)) ||
        gemm_tiles(cfg, N, M, K, !sa.transA || !sa.transB, modes, choice, &sp) != 0)
        return;
    sa.swap = 1;
    if (!force && (too_long(p) || too_long(&sp) ||
                   (qc = gemm_predict(cfg, &sp, &sa, size)) >= current_cycles(cfg, size, rep, cur)))
        return;
    rep->plan = sp;
    rep->args.swap = 1;
    *cur = qc; /* 0 when forced: not predicted */
}

/* A split-A pick of the slicing stage (gemm_tiling.h "Split A": taller tiles, which its cost can
 * rank too high: the skinny DRAIN's row pairs meeting in a sub-bank, rows of two chunks; 8192 x 6 x
 * 54 at small-w2 ran 19,259 -> 25,748 cycles) is kept only when the program-time model times it
 * faster than the stage's best pick without the split (which it ranks within a few percent: 20,112
 * and 25,672 predicted there); else that pick. Auto tiles only (--slicing burst / noburst stay the
 * stage's own picks); bounded as the swap is (both programs are emitted and timed). */
static void gemm_split_pick(const npu_cfg_t *cfg, int M, int N, int K, int modes, const uint64_t size[4],
                            npu_gemm_report_t *rep, uint64_t *cur)
{
    npu_gemm_plan_t q;
    uint64_t qc;
    const npu_gemm_plan_t *p = &rep->plan;
    if (!npu_gemm_split_a(cfg, p) || too_long(p) ||
        npu_gemm_tile_sliced_ex(cfg, M, N, K, NPU_SLICE_BURST, (int)npu_emit_policy_model(modes), 1, &q) != 0 ||
        too_long(&q))
        return;
    qc = gemm_predict(cfg, &q, &rep->args, size);
    if (qc <= current_cycles(cfg, size, rep, cur)) {
        rep->plan = q;
        *cur = qc;
    }
}

/* The split last m-tile (compile/gemm/gemm_tiling.h "Split last"): kept when the program-time
 * model times the plan with it faster than without (strictly: ties keep the plain tiles). */
static void gemm_split_last_pick(const npu_cfg_t *cfg, const uint64_t size[4], npu_gemm_report_t *rep,
                                 uint64_t *cur)
{
    npu_gemm_plan_t q = rep->plan;
    uint64_t qc;
    if (!npu_gemm_split_last_ok(&q) || too_long(&q))
        return;
    q.split_last = 1;
    q.m_tiles++;
    qc = gemm_predict(cfg, &q, &rep->args, size);
    if (qc < current_cycles(cfg, size, rep, cur)) {
        rep->plan = q;
        *cur = qc;
    }
}

/* DRAM bytes of a program of n instructions, rounded up to the allocator's beat alignment. */
static uint64_t prog_bytes(const npu_cfg_t *cfg, size_t n)
{
    uint64_t beat = (uint64_t)npu_cfg_beat(cfg);
    return ((uint64_t)n * NPU_INSN_BYTES + beat - 1) / beat * beat;
}

/* The plan, pitches and program length of a GEMM, and the DRAM bytes of its four regions
 * (program, A, B, C), each rounded up to the allocator's beat alignment. When the tensors alone
 * exceed `limit` the program is not emitted (a GEMM that large has an enormous program): size[0]
 * and *plen_out stay 0 and the return is 1. */
static int gemm_layout(const npu_cfg_t *cfg, int M, int N, int K, int transA, int transB,
                       int modes, const npu_gemm_plan_t *fixed, uint64_t limit, npu_gemm_report_t *rep,
                       uint64_t size[4], size_t *plen_out)
{
    size_t plen;
    int slicing = modes & NPU_GEMM_SLICING_MASK, plain = modes & NPU_GEMM_NO_BAND;
    int swap = modes & (NPU_GEMM_SWAP_ON | NPU_GEMM_SWAP_OFF);
    modes &= ~(NPU_GEMM_SLICING_MASK | NPU_GEMM_NO_BAND | NPU_GEMM_SWAP_ON | NPU_GEMM_SWAP_OFF);
    if (fixed) {
        if (npu_gemm_plan_check(cfg, fixed) != 0 || fixed->M != M || fixed->N != N || fixed->K != K)
            return host_error(rep, "the given tiling does not fit this configuration");
        rep->plan = *fixed;
    } else if (gemm_tiles(cfg, M, N, K, transA || transB, modes,
                          plain ? NPU_GEMM_NO_BAND : slicing, &rep->plan) != 0) {
        return host_error(rep, slicing == NPU_GEMM_SLICING_BURST || slicing == NPU_GEMM_SLICING_NOBURST
                                   ? "the slicing stage's tiles do not fit the GEMM emitter"
                                   : "no tiling fits this configuration");
    }
    rep->args.transA = transA;
    rep->args.transB = transB;
    rep->args.modes = modes;
    npu_gemm_pitches(M, N, K, transA, transB, &rep->args.pitch_a, &rep->args.pitch_b,
                     &rep->args.pitch_c);
    size[0] = 0;
    size[1] = (uint64_t)(transA ? K : M) * rep->args.pitch_a;
    size[2] = (uint64_t)(transB ? N : K) * rep->args.pitch_b;
    size[3] = (uint64_t)M * rep->args.pitch_c;
    *plen_out = 0;
    if (size[1] + size[2] + size[3] > limit)
        return 1;
    uint64_t cur = 0; /* the current plan's predicted cycles, once needed */
    if (!fixed && !plain && !slicing)
        gemm_split_pick(cfg, M, N, K, modes, size, rep, &cur);
    if (!fixed)
        gemm_swap_pick(cfg, M, N, K, modes, plain ? NPU_GEMM_NO_BAND : slicing, swap, size, rep, &cur);
    if (!fixed && !plain && !slicing)
        gemm_split_last_pick(cfg, size, rep, &cur);
    plen = npu_gemm_emit_len(cfg, &rep->plan, &rep->args);
    if (plen == 0)
        return host_error(rep, "instruction emission failed (a field does not fit)");
    size[0] = prog_bytes(cfg, plen);
    *plen_out = plen;
    return 0;
}

/* A GEMM whose program and tensors exceed the DRAM: the bytes it needs and the limit. */
static int gemm_no_fit(npu_gemm_report_t *rep, const uint64_t size[4], uint64_t dram_bytes)
{
    rep->dram_need = size[0] + size[1] + size[2] + size[3];
    snprintf(rep->host_msg, sizeof rep->host_msg,
             "needs %s%llu bytes of DRAM (program %llu, A %llu, B %llu, C %llu); the DRAM holds "
             "%llu bytes", size[0] ? "" : "more than ", (unsigned long long)rep->dram_need,
             (unsigned long long)size[0], (unsigned long long)size[1],
             (unsigned long long)size[2], (unsigned long long)size[3],
             (unsigned long long)dram_bytes);
    return rep->rc = NPU_GEMM_NO_FIT;
}

/* An empty report of an M x N x K GEMM. */
static void report_init(npu_gemm_report_t *rep, int M, int N, int K, int transA, int transB)
{
    memset(rep, 0, sizeof *rep);
    npu_prog_init(&rep->prog);
    rep->M = M;
    rep->N = N;
    rep->K = K;
    rep->transA = transA;
    rep->transB = transB;
}

static int gemm_compile(const npu_cfg_t *cfg, uint64_t dram_bytes, int M, int N, int K, int transA,
                        int transB, int modes, const npu_gemm_plan_t *fixed, npu_gemm_report_t *rep)
{
    uint64_t size[4], at[4];
    size_t plen;
    npu_alloc_t al;

    report_init(rep, M, N, K, transA, transB);
    int lrc = gemm_layout(cfg, M, N, K, transA, transB, modes, fixed, dram_bytes, rep, size, &plen);
    if (lrc < 0)
        return rep->rc;
    if (lrc > 0)
        return gemm_no_fit(rep, size, dram_bytes);
    npu_alloc_init(&al, dram_bytes, (unsigned)gemm_tensor_align(cfg));
    for (int i = 0; i < 4; i++)
        if (npu_alloc(&al, size[i], &at[i]) != 0 || at[i] > 0xFFFFFFFFull)
            return gemm_no_fit(rep, size, dram_bytes);
    rep->prog_base = at[0];
    rep->args.a = (uint32_t)at[1];
    rep->args.b = (uint32_t)at[2];
    rep->args.c = (uint32_t)at[3];
    rep->dram_used = rep->dram_need = al.next;
    if (npu_gemm_emit(cfg, &rep->plan, &rep->args, &rep->prog) != 0 || rep->prog.n != plen)
        return host_error(rep, "instruction emission failed (a field does not fit)");
    npu_prog_expect(cfg, rep->prog.insn, rep->prog.n, &rep->expect);
    return rep->rc = NPU_GEMM_PASS;
}

int npu_gemm_compile_args(const npu_cfg_t *cfg, int M, int N, int K, const npu_gemm_args_t *args,
                          uint64_t prog_base, npu_gemm_report_t *rep)
{
    uint64_t size[4];
    size_t plen;
    npu_cfg_t below = *cfg; /* resident tensors above args->spm_limit: tiles below it */
    char why[160];
    report_init(rep, M, N, K, args->transA, args->transB);
    if (npu_gemm_res_check(cfg, M, N, K, args, why, sizeof why))
        return host_error(rep, why);
    if (args->spm_limit)
        below.spm_banks = (int)(args->spm_limit / (unsigned)cfg->spm_bank_words);
    /* the caller's args as given: never the swapped form (its golden follows the plan) */
    if (gemm_layout(&below, M, N, K, args->transA, args->transB, args->modes | NPU_GEMM_SWAP_OFF, NULL,
                    UINT64_MAX, rep, size, &plen) != 0)
        return rep->rc;
    /* a C kept in the SPM is drained in place: the tiles without a C band (else gemm_tiling's) */
    if (args->res_c && rep->plan.cband && npu_gemm_plan_no_cband(&below, &rep->plan) != 0 &&
        npu_gemm_tile_res(&below, M, N, K, rep->args.modes == NPU_EMIT_1G4C, &rep->plan) != 0)
        return host_error(rep, "no tiling fits this configuration");
    int resident = args->res_a || args->res_b || args->res_c; /* fewer LOADs, SYNCs instead */
    int modes = rep->args.modes; /* without the tiling choice bits */
    rep->args = *args;
    rep->args.modes = modes;
    rep->prog_base = prog_base;
    if (npu_gemm_emit(cfg, &rep->plan, &rep->args, &rep->prog) != 0 || (!resident && rep->prog.n != plen))
        return host_error(rep, "instruction emission failed (a field does not fit)");
    /* the program as emitted: a resident one has SYNCs for LOADs and STOREs, and its plan may be
     * the one without the C band, so its length is not the layout's */
    size[0] = prog_bytes(cfg, rep->prog.n);
    rep->dram_used = rep->dram_need = prog_base + size[0];
    npu_prog_expect(cfg, rep->prog.insn, rep->prog.n, &rep->expect);
    return rep->rc = NPU_GEMM_PASS;
}

uint64_t npu_gemm_tensor_bytes(const npu_cfg_t *cfg, int M, int N, int K, int transA, int transB,
                               int modes)
{
    npu_gemm_report_t rep;
    uint64_t size[4];
    size_t plen;
    memset(&rep, 0, sizeof rep);
    /* limit 0: the layout stops before it emits the program */
    if (gemm_layout(cfg, M, N, K, transA, transB, modes, NULL, 0, &rep, size, &plen) < 0)
        return 0;
    return size[1] + size[2] + size[3];
}

int npu_gemm_compile(const npu_cfg_t *cfg, uint64_t dram_bytes, int M, int N, int K, int transA,
                     int transB, npu_gemm_report_t *rep)
{
    return gemm_compile(cfg, dram_bytes, M, N, K, transA, transB, 0, NULL, rep);
}

int npu_gemm_compile_modes(const npu_cfg_t *cfg, uint64_t dram_bytes, int M, int N, int K,
                           int transA, int transB, int modes, npu_gemm_report_t *rep)
{
    return gemm_compile(cfg, dram_bytes, M, N, K, transA, transB, modes, NULL, rep);
}

int npu_gemm_run(const npu_cfg_t *cfg, npu_sim_t *sim, int M, int N, int K, const int16_t *A,
                 const int16_t *B, int transA, int transB, int32_t *C_out, uint64_t max_cycles,
                 npu_gemm_report_t *rep)
{
    return npu_gemm_run_modes(cfg, sim, M, N, K, A, B, transA, transB, 0, C_out, max_cycles, rep);
}

void npu_gemm_layout(uint8_t *dram, const npu_gemm_report_t *rep, const int16_t *A,
                     const int16_t *B)
{
    int rows_a = rep->transA ? rep->K : rep->M, cols_a = rep->transA ? rep->M : rep->K;
    int rows_b = rep->transB ? rep->N : rep->K, cols_b = rep->transB ? rep->K : rep->N;
    npu_write_i16(dram, rep->args.a, rep->args.pitch_a, rows_a, cols_a, A, (size_t)cols_a);
    npu_write_i16(dram, rep->args.b, rep->args.pitch_b, rows_b, cols_b, B, (size_t)cols_b);
    /* poison C so that an element the NPU never writes cannot match by accident */
    memset(dram + rep->args.c, 0xA5, (size_t)rep->M * rep->args.pitch_c);
}

int npu_gemm_execute(const npu_cfg_t *cfg, npu_sim_t *sim, const int32_t *expect, int32_t *C_out,
                     uint64_t max_cycles, npu_gemm_report_t *rep)
{
    uint8_t *dram = npu_sim_dram(sim, NULL);
    int M = rep->M, N = rep->N;
    int32_t *got;
    int rrc = npu_run_program(cfg, sim, rep->prog_base, rep->prog.insn, rep->prog.n, max_cycles,
                              &rep->run);
    npu_sim_dram_stats(sim, &rep->rd_beats, &rep->wr_beats, &rep->rd_bursts, &rep->wr_bursts,
                       &rep->stall_cycles);
    if (rrc == NPU_RUN_HOST_ERROR)
        return host_error(rep, "program does not fit the DRAM");
    if (rrc == NPU_RUN_SIM_STOPPED) {
        uint64_t at = rep->run.end_cycle;
        const char *m = npu_sim_assert_msg(sim, &at);
        snprintf(rep->host_msg, sizeof rep->host_msg, "RTL assertion failed at cycle %llu: %s",
                 (unsigned long long)at, m ? m : "$finish without an NPU_ASSERT message");
        return rep->rc = NPU_GEMM_HOST_ERROR;
    }
    if (rrc == NPU_RUN_TIMEOUT)
        return rep->rc = NPU_GEMM_TIMEOUT;
    if (rrc == NPU_RUN_ERROR)
        return rep->rc = NPU_GEMM_NPU_ERROR;

    if (!(got = malloc((size_t)M * (size_t)N * sizeof *got)))
        return host_error(rep, "out of memory");
    npu_read_i32(dram, rep->args.c, rep->args.pitch_c, M, N, got, (size_t)N);
    rep->mismatches = expect ? npu_compare_i32(M, N, got, (size_t)N, expect, (size_t)N,
                                               &rep->bad_row, &rep->bad_col, &rep->bad_got,
                                               &rep->bad_exp)
                             : 0;
    if (C_out)
        memcpy(C_out, got, (size_t)M * (size_t)N * sizeof *got);
    free(got);
    if (npu_check_counters(rep->run.cnt, &rep->expect, rep->counters_msg,
                           sizeof rep->counters_msg) == 0) {
        npu_array_expect_t ax;
        npu_prog_expect_array(cfg, rep->prog.insn, rep->prog.n, &ax);
        npu_check_array_counters(rep->run.cnt, &ax, rep->counters_msg, sizeof rep->counters_msg);
    }
    if (rep->mismatches)
        return rep->rc = NPU_GEMM_MISMATCH;
    if (rep->counters_msg[0])
        return rep->rc = NPU_GEMM_COUNTERS;
    return rep->rc = NPU_GEMM_PASS;
}

/* The K partition of a compiled GEMM for the bf16 golden (ref/golden_bf16.h): the plan's
 * waves of output (i, j)'s tile, npu_gemm_kwaves. */
typedef struct kwaves_ctx {
    const npu_gemm_plan_t *plan;
    int modes, S;
} kwaves_ctx_t;

static size_t gemm_kwaves(void *ctx, int i, int j, int *k0, int *k1, size_t max)
{
    const kwaves_ctx_t *c = ctx;
    return npu_gemm_kwaves(c->plan, c->modes, c->S, npu_gemm_mtile_of(c->plan, i), j / c->plan->Nt, k0, k1,
                           max);
}

int npu_gemm_golden_plan(const npu_cfg_t *cfg, const npu_gemm_plan_t *plan, int modes,
                         const int16_t *A, size_t lda, int transA, const int16_t *B, size_t ldb,
                         int transB, int32_t *C, size_t ldc)
{
    kwaves_ctx_t ctx = {plan, modes, cfg->s};
    if (!npu_cfg_bf16(cfg)) {
        npu_golden_gemm(plan->M, plan->N, plan->K, A, lda, transA, B, ldb, transB, C, ldc);
        return 0;
    }
    return npu_golden_gemm_bf16(plan->M, plan->N, plan->K, A, lda, transA, B, ldb, transB, C, ldc,
                                gemm_kwaves, &ctx);
}

int npu_gemm_golden(const npu_cfg_t *cfg, const npu_gemm_report_t *rep, const int16_t *A,
                    const int16_t *B, int32_t *C)
{
    int M = rep->M, N = rep->N, K = rep->K;
    if (!npu_cfg_bf16(cfg)) { /* int32 sums in any order: the plan (maybe swapped) does not matter */
        npu_golden_gemm(M, N, K, A, (size_t)(rep->transA ? M : K), rep->transA, B,
                        (size_t)(rep->transB ? K : N), rep->transB, C, (size_t)N);
        return 0;
    }
    return npu_gemm_golden_plan(cfg, &rep->plan, rep->args.modes, A,
                                (size_t)(rep->transA ? M : K), rep->transA, B,
                                (size_t)(rep->transB ? K : N), rep->transB, C, (size_t)N);
}

static int gemm_run(const npu_cfg_t *cfg, npu_sim_t *sim, int M, int N, int K, const int16_t *A,
                    const int16_t *B, int transA, int transB, int modes, const npu_gemm_plan_t *fixed,
                    int32_t *C_out, uint64_t max_cycles, npu_gemm_report_t *rep)
{
    size_t dram_bytes = 0;
    uint8_t *dram = npu_sim_dram(sim, &dram_bytes);
    int32_t *exp;
    int rc;

    if (gemm_compile(cfg, dram ? dram_bytes : 0, M, N, K, transA, transB, modes, fixed, rep) != 0)
        return rep->rc;
    if (!(exp = malloc((size_t)M * (size_t)N * sizeof *exp)))
        return host_error(rep, "out of memory");
    npu_gemm_layout(dram, rep, A, B);
    if (npu_gemm_golden(cfg, rep, A, B, exp) != 0) {
        free(exp);
        return host_error(rep, "out of memory");
    }
    rc = npu_gemm_execute(cfg, sim, exp, C_out, max_cycles, rep);
    free(exp);
    return rc;
}

int npu_gemm_run_modes(const npu_cfg_t *cfg, npu_sim_t *sim, int M, int N, int K,
                       const int16_t *A, const int16_t *B, int transA, int transB, int modes,
                       int32_t *C_out, uint64_t max_cycles, npu_gemm_report_t *rep)
{
    return gemm_run(cfg, sim, M, N, K, A, B, transA, transB, modes, NULL, C_out, max_cycles, rep);
}

int npu_gemm_run_plan(const npu_cfg_t *cfg, npu_sim_t *sim, const npu_gemm_plan_t *plan, const int16_t *A,
                      const int16_t *B, int modes, int32_t *C_out, uint64_t max_cycles, npu_gemm_report_t *rep)
{
    return gemm_run(cfg, sim, plan->M, plan->N, plan->K, A, B, 0, 0, modes, plan, C_out, max_cycles, rep);
}

void npu_gemm_report_free(npu_gemm_report_t *rep) { npu_prog_free(&rep->prog); }
