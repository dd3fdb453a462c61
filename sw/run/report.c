/* report.c - text and JSON run reports; see report.h. */
#include "run/report.h"

#include "run/flexsa_report.h"

#include <string.h>

#include "hw/isa.h"
#include "prog/prog_locate.h"
#include "run/out.h"

static const char *const cnt_names[] = {
#define X(n, t) #n,
    NPU_COUNTERS(X)
#undef X
};
static const char *const cnt_texts[] = {
#define X(n, t) t,
    NPU_COUNTERS(X)
#undef X
};

const char *npu_counter_name(unsigned i) { return i < NPU_NUM_COUNTERS ? cnt_names[i] : NULL; }
const char *npu_counter_text(unsigned i) { return i < NPU_NUM_COUNTERS ? cnt_texts[i] : NULL; }

uint64_t npu_report_useful_macs(const uint64_t *cnt)
{
    return cnt[NPU_CNT_macs_core0] + cnt[NPU_CNT_macs_core1] + cnt[NPU_CNT_macs_core2] +
           cnt[NPU_CNT_macs_core3];
}

double npu_report_pe_util(const npu_cfg_t *cfg, const uint64_t *cnt)
{
    double pes = 4.0 * cfg->s * cfg->s;
    if (!cnt[NPU_CNT_cycles])
        return 0.0;
    return (double)npu_report_useful_macs(cnt) / (pes * (double)cnt[NPU_CNT_cycles]);
}

uint64_t npu_report_array_busy(const uint64_t *cnt)
{
    uint64_t busy = 0;
    for (int m = 0; m < NPU_NUM_MODES; m++)
        busy += cnt[NPU_CNT_busy_fw + m];
    return busy;
}

double npu_report_busy_util(const npu_cfg_t *cfg, const uint64_t *cnt)
{
    double pes = 4.0 * cfg->s * cfg->s;
    uint64_t busy = npu_report_array_busy(cnt);
    if (!busy)
        return 0.0;
    return (double)npu_report_useful_macs(cnt) / (pes * (double)busy);
}

static double cycles_per_s(const npu_run_result_t *r)
{
    return r->wall_s > 0 ? (double)r->cnt[NPU_CNT_cycles] / r->wall_s : 0.0;
}

static unsigned long long u(uint64_t v) { return (unsigned long long)v; }

static const char *faulting_insn(const npu_gemm_report_t *r, char *buf, size_t n)
{
    if (r->run.err_pc < r->prog.n)
        npu_disasm(&r->prog.insn[r->run.err_pc], buf, n);
    else
        snprintf(buf, n, "(pc outside the program)");
    return buf;
}

/* The result's name; a run SIGINT stopped (run/progress.h) ends as a timeout but says so. */
static const char *rc_name(const npu_gemm_report_t *r)
{
    return r->rc == NPU_GEMM_TIMEOUT && r->run.interrupted ? "INTERRUPTED" : npu_gemm_rc_name(r->rc);
}

/* What went wrong: the NPU error (with the deadlock state), the timeout, the first mismatch and
 * where it was written, the counter check. */
