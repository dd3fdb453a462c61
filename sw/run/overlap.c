/* overlap.c - compute-only / transfer-only / full cycles of a GEMM; see overlap.h. */
#include "run/overlap.h"

#include <stdio.h>
#include <string.h>

#include "hw/isa.h"

static int fail(npu_overlap_result_t *r, int rc, const char *what, const char *detail)
{
    snprintf(r->msg, sizeof r->msg, "%s%s%s", what, detail && *detail ? ": " : "",
             detail ? detail : "");
    return r->rc = rc;
}

/* A fresh simulator of this configuration with timing t, or NULL (reason in msg). */
static npu_sim_t *open_sim(const npu_cfg_t *cfg, const npu_dram_timing_t *t, char *msg, size_t n)
{
    npu_sim_t *s;
    if (npu_sim_beat_bytes() != (unsigned)npu_cfg_beat(cfg)) {
        snprintf(msg, n, "the simulator's beat is %u bytes, config '%s' needs %d",
                 npu_sim_beat_bytes(), cfg->name ? cfg->name : "?", npu_cfg_beat(cfg));
        return NULL;
    }
    s = npu_sim_open(t);
    if (!s) {
        snprintf(msg, n, "cannot open the simulator");
        return NULL;
    }
    if (npu_check_hw(cfg, s, msg, n) != 0) {
        npu_sim_close(s);
        return NULL;
    }
    return s;
}

/* The DRAM contents npu_gemm_run sets up: A and B at the compiled layout, C poisoned. */
static void setup_dram(npu_sim_t *s, const npu_gemm_report_t *c,
                       const int16_t *A, const int16_t *B)
{
    uint8_t *dram = npu_sim_dram(s, NULL);
    int rows_a = c->transA ? c->K : c->M, cols_a = c->transA ? c->M : c->K;
    int rows_b = c->transB ? c->N : c->K, cols_b = c->transB ? c->K : c->N;
    npu_write_i16(dram, c->args.a, c->args.pitch_a, rows_a, cols_a, A, (size_t)cols_a);
    npu_write_i16(dram, c->args.b, c->args.pitch_b, rows_b, cols_b, B, (size_t)cols_b);
    memset(dram + c->args.c, 0xA5, (size_t)c->M * c->args.pitch_c);
}

/* Runs a partial program on a fresh simulator; NPU_OVERLAP_OK or an error (message in r). */
static int run_partial(const npu_cfg_t *cfg, const npu_dram_timing_t *t,
                       const npu_gemm_report_t *c, const npu_prog_t *p, const int16_t *A,
                       const int16_t *B, uint64_t max_cycles, const char *what,
                       npu_run_result_t *run, npu_overlap_result_t *r)
{
    char msg[200], line[160];
    npu_sim_t *s = open_sim(cfg, t, msg, sizeof msg);
    int rc;
    if (!s)
        return fail(r, NPU_OVERLAP_HOST_ERROR, what, msg);
    setup_dram(s, c, A, B);
    rc = npu_run_program(cfg, s, c->prog_base, p->insn, p->n, max_cycles, run);
    npu_sim_close(s);
    r->wall_s += run->wall_s;
    switch (rc) {
    case NPU_RUN_DONE: return NPU_OVERLAP_OK;
    case NPU_RUN_TIMEOUT:
        snprintf(msg, sizeof msg, "no halt after %llu cycles", (unsigned long long)max_cycles);
        return fail(r, NPU_OVERLAP_TIMEOUT, what, msg);
    case NPU_RUN_ERROR:
        if (run->err_pc < p->n)
            npu_disasm(&p->insn[run->err_pc], line, sizeof line);
        else
            snprintf(line, sizeof line, "(outside the program)");
        snprintf(msg, sizeof msg, "NPU error %s at pc %u: %s",
                 npu_error_name(run->err) ? npu_error_name(run->err) : "?",
                 (unsigned)run->err_pc, line);
        return fail(r, NPU_OVERLAP_RUN_FAILED, what, msg);
    default:
        return fail(r, NPU_OVERLAP_HOST_ERROR, what,
                    rc == NPU_RUN_SIM_STOPPED ? "the simulation stopped ($finish in the RTL)"
                                              : "the program does not fit the DRAM");
    }
}

/* The transfer side of a program: its LOADs and STOREs without tokens, and every EXEC
 * instruction replaced by a token-free SYNC_E, so that the fetcher reads exactly the bytes it
 * reads for the full program (on a small array the instruction fetch is a large share of the
 * DRAM traffic: a third of it at S=2) while nothing computes. */
