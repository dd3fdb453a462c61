/* report.c - text and JSON run reports; see report.h. */
#include "run/report.h"

#include <string.h>

#include "hw/isa.h"
#include "prog/prog_locate.h"

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

double npu_report_busy_util(const npu_cfg_t *cfg, const uint64_t *cnt)
{
    double pes = 4.0 * cfg->s * cfg->s;
    uint64_t busy = cnt[NPU_CNT_busy_fw] + cnt[NPU_CNT_busy_vsw] + cnt[NPU_CNT_busy_hsw] +
                    cnt[NPU_CNT_busy_isw];
    if (!busy)
        return 0.0;
    return (double)npu_report_useful_macs(cnt) / (pes * (double)busy);
}

void npu_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        case '\b': fputs("\\b", f); break;
        case '\f': fputs("\\f", f); break;
        default:
            if (*p < 0x20 || *p == 0x7F)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
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
        fprintf(f, "  timeout      at cycle %llu; %s; PC_L %u PC_E %u PC_S %u FETCH_PC %u\n",
                u(r->run.end_cycle), buf, (unsigned)r->run.pc_l, (unsigned)r->run.pc_e,
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

void npu_report_text(FILE *f, const npu_cfg_t *cfg, const npu_gemm_report_t *r,
                     const npu_report_opts_t *o)
{
    const uint64_t *c = r->run.cnt;
    const npu_gemm_plan_t *p = &r->plan;
    fprintf(f, "gemm M=%d N=%d K=%d%s%s on config %s (S=%d, %dx%d PEs)\n", r->M, r->N, r->K,
            r->transA ? " transA" : "", r->transB ? " transB" : "", cfg->name ? cfg->name : "?",
            cfg->s, 2 * cfg->s, 2 * cfg->s);
    fprintf(f, "  result       %s\n", npu_gemm_rc_name(r->rc));
    if (o)
        fprintf(f, "  seed         %llu   DRAM %.3g B/cycle, latency %u, stalls %u%%\n", u(o->seed),
                o->dram_bw, o->dram_latency, o->stall_pct);
    if (r->rc == NPU_GEMM_HOST_ERROR) {
        fprintf(f, "  host error   %s\n", r->host_msg);
        return;
    }
    fprintf(f, "  plan         Mt=%d Nt=%d (nb=%d) Kc=%d: %dx%d tiles %s-major, %d K chunks%s, %zu instructions\n",
            p->Mt, p->Nt, p->nb, p->Kc, p->m_tiles, p->n_tiles, p->order ? "n" : "m", p->k_chunks,
            npu_gemm_res_text(p), r->prog.n);
    text_failure(f, cfg, r);
    fprintf(f, "  cycles       %llu (%.3f s wall, %.0f simulated cycles/s)\n", u(c[NPU_CNT_cycles]),
            r->run.wall_s, cycles_per_s(&r->run));
    fprintf(f, "  PE util      %.1f %% (%llu useful MACs, expected %llu)\n",
            100.0 * npu_report_pe_util(cfg, c), u(npu_report_useful_macs(c)), u(r->expect.macs));
    text_dram(f, r);
    text_chip(f, cfg, c);
}

static void json_tags(FILE *f, const uint64_t *v)
{
    fputc('{', f);
    for (int t = 0; t < NPU_NUM_TAGS; t++) {
        if (t)
            fputc(',', f);
        npu_json_string(f, npu_tag_name((unsigned)t));
        fprintf(f, ":%llu", u(v[t]));
    }
    fputc('}', f);
}

void npu_report_json(FILE *f, const npu_cfg_t *cfg, const npu_gemm_report_t *r,
                     const npu_report_opts_t *o)
{
    const uint64_t *c = r->run.cnt;
    const npu_gemm_plan_t *p = &r->plan;
    uint64_t rd[NPU_NUM_TAGS], wr[NPU_NUM_TAGS];
    char buf[256];
    fputs("{\"config\":{\"name\":", f);
    npu_json_string(f, cfg->name);
    fprintf(f, ",\"s\":%d,\"spm_banks\":%d,\"spm_bank_words\":%d,\"obuf_rows\":%d},", cfg->s,
            cfg->spm_banks, cfg->spm_bank_words, cfg->obuf_rows);
    fprintf(f, "\"workload\":{\"op\":\"gemm\",\"m\":%d,\"n\":%d,\"k\":%d,\"trans_a\":%s,\"trans_b\":%s",
            r->M, r->N, r->K, r->transA ? "true" : "false", r->transB ? "true" : "false");
    if (o)
        fprintf(f, ",\"seed\":%llu,\"dram_bw\":%.6g,\"dram_latency\":%u,\"stall_pct\":%u", u(o->seed),
                o->dram_bw, o->dram_latency, o->stall_pct);
    fputs("},\"result\":", f);
    npu_json_string(f, npu_gemm_rc_name(r->rc));
    fprintf(f, ",\"pass\":%s", r->rc == NPU_GEMM_PASS ? "true" : "false");
    if (r->rc == NPU_GEMM_HOST_ERROR) {
        fputs(",\"host_error\":", f);
        npu_json_string(f, r->host_msg);
        fputs("}\n", f);
        return;
    }
    fprintf(f, ",\"plan\":{\"mt\":%d,\"nt\":%d,\"nb\":%d,\"kc\":%d,\"m_tiles\":%d,\"n_tiles\":%d,"
               "\"order\":\"%s\",\"k_chunks\":%d,\"instructions\":%zu}",
            p->Mt, p->Nt, p->nb, p->Kc, p->m_tiles, p->n_tiles, p->order ? "n" : "m", p->k_chunks, r->prog.n);
    if (r->rc == NPU_GEMM_NPU_ERROR) {
        fputs(",\"npu_error\":{\"name\":", f);
        npu_json_string(f, npu_error_name(r->run.err) ? npu_error_name(r->run.err) : "?");
        fprintf(f, ",\"code\":%u,\"pc\":%u,\"info\":%u,\"insn\":", r->run.err,
                (unsigned)r->run.err_pc, (unsigned)r->run.err_info);
        npu_json_string(f, faulting_insn(r, buf, sizeof buf));
        fputc('}', f);
    }
    if (r->rc == NPU_GEMM_TIMEOUT) {
        fprintf(f, ",\"timeout\":{\"cycle\":%llu,\"qstate\":%u,\"pc_l\":%u,\"pc_e\":%u,\"pc_s\":%u}",
                u(r->run.end_cycle), (unsigned)r->run.qstate, (unsigned)r->run.pc_l,
                (unsigned)r->run.pc_e, (unsigned)r->run.pc_s);
    }
    if (r->mismatches)
        fprintf(f, ",\"mismatch\":{\"count\":%zu,\"row\":%d,\"col\":%d,\"got\":%ld,\"expected\":%ld}",
                r->mismatches, r->bad_row, r->bad_col, (long)r->bad_got, (long)r->bad_exp);
    fputs(",\"counters_check\":", f);
    npu_json_string(f, r->counters_msg);
    fprintf(f, ",\"cycles\":%llu,\"wall_s\":%.6f,\"cycles_per_s\":%.1f,\"pe_util\":%.6f,"
               "\"useful_macs\":%llu,\"expected_macs\":%llu",
            u(c[NPU_CNT_cycles]), r->run.wall_s, cycles_per_s(&r->run), npu_report_pe_util(cfg, c),
            u(npu_report_useful_macs(c)), u(r->expect.macs));
    for (int t = 0; t < NPU_NUM_TAGS; t++) {
        rd[t] = c[NPU_CNT_dram_rd_prog + t];
        wr[t] = c[NPU_CNT_dram_wr_prog + t];
    }
    fputs(",\"dram_bytes\":{\"read\":", f);
    json_tags(f, rd);
    fputs(",\"write\":", f);
    json_tags(f, wr);
    fputs(",\"expected_read\":", f);
    json_tags(f, r->expect.rd_bytes);
    fputs(",\"expected_write\":", f);
    json_tags(f, r->expect.wr_bytes);
    fprintf(f, "},\"dram_model\":{\"rd_beats\":%llu,\"wr_beats\":%llu,\"rd_bursts\":%llu,"
               "\"wr_bursts\":%llu,\"stall_cycles\":%llu}",
            u(r->rd_beats), u(r->wr_beats), u(r->rd_bursts), u(r->wr_bursts), u(r->stall_cycles));
    fputs(",\"counters\":{", f);
    for (unsigned i = 0; i < NPU_NUM_COUNTERS; i++) {
        if (i)
            fputc(',', f);
        npu_json_string(f, cnt_names[i]);
        fprintf(f, ":%llu", u(c[i]));
    }
    fputs("}}\n", f);
}