static void text_failure(FILE *f, const npu_cfg_t *cfg, const npu_gemm_report_t *r)
{
    char buf[256];
    if (r->rc == NPU_GEMM_NPU_ERROR) {
        const char *nm = npu_error_name(r->run.err);
        fprintf(f, "  npu error    %s (%s) at pc %u: %s; ERR_INFO 0x%08x\n", nm ? nm : "?",
                npu_error_text(r->run.err) ? npu_error_text(r->run.err) : "unknown code",
                (unsigned)r->run.err_pc, faulting_insn(r, buf, sizeof buf),
                (unsigned)r->run.err_info);
        if (r->run.err == NPU_ERR_DEADLOCK) {
            npu_qstate_str(r->run.err_info, buf, sizeof buf);
            fprintf(f, "  deadlock     %s\n", buf);
            npu_nocstate_str(r->run.nocstate, buf, sizeof buf);
            fprintf(f, "               %s (NOCSTATE 0x%08x)\n", buf, (unsigned)r->run.nocstate);
        }
    }
    if (r->rc == NPU_GEMM_TIMEOUT) {
        npu_qstate_str(r->run.qstate, buf, sizeof buf);
        fprintf(f, "  %s at cycle %llu; %s; PC_L %u PC_E %u PC_S %u FETCH_PC %u\n",
                r->run.interrupted ? "interrupted" : "timeout    ", u(r->run.end_cycle), buf, (unsigned)r->run.pc_l, (unsigned)r->run.pc_e,
                (unsigned)r->run.pc_s, (unsigned)r->run.fetch_pc);
        npu_nocstate_str(r->run.nocstate, buf, sizeof buf);
        fprintf(f, "               %s (NOCSTATE 0x%08x)\n", buf, (unsigned)r->run.nocstate);
    }
    if (r->mismatches) {
        npu_gemm_loc_t loc;
        char where[200];
        fprintf(f, "  mismatch     %zu elements; first C[%d][%d] = %ld, expected %ld\n",
                r->mismatches, r->bad_row, r->bad_col, (long)r->bad_got, (long)r->bad_exp);
        /* first divergence: which tile, instructions and modes produced that element */
        if (npu_prog_locate_gemm(cfg, &r->plan, &r->args, r->prog.insn, r->prog.n, r->bad_row,
                            r->bad_col, &loc, where, sizeof where) == 0)
            fprintf(f, "  written by   %s\n", where);
    }
    if (r->counters_msg[0])
        fprintf(f, "  counters     %s\n", r->counters_msg);
}

/* DRAM bytes per tag against the program's, and the DRAM model's beats, bursts and stalls. */
static void text_dram(FILE *f, const npu_gemm_report_t *r)
{
    const uint64_t *c = r->run.cnt;
    fprintf(f, "  DRAM bytes   %-8s %12s %12s %12s %12s\n", "tag", "read", "(program)", "written",
            "(program)");
    for (int t = 0; t < NPU_NUM_TAGS; t++) {
        uint64_t rd = c[NPU_CNT_dram_rd_prog + t], wr = c[NPU_CNT_dram_wr_prog + t];
        if (!rd && !wr && !r->expect.rd_bytes[t] && !r->expect.wr_bytes[t])
            continue;
        fprintf(f, "               %-8s %12llu %12llu %12llu %12llu\n", npu_tag_name((unsigned)t),
                u(rd), u(r->expect.rd_bytes[t]), u(wr), u(r->expect.wr_bytes[t]));
    }
    fprintf(f, "  DRAM model   read %llu beats / %llu bursts, write %llu beats / %llu bursts, %llu stall cycles\n",
            u(r->rd_beats), u(r->rd_bursts), u(r->wr_beats), u(r->wr_bursts), u(r->stall_cycles));
}

/* The units' busy cycles side by side: the DMA queues (busy_load / busy_store: an instruction in
 * flight, QSTATE's busy bits), the array (injection slots) and the drain engine, as shares of the
 * run, and the busiest: where a run's time goes first. */
static void busy_line(FILE *f, const uint64_t *c)
{
    static const char *const name[4] = {"LOAD queue", "STORE queue", "array", "drain"};
    uint64_t b[4] = {c[NPU_CNT_busy_load], c[NPU_CNT_busy_store], npu_report_array_busy(c), c[NPU_CNT_drain_busy]};
    double cyc = c[NPU_CNT_cycles] ? (double)c[NPU_CNT_cycles] : 1.0;
    int top = 0;
    for (int i = 1; i < 4; i++)
        if (b[i] > b[top])
            top = i;
    fprintf(f, "  busy         LOAD %llu (%.1f %%), STORE %llu (%.1f %%), array %llu (%.1f %%), drain %llu "
               "(%.1f %%) of %llu cycles: the %s most\n",
            u(b[0]), 100.0 * (double)b[0] / cyc, u(b[1]), 100.0 * (double)b[1] / cyc, u(b[2]),
            100.0 * (double)b[2] / cyc, u(b[3]), 100.0 * (double)b[3] / cyc, u(c[NPU_CNT_cycles]), name[top]);
}

