/* flexsa_report.c - mapping policies measured on the RTL; see flexsa_report.h. */
#include "run/flexsa_report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/gemm/gemm_emit.h"
#include "ref/golden.h"
#include "run/report.h"
#include "run/runtime.h"

npu_flexsa_policy_t npu_emit_policy_model(int emit)
{
    switch (emit) {
    case NPU_EMIT_FLEXSA: return NPU_POLICY_FLEXSA;
    case NPU_EMIT_1G4C: return NPU_POLICY_1G4C;
    default: return NPU_POLICY_1G1C;
    }
}

double npu_policy_roofline(const npu_cfg_t *cfg, double bytes_per_cycle, int M, int N, int K, double ideal,
                           uint64_t *compulsory)
{
    double rd = 2.0 * ((double)M * K + (double)K * N), wr = 4.0 * (double)M * N;
    double beat = (double)npu_cfg_beat(cfg), t = 0.0;
    double pe = 4.0 * cfg->s * cfg->s;
    if (compulsory)
        *compulsory = (uint64_t)(rd + wr);
    if (ideal > 0)
        t = (double)M * N * K / (pe * ideal);
    if (bytes_per_cycle > 0 && (rd + wr) / bytes_per_cycle > t)
        t = (rd + wr) / bytes_per_cycle;
    if (rd / beat > t)
        t = rd / beat;
    return wr / beat > t ? wr / beat : t;
}

double npu_gemm_ideal_util(const npu_cfg_t *cfg, const npu_gemm_report_t *rep, int emit, npu_flexsa_stats_t *model)
{
    /* the model on the RTL's waves: m_act rows per (k, n) block, a quarter per 1G4C core; of
     * the GEMM the program computes (a swapped plan: C^T = B^T A^T, N x M x K) */
    npu_flexsa_stats_t tmp, *p = model ? model : &tmp;
    int S = cfg->s, blk = rep->plan.Mt > 0 ? rep->plan.Mt : 4 * S, sw = rep->args.swap;
    if (emit == NPU_EMIT_1G4C)
        blk = (blk + 3) / 4;
    npu_flexsa_plan(S, blk, npu_emit_policy_model(emit), sw ? rep->N : rep->M, sw ? rep->M : rep->N, rep->K, NULL,
                    NULL, p);
    return npu_flexsa_util(p);
}

static int fail(npu_policy_meas_t *m, int rc, const char *msg)
{
    m->rc = rc;
    snprintf(m->msg, sizeof m->msg, "%s", msg);
    return rc;
}

/* The EXEC queue of rep's program alone on a fresh simulator (default DRAM timing: it is
 * not used, the program has no LOAD/STORE). */
static int compute_run(const npu_cfg_t *cfg, const npu_gemm_report_t *rep, uint64_t max_cycles,
                       npu_policy_meas_t *m)
{
    npu_prog_t e;
    npu_run_result_t r;
    npu_sim_t *sim;
    int rc;
    npu_prog_init(&e);
    if (npu_prog_keep_queues(rep->prog.insn, rep->prog.n, "E", &e) != 0) {
        npu_prog_free(&e);
        return fail(m, NPU_GEMM_HOST_ERROR, "out of memory");
    }
    sim = npu_sim_open(NULL);
    if (!sim) {
        npu_prog_free(&e);
        return fail(m, NPU_GEMM_HOST_ERROR, "cannot open the simulator");
    }
    rc = npu_run_program(cfg, sim, 0, e.insn, e.n, max_cycles, &r);
    npu_sim_close(sim);
    npu_prog_free(&e);
    if (rc == NPU_RUN_TIMEOUT)
        return fail(m, NPU_GEMM_TIMEOUT, "compute run: timeout");
    if (rc != NPU_RUN_DONE) {
        snprintf(m->msg, sizeof m->msg, "compute run: %s at pc %u",
                 npu_error_name(r.err) ? npu_error_name(r.err) : "error", (unsigned)r.err_pc);
        return m->rc = NPU_GEMM_NPU_ERROR;
    }
    m->compute_cycles = r.cnt[NPU_CNT_cycles];
    m->macs = r.cnt[NPU_CNT_macs_core0] + r.cnt[NPU_CNT_macs_core1] + r.cnt[NPU_CNT_macs_core2] +
              r.cnt[NPU_CNT_macs_core3];
    m->lbuf_elems = (r.cnt[NPU_CNT_lbuf_v_words] + r.cnt[NPU_CNT_lbuf_h_words]) * (uint64_t)cfg->s;
    for (int i = 0; i < NPU_NUM_MODES; i++)
        m->waves[i] = r.cnt[NPU_CNT_waves_fw + i];
    return NPU_GEMM_PASS;
}