static int transfer_prog(const npu_prog_t *full, npu_prog_t *out)
{
    npu_insn_t sync;
    if (npu_enc_sync(&sync, NPU_OP_SYNC_E) != 0)
        return -1;
    for (size_t i = 0; i < full->n; i++) {
        const npu_insn_t *in = &full->insn[i];
        if (npu_op_queue(npu_insn_op(in)) == 'E') {
            if (npu_prog_push(out, &sync) != 0)
                return -1;
        } else if (npu_prog_keep_queues(in, 1, "LS", out) != 0) {
            return -1;
        }
    }
    return 0;
}

/* bw * transfer / compute: the transfer time is about bytes / bw, so this bandwidth makes it
 * about the compute time. Clamped: the DRAM moves at most one beat per cycle on each of its
 * two ports, and a vanishing bandwidth would only make the runs endless. */
static double next_bw(double bw, uint64_t compute, uint64_t transfer, unsigned beat)
{
    double nb = compute ? bw * (double)transfer / (double)compute : bw;
    double hi = 2.0 * beat, lo = 0.01;
    return nb > hi ? hi : nb < lo ? lo : nb;
}

/* The three partial programs of one compiled GEMM. */
typedef struct partials {
    npu_prog_t compute, transfer, dma;
} partials_t;

/* Compute-only and transfer-only (and DMA-only) at the bandwidth, re-scaled until they balance
 * (calibrate) or once; fills r->steps and the final figures. *tt ends at the bandwidth used. */
static int measure_partials(const npu_cfg_t *cfg, npu_dram_timing_t *tt, const npu_gemm_report_t *c,
                            const partials_t *pp, const int16_t *A, const int16_t *B,
                            int calibrate, uint64_t max_cycles, npu_overlap_result_t *r)
{
    int rc;
    for (;;) {
        npu_overlap_step_t *st = &r->steps[r->n_steps];
        r->dram_bw = tt->bytes_per_cycle;
        if ((rc = run_partial(cfg, tt, c, &pp->compute, A, B, max_cycles, "compute-only run",
                              &r->compute_run, r)) != NPU_OVERLAP_OK ||
            (rc = run_partial(cfg, tt, c, &pp->transfer, A, B, max_cycles, "transfer-only run",
                              &r->transfer_run, r)) != NPU_OVERLAP_OK ||
            (rc = run_partial(cfg, tt, c, &pp->dma, A, B, max_cycles, "DMA-only run",
                              &r->dma_run, r)) != NPU_OVERLAP_OK)
            return rc;
        st->dram_bw = tt->bytes_per_cycle;
        st->compute_cycles = r->compute_run.cnt[NPU_CNT_cycles];
        st->transfer_cycles = r->transfer_run.cnt[NPU_CNT_cycles];
        st->dma_cycles = r->dma_run.cnt[NPU_CNT_cycles];
        r->n_steps++;
        if (!calibrate || r->n_steps > NPU_OVERLAP_CALIB_STEPS ||
            (double)(st->transfer_cycles > st->compute_cycles
                         ? st->transfer_cycles - st->compute_cycles
                         : st->compute_cycles - st->transfer_cycles) <=
                NPU_OVERLAP_BALANCE_TOL * (double)st->compute_cycles)
            break;
        tt->bytes_per_cycle = next_bw(tt->bytes_per_cycle, st->compute_cycles,
                                      st->transfer_cycles, (unsigned)npu_cfg_beat(cfg));
        if (tt->bytes_per_cycle == st->dram_bw) /* clamped: no better bandwidth to try */
            break;
    }
    r->dram_bw = tt->bytes_per_cycle;
    r->compute_cycles = r->steps[r->n_steps - 1].compute_cycles;
    r->transfer_cycles = r->steps[r->n_steps - 1].transfer_cycles;
    r->dma_cycles = r->steps[r->n_steps - 1].dma_cycles;
    r->bound_cycles =
        r->compute_cycles > r->transfer_cycles ? r->compute_cycles : r->transfer_cycles;
    return NPU_OVERLAP_OK;
}

/* Why the full run is not PASS, as one line. */
static void full_fail_msg(const npu_gemm_report_t *f, char *msg, size_t n)
{
    if (f->rc == NPU_GEMM_MISMATCH)
        snprintf(msg, n, "%zu mismatches, first C[%d][%d] = %ld, expected %ld", f->mismatches,
                 f->bad_row, f->bad_col, (long)f->bad_got, (long)f->bad_exp);
    else if (f->rc == NPU_GEMM_NPU_ERROR)
        snprintf(msg, n, "NPU error %s at pc %u",
                 npu_error_name(f->run.err) ? npu_error_name(f->run.err) : "?",
                 (unsigned)f->run.err_pc);
    else
        snprintf(msg, n, "%s %.80s%.100s", npu_gemm_rc_name(f->rc), f->host_msg, f->counters_msg);
}