/* On chip: SPM, NoC, waves, array, drain, per core, waits. */
static void text_chip(FILE *f, const npu_cfg_t *cfg, const uint64_t *c)
{
    fprintf(f, "  SPM          %llu words read, %llu written, %llu bank conflicts\n",
            u(c[NPU_CNT_spm_rd_words]), u(c[NPU_CNT_spm_wr_words]), u(c[NPU_CNT_spm_conflicts]));
    fprintf(f, "  NoC          %llu H flits, %llu V flits, %llu deliveries\n",
            u(c[NPU_CNT_noc_h_flits]), u(c[NPU_CNT_noc_v_flits]), u(c[NPU_CNT_noc_deliveries]));
    fprintf(f, "  NoC links    H %llu/%llu/%llu/%llu, V %llu/%llu/%llu/%llu busy cycles (core 0..3), "
               "%llu SPM words saved by multicast\n",
            u(c[NPU_CNT_noc_h_link0]), u(c[NPU_CNT_noc_h_link1]), u(c[NPU_CNT_noc_h_link2]),
            u(c[NPU_CNT_noc_h_link3]), u(c[NPU_CNT_noc_v_link0]), u(c[NPU_CNT_noc_v_link1]),
            u(c[NPU_CNT_noc_v_link2]), u(c[NPU_CNT_noc_v_link3]), u(c[NPU_CNT_noc_mcast_saved]));
    busy_line(f, c);
    fprintf(f, "  waves        FW %llu, VSW %llu, HSW %llu, ISW %llu\n", u(c[NPU_CNT_waves_fw]),
            u(c[NPU_CNT_waves_vsw]), u(c[NPU_CNT_waves_hsw]), u(c[NPU_CNT_waves_isw]));
    fprintf(f, "  array busy   FW %llu, VSW %llu, HSW %llu, ISW %llu cycles (utilization while busy "
               "%.1f %%), %llu idle PE-cycles from tile shape\n",
            u(c[NPU_CNT_busy_fw]), u(c[NPU_CNT_busy_vsw]), u(c[NPU_CNT_busy_hsw]),
            u(c[NPU_CNT_busy_isw]), 100.0 * npu_report_busy_util(cfg, c),
            u(c[NPU_CNT_idle_pe_shape]));
    fprintf(f, "  drain        %llu rows, %llu busy cycles, %llu stall cycles\n",
            u(c[NPU_CNT_obuf_drain_rows]), u(c[NPU_CNT_drain_busy]), u(c[NPU_CNT_drain_stall]));
    fprintf(f, "  cores        %-6s %12s %12s %14s\n", "core", "busy", "stall", "MACs");
    for (int i = 0; i < 4; i++)
        fprintf(f, "               %-6d %12llu %12llu %14llu\n", i, u(c[NPU_CNT_busy_core0 + i]),
                u(c[NPU_CNT_stall_core0 + i]), u(c[NPU_CNT_macs_core0 + i]));
    fprintf(f, "  waits        tokens L/E/S %llu/%llu/%llu, weights %llu, OBUF %llu, unit %llu\n",
            u(c[NPU_CNT_wait_tok_load]), u(c[NPU_CNT_wait_tok_exec]), u(c[NPU_CNT_wait_tok_store]),
            u(c[NPU_CNT_wait_exec_weights]), u(c[NPU_CNT_wait_exec_obuf]),
            u(c[NPU_CNT_wait_exec_unit]));
}

/* The run's roofline (flexsa_report.h npu_policy_roofline) at its DRAM bandwidth, under its
 * policy's ideal utilization (npu_gemm_ideal_util): the bound issue 14's acceptance 8 takes. */