int npu_policy_measure(const npu_cfg_t *cfg, int M, int N, int K, int emit, uint64_t seed,
                       const npu_policy_opts_t *o, npu_policy_meas_t *m)
{
    int modes = emit | o->slicing | (o->plain ? NPU_GEMM_SWAP_OFF : 0);
    uint64_t max_cycles = o->max_cycles;
    npu_gemm_report_t rep;
    int16_t *A, *B;
    int rc, S = cfg->s;

    memset(m, 0, sizeof *m);
    m->emit = emit;
    if (M < 1 || N < 1 || K < 1)
        return fail(m, NPU_GEMM_HOST_ERROR, "bad GEMM sizes");
    A = malloc(sizeof *A * (size_t)M * (size_t)K);
    B = malloc(sizeof *B * (size_t)K * (size_t)N);
    if (!A || !B) {
        free(A);
        free(B);
        return fail(m, NPU_GEMM_HOST_ERROR, "out of memory");
    }
    npu_random_operands_dt(npu_cfg_bf16(cfg), M, N, K, seed, A, B);
    if (o->full) {
        npu_sim_t *sim = npu_sim_open(o->timing);
        if (!sim) {
            free(A);
            free(B);
            return fail(m, NPU_GEMM_HOST_ERROR, "cannot open the simulator");
        }
        rc = npu_gemm_run_modes(cfg, sim, M, N, K, A, B, 0, 0, modes, NULL, max_cycles, &rep);
        npu_sim_close(sim);
        m->cycles = rep.run.end_cycle - rep.run.start_cycle;
        if (rep.run.cnt[NPU_CNT_cycles])
            m->cycles = rep.run.cnt[NPU_CNT_cycles];
        for (int t = 1; t < NPU_NUM_TAGS; t++) /* tag 0: the program */
            m->dram_bytes += rep.run.cnt[NPU_CNT_dram_rd_prog + t] + rep.run.cnt[NPU_CNT_dram_wr_prog + t];
        m->busy_load = rep.run.cnt[NPU_CNT_busy_load];
        m->busy_store = rep.run.cnt[NPU_CNT_busy_store];
        m->busy_array = npu_report_array_busy(rep.run.cnt);
        if (rc != NPU_GEMM_PASS)
            snprintf(m->msg, sizeof m->msg, "full run: %s%s%s", npu_gemm_rc_name(rc),
                     rep.counters_msg[0] ? ": " : "", rep.counters_msg);
    } else {
        size_t dbytes = (size_t)1 << cfg->dram_addr_bits;
        rc = npu_gemm_compile_modes(cfg, dbytes, M, N, K, 0, 0, modes, &rep);
        if (rc != NPU_GEMM_PASS)
            snprintf(m->msg, sizeof m->msg, "compile: %s", rep.host_msg);
    }
    free(A);
    free(B);
    m->rc = rc;
    if (rep.prog.n && (rc == NPU_GEMM_PASS || rc == NPU_GEMM_COUNTERS || rc == NPU_GEMM_MISMATCH)) {
        int crc = compute_run(cfg, &rep, max_cycles, m);
        if (rc == NPU_GEMM_PASS)
            m->rc = crc;
    }
    m->swapped = rep.args.swap;
    m->ideal_util = npu_gemm_ideal_util(cfg, &rep, emit, &m->model);
    m->bound_cycles = npu_policy_roofline(cfg, o->timing ? o->timing->bytes_per_cycle : cfg->dram_bw, M, N, K,
                                          m->ideal_util, &m->compulsory_bytes);
    if (m->compute_cycles)
        m->measured_util = (double)m->macs / (4.0 * S * S * (double)m->compute_cycles);
    npu_gemm_report_free(&rep);
    return m->rc;
}