/* The full program through npu_gemm_run (bit-exact), the same program as the partials', and
 * the ratio to the bound. */
static int run_full(const npu_cfg_t *cfg, const npu_dram_timing_t *tt, const npu_gemm_report_t *c,
                    int M, int N, int K, const int16_t *A, const int16_t *B, int transA,
                    int transB, uint64_t max_cycles, npu_overlap_result_t *r)
{
    char msg[200];
    npu_sim_t *s = open_sim(cfg, tt, msg, sizeof msg);
    if (!s)
        return fail(r, NPU_OVERLAP_HOST_ERROR, "full run", msg);
    npu_prog_free(&r->full.prog);
    npu_gemm_run_modes(cfg, s, M, N, K, A, B, transA, transB, NPU_GEMM_NO_BAND, NULL, max_cycles, &r->full);
    npu_sim_close(s);
    r->wall_s += r->full.run.wall_s;
    if (r->full.rc == NPU_GEMM_PASS &&
        (r->full.prog.n != c->prog.n ||
         memcmp(r->full.prog.insn, c->prog.insn, c->prog.n * sizeof *c->prog.insn) != 0))
        return fail(r, NPU_OVERLAP_HOST_ERROR, "full run",
                    "npu_gemm_run compiled another program than npu_gemm_compile");
    if (r->full.rc != NPU_GEMM_PASS) {
        full_fail_msg(&r->full, msg, sizeof msg);
        return fail(r, r->full.rc == NPU_GEMM_TIMEOUT ? NPU_OVERLAP_TIMEOUT
                                                      : NPU_OVERLAP_GEMM_FAILED,
                    "full run", msg);
    }
    r->full_cycles = r->full.run.cnt[NPU_CNT_cycles];
    r->ratio = r->bound_cycles ? (double)r->full_cycles / (double)r->bound_cycles : 0.0;
    r->overlap_ok = r->bound_cycles && r->ratio <= NPU_OVERLAP_MAX_RATIO;
    return NPU_OVERLAP_OK;
}

int npu_overlap_measure(const npu_cfg_t *cfg, int M, int N, int K, const int16_t *A,
                        const int16_t *B, int transA, int transB, const npu_dram_timing_t *t,
                        int calibrate, uint64_t max_cycles, npu_overlap_result_t *r)
{
    npu_gemm_report_t c; /* the compiled program and layout */
    partials_t pp;
    npu_dram_timing_t tt = *t;
    int rc = NPU_OVERLAP_OK;

    memset(r, 0, sizeof *r);
    npu_prog_init(&r->full.prog);
    npu_prog_init(&pp.compute);
    npu_prog_init(&pp.transfer);
    npu_prog_init(&pp.dma);
    r->calibrated = calibrate;
    if (!(tt.bytes_per_cycle > 0))
        tt.bytes_per_cycle = (double)cfg->dram_bw;
    r->dram_bw = tt.bytes_per_cycle;

    if (npu_gemm_compile_modes(cfg, 1ull << cfg->dram_addr_bits, M, N, K, transA, transB, NPU_GEMM_NO_BAND,
                               &c) != NPU_GEMM_PASS) {
        fail(r, NPU_OVERLAP_HOST_ERROR, "cannot compile the GEMM", c.host_msg);
        npu_gemm_report_free(&c);
        return r->rc;
    }
    if (npu_prog_keep_queues(c.prog.insn, c.prog.n, "E", &pp.compute) != 0 ||
        transfer_prog(&c.prog, &pp.transfer) != 0 ||
        npu_prog_keep_queues(c.prog.insn, c.prog.n, "LS", &pp.dma) != 0) {
        rc = fail(r, NPU_OVERLAP_HOST_ERROR, "out of memory", NULL);
    } else {
        r->n_compute = pp.compute.n;
        r->n_transfer = pp.dma.n;
        rc = measure_partials(cfg, &tt, &c, &pp, A, B, calibrate, max_cycles, r);
        if (rc == NPU_OVERLAP_OK)
            rc = run_full(cfg, &tt, &c, M, N, K, A, B, transA, transB, max_cycles, r);
    }
    npu_prog_free(&pp.compute);
    npu_prog_free(&pp.transfer);
    npu_prog_free(&pp.dma);
    npu_gemm_report_free(&c);
    return r->rc = rc;
}

void npu_overlap_result_free(npu_overlap_result_t *r) { npu_gemm_report_free(&r->full); }