typedef struct roofline { double ideal, bound; uint64_t compulsory; } roofline_t;
static roofline_t roofline(const npu_cfg_t *cfg, const npu_gemm_report_t *r, const npu_report_opts_t *o)
{
    roofline_t rf;
    rf.ideal = npu_gemm_ideal_util(cfg, r, r->args.modes, NULL);
    rf.bound = npu_policy_roofline(cfg, o->dram_bw, r->M, r->N, r->K, rf.ideal, &rf.compulsory);
    return rf;
}

void npu_report_text(FILE *f, const npu_cfg_t *cfg, const npu_gemm_report_t *r,
                     const npu_report_opts_t *o)
{
    const uint64_t *c = r->run.cnt;
    const npu_gemm_plan_t *p = &r->plan;
    fprintf(f, "gemm M=%d N=%d K=%d%s%s on config %s (S=%d, %dx%d PEs)\n", r->M, r->N, r->K,
            r->transA ? " transA" : "", r->transB ? " transB" : "", cfg->name ? cfg->name : "?",
            cfg->s, 2 * cfg->s, 2 * cfg->s);
    fprintf(f, "  result       %s\n", rc_name(r));
    if (o)
        fprintf(f, "  seed         %llu   DRAM %.3g B/cycle, latency %u, stalls %u%%\n", u(o->seed),
                o->dram_bw, o->dram_latency, o->stall_pct);
    if (r->rc == NPU_GEMM_HOST_ERROR) {
        fprintf(f, "  host error   %s\n", r->host_msg);
        return;
    }
    fprintf(f, "  plan         %sMt=%d Nt=%d (nb=%d) Kc=%d: %dx%d tiles %s-major, %d K chunks%s%s, %zu instructions\n",
            r->args.swap ? "swapped, C^T = B^T A^T (N x M x K), C stored transposed: " : "", p->Mt, p->Nt,
            p->nb, p->Kc, p->m_tiles, p->n_tiles, p->order ? "n" : "m", p->k_chunks, npu_gemm_res_text(p),
            p->split_last ? ", last m-tile split in two" : "", r->prog.n);
    text_failure(f, cfg, r);
    fprintf(f, "  cycles       %llu (%.3f s wall, %.0f simulated cycles/s)\n", u(c[NPU_CNT_cycles]),
            r->run.wall_s, cycles_per_s(&r->run));
    fprintf(f, "  PE util      %.1f %% (%llu useful MACs, expected %llu)\n",
            100.0 * npu_report_pe_util(cfg, c), u(npu_report_useful_macs(c)), u(r->expect.macs));
    if (o) {
        roofline_t rf = roofline(cfg, r, o);
        fprintf(f, "  roofline     %.0f cycles (ideal utilization %.1f %%, %llu compulsory DRAM bytes): "
                   "measured %.3f x\n", rf.bound, 100.0 * rf.ideal, u(rf.compulsory),
                rf.bound > 0 ? (double)c[NPU_CNT_cycles] / rf.bound : 0.0);
    }
    text_dram(f, r);
    text_chip(f, cfg, c);
}

/* {"PROG": v[0], ...}: a value per DRAM tag. */
static cJSON *json_tags(const uint64_t *v)
{
    cJSON *o = cJSON_CreateObject();
    for (int t = 0; t < NPU_NUM_TAGS && o; t++)
        cJSON_AddNumberToObject(o, npu_tag_name((unsigned)t), (double)v[t]);
    return o;
}

void npu_report_json_workload(cJSON *root, const npu_gemm_report_t *r, const npu_report_opts_t *o)
{
    cJSON *w = cJSON_AddObjectToObject(root, "workload");
    cJSON_AddStringToObject(w, "op", "gemm");
    cJSON_AddNumberToObject(w, "m", r->M);
    cJSON_AddNumberToObject(w, "n", r->N);
    cJSON_AddNumberToObject(w, "k", r->K);
    cJSON_AddBoolToObject(w, "trans_a", r->transA);
    cJSON_AddBoolToObject(w, "trans_b", r->transB);
    if (!o)
        return;
    cJSON_AddNumberToObject(w, "seed", (double)o->seed);
    cJSON_AddNumberToObject(w, "dram_bw", o->dram_bw);
    cJSON_AddNumberToObject(w, "dram_latency", o->dram_latency);
    cJSON_AddNumberToObject(w, "stall_pct", o->stall_pct);
}

static void json_plan(cJSON *root, const npu_gemm_report_t *r)
{
    const npu_gemm_plan_t *p = &r->plan;
    cJSON *j = cJSON_AddObjectToObject(root, "plan");
    cJSON_AddNumberToObject(j, "mt", p->Mt);
    cJSON_AddNumberToObject(j, "nt", p->Nt);
    cJSON_AddNumberToObject(j, "nb", p->nb);
    cJSON_AddNumberToObject(j, "kc", p->Kc);
    cJSON_AddNumberToObject(j, "m_tiles", p->m_tiles);
    cJSON_AddNumberToObject(j, "n_tiles", p->n_tiles);
    cJSON_AddStringToObject(j, "order", p->order ? "n" : "m");
    cJSON_AddStringToObject(j, "band", p->res == NPU_GEMM_RES_A ? "A" : p->res == NPU_GEMM_RES_B ? "B" : "none");
    cJSON_AddBoolToObject(j, "c_band", p->cband);
    cJSON_AddBoolToObject(j, "split_last", p->split_last);
    cJSON_AddNumberToObject(j, "k_chunks", p->k_chunks);
    cJSON_AddNumberToObject(j, "instructions", (double)r->prog.n);
}

/* The NPU error, the timeout, the first mismatch: what went wrong. */
static void json_failure(cJSON *root, const npu_gemm_report_t *r)
{
    char buf[256];
    cJSON *j;
    if (r->rc == NPU_GEMM_NPU_ERROR) {
        j = cJSON_AddObjectToObject(root, "npu_error");
        cJSON_AddStringToObject(j, "name", npu_error_name(r->run.err) ? npu_error_name(r->run.err) : "?");
        cJSON_AddNumberToObject(j, "code", r->run.err);
        cJSON_AddNumberToObject(j, "pc", r->run.err_pc);
        cJSON_AddNumberToObject(j, "info", r->run.err_info);
        cJSON_AddStringToObject(j, "insn", faulting_insn(r, buf, sizeof buf));
    }
    if (r->rc == NPU_GEMM_TIMEOUT) {
        j = cJSON_AddObjectToObject(root, "timeout");
        cJSON_AddNumberToObject(j, "cycle", (double)r->run.end_cycle);
        cJSON_AddBoolToObject(j, "interrupted", r->run.interrupted);
        cJSON_AddNumberToObject(j, "qstate", r->run.qstate);
        cJSON_AddNumberToObject(j, "pc_l", r->run.pc_l);
        cJSON_AddNumberToObject(j, "pc_e", r->run.pc_e);
        cJSON_AddNumberToObject(j, "pc_s", r->run.pc_s);
    }
    if (r->mismatches) {
        j = cJSON_AddObjectToObject(root, "mismatch");
        cJSON_AddNumberToObject(j, "count", (double)r->mismatches);
        cJSON_AddNumberToObject(j, "row", r->bad_row);
        cJSON_AddNumberToObject(j, "col", r->bad_col);
        cJSON_AddNumberToObject(j, "got", (double)r->bad_got);
        cJSON_AddNumberToObject(j, "expected", (double)r->bad_exp);
    }
}

/* DRAM bytes per tag (measured and the program's), the DRAM model's beats, bursts, stalls. */
static void json_dram(cJSON *root, const npu_gemm_report_t *r)
{
    const uint64_t *c = r->run.cnt;
    uint64_t rd[NPU_NUM_TAGS], wr[NPU_NUM_TAGS];
    cJSON *j = cJSON_AddObjectToObject(root, "dram_bytes");
    for (int t = 0; t < NPU_NUM_TAGS; t++) {
        rd[t] = c[NPU_CNT_dram_rd_prog + t];
        wr[t] = c[NPU_CNT_dram_wr_prog + t];
    }
    cJSON_AddItemToObject(j, "read", json_tags(rd));
    cJSON_AddItemToObject(j, "write", json_tags(wr));
    cJSON_AddItemToObject(j, "expected_read", json_tags(r->expect.rd_bytes));
    cJSON_AddItemToObject(j, "expected_write", json_tags(r->expect.wr_bytes));
    j = cJSON_AddObjectToObject(root, "dram_model");
    cJSON_AddNumberToObject(j, "rd_beats", (double)r->rd_beats);
    cJSON_AddNumberToObject(j, "wr_beats", (double)r->wr_beats);
    cJSON_AddNumberToObject(j, "rd_bursts", (double)r->rd_bursts);
    cJSON_AddNumberToObject(j, "wr_bursts", (double)r->wr_bursts);
    cJSON_AddNumberToObject(j, "stall_cycles", (double)r->stall_cycles);
}

void npu_report_json_add(cJSON *root, const npu_cfg_t *cfg, const npu_gemm_report_t *r,
                         const npu_report_opts_t *o)
{
    const uint64_t *c = r->run.cnt;
    cJSON *j;
    if (!cJSON_HasObjectItem(root, "config"))
        cJSON_AddItemToObject(root, "config", npu_out_json_cfg(cfg));
    npu_report_json_workload(root, r, o);
    cJSON_AddStringToObject(root, "result", rc_name(r));
    cJSON_AddBoolToObject(root, "pass", r->rc == NPU_GEMM_PASS);
    if (r->rc == NPU_GEMM_HOST_ERROR) {
        cJSON_AddStringToObject(root, "host_error", r->host_msg);
        return;
    }
    json_plan(root, r);
    json_failure(root, r);
    cJSON_AddStringToObject(root, "counters_check", r->counters_msg);
    cJSON_AddNumberToObject(root, "cycles", (double)c[NPU_CNT_cycles]);
    cJSON_AddNumberToObject(root, "wall_s", r->run.wall_s);
    cJSON_AddNumberToObject(root, "cycles_per_s", cycles_per_s(&r->run));
    cJSON_AddNumberToObject(root, "pe_util", npu_report_pe_util(cfg, c));
    cJSON_AddNumberToObject(root, "useful_macs", (double)npu_report_useful_macs(c));
    cJSON_AddNumberToObject(root, "expected_macs", (double)r->expect.macs);
    json_dram(root, r);
    if (o) {
        roofline_t rf = roofline(cfg, r, o);
        j = cJSON_AddObjectToObject(root, "roofline");
        cJSON_AddNumberToObject(j, "ideal_util", rf.ideal);
        cJSON_AddNumberToObject(j, "compulsory_bytes", (double)rf.compulsory);
        cJSON_AddNumberToObject(j, "bound_cycles", rf.bound);
        cJSON_AddNumberToObject(j, "ratio", rf.bound > 0 ? (double)c[NPU_CNT_cycles] / rf.bound : 0.0);
    }
    j = cJSON_AddObjectToObject(root, "counters");
    for (unsigned i = 0; i < NPU_NUM_COUNTERS; i++)
        cJSON_AddNumberToObject(j, cnt_names[i], (double)c[i]);
}

void npu_report_json(FILE *f, const npu_cfg_t *cfg, const npu_gemm_report_t *r,
                     const npu_report_opts_t *o)
{
    cJSON *root = cJSON_CreateObject();
    if (root)
        npu_report_json_add(root, cfg, r, o);
    npu_out_json_print(f, root);
}
